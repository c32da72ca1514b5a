/*
 * findings.h: what analyses found, stored (tables `findings` and
 * `run_findings`).
 *
 * A finding is stored once, by the first run that finds it, and never
 * changes after: its release, window, captures and numbers are what it
 * was found on. A later run that finds the same function of the same
 * service, type and release again while it is open records that it saw
 * it (run_findings) and takes the stored numbers. Each run's row in
 * run_findings can hold the suspect commits that run computed.
 *
 * These functions run inside the caller's transaction when one is open;
 * storing findings, their evidence and their pages is one transaction of
 * the job that found them.
 */
#ifndef PR_FINDINGS_H
#define PR_FINDINGS_H

#include <stddef.h>
#include <stdint.h>

#include "baselines/analysis.h"
#include "pipeline/db.h"

struct json_t;

/*
 * Store the significant tests of a finished analysis under run `run_id`
 * (0: no run): each gets its id; one stored before by another run is
 * marked stored_before and takes the stored numbers, unless this run's
 * are worse news (a regression where an improvement or a shift was
 * stored, or a more severe regression): then the stored finding takes
 * this run's numbers, and its state history says it was escalated.
 *
 * Each also gets a look (finding_looks: this run's numbers for it) and
 * its state (f->state, and finding_states when it changes): a new
 * finding is a "candidate", or "confirmed" at once when it is critical
 * and a->opts.confirm_critical, or when confirm_looks <= 1; a candidate
 * becomes "confirmed" when it has been significant on
 * a->opts.confirm_looks different looks.
 *
 * A test whose finding is closed (fixed, went away) by a run whose
 * a->opts.at_us was at or after this run's, and has no open successor,
 * is that finding as stored, marked closed: this run looks at an earlier
 * night, and neither reopens, duplicates nor pages it.
 */
int findings_store(analysis *a, db *d, int64_t run_id, pr_error *err);

/* Findings a follow-up closed: their resolve pages and pins are the caller's. */
typedef struct findings_closed {
	int64_t *ids;
	size_t n, went_away, fixed;
} findings_closed;

void findings_closed_release(findings_closed *c);

/*
 * After findings_store, for each release the analysis judged whole
 * (a->judged): every open finding of that service and type
 *   - of the same release that this run did not find again gets a look
 *     (significant false) and "went_away" when its own test against the
 *     margin, with every capture so far, is no longer significant before
 *     any multiple-testing adjustment (p > fdr), or its function is no
 *     longer tested;
 *   - of an earlier release, or of a later one that this release ran
 *     again after (a rollback: its reason says so), is "fixed" (fixed_by
 *     this release) when this
 *     release's share is back inside the band it was measured against
 *     (its baseline share plus the margin) and not significantly above,
 *     judged on two captures or more with the finding's own options, and
 *     the finding's release is neither judged by this run nor captured in
 *     the night (a->opts.look_us) before a->opts.at_us: it no longer runs.
 * Either closes it (status resolved). *out lists them.
 */
int findings_follow_up(findings_closed *out, analysis *a, db *d, int64_t run_id,
		       pr_error *err);

/*
 * Stored findings, newest first, at most `limit` (0: 100), of one state
 * and one service when given (NULL: any), as a JSON array: id, service,
 * type, kind, function, direction, severity, state, status, release,
 * fixed_by, baseline_share, current_share, delta, q_value, created,
 * looks (how many looks) and states (every state with its time, run
 * and reason). *out is the caller's.
 */
int findings_list(struct json_t **out, db *d, const char *state, const char *service,
		  size_t limit, pr_error *err);

/*
 * One root cause, one incident. `from[i]` and `to[i]` (stored findings of
 * one service, type and release) share a cause: a call path or a suspect
 * commit, said by why[i]. Findings linked directly or through others
 * become one incident (table finding_groups): an incident one of them
 * already belongs to, else a new one whose lead is its first finding
 * (the lowest id: the one found first). A lead no longer open (it went
 * away, was fixed or resolved), or a candidate never paged, passes to an
 * open member, a confirmed one first (findings_incident_lead). Each test
 * of `a` that is a member gets incident_id and incident_lead. Within the
 * caller's transaction.
 */
int findings_link(analysis *a, db *d, const int64_t *from, const int64_t *to,
		  const char *const *why, size_t n, pr_error *err);

/*
 * The lead of `incident` (0: none): a lead no longer open, or still a
 * candidate that was never paged, passes to an open member, a confirmed
 * one first. Within the caller's transaction.
 */
int findings_incident_lead(db *d, int64_t incident, int64_t *lead, pr_error *err);

/*
 * The ids of `incident`'s open, confirmed regressions other than `lead`,
 * oldest first, into *ids (the caller frees it; NULL when none) and *n.
 */
int findings_incident_members(db *d, int64_t incident, int64_t lead, int64_t **ids, size_t *n,
			      pr_error *err);

/*
 * The member of `incident` other than `lead` with the highest severity
 * among its open, confirmed regressions (the oldest of equals), leaving
 * out those whose page is someone else's or their own: within a rise
 * accepted by hand, among skip[0..nskip) (the caller's: carried from an
 * earlier release's page), or holding an open trigger of their own at
 * their severity or above
 * (pending or sent, with no resolve). *sev (STATS_SEV_NONE when there is
 * none) and *function, its name (the caller frees it; NULL when there is
 * none).
 */
int findings_incident_worst(db *d, int64_t incident, int64_t lead, const int64_t *skip,
			    size_t nskip, stats_severity *sev, char **function, pr_error *err);

/*
 * The open regression findings of the same service, type and function
 * as stored finding f, of another release, whose rise f's own rise is
 * not beyond (the estimates' difference within what both intervals
 * allow: an estimate that landed low is no bar), oldest first: the
 * findings f may be carried from. Stored before f or after it: a later
 * release's finding, confirmed first by the earlier release's look
 * (findings_store), pages, and the earlier release, still running,
 * confirmed on its own a night later and paged the same rise again
 * (jobs/record.c). An incident pages through one of its findings (its
 * lead, or the member the lead passed to), so each is listed once for
 * every finding that may hold its page: itself and, in an incident, each
 * finding of the incident. (*ids)[i] is the other finding and
 * (*holders)[i] a finding that may hold its page; both are new arrays of
 * *n the caller frees (NULL when none).
 */
int findings_same_rise_open(db *d, const finding *f, int64_t **ids, int64_t **holders, size_t *n,
			    pr_error *err);

/* Record that finding id is carried from finding `from` (0: from none). */
int findings_set_carried(db *d, int64_t id, int64_t from, pr_error *err);

/* A finding's incident and that incident's lead (0, 0 when it has none). */
int findings_incident_of(db *d, int64_t id, int64_t *incident, int64_t *lead, pr_error *err);

/* A finding's state history (the JSON array findings_list gives as states). */
int findings_history(struct json_t **out, db *d, int64_t id, pr_error *err);

/* What a stored finding was found with, beside its numbers. */
typedef struct findings_meta {
	char status[16];          /* open, resolved */
	int64_t at_us;            /* the analysis' "now" */
	double rel_margin, abs_margin;
	size_t min_baseline;
	bool weekly;              /* the week was judged (analysis_opts.weekly) */
	analysis_week week;       /* and its service's week */
} findings_meta;

/*
 * A stored finding: *out is filled (release it with finding_clear), and
 * *meta. PR_ENOTFOUND when there is none.
 */
int findings_get(finding *out, findings_meta *meta, db *d, int64_t id, pr_error *err);

/*
 * Close an open finding; PR_ENOTFOUND when it is not open. With accept,
 * its rise is accepted, the new level (a regression open or already
 * resolved by hand): its release goes back into later baselines, and
 * later findings of the same rise are carried from it
 * (findings_accepted_rise).
 */
int findings_resolve(db *d, int64_t id, const char *note, bool accept, pr_error *err);

/*
 * Whether regression f is within a rise accepted by hand (findings_resolve
 * with accept): one of f's service, type, function and kind, of any
 * release, whose rise f's is not beyond, as findings_same_rise_open
 * judges it (f rose no further than what was accepted). Then f->accepted is set and f->carried_from
 * names the latest such finding, stored; one that rose beyond since
 * loses a carry from an accepted finding.
 */
int findings_carry_accepted(db *d, finding *f, pr_error *err);

/* The suspect commits run `run_id` computed for a finding (a JSON object text). */
int findings_set_suspects(db *d, int64_t run_id, int64_t finding_id, const char *json,
			  pr_error *err);

/*
 * The stored suspects of a finding: run `run_id`'s when > 0, else the
 * latest run's that stored any. *out (the caller frees it) is NULL when
 * none were stored.
 */
int findings_get_suspects(char **out, db *d, int64_t run_id, int64_t finding_id, pr_error *err);

/*
 * The findings run `run_id` closed (fixed, rolled back, went away), of
 * `team`'s services (NULL: every service the role may see), regressions
 * first, most severe first, as a JSON array of {id, service, type, function, release,
 * direction, severity, state, reason}; the reason is the one its state
 * history records. *out is the caller's (json_decref).
 */
int findings_closed_by_run(struct json_t **out, db *d, int64_t run_id, const char *team,
			   pr_error *err);

/*
 * Whether a run judged `release` of service `service_id` (judged_releases,
 * migration 038): into types (size bytes) its profile types judged, ", "
 * between them ("" when none), and into *first_us when it was first.
 */
int findings_release_judged(char *types, size_t size, int64_t *first_us, db *d, int64_t service_id,
			    const char *release, pr_error *err);

#endif
