/*
 * capreq.c: captures on demand and their safeguards (see capreq.h); owns
 * the tables capture_requests, elevated_sessions and rate_counters.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/capreq.h"
#include "common/buf.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The advisory transaction lock every admission holds ("profreg-admit"). */
#define ADMIT_LOCK "7710015001"

static int oom(pr_error *err)
{
	return pr_error_set(err, PR_ENOMEM, "out of memory");
}

/* A text[] literal of n strings, each quoted. */
static int text_array(buf *out, const char *const *v, size_t n)
{
	int rc = buf_puts(out, "{");

	for (size_t i = 0; rc == 0 && i < n; i++) {
		rc = buf_puts(out, i ? ",\"" : "\"");
		for (const char *p = v[i]; rc == 0 && *p; p++)
			rc = (*p == '"' || *p == '\\') ? buf_printf(out, "\\%c", *p)
						       : buf_put(out, p, 1);
		if (rc == 0)
			rc = buf_puts(out, "\"");
	}
	if (rc == 0)
		rc = buf_puts(out, "}");
	return rc;
}

/* Split a text[] as PostgreSQL prints it; elements may be quoted. */
static int split_array(char ***out, size_t *n, const char *s)
{
	size_t len = strlen(s), cap = 1;
	buf cur = BUF_INIT;
	bool quoted = false;
	int rc = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < len; i++)
		cap += s[i] == ',';
	if (!(*out = calloc(cap, sizeof(char *))))
		return PR_ENOMEM;
	if (len < 2 || strcmp(s, "{}") == 0)
		return 0;
	for (size_t i = 1; i + 1 < len && rc == 0; i++) {
		char c = s[i];
		if (c == '"') {
			quoted = !quoted;
			continue;
		}
		if (c == '\\' && i + 2 < len) {
			rc = buf_put(&cur, &s[++i], 1);
			continue;
		}
		if (c == ',' && !quoted) {
			if (!((*out)[(*n)++] = strdup(cur.ptr ? cur.ptr : "")))
				rc = PR_ENOMEM;
			buf_release(&cur);
			continue;
		}
		rc = buf_put(&cur, &c, 1);
	}
	if (rc == 0 && !((*out)[(*n)++] = strdup(cur.ptr ? cur.ptr : "")))
		rc = PR_ENOMEM;
	buf_release(&cur);
	return rc;
}

static void strings_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Audit `action` on `object` with detail `dj` (stolen). */
static int audit(db *d, const char *action, const char *object, json_t *dj, pr_error *err)
{
	char *text = dj ? json_dumps(dj, JSON_COMPACT) : NULL;
	int rc;

	if (dj && !text) {
		json_decref(dj);
		return oom(err);
	}
	rc = db_audit(d, action, object, text, err);
	free(text);
	json_decref(dj);
	return rc;
}

/* ---- rate limits ------------------------------------------------------------ */

int capreq_rate(capreq_decision *out, db *d, const char *key, const char *refusal,
		uint32_t window_s, uint32_t limit, pr_error *err)
{
	static const char sql[] =
		"insert into rate_counters as r (key, window_start, n)"
		" values ($1, to_timestamp(floor(extract(epoch from now()) / $2::int)"
		"   * $2::int), 1)"
		" on conflict (key, window_start) do update set n = r.n + 1"
		" returning n, ceil(extract(epoch from r.window_start"
		"   + make_interval(secs => $2::int) - now()))::bigint";
	char ws[16];
	const char *p[2] = {key, ws};
	struct pg_result *res = NULL;
	int64_t n, left;
	int rc;

	memset(out, 0, sizeof(*out));
	snprintf(ws, sizeof(ws), "%u", window_s);
	if ((rc = db_exec(d, &res, err, "counting a request", sql, 2, p)) < 0)
		return rc;
	n = db_get_i64(res, 0, 0);
	left = db_get_i64(res, 0, 1);
	db_result_free(res);
	if (n <= (int64_t)limit) {
		out->admitted = true;
		return 0;
	}
	snprintf(out->refusal, sizeof(out->refusal), "%s", refusal);
	out->retry_after_s = left > 0 ? left : 1;
	if (n == (int64_t)limit + 1)
		return audit(d, "capture.refused", key,
			     json_pack("{s:s,s:i,s:i}", "reason", refusal, "limit", (int)limit,
				       "window_s", (int)window_s),
			     err);
	return 0;
}

/* ---- the per-host CPU profile lock ------------------------------------------- */

/* The lock's name: the one place its key comes from. */
static void host_lock_name(char *out, size_t n, const char *host)
{
	snprintf(out, n, "cpu-profile %s", host);
}

/*
 * A 64-bit key, in the one-number form of advisory locks (a key space of
 * its own): the named locks' 32-bit hashtext() made two hosts of one
 * /14 share a lock (10.1.249.30 and 10.3.128.254), one refused as busy
 * while the other was profiled.
 */
int capreq_host_lock(bool *got, db *d, const char *host, pr_error *err)
{
	char name[300];
	const char *p[1] = {name};
	struct pg_result *res = NULL;
	int rc;

	*got = false;
	host_lock_name(name, sizeof(name), host);
	if ((rc = db_exec(d, &res, err, "taking the host's profiling lock",
			  "select pg_try_advisory_lock(hashtextextended($1, 0))", 1, p)) < 0)
		return rc;
	*got = db_get_bool(res, 0, 0);
	db_result_free(res);
	return 0;
}

void capreq_host_unlock(db *d, const char *host)
{
	char name[300];
	const char *p[1] = {name};
	pr_error ignore = PR_ERROR_INIT;

	host_lock_name(name, sizeof(name), host);
	(void)db_exec(d, NULL, &ignore, "releasing the host's profiling lock",
		      "select pg_advisory_unlock(hashtextextended($1, 0))", 1, p);
}

/* ---- admission -------------------------------------------------------------- */

/* One number from a one-row query with parameters. */
static int one_i64(int64_t *v, db *d, const char *what, const char *sql, int np,
		   const char *const *p, pr_error *err)
{
	struct pg_result *res = NULL;
	int rc;

	if ((rc = db_exec(d, &res, err, what, sql, np, p)) < 0)
		return rc;
	*v = db_rows(res) ? db_get_i64(res, 0, 0) : 0;
	db_result_free(res);
	return 0;
}

int capreq_sessions_expire(size_t *n, db *d, pr_error *err)
{
	static const char sql[] =
		"update elevated_sessions set ended_at = expires_at, end_reason = 'expired'"
		" where ended_at is null and expires_at <= now()"
		" returning id, host, level, " DB_TS_TO_US("started_at") ", " DB_TS_TO_US(
			"expires_at");
	struct pg_result *res = NULL;
	int rc;

	*n = 0;
	if ((rc = db_exec(d, &res, err, "expiring elevated sessions", sql, 0, NULL)) < 0)
		return rc;
	for (int i = 0; i < db_rows(res) && rc == 0; i++) {
		char obj[300];
		snprintf(obj, sizeof(obj), "host:%s", db_get_text(res, i, 1));
		rc = audit(d, "session.expired", obj,
			   json_pack("{s:I,s:I,s:I}", "session", (json_int_t)db_get_i64(res, i, 0),
				     "level", (json_int_t)db_get_i64(res, i, 2), "lasted_s",
				     (json_int_t)((db_get_i64(res, i, 4) - db_get_i64(res, i, 3)) /
						  1000000)),
			   err);
		(*n)++;
	}
	db_result_free(res);
	return rc;
}

/* Why `host` may not be captured or elevated now, into out (refusal "" when it may). */
static int check_host(capreq_decision *out, db *d, const capreq_new *r, const char *host,
		      const config_serve *lim, pr_error *err)
{
	static const char busy[] = "select count(*) from capture_requests"
				   " where $1 = any(hosts) and state in ('queued', 'running')";
	/*
	 * Counted from when the request that captured the host ended, not
	 * from when it was queued: a request may wait in the queue, or reach
	 * a host late in a list of many, and the host must rest after its
	 * capture. A request still running makes the host busy (above).
	 */
	static const char cooling[] =
		"select coalesce(ceil(extract(epoch from"
		" max(coalesce(finished_at, started_at, created_at))"
		" + make_interval(secs => $2::int) - now())), 0)::bigint from capture_requests"
		" where $1 = any(hosts) and state <> 'refused'"
		" and coalesce(finished_at, started_at, created_at)"
		"   > now() - make_interval(secs => $2::int)";
	static const char open_here[] =
		"select count(*) from elevated_sessions where host = $1 and ended_at is null";
	static const char recent[] =
		"select coalesce(ceil(extract(epoch from max(started_at)"
		" + make_interval(secs => $2::int) - now())), 0)::bigint from elevated_sessions"
		" where host = $1 and started_at > now() - make_interval(secs => $2::int)";
	static const char svc_open[] = "select count(*) from elevated_sessions"
				       " where service_id = $1 and ended_at is null";
	static const char fleet_open[] =
		"select count(*) from elevated_sessions where ended_at is null";
	char cd[16], re[16], sid[24];
	const char *p[2] = {host, cd};
	int64_t v = 0;
	int rc;

	snprintf(cd, sizeof(cd), "%u", lim->host_cooldown_s);
	snprintf(re, sizeof(re), "%u", lim->reescalate_s);
	snprintf(sid, sizeof(sid), "%" PRId64, r->service_id);
#define REFUSE(why, after)                                                                         \
	do {                                                                                       \
		snprintf(out->refusal, sizeof(out->refusal), "%s", why);                           \
		snprintf(out->host, sizeof(out->host), "%s", host);                                \
		out->retry_after_s = (after);                                                      \
		return 0;                                                                          \
	} while (0)
	if (r->level > 0) {
		const char *q[2] = {host, re};
		if ((rc = one_i64(&v, d, "checking the host's session", open_here, 1, q, err)) < 0)
			return rc;
		if (v > 0)
			REFUSE("host_elevated", 0);
		if (lim->reescalate_s && (rc = one_i64(&v, d, "checking the host's last session",
						       recent, 2, q, err)) < 0)
			return rc;
		if (lim->reescalate_s && v > 0)
			REFUSE("reescalate", v);
		q[0] = sid;
		if ((rc = one_i64(&v, d, "counting the service's sessions", svc_open, 1, q, err)) <
		    0)
			return rc;
		if (v >= (int64_t)lim->max_sessions_service)
			REFUSE("service_cap", 0);
		if ((rc = one_i64(&v, d, "counting open sessions", fleet_open, 0, NULL, err)) < 0)
			return rc;
		if (v >= (int64_t)lim->max_sessions_fleet)
			REFUSE("fleet_cap", 0);
	}
	if ((rc = one_i64(&v, d, "checking the host's requests", busy, 1, p, err)) < 0)
		return rc;
	if (v > 0)
		REFUSE("host_busy", 0);
	/*
	 * Being CPU-profiled now, by collect or another server: a probe of
	 * its lock. An alert's capture is queued all the same, and taken
	 * once the profile has ended (capreq_defer): Alertmanager
	 * sends a firing alert again only after its repeat interval (hours),
	 * and the incident's capture would be lost with the refusal. A
	 * caller of the API is told and may ask again.
	 */
	if (strcmp(r->source, "alertmanager") != 0) {
		bool got = false;
		if ((rc = capreq_host_lock(&got, d, host, err)) < 0)
			return rc;
		if (!got)
			REFUSE("host_busy", 0);
		capreq_host_unlock(d, host);
	}
	if (lim->host_cooldown_s &&
	    (rc = one_i64(&v, d, "checking the host's cooldown", cooling, 2, p, err)) < 0)
		return rc;
	if (lim->host_cooldown_s && v > 0)
		REFUSE("host_cooldown", v);
#undef REFUSE
	return 0;
}

static json_t *request_json(const capreq_new *r)
{
	json_t *o = json_pack("{s:s,s:[],s:i,s:[],s:s,s:s,s:s?,s:i}", "service", r->service,
			      "hosts", "seconds", (int)r->seconds, "types", "reason", r->reason,
			      "source", r->source, "incident", r->incident, "level", r->level);

	if (!o)
		return NULL;
	for (size_t i = 0; i < r->nhosts; i++)
		json_array_append_new(json_object_get(o, "hosts"), json_string(r->hosts[i]));
	for (size_t i = 0; i < r->ntypes; i++)
		json_array_append_new(json_object_get(o, "types"), json_string(r->types[i]));
	if (r->token_id)
		json_object_set_new(o, "token", json_integer((json_int_t)r->token_id));
	if (r->count)
		json_object_set_new(o, "count", json_integer((json_int_t)r->count));
	return o;
}

/*
 * The hosts of `r` to take, into take[] (pointers into r->hosts): every
 * one, or the first r->count free candidates (their indexes in
 * out->picked); or a refusal in *out.
 */
static int pick_hosts(capreq_decision *out, const char **take, db *d, const capreq_new *r,
		      const config_serve *lim, pr_error *err)
{
	capreq_decision first, one;
	int rc;

	if (!r->count) {
		for (size_t i = 0; i < r->nhosts && !out->refusal[0]; i++) {
			if ((rc = check_host(out, d, r, r->hosts[i], lim, err)) < 0)
				return rc;
			take[i] = r->hosts[i];
		}
		return 0;
	}
	memset(&first, 0, sizeof(first));
	for (size_t i = 0; i < r->nhosts && i <= UINT16_MAX && out->npicked < r->count &&
			   out->npicked < CAPREQ_HOSTS_MAX;
	     i++) {
		memset(&one, 0, sizeof(one));
		if ((rc = check_host(&one, d, r, r->hosts[i], lim, err)) < 0)
			return rc;
		if (!one.refusal[0]) {
			take[out->npicked] = r->hosts[i];
			out->picked[out->npicked++] = (uint32_t)i;
		} else if (!first.refusal[0]) {
			first = one;
		} else if (one.retry_after_s > 0 &&
			   (first.retry_after_s == 0 || one.retry_after_s < first.retry_after_s)) {
			first.retry_after_s = one.retry_after_s;
		}
	}
	if (out->npicked)
		return 0;
	if (!first.refusal[0])
		snprintf(first.refusal, sizeof(first.refusal), "no_hosts");
	*out = first;
	return 0;
}

int capreq_admit(capreq_decision *out, db *d, const capreq_new *r, const config_serve *lim,
		 pr_error *err)
{
	static const char lock[] = "select pg_advisory_xact_lock(" ADMIT_LOCK ")";
	static const char insert[] =
		"insert into capture_requests (service_id, hosts, seconds, types, reason, source,"
		" incident, token_id, requested_by) values ($1, $2::text[], $3, $4::text[], $5, $6,"
		" $7, $8, $9) returning id";
	static const char set_incident[] =
		"update capture_requests set incident = 'req-' || id where id = $1";
	static const char open_session[] =
		"insert into elevated_sessions (service_id, host, level, source, reason, incident,"
		" expires_at) values ($1, $2, $3, $4, $5, $6,"
		" now() + make_interval(secs => $7::int))"
		" returning id";
	buf hosts = BUF_INIT, types = BUF_INIT;
	struct pg_result *res = NULL;
	char sid[24], secs[16], tok[24], lvl[8], smax[16], idtxt[24], obj[300];
	char incident[64];
	const char *take[CAPREQ_HOSTS_MAX];
	capreq_new rr = *r;
	bool began = false;
	size_t expired;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!r->count && r->nhosts > CAPREQ_HOSTS_MAX)
		return pr_error_set(err, PR_EUSAGE, "more than %d hosts in one request",
				    CAPREQ_HOSTS_MAX);
	snprintf(sid, sizeof(sid), "%" PRId64, r->service_id);
	snprintf(secs, sizeof(secs), "%u", r->seconds);
	snprintf(tok, sizeof(tok), "%" PRId64, r->token_id);
	snprintf(lvl, sizeof(lvl), "%d", r->level);
	snprintf(smax, sizeof(smax), "%u", lim->session_max_s);
	if ((rc = db_begin(d, err)) < 0)
		goto out;
	began = true;
	if ((rc = db_exec(d, NULL, err, "taking the admission lock", lock, 0, NULL)) < 0 ||
	    (rc = capreq_sessions_expire(&expired, d, err)) < 0)
		goto out;
	if ((rc = pick_hosts(out, take, d, r, lim, err)) < 0)
		goto out;
	rr.hosts = take;
	rr.nhosts = out->refusal[0] ? 0 : r->count ? out->npicked : r->nhosts;
	if (out->refusal[0]) {
		json_t *dj = request_json(r);
		json_object_set_new(dj, "refused", json_string(out->refusal));
		json_object_set_new(dj, "host", json_string(out->host));
		snprintf(obj, sizeof(obj), "service:%s", r->service);
		if ((rc = audit(d, "capture.refused", obj, dj, err)) < 0)
			goto out;
		rc = db_commit(d, err);
		began = false;
		goto out;
	}
	{
		const char *p[9];
		if (text_array(&hosts, rr.hosts, rr.nhosts) < 0 ||
		    text_array(&types, r->types, r->ntypes) < 0) {
			rc = oom(err);
			goto out;
		}
		p[0] = sid;
		p[1] = hosts.ptr;
		p[2] = secs;
		p[3] = types.ptr;
		p[4] = r->reason;
		p[5] = r->source;
		p[6] = r->incident;
		p[7] = r->token_id ? tok : NULL;
		p[8] = r->requested_by;
		if ((rc = db_exec(d, &res, err, "queueing a capture request", insert, 9, p)) < 0)
			goto out;
		out->id = db_get_i64(res, 0, 0);
		db_result_free(res);
		res = NULL;
	}
	snprintf(idtxt, sizeof(idtxt), "%" PRId64, out->id);
	snprintf(incident, sizeof(incident), "req-%" PRId64, out->id);
	if (!r->incident) {
		const char *p[1] = {idtxt};
		if ((rc = db_exec(d, NULL, err, "naming a request's incident", set_incident, 1,
				  p)) < 0)
			goto out;
	}
	for (size_t i = 0; r->level > 0 && i < rr.nhosts; i++) {
		const char *p[7] = {sid,       rr.hosts[i], lvl,
				    r->source, r->reason,   r->incident ? r->incident : incident,
				    smax};
		int64_t session;
		if ((rc = db_exec(d, &res, err, "opening an elevated session", open_session, 7,
				  p)) < 0)
			goto out;
		session = db_get_i64(res, 0, 0);
		db_result_free(res);
		res = NULL;
		snprintf(obj, sizeof(obj), "host:%s", rr.hosts[i]);
		if ((rc = audit(d, "session.escalated", obj,
				json_pack("{s:I,s:s,s:i,s:s,s:s,s:I,s:i}", "session",
					  (json_int_t)session, "service", r->service, "level",
					  r->level, "source", r->source, "incident",
					  r->incident ? r->incident : incident, "request",
					  (json_int_t)out->id, "expires_in_s",
					  (int)lim->session_max_s),
				err)) < 0)
			goto out;
	}
	snprintf(obj, sizeof(obj), "capture_request:%" PRId64, out->id);
	if ((rc = audit(d, "capture.requested", obj, request_json(&rr), err)) < 0)
		goto out;
	if ((rc = db_commit(d, err)) < 0)
		goto out;
	began = false;
	out->admitted = true;
out:
	if (began)
		db_rollback(d);
	if (rc < 0)
		out->admitted = false;
	db_result_free(res);
	buf_release(&hosts);
	buf_release(&types);
	return rc;
}

/* ---- the workers ------------------------------------------------------------ */

/*
 * A request admitted and waiting for a worker counts as well: collect
 * profiling the host meanwhile made the worker, when it came to it, find
 * the host's lock held and fail the capture the SRE had asked for. A
 * running one whose lease ran out, or one queued for over an hour, is a
 * dead server's: it counts no more (only a serve's claim gives it up or
 * runs it, and none may run again), or collect would skip the host for
 * good, saying nothing.
 */
int capreq_host_running(bool *running, db *d, const char *host, pr_error *err)
{
	static const char sql[] = "select count(*) from capture_requests"
				  " where $1 = any(hosts) and ((state = 'queued'"
				  " and created_at > now() - interval '1 hour')"
				  " or (state = 'running' and lease_until > now()))";
	const char *p[1] = {host};
	int64_t n = 0;
	int rc;

	*running = false;
	if ((rc = one_i64(&n, d, "checking the host's running requests", sql, 1, p, err)) < 0)
		return rc;
	*running = n > 0;
	return 0;
}

void capreq_claimed_release(capreq_claimed *c)
{
	free(c->service);
	strings_free(c->hosts, c->nhosts);
	strings_free(c->types, c->ntypes);
	free(c->reason);
	free(c->incident);
	memset(c, 0, sizeof(*c));
}

/*
 * Give up on the running requests whose lease ran out after
 * CAPREQ_MAX_ATTEMPTS claims: each attempt profiled its hosts again, and
 * a capture that always outlives its lease would otherwise be run by one
 * server after another for ever. Audited "capture.failed".
 */
static int give_up(db *d, pr_error *err)
{
	static const char sql[] =
		"update capture_requests set state = 'failed', finished_at = now(),"
		" lease_until = null, error = 'given up after ' || attempts || ' attempts:"
		" each outlived its lease (its server stopped or hung)'"
		" where state = 'running' and lease_until < now() and attempts >= $1::int"
		" returning id, worker, attempts, error";
	char max[16];
	const char *p[1] = {max};
	struct pg_result *res = NULL;
	int rc;

	snprintf(max, sizeof(max), "%d", CAPREQ_MAX_ATTEMPTS);
	if ((rc = db_exec(d, &res, err, "giving up on capture requests", sql, 1, p)) < 0)
		return rc;
	for (int i = 0; i < db_rows(res) && rc == 0; i++) {
		char obj[64];
		snprintf(obj, sizeof(obj), "capture_request:%" PRId64, db_get_i64(res, i, 0));
		rc = audit(d, "capture.failed", obj,
			   json_pack("{s:s,s:s?,s:I,s:s}", "state", "failed", "worker",
				     db_get_text(res, i, 1), "attempts",
				     (json_int_t)db_get_i64(res, i, 2), "error",
				     db_get_text(res, i, 3)),
			   err);
	}
	db_result_free(res);
	return rc;
}

int capreq_claim(capreq_claimed *out, bool *got, db *d, const char *worker, uint32_t lease_s,
		 pr_error *err)
{
	static const char sql[] =
		"update capture_requests r set state = 'running', started_at = now(),"
		" worker = $1, attempts = r.attempts + 1,"
		" lease_until = now() + make_interval(secs => $2::int)"
		" where r.id = (select id from capture_requests"
		"   where state = 'queued' or (state = 'running' and lease_until < now()"
		"     and attempts < $3::int)"
		"   order by id limit 1 for update skip locked)"
		" returning r.id, (select name from services s where s.id = r.service_id),"
		" r.hosts::text, r.seconds, r.types::text, r.reason, r.incident, r.attempts";
	char ls[16], max[16];
	const char *p[3] = {worker, ls, max};
	struct pg_result *res = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	*got = false;
	snprintf(ls, sizeof(ls), "%u", lease_s);
	snprintf(max, sizeof(max), "%d", CAPREQ_MAX_ATTEMPTS);
	if ((rc = give_up(d, err)) < 0)
		return rc;
	if ((rc = db_exec(d, &res, err, "claiming a capture request", sql, 3, p)) < 0)
		return rc;
	if (!db_rows(res))
		goto out;
	out->id = db_get_i64(res, 0, 0);
	out->seconds = (uint32_t)db_get_i64(res, 0, 3);
	out->attempt = (int)db_get_i64(res, 0, 7);
	if (!(out->service = strdup(db_get_text(res, 0, 1))) ||
	    !(out->reason = strdup(db_get_text(res, 0, 5))) ||
	    !(out->incident = strdup(db_get_text(res, 0, 6) ? db_get_text(res, 0, 6) : "")) ||
	    split_array(&out->hosts, &out->nhosts, db_get_text(res, 0, 2)) < 0 ||
	    split_array(&out->types, &out->ntypes, db_get_text(res, 0, 4)) < 0) {
		rc = oom(err);
		capreq_claimed_release(out);
		goto out;
	}
	*got = true;
out:
	db_result_free(res);
	return rc;
}

int capreq_renew(bool *kept, db *d, const capreq_claimed *q, const char *worker,
		 uint32_t lease_s, pr_error *err)
{
	static const char sql[] =
		"update capture_requests set lease_until = now() + make_interval(secs => $3::int)"
		" where id = $1 and worker = $2 and attempts = $4::int and state = 'running'"
		" returning id";
	char ids[24], ls[16], att[16];
	const char *p[4] = {ids, worker, ls, att};
	struct pg_result *res = NULL;
	int rc;

	*kept = false;
	snprintf(ids, sizeof(ids), "%" PRId64, q->id);
	snprintf(ls, sizeof(ls), "%u", lease_s);
	snprintf(att, sizeof(att), "%d", q->attempt);
	if ((rc = db_exec(d, &res, err, "renewing a capture request's lease", sql, 4, p)) < 0)
		return rc;
	*kept = db_rows(res) == 1;
	db_result_free(res);
	return 0;
}

int capreq_defer(bool *deferred, db *d, const capreq_claimed *q, const char *worker,
		 uint32_t after_s, uint32_t max_age_s, pr_error *err)
{
	static const char sql[] =
		"update capture_requests set lease_until = now() + make_interval(secs => $3::int),"
		" attempts = greatest(attempts - 1, 0)"
		" where id = $1 and worker = $2 and attempts = $4::int and state = 'running'"
		" and created_at > now() - make_interval(secs => $5::int) returning id";
	char ids[24], after[16], att[16], age[16];
	const char *p[5] = {ids, worker, after, att, age};
	struct pg_result *res = NULL;
	int rc;

	*deferred = false;
	snprintf(ids, sizeof(ids), "%" PRId64, q->id);
	snprintf(after, sizeof(after), "%u", after_s);
	snprintf(att, sizeof(att), "%d", q->attempt);
	snprintf(age, sizeof(age), "%u", max_age_s);
	if ((rc = db_exec(d, &res, err, "putting a capture request back", sql, 5, p)) < 0)
		return rc;
	*deferred = db_rows(res) == 1;
	db_result_free(res);
	return 0;
}

int capreq_finish(db *d, const capreq_claimed *q, const char *worker, bool ok,
		  const int64_t *captures, size_t ncaptures, const char *error, pr_error *err)
{
	static const char sql[] =
		"update capture_requests set state = $3, finished_at = now(), lease_until = null,"
		" capture_ids = $4::bigint[], error = $5"
		" where id = $1 and worker = $2 and attempts = $6::int and state = 'running'"
		" returning id";
	buf caps = BUF_INIT;
	char ids[24], obj[64], errtxt[1024], att[16];
	const char *p[6] = {ids, worker, ok ? "done" : "failed", NULL, NULL, att};
	struct pg_result *res = NULL;
	json_t *dj = NULL;
	int64_t id = q->id;
	int rc;

	snprintf(ids, sizeof(ids), "%" PRId64, id);
	snprintf(att, sizeof(att), "%d", q->attempt);
	if (ncaptures ? db_bigint_array(&caps, captures, ncaptures, sizeof(int64_t)) < 0
		      : buf_puts(&caps, "{}") < 0)
		return oom(err);
	p[3] = caps.ptr;
	if (error) {
		snprintf(errtxt, sizeof(errtxt), "%s", error);
		p[4] = errtxt;
	}
	if ((rc = db_exec(d, &res, err, "finishing a capture request", sql, 6, p)) < 0)
		goto out;
	/* Another worker holds it now: its outcome is that worker's to record. */
	if (db_rows(res) != 1) {
		rc = pr_error_set(err, PR_ENOTFOUND,
				  "capture request %" PRId64 " is no longer held by worker '%s': "
				  "its lease ran out and another worker claimed it",
				  id, worker);
		goto out;
	}
	snprintf(obj, sizeof(obj), "capture_request:%" PRId64, id);
	dj = json_pack("{s:s,s:s,s:s?}", "state", p[2], "captures", caps.ptr, "error", p[4]);
	rc = audit(d, ok ? "capture.done" : "capture.failed", obj, dj, err);
out:
	db_result_free(res);
	buf_release(&caps);
	return rc;
}

int capreq_get(json_t **out, db *d, int64_t id, pr_error *err)
{
	static const char sql[] =
		"select r.id, s.name, coalesce(s.team, ''), r.hosts::text, r.seconds,"
		" r.types::text, r.reason, r.source, r.incident, r.state, "
		DB_TS_TO_US("r.created_at") ", coalesce(" DB_TS_TO_US("r.started_at") ", 0),"
		" coalesce(" DB_TS_TO_US("r.finished_at") ", 0), r.capture_ids::text, r.error"
		" from capture_requests r join services s on s.id = r.service_id"
		" where r.id = $1";
	char ids[24];
	const char *p[1] = {ids};
	struct pg_result *res = NULL;
	char **hosts = NULL, **types = NULL, **caps = NULL;
	size_t nh = 0, nt = 0, nc = 0;
	json_t *o = NULL, *a;
	int rc;

	*out = NULL;
	snprintf(ids, sizeof(ids), "%" PRId64, id);
	if ((rc = db_exec(d, &res, err, "reading a capture request", sql, 1, p)) < 0)
		return rc;
	if (!db_rows(res)) {
		rc = pr_error_set(err, PR_ENOTFOUND, "capture request %" PRId64 ": no such request",
				  id);
		goto out;
	}
	if (split_array(&hosts, &nh, db_get_text(res, 0, 3)) < 0 ||
	    split_array(&types, &nt, db_get_text(res, 0, 5)) < 0 ||
	    split_array(&caps, &nc, db_get_text(res, 0, 13)) < 0 ||
	    !(o = json_pack(
		      "{s:I,s:s,s:s,s:i,s:s,s:s,s:s?,s:s,s:I,s:I,s:I,s:s?}", "id", (json_int_t)id,
		      "service", db_get_text(res, 0, 1), "team", db_get_text(res, 0, 2), "seconds",
		      (int)db_get_i64(res, 0, 4), "reason", db_get_text(res, 0, 6), "source",
		      db_get_text(res, 0, 7), "incident", db_get_text(res, 0, 8), "state",
		      db_get_text(res, 0, 9), "created_us", (json_int_t)db_get_i64(res, 0, 10),
		      "started_us", (json_int_t)db_get_i64(res, 0, 11), "finished_us",
		      (json_int_t)db_get_i64(res, 0, 12), "error", db_get_text(res, 0, 14)))) {
		rc = oom(err);
		goto out;
	}
	json_object_set_new(o, "hosts", a = json_array());
	for (size_t i = 0; i < nh; i++)
		json_array_append_new(a, json_string(hosts[i]));
	json_object_set_new(o, "types", a = json_array());
	for (size_t i = 0; i < nt; i++)
		json_array_append_new(a, json_string(types[i]));
	json_object_set_new(o, "captures", a = json_array());
	for (size_t i = 0; i < nc; i++)
		json_array_append_new(a, json_integer(strtoll(caps[i], NULL, 10)));
	*out = o;
	o = NULL;
out:
	json_decref(o);
	strings_free(hosts, nh);
	strings_free(types, nt);
	strings_free(caps, nc);
	db_result_free(res);
	return rc;
}

/* End the sessions on `host` of `source`, of service `sid` unless it is NULL. */
static int sessions_end(size_t *ended, db *d, const char *host, const char *source, const char *sid,
			const char *why, pr_error *err)
{
	static const char sql[] = "update elevated_sessions set ended_at = now(), end_reason = $3"
				  " where host = $1 and source = $2 and ended_at is null"
				  " and ($4::bigint is null or service_id = $4::bigint)"
				  " returning id, level";
	const char *p[4] = {host, source, why, sid};
	struct pg_result *res = NULL;
	char obj[300];
	int rc;

	*ended = 0;
	if ((rc = db_exec(d, &res, err, "ending elevated sessions", sql, 4, p)) < 0)
		return rc;
	snprintf(obj, sizeof(obj), "host:%s", host);
	for (int i = 0; i < db_rows(res) && rc == 0; i++) {
		rc = audit(d,
			   strcmp(why, "resolved") == 0 ? "session.resolved"
							: "session.deescalated",
			   obj,
			   json_pack("{s:I,s:I,s:s}", "session", (json_int_t)db_get_i64(res, i, 0),
				     "level", (json_int_t)db_get_i64(res, i, 1), "source", source),
			   err);
		(*ended)++;
	}
	db_result_free(res);
	return rc;
}

int capreq_sessions_end(size_t *ended, db *d, const char *host, const char *source, const char *why,
			pr_error *err)
{
	return sessions_end(ended, d, host, source, NULL, why, err);
}

int capreq_sessions_end_of(size_t *ended, db *d, const char *host, const char *source,
			   int64_t service_id, const char *why, pr_error *err)
{
	char sid[24];

	snprintf(sid, sizeof(sid), "%" PRId64, service_id);
	return sessions_end(ended, d, host, source, sid, why, err);
}

int capreq_counts(json_t **states, int64_t *sessions, db *d, pr_error *err)
{
	static const char by_state[] =
		"select state, count(*) from capture_requests group by state order by state";
	static const char open[] = "select count(*) from elevated_sessions"
				   " where ended_at is null and expires_at > now()";
	struct pg_result *res = NULL;
	int rc;

	*states = NULL;
	*sessions = 0;
	if ((rc = db_exec(d, &res, err, "counting capture requests", by_state, 0, NULL)) < 0)
		return rc;
	if (!(*states = json_object())) {
		db_result_free(res);
		return oom(err);
	}
	for (int i = 0; i < db_rows(res); i++)
		json_object_set_new(*states, db_get_text(res, i, 0),
				    json_integer((json_int_t)db_get_i64(res, i, 1)));
	db_result_free(res);
	return one_i64(sessions, d, "counting open sessions", open, 0, NULL, err);
}

/* ---- sessions escalate follows ------------------------------------------------ */

int capreq_session_find(capreq_session *out, bool *open, db *d, const char *host,
			pr_error *err)
{
	/* clang-format off */
	static const char sql[] =
		"select id, level, source, coalesce(incident, ''), service_id,"
		" " DB_TS_TO_US("started_at") ", " DB_TS_TO_US("expires_at")
		" from elevated_sessions where host = $1 and ended_at is null";
	/* clang-format on */
	const char *p[1] = {host};
	struct pg_result *res = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	*open = false;
	if ((rc = db_exec(d, &res, err, "reading the host's session", sql, 1, p)) < 0)
		return rc;
	if (db_rows(res)) {
		*open = true;
		out->id = db_get_i64(res, 0, 0);
		out->level = (int)db_get_i64(res, 0, 1);
		snprintf(out->source, sizeof(out->source), "%s", db_get_text(res, 0, 2));
		snprintf(out->incident, sizeof(out->incident), "%s", db_get_text(res, 0, 3));
		out->service_id = db_get_i64(res, 0, 4);
		out->started_us = db_get_i64(res, 0, 5);
		out->expires_us = db_get_i64(res, 0, 6);
	}
	db_result_free(res);
	return 0;
}

int capreq_session_level(bool *moved, db *d, int64_t id, const char *host, int level,
			 const char *why, pr_error *err)
{
	static const char sql[] =
		"update elevated_sessions n set level = $2 from elevated_sessions o"
		" where n.id = $1 and o.id = n.id and n.ended_at is null returning o.level";
	char ids[24], lvl[8], obj[300];
	const char *p[2] = {ids, lvl};
	struct pg_result *res = NULL;
	int rc;

	*moved = false;
	snprintf(ids, sizeof(ids), "%" PRId64, id);
	snprintf(lvl, sizeof(lvl), "%d", level);
	if ((rc = db_exec(d, &res, err, "moving a session's level", sql, 2, p)) < 0)
		return rc;
	if (db_rows(res)) {
		*moved = true;
		snprintf(obj, sizeof(obj), "host:%s", host);
		rc = audit(d, "session.level", obj,
			   json_pack("{s:I,s:I,s:i,s:s}", "session", (json_int_t)id, "from",
				     (json_int_t)db_get_i64(res, 0, 0), "to", level, "why", why),
			   err);
	}
	db_result_free(res);
	return rc;
}
