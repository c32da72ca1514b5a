/*
 * backtest.c: the nightly analysis replayed over stored history (see
 * backtest.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/backtest.h"
#include "baselines/analysis.h"
#include "common/timeutil.h"
#include "jobs/escreplay.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DAY_US (86400LL * 1000000LL)
#define BACKTEST_MAX_NIGHTS 366

void backtest_incidents_free(backtest_incident *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].service);
		free(v[i].function);
		free(v[i].release);
		free(v[i].where);
	}
	free(v);
}

static char *dup_key(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s && *s ? strdup(s) : NULL;
}

/* One line: {"service", "time", "function" and/or "release"}. */
static int parse_line(backtest_incident *out, const char *line, size_t len, const char *where,
		      pr_error *err)
{
	json_error_t jerr;
	json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	const char *when, *key;
	json_t *v;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!o || !json_is_object(o)) {
		rc = pr_error_set(err, PR_EDATA, "%s: not a JSON object%s%s", where, o ? "" : ": ",
				  o ? "" : pr_json_reason(jerr.text));
		goto out;
	}
	json_object_foreach(o, key, v) {
		if (strcmp(key, "service") && strcmp(key, "function") && strcmp(key, "release") &&
		    strcmp(key, "time") && strcmp(key, "note")) {
			rc = pr_error_set(err, PR_EDATA, "%s: unknown key '%s'", where, key);
			goto out;
		}
		if (!json_is_string(v)) {
			rc = pr_error_set(err, PR_EDATA, "%s: '%s' is not a string", where, key);
			goto out;
		}
	}
	when = json_string_value(json_object_get(o, "time"));
	out->service = dup_key(o, "service");
	out->function = dup_key(o, "function");
	out->release = dup_key(o, "release");
	if (!out->service || (!out->function && !out->release)) {
		rc = pr_error_set(err, PR_EDATA, "%s: needs \"service\" and a \"function\" or a"
				  " \"release\"", where);
		goto out;
	}
	if (!when || time_parse(&out->at_us, when) < 0) {
		rc = pr_error_set(err, PR_EDATA, "%s: \"time\" is not an ISO 8601 time", where);
		goto out;
	}
out:
	json_decref(o);
	return rc;
}

int backtest_incidents_parse(backtest_incident **out, size_t *n, const char *text, size_t len,
			     const char *name, pr_error *err)
{
	backtest_incident *v = NULL;
	size_t cap = 0, k = 0, line = 0;
	int rc = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < len; line++) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) : len, j = i;
		char where[600];

		while (j < end && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r'))
			j++;
		if (j < end) {
			if (k == cap) {
				backtest_incident *g;
				cap = cap ? 2 * cap : 16;
				if (!(g = realloc(v, cap * sizeof(*v)))) {
					rc = pr_error_set(err, PR_ENOMEM, "out of memory");
					goto out;
				}
				v = g;
			}
			snprintf(where, sizeof(where), "line %zu of '%.500s'", line + 1, name);
			rc = parse_line(&v[k], text + i, end - i, where, err);
			k++;
			if (rc == 0 && !(v[k - 1].where = strdup(where)))
				rc = pr_error_set(err, PR_ENOMEM, "out of memory");
			if (rc < 0)
				goto out;
		}
		i = end + 1;
	}
	*out = v;
	*n = k;
	v = NULL;
out:
	backtest_incidents_free(v, k);
	return rc;
}

/* Does regression `f` belong to incident `in`? */
static bool matches(const backtest_incident *in, const finding *f, int64_t night_end)
{
	return strcmp(in->service, f->service) == 0 && in->at_us <= night_end &&
	       (!in->function || strcmp(in->function, f->function) == 0) &&
	       (!in->release || strcmp(in->release, f->current_release) == 0);
}

/* Is there an incident of `service` under way at `night_end`? */
static bool covered(const backtest_opts *o, const char *service, int64_t night_end)
{
	for (size_t i = 0; i < o->nincidents; i++)
		if (strcmp(o->incidents[i].service, service) == 0 &&
		    o->incidents[i].at_us <= night_end)
			return true;
	return false;
}

/* One night: every enabled service's window, one family; nothing stored. */
static int one_night(backtest_result *r, const job_env *env, const backtest_opts *o,
		     const db_service *svcs, size_t nsvcs, int64_t end, int64_t night,
		     pr_error *err)
{
	analysis_opts ao = env->cfg->analysis;
	analysis a;
	size_t regressions = 0;
	char when[TIME_FMT_MAX];
	int rc = 0;

	ao.at_us = end;
	analysis_init(&a, &ao);
	for (size_t i = 0; i < nsvcs; i++) {
		const config_service *cs = config_service_find(env->cfg, svcs[i].name);
		size_t before = a.services;
		if (!svcs[i].enabled)
			continue;
		r->service_nights++;
		for (size_t t = 0; t < (cs ? cs->ntypes : 1); t++) {
			analysis_target tg = {svcs[i].id, svcs[i].name, cs ? cs->types[t] : "cpu",
					      NULL, end - night, end + 1, NULL, NULL,
					      config_service_week(cs), config_service_warmup(cs)};
			if ((rc = analysis_add(&a, env->d, &tg, false, err)) < 0)
				goto out;
		}
		if (a.services > before) {
			r->analysed++;
			r->clean_service_nights += !covered(o, svcs[i].name, end);
		}
	}
	if ((rc = analysis_finish(&a, err)) < 0)
		goto out;
	for (size_t i = 0; i < a.ntests && a.tests[i].significant; i++) {
		const finding *f = &a.tests[i];
		bool real = false;
		if (f->direction != FINDING_REGRESSION)
			continue;
		regressions++;
		for (size_t k = 0; k < o->nincidents; k++) {
			json_t *rec = json_array_get(r->incidents, k);
			if (!matches(&o->incidents[k], f, end))
				continue;
			real = true;
			if (json_is_true(json_object_get(rec, "found")))
				continue;
			time_format(when, end);
			json_object_set_new(rec, "found", json_true());
			json_object_set_new(rec, "night", json_string(when));
			json_object_set_new(rec, "finding", analysis_finding_json(f));
		}
		/* A regression of a service with no incident under way is a false alarm. */
		if (!real && !covered(o, f->service, end))
			r->false_regressions++;
	}
	r->regressions += regressions;
	time_format(when, end);
	json_array_append_new(r->nights_json, json_pack("{s:s,s:I,s:I}", "night_end", when,
		"analysed", (json_int_t)a.services, "regressions", (json_int_t)regressions));
out:
	analysis_release(&a);
	return rc;
}

/* The escalation rules replayed over the range's signal samples. */
static int escalation(backtest_result *out, const job_env *env, const backtest_opts *o,
		      pr_error *err)
{
	escreplay_opts eo;
	const char **svc = NULL;
	int64_t *at = NULL;
	int rc;

	memset(&eo, 0, sizeof(eo));
	if (o->nincidents && (!(svc = calloc(o->nincidents, sizeof(*svc))) ||
			      !(at = calloc(o->nincidents, sizeof(*at))))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t k = 0; k < o->nincidents; k++) {
		svc[k] = o->incidents[k].service;
		at[k] = o->incidents[k].at_us;
	}
	eo.since_us = o->since_us;
	eo.until_us = o->until_us;
	eo.window_us = o->escalation_window_us;
	eo.incident_service = svc;
	eo.incident_at_us = at;
	eo.nincidents = o->nincidents;
	rc = escreplay_run(&out->escalation, env, &eo, err);
out:
	free(svc);
	free(at);
	return rc;
}

/* Incident `in` names a service the role can see and a time in [since, until]. */
static int check_incident(const job_env *env, const backtest_opts *o, const backtest_incident *in,
			  pr_error *err)
{
	const char *where = in->where ? in->where : "an incident";
	pr_error e = PR_ERROR_INIT;
	db_service svc = {0};
	int rc;

	if (in->at_us < o->since_us || in->at_us > o->until_us) {
		char when[TIME_FMT_MAX], since[TIME_FMT_MAX], until[TIME_FMT_MAX];
		time_format(when, in->at_us);
		time_format(since, o->since_us);
		time_format(until, o->until_us);
		return pr_error_set(err, PR_EDATA,
				    "%s: time %s is outside the replayed range %s to %s", where,
				    when, since, until);
	}
	rc = db_service_get(env->d, &svc, in->service, &e);
	db_service_release(&svc);
	if (rc < 0)
		rc = pr_error_set(err, rc, "%s: %s", where, e.msg);
	pr_error_clear(&e);
	return rc;
}

int backtest_run(backtest_result *out, const job_env *env, const backtest_opts *o,
		 pr_error *err)
{
	int64_t night = o->night_us > 0 ? o->night_us : DAY_US;
	db_service *svcs = NULL;
	size_t nsvcs = 0, nights;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!(out->incidents = json_array()) || !(out->nights_json = json_array()))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	if (o->until_us <= o->since_us)
		return pr_error_set(err, PR_EUSAGE, "the range to replay is empty (--until must be"
				    " after --since)");
	nights = (size_t)((o->until_us - o->since_us + night - 1) / night);
	if (nights > BACKTEST_MAX_NIGHTS)
		return pr_error_set(err, PR_EUSAGE, "%zu nights to replay: at most %d at a time",
				    nights, BACKTEST_MAX_NIGHTS);
	/*
	 * An incident the replay cannot find (a mistyped service, a time
	 * outside the range) would count as one the analysis missed.
	 */
	for (size_t k = 0; k < o->nincidents; k++)
		if ((rc = check_incident(env, o, &o->incidents[k], err)) < 0)
			return rc;
	for (size_t k = 0; k < o->nincidents; k++) {
		const backtest_incident *in = &o->incidents[k];
		char when[TIME_FMT_MAX];
		time_format(when, in->at_us);
		json_array_append_new(out->incidents, json_pack("{s:s,s:s?,s:s?,s:s,s:b}",
			"service", in->service, "function", in->function, "release", in->release,
			"time", when, "found", 0));
	}
	if ((rc = db_service_list(env->d, &svcs, &nsvcs, err)) < 0)
		goto out;
	/* Nights end at until, until - night, ...: the latest is judged as the nightly would. */
	for (int64_t end = o->until_us - (int64_t)(nights - 1) * night; end <= o->until_us;
	     end += night) {
		out->nights++;
		if ((rc = one_night(out, env, o, svcs, nsvcs, end, night, err)) < 0)
			goto out;
	}
	rc = escalation(out, env, o, err);
out:
	for (size_t i = 0; i < nsvcs; i++)
		db_service_release(&svcs[i]);
	free(svcs);
	return rc;
}

void backtest_result_release(backtest_result *r)
{
	json_decref(r->incidents);
	json_decref(r->nights_json);
	json_decref(r->escalation);
	memset(r, 0, sizeof(*r));
}
