/*
 * cli.h: the command table, option tables and the shared context of a run.
 *
 * Every command has a table of options that drives both getopt_long and
 * its --help text, so the two can never disagree. The global options
 * (--db, --home, --config, --quiet, --json) are accepted before the
 * command and by every command.
 */
#ifndef PR_CLI_H
#define PR_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "../common/error.h"

typedef struct cli_ctx {
	const char *db;      /* --db, or NULL: resolved by ctx_db_open */
	const char *home;    /* state directory */
	const char *config;  /* --config FILE or NULL */
	bool quiet;
	bool json;
	const char *prog;    /* "profreg ingest", for messages */
} cli_ctx;

typedef struct cli_option {
	const char *name;    /* long name, without "--" */
	int has_arg;         /* no_argument / required_argument */
	int key;             /* returned by cli_next; short letter or >= 256 */
	const char *arg;     /* argument name in --help, e.g. "FILE" */
	const char *help;
} cli_option;

typedef struct cli_command {
	const char *name;
	int (*fn)(cli_ctx *ctx, int argc, char **argv);
	const char *help;
} cli_command;

typedef struct cli_parser cli_parser;

/*
 * Start parsing argv (argv[0] is the command name) against `opts` (ended
 * by a zeroed entry) plus the global options. `usage` is the synopsis
 * line, `description` the paragraph under it. Free with cli_parser_free.
 */
int cli_parser_new(cli_parser **out, cli_ctx *ctx, int argc, char **argv,
		   const cli_option *opts, const char *usage,
		   const char *description);
void cli_parser_free(cli_parser *p);

/* Stop at the first operand (for a command that dispatches further). */
void cli_parser_posix(cli_parser *p);

/*
 * Next option: its key and *arg (or NULL); 0 at the end of options;
 * CLI_HELP when --help was given (help is already printed to stdout);
 * CLI_BAD on a usage error (message already printed to stderr). Global
 * options are handled inside and never returned.
 */
#define CLI_HELP (-100)
#define CLI_BAD (-101)
int cli_next(cli_parser *p, const char **arg);

/* Index of the first operand in argv after cli_next returned 0. */
int cli_optind(const cli_parser *p);

/* Print the usage and option table of a parser to `f`. */
void cli_print_help(const cli_parser *p, FILE *f);

/* Print "profreg CMD: msg" to stderr, one line. */
void cli_error(const cli_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Report a recorded error and return the matching exit code. */
int cli_fail(const cli_ctx *ctx, const pr_error *err);

/* Print a warning unless --quiet. */
void cli_warn(const cli_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Parse an integer option value with bounds; prints the error and
 * returns CLI_BAD when it does not fit.
 */
int cli_parse_u64(const cli_ctx *ctx, const char *opt, const char *s,
		  unsigned long long min, unsigned long long max,
		  unsigned long long *out);

/* Dispatch argv[0] among `cmds`; prints the list on --help or unknown. */
int cli_dispatch(cli_ctx *ctx, const cli_command *cmds, const char *group,
		 int argc, char **argv);

/* Flush stdout and turn a write error into exit code 3. */
int cli_finish(const cli_ctx *ctx, int code);



/*
 * Write a name taken from a profile to a terminal or log safely: control
 * characters (ANSI escapes, newlines) are shown as \xNN, so a hostile
 * function name cannot rewrite the operator's screen or forge log lines.
 * Pads with spaces to `width` display columns when width > 0 (counting
 * UTF-8 sequences as one column each).
 */
void cli_put_safe(FILE *f, const char *s, int width);

/* Print a jansson value as one JSON document on stdout (steals `v`). */
struct json_t;
int cli_print_json(const cli_ctx *ctx, struct json_t *v);

#endif

