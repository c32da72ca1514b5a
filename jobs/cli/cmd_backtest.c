/*
 * cmd_backtest.c: `profreg backtest`: the nightly analysis replayed over
 * stored history (the job is jobs/backtest.c).
 */
#define _POSIX_C_SOURCE 200809L
#include "common/buf.h"
#include "common/fileio.h"
#include "common/timeutil.h"
#include "jobs/backtest.h"
#include "jobs/cli/commands.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"
#include "jobs/cli/table.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { O_SINCE = 2000, O_UNTIL, O_NIGHT, O_INCIDENTS, O_WINDOW };

#define INCIDENTS_MAX (16u << 20)

static const char usage[] =
	"profreg backtest --since T [--until T] [--night 24h] [--incidents FILE]\n"
	"                 [--escalation-window 30m] [--json]";
static const char desc[] =
	"Replay the nightly analysis night by night over stored history, storing and\n"
	"paging nothing: for each known incident in FILE (JSON Lines: service, time,\n"
	"and function and/or release) whether and on which night it would have been\n"
	"found, and how many regressions every other service-night would have raised.\n"
	"With an escalate section in the config, the escalation rules are replayed too\n"
	"over the stored signal samples (nothing captured): escalations, host-minutes and\n"
	"captures per service, and whether one started within the window of each incident.\n"
	"Run it with two --config files to compare their settings on the same history.";

/* The integer `k` of object `o` (0 when missing). */
static long long num(const json_t *o, const char *k)
{
	return (long long)json_integer_value(json_object_get(o, k));
}

/* The escalation replay: a line of what was replayed, a table of services, the incidents. */
static void print_escalation(const cli_ctx *ctx, const json_t *esc)
{
	static const table_col scols[] = {
		{"SERVICE", TABLE_LEFT, 6, 20},
		{"TO L1", TABLE_WHOLE, 0, 0},
		{"TO L2", TABLE_WHOLE, 0, 0},
		{"MIN L1", TABLE_WHOLE, 0, 0},
		{"MIN L2", TABLE_WHOLE, 0, 0},
		{"CAPTURES", TABLE_WHOLE, 0, 0},
		{"FIRST ESCALATION", TABLE_WHOLE, 0, 0},
		{"HOST", TABLE_LEFT, 4, 0},
	};
	static const table_col icols[] = {
		{"SERVICE", TABLE_LEFT, 6, 20},
		{"STARTED", TABLE_WHOLE, 0, 0},
		{"ESCALATION NEAR IT", TABLE_LEFT, 10, 0},
	};
	json_t *svcs = json_object_get(esc, "services"), *incs = json_object_get(esc, "incidents");
	json_t *v;
	table *t = NULL;
	size_t i;

	if (!json_is_true(json_object_get(esc, "replayed"))) {
		printf("\nescalation replay: nothing replayed: ");
		cli_put_safe(stdout, json_string_value(json_object_get(esc, "reason")), 0);
		printf("\n");
		return;
	}
	printf("\nescalation replay: %lld signal samples, the admission caps (serve) applied\n"
	       "in memory; the load and memory ceilings are not replayed (their values are\n"
	       "not stored). Escalations to level 1 and 2, host-minutes at each level:\n\n",
	       num(esc, "samples"));
	if (table_new(&t, scols, 8, ctx->wide) < 0)
		return;
	json_array_foreach(svcs, i, v) {
		json_t *first = json_object_get(v, "first_escalation");
		json_t *cap = json_object_get(v, "captures");
		json_t *hm = json_object_get(v, "host_minutes");
		json_t *esc_n = json_object_get(v, "escalations");
		table_add(t, json_string_value(json_object_get(v, "service")));
		table_addf(t, "%lld", num(esc_n, "level1"));
		table_addf(t, "%lld", num(esc_n, "level2"));
		table_addf(t, "%.0f", json_real_value(json_object_get(hm, "level1")));
		table_addf(t, "%.0f", json_real_value(json_object_get(hm, "level2")));
		table_addf(t, "%lld", num(cap, "level1") + num(cap, "level2"));
		if (json_is_object(first)) {
			table_add(t, json_string_value(json_object_get(first, "at")));
			table_add(t, json_string_value(json_object_get(first, "host")));
		} else {
			table_add(t, json_string_value(json_object_get(v, "status")));
			table_add(t, "");
		}
	}
	table_print(t, stdout);
	table_free(t);
	t = NULL;
	if (!json_array_size(incs))
		return;
	printf("\nincidents and escalations within %lld s of them:\n\n", num(esc, "window_s"));
	if (table_new(&t, icols, 3, ctx->wide) < 0)
		return;
	json_array_foreach(incs, i, v) {
		json_t *first = json_object_get(v, "first");
		table_add(t, json_string_value(json_object_get(v, "service")));
		table_add(t, json_string_value(json_object_get(v, "time")));
		if (!json_is_true(json_object_get(v, "signals")))
			table_add(t, "no signal samples");
		else if (json_is_object(first))
			table_addf(t, "%s %s level %lld (%+lld s)",
				   json_string_value(json_object_get(first, "at")),
				   json_string_value(json_object_get(first, "host")),
				   num(first, "level"), num(first, "offset_s"));
		else
			table_add(t, "none");
	}
	table_print(t, stdout);
	table_free(t);
}

/* A row for each incident of the nightly replay. */
static void print_incidents(table *t, const backtest_result *r)
{
	size_t i;
	json_t *v;

	json_array_foreach(r->incidents, i, v) {
		const char *fn = json_string_value(json_object_get(v, "function"));
		const char *rel = json_string_value(json_object_get(v, "release"));
		const char *night = json_string_value(json_object_get(v, "night"));
		table_add(t, json_string_value(json_object_get(v, "service")));
		if (fn && rel)
			table_addf(t, "%s in %s", fn, rel);
		else
			table_add(t, fn ? fn : rel);
		table_add(t, json_string_value(json_object_get(v, "time")));
		table_add(t, night ? night : "not found");
	}
}

static void print_result(const cli_ctx *ctx, const backtest_result *r)
{
	static const table_col cols[] = {
		{"SERVICE", TABLE_LEFT, 6, 20},
		{"WHAT", TABLE_LEFT, 10, 0},
		{"STARTED", TABLE_WHOLE, 0, 0},
		{"FOUND ON THE NIGHT ENDING", TABLE_WHOLE, 0, 0},
	};
	size_t found = 0, i;
	json_t *v;
	table *t = NULL;

	json_array_foreach(r->incidents, i, v)
		found += json_is_true(json_object_get(v, "found"));
	printf("%zu nights, %zu service-nights (%zu analysed); %zu regressions raised\n",
	       r->nights, r->service_nights, r->analysed, r->regressions);
	printf("false findings: %zu on %zu analysed service-nights without an incident (%.2f per"
	       " 1,000)\n", r->false_regressions, r->clean_service_nights,
	       r->clean_service_nights ? 1000.0 * (double)r->false_regressions /
						 (double)r->clean_service_nights : 0.0);
	if (json_array_size(r->incidents)) {
		printf("incidents found: %zu of %zu\n\n", found, json_array_size(r->incidents));
		if (table_new(&t, cols, 4, ctx->wide) < 0)
			return;
		print_incidents(t, r);
		table_print(t, stdout);
		table_free(t);
	}
	if (r->escalation && json_array_size(json_object_get(r->escalation, "services")))
		print_escalation(ctx, r->escalation);
}

int cmd_backtest(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"since", required_argument, O_SINCE, "TIME",
		 "the first night ends after TIME (ISO 8601 or a duration back)"},
		{"until", required_argument, O_UNTIL, "TIME",
		 "the last night ends at TIME (default now)"},
		{"night", required_argument, O_NIGHT, "DURATION", "a night's length (default 24h)"},
		{"incidents", required_argument, O_INCIDENTS, "FILE",
		 "known incidents, JSON Lines: service, time, function and/or release"},
		{"escalation-window", required_argument, O_WINDOW, "DURATION",
		 "an escalation this near an incident, before or after, counts (default 30m)"},
		{NULL, 0, 0, NULL, NULL},
	};
	pr_error err = PR_ERROR_INIT;
	backtest_opts o;
	backtest_result r;
	backtest_incident *inc = NULL;
	size_t ninc = 0;
	cli_parser *p = NULL;
	config cfg;
	db *d = NULL;
	buf text = BUF_INIT;
	const char *arg, *since_s = NULL, *until_s = NULL, *file = NULL;
	int64_t now = time_now_us();
	bool bad = false;
	int c, rc, status;

	memset(&o, 0, sizeof(o));
	memset(&r, 0, sizeof(r));
	memset(&cfg, 0, sizeof(cfg));
	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		switch (c) {
		case O_SINCE: since_s = arg; break;
		case O_UNTIL: until_s = arg; break;
		case O_INCIDENTS: file = arg; break;
		case O_WINDOW:
			if (time_parse_duration(&o.escalation_window_us, arg) < 0 ||
			    o.escalation_window_us <= 0) {
				cli_error(ctx, "'--escalation-window %s' is not a duration"
					  " like 30m", arg);
				bad = true;
			}
			break;
		case O_NIGHT:
			if (time_parse_duration(&o.night_us, arg) < 0 || o.night_us <= 0) {
				cli_error(ctx, "'--night %s' is not a duration like 24h", arg);
				bad = true;
			}
			break;
		}
	}
	if ((status = cli_end(p, c, bad, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	if (!since_s) {
		cli_error(ctx, "give --since (see --help)");
		return EXIT_USAGE;
	}
	o.until_us = now;
	if (time_parse_since(&o.since_us, since_s, now) < 0 ||
	    (until_s && time_parse_since(&o.until_us, until_s, now) < 0)) {
		cli_error(ctx, "'%s' is not a time (ISO 8601) or a duration (24h, 7d)",
			  time_parse_since(&o.since_us, since_s, now) < 0 ? since_s : until_s);
		return EXIT_USAGE;
	}
	if (file && ((rc = fileio_read(&text, file, INCIDENTS_MAX, &err)) < 0 ||
		     (rc = backtest_incidents_parse(&inc, &ninc, text.ptr, text.len, file,
						    &err)) < 0))
		goto fail;
	o.incidents = inc;
	o.nincidents = ninc;
	if ((rc = ctx_config_load(ctx, &cfg, &err)) < 0 || (rc = ctx_db_open(ctx, &d, &err)) < 0)
		goto fail;
	{
		job_env env = {&cfg, d, NULL, ctx->home, NULL};
		if ((rc = backtest_run(&r, &env, &o, &err)) < 0)
			goto fail;
	}
	if (ctx->json) {
		json_t *doc = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:O,s:O,s:O?}",
			"nights", (json_int_t)r.nights,
			"service_nights", (json_int_t)r.service_nights,
			"analysed", (json_int_t)r.analysed,
			"regressions", (json_int_t)r.regressions,
			"false_regressions", (json_int_t)r.false_regressions,
			"clean_service_nights", (json_int_t)r.clean_service_nights,
			"incidents", r.incidents, "nights_detail", r.nights_json,
			"escalation", r.escalation);
		status = cli_print_json(ctx, doc);
	} else {
		print_result(ctx, &r);
		status = EXIT_OK;
	}
	goto out;
fail:
	status = cli_fail(ctx, &err);
out:
	backtest_result_release(&r);
	backtest_incidents_free(inc, ninc);
	buf_release(&text);
	config_release(&cfg);
	db_close(d);
	return status;
}
