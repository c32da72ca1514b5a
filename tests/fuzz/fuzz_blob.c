/*
 * fuzz_blob.c: the blob store's stored form.
 *
 * The input is taken as a stored object (what sits in a .zst file) and
 * decoded under two limits: it must fail cleanly or hand back bytes that
 * hash to the key, never expand past the limit, and always leave the
 * output empty on failure. The input is also taken as original bytes:
 * encoding then decoding must give them back exactly, and one byte less
 * of limit must fail with PR_ELIMIT.
 *
 * Seeds (tests/fuzz/corpus/blob/), made with the zstd command line tool:
 * empty.zst and folded-text.zst (`zstd -3 --check` of "" and two folded
 * stack lines), repetitive-*.zst (20000 bytes of one repeated folded line
 * at -3 --no-check and -19 --check), two-frames.zst (two frames one after
 * the other), random-no-size.zst (3000 random bytes, --no-content-size),
 * and rle-256k.zst, written by hand: two 128 KiB RLE blocks of 'A' with a
 * 128 KiB window and no content size.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/blob.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_failure(int rc, const pr_error *err, const buf *out,
			  const char *key)
{
	if (err->code != rc || out->len != 0 || !strstr(err->msg, key))
		abort();
	if (rc != PR_EDATA && rc != PR_ELIMIT && rc != PR_ENOMEM)
		abort();
}

static void decode_stored(const uint8_t *data, size_t size, size_t max)
{
	/* SHA-256 of "", so short frames can succeed as well as fail. */
	static const char key[] =
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
	pr_error err = PR_ERROR_INIT;
	buf out = BUF_INIT;
	int rc;

	rc = blob_decode(&out, key, data, size, max, &err);
	if (rc < 0)
		check_failure(rc, &err, &out, key);
	else if (out.len != 0 || err.code != 0)
		abort();
	buf_release(&out);
}

static void round_trip(const uint8_t *data, size_t size)
{
	char key[BLOB_KEY_HEX + 1];
	pr_error err = PR_ERROR_INIT;
	buf stored = BUF_INIT, out = BUF_INIT;
	int rc;

	if (blob_key_of(key, data, size) < 0)
		abort();
	if (blob_encode(&stored, data, size, &err) < 0)
		abort();
	if (blob_decode(&out, key, stored.ptr, stored.len, size, &err) < 0)
		abort();
	if (out.len != size || (size && memcmp(out.ptr, data, size) != 0))
		abort();
	if (size > 0) {
		rc = blob_decode(&out, key, stored.ptr, stored.len, size - 1, &err);
		if (rc != PR_ELIMIT)
			abort();
		check_failure(rc, &err, &out, key);
	}
	buf_release(&out);
	buf_release(&stored);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	decode_stored(data, size, (size_t)1 << 20);
	decode_stored(data, size, 4096);
	round_trip(data, size);
	return 0;
}
