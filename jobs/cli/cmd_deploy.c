/*
 * cmd_deploy.c: `profreg deploy list|delete`: the deploy history that
 * commit ranges and suspect commits are read from.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/commands.h"
#include "jobs/cli/context.h"
#include "jobs/deploys.h"
#include "jobs/cli/exitcode.h"
#include "common/timeutil.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

enum { O_SERVICE = 1700, O_LIMIT };

static int deploy_list_cmd(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"service", required_argument, O_SERVICE, "NAME", "only this service's deploys"},
		{"limit", required_argument, O_LIMIT, "N", "at most N deploys (default 50)"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char usage[] = "profreg deploy list [--service S] [--limit N] [--json]";
	static const char desc[] =
		"List recorded deploys, newest first by deploy time: each deploy's commit\n"
		"and the commit its range starts from (the deploy before it).";
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	db *d = NULL;
	db_service svc = {0};
	deploy *deps = NULL;
	size_t n = 0;
	const char *arg, *service = NULL;
	unsigned long long limit = 50;
	bool bad = false;
	int c, rc, status;

	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		if (c == O_SERVICE)
			service = arg;
		else if (c == O_LIMIT && cli_parse_u64(ctx, "limit", arg, 1, 100000, &limit) < 0)
			bad = true;
	}
	if ((status = cli_end(p, c, bad, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (service && (rc = db_service_get(d, &svc, service, &err)) < 0) ||
	    (rc = deploy_list(&deps, &n, d, svc.id, limit, &err)) < 0)
		goto fail;
	if (ctx->json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++) {
			char when[TIME_FMT_MAX];
			time_format(when, deps[i].deployed_at_us);
			json_array_append_new(arr, json_pack("{s:I,s:s,s:s,s:s?,s:s?,s:s}",
				"id", (json_int_t)deps[i].id, "service", deps[i].service,
				"release", deps[i].release,
				"commit", deps[i].commit_sha[0] ? deps[i].commit_sha : NULL,
				"previous_commit",
				deps[i].previous_sha[0] ? deps[i].previous_sha : NULL,
				"deployed_at", when));
		}
		status = cli_print_json(ctx, json_pack("{s:o}", "deploys", arr));
	} else {
		printf("%-6s %-20s %-20s %-12s %-12s %s\n", "ID", "DEPLOYED", "SERVICE", "COMMIT",
		       "FROM", "RELEASE");
		for (size_t i = 0; i < n; i++) {
			const deploy *dep = &deps[i];
			char when[TIME_FMT_MAX];
			time_format(when, dep->deployed_at_us - dep->deployed_at_us % 1000000);
			printf("%-6" PRId64 " %-20s ", dep->id, when);
			cli_put_safe(stdout, dep->service, 20);
			printf(" %-12.12s %-12.12s ", dep->commit_sha[0] ? dep->commit_sha : "-",
			       dep->previous_sha[0] ? dep->previous_sha : "-");
			cli_put_safe(stdout, dep->release, 0);
			putchar('\n');
		}
		status = EXIT_OK;
	}
	goto out;
fail:
	status = cli_fail(ctx, &err);
out:
	free(deps);
	db_service_release(&svc);
	db_close(d);
	return status;
}

static int deploy_delete_cmd(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {{NULL, 0, 0, NULL, NULL}};
	static const char usage[] = "profreg deploy delete ID";
	static const char desc[] =
		"Delete a deploy recorded by mistake (a wrong --release or --commit), so that\n"
		"it never starts another deploy's commit range. The audit log keeps it.";
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	db *d = NULL;
	const char *arg;
	unsigned long long id = 0;
	int c, first, rc, status;

	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		;
	if ((status = cli_end(p, c, false, 1, 1, "one deploy ID", &first)) != CLI_GO)
		return status;
	if (cli_parse_u64(ctx, "ID", argv[first], 1, INT64_MAX, &id) < 0)
		return EXIT_USAGE;
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = deploy_delete(d, (int64_t)id, &err)) < 0) {
		db_close(d);
		return cli_fail(ctx, &err);
	}
	db_close(d);
	if (!ctx->quiet)
		printf("deleted deploy %llu\n", id);
	return EXIT_OK;
}

int cmd_deploy(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_command cmds[] = {
		{"list", deploy_list_cmd, "list recorded deploys"},
		{"delete", deploy_delete_cmd, "delete a deploy recorded by mistake (audited)"},
		{NULL, NULL, NULL},
	};
	return cli_dispatch(ctx, cmds, ctx->prog, argc - 1, argv + 1);
}
