/*
 * seq.h: repeated looks at growing data without inflating false alarms.
 *
 * A release is judged again every night while it runs, each time with all
 * of its captures so far: look 1 on its first night, look 2 on its
 * second, and so on up to a planned maximum of K looks. Testing each look
 * at the full level alpha would give a null function K chances to cross
 * it. Instead alpha is spent over the looks by a spending function
 * (Lan and DeMets), here the power family of Kim and DeMets,
 *
 *     alpha(t) = alpha * t^rho,    t = k / K   (information in looks),
 *
 * where rho = 1 spends evenly (Pocock-like), rho = 3 spends little early
 * and most at the end (O'Brien-Fleming-like), and rho < 1 spends most on
 * the first night. Look k may use the increment
 *
 *     alpha_k = alpha * (f(k / K) - f((k - 1) / K)),    f(t) = t^rho,
 *
 * and the looks are combined by the union bound: P(some look of a null
 * function crosses) <= sum_k alpha_k = alpha(1) = alpha, whatever the
 * correlation between the looks and however much data each brought. The
 * union bound gives up the gain that exact group-sequential boundaries
 * draw from that correlation (cumulative statistics are strongly
 * correlated), so it is conservative; it needs no model of how much
 * information each night adds, which varies from function to function.
 *
 * Because alpha_k is alpha times a fixed fraction, "reject at look k at
 * level alpha" is "p_k / fraction_k <= alpha": p_k / fraction_k (capped
 * at 1) is a p-value valid over all looks together, and a family of them
 * can go through Benjamini-Hochberg like any p-values. Past the last
 * planned look nothing is left to spend: the sequential p-value is 1.
 */
#ifndef PR_STATS_SEQ_H
#define PR_STATS_SEQ_H

#include <stddef.h>

#include "stats/stats.h"

/* The most looks a design may plan. */
#define STATS_SEQ_MAX_LOOKS 60

/*
 * The fraction of alpha look `look` (1-based) may spend when `max_looks`
 * are planned: f(look / K) - f((look - 1) / K), f(t) = t^rho. 0 past the
 * last look; NaN for look 0, max_looks 0 or above STATS_SEQ_MAX_LOOKS, or
 * rho outside [0.1, 10].
 */
double stats_seq_fraction(size_t look, size_t max_looks, double rho);

/*
 * The sequential p-value of a look: min(1, p / fraction), 1 when the
 * fraction is 0. NaN when p is outside [0, 1] or the fraction is NaN.
 */
double stats_seq_pvalue(double p, size_t look, size_t max_looks, double rho);

/*
 * The same for a look that is the first one tested since look `first`:
 * looks first .. look - 1 were never tested (no run judged the release on
 * those nights), so their fractions were never spent and this look may
 * spend them, f(min(look, K) / K) - f((first - 1) / K). The union bound
 * behind the spending (above) charges only the looks tested, so the
 * false finding rate stays the one budgeted: a release deployed while no
 * nightly ran, first judged on its sixth night, spends the whole alpha on
 * that look instead of none. first == look is stats_seq_fraction; NaN for
 * first 0 or after look.
 */
double stats_seq_fraction_from(size_t first, size_t look, size_t max_looks, double rho);
double stats_seq_pvalue_from(double p, size_t first, size_t look, size_t max_looks, double rho);

#endif
