/*
 * cmd_postdeploy.c: `profreg post-deploy`, the CI hook after a deploy.
 *
 * Records the deploy, resolves its commit with libgit2, lists the commits
 * since the previous deploy, waits (bounded) for captures of the new
 * release, analyses them against the baseline of earlier releases, names
 * suspect commits for each regression and prints a Markdown summary for
 * the CI log. Exit 0 pass, 1 a regression at or above the gate, 2 usage,
 * 3 infrastructure, 4 bad input (unknown service, a ref that does not
 * resolve).
 */
#define _POSIX_C_SOURCE 200809L
#include "analysis.h"
#include "commands.h"
#include "config.h"
#include "context.h"
#include "exitcode.h"
#include "gitinfo.h"
#include "pager.h"
#include "pushgw.h"
#include "reportdata.h"
#include "common/timeutil.h"
#include "pipeline/source.h"

#include <inttypes.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_RANGE 500
/* How long a post-deploy step may spend sending its own pages. */
#define POSTDEPLOY_PAGE_DEADLINE_MS 30000

enum { O_SERVICE = 1600, O_RELEASE, O_COMMIT, O_REPO, O_PREVIOUS, O_WAIT, O_MIN, O_GATE, O_AT };

typedef struct deploy_ctx {
	const char *service, *release, *ref, *repo, *previous;
	char sha[GITINFO_SHA_HEX + 1], prev_sha[GITINFO_SHA_HEX + 1];
	int64_t deploy_id;
	gitinfo_commit *commits;
	size_t ncommits;
	char range_note[PR_ERROR_MSG_MAX + 64];
} deploy_ctx;

static int record_deploy(db *d, deploy_ctx *x, int64_t service_id, pr_error *err)
{
	static const char prev_sql[] =
		"select commit_sha from deploys where service_id = $1 and release <> $2"
		" and commit_sha is not null order by deployed_at desc, id desc limit 1";
	static const char find_sql[] =
		"select id from deploys where service_id = $1 and release = $2 and commit_sha = $3";
	static const char ins_sql[] =
		"insert into deploys (service_id, release, commit_sha) values ($1, $2, $3) returning id";
	char sid[24];
	const char *p[3] = {sid, x->release, x->sha};
	PGresult *res = NULL;
	int rc;

	snprintf(sid, sizeof(sid), "%" PRId64, service_id);
	if (!x->prev_sha[0]) {
		if ((rc = db_exec(d, &res, err, "finding the previous deploy", prev_sql, 2, p)) < 0)
			return rc;
		if (db_rows(res) == 1)
			snprintf(x->prev_sha, sizeof(x->prev_sha), "%s", db_get_text(res, 0, 0));
		db_result_free(res);
	}
	/* The same deploy reported twice (a retried CI job) is one deploy. */
	if ((rc = db_exec(d, &res, err, "recording the deploy", find_sql, 3, p)) < 0)
		return rc;
	if (db_rows(res) == 1) {
		x->deploy_id = db_get_i64(res, 0, 0);
		db_result_free(res);
		return 0;
	}
	db_result_free(res);
	if ((rc = db_exec(d, &res, err, "recording the deploy", ins_sql, 3, p)) < 0)
		return rc;
	x->deploy_id = db_get_i64(res, 0, 0);
	db_result_free(res);
	return 0;
}

static int64_t count_captures(db *d, int64_t service_id, const char *release, pr_error *err)
{
	static const char sql[] = "select count(*) from profiles where service_id = $1 and release = $2";
	char sid[24];
	const char *p[2] = {sid, release};
	PGresult *res = NULL;
	int64_t n;

	snprintf(sid, sizeof(sid), "%" PRId64, service_id);
	if (db_exec(d, &res, err, "counting captures", sql, 2, p) < 0)
		return -1;
	n = db_get_i64(res, 0, 0);
	db_result_free(res);
	return n;
}

/* Tag the evidence of this deploy's regressions with the deploy and commit. */
static int tag_evidence(db *d, const deploy_ctx *x, const analysis *a, pr_error *err)
{
	static const char sql[] =
		"update profiles set tags = tags || jsonb_build_object('deploy', $2::text, 'commit', $3::text)"
		" where tags ->> 'finding' = $1";
	char fid[24], did[24];
	const char *p[3] = {fid, did, x->sha};
	int rc;

	snprintf(did, sizeof(did), "%" PRId64, x->deploy_id);
	for (size_t i = 0; i < a->ntests && a->tests[i].significant; i++) {
		if (a->tests[i].direction != FINDING_REGRESSION || !a->tests[i].id)
			continue;
		snprintf(fid, sizeof(fid), "%" PRId64, a->tests[i].id);
		if ((rc = db_exec(d, NULL, err, "tagging evidence", sql, 3, p)) < 0)
			return rc;
	}
	return 0;
}

static void md_escape(const char *s)
{
	/* Table cells: a pipe or backtick from a function name must stay text. */
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		/*
		 * Escape what can start emphasis, code, links, images, HTML,
		 * tables or headings; leave the rest readable in a raw CI log.
		 */
		if (strchr("\\`*_[]<>|!~&#", *c) && *c)
			printf("\\%c", *c);
		else if (*c < 0x20 || *c == 0x7f)
			printf("\\x%02x", *c);
		else
			putchar(*c);
	}
}

static void print_markdown(const deploy_ctx *x, const analysis *a, stats_severity gate, bool fail)
{
	size_t nreg = 0;

	for (size_t i = 0; i < a->ntests && a->tests[i].significant; i++)
		nreg += a->tests[i].direction == FINDING_REGRESSION;
	printf("## profreg post-deploy: %s ", x->service);
	md_escape(x->release);
	printf("\n\n");
	if (fail) {
		printf("**Verdict: FAIL** - a regression at or above the gate (%s)\n\n", stats_severity_name(gate));
	} else if (a->nskipped) {
		printf("**Verdict: inconclusive** - ");
		md_escape(a->skipped[0].reason);
		printf("\n\n");
	}
	else
		printf("**Verdict: pass** - %zu regression%s below the gate (%s)\n\n", nreg,
		       nreg == 1 ? "" : "s", stats_severity_name(gate));
	printf("Commit `%s`", x->sha);
	if (x->prev_sha[0])
		printf(", previous deploy `%.12s`", x->prev_sha);
	printf("\n\n");
	if (a->nfindings) {
		printf("| severity | direction | function | baseline -> current | change (95%% CI) | q | captures |\n");
		printf("| --- | --- | --- | --- | --- | --- | --- |\n");
		for (size_t i = 0; i < a->ntests && a->tests[i].significant; i++) {
			const finding *f = &a->tests[i];
			printf("| %s | %s | ", stats_severity_name(f->severity), finding_dir_name(f->direction));
			md_escape(f->function);
			printf(" | %.2f%% -> %.2f%% | %+.2fpp [%+.2f, %+.2f] | %.2g | %zu/%zu |\n",
			       100 * f->baseline_share, 100 * f->current_share, 100 * f->delta,
			       100 * f->ci_low, 100 * f->ci_high, f->q_value, f->current_captures,
			       f->baseline_captures);
		}
		printf("\n");
	} else {
		printf("No function's self share moved beyond the margin.\n\n");
	}
	for (size_t i = 0; i < a->ntests && a->tests[i].significant; i++) {
		const finding *f = &a->tests[i];
		size_t *idx = NULL, n = 0;
		if (f->direction != FINDING_REGRESSION)
			continue;
		printf("Suspect commits for ");
		md_escape(f->function);
		if (!f->file || !f->file[0]) {
			printf(": the profile gives no file name\n\n");
			continue;
		}
		printf(" (");
		md_escape(f->file);
		printf("): ");
		if (!x->ncommits || gitinfo_suspects(&idx, &n, x->commits, x->ncommits, f->file) < 0 || !n) {
			printf("%s\n\n", x->ncommits ? "no commit in the range touched this file" : "no commit range");
			free(idx);
			continue;
		}
		printf("\n\n");
		for (size_t k = 0; k < n; k++) {
			const gitinfo_commit *cm = &x->commits[idx[k]];
			printf("- `%.12s` ", cm->sha);
			md_escape(cm->subject ? cm->subject : "");
			printf(" (");
			md_escape(cm->author);
			printf(")\n");
		}
		printf("\n");
		free(idx);
	}
	if (x->ncommits) {
		printf("<details><summary>%zu commit%s since the previous deploy</summary>\n\n", x->ncommits,
		       x->ncommits == 1 ? "" : "s");
		for (size_t k = 0; k < x->ncommits; k++) {
			char when[TIME_FMT_MAX];
			time_format(when, x->commits[k].time_us);
			printf("- `%.12s` %s ", x->commits[k].sha, when);
			md_escape(x->commits[k].subject ? x->commits[k].subject : "");
			printf(" (");
			md_escape(x->commits[k].author);
			printf(")\n");
		}
		printf("\n</details>\n");
	} else if (x->range_note[0]) {
		printf("%s\n", x->range_note);
	}
}

/* Push the run's metrics when configured; a failed push is a warning. */
static void push_metrics(const cli_ctx *ctx, const config *cfg, const analysis *a, bool ok,
			 double t0, const pager_counts *pc)
{
	pr_error perr = PR_ERROR_INIT;

	if (pushgw_push_analysis(cfg, "post-deploy", ok, t0, a, ok ? 0 : 1, pc, &perr) < 0)
		cli_warn(ctx, "%s", perr.msg);
}

int cmd_postdeploy(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"service", required_argument, O_SERVICE, "NAME", "the deployed service"},
		{"release", required_argument, O_RELEASE, "RELEASE", "the release deployed"},
		{"commit", required_argument, O_COMMIT, "REF", "its commit: SHA, short SHA, branch or tag"},
		{"repo", required_argument, O_REPO, "PATH", "the service's git repository (default: from the config)"},
		{"previous", required_argument, O_PREVIOUS, "REF", "start of the commit range (default: the previous deploy)"},
		{"wait", required_argument, O_WAIT, "DURATION", "wait up to this long for captures (default 0)"},
		{"min-captures", required_argument, O_MIN, "N", "captures of the release to wait for (default 1)"},
		{"gate", required_argument, O_GATE, "SEVERITY", "fail (exit 1) at or above: low, medium, high, critical (default high)"},
		{"at", required_argument, O_AT, "TIME", "take TIME as now"},
		{NULL, 0, 0, NULL, NULL},
	};
	pr_error err = PR_ERROR_INIT;
	deploy_ctx x;
	cli_parser *p = NULL;
	config cfg = {0};
	analysis a;
	db *d = NULL;
	blob_store *bs = NULL;
	db_service svc = {0};
	const char *arg, *at_s = NULL;
	stats_severity gate = STATS_SEV_HIGH;
	unsigned long long min_caps = 1;
	int64_t wait_us = 0, run_id = 0;
	bool fail = false, loaded = false;
	pager_counts pc;
	double t0 = time_mono();
	char *report = NULL;
	int c, rc = 0;

	memset(&pc, 0, sizeof(pc));
	memset(&x, 0, sizeof(x));
	memset(&a, 0, sizeof(a));
	if (cli_parser_new(&p, ctx, argc, argv, opts,
			   "profreg post-deploy --service S --release R --commit REF [--repo PATH] [options]",
			   "Check a deploy: analyse the new release's captures against the baseline of\n"
			   "earlier releases, name suspect commits, print a Markdown summary.\n"
			   "Exit 0 pass, 1 a regression at or above --gate, 2 usage, 3 infrastructure\n"
			   "error, 4 bad input (unknown service, a commit that does not resolve).") < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		switch (c) {
		case O_SERVICE: x.service = arg; break;
		case O_RELEASE: x.release = arg; break;
		case O_COMMIT: x.ref = arg; break;
		case O_REPO: x.repo = arg; break;
		case O_PREVIOUS: x.previous = arg; break;
		case O_AT: at_s = arg; break;
		case O_WAIT:
			if (time_parse_duration(&wait_us, arg) < 0) {
				cli_error(ctx, "'--wait %s' is not a duration like 10m", arg);
				rc = EXIT_USAGE;
			}
			break;
		case O_MIN:
			if (cli_parse_u64(ctx, "min-captures", arg, 1, 100000, &min_caps) < 0)
				rc = EXIT_USAGE;
			break;
		case O_GATE:
			if (stats_severity_parse(&gate, arg) < 0 || gate == STATS_SEV_NONE) {
				cli_error(ctx, "'--gate %s' is not low, medium, high or critical", arg);
				rc = EXIT_USAGE;
			}
			break;
		}
	}
	cli_parser_free(p);
	if (c == CLI_HELP)
		return EXIT_OK;
	if (c == CLI_BAD || rc)
		return EXIT_USAGE;
	if (!x.service || !x.release || !x.ref) {
		cli_error(ctx, "--service, --release and --commit are required (see --help)");
		return EXIT_USAGE;
	}
	if (config_load(&cfg, ctx, &err) < 0)
		return cli_fail(ctx, &err);
	loaded = true;
	if (at_s && time_parse(&cfg.analysis.at_us, at_s) < 0) {
		cli_error(ctx, "'--at %s' is not an ISO 8601 time", at_s);
		config_release(&cfg);
		return EXIT_USAGE;
	}
	analysis_init(&a, &cfg.analysis);
	{
		const config_service *cs = config_service_find(&cfg, x.service);
		if (!x.repo && cs)
			x.repo = cs->repo;
	}
	if ((rc = gitinfo_resolve(x.sha, x.repo, x.ref, &err)) < 0 ||
	    (x.previous && (rc = gitinfo_resolve(x.prev_sha, x.repo, x.previous, &err)) < 0)) {
		/* A ref that does not resolve is bad input, not a usage slip. */
		if (err.code == PR_EUSAGE && x.repo == NULL)
			err.code = PR_EDATA;
		goto fail;
	}
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 || (rc = ctx_blobs_open(ctx, &bs, &err)) < 0 ||
	    (rc = db_service_get(d, &svc, x.service, &err)) < 0)
		goto fail;
	if (!svc.enabled) {
		rc = pr_error_set(&err, PR_EREFUSED, "service '%s' is not enabled for profiling", x.service);
		goto fail;
	}
	if ((rc = record_deploy(d, &x, svc.id, &err)) < 0)
		goto fail;
	if (x.repo && x.prev_sha[0]) {
		pr_error gerr = PR_ERROR_INIT;
		if (gitinfo_range(&x.commits, &x.ncommits, x.repo, x.prev_sha, x.sha, MAX_RANGE, &gerr) < 0)
			snprintf(x.range_note, sizeof(x.range_note), "Commit range unavailable: %s", gerr.msg);
	} else {
		snprintf(x.range_note, sizeof(x.range_note), "%s",
			 x.repo ? "No previous deploy: no commit range." : "No repository: no commit range.");
	}

	/* Collect until enough captures of the release exist, or the wait ends. */
	{
		const config_service *cs = config_service_find(&cfg, x.service);
		struct timespec start, now;
		clock_gettime(CLOCK_MONOTONIC, &start);
		for (;;) {
			int64_t have;
			if (cs && cs->source_dir) {
				source_report src;
				if ((rc = source_collect_dir(&src, d, bs, x.service, cs->source_dir,
							     &cfg.limits, &err)) < 0)
					goto fail;
				source_report_release(&src);
			}
			if ((have = count_captures(d, svc.id, x.release, &err)) < 0) {
				rc = err.code;
				goto fail;
			}
			clock_gettime(CLOCK_MONOTONIC, &now);
			if ((uint64_t)have >= min_caps ||
			    (int64_t)(now.tv_sec - start.tv_sec) * 1000000 >= wait_us)
				break;
			{
				struct timespec pause = {5, 0};
				nanosleep(&pause, NULL);
			}
		}
	}
	{
		static const char sql[] =
			"insert into runs (kind, service_id, status, detail) values ('post-deploy', $1, 'running',"
			" jsonb_build_object('release', $2::text, 'commit', $3::text, 'deploy_id', $4::bigint))"
			" returning id";
		char sid[24], did[24];
		const char *pp[4] = {sid, x.release, x.sha, did};
		PGresult *res = NULL;
		snprintf(sid, sizeof(sid), "%" PRId64, svc.id);
		snprintf(did, sizeof(did), "%" PRId64, x.deploy_id);
		if ((rc = db_exec(d, &res, &err, "recording the run", sql, 4, pp)) < 0)
			goto fail;
		run_id = db_get_i64(res, 0, 0);
		db_result_free(res);
	}
	{
		const config_service *cs = config_service_find(&cfg, x.service);
		for (size_t t = 0; t < (cs ? cs->ntypes : 1); t++) {
			analysis_target tg = {svc.id, svc.name, cs ? cs->types[t] : "cpu", x.release, 0, 0, NULL, NULL};
			if ((rc = analysis_add(&a, d, &tg, true, &err)) < 0)
				goto fail;
		}
	}
	if ((rc = analysis_finish(&a, &err)) < 0 || (rc = analysis_store(&a, d, run_id, &cfg, &err)) < 0 ||
	    (rc = tag_evidence(d, &x, &a, &err)) < 0)
		goto fail;
	/*
	 * Delivery problems leave pages pending in the outbox; they do not
	 * change the verdict. A CI step waits for this: only this run's pages
	 * are sent, within a deadline; the rest (and the other services'
	 * outbox) is for the next nightly or `profreg page flush`.
	 */
	{
		int64_t *ids = NULL;
		size_t n = 0;
		pager_flush_opts fo = {false, true, NULL, 0, POSTDEPLOY_PAGE_DEADLINE_MS};
		if (a.nfindings && !(ids = calloc(a.nfindings, sizeof(*ids)))) {
			rc = pr_error_set(&err, PR_ENOMEM, "out of memory");
			goto fail;
		}
		for (size_t i = 0; i < a.ntests && a.tests[i].significant && n < a.nfindings; i++)
			if (a.tests[i].id)
				ids[n++] = a.tests[i].id;
		fo.finding_ids = ids;
		fo.nfinding_ids = n;
		rc = pager_flush(d, &cfg, &fo, &pc, &err);
		free(ids);
		if (rc < 0)
			goto fail;
	}
	if (pc.first_error[0])
		cli_warn(ctx, "paging: %s", pc.first_error);
	for (size_t i = 0; i < a.ntests && a.tests[i].significant; i++)
		if (a.tests[i].direction == FINDING_REGRESSION && a.tests[i].severity >= gate)
			fail = true;
	{
		static const char sql[] =
			"update runs set status = 'ok', finished_at = now(), detail = detail ||"
			" jsonb_build_object('findings', $2::int, 'verdict', $3::text, 'pages',"
			" jsonb_build_object('enqueued', $4::int, 'sent', $5::int, 'failed', $6::int,"
			" 'pending', $7::int)) where id = $1";
		char rid[24], nf[24], np[4][24];
		const char *pp[7] = {rid, nf, fail ? "fail" : a.nskipped ? "inconclusive" : "pass",
				     np[0], np[1], np[2], np[3]};
		snprintf(rid, sizeof(rid), "%" PRId64, run_id);
		snprintf(nf, sizeof(nf), "%zu", a.nfindings);
		snprintf(np[0], 24, "%zu", a.pages_enqueued);
		snprintf(np[1], 24, "%zu", pc.sent);
		snprintf(np[2], 24, "%zu", pc.failed);
		snprintf(np[3], 24, "%zu", pc.pending);
		if ((rc = db_exec(d, NULL, &err, "recording the run", sql, 7, pp)) < 0)
			goto fail;
	}
	push_metrics(ctx, &cfg, &a, true, t0, &pc);
	{
		/* The findings are recorded: a report that cannot be written is a warning. */
		pr_error rerr = PR_ERROR_INIT;
		if (reportdata_write_run(d, bs, &cfg, ctx->home, run_id, &report, &rerr) < 0)
			cli_warn(ctx, "report: %s", rerr.msg);
	}
	if (ctx->json) {
		json_t *arr = json_array(), *commits = json_array();
		for (size_t i = 0; i < a.ntests && a.tests[i].significant; i++) {
			const finding *f = &a.tests[i];
			json_array_append_new(arr, json_pack("{s:I,s:s,s:s,s:s,s:s,s:f,s:f,s:f,s:f,s:f,s:f}",
				"id", (json_int_t)f->id, "function", f->function, "file", f->file ? f->file : "",
				"direction", finding_dir_name(f->direction), "severity", stats_severity_name(f->severity),
				"baseline_share", f->baseline_share, "current_share", f->current_share,
				"delta", f->delta, "ci_low", f->ci_low, "ci_high", f->ci_high, "q_value", f->q_value));
		}
		for (size_t k = 0; k < x.ncommits; k++)
			json_array_append_new(commits, json_pack("{s:s,s:s,s:s?}", "sha", x.commits[k].sha,
				"author", x.commits[k].author, "subject", x.commits[k].subject));
		rc = cli_print_json(ctx, json_pack("{s:s,s:s,s:s,s:s?,s:I,s:I,s:s,s:o,s:o,s:{s:I,s:I,s:I,s:I},s:s?}",
			"service", x.service, "release", x.release, "commit", x.sha,
			"previous_commit", x.prev_sha[0] ? x.prev_sha : NULL,
			"deploy_id", (json_int_t)x.deploy_id, "run_id", (json_int_t)run_id,
			"verdict", fail ? "fail" : a.nskipped ? "inconclusive" : "pass",
			"findings", arr, "commits", commits,
			"pages", "enqueued", (json_int_t)a.pages_enqueued, "sent", (json_int_t)pc.sent,
			"failed", (json_int_t)pc.failed, "pending", (json_int_t)pc.pending,
			"report", report));
	} else {
		print_markdown(&x, &a, gate, fail);
		if (a.pages_enqueued || pc.sent || pc.failed || pc.pending)
			printf("\nPages: %zu enqueued, %zu sent, %zu failed, %zu pending.\n",
			       a.pages_enqueued, pc.sent, pc.failed, pc.pending);
		if (report) {
			printf("\nReport: ");
			cli_put_safe(stdout, report, 0);
			printf("\n");
		}
		rc = EXIT_OK;
	}
	if (rc == EXIT_OK && fail)
		rc = EXIT_GATE;
	goto out;
fail:
	if (run_id) {
		static const char sql[] = "update runs set status = 'failed', finished_at = now() where id = $1";
		char rid[24];
		const char *pp[1] = {rid};
		pr_error ignore = PR_ERROR_INIT;
		snprintf(rid, sizeof(rid), "%" PRId64, run_id);
		db_exec(d, NULL, &ignore, "recording the run", sql, 1, pp);
	}
	rc = cli_fail(ctx, &err);
	/* Only a run that got as far as analysing counts as a failed run for the metrics. */
	if (loaded && run_id)
		push_metrics(ctx, &cfg, &a, false, t0, &pc);
out:
	free(report);
	analysis_release(&a);
	gitinfo_commits_free(x.commits, x.ncommits);
	db_service_release(&svc);
	blob_store_free(bs);
	db_close(d);
	config_release(&cfg);
	return rc;
}
