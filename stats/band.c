/*
 * band.c: the median/MAD band of a signal's history (see band.h).
 */
#include "stats/band.h"

#include <math.h>

int stats_band_of(stats_band *out, const double *x, size_t n, double k, double rel_floor,
		  double abs_floor)
{
	double med, mad, scale;
	int rc;

	if (!out || !x || n == 0 || !(k > 0) || !(rel_floor >= 0) || !(abs_floor >= 0) ||
	    !isfinite(k) || !isfinite(rel_floor) || !isfinite(abs_floor))
		return STATS_EARG;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return STATS_EARG;
	if ((rc = stats_median(&med, x, n)) < 0 || (rc = stats_mad(&mad, x, n)) < 0)
		return rc;
	scale = mad;
	if (rel_floor * fabs(med) > scale)
		scale = rel_floor * fabs(med);
	if (abs_floor > scale)
		scale = abs_floor;
	out->n = n;
	out->median = med;
	out->mad = mad;
	out->scale = scale;
	out->hi = med + k * scale;
	return 0;
}

double stats_band_z(const stats_band *b, double v)
{
	if (!(b->scale > 0))
		return 0;
	return (v - b->median) / b->scale;
}
