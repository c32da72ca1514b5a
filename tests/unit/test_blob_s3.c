/*
 * test_blob_s3.c: the S3 blob store backend against a real S3-compatible
 * server on loopback (s3rver), every request of which passes through
 * s3_sigcheck: the proxy checks each signature against the tests' own
 * SigV4 computation (tests/support/sigv4.c, itself checked against AWS's
 * published examples in test_sigv4.c), so a request libcurl signed
 * differently from what S3 computes fails here as it would on AWS.
 *
 * The guarantees of the local store, on a bucket: content-addressed keys
 * in the documented layout, written once (an object already there is
 * never replaced), verified against the key on every read, reads capped,
 * listing through ListObjectsV2 page by page; path-style and
 * virtual-host addressing; a session token; transient errors tried
 * again; hostile listings refused (a DOCTYPE, a truncated document, an
 * unreadable size, a page pointing nowhere new, an oversized element); no
 * secret in any message. The XML readers (blob_s3_list_page,
 * blob_s3_error_read) are also read on their own, without a server: their
 * limits to the byte, a body too long for expat, a callback's failure.
 * Then
 * retention over the bucket: it deletes only blobs no capture keeps, and
 * sweeps orphans older than the grace period found by listing.
 *
 * Each test also checks that every request it made passed the signature
 * check (the one that sends a wrong secret checks that they all failed).
 */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "jobs/retention.h"
#include "pipeline/blob_s3.h"
#include "pipeline/http.h"
#include "tests/support/s3test.h"
#include "tests/support/testdb.h"

#define DAY (86400LL * 1000000LL)

static s3test srv;

#define assert_msg_has(e, s)                                                                       \
	do {                                                                                       \
		if (!strstr((e)->msg, (s)))                                                        \
			fail_msg("'%s' lacks '%s'", (e)->msg, (s));                                \
	} while (0)
#define assert_msg_lacks(e, s)                                                                     \
	do {                                                                                       \
		if (strstr((e)->msg, (s)))                                                         \
			fail_msg("'%s' shows '%s'", (e)->msg, (s));                                \
	} while (0)
static testdb *tdb;
static long requests_before, bad_before;
static int test_seq;

/* Options for the test bucket under a prefix of the test's own. */
typedef struct fx {
	blob_s3_opts o;
	char prefix[64];
	blob_store *bs;
} fx;

static int group_setup(void **state)
{
	(void)state;
	if (s3test_start(&srv, NULL) < 0)
		return -1;
	if (!(tdb = testdb_new(true)))
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	testdb_free(tdb);
	s3test_stop(&srv);
	return 0;
}

static void opts_for(fx *f, const char *endpoint)
{
	memset(&f->o, 0, sizeof(f->o));
	f->o.endpoint = endpoint;
	f->o.bucket = S3TEST_BUCKET;
	f->o.prefix = f->prefix;
	f->o.region = S3TEST_REGION;
	f->o.access_key_id = S3TEST_KEY_ID;
	f->o.secret_access_key = S3TEST_SECRET;
	f->o.timeout_ms = 20000;
}

static int setup(void **state)
{
	fx *f = calloc(1, sizeof(*f));
	pr_error err = PR_ERROR_INIT;

	if (!f)
		return -1;
	snprintf(f->prefix, sizeof(f->prefix), "t%d/profreg/", ++test_seq);
	opts_for(f, srv.endpoint);
	if (blob_s3_open(&f->bs, &f->o, &err) < 0) {
		fprintf(stderr, "blob_s3_open: %s\n", err.msg);
		free(f);
		return -1;
	}
	s3test_counts(&srv, &requests_before, &bad_before);
	*state = f;
	return 0;
}

/* Every request of the test was signed as S3 computes it. */
static void assert_all_signed(void)
{
	long total, bad;

	s3test_counts(&srv, &total, &bad);
	assert_true(total > requests_before);
	if (bad != bad_before)
		fail_msg("%ld requests failed the signature check (see %s)", bad - bad_before,
			 srv.log);
}

static int teardown(void **state)
{
	fx *f = *state;

	blob_store_free(f->bs);
	free(f);
	return 0;
}

/* The stored object of `key` as s3rver keeps it on disk. */
static void object_path(fx *f, const char *key, char *out, size_t n)
{
	buf k = BUF_INIT;

	assert_int_equal(blob_s3_object_key(&k, f->prefix, key), 0);
	s3test_object_path(&srv, k.ptr, out, n);
	buf_release(&k);
}

static void read_all(const char *path, buf *out)
{
	char chunk[4096];
	size_t n;
	FILE *fp = fopen(path, "rb");

	if (!fp)
		fail_msg("cannot read %s", path);
	buf_release(out);
	while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0)
		assert_int_equal(buf_put(out, chunk, n), 0);
	fclose(fp);
}

/* PUT `len` bytes at object `object_key` straight through the HTTP client (signed). */
static void raw_put(fx *f, const char *object_key, const void *data, size_t len)
{
	char url[1024], sha[100], hash[BLOB_KEY_HEX + 1];
	const char *headers[] = {sha, NULL};
	http_req req = {.method = HTTP_PUT,
			.url = url,
			.headers = headers,
			.body = data,
			.body_len = len,
			.sigv4 = "aws:amz:" S3TEST_REGION ":s3",
			.sigv4_key_id = S3TEST_KEY_ID,
			.sigv4_secret = S3TEST_SECRET,
			.timeout_ms = 20000};
	pr_error err = PR_ERROR_INIT;
	http_response r;

	(void)f;
	assert_int_equal(blob_key_of(hash, data, len), 0);
	snprintf(sha, sizeof(sha), "x-amz-content-sha256: %s", hash);
	snprintf(url, sizeof(url), "%s/%s/%s", srv.endpoint, S3TEST_BUCKET, object_key);
	assert_int_equal(http_request(&r, &req, &err), 0);
	assert_int_equal(r.status, 200);
	http_response_release(&r);
}

static void raw_put_blob(fx *f, const char *key, const void *stored, size_t len)
{
	buf k = BUF_INIT;

	assert_int_equal(blob_s3_object_key(&k, f->prefix, key), 0);
	raw_put(f, k.ptr, stored, len);
	buf_release(&k);
}

/* Deterministic incompressible bytes. */
static void fill(unsigned char *p, size_t n, unsigned seed)
{
	unsigned x = 2166136261u ^ seed;

	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (unsigned char)(x >> 16);
	}
}

static void test_round_trip_in_the_documented_layout(void **state)
{
	fx *f = *state;
	char key[BLOB_KEY_HEX + 1], again[BLOB_KEY_HEX + 1], path[2048];
	pr_error err = PR_ERROR_INIT;
	buf out = BUF_INIT, onserver = BUF_INIT, stored = BUF_INIT;
	unsigned char *big = malloc(3 << 20);
	bool created = false, there = false;
	blob_entry st;
	uint64_t size = 0;
	int64_t before = (int64_t)time(NULL) * 1000000;

	assert_non_null(big);
	assert_string_equal(blob_store_kind(f->bs), "s3");
	assert_non_null(strstr(blob_store_describe(f->bs), "s3://" S3TEST_BUCKET "/t"));
	assert_int_equal(blob_put(f->bs, key, "stored in a bucket", 18, &created, &err), 0);
	assert_true(created);
	assert_int_equal(blob_get(f->bs, key, &out, 1 << 20, &err), 0);
	assert_int_equal(out.len, 18);
	assert_memory_equal(out.ptr, "stored in a bucket", 18);
	/* The object is the stored form at PREFIX/sha256/ab/cdef....zst. */
	object_path(f, key, path, sizeof(path));
	read_all(path, &onserver);
	assert_int_equal(blob_encode(&stored, "stored in a bucket", 18, &err), 0);
	assert_int_equal(onserver.len, stored.len);
	assert_memory_equal(onserver.ptr, stored.ptr, stored.len);
	assert_int_equal(blob_exists(f->bs, key, &there, &err), 0);
	assert_true(there);
	assert_int_equal(blob_stored_size(f->bs, key, &size, &err), 0);
	assert_int_equal(size, stored.len);
	assert_int_equal(blob_stat(f->bs, key, &st, &err), 0);
	assert_int_equal(st.size, stored.len);
	assert_true(st.mtime_us >= before - 2000000 && st.mtime_us <= before + 120000000);
	/* The same bytes again: not created, the key the same. */
	assert_int_equal(blob_put(f->bs, again, "stored in a bucket", 18, &created, &err), 0);
	assert_false(created);
	assert_string_equal(again, key);
	/* Empty and 3 MiB (a signed body over 1 MiB goes with Expect: 100-continue). */
	assert_int_equal(blob_put(f->bs, key, "", 0, &created, &err), 0);
	assert_int_equal(blob_get(f->bs, key, &out, 10, &err), 0);
	assert_int_equal(out.len, 0);
	fill(big, 3 << 20, 1);
	assert_int_equal(blob_put(f->bs, key, big, 3 << 20, &created, &err), 0);
	assert_true(created);
	assert_int_equal(blob_get(f->bs, key, &out, 4 << 20, &err), 0);
	assert_int_equal(out.len, 3 << 20);
	assert_memory_equal(out.ptr, big, 3 << 20);
	buf_release(&out);
	buf_release(&onserver);
	buf_release(&stored);
	free(big);
	assert_all_signed();
}

/*
 * An object already at a key is never replaced: a put of the bytes the
 * key names leaves the (here wrong) object alone, and fails, since it
 * reads it back first (a capture must not rest on it); the read refuses
 * it as corrupt, naming the key.
 */
static void test_an_existing_object_is_never_replaced_and_reads_are_verified(void **state)
{
	fx *f = *state;
	char key[BLOB_KEY_HEX + 1], path[2048];
	pr_error err = PR_ERROR_INIT;
	buf other = BUF_INIT, out = BUF_INIT, onserver = BUF_INIT;
	bool created = true;
	int rc;

	assert_int_equal(blob_key_of(key, "the real bytes", 14), 0);
	assert_int_equal(blob_encode(&other, "other bytes!!!", 14, &err), 0);
	raw_put_blob(f, key, other.ptr, other.len);
	assert_int_equal(blob_put(f->bs, key, "the real bytes", 14, &created, &err), PR_EIO);
	assert_false(created);
	assert_msg_has(&err, key);
	assert_msg_has(&err, "does not read back as these bytes");
	pr_error_clear(&err);
	object_path(f, key, path, sizeof(path));
	read_all(path, &onserver);
	assert_int_equal(onserver.len, other.len);
	assert_memory_equal(onserver.ptr, other.ptr, other.len);
	rc = blob_get(f->bs, key, &out, 1 << 20, &err);
	assert_int_equal(rc, PR_EDATA);
	assert_msg_has(&err, key);
	assert_msg_has(&err, "checksum mismatch");
	assert_int_equal(out.len, 0);

	/* A truncated object, and one that is not zstd at all. */
	pr_error_clear(&err);
	assert_int_equal(blob_key_of(key, "truncated", 9), 0);
	assert_int_equal(blob_encode(&other, "truncated", 9, &err), 0);
	raw_put_blob(f, key, other.ptr, other.len - 3);
	assert_int_equal(blob_get(f->bs, key, &out, 1 << 20, &err), PR_EDATA);
	pr_error_clear(&err);
	assert_int_equal(blob_key_of(key, "garbage", 7), 0);
	raw_put_blob(f, key, "not zstd at all", 15);
	assert_int_equal(blob_get(f->bs, key, &out, 1 << 20, &err), PR_EDATA);
	assert_msg_has(&err, "corrupt");
	buf_release(&other);
	buf_release(&out);
	buf_release(&onserver);
	assert_all_signed();
}

/* A read stops at its cap: an object larger than any frame of `max` bytes is refused. */
static void test_reads_are_capped(void **state)
{
	fx *f = *state;
	char key[BLOB_KEY_HEX + 1];
	unsigned char *big = malloc(1 << 20);
	pr_error err = PR_ERROR_INIT;
	buf out = BUF_INIT;
	int rc;

	assert_non_null(big);
	fill(big, 1 << 20, 2);
	assert_int_equal(blob_put(f->bs, key, big, 1 << 20, NULL, &err), 0);
	/* The stored object (~1 MiB, incompressible) is over the cap of a 100 KiB read. */
	rc = blob_get(f->bs, key, &out, 100 << 10, &err);
	assert_int_equal(rc, PR_ELIMIT);
	assert_msg_has(&err, key);
	assert_msg_has(&err, "over the size limit");
	assert_int_equal(out.len, 0);
	/* Within the cap but expanding past `max`: refused by the decoder. */
	pr_error_clear(&err);
	memset(big, 'a', 1 << 20);
	assert_int_equal(blob_put(f->bs, key, big, 1 << 20, NULL, &err), 0);
	assert_int_equal(blob_get(f->bs, key, &out, 1000, &err), PR_ELIMIT);
	free(big);
	buf_release(&out);
	assert_all_signed();
}

static void test_missing_blobs_and_deletes(void **state)
{
	fx *f = *state;
	char key[BLOB_KEY_HEX + 1];
	pr_error err = PR_ERROR_INIT;
	buf out = BUF_INIT;
	bool there = true;
	blob_entry st;
	uint64_t size = 9;

	assert_int_equal(blob_key_of(key, "never stored", 12), 0);
	assert_int_equal(blob_get(f->bs, key, &out, 100, &err), PR_ENOTFOUND);
	assert_msg_has(&err, key);
	assert_int_equal(blob_exists(f->bs, key, &there, &err), 0);
	assert_false(there);
	assert_int_equal(blob_stat(f->bs, key, &st, &err), PR_ENOTFOUND);
	assert_int_equal(blob_stored_size(f->bs, key, &size, &err), PR_ENOTFOUND);
	assert_int_equal(blob_delete(f->bs, key, &err), 0);
	assert_int_equal(blob_put(f->bs, key, "never stored", 12, NULL, &err), 0);
	assert_int_equal(blob_delete(f->bs, key, &err), 0);
	assert_int_equal(blob_exists(f->bs, key, &there, &err), 0);
	assert_false(there);
	assert_int_equal(blob_delete(f->bs, key, &err), 0);
	assert_int_equal(blob_get(f->bs, "../../etc/passwd", &out, 100, &err), PR_EUSAGE);
	assert_all_signed();
}

typedef struct seen {
	char keys[16][BLOB_KEY_HEX + 1];
	uint64_t sizes[16];
	size_t n;
} seen;

static int see(void *ud, const blob_entry *e, pr_error *err)
{
	seen *s = ud;

	if (s->n == 16)
		return pr_error_set(err, PR_ELIMIT, "too many");
	memcpy(s->keys[s->n], e->key, sizeof(e->key));
	s->sizes[s->n++] = e->size;
	return 0;
}

/*
 * The listing walks ListObjectsV2 two objects a page (continuation
 * tokens, pre-encoded), gives every blob under the prefix with its size,
 * in key order, and skips objects that are not blobs of the layout and
 * objects outside the prefix.
 */
static void test_list_pages_through_listobjectsv2(void **state)
{
	fx *f = *state;
	char keys[5][BLOB_KEY_HEX + 1], text[32], other[256];
	pr_error err = PR_ERROR_INIT;
	blob_store *paged = NULL;
	seen s = {.n = 0};

	for (int i = 0; i < 5; i++) {
		snprintf(text, sizeof(text), "listed blob %d", i);
		assert_int_equal(blob_put(f->bs, keys[i], text, strlen(text), NULL, &err), 0);
	}
	snprintf(other, sizeof(other), "%ssha256/zz/not-a-blob.zst", f->prefix);
	raw_put(f, other, "x", 1);
	snprintf(other, sizeof(other), "%sREADME", f->prefix);
	raw_put(f, other, "x", 1);
	raw_put(f,
		"elsewhere/sha256/00/0000000000000000000000000000000000000000000000000000000000"
		"0000.zst",
		"x", 1);
	f->o.list_page = 2;
	assert_int_equal(blob_s3_open(&paged, &f->o, &err), 0);
	if (blob_store_list(paged, see, &s, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(s.n, 5);
	for (size_t i = 0; i < s.n; i++) {
		uint64_t size = 0;
		bool known = false;
		if (i)
			assert_true(strcmp(s.keys[i - 1], s.keys[i]) < 0);
		for (int k = 0; k < 5; k++)
			known |= strcmp(keys[k], s.keys[i]) == 0;
		assert_true(known);
		assert_int_equal(blob_stored_size(paged, s.keys[i], &size, &err), 0);
		assert_int_equal(s.sizes[i], size);
	}
	blob_store_free(paged);
	/* At least three pages went out, each one signed with its token. */
	{
		long total, bad;
		s3test_counts(&srv, &total, &bad);
		assert_true(total - requests_before >= 5 * 2 + 3 + 3);
	}
	assert_all_signed();
}

/* BUCKET.s3.localhost:PORT, keys from the root: the same operations work. */
static void test_virtual_host_addressing(void **state)
{
	fx *f = *state;
	char key[BLOB_KEY_HEX + 1];
	pr_error err = PR_ERROR_INIT;
	blob_store *vh = NULL;
	buf out = BUF_INIT;
	seen s = {.n = 0};
	bool created = false;

	opts_for(f, srv.vhost_endpoint);
	f->o.virtual_host = true;
	assert_int_equal(blob_s3_open(&vh, &f->o, &err), 0);
	assert_int_equal(blob_put(vh, key, "by virtual host", 15, &created, &err), 0);
	assert_true(created);
	assert_int_equal(blob_get(vh, key, &out, 100, &err), 0);
	assert_memory_equal(out.ptr, "by virtual host", 15);
	assert_int_equal(blob_store_list(vh, see, &s, &err), 0);
	assert_int_equal(s.n, 1);
	/* The same object, seen path-style. */
	assert_int_equal(blob_get(f->bs, key, &out, 100, &err), 0);
	assert_memory_equal(out.ptr, "by virtual host", 15);
	assert_int_equal(blob_delete(vh, key, &err), 0);
	blob_store_free(vh);
	buf_release(&out);
	assert_all_signed();
}

/* A session token travels in x-amz-security-token, signed like every x-amz-* header. */
static void test_a_session_token_is_sent_and_signed(void **state)
{
	fx *f = *state;
	char key[BLOB_KEY_HEX + 1];
	pr_error err = PR_ERROR_INIT;
	blob_store *tok = NULL;
	buf out = BUF_INIT;

	f->o.session_token = "FwoGZXIvYXdzEXAMPLE-session-token//+=";
	assert_int_equal(blob_s3_open(&tok, &f->o, &err), 0);
	assert_int_equal(blob_put(tok, key, "with a token", 12, NULL, &err), 0);
	assert_int_equal(blob_get(tok, key, &out, 100, &err), 0);
	blob_store_free(tok);
	buf_release(&out);
	assert_all_signed();
}

/*
 * The wrong secret: the server refuses (403 SignatureDoesNotMatch), the
 * message says so with the blob and the store, and holds no secret.
 */
static void test_a_wrong_secret_is_refused_and_never_shown(void **state)
{
	fx *f = *state;
	char key[BLOB_KEY_HEX + 1];
	pr_error err = PR_ERROR_INIT;
	blob_store *wrong = NULL;
	long total, bad;
	int rc;

	f->o.secret_access_key = "WRONG-secret-value";
	f->o.session_token = "TOKEN-secret-value";
	assert_int_equal(blob_s3_open(&wrong, &f->o, &err), 0);
	rc = blob_put(wrong, key, "refused", 7, NULL, &err);
	assert_int_equal(rc, PR_EIO);
	assert_msg_has(&err, "HTTP 403");
	pr_error_clear(&err);
	{
		buf out = BUF_INIT;
		assert_int_equal(blob_get(wrong, key, &out, 100, &err), PR_EIO);
		assert_msg_has(&err, "HTTP 403 (SignatureDoesNotMatch");
		assert_msg_has(&err, "cannot read blob");
		assert_msg_lacks(&err, "WRONG-secret");
	}
	assert_msg_has(&err, key);
	assert_msg_has(&err, "s3://" S3TEST_BUCKET "/");
	assert_msg_lacks(&err, "WRONG-secret");
	assert_msg_lacks(&err, "TOKEN-secret");
	pr_error_clear(&err);
	/* A HEAD's refusal has no body to give the reason: the message says what it usually is. */
	{
		bool found = true;
		assert_int_equal(blob_exists(wrong, key, &found, &err), PR_EIO);
		assert_msg_has(&err, "HTTP 403 (no reason given: wrong credentials, or this "
				     "machine's clock");
	}
	blob_store_free(wrong);
	s3test_counts(&srv, &total, &bad);
	assert_true(bad > bad_before);
	assert_int_equal(bad - bad_before, total - requests_before);
}

/*
 * A bucket that does not exist is not a missing blob: every read said
 * "not found", which export and blobs check then blamed on the blobs.
 */
static void test_a_missing_bucket_is_no_missing_blob(void **state)
{
	fx *f = *state;
	char key[BLOB_KEY_HEX + 1];
	pr_error err = PR_ERROR_INIT;
	blob_store *none = NULL;
	buf out = BUF_INIT;

	memset(key, 'a', BLOB_KEY_HEX);
	key[BLOB_KEY_HEX] = '\0';
	f->o.bucket = "no-such-bucket-here";
	assert_int_equal(blob_s3_open(&none, &f->o, &err), 0);
	assert_int_equal(blob_get(none, key, &out, 100, &err), PR_EIO);
	assert_msg_has(&err, "NoSuchBucket");
	assert_msg_has(&err, "s3://no-such-bucket-here/");
	buf_release(&out);
	blob_store_free(none);
}

/* 503 SlowDown twice, then the request goes through; with one attempt it fails. */
static void test_transient_errors_are_tried_again(void **state)
{
	fx *f = *state;
	static const char *const flaky[] = {"--fail-first", "2", NULL};
	char key[BLOB_KEY_HEX + 1];
	pr_error err = PR_ERROR_INIT;
	blob_store *once = NULL;
	buf out = BUF_INIT;
	bool created = false;

	assert_int_equal(s3test_restart_proxy(&srv, flaky), 0);
	opts_for(f, srv.endpoint);
	blob_store_free(f->bs);
	assert_int_equal(blob_s3_open(&f->bs, &f->o, &err), 0);
	assert_int_equal(blob_put(f->bs, key, "after two 503s", 14, &created, &err), 0);
	assert_true(created);
	assert_int_equal(blob_get(f->bs, key, &out, 100, &err), 0);

	assert_int_equal(s3test_restart_proxy(&srv, flaky), 0);
	opts_for(f, srv.endpoint);
	f->o.attempts = 1;
	assert_int_equal(blob_s3_open(&once, &f->o, &err), 0);
	assert_int_equal(blob_get(once, key, &out, 100, &err), PR_EIO);
	assert_msg_has(&err, "HTTP 503 (SlowDown");
	blob_store_free(once);
	assert_int_equal(s3test_restart_proxy(&srv, NULL), 0);
	opts_for(f, srv.endpoint);
	buf_release(&out);
	assert_all_signed();
}

/*
 * blob_copy into the bucket where the bucket's copy has another size: a
 * read of it that fails (every GET answered 503, HEAD working) is the
 * copy's error, and the object stays as it is; once reads work, a copy
 * cut short (half its bytes, a migration killed mid-upload) is read, does
 * not check, and is replaced by the source's bytes.
 */
static void test_a_copy_of_another_size_is_replaced_only_once_read(void **state)
{
	fx *f = *state;
	static const char *const no_gets[] = {"--fail-gets", "1", NULL};
	char key[BLOB_KEY_HEX + 1], root[700], src_path[1500], path[1500];
	unsigned char data[5000];
	pr_error err = PR_ERROR_INIT;
	blob_store *src = NULL;
	buf raw = BUF_INIT, held = BUF_INIT;
	bool created = true;

	fill(data, sizeof(data), 7);
	snprintf(root, sizeof(root), "%s/copy-source", srv.dir);
	assert_int_equal(blob_store_open_dir(&src, root, &err), 0);
	assert_int_equal(blob_put(src, key, data, sizeof(data), NULL, &err), 0);
	snprintf(src_path, sizeof(src_path), "%s/sha256/%.2s/%s.zst", root, key, key + 2);
	read_all(src_path, &raw);
	raw_put_blob(f, key, raw.ptr, raw.len / 2);
	object_path(f, key, path, sizeof(path));

	assert_int_equal(s3test_restart_proxy(&srv, no_gets), 0);
	opts_for(f, srv.endpoint);
	f->o.attempts = 1;
	blob_store_free(f->bs);
	assert_int_equal(blob_s3_open(&f->bs, &f->o, &err), 0);
	assert_true(blob_copy(f->bs, src, key, 1 << 20, &created, &err) < 0);
	assert_false(created);
	assert_msg_has(&err, "HTTP 503");
	read_all(path, &held);
	assert_int_equal(held.len, raw.len / 2);

	pr_error_clear(&err);
	assert_int_equal(s3test_restart_proxy(&srv, NULL), 0);
	opts_for(f, srv.endpoint);
	blob_store_free(f->bs);
	assert_int_equal(blob_s3_open(&f->bs, &f->o, &err), 0);
	assert_int_equal(blob_copy(f->bs, src, key, 1 << 20, &created, &err), 0);
	assert_true(created);
	read_all(path, &held);
	assert_int_equal(held.len, raw.len);
	assert_memory_equal(held.ptr, raw.ptr, raw.len);
	blob_store_free(src);
	buf_release(&raw);
	buf_release(&held);
	assert_all_signed();
}

/* The bytes of its padded 503 that the proxy could hand the client, from its log. */
static long error_bytes_sent(void)
{
	char line[65536];
	FILE *f = fopen(srv.log, "r");
	long sent = -1;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		const char *m = strstr(line, "\"sent\":");
		if (m)
			sent = atol(m + 7);
	}
	fclose(f);
	return sent;
}

/*
 * An error answer as long as a server likes (32 MiB after its document)
 * is read for its Code and Message only: the client stops reading it
 * early, however large the blob's own cap, and still says what it was.
 */
static void test_a_huge_error_document_is_not_read_to_its_end(void **state)
{
	fx *f = *state;
	static const char *const padded[] = {"--fail-first", "1000", "--error-pad", "33554432",
					      NULL};
	char key[BLOB_KEY_HEX + 1];
	pr_error err = PR_ERROR_INIT;
	blob_store *once = NULL;
	buf out = BUF_INIT;
	long sent;

	assert_int_equal(blob_key_of(key, "k", 1), 0);
	assert_int_equal(s3test_restart_proxy(&srv, padded), 0);
	opts_for(f, srv.endpoint);
	f->o.attempts = 1;
	assert_int_equal(blob_s3_open(&once, &f->o, &err), 0);
	assert_int_equal(blob_get(once, key, &out, (size_t)256 << 20, &err), PR_EIO);
	assert_msg_has(&err, "HTTP 503 (SlowDown: injected by <11 bytes>)");
	blob_store_free(once);
	/* The proxy's log line comes once its write gave up or ended. */
	for (int i = 0; i < 200 && (sent = error_bytes_sent()) < 0; i++)
		usleep(50000);
	if (sent < 0 || sent >= 33554432)
		fail_msg("the client read %ld bytes of a 32 MiB error answer", sent);
	assert_int_equal(s3test_restart_proxy(&srv, NULL), 0);
	opts_for(f, srv.endpoint);
	buf_release(&out);
}

static void test_unreachable_endpoint_names_it(void **state)
{
	fx *f = *state;
	char key[BLOB_KEY_HEX + 1];
	pr_error err = PR_ERROR_INIT;
	blob_store *gone = NULL;

	(void)f;
	opts_for(f, "http://127.0.0.1:1");
	f->o.attempts = 2;
	assert_int_equal(blob_s3_open(&gone, &f->o, &err), 0);
	assert_int_equal(blob_put(gone, key, "nowhere", 7, NULL, &err), PR_EIO);
	assert_msg_has(&err, key);
	assert_msg_has(&err, "cannot reach 'http://127.0.0.1:1/...': connection refused");
	assert_msg_lacks(&err, S3TEST_SECRET);
	blob_store_free(gone);
}

static void test_settings_are_checked_before_anything_is_sent(void **state)
{
	static const struct {
		const char *endpoint, *bucket, *region, *prefix, *what;
	} bad[] = {
		{"ftp://127.0.0.1:9", S3TEST_BUCKET, "us-east-1", NULL, "endpoint"},
		{"http://127.0.0.1:9/path", S3TEST_BUCKET, "us-east-1", NULL, "endpoint"},
		{"http://user:pw@127.0.0.1:9", S3TEST_BUCKET, "us-east-1", NULL, "endpoint"},
		{"http://127.0.0.1:9?x=1", S3TEST_BUCKET, "us-east-1", NULL, "endpoint"},
		{"http://127.0.0.1:9", "My_Bucket", "us-east-1", NULL, "bucket"},
		{"http://127.0.0.1:9", "ab", "us-east-1", NULL, "bucket"},
		{"http://127.0.0.1:9", "a..b", "us-east-1", NULL, "bucket"},
		{"http://127.0.0.1:9", S3TEST_BUCKET, "US East", NULL, "region"},
		{"http://127.0.0.1:9", S3TEST_BUCKET, "us-east-1", "../up", "prefix"},
		{"http://127.0.0.1:9", S3TEST_BUCKET, "us-east-1", "/abs", "prefix"},
		{"http://127.0.0.1:9", S3TEST_BUCKET, "us-east-1", "a//b", "prefix"},
		{"http://127.0.0.1:9", S3TEST_BUCKET, "us-east-1", "a b/", "prefix"},
		{"http://127.0.0.1:9", S3TEST_BUCKET, "us-east-1", "a/./b", "prefix"},
	};
	blob_s3_opts o;
	pr_error err = PR_ERROR_INIT;
	blob_store *bs = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		memset(&o, 0, sizeof(o));
		o.endpoint = bad[i].endpoint, o.bucket = bad[i].bucket, o.region = bad[i].region;
		o.prefix = bad[i].prefix, o.access_key_id = "k", o.secret_access_key = "s";
		pr_error_clear(&err);
		assert_int_equal(blob_s3_open(&bs, &o, &err), PR_EUSAGE);
		assert_null(bs);
		if (!strstr(err.msg, bad[i].what))
			fail_msg("case %zu: '%s' does not name the %s", i, err.msg, bad[i].what);
		assert_msg_lacks(&err, "pw");
	}
	memset(&o, 0, sizeof(o));
	o.endpoint = "https://s3.amazonaws.com", o.bucket = "ok-bucket", o.region = "us-east-1";
	o.access_key_id = "k";
	assert_int_equal(blob_s3_check(&o, &err), PR_EUSAGE);
	o.secret_access_key = "s";
	o.prefix = "a/b";
	assert_int_equal(blob_s3_check(&o, &err), 0);
}

/* A listing page written here: DOCTYPE, an endless token, an unreadable size. */
static void hostile_listing(fx *f, const char *doc, const char *want)
{
	char path[700];
	const char *args[] = {"--list-answer", path, NULL};
	pr_error err = PR_ERROR_INIT;
	blob_store *bs = NULL;
	seen s = {.n = 0};
	FILE *fp;

	snprintf(path, sizeof(path), "%s/listing.xml", srv.dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(doc, fp);
	fclose(fp);
	assert_int_equal(s3test_restart_proxy(&srv, args), 0);
	opts_for(f, srv.endpoint);
	assert_int_equal(blob_s3_open(&bs, &f->o, &err), 0);
	assert_int_equal(blob_store_list(bs, see, &s, &err), PR_EDATA);
	if (!strstr(err.msg, want))
		fail_msg("'%s' does not say '%s'", err.msg, want);
	assert_msg_has(&err, "cannot list 's3://");
	blob_store_free(bs);
}

static void test_hostile_listings_are_refused(void **state)
{
	fx *f = *state;
	char doc[4096], key[BLOB_KEY_HEX + 1];

	hostile_listing(f,
			"<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\">"
			"<!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">]>"
			"<ListBucketResult><Name>&lol2;</Name></ListBucketResult>",
			"DOCTYPE");
	hostile_listing(f,
			"<ListBucketResult><IsTruncated>true</IsTruncated>"
			"<NextContinuationToken></NextContinuationToken></ListBucketResult>",
			"continuation token");
	assert_int_equal(blob_key_of(key, "k", 1), 0);
	snprintf(doc, sizeof(doc),
		 "<ListBucketResult><Contents><Key>%ssha256/%.2s/%s.zst</Key><Size>-3</Size>"
		 "<LastModified>2026-01-01T00:00:00.000Z</LastModified></Contents>"
		 "</ListBucketResult>",
		 f->prefix, key, key + 2);
	hostile_listing(f, doc, "Size");
	hostile_listing(f, "<ListBucketResult><Contents><Key>", "unreadable XML");
	/* A 200 whose body is an error (a throttled server, a proxy) is not an empty bucket. */
	hostile_listing(f,
			"<?xml version=\"1.0\"?><Error><Code>SlowDown</Code>"
			"<Message>Please reduce your request rate.</Message></Error>",
			"not a ListBucketResult");
	hostile_listing(f, "<Other><ListBucketResult></ListBucketResult></Other>",
			"not a ListBucketResult");
	/* The same token again and again would list forever. */
	hostile_listing(f,
			"<ListBucketResult><IsTruncated>true</IsTruncated>"
			"<NextContinuationToken>again</NextContinuationToken></ListBucketResult>",
			"continuation token");
	/* Elements nested deep (well-formed): each costs expat memory while it is open. */
	{
		char *deep = malloc(18 + 7 * 1000 + 20), *p;
		assert_non_null(deep);
		p = deep + 18;
		memcpy(deep, "<ListBucketResult>", 18);
		for (int i = 0; i < 1000; i++, p += 3)
			memcpy(p, "<a>", 3);
		for (int i = 0; i < 1000; i++, p += 4)
			memcpy(p, "</a>", 4);
		strcpy(p, "</ListBucketResult>");
		hostile_listing(f, deep, "nested more than 16 deep");
		free(deep);
	}
	/* An element's text over 4 KiB. */
	{
		char *huge = malloc(10000);
		assert_non_null(huge);
		memcpy(huge, "<ListBucketResult><Name>", 24);
		memset(huge + 24, 'A', 6000);
		strcpy(huge + 6024, "</Name></ListBucketResult>");
		hostile_listing(f, huge, "too long");
		free(huge);
	}
	assert_int_equal(s3test_restart_proxy(&srv, NULL), 0);
	assert_all_signed();
}

/* What the page readers handed over, for their own tests. */
typedef struct taken {
	size_t n;
	char names[4][80];
	uint64_t sizes[4];
	int64_t mtimes[4];
} taken;

static int take_object(void *ud, const blob_s3_object *o, pr_error *err)
{
	taken *t = ud;

	(void)err;
	if (t->n < 4) {
		snprintf(t->names[t->n], sizeof(t->names[0]), "%s", o->name);
		t->sizes[t->n] = o->size, t->mtimes[t->n] = o->mtime_us;
	}
	t->n++;
	return 0;
}

static int take_blob(void *ud, const blob_entry *e, pr_error *err)
{
	blob_s3_object o = {e->key, e->size, e->mtime_us};

	return take_object(ud, &o, err);
}

#define PAGE_WHAT "cannot list 's3://b/p/'"
#define ERROR_WHAT "error of 's3://b/p/'"

/* One page read as every object under "p/" after `after`: rc, message in *err. */
static int read_page(const char *doc, size_t len, const char *after, taken *t, pr_error *err)
{
	blob_s3_page *pg = calloc(1, sizeof(*pg));
	int rc;

	assert_non_null(pg);
	pg->prefix = "p/", pg->after = after, pg->object_fn = take_object, pg->ud = t;
	pr_error_clear(err);
	rc = blob_s3_list_page(pg, doc, len, PAGE_WHAT, err);
	free(pg);
	return rc;
}

/* A ListBucketResult `depth` elements deep, the innermost a Name of `text` bytes. */
static char *nested(int depth, size_t text)
{
	char *d = malloc(64 + 7 * (size_t)depth + text), *p = d;

	assert_non_null(d);
	p += sprintf(p, "<ListBucketResult>");
	for (int i = 2; i < depth; i++)
		p += sprintf(p, "<a>");
	p += sprintf(p, "<Name>");
	memset(p, 'A', text);
	p += text;
	p += sprintf(p, "</Name>");
	for (int i = 2; i < depth; i++)
		p += sprintf(p, "</a>");
	sprintf(p, "</ListBucketResult>");
	return d;
}

static void test_the_xml_readers_refuse_what_they_cannot_read(void **state)
{
	static const struct {
		const char *doc, *after, *why;
	} bad[] = {
		{"", "", ": the answer: unreadable XML (no element found)"},
		{"<ListBucketResult><Contents><Key>p/x", "", ": the answer: unreadable XML ("},
		{"<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\">"
		 "<!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">]>"
		 "<ListBucketResult><Name>&lol2;</Name></ListBucketResult>",
		 "", ": the answer: unreadable XML (it has a DOCTYPE)"},
		{"<?xml version=\"1.0\"?><Error><Code>SlowDown</Code>"
		 "<Message>Please reduce your request rate.</Message></Error>",
		 "", ": the answer is not a ListBucketResult document"},
		{"<ListBucketResult><Contents><Key>p/x</Key></Contents></ListBucketResult>", "",
		 ": an object without a readable Size"},
		{"<ListBucketResult><Contents><Key>p/a</Key><Size>1</Size></Contents>"
		 "</ListBucketResult>",
		 "p/b",
		 ": a page lists a key at or before the pages before it (a page served again)"},
	};
	pr_error err = PR_ERROR_INIT;
	blob_s3_error e;
	taken t;
	char want[300];
	const char *doc;
	char *deep;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		memset(&t, 0, sizeof(t));
		assert_int_equal(read_page(bad[i].doc, strlen(bad[i].doc), bad[i].after, &t, &err),
				 PR_EDATA);
		snprintf(want, sizeof(want), "%s%s", PAGE_WHAT, bad[i].why);
		if (strncmp(err.msg, want, strlen(want)) != 0 || strchr(err.msg, '\n'))
			fail_msg("case %zu: '%s' is not '%s...' on one line", i, err.msg, want);
		assert_int_equal(t.n, 0);
	}

	/* Elements 16 deep are read, 17 deep are not; texts of 4096 bytes are, 4097 not. */
	deep = nested(BLOB_S3_XML_DEPTH_MAX, 1);
	assert_int_equal(read_page(deep, strlen(deep), "", &t, &err), 0);
	free(deep);
	deep = nested(BLOB_S3_XML_DEPTH_MAX + 1, 1);
	assert_int_equal(read_page(deep, strlen(deep), "", &t, &err), PR_EDATA);
	assert_string_equal(err.msg, PAGE_WHAT
			    ": the answer: unreadable XML (elements nested more than 16 deep)");
	free(deep);
	deep = nested(2, BLOB_S3_XML_TEXT_MAX);
	assert_int_equal(read_page(deep, strlen(deep), "", &t, &err), 0);
	free(deep);
	deep = nested(2, BLOB_S3_XML_TEXT_MAX + 1);
	assert_int_equal(read_page(deep, strlen(deep), "", &t, &err), PR_EDATA);
	assert_string_equal(err.msg, PAGE_WHAT
			    ": the answer: unreadable XML (an element's text is too long)");
	free(deep);

	/* A body over what expat takes in one call is refused unread, with its reason. */
	assert_int_equal(read_page("<", (size_t)INT32_MAX + 1, "", &t, &err), PR_EDATA);
	assert_string_equal(err.msg, PAGE_WHAT ": the answer: unreadable XML (over 2 GiB)");
	pr_error_clear(&err);
	assert_int_equal(blob_s3_error_read(&e, "<", (size_t)INT32_MAX + 1, ERROR_WHAT, &err),
			 PR_EDATA);
	assert_string_equal(err.msg, ERROR_WHAT ": unreadable XML (over 2 GiB)");

	/* An error body with a DOCTYPE is refused whole: nothing of it is quoted. */
	pr_error_clear(&err);
	doc = "<!DOCTYPE e [<!ENTITY x \"AKIAX\">]>"
	      "<Error><Code>AccessDenied</Code><Message>&x;</Message></Error>";
	assert_int_equal(blob_s3_error_read(&e, doc, strlen(doc), ERROR_WHAT, &err), PR_EDATA);
	assert_string_equal(err.msg, ERROR_WHAT ": unreadable XML (it has a DOCTYPE)");
	assert_string_equal(e.code, "");
	assert_string_equal(e.message, "");
}

static void test_the_xml_readers_read_pages_and_errors(void **state)
{
	static const char page[] =
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
		"<Name>b</Name><Prefix>p/</Prefix><IsTruncated>true</IsTruncated>"
		"<NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</"
		"NextContinuationToken>"
		"<Contents><Key>p/sha256/0b/"
		"4c12d7e03fa9e4b3a1f3c4b8f0d6a7e2c5b9d8e1f2a3b4c5d6e7f8091a2b3c.zst</Key>"
		"<LastModified>2009-10-12T17:50:30.000Z</LastModified><Size>434234</Size>"
		"</Contents>"
		"<Contents><Key>p/uploads/a&amp;b.pb.gz</Key><Size>857</Size></Contents>"
		"<Contents><Key>q/outside</Key><Size>1</Size></Contents>"
		"<CommonPrefixes><Prefix>p/photos/</Prefix></CommonPrefixes>"
		"</ListBucketResult>";
	static const char nosuchkey[] =
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>NoSuchKey</Code>"
		"<Message>The resource you requested does not exist</Message>"
		"<Resource>/mybucket/myfoto.jpg</Resource></Error>";
	blob_s3_page *pg = calloc(1, sizeof(*pg));
	pr_error err = PR_ERROR_INIT;
	blob_s3_error e;
	taken t = {.n = 0};

	(void)state;
	assert_non_null(pg);
	pg->prefix = "p/", pg->after = "p/a", pg->object_fn = take_object, pg->ud = &t;
	assert_int_equal(blob_s3_list_page(pg, page, strlen(page), PAGE_WHAT, &err), 0);
	assert_true(pg->truncated);
	assert_string_equal(pg->token, "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=");
	assert_string_equal(pg->last_key, "q/outside");
	assert_int_equal(pg->taken, 2);
	assert_int_equal(t.n, 2);
	assert_string_equal(
		t.names[0],
		"sha256/0b/4c12d7e03fa9e4b3a1f3c4b8f0d6a7e2c5b9d8e1f2a3b4c5d6e7f8091a2b3c.zst");
	assert_int_equal(t.sizes[0], 434234);
	assert_int_equal(t.mtimes[0], INT64_C(1255369830) * 1000000);
	assert_string_equal(t.names[1], "uploads/a&b.pb.gz");
	assert_int_equal(t.sizes[1], 857);
	assert_int_equal(t.mtimes[1], 0);

	/* The store's own listing: only the blob, by its key. */
	memset(&t, 0, sizeof(t));
	pg->after = NULL, pg->object_fn = NULL, pg->blob_fn = take_blob;
	assert_int_equal(blob_s3_list_page(pg, page, strlen(page), PAGE_WHAT, &err), 0);
	assert_int_equal(t.n, 1);
	assert_string_equal(t.names[0],
			    "0b4c12d7e03fa9e4b3a1f3c4b8f0d6a7e2c5b9d8e1f2a3b4c5d6e7f8091a2b3c");
	free(pg);

	assert_int_equal(blob_s3_error_read(&e, nosuchkey, strlen(nosuchkey), ERROR_WHAT, &err), 0);
	assert_string_equal(e.code, "NoSuchKey");
	assert_string_equal(e.message, "The resource you requested does not exist");
	/* Not an error document: nothing to quote, and no error either. */
	assert_int_equal(
		blob_s3_error_read(&e, "<html><Code>x</Code></html>", 27, ERROR_WHAT, &err), 0);
	assert_string_equal(e.code, "");
	assert_string_equal(e.message, "");
}

static int refuse_object(void *ud, const blob_s3_object *o, pr_error *err)
{
	(void)ud;
	return pr_error_set(err, PR_EDB, "cannot record '%s': the database went away", o->name);
}

/* A callback's failure is what the read returns, even when the page then breaks off. */
static void test_a_callbacks_failure_is_returned_as_it_is(void **state)
{
	static const char doc[] = "<ListBucketResult><Contents><Key>p/a</Key><Size>1</Size>"
				  "</Contents><Contents><Key>p/b";
	blob_s3_page *pg = calloc(1, sizeof(*pg));
	pr_error err = PR_ERROR_INIT;

	(void)state;
	assert_non_null(pg);
	pg->prefix = "p/", pg->object_fn = refuse_object;
	assert_int_equal(blob_s3_list_page(pg, doc, strlen(doc), "cannot list 's3://b/p/'", &err),
			 PR_EDB);
	assert_int_equal(err.code, PR_EDB);
	assert_string_equal(err.msg, "cannot record 'a': the database went away");
	assert_int_equal(pg->taken, 1);
	free(pg);
}

/* Page `tok` of a hostile listing: the answer to continuation-token=tok. */
static void listing_page(const char *tok, const char *doc)
{
	char path[800];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/listing.xml.%s", srv.dir, tok);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(doc, fp);
	fclose(fp);
}

static void listing_page_drop(const char *tok)
{
	char path[800];

	snprintf(path, sizeof(path), "%s/listing.xml.%s", srv.dir, tok);
	unlink(path);
}

/*
 * Continuation tokens that go round in a circle (a, b, a, b...), each
 * one new to the page before, would list for ever: a page that lists a
 * key at or before the keys already listed is a page served again, and
 * truncated pages that list nothing end the walk after a while.
 */
static void test_a_listing_whose_tokens_go_round_is_refused(void **state)
{
	fx *f = *state;

	/* Should the walk not end, the alarm ends the run instead. */
	alarm(30);
	listing_page("a", "<ListBucketResult><IsTruncated>true</IsTruncated>"
			  "<Contents><Key>x/2</Key><Size>1</Size></Contents>"
			  "<NextContinuationToken>b</NextContinuationToken></ListBucketResult>");
	listing_page("b", "<ListBucketResult><IsTruncated>true</IsTruncated>"
			  "<Contents><Key>x/1</Key><Size>1</Size></Contents>"
			  "<NextContinuationToken>a</NextContinuationToken></ListBucketResult>");
	hostile_listing(f,
			"<ListBucketResult><IsTruncated>true</IsTruncated>"
			"<Contents><Key>x/1</Key><Size>1</Size></Contents>"
			"<NextContinuationToken>a</NextContinuationToken></ListBucketResult>",
			"served again");
	listing_page("a", "<ListBucketResult><IsTruncated>true</IsTruncated>"
			  "<NextContinuationToken>b</NextContinuationToken></ListBucketResult>");
	listing_page("b", "<ListBucketResult><IsTruncated>true</IsTruncated>"
			  "<NextContinuationToken>a</NextContinuationToken></ListBucketResult>");
	hostile_listing(f,
			"<ListBucketResult><IsTruncated>true</IsTruncated>"
			"<NextContinuationToken>a</NextContinuationToken></ListBucketResult>",
			"truncated pages in a row that list nothing");
	alarm(0);
	listing_page_drop("a");
	listing_page_drop("b");
	assert_int_equal(s3test_restart_proxy(&srv, NULL), 0);
	assert_all_signed();
}

static int count_object(void *ud, const blob_s3_object *o, pr_error *err)
{
	(void)o, (void)err;
	(*(size_t *)ud)++;
	return 0;
}

/*
 * A listing that never ends with pages of keys that are not ours (not
 * blobs, or outside the prefix), each page after the last with a new
 * token, would walk for ever: the pages that hand nothing over end it
 * as pages of no key do.
 */
static void test_endless_pages_of_keys_not_ours_end_the_listing(void **state)
{
	fx *f = *state;
	const char *under[] = {"--list-endless", "1", NULL};
	const char *outside[] = {"--list-endless", "2", NULL};
	pr_error err = PR_ERROR_INIT;
	blob_s3_bucket *b = NULL;
	blob_store *bs = NULL;
	seen s = {.n = 0};
	size_t objects = 0;

	/* Should the walk not end, the alarm ends the run instead. */
	alarm(60);
	assert_int_equal(s3test_restart_proxy(&srv, under), 0);
	opts_for(f, srv.endpoint);
	/* Keys under the blobs' prefix that are no blob's. */
	assert_int_equal(blob_s3_open(&bs, &f->o, &err), 0);
	assert_int_equal(blob_store_list(bs, see, &s, &err), PR_EDATA);
	assert_msg_has(&err, "truncated pages in a row that list nothing to take");
	assert_int_equal(s.n, 0);
	blob_store_free(bs);
	/* Keys outside the prefix of an object-store drop. */
	assert_int_equal(s3test_restart_proxy(&srv, outside), 0);
	opts_for(f, srv.endpoint);
	pr_error_clear(&err);
	assert_int_equal(blob_s3_bucket_open(&b, &f->o, &err), 0);
	assert_int_equal(blob_s3_bucket_list(b, count_object, &objects, &err), PR_EDATA);
	assert_msg_has(&err, "truncated pages in a row that list nothing to take");
	assert_int_equal(objects, 0);
	blob_s3_bucket_free(b);
	alarm(0);
	assert_int_equal(s3test_restart_proxy(&srv, NULL), 0);
}

/* ---- retention over the bucket ------------------------------------------- */

static void sqlf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void sqlf(const char *fmt, ...)
{
	char q[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(q, sizeof(q), fmt, ap);
	va_end(ap);
	testdb_int(tdb, q);
}

/* A capture of blob `key` captured `age` days before `at`. */
static void capture_of(int64_t sid, const char *key, int age, int64_t at)
{
	sqlf("insert into profiles (service_id, profile_type, release, captured_at, value_type,"
	     " value_unit, total_value, sample_count, function_count, blob_key, format,"
	     " retention_class) values (%lld, 'cpu', 'r1', 'epoch'::timestamptz + %lld *"
	     " interval '1 microsecond', 'samples', 'count', 1, 1, 0, '%s', 'folded', 'hot')"
	     " returning 1",
	     (long long)sid, (long long)(at - age * DAY), key);
}

static void age_object(fx *f, const char *key, int days)
{
	char path[2048];
	struct timespec t[2];

	object_path(f, key, path, sizeof(path));
	t[0].tv_sec = t[1].tv_sec = time(NULL) - days * 86400;
	t[0].tv_nsec = t[1].tv_nsec = 0;
	assert_int_equal(utimensat(AT_FDCWD, path, t, 0), 0);
}

static bool there(fx *f, const char *key)
{
	bool b = false;
	pr_error err = PR_ERROR_INIT;

	assert_int_equal(blob_exists(f->bs, key, &b, &err), 0);
	return b;
}

/*
 * Over the bucket, retention deletes the blob of an expired capture only
 * when no other capture keeps it, and sweeps an orphan found by listing
 * once it is older than the grace period (by its Last-Modified), never a
 * young one. `storage` reports the bucket's objects and what is kept.
 */
static void test_retention_deletes_only_what_no_capture_keeps_and_sweeps_orphans(void **state)
{
	fx *f = *state;
	char shared[BLOB_KEY_HEX + 1], alone[BLOB_KEY_HEX + 1], old_orphan[BLOB_KEY_HEX + 1],
		young_orphan[BLOB_KEY_HEX + 1];
	pr_error err = PR_ERROR_INIT;
	retention_result r;
	retention_opts o = {0};
	config cfg;
	json_t *doc = NULL, *bucket;
	int64_t sid, at = (int64_t)time(NULL) * 1000000;
	uint64_t orphan_size = 0;

	testdb_reset((void **)&tdb);
	sqlf("insert into functions (name, file, synthetic) values ('(other functions)',"
	     " '(profreg summary)', true) on conflict do nothing returning 1");
	sqlf("insert into services (name, enabled) values ('svc', true) returning 1");
	sid = testdb_int(tdb, "select id from services where name = 'svc'");
	assert_int_equal(blob_put(f->bs, shared, "kept by a young capture", 23, NULL, &err), 0);
	assert_int_equal(blob_put(f->bs, alone, "kept by an old one only", 23, NULL, &err), 0);
	assert_int_equal(blob_put(f->bs, old_orphan, "nobody keeps me", 15, NULL, &err), 0);
	assert_int_equal(blob_put(f->bs, young_orphan, "nobody yet", 10, NULL, &err), 0);
	assert_int_equal(blob_stored_size(f->bs, old_orphan, &orphan_size, &err), 0);
	age_object(f, old_orphan, 2);
	sqlf("insert into services (name, enabled) values ('svc2', true) returning 1");
	capture_of(sid, shared, 30, at);
	capture_of(testdb_int(tdb, "select id from services where name = 'svc2'"), shared, 1, at);
	capture_of(sid, alone, 30, at);
	assert_int_equal(config_load(&cfg, NULL, &err), 0);
	o.at_us = at;
	if (retention_run(&r, tdb->db, f->bs, &cfg, &o, &err) < 0)
		fail_msg("retention_run: %s", err.msg);
	assert_int_equal(r.to_summary, 2);
	assert_int_equal(r.blobs_deleted, 1);
	assert_int_equal(r.orphans_deleted, 1);
	assert_int_equal(r.orphan_bytes, orphan_size);
	assert_true(there(f, shared));
	assert_false(there(f, alone));
	assert_false(there(f, old_orphan));
	assert_true(there(f, young_orphan));

	assert_int_equal(retention_storage(&doc, tdb->db, f->bs, &cfg, &err), 0);
	bucket = json_object_get(doc, "bucket");
	assert_non_null(bucket);
	assert_null(json_object_get(doc, "disk"));
	assert_int_equal(json_integer_value(json_object_get(bucket, "objects")), 2);
	assert_int_equal(json_integer_value(json_object_get(bucket, "unreferenced_objects")), 1);
	assert_int_equal(
		json_integer_value(json_object_get(json_object_get(doc, "total"), "blobs")), 1);
	json_decref(doc);
	config_release(&cfg);
	assert_all_signed();
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_round_trip_in_the_documented_layout),
		T(test_an_existing_object_is_never_replaced_and_reads_are_verified),
		T(test_reads_are_capped),
		T(test_missing_blobs_and_deletes),
		T(test_list_pages_through_listobjectsv2),
		T(test_virtual_host_addressing),
		T(test_a_session_token_is_sent_and_signed),
		T(test_a_wrong_secret_is_refused_and_never_shown),
		T(test_a_missing_bucket_is_no_missing_blob),
		T(test_transient_errors_are_tried_again),
		T(test_a_copy_of_another_size_is_replaced_only_once_read),
		T(test_a_huge_error_document_is_not_read_to_its_end),
		T(test_unreachable_endpoint_names_it),
		cmocka_unit_test(test_settings_are_checked_before_anything_is_sent),
		T(test_hostile_listings_are_refused),
		cmocka_unit_test(test_the_xml_readers_refuse_what_they_cannot_read),
		cmocka_unit_test(test_the_xml_readers_read_pages_and_errors),
		cmocka_unit_test(test_a_callbacks_failure_is_returned_as_it_is),
		T(test_a_listing_whose_tokens_go_round_is_refused),
		T(test_endless_pages_of_keys_not_ours_end_the_listing),
		T(test_retention_deletes_only_what_no_capture_keeps_and_sweeps_orphans),
	};
#undef T

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
