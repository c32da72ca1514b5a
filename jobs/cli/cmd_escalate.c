/*
 * cmd_escalate.c: `profreg escalate` (the job is jobs/escalate.c).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/commands.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"
#include "jobs/escalate.h"
#include "common/timeutil.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

enum { O_SERVICE = 1500 };

static void print_result(const escalate_result *r)
{
	char when[TIME_FMT_MAX];
	const char *name;
	json_t *v;
	size_t i;

	time_format(when, r->at_us);
	printf("escalate at %s: %zu services, %zu hosts read, %zu failed; %zu escalated, "
	       "%zu raised, %zu lowered, %zu de-escalated, %zu ended, %zu captures queued, "
	       "%zu refused, %zu skipped\n",
	       when, r->services, r->hosts, r->failed, r->escalated, r->raised, r->lowered,
	       r->deescalated, r->ended, r->captures, r->refused, r->skipped);
	json_object_foreach(r->by_service, name, v)
	{
		const char *why = json_string_value(json_object_get(v, "reason"));
		printf("  ");
		cli_put_safe(stdout, name, 24);
		printf(" %s", json_string_value(json_object_get(v, "status")));
		if (why) {
			printf(": ");
			cli_put_safe(stdout, why, 0);
		}
		putchar('\n');
	}
	json_array_foreach(r->decisions, i, v)
	{
		printf("  ");
		cli_put_safe(stdout, json_string_value(json_object_get(v, "service")), 24);
		putchar(' ');
		cli_put_safe(stdout, json_string_value(json_object_get(v, "host")), 40);
		printf(" %s %" JSON_INTEGER_FORMAT " -> %" JSON_INTEGER_FORMAT ": ",
		       json_string_value(json_object_get(v, "action")),
		       json_integer_value(json_object_get(v, "from")),
		       json_integer_value(json_object_get(v, "to")));
		cli_put_safe(stdout, json_string_value(json_object_get(v, "why")), 0);
		putchar('\n');
	}
}

static int print_json(const cli_ctx *ctx, const escalate_result *r)
{
	char when[TIME_FMT_MAX];

	time_format(when, r->at_us);
	return cli_print_json(
		ctx,
		json_pack("{s:i,s:s,s:I,s:s,s:{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I},"
			  "s:O,s:O}",
			  "schema_version", 1, "status", r->status, "run_id", (json_int_t)r->run_id,
			  "at", when, "counts", "services", (json_int_t)r->services, "failed",
			  (json_int_t)r->failed, "hosts", (json_int_t)r->hosts, "samples",
			  (json_int_t)r->samples, "escalated", (json_int_t)r->escalated, "raised",
			  (json_int_t)r->raised, "lowered", (json_int_t)r->lowered, "deescalated",
			  (json_int_t)r->deescalated, "ended", (json_int_t)r->ended, "captures",
			  (json_int_t)r->captures, "refused", (json_int_t)r->refused, "skipped",
			  (json_int_t)r->skipped, "services", r->by_service, "decisions",
			  r->decisions));
}

int cmd_escalate(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"service", required_argument, O_SERVICE, "NAME", "only this service (repeatable)"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char usage[] = "profreg escalate [--service S]... [--json]";
	static const char desc[] =
		"Read each configured service's signals (PromQL, config section \"escalate\")\n"
		"from Prometheus, compare each host's value with its own band (rolling\n"
		"median and MAD of its stored samples), and move hosts between escalation\n"
		"levels: 1 (longer, more frequent captures), 2 (back-to-back CPU and heap\n"
		"for a short window), back to 0 after a cooldown inside the band or at the\n"
		"session's hard expiry. Sessions and captures are admitted under the\n"
		"\"serve\" safeguards (caps, expiry, re-escalation window) and executed by\n"
		"`profreg serve`; hosts above the load or memory ceiling are skipped.\n"
		"Meant for a one-minute timer. Exit 0 when every service was read, 3 when\n"
		"one failed (Prometheus unreachable, a refused answer) or the database did.";
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	config cfg;
	db *d = NULL;
	const char *arg, *only[64];
	escalate_opts o;
	escalate_result r;
	bool bad = false;
	int c, rc, status;

	memset(&o, 0, sizeof(o));
	memset(&r, 0, sizeof(r));
	memset(&cfg, 0, sizeof(cfg));
	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		if (c != O_SERVICE)
			continue;
		if (o.nonly == sizeof(only) / sizeof(only[0])) {
			cli_error(ctx, "at most %zu --service options", o.nonly);
			bad = true;
			continue;
		}
		only[o.nonly++] = arg;
	}
	if ((status = cli_end(p, c, bad, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	o.only = only;
	if ((rc = ctx_config_load(ctx, &cfg, &err)) < 0 || (rc = ctx_db_open(ctx, &d, &err)) < 0)
		goto fail;
	{
		job_env env = {&cfg, d, NULL, ctx->home, NULL};
		if ((rc = escalate_run(&r, &env, &o, &err)) < 0)
			goto fail;
	}
	for (size_t i = 0; i < r.notes.n; i++)
		cli_warn(ctx, "%s", r.notes.lines[i]);
	if (ctx->json)
		status = print_json(ctx, &r);
	else {
		if (!ctx->quiet)
			print_result(&r);
		status = EXIT_OK;
	}
	if (strcmp(r.status, "failed") == 0) {
		const char *name;
		json_t *v;
		json_object_foreach(r.by_service, name,
				    v) if (strcmp(json_string_value(json_object_get(v, "status")),
						  "failed") == 0)
			cli_error(ctx, "service '%s' failed: %s", name,
				  json_string_value(json_object_get(v, "reason")));
		status = EXIT_RUNTIME;
	}
	goto out;
fail:
	status = cli_fail(ctx, &err);
out:
	escalate_result_release(&r);
	db_close(d);
	config_release(&cfg);
	return status;
}
