/*
 * nightly.h: the nightly job.
 *
 * It holds an advisory lock for its whole length, collects new captures
 * from each enabled service's drop folder, analyses the night window of
 * every service in one false-discovery family, stores the findings with
 * their evidence and pages (one transaction), computes the suspect
 * commits of each regression, flushes the outbox, records one run with
 * each service's outcome, writes the run's reports, runs retention when
 * the config asks, and pushes its metrics. One service's failure is
 * recorded against it and the run goes on; re-running the same night
 * changes nothing.
 *
 * A night succeeds ("ok") when no service failed and at least one was
 * analysed; otherwise it is "incomplete": a night that checked nothing
 * must not look like one that found nothing.
 *
 * Nights missed (the machine down, cron not run) are run first, under
 * the same lock, each as its own run marked "catch_up" in its detail:
 * a release is judged at each of its looks in turn, and one that ran
 * only while nobody looked is judged at all instead of going into the
 * next release's baseline. The missed nights are those after the newest
 * night a nightly finished over every service (runs_last_night), each
 * ending a night after the one before, up to the last that ended more
 * than a quarter of a night before this one ends (a run started late is
 * no missed night); at most the baseline window's worth, the newest.
 */
#ifndef PR_NIGHTLY_H
#define PR_NIGHTLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "baselines/analysis.h"
#include "jobs/job.h"
#include "jobs/pager.h"
#include "jobs/retention.h"
#include "jobs/tasks.h"

struct json_t;

#define NIGHTLY_LOCK "profreg-nightly"

typedef struct nightly_opts {
	int64_t at_us;              /* the night ends here; 0: now */
	int64_t night_us;           /* its length; 0: 24 hours */
	const char *const *only;    /* only these services (none: every one) */
	size_t nonly;
	bool dry_run;               /* analyse, store nothing, record no run */
	/*
	 * Spread the services over worker processes (jobs/tasks.h): one task
	 * each, claimed by `profreg worker` processes and by this one while
	 * it waits (unless coordinator_works is false). NULL: this process
	 * does every service itself, as always. A dry run ignores it.
	 */
	const tasks_worker *worker;
	bool coordinator_works;
	double poll_s;              /* how often the coordinator looks at the tasks */
	int64_t deadline_us;        /* time_mono() microseconds the caller stops the
				     * night at (0: none): the metrics push ends before */
	/*
	 * Judge only this night, not the nights missed before it: for an
	 * operator running past nights by hand. A dry run and a run of some
	 * services (`only`) never catch up either.
	 */
	bool no_catch_up;
} nightly_opts;

/* A missed night run before the asked one: what its summary line says. */
typedef struct nightly_night {
	int64_t run_id;
	int64_t at_us;      /* the night ends here */
	const char *status; /* "ok" or "incomplete" */
	size_t analysed, skipped, failed, tests, findings, pages_enqueued;
	struct json_t *services; /* as nightly_result's */
	char *report;            /* the HTML report's path, or NULL */
	char report_problem[PR_ERROR_MSG_MAX];
} nightly_night;

typedef struct nightly_result {
	int64_t run_id;             /* 0 for a dry run */
	int64_t at_us;
	const char *status;         /* "ok" or "incomplete" */
	analysis a;                 /* the tests and findings, ranked */
	struct json_t *services;    /* name -> {status, reason, collected} */
	size_t analysed, skipped, failed;
	pager_counts pages;
	char *report;               /* the HTML report's path, or NULL */
	bool retention_ran, retention_failed;
	retention_result retention;
	char retention_problem[PR_ERROR_MSG_MAX]; /* why retention failed or is over budget,
						   * "" when neither */
	char report_problem[PR_ERROR_MSG_MAX];    /* why a report was not written, "" when all
						* were: an error, as its pages link to it */
	bool at_is_now;             /* no --at: live captures of the run are its night's */
	job_notes notes;            /* warnings: report, paging, metrics, retention */
	struct json_t *tasks;       /* spread over workers: {"total", "claims", "by_worker":
				     * {name: tasks done}}; NULL otherwise */
	nightly_night *caught;      /* the missed nights run first, oldest first */
	size_t ncaught;
	size_t beyond; /* missed nights older than the baseline window: not run */
	int64_t beyond_first_us, beyond_last_us; /* the ends of the first and last of them */
} nightly_result;

/*
 * Run the night, after the nights missed before it (above). Unknown
 * services in `only` are PR_ENOTFOUND (with the close name); a lock held
 * by another nightly is PR_ELOCKED, and pushes no metrics; a database
 * failure fails the run (recorded "failed"). A retention --at in the far
 * future is refused before any work (PR_EUSAGE). A missed night that
 * fails stops there: the next run catches it up again. *out is the asked
 * night's; the pages' counts are those of its flush, the last (the
 * outbox's state at the end). Release *out with nightly_result_release,
 * also after a failure.
 */
int nightly_run(nightly_result *out, const job_env *env, const nightly_opts *o, pr_error *err);
void nightly_result_release(nightly_result *r);

/*
 * Pages the run's flush left undelivered: still pending (a target down,
 * answering 5xx, a Retry-After, a secret missing) or refused for good
 * while their finding is open. Not a note: a page that never arrives is
 * a regression nobody hears of, so the command says so even under
 * --quiet and exits 3; the pages wait in the outbox for the next run or
 * `profreg page flush`. 0 for a dry run.
 */
size_t nightly_pages_undelivered(const nightly_result *r);

/*
 * The work of one task of kind TASKS_KIND_NIGHTLY (a tasks_handler): the
 * night of one service (collect its sources, ingest, analyse without the
 * run-wide adjustment), at the time and for the length the coordinator
 * put in the task's parameters. *result is {"outcome": the service's
 * outcome, "part": its analysis part (analysis_part_json)}. Only the
 * database or memory failing is an error; anything else is the
 * service's outcome, as in a single-process night. The process must use
 * the coordinator's configuration (the same file).
 */
int nightly_task_run(struct json_t **result, const job_env *env, const task *t, pr_error *err);

/*
 * Push a failed night's metrics when the night could not even start (no
 * database): the staleness alert must see the failure.
 */
int nightly_push_failure(const config *cfg, pr_error *err);

#endif
