/*
 * test_jfr.c: the JFR parser: real JDK 17 recordings checked against the
 * figures the JDK's own `jfr print` gives (tests/data/jfr), detection and
 * gzip, truncation and corruption of a real file, and small recordings
 * built here to be hostile in one way each.
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
#include "pipeline/format.h"
#include "pipeline/jfr.h"
#include "tests/support/testdata.h"

#define NAME "t.jfr"

static int parse(profile **out, const buf *b, pr_error *err)
{
	return jfr_parse(out, (const uint8_t *)b->ptr, b->len, NAME, NULL, err);
}

static long find_col(const profile *p, const char *type)
{
	for (size_t i = 0; i < p->nvalue_types; i++)
		if (strcmp(p->value_types[i].type, type) == 0)
			return (long)i;
	return -1;
}

static const profile_summary_row *find_row(const profile *p, const profile_summary *s,
					   const char *name)
{
	for (size_t i = 0; i < s->nrows; i++)
		if (strcmp(p->funcs[s->rows[i].func].name, name) == 0)
			return &s->rows[i];
	return NULL;
}

/* Samples whose value in column c is not zero: the events of its type. */
static size_t events_in(const profile *p, size_t c)
{
	size_t n = 0;

	for (size_t i = 0; i < p->nsamples; i++)
		n += p->values[i * p->nvalue_types + c] != 0;
	return n;
}

/*
 * The recording against its .shares.txt (made by tests/data/jfr/shares.py
 * from `jfr print --json`): per column the event count and total value,
 * and every method of Burn's self and total value, exactly.
 */
static void check_against_jfr_print(const char *rel, const char *shares)
{
	buf data = BUF_INIT, golden = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	profile_summary s[2];
	profile *p = NULL;
	char *line, *save = NULL;
	size_t checked = 0, events = 0;

	testdata_read(&data, rel);
	testdata_read(&golden, shares);
	if (parse(&p, &data, &err) != 0)
		fail_msg("%s: %s", rel, err.msg);
	assert_int_equal(p->format, PROFILE_FMT_JFR);
	assert_int_equal(p->nvalue_types, 2);
	assert_string_equal(profile_guess_type(p), "cpu");
	assert_string_equal(profile_pick_primary(p, NULL), "cpu");
	assert_string_equal(p->value_types[p->primary].type, "samples");
	assert_string_equal(profile_pick_primary(p, "alloc"), "alloc");
	assert_string_equal(p->value_types[p->primary].type, "alloc_space");
	assert_string_equal(p->value_types[p->primary].unit, "bytes");
	assert_true(p->time_ns > 1600000000LL * 1000000000LL);
	assert_true(p->duration_ns > 1000000000LL && p->duration_ns < 60000000000LL);
	for (size_t c = 0; c < 2; c++)
		assert_int_equal(profile_summarize(&s[c], p, c, &err), 0);
	for (line = strtok_r(golden.ptr, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char col[32], fn[256];
		long long a, b;
		long c;
		const profile_summary_row *r;

		assert_int_equal(sscanf(line, "%31s %255s %lld %lld", col, fn, &a, &b), 4);
		assert_true((c = find_col(p, col)) >= 0);
		if (strcmp(fn, "*") == 0) {
			/* The sample count too: the allocations' is not the CPU samples'. */
			if (events_in(p, (size_t)c) != (size_t)a || s[c].total != b ||
			    s[c].sample_count != a)
				fail_msg("%s %s: profreg %zu events (%lld samples) of %lld, "
					 "jfr print %lld of %lld", rel, col,
					 events_in(p, (size_t)c), (long long)s[c].sample_count,
					 (long long)s[c].total, a, b);
			events += (size_t)a;
			continue;
		}
		if (!(r = find_row(p, &s[c], fn)))
			fail_msg("%s %s: no function '%s'", rel, col, fn);
		if (r->self != a || r->total != b)
			fail_msg("%s %s %s: profreg self %lld total %lld, jfr print %lld %lld", rel,
				 col, fn, (long long)r->self, (long long)r->total, a, b);
		checked++;
	}
	/* Every event is one sample: none left out, none made up. */
	assert_int_equal(p->nsamples, events);
	assert_true(checked >= 5);
	profile_summary_release(&s[0]);
	profile_summary_release(&s[1]);
	profile_free(p);
	buf_release(&data);
	buf_release(&golden);
}

static void test_one_chunk_recording_matches_jfr_print(void **state)
{
	(void)state;
	check_against_jfr_print("jfr/burn.jfr", "jfr/burn.shares.txt");
}

static void test_two_chunk_recording_matches_jfr_print(void **state)
{
	(void)state;
	check_against_jfr_print("jfr/burn-chunks.jfr", "jfr/burn-chunks.shares.txt");
}

/* The lambda's class is named as perf maps name it, without its address. */
static void test_frames_are_class_dot_method_and_lambdas_lose_their_address(void **state)
{
	buf data = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	bool lambda = false, jdk = false;

	(void)state;
	testdata_read(&data, "jfr/burn.jfr");
	assert_int_equal(parse(&p, &data, &err), 0);
	for (uint32_t i = 0; i < p->nfuncs; i++) {
		const char *n = p->funcs[i].name;

		assert_string_equal(p->funcs[i].file, "");
		assert_null(strstr(n, "+0x"));
		lambda |= strcmp(n, "Burn$$Lambda.applyAsLong") == 0;
		jdk |= strncmp(n, "java/", 5) == 0 || strncmp(n, "jdk/", 4) == 0;
	}
	assert_true(lambda);
	assert_true(jdk);
	/* Root first in the model: every CPU stack of Burn starts at main. */
	for (size_t i = 0; i < p->nsamples; i++)
		if (p->values[i * 2] && p->stack_len[i])
			assert_string_equal(p->funcs[p->frames[p->stack_off[i]]].name, "Burn.main");
	profile_free(p);
	buf_release(&data);
}

/*
 * The JDK writes a hidden class as "acme.Spin+0x00007fa400007400/330084561":
 * the package with '.', and after the address an identity hash new in
 * every JVM. A real recording of a lambda's class and a class from
 * defineHiddenClass, both in package acme, and of the JDK's method handle
 * forms: each is named as every other class and perf maps name them, with
 * '/', and without its address or hash.
 */
static void test_hidden_classes_are_named_as_other_classes(void **state)
{
	static const char *const want[] = {
		"acme/Spin.run", "acme/Hidden$$Lambda.applyAsLong",
		"java/lang/invoke/LambdaForm$DMH.invokeStatic",
	};
	buf data = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;

	(void)state;
	testdata_read(&data, "jfr/hidden.jfr.gz");
	assert_int_equal(format_parse(&p, (const uint8_t *)data.ptr, data.len, PROFILE_FMT_AUTO,
				      "hidden.jfr.gz", NULL, &err), 0);
	for (size_t w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
		uint32_t i = 0;

		while (i < p->nfuncs && strcmp(p->funcs[i].name, want[w]) != 0)
			i++;
		if (i == p->nfuncs)
			fail_msg("no function '%s'", want[w]);
	}
	for (uint32_t i = 0; i < p->nfuncs; i++) {
		const char *n = p->funcs[i].name, *dot = strrchr(n, '.');

		/* The class, before the method's '.', has none of its own. */
		if (dot && memchr(n, '.', (size_t)(dot - n)))
			fail_msg("function '%s' has a class with '.'", n);
		if (strstr(n, "0x") || strchr(n, '+'))
			fail_msg("function '%s' kept a hidden class's address", n);
	}
	profile_free(p);
	buf_release(&data);
}

/*
 * Two real short runs of tests/data/jfr/Idle.java that caught no thread
 * running Java code and three of JFR's own allocations: with the JDK's
 * default settings, whose CPU sampler is on, the recording is a CPU
 * profile of nothing (it was an allocation profile, and `--type cpu`
 * was refused), its allocations still there for `--type alloc`; with the
 * sampler off, it is an allocation profile, as before.
 */
static void test_a_cpu_recording_without_cpu_samples_stays_a_cpu_profile(void **state)
{
	static const struct {
		const char *file, *type;
		long samples_col;
	} cases[] = {
		{"jfr/idle-cpu-on.jfr.gz", "cpu", 0},
		{"jfr/idle-cpu-off.jfr.gz", "alloc", -1},
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		buf data = BUF_INIT;
		pr_error err = PR_ERROR_INIT;
		profile *p = NULL;
		long alloc;

		testdata_read(&data, cases[c].file);
		if (format_parse(&p, (const uint8_t *)data.ptr, data.len, PROFILE_FMT_AUTO,
				 cases[c].file, NULL, &err) < 0)
			fail_msg("%s", err.msg);
		assert_int_equal(find_col(p, "samples"), cases[c].samples_col);
		assert_true((alloc = find_col(p, "alloc_space")) >= 0);
		assert_int_equal(events_in(p, (size_t)alloc), 3);
		assert_int_equal(p->nsamples, 3);
		assert_string_equal(profile_guess_type(p), cases[c].type);
		assert_string_equal(profile_pick_primary(p, "alloc"), "alloc");
		assert_int_equal(p->primary, alloc);
		profile_free(p);
		buf_release(&data);
	}
}

/*
 * Each CPU sample stands for one period of a running thread, which the
 * recording's jdk.ActiveSetting events give (20 ms under the JDK's
 * default settings, 10 ms under `profile`): without it, the same code
 * recorded at 10 ms instead of 20 ms held twice the samples per second,
 * a critical regression of the service's cost. A recording whose
 * settings are not in it has no period.
 */
static void test_a_cpu_recording_carries_its_sampling_period(void **state)
{
	static const struct {
		const char *file;
		int64_t period;
	} cases[] = {
		{"jfr/idle-cpu-on.jfr.gz", 20000000},
		{"jfr/profile-10ms.jfr.gz", 10000000},
		{"jfr/burn.jfr", 0},
		{"jfr/idle-cpu-off.jfr.gz", 0}, /* no CPU samples: an allocation profile */
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		buf data = BUF_INIT;
		pr_error err = PR_ERROR_INIT;
		profile *p = NULL;

		testdata_read(&data, cases[c].file);
		if (format_parse(&p, (const uint8_t *)data.ptr, data.len, PROFILE_FMT_AUTO,
				 cases[c].file, NULL, &err) < 0)
			fail_msg("%s", err.msg);
		if (p->period != cases[c].period)
			fail_msg("%s: period %lld, expected %lld", cases[c].file,
				 (long long)p->period, (long long)cases[c].period);
		if (cases[c].period) {
			assert_string_equal(p->period_type.type, "cpu");
			assert_string_equal(p->period_type.unit, "nanoseconds");
		} else {
			assert_null(p->period_type.type);
		}
		profile_free(p);
		buf_release(&data);
	}
}

static void test_detected_by_content_also_gzipped(void **state)
{
	buf data = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	uint8_t *gz;
	size_t gzlen;
	z_stream z;

	(void)state;
	testdata_read(&data, "jfr/burn.jfr");
	assert_true(jfr_sniff((const uint8_t *)data.ptr, data.len));
	assert_int_equal(format_detect((const uint8_t *)data.ptr, data.len), PROFILE_FMT_JFR);
	assert_false(jfr_sniff((const uint8_t *)"FLR", 3));

	gzlen = data.len + 1024;
	assert_non_null(gz = malloc(gzlen));
	memset(&z, 0, sizeof(z));
	assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = (Bytef *)data.ptr;
	z.avail_in = (uInt)data.len;
	z.next_out = gz;
	z.avail_out = (uInt)gzlen;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	gzlen -= z.avail_out;
	deflateEnd(&z);
	if (format_parse(&p, gz, gzlen, PROFILE_FMT_AUTO, "x.jfr.gz", NULL, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(p->format, PROFILE_FMT_JFR);
	assert_true(p->nsamples > 100);
	profile_free(p);
	free(gz);
	buf_release(&data);
}

/*
 * A chunk header whose duration would carry its end past 2^63 - 1 is
 * read without the sum overflowing (signed overflow was computed before
 * it was checked; make asan reports it): the capture is kept, without a
 * duration from that chunk.
 */
static void test_a_chunk_duration_past_the_end_of_time_is_ignored(void **state)
{
	buf data = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;

	(void)state;
	testdata_read(&data, "jfr/burn.jfr");
	assert_true(data.len > 48);
	memcpy(data.ptr + 40, "\x7f\xff\xff\xff\xff\xff\xff\xff", 8);
	if (jfr_parse(&p, (const uint8_t *)data.ptr, data.len, NAME, NULL, &err) != 0)
		fail_msg("%s", err.msg);
	assert_true(p->nsamples > 100);
	profile_free(p);
	buf_release(&data);
}

/* A refusal: the code, one line naming the input, `want` in it. */
static void expect_error(const uint8_t *d, size_t n, int code, const char *want)
{
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	int rc = jfr_parse(&p, d, n, NAME, NULL, &err);

	if (rc == 0)
		fail_msg("parsed, expected '%s'", want);
	assert_null(p);
	assert_int_equal(rc, code);
	assert_int_equal(strncmp(err.msg, "cannot parse '" NAME "': ", strlen(NAME) + 16), 0);
	assert_null(strchr(err.msg, '\n'));
	if (want && !strstr(err.msg, want))
		fail_msg("message '%s' lacks '%s'", err.msg, want);
}

static void test_every_truncation_of_a_real_file_is_an_error(void **state)
{
	buf data = BUF_INIT;

	(void)state;
	testdata_read(&data, "jfr/burn.jfr");
	for (size_t n = 0; n < data.len; n++)
		expect_error((const uint8_t *)data.ptr, n, PR_EDATA, NULL);
	buf_release(&data);
}

static void put_be64(uint8_t *b, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		b[i] = (uint8_t)v;
}

/*
 * Cut a real file short and say so in its header, so that the parser goes
 * past the header into what is left; every cut is an error or a profile.
 */
static void test_truncation_inside_a_chunk_that_says_so_is_handled(void **state)
{
	buf data = BUF_INIT;
	uint8_t *copy;

	(void)state;
	testdata_read(&data, "jfr/burn.jfr");
	assert_non_null(copy = malloc(data.len));
	for (size_t n = 68; n < data.len; n += n < 4096 || n > data.len - 4096 ? 1 : 61) {
		pr_error err = PR_ERROR_INIT;
		profile *p = NULL;

		memcpy(copy, data.ptr, n);
		put_be64(copy + 8, n);
		if (jfr_parse(&p, copy, n, NAME, NULL, &err) == 0)
			profile_free(p);
		else
			assert_null(strchr(err.msg, '\n'));
	}
	free(copy);
	buf_release(&data);
}

/* Bytes of a real file changed one at a time: a profile or one line. */
static void test_corrupted_bytes_give_a_profile_or_an_error(void **state)
{
	buf data = BUF_INIT;
	uint8_t *copy;

	(void)state;
	testdata_read(&data, "jfr/burn.jfr");
	assert_non_null(copy = malloc(data.len));
	memcpy(copy, data.ptr, data.len);
	for (size_t i = 0; i < data.len; i += 89) {
		static const uint8_t with[] = {0x00, 0xff, 0x80, 0x7f, 0x05};

		for (size_t k = 0; k < sizeof(with); k++) {
			pr_error err = PR_ERROR_INIT;
			profile *p = NULL;

			copy[i] = with[k];
			if (jfr_parse(&p, copy, data.len, NAME, NULL, &err) == 0)
				profile_free(p);
			else
				assert_true(strncmp(err.msg, "cannot parse '" NAME "': ", 16) == 0);
		}
		copy[i] = (uint8_t)data.ptr[i];
	}
	free(copy);
	buf_release(&data);
}

static void test_bad_magic_and_chunk_past_the_end_are_refused(void **state)
{
	buf data = BUF_INIT;
	uint8_t *copy;

	(void)state;
	testdata_read(&data, "jfr/burn.jfr");
	assert_non_null(copy = malloc(data.len + 70));
	memcpy(copy, data.ptr, data.len);
	copy[2] = 'X';
	expect_error(copy, data.len, PR_EDATA, "no \"FLR\" magic at offset 0");
	copy[2] = 'R';
	put_be64(copy + 8, data.len + 1);
	expect_error(copy, data.len, PR_EDATA, "chunk at offset 0 says it is");
	put_be64(copy + 8, data.len);
	/* A second chunk that is not one. */
	memset(copy + data.len, 'x', 70);
	expect_error(copy, data.len + 70, PR_EDATA, "are not a JFR chunk");
	/* Another version. */
	copy[5] = 9;
	expect_error(copy, data.len, PR_EDATA, "version 9.1");
	free(copy);
	buf_release(&data);
}

/* ---- recordings built here ------------------------------------------ */

/* Which way a built recording is wrong. */
enum flaw {
	OK, LOOP, RECURSIVE, HUGE_COUNT, BAD_ENCODING, MISSING_STACK, MISSING_METHOD,
	NULL_STACK, LATIN1_AND_CHARS, LONG_NAMES,
	/* HOSTILE text as a class id, a field's type, its dimension, a type's name */
	HOSTILE_ID, HOSTILE_FIELD_TYPE, HOSTILE_DIMENSION, HOSTILE_NAME,
};

/*
 * Metadata text that would rewrite a terminal's title and clear its screen,
 * then a card number beyond the 32 bytes a message may quote.
 */
#define HOSTILE "\x1b]0;owned\x07\x1b[2J, and then a card: 4111111111111111"

/* LONG_NAMES: this many methods of one class whose name is 60,000 bytes. */
#define LONG_METHODS 1300

typedef struct rec {
	buf b;
	const char *strs[64];
	uint64_t nstrs;
} rec;

static void put(buf *b, const void *d, size_t n)
{
	assert_int_equal(buf_put(b, d, n), 0);
}

static void u8(buf *b, uint8_t v)
{
	put(b, &v, 1);
}

static void var(buf *b, uint64_t v)
{
	for (int i = 0; i < 8 && v >= 0x80; i++, v >>= 7)
		u8(b, (uint8_t)(v | 0x80));
	u8(b, (uint8_t)v);
}

/* LEB128 padded to 9 bytes, so that it can be patched in place. */
static void var9_at(buf *b, size_t at, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 7)
		b->ptr[at + (size_t)i] = (char)(v & 0x7f) | (char)0x80;
	b->ptr[at + 8] = (char)v;
}

static void utf8(buf *b, const char *s)
{
	u8(b, 3);
	var(b, strlen(s));
	put(b, s, strlen(s));
}

/* An event: its size (padded to 5 bytes) then the body. */
static void event(buf *out, const buf *body)
{
	uint64_t n = body->len + 5;

	for (int i = 0; i < 4; i++, n >>= 7)
		u8(out, (uint8_t)(n | 0x80));
	u8(out, (uint8_t)n);
	put(out, body->ptr, body->len);
}

static uint64_t str(rec *r, const char *s)
{
	for (uint64_t i = 0; i < r->nstrs; i++)
		if (strcmp(r->strs[i], s) == 0)
			return i;
	r->strs[r->nstrs] = s;
	return r->nstrs++;
}

/* An element with attributes (key, value pairs, NULL-ended) and children. */
static void elem(rec *r, buf *b, const char *name, const char *const *attrs, uint64_t nkids)
{
	uint64_t n = 0;

	while (attrs && attrs[2 * n])
		n++;
	var(b, str(r, name));
	var(b, n);
	for (uint64_t i = 0; i < n; i++) {
		var(b, str(r, attrs[2 * i]));
		var(b, str(r, attrs[2 * i + 1]));
	}
	var(b, nkids);
}

static void class(rec *r, buf *b, const char *name, const char *id, uint64_t nfields)
{
	const char *a[] = {"name", name, "id", id, NULL};

	elem(r, b, "class", a, nfields);
}

static void field(rec *r, buf *b, const char *name, const char *type, bool cp, bool array)
{
	const char *a[9] = {"name", name, "class", type};
	int n = 4;

	if (cp) {
		a[n++] = "constantPool";
		a[n++] = "true";
	}
	if (array) {
		a[n++] = "dimension";
		a[n++] = "1";
	}
	a[n] = NULL;
	elem(r, b, "field", a, 0);
}

static void metadata(rec *r, buf *out, enum flaw flaw)
{
	buf tree = BUF_INIT, body = BUF_INIT;

	elem(r, &tree, "root", NULL, 2);
	elem(r, &tree, "metadata", NULL, 11);
	class(r, &tree, "long", "4", 0);
	class(r, &tree, "int", "5", 0);
	class(r, &tree, "java.lang.String", "6", 0);
	class(r, &tree, "jdk.types.Symbol", "10", 1);
	field(r, &tree, "string", "6", false, false);
	class(r, &tree, "java.lang.Class", "11", 1);
	field(r, &tree, "name", "10", true, false);
	class(r, &tree, "jdk.types.Method", "12", 2);
	field(r, &tree, "type", "11", true, false);
	field(r, &tree, "name", "10", true, false);
	class(r, &tree, "jdk.types.StackFrame", "13", 2);
	field(r, &tree, "method", "12", true, false);
	field(r, &tree, "lineNumber", "5", false, false);
	class(r, &tree, "jdk.types.StackTrace", "14", 1);
	field(r, &tree, "frames", "13", false, true);
	class(r, &tree, "jdk.ExecutionSample", "20",
	      flaw == RECURSIVE || flaw == HOSTILE_NAME ? 3 : 2);
	field(r, &tree, "startTime", "4", false, false);
	field(r, &tree, "stackTrace", "14", true, false);
	if (flaw == RECURSIVE || flaw == HOSTILE_NAME)
		field(r, &tree, "x", "30", false, false);
	class(r, &tree, "jdk.ObjectAllocationSample", "21", 3);
	field(r, &tree, "startTime", "4", false, false);
	field(r, &tree, "stackTrace", "14", true, false);
	field(r, &tree, "weight", "4", false, false);
	class(r, &tree, flaw == HOSTILE_NAME ? HOSTILE : "Rec", flaw == HOSTILE_ID ? HOSTILE : "30",
	      1);
	if (flaw == HOSTILE_DIMENSION) {
		const char *a[] = {"name", "self", "class", "30", "dimension", HOSTILE, NULL};

		elem(r, &tree, "field", a, 0);
	} else {
		field(r, &tree, "self", flaw == HOSTILE_FIELD_TYPE ? HOSTILE : "30", false, false);
	}
	elem(r, &tree, "region", NULL, 0);

	var(&body, 0); /* metadata */
	var(&body, 0);
	var(&body, 0);
	var(&body, 1);
	var(&body, r->nstrs);
	for (uint64_t i = 0; i < r->nstrs; i++)
		utf8(&body, r->strs[i]);
	put(&body, tree.ptr, tree.len);
	event(out, &body);
	buf_release(&tree);
	buf_release(&body);
}

/*
 * Constant pools: symbols, a class, two methods, one stack trace (main
 * calling charge). Returns the offset in `out` of the delta, to patch.
 */
static size_t pools(buf *out, enum flaw flaw, size_t *delta_at)
{
	buf body = BUF_INIT;
	size_t start = out->len;

	var(&body, 1);
	var(&body, 0);
	var(&body, 0);
	*delta_at = body.len;
	put(&body, "\0\0\0\0\0\0\0\0\0", 9);
	u8(&body, 0);
	var(&body, 4); /* pools */
	var(&body, 10); /* Symbol */
	var(&body, flaw == HUGE_COUNT ? 0xffffffffu : 3);
	var(&body, 1);
	if (flaw == LATIN1_AND_CHARS) {
		u8(&body, 5); /* Latin-1 "Café" */
		var(&body, 4);
		put(&body, "Caf\xe9", 4);
	} else if (flaw == LONG_NAMES) {
		u8(&body, 3);
		var(&body, 60000);
		for (int i = 0; i < 60000; i++)
			u8(&body, 'A');
	} else {
		utf8(&body, "com/acme/Pay");
	}
	var(&body, 2);
	if (flaw == BAD_ENCODING) {
		u8(&body, 9);
	} else if (flaw == LATIN1_AND_CHARS) {
		u8(&body, 4); /* chars: "ch", then U+1F600 as a surrogate pair */
		var(&body, 4);
		var(&body, 'c');
		var(&body, 'h');
		var(&body, 0xd83d);
		var(&body, 0xde00);
	} else {
		utf8(&body, "charge");
	}
	var(&body, 3);
	utf8(&body, "main");
	var(&body, 11); /* Class */
	var(&body, 1);
	var(&body, 1);
	var(&body, 1);
	var(&body, 12); /* Method */
	if (flaw == LONG_NAMES) {
		/* Every method of the long-named class: each name copies it again. */
		var(&body, LONG_METHODS);
		for (uint64_t k = 1; k <= LONG_METHODS; k++) {
			var(&body, k);
			var(&body, 1);
			var(&body, 2);
		}
		var(&body, 14);
		var(&body, 1);
		var(&body, 1);
		var(&body, LONG_METHODS);
		for (uint64_t k = 1; k <= LONG_METHODS; k++) {
			var(&body, k);
			var(&body, 42);
		}
		event(out, &body);
		*delta_at += start + 5;
		buf_release(&body);
		return start;
	}
	var(&body, 2);
	var(&body, 1);
	var(&body, 1);
	var(&body, 2);
	var(&body, 2);
	var(&body, 1);
	var(&body, 3);
	var(&body, 14); /* StackTrace */
	var(&body, 1);
	var(&body, 1);
	var(&body, 2); /* frames, leaf first */
	var(&body, flaw == MISSING_METHOD ? 7 : 1);
	var(&body, 42);
	var(&body, 2);
	var(&body, 7);
	event(out, &body);
	*delta_at += start + 5;
	buf_release(&body);
	return start;
}

/* A whole recording: header, events, metadata, constant pools. */
static void build(buf *out, enum flaw flaw)
{
	rec r;
	buf body = BUF_INIT;
	size_t meta, cp, cp2, delta_at, delta2_at;
	uint64_t stack = flaw == MISSING_STACK ? 5 : flaw == NULL_STACK ? 0 : 1;

	memset(&r, 0, sizeof(r));
	*out = (buf)BUF_INIT;
	put(out, "FLR\0\0\2\0\1", 8);
	put(out, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 24);
	put(out, "\x16\x00\x00\x00\x00\x00\x00\x01\0\0\0\0\x3b\x9a\xca\x00", 16);
	put(out, "\0\0\0\0\0\0\0\0\0\0\0\0\x3b\x9a\xca\x00\0\0\0\1", 20);
	for (int i = 0; i < 3; i++) {
		buf_reset(&body);
		var(&body, 20);
		var(&body, 1000 + (uint64_t)i);
		var(&body, stack);
		event(out, &body);
	}
	buf_reset(&body);
	var(&body, 21);
	var(&body, 2000);
	var(&body, stack);
	var(&body, 4096);
	event(out, &body);
	meta = out->len;
	metadata(&r, out, flaw);
	cp = pools(out, flaw, &delta_at);
	if (flaw == LOOP) {
		/* A second pool event whose delta leads back to the first. */
		cp2 = pools(out, OK, &delta2_at);
		var9_at(out, delta_at, cp2 - cp);
		var9_at(out, delta2_at, (uint64_t)-(int64_t)(cp2 - cp));
	} else {
		var9_at(out, delta_at, 0);
	}
	put_be64((uint8_t *)out->ptr + 8, out->len);
	put_be64((uint8_t *)out->ptr + 16, cp);
	put_be64((uint8_t *)out->ptr + 24, meta);
	buf_release(&body);
}

/* Two built recordings joined as `cat` joins them, the second starting `later_ns` after. */
static void joined(buf *out, int64_t later_ns)
{
	buf second;

	build(out, OK);
	build(&second, OK);
	put_be64((uint8_t *)second.ptr + 32, (uint64_t)(0x1600000000000001LL + later_ns));
	assert_int_equal(buf_put(out, second.ptr, second.len), 0);
	buf_release(&second);
}

static void test_joined_recordings_last_as_long_as_their_chunks(void **state)
{
	const int64_t later[] = {10000000000LL, 500000000LL, 1000000000LL, 0};
	const int64_t want[] = {2000000000LL, 1500000000LL, 2000000000LL, 1000000000LL};
	pr_error err = PR_ERROR_INIT;

	(void)state;
	/* A gap is not recording time; an overlap counts once. */
	for (size_t i = 0; i < sizeof(later) / sizeof(later[0]); i++) {
		buf b;
		profile *p = NULL;
		joined(&b, later[i]);
		if (parse(&p, &b, &err) != 0)
			fail_msg("%s", err.msg);
		assert_int_equal(p->time_ns, 0x1600000000000001LL);
		assert_int_equal(p->duration_ns, want[i]);
		assert_int_equal(p->nsamples, 8);
		profile_free(p);
		buf_release(&b);
	}
}

static void test_built_recording_reads_as_written(void **state)
{
	buf b;
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	profile_summary s;

	(void)state;
	build(&b, OK);
	if (parse(&p, &b, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(p->nsamples, 4);
	assert_int_equal(p->time_ns, 0x1600000000000001LL);
	assert_int_equal(p->duration_ns, 1000000000);
	assert_int_equal(profile_summarize(&s, p, 0, &err), 0);
	assert_int_equal(s.total, 3);
	assert_int_equal(find_row(p, &s, "com/acme/Pay.charge")->self, 3);
	assert_int_equal(find_row(p, &s, "com/acme/Pay.main")->total, 3);
	assert_int_equal(find_row(p, &s, "com/acme/Pay.main")->self, 0);
	profile_summary_release(&s);
	assert_int_equal(profile_summarize(&s, p, 1, &err), 0);
	assert_int_equal(s.total, 4096);
	assert_int_equal(find_row(p, &s, "com/acme/Pay.charge")->self, 4096);
	profile_summary_release(&s);
	/* Leaf first in the file, root first in the model. */
	assert_string_equal(p->funcs[p->frames[p->stack_off[0]]].name, "com/acme/Pay.main");
	profile_free(p);
	buf_release(&b);
}

static void test_latin1_and_char_array_strings_become_utf8(void **state)
{
	buf b;
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	bool found = false;

	(void)state;
	build(&b, LATIN1_AND_CHARS);
	if (parse(&p, &b, &err) != 0)
		fail_msg("%s", err.msg);
	for (uint32_t i = 0; i < p->nfuncs; i++)
		found |= strcmp(p->funcs[i].name, "Caf\xc3\xa9.ch\xf0\x9f\x98\x80") == 0;
	assert_true(found);
	assert_int_equal(p->utf8_replaced, 0);
	profile_free(p);
	buf_release(&b);
}

static void test_stack_trace_zero_is_a_sample_without_stack(void **state)
{
	buf b;
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;

	(void)state;
	build(&b, NULL_STACK);
	assert_int_equal(parse(&p, &b, &err), 0);
	assert_int_equal(p->nsamples, 4);
	for (size_t i = 0; i < p->nsamples; i++)
		assert_int_equal(p->stack_len[i], 0);
	profile_free(p);
	buf_release(&b);
}

static void test_hostile_built_recordings_are_refused(void **state)
{
	static const struct {
		enum flaw flaw;
		const char *want;
	} cases[] = {
		{LOOP, "constant pools chained from offset"},
		{RECURSIVE, "type 'Rec' nests more than 32 levels deep"},
		{HUGE_COUNT, "constant count 4294967295 at offset"},
		{BAD_ENCODING, "has an unknown encoding 9"},
		{MISSING_STACK, "constant 5 of type 'jdk.types.StackTrace' at offset"},
		{MISSING_METHOD, "constant 7 of type 'jdk.types.Method'"},
	};
	buf b;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		build(&b, cases[i].flaw);
		expect_error((const uint8_t *)b.ptr, b.len, PR_EDATA, cases[i].want);
		buf_release(&b);
	}
	/*
	 * 1,300 methods of one class of a 60,000-byte name: 78 MB of names
	 * from a recording of 70 KB, beyond what its size allows.
	 */
	build(&b, LONG_NAMES);
	assert_true(b.len < 100000);
	expect_error((const uint8_t *)b.ptr, b.len, PR_ELIMIT,
		     "the names of its methods add up to more than 8 bytes per input byte");
	buf_release(&b);
}

/*
 * Text of the metadata in a message goes through profile_quote: no control
 * byte reaches a terminal or a report, nor the card number after "card".
 */
static void test_metadata_text_with_control_bytes_is_quoted_safely(void **state)
{
	static const struct {
		enum flaw flaw;
		const char *want;
	} cases[] = {
		{HOSTILE_ID, "class id '<15 bytes> and then a card:...' at offset"},
		{HOSTILE_FIELD_TYPE, "field type '<15 bytes> and then a card:...' at offset"},
		{HOSTILE_DIMENSION, "field dimension '<15 bytes> and then a card:...' at offset"},
		{HOSTILE_NAME, "type '<15 bytes> and then a card:...' nests more than 32"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pr_error err = PR_ERROR_INIT;
		profile *p = NULL;
		buf b;

		build(&b, cases[i].flaw);
		expect_error((const uint8_t *)b.ptr, b.len, PR_EDATA, cases[i].want);
		assert_int_equal(parse(&p, &b, &err), PR_EDATA);
		for (const char *c = err.msg; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				fail_msg("case %zu: control byte 0x%02x in '%s'", i,
					 (unsigned char)*c, err.msg);
		if (strstr(err.msg, "4111"))
			fail_msg("case %zu: the card number is in '%s'", i, err.msg);
		buf_release(&b);
	}
}

static void test_limits_are_enforced(void **state)
{
	buf b;
	profile_limits lim;
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;

	(void)state;
	build(&b, OK);
	profile_limits_default(&lim);
	lim.max_depth = 1;
	assert_int_equal(jfr_parse(&p, (const uint8_t *)b.ptr, b.len, NAME, &lim, &err),
			 PR_ELIMIT);
	assert_non_null(strstr(err.msg, "exceeds the depth limit of 1"));
	profile_limits_default(&lim);
	lim.max_samples = 2;
	pr_error_clear(&err);
	assert_int_equal(jfr_parse(&p, (const uint8_t *)b.ptr, b.len, NAME, &lim, &err),
			 PR_ELIMIT);
	profile_limits_default(&lim);
	lim.max_string_len = 5;
	pr_error_clear(&err);
	assert_int_equal(jfr_parse(&p, (const uint8_t *)b.ptr, b.len, NAME, &lim, &err),
			 PR_ELIMIT);
	assert_null(p);
	buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_chunk_recording_matches_jfr_print),
		cmocka_unit_test(test_a_chunk_duration_past_the_end_of_time_is_ignored),
		cmocka_unit_test(test_two_chunk_recording_matches_jfr_print),
		cmocka_unit_test(test_frames_are_class_dot_method_and_lambdas_lose_their_address),
		cmocka_unit_test(test_hidden_classes_are_named_as_other_classes),
		cmocka_unit_test(test_a_cpu_recording_without_cpu_samples_stays_a_cpu_profile),
		cmocka_unit_test(test_a_cpu_recording_carries_its_sampling_period),
		cmocka_unit_test(test_detected_by_content_also_gzipped),
		cmocka_unit_test(test_every_truncation_of_a_real_file_is_an_error),
		cmocka_unit_test(test_truncation_inside_a_chunk_that_says_so_is_handled),
		cmocka_unit_test(test_corrupted_bytes_give_a_profile_or_an_error),
		cmocka_unit_test(test_bad_magic_and_chunk_past_the_end_are_refused),
		cmocka_unit_test(test_built_recording_reads_as_written),
		cmocka_unit_test(test_joined_recordings_last_as_long_as_their_chunks),
		cmocka_unit_test(test_latin1_and_char_array_strings_become_utf8),
		cmocka_unit_test(test_stack_trace_zero_is_a_sample_without_stack),
		cmocka_unit_test(test_hostile_built_recordings_are_refused),
		cmocka_unit_test(test_metadata_text_with_control_bytes_is_quoted_safely),
		cmocka_unit_test(test_limits_are_enforced),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
