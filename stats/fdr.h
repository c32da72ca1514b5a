/*
 * fdr.h: false discovery rate control across many tests.
 *
 * profreg runs one test per function per service per night: thousands of
 * p-values, so a raw p <= 0.05 would find dozens of regressions in pure
 * noise. The Benjamini-Hochberg adjustment bounds the expected share of
 * false findings among those reported at q <= level.
 */
#ifndef PR_STATS_FDR_H
#define PR_STATS_FDR_H

#include <stddef.h>

#include "stats/stats.h"

/*
 * Benjamini-Hochberg adjusted p-values (q-values), as R's
 * p.adjust(p, method = "BH"): with p sorted ascending, q_(i) is the
 * minimum over j >= i of min(1, n * p_(j) / j), written back in the
 * original order. So q >= p, q is monotone in the rank of p, tied p get
 * tied q, and q <= 1.
 *
 * A NaN p (a test that could not run) counts as p = 1: it takes part in n,
 * which is conservative, where R would drop it from n and return NA.
 * A p outside [0, 1] is refused (STATS_EARG), as are NULL arrays with n > 0.
 * q may be the same array as p. n == 0 is a successful no-op.
 * Returns 0, STATS_EARG or STATS_ENOMEM (on which q is left unchanged).
 */
int stats_bh_qvalues(const double *p, size_t n, double *q);

#endif
