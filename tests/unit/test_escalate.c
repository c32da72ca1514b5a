/*
 * test_escalate.c: the two pieces of profreg escalate that decide from
 * numbers and bytes alone: a host's band (stats/band.h: median and
 * scaled MAD of its history, with the floors that keep a flat history
 * from turning every wobble into an escalation), and the parser of
 * Prometheus's query answers (pipeline/prom.h) against good, malformed,
 * truncated, hostile and oversized answers, each refused with one line
 * naming the query and the reason; and the escalation rules
 * (jobs/escrules.h) that escalate and the backtest's replay both follow:
 * a crossing, three runs outside to level 2, the level 2 window, the
 * cooldown before de-escalation and the session's hard expiry.
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
#include <time.h>
#include <cmocka.h>

#include "common/buf.h"
#include "jobs/escrules.h"
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

/* ---- the escalation rules ------------------------------------------------------------ */

#define SEC ((int64_t)1000000)
#define T0 ((int64_t)1780000000 * SEC)

static escrules_rules rules(void)
{
	escrules_rules r;

	memset(&r, 0, sizeof(r));
	r.min_samples = 5;
	r.band_mads = 4;
	r.large_mads = 12;
	r.rel_floor = 0.05;
	r.persist_runs = 3;
	r.cooldown_s = 300;
	r.every_s[1] = 120;
	r.every_s[2] = 0;
	r.level2_window_s = 600;
	return r;
}

/* One run: what was seen, the session open or not. */
static escrules_step_out step(escrules_host *h, bool outside, bool large, bool open,
			      int64_t at)
{
	escrules_rules r = rules();
	escrules_obs o;
	escrules_step_out out;

	memset(&o, 0, sizeof(o));
	o.seen = true;
	o.outside = outside;
	o.large = large;
	o.session_open = open;
	escrules_step(&out, h, &r, &o, at);
	return out;
}

static void test_judging_a_value_against_its_band(void **state)
{
	const double x[] = {0.050, 0.051, 0.049, 0.050, 0.052, 0.048};
	escrules_rules r = rules();
	escrules_judged j;

	(void)state;
	/* median 0.0500, scale max(MAD 0.0015, 5% of 0.05 = 0.0025): edge 0.06 */
	assert_int_equal(escrules_judge(&j, &r, x, 6, 0.059), 0);
	assert_true(j.judged && !j.outside && !j.large);
	assert_int_equal(escrules_judge(&j, &r, x, 6, 0.061), 0);
	assert_true(j.outside && !j.large);
	assert_true(fabs(j.hi - 0.06) < 1e-12 && fabs(j.z - 4.4) < 1e-9);
	assert_int_equal(escrules_judge(&j, &r, x, 6, 0.05 + 12.5 * 0.0025), 0);
	assert_true(j.outside && j.large);
	/* too little history: nothing judged, whatever the value */
	assert_int_equal(escrules_judge(&j, &r, x, 4, 1000), 0);
	assert_true(!j.judged && !j.outside);
	assert_int_equal(escrules_judge(&j, &r, NULL, 0, 1000), 0);
	assert_true(!j.judged && !j.outside);
}

static void test_a_crossing_opens_level_1_and_a_large_one_level_2(void **state)
{
	escrules_rules r = rules();
	escrules_host h, big;
	escrules_step_out o;

	(void)state;
	memset(&h, 0, sizeof(h));
	o = step(&h, false, false, true, T0);
	assert_int_equal(o.action, ESCRULES_NONE);
	assert_true(h.level == 0 && h.in_band_since == T0 && h.out_runs == 0);
	o = step(&h, true, false, true, T0 + 60 * SEC);
	assert_int_equal(o.action, ESCRULES_OPEN);
	assert_int_equal(o.to, 1);
	assert_true(h.level == 0 && h.out_runs == 1 && h.in_band_since == 0);
	escrules_opened(&h, &r, o.to, T0 + 60 * SEC);
	assert_true(h.level == 1 && h.last_capture == T0 + 60 * SEC && !h.level2_used);
	/* refused by admission (escrules_opened not called): still level 0, asked again */
	memset(&big, 0, sizeof(big));
	o = step(&big, true, true, true, T0);
	assert_int_equal(o.action, ESCRULES_OPEN);
	assert_int_equal(o.to, 2);
	escrules_opened(&big, &r, 2, T0);
	assert_true(big.level == 2 && big.level2_used && big.level2_until == T0 + 600 * SEC);
	/* a host not seen at level 0: nothing */
	memset(&h, 0, sizeof(h));
	{
		escrules_obs none;
		memset(&none, 0, sizeof(none));
		escrules_step(&o, &h, &r, &none, T0);
		assert_int_equal(o.action, ESCRULES_NONE);
		assert_true(!o.ended && h.in_band_since == 0);
	}
}

static void test_three_runs_outside_raise_level_2_once_for_its_window(void **state)
{
	escrules_rules r = rules();
	escrules_host h;
	escrules_step_out o;
	int64_t t = T0;

	(void)state;
	memset(&h, 0, sizeof(h));
	o = step(&h, true, false, true, t);
	escrules_opened(&h, &r, o.to, t);
	/* run 2 outside: level 1; its capture is every 120 s, not due after 60 */
	o = step(&h, true, false, true, t += 60 * SEC);
	assert_true(h.level == 1 && h.out_runs == 2 && !o.raised);
	assert_int_equal(o.action, ESCRULES_NONE);
	/* run 3 outside: level 2, its first capture at once */
	o = step(&h, true, false, true, t += 60 * SEC);
	assert_true(o.raised && h.level == 2 && h.level2_used);
	assert_true(h.level2_until == t + 600 * SEC);
	assert_int_equal(o.action, ESCRULES_CAPTURE);
	h.last_capture = t;
	/* level 2 captures back to back (every_s 0) */
	o = step(&h, true, false, true, t += 60 * SEC);
	assert_true(!o.raised && h.level == 2);
	assert_int_equal(o.action, ESCRULES_CAPTURE);
	h.last_capture = t;
	/* the window over: back to level 1, and level 2 is not used again in the session */
	t = h.level2_until;
	o = step(&h, true, true, true, t);
	assert_true(o.lowered && !o.raised && h.level == 1);
	o = step(&h, true, true, true, t += 60 * SEC);
	assert_true(!o.raised && h.level == 1);
}

static void test_back_inside_for_the_cooldown_deescalates(void **state)
{
	escrules_rules r = rules();
	escrules_host h;
	escrules_step_out o;
	int64_t t = T0;

	(void)state;
	memset(&h, 0, sizeof(h));
	o = step(&h, true, false, true, t);
	escrules_opened(&h, &r, 1, t);
	o = step(&h, false, false, true, t += 60 * SEC);
	assert_true(h.level == 1 && h.in_band_since == t && h.out_runs == 0);
	assert_int_equal(o.action, ESCRULES_NONE);
	/* outside again: the cooldown starts over */
	o = step(&h, true, false, true, t += 60 * SEC);
	assert_true(h.level == 1 && h.in_band_since == 0);
	int64_t back = t += 60 * SEC;
	o = step(&h, false, false, true, back);
	o = step(&h, false, false, true, back + 299 * SEC);
	assert_true(h.level == 1);
	assert_int_not_equal(o.action, ESCRULES_DEESCALATE);
	o = step(&h, false, false, true, back + 300 * SEC);
	assert_int_equal(o.action, ESCRULES_DEESCALATE);
	assert_int_equal(o.from, 1);
	assert_true(o.inside_us == 300 * SEC);
	assert_true(h.level == 0 && h.in_band_since == 0 && !h.level2_used);
}

static void test_the_hard_expiry_ends_the_level_whatever_the_signal(void **state)
{
	escrules_rules r = rules();
	escrules_host h;
	escrules_step_out o;
	escrules_obs gone;

	(void)state;
	memset(&h, 0, sizeof(h));
	o = step(&h, true, true, true, T0);
	escrules_opened(&h, &r, 2, T0);
	/* the session expired while the host is still outside: level 0, then asked again */
	o = step(&h, true, false, false, T0 + 900 * SEC);
	assert_true(o.ended && o.ended_from == 2);
	assert_int_equal(o.action, ESCRULES_OPEN);
	assert_true(h.level == 0 && !h.level2_used);
	/* not seen at all: ended, nothing else */
	escrules_opened(&h, &r, 1, T0 + 900 * SEC);
	memset(&gone, 0, sizeof(gone));
	escrules_step(&o, &h, &r, &gone, T0 + 1800 * SEC);
	assert_true(o.ended && o.ended_from == 1 && h.level == 0);
	assert_int_equal(o.action, ESCRULES_NONE);
	/* a session escalate opened but did not record is adopted */
	memset(&gone, 0, sizeof(gone));
	gone.seen = true;
	gone.adopt_level = 1;
	escrules_step(&o, &h, &r, &gone, T0 + 1860 * SEC);
	assert_true(o.adopted && h.level == 1 && o.from == 1);
	assert_int_equal(o.action, ESCRULES_CAPTURE);
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

/*
 * An answer may hold up to escalate.max_series (a million) series: each
 * is found by its key in time that does not grow with the series so far.
 * A scan of the keys so far took 14 s for 80,000, and over 40 s for
 * these 100,000 distinct keys each seen twice; a map takes well under 5.
 */
/*
 * Parse an answer of n hosts, each twice (the larger value kept), into
 * *v; the CPU milliseconds it took (this process's own: the machine's
 * load does not count).
 */
static double parse_hosts(prom_vector *v, int n)
{
	buf body = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	struct timespec t0, t1;
	int rc;

	assert_int_equal(buf_puts(&body, "{\"status\":\"success\",\"data\":{\"resultType\":"
					 "\"vector\",\"result\":["),
			 0);
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < n; i++)
			assert_int_equal(buf_printf(&body,
						    "%s{\"metric\":{\"instance\":\"10.%d.%d:9\"},"
						    "\"value\":[1,\"%d\"]}",
						    pass || i ? "," : "", i / 256, i % 256,
						    pass ? i : n - i),
					 0);
	assert_int_equal(buf_puts(&body, "]}}"), 0);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	rc = prom_parse_vector(v, body.ptr, body.len, "instance", 2 * (size_t)n, "signal 'x'",
			       &err);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	if (rc != 0)
		fail_msg("%s", err.msg);
	buf_release(&body);
	return (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
}

/*
 * Four times the series, about four times the work: a scan of the keys
 * so far made it sixteen (80,000 series took 34 s). Compared within the
 * run, in CPU time, so neither the machine nor the sanitizers decide.
 */
static void test_a_vector_of_many_series_parses_in_linear_time(void **state)
{
	enum { N = 100000 };
	prom_vector v;
	double small = 1e30, big = 1e30;
	char key[32];

	(void)state;
	for (int k = 0; k < 2; k++) {
		double t = parse_hosts(&v, N / 4);
		small = t < small ? t : small;
		prom_vector_release(&v);
	}
	for (int k = 0; k < 2; k++) {
		double t = parse_hosts(&v, N);
		big = t < big ? t : big;
		if (k == 0)
			prom_vector_release(&v);
	}
	assert_int_equal(v.n, N);
	for (int i = 0; i < N; i += 997) {
		snprintf(key, sizeof(key), "10.%d.%d:9", i / 256, i % 256);
		assert_non_null(prom_vector_find(&v, key));
		/* the larger of the host's two values */
		assert_true(prom_vector_find(&v, key)->value == (i > N - i ? i : N - i));
	}
	assert_null(prom_vector_find(&v, "10.0.0:8"));
	if (big > 9 * small)
		fail_msg("%d series took %.0f ms of CPU, %d took %.0f ms: not linear", N / 4, small,
			 N, big);
	prom_vector_release(&v);
}

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
	/* Room for its 200,000 arrays, so that the parser is the one to see them. */
	rc = parse(&v, body, 100000, &err);
	assert_int_equal(rc, PR_EDATA);
	assert_non_null(strstr(err.msg, "not JSON"));
	prom_vector_release(&v);
	free(body);
}

/*
 * 4 MiB of empty objects under a key nothing reads, beside an empty
 * result: jansson took 333 MB to build them before anything was checked.
 * Refused from a count of the brackets, before any is built; brackets
 * inside strings do not count, and a vector of exactly max_series series
 * with a warnings array still parses.
 */
static void test_an_answer_of_empty_objects_is_refused_before_it_is_built(void **state)
{
	const char head[] = "{\"status\":\"success\",\"junk\":[",
		   tail[] = "{}],\"data\":{\"resultType\":\"vector\",\"result\":[]}}";
	size_t n = (size_t)4 << 20, at = 0;
	char *body = malloc(n + sizeof(head) + sizeof(tail));
	buf ok = BUF_INIT;
	prom_vector v;
	pr_error err = PR_ERROR_INIT;

	(void)state;
	assert_non_null(body);
	memcpy(body, head, sizeof(head) - 1);
	at = sizeof(head) - 1;
	for (; at + 3 < n; at += 3)
		memcpy(body + at, "{},", 3);
	memcpy(body + at, tail, sizeof(tail));
	assert_int_equal(parse(&v, body, 10000, &err), PR_ELIMIT);
	assert_non_null(strstr(err.msg, "more objects and arrays than 10000 series hold (30064 at "
					"most), not read"));
	assert_int_equal(v.n, 0);
	prom_vector_release(&v);
	free(body);

	pr_error_clear(&err);
	assert_int_equal(buf_puts(&ok, "{\"status\":\"success\",\"warnings\":[\"[[[{{{\"],"
				       "\"data\":{\"resultType\":\"vector\",\"result\":["),
			 0);
	for (int i = 0; i < 100; i++)
		assert_int_equal(buf_printf(&ok,
					    "%s{\"metric\":{\"instance\":\"h%d:1\","
					    "\"le\":\"{[\"},\"value\":[1,\"%d\"]}",
					    i ? "," : "", i, i),
				 0);
	assert_int_equal(buf_puts(&ok, "]}}"), 0);
	assert_int_equal(parse(&v, ok.ptr, 100, &err), 0);
	assert_int_equal(v.n, 100);
	prom_vector_release(&v);
	buf_release(&ok);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_band_is_median_and_scaled_mad),
		cmocka_unit_test(test_a_wild_sample_in_the_history_barely_moves_the_band),
		cmocka_unit_test(test_a_flat_history_uses_the_floors),
		cmocka_unit_test(test_band_refuses_bad_arguments),
		cmocka_unit_test(test_judging_a_value_against_its_band),
		cmocka_unit_test(test_a_crossing_opens_level_1_and_a_large_one_level_2),
		cmocka_unit_test(test_three_runs_outside_raise_level_2_once_for_its_window),
		cmocka_unit_test(test_back_inside_for_the_cooldown_deescalates),
		cmocka_unit_test(test_the_hard_expiry_ends_the_level_whatever_the_signal),
		cmocka_unit_test(test_a_vector_is_keyed_by_the_host_label),
		cmocka_unit_test(test_a_vector_of_many_series_parses_in_linear_time),
		cmocka_unit_test(test_bad_answers_are_refused_with_one_line),
		cmocka_unit_test(test_hostile_labels_are_left_out),
		cmocka_unit_test(test_deep_nesting_and_huge_answers_do_not_crash),
		cmocka_unit_test(test_an_answer_of_empty_objects_is_refused_before_it_is_built),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
