/*
 * cmd_config.c: `profreg config check [FILE]`: validate a configuration
 * file without running anything; `profreg config reference`: every key.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/commands.h"
#include "jobs/config.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int config_check(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {{NULL, 0, 0, NULL, NULL}};
	static const char usage[] = "profreg config check [FILE]";
	static const char desc[] =
		"Validate a configuration file (default: --config, else <home>/profreg.json):\n"
		"every unknown key and every value of the wrong type is named by its JSON path,\n"
		"every service's drop folder and repository must exist and be readable, and\n"
		"every secret file must be one the jobs can read (owner-only, one line).\n"
		"Exit 0 when it is valid, 2 when it is not.";
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	config cfg;
	const char *arg;
	int c, first, status;

	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		;
	if ((status = cli_end(p, c, false, 0, 1, "at most one FILE", &first)) != CLI_GO)
		return status;
	/*
	 * `profreg --config a.json config check b.json` checked b.json alone:
	 * whoever typed it may well think a.json was checked too.
	 */
	if (argc - first == 1 && ctx->config && strcmp(ctx->config, argv[first]) != 0) {
		cli_error(ctx,
			  "--config and FILE name two files ('%s' and '%s'): give the one "
			  "to check once",
			  ctx->config, argv[first]);
		return EXIT_USAGE;
	}
	if (argc - first == 1)
		ctx->config = argv[first];
	if (ctx_config_load(ctx, &cfg, &err) < 0 || config_check_paths(&cfg, &err) < 0) {
		if (ctx->json)
			cli_print_json(ctx, json_pack("{s:b,s:s?,s:s}", "valid", 0,
						      "path", ctx->config, "error", err.msg));
		config_release(&cfg);
		return cli_fail(ctx, &err);
	}
	if (ctx->json) {
		json_t *names = json_array();
		for (size_t i = 0; i < cfg.nservices; i++)
			json_array_append_new(names, json_string(cfg.services[i].name));
		status = cli_print_json(ctx, json_pack("{s:b,s:s?,s:o}", "valid", 1,
						       "path", cfg.path, "services", names));
		config_release(&cfg);
		return status;
	}
	if (!ctx->quiet) {
		if (cfg.path)
			printf("'%s' is valid: %zu service%s configured\n", cfg.path, cfg.nservices,
			       cfg.nservices == 1 ? "" : "s");
		else
			printf("no configuration file: the built-in defaults apply\n");
	}
	config_release(&cfg);
	return EXIT_OK;
}

static int config_ref(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {{NULL, 0, 0, NULL, NULL}};
	static const char usage[] = "profreg config reference";
	static const char desc[] =
		"Print the configuration reference in Markdown: every key the loader reads,\n"
		"its type, range, default and meaning, from the loader's own tables\n"
		"(docs/config.md is this output).";
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	const char *arg;
	char *text = NULL;
	int c, first, status;

	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		;
	if ((status = cli_end(p, c, false, 0, 0, "no arguments", &first)) != CLI_GO)
		return status;
	if (config_reference(&text, &err) < 0)
		return cli_fail(ctx, &err);
	status = fputs(text, stdout) < 0 || fflush(stdout) != 0 ? EXIT_RUNTIME : EXIT_OK;
	free(text);
	return status;
}

int cmd_config(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_command cmds[] = {
		{"check", config_check, "validate a configuration file"},
		{"reference", config_ref, "print every configuration key, its default and meaning"},
		{NULL, NULL, NULL},
	};
	return cli_dispatch(ctx, cmds, ctx->prog, argc - 1, argv + 1);
}
