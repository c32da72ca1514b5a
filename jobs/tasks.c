/*
 * tasks.c: the task table and its lease keeper (see tasks.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/tasks.h"
#include "common/timeutil.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void task_release(task *t)
{
	free(t->service);
	free(t->kind);
	json_decref(t->params);
	memset(t, 0, sizeof(*t));
}

static int oom(pr_error *err)
{
	return pr_error_set(err, PR_ENOMEM, "out of memory");
}

int tasks_enqueue(db *d, int64_t run_id, const int64_t *service_ids,
		  const char *const *services, size_t n, const char *kind,
		  const json_t *params, pr_error *err)
{
	static const char sql[] =
		"insert into tasks (run_id, service_id, service, kind, params) "
		"values ($1, $2, $3, $4, $5::jsonb) on conflict do nothing";
	char rid[24], sid[24], *ptext = NULL;
	int rc;

	if (!(ptext = json_dumps(params, JSON_COMPACT)))
		return oom(err);
	snprintf(rid, sizeof(rid), "%" PRId64, run_id);
	if ((rc = db_begin(d, err)) < 0)
		goto out;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const char *p[] = {rid, sid, services[i], kind, ptext};
		snprintf(sid, sizeof(sid), "%" PRId64, service_ids[i]);
		rc = db_exec(d, NULL, err, "queuing tasks", sql, 5, p);
	}
	if (rc == 0)
		rc = db_commit(d, err);
	else
		db_rollback(d);
out:
	free(ptext);
	return rc;
}

int tasks_claim(task *out, bool *got, db *d, int64_t run_id, const char *worker,
		double lease_s, int max_attempts, pr_error *err)
{
	static const char sql[] =
		"with c as (select t.id from tasks t join runs r on r.id = t.run_id"
		" where (t.state = 'queued' or (t.state = 'leased' and t.lease_until <= now()))"
		" and t.attempts < $3::int and r.status = 'running'"
		" and ($4::bigint = 0 or t.run_id = $4::bigint)"
		/*
		 * Only for a coordinator still there: one killed leaves its run
		 * "running" until the next nightly marks it interrupted, and work
		 * on its tasks would never be merged (as runs_reap: pid and start).
		 * A claim for one run is its coordinator's, alive as it asks, though
		 * on a session other than the run's when its connection was made
		 * again (ingest does that): else nobody works its tasks.
		 */
		" and ($4::bigint <> 0 or r.backend_pid is null"
		"   or exists (select 1 from pg_stat_activity a"
		"   where a.pid = r.backend_pid and (a.backend_start is null"
		"   or a.backend_start = r.backend_start)))"
		" order by t.id limit 1 for update of t skip locked) "
		/* A deferral's reason is the attempt's: the next starts without it. */
		"update tasks t set state = 'leased', worker = $1, error = null,"
		" lease_until = now() + $2::float8 * interval '1 second',"
		" attempts = t.attempts + 1, updated_at = now() from c where t.id = c.id "
		"returning t.id, t.run_id, t.service_id, t.service, t.kind, t.params::text,"
		" t.attempts";
	char lease[32], att[16], rid[24];
	const char *p[] = {worker, lease, att, rid};
	PGresult *res = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	*got = false;
	snprintf(lease, sizeof(lease), "%.3f", lease_s);
	snprintf(att, sizeof(att), "%d", max_attempts);
	snprintf(rid, sizeof(rid), "%" PRId64, run_id);
	if ((rc = db_exec(d, &res, err, "claiming a task", sql, 4, p)) < 0)
		return rc;
	if (db_rows(res) == 1) {
		json_error_t jerr;
		out->id = db_get_i64(res, 0, 0);
		out->run_id = db_get_i64(res, 0, 1);
		out->service_id = db_get_i64(res, 0, 2);
		out->service = strdup(db_get_text(res, 0, 3));
		out->kind = strdup(db_get_text(res, 0, 4));
		out->params = json_loads(db_get_text(res, 0, 5), 0, &jerr);
		out->attempts = (int)db_get_i64(res, 0, 6);
		*got = true;
		if (!out->service || !out->kind || !out->params) {
			/* The lease runs out and another claims it. */
			task_release(out);
			*got = false;
			rc = oom(err);
		}
	}
	db_result_free(res);
	return rc;
}

/*
 * One statement on the held lease; *hit whether it was still this claim's:
 * the worker's name and the claim's attempt ($3). The name alone let a
 * worker stalled past its lease record a stale result over the claim of
 * another process of the same name (`--id %H` on two hosts of one name,
 * host:pid in containers that all run as pid 1).
 */
static int held(db *d, const char *what, const char *sql, int64_t id, const char *worker,
		int attempt, const char *extra, bool *hit, pr_error *err)
{
	char sid[24], att[16];
	const char *p[] = {sid, worker, att, extra};
	PGresult *res = NULL;
	int rc;

	snprintf(sid, sizeof(sid), "%" PRId64, id);
	snprintf(att, sizeof(att), "%d", attempt);
	if ((rc = db_exec(d, &res, err, what, sql, extra ? 4 : 3, p)) < 0)
		return rc;
	*hit = db_rows(res) == 1;
	db_result_free(res);
	return 0;
}

#define HELD " where id = $1 and worker = $2 and attempts = $3::int and state = 'leased'"

int tasks_renew(db *d, int64_t id, const char *worker, int attempt, double lease_s, bool *kept,
		pr_error *err)
{
	char lease[32];

	snprintf(lease, sizeof(lease), "%.3f", lease_s);
	return held(d, "renewing a task lease",
		    "update tasks set lease_until = now() + $4::float8 * interval '1 second',"
		    " updated_at = now()" HELD " returning id",
		    id, worker, attempt, lease, kept, err);
}

static int finish(db *d, const char *what, const char *sql, int64_t id, const char *worker,
		  int attempt, const char *extra, pr_error *err)
{
	bool hit = false;
	int rc = held(d, what, sql, id, worker, attempt, extra, &hit, err);

	if (rc == 0 && !hit)
		rc = pr_error_set(err, PR_ENOTFOUND,
				  "task %" PRId64 " is no longer leased to worker '%s': "
				  "its lease ran out and another worker claimed it",
				  id, worker);
	return rc;
}

int tasks_complete(db *d, int64_t id, const char *worker, int attempt, const json_t *result,
		   pr_error *err)
{
	char *text = json_dumps(result, JSON_COMPACT);
	int rc;

	if (!text)
		return oom(err);
	rc = finish(d, "finishing a task",
		    "update tasks set state = 'done', result = $4::jsonb, lease_until = null,"
		    " updated_at = now()" HELD " returning id",
		    id, worker, attempt, text, err);
	free(text);
	return rc;
}

int tasks_fail(db *d, int64_t id, const char *worker, int attempt, const char *error, pr_error *err)
{
	return finish(d, "failing a task",
		      "update tasks set state = 'failed', error = $4, lease_until = null,"
		      " updated_at = now()" HELD " returning id",
		      id, worker, attempt, error, err);
}

int tasks_release(db *d, int64_t id, const char *worker, int attempt, pr_error *err)
{
	/* Given back before any work: the claim does not count against it. */
	return finish(d, "releasing a task",
		      "update tasks set state = 'queued', worker = null, lease_until = null,"
		      " attempts = greatest(attempts - 1, 0), updated_at = now()" HELD
		      " returning id",
		      id, worker, attempt, NULL, err);
}

/*
 * The work could not start for now (another session holds the service's
 * lock: a worker whose lease ran out while it stalled, whose session the
 * server keeps until its keepalive gives up): the lease is left to run
 * out, so that the task goes to a later claim, which counts against its
 * attempts, and the reason stays on the task for tasks_reap to give.
 */
static int defer(db *d, int64_t id, const char *worker, int attempt, const char *why, pr_error *err)
{
	return finish(d, "deferring a task",
		      "update tasks set error = $4, updated_at = now()" HELD " returning id", id,
		      worker, attempt, why, err);
}

int tasks_reap(db *d, int64_t run_id, int max_attempts, size_t *n, pr_error *err)
{
	static const char sql[] =
		"update tasks set state = 'failed', lease_until = null, updated_at = now(),"
		" error = case when error is null"
		" then format('its last worker (%s) was lost, after %s attempts', worker, attempts)"
		" else format('not done in %s attempts: %s', attempts, error) end"
		" where run_id = $1 and state = 'leased'"
		" and lease_until <= now() and attempts >= $2::int returning id";
	char rid[24], att[16];
	const char *p[] = {rid, att};
	PGresult *res = NULL;
	int rc;

	snprintf(rid, sizeof(rid), "%" PRId64, run_id);
	snprintf(att, sizeof(att), "%d", max_attempts);
	if ((rc = db_exec(d, &res, err, "failing lost tasks", sql, 2, p)) < 0)
		return rc;
	if (n)
		*n = (size_t)db_rows(res);
	db_result_free(res);
	return 0;
}

int tasks_count(tasks_counts *out, db *d, int64_t run_id, pr_error *err)
{
	static const char sql[] =
		"select count(*) filter (where state = 'queued'),"
		" count(*) filter (where state = 'leased'),"
		" count(*) filter (where state = 'done'),"
		" count(*) filter (where state = 'failed') from tasks where run_id = $1";
	char rid[24];
	const char *p[] = {rid};
	PGresult *res = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	snprintf(rid, sizeof(rid), "%" PRId64, run_id);
	if ((rc = db_exec(d, &res, err, "counting tasks", sql, 1, p)) < 0)
		return rc;
	out->queued = (size_t)db_get_i64(res, 0, 0);
	out->leased = (size_t)db_get_i64(res, 0, 1);
	out->done = (size_t)db_get_i64(res, 0, 2);
	out->failed = (size_t)db_get_i64(res, 0, 3);
	db_result_free(res);
	return 0;
}

void tasks_outcomes_free(task_outcome *o, size_t n)
{
	for (size_t i = 0; o && i < n; i++) {
		json_decref(o[i].result);
		free(o[i].error);
		free(o[i].worker);
	}
	free(o);
}

int tasks_outcomes(task_outcome **out, size_t *n, db *d, int64_t run_id, pr_error *err)
{
	static const char sql[] =
		"select id, service_id, state, result::text, error, worker, attempts"
		" from tasks where run_id = $1 order by id";
	char rid[24];
	const char *p[] = {rid};
	PGresult *res = NULL;
	task_outcome *o = NULL;
	int rc, rows;

	*out = NULL;
	*n = 0;
	snprintf(rid, sizeof(rid), "%" PRId64, run_id);
	if ((rc = db_exec(d, &res, err, "reading task results", sql, 1, p)) < 0)
		return rc;
	rows = db_rows(res);
	if (!(o = calloc(rows ? (size_t)rows : 1, sizeof(*o)))) {
		rc = oom(err);
		goto out;
	}
	for (int r = 0; r < rows; r++) {
		task_outcome *t = &o[r];
		json_error_t jerr;
		t->id = db_get_i64(res, r, 0);
		t->service_id = db_get_i64(res, r, 1);
		snprintf(t->state, sizeof(t->state), "%s", db_get_text(res, r, 2));
		t->attempts = (int)db_get_i64(res, r, 6);
		if (!PQgetisnull(res, r, 3) &&
		    !(t->result = json_loads(db_get_text(res, r, 3), 0, &jerr))) {
			rc = pr_error_set(err, PR_EDATA, "cannot read the result of task %" PRId64
					  ": %s", t->id, jerr.text);
			*n = (size_t)r + 1;
			goto out;
		}
		if ((!PQgetisnull(res, r, 4) && !(t->error = strdup(db_get_text(res, r, 4)))) ||
		    (!PQgetisnull(res, r, 5) && !(t->worker = strdup(db_get_text(res, r, 5))))) {
			*n = (size_t)r + 1;
			rc = oom(err);
			goto out;
		}
	}
	*n = (size_t)rows;
out:
	db_result_free(res);
	if (rc < 0) {
		tasks_outcomes_free(o, *n);
		*n = 0;
		o = NULL;
	}
	*out = o;
	return rc;
}

int tasks_clear_results(db *d, int64_t run_id, pr_error *err)
{
	char rid[24];
	const char *p[] = {rid};

	snprintf(rid, sizeof(rid), "%" PRId64, run_id);
	return db_exec(d, NULL, err, "clearing task results",
		       "update tasks set result = null where run_id = $1 and result is not null",
		       1, p);
}

int tasks_list(json_t **out, db *d, int64_t run_id, pr_error *err)
{
	static const char sql[] =
		"select id, run_id, service, kind, state, worker, attempts,"
		" to_char(lease_until at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), error"
		" from tasks where run_id = case when $1::bigint = 0"
		" then (select max(run_id) from tasks) else $1::bigint end order by id";
	char rid[24];
	const char *p[] = {rid};
	PGresult *res = NULL;
	json_t *arr = NULL;
	int rc;

	*out = NULL;
	snprintf(rid, sizeof(rid), "%" PRId64, run_id);
	if ((rc = db_exec(d, &res, err, "listing tasks", sql, 1, p)) < 0)
		return rc;
	if (!(arr = json_array())) {
		rc = oom(err);
		goto out;
	}
	for (int r = 0; r < db_rows(res); r++) {
		json_t *o = json_pack(
			"{s:I,s:I,s:s,s:s,s:s,s:s?,s:i,s:s?,s:s?}", "id",
			(json_int_t)db_get_i64(res, r, 0), "run_id",
			(json_int_t)db_get_i64(res, r, 1),
			"service", db_get_text(res, r, 2), "kind", db_get_text(res, r, 3), "state",
			db_get_text(res, r, 4), "worker", db_get_text(res, r, 5), "attempts",
			(int)db_get_i64(res, r, 6), "lease_until", db_get_text(res, r, 7), "error",
			db_get_text(res, r, 8));
		if (!o || json_array_append_new(arr, o) < 0) {
			rc = oom(err);
			goto out;
		}
	}
	*out = arr;
	arr = NULL;
out:
	json_decref(arr);
	db_result_free(res);
	return rc;
}

/* The lease keeper: a thread renewing one task's lease on its own connection. */
typedef struct keeper {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	bool stopping, lost;
	db *d;
	int64_t id;
	const char *worker;
	int attempt; /* the claim's, which the lease is held by with the name */
	double lease_s, max_s;
} keeper;

static void *keeper_main(void *arg)
{
	keeper *k = arg;
	double t0 = time_mono();

	pthread_mutex_lock(&k->mu);
	while (!k->stopping) {
		struct timespec until;
		double step = k->lease_s / 3;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += (time_t)step;
		until.tv_nsec += (long)((step - (double)(time_t)step) * 1e9);
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		if (pthread_cond_timedwait(&k->cv, &k->mu, &until) != ETIMEDOUT || k->stopping)
			continue;
		/* A hung task gives its lease up: past max_s the lease simply runs out. */
		if (k->lost || time_mono() - t0 > k->max_s)
			continue;
		pthread_mutex_unlock(&k->mu);
		{
			pr_error e = PR_ERROR_INIT;
			bool kept = true;
			/*
			 * A failed renewal is retried at the next step; the lease has
			 * two more. The keeper's connection is its own while the task
			 * runs, idle between tasks: one the server dropped meanwhile (a
			 * restart, a failover) is found here, and mended at once.
			 */
			int rc = tasks_renew(k->d, k->id, k->worker, k->attempt, k->lease_s, &kept,
					     &e);
			if (rc < 0 && !db_connected(k->d) && db_reconnect(k->d, &e) == 0)
				rc = tasks_renew(k->d, k->id, k->worker, k->attempt, k->lease_s,
						 &kept, &e);
			if (rc == 0 && !kept) {
				pthread_mutex_lock(&k->mu);
				k->lost = true;
				pthread_mutex_unlock(&k->mu);
			}
		}
		pthread_mutex_lock(&k->mu);
	}
	pthread_mutex_unlock(&k->mu);
	return NULL;
}

static void keeper_stop(keeper *k)
{
	pthread_mutex_lock(&k->mu);
	k->stopping = true;
	pthread_cond_signal(&k->cv);
	pthread_mutex_unlock(&k->mu);
	pthread_join(k->thread, NULL);
	pthread_cond_destroy(&k->cv);
	pthread_mutex_destroy(&k->mu);
}

static int keeper_start(keeper *k, const tasks_worker *w, int64_t id, int attempt, pr_error *err)
{
	memset(k, 0, sizeof(*k));
	k->d = w->lease_db;
	k->id = id;
	k->worker = w->id;
	k->attempt = attempt;
	k->lease_s = w->lease_s;
	k->max_s = w->max_task_s > 0 ? w->max_task_s : 1e12;
	pthread_mutex_init(&k->mu, NULL);
	pthread_cond_init(&k->cv, NULL);
	if (pthread_create(&k->thread, NULL, keeper_main, k) != 0) {
		pthread_cond_destroy(&k->cv);
		pthread_mutex_destroy(&k->mu);
		return pr_error_set(err, PR_ERR, "cannot start the lease keeper thread");
	}
	return 0;
}

/* Sleep up to `secs`, in short steps, until *stop is set. True when stopped. */
static bool hold(double secs, volatile sig_atomic_t *stop)
{
	double t0 = time_mono();

	while (time_mono() - t0 < secs) {
		struct timespec ts = {0, 50 * 1000000L};
		if (stop && *stop)
			return true;
		nanosleep(&ts, NULL);
	}
	return stop && *stop;
}

int tasks_work_one(tasks_worked *out, const job_env *env, const tasks_worker *w,
		   int64_t run_id, const char *kind, tasks_handler fn, pr_error *err)
{
	task t;
	keeper k;
	bool got = false, keeping = false;
	json_t *result = NULL;
	pr_error terr = PR_ERROR_INIT;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = tasks_claim(&t, &got, env->d, run_id, w->id, w->lease_s, w->max_attempts,
			      err)) < 0 || !got)
		return rc;
	out->claimed = true;
	out->task_id = t.id;
	snprintf(out->service, sizeof(out->service), "%s", t.service);
	if (w->lease_db && (rc = keeper_start(&k, w, t.id, t.attempts, err)) < 0)
		goto out;
	keeping = w->lease_db != NULL;
	if (w->hold_s > 0 && hold(w->hold_s, w->stop)) {
		/* Stopped before the work began: give the task back at once. */
		snprintf(out->outcome, sizeof(out->outcome), "released");
		rc = tasks_release(env->d, t.id, w->id, t.attempts, err);
		goto out;
	}
	if (strcmp(t.kind, kind) != 0)
		pr_error_set(&terr, PR_EUSAGE, "task %" PRId64 " is of kind '%s', not '%s'", t.id,
			     t.kind, kind);
	else if (fn(&result, env, &t, &terr) == 0 && !result)
		pr_error_set(&terr, PR_ENOMEM, "out of memory");
	if (keeping) {
		keeper_stop(&k);
		keeping = false;
	}
	/*
	 * The work is done: a connection the server dropped since is mended
	 * and the result recorded on the new one, while the lease holds,
	 * rather than left for the task to be worked again by the next claim.
	 * Work that failed is not: the drop may be why it failed, and a task
	 * recorded as failed is never tried again, where one whose result is
	 * lost goes to the next claim when its lease runs out.
	 */
	if (terr.code == PR_ELOCKED) {
		snprintf(out->outcome, sizeof(out->outcome), "deferred");
		snprintf(out->error, sizeof(out->error), "%s", terr.msg);
		if ((rc = defer(env->d, t.id, w->id, t.attempts, terr.msg, err)) == PR_ENOTFOUND) {
			pr_error_clear(err);
			rc = 0;
		}
		goto out;
	}
	for (int tries = 0; tries < (w->reconnect && !terr.code ? 2 : 1); tries++) {
		if (tries && (db_connected(env->d) || db_reconnect(env->d, err) < 0))
			break;
		pr_error_clear(err);
		if (!terr.code) {
			snprintf(out->outcome, sizeof(out->outcome), "done");
			rc = tasks_complete(env->d, t.id, w->id, t.attempts, result, err);
		} else {
			snprintf(out->outcome, sizeof(out->outcome), "failed");
			snprintf(out->error, sizeof(out->error), "%s", terr.msg);
			rc = tasks_fail(env->d, t.id, w->id, t.attempts, terr.msg, err);
		}
		if (rc == 0 || db_connected(env->d))
			break;
	}
	if (rc == PR_ENOTFOUND) {
		/* Another worker has it now; its result will be the task's. */
		snprintf(out->outcome, sizeof(out->outcome), "lost");
		snprintf(out->error, sizeof(out->error), "%s", err->msg);
		pr_error_clear(err);
		rc = 0;
	}
out:
	if (keeping)
		keeper_stop(&k);
	json_decref(result);
	task_release(&t);
	return rc;
}

void tasks_worker_name(char *buf, size_t n)
{
	char host[128];

	if (gethostname(host, sizeof(host)) < 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = 0;
	snprintf(buf, n, "%s:%ld", host, (long)getpid());
}
