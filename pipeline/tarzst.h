/*
 * tarzst.h: tar archives compressed with zstd (.tar.zst), in memory,
 * through libarchive.
 *
 * Written archives are POSIX tar (pax where a name needs it) of regular
 * files only, every member owned by uid 0 with mode 0600 and one
 * modification time, compressed as one zstd frame. Reading an archive
 * from outside is bounded: each member and the whole decompressed
 * content have byte caps, members are counted, and only regular files
 * and folders with plain relative names (no '/' at the start, no "." or
 * ".." component) are accepted, so a hostile archive can neither exhaust
 * memory nor name a path outside where it is extracted.
 */
#ifndef PR_TARZST_H
#define PR_TARZST_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/error.h"

/* Members an archive may hold at most. */
#define TARZST_MAX_MEMBERS 100000

typedef struct tarzst_member {
	const char *path;    /* plain relative name, e.g. "proc/loadavg" */
	const void *data;
	size_t len;
} tarzst_member;

/*
 * Write `n` members, in order, as one .tar.zst into `out` (released
 * first), modification time `mtime` (Unix seconds). Fails with
 * PR_ELIMIT when the archive would be larger than `max` bytes, PR_EUSAGE
 * on a member name that is not plain. The caller owns `out`.
 */
int tarzst_write(buf *out, const tarzst_member *m, size_t n, int64_t mtime, size_t max,
		 pr_error *err);

/*
 * Visit each member of the .tar.zst `len` bytes at `data` in order, with
 * its content in memory. `name` names the archive in messages ("cannot
 * read 'x.tar.zst': ..."). A member larger than `member_max`, content
 * past `total_max` in all, or more than TARZST_MAX_MEMBERS members is
 * PR_ELIMIT; a member that is neither a regular file nor a folder, a
 * name that is not plain, a name given twice or both as a file and a
 * folder ("a", then "a/b"), or an archive that is not a .tar.zst or is
 * truncated, is PR_EDATA. Folders are not visited. A visit returning
 * non-zero stops the walk and its code is returned.
 */
typedef int (*tarzst_visit_fn)(void *arg, const char *path, const void *data, size_t len,
			       pr_error *err);
int tarzst_read(const void *data, size_t len, const char *name, size_t member_max,
		size_t total_max, tarzst_visit_fn visit, void *arg, pr_error *err);

/*
 * Extract every member into folder `dir`, which must not exist yet (it
 * is created mode 0700; a folder already there is PR_EEXISTS, so nothing
 * is ever written over; `dir` may be any path, ".." included: members are
 * written beneath its resolved path). Members are written mode 0600 with
 * libarchive's secure extraction (no ".." in a member's name, never
 * through a symbolic link), under the
 * same bounds and checks as tarzst_read. On failure the message says
 * which member failed and the folder is removed with what was written
 * into it: nothing half-extracted is left.
 */
int tarzst_extract(const void *data, size_t len, const char *name, const char *dir,
		   size_t member_max, size_t total_max, pr_error *err);

/* Whether `path` is a plain relative member name (see above). */
int tarzst_path_plain(const char *path);

#endif
