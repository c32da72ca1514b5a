/*
 * measure.h: how a finding's values read, by what it measured.
 *
 * A share finding measured a function's self share: its values read as
 * percentages of the capture and its change in percentage points. A cost
 * finding (kind "cost", the function "(whole service)") measured the
 * service's whole cost in a unit of its own, and its change is relative:
 * printed as shares, 0.30 CPU seconds a second read "30.00%" and a 43%
 * rise "+43.00pp". Every output that shows a finding's values goes
 * through these, so each kind reads the same in a terminal, a CI summary,
 * a report and a page.
 *
 * `cost_unit` is NULL for a share finding, else the cost finding's unit:
 * "cpu_s_per_s" (CPU seconds per second of capture), "wall_s_per_s"
 * (wall seconds per second of a wall profile), "bytes" (heap in
 * use), "bytes_per_s" (bytes allocated per second of capture),
 * "value_per_s" (the profile's value per second of capture) or
 * "per_load:" and one of the per-second units (that cost per unit of the
 * load figure given with the captures: "2.70 ms CPU per unit of load",
 * "1.25 KiB per unit of load"); "per_load" alone, as an earlier version
 * stored it, reads as a plain number per unit of load. An unknown unit
 * reads as a plain number.
 */
#ifndef PR_MEASURE_H
#define PR_MEASURE_H

#include <stddef.h>

/* Room enough for any text below. */
#define MEASURE_TEXT_MAX 96

/*
 * One value (a baseline or current share, or cost) into out[size]:
 * "30.04%", "0.300 CPU s/s", "1.21 GiB", "1.52k/s", "0.0123 per unit of
 * load"; "-" for NaN. Returns `out`.
 */
const char *measure_value(char *out, size_t size, const char *cost_unit, double v);

/*
 * A baseline and a current value joined by `arrow` (" -> ", " &rarr; "):
 * "1.92% -> 4.08%" for a share, "0.300 -> 0.430 CPU s/s" or "0.89 -> 1.18
 * GiB" for a cost, in one unit for both. Returns `out`.
 */
const char *measure_pair(char *out, size_t size, const char *cost_unit, double from, double to,
			 const char *arrow);

/*
 * A change and its interval into out[size]: "+13.26pp [+12.17, +14.37]"
 * for a share, "+43.1% [+33.9%, +52.9%]" for a cost. The interval is left
 * out when either end is NaN; `digits` is the share's decimals (2 in
 * tables, 3 or more where there is room). Returns `out`.
 */
const char *measure_change(char *out, size_t size, const char *cost_unit, double delta,
			   double ci_low, double ci_high, int digits);

/* The name of what was measured: "self share" or "whole-service cost". */
const char *measure_name(const char *cost_unit);

#endif
