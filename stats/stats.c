/*
 * stats.c: descriptive statistics and the variance-stabilising transform.
 *
 * Thin, checked wrappers over GSL's gsl_stats_* so that every caller gets
 * the same argument checks and never hands GSL an empty array.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "stats/stats.h"

#define HALF_PI 1.57079632679489661923

const char *stats_error_name(int code)
{
	switch (code) {
	case STATS_OK:
		return "success";
	case STATS_EARG:
		return "invalid argument";
	case STATS_EDATA:
		return "too few observations or no variance";
	case STATS_ENOMEM:
		return "out of memory";
	default:
		return "unknown error";
	}
}

static int all_finite(const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return 0;
	return 1;
}

/* Common checks: out and x present, n >= min, every value finite. */
static int check_array(const void *out, const double *x, size_t n, size_t min)
{
	if (!out || (n > 0 && !x))
		return STATS_EARG;
	if (n < min)
		return STATS_EDATA;
	return all_finite(x, n) ? 0 : STATS_EARG;
}

/* A copy of x the caller frees; NULL when out of memory. */
static double *copy_of(const double *x, size_t n)
{
	double *c;

	if (n > SIZE_MAX / sizeof(*c))
		return NULL;
	c = malloc(n * sizeof(*c));
	if (c)
		memcpy(c, x, n * sizeof(*c));
	return c;
}

int stats_mean(double *out, const double *x, size_t n)
{
	int rc;

	if ((rc = check_array(out, x, n, 1)) < 0)
		return rc;
	*out = gsl_stats_mean(x, 1, n);
	return 0;
}

int stats_variance(double *out, const double *x, size_t n)
{
	int rc;

	if ((rc = check_array(out, x, n, 2)) < 0)
		return rc;
	*out = gsl_stats_variance(x, 1, n);
	return 0;
}

int stats_sample_of(stats_sample *out, const double *x, size_t n, double var_floor)
{
	int rc;

	if ((rc = check_array(out, x, n, 1)) < 0)
		return rc;
	if (!isfinite(var_floor) || var_floor < 0)
		return STATS_EARG;
	out->n = n;
	out->mean = gsl_stats_mean(x, 1, n);
	out->var = n >= 2 ? gsl_stats_variance(x, 1, n) : NAN;
	out->var_floor = var_floor;
	return 0;
}

int stats_median(double *out, const double *x, size_t n)
{
	double *c = NULL;
	int rc;

	if ((rc = check_array(out, x, n, 1)) < 0)
		return rc;
	if (!(c = copy_of(x, n)))
		return STATS_ENOMEM;
	*out = gsl_stats_median(c, 1, n);
	free(c);
	return 0;
}

int stats_mad(double *out, const double *x, size_t n)
{
	double *work = NULL;
	int rc;

	if ((rc = check_array(out, x, n, 1)) < 0)
		return rc;
	if (n > SIZE_MAX / sizeof(*work) || !(work = malloc(n * sizeof(*work))))
		return STATS_ENOMEM;
	/* gsl_stats_mad applies the normal factor; gsl_stats_mad0 would not. */
	*out = gsl_stats_mad(x, 1, n, work);
	free(work);
	return 0;
}

int stats_fit_line(stats_line *out, const double *x, const double *y, size_t n)
{
	double c00, c01, c11, sumsq;
	bool spread = false;
	int rc;

	if ((rc = check_array(out, x, n, 3)) < 0 || (rc = check_array(out, y, n, 3)) < 0)
		return rc;
	/* Every x alike leaves GSL dividing by a spread of 0. */
	for (size_t i = 1; i < n && !spread; i++)
		spread = x[i] != x[0];
	if (!spread)
		return STATS_EDATA;
	if (gsl_fit_linear(x, 1, y, 1, n, &out->c0, &out->c1, &c00, &c01, &c11, &sumsq) != 0 ||
	    !isfinite(out->c1) || !isfinite(c11))
		return STATS_EDATA;
	out->var_c1 = c11;
	return 0;
}

int stats_correlation(double *r, double *p, const double *x, const double *y, size_t n)
{
	double t;
	int rc;

	if ((rc = check_array(r, x, n, 3)) < 0 || (rc = check_array(p, y, n, 3)) < 0)
		return rc;
	if (gsl_stats_variance(x, 1, n) <= 0 || gsl_stats_variance(y, 1, n) <= 0)
		return STATS_EDATA;
	*r = gsl_stats_correlation(x, 1, y, 1, n);
	if (!isfinite(*r))
		return STATS_EDATA;
	if (*r >= 1) {
		*p = 0;
		return 0;
	}
	t = *r * sqrt((double)(n - 2) / (1 - *r * *r));
	*p = gsl_cdf_tdist_Q(t, (double)(n - 2));
	return 0;
}

int stats_quantile(double *out, const double *x, size_t n, double prob)
{
	double *c = NULL;
	int rc;

	if ((rc = check_array(out, x, n, 1)) < 0)
		return rc;
	if (!(prob >= 0 && prob <= 1))
		return STATS_EARG;
	if (!(c = copy_of(x, n)))
		return STATS_ENOMEM;
	gsl_sort(c, 1, n);
	*out = gsl_stats_quantile_from_sorted_data(c, 1, n, prob);
	free(c);
	return 0;
}

int stats_ewma(double *out, const double *x, size_t n, double alpha)
{
	double s;
	int rc;

	if ((rc = check_array(out, x, n, 1)) < 0)
		return rc;
	if (!(alpha > 0 && alpha <= 1))
		return STATS_EARG;
	s = x[0];
	for (size_t i = 1; i < n; i++)
		s = alpha * x[i] + (1 - alpha) * s;
	*out = s;
	return 0;
}

double stats_vst(double p)
{
	if (!(p >= 0 && p <= 1))
		return NAN;
	return asin(sqrt(p));
}

double stats_vst_expected(double p, double n)
{
	double lambda, sum = 0, pk;
	unsigned int trials, kmax;

	if (!(p >= 0 && p <= 1) || !(isfinite(n) && n >= 1))
		return NAN;
	lambda = n * p;
	/* Past GSL's unsigned trials (4e9 samples) too: nothing to sum there. */
	if (lambda >= 30 || p == 0 || p == 1 || n > 4e9)
		return asin(sqrt(p));
	trials = (unsigned int)floor(n);
	/* Past lambda + 12 sd + 25 the binomial's tail holds under 1e-12 of the mass. */
	kmax = (unsigned int)ceil(lambda + 12 * sqrt(lambda) + 25);
	if (kmax > trials)
		kmax = trials;
	/*
	 * P(0) from GSL, each next one from the last (P(k + 1) = P(k) (n - k)
	 * / (k + 1) p / (1 - p)): a density call a term took the analysis
	 * of fleets of captures of 2,000 samples and widely varied sizes from
	 * 33 s to 81 s (12 fleet-nights), this way 50 s. With n p under 30,
	 * P(0) is at least e^-31: nothing underflows.
	 */
	pk = gsl_ran_binomial_pdf(0, p, trials);
	for (unsigned int k = 0; k <= kmax; k++) {
		sum += pk * asin(sqrt((double)k / trials));
		pk *= (double)(trials - k) / (double)(k + 1) * (p / (1 - p));
	}
	return sum;
}

double stats_vst_inv(double y)
{
	double s;

	if (!(y >= 0 && y <= HALF_PI))
		return NAN;
	s = sin(y);
	return s * s;
}

double stats_vst_var_floor(double n_samples)
{
	if (!(isfinite(n_samples) && n_samples > 0))
		return NAN;
	return 1 / (4 * n_samples);
}

static double clamp(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

double stats_vst_delta(double p_base, double dp)
{
	if (!(p_base >= 0 && p_base <= 1) || isnan(dp))
		return NAN;
	return stats_vst(clamp(p_base + dp, 0, 1)) - stats_vst(p_base);
}

double stats_vst_delta_share(double y_base, double dy)
{
	if (!(y_base >= 0 && y_base <= HALF_PI) || isnan(dy))
		return NAN;
	return stats_vst_inv(clamp(y_base + dy, 0, HALF_PI)) - stats_vst_inv(y_base);
}
