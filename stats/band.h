/*
 * band.h: a host's normal band for one signal (latency, error rate, GC
 * pause, queue depth), from the host's own history: the rolling median
 * and the median absolute deviation (MAD, scaled to estimate a standard
 * deviation). Robust: a few wild samples in the history move neither.
 *
 * The band is median +- k * scale, where scale is the MAD floored twice,
 * so that a perfectly flat history (MAD 0) does not turn the smallest
 * wobble into an escalation: scale = max(mad, rel_floor * |median|,
 * abs_floor). Signals of interest get worse upwards, so only the upper
 * edge escalates; the distance of a value from the median, in scales,
 * says how large a crossing is.
 */
#ifndef PR_STATS_BAND_H
#define PR_STATS_BAND_H

#include <stddef.h>

#include "stats/stats.h"

typedef struct stats_band {
	size_t n;         /* history samples it was made from */
	double median;
	double mad;       /* scaled MAD (stats_mad) */
	double scale;     /* the MAD after its floors */
	double hi;        /* median + k * scale: above it is outside the band */
} stats_band;

/*
 * The band of history x[0..n-1] (n >= 1, every value finite) for `k`
 * scales (k > 0) with the floors above (each >= 0, not both 0 when the
 * history may be flat). STATS_EARG for an argument out of its domain,
 * STATS_ENOMEM. x is not modified.
 */
int stats_band_of(stats_band *out, const double *x, size_t n, double k, double rel_floor,
		  double abs_floor);

/* How many scales `v` lies above the median (negative below); 0 when scale is 0. */
double stats_band_z(const stats_band *b, double v);

#endif
