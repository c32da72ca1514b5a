/*
 * serve.h: profreg serve, the trigger API: captures on demand, the
 * Alertmanager webhook, the state of a request, health and metrics, and
 * the worker that executes queued requests (any serve process claims any
 * queued request, so a restart loses nothing and several servers can
 * run behind one load balancer).
 *
 *   POST /v1/captures    {"service": S, "hosts": [H, ...], "seconds": N,
 *                         "types": ["cpu", "heap"], "reason": R}, or
 *                        "count": N instead of "hosts": N of the service's
 *                        pprof_http hosts, the first free ones in byte
 *                        order (fewer when fewer are free).
 *                        Authorization: Bearer <token> (jobs/tokens.h).
 *                        202 {"id": N, "incident": "req-N", "hosts": [...]};
 *                        401 no valid
 *                        token; 403 the service is unknown, not the
 *                        token's or not enabled; 409 a host is busy,
 *                        cooling down or at a cap; 413 the body is larger
 *                        than serve.max_body_bytes; 422 a bad body (the
 *                        reason in one line); 429 a rate limit, with
 *                        Retry-After. 409 carries Retry-After when known.
 *   GET  /v1/captures/ID the request (the token's team's services only).
 *   POST /v1/alertmanager Alertmanager's webhook payload (version 4),
 *                        bearer-authenticated: each firing alert whose
 *                        serve.alert_service_label names an enabled
 *                        service of the token's, and whose first
 *                        serve.alert_host_labels label names one of its
 *                        pprof_http targets, elevates that host (level 1)
 *                        and captures it at once; a resolved alert ends
 *                        the sessions alerts opened on its host.
 *   GET  /healthz        200 "ok" when the database answers, else 503.
 *   GET  /metrics        Prometheus text: requests by route and code,
 *                        capture requests by state, open elevated
 *                        sessions, refusals by reason.
 *
 * Every safeguard is decided in the database (jobs/capreq.h). Captures
 * go through the collect job's client (collect_one_capture), tagged
 * {"incident": ID} and kept as forensic evidence (jobs/evidence.h).
 */
#ifndef PR_SERVE_H
#define PR_SERVE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "jobs/job.h"

typedef struct serve_opts {
	const char *listen;     /* "ADDR:PORT" (port 0: any); NULL: the config's */
	const char *port_file;  /* write the bound port here once listening; NULL: none */
	db *worker_db;          /* the worker's own connection (the server's is env->d) */
	const volatile sig_atomic_t *stop; /* serve until it is set */
	const char *worker;     /* this process's name in claimed rows */
	/*
	 * Each warning, one line, when it happens (from any of the server's
	 * threads, one call at a time); the same line again within a minute
	 * is counted and said with its count a minute after. NULL: the
	 * warnings are kept in serve_result.notes instead (1000 at most).
	 */
	void (*on_note)(const char *line, void *ctx);
	void *note_ctx;
} serve_opts;

typedef struct serve_result {
	uint64_t requests;      /* HTTP requests answered */
	uint64_t executed;      /* capture requests executed */
	uint16_t port;          /* the port it listened on */
	job_notes notes;        /* what failed while serving, without on_note */
} serve_result;

/*
 * Serve until *o->stop is set. Fails only when it cannot listen
 * (PR_EIO, naming the address) or memory fails; the database failing
 * while serving answers 503 and is noted, and either connection the
 * database dropped (env->d, o->worker_db) is connected again
 * (db_reconnect) once it answers. Release *out with
 * serve_result_release.
 */
int serve_run(serve_result *out, const job_env *env, const serve_opts *o, pr_error *err);
void serve_result_release(serve_result *r);

#endif
