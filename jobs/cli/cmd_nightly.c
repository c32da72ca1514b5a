/*
 * cmd_nightly.c: `profreg nightly` (the job is jobs/nightly.c), and
 * `profreg runs list` / `run show`.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/commands.h"
#include "jobs/cli/context.h"
#include "jobs/cli/deadline.h"
#include "jobs/cli/exitcode.h"
#include "baselines/findings.h"
#include "jobs/nightly.h"
#include "jobs/reportdata.h"
#include "jobs/runs.h"
#include "jobs/cli/table.h"
#include "common/timeutil.h"
#include "reports/measure.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { O_AT = 1400, O_SERVICE, O_DRY, O_NIGHT, O_LIMIT, O_WORKERS, O_DEADLINE, O_NO_CATCH_UP };

/*
 * How long a nightly may take by default: a night that hangs (a lock held
 * elsewhere, a server that stopped answering) must not hold the nightly's
 * lock into the next night's run.
 */
#define NIGHTLY_DEADLINE_US (12 * 3600 * 1000000LL)

/*
 * A function's name on a summary line, cut in the middle past this many
 * columns: C++ template names of several KB made lines of 7 KB in cron
 * mail. The reports and `finding show` have the whole name.
 */
#define NIGHTLY_NAME_COLS 120

static void put_name(const char *s)
{
	buf b = BUF_INIT;

	if (!s)
		s = "";
	if (table_fit(&b, s, NIGHTLY_NAME_COLS) < 0)
		cli_put_safe(stdout, s, 0);
	else
		fputs(b.ptr ? b.ptr : "", stdout);
	buf_release(&b);
}

/*
 * The findings a run closed, one line each with why (fixed by a release,
 * rolled back, went away): a night that closes a paged finding says so.
 * Each function names its type when `types`. Nothing when there are none.
 */
static void print_closed_as(const json_t *closed, bool types, const char *by)
{
	const json_t *v;
	size_t i;

	if (!json_array_size(closed))
		return;
	printf("closed by %s: %zu finding%s\n", by, json_array_size(closed),
	       json_array_size(closed) == 1 ? "" : "s");
	json_array_foreach(closed, i, v) {
		const char *fn = json_string_value(json_object_get(v, "function"));
		const char *why = json_string_value(json_object_get(v, "reason"));
		const char *sev = json_string_value(json_object_get(v, "severity"));
		printf("  %-6" JSON_INTEGER_FORMAT " ",
		       json_integer_value(json_object_get(v, "id")));
		cli_put_safe(stdout, json_string_value(json_object_get(v, "service")), 0);
		printf(": ");
		if (types) {
			cli_put_safe(stdout, json_string_value(json_object_get(v, "type")), 0);
			printf(": ");
		}
		put_name(fn ? fn : "whole-service cost");
		printf(" of release '");
		cli_put_safe(stdout, json_string_value(json_object_get(v, "release")), 0);
		printf("' (");
		if (sev && strcmp(sev, "none") != 0)
			printf("%s ", sev);
		cli_put_safe(stdout, json_string_value(json_object_get(v, "direction")), 0);
		printf("): ");
		cli_put_safe(stdout,
			     why && *why ? why : json_string_value(json_object_get(v, "state")), 0);
		putchar('\n');
	}
}

static void print_closed(const json_t *closed, bool types)
{
	print_closed_as(closed, types, "this run");
}

/* Whether the closed findings are of more than one type, or of another than `type`. */
static bool closed_mix_types(const json_t *closed, const char *type)
{
	const json_t *v;
	size_t i;

	json_array_foreach(closed, i, v) {
		const char *t = json_string_value(json_object_get(v, "type"));
		if (!t)
			continue;
		if (type && strcmp(type, t) != 0)
			return true;
		type = t;
	}
	return false;
}

/*
 * Whether finding f's line names its type: when the night's findings are
 * of more than one type, or f's service was judged on more than one type
 * that night or has more than one in the config. 36.83% of heap bytes in
 * use beside 36.83% of CPU time, unlabelled, read as the same measure.
 */
static bool names_type(const nightly_result *r, const config *cfg, const finding *f)
{
	const config_service *cs = config_service_find(cfg, f->service);
	const char *judged = NULL;

	if (!f->type)
		return false;
	if (cs && cs->ntypes > 1)
		return true;
	for (size_t i = 0; i < r->a.ntests && r->a.tests[i].significant; i++)
		if (r->a.tests[i].type && strcmp(r->a.tests[i].type, f->type) != 0)
			return true;
	for (size_t i = 0; i < r->a.njudged; i++) {
		const analysis_judged *jd = &r->a.judged[i];
		if (jd->service_id != f->service_id)
			continue;
		if (judged && strcmp(judged, jd->type) != 0)
			return true;
		judged = jd->type;
	}
	return false;
}

static void print_night(const nightly_result *r, const config *cfg, bool dry, const json_t *closed)
{
	char when[TIME_FMT_MAX];
	const char *name;
	size_t nshift = 0;
	json_t *v;

	time_format(when, r->at_us);
	printf("nightly run%s at %s: %zu services analysed, %zu skipped, %zu failed; "
	       "%zu tests, %zu findings\n",
	       dry ? " (dry run)" : "", when, r->analysed, r->skipped, r->failed, r->a.ntests,
	       r->a.nfindings);
	if (!dry)
		printf("pages: %zu enqueued, %zu sent, %zu failed, %zu pending\n",
		       r->a.pages_enqueued, r->pages.sent, r->pages.failed, r->pages.pending);
	if (!dry && r->a.evidence_without_blob)
		printf("%zu evidence capture%s cut to a summary by retention during the night: "
		       "raw profile gone, top rows kept\n", r->a.evidence_without_blob,
		       r->a.evidence_without_blob == 1 ? " was" : "s were");
	if (!dry && r->a.evidence_deleted)
		printf("%zu baseline capture%s of the regressions found no longer exist%s "
		       "(deleted by retention's row budget after the analysis read them): "
		       "not pinned\n", r->a.evidence_deleted,
		       r->a.evidence_deleted == 1 ? "" : "s",
		       r->a.evidence_deleted == 1 ? "s" : "");
	if (!dry && r->a.carried)
		printf("%zu regression%s carried from an earlier release's finding, which paged: "
		       "not paged again\n", r->a.carried, r->a.carried == 1 ? "" : "s");
	if (!dry && r->a.accepted)
		printf("%zu regression%s within a rise accepted by hand (finding resolve "
		       "--accept): not paged\n",
		       r->a.accepted, r->a.accepted == 1 ? "" : "s");
	json_object_foreach(r->services, name, v) {
		json_t *reason = json_object_get(v, "reason");
		json_int_t deleted;
		printf("  ");
		cli_put_safe(stdout, name, 24);
		printf(" %s", json_string_value(json_object_get(v, "status")));
		if (reason) {
			printf(": ");
			cli_put_safe(stdout, json_string_value(reason), 0);
		}
		deleted = json_integer_value(
			json_object_get(json_object_get(v, "collected"), "deleted_by_retention"));
		/* Offered again by a source, not stored: what retention deleted stays deleted. */
		if (deleted > 0)
			printf(" (%" JSON_INTEGER_FORMAT " deleted by retention, not stored again)",
			       deleted);
		putchar('\n');
	}
	for (size_t i = 0; i < r->a.ntests && r->a.tests[i].significant; i++) {
		const finding *f = &r->a.tests[i];
		char vals[MEASURE_TEXT_MAX];
		/* Moved only because another function did: counted below, listed in the report. */
		if (f->direction == FINDING_RELATIVE_SHIFT) {
			nshift++;
			continue;
		}
		printf("%-9s %-14s ", stats_severity_name(f->severity),
		       finding_dir_name(f->direction));
		cli_put_safe(stdout, f->service, 0);
		printf(": %s (q %.2g) ",
		       measure_pair(vals, sizeof(vals), f->cost_unit, f->baseline_share,
				    f->current_share, " -> "),
		       f->q_value);
		if (names_type(r, cfg, f)) {
			cli_put_safe(stdout, f->type, 0);
			printf(": ");
		}
		put_name(f->function);
		if (f->renamed_from) {
			printf(" (was ");
			put_name(f->renamed_from);
			putchar(')');
		}
		if (f->accepted)
			printf(" (accepted level: finding %" PRId64 ")", f->carried_from);
		putchar('\n');
	}
	if (nshift)
		printf("and %zu relative shift%s (shares that moved only because others did; "
		       "severity none)%s\n", nshift, nshift == 1 ? "" : "s",
		       r->report ? ", listed in the report" : "");
	{
		const char *first = NULL;
		bool mix = false;
		for (size_t i = 0; i < r->a.ntests && r->a.tests[i].significant; i++) {
			mix |= first && strcmp(first, r->a.tests[i].type) != 0;
			first = r->a.tests[i].type;
		}
		print_closed(closed, mix || closed_mix_types(closed, first));
	}
	if (r->report) {
		printf("report: ");
		cli_put_safe(stdout, r->report, 0);
		putchar('\n');
	}
	if (r->retention_ran && !r->retention_failed)
		printf("retention: %" PRIu64 " captures moved to summary, %" PRIu64
		       " deleted, %" PRIu64 " blobs deleted\n",
		       r->retention.to_summary + r->retention.budget_to_summary,
		       r->retention.deleted + r->retention.budget_deleted,
		       r->retention.blobs_deleted);
}

/* One line a missed night run first: what its run did, where its report is. */
static void print_caught(const nightly_result *r, json_t *const *closed)
{
	char when[TIME_FMT_MAX], by[64];

	for (size_t i = 0; i < r->ncaught; i++) {
		const nightly_night *n = &r->caught[i];
		time_format(when, n->at_us);
		printf("caught up the missed night to %s: run %" PRId64 ", %zu services analysed, "
		       "%zu skipped, %zu failed; %zu tests, %zu findings; %zu pages enqueued",
		       when, n->run_id, n->analysed, n->skipped, n->failed, n->tests, n->findings,
		       n->pages_enqueued);
		if (n->report) {
			printf("; report ");
			cli_put_safe(stdout, n->report, 0);
		}
		putchar('\n');
		/* A missed night that closed a paged finding says so too. */
		snprintf(by, sizeof(by), "run %" PRId64, n->run_id);
		if (closed && closed[i])
			print_closed_as(closed[i], closed_mix_types(closed[i], NULL), by);
	}
}

/*
 * The findings each missed night's run closed, into a new array of
 * r->ncaught arrays (a NULL entry: it could not be read, said); NULL
 * when there are none or out of memory.
 */
static json_t **caught_closed(const cli_ctx *ctx, db *d, const nightly_result *r)
{
	json_t **out = r->ncaught ? calloc(r->ncaught, sizeof(*out)) : NULL;

	for (size_t i = 0; out && i < r->ncaught; i++) {
		pr_error cerr = PR_ERROR_INIT;
		if (findings_closed_by_run(&out[i], d, r->caught[i].run_id, NULL, &cerr) < 0)
			cli_warn(ctx, "cannot list the findings run %" PRId64 " closed: %s",
				 r->caught[i].run_id, cerr.msg);
	}
	return out;
}

/* The missed nights run first, and those left out, as data. */
static json_t *caught_json(const nightly_result *r, json_t *const *closed)
{
	char when[TIME_FMT_MAX], last[TIME_FMT_MAX];
	json_t *arr = json_array(), *o;

	for (size_t i = 0; i < r->ncaught && arr; i++) {
		const nightly_night *n = &r->caught[i];
		json_t *night;
		time_format(when, n->at_us);
		night = json_pack("{s:I,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:O,s:s?}", "run_id",
				  (json_int_t)n->run_id, "at", when, "status", n->status,
				  "analysed", (json_int_t)n->analysed, "skipped",
				  (json_int_t)n->skipped, "failed", (json_int_t)n->failed, "tests",
				  (json_int_t)n->tests, "findings", (json_int_t)n->findings,
				  "pages_enqueued", (json_int_t)n->pages_enqueued, "services",
				  n->services, "report", n->report);
		if (night)
			json_object_set_new(night, "closed",
					    closed && closed[i] ? json_incref(closed[i])
								: json_array());
		json_array_append_new(arr, night);
	}
	time_format(when, r->beyond_first_us);
	time_format(last, r->beyond_last_us);
	o = json_pack("{s:o}", "nights", arr);
	if (o && r->beyond)
		json_object_set_new(o, "not_caught_up",
				    json_pack("{s:I,s:s,s:s}", "nights", (json_int_t)r->beyond,
					      "first", when, "last", last));
	return o;
}

static int print_night_json(const cli_ctx *ctx, const nightly_result *r, json_t *closed,
			    json_t *const *caught)
{
	char when[TIME_FMT_MAX];
	json_t *arr = json_array(), *o;

	time_format(when, r->at_us);
	for (size_t i = 0; i < r->a.ntests && r->a.tests[i].significant; i++)
		json_array_append_new(arr, analysis_finding_json(&r->a.tests[i]));
	o = json_pack("{s:i,s:s,s:I,s:s,s:I,s:I,s:I,s:I,s:I,s:O,s:o,s:{s:I,s:I,s:I,s:I,s:I},s:s?}",
		      "schema_version", 1, "status", r->status, "run_id", (json_int_t)r->run_id,
		      "at", when, "analysed", (json_int_t)r->analysed,
		      "tests", (json_int_t)r->a.ntests, "findings", (json_int_t)r->a.nfindings,
		      "failed", (json_int_t)r->failed, "skipped", (json_int_t)r->skipped,
		      "services", r->services, "findings_list", arr,
		      "pages", "enqueued", (json_int_t)r->a.pages_enqueued, "sent",
		      (json_int_t)r->pages.sent, "failed", (json_int_t)r->pages.failed, "pending",
		      (json_int_t)r->pages.pending,
		      "alerts_refreshed", (json_int_t)r->pages.refreshed,
		      "report", r->report);
	if (o && r->retention_ran)
		json_object_set_new(o, "retention", retention_result_json(&r->retention));
	if (o && r->tasks)
		json_object_set(o, "tasks", r->tasks);
	if (o && (r->ncaught || r->beyond))
		json_object_set_new(o, "caught_up", caught_json(r, caught));
	/* The findings the run closed (fixed, rolled back, went away), with why. */
	if (o && closed)
		json_object_set(o, "closed", closed);
	else if (o)
		json_object_set_new(o, "closed", json_array());
	return cli_print_json(ctx, o);
}

int cmd_nightly(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"at", required_argument, O_AT, "TIME",
		 "the night ends at TIME (default now; without a zone, UTC)"},
		{"service", required_argument, O_SERVICE, "NAME", "only this service (repeatable)"},
		{"night", required_argument, O_NIGHT, "DURATION",
		 "length of the analysed window (default 24h)"},
		{"dry-run", no_argument, O_DRY, NULL, "analyse and print; store no findings"},
		{"workers", no_argument, O_WORKERS, NULL,
		 "spread the services over `profreg worker` processes (config: workers)"},
		{"deadline", required_argument, O_DEADLINE, "DURATION",
		 "stop with exit 3 if the run has not ended by then (default 12h)"},
		{"no-catch-up", no_argument, O_NO_CATCH_UP, NULL,
		 "judge only this night, not the nights missed before it"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char usage[] =
		"profreg nightly [--at T] [--service S]... [--night 24h] [--dry-run] [--workers]\n"
		"                [--deadline 12h] [--no-catch-up] [--json]";
	static const char desc[] =
		"Collect each enabled service's new captures, analyse the night against\n"
		"its rolling baseline (all services in one FDR family) and record the run.\n"
		"Writes the run's HTML, Markdown and JSON reports under the reports directory\n"
		"and, with retention.after_nightly in the config, runs retention at the end.\n"
		"Exit 0 when every service was analysed or had a reason not to be and at\n"
		"least one was analysed, findings or not; 1 when retention found protected\n"
		"data alone over the storage budget; 3 when the run or its retention failed,\n"
		"a service failed (an unreadable drop folder), no service was analysed, or\n"
		"a page was not delivered (it waits in the outbox for the next run).\n"
		"With --workers (or workers.enabled) each service is a task that `profreg\n"
		"worker` processes claim; this process works tasks too while it waits, then\n"
		"adjusts, stores, pages and reports once. A run not ended by --deadline (a\n"
		"lock held elsewhere, a server that hangs) stops with exit 3 and one line;\n"
		"the next run marks it interrupted. With --quiet nothing is printed\n"
		"unless something is wrong.\n"
		"Nights missed since the newest one a nightly finished (the machine was\n"
		"down) are run first, oldest first, each as its own run with its report\n"
		"and pages, one line each; at most analysis.window_days of them, the\n"
		"older ones named and left out. The exit code is the worst night's.\n"
		"--no-catch-up, --service, --dry-run and an --at at or before the newest\n"
		"finished night judge that night alone. --at without a zone is UTC.";
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	config cfg;
	db *d = NULL, *lease_db = NULL;
	blob_store *bs = NULL;
	const char *arg, *only[64];
	char wname[192];
	tasks_worker w;
	bool workers = false;
	int64_t deadline_us = NIGHTLY_DEADLINE_US;
	const char *deadline_arg = "12h";
	char deadline_line[300];
	cli_deadline watch;
	nightly_opts o;
	nightly_result r;
	json_t *closed = NULL, **caught = NULL;
	bool bad = false;
	int c, rc, status;

	memset(&o, 0, sizeof(o));
	memset(&r, 0, sizeof(r));
	memset(&cfg, 0, sizeof(cfg));
	memset(&watch, 0, sizeof(watch));
	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		switch (c) {
		case O_DEADLINE:
			if (time_parse_duration(&deadline_us, arg) < 0 || deadline_us <= 0) {
				cli_error(ctx, "'--deadline %s' is not a duration like 12h", arg);
				bad = true;
			}
			deadline_arg = arg;
			break;
		case O_AT:
			if (time_parse(&o.at_us, arg) < 0) {
				cli_error(ctx, "'--at %s' is not an ISO 8601 time", arg);
				bad = true;
			}
			break;
		case O_DRY: o.dry_run = true; break;
		case O_NO_CATCH_UP: o.no_catch_up = true; break;
		case O_WORKERS: workers = true; break;
		case O_SERVICE:
			if (o.nonly == sizeof(only) / sizeof(only[0])) {
				cli_error(ctx, "at most %zu --service options", o.nonly);
				bad = true;
				break;
			}
			only[o.nonly++] = arg;
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
	cli_say_on_signal(ctx, "the next nightly marks its run interrupted");
	o.only = only;
	snprintf(deadline_line, sizeof(deadline_line),
		 "%s: the run did not end within the deadline (--deadline %s): the database, "
		 "a source or a worker did not answer in time (a lock held by another session, "
		 "a server that hangs); stopped, run it again",
		 ctx->prog ? ctx->prog : "profreg", deadline_arg);
	o.deadline_us = (int64_t)(time_mono() * 1e6) + deadline_us;
	if ((rc = cli_deadline_start(&watch, deadline_us, deadline_line, &err)) < 0)
		goto fail;
	if ((rc = ctx_config_load(ctx, &cfg, &err)) < 0)
		goto fail;
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 || (rc = ctx_blobs_open(ctx, &bs, &err)) < 0) {
		pr_error ignore = PR_ERROR_INIT;
		if (!o.dry_run)
			nightly_push_failure(&cfg, &ignore);
		goto fail;
	}
	if ((workers || cfg.workers.enabled) && !o.dry_run) {
		/* The lease of a task this process works is kept on a second connection. */
		if ((rc = ctx_db_open(ctx, &lease_db, &err)) < 0)
			goto fail;
		memset(&w, 0, sizeof(w));
		tasks_worker_name(wname, sizeof(wname));
		w.id = wname;
		w.lease_s = cfg.workers.lease_s;
		w.max_attempts = (int)cfg.workers.max_attempts;
		w.max_task_s = cfg.workers.task_timeout_s;
		w.lease_db = lease_db;
		o.worker = &w;
		o.coordinator_works = cfg.workers.coordinator_works;
		o.poll_s = cfg.workers.poll_ms / 1000.0;
	}
	{
		job_env env = {&cfg, d, bs, ctx->home, NULL};
		rc = nightly_run(&r, &env, &o, &err);
		cli_deadline_stop(&watch);
		if (rc < 0)
			goto fail;
	}
	for (size_t i = 0; i < r.notes.n; i++)
		cli_warn(ctx, "%s", r.notes.lines[i]);
	/* What the night closed is said, not only counted; the night stands without it. */
	if (r.run_id && (ctx->json || !ctx->quiet)) {
		pr_error cerr = PR_ERROR_INIT;
		if (findings_closed_by_run(&closed, d, r.run_id, NULL, &cerr) < 0)
			cli_warn(ctx, "cannot list the findings the run closed: %s", cerr.msg);
	}
	if (r.ncaught && (ctx->json || !ctx->quiet))
		caught = caught_closed(ctx, d, &r);
	if (ctx->json) {
		status = print_night_json(ctx, &r, closed, caught);
	} else {
		if (!ctx->quiet) {
			print_caught(&r, caught);
			print_night(&r, &cfg, o.dry_run, closed);
		}
		status = EXIT_OK;
	}
	/* Never judged: said even under --quiet, as nothing else would. */
	if (r.beyond) {
		char a[TIME_FMT_MAX], b[TIME_FMT_MAX];
		time_format(a, r.beyond_first_us);
		time_format(b, r.beyond_last_us);
		cli_error(ctx,
			  "%zu missed night%s, to %s through %s, older than the baseline "
			  "window (analysis.window_days): not caught up; run one by hand with "
			  "'nightly --at TIME --no-catch-up' if need be",
			  r.beyond, r.beyond == 1 ? "" : "s", a, b);
	}
	/* A missed night's failure sets the exit code as the asked night's would. */
	for (size_t i = 0; i < r.ncaught; i++) {
		const nightly_night *n = &r.caught[i];
		char when[TIME_FMT_MAX];
		const char *name;
		json_t *v;
		time_format(when, n->at_us);
		if (strcmp(n->status, "ok") != 0) {
			json_object_foreach(n->services, name, v)
			{
				const char *st = json_string_value(json_object_get(v, "status"));
				if (st && strcmp(st, "failed") == 0)
					cli_error(ctx,
						  "the missed night to %s: service '%s' failed: %s",
						  when, name,
						  json_string_value(json_object_get(v, "reason")));
			}
			if (!n->analysed)
				cli_error(ctx,
					  "the missed night to %s: no service was analysed "
					  "(%zu skipped, %zu failed): the night checked nothing",
					  when, n->skipped, n->failed);
			status = EXIT_RUNTIME;
		}
		status = cli_report_problem(ctx, n->run_id, n->report_problem, status);
	}
	/* What cron mails when --quiet hides the rest: why the night is not a success. */
	if (strcmp(r.status, "ok") != 0) {
		const char *name;
		json_t *v;
		json_object_foreach(r.services, name, v)
			if (strcmp(json_string_value(json_object_get(v, "status")), "failed") == 0)
				cli_error(ctx, "service '%s' failed: %s", name,
					  json_string_value(json_object_get(v, "reason")));
		/* A service whose collection failed may still have been judged on what it had. */
		if (!r.analysed && !r.a.services)
			cli_error(ctx, "no service was analysed (%zu skipped, %zu failed): "
				  "the night checked nothing", r.skipped, r.failed);
		status = EXIT_RUNTIME;
	}
	if (nightly_pages_undelivered(&r)) {
		size_t n = nightly_pages_undelivered(&r);
		cli_error(ctx, "paging: %zu page%s not delivered; %s in the outbox for the next "
			  "run or 'profreg page flush': %s", n, n == 1 ? "" : "s",
			  n == 1 ? "it waits" : "they wait",
			  r.pages.first_error[0] ? r.pages.first_error : "not due yet");
		status = EXIT_RUNTIME;
	}
	status = cli_report_problem(ctx, r.run_id, r.report_problem, status);
	/* It sets the exit code below: what cron mails must say why. */
	if (r.retention_problem[0])
		cli_error(ctx, "retention: %s", r.retention_problem);
	if (r.retention_ran && !r.retention_failed && r.retention.orphans_newly_held) {
		char msg[PR_ERROR_MSG_MAX];
		retention_newer_orphans_msg(msg, sizeof(msg), &r.retention);
		cli_error(ctx, "retention: %s", msg);
	}
	if (status == EXIT_OK && r.retention_failed)
		status = EXIT_RUNTIME;
	else if (status == EXIT_OK && r.retention.over_budget)
		status = EXIT_GATE;
	goto out;
fail:
	status = cli_fail(ctx, &err);
	/* For cron a failed night is exit 3; a typo (unknown service, bad --at) is 4 or 2. */
	if (err.code != PR_ENOTFOUND && err.code != PR_EUSAGE)
		status = EXIT_RUNTIME;
out:
	cli_deadline_stop(&watch);
	json_decref(closed);
	for (size_t i = 0; caught && i < r.ncaught; i++)
		json_decref(caught[i]);
	free(caught);
	nightly_result_release(&r);
	blob_store_free(bs);
	db_close(lease_db);
	db_close(d);
	config_release(&cfg);
	return status;
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
 * The runs as a table that fits 80 columns: how long each run took
 * rather than when it finished, which --wide adds.
 */
static int print_runs(const cli_ctx *ctx, const json_t *runs)
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
	const json_t *r;
	size_t i;
	int status = EXIT_OK;

	if (table_new(&t, cols, sizeof(cols) / sizeof(cols[0]), ctx->wide) < 0)
		goto oom;
	json_array_foreach(runs, i, r) {
		const char *fin = json_string_value(json_object_get(r, "finished_at"));
		const json_t *secs = json_object_get(r, "seconds");
		const json_t *nf = json_object_get(r, "findings");
		const json_t *failed = json_object_get(r, "failed");
		char took[32];
		format_took(took, sizeof(took),
			    json_is_number(secs) ? json_number_value(secs) : -1);
		table_addf(t, "%" JSON_INTEGER_FORMAT,
			   json_integer_value(json_object_get(r, "id")));
		table_add(t, json_string_value(json_object_get(r, "kind")));
		table_add(t, json_string_value(json_object_get(r, "status")));
		table_add(t, json_string_value(json_object_get(r, "started_at")));
		table_add(t, fin ? fin : "-");
		table_add(t, took);
		if (json_is_integer(nf))
			table_addf(t, "%" JSON_INTEGER_FORMAT, json_integer_value(nf));
		else
			table_add(t, "-");
		if (json_is_integer(failed))
			table_addf(t, "%" JSON_INTEGER_FORMAT, json_integer_value(failed));
		else
			table_add(t, "-");
	}
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

static int runs_list_cmd(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"limit", required_argument, O_LIMIT, "N", "at most N runs (default 20)"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char usage[] = "profreg runs list [--limit N] [--json]";
	static const char desc[] =
		"List recent runs (nightly, analyze, post-deploy, collect, retention,\n"
		"escalate, blobs check and migrate), newest first.";
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	db *d = NULL;
	json_t *runs = NULL;
	const char *arg;
	unsigned long long limit = 20;
	bool bad = false;
	int c, rc, status;

	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		if (c == O_LIMIT && cli_parse_u64(ctx, "limit", arg, 1, 100000, &limit) < 0)
			bad = true;
	if ((status = cli_end(p, c, bad, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 || (rc = runs_list(&runs, d, limit, &err)) < 0) {
		db_close(d);
		return cli_fail(ctx, &err);
	}
	db_close(d);
	if (ctx->json)
		return cli_print_json(ctx, json_pack("{s:o}", "runs", runs));
	status = print_runs(ctx, runs);
	json_decref(runs);
	return status;
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
	printf(", %s\nstarted  %s\nfinished %s\n",
	       json_string_value(json_object_get(run, "status")),
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
		char vals[MEASURE_TEXT_MAX];
		printf("  %-6" JSON_INTEGER_FORMAT " %-9s %-14s ",
		       json_integer_value(json_object_get(v, "id")),
		       json_string_value(json_object_get(v, "severity")),
		       json_string_value(json_object_get(v, "direction")));
		cli_put_safe(stdout, json_string_value(json_object_get(v, "service")), 0);
		printf(" %s ",
		       measure_pair(vals, sizeof(vals),
				    json_string_value(json_object_get(v, "cost_unit")),
				    json_number_value(json_object_get(v, "baseline_share")),
				    json_number_value(json_object_get(v, "current_share")),
				    " -> "));
		put_name(json_string_value(json_object_get(v, "function")));
		putchar('\n');
	}
	{
		const json_t *fs = json_object_get(run, "findings");
		const char *first = NULL;
		bool mix = false;
		json_array_foreach(fs, i, v) {
			const char *t = json_string_value(json_object_get(v, "type"));
			mix |= t && first && strcmp(first, t) != 0;
			first = t ? t : first;
		}
		if (json_array_size(json_object_get(run, "closed")))
			putchar('\n');
		print_closed(json_object_get(run, "closed"),
			     mix || closed_mix_types(json_object_get(run, "closed"), first));
	}
}

int cmd_run(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {{NULL, 0, 0, NULL, NULL}};
	static const char usage[] = "profreg run show ID [--json]";
	static const char desc[] =
		"Show a run: its parameters, each service's outcome and its findings.";
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	db *d = NULL;
	const char *arg;
	unsigned long long id = 0;
	json_t *doc = NULL, *closed = NULL;
	int c, first, rc, status;

	if (argc > 1 && strcmp(argv[1], "show") == 0) {
		argc--;
		argv++;
	}
	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		;
	if ((status = cli_end(p, c, false, 1, 1, "one run ID", &first)) != CLI_GO)
		return status;
	if (cli_parse_u64(ctx, "ID", argv[first], 1, INT64_MAX, &id) < 0)
		return EXIT_USAGE;
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = runs_show(&doc, d, (int64_t)id, &err)) < 0 ||
	    (rc = findings_closed_by_run(&closed, d, (int64_t)id, NULL, &err)) < 0) {
		json_decref(doc);
		db_close(d);
		return cli_fail(ctx, &err);
	}
	db_close(d);
	/* The findings the run closed (fixed, rolled back, went away), with why. */
	json_object_set_new(doc, "closed", closed);
	/* Names in the document are printed by jansson, escaped as JSON. */
	if (ctx->json)
		return cli_print_json(ctx, doc);
	print_run(doc);
	json_decref(doc);
	return EXIT_OK;
}
