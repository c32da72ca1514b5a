/*
 * test_v8heap.c: the V8 sampling heap profile parser: a real node profile
 * checked against sizes computed independently, hand-built profiles with
 * exact expected bytes, and malformed, truncated, hostile and oversized
 * input.
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

#include "common/buf.h"
#include "pipeline/v8heap.h"
#include "tests/support/testdata.h"

#define NAME "t.heapprofile"

/* A call frame as V8 writes it; the line moves, the function stays. */
#define FRAME_AT(name, url, line) \
	"\"callFrame\":{\"functionName\":\"" name "\",\"scriptId\":\"7\"," \
	"\"url\":\"" url "\",\"lineNumber\":" #line ",\"columnNumber\":4}"
#define FRAME(name, url) FRAME_AT(name, url, 1)
/* A node: its call frame, selfSize, id, then its children's text. */
#define NODE(id, name, url, self, kids) \
	"{" FRAME(name, url) ",\"selfSize\":" #self ",\"id\":" #id ",\"children\":[" kids "]}"
#define HEAD(kids) "{\"head\":" NODE(1, "(root)", "", 0, kids)
#define NO_SAMPLES ",\"samples\":[]}"

static int parse(profile **out, const char *json, const profile_limits *lim,
		 pr_error *err)
{
	return v8heap_parse(out, (const uint8_t *)json, strlen(json), NAME, lim, err);
}

static profile *parse_ok(const char *json)
{
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	int rc = parse(&p, json, NULL, &err);

	if (rc != 0)
		fail_msg("parse failed: %s", err.msg);
	assert_non_null(p);
	return p;
}

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

static void summarize(profile_summary *s, const profile *p)
{
	pr_error err = PR_ERROR_INIT;

	assert_int_equal(p->nvalue_types, 1);
	assert_int_equal(profile_summarize(s, p, 0, &err), 0);
}

static bool has_func(const profile *p, const char *name)
{
	for (uint32_t i = 0; i < p->nfuncs; i++)
		if (strcmp(p->funcs[i].name, name) == 0)
			return true;
	return false;
}

#define RETAIN "file:///work/main/tests/data/v8/retain.mjs"
#define RETAIN_LIB "file:///work/main/tests/data/v8/retain-lib.mjs"

/*
 * The golden file was computed from the same profile by
 * tests/data/v8/heapsizes.js, a separate implementation of the rule the
 * parser documents; every function's self and total bytes must agree
 * exactly, as both are sums of the file's integers.
 */
static void test_real_node_profile_matches_independent_sizes(void **state)
{
	buf json = BUF_INIT, golden = BUF_INIT;
	profile_summary s;
	profile *p;
	char *line, *save = NULL;
	size_t lines = 0;

	(void)state;
	testdata_read(&json, "v8/node-retain.heapprofile");
	testdata_read(&golden, "v8/node-retain.selfsizes.txt");
	p = parse_ok(json.ptr);
	assert_int_equal(p->format, PROFILE_FMT_V8HEAP);
	assert_string_equal(p->value_types[p->primary].type, "inuse_space");
	assert_string_equal(p->value_types[p->primary].unit, "bytes");
	assert_string_equal(profile_guess_type(p), "heap");
	assert_int_equal(p->duration_ns, 0);
	assert_int_equal(p->time_ns, 0);
	assert_false(has_func(p, "(root)"));
	summarize(&s, p);

	line = strtok_r(golden.ptr, "\n", &save);
	assert_non_null(line);
	assert_int_equal(strncmp(line, "total\t", 6), 0);
	assert_int_equal(s.total, strtoll(line + 6, NULL, 10));
	/*
	 * The sample count is the sampled allocations behind the bytes (481
	 * records of "samples"), not the 26 nodes that hold bytes.
	 */
	line = strtok_r(NULL, "\n", &save);
	assert_non_null(line);
	assert_int_equal(strncmp(line, "samples\t", 8), 0);
	assert_int_equal(s.sample_count, strtoll(line + 8, NULL, 10));
	assert_true(s.sample_count > (int64_t)p->nsamples);
	for (line = strtok_r(NULL, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *t1 = strchr(line, '\t'), *t2, *t3;
		const profile_summary_row *r;

		assert_non_null(t1);
		assert_non_null(t2 = strchr(t1 + 1, '\t'));
		assert_non_null(t3 = strchr(t2 + 1, '\t'));
		*t3 = '\0';
		r = row(p, &s, t2 + 1, t3 + 1);
		if (r->self != strtoll(line, NULL, 10) || r->total != strtoll(t1 + 1, NULL, 10))
			fail_msg("%s %s: profreg %lld / %lld bytes, golden %s", t2 + 1, t3 + 1,
				 (long long)r->self, (long long)r->total, line);
		lines++;
	}
	/* Every function with bytes is in the golden file. */
	assert_int_equal(lines, s.nrows);

	/* retain.mjs keeps most bytes in build, then make, then the lib's build. */
	assert_true(row(p, &s, "build", RETAIN)->self > row(p, &s, "make", RETAIN)->self);
	assert_true(row(p, &s, "make", RETAIN)->self > row(p, &s, "build", RETAIN_LIB)->self);
	assert_true(row(p, &s, "build", RETAIN)->self > s.total / 3);
	/* main reaches every byte retain.mjs kept, once. */
	assert_true(row(p, &s, "main", RETAIN)->total >=
		    row(p, &s, "build", RETAIN)->total + row(p, &s, "make", RETAIN)->total +
		    row(p, &s, "build", RETAIN_LIB)->total);
	profile_summary_release(&s);
	profile_free(p);
	buf_release(&json);
	buf_release(&golden);
}

/*
 * root -> main -> work -> leaf, root -> main -> leaf, root -> (V8 API),
 * and an empty branch, with bytes chosen so that every sum is distinct.
 */
static const char small[] =
	HEAD(NODE(2, "main", "file:///app.js", 100,
		  NODE(3, "work", "file:///app.js", 300,
		       NODE(4, "leaf", "file:///lib.js", 1000, "")) ","
		  NODE(5, "leaf", "file:///lib.js", 24, "")) ","
	     NODE(6, "(V8 API)", "", 50, "") ","
	     NODE(7, "idle", "file:///app.js", 0, ""))
	",\"samples\":[{\"size\":1000,\"nodeId\":4,\"ordinal\":1},"
	"{\"size\":24,\"nodeId\":5,\"ordinal\":2}]}";

static void test_small_profile_gives_exact_self_and_total(void **state)
{
	profile *p = parse_ok(small);
	profile_summary s;

	(void)state;
	assert_int_equal(p->format, PROFILE_FMT_V8HEAP);
	assert_int_equal(p->nsamples, 5);
	summarize(&s, p);
	assert_int_equal(s.total, 1474);
	assert_int_equal(row(p, &s, "main", "file:///app.js")->self, 100);
	assert_int_equal(row(p, &s, "main", NULL)->total, 1424);
	assert_int_equal(row(p, &s, "work", NULL)->self, 300);
	assert_int_equal(row(p, &s, "work", NULL)->total, 1300);
	assert_int_equal(row(p, &s, "leaf", "file:///lib.js")->self, 1024);
	assert_int_equal(row(p, &s, "leaf", NULL)->total, 1024);
	/* VM-state nodes stay frames. */
	assert_int_equal(row(p, &s, "(V8 API)", "")->self, 50);
	assert_null(find_row(p, &s, "idle", NULL));
	assert_int_equal(s.nrows, 4);
	/* Stacks start below the root: main is the outermost frame. */
	for (size_t i = 0; i < p->nsamples; i++)
		if (p->stack_len[i] > 1)
			assert_string_equal(p->funcs[p->frames[p->stack_off[i]]].name, "main");
	profile_summary_release(&s);
	profile_free(p);
}

static void test_root_is_not_a_frame_and_its_bytes_count_only_in_the_total(void **state)
{
	profile_summary s;
	profile *p = parse_ok("{\"head\":" NODE(1, "(root)", "", 40,
					       NODE(2, "a", "x.js", 10, "")) NO_SAMPLES);

	(void)state;
	assert_false(has_func(p, "(root)"));
	summarize(&s, p);
	assert_int_equal(s.total, 50);
	assert_int_equal(s.nrows, 1);
	assert_int_equal(row(p, &s, "a", "x.js")->self, 10);
	assert_int_equal(row(p, &s, "a", "x.js")->total, 10);
	profile_summary_release(&s);
	profile_free(p);

	/* Whatever the head is called, it is the root. */
	p = parse_ok("{\"head\":" NODE(9, "main", "x.js", 0, NODE(3, "a", "x.js", 5, "")) "}");
	assert_false(has_func(p, "main"));
	assert_int_equal(p->nsamples, 1);
	assert_int_equal(p->stack_len[0], 1);
	profile_free(p);

	/* Only the root: an empty stack, no function. */
	p = parse_ok("{\"head\":" NODE(1, "(root)", "", 7, "") "}");
	summarize(&s, p);
	assert_int_equal(s.total, 7);
	assert_int_equal(s.nrows, 0);
	assert_int_equal(p->nfuncs, 0);
	profile_summary_release(&s);
	profile_free(p);
}

static void test_recursion_counts_once_toward_total(void **state)
{
	profile_summary s;
	profile *p = parse_ok(HEAD(NODE(2, "main", "m.js", 10,
					NODE(3, "fib", "m.js", 1,
					     NODE(4, "fib", "m.js", 2,
						  NODE(5, "fib", "m.js", 4, ""))))) NO_SAMPLES);

	(void)state;
	summarize(&s, p);
	assert_int_equal(s.total, 17);
	assert_int_equal(row(p, &s, "fib", NULL)->self, 7);
	assert_int_equal(row(p, &s, "fib", NULL)->total, 7);
	assert_int_equal(row(p, &s, "main", NULL)->self, 10);
	assert_int_equal(row(p, &s, "main", NULL)->total, 17);
	profile_summary_release(&s);
	profile_free(p);
}

static void test_empty_function_name_is_anonymous_with_its_url(void **state)
{
	profile_summary s;
	profile *p = parse_ok(HEAD(NODE(2, "", "file:///a.js", 1, "") ","
				   NODE(3, "", "file:///b.js", 2, "") ","
				   NODE(4, "", "", 4, "") ","
				   /* No call frame at all: as empty names. */
				   "{\"selfSize\":8,\"id\":5}") NO_SAMPLES);

	(void)state;
	assert_int_equal(p->nfuncs, 3);
	summarize(&s, p);
	assert_int_equal(row(p, &s, "(anonymous)", "file:///a.js")->self, 1);
	assert_int_equal(row(p, &s, "(anonymous)", "file:///b.js")->self, 2);
	assert_int_equal(row(p, &s, "(anonymous)", "")->self, 12);
	profile_summary_release(&s);
	profile_free(p);
}

static void test_urls_keep_functions_apart_and_lines_do_not(void **state)
{
	profile_summary s;
	profile *p = parse_ok(
		HEAD("{" FRAME_AT("build", "file:///a.mjs", 3) ",\"selfSize\":100,\"id\":2,"
		     "\"children\":[]},"
		     "{" FRAME_AT("build", "file:///b.mjs", 3) ",\"selfSize\":200,\"id\":3,"
		     "\"children\":[]},"
		     "{" FRAME_AT("make", "file:///a.mjs", 24) ",\"selfSize\":1000,\"id\":4,"
		     "\"children\":[]},"
		     "{" FRAME_AT("make", "file:///a.mjs", 30) ",\"selfSize\":3000,\"id\":5,"
		     "\"children\":[]}") NO_SAMPLES);

	(void)state;
	assert_int_equal(p->nfuncs, 3);
	summarize(&s, p);
	assert_int_equal(row(p, &s, "build", "file:///a.mjs")->self, 100);
	assert_int_equal(row(p, &s, "build", "file:///b.mjs")->self, 200);
	assert_int_equal(row(p, &s, "make", "file:///a.mjs")->self, 4000);
	profile_summary_release(&s);
	profile_free(p);
}

/* Keys in any order, and the children before the node's own fields. */
static void test_key_order_does_not_matter(void **state)
{
	profile_summary s;
	profile *p = parse_ok(
		"{\"samples\":[],\"head\":{\"children\":[{\"children\":[{\"id\":3,"
		"\"selfSize\":5," FRAME("b", "x.js") "}],\"id\":2,\"selfSize\":1,"
		FRAME("a", "x.js") "}],\"id\":1,\"selfSize\":0}}");

	(void)state;
	summarize(&s, p);
	assert_int_equal(row(p, &s, "a", "x.js")->self, 1);
	assert_int_equal(row(p, &s, "a", "x.js")->total, 6);
	assert_int_equal(row(p, &s, "b", "x.js")->self, 5);
	profile_summary_release(&s);
	profile_free(p);
}

static void check_bad(const char *what, const char *json, size_t len,
		      const profile_limits *lim, int code, const char *reason);

/*
 * V8 lists samples after building the tree, and real files name nodes
 * the tree lacks (tests/data/v8/node-retain.heapprofile does): the array
 * only counts the records that name a node with bytes, whatever else it
 * holds; with none, each node with bytes is one sample.
 */
static void test_samples_array_only_counts_records_of_nodes_with_bytes(void **state)
{
	static const struct {
		const char *samples;
		int64_t count;
	} cases[] = {
		{"[{\"size\":4096,\"nodeId\":99,\"ordinal\":1}]", 1},
		{"[{\"size\":-1,\"nodeId\":\"x\"},7,null]", 1},
		{"{\"not\":\"an array\"}", 1},
		{"[{\"nodeId\":2},{\"ordinal\":3,\"nodeId\":2,\"size\":9},{\"nodeId\":1},"
		 "{\"nodeId\":99},{\"nodeId\":{\"id\":2}},{\"nodeId\":[2]}]", 2},
	};
	profile_limits lim;
	buf b = BUF_INIT;

	(void)state;
	profile_limits_default(&lim);
	lim.max_samples = 6;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (int first = 0; first < 2; first++) {
			pr_error err = PR_ERROR_INIT;
			profile_summary s;
			profile *p = NULL;

			buf_reset(&b);
			/* The array comes before or after the tree. */
			if (first)
				assert_int_equal(buf_printf(&b, "{\"samples\":%s,\"head\":%s}",
							    cases[i].samples,
							    NODE(1, "(root)", "", 0,
								 NODE(2, "a", "x.js", 3, ""))),
						 0);
			else
				assert_int_equal(buf_printf(&b, "%s,\"samples\":%s}",
							    HEAD(NODE(2, "a", "x.js", 3, "")),
							    cases[i].samples),
						 0);
			assert_int_equal(v8heap_parse(&p, (const uint8_t *)b.ptr, b.len, NAME,
						      &lim, &err), 0);
			summarize(&s, p);
			assert_int_equal(s.total, 3);
			assert_int_equal(s.sample_count, cases[i].count);
			profile_summary_release(&s);
			profile_free(p);
		}
	}
	/* Records past the sample limit stop the parse, as nodes do. */
	lim.max_samples = 3;
	buf_reset(&b);
	assert_int_equal(buf_printf(&b, "%s,\"samples\":%s}", HEAD(NODE(2, "a", "x.js", 3, "")),
				    cases[3].samples), 0);
	check_bad("many samples", b.ptr, b.len, &lim, PR_ELIMIT,
		  "more than 3 samples (the sample limit) in \"samples\"");
	buf_release(&b);
}

static void test_byte_order_mark_and_nul_in_names_are_accepted(void **state)
{
	profile *p = parse_ok("\xef\xbb\xbf" HEAD(NODE(2, "a\\u0000b", "x.js", 1, "")) "}");

	(void)state;
	assert_int_equal(p->nfuncs, 1);
	assert_string_equal(p->funcs[0].name, "a\xef\xbf\xbd" "b");
	profile_free(p);
}

static void test_format_is_named_v8heap(void **state)
{
	profile_format f = PROFILE_FMT_AUTO;

	(void)state;
	assert_string_equal(profile_format_name(PROFILE_FMT_V8HEAP), "v8heap");
	assert_int_equal(profile_format_from_name(&f, "v8heap"), 0);
	assert_int_equal(f, PROFILE_FMT_V8HEAP);
	f = PROFILE_FMT_AUTO;
	assert_int_equal(profile_format_from_name(&f, "heapprofile"), 0);
	assert_int_equal(f, PROFILE_FMT_V8HEAP);
}

static void test_sniff_accepts_heap_profiles_only(void **state)
{
	static const char *yes[] = {
		"{\"head\":{\"callFrame\":{},\"selfSize\":0,\"id\":1,\"children\":[]}}",
		"  \n{ \"head\" : {\"selfSize\":0}}",
		"\xef\xbb\xbf{\"head\":{\"selfSize\":0}}",
		"{\"samples\":[],\"head\":{\"selfSize\":0}}",
	};
	static const char *no[] = {
		"", "{", "{\"head\"", "[{\"head\":{\"selfSize\":0}}]",
		/* A cpuprofile, even one with functions of these names. */
		("{\"nodes\":[{\"id\":1,\"callFrame\":{\"functionName\":\"head\"}}],"
		 "\"selfSize\":1}"),
		/* The legacy cpuprofile tree. */
		"{\"head\":{\"functionName\":\"(root)\",\"hitCount\":0,\"children\":[]}}",
		"{\"meta\":1,\"head\":{\"selfSize\":0}}",
		"main;foo 1\n",
	};
	buf late = BUF_INIT, real = BUF_INIT;

	(void)state;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		assert_true(v8heap_sniff((const uint8_t *)yes[i], strlen(yes[i])));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (v8heap_sniff((const uint8_t *)no[i], strlen(no[i])))
			fail_msg("sniffed as a heap profile: %s", no[i]);
	testdata_read(&real, "v8/node-retain.heapprofile");
	assert_true(v8heap_sniff((const uint8_t *)real.ptr, real.len));
	/* "selfSize" is looked for in the first 64 KiB only. */
	assert_int_equal(buf_puts(&late, "{\"head\":{\"x\":\""), 0);
	for (int i = 0; i < 70000; i++)
		assert_int_equal(buf_putc(&late, ' '), 0);
	assert_int_equal(buf_puts(&late, "\",\"selfSize\":0}}"), 0);
	assert_false(v8heap_sniff((const uint8_t *)late.ptr, late.len));
	buf_release(&late);
	buf_release(&real);
}

typedef struct bad_case {
	const char *what;
	const char *json;
	int code;
	const char *reason;
} bad_case;

#define CHILD_2 NODE(2, "a", "x.js", 1, "")
/* The root with one child whose text is `child`. */
#define ONE(child) HEAD(child) "}"

static const bad_case bad_cases[] = {
	{"empty", "", PR_EDATA, "the input is empty"},
	{"only a byte order mark", "\xef\xbb\xbf", PR_EDATA, "the input is empty"},
	{"only spaces", "  \n", PR_EDATA, "invalid JSON at line 2"},
	{"not json", "hello world", PR_EDATA, "invalid JSON at line 1 column"},
	{"NaN", "{\"head\":{\"id\":1,\"selfSize\":NaN}}", PR_EDATA, "invalid JSON"},
	{"truncated", "{\"head\":{\"id\":1,", PR_EDATA, "the input ends too early"},
	{"invalid utf-8", "{\"head\":\"\xff\"}", PR_EDATA, "invalid JSON"},
	{"array", "[1,2]", PR_EDATA, "the top level is an array"},
	{"scalar", "12", PR_EDATA, "the top level is not a heap profile object"},
	{"missing head", "{\"samples\":[]}", PR_EDATA, "no \"head\" member: not a V8 heap"},
	{"a cpuprofile", "{\"nodes\":[{\"id\":1}],\"samples\":[1]}", PR_EDATA,
	 "a V8 .cpuprofile, not a heap profile"},
	{"head not object", "{\"head\":[]}", PR_EDATA, "\"head\" is not an object"},
	{"head scalar", "{\"head\":null}", PR_EDATA, "\"head\" is not an object"},
	{"duplicate head", "{\"head\":{\"id\":1,\"selfSize\":0},\"head\":{}}", PR_EDATA,
	 "duplicate object key \"head\""},
	{"callFrame not object", ONE("{\"id\":2,\"selfSize\":1,\"callFrame\":3}"), PR_EDATA,
	 "node 2: callFrame is not an object"},
	{"callFrame array", ONE("{\"id\":2,\"selfSize\":1,\"callFrame\":[]}"), PR_EDATA,
	 "node 2: callFrame is not an object"},
	{"functionName not string",
	 ONE("{\"id\":2,\"callFrame\":{\"functionName\":1},\"selfSize\":1}"), PR_EDATA,
	 "node 2: functionName is not a string"},
	{"url not string", ONE("{\"id\":2,\"callFrame\":{\"url\":{}},\"selfSize\":1}"),
	 PR_EDATA, "node 2: url is not a string"},
	{"children not array", ONE("{\"id\":2,\"selfSize\":1,\"children\":{}}"), PR_EDATA,
	 "node 2: children is not an array"},
	{"children scalar", ONE("{\"id\":2,\"selfSize\":1,\"children\":2}"), PR_EDATA,
	 "node 2: children is not an array"},
	{"child an id", ONE("{\"id\":2,\"selfSize\":1,\"children\":[3]}"), PR_EDATA,
	 "node 2: child at index 0 is not an object"},
	{"child an array", ONE("{\"id\":2,\"selfSize\":1,\"children\":[{\"id\":3,"
			       "\"selfSize\":0},[]]}"),
	 PR_EDATA, "node 2: child at index 1 is not an object"},
	{"missing id", ONE("{\"selfSize\":1}"), PR_EDATA, "node at index 1 has no id"},
	{"string id", ONE("{\"id\":\"2\",\"selfSize\":1}"), PR_EDATA,
	 "node at index 1: id is not an integer"},
	{"fractional id", ONE("{\"id\":2.5,\"selfSize\":1}"), PR_EDATA,
	 "node at index 1: id is not an integer"},
	{"object id", ONE("{\"id\":{},\"selfSize\":1}"), PR_EDATA,
	 "node at index 1: id is not an integer"},
	{"duplicate id", HEAD(CHILD_2 "," CHILD_2) "}", PR_EDATA, "duplicate node id 2"},
	{"child with the root's id", HEAD(NODE(1, "a", "x.js", 1, "")) "}", PR_EDATA,
	 "duplicate node id 1"},
	{"missing selfSize", ONE("{\"id\":2}"), PR_EDATA, "node 2 has no selfSize"},
	{"fractional selfSize", ONE("{\"id\":2,\"selfSize\":1.5}"), PR_EDATA,
	 "node 2: selfSize is not an integer"},
	{"exponent selfSize", ONE("{\"id\":2,\"selfSize\":1e3}"), PR_EDATA,
	 "node 2: selfSize is not an integer"},
	{"huge real selfSize", ONE("{\"id\":2,\"selfSize\":1e400}"), PR_EDATA,
	 "node 2: selfSize is not an integer"},
	{"string selfSize", ONE("{\"selfSize\":\"1\",\"id\":2}"), PR_EDATA,
	 "node at index 1: selfSize is not an integer"},
	{"null selfSize", ONE("{\"id\":2,\"selfSize\":null}"), PR_EDATA,
	 "node 2: selfSize is not an integer"},
	{"array selfSize", ONE("{\"id\":2,\"selfSize\":[1]}"), PR_EDATA,
	 "node 2: selfSize is not an integer"},
	{"negative selfSize", ONE("{\"id\":2,\"selfSize\":-3}"), PR_EDATA,
	 "node 2: negative selfSize -3"},
	{"selfSize beyond 64 bits", ONE("{\"id\":2,\"selfSize\":99999999999999999999}"),
	 PR_EDATA, "invalid JSON at line 1 column"},
	{"selfSize far beyond 64 bits",
	 ONE("{\"id\":2,\"selfSize\":-999999999999999999999999999999}"), PR_EDATA,
	 "integer out of range"},
	{"selfSizes overflow",
	 HEAD(NODE(2, "a", "x.js", 9223372036854775807, "") ","
	      NODE(3, "b", "x.js", 1, "")) "}",
	 PR_EDATA, "the selfSizes add up to more than 64 bits"},
	{"duplicate id key", ONE("{\"id\":2,\"id\":3,\"selfSize\":1}"), PR_EDATA,
	 "duplicate object key \"id\""},
	{"duplicate selfSize", ONE("{\"id\":2,\"selfSize\":1,\"selfSize\":1}"), PR_EDATA,
	 "duplicate object key \"selfSize\""},
	{"duplicate children", ONE("{\"id\":2,\"selfSize\":1,\"children\":[],"
				   "\"children\":[]}"),
	 PR_EDATA, "duplicate object key \"children\""},
	{"duplicate callFrame", ONE("{\"id\":2,\"selfSize\":1,\"callFrame\":{},"
				    "\"callFrame\":{}}"),
	 PR_EDATA, "duplicate object key \"callFrame\""},
	{"duplicate functionName",
	 ONE("{\"id\":2,\"selfSize\":1,\"callFrame\":{\"functionName\":\"a\","
	     "\"functionName\":\"b\"}}"),
	 PR_EDATA, "duplicate object key \"functionName\""},
	/* A profile error, then text that is not JSON: the JSON error wins. */
	{"profile error then bad JSON", "{\"head\":{\"id\":\"x\"}} trailing", PR_EDATA,
	 "invalid JSON"},
};

static void check_bad(const char *what, const char *json, size_t len,
		      const profile_limits *lim, int code, const char *reason)
{
	pr_error err = PR_ERROR_INIT;
	profile *p = (profile *)1;
	int rc = v8heap_parse(&p, (const uint8_t *)json, len, NAME, lim, &err);

	if (rc != code)
		fail_msg("%s: got %d (%s), want %d", what, rc, err.msg, code);
	assert_int_equal(err.code, code);
	assert_null(p);
	assert_null(strchr(err.msg, '\n'));
	if (strncmp(err.msg, "cannot parse '" NAME "': ", strlen(NAME) + 16) != 0 ||
	    !strstr(err.msg, reason))
		fail_msg("%s: message \"%s\" lacks \"%s\"", what, err.msg, reason);
}

static void test_malformed_input_is_rejected_with_a_reason(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++)
		check_bad(bad_cases[i].what, bad_cases[i].json, strlen(bad_cases[i].json),
			  NULL, bad_cases[i].code, bad_cases[i].reason);
}

static void test_json_errors_do_not_quote_the_input(void **state)
{
	static const char json[] = "{\"head\":{\"id\":1,\"callFrame\":"
				   "{\"functionName\":\"card 4111111111111111\" x}}}";
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;

	(void)state;
	assert_int_equal(parse(&p, json, NULL, &err), PR_EDATA);
	assert_null(strstr(err.msg, "4111"));
	assert_non_null(strstr(err.msg, "invalid JSON at line 1"));
}

static void test_every_prefix_of_a_small_profile_is_rejected(void **state)
{
	size_t len = strlen(small);

	(void)state;
	check_bad("no bytes", small, 0, NULL, PR_EDATA, "the input is empty");
	for (size_t cut = 1; cut < len; cut++) {
		char what[32];

		snprintf(what, sizeof(what), "first %zu bytes", cut);
		check_bad(what, small, cut, NULL, PR_EDATA, "invalid JSON");
	}
}

static void test_truncations_of_the_real_profile_are_rejected(void **state)
{
	buf json = BUF_INIT;
	size_t end;

	(void)state;
	testdata_read(&json, "v8/node-retain.heapprofile");
	end = json.len;
	while (end > 0 && strchr(" \t\r\n", json.ptr[end - 1]))
		end--;
	for (size_t cut = 1; cut < end; cut += 97)
		check_bad("truncated real profile", json.ptr, cut, NULL, PR_EDATA,
			  "invalid JSON");
	check_bad("one byte short", json.ptr, end - 1, NULL, PR_EDATA, "invalid JSON");
	buf_release(&json);
}

static void test_deeply_nested_arrays_are_rejected_without_crashing(void **state)
{
	buf b = BUF_INIT;
	int n = 100000;

	(void)state;
	assert_int_equal(buf_puts(&b, "{\"head\":"), 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(buf_putc(&b, '['), 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(buf_putc(&b, ']'), 0);
	assert_int_equal(buf_putc(&b, '}'), 0);
	check_bad("nested arrays", b.ptr, b.len, NULL, PR_EDATA, "maximum parsing depth");
	/* Unclosed, as a truncated attack would be. */
	check_bad("unclosed arrays", b.ptr, 8 + (size_t)n, NULL, PR_EDATA,
		  "maximum parsing depth");
	buf_release(&b);
}

/*
 * A chain root -> 2 -> ... -> n of nested children, every node with
 * `self` bytes, names of `name_len` bytes; `close` false cuts the text
 * short after the deepest node opens.
 */
static void chain(buf *b, int n, int name_len, int self, bool close)
{
	buf_reset(b);
	assert_int_equal(buf_puts(b, "{\"head\":"), 0);
	for (int i = 1; i <= n; i++) {
		assert_int_equal(buf_printf(b, "{\"id\":%d,\"selfSize\":%d,\"callFrame\":"
					    "{\"functionName\":\"", i, i == 1 ? 0 : self), 0);
		for (int k = 0; k < name_len; k++)
			assert_int_equal(buf_putc(b, 'f'), 0);
		assert_int_equal(buf_printf(b, "%d\",\"url\":\"x.js\"},\"children\":[", i), 0);
	}
	if (!close)
		return;
	for (int i = 1; i <= n; i++)
		assert_int_equal(buf_puts(b, "]}"), 0);
	assert_int_equal(buf_putc(b, '}'), 0);
}

static void test_stack_deeper_than_the_limit_is_rejected(void **state)
{
	profile_limits lim;
	pr_error err = PR_ERROR_INIT;
	buf b = BUF_INIT;
	profile *p;

	(void)state;
	profile_limits_default(&lim);
	lim.max_depth = 3;
	chain(&b, 5, 1, 1, true);
	check_bad("deep stack", b.ptr, b.len, &lim, PR_ELIMIT,
		  "a stack of 4 frames exceeds the depth limit of 3");
	/* Cut short: refused as the node opens, not after the text. */
	chain(&b, 5, 1, 1, false);
	check_bad("deep stack, cut short", b.ptr, b.len, &lim, PR_ELIMIT,
		  "a stack of 4 frames exceeds the depth limit of 3");
	lim.max_depth = 4;
	chain(&b, 5, 1, 1, true);
	assert_int_equal(v8heap_parse(&p, (const uint8_t *)b.ptr, b.len, NAME, &lim, &err), 0);
	assert_int_equal(p->nsamples, 4);
	assert_int_equal(p->stack_len[3], 4);
	profile_free(p);
	buf_release(&b);
}

static void test_hostile_trees_are_refused_by_depth(void **state)
{
	buf b = BUF_INIT;

	(void)state;
	/* 200k levels deep: the JSON nesting limit stops it at level 1023. */
	chain(&b, 200000, 0, 1, false);
	check_bad("hostile chain", b.ptr, b.len, NULL, PR_EDATA,
		  "maximum parsing depth of 2048 exceeded");
	buf_release(&b);
}

static void test_overlong_function_name_is_rejected(void **state)
{
	profile_limits lim;
	buf b = BUF_INIT;

	(void)state;
	profile_limits_default(&lim);
	lim.max_string_len = 16;
	chain(&b, 2, 16, 1, true);
	check_bad("long name", b.ptr, b.len, &lim, PR_ELIMIT,
		  "a name of 17 bytes exceeds the limit of 16 bytes");
	buf_release(&b);
}

static void test_oversized_name_is_refused_as_it_is_read(void **state)
{
	buf b = BUF_INIT;

	(void)state;
	assert_int_equal(buf_puts(&b, "{\"head\":{\"id\":1,\"selfSize\":0,\"children\":["
				  "{\"id\":2,\"selfSize\":1,\"callFrame\":{\"url\":\"\\n"), 0);
	for (int i = 0; i < 70000; i++)
		assert_int_equal(buf_putc(&b, 'u'), 0);
	/* Cut short after the name. */
	assert_int_equal(buf_puts(&b, "\",\"functionName\":\"a\""), 0);
	check_bad("long url", b.ptr, b.len, NULL, PR_ELIMIT,
		  "a name of 70001 bytes exceeds the limit of 65536 bytes");
	buf_release(&b);
}

static void test_too_many_sampled_nodes_stop_the_parse(void **state)
{
	profile_limits lim;
	buf b = BUF_INIT;

	(void)state;
	profile_limits_default(&lim);
	lim.max_samples = 4;
	check_bad("five sampled nodes", small, strlen(small), &lim, PR_ELIMIT,
		  "more than 4 samples");
	lim.max_samples = 5;
	{
		pr_error err = PR_ERROR_INIT;
		profile *p = NULL;

		assert_int_equal(v8heap_parse(&p, (const uint8_t *)small, strlen(small), NAME,
					      &lim, &err), 0);
		profile_free(p);
	}
	/* 100k sampled children, cut short: refused at the 1001st. */
	lim.max_samples = 1000;
	assert_int_equal(buf_puts(&b, "{\"head\":{\"id\":1,\"selfSize\":0,\"children\":["), 0);
	for (int i = 2; i < 100000; i++)
		assert_int_equal(buf_printf(&b, "{\"id\":%d,\"selfSize\":8},", i), 0);
	check_bad("many sampled nodes", b.ptr, b.len, &lim, PR_ELIMIT, "more than 1000 samples");
	buf_release(&b);
}

static void test_nodes_past_the_memory_budget_stop_the_parse(void **state)
{
	profile_limits lim;
	buf b = BUF_INIT;
	int n = 0;

	(void)state;
	profile_limits_default(&lim);
	lim.max_decompressed_bytes = 1 << 20; /* the budget's floor, 64 MiB */
	assert_int_equal(buf_puts(&b, "{\"head\":{\"id\":1,\"selfSize\":0,\"children\":["), 0);
	/* Nodes of distinct names: well past 64 MiB once held. */
	while (b.len < (48u << 20)) {
		n++;
		assert_int_equal(buf_printf(&b, "{\"id\":%d,\"selfSize\":0,\"callFrame\":"
					    "{\"functionName\":\"function-number-%d-with-a-long-"
					    "enough-name\"}},", n + 1, n), 0);
	}
	/* Cut short: only a parse that stopped at the budget sees no JSON error. */
	check_bad("many nodes", b.ptr, b.len, &lim, PR_ELIMIT,
		  "the profile needs more than 64 MiB of memory");
	buf_release(&b);
}

/* A valid profile whose "meta" value is `value`. */
static void with_meta(buf *b, const char *value_head, const char *value_tail, int repeat)
{
	buf_reset(b);
	assert_int_equal(buf_puts(b, "{\"meta\":"), 0);
	for (int i = 0; i < repeat; i++)
		assert_int_equal(buf_puts(b, value_head), 0);
	for (int i = 0; i < repeat; i++)
		assert_int_equal(buf_puts(b, value_tail), 0);
	assert_int_equal(buf_puts(b, ",\"head\":" NODE(1, "(root)", "", 0, CHILD_2) "}"), 0);
}

static void test_unknown_values_are_skipped_whatever_they_hold(void **state)
{
	static const char *const skipped[][2] = {
		{"{\"a\":[", "]}"},                    /* nested objects and arrays */
		{"[\"x\\u00e9\\n\",99999999999999999999999,1e999,true,[", "]]"},
		/* known names, no meaning here */
		{"{\"head\":{\"id\":\"no\"},\"selfSize\":-1,\"children\":[", "]}"},
	};
	buf b = BUF_INIT;

	(void)state;
	for (size_t i = 0; i < sizeof(skipped) / sizeof(skipped[0]); i++) {
		profile_summary s;
		profile *p;

		with_meta(&b, skipped[i][0], skipped[i][1], 1000);
		p = parse_ok(b.ptr);
		summarize(&s, p);
		assert_int_equal(s.total, 1);
		assert_int_equal(row(p, &s, "a", "x.js")->self, 1);
		profile_summary_release(&s);
		profile_free(p);
	}
	/* Unknown keys of nodes and frames, "nodes" too, are skipped. */
	profile_free(parse_ok("{\"nodes\":{\"x\":[1]},\"head\":{\"id\":1,\"selfSize\":0,"
			      "\"extra\":[{\"id\":\"x\"}],\"callFrame\":{\"scriptId\":{},"
			      "\"lineNumber\":\"x\"}}}"));
	/* A huge string with escapes in a skipped value is not decoded. */
	buf_reset(&b);
	assert_int_equal(buf_puts(&b, HEAD(CHILD_2) ",\"samples\":\"\\t"), 0);
	for (int i = 0; i < (4 << 20); i++)
		assert_int_equal(buf_putc(&b, 'm'), 0);
	assert_int_equal(buf_puts(&b, "\"}"), 0);
	profile_free(parse_ok(b.ptr));
	buf_release(&b);
}

static void test_hostile_json_in_skipped_values_is_still_refused(void **state)
{
	buf b = BUF_INIT;
	char want[128];

	(void)state;
	/* Refused at the bracket that opens level 2049 (the top object is 1). */
	with_meta(&b, "[", "]", 3000);
	snprintf(want, sizeof(want),
		 "invalid JSON at line 1 column %zu: maximum parsing depth of 2048 exceeded",
		 strlen("{\"meta\":") + 2048 + 1);
	check_bad("deep unknown value", b.ptr, b.len, NULL, PR_EDATA, want);
	with_meta(&b, "{\"k\":\"\xc3\x28\",\"l\":[", "]}", 1);
	check_bad("bad UTF-8 in an unknown value", b.ptr, b.len, NULL, PR_EDATA,
		  "invalid JSON");
	with_meta(&b, "[1,2", "", 1);
	check_bad("unclosed unknown value", b.ptr, b.len, NULL, PR_EDATA, "invalid JSON");
	buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_node_profile_matches_independent_sizes),
		cmocka_unit_test(test_small_profile_gives_exact_self_and_total),
		cmocka_unit_test(test_root_is_not_a_frame_and_its_bytes_count_only_in_the_total),
		cmocka_unit_test(test_recursion_counts_once_toward_total),
		cmocka_unit_test(test_empty_function_name_is_anonymous_with_its_url),
		cmocka_unit_test(test_urls_keep_functions_apart_and_lines_do_not),
		cmocka_unit_test(test_key_order_does_not_matter),
		cmocka_unit_test(test_samples_array_only_counts_records_of_nodes_with_bytes),
		cmocka_unit_test(test_byte_order_mark_and_nul_in_names_are_accepted),
		cmocka_unit_test(test_format_is_named_v8heap),
		cmocka_unit_test(test_sniff_accepts_heap_profiles_only),
		cmocka_unit_test(test_malformed_input_is_rejected_with_a_reason),
		cmocka_unit_test(test_json_errors_do_not_quote_the_input),
		cmocka_unit_test(test_every_prefix_of_a_small_profile_is_rejected),
		cmocka_unit_test(test_truncations_of_the_real_profile_are_rejected),
		cmocka_unit_test(test_deeply_nested_arrays_are_rejected_without_crashing),
		cmocka_unit_test(test_stack_deeper_than_the_limit_is_rejected),
		cmocka_unit_test(test_hostile_trees_are_refused_by_depth),
		cmocka_unit_test(test_overlong_function_name_is_rejected),
		cmocka_unit_test(test_oversized_name_is_refused_as_it_is_read),
		cmocka_unit_test(test_too_many_sampled_nodes_stop_the_parse),
		cmocka_unit_test(test_nodes_past_the_memory_budget_stop_the_parse),
		cmocka_unit_test(test_unknown_values_are_skipped_whatever_they_hold),
		cmocka_unit_test(test_hostile_json_in_skipped_values_is_still_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
