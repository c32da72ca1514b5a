/*
 * agent.h: the snapshot agent (profreg serve --agent), which runs on each
 * host and takes incident snapshots of that host when profreg serve asks,
 * and the client serve asks it with.
 *
 *   POST /v1/snapshots   {"host": H, "incident": I, "reason": R,
 *                         "service": S} (all but host optional)
 *                        Authorization: Bearer <serve.agent_secret_*>.
 *                        201 {"id", "host", "existed", "bytes",
 *                        "not_collected"}: taken and stored (blob store
 *                        and `snapshots`, jobs/snapshot.h); 401 no or a
 *                        wrong secret; 403 H is not this host (its host
 *                        name or a --name it was given); 409 the host's
 *                        cooldown (snapshot.cooldown_s, kept in the
 *                        database) or a snapshot being taken, with
 *                        Retry-After; 413 a body over 4 KiB; 422 a bad
 *                        body; 503 the store failed (the archive is kept
 *                        under <home>/snapshots/unsent/).
 *   GET  /healthz        200 "ok".
 *   GET  /metrics        requests, snapshots and refusals by reason
 *                        (Prometheus text).
 *
 * Who may hold its connections is jobs/connguard.h's: 64 open at most,
 * 8 from one address, and a request's head and body arrive within 30 s
 * or its connection is closed, so that no one without the secret can
 * lock serve out of the agent by holding every connection.
 *
 * One request is answered at a time (a snapshot is the agent's only
 * work, and two at once would measure each other). The secret is compared
 * in constant time and never logged.
 */
#ifndef PR_AGENT_H
#define PR_AGENT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "jobs/job.h"

#define AGENT_NAMES_MAX 16

typedef struct agent_opts {
	const char *listen;      /* "ADDR:PORT" (port 0: any); required */
	const char *port_file;   /* write the bound port here once listening; NULL: none */
	const char *names[AGENT_NAMES_MAX]; /* other names this host answers to */
	size_t nnames;
	const volatile sig_atomic_t *stop; /* serve until it is set */
} agent_opts;

typedef struct agent_result {
	uint64_t requests;       /* HTTP requests answered */
	uint64_t taken;          /* snapshots taken and stored */
	uint16_t port;
	job_notes notes;         /* what failed while serving, one line each */
} agent_result;

/*
 * Serve snapshot requests until *o->stop is set. Needs the secret
 * (env->cfg->serve.agent_secret_env or _file: PR_EUSAGE without one) and
 * env->d and env->bs to store what it takes. Fails only when it cannot
 * start (PR_EIO naming the address). Release *out with
 * agent_result_release.
 */
int agent_run(agent_result *out, const job_env *env, const agent_opts *o, pr_error *err);
void agent_result_release(agent_result *r);

/* What an agent answered. */
typedef struct agent_answer {
	long status;             /* the HTTP status (201 taken) */
	int64_t snapshot_id;     /* 201: the snapshot */
	int64_t retry_after_s;   /* 409: when it may work; 0: unknown */
	char why[256];           /* not 201: the agent's one-line error */
} agent_answer;

/*
 * Ask the agent at `url` (its base URL: "/v1/snapshots" is appended) for
 * a snapshot of `host`, with `secret` as the bearer token, within
 * `timeout_ms`. Any answer is 0 with *out filled; < 0 only when no answer
 * came (the message names the agent's scheme, host and port, never the
 * secret) or the URL would carry the secret in cleartext off the host
 * (plain http to a host that is not loopback: PR_EUSAGE).
 */
int agent_ask(agent_answer *out, const char *url, const char *secret, const char *host,
	      const char *incident, const char *reason, const char *service, uint32_t timeout_ms,
	      pr_error *err);

#endif
