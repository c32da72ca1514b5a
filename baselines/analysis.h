/*
 * analysis.h: deciding, per function, whether its self share really moved.
 *
 * For each target (a service, a profile type, and the captures to judge:
 * one release, or a time range), the baseline is the eligible captures of
 * earlier releases in the window before the first judged capture. Every
 * function that reaches min_share in some capture is tested on the
 * variance-stabilised share (asin sqrt), in both directions, against no
 * change; a finding's estimate must also have moved by at least the
 * margin, max(rel_margin x baseline share, abs_margin) (or, with
 * margin_in_test, the test is against the margin itself), with
 *   - one current capture: a prediction-interval test,
 *   - few current captures: a t test with the baseline's variance for
 *     both sides (df = n_b - 1),
 *   - enough on both sides: Welch's test,
 * and Mann-Whitney U (shifted like the t test) as a robustness check.
 *
 * The t test is built from precision-weighted means (stats/pool.h): each
 * capture is weighted by what its sample count says about its precision,
 * each baseline release is summarised on its own and weighted by the
 * precision of its mean, so one noisy release cannot widen the baseline.
 * How noisy a release is shows in all of its functions at once, so each
 * release's noise factor is learnt over all of the service's functions
 * (stats_release_noise): the variation a new release is expected to have
 * is its own factor times the function's variation at a typical
 * release's, combined with the function's own spread in the new release
 * as its captures come in. Differences between the baseline releases' means
 * beyond their noise (a release-level component, DerSimonian-Laird) are
 * added to the variance, with their few degrees of freedom.
 *
 * Captures of one host share that host's offset, so they are not
 * independent: the service's host share (how much of a capture's
 * variation beyond sampling its host keeps, from pairs of captures of
 * one host against pairs of two within a release) adds, where the
 * judged or the baseline captures repeat a few hosts, the variance their
 * hosts' offsets give the difference, with the baseline's hosts less one
 * as its degrees of freedom. And a release's change shows on each of its
 * hosts: a finding's estimate must still reach the margin with the
 * captures of any one host left out.
 *
 * A release is judged on every night it runs with all of its captures so
 * far: look k is the k-th night (look_us windows counted back from at,
 * the nightly's own nights) that brought captures of it, up to
 * max_looks; a night without new captures
 * adds no look. Each look's one-sided p-value becomes a sequential
 * p-value that spends a fraction of alpha (stats/seq.h), so repeated
 * looks do not inflate false alarms; past max_looks nothing is left to
 * spend, and only the release's open findings are followed (went away). The rises
 * of a run form one family and the falls another, each adjusted with
 * Benjamini-Hochberg over the sequential p-values across every service
 * and function. A finding is a test with q <= fdr whose estimate is
 * beyond the margin and whose Mann-Whitney p is <= mw_alpha too.
 *
 * Shifts that are not the function's own: a rise of share that the
 * function's absolute rate does not follow (because something else got
 * cheaper; only where captures have durations, so a rate exists) is a
 * relative shift; and, durations or not, the significant findings of a
 * target are taken largest change first, and each one after the first is
 * tested again with its shares renormalised without those already found
 * to move: one no longer significant then only moved by dilution (a
 * doubled function makes every other share fall) and is a relative shift.
 *
 * Whole-service cost: where captures carry what it takes (a duration, or
 * a heap profile's bytes, or a load tag), the service's total cost per
 * second of capture (and per unit of load) is tested the same way, as a
 * finding of kind "cost" on the function "(whole service)"; a host with
 * slower CPUs costs more for the same work, so a cost rise too must
 * reach the margin with any one host's captures left out.
 */
#ifndef PR_ANALYSIS_H
#define PR_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pipeline/db.h"
#include "stats/rank.h"

/*
 * A service's week: where its days start and which of them are its
 * weekend (see analysis_opts.weekly). Days are numbered from Sunday, 0,
 * to Saturday, 6; the weekend is weekend_days days from weekend_first.
 */
typedef struct analysis_week {
	double utc_offset_h;      /* its clock, hours east of UTC (0) */
	int weekend_first;        /* the weekend's first day (6: Saturday) */
	int weekend_days;         /* 1 to 3 days in a row (2) */
} analysis_week;

#define ANALYSIS_WEEK_DEFAULT {0, 6, 2}

/*
 * A weekend as text, "sat-sun", "fri-sat" or "fri" (a day alone): its
 * first day and length in *out's weekend fields. -1 when it is not such
 * a range (days by their first three letters, 1 to 3 days in a row).
 */
int analysis_weekend_parse(analysis_week *out, const char *text);

/* The same as text into out[ANALYSIS_WEEKEND_MAX] ("sat-sun"). */
#define ANALYSIS_WEEKEND_MAX 8
void analysis_weekend_format(char *out, const analysis_week *w);

typedef struct analysis_opts {
	int64_t at_us;            /* "now": nothing captured later is used; 0 is
				   * the time analysis_init is called */
	int64_t window_us;        /* baseline window before the judged captures */
	size_t min_baseline;      /* fewer eligible captures: insufficient */
	double rel_margin;        /* 0.05: a change must exceed 5% of the share */
	double abs_margin;        /* 0.0002: and 0.02 percentage point */
	double min_share;         /* 0.001: a function under 0.1% in every capture
				   * is not tested */
	double fdr;               /* q-value at or below which a test is a finding */
	double mw_alpha;          /* Mann-Whitney p at or below which it is confirmed */
	double ci_level;          /* confidence of the reported interval (0.95) */
	size_t welch_min;         /* both sides at least this many: Welch */
	stats_severity_thresholds severity;
	int64_t forensic_keep_us; /* how long evidence is kept; 0: forever */
	size_t max_looks;         /* planned nightly looks at one release (4) */
	double spend_rho;         /* alpha spending f(t) = t^rho over the looks (0.5) */
	int64_t look_us;          /* the length of one look: a night (24 h) */
	size_t confirm_looks;     /* a candidate is confirmed after this many
				   * significant looks (2) */
	bool confirm_critical;    /* a critical finding is confirmed at once (true) */
	bool cost_tests;          /* test whole-service cost where captures allow (true) */
	bool margin_in_test;      /* false: a change must be significant against no
				   * change and its estimate beyond the margin; true:
				   * significant against the margin itself (stricter) */
	size_t fixed_look;        /* 0: each target's look from its release's first
				   * capture and "now"; else this look (reproducing) */
	bool weekly;              /* where the baseline's weekends and weekdays differ,
				   * a change must also hold against the captures of
				   * its own part of the week (true) */
	analysis_week week;       /* the services' week, unless a target has its own */
	int64_t warmup_us;        /* a capture taken this close to a deploy of its
				   * release, before or after, is not judged (0:
				   * every capture is; see capture_query) */
	double gate_max_unseen;   /* a gate's pass is inconclusive where one function
				   * could have made the service this much costlier
				   * unseen (analysis_blind_spots; 0.25: +25%; 0: never) */
} analysis_opts;

void analysis_opts_default(analysis_opts *o);

/* The longest baseline window an option or the config may ask for: 3650 days. */
#define ANALYSIS_MAX_WINDOW_US (3650LL * 86400 * 1000000)

typedef struct analysis_target {
	int64_t service_id;
	const char *service;
	const char *type;
	const char *release;      /* judge this release's captures, or */
	int64_t since_us, until_us; /* these times' (until 0: up to at) */
	const char *base_ids;     /* reproduce: exactly these captures (JSON */
	const char *cur_ids;      /* arrays of ids); NULL to select as above */
	const analysis_week *week; /* its own week; NULL: the options' */
	const int64_t *warmup_us;  /* its own warm-up; NULL: the options' */
} analysis_target;

/*
 * Canary against control (JSON arrays of host names, both set): the
 * judged captures are only the cohort's, and the baseline is not the
 * rolling one but the eligible captures of the control hosts, any
 * release, in the same window: from the cohort's first judged capture to
 * its last (a release), or the selected time range. The tests, margins
 * and the false-discovery family are the same.
 */
typedef struct analysis_cohort {
	const char *cohort_hosts;
	const char *control_hosts;
} analysis_cohort;

typedef enum finding_dir {
	FINDING_REGRESSION = 0,
	FINDING_IMPROVEMENT,
	FINDING_RELATIVE_SHIFT,
} finding_dir;

/* What a test is about: one function's share, or the whole service's cost. */
#define FINDING_KIND_SHARE "share"
#define FINDING_KIND_COST "cost"
#define FINDING_WHOLE_SERVICE "(whole service)"

const char *finding_dir_name(finding_dir d);

/*
 * The static string equal to `s` among a finding's kinds
 * (FINDING_KIND_SHARE, FINDING_KIND_COST) and cost units ("cpu_s_per_s", "wall_s_per_s",
 * "bytes", "bytes_per_s", "value_per_s", "per_load" and "per_load:" with
 * each of the three per-second units), for a finding's kind and
 * cost_unit; NULL when `s` is NULL or none of them.
 */
const char *finding_static_name(const char *s);

/*
 * A cost unit's family, what names one finding across versions: "per_load"
 * for every cost per unit of load ("per_load:cpu_s_per_s", and "per_load"
 * as an earlier version stored it), "cpu_s_per_s" for "wall_s_per_s" (a
 * wall profile's time, which earlier versions stored as CPU), else `unit`
 * itself.
 */
const char *finding_cost_family(const char *unit);

/*
 * One capture's whole-service cost in a cost finding's unit `cost_unit`,
 * measured as the analysis measures it (bytes in use of a heap, else
 * the total per second of capture, CPU seconds for samples of a CPU-time
 * period; divided by the capture's load figure for the "per_load"
 * family): what a report draws under the finding. 0 when the capture
 * lacks the measure (no duration, no load figure).
 */
struct capture_ref;
double analysis_capture_cost(const struct capture_ref *c, const char *type, const char *cost_unit);

/* One tested function; a finding when `significant`. */
typedef struct finding {
	int64_t id;               /* stored finding's id, 0 when not stored */
	int64_t service_id, function_id, baseline_id;
	char *service, *type, *function, *file, *current_release;
	char *renamed_from;       /* the function's name in the baseline when the release
				   * renamed it (see analysis.c, renamed functions); NULL */
	int64_t renamed_from_id;  /* that name's function id; 0 when not renamed */
	char *baseline_releases;  /* JSON array text */
	char *test;               /* "prediction", "shared_var", "welch" */
	finding_dir direction;
	bool significant;
	bool stored_before;       /* analysis_store found it stored by an earlier run:
				   * its numbers here are the stored ones */
	bool closed;              /* stored_before, and closed by a run of this run's
				   * "now" or later, or first found after it: this
				   * run looked at the past (findings_store);
				   * nothing pins or pages it */
	double baseline_share, current_share, delta, rel_delta;
	double ci_low, ci_high;   /* interval of delta (share, not percent) */
	double p_value, q_value, mw_p, score;
	double host_p;            /* where a judged capture's host is new to the
				   * baseline: Welch's one-sided p of the hosts'
				   * means, each host one value; NaN otherwise */
	double hours_p;           /* where the judged captures span 6 hours of the
				   * day or less: Welch's one-sided p against the
				   * baseline's captures within 3 hours of theirs
				   * (5 or more); NaN otherwise */
	bool hours_unseen;        /* the judged captures span 6 hours of the day or
				   * less, and the baseline has fewer than 5
				   * captures within 3 hours of theirs: the hour and
				   * the release cannot be told apart, so a critical
				   * finding is not confirmed at once */
	double p_up, p_down;      /* one-sided p: rose / fell (beyond the margin when
				   * margin_in_test) */
	double vst_base, vst_se, vst_df; /* share tests, on the stats_vst scale: the
				   * baseline's mean, and the standard error and df
				   * of the judged captures' mean alone (what more or
				   * longer captures shrink); vst_se 0 for other tests */
	/* On that scale: the rise that counts (the margin), the rise tested against. */
	double vst_margin, vst_delta0;
	bool weekly;              /* also held to the captures of its own part of the
				   * week (the baseline's weekends and weekdays differ) */
	analysis_week week;       /* the week its service was judged on */
	bool material_up;         /* the estimate rose by at least the margin */
	bool material_down;       /* the estimate fell by at least the margin */
	double rate_ratio;        /* current / baseline absolute rate; NaN unknown */
	double rate_p_up;         /* p of "the absolute rate rose" (log scale) */
	double rate_p_down;       /* p of "the absolute rate fell" */
	double rate_diff, rate_se, rate_df; /* that fit's log-rate change, its standard
				   * error and degrees of freedom (NaN: unknown), to test
				   * it again against the service's traffic */
	stats_severity severity;
	size_t baseline_captures, current_captures;
	char *capture_ids;        /* JSON {"baseline":[...],"current":[...]} */
	char *look_capture_ids;   /* this run's captures, when the finding keeps
				   * its stored ones (findings_store): evidence too */
	const char *kind;         /* FINDING_KIND_SHARE or FINDING_KIND_COST (static) */
	const char *cost_unit;    /* cost tests: a unit of finding_static_name */
	size_t look;              /* which nightly look of the release this was */
	size_t first_look;        /* the first look since the last one a stored run
				   * tested (1 for a release first judged now;
				   * 0: look): what it may spend (stats_seq_pvalue_from) */
	double p_seq;             /* the sequential p-value behind q (its direction) */
	double p_seq_up, p_seq_down;
	bool diluted;             /* relabelled a relative shift by the renormalised re-test */
	char state[16];           /* after storing: candidate, confirmed (see findings.h) */
	int64_t incident_id;      /* after storing: the incident it belongs to, 0 none */
	int64_t carried_from;     /* after paging: the open, paged finding of an earlier
				   * release it is carried from, 0 none (findings_carry) */
	bool accepted;            /* after storing: within a rise accepted by hand,
				   * the finding carried_from (findings_carry_accepted):
				   * it neither pins, pages nor fails a gate */
	bool incident_lead;       /* it pages and stands for its incident */
	size_t target;            /* index of its target in the analysis (internal) */
	size_t row;               /* its row in the target's values; SIZE_MAX: cost */
} finding;

typedef struct analysis_skip {
	char *service, *type, *reason;
	char *release;   /* the release judged; NULL for a time range */
	bool no_current; /* the selection had no captures of the service */
} analysis_skip;

struct analysis_target_data;

/* A release a run judged as a whole (release targets only), for the lifecycle. */
typedef struct analysis_judged {
	int64_t service_id;
	char *type, *release;
	size_t look;
	int64_t first_us;         /* its first capture */
} analysis_judged;

typedef struct analysis {
	analysis_opts opts;
	struct analysis_target_data *targets; /* what finish re-tests (internal) */
	size_t ntargets, targets_cap;
	size_t diluted;           /* findings relabelled relative shifts by renormalising */
	analysis_judged *judged;  /* the releases judged whole, njudged of them */
	size_t njudged;
	finding *tests;           /* every test; findings first after finish */
	size_t ntests, cap;
	size_t nfindings;
	analysis_skip *skipped;
	size_t nskipped;
	/*
	 * What a judged target's tests left out or held back, one line each
	 * ("service/type: why"): said, but no gate's concern, as a skip is.
	 */
	char **notes;
	size_t nnotes;
	size_t services;          /* targets analysed (not skipped) */
	size_t filtered;          /* functions not tested: too small to ever pass the
				   * margin, or known in too few captures (summaries) */
	double nameless;          /* the largest mean share of a judged release's samples
				   * in frames without a name ("[burn]", a stripped
				   * object judged as one function), over the targets
				   * judged: what a verdict could not see into */
	size_t pages_enqueued;    /* outbox rows the job that stored it added (jobs/record.h) */
	size_t went_away, fixed;  /* open findings the job closed (jobs/record.h) */
	size_t carried;           /* confirmed regressions not paged: carried from an
				   * earlier release's open, paged finding (jobs/record.h) */
	size_t accepted;          /* regressions within a rise accepted by hand: not
				   * pinned, paged nor gated (findings_carry_accepted) */
	size_t evidence_without_blob; /* evidence retention had cut to a summary between
				       * the analysis reading it and the job pinning it */
	size_t evidence_deleted;      /* baseline evidence that no longer exists
				       * (retention's row budget deleted it after an
				       * analysis read it): not pinned */
	double db_seconds;        /* time spent loading and storing */
	double stats_seconds;     /* time spent testing, adjusting and ranking */
} analysis;

void analysis_init(analysis *a, const analysis_opts *o);
void analysis_release(analysis *a);

/*
 * How many captures the analysed targets judged, all targets together
 * (a cohort's: only its hosts'): what a gate asking for a number of
 * captures compares with.
 */
size_t analysis_current_captures(const analysis *a);

/*
 * The fewest captures one analysed target judged (0 when none was
 * analysed): a gate asking for N captures asks for them of each type it
 * judges, and two cpu and two heap captures are not four of either.
 */
size_t analysis_fewest_current_captures(const analysis *a);

/*
 * The latest look of the targets analysed (0 when none was): past
 * opts.max_looks a release has no alpha left and raises no new finding,
 * so a gate that found none has judged nothing.
 */
size_t analysis_latest_look(const analysis *a);

/*
 * Whether a target analysed had no alpha left to spend: judged before on
 * every planned look (analysis.max_looks), so finding none says nothing.
 */
bool analysis_spent(const analysis *a);

/*
 * What a pass could not have seen for want of captures. A share test's
 * detectable rise is the smallest rise of the function's share that the
 * analysis flags at severity `gate` or above four times in five, were
 * the baseline known exactly: a one-sided t test on the standard error
 * of the judged captures' mean alone (their number, their samples, their
 * spread) at the cut-off a lone finding of its family meets (fdr, or
 * severity.q_max when lower, x the look's share of alpha / the run's
 * tests), beyond the margin, and with the interval's conservative end at
 * the severity's percentage points (at the t quantiles of the larger of
 * the captures' and the test's df). More or longer captures shrink it; a
 * baseline's own uncertainty and the Mann-Whitney, host and hour checks
 * a finding must also pass add to it, other findings of the run make
 * the cut-off more lenient: an estimate. What it costs the service, when
 * that function alone slowed down to raise its share from `from` to
 * `to`, is (to - from) / (1 - to) of the service's cost. A gate judges a
 * target by `excess`: what the captures add to what the margin and the
 * severity leave out by design, which no captures can shrink.
 */
typedef struct analysis_blind {
	const finding *f; /* the test, in the analysis's tests (borrowed) */
	double from, to;  /* its baseline share, the share it is flagged at */
	/* The service's cost that rise adds (0.25: +25%); INFINITY when no share shows it. */
	double unseen;
	/*
	 * The same with exact captures: what the margin and the severity leave
	 * out by design (a function of 85% of the time: 39%, at the 5% margin).
	 */
	double by_design;
	double excess; /* unseen - by_design (0 when that is INFINITY): the captures' part */
} analysis_blind;

/*
 * Each judged target's (service and type's) share test of the largest
 * excess, the largest first, into *out (n of them; the caller
 * frees *out, NULL when none). Call after analysis_finish. Returns 0 or
 * PR_ENOMEM.
 */
int analysis_blind_spots(analysis_blind **out, size_t *n, const analysis *a, stats_severity gate);

/*
 * The limit a gate holds blind spots to: `asked` (a fraction, 0.25 for
 * +25%) when above 0, none (0) when below 0, else the configuration's
 * o->gate_max_unseen. A blind spot is over it when the limit is above 0
 * and its excess exceeds it.
 */
double analysis_blind_limit(double asked, const analysis_opts *o);
bool analysis_blind_over(const analysis_blind *b, double limit);

/*
 * The n blind spots b as an array of {"service", "type", "function",
 * "file", "baseline_share", "share_seen", "unseen_cost",
 * "unseen_by_design", "unseen_for_captures"} (the costs null for
 * INFINITY): a new reference, NULL out of memory.
 */
struct json_t *analysis_blind_json(const analysis_blind *b, size_t n);

/*
 * Why a pass is inconclusive on b, over the gate's limit max
 * (analysis_blind_over), into out (at most size bytes, cut).
 */
void analysis_blind_reason(char *out, size_t size, const analysis_blind *b, double max);

/* Room for the releases analysis_unjudged_baseline names, quoted and cut. */
#define UNJUDGED_MAX 320

/*
 * The releases no run has judged that an analysed target's baseline took,
 * for want of enough judged captures ("'v3', 'v4'", the first such
 * target's; owned by `a`), or NULL when every baseline was judged. A
 * regression shipped in them is part of that baseline, so a gate that
 * found none has not shown there is none.
 */
const char *analysis_unjudged_baseline(const analysis *a);

/*
 * Test every function of one target and add the tests to the family. A
 * target without current captures or with too small a baseline is
 * recorded in `skipped`, not an error. With `store`, the baseline is
 * stored (or the stored one reused).
 */
int analysis_add(analysis *a, db *d, const analysis_target *t, bool store,
		 pr_error *err);

/*
 * analysis_add for a canary cohort against its control (`c` NULL: the
 * rolling baseline). Too few control captures is a skip ("insufficient
 * control: ..."); a cohort is never recorded as its release judged whole.
 */
int analysis_add_cohort(analysis *a, db *d, const analysis_target *t, const analysis_cohort *c,
			bool store, pr_error *err);

/*
 * What analysing a target reads before it computes: its captures (those
 * judged and the baseline) and every one's function values. Loading it
 * touches no analysis state, only `o`, so it may run on another
 * connection and thread while an earlier target is analysed
 * (jobs/analyze.c). The load's own failure is kept in the input and
 * returned when the input is used, so that targets fail in their order.
 */
typedef struct analysis_input analysis_input;

/* Load target t's input through d. NULL only when out of memory. */
analysis_input *analysis_input_load(db *d, const analysis_opts *o, const analysis_target *t,
				    const analysis_cohort *c);

/* analysis_add_cohort from an input loaded for the same t and c; frees in. */
int analysis_add_loaded(analysis *a, db *d, const analysis_target *t, const analysis_cohort *c,
			analysis_input *in, bool store, pr_error *err);

/* Free an input never used (NULL is a no-op). */
void analysis_input_free(analysis_input *in);

/* Adjust for the whole family, classify and rank: findings first, best first. */
int analysis_finish(analysis *a, pr_error *err);

struct json_t;

/*
 * A run spread over processes (jobs/tasks.h): each process analyses some
 * targets with analysis_add into its own analysis, without finishing it,
 * and hands it over as a part; the process that runs the whole family
 * merges every part, in a fixed order, into one analysis and finishes it
 * once. A merged analysis finishes exactly as if one process had added
 * the same targets in the same order: the tests with every number they
 * carry, the skipped and judged targets, and the captures and values the
 * renormalised re-test needs (only the rows of tested functions).
 *
 * analysis_part_json: *out is a new JSON object (the caller's); PR_ENOMEM.
 * analysis_part_merge: appends `part` to `a`; a malformed part is
 * PR_EDATA and leaves `a` as it was.
 */
int analysis_part_json(struct json_t **out, const analysis *a);
int analysis_part_merge(analysis *a, const struct json_t *part, pr_error *err);

/* Free a finding's strings and zero it. */
void finding_clear(finding *f);

/*
 * The one JSON shape of a finding (or a test, when not significant),
 * printed by analyze, nightly, post-deploy and finding show:
 * schema_version, id (null when not stored), service, type, kind
 * ("share" or "cost"), function,
 * file, direction, severity, significant, baseline_share, current_share,
 * delta, rel_delta, ci_low, ci_high (shares as fractions), p_value,
 * q_value, mw_p, score, rate_ratio, test, baseline_captures,
 * current_captures, current_release, baseline_releases, capture_ids
 * ({"baseline": [...], "current": [...]}), look, p_seq, state (null
 * when not stored), incident (null when none) and, for cost findings,
 * cost_unit. A number that was not computed (NaN) or is infinite is null.
 * NULL when out of memory. Version 2 added kind, look, p_seq, state,
 * incident and cost_unit; every version 1 key is unchanged.
 */
#define ANALYSIS_FINDING_SCHEMA 2
struct json_t *analysis_finding_json(const finding *f);

#endif
