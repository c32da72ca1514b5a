/*
 * cmd_blobs.c: `profreg blobs migrate --to s3`: copy the local blob store
 * into the configured S3 bucket, resumably; `profreg blobs check`: read
 * back every blob a capture rests on. The jobs are in jobs/blobs.c.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/commands.h"
#include "jobs/blobs.h"
#include "jobs/config.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

enum { O_TO = 1700, O_DELETE, O_SERVICE };

static int blobs_migrate_cmd(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"to", required_argument, O_TO, "s3",
		 "where to: the S3 store of the configuration"},
		{"delete-local", no_argument, O_DELETE, NULL,
		 "remove each local blob once its copy reads back from S3"},
		{NULL, 0, 0, NULL, NULL},
	};
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	config cfg;
	db *d = NULL;
	blob_store *from = NULL, *to = NULL;
	blobs_migrate_opts o = {0};
	blobs_migrate_result r;
	const char *arg, *dest = NULL;
	bool bad = false;
	int c, rc, status;

	memset(&cfg, 0, sizeof(cfg));
	if (cli_parser_new(
		    &p, ctx, argc, argv, opts,
		    "profreg blobs migrate --to s3 [--delete-local] [--json]",
		    "Copy every blob of the local store (<home>/blobs) into the S3 bucket the\n"
		    "configuration's \"blobs\" section names (blobs.store may still be \"local\"\n"
		    "while it runs). Each blob is checked before it is copied as stored, and\n"
		    "what is already in the bucket is not written again: run it again to\n"
		    "resume a migration that stopped, and once more after switching\n"
		    "blobs.store to \"s3\" to copy what was ingested meanwhile.\n"
		    "--delete-local removes each local blob after its copy is read back and\n"
		    "checked; it needs blobs.store set to \"s3\" (the local store must stay\n"
		    "whole while it is the one read). Exit 0 done; 2 usage; 3 the bucket or\n"
		    "the database failed (run it again); 4 some local blobs failed their\n"
		    "check and were left where they are.") < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		if (c == O_TO) {
			dest = arg;
			if (strcmp(arg, "s3") != 0) {
				cli_error(ctx, "'--to %s': the only target is s3", arg);
				bad = true;
			}
		} else if (c == O_DELETE) {
			o.delete_local = true;
		}
	}
	if ((status = cli_end(p, c, bad, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	if (!dest) {
		cli_error(ctx, "expected '--to s3' (see --help)");
		return EXIT_USAGE;
	}
	if ((rc = ctx_config_load(ctx, &cfg, &err)) < 0)
		goto fail;
	o.max_bytes = (size_t)cfg.limits.max_decompressed_bytes;
	o.from_live = !cfg.blobs.use_s3;
	if ((rc = blobs_open_s3(&to, &cfg, &err)) < 0 ||
	    (rc = blobs_open_local(&from, ctx->home, &err)) < 0 ||
	    (rc = ctx_db_open(ctx, &d, &err)) < 0)
		goto fail;
	rc = blobs_migrate(&r, d, from, to, &o, &err);
	/* One line: the failure, and where it stopped when it had begun. */
	if (rc < 0 && err.code != PR_EUSAGE && err.code != PR_ELOCKED) {
		cli_error(ctx,
			  "%s (stopped after %" PRIu64 " blobs: %" PRIu64 " copied, %" PRIu64
			  " already there; run it again to resume)",
			  err.msg, r.copied + r.present + r.unreadable, r.copied, r.present);
		status = exitcode_for(err.code);
		goto out;
	}
	if (rc < 0)
		goto fail;
	if (ctx->json) {
		status = cli_print_json(ctx, blobs_migrate_json(&r));
	} else {
		if (!ctx->quiet) {
			printf("migrated %" PRIu64 " blobs from %s to ", r.blobs,
			       blob_store_describe(from));
			cli_put_safe(stdout, blob_store_describe(to), 0);
			printf(": %" PRIu64 " copied (%" PRIu64 " bytes), %" PRIu64
			       " already there, %" PRIu64
			       " local copies removed, %.2f s (run %" PRId64 ")\n",
			       r.copied, r.bytes_copied, r.present, r.deleted_local, r.seconds,
			       r.run_id);
		}
		status = EXIT_OK;
	}
	if (r.unreadable) {
		cli_error(ctx,
			  "%" PRIu64 " local blobs failed their check and were not copied "
			  "(the first: '%s')",
			  r.unreadable, r.first_unreadable);
		status = EXIT_DATA;
	}
	status = cli_finish(ctx, status);
	goto out;
fail:
	status = cli_fail(ctx, &err);
out:
	blob_store_free(from);
	blob_store_free(to);
	db_close(d);
	config_release(&cfg);
	return status;
}

#define CHECK_SERVICES_MAX 256

static void print_bad(const blobs_check_bad *b)
{
	printf("  %s  %s", b->key, b->missing ? "missing" : "damaged");
	if (b->capture_id) {
		printf("  capture %" PRId64 " of '", b->capture_id);
		cli_put_safe(stdout, b->service ? b->service : "", 0);
		printf("'");
		if (b->captures > 1)
			printf(" and %" PRIu64 " more", b->captures - 1);
	}
	if (b->snapshot_id)
		printf("%s snapshot %" PRId64, b->capture_id ? "," : " ", b->snapshot_id);
	printf("\n");
}

static int blobs_check_cmd(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"service", required_argument, O_SERVICE, "NAME",
		 "only the blobs of this service's captures (repeatable)"},
		{NULL, 0, 0, NULL, NULL},
	};
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	config cfg;
	db *d = NULL;
	blob_store *bs = NULL;
	blobs_check_opts o = {0};
	blobs_check_result r = {0};
	const char *arg, *services[CHECK_SERVICES_MAX];
	bool bad = false;
	int c, rc, status;

	memset(&cfg, 0, sizeof(cfg));
	if (cli_parser_new(
		    &p, ctx, argc, argv, opts, "profreg blobs check [--service NAME]... [--json]",
		    "Read back every blob that a capture not yet cut to a summary, or a\n"
		    "snapshot, rests on, from the configured store, and check it: it must\n"
		    "decode and hash to its key. Prints the blobs that are missing or\n"
		    "damaged, each with a capture that rests on it. Ingesting that capture's\n"
		    "original file again restores its blob. With --service, only those\n"
		    "services' captures (no snapshots). In S3 each blob is downloaded.\n"
		    "Exit 0 every blob checks; 4 some are missing or damaged, or a --service\n"
		    "is no service; 3 the store or the database failed.") < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		if (c == O_SERVICE) {
			if (o.nservices == CHECK_SERVICES_MAX) {
				cli_error(ctx, "at most %d --service options", CHECK_SERVICES_MAX);
				bad = true;
			} else {
				services[o.nservices++] = arg;
			}
		}
	}
	if ((status = cli_end(p, c, bad, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	o.services = services;
	if ((rc = ctx_config_load(ctx, &cfg, &err)) < 0)
		goto fail;
	o.max_bytes = (size_t)cfg.limits.max_decompressed_bytes;
	if ((rc = blobs_open(&bs, &cfg, ctx->home, &err)) < 0 ||
	    (rc = ctx_db_open(ctx, &d, &err)) < 0)
		goto fail;
	/*
	 * One line: the error, and how far the check got when it got anywhere
	 * (a --service that is no service stops it before the first blob).
	 */
	if ((rc = blobs_check(&r, d, bs, &o, &err)) < 0 && r.blobs == 0)
		goto fail;
	if (rc < 0) {
		cli_error(ctx, "%s (stopped after %" PRIu64 " blobs)", err.msg, r.blobs);
		status = exitcode_for(err.code);
		goto out;
	}
	if (ctx->json) {
		status = cli_print_json(ctx, blobs_check_json(&r));
	} else {
		if (!ctx->quiet) {
			printf("checked %" PRIu64 " blobs (%" PRIu64 " bytes) in ", r.blobs,
			       r.bytes);
			cli_put_safe(stdout, blob_store_describe(bs), 0);
			printf(": %" PRIu64 " missing, %" PRIu64 " damaged, %.2f s (run %" PRId64
			       ")\n",
			       r.missing, r.damaged, r.seconds, r.run_id);
		}
		for (size_t i = 0; i < r.nbad; i++)
			print_bad(&r.bad[i]);
		if (r.missing + r.damaged > r.nbad)
			printf("  (%" PRIu64 " more not listed)\n", r.missing + r.damaged - r.nbad);
		status = EXIT_OK;
	}
	if (r.missing || r.damaged) {
		cli_error(ctx,
			  "blobs missing: %" PRIu64 ", damaged: %" PRIu64 "; ingest each "
			  "capture's original file again to restore its blob",
			  r.missing, r.damaged);
		status = EXIT_DATA;
	}
	status = cli_finish(ctx, status);
	goto out;
fail:
	status = cli_fail(ctx, &err);
out:
	blobs_check_release(&r);
	blob_store_free(bs);
	db_close(d);
	config_release(&cfg);
	return status;
}

int cmd_blobs(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_command cmds[] = {
		{"migrate", blobs_migrate_cmd,
		 "copy the local blob store into the configured S3 bucket (resumable)"},
		{"check", blobs_check_cmd,
		 "read back every blob a capture rests on; name the missing and damaged"},
		{NULL, NULL, NULL},
	};
	return cli_dispatch(ctx, cmds, ctx->prog, argc - 1, argv + 1);
}
