/*
 * cmd_serve.c: `profreg serve`, the trigger API and its worker (the job
 * is jobs/serve.c). Runs until SIGINT or SIGTERM.
 */
#define _POSIX_C_SOURCE 200809L
#include "common/netaddr.h"
#include "jobs/cli/commands.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"
#include "jobs/agent.h"
#include "jobs/serve.h"

#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { O_LISTEN = 2400, O_PORT_FILE, O_AGENT, O_NAME };

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

/* A warning of the server, to stderr as it happens (serve_opts.on_note). */
static void warn_now(const char *line, void *arg)
{
	cli_warn(arg, "%s", line);
}

/* serve --agent: this host's snapshot agent until SIGINT or SIGTERM. */
static int run_agent(cli_ctx *ctx, agent_opts *ao, agent_result *ar)
{
	pr_error err = PR_ERROR_INIT;
	config cfg;
	db *d = NULL;
	blob_store *bs = NULL;
	int rc, status;

	memset(&cfg, 0, sizeof(cfg));
	if ((rc = ctx_config_load(ctx, &cfg, &err)) < 0 || (rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = ctx_blobs_open(ctx, &bs, &err)) < 0) {
		status = cli_fail(ctx, &err);
		goto out;
	}
	{
		job_env env = {&cfg, d, bs, ctx->home, NULL};
		if (!ao->listen)
			ao->listen = "127.0.0.1:8071";
		rc = agent_run(ar, &env, ao, &err);
	}
	for (size_t i = 0; i < ar->notes.n; i++)
		cli_warn(ctx, "%s", ar->notes.lines[i]);
	if (rc < 0) {
		status = cli_fail(ctx, &err);
		goto out;
	}
	if (ctx->json)
		status = cli_print_json(ctx, json_pack("{s:I,s:I,s:i}", "requests",
						       (json_int_t)ar->requests, "taken",
						       (json_int_t)ar->taken, "port",
						       (int)ar->port));
	else if (!ctx->quiet)
		printf("served %" PRIu64 " requests on port %u; took %" PRIu64 " snapshots\n",
		       ar->requests, (unsigned)ar->port, ar->taken);
	status = cli_finish(ctx, EXIT_OK);
out:
	agent_result_release(ar);
	blob_store_free(bs);
	db_close(d);
	config_release(&cfg);
	return status;
}

int cmd_serve(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"listen", required_argument, O_LISTEN, "ADDR:PORT",
		 "listen here (default: the config's serve.listen, 127.0.0.1:8070; port 0: any)"},
		{"port-file", required_argument, O_PORT_FILE, "FILE",
		 "write the port it listens on to FILE once listening"},
		{"agent", no_argument, O_AGENT, NULL,
		 "be this host's snapshot agent instead (POST /v1/snapshots; default listen "
		 "127.0.0.1:8071)"},
		{"name", required_argument, O_NAME, "NAME",
		 "with --agent: another name this host answers to (repeatable)"},
		{NULL, 0, 0, NULL, NULL},
	};
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	config cfg;
	db *d = NULL, *wd = NULL;
	blob_store *bs = NULL;
	serve_opts o;
	serve_result r;
	agent_opts ao;
	agent_result ar;
	bool agent = false, bad = false;
	struct sigaction sa;
	struct sockaddr_storage ss;
	const char *arg;
	char worker[96], host[64] = "";
	int c, rc, status;

	memset(&o, 0, sizeof(o));
	memset(&r, 0, sizeof(r));
	memset(&ao, 0, sizeof(ao));
	memset(&ar, 0, sizeof(ar));
	memset(&cfg, 0, sizeof(cfg));
	if (cli_parser_new(
		    &p, ctx, argc, argv, opts,
		    "profreg serve [--listen ADDR:PORT] [--port-file F] [--agent [--name N]...]",
		    "Serve the trigger API until SIGINT or SIGTERM: POST /v1/captures (bearer\n"
		    "tokens from 'profreg token create'), POST /v1/alertmanager (Alertmanager's\n"
		    "webhook), GET /v1/captures/ID, /healthz and /metrics, and /compare (two\n"
		    "selections of captures side by side in the browser, a token as the\n"
		    "password); and execute queued capture requests, whichever server queued\n"
		    "them. Every safeguard (rate limits, host cooldown, session caps and\n"
		    "expiry) is the config's \"serve\" section, enforced in the database\n"
		    "across every server.\n"
		    "With --agent, serve this host's incident snapshots instead: POST\n"
		    "/v1/snapshots with the bearer secret of serve.agent_secret_env or\n"
		    "serve.agent_secret_file takes and stores a snapshot of this host (its host\n"
		    "name or a --name only) within snapshot.cooldown_s per host.") < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		if (c == O_LISTEN)
			o.listen = arg;
		else if (c == O_PORT_FILE)
			o.port_file = arg;
		else if (c == O_AGENT)
			agent = true;
		else if (c == O_NAME) {
			if (ao.nnames == AGENT_NAMES_MAX || !*arg || strlen(arg) > 256) {
				cli_error(ctx, "'--name %.64s': at most %d names of 1 to 256 bytes",
					  arg, AGENT_NAMES_MAX);
				bad = true;
			} else {
				ao.names[ao.nnames++] = arg;
			}
		}
	}
	if ((status = cli_end(p, c, bad, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	if (ao.nnames && !agent) {
		cli_error(ctx, "--name goes with --agent");
		return EXIT_USAGE;
	}
	/* A bad --listen is a usage error, named before any database is opened. */
	if (o.listen && (rc = netaddr_parse_listen(&ss, o.listen, &err)) < 0)
		return cli_fail(ctx, &err);
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
	if (agent) {
		ao.listen = o.listen;
		ao.port_file = o.port_file;
		ao.stop = &stop_flag;
		status = run_agent(ctx, &ao, &ar);
		goto out;
	}
	if ((rc = ctx_config_load(ctx, &cfg, &err)) < 0 || (rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = ctx_db_open(ctx, &wd, &err)) < 0 || (rc = ctx_blobs_open(ctx, &bs, &err)) < 0) {
		status = cli_fail(ctx, &err);
		goto out;
	}
	{
		job_env env = {&cfg, d, bs, ctx->home, NULL};
		o.worker_db = wd;
		o.on_note = warn_now;
		o.note_ctx = ctx;
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
