/*
 * collect.c: the collect job (see collect.h). It owns the table
 * collect_slots.
 *
 * One collection: for each service, plan its units (a pprof_http target
 * and profile type in the current slot, a Pyroscope or Parca slot and
 * profile type), drop those already recorded, then run them. Requests
 * run on threads (at most max_concurrent_fleet at once) and do nothing
 * but HTTP; this thread schedules them under the caps and the cooldown,
 * and ingests and records each result as it comes back, so the database
 * connection is only ever used here.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/collect.h"
#include "common/buf.h"
#include "common/redact.h"
#include "common/timeutil.h"
#include "common/utf8.h"
#include "common/wipe.h"
#include "jobs/blobs.h"
#include "jobs/capreq.h"
#include "jobs/deploys.h"
#include "jobs/runs.h"
#include "jobs/secret.h"
#include "pipeline/blob_s3.h"
#include "pipeline/format.h"
#include "pipeline/gunzip.h"
#include "pipeline/http.h"
#include "pipeline/parca.h"
#include "pipeline/pprof_http.h"
#include "pipeline/pyroscope.h"
#include "pipeline/targets.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DAY_US (86400LL * 1000000LL)
/* How many failures the one-line summary of a service names. */
#define SUMMARY_FAILURES 3
/* What a CPU profile's request adds to the timeout, beyond its seconds. */
#define CPU_MARGIN_MS 5000u

/* ---- units of work ------------------------------------------------------- */

enum { T_PENDING, T_RUNNING, T_DONE, T_FINISHED };

/* One profile a unit brought back: a Pyroscope unit may split by release. */
typedef struct piece {
	char *release; /* from the source's label, or NULL */
	source_fetched got;
} piece;

typedef struct unit {
	size_t svc; /* index into the run's services */
	const config_source *src;
	const config_profile *prof;
	char source_key[1100]; /* collect_slots.source */
	char target[2100];     /* collect_slots.target: host:port or the query */
	char display[600];     /* in messages: where it came from */
	char host[300];        /* the profiled host (pprof_http), "" else */
	char *label_release, *label_commit, *label_host; /* a target's labels */
	int64_t start_us, end_us;                        /* the slot */
	int64_t taken_us; /* when the request started: a live capture's time */
	bool cpu;
	uint32_t seconds; /* a CPU profile's length (pprof_http) */
	int64_t capture;  /* finish_unit: the capture stored or found, 0 when none */
	int state;
	unsigned attempts;
	int64_t not_before_us; /* monotonic-clock microseconds */
	int64_t deadline_us;   /* the collection budget's end (mono_us): no request after it */
	bool host_locked;      /* holds the host's CPU profile lock (capreq_host_lock) */
	bool held_elsewhere;   /* last found its host profiled by another process */
	pthread_t thread;
	/* the request, set up before the thread starts */
	source_http http;
	/* the outcome, written by the thread */
	int rc;
	pr_error err;
	bool retry;
	int64_t retry_after_ms;
	piece *pieces;
	size_t npieces;
} unit;

typedef struct svc_state {
	const db_service *svc;
	const config_service *cs;
	unsigned cap, running;
	source_report rep;
	json_t *failures;
	json_t *waiting; /* drops whose sidecar is not there yet: {source, target, reason} */
	size_t requests, empty, skipped, deferred, not_tried;
	char **secrets; /* per source: the auth header value, or NULL */
	size_t nsecrets;
} svc_state;

typedef struct run_state {
	const job_env *env;
	const collect_opts *o;
	int64_t since_us, until_us, now_us;
	svc_state *svcs;
	size_t nsvcs;
	unit *units;
	size_t nunits, cap;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned running;
	/* hosts being CPU-profiled or cooling down: host -> not before (mono us) */
	char **hosts;
	int64_t *host_free;
	bool *host_busy;
	size_t nhosts;
	json_t *plan;
	int64_t deadline_us; /* mono_us() when the collection budget runs out */
} run_state;

static int64_t mono_us(void)
{
	return (int64_t)(time_mono() * 1e6);
}

/* Free what a request brought back; the unit can be tried again. */
static void unit_drop_pieces(unit *u)
{
	for (size_t i = 0; i < u->npieces; i++) {
		free(u->pieces[i].release);
		source_fetched_release(&u->pieces[i].got);
	}
	free(u->pieces);
	u->pieces = NULL;
	u->npieces = 0;
}

static void unit_release(unit *u)
{
	free(u->label_release);
	free(u->label_commit);
	free(u->label_host);
	u->label_release = u->label_commit = u->label_host = NULL;
	unit_drop_pieces(u);
}

static int oom(pr_error *err)
{
	return pr_error_set(err, PR_ENOMEM, "out of memory");
}

static unit *unit_new(run_state *rs, pr_error *err)
{
	if (rs->nunits == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 64;
		unit *v = realloc(rs->units, cap * sizeof(*v));
		if (!v) {
			oom(err);
			return NULL;
		}
		rs->units = v;
		rs->cap = cap;
	}
	memset(&rs->units[rs->nunits], 0, sizeof(unit));
	return &rs->units[rs->nunits++];
}

/* ---- secrets ------------------------------------------------------------- */

/* "Bearer <token>" or "Basic <base64(user:password)>", in a new string. */
static int auth_value(char **out, const config_source *src, pr_error *err)
{
	char *secret = NULL, *joined = NULL, *enc = NULL;
	size_t n, elen;
	int rc;

	*out = NULL;
	if (!src->secret_env && !src->secret_file)
		return 0;
	if ((rc = secret_read(&secret, src->secret_env, src->secret_file, err)) < 0)
		return rc;
	if (!src->basic) {
		buf b = BUF_INIT;
		buf_init(&b, SECRET_MAX + 16);
		if (buf_grow(&b, strlen(secret) + 8) < 0 || buf_puts(&b, "Bearer ") < 0 ||
		    buf_puts(&b, secret) < 0 || !(*out = buf_detach(&b, NULL)))
			rc = oom(err);
		goto out;
	}
	n = strlen(src->username) + 1 + strlen(secret);
	elen = 4 * ((n + 2) / 3) + 1;
	if (!(joined = malloc(n + 1)) || !(enc = malloc(elen + 6))) {
		rc = oom(err);
		goto out;
	}
	snprintf(joined, n + 1, "%s:%s", src->username, secret);
	memcpy(enc, "Basic ", 6);
	EVP_EncodeBlock((unsigned char *)enc + 6, (const unsigned char *)joined, (int)n);
	*out = enc;
	enc = NULL;
out:
	if (joined)
		wipe_free(joined);
	if (enc)
		wipe_free(enc);
	secret_free(secret);
	return rc;
}

/* ---- collect_slots (this module's table) ---------------------------------- */

/*
 * Whether the unit's slot is already taken. A host's regular slot is also
 * taken by a deploy capture of the same host and type made within it: the
 * host was profiled minutes ago, and profiling it again would only make it
 * wait out its cooldown and cost it a second profile.
 */
static int slot_known(bool *known, db *d, int64_t sid, const unit *u, pr_error *err)
{
	static const char sql[] =
		"select 1 from collect_slots where service_id = $1 and target = $3"
		"   and profile_type = $4"
		"   and ((source = $2 and slot_start = " DB_US_TO_TS("$5") ")"
		"        or ($6 and source like 'pprof\\_http deploy %'"
		"            and outcome in ('stored', 'already')"
		"            and fetched_at >= " DB_US_TO_TS("$5")
		"            and fetched_at < " DB_US_TO_TS("$7") "))"
		" limit 1";
	char id[24], start[24], end[24];
	bool regular = u->src->kind == CONFIG_SRC_PPROF_HTTP &&
		       strcmp(u->source_key, "pprof_http") == 0;
	const char *p[7] = {id, u->source_key, u->target, u->prof->type, start,
			    regular ? "true" : "false", end};
	struct pg_result *res = NULL;
	int rc;

	snprintf(id, sizeof(id), "%" PRId64, sid);
	snprintf(start, sizeof(start), "%" PRId64, u->start_us);
	snprintf(end, sizeof(end), "%" PRId64, u->end_us);
	if ((rc = db_exec(d, &res, err, "reading collected slots", sql, 7, p)) < 0)
		return rc;
	*known = db_rows(res) > 0;
	db_result_free(res);
	return 0;
}

static int slot_record(db *d, int64_t sid, const unit *u, const char *outcome, int64_t capture,
		       pr_error *err)
{
	static const char sql[] =
		"insert into collect_slots (service_id, source, target, profile_type, slot_start,"
		" slot_end, host, outcome, capture_id)"
		" values ($1, $2, $3, $4, " DB_US_TO_TS("$5") ", " DB_US_TO_TS(
			"$6") ", $7, $8, $9)"
			      " on conflict do nothing";
	char id[24], start[24], end[24], cap[24];
	const char *p[9] = {id,
			    u->source_key,
			    u->target,
			    u->prof->type,
			    start,
			    end,
			    u->cpu && u->host[0] ? u->host : NULL,
			    outcome,
			    capture ? cap : NULL};

	snprintf(id, sizeof(id), "%" PRId64, sid);
	snprintf(start, sizeof(start), "%" PRId64, u->start_us);
	snprintf(end, sizeof(end), "%" PRId64, u->end_us);
	snprintf(cap, sizeof(cap), "%" PRId64, capture);
	return db_exec(d, NULL, err, "recording a collected slot", sql, 9, p);
}

/*
 * How long `host` still cools down after its last CPU profile (any
 * service, any run), into *left_us, 0 when it does not. Computed by the
 * database from its own clock, which wrote fetched_at: this machine's
 * clock may differ from it, and the difference would shorten or stretch
 * the cooldown.
 */
static int host_cooling(int64_t *left_us, db *d, const char *host, int64_t cooldown_us,
			pr_error *err)
{
	static const char sql[] =
		"select coalesce(floor(extract(epoch from max(fetched_at)"
		" + make_interval(secs => $2::float8) - now()) * 1000000), 0)::bigint"
		" from collect_slots where profile_type = 'cpu' and host = $1";
	char cd[32];
	const char *p[2] = {host, cd};
	struct pg_result *res = NULL;
	int rc;

	snprintf(cd, sizeof(cd), "%.6f", (double)cooldown_us / 1e6);
	if ((rc = db_exec(d, &res, err, "reading the last CPU profile of a host", sql, 2, p)) < 0)
		return rc;
	*left_us = db_rows(res) ? db_get_i64(res, 0, 0) : 0;
	if (*left_us < 0)
		*left_us = 0;
	db_result_free(res);
	return 0;
}

/* ---- planning ------------------------------------------------------------ */

static void failure(svc_state *s, const char *source, const char *target, const char *type,
		    const char *reason)
{
	char *fixed = strdup(reason);
	json_t *f;

	/*
	 * A reason names the file or object that failed, and whoever writes
	 * to a drop folder or bucket names those: "pay-4111...-jane@example.com"
	 * reached runs, reports and cron mail. Its card numbers, addresses,
	 * IBANs and key ids are cut as a profile's names are.
	 */
	if (fixed) {
		fixed[redact_names(fixed, strlen(fixed))] = '\0';
		reason = fixed;
	}
	/*
	 * jansson refuses a string that is not UTF-8, and the failure would
	 * be counted but never named: a reason cut inside a letter (a key or
	 * a server's message shown up to a length) keeps its bytes as '?'.
	 */
	if (fixed && !utf8_valid(fixed, strlen(fixed))) {
		size_t n = strlen(fixed), l;
		for (size_t i = 0; i < n; i += l ? l : 1)
			if (!(l = utf8_seq_len((const unsigned char *)fixed + i, n - i)))
				fixed[i] = '?';
	}
	f = json_pack("{s:s,s:s,s:s?,s:s}", "source", source, "target", target, "type", type,
		      "reason", reason);
	if (f)
		json_array_append_new(s->failures, f);
	s->rep.failed++;
	free(fixed);
}

static const char *kind_name(config_source_kind k)
{
	static const char *const names[] = {"dir", "pprof_http", "pyroscope", "parca",
					    "s3_prefix"};
	return names[k];
}

/* The host part of "host:port" (no brackets for IPv6). */
static void host_of(char *out, size_t n, const char *address)
{
	const char *end = strrchr(address, ':');
	const char *start = address;

	if (address[0] == '[') {
		start = address + 1;
		end = strchr(address, ']');
	}
	snprintf(out, n, "%.*s", (int)(end ? end - start : (long)strlen(start)), start);
}

static int64_t floor_to(int64_t t, int64_t step)
{
	return t - ((t % step) + step) % step;
}

/* Add the unit unless its slot was collected before. */
static int plan_unit(run_state *rs, unit *u, pr_error *err)
{
	svc_state *s = &rs->svcs[u->svc];
	bool known = false;
	char from[TIME_FMT_MAX], to[TIME_FMT_MAX];
	int rc;

	if ((rc = slot_known(&known, rs->env->d, s->svc->id, u, err)) < 0)
		return rc;
	if (known) {
		s->skipped++;
		unit_release(u);
		rs->nunits--;
		return 0;
	}
	if (rs->plan) {
		time_format(from, u->start_us);
		time_format(to, u->end_us);
		json_array_append_new(
			rs->plan,
			json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:i}", "service", s->svc->name,
				  "source", kind_name(u->src->kind), "target",
				  u->src->kind == CONFIG_SRC_PPROF_HTTP ? u->target : u->display,
				  "type", u->prof->type, "start", from, "end", to, "requests",
				  u->src->kind == CONFIG_SRC_PYROSCOPE && u->src->version_label
					  ? 2
					  : 1));
	}
	s->requests++;
	return 0;
}

/*
 * The targets of pprof_http source `src` (with the labels it names) into
 * *tl: its static targets, then those of each file_sd file in turn. A bad
 * file (unreadable, or not the format) adds none of its targets and is
 * passed to bad(ctx, its one-line message), and the files after it are
 * still read: one file that a deploy tool left half-written must not hide
 * the hosts that the other files list. Returns < 0 only when memory ran
 * out.
 */
static int source_targets(target_list *tl, const config_source *src,
			  void (*bad)(void *ctx, const char *msg), void *ctx, pr_error *err)
{
	target_labels names = {src->release_label ? src->release_label : "release",
			       src->commit_label ? src->commit_label : "commit",
			       src->host_label ? src->host_label : "host"};
	pr_error terr = PR_ERROR_INIT;
	int rc = 0;

	/* The configuration checked each address: only the target cap stops these. */
	for (size_t i = 0; rc == 0 && i < src->ntargets; i++)
		rc = targets_add(tl, src->targets[i], &terr);
	if (rc < 0 && rc != PR_ENOMEM) {
		bad(ctx, terr.msg);
		pr_error_clear(&terr);
		rc = 0;
	}
	for (size_t i = 0; rc == 0 && i < src->nfile_sd; i++)
		if ((rc = targets_load_file_sd(tl, src->file_sd[i], &names, &terr)) < 0 &&
		    rc != PR_ENOMEM) {
			bad(ctx, terr.msg);
			/* A record keeps only its first error: empty it for the next file. */
			pr_error_clear(&terr);
			rc = 0;
		}
	return rc < 0 ? pr_error_set(err, rc, "%s", terr.msg) : 0;
}

/* A bad file_sd file of a source being planned: one failure of the service. */
typedef struct plan_bad {
	svc_state *s;
	const char *label;
} plan_bad;

static void plan_bad_file(void *ctx, const char *msg)
{
	plan_bad *b = ctx;

	failure(b->s, "pprof_http", b->label, NULL, msg);
}

static int plan_pprof_http(run_state *rs, size_t si, const config_source *src, size_t srcno,
			   pr_error *err)
{
	svc_state *s = &rs->svcs[si];
	plan_bad bad = {s, src->label};
	target_list tl = {0};
	int64_t slot = floor_to(rs->now_us, src->slot_us);
	int rc = 0;

	/* A live endpoint has only the present: nothing for a window that is over. */
	if (rs->until_us < slot)
		goto out;
	if ((rc = source_targets(&tl, src, plan_bad_file, &bad, err)) < 0)
		goto out;
	for (size_t t = 0; t < tl.n; t++) {
		char base[600];
		snprintf(base, sizeof(base), "%s://%s/", src->scheme ? src->scheme : "http",
			 tl.v[t].address);
		/* Plain http to a host that is not loopback would carry the secret in the clear. */
		if ((src->secret_env || src->secret_file) && !secret_url_safe(base)) {
			char why[800];
			snprintf(why, sizeof(why),
				 "target '%s': not contacted: its credentials would "
				 "cross the network in cleartext (use \"scheme\": \"https\")",
				 tl.v[t].address);
			failure(s, "pprof_http", tl.v[t].address, NULL, why);
			continue;
		}
		for (size_t p = 0; p < src->nprofiles; p++) {
			unit *u = unit_new(rs, err);
			char url[600];
			pprof_http_req pr;
			if (!u) {
				rc = PR_ENOMEM;
				goto out;
			}
			u->svc = si;
			u->src = src;
			u->prof = &src->profiles[p];
			u->cpu = strcmp(u->prof->type, "cpu") == 0;
			snprintf(u->source_key, sizeof(u->source_key), "pprof_http%s%.200s",
				 rs->o->deploy_release ? " deploy " : "",
				 rs->o->deploy_release ? rs->o->deploy_release : "");
			snprintf(u->target, sizeof(u->target), "%s", tl.v[t].address);
			host_of(u->host, sizeof(u->host), tl.v[t].address);
			memset(&pr, 0, sizeof(pr));
			pr.scheme = src->scheme ? src->scheme : "http";
			pr.address = tl.v[t].address;
			pr.what = u->prof->id;
			pr.seconds = src->seconds;
			u->seconds = src->seconds;
			pprof_http_url(url, sizeof(url), &pr);
			snprintf(u->display, sizeof(u->display), "%s", url);
			u->start_us = slot;
			u->end_us = slot + src->slot_us;
			if ((tl.v[t].release && !(u->label_release = strdup(tl.v[t].release))) ||
			    (tl.v[t].commit && !(u->label_commit = strdup(tl.v[t].commit))) ||
			    (tl.v[t].host && !(u->label_host = strdup(tl.v[t].host)))) {
				rc = oom(err);
				goto out;
			}
			(void)srcno;
			if ((rc = plan_unit(rs, u, err)) < 0)
				goto out;
		}
	}
out:
	target_list_release(&tl);
	return rc;
}

static int plan_slots(run_state *rs, size_t si, const config_source *src, pr_error *err)
{
	char shown[320];
	int64_t first = floor_to(rs->since_us, src->slot_us);
	int rc;

	http_redact_url(shown, sizeof(shown), src->url);
	for (size_t p = 0; p < src->nprofiles; p++)
		for (int64_t t = first; t + src->slot_us <= rs->until_us; t += src->slot_us) {
			unit *u;
			char when[TIME_FMT_MAX];
			/* Only whole slots: a slot still running would be stored half. */
			if (t + src->slot_us > rs->now_us)
				break;
			if (!(u = unit_new(rs, err)))
				return PR_ENOMEM;
			u->svc = si;
			u->src = src;
			u->prof = &src->profiles[p];
			u->start_us = t;
			u->end_us = t + src->slot_us;
			snprintf(u->source_key, sizeof(u->source_key), "%s %s",
				 kind_name(src->kind), shown);
			snprintf(u->target, sizeof(u->target), "%s%s",
				 src->kind == CONFIG_SRC_PARCA ? u->prof->id : "", src->selector);
			time_format(when, t);
			snprintf(u->display, sizeof(u->display), "%s '%s' %s %s",
				 kind_name(src->kind), shown, u->prof->type, when);
			if ((rc = plan_unit(rs, u, err)) < 0)
				return rc;
		}
	return 0;
}

/* ---- the requests (on their own threads) --------------------------------- */

static int piece_add(unit *u, const char *release)
{
	piece *v = realloc(u->pieces, (u->npieces + 1) * sizeof(*v));

	if (!v)
		return PR_ENOMEM;
	u->pieces = v;
	memset(&v[u->npieces], 0, sizeof(*v));
	source_fetched_init(&v[u->npieces].got);
	if (release && !(v[u->npieces].release = strdup(release)))
		return PR_ENOMEM;
	u->npieces++;
	return 0;
}

static void fetch_pyroscope(unit *u)
{
	const config_source *src = u->src;
	pyroscope_query q = {src->url,           src->tenant,      u->prof->id, src->selector,
			     u->start_us / 1000, u->end_us / 1000, u->http};
	char **vals = NULL;
	size_t nvals = 0;

	if (src->version_label && (u->rc = pyroscope_label_values(&vals, &nvals, &u->retry, &q,
								  src->version_label, &u->err)) < 0)
		return;
	for (size_t i = 0; i < (nvals ? nvals : 1) && u->rc == 0; i++) {
		char *sel = NULL;
		pyroscope_query qi = q;
		if (nvals &&
		    !(sel = pyroscope_selector_with(src->selector, src->version_label, vals[i]))) {
			u->rc = pr_error_set(&u->err, PR_EUSAGE,
					     "%s: selector '%.200s' does not "
					     "end in '}'",
					     u->display, src->selector);
			break;
		}
		if (sel)
			qi.selector = sel;
		/* One request a version: the budget is checked before each. */
		if (nvals && !http_cut_to_deadline(u->deadline_us, &qi.http.timeout_ms, NULL)) {
			u->rc = pr_error_set(&u->err, PR_ELIMIT,
					     "%s: %zu of %zu versions not fetched: the collection "
					     "budget ran out",
					     u->display, nvals - i, nvals);
			free(sel);
			break;
		}
		if (piece_add(u, nvals ? vals[i] : NULL) < 0)
			u->rc = oom(&u->err);
		else
			u->rc = pyroscope_fetch(&u->pieces[u->npieces - 1].got, &qi, &u->err);
		u->retry = u->rc < 0 && u->pieces && u->pieces[u->npieces - 1].got.retry;
		if (u->retry)
			u->retry_after_ms = u->pieces[u->npieces - 1].got.retry_after_ms;
		free(sel);
	}
	for (size_t i = 0; i < nvals; i++)
		free(vals[i]);
	free(vals);
}

/* The request of a unit, on the calling thread. */
static void fetch_unit(unit *u)
{
	if (u->src->kind == CONFIG_SRC_PPROF_HTTP) {
		pprof_http_req r = {u->src->scheme ? u->src->scheme : "http", u->target,
				    u->prof->id, u->seconds, u->http};
		if (piece_add(u, NULL) < 0) {
			u->rc = oom(&u->err);
		} else {
			u->rc = pprof_http_fetch(&u->pieces[0].got, &r, &u->err);
			u->retry = u->pieces[0].got.retry;
			u->retry_after_ms = u->pieces[0].got.retry_after_ms;
		}
	} else if (u->src->kind == CONFIG_SRC_PYROSCOPE) {
		fetch_pyroscope(u);
	} else {
		char query[2100];
		parca_query q = {u->src->url, query, u->start_us / 1000, u->end_us / 1000, u->http};
		snprintf(query, sizeof(query), "%s", u->target);
		if (piece_add(u, NULL) < 0) {
			u->rc = oom(&u->err);
		} else {
			u->rc = parca_fetch(&u->pieces[0].got, &q, &u->err);
			u->retry = u->pieces[0].got.retry;
			u->retry_after_ms = u->pieces[0].got.retry_after_ms;
		}
	}
}

static void *fetch_thread(void *arg)
{
	run_state *rs = ((void **)arg)[0];
	unit *u = ((void **)arg)[1];

	free(arg);
	fetch_unit(u);
	pthread_mutex_lock(&rs->mu);
	u->state = T_DONE;
	pthread_cond_signal(&rs->cv);
	pthread_mutex_unlock(&rs->mu);
	return NULL;
}

/* ---- release attribution ------------------------------------------------- */

typedef struct attribution {
	const char *release, *commit;
	const char *from; /* "label", "deploy", "none" */
} attribution;

static bool hex_sha(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n < 4 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/*
 * The rule of collect.h for a capture of `u`: a live one (pprof_http)
 * at the moment it was taken, a slot over [start, end).
 */
static void attribute(attribution *a, const run_state *rs, const deploy *deps, size_t ndeps,
		      const unit *u, const piece *pc)
{
	const char *label = pc->release ? pc->release : u->label_release;
	bool live = u->src->kind == CONFIG_SRC_PPROF_HTTP;
	int64_t at = live ? u->taken_us : u->start_us, end = live ? u->taken_us : u->end_us;
	const deploy *best = NULL;
	bool inside = false;

	a->release = "unknown";
	a->commit = NULL;
	a->from = "none";
	/*
	 * Pyroscope series without the version label beside labelled ones
	 * (pyroscope_series_values' ""): pods of a release from before the
	 * label, most often, which the latest deploy would have named the
	 * new one, mixing the old code into the release being judged.
	 */
	if (pc->release && !pc->release[0]) {
		a->from = "unlabelled";
		return;
	}
	if (label) {
		a->release = label;
		a->commit = u->label_commit && hex_sha(u->label_commit) ? u->label_commit
			    : pc->release && hex_sha(pc->release)       ? pc->release
									: NULL;
		a->from = "label";
		return;
	}
	/* deploys are newest first */
	for (size_t i = 0; i < ndeps; i++) {
		if (deps[i].deployed_at_us > at && deps[i].deployed_at_us < end)
			inside = true;
		if (!best && deps[i].deployed_at_us <= at)
			best = &deps[i];
	}
	if (rs->o->deploy_release) {
		int64_t d = rs->o->deploy_at_us;
		if (d > at && d < end)
			inside = true;
		else if (d <= at && (!best || d >= best->deployed_at_us) && !inside) {
			a->release = rs->o->deploy_release;
			a->commit = rs->o->deploy_commit;
			a->from = "deploy";
			return;
		}
	}
	/* A slot with a deploy inside holds two releases: neither can be claimed. */
	if (inside || !best)
		return;
	a->release = best->release;
	a->commit = best->commit_sha[0] ? best->commit_sha : NULL;
	a->from = "deploy";
}

/* ---- results, on this thread ---------------------------------------------- */

/*
 * A live capture's time (collect_opts.live_in_window): when it was taken,
 * or LIVE_SLACK_US before the night's end when taken after it, so that
 * the night that collected it judges it. Not at the end itself: the next
 * night, started a second early, would find it less than a night old and
 * count it in its own look. Never when a deploy of the service lies
 * within its warm-up of that time or after it: the warm-up is judged by
 * when captures were taken, and moved back a capture would fall into it.
 */
#define LIVE_SLACK_US (15 * 60 * 1000000LL)

static int64_t live_stamp(const run_state *rs, const svc_state *s, const deploy *deps, size_t ndeps,
			  int64_t taken)
{
	int64_t at = rs->o->until_us - LIVE_SLACK_US;
	int64_t warmup = config_warmup_of(rs->env->cfg, s->cs);

	if (!rs->o->live_in_window || rs->o->until_us <= 0 || taken <= rs->o->until_us)
		return taken;
	for (size_t i = 0; i < ndeps; i++)
		if (deps[i].deployed_at_us > at - warmup && deps[i].deployed_at_us <= taken)
			return taken;
	return at;
}

/*
 * Whether a piece's bytes, or the profile they gunzip to, hold the
 * credentials the unit's request sent: a source (or a proxy before it)
 * that echoes the request into a function name or a label would have
 * them stored, in the blob and the rows, and shown in every report. A
 * body that does not gunzip is left to ingest, which says why.
 */
static bool piece_holds_secret(const unit *u, const piece *pc, const profile_limits *lim)
{
	const uint8_t *p = (const uint8_t *)pc->got.body.ptr;
	size_t n = pc->got.body.len;
	http_req req;
	buf plain = BUF_INIT;
	pr_error ignore = PR_ERROR_INIT;
	bool held;

	if (!u->http.auth_header || !u->http.auth_value)
		return false;
	memset(&req, 0, sizeof(req));
	req.secret_header = u->http.auth_header;
	req.secret_value = u->http.auth_value;
	held = http_holds_secret(p, n, &req);
	if (!held && format_is_gzip(p, n) &&
	    gunzip_bounded(&plain, p, n, lim->max_decompressed_bytes, "", &ignore) == 0)
		held = http_holds_secret(plain.ptr, plain.len, &req);
	wipe_mem(plain.ptr, plain.len);
	buf_release(&plain);
	return held;
}

/* Ingest what a finished unit brought back, record its slot; < 0 only on infra. */
static int finish_unit(run_state *rs, unit *u, const deploy *deps, size_t ndeps, pr_error *err)
{
	svc_state *s = &rs->svcs[u->svc];
	const job_env *env = rs->env;
	const char *outcome = "empty";
	int64_t capture = 0;
	bool all_ok = true;

	if (u->rc < 0) {
		/* Which of the source's requests failed: its profile type, a query's slot. */
		char why[PR_ERROR_MSG_MAX + 120], when[TIME_FMT_MAX] = "";
		if (u->src->kind == CONFIG_SRC_PYROSCOPE || u->src->kind == CONFIG_SRC_PARCA)
			time_format(when, u->start_us);
		snprintf(why, sizeof(why), "%s%s%s: %s", u->prof->type, when[0] ? " slot " : "",
			 when, u->err.msg);
		failure(s, kind_name(u->src->kind), u->target, u->prof->type, why);
		return 0;
	}
	for (size_t i = 0; i < u->npieces; i++) {
		piece *pc = &u->pieces[i];
		ingest_request req;
		ingest_result res;
		attribution a;
		pr_error ierr = PR_ERROR_INIT;
		char tags[400];

		if (pc->got.empty) {
			s->empty++;
			continue;
		}
		attribute(&a, rs, deps, ndeps, u, pc);
		if (rs->o->incident)
			snprintf(tags, sizeof(tags),
				 "{\"incident\":\"%s\",\"release_from\":\"%s\",\"source\":\"%s\"}",
				 rs->o->incident, a.from, kind_name(u->src->kind));
		else
			snprintf(tags, sizeof(tags), "{\"release_from\":\"%s\",\"source\":\"%s\"}",
				 a.from, kind_name(u->src->kind));
		memset(&req, 0, sizeof(req));
		req.display = u->display;
		req.service = s->svc->name;
		req.release = a.release;
		req.commit = a.commit;
		req.host = u->label_host ? u->label_host : u->host[0] ? u->host : NULL;
		req.time_us = u->src->kind == CONFIG_SRC_PPROF_HTTP
				      ? live_stamp(rs, s, deps, ndeps, u->taken_us)
				      : u->start_us;
		req.type = u->prof->type;
		req.tags_json = tags;
		req.format = PROFILE_FMT_PPROF;
		if (piece_holds_secret(u, pc, &env->cfg->limits)) {
			char why[sizeof(u->display) + 80];

			snprintf(why, sizeof(why),
				 "%s: the profile holds the credentials this source sends: "
				 "not stored",
				 u->display);
			failure(s, kind_name(u->src->kind), u->target, u->prof->type, why);
			all_ok = false;
			continue;
		}
		if (source_ingest_bytes(&res, env->d, env->bs, &req, pc->got.body.ptr,
					pc->got.body.len, &env->cfg->limits, &ierr) < 0) {
			if (res.infra || ierr.code == PR_ENOMEM)
				return pr_error_set(err, ierr.code, "%s", ierr.msg);
			failure(s, kind_name(u->src->kind), u->target, u->prof->type, ierr.msg);
			all_ok = false;
			continue;
		}
		/* Bytes retention deleted are not stored again: the slot is done all the same. */
		if (res.retention_deleted)
			s->rep.deleted++;
		else if (res.already)
			s->rep.already++;
		else
			s->rep.stored++;
		outcome = (res.already || res.retention_deleted) && strcmp(outcome, "stored") != 0
				  ? "already"
				  : "stored";
		capture = u->npieces == 1 ? res.capture_id : 0;
		u->capture = res.capture_id;
	}
	/* Recorded once every piece is in: a piece that failed is fetched again next time. */
	return all_ok ? slot_record(env->d, s->svc->id, u, outcome, capture, err) : 0;
}

/* ---- scheduling ------------------------------------------------------------ */

static size_t host_index(run_state *rs, const char *host)
{
	for (size_t i = 0; i < rs->nhosts; i++)
		if (strcmp(rs->hosts[i], host) == 0)
			return i;
	return SIZE_MAX;
}

/* Track every CPU host of the plan with when it may be profiled again. */
static int load_hosts(run_state *rs, pr_error *err)
{
	int64_t cooldown = rs->env->cfg->collect.cooldown_us, mono = mono_us();
	int rc;

	for (size_t i = 0; i < rs->nunits; i++) {
		unit *u = &rs->units[i];
		int64_t left = 0;
		if (!u->cpu || !u->host[0] || host_index(rs, u->host) != SIZE_MAX)
			continue;
		if ((rc = host_cooling(&left, rs->env->d, u->host, cooldown, err)) < 0)
			return rc;
		{
			char **h = realloc(rs->hosts, (rs->nhosts + 1) * sizeof(*h));
			int64_t *f;
			bool *b;
			if (h)
				rs->hosts = h;
			f = h ? realloc(rs->host_free, (rs->nhosts + 1) * sizeof(*f)) : NULL;
			if (f)
				rs->host_free = f;
			b = f ? realloc(rs->host_busy, (rs->nhosts + 1) * sizeof(*b)) : NULL;
			if (b)
				rs->host_busy = b;
			if (!b || !(rs->hosts[rs->nhosts] = strdup(u->host)))
				return oom(err);
		}
		/* The database's time left becomes a deadline on this machine's monotonic clock. */
		rs->host_free[rs->nhosts] = left ? mono + left : 0;
		rs->host_busy[rs->nhosts] = false;
		rs->nhosts++;
	}
	return 0;
}

/* Set up a unit's request: its limits, its credentials, its time. */
static void unit_prepare(run_state *rs, unit *u)
{
	svc_state *s = &rs->svcs[u->svc];
	size_t k = (size_t)(u->src - s->cs->sources);

	unit_drop_pieces(u);
	u->rc = 0;
	pr_error_clear(&u->err);
	u->retry = false;
	u->retry_after_ms = -1;
	memset(&u->http, 0, sizeof(u->http));
	u->http.ca_file = u->src->ca_file;
	if (k < s->nsecrets && s->secrets[k]) {
		u->http.auth_header = "Authorization";
		u->http.auth_value = s->secrets[k];
	}
	u->http.connect_timeout_ms = u->src->connect_timeout_ms;
	u->http.timeout_ms = u->src->timeout_ms + (u->cpu && u->src->kind == CONFIG_SRC_PPROF_HTTP
							   ? u->seconds * 1000 + CPU_MARGIN_MS
							   : 0);
	u->http.max_bytes = rs->env->cfg->limits.max_input_bytes;
	u->deadline_us = rs->deadline_us;
	u->taken_us = time_now_us();
	u->attempts++;
}

/* Start a unit's request on its own thread. */
static int start_unit(run_state *rs, unit *u, pr_error *err)
{
	void **arg = malloc(2 * sizeof(*arg));
	svc_state *s = &rs->svcs[u->svc];

	if (!arg)
		return oom(err);
	unit_prepare(rs, u);
	u->state = T_RUNNING;
	arg[0] = rs;
	arg[1] = u;
	if (pthread_create(&u->thread, NULL, fetch_thread, arg) != 0) {
		free(arg);
		u->state = T_PENDING;
		return pr_error_set(err, PR_ERR, "cannot start a request thread: %s",
				    strerror(errno));
	}
	s->running++;
	rs->running++;
	if (u->cpu && u->host[0])
		rs->host_busy[host_index(rs, u->host)] = true;
	return 0;
}

/*
 * Whether a pending unit may start now; *wait_us how long until it might
 * (0: never in this run, cooldown past the deadline).
 */
static bool may_start(run_state *rs, const unit *u, int64_t now, int64_t deadline, int64_t *wait_us)
{
	const svc_state *s = &rs->svcs[u->svc];

	*wait_us = 50000;
	if (u->not_before_us > now) {
		*wait_us = u->not_before_us - now;
		return false;
	}
	if (s->running >= s->cap || rs->running >= rs->env->cfg->collect.max_concurrent_fleet)
		return false;
	if (u->cpu && u->host[0]) {
		size_t h = host_index(rs, u->host);
		if (rs->host_busy[h])
			return false;
		if (rs->host_free[h] > now) {
			*wait_us = rs->host_free[h] > deadline ? 0 : rs->host_free[h] - now;
			return false;
		}
	}
	return true;
}

/* Join a finished request; retry, or hand its result on. */
static int harvest(run_state *rs, unit *u, int64_t deadline, const deploy *const *deps,
		   const size_t *ndeps, pr_error *err)
{
	svc_state *s = &rs->svcs[u->svc];
	const config_collect *cc = &rs->env->cfg->collect;
	int64_t now;
	int rc = 0;

	pthread_join(u->thread, NULL);
	s->running--;
	rs->running--;
	if (u->host_locked) {
		capreq_host_unlock(rs->env->d, u->host);
		u->host_locked = false;
	}
	now = mono_us();
	if (u->cpu && u->host[0]) {
		size_t h = host_index(rs, u->host);
		rs->host_busy[h] = false;
		/* A request that reached the host counts for its cooldown. */
		if (u->rc == 0 || u->retry)
			rs->host_free[h] = now + cc->cooldown_us;
	}
	if (u->rc < 0 && u->retry && u->attempts <= cc->retries) {
		int64_t wait = cc->retry_us << (u->attempts - 1);
		if (u->retry_after_ms >= 0 && u->retry_after_ms * 1000 > wait)
			wait = u->retry_after_ms * 1000;
		/* A busy CPU profiler is free again once the running profile ends. */
		if (u->cpu && u->src->kind == CONFIG_SRC_PPROF_HTTP && u->host[0])
			rs->host_free[host_index(rs, u->host)] = now + wait;
		if (now + wait < deadline) {
			u->not_before_us = now + wait;
			u->state = T_PENDING;
			unit_drop_pieces(u);
			return 0;
		}
	}
	rc = finish_unit(rs, u, deps[u->svc], ndeps[u->svc], err);
	unit_drop_pieces(u);
	u->state = T_FINISHED;
	return rc;
}

/*
 * Whether no other process is profiling the unit's host: no capture
 * request of serve runs on it, and its CPU profile lock is free, which
 * the unit then holds (u->host_locked) until harvest.
 */
static int host_claim(bool *free_now, run_state *rs, unit *u, pr_error *err)
{
	bool running = false, got = false;
	int rc;

	*free_now = true;
	if (!u->cpu || !u->host[0])
		return 0;
	if ((rc = capreq_host_running(&running, rs->env->d, u->host, err)) < 0)
		return rc;
	if (!running && (rc = capreq_host_lock(&got, rs->env->d, u->host, err)) < 0)
		return rc;
	if (got) {
		/*
		 * Another process (serve, another collection) may have profiled
		 * the host since the run looked: its cooldown counts from that
		 * profile, read under the lock, where no new one can start.
		 */
		int64_t left = 0;
		if ((rc = host_cooling(&left, rs->env->d, u->host,
				       rs->env->cfg->collect.cooldown_us, err)) < 0) {
			capreq_host_unlock(rs->env->d, u->host);
			return rc;
		}
		if (left > 0) {
			capreq_host_unlock(rs->env->d, u->host);
			rs->host_free[host_index(rs, u->host)] = mono_us() + left;
			*free_now = false;
			u->host_locked = false;
			u->held_elsewhere = false;
			return 0;
		}
	}
	*free_now = got;
	u->host_locked = got;
	u->held_elsewhere = !got;
	return 0;
}

/* Run every planned unit to its end, or to the budget. */
static int run_units(run_state *rs, pr_error *err)
{
	deploy **deps = calloc(rs->nsvcs ? rs->nsvcs : 1, sizeof(*deps));
	size_t *ndeps = calloc(rs->nsvcs ? rs->nsvcs : 1, sizeof(*ndeps));
	int64_t deadline = rs->deadline_us;
	size_t left = 0;
	int rc = 0;

	for (size_t i = 0; i < rs->nunits; i++)
		left += rs->units[i].state == T_PENDING;

	if (!deps || !ndeps) {
		rc = oom(err);
		goto out;
	}
	for (size_t i = 0; i < rs->nsvcs; i++)
		if ((rc = deploy_list(&deps[i], &ndeps[i], rs->env->d, rs->svcs[i].svc->id, 1000,
				      err)) < 0)
			goto out;
	if ((rc = load_hosts(rs, err)) < 0)
		goto out;
	while (left) {
		int64_t now = mono_us(), nap = 200000;
		bool any_running = false;

		/* Harvest what is done (the database is used from this thread only). */
		(void)now;
		for (size_t i = 0; i < rs->nunits && rc == 0; i++) {
			unit *u = &rs->units[i];
			int st;
			pthread_mutex_lock(&rs->mu);
			st = u->state;
			pthread_mutex_unlock(&rs->mu);
			if (st != T_DONE)
				continue;
			rc = harvest(rs, u, deadline, (const deploy *const *)deps, ndeps, err);
			if (u->state == T_FINISHED)
				left--;
		}
		if (rc < 0)
			break;
		now = mono_us();
		pthread_mutex_lock(&rs->mu);
		for (size_t i = 0; i < rs->nunits; i++) {
			unit *u = &rs->units[i];
			svc_state *s = &rs->svcs[u->svc];
			int64_t wait;
			if (u->state == T_RUNNING || u->state == T_DONE)
				any_running = true;
			if (u->state != T_PENDING)
				continue;
			if (now >= deadline && u->held_elsewhere) {
				/* Its host was being profiled elsewhere: later, not a failure. */
				s->rep.waiting++;
				u->state = T_FINISHED;
				left--;
				continue;
			}
			if (now >= deadline) {
				char why[900];
				snprintf(why, sizeof(why),
					 "%s: not tried: the collection budget of "
					 "%" PRId64 " s ran out",
					 u->display, rs->env->cfg->collect.budget_us / 1000000);
				failure(s, kind_name(u->src->kind), u->target, u->prof->type, why);
				s->not_tried++;
				u->state = T_FINISHED;
				left--;
				continue;
			}
			if (u->cpu && u->host[0]) {
				size_t h = host_index(rs, u->host);
				/*
				 * A deploy's collection (post-deploy) polls again within
				 * seconds: waiting here for a cooling host would hold the
				 * gate past its --wait while other hosts' captures sit ready.
				 */
				bool defer = rs->o->deploy_release && !u->attempts &&
					     rs->host_free[h] > now;
				if (!rs->host_busy[h] && (defer || rs->host_free[h] > deadline)) {
					/* Cooling past the budget: later, not a failure. */
					s->rep.waiting++;
					u->state = T_FINISHED;
					left--;
					continue;
				}
			}
			if (may_start(rs, u, now, deadline, &wait)) {
				bool free_now = true;
				if ((rc = host_claim(&free_now, rs, u, err)) < 0)
					break;
				/* Profiled by serve now: ask again in a second. */
				if (!free_now && !u->held_elsewhere)
					continue; /* cooling since: may_start waits */
				if (!free_now) {
					u->not_before_us = now + 1000000;
					if (nap > 1000000)
						nap = 1000000;
					continue;
				}
				if ((rc = start_unit(rs, u, err)) < 0)
					break;
				any_running = true;
			} else if (wait > 0 && wait < nap) {
				nap = wait;
			}
		}
		pthread_mutex_unlock(&rs->mu);
		if (rc < 0 || !left)
			break;
		pthread_mutex_lock(&rs->mu);
		{
			bool done = false;
			for (size_t i = 0; i < rs->nunits && !done; i++)
				done = rs->units[i].state == T_DONE;
			if (!done && any_running) {
				struct timespec ts;
				clock_gettime(CLOCK_REALTIME, &ts);
				ts.tv_nsec += (long)(nap % 1000000) * 1000;
				ts.tv_sec += (time_t)(nap / 1000000) + ts.tv_nsec / 1000000000;
				ts.tv_nsec %= 1000000000;
				pthread_cond_timedwait(&rs->cv, &rs->mu, &ts);
			} else if (!done) {
				struct timespec ts = {(time_t)(nap / 1000000),
						      (long)(nap % 1000000) * 1000};
				pthread_mutex_unlock(&rs->mu);
				nanosleep(&ts, NULL);
				pthread_mutex_lock(&rs->mu);
			}
		}
		pthread_mutex_unlock(&rs->mu);
	}
out:
	/* After a failure, let the requests in flight end (each is bounded) and drop them. */
	for (size_t i = 0; i < rs->nunits; i++) {
		unit *u = &rs->units[i];
		if (u->state == T_RUNNING || u->state == T_DONE) {
			pthread_join(u->thread, NULL);
			u->state = T_FINISHED;
		}
		if (u->host_locked) {
			capreq_host_unlock(rs->env->d, u->host);
			u->host_locked = false;
		}
	}
	for (size_t i = 0; deps && i < rs->nsvcs; i++)
		free(deps[i]);
	free(deps);
	free(ndeps);
	return rc;
}

/* ---- object-store drops (s3_prefix) ------------------------------------- */

/* What an s3_prefix source's rows in collect_slots hold as their type. */
static char object_type[] = "object";

typedef struct drop_obj {
	char *name; /* the key less the prefix */
	uint64_t size;
	int64_t mtime_us;
} drop_obj;

typedef struct drop_list {
	drop_obj *v;
	size_t n, cap;
	const char *where;   /* the prefix listed, for messages */
	int64_t deadline_us; /* the collection budget's end (mono_us) */
	int64_t budget_s;
} drop_list;

static int drop_add(void *ud, const blob_s3_object *o, pr_error *err)
{
	drop_list *l = ud;

	/* A listing that never ends (each page truncated, with new keys) ends here. */
	if (mono_us() >= l->deadline_us)
		return pr_error_set(err, PR_ELIMIT,
				    "cannot list '%s': the collection budget of %" PRId64
				    " s ran out before the listing ended",
				    l->where, l->budget_s);
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		drop_obj *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return oom(err);
		l->v = v;
		l->cap = cap;
	}
	if (!(l->v[l->n].name = strdup(o->name)))
		return oom(err);
	l->v[l->n].size = o->size;
	l->v[l->n].mtime_us = o->mtime_us;
	l->n++;
	return 0;
}

static int drop_cmp(const void *a, const void *b)
{
	return strcmp(((const drop_obj *)a)->name, ((const drop_obj *)b)->name);
}

static const drop_obj *drop_find(const drop_list *l, const char *name)
{
	drop_obj key = {(char *)name, 0, 0};

	return l->n ? bsearch(&key, l->v, l->n, sizeof(*l->v), drop_cmp) : NULL;
}

static void drop_list_release(drop_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* `name` for a message: control characters and quotes as \xNN, at most 200 bytes. */
static void drop_shown(char *out, size_t n, const char *name)
{
	size_t k = 0;

	for (const char *c = name; *c && k + 5 < n && k < 200; c++) {
		unsigned char b = (unsigned char)*c;
		if (b < 0x20 || b == 0x7f || b == '\'' || b == '\\')
			k += (size_t)snprintf(out + k, n - k, "\\x%02x", b);
		else
			out[k++] = (char)b;
	}
	out[k] = '\0';
}

static int drop_open(blob_s3_bucket **out, const config_source *src, pr_error *err)
{
	blobs_s3_keys keys = {NULL, NULL, NULL};
	blob_s3_opts o;
	int rc;

	*out = NULL;
	if ((rc = blobs_s3_options(&o, &keys, &src->s3, src->ca_file, src->connect_timeout_ms,
				   src->timeout_ms, err)) == 0)
		rc = blob_s3_bucket_open(out, &o, err);
	blobs_s3_keys_release(&keys);
	return rc;
}

static void waiting(svc_state *s, const char *target, const char *reason)
{
	json_t *w = json_pack("{s:s,s:s,s:s}", "source", "s3_prefix", "target", target, "reason",
			      reason);

	if (w)
		json_array_append_new(s->waiting, w);
	s->rep.waiting++;
}

/*
 * One profile object and its sidecar: fetched, ingested, recorded. A bad
 * object is a failure of the service; < 0 only when the database, the
 * blob store or memory failed.
 */
static int drop_one(svc_state *s, const job_env *env, blob_s3_bucket *b, unit *u,
		    const drop_obj *obj, const drop_obj *side, pr_error *err)
{
	const profile_limits *lim = &env->cfg->limits;
	const char *where = blob_s3_bucket_describe(b);
	char shown[1400], sname[1400], why[3200];
	buf text = BUF_INIT, data = BUF_INIT;
	ingest_desc desc = {0};
	ingest_result res = {0};
	pr_error ferr = PR_ERROR_INIT;
	ingest_json_source js;
	int rc = 0;

	snprintf(shown, sizeof(shown), "%s%s", where, obj->name);
	snprintf(sname, sizeof(sname), "sidecar '%s%s'", where, side->name);
	/* Sizes from the listing: nothing too large is downloaded. */
	if (side->size > INGEST_JSON_MAX) {
		snprintf(why, sizeof(why), "%s: longer than %d bytes, not downloaded", sname,
			 INGEST_JSON_MAX);
		failure(s, "s3_prefix", where, NULL, why);
		goto out;
	}
	if (obj->size > lim->max_input_bytes) {
		snprintf(why, sizeof(why),
			 "cannot read '%s': %" PRIu64 " bytes, over the input limit of %zu "
			 "bytes; not downloaded",
			 shown, obj->size, (size_t)lim->max_input_bytes);
		failure(s, "s3_prefix", where, NULL, why);
		goto out;
	}
	s->requests++;
	if (blob_s3_bucket_read(b, side->name, &text, INGEST_JSON_MAX, &ferr) < 0) {
		if (ferr.code == PR_ENOMEM)
			goto infra;
		failure(s, "s3_prefix", where, NULL, ferr.msg);
		goto out;
	}
	js = (ingest_json_source){sname, NULL, shown, s->svc->name};
	if (ingest_request_from_json(&desc, text.ptr, text.len, &js, &ferr) < 0) {
		if (ferr.code == PR_ENOMEM)
			goto infra;
		failure(s, "s3_prefix", where, NULL, ferr.msg);
		goto out;
	}
	s->requests++;
	if (blob_s3_bucket_read(b, obj->name, &data, lim->max_input_bytes, &ferr) < 0) {
		if (ferr.code == PR_ENOMEM)
			goto infra;
		failure(s, "s3_prefix", where, NULL, ferr.msg);
		goto out;
	}
	desc.req.display = shown;
	/* The sidecar's time, else the object's, as a folder falls back on a file's. */
	if (!desc.req.time_us)
		desc.req.time_us = obj->mtime_us;
	if (source_ingest_bytes(&res, env->d, env->bs, &desc.req, data.ptr, data.len, lim,
				&ferr) < 0) {
		if (res.infra || ferr.code == PR_ENOMEM)
			goto infra;
		failure(s, "s3_prefix", where, NULL, ferr.msg);
		goto out;
	}
	/* An object whose bytes retention deleted is taken, not stored: recorded as done. */
	if (res.retention_deleted)
		s->rep.deleted++;
	else if (res.already)
		s->rep.already++;
	else
		s->rep.stored++;
	rc = slot_record(env->d, s->svc->id, u,
			 res.already || res.retention_deleted ? "already" : "stored",
			 res.capture_id, err);
	goto out;
infra:
	rc = pr_error_set(err, ferr.code, "%s", ferr.msg);
out:
	ingest_desc_release(&desc);
	wipe_mem(data.ptr, data.len);
	buf_release(&data);
	buf_release(&text);
	return rc;
}

/* The objects the budget left no time for: counted, one line. */
static void drops_not_tried(svc_state *s, size_t n, const char *where, int64_t budget_us)
{
	char why[900];

	s->not_tried += n;
	snprintf(why, sizeof(why),
		 "%s: %zu objects not collected: the collection budget of %" PRId64 " s ran out",
		 where, n, budget_us / 1000000);
	failure(s, "s3_prefix", where, NULL, why);
}

/*
 * Every s3_prefix source of a service: list the prefix, and take each
 * profile object with its sidecar (OBJECT.json) that was not taken
 * before (collect_slots: the key and its LastModified), as a drop folder
 * is read.
 */
static int collect_drops(svc_state *s, const job_env *env, int64_t deadline_us, pr_error *err)
{
	static config_profile object_prof = {object_type, NULL};
	const config_service *cs = s->cs;
	size_t nlate;
	bool late;
	int rc = 0;

	for (size_t k = 0; k < cs->nsources; k++) {
		const config_source *src = &cs->sources[k];
		blob_s3_bucket *b = NULL;
		drop_list l = {0};
		pr_error serr = PR_ERROR_INIT;
		unit *u = NULL;
		const char *where;

		if (src->kind != CONFIG_SRC_S3_PREFIX)
			continue;
		if (!(u = calloc(1, sizeof(*u)))) {
			rc = oom(err);
			break;
		}
		l.deadline_us = deadline_us;
		l.budget_s = env->cfg->collect.budget_us / 1000000;
		if (drop_open(&b, src, &serr) == 0) {
			char why[100];
			snprintf(why, sizeof(why), "the collection budget of %" PRId64 " s ran out",
				 l.budget_s);
			/* Pages, objects and their tries: none starts past the budget. */
			blob_s3_bucket_set_deadline(b, deadline_us, why);
			l.where = blob_s3_bucket_describe(b);
			s->requests++;
			blob_s3_bucket_list(b, drop_add, &l, &serr);
		}
		if (serr.code) {
			if (serr.code == PR_ENOMEM)
				rc = pr_error_set(err, PR_ENOMEM, "%s", serr.msg);
			else
				failure(s, "s3_prefix", b ? blob_s3_bucket_describe(b) : src->label,
					NULL, serr.msg);
			goto next;
		}
		where = blob_s3_bucket_describe(b);
		if (l.n)
			qsort(l.v, l.n, sizeof(*l.v), drop_cmp);
		u->src = src;
		u->prof = &object_prof;
		snprintf(u->source_key, sizeof(u->source_key), "s3_prefix %s/%s/%s",
			 src->s3.endpoint, src->s3.bucket, src->s3.prefix ? src->s3.prefix : "");
		late = false;
		nlate = 0;
		for (size_t i = 0; i < l.n && rc == 0; i++) {
			const drop_obj *obj = &l.v[i], *side;
			const char *base = strrchr(obj->name, '/');
			char shown[300], why[3200], sidename[INGEST_PATH_MAX + 8];
			bool known = false;

			base = base ? base + 1 : obj->name;
			/* Folder markers, hidden objects and sidecars are not captures. */
			if (!*base || base[0] == '.' || ends_with(obj->name, ".json"))
				continue;
			if (source_drop_name_refused(obj->name)) {
				drop_shown(shown, sizeof(shown), obj->name);
				snprintf(why, sizeof(why), "object key '%s%s' refused: %s", where,
					 shown, source_drop_name_refused(obj->name));
				failure(s, "s3_prefix", where, NULL, why);
				continue;
			}
			snprintf(u->target, sizeof(u->target), "%s", obj->name);
			u->start_us = u->end_us = obj->mtime_us;
			if ((rc = slot_known(&known, env->d, s->svc->id, u, err)) < 0)
				break;
			if (known) {
				s->skipped++;
				continue;
			}
			snprintf(sidename, sizeof(sidename), "%s.json", obj->name);
			if (!(side = drop_find(&l, sidename))) {
				snprintf(why, sizeof(why),
					 "object '%s%s' has no sidecar '%s.json' yet: "
					 "not collected",
					 where, obj->name, obj->name);
				waiting(s, where, why);
				continue;
			}
			/* Past the budget the rest are only counted, after the same checks. */
			if (late || (late = mono_us() >= deadline_us)) {
				nlate++;
				continue;
			}
			rc = drop_one(s, env, b, u, obj, side, err);
		}
		if (rc == 0 && nlate)
			drops_not_tried(s, nlate, where, env->cfg->collect.budget_us);
next:
		drop_list_release(&l);
		blob_s3_bucket_free(b);
		free(u);
		if (rc < 0)
			break;
	}
	return rc;
}

/* ---- one collection ------------------------------------------------------ */

bool collect_has_sources(const config_service *cs)
{
	return cs && (cs->source_dir || cs->nsources);
}

static void svc_state_release(svc_state *s)
{
	source_report_release(&s->rep);
	json_decref(s->failures);
	json_decref(s->waiting);
	for (size_t i = 0; i < s->nsecrets; i++)
		if (s->secrets[i])
			wipe_free(s->secrets[i]);
	free(s->secrets);
	memset(s, 0, sizeof(*s));
}

static void run_state_release(run_state *rs)
{
	for (size_t i = 0; i < rs->nunits; i++)
		unit_release(&rs->units[i]);
	free(rs->units);
	for (size_t i = 0; i < rs->nsvcs; i++)
		svc_state_release(&rs->svcs[i]);
	free(rs->svcs);
	for (size_t i = 0; i < rs->nhosts; i++)
		free(rs->hosts[i]);
	free(rs->hosts);
	free(rs->host_free);
	free(rs->host_busy);
	pthread_mutex_destroy(&rs->mu);
	pthread_cond_destroy(&rs->cv);
}

/* Drop folders of a service: the folder code as it always ran. */
static int collect_dirs(svc_state *s, const job_env *env, pr_error *err)
{
	const config_service *cs = s->cs;

	for (size_t k = 0; k <= cs->nsources; k++) {
		const char *dir = k < cs->nsources ? (cs->sources[k].kind == CONFIG_SRC_DIR
							      ? cs->sources[k].dir
							      : NULL)
						   : cs->source_dir;
		source_report r = {0};
		pr_error derr = PR_ERROR_INIT;
		size_t named;
		if (!dir)
			continue;
		if (source_collect_dir(&r, env->d, env->bs, s->svc->name, dir, &env->cfg->limits,
				       &derr) < 0) {
			/* What was stored before the stop is stored: counted. */
			s->rep.stored += r.stored;
			s->rep.already += r.already;
			s->rep.deleted += r.deleted;
			source_report_release(&r);
			if (derr.code == PR_EDB || derr.code == PR_ENOMEM)
				return pr_error_set(err, derr.code, "%s", derr.msg);
			failure(s, "dir", dir, NULL, derr.msg);
			continue;
		}
		s->rep.stored += r.stored;
		s->rep.already += r.already;
		s->rep.deleted += r.deleted;
		s->rep.waiting += r.waiting;
		/*
		 * Each bad file is its own failure, named as each bad object of
		 * an s3_prefix is: naming the first alone left the others
		 * counted and unexplained.
		 */
		named = r.nerrors;
		for (size_t i = 0; i < named; i++)
			failure(s, "dir", dir, NULL, r.errors[i]);
		if (r.failed && !named) {
			failure(s, "dir", dir, NULL,
				r.first_error ? r.first_error : "a file failed");
			named = 1;
		}
		s->rep.failed += r.failed - named;
		source_report_release(&r);
	}
	return 0;
}

/* Set up one service: state, secrets, plan. */
static int plan_service(run_state *rs, size_t si, pr_error *err)
{
	svc_state *s = &rs->svcs[si];
	const config_service *cs = s->cs;
	int rc;

	s->cap = cs->max_concurrent ? cs->max_concurrent : rs->env->cfg->collect.max_concurrent;
	if (cs->nsources && !(s->secrets = calloc(cs->nsources, sizeof(*s->secrets))))
		return oom(err);
	s->nsecrets = cs->nsources;
	for (size_t k = 0; rs->plan && k <= cs->nsources; k++) {
		const char *dir = k < cs->nsources ? (cs->sources[k].kind == CONFIG_SRC_DIR
							      ? cs->sources[k].dir
							      : NULL)
						   : cs->source_dir;
		if (dir)
			json_array_append_new(rs->plan, json_pack("{s:s,s:s,s:s,s:i}", "service",
								  s->svc->name, "source", "dir",
								  "target", dir, "requests", 0));
	}
	for (size_t k = 0; k < cs->nsources; k++) {
		const config_source *src = &cs->sources[k];
		pr_error serr = PR_ERROR_INIT;
		if (src->kind == CONFIG_SRC_DIR)
			continue;
		if (src->kind == CONFIG_SRC_S3_PREFIX) {
			/* Collected before the units (collect_drops); a dry run lists nothing. */
			if (rs->plan)
				json_array_append_new(
					rs->plan,
					json_pack("{s:s,s:s,s:s+++,s:i}", "service",
						  s->svc->name, "source", "s3_prefix",
						  "target", "s3://", src->s3.bucket, "/",
						  src->s3.prefix ? src->s3.prefix : "", "requests",
						  1));
			continue;
		}
		if (!rs->o->dry_run && auth_value(&s->secrets[k], src, &serr) < 0) {
			if (serr.code == PR_ENOMEM)
				return pr_error_set(err, PR_ENOMEM, "%s", serr.msg);
			failure(s, kind_name(src->kind), src->label, NULL, serr.msg);
			continue;
		}
		if (src->kind == CONFIG_SRC_PPROF_HTTP)
			rc = plan_pprof_http(rs, si, src, k, err);
		else
			rc = plan_slots(rs, si, src, err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* One line for a service's failures: a single one as it is. */
static void summarise(svc_state *s)
{
	size_t n = json_array_size(s->failures), i;
	buf b = BUF_INIT;
	json_t *f;

	free(s->rep.first_error);
	s->rep.first_error = NULL;
	if (!n)
		return;
	if (n == 1 && s->rep.failed == 1) {
		s->rep.first_error = strdup(json_string_value(
			json_object_get(json_array_get(s->failures, 0), "reason")));
		return;
	}
	buf_printf(&b, "%zu failures", s->rep.failed);
	json_array_foreach(s->failures, i, f)
	{
		if (i == SUMMARY_FAILURES) {
			buf_printf(&b, "; ...");
			break;
		}
		buf_printf(&b, "%s %s", i ? ";" : ":",
			   json_string_value(json_object_get(f, "reason")));
	}
	s->rep.first_error = buf_detach(&b, NULL);
}

static json_t *svc_json(const svc_state *s)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:O,s:O}", "stored",
			 (json_int_t)s->rep.stored, "already_stored", (json_int_t)s->rep.already,
			 "deleted_by_retention", (json_int_t)s->rep.deleted, "already_collected",
			 (json_int_t)s->skipped, "empty", (json_int_t)s->empty, "deferred",
			 (json_int_t)s->rep.waiting, "failed", (json_int_t)s->rep.failed,
			 "not_tried", (json_int_t)s->not_tried, "requests", (json_int_t)s->requests,
			 "failures", s->failures, "waiting", s->waiting);
}

/*
 * Collect `svcs` (registered and enabled) under the collect lock. On
 * return rs->svcs holds each service's outcome.
 */
/*
 * The locks of a collection: COLLECT_LOCK itself, exclusive (the collect
 * command over many services), or a service's own lock, exclusive, under
 * COLLECT_LOCK shared: collections of different services go on at once,
 * and none of them beside a collection of many. Tried again every 200 ms
 * for `wait_us`; *got false when still held elsewhere.
 */
static int take_locks(db *d, const char *lock, int64_t wait_us, bool *got, pr_error *err)
{
	bool under = strcmp(lock, COLLECT_LOCK) != 0;
	double give_up = time_mono() + (double)wait_us / 1e6;
	int rc;

	for (;;) {
		bool fleet = !under;
		if (under && (rc = db_try_advisory_lock_shared(d, COLLECT_LOCK, &fleet, err)) < 0)
			return rc;
		if (fleet && (rc = db_try_advisory_lock(d, lock, got, err)) < 0) {
			if (under)
				db_advisory_unlock_shared(d, COLLECT_LOCK);
			return rc;
		}
		if (fleet && *got)
			return 0;
		if (under && fleet)
			db_advisory_unlock_shared(d, COLLECT_LOCK);
		*got = false;
		if (time_mono() >= give_up)
			return 0;
		nanosleep(&(struct timespec){0, 200 * 1000000L}, NULL);
	}
}

static void let_go(db *d, const char *lock)
{
	db_advisory_unlock(d, lock);
	if (strcmp(lock, COLLECT_LOCK) != 0)
		db_advisory_unlock_shared(d, COLLECT_LOCK);
}

static int collect_services(run_state *rs, const job_env *env, const collect_opts *o,
			    const char *lock, const db_service *const *svcs, size_t n,
			    bool *locked_out, pr_error *err)
{
	bool locked = false;
	int rc;

	memset(rs, 0, sizeof(*rs));
	pthread_mutex_init(&rs->mu, NULL);
	pthread_cond_init(&rs->cv, NULL);
	rs->env = env;
	rs->o = o;
	rs->now_us = job_now(env);
	rs->until_us = o->until_us ? o->until_us : rs->now_us;
	rs->since_us = o->since_us ? o->since_us : rs->until_us - DAY_US;
	*locked_out = false;
	if (n && !(rs->svcs = calloc(n, sizeof(*rs->svcs))))
		return oom(err);
	for (size_t i = 0; i < n; i++) {
		rs->svcs[i].svc = svcs[i];
		rs->svcs[i].cs = config_service_find(env->cfg, svcs[i]->name);
		if (!(rs->svcs[i].failures = json_array()) || !(rs->svcs[i].waiting = json_array()))
			return oom(err);
		rs->nsvcs++;
	}
	if (o->dry_run && !(rs->plan = json_array()))
		return oom(err);
	if (!o->dry_run) {
		if ((rc = take_locks(env->d, lock, o->lock_wait_us, &locked, err)) < 0)
			return rc;
		if (!locked) {
			*locked_out = true;
			return 0;
		}
	}
	/*
	 * The budget is the whole collection's, drop folders and object
	 * stores too; it starts once the lock is held, not while waiting.
	 */
	rs->deadline_us = mono_us() + env->cfg->collect.budget_us;
	for (size_t i = 0; i < rs->nsvcs && !o->dry_run; i++)
		if ((rc = collect_dirs(&rs->svcs[i], env, err)) < 0 ||
		    (rc = collect_drops(&rs->svcs[i], env, rs->deadline_us, err)) < 0)
			goto out;
	for (size_t i = 0; i < rs->nsvcs; i++)
		if ((rc = plan_service(rs, i, err)) < 0)
			goto out;
	if (!o->dry_run && (rc = run_units(rs, err)) < 0)
		goto out;
	for (size_t i = 0; i < rs->nsvcs; i++)
		summarise(&rs->svcs[i]);
	rc = 0;
out:
	if (locked)
		let_go(env->d, lock);
	return rc;
}

int collect_service(source_report *out, json_t **failures, const job_env *env,
		    const db_service *svc, const collect_opts *o, pr_error *err)
{
	run_state rs;
	const db_service *one[1] = {svc};
	char own[sizeof(COLLECT_LOCK) + 300];
	const char *lock = o->lock;
	bool locked_out;
	int rc;

	memset(out, 0, sizeof(*out));
	if (failures)
		*failures = NULL;
	if (!lock) {
		snprintf(own, sizeof(own), "%s:%.290s", COLLECT_LOCK, svc->name);
		lock = own;
	}
	rc = collect_services(&rs, env, o, lock, one, 1, &locked_out, err);
	if (rc == 0 && locked_out && o->busy_is_error) {
		rc = pr_error_set(err, PR_ELOCKED,
				  "another collection holds the lock '%.160s'; not collected",
				  lock);
	} else if (rc == 0 && locked_out) {
		out->waiting = 1;
		out->failed = 1;
		char msg[256];
		snprintf(msg, sizeof(msg),
			 "another collection holds the lock '%.160s': nothing collected", lock);
		out->first_error = strdup(msg);
		if (failures)
			*failures = json_pack("[{s:s,s:s,s:s}]", "source", "collect", "target",
					      svc->name, "reason", out->first_error);
	} else if (rc == 0) {
		*out = rs.svcs[0].rep;
		memset(&rs.svcs[0].rep, 0, sizeof(rs.svcs[0].rep));
		if (failures)
			*failures = json_incref(rs.svcs[0].failures);
	}
	json_decref(rs.plan);
	run_state_release(&rs);
	return rc;
}

static bool wanted(const char *name, const collect_opts *o)
{
	if (!o->nonly)
		return true;
	for (size_t i = 0; i < o->nonly; i++)
		if (strcmp(o->only[i], name) == 0)
			return true;
	return false;
}

int collect_run(collect_result *out, const job_env *env, const collect_opts *o, pr_error *err)
{
	collect_result *r = out;
	db_service *svcs = NULL;
	const db_service **pick = NULL;
	size_t nsvcs = 0, npick = 0;
	run_state rs;
	bool have_rs = false, locked_out = false;
	char from[TIME_FMT_MAX], to[TIME_FMT_MAX], own[sizeof(COLLECT_LOCK) + 300];
	int rc;

	memset(r, 0, sizeof(*r));
	if (!(r->services = json_object()))
		return oom(err);
	if ((rc = db_service_list(env->d, &svcs, &nsvcs, err)) < 0)
		goto out;
	/* Every --service must be registered and enabled: a typo is an error. */
	for (size_t k = 0; k < o->nonly; k++) {
		db_service probe = {0};
		bool found = false;
		for (size_t i = 0; i < nsvcs && !found; i++)
			if (strcmp(svcs[i].name, o->only[k]) == 0) {
				found = true;
				if (!svcs[i].enabled) {
					rc = pr_error_set(
						err, PR_EREFUSED,
						"service '%s' is not enabled "
						"for profiling (run 'profreg service enable "
						"%s')",
						o->only[k], o->only[k]);
					goto out;
				}
			}
		if (!found) {
			rc = db_service_get(env->d, &probe, o->only[k], err);
			db_service_release(&probe);
			if (rc == 0)
				rc = pr_error_set(err, PR_ENOTFOUND, "service '%s' not found",
						  o->only[k]);
			goto out;
		}
	}
	if (nsvcs && !(pick = calloc(nsvcs, sizeof(*pick)))) {
		rc = oom(err);
		goto out;
	}
	for (size_t i = 0; i < nsvcs; i++) {
		const config_service *cs = config_service_find(env->cfg, svcs[i].name);
		if (!wanted(svcs[i].name, o))
			continue;
		if (!collect_has_sources(cs)) {
			if (o->nonly)
				json_object_set_new(r->services, svcs[i].name,
						    json_pack("{s:s}", "skipped",
							      "no sources in the "
							      "configuration"));
			continue;
		}
		/* Only enabled services are ever contacted. */
		if (!svcs[i].enabled) {
			json_object_set_new(r->services, svcs[i].name,
					    json_pack("{s:s}", "skipped", "not enabled"));
			r->skipped_services++;
			continue;
		}
		pick[npick++] = &svcs[i];
	}
	if (!o->dry_run) {
		json_t *params;
		int64_t until = o->until_us ? o->until_us : job_now(env);
		time_format(from, o->since_us ? o->since_us : until - DAY_US);
		time_format(to, until);
		params = json_pack("{s:s,s:s}", "since", from, "until", to);
		rc = runs_begin(&r->run_id, env->d, "collect", 0, params, err);
		json_decref(params);
		if (rc < 0)
			goto out;
	}
	have_rs = true;
	/* One service named: its own lock, as a gate's; more: the fleet's. */
	if (!o->lock && npick == 1 && o->nonly == 1)
		snprintf(own, sizeof(own), "%s:%.290s", COLLECT_LOCK, pick[0]->name);
	else
		snprintf(own, sizeof(own), "%s", o->lock ? o->lock : COLLECT_LOCK);
	if ((rc = collect_services(&rs, env, o, own, pick, npick, &locked_out, err)) < 0)
		goto fail;
	if (locked_out) {
		rc = pr_error_set(err, PR_ELOCKED,
				  "another collection holds the lock '%s'; not "
				  "starting a second one",
				  own);
		goto fail;
	}
	r->since_us = rs.since_us;
	r->until_us = rs.until_us;
	for (size_t i = 0; i < rs.nsvcs; i++) {
		svc_state *s = &rs.svcs[i];
		json_object_set_new(r->services, s->svc->name, svc_json(s));
		r->stored += s->rep.stored;
		r->already += s->rep.already;
		r->deleted += s->rep.deleted;
		r->failed += s->rep.failed;
		r->requests += s->requests;
	}
	r->plan = json_incref(rs.plan);
	if (!o->dry_run) {
		json_t *sum =
			json_pack("{s:I,s:I,s:I,s:I,s:I,s:O}", "stored", (json_int_t)r->stored,
				  "already_stored", (json_int_t)r->already, "deleted_by_retention",
				  (json_int_t)r->deleted, "failed", (json_int_t)r->failed,
				  "requests", (json_int_t)r->requests, "services", r->services);
		rc = sum ? runs_finish(env->d, r->run_id, r->failed ? "incomplete" : "ok", sum, err)
			 : oom(err);
		json_decref(sum);
		if (rc < 0)
			goto fail;
	}
	goto out;
fail:
	if (r->run_id) {
		pr_error ignore = PR_ERROR_INIT;
		json_t *why = json_pack("{s:s}", "error", err->msg);
		runs_finish(env->d, r->run_id, "failed", why, &ignore);
		json_decref(why);
	}
out:
	if (have_rs) {
		json_decref(rs.plan);
		run_state_release(&rs);
	}
	free(pick);
	for (size_t i = 0; i < nsvcs; i++)
		db_service_release(&svcs[i]);
	free(svcs);
	return rc;
}

void collect_result_release(collect_result *r)
{
	json_decref(r->services);
	json_decref(r->plan);
	job_notes_release(&r->notes);
	memset(r, 0, sizeof(*r));
}

/* ---- one capture on demand ------------------------------------------------ */

/*
 * The bad file_sd files met while looking hosts up: a host they may have
 * listed is not found, and the operator is told which files and why.
 */
typedef struct bad_files {
	size_t n;
	char why[PR_ERROR_MSG_MAX]; /* their messages, "; " between them, cut to fit */
} bad_files;

static void note_bad_file(void *ctx, const char *msg)
{
	bad_files *b = ctx;
	size_t len = strlen(b->why);

	snprintf(b->why + len, sizeof(b->why) - len, "%s%s", b->n ? "; " : "", msg);
	b->n++;
}

static bool target_named(const target *t, const char *host)
{
	char h[300];

	host_of(h, sizeof(h), t->address);
	return strcmp(t->address, host) == 0 || strcmp(h, host) == 0 ||
	       (t->host && strcmp(t->host, host) == 0);
}

/*
 * The source (*src_index) and target (into *out, the caller releases it)
 * of `cs` that `host` names, pulling profile `type` (NULL: any).
 */
static int find_target(size_t *src_index, target *out, const config_service *cs, const char *host,
		       const char *type, pr_error *err)
{
	bad_files bad = {0};
	int rc = 0;

	memset(out, 0, sizeof(*out));
	for (size_t k = 0; cs && k < cs->nsources; k++) {
		const config_source *src = &cs->sources[k];
		target_list tl = {0};
		bool has_type = !type;
		for (size_t p = 0; p < src->nprofiles && !has_type; p++)
			has_type = strcmp(src->profiles[p].type, type) == 0;
		if (src->kind != CONFIG_SRC_PPROF_HTTP || !has_type)
			continue;
		if ((rc = source_targets(&tl, src, note_bad_file, &bad, err)) < 0) {
			target_list_release(&tl);
			return rc;
		}
		for (size_t t = 0; t < tl.n; t++) {
			if (!target_named(&tl.v[t], host))
				continue;
			*out = tl.v[t];
			memset(&tl.v[t], 0, sizeof(tl.v[t]));
			*src_index = k;
			target_list_release(&tl);
			return 0;
		}
		target_list_release(&tl);
	}
	if (!cs)
		return pr_error_set(
			err, PR_ENOTFOUND,
			"host '%.200s' is not a target: the service has no sources in the "
			"configuration file",
			host);
	return pr_error_set(err, PR_ENOTFOUND,
			    "host '%.200s' is not a pprof_http target of service '%s'%s%s%s%s%s",
			    host, cs->name, type ? " pulling " : "", type ? type : "",
			    bad.n ? " (a file_sd file that could not be read may list it: " : "",
			    bad.why, bad.n ? ")" : "");
}

int collect_target_find(char *out, size_t n, const config_service *cs, const char *host,
			pr_error *err)
{
	target t;
	size_t k;
	int rc;

	if ((rc = find_target(&k, &t, cs, host, NULL, err)) < 0)
		return rc;
	host_of(out, n, t.address);
	target_clear(&t);
	return 0;
}

bool collect_target_pulls(const config_service *cs, const char *host, const char *type)
{
	pr_error e = PR_ERROR_INIT;
	target t;
	size_t k;

	if (find_target(&k, &t, cs, host, type, &e) < 0)
		return false;
	target_clear(&t);
	return true;
}

void collect_target_hosts_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int collect_target_hosts(char ***out, size_t *n, const config_service *cs, pr_error *err)
{
	char **v = NULL, host[260];
	size_t nv = 0, cap = 0;
	bad_files bad = {0};
	int rc = 0;

	*out = NULL;
	*n = 0;
	for (size_t k = 0; cs && rc == 0 && k < cs->nsources; k++) {
		target_list tl = {0};
		if (cs->sources[k].kind != CONFIG_SRC_PPROF_HTTP)
			continue;
		if ((rc = source_targets(&tl, &cs->sources[k], note_bad_file, &bad, err)) < 0) {
			target_list_release(&tl);
			break;
		}
		for (size_t t = 0; rc == 0 && t < tl.n; t++) {
			bool seen = false;
			host_of(host, sizeof(host), tl.v[t].address);
			for (size_t i = 0; i < nv && !seen; i++)
				seen = strcmp(v[i], host) == 0;
			if (seen)
				continue;
			if (nv == cap) {
				char **nvv = realloc(v, (cap ? 2 * cap : 16) * sizeof(*v));
				if (!nvv) {
					rc = oom(err);
					break;
				}
				v = nvv;
				cap = cap ? 2 * cap : 16;
			}
			if (!(v[nv] = strdup(host)))
				rc = oom(err);
			else
				nv++;
		}
		target_list_release(&tl);
	}
	/* Hosts of the good files are picked from; with none, the bad ones are why. */
	if (rc == 0 && nv == 0 && bad.n)
		rc = pr_error_set(err, PR_EDATA,
				  "service '%s' has no pprof_http target to pick hosts from: %s",
				  cs->name, bad.why);
	if (rc < 0) {
		collect_target_hosts_free(v, nv);
		return rc;
	}
	if (nv)
		qsort(v, nv, sizeof(*v), cmp_str);
	*out = v;
	*n = nv;
	return 0;
}

uint64_t collect_one_bound_ms(const config_service *cs, const char *type, uint32_t seconds)
{
	uint64_t most = 0;

	for (size_t k = 0; cs && k < cs->nsources; k++) {
		const config_source *src = &cs->sources[k];
		uint64_t ms = src->timeout_ms;
		if (src->kind != CONFIG_SRC_PPROF_HTTP)
			continue;
		/* As unit_prepare sets the request's timeout. */
		if (strcmp(type, "cpu") == 0)
			ms += (uint64_t)(seconds ? seconds : src->seconds) * 1000 + CPU_MARGIN_MS;
		if (ms > most)
			most = ms;
	}
	return most;
}

int collect_one_capture(int64_t *capture_id, const job_env *env, const db_service *svc,
			const config_service *cs, const collect_one *o, pr_error *err)
{
	run_state rs;
	collect_opts opts;
	deploy *deps = NULL;
	size_t ndeps = 0, k = 0;
	target t;
	const config_source *src;
	unit *u;
	char url[600];
	pprof_http_req pr;
	bool locked = false;
	int rc;

	*capture_id = 0;
	memset(&t, 0, sizeof(t));
	memset(&opts, 0, sizeof(opts));
	memset(&rs, 0, sizeof(rs));
	pthread_mutex_init(&rs.mu, NULL);
	pthread_cond_init(&rs.cv, NULL);
	/* Only enabled services are ever contacted, whenever the request was made. */
	if (!svc->enabled) {
		rc = pr_error_set(
			err, PR_EREFUSED,
			"service '%s' is not enabled for profiling: host '%.200s' not asked",
			svc->name, o->host);
		goto out;
	}
	opts.incident = o->incident;
	rs.env = env;
	rs.o = &opts;
	rs.now_us = job_now(env);
	if ((rc = find_target(&k, &t, cs, o->host, o->type, err)) < 0)
		goto out;
	src = &cs->sources[k];
	if (!(rs.svcs = calloc(1, sizeof(*rs.svcs))) || !(rs.svcs[0].failures = json_array()) ||
	    !(rs.svcs[0].secrets = calloc(cs->nsources, sizeof(char *)))) {
		rc = oom(err);
		goto out;
	}
	rs.nsvcs = 1;
	rs.svcs[0].svc = svc;
	rs.svcs[0].cs = cs;
	rs.svcs[0].nsecrets = cs->nsources;
	if ((rc = auth_value(&rs.svcs[0].secrets[k], src, err)) < 0)
		goto out;
	if (!(u = unit_new(&rs, err))) {
		rc = PR_ENOMEM;
		goto out;
	}
	u->src = src;
	for (size_t p = 0; p < src->nprofiles; p++)
		if (strcmp(src->profiles[p].type, o->type) == 0)
			u->prof = &src->profiles[p];
	u->cpu = strcmp(u->prof->type, "cpu") == 0;
	u->seconds = o->seconds ? o->seconds : src->seconds;
	snprintf(u->source_key, sizeof(u->source_key), "pprof_http incident %.200s", o->incident);
	snprintf(u->target, sizeof(u->target), "%s", t.address);
	host_of(u->host, sizeof(u->host), t.address);
	memset(&pr, 0, sizeof(pr));
	pr.scheme = src->scheme ? src->scheme : "http";
	pr.address = t.address;
	pr.what = u->prof->id;
	pr.seconds = u->seconds;
	pprof_http_url(url, sizeof(url), &pr);
	snprintf(u->display, sizeof(u->display), "%s", url);
	u->label_release = t.release;
	u->label_commit = t.commit;
	u->label_host = t.host;
	t.release = t.commit = t.host = NULL;
	if ((src->secret_env || src->secret_file)) {
		char base[600];
		snprintf(base, sizeof(base), "%s://%s/", pr.scheme, t.address);
		if (!secret_url_safe(base)) {
			rc = pr_error_set(err, PR_EREFUSED,
					  "target '%s': not contacted: its credentials would cross "
					  "the network in cleartext (use \"scheme\": \"https\")",
					  t.address);
			goto out;
		}
	}
	if ((rc = deploy_list(&deps, &ndeps, env->d, svc->id, 1000, err)) < 0)
		goto out;
	if (u->cpu) {
		bool got = false;
		if ((rc = capreq_host_lock(&got, env->d, u->host, err)) < 0)
			goto out;
		if (!got) {
			rc = pr_error_set(err, PR_ELOCKED,
					  "host '%s': not profiled: another process (a collection "
					  "or another server) is CPU-profiling it now",
					  u->host);
			goto out;
		}
		locked = true;
	}
	unit_prepare(&rs, u);
	u->start_us = u->taken_us;
	u->end_us = u->taken_us + (int64_t)u->seconds * 1000000;
	fetch_unit(u);
	if (u->rc < 0) {
		rc = pr_error_set(err, u->rc, "%s", u->err.msg);
		goto out;
	}
	if ((rc = finish_unit(&rs, u, deps, ndeps, err)) < 0)
		goto out;
	if (rs.svcs[0].rep.failed) {
		json_t *f = json_array_get(rs.svcs[0].failures, 0);
		rc = pr_error_set(err, PR_EDATA, "%s",
				  json_string_value(json_object_get(f, "reason")));
		goto out;
	}
	*capture_id = u->capture;
out:
	if (locked)
		capreq_host_unlock(env->d, u->host);
	free(deps);
	target_clear(&t);
	run_state_release(&rs);
	return rc;
}
