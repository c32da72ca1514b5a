/*
 * context.h: what a command needs from the environment: the database
 * (resolved from --db, PROFREG_DB, the libpq environment, or the private
 * cluster), the blob store under the state directory, and input limits.
 */
#ifndef PR_CONTEXT_H
#define PR_CONTEXT_H

#include "cli.h"
#include "../pipeline/blob.h"
#include "../pipeline/db.h"
#include "../pipeline/profile.h"

/*
 * Connect to the database and bring its schema up to date. The
 * connection is chosen in this order: --db, $PROFREG_DB, the standard
 * libpq environment when PGHOST or PGDATABASE is set, else the private
 * cluster under the state directory (created and started on first use).
 * The caller closes *out with db_close.
 */
int ctx_db_open(cli_ctx *ctx, db **out, pr_error *err);

/* Open the blob store under <home>/blobs; free with blob_store_free. */
int ctx_blobs_open(cli_ctx *ctx, blob_store **out, pr_error *err);

#endif
