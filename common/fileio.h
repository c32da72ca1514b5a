/*
 * fileio.h: reading whole files under a size limit, durable writes, and
 * the one policy for writing to a path a user named (--out).
 */
#ifndef PR_FILEIO_H
#define PR_FILEIO_H

#include "common/buf.h"
#include "common/error.h"

/*
 * Read all of `path` ("-" is standard input) into `out`, failing with
 * PR_ELIMIT once more than `max` bytes arrive (the file is never read
 * past the limit), PR_ENOTFOUND when it is not there. On error `out` is
 * left empty and `err` names the file.
 *
 * Only a regular file is read: a directory, a FIFO (a pipe named as
 * /dev/stdin or /dev/fd/N too), a device or a socket is refused with
 * PR_EDATA, without waiting for a FIFO's writer, and so is a file of
 * the kernel's own file systems (/proc, /sys, debugfs, tracefs), which
 * reports no size and may never end.
 */
int fileio_read(buf *out, const char *path, size_t max, pr_error *err);

/*
 * fileio_read of a path that is never standard input ("-" is a file of
 * that name), named in messages as the non-empty `what` ("config":
 * "cannot read config 'x': not a regular file (a FIFO ...)").
 */
int fileio_read_named(buf *out, const char *what, const char *path, size_t max,
		      pr_error *err);

/*
 * Whether fileio_read_named would read `path`: it is opened (without
 * waiting) and checked as that does, then closed; nothing is read.
 */
int fileio_check_named(const char *what, const char *path, pr_error *err);

/*
 * fileio_read for a path someone else may have put there (a drop
 * folder): only a regular file is read, and a symbolic link is refused,
 * not followed, so a link planted in the folder cannot make profreg read
 * (and quote in its messages) a file the writer could not. PR_EDATA for
 * a link or anything else that is not a file; "-" is a file name here.
 */
int fileio_read_file(buf *out, const char *path, size_t max, pr_error *err);

/*
 * Write `len` bytes to `path` so that the file either appears whole or
 * not at all: a temporary file in the same directory, fsync, rename, and
 * an fsync of the directory. `mode` is the new file's permission bits;
 * a regular file it replaces keeps its own where they are narrower (a
 * 0600 file stays 0600). The temporary files of earlier writers of the
 * same path ("PATH.tmp.PID") whose process no longer runs are removed
 * first; a running writer's are left alone.
 */
int fileio_write_atomic(const char *path, const void *data, size_t len,
			unsigned mode, pr_error *err);

/*
 * Write `len` bytes to the output path a user named (--out), never
 * replacing anything that is not a regular file:
 *
 * - "-", "/dev/stdout", "/dev/stderr" and "/dev/fd/N" name a descriptor
 *   this process already holds (as they do in shell redirections): the
 *   bytes are written to it as they are (standard output through stdio,
 *   flushed);
 * - a path that does not exist, or a regular file: written whole or not
 *   at all, as fileio_write_atomic does (a new file gets `mode`);
 * - a character device or a FIFO (/dev/null, a terminal, mkfifo): opened
 *   and written in place; opening a FIFO waits for its reader;
 * - a symbolic link is refused, not followed, and so are directories,
 *   sockets and block devices: PR_EUSAGE with a message naming the path.
 *
 * Other failures are PR_EIO (PR_ENOMEM). The caller keeps `data`.
 */
int fileio_write_out(const char *path, const void *data, size_t len, unsigned mode,
		     pr_error *err);

/*
 * Write all `len` bytes to `fd`, retrying after EINTR and short writes.
 * Returns 0, or -1 with errno set. Meant for one message in one call:
 * the bytes go out in a single write(2) unless the kernel takes fewer.
 */
int fileio_write_fd(int fd, const void *data, size_t len);

/* mkdir -p with `mode` for the directories it creates. */
int fileio_mkdirs(const char *path, unsigned mode, pr_error *err);

#endif
