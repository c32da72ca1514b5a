/*
 * rank.h: ranking score and severity classes of a finding.
 *
 * Both work on the conservative end of a change's confidence interval
 * (the lower bound of an increase), so a large but uncertain change and a
 * small but certain one are both judged by what the data can vouch for.
 */
#ifndef PR_STATS_RANK_H
#define PR_STATS_RANK_H

#include "stats/stats.h"

/*
 * Ranking score of a finding:
 *   score = max(ci_low, 0) * weight * (1 - q)
 * ci_low: conservative end of the change in absolute share (any unit, as
 * long as every finding uses the same: profreg uses percentage points).
 * q: the finding's q-value in [0, 1]. weight >= 0: the cost of the
 * service where known, else 1.
 * Non-decreasing in ci_low and in weight, non-increasing in q; strictly so
 * where the other factors are positive. Magnitude dominates (the interval
 * bound already discounts uncertainty); (1 - q) breaks near-ties in favour
 * of the more certain finding. A change whose interval reaches 0 scores 0.
 * Returns NaN when an argument is NaN or out of range.
 */
double stats_score(double ci_low, double q, double weight);

/* Ordered: a gate "at or above high" is `sev >= STATS_SEV_HIGH`. */
typedef enum stats_severity {
	STATS_SEV_NONE = 0,
	STATS_SEV_LOW,
	STATS_SEV_MEDIUM,
	STATS_SEV_HIGH,
	STATS_SEV_CRITICAL,
} stats_severity;

/*
 * Thresholds on the conservative absolute change (percentage points), the
 * conservative relative change (1.0 = +100%) and the q-value.
 */
typedef struct stats_severity_thresholds {
	double q_max;           /* significant: q <= q_max */
	double critical_pp;     /* critical: ci_low >= critical_pp, or */
	double critical_rel;    /*   rel >= critical_rel and */
	double critical_rel_pp; /*   ci_low >= critical_rel_pp */
	double high_pp;         /* high: ci_low >= high_pp */
	double medium_pp;       /* medium: ci_low >= medium_pp; low: otherwise
				   significant */
} stats_severity_thresholds;

/*
 * Defaults: significant at q <= 0.05; critical from +5 pp, or from +2 pp
 * when that at least doubles the share; high from +2 pp; medium from
 * +0.5 pp.
 */
#define STATS_SEVERITY_THRESHOLDS_INIT {0.05, 5.0, 1.0, 2.0, 2.0, 0.5}

/*
 * Severity of a finding. ci_low_pp: conservative end of the absolute
 * change in percentage points; rel: conservative relative change
 * (ci_low / baseline share; may be +INFINITY from a zero baseline, NaN
 * when unknown, which only disables the relative rule); q: q-value.
 * NONE when q is NaN or above q_max, or ci_low_pp is NaN. t may be NULL
 * for the defaults.
 */
stats_severity stats_severity_of(double ci_low_pp, double rel, double q,
				 const stats_severity_thresholds *t);

/* "none", "low", "medium", "high", "critical"; "?" for a bad value. */
const char *stats_severity_name(stats_severity s);

/*
 * Parse a severity name as printed by stats_severity_name, ignoring ASCII
 * case. Returns 0, or STATS_EARG for NULL or an unknown name (*out is then
 * unchanged).
 */
int stats_severity_parse(stats_severity *out, const char *name);

#endif
