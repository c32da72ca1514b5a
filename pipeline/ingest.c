/*
 * ingest.c: file -> blob + index rows (see ingest.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "pipeline/ingest.h"
#include "pipeline/format.h"
#include "common/fileio.h"
#include "common/timeutil.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
	return 0;
}

static int check_commit(const char *s, pr_error *err)
{
	size_t n = strlen(s);

	if (n < 4 || n > 64)
		return pr_error_set(err, PR_EUSAGE,
				    "commit '%.64s' is not a hex SHA (4 to 64 hex digits)", s);
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return pr_error_set(err, PR_EUSAGE,
					    "commit '%.64s' is not a hex SHA (4 to 64 hex digits)",
					    s);
	return 0;
}

int ingest_check_tag(const char *key, const char *value, pr_error *err)
{
	size_t n = strlen(key);
	char what[INGEST_TAG_KEY_MAX + 32];

	if (n == 0 || n > INGEST_TAG_KEY_MAX)
		return pr_error_set(err, PR_EUSAGE, "tag key '%.64s' must be 1 to %d bytes long",
				    key, INGEST_TAG_KEY_MAX);
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)key[i]) && !strchr("_.-", key[i]))
			return pr_error_set(err, PR_EUSAGE,
					    "tag key '%.64s' has characters other "
					    "than letters, digits, "
					    "'_', '.' and '-'", key);
	snprintf(what, sizeof(what), "the value of tag '%s'", key);
	return ingest_check_text(what, value, err);
}

/* Tags as JSON text: an object whose members all pass ingest_check_tag. */
static int check_tags(const char *tags_json, pr_error *err)
{
	json_error_t jerr;
	json_t *tags = json_loads(tags_json, JSON_REJECT_DUPLICATES, &jerr), *v;
	const char *key;
	int rc = 0;

	if (!tags || !json_is_object(tags)) {
		rc = pr_error_set(err, PR_EUSAGE, "the tags are not a JSON object");
		goto out;
	}
	json_object_foreach(tags, key, v) {
		if (!json_is_string(v)) {
			rc = pr_error_set(err, PR_EUSAGE, "tag '%.64s' must be a string", key);
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
				    "unknown profile type '%.32s' (cpu, heap, "
				    "alloc, wall, goroutine)", r->type);
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

/* "path" of a manifest line, resolved against the manifest's folder (dir). */
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
	if (path[0] == '/' || strcmp(path, "-") == 0 || !dir)
		rc = buf_puts(&b, path);
	else
		rc = buf_printf(&b, "%s/%s", dir, path);
	if (rc < 0 || !(*out = buf_detach(&b, NULL)))
		return pr_error_set(err, PR_ENOMEM, "%s: out of memory", name);
	return 0;
}

/* "tags": an object of strings, kept as compact JSON with sorted keys. */
static int json_tags(char **out, json_t *obj, const char *name, pr_error *err)
{
	json_t *v = json_object_get(obj, "tags"), *tv;
	const char *key;

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_object(v))
		return pr_error_set(err, PR_EDATA, "%s: \"tags\" must be an object", name);
	json_object_foreach(v, key, tv)
		if (!json_is_string(tv))
			return pr_error_set(err, PR_EDATA, "%s: tag '%.64s' must be a string", name,
					    key);
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
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (len > INGEST_JSON_MAX) {
		rc = pr_error_set(err, PR_EDATA, "%s: longer than %d bytes", name, INGEST_JSON_MAX);
		goto out;
	}
	if (!(out->json = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr))) {
		rc = pr_error_set(err, PR_EDATA, "%s: invalid JSON at column %d: %s", name,
				  jerr.column, jerr.text);
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
			rc = pr_error_set(err, PR_EDATA, "%s: unknown key \"%.64s\"", name, key);
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
		rc = pr_error_set(err, PR_EDATA, "%s: \"time\" '%.40s' is not an ISO 8601 time",
				  name, time);
		goto out;
	}
	if (fmt && profile_format_from_name(&req->format, fmt) < 0) {
		rc = pr_error_set(err, PR_EDATA,
				  "%s: unknown \"format\" '%.32s' "
				  "(pprof, folded, v8, perf)", name, fmt);
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

static int check_service(db *d, db_service *svc, const char *name, pr_error *err)
{
	int rc;

	if ((rc = db_service_get(d, svc, name, err)) < 0)
		return rc;
	if (!svc->enabled)
		return pr_error_set(err, PR_EREFUSED,
				    "service '%s' is not enabled for profiling (run "
				    "'profreg service enable %s')",
				    name, name);
	return 0;
}

static int64_t capture_time(const ingest_request *req, const profile *p)
{
	struct stat st;

	if (req->time_us)
		return req->time_us;
	if (p->time_ns > 0)
		return p->time_ns / 1000;
	/* Collectors drop files as they capture them: mtime is the best guess. */
	if (strcmp(req->path, "-") != 0 && stat(req->path, &st) == 0)
		return (int64_t)st.st_mtim.tv_sec * 1000000 + st.st_mtim.tv_nsec / 1000;
	return time_now_us();
}

/* Error codes that say the input or the request was at fault, not the store. */
static bool input_code(int code)
{
	return code == PR_EUSAGE || code == PR_EDATA || code == PR_ELIMIT ||
	       code == PR_ENOTFOUND || code == PR_EEXISTS || code == PR_EREFUSED;
}

/*
 * Write the blob and the capture's rows in one transaction. The blob is
 * written under a shared lock on its key, held until the row that keeps
 * it commits: retention deletes a file only under the exclusive lock and
 * after checking that no row keeps it.
 */
static int store(ingest_result *out, db *d, blob_store *bs, const db_capture *meta,
		 const profile *p, const profile_summary *sum, const buf *raw, pr_error *err)
{
	char object[64], detail[256];
	bool in_tx = false;
	int rc;

	if ((rc = db_begin(d, err)) < 0)
		goto out;
	in_tx = true;
	if ((rc = db_blob_lock(d, out->blob_key, false, err)) < 0 ||
	    (rc = blob_put(bs, out->blob_key, raw->ptr, raw->len, NULL, err)) < 0 ||
	    (rc = db_capture_insert(d, &out->capture_id, meta, p, sum, err)) < 0)
		goto out;
	snprintf(object, sizeof(object), "capture:%lld", (long long)out->capture_id);
	snprintf(detail, sizeof(detail), "{\"service\":\"%s\",\"blob_key\":\"%s\",\"bytes\":%zu}",
		 meta->service, out->blob_key, raw->len);
	if ((rc = db_audit(d, "ingest", object, detail, err)) < 0 ||
	    (rc = db_commit(d, err)) < 0)
		goto out;
	in_tx = false;
out:
	if (in_tx)
		db_rollback(d);
	return rc;
}

int ingest_file(ingest_result *out, db *d, blob_store *bs,
		const ingest_request *req, const profile_limits *lim,
		pr_error *err)
{
	const char *name = req->display ? req->display : req->path;
	pr_error e = PR_ERROR_INIT; /* the reason, before the file is named */
	db_service svc = {0};
	db_capture meta = {0};
	profile *p = NULL;
	profile_summary sum = {0};
	buf raw = BUF_INIT;
	const char *type;
	bool named = false;      /* e names the file already (reading and parsing it) */
	bool input_read = false; /* the file itself could not be read */
	int64_t found;
	int rc;

	memset(out, 0, sizeof(*out));
	/* Every caller's metadata is checked here, whatever path it came by. */
	if ((rc = ingest_validate(req, &e)) < 0)
		goto out;
	if ((rc = check_service(d, &svc, req->service, &e)) < 0)
		goto out;
	if ((rc = fileio_read(&raw, req->path, lim->max_input_bytes, &e)) < 0) {
		named = true;
		input_read = rc != PR_ENOMEM;
		goto out;
	}
	out->bytes = raw.len;
	blob_key_of(out->blob_key, raw.ptr, raw.len);

	rc = db_capture_find(d, &found, svc.id, out->blob_key, &e);
	if (rc == 0) {
		out->already = true;
		out->capture_id = found;
		goto out;
	}
	if (rc != PR_ENOTFOUND)
		goto out;
	pr_error_clear(&e);

	named = true;
	if ((rc = format_parse(&p, (const uint8_t *)raw.ptr, raw.len, req->format,
			       name, lim, &e)) < 0)
		goto out;
	type = profile_pick_primary(p, req->type);
	if ((rc = profile_summarize(&sum, p, p->primary, &e)) < 0)
		goto out;
	named = false;

	meta.service_id = svc.id;
	meta.service = svc.name;
	meta.profile_type = (char *)type;
	meta.release = (char *)req->release;
	meta.commit_sha = (char *)req->commit;
	meta.host = (char *)req->host;
	meta.captured_at_us = capture_time(req, p);
	meta.duration_ns = p->duration_ns;
	meta.period = p->period;
	meta.period_type = p->period_type.type;
	meta.period_unit = p->period_type.unit;
	meta.value_type = p->value_types[p->primary].type;
	meta.value_unit = p->value_types[p->primary].unit;
	meta.total_value = sum.total;
	meta.sample_count = sum.sample_count;
	meta.function_count = (int32_t)sum.nrows;
	meta.blob_key = out->blob_key;
	meta.blob_bytes = (int64_t)raw.len;
	meta.format = (char *)profile_format_name(p->format);
	meta.retention_class = (char *)"hot";
	meta.tags_json = (char *)(req->tags_json ? req->tags_json : "{}");

	rc = store(out, d, bs, &meta, p, &sum, &raw, &e);
	if (rc == PR_EEXISTS) {
		/*
		 * An ingest of the same bytes committed between our look-up and
		 * our insert: the unique key made us wait for it, and its row is
		 * the one these bytes have. Same answer as the look-up above.
		 */
		pr_error lost = e;
		pr_error_clear(&e);
		rc = db_capture_find(d, &found, svc.id, out->blob_key, &e);
		if (rc == 0) {
			out->already = true;
			out->capture_id = found;
			goto out;
		}
		if (rc == PR_ENOTFOUND) {
			rc = PR_EEXISTS;
			e = lost;
		}
		goto out;
	}
	if (rc < 0)
		goto out;

	snprintf(out->type, sizeof(out->type), "%s", type);
	snprintf(out->format, sizeof(out->format), "%s", meta.format);
	out->total = sum.total;
	out->sample_count = sum.sample_count;
	out->nfunctions = sum.nrows;
	out->utf8_replaced = p->utf8_replaced;
out:
	if (rc < 0) {
		out->capture_id = 0;
		out->infra = !input_code(rc) && !input_read;
		if (named)
			pr_error_set(err, rc, "%s", e.msg);
		else
			pr_error_set(err, rc, "cannot ingest '%s': %s", name, e.msg);
	}
	profile_summary_release(&sum);
	profile_free(p);
	buf_release(&raw);
	db_service_release(&svc);
	return rc;
}
