/*
 * retention.h: tiered retention of captures under a storage budget.
 *
 * Tiers, by the age of a capture (captured_at against `at`), per service
 * (config_service_tiers):
 *   hot      younger than hot_days: the blob and every per-function row;
 *   summary  up to summary_days: no blob; the top summary_top functions
 *            by self value plus one synthetic "(other functions)" row
 *            holding the rest, so the rows still add up to the total;
 *   deleted  older: the capture and its rows are gone.
 * Protected captures are never moved, cut or deleted, by age or budget:
 * forensic ones (retention_class 'forensic' with no retain_until, or one
 * still in the future) and those pinned as the baseline of an open
 * finding. A forensic capture whose retain_until has passed is tiered by
 * its age like any other.
 *
 * Budget (config retention.budget_bytes / budget_rows), applied after the
 * tiers: the oldest unprotected hot captures move to summary first (their
 * blobs go, their rows are cut), then the oldest summary captures are
 * deleted, until both figures fit. A hot capture is never deleted by the
 * budget. When what is left cannot be cut further (protected data, and
 * hot captures whose rows a cut would not shrink: summary_top 0, or no
 * more rows than their top functions) and still does not fit, the result
 * says so (over_budget, with where the rows are) and nothing protected or
 * hot is deleted.
 *
 * Crash safety: captures move in batches of config retention.batch, each
 * one transaction that re-checks protection on rows it holds locked
 * (FOR UPDATE, SKIP LOCKED: a capture being pinned right now is left for
 * the next run) and queues the blob keys in `blob_sweep`. Blob files are
 * deleted only after that commit, and only when no capture that still
 * keeps its blob (blob_deleted_at null) names the key; the queue row goes
 * after the file. A run killed anywhere leaves committed batches and a
 * queue the next run finishes. Blobs no row names at all (an ingest that
 * died between writing the blob and its row) are removed once older than
 * the grace period, found by walking the store (a local folder's files,
 * a bucket's objects through ListObjectsV2); so are stale temporary files.
 * Only those older than the newest capture or snapshot the database holds
 * (less RETENTION_STORE_SKEW_US), though: one written after it is what a
 * database restored from an older backup no longer knows about (captures
 * stored since, a finding's evidence among them), not a dead ingest's. It
 * stays, counted apart (orphans_kept_newer), and the command says so on
 * stderr (retention_newer_orphans_msg) the first time. The run takes a
 * hold on them (an audit row, DB_BLOBS_HELD), and so does a run that
 * finds the database behind its reports folder (runs.c): later sweeps
 * keep the blobs put between a hold's restore point and the time it was
 * taken for as long as a capture lives (the larger of hot_days and
 * summary_days), after a newer capture is stored too. A dead ingest's
 * blob put outside every hold goes once a later capture is stored.
 *
 * The run holds the advisory lock RETENTION_LOCK, distinct from nightly's,
 * so the two can run side by side.
 *
 * A dry run is one transaction, rolled back, bounded like a batch. It
 * picks captures FOR NO KEY UPDATE SKIP LOCKED: busy ones are skipped as a
 * run would skip them, and a pin being inserted meanwhile (its foreign-key
 * check takes FOR KEY SHARE) does not wait on it; only the rows it deletes
 * are held against a pin until it ends. With nothing changing meanwhile it
 * predicts exactly what a run does.
 */
#ifndef PR_RETENTION_H
#define PR_RETENTION_H

#include <stdbool.h>
#include <stdint.h>

#include "jobs/config.h"
#include "pipeline/blob.h"
#include "pipeline/db.h"

#define RETENTION_LOCK "profreg-retention"

/* Bounds of one batch's transaction (PostgreSQL interval syntax). */
#define RETENTION_STATEMENT_TIMEOUT "30s"
#define RETENTION_LOCK_TIMEOUT "5s"

/* How far past the clock `at` may be: a later one would expire evidence early. */
#define RETENTION_AT_SLACK_US (5 * 60 * 1000000LL)

/*
 * 0 when retention may run as of `at_us`; PR_EUSAGE (saying why) when it
 * is more than RETENTION_AT_SLACK_US after the clock. A job that ends in
 * retention checks this before it starts, not after its work is done.
 */
int retention_check_at(int64_t at_us, pr_error *err);

/* Unreferenced blob files younger than this are left alone (an ingest may be writing the row). */
#define RETENTION_ORPHAN_GRACE_US (6 * 3600 * 1000000LL)

/*
 * How far the store's clock (a file's mtime, an object's Last-Modified)
 * may run behind the database's (a capture's ingested_at): an unreferenced
 * blob less than this older than the newest row is kept as newer than the
 * database.
 */
#define RETENTION_STORE_SKEW_US (3600 * 1000000LL)

typedef struct retention_opts {
	int64_t at_us; /* "now" for ages; 0: the clock; at most RETENTION_AT_SLACK_US ahead */
	bool dry_run;            /* change nothing; report what would happen */
	int64_t orphan_grace_us; /* 0: RETENTION_ORPHAN_GRACE_US */
	const char *reports_dir; /* where run reports are (reportdata_dir): old ones are
				  * deleted (reports.keep_days); NULL: none */
} retention_opts;

typedef struct retention_result {
	int64_t run_id;              /* 0 when not recorded */
	int64_t at_us;
	bool dry_run;
	uint64_t to_summary;         /* hot -> summary by age */
	uint64_t deleted;            /* deleted by age */
	uint64_t budget_to_summary;  /* hot -> summary to meet the budget */
	uint64_t budget_deleted;     /* summary captures deleted to meet the budget */
	uint64_t rows_removed;       /* per-function rows gone (net of "(other)" rows) */
	uint64_t blobs_deleted, bytes_freed;
	uint64_t orphans_deleted, orphan_bytes, temps_deleted;
	/*
	 * Unreferenced blobs past the grace period kept all the same: written
	 * after the newest capture or snapshot the database holds (db_newest_us,
	 * 0 when it holds none), so the database may be behind the store.
	 */
	uint64_t orphans_kept_newer, orphan_kept_bytes;
	uint64_t orphans_newly_held; /* of those, kept under no hold before this run */
	int64_t db_newest_us;
	uint64_t batches;            /* transactions that moved captures */
	uint64_t skipped_locked;     /* captures busy elsewhere, left for the next run */
	uint64_t protected_kept;     /* captures past their tier kept as forensic or pinned */
	/*
	 * Records of deleted captures (kept so that ingest does not store
	 * their bytes again) dropped: no ingest met their bytes for the
	 * service's summary_days.
	 */
	uint64_t deletions_forgotten;
	uint64_t reports_deleted; /* run report files past reports.keep_days */
	uint64_t report_bytes_freed;
	uint64_t bytes_used, rows_used;     /* after the run */
	uint64_t budget_bytes, budget_rows; /* 0: none */
	bool over_budget;            /* what cannot be cut further exceeds the budget */
	uint64_t protected_rows;     /* over the row budget: rows of protected captures */
	uint64_t uncut_hot_rows;     /* over the row budget: rows of hot captures it may not cut */
	double seconds;
} retention_result;

/*
 * Run retention once with `cfg`'s tiers, batch size and budget. Takes
 * RETENTION_LOCK (PR_ELOCKED when another run holds it) and, unless
 * o->dry_run, records a `runs` row of kind "retention"
 * (status "ok", "over_budget" or "failed"; runs left "running" by a killed
 * retention are marked "interrupted") and one audit row per batch plus one
 * for the run. A dry run does the same work in one transaction that it
 * rolls back, and deletes no file. *out is filled even on failure with
 * what was done until then. Being over budget is not an error: check
 * out->over_budget. An `at` more than RETENTION_AT_SLACK_US past the clock
 * is refused (PR_EUSAGE) before anything is done: ages and retain_until
 * judged in the future would delete what must still be kept.
 */
int retention_run(retention_result *out, db *d, blob_store *bs, const config *cfg,
		  const retention_opts *o, pr_error *err);

/*
 * The one line an operator's alerting looks for when what is left cannot
 * be cut further and still exceeds the budget: which figure, and for rows
 * how many are protected and how many hot ("over budget: ..."), written
 * into out[n]; the command line prints it after its name.
 */
void retention_over_budget_msg(char *out, size_t n, const retention_result *r);

/*
 * The one line that says the run kept unreferenced blobs newer than the
 * database (r->orphans_kept_newer > 0): how many, since when, what it may
 * mean and what to do, written into out[n]. The commands that run
 * retention print it as an error line, under --quiet too, when some were
 * under no hold before (orphans_newly_held): a store the database is
 * behind must not go unnoticed, and once held it is not said every night.
 */
void retention_newer_orphans_msg(char *out, size_t n, const retention_result *r);

/* The result as a JSON object (the caller owns it; NULL when out of memory). */
struct json_t *retention_result_json(const retention_result *r);

/*
 * Storage use against the budget: per tier and per service, captures,
 * per-function rows and the bytes of the blobs they keep (what
 * blob_stored_size reports, each blob counted once per group), the total
 * over distinct blobs, and what the store holds and how much of it no
 * capture keeps: for a local store under "disk" (files, bytes, and the
 * temporary files of writes unfinished or in progress, "temp_files" and
 * "temp_bytes", not among "files" and "bytes"), for S3 under "bucket"
 * (objects and bytes under the prefix, listed with ListObjectsV2). *out
 * is a new JSON object the caller owns.
 */
int retention_storage(struct json_t **out, db *d, blob_store *bs, const config *cfg,
		      pr_error *err);

#endif
