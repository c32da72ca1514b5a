/*
 * commands.h: the top-level commands, one function each, and the table
 * main.c dispatches on. Adding a command means a line here.
 */
#ifndef PR_COMMANDS_H
#define PR_COMMANDS_H

#include "jobs/cli/cli.h"

int cmd_db(cli_ctx *ctx, int argc, char **argv);
int cmd_service(cli_ctx *ctx, int argc, char **argv);
int cmd_ingest(cli_ctx *ctx, int argc, char **argv);
int cmd_profiles(cli_ctx *ctx, int argc, char **argv);
int cmd_profile(cli_ctx *ctx, int argc, char **argv);
int cmd_analyze(cli_ctx *ctx, int argc, char **argv);
int cmd_baseline(cli_ctx *ctx, int argc, char **argv);
int cmd_nightly(cli_ctx *ctx, int argc, char **argv);
int cmd_runs(cli_ctx *ctx, int argc, char **argv);
int cmd_run(cli_ctx *ctx, int argc, char **argv);
int cmd_finding(cli_ctx *ctx, int argc, char **argv);
int cmd_postdeploy(cli_ctx *ctx, int argc, char **argv);
int cmd_config(cli_ctx *ctx, int argc, char **argv);
int cmd_page(cli_ctx *ctx, int argc, char **argv);
int cmd_report(cli_ctx *ctx, int argc, char **argv);
int cmd_diff(cli_ctx *ctx, int argc, char **argv);
int cmd_export(cli_ctx *ctx, int argc, char **argv);
int cmd_retention(cli_ctx *ctx, int argc, char **argv);
int cmd_storage(cli_ctx *ctx, int argc, char **argv);
int cmd_capture(cli_ctx *ctx, int argc, char **argv);
int cmd_deploy(cli_ctx *ctx, int argc, char **argv);
int cmd_collect(cli_ctx *ctx, int argc, char **argv);
int cmd_snapshot(cli_ctx *ctx, int argc, char **argv);
int cmd_functions(cli_ctx *ctx, int argc, char **argv);
int cmd_backtest(cli_ctx *ctx, int argc, char **argv);
int cmd_span(cli_ctx *ctx, int argc, char **argv);
int cmd_blobs(cli_ctx *ctx, int argc, char **argv);
int cmd_access(cli_ctx *ctx, int argc, char **argv);
int cmd_audit(cli_ctx *ctx, int argc, char **argv);
int cmd_token(cli_ctx *ctx, int argc, char **argv);
int cmd_serve(cli_ctx *ctx, int argc, char **argv);
int cmd_escalate(cli_ctx *ctx, int argc, char **argv);
int cmd_worker(cli_ctx *ctx, int argc, char **argv);
int cmd_tasks(cli_ctx *ctx, int argc, char **argv);

#define COMMANDS_TABLE \
	{"ingest", cmd_ingest, "store profiles from files or a manifest"}, \
	{"collect", cmd_collect, "pull new captures from every source of the enabled services"}, \
	{"nightly", cmd_nightly, "collect, analyse every enabled service, record the run"}, \
	{"worker", cmd_worker, "work the tasks of nightly runs spread over machines"}, \
	{"tasks", cmd_tasks, "list the tasks of a nightly run spread over workers"}, \
	{"runs", cmd_runs, "list recent runs"}, \
	{"run", cmd_run, "show one run"}, \
	{"post-deploy", cmd_postdeploy, "check a deploy: analyse, suspects, Markdown, exit code"}, \
	{"deploy", cmd_deploy, "list or delete recorded deploys"}, \
	{"finding", cmd_finding, "show or resolve a finding"}, \
	{"page", cmd_page, "list pages; send the pending ones now"}, \
	{"report", cmd_report, "write the HTML, Markdown or JSON report of a run or finding"}, \
	{"diff", cmd_diff, "compare two selections of captures: flame graph and table"}, \
	{"span", cmd_span, "the flame graph of a slow span, from the captures covering it"}, \
	{"export", cmd_export, "write captures as folded stacks, speedscope or pprof"}, \
	{"retention", cmd_retention, "move captures through the retention tiers"}, \
	{"storage", cmd_storage, "show storage use by tier and service against the budget"}, \
	{"blobs", cmd_blobs, "check every live blob, or move the local store into S3"}, \
	{"serve", cmd_serve, "the trigger API: captures on demand, the Alertmanager webhook"}, \
	{"escalate", cmd_escalate, "escalation levels of hosts from their Prometheus signals"}, \
	{"token", cmd_token, "create, list and revoke bearer tokens of the trigger API"}, \
	{"capture", cmd_capture, "pin or unpin a capture as forensic evidence"}, \
	{"snapshot", cmd_snapshot, "take, list, show, extract an incident snapshot of a host"}, \
	{"analyze", cmd_analyze, "test releases against their rolling baselines"}, \
	{"backtest", cmd_backtest, "replay the nightly analysis over stored history"}, \
	{"baseline", cmd_baseline, "show a service's rolling baseline"}, \
	{"profiles", cmd_profiles, "list stored captures"}, \
	{"functions", cmd_functions, "find the captures where a function took more than a share"}, \
	{"profile", cmd_profile, "show one capture and its top functions"}, \
	{"service", cmd_service, "add, enable, disable and list services"}, \
	{"config", cmd_config, "check the configuration file; print its reference"}, \
	{"access", cmd_access, "grant, revoke and list which roles see which teams"}, \
	{"audit", cmd_audit, "list who read or changed what"}, \
	{"db", cmd_db, "set up and migrate the schema; start, stop, check the private cluster"},

#endif
