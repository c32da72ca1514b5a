/*
 * runs.h: the run record of every job (table `runs`), its one writer.
 *
 * A job begins a run ("running"), does its work, and finishes it with a
 * status (ok, failed, degraded, ...) and a detail object merged into the
 * parameters it began with. A process killed with SIGKILL never
 * finishes its run; its database session ends with it, so the next run
 * of the same kind finds the row still "running" with no session behind
 * it and marks it "interrupted".
 */
#ifndef PR_RUNS_H
#define PR_RUNS_H

#include <stdbool.h>
#include <stdint.h>

#include "pipeline/db.h"

struct json_t;

/*
 * Mark the runs of `kind` left running by a dead session as interrupted,
 * then record a new run of `kind` (for one service when service_id > 0)
 * with `params` (a JSON object, may be NULL; not stolen). *id is the new
 * run's id: past every run report of this database (report_run_name) in
 * the reports folder set with runs_set_reports_dir. A database restored
 * from a dump is behind its folder; its next run would take a lost run's
 * id and write its reports over that run's, which pages link to. It
 * takes an id past them instead, saying once on stderr that ids continue
 * after the folder's last run.
 */
int runs_begin(int64_t *id, db *d, const char *kind, int64_t service_id,
	       const struct json_t *params, pr_error *err);

/*
 * The reports folder (reportdata_dir) whose run reports the ids of runs
 * this process begins stay clear of; copied. NULL: none, ids are not
 * checked (tests that write no reports).
 */
int runs_set_reports_dir(const char *dir, pr_error *err);

/* Finish run `id` with `status`, merging `detail` (may be NULL; not stolen) into its detail. */
int runs_finish(db *d, int64_t id, const char *status, const struct json_t *detail,
		pr_error *err);

/* Mark the runs of `kind` whose session is gone as interrupted; *n (may be NULL) how many. */
int runs_reap(db *d, const char *kind, int64_t *n, pr_error *err);

/*
 * The end of the newest night a run of `kind` judged to its end: the
 * greatest `at_us` in the detail of its runs that finished ("ok" or
 * "incomplete": one that failed or was interrupted judged nothing
 * whole) over every service (no "only" in the detail: a run of some
 * services is not the fleet's night). *found is false when there is none.
 */
int runs_last_night(int64_t *at_us, bool *found, db *d, const char *kind, pr_error *err);

/*
 * Recent runs, newest first, at most `limit`, as a JSON array of objects
 * {id, kind, service, status, started_at, finished_at, seconds (how long
 * it took; null while running), findings, failed}.
 */
int runs_list(struct json_t **out, db *d, size_t limit, pr_error *err);

/*
 * One run as JSON: id, kind, status, service, started_at, finished_at,
 * detail and the findings it reported. PR_ENOTFOUND when absent.
 */
int runs_show(struct json_t **out, db *d, int64_t id, pr_error *err);

#endif
