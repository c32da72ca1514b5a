/*
 * fuzz_stats.c: arbitrary doubles into every stats entry point. GSL's
 * default error handler aborts, so any call outside GSL's domain is a
 * crash; the invariants the callers rely on are checked with abort().
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stats/fdr.h"
#include "stats/rank.h"
#include "stats/stats.h"
#include "stats/test.h"

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static void check_t(int rc, const stats_result *r)
{
	if (rc < 0) {
		CHECK(rc == STATS_EARG || rc == STATS_EDATA);
		CHECK(isnan(r->p));
		return;
	}
	CHECK(r->p >= 0 && r->p <= 1);
	CHECK(r->se > 0 && isfinite(r->se));
	CHECK(r->df >= 1);
	CHECK(r->ci_low <= r->estimate && r->estimate <= r->ci_high);
}

static size_t count_of(double v, size_t mod, size_t dflt)
{
	return isfinite(v) ? (size_t)fmod(fabs(v), (double)mod) : dflt;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	double x[64], q[64], v;
	size_t n, nx;
	uint8_t ctl;
	int rc;

	if (size < 2)
		return 0;
	ctl = data[0];
	n = (size - 1) / sizeof(double);
	if (n > 64)
		n = 64;
	memcpy(x, data + 1, n * sizeof(double));
	/* Squash into small ranges now and then so values are plausible. */
	if (ctl & 1)
		for (size_t i = 0; i < n; i++)
			x[i] = isfinite(x[i]) ? fmod(fabs(x[i]), 1.0) : x[i];
	if (ctl & 2)
		for (size_t i = 0; i < n; i++)
			x[i] = isfinite(x[i]) ? round(x[i] * 4) / 4 : x[i];

	stats_mean(&v, x, n);
	stats_variance(&v, x, n);
	stats_median(&v, x, n);
	if (stats_mad(&v, x, n) == 0)
		CHECK(v >= 0);
	stats_quantile(&v, x, n, n ? x[0] : 0.5);
	stats_ewma(&v, x, n, n > 1 ? x[1] : 0.5);
	for (size_t i = 0; i < n; i++) {
		double y = stats_vst(x[i]);
		CHECK(isnan(y) || (y >= 0 && y <= 1.5707963267948967));
		(void)stats_vst_inv(x[i]);
		(void)stats_vst_var_floor(x[i]);
		if (i + 1 < n) {
			(void)stats_vst_delta(x[i], x[i + 1]);
			(void)stats_vst_delta_share(x[i], x[i + 1]);
		}
	}

	/* summaries straight from the bytes, any alpha */
	if (n >= 8) {
		stats_sample b = {count_of(x[0], 1000000, 2), x[1], x[2], x[3]};
		stats_sample c = {count_of(x[4], 50, 1), x[5], x[6], x[7]};
		stats_test_opts o = {(stats_alt)(ctl >> 2 & 3), n > 8 ? x[8] : 0,
				     n > 9 ? x[9] : 0.05};
		stats_result r;

		check_t(stats_test_shared_var(&r, &b, &c, &o), &r);
		check_t(stats_test_welch(&r, &b, &c, &o), &r);
		check_t(stats_test_prediction(&r, &b, x[5], x[7], &o), &r);
	}
	/* summaries computed from the data */
	if (n >= 4) {
		stats_sample b, c;
		stats_test_opts o = {(stats_alt)((ctl >> 2 & 3) % 3), 0, 0.05};
		stats_result r;

		nx = 2 + (ctl >> 4) % (n - 3);
		if (stats_sample_of(&c, x, nx, 0) == 0 &&
		    stats_sample_of(&b, x + nx, n - nx, 0) == 0) {
			check_t(stats_test_shared_var(&r, &b, &c, &o), &r);
			check_t(stats_test_welch(&r, &b, &c, &o), &r);
		}
	}
	if (n >= 2) {
		stats_mw_opts o = {(stats_alt)(((ctl >> 2) & 3) % 3), (ctl & 0x40) ? x[0] : 0,
				   (stats_mw_method)((ctl >> 6) % 3)};
		stats_mw_result r;

		nx = 1 + (ctl >> 3) % (n - 1);
		rc = stats_mann_whitney(&r, x + 1, nx, x + 1 + nx, n - 1 - nx, &o);
		if (rc == 0) {
			CHECK(r.p >= 0 && r.p <= 1);
			CHECK(r.effect >= 0 && r.effect <= 1);
		}
	}
	if (stats_bh_qvalues(x, n, q) == 0)
		for (size_t i = 0; i < n; i++) {
			CHECK(q[i] >= 0 && q[i] <= 1);
			CHECK(isnan(x[i]) || q[i] >= x[i]);
		}
	if (n >= 3) {
		double s = stats_score(x[0], x[1], x[2]);
		CHECK(isnan(s) || s >= 0);
		CHECK((unsigned)stats_severity_of(x[0], x[1], x[2], NULL) <= STATS_SEV_CRITICAL);
	}
	return 0;
}
