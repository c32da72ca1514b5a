/*
 * stats.h: descriptive statistics and the variance-stabilising transform.
 *
 * The base of the statistics module: pure functions over plain arrays of
 * doubles, on GSL and libc only. No I/O, no global state, nothing from the
 * rest of profreg. The tests live in stats/test.h, false discovery rate
 * control in stats/fdr.h, ranking and severity in stats/rank.h.
 *
 * Return codes. A function that can fail returns 0 or a negative STATS_E*
 * code. The values equal the PR_E* codes of common/error.h with the same
 * meaning, so a caller can pass them up unchanged after setting its own
 * message (this module has no error record: it knows no input names).
 * Input arrays must hold finite values only: a NaN or an infinity in data
 * is a bug upstream and is refused with STATS_EARG rather than spread.
 *
 * GSL: every call into GSL is made with arguments inside the domain where
 * GSL's own sweep over it raised no error (see stats/test.c), so GSL's
 * error handler is never invoked by this module.
 */
#ifndef PR_STATS_H
#define PR_STATS_H

#include <stddef.h>

enum {
	STATS_OK = 0,
	STATS_EARG = -2,    /* invalid argument: NULL, NaN, out of range (PR_EUSAGE) */
	STATS_EDATA = -4,   /* the data cannot support the statistic: too few
			       observations, zero variance and no floor (PR_EDATA) */
	STATS_ENOMEM = -10, /* allocation failed (PR_ENOMEM) */
};

/* Short lower-case description of a STATS_E* code; never NULL. */
const char *stats_error_name(int code);

/*
 * Summary of one sample as the tests consume it: a baseline keeps these
 * instead of its raw values.
 *
 * var is the sample variance (divisor n - 1); NaN when n == 1.
 * var_floor is the smallest plausible variance of ONE observation, e.g.
 * stats_vst_var_floor(samples in a capture) on the VST scale; 0 for none.
 * The tests use max(var, var_floor) for each variance term, so a run of
 * identical shares never yields an infinite t. A floor, not an addition:
 * the empirical variance already contains the sampling noise, so adding
 * the binomial variance to it would count that noise twice.
 */
typedef struct stats_sample {
	size_t n;
	double mean;
	double var;
	double var_floor;
} stats_sample;

/*
 * Fill *out with n, mean and sample variance of x[0..n-1] and the given
 * var_floor. n >= 1 (var is NaN when n == 1); var_floor finite, >= 0.
 * Returns 0, STATS_EARG or STATS_EDATA (n == 0).
 */
int stats_sample_of(stats_sample *out, const double *x, size_t n, double var_floor);

/* Arithmetic mean of x[0..n-1]; n >= 1. */
int stats_mean(double *out, const double *x, size_t n);

/* Sample variance (divisor n - 1) of x[0..n-1]; n >= 2. */
int stats_variance(double *out, const double *x, size_t n);

/*
 * Median of x[0..n-1]; n >= 1; the mean of the two middle values when n is
 * even. x is not modified (a copy is sorted), hence STATS_ENOMEM.
 */
int stats_median(double *out, const double *x, size_t n);

/*
 * Median absolute deviation from the median, multiplied by
 * 1/Phi^-1(3/4) = 1.482602218505602 so that it estimates the standard
 * deviation of normal data (R's mad() rounds the factor to 1.4826; this is
 * scipy's median_abs_deviation(scale='normal')). n >= 1. x is not
 * modified. May return STATS_ENOMEM.
 */
int stats_mad(double *out, const double *x, size_t n);

/*
 * Quantile `prob` in [0, 1] of x[0..n-1] by linear interpolation between
 * order statistics at position (n - 1) * prob: R's type 7, NumPy's default.
 * n >= 1. x is not modified. May return STATS_ENOMEM.
 */
int stats_quantile(double *out, const double *x, size_t n, double prob);

/* A straight line fitted by least squares: y = c0 + c1 x. */
typedef struct stats_line {
	double c0, c1;
	double var_c1; /* the slope's variance, from the residuals' spread */
} stats_line;

/*
 * The least-squares line through (x[i], y[i]), i < n (gsl_fit_linear);
 * n >= 3 so that the residuals leave a spread to judge the slope by.
 * STATS_EDATA when every x is the same (no slope to fit).
 */
int stats_fit_line(stats_line *out, const double *x, const double *y, size_t n);

/*
 * Pearson's correlation of (x[i], y[i]), i < n (gsl_stats_correlation),
 * into *r, and into *p the one-sided p-value of a correlation that large
 * or larger when there is none (t = r sqrt((n - 2) / (1 - r^2)), n - 2
 * degrees of freedom). n >= 3; STATS_EDATA when x or y does not vary.
 */
int stats_correlation(double *r, double *p, const double *x, const double *y, size_t n);

/*
 * Exponentially weighted moving average of a series ordered oldest first:
 * s_0 = x_0, s_i = alpha * x_i + (1 - alpha) * s_(i-1); *out = s_(n-1).
 * alpha in (0, 1]: larger follows recent values more closely. n >= 1.
 */
int stats_ewma(double *out, const double *x, size_t n, double alpha);

/*
 * Variance-stabilising transform of a share p in [0, 1]: asin(sqrt(p)),
 * in [0, pi/2]. A share estimated from n samples has variance close to
 * 1/(4n) on this scale whatever p is, which is what lets one variance
 * model serve a 0.1% function and a 40% one. NaN when p is outside [0, 1].
 */
double stats_vst(double p);

/* Inverse of stats_vst: sin(y)^2 for y in [0, pi/2]; NaN outside. */
double stats_vst_inv(double y);

/*
 * Binomial sampling variance of one capture's share on the VST scale,
 * 1 / (4 n_samples) (delta method; good once n_samples * p is more than a
 * few). The real capture-to-capture noise is larger and multiplicative;
 * this is only the floor under it. NaN unless n_samples is finite and > 0.
 */
double stats_vst_var_floor(double n_samples);

/*
 * The expected value of stats_vst(X / n) for X ~ Binomial(n, p): what a
 * capture of n samples shows, on average, of a share p. Below a few
 * samples of the function the transform reads low (Jensen: a 0.15%
 * function in captures of 500 samples, 0.75 samples each, averages the
 * VST value of about 0.04%), so captures of very different sizes differ
 * on this scale where their shares do not. stats_vst(p) when n * p is 30
 * or more (the bias is then below 0.5% of the value) or n is over 4e9;
 * NaN when p is outside [0, 1] or n is not finite and at least 1.
 */
double stats_vst_expected(double p, double n);

/*
 * A change expressed on the share scale, moved to the VST scale at a
 * baseline share: stats_vst(clamp(p_base + dp)) - stats_vst(p_base), the
 * sum clamped to [0, 1]. Turns a practical margin ("0.1 percentage
 * points") into the delta0 of a test. NaN when p_base is outside [0, 1]
 * or dp is NaN.
 */
double stats_vst_delta(double p_base, double dp);

/*
 * The reverse: a change dy on the VST scale at baseline y_base, as a
 * change of share: stats_vst_inv(clamp(y_base + dy)) - stats_vst_inv(y_base),
 * the sum clamped to [0, pi/2]. dy may be infinite (an open interval end
 * becomes the largest possible change). NaN when y_base is outside
 * [0, pi/2] or dy is NaN.
 */
double stats_vst_delta_share(double y_base, double dy);

#endif
