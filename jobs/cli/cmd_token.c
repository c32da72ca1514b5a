/*
 * cmd_token.c: `profreg token create|list|revoke`, the bearer tokens of
 * the trigger API (jobs/tokens.c).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/commands.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"
#include "jobs/cli/table.h"
#include "jobs/tokens.h"
#include "common/timeutil.h"
#include "common/wipe.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

enum { O_TEAM = 2300, O_SERVICES, O_EXPIRES, O_ROLE };

#define SERVICES_MAX 256

static int create_cmd(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"team", required_argument, O_TEAM, "TEAM", "the team it acts for (required)"},
		{"services", required_argument, O_SERVICES, "A,B",
		 "only these of the team's services (default: all of them)"},
		{"expires", required_argument, O_EXPIRES, "DURATION",
		 "it stops working after DURATION (30d, 12h; default: never)"},
		{"role", required_argument, O_ROLE, "ROLE",
		 "its requests run as database role ROLE, which must see the team (default: "
		 "the server's own role)"},
		{NULL, 0, 0, NULL, NULL},
	};
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	db *d = NULL;
	const char *arg, *team = NULL, *role = NULL;
	char *list = NULL, *names[SERVICES_MAX];
	char token[TOKENS_LEN + 1] = "";
	size_t n = 0;
	int64_t expires = 0, id = 0;
	bool bad = false;
	int c, status;

	if (cli_parser_new(&p, ctx, argc, argv, opts,
			   "profreg token create --team T [--services A,B] [--expires DURATION]"
			   " [--role ROLE]",
			   "Create a bearer token for the trigger API (profreg serve). It may\n"
			   "trigger captures of the team's services (or only those named). With\n"
			   "--role, serve reads service data for it as that database role, so\n"
			   "row-level security applies (the server's login must be a member of\n"
			   "ROLE). The token is printed once: only its SHA-256 is stored.") < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		switch (c) {
		case O_TEAM: team = arg; break;
		case O_ROLE: role = arg; break;
		case O_SERVICES:
			free(list);
			list = strdup(arg);
			break;
		case O_EXPIRES:
			if (time_parse_duration(&expires, arg) < 0 || expires <= 0) {
				cli_error(ctx, "'--expires %s' is not a duration like 30d", arg);
				bad = true;
			}
			break;
		}
	}
	if ((status = cli_end(p, c, bad, 0, 0, NULL, NULL)) != CLI_GO)
		goto out;
	status = EXIT_USAGE;
	if (!team) {
		cli_error(ctx, "--team is required: a token acts for one team");
		goto out;
	}
	if (list) {
		char *save = NULL;
		for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			if (n == SERVICES_MAX) {
				cli_error(ctx, "'--services': more than %d services", SERVICES_MAX);
				goto out;
			}
			names[n++] = t;
		}
		if (!n) {
			cli_error(ctx, "'--services' names no service");
			goto out;
		}
	}
	if (ctx_db_open(ctx, &d, &err) < 0 ||
	    tokens_create(token, &id, d, team, (const char *const *)names, n,
			  expires ? time_now_us() + expires : 0, role, &err) < 0) {
		status = cli_fail(ctx, &err);
		goto out;
	}
	if (ctx->json) {
		json_t *o = json_pack("{s:I,s:s,s:s?,s:s}", "id", (json_int_t)id, "team", team,
				      "role", role, "token", token);
		status = cli_print_json(ctx, o);
	} else {
		printf("%s\n", token);
		if (!ctx->quiet)
			fprintf(stderr,
				"token %" PRId64 " for team '%s': shown once, keep it in a "
				"secret store\n",
				id, team);
		status = EXIT_OK;
	}
	status = cli_finish(ctx, status);
out:
	wipe_mem(token, sizeof(token));
	free(list);
	db_close(d);
	return status;
}

static int list_cmd(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {{NULL, 0, 0, NULL, NULL}};
	static const table_col cols[] = {
		{"ID", TABLE_RIGHT | TABLE_WHOLE, 2, 0},
		{"TEAM", 0, 4, 20},
		{"HINT", TABLE_WHOLE, 4, 0},
		{"SERVICES", 0, 8, 24},
		{"EXPIRES", TABLE_WHOLE, 7, 0},
		{"STATE", TABLE_WHOLE, 5, 0},
	};
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	db *d = NULL;
	token_info *v = NULL;
	table *t = NULL;
	size_t n = 0;
	int64_t now = time_now_us();
	const char *arg;
	int c, status;

	if (cli_parser_new(&p, ctx, argc, argv, opts, "profreg token list [--json]",
			   "List the tokens of the trigger API (never the tokens themselves).") < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		;
	if ((status = cli_end(p, c, false, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	if (ctx_db_open(ctx, &d, &err) < 0 || tokens_list(&v, &n, d, &err) < 0) {
		status = cli_fail(ctx, &err);
		goto out;
	}
	if (ctx->json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++) {
			char when[TIME_FMT_MAX] = "";
			json_t *svcs = json_array();
			for (size_t k = 0; k < v[i].nservices; k++)
				json_array_append_new(svcs, json_string(v[i].services[k]));
			if (v[i].expires_at_us)
				time_format(when, v[i].expires_at_us);
			json_array_append_new(
				arr, json_pack("{s:I,s:s,s:s?,s:s,s:o,s:s?,s:b,s:b}", "id",
					       (json_int_t)v[i].id, "team", v[i].team, "role",
					       v[i].role, "hint",
					       v[i].hint, "services", svcs, "expires",
					       v[i].expires_at_us ? when : NULL, "revoked",
					       v[i].revoked_at_us != 0, "expired",
					       v[i].expires_at_us && v[i].expires_at_us <= now));
		}
		status = cli_print_json(ctx, arr);
		goto done;
	}
	if (table_new(&t, cols, 6, ctx->wide) < 0) {
		status = EXIT_RUNTIME;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		char when[TIME_FMT_MAX] = "never";
		if (v[i].expires_at_us)
			time_format(when, v[i].expires_at_us);
		table_addf(t, "%" PRId64, v[i].id);
		table_add(t, v[i].team);
		table_add(t, v[i].hint);
		if (v[i].nservices) {
			buf b = BUF_INIT;
			for (size_t k = 0; k < v[i].nservices; k++)
				buf_printf(&b, "%s%s", k ? "," : "", v[i].services[k]);
			table_add(t, b.ptr ? b.ptr : "");
			buf_release(&b);
		} else {
			table_add(t, "(the team's)");
		}
		table_add(t, when);
		table_add(t, v[i].revoked_at_us                                ? "revoked"
			     : v[i].expires_at_us && v[i].expires_at_us <= now ? "expired"
									       : "valid");
	}
	status = table_print(t, stdout) < 0 ? EXIT_RUNTIME : EXIT_OK;
done:
	status = cli_finish(ctx, status);
out:
	table_free(t);
	tokens_list_free(v, n);
	db_close(d);
	return status;
}

static int revoke_cmd(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {{NULL, 0, 0, NULL, NULL}};
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	db *d = NULL;
	unsigned long long id = 0;
	const char *arg;
	int c, first, status;

	if (cli_parser_new(&p, ctx, argc, argv, opts, "profreg token revoke ID",
			   "Revoke token ID: it stops working at once (audited).") < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		;
	if ((status = cli_end(p, c, false, 1, 1, "one token ID", &first)) != CLI_GO)
		return status;
	if (cli_parse_u64(ctx, "ID", argv[first], 1, INT64_MAX, &id) < 0)
		return EXIT_USAGE;
	if (ctx_db_open(ctx, &d, &err) < 0 || tokens_revoke(d, (int64_t)id, &err) < 0) {
		status = cli_fail(ctx, &err);
		goto out;
	}
	if (ctx->json)
		status = cli_print_json(ctx,
					json_pack("{s:I,s:b}", "id", (json_int_t)id, "revoked", 1));
	else
		status = EXIT_OK;
	if (!ctx->json && !ctx->quiet)
		printf("token %llu revoked\n", id);
	status = cli_finish(ctx, status);
out:
	db_close(d);
	return status;
}

int cmd_token(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_command cmds[] = {
		{"create", create_cmd, "create a token (printed once)"},
		{"list", list_cmd, "list tokens"},
		{"revoke", revoke_cmd, "revoke a token"},
		{NULL, NULL, NULL},
	};
	return cli_dispatch(ctx, cmds, ctx->prog, argc - 1, argv + 1);
}
