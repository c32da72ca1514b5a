/*
 * cmd_blobs.c: `profreg blobs migrate --to s3`: copy the local blob store
 * into the configured S3 bucket, resumably. The job is jobs/blobs.c.
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

enum { O_TO = 1700, O_DELETE };

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
		    "checked. Exit 0 done; 3 the bucket or the database failed (run it again);\n"
		    "4 some local blobs failed their check and were left where they are.") < 0)
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
	if ((rc = blobs_open_s3(&to, &cfg, &err)) < 0 ||
	    (rc = blobs_open_local(&from, ctx->home, &err)) < 0 ||
	    (rc = ctx_db_open(ctx, &d, &err)) < 0)
		goto fail;
	rc = blobs_migrate(&r, d, from, to, &o, &err);
	if (rc < 0) {
		cli_error(ctx,
			  "stopped after %" PRIu64 " of %" PRIu64 " blobs (%" PRIu64
			  " copied, %" PRIu64 " already there); run it again to resume",
			  r.copied + r.present + r.unreadable, r.blobs, r.copied, r.present);
		goto fail;
	}
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

int cmd_blobs(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_command cmds[] = {
		{"migrate", blobs_migrate_cmd,
		 "copy the local blob store into the configured S3 bucket (resumable)"},
		{NULL, NULL, NULL},
	};
	return cli_dispatch(ctx, cmds, ctx->prog, argc - 1, argv + 1);
}
