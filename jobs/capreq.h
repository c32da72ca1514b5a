/*
 * capreq.h: captures asked for on demand and the safeguards around them,
 * decided in the database so that they hold across every serve and
 * escalate process. Owns the tables capture_requests, elevated_sessions
 * and rate_counters.
 *
 * Admission (capreq_admit) runs in one transaction under one advisory
 * transaction lock, so two processes can never both see room for one
 * more. Each host is checked in this order; the first rule that applies
 * refuses. For a request that elevates the host (alerts, escalation):
 *   host_elevated   the host already has an open session (409)
 *   reescalate      a session on the host started less than reescalate_s
 *                   ago: a flapping signal elevates once per window (409)
 *   service_cap     the service has max_sessions_service open sessions (409)
 *   fleet_cap       max_sessions_fleet sessions are open in all (409)
 * and then for every request:
 *   host_busy       a request for the host is queued or running, or the
 *                   host is being CPU-profiled (capreq_host_lock) (409)
 *   host_cooldown   a request that captured the host ended less than
 *                   host_cooldown_s ago (409)
 * Every session expires session_max_s after it starts whatever the
 * signal does: each admission first closes the sessions past their
 * expiry ("expired"). Rate limits (capreq_rate) count requests per key
 * and fixed window in one upsert. Every decision is an audit row.
 */
#ifndef PR_CAPREQ_H
#define PR_CAPREQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jobs/config.h"
#include "pipeline/db.h"

struct json_t;

#define CAPREQ_TYPES_MAX 4
/* Hosts in one request at most (capture_requests.hosts). */
#define CAPREQ_HOSTS_MAX 64

/* A request to admit. */
typedef struct capreq_new {
	int64_t service_id;
	const char *service;         /* its name, for the audit */
	const char *const *hosts;    /* host names (a target's host part) */
	size_t nhosts;
	size_t count;                /* 0: every one of hosts; else hosts are the candidates,
					and the first `count` free ones are taken */
	uint32_t seconds;
	const char *const *types;    /* "cpu", "heap", "allocs", "goroutine" */
	size_t ntypes;
	const char *reason;
	const char *source;          /* "api", "alertmanager", "escalate" */
	const char *incident;        /* NULL: "req-<id>" */
	int64_t token_id;            /* 0: none */
	const char *requested_by;
	int level;                   /* 0: capture only; 1 or 2: elevate each host too */
} capreq_new;

/* What admission or a rate limit decided. */
typedef struct capreq_decision {
	bool admitted;
	int64_t id;                  /* admitted: the request's id */
	char refusal[24];            /* refused: a reason above, or "rate_token", "rate_global" */
	char host[260];              /* refused: the host it was about, "" if none */
	int64_t retry_after_s;       /* refused: when it may work (0: unknown) */
	uint32_t picked[CAPREQ_HOSTS_MAX]; /* admitted with count: indexes into hosts */
	size_t npicked;
} capreq_decision;

/*
 * Count one request against `key` in fixed windows of `window_s`: refused
 * ("rate_" + key's kind in `refusal`) once more than `limit` came in the
 * current window, with the seconds left in it. The first refusal of a
 * window is audited, not every one: a flood must not flood the audit log.
 */
int capreq_rate(capreq_decision *out, db *d, const char *key, const char *refusal,
		uint32_t window_s, uint32_t limit, pr_error *err);

/*
 * Admit `r` under the safeguards of `lim`, all hosts or none, in one
 * transaction: a queued request (and for level > 0, an elevated session
 * on each host) or a refusal, audited either way.
 *
 * With r->count > 0, r->hosts are candidates instead (at most 65535):
 * they are checked in their order, and the first r->count that no rule
 * refuses are taken (out->picked, out->npicked: fewer when fewer are
 * free). When none is free the refusal is the first candidate's, with
 * the shortest Retry-After any candidate gave; no candidate at all is
 * refusal "no_hosts".
 */
int capreq_admit(capreq_decision *out, db *d, const capreq_new *r, const config_serve *lim,
		 pr_error *err);

/* A request a worker claimed. */
typedef struct capreq_claimed {
	int64_t id;
	char *service;
	char **hosts;
	size_t nhosts;
	uint32_t seconds;
	char **types;
	size_t ntypes;
	char *reason;
	char *incident;
	/*
	 * Which claim of the request this is: renewing and finishing match
	 * it as well as the worker's name, which two servers can share
	 * (containers on one host's network are each "host:1"), so that a
	 * worker that hung past its lease never extends or finishes the
	 * claim another took since.
	 */
	int attempt;
} capreq_claimed;

void capreq_claimed_release(capreq_claimed *c);

/*
 * Claims of one request at most: one whose lease runs out after this
 * many is failed rather than claimed again, since every attempt profiles
 * its hosts again.
 */
#define CAPREQ_MAX_ATTEMPTS 3

/*
 * Claim the oldest queued request (or a running one whose lease ran out,
 * claimed fewer than CAPREQ_MAX_ATTEMPTS times) for `worker`, skipping
 * rows other workers hold (FOR UPDATE SKIP LOCKED); *got false when
 * there is none. Running requests whose lease ran out after
 * CAPREQ_MAX_ATTEMPTS claims are failed first, audited. The lease is
 * `lease_s` from now: the worker renews it before each capture
 * (capreq_renew) for as long as that capture may take.
 */
int capreq_claim(capreq_claimed *out, bool *got, db *d, const char *worker, uint32_t lease_s,
		 pr_error *err);

/*
 * Extend the lease of the claimed request `q` to `lease_s` from now;
 * *kept false (and nothing changed) when `worker` no longer holds that
 * claim: its lease ran out and another worker claimed it, or it was
 * given up. A worker that lost its request must stop capturing it.
 */
int capreq_renew(bool *kept, db *d, const capreq_claimed *q, const char *worker,
		 uint32_t lease_s, pr_error *err);

/*
 * Put a claimed request back for `after_s` seconds, its claim not
 * counted against CAPREQ_MAX_ATTEMPTS (its host was being CPU-profiled by
 * another process, and nothing of it was captured yet): the worker goes on
 * with other requests, and any worker claims this one again later. Only
 * while the request is younger than `max_age_s`; *deferred false (nothing
 * written) when it is older or `worker` no longer holds it.
 */
int capreq_defer(bool *deferred, db *d, const capreq_claimed *q, const char *worker,
		 uint32_t after_s, uint32_t max_age_s, pr_error *err);

/*
 * Finish a claimed request: "done" with its captures, or "failed" with
 * the reason (`error`); audited. PR_ENOTFOUND, with nothing written or
 * audited, when `worker` no longer holds it.
 */
int capreq_finish(db *d, const capreq_claimed *q, const char *worker, bool ok,
		  const int64_t *captures, size_t ncaptures, const char *error, pr_error *err);

/*
 * The per-host CPU profile lock, one for every process that CPU-profiles
 * a host (collect's scheduler, serve's worker through
 * collect_one_capture): a session-level advisory lock on `d` named after
 * the host (the target's address without its port). *got false when
 * another session holds it: the host is being profiled now, and a
 * second CPU profile must wait (Go's profiler refuses it anyway, and the
 * host must rest between profiles). Held until capreq_host_unlock or the
 * connection closes; taking it twice on one session needs two unlocks.
 * Admission probes it too: a host whose lock is held is host_busy.
 */
int capreq_host_lock(bool *got, db *d, const char *host, pr_error *err);
void capreq_host_unlock(db *d, const char *host);

/*
 * *running: a capture request naming `host` is running under a live
 * lease, or queued within the hour (collect waits for it, rather than
 * take the host from under an admitted request).
 */
int capreq_host_running(bool *running, db *d, const char *host, pr_error *err);

/* Request `id` as JSON ({id, service, team, hosts, state, ...}) into *out; PR_ENOTFOUND. */
int capreq_get(struct json_t **out, db *d, int64_t id, pr_error *err);

/*
 * End the open sessions on `host` that `source` opened ("resolved" or
 * "deescalated"), audited; *ended how many.
 */
int capreq_sessions_end(size_t *ended, db *d, const char *host, const char *source,
			const char *why, pr_error *err);

/*
 * The same for the sessions on `host` that `source` opened for service
 * `service_id` only: a host's session belongs to the service it was
 * opened for, and another service's signal does not end it.
 */
int capreq_sessions_end_of(size_t *ended, db *d, const char *host, const char *source,
			   int64_t service_id, const char *why, pr_error *err);

/* Close every session past its expiry ("expired"), audited; *n how many. */
int capreq_sessions_expire(size_t *n, db *d, pr_error *err);

/*
 * Counts for /metrics: requests by state ({"queued": N, ...}) into
 * *states (new), open sessions into *sessions.
 */
int capreq_counts(struct json_t **states, int64_t *sessions, db *d, pr_error *err);

/* An open elevated session (escalate follows the one it opened). */
typedef struct capreq_session {
	int64_t id;
	int64_t service_id; /* the service it was opened for */
	int level;
	char source[16];
	char incident[260];
	int64_t started_us, expires_us;
} capreq_session;

/* The open session on `host` into *out; *open false when there is none. */
int capreq_session_find(capreq_session *out, bool *open, db *d, const char *host,
			pr_error *err);

/*
 * Move open session `id` (on `host`) to `level` (1 or 2), audited
 * "session.level" with `why`; its expiry stays. *moved false when the
 * session is no longer open.
 */
int capreq_session_level(bool *moved, db *d, int64_t id, const char *host, int level,
			 const char *why, pr_error *err);

#endif
