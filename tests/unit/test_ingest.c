/*
 * test_ingest.c: capture descriptions in JSON (manifest lines and
 * drop-folder sidecars) and ingest failures: one set of checks and
 * messages for both, every failure naming its input, and failures of the
 * store told apart from bad input. The database tests run against the
 * test server (tests/support/testdb); the blob store that fails is a
 * backend that answers every write as a full disk would.
 */
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "common/timeutil.h"
#include "pipeline/ingest.h"
#include "pipeline/source.h"
#include "tests/support/testdb.h"

static const profile_limits limits = {64u << 20, 512u << 20, 10000000, 4096, 65536, 500000};

/*
 * Threads started and digests computed, counted: this test is linked with
 * -Wl,--wrap=pthread_create and -Wl,--wrap=EVP_Digest (see the Makefile),
 * so every call of the code under test comes here first.
 */
static atomic_uint threads_started, digests;

int __real_EVP_Digest(const void *data, size_t len, unsigned char *md, unsigned int *mdlen,
		      const EVP_MD *type, ENGINE *impl);
int __wrap_EVP_Digest(const void *data, size_t len, unsigned char *md, unsigned int *mdlen,
		      const EVP_MD *type, ENGINE *impl);

int __wrap_EVP_Digest(const void *data, size_t len, unsigned char *md, unsigned int *mdlen,
		      const EVP_MD *type, ENGINE *impl)
{
	atomic_fetch_add(&digests, 1);
	return __real_EVP_Digest(data, len, md, mdlen, type, impl);
}

int __real_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *),
			  void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *),
			  void *arg);

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *),
			  void *arg)
{
	atomic_fetch_add(&threads_started, 1);
	return __real_pthread_create(t, attr, fn, arg);
}

/* ---- JSON descriptions, no database ---------------------------------------- */

/*
 * Metadata that every description may carry. Each row is tried as a
 * sidecar and as a manifest line (the same object plus "path" and
 * "service"): both must give the same verdict in the same words.
 */
static const struct {
	const char *meta; /* members of the JSON object, without braces */
	const char *msg;  /* the message after the description's name; NULL: accepted */
} meta_cases[] = {
	{"\"release\": \"v1\"", NULL},
	{"\"release\": \"v1\", \"commit\": \"9fceb02\", \"host\": \"web-3\", \"type\": \"heap\","
	 " \"time\": \"2026-11-29T02:00:00Z\", \"format\": \"folded\","
	 " \"tags\": {\"zone\": \"eu\"}",
	 NULL},
	{"\"host\": \"h\"", "missing \"release\""},
	{"\"release\": 5", "\"release\" must be a string"},
	{"\"release\": \"v1\", \"colour\": \"red\"", "unknown key \"colour\""},
	{"\"release\": \"v1\", \"time\": \"yesterday\"",
	 "\"time\" 'yesterday' is not an ISO 8601 time"},
	{"\"release\": \"v1\", \"format\": \"xml\"",
	 "unknown \"format\" 'xml' (pprof, folded, v8, perf, speedscope, v8heap, jfr)"},
	{"\"release\": \"v1\", \"type\": \"disk\"",
	 "unknown profile type 'disk' (cpu, heap, alloc, wall, goroutine)"},
	{"\"release\": \"v1\", \"commit\": \"zz\"",
	 "commit 'zz' is not a hex SHA (4 to 64 hex digits)"},
	{"\"release\": \"v\\\"1\"", "the release contains a control character, quote or backslash"},
	{"\"release\": \"\"", "the release must be 1 to 256 bytes long"},
	{"\"release\": \"v1\", \"tags\": [\"a\"]", "\"tags\" must be an object"},
	{"\"release\": \"v1\", \"tags\": {\"k\": 1}", "tag 'k' must be a string"},
	{"\"release\": \"v1\", \"tags\": {\"bad key\": \"v\"}",
	 "tag key 'bad key' has characters other than letters, digits, '_', '.' and '-'"},
	{"\"release\": \"v1\", \"tags\": {\"k\": \"a\\\\b\"}",
	 "the value of tag 'k' contains a control character, quote or backslash"},
	{"\"release\": \"v1\", \"tags\": {\"k\": \"\"}",
	 "the value of tag 'k' must be 1 to 256 bytes long"},
};

static int from_json(ingest_desc *d, const char *json, const ingest_json_source *src, pr_error *err)
{
	return ingest_request_from_json(d, json, strlen(json), src, err);
}

static void test_sidecars_and_manifest_lines_pass_the_same_checks(void **state)
{
	ingest_json_source line = {"line 3 of 'm.jsonl'", "/spool", NULL, NULL};
	ingest_json_source side = {"sidecar '/drop/a.pb.gz.json'", NULL, "/drop/a.pb.gz",
				   "checkout"};
	(void)state;

	for (size_t i = 0; i < sizeof(meta_cases) / sizeof(meta_cases[0]); i++) {
		pr_error le = PR_ERROR_INIT, se = PR_ERROR_INIT;
		ingest_desc ld, sd;
		char lj[1024], sj[1024], want[1200];
		int lrc, src_rc;

		snprintf(lj, sizeof(lj), "{\"path\": \"a.pb.gz\", \"service\": \"checkout\", %s}",
			 meta_cases[i].meta);
		snprintf(sj, sizeof(sj), "{%s}", meta_cases[i].meta);
		lrc = from_json(&ld, lj, &line, &le);
		src_rc = from_json(&sd, sj, &side, &se);
		if (!meta_cases[i].msg) {
			if (lrc || src_rc)
				fail_msg("case %zu refused: '%s' / '%s'", i, le.msg, se.msg);
			assert_string_equal(ld.req.path, "/spool/a.pb.gz");
			assert_string_equal(sd.req.path, "/drop/a.pb.gz");
			assert_string_equal(ld.req.service, "checkout");
			assert_string_equal(sd.req.service, "checkout");
			assert_string_equal(ld.req.release, sd.req.release);
			assert_true(ld.req.time_us == sd.req.time_us);
			assert_int_equal(ld.req.format, sd.req.format);
			if (ld.req.tags_json || sd.req.tags_json)
				assert_string_equal(ld.req.tags_json, sd.req.tags_json);
			ingest_desc_release(&ld);
			ingest_desc_release(&sd);
			continue;
		}
		if (lrc != PR_EDATA || src_rc != PR_EDATA)
			fail_msg("case %zu: rc %d / %d, want PR_EDATA", i, lrc, src_rc);
		/* Left zeroed on failure: releasing again is harmless. */
		assert_null(ld.json);
		assert_null(sd.path);
		ingest_desc_release(&ld);
		snprintf(want, sizeof(want), "line 3 of 'm.jsonl': %s", meta_cases[i].msg);
		if (strncmp(le.msg, want, strlen(want)) != 0)
			fail_msg("case %zu: manifest line says '%s', want '%s'", i, le.msg, want);
		snprintf(want, sizeof(want), "sidecar '/drop/a.pb.gz.json': %s", meta_cases[i].msg);
		if (strncmp(se.msg, want, strlen(want)) != 0)
			fail_msg("case %zu: sidecar says '%s', want '%s'", i, se.msg, want);
		/* The same reason in the same words, whichever way it came. */
		assert_string_equal(strchr(le.msg, ':'), strchr(se.msg, ':'));
	}
}

static void test_manifest_lines_and_sidecars_differ_only_in_path_and_service(void **state)
{
	static const struct {
		bool sidecar;
		const char *json;
		const char *msg; /* NULL: accepted */
		const char *path;
	} cases[] = {
		{false, "{\"path\": \"/abs/x.folded\", \"service\": \"s\", \"release\": \"v1\"}",
		 NULL, "/abs/x.folded"},
		/* A file named "-" beside the manifest, never standard input. */
		{false, "{\"path\": \"-\", \"service\": \"s\", \"release\": \"v1\"}", NULL,
		 "/spool/-"},
		{false, "{\"path\": \"sub/x.folded\", \"service\": \"s\", \"release\": \"v1\"}",
		 NULL, "/spool/sub/x.folded"},
		{false, "{\"service\": \"s\", \"release\": \"v1\"}", "NAME: missing \"path\"",
		 NULL},
		{false, "{\"path\": \"x\", \"release\": \"v1\"}", "NAME: missing \"service\"",
		 NULL},
		{false, "{\"path\": \"\", \"service\": \"s\", \"release\": \"v1\"}",
		 "NAME: \"path\" must be 1 to 1024 bytes long", NULL},
		{true, "{\"path\": \"x\", \"release\": \"v1\"}", "NAME: unknown key \"path\"",
		 NULL},
		{true, "{\"service\": \"other\", \"release\": \"v1\"}",
		 "NAME: unknown key \"service\"", NULL},
		{true, "[\"release\"]", "NAME: not a JSON object", NULL},
		{true, "{\"release\": ", "NAME: invalid JSON at line 1 column 12: unexpected token "
		 "near end of file", NULL},
		{true, "", "NAME: invalid JSON at line 1 column", NULL},
		{true, "{\"release\": \"v1\", \"release\": \"v2\"}",
		 "NAME: invalid JSON at line 1 column 27: duplicate object key", NULL},
		{true, "{\"release\": \"v1\",\n \"host\": \"h\" }}",
		 "NAME: invalid JSON at line 2 column 15: end of file expected", NULL},
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ingest_json_source src = {"NAME", "/spool", NULL, NULL};
		pr_error err = PR_ERROR_INIT;
		ingest_desc d;
		int rc;

		if (cases[i].sidecar) {
			src.path = "/drop/f";
			src.service = "s";
		}
		rc = from_json(&d, cases[i].json, &src, &err);
		if (!cases[i].msg) {
			if (rc)
				fail_msg("case %zu refused: %s", i, err.msg);
			assert_string_equal(d.req.path, cases[i].path);
			ingest_desc_release(&d);
			continue;
		}
		assert_int_equal(rc, PR_EDATA);
		if (strncmp(err.msg, cases[i].msg, strlen(cases[i].msg)) != 0)
			fail_msg("case %zu: '%s', want '%s'", i, err.msg, cases[i].msg);
	}
}

static void test_an_oversized_description_is_bad_input_and_says_so(void **state)
{
	ingest_json_source src = {"line 3 of 'm.jsonl'", ".", NULL, NULL};
	pr_error err = PR_ERROR_INIT;
	static const char json[] = "{\"path\": \"a\", \"service\": \"s\", \"release\": \"v1\"}";
	size_t n = (size_t)INGEST_JSON_MAX + 1;
	char *big = malloc(n);
	ingest_desc d;
	(void)state;

	assert_non_null(big);
	memset(big, ' ', n);
	memcpy(big, json, strlen(json));
	assert_int_equal(ingest_request_from_json(&d, big, n, &src, &err), PR_EDATA);
	assert_string_equal(err.msg, "line 3 of 'm.jsonl': longer than 65536 bytes");
	/* One byte less is fine: trailing white space is JSON. */
	pr_error_clear(&err);
	assert_int_equal(ingest_request_from_json(&d, big, n - 1, &src, &err), 0);
	ingest_desc_release(&d);
	free(big);
}

/*
 * A description's values in a message go through profile_quote, and
 * jansson's reason goes without the token it quotes: no control byte from
 * the input reaches a terminal or a run's stored reason, nor the card
 * number after "card".
 */
static void test_description_values_with_control_bytes_are_quoted_safely(void **state)
{
#define EVIL "\\u001b]0;owned\\u0007\\u001b[2J, and then a card: 4111111111111111"
#define QUOTED "<15 bytes> and then a card:..."
	static const struct {
		const char *meta; /* members of the JSON object, without braces */
		const char *msg;  /* the message after the description's name */
		const char *also; /* further on in the message; NULL: nothing */
	} cases[] = {
		{"\"release\": \"v1\", \"" EVIL "\": 1", "unknown key \"" QUOTED "\"", NULL},
		{"\"release\": \"v1\", \"time\": \"" EVIL "\"",
		 "\"time\" '" QUOTED "' is not an ISO 8601 time", NULL},
		{"\"release\": \"v1\", \"format\": \"" EVIL "\"",
		 "unknown \"format\" '" QUOTED "' (pprof,", NULL},
		{"\"release\": \"v1\", \"type\": \"" EVIL "\"",
		 "unknown profile type '" QUOTED "' (cpu,", NULL},
		{"\"release\": \"v1\", \"commit\": \"" EVIL "\"",
		 "commit '" QUOTED "' is not a hex SHA (4 to 64 hex digits)", NULL},
		{"\"release\": \"v1\", \"tags\": {\"" EVIL "\": 1}",
		 "tag '" QUOTED "' must be a string", NULL},
		{"\"release\": \"v1\", \"tags\": {\"" EVIL "\": \"v\"}",
		 "tag key '" QUOTED "' has characters other than", NULL},
		{"\"release\": \"v1\", \"tags\": {\"" EVIL EVIL "\": \"v\"}",
		 "tag key '" QUOTED "' must be 1 to 64 bytes long", NULL},
		/* jansson would add "near '4111111111111111'". */
		{"\"release\": \"v1\" 4111111111111111", "invalid JSON at line 1 column ",
		 ": '}' expected"},
	};
#undef EVIL
#undef QUOTED
	ingest_json_source line = {"line 3 of 'm.jsonl'", "/spool", NULL, NULL};
	ingest_json_source side = {"sidecar '/drop/a.pb.gz.json'", NULL, "/drop/a.pb.gz",
				   "checkout"};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const ingest_json_source *src[2] = {&line, &side};
		char json[2][1024], want[1200];

		snprintf(json[0], sizeof(json[0]),
			 "{\"path\": \"a.pb.gz\", \"service\": \"checkout\", %s}", cases[i].meta);
		snprintf(json[1], sizeof(json[1]), "{%s}", cases[i].meta);
		for (int k = 0; k < 2; k++) {
			pr_error err = PR_ERROR_INIT;
			ingest_desc d;

			if (from_json(&d, json[k], src[k], &err) != PR_EDATA)
				fail_msg("case %zu/%d: not refused as bad input: %s", i, k,
					 err.msg);
			snprintf(want, sizeof(want), "%s: %s", src[k]->name, cases[i].msg);
			if (strncmp(err.msg, want, strlen(want)) != 0 ||
			    (cases[i].also && !strstr(err.msg, cases[i].also)))
				fail_msg("case %zu/%d: '%s', want '%s'", i, k, err.msg, want);
			for (const char *c = err.msg; *c; c++)
				if ((unsigned char)*c < 0x20 || *c == 0x7f)
					fail_msg("case %zu/%d: control byte 0x%02x in '%s'", i, k,
						 (unsigned char)*c, err.msg);
			if (strstr(err.msg, "4111"))
				fail_msg("case %zu/%d: the card number is in '%s'", i, k, err.msg);
		}
	}
}

/*
 * A load figure ("load", "rps") must be a number the analysis reads:
 * "6.5e1" was let in and then read as no load at all, "high" too.
 */
static void test_a_load_tag_is_a_plain_non_negative_number(void **state)
{
	static const char *const good[] = {"65", "0", "0.25", ".5", "6.5e1", "1E+3"};
	static const char *const bad[] = {"high", "-1",   "+5",    " 5",   "5 ", "inf",
					  "nan",  "0x10", "1e999", "6.5e", "1,5"};
	pr_error err = PR_ERROR_INIT;
	double v = 0;
	(void)state;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (ingest_check_tag("load", good[i], &err) != 0)
			fail_msg("'%s' refused: %s", good[i], err.msg);
		assert_int_equal(ingest_check_tag("rps", good[i], &err), 0);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (ingest_check_tag("load", bad[i], &err) != PR_EUSAGE)
			fail_msg("'%s' let in", bad[i]);
		pr_error_clear(&err);
		assert_int_equal(ingest_check_tag("rps", bad[i], &err), PR_EUSAGE);
		pr_error_clear(&err);
		/* Other tags are free text. */
		assert_int_equal(ingest_check_tag("zone", bad[i], &err), 0);
	}
	assert_int_equal(ingest_check_tag("load", "high", &err), PR_EUSAGE);
	assert_string_equal(err.msg, "the value of tag 'load' ('high') is not a plain "
				     "non-negative number");
	pr_error_clear(&err);
	assert_int_equal(ingest_parse_load(&v, "6.5e1"), 0);
	assert_true(v == 65);
}

static void test_flags_meet_the_same_tag_rules(void **state)
{
	pr_error err = PR_ERROR_INIT;
	ingest_request r = {0};
	(void)state;

	assert_int_equal(ingest_check_tag("zone.a-b_c", "eu-1", &err), 0);
	assert_int_equal(ingest_check_tag("bad key", "v", &err), PR_EUSAGE);
	pr_error_clear(&err);
	assert_int_equal(ingest_check_tag("", "v", &err), PR_EUSAGE);
	pr_error_clear(&err);
	/* The request check reads the tags the same way. */
	r.service = "svc";
	r.release = "v1";
	r.tags_json = "{\"ok\": \"1\", \"bad key\": \"v\"}";
	assert_int_equal(ingest_validate(&r, &err), PR_EUSAGE);
	assert_string_equal(err.msg,
			    "tag key 'bad key' has characters other than "
			    "letters, digits, '_', '.' and '-'");
	pr_error_clear(&err);
	r.tags_json = "{\"ok\": \"1\"}";
	assert_int_equal(ingest_validate(&r, &err), 0);
}

/* ---- files, folders and a store that is full ------------------------------ */

typedef struct fixture {
	testdb *t;
	char dir[4096];
} fixture;

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int setup(void **state)
{
	const char *base = getenv("PROFREG_TEST_TMP");
	pr_error err = PR_ERROR_INIT;
	fixture *f = calloc(1, sizeof(*f));

	if (!f || !(f->t = testdb_new(true)))
		return -1;
	snprintf(f->dir, sizeof(f->dir), "%s/test_ingest.XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(f->dir))
		return -1;
	if (db_service_add(f->t->db, "svc", NULL, &err) < 0 ||
	    db_service_set_enabled(f->t->db, "svc", true, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	nftw(f->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	testdb_free(f->t);
	free(f);
	return 0;
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
}

/* dir/name (a folded profile with `stack`) and, unless NULL, dir/name.json. */
static void drop(const char *dir, const char *name, const char *stack, const char *sidecar)
{
	char path[4400];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	write_file(path, stack);
	if (sidecar) {
		snprintf(path, sizeof(path), "%s/%s.json", dir, name);
		write_file(path, sidecar);
	}
}

/* A blob store whose every write fails as on a full disk. */
static unsigned full_puts;

static int full_put(void *impl, const char *key, const void *data, size_t len, bool *created,
		    pr_error *err)
{
	(void)impl;
	(void)data;
	(void)len;
	full_puts++;
	*created = false;
	return pr_error_set(err, PR_EIO,
			    "cannot store blob '%s': cannot write '/full/%.2s/%s.zst.tmp.a1': %s",
			    key, key, key + 2, strerror(ENOSPC));
}

static int full_get(void *impl, const char *key, buf *out, size_t max, pr_error *err)
{
	(void)impl;
	(void)out;
	(void)max;
	return pr_error_set(err, PR_ENOTFOUND, "blob '%s' not found", key);
}

static int full_exists(void *impl, const char *key, bool *out, pr_error *err)
{
	(void)impl;
	(void)key;
	(void)err;
	*out = false;
	return 0;
}

static int full_del(void *impl, const char *key, pr_error *err)
{
	(void)impl;
	(void)key;
	(void)err;
	return 0;
}

static int full_size(void *impl, const char *key, uint64_t *out, pr_error *err)
{
	(void)impl;
	(void)out;
	return pr_error_set(err, PR_ENOTFOUND, "blob '%s' not found", key);
}

static void full_close(void *impl)
{
	(void)impl;
}

static const blob_store_ops full_ops = {
	.put = full_put,
	.get = full_get,
	.exists = full_exists,
	.del = full_del,
	.size = full_size,
	.close = full_close,
};

static blob_store *full_store(void)
{
	pr_error err = PR_ERROR_INIT;
	blob_store *bs = NULL;

	if (blob_store_new(&bs, &full_ops, NULL, "full:", &err) < 0)
		fail_msg("%s", err.msg);
	full_puts = 0;
	return bs;
}

static blob_store *dir_store(const fixture *f)
{
	pr_error err = PR_ERROR_INIT;
	blob_store *bs = NULL;
	char root[4200];

	snprintf(root, sizeof(root), "%s/blobs", f->dir);
	if (blob_store_open_dir(&bs, root, &err) < 0)
		fail_msg("%s", err.msg);
	return bs;
}

static void test_a_full_disk_names_the_input_file_then_the_blob_key(void **state)
{
	fixture *f = *state;
	blob_store *bs = full_store();
	pr_error err = PR_ERROR_INIT;
	ingest_request req = {0};
	ingest_result res;
	char path[4200], key[BLOB_KEY_HEX + 1], want[4600];
	static const char stack[] = "main;a 1\n";

	snprintf(path, sizeof(path), "%s/cpu.folded", f->dir);
	write_file(path, stack);
	blob_key_of(key, stack, strlen(stack));
	req.path = path;
	req.service = "svc";
	req.release = "v1";
	assert_int_equal(ingest_file(&res, f->t->db, bs, &req, &limits, &err), PR_EIO);
	snprintf(want, sizeof(want), "cannot ingest '%s': cannot store blob '%s': cannot write "
		 "'/full/%.2s/%s.zst.tmp.a1': %s", path, key, key, key + 2, strerror(ENOSPC));
	assert_string_equal(err.msg, want);
	assert_true(res.infra);
	assert_int_equal(res.capture_id, 0);
	assert_int_equal(testdb_int(f->t, "select count(*) from profiles"), 0);
	blob_store_free(bs);
}

static void test_bad_input_is_not_a_failure_of_the_store(void **state)
{
	fixture *f = *state;
	blob_store *bs = dir_store(f);
	pr_error err = PR_ERROR_INIT;
	db_service off = {0};
	ingest_request req = {0};
	ingest_result res;
	char path[4200], missing[4200];

	snprintf(path, sizeof(path), "%s/bad.folded", f->dir);
	snprintf(missing, sizeof(missing), "%s/missing.folded", f->dir);
	write_file(path, "main;a notanumber\n");
	req.service = "svc";
	req.release = "v1";

	req.path = missing;
	assert_int_equal(ingest_file(&res, f->t->db, bs, &req, &limits, &err), PR_ENOTFOUND);
	assert_false(res.infra);
	assert_non_null(strstr(err.msg, missing));
	pr_error_clear(&err);

	req.path = path;
	assert_int_equal(ingest_file(&res, f->t->db, bs, &req, &limits, &err), PR_EDATA);
	assert_false(res.infra);
	assert_non_null(strstr(err.msg, path));
	pr_error_clear(&err);

	assert_int_equal(db_service_add(f->t->db, "off", NULL, &err), 0);
	assert_int_equal(db_service_get(f->t->db, &off, "off", &err), 0);
	db_service_release(&off);
	req.service = "off";
	assert_int_equal(ingest_file(&res, f->t->db, bs, &req, &limits, &err), PR_EREFUSED);
	assert_false(res.infra);
	assert_true(strncmp(err.msg, "cannot ingest '", 15) == 0);
	assert_non_null(strstr(err.msg, "service 'off' is not enabled"));
	blob_store_free(bs);
}

/*
 * A file dated at the epoch gave a capture time of 0, which the insert
 * refused as a missing time (exit 2, blaming the database): it is no time,
 * and the capture takes the time it is ingested instead.
 */
static void test_a_file_dated_at_the_epoch_is_stored_at_its_ingest_time(void **state)
{
	fixture *f = *state;
	blob_store *bs = dir_store(f);
	pr_error err = PR_ERROR_INIT;
	ingest_request req = {0};
	ingest_result res;
	const struct timespec epoch[2] = {{0, 0}, {0, 0}};
	char path[4200];

	snprintf(path, sizeof(path), "%s/old.folded", f->dir);
	write_file(path, "main;a 1\n");
	assert_int_equal(utimensat(AT_FDCWD, path, epoch, 0), 0);
	req.path = path;
	req.service = "svc";
	req.release = "v1";
	if (ingest_file(&res, f->t->db, bs, &req, &limits, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(testdb_int(f->t, "select count(*) from profiles where captured_at > "
				    "now() - interval '1 day'"), 1);
	blob_store_free(bs);
}

static void test_a_lost_database_names_the_file_and_is_a_failure_of_the_store(void **state)
{
	fixture *f = *state;
	blob_store *bs = dir_store(f);
	pr_error err = PR_ERROR_INIT;
	ingest_request req = {0};
	ingest_result res;
	char path[4200], want[4400];

	snprintf(path, sizeof(path), "%s/cpu.folded", f->dir);
	write_file(path, "main;a 1\n");
	req.path = path;
	req.service = "svc";
	req.release = "v1";
	assert_int_equal(
		testdb_int(f->t,
			   "select count(pg_terminate_backend(pid)) from pg_stat_activity"
			   " where datname = current_database() and application_name = 'profreg'"),
		1);
	assert_int_equal(ingest_file(&res, f->t->db, bs, &req, &limits, &err), PR_EDB);
	snprintf(want, sizeof(want), "cannot ingest '%s': database: ", path);
	assert_true(strncmp(err.msg, want, strlen(want)) == 0);
	assert_true(res.infra);
	blob_store_free(bs);
}

/* ---- batches: ingest_files ------------------------------------------------- */

#define BATCH_N 8

/*
 * A batch with a malformed file, a file stored before, the same bytes
 * twice and a release the database refuses: the bad file and the refused
 * release fail alone with their own messages, the others are stored, and
 * the rows are exactly those of the good files.
 */
static void batch_with_failures(fixture *f, unsigned jobs)
{
	blob_store *bs = dir_store(f);
	pr_error errs[BATCH_N], err = PR_ERROR_INIT;
	ingest_request reqs[BATCH_N];
	ingest_result res[BATCH_N];
	char paths[BATCH_N][4200];
	static const char *const body[BATCH_N] = {
		"main;a 1\n", "main;b 2\n", "main;c notanumber\n", "main;d 4\n",
		"main;b 2\n", "main;e 5\n", "main;f 6\n", "main;g 7\n",
	};

	/* A trigger stands in for a row the database refuses. */
	assert_int_equal(testdb_int(f->t,
		"create or replace function refuse_bad() returns trigger language plpgsql as $$"
		" begin if new.release = 'refused' then"
		"  raise exception 'release refused' using errcode = '23514'; end if;"
		" return new; end $$; "
		"drop trigger if exists refuse_bad on profiles; "
		"create trigger refuse_bad before insert on profiles"
		" for each row execute function refuse_bad(); select 0"), 0);
	memset(reqs, 0, sizeof(reqs));
	for (int i = 0; i < BATCH_N; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/b%d.folded", f->dir, i);
		write_file(paths[i], body[i]);
		reqs[i].path = paths[i];
		reqs[i].service = "svc";
		reqs[i].release = i == 6 ? "refused" : "v1";
	}
	/* Stored before the batch. */
	assert_int_equal(ingest_file(&res[0], f->t->db, bs, &reqs[3], &limits, &err), 0);
	int64_t before = res[0].capture_id;

	assert_int_equal(ingest_files(res, errs, f->t->db, bs, reqs, BATCH_N, &limits, jobs),
			 BATCH_N);
	for (int i = 0; i < BATCH_N; i++) {
		if (i == 2) {
			assert_int_equal(errs[i].code, PR_EDATA);
			assert_non_null(strstr(errs[i].msg, paths[2]));
			assert_false(res[i].infra);
		} else if (i == 6) {
			assert_int_equal(errs[i].code, PR_EUSAGE);
			assert_true(strncmp(errs[i].msg, "cannot ingest '", 15) == 0);
			assert_non_null(strstr(errs[i].msg, "release refused"));
			assert_false(res[i].infra);
		} else {
			assert_int_equal(errs[i].code, 0);
			assert_true(res[i].capture_id > 0);
		}
	}
	assert_true(res[3].already);
	assert_int_equal(res[3].capture_id, before);
	assert_false(res[1].already);
	assert_true(res[4].already);
	assert_int_equal(res[4].capture_id, res[1].capture_id);
	assert_int_equal(res[5].nfunctions, 2);
	/* a, b, d, e and g: one capture each, two function rows each. */
	assert_int_equal(testdb_int(f->t, "select count(*) from profiles"), 5);
	assert_int_equal(testdb_int(f->t, "select count(*) from profile_functions"), 10);
	assert_int_equal(testdb_int(f->t,
		"select count(*) from profile_functions pf join profiles p on p.id = pf.profile_id"
		" where pf.self_share = pf.self_value::float8 / p.total_value"
		" and pf.captured_at = p.captured_at and pf.service_id = p.service_id"
		" and pf.profile_type = p.profile_type"), 10);
	assert_int_equal(testdb_int(f->t,
		"select count(*) from audit_log where action = 'ingest'"), 5);
	assert_int_equal(testdb_int(f->t, "drop trigger refuse_bad on profiles; select 0"), 0);
	blob_store_free(bs);
}

static void test_a_batch_rejects_each_bad_file_alone(void **state)
{
	batch_with_failures(*state, 1);
}

/*
 * A capture dated more than a day ahead of the clock is refused, by
 * --time or by the file's time alike; an hour ahead (a host's clock
 * skew) is stored.
 */
static void test_a_capture_from_the_future_is_refused(void **state)
{
	fixture *f = *state;
	blob_store *bs = dir_store(f);
	pr_error err = PR_ERROR_INIT;
	ingest_request req = {0};
	ingest_result res;
	struct timespec ts[2];
	char path[4200];

	snprintf(path, sizeof(path), "%s/ahead.folded", f->dir);
	write_file(path, "main;later 3\n");
	req.path = path;
	req.service = "svc";
	req.release = "v1";
	req.time_us = time_now_us() + 2 * 86400LL * 1000000;
	assert_int_equal(ingest_file(&res, f->t->db, bs, &req, &limits, &err), PR_EDATA);
	assert_non_null(strstr(err.msg, "is more than a day ahead of this machine's clock"));
	pr_error_clear(&err);
	req.time_us = 0;
	ts[0].tv_sec = ts[1].tv_sec = 32503680000; /* 3000-01-01 */
	ts[0].tv_nsec = ts[1].tv_nsec = 0;
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
	assert_int_equal(ingest_file(&res, f->t->db, bs, &req, &limits, &err), PR_EDATA);
	assert_non_null(strstr(err.msg, "(the file's time; --time sets it)"));
	pr_error_clear(&err);
	assert_int_equal(testdb_int(f->t, "select count(*) from profiles"), 0);
	req.time_us = time_now_us() + 3600LL * 1000000;
	assert_int_equal(ingest_file(&res, f->t->db, bs, &req, &limits, &err), 0);
	blob_store_free(bs);
}

/*
 * The same bytes again are the capture they already are when they say the
 * same (a re-run, whatever the file's time); given for another release or
 * host they are refused, naming the capture, and the new release gets no
 * row that is not its own. Alone, and twice in one batch.
 */
static void test_the_same_bytes_for_another_release_are_refused(void **state)
{
	fixture *f = *state;
	blob_store *bs = dir_store(f);
	pr_error err = PR_ERROR_INIT, errs[2] = {PR_ERROR_INIT, PR_ERROR_INIT};
	ingest_request req = {0}, reqs[2];
	ingest_result res, two[2];
	char path[4200];
	int64_t id;

	snprintf(path, sizeof(path), "%s/idle.folded", f->dir);
	write_file(path, "main;idle 1000\n");
	req.path = path;
	req.service = "svc";
	req.release = "v1";
	req.host = "web-1";
	assert_int_equal(ingest_file(&res, f->t->db, bs, &req, &limits, &err), 0);
	id = res.capture_id;
	req.time_us = 1772445600000000;
	assert_int_equal(ingest_file(&res, f->t->db, bs, &req, &limits, &err), 0);
	assert_true(res.already);
	assert_int_equal(res.capture_id, id);
	req.time_us = 0;
	req.release = "v2";
	assert_int_equal(ingest_file(&res, f->t->db, bs, &req, &limits, &err), PR_EEXISTS);
	assert_non_null(strstr(err.msg, path));
	assert_non_null(strstr(err.msg, "already capture"));
	assert_non_null(strstr(err.msg, "release 'v1'"));
	assert_non_null(strstr(err.msg, "not stored again as a capture of release 'v2'"));
	assert_false(res.infra);
	pr_error_clear(&err);
	req.release = "v1";
	req.host = "web-2";
	assert_int_equal(ingest_file(&res, f->t->db, bs, &req, &limits, &err), PR_EEXISTS);
	assert_non_null(strstr(err.msg, "not stored again as a capture of host 'web-2'"));
	pr_error_clear(&err);
	/* Another type alone: the message says so, not "another release". */
	req.host = "web-1";
	req.type = "alloc";
	assert_int_equal(ingest_file(&res, f->t->db, bs, &req, &limits, &err), PR_EEXISTS);
	assert_non_null(strstr(err.msg, "not stored again as a capture of type 'alloc' (one file "
				    "is one capture)"));
	pr_error_clear(&err);
	req.type = NULL;
	/* The second of two lines with one file's bytes, for another release. */
	reqs[0] = reqs[1] = req;
	reqs[0].host = reqs[1].host = "web-1";
	reqs[1].release = "v3";
	assert_int_equal(ingest_files(two, errs, f->t->db, bs, reqs, 2, &limits, 1), 2);
	assert_int_equal(errs[0].code, 0);
	assert_true(two[0].already);
	assert_int_equal(errs[1].code, PR_EEXISTS);
	assert_int_equal(testdb_int(f->t, "select count(*) from profiles"), 1);
	blob_store_free(bs);
}

/*
 * An idle host's profile without a sample is the same bytes on every
 * idle host (node --heap-prof writes no time into it): the second host's
 * is that capture, not a refusal that fails the night's drop folder.
 * Bytes with samples are still refused for another host (above).
 */
static void test_the_same_bytes_without_a_sample_from_another_host_are_that_capture(void **state)
{
	fixture *f = *state;
	blob_store *bs = dir_store(f);
	pr_error err = PR_ERROR_INIT, errs[2] = {PR_ERROR_INIT, PR_ERROR_INIT};
	ingest_request req = {0}, reqs[2];
	ingest_result res, two[2];
	char path[4200], path2[4200];
	int64_t id;

	snprintf(path, sizeof(path), "%s/empty.folded", f->dir);
	write_file(path, "main;idle 0\n");
	req.path = path;
	req.service = "svc";
	req.release = "v1";
	req.host = "web-1";
	assert_int_equal(ingest_file(&res, f->t->db, bs, &req, &limits, &err), 0);
	id = res.capture_id;
	req.host = "web-2";
	assert_int_equal(ingest_file(&res, f->t->db, bs, &req, &limits, &err), 0);
	assert_true(res.already);
	assert_int_equal(res.capture_id, id);
	req.release = "v2";
	assert_int_equal(ingest_file(&res, f->t->db, bs, &req, &limits, &err), 0);
	assert_true(res.already);
	/* Two lines of one manifest, in one batch. */
	snprintf(path2, sizeof(path2), "%s/empty2.folded", f->dir);
	write_file(path2, "main;idle2 0\n");
	reqs[0] = reqs[1] = req;
	reqs[0].path = reqs[1].path = path2;
	reqs[0].host = "web-3";
	reqs[1].host = "web-4";
	assert_int_equal(ingest_files(two, errs, f->t->db, bs, reqs, 2, &limits, 1), 2);
	assert_int_equal(errs[0].code, 0);
	assert_int_equal(errs[1].code, 0);
	assert_true(two[1].already);
	assert_int_equal(testdb_int(f->t, "select count(*) from profiles"), 2);
	blob_store_free(bs);
}

/*
 * Bytes stored by another ingest after a batch looked them up and before
 * it stores them (the batch before it, in a manifest run on two
 * connections) are checked as bytes stored before are: for another
 * release they are refused, and the other capture of the batch is stored.
 */
static void test_the_same_bytes_stored_meanwhile_for_another_release_are_refused(void **state)
{
	fixture *f = *state;
	blob_store *bs = dir_store(f);
	pr_error err = PR_ERROR_INIT, errs[2] = {PR_ERROR_INIT, PR_ERROR_INIT};
	ingest_request req = {0}, reqs[2];
	ingest_result res, two[2];
	ingest_batch *b;
	char path[4200], other[4200];

	snprintf(path, sizeof(path), "%s/idle.folded", f->dir);
	snprintf(other, sizeof(other), "%s/busy.folded", f->dir);
	write_file(other, "main;busy 1000\n");
	req.path = path;
	req.service = "svc";
	req.release = "v2";
	reqs[0] = reqs[1] = req;
	reqs[1].path = other;
	/* Alone, then in a batch of two. */
	for (size_t n = 1; n <= 2; n++) {
		write_file(path, n == 1 ? "main;idle 1000\n" : "main;idle 2000\n");
		b = ingest_batch_prepare(two, errs, f->t->db, reqs, n, &limits, 1);
		assert_non_null(b);
		req.release = "v1";
		if (ingest_file(&res, f->t->db, bs, &req, &limits, &err) < 0)
			fail_msg("%s", err.msg);
		assert_int_equal(ingest_batch_store(b, errs, f->t->db, bs), n);
		assert_int_equal(errs[0].code, PR_EEXISTS);
		assert_non_null(strstr(errs[0].msg, "release 'v1'"));
		assert_non_null(strstr(errs[0].msg, "not stored again as a capture of "
					"release 'v2'"));
		assert_int_equal(two[0].capture_id, 0);
		assert_false(two[0].already);
		pr_error_clear(&errs[0]);
	}
	assert_int_equal(errs[1].code, 0);
	assert_int_equal(testdb_int(f->t, "select count(*) from profiles where release = 'v2'"), 1);
	blob_store_free(bs);
}

/*
 * A release is one build: a capture that gives a release another commit
 * than its stored captures have is refused, naming the capture whose
 * commit it has; a short SHA of the same commit, in either case, and a
 * capture with no commit are that release's. In a batch, only the
 * capture that disagrees is refused.
 */
static void test_another_commit_for_a_release_is_refused(void **state)
{
	fixture *f = *state;
	blob_store *bs = dir_store(f);
	pr_error err = PR_ERROR_INIT, errs[3] = {PR_ERROR_INIT, PR_ERROR_INIT, PR_ERROR_INIT};
	ingest_request req = {0}, reqs[3];
	ingest_result res, three[3];
	char paths[8][4200];

	for (int i = 0; i < 8; i++) {
		char text[64];
		snprintf(paths[i], sizeof(paths[i]), "%s/c%d.folded", f->dir, i);
		snprintf(text, sizeof(text), "main;work %d\n", 1000 + i);
		write_file(paths[i], text);
	}
	req.service = "svc";
	req.release = "v1";
	req.commit = "0123abcd";
	req.path = paths[0];
	if (ingest_file(&res, f->t->db, bs, &req, &limits, &err) < 0)
		fail_msg("%s", err.msg);
	req.commit = "0123ABCD99ff";
	req.path = paths[1];
	if (ingest_file(&res, f->t->db, bs, &req, &limits, &err) < 0)
		fail_msg("%s", err.msg);
	req.commit = NULL;
	req.path = paths[2];
	if (ingest_file(&res, f->t->db, bs, &req, &limits, &err) < 0)
		fail_msg("%s", err.msg);
	req.commit = "4567";
	req.path = paths[3];
	assert_int_equal(ingest_file(&res, f->t->db, bs, &req, &limits, &err), PR_EEXISTS);
	assert_non_null(strstr(err.msg, paths[3]));
	assert_non_null(strstr(err.msg, "release 'v1' of service 'svc' is commit 0123abcd"));
	assert_non_null(strstr(err.msg, "this capture says commit 4567: not stored"));
	assert_false(res.infra);
	pr_error_clear(&err);
	/* Another release may have that commit; the first commit of a new one holds. */
	memset(reqs, 0, sizeof(reqs));
	for (int i = 0; i < 3; i++) {
		reqs[i] = req;
		reqs[i].release = "v2";
		reqs[i].path = paths[4 + i];
	}
	reqs[0].commit = "89ab";
	reqs[1].commit = "cdef";
	reqs[2].commit = "89ab01";
	assert_int_equal(ingest_files(three, errs, f->t->db, bs, reqs, 3, &limits, 1), 3);
	assert_int_equal(errs[0].code, 0);
	assert_int_equal(errs[1].code, PR_EEXISTS);
	assert_non_null(strstr(errs[1].msg, "release 'v2' of service 'svc' is commit 89ab"));
	assert_int_equal(errs[2].code, 0);
	assert_int_equal(three[1].capture_id, 0);
	assert_int_equal(testdb_int(f->t, "select count(*) from profiles where release = 'v1'"), 3);
	assert_int_equal(testdb_int(f->t, "select count(*) from profiles where release = 'v2'"), 2);
	blob_store_free(bs);
}

/*
 * Two ingests of one release at once cannot give it two commits: the
 * release is locked from the check to the commit, so a capture for it
 * waits while another transaction holds it (here until its lock times
 * out), and sees what that one stored.
 */
static void test_a_release_is_locked_while_its_captures_are_stored(void **state)
{
	fixture *f = *state;
	blob_store *bs = dir_store(f);
	pr_error err = PR_ERROR_INIT;
	ingest_request req = {0};
	ingest_result res;
	int64_t ids[1], sid = testdb_int(f->t, "select id from services where name = 'svc'");
	const char *rel[1] = {"v1"}, *cmt[1] = {"aaaa"};
	char path[4200];
	db *other = NULL;

	snprintf(path, sizeof(path), "%s/one.folded", f->dir);
	write_file(path, "main;one 10\n");
	/* This session holds the release; the other ingests with a lock timeout of 1 ms. */
	if (db_begin(f->t->db, &err) < 0 ||
	    db_release_commit_conflicts(f->t->db, ids, &sid, rel, cmt, 1, &err) < 0 ||
	    db_open(&other, f->t->conninfo, &err) < 0 ||
	    db_exec(other, NULL, &err, "set a lock timeout", "set lock_timeout = '1ms'", 0,
		    NULL) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(ids[0], 0);
	req.path = path;
	req.service = "svc";
	req.release = "v1";
	req.commit = "bbbb";
	assert_true(ingest_file(&res, other, bs, &req, &limits, &err) < 0);
	assert_non_null(strstr(err.msg, "lock"));
	pr_error_clear(&err);
	db_rollback(f->t->db);
	if (ingest_file(&res, other, bs, &req, &limits, &err) < 0)
		fail_msg("%s", err.msg);
	db_close(other);
	assert_int_equal(testdb_int(f->t, "select count(*) from profiles"), 1);
	blob_store_free(bs);
}

static void test_a_batch_on_threads_gives_the_same_answers(void **state)
{
	batch_with_failures(*state, 4);
}

#define THREADS_N 32

/* THREADS_N small folded files in f->dir, and requests for them. */
static void many_files(fixture *f, ingest_request *reqs, char (*paths)[4200])
{
	char body[64];

	memset(reqs, 0, sizeof(*reqs) * THREADS_N);
	for (int i = 0; i < THREADS_N; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/p%d.folded", f->dir, i);
		snprintf(body, sizeof(body), "main;f%d %d\nmain;g 1\n", i, i + 1);
		write_file(paths[i], body);
		reqs[i].path = paths[i];
		reqs[i].service = "svc";
		reqs[i].release = "v1";
	}
}

/* Every one of THREADS_N files stored, three functions each. */
static void all_stored(fixture *f, const pr_error *errs, const ingest_result *res)
{
	for (int i = 0; i < THREADS_N; i++)
		if (errs[i].code || res[i].nfunctions != 3)
			fail_msg("file %d: '%s', %zu functions", i, errs[i].msg, res[i].nfunctions);
	assert_int_equal(testdb_int(f->t, "select count(*) from profiles"), THREADS_N);
}

/*
 * A batch is read on `jobs` threads and parsed on `jobs` threads, each
 * started once for the batch: parsing two files at a time started a
 * thread for every two files (16 for these 32) and waited for the slower
 * of each pair.
 */
static void test_a_batch_is_parsed_on_threads_started_once(void **state)
{
	fixture *f = *state;
	blob_store *bs = dir_store(f);
	pr_error errs[THREADS_N];
	ingest_request reqs[THREADS_N];
	ingest_result res[THREADS_N];
	char paths[THREADS_N][4200];
	ingest_batch *b;
	unsigned started;

	many_files(f, reqs, paths);
	atomic_store(&threads_started, 0);
	assert_non_null(b = ingest_batch_prepare(res, errs, f->t->db, reqs, THREADS_N, &limits,
						 2));
	started = atomic_load(&threads_started);
	assert_int_equal(ingest_batch_store(b, errs, f->t->db, bs), THREADS_N);
	if (started != 2)
		fail_msg("%u threads started to read and parse %d files on 2, want 2 (one each)",
			 started, THREADS_N);
	all_stored(f, errs, res);
	blob_store_free(bs);
}

/*
 * A batch's blobs are compressed on no more threads than the machine has
 * processors (one of them the thread that writes the blobs while the rows
 * are sent): 8 on any machine took turns on a small one.
 */
static void test_a_batch_compresses_on_no_more_threads_than_processors(void **state)
{
	fixture *f = *state;
	blob_store *bs = dir_store(f);
	pr_error errs[THREADS_N];
	ingest_request reqs[THREADS_N];
	ingest_result res[THREADS_N];
	char paths[THREADS_N][4200];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	ingest_batch *b;
	unsigned started;

	many_files(f, reqs, paths);
	assert_non_null(b = ingest_batch_prepare(res, errs, f->t->db, reqs, THREADS_N, &limits,
						 1));
	atomic_store(&threads_started, 0);
	assert_int_equal(ingest_batch_store(b, errs, f->t->db, bs), THREADS_N);
	started = atomic_load(&threads_started);
	if (started > (cpus > 1 ? (unsigned)cpus : 1))
		fail_msg("%u threads started to store %d blobs on %ld processors", started,
			 THREADS_N, cpus);
	all_stored(f, errs, res);
	blob_store_free(bs);
}

/*
 * A file's bytes are hashed once, when they are read (to look them up):
 * the store takes that key instead of hashing them again, alone and in a
 * batch.
 */
static void test_a_file_is_hashed_once_on_its_way_into_the_store(void **state)
{
	fixture *f = *state;
	blob_store *bs = dir_store(f);
	pr_error err = PR_ERROR_INIT, errs[THREADS_N];
	ingest_request reqs[THREADS_N];
	ingest_result res[THREADS_N], one;
	char paths[THREADS_N][4200], key[BLOB_KEY_HEX + 1];
	buf out = BUF_INIT;
	unsigned n;

	many_files(f, reqs, paths);
	atomic_store(&digests, 0);
	if (ingest_file(&one, f->t->db, bs, &reqs[0], &limits, &err) < 0)
		fail_msg("%s", err.msg);
	n = atomic_load(&digests);
	if (n != 1)
		fail_msg("one file hashed %u times", n);
	atomic_store(&digests, 0);
	assert_int_equal(ingest_files(res, errs, f->t->db, bs, reqs + 1, THREADS_N - 1, &limits,
				      2), THREADS_N - 1);
	n = atomic_load(&digests);
	if (n != THREADS_N - 1)
		fail_msg("%d files hashed %u times", THREADS_N - 1, n);
	/* Under the key of their bytes, as a read checks. */
	assert_int_equal(blob_get(bs, one.blob_key, &out, 1 << 20, &err), 0);
	assert_int_equal(blob_key_of(key, out.ptr, out.len), 0);
	assert_string_equal(key, one.blob_key);
	assert_int_equal(testdb_int(f->t, "select count(*) from profiles"), THREADS_N);
	buf_release(&out);
	blob_store_free(bs);
}

/* A store failure in a batch: the captures before it are stored, none after is tried. */
static void test_a_batch_stops_at_a_failure_of_the_store(void **state)
{
	fixture *f = *state;
	blob_store *bs = full_store();
	pr_error errs[3];
	ingest_request reqs[3];
	ingest_result res[3];
	char paths[3][4200];

	memset(reqs, 0, sizeof(reqs));
	for (int i = 0; i < 3; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/s%d.folded", f->dir, i);
		write_file(paths[i], i == 0 ? "main;x 1\n" : i == 1 ? "main;y 2\n" : "main;z 3\n");
		reqs[i].path = paths[i];
		reqs[i].service = "svc";
		reqs[i].release = "v1";
	}
	assert_int_equal(ingest_files(res, errs, f->t->db, bs, reqs, 3, &limits, 2), 1);
	assert_int_equal(errs[0].code, PR_EIO);
	assert_true(res[0].infra);
	assert_non_null(strstr(errs[0].msg, paths[0]));
	assert_int_equal(testdb_int(f->t, "select count(*) from profiles"), 0);
	blob_store_free(bs);
}

/* Collect a folder holding one profile with `sidecar`; the one failure's message. */
static void collect_one(fixture *f, blob_store *bs, const char *sub, const char *sidecar,
			char *msg, size_t cap)
{
	pr_error err = PR_ERROR_INIT;
	source_report rep;
	char dir[4200];

	snprintf(dir, sizeof(dir), "%s/%s", f->dir, sub);
	assert_int_equal(mkdir(dir, 0700), 0);
	drop(dir, "a.folded", "main;a 1\n", sidecar);
	if (source_collect_dir(&rep, f->t->db, bs, "svc", dir, &limits, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(rep.stored, 0);
	assert_int_equal(rep.failed, 1);
	assert_non_null(rep.first_error);
	snprintf(msg, cap, "%s", rep.first_error);
	source_report_release(&rep);
}

/*
 * Whoever can write to a drop folder could plant a link to a file only
 * profreg may read (another team's capture, a key): a linked profile and a
 * linked sidecar are each refused by name, their targets neither stored
 * nor quoted, and the folder's real files go in as before.
 */
static void test_a_drop_folder_never_follows_a_link(void **state)
{
	fixture *f = *state;
	blob_store *bs = dir_store(f);
	pr_error err = PR_ERROR_INIT;
	source_report rep;
	char dir[4200], path[4400], secret[4400], side[4400];

	snprintf(dir, sizeof(dir), "%s/links", f->dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(secret, sizeof(secret), "%s/other-team.folded", f->dir);
	write_file(secret, "main;card_number_4111 7\n");
	snprintf(side, sizeof(side), "%s/other.json", f->dir);
	write_file(side, "{\"release\": \"v1\"}");

	snprintf(path, sizeof(path), "%s/a.folded", dir);
	assert_int_equal(symlink(secret, path), 0);
	snprintf(path, sizeof(path), "%s/a.folded.json", dir);
	write_file(path, "{\"release\": \"v1\"}");
	drop(dir, "b.folded", "main;b 1\n", NULL);
	snprintf(path, sizeof(path), "%s/b.folded.json", dir);
	assert_int_equal(symlink(side, path), 0);
	drop(dir, "c.folded", "main;c 1\n", "{\"release\": \"v1\"}");

	if (source_collect_dir(&rep, f->t->db, bs, "svc", dir, &limits, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(rep.stored, 1);
	assert_int_equal(rep.failed, 2);
	assert_non_null(strstr(rep.first_error, "/a.folded': a symbolic link"));
	assert_null(strstr(rep.first_error, "card_number"));
	assert_int_equal(rep.nerrors, 2);
	assert_string_equal(rep.errors[0], rep.first_error);
	assert_non_null(strstr(rep.errors[1], "/b.folded.json': a symbolic link"));
	assert_int_equal(testdb_int(f->t, "select count(*) from profiles"), 1);
	assert_int_equal(testdb_int(f->t, "select count(*) from functions "
				     "where name = 'card_number_4111'"), 0);
	source_report_release(&rep);
	blob_store_free(bs);
}

/*
 * A folder or a FIFO under a profile's name with a sidecar beside it was
 * meant as a drop: each is a failure naming what it is (they were skipped
 * without a word); one without a sidecar is not a drop, and is left alone.
 */
static void test_a_drop_that_is_not_a_file_is_a_failure(void **state)
{
	fixture *f = *state;
	blob_store *bs = dir_store(f);
	pr_error err = PR_ERROR_INIT;
	source_report rep;
	char dir[4200], path[4400];

	snprintf(dir, sizeof(dir), "%s/odd", f->dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/a.folded", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/a.folded.json", dir);
	write_file(path, "{\"release\": \"v1\"}");
	snprintf(path, sizeof(path), "%s/b.folded", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	snprintf(path, sizeof(path), "%s/b.folded.json", dir);
	write_file(path, "{\"release\": \"v1\"}");
	snprintf(path, sizeof(path), "%s/d.folded", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	drop(dir, "c.folded", "main;c 1\n", "{\"release\": \"v1\"}");

	if (source_collect_dir(&rep, f->t->db, bs, "svc", dir, &limits, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(rep.stored, 1);
	assert_int_equal(rep.failed, 2);
	assert_int_equal(rep.nerrors, 2);
	assert_non_null(strstr(rep.errors[0], "/a.folded': a folder, not a file"));
	assert_non_null(strstr(rep.errors[1], "/b.folded': a FIFO, not a file"));
	source_report_release(&rep);
	blob_store_free(bs);
}

/*
 * Where a linked sidecar points must not change its failure: a link to
 * nothing or to a FIFO is the same one failure as a link to a file, or
 * the message would tell the folder's writer whether a path they cannot
 * look into exists, and what it is.
 */
static void test_a_linked_sidecar_fails_alike_anywhere(void **state)
{
	static const char *const targets[] = {"nowhere", "fifo", "file"};
	fixture *f = *state;
	blob_store *bs = dir_store(f);
	char dir[4200], path[4400], target[4400];

	snprintf(target, sizeof(target), "%s/fifo", f->dir);
	assert_int_equal(mkfifo(target, 0600), 0);
	snprintf(target, sizeof(target), "%s/file", f->dir);
	write_file(target, "{\"release\": \"v1\"}");
	for (size_t i = 0; i < sizeof(targets) / sizeof(*targets); i++) {
		pr_error err = PR_ERROR_INIT;
		source_report rep;

		snprintf(dir, sizeof(dir), "%s/link-%s", f->dir, targets[i]);
		assert_int_equal(mkdir(dir, 0700), 0);
		drop(dir, "a.folded", "main;a 1\n", NULL);
		snprintf(path, sizeof(path), "%s/a.folded.json", dir);
		snprintf(target, sizeof(target), "%s/%s", f->dir, targets[i]);
		assert_int_equal(symlink(target, path), 0);
		if (source_collect_dir(&rep, f->t->db, bs, "svc", dir, &limits, &err) < 0)
			fail_msg("%s", err.msg);
		assert_int_equal(rep.failed, 1);
		if (!strstr(rep.first_error, "/a.folded.json': a symbolic link"))
			fail_msg("%s: %s", targets[i], rep.first_error);
		source_report_release(&rep);
	}
	assert_int_equal(testdb_int(f->t, "select count(*) from profiles"), 0);
	blob_store_free(bs);
}

static void test_a_bad_sidecar_is_named_with_its_reason(void **state)
{
	static const struct {
		const char *sidecar;
		const char *reason;
	} cases[] = {
		{"{\"release\": \"v1\",", "invalid JSON at line 1 column"},
		{"{\"release\": \"v1\", \"time\": "
		 "\"\\u001b]0;owned\\u0007\\u001b[2J, and then a card: 4111111111111111\"}",
		 "\"time\" '<15 bytes> and then a card:...' is not an ISO 8601 time"},
		{"{\"release\": \"v1\", \"commit\": \"not-hex\"}",
		 "commit 'not-hex' is not a hex SHA (4 to 64 hex digits)"},
		/* Refused by `profreg ingest`; the collection used to store it. */
		{"{\"release\": \"v1\", \"tags\": {\"bad tag\": \"v\"}}",
		 "tag key 'bad tag' has characters other than letters, digits, '_', '.' and '-'"},
		/* A value that may hold payment data is named, not quoted. */
		{"{\"release\": \"v1\", \"commit\": \"card 4111111111111111\"}",
		 "commit 'card <16 bytes>' is not a hex SHA (4 to 64 hex digits)"},
		{"{\"release\": \"v1\", \"tags\": {\"load\": \"password=hunter2\"}}",
		 "the value of tag 'load' ('<16 bytes>') is not a plain non-negative number"},
		{"{\"release\": \"v1\", \"tags\": {\"k\": \"say \\\"hi\\\"\"}}",
		 "the value of tag 'k' contains a control character, quote or backslash"},
	};
	fixture *f = *state;
	blob_store *bs = dir_store(f);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char sub[32], msg[PR_ERROR_MSG_MAX], want[PR_ERROR_MSG_MAX + 4200];
		ingest_json_source line = {"line 1 of 'm.jsonl'", f->dir, NULL, NULL};
		pr_error lerr = PR_ERROR_INIT;
		ingest_desc d;
		char lj[512];

		snprintf(sub, sizeof(sub), "case%zu", i);
		collect_one(f, bs, sub, cases[i].sidecar, msg, sizeof(msg));
		snprintf(want, sizeof(want), "sidecar '%s/%s/a.folded.json': %s", f->dir, sub,
			 cases[i].reason);
		if (strncmp(msg, want, strlen(want)) != 0)
			fail_msg("case %zu: '%s', want '%s'", i, msg, want);
		/* A manifest line with the same metadata: the same words after its name. */
		if (cases[i].sidecar[strlen(cases[i].sidecar) - 1] != '}')
			continue;
		snprintf(lj, sizeof(lj), "{\"path\": \"a\", \"service\": \"svc\", %s",
			 cases[i].sidecar + 1);
		assert_int_equal(from_json(&d, lj, &line, &lerr), PR_EDATA);
		assert_string_equal(strchr(lerr.msg, ':'), strchr(msg, ':'));
	}
	assert_int_equal(testdb_int(f->t, "select count(*) from profiles"), 0);
	blob_store_free(bs);
}

static void test_collection_stops_at_a_failure_of_the_store(void **state)
{
	fixture *f = *state;
	blob_store *bs = full_store();
	pr_error err = PR_ERROR_INIT;
	source_report rep;
	char dir[4200], want[8600];

	snprintf(dir, sizeof(dir), "%s/spool", f->dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	drop(dir, "a.folded", "main;a 1\n", "{\"release\": \"v1\"}");
	drop(dir, "b.folded", "main;b 1\n", "{\"release\": \"v1\"}");
	drop(dir, "c.folded", "main;c 1\n", "{\"release\": \"v1\"}");
	assert_int_equal(source_collect_dir(&rep, f->t->db, bs, "svc", dir, &limits, &err), PR_EIO);
	snprintf(want, sizeof(want), "stopped at file 1 of 3 in '%s': cannot ingest '%s/a.folded': "
		 "cannot store blob '", dir, dir);
	if (strncmp(err.msg, want, strlen(want)) != 0)
		fail_msg("'%s', want '%s...'", err.msg, want);
	assert_int_equal(full_puts, 1);
	source_report_release(&rep);
	blob_store_free(bs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sidecars_and_manifest_lines_pass_the_same_checks),
		cmocka_unit_test(test_manifest_lines_and_sidecars_differ_only_in_path_and_service),
		cmocka_unit_test(test_an_oversized_description_is_bad_input_and_says_so),
		cmocka_unit_test(test_description_values_with_control_bytes_are_quoted_safely),
		cmocka_unit_test(test_a_load_tag_is_a_plain_non_negative_number),
		cmocka_unit_test(test_flags_meet_the_same_tag_rules),
		cmocka_unit_test_setup_teardown(
			test_a_full_disk_names_the_input_file_then_the_blob_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_input_is_not_a_failure_of_the_store, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_a_file_dated_at_the_epoch_is_stored_at_its_ingest_time, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_lost_database_names_the_file_and_is_a_failure_of_the_store, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_a_bad_sidecar_is_named_with_its_reason, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_a_drop_that_is_not_a_file_is_a_failure, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_a_drop_folder_never_follows_a_link, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_a_linked_sidecar_fails_alike_anywhere, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_collection_stops_at_a_failure_of_the_store,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_batch_rejects_each_bad_file_alone, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_the_same_bytes_for_another_release_are_refused,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_the_same_bytes_without_a_sample_from_another_host_are_that_capture,
			setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_capture_from_the_future_is_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_the_same_bytes_stored_meanwhile_for_another_release_are_refused, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_another_commit_for_a_release_is_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_a_release_is_locked_while_its_captures_are_stored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_batch_on_threads_gives_the_same_answers,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_batch_stops_at_a_failure_of_the_store, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_a_batch_is_parsed_on_threads_started_once,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_batch_compresses_on_no_more_threads_than_processors, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_file_is_hashed_once_on_its_way_into_the_store, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
