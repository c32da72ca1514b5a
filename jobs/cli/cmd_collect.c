/*
 * cmd_collect.c: `profreg collect` (the job is jobs/collect.c).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/commands.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"
#include "jobs/cli/table.h"
#include "jobs/collect.h"
#include "common/timeutil.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

enum { O_SERVICE = 2100, O_SINCE, O_UNTIL, O_DRY };

#define J_INT(o, k) ((long long)json_integer_value(json_object_get((o), (k))))

static int print_plan(const cli_ctx *ctx, const json_t *plan)
{
	static const table_col cols[] = {
		{"SERVICE", 0, 8, 24},
		{"SOURCE", TABLE_WHOLE, 0, 0},
		{"TARGET", 0, 16, 0},
		{"TYPE", TABLE_WHOLE, 0, 0},
		{"WINDOW START", TABLE_WHOLE, 0, 0},
		{"REQUESTS", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
	};
	table *t = NULL;
	const json_t *v;
	size_t i, total = 0;
	int status = EXIT_OK;

	if (table_new(&t, cols, sizeof(cols) / sizeof(cols[0]), ctx->wide) < 0)
		goto oom;
	json_array_foreach(plan, i, v)
	{
		table_add(t, json_string_value(json_object_get(v, "service")));
		table_add(t, json_string_value(json_object_get(v, "source")));
		table_add(t, json_string_value(json_object_get(v, "target")));
		table_add(t, json_string_value(json_object_get(v, "type")));
		table_add(t, json_string_value(json_object_get(v, "start")));
		table_addf(t, "%lld", J_INT(v, "requests"));
		total += (size_t)J_INT(v, "requests");
	}
	printf("dry run: nobody contacted, nothing stored; %zu request(s) planned\n", total);
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

static void print_result(const collect_result *r)
{
	char from[TIME_FMT_MAX], to[TIME_FMT_MAX];
	const char *name;
	json_t *v;

	time_format(from, r->since_us);
	time_format(to, r->until_us);
	printf("collect %s to %s: %zu stored, %zu already stored, ", from, to, r->stored,
	       r->already);
	/* Only when there are some: the line stays as it was for every other run. */
	if (r->deleted)
		printf("%zu deleted by retention (not stored again), ", r->deleted);
	printf("%zu failed; %zu requests\n", r->failed, r->requests);
	json_object_foreach(r->services, name, v)
	{
		const char *skipped = json_string_value(json_object_get(v, "skipped"));
		json_t *f;
		size_t i;
		printf("  ");
		cli_put_safe(stdout, name, 24);
		if (skipped) {
			printf(" skipped: %s\n", skipped);
			continue;
		}
		printf(" %lld stored, %lld already stored, ", J_INT(v, "stored"),
		       J_INT(v, "already_stored"));
		if (J_INT(v, "deleted_by_retention"))
			printf("%lld deleted by retention, ", J_INT(v, "deleted_by_retention"));
		printf("%lld collected before, %lld empty, %lld deferred, %lld failed\n",
		       J_INT(v, "already_collected"), J_INT(v, "empty"), J_INT(v, "deferred"),
		       J_INT(v, "failed"));
		json_array_foreach(json_object_get(v, "failures"), i, f)
		{
			printf("    failed: ");
			cli_put_safe(stdout, json_string_value(json_object_get(f, "reason")), 0);
			putchar('\n');
		}
		json_array_foreach(json_object_get(v, "waiting"), i, f)
		{
			printf("    waiting: ");
			cli_put_safe(stdout, json_string_value(json_object_get(f, "reason")), 0);
			putchar('\n');
		}
	}
}

int cmd_collect(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"service", required_argument, O_SERVICE, "NAME", "only this service (repeatable)"},
		{"since", required_argument, O_SINCE, "TIME",
		 "start of the Pyroscope/Parca window (default: until - 24h)"},
		{"until", required_argument, O_UNTIL, "TIME", "end of the window (default now)"},
		{"dry-run", no_argument, O_DRY, NULL,
		 "print the plan; contact no one, store nothing"},
		{NULL, 0, 0, NULL, NULL},
	};
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	config cfg;
	db *d = NULL;
	blob_store *bs = NULL;
	const char *arg, *only[64], *since_s = NULL, *until_s = NULL;
	collect_opts o;
	collect_result r;
	bool bad = false;
	int c, rc, status;

	memset(&o, 0, sizeof(o));
	memset(&r, 0, sizeof(r));
	memset(&cfg, 0, sizeof(cfg));
	if (cli_parser_new(
		    &p, ctx, argc, argv, opts,
		    "profreg collect [--service S]... [--since T --until T] [--dry-run] [--json]",
		    "Pull new captures from every source of every enabled service (drop\n"
		    "folders, Go pprof endpoints, Pyroscope, Parca, object-store drops) and\n"
		    "ingest them. Pyroscope and Parca windows are cut into slots, one capture\n"
		    "each; a pprof endpoint gives one capture per target and type in the\n"
		    "current slot; an object-store drop is an object with its .json sidecar.\n"
		    "Slots and objects collected before are not asked for again. Exit 0 when\n"
		    "every target answered; 3 when one failed (each is named with its reason)\n"
		    "or the run failed; 4 for an unknown or disabled service.") < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		switch (c) {
		case O_SERVICE:
			if (o.nonly == sizeof(only) / sizeof(only[0])) {
				cli_error(ctx, "at most %zu --service options", o.nonly);
				bad = true;
				break;
			}
			only[o.nonly++] = arg;
			break;
		case O_SINCE: since_s = arg; break;
		case O_UNTIL: until_s = arg; break;
		case O_DRY: o.dry_run = true; break;
		}
	}
	if ((status = cli_end(p, c, bad, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	o.only = only;
	if (until_s && time_parse_since(&o.until_us, until_s, time_now_us()) < 0) {
		cli_error(ctx, "'--until %s' is not an ISO 8601 time or a duration", until_s);
		return EXIT_USAGE;
	}
	if (since_s && time_parse_since(&o.since_us, since_s, time_now_us()) < 0) {
		cli_error(ctx, "'--since %s' is not an ISO 8601 time or a duration", since_s);
		return EXIT_USAGE;
	}
	if (o.since_us && o.until_us && o.since_us >= o.until_us) {
		cli_error(ctx, "--since must be before --until");
		return EXIT_USAGE;
	}
	if ((rc = ctx_config_load(ctx, &cfg, &err)) < 0 || (rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = ctx_blobs_open(ctx, &bs, &err)) < 0)
		goto fail;
	{
		job_env env = {&cfg, d, bs, ctx->home, NULL};
		if ((rc = collect_run(&r, &env, &o, &err)) < 0)
			goto fail;
	}
	for (size_t i = 0; i < r.notes.n; i++)
		cli_warn(ctx, "%s", r.notes.lines[i]);
	if (ctx->json) {
		json_t *doc = json_pack(
			"{s:i,s:I,s:I,s:I,s:I,s:I,s:O}", "schema_version", 1, "run_id",
			(json_int_t)r.run_id, "stored", (json_int_t)r.stored, "already_stored",
			(json_int_t)r.already, "deleted_by_retention", (json_int_t)r.deleted,
			"failed", (json_int_t)r.failed, "services", r.services);
		if (doc && r.plan)
			json_object_set(doc, "plan", r.plan);
		status = cli_print_json(ctx, doc);
	} else if (o.dry_run) {
		status = print_plan(ctx, r.plan);
	} else {
		if (!ctx->quiet)
			print_result(&r);
		status = EXIT_OK;
	}
	/* What cron mails under --quiet: every target that failed, one line each. */
	if (status == EXIT_OK && r.failed) {
		const char *name;
		json_t *v, *f;
		size_t i;
		json_object_foreach(r.services, name, v)
			json_array_foreach(json_object_get(v, "failures"), i, f)
				cli_error(ctx, "service '%s': %s", name,
					  json_string_value(json_object_get(f, "reason")));
		status = EXIT_RUNTIME;
	}
	goto out;
fail:
	status = cli_fail(ctx, &err);
out:
	collect_result_release(&r);
	blob_store_free(bs);
	db_close(d);
	config_release(&cfg);
	return status;
}
