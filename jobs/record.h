/*
 * record.h: the step every analysing job ends with: store what the
 * analysis found, pin each regression's evidence and enqueue its pages,
 * all in one transaction, so that no finding is ever stored without its
 * evidence or its page, and no page is ever enqueued for a finding that
 * was rolled back.
 */
#ifndef PR_RECORD_H
#define PR_RECORD_H

#include <stdint.h>

#include "baselines/analysis.h"
#include "jobs/config.h"
#include "pipeline/blob.h"
#include "pipeline/db.h"

/*
 * Store the findings of a finished analysis under run `run_id`
 * (baselines/findings.h), pin the evidence of each regression
 * (jobs/evidence.h, kept cfg->analysis.forensic_keep_us) and, when
 * `page` is true, enqueue the pages of each confirmed regression at or
 * above paging.min_severity (jobs/pager.h): a candidate does not page
 * until a later look confirms it. a->pages_enqueued counts the rows
 * added. A finding stored before by another run is pinned and paged
 * again, which changes nothing when it already was. Then the follow-up
 * (findings_follow_up): open findings of the judged releases that went
 * away, or that a later release fixed, are closed, their baseline pins
 * lift and (with `page`) their pages get resolve events; a->went_away
 * and a->fixed count them.
 *
 * One root cause, one incident: the run's regressions of one service,
 * type and release that share a call path (a stack of their newest
 * current capture, read from the blob store `bs`, holds both) become one
 * incident (findings_link), and only its lead pages. Every job that
 * pages passes its blob store: without one (NULL) no call path is
 * found, and each of those regressions pages on its own. A rise of the
 * whole service's cost (FINDING_KIND_COST) in a release where shares
 * rose joins the incident of the highest-ranked of them as a member,
 * never its lead; a cost that rose alone pages on its own.
 */
int record_findings_bs(analysis *a, db *d, blob_store *bs, int64_t run_id, const config *cfg,
		       bool page, pr_error *err);

#endif
