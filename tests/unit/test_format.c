/*
 * test_format.c: detection's refusals. Bytes that are not a profile
 * profreg reads, but that people fetch or save thinking they are (Go's
 * debug= text forms and execution traces, perf.data, V8 heap profiles,
 * Chrome traces), are refused with what they are and what to take
 * instead; anything else unknown with the list of formats. The inputs
 * are the first bytes of real files: Go 1.19's /debug/pprof endpoints
 * of tests/go/pprofdemo, node 20's --heap-prof, perf 6.1's perf.data,
 * gperftools' CPU and heap profiles.
 * And the JSON formats profreg reads are told apart: a speedscope file
 * is never taken for a V8 cpuprofile, nor a cpuprofile for speedscope.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <cmocka.h>

#include "common/buf.h"
#include "pipeline/format.h"
#include "tests/support/testdata.h"

#define NAME "t.in"

static void expect_refused(const void *data, size_t len, const char *reason)
{
	pr_error err = PR_ERROR_INIT;
	profile *p = (profile *)1;

	assert_int_equal(format_parse(&p, data, len, PROFILE_FMT_AUTO, NAME, NULL, &err),
			 PR_EDATA);
	assert_null(p);
	if (!strstr(err.msg, "cannot parse '" NAME "': ") || !strstr(err.msg, reason))
		fail_msg("message '%s' lacks the name or '%s'", err.msg, reason);
}

static void expect_refused_str(const char *text, const char *reason)
{
	expect_refused(text, strlen(text), reason);
}

static void test_go_text_forms_say_to_fetch_pprof(void **state)
{
	(void)state;
	expect_refused_str("heap profile: 3: 131584 [12: 2925680] @ heap/1048576\n"
			   "1: 131072 [1: 131072] @ 0x40e1c9 0x40d9e5\n",
			   "Go's text form of a profile (?debug=1)");
	expect_refused_str("goroutine profile: total 4\n1 @ 0x42ef36 0x463d85\n", "?debug=1");
	expect_refused_str("threadcreate profile: total 4\n4 @\n#\t0x0\n", "?debug=1");
	expect_refused_str("--- mutex:\ncycles/second=2095981893\nsampling period=0\n",
			   "?debug=1");
	expect_refused_str("goroutine 37 [running]:\nruntime/pprof.writeGoroutineStacks()\n",
			   "a Go goroutine dump (?debug=2)");
}

/*
 * gperftools 2.10's CPU profile (CPUPROFILE, libprofiler) and heap
 * profile (HEAPPROFILE, tcmalloc), Debian 12, x86_64, of a C++ program:
 * their first bytes; and, written by hand after gperftools' and pprof's
 * readers, a CPU header in 32-bit big-endian words and the header of
 * tcmalloc's sampled heap (GetHeapSample). Go's pprof reads them all;
 * the heap ones were called Go's text form, to be fetched without debug=.
 */
static void test_gperftools_profiles_say_to_convert(void **state)
{
	static const uint8_t cpu[48] = {[8] = 0x03, [24] = 0x88, 0x13, [40] = 0x01};
	static const uint8_t cpu32_be[20] = {[7] = 0x03, [15] = 0x14};

	(void)state;
	expect_refused(cpu, sizeof(cpu), "a gperftools profile in its legacy format; convert "
		       "it with 'go tool pprof -proto PROGRAM FILE'");
	expect_refused(cpu32_be, sizeof(cpu32_be), "a gperftools profile");
	expect_refused_str("heap profile:      1:     4096 [ 40002:  1684096] @ heapprofile\n"
			   "     1:     4096 [     1:     4096] @ 0x7f1f4d4938cc 0x7f1f4d4a10a0\n",
			   "a gperftools profile");
	expect_refused_str("heap profile:    3:   393216 [   3:   393216] @ heap_v2/524288\n"
			   "     1:   131072 [     1:   131072] @ 0x4005d4 0x7f0a4b2e7d90\n",
			   "a gperftools profile");
}

static void test_traces_and_perf_data_are_named(void **state)
{
	static const uint8_t trace[] = "go 1.19 trace\0\0\0A\0\x9d\xb5";
	static const uint8_t perfdata[] = "PERFILE2h\0\0\0\0\0\0\0";

	(void)state;
	expect_refused(trace, sizeof(trace) - 1, "a Go execution trace, not a profile");
	expect_refused(perfdata, sizeof(perfdata) - 1, "a perf.data file");
	expect_refused_str("{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"RunTask\"}]}",
			   "a Chrome trace");
	expect_refused_str("[{\"pid\":1,\"ph\":\"B\",\"name\":\"a\",\"ts\":1}]", "a Chrome trace");
	/* The first bytes of real prints (tests/data/README.md has neither file). */
	expect_refused_str("--- symbol\nbinary=/srv/pay\n0x00005558a5a755a0 handle_payment\n",
			   "gperftools' 'google-pprof --raw' output");
	expect_refused_str("v8-version,11,3,244,8,-node.38,0\nv8-platform,linux,linux\n",
			   "a V8 tick log (node --prof)");
	expect_refused_str("{\n  \"code\": [\n  {\n    \"name\": \"/usr/bin/node\",\n"
			   "    \"type\": \"SHARED_LIB\"\n  }],\n  \"ticks\": []}\n",
			   "the JSON of 'node --prof-process --preprocess'");
	/* Node 20's first bytes: its "nodes" once made it a .cpuprofile, refused obscurely. */
	expect_refused_str("{\"snapshot\":{\"meta\":{\"node_fields\":[\"type\",\"name\",\"id\","
			   "\"self_size\",\"edge_count\"]},\"node_count\":1},\"nodes\":[0,1,1,0,0],"
			   "\"edges\":[],\"strings\":[\"(root)\"]}",
			   "a V8 heap snapshot (.heapsnapshot)");
}

/* A file of tests/data and the words its refusal must hold. */
typedef struct refused_file {
	const char *file, *reason;
} refused_file;

/* Each file is detected as no format it reads and refused with its reason. */
static void expect_files_refused(const refused_file *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		buf text = BUF_INIT;

		testdata_read(&text, cases[i].file);
		assert_int_equal(format_detect((const uint8_t *)text.ptr, text.len),
				 PROFILE_FMT_AUTO);
		expect_refused(text.ptr, text.len, cases[i].reason);
		buf_release(&text);
	}
}

/*
 * Real prints of perf 6.1 and bpftrace 0.17 (tests/data/README.md): perf
 * report's summary, with its header or without (-q), and bpftrace's map
 * of stacks or of command names, with "Attaching 2 probes..." or without
 * (-q), or as JSON (-f json). None holds samples profreg can read, and
 * bpftrace's "@[burnlong]: 31" was read as a folded stack of one frame
 * named "@[burnlong]:".
 */
static void test_perf_report_and_bpftrace_prints_say_what_to_give(void **state)
{
	static const refused_file cases[] = {
		{"perf/burn-report.txt", "'perf report' output, percentages rather than samples; "
					 "give 'perf script' output instead"},
		{"perf/burn-report-q.txt", "'perf report' output"},
		{"bpftrace/burn-ustack.txt", "a bpftrace map print, counts per key rather than "
					     "stacks profreg can read; fold its stacks first "
					     "(FlameGraph's stackcollapse-bpftrace.pl)"},
		{"bpftrace/burn-ustack-q.txt", "a bpftrace map print"},
		{"bpftrace/burn-ustack.json", "a bpftrace map print"},
		{"bpftrace/burn-comm-q.txt", "a bpftrace map print"},
	};

	(void)state;
	expect_files_refused(cases, sizeof(cases) / sizeof(cases[0]));
	/* A folded stack may start with '@'; only "@...:" before the count is bpftrace's. */
	assert_int_equal(format_detect((const uint8_t *)"@main;work 3\n", 13), PROFILE_FMT_FOLDED);
	expect_refused_str("@name: 3\n", "a bpftrace map print");
}

/*
 * Real output of profilers whose files profreg does not read
 * (tests/data/README.md, "other"): each is refused saying what it is,
 * where before every one was "not a known profile format".
 */
static void test_other_profilers_files_are_named(void **state)
{
	static const refused_file cases[] = {
		{"other/burn-callgrind-head.out",
		 "a callgrind profile (valgrind --tool=callgrind)"},
		{"other/burn-cachegrind-head.out", "a cachegrind profile"},
		{"other/burn-massif.out", "a massif profile (valgrind --tool=massif)"},
		{"other/burn-heaptrack.zst", "zstd-compressed, which profreg does not decompress"},
		{"other/burn-heaptrack-head.txt", "a heaptrack recording; print its stacks with "
						  "'heaptrack_print -F STACKS FILE'"},
		{"other/austin-burn.pstats", "Python's profile statistics (cProfile"},
		{"other/stackprof-burn.dump", "a stackprof profile (Ruby); fold it with "
					      "'stackprof --stackcollapse FILE'"},
		{"other/stackprof-burn.json", "a stackprof profile (Ruby)"},
		{"other/pprofile-burn.callgrind", "pprofile's callgrind output (Python), hits "
						  "and time per line and call"},
		{"other/pprofile-burn-head.txt", "pprofile's annotated source (Python)"},
		{"other/perf-flamegraph.json", "a flame graph's JSON tree ('perf script report "
					       "flamegraph -f json')"},
		{"other/0x-flamegraph-head.html", "an HTML page (a flame graph or a report"},
	};

	(void)state;
	expect_files_refused(cases, sizeof(cases) / sizeof(cases[0]));
}

/* Once named and refused; now read, and not taken for a .cpuprofile. */
static void test_a_v8_heap_profile_is_detected_and_read(void **state)
{
	static const char text[] =
		"{\"head\":{\"callFrame\":{\"functionName\":\"(root)\",\"scriptId\":\"0\","
		"\"url\":\"\",\"lineNumber\":-1,\"columnNumber\":-1},\"selfSize\":0,\"id\":1,"
		"\"children\":[{\"callFrame\":{\"functionName\":\"nodes\",\"scriptId\":\"1\","
		"\"url\":\"file:///a.js\",\"lineNumber\":1,\"columnNumber\":1},"
		"\"selfSize\":4096,\"id\":2,\"children\":[]}]},\"samples\":[]}";
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;

	(void)state;
	assert_int_equal(format_detect((const uint8_t *)text, sizeof(text) - 1),
			 PROFILE_FMT_V8HEAP);
	if (format_parse(&p, (const uint8_t *)text, sizeof(text) - 1, PROFILE_FMT_AUTO, "h.json",
			 NULL, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(p->format, PROFILE_FMT_V8HEAP);
	assert_string_equal(p->value_types[p->primary].type, "inuse_space");
	profile_free(p);
}

static void test_a_gzipped_text_form_is_named_too(void **state)
{
	static const char text[] = "heap profile: 1: 8 [1: 8] @ heap/1048576\n";
	uint8_t gz[256];
	z_stream z;

	(void)state;
	memset(&z, 0, sizeof(z));
	assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = (Bytef *)text;
	z.avail_in = sizeof(text) - 1;
	z.next_out = gz;
	z.avail_out = sizeof(gz);
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	deflateEnd(&z);
	expect_refused(gz, sizeof(gz) - z.avail_out, "?debug=1");
}

static void test_other_unknown_bytes_list_the_formats(void **state)
{
	(void)state;
	expect_refused_str(
		"hello, world\nthis is no profile\n",
		"not a known profile format (pprof, folded, V8 cpuprofile, V8 heap profile, "
		"speedscope, perf script, JFR)");
	/* Near misses of the markers are not taken for them. */
	expect_refused_str("heap profile:\n", "not a known profile format");
	expect_refused_str("{\"head\": 1}", "not a known profile format");
	/* Nothing at all is no format, and says so rather than listing them. */
	expect_refused_str("", "empty, no profile (give --format folded");
	expect_refused_str(" \n\t\r\n", "only whitespace, no profile");
	/* A byte order mark is no content either. */
	expect_refused_str("\xef\xbb\xbf", "empty, no profile");
	expect_refused_str("\xef\xbb\xbf \n", "only whitespace, no profile");
}

/*
 * Folded stacks with a bad count among the lines the sniffer reads are
 * refused with the parser's reason and line, as every malformed input
 * is: "not a known profile format" would send the user to --format, for
 * a file plainly folded.
 */
static void test_folded_with_a_bad_count_early_names_the_line(void **state)
{
	(void)state;
	/* Numbers are not quoted: a count may be a card number pasted in. */
	expect_refused_str("main;a 10\nmain;b 1.5\n",
			   "line 2: count is not a whole number: '<3 bytes>'");
	expect_refused_str("main;a 10\nmain;b -3\n", "line 2: count is negative: '<2 bytes>'");
	expect_refused_str("\xef\xbb\xbfmain;b 1e3\nmain;a 10\nmain;c 2\n",
			   "line 1: no count at the end of the line, found '<3 bytes>'");
	/* A word for a count among mostly folded stacks: the line is named too. */
	expect_refused_str("main;a 5\nmain;a 5\nmain;a 5\nmain;a 5\nmain;a 5\nmain;b x\n",
			   "line 6: no count at the end of the line");
	/* Half the lines of another kind, or none with a good count: no format. */
	expect_refused_str("main;a 10\nhello, world\nthis is prose\nversion 1.5\n",
			   "not a known profile format");
	expect_refused_str("version 1.5\n", "not a known profile format");
	expect_refused_str("hello, world\nthis is no profile 2\n", "not a known profile format");
	/* Names and numbers without a stack: a Prometheus exposition, not a folded file. */
	expect_refused_str(
		"# HELP x\nhttp_requests_total 10\nprocess_cpu_seconds_total 1.5\nup 1\n",
		"not a known profile format");
}

/* The format detected and parsed; the profile is freed. */
static void expect_format(const char *text, profile_format want)
{
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;

	assert_int_equal(format_detect((const uint8_t *)text, strlen(text)), want);
	if (format_parse(&p, (const uint8_t *)text, strlen(text), PROFILE_FMT_AUTO, NAME, NULL,
			 &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(p->format, want);
	profile_free(p);
}

static void test_speedscope_and_v8_are_not_taken_for_each_other(void **state)
{
	/* A frame named "nodes", and a key "nodes" where nothing reads it. */
	static const char speedscope[] =
		"{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
		"\"shared\":{\"frames\":[{\"name\":\"nodes\",\"nodes\":[]}]},"
		"\"profiles\":[{\"type\":\"sampled\",\"name\":\"nodes\",\"unit\":\"none\","
		"\"startValue\":0,\"endValue\":1,\"samples\":[[0]],\"weights\":[1]}]}";
	/* Without "$schema", as older writers leave it out. */
	static const char no_schema[] =
		"{\"profiles\":[{\"type\":\"evented\",\"name\":\"p\",\"unit\":\"none\","
		"\"startValue\":0,\"endValue\":2,\"events\":[{\"type\":\"O\",\"frame\":0,"
		"\"at\":0},{\"type\":\"C\",\"frame\":0,\"at\":2}]}],"
		"\"shared\":{\"frames\":[{\"name\":\"a\"}]}}";
	/* A cpuprofile whose names are speedscope's keys and schema. */
	static const char v8[] =
		"{\"nodes\":[{\"id\":1,\"callFrame\":{\"functionName\":\"(root)\",\"url\":\"\"},"
		"\"children\":[2,3,4]},"
		"{\"id\":2,\"callFrame\":{\"functionName\":\"shared\",\"url\":\"profiles\"}},"
		"{\"id\":3,\"callFrame\":{\"functionName\":\"frames\",\"url\":\"$schema\"}},"
		"{\"id\":4,\"callFrame\":{\"functionName\":\"$schema\",\"url\":"
		"\"https://www.speedscope.app/file-format-schema.json\"}}],"
		"\"startTime\":0,\"endTime\":30,\"samples\":[2,3,4],\"timeDeltas\":[10,10,10]}";
	pr_error err = PR_ERROR_INIT;
	profile *p = (profile *)1;

	(void)state;
	expect_format(speedscope, PROFILE_FMT_SPEEDSCOPE);
	expect_format(no_schema, PROFILE_FMT_SPEEDSCOPE);
	expect_format(v8, PROFILE_FMT_V8);
	/* Each forced on the other is refused by its own parser. */
	assert_int_equal(format_parse(&p, (const uint8_t *)v8, strlen(v8), PROFILE_FMT_SPEEDSCOPE,
				      NAME, NULL, &err), PR_EDATA);
	assert_null(p);
	assert_non_null(strstr(err.msg, "cannot parse '" NAME "': no \"shared\" member"));
	pr_error_clear(&err);
	p = (profile *)1;
	assert_int_equal(format_parse(&p, (const uint8_t *)speedscope, strlen(speedscope),
				      PROFILE_FMT_V8, NAME, NULL, &err), PR_EDATA);
	assert_null(p);
	assert_non_null(strstr(err.msg, "cannot parse '" NAME "': no \"nodes\" member"));
}

static void test_speedscope_is_a_format_name(void **state)
{
	profile_format f = PROFILE_FMT_AUTO;

	(void)state;
	assert_int_equal(profile_format_from_name(&f, "speedscope"), 0);
	assert_int_equal(f, PROFILE_FMT_SPEEDSCOPE);
	assert_string_equal(profile_format_name(PROFILE_FMT_SPEEDSCOPE), "speedscope");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_go_text_forms_say_to_fetch_pprof),
		cmocka_unit_test(test_gperftools_profiles_say_to_convert),
		cmocka_unit_test(test_traces_and_perf_data_are_named),
		cmocka_unit_test(test_perf_report_and_bpftrace_prints_say_what_to_give),
		cmocka_unit_test(test_other_profilers_files_are_named),
		cmocka_unit_test(test_a_v8_heap_profile_is_detected_and_read),
		cmocka_unit_test(test_a_gzipped_text_form_is_named_too),
		cmocka_unit_test(test_other_unknown_bytes_list_the_formats),
		cmocka_unit_test(test_folded_with_a_bad_count_early_names_the_line),
		cmocka_unit_test(test_speedscope_and_v8_are_not_taken_for_each_other),
		cmocka_unit_test(test_speedscope_is_a_format_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
