/*
 * worker.h: `profreg worker`, a process that works the tasks of nightly
 * runs spread over machines (jobs/tasks.h, jobs/nightly.h).
 *
 * It claims one task at a time from any running night, works it with the
 * lease kept by a second connection, and records its result, until told
 * to stop (*stop, set by SIGTERM or SIGINT: a task already begun is
 * finished, one only held is given back), or after one task with `once`,
 * or after idle_exit_s seconds with nothing to claim.
 *
 * For tests only: PROFREG_TEST_WORKER_HOLD_S=S makes the worker hold each
 * task it claims for S seconds (lease kept) before working it, so that a
 * test can kill it in the middle of a task deterministically. Only this
 * loop reads it; a nightly working tasks itself never holds.
 */
#ifndef PR_WORKER_H
#define PR_WORKER_H

#include <stdbool.h>
#include <stddef.h>

#include "jobs/job.h"
#include "jobs/tasks.h"

typedef struct worker_opts {
	tasks_worker w;             /* its name, lease, attempts, keeper connection, stop flag */
	bool once;                  /* at most one task, then return */
	double idle_exit_s;         /* return after this long with nothing to claim (0: never) */
	double poll_s;              /* how often to look when idle */
	void (*on_task)(const tasks_worked *t, void *ctx); /* after each task (may be NULL) */
	double reconnect_s;         /* the database dropped the worker: connect again for
				     * this long before giving up (0: give up at once) */
	/* The database lost (why set, back false) and back again (why NULL, back true). */
	void (*on_db)(const pr_error *why, bool back, double waited_s, void *ctx);
	void *ctx;
} worker_opts;

typedef struct worker_result {
	size_t done, failed, released, lost;
	size_t deferred;            /* left to a later claim: what it needed was held elsewhere */
	size_t reconnects;          /* times the database came back after dropping it */
	bool stopped;               /* it ended on *stop */
} worker_result;

/*
 * Work tasks until one of the ends above. Only the database failing is an
 * error: one that drops the worker's connections (a restart, a failover)
 * is waited for, up to o->reconnect_s, connecting again with pauses of
 * half a second growing to five; a task begun when it went is the
 * lease's to hand on (tasks.h). A database that answers with an error is
 * an error at once.
 */
int worker_run(worker_result *out, const job_env *env, const worker_opts *o, pr_error *err);

#endif
