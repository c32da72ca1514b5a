/*
 * worker.c: the worker loop (see worker.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/worker.h"
#include "common/timeutil.h"
#include "jobs/nightly.h"
#include "pipeline/db.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The test-only hold (worker.h): a number of seconds, else none. */
static double test_hold(void)
{
	const char *s = getenv("PROFREG_TEST_WORKER_HOLD_S");
	char *end = NULL;
	double v;

	if (!s || !*s)
		return 0;
	v = strtod(s, &end);
	return end && !*end && v > 0 && v < 86400 ? v : 0;
}

static bool stopping(const worker_opts *o)
{
	return o->w.stop && *o->w.stop;
}

/* Sleep `secs` in short steps, waking early on *stop. */
static void idle(const worker_opts *o, double secs)
{
	double t0 = time_mono();

	while (!stopping(o) && time_mono() - t0 < secs) {
		struct timespec ts = {0, 50 * 1000000L};
		nanosleep(&ts, NULL);
	}
}

/* Both connections are up again (a connection that never went is left as it is). */
static int reconnect(const job_env *env, const worker_opts *o, pr_error *err)
{
	int rc = db_reconnect(env->d, err);

	if (rc == 0 && o->w.lease_db)
		rc = db_reconnect(o->w.lease_db, err);
	return rc;
}

/*
 * After `why`: 0 when the database dropped the worker and took it back
 * within o->reconnect_s of `since`, when the worker first found it gone
 * (so a database that takes every session and drops it again is waited
 * for no longer than one that stays away), or the worker was told to stop
 * meanwhile; else why's code with why in err, or the last attempt's
 * reason when the database stayed away.
 */
static int wait_for_db(worker_result *out, const job_env *env, const worker_opts *o,
		       double since, const pr_error *why, pr_error *err)
{
	double t0 = time_mono(), pause = 0.5;
	pr_error e = PR_ERROR_INIT;

	if (o->reconnect_s <= 0 || (db_connected(env->d) &&
				    (!o->w.lease_db || db_connected(o->w.lease_db))))
		return pr_error_set(err, why->code, "%s", why->msg);
	if (o->on_db)
		o->on_db(why, false, 0, o->ctx);
	for (;;) {
		idle(o, pause);
		if (stopping(o))
			return 0;
		pr_error_clear(&e);
		if (reconnect(env, o, &e) == 0 && time_mono() - since < o->reconnect_s) {
			out->reconnects++;
			if (o->on_db)
				o->on_db(NULL, true, time_mono() - t0, o->ctx);
			return 0;
		}
		if (!e.code)
			return pr_error_set(err, why->code, "%s (and again after each new session "
					    "for %.0f s)", why->msg, time_mono() - since);
		if (time_mono() - since >= o->reconnect_s)
			return pr_error_set(err, e.code, "%s (for %.0f s, since: %s)", e.msg,
					    time_mono() - t0, why->msg);
		pause = pause * 2 > 5 ? 5 : pause * 2;
	}
}

int worker_run(worker_result *out, const job_env *env, const worker_opts *o, pr_error *err)
{
	tasks_worker w = o->w;
	double idle_since = time_mono(), lost_at = 0;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	w.hold_s = test_hold();
	w.reconnect = o->reconnect_s > 0;
	while (!stopping(o)) {
		tasks_worked t;
		pr_error why = PR_ERROR_INIT;
		if (tasks_work_one(&t, env, &w, 0, TASKS_KIND_NIGHTLY, nightly_task_run, &why) <
		    0) {
			/*
			 * The budget runs from when the loss was first seen, not
			 * from the call before a task that ran longer than it (a
			 * claim that got through starts it anew); a database that
			 * drops every new session keeps it running.
			 */
			if (!lost_at || t.claimed)
				lost_at = time_mono();
			if ((rc = wait_for_db(out, env, o, lost_at, &why, err)) < 0)
				break;
			idle_since = time_mono();
			continue;
		}
		lost_at = 0;
		if (!t.claimed) {
			if (o->once ||
			    (o->idle_exit_s > 0 && time_mono() - idle_since >= o->idle_exit_s))
				break;
			idle(o, o->poll_s > 0 ? o->poll_s : 0.5);
			continue;
		}
		idle_since = time_mono();
		if (strcmp(t.outcome, "done") == 0)
			out->done++;
		else if (strcmp(t.outcome, "failed") == 0)
			out->failed++;
		else if (strcmp(t.outcome, "released") == 0)
			out->released++;
		else if (strcmp(t.outcome, "deferred") == 0)
			out->deferred++;
		else
			out->lost++;
		if (o->on_task)
			o->on_task(&t, o->ctx);
		if (o->once)
			break;
	}
	out->stopped = stopping(o);
	return rc;
}
