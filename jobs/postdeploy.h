/*
 * postdeploy.h: the job the CI hook runs after a deploy.
 *
 * It checks the service first (unknown, with the close name, or not
 * enabled: bad input), resolves the deploy's commit with libgit2, waits
 * (bounded) for captures of the new release while collecting the
 * service's drop folder, refuses a release with no captures at all,
 * records the deploy, analyses the release against the baseline of
 * earlier releases with "now" read when the analysis starts, stores the
 * findings with their evidence and pages, computes each regression's
 * suspect commits once and stores them with the run, sends this run's
 * pages within a deadline, records the run and writes its reports.
 *
 * The verdict fails closed: "fail" on a regression at or above the gate;
 * "inconclusive" when anything kept the release from being judged (a
 * skipped profile type, fewer captures than asked for, captures judged
 * that are all of another commit than the deployed one), with the
 * reasons; else "pass".
 */
#ifndef PR_POSTDEPLOY_H
#define PR_POSTDEPLOY_H

#include <stdint.h>

#include "baselines/analysis.h"
#include "jobs/deploys.h"
#include "jobs/job.h"
#include "jobs/pager.h"
#include "jobs/suspects.h"

struct json_t;

/* How long post-deploy may spend sending its own pages. */
#define POSTDEPLOY_PAGE_DEADLINE_MS 30000

typedef struct postdeploy_opts {
	const char *service, *release, *ref;
	const char *repo;          /* NULL: the service's repo in the config */
	const char *previous;      /* start of the range; NULL: the previous deploy's */
	int64_t wait_us;           /* wait up to this long for captures (0: no wait) */
	uint64_t min_captures;     /* captures of the release to wait for (0: 1) */
	stats_severity gate;       /* fail at or above (STATS_SEV_NONE: high) */
	int64_t at_us;             /* "now" for the analysis; 0: when it starts */
	int64_t poll_us;           /* how often the wait looks again; 0: 5 s */
	/*
	 * A canary deploy (jobs/cohort.h): the release's captures on these
	 * hosts judged against the control hosts' over the same window, not
	 * against earlier releases; control NULL: the service's other hosts.
	 * Hosts cohort_resolve refuses are PR_EUSAGE (after the wait: the
	 * canary's captures may only arrive during it).
	 */
	const char *canary, *control;
	int64_t deadline_us; /* time_mono() microseconds the caller stops the
				    * step at (0: none): the metrics push ends before */
	/*
	 * A pass is inconclusive where one function could have made the
	 * service this much costlier unseen (analysis_blind_spots; 0.25:
	 * +25%): 0 the configuration's analysis.gate_max_unseen_pct, < 0 never.
	 */
	double max_unseen;
} postdeploy_opts;

typedef struct postdeploy_result {
	char sha[GITINFO_SHA_HEX + 1];  /* the deploy's commit */
	deploy dep;
	suspects_range range;           /* the deploy's commit range */
	int64_t captures;               /* captures of the release after the wait */
	int64_t with_samples;           /* ... of which hold samples and are stamped by the
					 * analysis's "now": the ones judged */
	int64_t later;                  /* ... hold samples but are stamped after it */
	int64_t warming;                /* ... hold samples but were taken in the warm-up
					 * around the deploy: not judged */
	int64_t warmup_us;              /* that warm-up (the service's, else analysis') */
	char captured_sha[65];          /* a commit of the release's captures that is not
					 * sha, "" when none is (check_build) */
	int64_t captured_id;            /* a capture of that commit */
	bool unmeasured;                /* captured_sha is set and no capture judged
					 * carries sha: the deployed build was never
					 * measured, so a pass is inconclusive */
	int64_t judged;                 /* captures the analysis judged, every type
					 * together (a canary: its hosts' only) */
	int64_t waited_us;
	int64_t run_id;
	analysis a;
	const char *verdict;            /* "pass", "fail", "inconclusive" */
	struct json_t *reasons;         /* why inconclusive: array of strings */
	struct json_t *collect;         /* collection problems: array of strings */
	struct json_t *suspects;        /* finding id (text) -> stored suspects object */
	struct json_t *hosts;           /* a canary deploy: {"canary": [...], "control": [...]},
					 * else NULL */
	pager_counts pages;
	char *report;                   /* the run's HTML report, or NULL */
	char report_problem[PR_ERROR_MSG_MAX]; /* why it was not written, "" when it was */
	bool collect_locked;                   /* the last round of collection found another
					 * collection holding its lock */
	bool collected;                        /* a round of collection read its sources:
					        * nothing failed, or something came */
	job_notes notes;
	/* Each judged type's blind spot, the largest first; into a's tests. */
	analysis_blind *blind;
	size_t nblind;
} postdeploy_result;

/*
 * Run the job. A failure after the run began records the run "failed".
 * Release *out with postdeploy_result_release, also after a failure.
 */
int postdeploy_run(postdeploy_result *out, const job_env *env, const postdeploy_opts *o,
		   pr_error *err);
void postdeploy_result_release(postdeploy_result *r);

#endif
