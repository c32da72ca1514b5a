/*
 * cmd_diff.c: `profreg diff`, an ad-hoc comparison of two selections of
 * captures: the differential flame graph and the functions whose self
 * share changed most, with the analysis' statistics.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/commands.h"
#include "jobs/config.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"
#include "jobs/reportdata.h"
#include "common/fileio.h"
#include "common/memhint.h"
#include "common/timeutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for two 20 MB captures' text and profiles, loaded at once, and the tree. */
#define DIFF_HEAP_BYTES ((size_t)128 << 20)

enum { O_BASE = 1900, O_TARGET, O_HOST, O_SINCE, O_UNTIL, O_OUT, O_FORMAT, O_TOP };

int cmd_diff(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"base", required_argument, O_BASE, "SELECTION", "the baseline captures"},
		{"target", required_argument, O_TARGET, "SELECTION",
		 "the captures to compare with it"},
		{"host", required_argument, O_HOST, "HOST",
		 "both sides: only captures from this host"},
		{"since", required_argument, O_SINCE, "TIME",
		 "both sides: captures at or after TIME (or a duration ago)"},
		{"until", required_argument, O_UNTIL, "TIME", "both sides: captures before TIME"},
		{"out", required_argument, O_OUT, "FILE",
		 "write here (default diff.html; '-': standard output)"},
		{"format", required_argument, O_FORMAT, "FORMAT",
		 "html, md or json (default: from --out, else html)"},
		{"top", required_argument, O_TOP, "N", "functions in the table (default 30)"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char usage[] =
		"profreg diff --base SELECTION --target SELECTION [--host H] [--since T --until T] "
		"[--out FILE]";
	static const char desc[] =
		"Compare two selections of captures: a differential flame graph (the target's\n"
		"stacks, coloured by how much each frame's self share grew or shrank against\n"
		"the base) and the functions whose share changed most, with the analysis'\n"
		"interval, p- and q-values when both sides are one service's captures.\n"
		"A selection is 'service=S,release=R', 'service=S,commit=C' or 'id=1,2,3',\n"
		"with optional host=, type= (default cpu), since= and until=.";
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	config cfg = {0};
	reportdata_sel base = {0}, target = {0};
	report r;
	db *d = NULL;
	blob_store *bs = NULL;
	buf text = BUF_INIT;
	const char *arg, *bsel = NULL, *tsel = NULL, *host = NULL, *outp = "diff.html";
	const char *fmt = NULL, *dot;
	unsigned long long top = 30;
	int64_t since = 0, until = 0;
	bool bad = false;
	int c, rc, status;

	memset(&r, 0, sizeof(r));
	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		switch (c) {
		case O_BASE: bsel = arg; break;
		case O_TARGET: tsel = arg; break;
		case O_HOST: host = arg; break;
		case O_OUT: outp = arg; break;
		case O_FORMAT: fmt = arg; break;
		case O_TOP:
			if (cli_parse_u64(ctx, "top", arg, 1, 10000, &top) < 0)
				bad = true;
			break;
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
	if ((status = cli_end(p, c, bad, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	if (!bsel || !tsel) {
		cli_error(ctx, "--base and --target are required (see --help)");
		return EXIT_USAGE;
	}
	dot = strrchr(outp, '.');
	if (!fmt)
		fmt = dot && !strcmp(dot, ".md") ? "md"
		    : dot && !strcmp(dot, ".json") ? "json" : "html";
	if (strcmp(fmt, "html") && strcmp(fmt, "md") && strcmp(fmt, "json")) {
		cli_error(ctx, "'--format %s' is not html, md or json", fmt);
		return EXIT_USAGE;
	}
	/* A one-shot process that parses large captures: their memory on huge pages. */
	mem_hint_heap(DIFF_HEAP_BYTES);
	if ((rc = reportdata_sel_parse(&base, bsel, host, since, until, &err)) < 0 ||
	    (rc = reportdata_sel_parse(&target, tsel, host, since, until, &err)) < 0 ||
	    (rc = ctx_config_load(ctx, &cfg, &err)) < 0 || (rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = ctx_blobs_open(ctx, &bs, &err)) < 0 ||
	    (rc = reportdata_diff(&r, d, bs, &cfg, &base, &target, (size_t)top, &err)) < 0)
		goto fail;
	rc = strcmp(fmt, "md") == 0 ? report_md(&text, &r, &err)
	   : strcmp(fmt, "json") == 0 ? report_json(&text, &r, &err) : report_html(&text, &r, &err);
	if (rc < 0 || (rc = fileio_write_out(outp, text.ptr, text.len, 0644, &err)) < 0)
		goto fail;
	if (strcmp(outp, "-") != 0 && !ctx->quiet)
		printf("%s\n", outp);
	status = cli_finish(ctx, EXIT_OK);
	goto out;
fail:
	status = cli_fail(ctx, &err);
out:
	buf_release(&text);
	report_release(&r);
	reportdata_sel_release(&base);
	reportdata_sel_release(&target);
	blob_store_free(bs);
	db_close(d);
	config_release(&cfg);
	return status;
}
