/*
 * test_escalate.c: the two pieces of profreg escalate that decide from
 * numbers and bytes alone: a host's band (stats/band.h: median and
 * scaled MAD of its history, with the floors that keep a flat history
 * from turning every wobble into an escalation), and the parser of
 * Prometheus's query answers (pipeline/prom.h) against good, malformed,
 * truncated, hostile and oversized answers, each refused with one line
 * naming the query and the reason.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pipeline/prom.h"
#include "stats/band.h"

#define MADF 1.482602218505602

/* ---- the band ------------------------------------------------------------------ */

static void test_band_is_median_and_scaled_mad(void **state)
{
	const double x[] = {1, 2, 3, 4, 100};
	stats_band b;

	(void)state;
	assert_int_equal(stats_band_of(&b, x, 5, 4, 0, 0), 0);
	assert_int_equal(b.n, 5);
	assert_true(fabs(b.median - 3) < 1e-12);
	/* |x - 3| = 2 1 0 1 97: median 1, scaled */
	assert_true(fabs(b.mad - MADF) < 1e-12);
	assert_true(fabs(b.scale - MADF) < 1e-12);
	assert_true(fabs(b.hi - (3 + 4 * MADF)) < 1e-12);
	assert_true(fabs(stats_band_z(&b, 100) - 97 / MADF) < 1e-9);
	assert_true(stats_band_z(&b, 1) < 0);
}

static void test_a_wild_sample_in_the_history_barely_moves_the_band(void **state)
{
	double x[21];
	stats_band clean, wild;

	(void)state;
	for (int i = 0; i < 20; i++)
		x[i] = 0.050 + 0.001 * (i % 5);
	assert_int_equal(stats_band_of(&clean, x, 20, 4, 0.01, 0), 0);
	x[20] = 1000; /* one sample from an earlier incident */
	assert_int_equal(stats_band_of(&wild, x, 21, 4, 0.01, 0), 0);
	assert_true(fabs(wild.hi - clean.hi) < 0.002);
	assert_true(0.5 > wild.hi);
}

static void test_a_flat_history_uses_the_floors(void **state)
{
	double x[10], zero[3] = {0, 0, 0};
	stats_band b;

	(void)state;
	for (int i = 0; i < 10; i++)
		x[i] = 0.05;
	assert_int_equal(stats_band_of(&b, x, 10, 4, 0.05, 0), 0);
	assert_true(b.mad == 0);
	assert_true(fabs(b.scale - 0.0025) < 1e-12); /* 5% of the median */
	assert_true(fabs(b.hi - 0.06) < 1e-12);
	assert_true(0.055 <= b.hi && 0.07 > b.hi);
	/* an error rate of 0: the relative floor is 0 too, the absolute one holds */
	assert_int_equal(stats_band_of(&b, zero, 3, 4, 0.05, 0.01), 0);
	assert_true(fabs(b.scale - 0.01) < 1e-12 && fabs(b.hi - 0.04) < 1e-12);
	/* no floor at all: a flat history gives a zero scale and z 0 */
	assert_int_equal(stats_band_of(&b, zero, 3, 4, 0, 0), 0);
	assert_true(b.scale == 0 && stats_band_z(&b, 5) == 0);
}

static void test_band_refuses_bad_arguments(void **state)
{
	double x[3] = {1, 2, 3}, bad[3] = {1, NAN, 3}, inf[2] = {1, INFINITY};
	stats_band b;

	(void)state;
	assert_int_equal(stats_band_of(&b, x, 0, 4, 0.05, 0), STATS_EARG);
	assert_int_equal(stats_band_of(&b, x, 3, 0, 0.05, 0), STATS_EARG);
	assert_int_equal(stats_band_of(&b, x, 3, -1, 0.05, 0), STATS_EARG);
	assert_int_equal(stats_band_of(&b, x, 3, 4, -0.1, 0), STATS_EARG);
	assert_int_equal(stats_band_of(&b, x, 3, NAN, 0.05, 0), STATS_EARG);
	assert_int_equal(stats_band_of(&b, bad, 3, 4, 0.05, 0), STATS_EARG);
	assert_int_equal(stats_band_of(&b, inf, 2, 4, 0.05, 0), STATS_EARG);
	assert_int_equal(stats_band_of(NULL, x, 3, 4, 0.05, 0), STATS_EARG);
}

/* ---- Prometheus answers ------------------------------------------------------------ */

static int parse(prom_vector *v, const char *body, size_t max_series, pr_error *err)
{
	return prom_parse_vector(v, body, strlen(body), "instance", max_series,
				 "signal 'p99_latency'", err);
}

static void test_a_vector_is_keyed_by_the_host_label(void **state)
{
	const char *body =
		"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
		"{\"metric\":{\"instance\":\"10.0.0.1:9\",\"job\":\"a\"},\"value\":[1700000000.5,"
		"\"0.25\"]},"
		"{\"metric\":{\"instance\":\"10.0.0.2:9\"},\"value\":[1700000000,\"1e-3\"]},"
		"{\"metric\":{\"instance\":\"10.0.0.1:9\",\"job\":\"b\"},\"value\":[1,\"0.75\"]},"
		"{\"metric\":{\"instance\":\"10.0.0.1:9\",\"job\":\"c\"},\"value\":[1,\"0.5\"]},"
		"{\"metric\":{\"pod\":\"x\"},\"value\":[1,\"9\"]},"
		"{\"metric\":{\"instance\":\"10.0.0.3:9\"},\"value\":[1,\"NaN\"]},"
		"{\"metric\":{\"instance\":\"10.0.0.4:9\"},\"value\":[1,\"+Inf\"]}]}}";
	prom_vector v;
	pr_error err = PR_ERROR_INIT;

	(void)state;
	assert_int_equal(parse(&v, body, 100, &err), 0);
	assert_int_equal(v.n, 2);
	assert_int_equal(v.unlabelled, 1);
	assert_int_equal(v.nonfinite, 2);
	/* two series of one host: the larger value (signals get worse upwards) */
	assert_true(prom_vector_find(&v, "10.0.0.1:9")->value == 0.75);
	assert_true(prom_vector_find(&v, "10.0.0.2:9")->value == 0.001);
	assert_null(prom_vector_find(&v, "10.0.0.3:9"));
	prom_vector_release(&v);
	assert_int_equal(parse(&v,
			       "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\","
			       "\"result\":[]}}",
			       100, &err),
			 0);
	assert_int_equal(v.n, 0);
	prom_vector_release(&v);
}

typedef struct bad_case {
	const char *name;
	const char *body;
	int code;
	const char *why; /* in the message */
} bad_case;

static void test_bad_answers_are_refused_with_one_line(void **state)
{
	static const bad_case cases[] = {
		{"empty", "", PR_EDATA, "not JSON"},
		{"not JSON", "<html>502 Bad Gateway</html>", PR_EDATA, "not JSON"},
		{"truncated", "{\"status\":\"success\",\"data\":{\"resultType\":\"vec", PR_EDATA,
		 "truncated"},
		{"an array", "[1,2,3]", PR_EDATA, "no \"status\""},
		{"no status", "{\"data\":{}}", PR_EDATA, "no \"status\""},
		{"error answer",
		 "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"parse error at "
		 "char 5\"}",
		 PR_EDATA, "status 'error' (bad_data): parse error at char 5"},
		{"hostile error",
		 "{\"status\":\"error\",\"errorType\":\"x\\u001b[31m\",\"error\":\"a\\nb\\rc\"}",
		 PR_EDATA, "(x?[31m): a?b?c"},
		{"odd status", "{\"status\":\"maybe\"}", PR_EDATA, "status '(unknown)'"},
		{"no data", "{\"status\":\"success\"}", PR_EDATA, "no data.resultType"},
		{"matrix",
		 "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}}",
		 PR_EDATA, "result type 'matrix'"},
		{"scalar",
		 "{\"status\":\"success\",\"data\":{\"resultType\":\"scalar\","
		 "\"result\":[1,\"2\"]}}",
		 PR_EDATA, "result type 'scalar'"},
		{"result not an array",
		 "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":{}}}",
		 PR_EDATA, "no data.resultType"},
		{"value not a pair",
		 "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
		 "{\"metric\":{\"instance\":\"a\"},\"value\":[1,\"2\",3]}]}}",
		 PR_EDATA, "series 0 is not"},
		{"value a number",
		 "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
		 "{\"metric\":{\"instance\":\"a\"},\"value\":[1,2]}]}}",
		 PR_EDATA, "series 0 is not"},
		{"value not a number",
		 "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
		 "{\"metric\":{\"instance\":\"a\"},\"value\":[1,\"12abc\"]}]}}",
		 PR_EDATA, "series 0 is not"},
		{"time not a number",
		 "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
		 "{\"metric\":{\"instance\":\"a\"},\"value\":[\"now\",\"1\"]}]}}",
		 PR_EDATA, "series 0 is not"},
		{"metric not an object",
		 "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
		 "{\"metric\":{\"instance\":\"a\"},\"value\":[1,\"1\"]},"
		 "{\"metric\":\"a\",\"value\":[1,\"1\"]}]}}",
		 PR_EDATA, "series 1 is not"},
		{"duplicate keys",
		 "{\"status\":\"success\",\"status\":\"error\",\"data\":{}}", PR_EDATA,
		 "not JSON"},
		{"too many series",
		 "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
		 "{\"metric\":{\"instance\":\"a\"},\"value\":[1,\"1\"]},"
		 "{\"metric\":{\"instance\":\"b\"},\"value\":[1,\"1\"]},"
		 "{\"metric\":{\"instance\":\"c\"},\"value\":[1,\"1\"]}]}}",
		 PR_ELIMIT, "3 series, more than the 2 allowed"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		prom_vector v;
		pr_error err = PR_ERROR_INIT;
		int rc = parse(&v, cases[i].body, 2, &err);
		if (rc != cases[i].code || !strstr(err.msg, cases[i].why) ||
		    strncmp(err.msg, "cannot read prometheus answer to signal 'p99_latency': ",
			    55) != 0 ||
		    strchr(err.msg, '\n') || v.n != 0)
			fail_msg("%s: rc %d, message '%s'", cases[i].name, rc, err.msg);
		prom_vector_release(&v);
	}
}

static void test_hostile_labels_are_left_out(void **state)
{
	char body[4096], longkey[400];
	prom_vector v;
	pr_error err = PR_ERROR_INIT;

	(void)state;
	memset(longkey, 'h', 300);
	longkey[300] = '\0';
	snprintf(body, sizeof(body),
		 "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
		 "{\"metric\":{\"instance\":\"%s\"},\"value\":[1,\"1\"]},"
		 "{\"metric\":{\"instance\":\"a\\u001b[2Jb\"},\"value\":[1,\"1\"]},"
		 "{\"metric\":{\"instance\":\"\"},\"value\":[1,\"1\"]},"
		 "{\"metric\":{\"instance\":7},\"value\":[1,\"1\"]},"
		 "{\"metric\":{\"instance\":\"ok:1\"},\"value\":[1,\"2\"]}]}}",
		 longkey);
	assert_int_equal(parse(&v, body, 100, &err), 0);
	assert_int_equal(v.n, 1);
	assert_int_equal(v.unlabelled, 4);
	assert_string_equal(v.v[0].key, "ok:1");
	prom_vector_release(&v);
}

static void test_deep_nesting_and_huge_answers_do_not_crash(void **state)
{
	size_t depth = 200000, n = 2 * depth + 64;
	char *body = malloc(n);
	prom_vector v;
	pr_error err = PR_ERROR_INIT;
	int rc;

	(void)state;
	assert_non_null(body);
	memset(body, '[', depth);
	memset(body + depth, ']', depth);
	body[2 * depth] = '\0';
	rc = parse(&v, body, 100, &err);
	assert_int_equal(rc, PR_EDATA);
	assert_non_null(strstr(err.msg, "not JSON"));
	prom_vector_release(&v);
	free(body);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_band_is_median_and_scaled_mad),
		cmocka_unit_test(test_a_wild_sample_in_the_history_barely_moves_the_band),
		cmocka_unit_test(test_a_flat_history_uses_the_floors),
		cmocka_unit_test(test_band_refuses_bad_arguments),
		cmocka_unit_test(test_a_vector_is_keyed_by_the_host_label),
		cmocka_unit_test(test_bad_answers_are_refused_with_one_line),
		cmocka_unit_test(test_hostile_labels_are_left_out),
		cmocka_unit_test(test_deep_nesting_and_huge_answers_do_not_crash),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
