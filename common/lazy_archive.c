/*
 * lazy_archive.c: the libarchive functions profreg calls, loaded on first
 * use (common/lazylib.h). Only incident snapshots (tar.zst) use them;
 * libarchive alone brought ICU, libstdc++, libxml2 and four compressors.
 */
#define _POSIX_C_SOURCE 200809L
#include "common/lazylib.h"

#include <archive.h>
#include <archive_entry.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define ARCHIVE_FUNCS(X, V) \
	X(struct archive_entry *, archive_entry_clear, (struct archive_entry *e), (e)) \
	X(__LA_MODE_T, archive_entry_filetype, (struct archive_entry *e), (e)) \
	V(archive_entry_free, (struct archive_entry *e), (e)) \
	X(const char *, archive_entry_hardlink, (struct archive_entry *e), (e)) \
	X(struct archive_entry *, archive_entry_new, (void), ()) \
	X(const char *, archive_entry_pathname, (struct archive_entry *e), (e)) \
	V(archive_entry_set_filetype, (struct archive_entry *e, unsigned int t), (e, t)) \
	V(archive_entry_set_gid, (struct archive_entry *e, la_int64_t g), (e, g)) \
	V(archive_entry_set_mtime, (struct archive_entry *e, time_t t, long ns), (e, t, ns)) \
	V(archive_entry_set_pathname, (struct archive_entry *e, const char *p), (e, p)) \
	V(archive_entry_set_perm, (struct archive_entry *e, __LA_MODE_T m), (e, m)) \
	V(archive_entry_set_size, (struct archive_entry *e, la_int64_t s), (e, s)) \
	V(archive_entry_set_uid, (struct archive_entry *e, la_int64_t u), (e, u)) \
	X(const char *, archive_entry_symlink, (struct archive_entry *e), (e)) \
	X(const char *, archive_error_string, (struct archive *a), (a)) \
	X(int, archive_filter_code, (struct archive *a, int i), (a, i)) \
	X(int, archive_filter_count, (struct archive *a), (a)) \
	X(la_ssize_t, archive_read_data, (struct archive *a, void *b, size_t n), (a, b, n)) \
	X(int, archive_read_free, (struct archive *a), (a)) \
	X(struct archive *, archive_read_new, (void), ()) \
	X(int, archive_read_next_header, (struct archive *a, struct archive_entry **e), (a, e)) \
	X(int, archive_read_open_memory, (struct archive *a, const void *b, size_t n), \
	  (a, b, n)) \
	X(int, archive_read_support_filter_zstd, (struct archive *a), (a)) \
	X(int, archive_read_support_format_tar, (struct archive *a), (a)) \
	X(int, archive_write_add_filter_zstd, (struct archive *a), (a)) \
	X(int, archive_write_close, (struct archive *a), (a)) \
	X(la_ssize_t, archive_write_data, (struct archive *a, const void *b, size_t n), \
	  (a, b, n)) \
	X(struct archive *, archive_write_disk_new, (void), ()) \
	X(int, archive_write_disk_set_options, (struct archive *a, int f), (a, f)) \
	X(int, archive_write_finish_entry, (struct archive *a), (a)) \
	X(int, archive_write_free, (struct archive *a), (a)) \
	X(int, archive_write_header, (struct archive *a, struct archive_entry *e), (a, e)) \
	X(struct archive *, archive_write_new, (void), ()) \
	X(int, archive_write_open2, \
	  (struct archive *a, void *c, archive_open_callback *o, archive_write_callback *w, \
	   archive_close_callback *cl, archive_free_callback *f), (a, c, o, w, cl, f)) \
	X(int, archive_write_set_bytes_in_last_block, (struct archive *a, int n), (a, n)) \
	X(int, archive_write_set_format_pax_restricted, (struct archive *a), (a))

enum { ARCHIVE_FUNCS(LAZYLIB_INDEX, LAZYLIB_INDEX_V) LAZY_archive_set_error, LAZY_COUNT };
static const char *const names[] = {ARCHIVE_FUNCS(LAZYLIB_NAME, LAZYLIB_NAME_V)
				    "archive_set_error"};
static void *fns[LAZY_COUNT];
static lazylib archive = {LAZY_SONAME_ARCHIVE, names, fns, LAZY_COUNT, false};

#define FORWARD(ret, name, params, args) LAZYLIB_FORWARD(archive, ret, name, params, args)
#define FORWARD_V(name, params, args) LAZYLIB_FORWARD_V(archive, name, params, args)
ARCHIVE_FUNCS(FORWARD, FORWARD_V)

/* Variadic: formatted here and handed over as "%s" (a va_list cannot be passed on). */
void archive_set_error(struct archive *a, int err, const char *fmt, ...)
{
	void (*fn)(struct archive *, int, const char *, ...);
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	lazylib_load(&archive);
	memcpy(&fn, &archive.fns[LAZY_archive_set_error], sizeof(fn));
	fn(a, err, "%s", msg);
}
