/*
 * cmd_postdeploy.c: `profreg post-deploy`, the CI hook after a deploy.
 *
 * Checks the service before anything else, resolves the deploy's commit
 * with libgit2, waits (bounded) for captures of the new release,
 * collecting the service's drop folder meanwhile, records the deploy,
 * analyses the release against the baseline of earlier releases with
 * "now" taken after the wait, stores each regression's suspect commits
 * with the run, and prints a Markdown summary for the CI log (also
 * appended to --summary FILE, so no pipe can swallow the exit status).
 *
 * The gate fails closed: exit 0 pass, 1 a regression at or above the
 * gate, 2 usage, 3 infrastructure, 4 bad input (unknown service, a ref
 * that does not resolve, a release with no captures at all), 5
 * inconclusive (too thin a baseline, too few captures) unless
 * --on-inconclusive pass.
 */
#define _POSIX_C_SOURCE 200809L
#include "analysis.h"
#include "commands.h"
#include "config.h"
#include "context.h"
#include "deploys.h"
#include "exitcode.h"
#include "gitinfo.h"
#include "pager.h"
#include "pushgw.h"
#include "reportdata.h"
#include "reports/report.h"
#include "runs.h"
#include "suspects.h"
#include "common/buf.h"
#include "common/similar.h"
#include "common/timeutil.h"
#include "pipeline/source.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How long a post-deploy step may spend sending its own pages. */
#define POSTDEPLOY_PAGE_DEADLINE_MS 30000
/* How often the wait collects and counts again. */
#define POSTDEPLOY_POLL_S 5

enum {
	O_SERVICE = 1600, O_RELEASE, O_COMMIT, O_REPO, O_PREVIOUS, O_WAIT, O_MIN, O_GATE, O_AT,
	O_INCONCLUSIVE, O_SUMMARY,
};

typedef struct pd {
	const char *service, *release, *ref, *repo, *previous, *summary_path;
	char sha[GITINFO_SHA_HEX + 1], prev_sha[GITINFO_SHA_HEX + 1];
	deploy dep;
	suspects_range range;
	int64_t have;             /* captures of the release after the wait */
	uint64_t min_caps;
	int64_t waited_us;
	json_t *collect;          /* collection problems: array of strings */
	json_t *reasons;          /* why the verdict is inconclusive: array of strings */
	json_t *suspects;         /* finding id (text) -> stored suspects object */
	const char *verdict;      /* pass, fail, inconclusive */
} pd;

/* Markdown table cells and lines: nothing from outside may change how they render. */
static void md_escape(report_out *o, const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		/*
		 * Escape what can start emphasis, code, links, images, HTML,
		 * tables or headings; leave the rest readable in a raw CI log.
		 */
		if (strchr("\\`*_[]<>|!~&#", *c))
			report_put(o, "\\%c", *c);
		else if (*c < 0x20 || *c == 0x7f)
			report_put(o, "\\x%02x", *c);
		else
			report_put(o, "%c", *c);
	}
}

static void md_suspects(report_out *o, const finding *f, const json_t *s)
{
	const json_t *commits = json_object_get(s, "commits");
	const char *note = json_string_value(json_object_get(s, "note"));
	size_t i;
	json_t *c;

	report_put(o, "%s", "Suspect commits for ");
	md_escape(o, f->function);
	if (f->file && f->file[0]) {
		report_put(o, "%s", " (");
		md_escape(o, f->file);
		report_put(o, "%s", ")");
	}
	if (!s || !json_array_size(commits)) {
		report_put(o, "%s", ": ");
		md_escape(o, note ? note : "none were computed");
		report_put(o, "%s", "\n\n");
		return;
	}
	report_put(o, "%s", ":\n\n");
	json_array_foreach(commits, i, c) {
		const char *subject = json_string_value(json_object_get(c, "subject"));
		const char *author = json_string_value(json_object_get(c, "author"));
		report_put(o, "- `%.12s` ", json_string_value(json_object_get(c, "sha")));
		md_escape(o, subject ? subject : "");
		report_put(o, "%s", " (");
		md_escape(o, author ? author : "");
		report_put(o, "%s", ")\n");
	}
	report_put(o, "%s", "\n");
}

static void markdown(report_out *o, const pd *x, const analysis *a, stats_severity gate,
		     const char *on_inconclusive, const char *report)
{
	size_t nreg = 0, i;
	json_t *v;

	for (size_t k = 0; k < a->ntests && a->tests[k].significant; k++)
		nreg += a->tests[k].direction == FINDING_REGRESSION;
	report_put(o, "%s", "## profreg post-deploy: ");
	md_escape(o, x->service);
	report_put(o, "%s", " ");
	md_escape(o, x->release);
	report_put(o, "%s", "\n\n");
	if (strcmp(x->verdict, "fail") == 0) {
		report_put(o, "**Verdict: FAIL** - a regression at or above the gate (%s)\n\n",
			   stats_severity_name(gate));
	} else if (strcmp(x->verdict, "inconclusive") == 0) {
		report_put(o, "**Verdict: inconclusive** (%s) - profreg could not judge this release:\n\n",
			   strcmp(on_inconclusive, "fail") == 0
				   ? "the gate fails closed: --on-inconclusive fail"
				   : "passed by --on-inconclusive pass");
		json_array_foreach(x->reasons, i, v) {
			report_put(o, "%s", "- ");
			md_escape(o, json_string_value(v));
			report_put(o, "%s", "\n");
		}
		report_put(o, "%s", "\n");
	} else {
		report_put(o, "**Verdict: pass** - %zu regression%s below the gate (%s)\n\n", nreg,
			   nreg == 1 ? "" : "s", stats_severity_name(gate));
	}
	report_put(o, "Commit `%s`", x->sha);
	if (x->dep.previous_sha[0])
		report_put(o, ", previous deploy `%.12s`", x->dep.previous_sha);
	report_put(o, "; %" PRId64 " capture%s of the release", x->have, x->have == 1 ? "" : "s");
	if (x->waited_us)
		report_put(o, " after waiting %" PRId64 " s", x->waited_us / 1000000);
	report_put(o, "%s", "\n\n");
	if (json_array_size(x->collect)) {
		report_put(o, "%s", "Collection problems:\n\n");
		json_array_foreach(x->collect, i, v) {
			report_put(o, "%s", "- ");
			md_escape(o, json_string_value(v));
			report_put(o, "%s", "\n");
		}
		report_put(o, "%s", "\n");
	}
	if (a->nfindings) {
		report_put(o, "%s", "| severity | direction | function | baseline -> current | change (95% CI) |"
			    " q | captures |\n| --- | --- | --- | --- | --- | --- | --- |\n");
		for (size_t k = 0; k < a->ntests && a->tests[k].significant; k++) {
			const finding *f = &a->tests[k];
			report_put(o, "| %s | %s | ", stats_severity_name(f->severity),
				   finding_dir_name(f->direction));
			md_escape(o, f->function);
			report_put(o, " | %.2f%% -> %.2f%% | %+.2fpp [%+.2f, %+.2f] | %.2g | %zu/%zu |\n",
				   100 * f->baseline_share, 100 * f->current_share, 100 * f->delta,
				   100 * f->ci_low, 100 * f->ci_high, f->q_value, f->current_captures,
				   f->baseline_captures);
		}
		report_put(o, "%s", "\n");
	} else if (strcmp(x->verdict, "inconclusive") != 0) {
		report_put(o, "%s", "No function's self share moved beyond the margin.\n\n");
	}
	for (size_t k = 0; k < a->ntests && a->tests[k].significant; k++) {
		char id[24];
		if (a->tests[k].direction != FINDING_REGRESSION)
			continue;
		snprintf(id, sizeof(id), "%" PRId64, a->tests[k].id);
		md_suspects(o, &a->tests[k], json_object_get(x->suspects, id));
	}
	if (x->range.ncommits) {
		report_put(o, "<details><summary>%zu commit%s since the previous deploy</summary>\n\n",
			   x->range.ncommits, x->range.ncommits == 1 ? "" : "s");
		for (size_t k = 0; k < x->range.ncommits; k++) {
			const gitinfo_commit *c = &x->range.commits[k];
			char when[TIME_FMT_MAX];
			time_format(when, c->time_us);
			report_put(o, "- `%.12s` %s ", c->sha, when);
			md_escape(o, c->subject ? c->subject : "");
			report_put(o, "%s", " (");
			md_escape(o, c->author);
			report_put(o, "%s", ")\n");
		}
		report_put(o, "%s", "\n</details>\n");
	} else if (x->range.note[0]) {
		md_escape(o, x->range.note);
		report_put(o, "%s", "\n");
	}
	if (report) {
		/* Our own path, in a code span: copied from a CI log as it is. */
		report_put(o, "%s", "\nReport: `");
		for (const unsigned char *c = (const unsigned char *)report; *c; c++)
			report_put(o, *c < 0x20 || *c == 0x7f || *c == '`' ? "\\x%02x" : "%c", *c);
		report_put(o, "%s", "`\n");
	}
}

static int64_t count_captures(db *d, int64_t service_id, const char *release, pr_error *err)
{
	static const char sql[] = "select count(*) from profiles where service_id = $1 and release = $2";
	char sid[24];
	const char *p[2] = {sid, release};
	PGresult *res = NULL;
	int64_t n;

	snprintf(sid, sizeof(sid), "%" PRId64, service_id);
	if (db_exec(d, &res, err, "counting captures", sql, 2, p) < 0)
		return -1;
	n = db_get_i64(res, 0, 0);
	db_result_free(res);
	return n;
}

/* One line of a collection problem, kept once however often it repeats. */
static void note_collect(pd *x, const char *fmt, const char *what)
{
	char line[PR_ERROR_MSG_MAX + 128];
	size_t i;
	json_t *v;

	snprintf(line, sizeof(line), fmt, what);
	json_array_foreach(x->collect, i, v)
		if (strcmp(json_string_value(v), line) == 0)
			return;
	json_array_append_new(x->collect, json_string(line));
}

/*
 * Collect until `min_caps` captures of the release exist or the wait
 * ends. A collection problem is noted and shown, never silent; only the
 * database fails the step.
 */
static int wait_for_captures(pd *x, db *d, blob_store *bs, const config *cfg, int64_t sid,
			     int64_t wait_us, pr_error *err)
{
	const config_service *cs = config_service_find(cfg, x->service);
	double start = time_mono();

	for (;;) {
		if (cs && cs->source_dir) {
			source_report src = {0};
			pr_error serr = PR_ERROR_INIT;
			if (source_collect_dir(&src, d, bs, x->service, cs->source_dir, &cfg->limits,
					       &serr) < 0) {
				if (serr.code == PR_EDB || serr.code == PR_ENOMEM)
					return pr_error_set(err, serr.code, "%s", serr.msg);
				note_collect(x, "drop folder: %s", serr.msg);
			} else if (src.failed) {
				note_collect(x, "drop folder: %s", src.first_error ? src.first_error
										   : "a file failed");
			}
			source_report_release(&src);
		}
		if ((x->have = count_captures(d, sid, x->release, err)) < 0)
			return err->code;
		x->waited_us = (int64_t)((time_mono() - start) * 1e6);
		if ((uint64_t)x->have >= x->min_caps || x->waited_us >= wait_us)
			return 0;
		{
			struct timespec pause = {POSTDEPLOY_POLL_S, 0};
			int64_t left = wait_us - x->waited_us;
			if (left < POSTDEPLOY_POLL_S * 1000000LL) {
				pause.tv_sec = left / 1000000;
				pause.tv_nsec = (long)(left % 1000000) * 1000;
			}
			while (nanosleep(&pause, &pause) < 0 && errno == EINTR)
				;
		}
	}
}

/* "no captures of release 'v4.2' of service 's' ... (did you mean 'v4.2.0'?)" */
static int no_captures(const pd *x, db *d, int64_t sid, pr_error *err)
{
	char **rel = NULL, hint[400] = "";
	size_t n = 0;
	long best;

	if (db_service_releases(d, &rel, &n, sid, err) < 0)
		return err->code;
	best = similar_best(x->release, (const char *const *)rel, n);
	if (best >= 0)
		snprintf(hint, sizeof(hint), " (did you mean '%.300s'?)", rel[best]);
	else if (n)
		snprintf(hint, sizeof(hint), " (its latest release is '%.300s')", rel[0]);
	db_strings_free(rel, n);
	return pr_error_set(err, PR_ENOTFOUND,
			    "no captures of release '%s' of service '%s' after waiting %" PRId64
			    " s%s: refusing to pass a release profreg has never seen", x->release,
			    x->service, x->waited_us / 1000000, hint);
}

/* Tag the evidence of this deploy's new regressions with the deploy and commit. */
static int tag_evidence(db *d, const pd *x, const analysis *a, pr_error *err)
{
	static const char sql[] =
		"update profiles set tags = tags || jsonb_build_object('deploy', $2::text, 'commit', $3::text)"
		" where tags ->> 'finding' = $1";
	char fid[24], did[24];
	const char *p[3] = {fid, did, x->sha};
	int rc;

	snprintf(did, sizeof(did), "%" PRId64, x->dep.id);
	for (size_t i = 0; i < a->ntests && a->tests[i].significant; i++) {
		if (a->tests[i].direction != FINDING_REGRESSION || !a->tests[i].id ||
		    a->tests[i].stored_before)
			continue;
		snprintf(fid, sizeof(fid), "%" PRId64, a->tests[i].id);
		if ((rc = db_exec(d, NULL, err, "tagging evidence", sql, 3, p)) < 0)
			return rc;
	}
	return 0;
}

/* Compute each regression's suspects once, store them with the run, keep them for printing. */
static int store_suspects(pd *x, db *d, const analysis *a, int64_t run_id, pr_error *err)
{
	int rc;

	for (size_t i = 0; i < a->ntests && a->tests[i].significant; i++) {
		const finding *f = &a->tests[i];
		json_t *s;
		char id[24];
		if (f->direction != FINDING_REGRESSION || !f->id)
			continue;
		if (!(s = suspects_for_file(&x->range, f->file)))
			return pr_error_set(err, PR_ENOMEM, "out of memory");
		snprintf(id, sizeof(id), "%" PRId64, f->id);
		json_object_set(x->suspects, id, s);
		if ((rc = suspects_store(d, run_id, f->id, s, err)) < 0)
			return rc;
	}
	return 0;
}

/* Send this run's own pages within a deadline; the rest waits for the next flush. */
static int send_pages(db *d, const config *cfg, const analysis *a, pager_counts *pc,
		      pr_error *err)
{
	pager_flush_opts fo = {false, true, NULL, 0, POSTDEPLOY_PAGE_DEADLINE_MS};
	int64_t *ids = NULL;
	size_t n = 0;
	int rc;

	if (a->nfindings && !(ids = calloc(a->nfindings, sizeof(*ids))))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	for (size_t i = 0; i < a->ntests && a->tests[i].significant && n < a->nfindings; i++)
		if (a->tests[i].id)
			ids[n++] = a->tests[i].id;
	fo.finding_ids = ids;
	fo.nfinding_ids = n;
	rc = pager_flush(d, cfg, &fo, pc, err);
	free(ids);
	return rc;
}

/* Append the summary to --summary FILE (a CI step summary); failing to is an error. */
static int append_summary(const char *path, const buf *md, pr_error *err)
{
	FILE *f = fopen(path, "a");
	int rc = 0;

	if (!f)
		return pr_error_set(err, PR_EIO, "cannot open '%s' for the summary: %s", path,
				    strerror(errno));
	if (fwrite(md->ptr, 1, md->len, f) != md->len || fflush(f) != 0)
		rc = pr_error_set(err, PR_EIO, "cannot write the summary to '%s': %s", path,
				  strerror(errno));
	if (fclose(f) != 0 && rc == 0)
		rc = pr_error_set(err, PR_EIO, "cannot write the summary to '%s': %s", path,
				  strerror(errno));
	return rc;
}

static json_t *result_json(const pd *x, const analysis *a, int64_t run_id, const pager_counts *pc,
			   const char *report)
{
	json_t *findings = json_array(), *commits = suspects_range_json(&x->range);

	for (size_t i = 0; i < a->ntests && a->tests[i].significant; i++) {
		json_t *o = analysis_finding_json(&a->tests[i]);
		char id[24];
		snprintf(id, sizeof(id), "%" PRId64, a->tests[i].id);
		json_object_set(o, "suspects", json_object_get(x->suspects, id)
						       ? json_object_get(x->suspects, id) : json_null());
		json_array_append_new(findings, o);
	}
	return json_pack("{s:i,s:s,s:s,s:s,s:s?,s:I,s:I,s:s,s:O,s:I,s:O,s:o,s:o,s:s?,"
			 "s:{s:I,s:I,s:I,s:I},s:s?}",
			 "schema_version", 1, "service", x->service, "release", x->release,
			 "commit", x->sha, "previous_commit",
			 x->dep.previous_sha[0] ? x->dep.previous_sha : NULL,
			 "deploy_id", (json_int_t)x->dep.id, "run_id", (json_int_t)run_id,
			 "verdict", x->verdict, "inconclusive_reasons", x->reasons,
			 "captures", (json_int_t)x->have, "collection_problems", x->collect,
			 "findings", findings, "commits", commits ? commits : json_array(),
			 "range_note", x->range.note[0] ? x->range.note : NULL,
			 "pages", "enqueued", (json_int_t)a->pages_enqueued, "sent", (json_int_t)pc->sent,
			 "failed", (json_int_t)pc->failed, "pending", (json_int_t)pc->pending,
			 "report", report);
}

int cmd_postdeploy(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"service", required_argument, O_SERVICE, "NAME", "the deployed service"},
		{"release", required_argument, O_RELEASE, "RELEASE", "the release deployed"},
		{"commit", required_argument, O_COMMIT, "REF", "its commit: SHA, short SHA, branch or tag"},
		{"repo", required_argument, O_REPO, "PATH", "the service's git repository (default: from the config)"},
		{"previous", required_argument, O_PREVIOUS, "REF", "start of the commit range (default: the previous deploy)"},
		{"wait", required_argument, O_WAIT, "DURATION", "wait up to this long for captures (default 0)"},
		{"min-captures", required_argument, O_MIN, "N", "captures of the release to wait for (default 1)"},
		{"gate", required_argument, O_GATE, "SEVERITY", "fail (exit 1) at or above: low, medium, high, critical (default high)"},
		{"on-inconclusive", required_argument, O_INCONCLUSIVE, "pass|fail", "when the release cannot be judged: exit 5 (fail, the default) or 0"},
		{"summary", required_argument, O_SUMMARY, "FILE", "also append the Markdown summary to FILE (e.g. $GITHUB_STEP_SUMMARY)"},
		{"at", required_argument, O_AT, "TIME", "take TIME as now (default: the time the analysis starts)"},
		{NULL, 0, 0, NULL, NULL},
	};
	pr_error err = PR_ERROR_INIT;
	pd x;
	cli_parser *p = NULL;
	config cfg = {0};
	analysis a;
	db *d = NULL;
	blob_store *bs = NULL;
	db_service svc = {0};
	const char *arg, *at_s = NULL, *on_inc = "fail";
	stats_severity gate = STATS_SEV_HIGH;
	int64_t wait_us = 0, run_id = 0, at = 0, reported_at = time_now_us();
	bool loaded = false, existed = false;
	pager_counts pc;
	double t0 = time_mono();
	char *report = NULL;
	buf md = BUF_INIT;
	json_t *detail = NULL;
	int c, rc = 0;

	memset(&pc, 0, sizeof(pc));
	memset(&x, 0, sizeof(x));
	memset(&a, 0, sizeof(a));
	x.min_caps = 1;
	x.verdict = "pass";
	if (cli_parser_new(&p, ctx, argc, argv, opts,
			   "profreg post-deploy --service S --release R --commit REF [--repo PATH] [options]",
			   "Check a deploy: wait for captures of the new release, analyse them against\n"
			   "the baseline of earlier releases, name suspect commits, print a Markdown\n"
			   "summary. Exit 0 pass, 1 a regression at or above --gate, 2 usage, 3\n"
			   "infrastructure error, 4 bad input (unknown service, a commit that does not\n"
			   "resolve, a release with no captures), 5 inconclusive (the baseline or the\n"
			   "captures too few to judge; 0 with --on-inconclusive pass).") < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		switch (c) {
		case O_SERVICE: x.service = arg; break;
		case O_RELEASE: x.release = arg; break;
		case O_COMMIT: x.ref = arg; break;
		case O_REPO: x.repo = arg; break;
		case O_PREVIOUS: x.previous = arg; break;
		case O_SUMMARY: x.summary_path = arg; break;
		case O_AT:
			at_s = arg;
			if (time_parse(&at, arg) < 0) {
				cli_error(ctx, "'--at %s' is not an ISO 8601 time", arg);
				rc = EXIT_USAGE;
			}
			break;
		case O_WAIT:
			if (time_parse_duration(&wait_us, arg) < 0) {
				cli_error(ctx, "'--wait %s' is not a duration like 10m", arg);
				rc = EXIT_USAGE;
			}
			break;
		case O_MIN:
			if (cli_parse_u64(ctx, "min-captures", arg, 1, 100000,
					  (unsigned long long *)&x.min_caps) < 0)
				rc = EXIT_USAGE;
			break;
		case O_GATE:
			if (stats_severity_parse(&gate, arg) < 0 || gate == STATS_SEV_NONE) {
				cli_error(ctx, "'--gate %s' is not low, medium, high or critical", arg);
				rc = EXIT_USAGE;
			}
			break;
		case O_INCONCLUSIVE:
			if (strcmp(arg, "pass") != 0 && strcmp(arg, "fail") != 0) {
				cli_error(ctx, "'--on-inconclusive %s' is not pass or fail", arg);
				rc = EXIT_USAGE;
			}
			on_inc = arg;
			break;
		}
	}
	if (c == 0 && !rc && cli_optind(p) != argc) {
		cli_error(ctx, "unexpected argument '%s' (see --help)", argv[cli_optind(p)]);
		rc = EXIT_USAGE;
	}
	cli_parser_free(p);
	if (c == CLI_HELP)
		return EXIT_OK;
	if (c == CLI_BAD || rc)
		return EXIT_USAGE;
	if (!x.service || !x.release || !x.ref || !*x.release) {
		cli_error(ctx, "--service, --release and --commit are required (see --help)");
		return EXIT_USAGE;
	}
	if (!(x.collect = json_array()) || !(x.reasons = json_array()) ||
	    !(x.suspects = json_object())) {
		rc = pr_error_set(&err, PR_ENOMEM, "out of memory");
		goto fail;
	}
	if ((rc = config_load(&cfg, ctx, &err)) < 0)
		goto fail;
	loaded = true;
	{
		const config_service *cs = config_service_find(&cfg, x.service);
		if (!x.repo && cs)
			x.repo = cs->repo;
	}
	/* The service first: a misspelled service must not be blamed on the repository. */
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 || (rc = ctx_blobs_open(ctx, &bs, &err)) < 0 ||
	    (rc = db_service_get(d, &svc, x.service, &err)) < 0)
		goto fail;
	if (!svc.enabled) {
		rc = pr_error_set(&err, PR_EREFUSED, "service '%s' is not enabled for profiling", x.service);
		goto fail;
	}
	if ((rc = gitinfo_resolve(x.sha, x.repo, x.ref, &err)) < 0 ||
	    (x.previous && (rc = gitinfo_resolve(x.prev_sha, x.repo, x.previous, &err)) < 0)) {
		/* A ref that does not resolve is bad input, not a usage slip. */
		if (err.code == PR_EUSAGE && x.repo == NULL)
			err.code = PR_EDATA;
		goto fail;
	}
	if ((rc = wait_for_captures(&x, d, bs, &cfg, svc.id, wait_us, &err)) < 0)
		goto fail;
	if (x.have == 0) {
		rc = no_captures(&x, d, svc.id, &err);
		goto fail;
	}
	/* The deploy is as old as the CI step, however long it waited. */
	if ((rc = deploy_record(&x.dep, &existed, d, svc.id, x.release, x.sha,
				x.previous ? x.prev_sha : NULL, reported_at, &err)) < 0 ||
	    (rc = suspects_range_load(&x.range, x.repo, x.dep.previous_sha, x.dep.commit_sha,
				      &err)) < 0)
		goto fail;
	/* "Now" is when the analysis starts, so the captures waited for are in it. */
	cfg.analysis.at_us = at_s ? at : time_now_us();
	analysis_init(&a, &cfg.analysis);
	{
		json_t *params = json_pack("{s:s,s:s,s:I,s:s,s:I}", "release", x.release,
					   "commit", x.sha, "deploy_id", (json_int_t)x.dep.id,
					   "gate", stats_severity_name(gate), "at_us",
					   (json_int_t)a.opts.at_us);
		rc = runs_begin(&run_id, d, "post-deploy", svc.id, params, &err);
		json_decref(params);
		if (rc < 0)
			goto fail;
	}
	{
		const config_service *cs = config_service_find(&cfg, x.service);
		for (size_t t = 0; t < (cs ? cs->ntypes : 1); t++) {
			analysis_target tg = {svc.id, svc.name, cs ? cs->types[t] : "cpu", x.release,
					      0, 0, NULL, NULL};
			if ((rc = analysis_add(&a, d, &tg, true, &err)) < 0)
				goto fail;
		}
	}
	if ((rc = analysis_finish(&a, &err)) < 0 || (rc = analysis_store(&a, d, run_id, &cfg, &err)) < 0 ||
	    (rc = store_suspects(&x, d, &a, run_id, &err)) < 0 || (rc = tag_evidence(d, &x, &a, &err)) < 0)
		goto fail;
	/* Delivery problems leave pages pending in the outbox; they do not change the verdict. */
	if ((rc = send_pages(d, &cfg, &a, &pc, &err)) < 0)
		goto fail;
	if (pc.first_error[0])
		cli_warn(ctx, "paging: %s", pc.first_error);

	for (size_t i = 0; i < a.ntests && a.tests[i].significant; i++)
		if (a.tests[i].direction == FINDING_REGRESSION && a.tests[i].severity >= gate)
			x.verdict = "fail";
	for (size_t i = 0; i < a.nskipped; i++) {
		char line[PR_ERROR_MSG_MAX];
		snprintf(line, sizeof(line), "%s: %s", a.skipped[i].type, a.skipped[i].reason);
		json_array_append_new(x.reasons, json_string(line));
	}
	if ((uint64_t)x.have < x.min_caps) {
		char line[200];
		snprintf(line, sizeof(line), "only %" PRId64 " of the %" PRIu64
			 " captures asked for (--min-captures) arrived within --wait", x.have,
			 x.min_caps);
		json_array_append_new(x.reasons, json_string(line));
	}
	if (strcmp(x.verdict, "fail") != 0 && json_array_size(x.reasons))
		x.verdict = "inconclusive";
	detail = json_pack("{s:I,s:s,s:O,s:O,s:o,s:s?,s:I,s:{s:I,s:I,s:I,s:I}}",
			   "findings", (json_int_t)a.nfindings, "verdict", x.verdict,
			   "inconclusive_reasons", x.reasons, "collection_problems", x.collect,
			   "commits", suspects_range_json(&x.range),
			   "range_note", x.range.note[0] ? x.range.note : NULL,
			   "captures", (json_int_t)x.have,
			   "pages", "enqueued", (json_int_t)a.pages_enqueued, "sent", (json_int_t)pc.sent,
			   "failed", (json_int_t)pc.failed, "pending", (json_int_t)pc.pending);
	if ((rc = runs_finish(d, run_id, "ok", detail, &err)) < 0)
		goto fail;
	{
		pr_error perr = PR_ERROR_INIT;
		if (pushgw_push_analysis(&cfg, "post-deploy", true, t0, &a, 0, &pc, &perr) < 0)
			cli_warn(ctx, "%s", perr.msg);
	}
	{
		/* The findings are recorded: a report that cannot be written is a warning. */
		pr_error rerr = PR_ERROR_INIT;
		if (reportdata_write_run(d, bs, &cfg, ctx->home, run_id, &report, &rerr) < 0)
			cli_warn(ctx, "report: %s", rerr.msg);
	}
	{
		report_out o = {&md, 0};
		markdown(&o, &x, &a, gate, on_inc, report);
		rc = o.rc;
	}
	if (rc < 0) {
		rc = pr_error_set(&err, PR_ENOMEM, "out of memory");
		goto fail;
	}
	if (x.summary_path && (rc = append_summary(x.summary_path, &md, &err)) < 0)
		goto fail_printed;
	for (size_t i = 0; i < json_array_size(x.collect); i++)
		cli_warn(ctx, "collection: %s", json_string_value(json_array_get(x.collect, i)));
	if (ctx->json) {
		rc = cli_print_json(ctx, result_json(&x, &a, run_id, &pc, report));
	} else {
		fwrite(md.ptr, 1, md.len, stdout);
		if (a.pages_enqueued || pc.sent || pc.failed || pc.pending)
			printf("\nPages: %zu enqueued, %zu sent, %zu failed, %zu pending.\n",
			       a.pages_enqueued, pc.sent, pc.failed, pc.pending);
		rc = EXIT_OK;
	}
	if (rc == EXIT_OK && strcmp(x.verdict, "fail") == 0)
		rc = EXIT_GATE;
	else if (rc == EXIT_OK && strcmp(x.verdict, "inconclusive") == 0 && strcmp(on_inc, "fail") == 0)
		rc = EXIT_INCONCLUSIVE;
	goto out;
fail:
	if (run_id) {
		pr_error ignore = PR_ERROR_INIT;
		json_t *why = json_pack("{s:s}", "error", err.msg);
		runs_finish(d, run_id, "failed", why, &ignore);
		json_decref(why);
	}
fail_printed:
	rc = cli_fail(ctx, &err);
	/* Only a run that got as far as analysing counts as a failed run for the metrics. */
	if (loaded && run_id) {
		pr_error perr = PR_ERROR_INIT;
		if (pushgw_push_analysis(&cfg, "post-deploy", false, t0, &a, 1, &pc, &perr) < 0)
			cli_warn(ctx, "%s", perr.msg);
	}
out:
	free(report);
	buf_release(&md);
	json_decref(detail);
	json_decref(x.collect);
	json_decref(x.reasons);
	json_decref(x.suspects);
	analysis_release(&a);
	suspects_range_release(&x.range);
	db_service_release(&svc);
	blob_store_free(bs);
	db_close(d);
	config_release(&cfg);
	return rc;
}
