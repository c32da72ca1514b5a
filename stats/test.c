/*
 * test.c: t tests on sample summaries and the Mann-Whitney U test.
 *
 * GSL's t and normal distribution functions raise no GSL error for any
 * finite or infinite t and df >= 1; the inverse t converges for alpha in
 * [1e-9, 0.5] and df in [1, 1e10] (checked by a sweep when this was
 * written). The argument checks below keep every call inside that domain,
 * which is why this file never touches GSL's error handler.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>

#include "stats/test.h"

static void result_nan(stats_result *out)
{
	out->statistic = out->df = out->p = out->estimate = out->se = NAN;
	out->ci_low = out->ci_high = NAN;
}

static int check_opts(const stats_test_opts *o)
{
	if (!o || !isfinite(o->delta0))
		return STATS_EARG;
	if (o->alt != STATS_GREATER && o->alt != STATS_LESS && o->alt != STATS_TWO_SIDED)
		return STATS_EARG;
	if (!(o->alpha >= STATS_ALPHA_MIN && o->alpha <= STATS_ALPHA_MAX))
		return STATS_EARG;
	return 0;
}

/* need_var: the test reads s->var, which must then be a real variance. */
static int check_sample(const stats_sample *s, size_t min_n, int need_var)
{
	if (!s || !isfinite(s->mean))
		return STATS_EARG;
	if (!isfinite(s->var_floor) || s->var_floor < 0)
		return STATS_EARG;
	if (s->n < min_n)
		return STATS_EDATA;
	if (need_var && !(isfinite(s->var) && s->var >= 0))
		return STATS_EARG;
	return 0;
}

static double floored(double var, double floor)
{
	return var > floor ? var : floor;
}

/*
 * p-value and interval for t = (est - delta0) / se on df degrees of
 * freedom. se must be finite and > 0, df >= 1.
 */
static int t_finish(stats_result *out, double est, double se, double df,
		    const stats_test_opts *o)
{
	double t, q;

	if (!isfinite(est) || !isfinite(se))
		return STATS_EARG;
	if (se <= 0)
		return STATS_EDATA;
	t = (est - o->delta0) / se;
	out->statistic = t;
	out->df = df;
	out->estimate = est;
	out->se = se;
	switch (o->alt) {
	case STATS_GREATER:
		q = gsl_cdf_tdist_Qinv(o->alpha, df);
		out->p = gsl_cdf_tdist_Q(t, df);
		out->ci_low = est - q * se;
		out->ci_high = INFINITY;
		break;
	case STATS_LESS:
		q = gsl_cdf_tdist_Qinv(o->alpha, df);
		out->p = gsl_cdf_tdist_P(t, df);
		out->ci_low = -INFINITY;
		out->ci_high = est + q * se;
		break;
	default:
		q = gsl_cdf_tdist_Qinv(o->alpha / 2, df);
		out->p = fmin(1.0, 2 * gsl_cdf_tdist_Q(fabs(t), df));
		out->ci_low = est - q * se;
		out->ci_high = est + q * se;
		break;
	}
	return 0;
}

int stats_test_t(stats_result *out, double est, double se, double df,
		 const stats_test_opts *opts)
{
	int rc;

	if (!out)
		return STATS_EARG;
	result_nan(out);
	if ((rc = check_opts(opts)) < 0)
		return rc;
	if (!(df >= 1))
		return STATS_EARG;
	if (df > 1e7)
		df = 1e7;
	if ((rc = t_finish(out, est, se, df, opts)) < 0)
		result_nan(out);
	return rc;
}

double stats_t_upper(double p, double df)
{
	if (!(p > 0 && p <= 0.5) || !(df >= 1))
		return NAN;
	return gsl_cdf_tdist_Qinv(p < 1e-9 ? 1e-9 : p, df > 1e7 ? 1e7 : df);
}

int stats_test_shared_var(stats_result *out, const stats_sample *base,
			  const stats_sample *cur, const stats_test_opts *opts)
{
	double vb, vc, se;
	int rc;

	if (!out)
		return STATS_EARG;
	result_nan(out);
	if ((rc = check_opts(opts)) < 0 || (rc = check_sample(base, 2, 1)) < 0 ||
	    (rc = check_sample(cur, 1, 0)) < 0)
		return rc;
	vb = floored(base->var, base->var_floor);
	vc = floored(base->var, cur->var_floor);
	se = sqrt(vc / (double)cur->n + vb / (double)base->n);
	rc = t_finish(out, cur->mean - base->mean, se, (double)(base->n - 1), opts);
	if (rc < 0)
		result_nan(out);
	return rc;
}

int stats_test_prediction(stats_result *out, const stats_sample *base, double x,
			  double x_var_floor, const stats_test_opts *opts)
{
	stats_sample one = {1, x, NAN, x_var_floor};

	return stats_test_shared_var(out, base, &one, opts);
}

/*
 * Welch-Satterthwaite df from the two variance-of-mean terms, written with
 * their shares of the total so that squaring never overflows.
 */
static double welch_df(double ab, size_t nb, double ac, size_t nc)
{
	double lo = (double)((nb < nc ? nb : nc) - 1);
	double hi = (double)(nb + nc - 2);
	double rb = ab / (ab + ac), rc = ac / (ab + ac);
	double df = 1 / (rb * rb / (double)(nb - 1) + rc * rc / (double)(nc - 1));

	return !(df >= lo) ? lo : df > hi ? hi : df;
}

int stats_test_welch(stats_result *out, const stats_sample *base,
		     const stats_sample *cur, const stats_test_opts *opts)
{
	double ab, ac, se;
	int rc;

	if (!out)
		return STATS_EARG;
	result_nan(out);
	if ((rc = check_opts(opts)) < 0 || (rc = check_sample(base, 2, 1)) < 0 ||
	    (rc = check_sample(cur, 2, 1)) < 0)
		return rc;
	ab = floored(base->var, base->var_floor) / (double)base->n;
	ac = floored(cur->var, cur->var_floor) / (double)cur->n;
	se = sqrt(ab + ac);
	if (se > 0 && isfinite(se))
		rc = t_finish(out, cur->mean - base->mean, se,
			      welch_df(ab, base->n, ac, cur->n), opts);
	else
		rc = se > 0 ? STATS_EARG : STATS_EDATA;
	if (rc < 0)
		result_nan(out);
	return rc;
}

/* ---- Mann-Whitney ---- */

typedef struct mw_item {
	double v;
	int from_x;
} mw_item;

static int mw_item_cmp(const void *a, const void *b)
{
	double x = ((const mw_item *)a)->v, y = ((const mw_item *)b)->v;

	return (x > y) - (x < y);
}

/*
 * Rank sum of x (mid-ranks for ties), the tie term sum(t^3 - t), and,
 * when ties exist, every pooled value's mid-rank doubled (a whole
 * number), in ascending order: the exact test with ties needs them.
 */
typedef struct mw_ranks {
	double rank_sum_x;
	double tie_term;
	int64_t *rank2; /* n of them when tie_term > 0, else NULL; freed by the caller */
} mw_ranks;

static int mw_rank(mw_ranks *out, const double *x, size_t nx, double delta0,
		   const double *y, size_t ny)
{
	size_t n = nx + ny;
	mw_item *it = NULL;

	out->rank2 = NULL;
	if (n > SIZE_MAX / sizeof(*it) || !(it = malloc(n * sizeof(*it))) ||
	    !(out->rank2 = malloc(n * sizeof(*out->rank2)))) {
		free(it);
		return STATS_ENOMEM;
	}
	for (size_t i = 0; i < nx; i++)
		it[i] = (mw_item){x[i] - delta0, 1};
	for (size_t i = 0; i < ny; i++)
		it[nx + i] = (mw_item){y[i], 0};
	qsort(it, n, sizeof(*it), mw_item_cmp);
	out->rank_sum_x = 0;
	out->tie_term = 0;
	for (size_t i = 0, j; i < n; i = j) {
		double t, mid;

		for (j = i + 1; j < n && it[j].v == it[i].v; j++)
			;
		t = (double)(j - i);
		mid = (double)(i + 1 + j) / 2; /* ranks i+1 .. j */
		for (size_t k = i; k < j; k++) {
			if (it[k].from_x)
				out->rank_sum_x += mid;
			out->rank2[k] = (int64_t)(i + 1 + j);
		}
		out->tie_term += t * t * t - t;
	}
	free(it);
	if (out->tie_term == 0) {
		free(out->rank2);
		out->rank2 = NULL;
	}
	return 0;
}

/*
 * The exact test with ties: under the null, every choice of which of the
 * n pooled values are the m of one side is equally likely, each value
 * keeping its mid-rank. The distribution of that side's rank sum is
 * counted subset by subset size and sum (f[k][s]: subsets of k of the
 * values seen so far whose doubled ranks sum to s). Without it, one
 * capture against a baseline that held a value twice (a function absent
 * from two captures) went to the normal approximation, whose p-value for
 * 1 against 8 to about 45 values can never fall below about 0.053: a
 * function risen from 0.04% to 5% was no finding.
 *
 * The work is n * m * (largest sum): MW_TIES_WORK bounds it (about a
 * millisecond), as an analysis may test ten thousand functions a night.
 * 12 captures against 28, or 4 against 200, stay within it; above it the
 * approximation is used, which is good for the sizes that reach it (it
 * fails where one side is a single value or two).
 */
#define MW_TIES_WORK 2000000.0

static bool mw_ties_small(const int64_t *rank2, size_t n, size_t m)
{
	double smax = 0;

	for (size_t i = n - m; i < n; i++)
		smax += (double)rank2[i];
	return (double)n * (double)(m + 1) * (smax + 1) <= MW_TIES_WORK;
}

/* P(sum >= obs) and P(sum <= obs) for the doubled rank sum of m of the n values. */
static int mw_exact_ties(double *ge, double *le, const int64_t *rank2, size_t n, size_t m,
			 int64_t obs)
{
	size_t smax = 0, w;
	double *f, total = 0, above = 0, below = 0;

	for (size_t i = n - m; i < n; i++)
		smax += (size_t)rank2[i];
	w = smax + 1;
	if (!(f = calloc((m + 1) * w, sizeof(*f))))
		return STATS_ENOMEM;
	f[0] = 1;
	for (size_t i = 0, seen = 0; i < n; i++) {
		size_t r = (size_t)rank2[i];
		seen += r;
		for (size_t k = i + 1 < m ? i + 1 : m; k >= 1; k--)
			for (size_t s = (seen < smax ? seen : smax); s >= r; s--)
				f[k * w + s] += f[(k - 1) * w + s - r];
	}
	for (size_t s = 0; s <= smax; s++) {
		double c = f[m * w + s];
		total += c;
		if ((int64_t)s >= obs)
			above += c;
		if ((int64_t)s <= obs)
			below += c;
	}
	free(f);
	*ge = above / total;
	*le = below / total;
	return 0;
}

/*
 * P(U <= c) under the null for samples of m and n distinct values, from
 * the counts f(i, j, k) of arrangements of i x's and j y's with U = k:
 * f(i, j, k) = f(i, j - 1, k) + f(i - 1, j, k - j) (the last value is a y,
 * or an x that beats all j y's). One table row per i, updated in place as
 * j grows; f is symmetric in (m, n), so the smaller one indexes rows.
 */
static int mw_exact_cdf(double *out, size_t m, size_t n, size_t c)
{
	size_t kmax, w;
	double *f, below = 0, total = 0;

	if (m > n) {
		size_t s = m;
		m = n;
		n = s;
	}
	kmax = m * n;
	w = kmax + 1;
	if (!(f = calloc((m + 1) * w, sizeof(*f))))
		return STATS_ENOMEM;
	for (size_t i = 0; i <= m; i++)
		f[i * w] = 1;
	for (size_t j = 1; j <= n; j++)
		for (size_t i = 1; i <= m; i++)
			for (size_t k = j; k <= i * j; k++)
				f[i * w + k] += f[(i - 1) * w + k - j];
	for (size_t k = 0; k <= kmax; k++) {
		total += f[m * w + k];
		if (k <= c)
			below += f[m * w + k];
	}
	free(f);
	*out = below / total;
	return 0;
}

static int check_mw_opts(const stats_mw_opts *o)
{
	if (!o || !isfinite(o->delta0))
		return STATS_EARG;
	if (o->alt != STATS_GREATER && o->alt != STATS_LESS && o->alt != STATS_TWO_SIDED)
		return STATS_EARG;
	if (o->method != STATS_MW_AUTO && o->method != STATS_MW_EXACT &&
	    o->method != STATS_MW_ASYMPTOTIC)
		return STATS_EARG;
	return 0;
}

static int finite_after_shift(const double *x, size_t n, double delta0)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]) || !isfinite(x[i] - delta0))
			return 0;
	return 1;
}

static double mw_asymptotic(stats_mw_result *out, double u, size_t nx, size_t ny,
			    double tie_term)
{
	double n = (double)(nx + ny), mn = (double)nx * (double)ny;
	double inner = (n + 1) - tie_term / (n * (n - 1));

	if (inner <= 0) {
		/* Every value tied: no evidence in any direction. */
		out->z = -INFINITY;
		return 1;
	}
	out->z = (u - mn / 2 - 0.5) / sqrt(mn / 12 * inner);
	return gsl_cdf_ugaussian_Q(out->z);
}

/* The U whose upper tail is the p-value of alt (as scipy picks it). */
static double mw_side_u(double u1, double mn, stats_alt alt)
{
	switch (alt) {
	case STATS_GREATER:
		return u1;
	case STATS_LESS:
		return mn - u1;
	default:
		return fmax(u1, mn - u1);
	}
}

int stats_mann_whitney(stats_mw_result *out, const double *x, size_t nx,
		       const double *y, size_t ny, const stats_mw_opts *opts)
{
	mw_ranks r;
	double mn, u1, u, tail;
	size_t m;
	int rc, exact_ok;

	if (!out)
		return STATS_EARG;
	*out = (stats_mw_result){NAN, NAN, NAN, NAN, 0};
	if ((rc = check_mw_opts(opts)) < 0)
		return rc;
	if ((nx && !x) || (ny && !y))
		return STATS_EARG;
	if (nx < 1 || ny < 1)
		return STATS_EDATA;
	if (!finite_after_shift(x, nx, opts->delta0) || !finite_after_shift(y, ny, 0))
		return STATS_EARG;
	if ((rc = mw_rank(&r, x, nx, opts->delta0, y, ny)) < 0)
		return rc;
	mn = (double)nx * (double)ny;
	u1 = r.rank_sum_x - (double)nx * ((double)nx + 1) / 2;
	u = mw_side_u(u1, mn, opts->alt);
	m = nx < ny ? nx : ny;
	exact_ok = nx <= STATS_MW_EXACT_CELLS && ny <= STATS_MW_EXACT_CELLS / nx &&
		   (r.tie_term == 0 || mw_ties_small(r.rank2, nx + ny, m));
	if (opts->method == STATS_MW_EXACT && !exact_ok) {
		rc = STATS_EDATA;
		goto out;
	}
	if (opts->method != STATS_MW_ASYMPTOTIC && exact_ok && r.tie_term == 0) {
		/* P(U >= u) = P(U <= mn - u) by symmetry; u is whole here. */
		if ((rc = mw_exact_cdf(&tail, nx, ny, (size_t)(mn - u))) < 0)
			goto out;
		out->exact = 1;
	} else if (opts->method != STATS_MW_ASYMPTOTIC && exact_ok) {
		/* x's doubled rank sum, or y's (the smaller side) and the tails swapped. */
		int64_t obs2 = llround(2 * r.rank_sum_x);
		int64_t all2 = (int64_t)(nx + ny) * (int64_t)(nx + ny + 1);
		double ge, le;
		if ((rc = mw_exact_ties(nx <= ny ? &ge : &le, nx <= ny ? &le : &ge, r.rank2,
					nx + ny, m, nx <= ny ? obs2 : all2 - obs2)) < 0)
			goto out;
		tail = opts->alt == STATS_GREATER ? ge
		       : opts->alt == STATS_LESS  ? le
						  : fmin(ge, le);
		out->exact = 1;
	} else {
		tail = mw_asymptotic(out, u, nx, ny, r.tie_term);
	}
	out->u = u1;
	out->p = fmin(1.0, (opts->alt == STATS_TWO_SIDED ? 2 : 1) * tail);
	out->effect = u1 / mn;
	rc = 0;
out:
	free(r.rank2);
	return rc;
}
