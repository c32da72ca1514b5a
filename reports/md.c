/*
 * md.c: the report as compact Markdown for CI logs and pull-request
 * comments: the summary, the findings table and, per regression, its
 * suspects and the command that reproduces it, then the relative shifts
 * in a table of their own. No images, no raw HTML; every name goes
 * through esc_md, so a `|` cannot break the table.
 */
#define _POSIX_C_SOURCE 200809L
#include "reports/report.h"
#include "reports/escape.h"
#include "reports/measure.h"
#include "common/timeutil.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef report_out out;
#define P report_put

static void M(out *o, const char *s, const char *dash)
{
	if (o->rc == 0)
		o->rc = esc_md(o->b, s ? s : dash);
}

/* A name in a table row: cut in the middle past ESC_CELL_MAX bytes (its item has it whole). */
static void MC(out *o, const char *s)
{
	if (o->rc == 0)
		o->rc = esc_md_cell(o->b, s ? s : "");
}

static void when(out *o, int64_t us)
{
	char t[TIME_FMT_MAX];

	time_format(t, us);
	P(o, "%s", t);
}

static void short_sha(out *o, const char *sha)
{
	char s[13];

	/* Commit SHAs are hex, but the text came from the database: escape anyway. */
	snprintf(s, sizeof(s), "%s", sha);
	P(o, "`");
	for (const char *c = s; *c; c++)
		P(o, "%c", strchr("0123456789abcdefABCDEF", *c) ? *c : '?');
	P(o, "`");
}

static bool is_shift(const report_finding *f)
{
	return f->direction && strcmp(f->direction, "relative_shift") == 0;
}

static void table_head(out *o)
{
	P(o, "| # | severity | state | direction | service | function | baseline -> current "
	     "| change (95%% CI) | q | captures b/c | release |\n");
	P(o, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
}

/*
 * "heap: " before a function when the report mixes types: 27% of heap
 * bytes in use beside 27% of CPU time read as the same measure.
 */
static void type_of(out *o, const report *r, const report_finding *f)
{
	if (!f->type || !report_mixes_types(r))
		return;
	M(o, f->type, "");
	P(o, ": ");
}

/* Finding i's row, its incident's members named beside its function. */
static void row(out *o, const report *r, size_t i)
{
	const report_finding *f = &r->findings[i];
	const report_finding *mem[8];
	char vals[MEASURE_TEXT_MAX], chg[MEASURE_TEXT_MAX];
	size_t nmem = report_members(r, i, mem, 8);

	P(o, "| %zu | ", report_entry(r, i, NULL));
	M(o, f->severity, "-");
	P(o, " | ");
	M(o, f->state, "-");
	/* As the HTML and the nightly say it: why a confirmed regression paged no one. */
	if (f->carried_from && f->carried_accepted)
		P(o, " (accepted level: finding %" PRId64 ")", f->carried_from);
	else if (f->carried_from)
		P(o, " (carried: paged through finding %" PRId64 ")", f->carried_from);
	P(o, " | ");
	M(o, f->direction, "-");
	P(o, " | ");
	M(o, f->service, "-");
	P(o, " | ");
	type_of(o, r, f);
	MC(o, f->function);
	if (f->renamed_from) {
		P(o, " (was ");
		M(o, f->renamed_from, "");
		P(o, ")");
	}
	if (nmem) {
		P(o, " (incident %" PRId64 ", with ", f->incident_id);
		/* A member has no row: its change is shown here, or it is counted but nowhere. */
		for (size_t k = 0; k < nmem && k < 8; k++) {
			P(o, "%s", k ? "; " : "");
			type_of(o, r, mem[k]);
			MC(o, mem[k]->function);
			P(o, " ");
			M(o, mem[k]->severity, "-");
			P(o, " %s %s",
			  measure_pair(vals, sizeof(vals), mem[k]->cost_unit,
				       mem[k]->baseline_share, mem[k]->current_share, " -> "),
			  measure_change(chg, sizeof(chg), mem[k]->cost_unit, mem[k]->delta,
					 mem[k]->ci_low, mem[k]->ci_high, 2));
		}
		if (nmem > 8)
			P(o, " and %zu more", nmem - 8);
		P(o, ")");
	}
	P(o, " | %s | %s",
	  measure_pair(vals, sizeof(vals), f->cost_unit, f->baseline_share, f->current_share,
		       " -> "),
	  measure_change(chg, sizeof(chg), f->cost_unit, f->delta, f->ci_low, f->ci_high, 2));
	if (isnan(f->q_value))
		P(o, " | - ");
	else
		P(o, " | %.2g ", f->q_value);
	P(o, "| %zu/%zu | ", f->baseline_captures, f->current_captures);
	M(o, f->release, "-");
	P(o, " |\n");
}

/* A regression's suspects and the command that reproduces it, after "N. function:". */
static void item(out *o, const report *r, const report_finding *f)
{
	type_of(o, r, f);
	M(o, f->function, "");
	P(o, ":");
	if (f->nsuspects) {
		P(o, " suspects");
		for (size_t k = 0; k < f->nsuspects; k++) {
			P(o, "%s ", k ? "," : "");
			short_sha(o, f->suspects[k].sha);
			P(o, " ");
			M(o, f->suspects[k].subject, "");
		}
		P(o, ";");
	}
	if (f->id)
		P(o, " reproduce with `profreg finding show %" PRId64 "`", f->id);
	P(o, "\n");
}

/*
 * The findings the run closed, with why: a night that closed a paged
 * finding must say so, or its report reads as a night where nothing
 * happened. Nothing when it closed none.
 */
static void closed_list(out *o, const report *r)
{
	if (!r->nclosed)
		return;
	P(o, "**Closed this run** (%zu):\n\n", r->nclosed);
	for (size_t i = 0; i < r->nclosed; i++) {
		const report_closed *c = &r->closed[i];
		P(o, "- finding %" PRId64 ", ", c->id);
		M(o, c->service, "-");
		P(o, ": ");
		if (c->type && report_mixes_types(r)) {
			M(o, c->type, "");
			P(o, ": ");
		}
		M(o, c->function, "whole-service cost");
		P(o, " of release ");
		M(o, c->release, "-");
		P(o, " (");
		if (c->severity && strcmp(c->severity, "none") != 0) {
			M(o, c->severity, "");
			P(o, " ");
		}
		M(o, c->direction, "-");
		P(o, "): ");
		M(o, c->reason && *c->reason ? c->reason : c->state, "-");
		P(o, "\n");
	}
	P(o, "\n");
}

int report_md(buf *b, const report *r, pr_error *err)
{
	out o = {b, 0};
	size_t sev[4], regressions = 0, entries = 0, nshift;
	bool diff = strcmp(r->kind, "diff") == 0;

	report_severity_counts(r, sev);
	for (size_t i = 0; i < r->nfindings; i++)
		if (r->findings[i].direction &&
		    strcmp(r->findings[i].direction, "regression") == 0) {
			regressions++;
			entries += !report_folded(r, i);
		}
	P(&o, "## ");
	M(&o, r->title, "profreg report");
	P(&o, "\n\n");
	if (r->run_id) {
		P(&o, "Run #%" PRId64 " (", r->run_id);
		M(&o, r->run_kind, "-");
		P(&o, ", ");
		M(&o, r->run_status, "-");
		P(&o, ")");
		if (r->judged_us) {
			P(&o, ", judged at ");
			when(&o, r->judged_us);
		}
		if (r->started_us) {
			P(&o, ", started ");
			when(&o, r->started_us);
		}
		P(&o, "\n\n");
	}
	if (diff) {
		P(&o, "Baseline ");
		M(&o, r->base_desc, "");
		P(&o, " (%zu captures), target ", r->base_ncaps);
		M(&o, r->target_desc, "");
		P(&o, " (%zu captures)\n\n", r->target_ncaps);
	}
	if (r->window_from_us) {
		P(&o, "Captures from ");
		when(&o, r->window_from_us);
		P(&o, " to ");
		when(&o, r->window_to_us);
		P(&o, "\n\n");
	}
	if (r->services_analysed >= 0)
		P(&o, "Services: %ld analysed, %ld failed, %zu skipped\n\n", r->services_analysed,
		  r->services_failed < 0 ? 0 : r->services_failed, r->nskips);
	for (size_t i = 0; i < r->nfailures; i++) {
		P(&o, "- failed: ");
		M(&o, r->failures[i], "");
		P(&o, "\n");
	}
	for (size_t i = 0; i < r->nskips; i++) {
		P(&o, "- skipped: ");
		M(&o, r->skips[i], "");
		P(&o, "\n");
	}
	/* Analysed, yet a part was not judged: counted above as analysed, so say which. */
	for (size_t i = 0; i < r->npartial; i++) {
		P(&o, "- partly judged: ");
		M(&o, r->partial[i], "");
		P(&o, "\n");
	}
	if (r->nfailures || r->nskips || r->npartial)
		P(&o, "\n");
	/* The HTML's note line too: without it a release never analysed reads as clean. */
	if (r->note) {
		M(&o, r->note, "");
		P(&o, "\n\n");
	}
	if (!diff) {
		P(&o, "**%zu regression%s**", regressions, regressions == 1 ? "" : "s");
		/* An incident is one entry: say so, or the rows do not add up to the count. */
		if (entries != regressions)
			P(&o, " in %zu entr%s (an incident's members inside its lead's)", entries,
			  entries == 1 ? "y" : "ies");
		P(&o, ": %zu critical, %zu high, %zu medium, %zu low\n\n", sev[3], sev[2], sev[1],
		  sev[0]);
	}
	nshift = 0;
	for (size_t i = 0; i < r->nfindings; i++)
		nshift += !report_folded(r, i) && is_shift(&r->findings[i]);
	if (r->nfindings > nshift) {
		table_head(&o);
		for (size_t i = 0; i < r->nfindings; i++)
			if (!report_folded(r, i) && !is_shift(&r->findings[i]))
				row(&o, r, i);
		P(&o, "\n");
	} else if (r->nfindings == 0 && report_empty_line(r)) {
		/* A note (a release never analysed) says why there is nothing. */
		P(&o, "%s\n\n", report_empty_line(r));
	}
	for (size_t i = 0; i < r->nfindings && !diff; i++) {
		const report_finding *f = &r->findings[i];
		const report_finding *mem[8];
		size_t nmem;
		if (report_folded(r, i) || !f->direction || strcmp(f->direction, "regression") != 0)
			continue;
		/* The number is the entry's in the table; its members follow it. */
		P(&o, "%zu. ", report_entry(r, i, NULL));
		item(&o, r, f);
		nmem = report_members(r, i, mem, 8);
		for (size_t k = 0; k < nmem && k < 8; k++) {
			P(&o, "   - with ");
			item(&o, r, mem[k]);
		}
	}
	if (nshift) {
		if (regressions && !diff)
			P(&o, "\n");
		/* Apart, after what moved on its own: they are context, never news. */
		P(&o, "**%zu relative shift%s** (shares that moved only because others did; "
		  "severity none):\n\n", nshift, nshift == 1 ? "" : "s");
		table_head(&o);
		for (size_t i = 0; i < r->nfindings; i++)
			if (!report_folded(r, i) && is_shift(&r->findings[i]))
				row(&o, r, i);
		P(&o, "\n");
	} else if (regressions && !diff && r->nclosed) {
		P(&o, "\n");
	}
	closed_list(&o, r);
	if (o.rc < 0)
		return pr_error_set(err, o.rc, "cannot write the Markdown report: %s",
				    o.rc == PR_ELIMIT ? "it exceeds its size limit"
						      : "out of memory");
	return 0;
}
