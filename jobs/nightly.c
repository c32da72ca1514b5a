/*
 * nightly.c: the nightly job (see nightly.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/nightly.h"
#include "baselines/baseline.h"
#include "baselines/findings.h"
#include "common/timeutil.h"
#include "jobs/collect.h"
#include "jobs/deploys.h"
#include "jobs/pushgw.h"
#include "jobs/record.h"
#include "jobs/reportdata.h"
#include "jobs/runs.h"
#include "jobs/suspects.h"
#include "pipeline/source.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DAY_US (86400LL * 1000000LL)
/* How long a service waits for its collection lock held by a gate or a collect. */
#define NIGHTLY_LOCK_WAIT_US (300LL * 1000000LL)

/*
 * How long a service's collection waits for its lock: a worker's task as
 * long as the nightly, within half of the time its lease is renewed for.
 */
static int64_t lock_wait_us(const job_env *env, bool task)
{
	int64_t half = (int64_t)env->cfg->workers.task_timeout_s * 1000000 / 2;

	return task && half < NIGHTLY_LOCK_WAIT_US ? half : NIGHTLY_LOCK_WAIT_US;
}

static bool wanted(const char *name, const nightly_opts *o)
{
	if (!o->nonly)
		return true;
	for (size_t i = 0; i < o->nonly; i++)
		if (strcmp(o->only[i], name) == 0)
			return true;
	return false;
}

/* Record one service's outcome object (stolen), counted by its status. */
static void outcome_set(nightly_result *r, const char *name, json_t *o)
{
	const char *status = json_string_value(json_object_get(o, "status"));

	if (!o || !status) {
		json_decref(o);
		return;
	}
	if (strcmp(status, "failed") == 0)
		r->failed++;
	else if (strcmp(status, "skipped") == 0)
		r->skipped++;
	else
		r->analysed++;
	json_object_set_new(r->services, name, o);
}

/* Outcome of one service: {"status": "...", "reason": "...", "collected": {...}} */
static void outcome(nightly_result *r, const char *name, const char *status, const char *reason,
		    const source_report *src)
{
	json_t *o = json_pack("{s:s}", "status", status);

	if (!o)
		return;
	if (reason)
		json_object_set_new(o, "reason", json_string(reason));
	if (src)
		json_object_set_new(
			o, "collected",
			json_pack("{s:I,s:I,s:I,s:I,s:I}", "stored", (json_int_t)src->stored,
				  "already_stored", (json_int_t)src->already, "waiting",
				  (json_int_t)src->waiting, "failed", (json_int_t)src->failed,
				  "deleted_by_retention", (json_int_t)src->deleted));
	outcome_set(r, name, o);
}

/* Every --service must be registered: a typo is an error, never an empty night. */
static int check_only(db *d, const db_service *svcs, size_t n, const nightly_opts *o,
		      pr_error *err)
{
	for (size_t k = 0; k < o->nonly; k++) {
		bool known = false;
		db_service probe = {0};
		int rc;
		for (size_t i = 0; i < n && !known; i++)
			known = strcmp(svcs[i].name, o->only[k]) == 0;
		if (known)
			continue;
		rc = db_service_get(d, &probe, o->only[k], err);
		db_service_release(&probe);
		return rc < 0 ? rc
			      : pr_error_set(err, PR_ENOTFOUND, "service '%s' not found",
					     o->only[k]);
	}
	return 0;
}

/* "cpu release 'v3' not judged: REASON" (or "cpu not judged: ..." for a type's night). */
static const char *not_judged(char *out, size_t size, const analysis_skip *k)
{
	if (k->release)
		snprintf(out, size, "%s release '%.256s' not judged: %s", k->type, k->release,
			 k->reason);
	else
		snprintf(out, size, "%s not judged: %s", k->type, k->reason);
	return out;
}

/*
 * One service's night: collect its drop folder, add its targets to the
 * family. Only the database (or memory) fails the run; anything else is
 * the service's outcome.
 */
static int one_service(nightly_result *r, const job_env *env, const db_service *s,
		       const nightly_opts *o, int64_t night, const char *lock, pr_error *err)
{
	const config_service *cs = config_service_find(env->cfg, s->name);
	source_report src = {0};
	pr_error serr = PR_ERROR_INIT;
	static const char *const cpu_only[1] = {"cpu"};
	char why[PR_ERROR_MSG_MAX + 600], *newest = NULL;
	bool have_src = false, newest_judged = false;
	size_t before = r->a.nskipped, judged = r->a.services, newest_skip = SIZE_MAX;
	int rc = 0;

	if (collect_has_sources(cs)) {
		/* Every source of the service, the night's window (jobs/collect.h). */
		collect_opts co = {.since_us = r->at_us - night,
				   .until_us = r->at_us,
				   .lock = lock,
				   .busy_is_error = lock != NULL,
				   /*
				    * A gate collecting the service lets go between
				    * its polls: waited for, by a worker's task too
				    * (its lease renewed), as a task deferred at once
				    * would sit out its lease and spend an attempt.
				    */
				   .lock_wait_us = lock_wait_us(env, lock != NULL),
				   .live_in_window = r->at_is_now};
		if (collect_service(&src, NULL, env, s, &co, &serr) < 0)
			return pr_error_set(err, serr.code, "%s", serr.msg);
		have_src = true;
	}
	/* The release deployed last in the night, whatever the type: the one running now. */
	if (capture_newest_release(&newest, env->d, s->id,
				   cs ? (const char *const *)cs->types : cpu_only,
				   cs ? cs->ntypes : 1, r->at_us - night, r->at_us + 1,
				   &serr) < 0) {
		rc = pr_error_set(err, serr.code, "%s", serr.msg);
		goto out;
	}
	/*
	 * Each release that ran in the night is judged with all of its
	 * captures so far, not only the night's: evidence accumulates over the
	 * nights a release lives, each night one more look (baselines/
	 * analysis.h), and the lifecycle of its findings follows. A type with
	 * no capture in the night is judged as before, so that it is reported.
	 */
	for (size_t t = 0; t < (cs ? cs->ntypes : 1) && !serr.code; t++) {
		const char *type = cs ? cs->types[t] : "cpu";
		char **rels = NULL;
		size_t nrels = 0;
		if (capture_releases_in(&rels, &nrels, env->d, s->id, type, r->at_us - night,
					r->at_us + 1, &serr) < 0) {
			rc = pr_error_set(err, serr.code, "%s", serr.msg);
			goto out;
		}
		for (size_t k = 0; k < (nrels ? nrels : 1) && !serr.code; k++) {
			analysis_target tg = {s->id, s->name, type, nrels ? rels[k] : NULL,
					      r->at_us - night, r->at_us + 1, NULL, NULL,
					      config_service_week(cs), config_service_warmup(cs)};
			size_t skips = r->a.nskipped;
			if (analysis_add(&r->a, env->d, &tg, !o->dry_run, &serr) < 0 &&
			    (serr.code == PR_EDB || serr.code == PR_ENOMEM)) {
				capture_releases_free(rels, nrels);
				rc = pr_error_set(err, serr.code, "%s", serr.msg);
				goto out;
			}
			if (nrels && newest && strcmp(rels[k], newest) == 0 && !serr.code) {
				if (r->a.nskipped == skips)
					newest_judged = true;
				else if (newest_skip == SIZE_MAX)
					newest_skip = r->a.nskipped - 1;
			}
		}
		capture_releases_free(rels, nrels);
	}
	if (serr.code)
		outcome(r, s->name, "failed", serr.msg, have_src ? &src : NULL);
	else if (src.failed)
		/* Files that would not ingest are the collector's fault: say so, fail the night. */
		outcome(r, s->name, "failed", src.first_error, have_src ? &src : NULL);
	else if (r->a.nskipped > before && r->a.services == judged)
		outcome(r, s->name, "skipped", r->a.skipped[r->a.nskipped - 1].reason,
			have_src ? &src : NULL);
	else if (newest_skip != SIZE_MAX && !newest_judged)
		/*
		 * An earlier release that also ran in the night was judged, the
		 * one deployed last was not (its captures lost their symbols,
		 * hold no samples, are all in the warm-up): the service is not
		 * judged as it runs now, whatever a capture of the old pods
		 * showed. Called analysed, a night that never judged the new
		 * release passed as one that found nothing.
		 */
		outcome(r, s->name, "skipped", not_judged(why, sizeof(why),
							  &r->a.skipped[newest_skip]),
			have_src ? &src : NULL);
	else if (r->a.nskipped > before) {
		/*
		 * One type (or release) judged and another not: the service was
		 * analysed, and the part left out says why. Called skipped, a
		 * fleet whose heap captures were all missing one night counted
		 * no service analysed although every cpu profile was judged.
		 */
		outcome(r, s->name, "analysed",
			not_judged(why, sizeof(why), &r->a.skipped[r->a.nskipped - 1]),
			have_src ? &src : NULL);
	} else
		outcome(r, s->name, "analysed", NULL, have_src ? &src : NULL);
out:
	free(newest);
	source_report_release(&src);
	return rc;
}

int nightly_task_run(json_t **result, const job_env *env, const task *t, pr_error *err)
{
	nightly_result r;
	nightly_opts o;
	analysis_opts ao = env->cfg->analysis;
	db_service s;
	json_int_t at = 0, night = 0;
	json_t *part = NULL, *out = NULL;
	char lock[192];
	int rc;

	*result = NULL;
	memset(&r, 0, sizeof(r));
	memset(&o, 0, sizeof(o));
	memset(&s, 0, sizeof(s));
	if (json_unpack(t->params, "{s:I,s:I}", "at_us", &at, "night_us", &night) < 0 ||
	    at <= 0 || night <= 0)
		return pr_error_set(err, PR_EDATA, "task %" PRId64 ": bad parameters", t->id);
	/* Absent from a coordinator of an earlier version: its live captures as before. */
	r.at_is_now = json_is_true(json_object_get(t->params, "at_is_now"));
	/*
	 * A worker reading another configuration judges another night: other
	 * services, other thresholds. It ran, and the night said ok with half
	 * its findings. The task fails, saying so, and the night with it.
	 */
	{
		const char *want = json_string_value(json_object_get(t->params, "config"));
		if (want && strcmp(want, env->cfg->fingerprint) != 0)
			return pr_error_set(err, PR_EUSAGE,
					    "this worker's configuration (%s, fingerprint %s) is "
					    "not the coordinator's (fingerprint %s): its analysis, "
					    "limits, services and collect must be the same",
					    env->cfg->path ? env->cfg->path : "no file",
					    env->cfg->fingerprint, want);
	}
	if ((rc = db_service_get(env->d, &s, t->service, err)) < 0)
		return rc;
	if (s.id != t->service_id) {
		rc = pr_error_set(err, PR_ENOTFOUND, "service '%s' was removed and added again",
				  t->service);
		goto out;
	}
	r.at_us = at;
	ao.at_us = at;
	analysis_init(&r.a, &ao);
	if (!(r.services = json_object())) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	if (!s.enabled)
		outcome(&r, s.name, "skipped", "not enabled", NULL);
	else if (snprintf(lock, sizeof(lock), "%s:%s", COLLECT_LOCK, s.name) > 0 &&
		 (rc = one_service(&r, env, &s, &o, night, lock, err)) < 0)
		goto out;
	if (analysis_part_json(&part, &r.a) < 0 ||
	    !(out = json_pack("{s:O,s:o}", "outcome", json_object_get(r.services, s.name),
			      "part", part))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	*result = out;
out:
	nightly_result_release(&r);
	db_service_release(&s);
	return rc;
}

static void nap(double secs)
{
	struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};

	nanosleep(&ts, NULL);
}

/*
 * The services of a night spread over workers: queue a task per enabled
 * service, work tasks while any is open (or only wait), then merge the
 * results in the services' order, as if this process had done each in
 * turn. A task that failed is its service's failure.
 */
static int distribute(nightly_result *r, const job_env *env, const nightly_opts *o,
		      const db_service *svcs, size_t nsvcs, int64_t night, pr_error *err)
{
	const tasks_worker *w = o->worker;
	int64_t *ids = calloc(nsvcs ? nsvcs : 1, sizeof(*ids));
	const char **names = calloc(nsvcs ? nsvcs : 1, sizeof(*names));
	task_outcome *outs = NULL;
	size_t nq = 0, nouts = 0, claims = 0;
	json_t *params = NULL, *by_worker = NULL;
	int rc = 0;

	if (!ids || !names || !(by_worker = json_object()) ||
	    !(params = json_pack("{s:I,s:I,s:b,s:s}", "at_us", (json_int_t)r->at_us, "night_us",
				 (json_int_t)night, "at_is_now", r->at_is_now, "config",
				 env->cfg->fingerprint))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nsvcs; i++)
		if (wanted(svcs[i].name, o) && svcs[i].enabled) {
			ids[nq] = svcs[i].id;
			names[nq++] = svcs[i].name;
		}
	if ((rc = tasks_enqueue(env->d, r->run_id, ids, names, nq, TASKS_KIND_NIGHTLY, params,
				err)) < 0)
		goto out;
	for (;;) {
		tasks_counts c;
		tasks_worked done;
		if ((rc = tasks_reap(env->d, r->run_id, w->max_attempts, NULL, err)) < 0)
			goto out;
		if (o->coordinator_works && !(w->stop && *w->stop)) {
			if ((rc = tasks_work_one(&done, env, w, r->run_id, TASKS_KIND_NIGHTLY,
						 nightly_task_run, err)) < 0)
				goto out;
			if (done.claimed)
				continue;
		}
		if ((rc = tasks_count(&c, env->d, r->run_id, err)) < 0)
			goto out;
		if (!c.queued && !c.leased)
			break;
		nap(o->poll_s > 0 ? o->poll_s : 0.2);
	}
	if ((rc = tasks_outcomes(&outs, &nouts, env->d, r->run_id, err)) < 0)
		goto out;
	for (size_t i = 0; i < nsvcs; i++) {
		const task_outcome *t = NULL;
		pr_error perr = PR_ERROR_INIT;
		if (!wanted(svcs[i].name, o))
			continue;
		if (!svcs[i].enabled) {
			outcome(r, svcs[i].name, "skipped", "not enabled", NULL);
			continue;
		}
		for (size_t k = 0; k < nouts && !t; k++)
			if (outs[k].service_id == svcs[i].id)
				t = &outs[k];
		if (!t) {
			outcome(r, svcs[i].name, "failed", "its task was not found", NULL);
			continue;
		}
		claims += (size_t)t->attempts;
		if (t->worker) {
			json_t *n = json_object_get(by_worker, t->worker);
			json_object_set_new(by_worker, t->worker,
					    json_integer(n ? json_integer_value(n) + 1 : 1));
		}
		if (strcmp(t->state, "done") != 0) {
			outcome(r, svcs[i].name, "failed", t->error ? t->error : "its task failed",
				NULL);
			continue;
		}
		if (analysis_part_merge(&r->a, json_object_get(t->result, "part"), &perr) < 0) {
			if (perr.code == PR_ENOMEM) {
				rc = pr_error_set(err, perr.code, "%s", perr.msg);
				goto out;
			}
			outcome(r, svcs[i].name, "failed", perr.msg, NULL);
			continue;
		}
		outcome_set(r, svcs[i].name, json_incref(json_object_get(t->result, "outcome")));
	}
	r->tasks = json_pack("{s:I,s:I,s:O}", "total", (json_int_t)nq, "claims",
			     (json_int_t)claims, "by_worker", by_worker);
	rc = tasks_clear_results(env->d, r->run_id, err);
out:
	tasks_outcomes_free(outs, nouts);
	json_decref(params);
	json_decref(by_worker);
	free(ids);
	free(names);
	return rc;
}

/*
 * Suspect commits of the night's regressions, computed once and stored
 * with the run: the range is the one recorded with the deploy of the
 * finding's release (post-deploy), read from the service's repository.
 */
/* One regression's suspect commits, for merging by commit. */
typedef struct suspect_set {
	const finding *f;
	json_t *commits; /* borrowed from the stored object */
} suspect_set;

static bool share_commit(const json_t *a, const json_t *b)
{
	size_t i, j;
	json_t *x, *y;

	json_array_foreach(a, i, x) {
		const char *sx = json_string_value(json_object_get(x, "sha"));
		json_array_foreach(b, j, y) {
			const char *sy = json_string_value(json_object_get(y, "sha"));
			if (sx && sy && strcmp(sx, sy) == 0)
				return true;
		}
	}
	return false;
}

/*
 * One root cause, one incident: regressions of one service, type and
 * release whose suspects share a commit join one incident; a member that
 * is not its lead has its untried pages cancelled (the lead pages).
 */
static int merge_by_commit(const job_env *env, analysis *a, suspect_set *s, size_t n,
			   int64_t run_id, pr_error *err)
{
	int64_t *from = NULL, *to = NULL;
	const char **why = NULL;
	size_t nl = 0;
	int rc = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			const finding *x = s[i].f, *y = s[j].f;
			if (x->service_id != y->service_id || strcmp(x->type, y->type) != 0 ||
			    strcmp(x->current_release, y->current_release) != 0 ||
			    !share_commit(s[i].commits, s[j].commits))
				continue;
			{
				int64_t *nf = realloc(from, (nl + 1) * sizeof(*from));
				int64_t *nt = nf ? realloc(to, (nl + 1) * sizeof(*to)) : NULL;
				const char **nw = nt ? realloc(why, (nl + 1) * sizeof(*why)) : NULL;
				from = nf ? nf : from;
				to = nt ? nt : to;
				if (!nw) {
					rc = pr_error_set(err, PR_ENOMEM, "out of memory");
					goto out;
				}
				why = nw;
			}
			from[nl] = x->id;
			to[nl] = y->id;
			why[nl++] = "the same suspect commit";
		}
	if (!nl)
		goto out;
	if ((rc = db_begin(env->d, err)) < 0)
		goto out;
	rc = findings_link(a, env->d, from, to, why, nl, err);
	for (size_t i = 0; rc == 0 && i < a->ntests && a->tests[i].significant; i++) {
		const finding *f = &a->tests[i];
		if (f->incident_id && !f->incident_lead)
			rc = pager_cancel_member(env->d, f->id, f->incident_id, NULL, err);
	}
	/* The lead pages at its worst member's severity, as it would have paged alone. */
	if (rc == 0)
		rc = record_page_leads(a, env->d, env->cfg, run_id, err);
	if (rc == 0)
		rc = db_commit(env->d, err);
	else
		db_rollback(env->d);
out:
	free(from);
	free(to);
	free(why);
	return rc;
}

static int by_release(const void *a, const void *b)
{
	const finding *x = *(const finding *const *)a, *y = *(const finding *const *)b;

	if (x->service_id != y->service_id)
		return x->service_id < y->service_id ? -1 : 1;
	return strcmp(x->current_release, y->current_release);
}

/*
 * The suspects of one regression from `range` (that of its release's
 * deploy). When tonight cannot read the range (the nightly's
 * configuration names no repository, the post-deploy step was given
 * --repo; the repository moved), what an earlier run stored for the
 * finding stands: computed once, never replaced by "none".
 */
static int suspects_of(json_t **out, const job_env *env, const suspects_range *range,
		       const finding *f, pr_error *err)
{
	json_t *prev = NULL;
	int rc;

	*out = NULL;
	if (range->note[0]) {
		if ((rc = suspects_load(&prev, env->d, 0, f->id, err)) < 0)
			return rc;
		if (prev && json_array_size(json_object_get(prev, "commits"))) {
			*out = prev;
			return 0;
		}
		json_decref(prev);
	}
	if (!(*out = suspects_for_function(range, f->function, f->file)))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	return 0;
}

/* Read the range of one release's deploy: 0 or PR_ENOMEM/PR_EDB. */
static int release_range(suspects_range *range, const job_env *env, const finding *f, pr_error *err)
{
	const config_service *cs = config_service_find(env->cfg, f->service);
	deploy dep;
	bool have;
	int rc;

	memset(&dep, 0, sizeof(dep));
	rc = deploy_find_release(&dep, env->d, f->service_id, f->current_release, err);
	if (rc < 0 && rc != PR_ENOTFOUND)
		return rc;
	have = rc == 0;
	if ((rc = suspects_range_load(range, cs ? cs->repo : NULL, have ? dep.previous_sha : NULL,
				      have ? dep.commit_sha : NULL, err)) < 0)
		return rc;
	if (!have)
		snprintf(range->note, sizeof(range->note),
			 "No deploy of release '%.200s' was recorded: no commit range.",
			 f->current_release);
	return 0;
}

static int store_suspects(const job_env *env, analysis *a, int64_t run_id, pr_error *err)
{
	suspect_set *sets = calloc(a->nfindings ? a->nfindings : 1, sizeof(*sets));
	const finding **order = calloc(a->ntests ? a->ntests : 1, sizeof(*order));
	const finding *loaded = NULL; /* the regression whose release `range` is */
	suspects_range range;
	size_t nsets = 0, n = 0;
	int rc = 0;

	memset(&range, 0, sizeof(range));
	if (!sets || !order) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < a->ntests && a->tests[i].significant; i++)
		if (a->tests[i].direction == FINDING_REGRESSION && a->tests[i].id)
			order[n++] = &a->tests[i];
	/* A release's range is read once for all of its regressions. */
	qsort(order, n, sizeof(*order), by_release);
	for (size_t i = 0; i < n && rc == 0; i++) {
		const finding *f = order[i];
		json_t *s;

		if (!loaded || by_release(&loaded, &f) != 0) {
			suspects_range_release(&range);
			loaded = NULL;
			if ((rc = release_range(&range, env, f, err)) < 0)
				goto out;
			loaded = f;
		}
		if ((rc = suspects_of(&s, env, &range, f, err)) < 0)
			goto out;
		if (json_array_size(json_object_get(s, "commits")) && nsets < a->nfindings) {
			sets[nsets].f = f;
			sets[nsets++].commits = json_incref(json_object_get(s, "commits"));
		}
		rc = suspects_store(env->d, run_id, f->id, s, err);
	}
	if (rc == 0)
		rc = merge_by_commit(env, a, sets, nsets, run_id, err);
out:
	suspects_range_release(&range);
	for (size_t i = 0; i < nsets; i++)
		json_decref(sets[i].commits);
	free(sets);
	free(order);
	return rc;
}

/*
 * The night's exit code will be 0 (README: only then the last-success
 * time moves): analysed whole, its pages delivered, its report written,
 * retention done within its budget.
 */
static bool night_success(const nightly_result *r)
{
	return strcmp(r->status, "ok") == 0 && !nightly_pages_undelivered(r) &&
	       !r->report_problem[0] && !r->retention_failed && !r->retention.over_budget;
}

/*
 * A page links to its team's report: the reports are written first, so the
 * link works when on-call opens it. A report that cannot be written is the
 * command's problem, never a reason to hold a page back. Pages wait in the
 * outbox on delivery problems; only the database fails the run. The run's
 * record gets what paging did last (runs_finish merges it). `refresh`:
 * re-post the open Alertmanager alerts too.
 */
static int page_after_reports(nightly_result *r, const job_env *env, bool refresh, pr_error *err)
{
	/* Open Alertmanager alerts are re-posted once a command, by its last night. */
	pager_flush_opts fo = {.refresh = refresh};
	json_t *pages;
	int rc;

	reportdata_write_run_all(env, r->run_id, &r->report, r->report_problem,
				 sizeof(r->report_problem));
	if ((rc = pager_flush(env->d, env->cfg, &fo, &r->pages, err)) < 0)
		return rc;
	/* A page that did not go out is the command's error line, not a note (nightly.h). */
	if (r->pages.first_error[0] && !nightly_pages_undelivered(r))
		job_note(&r->notes, "paging: %s", r->pages.first_error);
	pages = json_pack(
		"{s:{s:I,s:I,s:I,s:I,s:I}}", "pages", "enqueued", (json_int_t)r->a.pages_enqueued,
		"sent", (json_int_t)r->pages.sent, "failed", (json_int_t)r->pages.failed, "pending",
		(json_int_t)r->pages.pending, "alerts_refreshed", (json_int_t)r->pages.refreshed);
	rc = pages ? runs_finish(env->d, r->run_id, r->status, pages, err)
		   : pr_error_set(err, PR_ENOMEM, "out of memory");
	json_decref(pages);
	return rc;
}

/*
 * What a finished night leaves behind: retention, metrics. Notes, not
 * errors. `caught_ok`: the missed nights run before it all succeeded.
 */
static void after_night(nightly_result *r, const job_env *env, double t0, int64_t deadline_us,
			bool caught_ok)
{
	pr_error e = PR_ERROR_INIT;

	if (env->cfg->retention.after_nightly) {
		retention_opts ro = {r->at_us, false, 0, NULL};
		char *reports = reportdata_dir(env->cfg, env->home);
		ro.reports_dir = reports; /* NULL (out of memory): the reports stay */
		pr_error_clear(&e);
		r->retention_ran = true;
		/* Not a note: either outcome sets the exit code, so it is said under --quiet. */
		if (retention_run(&r->retention, env->d, env->bs, env->cfg, &ro, &e) < 0) {
			r->retention_failed = true;
			snprintf(r->retention_problem, sizeof(r->retention_problem), "%s", e.msg);
		} else if (r->retention.over_budget) {
			retention_over_budget_msg(r->retention_problem,
						  sizeof(r->retention_problem), &r->retention);
		}
		free(reports);
	}
	/* Only a complete night resets the staleness alert's clock. */
	pr_error_clear(&e);
	if (pushgw_push_analysis(env->cfg, "nightly", caught_ok && night_success(r), t0,
				 deadline_us, &r->a, r->analysed, r->failed, &r->pages, &e) < 0)
		job_note(&r->notes, "%s", e.msg);
}

/* A night's result before any work: its end, an empty analysis. */
static int night_init(nightly_result *r, const job_env *env, int64_t at_us, bool at_is_now,
		      pr_error *err)
{
	analysis_opts ao = env->cfg->analysis;

	memset(r, 0, sizeof(*r));
	r->status = "incomplete";
	r->at_us = at_us;
	r->at_is_now = at_is_now;
	ao.at_us = at_us;
	analysis_init(&r->a, &ao);
	if (!(r->services = json_object()))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	return 0;
}

/*
 * One night, its own run: judge, store, page, report. `caught_up`: a
 * missed night run before the asked one, recorded so in the run's detail;
 * `extra` (may be NULL) is merged into the run's parameters. A failure
 * finishes the run "failed" and is returned; retention and metrics are
 * the caller's (after_night).
 */
static int one_night(nightly_result *r, const job_env *env, const nightly_opts *o,
		     const db_service *svcs, size_t nsvcs, int64_t night, bool caught_up,
		     const json_t *extra, pr_error *err)
{
	char when[TIME_FMT_MAX];
	int rc;

	time_format(when, r->at_us);
	if (!o->dry_run) {
		json_t *params = json_pack("{s:s,s:I,s:I,s:b}", "at", when, "at_us",
					   (json_int_t)r->at_us, "night_us", (json_int_t)night,
					   "dry_run", 0);
		json_t *only = json_array();
		for (size_t i = 0; i < o->nonly && only; i++)
			json_array_append_new(only, json_string(o->only[i]));
		/* A run of some services is not the fleet's night (runs_last_night). */
		if (params && o->nonly)
			json_object_set(params, "only", only);
		if (params && caught_up)
			json_object_set_new(params, "catch_up", json_true());
		if (params && extra) {
			const char *key;
			json_t *v;
			json_object_foreach((json_t *)extra, key, v)
				json_object_set(params, key, v);
		}
		rc = params && only ? runs_begin(&r->run_id, env->d, "nightly", 0, params, err)
				    : pr_error_set(err, PR_ENOMEM, "out of memory");
		json_decref(params);
		json_decref(only);
		if (rc < 0)
			goto fail;
	}
	for (size_t i = 0; i < env->cfg->nservices; i++) {
		const char *name = env->cfg->services[i].name;
		bool known = false;
		for (size_t k = 0; k < nsvcs && !known; k++)
			known = strcmp(svcs[k].name, name) == 0;
		if (!known && wanted(name, o))
			outcome(r, name, "skipped",
				"in the configuration file but not "
				"registered (profreg service add)", NULL);
	}
	if (o->worker && !o->dry_run) {
		if ((rc = distribute(r, env, o, svcs, nsvcs, night, err)) < 0)
			goto fail;
	} else {
		for (size_t i = 0; i < nsvcs; i++) {
			if (!wanted(svcs[i].name, o))
				continue;
			if (!svcs[i].enabled)
				outcome(r, svcs[i].name, "skipped", "not enabled", NULL);
			else if ((rc = one_service(r, env, &svcs[i], o, night, NULL, err)) < 0)
				goto fail;
		}
	}
	if ((rc = analysis_finish(&r->a, err)) < 0)
		goto fail;
	for (size_t i = 0; i < r->a.nnotes; i++)
		job_note(&r->notes, "%s", r->a.notes[i]);
	if (!o->dry_run &&
	    ((rc = record_findings_bs(&r->a, env->d, env->bs, r->run_id, env->cfg, true, err)) <
		     0 ||
	     (rc = store_suspects(env, &r->a, r->run_id, err)) < 0))
		goto fail;
	/* Services analysed, not targets judged: one judged for an old release only was skipped. */
	r->status = r->failed || !r->analysed ? "incomplete" : "ok";
	if (!o->dry_run) {
		json_t *summary = json_pack(
			"{s:I,s:I,s:I,s:I,s:I,s:O,s:{s:I,s:I,s:I,s:I,s:I},s:I,s:I,s:I,s:I,s:I}",
			"analysed",
			(json_int_t)r->analysed, "tests", (json_int_t)r->a.ntests, "findings",
			(json_int_t)r->a.nfindings, "failed", (json_int_t)r->failed, "skipped",
			(json_int_t)r->skipped, "services", r->services, "pages", "enqueued",
			(json_int_t)r->a.pages_enqueued, "sent", (json_int_t)r->pages.sent,
			"failed", (json_int_t)r->pages.failed, "pending",
			(json_int_t)r->pages.pending, "alerts_refreshed",
			(json_int_t)r->pages.refreshed, "went_away", (json_int_t)r->a.went_away,
			"fixed", (json_int_t)r->a.fixed, "relative_shifts_by_dilution",
			(json_int_t)r->a.diluted, "evidence_without_blob",
			(json_int_t)r->a.evidence_without_blob, "evidence_deleted",
			(json_int_t)r->a.evidence_deleted);
		if (summary && r->tasks)
			json_object_set(summary, "tasks", r->tasks);
		rc = summary ? runs_finish(env->d, r->run_id, r->status, summary, err)
			     : pr_error_set(err, PR_ENOMEM, "out of memory");
		json_decref(summary);
		if (rc < 0 || (rc = page_after_reports(r, env, !caught_up, err)) < 0)
			goto fail;
	}
	return 0;
fail:
	if (r->run_id) {
		pr_error ignore = PR_ERROR_INIT;
		json_t *why = json_pack("{s:s}", "error", err->msg);
		runs_finish(env->d, r->run_id, "failed", why, &ignore);
		json_decref(why);
	}
	return rc;
}

/*
 * The missed nights before the one ending at `at_us` (nightly.h): *n of
 * them, the first ending at *first_us, one every `night`; *beyond older
 * ones left out, past the baseline window. None for a dry run, a run of
 * some services, --no-catch-up, the first run ever, or a night at or
 * before the newest one finished (a past night run by hand).
 */
static int catch_up_plan(int64_t *first_us, size_t *n, size_t *beyond, const job_env *env,
			 const nightly_opts *o, int64_t at_us, int64_t night, pr_error *err)
{
	int64_t last = 0, slack = night / 4, most = env->cfg->analysis.window_us / night;
	bool found = false;
	uint64_t total;
	int rc;

	*first_us = 0;
	*n = *beyond = 0;
	if (o->dry_run || o->no_catch_up || o->nonly)
		return 0;
	if ((rc = runs_last_night(&last, &found, env->d, "nightly", err)) < 0)
		return rc;
	if (!found || last >= at_us || at_us - last <= night + slack)
		return 0;
	/* The k-th missed night ends at last + k * night, more than `slack` before at. */
	total = (uint64_t)(at_us - slack - last - 1) / (uint64_t)night;
	if (most < 1)
		most = 1;
	*beyond = total > (uint64_t)most ? (size_t)(total - (uint64_t)most) : 0;
	*n = (size_t)(total - *beyond);
	*first_us = last + (int64_t)(*beyond + 1) * night;
	return 0;
}

/* Keep what a missed night's summary line says; its analysis goes. */
static void keep_caught(nightly_night *k, nightly_result *c)
{
	memset(k, 0, sizeof(*k));
	k->run_id = c->run_id;
	k->at_us = c->at_us;
	k->status = c->status;
	k->analysed = c->analysed;
	k->skipped = c->skipped;
	k->failed = c->failed;
	k->tests = c->a.ntests;
	k->findings = c->a.nfindings;
	k->pages_enqueued = c->a.pages_enqueued;
	k->services = c->services;
	c->services = NULL;
	k->report = c->report;
	c->report = NULL;
	snprintf(k->report_problem, sizeof(k->report_problem), "%s", c->report_problem);
}

/*
 * Run the missed nights in order, each its own run; `own` is the asked
 * night's result, which gets their summaries and notes. A missed night
 * that fails stops the catch-up: rc, with err naming the night.
 */
static int catch_up(nightly_result *own, const job_env *env, const nightly_opts *o,
		    const db_service *svcs, size_t nsvcs, int64_t night, int64_t first_us, size_t n,
		    pr_error *err)
{
	char when[TIME_FMT_MAX];
	int rc = 0;

	if (!n)
		return 0;
	if (!(own->caught = calloc(n, sizeof(*own->caught))))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	for (size_t k = 0; k < n; k++) {
		nightly_result c;
		int64_t at = first_us + (int64_t)k * night;
		time_format(when, at);
		if ((rc = night_init(&c, env, at, false, err)) == 0)
			rc = one_night(&c, env, o, svcs, nsvcs, night, true, NULL, err);
		for (size_t i = 0; i < c.notes.n; i++)
			job_note(&own->notes, "the missed night to %s: %s", when, c.notes.lines[i]);
		if (rc == 0)
			keep_caught(&own->caught[own->ncaught++], &c);
		nightly_result_release(&c);
		if (rc < 0) {
			char msg[PR_ERROR_MSG_MAX];
			snprintf(msg, sizeof(msg), "%s", err->msg);
			return pr_error_set(err, err->code,
					    "the missed night to %s failed (the next nightly runs "
					    "it again): %s",
					    when, msg);
		}
	}
	return 0;
}

/* The runs of the missed nights and those left out, for the asked night's run. */
static json_t *caught_json(const nightly_result *r)
{
	json_t *o = json_object(), *ids = json_array();
	char a[TIME_FMT_MAX], b[TIME_FMT_MAX];

	for (size_t i = 0; i < r->ncaught && ids; i++)
		json_array_append_new(ids, json_integer(r->caught[i].run_id));
	if (!o || !ids) {
		json_decref(o);
		json_decref(ids);
		return NULL;
	}
	json_object_set_new(o, "caught_up_runs", ids);
	if (r->beyond) {
		time_format(a, r->beyond_first_us);
		time_format(b, r->beyond_last_us);
		json_object_set_new(o, "not_caught_up",
				    json_pack("{s:I,s:s,s:s}", "nights", (json_int_t)r->beyond,
					      "first", a, "last", b));
	}
	return o;
}

/* Whether every missed night run first succeeded (the pages are the last flush's). */
static bool caught_success(const nightly_result *r)
{
	for (size_t i = 0; i < r->ncaught; i++)
		if (strcmp(r->caught[i].status, "ok") != 0 || r->caught[i].report_problem[0])
			return false;
	return true;
}

int nightly_run(nightly_result *out, const job_env *env, const nightly_opts *o, pr_error *err)
{
	nightly_result *r = out;
	db_service *svcs = NULL;
	size_t nsvcs = 0, ncatch = 0, beyond = 0;
	bool locked = false, refused = false;
	int64_t night = o->night_us > 0 ? o->night_us : DAY_US, first = 0;
	double t0 = time_mono();
	json_t *extra = NULL;
	int rc;

	if ((rc = night_init(r, env, o->at_us ? o->at_us : job_now(env), !o->at_us, err)) < 0)
		return rc;
	/* Refused before any work: not after a run recorded as ok. */
	if (!o->dry_run && env->cfg->retention.after_nightly &&
	    (rc = retention_check_at(r->at_us, err)) < 0)
		return rc;
	if ((rc = db_try_advisory_lock(env->d, NIGHTLY_LOCK, &locked, err)) < 0)
		goto fail;
	if (!locked) {
		/*
		 * The run under way pushes its own metrics: a failure pushed for
		 * this one (cron on two hosts) kept the group at 0 every night.
		 */
		refused = true;
		rc = pr_error_set(err, PR_ELOCKED,
				  "another nightly run holds the lock; not starting a second one");
		goto fail;
	}
	if ((rc = db_service_list(env->d, &svcs, &nsvcs, err)) < 0 ||
	    (rc = check_only(env->d, svcs, nsvcs, o, err)) < 0)
		goto fail;
	if ((rc = catch_up_plan(&first, &ncatch, &beyond, env, o, r->at_us, night, err)) < 0)
		goto fail;
	if (beyond) {
		r->beyond = beyond;
		r->beyond_first_us = first - (int64_t)beyond * night;
		r->beyond_last_us = first - night;
	}
	if ((rc = catch_up(r, env, o, svcs, nsvcs, night, first, ncatch, err)) < 0)
		goto fail;
	if ((ncatch || beyond) && !(extra = caught_json(r))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto fail;
	}
	if ((rc = one_night(r, env, o, svcs, nsvcs, night, false, extra, err)) < 0)
		goto fail;
	if (!o->dry_run)
		after_night(r, env, t0, o->deadline_us, caught_success(r));
	goto out;
fail:
	if (!o->dry_run && !refused) {
		pr_error ignore = PR_ERROR_INIT;
		pushgw_push_analysis(env->cfg, "nightly", false, t0, o->deadline_us, &r->a,
				     r->analysed, r->failed, &r->pages, &ignore);
	}
out:
	json_decref(extra);
	if (locked)
		db_advisory_unlock(env->d, NIGHTLY_LOCK);
	for (size_t i = 0; i < nsvcs; i++)
		db_service_release(&svcs[i]);
	free(svcs);
	return rc;
}

size_t nightly_pages_undelivered(const nightly_result *r)
{
	return r->run_id ? r->pages.pending + r->pages.failed_open : 0;
}

void nightly_result_release(nightly_result *r)
{
	analysis_release(&r->a);
	json_decref(r->services);
	json_decref(r->tasks);
	free(r->report);
	job_notes_release(&r->notes);
	for (size_t i = 0; i < r->ncaught; i++) {
		json_decref(r->caught[i].services);
		free(r->caught[i].report);
	}
	free(r->caught);
	memset(r, 0, sizeof(*r));
}

int nightly_push_failure(const config *cfg, pr_error *err)
{
	analysis a;
	int rc;

	memset(&a, 0, sizeof(a));
	rc = pushgw_push_analysis(cfg, "nightly", false, time_mono(), 0, &a, 0, 0, NULL, err);
	return rc;
}
