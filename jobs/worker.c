/*
 * worker.c: the worker loop (see worker.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/worker.h"
#include "common/timeutil.h"
#include "jobs/nightly.h"

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

int worker_run(worker_result *out, const job_env *env, const worker_opts *o, pr_error *err)
{
	tasks_worker w = o->w;
	double idle_since = time_mono();
	int rc = 0;

	memset(out, 0, sizeof(*out));
	w.hold_s = test_hold();
	while (!stopping(o)) {
		tasks_worked t;
		if ((rc = tasks_work_one(&t, env, &w, 0, TASKS_KIND_NIGHTLY, nightly_task_run,
					 err)) < 0)
			break;
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
