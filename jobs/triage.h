/*
 * triage.h: what on-call does with a finding after the page: reproduce
 * it from the captures pinned behind it, and resolve it.
 */
#ifndef PR_TRIAGE_H
#define PR_TRIAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "baselines/analysis.h"
#include "baselines/findings.h"
#include "jobs/config.h"
#include "jobs/pager.h"

/*
 * Run the stored finding's comparison again on exactly its captures, with
 * the parameters it was found with. *out (release with finding_clear) is
 * the reproduced test and *found is true; *found is false when the
 * captures left of it do not hold the function: after the finding closed,
 * retention may have deleted its baseline or cut it to a summary
 * (evidence_count says which, and the caller says so).
 */
int triage_reproduce(finding *out, bool *found, db *d, const finding *stored,
		     const findings_meta *meta, pr_error *err);

typedef struct triage_resolution {
	int64_t unpinned;          /* baseline captures whose pin lifted */
	size_t resolve_events;     /* resolve pages enqueued */
	size_t cancelled;          /* unsent trigger pages cancelled */
	pager_counts pages;        /* the flush of this finding's resolve events */
	char paging_error[256];    /* a delivery problem, or why the flush failed; "" */
} triage_resolution;

/*
 * Close open finding `id` (PR_ENOTFOUND when it is not open), lift its
 * pins and enqueue its resolve pages, in one transaction, audited; then
 * send those pages. The resolve is committed before the flush: a flush
 * that fails leaves the events pending and is reported in paging_error,
 * not as an error. With accept, its rise is the new level
 * (findings_resolve), and a finding already resolved by hand may be
 * accepted too.
 */
int triage_resolve(triage_resolution *out, db *d, const config *cfg, int64_t id, const char *note,
		   bool accept, pr_error *err);

#endif
