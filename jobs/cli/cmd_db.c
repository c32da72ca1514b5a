/*
 * cmd_db.c: `profreg db init|migrate|start|stop|status`: the schema and
 * the private PostgreSQL cluster. `init` and `migrate` are the setup
 * steps that may create a cluster or a schema; no job ever does.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/commands.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"
#include "pipeline/pgembed.h"

#include <jansson.h>
#include <stdlib.h>

static const cli_option no_opts[] = {{NULL, 0, 0, NULL, NULL}};

/* Parse a command with neither options nor operands: CLI_GO, or the exit status. */
static int parse_none(cli_ctx *ctx, int argc, char **argv, const char *usage,
		      const char *desc)
{
	cli_parser *p = NULL;
	const char *arg;
	int c;

	if (cli_parser_new(&p, ctx, argc, argv, no_opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		;
	if ((c = cli_end(p, c, false, 0, 0, NULL, NULL)) != CLI_GO)
		return c;
	/*
	 * start, stop and status open no database, yet an empty --db (an unset
	 * secret) is the usage error it is for every other command, not a
	 * "not running" that sends the operator to the private cluster.
	 */
	if (ctx->db && !*ctx->db) {
		cli_error(ctx, "'--db' is empty: give a connection string (an unset secret?)");
		return EXIT_USAGE;
	}
	return CLI_GO;
}

static int db_cmd_migrate(cli_ctx *ctx, int argc, char **argv)
{
	static const char desc[] =
		"Apply the schema migrations that have not been applied yet, to an empty\n"
		"database too (every command applies pending ones to a profreg database).";
	pr_error err = PR_ERROR_INIT;
	db *d = NULL;
	int rc, status, version = 0;

	status = parse_none(ctx, argc, argv, "profreg db migrate", desc);
	if (status != CLI_GO)
		return status;
	if ((rc = ctx_db_open_setup(ctx, &d, &err)) < 0 ||
	    (rc = db_schema_version(d, &version, &err)) < 0) {
		db_close(d);
		return cli_fail(ctx, &err);
	}
	db_close(d);
	if (!ctx->quiet)
		printf("schema at version %d\n", version);
	return EXIT_OK;
}

static int db_cmd_init(cli_ctx *ctx, int argc, char **argv)
{
	static const char desc[] =
		"Set up the database: without --db (or PROFREG_DB, or the libpq environment)\n"
		"create and start the private PostgreSQL cluster under the state directory;\n"
		"then apply the schema. Running it again changes nothing.";
	pr_error err = PR_ERROR_INIT;
	db *d = NULL;
	int rc, status, version = 0;

	status = parse_none(ctx, argc, argv, "profreg db init", desc);
	if (status != CLI_GO)
		return status;
	if ((rc = ctx_db_open_setup(ctx, &d, &err)) < 0 ||
	    (rc = db_schema_version(d, &version, &err)) < 0) {
		db_close(d);
		return cli_fail(ctx, &err);
	}
	db_close(d);
	if (ctx->json)
		return cli_print_json(ctx, json_pack("{s:i}", "schema_version", version));
	if (!ctx->quiet)
		printf("database ready, schema at version %d\n", version);
	return EXIT_OK;
}

static int db_cmd_start(cli_ctx *ctx, int argc, char **argv)
{
	static const char desc[] =
		"Start the private PostgreSQL cluster under the state directory (made by\n"
		"'profreg db init'); print its connection string.";
	pr_error err = PR_ERROR_INIT;
	char *conninfo = NULL;
	int status;

	status = parse_none(ctx, argc, argv, "profreg db start", desc);
	if (status != CLI_GO)
		return status;
	if (pgembed_open(&conninfo, ctx->home, ctx->quiet, &err) < 0)
		return cli_fail(ctx, &err);
	status = EXIT_OK;
	if (ctx->json)
		status = cli_print_json(ctx, json_pack("{s:b,s:s}", "running", 1,
						       "conninfo", conninfo));
	else
		printf("%s\n", conninfo);
	free(conninfo);
	return status;
}

static int db_cmd_stop(cli_ctx *ctx, int argc, char **argv)
{
	static const char desc[] = "Stop the private PostgreSQL cluster.";
	pr_error err = PR_ERROR_INIT;
	int status;

	status = parse_none(ctx, argc, argv, "profreg db stop", desc);
	if (status != CLI_GO)
		return status;
	if (pgembed_stop(ctx->home, ctx->quiet, &err) < 0)
		return cli_fail(ctx, &err);
	return EXIT_OK;
}

static int db_cmd_status(cli_ctx *ctx, int argc, char **argv)
{
	static const char desc[] =
		"Say whether the private PostgreSQL cluster is running (exit 0) or not (exit 3).";
	pr_error err = PR_ERROR_INIT;
	char *conninfo = NULL;
	bool running = false;
	int status;

	status = parse_none(ctx, argc, argv, "profreg db status", desc);
	if (status != CLI_GO)
		return status;
	if (pgembed_status(&running, &conninfo, ctx->home, &err) < 0)
		return cli_fail(ctx, &err);
	status = EXIT_OK;
	if (ctx->json)
		status = cli_print_json(ctx, json_pack("{s:b,s:s?}", "running", running,
						       "conninfo", running ? conninfo : NULL));
	else if (running)
		printf("running: %s\n", conninfo);
	else
		printf("not running\n");
	free(conninfo);
	return status ? status : (running ? EXIT_OK : EXIT_RUNTIME);
}

static const cli_command db_cmds[] = {
	{"init", db_cmd_init, "create the private cluster (without --db) and the schema"},
	{"migrate", db_cmd_migrate, "apply pending schema migrations"},
	{"start", db_cmd_start, "start the private PostgreSQL cluster"},
	{"stop", db_cmd_stop, "stop the private PostgreSQL cluster"},
	{"status", db_cmd_status, "is the private cluster running"},
	{NULL, NULL, NULL},
};

int cmd_db(cli_ctx *ctx, int argc, char **argv)
{
	return cli_dispatch(ctx, db_cmds, ctx->prog, argc - 1, argv + 1);
}
