/*
 * cmd_nightly.c: `profreg nightly`, and `profreg runs list` / `run show`.
 *
 * The nightly run holds an advisory lock for its whole length, collects
 * new captures from each enabled service's source, analyses the night
 * window of every service in one false-discovery family, and records one
 * run with each service's outcome. One service's failure is recorded
 * against it and the run goes on. Re-running the same night changes
 * nothing: ingest is idempotent and findings are updated, not duplicated.
 */
#define _POSIX_C_SOURCE 200809L
#include "analysis.h"
#include "commands.h"
#include "config.h"
#include "context.h"
#include "exitcode.h"
#include "pager.h"
#include "pushgw.h"
#include "reportdata.h"
#include "retention.h"
#include "table.h"
#include "common/timeutil.h"
#include "pipeline/source.h"

#include <inttypes.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NIGHTLY_LOCK "profreg-nightly"
#define MAX_SERVICES 1024

enum { O_AT = 1400, O_SERVICE, O_DRY, O_NIGHT, O_LIMIT };

static bool wanted(const char *name, const char **only, size_t nonly)
{
	if (!nonly)
		return true;
	for (size_t i = 0; i < nonly; i++)
		if (strcmp(only[i], name) == 0)
			return true;
	return false;
}

/* Outcome of one service: {"collected": {...}, "status": "...", "reason": "..."} */
static json_t *outcome(const char *status, const char *reason, const source_report *src)
{
	json_t *o = json_pack("{s:s}", "status", status);

	if (reason)
		json_object_set_new(o, "reason", json_string(reason));
	if (src)
		json_object_set_new(o, "collected", json_pack("{s:I,s:I,s:I,s:I}",
			"stored", (json_int_t)src->stored, "already_stored", (json_int_t)src->already,
			"waiting", (json_int_t)src->waiting, "failed", (json_int_t)src->failed));
	return o;
}

/* Push the run's metrics when configured; a failed push is a warning. */
static void push_metrics(const cli_ctx *ctx, const config *cfg, const analysis *a, bool ok,
			 double t0, size_t failed, const pager_counts *pc)
{
	pr_error perr = PR_ERROR_INIT;

	if (pushgw_push_analysis(cfg, "nightly", ok, t0, a, failed, pc, &perr) < 0)
		cli_warn(ctx, "%s", perr.msg);
}

/*
 * The run's reports, written once the run is recorded. A report that
 * cannot be written is a warning: the findings and pages are stored and
 * `profreg report --run ID` writes it again.
 */
static char *write_report(const cli_ctx *ctx, db *d, blob_store *bs, const config *cfg,
			  int64_t run_id)
{
	pr_error rerr = PR_ERROR_INIT;
	char *path = NULL;

	if (reportdata_write_run(d, bs, cfg, ctx->home, run_id, &path, &rerr) < 0) {
		cli_warn(ctx, "report: %s", rerr.msg);
		return NULL;
	}
	return path;
}

/*
 * Retention at the end of the night, when the config asks for it. It
 * takes its own lock, so a retention run already going elsewhere is
 * reported and left to finish.
 */
static int run_retention(const cli_ctx *ctx, db *d, blob_store *bs, const config *cfg,
			 int64_t at, retention_result *r, pr_error *err)
{
	retention_opts o = {at, false, 0};
	int rc = retention_run(r, d, bs, cfg, &o, err);

	if (rc == 0 && r->over_budget)
		retention_warn_over_budget(ctx->prog, r);
	return rc;
}

static int run_insert(int64_t *id, db *d, const char *kind, json_t *params, pr_error *err)
{
	static const char sql[] =
		"insert into runs (kind, status, detail) values ($1, 'running', $2::jsonb) returning id";
	char *text = json_dumps(params, JSON_COMPACT | JSON_SORT_KEYS);
	const char *p[2] = {kind, text};
	PGresult *res = NULL;
	int rc;

	if (!text)
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	rc = db_exec(d, &res, err, "recording the run", sql, 2, p);
	free(text);
	if (rc == 0)
		*id = db_get_i64(res, 0, 0);
	db_result_free(res);
	return rc;
}

static int run_finish(db *d, int64_t id, const char *status, json_t *detail, pr_error *err)
{
	static const char sql[] =
		"update runs set status = $2, finished_at = now(), detail = detail || $3::jsonb"
		" where id = $1";
	char sid[24], *text = json_dumps(detail, JSON_COMPACT | JSON_SORT_KEYS);
	const char *p[3] = {sid, status, text};
	int rc;

	if (!text)
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	snprintf(sid, sizeof(sid), "%" PRId64, id);
	rc = db_exec(d, NULL, err, "recording the run", sql, 3, p);
	free(text);
	return rc;
}

int cmd_nightly(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"at", required_argument, O_AT, "TIME", "the night ends at TIME (default now)"},
		{"service", required_argument, O_SERVICE, "NAME", "only this service (repeatable)"},
		{"night", required_argument, O_NIGHT, "DURATION", "length of the analysed window (default 24h)"},
		{"dry-run", no_argument, O_DRY, NULL, "analyse and print; store no findings"},
		{NULL, 0, 0, NULL, NULL},
	};
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	config cfg = {0};
	analysis a;
	db *d = NULL;
	blob_store *bs = NULL;
	db_service *svcs = NULL;
	size_t nsvcs = 0, nonly = 0;
	const char *arg, *only[64], *at_s = NULL;
	bool dry = false, locked = false;
	int64_t at = 0, night = 24 * 3600 * 1000000LL, run_id = 0;
	json_t *services = json_object(), *summary = NULL;
	size_t failed = 0, skipped = 0;
	char when[TIME_FMT_MAX];
	pager_counts pc;
	retention_result ret;
	bool loaded = false, ret_ran = false, ret_failed = false;
	char *report = NULL;
	double t0 = time_mono();
	int c, rc = 0;

	memset(&a, 0, sizeof(a));
	memset(&pc, 0, sizeof(pc));
	memset(&ret, 0, sizeof(ret));
	if (cli_parser_new(&p, ctx, argc, argv, opts, "profreg nightly [--at T] [--service S]... [--dry-run] [--json]",
			   "Collect each enabled service's new captures, analyse the night against\n"
			   "its rolling baseline (all services in one FDR family) and record the run.\n"
			   "Writes the run's HTML, Markdown and JSON reports under the reports directory\n"
			   "and, with retention.after_nightly in the config, runs retention at the end.\n"
			   "Exit 0 when the run completed, findings or not; 1 when retention found\n"
			   "protected data alone over the storage budget; 3 when the run or its\n"
			   "retention failed.") < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		switch (c) {
		case O_AT: at_s = arg; break;
		case O_DRY: dry = true; break;
		case O_SERVICE:
			if (nonly == sizeof(only) / sizeof(only[0])) {
				cli_error(ctx, "at most %zu --service options", nonly);
				rc = EXIT_USAGE;
				break;
			}
			only[nonly++] = arg;
			break;
		case O_NIGHT:
			if (time_parse_duration(&night, arg) < 0 || night <= 0) {
				cli_error(ctx, "'--night %s' is not a duration like 24h", arg);
				rc = EXIT_USAGE;
			}
			break;
		}
	}
	cli_parser_free(p);
	if (c == CLI_HELP) {
		json_decref(services);
		return EXIT_OK;
	}
	if (c == CLI_BAD || rc) {
		json_decref(services);
		return EXIT_USAGE;
	}
	if (config_load(&cfg, ctx, &err) < 0) {
		json_decref(services);
		return cli_fail(ctx, &err);
	}
	loaded = true;
	at = cfg.analysis.at_us;
	if (at_s && time_parse(&at, at_s) < 0) {
		cli_error(ctx, "'--at %s' is not an ISO 8601 time", at_s);
		config_release(&cfg);
		json_decref(services);
		return EXIT_USAGE;
	}
	cfg.analysis.at_us = at;
	analysis_init(&a, &cfg.analysis);
	time_format(when, at);

	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 || (rc = ctx_blobs_open(ctx, &bs, &err)) < 0)
		goto fail;
	if ((rc = db_try_advisory_lock(d, NIGHTLY_LOCK, &locked, &err)) < 0)
		goto fail;
	if (!locked) {
		rc = pr_error_set(&err, PR_ELOCKED,
				  "another nightly run holds the lock; not starting a second one");
		goto fail;
	}
	if ((rc = db_service_list(d, &svcs, &nsvcs, &err)) < 0)
		goto fail;
	if (!dry) {
		json_t *params = json_pack("{s:s,s:I,s:I,s:b}", "at", when, "at_us", (json_int_t)at,
					   "night_us", (json_int_t)night, "dry_run", 0);
		rc = run_insert(&run_id, d, "nightly", params, &err);
		json_decref(params);
		if (rc < 0)
			goto fail;
	}
	for (size_t i = 0; i < cfg.nservices; i++) {
		bool known = false;
		for (size_t k = 0; k < nsvcs && !known; k++)
			known = strcmp(svcs[k].name, cfg.services[i].name) == 0;
		if (!known && wanted(cfg.services[i].name, only, nonly)) {
			json_object_set_new(services, cfg.services[i].name,
				outcome("skipped", "in the configuration file but not registered (profreg service add)", NULL));
			skipped++;
		}
	}
	for (size_t i = 0; i < nsvcs; i++) {
		const db_service *s = &svcs[i];
		const config_service *cs = config_service_find(&cfg, s->name);
		source_report src = {0};
		bool have_src = false;
		size_t before = a.nskipped;
		pr_error serr = PR_ERROR_INIT;

		if (!wanted(s->name, only, nonly))
			continue;
		if (!s->enabled) {
			json_object_set_new(services, s->name, outcome("skipped", "not enabled", NULL));
			skipped++;
			continue;
		}
		if (cs && cs->source_dir) {
			if (source_collect_dir(&src, d, bs, s->name, cs->source_dir, &cfg.limits, &serr) < 0) {
				if (serr.code == PR_EDB) {
					rc = pr_error_set(&err, serr.code, "%s", serr.msg);
					goto fail;
				}
				json_object_set_new(services, s->name, outcome("failed", serr.msg, NULL));
				failed++;
				continue;
			}
			have_src = true;
		}
		for (size_t t = 0; t < (cs ? cs->ntypes : 1); t++) {
			analysis_target tg = {s->id, s->name, cs ? cs->types[t] : "cpu", NULL, at - night, at + 1, NULL, NULL};
			if ((rc = analysis_add(&a, d, &tg, !dry, &serr)) < 0) {
				if (serr.code == PR_EDB || serr.code == PR_ENOMEM) {
					rc = pr_error_set(&err, serr.code, "%s", serr.msg);
					goto fail;
				}
				break;
			}
		}
		if (serr.code) {
			json_object_set_new(services, s->name, outcome("failed", serr.msg, have_src ? &src : NULL));
			failed++;
		} else if (a.nskipped > before) {
			json_object_set_new(services, s->name,
				outcome("skipped", a.skipped[a.nskipped - 1].reason, have_src ? &src : NULL));
			skipped++;
		} else {
			json_object_set_new(services, s->name,
				outcome(src.failed ? "analysed, some files failed" : "analysed",
					src.first_error, have_src ? &src : NULL));
		}
		source_report_release(&src);
	}
	if ((rc = analysis_finish(&a, &err)) < 0)
		goto fail;
	if (!dry && (rc = analysis_store(&a, d, run_id, &cfg, &err)) < 0)
		goto fail;
	/* Pages wait in the outbox on delivery problems; only the database fails the run. */
	if (!dry && (rc = pager_flush(d, &cfg, NULL, &pc, &err)) < 0)
		goto fail;
	if (pc.first_error[0])
		cli_warn(ctx, "paging: %s", pc.first_error);
	summary = json_pack("{s:I,s:I,s:I,s:I,s:O,s:{s:I,s:I,s:I,s:I,s:I}}", "analysed", (json_int_t)a.services,
			    "tests", (json_int_t)a.ntests, "findings", (json_int_t)a.nfindings,
			    "failed", (json_int_t)failed, "services", services,
			    "pages", "enqueued", (json_int_t)a.pages_enqueued, "sent", (json_int_t)pc.sent,
			    "failed", (json_int_t)pc.failed, "pending", (json_int_t)pc.pending,
			    "alerts_refreshed", (json_int_t)pc.refreshed);
	if (!dry && (rc = run_finish(d, run_id, "ok", summary, &err)) < 0)
		goto fail;
	if (!dry) {
		pr_error rerr = PR_ERROR_INIT;

		report = write_report(ctx, d, bs, &cfg, run_id);
		if (cfg.retention.after_nightly) {
			ret_ran = true;
			if (run_retention(ctx, d, bs, &cfg, at, &ret, &rerr) < 0) {
				ret_failed = true;
				cli_error(ctx, "retention: %s", rerr.msg);
			}
		}
		push_metrics(ctx, &cfg, &a, true, t0, failed, &pc);
	}

	if (ctx->json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < a.ntests && a.tests[i].significant; i++) {
			const finding *f = &a.tests[i];
			json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:s,s:s,s:f,s:f,s:f,s:f,s:I}",
				"service", f->service, "type", f->type, "function", f->function,
				"direction", finding_dir_name(f->direction),
				"severity", stats_severity_name(f->severity),
				"baseline_share", f->baseline_share, "current_share", f->current_share,
				"delta", f->delta, "q_value", f->q_value, "id", (json_int_t)f->id));
		}
		json_object_set_new(summary, "findings_list", arr);
		json_object_set_new(summary, "run_id", json_integer((json_int_t)run_id));
		json_object_set_new(summary, "at", json_string(when));
		json_object_set_new(summary, "report", report ? json_string(report) : json_null());
		if (ret_ran)
			json_object_set_new(summary, "retention", retention_result_json(&ret));
		rc = cli_print_json(ctx, summary);
		summary = NULL;
	} else {
		const char *name;
		json_t *v;
		printf("nightly run%s at %s: %zu services analysed, %zu skipped, %zu failed; %zu tests, %zu findings\n",
		       dry ? " (dry run)" : "", when, a.services, skipped, failed, a.ntests, a.nfindings);
		if (!dry)
			printf("pages: %zu enqueued, %zu sent, %zu failed, %zu pending\n", a.pages_enqueued,
			       pc.sent, pc.failed, pc.pending);
		json_object_foreach(services, name, v) {
			json_t *reason = json_object_get(v, "reason");
			printf("  %-24s %s", name, json_string_value(json_object_get(v, "status")));
			if (reason) {
				printf(": ");
				cli_put_safe(stdout, json_string_value(reason), 0);
			}
			putchar('\n');
		}
		for (size_t i = 0; i < a.ntests && a.tests[i].significant; i++) {
			const finding *f = &a.tests[i];
			printf("%-9s %-14s ", stats_severity_name(f->severity), finding_dir_name(f->direction));
			cli_put_safe(stdout, f->service, 0);
			printf(": %.2f%% -> %.2f%% (q %.2g) ", 100 * f->baseline_share, 100 * f->current_share,
			       f->q_value);
			cli_put_safe(stdout, f->function, 0);
			putchar('\n');
		}
		if (report) {
			printf("report: ");
			cli_put_safe(stdout, report, 0);
			putchar('\n');
		}
		if (ret_ran && !ret_failed)
			printf("retention: %" PRIu64 " captures moved to summary, %" PRIu64
			       " deleted, %" PRIu64 " blobs deleted\n",
			       ret.to_summary + ret.budget_to_summary, ret.deleted + ret.budget_deleted,
			       ret.blobs_deleted);
		rc = EXIT_OK;
	}
	if (rc == EXIT_OK && ret_failed)
		rc = EXIT_RUNTIME;
	else if (rc == EXIT_OK && ret.over_budget)
		rc = EXIT_GATE;
	goto out;
fail:
	if (run_id) {
		pr_error ignore = PR_ERROR_INIT;
		json_t *why = json_pack("{s:s}", "error", err.msg);
		run_finish(d, run_id, "failed", why, &ignore);
		json_decref(why);
	}
	cli_fail(ctx, &err);
	if (loaded && !dry)
		push_metrics(ctx, &cfg, &a, false, t0, failed, &pc);
	/* The run itself failed: for cron that is always exit 3. */
	rc = EXIT_RUNTIME;
out:
	if (locked)
		db_advisory_unlock(d, NIGHTLY_LOCK);
	free(report);
	json_decref(summary);
	json_decref(services);
	analysis_release(&a);
	for (size_t i = 0; i < nsvcs; i++)
		db_service_release(&svcs[i]);
	free(svcs);
	blob_store_free(bs);
	db_close(d);
	config_release(&cfg);
	return rc;
}

/* How long a run took, short: "0.4s", "42s", "3m05s", "1h02m"; "-" while it runs. */
static void format_took(char *out, size_t n, double secs)
{
	if (secs < 0)
		snprintf(out, n, "-");
	else if (secs < 10)
		snprintf(out, n, "%.1fs", secs);
	else if (secs < 60)
		snprintf(out, n, "%.0fs", secs);
	else if (secs < 3600)
		snprintf(out, n, "%dm%02ds", (int)secs / 60, (int)secs % 60);
	else
		snprintf(out, n, "%dh%02dm", (int)(secs / 3600), (int)secs % 3600 / 60);
}

/*
 * The rows of runs_list's query as a table that fits 80 columns: how long
 * each run took rather than when it finished, which --wide adds.
 */
static int print_runs(const cli_ctx *ctx, const PGresult *res)
{
	static const table_col cols[] = {
		{"ID", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"KIND", TABLE_WHOLE, 0, 0},
		{"STATUS", TABLE_WHOLE, 0, 0},
		{"STARTED", TABLE_WHOLE, 0, 0},
		{"FINISHED", TABLE_WHOLE | TABLE_WIDE_ONLY, 0, 0},
		{"DURATION", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"FINDINGS", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"FAILED", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
	};
	table *t = NULL;
	int rc = EXIT_OK;

	if (table_new(&t, cols, sizeof(cols) / sizeof(cols[0]), ctx->wide) < 0)
		goto oom;
	for (int i = 0; i < db_rows(res); i++) {
		char took[32];
		format_took(took, sizeof(took), strtod(db_get_text(res, i, 7), NULL));
		for (int k = 0; k < 5; k++)
			table_add(t, db_get_text(res, i, k)[0] ? db_get_text(res, i, k) : "-");
		table_add(t, took);
		table_add(t, db_get_text(res, i, 5)[0] ? db_get_text(res, i, 5) : "-");
		table_add(t, db_get_text(res, i, 6)[0] ? db_get_text(res, i, 6) : "-");
	}
	if (table_print(t, stdout) < 0)
		goto oom;
	goto out;
oom:
	cli_error(ctx, "out of memory");
	rc = EXIT_RUNTIME;
out:
	table_free(t);
	return rc;
}

static int runs_list(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"limit", required_argument, O_LIMIT, "N", "at most N runs (default 20)"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char sql[] =
		"select id, kind, status, to_char(started_at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
		" coalesce(to_char(finished_at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), ''),"
		" coalesce(detail->>'findings', ''), coalesce(detail->>'failed', ''),"
		" coalesce(extract(epoch from finished_at - started_at)::float8, -1)"
		" from runs order by id desc limit $1";
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	PGresult *res = NULL;
	db *d = NULL;
	const char *arg, *params[1];
	unsigned long long limit = 20;
	char lim[24];
	int c, rc = 0;

	if (cli_parser_new(&p, ctx, argc, argv, opts, "profreg runs list [--limit N] [--json]",
			   "List recent runs (nightly, analyze, post-deploy), newest first.") < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		if (c == O_LIMIT && cli_parse_u64(ctx, "limit", arg, 1, 100000, &limit) < 0)
			rc = EXIT_USAGE;
	cli_parser_free(p);
	if (c == CLI_HELP)
		return EXIT_OK;
	if (c == CLI_BAD || rc)
		return EXIT_USAGE;
	snprintf(lim, sizeof(lim), "%llu", limit);
	params[0] = lim;
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = db_exec(d, &res, &err, "listing runs", sql, 1, params)) < 0) {
		db_close(d);
		return cli_fail(ctx, &err);
	}
	if (ctx->json) {
		json_t *arr = json_array();
		for (int i = 0; i < db_rows(res); i++)
			json_array_append_new(arr, json_pack("{s:I,s:s,s:s,s:s,s:s}",
				"id", (json_int_t)db_get_i64(res, i, 0), "kind", db_get_text(res, i, 1),
				"status", db_get_text(res, i, 2), "started_at", db_get_text(res, i, 3),
				"finished_at", db_get_text(res, i, 4)));
		rc = cli_print_json(ctx, json_pack("{s:o}", "runs", arr));
	} else {
		rc = print_runs(ctx, res);
	}
	db_result_free(res);
	db_close(d);
	return rc;
}

int cmd_runs(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_command cmds[] = {
		{"list", runs_list, "list recent runs"},
		{NULL, NULL, NULL},
	};
	return cli_dispatch(ctx, cmds, ctx->prog, argc - 1, argv + 1);
}

int cmd_run(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {{NULL, 0, 0, NULL, NULL}};
	static const char sql[] =
		"select jsonb_build_object('id', r.id, 'kind', r.kind, 'status', r.status,"
		" 'started_at', r.started_at, 'finished_at', r.finished_at, 'detail', r.detail,"
		" 'findings', coalesce((select jsonb_agg(jsonb_build_object('id', f.id,"
		"   'service', s.name, 'type', f.profile_type, 'function', f.function,"
		"   'direction', f.direction, 'severity', f.severity, 'baseline_share', f.baseline_share,"
		"   'current_share', f.current_share, 'q_value', f.q_value, 'status', f.status)"
		"   order by f.score desc)"
		"   from findings f join services s on s.id = f.service_id"
		"   where f.id in (select finding_id from run_findings rf where rf.run_id = r.id)), '[]'))"
		" from runs r where r.id = $1";
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	PGresult *res = NULL;
	db *d = NULL;
	const char *arg, *params[1];
	unsigned long long id = 0;
	json_t *doc;
	int c, first, rc = 0;

	if (argc > 1 && strcmp(argv[1], "show") == 0) {
		argc--;
		argv++;
	}
	if (cli_parser_new(&p, ctx, argc, argv, opts, "profreg run show ID [--json]",
			   "Show a run: its parameters, each service's outcome and its findings.") < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		;
	first = cli_optind(p);
	cli_parser_free(p);
	if (c == CLI_HELP)
		return EXIT_OK;
	if (c == CLI_BAD)
		return EXIT_USAGE;
	if (argc - first != 1 || cli_parse_u64(ctx, "ID", argv[first], 1, INT64_MAX, &id) < 0) {
		if (argc - first != 1)
			cli_error(ctx, "expected one run ID (see --help)");
		return EXIT_USAGE;
	}
	params[0] = argv[first];
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = db_exec(d, &res, &err, "reading the run", sql, 1, params)) < 0) {
		db_close(d);
		return cli_fail(ctx, &err);
	}
	if (db_rows(res) != 1) {
		pr_error_set(&err, PR_ENOTFOUND, "run %llu not found", id);
		db_result_free(res);
		db_close(d);
		return cli_fail(ctx, &err);
	}
	doc = json_loads(db_get_text(res, 0, 0), 0, NULL);
	db_result_free(res);
	db_close(d);
	/* Names in the document are printed by jansson, escaped as JSON. */
	return cli_print_json(ctx, doc);
}
