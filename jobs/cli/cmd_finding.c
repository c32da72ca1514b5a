/*
 * cmd_finding.c: `profreg finding show ID` reproduces a stored finding from
 * its pinned captures; `profreg finding resolve ID` closes it.
 */
#define _POSIX_C_SOURCE 200809L
#include "baselines/analysis.h"
#include "baselines/findings.h"
#include "jobs/cli/commands.h"
#include "jobs/config.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"
#include "jobs/triage.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

enum { O_NOTE = 1500 };

/*
 * Parse "ID" after the options into *id (a pointer into argv). Returns
 * CLI_GO, or the exit status to return (usage errors are printed).
 */
static int one_id(cli_ctx *ctx, int argc, char **argv, const cli_option *opts,
		  const char *usage, const char *desc, const char **note, const char **id)
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
	if ((status = cli_end(p, c, false, 1, 1, "one finding ID", &first)) != CLI_GO)
		return status;
	if (cli_parse_u64(ctx, "ID", argv[first], 1, INT64_MAX, &v) < 0)
		return EXIT_USAGE;
	*id = argv[first];
	return CLI_GO;
}

static int finding_show(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {{NULL, 0, 0, NULL, NULL}};
	pr_error err = PR_ERROR_INIT;
	finding f, again;
	findings_meta meta;
	db *d = NULL;
	const char *id = NULL;
	bool reproduced = false;
	int rc, status;

	memset(&f, 0, sizeof(f));
	memset(&again, 0, sizeof(again));
	status = one_id(ctx, argc, argv, opts, "profreg finding show ID [--json]",
			"Show a stored finding and reproduce its comparison from the captures\n"
			"pinned behind it: the shares, change, interval and p-value come out the\n"
			"same (the q-value belongs to the whole run it was found in).", NULL, &id);
	if (status != CLI_GO)
		return status;
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = findings_get(&f, &meta, d, (int64_t)strtoll(id, NULL, 10), &err)) < 0 ||
	    (rc = triage_reproduce(&again, &reproduced, d, &f, &meta, &err)) < 0)
		goto fail;
	if (ctx->json) {
		json_t *o = analysis_finding_json(&f);
		json_object_set_new(o, "status", json_string(meta.status));
		json_object_set_new(o, "reproduced", reproduced ? analysis_finding_json(&again)
								: json_null());
		status = cli_print_json(ctx, o);
	} else {
		printf("finding %s (%s, %s)\nservice   ", id, finding_dir_name(f.direction),
		       meta.status);
		cli_put_safe(stdout, f.service, 0);
		printf("/%s, release ", f.type);
		cli_put_safe(stdout, f.current_release ? f.current_release : "-", 0);
		printf("\nfunction  ");
		cli_put_safe(stdout, f.function, 0);
		printf("\nstored    %.4f%% -> %.4f%%, %+.4fpp [%+.4f, %+.4f], p %.3g, q %.3g\n",
		       100 * f.baseline_share, 100 * f.current_share, 100 * f.delta, 100 * f.ci_low,
		       100 * f.ci_high, f.p_value, f.q_value);
		if (reproduced)
			printf("reproduced %.4f%% -> %.4f%%, %+.4fpp [%+.4f, %+.4f], p %.3g "
			       "from %zu baseline and %zu current captures\n",
			       100 * again.baseline_share, 100 * again.current_share,
			       100 * again.delta, 100 * again.ci_low, 100 * again.ci_high,
			       again.p_value, again.baseline_captures, again.current_captures);
		else
			printf("reproduced: the pinned captures no longer hold this function\n");
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
		{NULL, 0, 0, NULL, NULL},
	};
	pr_error err = PR_ERROR_INIT;
	db *d = NULL;
	config cfg;
	triage_resolution r;
	const char *id = NULL, *note = NULL;
	int rc, status;

	memset(&cfg, 0, sizeof(cfg));
	status = one_id(ctx, argc, argv, opts, "profreg finding resolve ID [--note TEXT]",
			"Close an open finding. Its current captures stay forensic; the pins on\n"
			"its baseline captures lift, so retention may collect them again. Each\n"
			"page it caused gets its resolve event, sent now (or left pending in\n"
			"the outbox when the target cannot be reached: see profreg page).",
			&note, &id);
	if (status != CLI_GO)
		return status;
	if ((rc = ctx_config_load(ctx, &cfg, &err)) < 0 ||
	    (rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = triage_resolve(&r, d, &cfg, (int64_t)strtoll(id, NULL, 10), note, &err)) < 0)
		goto fail;
	if (r.paging_error[0])
		cli_warn(ctx, "paging: %s", r.paging_error);
	if (!ctx->quiet) {
		printf("resolved finding %s; %" PRId64 " baseline captures unpinned\n", id,
		       r.unpinned);
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
		{"show", finding_show, "show a finding and reproduce it from its pinned captures"},
		{"resolve", finding_resolve, "close an open finding"},
		{NULL, NULL, NULL},
	};
	return cli_dispatch(ctx, cmds, ctx->prog, argc - 1, argv + 1);
}
