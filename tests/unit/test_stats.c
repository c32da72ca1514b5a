/*
 * test_stats.c: the statistics module against SciPy reference values, and
 * the properties every caller relies on.
 *
 * Reference numbers were computed with SciPy 1.10 / NumPy (Debian
 * python3-scipy) by tests/data/stats/refs.py, whose full output is
 * tests/data/stats/refs.txt. The Python above each test is the part of
 * that script the test checks. Common inputs:
 *   BASE = [0.2231, 0.2264, 0.2219, 0.2290, 0.2247, 0.2275, 0.2238, 0.2259,
 *           0.2282, 0.2226, 0.2270, 0.2251]
 *   CUR  = [0.2330, 0.2361, 0.2312, 0.2349]
 *   b, c = np.array(BASE), np.array(CUR)
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "common/error.h"
#include "stats/fdr.h"
#include "stats/pool.h"
#include "stats/rank.h"
#include "stats/stats.h"
#include "stats/test.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
#define REL 1e-9
#define PI 3.14159265358979323846

static const double BASE[] = {0.2231, 0.2264, 0.2219, 0.2290, 0.2247, 0.2275,
			      0.2238, 0.2259, 0.2282, 0.2226, 0.2270, 0.2251};
static const double CUR[] = {0.2330, 0.2361, 0.2312, 0.2349};
static const double ODD[] = {3.0, -1.5, 7.25, 0.0, 2.5, 2.5, 11.0};

/* |got - want| <= rel * |want|; infinities must match exactly. */
static void near(double got, double want, double rel, const char *what)
{
	if (isinf(want) || isinf(got)) {
		if (got != want)
			fail_msg("%s: got %.17g, want %.17g", what, got, want);
		return;
	}
	if (!(fabs(got - want) <= rel * fabs(want)))
		fail_msg("%s: got %.17g, want %.17g", what, got, want);
}

static stats_sample sample(const double *x, size_t n)
{
	stats_sample s;

	assert_int_equal(stats_sample_of(&s, x, n, 0), 0);
	return s;
}

/* Small deterministic generator for the property tests (splitmix64). */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static double uniform(void)
{
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	z ^= z >> 31;
	return (double)(z >> 11) / 9007199254740992.0;
}

/* ---- return codes ---- */

static void test_error_codes_equal_profreg_codes(void **state)
{
	(void)state;
	assert_int_equal(STATS_EARG, PR_EUSAGE);
	assert_int_equal(STATS_EDATA, PR_EDATA);
	assert_int_equal(STATS_ENOMEM, PR_ENOMEM);
	assert_string_equal(stats_error_name(STATS_EDATA), "too few observations or no variance");
	assert_string_equal(stats_error_name(12345), "unknown error");
}

/* ---- descriptives ---- */

/*
 * np.mean(b); np.var(b, ddof=1)
 *   0.22543333333333329  5.2296969696969866e-06
 */
static void test_mean_and_sample_variance_match_numpy(void **state)
{
	stats_sample s;
	double m, v;

	(void)state;
	assert_int_equal(stats_mean(&m, BASE, N_OF(BASE)), 0);
	assert_int_equal(stats_variance(&v, BASE, N_OF(BASE)), 0);
	near(m, 0.22543333333333329, 1e-12, "mean");
	near(v, 5.2296969696969866e-06, REL, "variance");
	assert_int_equal(stats_sample_of(&s, BASE, N_OF(BASE), 1e-7), 0);
	assert_int_equal(s.n, N_OF(BASE));
	near(s.mean, m, 0, "sample mean");
	near(s.var, v, 0, "sample var");
	near(s.var_floor, 1e-7, 0, "sample floor");
}

/*
 * np.median(b) -> 0.22549999999999998; np.median(ODD) -> 2.5
 *   ODD = [3.0, -1.5, 7.25, 0.0, 2.5, 2.5, 11.0]
 */
static void test_median_of_even_and_odd_samples_matches_numpy(void **state)
{
	double m;

	(void)state;
	assert_int_equal(stats_median(&m, BASE, N_OF(BASE)), 0);
	near(m, 0.22549999999999998, 1e-15, "even median");
	assert_int_equal(stats_median(&m, ODD, N_OF(ODD)), 0);
	near(m, 2.5, 0, "odd median");
	assert_int_equal(stats_median(&m, (double[]){4.0}, 1), 0);
	near(m, 4.0, 0, "single median");
}

/*
 * stats.median_abs_deviation(b, scale="normal") -> 0.00274281410423537
 * stats.median_abs_deviation(ODD, scale="normal") -> 3.7065055462640051
 */
static void test_mad_is_scaled_to_estimate_the_standard_deviation(void **state)
{
	double m;

	(void)state;
	assert_int_equal(stats_mad(&m, BASE, N_OF(BASE)), 0);
	near(m, 0.00274281410423537, REL, "base mad");
	assert_int_equal(stats_mad(&m, ODD, N_OF(ODD)), 0);
	near(m, 3.7065055462640051, REL, "odd mad");
	/* median |x - 2.5| of ODD is 2.5: the factor is 1/Phi^-1(3/4) */
	near(m / 2.5, 1.482602218505602, 1e-15, "mad factor");
}

/*
 * [np.quantile(b, q) for q in (0, 0.1, 0.5, 0.9, 1)]  (linear, R type 7)
 *   0.22189999999999999 0.22264999999999999 0.22549999999999998
 *   0.22813 0.22900000000000001
 */
static void test_quantile_interpolates_like_numpy_linear(void **state)
{
	static const double prob[] = {0.0, 0.1, 0.5, 0.9, 1.0};
	static const double want[] = {0.22189999999999999, 0.22264999999999999,
				      0.22549999999999998, 0.22813, 0.22900000000000001};
	double q;

	(void)state;
	for (size_t i = 0; i < N_OF(prob); i++) {
		assert_int_equal(stats_quantile(&q, BASE, N_OF(BASE), prob[i]), 0);
		near(q, want[i], 1e-12, "quantile");
	}
	assert_int_equal(stats_quantile(&q, BASE, N_OF(BASE), 1.5), STATS_EARG);
	assert_int_equal(stats_quantile(&q, BASE, N_OF(BASE), NAN), STATS_EARG);
}

/*
 * s = BASE[0]
 * for v in BASE[1:]: s = 0.3 * v + (1 - 0.3) * s
 *   -> 0.22551757017283092
 */
static void test_ewma_follows_the_recurrence_oldest_first(void **state)
{
	double e;

	(void)state;
	assert_int_equal(stats_ewma(&e, BASE, N_OF(BASE), 0.3), 0);
	near(e, 0.22551757017283092, 1e-14, "ewma");
	assert_int_equal(stats_ewma(&e, BASE, N_OF(BASE), 1.0), 0);
	near(e, BASE[N_OF(BASE) - 1], 0, "alpha 1 is the last value");
	assert_int_equal(stats_ewma(&e, (double[]){1, 0}, 2, 0.25), 0);
	near(e, 0.75, 0, "older value keeps 1 - alpha");
	assert_int_equal(stats_ewma(&e, BASE, N_OF(BASE), 0.0), STATS_EARG);
	assert_int_equal(stats_ewma(&e, BASE, N_OF(BASE), 1.01), STATS_EARG);
}

static void test_descriptives_refuse_empty_short_nonfinite_and_null(void **state)
{
	double v, bad[] = {1.0, NAN, 2.0}, inf[] = {1.0, INFINITY};
	stats_sample s;

	(void)state;
	assert_int_equal(stats_mean(&v, BASE, 0), STATS_EDATA);
	assert_int_equal(stats_variance(&v, BASE, 1), STATS_EDATA);
	assert_int_equal(stats_median(&v, NULL, 0), STATS_EDATA);
	assert_int_equal(stats_mad(&v, NULL, 3), STATS_EARG);
	assert_int_equal(stats_mean(NULL, BASE, 3), STATS_EARG);
	assert_int_equal(stats_mean(&v, bad, 3), STATS_EARG);
	assert_int_equal(stats_median(&v, bad, 3), STATS_EARG);
	assert_int_equal(stats_quantile(&v, inf, 2, 0.5), STATS_EARG);
	assert_int_equal(stats_ewma(&v, inf, 2, 0.5), STATS_EARG);
	assert_int_equal(stats_sample_of(&s, BASE, 3, -1.0), STATS_EARG);
	assert_int_equal(stats_sample_of(&s, BASE, 3, NAN), STATS_EARG);
	assert_int_equal(stats_sample_of(&s, bad, 3, 0), STATS_EARG);
}

static void test_sample_of_one_value_has_nan_variance(void **state)
{
	stats_sample s;

	(void)state;
	assert_int_equal(stats_sample_of(&s, (double[]){0.25}, 1, 0), 0);
	assert_int_equal(s.n, 1);
	near(s.mean, 0.25, 0, "mean");
	assert_true(isnan(s.var));
}

static void test_order_statistics_leave_the_input_untouched(void **state)
{
	double x[N_OF(BASE)], v;

	(void)state;
	memcpy(x, BASE, sizeof(x));
	assert_int_equal(stats_median(&v, x, N_OF(x)), 0);
	assert_int_equal(stats_mad(&v, x, N_OF(x)), 0);
	assert_int_equal(stats_quantile(&v, x, N_OF(x), 0.3), 0);
	assert_memory_equal(x, BASE, sizeof(x));
}

/* ---- variance-stabilising transform ---- */

static void test_vst_round_trips_and_refuses_shares_outside_0_1(void **state)
{
	static const double p[] = {0.0, 1e-6, 0.001, 0.05, 0.5, 0.97, 1.0};

	(void)state;
	for (size_t i = 0; i < N_OF(p); i++)
		near(stats_vst_inv(stats_vst(p[i])), p[i], 1e-12, "round trip");
	near(stats_vst(0.25), PI / 6, 1e-15, "asin(sqrt(1/4)) = pi/6");
	near(stats_vst(1.0), PI / 2, 1e-15, "top of the scale");
	assert_true(isnan(stats_vst(-0.001)));
	assert_true(isnan(stats_vst(1.001)));
	assert_true(isnan(stats_vst(NAN)));
	assert_true(isnan(stats_vst_inv(-0.1)));
	assert_true(isnan(stats_vst_inv(1.6)));
}

/*
 * What a capture of n samples shows of a share p on the VST scale, on
 * average: by hand for n of 1 and 2, below asin(sqrt(p)) when the function
 * has under one sample a capture (the bias profreg corrects between
 * captures of different sizes), and the plain transform once it has 30.
 */
static void test_vst_expected_averages_the_transform_over_binomial_counts(void **state)
{
	(void)state;
	/* n = 1: 0 with 1 - p, pi/2 with p. */
	near(stats_vst_expected(0.3, 1), 0.3 * PI / 2, 1e-12, "one sample");
	/* n = 2, p = 1/2: 0, pi/4, pi/2 with 1/4, 1/2, 1/4. */
	near(stats_vst_expected(0.5, 2), PI / 4, 1e-12, "two samples");
	/* 0.75 samples a capture: well below the value at the share. */
	assert_true(stats_vst_expected(0.0015, 500) < 0.75 * stats_vst(0.0015));
	/* 300 samples of it a capture: the transform itself. */
	near(stats_vst_expected(0.015, 20000), stats_vst(0.015), 0, "plenty of samples");
	near(stats_vst_expected(0, 500), 0, 0, "none");
	/* Past what GSL's binomial takes: the transform, never NaN. */
	near(stats_vst_expected(1e-9, 5e9), stats_vst(1e-9), 0, "billions of samples");
	assert_true(isnan(stats_vst_expected(-0.1, 500)));
	assert_true(isnan(stats_vst_expected(0.1, 0.5)));
	assert_true(isnan(stats_vst_expected(0.1, NAN)));
}

/*
 * The point of the transform: a binomial share's variance p(1-p)/n times
 * the squared slope of asin(sqrt(p)) is 1/(4n) at every p, which is what
 * stats_vst_var_floor returns.
 */
static void test_vst_makes_binomial_variance_independent_of_the_share(void **state)
{
	static const double p[] = {0.001, 0.01, 0.05, 0.2, 0.5, 0.8, 0.99};
	const double n = 10000, h = 1e-7;

	(void)state;
	for (size_t i = 0; i < N_OF(p); i++) {
		double slope = (stats_vst(p[i] + h) - stats_vst(p[i] - h)) / (2 * h);

		near(slope * slope * p[i] * (1 - p[i]) / n, stats_vst_var_floor(n), 1e-5,
		     "delta-method variance");
	}
	near(stats_vst_var_floor(2500), 1e-4, 1e-15, "1/(4n)");
	assert_true(isnan(stats_vst_var_floor(0)));
	assert_true(isnan(stats_vst_var_floor(-5)));
	assert_true(isnan(stats_vst_var_floor(INFINITY)));
}

static void test_vst_delta_carries_a_margin_between_scales(void **state)
{
	double y = stats_vst(0.05), d = stats_vst_delta(0.05, 0.001);

	(void)state;
	near(d, stats_vst(0.051) - y, 1e-12, "delta");
	near(stats_vst_delta_share(y, d), 0.001, 1e-9, "back to share");
	/* clamped at the ends of the scale */
	near(stats_vst_delta(0.99, 0.5), PI / 2 - stats_vst(0.99), 1e-15, "clamp high");
	near(stats_vst_delta(0.01, -0.5), -stats_vst(0.01), 1e-15, "clamp low");
	near(stats_vst_delta_share(y, INFINITY), 0.95, 1e-12, "open upper end");
	near(stats_vst_delta_share(y, -INFINITY), -0.05, 1e-12, "open lower end");
	assert_true(isnan(stats_vst_delta(1.5, 0.1)));
	assert_true(isnan(stats_vst_delta(0.5, NAN)));
	assert_true(isnan(stats_vst_delta_share(-1, 0.1)));
}

/* ---- t tests ---- */

typedef struct t_ref {
	double t, df, p, est, se, lo, hi;
} t_ref;

static void check_t(const stats_result *r, const t_ref *w, const char *what)
{
	char name[96];

	snprintf(name, sizeof(name), "%s t", what);
	near(r->statistic, w->t, REL, name);
	snprintf(name, sizeof(name), "%s df", what);
	near(r->df, w->df, REL, name);
	snprintf(name, sizeof(name), "%s p", what);
	near(r->p, w->p, REL, name);
	snprintf(name, sizeof(name), "%s estimate", what);
	near(r->estimate, w->est, REL, name);
	snprintf(name, sizeof(name), "%s se", what);
	near(r->se, w->se, REL, name);
	snprintf(name, sizeof(name), "%s ci_low", what);
	near(r->ci_low, w->lo, REL, name);
	snprintf(name, sizeof(name), "%s ci_high", what);
	near(r->ci_high, w->hi, REL, name);
}

/*
 * sb = np.std(b, ddof=1); est = np.mean(c) - np.mean(b)
 * se = sb * np.sqrt(1/4 + 1/12); df = 11; t = (est - d0) / se
 * tq(a, df) = q + (stats.t.sf(q, df) - a) / stats.t.pdf(q, df),
 *   q = stats.t.isf(a, df)   (one Newton step: see refs.py)
 * greater:   p = stats.t.sf(t, df);  lo = est - tq(0.05, df) * se
 * less:      p = stats.t.cdf(t, df); hi = est + tq(0.05, df) * se
 * two-sided: p = 2 * stats.t.sf(abs(t), df), alpha 0.1:
 *            est -+ tq(0.05, df) * se
 * cases: (greater, d0 0), (greater, d0 0.005), (two-sided, 0), (less, 0)
 */
static void test_shared_var_matches_the_t_distribution_by_hand(void **state)
{
	static const struct {
		stats_test_opts opts;
		t_ref want;
	} cases[] = {
		{{STATS_GREATER, 0.0, 0.05},
		 {6.3368704962079931, 11, 2.772600017626563e-05, 0.0083666666666667167,
		  0.001320315236309999, 0.0059955325778739462, INFINITY}},
		{{STATS_GREATER, 0.005, 0.05},
		 {2.5498960960837169, 11, 0.013500042079307231, 0.0083666666666667167,
		  0.001320315236309999, 0.0059955325778739462, INFINITY}},
		{{STATS_TWO_SIDED, 0.0, 0.1},
		 {6.3368704962079931, 11, 5.5452000352531261e-05, 0.0083666666666667167,
		  0.001320315236309999, 0.0059955325778739462, 0.010737800755459487}},
		{{STATS_LESS, 0.0, 0.05},
		 {6.3368704962079931, 11, 0.9999722739998238, 0.0083666666666667167,
		  0.001320315236309999, -INFINITY, 0.010737800755459487}},
	};
	stats_sample b = sample(BASE, N_OF(BASE)), c = sample(CUR, N_OF(CUR));
	stats_result r;

	(void)state;
	for (size_t i = 0; i < N_OF(cases); i++) {
		assert_int_equal(stats_test_shared_var(&r, &b, &c, &cases[i].opts), 0);
		check_t(&r, &cases[i].want, "shared");
	}
}

/*
 * t = (x - np.mean(b)) / (sb * np.sqrt(1 + 1/12)); df = 11; greater:
 *   p = stats.t.sf(t, df); lo = est - tq(0.05, df) * se
 * for x = 0.2330 and x = 0.2262
 */
static void test_prediction_matches_the_t_distribution_by_hand(void **state)
{
	static const t_ref w1 = {3.1789616368446239, 11, 0.0043886909646832593,
				 0.0075666666666667215, 0.0023802321421460275,
				 0.0032920438975952634, INFINITY};
	static const t_ref w2 = {0.32209743457018064, 11, 0.37670867478948278,
				 0.00076666666666672101, 0.0023802321421460275,
				 -0.003507956102404737, INFINITY};
	stats_test_opts o = STATS_TEST_OPTS_INIT;
	stats_sample b = sample(BASE, N_OF(BASE));
	stats_result r;

	(void)state;
	assert_int_equal(stats_test_prediction(&r, &b, 0.2330, 0, &o), 0);
	check_t(&r, &w1, "prediction 0.2330");
	assert_int_equal(stats_test_prediction(&r, &b, 0.2262, 0, &o), 0);
	check_t(&r, &w2, "prediction 0.2262");
}

static void test_prediction_is_shared_var_with_one_capture(void **state)
{
	stats_test_opts o = {STATS_TWO_SIDED, 0.001, 0.01};
	stats_sample b = sample(BASE, N_OF(BASE)), one = sample(CUR, 1);
	stats_result a, s;

	(void)state;
	b.var_floor = 1e-5;
	one.var_floor = 2e-6;
	assert_int_equal(stats_test_prediction(&a, &b, CUR[0], 2e-6, &o), 0);
	assert_int_equal(stats_test_shared_var(&s, &b, &one, &o), 0);
	assert_memory_equal(&a, &s, sizeof(a));
}

/*
 * stats.ttest_ind(c, b + d0, equal_var=False, alternative=alt)
 *   (greater, 0):     t 6.6265738835801153  p 0.0004138647972370721
 *   (greater, 0.005): t 2.6664699690899827  p 0.020355678423542373
 *   (two-sided, 0):   t 6.6265738835801153  p 0.0008277295944741442
 *   (less, 0):        t 6.6265738835801153  p 0.99958613520276296
 * df and interval by hand (scipy 1.10 gives neither):
 *   vb, vc = np.var(b, ddof=1)/12, np.var(c, ddof=1)/4
 *   df = (vb+vc)**2 / (vb**2/11 + vc**2/3) = 5.4708790265120566
 *   lo = est - tq(0.05, df) * np.sqrt(vb + vc), alpha 0.05 (tq as above;
 *   t.ppf itself is only good to 2e-9 at this non-integer df)
 */
static void test_welch_matches_scipy_ttest_ind(void **state)
{
	static const struct {
		stats_test_opts opts;
		t_ref want;
	} cases[] = {
		{{STATS_GREATER, 0.0, 0.05},
		 {6.6265738835801153, 5.4708790265120566, 0.0004138647972370721,
		  0.0083666666666667167, 0.0012625931308784394, 0.0058700631931474304,
		  INFINITY}},
		{{STATS_GREATER, 0.005, 0.05},
		 {2.6664699690899827, 5.4708790265120566, 0.020355678423542373,
		  0.0083666666666667167, 0.0012625931308784394, 0.0058700631931474304,
		  INFINITY}},
		{{STATS_TWO_SIDED, 0.0, 0.05},
		 {6.6265738835801153, 5.4708790265120566, 0.0008277295944741442,
		  0.0083666666666667167, 0.0012625931308784394, 0.0052033166048189739,
		  0.011530016728514459}},
		{{STATS_LESS, 0.0, 0.05},
		 {6.6265738835801153, 5.4708790265120566, 0.99958613520276296,
		  0.0083666666666667167, 0.0012625931308784394, -INFINITY,
		  0.010863270140186003}},
	};
	stats_sample b = sample(BASE, N_OF(BASE)), c = sample(CUR, N_OF(CUR));
	stats_result r;

	(void)state;
	for (size_t i = 0; i < N_OF(cases); i++) {
		assert_int_equal(stats_test_welch(&r, &b, &c, &cases[i].opts), 0);
		check_t(&r, &cases[i].want, "welch");
	}
}

/*
 * A trivially small shift, measured as precisely as a sample can: without
 * a margin it is "significant", with one it never is.
 */
static void test_margin_keeps_a_tiny_change_insignificant_at_any_sample_size(void **state)
{
	stats_sample b = {1000000, 0.2250, 1e-4, 0}, c = {1000000, 0.2252, 1e-4, 0};
	stats_test_opts no_margin = {STATS_GREATER, 0.0, 0.05};
	stats_test_opts margin = {STATS_GREATER, stats_vst_delta(0.05, 0.001), 0.05};
	stats_result r0, r1;

	(void)state;
	assert_int_equal(stats_test_welch(&r0, &b, &c, &no_margin), 0);
	assert_int_equal(stats_test_welch(&r1, &b, &c, &margin), 0);
	assert_true(r0.p < 1e-9);
	assert_true(r1.p > 0.999);
	assert_true(r1.ci_low < margin.delta0);
}

static void test_zero_variance_is_refused_without_a_floor_and_finite_with_one(void **state)
{
	double flat[] = {0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2};
	stats_sample b = sample(flat, N_OF(flat)), c = sample(flat, 3);
	stats_test_opts o = STATS_TEST_OPTS_INIT;
	stats_result r;

	(void)state;
	c.mean = 0.21;
	assert_int_equal(stats_test_shared_var(&r, &b, &c, &o), STATS_EDATA);
	assert_true(isnan(r.p) && isnan(r.statistic));
	assert_int_equal(stats_test_welch(&r, &b, &c, &o), STATS_EDATA);
	assert_int_equal(stats_test_prediction(&r, &b, 0.21, 0, &o), STATS_EDATA);

	b.var_floor = c.var_floor = stats_vst_var_floor(1000);
	assert_int_equal(stats_test_shared_var(&r, &b, &c, &o), 0);
	near(r.se, sqrt(2.5e-4 / 3 + 2.5e-4 / 8), 1e-14, "se from the floors");
	assert_true(isfinite(r.statistic) && r.p > 0);
	assert_int_equal(stats_test_welch(&r, &b, &c, &o), 0);
	assert_true(isfinite(r.statistic));
	assert_int_equal(stats_test_prediction(&r, &b, 0.21, stats_vst_var_floor(1000), &o), 0);
	assert_true(isfinite(r.statistic));
}

static void test_floor_changes_nothing_when_the_variance_is_above_it(void **state)
{
	stats_sample b = sample(BASE, N_OF(BASE)), c = sample(CUR, N_OF(CUR));
	stats_test_opts o = STATS_TEST_OPTS_INIT;
	stats_result plain, floored;

	(void)state;
	assert_int_equal(stats_test_welch(&plain, &b, &c, &o), 0);
	b.var_floor = b.var / 2;
	c.var_floor = c.var / 2;
	assert_int_equal(stats_test_welch(&floored, &b, &c, &o), 0);
	assert_memory_equal(&plain, &floored, sizeof(plain));
	b.var_floor = b.var * 4;
	assert_int_equal(stats_test_welch(&floored, &b, &c, &o), 0);
	/* p need not rise: the baseline's larger weight also raises df */
	assert_true(floored.se > plain.se && floored.statistic < plain.statistic);
}

/*
 * stats_t_upper is the one-sided critical value: Student's tables (df 4:
 * 2.132 at 0.05, 4.604 at 0.005), the normal's 1.960 at 0.025 for a
 * large df, a p below 1e-9 taken as 1e-9, NaN outside its domain.
 */
static void test_t_upper_is_the_one_sided_critical_value(void **state)
{
	(void)state;
	assert_true(fabs(stats_t_upper(0.05, 4) - 2.132) < 5e-4);
	assert_true(fabs(stats_t_upper(0.005, 4) - 4.604) < 5e-4);
	assert_true(fabs(stats_t_upper(0.025, 1e9) - 1.95996) < 1e-4);
	assert_true(stats_t_upper(1e-15, 10) == stats_t_upper(1e-9, 10));
	assert_true(stats_t_upper(1e-9, 10) > stats_t_upper(1e-8, 10));
	assert_true(stats_t_upper(0.5, 3) == 0);
	assert_true(isnan(stats_t_upper(0, 3)));
	assert_true(isnan(stats_t_upper(0.6, 3)));
	assert_true(isnan(stats_t_upper(NAN, 3)));
	assert_true(isnan(stats_t_upper(0.05, 0.5)));
	assert_true(isnan(stats_t_upper(0.05, NAN)));
}

static void test_t_tests_refuse_bad_arguments(void **state)
{
	stats_sample b = sample(BASE, N_OF(BASE)), c = sample(CUR, N_OF(CUR));
	stats_sample one = sample(CUR, 1), bad;
	stats_test_opts o = STATS_TEST_OPTS_INIT, bo;
	stats_result r;

	(void)state;
	assert_int_equal(stats_test_shared_var(NULL, &b, &c, &o), STATS_EARG);
	assert_int_equal(stats_test_shared_var(&r, NULL, &c, &o), STATS_EARG);
	assert_int_equal(stats_test_shared_var(&r, &b, &c, NULL), STATS_EARG);
	assert_int_equal(stats_test_shared_var(&r, &one, &c, &o), STATS_EDATA);
	assert_int_equal(stats_test_welch(&r, &b, &one, &o), STATS_EDATA);
	assert_int_equal(stats_test_shared_var(&r, &b, &one, &o), 0);
	bad = b;
	bad.var = -1;
	assert_int_equal(stats_test_welch(&r, &bad, &c, &o), STATS_EARG);
	bad.var = NAN;
	assert_int_equal(stats_test_shared_var(&r, &bad, &c, &o), STATS_EARG);
	bad = c;
	bad.mean = INFINITY;
	assert_int_equal(stats_test_welch(&r, &b, &bad, &o), STATS_EARG);
	bad.mean = 0.2;
	bad.var_floor = -1e-9;
	assert_int_equal(stats_test_welch(&r, &b, &bad, &o), STATS_EARG);
	assert_int_equal(stats_test_prediction(&r, &b, NAN, 0, &o), STATS_EARG);
	assert_int_equal(stats_test_prediction(&r, &b, 0.2, NAN, &o), STATS_EARG);
	bo = o;
	bo.alpha = STATS_ALPHA_MIN / 2;
	assert_int_equal(stats_test_welch(&r, &b, &c, &bo), STATS_EARG);
	bo.alpha = 0.6;
	assert_int_equal(stats_test_welch(&r, &b, &c, &bo), STATS_EARG);
	bo = o;
	bo.alt = (stats_alt)7;
	assert_int_equal(stats_test_welch(&r, &b, &c, &bo), STATS_EARG);
	bo = o;
	bo.delta0 = NAN;
	assert_int_equal(stats_test_welch(&r, &b, &c, &bo), STATS_EARG);
	assert_true(isnan(r.p) && isnan(r.ci_low) && isnan(r.estimate));
}

/*
 * GSL aborts the process on a domain error by default, so a call that left
 * its domain would kill this test: sweep the corners the checks allow.
 */
static void test_extreme_arguments_stay_inside_the_gsl_domain(void **state)
{
	static const double alphas[] = {STATS_ALPHA_MIN, 1e-4, 0.05, STATS_ALPHA_MAX};
	static const size_t ns[] = {2, 3, 30, 100000};
	static const double means[] = {-1e6, 0.0, 1e-300, 1e6};

	(void)state;
	for (size_t a = 0; a < N_OF(alphas); a++)
		for (size_t i = 0; i < N_OF(ns); i++)
			for (size_t m = 0; m < N_OF(means); m++)
				for (int alt = 0; alt < 3; alt++) {
					stats_test_opts o = {(stats_alt)alt, 0.0, alphas[a]};
					stats_sample b = {ns[i], 0.0, 1e-300, 0};
					stats_sample c = {2, means[m], 1e300, 0};
					stats_result r;

					assert_int_equal(stats_test_welch(&r, &b, &c, &o), 0);
					assert_true(r.p >= 0 && r.p <= 1);
					assert_true(r.df >= 1);
					assert_int_equal(stats_test_shared_var(&r, &b, &c, &o), 0);
					assert_true(r.p >= 0 && r.p <= 1);
				}
}

/*
 * Properties over random summaries: p in [0, 1]; the interval contains the
 * estimate; p <= alpha exactly when delta0 lies outside the interval; a
 * positive margin never lowers p of a test for an increase.
 */
static void test_random_summaries_keep_p_interval_and_margin_consistent(void **state)
{
	(void)state;
	for (int k = 0; k < 3000; k++) {
		stats_sample b = {2 + (size_t)(uniform() * 40), uniform(), uniform() * 1e-3,
				  uniform() < 0.3 ? 1e-4 : 0};
		stats_sample c = {2 + (size_t)(uniform() * 6), uniform(), uniform() * 1e-3, 0};
		stats_test_opts o = {(stats_alt)(k % 3), (uniform() - 0.5) * 0.1,
				     0.01 + uniform() * 0.2};
		stats_test_opts m = {STATS_GREATER, 0.0, 0.05};
		stats_result r, r0, r1;
		int out_of_ci;

		assert_int_equal(stats_test_welch(&r, &b, &c, &o), 0);
		assert_true(r.p >= 0 && r.p <= 1);
		assert_true(r.ci_low <= r.estimate && r.estimate <= r.ci_high);
		out_of_ci = o.delta0 < r.ci_low || o.delta0 > r.ci_high;
		if (fabs(r.p - o.alpha) > 1e-9)
			assert_int_equal(r.p <= o.alpha, out_of_ci);

		assert_int_equal(stats_test_shared_var(&r0, &b, &c, &m), 0);
		m.delta0 = uniform() * 0.05;
		assert_int_equal(stats_test_shared_var(&r1, &b, &c, &m), 0);
		assert_true(r1.p >= r0.p);
		assert_true(r1.statistic <= r0.statistic);
	}
}

/* ---- Mann-Whitney ---- */

static const double TX[] = {5, 7, 7, 9, 12, 12, 15, 3};
static const double TY[] = {1, 4, 7, 2, 6, 9, 3, 5, 8, 10};
static const double EX[] = {1.8, 3.1, 4.6, 5.2, 7.7};
static const double EY[] = {0.4, 1.1, 2.5, 2.9, 3.3, 4.0, 6.1};

static stats_mw_result mw(const double *x, size_t nx, const double *y, size_t ny,
			  stats_alt alt, double delta0, stats_mw_method method)
{
	stats_mw_opts o = {alt, delta0, method};
	stats_mw_result r;

	assert_int_equal(stats_mann_whitney(&r, x, nx, y, ny, &o), 0);
	return r;
}

/*
 * TX = [5, 7, 7, 9, 12, 12, 15, 3]; TY = [1, 4, 7, 2, 6, 9, 3, 5, 8, 10]
 * stats.mannwhitneyu(TX, TY, use_continuity=True, alternative=alt,
 *                    method="asymptotic")
 *   U 58.5; greater 0.054138584919041791, less 0.9549818786857468,
 *   two-sided 0.10827716983808358
 * with np.array(TX) - 1.5 (margin 1.5):
 *   U 51; greater 0.17517418718373096, less 0.84681249083885812,
 *   two-sided 0.35034837436746191
 */
static void test_mann_whitney_asymptotic_matches_scipy_with_ties(void **state)
{
	static const double want[3] = {0.054138584919041791, 0.9549818786857468,
				       0.10827716983808358};
	static const double shifted[3] = {0.17517418718373096, 0.84681249083885812,
					  0.35034837436746191};
	stats_mw_result r;

	(void)state;
	for (int alt = 0; alt < 3; alt++) {
		r = mw(TX, N_OF(TX), TY, N_OF(TY), (stats_alt)alt, 0, STATS_MW_ASYMPTOTIC);
		assert_false(r.exact);
		near(r.u, 58.5, 0, "U");
		near(r.p, want[alt], REL, "p");
		near(r.effect, 58.5 / 80, 1e-15, "effect");
		r = mw(TX, N_OF(TX), TY, N_OF(TY), (stats_alt)alt, 1.5, STATS_MW_ASYMPTOTIC);
		near(r.u, 51, 0, "shifted U");
		near(r.p, shifted[alt], REL, "shifted p");
	}
}

/*
 * EX = [1.8, 3.1, 4.6, 5.2, 7.7]; EY = [0.4, 1.1, 2.5, 2.9, 3.3, 4.0, 6.1]
 * stats.mannwhitneyu(EX, EY, alternative=alt, method="exact")
 *   U 25; greater 0.13383838383838387, less 0.89898989898989889,
 *   two-sided 0.26767676767676774
 * method="asymptotic", use_continuity=True:
 *   greater 0.1278115537732063, less 0.90306178462896869,
 *   two-sided 0.2556231075464126
 */
static void test_mann_whitney_exact_matches_scipy_on_small_samples(void **state)
{
	static const double exact[3] = {0.13383838383838387, 0.89898989898989889,
					0.26767676767676774};
	static const double asym[3] = {0.1278115537732063, 0.90306178462896869,
				       0.2556231075464126};
	stats_mw_result r;

	(void)state;
	for (int alt = 0; alt < 3; alt++) {
		r = mw(EX, N_OF(EX), EY, N_OF(EY), (stats_alt)alt, 0, STATS_MW_EXACT);
		assert_true(r.exact);
		assert_true(isnan(r.z));
		near(r.u, 25, 0, "U");
		near(r.p, exact[alt], 1e-12, "exact p");
		r = mw(EX, N_OF(EX), EY, N_OF(EY), (stats_alt)alt, 0, STATS_MW_AUTO);
		assert_true(r.exact);
		near(r.p, exact[alt], 1e-12, "auto p");
		r = mw(EX, N_OF(EX), EY, N_OF(EY), (stats_alt)alt, 0, STATS_MW_ASYMPTOTIC);
		assert_false(r.exact);
		near(r.p, asym[alt], REL, "asymptotic p");
	}
}

/*
 * rng = np.random.default_rng(20240601)
 * BX = np.round(rng.normal(1.0, 1.0, 12), 6)
 * BY = np.round(rng.normal(0.0, 1.0, 30), 6)
 * stats.mannwhitneyu(BX, BY, alternative=alt, method="exact")
 *   U 326; greater 4.6983587283636236e-06, less 0.99999610376699455,
 *   two-sided 9.3967174567272472e-06
 */
static void test_mann_whitney_exact_matches_scipy_on_12_by_30(void **state)
{
	static const double bx[] = {1.647906, 1.469321, 0.356979, -0.178259, 0.855310,
				    2.203458, 2.333584, 1.908301, 1.346564, 2.600035,
				    2.232840, 0.779682};
	static const double by[] = {
		-1.061965, -0.364569, -0.420019, 0.687509,  -1.899116, -0.191369,
		1.671222,  -0.920284, -0.758464, -0.084261, -1.417821, -0.129613,
		-0.015653, -0.004655, -0.988514, -0.365830, 0.653818,  -0.714551,
		0.547197,  0.655512,  -1.427001, -0.645306, 0.655313,  0.493495,
		0.179375,  -0.348618, 0.108559,  1.874773,  -0.221455, 0.579650};
	static const double want[3] = {4.6983587283636236e-06, 0.99999610376699455,
				       9.3967174567272472e-06};
	stats_mw_result r;

	(void)state;
	for (int alt = 0; alt < 3; alt++) {
		r = mw(bx, N_OF(bx), by, N_OF(by), (stats_alt)alt, 0, STATS_MW_AUTO);
		assert_true(r.exact);
		near(r.u, 326, 0, "U");
		near(r.p, want[alt], 1e-10, "p");
	}
}

/*
 * Exact P(U >= u) and P(U <= u) overlap in P(U = u), a whole number of
 * the C(15, 6) equally likely arrangements of 6 x's and 9 y's.
 */
static void test_mann_whitney_exact_tails_overlap_at_the_observed_u(void **state)
{
	(void)state;
	for (int k = 0; k < 200; k++) {
		double x[6], y[9];
		stats_mw_result g, l;

		for (size_t i = 0; i < N_OF(x); i++)
			x[i] = uniform() + 0.2;
		for (size_t i = 0; i < N_OF(y); i++)
			y[i] = uniform();
		g = mw(x, N_OF(x), y, N_OF(y), STATS_GREATER, 0, STATS_MW_EXACT);
		l = mw(x, N_OF(x), y, N_OF(y), STATS_LESS, 0, STATS_MW_EXACT);
		/* (g + l - 1) * C(15, 6) counts the arrangements with U = u */
		double count = (g.p + l.p - 1) * 5005;

		assert_true(count > 0.5);
		near(count, round(count), 1e-9, "whole count");
		assert_true(g.p > 0 && g.p <= 1 && l.p > 0 && l.p <= 1);
	}
}

/*
 * The exact p-value for alt, from P(sum of ranks of x >= its own) and
 * P(<=) found by listing every way to choose which nx of the pooled
 * values are x's (mid-ranks for ties): the exact test with ties counted
 * another way.
 */
static double mw_by_listing(stats_alt alt, const double *x, size_t nx, const double *y, size_t ny)
{
	double v[24], rank[24], obs = 0, ge, le;
	size_t n = nx + ny, all = 0, above = 0, below = 0;

	assert_true(n <= N_OF(v));
	for (size_t i = 0; i < n; i++)
		v[i] = i < nx ? x[i] : y[i - nx];
	for (size_t i = 0; i < n; i++) {
		double less = 0, same = 0;
		for (size_t j = 0; j < n; j++)
			less += v[j] < v[i], same += v[j] == v[i];
		rank[i] = less + (same + 1) / 2;
	}
	for (size_t i = 0; i < nx; i++)
		obs += rank[i];
	for (uint32_t set = 0; set < (1u << n); set++) {
		double sum = 0;
		if ((size_t)__builtin_popcount(set) != nx)
			continue;
		for (size_t i = 0; i < n; i++)
			if (set & (1u << i))
				sum += rank[i];
		all++;
		above += sum >= obs - 1e-9;
		below += sum <= obs + 1e-9;
	}
	ge = (double)above / (double)all;
	le = (double)below / (double)all;
	return alt == STATS_GREATER ? ge : alt == STATS_LESS ? le : fmin(1, 2 * fmin(ge, le));
}

/*
 * With ties, small samples get the exact test too: what listing every
 * arrangement gives, for x the smaller side or the larger. One capture
 * above 28 baseline values, two of them equal (a function absent from
 * two captures), has p 1/29: the normal approximation's floor for it,
 * about 0.053, kept such a rise from ever passing a 0.05 check.
 */
static void test_mann_whitney_exact_with_ties_counts_every_arrangement(void **state)
{
	static const double tx2[] = {0, 0, 2, 2, 2, 5};
	static const double ty2[] = {0, 2, 3, 3};
	double base[28], one = 9;
	stats_mw_result r;

	(void)state;
	for (int alt = 0; alt < 3; alt++) {
		r = mw(TX, N_OF(TX), TY, N_OF(TY), (stats_alt)alt, 0, STATS_MW_AUTO);
		assert_true(r.exact);
		near(r.u, 58.5, 0, "U");
		near(r.p, mw_by_listing((stats_alt)alt, TX, N_OF(TX), TY, N_OF(TY)), 1e-12,
		     "p, x smaller");
		r = mw(tx2, N_OF(tx2), ty2, N_OF(ty2), (stats_alt)alt, 0, STATS_MW_EXACT);
		assert_true(r.exact);
		near(r.p, mw_by_listing((stats_alt)alt, tx2, N_OF(tx2), ty2, N_OF(ty2)), 1e-12,
		     "p, x larger");
	}
	for (size_t i = 0; i < N_OF(base); i++)
		base[i] = i < 2 ? 0 : (double)i / 10;
	r = mw(&one, 1, base, N_OF(base), STATS_GREATER, 0, STATS_MW_AUTO);
	assert_true(r.exact);
	near(r.p, 1.0 / 29, 1e-12, "one above all");
	r = mw(&one, 1, base, N_OF(base), STATS_GREATER, 0, STATS_MW_ASYMPTOTIC);
	assert_true(r.p > 0.05);
}

static void test_mann_whitney_exact_is_refused_only_for_large_samples(void **state)
{
	static double big[STATS_MW_EXACT_CELLS + 1];
	stats_mw_opts o = {STATS_GREATER, 0, STATS_MW_EXACT};
	stats_mw_result r;

	(void)state;
	assert_int_equal(stats_mann_whitney(&r, TX, N_OF(TX), TY, N_OF(TY), &o), 0);
	assert_true(r.exact);
	for (size_t i = 0; i < N_OF(big); i++)
		big[i] = (double)i + 0.5;
	assert_int_equal(stats_mann_whitney(&r, EX, 1, big, N_OF(big), &o), STATS_EDATA);
	assert_true(isnan(r.p));
	/* a margin that creates a tie is exact too */
	o.delta0 = 2;
	assert_int_equal(stats_mann_whitney(&r, (double[]){3, 5}, 2, (double[]){1, 2}, 2, &o), 0);
	assert_true(r.exact);
	o.method = STATS_MW_AUTO;
	o.delta0 = 0;
	assert_int_equal(stats_mann_whitney(&r, EX, 1, big, N_OF(big), &o), 0);
	assert_false(r.exact);
	/* ties among many values: beyond the exact count's bound, the approximation */
	big[1] = big[0];
	assert_int_equal(stats_mann_whitney(&r, big, 60, big + 60, 40, &o), 0);
	assert_false(r.exact);
}

static void test_mann_whitney_all_tied_gives_no_evidence(void **state)
{
	double x[] = {1, 1, 1}, y[] = {1, 1, 1, 1};
	stats_mw_result r;

	(void)state;
	for (int alt = 0; alt < 3; alt++) {
		r = mw(x, N_OF(x), y, N_OF(y), (stats_alt)alt, 0, STATS_MW_AUTO);
		near(r.p, 1, 0, "p");
		near(r.effect, 0.5, 0, "effect");
	}
}

static void test_mann_whitney_refuses_bad_arguments_and_keeps_inputs(void **state)
{
	double x[N_OF(TX)], bad[] = {1, NAN};
	stats_mw_opts o = STATS_MW_OPTS_INIT;
	stats_mw_result r;

	(void)state;
	memcpy(x, TX, sizeof(x));
	assert_int_equal(stats_mann_whitney(&r, x, N_OF(x), TY, N_OF(TY), &o), 0);
	assert_memory_equal(x, TX, sizeof(x));
	assert_int_equal(stats_mann_whitney(&r, x, 0, TY, N_OF(TY), &o), STATS_EDATA);
	assert_int_equal(stats_mann_whitney(&r, NULL, 3, TY, N_OF(TY), &o), STATS_EARG);
	assert_int_equal(stats_mann_whitney(&r, bad, 2, TY, N_OF(TY), &o), STATS_EARG);
	assert_int_equal(stats_mann_whitney(&r, x, 2, bad, 2, &o), STATS_EARG);
	assert_int_equal(stats_mann_whitney(NULL, x, 2, TY, 2, &o), STATS_EARG);
	assert_int_equal(stats_mann_whitney(&r, x, 2, TY, 2, NULL), STATS_EARG);
	o.delta0 = -1.7e308; /* x - delta0 overflows */
	assert_int_equal(stats_mann_whitney(&r, (double[]){1e308}, 1, TY, 2, &o), STATS_EARG);
	o.delta0 = 0;
	o.method = (stats_mw_method)9;
	assert_int_equal(stats_mann_whitney(&r, x, 2, TY, 2, &o), STATS_EARG);
}

/* ---- Benjamini-Hochberg ---- */

/*
 * P = [0.01, 0.04, 0.03, 0.005, 0.5, nan, 0.04, 0.9, 0.0001, 0.2]
 * R's p.adjust(method="BH") by hand, NaN counted as 1:
 *   p = np.where(np.isnan(P), 1.0, P); n = len(p)
 *   o = np.argsort(-p, kind="stable"); i = np.arange(n, 0, -1)
 *   q = np.empty(n); q[o] = np.minimum(1, np.minimum.accumulate(n / i * p[o]))
 */
static void test_bh_matches_r_p_adjust(void **state)
{
	static const double p[] = {0.01, 0.04, 0.03, 0.005, 0.5, NAN, 0.04, 0.9, 0.0001, 0.2};
	static const double want[] = {0.033333333333333333, 0.066666666666666666,
				      0.066666666666666666, 0.025000000000000001,
				      0.625, 1, 0.066666666666666666, 1, 0.001,
				      0.28571428571428575};
	double q[N_OF(p)];

	(void)state;
	assert_int_equal(stats_bh_qvalues(p, N_OF(p), q), 0);
	for (size_t i = 0; i < N_OF(p); i++)
		near(q[i], want[i], 1e-15, "q");
}

static void test_bh_qvalues_are_bounded_and_monotone_in_p(void **state)
{
	enum { N = 500 };
	static double p[N], q[N];

	(void)state;
	for (int round = 0; round < 20; round++) {
		for (size_t i = 0; i < N; i++) {
			double u = uniform();
			/* a mix of real signal, noise and repeated values */
			p[i] = i % 7 == 0 ? u * 1e-4 : i % 11 == 0 ? 0.5 : u;
		}
		assert_int_equal(stats_bh_qvalues(p, N, q), 0);
		for (size_t i = 0; i < N; i++) {
			assert_true(q[i] >= p[i] && q[i] <= 1);
			for (size_t j = 0; j < N; j++)
				if (p[i] <= p[j])
					assert_true(q[i] <= q[j]);
		}
	}
}

static void test_bh_works_in_place_and_on_edge_cases(void **state)
{
	double p[] = {0.02, 0.01, 0.03}, one[] = {0.3}, q;

	(void)state;
	assert_int_equal(stats_bh_qvalues(p, N_OF(p), p), 0);
	near(p[0], 0.03, 1e-15, "in place 0");
	near(p[1], 0.03, 1e-15, "in place 1");
	near(p[2], 0.03, 1e-15, "in place 2");
	assert_int_equal(stats_bh_qvalues(one, 1, &q), 0);
	near(q, 0.3, 0, "single p is its own q");
	assert_int_equal(stats_bh_qvalues(NULL, 0, NULL), 0);
	assert_int_equal(stats_bh_qvalues((double[]){0.1, -0.01}, 2, p), STATS_EARG);
	assert_int_equal(stats_bh_qvalues((double[]){0.1, 1.5}, 2, p), STATS_EARG);
	assert_int_equal(stats_bh_qvalues((double[]){0.1, INFINITY}, 2, p), STATS_EARG);
	assert_int_equal(stats_bh_qvalues(NULL, 2, p), STATS_EARG);
}

/* ---- ranking and severity ---- */

static void test_score_grows_with_the_bound_and_falls_with_q(void **state)
{
	(void)state;
	near(stats_score(2.0, 0.01, 1.5), 2.0 * 1.5 * 0.99, 1e-15, "formula");
	assert_true(stats_score(2.0, 0.01, 1) > stats_score(1.0, 0.01, 1));
	assert_true(stats_score(1.0, 0.001, 1) > stats_score(1.0, 0.04, 1));
	assert_true(stats_score(1.0, 0.01, 3) > stats_score(1.0, 0.01, 1));
	near(stats_score(-0.5, 0.01, 1), 0, 0, "interval through zero scores 0");
	near(stats_score(1.0, 1.0, 1), 0, 0, "q of 1 scores 0");
	for (int k = 0; k < 1000; k++) {
		double a = uniform() * 10, b = a + uniform(), q1 = uniform(),
		       q2 = q1 + (1 - q1) * uniform();

		assert_true(stats_score(b, q1, 1) >= stats_score(a, q1, 1));
		assert_true(stats_score(a, q2, 1) <= stats_score(a, q1, 1));
	}
	assert_true(isnan(stats_score(NAN, 0.1, 1)));
	assert_true(isnan(stats_score(1, NAN, 1)));
	assert_true(isnan(stats_score(1, 1.1, 1)));
	assert_true(isnan(stats_score(1, 0.1, -1)));
	assert_true(isnan(stats_score(1, 0.1, INFINITY)));
}

static void test_severity_classes_follow_the_default_thresholds(void **state)
{
	static const struct {
		double ci_low_pp, rel, q;
		stats_severity want;
	} cases[] = {
		{6.0, 0.2, 0.01, STATS_SEV_CRITICAL},
		{5.0, 0.1, 0.05, STATS_SEV_CRITICAL},
		{2.5, 1.0, 0.01, STATS_SEV_CRITICAL},     /* doubled and >= 2 pp */
		{1.9, 3.0, 0.01, STATS_SEV_MEDIUM},       /* doubled but < 2 pp */
		{2.5, 0.99, 0.01, STATS_SEV_HIGH},
		{2.0, NAN, 0.01, STATS_SEV_HIGH},         /* unknown rel */
		{2.0, INFINITY, 0.01, STATS_SEV_CRITICAL}, /* from a zero baseline */
		{0.5, 0.1, 0.01, STATS_SEV_MEDIUM},
		{0.49, 0.1, 0.01, STATS_SEV_LOW},
		{0.01, 0.01, 0.049, STATS_SEV_LOW},
		{9.0, 2.0, 0.051, STATS_SEV_NONE},        /* not significant */
		{9.0, 2.0, NAN, STATS_SEV_NONE},
		{NAN, 2.0, 0.01, STATS_SEV_NONE},
	};

	(void)state;
	for (size_t i = 0; i < N_OF(cases); i++) {
		stats_severity s =
			stats_severity_of(cases[i].ci_low_pp, cases[i].rel, cases[i].q, NULL);

		if (s != cases[i].want)
			fail_msg("case %zu: got %s, want %s", i, stats_severity_name(s),
				 stats_severity_name(cases[i].want));
	}
}

static void test_severity_uses_caller_thresholds(void **state)
{
	stats_severity_thresholds t = STATS_SEVERITY_THRESHOLDS_INIT;

	(void)state;
	t.q_max = 0.1;
	t.medium_pp = 0.1;
	assert_int_equal(stats_severity_of(0.2, 0.1, 0.08, &t), STATS_SEV_MEDIUM);
	assert_int_equal(stats_severity_of(0.2, 0.1, 0.08, NULL), STATS_SEV_NONE);
}

static void test_severity_names_round_trip_and_parse_ignores_case(void **state)
{
	stats_severity s = STATS_SEV_NONE;

	(void)state;
	for (int i = STATS_SEV_NONE; i <= STATS_SEV_CRITICAL; i++) {
		assert_int_equal(stats_severity_parse(&s, stats_severity_name((stats_severity)i)),
				 0);
		assert_int_equal(s, i);
	}
	assert_int_equal(stats_severity_parse(&s, "HiGh"), 0);
	assert_int_equal(s, STATS_SEV_HIGH);
	s = STATS_SEV_LOW;
	assert_int_equal(stats_severity_parse(&s, "severe"), STATS_EARG);
	assert_int_equal(stats_severity_parse(&s, "hig"), STATS_EARG);
	assert_int_equal(stats_severity_parse(&s, "highs"), STATS_EARG);
	assert_int_equal(stats_severity_parse(&s, ""), STATS_EARG);
	assert_int_equal(stats_severity_parse(&s, NULL), STATS_EARG);
	assert_int_equal(s, STATS_SEV_LOW);
	assert_string_equal(stats_severity_name((stats_severity)42), "?");
}

/*
 * One function whose releases differ by thousands (a code path added in a
 * release) among 200 whose releases vary 1.5 times their sampling: the
 * service's release effect is the others', not the mean with it.
 */
static void test_release_effect_leaves_out_a_function_far_beyond_it(void **state)
{
	double q[201], df[201], phi, phi_df;

	(void)state;
	for (size_t k = 0; k < 200; k++) {
		q[k] = 1.5 * 3 * (0.5 + (double)k / 200); /* mean 1.5 * 3 on 3 df */
		df[k] = 3;
	}
	q[200] = 5000;
	df[200] = 3;
	stats_phi_robust(&phi, &phi_df, q, df, 201);
	assert_true(fabs(phi - 1.5 * 3 * (0.5 + 199.0 / 400) / 3) < 1e-9);
	assert_true(phi_df == 600);
	assert_true(stats_het_outlier(5000, 3, phi));
	assert_false(stats_het_outlier(q[199], 3, phi));
	/* Without the outlier the plain mean is kept, whatever is summed. */
	stats_phi_robust(&phi, &phi_df, q, df, 200);
	assert_true(phi_df == 600);
	/* Releases that vary no more than sampling: 1. */
	for (size_t k = 0; k < 200; k++)
		q[k] = 2;
	stats_phi_robust(&phi, &phi_df, q, df, 200);
	assert_true(phi == 1);
}

/*
 * Three releases without a function (zeros, very precise) and one at s:
 * Paule and Mandel's variance between them makes Q = ng - 1, where the
 * means weigh almost alike: near the means' own variance, s^2 / 4.
 */
static void test_between_release_variance_is_not_led_by_the_precise_releases(void **state)
{
	stats_wmean g[4] = {{0}};
	double s = 0.4, t2, sw = 0, swm = 0, m, q = 0;

	(void)state;
	for (int k = 0; k < 3; k++)
		g[k].mean = 0, g[k].var_mean = 1e-6, g[k].n = 8;
	g[3].mean = s, g[3].var_mean = 1e-4, g[3].n = 4;
	t2 = stats_tau2_between(g, 4);
	for (int k = 0; k < 4; k++) {
		sw += 1 / (g[k].var_mean + t2);
		swm += g[k].mean / (g[k].var_mean + t2);
	}
	m = swm / sw;
	for (int k = 0; k < 4; k++)
		q += (g[k].mean - m) * (g[k].mean - m) / (g[k].var_mean + t2);
	assert_true(fabs(q - 3) < 1e-6);
	assert_true(t2 > 0.9 * s * s / 4 && t2 < 1.1 * s * s / 4);
	/* Means that agree within their variance: none. */
	for (int k = 0; k < 4; k++)
		g[k].mean = 0.1, g[k].var_mean = 1e-4;
	assert_true(stats_tau2_between(g, 4) == 0);
	assert_true(stats_tau2_between(g, 1) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_error_codes_equal_profreg_codes),
		cmocka_unit_test(test_mean_and_sample_variance_match_numpy),
		cmocka_unit_test(test_median_of_even_and_odd_samples_matches_numpy),
		cmocka_unit_test(test_mad_is_scaled_to_estimate_the_standard_deviation),
		cmocka_unit_test(test_quantile_interpolates_like_numpy_linear),
		cmocka_unit_test(test_ewma_follows_the_recurrence_oldest_first),
		cmocka_unit_test(test_descriptives_refuse_empty_short_nonfinite_and_null),
		cmocka_unit_test(test_sample_of_one_value_has_nan_variance),
		cmocka_unit_test(test_order_statistics_leave_the_input_untouched),
		cmocka_unit_test(test_vst_round_trips_and_refuses_shares_outside_0_1),
		cmocka_unit_test(test_vst_expected_averages_the_transform_over_binomial_counts),
		cmocka_unit_test(test_vst_makes_binomial_variance_independent_of_the_share),
		cmocka_unit_test(test_vst_delta_carries_a_margin_between_scales),
		cmocka_unit_test(test_shared_var_matches_the_t_distribution_by_hand),
		cmocka_unit_test(test_prediction_matches_the_t_distribution_by_hand),
		cmocka_unit_test(test_prediction_is_shared_var_with_one_capture),
		cmocka_unit_test(test_welch_matches_scipy_ttest_ind),
		cmocka_unit_test(test_margin_keeps_a_tiny_change_insignificant_at_any_sample_size),
		cmocka_unit_test(test_zero_variance_is_refused_without_a_floor_and_finite_with_one),
		cmocka_unit_test(test_floor_changes_nothing_when_the_variance_is_above_it),
		cmocka_unit_test(test_t_tests_refuse_bad_arguments),
		cmocka_unit_test(test_t_upper_is_the_one_sided_critical_value),
		cmocka_unit_test(test_extreme_arguments_stay_inside_the_gsl_domain),
		cmocka_unit_test(test_random_summaries_keep_p_interval_and_margin_consistent),
		cmocka_unit_test(test_mann_whitney_asymptotic_matches_scipy_with_ties),
		cmocka_unit_test(test_mann_whitney_exact_matches_scipy_on_small_samples),
		cmocka_unit_test(test_mann_whitney_exact_matches_scipy_on_12_by_30),
		cmocka_unit_test(test_mann_whitney_exact_tails_overlap_at_the_observed_u),
		cmocka_unit_test(test_mann_whitney_exact_with_ties_counts_every_arrangement),
		cmocka_unit_test(test_mann_whitney_exact_is_refused_only_for_large_samples),
		cmocka_unit_test(test_mann_whitney_all_tied_gives_no_evidence),
		cmocka_unit_test(test_mann_whitney_refuses_bad_arguments_and_keeps_inputs),
		cmocka_unit_test(test_bh_matches_r_p_adjust),
		cmocka_unit_test(test_bh_qvalues_are_bounded_and_monotone_in_p),
		cmocka_unit_test(test_bh_works_in_place_and_on_edge_cases),
		cmocka_unit_test(test_score_grows_with_the_bound_and_falls_with_q),
		cmocka_unit_test(test_severity_classes_follow_the_default_thresholds),
		cmocka_unit_test(test_severity_uses_caller_thresholds),
		cmocka_unit_test(test_severity_names_round_trip_and_parse_ignores_case),
		cmocka_unit_test(test_release_effect_leaves_out_a_function_far_beyond_it),
		cmocka_unit_test(test_between_release_variance_is_not_led_by_the_precise_releases),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
