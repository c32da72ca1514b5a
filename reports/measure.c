/*
 * measure.c: how a finding's values read (see measure.h).
 */
#include "reports/measure.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* How values of a unit are printed: divided by `div`, then "%.*<conv>" and `suffix`. */
typedef struct scale {
	double div;
	int prec;
	char conv;       /* 'f' or 'g' */
	char suffix[32];
} scale;

/*
 * The scale for values of `cost_unit` up to `mag` in size: bytes take a
 * binary prefix and rates a decimal one, chosen by the larger value so
 * that a pair reads in one unit.
 */
static scale scale_for(const char *cost_unit, double mag)
{
	static const char *const bin[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	static const char *const dec[] = {"", "k", "M", "G", "T"};
	scale s = {1, 4, 'g', ""};
	size_t k = 0;

	mag = isnan(mag) ? 0 : fabs(mag);
	if (!cost_unit) {
		s = (scale){0.01, 2, 'f', "%"};
	} else if (strcmp(cost_unit, "cpu_s_per_s") == 0) {
		s = (scale){1, 3, 'f', " CPU s/s"};
	} else if (strcmp(cost_unit, "wall_s_per_s") == 0) {
		s = (scale){1, 3, 'f', " wall s/s"};
	} else if (strcmp(cost_unit, "bytes") == 0 || strcmp(cost_unit, "bytes_per_s") == 0) {
		while (mag >= 1024 * s.div && k + 1 < sizeof(bin) / sizeof(bin[0]))
			s.div *= 1024, k++;
		s.prec = k ? 2 : 0;
		s.conv = 'f';
		snprintf(s.suffix, sizeof(s.suffix), " %s%s", bin[k],
			 strcmp(cost_unit, "bytes") == 0 ? "" : "/s");
	} else if (strcmp(cost_unit, "goroutines") == 0) {
		s = (scale){1, 0, 'f', " goroutines"};
	} else if (strcmp(cost_unit, "value_per_s") == 0) {
		while (mag >= 1000 * s.div && k + 1 < sizeof(dec) / sizeof(dec[0]))
			s.div *= 1000, k++;
		s.prec = 3;
		snprintf(s.suffix, sizeof(s.suffix), "%s/s", dec[k]);
	} else if (strcmp(cost_unit, "per_load:cpu_s_per_s") == 0) {
		/* CPU seconds a second per request a second: CPU time per unit of load. */
		s = mag >= 1      ? (scale){1, 2, 'f', " s CPU per unit of load"}
		    : mag >= 1e-3 ? (scale){1e-3, 2, 'f', " ms CPU per unit of load"}
				  : (scale){1e-6, 2, 'f', " us CPU per unit of load"};
	} else if (strcmp(cost_unit, "per_load:wall_s_per_s") == 0) {
		s = mag >= 1      ? (scale){1, 2, 'f', " s wall per unit of load"}
		    : mag >= 1e-3 ? (scale){1e-3, 2, 'f', " ms wall per unit of load"}
				  : (scale){1e-6, 2, 'f', " us wall per unit of load"};
	} else if (strcmp(cost_unit, "per_load:bytes_per_s") == 0) {
		s = scale_for("bytes", mag);
		strncat(s.suffix, " per unit of load", sizeof(s.suffix) - strlen(s.suffix) - 1);
	} else if (strncmp(cost_unit, "per_load", 8) == 0) {
		/* Values per second, or a finding stored before the base unit was kept. */
		s = (scale){1, 3, 'g', " per unit of load"};
	}
	return s;
}

/* v in scale s, without the suffix. */
static void number(char *out, size_t size, const scale *s, double v)
{
	if (isnan(v))
		snprintf(out, size, "-");
	else if (s->conv == 'f')
		snprintf(out, size, "%.*f", s->prec, v / s->div);
	else
		snprintf(out, size, "%.*g", s->prec, v / s->div);
}

const char *measure_value(char *out, size_t size, const char *cost_unit, double v)
{
	scale s = scale_for(cost_unit, v);
	char n[MEASURE_TEXT_MAX];

	number(n, sizeof(n), &s, v);
	snprintf(out, size, "%s%s", n, isnan(v) ? "" : s.suffix);
	return out;
}

const char *measure_pair(char *out, size_t size, const char *cost_unit, double from, double to,
			 const char *arrow)
{
	scale s = scale_for(cost_unit, fmax(isnan(from) ? 0 : fabs(from),
					    isnan(to) ? 0 : fabs(to)));
	char a[MEASURE_TEXT_MAX], b[MEASURE_TEXT_MAX];

	number(a, sizeof(a), &s, from);
	number(b, sizeof(b), &s, to);
	/* Two values that differ never read the same: "0.15% -> 0.15%" for a finding. */
	while (s.conv == 'f' && s.prec < 6 && from != to && !isnan(from) && !isnan(to) &&
	       strcmp(a, b) == 0) {
		s.prec++;
		number(a, sizeof(a), &s, from);
		number(b, sizeof(b), &s, to);
	}
	/* A share reads "1.92% -> 4.08%"; a cost names its unit once, at the end. */
	if (!cost_unit)
		snprintf(out, size, "%s%s%s%s%s", a, isnan(from) ? "" : s.suffix, arrow, b,
			 isnan(to) ? "" : s.suffix);
	else
		snprintf(out, size, "%s%s%s%s", a, arrow, b, s.suffix);
	return out;
}

const char *measure_change(char *out, size_t size, const char *cost_unit, double delta,
			   double ci_low, double ci_high, int digits)
{
	bool ci = !isnan(ci_low) && !isnan(ci_high);

	/* A change that is not nothing never reads "+0.00pp": as many digits as it takes. */
	while (!cost_unit && digits < 6 && isfinite(delta) && delta != 0 &&
	       fabs(100 * delta) < 0.5 * pow(10, -digits))
		digits++;

	if (isnan(delta))
		snprintf(out, size, "-");
	else if (cost_unit && ci)
		snprintf(out, size, "%+.1f%% [%+.1f%%, %+.1f%%]", 100 * delta, 100 * ci_low,
			 100 * ci_high);
	else if (cost_unit)
		snprintf(out, size, "%+.1f%%", 100 * delta);
	else if (ci)
		snprintf(out, size, "%+.*fpp [%+.*f, %+.*f]", digits, 100 * delta, digits,
			 100 * ci_low, digits, 100 * ci_high);
	else
		snprintf(out, size, "%+.*fpp", digits, 100 * delta);
	return out;
}

const char *measure_name(const char *cost_unit)
{
	return cost_unit ? "whole-service cost" : "self share";
}
