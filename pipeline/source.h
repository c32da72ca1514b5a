/*
 * source.h: where a service's captures come from.
 *
 * The first source is a folder that collectors drop files into. Each
 * capture is a profile file F (any format profreg reads) with a sidecar
 * F.json holding its metadata, the keys of an ingest manifest line less
 * "path" and "service":
 *
 *   {"release": "v42", "commit": "9fceb02...", "host": "web-3",
 *    "time": "2026-11-29T02:00:00Z", "type": "cpu", "tags": {"zone": "eu"}}
 *
 * "release" is required. A sidecar is read by ingest_request_from_json,
 * like a manifest line: the same checks, the same messages, each naming
 * the sidecar. A file without its sidecar is not collected yet
 * (a collector may still be writing it): write the profile first, then
 * the sidecar. Files are taken in name order; ingest is idempotent, so
 * collecting the same folder twice stores nothing new.
 */
#ifndef PR_SOURCE_H
#define PR_SOURCE_H

#include "pipeline/ingest.h"

typedef struct source_report {
	size_t stored;      /* new captures */
	size_t already;     /* captures stored before */
	size_t deleted;     /* bytes of captures retention deleted: not stored again */
	size_t waiting;     /* profile files without a sidecar yet */
	size_t failed;      /* bad files or sidecars */
	char *first_error;  /* the first failure's message, or NULL */
	char **errors;      /* every failure's message, in order; fewer when memory ran out */
	size_t nerrors;
} source_report;

void source_report_release(source_report *r);

/*
 * Collect every capture in `dir` for `service`. Bad files and sidecars
 * are counted and their reasons kept (each naming the file or sidecar),
 * never fatal; an unreadable folder is PR_EIO. When the database, the
 * blob store or memory fails, collection stops there and passes that
 * code up, the message saying at which file ("stopped at file 3 of 40
 * in '/spool/x': cannot ingest '/spool/x/c.pb.gz': database: ...").
 */
int source_collect_dir(source_report *out, db *d, blob_store *bs, const char *service,
		       const char *dir, const profile_limits *lim, pr_error *err);

/*
 * Drops in a store that is not a local folder (an object-store prefix):
 * the same rule as a folder (a profile object F and its sidecar F.json,
 * the sidecar written last), reached through two calls the store's
 * client provides. A folder keeps source_collect_dir, which reads by
 * path (and falls back to a file's mtime for its time).
 */
typedef struct source_drops {
	const char *name;  /* in messages: "s3://bucket/prefix" */
	void *ctx;         /* the client's own state, passed back to the calls */
	/*
	 * Every object name under the prefix (profiles and sidecars, relative
	 * to it), in any order; *names is a new array of new strings the
	 * caller frees. Failure: PR_EIO (or PR_ENOMEM) with the message set.
	 */
	int (*list)(void *ctx, char ***names, size_t *n, pr_error *err);
	/*
	 * Read object `name` into `out`, at most `max` bytes (more is
	 * PR_ELIMIT); a missing object is PR_ENOTFOUND, others PR_EIO.
	 */
	int (*read)(void *ctx, buf *out, const char *name, size_t max, pr_error *err);
} source_drops;

/*
 * Collect every capture of `src` for `service`, as source_collect_dir
 * does: the same report, the same sidecar checks and messages (each
 * naming "<src->name>/<object>"), bad objects counted and skipped, and a
 * failing database, blob store or memory stopping the collection with
 * "stopped at object 3 of 40 in '<name>': ...". A list that fails is the
 * source's failure (its code and message passed up).
 */
int source_collect_drops(source_report *out, db *d, blob_store *bs, const char *service,
			 const source_drops *src, const profile_limits *lim, pr_error *err);

/*
 * Why an object name listed under a drop prefix is refused, or NULL when
 * it is usable: longer than INGEST_PATH_MAX, starting with '/', holding a
 * control character or a backslash, or an empty, "." or ".." segment.
 * Nothing a collector writes looks like that, and such a name must not
 * reach a message, a URL or a terminal as it is. The reason is a static
 * string ("a '.' or '..' path segment").
 */
const char *source_drop_name_refused(const char *name);

/*
 * Ingest `len` bytes held in memory (a profile fetched over the network)
 * exactly as ingest_file ingests a file: the same limits, checks,
 * idempotence and messages, which name req->display. req->path is
 * ignored; req->time_us should be set (there is no file time to fall
 * back on). The bytes go through an anonymous in-memory file, never the
 * disk.
 */
int source_ingest_bytes(ingest_result *out, db *d, blob_store *bs, const ingest_request *req,
			const void *data, size_t len, const profile_limits *lim, pr_error *err);

/*
 * How a profile source is reached over HTTP (pipeline/http.h does the
 * rest: TLS verified, no redirects, timeouts, size cap). The auth header
 * holds a secret: it is passed as http_req's secret header.
 */
typedef struct source_http {
	const char *ca_file;          /* NULL: the system's CA store */
	const char *auth_header;      /* "Authorization", or NULL for none */
	const char *auth_value;       /* "Bearer <token>" or "Basic <base64>" */
	uint32_t connect_timeout_ms;  /* 0: http.h's default */
	uint32_t timeout_ms;          /* the whole request; 0: http.h's default */
	size_t max_bytes;             /* the response body cap (the input limit) */
} source_http;

/*
 * Bytes read of an answer from a profile source that is not 2xx: it is
 * read for a reason to quote (source_body_hint, a Connect error), never
 * as data, so however long its server makes it, no more is read.
 */
#define SOURCE_ERROR_BODY_MAX ((size_t)64 << 10)

/*
 * What a fetch brought back. On success `body` holds the profile bytes,
 * or nothing with `empty` set (the source has no data for the window).
 * On failure `retry` says that the same request may succeed later (a
 * CPU profile already running, 429, 503), `retry_after_ms` when the
 * server said when (-1: it did not).
 */
typedef struct source_fetched {
	buf body;
	bool empty;
	bool retry;
	int64_t retry_after_ms;
} source_fetched;

void source_fetched_init(source_fetched *f);
/* Wipe and free the body (it may hold payment data) and re-initialise. */
void source_fetched_release(source_fetched *f);

/*
 * A short, safe excerpt of an error body for a message: its first line
 * through redact_excerpt (harmless words kept, anything that may hold
 * payment data or a secret as "<N bytes>"), at most `n` - 1 bytes.
 * Binary bodies (any NUL in the first bytes) give "".
 */
void source_body_hint(char *out, size_t n, const buf *body);

#endif
