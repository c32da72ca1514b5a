/*
 * cmd_worker.c: `profreg worker` (the loop is jobs/worker.c) and
 * `profreg tasks` (the tasks of a night spread over workers).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/commands.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"
#include "jobs/cli/table.h"
#include "jobs/worker.h"

#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { O_ONCE = 1500, O_IDLE, O_ID, O_RUN };

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void print_task(const tasks_worked *t, void *arg)
{
	const cli_ctx *ctx = arg;

	if (ctx->quiet && strcmp(t->outcome, "done") == 0)
		return;
	printf("task %" PRId64 " (", t->task_id);
	cli_put_safe(stdout, t->service, 0);
	printf("): %s", t->outcome);
	if (t->error[0]) {
		printf(": ");
		cli_put_safe(stdout, t->error, 0);
	}
	putchar('\n');
	fflush(stdout);
}

static void print_db(const pr_error *why, bool back, double waited_s, void *arg)
{
	const cli_ctx *ctx = arg;

	if (back)
		cli_warn(ctx, "connected to the database again after %.1f s", waited_s);
	else
		cli_warn(ctx, "lost the database, connecting again: %s", why->msg);
}

int cmd_worker(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"once", no_argument, O_ONCE, NULL, "work at most one task, then exit"},
		{"idle-exit", required_argument, O_IDLE, "SECONDS",
		 "exit after SECONDS with nothing to claim (default: never)"},
		{"id", required_argument, O_ID, "NAME", "this worker's name (default host:pid)"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char usage[] = "profreg worker [--once] [--idle-exit S] [--id NAME]";
	static const char desc[] =
		"Work the tasks of nightly runs spread over machines (nightly --workers, or\n"
		"\"workers\": {\"enabled\": true} in the config): claim one service's night\n"
		"at a time from the shared database (collect, ingest, analyse), keep its\n"
		"lease while working, record the result for the coordinating nightly.\n"
		"Use the coordinator's configuration file, database and blob store.\n"
		"SIGTERM or SIGINT: finish the task begun, then exit 0. A database that\n"
		"drops the worker (a restart, a failover) is connected to again for up to\n"
		"workers.reconnect_s seconds (300); exit 3 when it stays away or fails.";
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	config cfg;
	db *d = NULL, *lease_db = NULL;
	blob_store *bs = NULL;
	const char *arg, *id = NULL;
	char name[192];
	unsigned long long idle = 0;
	worker_opts o;
	worker_result r;
	struct sigaction sa;
	bool bad = false;
	int c, rc, status;

	memset(&o, 0, sizeof(o));
	memset(&cfg, 0, sizeof(cfg));
	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		switch (c) {
		case O_ONCE: o.once = true; break;
		case O_IDLE:
			if (cli_parse_u64(ctx, "idle-exit", arg, 1, 7 * 86400, &idle) < 0)
				bad = true;
			break;
		case O_ID:
			if (!*arg || strlen(arg) > 128) {
				cli_error(ctx, "'--id' must be 1 to 128 characters");
				bad = true;
			}
			id = arg;
			break;
		}
	}
	if ((status = cli_end(p, c, bad, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	if (!id) {
		tasks_worker_name(name, sizeof(name));
		id = name;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if ((rc = ctx_config_load(ctx, &cfg, &err)) < 0 || (rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = ctx_db_open(ctx, &lease_db, &err)) < 0 ||
	    (rc = ctx_blobs_open(ctx, &bs, &err)) < 0)
		goto fail;
	o.w.id = id;
	o.w.lease_s = cfg.workers.lease_s;
	o.w.max_attempts = (int)cfg.workers.max_attempts;
	o.w.max_task_s = cfg.workers.task_timeout_s;
	o.w.lease_db = lease_db;
	o.w.stop = &stop_requested;
	o.idle_exit_s = (double)idle;
	o.poll_s = cfg.workers.poll_ms / 1000.0;
	o.on_task = print_task;
	o.reconnect_s = cfg.workers.reconnect_s;
	o.on_db = print_db;
	o.ctx = ctx;
	{
		job_env env = {&cfg, d, bs, ctx->home, NULL};
		if ((rc = worker_run(&r, &env, &o, &err)) < 0)
			goto fail;
	}
	if (!ctx->quiet)
		printf("worker %s: %zu done, %zu failed, %zu given back, %zu deferred, "
		       "%zu lost%s%s\n", id, r.done, r.failed, r.released, r.deferred, r.lost,
		       r.reconnects ? ", the database lost and found again" : "",
		       r.stopped ? " (stopped)" : "");
	status = EXIT_OK;
	goto out;
fail:
	status = cli_fail(ctx, &err);
	if (err.code != PR_EUSAGE)
		status = EXIT_RUNTIME;
out:
	blob_store_free(bs);
	db_close(lease_db);
	db_close(d);
	config_release(&cfg);
	return status;
}

int cmd_tasks(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"run", required_argument, O_RUN, "ID", "this run's tasks (default: the latest)"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const table_col cols[] = {
		{"ID", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"RUN", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"SERVICE", 0, 0, 0},
		{"STATE", TABLE_WHOLE, 0, 0},
		{"TRIES", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"WORKER", 0, 0, 0},
	};
	static const char usage[] = "profreg tasks [--run ID] [--json]";
	static const char desc[] =
		"List the tasks of a nightly run spread over workers: each service's state\n"
		"(queued, leased, done, failed), its worker and how many times it was claimed.";
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	db *d = NULL;
	json_t *tasks = NULL, *v;
	table *t = NULL;
	const char *arg;
	unsigned long long run = 0;
	bool bad = false;
	size_t i;
	int c, status;

	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		if (c == O_RUN && cli_parse_u64(ctx, "run", arg, 1, INT64_MAX, &run) < 0)
			bad = true;
	if ((status = cli_end(p, c, bad, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	if (ctx_db_open(ctx, &d, &err) < 0 || tasks_list(&tasks, d, (int64_t)run, &err) < 0) {
		db_close(d);
		return cli_fail(ctx, &err);
	}
	db_close(d);
	if (ctx->json)
		return cli_print_json(ctx, json_pack("{s:o}", "tasks", tasks));
	if (table_new(&t, cols, sizeof(cols) / sizeof(cols[0]), ctx->wide) < 0)
		goto oom;
	json_array_foreach(tasks, i, v) {
		const char *w = json_string_value(json_object_get(v, "worker"));
		table_addf(t, "%" JSON_INTEGER_FORMAT,
			   json_integer_value(json_object_get(v, "id")));
		table_addf(t, "%" JSON_INTEGER_FORMAT,
			   json_integer_value(json_object_get(v, "run_id")));
		table_add(t, json_string_value(json_object_get(v, "service")));
		table_add(t, json_string_value(json_object_get(v, "state")));
		table_addf(t, "%" JSON_INTEGER_FORMAT,
			   json_integer_value(json_object_get(v, "attempts")));
		table_add(t, w ? w : "-");
	}
	if (table_print(t, stdout) < 0)
		goto oom;
	status = EXIT_OK; /* it still held cli_end's CLI_GO: exit 154 */
	goto out;
oom:
	cli_error(ctx, "out of memory");
	status = EXIT_RUNTIME;
out:
	table_free(t);
	json_decref(tasks);
	return status;
}
