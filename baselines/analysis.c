/*
 * analysis.c: per-function significance tests, the false discovery rate
 * across a run, classification and ranking (see analysis.h). It computes;
 * baselines/findings.c stores what it found.
 */
#define _POSIX_C_SOURCE 200809L
#include "baselines/analysis.h"
#include "baselines/baseline.h"
#include "common/buf.h"
#include "common/timeutil.h"
#include "stats/fdr.h"
#include "stats/stats.h"
#include "stats/test.h"

#include <inttypes.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	o->abs_margin = 0.001;
	o->fdr = 0.05;
	o->mw_alpha = 0.05;
	o->ci_level = 0.95;
	o->welch_min = 8;
	o->severity = sev;
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
	free(f->baseline_releases);
	free(f->test);
	free(f->capture_ids);
	memset(f, 0, sizeof(*f));
}

void analysis_release(analysis *a)
{
	for (size_t i = 0; i < a->ntests; i++)
		finding_clear(&a->tests[i]);
	free(a->tests);
	for (size_t i = 0; i < a->nskipped; i++) {
		free(a->skipped[i].service);
		free(a->skipped[i].type);
		free(a->skipped[i].reason);
	}
	free(a->skipped);
	memset(a, 0, sizeof(*a));
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
	if (!s->service || !s->type || !s->reason) {
		free(s->service), free(s->type), free(s->reason);
		return oom(err);
	}
	a->nskipped++;
	return 0;
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
} sides;

static int load_sides(sides *s, db *d, const analysis_target *t, const analysis_opts *o,
		      pr_error *err)
{
	capture_query q = {0};
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
	if ((rc = capture_set_load(&s->cur, d, &q, err)) < 0 || s->cur.n == 0)
		return rc;
	memset(&q, 0, sizeof(q));
	q.service_id = t->service_id;
	q.type = t->type;
	q.exclude_release = t->release;
	q.eligible_only = true;
	q.as_of_us = o->at_us;
	/* A release judged in this window is never its own baseline. */
	if (!t->release && !(s->cur_releases = releases_json(&s->cur)))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	q.exclude_releases = s->cur_releases;
	s->window_end = t->release ? s->cur.caps[0].captured_at_us : t->since_us;
	s->window_start = s->window_end - o->window_us;
	q.since_us = s->window_start;
	q.until_us = s->window_end;
	return capture_set_load(&s->base, d, &q, err);
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

/* Per-side arrays of one function: shares, VST shares, rates. */
typedef struct series {
	double *share, *vst, *rate;
	double floor;
} series;

/*
 * One side's known values of a function, packed; returns how many. A
 * capture retention cut to its top functions does not know the small
 * ones (FUNC_MATRIX_UNKNOWN): it is left out rather than read as 0, which
 * would drag the baseline down and make a steady function look risen.
 */
static size_t series_fill(series *s, const func_matrix *m, size_t row, size_t col0,
			  const capture_set *cs)
{
	double floor = 0;
	size_t n = 0;

	for (size_t i = 0; i < cs->n; i++) {
		int64_t self = m->self[row * m->ncaps + col0 + i];
		const capture_ref *c = &cs->caps[i];
		if (self == FUNC_MATRIX_UNKNOWN)
			continue;
		s->share[n] = capture_share(c, self);
		s->vst[n] = stats_vst(s->share[n]);
		s->rate[n] = capture_rate(c, self);
		floor += stats_vst_var_floor(c->sample_count > 0 ? (double)c->sample_count : 1.0);
		n++;
	}
	s->floor = n ? floor / (double)n : 0;
	return n;
}

static double mean_of(const double *x, size_t n)
{
	double m = 0;

	for (size_t i = 0; i < n; i++)
		m += x[i];
	return n ? m / (double)n : NAN;
}

static int run_t(stats_result *out, const char **name, const stats_sample *b,
		 const stats_sample *c, double x0, const stats_test_opts *to,
		 const analysis_opts *o)
{
	if (c->n == 1) {
		*name = "prediction";
		return stats_test_prediction(out, b, x0, c->var_floor, to);
	}
	if (c->n >= o->welch_min && b->n >= o->welch_min) {
		*name = "welch";
		return stats_test_welch(out, b, c, to);
	}
	*name = "shared_var";
	return stats_test_shared_var(out, b, c, to);
}

/*
 * Did the function's absolute rate move? The same test on log rates (a
 * rate of 0 counts as half the smallest positive one), without margin:
 * its p-values feed the relative-shift guard. NaN when unknown.
 */
static void rate_tests(finding *f, const series *b, const series *c, size_t nb, size_t nc,
		       const analysis_opts *o)
{
	stats_test_opts up = STATS_TEST_OPTS_INIT, dn = STATS_TEST_OPTS_INIT;
	stats_sample sb, sc;
	stats_result r;
	const char *name;
	double *lb = malloc(nb * sizeof(*lb)), *lc = malloc(nc * sizeof(*lc)), least = INFINITY;

	f->rate_p_up = f->rate_p_down = NAN;
	for (size_t i = 0; i < nb; i++)
		if (b->rate[i] > 0)
			least = fmin(least, b->rate[i]);
	for (size_t i = 0; i < nc; i++)
		if (c->rate[i] > 0)
			least = fmin(least, c->rate[i]);
	if (!lb || !lc || isinf(least))
		goto out;
	for (size_t i = 0; i < nb; i++)
		lb[i] = log(b->rate[i] > 0 ? b->rate[i] : least / 2);
	for (size_t i = 0; i < nc; i++)
		lc[i] = log(c->rate[i] > 0 ? c->rate[i] : least / 2);
	if (stats_sample_of(&sb, lb, nb, 1e-12) < 0 || stats_sample_of(&sc, lc, nc, 1e-12) < 0)
		goto out;
	up.alt = STATS_GREATER;
	dn.alt = STATS_LESS;
	if (run_t(&r, &name, &sb, &sc, lc[0], &up, o) == 0)
		f->rate_p_up = r.p;
	if (run_t(&r, &name, &sb, &sc, lc[0], &dn, o) == 0)
		f->rate_p_down = r.p;
out:
	free(lb);
	free(lc);
}

/* The tests of one function; fills everything but q, class and score. */
static int test_function(finding *f, const series *b, const series *c, size_t nb,
			 size_t nc, const analysis_opts *o)
{
	stats_sample sb, sc;
	stats_test_opts up = STATS_TEST_OPTS_INIT, dn = STATS_TEST_OPTS_INIT,
			two = STATS_TEST_OPTS_INIT;
	stats_mw_opts mw = STATS_MW_OPTS_INIT;
	stats_mw_result mwr;
	stats_result rup, rdn, rci;
	const char *name = NULL;
	double pb, margin_up, margin_dn;
	int rc;

	if ((rc = stats_sample_of(&sb, b->vst, nb, b->floor)) < 0 ||
	    (rc = stats_sample_of(&sc, c->vst, nc, c->floor)) < 0)
		return rc;
	pb = stats_vst_inv(sb.mean);
	margin_up = fmax(o->rel_margin * pb, o->abs_margin);
	margin_dn = fmax(o->rel_margin * pb, o->abs_margin);
	up.alt = STATS_GREATER;
	up.delta0 = stats_vst_delta(pb, margin_up);
	dn.alt = STATS_LESS;
	dn.delta0 = stats_vst_delta(pb, -fmin(margin_dn, pb));
	two.alt = STATS_TWO_SIDED;
	two.delta0 = 0;
	two.alpha = 1 - o->ci_level;
	if ((rc = run_t(&rup, &name, &sb, &sc, c->vst[0], &up, o)) < 0 ||
	    (rc = run_t(&rdn, &name, &sb, &sc, c->vst[0], &dn, o)) < 0 ||
	    (rc = run_t(&rci, &name, &sb, &sc, c->vst[0], &two, o)) < 0)
		return rc;
	f->test = strdup(name);
	f->baseline_share = mean_of(b->share, nb);
	f->current_share = mean_of(c->share, nc);
	f->delta = f->current_share - f->baseline_share;
	f->rel_delta = f->baseline_share > 0 ? f->delta / f->baseline_share : INFINITY;
	f->ci_low = stats_vst_delta_share(sb.mean, rci.ci_low);
	f->ci_high = stats_vst_delta_share(sb.mean, rci.ci_high);
	f->rate_ratio =
		mean_of(b->rate, nb) > 0 ? mean_of(c->rate, nc) / mean_of(b->rate, nb) : NAN;
	rate_tests(f, b, c, nb, nc, o);
	/* Two one-sided tests against the margin; each has its own family. */
	f->p_up = rup.p;
	f->p_down = rdn.p;
	f->direction = rup.p <= rdn.p ? FINDING_REGRESSION : FINDING_IMPROVEMENT;
	f->p_value = fmin(rup.p, rdn.p);
	mw.alt = f->direction == FINDING_REGRESSION ? STATS_GREATER : STATS_LESS;
	mw.delta0 = f->direction == FINDING_REGRESSION ? up.delta0 : dn.delta0;
	if ((rc = stats_mann_whitney(&mwr, c->vst, nc, b->vst, nb, &mw)) < 0)
		return rc;
	f->mw_p = mwr.p;
	f->baseline_captures = nb;
	f->current_captures = nc;
	return f->test ? 0 : STATS_ENOMEM;
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

int analysis_add(analysis *a, db *d, const analysis_target *t, bool store, pr_error *err)
{
	const analysis_opts *o = &a->opts;
	sides s;
	func_matrix m = {0};
	baseline_func *bf = NULL;
	size_t *rows = NULL, nrows = 0;
	int64_t *ids = NULL, baseline_id = 0;
	char **names = NULL, **files = NULL, *releases = NULL, *capids = NULL;
	series sb = {0}, sc = {0};
	bool reused;
	double t0 = time_mono(), t_tests = 0;
	size_t ntests0 = a->ntests;
	int rc;

	if ((rc = load_sides(&s, d, t, o, err)) < 0)
		goto out;
	if (s.cur.n == 0) {
		rc = t->release ? skip(a, t, err, "no %s captures of release '%s'", t->type,
				       t->release)
				: skip(a, t, err, "no %s captures in the selected time range",
				       t->type);
		goto out;
	}
	if (s.base.n < o->min_baseline || s.base.n < 2) {
		char when[TIME_FMT_MAX];
		time_format(when, s.window_end);
		rc = skip(
			a, t, err,
			"insufficient baseline: %zu eligible %s captures in the %lld "
			"days before %s (need %zu)",
			s.base.n, t->type, (long long)(o->window_us / DAY_US), when,
			o->min_baseline);
		goto out;
	}
	if ((rc = func_matrix_load(&m, d, &s.base, &s.cur, err)) < 0)
		goto out;
	if (!(sb.share = calloc(s.base.n * 3, sizeof(double))) ||
	    !(sc.share = calloc(s.cur.n * 3, sizeof(double))) ||
	    !(rows = calloc(m.nfuncs ? m.nfuncs : 1, sizeof(*rows))) ||
	    !(ids = calloc(m.nfuncs ? m.nfuncs : 1, sizeof(*ids))) ||
	    !(bf = calloc(m.nfuncs ? m.nfuncs : 1, sizeof(*bf)))) {
		rc = oom(err);
		goto out;
	}
	sb.vst = sb.share + s.base.n, sb.rate = sb.vst + s.base.n;
	sc.vst = sc.share + s.cur.n, sc.rate = sc.vst + s.cur.n;

	/*
	 * Independent filtering: a function whose share stays under the
	 * absolute margin in every capture can never move by more than it,
	 * so it is not tested and does not dilute the family.
	 */
	for (size_t r = 0; r < m.nfuncs; r++) {
		double top = 0;
		size_t known = 0;
		for (size_t i = 0; i < s.base.n; i++) {
			int64_t v = m.self[r * m.ncaps + i];
			known += v != FUNC_MATRIX_UNKNOWN;
			top = fmax(top, capture_share(&s.base.caps[i], v));
		}
		for (size_t i = 0; i < s.cur.n; i++)
			top = fmax(top, capture_share(&s.cur.caps[i],
						      m.self[r * m.ncaps + s.base.n + i]));
		/*
		 * Too few captures know it (summaries cut it off): its baseline
		 * is not measured, so it is not tested.
		 */
		if (top < o->abs_margin || known < o->min_baseline) {
			a->filtered++;
			continue;
		}
		rows[nrows] = r;
		ids[nrows] = m.func_ids[r];
		nrows++;
	}
	if ((rc = func_names_load(&names, &files, d, ids, nrows, err)) < 0 ||
	    (rc = describe_sides(&releases, &capids, &s)) < 0) {
		if (rc == PR_ENOMEM)
			rc = oom(err);
		goto out;
	}
	for (size_t k = 0; k < nrows; k++)
		if ((rc = baseline_summarize(&bf[k], &m, rows[k], 0, &s.base, err)) < 0)
			goto out;
	if (store &&
	    (rc = baseline_store(&baseline_id, &reused, d, t->service_id, t->type, s.window_start,
				 s.window_end, &s.base, bf, nrows, err)) < 0)
		goto out;
	if (grow_tests(a, nrows) < 0) {
		rc = oom(err);
		goto out;
	}
	t_tests = time_mono();
	for (size_t k = 0; k < nrows; k++) {
		finding *f = &a->tests[a->ntests];
		size_t nb, nc;
		memset(f, 0, sizeof(*f));
		nb = series_fill(&sb, &m, rows[k], 0, &s.base);
		nc = series_fill(&sc, &m, rows[k], s.base.n, &s.cur);
		if (nc == 0) {
			/* No current capture knows it: nothing to judge. */
			a->filtered++;
			continue;
		}
		if ((rc = test_function(f, &sb, &sc, nb, nc, o)) < 0) {
			finding_clear(f);
			rc = rc == STATS_ENOMEM ? oom(err)
			     : pr_error_set(err, PR_ERR, "cannot test '%s' in service '%s': %s",
					    names[k], t->service, stats_error_name(rc));
			goto out;
		}
		f->service_id = t->service_id;
		f->function_id = ids[k];
		f->baseline_id = baseline_id;
		f->service = strdup(t->service);
		f->type = strdup(t->type);
		f->function = names[k], names[k] = NULL;
		f->file = files[k], files[k] = NULL;
		f->current_release =
			strdup(t->release ? t->release : s.cur.caps[s.cur.n - 1].release);
		f->baseline_releases = strdup(releases);
		f->capture_ids = strdup(capids);
		a->ntests++;
		if (!f->service || !f->type || !f->current_release || !f->baseline_releases ||
		    !f->capture_ids) {
			rc = oom(err);
			goto out;
		}
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
	free(rows);
	free(ids);
	free(bf);
	free(releases);
	free(capids);
	func_names_free(names, files, nrows);
	func_matrix_release(&m);
	sides_release(&s);
	return rc;
}

/* Findings first; regressions, then shifts, then improvements; by score. */
static int rank_cmp(const void *x, const void *y)
{
	const finding *a = x, *b = y;

	if (a->significant != b->significant)
		return a->significant ? -1 : 1;
	if (a->direction != b->direction)
		return a->direction == FINDING_REGRESSION ? -1 :
		       b->direction == FINDING_REGRESSION ? 1 :
		       a->direction == FINDING_RELATIVE_SHIFT ? -1 : 1;
	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	if (a->q_value != b->q_value)
		return a->q_value < b->q_value ? -1 : 1;
	return strcmp(a->function, b->function);
}

/*
 * A share that rose while the function's absolute rate did not rise
 * significantly, and rose by less than half as much as the share, was
 * pushed up by something else getting cheaper; likewise a share that fell
 * while its rate did not follow. Both conditions: a noisy rate alone must
 * not turn a real regression into a shift.
 */
static bool is_relative_shift(const finding *f, double alpha)
{
	double share_ratio;

	if (isnan(f->rate_ratio) || f->baseline_share <= 0)
		return false;
	share_ratio = f->current_share / f->baseline_share;
	if (f->direction == FINDING_REGRESSION)
		return !(f->rate_p_up <= alpha) && f->rate_ratio - 1 < 0.5 * (share_ratio - 1);
	return !(f->rate_p_down <= alpha) && 1 - f->rate_ratio < 0.5 * (1 - share_ratio);
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

int analysis_finish(analysis *a, pr_error *err)
{
	double *up = NULL, *down = NULL, t0 = time_mono();
	int rc = 0;

	if (a->ntests && (!(up = malloc(a->ntests * sizeof(*up))) ||
			  !(down = malloc(a->ntests * sizeof(*down))))) {
		rc = oom(err);
		goto out;
	}
	/*
	 * Rises and falls are separate families: a regression's q counts only
	 * the run's tests for a rise, so improvements never dilute it.
	 */
	for (size_t i = 0; i < a->ntests; i++) {
		up[i] = a->tests[i].p_up;
		down[i] = a->tests[i].p_down;
	}
	if (a->ntests && (stats_bh_qvalues(up, a->ntests, up) < 0 ||
			  stats_bh_qvalues(down, a->ntests, down) < 0)) {
		rc = pr_error_set(err, PR_ERR, "cannot adjust %zu p-values", a->ntests);
		goto out;
	}
	a->nfindings = 0;
	for (size_t i = 0; i < a->ntests; i++) {
		finding *f = &a->tests[i];
		double lo_pp, rel;

		f->q_value = f->direction == FINDING_REGRESSION ? up[i] : down[i];
		f->significant =
			f->q_value <= a->opts.fdr &&
			(f->mw_p <= a->opts.mw_alpha ||
			 mw_floor(f->baseline_captures, f->current_captures) > a->opts.mw_alpha);
		if (f->significant && is_relative_shift(f, a->opts.mw_alpha))
			f->direction = FINDING_RELATIVE_SHIFT;
		/* The conservative end of the change, in the direction it went. */
		lo_pp = 100 * (f->direction == FINDING_IMPROVEMENT ? -f->ci_high : f->ci_low);
		rel = f->baseline_share > 0 ? lo_pp / (100 * f->baseline_share) : INFINITY;
		f->score = stats_score(lo_pp, f->q_value, 1.0);
		if (isnan(f->score))
			f->score = 0;
		f->severity = f->significant && f->direction == FINDING_REGRESSION
			? stats_severity_of(lo_pp, rel, f->q_value, &a->opts.severity)
			: STATS_SEV_NONE;
		if (f->significant)
			a->nfindings++;
	}
	if (a->ntests)
		qsort(a->tests, a->ntests, sizeof(*a->tests), rank_cmp);
out:
	free(up);
	free(down);
	a->stats_seconds += time_mono() - t0;
	return rc;
}

static json_t *num_or_null(double v)
{
	return isnan(v) || isinf(v) ? json_null() : json_real(v);
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
	json_object_set_new(o, "score", num_or_null(f->score));
	json_object_set_new(o, "rate_ratio", num_or_null(f->rate_ratio));
	json_object_set_new(o, "test", f->test ? json_string(f->test) : json_null());
	json_object_set_new(o, "baseline_captures", json_integer((json_int_t)f->baseline_captures));
	json_object_set_new(o, "current_captures", json_integer((json_int_t)f->current_captures));
	json_object_set_new(o, "current_release",
			    f->current_release ? json_string(f->current_release) : json_null());
	json_object_set_new(o, "baseline_releases", rel ? rel : json_array());
	/* Fixed key order, whether the ids came from this run or from jsonb. */
	json_object_set_new(o, "capture_ids", caps ? json_pack("{s:O,s:O}",
		"baseline", json_object_get(caps, "baseline") ? json_object_get(caps, "baseline")
							       : json_null(),
		"current", json_object_get(caps, "current") ? json_object_get(caps, "current")
							     : json_null()) : json_null());
	json_decref(caps);
	json_object_set_new(o, "id", f->id ? json_integer((json_int_t)f->id) : json_null());
	return o;
}

