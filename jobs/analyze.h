/*
 * analyze.h: the analysis a person asks for (`profreg analyze`): one
 * service or every enabled one, one release or a time range, in one
 * false-discovery family, recorded as a run. It pages only when asked:
 * an analysis by hand is often exploratory (a loose --fdr, an --at in
 * the past).
 */
#ifndef PR_ANALYZE_H
#define PR_ANALYZE_H

#include <stdbool.h>
#include <stdint.h>

#include "baselines/analysis.h"
#include "jobs/job.h"
#include "jobs/pager.h"

typedef struct analyze_opts {
	const char *service;        /* NULL: every enabled service */
	const char *release;        /* judge this release's captures, or */
	int64_t since_us, until_us; /* these times' (until 0: up to "now") */
	const char *type;           /* profile type; NULL: cpu */
	analysis_opts analysis;     /* margins, window, fdr; at_us 0: now */
	const char *selection;      /* what was asked, recorded with the run */
	bool dry_run;               /* store nothing, record no run */
	bool page;                  /* enqueue and send the pages of the regressions */
	/*
	 * Canary against control (jobs/cohort.h): judge only the cohort's
	 * captures against the control hosts' over the same window, not
	 * against the rolling baseline. One service only; control NULL:
	 * every other host of the service.
	 */
	const char *cohort, *control;
	/*
	 * A second connection (the caller's) on which every service's
	 * captures are loaded while the service before it is analysed, when
	 * every service is analysed; NULL: one connection, one after the other.
	 */
	db *ahead_db;
} analyze_opts;

typedef struct analyze_result {
	int64_t run_id;             /* 0 for a dry run */
	analysis a;
	pager_counts pages;
	job_notes notes;
	char *report;               /* the run's HTML report when it paged (owned), else NULL */
	char report_problem[PR_ERROR_MSG_MAX]; /* paging, why its report was not written;
						* "" when it was */
} analyze_result;

/*
 * Analyse. An unknown service is PR_ENOTFOUND (with the close name), a
 * disabled one PR_EREFUSED; a cohort without one service, or hosts that
 * cohort_resolve refuses, PR_EUSAGE. Release *out with analyze_result_release,
 * also after a failure.
 */
int analyze_run(analyze_result *out, const job_env *env, const analyze_opts *o, pr_error *err);
void analyze_result_release(analyze_result *r);

#endif
