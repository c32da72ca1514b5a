/*
 * lazy_gsl.c: the GSL functions profreg calls, loaded on first use
 * (common/lazylib.h). Only the statistics (stats/) use them: analysis,
 * baselines, diffs. GSL made 1,960 symbol relocations on every start,
 * and libgsl with libgslcblas put two more objects in front of libc in
 * every other library's symbol lookups.
 */
#define _POSIX_C_SOURCE 200809L
#include "common/lazylib.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_sf_psi.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <stdatomic.h>
#include <string.h>

#define GSL_FUNCS(X, V)                                                                            \
	X(double, gsl_cdf_chisq_Pinv, (const double p, const double nu), (p, nu))                  \
	X(double, gsl_cdf_chisq_Qinv, (const double q, const double nu), (q, nu))                  \
	X(double, gsl_cdf_tdist_P, (const double x, const double nu), (x, nu))                     \
	X(double, gsl_cdf_tdist_Q, (const double x, const double nu), (x, nu))                     \
	X(double, gsl_cdf_tdist_Qinv, (const double q, const double nu), (q, nu))                  \
	X(double, gsl_cdf_ugaussian_Q, (const double x), (x))                                      \
	X(double, gsl_ran_binomial_pdf,                                                            \
	  (const unsigned int k, const double p, const unsigned int n), (k, p, n))                 \
	X(double, gsl_sf_psi, (const double x), (x))                                               \
	X(int, gsl_fit_linear,                                                                     \
	  (const double *x, const size_t xstride, const double *y, const size_t ystride,           \
	   const size_t n, double *c0, double *c1, double *cov00, double *cov01, double *cov11,    \
	   double *sumsq),                                                                         \
	  (x, xstride, y, ystride, n, c0, c1, cov00, cov01, cov11, sumsq))                         \
	V(gsl_sort, (double *data, const size_t stride, const size_t n), (data, stride, n))        \
	X(double, gsl_stats_correlation,                                                           \
	  (const double data1[], const size_t stride1, const double data2[], const size_t stride2, \
	   const size_t n),                                                                        \
	  (data1, stride1, data2, stride2, n))                                                     \
	X(double, gsl_stats_mad,                                                                   \
	  (const double data[], const size_t stride, const size_t n, double work[]),               \
	  (data, stride, n, work))                                                                 \
	X(double, gsl_stats_mean, (const double data[], const size_t stride, const size_t n),      \
	  (data, stride, n))                                                                       \
	X(double, gsl_stats_median, (double sorted[], const size_t stride, const size_t n),        \
	  (sorted, stride, n))                                                                     \
	X(double, gsl_stats_quantile_from_sorted_data,                                             \
	  (const double sorted[], const size_t stride, const size_t n, const double f),            \
	  (sorted, stride, n, f))                                                                  \
	X(double, gsl_stats_variance, (const double data[], const size_t stride, const size_t n),  \
	  (data, stride, n))

enum {
	GSL_FUNCS(LAZYLIB_INDEX, LAZYLIB_INDEX_V)
	LAZY_gsl_set_error_handler_off, LAZY_COUNT
};
static const char *const names[] = {GSL_FUNCS(LAZYLIB_NAME, LAZYLIB_NAME_V)
				    "gsl_set_error_handler_off"};
static void *fns[LAZY_COUNT];
static lazylib gsl = {LAZY_SONAME_GSL, names, fns, LAZY_COUNT, false};

/* Asked for before GSL was loaded: applied by the load, before any GSL call runs. */
static atomic_bool handler_off, handler_applied;

static gsl_error_handler_t *real_handler_off(void)
{
	gsl_error_handler_t *(*fn)(void);

	memcpy(&fn, &gsl.fns[LAZY_gsl_set_error_handler_off], sizeof(fn));
	return fn();
}

static void gsl_load(void)
{
	lazylib_load(&gsl);
	if (atomic_load(&handler_off) && !atomic_exchange(&handler_applied, true))
		real_handler_off();
}

/*
 * GSL aborts on a domain error unless told not to; profreg tells it at
 * start (jobs/cli/main.c) and that must not load GSL. Before the load the
 * wish is kept (there was no handler to return); the load applies it.
 */
gsl_error_handler_t *gsl_set_error_handler_off(void)
{
	atomic_store(&handler_off, true);
	if (!lazylib_loaded(&gsl))
		return NULL;
	gsl_load();
	return real_handler_off();
}

#define FORWARD(ret, name, params, args) \
	ret name params \
	{ \
		ret (*fn) params; \
		gsl_load(); \
		memcpy(&fn, &gsl.fns[LAZY_##name], sizeof(fn)); \
		return fn args; \
	}
#define FORWARD_V(name, params, args) \
	void name params \
	{ \
		void (*fn) params; \
		gsl_load(); \
		memcpy(&fn, &gsl.fns[LAZY_##name], sizeof(fn)); \
		fn args; \
	}
GSL_FUNCS(FORWARD, FORWARD_V)
