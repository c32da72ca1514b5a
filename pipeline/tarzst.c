/*
 * tarzst.c: .tar.zst archives in memory through libarchive (see tarzst.h).
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include "pipeline/tarzst.h"
#include "common/redact.h"
#include "common/strmap.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Names a tar member may have: no longer than a path may be. */
#define PATH_MAX_LEN 1024

int tarzst_path_plain(const char *path)
{
	const char *p = path;
	size_t len = strlen(path);

	if (len == 0 || len > PATH_MAX_LEN || path[0] == '/')
		return 0;
	while (*p) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		if (n == 0 && e) /* "a//b" */
			return 0;
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f || p[i] == '\\')
				return 0;
		p += n;
		if (*p == '/')
			p++;
	}
	return 1;
}

/*
 * A member's name for an error message. Whoever wrote the archive chose
 * it, so it is quoted as any input is (redact.h): a name that could hold
 * payment data or a secret is given by its length.
 */
#define QUOTE_MAX 64
static const char *quote(char out[QUOTE_MAX], const char *s, size_t n)
{
	return redact_excerpt(out, QUOTE_MAX, s, n);
}

/* Where libarchive writes: a buffer that refuses to grow past its cap. */
typedef struct sink {
	buf *b;
	bool over;
} sink;

static la_ssize_t sink_write(struct archive *a, void *arg, const void *data, size_t len)
{
	sink *s = arg;

	if (buf_put(s->b, data, len) < 0) {
		s->over = true;
		archive_set_error(a, ENOSPC, "larger than the cap");
		return -1;
	}
	return (la_ssize_t)len;
}

int tarzst_write(buf *out, const tarzst_member *m, size_t n, int64_t mtime, size_t max,
		 pr_error *err)
{
	struct archive *a = NULL;
	struct archive_entry *e = NULL;
	sink s = {out, false};
	int rc = 0;

	buf_release(out);
	out->max = max;
	for (size_t i = 0; i < n; i++)
		if (!tarzst_path_plain(m[i].path))
			return pr_error_set(err, PR_EUSAGE, "cannot archive '%s': not a plain "
					    "relative name", m[i].path);
	if (!(a = archive_write_new()) || !(e = archive_entry_new())) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
	    archive_write_add_filter_zstd(a) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(a, 1) != ARCHIVE_OK ||
	    archive_write_open2(a, &s, NULL, sink_write, NULL, NULL) != ARCHIVE_OK) {
		rc = pr_error_set(err, PR_ERR, "cannot start a tar.zst archive: %s",
				  archive_error_string(a) ? archive_error_string(a) : "libarchive");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		archive_entry_clear(e);
		archive_entry_set_pathname(e, m[i].path);
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_perm(e, 0600);
		archive_entry_set_uid(e, 0);
		archive_entry_set_gid(e, 0);
		archive_entry_set_size(e, (la_int64_t)m[i].len);
		archive_entry_set_mtime(e, (time_t)mtime, 0);
		if (archive_write_header(a, e) != ARCHIVE_OK ||
		    (m[i].len &&
		     archive_write_data(a, m[i].data, m[i].len) != (la_ssize_t)m[i].len))
			goto failed;
	}
	if (archive_write_close(a) != ARCHIVE_OK)
		goto failed;
	goto out;
failed:
	if (s.over)
		rc = pr_error_set(err, PR_ELIMIT, "the archive would be larger than %zu bytes",
				  max);
	else
		rc = pr_error_set(err, PR_ERR, "cannot write the tar.zst archive: %s",
				  archive_error_string(a) ? archive_error_string(a) : "libarchive");
out:
	archive_entry_free(e);
	if (a)
		archive_write_free(a);
	if (rc < 0)
		buf_release(out);
	out->max = SIZE_MAX;
	return rc;
}

static int open_read(struct archive **out, const void *data, size_t len, const char *name,
		     pr_error *err)
{
	struct archive *a = archive_read_new();

	*out = NULL;
	if (!a)
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	if (archive_read_support_filter_zstd(a) != ARCHIVE_OK ||
	    archive_read_support_format_tar(a) != ARCHIVE_OK) {
		archive_read_free(a);
		return pr_error_set(err, PR_ERR, "cannot read '%s': libarchive lacks zstd or tar",
				    name);
	}
	if (archive_read_open_memory(a, data, len) != ARCHIVE_OK) {
		int rc = pr_error_set(err, PR_EDATA, "cannot read '%s': not a tar.zst archive (%s)",
				      name, archive_error_string(a) ? archive_error_string(a)
								    : "unrecognised");
		archive_read_free(a);
		return rc;
	}
	*out = a;
	return 0;
}

/* What a name already stands for in an archive being read. */
enum { SEEN_FILE = 1, SEEN_FOLDER = 2 };

/*
 * Record member `path` (a folder when `folder`) and the folders above it;
 * a name given twice, or one that is both a file and a folder ("a" then
 * "a/b"), is PR_EDATA: extracted, one would write over or into the other.
 */
static int note_name(strmap *seen, const char *path, bool folder, const char *name,
		     pr_error *err)
{
	char q[QUOTE_MAX], q2[QUOTE_MAX];
	size_t len = strlen(path);
	uint32_t was;
	int r;

	if (len && path[len - 1] == '/')
		len--; /* "a/": the folder "a" */
	for (size_t i = 1; i < len; i++) {
		if (path[i] != '/')
			continue;
		if ((r = strmap_put(seen, path, i, SEEN_FOLDER, &was, NULL)) < 0)
			return pr_error_set(err, PR_ENOMEM, "out of memory");
		if (was == SEEN_FILE)
			return pr_error_set(err, PR_EDATA,
					    "cannot read '%s': member '%s' is below the file '%s'",
					    name, quote(q, path, len), quote(q2, path, i));
	}
	if ((r = strmap_put(seen, path, len, folder ? SEEN_FOLDER : SEEN_FILE, &was, NULL)) < 0)
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	if (r == 0 && !(folder && was == SEEN_FOLDER))
		return pr_error_set(err, PR_EDATA, "cannot read '%s': member '%s' appears twice%s",
				    name, quote(q, path, len),
				    was == SEEN_FOLDER || folder ? " (as a file and a folder)"
								 : "");
	return 0;
}

/*
 * The next member: 1 with its header in *e, 0 at the end. Checks the
 * kind, the name (plain, and not one seen before) and the count; the
 * first member checks that the archive was compressed with zstd.
 */
static int next_member(struct archive *a, struct archive_entry **e, const char *name,
		       size_t *count, strmap *seen, pr_error *err)
{
	int r = archive_read_next_header(a, e);
	const char *path;
	char q[QUOTE_MAX];

	if (r == ARCHIVE_EOF)
		return 0;
	if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
		return pr_error_set(err, PR_EDATA, "cannot read '%s': %s", name,
				    archive_error_string(a) ? archive_error_string(a)
							    : "corrupt or truncated archive");
	if (*count == 0) {
		bool zstd = false;
		for (int i = 0; i < archive_filter_count(a); i++)
			zstd |= archive_filter_code(a, i) == ARCHIVE_FILTER_ZSTD;
		if (!zstd)
			return pr_error_set(err, PR_EDATA, "cannot read '%s': not compressed with "
					    "zstd (a .tar.zst is expected)", name);
	}
	if (++*count > TARZST_MAX_MEMBERS)
		return pr_error_set(err, PR_ELIMIT, "cannot read '%s': more than %d members",
				    name, TARZST_MAX_MEMBERS);
	path = archive_entry_pathname(*e);
	if (!path || !tarzst_path_plain(path))
		return pr_error_set(
			err, PR_EDATA,
			"cannot read '%s': member name '%s' is not a plain relative name", name,
			quote(q, path, path ? strlen(path) : 0));
	if (archive_entry_filetype(*e) != AE_IFREG && archive_entry_filetype(*e) != AE_IFDIR)
		return pr_error_set(
			err, PR_EDATA,
			"cannot read '%s': member '%s' is not a regular file or a folder", name,
			quote(q, path, strlen(path)));
	if (archive_entry_hardlink(*e) || archive_entry_symlink(*e))
		return pr_error_set(err, PR_EDATA, "cannot read '%s': member '%s' is a link", name,
				    quote(q, path, strlen(path)));
	if ((r = note_name(seen, path, archive_entry_filetype(*e) == AE_IFDIR, name, err)) < 0)
		return r;
	return 1;
}

/* Read the current member's content into `b`, under both caps. */
static int read_member(struct archive *a, buf *b, const char *name, const char *path,
		       size_t member_max, size_t *total, size_t total_max, pr_error *err)
{
	char chunk[65536], q[QUOTE_MAX];

	buf_reset(b);
	for (;;) {
		la_ssize_t r = archive_read_data(a, chunk, sizeof(chunk));
		if (r == 0)
			return 0;
		if (r < 0)
			return pr_error_set(err, PR_EDATA, "cannot read '%s': member '%s': %s",
					    name, quote(q, path, strlen(path)),
					    archive_error_string(a) ? archive_error_string(a)
								    : "corrupt");
		if (b->len + (size_t)r > member_max)
			return pr_error_set(err, PR_ELIMIT,
					    "cannot read '%s': member '%s' is "
					    "larger than %zu bytes",
					    name, quote(q, path, strlen(path)), member_max);
		*total += (size_t)r;
		if (*total > total_max)
			return pr_error_set(err, PR_ELIMIT, "cannot read '%s': more than %zu bytes "
					    "once decompressed", name, total_max);
		if (buf_put(b, chunk, (size_t)r) < 0)
			return pr_error_set(err, PR_ENOMEM, "out of memory");
	}
}

int tarzst_read(const void *data, size_t len, const char *name, size_t member_max,
		size_t total_max, tarzst_visit_fn visit, void *arg, pr_error *err)
{
	struct archive *a = NULL;
	struct archive_entry *e;
	strmap seen = STRMAP_INIT;
	buf b = BUF_INIT;
	size_t count = 0, total = 0;
	int rc;

	if ((rc = open_read(&a, data, len, name, err)) < 0)
		return rc;
	while ((rc = next_member(a, &e, name, &count, &seen, err)) == 1) {
		const char *path = archive_entry_pathname(e);
		if (archive_entry_filetype(e) == AE_IFDIR)
			continue;
		if ((rc = read_member(a, &b, name, path, member_max, &total, total_max, err)) < 0)
			break;
		if ((rc = visit(arg, path, b.ptr, b.len, err)) != 0)
			break;
	}
	if (rc == 0 && count == 0)
		rc = pr_error_set(err, PR_EDATA, "cannot read '%s': an empty archive", name);
	archive_read_free(a);
	strmap_release(&seen);
	buf_release(&b);
	return rc;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/*
 * Remove folder `dir` and what is below it, never following a link: the
 * folder an extract created, taken back when the extract fails.
 */
static void remove_tree(const char *dir)
{
	(void)nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

int tarzst_extract(const void *data, size_t len, const char *name, const char *dir,
		   size_t member_max, size_t total_max, pr_error *err)
{
	struct archive *a = NULL, *w = NULL;
	struct archive_entry *e;
	strmap seen = STRMAP_INIT;
	buf b = BUF_INIT, path = BUF_INIT, member = BUF_INIT;
	size_t count = 0, total = 0;
	char *real = NULL;
	int rc;

	if (mkdir(dir, 0700) < 0)
		return pr_error_set(
			err, errno == EEXIST ? PR_EEXISTS : PR_EIO, "cannot extract into '%s': %s",
			dir, errno == EEXIST ? "it exists; name a new folder" : strerror(errno));
	/*
	 * Members are joined to the folder's resolved path: the secure options
	 * below judge the whole joined path, and a folder the caller named
	 * with ".." (or through a link) would refuse every member. The checks
	 * still hold for what the archive names.
	 */
	if (!(real = realpath(dir, NULL))) {
		rc = pr_error_set(err, errno == ENOMEM ? PR_ENOMEM : PR_EIO,
				  "cannot extract into '%s': %s", dir, strerror(errno));
		goto out;
	}
	if ((rc = open_read(&a, data, len, name, err)) < 0)
		goto out;
	if (!(w = archive_write_disk_new())) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	archive_write_disk_set_options(w, ARCHIVE_EXTRACT_SECURE_SYMLINKS |
					  ARCHIVE_EXTRACT_SECURE_NODOTDOT |
					  ARCHIVE_EXTRACT_NO_OVERWRITE);
	while ((rc = next_member(a, &e, name, &count, &seen, err)) == 1) {
		bool folder = archive_entry_filetype(e) == AE_IFDIR;
		/* A copy: setting the entry's path below frees the name it had. */
		buf_reset(&member);
		buf_reset(&path);
		if (buf_puts(&member, archive_entry_pathname(e)) < 0 ||
		    buf_printf(&path, "%s/%s", real, member.ptr) < 0) {
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
			break;
		}
		if (!folder && (rc = read_member(a, &b, name, member.ptr, member_max, &total,
						 total_max, err)) < 0)
			break;
		archive_entry_set_pathname(e, path.ptr);
		archive_entry_set_perm(e, folder ? 0700 : 0600);
		if (archive_write_header(w, e) != ARCHIVE_OK ||
		    (!folder && b.len &&
		     archive_write_data(w, b.ptr, b.len) != (la_ssize_t)b.len) ||
		    archive_write_finish_entry(w) != ARCHIVE_OK) {
			rc = pr_error_set(err, PR_EIO, "cannot extract '%.200s' into '%s': %s",
					  member.ptr, dir, archive_error_string(w)
					  ? archive_error_string(w) : "write failed");
			break;
		}
	}
	if (rc == 0 && count == 0)
		rc = pr_error_set(err, PR_EDATA, "cannot read '%s': an empty archive", name);
	if (rc == 0 && archive_write_close(w) != ARCHIVE_OK)
		rc = pr_error_set(err, PR_EIO, "cannot extract into '%s': %s", dir,
				  archive_error_string(w) ? archive_error_string(w)
							  : "close failed");
out:
	if (w)
		archive_write_free(w);
	if (a)
		archive_read_free(a);
	/* Nothing half-written: the folder this call made goes with what is in it. */
	if (rc < 0)
		remove_tree(dir);
	strmap_release(&seen);
	buf_release(&b);
	buf_release(&path);
	buf_release(&member);
	free(real);
	return rc;
}
