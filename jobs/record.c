/*
 * record.c: findings, evidence and pages in one transaction (see record.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/record.h"
#include "baselines/findings.h"
#include "jobs/evidence.h"
#include "jobs/pager.h"

#include <string.h>

int record_findings(analysis *a, db *d, int64_t run_id, const config *cfg, bool page,
		    pr_error *err)
{
	size_t enqueued0 = a->pages_enqueued, went0 = a->went_away, fixed0 = a->fixed;
	findings_closed closed = {0};
	int rc;

	if ((rc = db_begin(d, err)) < 0)
		return rc;
	if ((rc = findings_store(a, d, run_id, err)) < 0 ||
	    (rc = findings_follow_up(&closed, a, d, run_id, err)) < 0)
		goto out;
	/* What went away or was fixed: its pins lift and its pages resolve. */
	for (size_t i = 0; i < closed.n; i++) {
		int64_t unpinned = 0;
		if ((rc = evidence_release_finding(d, closed.ids[i], &unpinned, err)) < 0 ||
		    (page && (rc = pager_enqueue_resolve(d, closed.ids[i], &a->pages_enqueued, NULL,
							 err)) < 0))
			goto out;
	}
	a->went_away += closed.went_away;
	a->fixed += closed.fixed;
	for (size_t i = 0; i < a->ntests && a->tests[i].significant; i++) {
		const finding *f = &a->tests[i];
		/*
		 * Both are idempotent and use the stored finding's captures: a
		 * finding first stored without paging (analyze) pages when a
		 * later run that pages sees it again.
		 */
		if (f->direction == FINDING_REGRESSION &&
		    (rc = evidence_pin_finding(d, f, a->opts.forensic_keep_us, err)) < 0)
			goto out;
		/*
		 * Only a confirmed finding pages (a critical one is confirmed at
		 * once when the config says so): a candidate waits for the next
		 * look, and pages the night it is confirmed.
		 */
		if (page && strcmp(f->state, "confirmed") == 0 &&
		    (rc = pager_enqueue_finding(d, cfg, f, run_id, &a->pages_enqueued, err)) < 0)
			goto out;
	}
	rc = db_commit(d, err);
out:
	if (rc < 0) {
		db_rollback(d);
		a->pages_enqueued = enqueued0; /* rolled back with the findings */
		a->went_away = went0;
		a->fixed = fixed0;
	}
	findings_closed_release(&closed);
	return rc;
}
