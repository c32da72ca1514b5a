/*
 * cmd_serve.c: `profreg serve`, the trigger API and its worker (the job
 * is jobs/serve.c). Runs until SIGINT or SIGTERM.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/commands.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"
#include "jobs/serve.h"

#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { O_LISTEN = 2400, O_PORT_FILE };

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

int cmd_serve(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"listen", required_argument, O_LISTEN, "ADDR:PORT",
		 "listen here (default: the config's serve.listen, 127.0.0.1:8070; port 0: any)"},
		{"port-file", required_argument, O_PORT_FILE, "FILE",
		 "write the port it listens on to FILE once listening"},
		{NULL, 0, 0, NULL, NULL},
	};
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	config cfg;
	db *d = NULL, *wd = NULL;
	blob_store *bs = NULL;
	serve_opts o;
	serve_result r;
	struct sigaction sa;
	const char *arg;
	char worker[96], host[64] = "";
	int c, rc, status;

	memset(&o, 0, sizeof(o));
	memset(&r, 0, sizeof(r));
	memset(&cfg, 0, sizeof(cfg));
	if (cli_parser_new(
		    &p, ctx, argc, argv, opts, "profreg serve [--listen ADDR:PORT] [--port-file F]",
		    "Serve the trigger API until SIGINT or SIGTERM: POST /v1/captures (bearer\n"
		    "tokens from 'profreg token create'), POST /v1/alertmanager (Alertmanager's\n"
		    "webhook), GET /v1/captures/ID, /healthz and /metrics; and execute queued\n"
		    "capture requests, whichever server queued them. Every safeguard (rate\n"
		    "limits, host cooldown, session caps and expiry) is the config's \"serve\"\n"
		    "section, enforced in the database across every server.") < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		if (c == O_LISTEN)
			o.listen = arg;
		else if (c == O_PORT_FILE)
			o.port_file = arg;
	}
	if ((status = cli_end(p, c, false, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	gethostname(host, sizeof(host) - 1);
	snprintf(worker, sizeof(worker), "%.63s:%ld", host, (long)getpid());
	o.worker = worker;
	o.stop = &stop_flag;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if ((rc = ctx_config_load(ctx, &cfg, &err)) < 0 || (rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = ctx_db_open(ctx, &wd, &err)) < 0 || (rc = ctx_blobs_open(ctx, &bs, &err)) < 0) {
		status = cli_fail(ctx, &err);
		goto out;
	}
	{
		job_env env = {&cfg, d, bs, ctx->home, NULL};
		o.worker_db = wd;
		rc = serve_run(&r, &env, &o, &err);
	}
	for (size_t i = 0; i < r.notes.n; i++)
		cli_warn(ctx, "%s", r.notes.lines[i]);
	if (rc < 0) {
		status = cli_fail(ctx, &err);
		goto out;
	}
	if (ctx->json)
		status = cli_print_json(
			ctx, json_pack("{s:I,s:I,s:i}", "requests", (json_int_t)r.requests,
				       "executed", (json_int_t)r.executed, "port", (int)r.port));
	else if (!ctx->quiet)
		printf("served %" PRIu64 " requests on port %u; executed %" PRIu64
		       " capture requests\n",
		       r.requests, (unsigned)r.port, r.executed);
	status = cli_finish(ctx, EXIT_OK);
out:
	serve_result_release(&r);
	blob_store_free(bs);
	db_close(wd);
	db_close(d);
	config_release(&cfg);
	return status;
}
