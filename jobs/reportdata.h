/*
 * reportdata.h: filling reports from the database and the blob store.
 *
 * A run's, a finding's or a release's findings come from the findings
 * table; each finding's evidence from the captures pinned behind it
 * (detail -> captures -> baseline/current): their blobs are read and
 * parsed again and merged into the differential flame graph (every
 * capture weighted by 1 / its total, so each counts once, as in the
 * analysis' mean share), and the function's self share per capture comes
 * from profile_functions for the sparkline. Suspect commits are listed
 * when the service has a repository in the config and its deploys give a
 * commit range.
 *
 * Selections name captures for `profreg diff` and `profreg export`:
 *   "service=S,release=R"   "service=S,commit=C"   "id=1,2,3" (or "1,2,3")
 * with optional host=H, type=T (default cpu unless ids are given),
 * since=TIME and until=TIME, separated by commas.
 */
#ifndef PR_REPORTDATA_H
#define PR_REPORTDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jobs/config.h"
#include "jobs/job.h"
#include "pipeline/blob.h"
#include "pipeline/db.h"
#include "pipeline/profile.h"
#include "reports/report.h"

struct json_t;

/* Captures read per side of one flame graph at most (the newest win). */
#define REPORTDATA_MAX_FLAME_CAPTURES 64
/* Captures one selection may name at most. */
#define REPORTDATA_MAX_SELECTION 2000

typedef struct reportdata_sel {
	char *text;              /* as given, for titles and messages */
	char *service, *release, *commit, *host, *type;
	int64_t *ids;
	size_t nids;
	int64_t since_us, until_us; /* 0 and not *_set: unbounded; until exclusive */
	bool since_set, until_set;  /* given, even as 0 (1970-01-01T00:00:00Z) */
} reportdata_sel;

/*
 * Parse a selection; extra host/since/until (may be NULL/0) apply when
 * the text does not set them. PR_EUSAGE with the reason on bad text.
 * Release with reportdata_sel_release.
 */
int reportdata_sel_parse(reportdata_sel *out, const char *text, const char *host,
			 int64_t since_us, int64_t until_us, pr_error *err);
void reportdata_sel_release(reportdata_sel *s);

/* One selected capture; strings owned (reportdata_caps_free). */
typedef struct reportdata_cap {
	int64_t id, service_id, at_us, total;
	char *service, *type, *release, *commit, *host, *blob_key, *format, *retention;
} reportdata_cap;

void reportdata_caps_free(reportdata_cap *c, size_t n);

/*
 * The captures a selection names, oldest first, all of one profile type
 * (PR_EUSAGE otherwise). None is PR_ENOTFOUND, and so is a capture id
 * asked for and not among them ("capture N not found"); more than
 * REPORTDATA_MAX_SELECTION is PR_ELIMIT with the count, never the newest
 * of them alone.
 */
int reportdata_sel_captures(reportdata_cap **out, size_t *n, db *d, const reportdata_sel *s,
			    pr_error *err);

/*
 * Read and parse one capture's blob, with the primary value chosen for
 * its profile type. *out is the caller's (profile_free). A capture in
 * the summary tier (no blob) is PR_ENOTFOUND; one whose blob is missing
 * from the store, or cannot be parsed, is PR_EDATA naming the capture.
 */
int reportdata_load_profile(profile **out, blob_store *bs, const reportdata_cap *c,
			    const profile_limits *lim, pr_error *err);

/* Reports. `out` is initialised here; release it with report_release. */
int reportdata_run(report *out, db *d, blob_store *bs, const config *cfg, int64_t run_id,
		   pr_error *err);
int reportdata_finding(report *out, db *d, blob_store *bs, const config *cfg,
		       int64_t finding_id, pr_error *err);
/*
 * A run's report holding only the findings of `team`'s services, and
 * naming no other team's service (failures and skips included). A team
 * with no service the role can see is PR_ENOTFOUND (with a close name
 * when there is one); a run that analysed no service (not analyze,
 * nightly or post-deploy) is PR_EDATA.
 */
int reportdata_run_team(report *out, db *d, blob_store *bs, const config *cfg, int64_t run_id,
			const char *team, pr_error *err);
/* A release's findings; a release the service never had is PR_ENOTFOUND. */
int reportdata_release(report *out, db *d, blob_store *bs, const config *cfg,
		       const char *service, const char *release, pr_error *err);

/*
 * Compare two selections: one flame graph (base against target) and the
 * functions whose self share changed most (at most `top`), with the
 * analysis' statistics when both sides hold one service and type and the
 * base has at least two captures.
 */
int reportdata_diff(report *out, db *d, blob_store *bs, const config *cfg,
		    const reportdata_sel *base, const reportdata_sel *target, size_t top,
		    pr_error *err);

/*
 * The flame graph of a slow span: the captures of `service` on `host`
 * whose own time overlaps [start - margin, start + duration + margin],
 * with only the samples labelled with the span's id (span_id, spanID,
 * "local root span id") or, without one, the trace's (trace_id,
 * traceID), drawn against every sample of those captures. One profile
 * type (`type`, NULL: cpu): a heap capture's allocation sites in a CPU
 * span's baseline would halve every share. Label values
 * are compared while a profile is read and never kept. No capture is
 * PR_ENOTFOUND; captures whose format has no labels give the window's
 * whole profile, and the report's note says so.
 */
typedef struct reportdata_span_sel {
	const char *service, *host;
	int64_t start_us, duration_us, margin_us;
	const char *span_id, *trace_id;   /* either may be NULL */
	const char *type;                 /* profile type; NULL: cpu */
} reportdata_span_sel;

int reportdata_span(report *out, db *d, blob_store *bs, const config *cfg,
		    const reportdata_span_sel *s, pr_error *err);

/* Where reports go: config reports.dir, else <home>/reports. Caller frees. */
char *reportdata_dir(const config *cfg, const char *home);

/*
 * Write the HTML, Markdown and JSON reports of run `run_id` to
 * <reports dir>/run-<RUN_ID>-<DB>.html, .md and .json, each by
 * fileio_write_out: whole or not at all, and never over a symbolic link
 * or anything else that is not a regular file. Each finding's section has
 * the anchor #finding-<FINDING_ID>.
 * *html_path (may be NULL) is the HTML file's path, the caller's to free.
 */
int reportdata_write_run(db *d, blob_store *bs, const config *cfg, const char *home,
			 int64_t run_id, char **html_path, pr_error *err);

/*
 * Append `name` to `out` as a piece of a file name: [A-Za-z0-9._-] as
 * they are, every other byte as ~XX, so two names never share a file;
 * past 80 characters cut and followed by ~~ and 12 hex digits of its
 * SHA-256. 0, or PR_ENOMEM.
 */
int reportdata_file_piece(buf *out, const char *name);

/*
 * The same three files per team of the run's services (its own, those
 * with findings, those it looked at), each with only that team's
 * services: <name>-team-<TEAM>.html, .md and .json, the team's name with
 * every byte outside [A-Za-z0-9._-] as ~XX (past 80 characters, cut and
 * followed by ~~ and 12 hex digits of its SHA-256). *written is the
 * number of teams written. reportdata_write_run_team writes one team's.
 */
int reportdata_write_run_team(db *d, blob_store *bs, const config *cfg, const char *home,
			      int64_t run_id, const char *team, char **html_path, pr_error *err);
int reportdata_write_run_teams(db *d, blob_store *bs, const config *cfg, const char *home,
			       int64_t run_id, size_t *written, pr_error *err);

/*
 * A finished run's reports and its teams', as a run that pages writes
 * them: both are tried; -1 when either failed, with the first failure in
 * problem[0..len) ("" when none). The run's findings are stored either
 * way, but its pages link to the report, so the caller says so in its
 * exit code. *html_path as reportdata_write_run. Also written: the
 * reports of earlier runs (up to 16) whose pages still wait and link to
 * a report file, the run's or a team's, that is not there (a run killed
 * before it wrote them), so that the pages this run sends lead
 * somewhere.
 */
int reportdata_write_run_all(const job_env *env, int64_t run_id, char **html_path, char *problem,
			     size_t len);

#endif
