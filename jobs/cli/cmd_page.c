/*
 * cmd_page.c: `profreg page list` shows the paging outbox; `profreg page
 * flush` sends what is pending now; `profreg page retry` puts refused
 * pages back in the queue (jobs/pager.h has the guarantees).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/commands.h"
#include "jobs/config.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"
#include "jobs/pager.h"
#include "jobs/cli/table.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

enum { O_STATE = 1700, O_LIMIT, O_ALL_FAILED };

/*
 * The outbox (pager_list's JSON) as a table that fits 80 columns; --wide
 * adds the attempts and when each page was sent, and shows every name
 * whole.
 */
static int print_list(const cli_ctx *ctx, const json_t *pages)
{
	static const table_col cols[] = {
		{"ID", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"STATE", TABLE_WHOLE, 0, 0},
		{"EVENT", TABLE_WHOLE, 0, 0},
		{"TARGET", TABLE_LEFT, 6, 20},
		{"FINDING", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"TRIES", TABLE_RIGHT | TABLE_WHOLE | TABLE_WIDE_ONLY, 0, 0},
		{"SENT", TABLE_WHOLE | TABLE_WIDE_ONLY, 0, 0},
		{"SERVICE", TABLE_LEFT, 7, 24},
		{"FUNCTION", TABLE_LEFT, 16, 0},
		{"LAST ERROR", TABLE_LEFT, 10, 0},
	};
	table *t = NULL;
	const json_t *pg;
	size_t i;
	int status = EXIT_OK;

	if (table_new(&t, cols, sizeof(cols) / sizeof(cols[0]), ctx->wide) < 0)
		goto oom;
	json_array_foreach(pages, i, pg) {
		const char *sent = json_string_value(json_object_get(pg, "sent_at"));
		const char *error = json_string_value(json_object_get(pg, "last_error"));
		const char *svc = json_string_value(json_object_get(pg, "service"));
		const char *fn = json_string_value(json_object_get(pg, "function"));
		const char *state = json_string_value(json_object_get(pg, "state"));
		json_int_t fid = json_integer_value(json_object_get(pg, "finding_id"));
		table_addf(t, "%" JSON_INTEGER_FORMAT,
			   json_integer_value(json_object_get(pg, "id")));
		/* A page of a finding that closed, its key paged again for a later one. */
		if (json_object_get(pg, "retired_at"))
			table_addf(t, "%s, set aside", state);
		else
			table_add(t, state);
		table_add(t, json_string_value(json_object_get(pg, "event")));
		table_add(t, json_string_value(json_object_get(pg, "target")));
		if (fid)
			table_addf(t, "%" JSON_INTEGER_FORMAT, fid);
		else
			table_add(t, "-");
		table_addf(t, "%" JSON_INTEGER_FORMAT,
			   json_integer_value(json_object_get(pg, "attempts")));
		table_add(t, sent ? sent : "-");
		table_add(t, svc && *svc ? svc : "-");
		table_add(t, fn && *fn ? fn : "-");
		table_add(t, error && *error ? error : "-");
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

static int page_list(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"state", required_argument, O_STATE, "STATE",
		 "only pending, sent, failed or cancelled pages"},
		{"limit", required_argument, O_LIMIT, "N",
		 "at most N pages, newest first (default 100)"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char usage[] = "profreg page list [--state S] [--limit N] [--json]";
	static const char desc[] =
		"List the paging outbox, newest first: each page's target, event\n"
		"(trigger or resolve), state, attempts and last error. A pending page is\n"
		"sent by the next run or by `profreg page flush`.";
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	db *d = NULL;
	json_t *pages = NULL;
	const char *arg, *state = NULL;
	unsigned long long limit = 100;
	bool bad = false;
	int c, rc, status;

	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		if (c == O_STATE) {
			if (strcmp(arg, "pending") && strcmp(arg, "sent") &&
			    strcmp(arg, "failed") && strcmp(arg, "cancelled")) {
				cli_error(ctx, "'--state %s' is not pending, sent, failed or "
					  "cancelled", arg);
				bad = true;
			}
			state = arg;
		} else if (c == O_LIMIT &&
			   cli_parse_u64(ctx, "limit", arg, 1, 1000000, &limit) < 0) {
			bad = true;
		}
	}
	if ((status = cli_end(p, c, bad, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = pager_list(&pages, d, state, (size_t)limit, &err)) < 0) {
		db_close(d);
		return cli_fail(ctx, &err);
	}
	db_close(d);
	if (ctx->json)
		return cli_print_json(ctx, json_pack("{s:o}", "pages", pages));
	status = print_list(ctx, pages);
	json_decref(pages);
	return status;
}

static int page_flush(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {{NULL, 0, 0, NULL, NULL}};
	static const char usage[] = "profreg page flush [--json]";
	static const char desc[] =
		"Send every pending page that is due, with retries and backoff, and\n"
		"re-post the Alertmanager alert of every open finding. Safe to run at\n"
		"any time, also beside a nightly run: a page is claimed with a row lock\n"
		"while it is sent. Exit 0 when nothing is left pending and no page of\n"
		"an open finding stands refused (failed); 3 otherwise (the reasons are\n"
		"in `profreg page list`; `profreg page retry` queues a failed page again).";
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	config cfg;
	db *d = NULL;
	pager_counts pc;
	const char *arg;
	int c, rc, status;

	memset(&cfg, 0, sizeof(cfg));
	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		;
	if ((status = cli_end(p, c, false, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	if ((rc = ctx_config_load(ctx, &cfg, &err)) < 0 || (rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = pager_flush(d, &cfg, NULL, &pc, &err)) < 0)
		goto fail;
	if (ctx->json) {
		json_t *o = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
			"sent", (json_int_t)pc.sent,
			"failed", (json_int_t)pc.failed, "retried", (json_int_t)pc.retried,
			"skipped", (json_int_t)pc.skipped, "pending", (json_int_t)pc.pending,
			"failed_open", (json_int_t)pc.failed_open,
			"alerts_refreshed", (json_int_t)pc.refreshed,
			"alerts_refresh_failed", (json_int_t)pc.refresh_failed);
		if (pc.first_error[0])
			json_object_set_new(o, "first_error", json_string(pc.first_error));
		status = cli_print_json(ctx, o);
	} else {
		printf("page flush: %zu sent, %zu failed, %zu retried, %zu pending; "
		       "%zu alerts re-sent\n",
		       pc.sent, pc.failed, pc.retried, pc.pending, pc.refreshed);
		if (pc.failed_open > pc.failed_resolves)
			printf("%zu failed page%s of open findings: see `profreg page list "
			       "--state failed`, then `profreg page retry`\n",
			       pc.failed_open - pc.failed_resolves,
			       pc.failed_open - pc.failed_resolves == 1 ? "" : "s");
		if (pc.failed_resolves)
			printf("%zu failed resolve%s of closed findings, whose alerts stay open: "
			       "see `profreg page list --state failed`, then "
			       "`profreg page retry`\n",
			       pc.failed_resolves, pc.failed_resolves == 1 ? "" : "s");
		if (pc.first_error[0]) {
			printf("first problem: ");
			cli_put_safe(stdout, pc.first_error, 0);
			putchar('\n');
		}
		status = EXIT_OK;
	}
	if (status == EXIT_OK && (pc.pending || pc.failed || pc.skipped || pc.failed_open))
		status = EXIT_RUNTIME;
	goto out;
fail:
	status = cli_fail(ctx, &err);
out:
	db_close(d);
	config_release(&cfg);
	return status;
}

static int page_retry(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"all-failed", no_argument, O_ALL_FAILED, NULL,
		 "every failed page (not a trigger of a resolved finding)"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char usage[] = "profreg page retry (ID | --all-failed) [--json]";
	static const char desc[] =
		"Put a failed page (a permanent refusal such as HTTP 400 or 404) back\n"
		"in the queue: pending, attempts 0, due now. The next run or `profreg\n"
		"page flush` sends it. The trigger of a finding resolved since is never\n"
		"sent again. Recorded in the audit log.";
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	db *d = NULL;
	const char *arg;
	unsigned long long id = 0;
	bool all = false;
	size_t n = 0;
	int c, rc, status, first;

	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		if (c == O_ALL_FAILED)
			all = true;
	if ((status = cli_end(p, c, false, 0, -1, NULL, &first)) != CLI_GO)
		return status;
	/* One message for every wrong combination of ID and --all-failed. */
	if (all == (first < argc) || argc - first > 1) {
		cli_error(ctx, "give one page ID or --all-failed (see --help)");
		return EXIT_USAGE;
	}
	if (!all && cli_parse_u64(ctx, "ID", argv[first], 1, INT64_MAX, &id) < 0)
		return EXIT_USAGE;
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = pager_retry_failed(d, (int64_t)id, &n, &err)) < 0) {
		db_close(d);
		return cli_fail(ctx, &err);
	}
	db_close(d);
	if (ctx->json)
		return cli_print_json(ctx, json_pack("{s:I}", "retried", (json_int_t)n));
	if (!ctx->quiet)
		printf("%zu failed page%s back to pending; `profreg page flush` sends %s now\n", n,
		       n == 1 ? "" : "s", n == 1 ? "it" : "them");
	return EXIT_OK;
}

int cmd_page(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_command cmds[] = {
		{"list", page_list, "list the paging outbox"},
		{"flush", page_flush, "send the pending pages now"},
		{"retry", page_retry, "queue failed pages again"},
		{NULL, NULL, NULL},
	};
	return cli_dispatch(ctx, cmds, ctx->prog, argc - 1, argv + 1);
}
