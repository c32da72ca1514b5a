/*
 * baseline.h: rolling per-function baselines.
 *
 * A baseline is the set of eligible captures of one service and profile
 * type in a window before the analysed period, and per function the
 * summary of its self share over them: n, mean and variance on the
 * variance-stabilised scale (asin sqrt), mean, median, MAD and EWMA of
 * the share, and the mean absolute rate (self value per second of
 * capture, or per capture when durations are unknown).
 *
 * Not eligible: captures retained as forensic evidence or tagged
 * "incident" or "forensic", empty captures, and captures of a release
 * with a regression finding for this service and type, found by the
 * query's as_of, that did not go away: open, fixed (rolled back too) or
 * resolved by hand. A regression never becomes its own baseline, nor
 * hides the same regression shipped again.
 *
 * Captures in the summary tier (retention) are eligible: they keep their
 * top functions with unchanged shares. Their synthetic "(other
 * functions)" row is never loaded as a function.
 */
#ifndef PR_BASELINE_H
#define PR_BASELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pipeline/db.h"

/* One capture as analysis sees it. */
typedef struct capture_ref {
	int64_t id;
	int64_t captured_at_us;
	char *release;
	int64_t total;
	int64_t sample_count;
	int64_t duration_ns;
	char unit[16];       /* the primary value's unit, cut to 15 bytes ("nanoseconds") */
	int64_t period;      /* the sampling period, in period_unit; 0 when unknown */
	char period_type[16]; /* what a period measures ("cpu"), cut; "" when unknown */
	char period_unit[16]; /* its unit ("nanoseconds"), cut; "" when unknown */
	double load;         /* the capture's load figure (tag "load" or "rps"); 0 none */
	char *host;          /* the host it was taken on; NULL when unknown */
} capture_ref;

typedef struct capture_set {
	capture_ref *caps; /* oldest first */
	size_t n;
} capture_set;

void capture_set_release(capture_set *s);

/* Which captures a selection takes. */
typedef struct capture_query {
	int64_t service_id;
	const char *type;
	const char *release;         /* only this release (NULL: any) */
	const char *exclude_release; /* never this release (NULL: none) */
	const char *exclude_releases; /* nor these (JSON array text, or NULL) */
	int64_t as_of_us;             /* open findings first seen after this (their first
				       * look, in runs' --at time) do not count (0: all) */
	int64_t since_us, until_us;  /* [since, until); 0 = unbounded */
	bool eligible_only;          /* apply the baseline eligibility rules */
	bool unjudged_too;           /* ... but take releases no run has judged too */
	bool no_evidence;            /* leave out incident and forensic captures only (a
				      * canary's control: what runs now, good or not) */
	const char *hosts;           /* only captures of these hosts (JSON array text), or NULL */
	bool empty;                  /* only the captures with no samples (else never these) */
	int64_t warmup_us;           /* leave out captures this close to a deploy of their
				      * release (DB_WARMUP_SQL); 0: none */
} capture_query;

/*
 * The captures with samples matching `q` (with `q->empty`, those without),
 * oldest first. Free with capture_set_release.
 */
int capture_set_load(capture_set *out, db *d, const capture_query *q, pr_error *err);

/*
 * The releases of service `service_id` and type `type` with a capture in
 * [since_us, until_us), in order of their first capture there. *out is a
 * new array of *n strings; free it with capture_releases_free.
 */
int capture_releases_in(char ***out, size_t *n, db *d, int64_t service_id, const char *type,
			int64_t since_us, int64_t until_us, pr_error *err);
void capture_releases_free(char **r, size_t n);

/*
 * Whether a stored analysis judged release `release` of service
 * `service_id` and type `type` at `by_us` or before (migration 038's
 * record of its first judgement): *out true when it did.
 */
int baseline_release_judged(bool *out, db *d, int64_t service_id, const char *type,
			    const char *release, int64_t by_us, pr_error *err);

/*
 * When a stored analysis first judged a release of service `service_id`
 * and type `type`, among those at `by_us` or before: *out_us 0 when none
 * did (its history is all a first judgement has).
 */
int baseline_first_judged(int64_t *out_us, db *d, int64_t service_id, const char *type,
			  int64_t by_us, pr_error *err);

/*
 * The release of service `service_id` whose first capture of any of the
 * `ntypes` types in [since_us, until_us) is the latest: the one deployed
 * last, running now. *out is a new string, NULL when there is none.
 */
int capture_newest_release(char **out, db *d, int64_t service_id, const char *const *types,
			   size_t ntypes, int64_t since_us, int64_t until_us, pr_error *err);

/*
 * Every host that service `service_id` has a capture from, sorted; free
 * with capture_releases_free.
 */
int capture_hosts_of(char ***out, size_t *n, db *d, int64_t service_id, pr_error *err);

/* The captures with these ids (a JSON array text), oldest first. */
int capture_set_load_ids(capture_set *out, db *d, const char *ids_json, pr_error *err);

/*
 * Self values of every function in the captures of `a` followed by those
 * of `b` (b may be NULL): a dense matrix, one row per function that
 * appears in any of them, one column per capture (a's first). Absent
 * means 0, except in a summary capture that retention cut to its top
 * functions: there an absent function's value is unknown (it was at most
 * the smallest value kept, not 0) and is FUNC_MATRIX_UNKNOWN. A capture
 * deleted since `a` or `b` was read has every value unknown.
 */
#define FUNC_MATRIX_UNKNOWN (-1)

typedef struct func_matrix {
	int64_t *func_ids;  /* nfuncs */
	size_t nfuncs;
	size_t ncaps;
	int64_t *self;      /* nfuncs * ncaps, row per function */
	int64_t *total;     /* the same places' total values; NULL until loaded */
} func_matrix;

int func_matrix_load(func_matrix *out, db *d, const capture_set *a,
		     const capture_set *b, pr_error *err);

/*
 * Load the total (inclusive) values of m's functions in the same
 * captures into m->total (0 where a capture lacks the function). They
 * cost a second read, so only a target that needs them asks.
 */
int func_matrix_load_totals(func_matrix *m, db *d, const capture_set *a,
			    const capture_set *b, pr_error *err);
void func_matrix_release(func_matrix *m);

/*
 * Share and rate of a function in one capture: the rate is self value
 * per second of capture, NaN when the capture has no duration (folded
 * stacks, perf script).
 */
double capture_share(const capture_ref *c, int64_t self);
double capture_rate(const capture_ref *c, int64_t self);

/* The summary of one function over a baseline. */
typedef struct baseline_func {
	int64_t function_id;
	size_t n;
	double mean_share, median_share, mad_share, ewma_share;
	double mean_vst, var_vst, var_floor;
	double mean_rate;
} baseline_func;

#define BASELINE_EWMA_ALPHA 0.2

/*
 * Summarise row `row` of `m` over columns [col0, col0 + base->n), which
 * hold the baseline captures `base`.
 */
int baseline_summarize(baseline_func *out, const func_matrix *m, size_t row,
		       size_t col0, const capture_set *base, pr_error *err);

/*
 * Store a baseline and its per-function summaries, or find the stored one
 * with the same captures (the window moved, the captures did not): either
 * way *id is the baseline's id and *reused says which.
 */
int baseline_store(int64_t *id, bool *reused, db *d, int64_t service_id,
		   const char *type, int64_t window_start_us, int64_t window_end_us,
		   const capture_set *base, const baseline_func *funcs, size_t nfuncs,
		   pr_error *err);

/*
 * The names and files of the functions behind `ids`, in the same order.
 * *names and *files are new arrays of n strings, freed with
 * func_names_free.
 */
int func_names_load(char ***names, char ***files, db *d, const int64_t *ids, size_t n,
		    pr_error *err);
void func_names_free(char **names, char **files, size_t n);

/*
 * A service's baseline as analysis would build it at `at_us`: the eligible
 * captures in the window before it, and per function its summary, with
 * its name, highest mean share first. Release with baseline_view_release.
 */
typedef struct baseline_view {
	size_t captures;
	baseline_func *funcs;
	char **names, **files;
	size_t nfuncs;
} baseline_view;

int baseline_view_load(baseline_view *out, db *d, int64_t service_id, const char *type,
		       int64_t at_us, int64_t window_us, pr_error *err);
void baseline_view_release(baseline_view *v);

#endif
