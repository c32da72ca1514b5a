/*
 * rank.c: ranking score and severity classes.
 */
#include <math.h>
#include <stddef.h>

#include "stats/rank.h"

double stats_score(double ci_low, double q, double weight)
{
	if (isnan(ci_low) || !(q >= 0 && q <= 1) || !(weight >= 0 && isfinite(weight)))
		return NAN;
	return fmax(ci_low, 0) * weight * (1 - q);
}

stats_severity stats_severity_of(double ci_low_pp, double rel, double q,
				 const stats_severity_thresholds *t)
{
	static const stats_severity_thresholds defaults = STATS_SEVERITY_THRESHOLDS_INIT;

	if (!t)
		t = &defaults;
	if (isnan(ci_low_pp) || !(q <= t->q_max))
		return STATS_SEV_NONE;
	if (ci_low_pp >= t->critical_pp ||
	    (rel >= t->critical_rel && ci_low_pp >= t->critical_rel_pp))
		return STATS_SEV_CRITICAL;
	if (ci_low_pp >= t->high_pp)
		return STATS_SEV_HIGH;
	if (ci_low_pp >= t->medium_pp)
		return STATS_SEV_MEDIUM;
	return STATS_SEV_LOW;
}

static const char *const severity_names[] = {
	[STATS_SEV_NONE] = "none",
	[STATS_SEV_LOW] = "low",
	[STATS_SEV_MEDIUM] = "medium",
	[STATS_SEV_HIGH] = "high",
	[STATS_SEV_CRITICAL] = "critical",
};

#define NSEVERITY (sizeof(severity_names) / sizeof(severity_names[0]))

const char *stats_severity_name(stats_severity s)
{
	if ((unsigned)s >= NSEVERITY)
		return "?";
	return severity_names[s];
}

/* ASCII-only, so the locale never changes what a config file means. */
static int ascii_ieq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;

		if (x != *b)
			return 0;
	}
	return *a == *b;
}

int stats_severity_parse(stats_severity *out, const char *name)
{
	if (!out || !name)
		return STATS_EARG;
	for (size_t i = 0; i < NSEVERITY; i++) {
		if (ascii_ieq(name, severity_names[i])) {
			*out = (stats_severity)i;
			return 0;
		}
	}
	return STATS_EARG;
}
