/*
 * source.c: collecting captures from a drop folder (see source.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "source.h"
#include "../common/buf.h"
#include "../common/fileio.h"
#include "../common/timeutil.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SIDECAR_MAX (64 * 1024)

void source_report_release(source_report *r)
{
	free(r->first_error);
	memset(r, 0, sizeof(*r));
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void failed(source_report *r, const char *msg)
{
	r->failed++;
	if (!r->first_error)
		r->first_error = strdup(msg);
}

static const char *opt_string(json_t *obj, const char *key, bool *bad)
{
	json_t *v = json_object_get(obj, key);

	if (!v || json_is_null(v))
		return NULL;
	if (!json_is_string(v)) {
		*bad = true;
		return NULL;
	}
	return json_string_value(v);
}

/* Read F.json into a request; strings stay owned by *meta. */
static int read_sidecar(ingest_request *req, json_t **meta, char **tags, const char *sidecar,
			pr_error *err)
{
	static const char *const known[] = {"release", "commit", "host", "time", "type", "tags",
					    "format", NULL};
	json_error_t jerr;
	const char *key, *time, *fmt;
	json_t *v;
	bool bad = false;

	{
		/* A sidecar is small; a FIFO or a huge file must not stall the run. */
		struct stat st;
		buf text = BUF_INIT;
		int rc;
		if (stat(sidecar, &st) < 0 || !S_ISREG(st.st_mode))
			return pr_error_set(err, PR_EDATA, "sidecar '%s' is not a regular file", sidecar);
		if ((rc = fileio_read(&text, sidecar, SIDECAR_MAX, err)) < 0)
			return rc == PR_ELIMIT ? PR_EDATA : rc;
		*meta = json_loadb(text.ptr, text.len, JSON_REJECT_DUPLICATES, &jerr);
		buf_release(&text);
	}
	if (!*meta)
		return pr_error_set(err, PR_EDATA, "cannot read sidecar '%s': %s", sidecar, jerr.text);
	if (!json_is_object(*meta))
		return pr_error_set(err, PR_EDATA, "sidecar '%s': not a JSON object", sidecar);
	json_object_foreach(*meta, key, v) {
		size_t k;
		for (k = 0; known[k] && strcmp(known[k], key) != 0; k++)
			;
		if (!known[k])
			return pr_error_set(err, PR_EDATA, "sidecar '%s': unknown key \"%.64s\"", sidecar, key);
	}
	req->release = opt_string(*meta, "release", &bad);
	req->commit = opt_string(*meta, "commit", &bad);
	req->host = opt_string(*meta, "host", &bad);
	req->type = opt_string(*meta, "type", &bad);
	time = opt_string(*meta, "time", &bad);
	fmt = opt_string(*meta, "format", &bad);
	if (bad)
		return pr_error_set(err, PR_EDATA, "sidecar '%s': values must be strings", sidecar);
	if (!req->release)
		return pr_error_set(err, PR_EDATA, "sidecar '%s': missing \"release\"", sidecar);
	if (time && time_parse(&req->time_us, time) < 0)
		return pr_error_set(err, PR_EDATA, "sidecar '%s': \"time\" is not ISO 8601", sidecar);
	if (fmt && profile_format_from_name(&req->format, fmt) < 0)
		return pr_error_set(err, PR_EDATA, "sidecar '%s': unknown \"format\"", sidecar);
	v = json_object_get(*meta, "tags");
	if (v && !json_is_null(v)) {
		const char *tk;
		json_t *tv;
		if (!json_is_object(v))
			return pr_error_set(err, PR_EDATA, "sidecar '%s': \"tags\" must be an object", sidecar);
		json_object_foreach(v, tk, tv)
			if (!json_is_string(tv) || strlen(tk) > 64 || strlen(json_string_value(tv)) > 256)
				return pr_error_set(err, PR_EDATA, "sidecar '%s': tags must be short strings", sidecar);
		if (!(*tags = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS)))
			return pr_error_set(err, PR_ENOMEM, "out of memory");
		req->tags_json = *tags;
	}
	return 0;
}

/* Names of the regular files in dir that are not sidecars, sorted. */
static int list_profiles(char ***out, size_t *n, const char *dir, pr_error *err)
{
	DIR *dh = opendir(dir);
	struct dirent *e;
	size_t cap = 0;
	char **names = NULL;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (!dh)
		return pr_error_set(err, PR_EIO, "cannot read source folder '%s': %s", dir, strerror(errno));
	while ((e = readdir(dh))) {
		if (e->d_name[0] == '.' || ends_with(e->d_name, ".json"))
			continue;
		if (*n == cap) {
			char **nn = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*nn));
			if (!nn) {
				rc = pr_error_set(err, PR_ENOMEM, "out of memory");
				goto out;
			}
			names = nn;
		}
		if (!(names[*n] = strdup(e->d_name))) {
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
			goto out;
		}
		(*n)++;
	}
	if (*n)
		qsort(names, *n, sizeof(*names), name_cmp);
out:
	closedir(dh);
	*out = names;
	return rc;
}

int source_collect_dir(source_report *out, db *d, blob_store *bs, const char *service,
		       const char *dir, const profile_limits *lim, pr_error *err)
{
	char **names = NULL;
	size_t n = 0;
	buf path = BUF_INIT, side = BUF_INIT;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = list_profiles(&names, &n, dir, err)) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		ingest_request req = {0};
		ingest_result res;
		pr_error ferr = PR_ERROR_INIT;
		json_t *meta = NULL;
		char *tags = NULL;
		struct stat st;

		buf_reset(&path);
		buf_reset(&side);
		if (buf_printf(&path, "%s/%s", dir, names[i]) < 0 ||
		    buf_printf(&side, "%s/%s.json", dir, names[i]) < 0) {
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
			goto out;
		}
		if (stat(path.ptr, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (stat(side.ptr, &st) < 0) {
			out->waiting++;
			continue;
		}
		req.path = path.ptr;
		req.service = service;
		if (read_sidecar(&req, &meta, &tags, side.ptr, &ferr) == 0)
			ingest_file(&res, d, bs, &req, lim, &ferr);
		json_decref(meta);
		free(tags);
		if (ferr.code == PR_EDB || ferr.code == PR_ENOMEM) {
			/* The database or memory failed, not the file: stop here. */
			rc = pr_error_set(err, ferr.code, "%s", ferr.msg);
			goto out;
		}
		if (ferr.code)
			failed(out, ferr.msg);
		else if (res.already)
			out->already++;
		else
			out->stored++;
	}
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	buf_release(&path);
	buf_release(&side);
	return rc;
}
