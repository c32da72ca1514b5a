/*
 * escalate.c: profreg escalate (see escalate.h); owns escalation_hosts.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/escalate.h"
#include "jobs/capreq.h"
#include "jobs/collect.h"
#include "jobs/escrules.h"
#include "jobs/runs.h"
#include "jobs/signals.h"
#include "common/timeutil.h"
#include "pipeline/http.h"
#include "pipeline/prom.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOCK_NAME "profreg-escalate"
#define SIGNALS_MAX 16
#define HISTORY_PER_HOST 10000
#define PRUNE_BATCH 10000
#define S_US ((int64_t)1000000)

/* One host of a service in this run: its stored state and what this run read. */
typedef struct hstate {
	char host[260];
	/* stored (escalation_hosts): the rules' state and the session followed */
	escrules_host st;
	int64_t session_id;
	bool stored;
	struct saved {
		escrules_host st;
		int64_t session_id;
	} saved; /* as read: a row that did not change is not written again */
	/* this run */
	bool seen, outside, large;
	double value[SIGNALS_MAX];
	bool has[SIGNALS_MAX];
	double zmax;
	char why[400];
	bool load_known, mem_known;
	double load, mem;
} hstate;

typedef struct svc_run {
	const job_env *env;
	escalate_result *r;
	const config_escalate *e;
	const config_escalate_service *es;
	const config_service *cs;
	escrules_rules rules;
	db_service svc;
	hstate *h;
	size_t nh, caph;
	size_t unknown_keys;
	int64_t now;
	int64_t deadline_us; /* time_mono() microseconds: no query starts after it */
} svc_run;

void escalate_result_release(escalate_result *r)
{
	json_decref(r->by_service);
	json_decref(r->decisions);
	job_notes_release(&r->notes);
	memset(r, 0, sizeof(*r));
}

static int oom(pr_error *err)
{
	return pr_error_set(err, PR_ENOMEM, "out of memory");
}

static void decision(svc_run *s, const hstate *h, const char *action, int from, int to,
		     const char *why)
{
	json_array_append_new(s->r->decisions,
			      json_pack("{s:s,s:s,s:s,s:i,s:i,s:s}", "service", s->svc.name, "host",
					h->host, "action", action, "from", from, "to", to, "why",
					why ? why : ""));
}

/* The host `host`, added when new. NULL when memory fails. */
static hstate *host_get(svc_run *s, const char *host)
{
	for (size_t i = 0; i < s->nh; i++)
		if (strcmp(s->h[i].host, host) == 0)
			return &s->h[i];
	if (s->nh == s->caph) {
		size_t cap = s->caph ? 2 * s->caph : 16;
		hstate *n = realloc(s->h, cap * sizeof(*n));
		if (!n)
			return NULL;
		s->h = n;
		s->caph = cap;
	}
	memset(&s->h[s->nh], 0, sizeof(s->h[0]));
	snprintf(s->h[s->nh].host, sizeof(s->h[0].host), "%s", host);
	return &s->h[s->nh++];
}

/* ---- escalation_hosts ------------------------------------------------------- */

/* The stored part of `h`. */
static void saved_of(struct saved *out, const hstate *h)
{
	out->st = h->st;
	out->session_id = h->session_id;
}

/* Is the stored part of `h` still as it was read? */
static bool unchanged(const hstate *h)
{
	const escrules_host *a = &h->st, *b = &h->saved.st;

	return a->level == b->level && a->out_runs == b->out_runs &&
	       a->in_band_since == b->in_band_since && a->level2_until == b->level2_until &&
	       a->last_capture == b->last_capture && a->level2_used == b->level2_used &&
	       h->session_id == h->saved.session_id;
}

static int states_load(svc_run *s, pr_error *err)
{
	/* clang-format off */
	static const char sql[] =
		"select host, level, out_runs, coalesce(" DB_TS_TO_US("in_band_since") ", 0),"
		" coalesce(" DB_TS_TO_US("level2_until") ", 0), level2_used,"
		" coalesce(" DB_TS_TO_US("last_capture_at") ", 0), coalesce(session_id, 0)"
		" from escalation_hosts where service_id = $1";
	/* clang-format on */
	char sid[24];
	const char *p[1] = {sid};
	struct pg_result *res = NULL;
	int rc;

	snprintf(sid, sizeof(sid), "%" PRId64, s->svc.id);
	if ((rc = db_exec(s->env->d, &res, err, "reading escalation levels", sql, 1, p)) < 0)
		return rc;
	for (int i = 0; i < db_rows(res); i++) {
		hstate *h = host_get(s, db_get_text(res, i, 0));
		if (!h) {
			db_result_free(res);
			return oom(err);
		}
		h->stored = true;
		h->st.level = (int)db_get_i64(res, i, 1);
		h->st.out_runs = (int)db_get_i64(res, i, 2);
		h->st.in_band_since = db_get_i64(res, i, 3);
		h->st.level2_until = db_get_i64(res, i, 4);
		h->st.level2_used = db_get_bool(res, i, 5);
		h->st.last_capture = db_get_i64(res, i, 6);
		h->session_id = db_get_i64(res, i, 7);
		saved_of(&h->saved, h);
	}
	db_result_free(res);
	return 0;
}

static int state_save(svc_run *s, const hstate *h, pr_error *err)
{
	/* clang-format off */
	static const char sql[] =
		"insert into escalation_hosts as e (service_id, host, level, changed_at, out_runs,"
		" in_band_since, level2_until, level2_used, last_capture_at, session_id)"
		" values ($1, $2, $3, " DB_US_TO_TS("$4") ", $5,"
		" " DB_US_TO_TS("nullif($6, '0')") ", " DB_US_TO_TS("nullif($7, '0')") ", $8,"
		" " DB_US_TO_TS("nullif($9, '0')") ", nullif($10, '0')::bigint)"
		" on conflict (service_id, host) do update set level = excluded.level,"
		" changed_at = case when e.level = excluded.level then e.changed_at"
		"   else excluded.changed_at end,"
		" out_runs = excluded.out_runs, in_band_since = excluded.in_band_since,"
		" level2_until = excluded.level2_until, level2_used = excluded.level2_used,"
		" last_capture_at = excluded.last_capture_at, session_id = excluded.session_id";
	/* clang-format on */
	char sid[24], lvl[8], now[24], outr[16], ib[24], l2[24], lc[24], ses[24];
	const char *p[10] = {sid,
			     h->host,
			     lvl,
			     now,
			     outr,
			     ib,
			     l2,
			     h->st.level2_used ? "true" : "false",
			     lc,
			     ses};

	snprintf(sid, sizeof(sid), "%" PRId64, s->svc.id);
	snprintf(lvl, sizeof(lvl), "%d", h->st.level);
	snprintf(now, sizeof(now), "%" PRId64, s->now);
	snprintf(outr, sizeof(outr), "%d", h->st.out_runs);
	snprintf(ib, sizeof(ib), "%" PRId64, h->st.in_band_since);
	snprintf(l2, sizeof(l2), "%" PRId64, h->st.level2_until);
	snprintf(lc, sizeof(lc), "%" PRId64, h->st.last_capture);
	snprintf(ses, sizeof(ses), "%" PRId64, h->session_id);
	return db_exec(s->env->d, NULL, err, "storing an escalation level", sql, 10, p);
}

/* ---- reading the signals ------------------------------------------------------ */

static int query(prom_vector *out, svc_run *s, const char *expr, const char *what, pr_error *err)
{
	uint32_t timeout_ms = s->e->timeout_ms;
	prom_query q;

	memset(out, 0, sizeof(*out));
	/*
	 * Each query has its timeout, but a run has many (up to 18 a
	 * service): a Prometheus that answers nothing held a run a timeout
	 * per service (six: 30 s), so ten passed the one-minute timer's
	 * limit and the services after them were never judged.
	 */
	if (!http_cut_to_deadline(s->deadline_us, &timeout_ms, NULL))
		return pr_error_set(err, PR_ELIMIT,
				    "%s not asked: the run's %" PRIu32 " s for Prometheus "
				    "(escalate.budget_s) ran out",
				    what, s->e->budget_s);
	memset(&q, 0, sizeof(q));
	q.base_url = s->e->prometheus;
	q.expr = expr;
	q.what = what;
	q.label = s->es->host_label ? s->es->host_label : s->e->host_label;
	q.timeout_ms = timeout_ms;
	q.max_bytes = s->e->max_response_bytes;
	q.max_series = s->e->max_series;
	return prom_query_vector(out, &q, err);
}

/*
 * The host a label value names (one of the service's pprof_http
 * targets), into host; 1 when it names none (counted), < 0 on memory.
 */
static int host_of_key(char *host, size_t n, svc_run *s, const char *key, pr_error *err)
{
	pr_error e = PR_ERROR_INIT;
	int rc = collect_target_find(host, n, s->cs, key, &e);

	if (rc == PR_ENOMEM)
		return pr_error_set(err, rc, "%s", e.msg);
	if (rc < 0) {
		s->unknown_keys++;
		return 1;
	}
	return 0;
}

/* Read every signal into the hosts; PR_EIO, PR_EDATA, PR_ELIMIT fail the service. */
static int read_signals(svc_run *s, pr_error *err)
{
	prom_vector v;
	char what[120], host[260];
	int rc = 0;

	for (size_t k = 0; k < s->es->nsignals; k++) {
		snprintf(what, sizeof(what), "signal '%s'", s->es->signals[k].name);
		if ((rc = query(&v, s, s->es->signals[k].query, what, err)) < 0)
			return rc;
		for (size_t i = 0; i < v.n && rc == 0; i++) {
			hstate *h;
			/* A series of a host not the service's: left out, and the next read. */
			if ((rc = host_of_key(host, sizeof(host), s, v.v[i].key, err)) != 0) {
				rc = rc > 0 ? 0 : rc;
				continue;
			}
			if (!(h = host_get(s, host))) {
				rc = oom(err);
				break;
			}
			h->seen = true;
			if (!h->has[k] || v.v[i].value > h->value[k])
				h->value[k] = v.v[i].value;
			h->has[k] = true;
		}
		prom_vector_release(&v);
		if (rc < 0)
			return rc;
		rc = 0;
	}
	return 0;
}

/* A ceiling's values into the hosts seen (load: which 0, memory: 1). */
static int read_ceiling(svc_run *s, const config_escalate_ceiling *c, int which, pr_error *err)
{
	prom_vector v;
	char host[260];
	int rc = 0;

	if (!c->query)
		return 0;
	if ((rc = query(&v, s, c->query, which ? "the memory ceiling" : "the load ceiling", err)) <
	    0)
		return rc;
	for (size_t i = 0; i < v.n; i++) {
		if ((rc = host_of_key(host, sizeof(host), s, v.v[i].key, err)) < 0)
			break;
		/* Not one of the service's hosts: `host` holds nothing of this series. */
		if (rc > 0) {
			rc = 0;
			continue;
		}
		for (size_t j = 0; j < s->nh; j++) {
			hstate *h = &s->h[j];
			if (strcmp(h->host, host) != 0)
				continue;
			if (which) {
				h->mem = h->mem_known && h->mem > v.v[i].value ? h->mem
									       : v.v[i].value;
				h->mem_known = true;
			} else {
				h->load = h->load_known && h->load > v.v[i].value ? h->load
										  : v.v[i].value;
				h->load_known = true;
			}
		}
	}
	prom_vector_release(&v);
	return rc;
}

/* Judge each seen host's values against its band, and store them. */
static int judge(svc_run *s, pr_error *err)
{
	const config_escalate *e = s->e;
	signals_history hist;
	int rc = 0;

	const char **hosts = calloc(s->nh + 1, sizeof(*hosts));
	double *values = calloc(s->nh + 1, sizeof(*values));
	bool *outs = calloc(s->nh + 1, sizeof(*outs));

	if (!hosts || !values || !outs) {
		rc = oom(err);
		goto out;
	}
	for (size_t k = 0; k < s->es->nsignals; k++) {
		const char *sig = s->es->signals[k].name;
		size_t m = 0;
		if ((rc = signals_history_read(&hist, s->env->d, s->svc.id, sig,
					       s->now - (int64_t)e->window_s * S_US, s->now,
					       HISTORY_PER_HOST, err)) < 0)
			goto out;
		for (size_t i = 0; i < s->nh && rc == 0; i++) {
			hstate *h = &s->h[i];
			const signals_series *ser;
			escrules_judged j;
			if (!h->has[k])
				continue;
			ser = signals_history_find(&hist, h->host);
			if (escrules_judge(&j, &s->rules, ser ? ser->values : NULL,
					   ser ? ser->n : 0, h->value[k]) < 0) {
				rc = oom(err);
				break;
			}
			if (j.outside && j.z > h->zmax) {
				h->zmax = j.z;
				snprintf(h->why, sizeof(h->why),
					 "signal '%s' at %.6g, above its band (median %.6g, edge "
					 "%.6g: %.1f scales)",
					 sig, h->value[k], j.median, j.hi, j.z);
			}
			h->large |= j.large;
			h->outside |= j.outside;
			hosts[m] = h->host;
			values[m] = h->value[k];
			outs[m++] = j.outside;
		}
		signals_history_release(&hist);
		if (rc < 0 || (rc = signals_store_many(s->env->d, s->svc.id, sig, s->now, hosts,
						       values, outs, m, err)) < 0)
			goto out;
		s->r->samples += m;
	}
out:
	free(hosts);
	free(values);
	free(outs);
	return rc;
}

/* ---- deciding ------------------------------------------------------------------ */

/* Why `h` may not be profiled now (a ceiling), into why; false when it may. */
static bool over_ceiling(svc_run *s, const hstate *h, char *why, size_t n, const char **reason)
{
	const config_escalate_ceiling *load = s->es->load.query ? &s->es->load : &s->e->load;
	const config_escalate_ceiling *mem = s->es->memory.query ? &s->es->memory : &s->e->memory;
	double lmax = s->es->load.query ? s->es->load.max : s->e->load.max;
	double mmax = s->es->memory.query ? s->es->memory.max : s->e->memory.max;

	if (load->query && !h->load_known) {
		*reason = "load_unknown";
		snprintf(why, n, "no load value for the host while a load ceiling is set");
		return true;
	}
	if (load->query && h->load > lmax) {
		*reason = "load_ceiling";
		snprintf(why, n, "load %.6g above the ceiling %.6g", h->load, lmax);
		return true;
	}
	if (mem->query && !h->mem_known) {
		*reason = "memory_unknown";
		snprintf(why, n, "no memory value for the host while a memory ceiling is set");
		return true;
	}
	if (mem->query && h->mem > mmax) {
		*reason = "memory_ceiling";
		snprintf(why, n, "memory %.6g above the ceiling %.6g", h->mem, mmax);
		return true;
	}
	return false;
}

static int audit_skip(svc_run *s, const hstate *h, const char *reason, const char *why,
		      pr_error *err)
{
	json_t *dj = json_pack("{s:s,s:s,s:s,s:i}", "service", s->svc.name, "reason", reason, "why",
			       why, "level", h->st.level);
	char obj[300], *text = dj ? json_dumps(dj, JSON_COMPACT) : NULL;
	int rc;

	json_decref(dj);
	if (!text)
		return oom(err);
	snprintf(obj, sizeof(obj), "host:%s", h->host);
	rc = db_audit(s->env->d, "escalate.skipped", obj, text, err);
	free(text);
	s->r->skipped++;
	decision(s, h, "skipped", h->st.level, h->st.level, why);
	return rc;
}

static const config_escalate_plan *plan_of(svc_run *s, int level)
{
	return level == 2 ? &s->es->level2 : &s->es->level1;
}

/*
 * Ask capreq for a capture of `h` at `level`'s plan: opening a session at
 * that level when `open_level` (level 0 hosts), a capture in the host's
 * session otherwise. *admitted and the refusal into dec.
 */
static int ask(capreq_decision *dec, svc_run *s, hstate *h, int level, bool open_level,
	       const char *incident, pr_error *err)
{
	const config_escalate_plan *p = plan_of(s, level);
	const char *hosts[1] = {h->host}, *types[2] = {"cpu", "heap"};
	config_serve lim = s->env->cfg->serve;
	char reason[600];
	capreq_new r;

	memset(&r, 0, sizeof(r));
	snprintf(reason, sizeof(reason), "escalate level %d: %s", level,
		 h->why[0] ? h->why : "the host's session");
	r.service_id = s->svc.id;
	r.service = s->svc.name;
	r.hosts = hosts;
	r.nhosts = 1;
	r.seconds = p->seconds;
	r.types = types;
	/* Heap only from a host whose source pulls it: asked of the others, it would fail. */
	r.ntypes = p->heap && collect_target_pulls(s->cs, h->host, "heap") ? 2 : 1;
	r.reason = reason;
	r.source = "escalate";
	r.incident = incident && *incident ? incident : NULL;
	r.requested_by = "escalate";
	r.level = open_level ? level : 0;
	/* Inside its own session a host is captured as often as its level's plan says. */
	if (!open_level)
		lim.host_cooldown_s = p->every_s;
	return capreq_admit(dec, s->env->d, &r, &lim, err);
}

static int decide(svc_run *s, hstate *h, pr_error *err)
{
	capreq_session ses;
	capreq_decision dec;
	escrules_obs obs;
	escrules_step_out st;
	bool open = false, moved;
	char why[480];
	const char *reason;
	size_t n = 0;
	int rc;

	memset(&obs, 0, sizeof(obs));
	memset(&ses, 0, sizeof(ses));
	obs.seen = h->seen;
	obs.outside = h->outside;
	obs.large = h->large;
	obs.session_open = true;
	/* A quiet host at level 0 has nothing to follow: no query for it. */
	if (h->st.level > 0 || h->outside) {
		if ((rc = capreq_session_find(&ses, &open, s->env->d, h->host, err)) < 0)
			return rc;
		obs.session_open = open && ses.id == h->session_id;
		/*
		 * A session this job opened for this service but did not record
		 * (a run that died half-way). Another service's session on the
		 * same host is that service's to follow, lower and end.
		 */
		if (open && strcmp(ses.source, "escalate") == 0 && ses.service_id == s->svc.id)
			obs.adopt_level = ses.level;
	}
	escrules_step(&st, &h->st, &s->rules, &obs, s->now);
	if (st.ended) {
		h->session_id = 0;
		decision(s, h, "ended", st.ended_from, 0, "the session ended (expired or closed)");
		s->r->ended++;
	}
	if (st.adopted)
		h->session_id = ses.id;
	if (st.lowered) {
		if ((rc = capreq_session_level(&moved, s->env->d, h->session_id, h->host, 1,
					       "the level 2 window is over", err)) < 0)
			return rc;
		decision(s, h, "lowered", 2, 1, "the level 2 window is over");
		s->r->lowered++;
	}
	if (st.raised) {
		snprintf(why, sizeof(why), "%s for %d runs%s", h->why, h->st.out_runs,
			 h->large ? " (large)" : "");
		if ((rc = capreq_session_level(&moved, s->env->d, h->session_id, h->host, 2, why,
					       err)) < 0)
			return rc;
		decision(s, h, "raised", 1, 2, why);
		s->r->raised++;
	}
	switch (st.action) {
	case ESCRULES_NONE:
		return 0;
	case ESCRULES_DEESCALATE:
		if ((rc = capreq_sessions_end_of(&n, s->env->d, h->host, "escalate", s->svc.id,
						 "deescalated", err)) < 0)
			return rc;
		snprintf(why, sizeof(why), "back inside its band for %" PRId64 " s",
			 st.inside_us / S_US);
		decision(s, h, "deescalated", st.from, 0, why);
		s->r->deescalated++;
		h->session_id = 0;
		return 0;
	case ESCRULES_OPEN:
		if (over_ceiling(s, h, why, sizeof(why), &reason))
			return audit_skip(s, h, reason, why, err);
		if ((rc = ask(&dec, s, h, st.to, true, NULL, err)) < 0)
			return rc;
		if (!dec.admitted) {
			snprintf(why, sizeof(why), "%s (%s)", dec.refusal, h->why);
			decision(s, h, "refused", 0, 0, why);
			s->r->refused++;
			return 0;
		}
		if ((rc = capreq_session_find(&ses, &open, s->env->d, h->host, err)) < 0)
			return rc;
		escrules_opened(&h->st, &s->rules, st.to, s->now);
		open = open && ses.service_id == s->svc.id;
		h->session_id = open ? ses.id : 0;
		if (!open)
			h->st.level = 0; /* expired at once: nothing to follow */
		decision(s, h, "escalated", 0, st.to, h->why);
		s->r->escalated++;
		s->r->captures++;
		return 0;
	case ESCRULES_CAPTURE:
		break;
	}
	if (over_ceiling(s, h, why, sizeof(why), &reason))
		return audit_skip(s, h, reason, why, err);
	if ((rc = ask(&dec, s, h, h->st.level, false,
		      open && ses.id == h->session_id ? ses.incident : NULL, err)) < 0)
		return rc;
	if (!dec.admitted) {
		/* A capture still running: the next run asks again. */
		if (strcmp(dec.refusal, "host_busy") != 0) {
			snprintf(why, sizeof(why), "capture: %s", dec.refusal);
			decision(s, h, "refused", h->st.level, h->st.level, why);
			s->r->refused++;
		}
		return 0;
	}
	h->st.last_capture = s->now;
	snprintf(why, sizeof(why), "level %d plan: request %" PRId64, h->st.level, dec.id);
	decision(s, h, "capture", h->st.level, h->st.level, why);
	s->r->captures++;
	return 0;
}

/* ---- a service, the run -------------------------------------------------------- */

static void outcome(escalate_result *r, const char *name, const char *status, const char *why,
		    size_t hosts)
{
	json_t *o = json_pack("{s:s,s:I}", "status", status, "hosts", (json_int_t)hosts);

	if (o && why)
		json_object_set_new(o, "reason", json_string(why));
	json_object_set_new(r->by_service, name, o);
}

static int one_service(escalate_result *r, const job_env *env, const config_escalate_service *es,
		       int64_t deadline_us, pr_error *err)
{
	svc_run s;
	pr_error e = PR_ERROR_INIT;
	int rc;

	memset(&s, 0, sizeof(s));
	s.env = env;
	s.r = r;
	s.e = &env->cfg->escalate;
	s.es = es;
	s.cs = config_service_find(env->cfg, es->name);
	s.now = r->at_us;
	s.deadline_us = deadline_us;
	escrules_rules_of(&s.rules, s.e, es);
	if ((rc = db_service_get(env->d, &s.svc, es->name, &e)) < 0) {
		if (rc != PR_ENOTFOUND) {
			rc = pr_error_set(err, rc, "%s", e.msg);
			goto out;
		}
		outcome(r, es->name, "failed", "not a registered service", 0);
		r->failed++;
		rc = 0;
		goto out;
	}
	if (!s.svc.enabled) {
		outcome(r, es->name, "skipped", "not enabled", 0);
		goto out;
	}
	if ((rc = states_load(&s, err)) < 0)
		goto out;
	if ((rc = read_signals(&s, &e)) < 0 ||
	    (rc = read_ceiling(&s, s.es->load.query ? &s.es->load : &s.e->load, 0, &e)) < 0 ||
	    (rc = read_ceiling(&s, s.es->memory.query ? &s.es->memory : &s.e->memory, 1, &e)) < 0) {
		if (rc == PR_ENOMEM || rc == PR_EDB) {
			rc = pr_error_set(err, rc, "%s", e.msg);
			goto out;
		}
		outcome(r, es->name, "failed", e.msg, 0);
		r->failed++;
		rc = 0;
		goto out;
	}
	if (s.unknown_keys)
		job_note(&r->notes,
			 "service '%s': %zu series name a host that is not one of its pprof_http "
			 "targets; left out",
			 es->name, s.unknown_keys);
	if ((rc = judge(&s, err)) < 0)
		goto out;
	for (size_t i = 0; i < s.nh; i++) {
		hstate *h = &s.h[i];
		if ((rc = decide(&s, h, err)) < 0)
			goto out;
		bool changed = !h->stored || !unchanged(h);
		if ((h->seen || h->stored) && changed && (rc = state_save(&s, h, err)) < 0)
			goto out;
		r->hosts += h->seen;
	}
	r->services++;
	{
		size_t seen = 0;
		for (size_t i = 0; i < s.nh; i++)
			seen += s.h[i].seen;
		outcome(r, es->name, "ok", NULL, seen);
	}
out:
	free(s.h);
	db_service_release(&s.svc);
	return rc;
}

static bool wanted(const escalate_opts *o, const char *name)
{
	if (!o || !o->nonly)
		return true;
	for (size_t i = 0; i < o->nonly; i++)
		if (strcmp(o->only[i], name) == 0)
			return true;
	return false;
}

/*
 * The database's clock, in microseconds: every run's samples, bands and
 * windows are on it, whichever machine runs escalate and however its own
 * clock steps (a step back of ten minutes left the stored samples in the
 * future, out of the band's window, and the host unjudged).
 */
static int db_clock_us(int64_t *out, db *d, pr_error *err)
{
	static const char sql[] = "select floor(extract(epoch from now()) * 1000000)::bigint";
	struct pg_result *res = NULL;
	int rc;

	if ((rc = db_exec(d, &res, err, "reading the database's clock", sql, 0, NULL)) < 0)
		return rc;
	*out = db_get_i64(res, 0, 0);
	db_result_free(res);
	return 0;
}

int escalate_run(escalate_result *out, const job_env *env, const escalate_opts *o, pr_error *err)
{
	const config_escalate *e = &env->cfg->escalate;
	json_t *detail = NULL;
	size_t expired = 0, pruned = 0;
	bool locked = false, begun = false;
	int64_t deadline_us;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->status = "ok";
	out->at_us = job_now(env);
	if (!(out->by_service = json_object()) || !(out->decisions = json_array()))
		return oom(err);
	if (!e->prometheus)
		return pr_error_set(err, PR_EUSAGE,
				    "escalate: the config sets no "
				    "escalate.prometheus (the URL of Prometheus's HTTP API)");
	if (!e->nservices)
		return pr_error_set(err, PR_EUSAGE,
				    "escalate: no service has signals "
				    "(escalate.services.NAME.signals in the config)");
	for (size_t i = 0; o && i < o->nonly; i++)
		if (!config_escalate_find(env->cfg, o->only[i]))
			return pr_error_set(err, PR_ENOTFOUND,
					    "service '%s' has no escalate signals in the config",
					    o->only[i]);
	if ((rc = db_try_advisory_lock(env->d, LOCK_NAME, &locked, err)) < 0)
		return rc;
	if (!locked) {
		out->status = "locked";
		job_note(&out->notes, "another escalate run holds the lock; this one did nothing");
		return 0;
	}
	/* A clock a test or a replay sets stays theirs. */
	if (!env->now_us && (rc = db_clock_us(&out->at_us, env->d, err)) < 0)
		goto out;
	if ((rc = runs_begin(&out->run_id, env->d, "escalate", 0, NULL, err)) < 0)
		goto out;
	begun = true;
	deadline_us = (int64_t)(time_mono() * 1e6) + (int64_t)e->budget_s * S_US;
	/* Sessions end at their expiry before anything is decided on them. */
	if ((rc = capreq_sessions_expire(&expired, env->d, err)) < 0)
		goto out;
	for (size_t i = 0; i < e->nservices; i++) {
		if (!wanted(o, e->services[i].name))
			continue;
		if ((rc = one_service(out, env, &e->services[i], deadline_us, err)) < 0)
			goto out;
	}
	if ((rc = signals_prune(&pruned, env->d, out->at_us - (int64_t)e->keep_days * 86400 * S_US,
				PRUNE_BATCH, err)) < 0)
		goto out;
	if (out->failed)
		out->status = "failed";
out:
	if (begun) {
		pr_error ignore = PR_ERROR_INIT;
		detail = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:O}", "services",
				   (json_int_t)out->services, "failed", (json_int_t)out->failed,
				   "hosts", (json_int_t)out->hosts, "samples",
				   (json_int_t)out->samples, "escalated",
				   (json_int_t)out->escalated, "raised", (json_int_t)out->raised,
				   "deescalated", (json_int_t)out->deescalated, "ended",
				   (json_int_t)out->ended, "captures", (json_int_t)out->captures,
				   "refused", (json_int_t)out->refused, "skipped",
				   (json_int_t)out->skipped, "by_service", out->by_service);
		if (rc < 0 && detail)
			json_object_set_new(detail, "error", json_string(err->msg));
		runs_finish(env->d, out->run_id, rc < 0 ? "failed" : out->status, detail,
			    rc < 0 ? &ignore : err);
		json_decref(detail);
	}
	if (locked)
		db_advisory_unlock(env->d, LOCK_NAME);
	return rc;
}
