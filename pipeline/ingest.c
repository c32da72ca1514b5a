/*
 * ingest.c: file -> blob + index rows (see ingest.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "pipeline/ingest.h"
#include "pipeline/perf.h"
#include "common/utf8.h"
#include "pipeline/format.h"
#include "common/fileio.h"
#include "common/timeutil.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const ingest_types[] = {"cpu", "heap", "alloc", "wall", "goroutine", NULL};

bool ingest_type_valid(const char *type)
{
	for (size_t i = 0; ingest_types[i]; i++)
		if (strcmp(ingest_types[i], type) == 0)
			return true;
	return false;
}

int ingest_check_text(const char *what, const char *s, pr_error *err)
{
	size_t n = strlen(s);

	if (n == 0 || n > INGEST_TEXT_MAX)
		return pr_error_set(err, PR_EUSAGE, "%s must be 1 to %d bytes long", what,
				    INGEST_TEXT_MAX);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f || *p == '"' || *p == '\\')
			return pr_error_set(err, PR_EUSAGE,
					    "%s contains a control character, quote or backslash",
					    what);
	/* The database keeps text as UTF-8 and refuses anything else. */
	if (!utf8_valid(s, n))
		return pr_error_set(err, PR_EUSAGE, "%s is not valid UTF-8", what);
	return 0;
}

static int check_commit(const char *s, pr_error *err)
{
	size_t n = strlen(s), i = 0;
	char q[40];

	if (n >= 4 && n <= 64)
		while (i < n && isxdigit((unsigned char)s[i]))
			i++;
	if (n < 4 || n > 64 || i < n)
		return pr_error_set(err, PR_EUSAGE,
				    "commit '%s' is not a hex SHA (4 to 64 hex digits)",
				    profile_quote(q, s, n));
	return 0;
}

int ingest_check_tag(const char *key, const char *value, pr_error *err)
{
	size_t n = strlen(key);
	char what[INGEST_TAG_KEY_MAX + 32], q[40];
	double load;
	int rc;

	if (n == 0 || n > INGEST_TAG_KEY_MAX)
		return pr_error_set(err, PR_EUSAGE, "tag key '%s' must be 1 to %d bytes long",
				    profile_quote(q, key, n), INGEST_TAG_KEY_MAX);
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)key[i]) && !strchr("_.-", key[i]))
			return pr_error_set(err, PR_EUSAGE,
					    "tag key '%s' has characters other "
					    "than letters, digits, "
					    "'_', '.' and '-'", profile_quote(q, key, n));
	/* Quoted whole: the key is now letters, digits and "_.-" only. */
	snprintf(what, sizeof(what), "the value of tag '%s'", key);
	if ((rc = ingest_check_text(what, value, err)) < 0)
		return rc;
	/*
	 * The tags that name a capture's load are read as a number by the
	 * analysis: one it cannot read left every capture's cost per unit of
	 * load untested, so it is refused here, where it can still be fixed.
	 */
	if ((strcmp(key, "load") == 0 || strcmp(key, "rps") == 0) &&
	    ingest_parse_load(&load, value) < 0)
		return pr_error_set(err, PR_EUSAGE,
				    "the value of tag '%s' ('%s') is not a plain non-negative "
				    "number",
				    key, profile_quote(q, value, strlen(value)));
	return 0;
}

int ingest_parse_load(double *out, const char *s)
{
	char *end;
	double v;

	/* strtod's own words for hex, "inf", "nan" and a sign are no load figures. */
	if (!isdigit((unsigned char)*s) && !(*s == '.' && isdigit((unsigned char)s[1])))
		return -1;
	for (const char *p = s; *p; p++)
		if (!isdigit((unsigned char)*p) && !strchr(".eE+-", *p))
			return -1;
	errno = 0;
	v = strtod(s, &end);
	if (*end || errno == ERANGE || !isfinite(v) || v < 0)
		return -1;
	*out = v;
	return 0;
}

/* Tags as JSON text: an object whose members all pass ingest_check_tag. */
static int check_tags(const char *tags_json, pr_error *err)
{
	json_error_t jerr;
	json_t *tags = json_loads(tags_json, JSON_REJECT_DUPLICATES, &jerr), *v;
	const char *key;
	char q[40];
	int rc = 0;

	if (!tags || !json_is_object(tags)) {
		rc = pr_error_set(err, PR_EUSAGE, "the tags are not a JSON object");
		goto out;
	}
	json_object_foreach(tags, key, v) {
		if (!json_is_string(v)) {
			rc = pr_error_set(err, PR_EUSAGE, "tag '%s' must be a string",
					  profile_quote(q, key, strlen(key)));
			goto out;
		}
		if ((rc = ingest_check_tag(key, json_string_value(v), err)) < 0)
			goto out;
	}
out:
	json_decref(tags);
	return rc;
}

int ingest_validate(const ingest_request *r, pr_error *err)
{
	char q[40];
	int rc;

	if (!r->service)
		return pr_error_set(err, PR_EUSAGE, "no service given");
	if (!r->release)
		return pr_error_set(err, PR_EUSAGE, "no release given");
	if ((rc = ingest_check_text("the release", r->release, err)) < 0)
		return rc;
	if (r->host && (rc = ingest_check_text("the host", r->host, err)) < 0)
		return rc;
	if (r->commit && (rc = check_commit(r->commit, err)) < 0)
		return rc;
	if (r->type && !ingest_type_valid(r->type))
		return pr_error_set(err, PR_EUSAGE,
				    "unknown profile type '%s' (cpu, heap, alloc, wall, goroutine)",
				    profile_quote(q, r->type, strlen(r->type)));
	if (r->tags_json && (rc = check_tags(r->tags_json, err)) < 0)
		return rc;
	return 0;
}

/* ---- JSON capture descriptions ------------------------------------------ */

void ingest_desc_release(ingest_desc *d)
{
	json_decref(d->json);
	free(d->tags_json);
	free(d->path);
	memset(d, 0, sizeof(*d));
}

/* A string member: NULL when absent or null; PR_EDATA when not a string. */
static int json_text(const char **out, json_t *obj, const char *key, const char *name,
		     pr_error *err)
{
	json_t *v = json_object_get(obj, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return pr_error_set(err, PR_EDATA, "%s: \"%s\" must be a string", name, key);
	*out = json_string_value(v);
	return 0;
}

static int json_required(const char *value, const char *key, const char *name, pr_error *err)
{
	if (!value)
		return pr_error_set(err, PR_EDATA, "%s: missing \"%s\"", name, key);
	return 0;
}

/*
 * "path" of a manifest line, resolved against the manifest's folder (dir).
 * A manifest names files: "-" is a file of that name there, never
 * standard input, which may be the manifest itself, or a profile that
 * another line or another command already read.
 */
static int resolve_path(char **out, const char *path, const char *dir, const char *name,
			pr_error *err)
{
	size_t n = strlen(path);
	buf b = BUF_INIT;
	int rc;

	*out = NULL;
	if (n == 0 || n > INGEST_PATH_MAX)
		return pr_error_set(err, PR_EDATA, "%s: \"path\" must be 1 to %d bytes long", name,
				    INGEST_PATH_MAX);
	if (path[0] == '/' || (!dir && strcmp(path, "-") != 0))
		rc = buf_puts(&b, path);
	else
		rc = buf_printf(&b, "%s/%s", dir ? dir : ".", path);
	if (rc < 0 || !(*out = buf_detach(&b, NULL)))
		return pr_error_set(err, PR_ENOMEM, "%s: out of memory", name);
	return 0;
}

/* "tags": an object of strings, kept as compact JSON with sorted keys. */
static int json_tags(char **out, json_t *obj, const char *name, pr_error *err)
{
	json_t *v = json_object_get(obj, "tags"), *tv;
	const char *key;
	char q[40];

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_object(v))
		return pr_error_set(err, PR_EDATA, "%s: \"tags\" must be an object", name);
	json_object_foreach(v, key, tv)
		if (!json_is_string(tv))
			return pr_error_set(err, PR_EDATA, "%s: tag '%s' must be a string", name,
					    profile_quote(q, key, strlen(key)));
	if (!(*out = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS)))
		return pr_error_set(err, PR_ENOMEM, "%s: out of memory", name);
	return 0;
}

int ingest_request_from_json(ingest_desc *out, const char *text, size_t len,
			     const ingest_json_source *src, pr_error *err)
{
	static const char *const keys[] = {"path", "service", "release", "commit", "host", "time",
					   "type", "format", "tags", NULL};
	const char *name = src->name, *key, *path = NULL, *time = NULL, *fmt = NULL;
	ingest_request *req = &out->req;
	pr_error verr = PR_ERROR_INIT;
	json_error_t jerr;
	json_t *v;
	char q[40];
	int rc = 0;

	memset(out, 0, sizeof(*out));
	/*
	 * Windows editors and PowerShell's Out-File start a UTF-8 file with a
	 * byte order mark (EF BB BF), which jansson refuses as "'[' or '{'
	 * expected": skip it, as the JSON profile parsers do (jsonscan_bom).
	 */
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {
		text += 3;
		len -= 3;
	}
	if (len > INGEST_JSON_MAX) {
		rc = pr_error_set(err, PR_EDATA, "%s: longer than %d bytes", name, INGEST_JSON_MAX);
		goto out;
	}
	if (!(out->json = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr))) {
		rc = pr_error_set(err, PR_EDATA, "%s: invalid JSON at line %d column %d: %s",
				  name, jerr.line, jerr.column, pr_json_reason(jerr.text));
		goto out;
	}
	if (!json_is_object(out->json)) {
		rc = pr_error_set(err, PR_EDATA, "%s: not a JSON object", name);
		goto out;
	}
	json_object_foreach(out->json, key, v) {
		size_t i = 0;
		while (keys[i] && strcmp(keys[i], key) != 0)
			i++;
		/* A sidecar's file and service are the folder's, never its own. */
		if (!keys[i] || (i == 0 && src->path) || (i == 1 && src->service)) {
			rc = pr_error_set(err, PR_EDATA, "%s: unknown key \"%s\"", name,
					  profile_quote(q, key, strlen(key)));
			goto out;
		}
	}
	if ((rc = json_text(&path, out->json, "path", name, err)) < 0 ||
	    (rc = json_text(&req->service, out->json, "service", name, err)) < 0 ||
	    (rc = json_text(&req->release, out->json, "release", name, err)) < 0 ||
	    (rc = json_text(&req->commit, out->json, "commit", name, err)) < 0 ||
	    (rc = json_text(&req->host, out->json, "host", name, err)) < 0 ||
	    (rc = json_text(&time, out->json, "time", name, err)) < 0 ||
	    (rc = json_text(&req->type, out->json, "type", name, err)) < 0 ||
	    (rc = json_text(&fmt, out->json, "format", name, err)) < 0)
		goto out;
	if (src->path)
		path = src->path;
	if (src->service)
		req->service = src->service;
	if ((rc = json_required(path, "path", name, err)) < 0 ||
	    (rc = json_required(req->service, "service", name, err)) < 0 ||
	    (rc = json_required(req->release, "release", name, err)) < 0)
		goto out;
	if (time && time_parse(&req->time_us, time) < 0) {
		rc = pr_error_set(err, PR_EDATA, "%s: \"time\" '%s' is not an ISO 8601 time",
				  name, profile_quote(q, time, strlen(time)));
		goto out;
	}
	if (fmt && profile_format_from_name(&req->format, fmt) < 0) {
		rc = pr_error_set(err, PR_EDATA,
				  "%s: unknown \"format\" '%s' "
				  "(pprof, folded, v8, perf, speedscope, v8heap, jfr)", name,
				  profile_quote(q, fmt, strlen(fmt)));
		goto out;
	}
	if ((rc = json_tags(&out->tags_json, out->json, name, err)) < 0)
		goto out;
	req->tags_json = out->tags_json;
	if (src->path) {
		if (!(out->path = strdup(src->path))) {
			rc = pr_error_set(err, PR_ENOMEM, "%s: out of memory", name);
			goto out;
		}
	} else if ((rc = resolve_path(&out->path, path, src->dir, name, err)) < 0) {
		goto out;
	}
	req->path = out->path;
	/* The checks every request passes, in this description's name. */
	if ((rc = ingest_validate(req, &verr)) < 0) {
		rc = pr_error_set(err, rc == PR_ENOMEM ? rc : PR_EDATA, "%s: %s", name, verr.msg);
		goto out;
	}
out:
	if (rc < 0)
		ingest_desc_release(out);
	return rc;
}

static int check_service(const db_service *svc, const char *name, pr_error *err)
{
	if (!svc->enabled)
		return pr_error_set(err, PR_EREFUSED,
				    "service '%s' is not enabled for profiling (run "
				    "'profreg service enable %s')",
				    name, name);
	return 0;
}

/*
 * A capture's row needs a time after the epoch: 0 us is no time. A
 * profile's time_nanos under a microsecond, or a file dated at the epoch
 * (an archive that zeroes its dates), says nothing of when the capture was
 * taken, and taken as it is it failed the insert as a missing time, exit 2.
 */
static int64_t capture_time(const ingest_request *req, const profile *p)
{
	struct stat st;
	int64_t us;

	if (req->time_us)
		return req->time_us;
	if (p->time_ns >= 1000)
		return p->time_ns / 1000;
	/* Collectors drop files as they capture them: mtime is the best guess. */
	if (strcmp(req->path, "-") != 0 &&
	    (req->file_only ? lstat(req->path, &st) : stat(req->path, &st)) == 0 &&
	    (us = (int64_t)st.st_mtim.tv_sec * 1000000 + st.st_mtim.tv_nsec / 1000) > 0)
		return us;
	return time_now_us();
}

/* Error codes that say the input or the request was at fault, not the store. */
static bool input_code(int code)
{
	return code == PR_EUSAGE || code == PR_EDATA || code == PR_ELIMIT ||
	       code == PR_ENOTFOUND || code == PR_EEXISTS || code == PR_EREFUSED;
}

/*
 * One capture on its way through ingest_files. The stages run in order;
 * reading and parsing touch nothing shared, so they run on several
 * threads, the database and the blob store only on the caller's.
 */
typedef enum stage { ST_READ, ST_FIND, ST_PARSE, ST_STORE, ST_DONE } stage;

typedef struct item {
	const ingest_request *req;
	const char *name;        /* req->display, else req->path */
	ingest_result *out;
	pr_error e;              /* the reason, before the file is named */
	const db_service *svc;
	buf raw;
	profile *p;
	profile_summary sum;
	db_capture meta;
	const char *type;
	const profile_limits *lim;
	stage next;
	int rc;
	bool named;              /* e names the file already (reading and parsing it) */
	bool input_read;         /* the file itself could not be read */
	bool blob_cut;           /* stored already, as a capture retention cut to a summary */
} item;

static bool item_failed_infra(const item *it)
{
	return it->rc < 0 && ((!input_code(it->rc) && !it->input_read) || it->rc == PR_ENOMEM);
}

/* Read the file and name its bytes. */
static void item_read(item *it)
{
	int rc;

	if ((rc = (it->req->file_only ? fileio_read_file : fileio_read)(
		     &it->raw, it->req->path, it->lim->max_input_bytes, &it->e)) < 0) {
		/*
		 * A file that cannot be read is that file's failure: the others
		 * go on. One refused for its path (no permission, a file where a
		 * folder should be) is bad input (exit 4, fileio's code); one
		 * the machine could not read (no descriptors left, an I/O error)
		 * keeps its code, exit 3.
		 */
		it->rc = rc;
		it->named = true;
		it->input_read = rc != PR_ENOMEM;
		it->next = ST_DONE;
		return;
	}
	it->out->bytes = it->raw.len;
	blob_key_of(it->out->blob_key, it->raw.ptr, it->raw.len);
	it->next = ST_FIND;
}

/*
 * "type/unit, ..." of the profile's value columns, cut to fit out. The
 * names come from the input and may be 64 KiB long: each is quoted by its
 * start, so that one long name does not hide the others.
 */
static void value_types_str(char *out, size_t size, const profile *p)
{
	size_t n = 0;
	char qt[40], qu[40];

	out[0] = '\0';
	for (size_t i = 0; i < p->nvalue_types && n < size; i++) {
		const profile_value_type *vt = &p->value_types[i];
		int w = snprintf(out + n, size - n, "%s%s/%s", i ? ", " : "",
				 profile_quote(qt, vt->type, strlen(vt->type)),
				 profile_quote(qu, vt->unit, strlen(vt->unit)));
		if (w < 0)
			break;
		n += (size_t)w;
	}
	if (!p->nvalue_types)
		snprintf(out, size, "none");
}

/* "an" before a type that starts with a vowel ("an alloc profile"), else "a". */
static const char *article(const char *type)
{
	return strchr("aeiou", type[0]) && type[0] ? "an" : "a";
}

/*
 * What a profile whose every sample type is one of Go's that profreg does
 * not analyse measured, or NULL: its block and mutex profiles
 * (contentions, delay) and its threadcreate profile. A type asked for
 * cannot make these a profile of that type.
 */
static const char *unanalysed_kind(const profile *p)
{
	bool contention = false, threads = false;

	for (size_t i = 0; i < p->nvalue_types; i++) {
		const char *t = p->value_types[i].type;

		if (strcmp(t, "contentions") == 0 || strcmp(t, "delay") == 0)
			contention = true;
		else if (strcmp(t, "threadcreate") == 0)
			threads = true;
		else
			return NULL;
	}
	if (contention && !threads)
		return "a contention profile (Go's block or mutex profile)";
	if (threads && !contention)
		return "a thread creation profile";
	return NULL;
}

/*
 * The capture's profile type: the one asked for, else the one its values
 * say. A pprof's sample types name what it measured: one that names no
 * type profreg analyses (Go's block and mutex profiles: contentions,
 * delay) is refused rather than guessed as cpu and mixed into CPU
 * baselines, and so is a type asked for that its values contradict (a
 * heap profile asked to be cpu), in a pprof, a V8 heap profile or a JFR
 * recording, whose bytes say what they measured. Sample types profreg does not know, with a
 * type asked for, are taken on trust, as are folded, perf, V8 cpuprofile
 * and speedscope captures, which only count samples or time; Go's block,
 * mutex and threadcreate profiles are known, and no type asked for makes
 * them one: a mutex profile taken as cpu joined the CPU baseline.
 */
static int item_type(item *it, const profile *p)
{
	const char *says;
	char types[160], ev[80];

	/*
	 * A perf recording of sched:sched_switch, page faults or cache
	 * misses counts events, not CPU time: stored as a cpu capture, every
	 * share of it read as a share of the CPU, and, beside the service's
	 * real cpu captures, it moved every function of its baseline.
	 */
	if (p->format == PROFILE_FMT_PERF && p->event[0] && !perf_event_is_cpu_time(p->event))
		return pr_error_set(&it->e, PR_EDATA,
				    "cannot ingest '%s': its samples are '%s' events, which count "
				    "no CPU time; profreg judges perf records of cpu-clock, "
				    "task-clock or cycles ('perf record -e cpu-clock -g')",
				    it->name, perf_event_text(ev, p->event));
	if (it->req->type) {
		/*
		 * A JFR recording's columns are the JDK's own events: CPU samples
		 * of running threads and allocations, nothing else. Its samples
		 * counted as goroutines or wall time fitted those types' units,
		 * and a manifest giving one type to a service's files stored CPU
		 * samples as goroutine counts.
		 */
		bool jfr_other = p->format == PROFILE_FMT_JFR && (says = profile_guess_type(p)) &&
				 strcmp(it->req->type, says) != 0 &&
				 strcmp(it->req->type, "alloc") != 0;
		if (!jfr_other &&
		    ((p->format != PROFILE_FMT_PPROF && p->format != PROFILE_FMT_V8HEAP &&
		      p->format != PROFILE_FMT_JFR) ||
		     profile_has_values_of(p, it->req->type)))
			return 0;
		if (!(says = profile_guess_type(p))) {
			if (p->format != PROFILE_FMT_PPROF || !(says = unanalysed_kind(p)))
				return 0;
			value_types_str(types, sizeof(types), p);
			return pr_error_set(&it->e, PR_EDATA,
					    "cannot ingest '%s': not %s %s profile: its sample "
					    "types %s make it %s, which profreg does not analyse",
					    it->name, article(it->req->type), it->req->type,
					    types, says);
		}
		value_types_str(types, sizeof(types), p);
		return pr_error_set(&it->e, PR_EDATA,
				    "cannot ingest '%s': not %s %s profile: its sample types %s "
				    "make it %s %s profile",
				    it->name, article(it->req->type), it->req->type, types,
				    article(says), says);
	}
	if (profile_guess_type(p))
		return 0;
	value_types_str(types, sizeof(types), p);
	return pr_error_set(
		&it->e, PR_EDATA,
		"cannot ingest '%s': sample types %s are none that profreg analyses "
		"(cpu or samples, wall, inuse_*, alloc_*, goroutine; libdatadog's cpu-time, "
		"wall-time, heap-space, alloc-space; pprof-nodejs's space)",
		it->name, types);
}

/* Parse and summarise, and fill the capture's row. */
static void item_parse(item *it)
{
	const ingest_request *req = it->req;
	db_capture *meta = &it->meta;
	profile *p;
	int rc;

	it->named = true;
	if ((rc = format_parse(&it->p, (const uint8_t *)it->raw.ptr, it->raw.len, req->format,
			       it->name, it->lim, &it->e)) < 0)
		goto fail;
	p = it->p;
	if ((rc = item_type(it, p)) < 0)
		goto fail;
	it->type = profile_pick_primary(p, req->type);
	if ((rc = profile_summarize(&it->sum, p, p->primary, &it->e)) < 0)
		goto fail;
	it->named = false;

	meta->service_id = it->svc->id;
	meta->service = it->svc->name;
	meta->profile_type = (char *)it->type;
	meta->release = (char *)req->release;
	meta->commit_sha = (char *)req->commit;
	meta->host = (char *)req->host;
	meta->captured_at_us = capture_time(req, p);
	if (meta->captured_at_us > time_now_us() + INGEST_MAX_AHEAD_US) {
		char when[TIME_FMT_MAX];

		time_format(when, meta->captured_at_us);
		rc = pr_error_set(&it->e, PR_EDATA, "its capture time %s is more than a day "
				  "ahead of this machine's clock%s", when, req->time_us ? "" :
				  p->time_ns >= 1000 ? " (the profile's own time; --time sets it)"
				  : " (the file's time; --time sets it)");
		goto fail;
	}
	if (meta->captured_at_us < INGEST_MIN_CAPTURE_US) {
		char when[TIME_FMT_MAX];
		const char *whose = "";

		/* A profile's time in seconds since 2000 reads as 1970: say so. */
		if (!req->time_us && p->time_ns >= INGEST_MIN_CAPTURE_US / 1000000 &&
		    p->time_ns < INGEST_MIN_CAPTURE_US / 1000)
			whose = " (the profile's own time, written in seconds, not nanoseconds;"
				" --time sets it)";
		else if (!req->time_us)
			whose = p->time_ns >= 1000 ? " (the profile's own time; --time sets it)"
						   : " (the file's time; --time sets it)";
		time_format(when, meta->captured_at_us);
		rc = pr_error_set(&it->e, PR_EDATA,
				  "its capture time %s is before 2000-01-01T00:00:00Z%s", when,
				  whose);
		goto fail;
	}
	if (p->duration_ns > INGEST_MAX_DURATION_NS) {
		rc = pr_error_set(&it->e, PR_EDATA,
				  "it says it covers %.0f days (duration %" PRId64
				  " ns), more than a capture's 31 days",
				  (double)p->duration_ns / 86400e9, p->duration_ns);
		goto fail;
	}
	meta->duration_ns = p->duration_ns;
	meta->period = p->period;
	meta->period_type = p->period_type.type;
	meta->period_unit = p->period_type.unit;
	/*
	 * A JFR recording's period is its CPU sampler's: its allocations are
	 * sampled by another rule, and with the CPU period they read as an
	 * allocation rate that changed with the JFR settings.
	 */
	if (p->format == PROFILE_FMT_JFR &&
	    strcmp(p->value_types[p->primary].type, "samples") != 0) {
		meta->period = 0;
		meta->period_type = meta->period_unit = NULL;
	}
	meta->value_type = p->value_types[p->primary].type;
	meta->value_unit = p->value_types[p->primary].unit;
	meta->total_value = it->sum.total;
	meta->sample_count = it->sum.sample_count;
	meta->function_count = (int32_t)it->sum.nrows;
	meta->blob_key = it->out->blob_key;
	meta->blob_bytes = (int64_t)it->raw.len;
	meta->format = (char *)profile_format_name(p->format);
	meta->retention_class = (char *)"hot";
	meta->tags_json = (char *)(req->tags_json ? req->tags_json : "{}");
	it->next = ST_STORE;
	return;
fail:
	it->rc = rc;
	it->next = ST_DONE;
}

/* Threads take the next index until none is left. */
typedef struct par_run {
	size_t n;
	void (*fn)(void *ctx, size_t i);
	void *ctx;
	atomic_size_t next;
} par_run;

static void *par_worker(void *arg)
{
	par_run *pr = arg;
	size_t i;

	while ((i = atomic_fetch_add(&pr->next, 1)) < pr->n)
		pr->fn(pr->ctx, i);
	return NULL;
}

/*
 * worker(arg) on up to `jobs` threads, the caller's included, no more than
 * there are items (n) to share out among them.
 */
static void run_workers(size_t n, unsigned jobs, void *(*worker)(void *), void *arg)
{
	pthread_t tid[INGEST_JOBS_MAX];
	unsigned extra = 0;

	if (jobs > INGEST_JOBS_MAX)
		jobs = INGEST_JOBS_MAX;
	/* A thread that cannot start leaves its share to the others. */
	while (extra + 1 < jobs && extra + 1 < n &&
	       pthread_create(&tid[extra], NULL, worker, arg) == 0)
		extra++;
	worker(arg);
	for (unsigned t = 0; t < extra; t++)
		pthread_join(tid[t], NULL);
}

/* fn(ctx, i) for every i below n, on up to `jobs` threads, the caller's included. */
static void run_parallel(size_t n, unsigned jobs, void (*fn)(void *ctx, size_t i), void *ctx)
{
	par_run pr = {n, fn, ctx, 0};

	run_workers(n, jobs, par_worker, &pr);
}

typedef struct stage_ctx {
	item *items;
	stage which;
} stage_ctx;

static void stage_one(void *ctx, size_t i)
{
	stage_ctx *sc = ctx;
	item *it = &sc->items[i];

	if (it->next == sc->which)
		item_read(it);
}

/* Read items[0..n) on up to `jobs` threads. */
static void run_reads(item *items, size_t n, unsigned jobs)
{
	stage_ctx sc = {items, ST_READ};

	run_parallel(n, jobs, stage_one, &sc);
}

/* Items from `stop` on are not tried: the first failure of the store or of memory ends a batch. */
static size_t first_stop(const item *items, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (items[i].next == ST_DONE && item_failed_infra(&items[i]))
			return i + 1;
	return n;
}

/* A text[] literal of the items' blob keys (hex, so nothing needs quoting). */
static int keys_literal(buf *out, item *const *its, size_t n)
{
	int rc = buf_putc(out, '{');

	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = buf_printf(out, "%s%s", i ? "," : "", its[i]->out->blob_key);
	if (rc == 0)
		rc = buf_putc(out, '}');
	return rc < 0 ? PR_ENOMEM : 0;
}

/*
 * Threads to hash and compress a local store's blobs on: INGEST_PUT_THREADS,
 * or fewer when the machine has fewer processors. More threads than
 * processors only take turns, with each other and with the rows sent
 * meanwhile, and each costs a start: on 2 processors, the ingest of
 * 1,280 files of 100 KB took 6% more CPU with 8 of them than with 2.
 */
static unsigned put_threads(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (cpus < 1)
		return 1;
	return cpus < INGEST_PUT_THREADS ? (unsigned)cpus : INGEST_PUT_THREADS;
}

/*
 * Every item's blob, durable before this returns. A local store's are
 * hashed and compressed on several threads (put_threads), then written
 * and made durable as one batch: two flushes for the lot instead of two a
 * blob, each a wait for the disk. Other stores put one after another. The
 * first failure in item order is the one reported.
 */
static int put_blobs(blob_store *bs, item *const *its, size_t n, pr_error *err)
{
	blob_put_item *bi = NULL;
	unsigned threads = strcmp(blob_store_kind(bs), "dir") == 0 ? put_threads() : 1;
	int rc = 0;

	if (!(bi = calloc(n ? n : 1, sizeof(*bi)))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		bi[i].data = its[i]->raw.ptr;
		bi[i].len = its[i]->raw.len;
		/*
		 * Hashed when read, to look the bytes up, and unchanged since:
		 * hashing them again cost 6% of the CPU of an ingest of
		 * 100 KB files.
		 */
		memcpy(bi[i].key, its[i]->out->blob_key, sizeof(bi[i].key));
		bi[i].keyed = blob_key_valid(bi[i].key);
	}
	rc = blob_put_many(bs, bi, n, threads, err);
	for (size_t i = 0; rc == 0 && i < n; i++)
		its[i]->out->repaired = bi[i].repaired;
out:
	free(bi);
	return rc;
}

/* put_blobs on a thread of its own, while the caller's thread writes the rows. */
typedef struct put_job {
	blob_store *bs;
	item *const *its;
	size_t n;
	pr_error err;
	int rc;
} put_job;

static void *put_job_run(void *arg)
{
	put_job *pj = arg;

	pj->rc = put_blobs(pj->bs, pj->its, pj->n, &pj->err);
	return NULL;
}

/* s and t say the same: both empty or NULL, or equal. */
static bool same_text(const char *s, const char *t)
{
	return strcmp(s ? s : "", t ? t : "") == 0;
}

/*
 * Request r, whose bytes are already capture `id` of its service (of
 * `release`, `host` and `type`), is that capture only if it says what the
 * capture says. Bytes that repeat under another release (a small
 * service's folded profile, the same file given twice in a manifest)
 * would otherwise leave the new release without the capture it was
 * given, with exit 0; the request is refused instead, naming the capture.
 * (A different time alone is a re-ingest: a copied file's time changes.)
 * Bytes without a sample are let through as that capture whatever they
 * say: a format without a time in it (node --heap-prof) writes the same
 * bytes on every idle host, and refusing them failed the drop folder's
 * collect every night, for a capture that has nothing to judge.
 * 0 when r is that capture, else PR_EEXISTS in *err.
 */
static int check_same_bytes(const ingest_request *r, int64_t id, const char *release,
			    const char *host, const char *type, bool empty, pr_error *err)
{
	char as[300];

	if (same_text(release, r->release) && (!r->host || !*r->host || same_text(host, r->host)) &&
	    (!r->type || same_text(type, r->type)))
		return 0;
	if (empty)
		return 0;
	/* What the request says otherwise: its release, else its host, else its type. */
	if (!same_text(release, r->release))
		snprintf(as, sizeof(as), "a capture of release '%.128s'", r->release);
	else if (r->host && *r->host && !same_text(host, r->host))
		snprintf(as, sizeof(as), "a capture of host '%.128s'", r->host);
	else
		snprintf(as, sizeof(as), "a capture of type '%.32s' (one file is one capture)",
			 r->type);
	return pr_error_set(err, PR_EEXISTS,
			    "these bytes are already capture %lld of service '%s' (%s, release "
			    "'%.128s', host '%.128s'); not stored again as %s", (long long)id,
			    r->service, type ? type : "?", release, host ? host : "", as);
}

bool ingest_same_commit(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return false;
	return true;
}

/*
 * A release is one build: captures that give it another commit than the
 * captures it has (a hotfix deployed under the old version, a tag moved)
 * would be judged as that release, and a regression of the new build
 * would hide in the old one's baseline. The first such capture of the
 * batch is refused (PR_EEXISTS, naming the capture whose commit the
 * release has), which fails the batch: store_all then stores each alone,
 * and only the capture that disagrees is refused. Within the batch, a
 * later capture that disagrees with an earlier one fails it too.
 */
static int check_commits(db *d, item *const *its, size_t n, pr_error *err)
{
	int64_t *sids = NULL, *ids = NULL;
	const char **rels = NULL, **cmts = NULL;
	db_capture c;
	int rc = 0;

	for (size_t j = 1; j < n; j++)
		for (size_t i = 0; i < j && its[j]->req->commit; i++)
			if (its[i]->svc->id == its[j]->svc->id && its[i]->req->commit &&
			    strcmp(its[i]->req->release, its[j]->req->release) == 0 &&
			    !ingest_same_commit(its[i]->req->commit, its[j]->req->commit))
				return pr_error_set(err, PR_EEXISTS,
					"release '%.128s' of service '%s' is given commits %s and "
					"%s in one batch", its[j]->req->release,
					its[j]->req->service, its[i]->req->commit,
					its[j]->req->commit);
	if (!(sids = calloc(n, sizeof(*sids))) || !(ids = calloc(n, sizeof(*ids))) ||
	    !(rels = calloc(n, sizeof(*rels))) || !(cmts = calloc(n, sizeof(*cmts)))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		sids[i] = its[i]->svc->id;
		rels[i] = its[i]->req->release;
		cmts[i] = its[i]->req->commit;
	}
	if ((rc = db_release_commit_conflicts(d, ids, sids, rels, cmts, n, err)) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (!ids[i])
			continue;
		if ((rc = db_capture_get(d, &c, ids[i], err)) < 0)
			goto out;
		rc = pr_error_set(err, PR_EEXISTS,
				  "release '%.128s' of service '%s' is commit %s (capture %lld); "
				  "this capture says commit %s: not stored (a release is one "
				  "build: give this one a release name of its own)",
				  its[i]->req->release, its[i]->req->service,
				  c.commit_sha ? c.commit_sha : "?", (long long)c.id,
				  its[i]->req->commit);
		db_capture_release(&c);
		goto out;
	}
out:
	free(sids);
	free(ids);
	free(rels);
	free(cmts);
	return rc;
}

int ingest_check_delete_doubt(db *d, blob_store *bs, const char *keys, pr_error *err)
{
	char key[BLOB_KEY_HEX + 1], when[TIME_FMT_MAX];
	int64_t until = 0;
	int rc;

	if (!blob_delete_linger_us(bs))
		return 0;
	if ((rc = db_blob_delete_doubt(d, keys, key, &until, err)) < 0 || !key[0])
		return rc;
	time_format(when, until);
	return pr_error_set(err, PR_ELOCKED,
			    "blob '%s' in %s: retention sent a delete of it that got no answer "
			    "and may still land until %s; ingest it again after that",
			    key, blob_store_describe(bs), when);
}

/*
 * Write the blobs and the captures' rows in one transaction. Each blob is
 * written under a shared lock on its key, held until the row that keeps
 * it commits: retention deletes a file only under the exclusive lock and
 * after checking that no row keeps it. The blobs are written on another
 * thread while the rows are sent (most of the blobs' time is the disk's,
 * most of the rows' time is the server's), and the transaction commits
 * only once every blob is durable: no committed row ever names a blob
 * that is not on disk. A capture whose bytes another ingest stored
 * meanwhile comes back as already stored, or, given for another release,
 * fails the store with PR_EEXISTS (check_same_bytes). On failure the
 * transaction is rolled back and the reason is in *err, a blob's failure
 * before the database's, as when the blobs were written first (a blob may
 * remain, unreferenced, for retention to collect).
 */
static int store(db *d, blob_store *bs, item *const *its, size_t n, pr_error *err)
{
	const profile **ps = NULL;
	const profile_summary **sums = NULL;
	db_capture *mv = NULL, c;
	int64_t *ids = NULL;
	buf keys = BUF_INIT;
	char (*objtext)[64] = NULL, (*dettext)[256] = NULL;
	const char **objects = NULL, **details = NULL;
	size_t na = 0;
	put_job pj = {bs, its, n, PR_ERROR_INIT, 0};
	pthread_t put_tid;
	bool in_tx = false, putting = false;
	int rc;

	if (!(mv = calloc(n, sizeof(*mv))) || !(ps = calloc(n, sizeof(*ps))) ||
	    !(sums = calloc(n, sizeof(*sums))) || !(ids = calloc(n, sizeof(*ids))) ||
	    !(objtext = calloc(n, sizeof(*objtext))) || !(dettext = calloc(n, sizeof(*dettext))) ||
	    !(objects = calloc(n, sizeof(*objects))) || !(details = calloc(n, sizeof(*details)))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		mv[i] = its[i]->meta;
		ps[i] = its[i]->p;
		sums[i] = &its[i]->sum;
	}
	if ((rc = keys_literal(&keys, its, n)) < 0) {
		pr_error_set(err, rc, "out of memory");
		goto out;
	}
	if ((rc = db_begin(d, err)) < 0)
		goto out;
	in_tx = true;
	if ((rc = db_blob_lock_all_shared(d, keys.ptr, err)) < 0 ||
	    (rc = ingest_check_delete_doubt(d, bs, keys.ptr, err)) < 0 ||
	    (rc = check_commits(d, its, n, err)) < 0)
		goto out;
	/* Without a thread, the blobs go first, one batch after the other. */
	putting = pthread_create(&put_tid, NULL, put_job_run, &pj) == 0;
	if (!putting && (rc = put_blobs(bs, its, n, err)) < 0)
		goto out;
	if ((rc = db_capture_insert_many(d, ids, mv, ps, sums, n, err)) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		ingest_result *o = its[i]->out;
		if (!ids[i]) {
			/*
			 * An ingest of the same bytes committed after our look-up:
			 * the unique key made us wait for it, and its row is the
			 * one these bytes have.
			 */
			if ((rc = db_capture_find(d, &o->capture_id, its[i]->meta.service_id,
						  o->blob_key, err)) < 0 ||
			    (rc = db_capture_get(d, &c, o->capture_id, err)) < 0)
				goto out;
			/*
			 * For another release they are refused, as bytes stored
			 * before the look-up are: the whole store fails, and
			 * store_all stores each capture alone, this one refused.
			 */
			rc = check_same_bytes(its[i]->req, c.id, c.release, c.host, c.profile_type,
					      c.sample_count == 0 && c.total_value == 0, err);
			db_capture_release(&c);
			if (rc < 0)
				goto out;
			o->already = true;
			continue;
		}
		o->capture_id = ids[i];
		snprintf(objtext[na], sizeof(objtext[na]), "capture:%lld", (long long)ids[i]);
		snprintf(dettext[na], sizeof(dettext[na]),
			 "{\"service\":\"%s\",\"blob_key\":\"%s\",\"bytes\":%zu}",
			 its[i]->meta.service, o->blob_key, its[i]->raw.len);
		objects[na] = objtext[na];
		details[na] = dettext[na];
		na++;
	}
	if ((rc = db_audit_many(d, "ingest", objects, details, na, err)) < 0)
		goto out;
	if (putting) {
		putting = false;
		pthread_join(put_tid, NULL);
		if ((rc = pj.rc) < 0) {
			pr_error_set(err, rc, "%s", pj.err.msg);
			goto out;
		}
	}
	if ((rc = db_commit(d, err)) < 0)
		goto out;
	in_tx = false;
out:
	if (putting) {
		pthread_join(put_tid, NULL);
		if (pj.rc < 0) {
			/* The blob's failure is the one to report, as if it had come first. */
			pr_error_clear(err);
			rc = pr_error_set(err, pj.rc, "%s", pj.err.msg);
		}
	}
	if (in_tx)
		db_rollback(d);
	if (rc < 0)
		for (size_t i = 0; i < n; i++) {
			its[i]->out->capture_id = 0;
			its[i]->out->already = false;
		}
	buf_release(&keys);
	free(objects);
	free(details);
	free(objtext);
	free(dettext);
	free(ids);
	free(sums);
	free(ps);
	free(mv);
	return rc;
}

/* Store one item alone: its failure is its own. */
static void store_one(db *d, blob_store *bs, item *it)
{
	item *one[1] = {it};

	it->rc = store(d, bs, one, 1, &it->e);
	it->next = ST_DONE;
}

/* check_same_bytes for an item: true when it is that capture, else it is refused. */
static bool is_that_capture(item *it, const item *first)
{
	if ((it->rc = check_same_bytes(it->req, first->out->capture_id, first->req->release,
				       first->req->host, first->type,
				       first->sum.sample_count == 0 && first->sum.total == 0,
				       &it->e)) == 0)
		return true;
	it->next = ST_DONE;
	return false;
}

/* The earlier item in [0, i) with the same service and bytes that is being stored. */
static item *same_bytes(item *items, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (items[j].next == ST_STORE && items[j].svc->id == items[i].svc->id &&
		    strcmp(items[j].out->blob_key, items[i].out->blob_key) == 0)
			return &items[j];
	return NULL;
}

/*
 * Store every item at ST_STORE below *stop: all in one transaction, and
 * when that fails, each alone in order, so a failure is the one item's
 * that caused it and the others are stored. A second item with the bytes
 * of an earlier one is that capture, already stored.
 */
static void store_all(db *d, blob_store *bs, item *items, size_t *stop)
{
	item **its = NULL;
	pr_error e = PR_ERROR_INIT;
	size_t k = 0;

	if (!(its = calloc(*stop ? *stop : 1, sizeof(*its))))
		goto alone;
	for (size_t i = 0; i < *stop; i++)
		if (items[i].next == ST_STORE && !same_bytes(items, i))
			its[k++] = &items[i];
	if (k < 2)
		goto alone;
	if (store(d, bs, its, k, &e) < 0) {
		/*
		 * One capture may have cost the whole batch its connection (a
		 * server that drops it on a bad row): try each alone on a new
		 * one, so the failure lands on that capture. When the server
		 * is really gone, the first capture fails and the batch stops.
		 */
		pr_error_clear(&e);
		(void)db_reconnect(d, &e);
		goto alone;
	}
	for (size_t i = 0; i < *stop; i++) {
		item *first;
		if (items[i].next != ST_STORE)
			continue;
		if ((first = same_bytes(items, i)) && is_that_capture(&items[i], first)) {
			items[i].out->capture_id = first->out->capture_id;
			items[i].out->already = true;
		}
	}
	for (size_t i = 0; i < *stop; i++)
		if (items[i].next == ST_STORE)
			items[i].next = ST_DONE;
	free(its);
	return;
alone:
	free(its);
	for (size_t i = 0; i < *stop; i++) {
		item *it = &items[i], *first = NULL;
		if (it->next != ST_STORE)
			continue;
		/* An earlier item with these bytes stored them: this is that capture. */
		for (size_t j = 0; j < i && !first; j++)
			if (items[j].rc == 0 && items[j].meta.blob_key &&
			    items[j].svc->id == it->svc->id &&
			    strcmp(items[j].out->blob_key, it->out->blob_key) == 0)
				first = &items[j];
		if (first) {
			if (is_that_capture(it, first)) {
				it->out->capture_id = first->out->capture_id;
				it->out->already = true;
			}
			it->next = ST_DONE;
			continue;
		}
		store_one(d, bs, it);
		if (item_failed_infra(it)) {
			*stop = i + 1;
			break;
		}
	}
}

/*
 * A stored item's result, taken from its profile, and the profile, its
 * summary and its bytes freed: once stored, an item needs none of them.
 */
static void item_settle(item *it)
{
	ingest_result *out = it->out;

	if (it->rc == 0 && !out->already && it->p) {
		snprintf(out->type, sizeof(out->type), "%s", it->type);
		snprintf(out->format, sizeof(out->format), "%s", it->meta.format);
		out->total = it->sum.total;
		out->sample_count = it->sum.sample_count;
		out->nfunctions = it->sum.nrows;
		out->utf8_replaced = it->p->utf8_replaced;
		out->other_events = it->p->other_events;
		snprintf(out->event, sizeof(out->event), "%s", it->p->event);
	}
	profile_summary_release(&it->sum);
	profile_free(it->p);
	it->p = NULL;
	buf_release(&it->raw);
}

/* The result and the message, as ingest_file describes them. */
static void item_finish(item *it, pr_error *err)
{
	ingest_result *out = it->out;
	int rc = it->rc;

	if (rc < 0) {
		out->capture_id = 0;
		out->already = false;
		out->infra = !input_code(rc) && !it->input_read;
		if (it->named)
			pr_error_set(err, rc, "%s", it->e.msg);
		else
			pr_error_set(err, rc, "cannot ingest '%s': %s", it->name, it->e.msg);
	}
	item_settle(it);
}

/* The service named `name`, looked up once per batch in svcs[0..*nsvcs). */
static int batch_service(const db_service **out, db *d, db_service *svcs, size_t *nsvcs,
			 const char *name, pr_error *err)
{
	int rc;

	for (size_t i = 0; i < *nsvcs; i++)
		if (strcmp(svcs[i].name, name) == 0) {
			*out = &svcs[i];
			return 0;
		}
	if ((rc = db_service_get(d, &svcs[*nsvcs], name, err)) < 0) {
		db_service_release(&svcs[*nsvcs]);
		return rc;
	}
	*out = &svcs[(*nsvcs)++];
	return 0;
}

struct ingest_batch {
	item *items;
	db_service *svcs;
	size_t n, nsvcs, stop;
	size_t parsed;     /* items before this one have been parsed */
	unsigned jobs;
	uint64_t mem_cap;  /* what the parsed, unstored items may hold: one parse's budget */
};

void ingest_batch_free(ingest_batch *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++) {
		profile_summary_release(&b->items[i].sum);
		profile_free(b->items[i].p);
		buf_release(&b->items[i].raw);
	}
	for (size_t i = 0; i < b->nsvcs; i++)
		db_service_release(&b->svcs[i]);
	free(b->svcs);
	free(b->items);
	free(b);
}

/*
 * Look up, in one round trip, which items at ST_FIND are stored already;
 * the others go on to be parsed. When the look-up fails, the first of
 * them carries the failure and the batch stops there.
 */
static void find_stored(ingest_batch *b, db *d)
{
	item *items = b->items;
	int64_t *sids = NULL, *found = NULL, *ids = NULL;
	const char **keys = NULL;
	size_t *at = NULL, k = 0, nids = 0, ncaps = 0, nnew = 0;
	db_capture *caps = NULL;
	db_capture_filter f = {0};
	pr_error e = PR_ERROR_INIT;
	int rc;

	if (!(sids = calloc(b->stop ? b->stop : 1, sizeof(*sids))) ||
	    !(found = calloc(b->stop ? b->stop : 1, sizeof(*found))) ||
	    !(keys = calloc(b->stop ? b->stop : 1, sizeof(*keys))) ||
	    !(ids = calloc(b->stop ? b->stop : 1, sizeof(*ids))) ||
	    !(at = calloc(b->stop ? b->stop : 1, sizeof(*at)))) {
		rc = pr_error_set(&e, PR_ENOMEM, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < b->stop; i++)
		if (items[i].next == ST_FIND) {
			sids[k] = items[i].svc->id;
			keys[k] = items[i].out->blob_key;
			at[k++] = i;
		}
	if ((rc = db_capture_find_many(d, found, sids, keys, k, &e)) < 0)
		goto fail;
	/* What the stored ones say, to hold each item to it (check_same_bytes). */
	for (size_t j = 0; j < k; j++)
		if (found[j])
			ids[nids++] = found[j];
	f.ids = ids;
	f.nids = nids;
	if (nids && (rc = db_capture_list(d, &caps, &ncaps, &f, &e)) < 0)
		goto fail;
	for (size_t j = 0; j < k; j++) {
		item *it = &items[at[j]];
		const db_capture *c = NULL;

		for (size_t i = 0; found[j] && !c && i < ncaps; i++)
			c = caps[i].id == found[j] ? &caps[i] : NULL;
		/*
		 * Not stored (or deleted since the look-up): new bytes, unless
		 * retention deleted them (looked up below).
		 */
		if (!c) {
			if (it->req->again) {
				it->next = ST_PARSE;
				continue;
			}
			sids[nnew] = sids[j];
			keys[nnew] = keys[j];
			at[nnew++] = at[j];
			continue;
		}
		it->next = ST_DONE;
		if ((it->rc = check_same_bytes(it->req, c->id, c->release, c->host, c->profile_type,
					       c->sample_count == 0 && c->total_value == 0,
					       &it->e)) == 0) {
			it->out->already = true;
			it->out->capture_id = c->id;
			it->blob_cut = c->blob_deleted;
		}
	}
	/*
	 * Looked up after the captures: retention records a deletion in the
	 * transaction that deletes the capture, so a capture gone since the
	 * look-up above has its record by now.
	 */
	if ((rc = db_deleted_find(d, found, ids, sids, keys, nnew, &e)) < 0)
		goto fail;
	for (size_t j = 0; j < nnew; j++) {
		item *it = &items[at[j]];
		it->next = found[j] ? ST_DONE : ST_PARSE;
		if (!found[j])
			continue;
		it->out->retention_deleted = true;
		it->out->deleted_at_us = found[j];
		it->out->deleted_captured_us = ids[j];
	}
	goto out;
fail:
	for (size_t i = 0; i < b->stop; i++)
		if (items[i].next == ST_FIND) {
			items[i].rc = rc;
			pr_error_set(&items[i].e, rc, "%s", e.msg);
			items[i].next = ST_DONE;
			b->stop = i + 1;
			break;
		}
out:
	for (size_t i = 0; i < ncaps; i++)
		db_capture_release(&caps[i]);
	free(caps);
	free(sids);
	free(found);
	free(ids);
	free(keys);
	free(at);
}

/* Memory a parsed item holds until it is stored. */
static uint64_t item_mem(const item *it)
{
	return (it->p ? it->p->mem_used : 0) + it->raw.cap +
	       it->sum.nrows * sizeof(*it->sum.rows);
}

/* The parse of a batch: threads claim the next item while the parsed ones hold little. */
typedef struct parse_run {
	item *items;
	size_t end;
	uint64_t cap;
	atomic_size_t next;               /* the next item to claim */
	atomic_uint_fast64_t held;        /* what the items parsed so far hold */
} parse_run;

/*
 * Each thread makes the function names of the captures it parses with a
 * memo of its own (profile_names): a batch holds a few services' captures,
 * whose names repeat from one capture to the next.
 */
static void *parse_worker(void *arg)
{
	parse_run *pr = arg;
	profile_names *names = profile_names_new(), *was = profile_names_use(names);
	size_t i = atomic_load(&pr->next);

	while (i < pr->end && atomic_load(&pr->held) <= pr->cap) {
		/* Claimed in order, so the items parsed are always the ones before `next`. */
		if (!atomic_compare_exchange_weak(&pr->next, &i, i + 1))
			continue;
		if (pr->items[i].next == ST_PARSE)
			item_parse(&pr->items[i]);
		atomic_fetch_add(&pr->held, item_mem(&pr->items[i]));
		i = atomic_load(&pr->next);
	}
	profile_names_use(was);
	profile_names_free(names);
	return NULL;
}

/*
 * Parse the items from b->parsed on, on b->jobs threads, until the parsed
 * ones hold more than b->mem_cap; ingest_batch_store stores them and
 * parses the next. Each parse is bounded, but a batch is 64 of them:
 * parsed all at once and held until stored, 19 gzipped files of 1.2 MB
 * (300,000 functions each) took 2.5 GB. An item is claimed only while
 * the cap is not reached, so at most `jobs` parses run past it, as when
 * the items were parsed `jobs` at a time; but the threads start once for
 * the lot, where starting them for every `jobs` items cost a thread start
 * and a wait for the slowest of them each time (64 files of 100 KB:
 * 32 starts).
 */
static void parse_some(ingest_batch *b)
{
	parse_run pr = {b->items, b->stop, b->mem_cap, b->parsed, 0};

	if (b->parsed < b->stop)
		run_workers(b->stop - b->parsed, b->jobs, parse_worker, &pr);
	b->parsed = atomic_load(&pr.next);
	b->stop = first_stop(b->items, b->stop);
}

ingest_batch *ingest_batch_prepare(ingest_result *outs, pr_error *errs, db *d,
				   const ingest_request *reqs, size_t n,
				   const profile_limits *lim, unsigned jobs)
{
	ingest_batch *b = calloc(1, sizeof(*b));
	item *items;

	for (size_t i = 0; i < n; i++) {
		memset(&outs[i], 0, sizeof(outs[i]));
		pr_error_clear(&errs[i]);
	}
	if (!b || !(b->items = calloc(n ? n : 1, sizeof(*b->items))) ||
	    !(b->svcs = calloc(n ? n : 1, sizeof(*b->svcs)))) {
		if (b)
			free(b->items);
		free(b);
		return NULL;
	}
	items = b->items;
	b->n = b->stop = n;
	/* Every caller's metadata is checked here, whatever path it came by. */
	for (size_t i = 0; i < b->stop; i++) {
		item *it = &items[i];
		it->req = &reqs[i];
		it->name = reqs[i].display ? reqs[i].display : reqs[i].path;
		it->out = &outs[i];
		it->lim = lim;
		it->next = ST_DONE;
		if ((it->rc = ingest_validate(it->req, &it->e)) < 0)
			continue;
		if ((it->rc = batch_service(&it->svc, d, b->svcs, &b->nsvcs, it->req->service,
					    &it->e)) < 0 ||
		    (it->rc = check_service(it->svc, it->req->service, &it->e)) < 0) {
			if (item_failed_infra(it))
				b->stop = i + 1;
			continue;
		}
		it->next = ST_READ;
	}
	run_reads(items, b->stop, jobs);
	b->stop = first_stop(items, b->stop);
	find_stored(b, d);
	b->jobs = jobs ? jobs : 1;
	b->mem_cap = profile_mem_budget(lim);
	parse_some(b);
	return b;
}

/*
 * Items found stored already hold the bytes of a blob a capture rests on:
 * the blob is checked with them, and restored when it is missing or
 * damaged (blob_repair), so ingesting a file again mends its capture's
 * blob. A store that fails to is an item's failure, as a put's would be.
 */
static bool repairable(const item *it)
{
	/* A blob retention removed on purpose is not brought back. */
	return it->next == ST_DONE && it->rc == 0 && it->out->already && it->raw.ptr &&
	       !it->blob_cut;
}

/*
 * Which of the repairable items' captures still rest on their blob, read
 * under the shared lock of their keys (taken in the caller's transaction):
 * retention cuts a capture and then deletes its blob under the exclusive
 * lock, so a capture it cut since find_stored looked is seen cut here, and
 * one it has not cut keeps its blob until the caller commits. Without the
 * lock, a repair put back the blob retention had just deleted, which no
 * capture kept; the next sweeps took it for a restore and held it.
 */
static int still_live(ingest_batch *b, db *d, pr_error *err)
{
	item **its = calloc(b->stop ? b->stop : 1, sizeof(*its));
	int64_t *ids = calloc(b->stop ? b->stop : 1, sizeof(*ids));
	bool *live = calloc(b->stop ? b->stop : 1, sizeof(*live));
	buf keys = BUF_INIT;
	size_t n = 0;
	int rc = 0;

	if (!its || !ids || !live) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < b->stop; i++)
		if (repairable(&b->items[i])) {
			ids[n] = b->items[i].out->capture_id;
			its[n++] = &b->items[i];
		}
	if (n == 0)
		goto out;
	if (keys_literal(&keys, its, n) < 0) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = db_blob_lock_all_shared(d, keys.ptr, err)) < 0 ||
	    (rc = db_capture_blobs_live(d, live, ids, n, err)) < 0)
		goto out;
	for (size_t i = 0; i < n; i++)
		its[i]->blob_cut = !live[i];
out:
	buf_release(&keys);
	free(its);
	free(ids);
	free(live);
	return rc;
}

static void repair_stored(ingest_batch *b, db *d, blob_store *bs)
{
	pr_error e = PR_ERROR_INIT;
	bool any = false;

	for (size_t i = 0; i < b->stop && !any; i++)
		any = repairable(&b->items[i]);
	if (!any)
		return;
	if (db_begin(d, &e) < 0 || still_live(b, d, &e) < 0) {
		/* The database failed: no item is stored or repaired past the first. */
		db_rollback(d);
		for (size_t i = 0; i < b->stop; i++)
			if (repairable(&b->items[i])) {
				b->items[i].rc = pr_error_set(&b->items[i].e, e.code, "%s", e.msg);
				b->items[i].out->already = false;
				b->items[i].out->capture_id = 0;
				b->stop = i + 1;
				break;
			}
		return;
	}
	for (size_t i = 0; i < b->stop; i++) {
		item *it = &b->items[i];
		blob_repair_outcome o = BLOB_REPAIR_INTACT;

		if (!repairable(it))
			continue;
		if ((it->rc = blob_repair(bs, it->out->blob_key, it->raw.ptr, it->raw.len, &o,
					  &it->e)) < 0) {
			it->out->already = false;
			it->out->capture_id = 0;
			b->stop = i + 1;
			break;
		}
		it->out->repaired = o != BLOB_REPAIR_INTACT;
	}
	/* Only locks were taken: the end of the transaction lets them go. */
	db_rollback(d);
}

size_t ingest_batch_store(ingest_batch *b, pr_error *errs, db *d, blob_store *bs)
{
	size_t stop;

	repair_stored(b, d, bs);

	/* What is parsed is stored and freed before the next items are parsed. */
	for (;;) {
		size_t parsed = b->parsed < b->stop ? b->parsed : b->stop;
		stop = parsed;
		store_all(d, bs, b->items, &stop);
		if (stop < parsed)
			break; /* the database, the store or memory failed */
		for (size_t i = 0; i < stop; i++)
			if (b->items[i].next == ST_DONE)
				item_settle(&b->items[i]);
		if (parsed >= b->stop)
			break;
		parse_some(b);
	}
	for (size_t i = 0; i < stop; i++)
		item_finish(&b->items[i], &errs[i]);
	ingest_batch_free(b);
	return stop;
}

size_t ingest_files(ingest_result *outs, pr_error *errs, db *d, blob_store *bs,
		    const ingest_request *reqs, size_t n, const profile_limits *lim,
		    unsigned jobs)
{
	ingest_batch *b;

	if (n == 0)
		return 0;
	if (!(b = ingest_batch_prepare(outs, errs, d, reqs, n, lim, jobs))) {
		pr_error_set(&errs[0], PR_ENOMEM, "cannot ingest '%s': out of memory",
			     reqs[0].display ? reqs[0].display : reqs[0].path);
		outs[0].infra = true;
		return 1;
	}
	return ingest_batch_store(b, errs, d, bs);
}

int ingest_file(ingest_result *out, db *d, blob_store *bs,
		const ingest_request *req, const profile_limits *lim,
		pr_error *err)
{
	pr_error e = PR_ERROR_INIT;

	ingest_files(out, &e, d, bs, req, 1, lim, 1);
	if (e.code)
		return pr_error_set(err, e.code, "%s", e.msg);
	return 0;
}
