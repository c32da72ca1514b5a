/*
 * seq.c: alpha spending over planned looks (see seq.h).
 */
#include <math.h>
#include <stddef.h>

#include "stats/seq.h"

double stats_seq_fraction(size_t look, size_t max_looks, double rho)
{
	double k = (double)look, K = (double)max_looks;

	if (look == 0 || max_looks == 0 || max_looks > STATS_SEQ_MAX_LOOKS ||
	    !(rho >= 0.1 && rho <= 10))
		return NAN;
	if (look > max_looks)
		return 0;
	return pow(k / K, rho) - pow((k - 1) / K, rho);
}

double stats_seq_fraction_from(size_t first, size_t look, size_t max_looks, double rho)
{
	double k, K = (double)max_looks;

	if (first == 0 || first > look || isnan(stats_seq_fraction(look, max_looks, rho)))
		return NAN;
	if (first > max_looks)
		return 0;
	k = (double)(look < max_looks ? look : max_looks);
	return pow(k / K, rho) - pow((double)(first - 1) / K, rho);
}

double stats_seq_pvalue(double p, size_t look, size_t max_looks, double rho)
{
	return stats_seq_pvalue_from(p, look, look, max_looks, rho);
}

double stats_seq_pvalue_from(double p, size_t first, size_t look, size_t max_looks, double rho)
{
	double f = stats_seq_fraction_from(first, look, max_looks, rho);

	if (!(p >= 0 && p <= 1) || isnan(f))
		return NAN;
	if (f <= 0)
		return 1;
	return fmin(1, p / f);
}
