/*
 * blob.c: the content-addressed blob store and its local directory
 * backend (see blob.h).
 */
#define _GNU_SOURCE /* syncfs */
#include "pipeline/blob.h"
#include "common/ahead.h"
#include "common/memhint.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "common/fileio.h"

#define BLOB_LEVEL 3
/* Bounds the frame window the decoder accepts when nothing smaller fits. */
#define BLOB_WINDOWLOG_MIN 10
#define BLOB_WINDOWLOG_MAX 27
/* Memory reserved up front from a frame's declared size, at most. */
#define BLOB_RESERVE_MAX ((size_t)64 << 20)
#define BLOB_GROW_MIN ((size_t)64 << 10)
/* A temporary this old belongs to a write that is no longer running. */
#define BLOB_TEMP_AGE 60
#define BLOB_SHARDS "sha256"
#define BLOB_SUFFIX ".zst"

struct blob_store {
	const blob_store_ops *ops;
	void *impl;
	char *describe;
};

/* Keys and hashing */

int blob_key_of(char out[BLOB_KEY_HEX + 1], const void *data, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;

	out[0] = '\0';
	if (!EVP_Digest(len ? data : "", len, md, &mdlen, EVP_sha256(), NULL) ||
	    mdlen * 2 != BLOB_KEY_HEX)
		return PR_ERR;
	for (unsigned int i = 0; i < mdlen; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 0xf];
	}
	out[BLOB_KEY_HEX] = '\0';
	return 0;
}

bool blob_key_valid(const char *key)
{
	if (!key)
		return false;
	for (size_t i = 0; i < BLOB_KEY_HEX; i++) {
		char c = key[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
	}
	return key[BLOB_KEY_HEX] == '\0';
}

/*
 * A rejected key is caller input, possibly hostile: quote at most 64
 * bytes of it, with anything unprintable replaced.
 */
static void key_for_msg(char out[BLOB_KEY_HEX + 4], const char *key)
{
	size_t i;

	if (!key) {
		strcpy(out, "(null)");
		return;
	}
	for (i = 0; i < BLOB_KEY_HEX && key[i]; i++) {
		unsigned char c = (unsigned char)key[i];
		out[i] = (c < 0x20 || c >= 0x7f || c == '\'') ? '?' : (char)c;
	}
	if (key[i]) {
		memcpy(out + i, "...", 3);
		i += 3;
	}
	out[i] = '\0';
}

static int check_key(const char *key, pr_error *err)
{
	char shown[BLOB_KEY_HEX + 4];

	if (blob_key_valid(key))
		return 0;
	key_for_msg(shown, key);
	return pr_error_set(err, PR_EUSAGE,
		"invalid blob key '%s': expected 64 lowercase hex characters", shown);
}

/* The stored form */

/* A compression context set up for blobs, into *out (free with ZSTD_freeCCtx). */
static int encoder_new(ZSTD_CCtx **out, pr_error *err)
{
	ZSTD_CCtx *cctx = ZSTD_createCCtx();

	*out = NULL;
	if (!cctx)
		return pr_error_set(err, PR_ENOMEM, "cannot compress a blob: out of memory");
	/* The frame checksum catches most damage before SHA-256 has to. */
	if (ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, BLOB_LEVEL)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1))) {
		ZSTD_freeCCtx(cctx);
		return pr_error_set(err, PR_ERR, "cannot compress a blob: bad zstd parameters");
	}
	*out = cctx;
	return 0;
}

/*
 * blob_encode with the context `cctx` (from encoder_new), which a caller
 * compressing blob after blob keeps: a new context costs as much again as
 * compressing a 100 KB capture with one already set up.
 */
static int encode_with(ZSTD_CCtx *cctx, buf *out, const void *data, size_t len,
		       pr_error *err)
{
	size_t bound, n;
	int rc = 0;

	buf_release(out);
	bound = ZSTD_compressBound(len);
	if (ZSTD_isError(bound) || bound == 0) {
		rc = pr_error_set(err, PR_ELIMIT,
			"cannot compress a blob of %zu bytes: too large", len);
		goto out;
	}
	if ((rc = buf_grow(out, bound)) < 0) {
		rc = pr_error_set(err, rc, "cannot compress a blob of %zu bytes: %s", len,
				  rc == PR_ELIMIT ? "over the output buffer's limit"
						  : "out of memory");
		goto out;
	}
	n = ZSTD_compress2(cctx, out->ptr, bound, len ? data : "", len);
	if (ZSTD_isError(n)) {
		rc = pr_error_set(err, PR_ERR, "cannot compress a blob of %zu bytes: %s",
				  len, ZSTD_getErrorName(n));
		goto out;
	}
	out->len = n;
	out->ptr[n] = '\0';
out:
	if (rc < 0)
		buf_release(out);
	return rc;
}

int blob_encode(buf *out, const void *data, size_t len, pr_error *err)
{
	ZSTD_CCtx *cctx = NULL;
	int rc;

	if ((rc = encoder_new(&cctx, err)) < 0) {
		buf_release(out);
		return rc;
	}
	rc = encode_with(cctx, out, data, len, err);
	ZSTD_freeCCtx(cctx);
	return rc;
}

/*
 * Our frames never need a window larger than their content (zstd shrinks
 * the window to the source size), so a frame that asks for more than
 * `max` rounds up to is hostile and is refused before any allocation.
 */
static int window_log_for(size_t max)
{
	int log = BLOB_WINDOWLOG_MIN;

	while (log < BLOB_WINDOWLOG_MAX && ((size_t)1 << log) < max)
		log++;
	return log;
}

static int zstd_failure(const char *key, size_t ret, size_t max, pr_error *err)
{
	switch (ZSTD_getErrorCode(ret)) {
	case ZSTD_error_frameParameter_windowTooLarge:
		return pr_error_set(err, PR_ELIMIT,
			"blob '%s' is over the limit of %zu bytes: its zstd window is larger",
			key, max);
	case ZSTD_error_memory_allocation:
		return pr_error_set(err, PR_ENOMEM, "cannot read blob '%s': out of memory", key);
	case ZSTD_error_checksum_wrong:
		return pr_error_set(err, PR_EDATA, "blob '%s' is corrupt: checksum mismatch", key);
	default:
		return pr_error_set(err, PR_EDATA, "blob '%s' is corrupt: %s", key,
				    ZSTD_getErrorName(ret));
	}
}

/*
 * Empty `out` for a blob of at most `max` bytes, keeping its memory: a
 * caller reading blob after blob into one buffer writes to pages it
 * already has instead of faulting in fresh ones for every blob.
 */
static void reuse(buf *out, size_t max)
{
	buf_reset(out);
	out->max = max;
}

/* Room for the next chunk of output, never past `max` bytes in all. */
static int decode_room(buf *out, size_t max, size_t *room)
{
	size_t step;
	int rc;

	if (out->cap == 0 || out->cap - 1 == out->len) {
		step = out->len > BLOB_GROW_MIN ? out->len : BLOB_GROW_MIN;
		if (step > max - out->len)
			step = max - out->len;
		if ((rc = buf_grow(out, step)) < 0)
			return rc;
		mem_hint_huge(out->ptr, out->cap);
	}
	*room = out->cap - 1 - out->len;
	if (*room > max - out->len)
		*room = max - out->len;
	return 0;
}

int blob_decode(buf *out, const char *key, const void *stored, size_t len,
		size_t max, pr_error *err)
{
	ZSTD_DCtx *dctx = NULL;
	ZSTD_inBuffer in = {len ? stored : "", len, 0};
	unsigned long long declared;
	char scratch[1], got[BLOB_KEY_HEX + 1];
	size_t ret = 1, reserve;
	bool pending = false;
	int rc = 0;

	reuse(out, max);
	if ((rc = check_key(key, err)) < 0)
		goto out;
	/* The declared size is a hint: good for refusing early, never trusted. */
	declared = ZSTD_getFrameContentSize(in.src, len);
	if (declared != ZSTD_CONTENTSIZE_UNKNOWN &&
	    declared != ZSTD_CONTENTSIZE_ERROR && declared > max) {
		rc = pr_error_set(err, PR_ELIMIT,
			"blob '%s' expands to %llu bytes, over the limit of %zu bytes",
			key, declared, max);
		goto out;
	}
	if (!(dctx = ZSTD_createDCtx())) {
		rc = pr_error_set(err, PR_ENOMEM, "cannot read blob '%s': out of memory", key);
		goto out;
	}
	if (ZSTD_isError(ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax,
						window_log_for(max)))) {
		rc = pr_error_set(err, PR_ERR, "cannot read blob '%s': bad zstd parameters", key);
		goto out;
	}
	if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != ZSTD_CONTENTSIZE_ERROR)
		reserve = declared < BLOB_RESERVE_MAX ? (size_t)declared : BLOB_RESERVE_MAX;
	else
		reserve = BLOB_GROW_MIN < max ? BLOB_GROW_MIN : max;
	/*
	 * A buffer too small for the declared size is replaced, not grown (its
	 * bytes mean nothing any more), by one of that size and an eighth more,
	 * so that the next capture of about the same size fits it too: not
	 * rounded up to a power of two, which puts a 20 MB capture in 32 MiB
	 * (a mapping of its own, past malloc's largest heap block).
	 */
	if (reserve && out->cap <= reserve) {
		size_t slack = reserve / 8 < max - reserve ? reserve / 8 : max - reserve;
		buf_release(out);
		if ((rc = buf_reserve(out, reserve + slack)) < 0) {
			rc = pr_error_set(err, rc, "cannot read blob '%s': out of memory", key);
			goto out;
		}
	}
	mem_hint_huge(out->ptr, out->cap);

	while (in.pos < in.size || pending) {
		ZSTD_outBuffer ob = {scratch, 1, 0};
		size_t in_before = in.pos, room;
		bool at_max = out->len == max;

		/* At the limit, one more byte of output proves the blob too big. */
		if (!at_max) {
			if ((rc = decode_room(out, max, &room)) < 0) {
				rc = pr_error_set(err, rc, "cannot read blob '%s': out of memory",
						  key);
				goto out;
			}
			ob.dst = out->ptr + out->len;
			ob.size = room;
		}
		ret = ZSTD_decompressStream(dctx, &ob, &in);
		if (ZSTD_isError(ret)) {
			rc = zstd_failure(key, ret, max, err);
			goto out;
		}
		if (at_max && ob.pos > 0) {
			rc = pr_error_set(err, PR_ELIMIT,
				"blob '%s' is larger than the limit of %zu bytes", key, max);
			goto out;
		}
		if (!at_max)
			out->len += ob.pos;
		/* A full output buffer may hide more output, unless the frame
		 * is done (0): calling again then would start a new frame. */
		pending = !at_max && ob.pos == ob.size && ret != 0;
		if (ob.pos == 0 && in.pos == in_before && in.pos < in.size) {
			rc = pr_error_set(err, PR_EDATA,
				"blob '%s' is corrupt: zstd stream makes no progress", key);
			goto out;
		}
	}
	if (ret != 0) {
		rc = pr_error_set(err, PR_EDATA, "blob '%s' is corrupt: truncated zstd stream",
				  key);
		goto out;
	}
	out->ptr[out->len] = '\0';
	if (blob_key_of(got, out->ptr, out->len) < 0) {
		rc = pr_error_set(err, PR_ERR, "cannot verify blob '%s': sha-256 failed", key);
		goto out;
	}
	if (memcmp(got, key, BLOB_KEY_HEX) != 0) {
		rc = pr_error_set(err, PR_EDATA, "blob '%s' is corrupt: checksum mismatch", key);
		goto out;
	}
out:
	ZSTD_freeDCtx(dctx);
	if (rc < 0)
		buf_release(out);
	return rc;
}

/* The generic store */

int blob_store_new(blob_store **out, const blob_store_ops *ops, void *impl,
		   const char *describe, pr_error *err)
{
	blob_store *bs = NULL;
	int rc = 0;

	*out = NULL;
	if (!(bs = calloc(1, sizeof(*bs))) || !(bs->describe = strdup(describe))) {
		rc = pr_error_set(err, PR_ENOMEM, "cannot open blob store '%s': out of memory",
				  describe);
		goto out;
	}
	bs->ops = ops;
	bs->impl = impl;
	*out = bs;
	bs = NULL;
	impl = NULL;
out:
	if (bs)
		free(bs->describe);
	free(bs);
	if (impl)
		ops->close(impl);
	return rc;
}

void blob_store_free(blob_store *bs)
{
	if (!bs)
		return;
	bs->ops->close(bs->impl);
	free(bs->describe);
	free(bs);
}

const char *blob_store_describe(blob_store *bs)
{
	return bs->describe;
}

/*
 * 0 when `len` bytes at `data` hash to `key`, else PR_EUSAGE: bytes
 * about to be written over a stored blob, or in place of a lost one, are
 * that blob's, whatever the caller said.
 */
static int bytes_are(const char *key, const void *data, size_t len, pr_error *err)
{
	char have[BLOB_KEY_HEX + 1];

	if (blob_key_of(have, data, len) < 0)
		return pr_error_set(err, PR_ERR, "cannot store blob '%s': sha-256 failed", key);
	if (strcmp(have, key) != 0)
		return pr_error_set(err, PR_EUSAGE,
				    "cannot store blob '%s' with other bytes: the bytes given are "
				    "not that blob's (they are blob '%s')", key, have);
	return 0;
}

/*
 * Whether the stored blob `key` reads back as the `len` bytes it names:
 * 0 and *ok when it does, 0 and !*ok when it is damaged (truncated,
 * corrupt, larger than those bytes), PR_ENOTFOUND when it is missing
 * (`err` left as it was), or the store's own failure.
 */
static int check_stored(blob_store *bs, const char *key, size_t len, bool *ok, pr_error *err)
{
	buf plain = BUF_INIT;
	pr_error e2 = PR_ERROR_INIT;
	int rc = blob_get(bs, key, &plain, len, &e2);

	buf_release(&plain);
	*ok = rc == 0;
	if (rc == PR_EDATA || rc == PR_ELIMIT || rc == 0)
		return 0;
	if (rc == PR_ENOTFOUND)
		return rc;
	return pr_error_set(err, rc, "%s", e2.msg);
}

/* Write the bytes of blob `key` over a stored object that failed its check. */
static int replace_stored(blob_store *bs, ZSTD_CCtx *cctx, const char *key, const void *data,
			  size_t len, pr_error *err)
{
	buf stored = BUF_INIT;
	int rc;

	if ((rc = cctx ? encode_with(cctx, &stored, data, len, err)
		       : blob_encode(&stored, data, len, err)) == 0)
		rc = bs->ops->replace(bs->impl, key, stored.ptr, stored.len, err);
	buf_release(&stored);
	return rc;
}

/*
 * What a put does before the backend writes: the key into `key_out`
 * (unless `keyed`: the caller put it there, and only its form is
 * checked), and unless the blob is stored already (then made young, or,
 * damaged, written anew and `*repaired` set), its stored form into
 * `stored` and `*write` set. `cctx` is a context of encoder_new's to
 * compress with, or NULL for one of its own.
 */
static int put_prepare(blob_store *bs, ZSTD_CCtx *cctx, char key_out[BLOB_KEY_HEX + 1],
		       bool keyed, const void *data, size_t len, buf *stored, bool *write,
		       bool *repaired, pr_error *err)
{
	bool exists = false, ok = true;
	int rc;

	*write = false;
	*repaired = false;
	if (keyed && (rc = check_key(key_out, err)) < 0)
		return rc;
	if (!keyed && blob_key_of(key_out, data, len) < 0)
		return pr_error_set(err, PR_ERR,
				    "cannot store a blob of %zu bytes: sha-256 failed", len);
	/*
	 * Blobs are immutable: skip compressing what is already stored, but
	 * make it young again, so the orphan sweep's grace period covers the
	 * row this put is for. Gone since the check: write it after all.
	 * Where a damaged blob can be replaced, it is checked first: the row
	 * this put is for must not rest on it.
	 */
	if ((rc = bs->ops->exists(bs->impl, key_out, &exists, err)) < 0)
		return rc;
	if (exists && bs->ops->replace) {
		rc = check_stored(bs, key_out, len, &ok, err);
		if (rc == PR_ENOTFOUND)
			exists = false;
		else if (rc < 0)
			return rc;
		if (exists && !ok) {
			/* A key taken on trust is checked before it replaces anything. */
			if ((keyed && (rc = bytes_are(key_out, data, len, err)) < 0) ||
			    (rc = replace_stored(bs, cctx, key_out, data, len, err)) < 0)
				return rc;
			*repaired = true;
			return 0;
		}
	} else if (exists) {
		/*
		 * A store that cannot replace (S3) is read back all the same: a
		 * broken endpoint or proxy that answered 200 to every HEAD had
		 * captures recorded whose bytes were never written, and the
		 * damage showed at the first read. Such a store holds a blob
		 * no capture of this service has only rarely (an orphan, another
		 * service's capture of the same bytes), so the read is rare too.
		 */
		rc = check_stored(bs, key_out, len, &ok, err);
		if (rc == PR_ENOTFOUND)
			exists = false;
		else if (rc < 0)
			return rc;
		if (exists && !ok)
			return pr_error_set(err, PR_EIO,
					    "blob '%s' is in %s but does not read back as these "
					    "bytes (damaged, or a store that claims what it does "
					    "not hold): not stored",
					    key_out, blob_store_describe(bs));
	}
	if (exists) {
		pr_error e2 = PR_ERROR_INIT;
		if (!bs->ops->touch || (rc = bs->ops->touch(bs->impl, key_out, &e2)) == 0)
			return 0;
		if (e2.code != PR_ENOTFOUND)
			return pr_error_set(err, e2.code, "%s", e2.msg);
	}
	if ((rc = cctx ? encode_with(cctx, stored, data, len, err)
		       : blob_encode(stored, data, len, err)) < 0)
		return rc;
	*write = true;
	return 0;
}

/* blob_put, of bytes whose key is in key_out already when `keyed`. */
static int put_one(blob_store *bs, char key_out[BLOB_KEY_HEX + 1], bool keyed, const void *data,
		   size_t len, bool *created, bool *repaired, pr_error *err)
{
	buf stored = BUF_INIT;
	bool write = false, made = false, fixed = false;
	int rc = 0;

	if (created)
		*created = false;
	rc = put_prepare(bs, NULL, key_out, keyed, data, len, &stored, &write, &fixed, err);
	if (repaired)
		*repaired = fixed;
	if (rc < 0 || !write)
		goto out;
	if ((rc = bs->ops->put(bs->impl, key_out, stored.ptr, stored.len, &made, err)) < 0)
		goto out;
	if (created)
		*created = made;
out:
	buf_release(&stored);
	return rc;
}

int blob_put(blob_store *bs, char key_out[BLOB_KEY_HEX + 1], const void *data,
	     size_t len, bool *created, pr_error *err)
{
	return put_one(bs, key_out, false, data, len, created, NULL, err);
}

/* A batch of blob_put_many, and what each item came to. */
typedef struct put_batch {
	blob_store *bs;
	blob_put_item *items;
	buf *stored;     /* per item: its stored form, when it is to be written */
	bool *write;
	int *rcs;
	pr_error *errs;
	ZSTD_CCtx **cctx; /* per thread (slot), made by its first item */
} put_batch;

static void batch_prepare(void *ctx, size_t i, unsigned slot)
{
	put_batch *pb = ctx;
	blob_put_item *it = &pb->items[i];

	if (!pb->cctx[slot] && (pb->rcs[i] = encoder_new(&pb->cctx[slot], &pb->errs[i])) < 0)
		return;
	pb->rcs[i] = put_prepare(pb->bs, pb->cctx[slot], it->key, it->keyed, it->data, it->len,
				 &pb->stored[i], &pb->write[i], &it->repaired, &pb->errs[i]);
}

static void batch_put_one(void *ctx, size_t i, unsigned slot)
{
	put_batch *pb = ctx;
	blob_put_item *it = &pb->items[i];

	(void)slot;
	pb->rcs[i] = put_one(pb->bs, it->key, it->keyed, it->data, it->len, &it->created,
			     &it->repaired, &pb->errs[i]);
}

/* fn for items 0..n-1 on up to `threads` threads, the caller's included. */
static void run_threads(size_t n, unsigned threads, ahead_fn fn, void *ctx)
{
	ahead *a = NULL;

	/* Without helpers (none could start) the caller does it all. */
	if (threads > 1 && ahead_start(&a, n, threads - 1, n, fn, ctx) < 0)
		a = NULL;
	for (size_t i = 0; i < n; i++) {
		if (a)
			ahead_wait(a, i);
		else
			fn(ctx, i, 0);
	}
	ahead_free(a);
}

/* The first failure among items[0..n), in order, into `err`; 0 if none. */
static int first_failure(const put_batch *pb, size_t n, pr_error *err)
{
	for (size_t i = 0; i < n; i++)
		if (pb->rcs[i] < 0)
			return pr_error_set(err, pb->rcs[i], "%s", pb->errs[i].msg);
	return 0;
}

int blob_put_many(blob_store *bs, blob_put_item *items, size_t n, unsigned threads,
		  pr_error *err)
{
	put_batch pb = {bs, items, NULL, NULL, NULL, NULL, NULL};
	blob_object *objs = NULL;
	size_t nobj = 0, stop;
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		if (!items[i].keyed)
			items[i].key[0] = '\0';
		items[i].created = false;
		items[i].repaired = false;
	}
	if (n == 0)
		goto out;
	if (!(pb.stored = calloc(n, sizeof(*pb.stored))) ||
	    !(pb.write = calloc(n, sizeof(*pb.write))) ||
	    !(pb.rcs = calloc(n, sizeof(*pb.rcs))) ||
	    !(pb.errs = calloc(n, sizeof(*pb.errs))) ||
	    !(pb.cctx = calloc(threads ? threads : 1, sizeof(*pb.cctx))) ||
	    !(objs = calloc(n, sizeof(*objs)))) {
		rc = pr_error_set(err, PR_ENOMEM, "cannot store %zu blobs: out of memory", n);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		buf_init(&pb.stored[i], SIZE_MAX);
	/* One blob gains nothing from a batch, whose flushes sync a whole filesystem. */
	if (!bs->ops->put_many || n == 1) {
		/*
		 * One after another (S3), the batch stops at the first failure:
		 * the rest would not be kept, and a store that does not answer
		 * cost every later item all its tries (3 timeouts each) before
		 * the failure that was already known was reported.
		 */
		if (threads <= 1)
			for (size_t i = 0; i < n && (i == 0 || pb.rcs[i - 1] == 0); i++)
				batch_put_one(&pb, i, 0);
		else
			run_threads(n, threads, batch_put_one, &pb);
		rc = first_failure(&pb, n, err);
		goto out;
	}
	run_threads(n, threads, batch_prepare, &pb);
	/*
	 * The items before the first that failed are written, so that a
	 * failure of an earlier one to write is the one reported.
	 */
	for (stop = 0; stop < n && pb.rcs[stop] == 0; stop++)
		if (pb.write[stop])
			objs[nobj++] = (blob_object){items[stop].key, pb.stored[stop].ptr,
						     pb.stored[stop].len, &items[stop].created};
	if (nobj && (rc = bs->ops->put_many(bs->impl, objs, nobj, err)) < 0)
		goto out;
	rc = first_failure(&pb, n, err);
out:
	if (rc < 0)
		for (size_t i = 0; i < n; i++)
			items[i].created = false;
	for (size_t i = 0; pb.stored && i < n; i++)
		buf_release(&pb.stored[i]);
	free(pb.stored);
	free(pb.write);
	free(pb.rcs);
	free(pb.errs);
	for (unsigned t = 0; pb.cctx && t < (threads ? threads : 1); t++)
		ZSTD_freeCCtx(pb.cctx[t]);
	free(pb.cctx);
	free(objs);
	return rc;
}

int blob_get(blob_store *bs, const char *key, buf *out, size_t max,
	     pr_error *err)
{
	buf stored = BUF_INIT;
	size_t bound = SIZE_MAX;
	int rc = 0;

	reuse(out, max);
	if ((rc = check_key(key, err)) < 0)
		goto out;
	/* No frame we wrote for at most `max` bytes is bigger than this. */
	if (max < (size_t)ZSTD_MAX_INPUT_SIZE && ZSTD_compressBound(max) < SIZE_MAX - 64)
		bound = ZSTD_compressBound(max) + 64;
	if ((rc = bs->ops->get(bs->impl, key, &stored, bound, err)) < 0)
		goto out;
	rc = blob_decode(out, key, stored.ptr, stored.len, max, err);
out:
	buf_release(&stored);
	return rc;
}

int blob_repair(blob_store *bs, const char *key, const void *data, size_t len,
		blob_repair_outcome *out, pr_error *err)
{
	char k[BLOB_KEY_HEX + 1];
	bool there = false, ok = true;
	int rc;

	*out = BLOB_REPAIR_INTACT;
	if ((rc = check_key(key, err)) < 0)
		return rc;
	if (bs->ops->replace) {
		rc = check_stored(bs, key, len, &ok, err);
		if (rc == 0 && ok)
			return 0;
		if (rc == 0) {
			if ((rc = bytes_are(key, data, len, err)) == 0 &&
			    (rc = replace_stored(bs, NULL, key, data, len, err)) == 0)
				*out = BLOB_REPAIR_REPLACED;
			return rc;
		}
		if (rc != PR_ENOTFOUND)
			return rc;
	} else if ((rc = bs->ops->exists(bs->impl, key, &there, err)) < 0 || there) {
		return rc;
	}
	memcpy(k, key, sizeof(k));
	if ((rc = bytes_are(key, data, len, err)) == 0 &&
	    (rc = put_one(bs, k, true, data, len, NULL, NULL, err)) == 0)
		*out = BLOB_REPAIR_RESTORED;
	return rc;
}

int blob_exists(blob_store *bs, const char *key, bool *out, pr_error *err)
{
	int rc;

	*out = false;
	if ((rc = check_key(key, err)) < 0)
		return rc;
	return bs->ops->exists(bs->impl, key, out, err);
}

int blob_delete(blob_store *bs, const char *key, pr_error *err)
{
	int rc;

	if ((rc = check_key(key, err)) < 0)
		return rc;
	return bs->ops->del(bs->impl, key, err);
}

uint64_t blob_delete_linger_us(const blob_store *bs)
{
	return bs && bs->ops->delete_linger_us ? bs->ops->delete_linger_us(bs->impl) : 0;
}

int blob_stored_size(blob_store *bs, const char *key, uint64_t *out,
		     pr_error *err)
{
	int rc;

	*out = 0;
	if ((rc = check_key(key, err)) < 0)
		return rc;
	return bs->ops->size(bs->impl, key, out, err);
}

int blob_store_list(blob_store *bs, blob_list_fn fn, void *ud, pr_error *err)
{
	if (!bs->ops->list)
		return pr_error_set(err, PR_EUSAGE, "cannot list blob store '%s': not supported",
				    bs->describe);
	return bs->ops->list(bs->impl, fn, ud, err);
}

int blob_stat(blob_store *bs, const char *key, blob_entry *out, pr_error *err)
{
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = check_key(key, err)) < 0)
		return rc;
	if (!bs->ops->stat)
		return pr_error_set(err, PR_EUSAGE, "cannot look at blob '%s' in '%s': not "
				    "supported", key, bs->describe);
	return bs->ops->stat(bs->impl, key, out, err);
}

int blob_store_temps(blob_store *bs, uint64_t *files, uint64_t *bytes, pr_error *err)
{
	*files = *bytes = 0;
	return bs->ops->temps ? bs->ops->temps(bs->impl, files, bytes, err) : 0;
}

const char *blob_store_kind(blob_store *bs)
{
	return bs->ops->kind ? bs->ops->kind : "?";
}

int blob_copy(blob_store *dst, blob_store *src, const char *key, size_t max, bool *created,
	      pr_error *err)
{
	buf stored = BUF_INIT, plain = BUF_INIT;
	size_t bound = SIZE_MAX;
	bool made = false, damaged = false;
	int rc;

	if (created)
		*created = false;
	if ((rc = check_key(key, err)) < 0)
		goto out;
	/*
	 * Never replaced: what `dst` holds already stays (and is made young),
	 * unless its size is not the source's and it does not check. A copy
	 * cut short (a migration killed mid-upload, on a server that kept the
	 * part it got) was counted as there on every rerun, and read back as
	 * damage.
	 */
	if ((rc = dst->ops->exists(dst->impl, key, &made, err)) < 0)
		goto out;
	if (made && dst->ops->size && src->ops->size) {
		uint64_t have = 0, want = 0;
		if ((rc = dst->ops->size(dst->impl, key, &have, err)) < 0 ||
		    (rc = src->ops->size(src->impl, key, &want, err)) < 0)
			goto out;
		/*
		 * Another size is damage only if the copy does not check: another
		 * machine's zstd may have compressed the same bytes otherwise.
		 */
		if (have != want) {
			/*
			 * Read within the source's bound; a read that fails (a
			 * timeout) is the copy's error, never a reason to replace.
			 */
			pr_error e = PR_ERROR_INIT;
			buf mine = BUF_INIT;
			size_t cap = max < (size_t)ZSTD_MAX_INPUT_SIZE &&
						     ZSTD_compressBound(max) < SIZE_MAX - 64
					     ? ZSTD_compressBound(max) + 64
					     : SIZE_MAX;
			if (have > cap)
				damaged = true;
			else if ((rc = dst->ops->get(dst->impl, key, &mine, cap, err)) == 0)
				damaged = blob_decode(&plain, key, mine.ptr, mine.len, max, &e) < 0;
			else if (rc == PR_ENOTFOUND) { /* gone since: copied as if never there */
				rc = 0;
				made = false;
				pr_error_clear(err);
			} else {
				buf_release(&mine);
				goto out;
			}
			buf_release(&mine);
			buf_release(&plain);
		}
	}
	if (made && !damaged) {
		made = false;
		if (dst->ops->touch)
			rc = dst->ops->touch(dst->impl, key, err);
		goto out;
	}
	made = false;
	if (max < (size_t)ZSTD_MAX_INPUT_SIZE && ZSTD_compressBound(max) < SIZE_MAX - 64)
		bound = ZSTD_compressBound(max) + 64;
	if ((rc = src->ops->get(src->impl, key, &stored, bound, err)) < 0 ||
	    (rc = blob_decode(&plain, key, stored.ptr, stored.len, max, err)) < 0)
		goto out;
	buf_release(&plain);
	if (damaged) {
		/* The source checked out: its bytes take the damaged copy's place. */
		if (dst->ops->replace)
			rc = dst->ops->replace(dst->impl, key, stored.ptr, stored.len, err);
		else if ((rc = dst->ops->del(dst->impl, key, err)) == 0)
			rc = dst->ops->put(dst->impl, key, stored.ptr, stored.len, &made, err);
		made = rc == 0;
	} else {
		rc = dst->ops->put(dst->impl, key, stored.ptr, stored.len, &made, err);
	}
	if (rc < 0)
		goto out;
	if (created)
		*created = made;
out:
	buf_release(&stored);
	buf_release(&plain);
	return rc;
}

int blob_store_sweep_temp(blob_store *bs, unsigned *removed, pr_error *err)
{
	unsigned dummy = 0;

	if (!removed)
		removed = &dummy;
	*removed = 0;
	if (!bs->ops->sweep)
		return 0;
	return bs->ops->sweep(bs->impl, removed, err);
}

/* The local directory backend */

typedef struct dir_store {
	char *shards; /* <root>/sha256 */
} dir_store;

static int fsync_dir(const char *path)
{
	int fd, rc;

	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

/* `dir` gets <shards>/ab, `file` gets <shards>/ab/cdef....zst. */
static int dir_paths(dir_store *d, const char *key, buf *dir, buf *file,
		     pr_error *err)
{
	if (buf_printf(dir, "%s/%.2s", d->shards, key) < 0 ||
	    buf_printf(file, "%s/%s%s", dir->ptr, key + 2, BLOB_SUFFIX) < 0)
		return pr_error_set(err, PR_ENOMEM, "cannot use blob '%s': out of memory", key);
	return 0;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Make the shard folder `dir`. A new one is synced into <shards> when
 * `sync`; a batch syncs the whole filesystem later instead.
 */
static int shard_dir(dir_store *d, const char *dir, bool sync, pr_error *err)
{
	if (mkdir(dir, 0700) == 0) {
		if (sync && fsync_dir(d->shards) < 0)
			return pr_error_set(err, PR_EIO, "cannot sync '%s': %s", d->shards,
					    strerror(errno));
	} else if (errno != EEXIST) {
		return pr_error_set(err, PR_EIO, "cannot create '%s': %s", dir, strerror(errno));
	}
	return 0;
}

/* A new temporary file beside `path`, its name into `tmp`: mkstemp's fd, or -1 and errno. */
static int temp_open(const char *path, buf *tmp)
{
	buf_reset(tmp);
	if (buf_printf(tmp, "%s" BLOB_TEMP_MARK "XXXXXX", path) < 0) {
		errno = ENOMEM;
		return -1;
	}
	return mkstemp(tmp->ptr);
}

/*
 * Write `len` bytes into a new temporary file beside `path`, in the shard
 * folder `dir`, mode 0600, its name into `tmp`. The folder is made only
 * when the file cannot be created for want of it: nearly every shard of a
 * store in use exists, and a mkdir a blob (failing with EEXIST) cost a
 * path walk each time. A put alone (`root` NULL) syncs the file and a new
 * folder; a batch's file is synced only when its folder lies on another
 * filesystem than <shards>, whose device is *root (*apart says so), as
 * the batch syncs that filesystem whole. On failure nothing is left and
 * `tmp` is empty.
 */
static int temp_write(dir_store *d, const char *key, const char *dir, const char *path,
		      const void *data, size_t len, const dev_t *root, bool *apart, buf *tmp,
		      pr_error *err)
{
	struct stat st;
	bool made = false;
	int fd = -1, rc = 0;

	*apart = false;
	if ((fd = temp_open(path, tmp)) < 0 && errno == ENOENT) {
		if ((rc = shard_dir(d, dir, !root, err)) < 0)
			goto out;
		fd = temp_open(path, tmp);
	}
	if (fd < 0) {
		if (errno == ENOMEM)
			rc = pr_error_set(err, PR_ENOMEM, "cannot store blob '%s': out of memory",
					  key);
		else
			rc = pr_error_set(err, PR_EIO,
					  "cannot store blob '%s': cannot create '%s': %s", key,
					  tmp->ptr, strerror(errno));
		goto out;
	}
	made = true;
	if (root) {
		if (fstat(fd, &st) < 0) {
			rc = pr_error_set(err, PR_EIO,
					  "cannot store blob '%s': cannot look at '%s': %s", key,
					  tmp->ptr, strerror(errno));
			goto out;
		}
		*apart = st.st_dev != *root;
	}
	if (fchmod(fd, 0600) < 0 || write_all(fd, data, len) < 0 ||
	    ((!root || *apart) && fsync(fd) < 0)) {
		rc = pr_error_set(err, PR_EIO, "cannot store blob '%s': cannot write '%s': %s",
				  key, tmp->ptr, strerror(errno));
		goto out;
	}
	rc = close(fd);
	fd = -1;
	if (rc < 0)
		rc = pr_error_set(err, PR_EIO, "cannot store blob '%s': cannot write '%s': %s",
				  key, tmp->ptr, strerror(errno));
out:
	if (fd >= 0)
		close(fd);
	if (rc < 0 && made)
		unlink(tmp->ptr);
	if (rc < 0)
		buf_reset(tmp);
	return rc;
}

/*
 * Give the temporary `tmp`, whose bytes are durable, the blob's name
 * `path`: link() rather than rename(), because link refuses to replace an
 * existing name, so two writers racing on one key can never replace a
 * blob, and the loser learns the blob was already there. On success the
 * temporary is gone; on failure it may remain, for the caller to remove.
 */
static int temp_place(const char *key, const char *tmp, const char *path, bool *created,
		      pr_error *err)
{
	struct stat st;

	*created = false;
	if (link(tmp, path) == 0) {
		*created = true;
	} else if (errno == EEXIST) {
		/* Another writer won: its blob is ours, and as young. Nothing else is. */
		if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
			return pr_error_set(err, PR_EIO, "cannot store blob '%s': '%s' is there "
					    "and is not a regular file", key, path);
		if (utimensat(AT_FDCWD, path, NULL, AT_SYMLINK_NOFOLLOW) < 0 && errno != ENOENT)
			return pr_error_set(err, PR_EIO, "cannot touch blob '%s' at '%s': %s",
					    key, path, strerror(errno));
	} else if (errno != EPERM && errno != ENOTSUP && errno != EOPNOTSUPP && errno != ENOSYS) {
		return pr_error_set(err, PR_EIO, "cannot store blob '%s': cannot link '%s': %s",
				    key, path, strerror(errno));
	} else if (lstat(path, &st) < 0) {
		/* No hard links here: the check and the rename can race, but a
		 * racing writer can only put the very same bytes in place. */
		if (rename(tmp, path) < 0)
			return pr_error_set(err, PR_EIO,
				"cannot store blob '%s': cannot rename '%s': %s", key, tmp,
				strerror(errno));
		/* The temporary is the blob now. */
		*created = true;
		return 0;
	}
	if (unlink(tmp) < 0 && errno != ENOENT)
		return pr_error_set(err, PR_EIO, "cannot remove '%s': %s", tmp, strerror(errno));
	return 0;
}

/*
 * Temp file, fsync, then into place and fsync of the folder: linked (a
 * link never replaces a blob) or, to repair a damaged blob, renamed over
 * it (`replace`: rename replaces the name in one step).
 */
static int dir_write(dir_store *d, const char *key, const void *data, size_t len, bool replace,
		     bool *created, pr_error *err)
{
	buf dir = BUF_INIT, path = BUF_INIT, tmp = BUF_INIT;
	bool apart;
	int rc = 0;

	*created = false;
	if ((rc = dir_paths(d, key, &dir, &path, err)) < 0 ||
	    (rc = temp_write(d, key, dir.ptr, path.ptr, data, len, NULL, &apart, &tmp, err)) < 0)
		goto out;
	if (!replace && (rc = temp_place(key, tmp.ptr, path.ptr, created, err)) < 0)
		goto out;
	if (replace && rename(tmp.ptr, path.ptr) < 0) {
		rc = pr_error_set(err, PR_EIO, "cannot repair blob '%s': cannot rename '%s': %s",
				  key, tmp.ptr, strerror(errno));
		goto out;
	}
	buf_reset(&tmp);
	if (fsync_dir(dir.ptr) < 0)
		rc = pr_error_set(err, PR_EIO, "cannot sync '%s': %s", dir.ptr, strerror(errno));
out:
	/* Not placed: still there. */
	if (tmp.len)
		unlink(tmp.ptr);
	buf_release(&dir);
	buf_release(&path);
	buf_release(&tmp);
	return rc;
}

static int dir_put(void *impl, const char *key, const void *data, size_t len,
		   bool *created, pr_error *err)
{
	return dir_write(impl, key, data, len, false, created, err);
}

static int dir_replace(void *impl, const char *key, const void *data, size_t len, pr_error *err)
{
	bool created;

	return dir_write(impl, key, data, len, true, &created, err);
}

/*
 * syncfs(2) reports the writeback errors of its filesystem only since
 * Linux 5.8: before, a batch synced that way could not know that its
 * bytes never reached the disk, so older kernels put blob after blob.
 */
static bool syncfs_reports_errors(void)
{
	struct utsname u;
	unsigned major = 0, minor = 0;

	if (uname(&u) < 0 || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		return false;
	return major > 5 || (major == 5 && minor >= 8);
}

/*
 * The batch: every temporary written unsynced, the filesystem synced once
 * (the bytes durable before any name points at them), every temporary
 * linked into place, the filesystem synced again (the names durable).
 * Each sync waits for the disk once for the whole batch, where fsyncs
 * wait once a file and once a folder. A shard folder that lies on
 * another filesystem than <shards> (moved there by hand) is not reached
 * by those syncs: its files and the folder itself are fsynced as dir_put
 * does.
 */
static int dir_put_many(void *impl, const blob_object *objs, size_t n, pr_error *err)
{
	dir_store *d = impl;
	buf dir = BUF_INIT, path = BUF_INIT, *tmps = NULL;
	bool *apart = NULL;
	struct stat root;
	int fd = -1, rc = 0;

	if (!(tmps = calloc(n, sizeof(*tmps))) || !(apart = calloc(n, sizeof(*apart)))) {
		rc = pr_error_set(err, PR_ENOMEM, "cannot store %zu blobs: out of memory", n);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		buf_init(&tmps[i], SIZE_MAX);
	/*
	 * Opened before anything is written: syncfs on it reports every
	 * writeback error of the filesystem since, whoever else syncs it.
	 */
	if ((fd = open(d->shards, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    fstat(fd, &root) < 0) {
		rc = pr_error_set(err, PR_EIO, "cannot store blob '%s': cannot open '%s': %s",
				  objs[0].key, d->shards, strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const char *key = objs[i].key;

		buf_reset(&dir);
		buf_reset(&path);
		if ((rc = dir_paths(d, key, &dir, &path, err)) < 0 ||
		    (rc = temp_write(d, key, dir.ptr, path.ptr, objs[i].data, objs[i].len,
				     &root.st_dev, &apart[i], &tmps[i], err)) < 0)
			goto out;
	}
	if (syncfs(fd) < 0) {
		rc = pr_error_set(err, PR_EIO, "cannot store blob '%s': cannot sync '%s': %s",
				  objs[0].key, d->shards, strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		buf_reset(&dir);
		buf_reset(&path);
		if ((rc = dir_paths(d, objs[i].key, &dir, &path, err)) < 0 ||
		    (rc = temp_place(objs[i].key, tmps[i].ptr, path.ptr, objs[i].created,
				     err)) < 0)
			goto out;
		buf_reset(&tmps[i]);
		if (apart[i] && fsync_dir(dir.ptr) < 0) {
			rc = pr_error_set(err, PR_EIO, "cannot sync '%s': %s", dir.ptr,
					  strerror(errno));
			goto out;
		}
	}
	if (syncfs(fd) < 0)
		rc = pr_error_set(err, PR_EIO, "cannot store blob '%s': cannot sync '%s': %s",
				  objs[0].key, d->shards, strerror(errno));
out:
	for (size_t i = 0; tmps && i < n; i++) {
		/* Not placed: still there. */
		if (tmps[i].len)
			unlink(tmps[i].ptr);
		buf_release(&tmps[i]);
	}
	if (fd >= 0)
		close(fd);
	free(tmps);
	free(apart);
	buf_release(&dir);
	buf_release(&path);
	return rc;
}

static int dir_get(void *impl, const char *key, buf *out, size_t max,
		   pr_error *err)
{
	dir_store *d = impl;
	buf dir = BUF_INIT, path = BUF_INIT;
	char chunk[65536];
	struct stat st;
	int fd = -1, rc = 0;

	buf_release(out);
	out->max = max;
	if ((rc = dir_paths(d, key, &dir, &path, err)) < 0)
		goto out;
	/* O_NOFOLLOW: a blob is a regular file we wrote, never a link. */
	if ((fd = open(path.ptr, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			rc = pr_error_set(err, PR_ENOTFOUND, "blob '%s' not found", key);
		else if (errno == ELOOP)
			rc = pr_error_set(err, PR_EDATA,
					  "blob '%s' is corrupt: '%s' is a symbolic link", key,
					  path.ptr);
		else
			rc = pr_error_set(err, PR_EIO, "cannot read blob '%s' from '%s': %s",
					  key, path.ptr, strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		rc = pr_error_set(err, PR_EIO, "cannot read blob '%s' from '%s': %s",
				  key, path.ptr, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = pr_error_set(err, PR_EDATA, "blob '%s' is corrupt: '%s' is not a regular file",
				  key, path.ptr);
		goto out;
	}
	if ((uintmax_t)st.st_size > (uintmax_t)max) {
		rc = pr_error_set(err, PR_ELIMIT,
			"blob '%s' is over the size limit: %jd bytes stored, at most %zu expected",
			key, (intmax_t)st.st_size, max);
		goto out;
	}
	if ((rc = buf_grow(out, (size_t)st.st_size)) < 0) {
		rc = pr_error_set(err, rc, "cannot read blob '%s': out of memory", key);
		goto out;
	}
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = pr_error_set(err, PR_EIO, "cannot read blob '%s' from '%s': %s",
					  key, path.ptr, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		if ((rc = buf_put(out, chunk, (size_t)n)) < 0) {
			if (rc == PR_ELIMIT)
				rc = pr_error_set(err, rc,
					"blob '%s' is over the size limit: more "
					"than %zu bytes stored",
					key, max);
			else
				rc = pr_error_set(err, rc, "cannot read blob '%s': out of memory",
						  key);
			goto out;
		}
	}
out:
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		buf_release(out);
	buf_release(&dir);
	buf_release(&path);
	return rc;
}

static int dir_exists(void *impl, const char *key, bool *out, pr_error *err)
{
	dir_store *d = impl;
	buf dir = BUF_INIT, path = BUF_INIT;
	struct stat st;
	int rc = 0;

	*out = false;
	if ((rc = dir_paths(d, key, &dir, &path, err)) < 0)
		goto out;
	/*
	 * Anything at the name counts, a link or a folder too: taken for no
	 * blob, a put then found the name taken, took that for another
	 * writer's blob and let a row rest on what cannot be read. Found, it
	 * fails its check and a put replaces it (or says why it cannot).
	 */
	if (lstat(path.ptr, &st) == 0)
		*out = true;
	else if (errno != ENOENT && errno != ENOTDIR)
		rc = pr_error_set(err, PR_EIO, "cannot look for blob '%s' at '%s': %s",
				  key, path.ptr, strerror(errno));
out:
	buf_release(&dir);
	buf_release(&path);
	return rc;
}

static int dir_del(void *impl, const char *key, pr_error *err)
{
	dir_store *d = impl;
	buf dir = BUF_INIT, path = BUF_INIT;
	int rc = 0;

	if ((rc = dir_paths(d, key, &dir, &path, err)) < 0)
		goto out;
	if (unlink(path.ptr) < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			rc = pr_error_set(err, PR_EIO, "cannot delete blob '%s' at '%s': %s",
					  key, path.ptr, strerror(errno));
		goto out;
	}
	if (fsync_dir(dir.ptr) < 0)
		rc = pr_error_set(err, PR_EIO, "cannot sync '%s': %s", dir.ptr, strerror(errno));
out:
	buf_release(&dir);
	buf_release(&path);
	return rc;
}

static int dir_touch(void *impl, const char *key, pr_error *err)
{
	dir_store *d = impl;
	buf dir = BUF_INIT, path = BUF_INIT;
	int rc = 0;

	if ((rc = dir_paths(d, key, &dir, &path, err)) < 0)
		goto out;
	if (utimensat(AT_FDCWD, path.ptr, NULL, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			rc = pr_error_set(err, PR_ENOTFOUND, "blob '%s' not found", key);
		else
			rc = pr_error_set(err, PR_EIO, "cannot touch blob '%s' at '%s': %s", key,
					  path.ptr, strerror(errno));
	}
out:
	buf_release(&dir);
	buf_release(&path);
	return rc;
}

static int dir_size(void *impl, const char *key, uint64_t *out, pr_error *err)
{
	dir_store *d = impl;
	buf dir = BUF_INIT, path = BUF_INIT;
	struct stat st;
	int rc = 0;

	*out = 0;
	if ((rc = dir_paths(d, key, &dir, &path, err)) < 0)
		goto out;
	if (lstat(path.ptr, &st) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			rc = pr_error_set(err, PR_ENOTFOUND, "blob '%s' not found", key);
		else
			rc = pr_error_set(err, PR_EIO, "cannot look for blob '%s' at '%s': %s",
					  key, path.ptr, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = pr_error_set(err, PR_ENOTFOUND, "blob '%s' not found", key);
		goto out;
	}
	*out = (uint64_t)st.st_size;
out:
	buf_release(&dir);
	buf_release(&path);
	return rc;
}

static bool is_shard_name(const char *name)
{
	return strlen(name) == 2 &&
	       ((name[0] >= '0' && name[0] <= '9') || (name[0] >= 'a' && name[0] <= 'f')) &&
	       ((name[1] >= '0' && name[1] <= '9') || (name[1] >= 'a' && name[1] <= 'f'));
}

/* Remove old temporaries from one shard folder (an open fd, taken over). */
static int sweep_shard(int fd, const char *path, time_t cutoff,
		       unsigned *removed, pr_error *err)
{
	DIR *dh = NULL;
	struct dirent *de;
	unsigned before = *removed;
	int rc = 0;

	if (!(dh = fdopendir(fd))) {
		rc = pr_error_set(err, PR_EIO, "cannot list '%s': %s", path, strerror(errno));
		close(fd);
		goto out;
	}
	while ((errno = 0, de = readdir(dh))) {
		struct stat st;

		if (!strstr(de->d_name, BLOB_TEMP_MARK))
			continue;
		if (fstatat(dirfd(dh), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				continue;
			rc = pr_error_set(err, PR_EIO, "cannot inspect '%s/%s': %s",
					  path, de->d_name, strerror(errno));
			goto out;
		}
		if (!S_ISREG(st.st_mode) || st.st_mtime >= cutoff)
			continue;
		if (unlinkat(dirfd(dh), de->d_name, 0) < 0) {
			if (errno == ENOENT)
				continue;
			rc = pr_error_set(err, PR_EIO, "cannot remove '%s/%s': %s",
					  path, de->d_name, strerror(errno));
			goto out;
		}
		(*removed)++;
	}
	if (errno) {
		rc = pr_error_set(err, PR_EIO, "cannot list '%s': %s", path, strerror(errno));
		goto out;
	}
	if (*removed != before && fsync(dirfd(dh)) < 0)
		rc = pr_error_set(err, PR_EIO, "cannot sync '%s': %s", path, strerror(errno));
out:
	if (dh)
		closedir(dh);
	return rc;
}

static int dir_sweep(void *impl, unsigned *removed, pr_error *err)
{
	dir_store *d = impl;
	DIR *dh = NULL;
	struct dirent *de;
	buf shard = BUF_INIT;
	time_t cutoff = time(NULL) - BLOB_TEMP_AGE;
	int rc = 0;

	if (!(dh = opendir(d->shards))) {
		rc = pr_error_set(err, PR_EIO, "cannot list '%s': %s", d->shards, strerror(errno));
		goto out;
	}
	while ((errno = 0, de = readdir(dh))) {
		int fd;

		if (!is_shard_name(de->d_name))
			continue;
		fd = openat(dirfd(dh), de->d_name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP)
				continue;
			rc = pr_error_set(err, PR_EIO, "cannot open '%s/%s': %s",
					  d->shards, de->d_name, strerror(errno));
			goto out;
		}
		buf_reset(&shard);
		if (buf_printf(&shard, "%s/%s", d->shards, de->d_name) < 0) {
			close(fd);
			rc = pr_error_set(err, PR_ENOMEM, "cannot sweep '%s': out of memory",
					  d->shards);
			goto out;
		}
		if ((rc = sweep_shard(fd, shard.ptr, cutoff, removed, err)) < 0)
			goto out;
	}
	if (errno)
		rc = pr_error_set(err, PR_EIO, "cannot list '%s': %s", d->shards, strerror(errno));
out:
	if (dh)
		closedir(dh);
	buf_release(&shard);
	return rc;
}

static int64_t mtime_us_of(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000 + st->st_mtim.tv_nsec / 1000;
}

static int dir_stat(void *impl, const char *key, blob_entry *out, pr_error *err)
{
	dir_store *d = impl;
	buf dir = BUF_INIT, path = BUF_INIT;
	struct stat st;
	int rc = 0;

	if ((rc = dir_paths(d, key, &dir, &path, err)) < 0)
		goto out;
	if (lstat(path.ptr, &st) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			rc = pr_error_set(err, PR_ENOTFOUND, "blob '%s' not found", key);
		else
			rc = pr_error_set(err, PR_EIO, "cannot look for blob '%s' at '%s': %s",
					  key, path.ptr, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = pr_error_set(err, PR_ENOTFOUND, "blob '%s' not found", key);
		goto out;
	}
	memcpy(out->key, key, BLOB_KEY_HEX + 1);
	out->size = (uint64_t)st.st_size;
	out->mtime_us = mtime_us_of(&st);
out:
	buf_release(&dir);
	buf_release(&path);
	return rc;
}

static bool is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/*
 * Walk <shards>/ab/: blobs to `fn` (when not NULL), temporaries counted
 * into files/bytes (when not NULL).
 */
static int dir_walk(dir_store *d, blob_list_fn fn, void *ud, uint64_t *tfiles,
		    uint64_t *tbytes, pr_error *err)
{
	buf path = BUF_INIT;
	DIR *top = NULL, *sub = NULL;
	struct dirent *e, *f;
	int rc = 0;

	if (!(top = opendir(d->shards))) {
		if (errno != ENOENT)
			rc = pr_error_set(err, PR_EIO, "cannot list '%s': %s", d->shards,
					  strerror(errno));
		goto out;
	}
	while (rc == 0 && (errno = 0, e = readdir(top))) {
		size_t base;

		if (!is_shard_name(e->d_name))
			continue;
		buf_reset(&path);
		if (buf_printf(&path, "%s/%s/", d->shards, e->d_name) < 0) {
			rc = pr_error_set(err, PR_ENOMEM, "cannot list '%s': out of memory",
					  d->shards);
			break;
		}
		base = path.len;
		if (!(sub = opendir(path.ptr)))
			continue; /* removed under us, or not a folder */
		while (rc == 0 && (f = readdir(sub))) {
			struct stat st;
			size_t len = strlen(f->d_name);
			bool temp = strstr(f->d_name, BLOB_TEMP_MARK) != NULL;
			bool blob = len == BLOB_KEY_HEX - 2 + strlen(BLOB_SUFFIX) &&
				    strcmp(f->d_name + BLOB_KEY_HEX - 2, BLOB_SUFFIX) == 0 &&
				    is_hex(f->d_name, BLOB_KEY_HEX - 2);
			blob_entry be;

			if (!(blob && fn) && !(temp && tfiles))
				continue;
			path.len = base;
			if (buf_puts(&path, f->d_name) < 0) {
				rc = pr_error_set(err, PR_ENOMEM,
						  "cannot list '%s': out of memory", d->shards);
				break;
			}
			if (lstat(path.ptr, &st) < 0 || !S_ISREG(st.st_mode))
				continue;
			if (temp) {
				(*tfiles)++;
				*tbytes += (uint64_t)st.st_size;
				continue;
			}
			memcpy(be.key, e->d_name, 2);
			memcpy(be.key + 2, f->d_name, BLOB_KEY_HEX - 2);
			be.key[BLOB_KEY_HEX] = '\0';
			be.size = (uint64_t)st.st_size;
			be.mtime_us = mtime_us_of(&st);
			rc = fn(ud, &be, err);
		}
		closedir(sub);
		sub = NULL;
	}
	if (rc == 0 && errno)
		rc = pr_error_set(err, PR_EIO, "cannot list '%s': %s", d->shards, strerror(errno));
out:
	if (top)
		closedir(top);
	buf_release(&path);
	return rc;
}

static int dir_list(void *impl, blob_list_fn fn, void *ud, pr_error *err)
{
	return dir_walk(impl, fn, ud, NULL, NULL, err);
}

static int dir_temps(void *impl, uint64_t *files, uint64_t *bytes, pr_error *err)
{
	return dir_walk(impl, NULL, NULL, files, bytes, err);
}

static void dir_close(void *impl)
{
	dir_store *d = impl;

	if (!d)
		return;
	free(d->shards);
	free(d);
}

static const blob_store_ops dir_ops = {
	.put = dir_put,
	.get = dir_get,
	.exists = dir_exists,
	.del = dir_del,
	.size = dir_size,
	.touch = dir_touch,
	.sweep = dir_sweep,
	.close = dir_close,
	.list = dir_list,
	.stat = dir_stat,
	.temps = dir_temps,
	.kind = "dir",
	.put_many = dir_put_many,
	.replace = dir_replace,
};

/* The same without batches, where syncfs cannot be trusted. */
static const blob_store_ops dir_ops_each = {
	.put = dir_put,
	.get = dir_get,
	.exists = dir_exists,
	.del = dir_del,
	.size = dir_size,
	.touch = dir_touch,
	.sweep = dir_sweep,
	.close = dir_close,
	.list = dir_list,
	.stat = dir_stat,
	.temps = dir_temps,
	.kind = "dir",
	.put_many = NULL,
	.replace = dir_replace,
};

int blob_store_open_dir(blob_store **out, const char *root, pr_error *err)
{
	dir_store *d = NULL;
	buf b = BUF_INIT;
	char *real = NULL;
	struct stat st;
	int rc = 0;

	*out = NULL;
	if (!root || !*root) {
		rc = pr_error_set(err, PR_EUSAGE, "cannot open blob store: no directory given");
		goto out;
	}
	if ((rc = fileio_mkdirs(root, 0700, err)) < 0)
		goto out;
	/* Absolute, so a later chdir cannot move the store. */
	if (!(real = realpath(root, NULL))) {
		rc = pr_error_set(err, PR_EIO, "cannot open blob store '%s': %s", root,
				  strerror(errno));
		goto out;
	}
	if (stat(real, &st) < 0 || !S_ISDIR(st.st_mode)) {
		rc = pr_error_set(err, PR_EIO, "cannot open blob store '%s': not a directory",
				  root);
		goto out;
	}
	if (!(d = calloc(1, sizeof(*d))) ||
	    buf_printf(&b, "%s/%s", strcmp(real, "/") ? real : "", BLOB_SHARDS) < 0 ||
	    !(d->shards = strdup(b.ptr))) {
		rc = pr_error_set(err, PR_ENOMEM, "cannot open blob store '%s': out of memory",
				  root);
		goto out;
	}
	if (mkdir(d->shards, 0700) == 0) {
		if (fsync_dir(real) < 0) {
			rc = pr_error_set(err, PR_EIO, "cannot sync '%s': %s", real,
					  strerror(errno));
			goto out;
		}
	} else if (errno != EEXIST) {
		rc = pr_error_set(err, PR_EIO, "cannot create '%s': %s", d->shards,
				  strerror(errno));
		goto out;
	}
	buf_reset(&b);
	if (buf_printf(&b, "dir:%s", real) < 0) {
		rc = pr_error_set(err, PR_ENOMEM, "cannot open blob store '%s': out of memory",
				  root);
		goto out;
	}
	rc = blob_store_new(out, syncfs_reports_errors() ? &dir_ops : &dir_ops_each, d, b.ptr,
			    err);
	d = NULL;
out:
	dir_close(d);
	free(real);
	buf_release(&b);
	return rc;
}
