/*
 * cli.h: the command table, option tables and the shared context of a run.
 *
 * Every command has a table of options that drives both getopt_long and
 * its --help text, so the two can never disagree. The global options
 * (--db, --home, --config, --quiet, --json, --wide) are accepted before
 * the command and by every command.
 */
#ifndef PR_CLI_H
#define PR_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "common/buf.h"
#include "common/error.h"

typedef struct cli_ctx {
	const char *db;      /* --db, or NULL: resolved by ctx_db_open */
	const char *home;    /* state directory */
	bool home_given;     /* home is --home's, not PROFREG_HOME's nor the default */
	const char *config;  /* --config FILE or NULL */
	bool quiet;
	bool json;
	bool wide;           /* --wide: tables in full (table.h) */
	const char *prog;    /* "profreg ingest", for messages */
	/*
	 * Where --help text goes; NULL: standard output. Set by the manual
	 * writer (cli_man), which also makes a group's --help walk into each
	 * of its subcommands.
	 */
	FILE *help_out;
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

/*
 * End a command's option loop: free `p` and say whether the command goes
 * on. `c` is what cli_next returned last; `bad` is true when the command
 * has already reported a bad option value. Returns CLI_GO to go on, with
 * *first (when `first` is not NULL) the index in argv of the first
 * operand; else the exit status to return at once:
 *
 * - EXIT_OK after --help (the help is printed);
 * - EXIT_USAGE after a usage error the parser or the command reported;
 * - EXIT_USAGE when the number of operands is below `min_operands` or
 *   above `max_operands` (-1: no limit). It prints "expected WHAT (see
 *   --help)", or, when `what` is NULL, "unexpected argument 'X' (see
 *   --help)" naming the first operand past the limit.
 *
 * Checks that depend on the options given (an operand or an option) stay
 * with the command, after CLI_GO.
 */
#define CLI_GO (-102)
int cli_end(cli_parser *p, int c, bool bad, int min_operands, int max_operands,
	    const char *what, int *first);

/* Print the usage and option table of a parser to `f`. */
void cli_print_help(const cli_parser *p, FILE *f);

/*
 * Write the manual page profreg(1) in roff to `f`: every command of
 * `cmds` (and every subcommand of a group) with its --help text, which
 * each command prints from its own option table, usage and description.
 * Returns an exit code.
 */
int cli_man(cli_ctx *ctx, const cli_command *cmds, const char *version, FILE *f);

/*
 * Print "profreg CMD: msg" to stderr as one line in one write(2), in its
 * safe form (see cli_escape), so that lines of processes sharing a log
 * never interleave.
 */
void cli_error(const cli_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Report a recorded error and return the matching exit status
 * (exitcode_for): the one place a PR_E* code becomes an exit status.
 */
int cli_fail(const cli_ctx *ctx, const pr_error *err);

/*
 * A run's report that could not be written (`problem`, "" when it was):
 * an error line even under --quiet, since the run's pages and summary
 * link to it, naming the command that writes it again. Returns `status`,
 * or exit 3 in place of a success.
 */
int cli_report_problem(const cli_ctx *ctx, int64_t run_id, const char *problem, int status);

/*
 * From now until the process ends, a SIGTERM, SIGINT or SIGHUP prints
 * "profreg CMD: stopped by SIGTERM before it finished; WHAT" in one
 * write(2) and then ends the process by that signal, as before (exit
 * 128 + its number to a shell): a job killed by a deploy tool's timeout
 * or a cron's end says so instead of vanishing. `what` (static; may be
 * NULL) says what that leaves, "the release is not passed". A signal
 * the process was started ignoring (nohup's SIGHUP) stays ignored.
 */
void cli_say_on_signal(const cli_ctx *ctx, const char *what);

/* Print "profreg CMD: warning: msg" like cli_error, unless --quiet. */
void cli_warn(const cli_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Parse a whole number (digits only) within bounds: the value of option
 * --opt, or the operand opt when its name is in capitals ("ID"). Prints
 * the error and returns CLI_BAD when it does not fit.
 */
int cli_parse_u64(const cli_ctx *ctx, const char *opt, const char *s,
		  unsigned long long min, unsigned long long max,
		  unsigned long long *out);

/* A number from lo to hi (strtod's forms) for option --opt; CLI_BAD, said, when not. */
int cli_parse_number(const cli_ctx *ctx, const char *opt, const char *s, double lo, double hi,
		     double *out);

/* The same for a size in bytes, which may end in K, M or G (powers of 1024). */
int cli_parse_size(const cli_ctx *ctx, const char *opt, const char *s,
		   unsigned long long min, unsigned long long max,
		   unsigned long long *out);

/* Dispatch argv[0] among `cmds`; prints the list on --help or unknown. */
int cli_dispatch(cli_ctx *ctx, const cli_command *cmds, const char *group,
		 int argc, char **argv);

/*
 * Flush stdout and turn a write error into exit code 3 (`code` when it is
 * not 0). The error is printed unless an error line was printed already:
 * the command that failed has said why, in one line.
 */
int cli_finish(const cli_ctx *ctx, int code);



/*
 * Text from outside (a profile's names, paths, messages quoting them) is
 * shown on a terminal or in a log in a safe form, so a hostile function
 * name can neither rewrite the operator's screen, reorder what it shows,
 * nor forge log lines. Everything else stays as it is (UTF-8 included):
 *
 * - C0 controls (U+0000 to U+001F) and DEL: \xNN ("\x1b", "\x0a");
 * - a byte that is not part of valid UTF-8 (a stray continuation byte, an
 *   overlong form, a surrogate, a cut sequence): \xNN too ("\xff");
 * - C1 controls (U+0080 to U+009F), the bidirectional controls (U+061C,
 *   U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069) and the line and
 *   paragraph separators (U+2028, U+2029): \u{NNNN}, four lower-case hex
 *   digits ("\u{009b}", "\u{202e}").
 *
 * A backslash is shown as itself. Display columns follow wcwidth
 * roughly, without a locale: combining marks and zero-width characters
 * take 0, East Asian wide characters and emoji 2, the rest 1; an escape
 * takes as many columns as it has characters.
 */

/* One display unit: a character, or the escape shown in its place. */
#define CLI_UNIT_MAX 12
typedef struct cli_unit {
	char text[CLI_UNIT_MAX]; /* NUL-terminated UTF-8 bytes or escape */
	int cols;                /* display columns */
} cli_unit;

/*
 * Read the unit at the start of `s`, which must not be at its end (*s !=
 * '\0'), into `out`. Returns how many bytes of `s` it stands for (1 to
 * 4).
 */
size_t cli_unit_next(cli_unit *out, const char *s);

/* Append the safe form of `s` to `out`; returns 0 or buf_put's code. */
int cli_escape(buf *out, const char *s);

/* Display columns of the safe form of `s`. */
int cli_width(const char *s);

/*
 * Write `s` in its safe form to `f`, padded with spaces to `width`
 * display columns when width > 0.
 */
void cli_put_safe(FILE *f, const char *s, int width);

/* Print a jansson value as one JSON document on stdout (steals `v`). */
struct json_t;
int cli_print_json(const cli_ctx *ctx, struct json_t *v);

#endif

