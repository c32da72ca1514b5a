/*
 * html.c: the report as one self-contained HTML page.
 *
 * Inline CSS, inline SVG and a few lines of inline JavaScript (zoom and
 * search in the flame graphs); nothing is fetched, so the page opens
 * offline and from an artifact store. Every string from a profile or the
 * database goes through esc_html.
 */
#define _POSIX_C_SOURCE 200809L
#include "reports/report.h"
#include "reports/escape.h"
#include "reports/measure.h"
#include "common/timeutil.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Past this size, later flame graphs are drawn with fewer frames. */
#define PAGE_BUDGET (4u << 20)
#define SMALL_FRAMES 300

typedef report_out out;
#define P report_put

/* Escaped text; NULL shows as `dash`. */
static void E(out *o, const char *s, const char *dash)
{
	if (o->rc < 0)
		return;
	o->rc = esc_html(o->b, s ? s : dash);
}

/* A name in a table cell: cut in the middle past ESC_CELL_MAX bytes. */
static void EC(out *o, const char *s)
{
	if (o->rc < 0)
		return;
	o->rc = esc_html_cell(o->b, s ? s : "");
}

/* Text a repository wrote (a commit's subject, its author): read, never sent back. */
static void ET(out *o, const char *s)
{
	if (o->rc < 0)
		return;
	o->rc = esc_html_text(o->b, s ? s : "");
}

static void T(out *o, int64_t us)
{
	char t[TIME_FMT_MAX];

	if (!us) {
		P(o, "-");
		return;
	}
	time_format(t, us);
	P(o, "%s", t);
}

static const char css[] =
	"body{font:14px/1.45 system-ui,-apple-system,'Segoe "
	"UI',Roboto,sans-serif;margin:24px;color:#1b1b1b;max-width:1260px}\n"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px "
	"solid #ddd;padding-bottom:4px}\n"
	"h3{font-size:15px;margin:18px 0 6px}.meta,.note{color:#666}\n"
	"table{border-collapse:collapse;margin:6px 0}td,th{padding:3px 8px;border-bottom:1px solid "
	"#eee;text-align:left;vertical-align:top}\n"
	"th{background:#f6f6f6;font-weight:600}td.num{text-align:right;"
	"font-variant-numeric:tabular-nums;white-space:nowrap}\n"
	"code,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;"
	"font-size:12.5px;word-break:break-all}\n"
	"pre{background:#f6f6f6;padding:8px;overflow-x:auto;font-size:12.5px}\n"
	".sev{display:inline-block;padding:0 6px;border-radius:3px;color:#fff;font-size:12px}\n"
	".sev-critical{background:#8b0000}.sev-high{background:#d62020}"
	".sev-medium{background:#e07b00}.sev-low{background:#888}.sev-none{background:#bbb}\n"
	".up{color:#c01818}.down{color:#1d5fcf}\n"
	".legend span{display:inline-block;width:14px;height:10px;margin:0 3px 0 "
	"10px;vertical-align:middle}\n"
	"section.finding{margin-top:24px}\n"
	"svg.spark circle.cur{fill:#d62020}svg.spark circle.base{fill:#4a6fa5}\n";

static const char *sev_class(const char *s)
{
	static const char *known[] = {"critical", "high", "medium", "low"};

	for (size_t i = 0; s && i < 4; i++)
		if (strcmp(s, known[i]) == 0)
			return known[i];
	return "none";
}

static void pct(out *o, double share)
{
	char b[32];
	P(o, "%s", report_pct(b, share));
}

static void pp(out *o, double d)
{
	if (isnan(d))
		P(o, "-");
	else
		P(o, "%+.2fpp", 100 * d);
}

static void num_g(out *o, double v)
{
	if (isnan(v))
		P(o, "-");
	else
		P(o, "%.2g", v);
}

static void anchor(out *o, const report_finding *f, size_t i)
{
	if (f->id)
		P(o, "finding-%" PRId64, f->id);
	else
		P(o, "row-%zu", i + 1);
}

/* " in 2 entries (...)": an incident is one entry of the table, its members inside it. */
static const char *entries_text(char out[96], size_t entries)
{
	snprintf(out, 96, " in %zu entr%s (an incident's members inside its lead's)", entries,
		 entries == 1 ? "y" : "ies");
	return out;
}

/* A titled list of texts, nothing when there are none. */
static void list(out *o, const char *title, char *const *items, size_t n)
{
	if (!n)
		return;
	P(o, "<p>%s</p><ul>\n", title);
	for (size_t i = 0; i < n; i++) {
		P(o, "<li>");
		E(o, items[i], "");
		P(o, "</li>\n");
	}
	P(o, "</ul>\n");
}

static void summary(out *o, const report *r)
{
	size_t sev[4], regressions = 0, entries = 0, others = 0;
	char et[96];

	report_severity_counts(r, sev);
	for (size_t i = 0; i < r->nfindings; i++) {
		if (!r->findings[i].direction)
			continue;
		if (strcmp(r->findings[i].direction, "regression") == 0) {
			regressions++;
			entries += !report_folded(r, i);
		} else {
			others++;
		}
	}
	P(o, "<section id=\"summary\"><h2>Summary</h2>\n<table class=\"kv\">\n");
	if (r->run_id) {
		P(o, "<tr><th>run</th><td>#%" PRId64 " (", r->run_id);
		E(o, r->run_kind, "-");
		P(o, ", ");
		E(o, r->run_status, "-");
		P(o, ")</td></tr>\n");
		/* A run judged at a past --at (a replay) says so: its start is not its night. */
		if (r->judged_us) {
			P(o, "<tr><th>judged at</th><td>");
			T(o, r->judged_us);
			P(o, "</td></tr>\n");
		}
		P(o, "<tr><th>started</th><td>");
		T(o, r->started_us);
		P(o, "</td></tr>\n<tr><th>finished</th><td>");
		T(o, r->finished_us);
		P(o, "</td></tr>\n");
	}
	if (r->base_desc) {
		P(o, "<tr><th>baseline</th><td><code>");
		E(o, r->base_desc, "");
		P(o, "</code> (%zu captures)</td></tr>\n<tr><th>target</th><td><code>",
		  r->base_ncaps);
		E(o, r->target_desc, "");
		P(o, "</code> (%zu captures)</td></tr>\n", r->target_ncaps);
	}
	if (r->window_from_us) {
		P(o, "<tr><th>time window</th><td>");
		T(o, r->window_from_us);
		P(o, " to ");
		T(o, r->window_to_us);
		P(o, "</td></tr>\n");
	}
	if (r->services_analysed >= 0)
		P(o, "<tr><th>services</th><td>%ld analysed, %ld failed, %zu skipped</td></tr>\n",
		  r->services_analysed, r->services_failed < 0 ? 0 : r->services_failed, r->nskips);
	if (strcmp(r->kind, "diff") != 0)
		P(o,
		  "<tr><th>regressions</th><td>%zu%s: <span class=\"sev "
		  "sev-critical\">critical %zu</span> "
		  "<span class=\"sev sev-high\">high %zu</span> <span class=\"sev "
		  "sev-medium\">medium %zu</span> "
		  "<span class=\"sev sev-low\">low %zu</span></td></tr>\n"
		  "<tr><th>other findings</th><td>%zu (improvements and "
		  "relative shifts)</td></tr>\n",
		  regressions, entries == regressions ? "" : entries_text(et, entries), sev[3],
		  sev[2], sev[1], sev[0], others);
	P(o, "</table>\n");
	list(o, "Failed:", r->failures, r->nfailures);
	list(o, "Skipped (not analysed):", r->skips, r->nskips);
	/* Analysed, yet a part was not judged: counted above as analysed, so say which. */
	list(o, "Partly judged (analysed, but not all of it):", r->partial, r->npartial);
	if (r->note) {
		P(o, "<p class=\"note\">");
		E(o, r->note, "");
		P(o, "</p>\n");
	}
	P(o, "</section>\n");
}

/*
 * "heap: " before a function when the report mixes types: 27% of heap
 * bytes in use beside 27% of CPU time read as the same measure.
 */
static void type_of(out *o, const report *r, const report_finding *f)
{
	if (!f->type || !report_mixes_types(r))
		return;
	E(o, f->type, "");
	P(o, ": ");
}

static void findings_table(out *o, const report *r)
{
	bool diff = strcmp(r->kind, "diff") == 0;

	P(o, "<section id=\"findings\"><h2>%s</h2>\n",
	  diff ? "Functions whose share changed most" : "Findings");
	if (!r->nfindings) {
		/* A note above (a release never analysed) says why there is nothing. */
		P(o, "<p>%s</p></section>\n",
		  report_empty_line(r) ? report_empty_line(r) : "No findings.");
		return;
	}
	P(o,
	  "<table "
	  "class=\"findings\"><tr><th>#</th><th>severity</th><th>state</th><th>direction</th>"
	  "<th>service</th>"
	  "<th>function</th><th>baseline &rarr; current</th><th>change (95%% "
	  "CI)</th><th>relative</th>"
	  "<th>q</th><th>captures (base/cur)</th><th>release "
	  "(commit)</th><th>suspects</th></tr>\n");
	for (size_t i = 0; i < r->nfindings; i++) {
		const report_finding *f = &r->findings[i];
		const report_finding *mem[8];
		size_t nmem;
		if (report_folded(r, i))
			continue; /* shown in its incident's entry */
		nmem = report_members(r, i, mem, 8);
		P(o, "<tr><td class=\"num\">%zu</td><td><span class=\"sev sev-%s\">",
		  report_entry(r, i, NULL), sev_class(f->severity));
		E(o, f->severity, "-");
		P(o, "</span></td><td>");
		E(o, f->state, "-");
		P(o, "</td><td>");
		E(o, f->direction, "not significant");
		P(o, "</td><td>");
		E(o, f->service, "-");
		if (diff) {
			P(o, "</td><td class=\"mono\">");
			EC(o, f->function);
			P(o, "</td><td class=\"num\">");
		} else {
			P(o, "</td><td>");
			type_of(o, r, f);
			P(o, "<a class=\"mono\" href=\"#");
			anchor(o, f, i);
			P(o, "\">");
			EC(o, f->function);
			P(o, "</a>");
			if (f->renamed_from) {
				P(o, "<br><small>was <span class=\"mono\">");
				E(o, f->renamed_from, "");
				P(o, "</span></small>");
			}
			if (nmem) {
				P(o, "<br><small>incident %" PRId64 ", with ", f->incident_id);
				/* A member has no row: its change is shown here. */
				for (size_t k = 0; k < nmem && k < 8; k++) {
					char v[MEASURE_TEXT_MAX];
					P(o, "%s", k ? "; " : "");
					type_of(o, r, mem[k]);
					P(o, "<a class=\"mono\" href=\"#finding-%" PRId64 "\">",
					  mem[k]->id);
					EC(o, mem[k]->function);
					P(o, "</a> ");
					E(o, mem[k]->severity, "-");
					P(o, " %s",
					  measure_pair(v, sizeof(v), mem[k]->cost_unit,
						       mem[k]->baseline_share,
						       mem[k]->current_share, " &rarr; "));
					P(o, " %s",
					  measure_change(v, sizeof(v), mem[k]->cost_unit,
							 mem[k]->delta, mem[k]->ci_low,
							 mem[k]->ci_high, 2));
				}
				if (nmem > 8)
					P(o, " and %zu more", nmem - 8);
				P(o, "</small>");
			}
			P(o, "</td><td class=\"num\">");
		}
		if (f->cost_unit) {
			/* A whole-service cost: its unit, and a change in percent. */
			char v[MEASURE_TEXT_MAX];
			P(o, "%s", measure_pair(v, sizeof(v), f->cost_unit, f->baseline_share,
						f->current_share, " &rarr; "));
			P(o, "</td><td class=\"num %s\">%s", f->delta > 0 ? "up" : "down",
			  measure_change(v, sizeof(v), f->cost_unit, f->delta, f->ci_low,
					 f->ci_high, 2));
		} else {
			pct(o, f->baseline_share);
			P(o, " &rarr; ");
			pct(o, f->current_share);
			P(o, "</td><td class=\"num %s\">", f->delta > 0 ? "up" : "down");
			pp(o, f->delta);
			if (!isnan(f->ci_low))
				P(o, " [%+.2f, %+.2f]", 100 * f->ci_low, 100 * f->ci_high);
		}
		P(o, "</td><td class=\"num\">");
		if (isnan(f->rel_delta) || isinf(f->rel_delta))
			P(o, "new");
		else
			P(o, "%+.1f%%", 100 * f->rel_delta);
		P(o, "</td><td class=\"num\">");
		num_g(o, f->q_value);
		P(o, "</td><td class=\"num\">%zu/%zu</td><td>", f->baseline_captures,
		  f->current_captures);
		E(o, f->release, "-");
		if (f->commit) {
			P(o, " <code>");
			o->rc = o->rc < 0 ? o->rc
					  : esc_html_n(o->b, f->commit, strnlen(f->commit, 12));
			P(o, "</code>");
		}
		P(o, "</td><td>");
		for (size_t k = 0; k < f->nsuspects && k < 3; k++) {
			P(o, "%s<code>", k ? " " : "");
			o->rc = o->rc < 0 ? o->rc
					  : esc_html_n(o->b, f->suspects[k].sha,
						       strnlen(f->suspects[k].sha, 12));
			P(o, "</code>");
		}
		if (f->nsuspects > 3)
			P(o, " +%zu", f->nsuspects - 3);
		if (!f->nsuspects)
			P(o, "-");
		P(o, "</td></tr>\n");
	}
	P(o, "</table></section>\n");
}

/*
 * The findings the run closed, with why: a night that closed a paged
 * finding must say so, or its report reads as a night where nothing
 * happened. Nothing when it closed none.
 */
static void closed_table(out *o, const report *r)
{
	if (!r->nclosed)
		return;
	P(o, "<section id=\"closed\"><h2>Closed this run</h2>\n<table class=\"findings\">"
	     "<tr><th>finding</th><th>severity</th><th>direction</th><th>service</th>"
	     "<th>function</th><th>release</th><th>state</th><th>why</th></tr>\n");
	for (size_t i = 0; i < r->nclosed; i++) {
		const report_closed *c = &r->closed[i];
		P(o, "<tr><td class=\"num\">%" PRId64 "</td><td><span class=\"sev sev-%s\">", c->id,
		  sev_class(c->severity));
		E(o, c->severity, "-");
		P(o, "</span></td><td>");
		E(o, c->direction, "-");
		P(o, "</td><td>");
		E(o, c->service, "-");
		P(o, "</td><td>");
		if (c->type && report_mixes_types(r)) {
			E(o, c->type, "");
			P(o, ": ");
		}
		P(o, "<span class=\"mono\">");
		E(o, c->function, "whole-service cost");
		P(o, "</span></td><td>");
		E(o, c->release, "-");
		P(o, "</td><td>");
		E(o, c->state, "-");
		P(o, "</td><td>");
		E(o, c->reason, "");
		P(o, "</td></tr>\n");
	}
	P(o, "</table></section>\n");
}

static void legend(out *o)
{
	P(o,
	  "<p class=\"legend note\">Width: in the difference view the mean of the current "
	  "and baseline shares, so that what vanished still shows (dashed, from the baseline); "
	  "the current and baseline views draw one side. Colour: change "
	  "of the frame's self share"
	  " against the baseline<span style=\"background:#d62020\"></span>grew"
	  "<span style=\"background:#265cd6\"></span>shrank<span "
	  "style=\"background:#eceae4\"></span>unchanged."
	  " Hover for exact values, click to zoom (click the root to reset).</p>\n");
}

static void flame(out *o, const report *r, const flame_tree *t, const char *id,
		  const char *highlight, pr_error *err)
{
	flame_opts fo = r->fopts;

	if (o->rc < 0)
		return;
	fo.id = id;
	fo.highlight = highlight;
	if (o->b->len > PAGE_BUDGET && fo.max_frames > SMALL_FRAMES)
		fo.max_frames = SMALL_FRAMES;
	P(o,
	  "<p><input class=\"flame-search\" type=\"search\" placeholder=\"search "
	  "functions\" data-for=\"%s\"> "
	  "<span id=\"%s-found\" class=\"note\"></span></p>\n",
	  id, id);
	legend(o);
	if (o->rc == 0)
		o->rc = flame_render_svg(o->b, t, &fo, NULL, err);
	if (o->rc == 0 && t->total[FLAME_CUR] > 0 && (o->rc = flame_controls(o->b, id)) < 0)
		pr_error_set(err, o->rc, "cannot write the report: out of memory");
}

/* The capture behind point `pt`, or NULL. */
static const report_capture *point_cap(const report_finding *f, const report_point *pt)
{
	for (size_t i = 0; i < f->ncaps; i++)
		if (f->caps[i].id == pt->capture_id)
			return &f->caps[i];
	return NULL;
}

static const report_finding *sort_f;
static int cmp_point_time(const void *a, const void *b)
{
	const report_point *x = &sort_f->points[*(const size_t *)a];
	const report_point *y = &sort_f->points[*(const size_t *)b];
	return x->at_us < y->at_us ? -1 : x->at_us > y->at_us ? 1 : 0;
}

/* A date (YYYY-MM-DD) or a time of day when the span is short. */
static void tick_label(out *o, int64_t us, bool short_span)
{
	char t[TIME_FMT_MAX];

	time_format(t, us);
	if (short_span && strlen(t) >= 16)
		P(o, "%.5s %.5s", t + 5, t + 11);
	else
		P(o, "%.10s", t);
}

/* A point's value: a share with three decimals, a cost in its unit. */
static const char *value(char out[MEASURE_TEXT_MAX], const report_finding *f, double v)
{
	if (f->cost_unit)
		return measure_value(out, MEASURE_TEXT_MAX, f->cost_unit, v);
	snprintf(out, MEASURE_TEXT_MAX, "%.3f%%", 100 * v);
	return out;
}

/*
 * The function's share (a cost finding: the service's cost) capture by
 * capture on a time axis with dates: the
 * baseline band shaded, release boundaries marked and named, each point's
 * title naming its capture.
 */
static void sparkline(out *o, const report_finding *f)
{
	const double W = 560, H = 130, L = 44, R = 10, Tp = 16, B = 22;
	double hi = 0, lo = 0;
	int64_t t0, t1;
	size_t *ord = NULL;
	const char *prev_rel = NULL;
	char v[2][MEASURE_TEXT_MAX];
	bool short_span;

	if (!f->npoints) {
		P(o, "<p class=\"note\">No per-capture history for this %s.</p>\n",
		  f->cost_unit ? "cost: its captures lack a duration or a load" : "function");
		return;
	}
	if (!(ord = malloc(f->npoints * sizeof(*ord)))) {
		o->rc = PR_ENOMEM;
		return;
	}
	for (size_t i = 0; i < f->npoints; i++) {
		ord[i] = i;
		if (f->points[i].share > hi)
			hi = f->points[i].share;
	}
	sort_f = f;
	qsort(ord, f->npoints, sizeof(*ord), cmp_point_time);
	t0 = f->points[ord[0]].at_us;
	t1 = f->points[ord[f->npoints - 1]].at_us;
	short_span = t1 - t0 < 2 * 86400 * INT64_C(1000000);
	if (f->has_band && f->band_median + f->band_spread > hi)
		hi = f->band_median + f->band_spread;
	hi = hi > 0 ? hi * 1.1 : 1;
#define X(us)                                                                      \
	(t1 > t0 ? L + (double)((us) - t0) / (double)(t1 - t0) * (W - L - R) \
		 : (L + W - R) / 2)
#define Y(s) (H - B - ((s) - lo) / (hi - lo) * (H - B - Tp))
	P(o,
	  "<svg class=\"spark\" xmlns=\"http://www.w3.org/2000/svg\" "
	  "width=\"%.0f\" height=\"%.0f\" data-points=\"%zu\" "
	  "font-family=\"system-ui,sans-serif\" font-size=\"10\">\n"
	  "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" "
	  "fill=\"#fafafa\" stroke=\"#ddd\"/>\n",
	  W, H, f->npoints, L, Tp, W - L - R, H - B - Tp);
	if (f->has_band) {
		double top = f->band_median + f->band_spread, bot = f->band_median - f->band_spread;
		if (bot < 0)
			bot = 0;
		P(o,
		  "<rect class=\"band\" x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" "
		  "height=\"%.1f\" fill=\"#4a6fa5\" "
		  "fill-opacity=\"0.15\"><title>baseline median %s &#177; %s</title></rect>\n"
		  "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#4a6fa5\" "
		  "stroke-dasharray=\"3,3\"/>\n",
		  L, Y(top), W - L - R, Y(bot) - Y(top), value(v[0], f, f->band_median),
		  value(v[1], f, f->band_spread), L, W - R, Y(f->band_median), Y(f->band_median));
	}
	/* The value axis: 0 and the top. */
	P(o,
	  "<g class=\"yaxis\" fill=\"#555\" text-anchor=\"end\">"
	  "<text x=\"%.0f\" y=\"%.1f\">%s</text><text x=\"%.0f\" y=\"%.1f\">%s</text></g>\n",
	  L - 3, Y(0) + 3, f->cost_unit ? "0" : "0%", L - 3, Y(hi) + 8,
	  measure_value(v[0], sizeof(v[0]), f->cost_unit, hi));
	/* The time axis: five dates from the first capture to the last. */
	P(o, "<g class=\"xaxis\" fill=\"#555\" text-anchor=\"middle\">");
	for (int k = 0; k < 5 && (k == 0 || t1 > t0); k++) {
		int64_t us = t0 + (t1 - t0) / 4 * k;
		P(o,
		  "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"#999\"/>"
		  "<text class=\"tick\" x=\"%.1f\" y=\"%.0f\">",
		  X(us), X(us), H - B, H - B + 3, X(us), H - B + 13);
		tick_label(o, us, short_span);
		P(o, "</text>");
	}
	P(o, "</g>\n");
	/* Release boundaries, in time order. */
	for (size_t k = 0; k < f->npoints; k++) {
		const report_capture *c = point_cap(f, &f->points[ord[k]]);
		const char *rel = c && c->release ? c->release : NULL;
		if (rel && prev_rel && strcmp(rel, prev_rel) != 0) {
			int64_t ua = f->points[ord[k - 1]].at_us, ub = f->points[ord[k]].at_us;
			double x = (X(ua) + X(ub)) / 2;
			P(o,
			  "<g class=\"release\"><line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" "
			  "y2=\"%.0f\" stroke=\"#b15\" stroke-dasharray=\"2,2\"/>"
			  "<text x=\"%.1f\" y=\"11\" fill=\"#b15\" text-anchor=\"middle\">",
			  x, x, Tp, H - B, x);
			E(o, rel, "");
			P(o, "</text></g>\n");
		}
		if (rel)
			prev_rel = rel;
	}
	P(o, "<polyline fill=\"none\" stroke=\"#777\" stroke-width=\"1\" points=\"");
	for (size_t k = 0; k < f->npoints; k++)
		P(o, "%s%.1f,%.1f", k ? " " : "", X(f->points[ord[k]].at_us),
		  Y(f->points[ord[k]].share));
	P(o, "\"/>\n");
	for (size_t i = 0; i < f->npoints; i++) {
		const report_point *pt = &f->points[i];
		const report_capture *c = point_cap(f, pt);
		P(o,
		  "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" data-capture=\"%" PRId64
		  "\"><title>capture %" PRId64 " (%s), ",
		  pt->current ? "cur" : "base", X(pt->at_us), Y(pt->share),
		  pt->current ? "3" : "2", pt->capture_id, pt->capture_id,
		  pt->current ? "current" : "baseline");
		T(o, pt->at_us);
		if (c && c->release) {
			P(o, ", release ");
			E(o, c->release, "");
		}
		if (c && c->host) {
			P(o, ", host ");
			E(o, c->host, "");
		}
		P(o, ": %s</title></circle>\n", value(v[0], f, pt->share));
	}
#undef X
#undef Y
	P(o,
	  "</svg>\n<p class=\"note\">%s per capture over time: baseline "
	  "(blue) and current (red) captures, release boundaries dashed and named;"
	  " the band is the baseline median &#177; 1.4826 MAD. Hover a point for its "
	  "capture.</p>\n",
	  f->cost_unit ? "Whole-service cost (as the analysis measures it)" : "Self share");
	free(ord);
}

static void id_list(out *o, const report_finding *f, bool current)
{
	bool first = true;

	for (size_t i = 0; i < f->ncaps; i++)
		if (f->caps[i].current == current) {
			P(o, "%s%" PRId64, first ? "" : ",", f->caps[i].id);
			first = false;
		}
}

/* The ids of the snapshots shown beside capture `cap`, or "-". */
static void snapshot_ids(out *o, const report_finding *f, int64_t cap)
{
	bool any = false;

	for (size_t i = 0; i < f->nsnaps; i++)
		if (f->snaps[i].capture_id == cap) {
			P(o, "%s<a href=\"#snapshot-%" PRId64 "\">%" PRId64 "</a>", any ? ", " : "",
			  f->snaps[i].id, f->snaps[i].id);
			any = true;
		}
	if (!any)
		P(o, "-");
}

/* Incident snapshots of the captures' hosts taken near the captures. */
static void snapshots(out *o, const report_finding *f)
{
	if (!f->nsnaps)
		return;
	P(o,
	  "<h3>Incident snapshots</h3>\n<p class=\"note\">Kernel and process state "
	  "of a capture's host taken within %d minutes of the capture.</p>\n"
	  "<table class=\"snaps\"><tr><th>snapshot</th><th>taken</th><th>host</th>"
	  "<th>beside capture</th><th>incident</th><th>reason</th><th>get it</th></tr>\n",
	  (int)(REPORT_SNAPSHOT_WINDOW_US / 60000000));
	for (size_t i = 0; i < f->nsnaps; i++) {
		const report_snapshot *sn = &f->snaps[i];
		int64_t gap_s = sn->gap_us / 1000000;
		P(o, "<tr id=\"snapshot-%" PRId64 "\"><td class=\"num\">%" PRId64 "</td><td>",
		  sn->id, sn->id);
		T(o, sn->taken_us);
		P(o, "</td><td>");
		E(o, sn->host, "-");
		P(o, "</td><td>%" PRId64 " (%s%" PRId64 "m%02" PRId64 "s)</td><td>", sn->capture_id,
		  gap_s < 0 ? "-" : "+", (gap_s < 0 ? -gap_s : gap_s) / 60,
		  (gap_s < 0 ? -gap_s : gap_s) % 60);
		E(o, sn->incident, "-");
		P(o, "</td><td>");
		E(o, sn->reason, "-");
		P(o,
		  "</td><td><code>profreg snapshot extract %" PRId64 " --dir snapshot-%" PRId64
		  "</code></td></tr>\n",
		  sn->id, sn->id);
	}
	P(o, "</table>\n");
}

static void evidence(out *o, const report_finding *f)
{
	if (!f->ncaps && f->captures_note) {
		P(o, "<h3>Captures</h3>\n<p class=\"note\">");
		E(o, f->captures_note, "");
		P(o, "</p>\n");
	}
	if (f->ncaps) {
		size_t ncur = 0;
		for (size_t i = 0; i < f->ncaps; i++)
			ncur += f->caps[i].current;
		P(o, "<h3>Captures</h3>\n");
		/*
		 * Retention may delete a closed finding's baseline: the table
		 * lists what is left, and says of how many, so it agrees with
		 * the counts the finding was judged on above.
		 */
		if (f->captures_note) {
			P(o, "<p class=\"note\">");
			E(o, f->captures_note, "");
			P(o, "</p>\n");
		}
		if (f->baseline_deleted || f->current_deleted)
			P(o,
			  "<details%s><summary>%zu of %zu baseline and %zu of %zu current "
			  "captures left</summary>\n",
			  f->ncaps <= 8 ? " open" : "", f->ncaps - ncur,
			  f->ncaps - ncur + f->baseline_deleted, ncur, ncur + f->current_deleted);
		else
			P(o,
			  "<details%s><summary>%zu baseline and %zu current captures</summary>\n",
			  f->ncaps <= 8 ? " open" : "", f->ncaps - ncur, ncur);
		P(o, "<table class=\"caps\"><tr><th>capture</th><th>side</th><th>captured</th>"
		  "<th>release</th><th>host</th><th>retention</th><th>blob key</th>"
		  "<th>snapshots</th></tr>\n");
		for (size_t i = 0; i < f->ncaps; i++) {
			const report_capture *c = &f->caps[i];
			P(o, "<tr><td class=\"num\">%" PRId64 "</td><td>%s</td><td>", c->id,
			  c->current ? "current" : "baseline");
			T(o, c->at_us);
			P(o, "</td><td>");
			E(o, c->release, "-");
			P(o, "</td><td>");
			E(o, c->host, "-");
			P(o, "</td><td>");
			E(o, c->retention, "-");
			P(o, "</td><td><code class=\"blob\">");
			E(o, c->blob_key, "-");
			P(o, "</code></td><td>");
			snapshot_ids(o, f, c->id);
			P(o, "</td></tr>\n");
		}
		P(o, "</table></details>\n");
	}
	snapshots(o, f);
	P(o, "<h3>Reproduce</h3>\n<pre>");
	if (f->id)
		P(o,
		  "profreg finding show %" PRId64 "\nprofreg report --finding %" PRId64
		  " --out finding-%" PRId64 ".html\n",
		  f->id, f->id, f->id);
	if (f->ncaps) {
		P(o, "profreg diff --base 'id=");
		id_list(o, f, false);
		P(o, "' --target 'id=");
		id_list(o, f, true);
		P(o, "' --out diff.html\nprofreg export 'id=");
		id_list(o, f, true);
		P(o, "' --format pprof --out current.pb.gz\n");
	}
	P(o, "</pre>\n");
}

/* Where the finding is in its life, how it got there, and its incident. */
static void states(out *o, const report *r, size_t i)
{
	const report_finding *f = &r->findings[i];

	if (!f->state || !f->state[0])
		return;
	P(o, "<p class=\"state\">State <b>");
	E(o, f->state, "");
	P(o, "</b>");
	if (f->fixed_by && f->fixed_by[0]) {
		P(o, ", fixed by release ");
		E(o, f->fixed_by, "");
	}
	if (f->carried_from && f->carried_accepted) {
		P(o, "; within the rise of release ");
		E(o, f->carried_release, "?");
		P(o, " accepted by hand as the new level (finding %" PRId64 "): not paged",
		  f->carried_from);
	} else if (f->carried_from) {
		P(o, "; the rise of release ");
		E(o, f->carried_release, "?");
		P(o, " carried on: paged through <a href=\"#finding-%" PRId64 "\">finding %" PRId64
		  "</a>", f->carried_from, f->carried_from);
	}
	if (f->incident_id) {
		P(o, "; incident %" PRId64, f->incident_id);
		if (f->incident_lead && f->incident_lead != f->id)
			P(o, ", led by <a href=\"#finding-%" PRId64 "\">finding %" PRId64 "</a>",
			  f->incident_lead, f->incident_lead);
		else
			P(o, " (its lead: it pages for all of them)");
	}
	P(o, "</p>\n");
	if (!f->nhistory)
		return;
	P(o, "<ol class=\"states\">\n");
	for (size_t k = 0; k < f->nhistory; k++) {
		P(o, "<li><b>");
		E(o, f->history[k].state, "");
		P(o, "</b> ");
		E(o, f->history[k].at, "");
		if (f->history[k].reason && f->history[k].reason[0]) {
			P(o, ": ");
			E(o, f->history[k].reason, "");
		}
		P(o, "</li>\n");
	}
	P(o, "</ol>\n");
}

static void finding_section(out *o, const report *r, size_t i, pr_error *err)
{
	const report_finding *f = &r->findings[i];
	size_t entry, member;
	char id[48];

	P(o, "<section class=\"finding\" id=\"");
	anchor(o, f, i);
	/* A folded member's number is its lead entry's and its place: 1.1 under entry 1. */
	entry = report_entry(r, i, &member);
	if (member)
		P(o, "\"><h2>%zu.%zu <span class=\"sev sev-%s\">", entry, member,
		  sev_class(f->severity));
	else
		P(o, "\"><h2>%zu. <span class=\"sev sev-%s\">", entry, sev_class(f->severity));
	E(o, f->severity, "-");
	P(o, "</span> ");
	E(o, f->direction, "change");
	P(o, ": <code>");
	E(o, f->function, "");
	P(o, "</code></h2>\n<p>");
	E(o, f->service, "-");
	P(o, " (");
	E(o, f->type, "-");
	P(o, "), release ");
	E(o, f->release, "-");
	if (f->commit) {
		P(o, ", commit <code>");
		E(o, f->commit, "");
		P(o, "</code>");
	}
	if (f->file && f->file[0] && !f->cost_unit) { /* a cost's "file" is its unit */
		P(o, ", file <code>");
		E(o, f->file, "");
		P(o, "</code>");
	}
	P(o, "</p>\n");
	states(o, r, i);
	if (f->cost_unit) {
		char v[MEASURE_TEXT_MAX];
		P(o, "<p>Whole-service cost <b>%s</b>",
		  measure_pair(v, sizeof(v), f->cost_unit, f->baseline_share, f->current_share,
			       " &rarr; "));
		P(o, ", change <b class=\"%s\">%+.1f%%</b>", f->delta > 0 ? "up" : "down",
		  100 * f->delta);
		if (!isnan(f->ci_low))
			P(o, " (95%% CI %+.1f%% to %+.1f%%)", 100 * f->ci_low, 100 * f->ci_high);
	} else {
		P(o, "<p>Self share <b>");
		pct(o, f->baseline_share);
		P(o, " &rarr; ");
		pct(o, f->current_share);
		P(o, "</b>, change <b class=\"%s\">", f->delta > 0 ? "up" : "down");
		pp(o, f->delta);
		P(o, "</b>");
		if (!isnan(f->ci_low))
			P(o, " (95%% CI %+.3f to %+.3fpp)", 100 * f->ci_low, 100 * f->ci_high);
		if (!isnan(f->rel_delta) && !isinf(f->rel_delta))
			P(o, ", %+.1f%% relative", 100 * f->rel_delta);
	}
	P(o, "; p ");
	num_g(o, f->p_value);
	P(o, ", q ");
	num_g(o, f->q_value);
	if (f->test) {
		P(o, " (");
		E(o, f->test, "");
		P(o, " test)");
	}
	P(o, "; %zu baseline and %zu current captures.</p>\n", f->baseline_captures,
	  f->current_captures);
	if (f->renamed_from) {
		P(o, "<p class=\"note\">Renamed by this release: its baseline is that of <span "
		     "class=\"mono\">");
		E(o, f->renamed_from, "");
		P(o, "</span>, a name no current capture has, as no baseline capture has this "
		     "one.</p>\n");
	}

	if (strcmp(r->kind, "diff") != 0) {
		P(o, "<h3>Differential flame graph</h3>\n");
		if (f->compare_href) {
			P(o, "<p class=\"compare\"><a href=\"");
			E(o, f->compare_href, "");
			P(o, "\">Compare these captures in the browser</a></p>\n");
		}
		if (f->flame) {
			snprintf(id, sizeof(id), "fg-%zu", i + 1);
			flame(o, r, f->flame, id, f->function, err);
			if (f->flame_note) {
				P(o, "<p class=\"note\">");
				E(o, f->flame_note, "");
				P(o, "</p>\n");
			}
		} else if (f->flame_ref >= 0) {
			P(o, "<p>Same captures as <a href=\"#");
			anchor(o, &r->findings[f->flame_ref], (size_t)f->flame_ref);
			/* "finding N" is its ID, as elsewhere; "#" in the table is a rank. */
			if (r->findings[f->flame_ref].id)
				P(o, "\">finding %" PRId64 "</a>: see its flame graph.</p>\n",
				  r->findings[f->flame_ref].id);
			else
				P(o, "\">row %d</a>: see its flame graph.</p>\n", f->flame_ref + 1);
		} else {
			P(o, "<p class=\"note\">");
			E(o, f->flame_note, "No flame graph: the captures could not be read.");
			P(o, "</p>\n");
		}
		P(o, "<h3>History</h3>\n");
		sparkline(o, f);
		if (f->direction && strcmp(f->direction, "regression") == 0) {
			P(o, "<h3>Suspect commits</h3>\n");
			if (f->nsuspects) {
				P(o, "<ul>\n");
				for (size_t k = 0; k < f->nsuspects; k++) {
					P(o, "<li><code>");
					E(o, f->suspects[k].sha, "");
					P(o, "</code> ");
					ET(o, f->suspects[k].subject);
					P(o, " (");
					ET(o, f->suspects[k].author);
					P(o, ")</li>\n");
				}
				P(o, "</ul>\n");
			}
			/* Beside the commits, the note says what limits them (a cut range). */
			if (!f->nsuspects || f->suspect_note) {
				P(o, "<p class=\"note\">");
				E(o, f->suspect_note, "No suspect commits.");
				P(o, "</p>\n");
			}
		}
	}
	evidence(o, f);
	P(o, "</section>\n");
}

int report_html(buf *b, const report *r, pr_error *err)
{
	out o = {b, 0};
	char gen[TIME_FMT_MAX];

	time_format(gen, r->generated_us ? r->generated_us : time_now_us());
	P(&o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
	E(&o, r->title, "profreg report");
	P(&o, "</title>\n<style>\n%s%s</style>\n</head>\n<body>\n<header><h1>", css, flame_css());
	E(&o, r->title, "profreg report");
	P(&o, "</h1><p class=\"meta\">profreg report, generated %s</p></header>\n", gen);
	summary(&o, r);
	if (r->flame) {
		P(&o, "<section id=\"diff\"><h2>Differential flame graph</h2>\n");
		flame(&o, r, r->flame, "fg-diff", NULL, err);
		P(&o, "</section>\n");
	}
	findings_table(&o, r);
	closed_table(&o, r);
	/* Each entry's section, then its members' (1.1, 1.2), which may rank above it. */
	for (size_t i = 0; i < r->nfindings && o.rc == 0 && strcmp(r->kind, "diff") != 0; i++) {
		if (report_folded(r, i))
			continue;
		finding_section(&o, r, i, err);
		for (size_t j = 0; j < r->nfindings && o.rc == 0; j++)
			if (report_folded(r, j) &&
			    r->findings[j].incident_lead == r->findings[i].id)
				finding_section(&o, r, j, err);
	}
	P(&o, "<script>\n%s</script>\n</body></html>\n", flame_script());
	if (o.rc < 0)
		return pr_error_set(err, o.rc, "cannot write the HTML report: %s",
				    o.rc == PR_ELIMIT ? "it exceeds its size limit"
						      : "out of memory");
	return 0;
}
