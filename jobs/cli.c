/*
 * cli.c: option tables, help text and error reporting for every command.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "exitcode.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum {
	OPT_DB = 1000,
	OPT_HOME,
	OPT_CONFIG,
	OPT_QUIET,
	OPT_JSON,
	OPT_HELP,
};

static const cli_option global_opts[] = {
	{"db", required_argument, OPT_DB, "CONNINFO",
	 "PostgreSQL connection (default: $PROFREG_DB, the libpq environment, or the private cluster)"},
	{"home", required_argument, OPT_HOME, "DIR",
	 "state directory (default: $PROFREG_HOME or ./var)"},
	{"config", required_argument, OPT_CONFIG, "FILE", "configuration file (JSON)"},
	{"quiet", no_argument, OPT_QUIET, NULL, "print only errors"},
	{"json", no_argument, OPT_JSON, NULL, "print data as JSON"},
	{"help", no_argument, OPT_HELP, NULL, "show this help"},
	{NULL, 0, 0, NULL, NULL},
};

struct cli_parser {
	cli_ctx *ctx;
	int argc;
	char **argv;
	const cli_option *opts;
	const char *usage;
	const char *description;
	struct option *longopts;
	char shortopts[128];
	const char *optstr; /* shortopts, with or without the leading '+' */
};

static size_t count_opts(const cli_option *o)
{
	size_t n = 0;

	while (o && o[n].name)
		n++;
	return n;
}

int cli_parser_new(cli_parser **out, cli_ctx *ctx, int argc, char **argv,
		   const cli_option *opts, const char *usage,
		   const char *description)
{
	size_t n = count_opts(opts), g = count_opts(global_opts), k = 0, s = 0;
	cli_parser *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (!p || !(p->longopts = calloc(n + g + 1, sizeof(*p->longopts)))) {
		free(p);
		return PR_ENOMEM;
	}
	p->ctx = ctx;
	p->argc = argc;
	p->argv = argv;
	p->opts = opts;
	p->usage = usage;
	p->description = description;
	/* Operands and options may mix ("ingest a.pb --service x"); main
	 * switches to stopping at the first operand (cli_parser_posix). */
	p->shortopts[s++] = '+';
	p->shortopts[s++] = ':';
	p->optstr = p->shortopts + 1;
	for (size_t i = 0; i < n; i++, k++) {
		p->longopts[k].name = opts[i].name;
		p->longopts[k].has_arg = opts[i].has_arg;
		p->longopts[k].val = opts[i].key;
		if (opts[i].key > 0 && opts[i].key < 128 && s + 3 < sizeof(p->shortopts)) {
			p->shortopts[s++] = (char)opts[i].key;
			if (opts[i].has_arg == required_argument)
				p->shortopts[s++] = ':';
		}
	}
	for (size_t i = 0; i < g; i++, k++) {
		p->longopts[k].name = global_opts[i].name;
		p->longopts[k].has_arg = global_opts[i].has_arg;
		p->longopts[k].val = global_opts[i].key;
	}
	p->shortopts[s++] = 'h';
	p->shortopts[s] = '\0';
	/* 0, not 1: glibc then forgets the previous argv's permutation. */
	optind = 0;
	opterr = 0;
	*out = p;
	return 0;
}

void cli_parser_posix(cli_parser *p)
{
	p->optstr = p->shortopts;
}

void cli_parser_free(cli_parser *p)
{
	if (!p)
		return;
	free(p->longopts);
	free(p);
}

static void print_opts(FILE *f, const cli_option *o)
{
	for (; o && o->name; o++) {
		char left[64];
		if (o->key > 0 && o->key < 128)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", o->key, o->name,
				 o->arg ? " " : "", o->arg ? o->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", o->name,
				 o->arg ? " " : "", o->arg ? o->arg : "");
		fprintf(f, "  %-28s %s\n", left, o->help);
	}
}

void cli_print_help(const cli_parser *p, FILE *f)
{
	fprintf(f, "usage: %s\n", p->usage);
	if (p->description)
		fprintf(f, "\n%s\n", p->description);
	if (count_opts(p->opts)) {
		fprintf(f, "\noptions:\n");
		print_opts(f, p->opts);
	}
	fprintf(f, "\nglobal options:\n");
	print_opts(f, global_opts);
}

int cli_next(cli_parser *p, const char **arg)
{
	int longidx = 0, c;

	for (;;) {
		c = getopt_long(p->argc, p->argv, p->optstr, p->longopts, &longidx);
		*arg = optarg;
		switch (c) {
		case -1:
			return 0;
		case OPT_DB:
			p->ctx->db = optarg;
			continue;
		case OPT_HOME:
			p->ctx->home = optarg;
			continue;
		case OPT_CONFIG:
			p->ctx->config = optarg;
			continue;
		case OPT_QUIET:
			p->ctx->quiet = true;
			continue;
		case OPT_JSON:
			p->ctx->json = true;
			continue;
		case 'h':
		case OPT_HELP:
			cli_print_help(p, stdout);
			return CLI_HELP;
		case ':':
			cli_error(p->ctx, "option '%s' needs a value (see --help)",
				  p->argv[optind - 1]);
			return CLI_BAD;
		case '?':
			if (optopt > 0 && optopt < 128)
				cli_error(p->ctx, "unknown option '-%c' (see --help)", optopt);
			else
				cli_error(p->ctx, "unknown option '%s' (see --help)",
					  p->argv[optind - 1]);
			return CLI_BAD;
		default:
			return c;
		}
	}
}

int cli_optind(const cli_parser *p)
{
	(void)p;
	return optind;
}

static void vreport(const cli_ctx *ctx, const char *kind, const char *fmt, va_list ap)
{
	char msg[2 * PR_ERROR_MSG_MAX];

	/* Messages quote names and paths from outside: no escape reaches the terminal. */
	vsnprintf(msg, sizeof(msg), fmt, ap);
	fflush(stdout);
	fprintf(stderr, "%s: %s", ctx->prog ? ctx->prog : "profreg", kind);
	cli_put_safe(stderr, msg, 0);
	fputc('\n', stderr);
}

void cli_error(const cli_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(ctx, "", fmt, ap);
	va_end(ap);
}

void cli_warn(const cli_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	if (ctx->quiet)
		return;
	va_start(ap, fmt);
	vreport(ctx, "warning: ", fmt, ap);
	va_end(ap);
}

int cli_fail(const cli_ctx *ctx, const pr_error *err)
{
	cli_error(ctx, "%s", err->msg[0] ? err->msg : pr_error_name(err->code));
	return exitcode_for(err->code);
}

int exitcode_for(int code)
{
	switch (code) {
	case PR_OK:
		return EXIT_OK;
	case PR_EUSAGE:
		return EXIT_USAGE;
	case PR_EDATA:
	case PR_ELIMIT:
	case PR_ENOTFOUND:
	case PR_EEXISTS:
	case PR_EREFUSED:
		return EXIT_DATA;
	default:
		return EXIT_RUNTIME;
	}
}

int cli_parse_u64(const cli_ctx *ctx, const char *opt, const char *s,
		  unsigned long long min, unsigned long long max,
		  unsigned long long *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (!s || !*s || *s == '-') {
		cli_error(ctx, "'--%s' needs a whole number, not '%s'", opt, s ? s : "");
		return CLI_BAD;
	}
	v = strtoull(s, &end, 10);
	/* Accept K/M/G suffixes: sizes are easier to read that way. */
	if (errno == 0 && end != s && end[0] && !end[1]) {
		unsigned shift = end[0] == 'K' || end[0] == 'k' ? 10 :
				 end[0] == 'M' ? 20 : end[0] == 'G' ? 30 : 0;
		if (shift && v <= (~0ULL >> shift)) {
			v <<= shift;
			end++;
		}
	}
	if (errno || end == s || *end || v < min || v > max) {
		cli_error(ctx, "'--%s %s' is not a whole number from %llu to %llu",
			  opt, s, min, max);
		return CLI_BAD;
	}
	*out = v;
	return 0;
}

int cli_dispatch(cli_ctx *ctx, const cli_command *cmds, const char *group,
		 int argc, char **argv)
{
	const char *prog = ctx->prog;
	char name[128];
	int rc;

	if (argc < 1 || strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0 ||
	    strcmp(argv[0], "help") == 0) {
		FILE *f = argc < 1 ? stderr : stdout;
		fprintf(f, "usage: %s COMMAND [options]\n\ncommands:\n", group);
		for (const cli_command *c = cmds; c->name; c++)
			fprintf(f, "  %-14s %s\n", c->name, c->help);
		fprintf(f, "\nRun '%s COMMAND --help' for a command's options.\n", group);
		return argc < 1 ? EXIT_USAGE : EXIT_OK;
	}
	for (const cli_command *c = cmds; c->name; c++) {
		if (strcmp(c->name, argv[0]) != 0)
			continue;
		snprintf(name, sizeof(name), "%s %s", group, c->name);
		ctx->prog = name;
		rc = c->fn(ctx, argc, argv);
		ctx->prog = prog;
		return rc;
	}
	cli_error(ctx, "unknown command '%s' (see '%s --help')", argv[0], group);
	return EXIT_USAGE;
}

int cli_finish(const cli_ctx *ctx, int code)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_error(ctx, "cannot write to standard output: %s", strerror(errno));
		return code ? code : EXIT_RUNTIME;
	}
	return code;
}

void cli_put_safe(FILE *f, const char *s, int width)
{
	int cols = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p == 0x7f) {
			fprintf(f, "\\x%02x", *p);
			cols += 4;
		} else {
			fputc(*p, f);
			if ((*p & 0xc0) != 0x80)
				cols++;
		}
	}
	for (; cols < width; cols++)
		fputc(' ', f);
}

int cli_print_json(const cli_ctx *ctx, json_t *v)
{
	int rc;

	if (!v) {
		cli_error(ctx, "out of memory");
		return EXIT_RUNTIME;
	}
	rc = json_dumpf(v, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(12));
	json_decref(v);
	fputc('\n', stdout);
	return rc == 0 ? EXIT_OK : EXIT_RUNTIME;
}
