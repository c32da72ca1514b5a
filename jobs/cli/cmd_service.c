/*
 * cmd_service.c: `profreg service add|import|set|enable|disable|list`.
 *
 * Profiling is opt-in: nothing is ingested or analysed for a service
 * until it has been added and enabled here.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/commands.h"
#include "jobs/catalog.h"
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
		{"enable", no_argument, 'e', NULL, "enable them too, in the same transaction"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char usage[] = "profreg service add NAME... [--team TEAM] [--enable]";
	static const char desc[] =
		"Register services, all or none in one transaction. Each starts disabled\n"
		"(with --enable, enabled): enable it to ingest and analyse its profiles.\n"
		"The team is --team, else the configuration file's. Adding a service that\n"
		"exists with the same team changes nothing but --enable (exit 0); with\n"
		"another team it is refused (exit 4): change it with 'service set'.";
	pr_error err = PR_ERROR_INIT;
	const char *team = NULL, *arg;
	catalog cat = CATALOG_INIT;
	cli_parser *p = NULL;
	bool enable = false;
	db *d = NULL;
	int c, first, rc, status;

	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		if (c == 't')
			team = arg;
		else if (c == 'e')
			enable = true;
	status = cli_end(p, c, false, 1, -1, "one or more service NAMEs", &first);
	if (status != CLI_GO)
		return status;
	for (int i = first; i < argc; i++) {
		char *file_team = NULL;
		if (!team && (rc = config_team(&file_team, ctx, argv[i], &err)) < 0)
			goto fail;
		rc = catalog_add(&cat, argv[i], team ? team : file_team, NULL, &err);
		free(file_team);
		if (rc < 0)
			goto fail;
	}
	/*
	 * Not the set-up open: a mistyped --home or an unset PROFREG_DB made
	 * a new private cluster here that no later command looked in.
	 */
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = catalog_register(d, &cat, enable, &err)) < 0)
		goto fail;
	for (size_t i = 0; i < cat.n && !ctx->quiet; i++) {
		const char *name = cat.v[i].name;
		db_service have = {0};
		if (cat.v[i].added && enable) {
			printf("added service '%s' (enabled)\n", name);
			continue;
		}
		if (cat.v[i].added) {
			printf("added service '%s' (disabled; run 'profreg service enable %s')\n",
			       name, name);
			continue;
		}
		if ((rc = db_service_get(d, &have, name, &err)) < 0)
			goto fail;
		printf("service '%s' already exists (%s); %s\n", name,
		       have.enabled ? "enabled" : "disabled",
		       enable ? "enabled it" : "nothing changed");
		db_service_release(&have);
	}
	status = EXIT_OK;
	goto out;
fail:
	status = cli_fail(ctx, &err);
out:
	catalog_release(&cat);
	db_close(d);
	return status;
}

static int service_import(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"from-config", no_argument, 'c', NULL,
		 "the configuration file's services instead of FILE"},
		{"enable", no_argument, 'e', NULL,
		 "enable every service of the catalogue, in the same transaction"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char usage[] = "profreg service import FILE [--enable]\n"
				    "       profreg service import --from-config [--enable]";
	static const char desc[] =
		"Register a catalogue of services in one transaction: all or none. FILE\n"
		"is JSON Lines, one {\"name\": \"checkout\", \"team\": \"payments\"} a line\n"
		"(\"team\" may be left out or null); '-' reads standard input. Services\n"
		"start disabled (with --enable, every one of the catalogue ends enabled);\n"
		"ones that exist with the same team are left as they are, with another\n"
		"team the import is refused (exit 4).";
	pr_error err = PR_ERROR_INIT;
	catalog cat = CATALOG_INIT;
	cli_parser *p = NULL;
	config cfg = {0};
	const char *arg;
	bool from_config = false, enable = false;
	size_t added = 0;
	db *d = NULL;
	int c, first, rc, status;

	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		if (c == 'c')
			from_config = true;
		else if (c == 'e')
			enable = true;
	status = cli_end(p, c, false, 0, 1, NULL, &first);
	if (status != CLI_GO)
		return status;
	if (from_config == (first < argc)) {
		cli_error(ctx, "give either FILE or --from-config (see --help)");
		return EXIT_USAGE;
	}
	if (from_config) {
		if ((rc = ctx_config_load(ctx, &cfg, &err)) < 0 ||
		    (rc = catalog_from_config(&cat, &cfg, &err)) < 0)
			goto fail;
	} else if ((rc = catalog_read(&cat, argv[first], &err)) < 0) {
		goto fail;
	}
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = catalog_register(d, &cat, enable, &err)) < 0)
		goto fail;
	for (size_t i = 0; i < cat.n; i++)
		added += cat.v[i].added;
	if (ctx->json) {
		json_t *names = json_array();
		for (size_t i = 0; i < cat.n; i++)
			if (cat.v[i].added)
				json_array_append_new(names, json_string(cat.v[i].name));
		status = cli_print_json(ctx, json_pack("{s:I,s:I,s:I,s:o,s:b}", "services",
			(json_int_t)cat.n, "added", (json_int_t)added, "unchanged",
			(json_int_t)(cat.n - added), "added_names", names, "enabled", enable));
		goto out;
	}
	if (!ctx->quiet)
		printf("%zu services: %zu added (%s), %zu already registered%s\n", cat.n, added,
		       enable ? "enabled" : "disabled", cat.n - added,
		       enable ? "; every one enabled" : "");
	status = EXIT_OK;
	goto out;
fail:
	status = cli_fail(ctx, &err);
out:
	config_release(&cfg);
	catalog_release(&cat);
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
		"Opt services in: their profiles are ingested and analysed. Several\n"
		"names are changed in one transaction: all, or none when one is unknown.";
	static const char disable_desc[] =
		"Opt services out: their profiles are refused and they are not analysed.\n"
		"Stored data is kept. Several names are changed in one transaction: all,\n"
		"or none when one is unknown.";
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	const char *arg;
	db *d = NULL;
	int c, first, rc, status;

	if (cli_parser_new(&p, ctx, argc, argv, no_opts,
			   enable ? "profreg service enable NAME..."
				  : "profreg service disable NAME...",
			   enable ? enable_desc : disable_desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		;
	status = cli_end(p, c, false, 1, -1, "one service NAME or more", &first);
	if (status != CLI_GO)
		return status;
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = catalog_set_enabled(d, argv + first, (size_t)(argc - first), enable,
				      &err)) < 0) {
		db_close(d);
		return cli_fail(ctx, &err);
	}
	db_close(d);
	for (int i = first; !ctx->quiet && i < argc; i++)
		printf("%s service '%s'\n", enable ? "enabled" : "disabled", argv[i]);
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
	{"add", service_add, "register services (disabled until enabled)"},
	{"import", service_import, "register a catalogue of services in one transaction"},
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
