/*
 * test_speedscope.c: the speedscope parser: a py-spy file, an evented
 * file and a file profreg exported, checked against values worked out by
 * hand or against the profile they were made from; hand-built files for
 * each rule (units, merging, replay); and malformed, truncated, hostile
 * and oversized input, each refused with one line naming the input.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "common/buf.h"
#include "pipeline/folded.h"
#include "pipeline/format.h"
#include "pipeline/speedscope.h"
#include "reports/export.h"
#include "tests/support/testdata.h"

#define NAME "t.speedscope.json"

/* Pieces of a file: the schema, frames by name, profiles, events. */
#define SCHEMA "\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
#define FRAMES(list) "\"shared\":{\"frames\":[" list "]}"
#define F(name) "{\"name\":\"" name "\"}"
#define AB F("a") "," F("b")
#define ABC F("a") "," F("b") "," F("c")
#define SAMPLED(unit, samples, weights) \
	"{\"type\":\"sampled\",\"name\":\"t\",\"unit\":\"" unit "\",\"startValue\":0," \
	"\"endValue\":10,\"samples\":" samples ",\"weights\":" weights "}"
#define EVENTED(unit, events) \
	"{\"type\":\"evented\",\"name\":\"t\",\"unit\":\"" unit "\",\"startValue\":0," \
	"\"endValue\":100,\"events\":[" events "]}"
#define DOC(frames, profiles) "{" SCHEMA FRAMES(frames) ",\"profiles\":[" profiles "]}"
#define O(f, at) "{\"type\":\"O\",\"frame\":" #f ",\"at\":" #at "}"
#define C(f, at) "{\"type\":\"C\",\"frame\":" #f ",\"at\":" #at "}"

static int parse(profile **out, const char *json, const profile_limits *lim, pr_error *err)
{
	return speedscope_parse(out, (const uint8_t *)json, strlen(json), NAME, lim, err);
}

static profile *parse_ok(const char *json)
{
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	int rc = parse(&p, json, NULL, &err);

	if (rc != 0)
		fail_msg("parse failed: %s", err.msg);
	assert_non_null(p);
	assert_int_equal(p->format, PROFILE_FMT_SPEEDSCOPE);
	return p;
}

static void summarize(profile_summary *s, const profile *p, size_t col)
{
	pr_error err = PR_ERROR_INIT;

	if (profile_summarize(s, p, col, &err) < 0)
		fail_msg("%s", err.msg);
}

/* The row of function (name, file), or NULL; file NULL matches any. */
static const profile_summary_row *find_row(const profile *p, const profile_summary *s,
					   const char *name, const char *file)
{
	for (size_t i = 0; i < s->nrows; i++) {
		const profile_func *f = &p->funcs[s->rows[i].func];
		if (strcmp(f->name, name) == 0 && (!file || strcmp(f->file, file) == 0))
			return &s->rows[i];
	}
	return NULL;
}

static const profile_summary_row *row(const profile *p, const profile_summary *s,
				      const char *name, const char *file)
{
	const profile_summary_row *r = find_row(p, s, name, file);

	if (!r)
		fail_msg("no function '%s' in the summary", name);
	return r;
}

/* Self and total of a function in column `col`, checked together. */
static void expect(const profile *p, const profile_summary *s, const char *name,
		   const char *file, int64_t self, int64_t total)
{
	const profile_summary_row *r = row(p, s, name, file);

	if (r->self != self || r->total != total)
		fail_msg("%s: self %lld total %lld, want %lld and %lld", name,
			 (long long)r->self, (long long)r->total, (long long)self,
			 (long long)total);
}

static void expect_types(const profile *p, const char *t0, const char *u0, const char *t1,
			 const char *u1)
{
	assert_int_equal(p->nvalue_types, t1 ? 2 : 1);
	assert_string_equal(p->value_types[0].type, t0);
	assert_string_equal(p->value_types[0].unit, u0);
	if (t1) {
		assert_string_equal(p->value_types[1].type, t1);
		assert_string_equal(p->value_types[1].unit, u1);
	}
}

/*
 * tests/data/speedscope/pyspy-threads.speedscope.json: two threads at
 * py-spy's 100 Hz, so each sample weighs 0.01 s. MainThread: <module> >
 * main > compute 3 times at line 12 and twice at line 14, > parse once,
 * and main alone once; worker: _bootstrap > run > worker > compute 3
 * times, and worker alone twice.
 */
static void test_pyspy_threads_merge_into_exact_cpu_and_samples(void **state)
{
	const int64_t tick = 10000000; /* 0.01 s in nanoseconds */
	profile_summary cnt, cpu;
	buf json = BUF_INIT;
	profile *p;

	(void)state;
	testdata_read(&json, "speedscope/pyspy-threads.speedscope.json");
	p = parse_ok(json.ptr);
	expect_types(p, "samples", "count", "cpu", "nanoseconds");
	assert_string_equal(p->value_types[p->primary].type, "cpu");
	assert_string_equal(profile_guess_type(p), "cpu");
	/* The longer thread: 7 samples of 0.01 s. */
	assert_int_equal(p->duration_ns, 7 * tick);
	assert_int_equal(p->time_ns, 0);
	/* compute at two lines is one function: 8 frames, 7 functions. */
	assert_int_equal(p->nfuncs, 7);
	summarize(&cnt, p, 0);
	summarize(&cpu, p, 1);
	assert_int_equal(cnt.total, 12);
	assert_int_equal(cnt.sample_count, 12);
	assert_int_equal(cpu.total, 12 * tick);
	expect(p, &cnt, "compute", "/app/calc.py", 8, 8);
	expect(p, &cnt, "main", "/app/main.py", 1, 7);
	expect(p, &cnt, "<module>", "/app/main.py", 0, 7);
	expect(p, &cnt, "parse", "/app/io.py", 1, 1);
	expect(p, &cnt, "worker", "/app/main.py", 2, 5);
	/* The interpreter's version is no part of the file (test_symname). */
	expect(p, &cnt, "run", "/usr/lib/python3/threading.py", 0, 5);
	expect(p, &cnt, "_bootstrap", "/usr/lib/python3/threading.py", 0, 5);
	expect(p, &cpu, "compute", "/app/calc.py", 8 * tick, 8 * tick);
	expect(p, &cpu, "main", "/app/main.py", tick, 7 * tick);
	expect(p, &cpu, "worker", "/app/main.py", 2 * tick, 5 * tick);
	/* Stacks run root first, and equal stacks are summed once. */
	for (size_t i = 0; i < p->nsamples; i++) {
		const char *root = p->funcs[p->frames[p->stack_off[i]]].name;
		assert_true(strcmp(root, "<module>") == 0 || strcmp(root, "_bootstrap") == 0);
	}
	/* <module> > main > compute, > parse, alone; _bootstrap > run > worker > compute, alone. */
	assert_int_equal(p->nsamples, 5);
	profile_summary_release(&cnt);
	profile_summary_release(&cpu);
	profile_free(p);
	buf_release(&json);
}

static void test_frames_differing_only_in_line_are_one_function(void **state)
{
	profile_summary s;
	profile *p = parse_ok(DOC(
		"{\"name\":\"f\",\"file\":\"x.py\",\"line\":1,\"col\":2},"
		"{\"name\":\"f\",\"file\":\"x.py\",\"line\":9},"
		"{\"name\":\"f\",\"file\":\"y.py\",\"line\":1},"
		"{\"name\":\"g\",\"file\":\"x.py\",\"line\":3,\"col\":null}",
		SAMPLED("none", "[[3,0],[3,1],[3,2],[0]]", "[1,2,4,8]")));

	(void)state;
	assert_int_equal(p->nfuncs, 3);
	summarize(&s, p, 0);
	expect(p, &s, "f", "x.py", 11, 11);
	expect(p, &s, "f", "y.py", 4, 4);
	expect(p, &s, "g", "x.py", 0, 7);
	/* g > f(x.py) at two lines is one stack. */
	assert_int_equal(p->nsamples, 3);
	profile_summary_release(&s);
	profile_free(p);
}

static void test_unit_none_counts_samples_and_recursion_counts_once(void **state)
{
	profile_summary s;
	/* a > b 3, a > b > c 2.0, a > b > a > b 4, a 1, and an empty stack 5. */
	profile *p = parse_ok(DOC(ABC, SAMPLED("none", "[[0,1],[0,1,2],[0,1,0,1],[0],[]]",
					       "[3,2.0,4,1,5]")));

	(void)state;
	expect_types(p, "samples", "count", NULL, NULL);
	assert_int_equal(p->duration_ns, 0);
	assert_string_equal(profile_guess_type(p), "cpu");
	summarize(&s, p, 0);
	assert_int_equal(s.total, 15);
	assert_int_equal(s.sample_count, 15);
	assert_int_equal(s.nrows, 3);
	expect(p, &s, "a", "", 1, 10);
	expect(p, &s, "b", "", 7, 9);
	expect(p, &s, "c", "", 2, 2);
	profile_summary_release(&s);
	profile_free(p);
}

static void test_time_units_become_nanoseconds_and_merge(void **state)
{
	profile_summary cnt, cpu;
	profile *p = parse_ok(DOC(AB, SAMPLED("milliseconds", "[[0],[0,1]]", "[2,0.5]") ","
				  SAMPLED("microseconds", "[[0,1]]", "[1.5]") ","
				  SAMPLED("nanoseconds", "[[1]]", "[7]") ","
				  SAMPLED("seconds", "[[1]]", "[1e-9]")));

	(void)state;
	expect_types(p, "samples", "count", "cpu", "nanoseconds");
	/* endValue 10 of the profile in seconds is the longest span. */
	assert_int_equal(p->duration_ns, 10000000000LL);
	summarize(&cnt, p, 0);
	summarize(&cpu, p, 1);
	expect(p, &cpu, "a", "", 2000000, 2501500);
	expect(p, &cpu, "b", "", 500000 + 1500 + 7 + 1, 501508);
	assert_int_equal(cpu.total, 2501508);
	expect(p, &cnt, "a", "", 1, 3);
	expect(p, &cnt, "b", "", 4, 4);
	profile_summary_release(&cnt);
	profile_summary_release(&cpu);
	profile_free(p);
}

/*
 * tests/data/speedscope/evented.speedscope.json, in milliseconds: main
 * 0-15 calls handle (line 10) 0-10, which calls query 1.5-4 and render
 * 4-9.25; then handle (line 12) 10-12.5 calls query 11-12. endValue 20.
 */
static void test_evented_profile_gives_the_durations(void **state)
{
	profile_summary s;
	buf json = BUF_INIT;
	profile *p;

	(void)state;
	testdata_read(&json, "speedscope/evented.speedscope.json");
	p = parse_ok(json.ptr);
	/* No samples to count: the time alone. */
	expect_types(p, "cpu", "nanoseconds", NULL, NULL);
	assert_string_equal(p->value_types[p->primary].type, "cpu");
	assert_int_equal(p->duration_ns, 20000000);
	assert_int_equal(p->nfuncs, 4);
	summarize(&s, p, 0);
	assert_int_equal(s.total, 15000000);
	expect(p, &s, "main", "app.js", 2500000, 15000000);
	expect(p, &s, "handle", "app.js", 3750000, 12500000);
	expect(p, &s, "query", "db.js", 3500000, 3500000);
	expect(p, &s, "render", "view.js", 5250000, 5250000);
	profile_summary_release(&s);
	profile_free(p);
	buf_release(&json);
}

static void test_evented_replay_skips_idle_time_and_counts_recursion_once(void **state)
{
	profile_summary s;
	/* a 10-12, a>b 12-15, a>b>a 15-20, a>b 20-21, a 21-25, idle, b 40-41. */
	profile *p = parse_ok(DOC(AB, EVENTED("nanoseconds",
					      O(0, 10) "," O(1, 12) "," O(0, 15) "," C(0, 20) ","
					      C(1, 21) "," C(0, 25) "," O(1, 40) "," C(1, 41))));

	(void)state;
	summarize(&s, p, 0);
	assert_int_equal(s.total, 16);
	expect(p, &s, "a", "", 11, 15);
	expect(p, &s, "b", "", 5, 10);
	assert_int_equal(p->nsamples, 4);
	profile_summary_release(&s);
	profile_free(p);
}

/* The shape speedscope's own export gives a profile of sample counts. */
static void test_evented_counts_in_unit_none(void **state)
{
	profile_summary s;
	profile *p = parse_ok(DOC(F("a") "," F("b") "," F("c") "," F("d"),
				  EVENTED("none", O(0, 0) "," O(1, 0) "," O(2, 0) "," C(2, 2) ","
					  O(3, 2) "," C(3, 6) "," O(2, 6) "," C(2, 9) ","
					  C(1, 14) "," C(0, 14))));

	(void)state;
	expect_types(p, "samples", "count", NULL, NULL);
	summarize(&s, p, 0);
	assert_int_equal(s.total, 14);
	assert_int_equal(s.sample_count, 14);
	expect(p, &s, "a", "", 0, 14);
	expect(p, &s, "b", "", 5, 14);
	expect(p, &s, "c", "", 5, 5);
	expect(p, &s, "d", "", 4, 4);
	profile_summary_release(&s);
	profile_free(p);
}

static void test_sampled_and_evented_profiles_of_one_file_merge(void **state)
{
	profile_summary s;
	profile *p = parse_ok(DOC(AB, SAMPLED("microseconds", "[[0,1],[0]]", "[3,4]") ","
				  EVENTED("microseconds", O(0, 0) "," O(1, 1) "," C(1, 3) ","
					  C(0, 10))));

	(void)state;
	/* An evented profile has no samples to count: the time alone. */
	expect_types(p, "cpu", "nanoseconds", NULL, NULL);
	summarize(&s, p, 0);
	expect(p, &s, "a", "", 4000 + 1000 + 7000, 17000);
	expect(p, &s, "b", "", 3000 + 2000, 5000);
	profile_summary_release(&s);
	profile_free(p);
}

/* Each function of `a` with a value has the same self and total in `b`. */
static void expect_same_functions(const profile *a, size_t col_a, const profile *b,
				  size_t col_b)
{
	profile_summary sa, sb;

	summarize(&sa, a, col_a);
	summarize(&sb, b, col_b);
	assert_int_equal(sa.total, sb.total);
	assert_int_equal(sa.nrows, sb.nrows);
	for (size_t i = 0; i < sa.nrows; i++) {
		const profile_func *f = &a->funcs[sa.rows[i].func];
		expect(b, &sb, f->name, f->file, sa.rows[i].self, sa.rows[i].total);
	}
	profile_summary_release(&sa);
	profile_summary_release(&sb);
}

static profile *load(const char *rel, profile_format fmt)
{
	pr_error err = PR_ERROR_INIT;
	buf raw = BUF_INIT;
	profile *p = NULL;

	testdata_read(&raw, rel);
	if (format_parse(&p, (const uint8_t *)raw.ptr, raw.len, fmt, rel, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	buf_release(&raw);
	return p;
}

/*
 * tests/data/speedscope/profreg-export.speedscope.json is what `profreg
 * export --format speedscope` wrote for a capture of folded/mixed.folded:
 * it must read back as that capture.
 */
static void test_a_file_profreg_exported_reads_back_as_its_capture(void **state)
{
	buf json = BUF_INIT;
	profile *p, *q;

	(void)state;
	testdata_read(&json, "speedscope/profreg-export.speedscope.json");
	p = parse_ok(json.ptr);
	q = load("folded/mixed.folded", PROFILE_FMT_FOLDED);
	expect_types(p, "samples", "count", NULL, NULL);
	expect_same_functions(q, 0, p, 0);
	profile_free(p);
	profile_free(q);
	buf_release(&json);
}

/* Export with profreg's own writer, then read the export back. */
static void round_trip(const char *rel, profile_format fmt, size_t want_col)
{
	pr_error err = PR_ERROR_INIT;
	buf out = BUF_INIT;
	profile *p = load(rel, fmt), *q = NULL;

	assert_int_equal(export_speedscope(&out, p, p->primary, "round trip", &err), 0);
	if (speedscope_parse(&q, (const uint8_t *)out.ptr, out.len, NAME, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	assert_string_equal(q->value_types[want_col].unit, p->value_types[p->primary].unit);
	expect_same_functions(p, p->primary, q, want_col);
	profile_free(p);
	profile_free(q);
	buf_release(&out);
}

static void test_profreg_exports_read_back_to_the_same_functions_and_values(void **state)
{
	(void)state;
	/* A Go CPU profile: nanoseconds, with files. */
	round_trip("pprof/go-cpu.pb.gz", PROFILE_FMT_PPROF, 1);
	/* Sample counts, with hostile names. */
	round_trip("folded/mixed.folded", PROFILE_FMT_FOLDED, 0);
}

static void test_keys_in_any_order_and_unknown_values_are_skipped(void **state)
{
	static const char *const docs[] = {
		/* py-spy's order: profiles before shared, and nulls. */
		"{\"profiles\":[{\"weights\":[2],\"samples\":[[1,0]],\"endValue\":2,"
		"\"startValue\":0,\"unit\":\"none\",\"name\":\"t\",\"type\":\"sampled\"}],"
		"\"activeProfileIndex\":null,\"exporter\":null,"
		"\"shared\":{\"frames\":[{\"col\":null,\"line\":null,\"file\":null,\"name\":\"a\"},"
		"{\"name\":\"b\",\"file\":\"f.rb\"}]}}",
		/* Values nothing reads, whatever they hold. */
		"{\"$schema\":[1,{\"x\":99999999999999999999999}],\"meta\":{\"shared\":1e999},"
		"\"shared\":{\"frames\":[{\"name\":\"a\",\"line\":\"x\",\"col\":{\"a\":[]}},"
		"{\"name\":\"b\",\"file\":\"f.rb\",\"extra\":[[[]]]}],\"more\":true},"
		"\"profiles\":[{\"type\":\"sampled\",\"name\":{\"x\":1},\"unit\":\"none\","
		"\"startValue\":0,\"endValue\":2,\"samples\":[[1,0]],\"weights\":[2],"
		"\"other\":\"\\u00e9\"}],\"name\":false}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		profile_summary s;
		profile *p = parse_ok(docs[i]);

		summarize(&s, p, 0);
		expect(p, &s, "a", "", 2, 2);
		expect(p, &s, "b", "f.rb", 0, 2);
		profile_summary_release(&s);
		profile_free(p);
	}
}

static void test_zero_weights_and_byte_order_mark_are_accepted(void **state)
{
	profile_summary cnt, cpu;
	profile *p = parse_ok("\xef\xbb\xbf" DOC(AB, SAMPLED("seconds", "[[0],[1],[1]]",
							    "[0,-0.0,0.25]")));

	(void)state;
	summarize(&cnt, p, 0);
	summarize(&cpu, p, 1);
	expect(p, &cnt, "a", "", 1, 1);
	expect(p, &cnt, "b", "", 2, 2);
	expect(p, &cpu, "b", "", 250000000, 250000000);
	assert_null(find_row(p, &cpu, "a", NULL));
	profile_summary_release(&cnt);
	profile_summary_release(&cpu);
	profile_free(p);
}

static void test_sniff_accepts_speedscope_files_only(void **state)
{
	static const char *yes[] = {
		"{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\"}",
		" \n{ \"version\": \"0.6.0\", \"$schema\" : \"https://speedscope.app/x\"}",
		"\xef\xbb\xbf{\"shared\":{\"frames\":[]},\"profiles\":[]}",
		"{\"profiles\": [], \"shared\": {\"frames\": [{\"name\": \"nodes\"}]}}",
	};
	static const char *no[] = {
		"",
		"[{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\"}]",
		"{\"$schema\":\"https://json-schema.org/draft-07/schema\"}",
		"{\"nodes\":[{\"id\":1,\"callFrame\":{\"functionName\":\"shared\","
		"\"url\":\"profiles\"}}],\"samples\":[],\"frames\":1}",
		"{\"nodes\":[{\"callFrame\":{\"functionName\":\"$schema\",\"url\":"
		"\"https://www.speedscope.app/file-format-schema.json\"}}]}",
		"{\"shared\":{\"frames\":[]}}",
		"main;a 1\n",
	};
	buf late = BUF_INIT;

	(void)state;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!speedscope_sniff((const uint8_t *)yes[i], strlen(yes[i])))
			fail_msg("not taken: %s", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (speedscope_sniff((const uint8_t *)no[i], strlen(no[i])))
			fail_msg("taken: %s", no[i]);
	/* Only the first 4 KiB are searched. */
	assert_int_equal(buf_putc(&late, '{'), 0);
	for (int i = 0; i < 5000; i++)
		assert_int_equal(buf_putc(&late, ' '), 0);
	assert_int_equal(buf_puts(&late, SCHEMA "\"x\":1}"), 0);
	assert_false(speedscope_sniff((const uint8_t *)late.ptr, late.len));
	buf_release(&late);
}

/* A refusal: the code, no profile, one line naming the input and the reason. */
static void check_bad(const char *what, const char *json, size_t len,
		      const profile_limits *lim, int code, const char *reason)
{
	pr_error err = PR_ERROR_INIT;
	profile *p = (profile *)1;
	int rc = speedscope_parse(&p, (const uint8_t *)json, len, NAME, lim, &err);

	if (rc != code)
		fail_msg("%s: got %d (%s), want %d", what, rc, err.msg, code);
	assert_int_equal(err.code, code);
	assert_null(p);
	assert_null(strchr(err.msg, '\n'));
	if (strncmp(err.msg, "cannot parse '" NAME "': ", strlen(NAME) + 16) != 0 ||
	    !strstr(err.msg, reason))
		fail_msg("%s: message \"%s\" lacks \"%s\"", what, err.msg, reason);
}

typedef struct bad_case {
	const char *what;
	const char *json;
	const char *reason;
} bad_case;

#define ONE(profile) DOC(AB, profile)
#define SAMPLES_NONE(samples, weights) ONE(SAMPLED("none", samples, weights))
#define PROFILE(fields) ONE("{" fields "}")
#define COMMON "\"name\":\"t\",\"startValue\":0,\"endValue\":1,"
#define EVENTS(unit, events) ONE(EVENTED(unit, events))

static const bad_case bad_cases[] = {
	{"empty", "", "the input is empty"},
	{"only a byte order mark", "\xef\xbb\xbf", "the input is empty"},
	{"only spaces", "  \n", "invalid JSON at line 2"},
	{"not json", "hello", "invalid JSON at line 1 column"},
	{"truncated", "{" SCHEMA FRAMES(AB) ",\"profiles\":[", "invalid JSON"},
	{"trailing garbage", DOC(AB, SAMPLED("none", "[]", "[]")) "x", "invalid JSON"},
	{"invalid utf-8", "{\"shared\":{\"frames\":[{\"name\":\"\xff\"}]}}", "invalid JSON"},
	{"NaN weight", SAMPLES_NONE("[[0]]", "[NaN]"), "invalid JSON"},
	{"Infinity weight", SAMPLES_NONE("[[0]]", "[Infinity]"), "invalid JSON"},
	{"top array", "[1]", "the top level is an array"},
	{"top number", "3", "the top level is not a speedscope object"},
	{"no shared", "{\"profiles\":[]}", "no \"shared\" member: not a speedscope file"},
	{"shared not object", "{\"shared\":[]}", "\"shared\" is not an object"},
	{"shared a string", "{\"shared\":\"x\"}", "\"shared\" is not an object"},
	{"no frames", "{\"shared\":{},\"profiles\":[]}", "\"shared\" has no \"frames\""},
	{"frames not array", "{\"shared\":{\"frames\":{}}}", "\"frames\" is not an array"},
	{"no profiles", "{" FRAMES(AB) "}", "no \"profiles\" member"},
	{"profiles not array", "{" FRAMES(AB) ",\"profiles\":{}}", "\"profiles\" is not an array"},
	{"profiles empty", DOC(AB, ""), "\"profiles\" is empty"},
	{"frame not object", DOC("1", ""), "frame 0 is not an object"},
	{"frame without name", DOC(F("a") ",{\"file\":\"x\"}", ""), "frame 1 has no name"},
	{"frame name a number", DOC("{\"name\":1}", ""), "frame 0: name is not a string"},
	{"frame name null", DOC("{\"name\":null}", ""), "frame 0: name is not a string"},
	{"frame file a number", DOC("{\"name\":\"a\",\"file\":2}", ""),
	 "frame 0: file is not a string"},
	{"frame file an array", DOC("{\"name\":\"a\",\"file\":[]}", ""),
	 "frame 0: file is not a string"},
	{"profile not object", ONE("[]"), "profile 0 is not an object"},
	{"no type", PROFILE(COMMON "\"unit\":\"none\",\"samples\":[],\"weights\":[]"),
	 "profile 0 has no type"},
	{"unknown type", PROFILE(COMMON "\"type\":\"Sampled\",\"unit\":\"none\""),
	 "profile 0: unknown type 'Sampled' (sampled or evented)"},
	{"type not string", PROFILE(COMMON "\"type\":1"), "profile 0: type is not a string"},
	{"no unit", PROFILE(COMMON "\"type\":\"sampled\",\"samples\":[],\"weights\":[]"),
	 "profile 0 has no unit"},
	{"unknown unit", PROFILE(COMMON "\"type\":\"sampled\",\"unit\":\"parsecs\""),
	 "profile 0: unknown unit 'parsecs' (none, nanoseconds"},
	{"unit not string", PROFILE(COMMON "\"unit\":[\"none\"]"),
	 "profile 0: unit is not a string"},
	{"bytes", ONE(SAMPLED("bytes", "[[0]]", "[4096]")),
	 "profile 0 is in bytes, which profreg does not read"},
	{"no startValue",
	 PROFILE("\"type\":\"sampled\",\"unit\":\"none\",\"endValue\":1,\"samples\":[],"
		 "\"weights\":[]"), "profile 0 has no startValue"},
	{"no endValue",
	 PROFILE("\"type\":\"sampled\",\"unit\":\"none\",\"startValue\":1,\"samples\":[],"
		 "\"weights\":[]"), "profile 0 has no endValue"},
	{"startValue a string", PROFILE("\"startValue\":\"0\""),
	 "profile 0: startValue is not a number"},
	{"endValue null", PROFILE("\"endValue\":null"), "profile 0: endValue is not a number"},
	{"end before start, time",
	 PROFILE("\"type\":\"sampled\",\"unit\":\"seconds\",\"startValue\":2,\"endValue\":1.5,"
		 "\"samples\":[],\"weights\":[]"), "profile 0: endValue is before startValue"},
	{"end before start, counts",
	 PROFILE("\"type\":\"sampled\",\"unit\":\"none\",\"startValue\":2,\"endValue\":1.5,"
		 "\"samples\":[],\"weights\":[]"), "profile 0: endValue is before startValue"},
	{"start out of range",
	 PROFILE("\"type\":\"sampled\",\"unit\":\"seconds\",\"startValue\":1e300,"
		 "\"endValue\":1e301,\"samples\":[],\"weights\":[]"),
	 "profile 0: startValue is out of range"},
	{"sampled without samples", PROFILE(COMMON "\"type\":\"sampled\",\"unit\":\"none\","
					    "\"weights\":[]"),
	 "profile 0 is sampled but has no \"samples\""},
	{"sampled without weights", PROFILE(COMMON "\"type\":\"sampled\",\"unit\":\"none\","
					    "\"samples\":[]"),
	 "profile 0 is sampled but has no \"weights\""},
	{"sampled with events", PROFILE(COMMON "\"type\":\"sampled\",\"unit\":\"none\","
					"\"samples\":[],\"weights\":[],\"events\":[]"),
	 "profile 0 is sampled but has \"events\""},
	{"samples not array", ONE(SAMPLED("none", "{}", "[]")),
	 "profile 0: \"samples\" is not an array"},
	{"samples a number", ONE(SAMPLED("none", "3", "[]")),
	 "profile 0: \"samples\" is not an array"},
	{"weights not array", ONE(SAMPLED("none", "[]", "\"1\"")),
	 "profile 0: \"weights\" is not an array"},
	{"sample not array", SAMPLES_NONE("[[0],1]", "[1,1]"),
	 "profile 0: sample 1 is not an array of frame indices"},
	{"sample an object", SAMPLES_NONE("[{}]", "[1]"),
	 "profile 0: sample 0 is not an array of frame indices"},
	{"index a string", SAMPLES_NONE("[[0,\"1\"]]", "[1]"),
	 "profile 0: sample 0: the frame index at position 1 is not an integer"},
	{"index fractional", SAMPLES_NONE("[[0],[1.0]]", "[1,1]"),
	 "profile 0: sample 1: the frame index at position 0 is not an integer"},
	{"index an array", SAMPLES_NONE("[[0,[1]]]", "[1]"),
	 "profile 0: sample 0: the frame index at position 1 is not an integer"},
	{"index negative", SAMPLES_NONE("[[0,-1]]", "[1]"),
	 "profile 0: sample 0: negative frame index -1"},
	{"index out of range", SAMPLES_NONE("[[0],[0,7]]", "[1,1]"),
	 "profile 0: sample 1 refers to frame 7, which does not exist (there are 2 frames)"},
	{"index past 32 bits", SAMPLES_NONE("[[4294967295]]", "[1]"),
	 "profile 0: sample 0 refers to frame 4294967295, which does not exist"},
	{"index past 64 bits", SAMPLES_NONE("[[99999999999999999999]]", "[1]"),
	 "invalid JSON at line 1 column"},
	{"more samples than weights", SAMPLES_NONE("[[0],[1]]", "[1]"),
	 "profile 0: 2 samples but 1 weights"},
	{"more weights than samples", SAMPLES_NONE("[[0]]", "[1,1]"),
	 "profile 0: 1 samples but 2 weights"},
	{"weight a string", SAMPLES_NONE("[[0]]", "[\"1\"]"),
	 "profile 0: weight 0 is not a number"},
	{"weight null", SAMPLES_NONE("[[0],[0]]", "[1,null]"),
	 "profile 0: weight 1 is not a number"},
	{"weight an array", SAMPLES_NONE("[[0]]", "[[1]]"), "profile 0: weight 0 is not a number"},
	{"weight negative", SAMPLES_NONE("[[0]]", "[-1]"), "profile 0: weight 0 is negative"},
	{"weight negative real", ONE(SAMPLED("seconds", "[[0],[1]]", "[1,-0.5]")),
	 "profile 0: weight 1 is negative"},
	{"weight a tiny negative", ONE(SAMPLED("seconds", "[[0]]", "[-1e-15]")),
	 "profile 0: weight 0 is negative"},
	{"weight a fraction of a count", SAMPLES_NONE("[[0]]", "[0.5]"),
	 "profile 0: weight 0 is not a whole number, which unit none (a count) needs"},
	{"weight huge real", ONE(SAMPLED("seconds", "[[0]]", "[1e300]")),
	 "profile 0: weight 0 is out of range"},
	{"weight huge integer", ONE(SAMPLED("seconds", "[[0]]", "[9223372036854775807]")),
	 "profile 0: weight 0 is out of range"},
	{"weight count past 63 bits", SAMPLES_NONE("[[0]]", "[1e19]"),
	 "profile 0: weight 0 is out of range"},
	{"weight past doubles", SAMPLES_NONE("[[0]]", "[1e999]"), "real number out of range"},
	{"weight past 64 bits", SAMPLES_NONE("[[0]]", "[-99999999999999999999]"),
	 "integer out of range"},
	{"weights overflow a stack",
	 ONE(SAMPLED("nanoseconds", "[[0],[0]]", "[9000000000000000000,9000000000000000000]")),
	 "the values of one stack overflow 64 bits"},
	{"counts and time mixed",
	 DOC(AB, SAMPLED("none", "[[0]]", "[1]") "," SAMPLED("seconds", "[[0]]", "[1]")),
	 "profile 1 is in seconds and profile 0 in none: the profiles of one file must all "
	 "count samples (none) or all measure time"},
	{"the second profile named",
	 DOC(AB, SAMPLED("none", "[[0]]", "[1]") "," SAMPLED("none", "[[0]]", "[-2]")),
	 "profile 1: weight 0 is negative"},
	{"evented without events", PROFILE(COMMON "\"type\":\"evented\",\"unit\":\"none\""),
	 "profile 0 is evented but has no \"events\""},
	{"evented with samples",
	 PROFILE(COMMON "\"type\":\"evented\",\"unit\":\"none\",\"events\":[],\"samples\":[]"),
	 "profile 0 is evented but has \"samples\""},
	{"events not array", PROFILE(COMMON "\"type\":\"evented\",\"unit\":\"none\","
				     "\"events\":{}"),
	 "profile 0: \"events\" is not an array"},
	{"event not object", EVENTS("none", O(0, 0) ",[]"), "profile 0: event 1 is not an object"},
	{"event a number", EVENTS("none", "1"), "profile 0: event 0 is not an object"},
	{"event without type", EVENTS("none", "{\"frame\":0,\"at\":0}"),
	 "profile 0: event 0 has no type"},
	{"event of another type", EVENTS("none", "{\"type\":\"X\",\"frame\":0,\"at\":0}"),
	 "profile 0: event 0: type is not \"O\" or \"C\""},
	{"event type an object", EVENTS("none", "{\"type\":{},\"frame\":0,\"at\":0}"),
	 "profile 0: event 0: type is not \"O\" or \"C\""},
	{"event without frame", EVENTS("none", "{\"type\":\"O\",\"at\":0}"),
	 "profile 0: event 0 has no frame"},
	{"event frame a string", EVENTS("none", "{\"type\":\"O\",\"frame\":\"0\",\"at\":0}"),
	 "profile 0: event 0: frame is not an integer"},
	{"event frame negative", EVENTS("none", "{\"type\":\"O\",\"frame\":-3,\"at\":0}"),
	 "profile 0: event 0: negative frame index -3"},
	{"event frame out of range", EVENTS("none", O(0, 0) "," O(9, 1)),
	 "profile 0: event 1 refers to frame 9, which does not exist (there are 2 frames)"},
	{"event without at", EVENTS("none", "{\"type\":\"O\",\"frame\":0}"),
	 "profile 0: event 0 has no \"at\""},
	{"event at a string", EVENTS("none", "{\"type\":\"O\",\"frame\":0,\"at\":\"0\"}"),
	 "profile 0: event 0: \"at\" is not a number"},
	{"event at a fraction of a count", EVENTS("none", O(0, 0) "," C(0, 0.5)),
	 "profile 0: event 1: \"at\" is not a whole number"},
	{"event at out of range", EVENTS("seconds", O(0, 1e300) "," C(0, 1e301)),
	 "profile 0: event 0: \"at\" is out of range"},
	{"close of another frame", EVENTS("none", O(0, 0) "," O(1, 1) "," C(0, 2)),
	 "profile 0: event 2 closes frame 0, but the innermost open frame is 1 "
	 "(opened by event 1)"},
	{"close with nothing open", EVENTS("none", O(0, 0) "," C(0, 1) "," C(0, 2)),
	 "profile 0: event 2 closes frame 0, but no frame is open"},
	{"back in time", EVENTS("none", O(0, 5) "," O(1, 6) "," C(1, 4) "," C(0, 7)),
	 "profile 0: event 2 goes back in time, before event 1"},
	{"never closed", EVENTS("none", O(0, 0) "," O(1, 1) "," C(1, 2)),
	 "profile 0: frame 0, opened by event 0, is never closed"},
	{"durations overflow a stack",
	 EVENTS("nanoseconds", O(0, -9000000000000000000) "," O(1, 0) "," C(1, 1) ","
		C(0, 9000000000000000000)),
	 "the values of one stack overflow 64 bits"},
	{"a gap past 64 bits",
	 EVENTS("nanoseconds", O(0, -9000000000000000000) "," C(0, 9000000000000000000)),
	 "profile 0: event 1 is more than 64 bits after event 0"},
	{"duplicate top key", "{" FRAMES(AB) ",\"profiles\":[],\"profiles\":[]}",
	 "duplicate object key \"profiles\""},
	{"duplicate shared", "{\"shared\":{\"frames\":[]},\"shared\":{}}",
	 "duplicate object key \"shared\""},
	{"duplicate frames", "{\"shared\":{\"frames\":[],\"frames\":[]}}",
	 "duplicate object key \"frames\""},
	{"duplicate frame name", DOC("{\"name\":\"a\",\"name\":\"b\"}", ""),
	 "duplicate object key \"name\""},
	{"duplicate weights",
	 PROFILE(COMMON "\"type\":\"sampled\",\"unit\":\"none\",\"samples\":[[0]],"
		 "\"weights\":[1],\"weights\":[2]"), "duplicate object key \"weights\""},
	{"duplicate event at", EVENTS("none", "{\"type\":\"O\",\"frame\":0,\"at\":0,\"at\":1}"),
	 "duplicate object key \"at\""},
};

static void test_malformed_input_is_refused_with_a_reason(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++)
		check_bad(bad_cases[i].what, bad_cases[i].json, strlen(bad_cases[i].json), NULL,
			  PR_EDATA, bad_cases[i].reason);
}

static void test_json_errors_do_not_quote_the_input(void **state)
{
	static const char json[] = "{\"shared\":{\"frames\":[{\"name\":\"card 4111111111111111\""
				   " x}]}}";
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;

	(void)state;
	check_bad("secret", json, strlen(json), NULL, PR_EDATA, "invalid JSON at line 1");
	assert_int_equal(parse(&p, json, NULL, &err), PR_EDATA);
	assert_null(strstr(err.msg, "4111"));
}

/* Every prefix of a real file, short of its closing brace, is refused. */
static void every_prefix_fails(const char *rel)
{
	buf json = BUF_INIT;
	size_t end;

	testdata_read(&json, rel);
	end = json.len;
	while (end > 0 && json.ptr[end - 1] != '}')
		end--;
	assert_true(end > 100);
	check_bad("no bytes", json.ptr, 0, NULL, PR_EDATA, "the input is empty");
	for (size_t cut = 1; cut < end; cut++) {
		char what[64];

		snprintf(what, sizeof(what), "%s cut at %zu", rel, cut);
		check_bad(what, json.ptr, cut, NULL, PR_EDATA, "invalid JSON");
	}
	buf_release(&json);
}

static void test_every_truncation_of_a_small_file_is_refused(void **state)
{
	(void)state;
	every_prefix_fails("speedscope/pyspy-threads.speedscope.json");
	every_prefix_fails("speedscope/evented.speedscope.json");
}

/* `head` then n times `open`, n times `close`, then `tail`. */
static void nested(buf *b, const char *head, const char *open, const char *close, int n,
		   const char *tail)
{
	buf_reset(b);
	assert_int_equal(buf_puts(b, head), 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(buf_puts(b, open), 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(buf_puts(b, close), 0);
	assert_int_equal(buf_puts(b, tail), 0);
}

static void test_deep_nesting_is_refused_without_crashing(void **state)
{
	buf b = BUF_INIT;

	(void)state;
	/* 10,000 levels where a sample's frame indices go. */
	nested(&b, "{" FRAMES(AB) ",\"profiles\":[{\"samples\":", "[", "]", 10000, "}]}");
	check_bad("nested samples", b.ptr, b.len, NULL, PR_EDATA, "maximum parsing depth");
	/* In a value nothing reads, as objects. */
	nested(&b, "{\"meta\":", "{\"k\":", "}", 10000, "}");
	check_bad("nested objects", b.ptr, b.len, NULL, PR_EDATA,
		  "maximum parsing depth of 2048 exceeded");
	/* Unclosed, as a truncated attack would be. */
	check_bad("unclosed", b.ptr, 8 + 5 * 5000, NULL, PR_EDATA, "maximum parsing depth");
	/* 2,000 levels in a skipped value are fine. */
	nested(&b, "{\"meta\":", "[", "]", 2000,
	       "," FRAMES(AB) ",\"profiles\":[" SAMPLED("none", "[[0]]", "[1]") "]}");
	profile_free(parse_ok(b.ptr));
	buf_release(&b);
}

static void test_stacks_deeper_than_the_limit_are_refused(void **state)
{
	profile_limits lim;
	buf b = BUF_INIT;
	profile *p = NULL;
	pr_error err = PR_ERROR_INIT;
	static const char sampled[] = SAMPLES_NONE("[[0,1,0,1,0]]", "[1]");
	static const char evented[] =
		EVENTS("none", O(0, 0) "," O(1, 1) "," O(0, 2) "," O(1, 3) "," C(1, 4) ","
		       C(0, 5) "," C(1, 6) "," C(0, 7));

	(void)state;
	profile_limits_default(&lim);
	lim.max_depth = 3;
	check_bad("deep sample", sampled, strlen(sampled), &lim, PR_ELIMIT,
		  "profile 0: sample 0: a stack of 5 frames exceeds the depth limit of 3");
	check_bad("deep events", evented, strlen(evented), &lim, PR_ELIMIT,
		  "profile 0: event 3: a stack of 4 frames exceeds the depth limit of 3");
	lim.max_depth = 5;
	assert_int_equal(speedscope_parse(&p, (const uint8_t *)sampled, strlen(sampled), NAME,
					  &lim, &err), 0);
	assert_int_equal(p->stack_len[0], 5);
	profile_free(p);

	/* 200,000 frames in one sample, under the default limit. */
	assert_int_equal(buf_puts(&b, "{" FRAMES(AB) ",\"profiles\":[{\"samples\":[[0"), 0);
	for (int i = 1; i < 200000; i++)
		assert_int_equal(buf_puts(&b, ",1"), 0);
	assert_int_equal(buf_puts(&b, "]]}]}"), 0);
	check_bad("hostile stack", b.ptr, b.len, NULL, PR_ELIMIT,
		  "a stack of 200000 frames exceeds the depth limit of 4096");
	buf_release(&b);
}

static void test_overlong_names_are_refused(void **state)
{
	profile_limits lim;
	buf b = BUF_INIT;
	static const char doc[] = DOC(F("aaaaaaaaaaaaaaaa") ",{\"name\":\"b\",\"file\":"
				      "\"fffffffffffffffff\"}",
				      SAMPLED("none", "[[0]]", "[1]"));

	(void)state;
	profile_limits_default(&lim);
	lim.max_string_len = 16;
	check_bad("long file", doc, strlen(doc), &lim, PR_ELIMIT,
		  "a name of 17 bytes exceeds the limit of 16 bytes");
	/* With an escape yajl decodes it first; the limit still holds. */
	assert_int_equal(buf_puts(&b, "{\"shared\":{\"frames\":[{\"name\":\"\\n"), 0);
	for (int i = 0; i < 70000; i++)
		assert_int_equal(buf_putc(&b, 'n'), 0);
	assert_int_equal(buf_puts(&b, "\"}"), 0);
	check_bad("long name", b.ptr, b.len, NULL, PR_ELIMIT,
		  "a name of 70001 bytes exceeds the limit of 65536 bytes");
	buf_release(&b);
}

static void test_samples_and_events_over_the_limit_are_refused(void **state)
{
	profile_limits lim;
	buf b = BUF_INIT;

	(void)state;
	profile_limits_default(&lim);
	lim.max_samples = 1000;
	/* Cut short after the array: only a parse that stopped there sees no JSON error. */
	assert_int_equal(buf_puts(&b, "{" FRAMES(AB) ",\"profiles\":[{\"samples\":[[0]"), 0);
	for (int i = 1; i < 250000; i++)
		assert_int_equal(buf_puts(&b, ",[0,1]"), 0);
	assert_int_equal(buf_puts(&b, "],\"weights\":["), 0);
	check_bad("many samples", b.ptr, b.len, &lim, PR_ELIMIT,
		  "250000 samples exceed the limit of 1000");

	buf_reset(&b);
	assert_int_equal(buf_puts(&b, "{" FRAMES(AB) ",\"profiles\":[{\"events\":[" O(0, 0)), 0);
	for (int i = 1; i < 5000; i++)
		assert_int_equal(buf_puts(&b, "," O(1, 1) "," C(1, 1)), 0);
	assert_int_equal(buf_puts(&b, "],\"type\":"), 0);
	check_bad("many events", b.ptr, b.len, &lim, PR_ELIMIT,
		  "9999 events exceed the limit of 1000");

	/* Over the whole file: two profiles of 600 samples each. */
	buf_reset(&b);
	assert_int_equal(buf_puts(&b, "{" FRAMES(AB) ",\"profiles\":[{\"type\":\"sampled\","
				  "\"unit\":\"none\",\"startValue\":0,\"endValue\":1,"
				  "\"weights\":[1"), 0);
	for (int i = 1; i < 600; i++)
		assert_int_equal(buf_puts(&b, ",1"), 0);
	assert_int_equal(buf_puts(&b, "],\"samples\":[[0]"), 0);
	for (int i = 1; i < 600; i++)
		assert_int_equal(buf_puts(&b, ",[0]"), 0);
	assert_int_equal(buf_puts(&b, "]},{\"samples\":[[0]"), 0);
	for (int i = 1; i < 600; i++)
		assert_int_equal(buf_puts(&b, ",[0]"), 0);
	assert_int_equal(buf_puts(&b, "]"), 0);
	check_bad("samples of two profiles", b.ptr, b.len, &lim, PR_ELIMIT,
		  "1200 samples exceed the limit of 1000");
	buf_release(&b);
}

static void test_frames_past_the_memory_budget_stop_the_parse(void **state)
{
	profile_limits lim;
	buf b = BUF_INIT;
	int n = 0;

	(void)state;
	profile_limits_default(&lim);
	lim.max_decompressed_bytes = 1 << 20; /* the budget's floor, 64 MiB */
	assert_int_equal(buf_puts(&b, "{\"shared\":{\"frames\":[" F("root")), 0);
	while (b.len < (48u << 20))
		assert_int_equal(buf_printf(&b, ",{\"name\":\"function-number-%d-with-a-long"
					    "-enough-name\"}", n++), 0);
	/* Cut short: only a parse that stopped at the budget sees no JSON error. */
	check_bad("many frames", b.ptr, b.len, &lim, PR_ELIMIT,
		  "the profile needs more than 64 MiB of memory");
	buf_release(&b);
}

/* The child table's hash before it had a seed, to pick pairs that collide in it. */
static uint64_t unseeded_kid_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

typedef struct slot_func {
	uint32_t slot, func;
} slot_func;

static int by_slot(const void *a, const void *b)
{
	const slot_func *x = a, *y = b;

	return x->slot != y->slot ? (x->slot < y->slot ? -1 : 1)
				  : (x->func < y->func ? -1 : x->func > y->func);
}

enum { NFRAMES = 300000, NPICKED = 30000, NSAMPLES = 1000000 };

/*
 * CPU seconds to parse NFRAMES frames and NSAMPLES one-frame samples that
 * go round the functions picked[0..NPICKED), so that each sample looks
 * its stack up in the tree's child table.
 */
static double parse_cpu(const uint32_t *picked)
{
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	buf b = BUF_INIT;
	clock_t t0;
	double cpu;

	assert_int_equal(buf_puts(&b, "{" SCHEMA "\"shared\":{\"frames\":[" F("f0")), 0);
	for (int f = 1; f < NFRAMES; f++)
		assert_int_equal(buf_printf(&b, ",{\"name\":\"f%d\"}", f), 0);
	assert_int_equal(buf_printf(&b, "]},\"profiles\":[{\"type\":\"sampled\",\"name\":\"t\","
				    "\"unit\":\"none\",\"startValue\":0,\"endValue\":%d,"
				    "\"samples\":[", NSAMPLES), 0);
	for (int i = 0; i < NSAMPLES; i++)
		assert_int_equal(buf_printf(&b, "%s[%u]", i ? "," : "", picked[i % NPICKED]), 0);
	assert_int_equal(buf_puts(&b, "],\"weights\":[1"), 0);
	for (int i = 1; i < NSAMPLES; i++)
		assert_int_equal(buf_puts(&b, ",1"), 0);
	assert_int_equal(buf_puts(&b, "]}]}"), 0);
	t0 = clock();
	if (speedscope_parse(&p, (const uint8_t *)b.ptr, b.len, NAME, NULL, &err) < 0)
		fail_msg("parse failed: %s", err.msg);
	cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
	assert_int_equal(p->nsamples, NPICKED);
	profile_free(p);
	buf_release(&b);
	return cpu;
}

/*
 * Which (parent, function) pairs a file's stacks make is the file's
 * choice. Unseeded, 30,000 one-frame stacks whose functions were picked
 * among 300,000 for their slots' low bits took one run of the tree's child
 * table, and each of a million samples going from one to the next scanned
 * it: 7 s of CPU, forty times as long as for functions spread over the
 * table. Seeded, both take the same time.
 */
static void test_stacks_made_to_collide_do_not_slow_the_parse(void **state)
{
	const uint32_t cap = 65536; /* the table's size for NPICKED + 1 nodes */
	slot_func *sf = malloc(NFRAMES * sizeof(*sf));
	uint32_t *picked = malloc(NPICKED * sizeof(*picked));
	double colliding, spread;

	(void)state;
	assert_non_null(sf);
	assert_non_null(picked);
	for (uint32_t f = 0; f < NFRAMES; f++)
		sf[f] = (slot_func){(uint32_t)(unseeded_kid_hash(f) & (cap - 1)), f};
	qsort(sf, NFRAMES, sizeof(*sf), by_slot);
	for (uint32_t i = 0; i < NPICKED; i++)
		picked[i] = sf[i].func;
	colliding = parse_cpu(picked);
	for (uint32_t i = 0; i < NPICKED; i++)
		picked[i] = i * (NFRAMES / NPICKED);
	spread = parse_cpu(picked);
	if (colliding > 3 * spread + 0.5)
		fail_msg("colliding stacks took %.2f s of CPU, spread ones %.2f s", colliding,
			 spread);
	free(picked);
	free(sf);
}

static void test_files_are_detected_and_held_to_the_input_limits(void **state)
{
	static const char *const files[] = {
		"speedscope/pyspy-threads.speedscope.json",
		"speedscope/evented.speedscope.json",
		"speedscope/profreg-export.speedscope.json",
	};
	profile_limits lim;
	pr_error err = PR_ERROR_INIT;
	buf json = BUF_INIT;
	profile *p = (profile *)1;

	(void)state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		p = load(files[i], PROFILE_FMT_AUTO);
		assert_int_equal(p->format, PROFILE_FMT_SPEEDSCOPE);
		profile_free(p);
	}
	p = (profile *)1;
	testdata_read(&json, files[0]);
	profile_limits_default(&lim);
	lim.max_input_bytes = 100;
	assert_int_equal(format_parse(&p, (const uint8_t *)json.ptr, json.len, PROFILE_FMT_AUTO,
				      NAME, &lim, &err), PR_ELIMIT);
	assert_null(p);
	assert_non_null(strstr(err.msg, "cannot parse '" NAME "': "));
	assert_non_null(strstr(err.msg, "exceed the input limit of 100 bytes"));
	buf_release(&json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pyspy_threads_merge_into_exact_cpu_and_samples),
		cmocka_unit_test(test_frames_differing_only_in_line_are_one_function),
		cmocka_unit_test(test_unit_none_counts_samples_and_recursion_counts_once),
		cmocka_unit_test(test_time_units_become_nanoseconds_and_merge),
		cmocka_unit_test(test_evented_profile_gives_the_durations),
		cmocka_unit_test(test_evented_replay_skips_idle_time_and_counts_recursion_once),
		cmocka_unit_test(test_evented_counts_in_unit_none),
		cmocka_unit_test(test_sampled_and_evented_profiles_of_one_file_merge),
		cmocka_unit_test(test_a_file_profreg_exported_reads_back_as_its_capture),
		cmocka_unit_test(test_profreg_exports_read_back_to_the_same_functions_and_values),
		cmocka_unit_test(test_keys_in_any_order_and_unknown_values_are_skipped),
		cmocka_unit_test(test_zero_weights_and_byte_order_mark_are_accepted),
		cmocka_unit_test(test_sniff_accepts_speedscope_files_only),
		cmocka_unit_test(test_malformed_input_is_refused_with_a_reason),
		cmocka_unit_test(test_json_errors_do_not_quote_the_input),
		cmocka_unit_test(test_every_truncation_of_a_small_file_is_refused),
		cmocka_unit_test(test_deep_nesting_is_refused_without_crashing),
		cmocka_unit_test(test_stacks_deeper_than_the_limit_are_refused),
		cmocka_unit_test(test_overlong_names_are_refused),
		cmocka_unit_test(test_samples_and_events_over_the_limit_are_refused),
		cmocka_unit_test(test_frames_past_the_memory_budget_stop_the_parse),
		cmocka_unit_test(test_stacks_made_to_collide_do_not_slow_the_parse),
		cmocka_unit_test(test_files_are_detected_and_held_to_the_input_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
