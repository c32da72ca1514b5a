/*
 * escalate.h: profreg escalate, a short batch job for a one-minute timer
 * that moves hosts between escalation levels from their signals; owns
 * the table escalation_hosts (each host's level).
 *
 * For each service of the config's "escalate" section that is enabled,
 * it reads every signal (PromQL, one value per host; escalate.host_label
 * names the host, which must be one of the service's pprof_http targets)
 * through Prometheus's query API, and compares each host's value with
 * the host's own band: the median and MAD of its stored samples of the
 * last window_s (stats/band.h). The value is stored (signals.h) whatever
 * it is. Then, per host:
 *
 *   level 0, outside the band      open an elevated session at level 1
 *                                  (level 2 when the crossing is large,
 *                                  large_mads scales) and queue the
 *                                  level's first capture;
 *   level 1, outside persist_runs  level 2 for level2.window_s (once per
 *   runs in a row (or large)       session): back-to-back CPU and heap;
 *   level 2, its window over       back to level 1;
 *   level 1 or 2                   a capture of the level's plan when the
 *                                  last one is every_s old;
 *   back inside for cooldown_s     de-escalate: the session ends, level 0;
 *   the session ended (its hard    level 0, whatever the signal does.
 *   expiry)
 *
 * The band and these moves are jobs/escrules.h, pure functions that the
 * backtest's replay of the stored samples (jobs/escreplay.h) calls too.
 *
 * Sessions and captures are admitted by jobs/capreq.h under the "serve"
 * section's safeguards, in the database: open sessions per host, service
 * and fleet, the hard expiry, the per-host re-escalation window, the
 * host's cooldown; a refusal is audited there with its reason. A host
 * above the service's load or memory ceiling (or whose load or memory is
 * unknown while a ceiling is configured) is skipped rather than
 * profiled: audited "escalate.skipped". Level moves are audited
 * ("session.escalated", "session.level", "session.deescalated",
 * "session.expired").
 *
 * One service's failure (Prometheus unreachable, a hostile answer) never
 * stops the rest. Runs are recorded (kind "escalate") and hold an
 * advisory lock, so two runs never decide at once.
 */
#ifndef PR_ESCALATE_H
#define PR_ESCALATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jobs/job.h"

struct json_t;

typedef struct escalate_opts {
	const char *const *only;   /* only these services; NULL: every one configured */
	size_t nonly;
} escalate_opts;

typedef struct escalate_result {
	int64_t run_id;
	int64_t at_us;
	const char *status;        /* "ok", "failed" (a service failed), "locked" */
	size_t services, failed, hosts, samples;
	size_t escalated, raised, lowered, deescalated, ended, captures, refused, skipped;
	/* {name: {"status": "ok"|"failed"|"skipped", "reason": ..., "hosts": N}} */
	struct json_t *by_service;
	/*
	 * Every decision: [{"service", "host", "action", "from", "to", "why"}],
	 * action one of escalated, raised, lowered, deescalated, ended,
	 * capture, refused, skipped.
	 */
	struct json_t *decisions;
	job_notes notes;
} escalate_result;

void escalate_result_release(escalate_result *r);

/*
 * One run at job_now(env). `out` is set up here and is the caller's
 * (escalate_result_release) whatever this returns. < 0 when the run
 * cannot start (PR_EUSAGE: no escalate.prometheus or no service with
 * signals; PR_ENOTFOUND: an --only service not configured) or the
 * database failed; a service that failed is in out->by_service.
 */
int escalate_run(escalate_result *out, const job_env *env, const escalate_opts *o,
		 pr_error *err);

#endif
