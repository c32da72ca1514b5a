/*
 * test_gunzip.c: bounded gzip decompression: round trips, concatenated
 * members, the exact limit, bombs, and truncated, corrupt and empty input.
 * The gzip streams are made here with zlib, so every expected byte is
 * known.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <zlib.h>

#include "common/buf.h"
#include "pipeline/gunzip.h"

#define NAME "t.pb.gz"

/* Append one gzip member holding `len` bytes of `data` to `out`. */
static void gzip_member(buf *out, const void *data, size_t len, int level)
{
	z_stream zs;
	uint8_t chunk[1 << 16];
	int zrc;

	memset(&zs, 0, sizeof(zs));
	assert_int_equal(deflateInit2(&zs, level, Z_DEFLATED, 16 + MAX_WBITS, 8,
				      Z_DEFAULT_STRATEGY), Z_OK);
	zs.next_in = (Bytef *)(uintptr_t)data;
	zs.avail_in = (uInt)len;
	do {
		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		zrc = deflate(&zs, Z_FINISH);
		assert_true(zrc == Z_OK || zrc == Z_STREAM_END || zrc == Z_BUF_ERROR);
		assert_int_equal(buf_put(out, chunk, sizeof(chunk) - zs.avail_out), 0);
	} while (zrc != Z_STREAM_END);
	deflateEnd(&zs);
}

static void gzip_str(buf *out, const char *s)
{
	gzip_member(out, s, strlen(s), 6);
}

static int gunzip(buf *out, const buf *in, size_t max, pr_error *err)
{
	return gunzip_bounded(out, (const uint8_t *)in->ptr, in->len, max, NAME, err);
}

/* Fails with `code`, names the input and says `why`; `out` is left empty. */
static void expect_error(const buf *in, size_t max, int code, const char *why)
{
	buf out = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	int rc = gunzip(&out, in, max, &err);

	if (rc != code || !strstr(err.msg, "'" NAME "'") || !strstr(err.msg, why))
		fail_msg("expected %d with '%s', got %d: %s", code, why, rc, err.msg);
	assert_int_equal(out.len, 0);
	buf_release(&out);
}

static void test_single_member_round_trips(void **state)
{
	buf in = BUF_INIT, out = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	size_t n = 3u << 20;
	uint8_t *data = malloc(n);

	(void)state;
	assert_non_null(data);
	/* Not trivially compressible, and larger than one growth step. */
	for (size_t i = 0; i < n; i++)
		data[i] = (uint8_t)((i * 2654435761u) >> 13);
	gzip_member(&in, data, n, 6);
	assert_int_equal(gunzip(&out, &in, 64u << 20, &err), 0);
	assert_int_equal(out.len, n);
	assert_memory_equal(out.ptr, data, n);
	assert_int_equal(out.ptr[out.len], '\0');
	free(data);
	buf_release(&in);
	buf_release(&out);
}

/*
 * The largest limit a caller can give (--max-decompressed-bytes of 2^64 - 1)
 * is no limit, not a loop: "one byte past the limit" wrapped to no room at
 * all, and inflate was called for ever with nowhere to write.
 */
static void test_the_largest_limit_decompresses(void **state)
{
	buf in = BUF_INIT, out = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	static const char text[] = "main;spin 5\nmain;x 1\n";

	(void)state;
	gzip_member(&in, text, sizeof(text) - 1, 6);
	assert_int_equal(gunzip(&out, &in, SIZE_MAX, &err), 0);
	assert_int_equal(out.len, sizeof(text) - 1);
	assert_memory_equal(out.ptr, text, sizeof(text) - 1);
	buf_release(&in);
	buf_release(&out);
}

static void test_concatenated_members_decompress_as_one_stream(void **state)
{
	buf in = BUF_INIT, out = BUF_INIT;
	pr_error err = PR_ERROR_INIT;

	(void)state;
	gzip_str(&in, "hello, ");
	gzip_str(&in, "");
	gzip_str(&in, "concatenated ");
	gzip_str(&in, "world");
	assert_int_equal(gunzip(&out, &in, 1024, &err), 0);
	assert_string_equal(out.ptr, "hello, concatenated world");
	assert_int_equal(out.len, strlen("hello, concatenated world"));
	buf_release(&in);
	buf_release(&out);
}

static void test_output_of_exactly_the_limit_is_accepted(void **state)
{
	buf in = BUF_INIT, out = BUF_INIT;
	pr_error err = PR_ERROR_INIT;

	(void)state;
	gzip_str(&in, "0123456789");
	assert_int_equal(gunzip(&out, &in, 10, &err), 0);
	assert_string_equal(out.ptr, "0123456789");
	buf_release(&out);
	expect_error(&in, 9, PR_ELIMIT, "decompressed size exceeds the limit of 9 bytes");
	buf_release(&in);
}

/* 1 GiB of zeros as 1024 members of 1 MiB: about 1 MB of input. */
static void test_gigabyte_bomb_stops_at_the_limit(void **state)
{
	buf member = BUF_INIT, in = BUF_INIT;
	uint8_t *zeros = calloc(1, 1u << 20);

	(void)state;
	assert_non_null(zeros);
	gzip_member(&member, zeros, 1u << 20, 9);
	for (int i = 0; i < 1024; i++)
		assert_int_equal(buf_put(&in, member.ptr, member.len), 0);
	assert_true(in.len < (2u << 20));
	expect_error(&in, 4u << 20, PR_ELIMIT,
		     "decompressed size exceeds the limit of 4194304 bytes");
	free(zeros);
	buf_release(&member);
	buf_release(&in);
}

/* One member whose trailer's size hint is a lie cannot make us reserve it. */
static void test_single_member_bomb_with_forged_size_hint_stops(void **state)
{
	buf in = BUF_INIT;
	size_t n = 32u << 20;
	uint8_t *zeros = calloc(1, n);

	(void)state;
	assert_non_null(zeros);
	gzip_member(&in, zeros, n, 1);
	expect_error(&in, 1u << 20, PR_ELIMIT,
		     "decompressed size exceeds the limit of 1048576 bytes");
	/* ISIZE says 16 bytes: the data check fails, the limit still holds. */
	memcpy(in.ptr + in.len - 4, "\x10\0\0\0", 4);
	expect_error(&in, 1u << 20, PR_ELIMIT, "exceeds the limit");
	free(zeros);
	buf_release(&in);
}

static void test_truncated_stream_is_rejected(void **state)
{
	buf in = BUF_INIT;
	size_t full;

	(void)state;
	gzip_str(&in, "a profile that will be cut short, a profile that will be cut short");
	full = in.len;
	for (size_t cut = 1; cut < full; cut += 7) {
		in.len = full - cut;
		expect_error(&in, 1024, PR_EDATA, "truncated gzip stream");
	}
	/* A complete member followed by the first bytes of another. */
	in.len = full;
	assert_int_equal(buf_put(&in, "\x1f\x8b\x08", 3), 0);
	expect_error(&in, 1024, PR_EDATA, "truncated gzip stream");
	buf_release(&in);
}

static void test_corrupt_stream_is_rejected_with_zlib_reason(void **state)
{
	buf in = BUF_INIT;

	(void)state;
	gzip_str(&in, "some data worth checking, some data worth checking");
	/* The CRC of the content, in the trailer. */
	in.ptr[in.len - 6] ^= 0x55;
	expect_error(&in, 1024, PR_EDATA, "corrupt gzip stream at offset");
	expect_error(&in, 1024, PR_EDATA, "incorrect data check");
	in.ptr[in.len - 6] ^= 0x55;
	/* The compression method in the header. */
	in.ptr[2] = 7;
	expect_error(&in, 1024, PR_EDATA, "unknown compression method");
	in.ptr[2] = 8;
	/* Not gzip at all. */
	expect_error(&(buf){(char *)"plain text, not gzip", 20, 0, 20}, 1024, PR_EDATA,
		     "incorrect header check");
	buf_release(&in);
}

/*
 * Bytes after the last member that are not another member are refused,
 * saying so (it read "corrupt gzip stream"); zeros to the end are a
 * tape's or block device's padding, which gzip(1) skips, and so does this.
 */
static void test_trailing_garbage_is_rejected(void **state)
{
	buf in = BUF_INIT, out = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	static const char zeros[512] = {0};

	(void)state;
	gzip_str(&in, "payload");
	assert_int_equal(buf_put(&in, "garbage!", 8), 0);
	expect_error(&in, 1024, PR_EDATA, "8 bytes after the gzip member that ends at offset");
	buf_reset(&in);
	gzip_str(&in, "payload");
	assert_int_equal(buf_put(&in, zeros, sizeof(zeros)), 0);
	assert_int_equal(
		gunzip_bounded(&out, (const uint8_t *)in.ptr, in.len, 1024, "t.pb.gz", &err), 0);
	assert_int_equal(out.len, 7);
	assert_memory_equal(out.ptr, "payload", 7);
	/* Zeros, then something else: not padding. */
	assert_int_equal(buf_put(&in, "x", 1), 0);
	expect_error(&in, 1024, PR_EDATA, "513 bytes after the gzip member");
	buf_release(&in);
	buf_release(&out);
}

static void test_empty_input_is_rejected(void **state)
{
	buf in = BUF_INIT;

	(void)state;
	expect_error(&in, 1024, PR_EDATA, "empty input");
}

static void test_failure_leaves_previous_contents_released(void **state)
{
	buf in = BUF_INIT, out = BUF_INIT;
	pr_error err = PR_ERROR_INIT;

	(void)state;
	assert_int_equal(buf_puts(&out, "stale"), 0);
	gzip_str(&in, "fresh");
	in.len -= 2;
	assert_int_equal(gunzip(&out, &in, 1024, &err), PR_EDATA);
	assert_int_equal(out.len, 0);
	assert_string_equal(out.ptr, "");
	buf_release(&in);
	buf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_member_round_trips),
		cmocka_unit_test(test_the_largest_limit_decompresses),
		cmocka_unit_test(test_concatenated_members_decompress_as_one_stream),
		cmocka_unit_test(test_output_of_exactly_the_limit_is_accepted),
		cmocka_unit_test(test_gigabyte_bomb_stops_at_the_limit),
		cmocka_unit_test(test_single_member_bomb_with_forged_size_hint_stops),
		cmocka_unit_test(test_truncated_stream_is_rejected),
		cmocka_unit_test(test_corrupt_stream_is_rejected_with_zlib_reason),
		cmocka_unit_test(test_trailing_garbage_is_rejected),
		cmocka_unit_test(test_empty_input_is_rejected),
		cmocka_unit_test(test_failure_leaves_previous_contents_released),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
