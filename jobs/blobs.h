/*
 * blobs.h: opening the configured blob store, and moving a local store
 * into S3 (`profreg blobs migrate --to s3`).
 *
 * The S3 credentials are read here, at open, from the environment
 * variables or owner-only files the configuration names (jobs/secret.h);
 * they go to the backend and nowhere else, never into a message.
 */
#ifndef PR_BLOBS_H
#define PR_BLOBS_H

#include <stdbool.h>
#include <stdint.h>

#include "jobs/config.h"
#include "pipeline/blob.h"
#include "pipeline/blob_s3.h"
#include "pipeline/db.h"

#define BLOBS_MIGRATE_LOCK "profreg-blobs-migrate"

/* The credentials blobs_s3_options read: secret_free'd by blobs_s3_keys_release. */
typedef struct blobs_s3_keys {
	char *access_key_id, *secret_access_key, *session_token;
} blobs_s3_keys;

/*
 * The options that open bucket `s` of a configuration block ("blobs", an
 * s3_prefix source), reached with `ca_file` (NULL: the system's) and the
 * two time limits (0: the HTTP client's defaults), into *o. The
 * credentials are read here: from the variable or file `s` names, else
 * from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and (when set)
 * AWS_SESSION_TOKEN. *o borrows the strings of `s`, of `ca_file` and of
 * *keys, which the caller owns and releases with blobs_s3_keys_release
 * once the store or bucket is open (on error too). A credential that
 * cannot be read is PR_EREFUSED / PR_EDATA / PR_EIO naming the variable
 * or file, never its value.
 */
int blobs_s3_options(blob_s3_opts *o, blobs_s3_keys *keys, const config_s3 *s,
		     const char *ca_file, uint32_t connect_timeout_ms, uint32_t timeout_ms,
		     pr_error *err);

/* Wipe and free the credentials of *keys; NULL members are fine. */
void blobs_s3_keys_release(blobs_s3_keys *keys);

/* The local store, <home>/blobs. */
int blobs_open_local(blob_store **out, const char *home, pr_error *err);

/*
 * The S3 store the configuration describes, whatever `store` says.
 * PR_EUSAGE when it has no S3 settings; a credential that cannot be read
 * is PR_EREFUSED / PR_EDATA / PR_EIO naming the variable or file.
 */
int blobs_open_s3(blob_store **out, const config *cfg, pr_error *err);

/* The store the configuration selects: S3 when blobs.store is "s3", else the local one. */
int blobs_open(blob_store **out, const config *cfg, const char *home, pr_error *err);

typedef struct blobs_migrate_opts {
	bool delete_local; /* remove each local blob once its copy is read back from S3 */
	bool from_live;    /* the local store is still the one captures are read from */
	size_t max_bytes;  /* decoded size allowed of a blob (limits.max_decompressed_bytes) */
} blobs_migrate_opts;

typedef struct blobs_migrate_result {
	int64_t run_id;
	uint64_t blobs;         /* blobs of the local store the walk listed */
	uint64_t copied;        /* put into S3 by this run */
	uint64_t present;       /* already in S3 (an earlier, interrupted run) */
	uint64_t unreadable;    /* local blobs that fail their check: left, not copied */
	uint64_t deleted_local; /* local blobs removed (delete_local) */
	uint64_t bytes_copied;  /* stored (compressed) bytes put */
	double seconds;
	char first_unreadable[BLOB_KEY_HEX + 1]; /* "" when none */
} blobs_migrate_result;

/*
 * Copy every blob of the local store `from` into `to`, each as the walk
 * of the store lists it (no list of them is held), under the advisory
 * lock BLOBS_MIGRATE_LOCK (PR_ELOCKED when another
 * migration holds it), recorded as a run of kind "blobs-migrate" with an
 * audit row. Each blob is checked (decoded, hashed) before it is copied
 * as stored, and read back from `to` (and checked again) before the
 * local copy is removed. A blob already in `to` is not written again, so
 * a run that was stopped (killed, the store unreachable) is resumed by
 * running it again. A local blob that fails its check is counted, left
 * in place and not copied; the run goes on. Anything else (the bucket
 * refusing, the network) stops the run with the error; *out says how far
 * it got.
 */
int blobs_migrate(blobs_migrate_result *out, db *d, blob_store *from, blob_store *to,
		  const blobs_migrate_opts *o, pr_error *err);

/* The result as a JSON object (the caller owns it; NULL when out of memory). */
struct json_t *blobs_migrate_json(const blobs_migrate_result *r);

/* ---- check ---------------------------------------------------------------- */

/* Damaged blobs blobs_check describes one by one; beyond, only counted. */
#define BLOBS_CHECK_LISTED 1000

typedef struct blobs_check_opts {
	const char *const *services; /* only these services' captures (NULL: all, and snapshots) */
	size_t nservices;
	size_t max_bytes;            /* decoded size allowed of a capture's blob (of a
				      * snapshot's alone: SNAPSHOT_ARCHIVE_MAX, as its reads) */
} blobs_check_opts;

/* A blob that a capture or snapshot rests on and that does not read back. */
typedef struct blobs_check_bad {
	char key[BLOB_KEY_HEX + 1];
	bool missing;       /* not in the store (else: there, but it fails its check) */
	char *reason;       /* the store's message */
	int64_t capture_id; /* the first capture that rests on it (0: none) */
	char *service;      /* its service (NULL with none) */
	uint64_t captures;  /* captures that rest on it */
	int64_t snapshot_id; /* a snapshot that rests on it (0: none) */
} blobs_check_bad;

typedef struct blobs_check_result {
	int64_t run_id;
	uint64_t blobs;      /* blobs read and checked */
	uint64_t bytes;      /* their original bytes */
	uint64_t missing, damaged;
	blobs_check_bad *bad; /* the first BLOBS_CHECK_LISTED, in key order */
	size_t nbad;
	double seconds;
} blobs_check_result;

/*
 * Read back and check (decode, hash against the key) every blob that a
 * live capture (one not cut to a summary) or a snapshot rests on, in key
 * order, a page of keys at a time; with o->services, only those
 * services' captures. A blob that fails is looked at again once its key
 * is seen still live, so one that retention removed meanwhile is not
 * reported. Recorded as a run of kind "blobs-check" with an audit row.
 * Damage is the result, not an error: 0 with out->missing and
 * out->damaged; the store or the database failing stops the check with
 * its error (*out says how far it got). The caller releases *out with
 * blobs_check_release.
 */
int blobs_check(blobs_check_result *out, db *d, blob_store *bs, const blobs_check_opts *o,
		pr_error *err);
void blobs_check_release(blobs_check_result *r);

/* The result as a JSON object (the caller owns it; NULL when out of memory). */
struct json_t *blobs_check_json(const blobs_check_result *r);

#endif
