/*
 * test_sources.c: what the profile sources read from outside, each with
 * its hostile inputs: target addresses, Prometheus file_sd files, the
 * gRPC-Web framing of Parca's answers, Connect error bodies, the sources
 * in the configuration file; and, against the test database, drops in a
 * store that is not a folder (through source_drops, as an object-store
 * client will plug in) and bytes fetched from the network ingested as a
 * file would be.
 */
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobs/collect.h"
#include "jobs/config.h"
#include "pipeline/parca.h"
#include "pipeline/pyroscope.h"
#include "pipeline/source.h"
#include "pipeline/targets.h"
#include "tests/support/testdb.h"

static const profile_limits limits = {64u << 20, 512u << 20, 10000000, 4096, 65536, 500000};

static char tmpdir[256];

static const char *write_tmp(const char *name, const char *text, size_t len)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	fclose(f);
	return path;
}

/* ---- targets ------------------------------------------------------------ */

static void test_target_addresses(void **state)
{
	static const struct {
		const char *addr;
		int ok;
	} cases[] = {
		{"10.0.0.5:6060", 1},
		{"web-3.prod_eu:443", 1},
		{"[::1]:6060", 1},
		{"localhost:1", 1},
		{"h:65535", 1},
		{"h:65536", 0},
		{"h:0", 0},
		{"h:06060", 0},
		{"h", 0},
		{":80", 0},
		{"http://h:80", 0},
		{"h:80/debug", 0},
		{"user@h:80", 0},
		{"h :80", 0},
		{"h:80\n", 0},
		{"[::1]", 0},
		{"[zz]:80", 0},
		{"-h:80", 0},
		{"h:8a", 0},
		{"evil.com#@good:80", 0},
		{"", 0},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (targets_address_valid(cases[i].addr) != cases[i].ok)
			fail_msg("'%s': want %d", cases[i].addr, cases[i].ok);
}

static void test_file_sd_reads_targets_and_the_wanted_labels(void **state)
{
	static const char text[] =
		"[{\"targets\": [\"a:1\", \"b:2\"], \"labels\": {\"release\": \"v42\", "
		"\"commit\": \"9fceb02\", \"job\": \"checkout\", \"card\": \"4111\"}},"
		" {\"targets\": [\"a:1\", \"c:3\"]}]";
	target_labels names = {"release", "commit", "host"};
	target_list l = {0};
	pr_error err = PR_ERROR_INIT;

	(void)state;
	assert_int_equal(targets_load_file_sd(&l, write_tmp("sd.json", text, sizeof(text) - 1),
					      &names, &err),
			 0);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.v[0].address, "a:1");
	assert_string_equal(l.v[0].release, "v42");
	assert_string_equal(l.v[0].commit, "9fceb02");
	assert_null(l.v[0].host);
	assert_string_equal(l.v[2].address, "c:3");
	assert_null(l.v[2].release);
	target_list_release(&l);
}

static void test_file_sd_refuses_what_is_not_the_format(void **state)
{
	static const struct {
		const char *text;
		const char *why;
	} cases[] = {
		{"[{\"targets\": [\"a:1\"]", "line 1: "},
		{"{\"targets\": [\"a:1\"]}", "not a JSON array of target groups"},
		{"[5]", "[0]: not an object"},
		{"[{\"targets\": \"a:1\"}]", "[0].targets: not an array"},
		{"[{\"targets\": [\"a:1\"], \"label\": {}}]", "[0]: unknown key \"label\""},
		{"[{\"targets\": [\"a:1\", \"http://b:2/x\"]}]",
		 "[0].targets[1]: 'http://b:2/x' is not a host:port"},
		{"[{\"targets\": [\"a:1\", \"b\\u001b[2J:2\"]}]",
		 "[0].targets[1]: 'b?[2J:2' is not a host:port"},
		{"[{\"targets\": [7]}]", "[0].targets[0]: '(not text)' is not a host:port"},
		/* A user and password before '@': their length only. */
		{"[{\"targets\": [\"admin:hunter2@10.0.0.1:6060\"]}]",
		 "[0].targets[0]: '<13 bytes>@10.0.0.1:6060' is not a host:port"},
		{"[{\"targets\": [\"a:1\"], \"labels\": []}]", "[0].labels: not an object"},
		{"[{\"targets\": [\"a:1\"], \"labels\": {\"release\": 4}}]",
		 "[0].labels.release: not a string"},
		{"[{\"targets\": [\"a:1\"], \"labels\": {\"release\": \"v\\\"1\"}}]",
		 "[0].labels.release: a control character, quote or backslash"},
		{"[{\"targets\": [\"a:1\"], \"labels\": {\"release\": \"\"}}]",
		 "[0].labels.release: must be 1 to 256 bytes"},
	};
	target_labels names = {"release", "commit", NULL};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		target_list l = {0};
		pr_error err = PR_ERROR_INIT;
		const char *path;
		char want[700];
		assert_int_equal(targets_add(&l, "keep:1", &err), 0);
		path = write_tmp("bad.json", cases[i].text, strlen(cases[i].text));
		assert_int_equal(targets_load_file_sd(&l, path, &names, &err), PR_EDATA);
		snprintf(want, sizeof(want), "file_sd '%s': %s", path, cases[i].why);
		if (strncmp(err.msg, want, strlen(want)) != 0)
			fail_msg("case %zu: '%s', want '%s'", i, err.msg, want);
		/* Nothing of a bad file is kept; what was there stays. */
		assert_int_equal(l.n, 1);
		target_list_release(&l);
	}
}

static void test_file_sd_limits(void **state)
{
	size_t n = TARGETS_FILE_MAX + 10;
	char *big = malloc(n);
	target_list l = {0};
	pr_error err = PR_ERROR_INIT;
	const char *path;
	char want[600];

	(void)state;
	assert_non_null(big);
	memset(big, ' ', n);
	big[0] = '[';
	big[n - 1] = ']';
	path = write_tmp("big.json", big, n);
	assert_int_equal(targets_load_file_sd(&l, path, NULL, &err), PR_EDATA);
	snprintf(want, sizeof(want), "file_sd '%s': larger than %u bytes", path, TARGETS_FILE_MAX);
	assert_string_equal(err.msg, want);
	free(big);
	pr_error_clear(&err);
	snprintf(want, sizeof(want), "%s/nosuch.json", tmpdir);
	assert_int_equal(targets_load_file_sd(&l, want, NULL, &err), PR_ENOTFOUND);
	assert_non_null(strstr(err.msg, "nosuch.json"));
	assert_int_equal(l.n, 0);
}

/* ---- Parca's gRPC-Web framing and Connect errors ------------------------ */

static void test_grpcweb_frames(void **state)
{
	static const uint8_t good[] = {
		0,   0,   0,   0,   2,   0x32, 0x00, 0x80, 0,   0,   0,   33,  'g',  'r',  'p',
		'c', '-', 's', 't', 'a', 't',  'u',  's',  ':', ' ', '1', '6', '\r', '\n', 'g',
		'r', 'p', 'c', '-', 'm', 'e',  's',  's',  'a', 'g', 'e', ':', 'n',  'o',  '\n'};
	static const struct {
		uint8_t bytes[20];
		size_t len;
		const char *why;
	} bad[] = {
		{{0, 0, 0}, 3, "a frame header cut short at byte 0"},
		{{0, 0, 0, 0, 9, 1, 2},
		 7,
		 "a frame of 9 bytes at byte 0 runs past the end (7 bytes)"},
		{{0, 0xff, 0xff, 0xff, 0xff, 1},
		 6,
		 "a frame of 4294967295 bytes at byte 0 runs past"},
		{{1, 0, 0, 0, 1, 7}, 6, "a compressed frame"},
		{{0, 0, 0, 0, 1, 7, 0x80, 0, 0}, 9, "a frame header cut short at byte 6"},
		/* A unary answer is one message, then the trailer. */
		{{0, 0, 0, 0, 1, 7, 0, 0, 0, 0, 1, 8, 0x80, 0, 0, 0, 0},
		 17,
		 "a second message at byte 6 (a unary answer has one)"},
		{{0x80, 0, 0, 0, 0, 0, 0, 0, 0, 1, 7}, 11, "a frame at byte 5 after the trailer"},
	};
	const uint8_t *msg;
	size_t len;
	int status;
	char gmsg[64], why[128];

	(void)state;
	assert_int_equal(parca_grpcweb_parse(&msg, &len, &status, gmsg, sizeof(gmsg), good,
					     sizeof(good), why, sizeof(why)),
			 0);
	assert_int_equal(len, 2);
	assert_int_equal(msg[0], 0x32);
	assert_int_equal(status, 16);
	assert_string_equal(gmsg, "no");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parca_grpcweb_parse(&msg, &len, &status, gmsg, sizeof(gmsg),
						     bad[i].bytes, bad[i].len, why, sizeof(why)),
				 PR_EDATA);
		if (strncmp(why, bad[i].why, strlen(bad[i].why)) != 0)
			fail_msg("case %zu: '%s', want '%s'", i, why, bad[i].why);
	}
	/* No trailer at all: status -1, for the caller to refuse. */
	assert_int_equal(parca_grpcweb_parse(&msg, &len, &status, gmsg, sizeof(gmsg), good, 7, why,
					     sizeof(why)),
			 0);
	assert_int_equal(status, -1);
}

/* One length-delimited protobuf field (lengths under 128) into b. */
static void pb_field(buf *b, int field, const void *data, size_t len)
{
	uint8_t head[2] = {(uint8_t)(field << 3 | 2), (uint8_t)len};

	assert_true(len < 128);
	assert_int_equal(buf_put(b, head, 2), 0);
	assert_int_equal(buf_put(b, data, len), 0);
}

/* One gRPC-Web frame (flag 0: data, 0x80: trailer) into b. */
static void grpcweb_frame(buf *b, uint8_t flag, const void *data, size_t len)
{
	uint8_t head[5] = {flag, 0, 0, (uint8_t)(len >> 8), (uint8_t)len};

	assert_int_equal(buf_put(b, head, 5), 0);
	assert_int_equal(buf_put(b, data, len), 0);
}

/* parca_answer_parse of the answer in `a`, from the server the messages name. */
static int answer(source_fetched *f, const buf *a, size_t max, const char *hdr_status,
		  const char *hdr_message, pr_error *err)
{
	return parca_answer_parse(f, (const uint8_t *)a->ptr, a->len, max, "https://parca:7070",
				  hdr_status, hdr_message, err);
}

static void test_parca_answers(void **state)
{
	static const char ok[] = "grpc-status: 0\r\n";
	static const char busy[] = "grpc-status: 14\r\ngrpc-message: try \x1b[2J later\r\n";
	buf msg = BUF_INIT, a = BUF_INIT;
	source_fetched f;
	pr_error err = PR_ERROR_INIT;

	(void)state;
	/* QueryResponse{pprof: "\x1f\x8b!"}: the bytes, as they came. */
	pb_field(&msg, 6, "\x1f\x8b!", 3);
	grpcweb_frame(&a, 0, msg.ptr, msg.len);
	grpcweb_frame(&a, 0x80, ok, strlen(ok));
	source_fetched_init(&f);
	assert_int_equal(answer(&f, &a, 1024, NULL, NULL, &err), 0);
	assert_int_equal(f.body.len, 3);
	assert_memory_equal(f.body.ptr, "\x1f\x8b!", 3);
	source_fetched_release(&f);
	/* Over the cap (the first error set is kept: clear it between cases). */
	source_fetched_init(&f);
	assert_int_equal(answer(&f, &a, 2, NULL, NULL, &err), PR_ELIMIT);
	assert_string_equal(err.msg, "parca 'https://parca:7070': larger than the input limit of "
				     "2 bytes");
	assert_int_equal(f.body.len, 0);
	source_fetched_release(&f);
	/* UNAVAILABLE: worth a retry, its message made safe. */
	buf_reset(&a);
	grpcweb_frame(&a, 0x80, busy, strlen(busy));
	source_fetched_init(&f);
	pr_error_clear(&err);
	assert_int_equal(answer(&f, &a, 1024, NULL, NULL, &err), PR_EIO);
	assert_true(f.retry);
	/* A word holding a control byte is never quoted, only counted. */
	assert_string_equal(err.msg, "parca 'https://parca:7070': gRPC status 14 UNAVAILABLE: "
				     "try <4 bytes> later");
	source_fetched_release(&f);
	/* A grpc-status that is not a number is UNKNOWN, never OK, whatever the frames hold. */
	{
		static const char *const odd[] = {"grpc-status: \r\n", "grpc-status: ok\r\n",
						  "grpc-status: 0x\r\n"};
		for (size_t i = 0; i < sizeof(odd) / sizeof(*odd); i++) {
			buf_reset(&a);
			grpcweb_frame(&a, 0, msg.ptr, msg.len);
			grpcweb_frame(&a, 0x80, odd[i], strlen(odd[i]));
			source_fetched_init(&f);
			pr_error_clear(&err);
			assert_int_equal(answer(&f, &a, 1024, NULL, NULL, &err), PR_EUSAGE);
			assert_string_equal(err.msg,
					    "parca 'https://parca:7070': gRPC status 2 UNKNOWN");
			assert_int_equal(f.body.len, 0);
			source_fetched_release(&f);
		}
	}
	/*
	 * "Trailers-only": the status in the HTTP headers and no frame at all,
	 * as gRPC-Web proxies answer a call that fails at once. Without the
	 * headers it is a malformed answer; with them, the status it is.
	 */
	buf_reset(&a);
	source_fetched_init(&f);
	pr_error_clear(&err);
	assert_int_equal(answer(&f, &a, 1024, NULL, NULL, &err), PR_EDATA);
	assert_non_null(strstr(err.msg, "no grpc-status trailer"));
	pr_error_clear(&err);
	assert_int_equal(answer(&f, &a, 1024, "7", "no access to \x1b[2J tenant", &err),
			 PR_EREFUSED);
	assert_string_equal(err.msg, "parca 'https://parca:7070': gRPC status 7 "
				     "PERMISSION_DENIED: no access to <4 bytes> tenant");
	pr_error_clear(&err);
	assert_int_equal(answer(&f, &a, 1024, "14", "", &err), PR_EIO);
	assert_true(f.retry);
	source_fetched_release(&f);
	/* A trailer frame and the headers: a failure in either is the answer's. */
	buf_reset(&a);
	grpcweb_frame(&a, 0x80, busy, strlen(busy));
	source_fetched_init(&f);
	pr_error_clear(&err);
	assert_int_equal(answer(&f, &a, 1024, "0", "", &err), PR_EIO);
	source_fetched_release(&f);
	buf_reset(&a);
	grpcweb_frame(&a, 0, msg.ptr, msg.len);
	grpcweb_frame(&a, 0x80, ok, strlen(ok));
	source_fetched_init(&f);
	pr_error_clear(&err);
	assert_int_equal(answer(&f, &a, 1024, "7", "denied", &err), PR_EREFUSED);
	assert_string_equal(err.msg, "parca 'https://parca:7070': gRPC status 7 "
				     "PERMISSION_DENIED: denied");
	assert_int_equal(f.body.len, 0);
	source_fetched_release(&f);
	/* A QueryResponse with no report, then bytes protobuf-c refuses. */
	buf_reset(&a);
	grpcweb_frame(&a, 0, "", 0);
	grpcweb_frame(&a, 0x80, ok, strlen(ok));
	source_fetched_init(&f);
	pr_error_clear(&err);
	assert_int_equal(answer(&f, &a, 1024, NULL, NULL, &err), PR_EDATA);
	assert_string_equal(err.msg, "parca 'https://parca:7070': the QueryResponse holds no "
				     "pprof report");
	buf_reset(&a);
	grpcweb_frame(&a, 0, "\x32\x09xy", 4);
	grpcweb_frame(&a, 0x80, ok, strlen(ok));
	pr_error_clear(&err);
	assert_int_equal(answer(&f, &a, 1024, NULL, NULL, &err), PR_EDATA);
	assert_string_equal(err.msg, "parca 'https://parca:7070': malformed QueryResponse (4 "
				     "bytes protobuf-c cannot decode)");
	source_fetched_release(&f);
	/*
	 * Fields it does not know, 2 bytes each, by the thousand: refused
	 * before protobuf-c keeps a structure for each.
	 */
	buf_reset(&a);
	buf_reset(&msg);
	pb_field(&msg, 6, "\x1f\x8b!", 3);
	for (int i = 0; i < 64; i++)
		assert_int_equal(buf_put(&msg, "\x78\x00", 2), 0);
	grpcweb_frame(&a, 0, msg.ptr, msg.len);
	grpcweb_frame(&a, 0x80, ok, strlen(ok));
	source_fetched_init(&f);
	pr_error_clear(&err);
	assert_int_equal(answer(&f, &a, 1024, NULL, NULL, &err), PR_EDATA);
	assert_string_equal(err.msg, "parca 'https://parca:7070': malformed QueryResponse (more "
				     "than 64 fields)");
	source_fetched_release(&f);
	/* 64 in all are read. */
	buf_reset(&a);
	buf_reset(&msg);
	pb_field(&msg, 6, "\x1f\x8b!", 3);
	for (int i = 0; i < 63; i++)
		assert_int_equal(buf_put(&msg, "\x78\x00", 2), 0);
	grpcweb_frame(&a, 0, msg.ptr, msg.len);
	grpcweb_frame(&a, 0x80, ok, strlen(ok));
	source_fetched_init(&f);
	pr_error_clear(&err);
	assert_int_equal(answer(&f, &a, 1024, NULL, NULL, &err), 0);
	assert_int_equal(f.body.len, 3);
	source_fetched_release(&f);
	buf_release(&msg);
	buf_release(&a);
}

/* A Labels message of one pair into b (a SeriesResponse's labels_set). */
static void series(buf *b, const char *name, const char *value)
{
	buf pair = BUF_INIT, labels = BUF_INIT;

	pb_field(&pair, 1, name, strlen(name));
	pb_field(&pair, 2, value, strlen(value));
	pb_field(&labels, 1, pair.ptr, pair.len);
	pb_field(b, 2, labels.ptr, labels.len);
	buf_release(&pair);
	buf_release(&labels);
}

static void test_pyroscope_series_answers(void **state)
{
	static const char shown[] = "https://pyroscope:4040";
	buf a = BUF_INIT;
	char **v = NULL, name[16];
	size_t n = 0;
	pr_error err = PR_ERROR_INIT;

	(void)state;
	series(&a, "release", "v1");
	series(&a, "release", "v2");
	series(&a, "release", "v1");
	assert_int_equal(pyroscope_series_values(&v, &n, (const uint8_t *)a.ptr, a.len, "release",
						 shown, &err),
			 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0], "v1");
	assert_string_equal(v[1], "v2");
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	/*
	 * Series without the label (another label, or the label empty)
	 * beside ones with it: fetched too, as "", last. They were skipped,
	 * their samples never collected, the slot stored all the same.
	 */
	series(&a, "pod", "p-1");
	series(&a, "release", "");
	assert_int_equal(pyroscope_series_values(&v, &n, (const uint8_t *)a.ptr, a.len, "release",
						 shown, &err),
			 0);
	assert_int_equal(n, 3);
	assert_string_equal(v[1], "v2");
	assert_string_equal(v[2], "");
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	/* None with it: no values, the whole selector is one release. */
	buf_reset(&a);
	series(&a, "pod", "p-1");
	series(&a, "release", "");
	assert_int_equal(pyroscope_series_values(&v, &n, (const uint8_t *)a.ptr, a.len, "release",
						 shown, &err),
			 0);
	assert_int_equal(n, 0);
	free(v);
	/* A value that cannot be a release fails the slot, quoted by its length. */
	series(&a, "release", "v1");
	series(&a, "release", "a\"b 4111111111111111");
	assert_int_equal(pyroscope_series_values(&v, &n, (const uint8_t *)a.ptr, a.len, "release",
						 shown, &err),
			 PR_EDATA);
	assert_null(v);
	assert_int_equal(n, 0);
	assert_string_equal(err.msg, "pyroscope 'https://pyroscope:4040': a series' value of label "
				     "'release' (20 bytes) cannot be a release (longer than 256 "
				     "bytes, or holding a control character, quote or backslash): "
				     "the slot is not collected");
	pr_error_clear(&err);
	/* One value past PYROSCOPE_MAX_VALUES. */
	buf_reset(&a);
	for (int i = 0; i <= PYROSCOPE_MAX_VALUES; i++) {
		snprintf(name, sizeof(name), "v%d", i);
		series(&a, "release", name);
	}
	assert_int_equal(pyroscope_series_values(&v, &n, (const uint8_t *)a.ptr, a.len, "release",
						 shown, &err),
			 PR_ELIMIT);
	assert_null(v);
	assert_int_equal(n, 0);
	assert_string_equal(err.msg, "pyroscope 'https://pyroscope:4040': more than 16 values of "
				     "label 'release' in one slot");
	/* Cut short. */
	pr_error_clear(&err);
	assert_int_equal(pyroscope_series_values(&v, &n, (const uint8_t *)a.ptr, a.len - 1,
						 "release", shown, &err),
			 PR_EDATA);
	assert_null(v);
	assert_true(strstr(err.msg, "malformed SeriesResponse") != NULL);
	buf_reset(&a);
	/*
	 * An answer over the cap is refused before it is decoded: empty
	 * Labels entries, two bytes each, would cost protobuf-c a structure
	 * of tens of bytes apiece.
	 */
	pr_error_clear(&err);
	for (size_t i = 0; i < PYROSCOPE_SERIES_MAX / 2 + 1; i++)
		assert_int_equal(buf_put(&a, "\x12\x00", 2), 0);
	assert_int_equal(pyroscope_series_values(&v, &n, (const uint8_t *)a.ptr, a.len, "release",
						 shown, &err),
			 PR_ELIMIT);
	assert_null(v);
	assert_true(strstr(err.msg, "a SeriesResponse of 1048578 bytes") != NULL);
	buf_release(&a);
}

static void test_error_bodies_are_made_safe(void **state)
{
	buf b = BUF_INIT;
	char out[300];

	(void)state;
	assert_int_equal(
		buf_puts(&b,
			 "{\"code\":\"unauthenticated\",\"message\":\"no\\u001b[2J \\\"x\\\"\"}"),
		0);
	pyroscope_connect_error(out, sizeof(out), 401, &b);
	assert_string_equal(out, "HTTP 401 unauthenticated: <10 bytes>");
	buf_reset(&b);
	assert_int_equal(buf_puts(&b, "upstream \x9b\x1b[31mdown\nsecond line"), 0);
	pyroscope_connect_error(out, sizeof(out), 502, &b);
	assert_string_equal(out, "HTTP 502: 'upstream <10 bytes>'");
	buf_reset(&b);
	/* A JSON body over the cap is not parsed (jansson holds 20 times what it reads). */
	assert_int_equal(buf_puts(&b, "{\"code\":\"internal\",\"message\":\"boom\",\"pad\":\""), 0);
	for (size_t i = 0; i < PYROSCOPE_ERROR_JSON_MAX; i += 8)
		assert_int_equal(buf_puts(&b, "[0,0,0,]"), 0);
	assert_int_equal(buf_puts(&b, "\"}"), 0);
	pyroscope_connect_error(out, sizeof(out), 500, &b);
	/* Not parsed ("HTTP 500 internal: boom"): the body as an excerpt of its words. */
	assert_true(strncmp(out, "HTTP 500: '", 11) == 0);
	assert_null(strstr(out, "500 internal"));
	buf_reset(&b);
	assert_int_equal(buf_put(&b, "\x1f\x8b\0\0binary", 10), 0);
	source_body_hint(out, sizeof(out), &b);
	assert_string_equal(out, "");
	buf_release(&b);
}

static void test_selector_narrowed_to_a_release(void **state)
{
	char *s;

	(void)state;
	s = pyroscope_selector_with("{service_name=\"checkout\"}", "service_git_ref", "abc");
	assert_string_equal(s, "{service_name=\"checkout\",service_git_ref=\"abc\"}");
	free(s);
	s = pyroscope_selector_with("{}", "v", "1");
	assert_string_equal(s, "{v=\"1\"}");
	free(s);
	assert_null(pyroscope_selector_with("service_name=\"x\"", "v", "1"));
}

/* ---- sources in the configuration file ---------------------------------- */

static void test_config_sources(void **state)
{
	static const char text[] =
		"{\"collect\": {\"max_concurrent\": 3, \"max_concurrent_fleet\": 5,"
		"  \"cooldown_s\": 60, \"budget_s\": 100, \"retries\": 2, \"retry_s\": 7},"
		" \"services\": {\"checkout\": {\"types\": [\"cpu\", \"heap\"],"
		"  \"max_concurrent\": 1,"
		"  \"sources\": ["
		"   {\"type\": \"dir\", \"dir\": \"/spool/checkout\"},"
		"   {\"type\": \"pprof_http\", \"targets\": [\"a:1\"],"
		"    \"file_sd\": [\"/etc/sd.json\"], \"scheme\": \"https\", \"seconds\": 20,"
		"    \"ca_file\": \"/etc/ca.pem\"},"
		"   {\"type\": \"pyroscope\", \"url\": \"https://pyro:4040/\","
		"    \"tenant\": \"acme\", \"types\": [\"cpu\"],"
		"    \"profile_types\": {\"cpu\": \"x:cpu:n:cpu:n\"},"
		"    \"auth\": \"basic\", \"username\": \"u\", \"secret_env\": \"PW\"},"
		"   {\"type\": \"parca\", \"url\": \"https://parca:7070\","
		"    \"selector\": \"{comm=\\\"c\\\"}\","
		"    \"slot_s\": 600}]}}}";
	config c;
	pr_error err = PR_ERROR_INIT;
	const config_service *s;

	(void)state;
	assert_int_equal(config_load(&c, write_tmp("cfg.json", text, sizeof(text) - 1), &err), 0);
	assert_int_equal(c.collect.max_concurrent, 3);
	assert_int_equal(c.collect.max_concurrent_fleet, 5);
	assert_int_equal(c.collect.cooldown_us, 60000000);
	assert_int_equal(c.collect.budget_us, 100000000);
	assert_int_equal(c.collect.retry_us, 7000000);
	s = config_service_find(&c, "checkout");
	assert_non_null(s);
	assert_int_equal(s->max_concurrent, 1);
	assert_int_equal(s->nsources, 4);
	assert_int_equal(s->sources[0].kind, CONFIG_SRC_DIR);
	assert_string_equal(s->sources[0].dir, "/spool/checkout");
	assert_int_equal(s->sources[1].kind, CONFIG_SRC_PPROF_HTTP);
	assert_int_equal(s->sources[1].seconds, 20);
	assert_int_equal(s->sources[1].nprofiles, 2);
	assert_string_equal(s->sources[1].profiles[0].id, "profile");
	assert_string_equal(s->sources[1].profiles[1].id, "heap");
	assert_int_equal(s->sources[1].slot_us, 3600000000LL);
	assert_int_equal(s->sources[2].kind, CONFIG_SRC_PYROSCOPE);
	assert_string_equal(s->sources[2].url, "https://pyro:4040");
	assert_string_equal(s->sources[2].selector, "{service_name=\"checkout\"}");
	assert_string_equal(s->sources[2].version_label, "service_git_ref");
	assert_int_equal(s->sources[2].nprofiles, 1);
	assert_string_equal(s->sources[2].profiles[0].id, "x:cpu:n:cpu:n");
	assert_true(s->sources[2].basic);
	assert_int_equal(s->sources[3].kind, CONFIG_SRC_PARCA);
	assert_string_equal(s->sources[3].profiles[0].id,
			    "parca_agent:samples:count:cpu:nanoseconds:delta");
	assert_string_equal(s->sources[3].profiles[1].id, "memory:inuse_space:bytes:space:bytes");
	assert_int_equal(s->sources[3].slot_us, 600000000LL);
	config_release(&c);
}

/* Escalation asks heap of a host only where its source pulls heap. */
static void test_a_host_pulls_heap_only_where_its_source_takes_it(void **state)
{
	static const char text[] = "{\"services\": {"
				   "  \"cpuonly\": {\"types\": [\"cpu\"], \"sources\": ["
				   "   {\"type\": \"pprof_http\", \"targets\": [\"h1:6060\"]}]},"
				   "  \"both\": {\"types\": [\"cpu\", \"heap\"], \"sources\": ["
				   "   {\"type\": \"pprof_http\", \"targets\": [\"h1:6061\"]}]}}}";
	config c;
	pr_error err = PR_ERROR_INIT;
	const config_service *cpu, *both;

	(void)state;
	assert_int_equal(config_load(&c, write_tmp("pulls.json", text, sizeof(text) - 1), &err), 0);
	cpu = config_service_find(&c, "cpuonly");
	both = config_service_find(&c, "both");
	assert_true(collect_target_pulls(cpu, "h1", "cpu"));
	assert_false(collect_target_pulls(cpu, "h1", "heap"));
	assert_true(collect_target_pulls(both, "h1", "heap"));
	assert_false(collect_target_pulls(both, "h2", "cpu"));
	assert_false(collect_target_pulls(NULL, "h1", "cpu"));
	config_release(&c);
}

static void test_config_source_mistakes(void **state)
{
	static const struct {
		const char *source;
		const char *msg;
	} cases[] = {
		{"{\"dir\": \"/x\"}", "services.s.sources[0]: needs a \"type\""},
		{"{\"type\": \"ftp\"}", "services.s.sources[0].type: expected dir, pprof_http"},
		{"{\"type\": \"s3\", \"prefix\": \"p\"}",
		 "services.s.sources[0].type: object-store drops are \"s3_prefix\""},
		{"{\"type\": \"dir\"}", "services.s.sources[0]: a dir source needs \"dir\""},
		{"{\"type\": \"dir\", \"dir\": \"/x\", \"seconds\": 3}",
		 "services.s.sources[0].seconds: unknown key"},
		{"{\"type\": \"pprof_http\", \"targets\": [\"a:1\"], \"seconds\": 0}",
		 "services.s.sources[0].seconds: expected a value from 1 to 3600"},
		{"{\"type\": \"pprof_http\", \"targets\": [\"a:1\"], \"types\": [\"wall\"]}",
		 "services.s.sources[0].types: a Go pprof endpoint has no such profile"},
		{"{\"type\": \"pprof_http\", \"targets\": [\"a:1\"], \"scheme\": \"ftp\"}",
		 "services.s.sources[0].scheme: expected http or https"},
		{"{\"type\": \"pprof_http\", \"targets\": [\"a:1\"], \"auth\": \"bearer\"}",
		 "services.s.sources[0]: auth needs secret_env or secret_file"},
		{"{\"type\": \"pprof_http\", \"targets\": [\"a:1\"], \"auth\": \"basic\","
		 " \"secret_env\": \"X\"}",
		 "services.s.sources[0]: basic auth needs \"username\""},
		{"{\"type\": \"pyroscope\", \"url\": \"pyro:4040\"}",
		 "services.s.sources[0].url: expected an http:// or https:// URL"},
		{"{\"type\": \"pyroscope\", \"url\": \"http://10.1.2.3:4040\","
		 " \"secret_file\": \"/k\"}",
		 "services.s.sources[0].url: a source with a secret needs an https:// URL"},
		{"{\"type\": \"pyroscope\", \"url\": \"https://p\","
		 " \"selector\": \"{a=\\\"b\\\"}\\r\\n\"}",
		 "services.s.sources[0].selector: expected printable text"},
		{"{\"type\": \"pyroscope\", \"url\": \"https://p\","
		 " \"profile_types\": {\"heap\": \"x\"}}",
		 "services.s.sources[0].profile_types.heap: not one of the source's types"},
		{"{\"type\": \"pyroscope\", \"url\": \"https://p\", \"types\": [\"wall\"]}",
		 "services.s.sources[0].types: no default profile type id for it"},
		{"{\"type\": \"parca\", \"url\": \"https://p\"}",
		 "services.s.sources[0]: a parca source needs \"selector\""},
		{"{\"type\": \"s3_prefix\", \"endpoint\": \"https://s3\","
		 " \"region\": \"eu-west-1\"}",
		 "services.s.sources[0].bucket: required for an s3_prefix source"},
		{"{\"type\": \"s3_prefix\", \"endpoint\": \"http://10.0.0.1:9000\","
		 " \"bucket\": \"drops\", \"region\": \"eu-west-1\"}",
		 "services.s.sources[0].endpoint: expected an https:// URL"},
		{"{\"type\": \"s3_prefix\", \"endpoint\": \"https://s3\","
		 " \"bucket\": \"Drops_1\", \"region\": \"eu-west-1\"}",
		 "services.s.sources[0]: S3 bucket 'Drops_1' is not a valid bucket name"},
		{"{\"type\": \"s3_prefix\", \"endpoint\": \"https://s3\", \"bucket\": \"drops\","
		 " \"region\": \"eu-west-1\", \"prefix\": \"a/../b\"}",
		 "services.s.sources[0]: S3 prefix 'a/../b' is not usable"},
		{"{\"type\": \"s3_prefix\", \"endpoint\": \"https://s3\", \"bucket\": \"drops\","
		 " \"region\": \"eu-west-1\", \"secret_env\": \"X\"}",
		 "services.s.sources[0].secret_env: unknown key"},
		{"{\"type\": \"s3_prefix\", \"endpoint\": \"https://s3\", \"bucket\": \"drops\","
		 " \"region\": \"eu-west-1\", \"secret_access_key_env\": \"A\","
		 " \"secret_access_key_file\": \"/k\"}",
		 "services.s.sources[0]: the secret access key from a variable or a file, "
		 "not both"},
		{"{\"type\": \"s3_prefix\", \"endpoint\": \"https://s3\", \"bucket\": \"drops\","
		 " \"region\": \"eu-west-1\", \"addressing\": \"dns\"}",
		 "services.s.sources[0].addressing: expected \"path\" or \"virtual\""},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[1024], want[1200];
		const char *path;
		config c;
		pr_error err = PR_ERROR_INIT;
		snprintf(text, sizeof(text), "{\"services\": {\"s\": {\"sources\": [%s]}}}",
			 cases[i].source);
		path = write_tmp("bad-cfg.json", text, strlen(text));
		assert_int_equal(config_load(&c, path, &err), PR_EUSAGE);
		snprintf(want, sizeof(want), "config '%s': %s", path, cases[i].msg);
		if (strncmp(err.msg, want, strlen(want)) != 0)
			fail_msg("case %zu: '%s', want '%s'", i, err.msg, want);
	}
}

/* Object names under a drop prefix: what is refused, and why. */
static void test_drop_names(void **state)
{
	static const struct {
		const char *name;
		const char *why; /* NULL: usable */
	} cases[] = {
		{"cpu-1.pb.gz", NULL},
		{"2026/11/30/web-3.folded", NULL},
		{"a..b.folded", NULL},
		{"../escape.folded", "a '.' or '..' path segment"},
		{"a/../../etc/passwd", "a '.' or '..' path segment"},
		{"a/./b", "a '.' or '..' path segment"},
		{"..", "a '.' or '..' path segment"},
		{"/etc/passwd", "an absolute path"},
		{"a//b", "an empty path segment"},
		{"a/", "an empty path segment"},
		{"", "an empty path segment"},
		{"evil\x1b[2Jname", "a control character"},
		{"line\nbreak", "a control character"},
		{"del\x7f", "a control character"},
		{"..\\windows", "a backslash"},
	};
	char longname[INGEST_PATH_MAX + 2];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *why = source_drop_name_refused(cases[i].name);
		if (!cases[i].why && why)
			fail_msg("case %zu: '%s' refused: %s", i, cases[i].name, why);
		if (cases[i].why && (!why || strcmp(why, cases[i].why) != 0))
			fail_msg("case %zu: got '%s', want '%s'", i, why ? why : "(usable)",
				 cases[i].why);
	}
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_string_equal(source_drop_name_refused(longname), "longer than 1024 bytes");
	longname[INGEST_PATH_MAX] = '\0';
	assert_null(source_drop_name_refused(longname));
}

/* ---- drops through source_drops, bytes from the network -------------------- */

/* An object store in memory: names and contents, and a failing list. */
typedef struct mem_store {
	const char *const *names;
	const char *const *data;
	size_t n;
	bool fail_list;
} mem_store;

static int mem_list(void *ctx, char ***names, size_t *n, pr_error *err)
{
	mem_store *m = ctx;

	if (m->fail_list)
		return pr_error_set(err, PR_EIO, "cannot list 's3://b/p': connection refused");
	*names = calloc(m->n + 1, sizeof(**names));
	for (size_t i = 0; i < m->n; i++)
		(*names)[i] = strdup(m->names[i]);
	*n = m->n;
	return 0;
}

static int mem_read(void *ctx, buf *out, const char *name, size_t max, pr_error *err)
{
	mem_store *m = ctx;

	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->names[i], name) == 0) {
			buf_init(out, max);
			if (buf_puts(out, m->data[i]) < 0)
				return pr_error_set(err, PR_ELIMIT, "too large");
			return 0;
		}
	return pr_error_set(err, PR_ENOTFOUND, "no object '%s'", name);
}

static void test_drops_in_a_store_that_is_not_a_folder(void **state)
{
	testdb *t = *state;
	static const char *const names[] = {"b.folded.json", "a.folded", "a.folded.json",
					    "b.folded",      "c.folded", "d.folded",
					    "d.folded.json"};
	static const char *const data[] = {
		"{\"release\": \"v1\", \"host\": \"web-2\"}",
		"main;a 3\n",
		"{\"release\": \"v1\", \"time\": \"2026-11-29T02:00:00Z\"}",
		"main;b 1\n",
		"main;c 1\n",
		"main;d 1\n",
		"{\"release\": \"v1\", \"commit\": \"xyz\"}"};
	mem_store m = {names, data, 7, false};
	source_drops src = {"s3://bucket/checkout", &m, mem_list, mem_read};
	blob_store *bs = NULL;
	pr_error err = PR_ERROR_INIT;
	source_report rep;
	char root[300];

	snprintf(root, sizeof(root), "%s/blobs", tmpdir);
	assert_int_equal(blob_store_open_dir(&bs, root, &err), 0);
	assert_int_equal(db_service_add(t->db, "checkout", NULL, &err), 0);
	assert_int_equal(db_service_set_enabled(t->db, "checkout", true, &err), 0);
	assert_int_equal(source_collect_drops(&rep, t->db, bs, "checkout", &src, &limits, &err), 0);
	assert_int_equal(rep.stored, 2);
	assert_int_equal(rep.waiting, 1);
	assert_int_equal(rep.failed, 1);
	assert_string_equal(rep.first_error, "sidecar 's3://bucket/checkout/d.folded.json': commit "
					     "'xyz' is not a hex SHA (4 to 64 hex digits)");
	source_report_release(&rep);
	assert_int_equal(testdb_int(t, "select count(*) from profiles where host = 'web-2'"), 1);
	assert_int_equal(testdb_int(t, "select count(*) from profiles where captured_at = "
				       "'2026-11-29T02:00:00Z'"),
			 1);
	/* Again: nothing new. */
	assert_int_equal(source_collect_drops(&rep, t->db, bs, "checkout", &src, &limits, &err), 0);
	assert_int_equal(rep.stored, 0);
	assert_int_equal(rep.already, 2);
	source_report_release(&rep);
	/* A store that cannot be listed is the source's failure, with its message. */
	m.fail_list = true;
	assert_int_equal(source_collect_drops(&rep, t->db, bs, "checkout", &src, &limits, &err),
			 PR_EIO);
	assert_string_equal(err.msg, "cannot list 's3://b/p': connection refused");
	source_report_release(&rep);
	blob_store_free(bs);
}

static void test_fetched_bytes_are_ingested_as_a_file(void **state)
{
	testdb *t = *state;
	static const char folded[] = "main;handle;computeTax 6\nmain;handle;priceItems 4\n";
	ingest_request req = {0};
	ingest_result res;
	blob_store *bs = NULL;
	pr_error err = PR_ERROR_INIT;
	profile_limits small = limits;
	char root[300];

	snprintf(root, sizeof(root), "%s/blobs2", tmpdir);
	assert_int_equal(blob_store_open_dir(&bs, root, &err), 0);
	assert_int_equal(db_service_add(t->db, "api", NULL, &err), 0);
	assert_int_equal(db_service_set_enabled(t->db, "api", true, &err), 0);
	req.service = "api";
	req.release = "v2";
	req.display = "http://10.0.0.5:6060/debug/pprof/profile?seconds=10";
	req.time_us = 1796000000000000LL;
	assert_int_equal(source_ingest_bytes(&res, t->db, bs, &req, folded, sizeof(folded) - 1,
					     &limits, &err),
			 0);
	assert_false(res.already);
	assert_int_equal(res.total, 10);
	assert_int_equal(source_ingest_bytes(&res, t->db, bs, &req, folded, sizeof(folded) - 1,
					     &limits, &err),
			 0);
	assert_true(res.already);
	/* The same limits as a file, the message naming the display name. */
	small.max_input_bytes = 16;
	assert_int_equal(source_ingest_bytes(&res, t->db, bs, &req,
					     "main;x 1\nmain;y 2\nmain;z 3\n", 27, &small, &err),
			 PR_ELIMIT);
	assert_false(res.infra);
	assert_non_null(strstr(err.msg, "larger than the input limit of 16 bytes"));
	pr_error_clear(&err);
	assert_int_equal(
		source_ingest_bytes(&res, t->db, bs, &req, "\x1f\x8b\x08junk", 7, &limits, &err),
		PR_EDATA);
	assert_true(strncmp(err.msg,
			    "cannot decompress 'http://10.0.0.5:6060/debug/pprof/profile"
			    "?seconds=10'",
			    70) == 0);
	assert_int_equal(testdb_int(t, "select count(*) from profiles"), 1);
	blob_store_free(bs);
}

static int setup_tmp(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "%s/test_sources.XXXXXX",
		 getenv("PROFREG_TEST_TMP") ? getenv("PROFREG_TEST_TMP") : "/tmp");
	return mkdtemp(tmpdir) ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_target_addresses),
		cmocka_unit_test(test_file_sd_reads_targets_and_the_wanted_labels),
		cmocka_unit_test(test_file_sd_refuses_what_is_not_the_format),
		cmocka_unit_test(test_file_sd_limits),
		cmocka_unit_test(test_grpcweb_frames),
		cmocka_unit_test(test_parca_answers),
		cmocka_unit_test(test_pyroscope_series_answers),
		cmocka_unit_test(test_error_bodies_are_made_safe),
		cmocka_unit_test(test_selector_narrowed_to_a_release),
		cmocka_unit_test(test_config_sources),
		cmocka_unit_test(test_a_host_pulls_heap_only_where_its_source_takes_it),
		cmocka_unit_test(test_config_source_mistakes),
		cmocka_unit_test(test_drop_names),
		cmocka_unit_test_setup_teardown(test_drops_in_a_store_that_is_not_a_folder,
						testdb_setup, testdb_teardown),
		cmocka_unit_test_setup_teardown(test_fetched_bytes_are_ingested_as_a_file,
						testdb_setup, testdb_teardown),
	};

	if (setup_tmp(NULL) < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
