/*
 * escreplay.h: the escalation rules of profreg escalate replayed over
 * the stored signal samples (signals.h), for the backtest: what the
 * rules would have done, with nothing stored, nothing captured and no
 * capture request made.
 *
 * Every service of the config's escalate section that is registered
 * and enabled is replayed run by run: the samples stored at one time are
 * one run. Each sample is judged against the host's band by the same
 * code as escalate (jobs/escrules.h), from the host's samples that this
 * replay judged inside, so that another config's band gives its own
 * answer; judging starts escalate.window_s before the range so that its
 * first runs have their history. Every host starts the range at level
 * 0. Hosts are taken in name order, services in the config's order.
 *
 * Sessions and captures are admitted under the "serve" section's
 * safeguards, counted in memory as capreq (jobs/capreq.h) counts them in
 * the database: one open session per host, the re-escalation window, the
 * service and fleet caps, the host busy during a capture (its plan's
 * seconds) and the host cooldown; sessions end at their hard expiry
 * (session_max_s). The load and memory ceilings are not replayed: their
 * values are not stored.
 */
#ifndef PR_ESCREPLAY_H
#define PR_ESCREPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "jobs/job.h"

struct json_t;

/* An escalation within this before or after an incident's time counts (--escalation-window). */
#define ESCREPLAY_WINDOW_DEFAULT_S 1800
/* A gap between two runs of a service counts at most this long in the host-minutes. */
#define ESCREPLAY_GAP_MAX_S 300
/* Events listed per service at most (the counts are of all). */
#define ESCREPLAY_EVENTS_MAX 200

typedef struct escreplay_opts {
	int64_t since_us, until_us;    /* the runs taken in (since, until] */
	int64_t window_us;             /* 0: ESCREPLAY_WINDOW_DEFAULT_S */
	/* known incidents: service and time each */
	const char *const *incident_service;
	const int64_t *incident_at_us;
	size_t nincidents;
} escreplay_opts;

/*
 * Replay. *out is a new JSON object, the caller's whatever this
 * returns (NULL on failure):
 *   {"replayed": bool, "reason": text when not, "since", "until",
 *    "samples": runs' samples in the range, "caps": text,
 *    "not_replayed": [text], "window_s",
 *    "services": [{"service", "status", "hosts", "samples", "runs",
 *      "escalations": {"level1", "level2"}, "opened": {"level1", "level2"},
 *      "raised", "lowered", "deescalated", "ended",
 *      "refused": {reason: n}, "host_minutes": {"level1", "level2"},
 *      "captures": {"level1", "level2", "heap", "cpu_seconds"},
 *      "first_escalation": {"at", "host", "level", "why"} or null,
 *      "events": [{"at", "host", "action", "from", "to", "why"}],
 *      "events_left_off"}],
 *    "incidents": [{"service", "time", "signals", "escalated", "window_s",
 *      "first": {"at", "host", "level", "offset_s"} or null}]}
 * A config without escalate services, or no sample in the range, is
 * "replayed": false with the reason, not an error. < 0 when the
 * database or memory fails, or PR_ELIMIT when one hour holds more than a
 * million samples.
 */
int escreplay_run(struct json_t **out, const job_env *env, const escreplay_opts *o,
		  pr_error *err);

#endif
