/*
 * triage.c: reproduce and resolve a finding (see triage.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/triage.h"
#include "jobs/evidence.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int triage_reproduce(finding *out, bool *found, db *d, const finding *stored,
		     const findings_meta *meta, pr_error *err)
{
	analysis_opts o;
	analysis a;
	json_t *ids = json_loads(stored->capture_ids ? stored->capture_ids : "{}", 0, NULL);
	char *base = NULL, *cur = NULL;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	*found = false;
	analysis_opts_default(&o);
	o.at_us = meta->at_us;
	o.rel_margin = meta->rel_margin;
	o.abs_margin = meta->abs_margin;
	o.min_baseline = meta->min_baseline;
	o.weekly = meta->weekly;
	o.week = meta->week;
	analysis_init(&a, &o);
	if (!ids || !(base = json_dumps(json_object_get(ids, "baseline"), JSON_COMPACT)) ||
	    !(cur = json_dumps(json_object_get(ids, "current"), JSON_COMPACT))) {
		rc = pr_error_set(err, PR_EDB, "database: finding %" PRId64 " has no capture ids",
				  stored->id);
		goto out;
	}
	{
		/* The stored week is the options': the target has none of its own. */
		analysis_target t = {stored->service_id, stored->service, stored->type,
				     stored->current_release, 0, 0, base, cur, NULL, NULL};
		if ((rc = analysis_add(&a, d, &t, false, err)) < 0)
			goto out;
	}
	for (size_t i = 0; i < a.ntests && !*found; i++) {
		if (a.tests[i].function_id != stored->function_id)
			continue;
		*out = a.tests[i];
		/* Handed over: the analysis keeps a zeroed slot to release. */
		memset(&a.tests[i], 0, sizeof(a.tests[i]));
		*found = true;
	}
out:
	analysis_release(&a);
	json_decref(ids);
	free(base);
	free(cur);
	return rc;
}

int triage_resolve(triage_resolution *out, db *d, const config *cfg, int64_t id, const char *note,
		   bool accept, pr_error *err)
{
	pager_flush_opts fo = {false, true, NULL, 1, 0};
	pr_error ferr = PR_ERROR_INIT;
	char object[48], detail[160];
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = db_begin(d, err)) < 0)
		return rc;
	/* One transaction: the finding is never resolved without its resolve events queued. */
	if ((rc = findings_resolve(d, id, note, accept, err)) < 0 ||
	    (rc = evidence_release_finding(d, id, &out->unpinned, err)) < 0 ||
	    (rc = pager_enqueue_resolve(d, id, &out->resolve_events, &out->cancelled, err)) < 0)
		goto out;
	snprintf(object, sizeof(object), "finding:%" PRId64, id);
	snprintf(detail, sizeof(detail),
		 "{\"unpinned_baseline_captures\":%" PRId64 ",\"resolve_events\":%zu,"
		 "\"pages_cancelled\":%zu}", out->unpinned, out->resolve_events, out->cancelled);
	if ((rc = db_audit(d, accept ? "accept" : "resolve", object, detail, err)) < 0 ||
	    (rc = db_commit(d, err)) < 0)
		goto out;
	if (!out->resolve_events)
		return 0;
	/*
	 * The resolve is committed: a flush that fails now (the database went
	 * away, out of memory) leaves the events in the outbox for the next
	 * flush, and the finding is resolved all the same.
	 */
	fo.finding_ids = &id;
	if (pager_flush(d, cfg, &fo, &out->pages, &ferr) < 0) {
		snprintf(out->paging_error, sizeof(out->paging_error),
			 "%.180s; the resolve events are pending in the "
			 "outbox (profreg page flush)",
			 ferr.msg);
		memset(&out->pages, 0, sizeof(out->pages));
	} else if (out->pages.first_error[0]) {
		snprintf(out->paging_error, sizeof(out->paging_error), "%s",
			 out->pages.first_error);
	}
	return 0;
out:
	db_rollback(d);
	return rc;
}
