/*
 * fileio.h: reading whole files under a size limit, and durable writes.
 */
#ifndef PR_FILEIO_H
#define PR_FILEIO_H

#include "buf.h"
#include "error.h"

/*
 * Read all of `path` ("-" is standard input) into `out`, failing with
 * PR_ELIMIT once more than `max` bytes arrive (the file is never read
 * past the limit). On error `out` is left empty and `err` names the file.
 */
int fileio_read(buf *out, const char *path, size_t max, pr_error *err);

/*
 * Write `len` bytes to `path` so that the file either appears whole or
 * not at all: a temporary file in the same directory, fsync, rename, and
 * an fsync of the directory. `mode` is the new file's permission bits.
 */
int fileio_write_atomic(const char *path, const void *data, size_t len,
			unsigned mode, pr_error *err);

/* mkdir -p with `mode` for the directories it creates. */
int fileio_mkdirs(const char *path, unsigned mode, pr_error *err);

#endif
