/*
 * cmd_span.c: `profreg span`: from a slow span to its profile. The
 * captures of a host that cover the span's window, with only the span's
 * samples when the profile labels them (jobs/reportdata.c does the work).
 */
#define _POSIX_C_SOURCE 200809L
#include "common/fileio.h"
#include "common/timeutil.h"
#include "jobs/cli/commands.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"
#include "jobs/config.h"
#include "jobs/reportdata.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	O_SERVICE = 2100,
	O_HOST,
	O_START,
	O_DURATION,
	O_SPAN,
	O_TRACE,
	O_MARGIN,
	O_OUT,
	O_FORMAT,
	O_TYPE
};

static const char usage[] =
	"profreg span --service S --host H --start T --duration D [--span-id X] [--trace-id Y]\n"
	"             [--type cpu] [--margin 10s] [--out FILE] [--format html|md|json]";
static const char desc[] =
	"The flame graph of a slow span: the captures of the host whose own time\n"
	"covers the span's window (widened by --margin), with only the samples\n"
	"labelled with the span's id (span_id, or Datadog's \"local root span id\"),\n"
	"or the trace's (trace_id), drawn against every sample of those captures.\n"
	"One profile type at a time (--type, default cpu): a heap profile's\n"
	"allocation sites are not time spent.\n"
	"Label values are compared while a profile is read and never stored.";

/* "120ms", "2.5s", or what time_parse_duration takes: the span's length in microseconds. */
static int parse_span_duration(const char *s, int64_t *out)
{
	/*
	 * Digits, a point and digits, a unit: strtod alone took " 5", "0x10"
	 * (16 s) and "1e3", none of them what a trace viewer shows.
	 */
	size_t n = strspn(s, "0123456789");
	char *end;
	double v;

	if (n == 0)
		return -1;
	if (s[n] == '.' && !isdigit((unsigned char)s[n + 1]))
		return -1;
	if (s[n] == '.')
		n += 1 + strspn(s + n + 1, "0123456789");
	if (s[n] && strcmp(s + n, "ms") && strcmp(s + n, "us") && strcmp(s + n, "s"))
		return time_parse_duration(out, s);
	v = strtod(s, &end);
	if (end == s + n && v < 86400e6) {
		if (strcmp(end, "ms") == 0) {
			*out = (int64_t)(v * 1000);
			return 0;
		}
		if (strcmp(end, "us") == 0) {
			*out = (int64_t)v;
			return 0;
		}
		if (strcmp(end, "s") == 0 || *end == '\0') {
			*out = (int64_t)(v * 1e6);
			return 0;
		}
	}
	return time_parse_duration(out, s);
}

int cmd_span(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"service", required_argument, O_SERVICE, "NAME", "the span's service"},
		{"host", required_argument, O_HOST, "HOST", "the host it ran on"},
		{"start", required_argument, O_START, "TIME", "when it started (ISO 8601)"},
		{"duration", required_argument, O_DURATION, "D",
		 "how long it took (120ms, 2.5s, 1m)"},
		{"span-id", required_argument, O_SPAN, "ID", "keep only this span's samples"},
		{"trace-id", required_argument, O_TRACE, "ID",
		 "without --span-id: keep only this trace's samples"},
		{"type", required_argument, O_TYPE, "TYPE",
		 "the captures' profile type (default cpu)"},
		{"margin", required_argument, O_MARGIN, "D",
		 "widen the window by this on each side (default 10s)"},
		{"out", required_argument, O_OUT, "FILE",
		 "write here (default span.html; '-': standard output)"},
		{"format", required_argument, O_FORMAT, "FORMAT",
		 "html, md or json (default: from --out, else html)"},
		{NULL, 0, 0, NULL, NULL},
	};
	pr_error err = PR_ERROR_INIT;
	reportdata_span_sel s = {0};
	cli_parser *p = NULL;
	config cfg = {0};
	report r;
	db *d = NULL;
	blob_store *bs = NULL;
	buf text = BUF_INIT;
	const char *arg, *outp = "span.html", *fmt = NULL, *dot;
	bool bad = false, have_start = false, have_dur = false;
	int c, rc, status;

	memset(&r, 0, sizeof(r));
	s.margin_us = 10 * 1000000LL;
	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		switch (c) {
		case O_SERVICE: s.service = arg; break;
		case O_HOST: s.host = arg; break;
		case O_SPAN: s.span_id = arg; break;
		case O_TRACE: s.trace_id = arg; break;
		case O_TYPE: s.type = arg; break;
		case O_OUT: outp = arg; break;
		case O_FORMAT: fmt = arg; break;
		case O_START:
			if (time_parse(&s.start_us, arg) < 0) {
				cli_error(ctx, "'--start %s' is not an ISO 8601 time", arg);
				bad = true;
			}
			have_start = true;
			break;
		case O_DURATION:
			if (parse_span_duration(arg, &s.duration_us) < 0 ||
			    s.duration_us <= 0) {
				cli_error(ctx, "'--duration %s' is not a duration above 0 "
					  "like 120ms", arg);
				bad = true;
			}
			have_dur = true;
			break;
		case O_MARGIN:
			if (parse_span_duration(arg, &s.margin_us) < 0) {
				cli_error(ctx, "'--margin %s' is not a duration like 10s", arg);
				bad = true;
			}
			break;
		}
	}
	if ((status = cli_end(p, c, bad, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	if (!s.service || !s.host || !have_start || !have_dur) {
		cli_error(ctx,
			  "--service, --host, --start and --duration are required (see --help)");
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
	if ((rc = ctx_config_load(ctx, &cfg, &err)) < 0 || (rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = ctx_blobs_open(ctx, &bs, &err)) < 0 ||
	    (rc = reportdata_span(&r, d, bs, &cfg, &s, &err)) < 0)
		goto fail;
	rc = strcmp(fmt, "md") == 0 ? report_md(&text, &r, &err)
	   : strcmp(fmt, "json") == 0 ? report_json(&text, &r, &err) : report_html(&text, &r, &err);
	if (rc < 0 || (rc = fileio_write_out(outp, text.ptr, text.len, 0644, &err)) < 0)
		goto fail;
	if (strcmp(outp, "-") != 0 && !ctx->quiet) {
		printf("%s\n", outp);
		if (r.note)
			cli_warn(ctx, "%s", r.note);
	}
	status = cli_finish(ctx, EXIT_OK);
	goto out;
fail:
	status = cli_fail(ctx, &err);
out:
	buf_release(&text);
	report_release(&r);
	blob_store_free(bs);
	db_close(d);
	config_release(&cfg);
	return status;
}
