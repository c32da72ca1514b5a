/*
 * report.h: what a report says, independent of how it is written.
 *
 * A report is a summary (which run, which time window, services analysed
 * and failed), a ranked list of findings with their statistics, and per
 * finding the evidence: the captures on each side (their blob keys), the
 * function's share capture by capture with the baseline band, suspect
 * commits and the merged stacks of both sides for the differential flame
 * graph. jobs/reportdata.c fills it from the database and the blob store;
 * report_html, report_md and report_json write it. A `profreg diff` is
 * the same model with one flame graph for the whole comparison and the
 * most changed functions as its rows.
 *
 * Every string in the model is owned by it (report_release frees all).
 */
#ifndef PR_REPORT_H
#define PR_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/error.h"
#include "reports/flame.h"

#define REPORT_SCHEMA_VERSION 1

/* The function's share in one capture, for the sparkline. */
typedef struct report_point {
	int64_t capture_id;
	int64_t at_us;
	double share;
	bool current;        /* a current capture (else baseline) */
} report_point;

/* A capture behind a finding. */
typedef struct report_capture {
	int64_t id;
	int64_t at_us;
	char *blob_key;
	char *release;
	char *host;          /* NULL: unknown */
	char *retention;     /* hot, summary, forensic */
	bool current;
} report_capture;

/* An incident snapshot of a capture's host taken near the capture's time. */
typedef struct report_snapshot {
	int64_t id;
	int64_t taken_us;
	char *host;
	char *incident;      /* NULL: none */
	char *reason;        /* NULL: none */
	int64_t capture_id;  /* the capture it was taken closest to */
	int64_t gap_us;      /* taken_us minus that capture's time */
} report_snapshot;

/* How far from a capture's time a snapshot of its host is shown beside it. */
#define REPORT_SNAPSHOT_WINDOW_US (15 * 60 * INT64_C(1000000))

typedef struct report_commit {
	char *sha, *author, *subject;
} report_commit;

/* One step of a finding's life: candidate, confirmed, went_away, fixed, resolved. */
typedef struct report_state {
	char *state, *at, *reason;   /* at: "2026-01-15T00:00:00Z" */
	int64_t run;                 /* the run that moved it; 0: none */
} report_state;

typedef struct report_finding {
	int64_t id;                  /* 0: not a stored finding (a diff row) */
	char *service, *type, *function, *file;
	char *renamed_from;          /* its name in the baseline, when renamed; NULL */
	char *direction; /* regression, improvement, relative_shift; NULL: not a finding */
	char *severity, *status, *test;
	char *release, *commit;      /* the judged release and its commit; NULL: unknown */
	double baseline_share, current_share, delta, rel_delta, ci_low, ci_high;
	double p_value, q_value;     /* NaN: not tested */
	char *cost_unit;             /* NULL: a share; else the whole-service cost's unit,
				      * and the values above are the cost's (measure.h) */
	size_t baseline_captures, current_captures;
	/* Of the captures it was compared on, those retention deleted since (caps lacks them). */
	size_t baseline_deleted, current_deleted;
	char *captures_note; /* what retention did to its captures, or NULL */
	report_capture *caps;
	size_t ncaps;
	report_point *points;        /* baseline first, then current, each oldest first */
	size_t npoints;
	bool has_band;
	double band_median, band_spread; /* baseline median and 1.4826 x MAD of the share */
	report_commit *suspects;
	size_t nsuspects;
	char *suspect_note;          /* why there are none, or NULL */
	char *canonical;             /* the stored finding in the one finding schema
				      * (JSON object text), or NULL (a diff's rows) */
	flame_tree *flame;           /* NULL: see flame_note */
	char *flame_note;
	int flame_ref;               /* >= 0: same captures as finding [flame_ref], drawn there */
	char *state;                 /* its state now; NULL: not a stored finding */
	char *fixed_by;              /* the release that fixed it, or NULL */
	char *compare_href;          /* its captures on serve's comparison page, or NULL */
	report_state *history;       /* every state it went through, oldest first */
	size_t nhistory;
	report_snapshot *snaps;      /* near the captures, oldest first */
	size_t nsnaps;
	int64_t incident_id;         /* 0: not part of an incident */
	int64_t incident_lead;       /* the id of the incident's lead finding */
	int64_t carried_from;        /* the earlier release's finding it is carried from
				      * (it paged; this one does not), 0 none */
	char *carried_release;       /* that finding's release, or NULL */
	bool carried_accepted;       /* that finding's rise was accepted by hand: this
				      * one is within it, pages and gates nothing */
} report_finding;

/*
 * A finding the run closed (fixed, rolled back, went away), as its state
 * history records it: a night that closes a paged finding says so, or its
 * report reads as one where nothing happened.
 */
typedef struct report_closed {
	int64_t id;
	char *service, *type, *release;
	char *function;             /* NULL: a whole-service cost */
	char *direction, *severity; /* as it was found */
	char *state;                /* went_away, fixed, resolved */
	char *reason;               /* "fixed by release 'v4': ...", as recorded */
} report_closed;

typedef struct report {
	char *kind;                  /* "run", "finding", "release", "diff" */
	char *title;
	int64_t generated_us;
	int64_t run_id;              /* 0: none */
	char *run_kind, *run_status;
	int64_t started_us, finished_us;
	int64_t judged_us;           /* the time the run judged at (--at), 0: unknown */
	int64_t window_from_us, window_to_us; /* span of every capture involved */
	long services_analysed, services_failed; /* -1: unknown */
	char **failures;             /* "service: reason" */
	size_t nfailures;
	char **skips;                /* "service: reason": not analysed, not failed */
	size_t nskips;
	char **partial; /* "service: what was not judged and why" */
	size_t npartial;
	report_finding *findings;    /* ranked: findings first, best first */
	size_t nfindings;
	report_closed *closed; /* findings the run closed, by id */
	size_t nclosed;
	/* diff only */
	char *base_desc, *target_desc;
	size_t base_ncaps, target_ncaps;
	flame_tree *flame;
	char *note;                  /* a line under the summary, or NULL */
	flame_opts fopts;            /* how to draw the graphs */
} report;

/* An empty report of `kind` (copied). */
/*
 * Where a renderer writes: the buffer and its first failure. Once an
 * append fails every later one is skipped, so a renderer appends freely
 * and checks rc once at the end.
 */
typedef struct report_out {
	buf *b;
	int rc;
} report_out;

void report_put(report_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The file name, without extension, of a run's report: "run-42-1a2b3c4d",
 * the run id and the first 8 hex digits of the database's instance id,
 * so that two databases writing into one reports folder never overwrite
 * each other's run 42. Links (pages, CI summaries) use the same name.
 */
#define REPORT_RUN_NAME_MAX 48
void report_run_name(char out[REPORT_RUN_NAME_MAX], int64_t run_id, const char *instance);

/*
 * The run id of a file in the reports folder that report_run_name named
 * for `instance`'s database: its reports ("run-42-1a2b3c4d.html", any
 * extension) and its team reports ("run-42-1a2b3c4d-team-..."). 0 for
 * any other file, another database's run reports among them.
 */
int64_t report_run_name_id(const char *file, const char *instance);

int report_init(report *r, const char *kind, pr_error *err);
void report_release(report *r);

/* Add a zeroed finding (p_value, q_value NaN; flame_ref -1); *out points into r. */
int report_add_finding(report *r, report_finding **out, pr_error *err);

/*
 * One root cause, one entry: true when finding i belongs to an incident
 * whose lead is another finding of the same report, so it is shown inside
 * its lead's entry rather than as an entry of its own.
 */
bool report_folded(const report *r, size_t i);

/* The members of finding i's incident other than itself, shown in its entry. */
size_t report_members(const report *r, size_t i, const report_finding **out, size_t max);

/*
 * Finding i's entry number as shown (1-based, in rank order, counting
 * only findings that are an entry of their own); a folded member's is
 * its lead's. *member: 0 for an entry, else the member's place (1-based)
 * among its lead's members. member may be NULL.
 */
size_t report_entry(const report *r, size_t i, size_t *member);

/*
 * True when the report's findings, and the findings it closed, are of
 * more than one profile type: a share of heap bytes in use and a share
 * of CPU time then sit in one report, and each row names its type.
 */
bool report_mixes_types(const report *r);

/* Compute the baseline band of a finding from its baseline points. */
void report_finding_band(report_finding *f);

/* Findings per severity among significant regressions: [low, medium, high, critical]. */
void report_severity_counts(const report *r, size_t out[4]);

/*
 * Write the report. Each appends to `out`; on failure `err` says why
 * (PR_ENOMEM, PR_ELIMIT when the buffer's cap is reached).
 */
int report_html(buf *out, const report *r, pr_error *err);
int report_md(buf *out, const report *r, pr_error *err);
int report_json(buf *out, const report *r, pr_error *err);

/*
 * True when the report covers all it was asked to judge: a diff, or a run
 * with no service failed or skipped, none partly judged, at least one
 * analysed and no note (a release never analysed).
 */
bool report_judged_whole(const report *r);

/*
 * The sentence under a report with no finding: the all-clear only when
 * everything the run was asked to judge was judged; else what the
 * silence covers. NULL when the report's note already says why there is
 * nothing (a release never analysed). Static text.
 */
const char *report_empty_line(const report *r);

/* Format a share as a percentage into out[32] ("12.34%"). */
const char *report_pct(char out[32], double share);

#endif
