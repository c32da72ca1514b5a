/*
 * context.c: resolve the database and the blob store for a command.
 */
#define _POSIX_C_SOURCE 200809L
#include "context.h"
#include "../common/buf.h"
#include "../common/fileio.h"
#include "../pipeline/pgembed.h"

#include <stdlib.h>
#include <string.h>

int ctx_db_open(cli_ctx *ctx, db **out, pr_error *err)
{
	const char *conninfo = ctx->db;
	char *embedded = NULL;
	int applied = 0, rc;

	*out = NULL;
	if (!conninfo || !*conninfo)
		conninfo = getenv("PROFREG_DB");
	if (!conninfo || !*conninfo) {
		if (getenv("PGHOST") || getenv("PGDATABASE")) {
			conninfo = ""; /* libpq reads its own environment */
		} else {
			if ((rc = pgembed_start(&embedded, ctx->home, ctx->quiet, err)) < 0)
				goto out;
			conninfo = embedded;
		}
	}
	if ((rc = db_open(out, conninfo, err)) < 0)
		goto out;
	if ((rc = db_migrate(*out, &applied, err)) < 0)
		goto out;
	if (applied && !ctx->quiet)
		fprintf(stderr, "profreg: applied %d database migration%s\n", applied,
			applied == 1 ? "" : "s");
out:
	if (rc < 0 && *out) {
		db_close(*out);
		*out = NULL;
	}
	free(embedded);
	return rc;
}

int ctx_blobs_open(cli_ctx *ctx, blob_store **out, pr_error *err)
{
	buf path = BUF_INIT;
	int rc;

	*out = NULL;
	if (buf_printf(&path, "%s/blobs", ctx->home) < 0) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	rc = blob_store_open_dir(out, path.ptr, err);
out:
	buf_release(&path);
	return rc;
}
