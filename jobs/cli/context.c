/*
 * context.c: resolve the database and the blob store for a command.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/context.h"
#include "common/buf.h"
#include "common/fileio.h"
#include "pipeline/pgembed.h"
#include "jobs/access.h"
#include "jobs/blobs.h"
#include "jobs/config.h"
#include "jobs/reportdata.h"
#include "jobs/runs.h"

#include <unistd.h>

#include <stdlib.h>
#include <string.h>

/*
 * Connect and migrate. Only a setup step (`setup`) may create the private
 * cluster or put a schema into an empty database; a job that finds
 * neither fails, so a typo in --home or --db never makes a new, empty
 * world that analyses nothing and reports success.
 */
/* db_session_fn: a new session of the command's tagged as db_open's was. */
static int tag_session(db *d, void *prog, pr_error *err)
{
	return access_session(d, prog, err);
}

static int open_db(cli_ctx *ctx, db **out, bool setup, pr_error *err)
{
	pr_error rerr = PR_ERROR_INIT;
	const char *conninfo = ctx->db;
	char *embedded = NULL;
	int applied = 0, version = 0, rc;
	bool current = false;

	*out = NULL;
	/*
	 * A command that reads no configuration still refuses a --config it
	 * cannot read: a mistyped path would pass here and fail only in the
	 * commands that read it (the nightly, at night).
	 */
	if (ctx->config && fileio_check_named("config", ctx->config, &rerr) < 0) {
		rc = pr_error_set(err, PR_EUSAGE, "%s", rerr.msg);
		goto out;
	}
	if (conninfo && !*conninfo) {
		rc = pr_error_set(err, PR_EUSAGE,
				  "'--db' is empty: give a connection string (an unset secret?)");
		goto out;
	}
	if (!conninfo && (conninfo = getenv("PROFREG_DB")) && !*conninfo) {
		/*
		 * Set but empty, as an empty --db: an unset secret in a unit file
		 * or a cron line must not fall back to the private cluster, where
		 * the command finds an empty world and reports success.
		 */
		rc = pr_error_set(err, PR_EUSAGE,
				  "PROFREG_DB is set but empty: give a connection string, or "
				  "unset it");
		goto out;
	}
	if (!conninfo) {
		if (getenv("PGHOST") || getenv("PGDATABASE")) {
			conninfo = ""; /* libpq reads its own environment */
		} else {
			rc = setup ? pgembed_start(&embedded, ctx->home, ctx->quiet, err)
				   : pgembed_open(&embedded, ctx->home, ctx->quiet, err);
			if (rc < 0)
				goto out;
			conninfo = embedded;
		}
	}
	if ((rc = db_open_check(out, conninfo, &version, &current, err)) < 0)
		goto out;
	if (!setup) {
		if (version == 0) {
			rc = pr_error_set(err, PR_EDB, "no database: the database holds no "
					  "profreg schema (set it up with 'profreg db init', or "
					  "check --db)");
			goto out;
		}
	}
	/* A schema that is current, the common case, costs that one query. */
	if (!current && (rc = db_migrate(*out, &applied, err)) < 0)
		goto out;
	/*
	 * Audit rows the database writes name the command, the OS user and
	 * the host: on every session, the ones a reconnect makes too.
	 */
	if ((rc = access_session(*out, ctx->prog, err)) < 0)
		goto out;
	db_on_session(*out, tag_session, (void *)ctx->prog);
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

int ctx_db_open(cli_ctx *ctx, db **out, pr_error *err)
{
	return open_db(ctx, out, false, err);
}

int ctx_db_open_setup(cli_ctx *ctx, db **out, pr_error *err)
{
	return open_db(ctx, out, true, err);
}

/*
 * The runs a command begins take ids past the reports in the folder the
 * configuration names (runs.h): a database restored from a dump must not
 * write its next run's reports over a lost run's.
 */
static int reports_dir_set(cli_ctx *ctx, config *cfg, pr_error *err)
{
	char *dir = reportdata_dir(cfg, ctx->home);
	int rc;

	if (!dir) {
		config_release(cfg);
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	}
	rc = runs_set_reports_dir(dir, err);
	free(dir);
	if (rc < 0)
		config_release(cfg);
	return rc;
}

int ctx_config_load(cli_ctx *ctx, config *out, pr_error *err)
{
	buf path = BUF_INIT;
	int rc;

	if (ctx->config)
		return (rc = config_load(out, ctx->config, err)) < 0
			       ? rc
			       : reports_dir_set(ctx, out, err);
	if (buf_printf(&path, "%s/profreg.json", ctx->home) < 0) {
		memset(out, 0, sizeof(*out));
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	}
	rc = config_load(out, access(path.ptr, F_OK) == 0 ? path.ptr : NULL, err);
	buf_release(&path);
	return rc < 0 ? rc : reports_dir_set(ctx, out, err);
}

int ctx_blobs_open(cli_ctx *ctx, blob_store **out, pr_error *err)
{
	config cfg;
	int rc;

	*out = NULL;
	if ((rc = ctx_config_load(ctx, &cfg, err)) == 0)
		rc = blobs_open(out, &cfg, ctx->home, err);
	config_release(&cfg);
	return rc;
}
