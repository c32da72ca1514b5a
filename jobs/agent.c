/*
 * agent.c: the snapshot agent and the client that asks it (see agent.h).
 *
 * One libmicrohttpd daemon with its own polling thread answers every
 * request, one at a time; the snapshot is taken on that thread
 * (snapshot_run lowers and restores that thread's priority only). The
 * calling thread waits for the stop flag.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/agent.h"
#include "common/buf.h"
#include "common/fileio.h"
#include "common/netaddr.h"
#include "jobs/connguard.h"
#include "jobs/secret.h"
#include "jobs/snapshot.h"
#include "pipeline/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

/* A request body at most: a host, an incident, a reason, a service. */
#define BODY_MAX 4096
/* Bytes of a body past BODY_MAX read and dropped before its connection is closed. */
#define BODY_DROP_MAX ((size_t)64 << 10)
/*
 * The connection guard's limits (connguard.h). The agent's one caller is
 * profreg serve, one request at a time: a few connections from one
 * address are plenty, and no one without the secret may hold the rest.
 */
#define CONNECTIONS_MAX 64
#define CONNECTIONS_PER_ADDR 8
/* A request's head and body arrive within this, or its connection is closed. */
#define REQUEST_DEADLINE_MS 30000
#define REFUSALS_MAX 8

typedef struct agent {
	const job_env *env;
	const agent_opts *o;
	unsigned char secret_sha[32];
	char self[SNAPSHOT_HOST_MAX + 1];
	pthread_mutex_t note_mu;
	connguard guard;    /* who may hold the connections (the polling thread's alone) */
	struct {
		const char *reason;   /* a string of connguard's; NULL: a free slot */
		uint64_t n;
	} refusals[REFUSALS_MAX]; /* the polling thread's alone */
	agent_result *out;
} agent;

typedef struct conn {
	buf body;
	size_t received;   /* bytes of the body so far, kept or not */
	bool too_big;
} conn;

static void note(agent *a, const char *msg)
{
	pthread_mutex_lock(&a->note_mu);
	job_note(&a->out->notes, "%s", msg);
	pthread_mutex_unlock(&a->note_mu);
}

/* Counts a refusal of the connection guard (or the agent's own), for /metrics. */
static void refused(void *cls, const char *reason)
{
	agent *a = cls;

	for (size_t i = 0; i < REFUSALS_MAX; i++)
		if (!a->refusals[i].reason || strcmp(a->refusals[i].reason, reason) == 0) {
			a->refusals[i].reason = reason;
			a->refusals[i].n++;
			return;
		}
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, json_t *o,
			     int64_t retry_after)
{
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	struct MHD_Response *r;
	enum MHD_Result ret;
	char ra[24];

	json_decref(o);
	if (!text)
		return MHD_NO;
	r = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "application/json");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	if (retry_after > 0) {
		snprintf(ra, sizeof(ra), "%" PRId64, retry_after);
		MHD_add_response_header(r, "Retry-After", ra);
	}
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(r, "WWW-Authenticate", "Bearer realm=\"profreg-agent\"");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_error(struct MHD_Connection *c, unsigned status, const char *why,
				   int64_t retry_after)
{
	return reply(c, status, json_pack("{s:s}", "error", why), retry_after);
}

static int sha256(unsigned char out[32], const char *s, size_t n)
{
	unsigned len = 0;

	return EVP_Digest(s, n, out, &len, EVP_sha256(), NULL) && len == 32 ? 0 : -1;
}

/* Whether the request carries the secret; compared as SHA-256 in constant time. */
static bool authorized(agent *a, struct MHD_Connection *c)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	unsigned char md[32];
	bool ok;

	if (!h || strncmp(h, "Bearer ", 7) != 0 || sha256(md, h + 7, strlen(h + 7)) < 0)
		return false;
	ok = CRYPTO_memcmp(md, a->secret_sha, sizeof(md)) == 0;
	secret_wipe(md, sizeof(md));
	return ok;
}

/* A printable string of 1 to max bytes (no control characters, no NUL). */
static bool printable(const json_t *v, size_t max)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);

	if (!s || n == 0 || n > max || strlen(s) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

/* "" or why the body is refused (422). */
static void check_body(char *why, size_t n, const json_t *o)
{
	const char *key;
	json_t *v;

	why[0] = '\0';
	if (!json_is_object(o)) {
		snprintf(why, n, "the body is not a JSON object");
		return;
	}
	json_object_foreach((json_t *)o, key, v)
	{
		if (strcmp(key, "host") && strcmp(key, "incident") && strcmp(key, "reason") &&
		    strcmp(key, "service") && strcmp(key, "trigger")) {
			snprintf(why, n, "unknown key '%.40s'", key);
			return;
		}
	}
	if (!printable(json_object_get(o, "host"), SNAPSHOT_HOST_MAX))
		snprintf(why, n, "'host' is required: a host name");
	else if ((v = json_object_get(o, "incident")) && !printable(v, SNAPSHOT_INCIDENT_MAX))
		snprintf(why, n, "'incident' must be 1 to %d printable bytes",
			 SNAPSHOT_INCIDENT_MAX);
	else if ((v = json_object_get(o, "reason")) && !printable(v, SNAPSHOT_REASON_MAX))
		snprintf(why, n, "'reason' must be 1 to %d printable bytes", SNAPSHOT_REASON_MAX);
	else if ((v = json_object_get(o, "service")) &&
		 (!json_is_string(v) || !db_service_name_valid(json_string_value(v))))
		snprintf(why, n, "'service' is not a service name");
	else if ((v = json_object_get(o, "trigger")) &&
		 (!printable(v, 32) || strspn(json_string_value(v), "abcdefghijklmnopqrstuvwxyz") !=
					       json_string_length(v)))
		snprintf(why, n, "'trigger' must be 1 to 32 lower-case letters");
}

/*
 * 403 for a host that is not this one, naming every name the agent answers
 * to: its host name and each --name. Naming the host name alone sent the
 * operator looking for a mismatch where an alias was the one meant.
 */
static enum MHD_Result refuse_host(const agent *a, struct MHD_Connection *c)
{
	buf why = BUF_INIT;
	enum MHD_Result ret;
	int rc = buf_printf(&why, "this agent takes snapshots of host '%s' only", a->self);

	for (size_t i = 0; rc == 0 && i < a->o->nnames; i++)
		rc = buf_printf(&why, "%s'%s'", i ? ", " : ", also named ", a->o->names[i]);
	ret = reply_error(c, 403,
			  rc == 0 ? why.ptr : "this agent takes snapshots of its own host only", 0);
	buf_release(&why);
	return ret;
}

/* Whether `host` names this host: its host name or one of its --name. */
static bool own_host(const agent *a, const char *host)
{
	if (strcmp(host, a->self) == 0)
		return true;
	for (size_t i = 0; i < a->o->nnames; i++)
		if (strcmp(host, a->o->names[i]) == 0)
			return true;
	return false;
}

/* Seconds until this host's cooldown ends (from its last stored snapshot); 0: unknown. */
static int64_t cooldown_left(agent *a)
{
	snapshot_filter f = {a->self, NULL, NULL, 0, 0, 1};
	json_t *list = NULL;
	pr_error err = PR_ERROR_INIT;
	int64_t left = 0;

	if (snapshot_list(&list, a->env->d, &f, &err) == 0 && json_array_size(list) == 1) {
		int64_t last = json_integer_value(
			json_object_get(json_array_get(list, 0), "taken_at_us"));
		left = (last + (int64_t)a->env->cfg->snapshot.cooldown_s * 1000000 -
			job_now(a->env) + 999999) /
		       1000000;
	}
	json_decref(list);
	return left > 0 ? left : 0;
}

static enum MHD_Result post_snapshot(agent *a, struct MHD_Connection *c, const conn *st)
{
	snapshot_opts so;
	snapshot_result res;
	json_t *body = NULL;
	json_error_t jerr;
	pr_error err = PR_ERROR_INIT;
	enum MHD_Result ret;
	char why[300];
	int rc;

	memset(&res, 0, sizeof(res));
	if (!authorized(a, c))
		return reply_error(c, 401, "the agent's bearer secret is required", 0);
	if (st->too_big)
		return reply_error(c, 413, "the body is larger than 4096 bytes", 0);
	if (!(body = json_loadb(st->body.ptr ? st->body.ptr : "", st->body.len,
				JSON_REJECT_DUPLICATES, &jerr))) {
		snprintf(why, sizeof(why), "the body is not JSON: %s at byte %d",
			 pr_json_reason(jerr.text), jerr.position);
		return reply_error(c, 422, why, 0);
	}
	if (check_body(why, sizeof(why), body), why[0]) {
		ret = reply_error(c, 422, why, 0);
		goto out;
	}
	if (!own_host(a, json_string_value(json_object_get(body, "host")))) {
		ret = refuse_host(a, c);
		goto out;
	}
	memset(&so, 0, sizeof(so));
	so.incident = json_string_value(json_object_get(body, "incident"));
	so.reason = json_string_value(json_object_get(body, "reason"));
	so.service = json_string_value(json_object_get(body, "service"));
	so.trigger = json_object_get(body, "trigger")
			     ? json_string_value(json_object_get(body, "trigger"))
			     : "agent";
	so.cooldown_us = (int64_t)a->env->cfg->snapshot.cooldown_s * 1000000;
	rc = snapshot_run(&res, a->env, &so, &err);
	if (rc == 0) {
		a->out->taken++;
		ret = reply(c, 201,
			    json_pack("{s:I,s:s,s:b,s:I,s:I}", "id", (json_int_t)res.id, "host",
				      a->self, "existed", res.existed, "bytes",
				      (json_int_t)res.a.data.len, "not_collected",
				      (json_int_t)res.a.not_collected),
			    0);
	} else if (rc == PR_EREFUSED) {
		ret = reply_error(c, 409, err.msg, cooldown_left(a));
	} else if (rc == PR_ELOCKED) {
		ret = reply_error(c, 409, err.msg, 5);
	} else if (rc == PR_EUSAGE) {
		ret = reply_error(c, 422, err.msg, 0);
	} else {
		note(a, err.msg);
		ret = reply_error(c, 503, err.msg, 5);
	}
out:
	snapshot_result_release(&res);
	json_decref(body);
	return ret;
}

/*
 * GET /metrics: requests answered, snapshots taken and refusals by
 * reason, so that a flood of connections is seen on the host.
 */
static enum MHD_Result get_metrics(agent *a, struct MHD_Connection *c)
{
	buf b = BUF_INIT;
	struct MHD_Response *r;
	enum MHD_Result ret;

	buf_printf(&b,
		   "# HELP profreg_agent_requests_total HTTP requests answered.\n"
		   "# TYPE profreg_agent_requests_total counter\n"
		   "profreg_agent_requests_total %" PRIu64 "\n"
		   "# HELP profreg_agent_snapshots_total Snapshots taken and stored.\n"
		   "# TYPE profreg_agent_snapshots_total counter\n"
		   "profreg_agent_snapshots_total %" PRIu64 "\n"
		   "# HELP profreg_agent_refusals_total Connections and requests refused, by "
		   "reason.\n# TYPE profreg_agent_refusals_total counter\n",
		   a->out->requests, a->out->taken);
	for (size_t i = 0; i < REFUSALS_MAX && a->refusals[i].reason; i++)
		buf_printf(&b, "profreg_agent_refusals_total{reason=\"%s\"} %" PRIu64 "\n",
			   a->refusals[i].reason, a->refusals[i].n);
	if (!b.ptr || !(r = MHD_create_response_from_buffer(b.len, b.ptr, MHD_RESPMEM_MUST_COPY))) {
		buf_release(&b);
		return MHD_NO;
	}
	buf_release(&b);
	MHD_add_response_header(r, "Content-Type", "text/plain; version=0.0.4");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	ret = MHD_queue_response(c, 200, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result dispatch(void *cls, struct MHD_Connection *c, const char *url,
				const char *method, const char *version, const char *upload,
				size_t *upload_size, void **state)
{
	agent *a = cls;
	conn *st = *state;
	const char *bad;

	(void)version;
	if (!st) {
		if (!(st = calloc(1, sizeof(*st))))
			return MHD_NO;
		buf_init(&st->body, BODY_MAX);
		*state = st;
		/* Answered before the body is read: the connection closes after it. */
		if ((bad = connguard_framing(&a->guard, c))) {
			char why[120];
			a->out->requests++;
			snprintf(why, sizeof(why), "the request has %s", bad);
			return reply_error(c, 400, why, 0);
		}
		return MHD_YES;
	}
	if (*upload_size) {
		size_t n = *upload_size;
		*upload_size = 0;
		/*
		 * The agent answers one request at a time on one thread: a body
		 * that trickles in, or that never ends (chunked, past the cap),
		 * would hold it, so such a connection is closed.
		 */
		if (connguard_late(&a->guard, c))
			return MHD_NO;
		st->received += n;
		if (!st->too_big && buf_put(&st->body, upload, n) < 0)
			st->too_big = true;
		if (st->too_big && st->received > BODY_MAX + BODY_DROP_MAX) {
			refused(a, "too_large");
			return MHD_NO;
		}
		return MHD_YES;
	}
	connguard_arrived(&a->guard, c);
	a->out->requests++;
	if (strcmp(url, "/v1/snapshots") == 0)
		return strcmp(method, "POST") == 0 ? post_snapshot(a, c, st)
						   : reply_error(c, 405, "use POST", 0);
	if (strcmp(url, "/healthz") == 0)
		return reply(c, 200, json_pack("{s:s}", "status", "ok"), 0);
	if (strcmp(url, "/metrics") == 0)
		return get_metrics(a, c);
	return reply_error(c, 404, "no such endpoint", 0);
}

/*
 * The daemon's handler. While it runs, the polling thread reads no
 * connection: the guard's deadlines do not count that time (connguard.h).
 */
static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **state)
{
	agent *a = cls;
	enum MHD_Result ret;

	connguard_enter(&a->guard);
	ret = dispatch(cls, c, url, method, version, upload, upload_size, state);
	connguard_leave(&a->guard);
	return ret;
}

static void done(void *cls, struct MHD_Connection *c, void **state,
		 enum MHD_RequestTerminationCode why)
{
	conn *st = *state;
	agent *a = cls;

	(void)why;
	connguard_answered(&a->guard, c);
	if (st) {
		buf_release(&st->body);
		free(st);
	}
	*state = NULL;
}

int agent_run(agent_result *out, const job_env *env, const agent_opts *o, pr_error *err)
{
	const config_serve *cfg = &env->cfg->serve;
	struct sockaddr_storage ss;
	struct MHD_Daemon *daemon = NULL;
	const union MHD_DaemonInfo *info;
	char *secret = NULL;
	agent a;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&a, 0, sizeof(a));
	a.env = env;
	a.o = o;
	a.out = out;
	pthread_mutex_init(&a.note_mu, NULL);
	if (!cfg->agent_secret_env && !cfg->agent_secret_file) {
		rc = pr_error_set(err, PR_EUSAGE,
				  "serve --agent needs a secret: set serve.agent_secret_env or "
				  "serve.agent_secret_file in the config");
		goto out;
	}
	if ((rc = secret_read(&secret, cfg->agent_secret_env, cfg->agent_secret_file, err)) < 0)
		goto out;
	if (sha256(a.secret_sha, secret, strlen(secret)) < 0) {
		rc = pr_error_set(err, PR_ERR, "cannot hash the agent secret: libcrypto failed");
		goto out;
	}
	if ((rc = snapshot_hostname(a.self, err)) < 0 ||
	    (rc = netaddr_parse_listen(&ss, o->listen, err)) < 0)
		goto out;
	if ((rc = connguard_init(&a.guard, CONNECTIONS_MAX, CONNECTIONS_PER_ADDR,
				 REQUEST_DEADLINE_MS, refused, &a, err)) < 0)
		goto out;
	daemon = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0), 0,
		connguard_accept, &a.guard, handle, &a, MHD_OPTION_SOCK_ADDR,
		(struct sockaddr *)&ss, MHD_OPTION_NOTIFY_COMPLETED, done, &a,
		MHD_OPTION_NOTIFY_CONNECTION, connguard_notify, &a.guard,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_CONNECTION_LIMIT,
		connguard_mhd_limit(&a.guard), MHD_OPTION_CONNECTION_MEMORY_LIMIT,
		(size_t)(32 * 1024), MHD_OPTION_END);
	if (!daemon || !(info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT))) {
		rc = pr_error_set(err, PR_EIO, "cannot listen on '%.100s': %s", o->listen,
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
	while (!*o->stop) {
		struct timespec ts = {0, 100 * 1000000L};
		nanosleep(&ts, NULL);
	}
out:
	if (daemon)
		MHD_stop_daemon(daemon);
	connguard_release(&a.guard);
	secret_free(secret);
	secret_wipe(a.secret_sha, sizeof(a.secret_sha));
	pthread_mutex_destroy(&a.note_mu);
	return rc;
}

void agent_result_release(agent_result *r)
{
	job_notes_release(&r->notes);
	memset(r, 0, sizeof(*r));
}

int agent_ask(agent_answer *out, const char *url, const char *secret, const char *host,
	      const char *incident, const char *reason, const char *service, uint32_t timeout_ms,
	      pr_error *err)
{
	static const char *const headers[] = {"Content-Type: application/json", NULL};
	http_req req;
	http_response resp;
	buf full = BUF_INIT, auth = BUF_INIT;
	json_t *body = NULL, *ans = NULL;
	char *text = NULL;
	size_t n = strlen(url);
	int rc;

	memset(out, 0, sizeof(*out));
	http_response_init(&resp);
	while (n > 0 && url[n - 1] == '/')
		n--;
	if (buf_put(&full, url, n) < 0 || buf_puts(&full, "/v1/snapshots") < 0 ||
	    buf_printf(&auth, "Bearer %s", secret) < 0 ||
	    !(body = json_pack("{s:s,s:s?,s:s?,s:s?,s:s}", "host", host, "incident", incident,
			       "reason", reason, "service", service, "trigger",
			       "alertmanager")) ||
	    !(text = json_dumps(body, JSON_COMPACT))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	if (!secret_url_safe(full.ptr)) {
		char safe[160];
		http_redact_url(safe, sizeof(safe), full.ptr);
		rc = pr_error_set(err, PR_EUSAGE,
				  "agent '%s': the secret would travel in cleartext: use https, "
				  "or http to a loopback address",
				  safe);
		goto out;
	}
	memset(&req, 0, sizeof(req));
	req.method = HTTP_POST;
	req.url = full.ptr;
	req.headers = headers;
	req.secret_header = "Authorization";
	req.secret_value = auth.ptr;
	req.body = text;
	req.body_len = strlen(text);
	req.timeout_ms = timeout_ms;
	req.connect_timeout_ms = 5000;
	req.max_body = 16384;
	req.prefix_only = true;
	if ((rc = http_request(&resp, &req, err)) < 0)
		goto out;
	out->status = resp.status;
	out->retry_after_s = resp.retry_after_ms > 0 ? (resp.retry_after_ms + 999) / 1000 : 0;
	ans = json_loadb(resp.body.ptr ? resp.body.ptr : "", resp.body.len, 0, NULL);
	if (resp.status == 201 && json_is_integer(json_object_get(ans, "id")))
		out->snapshot_id = (int64_t)json_integer_value(json_object_get(ans, "id"));
	else
		snprintf(out->why, sizeof(out->why), "%s",
			 json_string_value(json_object_get(ans, "error"))
				 ? json_string_value(json_object_get(ans, "error"))
				 : "no error message");
	/* http_request masks what is not 2xx; a 2xx that is not 201 is quoted too. */
	http_mask_secrets(out->why, &req);
out:
	secret_wipe(auth.ptr, auth.len);
	buf_release(&auth);
	buf_release(&full);
	free(text);
	json_decref(body);
	json_decref(ans);
	http_response_release(&resp);
	return rc;
}
