/*
 * context.h: what a command needs from the environment: the database
 * (resolved from --db, PROFREG_DB, the libpq environment, or the private
 * cluster), the blob store under the state directory, and input limits.
 */
#ifndef PR_CONTEXT_H
#define PR_CONTEXT_H

#include "jobs/cli/cli.h"
#include "pipeline/blob.h"
#include "pipeline/db.h"
#include "pipeline/profile.h"

/*
 * Connect to the database and bring its schema up to date. The
 * connection is chosen in this order: --db (an empty --db is PR_EUSAGE),
 * $PROFREG_DB, the standard libpq environment when PGHOST or PGDATABASE
 * is set, else the private cluster under the state directory, started if
 * it is not running. A private cluster that does not exist, or a
 * database without profreg's schema, is PR_EDB: only setup creates them.
 * The caller closes *out with db_close.
 */
int ctx_db_open(cli_ctx *ctx, db **out, pr_error *err);

/*
 * The same for setup steps (`db init`, `db migrate`, `service add`): the
 * private cluster and its database are created when absent, and an
 * empty database gets the schema.
 */
int ctx_db_open_setup(cli_ctx *ctx, db **out, pr_error *err);

/*
 * Load the configuration: --config FILE, else <home>/profreg.json when it
 * exists, else the defaults. Release with config_release.
 */
struct config;
int ctx_config_load(cli_ctx *ctx, struct config *out, pr_error *err);

/*
 * Open the blob store the configuration selects (blobs.store): the local
 * one under <home>/blobs, or the S3 bucket, its credentials read from the
 * environment or 0600 files (jobs/blobs.h). Free with blob_store_free.
 */
int ctx_blobs_open(cli_ctx *ctx, blob_store **out, pr_error *err);

#endif
