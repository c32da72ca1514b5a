/*
 * cmd_access.c: `profreg access grant|revoke|list` and `profreg audit
 * list`: who may see which team's services, and who read what.
 *
 * The database enforces the grants (row-level security, migration 017);
 * these commands only record them and give the roles their table
 * privileges. Creating a login role is the DBA's (CREATE ROLE ... LOGIN).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/commands.h"
#include "jobs/access.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"
#include "jobs/cli/table.h"
#include "common/timeutil.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

enum { O_TEAM = 't', O_HEAP = 256, O_ADMIN, O_SINCE, O_ROLE, O_CAPTURE, O_LIMIT };

static int access_grant_cmd(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"team", required_argument, O_TEAM, "TEAM",
		 "the team whose services the role sees"},
		{"heap", no_argument, O_HEAP, NULL,
		 "may read the team's heap and alloc profiles whole"},
		{"admin", no_argument, O_ADMIN, NULL,
		 "every service, reads and writes (job roles: nightly, workers, serve)"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char usage[] = "profreg access grant ROLE --team TEAM [--heap] [--admin]";
	static const char desc[] =
		"Let a database role see the services of a team (row-level security), with\n"
		"--heap read heap and alloc profiles whole, with --admin see and write\n"
		"everything. Grants the role its table privileges. The role must exist:\n"
		"CREATE ROLE name LOGIN is the DBA's. Run as the schema owner. Audited.";
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	const char *arg, *team = NULL;
	bool heap = false, admin = false;
	db *d = NULL;
	int c, first, rc, status;

	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		if (c == O_TEAM)
			team = arg;
		else if (c == O_HEAP)
			heap = true;
		else if (c == O_ADMIN)
			admin = true;
	}
	if ((status = cli_end(p, c, false, 1, 1, "one ROLE", &first)) != CLI_GO)
		return status;
	if ((!team || !*team) && !admin) {
		cli_error(ctx, "give --team TEAM (or --admin; see --help)");
		return EXIT_USAGE;
	}
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = access_grant(d, argv[first], team, heap, admin, &err)) < 0) {
		db_close(d);
		return cli_fail(ctx, &err);
	}
	db_close(d);
	if (!ctx->quiet) {
		printf("role '");
		cli_put_safe(stdout, argv[first], 0);
		printf("' sees ");
		if (team && *team) {
			printf("team '");
			cli_put_safe(stdout, team, 0);
			printf("'%s%s\n", heap ? ", heap profiles whole" : "",
			       admin ? "; admin: every service" : "");
		} else {
			printf("every service (admin)\n");
		}
	}
	return cli_finish(ctx, EXIT_OK);
}

static int access_revoke_cmd(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"team", required_argument, O_TEAM, "TEAM",
		 "only this team's grant (default: all)"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char usage[] = "profreg access revoke ROLE [--team TEAM]";
	static const char desc[] =
		"Take back a role's grant for a team, or every grant it has. A role with no\n"
		"grant left loses its table privileges. Audited.";
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	const char *arg, *team = NULL;
	size_t removed = 0;
	db *d = NULL;
	int c, first, rc, status;

	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		if (c == O_TEAM)
			team = arg;
	if ((status = cli_end(p, c, false, 1, 1, "one ROLE", &first)) != CLI_GO)
		return status;
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = access_revoke(d, argv[first], team, &removed, &err)) < 0) {
		db_close(d);
		return cli_fail(ctx, &err);
	}
	db_close(d);
	if (!ctx->quiet) {
		printf("removed %zu grant%s of role '", removed, removed == 1 ? "" : "s");
		cli_put_safe(stdout, argv[first], 0);
		printf("'\n");
	}
	return cli_finish(ctx, EXIT_OK);
}

static int print_grants(const cli_ctx *ctx, const access_grant_row *g, size_t n)
{
	static const table_col cols[] = {
		{"ROLE", TABLE_LEFT, 12, 0},
		{"TEAM", TABLE_LEFT, 12, 0},
		{"HEAP", TABLE_WHOLE, 0, 0},
		{"ADMIN", TABLE_WHOLE, 0, 0},
		{"GRANTED", TABLE_WHOLE, 0, 0},
	};
	table *t = NULL;
	int status = EXIT_OK;

	if (table_new(&t, cols, sizeof(cols) / sizeof(cols[0]), ctx->wide) < 0)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		char when[TIME_FMT_MAX];
		time_format(when, g[i].granted_at_us);
		when[10] = '\0';
		table_addf(t, "%s%s", g[i].role, g[i].role_exists ? "" : " (gone)");
		table_add(t, g[i].team[0] ? g[i].team : "*");
		table_add(t, g[i].heap || g[i].admin ? "yes" : "no");
		table_add(t, g[i].admin ? "yes" : "no");
		table_add(t, when);
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

static int access_list_cmd(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {{NULL, 0, 0, NULL, NULL}};
	static const char usage[] = "profreg access list [--json]";
	static const char desc[] =
		"List the grants: which role sees which team's services, with heap and admin.";
	pr_error err = PR_ERROR_INIT;
	access_grant_row *g = NULL;
	cli_parser *p = NULL;
	const char *arg;
	size_t n = 0;
	db *d = NULL;
	int c, rc, status;

	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		;
	if ((status = cli_end(p, c, false, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 || (rc = access_list(&g, &n, d, &err)) < 0) {
		db_close(d);
		return cli_fail(ctx, &err);
	}
	db_close(d);
	if (ctx->json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++) {
			char when[TIME_FMT_MAX];
			time_format(when, g[i].granted_at_us);
			json_array_append_new(arr, json_pack("{s:s,s:s?,s:b,s:b,s:b,s:s,s:s}",
				"role", g[i].role, "team", g[i].team[0] ? g[i].team : NULL,
				"heap", g[i].heap || g[i].admin, "admin", g[i].admin,
				"role_exists", g[i].role_exists, "granted_at", when,
				"granted_by", g[i].granted_by));
		}
		status = cli_print_json(ctx, json_pack("{s:o}", "grants", arr));
	} else {
		status = print_grants(ctx, g, n);
	}
	free(g);
	return cli_finish(ctx, status);
}

int cmd_access(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_command cmds[] = {
		{"grant", access_grant_cmd, "let a role see a team's services (--heap, --admin)"},
		{"revoke", access_revoke_cmd, "take back a role's grants"},
		{"list", access_list_cmd, "list the grants"},
		{NULL, NULL, NULL},
	};
	return cli_dispatch(ctx, cmds, ctx->prog, argc - 1, argv + 1);
}

/* ---- audit ---- */

static json_t *audit_json(const access_audit_row *r)
{
	char when[TIME_FMT_MAX];
	json_t *ids = json_array(), *detail = NULL;

	time_format(when, r->at_us);
	for (size_t i = 0; i < r->ncaptures; i++)
		json_array_append_new(ids, json_integer((json_int_t)r->capture_ids[i]));
	if (r->detail_json)
		detail = json_loads(r->detail_json, 0, NULL);
	return json_pack("{s:I,s:s,s:s?,s:s?,s:s?,s:s?,s:s?,s:s?,s:s?,s:s?,s:o,s:o}",
		"id", (json_int_t)r->id, "at", when, "db_role", r->db_role,
		"session_role", r->session_role, "os_user", r->actor, "command", r->command,
		"action", r->action, "object", r->object, "client_addr", r->client_addr,
		"client_host", r->client_host, "capture_ids", ids,
		"detail", detail ? detail : json_object());
}

static int print_audit(const cli_ctx *ctx, const access_audit_row *r, size_t n)
{
	static const table_col cols[] = {
		{"TIME", TABLE_WHOLE, 0, 0},
		{"ROLE", TABLE_LEFT, 10, 0},
		{"USER", TABLE_LEFT, 8, 0},
		{"ACTION", TABLE_LEFT, 14, 0},
		{"OBJECT", TABLE_LEFT, 14, 0},
		{"RESULT", TABLE_WHOLE, 0, 0},
	};
	table *t = NULL;
	int status = EXIT_OK;

	if (table_new(&t, cols, sizeof(cols) / sizeof(cols[0]), ctx->wide) < 0)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		char when[TIME_FMT_MAX];
		const char *refused = r[i].detail_json ? strstr(r[i].detail_json, "\"refused\"")
						       : NULL;
		time_format(when, r[i].at_us);
		when[19] = '\0';
		table_add(t, when);
		table_add(t, r[i].db_role ? r[i].db_role : "-");
		table_add(t, r[i].actor ? r[i].actor : "-");
		table_add(t, r[i].action ? r[i].action : "-");
		table_add(t, r[i].object ? r[i].object : "-");
		table_add(t, refused ? "refused" : "ok");
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

static int audit_list_cmd(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"since", required_argument, O_SINCE, "TIME",
		 "rows from TIME (ISO 8601, or 24h, 7d)"},
		{"role", required_argument, O_ROLE, "ROLE", "rows for this database role"},
		{"capture", required_argument, O_CAPTURE, "ID", "rows that name this capture"},
		{"limit", required_argument, O_LIMIT, "N", "at most N rows (default 1000)"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char usage[] =
		"profreg audit list [--since T] [--role R] [--capture ID] [--json]";
	static const char desc[] =
		"List audit rows, newest first: who (database role, OS user), what (action,\n"
		"captures), when, from where. A role that is not an admin sees its own rows.";
	pr_error err = PR_ERROR_INIT;
	access_audit_filter f = {0};
	access_audit_row *rows = NULL;
	cli_parser *p = NULL;
	const char *arg;
	unsigned long long cap = 0, lim = 0;
	size_t n = 0;
	db *d = NULL;
	bool bad = false;
	int c, rc, status;

	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		switch (c) {
		case O_SINCE:
			if (time_parse_since(&f.since_us, arg, time_now_us()) < 0) {
				cli_error(ctx, "'%s' is not a time (ISO 8601) or a duration "
					  "(24h, 7d)", arg);
				bad = true;
			}
			break;
		case O_ROLE: f.role = arg; break;
		case O_CAPTURE:
			if (cli_parse_u64(ctx, "capture", arg, 1, INT64_MAX, &cap) < 0)
				bad = true;
			break;
		case O_LIMIT:
			if (cli_parse_u64(ctx, "limit", arg, 1, 1000000, &lim) < 0)
				bad = true;
			break;
		}
	}
	if ((status = cli_end(p, c, bad, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	f.capture_id = (int64_t)cap;
	f.limit = (size_t)lim;
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = access_audit_list(&rows, &n, d, &f, &err)) < 0) {
		db_close(d);
		return cli_fail(ctx, &err);
	}
	db_close(d);
	if (ctx->json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(arr, audit_json(&rows[i]));
		status = cli_print_json(ctx, json_pack("{s:o}", "audit", arr));
	} else {
		status = print_audit(ctx, rows, n);
	}
	access_audit_rows_free(rows, n);
	return cli_finish(ctx, status);
}

int cmd_audit(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_command cmds[] = {
		{"list", audit_list_cmd, "list who read or changed what"},
		{NULL, NULL, NULL},
	};
	return cli_dispatch(ctx, cmds, ctx->prog, argc - 1, argv + 1);
}
