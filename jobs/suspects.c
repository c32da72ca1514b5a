/*
 * suspects.c: suspect commits, computed once and stored (see suspects.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/suspects.h"
#include "baselines/findings.h"
#include "common/timeutil.h"

#include <inttypes.h>
#include <stdbool.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int suspects_range_load(suspects_range *out, const char *repo, const char *from, const char *to,
			pr_error *err)
{
	pr_error gerr = PR_ERROR_INIT;
	gitinfo_range_info info;

	memset(out, 0, sizeof(*out));
	snprintf(out->from, sizeof(out->from), "%s", from ? from : "");
	snprintf(out->to, sizeof(out->to), "%s", to ? to : "");
	if (!repo || !*repo) {
		snprintf(out->note, sizeof(out->note),
			 "No repository configured for the service: no commit range.");
		return 0;
	}
	if (!out->to[0]) {
		snprintf(out->note, sizeof(out->note), "No deploy with a commit: no commit range.");
		return 0;
	}
	if (!out->from[0]) {
		snprintf(out->note, sizeof(out->note),
			 "No previous deploy with a commit: no commit range.");
		return 0;
	}
	if (gitinfo_range(&out->commits, &out->ncommits, &info, repo, out->from, out->to,
			  SUSPECTS_MAX_RANGE, &gerr) < 0) {
		if (gerr.code == PR_ENOMEM)
			return pr_error_set(err, PR_ENOMEM, "out of memory");
		snprintf(out->note, sizeof(out->note), "Commit range unavailable: %s", gerr.msg);
		return 0;
	}
	out->total = info.total;
	if (info.total > out->ncommits)
		snprintf(out->limit, sizeof(out->limit),
			 "Only the newest %zu of the range's %zu commits were searched.",
			 out->ncommits, info.total);
	if (info.rewritten)
		snprintf(out->limit + strlen(out->limit), sizeof(out->limit) - strlen(out->limit),
			 "%sThe previous deploy's commit %.12s is not an ancestor of %.12s "
			 "(a rewritten history or another branch): the range holds what is "
			 "new since they parted.",
			 out->limit[0] ? " " : "", out->from, out->to);
	return 0;
}

void suspects_range_release(suspects_range *r)
{
	gitinfo_commits_free(r->commits, r->ncommits);
	memset(r, 0, sizeof(*r));
}

static json_t *commit_json(const gitinfo_commit *c)
{
	char when[TIME_FMT_MAX];

	time_format(when, c->time_us);
	/* gitinfo gives UTF-8 only: NULL here is out of memory. */
	return json_pack("{s:s,s:s,s:s,s:s}", "sha", c->sha, "author", c->author ? c->author : "",
			 "subject", c->subject ? c->subject : "", "time", when);
}

/* Append a commit; false (and nothing appended) when out of memory. */
static bool append_commit(json_t *arr, const gitinfo_commit *c)
{
	json_t *o = commit_json(c);

	return o && json_array_append_new(arr, o) == 0;
}

json_t *suspects_range_json(const suspects_range *r)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < r->ncommits; i++)
		if (!append_commit(arr, &r->commits[i])) {
			json_decref(arr);
			return NULL;
		}
	return arr;
}

/*
 * A name in brackets is code without symbols, named for its object
 * (`[svc]`, `[unknown]`, `[kernel.kallsyms]`): its file, when there is
 * one, is the object's path, which a commit of sources never touches,
 * and a repository file of the same name would be a false suspect.
 */
static bool without_symbols(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	return n >= 2 && name[0] == '[' && name[n - 1] == ']';
}

json_t *suspects_for_function(const suspects_range *r, const char *name, const char *file)
{
	json_t *o = json_pack("{s:i,s:s?,s:s?,s:s?}", "schema_version", 1,
			      "from", r->from[0] ? r->from : NULL, "to", r->to[0] ? r->to : NULL,
			      "file", file && *file ? file : NULL);
	json_t *commits = json_array();
	static const char none_touched[] = "No commit in the range touched this file.";
	static const char empty[] = "The commit range is empty.";
	const char *note = NULL;
	char both[sizeof(none_touched) + sizeof(r->limit) + 1];

	if (!o || !commits) {
		json_decref(o);
		json_decref(commits);
		return NULL;
	}
	if (without_symbols(name))
		note = "Code without symbols: the profile names no source file, so no commit "
		       "of the range can be singled out.";
	else if (!file || !*file)
		note = "The profile gives no file name for this function.";
	else if (r->note[0])
		note = r->note;
	for (size_t i = 0; !note && i < r->ncommits; i++) {
		const gitinfo_commit *c = &r->commits[i];
		bool hit = false;
		for (size_t k = 0; k < c->nfiles && !hit; k++)
			hit = gitinfo_path_match(file, c->files[k]);
		if (hit && !append_commit(commits, c)) {
			json_decref(o);
			json_decref(commits);
			return NULL;
		}
	}
	if (!note && json_array_size(commits) == 0)
		note = r->ncommits ? none_touched : empty;
	if (r->limit[0] && (!note || note == none_touched || note == empty)) {
		snprintf(both, sizeof(both), "%s%s%s", note ? note : "", note ? " " : "", r->limit);
		note = both;
	}
	json_object_set_new(o, "commits", commits);
	if (note)
		json_object_set_new(o, "note", json_string(note));
	return o;
}

int suspects_store(db *d, int64_t run_id, int64_t finding_id, json_t *s, pr_error *err)
{
	char *text = s ? json_dumps(s, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	int rc;

	json_decref(s);
	if (!text)
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	rc = findings_set_suspects(d, run_id, finding_id, text, err);
	free(text);
	return rc;
}

int suspects_load(json_t **out, db *d, int64_t run_id, int64_t finding_id, pr_error *err)
{
	char *text = NULL;
	int rc;

	*out = NULL;
	if ((rc = findings_get_suspects(&text, d, run_id, finding_id, err)) < 0)
		return rc;
	if (text && !(*out = json_loads(text, 0, NULL)))
		rc = pr_error_set(err, PR_EDB,
				  "database: finding %" PRId64 "'s stored suspects are "
				  "not JSON",
				  finding_id);
	free(text);
	return rc;
}
