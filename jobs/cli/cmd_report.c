/*
 * cmd_report.c: `profreg report`, the HTML, Markdown or JSON report of a
 * run, a finding or a release.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/commands.h"
#include "jobs/config.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"
#include "jobs/reportdata.h"
#include "common/fileio.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { O_RUN = 1700, O_FINDING, O_SERVICE, O_RELEASE, O_OUT, O_FORMAT, O_TEAM, O_SPAN };

/* html, md or json from --format, else from the --out extension. */
static const char *pick_format(const char *fmt, const char *out)
{
	const char *dot;

	if (fmt)
		return fmt;
	dot = out ? strrchr(out, '.') : NULL;
	if (dot && strcmp(dot, ".md") == 0)
		return "md";
	if (dot && strcmp(dot, ".json") == 0)
		return "json";
	return "html";
}

/*
 * `report --span ...` is `span ...`: the flame graph of a span's window is
 * a report too, and people look for it under report. Returns -1 when
 * --span is not among the arguments.
 */
static int report_span(cli_ctx *ctx, int argc, char **argv)
{
	int i, k, rc;
	char **rest;

	for (i = 1; i < argc && strcmp(argv[i], "--span") != 0; i++)
		if (strcmp(argv[i], "--") == 0)
			return -1;
	if (i >= argc)
		return -1;
	if (!(rest = calloc((size_t)argc, sizeof(*rest)))) {
		cli_error(ctx, "out of memory");
		return EXIT_RUNTIME;
	}
	for (k = 0, i = 0; i < argc; i++)
		if (strcmp(argv[i], "--span") != 0)
			rest[k++] = argv[i];
	rc = cmd_span(ctx, k, rest);
	free(rest);
	return rc;
}

int cmd_report(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"run", required_argument, O_RUN, "ID", "report a run (nightly or post-deploy)"},
		{"finding", required_argument, O_FINDING, "ID", "report one finding"},
		{"service", required_argument, O_SERVICE, "NAME",
		 "with --release: report a release"},
		{"release", required_argument, O_RELEASE, "RELEASE", "the release"},
		{"out", required_argument, O_OUT, "FILE",
		 "write here ('-': standard output; default: the reports directory)"},
		{"team", required_argument, O_TEAM, "TEAM",
		 "with --run: only the findings of this team's services"},
		{"format", required_argument, O_FORMAT, "FORMAT",
		 "html, md or json (default: from --out, else html)"},
		{"span", no_argument, O_SPAN, NULL,
		 "a span's flame graph (takes the options of profreg span)"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char usage[] =
		"profreg report --run ID [--team T] | --finding ID | --service S --release R "
		"[--out FILE] [--format html|md|json]\n"
		"       profreg report --span --service S --host H --start T --duration D [...]";
	static const char desc[] =
		"Write the report of a run, a finding or a release: a self-contained HTML page\n"
		"(summary, ranked findings, a differential flame graph and the function's\n"
		"history per finding, the pinned captures and how to reproduce), Markdown for\n"
		"CI logs, or JSON. Without --out the file goes to the reports directory\n"
		"(config reports.dir, else <home>/reports) and its path is printed; for a\n"
		"run without --out or --format, all three (run-ID-DB.html, .md, .json, DB\n"
		"naming the database) and each team's (run-ID-DB-team-T.*, naming only that\n"
		"team's services, as the run wrote them and its pages link to); with --team T,\n"
		"only that team's.\n"
		"--span writes the flame graph of a slow span's window: it takes the\n"
		"options of `profreg span` (see profreg span --help).";
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	config cfg = {0};
	report r;
	db *d = NULL;
	blob_store *bs = NULL;
	buf text = BUF_INIT, path = BUF_INIT;
	const char *arg, *service = NULL, *release = NULL, *outp = NULL, *fmt = NULL, *instance;
	const char *team = NULL;
	unsigned long long run = 0, fid = 0;
	char *dir = NULL;
	bool bad = false;
	int c, rc, status, modes;

	if ((rc = report_span(ctx, argc, argv)) >= 0)
		return rc;
	memset(&r, 0, sizeof(r));
	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		switch (c) {
		case O_RUN:
			if (cli_parse_u64(ctx, "run", arg, 1, INT64_MAX, &run) < 0)
				bad = true;
			break;
		case O_FINDING:
			if (cli_parse_u64(ctx, "finding", arg, 1, INT64_MAX, &fid) < 0)
				bad = true;
			break;
		case O_SERVICE: service = arg; break;
		case O_RELEASE: release = arg; break;
		case O_OUT: outp = arg; break;
		case O_FORMAT: fmt = arg; break;
		case O_TEAM: team = arg; break;
		}
	}
	if ((status = cli_end(p, c, bad, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	modes = (run != 0) + (fid != 0) + (service || release);
	if (modes != 1 || (!service) != (!release)) {
		cli_error(ctx, "give one of --run ID, --finding ID, or --service and --release "
			  "(see --help)");
		return EXIT_USAGE;
	}
	if (release && !*release) {
		cli_error(ctx, "'--release' is empty: give the release to report");
		return EXIT_USAGE;
	}
	if (team && (!run || !*team)) {
		cli_error(ctx, "--team goes with --run ID (see --help)");
		return EXIT_USAGE;
	}
	/*
	 * A run's default: the files nightly, post-deploy and analyze write,
	 * the run's and each of its teams' (a page links to its team's), so
	 * writing a report again that a run could not write mends its links.
	 */
	if (run && !outp && !fmt) {
		char *html = NULL;
		size_t teams = 0;
		if (ctx_config_load(ctx, &cfg, &err) < 0)
			return cli_fail(ctx, &err);
		if ((rc = ctx_db_open(ctx, &d, &err)) < 0 ||
		    (rc = ctx_blobs_open(ctx, &bs, &err)) < 0 ||
		    (rc = team ? reportdata_write_run_team(d, bs, &cfg, ctx->home, (int64_t)run,
							   team, &html, &err)
			       : reportdata_write_run(d, bs, &cfg, ctx->home, (int64_t)run, &html,
						      &err)) < 0 ||
		    (!team && (rc = reportdata_write_run_teams(d, bs, &cfg, ctx->home, (int64_t)run,
							       &teams, &err)) < 0)) {
			free(html);
			goto fail;
		}
		if (!ctx->quiet)
			printf("%s\n", html);
		free(html);
		status = cli_finish(ctx, EXIT_OK);
		goto out;
	}
	fmt = pick_format(fmt, outp);
	if (strcmp(fmt, "html") && strcmp(fmt, "md") && strcmp(fmt, "json")) {
		cli_error(ctx, "'--format %s' is not html, md or json", fmt);
		return EXIT_USAGE;
	}
	if (ctx_config_load(ctx, &cfg, &err) < 0)
		return cli_fail(ctx, &err);
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 || (rc = ctx_blobs_open(ctx, &bs, &err)) < 0)
		goto fail;
	if (run && team)
		rc = reportdata_run_team(&r, d, bs, &cfg, (int64_t)run, team, &err);
	else if (run)
		rc = reportdata_run(&r, d, bs, &cfg, (int64_t)run, &err);
	else if (fid)
		rc = reportdata_finding(&r, d, bs, &cfg, (int64_t)fid, &err);
	else
		rc = reportdata_release(&r, d, bs, &cfg, service, release, &err);
	if (rc < 0)
		goto fail;
	rc = strcmp(fmt, "md") == 0 ? report_md(&text, &r, &err)
	   : strcmp(fmt, "json") == 0 ? report_json(&text, &r, &err) : report_html(&text, &r, &err);
	if (rc < 0)
		goto fail;
	if (!outp) {
		if (!(dir = reportdata_dir(&cfg, ctx->home))) {
			rc = pr_error_set(&err, PR_ENOMEM, "out of memory");
			goto fail;
		}
		if ((rc = fileio_mkdirs(dir, 0755, &err)) < 0)
			goto fail;
		buf_printf(&path, "%s/", dir);
		/* Every name carries the database's instance: two databases never collide. */
		if ((rc = db_instance(d, &instance, &err)) < 0)
			goto fail;
		if (run) {
			char name[REPORT_RUN_NAME_MAX];
			report_run_name(name, (int64_t)run, instance);
			buf_puts(&path, name);
		} else if (fid) {
			buf_printf(&path, "finding-%llu-%.8s", fid, instance);
		} else {
			buf_puts(&path, "release-");
			reportdata_file_piece(&path, service);
			buf_putc(&path, '-');
			reportdata_file_piece(&path, release);
			buf_printf(&path, "-%.8s", instance);
		}
		if (buf_printf(&path, ".%s", fmt) < 0) {
			rc = pr_error_set(&err, PR_ENOMEM, "out of memory");
			goto fail;
		}
		outp = path.ptr;
	}
	if ((rc = fileio_write_out(outp, text.ptr, text.len, 0644, &err)) < 0)
		goto fail;
	if (strcmp(outp, "-") != 0 && !ctx->quiet)
		printf("%s\n", outp);
	status = cli_finish(ctx, EXIT_OK);
	goto out;
fail:
	status = cli_fail(ctx, &err);
out:
	free(dir);
	buf_release(&text);
	buf_release(&path);
	report_release(&r);
	blob_store_free(bs);
	db_close(d);
	config_release(&cfg);
	return status;
}
