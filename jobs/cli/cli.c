/*
 * cli.c: option tables, help text and error reporting for every command.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/cli.h"
#include "jobs/cli/exitcode.h"
#include "common/fileio.h"
#include "common/similar.h"
#include "common/utf8.h"
#include "pipeline/db.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
	OPT_DB = 1000,
	OPT_HOME,
	OPT_CONFIG,
	OPT_QUIET,
	OPT_JSON,
	OPT_WIDE,
	OPT_HELP,
};

static const cli_option global_opts[] = {
	{"db", required_argument, OPT_DB, "CONNINFO",
	 "PostgreSQL connection (default: $PROFREG_DB, the libpq environment, "
	 "or the private cluster)"},
	{"home", required_argument, OPT_HOME, "DIR",
	 "state directory (default: $PROFREG_HOME or ./var)"},
	{"config", required_argument, OPT_CONFIG, "FILE", "configuration file (JSON)"},
	{"quiet", no_argument, OPT_QUIET, NULL, "print only errors"},
	{"json", no_argument, OPT_JSON, NULL, "print data as JSON"},
	{"wide", no_argument, OPT_WIDE, NULL, "print tables whole: all columns, no name shortened"},
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
	const char **given; /* each option's value so far, by its index in opts */
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
	if (!p || !(p->longopts = calloc(n + g + 1, sizeof(*p->longopts))) ||
	    !(p->given = calloc(n + 1, sizeof(*p->given)))) {
		if (p)
			free(p->longopts);
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
	free(p->given);
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

/*
 * "unknown option '--servce' (did you mean '--service'?)": an unknown
 * long option is nearly always a typo of one the command has, and the
 * close name says what to type instead of sending the user to --help.
 */
static void unknown_long(const cli_parser *p, const char *given)
{
	const char *cands[256];
	char name[128];
	size_t n = 0;
	long best;

	snprintf(name, sizeof(name), "%.*s", (int)strcspn(given + 2, "="), given + 2);
	for (const struct option *o = p->longopts; o->name && n < 256; o++)
		cands[n++] = o->name;
	best = similar_best(name, cands, n);
	if (best >= 0)
		cli_error(p->ctx, "unknown option '%s' (did you mean '--%s'?)", given,
			  cands[best]);
	else
		cli_error(p->ctx, "unknown option '%s' (see --help)", given);
}

/*
 * --db's value is copied and the password in argv wiped, as curl does
 * for -u: /proc/PID/cmdline, which every local user can read, shows argv
 * as it is now for the whole life of serve, worker or nightly. The copy
 * lasts as long as the process (a later --db replaces it).
 */
static int keep_db(cli_ctx *ctx, char *arg)
{
	static char *copy;
	char *s = strdup(arg);

	if (!s)
		return PR_ENOMEM;
	free(copy);
	copy = s;
	ctx->db = copy;
	db_conninfo_wipe(arg);
	return 0;
}

/*
 * An option that takes one value, given twice with two values, is a usage
 * error, not "the last one wins": `post-deploy --service a --service b`
 * judged b and passed while a had regressed. Options that gather values
 * say "(repeatable)" in their help; the same value twice is harmless.
 */
static int given_once(cli_parser *p, int key, const char *value)
{
	for (size_t i = 0; p->opts && p->opts[i].name; i++) {
		const cli_option *o = &p->opts[i];
		if (o->key != key || o->has_arg != required_argument || !value)
			continue;
		if (o->help && strstr(o->help, "(repeatable)"))
			return 0;
		if (p->given[i] && strcmp(p->given[i], value) != 0) {
			cli_error(p->ctx, "'--%s' is given twice ('%s' and '%s'): give it once",
				  o->name, p->given[i], value);
			return -1;
		}
		p->given[i] = value;
		return 0;
	}
	return 0;
}

/*
 * --db, --home and --config are given once too, before the command or
 * after it: `--db A nightly --db B` ran against B, the last one, without
 * a word. A connection string is not quoted back, as it may hold a
 * password.
 */
static bool global_once(cli_parser *p, const char *name, const char *had, const char *value)
{
	if (!had || strcmp(had, value) == 0)
		return true;
	if (strcmp(name, "db") == 0)
		cli_error(p->ctx,
			  "'--db' is given twice with two connection strings: give it once");
	else
		cli_error(p->ctx, "'--%s' is given twice ('%s' and '%s'): give it once", name, had,
			  value);
	return false;
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
			if (!global_once(p, "db", p->ctx->db, optarg))
				return CLI_BAD;
			if (keep_db(p->ctx, optarg) < 0) {
				cli_error(p->ctx, "out of memory");
				return CLI_BAD;
			}
			continue;
		case OPT_HOME:
			/*
			 * Refused, not read as unset: the fallback, ./var, would put
			 * blobs and reports under whatever folder the command ran in
			 * while their rows go to the shared database.
			 */
			if (!*optarg) {
				cli_error(p->ctx, "'--home' is empty: give a directory "
					  "(an unset variable?)");
				return CLI_BAD;
			}
			if (!global_once(p, "home", p->ctx->home_given ? p->ctx->home : NULL,
					 optarg))
				return CLI_BAD;
			p->ctx->home = optarg;
			p->ctx->home_given = true;
			continue;
		case OPT_CONFIG:
			if (!global_once(p, "config", p->ctx->config, optarg))
				return CLI_BAD;
			p->ctx->config = optarg;
			continue;
		case OPT_QUIET:
			p->ctx->quiet = true;
			continue;
		case OPT_JSON:
			p->ctx->json = true;
			continue;
		case OPT_WIDE:
			p->ctx->wide = true;
			continue;
		case 'h':
		case OPT_HELP:
			cli_print_help(p, p->ctx->help_out ? p->ctx->help_out : stdout);
			return CLI_HELP;
		case ':':
			cli_error(p->ctx, "option '%s' needs a value (see --help)",
				  p->argv[optind - 1]);
			return CLI_BAD;
		case '?':
			if (optopt > 0 && optopt < 128)
				cli_error(p->ctx, "unknown option '-%c' (see --help)", optopt);
			else if (strncmp(p->argv[optind - 1], "--", 2) == 0)
				unknown_long(p, p->argv[optind - 1]);
			else
				cli_error(p->ctx, "unknown option '%s' (see --help)",
					  p->argv[optind - 1]);
			return CLI_BAD;
		default: return given_once(p, c, optarg) < 0 ? CLI_BAD : c;
		}
	}
}

int cli_optind(const cli_parser *p)
{
	(void)p;
	return optind;
}

int cli_end(cli_parser *p, int c, bool bad, int min_operands, int max_operands,
	    const char *what, int *first)
{
	const cli_ctx *ctx = p->ctx;
	char **argv = p->argv;
	int at = cli_optind(p), n = p->argc - at;

	cli_parser_free(p);
	if (first)
		*first = at;
	if (c == CLI_HELP)
		return EXIT_OK;
	if (c == CLI_BAD || bad)
		return EXIT_USAGE;
	if (n >= min_operands && (max_operands < 0 || n <= max_operands))
		return CLI_GO;
	if (what)
		cli_error(ctx, "expected %s (see --help)", what);
	else if (max_operands >= 0 && n > max_operands)
		cli_error(ctx, "unexpected argument '%s' (see --help)", argv[at + max_operands]);
	else
		cli_error(ctx, "expected at least %d argument%s (see --help)", min_operands,
			  min_operands == 1 ? "" : "s");
	return EXIT_USAGE;
}

static void vreport(const cli_ctx *ctx, const char *kind, const char *fmt, va_list ap)
{
	static const char oom[] = "profreg: out of memory while reporting an error\n";
	char msg[2 * PR_ERROR_MSG_MAX];
	buf line = BUF_INIT;

	/* Messages quote names and paths from outside: no escape reaches the terminal. */
	vsnprintf(msg, sizeof(msg), fmt, ap);
	fflush(stdout);
	/* The whole line in one write: lines of two processes never mix. */
	if (buf_printf(&line, "%s: %s", ctx->prog ? ctx->prog : "profreg", kind) < 0 ||
	    cli_escape(&line, msg) < 0 || buf_putc(&line, '\n') < 0)
		(void)fileio_write_fd(STDERR_FILENO, oom, sizeof(oom) - 1);
	else
		(void)fileio_write_fd(STDERR_FILENO, line.ptr, line.len);
	buf_release(&line);
}

/*
 * Whether an error line was printed: a command that reported its failure
 * (a write to standard output among them) has said why, and cli_finish
 * adds no second line. Atomic: serve's threads report too.
 */
static atomic_bool error_reported;

void cli_error(const cli_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	atomic_store(&error_reported, true);
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

/* The lines cli_say_on_signal prints, made before any signal can come. */
static char signal_line[3][512];
static size_t signal_len[3];
static const int said_signals[3] = {SIGTERM, SIGINT, SIGHUP};

/* Only async-signal-safe calls: write(2), then the signal's default action. */
static void say_signal(int sig)
{
	for (size_t i = 0; i < 3; i++)
		if (said_signals[i] == sig && signal_len[i])
			(void)!write(STDERR_FILENO, signal_line[i], signal_len[i]);
	signal(sig, SIG_DFL);
	raise(sig);
}

void cli_say_on_signal(const cli_ctx *ctx, const char *what)
{
	static const char *const names[3] = {"SIGTERM", "SIGINT", "SIGHUP"};
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = say_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < 3; i++) {
		struct sigaction old;
		/* Ignored by whoever started us (nohup, a background job): left so. */
		if (sigaction(said_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		int n = snprintf(signal_line[i], sizeof(signal_line[i]),
				 "%s: stopped by %s before it finished%s%s\n", ctx->prog, names[i],
				 what ? "; " : "", what ? what : "");
		signal_len[i] = n > 0 && (size_t)n < sizeof(signal_line[i]) ? (size_t)n : 0;
		sigaction(said_signals[i], &sa, NULL);
	}
}

int cli_report_problem(const cli_ctx *ctx, int64_t run_id, const char *problem, int status)
{
	if (!problem[0])
		return status;
	cli_error(ctx,
		  "report not written (the run's findings are stored; its pages and summary link "
		  "to the report, which 'profreg report --run %" PRId64 "' writes again): %s",
		  run_id, problem);
	return status == EXIT_OK ? EXIT_RUNTIME : status;
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

/*
 * Options read as "--NAME VALUE"; an operand (its name in capitals, as
 * "ID") as its name and value, since it has no dashes.
 */
static const char *what_of(char out[96], const char *opt, const char *s)
{
	if (isupper((unsigned char)opt[0]))
		snprintf(out, 96, "%s '%.48s'", opt, s);
	else
		snprintf(out, 96, "'--%s %.48s'", opt, s);
	return out;
}

static int parse_u64(const cli_ctx *ctx, const char *opt, const char *s,
		     unsigned long long min, unsigned long long max, bool sizes,
		     unsigned long long *out)
{
	char *end, what[96];
	unsigned long long v;

	/*
	 * Digits only: strtoull would skip blanks and take " -1" as the
	 * largest value, and a suffix read on an ID made "2G" a number that
	 * a later reading of the same text took as 2.
	 */
	if (!s || !isdigit((unsigned char)s[0])) {
		cli_error(ctx, "%s needs a whole number", what_of(what, opt, s ? s : ""));
		return CLI_BAD;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	/* Accept K/M/G suffixes on sizes: they are easier to read that way. */
	if (sizes && errno == 0 && end[0] && !end[1]) {
		unsigned shift = end[0] == 'K' || end[0] == 'k' ? 10 :
				 end[0] == 'M' ? 20 : end[0] == 'G' ? 30 : 0;
		if (shift && v <= (~0ULL >> shift)) {
			v <<= shift;
			end++;
		} else if (isalpha((unsigned char)end[0]) && !strchr("KkMG", end[0])) {
			cli_error(ctx, "%s: the suffix '%c' is not K, M or G",
				  what_of(what, opt, s), end[0]);
			return CLI_BAD;
		}
	}
	if (errno || *end || v < min || v > max) {
		cli_error(ctx, "%s is not a whole number from %llu to %llu",
			  what_of(what, opt, s), min, max);
		return CLI_BAD;
	}
	*out = v;
	return 0;
}

int cli_parse_u64(const cli_ctx *ctx, const char *opt, const char *s,
		  unsigned long long min, unsigned long long max,
		  unsigned long long *out)
{
	return parse_u64(ctx, opt, s, min, max, false, out);
}

int cli_parse_number(const cli_ctx *ctx, const char *opt, const char *s, double lo, double hi,
		     double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v >= lo && v <= hi)) {
		cli_error(ctx, "'--%s %s' is not a number from %g to %g", opt, s, lo, hi);
		return CLI_BAD;
	}
	*out = v;
	return 0;
}

int cli_parse_size(const cli_ctx *ctx, const char *opt, const char *s,
		   unsigned long long min, unsigned long long max,
		   unsigned long long *out)
{
	return parse_u64(ctx, opt, s, min, max, true, out);
}

/*
 * "unknown command 'profles' (did you mean 'profreg profiles'?)": a typo
 * names the command meant, or both when two are as close ('servce' is
 * one edit from serve and from service).
 */
static void unknown_command(const cli_ctx *ctx, const cli_command *cmds, const char *group,
			    const char *given)
{
	const char *names[64] = {NULL};
	size_t n = 0, d;
	long best, other = -1;

	for (const cli_command *c = cmds; c->name && n < 64; c++)
		names[n++] = c->name;
	best = similar_best(given, names, n);
	if (best < 0) {
		cli_error(ctx, "unknown command '%s' (see '%s --help')", given, group);
		return;
	}
	d = similar_distance(given, names[best], 3);
	for (size_t i = (size_t)best + 1; i < n && other < 0; i++)
		if (similar_distance(given, names[i], 3) == d)
			other = (long)i;
	if (other >= 0)
		cli_error(ctx, "unknown command '%s' (did you mean '%s %s' or '%s %s'?)", given,
			  group, names[best], group, names[other]);
	else
		cli_error(ctx, "unknown command '%s' (did you mean '%s %s'?)", given, group,
			  names[best]);
}

int cli_dispatch(cli_ctx *ctx, const cli_command *cmds, const char *group,
		 int argc, char **argv)
{
	const char *prog = ctx->prog;
	char name[128];
	int status;

	if (argc < 1 || strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0 ||
	    strcmp(argv[0], "help") == 0) {
		/* Asked for, on stdout; as the answer to a missing command, on
		 * stderr in one write like every message. */
		buf text = BUF_INIT;
		int brc = buf_printf(&text, "usage: %s COMMAND [options]\n\ncommands:\n", group);
		for (const cli_command *c = cmds; c->name && brc == 0; c++)
			brc = buf_printf(&text, "  %-14s %s\n", c->name, c->help);
		if (brc == 0)
			brc = buf_printf(&text, "\nRun '%s COMMAND --help' for a command's"
					 " options.\n", group);
		if (brc < 0) {
			cli_error(ctx, "out of memory");
		} else if (ctx->help_out && argc >= 1) {
			/* The manual: the group's list, then each subcommand's own help. */
			fwrite(text.ptr, 1, text.len, ctx->help_out);
			for (const cli_command *c = cmds; c->name; c++) {
				char sub_help[] = "--help";
				char *sub[3] = {(char *)c->name, sub_help, NULL};
				snprintf(name, sizeof(name), "%s %s", group, c->name);
				fprintf(ctx->help_out, "\001%s\n", name);
				ctx->prog = name;
				(void)c->fn(ctx, 2, sub);
				ctx->prog = prog;
			}
		} else if (argc < 1) {
			fflush(stdout);
			(void)fileio_write_fd(STDERR_FILENO, text.ptr, text.len);
		} else {
			fwrite(text.ptr, 1, text.len, stdout);
		}
		buf_release(&text);
		return brc < 0 ? EXIT_RUNTIME : argc < 1 ? EXIT_USAGE : EXIT_OK;
	}
	for (const cli_command *c = cmds; c->name; c++) {
		if (strcmp(c->name, argv[0]) != 0)
			continue;
		snprintf(name, sizeof(name), "%s %s", group, c->name);
		ctx->prog = name;
		status = c->fn(ctx, argc, argv);
		ctx->prog = prog;
		return status;
	}
	unknown_command(ctx, cmds, group, argv[0]);
	return EXIT_USAGE;
}

int cli_finish(const cli_ctx *ctx, int code)
{
	int e = fflush(stdout) != 0 ? errno : 0;

	if (!e && !ferror(stdout))
		return code;
	/* errno tells only of this flush; a write that failed earlier left it stale. */
	if (!atomic_load(&error_reported))
		cli_error(ctx, "cannot write to standard output: %s",
			  e ? strerror(e) : "a write failed");
	return code ? code : EXIT_RUNTIME;
}

static bool in_ranges(uint32_t cp, const uint32_t (*r)[2], size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (cp >= r[i][0] && cp <= r[i][1])
			return true;
	return false;
}

/* Columns of a printable character: wcwidth, roughly, without a locale. */
static int char_cols(uint32_t cp)
{
	static const uint32_t zero[][2] = {
		{0x0300, 0x036f}, {0x0483, 0x0489}, {0x0591, 0x05bd}, {0x0610, 0x061a},
		{0x064b, 0x065f}, {0x1ab0, 0x1aff}, {0x1dc0, 0x1dff}, {0x200b, 0x200d},
		{0x2060, 0x2064}, {0x20d0, 0x20ff}, {0xfe00, 0xfe0f}, {0xfe20, 0xfe2f},
		{0xfeff, 0xfeff},
	};
	static const uint32_t wide[][2] = {
		{0x1100, 0x115f}, {0x2e80, 0x303e}, {0x3041, 0x33ff}, {0x3400, 0x4dbf},
		{0x4e00, 0x9fff}, {0xa000, 0xa4cf}, {0xac00, 0xd7a3}, {0xf900, 0xfaff},
		{0xfe30, 0xfe4f}, {0xff00, 0xff60}, {0xffe0, 0xffe6}, {0x1f300, 0x1f64f},
		{0x1f900, 0x1f9ff}, {0x20000, 0x3fffd},
	};

	if (cp < 0x300)
		return 1;
	if (in_ranges(cp, zero, sizeof(zero) / sizeof(zero[0])))
		return 0;
	if (in_ranges(cp, wide, sizeof(wide) / sizeof(wide[0])))
		return 2;
	return 1;
}

size_t cli_unit_next(cli_unit *out, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t cp = 0;
	size_t n = utf8_decode(u, &cp);

	if (n == 0) {
		/* Not UTF-8: show the one byte, and go on with the next. */
		out->cols = snprintf(out->text, sizeof(out->text), "\\x%02x", u[0]);
		return 1;
	}
	if (utf8_hidden(cp)) {
		out->cols = snprintf(out->text, sizeof(out->text),
				     cp < 0x80 ? "\\x%02x" : "\\u{%04x}", (unsigned)cp);
		return n;
	}
	memcpy(out->text, s, n);
	out->text[n] = '\0';
	out->cols = char_cols(cp);
	return n;
}

int cli_escape(buf *out, const char *s)
{
	cli_unit u;
	int rc;

	while (*s) {
		s += cli_unit_next(&u, s);
		if ((rc = buf_puts(out, u.text)) < 0)
			return rc;
	}
	return 0;
}

int cli_width(const char *s)
{
	cli_unit u;
	int cols = 0;

	while (*s) {
		s += cli_unit_next(&u, s);
		cols += u.cols;
	}
	return cols;
}

void cli_put_safe(FILE *f, const char *s, int width)
{
	cli_unit u;
	int cols = 0;

	while (*s) {
		s += cli_unit_next(&u, s);
		fputs(u.text, f);
		cols += u.cols;
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

/* One line of --help text as roff inside .nf: no escapes, no requests. */
static void roff_line(FILE *f, const char *s, size_t n)
{
	if (n && (s[0] == '.' || s[0] == '\''))
		fputs("\\&", f);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\')
			fputs("\\e", f);
		else
			fputc(s[i], f);
	}
	fputc('\n', f);
}

int cli_man(cli_ctx *ctx, const cli_command *cmds, const char *version, FILE *f)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	cli_ctx sub = *ctx;
	const char *prog = ctx->prog;

	if (!mem) {
		cli_error(ctx, "out of memory");
		return EXIT_RUNTIME;
	}
	sub.help_out = mem;
	for (const cli_command *c = cmds; c->name; c++) {
		char help[] = "--help", *argv[3] = {(char *)c->name, help, NULL}, name[128];
		snprintf(name, sizeof(name), "%s %s", prog, c->name);
		fprintf(mem, "\001%s\n", name);
		sub.prog = name;
		(void)c->fn(&sub, 2, argv);
	}
	if (fclose(mem) != 0 || !text) {
		free(text);
		cli_error(ctx, "out of memory");
		return EXIT_RUNTIME;
	}
	fprintf(f, ".\\\" profreg(1), written by 'profreg help --man' from the commands' own\n"
		   ".\\\" option tables: do not edit by hand.\n"
		   ".TH PROFREG 1 \"\" \"profreg %s\" \"User Commands\"\n"
		   ".SH NAME\nprofreg \\- find performance regressions in continuous profiles\n"
		   ".SH SYNOPSIS\n.B profreg\n[global options]\n.I COMMAND\n[options]\n"
		   ".SH DESCRIPTION\nprofreg stores continuous profiles (pprof, folded stacks,\n"
		   "V8, perf script) as compressed blobs indexed in PostgreSQL, tests every\n"
		   "function's self share against rolling baselines, pages on\\-call and\n"
		   "gates deploys.\n"
		   "Every command takes \\fB\\-\\-help\\fR; what follows is that text.\n"
		   ".SH COMMANDS\n.TP 16\n", version);
	for (const cli_command *c = cmds; c->name; c++)
		fprintf(f, "%s\\fB%s\\fR\n%s\n", c == cmds ? "" : ".TP\n", c->name, c->help);
	for (char *s = text, *end = text + len; s < end;) {
		char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
		if (n && s[0] == '\001') {
			fprintf(f, "%s.SS \"", s == text ? ".SH \"COMMAND REFERENCE\"\n" : ".fi\n");
			fwrite(s + 1, 1, n - 1, f);
			fputs("\"\n.nf\n", f);
		} else {
			roff_line(f, s, n);
		}
		s += n + 1;
	}
	fputs(".fi\n.SH EXIT STATUS\n0 success; 1 a regression at or above the gate; "
	      "2 usage; 3 infrastructure error;\n4 bad input; 5 inconclusive.\n"
	      ".SH FILES\nThe configuration file (\\fB\\-\\-config\\fR), the state "
	      "directory (\\fB\\-\\-home\\fR,\n\\fBPROFREG_HOME\\fR, default ./var).\n", f);
	free(text);
	return cli_finish(ctx, EXIT_OK);
}
