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

/*
 * Inside the caller's open transaction: an incident pages through its
 * lead at the severity of its worst confirmed member. For each incident
 * of a's confirmed findings with a member worse than its lead (or the
 * lead below paging.min_severity and a member above it), the lead's page
 * goes at the member's severity and names it: one not sent yet is
 * refreshed, one sent is escalated. A lead that is closed, still a
 * candidate, or carried from an earlier finding is left as it is.
 * a->pages_enqueued counts what was added.
 */
int record_page_leads(analysis *a, db *d, const config *cfg, int64_t run_id, pr_error *err);

#endif
