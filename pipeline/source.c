/*
 * source.c: collecting captures from a drop folder (see source.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "pipeline/source.h"
#include "common/buf.h"
#include "common/fileio.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/*
 * Read sidecar `side` of profile `path` into a request: the same checks
 * and the same words as a manifest line, every message naming the sidecar.
 */
static int read_sidecar(ingest_desc *out, const char *side, const char *path,
			const char *service, pr_error *err)
{
	ingest_json_source src = {NULL, NULL, path, service};
	pr_error rerr = PR_ERROR_INIT;
	buf name = BUF_INIT, text = BUF_INIT;
	struct stat st;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = buf_printf(&name, "sidecar '%s'", side)) < 0) {
		rc = pr_error_set(err, PR_ENOMEM, "cannot read sidecar '%s': out of memory", side);
		goto out;
	}
	/* A sidecar is small; a FIFO or a huge file must not stall the run. */
	if (stat(side, &st) < 0 || !S_ISREG(st.st_mode)) {
		rc = pr_error_set(err, PR_EDATA, "%s: not a regular file", name.ptr);
		goto out;
	}
	if ((rc = fileio_read(&text, side, INGEST_JSON_MAX, &rerr)) < 0) {
		if (rc == PR_ELIMIT)
			rc = pr_error_set(err, PR_EDATA, "%s: longer than %d bytes", name.ptr,
					  INGEST_JSON_MAX);
		else
			rc = pr_error_set(err, rc, "%s", rerr.msg);
		goto out;
	}
	src.name = name.ptr;
	rc = ingest_request_from_json(out, text.ptr, text.len, &src, err);
out:
	buf_release(&name);
	buf_release(&text);
	return rc;
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
		return pr_error_set(err, PR_EIO, "cannot read source folder '%s': %s", dir,
				    strerror(errno));
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
		ingest_desc desc = {0};
		ingest_result res = {0};
		pr_error ferr = PR_ERROR_INIT;
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
		if (read_sidecar(&desc, side.ptr, path.ptr, service, &ferr) == 0)
			ingest_file(&res, d, bs, &desc.req, lim, &ferr);
		ingest_desc_release(&desc);
		if (res.infra || ferr.code == PR_ENOMEM) {
			/* The database, the store or memory failed, not the file: stop here. */
			rc = pr_error_set(err, ferr.code, "stopped at file %zu of %zu in '%s': %s",
					  i + 1, n, dir, ferr.msg);
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
