/*
 * gunzip.h: bounded gzip decompression.
 */
#ifndef PR_GUNZIP_H
#define PR_GUNZIP_H

#include <stdint.h>

#include "common/buf.h"
#include "common/error.h"

/*
 * Decompress every gzip member in `data` into `out`, stopping with
 * PR_ELIMIT as soon as the output would pass `max_out` bytes (a bomb
 * costs at most `max_out` bytes of memory and the time to produce them).
 * Truncated or corrupt streams are PR_EDATA. `name` is used in messages.
 */
int gunzip_bounded(buf *out, const uint8_t *data, size_t len, size_t max_out,
		   const char *name, pr_error *err);

#endif
