/*
 * test.h: two-sample tests for a shift of a function's share.
 *
 * Three t tests on summaries (stats_sample: n, mean, variance, floor), for
 * the three shapes a comparison takes in profreg:
 *   - stats_test_shared_var: a few current captures against a baseline,
 *     using the baseline's variance for both sides (the current side has
 *     too few captures to estimate its own);
 *   - stats_test_welch: both sides large enough to estimate their own
 *     variance;
 *   - stats_test_prediction: one current capture against the baseline.
 * and the Mann-Whitney U test on raw values as a robustness check that
 * does not assume normality.
 *
 * Difference and margin. Every test is about diff = current - baseline
 * (on whatever scale the caller works, normally the VST scale). The null
 * value delta0 is the practical margin, in the manner of R's t.test(mu=):
 *   STATS_GREATER    H0: diff <= delta0   H1: diff > delta0  (a regression)
 *   STATS_LESS       H0: diff >= delta0   H1: diff < delta0  (pass a negative
 *                                                    delta0 for "fell by more
 *                                                    than the margin")
 *   STATS_TWO_SIDED  H0: diff == delta0   H1: diff != delta0
 * With delta0 > 0 a change smaller than the margin stays insignificant
 * however many captures there are.
 *
 * Intervals follow the alternative, so that p <= alpha exactly when delta0
 * lies outside the (1 - alpha) interval: one-sided [low, +inf) for
 * STATS_GREATER, (-inf, high] for STATS_LESS, two-sided otherwise. Call
 * again with STATS_TWO_SIDED for a finite interval to print.
 */
#ifndef PR_STATS_TEST_H
#define PR_STATS_TEST_H

#include <stddef.h>

#include "stats/stats.h"

typedef enum stats_alt {
	STATS_GREATER = 0,
	STATS_LESS = 1,
	STATS_TWO_SIDED = 2,
} stats_alt;

/*
 * Accepted range of alpha. GSL's inverse t distribution was checked to
 * converge for every alpha / 2 and alpha in this range and df >= 1; far
 * smaller alphas make it fail.
 */
#define STATS_ALPHA_MIN 1e-6
#define STATS_ALPHA_MAX 0.5

typedef struct stats_test_opts {
	stats_alt alt;
	double delta0; /* null value of diff (the margin); finite */
	double alpha;  /* 1 - confidence of the interval; in [STATS_ALPHA_MIN, STATS_ALPHA_MAX] */
} stats_test_opts;

/* A regression test without margin at 95% confidence. */
#define STATS_TEST_OPTS_INIT {STATS_GREATER, 0.0, 0.05}

/* Result of a t test; every field NaN when the test returned an error. */
typedef struct stats_result {
	double statistic; /* t = (estimate - delta0) / se */
	double df;        /* degrees of freedom of the t distribution */
	double p;         /* p-value for opts.alt, in [0, 1] */
	double estimate;  /* mean(current) - mean(baseline); delta0 not subtracted */
	double se;        /* standard error of estimate, > 0 */
	double ci_low;    /* (1 - alpha) interval of diff; -INFINITY or */
	double ci_high;   /* +INFINITY on the open side of a one-sided test */
} stats_result;

/*
 * Current mean against baseline mean with the baseline's variance s_b^2
 * standing for both sides:
 *   se = sqrt(v_c / n_c + v_b / n_b), df = n_b - 1 (Student t),
 *   v_b = max(s_b^2, base->var_floor), v_c = max(s_b^2, cur->var_floor),
 * which is s_b * sqrt(1/n_c + 1/n_b) when no floor binds. Exact under the
 * null when both sides share one normal distribution; the right test when
 * the current side has too few captures to trust its own variance.
 * base->n >= 2, cur->n >= 1; cur->var is not used.
 * Returns 0, STATS_EARG, or STATS_EDATA (too few, or se == 0).
 */
int stats_test_shared_var(stats_result *out, const stats_sample *base,
			  const stats_sample *cur, const stats_test_opts *opts);

/*
 * Welch's unequal-variance t test: se^2 = v_b / n_b + v_c / n_c with
 * v = max(var, var_floor) on each side, Welch-Satterthwaite df (held
 * within its theoretical range [min(n_b, n_c) - 1, n_b + n_c - 2] against
 * rounding). Both n >= 2. Matches scipy.stats.ttest_ind(cur, base + delta0,
 * equal_var=False) when no floor binds.
 * Returns 0, STATS_EARG, or STATS_EDATA (too few, or se == 0).
 */
int stats_test_welch(stats_result *out, const stats_sample *base,
		     const stats_sample *cur, const stats_test_opts *opts);

/*
 * One new observation x against the baseline (prediction interval test):
 *   t = (x - mean_b - delta0) / (s_b * sqrt(1 + 1/n_b)), df = n_b - 1,
 * with the new observation's variance floored at x_var_floor (its own
 * sampling variance; 0 for none) and the baseline's at base->var_floor.
 * This is stats_test_shared_var with a current side of one.
 */
int stats_test_prediction(stats_result *out, const stats_sample *base, double x,
			  double x_var_floor, const stats_test_opts *opts);

/*
 * The t test of an estimate with a known standard error: t = (est -
 * delta0) / se on df degrees of freedom (df >= 1; larger than 1e7 is
 * taken as 1e7, where t and normal agree), with the p-value and interval
 * of opts as above. For estimates built elsewhere (stats/pool.h).
 * Returns 0, STATS_EARG, or STATS_EDATA (se == 0).
 */
int stats_test_t(stats_result *out, double est, double se, double df,
		 const stats_test_opts *opts);

/*
 * The t quantile with upper tail p on df degrees of freedom: the t at
 * which a one-sided test at level p rejects. p in [1e-9, 0.5] (smaller
 * is taken as 1e-9, where GSL's inverse still converges), df >= 1
 * (larger than 1e7 taken as 1e7). NaN outside.
 */
double stats_t_upper(double p, double df);

typedef enum stats_mw_method {
	STATS_MW_AUTO = 0,   /* exact when allowed (below), else asymptotic */
	STATS_MW_EXACT,      /* exact null distribution; STATS_EDATA if not allowed */
	STATS_MW_ASYMPTOTIC, /* normal approximation, tie and continuity corrected */
} stats_mw_method;

/*
 * The exact distribution is used for nx * ny <= STATS_MW_EXACT_CELLS: its
 * table needs O(min(nx,ny) * nx * ny) doubles, 2 MB at the limit. With
 * ties it is the distribution given the tied values (every choice of
 * which pooled values are x's equally likely, each keeping its mid-rank),
 * counted while that takes under about a millisecond (one side of up to
 * 12 values against 28, or 4 against 200); larger samples with ties use
 * the approximation.
 */
#define STATS_MW_EXACT_CELLS 2500

typedef struct stats_mw_opts {
	stats_alt alt;
	double delta0; /* x is shifted by -delta0 before ranking; finite */
	stats_mw_method method;
} stats_mw_opts;

#define STATS_MW_OPTS_INIT {STATS_GREATER, 0.0, STATS_MW_AUTO}

typedef struct stats_mw_result {
	double u;      /* U of x: pairs with x_i - delta0 > y_j, ties count 1/2 */
	double z;      /* standardised statistic behind p; NaN when exact */
	double p;      /* p-value for opts.alt, in [0, 1] */
	double effect; /* u / (nx * ny): chance a shifted x beats a y */
	int exact;     /* 1 when p comes from the exact distribution */
} stats_mw_result;

/*
 * Mann-Whitney U test of x (current) against y (baseline). Follows
 * scipy.stats.mannwhitneyu(x - delta0, y, use_continuity=True): U of x
 * from mid-ranks; STATS_GREATER means x tends to be larger. Asymptotic:
 * z = (U' - nx*ny/2 - 0.5) / sigma with the tie-corrected sigma, where U'
 * is U (greater), nx*ny - U (less) or the larger of the two (two-sided,
 * p doubled and capped at 1); when every value is tied sigma is 0 and p is
 * 1. Exact: P(U' >= observed) under the null, likewise doubled (with
 * ties, the smaller of the two tails, doubled).
 * nx, ny >= 1; values finite. x and y are not modified.
 * Returns 0, STATS_EARG, STATS_EDATA (exact asked for but not allowed) or
 * STATS_ENOMEM.
 */
int stats_mann_whitney(stats_mw_result *out, const double *x, size_t nx,
		       const double *y, size_t ny, const stats_mw_opts *opts);

#endif
