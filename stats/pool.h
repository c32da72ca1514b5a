/*
 * pool.h: means that know how precise each observation is, and a
 * baseline that one noisy release cannot blow up.
 *
 * An observation i (one capture's variance-stabilised share) has two
 * noises: its sampling noise v_i, known from its sample count (1 / 4n on
 * the VST scale), and the real capture-to-capture variation e (hosts,
 * traffic mix), the same for every capture of one group (a release) and
 * estimated from the data. Its variance is e + v_i, so a capture of 500
 * samples counts for less than one of 50,000 when sampling dominates.
 *
 * A baseline is several groups (releases). Each group gets its own e and
 * its own precision-weighted mean; the baseline's mean weighs each group
 * by the precision of its mean, so a release whose captures scattered
 * widely counts for little instead of widening everything. The variation
 * a new release is expected to have is the groups' typical one: the
 * degrees-of-freedom weighted geometric mean of their variances (log
 * variances average; one variance ten times the others moves a
 * geometric mean much less than an arithmetic one), combined with the new
 * release's own spread as its captures come in.
 *
 * Pure functions on GSL and libc; return codes as in stats/stats.h.
 */
#ifndef PR_STATS_POOL_H
#define PR_STATS_POOL_H

#include <stdbool.h>
#include <stddef.h>

#include "stats/stats.h"

/* One group's precision-weighted summary. */
typedef struct stats_wmean {
	size_t n;
	double mean;     /* sum(w_i y_i) / sum(w_i), w_i = 1 / (extra + v_i), never
			    * outside the least and greatest y_i (nor rounded out) */
	double var_mean; /* 1 / sum(w_i): the variance of that mean */
	double extra;    /* e: variance beyond sampling, >= 0 */
	double total;    /* e + mean(v): the variance of one typical observation */
	double vbar;     /* mean(v) */
	double df;       /* degrees of freedom behind `extra` (n - 1; 0 when assumed) */
} stats_wmean;

/*
 * The variance beyond sampling of y[0..n-1] with sampling variances
 * v[0..n-1], by DerSimonian and Laird's moments, not clipped at 0 (an
 * unbiased estimate may fall below it): (Q - (n - 1)) / (S1 - S2 / S1)
 * with weights 1 / v_i, Q their weighted sum of squares about the
 * weighted mean, S1 and S2 the sums of the weights and of their squares.
 * With equal v it is s^2 - v. Unlike s^2 - mean(v), it learns e mostly
 * from the precise captures: in a baseline of 300-sample and
 * 30,000-sample captures the small ones' sampling noise swamps s^2, and
 * s^2 - mean(v) fell to 0 so often that the large ones were trusted as if
 * nothing but sampling moved them. A v of 0 falls back to s^2 - mean(v).
 * 0 when n < 2.
 */
double stats_extra_moments(const double *y, const double *v, size_t n);

/*
 * Summarise y[0..n-1] with sampling variances v[0..n-1] (finite, >= 0).
 * extra < 0: estimate e by moments, max(0, stats_extra_moments) (n >= 2;
 * with n == 1 it is STATS_EDATA); extra >= 0: use it as e (n >= 1, df 0).
 */
int stats_wmean_of(stats_wmean *out, const double *y, const double *v, size_t n, double extra);

/*
 * The variance a new group's observation is expected to have, from the
 * groups g[0..ng-1] that have df > 0: the df-weighted mean of
 * log(total) with each log corrected for its bias (E log s^2 =
 * log sigma^2 + psi(df/2) - log(df/2) for a chi-square s^2), back on the
 * variance scale. *df_out gets the sum of their df. STATS_EDATA when no
 * group has df > 0.
 */
int stats_pool_total(double *out, double *df_out, const stats_wmean *g, size_t ng);

/*
 * Combine independent group means into one by inverse-variance weights:
 * out->mean = sum(m_k / V_k) / sum(1 / V_k), out->var_mean = 1 / sum(1 / V_k),
 * out->n = sum(n_k), out->df = sum(df_k). Every V_k finite and > 0. The
 * mean is never outside the least and greatest m_k, rounding included.
 */
int stats_wmean_combine(stats_wmean *out, const stats_wmean *g, size_t ng);

/*
 * Release heterogeneity of a service, pooled over its functions: each
 * function's Cochran's Q of its release means (q[k], on df[k] degrees of
 * freedom). *phi = sum(q) / sum(df) (at least 1) over the functions that
 * are not outliers (stats_het_outlier at that phi), *phi_df their sum of
 * df; found by leaving outliers out until none changes. q must be in
 * value order (the sum is then the same to the last bit, whatever order
 * the functions came in). One function whose code came or went between
 * releases has a Q of thousands: in the plain mean it made every other
 * function's release effect that large, and nothing could be found.
 */
void stats_phi_robust(double *phi, double *phi_df, const double *q, const double *df, size_t n);

/*
 * True when one function's releases differ far beyond what the service's
 * releases do: q above phi times chi-square's upper STATS_HET_P point on
 * df degrees of freedom. Under the model (every function's releases vary
 * phi times their sampling) that happens once in 1/STATS_HET_P functions.
 */
#define STATS_HET_P 1e-6
bool stats_het_outlier(double q, double df, double phi);

/*
 * The variance between the groups g[0..ng-1] beyond their means' own
 * (var_mean), by Paule and Mandel's estimator: the t2 at which Cochran's
 * Q with weights 1 / (var_mean + t2) equals ng - 1 (0 when it is below
 * that at t2 = 0, or ng < 2). DerSimonian and Laird's one-step moments
 * follow the precise groups: three releases without a function (zeros,
 * as precise as can be) and one that ran it at 15% gave a t2 of almost
 * nothing, and the baseline stayed at 0.
 */
double stats_tau2_between(const stats_wmean *g, size_t ng);

/*
 * The extra variance of a group with `own` summarised observations (df
 * own->df, may be 0) shrunk towards a prior variance `prior_total` of one
 * observation with `prior_df` degrees of freedom (the empirical Bayes
 * step of a moderated t test): returns
 *   max(0, (prior_df * prior_total + own->df * own->total) / (prior_df + own->df)
 *          - own->vbar).
 */
double stats_shrunk_extra(const stats_wmean *own, double prior_total, double prior_df);

/*
 * Release noise factors: a release that is noisy is noisy in every
 * function, so its factor is learnt from all of a service's functions at
 * once. Release r's variance beyond sampling for function k is modelled
 * as lambda[r] * sigma2_k. Inputs are nk x nr matrices, row k, column r
 * (k * nr + r): s2, each release's sample variance of function k's
 * values; vbar, their mean sampling variance; df, the degrees of freedom
 * of s2 (0: the release has fewer than two values of k, unknown).
 * Columns 0..nbase-1 are the baseline's releases: they fit the sigma2_k
 * and their factors; columns nbase..nr-1 (the judged captures) get
 * factors against those sigma2_k without moving them. Each factor is the
 * inverse-variance weighted mean over functions of (s2 - vbar) / sigma2_k
 * (alternated with the sigma2_k until it settles), at least
 * STATS_NOISE_MIN. The factors are scaled so that the baseline's
 * df-weighted geometric mean is 1: a release as noisy as a typical one
 * has 1. lambda[r] is NAN for a column no function informs. sigma2, when
 * not NULL, gets the nk sigma2_k (0 when unknown). Returns 0,
 * STATS_EARG (bad arguments, non-finite input) or STATS_ENOMEM.
 */
#define STATS_NOISE_MIN 1e-3
int stats_release_noise(double *lambda, double *sigma2, const double *s2, const double *vbar,
			const double *df, size_t nk, size_t nr, size_t nbase);

/*
 * The noise factor of a release judged on one capture, which has no
 * spread of its own to learn it from. Function k's squared deviation
 * d2[k] of that capture from the baseline's mean has variance fixed[k]
 * (sampling, and the baseline mean's own) plus lambda * sigma2[k] (the
 * release's spread beyond sampling, as in stats_release_noise). *lambda
 * gets the factor at which the median over functions of d2[k] /
 * (fixed[k] + lambda * sigma2[k]) is the median of chi-square with one
 * degree of freedom: a median, so the few functions a real change moves
 * do not make the release noisy. Functions with sigma2[k] <= 0 or a
 * non-finite input are left out; *lambda is NAN when fewer than three
 * remain, and at least STATS_NOISE_MIN. *df gets the degrees of freedom
 * of a variance estimate as precise as that median's (8 m f(q)^2 q^2 for
 * m functions, q the median of chi-square with one degree of freedom and
 * f its density there: about 0.37 m), NAN with *lambda. Returns 0 or
 * STATS_ENOMEM.
 */
int stats_lone_noise(double *lambda, double *df, const double *d2, const double *fixed,
		     const double *sigma2, size_t n);

/*
 * Welch-Satterthwaite degrees of freedom of a sum of two variance
 * terms a (df da) and b (df db), within [1, da + db] (an infinite df is
 * allowed: a term known exactly).
 */
double stats_satterthwaite(double a, double da, double b, double db);

#endif
