/*
 * analysis.c: per-function significance tests, the false discovery rate
 * across a run, classification and ranking (see analysis.h). It computes;
 * baselines/findings.c stores what it found.
 */
#define _POSIX_C_SOURCE 200809L
#include "baselines/analysis.h"
#include "baselines/baseline.h"
#include "common/buf.h"
#include "common/similar.h"
#include "common/timeutil.h"
#include "pipeline/symname.h"
#include "stats/fdr.h"
#include "stats/pool.h"
#include "stats/seq.h"
#include "stats/stats.h"
#include "stats/test.h"

#include <ctype.h>
#include <inttypes.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define DAY_US (86400LL * 1000000LL)

void analysis_opts_default(analysis_opts *o)
{
	stats_severity_thresholds sev = STATS_SEVERITY_THRESHOLDS_INIT;

	memset(o, 0, sizeof(*o));
	o->at_us = 0; /* "now" is read when the analysis starts, not when options load */
	o->window_us = 14 * DAY_US;
	o->min_baseline = 8;
	o->rel_margin = 0.05;
	o->abs_margin = 0.0002;
	o->min_share = 0.001;
	o->fdr = 0.05;
	o->mw_alpha = 0.05;
	o->ci_level = 0.95;
	o->welch_min = 8;
	o->severity = sev;
	o->severity.q_max = 0; /* the run's fdr (analysis_finish) */
	o->max_looks = 4;
	o->spend_rho = 0.5;
	o->look_us = DAY_US;
	o->confirm_looks = 2;
	o->confirm_critical = true;
	o->cost_tests = true;
	o->weekly = true;
	o->week = (analysis_week)ANALYSIS_WEEK_DEFAULT;
	o->gate_max_unseen = 0.25;
}

static const char *const day_names[7] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

static int day_of(const char *s, size_t n)
{
	for (int d = 0; d < 7; d++)
		if (n == 3 && strncasecmp(s, day_names[d], 3) == 0)
			return d;
	return -1;
}

int analysis_weekend_parse(analysis_week *out, const char *text)
{
	const char *dash = strchr(text, '-');
	int first, last, days;

	if (!dash) {
		if ((first = day_of(text, strlen(text))) < 0)
			return -1;
		last = first;
	} else if ((first = day_of(text, (size_t)(dash - text))) < 0 ||
		   (last = day_of(dash + 1, strlen(dash + 1))) < 0 || last == first) {
		return -1; /* a range names two days: one day is named alone */
	}
	days = (last - first + 7) % 7 + 1;
	if (days > 3)
		return -1;
	out->weekend_first = first;
	out->weekend_days = days;
	return 0;
}

void analysis_weekend_format(char *out, const analysis_week *w)
{
	int first = ((w->weekend_first % 7) + 7) % 7;

	if (w->weekend_days <= 1)
		snprintf(out, ANALYSIS_WEEKEND_MAX, "%s", day_names[first]);
	else
		snprintf(out, ANALYSIS_WEEKEND_MAX, "%s-%s", day_names[first],
			 day_names[(first + w->weekend_days - 1) % 7]);
}

const char *finding_dir_name(finding_dir d)
{
	switch (d) {
	case FINDING_REGRESSION: return "regression";
	case FINDING_IMPROVEMENT: return "improvement";
	default: return "relative_shift";
	}
}

void analysis_init(analysis *a, const analysis_opts *o)
{
	memset(a, 0, sizeof(*a));
	a->opts = *o;
	if (!a->opts.at_us)
		a->opts.at_us = time_now_us();
}

void finding_clear(finding *f)
{
	free(f->service);
	free(f->type);
	free(f->function);
	free(f->file);
	free(f->current_release);
	free(f->renamed_from);
	free(f->baseline_releases);
	free(f->test);
	free(f->capture_ids);
	free(f->look_capture_ids);
	memset(f, 0, sizeof(*f));
}

#define MAX_GROUPS 64
#define GROUP_OF(g) ((g) >= MAX_GROUPS ? MAX_GROUPS - 1 : (g))
/*
 * Release noise factors: [0, MAX_GROUPS) the baseline's releases, then
 * the judged captures', then, when they are one capture, the degrees of
 * freedom of its factor (lone_noise).
 */
#define NOISE_CUR MAX_GROUPS
#define NOISE_LONE_DF (MAX_GROUPS + 1)
#define NOISE_N (MAX_GROUPS + 2)

/* What finish needs of a target to re-test it: its captures and values. */
typedef struct analysis_target_data {
	capture_set base, cur;
	int *gb, *gc;     /* release numbers of the baseline and current captures */
	int *hb, *hc;     /* host numbers of the same (see host_ids) */
	int *wb, *wc;     /* the captures' parts of the week (see week_parts) */
	analysis_week week; /* the service's week they were taken on */
	func_matrix m;
	size_t look;
	size_t first_look;  /* see finding.first_look */
	double phi, phi_df; /* release-level overdispersion of the service, its df */
	double noise[NOISE_N]; /* release noise factors (see release_noise) */
	double host_rho;    /* the share of capture noise that is the host's (see host_share) */
	int *db, *dc;       /* the captures' days, numbered (see day_ids) */
	double day_rho;     /* the share of capture noise that is the day's (see day_share) */
	char unjudged[UNJUDGED_MAX]; /* releases no run has judged that the baseline took */
	bool hours_unseen;           /* sides.hours_unseen */
	int64_t *churn;   /* per capture (baseline, then judged): the churned code's value */
	uint8_t *churned; /* per row of m: code that came or went within the baseline */
} analysis_target_data;

static void target_data_release(analysis_target_data *t)
{
	capture_set_release(&t->base);
	capture_set_release(&t->cur);
	free(t->gb);
	free(t->gc);
	free(t->hb);
	free(t->hc);
	free(t->wb);
	free(t->wc);
	free(t->db);
	free(t->dc);
	free(t->churn);
	free(t->churned);
	func_matrix_release(&t->m);
}

void analysis_release(analysis *a)
{
	for (size_t i = 0; i < a->ntests; i++)
		finding_clear(&a->tests[i]);
	free(a->tests);
	for (size_t i = 0; i < a->ntargets; i++)
		target_data_release(&a->targets[i]);
	free(a->targets);
	for (size_t i = 0; i < a->njudged; i++) {
		free(a->judged[i].type);
		free(a->judged[i].release);
	}
	free(a->judged);
	for (size_t i = 0; i < a->nskipped; i++) {
		free(a->skipped[i].service);
		free(a->skipped[i].type);
		free(a->skipped[i].reason);
		free(a->skipped[i].release);
	}
	free(a->skipped);
	for (size_t i = 0; i < a->nnotes; i++)
		free(a->notes[i]);
	free(a->notes);
	memset(a, 0, sizeof(*a));
}

size_t analysis_current_captures(const analysis *a)
{
	size_t n = 0;

	for (size_t i = 0; i < a->ntargets; i++)
		n += a->targets[i].cur.n;
	return n;
}

size_t analysis_fewest_current_captures(const analysis *a)
{
	size_t n = a->ntargets ? a->targets[0].cur.n : 0;

	for (size_t i = 1; i < a->ntargets; i++)
		if (a->targets[i].cur.n < n)
			n = a->targets[i].cur.n;
	return n;
}

size_t analysis_latest_look(const analysis *a)
{
	size_t look = 0;

	for (size_t i = 0; i < a->ntargets; i++)
		if (a->targets[i].look > look)
			look = a->targets[i].look;
	return look;
}

bool analysis_spent(const analysis *a)
{
	for (size_t i = 0; i < a->ntargets; i++)
		if ((a->targets[i].first_look ? a->targets[i].first_look : a->targets[i].look) >
		    a->opts.max_looks)
			return true;
	return false;
}

const char *analysis_unjudged_baseline(const analysis *a)
{
	for (size_t i = 0; i < a->ntargets; i++)
		if (a->targets[i].unjudged[0])
			return a->targets[i].unjudged;
	return NULL;
}

static int oom(pr_error *err)
{
	return pr_error_set(err, PR_ENOMEM, "out of memory");
}

static int skip(analysis *a, const analysis_target *t, pr_error *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int skip(analysis *a, const analysis_target *t, pr_error *err, const char *fmt, ...)
{
	analysis_skip *s = realloc(a->skipped, (a->nskipped + 1) * sizeof(*s));
	buf reason = BUF_INIT;
	va_list ap;

	if (!s)
		return oom(err);
	a->skipped = s;
	s = &s[a->nskipped];
	va_start(ap, fmt);
	if (buf_vprintf(&reason, fmt, ap) < 0) {
		va_end(ap);
		return oom(err);
	}
	va_end(ap);
	s->service = strdup(t->service);
	s->type = strdup(t->type);
	s->reason = buf_detach(&reason, NULL);
	s->release = t->release ? strdup(t->release) : NULL;
	s->no_current = false;
	if (!s->service || !s->type || !s->reason || (t->release && !s->release)) {
		free(s->service), free(s->type), free(s->reason), free(s->release);
		return oom(err);
	}
	a->nskipped++;
	return 0;
}

/* Add one line to a's notes, owned by a. */
static int add_note(analysis *a, const char *line, pr_error *err)
{
	char **n = realloc(a->notes, (a->nnotes + 1) * sizeof(*n));

	if (!n)
		return oom(err);
	a->notes = n;
	if (!(n[a->nnotes] = strdup(line)))
		return oom(err);
	a->nnotes++;
	return 0;
}

static int note(analysis *a, const analysis_target *t, pr_error *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A note on target t's tests: what they left out or held back, said, never a skip. */
static int note(analysis *a, const analysis_target *t, pr_error *err, const char *fmt, ...)
{
	buf line = BUF_INIT;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = buf_printf(&line, "%s/%s: ", t->service, t->type) < 0 ||
	     buf_vprintf(&line, fmt, ap) < 0;
	va_end(ap);
	rc = rc ? oom(err) : add_note(a, line.ptr, err);
	buf_release(&line);
	return rc;
}

/* A JSON array text of the distinct releases of `cs`; NULL on failure. */
static char *releases_json(const capture_set *cs)
{
	json_t *arr = json_array();
	char *text;

	for (size_t i = 0; arr && i < cs->n; i++) {
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(cs->caps[j].release, cs->caps[i].release) == 0;
		/* jansson escapes quotes and controls; NULL means invalid UTF-8. */
		if (!seen && json_array_append_new(arr, json_string(cs->caps[i].release)) < 0)
			json_array_append_new(arr, json_string("?"));
	}
	text = arr ? json_dumps(arr, JSON_COMPACT) : NULL;
	json_decref(arr);
	return text;
}

/* What a target's captures are, and the baseline that goes with them. */
typedef struct sides {
	capture_set cur, base;
	int64_t window_start, window_end;
	char *cur_releases; /* JSON array of the judged captures' releases */
	size_t cur_empty;   /* with no judged capture: the selected ones without samples */
	size_t cur_warming; /* ... and those left out as taken in a warm-up */
	size_t base_empty;  /* with too thin a baseline: its window's captures without samples */
	size_t unjudged;    /* baseline captures of releases no run has judged, taken for want
			     * of judged ones */
	char unjudged_releases[UNJUDGED_MAX]; /* those releases, quoted: "'v3', 'v4'" */
	bool hours_unseen; /* most judged captures are at hours the baseline lacks (hours_filter) */
} sides;

/*
 * The releases of `all` that none of `judged` is of, quoted and separated
 * by commas into out[0..UNJUDGED_MAX), cut with "..." when they do not fit.
 */
static void unjudged_names(char out[UNJUDGED_MAX], const capture_set *all,
			   const capture_set *judged)
{
	const char *listed[UNJUDGED_MAX / 4]; /* each name takes 4 bytes at least: "'x', " */
	size_t len = 0, nlisted = 0, j = 0;

	out[0] = '\0';
	/*
	 * By capture, not by release: a release's captures from before the
	 * service was first judged are history, and its later ones are not,
	 * so a release can be on both sides. `judged` is a subset of `all`,
	 * both in (captured_at, id) order: one walk of the two finds the
	 * captures of `all` that are not judged.
	 */
	for (size_t i = 0; i < all->n; i++) {
		const capture_ref *c = &all->caps[i];
		bool seen = false;
		int w;
		while (j < judged->n && (judged->caps[j].captured_at_us < c->captured_at_us ||
					 (judged->caps[j].captured_at_us == c->captured_at_us &&
					  judged->caps[j].id < c->id)))
			j++;
		if (j < judged->n && judged->caps[j].id == c->id)
			continue;
		for (size_t k = 0; k < nlisted && !seen; k++)
			seen = strcmp(listed[k], c->release) == 0;
		if (seen)
			continue;
		w = snprintf(out + len, UNJUDGED_MAX - len, "%s'%s'", len ? ", " : "", c->release);
		if (w < 0 || (size_t)w >= UNJUDGED_MAX - len - 4 ||
		    nlisted == sizeof(listed) / sizeof(listed[0])) {
			snprintf(out + len, UNJUDGED_MAX - len, "%s...", len ? ", " : "");
			return;
		}
		len += (size_t)w;
		listed[nlisted++] = c->release;
	}
}

/*
 * How many captures `q` selects that hold no samples. Those are never
 * judged nor a baseline, but a skip that leaves them out of its count
 * reads as if the profiler had sent nothing.
 */
static int count_empty(size_t *out, db *d, capture_query q, pr_error *err)
{
	capture_set empty = {0};
	int rc;

	q.empty = true;
	if ((rc = capture_set_load(&empty, d, &q, err)) == 0)
		*out = empty.n;
	capture_set_release(&empty);
	return rc;
}

/*
 * How many captures with samples `q` would select but for its warm-up: a
 * release whose captures were all taken around its deploy is not one
 * without captures.
 */
static int count_warming(size_t *out, db *d, capture_query q, pr_error *err)
{
	capture_set all = {0};
	int rc;

	*out = 0;
	if (q.warmup_us <= 0)
		return 0;
	q.warmup_us = 0;
	if ((rc = capture_set_load(&all, d, &q, err)) == 0)
		*out = all.n;
	capture_set_release(&all);
	return rc;
}

static int load_sides(sides *s, db *d, const analysis_target *t, const analysis_cohort *c,
		      const analysis_opts *o, pr_error *err)
{
	capture_query q = {0};
	int64_t warmup = t->warmup_us ? *t->warmup_us : o->warmup_us;
	int rc;

	memset(s, 0, sizeof(*s));
	if (t->base_ids && t->cur_ids) {
		if ((rc = capture_set_load_ids(&s->cur, d, t->cur_ids, err)) < 0 ||
		    (rc = capture_set_load_ids(&s->base, d, t->base_ids, err)) < 0)
			return rc;
		s->window_end = s->cur.n ? s->cur.caps[0].captured_at_us : 0;
		s->window_start = s->base.n ? s->base.caps[0].captured_at_us : 0;
		return 0;
	}
	q.service_id = t->service_id;
	q.type = t->type;
	q.release = t->release;
	q.since_us = t->release ? 0 : t->since_us;
	/* Nothing after "now": --at makes a run reproducible. */
	q.until_us = t->until_us && t->until_us <= o->at_us ? t->until_us : o->at_us + 1;
	q.hosts = c ? c->cohort_hosts : NULL;
	q.warmup_us = warmup;
	if ((rc = capture_set_load(&s->cur, d, &q, err)) < 0)
		return rc;
	/*
	 * Captures without samples are never judged, but they are not no
	 * captures: a profiler that sends empty profiles is a different
	 * problem from a release that was never captured.
	 */
	if (s->cur.n == 0)
		return (rc = count_warming(&s->cur_warming, d, q, err)) < 0
			       ? rc
			       : count_empty(&s->cur_empty, d, q, err);
	if (c) {
		/*
		 * The control hosts over the same window, whatever release they
		 * run, an open regression's too: the control is what runs now,
		 * and the canary of its fix must be judged against it. But not
		 * the release judged: once the rollout reached the control
		 * hosts, the canary was compared with itself and passed.
		 */
		int64_t until = q.until_us;
		memset(&q, 0, sizeof(q));
		q.service_id = t->service_id;
		q.type = t->type;
		q.exclude_release = t->release;
		q.no_evidence = true;
		q.as_of_us = o->at_us;
		q.hosts = c->control_hosts;
		q.warmup_us = warmup;
		s->window_start = t->release ? s->cur.caps[0].captured_at_us : t->since_us;
		s->window_end = t->release ? s->cur.caps[s->cur.n - 1].captured_at_us + 1 : until;
		q.since_us = s->window_start;
		q.until_us = s->window_end;
		return capture_set_load(&s->base, d, &q, err);
	}
	memset(&q, 0, sizeof(q));
	q.service_id = t->service_id;
	q.type = t->type;
	q.exclude_release = t->release;
	q.eligible_only = true;
	q.as_of_us = o->at_us;
	q.warmup_us = warmup;
	/* A release judged in this window is never its own baseline. */
	if (!t->release && !(s->cur_releases = releases_json(&s->cur)))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	q.exclude_releases = s->cur_releases;
	s->window_end = t->release ? s->cur.caps[0].captured_at_us : t->since_us;
	s->window_start = s->window_end - o->window_us;
	q.since_us = s->window_start;
	q.until_us = s->window_end;
	if ((rc = capture_set_load(&s->base, d, &q, err)) < 0 || s->base.n >= o->min_baseline)
		return rc;
	/*
	 * Too few judged captures: the releases no run has judged too, said
	 * in a note. A gap in the nightlies longer than the catch-up (or a
	 * service disabled while its captures kept coming) leaves a release
	 * never judged; held out for good, it left the next release without a
	 * baseline, that one was never judged either, and so on for good.
	 */
	{
		capture_set all;
		size_t judged = s->base.n;
		q.unjudged_too = true;
		if ((rc = capture_set_load(&all, d, &q, err)) < 0)
			return rc;
		if (all.n > judged) {
			unjudged_names(s->unjudged_releases, &all, &s->base);
			capture_set_release(&s->base);
			s->base = all;
			s->unjudged = all.n - judged;
		} else {
			capture_set_release(&all);
		}
	}
	if (s->base.n >= o->min_baseline)
		return 0;
	return count_empty(&s->base_empty, d, q, err);
}

static void sides_release(sides *s)
{
	capture_set_release(&s->cur);
	capture_set_release(&s->base);
	free(s->cur_releases);
	s->cur_releases = NULL;
}

/* JSON texts a finding carries: baseline releases and the capture ids. */
static int describe_sides(char **releases, char **ids, const sides *s)
{
	buf c = BUF_INIT;
	int rc = 0;

	if (!(*releases = releases_json(&s->base)))
		return PR_ENOMEM;
	if (rc == 0)
		rc = buf_printf(&c, "{\"baseline\":[");
	for (size_t i = 0; rc == 0 && i < s->base.n; i++)
		rc = buf_printf(&c, "%s%" PRId64, i ? "," : "", s->base.caps[i].id);
	if (rc == 0)
		rc = buf_puts(&c, "],\"current\":[");
	for (size_t i = 0; rc == 0 && i < s->cur.n; i++)
		rc = buf_printf(&c, "%s%" PRId64, i ? "," : "", s->cur.caps[i].id);
	if (rc == 0)
		rc = buf_puts(&c, "]}");
	if (rc < 0) {
		buf_release(&c);
		return PR_ENOMEM;
	}
	*ids = buf_detach(&c, NULL);
	return *ids ? 0 : PR_ENOMEM;
}


/*
 * One side's known values of a function, packed. A capture retention cut
 * to its top functions does not know the small ones
 * (FUNC_MATRIX_UNKNOWN): it is left out rather than read as 0, which
 * would drag the baseline down and make a steady function look risen.
 * `less` (NULL: none) is subtracted from each capture's total first: the
 * renormalised re-test without the functions found to move.
 */
/* The parts of the week (see week_parts). */
enum { WEEK_DAY = 0, WEEK_END = 1, WEEK_EDGE = 2 };

typedef struct series {
	double *share, *vst, *rate, *v; /* v: sampling variance of vst (1 / 4n) */
	int *group;                     /* the capture's release, numbered */
	int *host;                      /* its host, numbered (-1: not known here) */
	int *week;                      /* its part of the week (NULL: not known) */
	int *day;                       /* its day, numbered (-1: not known here) */
	int *at;                        /* its place in the capture set */
	const capture_set *from;        /* that capture set (series_fill's) */
	const int64_t *churn;           /* see churn_mark; NULL: none */
	const uint8_t *churned;
	size_t n;
} series;

static void series_fill(series *s, const func_matrix *m, size_t row, size_t col0,
			const capture_set *cs, const int *groups, const int *hosts,
			const int *days, const int *weeks, const int64_t *less)
{
	size_t n = 0;

	for (size_t i = 0; i < cs->n; i++) {
		int64_t self = m->self[row * m->ncaps + col0 + i];
		capture_ref c = cs->caps[i];
		double ns = c.sample_count > 0 ? (double)c.sample_count : 1.0;
		int64_t out = less && less[i] > 0 ? less[i] : 0;
		if (self == FUNC_MATRIX_UNKNOWN)
			continue;
		/* Churned code is left out of every share but its own (churn_mark). */
		if (s->churn)
			out += s->churn[col0 + i] -
			       (s->churned && s->churned[row] && self > 0 ? self : 0);
		if (out > 0 && out < c.total) {
			/* Fewer samples stand behind a share of a smaller whole. */
			ns *= (double)(c.total - out) / (double)c.total;
			c.total -= out;
		}
		s->share[n] = capture_share(&c, self);
		s->vst[n] = stats_vst(s->share[n]);
		s->rate[n] = capture_rate(&c, self);
		s->v[n] = stats_vst_var_floor(ns);
		s->group[n] = groups ? groups[i] : 0;
		s->host[n] = hosts ? hosts[i] : -1;
		s->day[n] = days ? days[i] : -1;
		s->at[n] = (int)i;
		if (s->week)
			s->week[n] = weeks ? weeks[i] : 0;
		n++;
	}
	s->n = n;
	s->from = cs;
}

/*
 * Samples some releases' captures would have held of a function
 * together, at its share elsewhere, for those releases to count as ones
 * that ran without its code when they hold none: Poisson's chance of
 * none at 20 is 2e-9.
 */
#define ABSENT_SAMPLES 20.0

/*
 * Leave out of baseline series s the releases from before the function's
 * code came: not one sample of it in any of their captures where its
 * share in the other releases and the judged captures (cur) would have
 * put ABSENT_SAMPLES or more in them together (the baseline's alone, a
 * release at a time, put 18 in each where the code came in the last
 * release, four captures, and a function steady at 0.09% since was a
 * regression from 0.000%, p 7e-19), and
 * no release before them that ran it (releases are numbered in order of
 * first capture; those that ran after the code went measure its absence
 * and stay). They measured nothing of the function, and their zeros,
 * which vary by nothing, made the most precise release means: a code
 * path added a release back, steady at 15% since, was judged against a
 * baseline of 0.0002%. Then, in what is left, the captures (oldest first)
 * before its first sample, by the same rule: code that came part-way
 * through a release. Left as it is when fewer than two captures would
 * remain (the release that adds the code is judged against none of it).
 */
static void drop_releases_without(series *s, const series *cur)
{
	double self[MAX_GROUPS] = {0}, ns[MAX_GROUPS] = {0}, all_self = 0, all_ns = 0;
	double before = 0, early = 0, base_self = 0, base_ns = 0;
	int first = 0;
	size_t kept = 0, n = 0, from;

	/* The judged captures say where the function's share lies too. */
	for (size_t i = 0; i < cur->n; i++) {
		double m = 1 / (4 * cur->v[i]);
		if (!isfinite(m))
			return;
		all_ns += m;
		all_self += cur->share[i] * m;
	}

	for (size_t i = 0; i < s->n; i++) {
		int g = GROUP_OF(s->group[i]);
		double m = 1 / (4 * s->v[i]);
		if (g < 0 || g >= MAX_GROUPS || !isfinite(m))
			return;
		ns[g] += m;
		self[g] += s->share[i] * m;
	}
	for (int g = 0; g < MAX_GROUPS; g++)
		all_self += self[g], all_ns += ns[g];
	/* The releases before the first that ran it, as one: their samples together. */
	while (first < MAX_GROUPS && !(self[first] > 0))
		before += ns[first++];
	if (!(before > 0 && all_ns - before > 0 &&
	      all_self / (all_ns - before) * before >= ABSENT_SAMPLES))
		first = 0, before = 0;
	/*
	 * Then the captures, oldest first, before its first sample in what
	 * is left: code that came part-way through a release (a flag
	 * switched on, a path deployed without a new version) came there.
	 * A path switched on in the middle of the only baseline release,
	 * steady since, was a critical regression from 1.4% to 12.6%.
	 */
	for (from = 0; from < s->n; from++) {
		if (GROUP_OF(s->group[from]) < first)
			continue;
		if (s->share[from] > 0)
			break;
		early += 1 / (4 * s->v[from]);
	}
	/*
	 * By its share in the baseline's own later captures, not the judged
	 * ones': a function that rose from 0.0001% to 5% in the judged
	 * release made its baseline's first zeros look like code not yet
	 * there, and its baseline lost them.
	 */
	for (int g = first; g < MAX_GROUPS; g++)
		base_self += self[g], base_ns += ns[g];
	if (!(early > 0 && base_ns - early > 0 &&
	      base_self / (base_ns - early) * early >= ABSENT_SAMPLES))
		from = 0;
	for (size_t i = from; i < s->n; i++)
		kept += GROUP_OF(s->group[i]) >= first;
	/* Too few left without those captures: the releases' rule alone. */
	if (kept < 2 && from > 0) {
		from = 0, kept = 0;
		for (size_t i = 0; i < s->n; i++)
			kept += GROUP_OF(s->group[i]) >= first;
	}
	if (kept < 2 || (first == 0 && from == 0))
		return;
	for (size_t i = from; i < s->n; i++) {
		if (GROUP_OF(s->group[i]) < first)
			continue;
		s->share[n] = s->share[i], s->vst[n] = s->vst[i], s->rate[n] = s->rate[i];
		s->v[n] = s->v[i], s->group[n] = s->group[i], s->host[n] = s->host[i];
		s->day[n] = s->day[i], s->at[n] = s->at[i];
		if (s->week)
			s->week[n] = s->week[i];
		n++;
	}
	s->n = n;
}

/*
 * Code that came or went within the baseline: a function that some
 * baseline release ran and others did not, not one sample of it in
 * those releases' captures where its share elsewhere (the other baseline
 * releases and the judged captures) would have put ABSENT_SAMPLES or
 * more in them together, or none in a run of consecutive captures that
 * would have held as many (absent_a_while: a flag, a deploy under the
 * same version). Releases change code: a code path that stopped gave its share to
 * every other function, and one that started took some from each, so
 * every share moved between releases though no function got slower.
 * Taken for noise between releases, that put a service's release effect
 * at 95 times its captures' noise, and a function that doubled from 25%
 * to 40% was no finding (p 0.0085). So such code is left out of every
 * other function's share (td->churn: its value in each capture, which
 * series_fill takes from the capture's total), and its own share is of
 * the whole less the rest of it. Code that came or went in the judged
 * release is left out of the other shares too (the judged captures are
 * one more group), and judged on its own: a path of 40% new in it made
 * every other share fall, a function 1.5 times as costly beside it was
 * no finding, and the falls were improvements; beside a path of 25% it
 * stopped, a 1.5 times rise read as a doubling.
 */
/*
 * Whether function r held not one sample in a run of consecutive captures
 * (the first ncols: the baseline's, oldest first, then the judged ones)
 * where its share elsewhere (all_self of all_ns samples) would have put
 * ABSENT_SAMPLES or more in them together: code that came or went
 * within a release, by a flag or a deploy that kept the version.
 */
static bool absent_a_while(const func_matrix *m, size_t r, const capture_set *base,
			   const capture_set *cur, size_t ncols, double all_self, double all_ns)
{
	double run = 0;

	for (size_t j = 0; j <= ncols; j++) {
		int64_t v = j < ncols ? m->self[r * m->ncaps + j] : 1;
		if (v == FUNC_MATRIX_UNKNOWN)
			continue;
		if (v <= 0) {
			const capture_ref *c =
				j < base->n ? &base->caps[j] : &cur->caps[j - base->n];
			run += c->sample_count > 0 ? (double)c->sample_count : 1;
			continue;
		}
		if (run > 0 && all_ns - run > 0 &&
		    all_self / (all_ns - run) * run >= ABSENT_SAMPLES)
			return true;
		run = 0;
	}
	return false;
}

static int churn_mark(analysis_target_data *td, const capture_set *base, const capture_set *cur,
		      const size_t *rows, size_t nrows)
{
	const func_matrix *m = &td->m;
	size_t nb = base->n, nc = cur->n;
	bool any = false;

	if (!(td->churned = calloc(m->nfuncs ? m->nfuncs : 1, 1)))
		return PR_ENOMEM;
	/* The tested rows, marked 2 until their own mark is known. */
	for (size_t k = 0; k < nrows; k++)
		td->churned[rows[k]] = 2;
	for (size_t r = 0; r < m->nfuncs; r++) {
		/* The baseline's releases, then the judged captures as one more. */
		double self[MAX_GROUPS + 1] = {0}, ns[MAX_GROUPS + 1] = {0};
		double all_self = 0, all_ns = 0, zero = 0;
		bool none, some = false;
		for (size_t j = 0; j < nb + nc; j++) {
			int64_t v = m->self[r * m->ncaps + j];
			const capture_ref *c = j < nb ? &base->caps[j] : &cur->caps[j - nb];
			double n = c->sample_count > 0 ? (double)c->sample_count : 1;
			double x = v > 0 ? capture_share(c, v) * n : 0;
			int g = j < nb ? GROUP_OF(td->gb[j]) : MAX_GROUPS;
			if (v == FUNC_MATRIX_UNKNOWN || !isfinite(x))
				continue;
			all_self += x, all_ns += n;
			self[g] += x, ns[g] += n;
		}
		/*
		 * The judged release is a group only for a tested row: a
		 * renamed function's or a family's other rows were merged into
		 * it, and the Go preemption frame's samples left every capture.
		 */
		for (int g = 0; g < (td->churned[r] == 2 ? MAX_GROUPS + 1 : MAX_GROUPS); g++) {
			if (ns[g] <= 0)
				continue;
			if (self[g] > 0)
				some = true;
			else
				zero += ns[g];
		}
		none = zero > 0 && all_ns - zero > 0 &&
		       all_self / (all_ns - zero) * zero >= ABSENT_SAMPLES;
		if (!none && some)
			none = absent_a_while(m, r, base, cur, td->churned[r] == 2 ? nb + nc : nb,
					      all_self, all_ns);
		td->churned[r] = none && some;
		any |= none && some;
	}
	if (!any)
		return 0;
	if (!(td->churn = calloc(m->ncaps ? m->ncaps : 1, sizeof(*td->churn))))
		return PR_ENOMEM;
	for (size_t r = 0; r < m->nfuncs; r++)
		for (size_t j = 0; td->churned[r] && j < m->ncaps; j++) {
			int64_t v = m->self[r * m->ncaps + j];
			if (v > 0)
				td->churn[j] += v;
		}
	return 0;
}

/* A capture's share of a function (row, in column col) with churned code left out. */
static double churn_share(const analysis_target_data *td, const capture_ref *c, size_t col,
			  size_t row, int64_t v)
{
	capture_ref d = *c;
	int64_t out = td->churn ? td->churn[col] - (td->churned[row] && v > 0 ? v : 0) : 0;

	if (out > 0 && out < d.total)
		d.total -= out;
	return capture_share(&d, v);
}

static double mean_of(const double *x, size_t n)
{
	double m = 0;

	for (size_t i = 0; i < n; i++)
		m += x[i];
	return n ? m / (double)n : NAN;
}

/* The estimate of current - baseline and how sure it is. */
typedef struct pooled {
	double mean_b, mean_c; /* precision-weighted means */
	double se, df;
	double tau2;           /* release-level variance component */
	double e_c;            /* the judged captures' variance beyond sampling */
	double q, q_df;        /* Cochran's Q of the baseline release means, its df */
	double se_c, df_c;     /* the judged captures' mean alone: its standard error
				* and df (what more or longer captures would shrink) */
	bool own_het;          /* its releases differ beyond the service's: see pooled_fit */
} pooled;


/* The sample variance of y[0..n-1], n >= 2. */
static double sample_var(const double *y, size_t n)
{
	double m = 0, ss = 0;

	for (size_t i = 0; i < n; i++)
		m += y[i];
	m /= (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (y[i] - m) * (y[i] - m);
	return ss / (double)(n - 1);
}

/*
 * Captures of one host share an offset (its CPUs, its neighbours, its
 * share of the traffic), so captures that repeat a host are not
 * independent, and a mean over few hosts is less sure than its captures'
 * spread says. host numbers the baseline's and the judged captures
 * alike (-1: unknown, independent of every other); rho is the service's
 * share of a capture's variance beyond sampling that is its host's (see
 * host_share).
 */
typedef struct host_noise {
	const int *hb, *hc;
	double rho;
	const int *db, *dc; /* the captures' days, numbered alike (-1: unknown) */
	double day_rho;     /* the service's share of that variance that is the day's */
} host_noise;

/*
 * The variance the host offsets add to current - baseline beyond what
 * the captures' spread already counts. The means weigh capture i by wb_i
 * (baseline, summing to 1) and wc_i (current); with host variance s2h
 * the difference's host part is s2h * sum over hosts of (wc_h - wb_h)^2,
 * while the independent model counted s2h * (sum wc_i^2 + sum wb_i^2).
 * Only an excess is added: where the judged captures come from the
 * baseline's hosts the offsets cancel, but that gain rests on every
 * function having the service's typical host share, which one function
 * need not have. sig2 is the function's variance beyond sampling. *df
 * gets the excess's degrees of freedom: a function's host variance is
 * only known from as many hosts as the baseline has, less one.
 */
static int host_extra(double *out, double *df, const int *hb, const int *hc, double rho,
		      const double *vb, const int *gb, const double *gextra, size_t nb,
		      const double *vc, double e_c, size_t nc, double sig2)
{
	double *w, s2h = rho * sig2, own = 0, diff = 0, sb = 0, sc = 0;
	size_t nh = 0, hosts = 0;

	*out = 0;
	*df = INFINITY;
	if (!(s2h > 0) || !hb || !hc)
		return 0;
	for (size_t i = 0; i < nb; i++)
		nh = hb[i] >= 0 && (size_t)hb[i] + 1 > nh ? (size_t)hb[i] + 1 : nh;
	for (size_t i = 0; i < nc; i++)
		nh = hc[i] >= 0 && (size_t)hc[i] + 1 > nh ? (size_t)hc[i] + 1 : nh;
	/*
	 * A baseline capture's weight in the combined mean is its release's
	 * (1 / var_mean_r over their sum) times its own within the release
	 * (1 / (e_r + v_i) times var_mean_r): 1 / (e_r + v_i), normalised.
	 */
	for (size_t i = 0; i < nb; i++)
		sb += 1 / (gextra[GROUP_OF(gb[i])] + vb[i]);
	for (size_t i = 0; i < nc; i++)
		sc += 1 / (e_c + vc[i]);
	if (!nh || !(sb > 0) || !(sc > 0) || !isfinite(sb) || !isfinite(sc))
		return 0;
	if (!(w = calloc(nh, sizeof(*w))))
		return STATS_ENOMEM;
	for (size_t i = 0; i < nb; i++) {
		double wi = 1 / (gextra[GROUP_OF(gb[i])] + vb[i]) / sb;
		own += wi * wi;
		if (hb[i] < 0) {
			diff += wi * wi;
			continue;
		}
		hosts += w[hb[i]] == 0;
		w[hb[i]] -= wi;
	}
	for (size_t i = 0; i < nc; i++) {
		double wi = 1 / (e_c + vc[i]) / sc;
		own += wi * wi;
		if (hc[i] < 0)
			diff += wi * wi;
		else
			w[hc[i]] += wi;
	}
	for (size_t h = 0; h < nh; h++)
		diff += w[h] * w[h];
	free(w);
	if (diff > own) {
		*out = s2h * (diff - own);
		*df = hosts > 2 ? (double)(hosts - 1) : 1;
	}
	return 0;
}

/* Release g's noise factor in lam (NULL, unknown or not positive: 1). */
static double noise_factor(const double *lam, size_t g)
{
	return lam && isfinite(lam[g]) && lam[g] > 0 ? lam[g] : 1;
}

/*
 * One function's own day variance from its baseline values y (days d,
 * releases g, release noise factors lam, NULL: all 1): one-way analysis
 * of variance of its days within each release, (between-day mean square
 * - within-day mean square) / n0, each release's over its factor and
 * against its own within-day mean square where it has one (else the
 * releases' pooled), pooled over releases by their days less one; 0
 * where no day holds two captures. Days holding two releases' captures
 * are left out. The service's day share is a typical function's; a
 * function of one busy endpoint moves with its day more than that, and
 * its own figure is the larger.
 */
static int own_day_var(double *out, const double *y, const int *g, const int *d, size_t n,
		       const double *lam)
{
	size_t nd = 0;
	double *c, w_ss[MAX_GROUPS] = {0}, w_df[MAX_GROUPS] = {0}, pool_ss = 0, pool_df = 0;
	double num = 0, den = 0;

	*out = 0;
	for (size_t i = 0; i < n; i++)
		if (d[i] >= 0 && (size_t)d[i] + 1 > nd)
			nd = (size_t)d[i] + 1;
	if (nd < 2)
		return 0;
	/* Per day: count, sum, sum of squares, its release (-1: none yet, -2: two). */
	if (!(c = calloc(nd * 4, sizeof(*c))))
		return STATS_ENOMEM;
	for (size_t k = 0; k < nd; k++)
		c[k * 4 + 3] = -1;
	for (size_t i = 0; i < n; i++) {
		double *x;
		if (d[i] < 0)
			continue;
		x = c + (size_t)d[i] * 4;
		x[0] += 1, x[1] += y[i], x[2] += y[i] * y[i];
		x[3] = x[3] == -1 || x[3] == GROUP_OF(g[i]) ? GROUP_OF(g[i]) : -2;
	}
	for (size_t k = 0; k < nd; k++) {
		const double *x = c + k * 4;
		size_t grp = (size_t)x[3];
		double ss;
		if (x[0] < 2 || x[3] < 0)
			continue;
		ss = (x[2] - x[1] * x[1] / x[0]) / noise_factor(lam, grp);
		w_ss[grp] += ss;
		w_df[grp] += x[0] - 1;
		pool_ss += ss;
		pool_df += x[0] - 1;
	}
	for (int grp = 0; grp < MAX_GROUPS && pool_df > 0; grp++) {
		double nn = 0, sy = 0, sm2 = 0, days = 0, b_ss = 0, n0, msw;
		for (size_t k = 0; k < nd; k++) {
			const double *x = c + k * 4;
			if (x[3] != grp || x[0] < 1)
				continue;
			nn += x[0], sy += x[1], sm2 += x[0] * x[0], days += 1;
			b_ss += x[1] * x[1] / x[0];
		}
		if (days < 2)
			continue;
		b_ss = (b_ss - sy * sy / nn) / noise_factor(lam, (size_t)grp);
		n0 = (nn - sm2 / nn) / (days - 1);
		msw = w_df[grp] > 0 ? w_ss[grp] / w_df[grp] : pool_ss / pool_df;
		num += (days - 1) * (b_ss / (days - 1) - msw) / n0;
		den += days - 1;
	}
	free(c);
	if (den > 0 && num > 0)
		*out = num / den;
	return 0;
}

/*
 * Fit the precision-weighted comparison of current values yc (sampling
 * variances vc) with baseline values yb (vb) grouped by release (gb, 0..
 * ngroups-1). lam, when not NULL, holds the service's release noise
 * factors (NOISE_N of them, see release_noise): the judged captures'
 * expected variance is then their own factor times the function's
 * variance at factor 1, rather than a typical release's. See analysis.h
 * for the model.
 */
static int pooled_fit(pooled *out, const double *yb, const double *vb, const int *gb, size_t nb,
		      const double *yc, const double *vc, size_t nc, double phi, double phi_df,
		      const double *lam, const host_noise *hn)
{
	stats_wmean g[MAX_GROUPS] = {{0}}, all, cur, own;
	double gextra[MAX_GROUPS], *ty = NULL, *tv = NULL, ref = 0, d0 = 0, var_b, e_c, ref_c;
	double hx = 0, hx_df = INFINITY, dx = 0, dx_df = INFINITY, sig2, s2d = 0;
	double sg_num = 0, sg_den = 0;
	size_t ng = 0, nsingle = 0;
	int grp[MAX_GROUPS], rc = 0;

	if (nb < 2 || nc < 1)
		return STATS_EDATA;
	if (!(ty = malloc(nb * sizeof(*ty))) || !(tv = malloc(nb * sizeof(*tv)))) {
		rc = STATS_ENOMEM;
		goto out;
	}
	/*
	 * The releases, numbered in order of first appearance; past
	 * MAX_GROUPS the rest share the last number (gb is 0-based and dense,
	 * see group_ids, so this only folds very long windows).
	 */
	for (size_t i = 0; i < nb; i++)
		if ((size_t)gb[i] + 1 > ng)
			ng = (size_t)gb[i] + 1 > MAX_GROUPS ? MAX_GROUPS : (size_t)gb[i] + 1;
	for (size_t k = 0; k < ng; k++)
		grp[k] = (int)k;
	for (size_t k = 0; k < ng; k++) {
		size_t n = 0;
		for (size_t i = 0; i < nb; i++)
			if (GROUP_OF(gb[i]) == grp[k]) {
				ty[n] = yb[i];
				tv[n++] = vb[i];
			}
		memset(&g[k], 0, sizeof(g[k]));
		g[k].n = n;
		if (n >= 2 && (rc = stats_wmean_of(&g[k], ty, tv, n, -1)) < 0)
			goto out;
		if (n >= 2 && lam && lam[k] > 0) {
			/* Unclipped: a release's s^2 below its sampling variance says so too. */
			sg_num += (double)(n - 1) * stats_extra_moments(ty, tv, n) / lam[k];
			sg_den += (double)(n - 1);
		}
		nsingle += n < 2;
	}
	/* The typical variance of one capture: the releases' geometric mean. */
	if (stats_pool_total(&ref, &d0, g, ng) < 0) {
		/* Every release has a single capture: their spread is all there is. */
		if ((rc = stats_wmean_of(&all, yb, vb, nb, -1)) < 0)
			goto out;
		ref = all.total;
		d0 = all.df;
		for (size_t k = 0; k < ng; k++)
			g[k].n = 0;
		nsingle = ng;
	}
	/* Single-capture releases take the typical variation. */
	for (size_t k = 0; k < ng && nsingle; k++) {
		size_t n = 0;
		double vbar = 0;
		if (g[k].n >= 2)
			continue;
		for (size_t i = 0; i < nb; i++)
			if (GROUP_OF(gb[i]) == grp[k]) {
				ty[n] = yb[i];
				tv[n++] = vb[i];
				vbar += vb[i];
			}
		if (!n)
			continue;
		if ((rc = stats_wmean_of(&g[k], ty, tv, n, fmax(0, ref - vbar / (double)n))) < 0)
			goto out;
	}
	for (size_t k = 0; k < ng; k++)
		gextra[k] = g[k].extra;
	{
		/* Drop groups left empty (folded releases), then combine. */
		size_t w = 0;
		for (size_t k = 0; k < ng; k++)
			if (g[k].n)
				g[w++] = g[k];
		ng = w;
	}
	if ((rc = stats_wmean_combine(&all, g, ng)) < 0)
		goto out;
	/*
	 * Release-level heterogeneity: Cochran's Q of the release means (the
	 * caller pools it over the service's functions into phi, see
	 * service_phi). With phi > 1 each release mean varies phi times more
	 * than its captures say, and the new release has a release effect of
	 * its own of (phi - 1) times a typical release mean's variance.
	 */
	out->q = 0;
	out->q_df = ng >= 2 ? (double)(ng - 1) : 0;
	for (size_t k = 0; ng >= 2 && k < ng; k++)
		out->q += (g[k].mean - all.mean) * (g[k].mean - all.mean) / g[k].var_mean;
	out->tau2 = 0;
	/* Only against a service's phi (phi_df > 0): the calls that estimate it need Q alone. */
	out->own_het = ng >= 2 && phi_df > 0 &&
		       stats_het_outlier(out->q, out->q_df, phi > 1 ? phi : 1);
	if (out->own_het) {
		/*
		 * This function's releases differ far beyond the service's (its
		 * code came or went, or changed its cost, in one of them): their
		 * spread is its own, a variance between releases added to each
		 * release's mean and to the judged release's (Paule and
		 * Mandel), so the releases weigh alike. Scaled by the service's
		 * phi instead, the releases without the code, all zeros and
		 * so the most precise, made the baseline 0.0002% where two of
		 * four releases ran it at 15%, and the release that kept it
		 * was a critical regression.
		 */
		out->tau2 = stats_tau2_between(g, ng);
		for (size_t k = 0; k < ng; k++)
			g[k].var_mean += out->tau2;
		phi_df = out->q_df;
		if ((rc = stats_wmean_combine(&all, g, ng)) < 0)
			goto out;
	} else if (phi > 1 && ng >= 2) {
		double vbar = 0;
		for (size_t k = 0; k < ng; k++) {
			vbar += g[k].var_mean / (double)ng;
			g[k].var_mean *= phi;
		}
		out->tau2 = (phi - 1) * vbar;
		if ((rc = stats_wmean_combine(&all, g, ng)) < 0)
			goto out;
	}
	var_b = all.var_mean;
	/* The current release: its own spread, shrunk towards the typical one. */
	memset(&own, 0, sizeof(own));
	if (nc >= 2) {
		if ((rc = stats_wmean_of(&own, yc, vc, nc, -1)) < 0)
			goto out;
	} else {
		own.vbar = vc[0];
	}
	ref_c = ref;
	if (lam && sg_den > 0) {
		double lc = lam[NOISE_CUR] > 0 ? lam[NOISE_CUR] : 1, vcbar = 0;
		for (size_t i = 0; i < nc; i++)
			vcbar += vc[i] / (double)nc;
		ref_c = vcbar + lc * fmax(0, sg_num / sg_den);
		/*
		 * A lone capture's factor (lone_noise; a single capture has no
		 * other) scales all of its variance: a capture of a busy or
		 * warming host is noisy even where the baseline's captures
		 * vary no more than sampling says.
		 */
		if (nc == 1 && isfinite(lam[NOISE_CUR]))
			ref_c = lc * (vcbar + fmax(0, sg_num / sg_den));
	}
	e_c = stats_shrunk_extra(&own, ref_c, d0);
	if ((rc = stats_wmean_of(&cur, yc, vc, nc, e_c)) < 0)
		goto out;
	out->mean_b = all.mean;
	out->mean_c = cur.mean;
	out->e_c = e_c;
	sig2 = lam && sg_den > 0 ? fmax(0, sg_num / sg_den) : fmax(0, ref - mean_of(vb, nb));
	/*
	 * Hosts, and days: every capture of one day sees that day's traffic
	 * mix, so a night's captures move together (a sale, a batch job's
	 * day), and their mean is less sure than their spread says.
	 */
	if (hn && hn->day_rho > 0 && hn->db) {
		double own_d;
		if ((rc = own_day_var(&own_d, yb, gb, hn->db, nb, lam)) < 0)
			goto out;
		/* Never more than the function's variance leaves beside its host's. */
		s2d = fmin(fmax(hn->day_rho * sig2, own_d), fmax(0, 0.95 - hn->rho) * sig2);
	}
	if (hn && ((rc = host_extra(&hx, &hx_df, hn->hb, hn->hc, hn->rho, vb, gb, gextra, nb, vc,
				    e_c, nc, sig2)) < 0 ||
		   (rc = host_extra(&dx, &dx_df, hn->db, hn->dc, 1, vb, gb, gextra, nb, vc, e_c,
				    nc, s2d)) < 0))
		goto out;
	out->se = sqrt(cur.var_mean + var_b + out->tau2 + hx + dx);
	out->se_c = sqrt(cur.var_mean);
	/* A lone capture's variance is known as well as its factor is. */
	out->df_c = nc == 1 && lam && isfinite(lam[NOISE_LONE_DF]) ? fmin(d0, lam[NOISE_LONE_DF])
								   : d0 + own.df;
	out->df = stats_satterthwaite(cur.var_mean, out->df_c, var_b, d0);
	if (out->tau2 > 0)
		out->df = stats_satterthwaite(cur.var_mean + var_b, out->df, out->tau2, phi_df);
	/*
	 * Satterthwaite's df of a sum can exceed its parts'; more variance
	 * must never make the test bolder, so the df only falls.
	 */
	if (hx > 0)
		out->df = fmin(out->df, stats_satterthwaite(cur.var_mean + var_b + out->tau2,
							    out->df, hx, hx_df));
	if (dx > 0)
		out->df = fmin(out->df, stats_satterthwaite(cur.var_mean + var_b + out->tau2 + hx,
							    out->df, dx, dx_df));
out:
	free(ty);
	free(tv);
	return rc;
}

/* A one-sided or two-sided test of a pooled fit against delta0. */
static int pooled_test(stats_result *r, const pooled *p, stats_alt alt, double delta0,
		       double alpha)
{
	stats_test_opts o = STATS_TEST_OPTS_INIT;

	o.alt = alt;
	o.delta0 = delta0;
	o.alpha = alpha;
	return stats_test_t(r, p->mean_c - p->mean_b, p->se, p->df, &o);
}

/*
 * Did the function's absolute rate move? The same fit on log rates (a
 * rate of 0 counts as half the smallest positive one), without margin;
 * its p-values feed the relative-shift guard. NaN when unknown.
 */
static void rate_tests(finding *f, const series *b, const series *c)
{
	double *lb = malloc((b->n + c->n) * 2 * sizeof(*lb)), least = INFINITY;
	double *lc, *zb, *zc;
	stats_result r;
	pooled p;

	f->rate_p_up = f->rate_p_down = NAN;
	f->rate_diff = f->rate_se = f->rate_df = NAN;
	if (!lb)
		return;
	lc = lb + b->n;
	zb = lc + c->n;
	zc = zb + b->n;
	for (size_t i = 0; i < b->n + c->n; i++)
		if (!isfinite(i < b->n ? b->rate[i] : c->rate[i - b->n]))
			goto out; /* no durations: no rates */
	for (size_t i = 0; i < b->n; i++)
		if (b->rate[i] > 0)
			least = fmin(least, b->rate[i]);
	for (size_t i = 0; i < c->n; i++)
		if (c->rate[i] > 0)
			least = fmin(least, c->rate[i]);
	if (isinf(least))
		goto out;
	for (size_t i = 0; i < b->n; i++) {
		lb[i] = log(b->rate[i] > 0 ? b->rate[i] : least / 2);
		zb[i] = 1e-12;
	}
	for (size_t i = 0; i < c->n; i++) {
		lc[i] = log(c->rate[i] > 0 ? c->rate[i] : least / 2);
		zc[i] = 1e-12;
	}
	if (pooled_fit(&p, lb, zb, b->group, b->n, lc, zc, c->n, 1, 0, NULL, NULL) < 0)
		goto out;
	f->rate_diff = p.mean_c - p.mean_b;
	f->rate_se = p.se;
	f->rate_df = p.df;
	if (pooled_test(&r, &p, STATS_GREATER, 0, 0.05) == 0)
		f->rate_p_up = r.p;
	if (pooled_test(&r, &p, STATS_LESS, 0, 0.05) == 0)
		f->rate_p_down = r.p;
out:
	free(lb);
}

/*
 * The margins of a function whose baseline share is pb, on the VST
 * scale: how far up (and down) a change must be shown to go.
 */
static void margins(double *up, double *down, double pb, const analysis_opts *o)
{
	double m = fmax(o->rel_margin * pb, o->abs_margin);

	*up = stats_vst_delta(pb, m);
	*down = stats_vst_delta(pb, -fmin(m, pb));
}

/*
 * The lowest and highest of the judged captures' weighted means (weights
 * 1 / (e + v_i), as the fit's) with the captures of one host left out,
 * over their hosts. Returns 1 when c's captures come from two hosts or
 * more and *lo and *hi are set, 0 when not (nothing to leave out),
 * STATS_ENOMEM.
 */
static int without_one_host(double *lo, double *hi, const series *c, double e)
{
	double sw = 0, swy = 0;
	int *seen;
	int rc = 0;

	*lo = INFINITY;
	*hi = -INFINITY;
	if (!c->host || c->n < 2)
		return 0;
	if (!(seen = calloc(c->n, sizeof(*seen))))
		return STATS_ENOMEM;
	for (size_t i = 0; i < c->n; i++) {
		sw += 1 / (e + c->v[i]);
		swy += c->vst[i] / (e + c->v[i]);
	}
	for (size_t i = 0; i < c->n; i++) {
		double hw = 0, hwy = 0, m;
		if (seen[i] || c->host[i] < 0)
			continue;
		for (size_t j = i; j < c->n; j++)
			if (c->host[j] == c->host[i]) {
				seen[j] = 1;
				hw += 1 / (e + c->v[j]);
				hwy += c->vst[j] / (e + c->v[j]);
			}
		if (!(sw - hw > 0))
			continue; /* every capture is this host's */
		m = (swy - hwy) / (sw - hw);
		*lo = fmin(*lo, m);
		*hi = fmax(*hi, m);
		rc = 1;
	}
	free(seen);
	return rc;
}

/*
 * Traffic has a week. A service's weekend is not its Tuesday: a function
 * the weekend calls more has a larger share on every weekend, and a
 * release judged over a weekend against a baseline of mostly weekdays
 * rises in it with no change of code (and falls in it on the Monday).
 * On simulated fleets with a weekend mix, this was most of the false
 * findings of the nights that held a weekend; and the baseline's spread
 * counted the week as noise, which hid real changes on every night.
 *
 * So where the baseline's weekend and weekday captures of a function
 * differ (Welch's test at WEEK_ALPHA, two-sided, on the values the test
 * uses, at least WEEK_MIN of each), their difference d is taken out of
 * every weekend capture, the baseline's and the judged ones, before the
 * comparison: the week as a covariate, estimated from the baseline.
 * Both means are then put back at the judged captures' mix of the week
 * (fc d added to both), so the shares shown are the baseline as it
 * would be on the judged captures' days and the judged captures as they
 * are. d is an estimate: where the judged captures hold a weekend share
 * fc unlike the baseline's fb, the comparison is also (fc - fb) times
 * d's error, whose variance is added with its degrees of freedom.
 *
 * d is measured between the baseline's captures clearly of the weekend
 * and clearly of the weekdays (see week_parts); a baseline capture near
 * a weekend's edge, which may be either, is adjusted by d / 2.
 *
 * Where the adjustment is in doubt, the change must hold without the
 * doubt too (week_doubts: the larger p-value each way, and beyond the
 * margin in each reading). A difference the baseline only hints at (the
 * test's p from WEEK_STRONG up to WEEK_ALPHA) may be chance, and an
 * adjustment chosen because chance made d large trusts d more than it
 * should: the change must also hold on the plain values. A judged
 * capture near a weekend's edge is adjusted by the whole of d if taken
 * for the wrong part, as when the services' clock is not the one set:
 * the change must hold with such captures read as weekend and as
 * weekday (a hint is held to the plain values instead). On simulated
 * fleets without a week, adjusting at every hint made a false page of a
 * chance difference; on services 8 hours west of the clock set,
 * adjusting their Friday evenings as Saturdays made more false findings
 * than no adjustment at all.
 */
#define WEEK_ALPHA 0.05
#define WEEK_STRONG 0.001
#define WEEK_MIN 3

typedef struct week_adj {
	double *buf;       /* the baseline's values, then the judged ones, adjusted */
	double d, se2, df; /* the weekend's difference, its error's variance and df */
	double fb;         /* the baseline's weekend share (an edge capture counts half) */
	double fc, fc_end, fc_day; /* the judged captures': so, or with the edge as
				    * weekend, or as weekday */
	bool weak;         /* only a hint of a week: hold to the plain comparison too */
	bool edges;        /* judged captures near an edge: hold to both readings */
} week_adj;

/*
 * Adjust the values yb (parts of the week wb) and yc (wc) for the week.
 * Returns 1 with *w filled (the caller frees w->buf), 0 when the week
 * makes no difference or cannot be judged, STATS_ENOMEM.
 */
static int week_adjust(week_adj *w, const double *yb, const int *wb, size_t nb,
		       const double *yc, const int *wc, size_t nc)
{
	stats_sample part[2];
	stats_test_opts o = STATS_TEST_OPTS_INIT;
	stats_result r;
	size_t n[3] = {0, 0, 0}, ncp[3] = {0, 0, 0};
	double x[3] = {0, 0, 0}, xx[3] = {0, 0, 0};

	memset(w, 0, sizeof(*w));
	if (!wb || !wc || !nc)
		return 0;
	for (size_t i = 0; i < nb; i++) {
		n[wb[i]]++;
		x[wb[i]] += yb[i];
		xx[wb[i]] += yb[i] * yb[i];
	}
	for (size_t i = 0; i < nc; i++)
		ncp[wc[i]]++;
	if (n[WEEK_DAY] < WEEK_MIN || n[WEEK_END] < WEEK_MIN)
		return 0;
	for (int k = 0; k < 2; k++) {
		part[k].n = n[k];
		part[k].mean = x[k] / (double)n[k];
		part[k].var = fmax(0, (xx[k] - x[k] * part[k].mean) / (double)(n[k] - 1));
		part[k].var_floor = 0;
	}
	o.alt = STATS_TWO_SIDED;
	if (stats_test_welch(&r, &part[0], &part[1], &o) < 0 || !(r.p < WEEK_ALPHA) ||
	    !isfinite(r.estimate))
		return 0;
	w->d = r.estimate; /* weekend minus weekday */
	w->se2 = r.se * r.se;
	w->df = r.df;
	w->fb = ((double)n[WEEK_END] + (double)n[WEEK_EDGE] / 2) / (double)nb;
	w->fc_day = (double)ncp[WEEK_END] / (double)nc;
	w->fc_end = (double)(ncp[WEEK_END] + ncp[WEEK_EDGE]) / (double)nc;
	w->fc = (w->fc_day + w->fc_end) / 2;
	w->weak = !(r.p < WEEK_STRONG);
	w->edges = ncp[WEEK_EDGE] > 0;
	if (!(w->buf = malloc((nb + nc) * sizeof(*w->buf))))
		return STATS_ENOMEM;
	for (size_t i = 0; i < nb + nc; i++) {
		int at = i < nb ? wb[i] : wc[i - nb];
		double y = i < nb ? yb[i] : yc[i - nb];
		w->buf[i] = y - (at == WEEK_END ? w->d : at == WEEK_EDGE ? w->d / 2 : 0);
	}
	return 1;
}

/*
 * A fit made on week-adjusted values, put back at the judged captures'
 * week, fc their weekend share as adjusted.
 */
static void week_restore(pooled *p, const week_adj *w, double fc)
{
	double v = p->se * p->se, var = (fc - w->fb) * (fc - w->fb) * w->se2;

	p->mean_b += fc * w->d;
	p->mean_c += fc * w->d;
	if (var > 0) {
		p->se = sqrt(v + var);
		/* More variance never makes the test bolder: the df only falls. */
		p->df = fmin(p->df, stats_satterthwaite(v, p->df, var, w->df));
	}
}

/*
 * Hold a test made on week-adjusted values (rup, rdn, f's material
 * flags) to another fit too: the larger p-value each way, and beyond
 * the margin in both. mup and mdown are the margins, up and down the
 * values the tests are against.
 */
static int week_hold(stats_result *rup, stats_result *rdn, finding *f, const pooled *other,
		     double mup, double mdown, double up, double down)
{
	stats_result u, d;
	int rc;

	if ((rc = pooled_test(&u, other, STATS_GREATER, up, 0.05)) < 0 ||
	    (rc = pooled_test(&d, other, STATS_LESS, down, 0.05)) < 0)
		return rc;
	rup->p = fmax(rup->p, u.p);
	rdn->p = fmax(rdn->p, d.p);
	f->material_up = f->material_up && other->mean_c - other->mean_b >= mup;
	f->material_down = f->material_down && other->mean_c - other->mean_b <= mdown;
	return 0;
}

/* What a comparison's fit takes besides the values. */
typedef struct fit_in {
	const double *vb, *vc;
	const int *gb;
	size_t nb, nc;
	double phi, phi_df;
	const double *lam;
	const host_noise *hn;
} fit_in;

static int fit_on(pooled *p, const fit_in *in, const double *yb, const double *yc)
{
	return pooled_fit(p, yb, in->vb, in->gb, in->nb, yc, in->vc, in->nc, in->phi, in->phi_df,
			  in->lam, in->hn);
}

/*
 * Where the week's adjustment is in doubt (week_adjust), hold the test
 * to the other readings: the plain values (yb, yc) when the week is only
 * a hint, and the judged captures near an edge (wc) read as weekend and
 * as weekday when there are any.
 */
static int week_doubts(stats_result *rup, stats_result *rdn, finding *f, const fit_in *in,
		       const double *yb, const double *yc, const int *wc, const week_adj *w,
		       double mup, double mdown, double up, double down, bool cost)
{
	double *alt = NULL;
	pooled q;
	int rc = 0;

	if (w->weak && ((rc = fit_on(&q, in, yb, yc)) < 0 ||
			(rc = week_hold(rup, rdn, f, &q, mup, mdown, up, down)) < 0))
		return rc;
	/*
	 * A hint is held to the plain values, which read no capture either
	 * way. A hint of a share's week is mostly chance (one function in
	 * twenty shows one at p 0.05), and reading its edges both ways too
	 * cost 3 of 73 regressions on make eval's third night. A service's
	 * cost follows its load's week, and a hint of it is more likely a
	 * week the baseline saw too little of: it is held to both readings of
	 * the captures near a weekend's edge as well. A Sunday afternoon's
	 * captures, weekend ones, are as biased in the plain values as read
	 * as weekday ones, and a null release judged then raised critical
	 * cost findings (plain and weekday p 5e-4, weekend p 0.5) on a 14-day
	 * baseline whose one weekend left the week only a hint.
	 */
	if (!w->edges || (w->weak && !cost))
		return 0;
	if (!(alt = malloc(in->nc * sizeof(*alt))))
		return STATS_ENOMEM;
	for (int as_end = 0; as_end < 2 && rc == 0; as_end++) {
		for (size_t i = 0; i < in->nc; i++)
			alt[i] = w->buf[in->nb + i] -
				 (wc[i] == WEEK_EDGE ? (as_end ? w->d / 2 : -w->d / 2) : 0);
		if ((rc = fit_on(&q, in, w->buf, alt)) < 0)
			break;
		week_restore(&q, w, as_end ? w->fc_end : w->fc_day);
		rc = week_hold(rup, rdn, f, &q, mup, mdown, up, down);
	}
	free(alt);
	return rc;
}

/*
 * A function's VST values corrected for the size of their captures, into
 * *out (baseline's, then judged's; the caller frees it), or *out NULL when
 * none is needed: when its captures hold 30 samples of it or more each
 * (the transform's bias is then below 0.5% of the value), or when their
 * sizes are within a factor of 1.5 of each other (the bias is then
 * nearly the same in every capture and falls out of the difference).
 *
 * Below a few samples of the function, asin(sqrt(share)) reads low: a
 * capture of 500 samples shows a 0.15% function as 0 or 1 sample, whose
 * values average the VST value of about 0.04%. A baseline of such
 * captures set against captures of 20,000 samples made every small
 * function look 1.8 times costlier: 7 false regressions in 1,000 tests
 * of a null fleet. Each value is moved by its capture's bias at the
 * function's share pooled over both sides (stats_vst_expected less the
 * VST value of that share), so that every capture reads the share on
 * the same footing whatever its size.
 */
static int size_bias(double **out, const series *b, const series *c)
{
	size_t n = b->n + c->n;
	double nmin = INFINITY, nmax = 0, sx = 0, sn = 0, p, base;
	double *y;

	*out = NULL;
	for (size_t i = 0; i < n; i++) {
		const series *s = i < b->n ? b : c;
		size_t k = i < b->n ? i : i - b->n;
		double ns = 1 / (4 * s->v[k]);
		if (!(isfinite(ns) && ns >= 1) || !(s->share[k] >= 0))
			return 0;
		nmin = fmin(nmin, ns), nmax = fmax(nmax, ns);
		sx += s->share[k] * ns, sn += ns;
	}
	/*
	 * A capture that says no sample count reads as one sample
	 * (series_fill): nothing to correct it by.
	 */
	if (!n || nmax < 1.5 * nmin || !(sn > 0) || nmin < 2)
		return 0;
	p = fmin(1, sx / sn);
	if (p <= 0 || p * nmin >= 30)
		return 0;
	if (!(y = malloc(n * sizeof(*y))))
		return STATS_ENOMEM;
	base = stats_vst(p);
	for (size_t i = 0; i < n; i++) {
		const series *s = i < b->n ? b : c;
		size_t k = i < b->n ? i : i - b->n;
		double v = s->vst[k] - (stats_vst_expected(p, 1 / (4 * s->v[k])) - base);
		y[i] = isfinite(v) ? fmin(fmax(v, 0), asin(1.0)) : s->vst[k];
	}
	*out = y;
	return 0;
}

static int test_on(finding *f, const series *b, const series *c, const analysis_opts *o,
		   const analysis_target_data *td);

/* Test one function (test_on), its values first corrected for capture size (size_bias). */
static int test_function(finding *f, const series *b, const series *c, const analysis_opts *o,
			 const analysis_target_data *td)
{
	series bs = *b, cs = *c;
	double *fix = NULL;
	int rc = size_bias(&fix, b, c);

	if (rc < 0)
		return rc;
	if (fix)
		bs.vst = fix, cs.vst = fix + b->n;
	rc = test_on(f, &bs, &cs, o, td);
	free(fix);
	return rc;
}

/*
 * Welch's one-sided tests of y against x (n values each, at least two),
 * beyond delta_up for a rise into *up and beyond delta_down for a fall
 * into *down; each left as it was where the test cannot be made.
 */
static void welch_both(double *up, double *down, const double *x, size_t nx, const double *y,
		       size_t ny, double delta_up, double delta_down)
{
	stats_sample sx, sy;
	stats_test_opts o = STATS_TEST_OPTS_INIT;
	stats_result r;

	if (stats_sample_of(&sx, x, nx, 0) < 0 || stats_sample_of(&sy, y, ny, 0) < 0)
		return;
	o.alt = STATS_GREATER;
	o.delta0 = delta_up;
	if (stats_test_welch(&r, &sx, &sy, &o) == 0)
		*up = r.p;
	o.alt = STATS_LESS;
	o.delta0 = delta_down;
	if (stats_test_welch(&r, &sx, &sy, &o) == 0)
		*down = r.p;
}

/*
 * The mean of y over each host's values into out (in order of first
 * appearance; a value whose host is unknown, -1, is a host of its own),
 * their number into *nout. out holds n.
 */
static int host_means(double *out, size_t *nout, const int *host, const double *y, size_t n)
{
	bool *done = calloc(n ? n : 1, sizeof(*done));

	*nout = 0;
	if (!done)
		return STATS_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		double sum = 0;
		size_t k = 0;
		if (done[i])
			continue;
		for (size_t j = i; j < n; j++)
			if (j == i || (host[i] >= 0 && host[j] == host[i])) {
				done[j] = true;
				sum += y[j];
				k++;
			}
		out[(*nout)++] = sum / (double)k;
	}
	free(done);
	return 0;
}

/*
 * Hosts new to the service. A host keeps offsets of its own, and one the
 * baseline never saw brings an offset nothing in the baseline measured:
 * the model takes its size from the function's spread over the
 * baseline's hosts, and a function whose few baseline hosts happened to
 * agree gets too small a one (fleets whose releases go to new hosts gave
 * up to one false finding in six null service-nights). So where a judged
 * capture's host is new, the change must also show with each host one
 * value: Welch's tests of the judged captures' host means against the
 * baseline's (a capture without a host is a host of its own), one-sided
 * each way beyond its margin, into *up and *down: a finding needs the
 * one of its direction at mw_alpha too (passes), as Mann-Whitney's. Both
 * are NaN when no judged host is new, or when either side has fewer than
 * two hosts.
 */
static int new_host_tests(double *up, double *down, const series *b, const series *c,
			  const double *yb, const double *yc, double delta_up, double delta_down)
{
	double *mb = NULL, *mc = NULL;
	size_t nb = 0, nc = 0;
	bool fresh = false;
	int rc = 0;

	*up = *down = NAN;
	if (!b->host || !c->host || b->n < 2 || c->n < 2)
		return 0;
	for (size_t i = 0; i < c->n && !fresh; i++) {
		bool seen = c->host[i] < 0;
		for (size_t j = 0; j < b->n && !seen; j++)
			seen = b->host[j] == c->host[i];
		fresh = !seen;
	}
	if (!fresh)
		return 0;
	if (!(mb = malloc(b->n * sizeof(*mb))) || !(mc = malloc(c->n * sizeof(*mc)))) {
		rc = STATS_ENOMEM;
		goto out;
	}
	if ((rc = host_means(mb, &nb, b->host, yb, b->n)) < 0 ||
	    (rc = host_means(mc, &nc, c->host, yc, c->n)) < 0)
		goto out;
	if (nb >= 2 && nc >= 2)
		welch_both(up, down, mb, nb, mc, nc, delta_up, delta_down);
out:
	free(mb);
	free(mc);
	return rc;
}

#define PI 3.14159265358979323846
/* The judged captures' hours of the day span at most this many hours for the hours' test. */
#define HOURS_SPAN 6.0
/* Baseline captures within this many hours of the judged ones' hour of the day are theirs. */
#define HOURS_NEAR 3.0
/*
 * Fewer near captures than this test nothing: Welch's test of two has
 * about one degree of freedom, and vetoed a real 1.5x slowdown.
 */
#define HOURS_MIN 5

/* The hour of the day of a capture, UTC, in [0, 24). */
static double capture_hour(const capture_ref *c)
{
	int64_t day = 24 * 3600 * (int64_t)1000000, us = c->captured_at_us % day;

	return (double)(us < 0 ? us + day : us) / (3600.0 * 1e6);
}

/* The hour of the day series s's capture i was taken at. */
static double hour_of(const series *s, size_t i)
{
	return capture_hour(&s->from->caps[s->at[i]]);
}

/* a - b on the clock, in (-12, 12]. */
static double clock_diff(double a, double b)
{
	double d = fmod(a - b, 24.0);

	if (d > 12)
		d -= 24;
	else if (d <= -12)
		d += 24;
	return d;
}

/*
 * Whether an hour with `near` of the baseline's `nbase` captures within
 * HOURS_NEAR hours of it is one the baseline did not see: fewer than
 * HOURS_MIN, and under a third of what a baseline spread over the clock
 * would have there (nbase / 4), so that a small baseline spread evenly
 * (10 captures, 2 or 3 near any hour) is not taken for one that missed
 * the hour.
 */
static bool hour_unseen(size_t near, size_t nbase)
{
	return near < HOURS_MIN && near * 12 < nbase;
}

/*
 * Whether most judged captures were taken at hours the baseline did not
 * see (hour_unseen): a release deployed in the afternoon and captured
 * then, against a baseline captured at night. The hour and the release
 * cannot be told apart there, whatever the hours the judged captures
 * span: on an independent simulator's fleets, captures 9 and 10 hours
 * apart, all far from a baseline taken at midnight, made critical
 * findings that were confirmed at once and paged for nothing. Such a
 * release's findings are hours_unseen (test_on). Leaving those captures
 * out, judging on the rest, was tried: it also left out half the
 * captures of releases whose baseline runs at two fixed hours a day, and
 * their real regressions with them.
 */
static void hours_filter(sides *s)
{
	size_t unseen = 0;

	for (size_t i = 0; i < s->cur.n; i++) {
		double h = capture_hour(&s->cur.caps[i]);
		size_t near = 0;
		for (size_t j = 0; j < s->base.n; j++)
			near += fabs(clock_diff(capture_hour(&s->base.caps[j]), h)) <= HOURS_NEAR;
		unseen += hour_unseen(near, s->base.n);
	}
	s->hours_unseen = 2 * unseen > s->cur.n;
}

/*
 * The hours of the day. Traffic has a day: an endpoint busy at noon is
 * quiet at three in the morning, and every function's share follows the
 * mix. A release judged on captures all taken within a few hours (a
 * post-deploy gate right after the deploy, a nightly's captures at one
 * hour) against a baseline taken around the clock moves with the hour
 * with no change of code: on fleets of an independent simulator whose
 * endpoints' traffic swings by 40% over the day, 14 false regressions in
 * 60 null service-nights on 4 captures at 03:00, and 274 on 12. So where
 * the judged captures span HOURS_SPAN hours of the day or less, the
 * change must also show against the baseline's captures taken within
 * HOURS_NEAR hours of theirs: Welch's one-sided tests each way beyond
 * the margins, into *up and *down. Both NaN where the judged captures
 * are spread over the day, where fewer than HOURS_MIN baseline captures
 * are that near, or where every baseline capture is (nothing to compare).
 * *unseen where the judged captures span so few hours and fewer than
 * HOURS_MIN baseline captures are near them (a deploy in the afternoon
 * against a baseline captured at night): nothing can tell the hour from
 * the release there, and on an independent simulator's fleets such
 * nights made 12 critical pages in 399 null service-nights.
 */
static int hours_tests(double *up, double *down, bool *unseen, const series *b, const series *c,
		       const double *yb, const double *yc, double delta_up, double delta_down)
{
	double *near, at, lo = 0, hi = 0, sx = 0, sy = 0;
	size_t nn = 0;

	*up = *down = NAN;
	*unseen = false;
	if (!b->from || !c->from || b->n < 3 || c->n < 2)
		return 0;
	/* Their mean on the clock, and how far either way of it they lie. */
	for (size_t i = 0; i < c->n; i++) {
		double h = hour_of(c, i) * PI / 12;
		sx += cos(h), sy += sin(h);
	}
	if (hypot(sx, sy) < 1e-9 * (double)c->n)
		return 0;
	at = fmod(atan2(sy, sx) * 12 / PI + 24, 24);
	for (size_t i = 0; i < c->n; i++) {
		double d = clock_diff(hour_of(c, i), at);
		lo = fmin(lo, d), hi = fmax(hi, d);
	}
	if (hi - lo > HOURS_SPAN)
		return 0;
	if (!(near = malloc(b->n * sizeof(*near))))
		return STATS_ENOMEM;
	for (size_t i = 0; i < b->n; i++)
		if (fabs(clock_diff(hour_of(b, i), at)) <= HOURS_NEAR)
			near[nn++] = yb[i];
	if (nn >= HOURS_MIN && nn < b->n)
		welch_both(up, down, near, nn, yc, c->n, delta_up, delta_down);
	*unseen = hour_unseen(nn, b->n);
	free(near);
	return 0;
}

/* The share tests of one function; fills everything but q, class and score. */
static int test_on(finding *f, const series *b, const series *c, const analysis_opts *o,
		   const analysis_target_data *td)
{
	stats_mw_opts mw = STATS_MW_OPTS_INIT;
	stats_mw_result mwr;
	stats_result rup, rdn, rci;
	host_noise hn = {b->host, c->host, td->host_rho, b->day, c->day, td->day_rho};
	series ba = *b, ca = *c; /* the values the test uses: for the week, adjusted */
	week_adj wk;
	fit_in in = {b->v, c->v, b->group, b->n, c->n, td->phi, td->phi_df, td->noise, &hn};
	pooled p;
	double pb, up, down, mup, mdown, lo, hi, shift, hup, hdown, tup, tdown;
	int rc;

	memset(&wk, 0, sizeof(wk));
	if (o->weekly &&
	    (rc = week_adjust(&wk, b->vst, b->week, b->n, c->vst, c->week, c->n)) < 0)
		return rc;
	if (wk.buf)
		ba.vst = wk.buf, ca.vst = wk.buf + b->n;
	f->weekly = wk.buf != NULL;
	f->week = td->week;
	if ((rc = fit_on(&p, &in, ba.vst, ca.vst)) < 0)
		goto out;
	week_restore(&p, &wk, wk.fc); /* nothing to restore without a week: wk is zero */
	/*
	 * No share lies below nothing: put back at a weekend that holds less
	 * of a function than the week, the baseline of one new in the release
	 * fell below zero, whose share is NaN: a new function of 2% (p 7e-74)
	 * was no finding.
	 */
	p.mean_b = fmin(fmax(p.mean_b, 0), PI / 2);
	p.mean_c = fmin(fmax(p.mean_c, 0), PI / 2);
	shift = wk.fc * wk.d;
	pb = stats_vst_inv(p.mean_b);
	margins(&up, &down, pb, o);
	mup = up, mdown = down;
	/*
	 * The margin says which changes matter. Tested against (margin in
	 * test), a rise must be shown beyond it; else the test is against no
	 * change and the estimate itself must reach the margin: a null
	 * function's chance of a finding is the same (it needs both), and a
	 * real change is not asked to clear its own materiality twice.
	 */
	f->material_up = p.mean_c - p.mean_b >= up;
	f->material_down = p.mean_c - p.mean_b <= down;
	/*
	 * A change of the release shows on each of its hosts; an offset of
	 * one host (a bad node, a noisy neighbour, a host new to the
	 * service) shows on that host alone. So the change must still reach
	 * the margin with any one host's captures left out.
	 */
	if ((rc = without_one_host(&lo, &hi, &ca, p.e_c)) < 0)
		goto out;
	if (rc > 0) {
		f->material_up = f->material_up && lo + shift - p.mean_b >= up;
		f->material_down = f->material_down && hi + shift - p.mean_b <= down;
	}
	if (!o->margin_in_test)
		up = down = 0;
	if ((rc = pooled_test(&rup, &p, STATS_GREATER, up, 0.05)) < 0 ||
	    (rc = pooled_test(&rdn, &p, STATS_LESS, down, 0.05)) < 0 ||
	    (rc = pooled_test(&rci, &p, STATS_TWO_SIDED, 0, 1 - o->ci_level)) < 0 ||
	    (wk.buf && (rc = week_doubts(&rup, &rdn, f, &in, b->vst, c->vst, c->week, &wk, mup,
					 mdown, up, down, false)) < 0))
		goto out;
	f->test = strdup("pooled");
	f->kind = FINDING_KIND_SHARE;
	f->baseline_share = pb;
	f->current_share = stats_vst_inv(p.mean_c);
	f->delta = f->current_share - f->baseline_share;
	f->rel_delta = f->baseline_share > 0 ? f->delta / f->baseline_share : INFINITY;
	f->ci_low = stats_vst_delta_share(p.mean_b, rci.ci_low);
	f->ci_high = stats_vst_delta_share(p.mean_b, rci.ci_high);
	f->vst_base = p.mean_b;
	f->vst_se = p.se_c;
	f->vst_df = fmax(p.df_c, p.df);
	f->vst_margin = mup;
	f->vst_delta0 = up;
	f->rate_ratio = mean_of(b->rate, b->n) > 0
			? mean_of(c->rate, c->n) / mean_of(b->rate, b->n) : NAN;
	rate_tests(f, b, c);
	/* Two one-sided tests (see above); each has its own family. */
	f->p_up = rup.p;
	f->p_down = rdn.p;
	if ((rc = new_host_tests(&hup, &hdown, b, c, ba.vst, ca.vst, up, down)) < 0 ||
	    (rc = hours_tests(&tup, &tdown, &f->hours_unseen, b, c, ba.vst, ca.vst, up, down)) < 0)
		goto out;
	f->hours_unseen = f->hours_unseen || td->hours_unseen;
	f->direction = f->p_up <= f->p_down ? FINDING_REGRESSION : FINDING_IMPROVEMENT;
	f->p_value = fmin(f->p_up, f->p_down);
	f->host_p = f->direction == FINDING_REGRESSION ? hup : hdown;
	f->hours_p = f->direction == FINDING_REGRESSION ? tup : tdown;
	mw.alt = f->direction == FINDING_REGRESSION ? STATS_GREATER : STATS_LESS;
	mw.delta0 = f->direction == FINDING_REGRESSION ? up : down;
	if ((rc = stats_mann_whitney(&mwr, ca.vst, c->n, ba.vst, b->n, &mw)) < 0)
		goto out;
	f->mw_p = mwr.p;
	f->baseline_captures = b->n;
	f->current_captures = c->n;
	rc = f->test ? 0 : STATS_ENOMEM;
out:
	free(wk.buf);
	return rc;
}

/* Number the releases of a capture set in order of first appearance. */
static int *group_ids(const capture_set *cs)
{
	int *g = calloc(cs->n ? cs->n : 1, sizeof(*g));
	int next = 0;

	for (size_t i = 0; g && i < cs->n; i++) {
		size_t j;
		for (j = 0; j < i && strcmp(cs->caps[j].release, cs->caps[i].release) != 0; j++)
			;
		g[i] = j < i ? g[j] : next++;
	}
	return g;
}

/*
 * The part of the week each capture of a set was taken in, on the
 * service's clock (w): WEEK_END from noon of the weekend's first day to
 * noon of its last, WEEK_EDGE within 12 hours of the weekend's start or
 * end, WEEK_DAY the rest. A weekend of one day, which would be all edge,
 * has edges of 6 hours and its core from 06:00 to 18:00. Where a service's day starts is often not
 * known exactly (a weekend that starts on Friday evening, a clock set
 * for services in several zones): a capture near the edge may be either,
 * and taken for the wrong one it is adjusted by the whole weekend's
 * difference.
 */
static int *week_parts(const capture_set *cs, const analysis_week *w)
{
	const int64_t week = 7 * 86400, len = (int64_t)w->weekend_days * 86400;
	const int64_t edge = w->weekend_days > 1 ? 43200 : 21600;
	int64_t shift = (int64_t)llround(w->utc_offset_h * 3600);
	int *parts = calloc(cs->n ? cs->n : 1, sizeof(*parts));

	for (size_t i = 0; parts && i < cs->n; i++) {
		int64_t sec = cs->caps[i].captured_at_us / 1000000 + shift;
		/* Seconds since the weekend last began: 1 January 1970 was a Thursday (4). */
		int64_t at = ((sec + (4 - w->weekend_first) * 86400) % week + week) % week;
		if (at >= edge && at < len - edge)
			parts[i] = WEEK_END;
		else if (at < len + edge || at >= week - edge)
			parts[i] = WEEK_EDGE;
		else
			parts[i] = WEEK_DAY;
	}
	return parts;
}

/* The parts of the week of a target's baseline and judged captures, on week w. */
static int target_weeks(analysis_target_data *td, const capture_set *base,
			const capture_set *cur, const analysis_week *w)
{
	td->week = *w;
	if (!(td->wb = week_parts(base, w)) || !(td->wc = week_parts(cur, w)))
		return PR_ENOMEM;
	return 0;
}

/*
 * The look of a target: how many nights of its release brought captures.
 * The nights are the nightly's own windows, counted back from the
 * analysis's "now" (at - look_us to at is night 0, the 24 hours before it
 * night 1, ...), so a capture belongs to the night whose run first saw
 * it. Nights counted from the release's first capture instead put two
 * runs' captures into one night whenever they were taken a little less
 * than look_us apart: captures collected at the same time every night
 * (the nightly's own collection, a cron job), or one capture a night at
 * any time of day. Night 2 was then look 1 again, which spent look 1's
 * share of alpha twice and left a regression significant on both nights
 * unconfirmed (its two looks were one). A night without new captures
 * adds no look, so judging a release again in the same night
 * (post-deploy, then the nightly) spends nothing more.
 */
/* The first look a test's look may spend the alpha of (finding.first_look). */
static size_t first_look_of(const finding *f)
{
	return f->first_look && f->first_look <= f->look ? f->first_look : f->look;
}

static size_t look_of(const analysis_target *t, const sides *s, const analysis_opts *o)
{
	int64_t last = -1;
	size_t looks = 0;

	if (o->fixed_look)
		return o->fixed_look;
	if (!t->release || !s->cur.n || o->look_us <= 0)
		return 1;
	/* Captures are in time order and none is after at: nights count down. */
	for (size_t i = 0; i < s->cur.n; i++) {
		int64_t age = o->at_us - s->cur.caps[i].captured_at_us;
		int64_t night = (age > 0 ? age : 0) / o->look_us;
		if (night != last)
			looks++;
		last = night;
	}
	return looks ? looks : 1;
}

static bool cost_unit_is_flow(const char *unit);

/* Whether c counts samples each of which stands for `period` nanoseconds of CPU. */
static bool cpu_period(const capture_ref *c)
{
	return strcmp(c->unit, "count") == 0 && c->period > 0 &&
	       strcmp(c->period_type, "cpu") == 0 && strcmp(c->period_unit, "nanoseconds") == 0;
}

/*
 * A capture's whole-service cost, and its unit: the bytes in use of a
 * heap profile (type "heap": one moment's); else the value per second of
 * capture when it has a duration (CPU seconds per second for nanoseconds
 * of CPU, or for samples of a CPU-time period, bytes per second of
 * allocation, else values per second). 0 when unknown: an allocation
 * profile without a duration counts since its process started (Go's
 * /debug/pprof/allocs), so its total grows with the process's uptime,
 * and one over a window grows with the window.
 */
/* Nanoseconds in one of a time unit (0: not a unit of time). */
static double time_unit_ns(const char *unit)
{
	static const struct {
		const char *name;
		double ns;
	} units[] = {
		{"nanoseconds", 1}, {"microseconds", 1e3}, {"milliseconds", 1e6}, {"seconds", 1e9}};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(unit, units[i].name) == 0)
			return units[i].ns;
	return 0;
}

static double capture_cost(const capture_ref *c, const char *type, const char **unit)
{
	bool bytes = strcmp(c->unit, "bytes") == 0;
	double ns;

	if (bytes && type && strcmp(type, "heap") == 0) {
		*unit = "bytes";
		return (double)c->total;
	}
	/*
	 * A goroutine profile counts the goroutines alive at one moment, a
	 * level as heap bytes in use are. Every goroutine waits in the same
	 * runtime function, so shares cannot show a leak (watchConfig's
	 * goroutines from 22 to 45 moved runtime.gopark 96% -> 98%, no
	 * finding); their number can.
	 */
	if (type && strcmp(type, "goroutine") == 0 &&
	    (strcmp(c->unit, "count") == 0 || strcmp(c->unit, "samples") == 0)) {
		*unit = "goroutines";
		return (double)c->total;
	}
	if (c->duration_ns <= 0)
		return 0;
	/*
	 * A wall profile's time is wall time (waiting included), not CPU.
	 * Time comes in other units too: Google's Node profiler writes wall
	 * microseconds, which were values (microseconds) per second.
	 */
	if ((ns = time_unit_ns(c->unit)) > 0) {
		*unit = type && strcmp(type, "wall") == 0 ? "wall_s_per_s" : "cpu_s_per_s";
		return (double)c->total * ns / (double)c->duration_ns;
	}
	/*
	 * Samples counted alone (a profiler that writes samples/count only)
	 * each stand for one period of CPU time: the same CPU sampled at 500
	 * Hz holds five times the samples of 100 Hz, and per second a rate
	 * change read as a regression of +400%.
	 */
	if (cpu_period(c)) {
		*unit = "cpu_s_per_s";
		return (double)c->total * (double)c->period / (double)c->duration_ns;
	}
	*unit = bytes ? "bytes_per_s" : "value_per_s";
	return (double)c->total / ((double)c->duration_ns / 1e9);
}

double analysis_capture_cost(const capture_ref *c, const char *type, const char *cost_unit)
{
	const char *unit = NULL;
	double cost = capture_cost(c, type, &unit);
	bool per_load = strcmp(finding_cost_family(cost_unit), "per_load") == 0;

	if (!(cost > 0) || !unit)
		return 0;
	if (!per_load)
		return cost;
	return c->load > 0 && cost_unit_is_flow(unit) ? cost / c->load : 0;
}

/*
 * Whether captures a and b, whose cost is in `unit`, count alike: values
 * per second (samples counted without a CPU-time period) compare only at
 * one sampling period, as 500 samples a second at 500 Hz are 100 at 100
 * Hz. Other units are amounts already (nanoseconds, bytes, or samples
 * converted to CPU time).
 */
static bool same_period(const capture_ref *a, const capture_ref *b, const char *unit)
{
	return strcmp(unit, "value_per_s") != 0 ||
	       (a->period == b->period && strcmp(a->period_type, b->period_type) == 0 &&
		strcmp(a->period_unit, b->period_unit) == 0);
}

/* Why captures a (cost in unit ua) and b (ub) cannot be compared, into why[size]. */
static void cost_mismatch(char *why, size_t size, const capture_ref *a, const capture_ref *b,
			  const char *ua, const char *ub)
{
	if (strcmp(ua, ub) != 0)
		snprintf(why, size, "capture %" PRId64 " measures %s, capture %" PRId64 " %s",
			 a->id, ua, b->id, ub);
	else
		snprintf(why, size,
			 "capture %" PRId64 " counts samples of a period of %" PRId64 " %s %s, "
			 "capture %" PRId64 " of %" PRId64 " %s %s, and neither is CPU time",
			 a->id, a->period, a->period_type, a->period_unit, b->id, b->period,
			 b->period_type, b->period_unit);
}

/*
 * The unit of a flow `unit` per unit of load: the flow's unit kept, so that
 * a finding reads "2.70 ms CPU per unit of load", not a bare number.
 */
static const char *per_load_unit(const char *unit)
{
	if (strcmp(unit, "cpu_s_per_s") == 0)
		return "per_load:cpu_s_per_s";
	if (strcmp(unit, "wall_s_per_s") == 0)
		return "per_load:wall_s_per_s";
	return strcmp(unit, "bytes_per_s") == 0 ? "per_load:bytes_per_s" : "per_load:value_per_s";
}

const char *finding_cost_family(const char *unit)
{
	/* Earlier versions stored a wall profile's wall time as "cpu_s_per_s": one finding. */
	if (unit && strcmp(unit, "wall_s_per_s") == 0)
		return "cpu_s_per_s";
	return unit && strncmp(unit, "per_load", 8) == 0 ? "per_load" : unit;
}

/*
 * Whether a cost unit is a flow (an amount per second), which grows with
 * the requests served: only a flow is divided by load. Heap bytes in use
 * are a level: a quiet night holds as much retained heap, and per unit of
 * its lower load it read as a rise (+79% at half the traffic).
 */
static bool cost_unit_is_flow(const char *unit)
{
	return strcmp(unit, "cpu_s_per_s") == 0 || strcmp(unit, "wall_s_per_s") == 0 ||
	       strcmp(unit, "bytes_per_s") == 0 || strcmp(unit, "value_per_s") == 0;
}

/*
 * Slopes of log cost on log load that the baseline must pin down to this
 * standard error before its captures' own slope replaces proportionality.
 * A baseline whose loads all lie within a tenth of each other cannot
 * tell 0.8 from 1, and a slope guessed from it moves a judged night at
 * half the load by more than the margin.
 */
#define LOAD_SLOPE_SE_MAX 0.25

/*
 * How far (as a factor) the judged captures' typical load may lie
 * outside the baseline's loads before a cost per unit of load, assumed
 * proportional, is no longer read as a regression that gates or pages.
 */
#define LOAD_BEYOND 1.25

/* Baseline captures further than this many scaled MADs from the median are left out. */
#define LOAD_OUTLIER_MADS 5.0

/* What a cost test has to say besides its finding. */
typedef struct cost_said {
	char why[256]; /* why it did not run, for the run's skipped list; "" unsaid */
	size_t left_out; /* baseline captures left out: cost per unit of load far off */
	double load_b_lo, load_b_hi, load_c; /* the baseline's loads, the judged ones' */
	bool beyond; /* judged beyond the baseline's loads, with no slope to go by */
	bool fitted; /* the baseline's own slope of cost on load was used */
	bool no_duration; /* no capture has a duration, though some name a sampling period */
	bool level_loaded; /* a level (heap bytes), every capture with a load figure */
	bool level_held;   /* ... and the judged load not above the baseline's (level_load) */
} cost_said;

/*
 * Whether heap or allocation captures of type `type` were sampled at
 * another rate in the judged captures than in the baseline: Go samples
 * the allocations made before runtime.MemProfileRate is set at the
 * default 512 KiB and scales them by the new rate, so runtime.malg held
 * 0.03% of a baseline's heap at one rate and 2.62% at another, a medium
 * regression of nothing. Sets *out_base and *out_cur to a baseline and a
 * judged capture whose periods differ; captures without a period compare
 * as before.
 */
static bool rate_changed(const capture_ref **out_base, const capture_ref **out_cur,
			 const char *type, const sides *s)
{
	*out_base = *out_cur = NULL;
	if (strcmp(type, "heap") != 0 && strcmp(type, "alloc") != 0)
		return false;
	for (size_t j = 0; j < s->cur.n; j++) {
		const capture_ref *c = &s->cur.caps[j];
		if (c->period <= 0)
			continue;
		for (size_t i = 0; i < s->base.n; i++) {
			const capture_ref *b = &s->base.caps[i];
			if (b->period > 0 &&
			    (b->period != c->period || strcmp(b->period_type, c->period_type) ||
			     strcmp(b->period_unit, c->period_unit))) {
				*out_base = b, *out_cur = c;
				return true;
			}
		}
	}
	return false;
}

/*
 * Whether a level's change (heap bytes in use, never divided by load) may
 * gate and page: every capture on both sides has a load figure, and the
 * judged captures' median load is not above the baseline's usual loads
 * (its upper quartile) nor more than the margin above its median, and
 * the sampling rate did not change (rate_changed). More
 * traffic may hold more heap; the same or less may not. Sets
 * said->level_loaded and said->level_held, with the loads for the note;
 * returns 0 or STATS_ENOMEM.
 */
static int level_load(cost_said *said, const sides *s, const char *type, double rel_margin)
{
	const capture_ref *pb, *pc;
	size_t nb = s->base.n, nc = s->cur.n;
	double *l = malloc((nb + nc + 1) * sizeof(*l)), med_b, q3_b, med_c;
	int rc = 0;

	said->level_loaded = said->level_held = false;
	if (!l)
		return STATS_ENOMEM;
	/* Bytes at two sampling rates moved by a fifth on a release that changed nothing. */
	if (rate_changed(&pb, &pc, type, s))
		goto out;
	for (size_t i = 0; i < nb + nc; i++) {
		l[i] = i < nb ? s->base.caps[i].load : s->cur.caps[i - nb].load;
		if (!(l[i] > 0) || !isfinite(l[i]))
			goto out;
	}
	if (nb == 0 || nc == 0 || (rc = stats_median(&med_b, l, nb)) < 0 ||
	    (rc = stats_quantile(&q3_b, l, nb, 0.75)) < 0 ||
	    (rc = stats_median(&med_c, l + nb, nc)) < 0)
		goto out;
	said->level_loaded = true;
	said->level_held = med_c <= fmax(q3_b, med_b * (1 + rel_margin));
	said->load_b_lo = med_b, said->load_b_hi = q3_b, said->load_c = med_c;
out:
	free(l);
	return rc;
}

/*
 * Leave out of y[0..*n) (with v, x, gb, wb alike) the values further than
 * LOAD_OUTLIER_MADS scaled MADs from their median: one capture whose load
 * was written in requests per minute, 60 times the rest, or "1e300",
 * widened the baseline's spread until a doubling went unseen. Returns how
 * many were left out, or STATS_ENOMEM.
 */
static int drop_far(double *y, double *v, double *x, int *gb, int *wb, size_t *n)
{
	double med, mad;
	size_t k = 0;
	int rc;

	if (*n < 3)
		return 0;
	if ((rc = stats_median(&med, y, *n)) < 0 || (rc = stats_mad(&mad, y, *n)) < 0)
		return rc;
	if (!(mad > 0))
		return 0;
	for (size_t i = 0; i < *n; i++) {
		if (fabs(y[i] - med) > LOAD_OUTLIER_MADS * mad)
			continue;
		y[k] = y[i], v[k] = v[i], x[k] = x[i], gb[k] = gb[i], wb[k] = wb[i];
		k++;
	}
	rc = (int)(*n - k);
	*n = k;
	return rc;
}

/*
 * Cost per unit of load assumed cost proportional to load, and a quieter
 * night with a fixed overhead (a process's idle CPU, its timers) read as
 * a costlier release: 0.1 CPU s/s plus 2 ms a request gives 2.5 ms a
 * request at 200 a second and 3 ms at 100. Where the baseline's loads
 * span enough to pin its slope down, log cost is fitted against log load
 * over the baseline (stats_fit_line) and every capture's cost is read at
 * the baseline's typical load along that slope; else the slope is 1.
 * y holds log cost per unit of load and x log load, baseline first (nb),
 * then the judged captures (nc). Returns the variance the slope's error
 * adds to the judged captures' mean (0 when the slope is 1), for the
 * test's standard error; *rc is 0 or STATS_ENOMEM.
 */
static double load_slope(cost_said *said, double *y, const double *x, size_t nb, size_t nc, int *rc)
{
	double *yc = malloc(nb * sizeof(*yc)), xb = 0, xc = 0, lo = INFINITY, hi = -INFINITY;
	stats_line line;
	double var = 0;

	*rc = 0;
	if (!yc) {
		*rc = STATS_ENOMEM;
		return 0;
	}
	for (size_t i = 0; i < nb; i++) {
		yc[i] = y[i] + x[i];
		xb += x[i] / (double)nb;
		lo = fmin(lo, x[i]), hi = fmax(hi, x[i]);
	}
	for (size_t i = nb; i < nb + nc; i++)
		xc += x[i] / (double)nc;
	if (nb >= 3 && stats_fit_line(&line, x, yc, nb) == 0 &&
	    sqrt(line.var_c1) <= LOAD_SLOPE_SE_MAX) {
		said->fitted = true;
		var = line.var_c1 * (xc - xb) * (xc - xb);
		/* log(cost at the baseline's typical load) - that load's log: per unit of load. */
		for (size_t i = 0; i < nb + nc; i++)
			y[i] = y[i] + x[i] - line.c1 * (x[i] - xb) - xb;
	}
	said->load_b_lo = exp(lo), said->load_b_hi = exp(hi), said->load_c = exp(xc);
	said->beyond = !said->fitted && (xc < lo - log(LOAD_BEYOND) || xc > hi + log(LOAD_BEYOND));
	free(yc);
	return var;
}

/*
 * The whole service's cost: log cost per capture (per unit of load when
 * per_load and the cost is a flow), with sampling variance 1 / samples
 * (the relative noise of a sampled total), tested like a share against
 * log(1 +- rel_margin). No test (STATS_EDATA) when a capture on either
 * side lacks the measure, or when the captures' measures cannot be
 * compared, or when a baseline with load figures meets judged captures
 * without: then said->why says so, for a note on the run.
 */
static int cost_test(finding *f, cost_said *said, const sides *s, const analysis_target_data *td,
		     const char *type, bool per_load, const analysis_opts *o)
{
	size_t nb0 = s->base.n, nc0 = s->cur.n, nb = 0, nc = 0, nbm = 0, ncm = 0;
	size_t need = o->min_baseline > 2 ? o->min_baseline : 2;
	double *y = malloc(3 * (nb0 + nc0) * sizeof(*y)), *v, *x, gm_b, gm_c, up, down, mup, mdown;
	double slope_var = 0;
	int *ix = malloc((2 * nb0 + 2 * nc0 + 1) * sizeof(*ix)), *gb, *wb, *wc, *hc;
	const char *unit = NULL, *u, *lacks = NULL, *judged_unit = NULL, *unlike_unit = NULL;
	const capture_ref *first = NULL, *lacking = NULL, *judged = NULL, *unlike = NULL;
	char *why = said->why;
	size_t why_size = sizeof(said->why);
	stats_result rup, rdn, rci;
	week_adj wk;
	fit_in in = {NULL, NULL, NULL, 0, 0, 1, 0, NULL, NULL};
	const double *ya;
	double shift;
	pooled p;
	int rc = STATS_EDATA;

	memset(&wk, 0, sizeof(wk));
	memset(said, 0, sizeof(*said));
	if (!y || !ix) {
		rc = STATS_ENOMEM;
		goto out;
	}
	v = y + nb0 + nc0;
	x = v + nb0 + nc0;
	gb = ix, wb = gb + nb0, wc = wb + nb0, hc = wc + nc0;
	/*
	 * A capture without the measure (no duration, no load figure) is left
	 * out, not the test: one such capture switched the test off, and a
	 * gate passed a service twice as costly. The baseline's captures come
	 * first, so the judged ones' values follow them at y + nb.
	 */
	/*
	 * The judged captures' measure is the test's: a baseline capture of
	 * another (samples a second, where the release's captures name their
	 * CPU period) is left out as one without a duration is. Refusing the
	 * test instead made every JFR gate inconclusive for a whole window
	 * once the parser learnt the sampler's period.
	 */
	for (size_t k = 0; k < nc0 && !judged; k++) {
		const capture_ref *c = &s->cur.caps[k];
		if (capture_cost(c, type, &judged_unit) > 0 && (!per_load || c->load > 0))
			judged = c;
	}
	for (size_t i = 0; i < nb0 + nc0; i++) {
		bool base = i < nb0;
		size_t k = base ? i : i - nb0, at = base ? nb : nb + nc;
		const capture_ref *c = base ? &s->base.caps[k] : &s->cur.caps[k];
		double cost = capture_cost(c, type, &u);
		if (cost > 0)
			base ? nbm++ : ncm++;
		if (!(cost > 0) || (per_load && !(c->load > 0))) {
			if (!lacking)
				lacking = c, lacks = cost > 0 ? "load figure" : "duration";
			continue;
		}
		if (base && judged &&
		    (strcmp(u, judged_unit) != 0 || !same_period(judged, c, judged_unit))) {
			if (!unlike)
				unlike = c, unlike_unit = u;
			continue;
		}
		if (per_load && !cost_unit_is_flow(u))
			goto out;
		if (unit && (strcmp(unit, u) != 0 || !same_period(first, c, unit))) {
			/* Said by the test per second, which meets the same captures. */
			if (!per_load)
				cost_mismatch(why, why_size, first, c, unit, u);
			goto out;
		}
		if (!unit)
			first = c;
		unit = u;
		y[at] = log(per_load ? cost / c->load : cost);
		x[at] = per_load ? log(c->load) : 0;
		v[at] = 1.0 / (double)(c->sample_count > 0 ? c->sample_count : 1);
		if (base) {
			gb[nb] = td->gb ? td->gb[k] : 0;
			wb[nb++] = td->wb ? td->wb[k] : 0;
		} else {
			wc[nc] = td->wc ? td->wc[k] : 0;
			hc[nc++] = td->hc ? td->hc[k] : 0;
		}
	}
	/*
	 * No capture has it. Folded and perf captures never carry a duration
	 * and name no sampling period: nothing to say. A capture that names
	 * one (pprof, JFR) could have carried a duration, and a gate passed
	 * a service twice as costly without a word: the run notes it.
	 */
	if (!unit) {
		for (size_t i = 0; i < nb0 + nc0 && !said->no_duration; i++)
			said->no_duration = *(i < nb0 ? &s->base.caps[i] : &s->cur.caps[i - nb0])
						     ->period_type != '\0';
		goto out;
	}
	/*
	 * A baseline with load figures and a release without them (the tag
	 * dropped, or written load=0) is not one the test per second can
	 * gate: it is capped at low, and a 2x regression passed. Said, the
	 * run is partly judged and a gate inconclusive.
	 */
	if (per_load && nc == 0 && ncm > 0 && nb >= need) {
		snprintf(why, why_size,
			 "cost per unit of load not tested: 0 of %zu judged captures have a load "
			 "figure (none, or load=0), %zu of %zu baseline ones do",
			 ncm, nb, nbm);
		goto out;
	}
	if (per_load && nb >= need) {
		int left = drop_far(y, v, x, gb, wb, &nb);
		if (left < 0) {
			rc = left;
			goto out;
		}
		said->left_out = (size_t)left;
		/* The judged captures follow the baseline's: close the gap left. */
		memmove(y + nb, y + nb + said->left_out, nc * sizeof(*y));
		memmove(v + nb, v + nb + said->left_out, nc * sizeof(*v));
		memmove(x + nb, x + nb + said->left_out, nc * sizeof(*x));
	}
	if (per_load && said->left_out && nb < need && nc > 0) {
		snprintf(why, why_size,
			 "cost per unit of load not tested: %zu of %zu baseline captures lie far "
			 "from the rest, and %zu are too few (need %zu)",
			 said->left_out, nb + said->left_out, nb, need);
		goto out;
	}
	if ((nb < o->min_baseline || nb < 2 || nc == 0) && unlike && !per_load) {
		size_t at;
		cost_mismatch(why, why_size, unlike, judged, unlike_unit, judged_unit);
		at = strlen(why);
		snprintf(why + at, why_size - at,
			 "; %zu of %zu baseline captures measure as the judged ones do (need %zu)",
			 nb, nb0, need);
		goto out;
	}
	if ((nb < o->min_baseline || nb < 2 || nc == 0) && lacking && !per_load) {
		snprintf(why, why_size,
			 "capture %" PRId64 " has no %s, and %zu of %zu baseline and %zu of %zu "
			 "judged captures have one (need %zu and 1)",
			 lacking->id, lacks, nb, nb0, nc, nc0, need);
		goto out;
	}
	if (nb < o->min_baseline || nb < 2 || nc == 0)
		goto out;
	if (per_load) {
		slope_var = load_slope(said, y, x, nb, nc, &rc);
		if (rc < 0)
			goto out;
		rc = STATS_EDATA;
	}
	in.vb = v, in.vc = v + nb;
	in.gb = td->gb ? gb : NULL;
	in.nb = nb, in.nc = nc;
	/* Load follows the week more than any share does (see week_adjust). */
	if (o->weekly &&
	    (rc = week_adjust(&wk, y, td->wb ? wb : NULL, nb, y + nb, td->wc ? wc : NULL, nc)) < 0)
		goto out;
	ya = wk.buf ? wk.buf : y;
	f->weekly = wk.buf != NULL;
	f->week = td->week;
	if ((rc = fit_on(&p, &in, ya, ya + nb)) < 0)
		goto out;
	week_restore(&p, &wk, wk.fc); /* nothing to restore without a week: wk is zero */
	if (slope_var > 0) {
		/* The slope is the baseline's estimate: read far from its loads, it errs more. */
		double se2 = p.se * p.se;
		p.se = sqrt(se2 + slope_var);
		p.df = fmin(p.df, stats_satterthwaite(se2, p.df, slope_var, (double)nb - 2));
	}
	shift = wk.fc * wk.d;
	up = log1p(o->rel_margin);
	down = log1p(-fmin(o->rel_margin, 0.99));
	f->material_up = p.mean_c - p.mean_b >= up;
	f->material_down = p.mean_c - p.mean_b <= down;
	{
		/* A host's CPUs move its cost more than its shares: one host must not make it. */
		int *hosts = td->hc ? hc : NULL;
		series c = {NULL, (double *)ya + nb,
			    NULL, v + nb,
			    NULL, hosts,
			    NULL, NULL,
			    NULL, NULL,
			    NULL, NULL,
			    nc};
		double lo, hi;
		if ((rc = without_one_host(&lo, &hi, &c, p.e_c)) < 0)
			goto out;
		if (rc > 0) {
			f->material_up = f->material_up && lo + shift - p.mean_b >= up;
			f->material_down = f->material_down && hi + shift - p.mean_b <= down;
		}
	}
	mup = up, mdown = down;
	if (!o->margin_in_test)
		up = down = 0;
	if ((rc = pooled_test(&rup, &p, STATS_GREATER, up, 0.05)) < 0 ||
	    (rc = pooled_test(&rdn, &p, STATS_LESS, down, 0.05)) < 0 ||
	    (rc = pooled_test(&rci, &p, STATS_TWO_SIDED, 0, 1 - o->ci_level)) < 0 ||
	    (wk.buf && (rc = week_doubts(&rup, &rdn, f, &in, y, y + nb, td->wc ? wc : NULL, &wk,
					 mup, mdown, up, down, true)) < 0))
		goto out;
	gm_b = exp(p.mean_b);
	gm_c = exp(p.mean_c);
	f->kind = FINDING_KIND_COST;
	f->cost_unit = per_load ? per_load_unit(unit) : unit;
	/* The test says how load was read: stored with the finding, and caps it (finish). */
	if (!per_load && !cost_unit_is_flow(unit) &&
	    (rc = level_load(said, s, type, o->rel_margin)) < 0)
		goto out;
	f->test = strdup(said->level_held ? "pooled_log_load_held"
			 : !per_load      ? "pooled_log"
			 : said->fitted   ? "pooled_log_load_fit"
			 : said->beyond   ? "pooled_log_load_beyond"
					  : "pooled_log");
	/* Cost findings: the cost itself where shares go, changes relative. */
	f->baseline_share = gm_b;
	f->current_share = gm_c;
	f->delta = gm_c / gm_b - 1;
	f->rel_delta = f->delta;
	f->ci_low = expm1(rci.ci_low);
	f->ci_high = expm1(rci.ci_high);
	f->rate_ratio = gm_c / gm_b;
	f->rate_p_up = f->rate_p_down = NAN;
	f->rate_diff = f->rate_se = f->rate_df = NAN;
	f->p_up = rup.p;
	f->p_down = rdn.p;
	f->direction = rup.p <= rdn.p ? FINDING_REGRESSION : FINDING_IMPROVEMENT;
	f->p_value = fmin(rup.p, rdn.p);
	{
		stats_mw_opts mw = STATS_MW_OPTS_INIT;
		stats_mw_result mwr;
		mw.alt = f->direction == FINDING_REGRESSION ? STATS_GREATER : STATS_LESS;
		mw.delta0 = f->direction == FINDING_REGRESSION ? up : down;
		if ((rc = stats_mann_whitney(&mwr, ya + nb, nc, ya, nb, &mw)) < 0)
			goto out;
		f->mw_p = mwr.p;
	}
	f->host_p = f->hours_p = NAN; /* a cost's hosts: without_one_host's check */
	f->baseline_captures = nb;
	f->current_captures = nc;
	rc = f->test ? 0 : STATS_ENOMEM;
out:
	free(wk.buf);
	free(ix);
	free(y);
	return rc;
}

/* Rows of doubles whose first element is the row's length, compared value by value. */
static int row_cmp(const void *x, const void *y)
{
	const double *a = x, *b = y;
	size_t n = (size_t)a[0];

	for (size_t i = 1; i < n; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

static int double_cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

typedef struct q_pair {
	double q, df;
} q_pair;

static int q_pair_cmp(const void *x, const void *y)
{
	const q_pair *a = x, *b = y;

	return a->q < b->q ? -1 : a->q > b->q ? 1 : a->df < b->df ? -1 : a->df > b->df;
}

/* Sort q[0..n) into value order, df[] alongside (in place; as it was when out of memory). */
static void q_order(double *q, double *df, size_t n)
{
	q_pair *t = malloc((n ? n : 1) * sizeof(*t));

	if (!t)
		return;
	for (size_t k = 0; k < n; k++)
		t[k] = (q_pair){q[k], df[k]};
	qsort(t, n, sizeof(*t), q_pair_cmp);
	for (size_t k = 0; k < n; k++)
		q[k] = t[k].q, df[k] = t[k].df;
	free(t);
}

/*
 * The median over functions of a lone capture's share over the
 * baseline's mean share: one function that doubled dilutes every other
 * share by one factor, which is no noise of the capture's. 1 when no
 * function has both; `ratio` is scratch of nrows.
 */
static double lone_ratio(const analysis_target_data *td, const capture_set *base,
			 const capture_set *cur, const size_t *rows, size_t nrows, series *sb,
			 series *sc, double *ratio)
{
	size_t n = 0;
	double m;

	for (size_t k = 0; k < nrows; k++) {
		double mb;
		series_fill(sb, &td->m, rows[k], 0, base, td->gb, td->hb, td->db, td->wb, NULL);
		series_fill(sc, &td->m, rows[k], base->n, cur, td->gc, td->hc, td->dc, td->wc,
			    NULL);
		if (sc->n != 1 || sb->n < 2 || !((mb = mean_of(sb->share, sb->n)) > 0))
			continue;
		ratio[n++] = sc->share[0] / mb;
	}
	if (n == 0)
		return 1;
	qsort(ratio, n, sizeof(*ratio), double_cmp);
	m = n % 2 ? ratio[n / 2] : 0.5 * (ratio[n / 2 - 1] + ratio[n / 2]);
	/* Most functions absent from a thin capture is sampling, not dilution. */
	return m > 0 && isfinite(m) ? m : 1;
}

/*
 * A release judged on one capture has no spread of its own, and was
 * judged with a typical release's: one capture taken while its host was
 * busy or still warming up then raised a regression in function after
 * function. Its factor is learnt instead from how far it stands from the
 * baseline's means across all functions (stats_lone_noise), never below
 * a typical release's 1: it scales the capture's whole variance, its
 * sampling and its spread (pooled_fit). Columns lone.. of each canonical
 * row hold the squared deviation, the capture's sampling variance, the
 * baseline's mean sampling variance and its number of captures (0: no
 * deviation); sigma2 (the functions' spreads) is scratch afterwards.
 */
static int lone_noise(double *noise, const double *canon, size_t width, size_t lone,
		      double *sigma2, size_t nk, double *d2, double *fixed)
{
	double lam, df;
	int rc;

	for (size_t k = 0; k < nk; k++) {
		const double *row = canon + k * width;
		double extra = fmax(0, sigma2[k]);
		d2[k] = row[lone];
		fixed[k] = 0;
		/* The capture's whole variance scales; the baseline mean's does not. */
		if (row[lone + 3] >= 2) {
			fixed[k] = (row[lone + 2] + extra) / row[lone + 3];
			sigma2[k] = row[lone + 1] + extra;
		} else {
			sigma2[k] = 0; /* no deviation: left out */
		}
	}
	if ((rc = stats_lone_noise(&lam, &df, d2, fixed, sigma2, nk)) < 0)
		return rc;
	if (isfinite(lam)) {
		noise[NOISE_CUR] = fmax(1, lam);
		noise[NOISE_LONE_DF] = df;
	}
	return 0;
}

/*
 * The service's release noise factors (stats_release_noise) over the
 * tested rows: a release whose captures were noisy in every function
 * should not make a quiet new release look noisy, nor the reverse. The
 * judged captures are one column, whose factor is at least the quietest
 * baseline release's. Factors no function informs stay NAN (pooled_fit
 * then uses a typical release's variance). td->m and td->gb
 * are read (td->base is not set yet); sb and sc are scratch series.
 */
static int release_noise(analysis_target_data *td, const capture_set *base,
			 const capture_set *cur, const size_t *rows, size_t nrows, series *sb,
			 series *sc)
{
	size_t ngb = 0, nr, nk = 0, width, lone;
	double *s2 = NULL, *vb = NULL, *df = NULL, *y = NULL, *canon = NULL, *sigma2 = NULL;
	double *d2 = NULL, *fixed = NULL, typical = 1;
	int rc = 0;

	for (size_t r = 0; r < NOISE_N; r++)
		td->noise[r] = NAN;
	for (size_t i = 0; i < base->n; i++)
		if ((size_t)GROUP_OF(td->gb[i]) + 1 > ngb)
			ngb = (size_t)GROUP_OF(td->gb[i]) + 1;
	nr = ngb + 1;
	if (!nrows || !ngb)
		return 0;
	s2 = calloc(nrows * nr, sizeof(*s2));
	vb = calloc(nrows * nr, sizeof(*vb));
	df = calloc(nrows * nr, sizeof(*df));
	y = calloc((base->n + cur->n + 1) > nrows ? base->n + cur->n + 1 : nrows, sizeof(*y));
	lone = 1 + 3 * nr;
	width = lone + 4;
	canon = calloc(nrows * width, sizeof(*canon));
	sigma2 = calloc(nrows, sizeof(*sigma2));
	d2 = calloc(nrows, sizeof(*d2));
	fixed = calloc(nrows, sizeof(*fixed));
	if (!s2 || !vb || !df || !y || !canon || !sigma2 || !d2 || !fixed) {
		rc = STATS_ENOMEM;
		goto out;
	}
	if (cur->n == 1)
		typical = lone_ratio(td, base, cur, rows, nrows, sb, sc, y);
	for (size_t k = 0; k < nrows; k++) {
		double *row = canon + k * width;
		series_fill(sb, &td->m, rows[k], 0, base, td->gb, td->hb, td->db, td->wb, NULL);
		series_fill(sc, &td->m, rows[k], base->n, cur, td->gc, td->hc, td->dc, td->wc,
			    NULL);
		row[0] = (double)width;
		for (size_t r = 0; r < nr; r++) {
			const series *x = r < ngb ? sb : sc;
			size_t n = 0;
			double v = 0;
			for (size_t i = 0; i < x->n; i++)
				if (r == ngb || (size_t)GROUP_OF(x->group[i]) == r) {
					y[n++] = x->vst[i];
					v += x->v[i];
				}
			if (n < 2)
				continue;
			row[1 + r] = sample_var(y, n);
			row[1 + nr + r] = v / (double)n;
			row[1 + 2 * nr + r] = (double)(n - 1);
		}
		if (cur->n == 1 && sc->n == 1 && sb->n >= 2) {
			/* The lone capture's deviation from the baseline's mean, undiluted. */
			double dev = stats_vst(fmin(1, sc->share[0] / typical)) -
				     mean_of(sb->vst, sb->n);
			row[lone] = dev * dev;
			row[lone + 1] = sc->v[0];
			row[lone + 2] = mean_of(sb->v, sb->n);
			row[lone + 3] = (double)sb->n;
		}
	}
	/*
	 * The sums over functions in a canonical order, by their values: the
	 * rows' order is the functions' ids, which depend on which process
	 * stored a new name first, and a worker's night must give the single
	 * process's numbers to the last bit.
	 */
	qsort(canon, nrows, width * sizeof(double), row_cmp);
	for (nk = 0; nk < nrows; nk++)
		for (size_t r = 0; r < nr; r++) {
			const double *row = canon + nk * width;
			s2[nk * nr + r] = row[1 + r];
			vb[nk * nr + r] = row[1 + nr + r];
			df[nk * nr + r] = row[1 + 2 * nr + r];
		}
	{
		double lam[NOISE_N], quietest = INFINITY;
		if ((rc = stats_release_noise(lam, sigma2, s2, vb, df, nk, nr, ngb)) < 0)
			goto out;
		for (size_t r = 0; r < ngb; r++) {
			td->noise[r] = lam[r];
			if (lam[r] > 0)
				quietest = fmin(quietest, lam[r]);
		}
		/*
		 * Never quieter than the quietest baseline release: captures
		 * taken close together (one host, one hour) agree with each
		 * other more than the release's traffic will, and a spread that
		 * small would read their shared offset as a change.
		 */
		td->noise[NOISE_CUR] = isfinite(quietest) && lam[ngb] < quietest ? quietest
										: lam[ngb];
		if (cur->n == 1 && !isfinite(lam[ngb]) &&
		    (rc = lone_noise(td->noise, canon, width, lone, sigma2, nk, d2, fixed)) < 0)
			goto out;
	}
out:
	free(s2);
	free(vb);
	free(df);
	free(y);
	free(canon);
	free(sigma2);
	free(d2);
	free(fixed);
	return rc;
}

/*
 * Number the hosts of the baseline's and the judged captures alike, in
 * order of first appearance; a capture whose host is unknown gets -1
 * (taken as independent of every other, and never left out as a host).
 * *hb and *hc are new arrays of base->n and cur->n.
 */
static int host_ids(int **hb, int **hc, const capture_set *base, const capture_set *cur)
{
	size_t n = base->n + cur->n;
	int *h = calloc(n ? n : 1, sizeof(*h)), next = 0;

	*hb = *hc = NULL;
	if (!h)
		return PR_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const char *x = i < base->n ? base->caps[i].host : cur->caps[i - base->n].host;
		size_t j = i;
		for (j = 0; x && j < i; j++) {
			const char *y = j < base->n ? base->caps[j].host
						    : cur->caps[j - base->n].host;
			if (y && strcmp(x, y) == 0)
				break;
		}
		h[i] = !x ? -1 : j < i ? h[j] : next++;
	}
	*hb = h;
	if (!(*hc = calloc(cur->n ? cur->n : 1, sizeof(**hc)))) {
		free(h);
		*hb = NULL;
		return PR_ENOMEM;
	}
	memcpy(*hc, h + base->n, cur->n * sizeof(**hc));
	return 0;
}

/*
 * Number the calendar days (on the service's clock, utc_offset_h east of
 * UTC) of the baseline's and the judged captures alike, in order of first
 * appearance. *db and *dc are new arrays of base->n and cur->n.
 */
static int day_ids(int **db, int **dc, const capture_set *base, const capture_set *cur,
		   double utc_offset_h)
{
	size_t n = base->n + cur->n, nd = 0;
	int64_t shift = (int64_t)llround(utc_offset_h * 3600), *seen;
	int *d = calloc(n ? n : 1, sizeof(*d));

	*db = *dc = NULL;
	seen = calloc(n ? n : 1, sizeof(*seen));
	if (!d || !seen || !(*dc = calloc(cur->n ? cur->n : 1, sizeof(**dc)))) {
		free(d);
		free(seen);
		return PR_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		int64_t us = i < base->n ? base->caps[i].captured_at_us
					 : cur->caps[i - base->n].captured_at_us;
		int64_t sec = us / 1000000 + shift, day = sec / 86400 - (sec % 86400 < 0);
		size_t j = 0;
		while (j < nd && seen[j] != day)
			j++;
		if (j == nd)
			seen[nd++] = day;
		d[i] = (int)j;
	}
	free(seen);
	*db = d;
	memcpy(*dc, d + base->n, cur->n * sizeof(**dc));
	return 0;
}

/*
 * Dense numbers of the baseline captures' cells: (release, part of the
 * week, day), (release, part of the week, host) and (release, day,
 * host); -1 where the host is unknown. Pairs of two days are only
 * counted within one part of the week: a weekend's mix comes back every
 * weekend, and is the week's to take out (week_adjust), not noise.
 */
typedef struct day_cells {
	int *gw, *gd, *gwh, *gdh;
	size_t ngw, ngd, ngwh, ngdh;
} day_cells;

/* The number of the first capture before i with the same key, else a new one. */
static int cell_of(const int *key[3], size_t nkeys, const int *ids, size_t i, size_t *next)
{
	for (size_t j = 0; j < i; j++) {
		size_t k = 0;
		while (k < nkeys && key[k][j] == key[k][i])
			k++;
		if (k == nkeys && ids[j] >= 0)
			return ids[j];
	}
	return (int)(*next)++;
}

static int day_cells_of(day_cells *c, const analysis_target_data *td, size_t nb, bool weekly)
{
	const int *gw[3] = {td->gb, td->wb, NULL}, *gd[3] = {td->gb, td->db, NULL};
	const int *gwh[3] = {td->gb, td->wb, td->hb}, *gdh[3] = {td->gb, td->db, td->hb};
	size_t nw = weekly && td->wb ? 2 : 1;

	if (nw == 1)
		gwh[1] = td->hb;

	memset(c, 0, sizeof(*c));
	if (!(c->gw = calloc(4 * (nb ? nb : 1), sizeof(int))))
		return STATS_ENOMEM;
	c->gd = c->gw + nb, c->gwh = c->gd + nb, c->gdh = c->gwh + nb;
	for (size_t i = 0; i < nb; i++) {
		c->gw[i] = cell_of(gw, nw, c->gw, i, &c->ngw);
		c->gd[i] = cell_of(gd, 2, c->gd, i, &c->ngd);
		c->gwh[i] = td->hb[i] < 0 ? -1 : cell_of(gwh, nw + 1, c->gwh, i, &c->ngwh);
		c->gdh[i] = td->hb[i] < 0 ? -1 : cell_of(gdh, 3, c->gdh, i, &c->ngdh);
	}
	return 0;
}

/* Pair sums of one function within one release, by whether the pair shares a host. */
typedef struct pair_sums {
	double same, diff;   /* sums of (y_i - y_j)^2 / 2 - (v_i + v_j) / 2, over lambda */
	double nsame, ndiff; /* numbers of such pairs */
} pair_sums;

/*
 * Add a group of m values whose sums are sy, syy and sv: its pairs'
 * half squared differences less their sampling part, over lam.
 */
static double pairs_of(double m, double sy, double syy, double sv, double lam)
{
	return m < 2 ? 0 : ((m * syy - sy * sy) / 2 - (m - 1) * sv / 2) / lam;
}

/*
 * The service's host share rho: how much of a capture's variance beyond
 * sampling is an offset its host keeps. Within each baseline release
 * (so that release shifts do not count), pairs of captures of one host
 * differ by e (the capture's own noise), pairs of two hosts by e plus
 * twice the host variance's half; per function d (two hosts) and s
 * (one host) estimate e + s2h and e, and rho is fitted through the
 * origin over the service's functions, (d - s) = rho d, weighing each
 * by 1 / (d + vbar)^2 so that functions made of sampling noise count
 * little. Each release's pairs are divided by its noise factor. 0 when
 * no function has pairs of both kinds (every capture a host of its own,
 * as when each capture runs in a new pod). At most 0.95.
 */
static int host_share(analysis_target_data *td, const capture_set *base, const size_t *rows,
		      size_t nrows, series *sb)
{
	size_t ng = 0, nh = 0, nk = 0;
	double *cell = NULL, *canon = NULL, num = 0, den = 0;
	int rc = 0;

	td->host_rho = 0;
	for (size_t i = 0; i < base->n; i++) {
		ng = (size_t)GROUP_OF(td->gb[i]) + 1 > ng ? (size_t)GROUP_OF(td->gb[i]) + 1 : ng;
		if (td->hb[i] >= 0 && (size_t)td->hb[i] + 1 > nh)
			nh = (size_t)td->hb[i] + 1;
	}
	if (!nrows || !ng || !nh)
		return 0;
	/* Per (release, host) cell and per release: count, sum y, sum y^2, sum v. */
	cell = calloc((ng * nh + ng) * 4, sizeof(*cell));
	canon = calloc(nrows * 3, sizeof(*canon));
	if (!cell || !canon) {
		rc = STATS_ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < nrows; k++) {
		double *rel = cell + ng * nh * 4, sv = 0, d, sm;
		pair_sums ps = {0, 0, 0, 0};
		series_fill(sb, &td->m, rows[k], 0, base, td->gb, td->hb, td->db, td->wb, NULL);
		memset(cell, 0, (ng * nh + ng) * 4 * sizeof(*cell));
		for (size_t i = 0; i < sb->n; i++) {
			size_t g = (size_t)GROUP_OF(sb->group[i]);
			double *r = rel + g * 4, y = sb->vst[i];
			r[0] += 1, r[1] += y, r[2] += y * y, r[3] += sb->v[i];
			/* An unknown host makes no pair of "one host" with anyone. */
			if (sb->host[i] >= 0) {
				double *c = cell + (g * nh + (size_t)sb->host[i]) * 4;
				c[0] += 1, c[1] += y, c[2] += y * y, c[3] += sb->v[i];
			}
			sv += sb->v[i];
		}
		for (size_t g = 0; g < ng; g++) {
			const double *r = rel + g * 4;
			double lam = noise_factor(td->noise, g);
			double all = pairs_of(r[0], r[1], r[2], r[3], lam), same = 0, nsame = 0;
			for (size_t h = 0; h < nh; h++) {
				const double *c = cell + (g * nh + h) * 4;
				same += pairs_of(c[0], c[1], c[2], c[3], lam);
				nsame += c[0] * (c[0] - 1) / 2;
			}
			ps.same += same;
			ps.nsame += nsame;
			ps.diff += all - same;
			ps.ndiff += r[0] * (r[0] - 1) / 2 - nsame;
		}
		if (!(ps.nsame > 0) || !(ps.ndiff > 0) || !sb->n)
			continue;
		d = ps.diff / ps.ndiff;
		sm = ps.same / ps.nsame;
		if (!(d > 0))
			continue;
		{
			double vbar = sv / (double)sb->n, w = 1 / ((d + vbar) * (d + vbar));
			double *row = canon + nk++ * 3;
			row[0] = 3;
			row[1] = w * (d - sm) * d;
			row[2] = w * d * d;
		}
	}
	/* Summed in value order: the same to the last bit whatever the functions' ids. */
	qsort(canon, nk, 3 * sizeof(double), row_cmp);
	for (size_t k = 0; k < nk; k++) {
		num += canon[k * 3 + 1];
		den += canon[k * 3 + 2];
	}
	if (den > 0 && num > 0)
		td->host_rho = fmin(0.95, num / den);
out:
	free(cell);
	free(canon);
	return rc;
}

/*
 * The service's day share: how much of a capture's variance beyond
 * sampling is its day's, the traffic mix every capture of that day sees
 * (a sale, a batch job's day). Within each baseline release, pairs of
 * captures of two hosts taken on one day differ by e + s2h, and on two
 * days by e + s2h + s2d: per function these estimate s and d, and the
 * share is fitted through the origin as in host_share. It is taken when
 * the baseline shows it, its z (the standard error from the functions'
 * own scatter about the fit) at least DAY_Z. A share missed costs false
 * pages, one taken by chance costs power: at z 3, make eval's --daily 0.1
 * fleets raised 35 and 55 false findings in 2,925 null service-nights
 * (seeds 1 and 2), at 2, 21 and 30, at 1, 9 and 19; at 1.5 and below, a
 * 1.4x slowdown on a weekend (test_lifecycle) went unfound, the chance
 * share of its service taken as a day's.
 */
#define DAY_Z 2.0

static void cell_add(double *c, double y, double v)
{
	c[0] += 1, c[1] += y, c[2] += y * y, c[3] += v;
}

static int day_share(analysis_target_data *td, const capture_set *base, const size_t *rows,
		     size_t nrows, series *sb, bool weekly)
{
	day_cells dc;
	size_t nk = 0, ncell, off[4];
	double *sum = NULL, *canon = NULL, *lam = NULL, num = 0, den = 0, var = 0, rho;
	int rc;

	td->day_rho = 0;
	if (!nrows || !base->n || !td->db)
		return 0;
	if ((rc = day_cells_of(&dc, td, base->n, weekly)) < 0)
		return rc;
	off[0] = 0, off[1] = dc.ngw, off[2] = off[1] + dc.ngd, off[3] = off[2] + dc.ngwh;
	ncell = off[3] + dc.ngdh;
	sum = calloc(ncell * 4, sizeof(*sum));
	lam = calloc(ncell, sizeof(*lam));
	canon = calloc(nrows * 3, sizeof(*canon));
	if (!sum || !lam || !canon) {
		rc = STATS_ENOMEM;
		goto out;
	}
	/* Each cell lies within one release: its pairs are over that release's noise factor. */
	for (size_t i = 0; i < base->n; i++) {
		size_t g = (size_t)GROUP_OF(td->gb[i]);
		double l = noise_factor(td->noise, g);
		lam[dc.gw[i]] = lam[off[1] + (size_t)dc.gd[i]] = l;
		if (dc.gwh[i] >= 0)
			lam[off[2] + (size_t)dc.gwh[i]] = lam[off[3] + (size_t)dc.gdh[i]] = l;
	}
	for (size_t k = 0; k < nrows; k++) {
		double p[4] = {0, 0, 0, 0}, np[4] = {0, 0, 0, 0}, sv = 0, nv = 0;
		double d, sm, nsd, ndd, w;
		series_fill(sb, &td->m, rows[k], 0, base, td->gb, td->hb, td->db, td->wb, NULL);
		memset(sum, 0, ncell * 4 * sizeof(*sum));
		for (size_t i = 0; i < sb->n; i++) {
			size_t at = (size_t)sb->at[i];
			double y = sb->vst[i], v = sb->v[i];
			/* Near a weekend's edge a capture may be of either part: no pairs. */
			if (weekly && td->wb && td->wb[at] == WEEK_EDGE)
				continue;
			cell_add(sum + 4 * (size_t)dc.gw[at], y, v);
			cell_add(sum + 4 * (off[1] + (size_t)dc.gd[at]), y, v);
			if (dc.gwh[at] >= 0) {
				cell_add(sum + 4 * (off[2] + (size_t)dc.gwh[at]), y, v);
				cell_add(sum + 4 * (off[3] + (size_t)dc.gdh[at]), y, v);
			}
			sv += v, nv += 1;
		}
		for (size_t c = 0; c < ncell; c++) {
			const double *x = sum + 4 * c;
			size_t part = c < off[1] ? 0 : c < off[2] ? 1 : c < off[3] ? 2 : 3;
			if (x[0] < 2)
				continue;
			p[part] += pairs_of(x[0], x[1], x[2], x[3], lam[c] > 0 ? lam[c] : 1);
			np[part] += x[0] * (x[0] - 1) / 2;
		}
		/* One day, two hosts (or unknown ones); two days, two hosts. */
		nsd = np[1] - np[3];
		ndd = np[0] - np[1] - np[2] + np[3];
		if (!(nsd > 0) || !(ndd > 0) || !(nv > 0))
			continue;
		d = (p[0] - p[1] - p[2] + p[3]) / ndd;
		sm = (p[1] - p[3]) / nsd;
		if (!(d > 0))
			continue;
		w = 1 / ((d + sv / nv) * (d + sv / nv));
		canon[nk * 3] = 3;
		canon[nk * 3 + 1] = w * (d - sm) * d;
		canon[nk * 3 + 2] = w * d * d;
		nk++;
	}
	/* Summed in value order: the same to the last bit whatever the functions' ids. */
	qsort(canon, nk, 3 * sizeof(double), row_cmp);
	for (size_t k = 0; k < nk; k++) {
		num += canon[k * 3 + 1];
		den += canon[k * 3 + 2];
	}
	if (!(den > 0) || !(num > 0) || nk < 3)
		goto out;
	rho = num / den;
	for (size_t k = 0; k < nk; k++) {
		double r = canon[k * 3 + 1] - rho * canon[k * 3 + 2];
		var += r * r;
	}
	var /= den * den;
	/* Shares of one variance: the host's and the day's together stay below 1. */
	if (var > 0 && rho / sqrt(var) >= DAY_Z)
		td->day_rho = fmax(0, fmin(rho, 0.95 - td->host_rho));
out:
	free(dc.gw);
	free(sum);
	free(lam);
	free(canon);
	return rc;
}

/*
 * The percentage points a rise from share pb needs at its conservative
 * end to be `gate` or above: the least over the severities from the gate
 * up (a critical rise can need fewer points than a high one).
 */
static double gate_pp(stats_severity gate, double pb, const stats_severity_thresholds *t)
{
	double crit = fmin(t->critical_pp, fmax(t->critical_rel_pp, t->critical_rel * 100 * pb));

	switch (gate) {
	case STATS_SEV_CRITICAL: return crit;
	case STATS_SEV_HIGH: return fmin(t->high_pp, crit);
	case STATS_SEV_MEDIUM: return fmin(t->medium_pp, fmin(t->high_pp, crit));
	default: return 0;
	}
}

/* What a function's rise of its share from pb by dv (stats_vst scale) costs the service. */
static double rise_cost(double vb, double dv, double *to)
{
	*to = vb + dv < PI / 2 ? stats_vst_inv(vb + dv) : 1;
	return *to < 1 ? (*to - stats_vst_inv(vb)) / (1 - *to) : INFINITY;
}

/* The share test f's detectable rise (analysis_blind): into b, false when it has none. */
static bool blind_of(analysis_blind *b, const finding *f, const analysis *a, stats_severity gate)
{
	const analysis_opts *o = &a->opts;
	double q = o->severity.q_max > 0 ? fmin(o->severity.q_max, o->fdr) : o->fdr;
	double share =
		stats_seq_fraction_from(first_look_of(f), f->look, o->max_looks, o->spend_rho);
	double se = f->vst_se, df = f->vst_df, pb, sev, t_cut, t_ci, t_pow, d, d0, to0;

	if (!(se > 0) || !isfinite(se) || !(df >= 1) || !(share > 0) || !a->ntests || f->closed)
		return false;
	pb = stats_vst_inv(f->vst_base);
	sev = stats_vst_delta(pb, gate_pp(gate, pb, &o->severity) / 100);
	t_cut = stats_t_upper(q * share / (double)a->ntests, df);
	t_ci = stats_t_upper((1 - o->ci_level) / 2, df);
	t_pow = stats_t_upper(0.2, df);
	if (!isfinite(pb) || !isfinite(sev) || !isfinite(t_cut) || !isfinite(t_ci) ||
	    !isfinite(t_pow) || !isfinite(f->vst_margin) || !isfinite(f->vst_delta0))
		return false;
	/* What the margin and severity leave out whatever the captures: by design. */
	d0 = fmax(fmax(f->vst_delta0, f->vst_margin), sev);
	/* Significant at the cut-off, beyond the margin, severe enough, four times in five. */
	d = fmax(fmax(f->vst_delta0 + t_cut * se, f->vst_margin), sev + t_ci * se) + t_pow * se;
	b->f = f;
	b->from = pb;
	b->unseen = rise_cost(f->vst_base, d, &b->to);
	b->by_design = rise_cost(f->vst_base, d0, &to0);
	b->excess = isinf(b->by_design) ? 0 : b->unseen - b->by_design;
	return true;
}

static int blind_cmp(const void *x, const void *y)
{
	double u = ((const analysis_blind *)x)->excess, v = ((const analysis_blind *)y)->excess;

	return (u < v) - (u > v);
}

int analysis_blind_spots(analysis_blind **out, size_t *n, const analysis *a, stats_severity gate)
{
	analysis_blind *worst = NULL, b;
	size_t count = 0;

	*out = NULL;
	*n = 0;
	if (a->ntargets && !(worst = calloc(a->ntargets, sizeof(*worst))))
		return PR_ENOMEM;
	for (size_t i = 0; i < a->ntests; i++) {
		const finding *f = &a->tests[i];
		if (f->target >= a->ntargets || !f->kind ||
		    strcmp(f->kind, FINDING_KIND_SHARE) != 0 || !blind_of(&b, f, a, gate))
			continue;
		if (!worst[f->target].f || b.excess > worst[f->target].excess)
			worst[f->target] = b;
	}
	for (size_t t = 0; t < a->ntargets; t++)
		if (worst[t].f)
			worst[count++] = worst[t];
	if (!count) {
		free(worst);
		return 0;
	}
	qsort(worst, count, sizeof(*worst), blind_cmp);
	*out = worst;
	*n = count;
	return 0;
}

static int grow_tests(analysis *a, size_t extra)
{
	finding *t;
	size_t cap = a->cap ? a->cap : 256;

	while (cap < a->ntests + extra)
		cap *= 2;
	if (cap == a->cap)
		return 0;
	if (!(t = realloc(a->tests, cap * sizeof(*t))))
		return PR_ENOMEM;
	a->tests = t;
	a->cap = cap;
	return 0;
}

static int keep_target(analysis *a, analysis_target_data *td)
{
	if (a->ntargets == a->targets_cap) {
		size_t cap = a->targets_cap ? 2 * a->targets_cap : 64;
		analysis_target_data *n = realloc(a->targets, cap * sizeof(*n));
		if (!n)
			return PR_ENOMEM;
		a->targets = n;
		a->targets_cap = cap;
	}
	a->targets[a->ntargets++] = *td;
	memset(td, 0, sizeof(*td));
	return 0;
}

/* Fill what every test of a target carries; false when out of memory. */
static bool describe_test(finding *f, const analysis_target *t, const sides *s,
			  const char *releases, const char *capids, int64_t baseline_id,
			  size_t look, size_t first_look, size_t target)
{
	f->service_id = t->service_id;
	f->baseline_id = baseline_id;
	f->look = look;
	f->first_look = first_look;
	f->target = target;
	f->service = strdup(t->service);
	f->type = strdup(t->type);
	f->current_release = strdup(t->release ? t->release : s->cur.caps[s->cur.n - 1].release);
	f->baseline_releases = strdup(releases);
	f->capture_ids = strdup(capids);
	return f->service && f->type && f->current_release && f->baseline_releases &&
	       f->capture_ids;
}

int analysis_add(analysis *a, db *d, const analysis_target *t, bool store, pr_error *err)
{
	return analysis_add_cohort(a, d, t, NULL, store, err);
}

struct analysis_input {
	sides s;
	func_matrix m;  /* loaded only when the target will be tested */
	bool has_m;
	/* With m: the rows to test (select_rows), their function ids, names and files. */
	size_t *rows, nrows, nfiltered;
	int64_t *ids;
	char **names, **files;
	double seconds; /* the load's time, counted as database time */
	int rc;
	pr_error err;
};

void analysis_input_free(analysis_input *in)
{
	if (!in)
		return;
	sides_release(&in->s);
	func_matrix_release(&in->m);
	free(in->rows);
	free(in->ids);
	func_names_free(in->names, in->files, in->nrows);
	free(in);
}

/*
 * Independent filtering: a function whose share stays under min_share
 * in every capture is too small to report, so it is not tested and
 * does not dilute the family (nor one that could never move by more
 * than the absolute margin). The filter looks at the shares only, not
 * at which way they moved, so it leaves the tests' p-values valid.
 * It needs nothing but the input, so the names of the rows it keeps are
 * read with the rest of the input, ahead of the analysis (jobs/analyze.c).
 */
static int select_rows(analysis_input *in, db *d, const analysis_opts *o)
{
	const func_matrix *m = &in->m;
	const sides *s = &in->s;
	size_t n = m->nfuncs ? m->nfuncs : 1;

	if (!(in->rows = calloc(n, sizeof(*in->rows))) || !(in->ids = calloc(n, sizeof(*in->ids))))
		return oom(&in->err);
	for (size_t r = 0; r < m->nfuncs; r++) {
		double top = 0;
		size_t known = 0;
		for (size_t i = 0; i < s->base.n; i++) {
			int64_t v = m->self[r * m->ncaps + i];
			known += v != FUNC_MATRIX_UNKNOWN;
			top = fmax(top, capture_share(&s->base.caps[i], v));
		}
		for (size_t i = 0; i < s->cur.n; i++)
			top = fmax(top, capture_share(&s->cur.caps[i],
						      m->self[r * m->ncaps + s->base.n + i]));
		/*
		 * Too few captures know it (summaries cut it off): its baseline
		 * is not measured, so it is not tested.
		 */
		if (top < o->min_share || top < o->abs_margin || known < o->min_baseline) {
			in->nfiltered++;
			continue;
		}
		in->rows[in->nrows] = r;
		in->ids[in->nrows] = m->func_ids[r];
		in->nrows++;
	}
	return func_names_load(&in->names, &in->files, d, in->ids, in->nrows, &in->err);
}

/*
 * Names of code without symbols. Captures stored before pprof's frames
 * without line information were named by their object ("[libc.so.6]")
 * name them by object and offset ("libc.so.6+0x9a3f0", the file the
 * object's path): one name per instruction address, moved by every
 * rebuild. Such a name's object is what the frame is called now, its
 * base name in brackets, put in *base. 1 for an object's address, 2 for
 * a bracketed name ("[libc.so.6]", "[unknown]", "[kernel.kallsyms]"), 3
 * for a bare address ("0x4012af"), 0 for any other.
 */
static int address_form(const char *name, const char *file, const char **base, size_t *base_len)
{
	size_t n = strlen(name), i;
	const char *plus = strstr(name, "+0x"), *slash;

	if (n >= 3 && name[0] == '[' && name[n - 1] == ']') {
		*base = name, *base_len = n;
		return 2;
	}
	/*
	 * A bare address: pprof's name before for a location in no mapped
	 * object, and what tools that do not symbolize write (folded stacks of
	 * raw addresses). Nameless, but not taken for a renamed object: it
	 * names no object to be renamed to, and is judged as it always was.
	 */
	if (n >= 3 && name[0] == '0' && (name[1] == 'x' || name[1] == 'X')) {
		for (i = 2; i < n && isxdigit((unsigned char)name[i]); i++)
			;
		*base = "[unknown]", *base_len = 9;
		return i == n ? 3 : 0;
	}
	if (!plus || plus == name || !file || !*file || !plus[3])
		return 0;
	for (i = (size_t)(plus - name) + 3; i < n && isxdigit((unsigned char)name[i]); i++)
		;
	slash = strrchr(file, '/');
	slash = slash ? slash + 1 : file;
	/* The object's own name, so "parse+0x1f" of perf text with its offset is not one. */
	if (i != n || strlen(slash) != (size_t)(plus - name) ||
	    memcmp(slash, name, (size_t)(plus - name)) != 0)
		return 0;
	*base = slash, *base_len = (size_t)(plus - name);
	return 1;
}

/*
 * A frame without a name: what profilers write for code they could not
 * symbolize (perf's "[unknown]" and "[libfoo.so]", "[kernel.kallsyms]",
 * an address as captures stored before named it).
 */
static bool unsymbolized(const char *name, const char *file)
{
	const char *base;
	size_t len;

	return address_form(name, file, &base, &len) != 0;
}

/* Row k's object key ("[burn]") into *key when it names code without symbols; its form. */
static int object_key(char **key, const char *name, const char *file)
{
	const char *base;
	size_t len;
	int form = address_form(name, file, &base, &len);
	bool br = form && base[0] == '[';
	buf b = BUF_INIT;

	*key = NULL;
	if (form == 0)
		return 0;
	if ((!br && buf_putc(&b, '[') < 0) || buf_put(&b, base, len) < 0 ||
	    (!br && buf_putc(&b, ']') < 0) || !(*key = buf_detach(&b, NULL))) {
		buf_release(&b);
		return PR_ENOMEM;
	}
	return form;
}

/* Whether (key, file) is among the n pairs of keys[] and kfiles[]. */
static bool pair_in(char *const *keys, char *const *kfiles, size_t n, const char *key,
		    const char *file)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(keys[i], key) == 0 && strcmp(kfiles[i], file ? file : "") == 0)
			return true;
	return false;
}

static void drop_merged(const int *kind, size_t *rows, int64_t *ids, char **names, char **files,
			char **was, int64_t *was_id, size_t *nrows);

/*
 * Go's asynchronous preemption. The runtime interrupts a goroutine that
 * has run for 10 ms of wall time with a signal, and the samples taken
 * while it saves its registers land in runtime.asyncPreempt, a leaf
 * under whatever function was interrupted. How many do depends on how
 * much CPU the process gets, not on its code: on a host starved by its
 * neighbours, an unchanged Go binary's asyncPreempt went from 12-14% of
 * the samples (0.6-0.8 CPU seconds a second) to 21-27% (0.3), a high
 * regression that failed the gate, and every other share fell with it.
 * So the frame is judged by no one: its samples leave each capture's
 * whole (total and sample count alike, before any share is taken), and
 * its row is not tested. Done at analysis rather than at ingest, so that
 * captures stored before and after read alike.
 */
#define PREEMPT_FRAME "runtime.asyncPreempt"

static int drop_preempt(const func_matrix *m, capture_set *base, capture_set *cur, size_t *rows,
			int64_t *ids, char **names, char **files, size_t *nrows)
{
	int *kind = NULL;

	/*
	 * Every row of that name: a function is a name in a file, and the
	 * frame's file is GOROOT's (another path after an upgrade, or
	 * preempt_arm64.s beside preempt_amd64.s on a mixed fleet).
	 */
	for (size_t k = 0; k < *nrows; k++) {
		if (!names[k] || strcmp(names[k], PREEMPT_FRAME) != 0)
			continue;
		if (!kind && !(kind = calloc(*nrows, sizeof(*kind))))
			return PR_ENOMEM;
		kind[k] = -1;
	}
	if (!kind)
		return 0;
	for (size_t i = 0; i < base->n + cur->n; i++) {
		capture_ref *c = i < base->n ? &base->caps[i] : &cur->caps[i - base->n];
		int64_t v = 0;
		for (size_t k = 0; k < *nrows; k++) {
			int64_t x = kind[k] ? m->self[rows[k] * m->ncaps + i] : 0;
			if (x != FUNC_MATRIX_UNKNOWN && x > 0)
				v += x;
		}
		if (v <= 0 || v >= c->total)
			continue;
		c->sample_count = (int64_t)llround((double)c->sample_count *
						   (double)(c->total - v) / (double)c->total);
		c->total -= v;
	}
	drop_merged(kind, rows, ids, names, files, NULL, NULL, nrows);
	free(kind);
	return 0;
}

/* Whether matrix row r has samples in one of the first nb (baseline) captures. */
static bool in_baseline(const func_matrix *m, size_t r, size_t nb)
{
	for (size_t i = 0; i < nb; i++) {
		int64_t v = m->self[r * m->ncaps + i];
		if (v != FUNC_MATRIX_UNKNOWN && v > 0)
			return true;
	}
	return false;
}

/*
 * Objects in the middle of their renaming (see address_form): captures
 * stored before name an object's code by address ("burn+0x10a0"),
 * captures stored since by the object ("[burn]"). A location in no
 * object was a bare address ("0x4012af") and is "[unknown]" now: bare
 * addresses in the baseline beside a tested "[unknown]" without a file
 * are the same renaming (bare addresses alone, as folded stacks of raw
 * addresses hold them, are judged as they always were). While a target's
 * window holds an object's address names, tested or not (most are too
 * small to test and were left out before names were read), the object
 * is not tested under either name: the addresses kept would sum to less
 * than the bracketed name, a rise from nothing that pages, and the
 * nameless share would move by as much, the mark of a build that lost
 * its symbols, which skips the service. The service's other functions
 * are judged as usual, and the object again once the window holds only
 * its new name. The names of the untested rows are read only for a
 * target that tests a bracketed name with a file, or "[unknown]".
 * *dropped counts the rows left out; the first nb columns of m are the
 * baseline's.
 */
static int drop_renaming_objects(const func_matrix *m, size_t nb, db *d, size_t *rows, int64_t *ids,
				 char **names, char **files, size_t *nrows, size_t *dropped,
				 pr_error *err)
{
	size_t n = *nrows, nk = 0, no = 0;
	char **key = calloc(n ? n : 1, sizeof(*key));
	int *form = calloc(n ? n : 1, sizeof(*form));
	char **keys = NULL, **kfiles = NULL, **onames = NULL, **ofiles = NULL;
	int64_t *oids = NULL;
	size_t *orow = NULL;
	bool *tested = NULL, bracketed = false, unknown = false, bare = false;
	int rc = 0;

	*dropped = 0;
	if (!key || !form || !(keys = calloc(m->nfuncs + 1, sizeof(*keys))) ||
	    !(kfiles = calloc(m->nfuncs + 1, sizeof(*kfiles)))) {
		rc = oom(err);
		goto out;
	}
	for (size_t k = 0; k < n; k++) {
		if (!names[k] || (form[k] = object_key(&key[k], names[k], files[k])) == 0)
			continue;
		if (form[k] < 0) {
			rc = oom(err);
			goto out;
		}
		/* Only an object's path can pair with its addresses ("[unknown]": bare ones). */
		bracketed |= form[k] == 2 && files[k] && *files[k];
		unknown |= form[k] == 2 && strcmp(key[k], "[unknown]") == 0 &&
			   (!files[k] || !*files[k]);
		bare |= form[k] == 3 && in_baseline(m, rows[k], nb);
		if (form[k] == 1 && !pair_in(keys, kfiles, nk, key[k], files[k])) {
			keys[nk] = key[k];
			kfiles[nk++] = files[k] ? files[k] : "";
		}
	}
	if ((bracketed || unknown) && m->nfuncs > n) {
		if (!(tested = calloc(m->nfuncs, sizeof(*tested))) ||
		    !(oids = calloc(m->nfuncs - n, sizeof(*oids))) ||
		    !(orow = calloc(m->nfuncs - n, sizeof(*orow)))) {
			rc = oom(err);
			goto out;
		}
		for (size_t k = 0; k < n; k++)
			tested[rows[k]] = true;
		for (size_t r = 0; r < m->nfuncs; r++)
			if (!tested[r]) {
				orow[no] = r;
				oids[no++] = m->func_ids[r];
			}
		if ((rc = func_names_load(&onames, &ofiles, d, oids, no, err)) < 0)
			goto out;
		for (size_t i = 0; i < no; i++) {
			char *k2 = NULL;
			int f = onames[i] ? object_key(&k2, onames[i], ofiles[i]) : 0;
			if (f < 0) {
				rc = oom(err);
				goto out;
			}
			bare |= f == 3 && in_baseline(m, orow[i], nb);
			if (f == 1 && !pair_in(keys, kfiles, nk, k2, ofiles[i])) {
				keys[nk] = k2;
				kfiles[nk++] = ofiles[i] ? ofiles[i] : "";
				k2 = NULL;
			}
			free(k2);
		}
	}
	if (unknown && bare && !pair_in(keys, kfiles, nk, "[unknown]", "")) {
		if (!(keys[nk] = strdup("[unknown]"))) {
			rc = oom(err);
			goto out;
		}
		kfiles[nk++] = "";
	}
	/* Marked first: kfiles[] borrows the files of the rows it drops. */
	for (size_t k = 0; k < n; k++)
		form[k] = form[k] && pair_in(keys, kfiles, nk, key[k], files[k]) ? -1 : 0;
	for (size_t k = 0; k < n; k++)
		*dropped += form[k] == -1;
	drop_merged(form, rows, ids, names, files, NULL, NULL, nrows);
out:
	/* keys[] holds key[] entries and keys of untested rows; kfiles[] only borrows. */
	for (size_t i = 0; keys && i < nk; i++) {
		bool own = true;
		for (size_t k = 0; key && k < n && own; k++)
			own = keys[i] != key[k];
		if (own)
			free(keys[i]);
	}
	for (size_t k = 0; key && k < n; k++)
		free(key[k]);
	free(key);
	free(form);
	free(keys);
	free(kfiles);
	free(tested);
	free(oids);
	free(orow);
	if (onames)
		func_names_free(onames, ofiles, no);
	return rc;
}

static int gone_or_new(const func_matrix *m, size_t row, size_t nb, size_t nc);

/*
 * The mean share, over the captures of cs from column col0, of the rows
 * that are nameless (or named, !nameless) and gone (kind 1) or new (kind
 * 2) in the release: nb baseline and nc judged columns.
 */
static double moved_share(const func_matrix *m, const size_t *rows, char *const *names,
			  char *const *files, size_t nrows, const capture_set *cs, size_t col0,
			  size_t nb, size_t nc, bool nameless, int kind)
{
	double sum = 0;

	for (size_t k = 0; k < nrows; k++) {
		if (!names[k] || unsymbolized(names[k], files[k]) != nameless ||
		    gone_or_new(m, rows[k], nb, nc) != kind)
			continue;
		for (size_t i = 0; i < cs->n; i++) {
			int64_t v = m->self[rows[k] * m->ncaps + col0 + i];
			if (v != FUNC_MATRIX_UNKNOWN)
				sum += capture_share(&cs->caps[i], v);
		}
	}
	return cs->n ? sum / (double)cs->n : 0;
}

/* The share of capture i of cs (column col0 + i) in unsymbolized frames. */
static double capture_nameless(const func_matrix *m, const size_t *rows, char *const *names,
			       char *const *files, size_t nrows, const capture_set *cs, size_t col0,
			       size_t i)
{
	double sum = 0;

	for (size_t k = 0; k < nrows; k++) {
		int64_t v = m->self[rows[k] * m->ncaps + col0 + i];
		if (names[k] && v != FUNC_MATRIX_UNKNOWN && unsymbolized(names[k], files[k]))
			sum += capture_share(&cs->caps[i], v);
	}
	return sum;
}

/* The mean share of the samples in unsymbolized frames over the captures of cs from col0. */
static double unsymbolized_share(const func_matrix *m, const size_t *rows, char *const *names,
				 char *const *files, size_t nrows, const capture_set *cs,
				 size_t col0)
{
	double sum = 0;

	for (size_t i = 0; i < cs->n; i++)
		sum += capture_nameless(m, rows, names, files, nrows, cs, col0, i);
	return cs->n ? sum / (double)cs->n : 0;
}

/*
 * Renamed functions. A release that renames a function (a refactor, or a
 * Go closure or Java lambda given another number) shows the old name in
 * no current capture and the new one in no baseline capture, at the same
 * cost: tested apart, a regression from nothing that
 * pages, and an improvement to nothing. So does one moved to another
 * file. A gone and a new function of one name, or of one container (the
 * name up to its last '.', ':', '/' or '$', the same file where both
 * have one), each the other's only such partner in the target,
 * are taken for one function: its baseline is the old name's values, its
 * current values the new name's, and it is tested once, under the new
 * name. So are a gone name and a new one that today's rules of stable
 * names make it (stable_is). A function that only appears, or only
 * goes, is tested as before.
 */

/* The length of a name before a " (file)" it ends with (py-spy's form). */
static size_t func_part(const char *s, size_t n)
{
	if (n < 4 || s[n - 1] != ')')
		return n;
	for (size_t i = n - 2; i > 0; i--)
		if (s[i] == '(' && s[i - 1] == ' ')
			return i - 1;
	return n;
}

/* How many of n captures from column col0 know the function, and have it. */
static void presence(size_t *known, size_t *has, const func_matrix *m, size_t row, size_t col0,
		     size_t n)
{
	*known = *has = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t v = m->self[row * m->ncaps + col0 + i];
		*known += v != FUNC_MATRIX_UNKNOWN;
		*has += v != FUNC_MATRIX_UNKNOWN && v > 0;
	}
}

/*
 * Files a release moved. A release built or deployed from another folder
 * (a CI job's own checkout, a Go binary built without -trimpath,
 * Capistrano's releases/<time>/) names every file anew: each function is
 * gone from its old file and new in its new one. Where names repeat
 * across files (V8's "(anonymous)", Python's "<lambda>"), the same name
 * in another file then had several partners and none was paired: the
 * same code was a regression from nothing. A file that only the baseline
 * has and one that only the release has are one file moved when they
 * end alike (the same base name, then as many folders as match) and
 * each is the other's best such match, alone. A move is taken for a
 * folder's (a deploy's, a build's) when it keeps a folder as well as the
 * base name, or when another file moved from the same folder to the same
 * folder: only then are renames within the moved files paired too. A
 * lone index.js that went from routes/ to handlers/, or from lib/ to
 * mail/ in a release that moved its whole folder, pairs only the
 * functions that kept their names.
 */

/* What merge_renamed knows of each row's name and file, worked out once. */
typedef struct name_key {
	size_t len, pa, ca;    /* the name's length, before a " (file)", its container's */
	size_t sa;             /* where its own name ends: a C++ parameter list, or pa */
	uint64_t hname, hcont; /* hashes of its first pa and ca bytes */
	uint64_t hshort;       /* hash of its own name (ca to pa), the first letter in lower case */
	bool own_ok;           /* that own name may be paired across containers (own_name_ok) */
	size_t own_count;      /* rows of the target with that own name, own_ok, this one too */
	size_t name_count;     /* rows of the target with this name (files aside), this one too */
	char *stable;          /* symname_stable of the name when that differs, or NULL */
	size_t file;           /* its file's index (SIZE_MAX: none) */
	size_t place;          /* the same, or the index of the file it moved from */
	bool strong;           /* place is a folder's move (see above) */
	int side;              /* its file is in: 1 the baseline only, 2 the release only, 3 both */
} name_key;

static uint64_t fnv(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

/*
 * name_key's name parts of `name`; 0 or PR_ENOMEM (stable's copy). The
 * stable form is today's rules' (pipeline/symname.c): names are made
 * stable at ingest, and a rule added later leaves the names stored before
 * it as they were. After an upgrade, a baseline's "parse_header.isra.0"
 * or "main.Sum[go.shape.int_0]" went, and the current "parse_header" or
 * "main.Sum[...]" came, from nothing, a critical regression of every such
 * function at once: a name whose stable form is the other's is a pair.
 */
static bool family_key(buf *key, const char *name, size_t n);

/*
 * Whether the own name s[0..n) (after its container) says which code it
 * is, for a pairing across containers: a name such as an identifier of
 * four bytes or more ("flushPlan", "encode_row"), and no name a
 * compiler numbered anywhere in `name`'s first pa bytes ("handle.func2",
 * "Outer$1.apply": family_key). Not a C++ parameter list cut at its last
 * "::" ("get(std::string const&)" has own name "string const&)"), a
 * template argument, "<lambda>" or "{closure#0}", nor a name every type
 * or package has ("init", "String", "toString", "__init__").
 * 0 with *ok set, or PR_ENOMEM.
 */
/*
 * Whether a compiler numbered anything in name's first pa bytes
 * (family_key): 1, 0, or -1 out of memory.
 */
static int numbered_in(const char *name, size_t pa)
{
	buf key = BUF_INIT;
	int numbered;

	/* family_key writes at most pa bytes: with them reserved it cannot fail. */
	if (buf_reserve(&key, pa + 1) < 0)
		return -1;
	numbered = family_key(&key, name, pa);
	buf_release(&key);
	return numbered;
}

static int own_name_ok(bool *ok, const char *name, size_t pa, const char *s, size_t n)
{
	static const char *const generic[] = {
		"init",        "main",          "string",   "error",   "close",     "read",
		"write",       "call",          "apply",    "invoke",  "handle",    "process",
		"execute",     "tostring",      "hashcode", "equals",  "compareto", "accept",
		"clone",       "servehttp",     "next",     "less",    "swap",      "lock",
		"unlock",      "start",         "stop",     "reset",   "flush",     "open",
		"create",      "delete",        "update",   "format",  "hash",      "compare",
		"marshaljson", "unmarshaljson", "finalize", "dispose", "destroy",   "value"};
	int numbered;

	*ok = false;
	if (n < 4 || !(isalpha((unsigned char)s[0]) || s[0] == '_') || (s[0] == '_' && s[1] == '_'))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return 0;
	for (size_t i = 0; i < sizeof(generic) / sizeof(generic[0]); i++)
		if (strlen(generic[i]) == n && strncasecmp(generic[i], s, n) == 0)
			return 0;
	if ((numbered = numbered_in(name, pa)) < 0)
		return PR_ENOMEM;
	*ok = !numbered;
	return 0;
}

static int name_key_of(name_key *k, const char *name)
{
	char tmp[512];
	size_t n;
	int rc;

	k->len = strlen(name);
	k->pa = k->sa = func_part(name, k->len);
	/*
	 * A C++ name keeps its parameters ("QuoteEngine::loadQuote(std::string
	 * const&)"): the container and the own name end before them, or the
	 * container was cut at the "::" inside them and no rename of such a
	 * method was ever paired (a critical regression from nothing each).
	 */
	if (k->pa > 1 && name[k->pa - 1] == ')') {
		size_t depth = 0, i = k->pa;
		while (i-- > 0) {
			depth += name[i] == ')';
			depth -= name[i] == '(';
			if (depth == 0)
				break;
		}
		if (i < k->pa && i > 0 && depth == 0)
			k->sa = i;
	}
	k->ca = k->sa;
	while (k->ca > 0 && !strchr(".:/$", name[k->ca - 1]))
		k->ca--;
	k->hname = fnv(name, k->pa);
	k->hcont = fnv(name, k->ca);
	k->hshort = k->sa > k->ca ? fnv(name + k->ca + 1, k->sa - k->ca - 1) ^
					    (uint64_t)tolower((unsigned char)name[k->ca])
				  : 0;
	k->stable = NULL;
	k->own_count = k->name_count = 0;
	if ((rc = own_name_ok(&k->own_ok, name, k->pa, name + k->ca, k->sa - k->ca)) < 0)
		return rc;
	k->own_ok = k->own_ok && k->ca > 0;
	if (k->len >= sizeof(tmp))
		return 0;
	memcpy(tmp, name, k->len + 1);
	n = symname_stable(tmp, k->len);
	tmp[n] = '\0';
	if (strcmp(tmp, name) != 0 && !(k->stable = strdup(tmp)))
		return PR_ENOMEM;
	return 0;
}

/*
 * Whether a and b (rows x and y) keep their own name (after the
 * container) in another container: a function moved to another class or
 * package ("ledger.(*Rules).flush" to "ledgerutil.Flush", Go's export
 * changing the first letter's case), or a class renamed around it. Only
 * for an own name that says which code it is (own_name_ok) and that no
 * other function of the target has: a name two types share ("Close") may
 * be either's.
 */
static bool same_own_name(const char *a, const name_key *x, const char *b, const name_key *y)
{
	const char *s = a + x->ca, *t = b + y->ca;
	size_t n = x->sa - x->ca, np = x->pa - x->sa;

	/* The same parameters too: an overload of another class is another function. */
	return x->own_ok && y->own_ok && x->own_count == 2 && y->own_count == 2 &&
	       n == y->sa - y->ca && x->hshort == y->hshort &&
	       tolower((unsigned char)s[0]) == tolower((unsigned char)t[0]) &&
	       memcmp(s + 1, t + 1, n - 1) == 0 && np == y->pa - y->sa &&
	       memcmp(a + x->sa, b + y->sa, np) == 0;
}

/*
 * Whether a and b (rows x and y) may be one function renamed or moved,
 * and how surely: 1 the same name in one file (or one the release moved),
 * 2 the same name in another file (the function moved), 3 renamed in one
 * file (within one container: the name up to its last '.', ':', '/' or
 * '$'; or a name today's rules make the other, stable_is) or in a file
 * moved with its folder, 4 renamed within a named container and moved at
 * once to a file only one side has (a file split off, or one emptied),
 * 5 its own name kept in another container (same_own_name); 0 not.
 * Pairs are made surest first (merge_renamed).
 */
static int pair_tier(const char *a, const name_key *x, const char *b, const name_key *y)
{
	bool files = x->file != SIZE_MAX && y->file != SIZE_MAX;
	/* Without files, a py-spy name's " (file.py)" is its file. */
	bool same = files ? x->file == y->file
			  : x->len - x->pa == y->len - y->pa &&
				    memcmp(a + x->pa, b + y->pa, x->len - x->pa) == 0;
	bool moved = files && !same && x->place == y->place;

	/*
	 * The same name in another file is one function moved when no other
	 * function of the target has that name: Python's handle() gone from
	 * one file and new in another, while two more files keep a handle(),
	 * may be any of them.
	 */
	if (x->pa == y->pa && x->hname == y->hname && memcmp(a, b, x->pa) == 0)
		return same || moved ? 1 : x->name_count == 2 && y->name_count == 2 ? 2 : 0;
	same = same || (moved && x->strong);
	if (same &&
	    ((x->stable && strcmp(x->stable, b) == 0) || (y->stable && strcmp(y->stable, a) == 0)))
		return 3;
	if (x->ca != y->ca || x->hcont != y->hcont || memcmp(a, b, x->ca) != 0)
		return same_own_name(a, x, b, y) ? 5 : 0;
	/* The parameters and a py-spy " (file)" the same. */
	if (x->len - x->sa != y->len - y->sa || memcmp(a + x->sa, b + y->sa, x->len - x->sa) != 0)
		return 0;
	/* A bare name ("parse_key") needs a file in common to be the same function. */
	if (same)
		return x->ca > 0 || files || x->len > x->pa ? 3 : 0;
	/* Not across a lone file's move: one file deleted, another added. */
	return x->ca > 0 && !moved && (x->side != 3 || y->side != 3) ? 4 : 0;
}

/*
 * Two renames in one container ("loadQuote" and "renderToken" becoming
 * "loadQuoteV2" and "renderTokenV2") give each gone name two partners of
 * one tier, and were paired neither way: both new names paged as
 * regressions from nothing. The partner whose own name (after the
 * container) is nearest is taken when it is the only nearest
 * (closest_partner); merge_renamed pairs only when each is the other's
 * so taken. Past RENAME_CLOSEST_MAX
 * partners (a release renaming a whole class) nothing is guessed.
 */
#define RENAME_CLOSEST_MAX 16

/* Row k's own name (after its container) into out, NUL-ended; false when too long. */
static bool own_name(char *out, size_t cap, const char *name, const name_key *k)
{
	size_t n = k->sa - k->ca;

	if (n >= cap)
		return false;
	memcpy(out, name + k->ca, n);
	out[n] = '\0';
	return true;
}

/*
 * Whether the shorter of a and b is the longer with one run of bytes
 * taken out (parseKey in parseCacheKey, mergeOffers in mergeOffersAsync):
 * a word added to a name, the commonest rename. Edit distance alone took
 * mergeOffers for mergeOfferAsync (4 edits) over mergeOffersAsync (5).
 */
static bool one_insertion(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), cp = 0, cs = 0;
	const char *s = la < lb ? a : b, *l = la < lb ? b : a;
	size_t ns = la < lb ? la : lb, nl = la < lb ? lb : la;

	if (ns == nl)
		return false;
	while (cp < ns && s[cp] == l[cp])
		cp++;
	while (cs < ns - cp && s[ns - 1 - cs] == l[nl - 1 - cs])
		cs++;
	return cp + cs == ns;
}

/*
 * The partner of row k at `tier` nearest by name (see above), or
 * SIZE_MAX: one that is the other with a word added comes before any
 * that is not, then fewer edits; one that is not must be within half the
 * longer name's length. (Within a third, fewer wrong pairs were made,
 * but more renames of other words went unpaired, each a regression from
 * nothing: on an independent simulator's fleets, critical false findings
 * of renames with other words rose from 11 to 13.)
 */
static size_t closest_partner(char *const *names, const name_key *keys, const int *kd, size_t n,
			      size_t k, int tier)
{
	char mine[257], theirs[257];
	size_t best = SIZE_MAX, best_d = SIZE_MAX, second_d = SIZE_MAX;

	if (!own_name(mine, sizeof(mine), names[k], &keys[k]))
		return SIZE_MAX;
	for (size_t j = 0; j < n; j++) {
		size_t d, cap, longer;
		bool inserted;
		if (kd[j] <= 0 || kd[j] == kd[k] ||
		    pair_tier(names[k], &keys[k], names[j], &keys[j]) != tier ||
		    !own_name(theirs, sizeof(theirs), names[j], &keys[j]))
			continue;
		longer = strlen(mine) > strlen(theirs) ? strlen(mine) : strlen(theirs);
		inserted = one_insertion(mine, theirs);
		cap = inserted ? longer : longer / 2;
		if ((d = similar_distance(mine, theirs, cap)) > cap)
			continue;
		/* Ranked by insertion first: those that are one go before all others. */
		d += inserted ? 0 : 1000;
		if (d < best_d) {
			second_d = best_d;
			best_d = d;
			best = j;
		} else if (d < second_d) {
			second_d = d;
		}
	}
	return best_d < second_d ? best : SIZE_MAX;
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* How many trailing path components a and b share (0: not even the base name). */
static size_t common_tail(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), parts = 0;

	while (la && lb && a[la - 1] == b[lb - 1]) {
		la--, lb--;
		if (a[la] == '/' || a[la] == '\\')
			parts++;
	}
	/* A whole component matched when both stop at its start. */
	if ((la == 0 || a[la - 1] == '/' || a[la - 1] == '\\') &&
	    (lb == 0 || b[lb - 1] == '/' || b[lb - 1] == '\\'))
		parts++;
	else if (parts == 0)
		return 0;
	return parts;
}

/* The base name of a path: after its last '/' or '\'. */
static const char *base_name(const char *s)
{
	const char *b = s;

	for (; *s; s++)
		if (*s == '/' || *s == '\\')
			b = s + 1;
	return b;
}

/* Files sorted by base name (qsort_r is not C11: the names are in the entries). */
typedef struct by_base {
	const char *base, *path;
	size_t idx;
} by_base;

static int cmp_base(const void *x, const void *y)
{
	return strcmp(((const by_base *)x)->base, ((const by_base *)y)->base);
}

/*
 * Of list[0..n) (sorted by base name), the best match of `path`
 * (common_tail) among those of its base name, in *tail; its index in
 * the list, or SIZE_MAX when none or a tie.
 */
static size_t best_tail(const char *path, const by_base *list, size_t n, size_t *tail)
{
	by_base key = {base_name(path), path, 0};
	size_t lo = 0, hi = n, best = SIZE_MAX, top = 0;
	bool tie = false;

	while (lo < hi) { /* the first of its base name */
		size_t mid = lo + (hi - lo) / 2;
		if (cmp_base(&list[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < n && cmp_base(&list[i], &key) == 0; i++) {
		size_t t = common_tail(path, list[i].path);
		if (t > top)
			top = t, best = i, tie = false;
		else if (t && t == top)
			tie = true;
	}
	*tail = top;
	return tie ? SIZE_MAX : best;
}

/* The length of path's folder part before its last `parts` components. */
static size_t folder_before(const char *path, size_t parts)
{
	size_t n = strlen(path);

	while (n > 0 && parts > 0) {
		n--;
		if (path[n] == '/' || path[n] == '\\')
			parts--;
	}
	return parts ? 0 : n + 1;
}

/* A move's two folders, "OLD\nNEW" (paths hold no line break that matters here). */
static char *move_key(const char *from, const char *to, size_t parts)
{
	size_t a = folder_before(from, parts), b = folder_before(to, parts);
	char *k = malloc(a + b + 2);

	if (k) {
		memcpy(k, from, a);
		k[a] = '\n';
		memcpy(k + a + 1, to, b);
		k[a + b + 1] = '\0';
	}
	return k;
}

/* The files' places of the n rows into keys[k].file, .place, .strong and .side. */
static int file_places(name_key *keys, const func_matrix *m, size_t nb, size_t nc,
		       const size_t *rows, char *const *files, size_t n)
{
	const char **uf = calloc(n ? n : 1, sizeof(*uf));
	int *side = calloc(n ? n : 1, sizeof(*side)); /* 1 baseline, 2 release, 3 both */
	size_t *to = calloc(n ? n : 1, sizeof(*to)), *tails = calloc(n ? n : 1, sizeof(*tails));
	by_base *gone = calloc(n ? n : 1, sizeof(*gone)), *came = calloc(n ? n : 1, sizeof(*came));
	size_t nf = 0, ng = 0, nn = 0, moves = 0;
	char **mkeys = NULL; /* each move's folders (move_key), sorted */
	bool oom_keys = false;

	if (!uf || !side || !to || !tails || !gone || !came) {
		free(uf), free(side), free(to), free(tails), free(gone), free(came);
		return PR_ENOMEM;
	}
	for (size_t k = 0; k < n; k++)
		if (files[k] && files[k][0])
			uf[nf++] = files[k];
	qsort(uf, nf, sizeof(*uf), cmp_str);
	{
		size_t out = 0;
		for (size_t i = 0; i < nf; i++)
			if (!out || strcmp(uf[out - 1], uf[i]) != 0)
				uf[out++] = uf[i];
		nf = out;
	}
	for (size_t k = 0; k < n; k++) {
		const char **at;
		size_t bk, bh, ck, ch;
		keys[k].file = SIZE_MAX;
		if (!files[k] || !files[k][0])
			continue;
		at = bsearch(&files[k], uf, nf, sizeof(*uf), cmp_str);
		keys[k].file = (size_t)(at - uf);
		presence(&bk, &bh, m, rows[k], 0, nb);
		presence(&ck, &ch, m, rows[k], nb, nc);
		side[keys[k].file] |= (bh ? 1 : 0) | (ch ? 2 : 0);
	}
	for (size_t i = 0; i < nf; i++) {
		to[i] = i;
		if (side[i] == 1)
			gone[ng++] = (by_base){base_name(uf[i]), uf[i], i};
		else if (side[i] == 2)
			came[nn++] = (by_base){base_name(uf[i]), uf[i], i};
	}
	qsort(gone, ng, sizeof(*gone), cmp_base);
	qsort(came, nn, sizeof(*came), cmp_base);
	for (size_t g = 0; g < ng; g++) {
		size_t t, back, j = best_tail(gone[g].path, came, nn, &t);
		if (j != SIZE_MAX && best_tail(came[j].path, gone, ng, &back) == g) {
			to[came[j].idx] = gone[g].idx;
			tails[came[j].idx] = t;
			moves++;
		}
	}
	/*
	 * A move's strength, on both of its files (tails[] is zero
	 * elsewhere): 2 when it keeps a folder, or when another move has its
	 * two folders.
	 */
	if (moves && !(mkeys = calloc(moves, sizeof(*mkeys)))) {
		free(uf), free(side), free(to), free(tails), free(gone), free(came);
		return PR_ENOMEM;
	}
	for (size_t f = 0, i = 0; f < nf; f++)
		if (to[f] != f && !(mkeys[i++] = move_key(uf[to[f]], uf[f], tails[f])))
			oom_keys = true;
	if (!oom_keys && moves > 1)
		qsort(mkeys, moves, sizeof(*mkeys), cmp_str);
	for (size_t f = 0; f < nf && !oom_keys; f++) {
		char *k;
		size_t lo;
		if (to[f] == f)
			continue;
		if (tails[f] < 2 && (k = move_key(uf[to[f]], uf[f], tails[f]))) {
			const char **at = bsearch(&k, mkeys, moves, sizeof(*mkeys), cmp_str);
			lo = at ? (size_t)(at - (const char **)mkeys) : moves;
			while (lo > 0 && strcmp(mkeys[lo - 1], k) == 0)
				lo--;
			if (lo + 1 < moves && strcmp(mkeys[lo + 1], k) == 0)
				tails[f] = 2;
			free(k);
		}
		if (tails[f] >= 2)
			tails[to[f]] = 2;
		else
			tails[f] = 0;
	}
	for (size_t k = 0; k < n; k++) {
		size_t f = keys[k].file;
		keys[k].place = f == SIZE_MAX ? SIZE_MAX : to[f];
		keys[k].side = f == SIZE_MAX || !side[f] ? 3 : side[f];
		keys[k].strong = f != SIZE_MAX && tails[f] >= 2;
	}
	for (size_t i = 0; mkeys && i < moves; i++)
		free(mkeys[i]);
	free(mkeys);
	free(uf), free(side), free(to), free(tails), free(gone), free(came);
	if (oom_keys)
		return PR_ENOMEM;
	return 0;
}

/* 1: gone (in the baseline, in no current capture); 2: new; 0: neither. */
static int gone_or_new(const func_matrix *m, size_t row, size_t nb, size_t nc)
{
	size_t bk, bh, ck, ch;

	presence(&bk, &bh, m, row, 0, nb);
	presence(&ck, &ch, m, row, nb, nc);
	if (ck >= 1 && ch == 0 && bh >= 2 && 2 * bh >= bk)
		return 1;
	if (bk >= 2 && bh == 0 && ch >= 1 && 2 * ch >= ck)
		return 2;
	return 0;
}

/*
 * Drop the rows merged into others (kind -1) from a target's tested rows,
 * freeing their names and files; *nrows becomes the rows kept. was and
 * was_id, when not NULL, move with the rows.
 */
static void drop_merged(const int *kind, size_t *rows, int64_t *ids, char **names, char **files,
			char **was, int64_t *was_id, size_t *nrows)
{
	size_t n = *nrows, out = 0;

	for (size_t k = 0; k < n; k++) {
		if (kind[k] == -1) {
			free(names[k]);
			free(files[k]);
			continue;
		}
		rows[out] = rows[k], ids[out] = ids[k];
		names[out] = names[k], files[out] = files[k];
		if (was)
			was[out] = was[k], was_id[out] = was_id[k];
		out++;
	}
	for (size_t k = out; k < n; k++) {
		names[k] = NULL, files[k] = NULL;
		if (was)
			was[k] = NULL;
	}
	*nrows = out;
}

/*
 * Whether rows a and b (names x and y) have one own name of an
 * identifier's letters (two bytes or more; "__str__" too) and the same
 * parameters, nothing in either numbered by a compiler.
 */
static bool same_plain_name(const char *x, const name_key *a, const char *y, const name_key *b)
{
	size_t n = a->sa - a->ca, np = a->pa - a->sa;

	if (!x || !y || n < 2 || n != b->sa - b->ca || a->hshort != b->hshort ||
	    np != b->pa - b->sa || memcmp(x + a->sa, y + b->sa, np) != 0 ||
	    tolower((unsigned char)x[a->ca]) != tolower((unsigned char)y[b->ca]) ||
	    memcmp(x + a->ca + 1, y + b->ca + 1, n - 1) != 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(isalnum((unsigned char)x[a->ca + i]) || x[a->ca + i] == '_'))
			return false;
	/* Out of memory reads as numbered: no pair. */
	return numbered_in(x, a->pa) == 0 && numbered_in(y, b->pa) == 0;
}

/* Whether rows r and g (names a and b) have one container. */
static bool same_container(const char *a, const name_key *r, const char *b, const name_key *g)
{
	return r->ca == g->ca && r->hcont == g->hcont && memcmp(a, b, r->ca) == 0;
}

/*
 * Whether gone row g and its partner of the last step (same own name in
 * another container) are a function moved out of a class that stays
 * (another function of g's container is in the release) or of a class
 * renamed (another such pair between the same two containers). A class
 * replaced by another that implements the same interface
 * (AuditFilter.doFilter gone, RateLimitFilter.doFilter new) is neither:
 * its method is other code under the interface's name.
 */
static bool moved_out(char *const *names, const name_key *keys, const bool *alive,
		      const size_t *mate, const int *kd, size_t n, size_t g)
{
	size_t j = mate[g];

	for (size_t r = 0; r < n; r++) {
		if (r == g || !names[r] || !same_container(names[r], &keys[r], names[g], &keys[g]))
			continue;
		if (alive[r])
			return true;
		/* Another method gone from g's class is new in j's, by its own name. */
		for (size_t q = 0; kd[r] == 1 && q < n; q++)
			if (q != j && kd[q] == 2 && names[q] &&
			    same_container(names[q], &keys[q], names[j], &keys[j]) &&
			    same_plain_name(names[r], &keys[r], names[q], &keys[q]))
				return true;
	}
	return false;
}

/*
 * Pair gone row g with new row j: g takes j's current values, name,
 * file and id; was[g] and was_id[g] keep g's old name and id.
 */
static void take_pair(func_matrix *m, size_t nb, size_t nc, const size_t *rows, int64_t *ids,
		      char **names, char **files, char **was, int64_t *was_id, size_t g, size_t j)
{
	for (size_t i = 0; i < nc; i++)
		m->self[rows[g] * m->ncaps + nb + i] = m->self[rows[j] * m->ncaps + nb + i];
	was_id[g] = ids[g];
	/* Only moved to another file: no other name to show ("x (was x)"). */
	if (strcmp(names[g], names[j]) == 0)
		free(names[g]);
	else
		was[g] = names[g];
	names[g] = names[j], names[j] = NULL;
	free(files[g]);
	files[g] = files[j], files[j] = NULL;
	ids[g] = ids[j];
}

/*
 * Whether row r's container is the old (old: true) or the new container
 * of a method moved across containers (moved_g[i] was paired with
 * moved_j[i]; was[] holds the old names, keys[] the old and new parts).
 */
static bool in_moved_class(char *const *names, const name_key *keys, char *const *was,
			   const size_t *moved_g, const size_t *moved_j, size_t nmoved, size_t r,
			   bool old)
{
	for (size_t i = 0; i < nmoved; i++) {
		size_t g = moved_g[i], j = moved_j[i];
		if (old ? was[g] && same_container(names[r], &keys[r], was[g], &keys[g])
			: names[g] && same_container(names[r], &keys[r], names[g], &keys[j]))
			return true;
	}
	return false;
}

typedef struct own_ref {
	uint64_t h;
	size_t row;
} own_ref;

static int own_ref_cmp(const void *x, const void *y)
{
	const own_ref *a = x, *b = y;

	return a->h != b->h ? (a->h > b->h) - (a->h < b->h) : (a->row > b->row) - (a->row < b->row);
}

/*
 * Each own_ok row's own_count: how many own_ok rows of the target share
 * its own name's hash; and each row's name_count, how many share its
 * name's (files aside). Two names of one hash count as one name: fewer
 * pairs, never a wrong one. 0 or PR_ENOMEM.
 */
static int count_own_names(name_key *keys, char *const *names, size_t n)
{
	own_ref *r = malloc((n ? n : 1) * sizeof(*r));
	size_t m = 0;

	if (!r)
		return PR_ENOMEM;
	for (int pass = 0; pass < 2; pass++) {
		m = 0;
		for (size_t k = 0; k < n; k++)
			if (names[k] && (pass || keys[k].own_ok))
				r[m++] = (own_ref){
					pass ? keys[k].hname ^ keys[k].pa : keys[k].hshort, k};
		qsort(r, m, sizeof(*r), own_ref_cmp);
		for (size_t i = 0, j; i < m; i = j) {
			for (j = i + 1; j < m && r[j].h == r[i].h; j++)
				;
			for (size_t k = i; k < j; k++)
				*(pass ? &keys[r[k].row].name_count : &keys[r[k].row].own_count) =
					j - i;
		}
	}
	free(r);
	return 0;
}

/*
 * Pair and merge the renamed functions among a target's tested rows (see
 * above): the merged row keeps the old function's place and takes the new
 * one's id, name, file and current values; was[k] and was_id[k] get the
 * old name (the caller owns it) and id. *nrows shrinks by one a pair.
 */
static int merge_renamed(func_matrix *m, size_t nb, size_t nc, size_t *rows, int64_t *ids,
			 char **names, char **files, char **was, int64_t *was_id, size_t *nrows)
{
	size_t n = *nrows;
	int *kind = calloc(n ? n : 1, sizeof(*kind));
	size_t *mate = calloc(n ? n : 1, sizeof(*mate));
	name_key *keys = calloc(n ? n : 1, sizeof(*keys));
	int *loose = calloc(n ? n : 1, sizeof(*loose));
	bool *alive = calloc(n ? n : 1, sizeof(*alive)), *keep = calloc(n ? n : 1, sizeof(*keep));
	size_t *moved_g = calloc(n ? n : 1, sizeof(*moved_g));
	size_t *moved_j = calloc(n ? n : 1, sizeof(*moved_j)), nmoved = 0;
	int rc = 0;

	if (!kind || !mate || !keys || !loose || !alive || !keep || !moved_g || !moved_j ||
	    file_places(keys, m, nb, nc, rows, files, n) < 0) {
		rc = PR_ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < n && rc == 0; k++)
		if (names[k])
			rc = name_key_of(&keys[k], names[k]);
	if (rc < 0 || (rc = count_own_names(keys, names, n)) < 0)
		goto out;
	/*
	 * kind: gone or new (gone_or_new). loose: only in the baseline or
	 * only in the release, however rarely: a function of a moved file
	 * seen in a few captures is still the one of the same name in the
	 * file it moved to, and taken as such (the first step) it is no
	 * partner for a rename beside it.
	 */
	for (size_t k = 0; k < n; k++) {
		size_t bk, bh, ck, ch;
		kind[k] = names[k] ? gone_or_new(m, rows[k], nb, nc) : 0;
		presence(&bk, &bh, m, rows[k], 0, nb);
		presence(&ck, &ch, m, rows[k], nb, nc);
		loose[k] = !names[k] ? 0 : bh && !ch ? 1 : ch && !bh ? 2 : 0;
		alive[k] = names[k] && ch > 0;
	}
	/*
	 * Surest first (pair_tier's order): at each step, a function and
	 * its only partner of the other kind, each the other's only one, are
	 * paired; what is left goes on to the next step. Without the order,
	 * a release that moved every file gave each function its own name
	 * and its class's other functions as partners, and paired none.
	 */
	for (int tier = 1; tier <= 5; tier++) {
		const int *kd = tier == 1 ? loose : kind;
		for (size_t k = 0; k < n; k++) {
			size_t partners = 0;
			mate[k] = SIZE_MAX;
			for (size_t j = 0; kd[k] > 0 && j < n; j++)
				if (kd[j] > 0 && kd[j] != kd[k] &&
				    pair_tier(names[k], &keys[k], names[j], &keys[j]) == tier) {
					partners++;
					mate[k] = j;
				}
			if (partners > 1 && partners <= RENAME_CLOSEST_MAX &&
			    (tier == 3 || tier == 4))
				mate[k] = closest_partner(names, keys, kd, n, k, tier);
			else if (partners != 1)
				mate[k] = SIZE_MAX;
		}
		for (size_t g = 0; tier == 5 && g < n; g++)
			keep[g] = kd[g] == 1 && mate[g] != SIZE_MAX && mate[mate[g]] == g &&
				  moved_out(names, keys, alive, mate, kd, n, g);
		for (size_t g = 0; g < n; g++) {
			size_t j = mate[g];
			if (kd[g] != 1 || j == SIZE_MAX || mate[j] != g || (tier == 5 && !keep[g]))
				continue;
			if (tier == 5)
				moved_g[nmoved] = g, moved_j[nmoved++] = j;
			take_pair(m, nb, nc, rows, ids, names, files, was, was_id, g, j);
			kind[j] = -1; /* tested as part of g */
			kind[g] = loose[g] = loose[j] = 0;
		}
	}
	/*
	 * Last, the methods of a class renamed whose own names say nothing
	 * alone (run, equals, toString, __str__): the class's other methods
	 * moved between the same two containers say which is which. A Python
	 * class renamed left its __str__ a critical regression from nothing.
	 */
	for (size_t g = 0; nmoved && g < n; g++) {
		size_t j = SIZE_MAX, partners = 0;
		if (kind[g] != 1 ||
		    !in_moved_class(names, keys, was, moved_g, moved_j, nmoved, g, true))
			continue;
		for (size_t c = 0; c < n; c++)
			if (kind[c] == 2 &&
			    same_plain_name(names[g], &keys[g], names[c], &keys[c]) &&
			    in_moved_class(names, keys, was, moved_g, moved_j, nmoved, c, false))
				partners++, j = c;
		if (partners != 1)
			continue;
		partners = 0;
		for (size_t c = 0; c < n; c++)
			partners +=
				kind[c] == 1 &&
				same_plain_name(names[c], &keys[c], names[j], &keys[j]) &&
				in_moved_class(names, keys, was, moved_g, moved_j, nmoved, c, true);
		if (partners != 1)
			continue;
		take_pair(m, nb, nc, rows, ids, names, files, was, was_id, g, j);
		kind[j] = -1;
		kind[g] = 0;
	}
	drop_merged(kind, rows, ids, names, files, was, was_id, nrows);
out:
	for (size_t k = 0; keys && k < n; k++)
		free(keys[k].stable);
	free(keys);
	free(loose);
	free(alive);
	free(keep);
	free(moved_g);
	free(moved_j);
	free(kind);
	free(mate);
	return rc;
}

/*
 * Renumbered closures. Compilers number anonymous functions by their
 * place in the source: Go's "handler.func2", Java's "lambda$handle$0"
 * and anonymous classes ("Outer$1.run"), Scala's "$anonfun$f$1", C++'s
 * "{lambda()#1}", Rust's "{closure#0}". A release that adds one before
 * the others renumbers every one after it: each takes the next one's
 * cost, and the last is new. Tested one by one, that pages for nothing.
 * When a release adds or removes a member of such a family (the names
 * equal but for those numbers, in one file where they have one), the
 * family's members are summed capture by capture and tested as one
 * function, named with '*' for the numbers ("main.handler.func*"). A
 * family of one gone and one new member is left to the rename pairing,
 * which names both.
 */

/* Whether s[i] starts "word" followed by a digit. */
static bool word_digit(const char *s, size_t i, size_t n, const char *word)
{
	size_t w = strlen(word);

	return i + w < n && memcmp(s + i, word, w) == 0 && isdigit((unsigned char)s[i + w]);
}

/*
 * The family of the first n bytes of `name` into `key` (with '*' for each
 * numbering's digits); false when the name has no numbering.
 */
static bool family_key(buf *key, const char *name, size_t n)
{
	bool any = false;

	buf_reset(key);
	for (size_t i = 0; i < n;) {
		size_t d = 0, skip = 0;
		char c = name[i];

		if (c == '.' && (word_digit(name, i, n, ".func") ||
				 word_digit(name, i, n, ".gowrap") ||
				 word_digit(name, i, n, ".deferwrap")))
			skip = 1 + strcspn(name + i + 1, "0123456789");
		else if (c == '$' || c == '#')
			skip = 1;
		if (skip) {
			while (i + skip + d < n && isdigit((unsigned char)name[i + skip + d]))
				d++;
			/* Numbers alone: "$1." or "$0" at the end, "#2}", ".func3" and its ".1". */
			char after = i + skip + d < n ? name[i + skip + d] : '\0';
			bool ok = d > 0 && (c == '#' ? after == '}'
					    : strchr("$.( ", after) != NULL || after == '\0');
			if (ok) {
				if (buf_put(key, name + i, skip) < 0 || buf_putc(key, '*') < 0)
					return false;
				i += skip + d;
				any = true;
				/* Go's closures within closures: ".func1.2.3". */
				while (c == '.' && i + 1 < n && name[i] == '.' &&
				       isdigit((unsigned char)name[i + 1])) {
					i++;
					while (i < n && isdigit((unsigned char)name[i]))
						i++;
				}
				continue;
			}
		}
		if (buf_putc(key, c) < 0)
			return false;
		i++;
	}
	return any;
}

static int64_t imax(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* Whether rows j and k are of one family: one key, one file (or none). */
static bool kin(char *const *key, char *const *files, size_t j, size_t k)
{
	return key[j] && key[k] && strcmp(key[j], key[k]) == 0 &&
	       strcmp(files[j] ? files[j] : "", files[k] ? files[k] : "") == 0;
}

/*
 * Merge the families a release renumbered (see above) among a target's
 * tested rows: the merged row keeps its first member's place and the
 * smallest id among the members (the same night after night), takes the
 * family's name and, capture by capture, the sum of its members' values.
 * *nrows shrinks by the members merged.
 */
static int merge_families(func_matrix *m, size_t nb, size_t nc, size_t *rows, int64_t *ids,
			  char **names, char **files, size_t *nrows)
{
	size_t n = *nrows;
	char **key = calloc(n ? n : 1, sizeof(*key));
	int *fam = calloc(n ? n : 1, sizeof(*fam));
	buf b = BUF_INIT;
	int rc = 0;

	if (!key || !fam) {
		rc = PR_ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < n; k++) {
		size_t len = names[k] ? strlen(names[k]) : 0, part = func_part(names[k], len);
		if (!names[k] || !family_key(&b, names[k], part))
			continue;
		if (buf_put(&b, names[k] + part, len - part) < 0 || !(key[k] = strdup(b.ptr))) {
			rc = PR_ENOMEM;
			goto out;
		}
	}
	/* fam[k]: 0 alone, 1 the family's first member, -1 merged into it. */
	for (size_t k = 0; k < n; k++) {
		size_t members = 0, gone = 0, fresh = 0;
		int64_t *to = m->self + rows[k] * m->ncaps;
		if (!key[k] || fam[k])
			continue;
		for (size_t j = k; j < n; j++) {
			if (!kin(key, files, j, k) || fam[j])
				continue;
			int g = gone_or_new(m, rows[j], nb, nc);
			members++;
			gone += g == 1;
			fresh += g == 2;
		}
		if (members < 2 || (gone == 0 && fresh == 0) ||
		    (members == 2 && gone == 1 && fresh == 1))
			continue;
		fam[k] = 1;
		for (size_t j = k + 1; j < n; j++) {
			const int64_t *from = m->self + rows[j] * m->ncaps;
			if (!kin(key, files, j, k) || fam[j])
				continue;
			fam[j] = -1;
			/* A capture that knows one member knows the family. */
			for (size_t i = 0; i < nb + nc; i++)
				if (from[i] != FUNC_MATRIX_UNKNOWN)
					to[i] = from[i] + imax(to[i], 0);
			if (ids[j] < ids[k])
				ids[k] = ids[j];
		}
		free(names[k]);
		names[k] = key[k], key[k] = NULL;
	}
	drop_merged(fam, rows, ids, names, files, NULL, NULL, nrows);
out:
	for (size_t k = 0; key && k < n; k++)
		free(key[k]);
	free(key);
	free(fam);
	buf_release(&b);
	return rc;
}

/*
 * Cost moved between a function and its caller. A release that inlines
 * a function into its caller (a compiler's choice as much as the
 * author's) moves the callee's self time into the caller's: the callee
 * is gone and the caller's self share rises by the same amount, a page
 * for nothing. A helper extracted from a function does the opposite:
 * the helper rises from nothing, its caller falls. Neither changes the
 * cost of the code: the caller's total (inclusive) value, which holds
 * the callee either way, stays where it was.
 *
 * So a gone or new function X is merged into a function C present in
 * both releases when C contains X where X is (in every capture of that
 * side that holds X, C's total less C's own self value is at least X's
 * total, which a caller on every stack of X satisfies exactly), C's self
 * share moved the other way by between half and twice X's change and
 * beyond its noise (see moved_beyond_noise), no function between C and
 * X took X's change in its total (see passed_through), and C is the
 * only such function for X and X the only one for C. The merged row is
 * C's, with its id and file, named "C (+X)", and holds C's and X's
 * self values summed capture by capture: tested as one, an unchanged
 * caller and callee are no finding, and a helper extracted and made
 * costlier is a regression of the two.
 */

/*
 * Mean share of row r of `values` (m->self or m->total) over columns
 * [col0, col0 + cs->n); NAN with none known.
 */
static double mean_share(const func_matrix *m, const int64_t *values, size_t r, size_t col0,
			 const capture_set *cs)
{
	double sum = 0;
	size_t n = 0;

	for (size_t i = 0; i < cs->n; i++) {
		int64_t v = values[r * m->ncaps + col0 + i];
		if (v == FUNC_MATRIX_UNKNOWN)
			continue;
		sum += capture_share(&cs->caps[i], v);
		n++;
	}
	return n ? sum / (double)n : NAN;
}

/* How far row r of `values` moved in mean share from the baseline to the current side. */
static double moved_by(const func_matrix *m, const int64_t *values, size_t r,
		       const capture_set *base, const capture_set *cur)
{
	return mean_share(m, values, r, base->n, cur) - mean_share(m, values, r, 0, base);
}

/* Whether row c's callees hold row x in every column of [col0, col0 + n) that has x. */
static bool contains(const func_matrix *m, size_t c, size_t x, size_t col0, size_t n)
{
	size_t seen = 0;

	for (size_t i = col0; i < col0 + n; i++) {
		int64_t xs = m->self[x * m->ncaps + i], cs = m->self[c * m->ncaps + i];
		if (xs == FUNC_MATRIX_UNKNOWN || cs == FUNC_MATRIX_UNKNOWN)
			return false;
		if (xs == 0 && m->total[x * m->ncaps + i] == 0)
			continue;
		if (m->total[c * m->ncaps + i] - cs < m->total[x * m->ncaps + i])
			return false;
		seen++;
	}
	return seen > 0;
}

/*
 * Whether a function D between C and X (C holds D, D holds X, on X's
 * side) took X's change in its total: then X's cost came or went through
 * D, whose own code did not move, and C is an ancestor whose self share
 * moved for another reason (a new check under an unchanged validate(),
 * while the handler above it got cheaper). A caller that X's cost really
 * came from has nothing between them; its ancestors' totals stay put.
 */
static bool passed_through(const func_matrix *m, const capture_set *base, const capture_set *cur,
			   size_t c, size_t x, size_t col0, size_t ncol, double dx)
{
	for (size_t d = 0; d < m->nfuncs; d++) {
		double dt;
		if (d == c || d == x || !contains(m, d, x, col0, ncol) ||
		    !contains(m, c, d, col0, ncol))
			continue;
		dt = moved_by(m, m->total, d, base, cur);
		if (dt * dx > 0 && fabs(dt) >= 0.5 * fabs(dx))
			return true;
	}
	return false;
}

/* Row r's self shares over columns [col0, col0 + cs->n) as a sample (the known ones). */
static void share_sample(stats_sample *out, const func_matrix *m, const int64_t *values, size_t r,
			 size_t col0, const capture_set *cs)
{
	double ss = 0;

	out->n = 0;
	out->mean = mean_share(m, values, r, col0, cs);
	out->var = NAN;
	out->var_floor = 0;
	for (size_t i = 0; i < cs->n; i++) {
		int64_t v = values[r * m->ncaps + col0 + i];
		double d;
		if (v == FUNC_MATRIX_UNKNOWN)
			continue;
		d = capture_share(&cs->caps[i], v) - out->mean;
		ss += d * d;
		out->n++;
	}
	if (out->n > 1)
		out->var = ss / (double)(out->n - 1);
}

/*
 * Whether row r's self share moved beyond its captures' spread, down when
 * `down`: its current mean against its baseline's with the baseline's
 * spread for both, one-sided at 5%. A caller's share that moved by no more
 * than its noise says nothing of where a new or gone function's cost came
 * from, and merging on it hides the function: a new check of 0.4% under a
 * 20% handler whose share happened to read 1.7% lower was no finding.
 */
static bool moved_beyond_noise_of(const func_matrix *m, const int64_t *values, size_t r,
				  const capture_set *base, const capture_set *cur, bool down)
{
	stats_sample b, c;
	stats_test_opts o = {down ? STATS_LESS : STATS_GREATER, 0, 0.05};
	stats_result res;

	share_sample(&b, m, values, r, 0, base);
	share_sample(&c, m, values, r, base->n, cur);
	/* A spread of nothing (the same share in every capture): any move is one. */
	if (stats_test_shared_var(&res, &b, &c, &o) < 0)
		return b.n >= 2 && c.n >= 1 && !(b.var > 0);
	return res.p <= o.alpha;
}

static bool moved_beyond_noise(const func_matrix *m, size_t r, const capture_set *base,
			       const capture_set *cur, bool down)
{
	return moved_beyond_noise_of(m, m->self, r, base, cur, down);
}

/*
 * Whether caller C (baseline self share s) only moved as every share does
 * when new code X (its share change dx: up for new, down for gone) adds
 * or takes away cost: C's change dc within a quarter of the way from that
 * dilution to what a move of X's cost out of C or into it would give.
 * New X at share x dilutes C to s(1 - x), a move leaves s - x; gone X
 * at baseline share x lifts C to s / (1 - x), a move gives s + x. A
 * caller of half the service or more falls by half of x or more from
 * dilution alone: a new check of 17% under a loop of 87% was "loop
 * (+check)", no finding.
 */
static bool diluted_only(double s, double dx, double dc)
{
	double x = fabs(dx), move = dx > 0 ? -x : x, dil;

	if (!(s > 0) || !(x < 1))
		return false;
	dil = dx > 0 ? -s * x : s * x / (1 - x);
	return fabs(dc - dil) < 0.25 * fabs(move - dil);
}

/*
 * Whether what C's callees hold (its total less its self) moved with X,
 * by half X's change dx or more: X's cost came into C's subtree or left
 * it. A function large enough to contain X elsewhere in the profile,
 * whose self share fell by chance, has its total fall with it, and
 * nothing moves below it. Only a tie-break: below a caller of a large
 * subtree, its total's own noise can be larger than X's change.
 */
static bool moved_below(const func_matrix *m, size_t c, const capture_set *base,
			const capture_set *cur, double dx)
{
	double below = moved_by(m, m->total, c, base, cur) - moved_by(m, m->self, c, base, cur);

	return below * dx > 0 && fabs(below) >= 0.5 * fabs(dx);
}

/* The row that X (row k of the tested rows, gone or new: kind) moved into; SIZE_MAX none. */
static size_t moved_mate(const func_matrix *m, const capture_set *base, const capture_set *cur,
			 const size_t *rows, char *const *names, const int *kind, size_t n,
			 size_t k)
{
	size_t nb = base->n, col0 = kind[k] == 1 ? 0 : nb, ncol = kind[k] == 1 ? nb : cur->n;
	double dx = moved_by(m, m->self, rows[k], base, cur);
	size_t mate = SIZE_MAX, found = 0, below_mate = SIZE_MAX, below_found = 0;

	for (size_t j = 0; j < n; j++) {
		double dc;
		if (j == k || kind[j] || !names[j] || !contains(m, rows[j], rows[k], col0, ncol))
			continue;
		dc = moved_by(m, m->self, rows[j], base, cur);
		if (!(dc * dx < 0) || fabs(dc) < 0.5 * fabs(dx) || fabs(dc) > 2 * fabs(dx) ||
		    diluted_only(mean_share(m, m->self, rows[j], 0, base), dx, dc) ||
		    !moved_beyond_noise(m, rows[j], base, cur, dc < 0) ||
		    passed_through(m, base, cur, rows[j], rows[k], col0, ncol, dx))
			continue;
		found++;
		mate = j;
		if (moved_below(m, rows[j], base, cur, dx)) {
			below_found++;
			below_mate = j;
		}
	}
	/*
	 * Several callers qualify (functions elsewhere in the profile whose
	 * self share moved by chance; 3 for one extracted helper, and no pair
	 * was made): the one whose callees moved with X, when it is one.
	 */
	if (found > 1 && below_found == 1)
		return below_mate;
	return found == 1 ? mate : SIZE_MAX;
}

/*
 * A callee inlined into several callers, or split out of several: a
 * compiler's choice at another optimisation level or with a profile to
 * guide it (-O1 against -O2, Go's PGO). None of the callers holds the
 * whole callee, so moved_mate finds none, and the same code was a
 * critical regression from nothing beside improvements of its callers
 * (perf of one C program built at -O2 and at -O1: hash_key 0.00 ->
 * 50.79, its two callers 40.33 -> 1.15 and 2.79 -> 0.08).
 *
 * The callers of X here are the functions present on both sides whose
 * self share moved the other way beyond its noise while their total
 * (inclusive) share held (moved by under half as much): their code's
 * cost stayed, only where it is counted moved. (Dilution moves a total
 * at least as much as its self share: no such caller is only diluted.)
 * On X's side their callees hold at least half of what each moved. Two
 * to MOVED_CALLERS_MAX of them, whose moves together come
 * to between half and twice X's, are X's callers, when no other
 * function's total moved with X by half its change or more (moved_callers):
 * the rows are summed capture by capture under the caller that moved
 * most, named "C (+X, +C2)". New code under several callers raises their
 * totals, or another function's, and is judged on its own as before.
 */
#define MOVED_CALLERS_MAX 8

/* Mean share of row r's callees (total less self) on the side of columns col0.. (cs). */
static double callees_share(const func_matrix *m, size_t r, size_t col0, const capture_set *cs)
{
	return mean_share(m, m->total, r, col0, cs) - mean_share(m, m->self, r, col0, cs);
}

/* X's callers (above) into out, how many; 0 when they are not 2 to MOVED_CALLERS_MAX. */
static size_t moved_callers(size_t *out, const func_matrix *m, const capture_set *base,
			    const capture_set *cur, const size_t *rows, char *const *names,
			    char *const *was, const int *kind, const size_t *into, size_t n,
			    size_t k)
{
	const capture_set *side = kind[k] == 1 ? base : cur;
	size_t col0 = kind[k] == 1 ? 0 : base->n, found = 0;
	double dx = moved_by(m, m->self, rows[k], base, cur), sum = 0;

	for (size_t j = 0; j < n; j++) {
		double dc, dt;
		if (j == k || kind[j] || into[j] || !names[j] || was[j])
			continue;
		dc = moved_by(m, m->self, rows[j], base, cur);
		if (!(dc * dx < 0))
			continue;
		dt = moved_by(m, m->total, rows[j], base, cur);
		if (!(fabs(dt) < 0.5 * fabs(dc)) ||
		    !(callees_share(m, rows[j], col0, side) >= 0.5 * fabs(dc)) ||
		    !moved_beyond_noise(m, rows[j], base, cur, dc < 0))
			continue;
		if (found == MOVED_CALLERS_MAX)
			return 0;
		out[found++] = j;
		sum += dc;
	}
	if (found < 2 || fabs(sum) < 0.5 * fabs(dx) || fabs(sum) > 2 * fabs(dx))
		return 0;
	/*
	 * Only a move: the callers' cost went to X, not elsewhere. A new check
	 * under an unchanged validate() that two handlers call, released with
	 * the handlers made cheaper by as much, raised the total of validate,
	 * which holds the check; new code elsewhere, while the handlers' cost
	 * went into a callee both releases have, raised that callee's own
	 * share. Each beyond its noise and by half X's change or more. A
	 * function above the callers (holding each of them) is left out: its
	 * total drifts with the day's traffic.
	 */
	for (size_t j = 0; j < n; j++) {
		bool caller = false, above = true;
		double dt, ds;
		for (size_t i = 0; i < found && !caller; i++)
			caller = out[i] == j;
		if (j == k || caller || kind[j] || !names[j])
			continue;
		for (size_t i = 0; i < found && above; i++)
			above = contains(m, rows[j], rows[out[i]], col0, side->n);
		if (above)
			continue;
		ds = moved_by(m, m->self, rows[j], base, cur);
		dt = moved_by(m, m->total, rows[j], base, cur);
		if ((ds * dx > 0 && fabs(ds) >= 0.5 * fabs(dx) &&
		     moved_beyond_noise(m, rows[j], base, cur, ds < 0)) ||
		    (dt * dx > 0 && fabs(dt) >= 0.5 * fabs(dx) &&
		     contains(m, rows[j], rows[k], col0, side->n) &&
		     moved_beyond_noise_of(m, m->total, rows[j], base, cur, dt < 0)))
			return 0;
	}
	return found;
}

/*
 * Merge X (row k) with its callers c[0..nc) under the one that moved
 * most: summed capture by capture, named "C (+X, +C2, ...)"; the others'
 * kind set to -1 (tested as part of it). 0 or PR_ENOMEM.
 */
static int merge_callers(func_matrix *m, const capture_set *base, const capture_set *cur,
			 const size_t *rows, char **names, int *kind, size_t k, const size_t *c,
			 size_t nc)
{
	size_t host = c[0];
	buf b = BUF_INIT;
	int64_t *to;

	for (size_t i = 1; i < nc; i++)
		if (fabs(moved_by(m, m->self, rows[c[i]], base, cur)) >
		    fabs(moved_by(m, m->self, rows[host], base, cur)))
			host = c[i];
	if (buf_printf(&b, "%s (+%s", names[host], names[k]) < 0)
		goto nomem;
	for (size_t i = 0; i < nc; i++)
		if (c[i] != host && buf_printf(&b, ", +%s", names[c[i]]) < 0)
			goto nomem;
	if (buf_putc(&b, ')') < 0)
		goto nomem;
	to = m->self + rows[host] * m->ncaps;
	for (size_t i = 0; i <= nc; i++) {
		size_t r = i == nc ? k : c[i];
		const int64_t *from = m->self + rows[r] * m->ncaps;
		if (r == host)
			continue;
		/* As the families sum: an unknown value (a capture cut to its top) adds nothing. */
		for (size_t j = 0; j < m->ncaps; j++)
			if (from[j] != FUNC_MATRIX_UNKNOWN)
				to[j] = from[j] + imax(to[j], 0);
		kind[r] = -1;
	}
	free(names[host]);
	names[host] = buf_detach(&b, NULL);
	return 0;
nomem:
	buf_release(&b);
	return PR_ENOMEM;
}

/*
 * After the pairs of one caller, each X left (kind 1 or 2, no caller of
 * its own) with its several callers, where no caller is another X's too.
 * into[c] > 0 marks a row already a pair's caller. 0 or PR_ENOMEM.
 */
static int merge_split(func_matrix *m, const capture_set *base, const capture_set *cur,
		       const size_t *rows, char **names, char *const *was, int *kind,
		       const size_t *into, size_t n)
{
	size_t *callers = calloc(n * MOVED_CALLERS_MAX + 1, sizeof(*callers));
	size_t *ncallers = calloc(n + 1, sizeof(*ncallers)),
	       *claims = calloc(n + 1, sizeof(*claims));
	int rc = 0;

	if (!callers || !ncallers || !claims) {
		rc = PR_ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < n; k++) {
		if (kind[k] != 1 && kind[k] != 2)
			continue;
		ncallers[k] = moved_callers(callers + k * MOVED_CALLERS_MAX, m, base, cur, rows,
					    names, was, kind, into, n, k);
		for (size_t i = 0; i < ncallers[k]; i++)
			claims[callers[k * MOVED_CALLERS_MAX + i]]++;
	}
	for (size_t k = 0; k < n && rc == 0; k++) {
		const size_t *c = callers + k * MOVED_CALLERS_MAX;
		bool alone = ncallers[k] > 0;
		for (size_t i = 0; i < ncallers[k]; i++)
			alone = alone && claims[c[i]] == 1 && kind[c[i]] == 0;
		if (alone)
			rc = merge_callers(m, base, cur, rows, names, kind, k, c, ncallers[k]);
	}
out:
	free(callers);
	free(ncallers);
	free(claims);
	return rc;
}

/*
 * Merge the functions that only moved between caller and callee (see
 * above) among a target's tested rows, with m->total loaded (nothing
 * without it). *nrows shrinks by one a pair; was and was_id move with
 * their rows.
 */
static int merge_moved(func_matrix *m, const capture_set *base, const capture_set *cur,
		       size_t *rows, int64_t *ids, char **names, char **files, char **was,
		       int64_t *was_id, size_t *nrows)
{
	size_t n = *nrows;
	int *kind = NULL;
	size_t *mate = NULL, *into = NULL;
	buf b = BUF_INIT;
	int rc = 0;

	if (!m->total || n < 2)
		return 0;
	if (!(kind = calloc(n, sizeof(*kind))) || !(mate = calloc(n, sizeof(*mate))) ||
	    !(into = calloc(n, sizeof(*into)))) {
		rc = PR_ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < n; k++) {
		kind[k] = names[k] && !was[k] ? gone_or_new(m, rows[k], base->n, cur->n) : 0;
		into[k] = 0;
	}
	for (size_t k = 0; k < n; k++)
		mate[k] = kind[k] ? moved_mate(m, base, cur, rows, names, kind, n, k) : SIZE_MAX;
	for (size_t k = 0; k < n; k++)
		if (mate[k] != SIZE_MAX)
			into[mate[k]]++;
	for (size_t k = 0; k < n; k++) {
		size_t c = mate[k];
		int64_t *to, *from;
		if (c == SIZE_MAX || into[c] != 1 || was[c])
			continue;
		to = m->self + rows[c] * m->ncaps;
		from = m->self + rows[k] * m->ncaps;
		/* As the families sum: an unknown value (a capture cut to its top) adds nothing. */
		for (size_t i = 0; i < m->ncaps; i++)
			if (from[i] != FUNC_MATRIX_UNKNOWN)
				to[i] = from[i] + imax(to[i], 0);
		buf_reset(&b);
		if (buf_printf(&b, "%s (+%s)", names[c], names[k]) < 0) {
			rc = PR_ENOMEM;
			goto out;
		}
		free(names[c]);
		names[c] = buf_detach(&b, NULL);
		kind[k] = -1; /* tested as part of c */
	}
	if ((rc = merge_split(m, base, cur, rows, names, was, kind, into, n)) < 0)
		goto out;
	drop_merged(kind, rows, ids, names, files, was, was_id, nrows);
out:
	free(kind);
	free(mate);
	free(into);
	buf_release(&b);
	return rc;
}

analysis_input *analysis_input_load(db *d, const analysis_opts *o, const analysis_target *t,
				    const analysis_cohort *c)
{
	analysis_input *in = calloc(1, sizeof(*in));
	double t0 = time_mono();

	if (!in)
		return NULL;
	if (c && (!c->cohort_hosts || !c->control_hosts))
		c = NULL;
	in->rc = load_sides(&in->s, d, t, c, o, &in->err);
	/* Not for a canary: its control is captured at the same time. */
	if (in->rc == 0 && !c && in->s.cur.n && in->s.base.n >= o->min_baseline)
		hours_filter(&in->s);
	/* The values only of a target that will be tested (analysis_add_loaded skips the rest). */
	if (in->rc == 0 && in->s.cur.n > 0 && in->s.base.n >= o->min_baseline &&
	    in->s.base.n >= 2) {
		in->rc = func_matrix_load(&in->m, d, &in->s.base, &in->s.cur, &in->err);
		in->has_m = in->rc == 0;
		if (in->has_m)
			in->rc = select_rows(in, d, o);
		/* Totals only where a function came or went (see merge_moved). */
		for (size_t k = 0; in->rc == 0 && k < in->nrows; k++)
			if (gone_or_new(&in->m, in->rows[k], in->s.base.n, in->s.cur.n)) {
				in->rc = func_matrix_load_totals(&in->m, d, &in->s.base,
								 &in->s.cur, &in->err);
				break;
			}
	}
	in->seconds = time_mono() - t0;
	return in;
}

int analysis_add_cohort(analysis *a, db *d, const analysis_target *t, const analysis_cohort *c,
			bool store, pr_error *err)
{
	analysis_input *in = analysis_input_load(d, &a->opts, t, c);

	if (!in)
		return oom(err);
	return analysis_add_loaded(a, d, t, c, in, store, err);
}

/* Why a release alone with enough captures has no baseline: one of two reasons. */
#define FIRST_RELEASE_HINT \
	": the baseline is earlier releases' captures and none has any yet, as for a " \
	"service's first release (the next release is judged against it); a release " \
	"name every deploy reuses never leaves one"

/*
 * Another release captured between the first and the last capture of
 * the target's release (a rollback to it, or two releases side by side),
 * as a new string in *out; NULL when there is none.
 */
static int release_between(char **out, db *d, const analysis_target *t, const sides *s,
			   pr_error *err)
{
	char **rels = NULL;
	size_t n = 0;
	int rc;

	*out = NULL;
	if (!t->release || s->cur.n == 0)
		return 0;
	if ((rc = capture_releases_in(&rels, &n, d, t->service_id, t->type,
				      s->cur.caps[0].captured_at_us,
				      s->cur.caps[s->cur.n - 1].captured_at_us + 1, err)) < 0)
		return rc;
	for (size_t k = 0; k < n && !*out; k++)
		if (strcmp(rels[k], t->release) && !(*out = strdup(rels[k])))
			rc = oom(err);
	capture_releases_free(rels, n);
	return rc;
}

/*
 * Traffic to one caller. A day that sends twice the requests to one
 * endpoint raises every function under it alike, and each of them, its
 * share up by half or more, was a regression; the captures of that day,
 * or of two, were all the judged ones had, and the day share (above)
 * cannot take out a day the baseline never had. Code made slower moves
 * its own functions, and the caller's own code keeps its level: so a
 * function that moved with the rest of a caller's subtree, the caller's
 * own self share and at least CALLER_MIN_KIN other functions under it
 * moving alike, is judged within the caller as well (its self over the
 * caller's total), and keeps the larger of the two p-values. Two
 * regressions under one caller leave the caller's own code where it
 * was, and a caller with two callees slower in one release has no five
 * others moving: they are judged as before. (On an independent
 * simulator's fleets, an endpoint's traffic 2.5 times for two days paged
 * for a function under it in 5 services of 12 that changed nothing.)
 */
#define CALLER_SCAN_P 0.01 /* only a test this significant is looked at again */
#define CALLER_MIN_KIN 5   /* the caller's other functions that must move alike */
/*
 * How sure the caller's own move must be: a handler's own code is often
 * a tenth of a percent, a few samples a capture, and its rise with the
 * traffic is seldom significant alone; the direction and size are.
 */
#define CALLER_SELF_P 0.25
/* How sure the rest of its subtree's rise must be (two captures give few degrees of freedom). */
#define CALLER_REST_P 0.05

/* The one-sided Welch p-value of b[0..nb) against c[0..nc) moving `up` (or down); 1: untestable. */
static double welch_p(const double *b, size_t nb, const double *c, size_t nc, bool up)
{
	stats_sample sb, sc;
	stats_test_opts o = STATS_TEST_OPTS_INIT;
	stats_result r;

	o.alt = up ? STATS_GREATER : STATS_LESS;
	if (nb < 2 || nc < 2 || stats_sample_of(&sb, b, nb, 0) < 0 ||
	    stats_sample_of(&sc, c, nc, 0) < 0 || stats_test_welch(&r, &sb, &sc, &o) < 0 ||
	    !isfinite(r.p))
		return 1;
	return r.p;
}

/*
 * Whether caller c's own self share moved the way x's did (CALLER_SELF_P)
 * and by at least half of x's relative move `rel`: more
 * requests run the caller's own code as well as its callees'. Two
 * regressions under one caller leave its own code where it was. (Which
 * functions lie below c is known only from the totals, which many
 * functions outside its subtree also fit under.)
 */
static bool self_moved(const func_matrix *m, size_t c, const capture_set *base,
		       const capture_set *cur, double rel, double *b, double *w)
{
	size_t nb = 0, nc = 0;
	double sb, sc;

	for (size_t j = 0; j < base->n + cur->n; j++) {
		int64_t v = m->self[c * m->ncaps + j];
		if (v == FUNC_MATRIX_UNKNOWN)
			continue;
		if (j < base->n)
			b[nb++] = capture_share(&base->caps[j], v);
		else
			w[nc++] = capture_share(&cur->caps[j - base->n], v);
	}
	sb = mean_of(b, nb);
	sc = mean_of(w, nc);
	if (!(sb > 0) || welch_p(b, nb, w, nc, rel > 0) > CALLER_SELF_P)
		return false;
	return rel > 0 ? sc / sb - 1 >= 0.5 * rel : sc / sb - 1 <= 0.5 * rel;
}

/*
 * Whether at least CALLER_MIN_KIN other functions that c's total holds
 * (contains) moved the way x did in this target's tests from tests[first]
 * on, each significantly (CALLER_SCAN_P, its p-values up and down as
 * they were before any was judged within a caller, p_was[2 k] and
 * p_was[2 k + 1] for tests[first + k]) and by at least half of x's
 * relative move `rel`: traffic moves the whole subtree, a release's
 * slower code a function or a few (an incident of a caller and two
 * callees is three findings, as before).
 */
static bool kin_moved(const analysis *a, size_t first, const double *p_was, const func_matrix *m,
		      const capture_set *base, const capture_set *cur, size_t c, size_t x,
		      double rel)
{
	size_t nb = base->n, kin = 0;

	for (size_t i = first; i < a->ntests && kin < CALLER_MIN_KIN; i++) {
		const finding *g = &a->tests[i];
		double sb, sc;
		if (g->row == x || g->row == c || g->row == SIZE_MAX ||
		    strcmp(g->kind, FINDING_KIND_SHARE) != 0 ||
		    !(p_was[2 * (i - first) + (rel > 0 ? 0 : 1)] <= CALLER_SCAN_P))
			continue;
		sb = mean_share(m, m->self, g->row, 0, base);
		sc = mean_share(m, m->self, g->row, nb, cur);
		if (!(sb > 0) || !isfinite(sc) ||
		    !(rel > 0 ? sc / sb - 1 >= 0.5 * rel : sc / sb - 1 <= 0.5 * rel) ||
		    !contains(m, c, g->row, 0, nb + cur->n))
			continue;
		kin++;
	}
	return kin >= CALLER_MIN_KIN;
}

/* The name of row `row` among this target's tests from tests[first] on; "a caller" if untested. */
static const char *caller_name(const analysis *a, size_t first, size_t row)
{
	for (size_t i = first; i < a->ntests; i++)
		if (a->tests[i].row == row && a->tests[i].function)
			return a->tests[i].function;
	return "a caller";
}

/*
 * Whether test f is one to judge within its callers: a share that rose
 * (CALLER_SCAN_P) of a cost that flows with requests (CPU, wall time,
 * allocations). A heap's or goroutines' level held under one handler is
 * how a leak looks, not traffic; and a fall is what every regression
 * does to the other shares (dilution, which renormalised_retest judges).
 */
static bool judged_within(const finding *f)
{
	return strcmp(f->kind, FINDING_KIND_SHARE) == 0 && f->row != SIZE_MAX && f->delta > 0 &&
	       f->p_up <= CALLER_SCAN_P && f->type &&
	       (strcmp(f->type, "cpu") == 0 || strcmp(f->type, "wall") == 0 ||
		strcmp(f->type, "alloc") == 0);
}

/* Whether a test from tests[first] on is one judged_within takes. */
static bool any_moved(const analysis *a, size_t first)
{
	for (size_t i = first; i < a->ntests; i++)
		if (judged_within(&a->tests[i]))
			return true;
	return false;
}

/* Whether row r's total holds its self in every capture: not so for a row merged after them. */
static bool totals_hold(const func_matrix *m, size_t r, size_t ncols)
{
	for (size_t j = 0; j < ncols; j++) {
		int64_t t = m->total[r * m->ncaps + j], v = m->self[r * m->ncaps + j];
		if (t != FUNC_MATRIX_UNKNOWN && v != FUNC_MATRIX_UNKNOWN && t < v)
			return false;
	}
	return true;
}

/*
 * Judge test f (row x, relative rise rel) within caller c (x itself: its
 * own callees): into *within the one-sided p-value of x's self over c's
 * total rising, and into *rest_p that of the rest of c's subtree (its
 * total less x's subtree, or x's self) rising. False when c is no
 * caller to judge x within (its own code, or five others under it, did
 * not move alike; or x's part of it fell significantly, which more calls
 * into c do not do). v, w, fb, fc: scratch of base->n + cur->n each.
 */
static bool within_caller(const analysis *a, size_t first, const double *p_was,
			  const func_matrix *m, const capture_set *base, const capture_set *cur,
			  size_t c, size_t x, double rel, double *within, double *rest_p, double *v,
			  double *w, double *fb, double *fc, double *xb)
{
	size_t nb = base->n, nc = cur->n, kb = 0, kc = 0, rb = 0, rc = 0;
	double r, r_p;

	for (size_t j = 0; j < nb + nc; j++) {
		const capture_ref *cap = j < nb ? &base->caps[j] : &cur->caps[j - nb];
		int64_t et = m->total[c * m->ncaps + j], xs = m->self[x * m->ncaps + j];
		int64_t xt = c == x ? xs : m->total[x * m->ncaps + j];
		if (et == FUNC_MATRIX_UNKNOWN || xs == FUNC_MATRIX_UNKNOWN || et <= 0)
			continue;
		if (j < nb) {
			xb[rb] = capture_share(cap, xs);
			v[rb++] = capture_share(cap, et - xt);
			fb[kb++] = (double)xs / (double)et;
		} else {
			w[rc++] = capture_share(cap, et - xt);
			fc[kc++] = (double)xs / (double)et;
		}
	}
	*rest_p = welch_p(v, rb, w, rc, true);
	*within = welch_p(fb, kb, fc, kc, true);
	if (*rest_p > CALLER_REST_P || welch_p(fb, kb, fc, kc, false) <= CALLER_SCAN_P)
		return false;
	/*
	 * The totals say only that c is big enough to hold x. Below its real
	 * caller, x rises and falls with the caller's traffic from capture
	 * to capture in the baseline; beside an unrelated one it does not
	 * (an endpoint made 2.5 times busier while x, under another handler,
	 * got 3 times slower hid x's regression).
	 */
	if (c != x &&
	    (stats_correlation(&r, &r_p, xb, v, rb) < 0 || !(r > 0) || r_p > CALLER_REST_P))
		return false;
	return (c == x || self_moved(m, c, base, cur, rel, v, w)) &&
	       kin_moved(a, first, p_was, m, base, cur, c, x, rel);
}

/*
 * For each test of this target from tests[first] on that judged_within
 * takes, the callers whose whole subtree rose with it: its p-value up
 * becomes the larger of its own and its share of that caller's total
 * rising. The callers are x itself and those whose total holds x's
 * (contains). The totals say only that a function is big enough to hold
 * x: an endpoint made busier beside x's own, x slower in another
 * handler, is one of those, and x's part of its total fell
 * (within_caller leaves it out), and x does not follow its traffic from
 * capture to capture in the baseline. *moved counts the tests that no
 * longer pass CALLER_SCAN_P, and *caller is the caller (a row) of the
 * one that moved the most surely.
 */
static int judge_within_callers(analysis *a, size_t first, const func_matrix *m,
				const capture_set *base, const capture_set *cur, const size_t *rows,
				size_t nrows, size_t *moved, size_t *caller)
{
	size_t nb = base->n, nc = cur->n, n = nb + nc, nt = a->ntests - first;
	double best = INFINITY;
	double *v = malloc((5 * n + 2 * nt + 1) * sizeof(*v)), *w = v ? v + n : NULL;
	double *fb = w ? w + n : NULL, *fc = fb ? fb + n : NULL, *xb = fc ? fc + n : NULL;
	double *p_was = xb ? xb + n : NULL;
	bool *sound = malloc((nrows + 1) * sizeof(*sound));

	*moved = 0;
	if (!v || !sound) {
		free(v);
		free(sound);
		return STATS_ENOMEM;
	}
	for (size_t i = 0; i < nt; i++) {
		p_was[2 * i] = a->tests[first + i].p_up;
		p_was[2 * i + 1] = a->tests[first + i].p_down;
	}
	/* Once a target, not once a test: which rows' totals can be read. */
	for (size_t k = 0; k < nrows; k++)
		sound[k] = totals_hold(m, rows[k], n);
	for (size_t i = first; i < a->ntests; i++) {
		finding *f = &a->tests[i];
		size_t x = f->row;
		double sx_b, sx_c, rel;
		if (!judged_within(f) || !totals_hold(m, x, n))
			continue;
		sx_b = mean_share(m, m->self, x, 0, base);
		sx_c = mean_share(m, m->self, x, nb, cur);
		if (!(sx_b > 0) || !isfinite(sx_c))
			continue;
		rel = sx_c / sx_b - 1;
		/* The functions that can hold x, then x itself (its own callees). */
		for (size_t k = 0; k <= nrows; k++) {
			size_t c = k < nrows ? rows[k] : x;
			double within, rest_p;
			if (k < nrows && (c == x || !sound[k] || !contains(m, c, x, 0, n)))
				continue;
			if (!within_caller(a, first, p_was, m, base, cur, c, x, rel, &within,
					   &rest_p, v, w, fb, fc, xb) ||
			    !(within > f->p_up))
				continue;
			if (f->p_up <= CALLER_SCAN_P && within > CALLER_SCAN_P) {
				(*moved)++;
				/* The note names the caller of the strongest move. */
				if (p_was[2 * (i - first)] < best) {
					best = p_was[2 * (i - first)];
					*caller = c;
				}
			}
			f->p_up = within;
		}
	}
	free(v);
	free(sound);
	return 0;
}

/*
 * How sure a step of the last baseline release must be (against the
 * releases before it) to be taken for where a change came from.
 */
#define STEP_P 0.01

/*
 * A change that came with the release that ran before this one and that
 * no run judged: the history before a service is first judged is all a
 * first judgement has, and when a release in it made a function costlier
 * (a code path that calls it more) and this release kept it so, the
 * precision-weighted baseline still leaned on the releases before the
 * step, and this release was a critical regression of a rise it did not
 * make: 5 pages in 300 null service-nights of an independent simulator
 * whose releases add and drop code paths. So where the last baseline
 * release's captures moved from the releases before it (one-sided Welch,
 * STEP_P) the way a test did, the test must also show against that
 * release alone, and keeps the larger p-value. Only where that release
 * ran before the service was first judged: one deployed since was judged
 * (its rise found and carried, or missed, and a miss must not be missed
 * twice) or left out of the baseline. *moved counts the tests this took
 * below CALLER_SCAN_P's significance, *which names one.
 */
/* A share test judge_after_step may hold to the release before: its p-value that way in *p. */
static bool step_candidate(finding *f, double **p)
{
	if (strcmp(f->kind, FINDING_KIND_SHARE) != 0 || f->row == SIZE_MAX)
		return false;
	*p = f->p_up <= f->p_down ? &f->p_up : &f->p_down;
	return **p <= CALLER_SCAN_P;
}

static int judge_after_step(analysis *a, size_t first, db *d, const analysis_target *t,
			    const analysis_target_data *td, const capture_set *base,
			    const capture_set *cur, size_t *moved, size_t *which,
			    const char **release, pr_error *err)
{
	const func_matrix *m = &td->m;
	double *r = NULL, *l = NULL, *c = NULL;
	int last = 0;
	size_t nl = 0;
	int64_t first_us = 0, last_at = 0;
	int rc = 0;

	*moved = 0;
	*which = SIZE_MAX;
	*release = NULL;
	for (size_t i = 0; i < base->n; i++)
		last = td->gb[i] > last ? td->gb[i] : last;
	for (size_t i = 0; i < base->n; i++)
		if (td->gb[i] == last) {
			nl++;
			*release = base->caps[i].release;
			if (base->caps[i].captured_at_us > last_at)
				last_at = base->caps[i].captured_at_us;
		}
	if (!d || last < 1 || nl < 2 || !*release)
		return 0;
	/* Most targets have no test this could concern: no query for them. */
	{
		double *p;
		size_t i = first;
		while (i < a->ntests && !step_candidate(&a->tests[i], &p))
			i++;
		if (i == a->ntests)
			return 0;
	}
	/*
	 * Only for history from before the service was first judged (a first
	 * judgement, and its release's later looks): a release deployed
	 * after it that no run judged is no baseline unless too few judged
	 * captures remain, and its rise must not pass because the hotfix
	 * after it, deployed before the next nightly, kept it.
	 */
	if ((rc = baseline_first_judged(&first_us, d, t->service_id, t->type, a->opts.at_us, err)) <
		    0 ||
	    (first_us && last_at >= first_us))
		return rc;
	if (!(r = malloc(base->n * sizeof(*r))) || !(l = malloc(base->n * sizeof(*l))) ||
	    !(c = malloc((cur->n ? cur->n : 1) * sizeof(*c)))) {
		rc = oom(err);
		goto out;
	}
	for (size_t i = first; i < a->ntests; i++) {
		finding *f = &a->tests[i];
		size_t nr = 0, nll = 0, nc = 0;
		bool up;
		double *p, after;
		if (!step_candidate(f, &p))
			continue;
		up = p == &f->p_up;
		for (size_t j = 0; j < base->n + cur->n; j++) {
			int64_t v = m->self[f->row * m->ncaps + j];
			if (v == FUNC_MATRIX_UNKNOWN)
				continue;
			if (j >= base->n)
				c[nc++] = churn_share(td, &cur->caps[j - base->n], j, f->row, v);
			else if (td->gb[j] == last)
				l[nll++] = churn_share(td, &base->caps[j], j, f->row, v);
			else
				r[nr++] = churn_share(td, &base->caps[j], j, f->row, v);
		}
		if (welch_p(r, nr, l, nll, up) > STEP_P)
			continue;
		after = welch_p(l, nll, c, nc, up);
		if (!(after > *p))
			continue;
		if (after > CALLER_SCAN_P) {
			(*moved)++;
			if (*which == SIZE_MAX)
				*which = i;
		}
		*p = after;
		f->p_value = fmin(f->p_up, f->p_down);
	}
out:
	free(r);
	free(l);
	free(c);
	return rc;
}

int analysis_add_loaded(analysis *a, db *d, const analysis_target *t, const analysis_cohort *c,
			analysis_input *in, bool store, pr_error *err)
{
	const analysis_opts *o = &a->opts;
	sides s;
	analysis_target_data td;
	baseline_func *bf = NULL;
	size_t *rows = NULL, nrows = 0, look, first_look, first_test = 0, *stable = NULL,
	       nstable = 0;
	int64_t *ids = NULL, baseline_id = 0;
	char **names = NULL, **files = NULL, **was = NULL, *releases = NULL, *capids = NULL;
	int64_t *was_id = NULL;
	series sb = {0}, sc = {0};
	bool reused, shares = true, unseen = false;
	double t_tests = 0, t0 = time_mono();
	size_t ntests0 = a->ntests, maxn;
	int rc;

	memset(&td, 0, sizeof(td));
	if (c && (!c->cohort_hosts || !c->control_hosts))
		c = NULL;
	/* The input's sides and values are this target's now; its load was database time. */
	s = in->s;
	memset(&in->s, 0, sizeof(in->s));
	td.hours_unseen = s.hours_unseen;
	t0 -= in->seconds;
	if ((rc = in->rc) < 0) {
		*err = in->err;
		goto out;
	}
	if (s.cur.n == 0 && s.cur_warming > 0) {
		bool one = s.cur_warming == 1;
		long long w = (long long)((t->warmup_us ? *t->warmup_us : o->warmup_us) / 1000000);
		char what[1200];
		if (t->release)
			snprintf(what, sizeof(what), "of release '%s'%s", t->release,
				 c ? " on the cohort's hosts" : "");
		else
			snprintf(what, sizeof(what), "in the selected time range");
		rc = skip(a, t, err, "the %zu %s capture%s %s with samples %s taken in the "
			  "warm-up, less than %lld s from a deploy of %s (warmup_s)",
			  s.cur_warming, t->type, one ? "" : "s", what, one ? "was" : "were", w,
			  t->release ? "the release" : one ? "its release" : "their release");
		goto out;
	}
	if (s.cur.n == 0 && s.cur_empty > 0) {
		bool one = s.cur_empty == 1;
		rc = t->release ? skip(a, t, err, "the %zu %s capture%s of release '%s'%s %s no "
				       "samples", s.cur_empty, t->type, one ? "" : "s", t->release,
				       c ? " on the cohort's hosts" : "", one ? "holds" : "hold")
				: skip(a, t, err, "the %zu %s capture%s in the selected time range "
				       "%s no samples", s.cur_empty, t->type, one ? "" : "s",
				       one ? "holds" : "hold");
		goto out;
	}
	if (s.cur.n == 0) {
		rc = t->release ? skip(a, t, err, "no %s captures of release '%s'%s", t->type,
				       t->release, c ? " on the cohort's hosts" : "")
				: skip(a, t, err, "no %s captures in the selected time range",
				       t->type);
		if (rc == 0)
			a->skipped[a->nskipped - 1].no_current = true;
		goto out;
	}
	if (c && (s.base.n < o->min_baseline || s.base.n < 2)) {
		char from[TIME_FMT_MAX], to[TIME_FMT_MAX];
		time_format(from, s.window_start);
		time_format(to, s.window_end);
		rc = skip(a, t, err,
			  "insufficient control: %zu eligible %s captures of the control hosts "
			  "from %s to %s (need %zu)",
			  s.base.n, t->type, from, to, o->min_baseline);
		goto out;
	}
	if (s.base.n < o->min_baseline || s.base.n < 2) {
		char when[TIME_FMT_MAX], hint[96] = "", empty[64] = "", *other = NULL;

		/*
		 * A release with captures enough for a baseline of its own is
		 * most often one name given to every deploy ("prod", "main"):
		 * say so, or the skip reads as if nothing had been captured.
		 * Unless another release ran among its captures: then it went
		 * and came back (a rollback), and its baseline is still what
		 * ran before its first capture.
		 */
		if ((rc = release_between(&other, d, t, &s, err)) < 0)
			goto out;
		/*
		 * Only where nothing at all ran before: a service with an
		 * earlier release (a thin baseline) does change its names.
		 */
		if (t->release && s.cur.n >= o->min_baseline && s.cur.n >= 2 && !other &&
		    s.base.n == 0)
			snprintf(hint, sizeof(hint),
				 "; the release alone has %zu captures from then on", s.cur.n);
		time_format(when, s.window_end);
		if (s.base_empty)
			snprintf(empty, sizeof(empty), "; %zu more there hold no samples",
				 s.base_empty);
		if (other)
			rc = skip(a, t, err,
				  "insufficient baseline: %zu eligible %s captures in the %lld "
				  "days before %s (need %zu), the first capture of release '%s'%s; "
				  "release '%s' ran among its captures (a rollback, or releases "
				  "side by side): the baseline is what ran before a release's "
				  "first capture", s.base.n, t->type,
				  (long long)(o->window_us / DAY_US), when, o->min_baseline,
				  t->release, empty, other);
		else
			rc = skip(a, t, err,
				  "insufficient baseline: %zu eligible %s captures in the %lld "
				  "days before %s (need %zu)%s%s%s",
				  s.base.n, t->type, (long long)(o->window_us / DAY_US), when,
				  o->min_baseline, empty, hint,
				  *hint ? FIRST_RELEASE_HINT : "");
		free(other);
		goto out;
	}
	/*
	 * A canary against its control is one comparison of one window, not
	 * a night of a release's sequence: its first look, however many days
	 * the canary baked (counted as nights, a week's bake had spent its
	 * alpha before its only comparison).
	 */
	look = c && !o->fixed_look ? 1 : look_of(t, &s, o);
	/*
	 * A release no stored run judged before this run's time (deployed
	 * while no nightly ran, for longer than the catch-up) was never
	 * tested on its earlier looks: this look may spend their alpha too.
	 * Judged with none, it found nothing for good, and once judged it
	 * was the next release's baseline, regression and all. Any stored
	 * judgement before now counts, however close: each run numbers the
	 * nights from its own time, so one a few hours before (a gate, then
	 * the nightly; a nightly that started a little earlier than the day
	 * before) had already spent those looks. One at this very time is
	 * this night run again, which spends as it did.
	 */
	first_look = look;
	if (look > 1 && t->release && !c && !o->fixed_look) {
		bool judged;
		if ((rc = baseline_release_judged(&judged, d, t->service_id, t->type, t->release,
						  o->at_us - 1, err)) < 0)
			goto out;
		if (!judged)
			first_look = 1;
	}
	if (!in->has_m) { /* loaded for other options: no input mixes two targets */
		rc = pr_error_set(err, PR_ERR, "the input of service '%s' has no values",
				  t->service);
		goto out;
	}
	td.m = in->m;
	memset(&in->m, 0, sizeof(in->m));
	maxn = s.base.n > s.cur.n ? s.base.n : s.cur.n;
	if (!(td.gb = group_ids(&s.base)) || !(td.gc = group_ids(&s.cur)) ||
	    host_ids(&td.hb, &td.hc, &s.base, &s.cur) < 0 ||
	    day_ids(&td.db, &td.dc, &s.base, &s.cur,
		    (t->week ? t->week : &o->week)->utc_offset_h) < 0 ||
	    !(sb.share = calloc(maxn * 4, sizeof(double))) ||
	    !(sc.share = calloc(maxn * 4, sizeof(double))) ||
	    target_weeks(&td, &s.base, &s.cur, t->week ? t->week : &o->week) < 0 ||
	    !(sb.group = calloc(maxn * 5, sizeof(int))) ||
	    !(sc.group = calloc(maxn * 5, sizeof(int))) ||
	    !(bf = calloc(td.m.nfuncs ? td.m.nfuncs : 1, sizeof(*bf)))) {
		rc = oom(err);
		goto out;
	}
	sb.vst = sb.share + maxn, sb.rate = sb.vst + maxn, sb.v = sb.rate + maxn;
	sc.vst = sc.share + maxn, sc.rate = sc.vst + maxn, sc.v = sc.rate + maxn;
	sb.host = sb.group + maxn, sc.host = sc.group + maxn;
	sb.week = sb.host + maxn, sc.week = sc.host + maxn;
	sb.day = sb.week + maxn, sc.day = sc.week + maxn;
	sb.at = sb.day + maxn, sc.at = sc.day + maxn;

	/* The rows select_rows kept, with their names: this target's now. */
	rows = in->rows, ids = in->ids, names = in->names, files = in->files;
	nrows = in->nrows;
	in->rows = NULL, in->ids = NULL, in->names = NULL, in->files = NULL;
	in->nrows = 0;
	if (drop_preempt(&td.m, &s.base, &s.cur, rows, ids, names, files, &nrows) < 0) {
		rc = oom(err);
		goto out;
	}
	{
		size_t dropped;
		if ((rc = drop_renaming_objects(&td.m, s.base.n, d, rows, ids, names, files, &nrows,
						&dropped, err)) < 0)
			goto out;
		in->nfiltered += dropped;
	}
	/*
	 * A build that lost its symbols (a stripped binary, a JIT without its
	 * perf map) moves its samples into nameless frames: every function
	 * falls and "[unknown]" rises, a page for nothing. One that gained
	 * them does the opposite. Neither is judged; the reason says why.
	 * Code that never had names and got costlier moves the nameless share
	 * too, but from frames the baseline had, with no named function gone:
	 * that is a regression to judge. So a move of 10 points or more is
	 * judged only when less than half of it is nameless frames new in the
	 * release or named functions gone from it, and no judged capture's
	 * nameless share is more than twice the baseline's (gained: less than
	 * half of it). Symbols lost by a JIT whose methods were each too small
	 * to test, or on some hosts only, send a capture's nameless share far
	 * past that; nameless code twice or five times as costly does not.
	 */
	{
		size_t nb = s.base.n, nc = s.cur.n;
		double ub = unsymbolized_share(&td.m, rows, names, files, nrows, &s.base, 0);
		double uc = unsymbolized_share(&td.m, rows, names, files, nrows, &s.cur, nb);
		double half = fabs(uc - ub) / 2, renamed = 0;
		if (fabs(uc - ub) >= 0.1)
			renamed = uc > ub ? fmax(moved_share(&td.m, rows, names, files, nrows,
							     &s.cur, nb, nb, nc, true, 2),
						 moved_share(&td.m, rows, names, files, nrows,
							     &s.base, 0, nb, nc, false, 1))
					  : fmax(moved_share(&td.m, rows, names, files, nrows,
							     &s.base, 0, nb, nc, true, 1),
						 moved_share(&td.m, rows, names, files, nrows,
							     &s.cur, nb, nb, nc, false, 2));
		bool judged = fabs(uc - ub) < 0.1 || renamed < half;
		for (size_t i = 0; judged && fabs(uc - ub) >= 0.1 && i < nc; i++) {
			double c =
				capture_nameless(&td.m, rows, names, files, nrows, &s.cur, nb, i);
			judged = uc > ub ? c <= 2 * ub : c >= ub / 2;
		}
		if (judged)
			a->nameless = fmax(a->nameless, uc);
		else {
			rc = skip(a, t, err,
				  "%.0f%% of the samples of the judged captures are in frames "
				  "without a name ([unknown], a library's or a raw address), "
				  "against %.0f%% in the baseline: the %s, so shares cannot be "
				  "compared (check the build's symbols)", 100 * uc, 100 * ub,
				  uc > ub ? "release lost its symbols"
					  : "baseline lacked symbols the release has");
			goto out;
		}
	}
	if (merge_families(&td.m, s.base.n, s.cur.n, rows, ids, names, files, &nrows) < 0 ||
	    !(was = calloc(nrows ? nrows : 1, sizeof(*was))) ||
	    !(was_id = calloc(nrows ? nrows : 1, sizeof(*was_id))) ||
	    merge_renamed(&td.m, s.base.n, s.cur.n, rows, ids, names, files, was, was_id,
			  &nrows) < 0 ||
	    merge_moved(&td.m, &s.base, &s.cur, rows, ids, names, files, was, was_id, &nrows) < 0) {
		rc = oom(err);
		goto out;
	}
	a->filtered += in->nfiltered;
	if ((rc = describe_sides(&releases, &capids, &s)) < 0) {
		rc = oom(err);
		goto out;
	}
	for (size_t k = 0; k < nrows; k++)
		if ((rc = baseline_summarize(&bf[k], &td.m, rows[k], 0, &s.base, err)) < 0)
			goto out;
	if (store &&
	    (rc = baseline_store(&baseline_id, &reused, d, t->service_id, t->type, s.window_start,
				 s.window_end, &s.base, bf, nrows, err)) < 0)
		goto out;
	if (grow_tests(a, nrows + 2) < 0) {
		rc = oom(err);
		goto out;
	}
	t_tests = time_mono();
	if (churn_mark(&td, &s.base, &s.cur, rows, nrows) < 0) {
		rc = oom(err);
		goto out;
	}
	sb.churn = sc.churn = td.churn;
	sb.churned = sc.churned = td.churned;
	/* The noise of releases is the noise of the code they share (churn_mark). */
	if (!(stable = malloc((nrows ? nrows : 1) * sizeof(*stable)))) {
		rc = oom(err);
		goto out;
	}
	for (size_t k = 0; k < nrows; k++)
		if (!td.churned[rows[k]])
			stable[nstable++] = rows[k];
	/*
	 * Release-level heterogeneity, pooled over the service's functions:
	 * phi = sum of Cochran's Q / sum of their df (at least 1). One
	 * function's two or three releases say little about it; all of them
	 * together say whether this service's releases differ beyond noise.
	 * A function whose releases differ far beyond that has a spread of
	 * its own (stats_phi_robust, pooled_fit) and is left out of phi.
	 */
	{
		double *qs = calloc(nrows ? nrows : 1, 2 * sizeof(*qs)), *qdfs;
		size_t nq = 0;
		if (!qs) {
			rc = oom(err);
			goto out;
		}
		qdfs = qs + (nrows ? nrows : 1);
		for (size_t k = 0; k < nstable; k++) {
			pooled p;
			series_fill(&sb, &td.m, stable[k], 0, &s.base, td.gb, td.hb, td.db, td.wb,
				    NULL);
			series_fill(&sc, &td.m, stable[k], s.base.n, &s.cur, td.gc, td.hc, td.dc,
				    td.wc, NULL);
			drop_releases_without(&sb, &sc);
			if (sb.n < 2 || sc.n < 1 ||
			    pooled_fit(&p, sb.vst, sb.v, sb.group, sb.n, sc.vst, sc.v, sc.n, 1, 0,
				       NULL, NULL) < 0)
				continue;
			qs[nq] = p.q;
			qdfs[nq++] = p.q_df;
		}
		/* Summed in value order: the same to the last bit whatever the ids. */
		q_order(qs, qdfs, nq);
		stats_phi_robust(&td.phi, &td.phi_df, qs, qdfs, nq);
		free(qs);
	}
	if ((rc = release_noise(&td, &s.base, &s.cur, stable, nstable, &sb, &sc)) < 0 ||
	    (rc = host_share(&td, &s.base, stable, nstable, &sb)) < 0 ||
	    (rc = day_share(&td, &s.base, stable, nstable, &sb, o->weekly)) < 0) {
		rc = rc == STATS_ENOMEM ? oom(err)
		     : pr_error_set(err, PR_ERR, "cannot fit the release noise of service '%s': %s",
				    t->service, stats_error_name(rc));
		goto out;
	}
	{
		const capture_ref *pb = NULL, *pc = NULL;
		/* The whole-service bytes are still tested, at most low (level_load). */
		shares = !rate_changed(&pb, &pc, t->type, &s);
		if (!shares && (rc = skip(a, t, err,
					  "%s sampling rate changed: baseline %" PRId64
					  " %s, judged %" PRId64 " %s; shares are not comparable",
					  t->type, pb->period, pb->period_unit, pc->period,
					  pc->period_unit)) < 0)
			goto out;
	}
	first_test = a->ntests;
	for (size_t k = 0; shares && k < nrows; k++) {
		finding *f = &a->tests[a->ntests];
		memset(f, 0, sizeof(*f));
		series_fill(&sb, &td.m, rows[k], 0, &s.base, td.gb, td.hb, td.db, td.wb, NULL);
		series_fill(&sc, &td.m, rows[k], s.base.n, &s.cur, td.gc, td.hc, td.dc, td.wc,
			    NULL);
		drop_releases_without(&sb, &sc);
		if (sc.n == 0 || sb.n < 2) {
			/* No current capture knows it: nothing to judge. */
			a->filtered++;
			continue;
		}
		if ((rc = test_function(f, &sb, &sc, o, &td)) < 0) {
			finding_clear(f);
			rc = rc == STATS_ENOMEM ? oom(err)
			     : pr_error_set(err, PR_ERR, "cannot test '%s' in service '%s': %s",
					    names[k], t->service, stats_error_name(rc));
			goto out;
		}
		f->function_id = ids[k];
		f->row = rows[k];
		f->function = names[k], names[k] = NULL;
		f->file = files[k], files[k] = NULL;
		f->renamed_from = was[k], was[k] = NULL;
		f->renamed_from_id = was_id[k];
		a->ntests++;
		unseen = unseen || f->hours_unseen;
		if (!describe_test(f, t, &s, releases, capids, baseline_id, look, first_look,
				   a->ntargets)) {
			rc = oom(err);
			goto out;
		}
	}
	/* Totals are read where a function came or went; here, where a share moved too. */
	if (shares && !td.m.total && d && any_moved(a, first_test) &&
	    (rc = func_matrix_load_totals(&td.m, d, &s.base, &s.cur, err)) < 0)
		goto out;
	if (shares && td.m.total) {
		size_t moved = 0, caller = SIZE_MAX;
		if ((rc = judge_within_callers(a, first_test, &td.m, &s.base, &s.cur, rows, nrows,
					       &moved, &caller)) < 0) {
			rc = oom(err);
			goto out;
		}
		if (moved &&
		    (rc = note(
			     a, t, err,
			     "%zu function%s moved with the rest of a caller's subtree and its own "
			     "code (such as %s): more calls into it, not their own code; "
			     "each judged within it",
			     moved, moved == 1 ? "" : "s", caller_name(a, first_test, caller))) < 0)
			goto out;
	}
	if (shares) {
		size_t moved = 0, which = SIZE_MAX;
		const char *rel = NULL;
		if ((rc = judge_after_step(a, first_test, d, t, &td, &s.base, &s.cur, &moved,
					   &which, &rel, err)) < 0)
			goto out;
		if (moved &&
		    (rc = note(a, t, err,
			       "%zu function%s moved with release '%s', which ran before this "
			       "one and no run judged (such as %s), and not since: each judged "
			       "against that release too",
			       moved, moved == 1 ? "" : "s", rel, a->tests[which].function)) < 0)
			goto out;
	}
	free(td.m.total); /* kept with the target for re-tests, which need only self values */
	td.m.total = NULL;
	if (unseen &&
	    (rc = note(a, t, err,
		       "the judged captures were taken at hours the baseline has (almost) no "
		       "captures of: the hour and the release cannot be told apart, and a "
		       "critical finding waits for a second look to be confirmed")) < 0)
		goto out;
	/*
	 * The whole service's cost where known: per unit of load when every
	 * capture has a load figure and the cost is a flow (a busier night is
	 * not a regression), else per second of capture, or bytes in use
	 * (capture_cost).
	 */
	for (int per_load = 1, done = 0; o->cost_tests && per_load >= 0 && !done; per_load--) {
		finding *f = &a->tests[a->ntests];
		cost_said said;
		bool rose;
		memset(f, 0, sizeof(*f));
		rc = cost_test(f, &said, &s, &td, t->type, per_load, o);
		if (rc == STATS_EDATA) {
			finding_clear(f);
			rc = 0;
			/*
			 * Captures that cannot be compared are said so: a cost
			 * test that is silently off passed a 2x regression. The
			 * test per second still runs after a test per unit of
			 * load that could not: it is shown, capped at low.
			 */
			const char *lead = per_load ? "" : "whole-service cost not tested: ";
			if (*said.why && (rc = skip(a, t, err, "%s%s", lead, said.why)) < 0)
				goto out;
			if (!per_load && said.no_duration &&
			    (rc = note(a, t, err,
				       "whole-service cost not tested: no capture "
				       "carries a duration")) < 0)
				goto out;
			continue;
		}
		if (rc < 0) {
			finding_clear(f);
			rc = rc == STATS_ENOMEM ? oom(err)
			     : pr_error_set(err, PR_ERR, "cannot test the cost of service '%s': %s",
					    t->service, stats_error_name(rc));
			goto out;
		}
		if (said.left_out &&
		    (rc = note(a, t, err,
			       "%zu baseline capture%s left out of the cost per unit "
			       "of load: far from the rest (a load figure in another unit?)",
			       said.left_out, said.left_out == 1 ? "" : "s")) < 0)
			goto out;
		/* Said only of a cost that rose: every quiet night would say it. */
		rose = f->current_share > f->baseline_share * (1 + a->opts.rel_margin);
		if (said.beyond && rose &&
		    (rc = note(a, t, err,
			       "cost per unit of load at most low: the judged load "
			       "(%.3g) lies outside what the baseline saw (%.3g to %.3g), whose "
			       "loads are too alike to show how cost follows load",
			       said.load_c, said.load_b_lo, said.load_b_hi)) < 0)
			goto out;
		if (said.level_loaded && !said.level_held && rose &&
		    (rc = note(a, t, err,
			       "%s at most low: the judged load (%.3g) is above the baseline's "
			       "(median %.3g, upper quartile %.3g), and more traffic may hold "
			       "more %s",
			       strcmp(f->cost_unit, "goroutines") == 0 ? "goroutines"
								       : "heap bytes in use",
			       said.load_c, said.load_b_lo, said.load_b_hi,
			       strcmp(f->cost_unit, "goroutines") == 0 ? "goroutines" : "heap")) <
			    0)
			goto out;
		done = 1;
		/* The hours its shares could not tell from the release: its cost neither. */
		f->hours_unseen = unseen || td.hours_unseen;
		f->row = SIZE_MAX;
		f->function = strdup(FINDING_WHOLE_SERVICE);
		f->file = strdup(f->cost_unit);
		a->ntests++;
		if (!f->function || !f->file ||
		    !describe_test(f, t, &s, releases, capids, baseline_id, look, first_look,
				   a->ntargets)) {
			rc = oom(err);
			goto out;
		}
	}
	if (s.unjudged &&
	    (rc = note(a, t, err,
		       "the baseline holds %zu captures of releases no run has judged (%s), for "
		       "want of %zu judged ones: a regression among them would be part of the "
		       "baseline",
		       s.unjudged, s.unjudged_releases, o->min_baseline)) < 0)
		goto out;
	td.base = s.base, td.cur = s.cur;
	if (s.unjudged)
		memcpy(td.unjudged, s.unjudged_releases, sizeof(td.unjudged));
	memset(&s.base, 0, sizeof(s.base));
	memset(&s.cur, 0, sizeof(s.cur));
	td.look = look;
	td.first_look = first_look;
	/* A cohort is not the whole release: the release's lifecycle is not judged on it. */
	if (t->release && !t->cur_ids && !c) {
		analysis_judged *j = realloc(a->judged, (a->njudged + 1) * sizeof(*j));
		if (!j) {
			rc = oom(err);
			goto out;
		}
		a->judged = j;
		j = &j[a->njudged];
		j->service_id = t->service_id;
		j->look = look;
		j->first_us = td.cur.caps[0].captured_at_us;
		j->type = strdup(t->type);
		j->release = strdup(t->release);
		if (!j->type || !j->release) {
			free(j->type), free(j->release);
			rc = oom(err);
			goto out;
		}
		a->njudged++;
	}
	if (keep_target(a, &td) < 0) {
		rc = oom(err);
		goto out;
	}
	a->services++;
	a->stats_seconds += time_mono() - t_tests;
out:
	/* A target that failed half way leaves none of its tests behind. */
	if (rc < 0)
		while (a->ntests > ntests0)
			finding_clear(&a->tests[--a->ntests]);
	/* Everything before the tests is loading, and storing the baseline. */
	a->db_seconds += (t_tests ? t_tests : time_mono()) - t0;
	free(sb.share);
	free(sc.share);
	free(sb.group);
	free(sc.group);
	free(rows);
	free(stable);
	free(ids);
	free(bf);
	free(releases);
	free(capids);
	for (size_t k = 0; was && k < nrows; k++)
		free(was[k]);
	free(was);
	free(was_id);
	func_names_free(names, files, nrows);
	target_data_release(&td);
	sides_release(&s);
	analysis_input_free(in);
	return rc;
}

/*
 * Findings first; regressions, then shifts, then improvements; by
 * severity, then score. Severity before score: a whole-service cost's
 * score (a relative change) is no match for a share's, and a low cost
 * finding listed above a critical regression misled the reader.
 */
static int rank_cmp(const void *x, const void *y)
{
	const finding *a = x, *b = y;

	if (a->significant != b->significant)
		return a->significant ? -1 : 1;
	if (a->direction != b->direction)
		return a->direction == FINDING_REGRESSION ? -1 :
		       b->direction == FINDING_REGRESSION ? 1 :
		       a->direction == FINDING_RELATIVE_SHIFT ? -1 : 1;
	if (a->severity != b->severity)
		return a->severity > b->severity ? -1 : 1;
	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	if (a->q_value != b->q_value)
		return a->q_value < b->q_value ? -1 : 1;
	if (strcmp(a->service, b->service) != 0)
		return strcmp(a->service, b->service);
	return strcmp(a->function, b->function);
}

/*
 * A share that rose while the function's absolute rate did not rise
 * significantly, and rose by less than half as much as the share, was
 * pushed up by something else getting cheaper; likewise a share that fell
 * while its rate did not follow. Both conditions: a noisy rate alone must
 * not turn a real regression into a shift.
 */
/*
 * How a share finding's absolute rate moved, the finding's way: its ratio
 * against the target's traffic factor `traffic` (NaN: unknown) into
 * *ratio, and the p-value of that move into *p. False when the captures
 * carry no rate (no duration).
 */
static bool rate_move(const finding *f, double traffic, double *ratio, double *p)
{
	if (strcmp(f->kind, FINDING_KIND_SHARE) != 0 || isnan(f->rate_ratio) ||
	    f->baseline_share <= 0)
		return false;
	*p = f->direction == FINDING_REGRESSION ? f->rate_p_up : f->rate_p_down;
	/*
	 * The rate against the service's own traffic: on a night 20% quieter
	 * every function's rate falls by a fifth, and a function that costs
	 * 1.5 times as much per request kept its rate of the week before; read
	 * per second, its rise was "only" a shift and paged no one.
	 */
	*ratio = isfinite(traffic) && traffic > 0 ? f->rate_ratio / traffic : f->rate_ratio;
	/*
	 * And whether the rate moved beyond the traffic: on a busier night
	 * every rate rose significantly per second, and a function pushed up
	 * by another's improvement could never be called a shift.
	 */
	if (isfinite(traffic) && traffic > 0 && f->rate_se > 0 && isfinite(f->rate_diff)) {
		stats_test_opts t = STATS_TEST_OPTS_INIT;
		stats_result r;
		t.delta0 = log(traffic);
		t.alt = f->direction == FINDING_REGRESSION ? STATS_GREATER : STATS_LESS;
		if (stats_test_t(&r, f->rate_diff, f->rate_se, f->rate_df, &t) == 0)
			*p = r.p;
	}
	return true;
}

/* Whether the rate moved by at least half as much as the share did, the finding's way. */
static bool rate_kept_up(const finding *f, double rate_ratio)
{
	double share_ratio = f->current_share / f->baseline_share;

	if (f->direction == FINDING_REGRESSION)
		return rate_ratio - 1 >= 0.5 * (share_ratio - 1);
	return 1 - rate_ratio >= 0.5 * (1 - share_ratio);
}

static bool is_relative_shift(const finding *f, double alpha, double traffic)
{
	double rate_ratio, p_rate;

	if (!rate_move(f, traffic, &rate_ratio, &p_rate))
		return false;
	return !(p_rate <= alpha) && !rate_kept_up(f, rate_ratio);
}

/*
 * Whether the function's own absolute rate moved significantly beyond its
 * target's traffic factor `traffic`, the finding's way, by at least half
 * as much as its share: then it moved of its own, whatever the other
 * shares did. Dilution moves shares, never rates. Not without a traffic
 * factor: a benchmark that does fewer operations a second when one
 * function got slower lowers every other function's rate per second.
 */
static bool rate_moved_alone(const finding *f, double alpha, double traffic)
{
	double rate_ratio, p_rate;

	return isfinite(traffic) && rate_move(f, traffic, &rate_ratio, &p_rate) &&
	       p_rate <= alpha && rate_kept_up(f, rate_ratio);
}

/*
 * The fewest samples a function must have in a typical baseline capture
 * for its rate to count in its target's traffic factor. Below, its rate's
 * move is mostly the count's noise: in a benchmark's CPU profile of 700
 * samples, functions of one to three samples a capture, their rates
 * moving 0.4x to 3x by chance, set the median at 1.25, and a function
 * whose rate rose 1.35x, its cost per operation doubled, was called a
 * relative shift.
 */
#define TRAFFIC_MIN_SAMPLES 20

/* The mean sample count of target t's baseline captures; 0 when none is known. */
static double baseline_samples(const analysis *a, size_t t)
{
	const capture_set *b = &a->targets[t].base;
	double sum = 0;
	size_t n = 0;

	for (size_t i = 0; i < b->n; i++)
		if (b->caps[i].sample_count > 0) {
			sum += (double)b->caps[i].sample_count;
			n++;
		}
	return n ? sum / (double)n : 0;
}

/* Whether f's rate is read well enough to tell its traffic (per_capture: baseline_samples). */
static bool rate_counts_in_traffic(const finding *f, double per_capture)
{
	return f->baseline_share >= 0.001 &&
	       (!(per_capture > 0) || f->baseline_share * per_capture >= TRAFFIC_MIN_SAMPLES);
}

/*
 * Each target's traffic factor, into out[target] (NaN where unknown): the
 * median over its functions of 0.1% or more, with enough samples
 * (TRAFFIC_MIN_SAMPLES), of how their rate (per second of capture) moved;
 * unknown where fewer than 3 are that large (the median of the others was
 * their noise). Every function's rate moves with the traffic; a
 * regression or a dilution moves one function or a few, which the median
 * passes over.
 */
static int traffic_factors(double **out, const analysis *a)
{
	size_t nt = a->ntargets;
	double *med = malloc((nt ? nt : 1) * 2 * sizeof(*med)),
	       *per_capture = med ? med + nt : NULL;
	double *v = malloc((a->ntests ? a->ntests : 1) * sizeof(*v));
	size_t *at = calloc(3 * nt + 1, sizeof(*at)), *lo = at + nt + 1, *hi = lo + nt;
	int rc = 0;

	*out = NULL;
	if (!med || !v || !at) {
		rc = STATS_ENOMEM;
		goto out;
	}
	for (size_t t = 0; t < nt; t++)
		per_capture[t] = baseline_samples(a, t);
	/*
	 * One pass over the tests, not one a target: each target's rates in
	 * a bucket of v, those of 0.1% or more from its front, the rest from
	 * its back.
	 */
	for (size_t i = 0; i < a->ntests; i++) {
		const finding *f = &a->tests[i];
		if (f->target < nt && strcmp(f->kind, FINDING_KIND_SHARE) == 0 &&
		    isfinite(f->rate_ratio) && f->rate_ratio > 0)
			at[f->target + 1]++;
	}
	for (size_t t = 0; t < nt; t++) {
		at[t + 1] += at[t];
		lo[t] = at[t];
		hi[t] = at[t + 1];
	}
	for (size_t i = 0; i < a->ntests; i++) {
		const finding *f = &a->tests[i];
		if (f->target < nt && strcmp(f->kind, FINDING_KIND_SHARE) == 0 &&
		    isfinite(f->rate_ratio) && f->rate_ratio > 0)
			v[rate_counts_in_traffic(f, per_capture[f->target]) ? lo[f->target]++
									    : --hi[f->target]] =
				f->rate_ratio;
	}
	for (size_t t = 0; t < nt && rc == 0; t++) {
		med[t] = NAN;
		if (lo[t] - at[t] >= 3)
			rc = stats_median(&med[t], v + at[t], lo[t] - at[t]);
	}
out:
	free(v);
	free(at);
	if (rc < 0) {
		free(med);
		return rc;
	}
	*out = med;
	return 0;
}

/*
 * The smallest p-value Mann-Whitney can give for n_b against n_c values,
 * 1 / C(n_b + n_c, n_c). With one current capture and a short baseline it
 * cannot reach mw_alpha at all; the check is waived then rather than
 * letting it veto every finding.
 */
static double mw_floor(size_t nb, size_t nc)
{
	return exp(lgamma((double)nb + 1) + lgamma((double)nc + 1) - lgamma((double)(nb + nc) + 1));
}

/* The estimate moved by at least the margin, the way the finding went. */
static bool material(const finding *f)
{
	return f->direction == FINDING_IMPROVEMENT ? f->material_down : f->material_up;
}

static bool passes(const finding *f, double q, const analysis_opts *o)
{
	return q <= o->fdr && material(f) &&
	       (f->mw_p <= o->mw_alpha ||
		mw_floor(f->baseline_captures, f->current_captures) > o->mw_alpha) &&
	       !(f->host_p > o->mw_alpha) && /* NaN: no host new to the baseline */
	       !(f->hours_p > o->mw_alpha);  /* NaN: judged around the clock */
}

/*
 * Dilution. When one function's cost rises, every other share falls
 * (and when one falls, the others rise) without anything else changing.
 * The significant share findings of a target are taken largest relative
 * change first (rises before falls on a tie), measured against the
 * target's typical change, the median ratio of its tested functions'
 * shares: dilution moves every other share by the same factor, so the
 * function that moved on its own is the one farthest from it, even where
 * a big function's diluted share moved more points. (Against no change
 * instead, a function that held more than half of the time and doubled
 * rose 60% -> 75%, by less than each other share fell, 20% -> 12.5%: the
 * others were taken for the movers and the regression for their shift.)
 * The first one moved; each next one
 * is tested again with its shares renormalised without those already
 * found to move, at the same look. One that no longer clears its
 * family's cut-off only moved because the others did: a relative shift.
 * One that still clears it moved on its own, and joins them. The cut-off
 * is Benjamini-Hochberg's, k x fdr / m for the family's k findings
 * among its m tests: any p-value at or under it would have been accepted
 * in the test's place. (The largest accepted p-value is no cut-off: a
 * family's only fall would have to do as well renormalised as it did
 * before, and a function three times cheaper beside one that doubled
 * became a relative shift.)
 */
/* A finding's change against the target's typical share ratio `typical`. */
static double change_from(const finding *f, double typical)
{
	if (!(typical > 0) || !isfinite(typical) || !(f->baseline_share > 0))
		return f->rel_delta;
	return f->current_share / f->baseline_share / typical - 1;
}

static int by_change(const finding *f, const finding *g, double typical)
{
	double df = fabs(change_from(f, typical)), dg = fabs(change_from(g, typical));

	if (df != dg)
		return df > dg ? -1 : 1;
	if ((f->delta > 0) != (g->delta > 0))
		return f->delta > 0 ? -1 : 1;
	return f->row < g->row ? -1 : f->row > g->row;
}

/* A test whose current to baseline share ratio tells its target's typical change. */
static bool has_ratio(const finding *f, size_t ntargets)
{
	return f->target < ntargets && f->row != SIZE_MAX && f->baseline_share > 0 &&
	       isfinite(f->current_share);
}

/* The samples of a capture set (0 when its captures do not say). */
static double set_samples(const capture_set *cs)
{
	double n = 0;

	for (size_t i = 0; i < cs->n; i++)
		if (cs->caps[i].sample_count > 0)
			n += (double)cs->caps[i].sample_count;
	return n;
}

/*
 * Whether a test's share ratio is measured well enough to tell the
 * typical change: its baseline share expects TYPICAL_MIN_SAMPLES samples
 * or more on each side (the judged captures' and the baseline's). A
 * function seen a few times in a few baseline captures has a ratio of 0
 * or of several, and the median of many such ratios is 0: on perf
 * profiles of a release whose compute_tax doubled (68% -> 80%), 35 of
 * 48 tested functions were kernel functions met once or twice in the
 * baseline and never in the release, the typical change was 0, and the
 * regression was taken for the relative shift of the functions it
 * diluted. Chosen by the baseline's share, not the current one, so that
 * what a function did in the release does not decide whether it counts.
 */
#define TYPICAL_MIN_SAMPLES 10.0
/*
 * Fewer than five such functions make no typical change: a median of a
 * few is their own change (a heap's three sites, one of them the leak
 * and one external memory that dilution does not move alike: the leak
 * came out as the shift of the others), so then every tested function
 * counts, as before.
 */
#define TYPICAL_MIN_MEASURED 5

static bool ratio_measured(const finding *f, const double *samples)
{
	const double *n = samples + 2 * f->target;

	return f->baseline_share * (n[0] < n[1] ? n[0] : n[1]) >= TYPICAL_MIN_SAMPLES;
}

/*
 * The share ratios of every target's tested functions, grouped by target
 * in one counting pass (as the significant tests are), so that a night
 * of many services reads its tests once, not once per service: target
 * tg's ratios are ratio[at[tg]] to ratio[at[tg + 1]]. Only those
 * measured well enough (ratio_measured), where a target has
 * TYPICAL_MIN_MEASURED of them.
 */
static int ratios_by_target(double **ratio, size_t **at, const analysis *a)
{
	size_t *fill = NULL, *measured = NULL;
	double *samples = NULL;
	int rc = PR_ENOMEM;

	*ratio = NULL;
	if (!(*at = calloc(a->ntargets + 1, sizeof(**at))) ||
	    !(measured = calloc(a->ntargets + 1, sizeof(*measured))) ||
	    !(samples = calloc(2 * a->ntargets + 1, sizeof(*samples))) ||
	    !(*ratio = malloc((a->ntests ? a->ntests : 1) * sizeof(**ratio))) ||
	    !(fill = malloc((a->ntargets + 1) * sizeof(*fill))))
		goto out;
	for (size_t tg = 0; tg < a->ntargets; tg++) {
		samples[2 * tg] = set_samples(&a->targets[tg].base);
		samples[2 * tg + 1] = set_samples(&a->targets[tg].cur);
	}
	for (size_t i = 0; i < a->ntests; i++)
		if (has_ratio(&a->tests[i], a->ntargets) && ratio_measured(&a->tests[i], samples))
			measured[a->tests[i].target]++;
	for (size_t i = 0; i < a->ntests; i++) {
		const finding *f = &a->tests[i];
		if (has_ratio(f, a->ntargets) &&
		    (measured[f->target] < TYPICAL_MIN_MEASURED || ratio_measured(f, samples)))
			(*at)[f->target + 1]++;
	}
	for (size_t tg = 0; tg < a->ntargets; tg++)
		(*at)[tg + 1] += (*at)[tg];
	memcpy(fill, *at, (a->ntargets + 1) * sizeof(*fill));
	for (size_t i = 0; i < a->ntests; i++) {
		const finding *f = &a->tests[i];
		if (has_ratio(f, a->ntargets) &&
		    (measured[f->target] < TYPICAL_MIN_MEASURED || ratio_measured(f, samples)))
			(*ratio)[fill[f->target]++] = f->current_share / f->baseline_share;
	}
	rc = 0;
out:
	if (rc < 0) {
		free(*ratio);
		free(*at);
		*ratio = NULL;
		*at = NULL;
	}
	free(fill);
	free(measured);
	free(samples);
	return rc;
}

/* The median of ratio[0..n) (sorted in place), 1 when n is 0. */
static double typical_ratio(double *ratio, size_t n)
{
	if (n == 0)
		return 1;
	qsort(ratio, n, sizeof(*ratio), double_cmp);
	return n % 2 ? ratio[n / 2] : 0.5 * (ratio[n / 2 - 1] + ratio[n / 2]);
}

/* qsort_r is not C11: a small insertion sort (a target has few findings). */
static void sort_by_change(size_t *idx, size_t n, const analysis *a, double typical)
{
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && by_change(&a->tests[idx[j - 1]], &a->tests[idx[j]],
						      typical) > 0; j--) {
			size_t t = idx[j];
			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
}

/* A significant test of one function that moved of its own (not yet a shift). */
static bool retestable(const finding *f, size_t ntargets)
{
	return f->significant && f->row != SIZE_MAX && f->direction != FINDING_RELATIVE_SHIFT &&
	       f->target < ntargets;
}

/*
 * The same for a heap's bytes in use, a level with no rate: whether the
 * function's own bytes moved the finding's way significantly (alpha), by
 * at least half as much as its share. On gperftools heap profiles of a
 * release whose ledger doubled its bytes (600 to 1180 kB) beside a
 * session cache that held its 300 kB, the fall of the cache's share was
 * taken first, and the ledger's rise, re-tested without it, was called a
 * relative shift: the leak not named, the cache credited.
 */
/*
 * How a heap function's bytes in use moved, the finding's way: *p the
 * one-sided Welch p-value, *ratio current over baseline mean. False when
 * f is no share test of a heap.
 */
static bool bytes_move(const finding *f, const analysis_target_data *td, double *p, double *ratio)
{
	size_t nb = 0, nc = 0, n = td->base.n + td->cur.n;
	double *v;

	if (!f->type || strcmp(f->type, "heap") != 0 || f->row == SIZE_MAX ||
	    strcmp(f->kind, FINDING_KIND_SHARE) != 0 || !(f->baseline_share > 0) ||
	    !(v = calloc(n ? n : 1, sizeof(*v))))
		return false;
	for (size_t j = 0; j < n; j++) {
		int64_t x = td->m.self[f->row * td->m.ncaps + j];
		if (x == FUNC_MATRIX_UNKNOWN)
			continue;
		if (j < td->base.n)
			v[nb++] = (double)x;
		else
			v[td->base.n + nc++] = (double)x;
	}
	*p = welch_p(v, nb, v + td->base.n, nc, f->direction == FINDING_REGRESSION);
	*ratio = mean_of(v + td->base.n, nc) / mean_of(v, nb);
	free(v);
	return isfinite(*ratio);
}

static bool bytes_moved_alone(const finding *f, const analysis_target_data *td, double alpha)
{
	double p, ratio;

	return bytes_move(f, td, &p, &ratio) && p <= alpha && rate_kept_up(f, ratio);
}

/* A heap's share that moved while its bytes did not, as is_relative_shift for rates. */
static bool bytes_shift(const finding *f, const analysis_target_data *td, double alpha)
{
	double p, ratio;

	return bytes_move(f, td, &p, &ratio) && !(p <= alpha) && !rate_kept_up(f, ratio);
}

static int renormalised_retest(analysis *a, const double cut[2], const double *traffic)
{
	const analysis_opts *o = &a->opts;
	size_t *idx = NULL, *movers = NULL, *by_target = NULL, *first = NULL, *pos = NULL;
	size_t *ratio_at = NULL;
	int64_t *less = NULL;
	double *ratios = NULL;
	series sb = {0}, sc = {0};
	int rc = 0;

	if (!(idx = calloc(a->ntests ? a->ntests : 1, sizeof(*idx))) ||
	    !(movers = calloc(a->ntests ? a->ntests : 1, sizeof(*movers))) ||
	    !(by_target = calloc(a->ntests ? a->ntests : 1, sizeof(*by_target))) ||
	    !(first = calloc(a->ntargets + 1, sizeof(*first))) ||
	    !(pos = calloc(a->ntargets + 1, sizeof(*pos)))) {
		free(idx);
		free(movers);
		free(by_target);
		free(first);
		return PR_ENOMEM;
	}
	/* The significant tests of each target, in test order, by one counting pass. */
	for (size_t i = 0; i < a->ntests; i++)
		if (retestable(&a->tests[i], a->ntargets))
			first[a->tests[i].target + 1]++;
	for (size_t tg = 0; tg < a->ntargets; tg++)
		pos[tg + 1] = first[tg + 1] += first[tg];
	for (size_t i = 0; i < a->ntests; i++)
		if (retestable(&a->tests[i], a->ntargets))
			by_target[pos[a->tests[i].target]++] = i;
	for (size_t tg = 0; tg < a->ntargets && rc == 0; tg++) {
		analysis_target_data *td = &a->targets[tg];
		size_t nsig = 0, nmov = 0, ncap = td->base.n + td->cur.n, maxn;
		double typical;

		for (size_t j = first[tg]; j < first[tg + 1]; j++)
			idx[nsig++] = by_target[j];
		if (nsig < 2)
			continue;
		if (!ratio_at && (rc = ratios_by_target(&ratios, &ratio_at, a)) < 0)
			break;
		typical = typical_ratio(ratios + ratio_at[tg], ratio_at[tg + 1] - ratio_at[tg]);
		sort_by_change(idx, nsig, a, typical);
		maxn = td->base.n > td->cur.n ? td->base.n : td->cur.n;
		free(less);
		free(sb.share);
		free(sc.share);
		free(sb.group);
		free(sc.group);
		less = calloc(ncap, sizeof(*less));
		sb.share = calloc(maxn * 4, sizeof(double));
		sc.share = calloc(maxn * 4, sizeof(double));
		sb.group = calloc(maxn * 5, sizeof(int));
		sc.group = calloc(maxn * 5, sizeof(int));
		if (!less || !sb.share || !sc.share || !sb.group || !sc.group) {
			rc = PR_ENOMEM;
			break;
		}
		sb.vst = sb.share + maxn, sb.rate = sb.vst + maxn, sb.v = sb.rate + maxn;
		sc.vst = sc.share + maxn, sc.rate = sc.vst + maxn, sc.v = sc.rate + maxn;
		sb.host = sb.group + maxn, sc.host = sc.group + maxn;
		sb.week = sb.host + maxn, sc.week = sc.host + maxn;
		sb.day = sb.week + maxn, sc.day = sc.week + maxn;
		sb.at = sb.day + maxn, sc.at = sc.day + maxn;
		sb.churn = sc.churn = td->churn;
		sb.churned = sc.churned = td->churned;
		movers[nmov++] = idx[0];
		for (size_t k = 1; k < nsig && rc == 0; k++) {
			finding *f = &a->tests[idx[k]], again;
			double p, dm = 0, held = 0, diluting;
			bool still;
			/*
			 * What the movers can do to another share: the others
			 * had 1 - held of the whole and have 1 - held - dm, held
			 * the movers' baseline share and dm their summed change,
			 * so each moves by dm / (1 - held), the other way from theirs
			 * (a function of 92% that fell to 84% doubles every other
			 * share). A change ten times that is its own, and not
			 * tested again: a renumbered closure of 0.03% that
			 * vanished (the largest relative change there is) had a
			 * 2x rise at a 20% share re-tested, its p moved by noise
			 * past the cut, and it was called a relative shift.
			 */
			for (size_t j = 0; j < nmov; j++) {
				/* Churned code moves no other share (churn_mark). */
				if (td->churned && td->churned[a->tests[movers[j]].row])
					continue;
				dm += a->tests[movers[j]].delta;
				held += a->tests[movers[j]].baseline_share;
			}
			diluting = (f->delta > 0) != (dm < 0) ? 0
				   : held < 0.999             ? fabs(dm) / (1 - held)
							      : INFINITY;
			if (fabs(f->rel_delta) > 10 * diluting ||
			    rate_moved_alone(f, o->mw_alpha, traffic ? traffic[tg] : NAN) ||
			    bytes_moved_alone(f, td, o->mw_alpha)) {
				movers[nmov++] = idx[k];
				continue;
			}
			memset(less, 0, ncap * sizeof(*less));
			for (size_t j = 0; j < nmov; j++) {
				size_t r = a->tests[movers[j]].row;
				/* Churned code is out of every share already (churn_mark). */
				if (td->churned && td->churned[r])
					continue;
				for (size_t c = 0; c < ncap; c++) {
					int64_t v = td->m.self[r * td->m.ncaps + c];
					if (v > 0)
						less[c] += v;
				}
			}
			memset(&again, 0, sizeof(again));
			series_fill(&sb, &td->m, f->row, 0, &td->base, td->gb, td->hb, td->db,
				    td->wb, less);
			series_fill(&sc, &td->m, f->row, td->base.n, &td->cur, td->gc, td->hc,
				    td->dc, td->wc, less + td->base.n);
			drop_releases_without(&sb, &sc);
			if (sb.n < 2 || sc.n < 1)
				continue;
			rc = test_function(&again, &sb, &sc, o, td);
			p = f->direction == FINDING_REGRESSION ? again.p_up : again.p_down;
			again.direction = f->direction;
			still = material(&again);
			finding_clear(&again);
			if (rc < 0)
				break;
			p = stats_seq_pvalue_from(p, first_look_of(f), f->look, o->max_looks,
						  o->spend_rho);
			if (still && p <= cut[f->direction == FINDING_REGRESSION ? 0 : 1]) {
				movers[nmov++] = idx[k];
				continue;
			}
			f->direction = FINDING_RELATIVE_SHIFT;
			f->diluted = true;
			a->diluted++;
		}
	}
	free(idx);
	free(movers);
	free(by_target);
	free(first);
	free(pos);
	free(less);
	free(ratios);
	free(ratio_at);
	free(sb.share);
	free(sc.share);
	free(sb.group);
	free(sc.group);
	return rc;
}

/*
 * A relative shift is no rise or fall of the function's own, yet it was
 * counted as a discovery when the q-values were computed: when one
 * function gets much cheaper, every other share rises, and dozens of
 * such rises make Benjamini-Hochberg's cut-off for the rises lenient
 * enough to let a function that only rose by noise through. So once the
 * shifts are known, the q-values of each family are computed again with
 * every significant relative shift taken out of the discoveries (its
 * p-value read as 1; it stays in the family's count), and so is every
 * test that cleared q but is no finding (its estimate short of the
 * margin, with all captures or without one host's, or Mann-Whitney
 * against it): diluted functions are most of those. A regression or
 * improvement that no longer clears the bar is not a finding. Raising
 * p-values can only shrink the set BH accepts. up and down are scratch
 * arrays of ntests.
 */
static int without_shifts(analysis *a, double *up, double *down)
{
	size_t out = 0;

	for (size_t i = 0; i < a->ntests; i++) {
		const finding *f = &a->tests[i];
		bool drop = f->significant ? f->direction == FINDING_RELATIVE_SHIFT
					   : f->q_value <= a->opts.fdr;
		out += drop;
		up[i] = drop ? 1 : f->p_seq_up;
		down[i] = drop ? 1 : f->p_seq_down;
	}
	if (!out)
		return 0;
	if (stats_bh_qvalues(up, a->ntests, up) < 0 ||
	    stats_bh_qvalues(down, a->ntests, down) < 0)
		return PR_ERR;
	for (size_t i = 0; i < a->ntests; i++) {
		finding *f = &a->tests[i];
		if (!f->significant || f->direction == FINDING_RELATIVE_SHIFT)
			continue;
		f->q_value = f->direction == FINDING_REGRESSION ? up[i] : down[i];
		f->significant = passes(f, f->q_value, &a->opts);
	}
	return 0;
}

int analysis_finish(analysis *a, pr_error *err)
{
	const analysis_opts *o = &a->opts;
	double *up = NULL, *down = NULL, *traffic = NULL, t0 = time_mono(), cut[2] = {-1, -1};
	stats_severity_thresholds sev = o->severity;
	size_t kept[2] = {0, 0};
	int rc = 0;

	if (a->ntests && (!(up = malloc(a->ntests * sizeof(*up))) ||
			  !(down = malloc(a->ntests * sizeof(*down))))) {
		rc = oom(err);
		goto out;
	}
	if (traffic_factors(&traffic, a) < 0) {
		rc = oom(err);
		goto out;
	}
	/*
	 * Sequential p-values: each look spends its fraction of alpha. Rises
	 * and falls are separate families: a regression's q counts only the
	 * run's tests for a rise, so improvements never dilute it.
	 */
	for (size_t i = 0; i < a->ntests; i++) {
		finding *f = &a->tests[i];
		f->p_seq_up = stats_seq_pvalue_from(f->p_up, first_look_of(f), f->look,
						    o->max_looks, o->spend_rho);
		f->p_seq_down = stats_seq_pvalue_from(f->p_down, first_look_of(f), f->look,
						      o->max_looks, o->spend_rho);
		if (isnan(f->p_seq_up))
			f->p_seq_up = 1;
		if (isnan(f->p_seq_down))
			f->p_seq_down = 1;
		up[i] = f->p_seq_up;
		down[i] = f->p_seq_down;
	}
	if (a->ntests && (stats_bh_qvalues(up, a->ntests, up) < 0 ||
			  stats_bh_qvalues(down, a->ntests, down) < 0)) {
		rc = pr_error_set(err, PR_ERR, "cannot adjust %zu p-values", a->ntests);
		goto out;
	}
	for (size_t i = 0; i < a->ntests; i++) {
		finding *f = &a->tests[i];
		bool reg = f->direction == FINDING_REGRESSION;

		f->q_value = reg ? up[i] : down[i];
		f->p_seq = reg ? f->p_seq_up : f->p_seq_down;
		f->significant = passes(f, f->q_value, o);
		/*
		 * Each family's findings, for its cut-off (renormalised_retest):
		 * tests that cleared q but are no finding (short of the margin,
		 * say) or are relative shifts do not loosen it, as they do not
		 * count in without_shifts.
		 */
		if (f->significant &&
		    (is_relative_shift(f, o->mw_alpha,
				       traffic && f->target < a->ntargets ? traffic[f->target]
									  : NAN) ||
		     (f->target < a->ntargets &&
		      bytes_shift(f, &a->targets[f->target], o->mw_alpha))))
			f->direction = FINDING_RELATIVE_SHIFT;
		kept[reg ? 0 : 1] += f->significant && f->direction != FINDING_RELATIVE_SHIFT;
	}
	for (size_t d = 0; d < 2; d++)
		cut[d] = kept[d] ? (double)kept[d] * o->fdr / (double)a->ntests : -1;
	if ((rc = renormalised_retest(a, cut, traffic)) < 0) {
		rc = rc == PR_ENOMEM ? oom(err)
				     : pr_error_set(err, PR_ERR,
						    "cannot re-test renormalised shares");
		goto out;
	}
	if ((rc = without_shifts(a, up, down)) < 0) {
		rc = pr_error_set(err, PR_ERR, "cannot adjust %zu p-values", a->ntests);
		goto out;
	}
	/*
	 * Unset, the severity's q-value bound is the family's: raised with
	 * --fdr alone, it left every finding past 0.05 a regression of
	 * severity none, stored and confirmed but never paged nor gated.
	 */
	if (!(sev.q_max > 0))
		sev.q_max = o->fdr;
	a->nfindings = 0;
	for (size_t i = 0; i < a->ntests; i++) {
		finding *f = &a->tests[i];
		double lo_pp, rel;
		bool cost = strcmp(f->kind, FINDING_KIND_COST) == 0;

		/* The conservative end of the change, in the direction it went. */
		lo_pp = 100 * (f->direction == FINDING_IMPROVEMENT ? -f->ci_high : f->ci_low);
		/* Cost changes are relative already: their "pp" are percent of the cost. */
		rel = cost ? NAN : f->baseline_share > 0 ? lo_pp / (100 * f->baseline_share)
							  : INFINITY;
		f->score = stats_score(lo_pp, f->q_value, 1.0);
		if (isnan(f->score))
			f->score = 0;
		f->severity = f->significant && f->direction == FINDING_REGRESSION
			? stats_severity_of(lo_pp, rel, f->q_value, &sev)
			: STATS_SEV_NONE;
		/*
		 * Cost per second of capture, or bytes in use, also rises with
		 * traffic and with how much CPU a host lets the process have:
		 * without a load figure it is reported, never gates nor pages.
		 * Nor does a cost per unit of load read at loads the baseline
		 * never saw, with no slope of its own to read it by: a fixed
		 * overhead makes a quiet night costlier per request. Heap bytes
		 * in use, a level never divided by load, keep their severity
		 * when every capture has a load figure and the judged load is
		 * not above the baseline's (level_load): capped, a heap doubled
		 * at the same load passed every gate.
		 */
		if (cost && f->cost_unit &&
		    (strcmp(finding_cost_family(f->cost_unit), "per_load") != 0
			     ? !(f->test && strcmp(f->test, "pooled_log_load_held") == 0)
			     : f->test && strcmp(f->test, "pooled_log_load_beyond") == 0) &&
		    f->severity > STATS_SEV_LOW)
			f->severity = STATS_SEV_LOW;
		if (f->significant)
			a->nfindings++;
	}
	if (a->ntests)
		qsort(a->tests, a->ntests, sizeof(*a->tests), rank_cmp);
out:
	free(traffic);
	free(up);
	free(down);
	a->stats_seconds += time_mono() - t0;
	return rc;
}

static json_t *num_or_null(double v)
{
	return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

double analysis_blind_limit(double asked, const analysis_opts *o)
{
	return asked > 0 ? asked : asked < 0 ? 0 : o->gate_max_unseen;
}

bool analysis_blind_over(const analysis_blind *b, double limit)
{
	return limit > 0 && b->excess > limit;
}

void analysis_blind_reason(char *out, size_t size, const analysis_blind *b, double max)
{
	char cost[128];

	if (isinf(b->unseen))
		snprintf(cost, sizeof(cost), "whatever it cost the service");
	else if (b->by_design >= 0.005)
		snprintf(cost, sizeof(cost),
			 "making the service %.0f%% costlier (%.0f%% beyond "
			 "what the gate's margins leave out)",
			 100 * b->unseen, 100 * b->excess);
	else
		snprintf(cost, sizeof(cost), "making the service %.0f%% costlier", 100 * b->unseen);
	snprintf(out, size,
		 "the captures are too few or too small to pass the release: a rise in the cost of "
		 "%.200s (%s, %s) that took its share from %.1f%% to %.1f%%, %s, would be "
		 "missed more than one time in five (a pass needs the gate to see, beyond its "
		 "margins, one that makes it %.0f%% costlier: --max-unseen, "
		 "analysis.gate_max_unseen_pct). "
		 "Take more or longer captures of the release",
		 b->f->function, b->f->service, b->f->type, 100 * b->from, 100 * b->to, cost,
		 100 * max);
}

json_t *analysis_blind_json(const analysis_blind *b, size_t n)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++) {
		json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:f,s:f,s:o,s:o,s:o}", "service",
				      b[i].f->service, "type", b[i].f->type, "function",
				      b[i].f->function, "file", b[i].f->file ? b[i].f->file : "",
				      "baseline_share", b[i].from, "share_seen", b[i].to,
				      "unseen_cost", num_or_null(b[i].unseen), "unseen_by_design",
				      num_or_null(b[i].by_design), "unseen_for_captures",
				      num_or_null(b[i].excess));
		if (!o || json_array_append_new(arr, o) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

json_t *analysis_finding_json(const finding *f)
{
	json_t *o = json_pack("{s:i,s:s,s:s,s:s,s:s,s:s,s:s,s:b}", "schema_version",
			      ANALYSIS_FINDING_SCHEMA, "service", f->service, "type", f->type,
			      "function", f->function, "file", f->file ? f->file : "", "direction",
			      finding_dir_name(f->direction), "severity",
			      stats_severity_name(f->severity), "significant", f->significant);
	json_t *rel = f->baseline_releases ? json_loads(f->baseline_releases, 0, NULL) : NULL;
	json_t *caps = f->capture_ids ? json_loads(f->capture_ids, 0, NULL) : NULL;

	if (!o) {
		json_decref(rel);
		json_decref(caps);
		return NULL;
	}

	json_object_set_new(o, "baseline_share", num_or_null(f->baseline_share));
	json_object_set_new(o, "current_share", num_or_null(f->current_share));
	json_object_set_new(o, "delta", num_or_null(f->delta));
	json_object_set_new(o, "rel_delta", num_or_null(f->rel_delta));
	json_object_set_new(o, "ci_low", num_or_null(f->ci_low));
	json_object_set_new(o, "ci_high", num_or_null(f->ci_high));
	json_object_set_new(o, "p_value", num_or_null(f->p_value));
	json_object_set_new(o, "q_value", num_or_null(f->q_value));
	json_object_set_new(o, "mw_p", num_or_null(f->mw_p));
	json_object_set_new(o, "host_p", num_or_null(f->host_p));
	json_object_set_new(o, "hours_p", num_or_null(f->hours_p));
	json_object_set_new(o, "score", num_or_null(f->score));
	json_object_set_new(o, "rate_ratio", num_or_null(f->rate_ratio));
	json_object_set_new(o, "test", f->test ? json_string(f->test) : json_null());
	json_object_set_new(o, "baseline_captures", json_integer((json_int_t)f->baseline_captures));
	json_object_set_new(o, "current_captures", json_integer((json_int_t)f->current_captures));
	json_object_set_new(o, "current_release",
			    f->current_release ? json_string(f->current_release) : json_null());
	json_object_set_new(o, "baseline_releases", rel ? rel : json_array());
	if (f->renamed_from)
		json_object_set_new(o, "renamed_from", json_string(f->renamed_from));
	if (f->weekly)
		json_object_set_new(o, "week_adjusted", json_true());
	/* Fixed key order, whether the ids came from this run or from jsonb. */
	json_object_set_new(o, "capture_ids", caps ? json_pack("{s:O,s:O}",
		"baseline", json_object_get(caps, "baseline") ? json_object_get(caps, "baseline")
							       : json_null(),
		"current", json_object_get(caps, "current") ? json_object_get(caps, "current")
							     : json_null()) : json_null());
	json_decref(caps);
	json_object_set_new(o, "id", f->id ? json_integer((json_int_t)f->id) : json_null());
	json_object_set_new(o, "kind", json_string(f->kind ? f->kind : FINDING_KIND_SHARE));
	if (f->cost_unit)
		json_object_set_new(o, "cost_unit", json_string(f->cost_unit));
	json_object_set_new(o, "look", json_integer((json_int_t)(f->look ? f->look : 1)));
	json_object_set_new(o, "p_seq", num_or_null(f->p_seq));
	json_object_set_new(o, "state", f->state[0] ? json_string(f->state) : json_null());
	json_object_set_new(o, "incident",
			    f->incident_id ? json_integer((json_int_t)f->incident_id)
					   : json_null());
	if (f->carried_from)
		json_object_set_new(o, "carried_from", json_integer((json_int_t)f->carried_from));
	if (f->accepted) /* within the rise of carried_from, accepted by hand */
		json_object_set_new(o, "accepted", json_true());
	return o;
}


/*
 * Parts: one process's analysis_add results, carried to the process that
 * finishes the run. Doubles travel exactly: a finite one as a JSON real
 * (jansson writes 17 significant digits, which read back to the same
 * double), NaN as null, infinities as the strings "inf" and "-inf".
 */
static json_t *part_num(double v)
{
	if (isnan(v))
		return json_null();
	if (isinf(v))
		return json_string(v > 0 ? "inf" : "-inf");
	return json_real(v);
}

static bool part_get_num(double *out, const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	const char *s;

	if (json_is_null(v)) {
		*out = NAN;
		return true;
	}
	if (json_is_number(v)) {
		*out = json_number_value(v);
		return true;
	}
	s = json_string_value(v);
	if (s && strcmp(s, "inf") == 0)
		*out = INFINITY;
	else if (s && strcmp(s, "-inf") == 0)
		*out = -INFINITY;
	else
		return false;
	return true;
}

static bool part_get_int(int64_t *out, const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_integer(v))
		return false;
	*out = (int64_t)json_integer_value(v);
	return true;
}

/* A string field, copied; a JSON null gives NULL. False when neither. */
static bool part_get_str(char **out, const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	*out = NULL;
	if (json_is_null(v))
		return true;
	if (!json_is_string(v))
		return false;
	*out = strdup(json_string_value(v));
	return *out != NULL;
}

const char *finding_static_name(const char *s)
{
	static const char *const known[] = {FINDING_KIND_SHARE,
					    FINDING_KIND_COST,
					    "bytes",
					    "bytes_per_s",
					    "cpu_s_per_s",
					    "value_per_s",
					    "per_load",
					    "per_load:cpu_s_per_s",
					    "per_load:bytes_per_s",
					    "per_load:value_per_s",
					    "wall_s_per_s",
					    "per_load:wall_s_per_s",
					    "goroutines"};

	for (size_t i = 0; s && i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(s, known[i]) == 0)
			return known[i];
	return NULL;
}

static json_t *part_str(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *part_test(const finding *f, size_t row)
{
	json_t *o = json_object();
	struct {
		const char *key;
		double v;
	} nums[] = {
		{"baseline_share", f->baseline_share},
		{"current_share", f->current_share},
		{"delta", f->delta},
		{"rel_delta", f->rel_delta},
		{"ci_low", f->ci_low},
		{"ci_high", f->ci_high},
		{"p_value", f->p_value},
		{"mw_p", f->mw_p},
		{"host_p", f->host_p},
		{"hours_p", f->hours_p},
		{"p_up", f->p_up},
		{"p_down", f->p_down},
		{"rate_ratio", f->rate_ratio},
		{"rate_p_up", f->rate_p_up},
		{"rate_p_down", f->rate_p_down},
		{"rate_diff", f->rate_diff},
		{"rate_se", f->rate_se},
		{"rate_df", f->rate_df},
	};
	int bad = !o;

	for (size_t i = 0; !bad && i < sizeof(nums) / sizeof(nums[0]); i++)
		bad |= json_object_set_new(o, nums[i].key, part_num(nums[i].v));
	if (bad)
		goto fail;
	bad |= json_object_set_new(o, "service_id", json_integer(f->service_id));
	bad |= json_object_set_new(o, "function_id", json_integer(f->function_id));
	bad |= json_object_set_new(o, "baseline_id", json_integer(f->baseline_id));
	bad |= json_object_set_new(o, "service", part_str(f->service));
	bad |= json_object_set_new(o, "type", part_str(f->type));
	bad |= json_object_set_new(o, "function", part_str(f->function));
	bad |= json_object_set_new(o, "file", part_str(f->file));
	bad |= json_object_set_new(o, "renamed_from", part_str(f->renamed_from));
	bad |= json_object_set_new(o, "renamed_from_id", json_integer(f->renamed_from_id));
	bad |= json_object_set_new(o, "current_release", part_str(f->current_release));
	bad |= json_object_set_new(o, "baseline_releases", part_str(f->baseline_releases));
	bad |= json_object_set_new(o, "test", part_str(f->test));
	bad |= json_object_set_new(o, "capture_ids", part_str(f->capture_ids));
	bad |= json_object_set_new(o, "kind", part_str(f->kind));
	bad |= json_object_set_new(o, "cost_unit", part_str(f->cost_unit));
	bad |= json_object_set_new(o, "direction", json_integer(f->direction));
	bad |= json_object_set_new(o, "baseline_captures",
				   json_integer((json_int_t)f->baseline_captures));
	bad |= json_object_set_new(o, "current_captures",
				   json_integer((json_int_t)f->current_captures));
	bad |= json_object_set_new(o, "look", json_integer((json_int_t)f->look));
	bad |= json_object_set_new(o, "first_look", json_integer((json_int_t)first_look_of(f)));
	bad |= json_object_set_new(o, "weekly", json_boolean(f->weekly));
	bad |= json_object_set_new(o, "hours_unseen", json_boolean(f->hours_unseen));
	bad |= json_object_set_new(o, "material", json_integer(f->material_up |
								 f->material_down << 1));
	bad |= json_object_set_new(o, "target", json_integer((json_int_t)f->target));
	bad |= json_object_set_new(o, "row", row == SIZE_MAX ? json_null()
							     : json_integer((json_int_t)row));
	if (!bad)
		return o;
fail:
	json_decref(o);
	return NULL;
}

static json_t *part_caps(const capture_set *cs)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < cs->n; i++) {
		const capture_ref *c = &cs->caps[i];
		json_t *o = json_pack("{s:I,s:I,s:s,s:I,s:I,s:I,s:s,s:o,s:I,s:s,s:s}", "id",
				      (json_int_t)c->id, "at", (json_int_t)c->captured_at_us,
				      "release", c->release, "total", (json_int_t)c->total,
				      "samples", (json_int_t)c->sample_count, "duration_ns",
				      (json_int_t)c->duration_ns, "unit", c->unit, "load",
				      part_num(c->load), "period", (json_int_t)c->period,
				      "period_type", c->period_type, "period_unit", c->period_unit);
		if (!o || json_array_append_new(arr, o) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

static json_t *part_ints(const int *v, size_t n)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++)
		if (json_array_append_new(arr, json_integer(v[i])) < 0) {
			json_decref(arr);
			return NULL;
		}
	return arr;
}

/* A target's week as a part carries it. */
static json_t *part_week(const analysis_week *w)
{
	return json_pack("{s:f, s:i, s:i}", "utc_offset_h", w->utc_offset_h, "weekend_first",
			 w->weekend_first, "weekend_days", w->weekend_days);
}

/*
 * A target's data as finish needs it: its captures, release numbers and
 * the matrix rows its share tests use (rows[] maps an old row to its
 * position in the part, SIZE_MAX for a row no test uses).
 */
static json_t *part_target(const analysis_target_data *td, const size_t *used, size_t nused)
{
	json_t *o = json_object(), *ids = json_array(), *self = json_array(), *noise;
	int bad = !o || !ids || !self;

	for (size_t k = 0; !bad && k < nused; k++) {
		size_t r = used[k];
		bad |= json_array_append_new(ids, json_integer(td->m.func_ids[r]));
		for (size_t c = 0; !bad && c < td->m.ncaps; c++)
			bad |= json_array_append_new(self,
						     json_integer(td->m.self[r * td->m.ncaps + c]));
	}
	if (!bad) {
		bad |= json_object_set_new(o, "func_ids", ids);
		bad |= json_object_set_new(o, "self", self);
		ids = self = NULL;
		bad |= json_object_set_new(o, "base", part_caps(&td->base));
		bad |= json_object_set_new(o, "cur", part_caps(&td->cur));
		bad |= json_object_set_new(o, "gb", part_ints(td->gb, td->base.n));
		bad |= json_object_set_new(o, "gc", part_ints(td->gc, td->cur.n));
		bad |= json_object_set_new(o, "hb", part_ints(td->hb, td->base.n));
		bad |= json_object_set_new(o, "hc", part_ints(td->hc, td->cur.n));
		bad |= json_object_set_new(o, "host_rho", part_num(td->host_rho));
		bad |= json_object_set_new(o, "day_rho", part_num(td->day_rho));
		if (td->unjudged[0])
			bad |= json_object_set_new(o, "unjudged", json_string(td->unjudged));
		bad |= json_object_set_new(o, "look", json_integer((json_int_t)td->look));
		bad |= json_object_set_new(
			o, "first_look",
			json_integer((json_int_t)(td->first_look ? td->first_look : td->look)));
		bad |= json_object_set_new(o, "week", part_week(&td->week));
		bad |= json_object_set_new(o, "phi", part_num(td->phi));
		bad |= json_object_set_new(o, "phi_df", part_num(td->phi_df));
		bad |= json_object_set_new(o, "noise", noise = json_array());
		for (size_t r = 0; !bad && r < NOISE_N; r++)
			bad |= json_array_append_new(noise, part_num(td->noise[r]));
	}
	json_decref(ids);
	json_decref(self);
	if (!bad)
		return o;
	json_decref(o);
	return NULL;
}

int analysis_part_json(struct json_t **out, const analysis *a)
{
	json_t *o = json_object(), *tests = json_array(), *targets = json_array();
	json_t *skipped = json_array(), *judged = json_array(), *notes = json_array();
	size_t *used = NULL, *newrow = NULL;
	int bad = !o || !tests || !targets || !skipped || !judged || !notes;

	*out = NULL;
	for (size_t tg = 0; !bad && tg < a->ntargets; tg++) {
		const analysis_target_data *td = &a->targets[tg];
		size_t nused = 0;
		free(used);
		free(newrow);
		used = calloc(td->m.nfuncs ? td->m.nfuncs : 1, sizeof(*used));
		newrow = calloc(td->m.nfuncs ? td->m.nfuncs : 1, sizeof(*newrow));
		if (!used || !newrow) {
			bad = 1;
			break;
		}
		for (size_t r = 0; r < td->m.nfuncs; r++)
			newrow[r] = SIZE_MAX;
		for (size_t i = 0; i < a->ntests; i++) {
			const finding *f = &a->tests[i];
			if (f->target != tg || f->row == SIZE_MAX || newrow[f->row] != SIZE_MAX)
				continue;
			newrow[f->row] = nused;
			used[nused++] = f->row;
		}
		bad |= json_array_append_new(targets, part_target(td, used, nused));
		for (size_t i = 0; !bad && i < a->ntests; i++) {
			const finding *f = &a->tests[i];
			if (f->target == tg)
				bad |= json_array_append_new(
					tests, part_test(f, f->row == SIZE_MAX ? SIZE_MAX
									       : newrow[f->row]));
		}
	}
	for (size_t i = 0; !bad && i < a->nskipped; i++)
		bad |= json_array_append_new(skipped,
					     json_pack("{s:s,s:s,s:s,s:s?}", "service",
						       a->skipped[i].service, "type",
						       a->skipped[i].type, "reason",
						       a->skipped[i].reason, "release",
						       a->skipped[i].release));
	for (size_t i = 0; !bad && i < a->nnotes; i++)
		bad |= json_array_append_new(notes, json_string(a->notes[i]));
	for (size_t i = 0; !bad && i < a->njudged; i++) {
		const analysis_judged *j = &a->judged[i];
		bad |= json_array_append_new(
			judged, json_pack("{s:I,s:s,s:s,s:I,s:I}", "service_id",
					  (json_int_t)j->service_id, "type", j->type, "release",
					  j->release, "look", (json_int_t)j->look, "first_us",
					  (json_int_t)j->first_us));
	}
	if (!bad) {
		bad |= json_object_set_new(o, "tests", tests);
		bad |= json_object_set_new(o, "targets", targets);
		bad |= json_object_set_new(o, "skipped", skipped);
		bad |= json_object_set_new(o, "judged", judged);
		bad |= json_object_set_new(o, "notes", notes);
		tests = targets = skipped = judged = notes = NULL;
		bad |= json_object_set_new(o, "services", json_integer((json_int_t)a->services));
		bad |= json_object_set_new(o, "filtered", json_integer((json_int_t)a->filtered));
		bad |= json_object_set_new(o, "db_seconds", part_num(a->db_seconds));
		bad |= json_object_set_new(o, "stats_seconds", part_num(a->stats_seconds));
	}
	free(used);
	free(newrow);
	json_decref(tests);
	json_decref(targets);
	json_decref(skipped);
	json_decref(judged);
	json_decref(notes);
	if (bad) {
		json_decref(o);
		return PR_ENOMEM;
	}
	*out = o;
	return 0;
}

static int part_bad(pr_error *err, const char *what)
{
	return pr_error_set(err, PR_EDATA, "cannot read an analysis part: bad %s", what);
}

/* A string field into out[size], cut; "" when absent or not a string. */
static void part_get_text(char *out, size_t size, const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	snprintf(out, size, "%s", s ? s : "");
}

static int part_read_caps(capture_set *out, const json_t *arr, pr_error *err)
{
	size_t i;
	const json_t *c;

	memset(out, 0, sizeof(*out));
	if (!json_is_array(arr))
		return part_bad(err, "captures");
	if (!(out->caps = calloc(json_array_size(arr) + 1, sizeof(*out->caps))))
		return oom(err);
	json_array_foreach(arr, i, c) {
		capture_ref *r = &out->caps[i];
		const char *unit = json_string_value(json_object_get(c, "unit"));
		if (!part_get_int(&r->id, c, "id") || !part_get_int(&r->captured_at_us, c, "at") ||
		    !part_get_int(&r->total, c, "total") ||
		    !part_get_int(&r->sample_count, c, "samples") ||
		    !part_get_int(&r->duration_ns, c, "duration_ns") ||
		    !part_get_num(&r->load, c, "load") || !unit)
			return part_bad(err, "capture");
		snprintf(r->unit, sizeof(r->unit), "%s", unit);
		/* Absent from an older worker's part: the period unknown, as before. */
		if (!part_get_int(&r->period, c, "period"))
			r->period = 0;
		part_get_text(r->period_type, sizeof(r->period_type), c, "period_type");
		part_get_text(r->period_unit, sizeof(r->period_unit), c, "period_unit");
		out->n = i + 1; /* its release is freed with the set, read or not */
		if (!part_get_str(&r->release, c, "release") || !r->release)
			return part_bad(err, "capture release");
	}
	return 0;
}

static int part_read_ints(int **out, const json_t *arr, size_t n, pr_error *err)
{
	if (!json_is_array(arr) || json_array_size(arr) != n)
		return part_bad(err, "release numbers");
	if (!(*out = calloc(n ? n : 1, sizeof(**out))))
		return oom(err);
	for (size_t i = 0; i < n; i++) {
		const json_t *v = json_array_get(arr, i);
		if (!json_is_integer(v))
			return part_bad(err, "release number");
		(*out)[i] = (int)json_integer_value(v);
	}
	return 0;
}

/* A target's week from its part; a part without one (an older worker's) has `def`. */
static int part_read_week(analysis_week *out, const json_t *target, const analysis_week *def,
			  pr_error *err)
{
	const json_t *w = json_object_get(target, "week");
	int64_t first, days;

	*out = *def;
	if (!w)
		return 0;
	if (!part_get_num(&out->utc_offset_h, w, "utc_offset_h") ||
	    !part_get_int(&first, w, "weekend_first") || !part_get_int(&days, w, "weekend_days") ||
	    first < 0 || first > 6 || days < 1 || days > 3 ||
	    !(out->utc_offset_h >= -12 && out->utc_offset_h <= 14))
		return part_bad(err, "target week");
	out->weekend_first = (int)first;
	out->weekend_days = (int)days;
	return 0;
}

static int part_read_target(analysis_target_data *td, const json_t *o, pr_error *err)
{
	const json_t *ids = json_object_get(o, "func_ids"), *self = json_object_get(o, "self");
	const json_t *noise;
	int64_t look, first = 0;
	int rc;

	memset(td, 0, sizeof(*td));
	if ((rc = part_read_caps(&td->base, json_object_get(o, "base"), err)) < 0 ||
	    (rc = part_read_caps(&td->cur, json_object_get(o, "cur"), err)) < 0 ||
	    (rc = part_read_ints(&td->gb, json_object_get(o, "gb"), td->base.n, err)) < 0 ||
	    (rc = part_read_ints(&td->gc, json_object_get(o, "gc"), td->cur.n, err)) < 0 ||
	    (rc = part_read_ints(&td->hb, json_object_get(o, "hb"), td->base.n, err)) < 0 ||
	    (rc = part_read_ints(&td->hc, json_object_get(o, "hc"), td->cur.n, err)) < 0)
		return rc;
	if (!part_get_int(&look, o, "look") || look < 0 || !part_get_num(&td->phi, o, "phi") ||
	    !part_get_num(&td->phi_df, o, "phi_df") ||
	    !part_get_num(&td->host_rho, o, "host_rho"))
		return part_bad(err, "target");
	/* A part of an older worker has no day share: its days are judged as before. */
	if (json_object_get(o, "day_rho") && !part_get_num(&td->day_rho, o, "day_rho"))
		return part_bad(err, "target's day share");
	/* Nor a first look: it spends its own look's alpha, as before. */
	if (json_object_get(o, "first_look") &&
	    (!part_get_int(&first, o, "first_look") || first < 1 || first > look))
		return part_bad(err, "target's first look");
	td->first_look = (size_t)first;
	if (json_object_get(o, "unjudged")) {
		const char *u = json_string_value(json_object_get(o, "unjudged"));
		if (!u || strlen(u) >= sizeof(td->unjudged))
			return part_bad(err, "target's unjudged releases");
		memcpy(td->unjudged, u, strlen(u) + 1);
	}
	td->look = (size_t)look;
	noise = json_object_get(o, "noise");
	if (!json_is_array(noise) || json_array_size(noise) != NOISE_N)
		return part_bad(err, "noise factors");
	for (size_t r = 0; r < NOISE_N; r++) {
		json_t *one = json_object();
		bool ok = one && !json_object_set(one, "v", json_array_get(noise, r)) &&
			  part_get_num(&td->noise[r], one, "v");
		json_decref(one);
		if (!ok)
			return part_bad(err, "noise factor");
	}
	td->m.ncaps = td->base.n + td->cur.n;
	td->m.nfuncs = json_array_size(ids);
	if (!json_is_array(ids) || !json_is_array(self) ||
	    json_array_size(self) != td->m.nfuncs * td->m.ncaps)
		return part_bad(err, "matrix");
	if (!(td->m.func_ids = calloc(td->m.nfuncs + 1, sizeof(int64_t))) ||
	    !(td->m.self = calloc(json_array_size(self) + 1, sizeof(int64_t))))
		return oom(err);
	for (size_t i = 0; i < td->m.nfuncs; i++)
		td->m.func_ids[i] = (int64_t)json_integer_value(json_array_get(ids, i));
	for (size_t i = 0; i < json_array_size(self); i++) {
		const json_t *v = json_array_get(self, i);
		if (!json_is_integer(v))
			return part_bad(err, "matrix value");
		td->m.self[i] = (int64_t)json_integer_value(v);
	}
	return 0;
}

static int part_read_test(finding *f, const json_t *o, size_t target0, size_t nfuncs,
			  pr_error *err)
{
	struct {
		const char *key;
		double *v;
	} nums[] = {
		{"baseline_share", &f->baseline_share},
		{"current_share", &f->current_share},
		{"delta", &f->delta},
		{"rel_delta", &f->rel_delta},
		{"ci_low", &f->ci_low},
		{"ci_high", &f->ci_high},
		{"p_value", &f->p_value},
		{"mw_p", &f->mw_p},
		{"p_up", &f->p_up},
		{"p_down", &f->p_down},
		{"rate_ratio", &f->rate_ratio},
		{"rate_p_up", &f->rate_p_up},
		{"rate_p_down", &f->rate_p_down},
		{"rate_diff", &f->rate_diff},
		{"rate_se", &f->rate_se},
		{"rate_df", &f->rate_df},
	};
	int64_t dir = 0, nb = 0, nc = 0, look = 0, target = 0, row = -1, mat = 0;
	const json_t *jrow = json_object_get(o, "row");
	char *kind = NULL, *unit = NULL;
	bool ok;

	memset(f, 0, sizeof(*f));
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		if (!part_get_num(nums[i].v, o, nums[i].key))
			return part_bad(err, nums[i].key);
	ok = part_get_int(&f->service_id, o, "service_id") &&
	     part_get_int(&f->function_id, o, "function_id") &&
	     part_get_int(&f->baseline_id, o, "baseline_id") &&
	     part_get_int(&dir, o, "direction") && part_get_int(&nb, o, "baseline_captures") &&
	     part_get_int(&nc, o, "current_captures") && part_get_int(&look, o, "look") &&
	     part_get_int(&target, o, "target") && part_get_int(&mat, o, "material") &&
	     (json_is_null(jrow) || part_get_int(&row, o, "row")) &&
	     part_get_str(&f->service, o, "service") && part_get_str(&f->type, o, "type") &&
	     part_get_str(&f->function, o, "function") && part_get_str(&f->file, o, "file") &&
	     part_get_str(&f->renamed_from, o, "renamed_from") &&
	     part_get_int(&f->renamed_from_id, o, "renamed_from_id") &&
	     part_get_str(&f->current_release, o, "current_release") &&
	     part_get_str(&f->baseline_releases, o, "baseline_releases") &&
	     part_get_str(&f->test, o, "test") &&
	     part_get_str(&f->capture_ids, o, "capture_ids") &&
	     part_get_str(&kind, o, "kind") && part_get_str(&unit, o, "cost_unit");
	f->kind = finding_static_name(kind);
	f->cost_unit = finding_static_name(unit);
	f->material_up = mat & 1;
	f->material_down = (mat & 2) != 0;
	f->weekly = json_is_true(json_object_get(o, "weekly")); /* absent: an older worker's */
	f->hours_unseen = json_is_true(json_object_get(o, "hours_unseen"));
	f->host_p = f->hours_p = NAN;                           /* absent: an older worker's */
	ok = ok && (!json_object_get(o, "host_p") || part_get_num(&f->host_p, o, "host_p")) &&
	     (!json_object_get(o, "hours_p") || part_get_num(&f->hours_p, o, "hours_p"));
	ok = ok && f->kind && (!unit || f->cost_unit) && f->service && f->type && f->function;
	ok = ok && dir >= FINDING_REGRESSION && dir <= FINDING_RELATIVE_SHIFT && nb >= 0 &&
	     nc >= 0 && look >= 0 && target >= 0 && row < (int64_t)nfuncs;
	free(kind);
	free(unit);
	if (!ok)
		return part_bad(err, "test");
	f->direction = (finding_dir)dir;
	f->baseline_captures = (size_t)nb;
	f->current_captures = (size_t)nc;
	f->look = (size_t)look;
	if (json_object_get(o, "first_look")) {
		int64_t first = 0;
		if (!part_get_int(&first, o, "first_look") || first < 1 || first > look)
			return part_bad(err, "test's first look");
		f->first_look = (size_t)first;
	}
	f->target = target0 + (size_t)target;
	f->row = row < 0 ? SIZE_MAX : (size_t)row;
	return 0;
}

int analysis_part_merge(analysis *a, const struct json_t *part, pr_error *err)
{
	const json_t *tests = json_object_get(part, "tests");
	const json_t *targets = json_object_get(part, "targets");
	const json_t *skipped = json_object_get(part, "skipped");
	const json_t *judged = json_object_get(part, "judged");
	size_t target0 = a->ntargets, ntests0 = a->ntests, i;
	const json_t *v;
	int64_t services, filtered;
	double dbs, sts;
	int rc = 0;

	if (!json_is_array(tests) || !json_is_array(targets) || !json_is_array(skipped) ||
	    !json_is_array(judged) || !part_get_int(&services, part, "services") ||
	    !part_get_int(&filtered, part, "filtered") ||
	    !part_get_num(&dbs, part, "db_seconds") || !part_get_num(&sts, part, "stats_seconds"))
		return part_bad(err, "object");
	json_array_foreach(targets, i, v) {
		analysis_target_data td;
		analysis_week week;
		if ((rc = part_read_target(&td, v, err)) < 0 ||
		    (rc = part_read_week(&week, v, &a->opts.week, err)) < 0 ||
		    (rc = target_weeks(&td, &td.base, &td.cur, &week) < 0 ? oom(err) : 0) < 0 ||
		    (rc = day_ids(&td.db, &td.dc, &td.base, &td.cur, week.utc_offset_h) < 0
				  ? oom(err) : 0) < 0 ||
		    (rc = keep_target(a, &td) < 0 ? oom(err) : 0) < 0) {
			target_data_release(&td);
			goto out;
		}
	}
	if (grow_tests(a, json_array_size(tests)) < 0) {
		rc = oom(err);
		goto out;
	}
	json_array_foreach(tests, i, v) {
		finding *f = &a->tests[a->ntests];
		int64_t t;
		if (!part_get_int(&t, v, "target") || t < 0 ||
		    (size_t)t >= a->ntargets - target0) {
			rc = part_bad(err, "test target");
			goto out;
		}
		if ((rc = part_read_test(f, v, target0, a->targets[target0 + t].m.nfuncs, err)) <
		    0) {
			finding_clear(f);
			goto out;
		}
		f->week = a->targets[f->target].week;
		a->ntests++;
	}
	json_array_foreach(skipped, i, v) {
		analysis_skip *s = realloc(a->skipped, (a->nskipped + 1) * sizeof(*s));
		const char *sv = json_string_value(json_object_get(v, "service"));
		const char *ty = json_string_value(json_object_get(v, "type"));
		const char *re = json_string_value(json_object_get(v, "reason"));
		const char *rl = json_string_value(json_object_get(v, "release"));
		if (!s) {
			rc = oom(err);
			goto out;
		}
		a->skipped = s;
		if (!sv || !ty || !re) {
			rc = part_bad(err, "skipped target");
			goto out;
		}
		s = &s[a->nskipped];
		s->service = strdup(sv), s->type = strdup(ty), s->reason = strdup(re);
		s->release = rl ? strdup(rl) : NULL;
		s->no_current = false;
		a->nskipped++;
		if (!s->service || !s->type || !s->reason || (rl && !s->release)) {
			rc = oom(err);
			goto out;
		}
	}
	/* An older worker's part has no notes. */
	json_array_foreach(json_object_get(part, "notes"), i, v)
	{
		if (!json_is_string(v)) {
			rc = part_bad(err, "note");
			goto out;
		}
		if ((rc = add_note(a, json_string_value(v), err)) < 0)
			goto out;
	}
	json_array_foreach(judged, i, v) {
		analysis_judged *j = realloc(a->judged, (a->njudged + 1) * sizeof(*j));
		int64_t look;
		if (!j) {
			rc = oom(err);
			goto out;
		}
		a->judged = j;
		j = &j[a->njudged];
		memset(j, 0, sizeof(*j));
		if (!part_get_int(&j->service_id, v, "service_id") ||
		    !part_get_int(&look, v, "look") || look < 0 ||
		    !part_get_int(&j->first_us, v, "first_us") ||
		    !part_get_str(&j->type, v, "type") ||
		    !part_get_str(&j->release, v, "release") || !j->type || !j->release) {
			free(j->type), free(j->release);
			rc = part_bad(err, "judged release");
			goto out;
		}
		j->look = (size_t)look;
		a->njudged++;
	}
	a->services += (size_t)services;
	a->filtered += (size_t)filtered;
	a->db_seconds += dbs;
	a->stats_seconds += sts;
out:
	/* A part that cannot be read leaves none of its tests or targets behind. */
	if (rc < 0) {
		while (a->ntests > ntests0)
			finding_clear(&a->tests[--a->ntests]);
		while (a->ntargets > target0)
			target_data_release(&a->targets[--a->ntargets]);
	}
	return rc;
}
