/*
 * cmd_postdeploy.c: `profreg post-deploy`, the CI hook after a deploy
 * (the job is jobs/postdeploy.c): options, the Markdown summary for the
 * CI log (also appended to --summary FILE, so no pipe can swallow the
 * exit status), --json, and the exit code.
 *
 * The gate fails closed: exit 0 pass, 1 a regression at or above the
 * gate, 2 usage, 3 infrastructure, 4 bad input (unknown service, a ref
 * that does not resolve, a release with no captures at all), 5
 * inconclusive (too thin a baseline, too few captures, none judged of
 * the deployed commit) unless
 * --on-inconclusive pass. A step that has no verdict by --deadline (a
 * lock held by another session, a server that stops answering) stops
 * with exit 3: a CI gate answers in bounded time, and never with a pass.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/commands.h"
#include "jobs/cli/deadline.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"
#include "jobs/cohort.h"
#include "jobs/postdeploy.h"
#include "common/buf.h"
#include "common/timeutil.h"
#include "reports/measure.h"
#include "reports/report.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	O_SERVICE = 1600,
	O_RELEASE,
	O_COMMIT,
	O_REPO,
	O_PREVIOUS,
	O_WAIT,
	O_MIN,
	O_GATE,
	O_AT,
	O_INCONCLUSIVE,
	O_SUMMARY,
	O_CANARY,
	O_CONTROL,
	O_DEADLINE,
	O_MAX_UNSEEN,
};

/* How long past --wait the step may take by default: a gate answers in bounded time. */
#define DEADLINE_AFTER_WAIT_US (10 * 60 * 1000000LL)

/*
 * Markdown table cells and lines: nothing from outside may change how
 * they render, nor reach the CI log raw (controls, C1, bidi and line
 * separators take the terminal's escaped form, cli_unit_next).
 */
static void md_escape(report_out *o, const char *s)
{
	cli_unit u;

	while (*s) {
		size_t n = cli_unit_next(&u, s);
		/*
		 * Escape what can start emphasis, code, links, images, HTML,
		 * tables or headings; leave the rest readable in a raw CI log.
		 */
		if (n == 1 && u.text[1] == '\0' && strchr("\\`*_[]<>|!~&#", u.text[0]))
			report_put(o, "\\%c", u.text[0]);
		else
			report_put(o, "%s", u.text);
		s += n;
	}
}

/*
 * Commits of the range the summary lists: a CI step summary has a size
 * limit (GitHub's is 1 MiB), and the suspects are named above it.
 */
#define MD_RANGE_SHOWN 100
/* A finding's suspects it lists: a hot file is touched by thousands of a range's commits. */
#define MD_SUSPECTS_SHOWN 20

/* Returns the note printed instead of commits, or NULL. */
static const char *md_suspects(report_out *o, const finding *f, const json_t *s)
{
	const json_t *commits = json_object_get(s, "commits");
	const char *note = json_string_value(json_object_get(s, "note"));
	size_t i;
	json_t *c;

	report_put(o, "%s", "Suspect commits for ");
	md_escape(o, f->function);
	if (f->file && f->file[0]) {
		report_put(o, "%s", " (");
		md_escape(o, f->file);
		report_put(o, "%s", ")");
	}
	if (!s || !json_array_size(commits)) {
		report_put(o, "%s", ": ");
		md_escape(o, note ? note : "none were computed");
		report_put(o, "%s", "\n\n");
		return note;
	}
	report_put(o, "%s", ":\n\n");
	json_array_foreach(commits, i, c) {
		const char *subject = json_string_value(json_object_get(c, "subject"));
		const char *author = json_string_value(json_object_get(c, "author"));
		if (i == MD_SUSPECTS_SHOWN) {
			report_put(o, "- and %zu older (`--json` and the report list them all)\n",
				   json_array_size(commits) - i);
			break;
		}
		report_put(o, "- `%.12s` ", json_string_value(json_object_get(c, "sha")));
		md_escape(o, subject ? subject : "");
		report_put(o, "%s", " (");
		md_escape(o, author ? author : "");
		report_put(o, "%s", ")\n");
	}
	report_put(o, "%s", "\n");
	/* What limits them: a range cut at its newest commits, or a rewritten history. */
	if (note) {
		md_escape(o, note);
		report_put(o, "%s", "\n\n");
	}
	return NULL;
}

/*
 * The relative shifts in one line: functions whose share moved only
 * because others' did (a doubled function makes every other share fall).
 * They never gate nor page, and a table row each buried the regression
 * under them (one 2x regression, eighteen rows of shifts); the report
 * and --json keep every one.
 */
static void shifts(report_out *o, const analysis *a, size_t nshift, const char *report)
{
	size_t shown = 0;

	report_put(o, "%zu function%s moved only because %s did (relative shifts, which "
		   "never gate): ", nshift, nshift == 1 ? "" : "s",
		   a->nfindings > nshift ? "the findings above" : "other functions");
	for (size_t k = 0; k < a->ntests && a->tests[k].significant && shown < 5; k++) {
		if (a->tests[k].direction != FINDING_RELATIVE_SHIFT)
			continue;
		report_put(o, "%s", shown++ ? ", " : "");
		md_escape(o, a->tests[k].function);
	}
	if (nshift > shown)
		report_put(o, " and %zu more", nshift - shown);
	report_put(o, "%s", report ? "; each is in the report.\n\n" : ".\n\n");
}

/*
 * "; 4 of the 9 captures of the release judged (5 stamped after --at)":
 * the count a reader checks the verdict against is the one judged, and
 * the captures left out are said with why, so that none seems judged
 * that was not.
 */
static void captures_line(report_out *o, const postdeploy_opts *opt, const postdeploy_result *x)
{
	int64_t empty = x->captures - x->with_samples - x->later - x->warming;
	int64_t other = x->with_samples - x->judged;
	const char *sep = " (";

	if (x->judged == x->captures)
		report_put(o, "; %" PRId64 " capture%s of the release", x->captures,
			   x->captures == 1 ? "" : "s");
	else
		report_put(o, "; %" PRId64 " of the %" PRId64 " capture%s of the release judged",
			   x->judged, x->captures, x->captures == 1 ? "" : "s");
	if (x->later > 0) {
		report_put(o, "%s%" PRId64 " stamped after %s", sep, x->later,
			   opt->at_us ? "--at" : "the analysis time (a clock ahead)");
		sep = "; ";
	}
	if (x->warming > 0) {
		report_put(o, "%s%" PRId64 " taken in the warm-up around the deploy", sep,
			   x->warming);
		sep = "; ";
	}
	if (empty > 0) {
		report_put(o, "%s%" PRId64 " holding no samples", sep, empty);
		sep = "; ";
	}
	/* A release skipped whole (a baseline too thin) has no type or host to blame. */
	if (other > 0) {
		report_put(o, "%s%" PRId64 " %s", sep, other,
			   x->a.nskipped && !x->a.services
				   ? "not judged: the analysis was skipped, for the reason given"
			   : x->a.nskipped
				   ? "of a type or host the analysis did not judge or skipped"
				   : "of a type or host the analysis did not judge");
		sep = "; ";
	}
	if (sep[0] == ';')
		report_put(o, "%s", ")");
	if (x->waited_us)
		report_put(o, " after waiting %" PRId64 " s", x->waited_us / 1000000);
	report_put(o, "%s", "\n\n");
}

static void markdown(report_out *o, const postdeploy_opts *opt, const postdeploy_result *x,
		     const char *on_inconclusive)
{
	const analysis *a = &x->a;
	stats_severity gate = opt->gate;
	const char *report = x->report;
	size_t nreg = 0, nshift = 0, nacc = 0, i;
	bool said_range = false, mixed = false;
	json_t *v;

	for (size_t k = 0; k < a->ntests && a->tests[k].significant; k++) {
		nreg += a->tests[k].direction == FINDING_REGRESSION;
		nacc += a->tests[k].direction == FINDING_REGRESSION && a->tests[k].accepted;
		nshift += a->tests[k].direction == FINDING_RELATIVE_SHIFT;
		/* A heap share beside a CPU share: each row then names its type. */
		mixed |= a->tests[k].type && a->tests[0].type &&
			 strcmp(a->tests[k].type, a->tests[0].type) != 0;
	}
	/* Heap findings alone, when CPU was judged too, read as CPU's: name them. */
	for (size_t k = 1; k < a->njudged; k++)
		mixed |= strcmp(a->judged[k].type, a->judged[0].type) != 0;
	report_put(o, "%s", "## profreg post-deploy: ");
	md_escape(o, opt->service);
	report_put(o, "%s", " ");
	md_escape(o, opt->release);
	report_put(o, "%s", "\n\n");
	if (strcmp(x->verdict, "fail") == 0) {
		report_put(o, "**Verdict: FAIL** - a regression at or above the gate (%s)\n\n",
			   stats_severity_name(gate));
	} else if (strcmp(x->verdict, "inconclusive") == 0) {
		report_put(o, "**Verdict: inconclusive** (%s) - profreg could not judge this "
			   "release:\n\n",
			   strcmp(on_inconclusive, "fail") == 0
				   ? "the gate fails closed: --on-inconclusive fail"
				   : "passed by --on-inconclusive pass");
		json_array_foreach(x->reasons, i, v) {
			report_put(o, "%s", "- ");
			md_escape(o, json_string_value(v));
			report_put(o, "%s", "\n");
		}
		report_put(o, "%s", "\n");
	} else if (nreg == 0) {
		report_put(o, "%s", "**Verdict: pass** - no regression\n\n");
	} else {
		report_put(o, "**Verdict: pass** - %zu regression%s below the gate (%s)", nreg,
			   nreg == 1 ? "" : "s", stats_severity_name(gate));
		if (nacc)
			report_put(o, " or within a rise accepted by hand as the new level (%zu)",
				   nacc);
		report_put(o, "%s", "\n\n");
	}
	if (x->hosts) {
		const char *side[2] = {"canary", "control"};
		report_put(o, "%s", "Canary deploy: the release on the canary hosts");
		for (int k = 0; k < 2; k++) {
			report_put(o, "%s", k ? " against the control hosts" : "");
			json_array_foreach(json_object_get(x->hosts, side[k]), i, v) {
				report_put(o, "%s", i ? ", " : " ");
				md_escape(o, json_string_value(v));
			}
		}
		report_put(o, "%s", ", over the same window (not earlier releases)\n\n");
	}
	report_put(o, "Commit `%s`", x->sha);
	/* A range started with --previous is not the previous deploy's. */
	if (x->dep.previous_sha[0])
		report_put(o, opt->previous ? ", commits since `%.12s` (--previous)"
					    : ", previous deploy `%.12s`", x->dep.previous_sha);
	captures_line(o, opt, x);
	/* What a pass is worth: the rise of the function hardest to see for want of captures. */
	if (strcmp(x->verdict, "pass") == 0 && x->nblind && isfinite(x->blind[0].unseen)) {
		const analysis_blind *b = &x->blind[0];
		report_put(o, "%s", "Seen: ");
		md_escape(o, b->f->function);
		report_put(o,
			   " (%.1f%% of %s), the function these captures see least, is found "
			   "four times in five once its cost rises enough to make the service "
			   "%.0f%% costlier\n\n",
			   100 * b->from, b->f->type, 100 * b->unseen < 1 ? 1.0 : 100 * b->unseen);
	}
	/* Unmeasured and not a fail: the reasons above say it already. */
	if (x->captured_sha[0] && (!x->unmeasured || strcmp(x->verdict, "fail") == 0)) {
		report_put(o, "%s", "**Another build:** the release was captured as commit ");
		md_escape(o, x->captured_sha);
		report_put(o,
			   " (capture %" PRId64 "), not the deployed commit; the verdict is "
			   "on that build's captures%s\n\n",
			   x->captured_id,
			   x->unmeasured ? ", none of which is of the deployed build" : "");
	}
	/* A verdict that could not see into 5% of the samples or more says so. */
	if (a->nameless >= 0.05)
		report_put(
			o,
			"**Code without symbols:** %.0f%% of the judged samples are in frames "
			"without a name (a stripped binary or library), each object judged as one "
			"function: a regression inside it shows only as far as it moves the whole "
			"object. Ship the build's symbols to judge its functions one by one.\n\n",
			100 * a->nameless);
	if (json_array_size(x->collect)) {
		report_put(o, "%s", "Collection problems:\n\n");
		json_array_foreach(x->collect, i, v) {
			report_put(o, "%s", "- ");
			md_escape(o, json_string_value(v));
			report_put(o, "%s", "\n");
		}
		report_put(o, "%s", "\n");
	}
	if (a->nfindings > nshift) {
		report_put(o, "%s", "| severity | direction | function | baseline -> current | "
			   "change (95% CI) | q | captures b/c |\n"
			   "| --- | --- | --- | --- | --- | --- | --- |\n");
		for (size_t k = 0; k < a->ntests && a->tests[k].significant; k++) {
			const finding *f = &a->tests[k];
			char vals[MEASURE_TEXT_MAX], chg[MEASURE_TEXT_MAX];
			if (f->direction == FINDING_RELATIVE_SHIFT)
				continue; /* one line below */
			report_put(o, "| %s | %s | ", stats_severity_name(f->severity),
				   finding_dir_name(f->direction));
			if (mixed && f->type) {
				md_escape(o, f->type);
				report_put(o, "%s", ": ");
			}
			md_escape(o, f->function);
			if (f->renamed_from) {
				report_put(o, "%s", " (was ");
				md_escape(o, f->renamed_from);
				report_put(o, "%s", ")");
			}
			if (f->accepted)
				report_put(o, " (accepted level: finding %" PRId64 ")",
					   f->carried_from);
			report_put(o, " | %s | %s | %.2g | %zu/%zu |\n",
				   measure_pair(vals, sizeof(vals), f->cost_unit, f->baseline_share,
						f->current_share, " -> "),
				   measure_change(chg, sizeof(chg), f->cost_unit, f->delta,
						  f->ci_low, f->ci_high, 2),
				   f->q_value, f->baseline_captures, f->current_captures);
		}
		report_put(o, "%s", "\n");
	} else if (!nshift && strcmp(x->verdict, "inconclusive") != 0) {
		report_put(o, "%s", "No function's self share moved beyond the margin.\n\n");
	}
	if (nshift)
		shifts(o, a, nshift, report);
	for (size_t k = 0; k < a->ntests && a->tests[k].significant; k++) {
		char id[24];
		const char *note;
		/* A whole-service cost has no file for a commit to touch. */
		if (a->tests[k].direction != FINDING_REGRESSION ||
		    (a->tests[k].kind && strcmp(a->tests[k].kind, FINDING_KIND_COST) == 0))
			continue;
		snprintf(id, sizeof(id), "%" PRId64, a->tests[k].id);
		note = md_suspects(o, &a->tests[k], json_object_get(x->suspects, id));
		said_range |= note && strcmp(note, x->range.note) == 0;
	}
	if (x->range.ncommits) {
		size_t shown =
			x->range.ncommits < MD_RANGE_SHOWN ? x->range.ncommits : MD_RANGE_SHOWN;
		report_put(o, "<details><summary>%zu commit%s since %s</summary>\n\n",
			   x->range.total, x->range.total == 1 ? "" : "s",
			   opt->previous ? "the start given" : "the previous deploy");
		for (size_t k = 0; k < shown; k++) {
			const gitinfo_commit *c = &x->range.commits[k];
			char when[TIME_FMT_MAX];
			time_format(when, c->time_us);
			report_put(o, "- `%.12s` %s ", c->sha, when);
			md_escape(o, c->subject ? c->subject : "");
			report_put(o, "%s", " (");
			md_escape(o, c->author);
			report_put(o, "%s", ")\n");
		}
		if (x->range.total > shown)
			report_put(o, "- and %zu older (`--json` lists the newest %zu)\n",
				   x->range.total - shown, x->range.ncommits);
		report_put(o, "%s", "\n</details>\n");
	} else if (x->range.note[0] && !said_range) {
		/* Said already when a suspect line gave the same reason. */
		md_escape(o, x->range.note);
		report_put(o, "%s", "\n");
	}
	if (report) {
		/* Our own path, in a code span: copied from a CI log as it is. */
		report_put(o, "%s", "\nReport: `");
		for (const unsigned char *c = (const unsigned char *)report; *c; c++)
			report_put(o, *c < 0x20 || *c == 0x7f || *c == '`' ? "\\x%02x" : "%c", *c);
		report_put(o, "%s", "`\n");
	}
}

/* Append the summary to --summary FILE (a CI step summary); failing to is an error. */
static int append_summary(const char *path, const buf *md, pr_error *err)
{
	FILE *f = fopen(path, "a");
	int rc = 0;

	if (!f)
		return pr_error_set(err, PR_EIO, "cannot open '%s' for the summary: %s", path,
				    strerror(errno));
	if ((md->len && fwrite(md->ptr, 1, md->len, f) != md->len) || fflush(f) != 0)
		rc = pr_error_set(err, PR_EIO, "cannot write the summary to '%s': %s", path,
				  strerror(errno));
	if (fclose(f) != 0 && rc == 0)
		rc = pr_error_set(err, PR_EIO, "cannot write the summary to '%s': %s", path,
				  strerror(errno));
	return rc;
}

static json_t *result_json(const postdeploy_opts *opt, const postdeploy_result *x)
{
	const analysis *a = &x->a;
	const pager_counts *pc = &x->pages;
	json_t *findings = json_array(), *commits = suspects_range_json(&x->range), *doc;

	for (size_t i = 0; i < a->ntests && a->tests[i].significant; i++) {
		json_t *o = analysis_finding_json(&a->tests[i]), *s;
		char id[24];
		snprintf(id, sizeof(id), "%" PRId64, a->tests[i].id);
		s = json_object_get(x->suspects, id);
		json_object_set(o, "suspects", s ? s : json_null());
		json_array_append_new(findings, o);
	}
	doc = json_pack("{s:i,s:s,s:s,s:s,s:s?,s:I,s:I,s:s,s:O,s:I,s:O,s:o,s:o,s:s?,"
			 "s:{s:I,s:I,s:I,s:I},s:s?}",
			 "schema_version", 1, "service", opt->service, "release", opt->release,
			 "commit", x->sha, "previous_commit",
			 x->dep.previous_sha[0] ? x->dep.previous_sha : NULL,
			 "deploy_id", (json_int_t)x->dep.id, "run_id", (json_int_t)x->run_id,
			 "verdict", x->verdict, "inconclusive_reasons", x->reasons,
			 "captures", (json_int_t)x->captures, "collection_problems", x->collect,
			 "findings", findings, "commits", commits ? commits : json_array(),
			 "range_note", x->range.note[0] ? x->range.note : NULL,
			 "pages", "enqueued", (json_int_t)a->pages_enqueued,
			 "sent", (json_int_t)pc->sent,
			 "failed", (json_int_t)pc->failed, "pending", (json_int_t)pc->pending,
			 "report", x->report);
	if (doc) {
		json_object_set(doc, "hosts", x->hosts ? x->hosts : json_null());
		json_object_set_new(doc, "warmup_captures", json_integer(x->warming));
		json_object_set_new(doc, "judged_captures", json_integer(x->judged));
		json_object_set_new(doc, "captured_commit", x->captured_sha[0]
					? json_string(x->captured_sha) : json_null());
		json_object_set_new(doc, "blind_spots", analysis_blind_json(x->blind, x->nblind));
	}
	return doc;
}

int cmd_postdeploy(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"service", required_argument, O_SERVICE, "NAME", "the deployed service"},
		{"release", required_argument, O_RELEASE, "RELEASE", "the release deployed"},
		{"commit", required_argument, O_COMMIT, "REF",
		 "its commit: SHA, short SHA, branch or tag"},
		{"repo", required_argument, O_REPO, "PATH",
		 "the service's git repository (default: from the config)"},
		{"previous", required_argument, O_PREVIOUS, "REF",
		 "start of the commit range (default: the previous deploy)"},
		{"wait", required_argument, O_WAIT, "DURATION",
		 "wait up to this long for captures (default 0)"},
		{"min-captures", required_argument, O_MIN, "N",
		 "captures of the release to wait for (default 1)"},
		{"gate", required_argument, O_GATE, "SEVERITY",
		 "fail (exit 1) at or above: low, medium, high, critical (default high)"},
		{"max-unseen", required_argument, O_MAX_UNSEEN, "PCT",
		 "a pass needs the captures to see one function making the service PCT% "
		 "costlier beyond the gate's margins (default 25; 0: never asked)"},
		{"on-inconclusive", required_argument, O_INCONCLUSIVE, "pass|fail",
		 "when the release cannot be judged: exit 5 (fail, the default) or 0"},
		{"summary", required_argument, O_SUMMARY, "FILE",
		 "also append the Markdown summary to FILE (e.g. $GITHUB_STEP_SUMMARY)"},
		{"deadline", required_argument, O_DEADLINE, "DURATION",
		 "give up (exit 3) with no verdict after this long in all (default: --wait + 10m)"},
		{"at", required_argument, O_AT, "TIME",
		 "take TIME as now (default: the time the analysis starts)"},
		{"canary", required_argument, O_CANARY, "HOSTS",
		 "a canary deploy: judge these hosts (names or globs, comma-separated)"},
		{"control", required_argument, O_CONTROL, "HOSTS",
		 "... against these hosts over the same window (default: the others)"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char usage[] =
		"profreg post-deploy --service S --release R --commit REF [--repo PATH] [options]";
	static const char desc[] =
		"Check a deploy: wait for captures of the new release, analyse them against\n"
		"the baseline of earlier releases, name suspect commits, print a Markdown\n"
		"summary. Exit 0 pass, 1 a regression at or above --gate, 2 usage, 3\n"
		"infrastructure error, 4 bad input (unknown service, a commit that does not\n"
		"resolve, a release with no captures), 5 inconclusive (the baseline or the\n"
		"captures too few to judge; 0 with --on-inconclusive pass). A step with no\n"
		"verdict by --deadline (a database lock held elsewhere, a server that hangs)\n"
		"stops with exit 3 and the reason. With --canary,\n"
		"the release's captures on the canary hosts are judged against the control\n"
		"hosts' captures over the same window instead of the earlier releases.";
	pr_error err = PR_ERROR_INIT;
	postdeploy_opts o;
	postdeploy_result x;
	cli_parser *p = NULL;
	config cfg;
	db *d = NULL;
	blob_store *bs = NULL;
	const char *arg, *on_inc = "fail", *summary_path = NULL, *deadline_arg = NULL;
	unsigned long long min_caps = 1;
	int64_t deadline_us = 0;
	cli_deadline watch;
	char deadline_text[128], deadline_line[400];
	buf md = BUF_INIT;
	bool bad = false;
	int c, rc, status;

	memset(&o, 0, sizeof(o));
	memset(&x, 0, sizeof(x));
	memset(&cfg, 0, sizeof(cfg));
	memset(&watch, 0, sizeof(watch));
	o.gate = STATS_SEV_HIGH;
	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		switch (c) {
		case O_SERVICE: o.service = arg; break;
		case O_RELEASE: o.release = arg; break;
		case O_COMMIT: o.ref = arg; break;
		case O_REPO: o.repo = arg; break;
		case O_PREVIOUS: o.previous = arg; break;
		case O_SUMMARY: summary_path = arg; break;
		case O_CANARY: o.canary = arg; break;
		case O_CONTROL: o.control = arg; break;
		case O_AT:
			if (time_parse(&o.at_us, arg) < 0 || o.at_us == 0) {
				cli_error(ctx, "'--at %s' is not an ISO 8601 time", arg);
				bad = true;
			}
			break;
		case O_WAIT:
			if (time_parse_duration(&o.wait_us, arg) < 0) {
				cli_error(ctx, "'--wait %s' is not a duration like 10m", arg);
				bad = true;
			}
			break;
		case O_DEADLINE:
			if (time_parse_duration(&deadline_us, arg) < 0 || deadline_us <= 0) {
				cli_error(ctx, "'--deadline %s' is not a duration like 20m", arg);
				bad = true;
			}
			deadline_arg = arg;
			break;
		case O_MIN:
			if (cli_parse_u64(ctx, "min-captures", arg, 1, 100000, &min_caps) < 0)
				bad = true;
			break;
		case O_MAX_UNSEEN:
			if (cli_parse_number(ctx, "max-unseen", arg, 0, 100000, &o.max_unseen) < 0)
				bad = true;
			else
				o.max_unseen = o.max_unseen > 0 ? o.max_unseen / 100 : -1;
			break;
		case O_GATE:
			if (stats_severity_parse(&o.gate, arg) < 0 || o.gate == STATS_SEV_NONE) {
				cli_error(ctx, "'--gate %s' is not low, medium, high or critical",
					  arg);
				bad = true;
			}
			break;
		case O_INCONCLUSIVE:
			if (strcmp(arg, "pass") != 0 && strcmp(arg, "fail") != 0) {
				cli_error(ctx, "'--on-inconclusive %s' is not pass or fail", arg);
				bad = true;
			}
			on_inc = arg;
			break;
		}
	}
	if ((status = cli_end(p, c, bad, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	cli_say_on_signal(ctx, "the release is not passed");
	if (!o.service || !o.release || !o.ref || !*o.release) {
		cli_error(ctx, "--service, --release and --commit are required (see --help)");
		return EXIT_USAGE;
	}
	if (o.control && !o.canary) {
		cli_error(ctx, "--control needs --canary (the canary hosts)");
		return EXIT_USAGE;
	}
	/*
	 * A host list's syntax is known now; refused after --wait, a typo cost
	 * CI the whole wait. Unknown hosts are checked after it: their captures
	 * may arrive while it runs.
	 */
	if (cohort_check_spec(o.canary, "canary", &err) < 0 ||
	    cohort_check_spec(o.control, "control", &err) < 0)
		return cli_fail(ctx, &err);
	if (deadline_arg && deadline_us <= o.wait_us) {
		cli_error(ctx, "'--deadline %s' leaves no time after '--wait' to judge the release",
			  deadline_arg);
		return EXIT_USAGE;
	}
	/*
	 * A summary that cannot be written was found only after the analysis,
	 * with the deploy recorded and the gate's verdict hidden behind exit 3.
	 */
	if (summary_path) {
		buf none = BUF_INIT;
		if (append_summary(summary_path, &none, &err) < 0) {
			cli_error(ctx, "%s", err.msg);
			return EXIT_USAGE;
		}
	}
	o.min_captures = min_caps;
	if (deadline_arg)
		snprintf(deadline_text, sizeof(deadline_text), "--deadline %s", deadline_arg);
	else
		snprintf(deadline_text, sizeof(deadline_text), "the default, --wait plus %lld min",
			 DEADLINE_AFTER_WAIT_US / 60000000);
	snprintf(deadline_line, sizeof(deadline_line),
		 "%s: no verdict within the deadline (%s): the database or a source did not "
		 "answer in time (a lock held by another session, a server that hangs); "
		 "stopped, the release is not passed",
		 ctx->prog ? ctx->prog : "profreg", deadline_text);
	if (!deadline_arg)
		deadline_us = o.wait_us + DEADLINE_AFTER_WAIT_US;
	o.deadline_us = (int64_t)(time_mono() * 1e6) + deadline_us;
	if ((rc = cli_deadline_start(&watch, deadline_us, deadline_line, &err)) < 0)
		goto fail;
	if ((rc = ctx_config_load(ctx, &cfg, &err)) < 0 || (rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = ctx_blobs_open(ctx, &bs, &err)) < 0)
		goto fail;
	{
		job_env env = {&cfg, d, bs, ctx->home, NULL};
		rc = postdeploy_run(&x, &env, &o, &err);
		cli_deadline_stop(&watch);
		if (rc < 0)
			goto fail;
	}
	{
		report_out out = {&md, 0};
		markdown(&out, &o, &x, on_inc);
		if ((rc = out.rc) < 0) {
			pr_error_set(&err, PR_ENOMEM, "out of memory");
			goto fail;
		}
	}
	if (summary_path && (rc = append_summary(summary_path, &md, &err)) < 0)
		goto fail;
	for (size_t i = 0; i < x.notes.n; i++)
		cli_warn(ctx, "%s", x.notes.lines[i]);
	if (ctx->json) {
		status = cli_print_json(ctx, result_json(&o, &x));
	} else {
		fwrite(md.ptr, 1, md.len, stdout);
		if (x.a.pages_enqueued || x.pages.sent || x.pages.failed || x.pages.pending)
			printf("\nPages: %zu enqueued, %zu sent, %zu failed, %zu pending.\n",
			       x.a.pages_enqueued, x.pages.sent, x.pages.failed, x.pages.pending);
		status = EXIT_OK;
	}
	if (status == EXIT_OK && strcmp(x.verdict, "fail") == 0)
		status = EXIT_GATE;
	else if (status == EXIT_OK && strcmp(x.verdict, "inconclusive") == 0 &&
		 strcmp(on_inc, "fail") == 0)
		status = EXIT_INCONCLUSIVE;
	/* The verdict stands: a failing gate keeps exit 1, a pass is no success. */
	status = cli_report_problem(ctx, x.run_id, x.report_problem, status);
	goto out;
fail:
	cli_deadline_stop(&watch);
	status = cli_fail(ctx, &err);
out:
	buf_release(&md);
	postdeploy_result_release(&x);
	blob_store_free(bs);
	db_close(d);
	config_release(&cfg);
	return status;
}
