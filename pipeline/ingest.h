/*
 * ingest.h: one capture from a file into the blob store and the index.
 *
 * Reads the file under the input limit, parses and summarises it, stores
 * the original bytes as a blob, then writes the capture's row and its
 * per-function rows in one transaction. The blob goes first, so a crash
 * at any point leaves at worst an unreferenced blob, never a row that
 * points at a missing one. The same bytes for the same service are stored
 * once: a second ingest reports the capture that already holds them.
 */
#ifndef PR_INGEST_H
#define PR_INGEST_H

#include <stdbool.h>
#include <stdint.h>

#include "pipeline/blob.h"
#include "pipeline/db.h"
#include "pipeline/profile.h"

/*
 * A capture dated further ahead of the clock than this is refused: the
 * analysis windows would never include it and retention, which ages
 * captures by their time, would keep it for ever. A day covers any clock
 * skew between the profiled host and this one.
 */
#define INGEST_MAX_AHEAD_US (86400LL * 1000000)
/*
 * A capture dated before this, 2000-01-01T00:00:00Z, is refused: no
 * profiler ran then, so the time is a mistake (a pprof time_nanos
 * written in seconds reads as 1970), and retention, which ages captures
 * by their time, would delete the capture on its next run.
 */
#define INGEST_MIN_CAPTURE_US (946684800LL * 1000000)
/*
 * The longest duration a capture may say it covers: 31 days. A profile
 * merged over a slot covers hours; one that says 292 years (2^63 - 1
 * ns) has a cost per second of nothing and would cover every window of
 * its host in `span`.
 */
#define INGEST_MAX_DURATION_NS (31LL * 86400 * 1000000000)

typedef struct ingest_request {
	const char *path;        /* file to read ("-" for standard input) */
	const char *display;     /* name in messages (NULL: path) */
	const char *service;
	const char *release;
	const char *commit;      /* NULL when unknown */
	const char *host;        /* NULL when unknown */
	int64_t time_us;         /* 0: the profile's own time, else the file's mtime */
	const char *type;        /* NULL: guessed from the profile's value types */
	const char *tags_json;   /* JSON object text, NULL for none */
	profile_format format;   /* PROFILE_FMT_AUTO to detect */
	bool file_only;          /* read path as fileio_read_file: no links (drop folders) */
	/*
	 * Store bytes retention deleted for the service all the same (see
	 * ingest_result.retention_deleted): `profreg ingest --again`.
	 */
	bool again;
} ingest_request;

typedef struct ingest_result {
	int64_t capture_id;
	bool already;            /* the bytes were stored before */
	/*
	 * Their blob was missing or failed its check (a local store reads it
	 * back; S3 only says whether it is there) and is stored again from
	 * these bytes.
	 */
	bool repaired;
	/*
	 * Not stored: retention deleted a capture of these bytes for the
	 * service (at deleted_at_us; it was dated deleted_captured_us), and
	 * what retention deleted stays deleted. Success, capture_id 0, no
	 * audit row: a drop folder that keeps the file offers it every night.
	 */
	bool retention_deleted;
	int64_t deleted_at_us, deleted_captured_us;
	char blob_key[BLOB_KEY_HEX + 1];
	char type[16];
	char format[16];
	int64_t total;
	int64_t sample_count;
	size_t nfunctions;
	uint64_t bytes;
	uint32_t utf8_replaced;  /* names with invalid UTF-8 replaced */
	uint64_t other_events;   /* perf: events of other types left out */
	char event[64];          /* perf: the event type kept */
	/*
	 * On failure: the database, the blob store or memory failed, not this
	 * input. Every later ingest would most likely fail the same way, so a
	 * batch stops here instead of trying the rest.
	 */
	bool infra;
} ingest_result;

/* Profile types profreg knows; NULL-terminated. */
extern const char *const ingest_types[];

#define INGEST_TEXT_MAX 256
#define INGEST_TAG_KEY_MAX 64
#define INGEST_PATH_MAX 1024
/* The longest JSON capture description (manifest line or sidecar). */
#define INGEST_JSON_MAX (64 * 1024)

/*
 * Whether commits a and b name one build: either is a prefix of the
 * other, ignoring case (a short and a full SHA of one commit).
 */
bool ingest_same_commit(const char *a, const char *b);

/*
 * Check a request's metadata: a service named; release (required) and
 * host 1 to 256 bytes of printable text, quotes and backslashes refused
 * too (they end up in reports and JSON); commit 4 to 64 hex digits; a
 * known type; tags (tags_json) an object of strings, each checked by
 * ingest_check_tag. Every way into the store (flags, manifest lines,
 * sidecars) passes here, so they all refuse the same things in the same
 * words. Returns 0 or PR_EUSAGE with the reason.
 */
int ingest_validate(const ingest_request *r, pr_error *err);

/* The text rule above for one value; `what` names it in the message. */
int ingest_check_text(const char *what, const char *s, pr_error *err);

/*
 * One tag: a key of 1 to 64 letters, digits, '_', '.' or '-', a value
 * under the text rule; the value of "load" or "rps" (a capture's load
 * figure) also a number ingest_parse_load reads. Returns 0 or PR_EUSAGE
 * naming the key.
 */
int ingest_check_tag(const char *key, const char *value, pr_error *err);

/*
 * A load figure: a plain decimal number, finite and not negative ("65",
 * "0.5", "6.5e1"); no sign, spaces, hex, "inf" or "nan". Returns 0 with
 * *out set, or -1 (*out untouched).
 */
int ingest_parse_load(double *out, const char *s);

/* True when `type` is one of ingest_types. */
bool ingest_type_valid(const char *type);

/*
 * Where a JSON capture description comes from. A manifest line names its
 * file and service itself; a drop-folder sidecar describes the profile
 * beside it, for the folder's service.
 */
typedef struct ingest_json_source {
	const char *name;    /* starts every message: "line 3 of 'm.jsonl'", "sidecar 'f.json'" */
	const char *dir;     /* folder a relative "path" resolves against; NULL: as given */
	const char *path;    /* the profile file (a sidecar's); NULL: "path" from the JSON */
	const char *service; /* the service (a sidecar's); NULL: "service" from the JSON */
} ingest_json_source;

/* A request parsed from JSON, with the memory its strings live in. */
typedef struct ingest_desc {
	ingest_request req;
	struct json_t *json;   /* the parsed object; req's strings point into it */
	char *tags_json;       /* req.tags_json: the tags, compact, keys sorted */
	char *path;            /* req.path: "path" resolved against src->dir */
} ingest_desc;

/* Free what *d holds and zero it; a zeroed ingest_desc is fine. */
void ingest_desc_release(ingest_desc *d);

/*
 * Turn `len` bytes of JSON describing one capture (a manifest line or a
 * sidecar) into a request. Keys: "path" and "service" (required, and
 * refused when `src` gives them), "release" (required), "commit",
 * "host", "time" (ISO 8601), "type", "format" and "tags" (an object of
 * strings); any other key, a value of the wrong type, more than
 * INGEST_JSON_MAX bytes, a "path" longer than INGEST_PATH_MAX or
 * anything ingest_validate refuses is PR_EDATA (PR_ENOMEM when memory
 * runs out), the message starting with src->name. On success *out holds
 * the request (release it with ingest_desc_release); on failure *out is
 * left zeroed.
 */
int ingest_request_from_json(ingest_desc *out, const char *text, size_t len,
			     const ingest_json_source *src, pr_error *err);

/*
 * Ingest one file for an enabled service. An unknown service is
 * PR_ENOTFOUND, a disabled one PR_EREFUSED; bad input PR_EDATA or
 * PR_ELIMIT. Every message names the file (req->display, else req->path)
 * first: "cannot ingest 'a.pb.gz': cannot store blob '<key>': ...".
 * Bytes already stored for the service, even by an ingest racing this
 * one, are success with out->already and the capture that holds them;
 * bytes of a capture retention deleted are success with
 * out->retention_deleted, not stored (unless req->again).
 * On failure out->infra tells whether the store failed rather than the
 * input, and nothing is written to the index (a blob may remain,
 * unreferenced, for retention to collect).
 */
int ingest_file(ingest_result *out, db *d, blob_store *bs,
		const ingest_request *req, const profile_limits *lim,
		pr_error *err);

/* The most threads ingest_files reads and parses on. */
#define INGEST_JOBS_MAX 64
/*
 * Most threads that hash and compress a batch's blobs for a local store
 * (blob_put_many); no more than the processors online.
 */
#define INGEST_PUT_THREADS 8

/*
 * Ingest reqs[0..n) as ingest_file does each, with the same results and
 * messages, but faster: files are read and parsed on up to `jobs` threads,
 * and the captures are written in one transaction, which commits only
 * once every blob is durable (the blobs are written while the rows are
 * sent, a local store's compressed on up to INGEST_PUT_THREADS threads and
 * made durable together), in a few round trips whatever the batch's
 * size. A file that fails is reported alone: when the transaction fails,
 * the captures are stored one by one (on a new connection when the
 * server dropped it) so the failure falls on the one that caused it.
 * The same bytes twice for a service are one capture, the second
 * "already" stored.
 *
 * Returns how many requests were tried: outs[i] and errs[i] are filled
 * for i below it (errs[i].code 0 on success). Requests after the first
 * failure of the store or of memory (outs[i].infra, or PR_ENOMEM) are not
 * tried, as a batch of ingest_file calls would stop there.
 */
size_t ingest_files(ingest_result *outs, pr_error *errs, db *d, blob_store *bs,
		    const ingest_request *reqs, size_t n, const profile_limits *lim,
		    unsigned jobs);

/*
 * ingest_files in two halves, so that one batch can be read and parsed
 * while the one before it is written (on another connection, by another
 * thread): ingest_batch_prepare checks, reads, looks up and parses
 * reqs[0..n) on d (service and already-stored look-ups only), and
 * ingest_batch_store writes them on its d, fills errs and frees the
 * batch, returning what ingest_files returns. reqs, outs and errs must
 * outlive the batch. A capture stored by the batch before, not yet
 * committed when this one looked, is found by the store and comes back
 * as already stored, as when two ingests race. NULL: out of memory.
 * ingest_batch_free drops a prepared batch unwritten.
 */
typedef struct ingest_batch ingest_batch;
ingest_batch *ingest_batch_prepare(ingest_result *outs, pr_error *errs, db *d,
				   const ingest_request *reqs, size_t n,
				   const profile_limits *lim, unsigned jobs);
size_t ingest_batch_store(ingest_batch *b, pr_error *errs, db *d, blob_store *bs);
void ingest_batch_free(ingest_batch *b);

/*
 * PR_ELOCKED, naming the key and the time, when retention sent a delete
 * of one of the keys (a text[] literal) that got no answer and may still
 * land (db_blob_delete_doubt): whatever a put finds under the key, or
 * writes, could go behind the row about to name it. Call it under the
 * keys' shared lock (db_blob_lock), before the put. 0 for a store whose
 * deletes cannot linger.
 */
int ingest_check_delete_doubt(db *d, blob_store *bs, const char *keys_literal, pr_error *err);

#endif
