/*
 * serve.c: the trigger API and its worker (see serve.h).
 *
 * One libmicrohttpd daemon with its own polling thread answers every
 * request, one at a time, on the server's database connection; the
 * calling thread is the worker, on its own connection. A request the
 * server admits wakes the worker at once; requests other servers queued
 * are found by polling. Either connection, dropped by the database, is
 * connected again (db_ready): a restart of PostgreSQL must not leave a
 * server that answers 503 for good.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/serve.h"
#include "common/buf.h"
#include "common/fileio.h"
#include "common/netaddr.h"
#include "common/redact.h"
#include "common/timeutil.h"
#include "common/utf8.h"
#include "jobs/access.h"
#include "jobs/agent.h"
#include "jobs/capreq.h"
#include "jobs/collect.h"
#include "jobs/compare.h"
#include "jobs/connguard.h"
#include "jobs/evidence.h"
#include "jobs/secret.h"
#include "jobs/tokens.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

/* How often the worker looks for requests other servers queued. */
#define POLL_MS 250
/* Alerts in one webhook call at most. */
#define ALERTS_MAX 1000
#define REASON_MAX 1024
#define COUNTERS_MAX 64
/* Snapshot requests waiting for an agent at most; more are dropped (and counted). */
#define SNAPQ_MAX 32
/* Capture ids named in one call's audit row at most. */
#define CALL_IDS_MAX 256
/* Bytes of a body past serve.max_body_bytes read and dropped before its connection is closed. */
#define BODY_DROP_MAX ((size_t)1 << 20)
/* The CSP of every answer that is not a page of its own: nothing loads or runs. */
#define CSP_NOTHING \
	"default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
/*
 * A request whose host another process is CPU-profiling is put back for
 * HOST_RETRY_S seconds at a time (capreq_defer), until HOST_WAIT_MAX_S
 * after it was made: longer than any CPU profile of collect's, shorter
 * than an incident is worth waiting for.
 */
#define HOST_RETRY_S 2
#define HOST_WAIT_MAX_S 300
/* A request's head and body arrive within this, or its connection is closed (connguard.h). */
#define REQUEST_DEADLINE_MS 30000
/*
 * A connection the database dropped is tried again at once, then after
 * pauses doubling from the first to the last (seconds): a database that
 * stays away costs one attempt every few seconds, not one a request.
 */
#define REDIAL_FIRST_S 0.5
#define REDIAL_LAST_S 5.0
/*
 * The server's session: requests are answered one at a time, so a slow
 * statement or one waiting on a lock (a table locked by hand in psql)
 * holds every other request, the webhook and /healthz included. None
 * runs longer than this or waits longer for a lock: it fails, and its
 * request is answered 503. The worker's session has no such limit (a
 * capture's ingest may take long, and holds no request up).
 */
#define SERVER_STATEMENT_TIMEOUT "10s"
#define SERVER_LOCK_TIMEOUT "3s"
/*
 * A warning said again within this many seconds is counted, not said;
 * the count is said with the line once this has passed (note), so an
 * outage that fails every request and every poll is a few lines a minute.
 */
#define NOTE_QUIET_S 60.0
/* Distinct warnings whose repeats are counted at once; the one said longest ago makes room. */
#define NOTES_SEEN 16
/* Warnings kept for serve_result when no one is told of them at once (serve_opts.on_note). */
#define NOTES_KEPT 1000
#define NOTE_MAX (PR_ERROR_MSG_MAX + 400)

typedef struct counter {
	char key[64];
	unsigned code;
	uint64_t n;
} counter;

/*
 * Per connection: the body so far, and who made the call and what it was
 * about, for its audit row (written by reply_json before the answer goes
 * out, once the caller is authenticated).
 */
typedef struct conn {
	buf body;
	size_t received;              /* bytes of the body so far, kept or not */
	bool begun;                   /* the handler has seen the request's head */
	bool nul_in_path;             /* the path, as sent, holds %00 */
	bool too_big;
	bool authed;                  /* a valid token within its rate limit */
	int64_t token_id;
	char team[130];
	char role[72];                /* "" : the server's own role */
	char object[96];              /* what the call was about; "": the route */
	int64_t ids[CALL_IDS_MAX];    /* the captures it named */
	size_t nids;
	json_t *requests;             /* the capture requests it queued (ids), or NULL */
} conn;

/* A snapshot to ask of a host's agent (jobs/agent.h). */
typedef struct snapreq {
	char url[640];
	char host[260];
	char incident[128];
	char reason[300];
	char service[130];
} snapreq;

/* A warning said lately, and how many times it came again since (note). */
typedef struct seen_note {
	char line[NOTE_MAX]; /* "": a free slot */
	double said;         /* time_mono() when it was last said */
	uint64_t more;       /* times it came again since, unsaid */
} seen_note;

/* When a dropped connection may be tried again (db_ready). */
typedef struct redial {
	double next;  /* time_mono() of the next attempt; 0: at once */
	double pause; /* the pause after the next failed attempt */
	bool down;    /* an attempt failed since the connection was last up */
	uint64_t ups; /* sessions made again */
} redial;

typedef struct server {
	const job_env *env;
	const config_serve *cfg;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_mutex_t note_mu;
	bool wake;
	counter requests[COUNTERS_MAX];
	counter refusals[COUNTERS_MAX];
	uint64_t nreq;
	conn *cur;   /* the call being answered (one at a time: one polling thread) */
	/* The snapshot asker: its own thread, so an alert's answer never waits for one. */
	char *agent_secret;
	pthread_t snap_thread;
	bool snap_started, snap_quit;
	pthread_mutex_t snap_mu;
	pthread_cond_t snap_cv;
	snapreq snapq[SNAPQ_MAX];
	size_t snap_head, snap_len;
	counter snapshots[COUNTERS_MAX]; /* by outcome, under snap_mu */
	connguard guard; /* who may hold the connections (the polling thread's alone) */
	redial server_redial; /* the server's connection (env->d), the polling thread's */
	bool limited;         /* the server's session has its timeouts (limit_session) */
	uint64_t limited_ups; /* ... as of this many new sessions */
	const serve_opts *opts;
	seen_note seen[NOTES_SEEN]; /* under note_mu */
	serve_result *out;
} server;

/*
 * Say a warning: to serve_opts.on_note at once, else kept for the
 * result, NOTES_KEPT at most. Under note_mu.
 */
static void say(server *s, const char *line, uint64_t more, double over_s)
{
	char text[NOTE_MAX + 80];

	if (more)
		snprintf(text, sizeof(text), "%s (and %" PRIu64 " more time%s in %.0f s)", line,
			 more, more == 1 ? "" : "s", over_s);
	else
		snprintf(text, sizeof(text), "%s", line);
	if (s->opts->on_note)
		s->opts->on_note(text, s->opts->note_ctx);
	else if (s->out->notes.n < NOTES_KEPT)
		job_note(&s->out->notes, "%s", text);
}

/*
 * Say the counts of repeated warnings NOTE_QUIET_S after each was last
 * said (all of them when `all`); called from the worker's loop, so an
 * outage's tally is said after it ends, not only at the next failure.
 */
static void notes_flush(server *s, bool all)
{
	double now = time_mono();

	pthread_mutex_lock(&s->note_mu);
	for (size_t i = 0; i < NOTES_SEEN; i++) {
		seen_note *e = &s->seen[i];
		if (!e->more || (!all && now - e->said < NOTE_QUIET_S))
			continue;
		say(s, e->line, e->more, now - e->said);
		e->more = 0;
		e->said = now;
	}
	pthread_mutex_unlock(&s->note_mu);
}

/*
 * A warning from any thread, said when it happens: a long-running server
 * that kept them until it stopped said nothing during an outage, then
 * thousands of lines, and grew by each. The same line again within
 * NOTE_QUIET_S of when it was said is counted instead (notes_flush),
 * unless `always`: a change of state (a connection lost, or back) is
 * said each time.
 */
static void note_ex(server *s, const char *msg, bool always)
{
	double now = time_mono();
	seen_note *e = NULL, *oldest = &s->seen[0];

	pthread_mutex_lock(&s->note_mu);
	for (size_t i = 0; i < NOTES_SEEN && !e; i++) {
		if (s->seen[i].line[0] && strncmp(s->seen[i].line, msg, NOTE_MAX - 1) == 0)
			e = &s->seen[i];
		else if (!s->seen[i].line[0] || (oldest->line[0] && s->seen[i].said < oldest->said))
			oldest = &s->seen[i];
	}
	if (e && !always && now - e->said < NOTE_QUIET_S) {
		e->more++;
	} else if (e) {
		say(s, msg, e->more, now - e->said);
		e->more = 0;
		e->said = now;
	} else {
		if (oldest->more)
			say(s, oldest->line, oldest->more, now - oldest->said);
		snprintf(oldest->line, sizeof(oldest->line), "%s", msg);
		oldest->more = 0;
		oldest->said = now;
		say(s, msg, 0, 0);
	}
	pthread_mutex_unlock(&s->note_mu);
}

static void note(server *s, const char *msg)
{
	note_ex(s, msg, false);
}

/*
 * Whether `d` (the `side`'s connection) is up: when the database dropped
 * it, connect again, unless the last attempt was too recent (r says when
 * the next may be made). A statement on a connection still down fails
 * at once, so the caller answers 503 and tries again later; the
 * connection is never given up on for good, since PostgreSQL comes back
 * after a restart. An attempt blocks for as long as connecting takes
 * (libpq's connect_timeout, pipeline/db.h).
 */
static bool db_ready(server *s, db *d, redial *r, const char *side)
{
	pr_error e = PR_ERROR_INIT;
	char line[PR_ERROR_MSG_MAX + 80];
	double now;

	if (db_connected(d))
		return true;
	now = time_mono();
	if (now < r->next)
		return false;
	if (db_reconnect(d, &e) < 0) {
		r->pause = r->pause ? r->pause * 2 : REDIAL_FIRST_S;
		if (r->pause > REDIAL_LAST_S)
			r->pause = REDIAL_LAST_S;
		r->next = time_mono() + r->pause;
		snprintf(line, sizeof(line), "the %s's database connection is down: %s", side,
			 e.msg);
		note_ex(s, line, !r->down); /* the first failure of an outage, then counted */
		r->down = true;
		return false;
	}
	r->next = 0;
	r->pause = 0;
	r->down = false;
	r->ups++;
	snprintf(line, sizeof(line), "the %s's database connection is back", side);
	note_ex(s, line, true);
	return true;
}

/*
 * Give the server's session its timeouts (SERVER_STATEMENT_TIMEOUT), on
 * its first request and on each new session after a reconnect; one that
 * fails is tried again at the next request.
 */
static void limit_session(server *s)
{
	static const char sql[] =
		"select set_config('statement_timeout', '" SERVER_STATEMENT_TIMEOUT "', false),"
		" set_config('lock_timeout', '" SERVER_LOCK_TIMEOUT "', false)";
	struct pg_result *res = NULL;
	pr_error e = PR_ERROR_INIT;

	if (s->limited && s->limited_ups == s->server_redial.ups)
		return;
	if (db_exec(s->env->d, &res, &e, "setting the server's timeouts", sql, 0, NULL) < 0) {
		note(s, e.msg);
		return;
	}
	db_result_free(res);
	s->limited = true;
	s->limited_ups = s->server_redial.ups;
}

static void count(counter *v, const char *key, unsigned code)
{
	for (size_t i = 0; i < COUNTERS_MAX; i++) {
		if (v[i].key[0] && (strcmp(v[i].key, key) != 0 || v[i].code != code))
			continue;
		if (!v[i].key[0]) {
			snprintf(v[i].key, sizeof(v[i].key), "%s", key);
			v[i].code = code;
		}
		v[i].n++;
		return;
	}
}

/*
 * How many bytes of `s` to keep for at most `max`: never the head of a
 * UTF-8 letter without its tail, which PostgreSQL and jansson refuse.
 */
static int utf8_head(const char *s, size_t max)
{
	size_t n = strnlen(s, max);

	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return (int)n;
}

/*
 * A request's reason, as kept in its row, its audit rows and its pins and
 * sent to a snapshot agent, into out[0..n): the text with card numbers,
 * e-mail addresses and the values of named secrets replaced
 * (redact_message). A reason is typed by anyone holding a token, or is
 * an alert's name, which a rule may build from any label: "refund for
 * card 4111111111111111" was stored whole, in audit rows that cannot be
 * changed. False when out of memory.
 */
static bool reason_clean(char *out, size_t n, const char *reason)
{
	char *clean = redact_message(reason);

	if (!clean)
		return false;
	snprintf(out, n, "%.*s", utf8_head(clean, n - 1), clean);
	free(clean);
	return true;
}

/*
 * The headers every answer carries, from every route (docs/serve.md):
 * a refusal of /compare is read by a browser as much as its pages are.
 * `csp` NULL: nothing may load or run.
 */
static void add_guard_headers(struct MHD_Response *r, const char *type, const char *csp)
{
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(r, "Content-Security-Policy", csp ? csp : CSP_NOTHING);
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status, const char *type,
				  const char *body, int64_t retry_after)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;
	char ra[24];

	if (!r)
		return MHD_NO;
	add_guard_headers(r, type, NULL);
	if (retry_after > 0) {
		snprintf(ra, sizeof(ra), "%" PRId64, retry_after);
		MHD_add_response_header(r, "Retry-After", ra);
	}
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(r, "WWW-Authenticate", "Bearer realm=\"profreg\"");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* Counts a refusal of the connection guard (connguard.h), for /metrics. */
static void refused(void *cls, const char *reason)
{
	server *s = cls;

	count(s->refusals, reason, 0);
}

/* The caller's address as text into out ("" when unknown). */
static void peer_address(char *out, size_t n, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	out[0] = '\0';
	if (sa && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, (socklen_t)n);
	else if (sa && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, out,
			  (socklen_t)n);
}

/*
 * The audit row of an authenticated call (access_audit_call): who (the
 * token, its team and role), what (the route, the answer, the object, the
 * captures and the requests it queued) and from which address.
 */
static int audit_call(server *s, const conn *st, const char *route, unsigned status,
		      struct MHD_Connection *c, pr_error *err)
{
	const char *action = strcmp(route, "/v1/captures") == 0      ? "serve.capture.request"
			     : strcmp(route, "/v1/captures/ID") == 0 ? "serve.capture.get"
			     : strcmp(route, "/v1/alertmanager") == 0 ? "serve.alertmanager"
								      : "serve.other";
	char addr[INET6_ADDRSTRLEN + 1], *text = NULL;
	json_t *dj;
	int rc;

	peer_address(addr, sizeof(addr), c);
	dj = json_pack("{s:s,s:i,s:I,s:s,s:s?,s:s?,s:O?}", "route", route, "status", (int)status,
		       "token", (json_int_t)st->token_id, "team", st->team, "role",
		       st->role[0] ? st->role : NULL, "remote", addr[0] ? addr : NULL, "requests",
		       st->requests);
	if (!dj || !(text = json_dumps(dj, JSON_COMPACT))) {
		json_decref(dj);
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	}
	rc = access_audit_call(s->env->d, st->role[0] ? st->role : NULL, action,
			       st->object[0] ? st->object : route, text, st->ids, st->nids, err);
	free(text);
	json_decref(dj);
	return rc;
}

/*
 * Reply with JSON `o` (stolen). An authenticated call is audited first:
 * when its row cannot be written, the answer is 503 instead, so nothing
 * is handed out unaudited.
 */
static enum MHD_Result reply_json(server *s, const char *route, struct MHD_Connection *c,
				  unsigned status, json_t *o, int64_t retry_after)
{
	char *text;
	enum MHD_Result ret;
	conn *st = s->cur;

	if (st && st->authed) {
		pr_error err = PR_ERROR_INIT;
		st->authed = false; /* one row a call */
		if (audit_call(s, st, route, status, c, &err) < 0) {
			note(s, err.msg);
			json_decref(o);
			o = json_pack("{s:s}", "error", "the audit log is unavailable");
			status = 503;
			retry_after = 5;
		}
	}
	text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	count(s->requests, route, status);
	if (!text)
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "application/json",
				  "{\"error\":\"out of memory\"}", 0);
	ret = reply_text(c, status, "application/json", text, retry_after);
	free(text);
	return ret;
}

/*
 * `s` into out[n] as valid UTF-8, each byte of a broken sequence as '?'.
 * A message that quotes a name cut to a length (a host, a key) can end
 * inside a letter, and jansson writes no such string: the refusal would
 * turn into a 500 that says "out of memory".
 */
static const char *utf8_fixed(char *out, size_t n, const char *s)
{
	size_t len, l;

	snprintf(out, n, "%s", s ? s : "");
	len = strlen(out);
	for (size_t i = 0; i < len; i += l ? l : 1)
		if (!(l = utf8_seq_len((const unsigned char *)out + i, len - i)))
			out[i] = '?';
	return out;
}

static enum MHD_Result reply_error(server *s, const char *route, struct MHD_Connection *c,
				   unsigned status, const char *why, int64_t retry_after)
{
	char text[PR_ERROR_MSG_MAX];

	return reply_json(s, route, c, status,
			  json_pack("{s:s}", "error", utf8_fixed(text, sizeof(text), why)),
			  retry_after);
}

/* ---- authentication and rate limits ----------------------------------------- */

/*
 * The caller's token into *tok: 0; or a reply was queued (401, 429, 503)
 * and *replied holds its result.
 */
static int authenticate(token_info *tok, enum MHD_Result *replied, server *s, const char *route,
			struct MHD_Connection *c)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	capreq_decision dec;
	pr_error err = PR_ERROR_INIT;
	char key[48];
	int rc;

	memset(tok, 0, sizeof(*tok));
	/*
	 * The token first, the global limit after: counted before, every
	 * anonymous request was a write to the counter and used up the
	 * budget of the callers with a token, so a flood without one got
	 * the Alertmanager webhooks refused 429. A token of the wrong shape
	 * costs no statement at all (tokens_verify), a well-shaped unknown
	 * one a single read.
	 */
	if (!h || strncmp(h, "Bearer ", 7) != 0) {
		count(s->refusals, "unauthenticated", 401);
		*replied = reply_error(s, route, c, 401, "a bearer token is required", 0);
		return -1;
	}
	if ((rc = tokens_verify(tok, s->env->d, h + 7, job_now(s->env), &err)) < 0) {
		if (rc != PR_EREFUSED)
			goto infra;
		count(s->refusals, "unauthenticated", 401);
		*replied = reply_error(s, route, c, 401, err.msg, 0);
		return -1;
	}
	snprintf(key, sizeof(key), "token:%" PRId64, tok->id);
	const struct {
		const char *key, *refusal, *why;
		uint32_t window_s, limit;
	} limits[] = {
		{"global", "rate_global", "too many requests to this service", 1,
		 s->cfg->global_rate},
		{key, "rate_token", "too many requests with this token", 60, s->cfg->token_rate},
	};
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		if ((rc = capreq_rate(&dec, s->env->d, limits[i].key, limits[i].refusal,
				      limits[i].window_s, limits[i].limit, &err)) < 0)
			goto infra;
		if (!dec.admitted) {
			token_info_release(tok);
			count(s->refusals, dec.refusal, 429);
			*replied = reply_error(s, route, c, 429, limits[i].why, dec.retry_after_s);
			return -1;
		}
	}
	if (s->cur) {
		s->cur->authed = true;
		s->cur->token_id = tok->id;
		snprintf(s->cur->team, sizeof(s->cur->team), "%s", tok->team);
		snprintf(s->cur->role, sizeof(s->cur->role), "%s", tok->role ? tok->role : "");
	}
	return 0;
infra:
	token_info_release(tok);
	note(s, err.msg);
	*replied = reply_error(s, route, c, 503, "the database is unavailable", 5);
	return -1;
}

/*
 * Run the next statements as the token's database role (a transaction
 * with SET LOCAL ROLE), so row-level security decides what they see; a
 * token without a role runs as the server. End with as_token_end.
 */
static int as_token_begin(server *s, const token_info *tok, pr_error *err)
{
	int rc;

	if (!tok->role)
		return 0;
	if ((rc = db_begin(s->env->d, err)) < 0)
		return rc;
	if ((rc = access_set_role(s->env->d, tok->role, err)) < 0)
		db_rollback(s->env->d);
	return rc;
}

/* Leave the token's role: the transaction only read, so it is rolled back. */
static void as_token_end(server *s, const token_info *tok)
{
	if (tok->role)
		db_rollback(s->env->d);
}

static const char role_no_access[] = "the token's role has no access";

/*
 * Whether a statement that failed as the token's role failed because the
 * role may not read `table` (its last grant revoked, or the role dropped),
 * asked as the server once the role's transaction has ended. That is the
 * token's refusal (403), not a database outage: answered 503 it paged the
 * on-call and filled the log with "permission denied". When the question
 * cannot be asked either, the database is the problem: false.
 */
static bool role_denied(server *s, const token_info *tok, const char *table)
{
	static const char sql[] =
		"select case when not exists (select 1 from pg_roles where rolname = $1)"
		" then true else not (has_schema_privilege($1::name, current_schema(), 'usage')"
		" and has_table_privilege($1::name, $2, 'select')) end";
	const char *p[2] = {tok->role, table};
	struct pg_result *res = NULL;
	pr_error err = PR_ERROR_INIT;
	bool denied;

	if (!tok->role)
		return false;
	if (db_exec(s->env->d, &res, &err, "cannot check the token's role", sql, 2, p) < 0)
		return false;
	denied = db_rows(res) == 1 && db_get_bool(res, 0, 0);
	db_result_free(res);
	return denied;
}

/*
 * Whether `tok` may act on service `name`: 0 and *svc filled, or a reason
 * in `why` (403) or an infrastructure failure (< 0, message in err). The
 * service is looked up as the token's role: one its role may not see is
 * as unknown as one that does not exist.
 */
static int service_for(db_service *svc, char *why, size_t n, server *s, const token_info *tok,
		       const char *name, pr_error *err)
{
	int rc;

	why[0] = '\0';
	memset(svc, 0, sizeof(*svc));
	if (!db_service_name_valid(name)) {
		snprintf(why, n, "'%.*s' is not a service name", utf8_head(name, 64), name);
		return 0;
	}
	if ((rc = as_token_begin(s, tok, err)) == 0) {
		rc = db_service_get(s->env->d, svc, name, err);
		as_token_end(s, tok);
	}
	/* A refusal leaves err empty: the webhook's next alert may need it. */
	if (rc < 0 && rc != PR_ENOTFOUND && role_denied(s, tok, "services")) {
		pr_error_clear(err);
		snprintf(why, n, "%s", role_no_access);
		return 0;
	}
	if (rc < 0) {
		if (rc != PR_ENOTFOUND)
			return rc;
		pr_error_clear(err);
		snprintf(why, n, "service '%s' is not this token's", name);
		return 0;
	}
	if (!tokens_allows(tok, name, svc->team))
		snprintf(why, n, "service '%s' is not this token's", name);
	else if (!svc->enabled)
		snprintf(why, n, "service '%s' is not enabled", name);
	return 0;
}

/* ---- POST /v1/captures ------------------------------------------------------- */

/* Whether p[0..n) holds "prt_" and 64 hex digits: a token's shape (tokens.h). */
static bool holds_token(const char *p, size_t n)
{
	for (size_t i = 0; i + TOKENS_LEN <= n; i++) {
		size_t k = 4;
		if (memcmp(p + i, "prt_", 4) != 0)
			continue;
		while (k < TOKENS_LEN && p[i + k] && strchr("0123456789abcdef", p[i + k]))
			k++;
		if (k == TOKENS_LEN)
			return true;
	}
	return false;
}

static const char *const known_types[] = {"cpu", "heap", "allocs", "goroutine", NULL};

static bool type_known(const char *t)
{
	for (size_t i = 0; known_types[i]; i++)
		if (strcmp(known_types[i], t) == 0)
			return true;
	return false;
}

/* Check a capture request body; "" or the reason it is refused (422). */
static void check_body(char *why, size_t n, const json_t *o, const config_serve *cfg)
{
	const char *key;
	json_t *v, *h, *t;
	size_t i;

	why[0] = '\0';
	if (!json_is_object(o)) {
		snprintf(why, n, "the body is not a JSON object");
		return;
	}
	json_object_foreach((json_t *)o, key, v)
	{
		if (strcmp(key, "service") && strcmp(key, "hosts") && strcmp(key, "seconds") &&
		    strcmp(key, "types") && strcmp(key, "reason") && strcmp(key, "count")) {
			snprintf(why, n, "unknown key '%.*s'", utf8_head(key, 40), key);
			return;
		}
	}
	if (!json_is_string(json_object_get(o, "service"))) {
		snprintf(why, n, "'service' is required: a string");
		return;
	}
	h = json_object_get(o, "hosts");
	v = json_object_get(o, "count");
	if (h && v) {
		snprintf(why, n, "give 'hosts' or 'count', not both");
		return;
	}
	if (v && (!json_is_integer(v) || json_integer_value(v) < 1 ||
		  json_integer_value(v) > cfg->max_hosts)) {
		snprintf(why, n, "'count' must be an integer from 1 to %u", cfg->max_hosts);
		return;
	}
	if (!h && !v) {
		snprintf(why, n, "'hosts' or 'count' is required");
		return;
	}
	if (h && (!json_is_array(h) || json_array_size(h) == 0 ||
		  json_array_size(h) > cfg->max_hosts)) {
		snprintf(why, n, "'hosts' must be an array of 1 to %u host names",
			 cfg->max_hosts);
		return;
	}
	json_array_foreach(h, i, v)
	{
		if (!json_is_string(v) || json_string_length(v) == 0 ||
		    json_string_length(v) > 255 ||
		    strlen(json_string_value(v)) != json_string_length(v)) {
			snprintf(why, n, "'hosts[%zu]' is not a host name", i);
			return;
		}
	}
	v = json_object_get(o, "seconds");
	if (v && (!json_is_integer(v) || json_integer_value(v) < 1 ||
		  json_integer_value(v) > cfg->max_seconds)) {
		snprintf(why, n, "'seconds' must be an integer from 1 to %u", cfg->max_seconds);
		return;
	}
	t = json_object_get(o, "types");
	if (t && (!json_is_array(t) || json_array_size(t) == 0 ||
		  json_array_size(t) > CAPREQ_TYPES_MAX)) {
		snprintf(why, n, "'types' must be an array of 1 to %d profile types",
			 CAPREQ_TYPES_MAX);
		return;
	}
	json_array_foreach(t, i, v)
	{
		if (!json_is_string(v) || !type_known(json_string_value(v))) {
			snprintf(why, n, "'types[%zu]' is not one of cpu, heap, allocs, goroutine",
				 i);
			return;
		}
		for (size_t k = 0; k < i; k++)
			if (json_equal(v, json_array_get(t, k))) {
				snprintf(why, n, "'types[%zu]' is given twice", i);
				return;
			}
	}
	v = json_object_get(o, "reason");
	if (!json_is_string(v) || json_string_length(v) == 0 ||
	    json_string_length(v) > REASON_MAX ||
	    strlen(json_string_value(v)) != json_string_length(v)) {
		snprintf(why, n, "'reason' is required: a string of 1 to %d bytes", REASON_MAX);
		return;
	}
	/* The reason is kept in the request row and its audit rows: never a token. */
	if (holds_token(json_string_value(v), json_string_length(v)))
		snprintf(why, n, "'reason' holds a token: a token goes in the Authorization "
			 "header only");
}

/* Parse a body: the document, or NULL with the reason in `why`. */
static json_t *parse_body(char *why, size_t n, const conn *st)
{
	json_error_t jerr;
	json_t *o;

	if (st->body.len == 0) {
		snprintf(why, n, "the body is empty: a JSON object is expected");
		return NULL;
	}
	o = json_loadb(st->body.ptr, st->body.len, JSON_REJECT_DUPLICATES, &jerr);
	if (!o)
		snprintf(why, n, "the body is not JSON: %s at byte %d", pr_json_reason(jerr.text),
			 jerr.position);
	return o;
}

/* Note in the call's audit row that it queued request `id`. */
static void call_queued(server *s, int64_t id)
{
	if (!s->cur)
		return;
	if (!s->cur->requests)
		s->cur->requests = json_array();
	json_array_append_new(s->cur->requests, json_integer((json_int_t)id));
	if (!s->cur->object[0] || json_array_size(s->cur->requests) == 1)
		snprintf(s->cur->object, sizeof(s->cur->object), "capture_request:%" PRId64, id);
}

static void wake_worker(server *s)
{
	pthread_mutex_lock(&s->mu);
	s->wake = true;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

static enum MHD_Result post_captures(server *s, struct MHD_Connection *c, const conn *st)
{
	static const char route[] = "/v1/captures";
	token_info tok;
	db_service svc;
	json_t *body = NULL, *v;
	enum MHD_Result ret;
	pr_error err = PR_ERROR_INIT;
	char why[300];
	const char *hosts[64], *types[CAPREQ_TYPES_MAX];
	char resolved[64][260];
	char **picks = NULL;   /* with "count": the service's hosts, the candidates */
	size_t npicks = 0;
	capreq_new r;
	capreq_decision dec;
	char reason[REASON_MAX + 1]; /* the database keeps 1024 at most */
	size_t i;

	memset(&svc, 0, sizeof(svc));
	if (authenticate(&tok, &ret, s, route, c) < 0)
		return ret;
	if (st->too_big) {
		count(s->refusals, "too_large", 413);
		ret = reply_error(s, route, c, 413, "the body is larger than serve.max_body_bytes",
				  0);
		goto out;
	}
	if (!(body = parse_body(why, sizeof(why), st)) ||
	    (check_body(why, sizeof(why), body, s->cfg), why[0])) {
		count(s->refusals, "bad_body", 422);
		ret = reply_error(s, route, c, 422, why, 0);
		goto out;
	}
	if (service_for(&svc, why, sizeof(why), s, &tok,
			json_string_value(json_object_get(body, "service")), &err) < 0)
		goto infra;
	if (why[0]) {
		count(s->refusals, "forbidden", 403);
		ret = reply_error(s, route, c, 403, why, 0);
		goto out;
	}
	memset(&r, 0, sizeof(r));
	if ((v = json_object_get(body, "count"))) {
		const config_service *cs = config_service_find(s->env->cfg, svc.name);
		pr_error terr = PR_ERROR_INIT;
		int rc = collect_target_hosts(&picks, &npicks, cs, &terr);
		if (rc == PR_ENOMEM) {
			pr_error_set(&err, rc, "%s", terr.msg);
			goto infra;
		}
		if (rc < 0 || npicks == 0) {
			count(s->refusals, "unknown_host", 422);
			if (rc == 0)
				snprintf(terr.msg, sizeof(terr.msg),
					 "service '%s' has no pprof_http target to pick hosts from",
					 svc.name);
			ret = reply_error(s, route, c, 422, terr.msg, 0);
			goto out;
		}
		r.count = (size_t)json_integer_value(v);
		r.hosts = (const char *const *)picks;
		r.nhosts = npicks;
	}
	json_array_foreach(json_object_get(body, "hosts"), i, v)
	{
		const config_service *cs = config_service_find(s->env->cfg, svc.name);
		pr_error terr = PR_ERROR_INIT;
		int rc = collect_target_find(resolved[i], sizeof(resolved[i]), cs,
					     json_string_value(v), &terr);
		if (rc == PR_ENOMEM)
			goto infra;
		if (rc < 0) {
			count(s->refusals, "unknown_host", 422);
			ret = reply_error(s, route, c, 422, terr.msg, 0);
			goto out;
		}
		for (size_t k = 0; k < i; k++)
			if (strcmp(resolved[k], resolved[i]) == 0) {
				count(s->refusals, "bad_body", 422);
				snprintf(why, sizeof(why), "'hosts[%zu]' names host '%.200s' again",
					 i, resolved[i]);
				ret = reply_error(s, route, c, 422, why, 0);
				goto out;
			}
		hosts[i] = resolved[i];
	}
	if (!r.count) {
		r.nhosts = json_array_size(json_object_get(body, "hosts"));
		r.hosts = hosts;
	}
	if ((v = json_object_get(body, "types"))) {
		json_t *ty;
		json_array_foreach(v, i, ty) types[r.ntypes++] = json_string_value(ty);
	} else
		types[r.ntypes++] = "cpu";
	r.service_id = svc.id;
	r.service = svc.name;
	r.types = types;
	r.seconds = json_is_integer(json_object_get(body, "seconds"))
			    ? (uint32_t)json_integer_value(json_object_get(body, "seconds"))
			    : s->cfg->default_seconds;
	if (!reason_clean(reason, sizeof(reason),
			  json_string_value(json_object_get(body, "reason")))) {
		ret = reply_error(s, route, c, 503, "out of memory", 5);
		goto out;
	}
	r.reason = reason;
	r.source = "api";
	r.token_id = tok.id;
	r.requested_by = tok.hint;
	if (capreq_admit(&dec, s->env->d, &r, s->cfg, &err) < 0)
		goto infra;
	if (dec.admitted)
		call_queued(s, dec.id);
	else if (s->cur)
		snprintf(s->cur->object, sizeof(s->cur->object), "service:%.80s", svc.name);
	if (!dec.admitted) {
		count(s->refusals, dec.refusal, 409);
		ret = reply_json(s, route, c, 409,
				 json_pack("{s:s,s:s,s:s}", "error",
					   r.count ? "no host of the service is free now"
						   : "a host cannot be captured now",
					   "reason", dec.refusal, "host", dec.host),
				 dec.retry_after_s);
		goto out;
	}
	wake_worker(s);
	{
		char inc[32];
		json_t *taken = json_array();
		snprintf(inc, sizeof(inc), "req-%" PRId64, dec.id);
		for (size_t k = 0; k < (r.count ? dec.npicked : r.nhosts); k++)
			json_array_append_new(
				taken, json_string(r.hosts[r.count ? dec.picked[k] : k]));
		ret = reply_json(s, route, c, 202,
				 json_pack("{s:I,s:s,s:s,s:o}", "id", (json_int_t)dec.id,
					   "incident", inc, "state", "queued", "hosts", taken),
				 0);
	}
	goto out;
infra:
	note(s, err.msg);
	ret = reply_error(s, route, c, 503, "the database is unavailable", 5);
out:
	collect_target_hosts_free(picks, npicks);
	json_decref(body);
	db_service_release(&svc);
	token_info_release(&tok);
	return ret;
}

/* ---- GET /v1/captures/ID ----------------------------------------------------- */

static enum MHD_Result get_capture(server *s, struct MHD_Connection *c, const char *idtxt)
{
	static const char route[] = "/v1/captures/ID";
	token_info tok;
	enum MHD_Result ret;
	pr_error err = PR_ERROR_INIT;
	json_t *o = NULL;
	char *end = NULL;
	long long id;
	int rc;

	if (authenticate(&tok, &ret, s, route, c) < 0)
		return ret;
	errno = 0;
	id = strtoll(idtxt, &end, 10);
	if (errno || !*idtxt || *end || id < 1) {
		ret = reply_error(s, route, c, 404, "no such capture request", 0);
		goto out;
	}
	if (s->cur)
		snprintf(s->cur->object, sizeof(s->cur->object), "capture_request:%lld", id);
	if ((rc = as_token_begin(s, &tok, &err)) == 0) {
		rc = capreq_get(&o, s->env->d, id, &err);
		as_token_end(s, &tok);
	}
	if (rc < 0 && rc != PR_ENOTFOUND && role_denied(s, &tok, "capture_requests")) {
		count(s->refusals, "forbidden", 403);
		ret = reply_error(s, route, c, 403, role_no_access, 0);
		goto out;
	}
	if (rc < 0 && rc != PR_ENOTFOUND) {
		note(s, err.msg);
		ret = reply_error(s, route, c, 503, "the database is unavailable", 5);
		goto out;
	}
	/* Another team's request is as unknown as one that does not exist. */
	if (rc == PR_ENOTFOUND ||
	    !tokens_allows(&tok, json_string_value(json_object_get(o, "service")),
			   json_string_value(json_object_get(o, "team")))) {
		ret = reply_error(s, route, c, 404, "no such capture request", 0);
		goto out;
	}
	if (s->cur) {
		json_t *v;
		size_t i;
		json_array_foreach(json_object_get(o, "captures"), i, v)
			if (s->cur->nids < CALL_IDS_MAX)
				s->cur->ids[s->cur->nids++] = (int64_t)json_integer_value(v);
	}
	ret = reply_json(s, route, c, 200, o, 0);
	o = NULL;
out:
	json_decref(o);
	token_info_release(&tok);
	return ret;
}

/* ---- POST /v1/alertmanager --------------------------------------------------- */

static void alert_outcome(json_t *list, const char *alert, const char *host, const char *what)
{
	char text[PR_ERROR_MSG_MAX];

	json_array_append_new(list, json_pack("{s:s?,s:s?,s:s}", "alert", alert, "host", host,
					      "outcome", utf8_fixed(text, sizeof(text), what)));
}

/*
 * Queue a snapshot of `host` for the agent serve.agents names for it:
 * "asked", or why not ("no agent" when none is configured for the host).
 */
static const char *ask_snapshot(server *s, const char *host, const char *incident,
				const char *reason, const char *service)
{
	const config_serve_agent *ag = NULL;
	snapreq *q;
	const char *at;
	buf url = BUF_INIT;

	for (size_t i = 0; i < s->cfg->nagents && !ag; i++)
		if (fnmatch(s->cfg->agents[i].hosts, host, 0) == 0)
			ag = &s->cfg->agents[i];
	if (!ag || !s->snap_started)
		return "no agent";
	if (strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_:") !=
	    strlen(host))
		return "not asked: the host name cannot go in the agent's URL";
	for (at = ag->url; *at;) {
		bool sub = strncmp(at, "{host}", 6) == 0;
		if ((sub ? buf_puts(&url, host) : buf_put(&url, at, 1)) < 0)
			break;
		at += sub ? 6 : 1;
	}
	if (*at || !url.ptr || url.len >= sizeof(q->url)) {
		buf_release(&url);
		return "not asked: the agent's URL is too long";
	}
	pthread_mutex_lock(&s->snap_mu);
	if (s->snap_len == SNAPQ_MAX) {
		count(s->snapshots, "dropped", 0);
		pthread_mutex_unlock(&s->snap_mu);
		buf_release(&url);
		return "not asked: too many snapshot requests waiting";
	}
	q = &s->snapq[(s->snap_head + s->snap_len++) % SNAPQ_MAX];
	snprintf(q->url, sizeof(q->url), "%s", url.ptr);
	snprintf(q->host, sizeof(q->host), "%s", host);
	snprintf(q->incident, sizeof(q->incident), "%s", incident);
	snprintf(q->reason, sizeof(q->reason), "%s", reason);
	snprintf(q->service, sizeof(q->service), "%s", service);
	pthread_cond_signal(&s->snap_cv);
	pthread_mutex_unlock(&s->snap_mu);
	buf_release(&url);
	return "asked";
}

/* The snapshot asker's thread: one request at a time, until snap_quit. */
static void *snap_main(void *arg)
{
	server *s = arg;
	uint32_t timeout_ms = s->env->cfg->snapshot.time_budget_ms + 15000;

	pthread_mutex_lock(&s->snap_mu);
	while (!s->snap_quit) {
		snapreq q;
		agent_answer ans;
		pr_error err = PR_ERROR_INIT;
		const char *outcome;
		int rc;
		if (!s->snap_len) {
			pthread_cond_wait(&s->snap_cv, &s->snap_mu);
			continue;
		}
		q = s->snapq[s->snap_head];
		s->snap_head = (s->snap_head + 1) % SNAPQ_MAX;
		s->snap_len--;
		pthread_mutex_unlock(&s->snap_mu);
		rc = agent_ask(&ans, q.url, s->agent_secret, q.host, q.incident, q.reason,
			       q.service[0] ? q.service : NULL, timeout_ms, &err);
		outcome = rc < 0                ? "unreachable"
			  : ans.status == 201 ? "taken"
			  : ans.status == 409 ? "cooldown"
			  : ans.status == 403 ? "refused"
					      : "failed";
		if (rc < 0 || (ans.status != 201 && ans.status != 409)) {
			char line[PR_ERROR_MSG_MAX + 400];
			snprintf(line, sizeof(line), "snapshot of host '%.200s': %s", q.host,
				 rc < 0 ? err.msg : ans.why);
			note(s, line);
		}
		pthread_mutex_lock(&s->snap_mu);
		count(s->snapshots, outcome, 0);
	}
	pthread_mutex_unlock(&s->snap_mu);
	return NULL;
}

/* Whether any of the n strings (NULL ones skipped) holds a token. */
static bool holds_any_token(const char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] && holds_token(v[i], strlen(v[i])))
			return true;
	return false;
}

/* One alert of a webhook call: an outcome appended to `list`; < 0 only on infra. */
static int one_alert(server *s, const token_info *tok, const json_t *a, const char *group,
		     json_t *list, pr_error *err)
{
	const json_t *labels = json_object_get(a, "labels");
	const char *status = json_string_value(json_object_get(a, "status"));
	const char *fp = json_string_value(json_object_get(a, "fingerprint"));
	const char *name = json_string_value(json_object_get(labels, "alertname"));
	const char *service =
		json_string_value(json_object_get(labels, s->cfg->alert_service_label));
	const char *hostlabel = NULL;
	const config_service *cs;
	db_service svc;
	char why[300], host[260], incident[128], reason[300];
	pr_error terr = PR_ERROR_INIT;
	int rc = 0;

	memset(&svc, 0, sizeof(svc));
	for (size_t i = 0; i < s->cfg->nalert_host_labels && !hostlabel; i++)
		hostlabel =
			json_string_value(json_object_get(labels, s->cfg->alert_host_labels[i]));
	/*
	 * The alert's names go into the request row and its audit rows, and
	 * back in every answer: never a token, as for POST /v1/captures'
	 * reason. Said without them, before anything quotes them.
	 */
	if (holds_any_token((const char *const[]){name, fp, group, service, hostlabel}, 5)) {
		count(s->refusals, "bad_body", 422);
		alert_outcome(list, NULL, NULL,
			      "skipped: the alert holds a token (a token goes in the Authorization "
			      "header only)");
		return 0;
	}
	if (!json_is_object(labels) || !status ||
	    (strcmp(status, "firing") != 0 && strcmp(status, "resolved") != 0)) {
		alert_outcome(list, name, NULL, "skipped: not an alert (labels, status)");
		return 0;
	}
	if (!service || !hostlabel) {
		alert_outcome(list, name, hostlabel,
			      !service ? "skipped: no service label" : "skipped: no host label");
		return 0;
	}
	if ((rc = service_for(&svc, why, sizeof(why), s, tok, service, err)) < 0)
		goto out;
	if (why[0]) {
		count(s->refusals, "forbidden", 403);
		alert_outcome(list, name, hostlabel, why);
		goto out;
	}
	cs = config_service_find(s->env->cfg, svc.name);
	if ((rc = collect_target_find(host, sizeof(host), cs, hostlabel, &terr)) < 0) {
		if (rc == PR_ENOMEM) {
			rc = pr_error_set(err, rc, "%s", terr.msg);
			goto out;
		}
		rc = 0;
		count(s->refusals, "unknown_host", 422);
		alert_outcome(list, name, hostlabel, terr.msg);
		goto out;
	}
	if (strcmp(status, "resolved") == 0) {
		size_t n = 0;
		/*
		 * Only the session of the service the alert names: on a shared
		 * host another team's resolved alert ended this team's session,
		 * and its still-firing alert was then refused as a re-escalation.
		 */
		if ((rc = capreq_sessions_end_of(&n, s->env->d, host, "alertmanager", svc.id,
						 "resolved", err)) < 0)
			goto out;
		alert_outcome(list, name, host, n ? "resolved: session ended" : "resolved");
		goto out;
	}
	{
		const char *hosts[1] = {host}, *types[1] = {"cpu"};
		capreq_new r;
		capreq_decision dec;
		const char *inc = fp ? fp : group ? group : name ? name : "unnamed";
		const char *alert = name ? name : "unnamed";
		snprintf(incident, sizeof(incident), "alert-%.*s", utf8_head(inc, 100), inc);
		/*
		 * Without a fingerprint the incident is named after the alert's
		 * group or name, which anyone writing alert rules chose: it is
		 * kept in every capture request of the incident.
		 */
		if (!fp)
			incident[redact_names(incident, strlen(incident))] = '\0';
		snprintf(why, sizeof(why), "alert '%.*s' firing", utf8_head(alert, 200), alert);
		if (!reason_clean(reason, sizeof(reason), why))
			snprintf(reason, sizeof(reason), "alert firing");
		memset(&r, 0, sizeof(r));
		r.service_id = svc.id;
		r.service = svc.name;
		r.hosts = hosts;
		r.nhosts = 1;
		r.types = types;
		r.ntypes = 1;
		r.seconds = s->cfg->default_seconds;
		r.reason = reason;
		r.source = "alertmanager";
		r.incident = incident;
		r.token_id = tok->id;
		r.requested_by = tok->hint;
		r.level = 1;
		if ((rc = capreq_admit(&dec, s->env->d, &r, s->cfg, err)) < 0)
			goto out;
		if (dec.admitted)
			call_queued(s, dec.id);
		if (dec.admitted) {
			char what[48];
			snprintf(what, sizeof(what), "capture %" PRId64 " queued", dec.id);
			alert_outcome(list, name, host, what);
		} else {
			char what[64];
			count(s->refusals, dec.refusal, 409);
			snprintf(what, sizeof(what), "refused: %s", dec.refusal);
			alert_outcome(list, name, host, what);
		}
		/* The agent's own per-host cooldown decides whether one is taken. */
		if (s->cfg->nagents)
			json_object_set_new(json_array_get(list, json_array_size(list) - 1),
					    "snapshot",
					    json_string(ask_snapshot(s, host, incident, reason,
								     svc.name)));
	}
out:
	db_service_release(&svc);
	return rc;
}

static enum MHD_Result post_alerts(server *s, struct MHD_Connection *c, const conn *st)
{
	static const char route[] = "/v1/alertmanager";
	token_info tok;
	json_t *body = NULL, *alerts, *a, *list = NULL;
	enum MHD_Result ret;
	pr_error err = PR_ERROR_INIT;
	char why[300];
	size_t i;

	if (authenticate(&tok, &ret, s, route, c) < 0)
		return ret;
	if (st->too_big) {
		count(s->refusals, "too_large", 413);
		ret = reply_error(s, route, c, 413, "the body is larger than serve.max_body_bytes",
				  0);
		goto out;
	}
	if (!(body = parse_body(why, sizeof(why), st)))
		goto bad;
	alerts = json_object_get(body, "alerts");
	if (!json_is_object(body) || !json_is_array(alerts)) {
		snprintf(why, sizeof(why),
			 "not an Alertmanager webhook payload: no 'alerts' array");
		goto bad;
	}
	if (json_array_size(alerts) > ALERTS_MAX) {
		snprintf(why, sizeof(why), "more than %d alerts in one call", ALERTS_MAX);
		goto bad;
	}
	if (!(list = json_array()))
		goto infra;
	json_array_foreach(alerts, i, a)
	{
		if (!json_is_object(a)) {
			alert_outcome(list, NULL, NULL, "skipped: not an object");
			continue;
		}
		if (one_alert(s, &tok, a, json_string_value(json_object_get(body, "groupKey")),
			      list, &err) < 0)
			goto infra;
	}
	wake_worker(s);
	ret = reply_json(s, route, c, 200, json_pack("{s:o}", "alerts", list), 0);
	list = NULL;
	goto out;
bad:
	count(s->refusals, "bad_body", 422);
	ret = reply_error(s, route, c, 422, why, 0);
	goto out;
infra:
	note(s, err.msg[0] ? err.msg : "out of memory");
	ret = reply_error(s, route, c, 503, "the database is unavailable", 5);
out:
	json_decref(list);
	json_decref(body);
	token_info_release(&tok);
	return ret;
}

/* ---- health and metrics ------------------------------------------------------ */

static enum MHD_Result get_metrics(server *s, struct MHD_Connection *c, bool health)
{
	json_t *states = NULL, *v;
	int64_t sessions = 0;
	pr_error err = PR_ERROR_INIT;
	buf b = BUF_INIT;
	const char *key;
	enum MHD_Result ret;

	if (capreq_counts(&states, &sessions, s->env->d, &err) < 0) {
		note(s, err.msg);
		count(s->requests, health ? "/healthz" : "/metrics", 503);
		return reply_text(c, 503, "text/plain", "the database is unavailable\n", 5);
	}
	if (health) {
		json_decref(states);
		count(s->requests, "/healthz", 200);
		return reply_text(c, 200, "text/plain", "ok\n", 0);
	}
	count(s->requests, "/metrics", 200);
	buf_puts(&b, "# HELP profreg_serve_requests_total HTTP requests answered.\n"
		     "# TYPE profreg_serve_requests_total counter\n");
	for (size_t i = 0; i < COUNTERS_MAX && s->requests[i].key[0]; i++)
		buf_printf(&b,
			   "profreg_serve_requests_total{route=\"%s\",code=\"%u\"} %" PRIu64 "\n",
			   s->requests[i].key, s->requests[i].code, s->requests[i].n);
	buf_puts(&b, "# HELP profreg_serve_refusals_total Requests refused, by reason.\n"
		     "# TYPE profreg_serve_refusals_total counter\n");
	for (size_t i = 0; i < COUNTERS_MAX && s->refusals[i].key[0]; i++)
		buf_printf(&b, "profreg_serve_refusals_total{reason=\"%s\"} %" PRIu64 "\n",
			   s->refusals[i].key, s->refusals[i].n);
	buf_puts(&b, "# HELP profreg_serve_snapshot_requests_total Snapshots asked of agents, by "
		     "outcome.\n# TYPE profreg_serve_snapshot_requests_total counter\n");
	pthread_mutex_lock(&s->snap_mu);
	for (size_t i = 0; i < COUNTERS_MAX && s->snapshots[i].key[0]; i++)
		buf_printf(&b,
			   "profreg_serve_snapshot_requests_total{outcome=\"%s\"} %" PRIu64 "\n",
			   s->snapshots[i].key, s->snapshots[i].n);
	pthread_mutex_unlock(&s->snap_mu);
	buf_puts(&b, "# HELP profreg_capture_requests Capture requests by state (every server).\n"
		     "# TYPE profreg_capture_requests gauge\n");
	json_object_foreach(states, key, v)
		buf_printf(&b, "profreg_capture_requests{state=\"%s\"} %" JSON_INTEGER_FORMAT "\n",
			   key, json_integer_value(v));
	buf_printf(&b,
		   "# HELP profreg_elevated_sessions Open elevated sessions (every server).\n"
		   "# TYPE profreg_elevated_sessions gauge\nprofreg_elevated_sessions %" PRId64
		   "\n",
		   sessions);
	json_decref(states);
	ret = reply_text(c, 200, "text/plain; version=0.0.4", b.ptr, 0);
	buf_release(&b);
	return ret;
}

/* ---- GET /compare (jobs/compare.h) ------------------------------------------ */

typedef struct query_args {
	compare_param v[32];
	size_t n;
	bool too_many;
} query_args;

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				   size_t key_size, const char *value, size_t value_size)
{
	query_args *q = cls;

	(void)kind;
	if (q->n == sizeof(q->v) / sizeof(q->v[0])) {
		q->too_many = true;
		return MHD_NO;
	}
	q->v[q->n++] = (compare_param){key, value ? value : "", key_size, value ? value_size : 0};
	return MHD_YES;
}

/* A page or a one-line refusal, with the headers every page carries. */
static enum MHD_Result reply_page(server *s, struct MHD_Connection *c, unsigned status,
				  const char *type, const char *body, size_t len, const char *csp)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	count(s->requests, "/compare", status);
	if (!r)
		return MHD_NO;
	add_guard_headers(r, type, csp);
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(r, "WWW-Authenticate",
					"Basic realm=\"profreg\", charset=\"UTF-8\"");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_line(server *s, struct MHD_Connection *c, unsigned status,
				  const char *line)
{
	return reply_page(s, c, status, "text/plain; charset=utf-8", line, strlen(line), NULL);
}

/*
 * The browser's way in: the same tokens as the API, as the password of
 * HTTP Basic (a browser prompts for it and keeps it for the origin; the
 * token never appears in a URL) or as a bearer token.
 */
static enum MHD_Result get_compare(server *s, struct MHD_Connection *c)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	char token[TOKENS_LEN + 16];
	token_info tok;
	capreq_decision dec;
	query_args args;
	compare_query q;
	compare_response page;
	pr_error err = PR_ERROR_INIT;
	enum MHD_Result ret;
	int rc;

	memset(&tok, 0, sizeof(tok));
	memset(&q, 0, sizeof(q));
	memset(&page, 0, sizeof(page));
	memset(&args, 0, sizeof(args));
	/* The token before the global limit, as authenticate says why. */
	if (compare_token_from_header(token, sizeof(token), h) < 0) {
		count(s->refusals, "unauthenticated", 401);
		return reply_line(s, c, 401, "a token is required: the password of HTTP Basic, "
					     "or a bearer token\n");
	}
	if ((rc = tokens_verify(&tok, s->env->d, token, job_now(s->env), &err)) < 0) {
		char line[PR_ERROR_MSG_MAX + 2];
		if (rc != PR_EREFUSED)
			goto infra;
		count(s->refusals, "unauthenticated", 401);
		snprintf(line, sizeof(line), "%s\n", err.msg);
		return reply_line(s, c, 401, line);
	}
	if ((rc = capreq_rate(&dec, s->env->d, "global", "rate_global", 1, s->cfg->global_rate,
			      &err)) < 0)
		goto infra;
	if (!dec.admitted) {
		count(s->refusals, dec.refusal, 429);
		ret = reply_line(s, c, 429, "too many requests to this service\n");
		goto out;
	}
	{
		char key[48];
		snprintf(key, sizeof(key), "token:%" PRId64, tok.id);
		if ((rc = capreq_rate(&dec, s->env->d, key, "rate_token", 60, s->cfg->token_rate,
				      &err)) < 0)
			goto infra;
		if (!dec.admitted) {
			count(s->refusals, dec.refusal, 429);
			ret = reply_line(s, c, 429, "too many requests with this token\n");
			goto out;
		}
	}
	MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, collect_arg, &args);
	if (args.too_many) {
		ret = reply_line(s, c, 400, "more than 32 query parameters\n");
		goto out;
	}
	/*
	 * A token pasted into the address (as a release, a host, a parameter
	 * of its own) would be quoted back and kept in the comparison's
	 * audit row, besides the browser's history and every proxy's log:
	 * refuse it before it is read, without quoting it.
	 */
	for (size_t i = 0; i < args.n; i++)
		if (holds_token(args.v[i].key, args.v[i].key_len) ||
		    holds_token(args.v[i].value, args.v[i].value_len)) {
			count(s->refusals, "token_in_address", 400);
			ret = reply_line(s, c, 400, "the address holds a token: send it in the "
						    "Authorization header, never in a URL\n");
			goto out;
		}
	if (compare_query_parse(&q, args.v, args.n, &err) < 0) {
		char line[PR_ERROR_MSG_MAX + 2];
		if (err.code == PR_ENOMEM)
			goto infra;
		snprintf(line, sizeof(line), "%s\n", err.msg);
		ret = reply_line(s, c, 400, line);
		goto out;
	}
	if (compare_page(&page, s->env, &tok, &q, &err) < 0) {
		if (err.code == PR_ENOMEM || !role_denied(s, &tok, "services"))
			goto infra;
		count(s->refusals, "forbidden", 403);
		ret = reply_line(s, c, 403, "the token's role has no access\n");
		goto out;
	}
	ret = reply_page(s, c, page.status, page.content_type, page.body, page.len, page.csp);
	goto out;
infra:
	note(s, err.msg[0] ? err.msg : "out of memory");
	ret = reply_line(s, c, 503, "the database is unavailable\n");
out:
	compare_response_release(&page);
	compare_query_release(&q);
	token_info_release(&tok);
	return ret;
}

/* ---- dispatch ---------------------------------------------------------------- */

/*
 * A request's state, made when its request line is read (libmicrohttpd
 * calls this once a request, before the handler, and `done` frees it),
 * from the path as it was sent: libmicrohttpd decodes %00 into a NUL
 * that ends the path the handler is given, so "/compare%00/../x" would
 * be taken for "/compare". NULL: no memory, and the handler refuses it.
 */
static void *request_begins(void *cls, const char *uri, struct MHD_Connection *c)
{
	server *s = cls;
	conn *st = calloc(1, sizeof(*st));
	size_t path = strcspn(uri, "?");

	(void)c;
	if (!st)
		return NULL;
	buf_init(&st->body, s->cfg->max_body_bytes);
	for (size_t i = 0; i + 3 <= path && !st->nul_in_path; i++)
		st->nul_in_path = memcmp(uri + i, "%00", 3) == 0;
	return st;
}

static enum MHD_Result dispatch(void *cls, struct MHD_Connection *c, const char *url,
				const char *method, const char *version, const char *upload,
				size_t *upload_size, void **state)
{
	server *s = cls;
	conn *st = *state;
	bool post = strcmp(method, "POST") == 0, get = strcmp(method, "GET") == 0;

	(void)version;
	if (!st)
		return MHD_NO; /* request_begins had no memory */
	if (!st->begun) {
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_LENGTH);
		const char *bad;
		st->begun = true;
		/* Answered before the body is read: the connection closes after it. */
		if ((bad = connguard_framing(&s->guard, c))) {
			char why[120];
			s->nreq++;
			s->cur = st;
			snprintf(why, sizeof(why), "the request has %s", bad);
			return reply_error(s, "other", c, 400, why, 0);
		}
		/* Whatever it names after the NUL, it is no route's: answered before the body. */
		if (st->nul_in_path) {
			s->nreq++;
			s->cur = st;
			count(s->refusals, "bad_path", 400);
			return reply_error(s, "other", c, 400,
					   "the path holds an encoded NUL byte (%00)", 0);
		}
		/*
		 * A body its own length says is too large is refused now, not
		 * read to its end first (the connection closes after the 413).
		 */
		if (cl && strspn(cl, "0123456789") == strlen(cl) && cl[0] &&
		    (strlen(cl) > 18 || strtoull(cl, NULL, 10) > s->cfg->max_body_bytes)) {
			bool known = strcmp(url, "/v1/captures") == 0 ||
				     strcmp(url, "/v1/alertmanager") == 0;
			s->nreq++;
			s->cur = st; /* this connection's, never the one answered before */
			count(s->refusals, "too_large", 413);
			return reply_error(s, known ? url : "other", c, 413,
					   "the body is larger than serve.max_body_bytes", 0);
		}
		return MHD_YES;
	}
	if (*upload_size) {
		size_t n = *upload_size;
		*upload_size = 0;
		/* A body that trickles in: libmicrohttpd calls here for each piece. */
		if (connguard_late(&s->guard, c))
			return MHD_NO;
		st->received += n;
		if (!st->too_big && buf_put(&st->body, upload, n) < 0)
			st->too_big = true;
		/*
		 * A body without a length (chunked) past the cap is read to its
		 * end and dropped, for the 413 that libmicrohttpd sends only
		 * then; one that goes on past BODY_DROP_MAX more (a client that
		 * never ends it) has its connection closed instead.
		 */
		if (st->too_big && st->received > s->cfg->max_body_bytes + BODY_DROP_MAX) {
			count(s->refusals, "too_large", 413);
			return MHD_NO;
		}
		return MHD_YES;
	}
	connguard_arrived(&s->guard, c);
	s->nreq++;
	s->cur = st;
	/* Still down: the route answers 503 when it needs the database. */
	if (db_ready(s, s->env->d, &s->server_redial, "server"))
		limit_session(s);
	if (strcmp(url, "/v1/captures") == 0)
		return post ? post_captures(s, c, st) : reply_error(s, url, c, 405, "use POST", 0);
	if (strncmp(url, "/v1/captures/", 13) == 0)
		return get ? get_capture(s, c, url + 13)
			   : reply_error(s, "/v1/captures/ID", c, 405, "use GET", 0);
	if (strcmp(url, "/v1/alertmanager") == 0)
		return post ? post_alerts(s, c, st) : reply_error(s, url, c, 405, "use POST", 0);
	if (strcmp(url, "/compare") == 0)
		return get ? get_compare(s, c) : reply_line(s, c, 405, "use GET\n");
	if (strcmp(url, "/healthz") == 0 || strcmp(url, "/metrics") == 0)
		return get ? get_metrics(s, c, url[1] == 'h')
			   : reply_error(s, url, c, 405, "use GET", 0);
	return reply_error(s, "other", c, 404, "no such endpoint", 0);
}

/*
 * The daemon's handler. While it runs, the polling thread reads no
 * connection: the guard's deadlines do not count that time (connguard.h).
 */
static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **state)
{
	server *s = cls;
	enum MHD_Result ret;

	connguard_enter(&s->guard);
	ret = dispatch(cls, c, url, method, version, upload, upload_size, state);
	connguard_leave(&s->guard);
	return ret;
}

static void done(void *cls, struct MHD_Connection *c, void **state,
		 enum MHD_RequestTerminationCode why)
{
	conn *st = *state;
	server *s = cls;

	(void)why;
	connguard_answered(&s->guard, c);
	if (s->cur == st)
		s->cur = NULL;
	if (st) {
		json_decref(st->requests);
		buf_release(&st->body);
		free(st);
	}
	*state = NULL;
}

/* ---- the worker --------------------------------------------------------------- */

/* Execute one claimed request; < 0 only when memory fails. */
static int execute(server *s, const job_env *wenv, const serve_opts *o, const capreq_claimed *q,
		   pr_error *err)
{
	db_service svc;
	const config_service *cs = config_service_find(wenv->cfg, q->service);
	int64_t *caps = calloc(q->nhosts * q->ntypes + 1, sizeof(int64_t));
	size_t ncaps = 0, failed = 0;
	buf errors = BUF_INIT;
	pr_error e = PR_ERROR_INIT;
	char reason[REASON_MAX + 300];
	int64_t keep = wenv->cfg->analysis.forensic_keep_us;
	int rc = 0;

	memset(&svc, 0, sizeof(svc));
	buf_init(&errors, 3000);
	if (!caps)
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	snprintf(reason, sizeof(reason), "incident %s: %s", q->incident, q->reason);
	if (db_service_get(wenv->d, &svc, q->service, &e) < 0) {
		buf_puts(&errors, e.msg);
		failed++;
		goto finish;
	}
	for (size_t h = 0; h < q->nhosts; h++)
		for (size_t t = 0; t < q->ntypes; t++) {
			collect_one one = {q->hosts[h], q->types[t], q->seconds, q->incident};
			int64_t id = 0;
			evidence_pin_result pin;
			uint64_t bound = collect_one_bound_ms(cs, q->types[t], q->seconds);
			bool kept = false;
			pr_error_clear(&e);
			/*
			 * The lease must outlast this capture, however long the
			 * target takes, or another server would claim the request
			 * and profile its hosts again; and a worker that lost it
			 * (it hung past the lease) must not profile anything more.
			 */
			if (capreq_renew(&kept, wenv->d, q, o->worker,
					 (uint32_t)(bound / 1000 + 1) + s->cfg->lease_s, &e) < 0) {
				failed++;
				buf_printf(&errors, "%s%s", errors.len ? "; " : "", e.msg);
				goto finish;
			}
			if (!kept) {
				char line[200];
				snprintf(line, sizeof(line),
					 "request %" PRId64 ": stopped: no longer held by "
					 "worker '%.60s' (its lease ran out and another "
					 "worker claimed it)",
					 q->id, o->worker);
				note(s, line);
				goto out;
			}
			if ((rc = collect_one_capture(&id, wenv, &svc, cs, &one, &e)) == 0 && id)
				rc = evidence_pin_capture(&pin, wenv->d, id, reason,
							  keep ? job_now(wenv) + keep : 0, &e);
			if (rc == PR_ENOMEM) {
				rc = pr_error_set(err, rc, "%s", e.msg);
				goto out;
			}
			/*
			 * Its host is being CPU-profiled by another process (an
			 * alert's request is queued all the same) and nothing of
			 * it is taken yet: put back for a moment, so that the
			 * worker goes on with the other requests, up to
			 * HOST_WAIT_MAX_S after it was made.
			 */
			if (rc == PR_ELOCKED && h == 0 && t == 0) {
				bool deferred = false;
				pr_error de = PR_ERROR_INIT;
				if (capreq_defer(&deferred, wenv->d, q, o->worker, HOST_RETRY_S,
						 HOST_WAIT_MAX_S, &de) < 0)
					note(s, de.msg);
				if (deferred) {
					rc = 0;
					goto out;
				}
			}
			if (rc < 0) {
				failed++;
				buf_printf(&errors, "%s%s", errors.len ? "; " : "", e.msg);
				rc = 0;
				continue;
			}
			if (id)
				caps[ncaps++] = id;
		}
finish:
	/* The record keeps the first error: the last capture's would stand for the finish's. */
	pr_error_clear(&e);
	if (capreq_finish(wenv->d, q, o->worker, failed == 0, caps, ncaps,
			  errors.len ? errors.ptr : NULL, &e) < 0) {
		char line[PR_ERROR_MSG_MAX + 40];
		snprintf(line, sizeof(line), "request %" PRId64 ": %s", q->id, e.msg);
		note(s, line);
	}
	s->out->executed++;
out:
	free(caps);
	buf_release(&errors);
	db_service_release(&svc);
	return rc;
}

/* Wait for a wake-up or POLL_MS, whichever comes first. */
static void nap(server *s)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += POLL_MS * 1000000L;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&s->mu);
	if (!s->wake)
		pthread_cond_timedwait(&s->cv, &s->mu, &ts);
	s->wake = false;
	pthread_mutex_unlock(&s->mu);
}

static int worker_loop(server *s, const job_env *wenv, const serve_opts *o, pr_error *err)
{
	int64_t last_expire = 0;
	redial r = {0, 0, false, 0};
	int rc = 0;

	while (!*o->stop) {
		capreq_claimed q;
		bool got = false;
		pr_error e = PR_ERROR_INIT;
		int64_t now = time_now_us();

		notes_flush(s, false);
		if (!db_ready(s, wenv->d, &r, "worker")) {
			nap(s);
			continue;
		}
		/* Sessions end at their expiry even when no one asks anything. */
		if (now - last_expire >= 1000000) {
			size_t n;
			last_expire = now;
			if (capreq_sessions_expire(&n, wenv->d, &e) < 0)
				note(s, e.msg);
		}
		if (capreq_claim(&q, &got, wenv->d, o->worker, s->cfg->lease_s, &e) < 0) {
			note(s, e.msg);
			nap(s);
			continue;
		}
		if (!got) {
			nap(s);
			continue;
		}
		rc = execute(s, wenv, o, &q, err);
		capreq_claimed_release(&q);
		if (rc < 0)
			break;
	}
	return rc;
}

/* ---- serve_run ----------------------------------------------------------------- */

int serve_run(serve_result *out, const job_env *env, const serve_opts *o, pr_error *err)
{
	const char *listen = o->listen ? o->listen : env->cfg->serve.listen;
	job_env wenv = *env;
	struct sockaddr_storage ss;
	struct MHD_Daemon *daemon = NULL;
	const union MHD_DaemonInfo *info;
	server s;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&s, 0, sizeof(s));
	s.env = env;
	s.cfg = &env->cfg->serve;
	s.out = out;
	s.opts = o;
	pthread_mutex_init(&s.mu, NULL);
	pthread_cond_init(&s.cv, NULL);
	pthread_mutex_init(&s.note_mu, NULL);
	pthread_mutex_init(&s.snap_mu, NULL);
	pthread_cond_init(&s.snap_cv, NULL);
	wenv.d = o->worker_db;
	if ((rc = netaddr_parse_listen(&ss, listen, err)) < 0)
		goto out;
	if (s.cfg->nagents) {
		if (!s.cfg->agent_secret_env && !s.cfg->agent_secret_file) {
			rc = pr_error_set(err, PR_EUSAGE,
					  "serve.agents needs the agents' secret: set "
					  "serve.agent_secret_env or serve.agent_secret_file");
			goto out;
		}
		if ((rc = secret_read(&s.agent_secret, s.cfg->agent_secret_env,
				      s.cfg->agent_secret_file, err)) < 0)
			goto out;
		if (pthread_create(&s.snap_thread, NULL, snap_main, &s) != 0) {
			rc = pr_error_set(err, PR_ERR, "cannot start the snapshot asker: %s",
					  strerror(errno));
			goto out;
		}
		s.snap_started = true;
	}
	if ((rc = connguard_init(&s.guard,
				 s.cfg->max_connections ? s.cfg->max_connections : 256,
				 s.cfg->max_connections_per_ip, REQUEST_DEADLINE_MS, refused, &s,
				 err)) < 0)
		goto out;
	daemon = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0), 0,
		connguard_accept, &s.guard, handle, &s, MHD_OPTION_SOCK_ADDR,
		(struct sockaddr *)&ss, MHD_OPTION_URI_LOG_CALLBACK, request_begins, &s,
		MHD_OPTION_NOTIFY_COMPLETED, done, &s, MHD_OPTION_NOTIFY_CONNECTION,
		connguard_notify, &s.guard, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
		MHD_OPTION_CONNECTION_LIMIT, connguard_mhd_limit(&s.guard),
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024), MHD_OPTION_END);
	if (!daemon || !(info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT))) {
		rc = pr_error_set(err, PR_EIO, "cannot listen on '%.100s': %s", listen,
				  errno ? strerror(errno) : "libmicrohttpd refused");
		goto out;
	}
	out->port = info->port;
	if (o->port_file) {
		char text[16];
		int len = snprintf(text, sizeof(text), "%u\n", (unsigned)out->port);
		if ((rc = fileio_write_atomic(o->port_file, text, (size_t)len, 0644, err)) < 0)
			goto out;
	}
	rc = worker_loop(&s, &wenv, o, err);
out:
	if (daemon)
		MHD_stop_daemon(daemon);
	if (s.snap_started) {
		pthread_mutex_lock(&s.snap_mu);
		s.snap_quit = true;
		pthread_cond_signal(&s.snap_cv);
		pthread_mutex_unlock(&s.snap_mu);
		pthread_join(s.snap_thread, NULL);
	}
	notes_flush(&s, true);
	secret_free(s.agent_secret);
	connguard_release(&s.guard);
	pthread_mutex_destroy(&s.snap_mu);
	pthread_cond_destroy(&s.snap_cv);
	out->requests = s.nreq;
	pthread_mutex_destroy(&s.mu);
	pthread_cond_destroy(&s.cv);
	pthread_mutex_destroy(&s.note_mu);
	return rc;
}

void serve_result_release(serve_result *r)
{
	job_notes_release(&r->notes);
	memset(r, 0, sizeof(*r));
}
