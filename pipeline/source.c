/*
 * source.c: collecting captures from a drop folder (see source.h).
 */
#define _GNU_SOURCE /* memfd_create */
#include "pipeline/source.h"
#include "common/buf.h"
#include "common/fileio.h"
#include "common/redact.h"
#include "common/wipe.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

void source_report_release(source_report *r)
{
	free(r->first_error);
	for (size_t i = 0; i < r->nerrors; i++)
		free(r->errors[i]);
	free(r->errors);
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

/* Cut what may be personal data from a message that names a dropped file (redact_names). */
static void clean(char *msg)
{
	msg[redact_names(msg, strlen(msg))] = '\0';
}

/*
 * A file's failure: its message names the file, and whoever writes to the
 * folder names those ("pay-4111...-jane@example.com.folded"): kept clean.
 */
static void failed(source_report *r, char *msg)
{
	size_t n = r->nerrors;

	clean(msg);
	r->failed++;
	if (!r->first_error)
		r->first_error = strdup(msg);
	/* The list doubles when its length reaches a power of two. */
	if ((n & (n - 1)) == 0) {
		char **grown = realloc(r->errors, (n ? 2 * n : 1) * sizeof(*grown));
		if (!grown)
			return;
		r->errors = grown;
	}
	if ((r->errors[n] = strdup(msg)))
		r->nerrors++;
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
	/*
	 * A sidecar is small; a FIFO or a huge file must not stall the run. A
	 * link is left to fileio_read_file, which refuses it whatever it points
	 * to: following it here would tell the folder's writer whether its
	 * target exists and what it is.
	 */
	if (lstat(side, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))) {
		rc = pr_error_set(err, PR_EDATA, "%s: not a regular file", name.ptr);
		goto out;
	}
	if ((rc = fileio_read_file(&text, side, INGEST_JSON_MAX, &rerr)) < 0) {
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
		/*
		 * Whoever writes to the folder could plant a link to a file only
		 * profreg may read: links are refused, never followed (and the
		 * reads below refuse one that appears after this look).
		 */
		if (lstat(path.ptr, &st) < 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			pr_error_set(&ferr, PR_EDATA, "cannot read '%s': a symbolic link, which "
				     "is not followed here", path.ptr);
			failed(out, ferr.msg);
			continue;
		}
		/*
		 * A folder, FIFO or device under a profile's name: with a
		 * sidecar beside it, someone meant it as a drop, and is told
		 * (it was skipped without a word); without one, it is not ours.
		 */
		if (!S_ISREG(st.st_mode)) {
			struct stat sst;
			if (lstat(side.ptr, &sst) == 0) {
				pr_error_set(&ferr, PR_EDATA, "cannot read '%s': %s, not a file",
					     path.ptr,
					     S_ISDIR(st.st_mode)    ? "a folder"
					     : S_ISFIFO(st.st_mode) ? "a FIFO"
					     : S_ISSOCK(st.st_mode) ? "a socket"
								    : "a device");
				failed(out, ferr.msg);
			}
			continue;
		}
		if (lstat(side.ptr, &st) < 0) {
			out->waiting++;
			continue;
		}
		if (read_sidecar(&desc, side.ptr, path.ptr, service, &ferr) == 0) {
			desc.req.file_only = true;
			ingest_file(&res, d, bs, &desc.req, lim, &ferr);
		}
		ingest_desc_release(&desc);
		if (res.infra || ferr.code == PR_ENOMEM) {
			/* The database, the store or memory failed, not the file: stop here. */
			clean(ferr.msg);
			rc = pr_error_set(err, ferr.code, "stopped at file %zu of %zu in '%s': %s",
					  i + 1, n, dir, ferr.msg);
			goto out;
		}
		if (ferr.code)
			failed(out, ferr.msg);
		else if (res.retention_deleted)
			out->deleted++;
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

/* ---- drops in a store that is not a folder ------------------------------ */

static int name_find(char *const *names, size_t n, const char *name)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(names[mid], name);
		if (c == 0)
			return 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* A sidecar object into a request, with the folder's words and checks. */
static int read_drop_sidecar(ingest_desc *out, const source_drops *src, const char *object,
			     const char *shown_profile, const char *service, pr_error *err)
{
	ingest_json_source js = {NULL, NULL, shown_profile, service};
	pr_error rerr = PR_ERROR_INIT;
	buf name = BUF_INIT, text = BUF_INIT;
	int rc;

	memset(out, 0, sizeof(*out));
	if (buf_printf(&name, "sidecar '%s/%s'", src->name, object) < 0) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = src->read(src->ctx, &text, object, INGEST_JSON_MAX, &rerr)) < 0) {
		if (rc == PR_ELIMIT)
			rc = pr_error_set(err, PR_EDATA, "%s: longer than %d bytes", name.ptr,
					  INGEST_JSON_MAX);
		else
			rc = pr_error_set(err, rc == PR_ENOMEM ? rc : PR_EDATA, "%s: %s", name.ptr,
					  rerr.msg);
		goto out;
	}
	js.name = name.ptr;
	rc = ingest_request_from_json(out, text.ptr, text.len, &js, err);
out:
	buf_release(&name);
	buf_release(&text);
	return rc;
}

int source_collect_drops(source_report *out, db *d, blob_store *bs, const char *service,
			 const source_drops *src, const profile_limits *lim, pr_error *err)
{
	char **names = NULL;
	size_t n = 0, nprof = 0, k = 0;
	buf side = BUF_INIT, shown = BUF_INIT, data = BUF_INIT;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = src->list(src->ctx, &names, &n, err)) < 0)
		goto out;
	if (n)
		qsort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 0; i < n; i++)
		if (names[i][0] != '.' && !ends_with(names[i], ".json"))
			nprof++;
	for (size_t i = 0; i < n; i++) {
		ingest_desc desc = {0};
		ingest_result res = {0};
		pr_error ferr = PR_ERROR_INIT;

		if (names[i][0] == '.' || ends_with(names[i], ".json"))
			continue;
		k++;
		buf_reset(&side);
		buf_reset(&shown);
		if (buf_printf(&side, "%s.json", names[i]) < 0 ||
		    buf_printf(&shown, "%s/%s", src->name, names[i]) < 0) {
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
			goto out;
		}
		if (!name_find(names, n, side.ptr)) {
			out->waiting++;
			continue;
		}
		if (read_drop_sidecar(&desc, src, side.ptr, shown.ptr, service, &ferr) == 0) {
			int r = src->read(src->ctx, &data, names[i], lim->max_input_bytes, &ferr);
			if (r == PR_ELIMIT) {
				pr_error_clear(&ferr);
				pr_error_set(&ferr, PR_ELIMIT, "cannot read '%s': larger than the "
					     "input limit of %zu bytes", shown.ptr,
					     (size_t)lim->max_input_bytes);
			} else if (r == 0) {
				desc.req.display = shown.ptr;
				source_ingest_bytes(&res, d, bs, &desc.req, data.ptr, data.len, lim,
						    &ferr);
			}
			buf_release(&data);
		}
		ingest_desc_release(&desc);
		if (res.infra || ferr.code == PR_ENOMEM) {
			clean(ferr.msg);
			rc = pr_error_set(err, ferr.code,
					  "stopped at object %zu of %zu in '%s': %s", k, nprof,
					  src->name, ferr.msg);
			goto out;
		}
		if (ferr.code)
			failed(out, ferr.msg);
		else if (res.retention_deleted)
			out->deleted++;
		else if (res.already)
			out->already++;
		else
			out->stored++;
	}
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	buf_release(&side);
	buf_release(&shown);
	buf_release(&data);
	return rc;
}

const char *source_drop_name_refused(const char *name)
{
	size_t n = strlen(name);
	const char *seg = name;

	if (n > INGEST_PATH_MAX)
		return "longer than 1024 bytes";
	if (name[0] == '/')
		return "an absolute path";
	for (const char *c = name; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return "a control character";
		else if (*c == '\\')
			return "a backslash";
	for (const char *c = name;; c++) {
		if (*c == '/' || !*c) {
			size_t len = (size_t)(c - seg);
			if (len == 0)
				return "an empty path segment";
			if ((len == 1 && seg[0] == '.') ||
			    (len == 2 && seg[0] == '.' && seg[1] == '.'))
				return "a '.' or '..' path segment";
			if (!*c)
				break;
			seg = c + 1;
		}
	}
	return NULL;
}

/* ---- bytes from the network --------------------------------------------- */

int source_ingest_bytes(ingest_result *out, db *d, blob_store *bs, const ingest_request *req,
			const void *data, size_t len, const profile_limits *lim, pr_error *err)
{
	const char *name = req->display ? req->display : "(fetched profile)";
	ingest_request r = *req;
	char path[64];
	const char *p = data;
	size_t left = len;
	int fd, rc;

	memset(out, 0, sizeof(*out));
	/* An anonymous file in memory: the payload never touches the disk. */
	if ((fd = memfd_create("profreg-fetched", MFD_CLOEXEC)) < 0) {
		out->infra = true;
		return pr_error_set(err, errno == ENOMEM ? PR_ENOMEM : PR_EIO,
				    "cannot ingest '%s': cannot hold it in memory: %s", name,
				    strerror(errno));
	}
	while (left) {
		ssize_t w = write(fd, p, left);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = pr_error_set(err, PR_ENOMEM, "cannot ingest '%s': cannot hold it in "
					  "memory: %s", name, strerror(errno));
			out->infra = true;
			goto out;
		}
		p += w;
		left -= (size_t)w;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r.path = path;
	r.display = name;
	rc = ingest_file(out, d, bs, &r, lim, err);
out:
	close(fd);
	return rc;
}

void source_fetched_init(source_fetched *f)
{
	memset(f, 0, sizeof(*f));
	f->retry_after_ms = -1;
}

void source_fetched_release(source_fetched *f)
{
	wipe_mem(f->body.ptr, f->body.len);
	buf_release(&f->body);
	source_fetched_init(f);
}

void source_body_hint(char *out, size_t n, const buf *body)
{
	size_t line = 0;

	if (!n)
		return;
	out[0] = '\0';
	if (!body->len || memchr(body->ptr, '\0', body->len < 64 ? body->len : 64))
		return;
	while (line < body->len && body->ptr[line] != '\n' && body->ptr[line] != '\r')
		line++;
	/* A service's error page may echo the request or its data back: words only. */
	redact_excerpt(out, n, body->ptr, line);
}
