/*
 * pool.c: precision-weighted group means and robust pooling (see pool.h).
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sf_psi.h>

#include "stats/pool.h"

/*
 * A weighted mean lies between the least and the greatest value it
 * averages; rounding can put sum(w y) / sum(w) an ulp outside them (eight
 * captures of share 1 average to just above asin(1)), and one ulp past
 * pi/2 is no share at all. Keep it inside.
 */
static double within(double mean, double lo, double hi)
{
	return mean < lo ? lo : mean > hi ? hi : mean;
}

static int finite_nonneg(const double *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(v[i]) || v[i] < 0)
			return 0;
	return 1;
}

double stats_extra_moments(const double *y, const double *v, size_t n)
{
	double rest = 0, swy = 0, mean = 0, q = 0, vbar = 0, den;
	size_t top = 0;
	bool weighed = true;

	if (n < 2)
		return 0;
	for (size_t i = 0; i < n; i++)
		weighed = weighed && v[i] > 0 && isfinite(1 / v[i]);
	if (!weighed) {
		/* A capture without sampling noise: the unweighted moments. */
		for (size_t i = 0; i < n; i++) {
			mean += y[i] / (double)n;
			vbar += v[i] / (double)n;
		}
		for (size_t i = 0; i < n; i++)
			q += (y[i] - mean) * (y[i] - mean);
		return q / (double)(n - 1) - vbar;
	}
	/*
	 * The weights scaled by the largest, v[top] / v[i] <= 1, so that no
	 * square overflows; and S1 - S2 / S1 summed as the sum of w_i (S1 -
	 * w_i) / S1, with S1 - w_top the sum of the others: as written, one
	 * weight far above the rest makes it S1 less a term within an ulp of
	 * S1, and the estimate noise.
	 */
	for (size_t i = 0; i < n; i++)
		if (v[i] < v[top])
			top = i;
	for (size_t i = 0; i < n; i++) {
		if (i != top)
			rest += v[top] / v[i];
		swy += y[i] * (v[top] / v[i]);
	}
	mean = swy / (1 + rest);
	den = rest;
	for (size_t i = 0; i < n; i++)
		if (i != top)
			den += v[top] / v[i] * (1 + rest - v[top] / v[i]);
	for (size_t i = 0; i < n; i++) /* Q, times v[top] as the weights are */
		q += (y[i] - mean) * (y[i] - mean) * (v[top] / v[i]);
	return (q - (double)(n - 1) * v[top]) / (den / (1 + rest));
}

int stats_wmean_of(stats_wmean *out, const double *y, const double *v, size_t n, double extra)
{
	double vbar = 0, sw = 0, swy = 0, lo, hi;

	if (!out || !y || !v || isnan(extra) || isinf(extra))
		return STATS_EARG;
	if (n == 0 || (extra < 0 && n < 2))
		return STATS_EDATA;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(y[i]))
			return STATS_EARG;
	if (!finite_nonneg(v, n))
		return STATS_EARG;
	lo = hi = y[0];
	for (size_t i = 0; i < n; i++) {
		vbar += v[i];
		lo = fmin(lo, y[i]);
		hi = fmax(hi, y[i]);
	}
	vbar /= (double)n;
	out->n = n;
	out->vbar = vbar;
	if (extra < 0) {
		extra = fmax(0, stats_extra_moments(y, v, n));
		out->df = (double)(n - 1);
	} else {
		out->df = 0;
	}
	for (size_t i = 0; i < n; i++) {
		double w = 1 / (extra + v[i]);
		if (!isfinite(w))
			return STATS_EDATA; /* no variance at all: nothing to weigh by */
		sw += w;
		swy += w * y[i];
	}
	out->extra = extra;
	out->total = extra + vbar;
	out->mean = within(swy / sw, lo, hi);
	out->var_mean = 1 / sw;
	return 0;
}

int stats_pool_total(double *out, double *df_out, const stats_wmean *g, size_t ng)
{
	double df = 0, acc = 0;

	if (!out || !df_out || (ng && !g))
		return STATS_EARG;
	for (size_t k = 0; k < ng; k++) {
		double d = g[k].df;
		if (!(d > 0))
			continue;
		if (!(g[k].total > 0) || !isfinite(g[k].total))
			return STATS_EARG;
		/* Remove the bias of a log variance with d degrees of freedom. */
		acc += d * (log(g[k].total) - (gsl_sf_psi(d / 2) - log(d / 2)));
		df += d;
	}
	if (df <= 0)
		return STATS_EDATA;
	*out = exp(acc / df);
	*df_out = df;
	return 0;
}

int stats_wmean_combine(stats_wmean *out, const stats_wmean *g, size_t ng)
{
	double sw = 0, swm = 0, df = 0, lo, hi;
	size_t n = 0;

	if (!out || !g)
		return STATS_EARG;
	if (ng == 0)
		return STATS_EDATA;
	lo = hi = g[0].mean;
	for (size_t k = 0; k < ng; k++) {
		if (!(g[k].var_mean > 0) || !isfinite(g[k].var_mean) || !isfinite(g[k].mean))
			return STATS_EARG;
		sw += 1 / g[k].var_mean;
		swm += g[k].mean / g[k].var_mean;
		lo = fmin(lo, g[k].mean);
		hi = fmax(hi, g[k].mean);
		df += g[k].df;
		n += g[k].n;
	}
	out->n = n;
	out->mean = within(swm / sw, lo, hi);
	out->var_mean = 1 / sw;
	out->df = df;
	out->extra = out->total = out->vbar = NAN;
	return 0;
}

bool stats_het_outlier(double q, double df, double phi)
{
	if (!(df >= 1) || !isfinite(q) || !(phi >= 1))
		return false;
	/*
	 * The quantile is df + 22.9 at df 1 and grows faster than df: below
	 * that, no need to compute it (it cost a third of an analysis, once
	 * for every fit of every function).
	 */
	if (q <= phi * (df + 22.9))
		return false;
	return q > phi * gsl_cdf_chisq_Qinv(STATS_HET_P, df);
}

void stats_phi_robust(double *phi, double *phi_df, const double *q, const double *df, size_t n)
{
	double cur = 1, cur_df = 0;

	/* Each pass leaves out more (phi only falls), so it ends; 64 passes bound it. */
	for (int pass = 0; pass < 64; pass++) {
		double sq = 0, sdf = 0, next;
		for (size_t k = 0; k < n; k++)
			if (pass == 0 || !stats_het_outlier(q[k], df[k], cur))
				sq += q[k], sdf += df[k];
		next = sdf > 0 && sq > sdf ? sq / sdf : 1;
		cur_df = sdf;
		if (pass > 0 && next == cur)
			break;
		cur = next;
	}
	*phi = cur;
	*phi_df = cur_df;
}

/* Cochran's Q of g's means about their mean weighted by 1 / (var_mean + t2). */
static double q_at(const stats_wmean *g, size_t ng, double t2)
{
	double sw = 0, swm = 0, m, q = 0;

	for (size_t k = 0; k < ng; k++) {
		sw += 1 / (g[k].var_mean + t2);
		swm += g[k].mean / (g[k].var_mean + t2);
	}
	m = swm / sw;
	for (size_t k = 0; k < ng; k++)
		q += (g[k].mean - m) * (g[k].mean - m) / (g[k].var_mean + t2);
	return q;
}

double stats_tau2_between(const stats_wmean *g, size_t ng)
{
	double lo = 0, hi = 0, lo_m = INFINITY, hi_m = -INFINITY, want = (double)ng - 1;

	if (ng < 2 || !(q_at(g, ng, 0) > want))
		return 0;
	/* Q falls as t2 grows; at the means' whole range squared it is below ng - 1. */
	for (size_t k = 0; k < ng; k++)
		lo_m = fmin(lo_m, g[k].mean), hi_m = fmax(hi_m, g[k].mean);
	hi = (hi_m - lo_m) * (hi_m - lo_m) * (double)ng;
	if (!(hi > 0) || !isfinite(hi))
		return 0;
	for (int it = 0; it < 200 && hi - lo > 1e-12 * hi; it++) {
		double mid = 0.5 * (lo + hi);
		if (q_at(g, ng, mid) > want)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

double stats_shrunk_extra(const stats_wmean *own, double prior_total, double prior_df)
{
	double d = own->df > 0 ? own->df : 0, p = prior_df > 0 ? prior_df : 0;

	if (d + p <= 0)
		return fmax(0, prior_total - own->vbar);
	return fmax(0, (p * prior_total + d * own->total) / (p + d) - own->vbar);
}

double stats_satterthwaite(double a, double da, double b, double db)
{
	double s = a + b, den = 0, df;

	if (!(s > 0))
		return 1;
	if (isfinite(da) && da > 0)
		den += (a / s) * (a / s) / da;
	else if (!isinf(da) && a > 0)
		return 1; /* a term with no degrees of freedom: as uncertain as it gets */
	if (isfinite(db) && db > 0)
		den += (b / s) * (b / s) / db;
	else if (!isinf(db) && b > 0)
		return 1;
	if (den <= 0)
		return INFINITY;
	df = 1 / den;
	return df < 1 ? 1 : df;
}

/* Function k's variance beyond sampling at factor 1, from the baseline's releases. */
static void noise_sigma2(double *sigma2, const double *lam, const double *s2, const double *vbar,
			 const double *df, size_t nk, size_t nr, size_t nbase)
{
	for (size_t k = 0; k < nk; k++) {
		double num = 0, den = 0;
		for (size_t r = 0; r < nbase; r++) {
			double d = df[k * nr + r];
			if (!(d > 0) || isnan(lam[r]))
				continue;
			num += d * (s2[k * nr + r] - vbar[k * nr + r]) / lam[r];
			den += d;
		}
		sigma2[k] = den > 0 && num > 0 ? num / den : 0;
	}
}

/*
 * The factor of column r given the sigma2_k. (s2 - vbar) / sigma2_k
 * estimates it with variance about 2 (lambda sigma2_k + vbar)^2 /
 * (df sigma2_k^2): functions whose values are mostly sampling noise
 * count little.
 */
static double noise_factor(const double *sigma2, double lam, const double *s2,
			   const double *vbar, const double *df, size_t nk, size_t nr, size_t r)
{
	double num = 0, den = 0;

	for (size_t k = 0; k < nk; k++) {
		double d = df[k * nr + r], sg = sigma2[k], tot, w;
		if (!(d > 0) || !(sg > 0))
			continue;
		tot = lam * sg + vbar[k * nr + r];
		w = d * sg * sg / (tot * tot);
		num += w * (s2[k * nr + r] - vbar[k * nr + r]) / sg;
		den += w;
	}
	return den > 0 ? fmax(STATS_NOISE_MIN, num / den) : NAN;
}

int stats_release_noise(double *lambda, double *sigma2, const double *s2, const double *vbar,
			const double *df, size_t nk, size_t nr, size_t nbase)
{
	double *sg;

	if (!lambda || nbase > nr || (nk && nr && (!s2 || !vbar || !df)))
		return STATS_EARG;
	for (size_t i = 0; i < nk * nr; i++)
		if (!isfinite(s2[i]) || !isfinite(vbar[i]) || !(df[i] >= 0) || isinf(df[i]) ||
		    vbar[i] < 0 || s2[i] < 0)
			return STATS_EARG;
	if (!(sg = calloc(nk ? nk : 1, sizeof(*sg))))
		return STATS_ENOMEM;
	for (size_t r = 0; r < nr; r++)
		lambda[r] = 1;
	for (int it = 0; it < 50; it++) {
		double change = 0, acc = 0, wsum = 0, g;
		noise_sigma2(sg, lambda, s2, vbar, df, nk, nr, nbase);
		for (size_t r = 0; r < nbase; r++) {
			double was = lambda[r], d = 0;
			lambda[r] = noise_factor(sg, isnan(was) ? 1 : was, s2, vbar, df, nk, nr, r);
			if (isnan(lambda[r]))
				continue;
			for (size_t k = 0; k < nk; k++)
				d += df[k * nr + r];
			acc += d * log(lambda[r]);
			wsum += d;
			if (!isnan(was))
				change = fmax(change, fabs(log(lambda[r] / was)));
		}
		g = wsum > 0 ? exp(acc / wsum) : 1;
		for (size_t r = 0; r < nbase; r++)
			lambda[r] /= g;
		if (it > 0 && change < 1e-9)
			break;
	}
	noise_sigma2(sg, lambda, s2, vbar, df, nk, nr, nbase);
	for (size_t r = nbase; r < nr; r++)
		lambda[r] = noise_factor(sg, 1, s2, vbar, df, nk, nr, r);
	/* The judged columns' weights used factor 1: once more at their own. */
	for (size_t r = nbase; r < nr; r++)
		if (!isnan(lambda[r]))
			lambda[r] = noise_factor(sg, lambda[r], s2, vbar, df, nk, nr, r);
	if (sigma2)
		for (size_t k = 0; k < nk; k++)
			sigma2[k] = sg[k];
	free(sg);
	return 0;
}

static int dbl_cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* The median of the m ratios d2 / (fixed + lambda * sigma2) kept in keep. */
static double lone_median(const double *d2, const double *fixed, const double *sigma2,
			  const size_t *keep, size_t m, double lambda, double *r)
{
	for (size_t i = 0; i < m; i++)
		r[i] = d2[keep[i]] / (fixed[keep[i]] + lambda * sigma2[keep[i]]);
	qsort(r, m, sizeof(*r), dbl_cmp);
	return m % 2 ? r[m / 2] : 0.5 * (r[m / 2 - 1] + r[m / 2]);
}

int stats_lone_noise(double *lambda, double *df, const double *d2, const double *fixed,
		     const double *sigma2, size_t n)
{
	double target = gsl_cdf_chisq_Pinv(0.5, 1), lo = log(STATS_NOISE_MIN), hi = log(1e6);
	double *r = NULL;
	size_t *keep = NULL, m = 0;

	*lambda = *df = NAN;
	if (n == 0)
		return 0;
	if (!(r = malloc(n * sizeof(*r))) || !(keep = malloc(n * sizeof(*keep)))) {
		free(r);
		return STATS_ENOMEM;
	}
	for (size_t k = 0; k < n; k++)
		if (isfinite(d2[k]) && d2[k] >= 0 && isfinite(fixed[k]) && fixed[k] >= 0 &&
		    isfinite(sigma2[k]) && sigma2[k] > 0)
			keep[m++] = k;
	if (m < 3)
		goto out;
	{
		double fq = exp(-target / 2) / sqrt(2 * 3.14159265358979323846 * target);
		*df = 8 * (double)m * fq * fq * target * target;
	}
	/* The median falls as lambda grows: bisect on log lambda. */
	if (lone_median(d2, fixed, sigma2, keep, m, exp(lo), r) <= target) {
		*lambda = STATS_NOISE_MIN;
		goto out;
	}
	if (lone_median(d2, fixed, sigma2, keep, m, exp(hi), r) >= target) {
		*lambda = exp(hi);
		goto out;
	}
	for (int it = 0; it < 60; it++) {
		double mid = 0.5 * (lo + hi);
		if (lone_median(d2, fixed, sigma2, keep, m, exp(mid), r) > target)
			lo = mid;
		else
			hi = mid;
	}
	*lambda = exp(0.5 * (lo + hi));
out:
	free(r);
	free(keep);
	return 0;
}
