/*
 * tasks.h: a night's work spread over processes through PostgreSQL
 * (table `tasks`, its one writer).
 *
 * The coordinating nightly queues one task per service of its run
 * (kind "nightly": collect, ingest and analyse that service). Any process
 * sharing the database and the blob store claims the oldest open task with
 * FOR UPDATE SKIP LOCKED, so two claimers never get the same task, and
 * holds it under a lease measured on the database's clock (no two
 * machines' clocks are compared). A keeper thread on its own connection
 * renews the lease while the task is worked; a process that dies stops
 * renewing, and once the lease has passed the task is claimed again, at
 * most max_attempts times in all, then it is failed. Only the holder of
 * the lease can finish a task: a worker that lost its lease (it stalled
 * past it and another claimed the task) finds its result refused.
 * Tasks of a run that is no longer running are never claimed.
 */
#ifndef PR_TASKS_H
#define PR_TASKS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jobs/job.h"
#include "pipeline/db.h"

struct json_t;

#define TASKS_KIND_NIGHTLY "nightly"

typedef struct task {
	int64_t id, run_id, service_id;
	char *service, *kind;
	struct json_t *params;      /* what the coordinator asked (an object) */
	int attempts;               /* claims so far, this one included */
} task;

void task_release(task *t);

/*
 * Queue one task of `kind` per service (ids and names, n of them) for run
 * `run_id`, in that order, with `params` (not stolen), in one
 * transaction. Queuing the same run's tasks again adds nothing.
 */
int tasks_enqueue(db *d, int64_t run_id, const int64_t *service_ids,
		  const char *const *services, size_t n, const char *kind,
		  const struct json_t *params, pr_error *err);

/*
 * Claim the oldest open task (of run `run_id`, or of any running run when
 * 0): a queued one, or a leased one whose lease has passed and that has
 * been claimed fewer than max_attempts times. It is leased to `worker`
 * for lease_s seconds. *got says whether there was one; *out is filled
 * when there was (release it with task_release). A claim of any run
 * passes over the runs whose coordinator's session has ended; one of run
 * `run_id` is the coordinator's own and does not.
 */
int tasks_claim(task *out, bool *got, db *d, int64_t run_id, const char *worker,
		double lease_s, int max_attempts, pr_error *err);

/*
 * A lease is held by a claim: the worker's name and the claim's attempt
 * (task.attempts as tasks_claim gave it), so that a worker stalled past
 * its lease never writes over the claim of another process of the same
 * name.
 *
 * Extend the lease of task `id` held by that claim; *kept false when it is
 * no longer its.
 */
int tasks_renew(db *d, int64_t id, const char *worker, int attempt, double lease_s, bool *kept,
		pr_error *err);

/*
 * Finish task `id` held by the claim (`worker`, `attempt`): done with
 * `result` (an object, not stolen), or failed with `error`, or released
 * back to the queue (the worker is stopping before it started the work).
 * PR_ENOTFOUND when the lease is no longer the claim's: nothing is written.
 */
int tasks_complete(db *d, int64_t id, const char *worker, int attempt, const struct json_t *result,
		   pr_error *err);
int tasks_fail(db *d, int64_t id, const char *worker, int attempt, const char *error,
	       pr_error *err);
int tasks_release(db *d, int64_t id, const char *worker, int attempt, pr_error *err);

/*
 * Fail the tasks of run `run_id` whose lease has passed after
 * max_attempts claims (their workers keep dying); *n (may be NULL) how many.
 */
int tasks_reap(db *d, int64_t run_id, int max_attempts, size_t *n, pr_error *err);

typedef struct tasks_counts {
	size_t queued, leased, done, failed;
} tasks_counts;

int tasks_count(tasks_counts *out, db *d, int64_t run_id, pr_error *err);

/* A finished task of a run, as the coordinator reads it. */
typedef struct task_outcome {
	int64_t id, service_id;
	char state[8];              /* done or failed (or queued/leased: not finished) */
	struct json_t *result;      /* done: the worker's result object; else NULL */
	char *error;                /* failed: why; else NULL */
	char *worker;
	int attempts;
} task_outcome;

/* Every task of run `run_id`, oldest first; free with tasks_outcomes_free. */
int tasks_outcomes(task_outcome **out, size_t *n, db *d, int64_t run_id, pr_error *err);
void tasks_outcomes_free(task_outcome *o, size_t n);

/* Drop the results of run `run_id` once merged (they can be large); the rows stay. */
int tasks_clear_results(db *d, int64_t run_id, pr_error *err);

/*
 * The tasks of run `run_id` (0: the latest run that queued any) as a
 * JSON array: id, run_id, service, kind, state, worker, attempts,
 * lease_until (null unless leased), error.
 */
int tasks_list(struct json_t **out, db *d, int64_t run_id, pr_error *err);

/*
 * Work one task. The handler does the work of a claimed task: on success
 * *result is its new result object (the caller's: it is stored then
 * freed); a negative return fails the task with err's message.
 */
typedef int (*tasks_handler)(struct json_t **result, const job_env *env, const task *t,
			     pr_error *err);

typedef struct tasks_worker {
	const char *id;             /* this worker's name: host:pid by default */
	double lease_s;             /* the lease, renewed every third of it */
	int max_attempts;           /* claims of one task before it fails */
	double max_task_s;          /* renew no longer than this: a hung worker loses its task */
	db *lease_db;               /* a second connection for the keeper; NULL: no renewal */
	double hold_s;              /* tests: sleep this long holding the lease before working */
	volatile sig_atomic_t *stop; /* set by a signal: release a held task, finish a begun one */
	bool reconnect;             /* a finished task's result whose connection dropped is
				     * recorded on a new one; never for a session whose locks
				     * matter (the coordinating nightly's) */
} tasks_worker;

/* What happened to the task a call worked. */
typedef struct tasks_worked {
	bool claimed;               /* false: there was nothing to claim */
	int64_t task_id;
	char service[160];
	char outcome[12];           /* done, failed, released, lost (lease gone: result
				     * dropped), deferred (the handler's PR_ELOCKED: left to
				     * a later claim when the lease runs out) */
	char error[PR_ERROR_MSG_MAX]; /* failed, deferred: why */
} tasks_worked;

/*
 * Claim one task (of run `run_id`, 0: any) as worker `w` and work it
 * with `fn`, keeping its lease meanwhile. A task of an unknown kind is
 * failed. Only the database failing is an error here; a task that failed
 * is recorded against the task (*out says so). A handler that returns
 * PR_ELOCKED (what it needs is held elsewhere for now) leaves the task
 * to a later claim once the lease runs out; the claims count against
 * max_attempts, and a task that runs out of them fails with that reason.
 */
int tasks_work_one(tasks_worked *out, const job_env *env, const tasks_worker *w,
		   int64_t run_id, const char *kind, tasks_handler fn, pr_error *err);

/* A default worker name, "host:pid", into buf. */
void tasks_worker_name(char *buf, size_t n);

#endif
