/*
 * cmd_finding.c: `profreg finding show ID` reproduces a stored finding from
 * its pinned captures; `profreg finding resolve ID` closes it.
 */
#define _POSIX_C_SOURCE 200809L
#include "analysis.h"
#include "commands.h"
#include "config.h"
#include "context.h"
#include "exitcode.h"
#include "pager.h"

#include <inttypes.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { O_NOTE = 1500 };

/* Parse "ID" after the options; prints the usage error itself. */
static int one_id(cli_ctx *ctx, int argc, char **argv, const cli_option *opts,
		  const char *usage, const char *desc, const char **note, const char **id)
{
	cli_parser *p = NULL;
	const char *arg;
	unsigned long long v;
	int c, first;

	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		if (c == O_NOTE && note)
			*note = arg;
	first = cli_optind(p);
	cli_parser_free(p);
	if (c == CLI_HELP)
		return -1;
	if (c == CLI_BAD)
		return EXIT_USAGE;
	if (argc - first != 1) {
		cli_error(ctx, "expected one finding ID (see --help)");
		return EXIT_USAGE;
	}
	if (cli_parse_u64(ctx, "ID", argv[first], 1, INT64_MAX, &v) < 0)
		return EXIT_USAGE;
	*id = argv[first];
	return 0;
}

static int finding_show(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {{NULL, 0, 0, NULL, NULL}};
	static const char sql[] =
		"select f.service_id, s.name, f.profile_type, f.function_id, f.function, f.direction,"
		" f.baseline_share, f.current_share, f.delta, f.ci_low, f.ci_high, f.p_value, f.q_value,"
		" f.severity, f.status, f.current_release,"
		" (f.detail -> 'captures' -> 'baseline')::text, (f.detail -> 'captures' -> 'current')::text,"
		" (f.detail ->> 'at_us')::bigint, (f.detail ->> 'rel_margin')::float8,"
		" (f.detail ->> 'abs_margin')::float8, coalesce((f.detail ->> 'min_baseline')::int, 2)"
		" from findings f join services s on s.id = f.service_id where f.id = $1";
	pr_error err = PR_ERROR_INIT;
	PGresult *res = NULL;
	analysis_opts o;
	analysis a;
	db *d = NULL;
	const char *id = NULL, *params[1];
	const finding *r = NULL;
	int rc;

	memset(&a, 0, sizeof(a));
	if ((rc = one_id(ctx, argc, argv, opts, "profreg finding show ID [--json]",
			 "Show a stored finding and reproduce its comparison from the captures\n"
			 "pinned behind it: the shares, change, interval and p-value come out the\n"
			 "same (the q-value belongs to the whole run it was found in).", NULL, &id)))
		return rc < 0 ? EXIT_OK : rc;
	params[0] = id;
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = db_exec(d, &res, &err, "reading the finding", sql, 1, params)) < 0)
		goto fail;
	if (db_rows(res) != 1) {
		rc = pr_error_set(&err, PR_ENOTFOUND, "finding %s not found", id);
		goto fail;
	}
	analysis_opts_default(&o);
	o.at_us = db_get_i64(res, 0, 18);
	o.rel_margin = db_get_f64(res, 0, 19);
	o.abs_margin = db_get_f64(res, 0, 20);
	o.min_baseline = (size_t)db_get_i64(res, 0, 21);
	analysis_init(&a, &o);
	{
		analysis_target t = {db_get_i64(res, 0, 0), db_get_text(res, 0, 1), db_get_text(res, 0, 2),
				     db_get_text(res, 0, 15), 0, 0, db_get_text(res, 0, 16),
				     db_get_text(res, 0, 17)};
		if ((rc = analysis_add(&a, d, &t, false, &err)) < 0)
			goto fail;
	}
	for (size_t i = 0; i < a.ntests && !r; i++)
		if (a.tests[i].function_id == db_get_i64(res, 0, 3))
			r = &a.tests[i];
	if (ctx->json) {
		json_t *o2 = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:f,s:f,s:f,s:f,s:f,s:f,s:f}",
			"id", id, "service", db_get_text(res, 0, 1), "type", db_get_text(res, 0, 2),
			"function", db_get_text(res, 0, 4), "direction", db_get_text(res, 0, 5),
			"status", db_get_text(res, 0, 14),
			"baseline_share", db_get_f64(res, 0, 6), "current_share", db_get_f64(res, 0, 7),
			"delta", db_get_f64(res, 0, 8), "ci_low", db_get_f64(res, 0, 9),
			"ci_high", db_get_f64(res, 0, 10), "p_value", db_get_f64(res, 0, 11),
			"q_value", db_get_f64(res, 0, 12));
		if (r)
			json_object_set_new(o2, "reproduced", json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:I,s:I}",
				"baseline_share", r->baseline_share, "current_share", r->current_share,
				"delta", r->delta, "ci_low", r->ci_low, "ci_high", r->ci_high,
				"p_value", r->p_value, "baseline_captures", (json_int_t)r->baseline_captures,
				"current_captures", (json_int_t)r->current_captures));
		else
			json_object_set_new(o2, "reproduced", json_null());
		rc = cli_print_json(ctx, o2);
	} else {
		printf("finding %s (%s, %s)\nservice   %s/%s, release ", id,
		       db_get_text(res, 0, 5), db_get_text(res, 0, 14), db_get_text(res, 0, 1),
		       db_get_text(res, 0, 2));
		cli_put_safe(stdout, db_get_text(res, 0, 15) ? db_get_text(res, 0, 15) : "-", 0);
		printf("\nfunction  ");
		cli_put_safe(stdout, db_get_text(res, 0, 4), 0);
		printf("\nstored    %.4f%% -> %.4f%%, %+.4fpp [%+.4f, %+.4f], p %.3g, q %.3g\n",
		       100 * db_get_f64(res, 0, 6), 100 * db_get_f64(res, 0, 7), 100 * db_get_f64(res, 0, 8),
		       100 * db_get_f64(res, 0, 9), 100 * db_get_f64(res, 0, 10), db_get_f64(res, 0, 11),
		       db_get_f64(res, 0, 12));
		if (r)
			printf("reproduced %.4f%% -> %.4f%%, %+.4fpp [%+.4f, %+.4f], p %.3g from %zu baseline and %zu current captures\n",
			       100 * r->baseline_share, 100 * r->current_share, 100 * r->delta,
			       100 * r->ci_low, 100 * r->ci_high, r->p_value, r->baseline_captures,
			       r->current_captures);
		else
			printf("reproduced: the pinned captures no longer hold this function\n");
		rc = EXIT_OK;
	}
	goto out;
fail:
	rc = cli_fail(ctx, &err);
out:
	analysis_release(&a);
	db_result_free(res);
	db_close(d);
	return rc;
}

static int finding_resolve(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"note", required_argument, O_NOTE, "TEXT", "why it is resolved"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char sql[] =
		"with f as (update findings set status = 'resolved', resolved_at = now(),"
		"   resolution_note = $2, updated_at = now() where id = $1 and status = 'open' returning id),"
		" p as (delete from capture_pins where finding_id in (select id from f) returning 1)"
		" select (select count(*) from f), (select count(*) from p)";
	pr_error err = PR_ERROR_INIT;
	PGresult *res = NULL;
	db *d = NULL;
	config cfg;
	pager_counts pc;
	pager_flush_opts fo = {false, true, NULL, 1, 0};
	int64_t only;
	const char *id = NULL, *note = NULL, *params[2];
	char object[48], detail[160];
	size_t added = 0, cancelled = 0;
	unsigned long long fid = 0;
	int rc;

	memset(&cfg, 0, sizeof(cfg));
	memset(&pc, 0, sizeof(pc));
	if ((rc = one_id(ctx, argc, argv, opts, "profreg finding resolve ID [--note TEXT]",
			 "Close an open finding. Its current captures stay forensic; the pins on\n"
			 "its baseline captures lift, so retention may collect them again. Each\n"
			 "page it caused gets its resolve event, sent now (or left pending in\n"
			 "the outbox when the target cannot be reached: see profreg page).", &note, &id)))
		return rc < 0 ? EXIT_OK : rc;
	params[0] = id;
	params[1] = note;
	fid = strtoull(id, NULL, 10);
	if ((rc = config_load(&cfg, ctx, &err)) < 0)
		goto fail;
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 || (rc = db_begin(d, &err)) < 0 ||
	    (rc = db_exec(d, &res, &err, "resolving the finding", sql, 2, params)) < 0)
		goto fail;
	if (db_get_i64(res, 0, 0) != 1) {
		rc = pr_error_set(&err, PR_ENOTFOUND, "finding %s is not an open finding", id);
		goto fail;
	}
	/* Same transaction: the finding is never resolved without its resolve events queued. */
	if ((rc = pager_enqueue_resolve(d, (int64_t)fid, &added, &cancelled, &err)) < 0)
		goto fail;
	snprintf(object, sizeof(object), "finding:%s", id);
	snprintf(detail, sizeof(detail),
		 "{\"unpinned_baseline_captures\":%" PRId64 ",\"resolve_events\":%zu,\"pages_cancelled\":%zu}",
		 db_get_i64(res, 0, 1), added, cancelled);
	if ((rc = db_audit(d, "resolve", object, detail, &err)) < 0 || (rc = db_commit(d, &err)) < 0)
		goto fail;
	only = (int64_t)fid;
	fo.finding_ids = &only;
	/*
	 * The resolve is committed: a flush that fails now (the database went
	 * away, out of memory) leaves the events in the outbox for the next
	 * flush, and the finding is resolved all the same.
	 */
	if (added && pager_flush(d, &cfg, &fo, &pc, &err) < 0) {
		cli_warn(ctx, "paging: %s; the resolve events are pending in the outbox (profreg page flush)",
			 err.msg);
		memset(&pc, 0, sizeof(pc));
	} else if (pc.first_error[0]) {
		cli_warn(ctx, "paging: %s", pc.first_error);
	}
	if (!ctx->quiet) {
		printf("resolved finding %s; %" PRId64 " baseline captures unpinned\n", id,
		       db_get_i64(res, 0, 1));
		if (added || cancelled)
			printf("pages: %zu resolve events, %zu sent, %zu failed; %zu unsent pages cancelled\n",
			       added, pc.sent, pc.failed, cancelled);
	}
	rc = EXIT_OK;
	goto out;
fail:
	if (d)
		db_rollback(d);
	rc = cli_fail(ctx, &err);
out:
	db_result_free(res);
	db_close(d);
	config_release(&cfg);
	return rc;
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
