/*
 * escreplay.c: the escalation rules replayed over stored signal samples
 * (see escreplay.h). Reads signal_samples through signals.h; stores
 * nothing.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/escreplay.h"
#include "common/timeutil.h"
#include "jobs/collect.h"
#include "jobs/escrules.h"
#include "jobs/signals.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_US ((int64_t)1000000)
#define CHUNK_US (3600 * S_US)
#define CHUNK_ROWS ((size_t)1000000)
/* As escalate: a band is made from at most this many newest samples of a host. */
#define HISTORY_PER_HOST 10000

/* One signal of one host: the samples this replay judged inside, oldest first. */
typedef struct hist {
	int64_t *at;
	double *v;
	size_t off, n, cap; /* the live entries are [off, off + n) */
} hist;

/* A host as admission sees it, whatever service it is in: its session and requests. */
typedef struct machine {
	char *name;
	bool open, started, requested;
	size_t open_svc;                /* the service whose session is open */
	int64_t expires, last_start, last_request, busy_until;
} machine;

typedef struct rhost {
	char *name;
	size_t machine;
	hist *sig;                      /* one per signal of the service */
	escrules_host st;
	bool seen, outside, large, in_range;
	double zmax;
	char why[300];
	int64_t level_us[3];
} rhost;

typedef struct escal {
	int64_t at;
	const char *host;               /* the rhost's name (stable: the name is its own) */
	int level;
} escal;

typedef struct rsvc {
	const config_escalate_service *es;
	const config_service *cs; /* its sources, for where heap is pulled */
	escrules_rules rules;
	db_service svc;
	const char *status;
	bool registered, has_run;
	rhost *h;                       /* by name */
	size_t nh, caph;
	size_t samples, runs, open_sessions;
	int64_t last_run;
	size_t opened[3], raised, lowered, deescalated, ended, captures[3], heap;
	uint64_t cpu_seconds;
	json_t *refused, *events;
	size_t events_left_off;
	escal *esc;
	size_t nesc, capesc;
} rsvc;

typedef struct replay {
	const job_env *env;
	const config_escalate *e;
	config_serve lim;
	const escreplay_opts *o;
	rsvc *s;
	size_t ns;
	machine *m;
	size_t nm, capm;
	size_t *morder;                 /* machine indexes by name */
	size_t open_total, samples;
} replay;

static int oom(pr_error *err)
{
	return pr_error_set(err, PR_ENOMEM, "out of memory");
}

/* ---- hosts and their histories ------------------------------------------------------ */

static void hist_release(hist *h)
{
	free(h->at);
	free(h->v);
}

/* Drop what is older than `from`, and the oldest beyond the cap. */
static void hist_trim(hist *h, int64_t from)
{
	while (h->n && (h->at[h->off] < from || h->n > HISTORY_PER_HOST)) {
		h->off++;
		h->n--;
	}
}

static int hist_push(hist *h, int64_t at, double v)
{
	if (h->off && h->off + h->n == h->cap) {
		memmove(h->at, h->at + h->off, h->n * sizeof(*h->at));
		memmove(h->v, h->v + h->off, h->n * sizeof(*h->v));
		h->off = 0;
	}
	if (h->off + h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 64;
		int64_t *a = realloc(h->at, cap * sizeof(*a));
		double *w;
		if (!a)
			return -1;
		h->at = a;
		if (!(w = realloc(h->v, cap * sizeof(*w))))
			return -1;
		h->v = w;
		h->cap = cap;
	}
	h->at[h->off + h->n] = at;
	h->v[h->off + h->n] = v;
	h->n++;
	return 0;
}

/* The machine named `name`, added when new; SIZE_MAX when memory fails. */
static size_t machine_get(replay *rp, const char *name)
{
	size_t lo = 0, hi = rp->nm, k;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(rp->m[rp->morder[mid]].name, name);
		if (c == 0)
			return rp->morder[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (rp->nm == rp->capm) {
		size_t cap = rp->capm ? 2 * rp->capm : 64;
		machine *m = realloc(rp->m, cap * sizeof(*m));
		size_t *ord;
		if (!m)
			return SIZE_MAX;
		rp->m = m;
		if (!(ord = realloc(rp->morder, cap * sizeof(*ord))))
			return SIZE_MAX;
		rp->morder = ord;
		rp->capm = cap;
	}
	k = rp->nm;
	memset(&rp->m[k], 0, sizeof(rp->m[k]));
	if (!(rp->m[k].name = strdup(name)))
		return SIZE_MAX;
	memmove(rp->morder + lo + 1, rp->morder + lo, (rp->nm - lo) * sizeof(*rp->morder));
	rp->morder[lo] = k;
	rp->nm++;
	return k;
}

/* The host `name` of service `s`, added in name order when new; NULL when memory fails. */
static rhost *host_get(replay *rp, rsvc *s, const char *name)
{
	size_t lo = 0, hi = s->nh, m;
	rhost *h;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(s->h[mid].name, name);
		if (c == 0)
			return &s->h[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (s->nh == s->caph) {
		size_t cap = s->caph ? 2 * s->caph : 16;
		rhost *n = realloc(s->h, cap * sizeof(*n));
		if (!n)
			return NULL;
		s->h = n;
		s->caph = cap;
	}
	if ((m = machine_get(rp, name)) == SIZE_MAX)
		return NULL;
	memmove(s->h + lo + 1, s->h + lo, (s->nh - lo) * sizeof(*s->h));
	h = &s->h[lo];
	memset(h, 0, sizeof(*h));
	s->nh++;
	h->machine = m;
	h->name = rp->m[m].name;
	if (!(h->sig = calloc(s->es->nsignals, sizeof(*h->sig)))) {
		memmove(s->h + lo, s->h + lo + 1, (s->nh - lo - 1) * sizeof(*s->h));
		s->nh--;
		return NULL;
	}
	return h;
}

/* ---- what happened ------------------------------------------------------------------ */

static void event(rsvc *s, int64_t at, const rhost *h, const char *action, int from, int to,
		  const char *why)
{
	char when[TIME_FMT_MAX];

	if (json_array_size(s->events) >= ESCREPLAY_EVENTS_MAX) {
		s->events_left_off++;
		return;
	}
	time_format(when, at);
	json_array_append_new(s->events,
			      json_pack("{s:s,s:s,s:s,s:i,s:i,s:s}", "at", when, "host", h->name,
					"action", action, "from", from, "to", to, "why", why));
}

static int escalation(rsvc *s, int64_t at, const rhost *h, int level)
{
	if (s->nesc == s->capesc) {
		size_t cap = s->capesc ? 2 * s->capesc : 16;
		escal *n = realloc(s->esc, cap * sizeof(*n));
		if (!n)
			return -1;
		s->esc = n;
		s->capesc = cap;
	}
	s->esc[s->nesc].at = at;
	s->esc[s->nesc].host = h->name;
	s->esc[s->nesc++].level = level;
	return 0;
}

static void refused(rsvc *s, const char *why)
{
	json_t *v = json_object_get(s->refused, why);

	json_object_set_new(s->refused, why,
			    json_integer(v ? json_integer_value(v) + 1 : 1));
}

/* ---- admission, in memory ------------------------------------------------------------ */

static const config_escalate_plan *plan_of(const rsvc *s, int level)
{
	return level == 2 ? &s->es->level2 : &s->es->level1;
}

/*
 * What capreq_admit would refuse for a capture of `m` at `at` (opening a
 * session when `open`), or NULL when it would admit; as check_host's order.
 */
static const char *refusal(const replay *rp, const rsvc *s, const machine *m, bool open,
			   uint32_t cooldown_s, int64_t at)
{
	if (open) {
		if (m->open)
			return "host_elevated";
		if (rp->lim.reescalate_s && m->started &&
		    at - m->last_start < (int64_t)rp->lim.reescalate_s * S_US)
			return "reescalate";
		if (s->open_sessions >= rp->lim.max_sessions_service)
			return "service_cap";
		if (rp->open_total >= rp->lim.max_sessions_fleet)
			return "fleet_cap";
	}
	if (m->busy_until > at)
		return "host_busy";
	if (cooldown_s && m->requested && at - m->last_request < (int64_t)cooldown_s * S_US)
		return "host_cooldown";
	return NULL;
}

static void request(rsvc *s, machine *m, const config_escalate_plan *p, int64_t at)
{
	m->requested = true;
	m->last_request = at;
	m->busy_until = at + (int64_t)p->seconds * S_US;
	s->cpu_seconds += p->seconds;
	/*
	 * As escalate asks: heap only of a host whose source pulls it. A
	 * configuration without the service's sources (a replay of stored
	 * samples alone) cannot say: the plan's heap is counted.
	 */
	s->heap += p->heap && (!s->cs || collect_target_pulls(s->cs, m->name, "heap"));
}

static void session_close(replay *rp, machine *m)
{
	if (!m->open)
		return;
	m->open = false;
	rp->s[m->open_svc].open_sessions--;
	rp->open_total--;
}

/* ---- a run ----------------------------------------------------------------------------- */

/* One host of service `s` (index si) at run `at`: the rules, then what admission says. */
static int decide(replay *rp, size_t si, rhost *h, int64_t at)
{
	rsvc *s = &rp->s[si];
	machine *m = &rp->m[h->machine];
	escrules_obs obs;
	escrules_step_out st;
	const char *no;
	char why[400];

	memset(&obs, 0, sizeof(obs));
	obs.seen = h->seen;
	obs.outside = h->outside;
	obs.large = h->large;
	obs.session_open = m->open && m->open_svc == si;
	escrules_step(&st, &h->st, &s->rules, &obs, at);
	if (st.ended) {
		s->ended++;
		event(s, at, h, "ended", st.ended_from, 0, "the session ended (its hard expiry)");
	}
	if (st.lowered) {
		s->lowered++;
		event(s, at, h, "lowered", 2, 1, "the level 2 window is over");
	}
	if (st.raised) {
		s->raised++;
		snprintf(why, sizeof(why), "%s for %d runs%s", h->why, h->st.out_runs,
			 h->large ? " (large)" : "");
		event(s, at, h, "raised", 1, 2, why);
	}
	switch (st.action) {
	case ESCRULES_NONE:
		return 0;
	case ESCRULES_DEESCALATE:
		session_close(rp, m);
		s->deescalated++;
		snprintf(why, sizeof(why), "back inside its band for %lld s",
			 (long long)(st.inside_us / S_US));
		event(s, at, h, "deescalated", st.from, 0, why);
		return 0;
	case ESCRULES_OPEN:
		if ((no = refusal(rp, s, m, true, rp->lim.host_cooldown_s, at))) {
			refused(s, no);
			snprintf(why, sizeof(why), "%s (%s)", no, h->why);
			event(s, at, h, "refused", 0, 0, why);
			return 0;
		}
		m->open = true;
		m->open_svc = si;
		m->started = true;
		m->last_start = at;
		m->expires = at + (int64_t)rp->lim.session_max_s * S_US;
		s->open_sessions++;
		rp->open_total++;
		request(s, m, plan_of(s, st.to), at);
		escrules_opened(&h->st, &s->rules, st.to, at);
		if (m->expires <= at) {
			session_close(rp, m);
			h->st.level = 0; /* expired at once: nothing to follow */
		}
		s->opened[st.to]++;
		s->captures[st.to]++;
		event(s, at, h, "escalated", 0, st.to, h->why);
		return escalation(s, at, h, st.to);
	case ESCRULES_CAPTURE:
		break;
	}
	if ((no = refusal(rp, s, m, false, plan_of(s, h->st.level)->every_s, at))) {
		/* A capture still running: the next run asks again. */
		if (strcmp(no, "host_busy") != 0) {
			refused(s, no);
			snprintf(why, sizeof(why), "capture: %s", no);
			event(s, at, h, "refused", h->st.level, h->st.level, why);
		}
		return 0;
	}
	request(s, m, plan_of(s, h->st.level), at);
	h->st.last_capture = at;
	s->captures[h->st.level]++;
	return 0;
}

static rsvc *svc_of(replay *rp, int64_t id, size_t *si)
{
	for (size_t i = 0; i < rp->ns; i++)
		if (rp->s[i].registered && rp->s[i].svc.id == id) {
			*si = i;
			return &rp->s[i];
		}
	return NULL;
}

static int signal_of(const rsvc *s, const char *name)
{
	for (size_t k = 0; k < s->es->nsignals; k++)
		if (strcmp(s->es->signals[k].name, name) == 0)
			return (int)k;
	return -1;
}

/* The run at `at`: rows [i, j) of `r`, judged; decided when in the range. */
static int one_run(replay *rp, const signals_rows *r, size_t i, size_t j, int64_t at,
		   pr_error *err)
{
	bool in_range = at > rp->o->since_us;
	int64_t from = at - (int64_t)rp->e->window_s * S_US;

	for (size_t k = 0; k < rp->ns; k++) {
		rp->s[k].has_run = false;
		for (size_t h = 0; h < rp->s[k].nh; h++) {
			rhost *x = &rp->s[k].h[h];
			x->seen = x->outside = x->large = false;
			x->zmax = 0;
			x->why[0] = '\0';
		}
	}
	for (size_t k = i; k < j; k++) {
		size_t si;
		rsvc *s = svc_of(rp, r->service_id[k], &si);
		double v = r->value[k];
		escrules_judged jd;
		rhost *h;
		hist *hs;
		int sig;
		if (!s || (sig = signal_of(s, r->signal[k])) < 0)
			continue;
		/* Two series of one host: the larger value, as escalate keeps. */
		while (k + 1 < j && r->service_id[k + 1] == r->service_id[k] &&
		       strcmp(r->host[k + 1], r->host[k]) == 0 &&
		       strcmp(r->signal[k + 1], r->signal[k]) == 0) {
			k++;
			if (r->value[k] > v)
				v = r->value[k];
		}
		if (!(h = host_get(rp, s, r->host[k])))
			return oom(err);
		hs = &h->sig[sig];
		hist_trim(hs, from);
		if (escrules_judge(&jd, &s->rules, hs->v ? hs->v + hs->off : NULL, hs->n, v) < 0)
			return oom(err);
		if (!jd.outside && hist_push(hs, at, v) < 0)
			return oom(err);
		if (jd.outside && jd.z > h->zmax) {
			h->zmax = jd.z;
			snprintf(h->why, sizeof(h->why),
				 "signal '%.64s' at %.6g, above its band (median %.6g, edge %.6g: "
				 "%.1f scales)",
				 r->signal[k], v, jd.median, jd.hi, jd.z);
		}
		h->seen = true;
		h->outside |= jd.outside;
		h->large |= jd.large;
		s->has_run = true;
		if (in_range) {
			h->in_range = true;
			s->samples++;
			rp->samples++;
		}
	}
	if (!in_range)
		return 0;
	/* Sessions end at their expiry before anything is decided on them. */
	for (size_t k = 0; k < rp->nm; k++)
		if (rp->m[k].open && rp->m[k].expires <= at)
			session_close(rp, &rp->m[k]);
	for (size_t si = 0; si < rp->ns; si++) {
		rsvc *s = &rp->s[si];
		int64_t dt;
		if (!s->has_run)
			continue;
		dt = s->last_run ? at - s->last_run : 0;
		if (dt > ESCREPLAY_GAP_MAX_S * S_US)
			dt = ESCREPLAY_GAP_MAX_S * S_US;
		for (size_t h = 0; h < s->nh; h++)
			s->h[h].level_us[s->h[h].st.level] += dt;
		s->last_run = at;
		s->runs++;
		for (size_t h = 0; h < s->nh; h++)
			if (decide(rp, si, &s->h[h], at) < 0)
				return oom(err);
	}
	return 0;
}

/* ---- the report ------------------------------------------------------------------------ */

static json_t *first_json(const rsvc *s)
{
	char when[TIME_FMT_MAX];

	if (!s->nesc)
		return json_null();
	time_format(when, s->esc[0].at);
	return json_pack("{s:s,s:s,s:i}", "at", when, "host", s->esc[0].host, "level",
			 s->esc[0].level);
}

static json_t *service_json(const rsvc *s, int64_t until)
{
	int64_t l1 = 0, l2 = 0, tail = 0;
	size_t hosts = 0;

	if (s->last_run) {
		tail = until - s->last_run;
		if (tail > ESCREPLAY_GAP_MAX_S * S_US)
			tail = ESCREPLAY_GAP_MAX_S * S_US;
	}
	for (size_t h = 0; h < s->nh; h++) {
		l1 += s->h[h].level_us[1] + (s->h[h].st.level == 1 ? tail : 0);
		l2 += s->h[h].level_us[2] + (s->h[h].st.level == 2 ? tail : 0);
	}
	for (size_t h = 0; h < s->nh; h++)
		hosts += s->h[h].in_range;
	return json_pack("{s:s,s:s,s:I,s:I,s:I,s:{s:I,s:I},s:{s:I,s:I},s:I,s:I,s:I,s:I,s:O,"
			 "s:{s:f,s:f},s:{s:I,s:I,s:I,s:I},s:o,s:O,s:I}",
			 "service", s->es->name, "status", s->status, "hosts", (json_int_t)hosts,
			 "samples", (json_int_t)s->samples, "runs", (json_int_t)s->runs,
			 "escalations", "level1", (json_int_t)s->opened[1], "level2",
			 (json_int_t)(s->opened[2] + s->raised), "opened", "level1",
			 (json_int_t)s->opened[1], "level2", (json_int_t)s->opened[2], "raised",
			 (json_int_t)s->raised, "lowered", (json_int_t)s->lowered, "deescalated",
			 (json_int_t)s->deescalated, "ended", (json_int_t)s->ended, "refused",
			 s->refused, "host_minutes", "level1", (double)l1 / (60.0 * S_US), "level2",
			 (double)l2 / (60.0 * S_US), "captures", "level1",
			 (json_int_t)s->captures[1], "level2", (json_int_t)s->captures[2], "heap",
			 (json_int_t)s->heap, "cpu_seconds", (json_int_t)s->cpu_seconds,
			 "first_escalation", first_json(s), "events", s->events, "events_left_off",
			 (json_int_t)s->events_left_off);
}

static json_t *incident_json(const replay *rp, size_t k, int64_t window)
{
	const char *name = rp->o->incident_service[k];
	int64_t t = rp->o->incident_at_us[k];
	const rsvc *s = NULL;
	char when[TIME_FMT_MAX], at[TIME_FMT_MAX];
	json_t *o;

	for (size_t i = 0; i < rp->ns; i++)
		if (strcmp(rp->s[i].es->name, name) == 0 && rp->s[i].samples)
			s = &rp->s[i];
	time_format(when, t);
	o = json_pack("{s:s,s:s,s:b,s:b,s:I,s:n}", "service", name, "time", when, "signals",
		      s != NULL, "escalated", 0, "window_s", (json_int_t)(window / S_US),
		      "first");
	for (size_t i = 0; o && s && i < s->nesc; i++) {
		if (s->esc[i].at < t - window || s->esc[i].at > t + window)
			continue;
		time_format(at, s->esc[i].at);
		json_object_set_new(o, "escalated", json_true());
		json_object_set_new(o, "first",
				    json_pack("{s:s,s:s,s:i,s:I}", "at", at, "host", s->esc[i].host,
					      "level", s->esc[i].level, "offset_s",
					      (json_int_t)((s->esc[i].at - t) / S_US)));
		break;
	}
	return o;
}

static int report(json_t **out, replay *rp, const char *reason, pr_error *err)
{
	const escreplay_opts *o = rp->o;
	int64_t window = o->window_us > 0 ? o->window_us : ESCREPLAY_WINDOW_DEFAULT_S * S_US;
	char since[TIME_FMT_MAX], until[TIME_FMT_MAX], caps[300];
	json_t *doc, *svcs, *incs;

	time_format(since, o->since_us);
	time_format(until, o->until_us);
	snprintf(caps, sizeof(caps),
		 "applied in memory: one session a host, reescalate_s %u, max_sessions_service "
		 "%u, max_sessions_fleet %u, session_max_s %u, host_cooldown_s %u",
		 rp->lim.reescalate_s, rp->lim.max_sessions_service, rp->lim.max_sessions_fleet,
		 rp->lim.session_max_s, rp->lim.host_cooldown_s);
	doc = json_pack("{s:b,s:s,s:s,s:I,s:s,s:[s],s:I,s:[],s:[]}", "replayed", reason == NULL,
			"since", since, "until", until, "samples", (json_int_t)rp->samples, "caps",
			caps, "not_replayed",
			"the load and memory ceilings: their values are not stored", "window_s",
			(json_int_t)(window / S_US), "services", "incidents");
	if (!doc)
		return oom(err);
	if (reason)
		json_object_set_new(doc, "reason", json_string(reason));
	svcs = json_object_get(doc, "services");
	incs = json_object_get(doc, "incidents");
	for (size_t i = 0; i < rp->ns; i++)
		if (json_array_append_new(svcs, service_json(&rp->s[i], o->until_us)) < 0)
			goto oom;
	for (size_t k = 0; k < o->nincidents; k++)
		if (json_array_append_new(incs, incident_json(rp, k, window)) < 0)
			goto oom;
	*out = doc;
	return 0;
oom:
	json_decref(doc);
	return oom(err);
}

/* ---- the replay ------------------------------------------------------------------------ */

static void replay_release(replay *rp)
{
	for (size_t i = 0; i < rp->ns; i++) {
		rsvc *s = &rp->s[i];
		for (size_t h = 0; h < s->nh; h++) {
			for (size_t k = 0; k < s->es->nsignals; k++)
				hist_release(&s->h[h].sig[k]);
			free(s->h[h].sig);
		}
		free(s->h);
		free(s->esc);
		json_decref(s->refused);
		json_decref(s->events);
		db_service_release(&s->svc);
	}
	free(rp->s);
	for (size_t k = 0; k < rp->nm; k++)
		free(rp->m[k].name);
	free(rp->m);
	free(rp->morder);
}

/* The services of the escalate section: registered and enabled ones are replayed. */
static int services_load(replay *rp, int64_t **ids, size_t *nids, pr_error *err)
{
	int rc;

	if (!(rp->s = calloc(rp->e->nservices, sizeof(*rp->s))) ||
	    !(*ids = calloc(rp->e->nservices, sizeof(**ids))))
		return oom(err);
	for (size_t i = 0; i < rp->e->nservices; i++) {
		rsvc *s = &rp->s[rp->ns++];
		pr_error e = PR_ERROR_INIT;
		s->es = &rp->e->services[i];
		s->cs = config_service_find(rp->env->cfg, s->es->name);
		escrules_rules_of(&s->rules, rp->e, s->es);
		if (!(s->refused = json_object()) || !(s->events = json_array()))
			return oom(err);
		if ((rc = db_service_get(rp->env->d, &s->svc, s->es->name, &e)) < 0) {
			if (rc != PR_ENOTFOUND)
				return pr_error_set(err, rc, "%s", e.msg);
			s->status = "not registered";
			continue;
		}
		if (!s->svc.enabled) {
			s->status = "not enabled";
			continue;
		}
		s->registered = true;
		s->status = "no samples";
		(*ids)[(*nids)++] = s->svc.id;
	}
	return 0;
}

int escreplay_run(json_t **out, const job_env *env, const escreplay_opts *o, pr_error *err)
{
	replay rp;
	signals_rows rows;
	int64_t *ids = NULL;
	size_t nids = 0;
	int rc = 0;

	*out = NULL;
	memset(&rp, 0, sizeof(rp));
	memset(&rows, 0, sizeof(rows));
	rp.env = env;
	rp.e = &env->cfg->escalate;
	rp.lim = env->cfg->serve;
	rp.o = o;
	if (!rp.e->nservices) {
		rc = report(out, &rp, "the config has no escalate services", err);
		goto out;
	}
	if ((rc = services_load(&rp, &ids, &nids, err)) < 0)
		goto out;
	/* Judging starts one band window early, so that the first runs have their history. */
	for (int64_t from = o->since_us - (int64_t)rp.e->window_s * S_US;
	     nids && from <= o->until_us; from += CHUNK_US) {
		int64_t to = from + CHUNK_US;
		if (to > o->until_us + 1)
			to = o->until_us + 1;
		if ((rc = signals_range_read(&rows, env->d, ids, nids, from, to, CHUNK_ROWS,
					     err)) < 0)
			goto out;
		for (size_t i = 0, j; i < rows.n; i = j) {
			for (j = i + 1; j < rows.n && rows.at_us[j] == rows.at_us[i]; j++)
				;
			if ((rc = one_run(&rp, &rows, i, j, rows.at_us[i], err)) < 0)
				goto out;
		}
		signals_rows_release(&rows);
	}
	for (size_t i = 0; i < rp.ns; i++)
		if (rp.s[i].samples)
			rp.s[i].status = "replayed";
	rc = report(out, &rp,
		    rp.samples ? NULL : "no signal samples of the escalate services in the range",
		    err);
out:
	signals_rows_release(&rows);
	free(ids);
	replay_release(&rp);
	return rc;
}
