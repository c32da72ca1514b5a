/*
 * analyze.c: the analysis a person asks for (see analyze.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/analyze.h"
#include "jobs/cohort.h"
#include "jobs/record.h"
#include "jobs/reportdata.h"
#include "jobs/runs.h"
#include "common/ahead.h"

#include <inttypes.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

static int finish(analyze_result *r, db *d, const char *status, pr_error *err)
{
	json_t *detail =
		json_pack("{s:I,s:I,s:I,s:I}", "services", (json_int_t)r->a.services, "tests",
			  (json_int_t)r->a.ntests, "findings", (json_int_t)r->a.nfindings,
			  "skipped", (json_int_t)r->a.nskipped);
	int rc = detail ? runs_finish(d, r->run_id, status, detail, err)
			: pr_error_set(err, PR_ENOMEM, "out of memory");

	json_decref(detail);
	return rc;
}

/*
 * "4 heap captures and no cpu ones: add --type heap" into out[0..size)
 * when release `release` of the service has no capture of `type` but has
 * some of another type; "" otherwise. The release exists: naming the
 * nearest other release, as for a typo, sent people to a release with
 * none of that type either.
 */
static int other_types_hint(char *out, size_t size, db *d, int64_t service_id, const char *release,
			    const char *type, pr_error *err)
{
	static const char sql[] =
		"select profile_type, count(*) from profiles where service_id = $1"
		" and release = $2 group by profile_type order by count(*) desc, profile_type";
	char sid[24];
	const char *p[2] = {sid, release};
	PGresult *res = NULL;
	size_t len = 0;
	int rows, rc;

	*out = '\0';
	snprintf(sid, sizeof(sid), "%" PRId64, service_id);
	if ((rc = db_exec(d, &res, err, "reading the release's profile types", sql, 2, p)) < 0)
		return rc;
	rows = db_rows(res);
	for (int i = 0; i < rows; i++)
		if (strcmp(db_get_text(res, i, 0), type) == 0)
			rows = 0; /* it has some of the type: not what emptied it */
	for (int i = 0; i < rows && len < size; i++) {
		const char *n = db_get_text(res, i, 1);
		int w = snprintf(out + len, size - len, "%s%s %.40s capture%s", i ? ", " : "", n,
				 db_get_text(res, i, 0), strcmp(n, "1") == 0 ? "" : "s");
		len += w > 0 ? (size_t)w : 0;
	}
	if (rows && len < size)
		snprintf(out + len, size - len, " and no %.40s ones: add --type %.40s", type,
			 db_get_text(res, 0, 0));
	db_result_free(res);
	return 0;
}

/*
 * A selection that matched no capture of any service it was asked of is
 * an error, not an empty analysis: "analyze --release v4.3 --gate high"
 * with a release name profreg has never seen must not pass. Services
 * skipped for another reason (too thin a baseline) leave it to the
 * caller, which knows whether it gates.
 */
static int check_selected(const analyze_result *r, const analyze_opts *o, db *d,
			  const db_service *one, const char *type, pr_error *err)
{
	char hint[400];
	int rc;

	if (r->a.services > 0 || r->a.nskipped == 0 || o->cohort)
		return 0;
	for (size_t i = 0; i < r->a.nskipped; i++)
		if (!r->a.skipped[i].no_current)
			return 0;
	if (!o->release)
		return o->service
			? pr_error_set(err, PR_ENOTFOUND, "no %s captures of service '%s' in the "
				       "selected time range", type, o->service)
			: pr_error_set(err, PR_ENOTFOUND, "no %s captures of any enabled service "
				       "in the selected time range", type);
	if (!o->service)
		return pr_error_set(err, PR_ENOTFOUND, "no %s captures of release '%s' in any "
				    "enabled service", type, o->release);
	if ((rc = other_types_hint(hint, sizeof(hint), d, one->id, o->release, type, err)) < 0)
		return rc;
	if (hint[0])
		return pr_error_set(err, PR_ENOTFOUND, "release '%s' of service '%s' has %s",
				    o->release, o->service, hint);
	if ((rc = job_release_hint(hint, sizeof(hint), d, one->id, o->release, err)) < 0)
		return rc;
	return pr_error_set(err, PR_ENOTFOUND, "no %s captures of release '%s' of service '%s'%s",
			    type, o->release, o->service, hint);
}

/*
 * Every service's input loaded ahead of its analysis: the next one on the
 * second connection while this one is computed, so that the client's
 * work and the server's overlap. Item i is service i (none when disabled).
 */
typedef struct prefetch {
	const job_env *env;
	const analyze_opts *o;
	const analysis_opts *ao;
	const db_service *svcs;
	const char *type;
	analysis_input **in;
} prefetch;

static analysis_target target_of(const job_env *env, const db_service *s,
				 const analyze_opts *o, const char *type)
{
	const config_service *cs = config_service_find(env->cfg, s->name);
	analysis_target t = {s->id, s->name, type, o->release, o->since_us, o->until_us,
			     NULL, NULL, config_service_week(cs), config_service_warmup(cs)};
	return t;
}

/* ahead_fn: slot 0 is the analysing thread, on its connection; 1 the helper, on its own. */
static void prefetch_one(void *ctx, size_t i, unsigned slot)
{
	prefetch *p = ctx;
	analysis_target t;

	if (!p->svcs[i].enabled)
		return;
	t = target_of(p->env, &p->svcs[i], p->o, p->type);
	p->in[i] = analysis_input_load(slot ? p->o->ahead_db : p->env->d, p->ao, &t, NULL);
}

int analyze_run(analyze_result *out, const job_env *env, const analyze_opts *o, pr_error *err)
{
	analyze_result *r = out;
	analysis_opts ao = o->analysis;
	db_service *svcs = NULL, one = {0};
	size_t nsvcs = 0;
	const char *type = o->type ? o->type : "cpu";
	cohort_hosts hosts = {0};
	prefetch pf = {0};
	ahead *ah = NULL;
	int rc;

	memset(r, 0, sizeof(*r));
	if (!ao.at_us)
		ao.at_us = job_now(env);
	analysis_init(&r->a, &ao);
	if (!o->service) {
		if ((rc = db_service_list(env->d, &svcs, &nsvcs, err)) < 0)
			goto out;
	} else {
		if ((rc = db_service_get(env->d, &one, o->service, err)) < 0)
			goto out;
		if (!one.enabled) {
			rc = pr_error_set(err, PR_EREFUSED,
					  "service '%s' is not enabled for profiling", o->service);
			goto out;
		}
	}
	if ((o->cohort || o->control) && (!o->cohort || !o->service)) {
		rc = pr_error_set(err, PR_EUSAGE, "%s", !o->cohort
				  ? "--control needs --cohort (the canary hosts)"
				  : "--cohort compares the hosts of one service: give --service");
		goto out;
	}
	if (o->cohort && (rc = cohort_resolve(&hosts, env->d, one.id, one.name, o->cohort,
					      o->control, err)) < 0)
		goto out;
	if (!o->dry_run) {
		json_t *params = json_pack("{s:I,s:s?}", "at_us", (json_int_t)ao.at_us, "selection",
					   o->selection);
		/*
		 * A run of one service is that service's, as a post-deploy's:
		 * row security then shows it, its detail and its finding count
		 * to that service's team alone, not to every team.
		 */
		rc = runs_begin(&r->run_id, env->d, "analyze", o->service ? one.id : 0, params,
				err);
		json_decref(params);
		if (rc < 0)
			goto out;
	}
	if (!o->service && o->ahead_db && nsvcs > 1) {
		pf = (prefetch){env, o, &r->a.opts, svcs, type, calloc(nsvcs, sizeof(*pf.in))};
		/* One helper, two services in memory at most. */
		if (!pf.in || ahead_start(&ah, nsvcs, 1, 2, prefetch_one, &pf) < 0) {
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
			goto fail;
		}
	}
	for (size_t i = 0; i < (o->service ? 1 : nsvcs); i++) {
		const db_service *s = o->service ? &one : &svcs[i];
		analysis_target t = target_of(env, s, o, type);
		analysis_cohort ch = {hosts.cohort, hosts.control};
		analysis_input *in;

		if (ah)
			ahead_wait(ah, i);
		if (!s->enabled)
			continue;
		if (!ah)
			rc = analysis_add_cohort(&r->a, env->d, &t, hosts.cohort ? &ch : NULL,
						 !o->dry_run, err);
		else if (!(in = pf.in[i]))
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		else {
			pf.in[i] = NULL;
			rc = analysis_add_loaded(&r->a, env->d, &t, NULL, in, !o->dry_run, err);
		}
		if (rc < 0)
			goto fail;
	}
	ahead_free(ah);
	ah = NULL;
	if ((rc = check_selected(r, o, env->d, &one, type, err)) < 0 ||
	    (rc = analysis_finish(&r->a, err)) < 0)
		goto fail;
	for (size_t i = 0; i < r->a.nnotes; i++)
		job_note(&r->notes, "%s", r->a.notes[i]);
	if (!o->dry_run &&
	    ((rc = record_findings_bs(&r->a, env->d, env->bs, r->run_id, env->cfg, o->page, err)) <
		     0 ||
	     (rc = finish(r, env->d, "ok", err)) < 0))
		goto fail;
	/*
	 * A page links to the run's report (reports.base_url): written before
	 * the pages go, so that the link leads somewhere when it is opened.
	 */
	if (o->page && !o->dry_run && env->bs)
		reportdata_write_run_all(env, r->run_id, &r->report, r->report_problem,
					 sizeof(r->report_problem));
	/*
	 * Delivery problems stay on their rows (profreg page list); only the database fails this.
	 */
	if (o->page && (rc = pager_flush(env->d, env->cfg, NULL, &r->pages, err)) < 0)
		goto fail;
	if (o->page && r->pages.first_error[0])
		job_note(&r->notes, "paging: %s", r->pages.first_error);
	goto out;
fail:
	if (r->run_id) {
		pr_error ignore = PR_ERROR_INIT;
		finish(r, env->d, "failed", &ignore);
	}
out:
	/* Stopped early: the helper is joined, then what it loaded and nobody used is freed. */
	ahead_free(ah);
	for (size_t i = 0; pf.in && i < nsvcs; i++)
		analysis_input_free(pf.in[i]);
	free(pf.in);
	for (size_t i = 0; i < nsvcs; i++)
		db_service_release(&svcs[i]);
	free(svcs);
	db_service_release(&one);
	cohort_hosts_release(&hosts);
	return rc;
}

void analyze_result_release(analyze_result *r)
{
	analysis_release(&r->a);
	job_notes_release(&r->notes);
	free(r->report);
	memset(r, 0, sizeof(*r));
}
