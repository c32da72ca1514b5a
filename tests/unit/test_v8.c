/*
 * test_v8.c: the V8 .cpuprofile parser: a real node profile checked
 * against shares computed independently, hand-built profiles with exact
 * expected values, and malformed, truncated, hostile and oversized input.
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
#include "pipeline/v8.h"
#include "tests/support/testdata.h"

#define NAME "t.cpuprofile"

/* Node 1 is the root; names and files follow DevTools' call frames. */
#define FRAME(name, url) \
	"\"callFrame\":{\"functionName\":\"" name "\",\"scriptId\":\"1\"," \
	"\"url\":\"" url "\",\"lineNumber\":1,\"columnNumber\":1}"

static int parse(profile **out, const char *json, const profile_limits *lim,
		 pr_error *err)
{
	return v8_parse(out, (const uint8_t *)json, strlen(json), NAME, lim, err);
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

static void summarize(profile_summary *s, const profile *p, size_t col)
{
	pr_error err = PR_ERROR_INIT;

	assert_int_equal(profile_summarize(s, p, col, &err), 0);
}

static bool has_func(const profile *p, const char *name)
{
	for (uint32_t i = 0; i < p->nfuncs; i++)
		if (strcmp(p->funcs[i].name, name) == 0)
			return true;
	return false;
}

/*
 * Every function's time and sample share in `cpu` and `cnt` (the two
 * columns of `p`) agree with the golden file `rel`, which
 * tests/data/gen/v8/shares.js, an independent implementation of the
 * DevTools rule, computed from the same profile.
 */
static void matches_golden_shares(const profile *p, const profile_summary *cpu,
				  const profile_summary *cnt, const char *rel)
{
	buf golden = BUF_INIT;
	char *line, *save = NULL;
	size_t lines = 0;

	testdata_read(&golden, rel);
	for (line = strtok_r(golden.ptr, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *t1 = strchr(line, '\t'), *t2, *t3;
		double want_time, want_count, got_time, got_count;
		const profile_summary_row *r, *rc;

		assert_non_null(t1);
		assert_non_null(t2 = strchr(t1 + 1, '\t'));
		assert_non_null(t3 = strchr(t2 + 1, '\t'));
		*t3 = '\0';
		want_time = strtod(line, NULL);
		want_count = strtod(t1 + 1, NULL);
		r = row(p, cpu, t2 + 1, t3 + 1);
		rc = row(p, cnt, t2 + 1, t3 + 1);
		got_time = 100.0 * (double)r->self / (double)cpu->total;
		got_count = 100.0 * (double)rc->self / (double)cnt->total;
		if (got_time < want_time - 0.1 || got_time > want_time + 0.1 ||
		    got_count < want_count - 0.1 || got_count > want_count + 0.1)
			fail_msg("%s: profreg %.4f%% / %.4f%%, golden %.4f%% / %.4f%%",
				 t2 + 1, got_time, got_count, want_time, want_count);
		lines++;
	}
	/* Every function with self time is in the golden file. */
	for (size_t i = 0; i < cpu->nrows; i++)
		lines -= cpu->rows[i].self > 0;
	assert_int_equal(lines, 0);
	buf_release(&golden);
}

static void test_real_node_profile_matches_independent_shares(void **state)
{
	buf json = BUF_INIT;
	profile_summary cpu, cnt;
	profile *p;

	(void)state;
	testdata_read(&json, "v8/node-burn.cpuprofile");
	p = parse_ok(json.ptr);
	assert_string_equal(p->value_types[p->primary].type, "cpu");
	assert_string_equal(p->value_types[p->primary].unit, "nanoseconds");
	assert_true(p->duration_ns > 1000000000LL && p->duration_ns < 3000000000LL);
	assert_int_equal(p->time_ns, 0);
	assert_false(has_func(p, "(root)"));
	summarize(&cpu, p, 1);
	summarize(&cnt, p, 0);
	assert_true(cnt.sample_count > 1000);
	matches_golden_shares(p, &cpu, &cnt, "v8/node-burn.shares.txt");

	/* burn.js spins 5:3:1:1 ms in hot, warm, cold and spin. */
	assert_true(row(p, &cpu, "hot", NULL)->self > row(p, &cpu, "warm", NULL)->self);
	assert_true(row(p, &cpu, "warm", NULL)->self > row(p, &cpu, "cold", NULL)->self);
	assert_true(100.0 * row(p, &cpu, "hot", NULL)->self / cpu.total > 40.0);
	/* cold recurses five deep but counts once toward its total. */
	assert_true(row(p, &cpu, "cold", NULL)->total < cpu.total / 4);
	assert_true(row(p, &cpu, "cold", NULL)->total >=
		    row(p, &cpu, "cold", NULL)->self + row(p, &cpu, "spin", NULL)->self);

	profile_summary_release(&cpu);
	profile_summary_release(&cnt);
	profile_free(p);
	buf_release(&json);
}

/*
 * A real profile of a program idle most of the time (node 20,
 * tests/data/gen/v8/idle.js): every 20 ms a timer runs handle(), about 4
 * ms of CPU, and V8 samples the waiting thread as "(idle)", 1,110 of the
 * 1,401 samples. Those are no CPU time: the shares are of the busy
 * samples, where handle is most of the work (the golden file, which
 * shares.js computes the same way), not a fifth of it.
 */
static void test_idle_samples_are_left_out_of_the_shares(void **state)
{
	buf json = BUF_INIT;
	profile_summary cpu, cnt;
	profile *p;

	(void)state;
	testdata_read(&json, "v8/node-idle.cpuprofile");
	p = parse_ok(json.ptr);
	summarize(&cpu, p, 1);
	summarize(&cnt, p, 0);
	assert_null(find_row(p, &cpu, "(idle)", ""));
	assert_null(find_row(p, &cnt, "(idle)", ""));
	assert_int_equal(cnt.total, 1401 - 1110);
	assert_int_equal(cnt.sample_count, 1401 - 1110);
	matches_golden_shares(p, &cpu, &cnt, "v8/node-idle.shares.txt");
	assert_true(100.0 * (double)row(p, &cpu, "handle", NULL)->self / (double)cpu.total > 75.0);
	/* Busy time outside JavaScript stays a frame of its own. */
	assert_non_null(find_row(p, &cnt, "(program)", ""));
	assert_non_null(find_row(p, &cnt, "(garbage collector)", ""));
	profile_summary_release(&cpu);
	profile_summary_release(&cnt);
	profile_free(p);
	buf_release(&json);
}

/*
 * root -> main -> work -> leaf, root -> (program). Sample i lasts
 * timeDeltas[i + 1]; the last lasts the mean of the others (25 us).
 */
static const char small_children[] =
	"{\"nodes\":["
	"{\"id\":1," FRAME("(root)", "") ",\"hitCount\":0,\"children\":[2,5]},"
	"{\"id\":2," FRAME("main", "file:///app.js") ",\"hitCount\":1,\"children\":[3]},"
	"{\"id\":3," FRAME("work", "file:///app.js") ",\"hitCount\":1,\"children\":[4]},"
	"{\"id\":4," FRAME("leaf", "file:///lib.js") ",\"hitCount\":2},"
	"{\"id\":5," FRAME("(program)", "") ",\"hitCount\":1}],"
	"\"startTime\":1000,\"endTime\":2000,"
	"\"samples\":[4,4,3,5,2],\"timeDeltas\":[100,10,20,30,40]}";

static const char small_parents[] =
	"{\"nodes\":["
	"{\"id\":1," FRAME("(root)", "") "},"
	"{\"id\":2," FRAME("main", "file:///app.js") ",\"parent\":1},"
	"{\"id\":3," FRAME("work", "file:///app.js") ",\"parent\":2},"
	"{\"id\":4," FRAME("leaf", "file:///lib.js") ",\"parent\":3},"
	"{\"id\":5," FRAME("(program)", "") ",\"parent\":1}],"
	"\"startTime\":1000,\"endTime\":2000,"
	"\"samples\":[4,4,3,5,2],\"timeDeltas\":[100,10,20,30,40]}";

static void check_small(const char *json)
{
	profile *p = parse_ok(json);
	profile_summary cpu, cnt;

	assert_int_equal(p->nfuncs, 4);
	assert_false(has_func(p, "(root)"));
	assert_int_equal(p->duration_ns, 1000000);
	assert_int_equal(p->time_ns, 0);
	assert_int_equal(p->format, PROFILE_FMT_V8);
	summarize(&cpu, p, 1);
	summarize(&cnt, p, 0);
	assert_int_equal(cpu.total, 125000);
	assert_int_equal(cnt.total, 5);
	assert_int_equal(cnt.sample_count, 5);
	assert_int_equal(row(p, &cpu, "leaf", "file:///lib.js")->self, 30000);
	assert_int_equal(row(p, &cpu, "work", "file:///app.js")->self, 30000);
	assert_int_equal(row(p, &cpu, "(program)", "")->self, 40000);
	assert_int_equal(row(p, &cpu, "main", "file:///app.js")->self, 25000);
	assert_int_equal(row(p, &cpu, "main", NULL)->total, 85000);
	assert_int_equal(row(p, &cpu, "work", NULL)->total, 60000);
	assert_int_equal(row(p, &cpu, "leaf", NULL)->total, 30000);
	assert_int_equal(row(p, &cnt, "leaf", NULL)->self, 2);
	assert_int_equal(row(p, &cnt, "main", NULL)->total, 4);
	/* Stacks start below the root: main is the outermost frame. */
	for (size_t i = 0; i < p->nsamples; i++)
		if (p->stack_len[i] > 1)
			assert_string_equal(p->funcs[p->frames[p->stack_off[i]]].name, "main");
	profile_summary_release(&cpu);
	profile_summary_release(&cnt);
	profile_free(p);
}

static void test_small_profile_gives_exact_self_and_total(void **state)
{
	(void)state;
	check_small(small_children);
}

static void test_parent_links_give_the_same_result_as_children(void **state)
{
	(void)state;
	check_small(small_parents);
}

static void test_recursion_counts_once_toward_total(void **state)
{
	profile_summary s;
	profile *p = parse_ok(
		"{\"nodes\":["
		"{\"id\":1," FRAME("(root)", "") ",\"children\":[2]},"
		"{\"id\":2," FRAME("main", "m.js") ",\"children\":[3]},"
		"{\"id\":3," FRAME("fib", "m.js") ",\"children\":[4]},"
		"{\"id\":4," FRAME("fib", "m.js") ",\"children\":[5]},"
		"{\"id\":5," FRAME("fib", "m.js") "}],"
		"\"startTime\":0,\"endTime\":100,"
		"\"samples\":[5,5,2,4],\"timeDeltas\":[1,10,10,10]}");

	(void)state;
	summarize(&s, p, 1);
	/* 10, 10, 10 us, then the mean 10 us for the last sample. */
	assert_int_equal(s.total, 40000);
	assert_int_equal(row(p, &s, "fib", NULL)->self, 30000);
	assert_int_equal(row(p, &s, "fib", NULL)->total, 30000);
	assert_int_equal(row(p, &s, "main", NULL)->self, 10000);
	assert_int_equal(row(p, &s, "main", NULL)->total, 40000);
	profile_summary_release(&s);
	profile_free(p);
}

static void test_negative_time_delta_counts_as_zero(void **state)
{
	profile_summary s;
	profile *p = parse_ok(
		"{\"nodes\":["
		"{\"id\":1," FRAME("(root)", "") ",\"children\":[2,3]},"
		"{\"id\":2," FRAME("a", "x.js") "},"
		"{\"id\":3," FRAME("b", "x.js") "}],"
		"\"startTime\":0,\"endTime\":100,"
		"\"samples\":[2,3,2],\"timeDeltas\":[5,-3,30]}");

	(void)state;
	summarize(&s, p, 1);
	/* a: 0 (clamped) + mean(0, 30) = 15 us; b: 30 us. */
	assert_int_equal(row(p, &s, "a", NULL)->self, 15000);
	assert_int_equal(row(p, &s, "b", NULL)->self, 30000);
	profile_summary_release(&s);
	profile_free(p);
}

static void test_empty_function_name_is_anonymous_with_its_url(void **state)
{
	profile *p = parse_ok(
		"{\"nodes\":["
		"{\"id\":1," FRAME("(root)", "") ",\"children\":[2,3]},"
		"{\"id\":2," FRAME("", "file:///a.js") "},"
		"{\"id\":3," FRAME("", "file:///b.js") "}],"
		"\"startTime\":0,\"endTime\":10,"
		"\"samples\":[2,3],\"timeDeltas\":[1,1]}");

	(void)state;
	assert_int_equal(p->nfuncs, 2);
	assert_string_equal(p->funcs[0].name, "(anonymous)");
	assert_string_equal(p->funcs[0].file, "file:///a.js");
	assert_string_equal(p->funcs[1].name, "(anonymous)");
	assert_string_equal(p->funcs[1].file, "file:///b.js");
	profile_free(p);
}

static void test_without_samples_hit_counts_give_counts_and_time(void **state)
{
	profile_summary cpu, cnt;
	profile *p = parse_ok(
		"{\"nodes\":["
		"{\"id\":1," FRAME("(root)", "") ",\"hitCount\":0,\"children\":[2]},"
		"{\"id\":2," FRAME("a", "x.js") ",\"hitCount\":1,\"children\":[3]},"
		"{\"id\":3," FRAME("b", "x.js") ",\"hitCount\":3}],"
		"\"startTime\":0,\"endTime\":1000}");

	(void)state;
	summarize(&cpu, p, 1);
	summarize(&cnt, p, 0);
	assert_int_equal(row(p, &cnt, "b", NULL)->self, 3);
	assert_int_equal(row(p, &cnt, "a", NULL)->total, 4);
	assert_int_equal(row(p, &cpu, "b", NULL)->self, 750000);
	assert_int_equal(row(p, &cpu, "a", NULL)->self, 250000);
	profile_summary_release(&cpu);
	profile_summary_release(&cnt);
	profile_free(p);
}

static void test_samples_without_time_deltas_share_the_duration(void **state)
{
	profile_summary s;
	profile *p = parse_ok(
		"{\"nodes\":["
		"{\"id\":1," FRAME("(root)", "") ",\"children\":[2,3]},"
		"{\"id\":2," FRAME("a", "x.js") "},"
		"{\"id\":3," FRAME("b", "x.js") "}],"
		"\"startTime\":0,\"endTime\":400,\"samples\":[2,3,3,3]}");

	(void)state;
	summarize(&s, p, 1);
	assert_int_equal(row(p, &s, "a", NULL)->self, 100000);
	assert_int_equal(row(p, &s, "b", NULL)->self, 300000);
	profile_summary_release(&s);
	profile_free(p);
}

static void test_lone_sample_lasts_until_end_time(void **state)
{
	profile_summary s;
	profile *p = parse_ok(
		"{\"nodes\":["
		"{\"id\":1," FRAME("(root)", "") ",\"children\":[2]},"
		"{\"id\":2," FRAME("a", "x.js") "}],"
		"\"startTime\":100,\"endTime\":500,"
		"\"samples\":[2],\"timeDeltas\":[150.5]}");

	(void)state;
	summarize(&s, p, 1);
	assert_int_equal(row(p, &s, "a", NULL)->self, 249500);
	profile_summary_release(&s);
	profile_free(p);
}

static void test_sample_of_root_counts_toward_total_only(void **state)
{
	profile_summary s;
	profile *p = parse_ok(
		"{\"nodes\":["
		"{\"id\":7," FRAME("(root)", "") ",\"children\":[9]},"
		"{\"id\":9," FRAME("a", "x.js") "}],"
		"\"startTime\":0,\"endTime\":100,"
		"\"samples\":[7,9,9],\"timeDeltas\":[0,10,10]}");

	(void)state;
	summarize(&s, p, 0);
	assert_int_equal(s.total, 3);
	assert_int_equal(s.nrows, 1);
	assert_int_equal(row(p, &s, "a", NULL)->self, 2);
	profile_summary_release(&s);
	profile_free(p);

	/* Only the root: every stack is empty. */
	p = parse_ok("{\"nodes\":[{\"id\":1,\"children\":[2]},{\"id\":2}],"
		     "\"samples\":[1,1],\"timeDeltas\":[0,10]}");
	summarize(&s, p, 1);
	assert_int_equal(s.total, 20000);
	assert_int_equal(s.nrows, 0);
	profile_summary_release(&s);
	profile_free(p);
}

/* Far-apart ids take the binary search, near ones the table. */
static void test_sparse_and_negative_node_ids_are_found(void **state)
{
	static const char *const jsons[] = {
		"{\"nodes\":["
		"{\"id\":-5," FRAME("(root)", "") ",\"children\":[9000000000,-9000000000]},"
		"{\"id\":9000000000," FRAME("a", "x.js") "},"
		"{\"id\":-9000000000," FRAME("b", "x.js") "}],"
		"\"samples\":[-9000000000,9000000000,-9000000000],\"timeDeltas\":[1,1,1]}",
		"{\"nodes\":["
		"{\"id\":-5," FRAME("(root)", "") ",\"children\":[-3,-4]},"
		"{\"id\":-3," FRAME("a", "x.js") "},"
		"{\"id\":-4," FRAME("b", "x.js") "}],"
		"\"samples\":[-4,-3,-4],\"timeDeltas\":[1,1,1]}",
	};
	static const char *const unknown[] = {
		"{\"nodes\":[{\"id\":1,\"children\":[9000000000]},{\"id\":9000000000}],"
		"\"samples\":[5],\"timeDeltas\":[1]}",
		"{\"nodes\":[{\"id\":2,\"children\":[4]},{\"id\":4}],"
		"\"samples\":[3],\"timeDeltas\":[1]}",
		"{\"nodes\":[{\"id\":2,\"children\":[4]},{\"id\":4}],"
		"\"samples\":[1],\"timeDeltas\":[1]}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(jsons) / sizeof(jsons[0]); i++) {
		profile_summary s;
		profile *p = parse_ok(jsons[i]);

		summarize(&s, p, 0);
		assert_int_equal(row(p, &s, "a", NULL)->self, 1);
		assert_int_equal(row(p, &s, "b", NULL)->self, 2);
		profile_summary_release(&s);
		profile_free(p);
	}
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		pr_error err = PR_ERROR_INIT;
		profile *p = NULL;

		assert_int_equal(parse(&p, unknown[i], NULL, &err), PR_EDATA);
		assert_non_null(strstr(err.msg, "sample 0 refers to node"));
		assert_non_null(strstr(err.msg, "which does not exist"));
	}
}

static void test_byte_order_mark_and_nul_in_names_are_accepted(void **state)
{
	profile *p = parse_ok(
		"\xef\xbb\xbf{\"nodes\":["
		"{\"id\":1," FRAME("(root)", "") ",\"children\":[2]},"
		"{\"id\":2," FRAME("a\\u0000b", "x.js") "}],"
		"\"samples\":[2],\"timeDeltas\":[1]}");

	(void)state;
	assert_int_equal(p->nfuncs, 1);
	assert_string_equal(p->funcs[0].name, "a\xef\xbf\xbd" "b");
	profile_free(p);
}

static void test_sniff_accepts_cpuprofiles_only(void **state)
{
	static const char *yes[] = {
		"{\"nodes\":[]}",
		"  \n{ \"startTime\": 1, \"nodes\": []}",
		"\xef\xbb\xbf{\"nodes\":[]}",
	};
	static const char *no[] = {
		"", "[{\"nodes\":[]}]", "{\"samples\":[]}", "main;foo 1\n", "nodes",
		"{\"nodes",
	};
	buf late = BUF_INIT;

	(void)state;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		assert_true(v8_sniff((const uint8_t *)yes[i], strlen(yes[i])));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		assert_false(v8_sniff((const uint8_t *)no[i], strlen(no[i])));
	/* Only the first few KB are searched. */
	assert_int_equal(buf_putc(&late, '{'), 0);
	for (int i = 0; i < 10000; i++)
		assert_int_equal(buf_putc(&late, ' '), 0);
	assert_int_equal(buf_puts(&late, "\"nodes\":[]}"), 0);
	assert_false(v8_sniff((const uint8_t *)late.ptr, late.len));
	buf_release(&late);
}

typedef struct bad_case {
	const char *what;
	const char *json;
	int code;
	const char *reason;
} bad_case;

#define ROOT_2 "{\"id\":1," FRAME("(root)", "") ",\"children\":[2]}"
#define NODE_2 "{\"id\":2," FRAME("a", "x.js") "}"

static const bad_case bad_cases[] = {
	{"empty", "", PR_EDATA, "the input is empty"},
	{"only a byte order mark", "\xef\xbb\xbf", PR_EDATA, "the input is empty"},
	{"only spaces", "  \n", PR_EDATA, "invalid JSON at line 2"},
	{"not json", "hello world", PR_EDATA, "invalid JSON at line 1 column"},
	{"truncated", "{\"nodes\":[" ROOT_2 ",", PR_EDATA, "invalid JSON"},
	{"invalid utf-8", "{\"nodes\":\"\xff\"}", PR_EDATA, "invalid JSON"},
	{"array", "[1,2]", PR_EDATA, "the top level is an array"},
	{"missing nodes", "{\"samples\":[]}", PR_EDATA, "no \"nodes\" member"},
	{"legacy head", "{\"head\":{}}", PR_EDATA, "legacy \"head\" tree format"},
	{"nodes not array", "{\"nodes\":{}}", PR_EDATA, "\"nodes\" is not an array"},
	{"nodes empty", "{\"nodes\":[]}", PR_EDATA, "\"nodes\" is empty"},
	{"node not object", "{\"nodes\":[1]}", PR_EDATA, "node at index 0 is not an object"},
	{"duplicate key", "{\"nodes\":[],\"nodes\":[]}", PR_EDATA, "duplicate object key"},
	{"missing id", "{\"nodes\":[" ROOT_2 ",{\"hitCount\":1}]}", PR_EDATA,
	 "node at index 1 has no id"},
	{"string id", "{\"nodes\":[" ROOT_2 ",{\"id\":\"2\"}]}", PR_EDATA,
	 "node at index 1: id is not an integer"},
	{"fractional id", "{\"nodes\":[" ROOT_2 ",{\"id\":2.5}]}", PR_EDATA,
	 "node at index 1: id is not an integer"},
	{"duplicate id", "{\"nodes\":[" ROOT_2 "," NODE_2 "," NODE_2 "]}", PR_EDATA,
	 "duplicate node id 2"},
	{"dangling child", "{\"nodes\":[{\"id\":1,\"children\":[7]}]}", PR_EDATA,
	 "node 1 lists child 7, which does not exist"},
	{"dangling parent", "{\"nodes\":[{\"id\":1},{\"id\":2,\"parent\":9}]}", PR_EDATA,
	 "node 2 names parent 9, which does not exist"},
	{"children not array", "{\"nodes\":[{\"id\":1,\"children\":2}]}", PR_EDATA,
	 "node 1: children is not an array"},
	{"child not integer", "{\"nodes\":[{\"id\":1,\"children\":[\"2\"]}]}", PR_EDATA,
	 "node 1: child at index 0 is not an integer id"},
	{"self child", "{\"nodes\":[{\"id\":1,\"children\":[1]}]}", PR_EDATA,
	 "cycle at node 1"},
	{"cycle off the root",
	 "{\"nodes\":[" ROOT_2 "," NODE_2 ",{\"id\":3,\"children\":[4]},"
	 "{\"id\":4,\"children\":[3]}],\"samples\":[]}",
	 PR_EDATA, "cycle at node"},
	{"no root",
	 "{\"nodes\":[{\"id\":1,\"children\":[2]},{\"id\":2,\"children\":[1]}]}",
	 PR_EDATA, "cycle at node"},
	{"parent loop",
	 "{\"nodes\":[{\"id\":1},{\"id\":2,\"parent\":3},{\"id\":3,\"parent\":2}]}",
	 PR_EDATA, "cycle at node"},
	{"two roots", "{\"nodes\":[{\"id\":1},{\"id\":2}]}", PR_EDATA,
	 "2 nodes have no parent (node 1 and node 2)"},
	{"child of two nodes",
	 "{\"nodes\":[{\"id\":1,\"children\":[2,3]},{\"id\":2,\"children\":[4]},"
	 "{\"id\":3,\"children\":[4]},{\"id\":4}]}",
	 PR_EDATA, "node 4 is reached twice, as a child of node 2 and of node 3"},
	{"child listed twice", "{\"nodes\":[{\"id\":1,\"children\":[2,2]},{\"id\":2}]}",
	 PR_EDATA, "node 2 is listed twice as a child of node 1"},
	{"parent disagrees with children",
	 "{\"nodes\":[{\"id\":1,\"children\":[2,3]},{\"id\":2},{\"id\":3,\"parent\":2}]}",
	 PR_EDATA, "node 3 is reached twice"},
	{"callFrame not object", "{\"nodes\":[{\"id\":1,\"callFrame\":3}],\"samples\":[]}",
	 PR_EDATA, "node 1: callFrame is not an object"},
	{"functionName not string",
	 "{\"nodes\":[{\"id\":1,\"callFrame\":{\"functionName\":1}}],\"samples\":[]}",
	 PR_EDATA, "node 1: functionName is not a string"},
	{"negative hitCount",
	 "{\"nodes\":[" ROOT_2 ",{\"id\":2,\"hitCount\":-1}]}", PR_EDATA,
	 "node 2: negative hitCount -1"},
	{"fractional hitCount",
	 "{\"nodes\":[" ROOT_2 ",{\"id\":2,\"hitCount\":1.5}]}", PR_EDATA,
	 "node 2: hitCount is not an integer"},
	{"no samples no hitCount", "{\"nodes\":[" ROOT_2 "," NODE_2 "]}", PR_EDATA,
	 "node 1 has no hitCount and the profile has no samples"},
	{"samples not array", "{\"nodes\":[" ROOT_2 "," NODE_2 "],\"samples\":2}",
	 PR_EDATA, "\"samples\" is not an array"},
	{"unknown sample node",
	 "{\"nodes\":[" ROOT_2 "," NODE_2 "],\"samples\":[2,99],\"timeDeltas\":[1,1]}",
	 PR_EDATA, "sample 1 refers to node 99, which does not exist"},
	{"sample not integer",
	 "{\"nodes\":[" ROOT_2 "," NODE_2 "],\"samples\":[\"2\"],\"timeDeltas\":[1]}",
	 PR_EDATA, "sample 0 is not an integer node id"},
	{"length mismatch",
	 "{\"nodes\":[" ROOT_2 "," NODE_2 "],\"samples\":[2,2,2],\"timeDeltas\":[1,1]}",
	 PR_EDATA, "3 samples but 2 timeDeltas"},
	{"deltas without samples",
	 "{\"nodes\":[" ROOT_2 "," NODE_2 "],\"timeDeltas\":[1]}",
	 PR_EDATA, "\"timeDeltas\" without \"samples\""},
	{"delta not number",
	 "{\"nodes\":[" ROOT_2 "," NODE_2 "],\"samples\":[2,2],\"timeDeltas\":[1,\"x\"]}",
	 PR_EDATA, "timeDelta 1 is not a number of microseconds"},
	{"delta overflows",
	 "{\"nodes\":[" ROOT_2 "," NODE_2 "],\"samples\":[2,2],"
	 "\"timeDeltas\":[1,9223372036854775807]}",
	 PR_EDATA, "timeDelta 1 is not a number of microseconds"},
	{"times overflow",
	 "{\"nodes\":[" ROOT_2 "," NODE_2 "],\"samples\":[2,2,2],"
	 "\"timeDeltas\":[1,9000000000000000,9000000000000000]}",
	 PR_EDATA, "timeDeltas overflow 64 bits"},
	{"start not number",
	 "{\"nodes\":[" ROOT_2 "," NODE_2 "],\"samples\":[],\"startTime\":\"0\"}",
	 PR_EDATA, "startTime is not a number of microseconds"},
	{"end before start",
	 "{\"nodes\":[" ROOT_2 "," NODE_2 "],\"samples\":[],\"startTime\":5,\"endTime\":4}",
	 PR_EDATA, "endTime is before startTime"},
	{"integer too big", "{\"nodes\":[{\"id\":99999999999999999999}]}", PR_EDATA,
	 "invalid JSON at line 1 column"},
};

static void check_bad(const char *what, const char *json, size_t len,
		      const profile_limits *lim, int code, const char *reason)
{
	pr_error err = PR_ERROR_INIT;
	profile *p = (profile *)1;
	int rc = v8_parse(&p, (const uint8_t *)json, len, NAME, lim, &err);

	if (rc != code)
		fail_msg("%s: got %d (%s), want %d", what, rc, err.msg, code);
	assert_int_equal(err.code, code);
	assert_null(p);
	if (!strstr(err.msg, "'" NAME "'") || !strstr(err.msg, reason))
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
	static const char json[] = "{\"nodes\":[{\"id\":1,\"callFrame\":"
				   "{\"functionName\":\"card 4111111111111111\" x}}]}";
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;

	(void)state;
	assert_int_equal(parse(&p, json, NULL, &err), PR_EDATA);
	assert_null(strstr(err.msg, "4111"));
	assert_non_null(strstr(err.msg, "invalid JSON at line 1"));
}

static void test_every_truncation_of_a_real_profile_is_rejected(void **state)
{
	buf json = BUF_INIT;

	(void)state;
	testdata_read(&json, "v8/node-burn.cpuprofile");
	for (size_t cut = 1; cut < json.len; cut += 331)
		check_bad("truncated real profile", json.ptr, cut, NULL, PR_EDATA,
			  "invalid JSON");
	/* Trailing whitespace aside, the last byte closes the object. */
	check_bad("one byte short", json.ptr, json.len - 1, NULL, PR_EDATA, "invalid JSON");
	buf_release(&json);
}

static void test_deeply_nested_arrays_are_rejected_without_crashing(void **state)
{
	buf b = BUF_INIT;
	int n = 100000;

	(void)state;
	assert_int_equal(buf_puts(&b, "{\"nodes\":"), 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(buf_putc(&b, '['), 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(buf_putc(&b, ']'), 0);
	assert_int_equal(buf_putc(&b, '}'), 0);
	check_bad("nested arrays", b.ptr, b.len, NULL, PR_EDATA, "maximum parsing depth");
	/* Unclosed, as a truncated attack would be. */
	check_bad("unclosed arrays", b.ptr, 9 + (size_t)n, NULL, PR_EDATA,
		  "maximum parsing depth");
	buf_release(&b);
}

/* A chain root -> 2 -> ... -> n with the deepest node sampled once. */
static void chain(buf *b, int n, int name_len)
{
	assert_int_equal(buf_puts(b, "{\"nodes\":["), 0);
	for (int i = 1; i <= n; i++) {
		assert_int_equal(buf_printf(b, "%s{\"id\":%d,\"callFrame\":{\"functionName\":\"",
					    i > 1 ? "," : "", i), 0);
		for (int k = 0; k < name_len; k++)
			assert_int_equal(buf_putc(b, 'f'), 0);
		assert_int_equal(buf_printf(b, "%d\",\"url\":\"x.js\"}", i), 0);
		if (i < n)
			assert_int_equal(buf_printf(b, ",\"children\":[%d]", i + 1), 0);
		assert_int_equal(buf_putc(b, '}'), 0);
	}
	assert_int_equal(buf_printf(b, "],\"samples\":[%d],\"timeDeltas\":[1]}", n), 0);
}

static void test_stack_deeper_than_the_limit_is_rejected(void **state)
{
	profile_limits lim;
	buf b = BUF_INIT;
	profile *p;

	(void)state;
	profile_limits_default(&lim);
	lim.max_depth = 3;
	chain(&b, 5, 1);
	check_bad("deep stack", b.ptr, b.len, &lim, PR_ELIMIT,
		  "a stack of 4 frames exceeds the depth limit of 3");
	lim.max_depth = 4;
	{
		pr_error err = PR_ERROR_INIT;
		assert_int_equal(v8_parse(&p, (const uint8_t *)b.ptr, b.len, NAME, &lim, &err), 0);
		assert_int_equal(p->stack_len[0], 4);
		profile_free(p);
	}
	buf_release(&b);
}

static void test_hostile_node_chain_is_rejected_by_the_depth_limit(void **state)
{
	buf b = BUF_INIT;

	(void)state;
	/* 200k nodes deep: no recursion may follow the tree. */
	chain(&b, 200000, 0);
	check_bad("hostile chain", b.ptr, b.len, NULL, PR_ELIMIT,
		  "a stack of 199999 frames exceeds the depth limit of 4096");
	buf_release(&b);
}

static void test_overlong_function_name_is_rejected(void **state)
{
	profile_limits lim;
	buf b = BUF_INIT;

	(void)state;
	profile_limits_default(&lim);
	lim.max_string_len = 16;
	chain(&b, 2, 16);
	check_bad("long name", b.ptr, b.len, &lim, PR_ELIMIT,
		  "a name of 17 bytes exceeds the limit of 16 bytes");
	buf_release(&b);
}

static void test_too_many_samples_are_rejected(void **state)
{
	profile_limits lim;

	(void)state;
	profile_limits_default(&lim);
	lim.max_samples = 2;
	check_bad("many samples", small_children, strlen(small_children), &lim, PR_ELIMIT,
		  "5 samples exceed the limit of 2");
}

/*
 * Hostile input read as a stream: each case is refused with one line that
 * names the input and the reason. Where `tail` is set, the document is
 * cut short after the hostile part, so a parser that read the whole text
 * before looking at its limits would say "invalid JSON" instead: the
 * expected error proves it stopped where the input went over.
 */
static void check_refused(const char *what, const buf *b, const profile_limits *lim,
			  int code, const char *reason)
{
	pr_error err = PR_ERROR_INIT;
	profile *p = (profile *)1;
	int rc = v8_parse(&p, (const uint8_t *)b->ptr, b->len, NAME, lim, &err);

	if (rc != code)
		fail_msg("%s: got %d (%s), want %d", what, rc, err.msg, code);
	assert_null(p);
	assert_int_equal(err.code, code);
	assert_null(strchr(err.msg, '\n'));
	if (strncmp(err.msg, "cannot parse '" NAME "': ", strlen(NAME) + 16) != 0 ||
	    !strstr(err.msg, reason))
		fail_msg("%s: message \"%s\" lacks \"%s\"", what, err.msg, reason);
}

/* A chain of n nodes linked by "parent", listed leaf first. */
static void parent_chain(buf *b, int n)
{
	assert_int_equal(buf_puts(b, "{\"nodes\":["), 0);
	for (int i = n; i >= 1; i--) {
		assert_int_equal(
			buf_printf(b, "{\"id\":%d,\"callFrame\":{\"functionName\":\"f%d\"}", i, i),
			0);
		if (i > 1)
			assert_int_equal(buf_printf(b, ",\"parent\":%d},", i - 1), 0);
		else
			assert_int_equal(buf_putc(b, '}'), 0);
	}
	assert_int_equal(buf_printf(b, "],\"samples\":[%d],\"timeDeltas\":[1]}", n), 0);
}

static void test_parent_chain_listed_leaf_first_is_refused_by_depth(void **state)
{
	buf b = BUF_INIT;

	(void)state;
	/* Depths come from an explicit path, not recursion, in any order. */
	parent_chain(&b, 300000);
	check_refused("parent chain", &b, NULL, PR_ELIMIT,
		      "a stack of 299999 frames exceeds the depth limit of 4096");
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
	assert_int_equal(buf_puts(&b, "{\"nodes\":[{\"id\":1}"), 0);
	/* Nodes of distinct names: well past 64 MiB once held. */
	while (b.len < (48u << 20)) {
		n++;
		assert_int_equal(buf_printf(&b, ",{\"id\":%d,\"parent\":1,\"functionName\":"
					    "\"function-number-%d-with-a-long-enough-name\"}",
					    n + 1, n), 0);
	}
	/* Cut short: only a parse that stopped at the budget sees no JSON error. */
	check_refused("many nodes", &b, &lim, PR_ELIMIT,
		      "the profile needs more than 64 MiB of memory");
	buf_release(&b);
}

static void test_samples_over_the_limit_stop_at_the_end_of_the_array(void **state)
{
	profile_limits lim;
	buf b = BUF_INIT;

	(void)state;
	profile_limits_default(&lim);
	lim.max_samples = 1000;
	assert_int_equal(buf_puts(&b, "{\"nodes\":[" ROOT_2 "," NODE_2 "],\"samples\":[2"), 0);
	for (int i = 1; i < 250000; i++)
		assert_int_equal(buf_puts(&b, ",2"), 0);
	/* The rest is cut short and never read. */
	assert_int_equal(buf_puts(&b, "],\"timeDeltas\":[1,"), 0);
	check_refused("many samples", &b, &lim, PR_ELIMIT,
		      "250000 samples exceed the limit of 1000");
	buf_release(&b);
}

static void test_oversized_name_is_refused_as_it_is_read(void **state)
{
	buf b = BUF_INIT;

	(void)state;
	assert_int_equal(buf_puts(&b, "{\"nodes\":[" ROOT_2 ",{\"id\":2,\"callFrame\":"
				  "{\"url\":\"\\n"), 0);
	for (int i = 0; i < 70000; i++)
		assert_int_equal(buf_putc(&b, 'u'), 0);
	assert_int_equal(buf_puts(&b, "\",\"functionName\":\"a\""), 0);
	check_refused("long url", &b, NULL, PR_ELIMIT,
		      "a name of 70001 bytes exceeds the limit of 65536 bytes");
	buf_release(&b);
}

/* A valid profile whose "meta" value is `value`. */
static void with_meta(buf *b, const char *value_head, const char *value_tail, int repeat)
{
	buf_reset(b);
	assert_int_equal(buf_puts(b, "{\"nodes\":[" ROOT_2 "," NODE_2 "],\"meta\":"), 0);
	for (int i = 0; i < repeat; i++)
		assert_int_equal(buf_puts(b, value_head), 0);
	for (int i = 0; i < repeat; i++)
		assert_int_equal(buf_puts(b, value_tail), 0);
	assert_int_equal(buf_puts(b, ",\"samples\":[2],\"timeDeltas\":[1]}"), 0);
}

static void test_unknown_values_are_skipped_whatever_they_hold(void **state)
{
	static const char *const skipped[][2] = {
		{"{\"a\":[", "]}"},                    /* nested objects and arrays */
		{"[\"x\\u00e9\\n\",99999999999999999999999,1e999,true,[", "]]"},
		{"{\"nodes\":{\"id\":\"no\"},\"id\":[", "]}"}, /* known names, no meaning here */
	};
	buf b = BUF_INIT;

	(void)state;
	for (size_t i = 0; i < sizeof(skipped) / sizeof(skipped[0]); i++) {
		profile_summary s;
		profile *p;

		with_meta(&b, skipped[i][0], skipped[i][1], 1000);
		p = parse_ok(b.ptr);
		summarize(&s, p, 0);
		assert_int_equal(s.total, 1);
		assert_int_equal(row(p, &s, "a", "x.js")->self, 1);
		profile_summary_release(&s);
		profile_free(p);
	}
	/* A huge string with escapes in a skipped value is not decoded. */
	buf_reset(&b);
	assert_int_equal(buf_puts(&b, "{\"nodes\":[" ROOT_2 "," NODE_2 "],\"meta\":\"\\t"), 0);
	for (int i = 0; i < (4 << 20); i++)
		assert_int_equal(buf_putc(&b, 'm'), 0);
	assert_int_equal(buf_puts(&b, "\",\"samples\":[2],\"timeDeltas\":[1]}"), 0);
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
		 strlen("{\"nodes\":[" ROOT_2 "," NODE_2 "],\"meta\":") + 2048 + 1);
	check_refused("deep unknown value", &b, NULL, PR_EDATA, want);
	with_meta(&b, "{\"k\":\"\xc3\x28\",\"l\":[", "]}", 1);
	check_refused("bad UTF-8 in an unknown value", &b, NULL, PR_EDATA, "invalid JSON");
	with_meta(&b, "[1,2", "", 1);
	check_refused("unclosed unknown value", &b, NULL, PR_EDATA, "invalid JSON");
	buf_release(&b);
}

static void test_numbers_out_of_range_are_refused_where_they_are_read(void **state)
{
	static const struct {
		const char *json;
		const char *reason;
	} cases[] = {
		{"{\"nodes\":[" ROOT_2 "," NODE_2 "],\"samples\":[99999999999999999999],"
		 "\"timeDeltas\":[1]}", "invalid JSON at line 1 column"},
		{"{\"nodes\":[" ROOT_2 "," NODE_2 "],\"samples\":[2],\"timeDeltas\":[1e999]}",
		 "real number out of range"},
		{"{\"nodes\":[" ROOT_2 ",{\"id\":2,\"hitCount\":-99999999999999999999}]}",
		 "integer out of range"},
		{"{\"nodes\":[" ROOT_2 "," NODE_2 "],\"startTime\":1e400}", "out of range"},
		{"{\"nodes\":[" ROOT_2 "," NODE_2 "],\"samples\":[2],\"timeDeltas\":[1.5e20]}",
		 "timeDelta 0 is not a number of microseconds"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_bad(cases[i].json, cases[i].json, strlen(cases[i].json), NULL, PR_EDATA,
			  cases[i].reason);
}

static void test_duplicate_keys_of_a_node_are_refused(void **state)
{
	(void)state;
	check_bad("duplicate id key", "{\"nodes\":[{\"id\":1,\"id\":2}]}",
		  strlen("{\"nodes\":[{\"id\":1,\"id\":2}]}"), NULL, PR_EDATA,
		  "duplicate object key \"id\"");
	check_bad("duplicate functionName",
		  "{\"nodes\":[{\"id\":1,\"callFrame\":{\"functionName\":\"a\","
		  "\"functionName\":\"b\"}}]}",
		  strlen("{\"nodes\":[{\"id\":1,\"callFrame\":{\"functionName\":\"a\","
			 "\"functionName\":\"b\"}}]}"), NULL, PR_EDATA, "duplicate object key");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_node_profile_matches_independent_shares),
		cmocka_unit_test(test_idle_samples_are_left_out_of_the_shares),
		cmocka_unit_test(test_small_profile_gives_exact_self_and_total),
		cmocka_unit_test(test_parent_links_give_the_same_result_as_children),
		cmocka_unit_test(test_recursion_counts_once_toward_total),
		cmocka_unit_test(test_negative_time_delta_counts_as_zero),
		cmocka_unit_test(test_empty_function_name_is_anonymous_with_its_url),
		cmocka_unit_test(test_without_samples_hit_counts_give_counts_and_time),
		cmocka_unit_test(test_samples_without_time_deltas_share_the_duration),
		cmocka_unit_test(test_lone_sample_lasts_until_end_time),
		cmocka_unit_test(test_sample_of_root_counts_toward_total_only),
		cmocka_unit_test(test_sparse_and_negative_node_ids_are_found),
		cmocka_unit_test(test_byte_order_mark_and_nul_in_names_are_accepted),
		cmocka_unit_test(test_sniff_accepts_cpuprofiles_only),
		cmocka_unit_test(test_malformed_input_is_rejected_with_a_reason),
		cmocka_unit_test(test_json_errors_do_not_quote_the_input),
		cmocka_unit_test(test_every_truncation_of_a_real_profile_is_rejected),
		cmocka_unit_test(test_deeply_nested_arrays_are_rejected_without_crashing),
		cmocka_unit_test(test_stack_deeper_than_the_limit_is_rejected),
		cmocka_unit_test(test_hostile_node_chain_is_rejected_by_the_depth_limit),
		cmocka_unit_test(test_overlong_function_name_is_rejected),
		cmocka_unit_test(test_too_many_samples_are_rejected),
		cmocka_unit_test(test_parent_chain_listed_leaf_first_is_refused_by_depth),
		cmocka_unit_test(test_nodes_past_the_memory_budget_stop_the_parse),
		cmocka_unit_test(test_samples_over_the_limit_stop_at_the_end_of_the_array),
		cmocka_unit_test(test_oversized_name_is_refused_as_it_is_read),
		cmocka_unit_test(test_unknown_values_are_skipped_whatever_they_hold),
		cmocka_unit_test(test_hostile_json_in_skipped_values_is_still_refused),
		cmocka_unit_test(test_numbers_out_of_range_are_refused_where_they_are_read),
		cmocka_unit_test(test_duplicate_keys_of_a_node_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
