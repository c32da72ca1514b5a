/*
 * cmd_finding.c: `profreg finding list` lists stored findings with their
 * states; `profreg finding show ID` reproduces a stored finding from its
 * pinned captures and shows its state history; `profreg finding resolve
 * ID` closes it.
 */
#define _POSIX_C_SOURCE 200809L
#include "common/timeutil.h"
#include "baselines/analysis.h"
#include "baselines/findings.h"
#include "jobs/cli/commands.h"
#include "jobs/access.h"
#include "jobs/config.h"
#include "jobs/evidence.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"
#include "jobs/cli/table.h"
#include "jobs/triage.h"
#include "reports/measure.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

enum { O_NOTE = 1500, O_STATE, O_SERVICE, O_LIMIT, O_ACCEPT };

static const char *const states[] = {"candidate", "confirmed", "went_away", "fixed",
				     "resolved"};

/* The last state change of a history array: "state (reason)" for the table. */
static const char *last_reason(const json_t *history)
{
	const json_t *last = json_array_get(history, json_array_size(history) - 1);
	const char *r = json_string_value(json_object_get(last, "reason"));

	return r && *r ? r : "-";
}

/* Whether the rows of `list` are of more than one profile type (their "type"). */
static bool mixes_types(const json_t *list)
{
	const char *first = NULL;
	const json_t *f;
	size_t i;

	json_array_foreach(list, i, f) {
		const char *t = json_string_value(json_object_get(f, "type"));
		if (t && first && strcmp(first, t) != 0)
			return true;
		first = t ? t : first;
	}
	return false;
}

static int print_findings(const cli_ctx *ctx, const json_t *list)
{
	/*
	 * TYPE when the findings are of more than one type: a heap share is
	 * of bytes in use, and beside a CPU share of the same function it
	 * read as the same measure.
	 */
	static const table_col typed[] = {
		{"ID", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"STATE", TABLE_WHOLE, 0, 0},
		{"SEVERITY", TABLE_WHOLE, 0, 0},
		{"SERVICE", TABLE_LEFT, 7, 20},
		{"TYPE", TABLE_WHOLE, 0, 0},
		{"RELEASE", TABLE_LEFT | TABLE_WIDE_ONLY, 7, 0},
		{"FUNCTION", TABLE_LEFT, 12, 0},
		{"CHANGE", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"LOOKS", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"LAST CHANGE", TABLE_LEFT | TABLE_WIDE_ONLY, 10, 0},
	};
	static const table_col cols[] = {
		{"ID", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"STATE", TABLE_WHOLE, 0, 0},
		{"SEVERITY", TABLE_WHOLE, 0, 0},
		{"SERVICE", TABLE_LEFT, 7, 20},
		{"RELEASE", TABLE_LEFT | TABLE_WIDE_ONLY, 7, 0},
		{"FUNCTION", TABLE_LEFT, 12, 0},
		{"CHANGE", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"LOOKS", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"LAST CHANGE", TABLE_LEFT | TABLE_WIDE_ONLY, 10, 0},
	};
	bool types = mixes_types(list);
	table *t = NULL;
	size_t i;
	json_t *f;
	int status = EXIT_OK;

	if (table_new(&t, types ? typed : cols,
		      types ? sizeof(typed) / sizeof(typed[0]) : sizeof(cols) / sizeof(cols[0]),
		      ctx->wide) < 0)
		goto oom;
	json_array_foreach(list, i, f) {
		double b = json_number_value(json_object_get(f, "baseline_share"));
		double c = json_number_value(json_object_get(f, "current_share"));
		bool cost = strcmp(json_string_value(json_object_get(f, "kind")), "cost") == 0;
		table_addf(t, "%" JSON_INTEGER_FORMAT,
			   json_integer_value(json_object_get(f, "id")));
		table_add(t, json_string_value(json_object_get(f, "state")));
		table_add(t, json_string_value(json_object_get(f, "severity")));
		table_add(t, json_string_value(json_object_get(f, "service")));
		if (types)
			table_add(t, json_string_value(json_object_get(f, "type")));
		table_add(t, json_string_value(json_object_get(f, "release")));
		table_add(t, json_string_value(json_object_get(f, "function")));
		if (cost)
			table_addf(t, "%+.1f%%", b > 0 ? 100 * (c / b - 1) : 0);
		else
			table_addf(t, "%.2f%%->%.2f%%", 100 * b, 100 * c);
		table_addf(t, "%" JSON_INTEGER_FORMAT,
			   json_integer_value(json_object_get(f, "looks")));
		table_add(t, last_reason(json_object_get(f, "states")));
	}
	if (table_print(t, stdout) < 0)
		goto oom;
	goto out;
oom:
	cli_error(ctx, "out of memory");
	status = EXIT_RUNTIME;
out:
	table_free(t);
	return status;
}

static int finding_list(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"state", required_argument, O_STATE, "STATE",
		 "only findings in this state: candidate, confirmed, went_away, fixed, resolved"},
		{"service", required_argument, O_SERVICE, "S", "only this service's findings"},
		{"limit", required_argument, O_LIMIT, "N",
		 "at most N findings, newest first (default 100)"},
		{NULL, 0, 0, NULL, NULL},
	};
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	const char *arg, *state = NULL, *service = NULL;
	unsigned long long limit = 100;
	json_t *list = NULL;
	db *d = NULL;
	bool bad = false;
	int c, first, status;

	if (cli_parser_new(&p, ctx, argc, argv, opts,
			   "profreg finding list [--state STATE] [--service S] [--limit N] "
			   "[--json]",
			   "List stored findings, newest first, with their state and how they got\n"
			   "there: a finding starts as a candidate, is confirmed once it is\n"
			   "significant on enough nightly looks (critical ones at once), and is\n"
			   "closed when it went away (no longer significant once more captures\n"
			   "came), was fixed by a later release, or was resolved by hand. --json\n"
			   "gives each finding's whole state history.") < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		if (c == O_STATE) {
			size_t k;
			for (k = 0; k < sizeof(states) / sizeof(states[0]); k++)
				if (strcmp(arg, states[k]) == 0)
					break;
			if (k == sizeof(states) / sizeof(states[0])) {
				cli_error(ctx, "unknown state '%s' (candidate, confirmed, "
					  "went_away, fixed, resolved)", arg);
				bad = true;
			}
			state = arg;
		} else if (c == O_SERVICE) {
			service = arg;
		} else if (c == O_LIMIT &&
			   cli_parse_u64(ctx, "limit", arg, 1, 1000000, &limit) < 0) {
			bad = true;
		}
	}
	if ((status = cli_end(p, c, bad, 0, 0, NULL, &first)) != CLI_GO)
		return status;
	if (ctx_db_open(ctx, &d, &err) < 0 ||
	    findings_list(&list, d, state, service, (size_t)limit, &err) < 0) {
		status = cli_fail(ctx, &err);
		goto out;
	}
	status = ctx->json ? cli_print_json(ctx, json_incref(list)) : print_findings(ctx, list);
out:
	json_decref(list);
	db_close(d);
	return status;
}

/*
 * Parse "ID" after the options into *id. Returns
 * CLI_GO, or the exit status to return (usage errors are printed).
 */
static int one_id(cli_ctx *ctx, int argc, char **argv, const cli_option *opts, const char *usage,
		  const char *desc, const char **note, bool *accept, int64_t *id)
{
	cli_parser *p = NULL;
	const char *arg;
	unsigned long long v;
	int c, first, status;

	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		if (c == O_NOTE && note)
			*note = arg;
		else if (c == O_ACCEPT && accept)
			*accept = true;
	if ((status = cli_end(p, c, false, 1, 1, "one finding ID", &first)) != CLI_GO)
		return status;
	if (cli_parse_u64(ctx, "ID", argv[first], 1, INT64_MAX, &v) < 0)
		return EXIT_USAGE;
	*id = (int64_t)v;
	return CLI_GO;
}

/* What is left of a finding's captures, for --json (the report's "captures" are its rows). */
static json_t *captures_json(const evidence_left *e)
{
	json_t *o = json_object();
	const evidence_side *sides[2] = {&e->baseline, &e->current};
	static const char *const names[2] = {"baseline", "current"};
	char when[TIME_FMT_MAX];

	for (size_t i = 0; i < 2; i++)
		json_object_set_new(
			o, names[i],
			json_pack("{s:I,s:I,s:I}", "stored", (json_int_t)sides[i]->stored, "left",
				  (json_int_t)sides[i]->left, "cut", (json_int_t)sides[i]->cut));
	time_format(when, e->closed_at_us);
	json_object_set_new(o, "closed_at", e->closed_at_us ? json_string(when) : json_null());
	return o;
}

static int finding_show(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {{NULL, 0, 0, NULL, NULL}};
	pr_error err = PR_ERROR_INIT;
	finding f, again;
	findings_meta meta;
	evidence_left left;
	char gone[2][200], why[420] = "";
	json_t *hist = NULL;
	db *d = NULL;
	int64_t id = 0;
	bool reproduced = false;
	int rc, status;

	memset(&f, 0, sizeof(f));
	memset(&again, 0, sizeof(again));
	status = one_id(ctx, argc, argv, opts, "profreg finding show ID [--json]",
			"Show a stored finding and reproduce its comparison from the captures\n"
			"pinned behind it: the shares, change, interval and p-value come out the\n"
			"same (the q-value belongs to the whole run it was found in).",
			NULL, NULL, &id);
	if (status != CLI_GO)
		return status;
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = findings_get(&f, &meta, d, id, &err)) < 0 ||
	    (rc = access_read_finding(d, "finding.show", f.id, &err)) < 0 ||
	    (rc = triage_reproduce(&again, &reproduced, d, &f, &meta, &err)) < 0 ||
	    (rc = evidence_count(&left, d, f.id, &err)) < 0)
		goto fail;
	/*
	 * Once the finding closed, retention may delete its baseline or cut
	 * it to a summary: "the captures no longer hold this function" then
	 * read as if the current ones had lost it, and hid what went.
	 */
	evidence_gone_text(gone[0], sizeof(gone[0]), &left, true);
	evidence_gone_text(gone[1], sizeof(gone[1]), &left, false);
	if (!reproduced && (gone[0][0] || gone[1][0]))
		snprintf(why, sizeof(why), "%s%s%s", gone[0], gone[0][0] && gone[1][0] ? "; " : "",
			 gone[1]);
	else if (!reproduced)
		snprintf(why, sizeof(why), "the captures no longer hold this function");
	if (ctx->json) {
		json_t *o = analysis_finding_json(&f);
		json_object_set_new(o, "status", json_string(meta.status));
		if (findings_history(&hist, d, f.id, &err) == 0)
			json_object_set_new(o, "states", hist);
		json_object_set_new(o, "reproduced", reproduced ? analysis_finding_json(&again)
								: json_null());
		json_object_set_new(o, "not_reproduced", why[0] ? json_string(why) : json_null());
		json_object_set_new(o, "captures_left", captures_json(&left));
		status = cli_print_json(ctx, o);
	} else {
		char vals[MEASURE_TEXT_MAX], chg[MEASURE_TEXT_MAX];
		printf("finding %" PRId64 " (%s, %s)\nservice   ", id,
		       finding_dir_name(f.direction), meta.status);
		cli_put_safe(stdout, f.service, 0);
		printf("/%s, release ", f.type);
		cli_put_safe(stdout, f.current_release ? f.current_release : "-", 0);
		printf("\nfunction  ");
		cli_put_safe(stdout, f.function, 0);
		/* Which of several "(anonymous)" it is; a cost's "file" is its unit. */
		if (!f.cost_unit && f.file && f.file[0]) {
			printf("\nfile      ");
			cli_put_safe(stdout, f.file, 0);
		}
		/* What the gate and paging act on: a triager reads it here first. */
		printf("\nseverity  %s", stats_severity_name(f.severity));
		if (f.cost_unit)
			printf("\nstored    %s, %s, p %.3g, q %.3g\n",
			       measure_pair(vals, sizeof(vals), f.cost_unit, f.baseline_share,
					    f.current_share, " -> "),
			       measure_change(chg, sizeof(chg), f.cost_unit, f.delta, f.ci_low,
					      f.ci_high, 4),
			       f.p_value, f.q_value);
		else
			printf("\nstored    %.4f%% -> %.4f%%, %+.4fpp [%+.4f, %+.4f], p %.3g, "
			       "q %.3g\n",
			       100 * f.baseline_share, 100 * f.current_share, 100 * f.delta,
			       100 * f.ci_low, 100 * f.ci_high, f.p_value, f.q_value);
		/* Why a confirmed regression paged no one, and what it was set against. */
		if (f.carried_from)
			printf("carried   from finding %" PRId64
			       ", which holds the page for this rise"
			       " (or its level was accepted by hand)\n",
			       f.carried_from);
		/* One root cause, one page: a member's page is its lead's. */
		if (f.incident_id) {
			int64_t inc = 0, lead = 0;
			pr_error ierr = PR_ERROR_INIT;
			if (findings_incident_of(d, f.id, &inc, &lead, &ierr) == 0 && inc) {
				if (lead && lead != f.id)
					printf("incident  %" PRId64 ", led by finding %" PRId64
					       ", which holds its page\n",
					       inc, lead);
				else if (lead)
					printf("incident  %" PRId64 ", led by this finding\n", inc);
			}
		}
		if (f.baseline_releases && strcmp(f.baseline_releases, "[]") != 0) {
			printf("baseline  releases ");
			cli_put_safe(stdout, f.baseline_releases, 0);
			printf("\n");
		}
		/* What retention left; why, unless the line below says it. */
		if (gone[0][0] || gone[1][0]) {
			printf("captures  %zu of %zu baseline and %zu of %zu current captures left",
			       left.baseline.left, left.baseline.stored, left.current.left,
			       left.current.stored);
			if (reproduced)
				printf("%s%s%s%s", gone[0][0] ? "; " : "", gone[0],
				       gone[1][0] ? "; " : "", gone[1]);
			printf("\n");
		}
		if (reproduced && again.cost_unit)
			printf("reproduced %s, %s, p %.3g from %zu baseline and %zu current "
			       "captures\n",
			       measure_pair(vals, sizeof(vals), again.cost_unit,
					    again.baseline_share, again.current_share, " -> "),
			       measure_change(chg, sizeof(chg), again.cost_unit, again.delta,
					      again.ci_low, again.ci_high, 4),
			       again.p_value, again.baseline_captures, again.current_captures);
		else if (reproduced)
			printf("reproduced %.4f%% -> %.4f%%, %+.4fpp [%+.4f, %+.4f], p %.3g "
			       "from %zu baseline and %zu current captures\n",
			       100 * again.baseline_share, 100 * again.current_share,
			       100 * again.delta, 100 * again.ci_low, 100 * again.ci_high,
			       again.p_value, again.baseline_captures, again.current_captures);
		else
			printf("reproduced: cannot be, %s\n", why);
		if (findings_history(&hist, d, f.id, &err) == 0) {
			size_t k;
			json_t *h;
			json_array_foreach(hist, k, h) {
				printf("%-9s %s ", k ? "" : "states",
				       json_string_value(json_object_get(h, "at")));
				const char *st = json_string_value(json_object_get(h, "state"));
				const char *why = json_string_value(json_object_get(h, "reason"));
				cli_put_safe(stdout, st ? st : "", 0);
				printf(": ");
				cli_put_safe(stdout, why ? why : "", 0);
				printf("\n");
			}
			json_decref(hist);
		}
		status = EXIT_OK;
	}
	goto out;
fail:
	status = cli_fail(ctx, &err);
out:
	finding_clear(&f);
	finding_clear(&again);
	db_close(d);
	return status;
}

static int finding_resolve(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"note", required_argument, O_NOTE, "TEXT", "why it is resolved"},
		{"accept", no_argument, O_ACCEPT, NULL,
		 "the rise is expected (a feature that costs more): accept it as the new level"},
		{NULL, 0, 0, NULL, NULL},
	};
	pr_error err = PR_ERROR_INIT;
	db *d = NULL;
	config cfg;
	triage_resolution r;
	const char *note = NULL;
	bool accept = false;
	int64_t id = 0;
	int rc, status;

	memset(&cfg, 0, sizeof(cfg));
	status =
		one_id(ctx, argc, argv, opts, "profreg finding resolve ID [--accept] [--note TEXT]",
		       "Close an open finding. Its current captures stay forensic; the pins on\n"
		       "its baseline captures lift, so retention may collect them again. Each\n"
		       "page it caused gets its resolve event, sent now (or left pending in\n"
		       "the outbox when the target cannot be reached: see profreg page).\n"
		       "\n"
		       "Without --accept, the rise is still a regression: its release stays out\n"
		       "of later baselines, and a later night that finds it again pages it\n"
		       "again. With --accept (a regression, open or already resolved by hand),\n"
		       "the rise is the new level: its release goes back into later baselines,\n"
		       "and a later finding of the same function and type whose rise is not\n"
		       "beyond the accepted one pages no one and fails no gate.",
		       &note, &accept, &id);
	if (status != CLI_GO)
		return status;
	if ((rc = ctx_config_load(ctx, &cfg, &err)) < 0 || (rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = triage_resolve(&r, d, &cfg, id, note, accept, &err)) < 0)
		goto fail;
	if (r.paging_error[0])
		cli_warn(ctx, "paging: %s", r.paging_error);
	if (!ctx->quiet) {
		printf("%s finding %" PRId64 "; %" PRId64 " baseline captures unpinned\n",
		       accept ? "accepted" : "resolved", id, r.unpinned);
		if (r.resolve_events || r.cancelled)
			printf("pages: %zu resolve events, %zu sent, %zu failed; "
			       "%zu unsent pages cancelled\n",
			       r.resolve_events, r.pages.sent, r.pages.failed, r.cancelled);
	}
	status = EXIT_OK;
	goto out;
fail:
	status = cli_fail(ctx, &err);
out:
	db_close(d);
	config_release(&cfg);
	return status;
}

int cmd_finding(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_command cmds[] = {
		{"list", finding_list, "list stored findings with their states"},
		{"show", finding_show, "show a finding and reproduce it from its pinned captures"},
		{"resolve", finding_resolve, "close an open finding"},
		{NULL, NULL, NULL},
	};
	return cli_dispatch(ctx, cmds, ctx->prog, argc - 1, argv + 1);
}
