/*
 * cmd_retention.c: `profreg retention` moves captures through the tiers
 * and holds storage to the budget; `profreg storage` shows where the
 * bytes and rows are. The engine is jobs/retention.c.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/commands.h"
#include "jobs/config.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"
#include "jobs/reportdata.h"
#include "jobs/retention.h"
#include "common/timeutil.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

enum { O_AT = 1700, O_DRY };

static void print_bytes(uint64_t b)
{
	static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)b;
	int u = 0;

	while (v >= 1024 && u < 4)
		v /= 1024, u++;
	if (u == 0)
		printf("%" PRIu64 " B", b);
	else
		printf("%.1f %s", v, unit[u]);
}

/* The incident snapshots' blobs a store holds: kept by retention, by no capture. */
static void snapshots_kept(const json_t *where, const char *count_key)
{
	json_int_t n = json_integer_value(json_object_get(where, count_key));

	if (!n)
		return;
	printf("; %" JSON_INTEGER_FORMAT " of incident snapshots (", n);
	print_bytes((uint64_t)json_integer_value(json_object_get(where, "snapshot_bytes")));
	printf(")");
}

static void print_result(const retention_result *r)
{
	char when[TIME_FMT_MAX];
	const char *would = r->dry_run ? "would be " : "";

	time_format(when, r->at_us);
	printf("retention%s at %s\n", r->dry_run ? " (dry run: nothing changed)" : "", when);
	printf("  by age:    %" PRIu64 " captures %smoved to summary, %" PRIu64 " %sdeleted\n",
	       r->to_summary, would, r->deleted, would);
	printf("  by budget: %" PRIu64 " captures %smoved to summary, %" PRIu64 " %sdeleted\n",
	       r->budget_to_summary, would, r->budget_deleted, would);
	printf("  %" PRIu64 " per-function rows %sremoved; %" PRIu64 " blobs %sdeleted (",
	       r->rows_removed, would, r->blobs_deleted, would);
	print_bytes(r->bytes_freed);
	printf("); %" PRIu64 " unreferenced blobs %sswept (", r->orphans_deleted, would);
	print_bytes(r->orphan_bytes);
	printf(")\n");
	printf("  %" PRIu64 " captures past their tier kept as forensic or pinned evidence",
	       r->protected_kept);
	if (r->skipped_locked)
		printf("; %" PRIu64 " busy, left for the next run", r->skipped_locked);
	printf("\n");
	if (r->reports_deleted) {
		printf("  %" PRIu64 " run report files past reports.keep_days %sdeleted (",
		       r->reports_deleted, would);
		print_bytes(r->report_bytes_freed);
		printf(")\n");
	}
	if (r->deletions_forgotten)
		printf("  %" PRIu64 " records of deleted captures %sforgotten (their bytes "
		       "no longer offered)\n",
		       r->deletions_forgotten, would);
	if (r->budget_bytes || r->budget_rows) {
		printf("  budget:    ");
		if (r->budget_bytes) {
			print_bytes(r->bytes_used);
			printf(" of ");
			print_bytes(r->budget_bytes);
			printf(" of blobs%s", r->budget_rows ? ", " : "");
		}
		if (r->budget_rows)
			printf("%" PRIu64 " of %" PRIu64 " rows", r->rows_used, r->budget_rows);
		printf("%s\n", r->over_budget ? " (OVER: what is left cannot be cut further)" : "");
		if (r->over_budget && r->budget_rows && r->rows_used > r->budget_rows)
			printf("  rows left: %" PRIu64 " in protected captures, %" PRIu64
			       " in hot captures the budget may not cut\n", r->protected_rows,
			       r->uncut_hot_rows);
	}
	if (r->run_id)
		printf("  run %" PRId64 ", %" PRIu64 " batches, %.2f s\n", r->run_id, r->batches,
		       r->seconds);
}

int cmd_retention(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"at", required_argument, O_AT, "TIME", "judge ages as of TIME (default now)"},
		{"dry-run", no_argument, O_DRY, NULL, "say what would be done; change nothing"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char usage[] = "profreg retention [--at T] [--dry-run] [--json]";
	static const char desc[] =
		"Move captures through the retention tiers (hot: blob and every row;\n"
		"summary: top functions only; then deleted), keep forensic and pinned\n"
		"captures whole, hold blobs and rows to the budget, and sweep blobs no\n"
		"capture keeps. Safe to interrupt and re-run, and to run beside nightly.\n"
		"The budget deletes summary captures only. --at may be at most 5 minutes\n"
		"ahead of the clock. Exit 0 done; 1 over budget: what is left (protected\n"
		"captures, hot ones that cannot be cut further) exceeds it; 2 bad usage\n"
		"(--at in the future); 3 the run failed.";
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	config cfg = {0};
	db *d = NULL;
	blob_store *bs = NULL;
	retention_opts o = {0};
	retention_result r;
	const char *arg, *at_s = NULL;
	char *reports = NULL;
	int c, rc, status;

	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		if (c == O_AT)
			at_s = arg;
		else if (c == O_DRY)
			o.dry_run = true;
	}
	if ((status = cli_end(p, c, false, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	if (at_s && time_parse(&o.at_us, at_s) < 0) {
		cli_error(ctx, "'--at %s' is not an ISO 8601 time", at_s);
		return EXIT_USAGE;
	}
	if (ctx_config_load(ctx, &cfg, &err) < 0)
		return cli_fail(ctx, &err);
	if (!(reports = reportdata_dir(&cfg, ctx->home))) {
		rc = pr_error_set(&err, PR_ENOMEM, "out of memory");
		goto fail;
	}
	o.reports_dir = reports;
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 || (rc = ctx_blobs_open(ctx, &bs, &err)) < 0 ||
	    (rc = retention_run(&r, d, bs, &cfg, &o, &err)) < 0)
		goto fail;
	status = EXIT_OK;
	if (ctx->json)
		status = cli_print_json(ctx, retention_result_json(&r));
	else if (!ctx->quiet)
		print_result(&r);
	if (r.orphans_newly_held) {
		char msg[PR_ERROR_MSG_MAX];
		retention_newer_orphans_msg(msg, sizeof(msg), &r);
		cli_error(ctx, "%s", msg);
	}
	if (r.over_budget) {
		char msg[PR_ERROR_MSG_MAX];
		retention_over_budget_msg(msg, sizeof(msg), &r);
		cli_error(ctx, "%s", msg);
		if (status == EXIT_OK)
			status = EXIT_GATE;
	}
	status = cli_finish(ctx, status);
	goto out;
fail:
	status = cli_fail(ctx, &err);
out:
	free(reports);
	blob_store_free(bs);
	db_close(d);
	config_release(&cfg);
	return status;
}

static void print_group(const char *name, json_t *g)
{
	printf("  %-24s %10" JSON_INTEGER_FORMAT " %12" JSON_INTEGER_FORMAT
	       " %8" JSON_INTEGER_FORMAT "  ", name,
	       json_integer_value(json_object_get(g, "captures")),
	       json_integer_value(json_object_get(g, "rows")),
	       json_integer_value(json_object_get(g, "blobs")));
	print_bytes((uint64_t)json_integer_value(json_object_get(g, "blob_bytes")));
	putchar('\n');
}

int cmd_storage(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {{NULL, 0, 0, NULL, NULL}};
	static const char usage[] = "profreg storage [--json]";
	static const char desc[] =
		"Storage by tier and by service: captures, per-function rows, and the\n"
		"blobs they keep (compressed bytes as stored), against the budget; for\n"
		"a local store, also what is on disk, what no capture keeps, and the\n"
		"temporary files unfinished writes left (`profreg retention` removes\n"
		"those older than a minute); for an S3 store, the bucket's\n"
		"objects under the prefix (listed) and what no capture keeps.";
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	config cfg = {0};
	db *d = NULL;
	blob_store *bs = NULL;
	json_t *doc = NULL;
	const char *arg;
	int c, rc, status;

	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		;
	if ((status = cli_end(p, c, false, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	if (ctx_config_load(ctx, &cfg, &err) < 0)
		return cli_fail(ctx, &err);
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 || (rc = ctx_blobs_open(ctx, &bs, &err)) < 0 ||
	    (rc = retention_storage(&doc, d, bs, &cfg, &err)) < 0)
		goto fail;
	if (ctx->json) {
		status = cli_print_json(ctx, doc);
		doc = NULL;
	} else {
		const char *name;
		json_t *g, *total = json_object_get(doc, "total");
		json_t *disk = json_object_get(doc, "disk");
		json_t *budget = json_object_get(doc, "budget");

		printf("  %-24s %10s %12s %8s  %s\n", "TIER", "CAPTURES", "ROWS", "BLOBS",
		       "BLOB BYTES");
		json_object_foreach(json_object_get(doc, "tiers"), name, g)
			print_group(name, g);
		printf("\n  %-24s %10s %12s %8s  %s\n", "SERVICE", "CAPTURES", "ROWS", "BLOBS",
		       "BLOB BYTES");
		json_object_foreach(json_object_get(doc, "services"), name, g)
			print_group(name, g);
		printf("\n");
		print_group("total", total);
		if (json_integer_value(json_object_get(total, "missing_blobs")))
			printf("  WARNING: %" JSON_INTEGER_FORMAT " kept blobs are missing from "
			       "the store\n",
			       json_integer_value(json_object_get(total, "missing_blobs")));
		printf("  budget: ");
		if (json_integer_value(json_object_get(budget, "bytes"))) {
			print_bytes((uint64_t)json_integer_value(json_object_get(total,
										  "blob_bytes")));
			printf(" of ");
			print_bytes((uint64_t)json_integer_value(json_object_get(budget, "bytes")));
		} else {
			printf("no byte budget");
		}
		if (json_integer_value(json_object_get(budget, "rows")))
			printf(", %" JSON_INTEGER_FORMAT " of %" JSON_INTEGER_FORMAT " rows",
			       json_integer_value(json_object_get(total, "rows")),
			       json_integer_value(json_object_get(budget, "rows")));
		printf("%s\n", json_is_true(json_object_get(budget, "over")) ? " (OVER)" : "");
		json_t *bucket = json_object_get(doc, "bucket");
		if (bucket) {
			printf("  in the bucket (");
			cli_put_safe(stdout,
				     json_string_value(json_object_get(bucket, "store")), 0);
			printf("): %" JSON_INTEGER_FORMAT " objects, ",
			       json_integer_value(json_object_get(bucket, "objects")));
			print_bytes((uint64_t)json_integer_value(json_object_get(bucket, "bytes")));
			printf("; %" JSON_INTEGER_FORMAT " not kept by any capture (",
			       json_integer_value(json_object_get(bucket, "unreferenced_objects")));
			print_bytes((uint64_t)json_integer_value(json_object_get(bucket,
									 "unreferenced_bytes")));
			printf(")");
			snapshots_kept(bucket, "snapshot_objects");
			printf("\n");
		}
		if (disk) {
			printf("  on disk: %" JSON_INTEGER_FORMAT " files, ",
			       json_integer_value(json_object_get(disk, "files")));
			print_bytes((uint64_t)json_integer_value(json_object_get(disk, "bytes")));
			printf("; %" JSON_INTEGER_FORMAT " not kept by any capture (",
			       json_integer_value(json_object_get(disk, "unreferenced_files")));
			print_bytes((uint64_t)json_integer_value(json_object_get(disk,
									"unreferenced_bytes")));
			printf(")");
			snapshots_kept(disk, "snapshot_files");
			printf("\n");
			printf("  temporary: %" JSON_INTEGER_FORMAT " files, ",
			       json_integer_value(json_object_get(disk, "temp_files")));
			print_bytes((uint64_t)json_integer_value(json_object_get(disk,
										 "temp_bytes")));
			printf(" of unfinished writes\n");
		}
		status = EXIT_OK;
	}
	status = cli_finish(ctx, status);
	goto out;
fail:
	status = cli_fail(ctx, &err);
out:
	json_decref(doc);
	blob_store_free(bs);
	db_close(d);
	config_release(&cfg);
	return status;
}
