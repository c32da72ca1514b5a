/*
 * pushgw.h: job metrics pushed to a Prometheus Pushgateway.
 *
 * After each nightly and post-deploy run, profreg POSTs its metrics in
 * the text exposition format to <metrics.pushgateway>/metrics/job/profreg/
 * instance/<instance>/kind/<kind>. POST (not PUT) replaces only the metric
 * names in the body, so a failed run, which leaves out
 * profreg_last_success_timestamp_seconds, keeps the last success's value
 * and "has not succeeded for two days" can be alerted on.
 */
#ifndef PR_PUSHGW_H
#define PR_PUSHGW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "baselines/analysis.h"
#include "jobs/config.h"
#include "jobs/pager.h"
#include "common/buf.h"

/* What one run reports. */
typedef struct pushgw_run {
	const char *kind;            /* "nightly", "post-deploy" */
	bool success;                /* the run completed */
	double duration_seconds;
	int64_t finished_us;
	size_t services_analysed, services_failed;
	size_t findings[5];          /* by stats_severity; [0]: no severity */
	size_t pages_enqueued, pages_sent, pages_failed, pages_pending;
	size_t pages_failed_open;    /* failed pages of findings still open: nobody was told */
	int64_t deadline_us;         /* time_mono() microseconds the push must end by, so
				      * a hung pushgateway never costs a gate its verdict
				      * (0: no deadline but the paging timeouts) */
} pushgw_run;

/* Append the text exposition of `r` to `out`. 0 or PR_ENOMEM. */
int pushgw_format(buf *out, const pushgw_run *r);

/*
 * POST `body` to base_url + "/metrics/job/profreg/instance/I/kind/K";
 * instance NULL is the host name. A grouping value of [A-Za-z0-9._-]
 * goes as it is; "", "." and "..", and a value with any other character,
 * go base64url-encoded as the Pushgateway reads them ("/instance@base64/
 * ..."), so each arrives unchanged. Non-2xx is PR_EIO with the status.
 */
int pushgw_post(const char *base_url, const char *instance, const char *kind, const char *body,
		uint32_t connect_timeout_ms, uint32_t timeout_ms, pr_error *err);

/* Format and push `r` when metrics.pushgateway is set; 0 when it is not. */
int pushgw_push_run(const config *c, const pushgw_run *r, pr_error *err);

/*
 * Push the metrics of an analysing run (nightly, post-deploy) that began
 * at time_mono() `t0`: its services analysed and failed, findings by
 * severity and the flush's page counts (`pc` may be NULL), before
 * `deadline_us` (as in pushgw_run; 0: none). `success` is what moves the
 * last-success time (docs/paging.md: a nightly's exit code is 0, a
 * post-deploy reached its verdict and wrote its report). 0 when no pushgateway is
 * configured; PR_EIO when it failed or no time was left for it.
 */
int pushgw_push_analysis(const config *c, const char *kind, bool success, double t0,
			 int64_t deadline_us, const analysis *a, size_t services_analysed,
			 size_t services_failed, const pager_counts *pc, pr_error *err);

#endif
