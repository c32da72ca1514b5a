/*
 * test_seq.c: alpha spending over nightly looks (stats/seq.h), the
 * precision-weighted pooling behind the baseline (stats/pool.h) and the
 * t test of a given estimate (stats_test_t).
 *
 * Reference values are worked by hand in the comments (digamma at
 * half-integers: psi(n + 1/2) = -gamma - 2 ln 2 + sum_{k=1..n} 2 / (2k - 1)),
 * or are SciPy's (scipy.stats.t.sf). The Monte Carlo tests use a fixed
 * generator, so they give the same numbers on every run.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <gsl/gsl_cdf.h>

#include "stats/pool.h"
#include "stats/seq.h"
#include "stats/test.h"

static void near(double got, double want, double rel, const char *what)
{
	if (!(fabs(got - want) <= rel * fabs(want)))
		fail_msg("%s: got %.17g, want %.17g", what, got, want);
}

static uint64_t rng_state = 0x243F6A8885A308D3ull;

static double uniform(void)
{
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	z ^= z >> 31;
	return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(void)
{
	return gsl_cdf_ugaussian_Pinv(uniform());
}

/* ---- spending ---- */

static void test_fractions_follow_the_power_family(void **state)
{
	double sum = 0;

	(void)state;
	/* rho 0.5, 4 looks: 0.5, sqrt(0.5) - 0.5, sqrt(0.75) - sqrt(0.5), 1 - sqrt(0.75). */
	near(stats_seq_fraction(1, 4, 0.5), 0.5, 1e-15, "look 1");
	near(stats_seq_fraction(2, 4, 0.5), 0.20710678118654757, 1e-12, "look 2");
	for (size_t k = 1; k <= 4; k++)
		sum += stats_seq_fraction(k, 4, 0.5);
	near(sum, 1, 1e-15, "the fractions spend alpha once");
	/* rho 1 (Pocock-like) spends evenly; rho 3 (O'Brien-Fleming-like) late. */
	near(stats_seq_fraction(3, 4, 1), 0.25, 1e-15, "even");
	near(stats_seq_fraction(1, 4, 3), 1.0 / 64, 1e-15, "late");
	assert_true(stats_seq_fraction(5, 4, 0.5) == 0);
	assert_true(isnan(stats_seq_fraction(0, 4, 0.5)));
	assert_true(isnan(stats_seq_fraction(1, 0, 0.5)));
	assert_true(isnan(stats_seq_fraction(1, STATS_SEQ_MAX_LOOKS + 1, 0.5)));
	assert_true(isnan(stats_seq_fraction(1, 4, 0.01)));
}

static void test_sequential_p_divides_by_the_fraction(void **state)
{
	(void)state;
	near(stats_seq_pvalue(0.01, 1, 4, 0.5), 0.02, 1e-15, "look 1");
	near(stats_seq_pvalue(0.01, 4, 4, 1), 0.04, 1e-15, "look 4 of 4, even");
	assert_true(stats_seq_pvalue(0.9, 1, 4, 0.5) == 1);
	assert_true(stats_seq_pvalue(1e-9, 5, 4, 0.5) == 1); /* nothing left past the plan */
	assert_true(isnan(stats_seq_pvalue(-0.1, 1, 4, 0.5)));
	assert_true(isnan(stats_seq_pvalue(NAN, 1, 4, 0.5)));
}

/*
 * A null release judged on 4 nights with its captures so far (4 more a
 * night) against a fixed baseline of 28: the cumulative z statistics are
 * strongly correlated. Testing every look at 0.05 rejects far more often
 * than 5% of the time; the sequential p-values keep it under 5% (the
 * union bound) whatever the correlation.
 */
static void test_repeated_looks_stay_within_alpha(void **state)
{
	enum { RUNS = 20000, K = 4, NB = 28, PER = 4 };
	size_t naive = 0, seq = 0;

	(void)state;
	for (size_t r = 0; r < RUNS; r++) {
		double mb = 0, sc = 0;
		bool hit_naive = false, hit_seq = false;
		for (size_t i = 0; i < NB; i++)
			mb += normal() / NB;
		for (size_t k = 1; k <= K; k++) {
			double n = (double)(k * PER), z, p;
			for (size_t i = 0; i < PER; i++)
				sc += normal();
			z = (sc / n - mb) / sqrt(1 / n + 1.0 / NB);
			p = gsl_cdf_ugaussian_Q(z);
			hit_naive |= p <= 0.05;
			hit_seq |= stats_seq_pvalue(p, k, K, 0.5) <= 0.05;
		}
		naive += hit_naive;
		seq += hit_seq;
	}
	/* 3 standard errors of a 5% rate over RUNS runs: 0.0046. */
	if (!((double)seq / RUNS <= 0.05 + 0.0046))
		fail_msg("sequential looks reject %.4f of null releases", (double)seq / RUNS);
	if (!((double)naive / RUNS > 0.075))
		fail_msg("looking 4 times at 0.05 rejects only %.4f: the test cannot tell",
			 (double)naive / RUNS);
}

static void test_a_first_look_spends_the_looks_no_run_took(void **state)
{
	(void)state;
	/* rho 0.5, 4 looks: first tested at look 3, it spends f(3/4) = sqrt(0.75). */
	near(stats_seq_fraction_from(1, 3, 4, 0.5), sqrt(0.75), 1e-15, "looks 1-3");
	near(stats_seq_fraction_from(1, 1, 4, 0.5), 0.5, 1e-15, "look 1 alone");
	near(stats_seq_fraction_from(3, 3, 4, 0.5), stats_seq_fraction(3, 4, 0.5), 1e-15,
	     "a look after a tested one spends its own");
	near(stats_seq_fraction_from(2, 4, 4, 0.5), 1 - sqrt(0.25), 1e-15, "looks 2-4");
	/* First tested on its sixth night, past the 4 planned: the whole alpha. */
	near(stats_seq_fraction_from(1, 6, 4, 0.5), 1, 1e-15, "all of it");
	assert_true(stats_seq_fraction_from(5, 6, 4, 0.5) == 0);
	assert_true(stats_seq_fraction_from(6, 6, 4, 0.5) == 0);
	near(stats_seq_pvalue_from(0.01, 1, 6, 4, 0.5), 0.01, 1e-15, "p over the whole alpha");
	assert_true(stats_seq_pvalue_from(1e-9, 6, 6, 4, 0.5) == 1);
	assert_true(isnan(stats_seq_fraction_from(0, 3, 4, 0.5)));
	assert_true(isnan(stats_seq_fraction_from(4, 3, 4, 0.5)));
	assert_true(isnan(stats_seq_fraction_from(1, 3, 0, 0.5)));
}

/*
 * Null releases judged on a schedule that skips nights (no nightly ran):
 * each night's look is tested with probability 1/2, on nights 1 to 6 of
 * a plan of 4. The first tested look spends every look before it; later
 * ones their own. However many were skipped, at most 5% of null
 * releases reject, as the union bound promises; a rule that spent the
 * skipped looks again at every look would not hold it.
 */
static void test_skipped_looks_spent_later_stay_within_alpha(void **state)
{
	enum { RUNS = 20000, NIGHTS = 6, K = 4, NB = 28, PER = 4 };
	size_t seq = 0, greedy = 0;

	(void)state;
	for (size_t r = 0; r < RUNS; r++) {
		double mb = 0, sc = 0;
		bool hit = false, hit_greedy = false, tested = false;
		for (size_t i = 0; i < NB; i++)
			mb += normal() / NB;
		for (size_t k = 1; k <= NIGHTS; k++) {
			double n = (double)(k * PER), z, p;
			bool look = uniform() < 0.5;
			for (size_t i = 0; i < PER; i++)
				sc += normal();
			if (!look)
				continue;
			z = (sc / n - mb) / sqrt(1 / n + 1.0 / NB);
			p = gsl_cdf_ugaussian_Q(z);
			hit |= stats_seq_pvalue_from(p, tested ? k : 1, k, K, 0.5) <= 0.05;
			hit_greedy |= stats_seq_pvalue_from(p, 1, k, K, 0.5) <= 0.05;
			tested = true;
		}
		seq += hit;
		greedy += hit_greedy;
	}
	if (!((double)seq / RUNS <= 0.05 + 0.0046))
		fail_msg("looks after skipped nights reject %.4f of null releases",
			 (double)seq / RUNS);
	if (!((double)greedy / RUNS > 0.06))
		fail_msg(
			"spending every earlier look again rejects only %.4f: the test cannot tell",
			(double)greedy / RUNS);
}

/* ---- pooling ---- */

static void test_weighted_mean_by_moments(void **state)
{
	const double y[] = {1, 2, 3, 4}, v[] = {0.1, 0.1, 0.1, 0.1};
	const double y2[] = {1, 3}, v2[] = {0, 1};
	stats_wmean w;

	(void)state;
	/* s^2 = 5/3, extra = 5/3 - 0.1, equal weights: mean 2.5, var (5/3) / 4. */
	assert_int_equal(stats_wmean_of(&w, y, v, 4, -1), 0);
	near(w.mean, 2.5, 1e-15, "mean");
	near(w.extra, 5.0 / 3 - 0.1, 1e-14, "extra");
	near(w.var_mean, 5.0 / 12, 1e-14, "var of the mean");
	assert_true(w.df == 3);
	/* s^2 = 2, mean v 0.5, extra 1.5: weights 1/1.5 and 1/2.5. */
	assert_int_equal(stats_wmean_of(&w, y2, v2, 2, -1), 0);
	near(w.mean, 1.75, 1e-14, "a precise capture counts more");
	near(w.var_mean, 0.9375, 1e-14, "its variance");
	/* A given extra variance, one observation. */
	assert_int_equal(stats_wmean_of(&w, y2, v2, 1, 0.5), 0);
	near(w.var_mean, 0.5, 1e-15, "one observation with e 0.5 and v 0");
	assert_true(w.df == 0);
	assert_int_equal(stats_wmean_of(&w, y2, v2, 1, -1), STATS_EDATA);
	assert_int_equal(stats_wmean_of(&w, y, v, 0, 0), STATS_EDATA);
}

/*
 * Two precise captures that differ and two imprecise ones at their mean:
 * the spread beyond sampling is the precise ones', which s^2 - mean(v)
 * (here 0, the imprecise ones' sampling variance swamping it) missed.
 */
static void test_extra_variance_is_learnt_from_the_precise_captures(void **state)
{
	const double y[] = {0.11, 0.09, 0.1, 0.1}, v[] = {1e-6, 1e-6, 1e-2, 1e-2};
	const double ye[] = {1, 2, 3, 4}, ve[] = {0.1, 0.1, 0.1, 0.1};
	double s1 = 2e6 + 200, s2 = 2e12 + 2e4, want = (200 - 3) / (s1 - s2 / s1);
	stats_wmean w;

	(void)state;
	near(stats_extra_moments(y, v, 4), want, 1e-12, "DerSimonian-Laird");
	assert_true(want > 1.9e-4);
	assert_int_equal(stats_wmean_of(&w, y, v, 4, -1), 0);
	near(w.extra, want, 1e-12, "the group's extra variance");
	/* The precise captures' mean is not trusted beyond their spread. */
	assert_true(w.var_mean > 0.9e-4);
	/* Equal sampling variances: s^2 - v, as before; unclipped below 0. */
	near(stats_extra_moments(ye, ve, 4), 5.0 / 3 - 0.1, 1e-14, "equal v");
	near(stats_extra_moments(y + 2, v + 2, 2), -1e-2, 1e-15, "below 0 stays below");
	near(stats_extra_moments(y, v, 1), 0, 0, "one capture");
}

/*
 * One weight far above the others: S1 - S2 / S1, summed as written, is
 * S1 less a term that equals it to an ulp or two of 1e18, and the
 * estimate was -0.06, not 4; with v under 1e-154 the squared weights
 * overflowed and it was 0. Moments are the same on any scale: y times k
 * and v times k^2 give k^2 times the estimate.
 */
static void test_extra_variance_survives_one_dominant_or_tiny_weight(void **state)
{
	const double y[] = {0, 3}, v[] = {1e-18, 1};
	const double y1[] = {0, 1}, v1[] = {1, 2}, yk[] = {0, 1e-80}, vk[] = {1e-160, 2e-160};
	stats_wmean w;

	(void)state;
	/* (Q - 1) / (2 w1 w2 / (w1 + w2)) with Q = 9 and w1 = 1e18, w2 = 1: 8 / 2. */
	near(stats_extra_moments(y, v, 2), 4, 1e-12, "one dominant weight");
	assert_int_equal(stats_wmean_of(&w, y, v, 2, -1), 0);
	near(w.extra, 4, 1e-12, "its group's extra variance");
	near(stats_extra_moments(y1, v1, 2), -1, 1e-15, "w 1 and 1/2");
	near(stats_extra_moments(yk, vk, 2), -1e-160, 1e-12, "scaled by 1e-80");
}

/*
 * A service with one function has a share of 1 in every capture, at
 * asin(1) on the VST scale. Eight of them with different sample counts
 * averaged to an ulp above asin(1), whose inverse is NaN: the baseline
 * share and the change were lost. A weighted mean stays within its values.
 */
static void test_a_weighted_mean_of_equal_shares_of_one_is_a_share_of_one(void **state)
{
	double y[8], v[8];
	stats_wmean g[2], all;

	(void)state;
	for (size_t i = 0; i < 8; i++) {
		y[i] = stats_vst(1.0);
		v[i] = stats_vst_var_floor(1000.0 + (double)i);
	}
	assert_int_equal(stats_wmean_of(&g[0], y, v, 8, -1), 0);
	assert_true(g[0].mean == y[0]);
	assert_true(stats_vst_inv(g[0].mean) == 1.0);
	assert_int_equal(stats_wmean_of(&g[1], y, v, 3, 0.001), 0);
	assert_true(g[1].mean <= y[0]);
	assert_int_equal(stats_wmean_combine(&all, g, 2), 0);
	assert_true(all.mean == y[0]);
	assert_true(stats_vst_inv(all.mean) == 1.0);
}

static void test_pooled_variance_is_a_corrected_geometric_mean(void **state)
{
	stats_wmean g[3];
	double out, df;

	(void)state;
	memset(g, 0, sizeof(g));
	g[0].total = 1, g[0].df = 7;
	g[1].total = 4, g[1].df = 7;
	g[2].total = 100, g[2].df = 0; /* no degrees of freedom: not counted */
	/* exp((log 1 + log 4) / 2 - (psi(3.5) - log 3.5)), psi(3.5) = 1.1031566406452429 */
	assert_int_equal(stats_pool_total(&out, &df, g, 3), 0);
	near(out, 2.3227539019231447, 1e-12, "geometric mean, bias removed");
	assert_true(df == 14);
	assert_int_equal(stats_pool_total(&out, &df, g + 2, 1), STATS_EDATA);
}

/*
 * The case issue 18 describes: a quiet release (sd 0.6 points) and a noisy
 * one in between (16.8% to 23.8%). Pooling their captures widens the
 * baseline almost fourfold; weighing each release by the precision of
 * its mean keeps the baseline where the quiet release puts it, and the
 * typical variance well under the pooled one.
 */
static void test_one_noisy_release_does_not_blow_up_the_baseline(void **state)
{
	double quiet[12], noisy[12], vq[12], all[24], va[24], ref, df;
	stats_wmean g[2], comb, pooled;

	(void)state;
	for (size_t i = 0; i < 12; i++) {
		quiet[i] = 22.0 + 0.6 * normal();
		noisy[i] = 16.8 + 7.0 * (double)i / 11;
		vq[i] = 0.01;
		all[i] = quiet[i], all[12 + i] = noisy[i];
		va[i] = va[12 + i] = 0.01;
	}
	assert_int_equal(stats_wmean_of(&g[0], quiet, vq, 12, -1), 0);
	assert_int_equal(stats_wmean_of(&g[1], noisy, vq, 12, -1), 0);
	assert_int_equal(stats_wmean_combine(&comb, g, 2), 0);
	assert_int_equal(stats_wmean_of(&pooled, all, va, 24, -1), 0);
	assert_int_equal(stats_pool_total(&ref, &df, g, 2), 0);
	if (!(fabs(comb.mean - g[0].mean) < 0.2))
		fail_msg("the noisy release moved the baseline to %g (quiet %g)", comb.mean,
			 g[0].mean);
	if (!(comb.var_mean < 0.5 * pooled.var_mean))
		fail_msg("baseline variance %g, pooled %g", comb.var_mean, pooled.var_mean);
	if (!(ref < 0.5 * pooled.total))
		fail_msg("typical variance %g, pooled %g", ref, pooled.total);
}

static void test_shrunk_extra_moves_from_prior_to_own(void **state)
{
	stats_wmean own;

	(void)state;
	memset(&own, 0, sizeof(own));
	own.total = 3, own.vbar = 1, own.df = 0;
	near(stats_shrunk_extra(&own, 2, 10), 1, 1e-15, "no own df: the prior");
	own.df = 10;
	near(stats_shrunk_extra(&own, 2, 10), 1.5, 1e-15, "half and half");
	own.total = 0.5;
	assert_true(stats_shrunk_extra(&own, 0.5, 10) == 0); /* never below 0 */
}

static void test_satterthwaite_and_t(void **state)
{
	stats_result r;
	stats_test_opts o = STATS_TEST_OPTS_INIT;

	(void)state;
	near(stats_satterthwaite(1, 10, 1, 10), 20, 1e-14, "two equal terms");
	near(stats_satterthwaite(1, 10, 0, 0), 10, 1e-14, "one term");
	assert_true(isinf(stats_satterthwaite(1, INFINITY, 1, INFINITY)));
	assert_true(stats_satterthwaite(1, 0, 1, 10) == 1);
	/* scipy.stats.t.sf(2, 10) = 0.03669401738537018 */
	assert_int_equal(stats_test_t(&r, 1, 0.5, 10, &o), 0);
	near(r.p, 0.03669401738537018, 1e-9, "t.sf(2, 10)");
	assert_int_equal(stats_test_t(&r, 1, 0.5, 1e12, &o), 0);
	near(r.p, gsl_cdf_ugaussian_Q(2), 1e-6, "a huge df is the normal");
	assert_int_equal(stats_test_t(&r, 1, 0, 10, &o), STATS_EDATA);
	assert_int_equal(stats_test_t(&r, 1, 0.5, 0.5, &o), STATS_EARG);
}

/*
 * Release noise factors. Exact data: every s2 is vbar + lambda_r *
 * sigma2_k with no sampling error, so the factors come back exactly,
 * scaled so that the baseline's geometric mean is 1.
 */
#define NK 6
#define NR 4
static void fill_exact(double *s2, double *vb, double *df, const double *lam, const double *sg)
{
	for (size_t k = 0; k < NK; k++)
		for (size_t r = 0; r < NR; r++) {
			vb[k * NR + r] = 1e-5 * (double)(k + 1);
			s2[k * NR + r] = vb[k * NR + r] + lam[r] * sg[k];
			df[k * NR + r] = 13;
		}
}

static void test_release_noise_recovers_a_noisy_release(void **state)
{
	/* Baseline v1 quiet, v2 nine times noisier, v3 quiet; judged as quiet as v1. */
	const double lam[NR] = {1, 9, 1, 1}, sg[NK] = {1e-4, 3e-4, 2e-5, 5e-6, 8e-4, 1e-4};
	double s2[NK * NR], vb[NK * NR], df[NK * NR], out[NR], sigma2[NK];
	double g = cbrt(9); /* the geometric mean of 1, 9, 1 */

	(void)state;
	fill_exact(s2, vb, df, lam, sg);
	assert_int_equal(stats_release_noise(out, sigma2, s2, vb, df, NK, NR, 3), 0);
	near(out[0], 1 / g, 1e-6, "v1");
	near(out[1], 9 / g, 1e-6, "the noisy v2");
	near(out[2], 1 / g, 1e-6, "v3");
	near(out[3], 1 / g, 1e-6, "the judged release is as quiet as v1");
	for (size_t k = 0; k < NK; k++)
		near(sigma2[k], sg[k] * g, 1e-6, "sigma2 at factor 1");
}

static void test_release_noise_judged_noisy_release(void **state)
{
	const double lam[NR] = {1, 1, 1, 4}, sg[NK] = {1e-4, 3e-4, 2e-5, 5e-6, 8e-4, 1e-4};
	double s2[NK * NR], vb[NK * NR], df[NK * NR], out[NR];

	(void)state;
	fill_exact(s2, vb, df, lam, sg);
	assert_int_equal(stats_release_noise(out, NULL, s2, vb, df, NK, NR, 3), 0);
	near(out[0], 1, 1e-9, "v1");
	near(out[3], 4, 1e-6, "a noisy judged release is seen as noisy");
}

static void test_release_noise_unknowns_and_bad_input(void **state)
{
	const double lam[NR] = {1, 2, 1, 1}, sg[NK] = {1e-4, 3e-4, 2e-5, 5e-6, 8e-4, 1e-4};
	double s2[NK * NR], vb[NK * NR], df[NK * NR], out[NR];

	(void)state;
	fill_exact(s2, vb, df, lam, sg);
	for (size_t k = 0; k < NK; k++)
		df[k * NR + 3] = 0; /* one judged capture: nothing to learn */
	assert_int_equal(stats_release_noise(out, NULL, s2, vb, df, NK, NR, 3), 0);
	assert_true(isnan(out[3]));
	assert_true(out[1] > out[0]);
	/* Values below sampling noise: the factor has a floor, never 0 or negative. */
	for (size_t k = 0; k < NK; k++)
		s2[k * NR + 3] = 0, df[k * NR + 3] = 3;
	assert_int_equal(stats_release_noise(out, NULL, s2, vb, df, NK, NR, 3), 0);
	assert_true(out[3] == STATS_NOISE_MIN);
	s2[5] = NAN;
	assert_int_equal(stats_release_noise(out, NULL, s2, vb, df, NK, NR, 3), STATS_EARG);
	assert_int_equal(stats_release_noise(out, NULL, s2, vb, df, NK, NR, NR + 1), STATS_EARG);
	assert_int_equal(stats_release_noise(NULL, NULL, s2, vb, df, NK, NR, 3), STATS_EARG);
}

/*
 * With sampling error: 200 functions, chi-square s2 with 13 df drawn
 * from a fixed generator, a baseline release 5 times noisier than the
 * other and a judged release (3 df each) as quiet as the quiet one.
 * The judged factor is within 25% of the quiet release's.
 */
static void test_release_noise_with_sampling_error(void **state)
{
	enum { K = 200, R = 3 };
	static double s2[K * R], vb[K * R], df[K * R];
	double out[R], truth[R] = {1, 5, 1};
	uint64_t x = 88172645463325252ULL;

	(void)state;
	for (size_t k = 0; k < K; k++)
		for (size_t r = 0; r < R; r++) {
			double d = r == 2 ? 3 : 13, sum = 0, sg = 1e-5 * (1 + (double)(k % 17));
			vb[k * R + r] = 2e-6;
			/* chi-square with d df from d squared normals (Box-Muller). */
			for (int i = 0; i < (int)d; i++) {
				double u1, u2, z;
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				u1 = ((double)(x >> 11) + 0.5) / 9007199254740992.0;
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				u2 = ((double)(x >> 11) + 0.5) / 9007199254740992.0;
				z = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
				sum += z * z;
			}
			s2[k * R + r] = (vb[k * R + r] + truth[r] * sg) * sum / d;
			df[k * R + r] = d;
		}
	assert_int_equal(stats_release_noise(out, NULL, s2, vb, df, K, R, 2), 0);
	if (!(out[1] / out[0] > 4 && out[1] / out[0] < 6))
		fail_msg("noisy over quiet %g, want about 5", out[1] / out[0]);
	if (!(out[2] / out[0] > 0.75 && out[2] / out[0] < 1.25))
		fail_msg("judged over quiet %g, want about 1", out[2] / out[0]);
}

/*
 * A lone capture's factor: where every squared deviation is the median of
 * chi-square(1) times its variance at factor 4, the factor is 4, and a
 * third of the functions moved a hundredfold (a real change) leave it
 * there; fewer than three usable functions give none.
 */
static void test_lone_noise_is_the_median_fit_and_ignores_a_few_movers(void **state)
{
	const double q = gsl_cdf_chisq_Pinv(0.5, 1);
	double d2[9], fixed[9], sg[9], lam, df;

	(void)state;
	for (size_t k = 0; k < 9; k++) {
		fixed[k] = 1e-5 * (double)(k + 1);
		sg[k] = 3e-4 / (double)(k + 1);
		d2[k] = q * (fixed[k] + 4 * sg[k]);
	}
	assert_int_equal(stats_lone_noise(&lam, &df, d2, fixed, sg, 9), 0);
	near(lam, 4, 1e-6, "the factor");
	near(df, 9 * 8 * pow(q * exp(-q / 2) / sqrt(2 * 3.14159265358979323846 * q), 2), 1e-9,
	     "the median's degrees of freedom");
	d2[0] *= 100, d2[4] *= 100, d2[8] *= 100;
	assert_int_equal(stats_lone_noise(&lam, &df, d2, fixed, sg, 9), 0);
	assert_true(lam > 3 && lam < 6);
	sg[0] = sg[1] = sg[2] = sg[3] = sg[4] = sg[5] = sg[6] = 0;
	assert_int_equal(stats_lone_noise(&lam, &df, d2, fixed, sg, 9), 0);
	assert_true(isnan(lam) && isnan(df));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fractions_follow_the_power_family),
		cmocka_unit_test(test_sequential_p_divides_by_the_fraction),
		cmocka_unit_test(test_repeated_looks_stay_within_alpha),
		cmocka_unit_test(test_a_first_look_spends_the_looks_no_run_took),
		cmocka_unit_test(test_skipped_looks_spent_later_stay_within_alpha),
		cmocka_unit_test(test_weighted_mean_by_moments),
		cmocka_unit_test(test_extra_variance_is_learnt_from_the_precise_captures),
		cmocka_unit_test(test_extra_variance_survives_one_dominant_or_tiny_weight),
		cmocka_unit_test(test_a_weighted_mean_of_equal_shares_of_one_is_a_share_of_one),
		cmocka_unit_test(test_pooled_variance_is_a_corrected_geometric_mean),
		cmocka_unit_test(test_one_noisy_release_does_not_blow_up_the_baseline),
		cmocka_unit_test(test_shrunk_extra_moves_from_prior_to_own),
		cmocka_unit_test(test_satterthwaite_and_t),
		cmocka_unit_test(test_release_noise_recovers_a_noisy_release),
		cmocka_unit_test(test_release_noise_judged_noisy_release),
		cmocka_unit_test(test_release_noise_unknowns_and_bad_input),
		cmocka_unit_test(test_release_noise_with_sampling_error),
		cmocka_unit_test(test_lone_noise_is_the_median_fit_and_ignores_a_few_movers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
