/*
 * main.c: profreg's entry point: global options, then the command table.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/cli.h"
#include "jobs/cli/commands.h"
#include "jobs/cli/exitcode.h"

#include <gsl/gsl_errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The words of the longest command `help` takes ("runs list", "access grant"). */
#define HELP_WORDS_MAX 4

#ifndef PROFREG_VERSION
#define PROFREG_VERSION "0.0.0"
#endif

static int cmd_version(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {{NULL, 0, 0, NULL, NULL}};
	static const char usage[] = "profreg version";
	static const char desc[] = "Print profreg's version.";
	cli_parser *p = NULL;
	const char *arg;
	int c, status;

	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		;
	if ((status = cli_end(p, c, false, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	printf("profreg %s\n", PROFREG_VERSION);
	return cli_finish(ctx, EXIT_OK);
}

static const cli_command commands[] = {
	COMMANDS_TABLE
	{"version", cmd_version, "print the version"},
	{NULL, NULL, NULL},
};

/*
 * What follows the option table in the top-level help. `profreg --help`,
 * `profreg -h` and `profreg help` print the same text: the parser's
 * usage and options, then this.
 */
static void print_commands(void)
{
	printf("\ncommands:\n");
	for (const cli_command *k = commands; k->name; k++)
		printf("  %-14s %s\n", k->name, k->help);
	printf("  %-14s %s\n", "help", "show this help; 'help COMMAND' shows a command's");
	printf("\nRun 'profreg COMMAND --help' for a command's options.\n");
}

int main(int argc, char **argv)
{
	static const cli_option opts[] = {
		{"version", no_argument, 'V', NULL, "print the version"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char usage[] = "profreg [global options] COMMAND [options]";
	static const char desc[] = "Find performance regressions in continuous profiles.";
	static char help_opt[] = "--help";
	cli_ctx ctx = {0};
	cli_parser *p = NULL;
	const char *arg;
	char *sub[HELP_WORDS_MAX + 2];
	int nsub = 0;
	int c, first, status;

	setlocale(LC_ALL, "C");
	/* GSL aborts on a domain error by default; the stats code checks its
	 * arguments and return values instead. */
	gsl_set_error_handler_off();
	ctx.prog = "profreg";
	if (cli_parser_new(&p, &ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	cli_parser_posix(p);
	while ((c = cli_next(p, &arg)) > 0)
		if (c == 'V')
			break;
	first = cli_optind(p);
	if (c == 0 && first + 1 == argc && strcmp(argv[first], "help") == 0) {
		/* `profreg help` is `profreg --help`, to the byte. */
		cli_print_help(p, stdout);
		c = CLI_HELP;
	}
	if ((status = cli_end(p, c, false, 0, -1, NULL, &first)) != CLI_GO) {
		if (status != EXIT_OK)
			return status;
		print_commands();
		return cli_finish(&ctx, EXIT_OK);
	}
	if (c == 'V') {
		printf("profreg %s\n", PROFREG_VERSION);
		return cli_finish(&ctx, EXIT_OK);
	}
	if (first >= argc) {
		cli_error(&ctx, "no command given (see 'profreg --help')");
		return EXIT_USAGE;
	}
	if (!ctx.home && (ctx.home = getenv("PROFREG_HOME")) && !*ctx.home) {
		/* Set but empty: an unset variable in a unit file or a cron line. */
		cli_error(&ctx, "PROFREG_HOME is set but empty: give a directory, or unset it");
		return EXIT_USAGE;
	}
	if (!ctx.home)
		ctx.home = "./var";
	if (strcmp(argv[first], "help") == 0 && first + 2 == argc &&
	    strcmp(argv[first + 1], "--man") == 0) {
		/* Hidden: the manual page, written from the same tables as --help. */
		status = cli_man(&ctx, commands, PROFREG_VERSION, stdout);
	} else if (strcmp(argv[first], "help") == 0) {
		/* `profreg help runs list` is `profreg runs list --help`. */
		while (nsub < HELP_WORDS_MAX && first + 1 + nsub < argc) {
			sub[nsub] = argv[first + 1 + nsub];
			nsub++;
		}
		if (first + 1 + nsub < argc) {
			cli_error(&ctx, "'help' takes a command of at most %d words",
				  HELP_WORDS_MAX);
			return EXIT_USAGE;
		}
		sub[nsub++] = help_opt;
		sub[nsub] = NULL;
		status = cli_dispatch(&ctx, commands, "profreg", nsub, sub);
	} else {
		status = cli_dispatch(&ctx, commands, "profreg", argc - first, argv + first);
	}
	return cli_finish(&ctx, status);
}
