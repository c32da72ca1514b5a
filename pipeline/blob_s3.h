/*
 * blob_s3.h: the S3-compatible backend of the blob store (blob.h).
 *
 * Objects live at `<prefix>sha256/ab/cdef....zst` in one bucket, the
 * local store's layout under a prefix, so a local store maps onto a
 * bucket one file to one object. Every request goes through the one HTTP
 * client (pipeline/http.h: TLS verified, no redirect, bounded in time and
 * size) and is signed with AWS Signature Version 4 by libcurl
 * (CURLOPT_AWS_SIGV4 with "aws:amz:REGION:s3"). This backend adds what
 * libcurl 7.88 leaves to the caller: `x-amz-content-sha256` on every
 * request (the SHA-256 of the body, which S3 checks), object keys
 * percent-encoded as SigV4 canonicalises them, and query parameters sent
 * already sorted.
 *
 * The guarantees of blob.h hold here too:
 *   - written once: blob_put and blob_copy ask (HEAD) whether the object
 *     is there, and the PUT goes only when it is not, with
 *     `If-None-Match: *` so that a
 *     server that supports conditional writes (AWS S3, MinIO, R2) refuses
 *     to replace an object a racing writer put meanwhile (412 is "already
 *     there"). A server that ignores the header can, in that race only,
 *     have the same key written twice: with the same bytes, since the key
 *     is their SHA-256.
 *   - verified on every read, and reads capped: the generic layer decodes
 *     and checks the hash; a GET never reads more than its cap.
 *   - no age is kept past the first put: blob_put of a blob already there
 *     changes nothing (touch is not offered; a copy onto itself would
 *     make a new version in a versioned bucket). An object's time is its
 *     Last-Modified.
 * A listing walks ListObjectsV2 page by page and ends, whatever the
 * server answers: a truncated page without a new continuation token, a
 * page that lists a key at or before the keys of the pages before it
 * (S3 lists in byte order: tokens that go round serve pages again), or
 * more than 100 truncated pages in a row that list nothing under the
 * prefix (no key at all, or only keys outside it or that are not blobs)
 * is PR_EDATA.
 * A request that meets a 500, 502, 503 or 504, a 429, or no answer at all
 * is tried again (attempts in all, with a short growing pause, or the
 * server's Retry-After up to 5 s).
 *
 * Credentials are handed in by the caller (jobs/blobs.c reads them from
 * the environment or 0600 files); the backend keeps its own copies, wiped
 * when it closes, and never puts them in a message. The secret key never
 * travels; the session token goes in `x-amz-security-token`.
 */
#ifndef PR_BLOB_S3_H
#define PR_BLOB_S3_H

#include <stdbool.h>
#include <stdint.h>

#include "pipeline/blob.h"

/* Objects a ListObjectsV2 page asks for when the caller sets no size. */
#define BLOB_S3_LIST_PAGE 1000
#define BLOB_S3_ATTEMPTS 3
/* The least time a DELETE without an answer is taken to be able to land. */
#define BLOB_S3_DELETE_LINGER_MIN_US (15 * 60 * INT64_C(1000000))
/*
 * What the reader of S3's XML answers takes, at most: the text of one
 * element (a key, a token, a message), and elements open at once.
 */
#define BLOB_S3_XML_TEXT_MAX 4096
#define BLOB_S3_XML_DEPTH_MAX 16

typedef struct blob_s3_opts {
	/* "https://s3.eu-west-1.amazonaws.com", "http://127.0.0.1:9000": scheme, host, port */
	const char *endpoint;
	const char *bucket; /* S3 rules: 3 to 63 of a-z 0-9 . - */
	const char *prefix; /* NULL or "": none; else "a/b/" ('/' added when missing) */
	const char *region; /* "us-east-1" */
	bool virtual_host;  /* https://BUCKET.host/KEY rather than https://host/BUCKET/KEY */
	const char *access_key_id;
	const char *secret_access_key;
	const char *session_token;   /* NULL: none */
	const char *ca_file;         /* NULL: the system's CA store */
	uint32_t connect_timeout_ms; /* 0: http.h's default */
	uint32_t timeout_ms;         /* 0: http.h's default */
	uint32_t list_page;          /* objects per ListObjectsV2 page, 1 to 1000; 0: 1000 */
	uint32_t attempts;           /* tries per request, 1 to 10; 0: BLOB_S3_ATTEMPTS */
} blob_s3_opts;

/*
 * Check the settings without opening anything: an endpoint that is not
 * http(s)://host[:port], a bucket, region or prefix S3 would refuse, a
 * missing credential. PR_EUSAGE naming the setting ("bucket 'My_Bucket':
 * ..."), never a credential's value.
 */
int blob_s3_check(const blob_s3_opts *o, pr_error *err);

/*
 * Open a store on the bucket `o` names (after blob_s3_check). No request
 * is made: a bucket that cannot be reached fails the first operation.
 * The strings of `o` are copied. *out belongs to the caller
 * (blob_store_free); it describes itself as "s3://BUCKET/PREFIX".
 */
int blob_s3_open(blob_store **out, const blob_s3_opts *o, pr_error *err);

/*
 * The object key of blob `key` ("PREFIX" "sha256/ab/cdef....zst") into
 * `out` (released first), for tools and tests.
 */
int blob_s3_object_key(buf *out, const char *prefix, const char *key);

/*
 * Any object of a bucket, not only blobs: the client behind object-store
 * drops (a collector writes profiles and their sidecars under a prefix).
 * The same settings, checks, signing, retries and caps as the store.
 */
typedef struct blob_s3_bucket blob_s3_bucket;

/* One listed object: its key less the prefix, its Size, its LastModified (0: unknown). */
typedef struct blob_s3_object {
	const char *name; /* valid during the call only */
	uint64_t size;
	int64_t mtime_us;
} blob_s3_object;

typedef int (*blob_s3_object_fn)(void *ud, const blob_s3_object *o, pr_error *err);

/*
 * Open a client on the bucket and prefix `o` names (after blob_s3_check);
 * no request is made. *out belongs to the caller (blob_s3_bucket_free).
 */
int blob_s3_bucket_open(blob_s3_bucket **out, const blob_s3_opts *o, pr_error *err);

/* "s3://BUCKET/PREFIX/", for messages; lives as long as `b`. */
const char *blob_s3_bucket_describe(const blob_s3_bucket *b);

/*
 * No request of `b` starts once time_mono() (in microseconds) reaches
 * `mono_us`, tries and listing pages included: it fails with PR_ELIMIT,
 * its message "not sent: " and `why` (copied). Each try's timeouts are
 * cut to the time left (at least a second). 0: no deadline.
 */
void blob_s3_bucket_set_deadline(blob_s3_bucket *b, int64_t mono_us, const char *why);

/*
 * Every object under the prefix (ListObjectsV2, page by page), in the
 * server's order, to `fn`; a negative return of `fn` stops the walk and
 * is returned. Names are the server's bytes as they are: check them
 * before using one. A refused request is PR_EIO ("cannot list
 * 's3://b/p/': HTTP 403 (SignatureDoesNotMatch: ...)"), an unreadable
 * answer PR_EDATA.
 */
int blob_s3_bucket_list(blob_s3_bucket *b, blob_s3_object_fn fn, void *ud, pr_error *err);

/*
 * Read object PREFIX `name` into `out` (released first), at most `max`
 * bytes: more is PR_ELIMIT, a missing object PR_ENOTFOUND, a refusal
 * PR_EIO, a short body PR_EDATA; messages name "s3://BUCKET/PREFIXname".
 */
int blob_s3_bucket_read(blob_s3_bucket *b, const char *name, buf *out, size_t max,
			pr_error *err);

void blob_s3_bucket_free(blob_s3_bucket *b);

/*
 * The readers of the server's XML answers, which the store and the
 * bucket client use on every answer: they hold nothing of the server's
 * past the call, and refuse, as PR_EDATA "WHAT: unreadable XML (WHY)",
 * a document that is not well-formed UTF-8 XML, one with a DOCTYPE
 * (entities), elements nested more than BLOB_S3_XML_DEPTH_MAX deep or
 * an element's text longer than BLOB_S3_XML_TEXT_MAX bytes.
 */

/* An S3 error document's Code and Message; "" when absent, cut to fit. */
typedef struct blob_s3_error {
	char code[64];
	char message[200];
} blob_s3_error;

/*
 * Read the <Error> document `body` (`len` bytes) into *out: the text of
 * its <Code> and <Message> children, the server's bytes as they are
 * (quote them as excerpts: redact.h). Another document leaves both "".
 * 0, or PR_EDATA naming `what` (*out then "", "").
 */
int blob_s3_error_read(blob_s3_error *out, const char *body, size_t len, const char *what,
		       pr_error *err);

/* One ListObjectsV2 page; the caller sets the first five, the read the rest. */
typedef struct blob_s3_page {
	const char *prefix; /* the listing's: "" (or NULL) or "a/b/" */
	const char *after;  /* the greatest key of the pages before; "" (or NULL): none */
	/*
	 * Exactly one: the blobs of the layout under the prefix (a blob needs
	 * a Size and a LastModified), or every object under it (an object
	 * needs a Size; its name is its key less the prefix, valid during
	 * the call only); anything else listed is skipped.
	 */
	blob_list_fn blob_fn;
	blob_s3_object_fn object_fn;
	void *ud;
	bool truncated;                       /* IsTruncated is "true" */
	char token[BLOB_S3_XML_TEXT_MAX + 1]; /* NextContinuationToken; "": none */
	/* The greatest of `after` and the keys listed: the next page's `after`. */
	char last_key[BLOB_S3_XML_TEXT_MAX + 1];
	size_t taken; /* calls of blob_fn or object_fn */
} blob_s3_page;

/*
 * Read ListObjectsV2 answer `body` (`len` bytes) into `page`, handing
 * each listed blob or object to the callback in the document's order.
 * `what` names the request in messages ("cannot list 's3://b/p/'");
 * `after` must not point into *page. 0; a negative return of the
 * callback, which stops the calls and is returned with its message
 * whatever the rest of the document is; PR_EDATA "WHAT: the answer:
 * unreadable XML (WHY)" as above; or PR_EDATA "WHAT: WHY" for a
 * document that is not a ListBucketResult, a key at or before `after`
 * (a page served again), or a blob or object without what it needs.
 */
int blob_s3_list_page(blob_s3_page *page, const char *body, size_t len, const char *what,
		      pr_error *err);

#endif
