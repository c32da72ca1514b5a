/*
 * test_analysis_order.c: two orders the analysis depends on, against a
 * real PostgreSQL and blob store, through analysis_add and
 * analysis_finish: the sums over a service's functions (release noise
 * factors, release heterogeneity) do not depend on the order of the
 * functions' ids, to the last bit; and the dilution check takes the
 * largest relative change first, so a large function that only fell
 * because others rose is a relative shift even where it fell by more
 * points than any of them rose, while a function that fell of its own
 * beside one that rose stays an improvement.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "baselines/analysis.h"
#include "jobs/config.h"
#include "pipeline/blob.h"
#include "pipeline/ingest.h"
#include "tests/support/testdb.h"

#define DAY (86400LL * 1000000LL)
#define HOUR (3600LL * 1000000LL)
/* The night of the judged release ends here: 2026-06-15T00:00:00Z. */
#define NIGHT_END 1781481600000000LL

typedef struct fx {
	testdb *t;
	blob_store *bs;
	config cfg;
	char dir[512];
	unsigned seed;
	int seq;
} fx;

static fx F;

/* Uniform on [0, 1), from a fixed sequence. */
static double uniform(fx *f)
{
	f->seed = f->seed * 1103515245u + 12345u;
	return (double)((f->seed >> 8) & 0xffff) / 65536.0;
}

/* About standard normal: 12 uniforms, centred. */
static double gauss(fx *f)
{
	double s = 0;

	for (int i = 0; i < 12; i++)
		s += uniform(f);
	return s - 6;
}

/*
 * Write one folded capture of service `service` (functions
 * "<service>.<names[i]>", one frame each, self values w[0..n-1]) and
 * ingest it.
 */
static void ingest_weights(fx *f, const char *service, const char *release, int64_t at,
			   const char *const *names, const long *w, size_t n)
{
	char path[600];
	FILE *out;
	ingest_request req;
	ingest_result res;
	pr_error err = PR_ERROR_INIT;

	snprintf(path, sizeof(path), "%s/c%d.folded", f->dir, ++f->seq);
	assert_non_null(out = fopen(path, "w"));
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s.%s %ld\n", service, names[i], w[i]);
	assert_int_equal(fclose(out), 0);
	memset(&req, 0, sizeof(req));
	req.path = path;
	req.service = service;
	req.release = release;
	req.time_us = at;
	req.type = "cpu";
	req.format = PROFILE_FMT_FOLDED;
	if (ingest_file(&res, f->t->db, f->bs, &req, &f->cfg.limits, &err) < 0)
		fail_msg("ingest: %s", err.msg);
}

static int64_t service_id(fx *f, const char *name)
{
	char q[256];

	snprintf(q, sizeof(q), "select id from services where name = '%s'", name);
	return testdb_int(f->t, q);
}

static int64_t function_id(fx *f, const char *name)
{
	char q[256];

	snprintf(q, sizeof(q), "select id from functions where name = '%s'", name);
	return testdb_int(f->t, q);
}

/* Analyse one service's release v3 at NIGHT_END into *a (not finished). */
static void add_target(fx *f, analysis *a, const char *name)
{
	analysis_opts o;
	analysis_target t = {service_id(f, name), name, "cpu", "v3", 0, 0, NULL, NULL, NULL, NULL};
	pr_error err = PR_ERROR_INIT;

	analysis_opts_default(&o);
	o.at_us = NIGHT_END;
	analysis_init(a, &o);
	if (analysis_add(a, f->t->db, &t, false, &err) < 0)
		fail_msg("%s: %s", name, err.msg);
}

static void finish(analysis *a)
{
	pr_error err = PR_ERROR_INIT;

	if (analysis_finish(a, &err) < 0)
		fail_msg("%s", err.msg);
}

/* The test of function "<service>.<fn>", or NULL. */
static const finding *test_of(const analysis *a, const char *service, const char *fn)
{
	char name[64];

	snprintf(name, sizeof(name), "%s.%s", service, fn);
	for (size_t i = 0; i < a->ntests; i++)
		if (strcmp(a->tests[i].function, name) == 0)
			return &a->tests[i];
	return NULL;
}

static int setup(void **state)
{
	const char *base = getenv("PROFREG_TEST_TMP");
	pr_error err = PR_ERROR_INIT;
	int rc;

	if ((rc = testdb_reset(state)) != 0)
		return rc;
	memset(&F, 0, sizeof(F));
	F.t = *state;
	F.seed = 7;
	snprintf(F.dir, sizeof(F.dir), "%s/order-XXXXXX", base ? base : "/tmp");
	if (!mkdtemp(F.dir))
		return -1;
	if (blob_store_open_dir(&F.bs, F.dir, &err) < 0 || config_load(&F.cfg, NULL, &err) < 0) {
		fprintf(stderr, "cannot set up: %s\n", err.msg);
		return -1;
	}
	testdb_execf(F.t, "insert into functions (name, file, synthetic)"
		  " values ('(other functions)', '(profreg summary)', true)");
	*state = &F;
	return 0;
}

static int teardown(void **state)
{
	fx *f = *state;
	char cmd[600];

	blob_store_free(f->bs);
	config_release(&f->cfg);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	*state = f->t;
	return system(cmd) == 0 ? 0 : -1;
}

/*
 * Twelve functions whose self values span three orders of magnitude (60%
 * of a capture down to 0.2%) and whose capture-to-capture spread ranges
 * from 1% to 30%, in three releases: v1 and v2 (10 captures each; v2
 * moved some means by a few percent, so the releases differ beyond
 * noise and the heterogeneity sum counts) and v3, the judged one (4
 * captures). The sums over functions of numbers this different round
 * differently in another order.
 */
#define ORDER_N 12
static const long order_weight[ORDER_N] = {400000, 150000, 60000, 25000, 9000, 5000,
					   3500, 2500, 2000, 1700, 1500, 1300};
static const double order_cv[ORDER_N] = {0.01, 0.3, 0.02, 0.15, 0.05, 0.25,
					 0.01, 0.2, 0.04, 0.1, 0.3, 0.02};
static const double order_v2[ORDER_N] = {1, 1.04, 0.97, 1, 1.08, 1, 0.95, 1, 1.03, 1, 1, 1.06};
static const char *const order_names[ORDER_N] = {"f00", "f01", "f02", "f03", "f04", "f05",
						 "f06", "f07", "f08", "f09", "f10", "f11"};

/* One capture of v1, v2 or v3, ingested the same for both services. */
static void order_capture(fx *f, const char *release, int64_t at)
{
	long w[ORDER_N];

	for (size_t i = 0; i < ORDER_N; i++) {
		double m = strcmp(release, "v1") == 0 ? 1 : order_v2[i];
		w[i] = lround(order_weight[i] * m * fmax(0.2, 1 + order_cv[i] * gauss(f)));
	}
	ingest_weights(f, "asc", release, at, order_names, w, ORDER_N);
	ingest_weights(f, "desc", release, at, order_names, w, ORDER_N);
}

/* x and y are the same to the last bit (a NaN only equals the same NaN). */
static void same_bits(double x, double y, const char *fn, const char *what)
{
	if (memcmp(&x, &y, sizeof(x)) != 0)
		fail_msg("%s %s: %.17g with ids ascending, %.17g descending", fn, what, x, y);
}

/* A target's release heterogeneity and noise factors, from the part JSON. */
static void same_target_numbers(const analysis *a, const analysis *b)
{
	json_t *pa = NULL, *pb = NULL, *ta, *tb, *na, *nb;
	static const char *const keys[] = {"phi", "phi_df"};
	size_t informed = 0;

	assert_int_equal(analysis_part_json(&pa, a), 0);
	assert_int_equal(analysis_part_json(&pb, b), 0);
	ta = json_array_get(json_object_get(pa, "targets"), 0);
	tb = json_array_get(json_object_get(pb, "targets"), 0);
	assert_non_null(ta);
	assert_non_null(tb);
	for (size_t i = 0; i < 2; i++) {
		json_t *x = json_object_get(ta, keys[i]), *y = json_object_get(tb, keys[i]);
		assert_true(json_is_real(x) && json_is_real(y));
		same_bits(json_real_value(x), json_real_value(y), "service", keys[i]);
	}
	/* The releases do differ beyond noise: phi counts. */
	assert_true(json_real_value(json_object_get(ta, "phi")) > 1);
	na = json_object_get(ta, "noise");
	nb = json_object_get(tb, "noise");
	assert_int_equal(json_array_size(na), json_array_size(nb));
	for (size_t r = 0; r < json_array_size(na); r++) {
		json_t *x = json_array_get(na, r), *y = json_array_get(nb, r);
		assert_int_equal(json_is_null(x), json_is_null(y));
		if (json_is_null(x))
			continue;
		same_bits(json_real_value(x), json_real_value(y), "service", "noise factor");
		informed++;
	}
	/* v1, v2 and the judged captures each have a factor. */
	assert_true(informed >= 3);
	json_decref(pa);
	json_decref(pb);
}

/*
 * A night over several workers stores new function names in whichever
 * order the workers reach them, so the same service's functions can get
 * their ids in any order. "asc" and "desc" hold the same captures; asc's
 * functions got their ids largest first, desc's smallest first. Every number
 * the analysis gives (heterogeneity, release noise factors, every test's
 * shares, p-values, interval and q-value) is the same to the last bit.
 */
static void test_ids_in_another_order_give_the_same_numbers_to_the_last_bit(void **state)
{
	fx *f = *state;
	analysis a, b;

	testdb_execf(f->t, "insert into services (name, enabled)"
			   " values ('asc', true), ('desc', true)");
	for (int i = 0; i < ORDER_N; i++)
		testdb_execf(f->t, "insert into functions (name) values ('asc.f%02d')", i);
	for (int i = ORDER_N - 1; i >= 0; i--)
		testdb_execf(f->t, "insert into functions (name) values ('desc.f%02d')", i);
	for (int i = 0; i < 10; i++)
		order_capture(f, "v1", NIGHT_END - 13 * DAY + i * 12 * HOUR);
	for (int i = 0; i < 10; i++)
		order_capture(f, "v2", NIGHT_END - 7 * DAY + i * 12 * HOUR);
	for (int i = 0; i < 4; i++)
		order_capture(f, "v3", NIGHT_END - 20 * HOUR + i * 4 * HOUR);
	/* The ids are in the two orders, and ingest added no function of its own. */
	assert_true(function_id(f, "asc.f00") < function_id(f, "asc.f11"));
	assert_true(function_id(f, "desc.f00") > function_id(f, "desc.f11"));
	assert_int_equal(testdb_int(f->t, "select count(*) from functions"), 1 + 2 * ORDER_N);

	add_target(f, &a, "asc");
	add_target(f, &b, "desc");
	same_target_numbers(&a, &b);
	finish(&a);
	finish(&b);
	assert_int_equal(a.ntests, b.ntests);
	for (int i = 0; i < ORDER_N; i++) {
		const char *fn = order_names[i];
		const finding *x, *y;
		assert_non_null(x = test_of(&a, "asc", fn));
		assert_non_null(y = test_of(&b, "desc", fn));
		same_bits(x->baseline_share, y->baseline_share, fn, "baseline_share");
		same_bits(x->current_share, y->current_share, fn, "current_share");
		same_bits(x->ci_low, y->ci_low, fn, "ci_low");
		same_bits(x->ci_high, y->ci_high, fn, "ci_high");
		same_bits(x->p_up, y->p_up, fn, "p_up");
		same_bits(x->p_down, y->p_down, fn, "p_down");
		same_bits(x->p_value, y->p_value, fn, "p_value");
		same_bits(x->mw_p, y->mw_p, fn, "mw_p");
		same_bits(x->p_seq, y->p_seq, fn, "p_seq");
		same_bits(x->q_value, y->q_value, fn, "q_value");
		same_bits(x->score, y->score, fn, "score");
		assert_int_equal(x->direction, y->direction);
		assert_int_equal(x->significant, y->significant);
	}
	analysis_release(&a);
	analysis_release(&b);
}

/*
 * Dilution, in self values per capture of about a million samples: big
 * 840,000, small 40,000, medium 80,000, steady 40,000 in v1 (28
 * captures over 14 days); in v3 (4 captures) small doubles to 80,000 and
 * medium rises by half to 120,000, nothing else changes. Each weight
 * varies by 2% from capture to capture. The shares:
 *
 *   function  v1     v3      points   relative
 *   small     4%     7.41%   +3.41    +85%
 *   medium    8%    11.11%   +3.11    +39%
 *   big      84%    77.78%   -6.22     -7.4%
 *   steady    4%     3.70%   -0.30     -7.4%
 *
 * All four moved significantly, but big and steady only fell because
 * the others rose. Taken largest relative change first, small moved;
 * medium, with small's samples taken out, still rose (8.3% -> 12%);
 * big, with both taken out, is where it was (84 / 88 of the rest): a
 * relative shift, as is steady. Taken by points, big comes first and
 * everything turns round: big and steady are improvements, small and
 * medium relative shifts of them. (With one function rising alone the
 * falls add up to its rise, so it takes two risers for a diluted
 * function to fall by more points than any riser rose.)
 */
static void test_dilution_takes_the_largest_relative_change_first(void **state)
{
	static const char *const names[] = {"big", "small", "medium", "steady"};
	static const long v1[] = {840000, 40000, 80000, 40000};
	static const long v3[] = {840000, 80000, 120000, 40000};
	fx *f = *state;
	analysis a;
	const finding *big, *small, *medium, *steady;

	testdb_execf(f->t, "insert into services (name, enabled) values ('dilute', true)");
	for (int i = 0; i < 32; i++) {
		const long *m = i < 28 ? v1 : v3;
		int64_t at = i < 28 ? NIGHT_END - 14 * DAY + i * 12 * HOUR
				    : NIGHT_END - 20 * HOUR + (i - 28) * 4 * HOUR;
		long w[4];
		for (size_t k = 0; k < 4; k++)
			w[k] = lround((double)m[k] * (1 + 0.02 * gauss(f)));
		ingest_weights(f, "dilute", i < 28 ? "v1" : "v3", at, names, w, 4);
	}
	add_target(f, &a, "dilute");
	finish(&a);
	assert_non_null(big = test_of(&a, "dilute", "big"));
	assert_non_null(small = test_of(&a, "dilute", "small"));
	assert_non_null(medium = test_of(&a, "dilute", "medium"));
	assert_non_null(steady = test_of(&a, "dilute", "steady"));
	/* The premise: big fell by more points than either riser rose, by less relatively. */
	assert_true(-big->delta > small->delta && -big->delta > medium->delta);
	assert_true(-big->rel_delta < medium->rel_delta && medium->rel_delta < small->rel_delta);
	/* The two risers are regressions of their own. */
	assert_true(small->significant);
	assert_int_equal(small->direction, FINDING_REGRESSION);
	assert_false(small->diluted);
	assert_true(medium->significant);
	assert_int_equal(medium->direction, FINDING_REGRESSION);
	assert_false(medium->diluted);
	/* big and steady were significant falls that the renormalised re-test relabelled. */
	assert_true(big->significant);
	assert_int_equal(big->direction, FINDING_RELATIVE_SHIFT);
	assert_string_equal(finding_dir_name(big->direction), "relative_shift");
	assert_true(big->diluted);
	assert_true(steady->significant);
	assert_int_equal(steady->direction, FINDING_RELATIVE_SHIFT);
	assert_true(steady->diluted);
	assert_int_equal(a.diluted, 2);
	/* No improvement is reported: nothing got cheaper. */
	for (size_t i = 0; i < a.ntests; i++)
		if (a.tests[i].significant && a.tests[i].direction == FINDING_IMPROVEMENT)
			fail_msg("improvement reported: %s", a.tests[i].function);
	analysis_release(&a);
}

/*
 * A release that makes one function twice as costly and another three
 * times cheaper, and a release that replaces a function by new code
 * elsewhere (another class: not a rename, which would be judged as one
 * function):
 *
 *   function  v1     v3               function  v1     v3
 *   doubled   10%    20.0%            gone      9.5%   0
 *   cheaper   15%     5.0%            other.new 0      9.5%
 *   rest      75%    75.0%            rest      90.5%  90.5%
 *
 * Taken largest relative change first, doubled (and new) moved. cheaper,
 * re-tested without doubled, still fell from 16.7% to 6.3% of the rest;
 * gone still fell to nothing. Both are the family's only fall, and the
 * re-test compared them with the largest p-value the family accepted,
 * their own: with fewer samples behind a renormalised share their
 * p-values could only grow, and both became relative shifts of the
 * function that rose. Against the family's cut-off they stay
 * improvements.
 */
static void test_a_fall_of_its_own_beside_a_rise_is_an_improvement(void **state)
{
	static const char *const names[] = {"doubled", "cheaper", "rest"};
	static const long v1[] = {100000, 150000, 750000};
	static const long v3[] = {200000, 50000, 750000};
	static const char *const names2[] = {"gone", "other.new", "rest"};
	static const long w1[] = {95000, 0, 905000};
	static const long w3[] = {0, 95000, 905000};
	fx *f = *state;
	analysis a;
	pr_error err = PR_ERROR_INIT;
	const finding *doubled, *cheaper, *gone, *added;

	testdb_execf(f->t, "insert into services (name, enabled) values ('both', true)");
	testdb_execf(f->t, "insert into services (name, enabled) values ('swap', true)");
	for (int i = 0; i < 32; i++) {
		int64_t at = i < 28 ? NIGHT_END - 14 * DAY + i * 12 * HOUR
				    : NIGHT_END - 20 * HOUR + (i - 28) * 4 * HOUR;
		long w[3], x[3];
		for (size_t k = 0; k < 3; k++) {
			w[k] = lround((double)(i < 28 ? v1 : v3)[k] * (1 + 0.02 * gauss(f)));
			x[k] = lround((double)(i < 28 ? w1 : w3)[k] * (1 + 0.02 * gauss(f)));
		}
		ingest_weights(f, "both", i < 28 ? "v1" : "v3", at, names, w, 3);
		ingest_weights(f, "swap", i < 28 ? "v1" : "v3", at, names2, x, 3);
	}
	add_target(f, &a, "both");
	{
		analysis_target t = {service_id(f, "swap"), "swap", "cpu", "v3", 0, 0,
				     NULL, NULL, NULL, NULL};
		if (analysis_add(&a, f->t->db, &t, false, &err) < 0)
			fail_msg("swap: %s", err.msg);
	}
	finish(&a);
	assert_non_null(doubled = test_of(&a, "both", "doubled"));
	assert_non_null(cheaper = test_of(&a, "both", "cheaper"));
	assert_non_null(gone = test_of(&a, "swap", "gone"));
	assert_non_null(added = test_of(&a, "swap", "other.new"));
	assert_true(doubled->significant);
	assert_int_equal(doubled->direction, FINDING_REGRESSION);
	assert_true(added->significant);
	assert_int_equal(added->direction, FINDING_REGRESSION);
	assert_true(cheaper->significant);
	assert_int_equal(cheaper->direction, FINDING_IMPROVEMENT);
	assert_false(cheaper->diluted);
	assert_true(gone->significant);
	assert_int_equal(gone->direction, FINDING_IMPROVEMENT);
	assert_false(gone->diluted);
	assert_int_equal(a.diluted, 0);
	analysis_release(&a);
}

/*
 * A blind spot worked by hand (Python's math and NormalDist, not this
 * code): a function of 25% (arcsine-root 0.5236), the captures' standard
 * error 0.05 on that scale, a normal df, one test, look 1 of 4 (half the
 * alpha: a cut-off of 0.025), margin 0.01, the high gate's 2 points. The
 * rise found four times in five is max(1.960 x 0.05, 0.01, 0.0230 + 1.960
 * x 0.05) + 0.842 x 0.05 = 0.1631: to 40.17%, the service 25.36%
 * costlier; the margin and points alone, 27%: 2.74%.
 */
static void test_a_blind_spot_is_the_rise_found_four_times_in_five(void **state)
{
	analysis a;
	finding f[10]; /* f[1..9]: other tests of the run, none of a share */
	analysis_blind *b = NULL;
	size_t n = 0;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(f, 0, sizeof(f));
	analysis_opts_default(&a.opts);
	f[0].kind = FINDING_KIND_SHARE;
	f[0].function = "hot";
	f[0].look = f[0].first_look = 1;
	f[0].vst_base = asin(sqrt(0.25));
	f[0].vst_se = 0.05;
	f[0].vst_df = 1e9;
	f[0].vst_margin = 0.01;
	a.tests = f;
	a.ntests = a.ntargets = 1;
	assert_int_equal(analysis_blind_spots(&b, &n, &a, STATS_SEV_HIGH), 0);
	assert_int_equal(n, 1);
	assert_ptr_equal(b[0].f, &f[0]);
	assert_true(fabs(b[0].from - 0.25) < 1e-9);
	assert_true(fabs(b[0].to - 0.40173) < 2e-4);
	assert_true(fabs(b[0].unseen - 0.25361) < 2e-4);
	assert_true(fabs(b[0].by_design - 0.02740) < 2e-4);
	assert_true(fabs(b[0].excess - (b[0].unseen - b[0].by_design)) < 1e-12);
	free(b);
	/* Ten tests in the run: a stricter cut-off, a larger blind spot. */
	a.ntests = 10;
	assert_int_equal(analysis_blind_spots(&b, &n, &a, STATS_SEV_HIGH), 0);
	assert_true(n == 1 && b[0].unseen > 0.26);
	free(b);
	/* A test without the captures' error (a cost test) has none. */
	f[0].vst_se = 0;
	assert_int_equal(analysis_blind_spots(&b, &n, &a, STATS_SEV_HIGH), 0);
	assert_int_equal(n, 0);
	assert_null(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_blind_spot_is_the_rise_found_four_times_in_five),
		cmocka_unit_test_setup_teardown(
			test_ids_in_another_order_give_the_same_numbers_to_the_last_bit, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_dilution_takes_the_largest_relative_change_first, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_fall_of_its_own_beside_a_rise_is_an_improvement, setup, teardown),
	};

	return cmocka_run_group_tests(tests, testdb_group_setup, testdb_group_teardown);
}
