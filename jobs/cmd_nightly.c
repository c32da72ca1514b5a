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
#include "runs.h"
#include "suspects.h"
#include "deploys.h"
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

/*
 * Suspect commits of the night's regressions, computed once and stored
 * with the run: the range is the one recorded with the deploy of the
 * finding's release (post-deploy), read from the service's repository.
 */
static int store_suspects(db *d, const config *cfg, const analysis *a, int64_t run_id,
			  pr_error *err)
{
	int rc = 0;

	for (size_t i = 0; i < a->ntests && a->tests[i].significant && rc == 0; i++) {
		const finding *f = &a->tests[i];
		const config_service *cs = config_service_find(cfg, f->service);
		suspects_range range;
		deploy dep;
		json_t *s;
		bool have = false;

		if (f->direction != FINDING_REGRESSION || !f->id)
			continue;
		memset(&dep, 0, sizeof(dep));
		rc = deploy_find_release(&dep, d, f->service_id, f->current_release, err);
		if (rc < 0 && rc != PR_ENOTFOUND)
			return rc;
		have = rc == 0;
		if ((rc = suspects_range_load(&range, cs ? cs->repo : NULL,
					      have ? dep.previous_sha : NULL,
					      have ? dep.commit_sha : NULL, err)) < 0)
			return rc;
		if (!have)
			snprintf(range.note, sizeof(range.note),
				 "No deploy of release '%.200s' was recorded: no commit range.",
				 f->current_release);
		s = suspects_for_file(&range, f->file);
		suspects_range_release(&range);
		if (!s)
			return pr_error_set(err, PR_ENOMEM, "out of memory");
		rc = suspects_store(d, run_id, f->id, s, err);
	}
	return rc;
}

/*
 * A night succeeded when every service it was asked for was analysed or
 * had a reason not to be, none failed, and at least one was analysed: a
 * night that analysed nothing has checked nothing, and must not look
 * like one that found nothing.
 */
static const char *night_status(size_t analysed, size_t failed)
{
	return failed || !analysed ? "incomplete" : "ok";
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
	const char *arg, *only[64], *at_s = NULL, *status = "ok";
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
			   "Exit 0 when every service was analysed or had a reason not to be and at\n"
			   "least one was analysed, findings or not; 1 when retention found protected\n"
			   "data alone over the storage budget; 3 when the run or its retention failed,\n"
			   "a service failed (an unreadable drop folder), or no service was analysed.\n"
			   "With --quiet nothing is printed unless something is wrong.") < 0)
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
	if (c == 0 && !rc && cli_optind(p) != argc) {
		cli_error(ctx, "unexpected argument '%s' (see --help)", argv[cli_optind(p)]);
		rc = EXIT_USAGE;
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
	at = cfg.analysis.at_us ? cfg.analysis.at_us : time_now_us();
	if (at_s && time_parse(&at, at_s) < 0) {
		cli_error(ctx, "'--at %s' is not an ISO 8601 time", at_s);
		config_release(&cfg);
		json_decref(services);
		return EXIT_USAGE;
	}
	/* Refused before any work: not after a run recorded as ok. */
	if (!dry && cfg.retention.after_nightly && retention_check_at(at, &err) < 0) {
		cli_fail(ctx, &err);
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
	for (size_t k = 0; k < nonly; k++) {
		bool known = false;
		for (size_t i = 0; i < nsvcs && !known; i++)
			known = strcmp(svcs[i].name, only[k]) == 0;
		/* An unknown --service is a typo, never an empty success. */
		if (!known) {
			db_service probe = {0};
			rc = db_service_get(d, &probe, only[k], &err);
			db_service_release(&probe);
			if (rc == 0)
				rc = pr_error_set(&err, PR_ENOTFOUND, "service '%s' not found", only[k]);
			goto fail;
		}
	}
	if (!dry) {
		json_t *params = json_pack("{s:s,s:I,s:I,s:b}", "at", when, "at_us", (json_int_t)at,
					   "night_us", (json_int_t)night, "dry_run", 0);
		rc = runs_begin(&run_id, d, "nightly", 0, params, &err);
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
		rc = 0;
		if (serr.code) {
			json_object_set_new(services, s->name, outcome("failed", serr.msg, have_src ? &src : NULL));
			failed++;
		} else if (a.nskipped > before) {
			json_object_set_new(services, s->name,
				outcome("skipped", a.skipped[a.nskipped - 1].reason, have_src ? &src : NULL));
			skipped++;
		} else if (src.failed) {
			/* Files that would not ingest are the collector's fault: say so, fail the night. */
			json_object_set_new(services, s->name,
				outcome("failed", src.first_error, have_src ? &src : NULL));
			failed++;
		} else {
			json_object_set_new(services, s->name,
				outcome("analysed", NULL, have_src ? &src : NULL));
		}
		source_report_release(&src);
	}
	if ((rc = analysis_finish(&a, &err)) < 0)
		goto fail;
	if (!dry && ((rc = analysis_store(&a, d, run_id, &cfg, &err)) < 0 ||
		     (rc = store_suspects(d, &cfg, &a, run_id, &err)) < 0))
		goto fail;
	/* Pages wait in the outbox on delivery problems; only the database fails the run. */
	if (!dry && (rc = pager_flush(d, &cfg, NULL, &pc, &err)) < 0)
		goto fail;
	if (pc.first_error[0])
		cli_warn(ctx, "paging: %s", pc.first_error);
	status = night_status(a.services, failed);
	summary = json_pack("{s:I,s:I,s:I,s:I,s:I,s:O,s:{s:I,s:I,s:I,s:I,s:I}}", "analysed", (json_int_t)a.services,
			    "tests", (json_int_t)a.ntests, "findings", (json_int_t)a.nfindings,
			    "failed", (json_int_t)failed, "skipped", (json_int_t)skipped,
			    "services", services,
			    "pages", "enqueued", (json_int_t)a.pages_enqueued, "sent", (json_int_t)pc.sent,
			    "failed", (json_int_t)pc.failed, "pending", (json_int_t)pc.pending,
			    "alerts_refreshed", (json_int_t)pc.refreshed);
	if (!dry && (rc = runs_finish(d, run_id, status, summary, &err)) < 0)
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
		/* Only a complete night resets the staleness alert's clock. */
		push_metrics(ctx, &cfg, &a, strcmp(status, "ok") == 0, t0, failed, &pc);
	}

	if (ctx->json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < a.ntests && a.tests[i].significant; i++)
			json_array_append_new(arr, analysis_finding_json(&a.tests[i]));
		json_object_set_new(summary, "schema_version", json_integer(1));
		json_object_set_new(summary, "status", json_string(status));
		json_object_set_new(summary, "findings_list", arr);
		json_object_set_new(summary, "run_id", json_integer((json_int_t)run_id));
		json_object_set_new(summary, "at", json_string(when));
		json_object_set_new(summary, "report", report ? json_string(report) : json_null());
		if (ret_ran)
			json_object_set_new(summary, "retention", retention_result_json(&ret));
		rc = cli_print_json(ctx, summary);
		summary = NULL;
	} else if (!ctx->quiet) {
		const char *name;
		json_t *v;
		printf("nightly run%s at %s: %zu services analysed, %zu skipped, %zu failed; %zu tests, %zu findings\n",
		       dry ? " (dry run)" : "", when, a.services, skipped, failed, a.ntests, a.nfindings);
		if (!dry)
			printf("pages: %zu enqueued, %zu sent, %zu failed, %zu pending\n", a.pages_enqueued,
			       pc.sent, pc.failed, pc.pending);
		json_object_foreach(services, name, v) {
			json_t *reason = json_object_get(v, "reason");
			printf("  ");
			cli_put_safe(stdout, name, 24);
			printf(" %s", json_string_value(json_object_get(v, "status")));
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
	/* What cron mails when --quiet hides the rest: why the night is not a success. */
	if (strcmp(status, "ok") != 0) {
		const char *name;
		json_t *v;
		json_object_foreach(services, name, v)
			if (strcmp(json_string_value(json_object_get(v, "status")), "failed") == 0)
				cli_error(ctx, "service '%s' failed: %s", name,
					  json_string_value(json_object_get(v, "reason")));
		if (!a.services)
			cli_error(ctx, "no service was analysed (%zu skipped, %zu failed): the night "
				  "checked nothing", skipped, failed);
		rc = EXIT_RUNTIME;
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
		runs_finish(d, run_id, "failed", why, &ignore);
		json_decref(why);
	}
	cli_fail(ctx, &err);
	if (loaded && !dry)
		push_metrics(ctx, &cfg, &a, false, t0, failed, &pc);
	/* The run itself failed: for cron that is always exit 3, but a typo is exit 4. */
	rc = err.code == PR_ENOTFOUND ? EXIT_DATA : EXIT_RUNTIME;
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

static int runs_list_cmd(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"limit", required_argument, O_LIMIT, "N", "at most N runs (default 20)"},
		{NULL, 0, 0, NULL, NULL},
	};
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	db *d = NULL;
	json_t *runs = NULL, *r;
	const char *arg;
	unsigned long long limit = 20;
	size_t i;
	int c, rc = 0;

	if (cli_parser_new(&p, ctx, argc, argv, opts, "profreg runs list [--limit N] [--json]",
			   "List recent runs (nightly, analyze, post-deploy, retention), newest first.") < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		if (c == O_LIMIT && cli_parse_u64(ctx, "limit", arg, 1, 100000, &limit) < 0)
			rc = EXIT_USAGE;
	cli_parser_free(p);
	if (c == CLI_HELP)
		return EXIT_OK;
	if (c == CLI_BAD || rc)
		return EXIT_USAGE;
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 || (rc = runs_list(&runs, d, limit, &err)) < 0) {
		db_close(d);
		return cli_fail(ctx, &err);
	}
	db_close(d);
	if (ctx->json)
		return cli_print_json(ctx, json_pack("{s:o}", "runs", runs));
	printf("%-6s %-12s %-11s %-20s %-20s %8s\n", "ID", "KIND", "STATUS", "STARTED", "FINISHED",
	       "FINDINGS");
	json_array_foreach(runs, i, r) {
		const char *fin = json_string_value(json_object_get(r, "finished_at"));
		json_t *nf = json_object_get(r, "findings");
		printf("%-6" JSON_INTEGER_FORMAT " %-12s %-11s %-20s %-20s ",
		       json_integer_value(json_object_get(r, "id")),
		       json_string_value(json_object_get(r, "kind")),
		       json_string_value(json_object_get(r, "status")),
		       json_string_value(json_object_get(r, "started_at")), fin ? fin : "-");
		if (json_is_integer(nf))
			printf("%8" JSON_INTEGER_FORMAT "\n", json_integer_value(nf));
		else
			printf("%8s\n", "-");
	}
	json_decref(runs);
	return EXIT_OK;
}

int cmd_runs(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_command cmds[] = {
		{"list", runs_list_cmd, "list recent runs"},
		{NULL, NULL, NULL},
	};
	return cli_dispatch(ctx, cmds, ctx->prog, argc - 1, argv + 1);
}

/* A run as text: what it was, how it ended, each service's outcome, its findings. */
static void print_run(const json_t *run)
{
	const json_t *detail = json_object_get(run, "detail"), *svcs, *v;
	const char *fin = json_string_value(json_object_get(run, "finished_at"));
	const char *svc = json_string_value(json_object_get(run, "service"));
	const char *name, *err = json_string_value(json_object_get(detail, "error"));
	size_t i;

	printf("run %" JSON_INTEGER_FORMAT ": %s", json_integer_value(json_object_get(run, "id")),
	       json_string_value(json_object_get(run, "kind")));
	if (svc) {
		printf(" of ");
		cli_put_safe(stdout, svc, 0);
	}
	printf(", %s\nstarted  %s\nfinished %s\n", json_string_value(json_object_get(run, "status")),
	       json_string_value(json_object_get(run, "started_at")), fin ? fin : "-");
	if (err) {
		printf("error:   ");
		cli_put_safe(stdout, err, 0);
		putchar('\n');
	}
	if (json_string_value(json_object_get(detail, "verdict")))
		printf("verdict  %s\n", json_string_value(json_object_get(detail, "verdict")));
	if ((svcs = json_object_get(detail, "services")) && json_object_size(svcs)) {
		printf("\nservices:\n");
		json_object_foreach((json_t *)svcs, name, v) {
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
	}
	printf("\nfindings: %zu\n", json_array_size(json_object_get(run, "findings")));
	json_array_foreach(json_object_get(run, "findings"), i, v) {
		printf("  %-6" JSON_INTEGER_FORMAT " %-9s %-14s ",
		       json_integer_value(json_object_get(v, "id")),
		       json_string_value(json_object_get(v, "severity")),
		       json_string_value(json_object_get(v, "direction")));
		cli_put_safe(stdout, json_string_value(json_object_get(v, "service")), 0);
		printf(" %.2f%% -> %.2f%% ", 100 * json_number_value(json_object_get(v, "baseline_share")),
		       100 * json_number_value(json_object_get(v, "current_share")));
		cli_put_safe(stdout, json_string_value(json_object_get(v, "function")), 0);
		putchar('\n');
	}
}

int cmd_run(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {{NULL, 0, 0, NULL, NULL}};
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	db *d = NULL;
	const char *arg;
	unsigned long long id = 0;
	json_t *doc = NULL;
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
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 || (rc = runs_show(&doc, d, (int64_t)id, &err)) < 0) {
		db_close(d);
		return cli_fail(ctx, &err);
	}
	db_close(d);
	/* Names in the document are printed by jansson, escaped as JSON. */
	if (ctx->json)
		return cli_print_json(ctx, doc);
	print_run(doc);
	json_decref(doc);
	return EXIT_OK;
}
