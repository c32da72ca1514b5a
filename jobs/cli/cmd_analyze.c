/*
 * cmd_analyze.c: `profreg analyze` and `profreg baseline show`.
 */
#define _POSIX_C_SOURCE 200809L
#include "baselines/analysis.h"
#include "jobs/analyze.h"
#include "jobs/cli/table.h"
#include "jobs/pager.h"
#include "jobs/config.h"
#include "jobs/cli/commands.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"
#include "baselines/baseline.h"
#include "common/buf.h"
#include "common/timeutil.h"
#include "reports/measure.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
	O_SERVICE = 's',
	O_RELEASE = 'r',
	O_ALL = 1300,
	O_SINCE,
	O_UNTIL,
	O_TYPE,
	O_AT,
	O_WINDOW,
	O_MIN,
	O_REL,
	O_ABS,
	O_MINSHARE,
	O_FDR,
	O_DRY,
	O_FUNCTION,
	O_ALL_TESTS,
	O_PAGE,
	O_GATE,
	O_MAX_UNSEEN,
	O_COHORT,
	O_CONTROL,
	O_MARGIN_TEST,
};

static const cli_option analyze_options[] = {
	{"service", required_argument, O_SERVICE, "NAME", "analyse this service"},
	{"all-services", no_argument, O_ALL, NULL, "analyse every enabled service, one FDR family"},
	{"release", required_argument, O_RELEASE, "RELEASE", "judge this release's captures"},
	{"since", required_argument, O_SINCE, "TIME",
	 "judge captures from TIME (ISO 8601 or a duration back from --at)"},
	{"until", required_argument, O_UNTIL, "TIME", "... up to TIME (default --at)"},
	{"type", required_argument, O_TYPE, "TYPE", "profile type (default cpu)"},
	{"at", required_argument, O_AT, "TIME", "take TIME as now, for reproducible runs"},
	{"window", required_argument, O_WINDOW, "DURATION", "baseline window (default 14d)"},
	{"min-captures", required_argument, O_MIN, "N", "fewest baseline captures (default 8)"},
	{"rel-margin", required_argument, O_REL, "FRACTION",
	 "smallest relative change that counts (default 0.05)"},
	{"abs-margin", required_argument, O_ABS, "PP",
	 "smallest change in percentage points that counts (default 0.02)"},
	{"min-share", required_argument, O_MINSHARE, "PP",
	 "test functions reaching PP percent in some capture (default 0.1)"},
	{"fdr", required_argument, O_FDR, "Q", "false discovery rate (default 0.05)"},
	{"margin-test", no_argument, O_MARGIN_TEST, NULL,
	 "test against the margins (default: against no change, estimate beyond them)"},
	{"dry-run", no_argument, O_DRY, NULL, "store nothing"},
	{"page", no_argument, O_PAGE, NULL,
	 "page on-call for the regressions found; writes the report the pages link to"},
	{"all-tests", no_argument, O_ALL_TESTS, NULL,
	 "with --json, list every test, not only findings"},
	{"gate", required_argument, O_GATE, "SEVERITY",
	 "exit 1 when a regression is at or above: low, medium, high, critical"},
	{"max-unseen", required_argument, O_MAX_UNSEEN, "PCT",
	 "with --gate, a pass needs the captures to see one function making a service "
	 "PCT% costlier beyond the gate's margins (default 25; 0: never asked)"},
	{"cohort", required_argument, O_COHORT, "HOSTS",
	 "judge only these hosts' captures (names or globs, comma-separated)"},
	{"control", required_argument, O_CONTROL, "HOSTS",
	 "compare them with these hosts' over the same window (default: the others)"},
	{NULL, 0, 0, NULL, NULL},
};

static json_t *num_or_null(double v)
{
	return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

/*
 * The findings as a table that fits 80 columns; --wide adds the release,
 * the 95% interval and the captures, and shows every name whole.
 */
static int print_text(const cli_ctx *ctx, const analysis *a, int64_t run_id)
{
	static const table_col cols[] = {
		{"SEVERITY", TABLE_WHOLE, 0, 0},
		{"DIRECTION", TABLE_WHOLE, 0, 0},
		{"SERVICE", TABLE_LEFT, 6, 24},
		{"RELEASE", TABLE_WIDE_ONLY, 0, 0},
		{"FUNCTION", TABLE_LEFT, 16, 0},
		{"SHARE %", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"CHANGE", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"95% CI (PP)", TABLE_RIGHT | TABLE_WHOLE | TABLE_WIDE_ONLY, 0, 0},
		{"Q", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"CAPTURES B/C", TABLE_RIGHT | TABLE_WHOLE | TABLE_WIDE_ONLY, 0, 0},
	};
	char when[TIME_FMT_MAX];
	table *t = NULL;
	int rc = 0;

	time_format(when, a->opts.at_us);
	printf("analysis at %s: %zu service%s analysed, %zu tests, %zu findings",
	       when, a->services, a->services == 1 ? "" : "s", a->ntests, a->nfindings);
	if (run_id)
		printf(" (run %" PRId64 ")", run_id);
	printf("\n");
	for (size_t i = 0; i < a->nskipped; i++) {
		printf("skipped ");
		cli_put_safe(stdout, a->skipped[i].service, 0);
		printf("/%s: ", a->skipped[i].type);
		cli_put_safe(stdout, a->skipped[i].reason, 0);
		putchar('\n');
	}
	if (!a->nfindings)
		return 0;
	putchar('\n');
	if ((rc = table_new(&t, cols, sizeof(cols) / sizeof(cols[0]), ctx->wide)) < 0)
		goto out;
	for (size_t i = 0; i < a->ntests && a->tests[i].significant; i++) {
		const finding *f = &a->tests[i];
		table_add(t, stats_severity_name(f->severity));
		table_add(t, finding_dir_name(f->direction));
		table_add(t, f->service);
		table_add(t, f->current_release);
		table_add(t, f->function);
		if (f->cost_unit) {
			/*
			 * A whole-service cost: no share, changes in percent; its
			 * figures in their unit, as long as "2.48 -> 2.92 ms CPU per
			 * unit of load", go below the table, which fits 80 columns.
			 */
			char v[MEASURE_TEXT_MAX];
			table_add(t, "cost");
			table_add(t, measure_change(v, sizeof(v), f->cost_unit, f->delta, NAN, NAN,
						    2));
			if (isnan(f->ci_low) || isnan(f->ci_high))
				table_add(t, "-");
			else
				table_addf(t, "[%+.1f%%, %+.1f%%]", 100 * f->ci_low,
					   100 * f->ci_high);
		} else {
			table_addf(t, "%.2f->%.2f", 100 * f->baseline_share,
				   100 * f->current_share);
			table_addf(t, "%+.2fpp", 100 * f->delta);
			table_addf(t, "[%+.2f, %+.2f]", 100 * f->ci_low, 100 * f->ci_high);
		}
		table_addf(t, "%.2g", f->q_value);
		/* Baseline first, as in the reports and the CI summary. */
		table_addf(t, "%zu/%zu", f->baseline_captures, f->current_captures);
	}
	if ((rc = table_print(t, stdout)) < 0)
		goto out;
	for (size_t i = 0; i < a->ntests && a->tests[i].significant; i++) {
		const finding *f = &a->tests[i];
		char v[MEASURE_TEXT_MAX];
		if (!f->cost_unit)
			continue;
		printf("cost of ");
		cli_put_safe(stdout, f->service, 0);
		printf(": %s\n", measure_pair(v, sizeof(v), f->cost_unit, f->baseline_share,
					      f->current_share, " -> "));
	}
	for (size_t i = 0; i < a->ntests && a->tests[i].significant; i++) {
		if (!a->tests[i].renamed_from)
			continue;
		printf("renamed: ");
		cli_put_safe(stdout, a->tests[i].function, 0);
		printf(" was ");
		cli_put_safe(stdout, a->tests[i].renamed_from, 0);
		putchar('\n');
	}
out:
	table_free(t);
	return rc;
}

/*
 * What a gated pass is worth, as post-deploy's summary says it: the rise
 * of the function hardest to see for want of captures (blind spots come
 * the largest first).
 */
static void print_seen(const analysis_blind *b)
{
	printf("seen: ");
	cli_put_safe(stdout, b->f->service, 0);
	printf("/%s: ", b->f->type);
	cli_put_safe(stdout, b->f->function, 0);
	printf(" (%.1f%% of %s), the function these captures see least, is found four "
	       "times in five once its cost rises enough to make the service %.0f%% costlier\n",
	       100 * b->from, b->f->type, 100 * b->unseen < 1 ? 1.0 : 100 * b->unseen);
}

int cmd_analyze(cli_ctx *ctx, int argc, char **argv)
{
	static const char usage[] =
		"profreg analyze (--service S | --all-services) "
		"(--release R | --since T [--until T]) [options]";
	static const char desc[] =
		"Compare the selected captures with each service's rolling baseline and\n"
		"print the functions whose self share moved, ranked best first. The\n"
		"findings are stored; no one is paged unless --page is given. With\n"
		"--cohort, the baseline is the control hosts' captures over the same\n"
		"window instead (canary against control).\n"
		"Exit 0 when the analysis ran (findings or not); with --gate, 1 when a\n"
		"regression is at or above the gate; 2 usage (an unknown host); 3\n"
		"infrastructure; 4 bad input (a release or time range with no captures);\n"
		"5 with --gate when a service could not be judged (too thin a baseline,\n"
		"a release past its planned looks)\n"
		"or none was, and with --cohort when it could not judge (too few\n"
		"captures on either side).";
	pr_error err = PR_ERROR_INIT;
	analysis_opts o;
	analyze_result r;
	cli_parser *p = NULL;
	db *d = NULL, *d2 = NULL;
	blob_store *bs = NULL;
	const char *arg, *service = NULL, *release = NULL, *type = "cpu";
	const char *since_s = NULL, *until_s = NULL, *cohort = NULL, *control = NULL;
	bool all = false, dry = false, all_tests = false, page = false;
	int64_t since = 0, until = 0;
	unsigned long long v = 0;
	double pp = 0;
	/* Flags override the configuration file, which is read after them. */
	analysis_opts flags;
	bool set_at = false, set_window = false, set_min = false, set_rel = false;
	bool set_abs = false, set_minshare = false, set_fdr = false, gated = false, bad = false;
	analysis_blind *blind = NULL;
	size_t nblind = 0;
	double max_unseen = 0; /* analysis_blind_limit's: 0 the configuration's, < 0 none */
	bool set_unseen = false;
	bool margin_test = false;
	stats_severity gate = STATS_SEV_NONE;
	config cfg;
	int c, rc, status;

	memset(&cfg, 0, sizeof(cfg));
	memset(&r, 0, sizeof(r));

	analysis_opts_default(&flags);
	if (cli_parser_new(&p, ctx, argc, argv, analyze_options, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		switch (c) {
		case O_SERVICE: service = arg; break;
		case O_ALL: all = true; break;
		case O_RELEASE: release = arg; break;
		case O_SINCE: since_s = arg; break;
		case O_UNTIL: until_s = arg; break;
		case O_TYPE: type = arg; break;
		case O_DRY: dry = true; break;
		case O_ALL_TESTS: all_tests = true; break;
		case O_PAGE: page = true; break;
		case O_COHORT: cohort = arg; break;
		case O_CONTROL: control = arg; break;
		case O_MARGIN_TEST: margin_test = true; break;
		case O_GATE:
			if (stats_severity_parse(&gate, arg) < 0 || gate == STATS_SEV_NONE) {
				cli_error(ctx, "'--gate %s' is not low, medium, high or critical",
					  arg);
				bad = true;
			}
			gated = true;
			break;
		case O_MAX_UNSEEN:
			if (cli_parse_number(ctx, "max-unseen", arg, 0, 100000, &max_unseen) < 0)
				bad = true;
			max_unseen = max_unseen > 0 ? max_unseen / 100 : -1;
			set_unseen = true;
			break;
		case O_AT:
			if (time_parse(&flags.at_us, arg) < 0) {
				cli_error(ctx, "'--at %s' is not an ISO 8601 time", arg);
				bad = true;
			}
			set_at = true;
			break;
		case O_WINDOW:
			if (time_parse_duration(&flags.window_us, arg) < 0 ||
			    flags.window_us <= 0 || flags.window_us > ANALYSIS_MAX_WINDOW_US) {
				cli_error(ctx, "'--window %s' is not a duration from 1s to 3650d, "
					  "like 14d", arg);
				bad = true;
			}
			set_window = true;
			break;
		case O_MIN:
			if (cli_parse_u64(ctx, "min-captures", arg, 2, 100000, &v) < 0)
				bad = true;
			flags.min_baseline = (size_t)v;
			set_min = true;
			break;
		case O_REL:
			if (cli_parse_number(ctx, "rel-margin", arg, 0, 10, &flags.rel_margin) < 0)
				bad = true;
			set_rel = true;
			break;
		case O_ABS:
			if (cli_parse_number(ctx, "abs-margin", arg, 0, 100, &pp) < 0)
				bad = true;
			flags.abs_margin = pp / 100;
			set_abs = true;
			break;
		case O_MINSHARE:
			if (cli_parse_number(ctx, "min-share", arg, 0, 100, &pp) < 0)
				bad = true;
			flags.min_share = pp / 100;
			set_minshare = true;
			break;
		case O_FDR:
			if (cli_parse_number(ctx, "fdr", arg, 1e-6, 0.5, &flags.fdr) < 0)
				bad = true;
			set_fdr = true;
			break;
		}
	}
	if ((status = cli_end(p, c, bad, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	if (!!service + all != 1 || !!release + !!since_s != 1 || (until_s && !since_s)) {
		cli_error(ctx, "give --service or --all-services, and --release or --since "
			  "(see --help)");
		return EXIT_USAGE;
	}
	if ((cohort || control) && (!cohort || !service)) {
		cli_error(ctx, "%s",
			  !cohort ? "--control needs --cohort (the canary hosts)"
				  : "--cohort compares the hosts of one service: give --service");
		return EXIT_USAGE;
	}
	if (set_unseen && !gated) {
		cli_error(ctx, "--max-unseen needs --gate: it says when a pass is inconclusive");
		return EXIT_USAGE;
	}
	if (page && dry) {
		cli_error(ctx, "--page and --dry-run exclude each other: a dry run stores no "
			  "finding to page");
		return EXIT_USAGE;
	}
	if (ctx_config_load(ctx, &cfg, &err) < 0)
		return cli_fail(ctx, &err);
	/*
	 * An analysis by hand is often exploratory (a loose --fdr, an --at in
	 * the past): it pages only when asked to. With --page, cfg stays
	 * loaded for paging: record_findings enqueues, then a flush sends.
	 */
	o = cfg.analysis;
	if (set_at) o.at_us = flags.at_us;
	if (set_window) o.window_us = flags.window_us;
	if (set_min) o.min_baseline = flags.min_baseline;
	if (set_rel) o.rel_margin = flags.rel_margin;
	if (set_abs) o.abs_margin = flags.abs_margin;
	if (set_minshare) o.min_share = flags.min_share;
	if (set_fdr) o.fdr = flags.fdr;
	if (margin_test) o.margin_in_test = true;
	if (!o.at_us)
		o.at_us = time_now_us();
	if ((since_s && time_parse_since(&since, since_s, o.at_us) < 0) ||
	    (until_s && time_parse_since(&until, until_s, o.at_us) < 0)) {
		bool bad_since = since_s && time_parse_since(&since, since_s, o.at_us) < 0;
		cli_error(ctx, "'%s' is not a time (ISO 8601) or a duration (24h, 7d)",
			  bad_since ? since_s : until_s);
		config_release(&cfg);
		return EXIT_USAGE;
	}
	if (until_s && until <= since) {
		cli_error(ctx, "'--until %s' is not after '--since %s'", until_s, since_s);
		config_release(&cfg);
		return EXIT_USAGE;
	}

	{
		analyze_opts ao = {service, release, since, until, type, o,
				   release ? release : since_s, dry, page, cohort, control, NULL};
		job_env env = {&cfg, NULL, NULL, ctx->home, NULL};
		if ((rc = ctx_db_open(ctx, &d, &err)) < 0)
			goto fail;
		/*
		 * Paging, the run merges its regressions of one call path into
		 * incidents and writes its report: both read the captures'
		 * blobs (the nightly also merges by suspect commit). A store that
		 * cannot be opened (no credentials on this runner) leaves both
		 * out, never the pages.
		 */
		if (page && ctx_blobs_open(ctx, &bs, &err) < 0) {
			cli_warn(ctx, "no report and no incidents: %s", err.msg);
			pr_error_clear(&err);
		}
		env.bs = bs;
		/* Every service: the next one's captures are read on a second connection. */
		if (!service && (rc = ctx_db_open(ctx, &d2, &err)) < 0)
			goto fail;
		env.d = d;
		ao.ahead_db = d2;
		if ((rc = analyze_run(&r, &env, &ao, &err)) < 0)
			goto fail;
	}
	for (size_t i = 0; i < r.notes.n; i++)
		cli_warn(ctx, "%s", r.notes.lines[i]);
	if (gated && analysis_blind_spots(&blind, &nblind, &r.a, gate) < 0) {
		rc = pr_error_set(&err, PR_ENOMEM, "out of memory");
		goto fail;
	}
	max_unseen = analysis_blind_limit(max_unseen, &r.a.opts);
	if (ctx->json) {
		const analysis *a = &r.a;
		json_t *arr = json_array(), *skipped = json_array(), *doc;
		char when[TIME_FMT_MAX];
		for (size_t i = 0; i < a->ntests && (all_tests || a->tests[i].significant); i++)
			json_array_append_new(arr, analysis_finding_json(&a->tests[i]));
		for (size_t i = 0; i < a->nskipped; i++)
			json_array_append_new(skipped, json_pack("{s:s,s:s,s:s}",
				"service", a->skipped[i].service, "type", a->skipped[i].type,
				"reason", a->skipped[i].reason));
		time_format(when, a->opts.at_us);
		doc = json_pack(
			"{s:i,s:s,s:I,s:I,s:I,s:I,s:o,s:o,s:{s:f,s:f},s:{s:I,s:I,s:I,s:I},s:s?}",
			"schema_version", 1, "at", when, "run_id", (json_int_t)r.run_id, "services",
			(json_int_t)a->services, "tests", (json_int_t)a->ntests, "filtered",
			(json_int_t)a->filtered, "findings", arr, "insufficient", skipped, "timing",
			"database_seconds", a->db_seconds, "statistics_seconds", a->stats_seconds,
			"pages", "enqueued", (json_int_t)a->pages_enqueued, "sent",
			(json_int_t)r.pages.sent, "failed", (json_int_t)r.pages.failed, "pending",
			(json_int_t)r.pages.pending, "report", r.report);
		if (doc && gated)
			json_object_set_new(doc, "blind_spots", analysis_blind_json(blind, nblind));
		status = cli_print_json(ctx, doc);
	} else {
		if (print_text(ctx, &r.a, r.run_id) < 0) {
			/* The run is recorded: this is only what it prints. */
			cli_error(ctx, "out of memory");
			status = EXIT_RUNTIME;
			goto out;
		}
		if (r.a.pages_enqueued || r.pages.sent || r.pages.failed || r.pages.pending)
			printf("pages: %zu enqueued, %zu sent, %zu failed, %zu pending\n",
			       r.a.pages_enqueued, r.pages.sent, r.pages.failed, r.pages.pending);
		if (r.report) {
			printf("report: ");
			cli_put_safe(stdout, r.report, 0);
			putchar('\n');
		}
		status = EXIT_OK;
	}
	for (size_t i = 0; gated && status == EXIT_OK && i < r.a.ntests &&
	     r.a.tests[i].significant; i++)
		if (r.a.tests[i].direction == FINDING_REGRESSION && r.a.tests[i].severity >= gate &&
		    !r.a.tests[i].accepted)
			status = EXIT_GATE;
	/*
	 * A gate that could not judge a service (too thin a baseline), or
	 * judged none, and canary against control that could not be judged,
	 * say so in the exit code: a gate never passes what it did not check.
	 * A service without captures of the release is not part of it.
	 */
	if ((cohort || gated) && status == EXIT_OK) {
		bool inconclusive = r.a.services == 0;

		for (size_t i = 0; i < r.a.nskipped; i++) {
			if (!cohort && r.a.skipped[i].no_current)
				continue;
			cli_warn(ctx, "inconclusive: %s/%s: %s", r.a.skipped[i].service,
				 r.a.skipped[i].type, r.a.skipped[i].reason);
			inconclusive = true;
		}
		if (analysis_unjudged_baseline(&r.a)) {
			cli_warn(ctx,
				 "inconclusive: a baseline holds captures of release(s) %s, which "
				 "no run has judged (too few judged captures in the window): a "
				 "regression shipped in them would be part of the baseline",
				 analysis_unjudged_baseline(&r.a));
			inconclusive = true;
		}
		if (analysis_spent(&r.a)) {
			cli_warn(ctx,
				 "inconclusive: a release was judged on its %zu planned looks "
				 "(analysis.max_looks) before this one, look %zu: no alpha is left "
				 "for a new finding, so finding none says nothing",
				 r.a.opts.max_looks, analysis_latest_look(&r.a));
			inconclusive = true;
		}
		if (inconclusive)
			status = EXIT_INCONCLUSIVE;
		/* A pass on captures too few or too small to see a rise vouches for nothing. */
		for (size_t i = 0;
		     !inconclusive && i < nblind && analysis_blind_over(&blind[i], max_unseen);
		     i++) {
			char line[PR_ERROR_MSG_MAX];
			analysis_blind_reason(line, sizeof(line), &blind[i], max_unseen);
			cli_warn(ctx, "inconclusive: %s", line);
			status = EXIT_INCONCLUSIVE;
		}
	}
	status = cli_report_problem(ctx, r.run_id, r.report_problem, status);
	if (gated && status == EXIT_OK && !ctx->json && nblind && isfinite(blind[0].unseen))
		print_seen(&blind[0]);
	goto out;
fail:
	status = cli_fail(ctx, &err);
out:
	config_release(&cfg);
	analyze_result_release(&r);
	db_close(d2);
	db_close(d);
	blob_store_free(bs);
	free(blind);
	return status;
}

static int baseline_show(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"service", required_argument, O_SERVICE, "NAME", "the service"},
		{"type", required_argument, O_TYPE, "TYPE", "profile type (default cpu)"},
		{"function", required_argument, O_FUNCTION, "TEXT",
		 "only functions whose name contains TEXT"},
		{"at", required_argument, O_AT, "TIME", "the baseline as of TIME (default now)"},
		{"window", required_argument, O_WINDOW, "DURATION",
		 "baseline window (default 14d, or the config's)"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char usage[] =
		"profreg baseline show --service S [--type T] [--function TEXT] [--at T] [--json]";
	static const char desc[] =
		"Show a service's rolling baseline: the eligible captures in the window\n"
		"before --at, and per function n, mean, median, MAD and EWMA of its self\n"
		"share, the variance-stabilised mean and variance, and the mean rate.";
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	config cfg;
	db *d = NULL;
	db_service svc = {0};
	baseline_view v;
	const char *arg, *service = NULL, *type = "cpu", *needle = NULL;
	const char *at_s = NULL, *win_s = NULL;
	int64_t at, window;
	size_t min_baseline;
	json_t *arr = NULL;
	char from[TIME_FMT_MAX], to[TIME_FMT_MAX];
	int c, rc, status;

	memset(&v, 0, sizeof(v));
	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		switch (c) {
		case O_SERVICE: service = arg; break;
		case O_TYPE: type = arg; break;
		case O_FUNCTION: needle = arg; break;
		case O_AT: at_s = arg; break;
		case O_WINDOW: win_s = arg; break;
		}
	}
	if ((status = cli_end(p, c, false, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	if (!service) {
		cli_error(ctx, "no service given (--service)");
		return EXIT_USAGE;
	}
	if (ctx_config_load(ctx, &cfg, &err) < 0)
		return cli_fail(ctx, &err);
	at = cfg.analysis.at_us ? cfg.analysis.at_us : time_now_us();
	window = cfg.analysis.window_us;
	min_baseline = cfg.analysis.min_baseline;
	config_release(&cfg);
	if (at_s && time_parse(&at, at_s) < 0) {
		cli_error(ctx, "'%s' is not a time (ISO 8601)", at_s);
		return EXIT_USAGE;
	}
	if (win_s && (time_parse_duration(&window, win_s) < 0 || window <= 0 ||
		      window > ANALYSIS_MAX_WINDOW_US)) {
		cli_error(ctx, "'%s' is not a duration from 1s to 3650d, like 14d", win_s);
		return EXIT_USAGE;
	}
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = db_service_get(d, &svc, service, &err)) < 0 ||
	    (rc = baseline_view_load(&v, d, svc.id, type, at, window, &err)) < 0)
		goto fail;
	status = EXIT_OK;
	arr = json_array();
	time_format(from, at - window);
	time_format(to, at);
	if (!ctx->json)
		printf("baseline of %s/%s from %s to %s: %zu eligible captures\n\n"
		       "%-8s %4s %8s %8s %8s %8s %10s  %s\n",
		       service, type, from, to, v.captures, "MEAN%", "N", "MEDIAN%", "MAD%",
		       "EWMA%", "SD(VST)", "RATE", "FUNCTION");
	for (size_t r = 0; r < v.nfuncs; r++) {
		const baseline_func *b = &v.funcs[r];
		if (needle && !strstr(v.names[r], needle))
			continue;
		if (ctx->json) {
			json_t *o = json_pack("{s:s,s:I}", "function", v.names[r],
					      "n", (json_int_t)b->n);
			json_object_set_new(o, "mean_share", num_or_null(b->mean_share));
			json_object_set_new(o, "median_share", num_or_null(b->median_share));
			json_object_set_new(o, "mad_share", num_or_null(b->mad_share));
			json_object_set_new(o, "ewma_share", num_or_null(b->ewma_share));
			json_object_set_new(o, "mean_vst", num_or_null(b->mean_vst));
			json_object_set_new(o, "var_vst", num_or_null(b->var_vst));
			json_object_set_new(o, "mean_rate", num_or_null(b->mean_rate));
			json_array_append_new(arr, o);
			continue;
		}
		printf("%7.3f%% %4zu %7.3f%% %7.3f%% %7.3f%% %8.4f ", 100 * b->mean_share,
		       b->n, 100 * b->median_share, 100 * b->mad_share, 100 * b->ewma_share,
		       sqrt(b->var_vst));
		/* No rate without durations (folded, perf): "-", as JSON says null. */
		if (isfinite(b->mean_rate))
			printf("%10.4g  ", b->mean_rate);
		else
			printf("%10s  ", "-");
		cli_put_safe(stdout, v.names[r], 0);
		putchar('\n');
	}
	if (ctx->json) {
		status = cli_print_json(ctx, json_pack("{s:s,s:s,s:s,s:s,s:I,s:o}",
			"service", service, "type", type, "window_start", from, "window_end", to,
			"captures", (json_int_t)v.captures, "functions", arr));
		arr = NULL;
	}
	if (v.captures < min_baseline)
		cli_warn(ctx, "only %zu eligible captures: analysis needs %zu (insufficient "
			 "baseline)", v.captures, min_baseline);
	goto out;
fail:
	status = cli_fail(ctx, &err);
out:
	json_decref(arr);
	baseline_view_release(&v);
	db_service_release(&svc);
	db_close(d);
	return status;
}

int cmd_baseline(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_command cmds[] = {
		{"show", baseline_show, "show a service's rolling baseline"},
		{NULL, NULL, NULL},
	};
	return cli_dispatch(ctx, cmds, ctx->prog, argc - 1, argv + 1);
}
