/*
 * cmd_export.c: `profreg export`, a capture or a merged selection as
 * folded stacks, speedscope JSON or pprof.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/commands.h"
#include "jobs/config.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"
#include "jobs/exports.h"
#include "jobs/reportdata.h"
#include "common/fileio.h"
#include "common/timeutil.h"
#include "reports/export.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { O_FORMAT = 1800, O_OUT, O_HOST, O_SINCE, O_UNTIL, O_VALUE };

int cmd_export(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"format", required_argument, O_FORMAT, "FORMAT",
		 "folded, speedscope or pprof (default folded)"},
		{"value", required_argument, O_VALUE, "WHAT",
		 "samples (sample counts; folded's default) or unit (the profile's own)"},
		{"out", required_argument, O_OUT, "FILE", "write here (default: standard output)"},
		{"host", required_argument, O_HOST, "HOST", "only captures from this host"},
		{"since", required_argument, O_SINCE, "TIME",
		 "only captures at or after TIME (or a duration ago)"},
		{"until", required_argument, O_UNTIL, "TIME", "only captures before TIME"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char usage[] =
		"profreg export ID|SELECTION [--format folded|speedscope|pprof]\n"
		"                 [--value samples|unit] [--out FILE]";
	static const char desc[] =
		"Write a capture, or the captures a selection names merged into one profile,\n"
		"for other tools: folded stacks (flamegraph.pl), speedscope JSON\n"
		"(speedscope.app) or gzip-compressed pprof (go tool pprof). A selection is\n"
		"'service=S,release=R', 'service=S,commit=C' or 'id=1,2,3', with optional\n"
		"host=, type= (default cpu), since= and until=.\n"
		"Folded stacks are one line per distinct stack. A pprof capture exported as\n"
		"pprof keeps its line numbers, mappings and locations; labels never leave.";
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	config cfg = {0};
	reportdata_sel sel = {0};
	exports_result res;
	exports_value value = EXPORTS_VALUE_DEFAULT;
	job_env env = {0};
	db *d = NULL;
	blob_store *bs = NULL;
	buf text = BUF_INIT;
	export_format fmt = EXPORT_FOLDED;
	const char *arg, *outp = "-", *host = NULL;
	int64_t since = 0, until = 0;
	bool bad = false;
	int c, rc, status, first;

	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		switch (c) {
		case O_FORMAT:
			if (export_format_parse(&fmt, arg) < 0) {
				cli_error(ctx, "'--format %s' is not folded, speedscope or pprof",
					  arg);
				bad = true;
			}
			break;
		case O_VALUE:
			if (exports_value_parse(&value, arg) < 0) {
				cli_error(ctx, "'--value %s' is not samples or unit", arg);
				bad = true;
			}
			break;
		case O_OUT: outp = arg; break;
		case O_HOST: host = arg; break;
		case O_SINCE:
			if (time_parse_since(&since, arg, time_now_us()) < 0) {
				cli_error(ctx, "'--since %s' is not a time or a duration", arg);
				bad = true;
			}
			break;
		case O_UNTIL:
			if (time_parse(&until, arg) < 0) {
				cli_error(ctx, "'--until %s' is not an ISO 8601 time", arg);
				bad = true;
			}
			break;
		}
	}
	status = cli_end(p, c, bad, 1, 1, "one capture ID or selection", &first);
	if (status != CLI_GO)
		return status;
	if ((rc = reportdata_sel_parse(&sel, argv[first], host, since, until, &err)) < 0 ||
	    (rc = ctx_config_load(ctx, &cfg, &err)) < 0 ||
	    (rc = ctx_db_open(ctx, &d, &err)) < 0 || (rc = ctx_blobs_open(ctx, &bs, &err)) < 0)
		goto fail;
	env.cfg = &cfg;
	env.d = d;
	env.bs = bs;
	if ((rc = exports_run(&text, &res, &env, &sel, fmt, value, &err)) < 0)
		goto fail;
	if ((rc = fileio_write_out(outp, text.ptr, text.len, 0644, &err)) < 0)
		goto fail;
	if (strcmp(outp, "-") != 0 && !ctx->quiet)
		fprintf(stderr, "exported %zu capture%s (%s, %s%s) to %s\n", res.ncaptures,
			res.ncaptures == 1 ? "" : "s", res.type, res.unit,
			res.detailed ? ", with lines and mappings" : "", outp);
	status = cli_finish(ctx, EXIT_OK);
	goto out;
fail:
	status = cli_fail(ctx, &err);
out:
	buf_release(&text);
	reportdata_sel_release(&sel);
	blob_store_free(bs);
	db_close(d);
	config_release(&cfg);
	return status;
}
