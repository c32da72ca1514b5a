/*
 * ingestrun.h: the ingest of many files at once, a manifest's lines or a
 * list of files, as `profreg ingest` runs it.
 *
 * Files go in batches of up to INGESTRUN_BATCH_MAX captures or
 * INGESTRUN_BATCH_BYTES of files, each batch one transaction with the
 * single-file guarantees (pipeline/ingest.h). With a second connection,
 * the next batch is read, looked up and parsed on a thread while one is
 * written, so parsing and the server's work overlap. Every capture's
 * outcome is handed to the caller's callback in the order of the input,
 * whatever the batching; a failure of the database, the blob store or
 * memory stops the run at that capture, saying how far it got.
 */
#ifndef PR_INGESTRUN_H
#define PR_INGESTRUN_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"
#include "pipeline/blob.h"
#include "pipeline/db.h"
#include "pipeline/ingest.h"
#include "pipeline/profile.h"

/* Captures written per transaction, and the most file bytes a batch holds in memory. */
#define INGESTRUN_BATCH_MAX 64
#define INGESTRUN_BATCH_BYTES (64u << 20)

/* What a run did so far, capture by capture. */
typedef struct ingestrun_counts {
	size_t stored, already, failed;
	size_t deleted;   /* skipped: retention deleted a capture of these bytes */
	size_t repaired;  /* blobs found missing or damaged, restored from the file */
	size_t not_tried; /* left out after an infrastructure failure */
	size_t done;      /* outcomes handed to the callback */
	size_t total;     /* captures the input lists */
} ingestrun_counts;

/*
 * One capture's outcome: `name` is the file (or, for a manifest line that
 * could not be read, where it is); `res` is NULL when `err` is set and
 * nothing was tried, and valid until the callback returns. A failed
 * capture has err->code set; one that stopped the run has a message that
 * starts "stopped at ...".
 */
typedef void (*ingestrun_record_fn)(void *payload, const char *name, const ingest_result *res,
				    const pr_error *err, const ingestrun_counts *counts);

/* A batch is about to be written; `name` is its first file. */
typedef void (*ingestrun_progress_fn)(void *payload, const char *name,
				      const ingestrun_counts *counts);

typedef struct ingestrun_opts {
	db *d;     /* writes every batch */
	db *ahead; /* optional: reads the next batch's look-ups meanwhile */
	blob_store *bs;
	profile_limits lim;
	unsigned jobs; /* parse threads a batch */
	bool again;    /* store bytes whose capture retention deleted */
	ingestrun_record_fn record;
	ingestrun_progress_fn progress; /* optional */
	void *payload;
} ingestrun_opts;

typedef struct ingestrun ingestrun;

/* A run over the connections and store of `o` (borrowed: they outlive it). */
int ingestrun_new(ingestrun **out, const ingestrun_opts *o, pr_error *err);

/*
 * Every line of the JSON Lines manifest at `path`, in order; relative
 * paths are of the manifest's folder. A bad line is recorded with its
 * number and skipped. Fails (nothing recorded for it) when the manifest
 * cannot be read or lists nothing, or memory runs out between lines;
 * captures already handed on stay recorded. Call ingestrun_finish after.
 */
int ingestrun_manifest(ingestrun *r, const char *path, pr_error *err);

/* The `n` files of a list, each as `base` with its path. Call ingestrun_finish after. */
void ingestrun_list(ingestrun *r, const ingest_request *base, char *const *files, size_t n);

/* Write and record the batch still in flight, if any. */
void ingestrun_finish(ingestrun *r);

const ingestrun_counts *ingestrun_counts_of(const ingestrun *r);

/* Drops a batch still in flight unwritten. NULL is fine. */
void ingestrun_free(ingestrun *r);

#endif
