/*
 * cmd_service.c: `profreg service add|set|enable|disable|list`.
 *
 * Profiling is opt-in: nothing is ingested or analysed for a service
 * until it has been added and enabled here.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/commands.h"
#include "jobs/config.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"
#include "jobs/cli/table.h"
#include "common/timeutil.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static const cli_option no_opts[] = {{NULL, 0, 0, NULL, NULL}};

/*
 * Parse a command whose only option is --team (when `team` is not NULL)
 * and whose operand is one service NAME, or none when `name` is false.
 * Returns CLI_GO, or the exit status to return (usage errors are printed).
 */
static int parse_operands(cli_ctx *ctx, int argc, char **argv, const cli_option *opts,
			  const char *usage, const char *desc, bool name,
			  const char **team, int *first)
{
	cli_parser *p = NULL;
	const char *arg;
	int c;

	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		if (c == 't' && team)
			*team = arg;
	return cli_end(p, c, false, name, name, name ? "one service NAME" : NULL, first);
}

/*
 * The team a service is added with: --team, else the configuration
 * file's services.NAME.team. *cfg_team is strdup'd (caller frees).
 */
static int config_team(char **out, cli_ctx *ctx, const char *name, pr_error *err)
{
	config cfg;
	const config_service *cs;
	int rc;

	*out = NULL;
	if ((rc = ctx_config_load(ctx, &cfg, err)) < 0)
		return rc;
	cs = config_service_find(&cfg, name);
	if (cs && cs->team && !(*out = strdup(cs->team)))
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
	config_release(&cfg);
	return rc;
}

static int service_add(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"team", required_argument, 't', "TEAM",
		 "owning team (default: the config file's)"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char usage[] = "profreg service add NAME [--team TEAM]";
	static const char desc[] =
		"Register a service. It starts disabled: enable it to ingest and analyse its\n"
		"profiles. The team is --team, else the configuration file's. Adding a\n"
		"service that exists with the same team changes nothing (exit 0); with\n"
		"another team it is refused (exit 4): change it with 'service set'.";
	pr_error err = PR_ERROR_INIT;
	const char *team = NULL, *name;
	char *file_team = NULL;
	db_service have = {0};
	db *d = NULL;
	bool existed = false;
	int first, rc, status;

	status = parse_operands(ctx, argc, argv, opts, usage, desc, true, &team, &first);
	if (status != CLI_GO)
		return status;
	name = argv[first];
	if (!team) {
		if ((rc = config_team(&file_team, ctx, name, &err)) < 0)
			goto fail;
		team = file_team;
	}
	if ((rc = ctx_db_open_setup(ctx, &d, &err)) < 0)
		goto fail;
	rc = db_service_add(d, name, team, &err);
	if (rc == PR_EEXISTS) {
		pr_error_clear(&err);
		if ((rc = db_service_get(d, &have, name, &err)) < 0)
			goto fail;
		if (strcmp(have.team, team ? team : "") != 0) {
			rc = pr_error_set(&err, PR_EEXISTS,
					  "service '%s' already exists with team '%s', not '%s' "
					  "(change it with 'profreg service set %s --team %s')",
					  name, have.team[0] ? have.team : "(none)",
					  team ? team : "(none)", name,
					  team && *team ? team : "''");
			goto fail;
		}
		existed = true;
	} else if (rc < 0) {
		goto fail;
	}
	if (!ctx->quiet && existed)
		printf("service '%s' already exists (%s); nothing changed\n", name,
		       have.enabled ? "enabled" : "disabled");
	else if (!ctx->quiet)
		printf("added service '%s' (disabled; run 'profreg service enable %s')\n", name,
		       name);
	status = EXIT_OK;
	goto out;
fail:
	status = cli_fail(ctx, &err);
out:
	db_service_release(&have);
	free(file_team);
	db_close(d);
	return status;
}

static int service_set(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"team", required_argument, 't', "TEAM", "the new owning team ('' for none)"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char usage[] = "profreg service set NAME --team TEAM";
	static const char desc[] = "Change a registered service's team. Audited.";
	pr_error err = PR_ERROR_INIT;
	const char *team = NULL;
	db *d = NULL;
	int first, rc, status;

	status = parse_operands(ctx, argc, argv, opts, usage, desc, true, &team, &first);
	if (status != CLI_GO)
		return status;
	if (!team) {
		cli_error(ctx, "nothing to change: give --team (see --help)");
		return EXIT_USAGE;
	}
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = db_service_set_team(d, argv[first], team, &err)) < 0) {
		db_close(d);
		return cli_fail(ctx, &err);
	}
	db_close(d);
	if (!ctx->quiet)
		printf("service '%s' now belongs to %s%s%s\n", argv[first],
		       *team ? "team '" : "no team", team, *team ? "'" : "");
	return EXIT_OK;
}

static int service_toggle(cli_ctx *ctx, int argc, char **argv, bool enable)
{
	static const char enable_desc[] =
		"Opt a service in: its profiles are ingested and analysed.";
	static const char disable_desc[] =
		"Opt a service out: its profiles are refused and it is not analysed. "
		"Stored data is kept.";
	pr_error err = PR_ERROR_INIT;
	db *d = NULL;
	int first, rc, status;

	status = parse_operands(ctx, argc, argv, no_opts,
				enable ? "profreg service enable NAME"
				       : "profreg service disable NAME",
				enable ? enable_desc : disable_desc, true, NULL, &first);
	if (status != CLI_GO)
		return status;
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = db_service_set_enabled(d, argv[first], enable, &err)) < 0) {
		db_close(d);
		return cli_fail(ctx, &err);
	}
	db_close(d);
	if (!ctx->quiet)
		printf("%s service '%s'\n", enable ? "enabled" : "disabled", argv[first]);
	return EXIT_OK;
}

static int service_enable(cli_ctx *ctx, int argc, char **argv)
{
	return service_toggle(ctx, argc, argv, true);
}

static int service_disable(cli_ctx *ctx, int argc, char **argv)
{
	return service_toggle(ctx, argc, argv, false);
}

/* The services as a table that fits 80 columns (all of it with --wide). */
static int print_list(const cli_ctx *ctx, const db_service *svcs, size_t n)
{
	static const table_col cols[] = {
		{"SERVICE", TABLE_LEFT, 16, 0},
		{"TEAM", TABLE_LEFT, 8, 32},
		{"ENABLED", TABLE_WHOLE, 0, 0},
	};
	table *t = NULL;
	int status = EXIT_OK;

	if (table_new(&t, cols, sizeof(cols) / sizeof(cols[0]), ctx->wide) < 0)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		table_add(t, svcs[i].name);
		table_add(t, svcs[i].team && svcs[i].team[0] ? svcs[i].team : "-");
		table_add(t, svcs[i].enabled ? "yes" : "no");
	}
	if (table_print(t, stdout) < 0)
		goto oom;
	goto out;
oom:
	cli_error(ctx, "out of memory");
	status = EXIT_RUNTIME;
out:
	table_free(t);
	return status;
}

static int service_list(cli_ctx *ctx, int argc, char **argv)
{
	pr_error err = PR_ERROR_INIT;
	db_service *svcs = NULL;
	size_t n = 0;
	db *d = NULL;
	int rc, status;

	status = parse_operands(ctx, argc, argv, no_opts, "profreg service list [--json]",
				"List the registered services.", false, NULL, NULL);
	if (status != CLI_GO)
		return status;
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = db_service_list(d, &svcs, &n, &err)) < 0) {
		db_close(d);
		return cli_fail(ctx, &err);
	}
	db_close(d);
	if (ctx->json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++) {
			char when[TIME_FMT_MAX];
			time_format(when, svcs[i].created_at_us);
			json_array_append_new(arr, json_pack("{s:I,s:s,s:s?,s:b,s:s}",
				"id", (json_int_t)svcs[i].id, "name", svcs[i].name,
				"team", svcs[i].team, "enabled", svcs[i].enabled,
				"created_at", when));
		}
		status = cli_print_json(ctx, json_pack("{s:o}", "services", arr));
	} else {
		status = print_list(ctx, svcs, n);
	}
	for (size_t i = 0; i < n; i++)
		db_service_release(&svcs[i]);
	free(svcs);
	return status;
}

static const cli_command service_cmds[] = {
	{"add", service_add, "register a service (disabled until enabled)"},
	{"set", service_set, "change a service's team"},
	{"enable", service_enable, "opt a service in to profiling"},
	{"disable", service_disable, "opt a service out"},
	{"list", service_list, "list services"},
	{NULL, NULL, NULL},
};

int cmd_service(cli_ctx *ctx, int argc, char **argv)
{
	return cli_dispatch(ctx, service_cmds, ctx->prog, argc - 1, argv + 1);
}
