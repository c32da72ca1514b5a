/*
 * gunzip.c: bounded gzip decompression (see gunzip.h).
 *
 * zlib inflates straight into the caller's buffer, never more than one
 * byte past `max_out`, so a decompression bomb stops as soon as it has
 * shown itself to be one: it costs at most `max_out` bytes of touched
 * memory and the time to produce them, whatever its compressed size or
 * ratio. Concatenated members (what `cat a.gz b.gz` makes, and what some
 * profilers write) decompress as one stream, as gzip(1) does.
 */
#include "pipeline/gunzip.h"

#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <zlib.h>

/* Smallest growth step: large enough that inflate is rarely re-entered. */
#define GUNZIP_STEP (256u * 1024u)

/*
 * A gzip member ends with the length of its content modulo 2^32. For the
 * usual single member that is the exact output size: reserving it up
 * front avoids every reallocation. It is only a hint, never trusted.
 */
static size_t size_hint(const uint8_t *data, size_t len)
{
	if (len < 18)
		return 0;
	data += len - 4;
	return (size_t)data[0] | (size_t)data[1] << 8 |
	       (size_t)data[2] << 16 | (size_t)data[3] << 24;
}

static int over_limit(const char *name, size_t max_out, pr_error *err)
{
	return pr_error_set(err, PR_ELIMIT,
			    "cannot decompress '%s': decompressed size "
			    "exceeds the limit of %zu bytes",
			    name, max_out);
}

int gunzip_bounded(buf *out, const uint8_t *data, size_t len, size_t max_out,
		   const char *name, pr_error *err)
{
	z_stream zs;
	size_t in_off = 0; /* bytes of `data` handed to zlib so far */
	size_t hint;
	bool inited = false, ended = false;
	int zrc, rc = 0;

	if (!name)
		name = "-";
	/* "One byte past the limit" below must not wrap: the largest limit is one less. */
	if (max_out > SIZE_MAX - 1)
		max_out = SIZE_MAX - 1;
	buf_reset(out);
	if (len == 0) {
		rc = pr_error_set(err, PR_EDATA,
				  "cannot decompress '%s': empty input, not a gzip stream", name);
		goto out;
	}
	memset(&zs, 0, sizeof(zs));
	if ((zrc = inflateInit2(&zs, 16 + MAX_WBITS)) != Z_OK) {
		rc = pr_error_set(err, zrc == Z_MEM_ERROR ? PR_ENOMEM : PR_ERR,
				  "cannot decompress '%s': zlib initialisation failed", name);
		goto out;
	}
	inited = true;

	hint = size_hint(data, len);
	if (hint && hint <= max_out && (rc = buf_grow(out, hint)) < 0)
		goto grow_failed;

	for (;;) {
		size_t room, step;

		if (zs.avail_in == 0 && in_off < len) {
			size_t n = len - in_off;
			zs.next_in = (Bytef *)(uintptr_t)(data + in_off);
			zs.avail_in = n > UINT_MAX ? UINT_MAX : (uInt)n;
			in_off += zs.avail_in;
		}
		if (out->len > max_out) {
			rc = over_limit(name, max_out, err);
			goto out;
		}
		room = out->cap ? out->cap - out->len - 1 : 0;
		if (room == 0) {
			/* Grow geometrically, but never past one byte over the limit. */
			step = out->len > GUNZIP_STEP ? out->len : GUNZIP_STEP;
			if (step > max_out - out->len + 1)
				step = max_out - out->len + 1;
			if ((rc = buf_grow(out, step)) < 0)
				goto grow_failed;
			room = out->cap - out->len - 1;
		}
		/* One byte past the limit is how we learn the limit was passed. */
		if (room > max_out - out->len + 1)
			room = max_out - out->len + 1;
		if (room > UINT_MAX)
			room = UINT_MAX;
		zs.next_out = (Bytef *)out->ptr + out->len;
		zs.avail_out = (uInt)room;

		zrc = inflate(&zs, Z_NO_FLUSH);
		out->len += room - zs.avail_out;
		out->ptr[out->len] = '\0';

		if (zrc == Z_STREAM_END) {
			if (zs.avail_in == 0 && in_off == len) {
				ended = true;
				break;
			}
			/*
			 * Zeros to the end are padding (a tape's or a block
			 * device's), which gzip(1) skips too; anything else
			 * must be another member.
			 */
			{
				size_t at = in_off - zs.avail_in, k = at;
				while (k < len && data[k] == 0)
					k++;
				if (k == len) {
					ended = true;
					break;
				}
				if (len - at < 2 || data[at] != 0x1f || data[at + 1] != 0x8b) {
					rc = pr_error_set(err, PR_EDATA,
							  "cannot decompress '%s': %zu bytes after "
							  "the gzip member that ends at offset %zu "
							  "are not another member",
							  name, len - at, at);
					goto out;
				}
			}
			/* Another member follows; its header is checked by inflate. */
			if ((zrc = inflateReset(&zs)) != Z_OK) {
				rc = pr_error_set(err, PR_ERR,
						  "cannot decompress '%s': "
						  "zlib reset failed", name);
				goto out;
			}
			continue;
		}
		if (zrc == Z_OK)
			continue;
		if (zrc == Z_BUF_ERROR) {
			/* No progress: either the output is full (loop grows it) or
			 * the input ran out in the middle of a member. */
			if (zs.avail_out == 0)
				continue;
			break;
		}
		if (zrc == Z_MEM_ERROR) {
			rc = pr_error_set(err, PR_ENOMEM,
					  "cannot decompress '%s': out of memory", name);
			goto out;
		}
		rc = pr_error_set(err, PR_EDATA,
				  "cannot decompress '%s': corrupt gzip stream at offset %zu: %s",
				  name, in_off - zs.avail_in,
				  zs.msg ? zs.msg : "invalid data");
		goto out;
	}
	if (out->len > max_out) {
		rc = over_limit(name, max_out, err);
		goto out;
	}
	if (!ended) {
		rc = pr_error_set(err, PR_EDATA,
				  "cannot decompress '%s': truncated gzip stream "
				  "(input ends at offset %zu)",
				  name, len);
		goto out;
	}
	goto out;

grow_failed:
	if (rc == PR_ELIMIT)
		rc = over_limit(name, out->max < max_out ? out->max : max_out, err);
	else
		rc = pr_error_set(err, rc, "cannot decompress '%s': out of memory", name);
out:
	if (inited)
		inflateEnd(&zs);
	if (rc < 0)
		buf_release(out);
	return rc;
}
