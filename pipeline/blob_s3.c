/*
 * blob_s3.c: the S3-compatible blob store backend (see blob_s3.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "pipeline/blob_s3.h"
#include "pipeline/http.h"
#include "common/redact.h"
#include "common/timeutil.h"
#include "common/wipe.h"

#include <ctype.h>
#include <errno.h>
#include <expat.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
/* An error document is small; a longer one is not read. */
#define ERROR_BODY_MAX ((size_t)64 << 10)
/* A page of 1,000 keys is about 400 KB of XML. */
#define LIST_BODY_MAX ((size_t)16 << 20)
#define XML_TEXT_MAX BLOB_S3_XML_TEXT_MAX
/*
 * S3's documents nest 3 deep; expat keeps about 150 bytes for each open
 * element, so a 16 MiB page of "<a><a><a>..." would cost 800 MB without
 * a bound.
 */
#define XML_DEPTH_MAX BLOB_S3_XML_DEPTH_MAX
/* Truncated pages in a row that list no object, before the walk gives up. */
#define LIST_EMPTY_PAGES_MAX 100
#define RETRY_FIRST_MS 100
#define RETRY_WAIT_MAX_MS 5000
#define LAYOUT "sha256/"
#define SUFFIX ".zst"
#define PREFIX_MAX 512

typedef struct blob_s3_bucket s3;

struct blob_s3_bucket {
	char *base;     /* URL before the object key, ending in '/' */
	char *list_url; /* URL of the bucket, before the query */
	char *bucket;
	char *prefix;   /* "" or "a/b/" */
	char *provider; /* "aws:amz:REGION:s3" */
	char *key_id;
	char *secret; /* wiped at close */
	char *token;  /* wiped at close; NULL: none */
	char *ca_file;
	char *describe;
	uint32_t connect_ms, timeout_ms, page, attempts;
	int64_t deadline_us;    /* time_mono() microseconds: no request after it; 0: none */
	char deadline_why[200]; /* why, in the message of a request not sent */
};

/* ---------------------------------------------------------------- checks */

static bool bucket_ok(const char *b)
{
	size_t n = strlen(b);

	if (n < 3 || n > 63 || !isalnum((unsigned char)b[0]) || !isalnum((unsigned char)b[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(islower((unsigned char)b[i]) || isdigit((unsigned char)b[i]) || b[i] == '.' ||
		      b[i] == '-') ||
		    (b[i] == '.' && b[i + 1] == '.'))
			return false;
	return true;
}

static bool region_ok(const char *r)
{
	size_t n = strlen(r);

	if (n == 0 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(islower((unsigned char)r[i]) || isdigit((unsigned char)r[i]) || r[i] == '-'))
			return false;
	return true;
}

/* Segments of [A-Za-z0-9._-], none "." or "..", separated by single '/'. */
static bool prefix_ok(const char *p)
{
	size_t n = strlen(p), seg = 0;

	if (n > PREFIX_MAX || p[0] == '/')
		return false;
	for (size_t i = 0; i <= n; i++) {
		if (i == n || p[i] == '/') {
			if (i < n && seg == 0)
				return false; /* "//" */
			if ((seg == 1 && p[i - 1] == '.') ||
			    (seg == 2 && p[i - 1] == '.' && p[i - 2] == '.'))
				return false;
			seg = 0;
			continue;
		}
		if (!(isalnum((unsigned char)p[i]) || p[i] == '.' || p[i] == '_' || p[i] == '-'))
			return false;
		seg++;
	}
	return true;
}

/* http(s)://host[:port] with at most a trailing '/': [host, end) is the authority. */
static bool endpoint_split(const char *e, const char **scheme_end, const char **host,
			   const char **end)
{
	const char *h;

	if (strncmp(e, "https://", 8) == 0)
		h = e + 8;
	else if (strncmp(e, "http://", 7) == 0)
		h = e + 7;
	else
		return false;
	*scheme_end = h;
	*host = h;
	*end = h + strcspn(h, "/?#@");
	if (*end == h || (**end && strcmp(*end, "/") != 0))
		return false;
	for (const char *c = h; c < *end; c++)
		if (!(isalnum((unsigned char)*c) || strchr(".-:[]", *c)))
			return false;
	return true;
}

int blob_s3_check(const blob_s3_opts *o, pr_error *err)
{
	const char *se, *h, *e;

	if (!o->endpoint || !endpoint_split(o->endpoint, &se, &h, &e)) {
		char shown[256];
		/* Scheme, host and port only: a user and password must not show. */
		http_redact_url(shown, sizeof(shown), o->endpoint ? o->endpoint : "");
		return pr_error_set(err, PR_EUSAGE,
				    "S3 endpoint '%s' is not http(s)://HOST[:PORT] (no path, "
				    "query or user)",
				    shown);
	}
	if (!o->bucket || !bucket_ok(o->bucket))
		return pr_error_set(err, PR_EUSAGE,
				    "S3 bucket '%.80s' is not a valid bucket name (3 to 63 "
				    "lower-case letters, digits, '.' and '-')",
				    o->bucket ? o->bucket : "");
	if (!o->region || !region_ok(o->region))
		return pr_error_set(err, PR_EUSAGE,
				    "S3 region '%.80s' is not a region name (lower-case letters, "
				    "digits and '-')",
				    o->region ? o->region : "");
	if (o->prefix && !prefix_ok(o->prefix))
		return pr_error_set(err, PR_EUSAGE,
				    "S3 prefix '%.200s' is not usable: path segments of letters, "
				    "digits, '.', '_' and '-' (no '.' or '..'), at most %d bytes, "
				    "not starting with '/'",
				    o->prefix, PREFIX_MAX);
	if (!o->access_key_id || !*o->access_key_id || !o->secret_access_key ||
	    !*o->secret_access_key)
		return pr_error_set(err, PR_EUSAGE, "S3 store: no access key id or secret key");
	if (o->list_page > 1000 || o->attempts > 10)
		return pr_error_set(err, PR_EUSAGE,
				    "S3 store: a list page is 1 to 1000 objects, "
				    "attempts 1 to 10");
	return 0;
}

/* --------------------------------------------------------------- encoding */

/*
 * Percent-encode `s` as SigV4 canonicalises it: every byte but
 * A-Z a-z 0-9 - . _ ~ as %XX (upper-case hex), '/' kept when `slash`.
 */
static int uri_encode(buf *out, const char *s, bool slash)
{
	static const char hex[] = "0123456789ABCDEF";
	int rc = 0;

	for (; *s && rc == 0; s++) {
		unsigned char c = (unsigned char)*s;
		if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' ||
		    (slash && c == '/'))
			rc = buf_putc(out, (char)c);
		else
			rc = buf_printf(out, "%%%c%c", hex[c >> 4], hex[c & 15]);
	}
	return rc;
}

int blob_s3_object_key(buf *out, const char *prefix, const char *key)
{
	buf_release(out);
	return buf_printf(out, "%s" LAYOUT "%.2s/%s" SUFFIX, prefix ? prefix : "", key, key + 2);
}

/* The object URL of `key`. */
static int object_url(s3 *s, buf *out, const char *key)
{
	buf k = BUF_INIT;
	int rc;

	if ((rc = blob_s3_object_key(&k, s->prefix, key)) == 0 &&
	    (rc = buf_puts(out, s->base)) == 0)
		rc = uri_encode(out, k.ptr, true);
	buf_release(&k);
	return rc;
}

/* The URL of object PREFIX `name` (any key, not a blob's). */
static int raw_object_url(s3 *s, buf *out, const char *name)
{
	int rc = buf_puts(out, s->base);

	if (rc == 0)
		rc = uri_encode(out, s->prefix, true);
	if (rc == 0)
		rc = uri_encode(out, name, true);
	return rc;
}

/* ------------------------------------------------------------------- XML */

/*
 * A tiny reader over expat for the three documents S3 answers with
 * (ListBucketResult, Error, CopyObjectResult): `leaf` is called at the
 * end of every element with its parent's name and its text. A DOCTYPE
 * (entities) is refused; text longer than XML_TEXT_MAX, or elements
 * nested deeper than XML_DEPTH_MAX, is an error.
 */
typedef struct xml_rd {
	XML_Parser p;
	int depth;
	char names[4][40]; /* element names at depths 1 to 4 */
	buf text;
	const char *bad; /* why the document was refused */
	void (*leaf)(void *ud, int depth, const char *parent, const char *name, const char *text);
	void (*close)(void *ud, int depth, const char *name);
	void *ud;
} xml_rd;

static void xml_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
	xml_rd *x = ud;

	(void)attrs;
	if (++x->depth > XML_DEPTH_MAX) {
		if (!x->bad)
			x->bad = "elements nested more than 16 deep";
		XML_StopParser(x->p, XML_FALSE);
		return;
	}
	if (x->depth <= 4)
		snprintf(x->names[x->depth - 1], sizeof(x->names[0]), "%s", name);
	buf_reset(&x->text);
}

static void xml_end(void *ud, const XML_Char *name)
{
	xml_rd *x = ud;

	if (x->leaf && x->depth <= 4)
		x->leaf(x->ud, x->depth, x->depth > 1 ? x->names[x->depth - 2] : "", name,
			x->text.ptr);
	if (x->close)
		x->close(x->ud, x->depth, name);
	buf_reset(&x->text);
	x->depth--;
}

static void xml_chars(void *ud, const XML_Char *s, int len)
{
	xml_rd *x = ud;

	if (x->bad)
		return;
	if (buf_put(&x->text, s, (size_t)len) < 0) {
		x->bad = "an element's text is too long";
		XML_StopParser(x->p, XML_FALSE);
	}
}

static void xml_doctype(void *ud, const XML_Char *name, const XML_Char *sysid,
			const XML_Char *pubid, int internal)
{
	xml_rd *x = ud;

	(void)name, (void)sysid, (void)pubid, (void)internal;
	x->bad = "it has a DOCTYPE";
	XML_StopParser(x->p, XML_FALSE);
}

/* Parse `body`; 0, or PR_EDATA with `what` and the reason in the message. */
static int xml_read(xml_rd *x, const char *body, size_t len, const char *what, pr_error *err)
{
	int rc = 0;

	x->p = XML_ParserCreate("UTF-8");
	buf_init(&x->text, XML_TEXT_MAX);
	if (!x->p) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	XML_SetUserData(x->p, x);
	XML_SetElementHandler(x->p, xml_start, xml_end);
	XML_SetCharacterDataHandler(x->p, xml_chars);
	XML_SetStartDoctypeDeclHandler(x->p, xml_doctype);
	/* expat takes an int: a longer body is refused unread, not half read. */
	if (len > (size_t)INT32_MAX)
		rc = pr_error_set(err, PR_EDATA, "%s: unreadable XML (over 2 GiB)", what);
	else if (XML_Parse(x->p, body, (int)len, XML_TRUE) != XML_STATUS_OK || x->bad)
		rc = pr_error_set(err, PR_EDATA, "%s: unreadable XML (%s)", what,
				  x->bad ? x->bad : XML_ErrorString(XML_GetErrorCode(x->p)));
out:
	if (x->p)
		XML_ParserFree(x->p);
	x->p = NULL;
	buf_release(&x->text);
	return rc;
}

static void error_leaf(void *ud, int depth, const char *parent, const char *name, const char *text)
{
	blob_s3_error *e = ud;

	if (depth != 2 || strcmp(parent, "Error") != 0)
		return;
	if (strcmp(name, "Code") == 0)
		snprintf(e->code, sizeof(e->code), "%s", text);
	else if (strcmp(name, "Message") == 0)
		snprintf(e->message, sizeof(e->message), "%s", text);
}

int blob_s3_error_read(blob_s3_error *out, const char *body, size_t len, const char *what,
		       pr_error *err)
{
	xml_rd x = {.leaf = error_leaf, .ud = out};
	int rc;

	out->code[0] = out->message[0] = '\0';
	/* A refused document leaves nothing half read. */
	if ((rc = xml_read(&x, body, len, what, err)) < 0)
		out->code[0] = out->message[0] = '\0';
	return rc;
}

/*
 * Why an answer of status `r->status` is not what was wanted: "HTTP 403
 * (AccessDenied: Access Denied)", from the body when it is an S3 error
 * document.
 */
static void answer_text(char *out, size_t n, const http_response *r)
{
	blob_s3_error e;
	pr_error ignored = PR_ERROR_INIT;

	if (r->body.len &&
	    blob_s3_error_read(&e, r->body.ptr, r->body.len, "error", &ignored) == 0 && e.code[0]) {
		/*
		 * The server's words, as an excerpt: an endpoint that quotes the
		 * request back ("Credential=AKIA.../...") put the access key id
		 * and the signature in every failure line and runs.detail.
		 */
		char code[sizeof(e.code)], message[sizeof(e.message)];
		redact_excerpt(code, sizeof(code), e.code, strlen(e.code));
		redact_excerpt(message, sizeof(message), e.message, strlen(e.message));
		snprintf(out, n, "HTTP %ld (%s%s%s)", r->status, code, message[0] ? ": " : "",
			 message);
	} else if (r->status == 403) {
		/* A HEAD's refusal has no body: say what it usually is. */
		snprintf(out, n,
			 "HTTP 403 (no reason given: wrong credentials, or this machine's "
			 "clock more than 15 minutes off the server's)");
	} else {
		snprintf(out, n, "HTTP %ld", r->status);
	}
}

/* Whether a 404 is the bucket's, not the object's: the body says NoSuchBucket. */
static bool no_such_bucket(const http_response *r)
{
	blob_s3_error e;
	pr_error ignored = PR_ERROR_INIT;

	return r->status == 404 && r->body.len &&
	       blob_s3_error_read(&e, r->body.ptr, r->body.len, "error", &ignored) == 0 &&
	       strcmp(e.code, "NoSuchBucket") == 0;
}

/* -------------------------------------------------------------- requests */

typedef struct s3_req {
	http_method method;
	const char *url;
	const char *const *headers; /* extra headers, NULL-terminated; may be NULL */
	const void *body;
	size_t len;
	size_t max_body;
} s3_req;

static bool worth_retrying(int rc, long status)
{
	if (rc == PR_EIO)
		return true;
	return rc == 0 &&
	       (status == 429 || status == 500 || status == 502 || status == 503 || status == 504);
}

static void pause_ms(int64_t ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/*
 * Send one signed request, again on a transient failure. `r` belongs to
 * the caller (released by it whatever this returns). Returns what
 * http_request returns for the last attempt.
 */
static int s3_send(s3 *s, http_response *r, const s3_req *q, char *why, size_t why_n)
{
	char hash[BLOB_KEY_HEX + 1], line[100];
	const char *headers[12];
	size_t n = 0;
	http_req req;
	int64_t wait = RETRY_FIRST_MS;
	int rc;

	if (q->len) {
		if (blob_key_of(hash, q->body, q->len) < 0) {
			snprintf(why, why_n, "cannot hash the request body: sha-256 failed");
			return PR_ERR;
		}
	} else {
		memcpy(hash, EMPTY_SHA256, sizeof(hash));
	}
	snprintf(line, sizeof(line), "x-amz-content-sha256: %s", hash);
	headers[n++] = line;
	for (const char *const *h = q->headers; h && *h && n < 11; h++)
		headers[n++] = *h;
	headers[n] = NULL;
	memset(&req, 0, sizeof(req));
	req.method = q->method;
	req.url = q->url;
	req.headers = headers;
	req.body = q->len ? q->body : NULL;
	req.body_len = q->len;
	req.max_body = q->max_body;
	/* An error document is read for its Code and Message, whatever the data's cap. */
	req.max_error_body = ERROR_BODY_MAX;
	req.connect_timeout_ms = s->connect_ms;
	req.timeout_ms = s->timeout_ms;
	req.ca_file = s->ca_file;
	req.sigv4 = s->provider;
	req.sigv4_key_id = s->key_id;
	req.sigv4_secret = s->secret;
	if (s->token) {
		req.secret_header = "x-amz-security-token";
		req.secret_value = s->token;
	}
	for (uint32_t attempt = 1;; attempt++) {
		pr_error e2 = PR_ERROR_INIT;
		if (s->deadline_us && !http_cut_to_deadline(s->deadline_us, &req.timeout_ms,
							    &req.connect_timeout_ms)) {
			snprintf(why, why_n, "not sent: %s", s->deadline_why);
			return PR_ELIMIT;
		}
		rc = http_request(r, &req, &e2);
		if (!worth_retrying(rc, r->status) || attempt >= s->attempts) {
			snprintf(why, why_n, "%s", rc < 0 ? e2.msg : "");
			return rc;
		}
		if (rc == 0 && r->retry_after_ms >= 0)
			wait = r->retry_after_ms;
		if (wait > RETRY_WAIT_MAX_MS)
			wait = RETRY_WAIT_MAX_MS;
		http_response_release(r);
		pause_ms(wait);
		wait *= 4;
	}
}

/*
 * The request failed (rc < 0, the client's reason in `sent`) or answered
 * `r->status`: the message, the code.
 */
static int s3_fail_what(s3 *s, int rc, const http_response *r, const char *sent,
			const char *doing, const char *what, const char *key, pr_error *err)
{
	char why[320];

	if (rc < 0)
		return pr_error_set(err, rc, "cannot %s %s '%s' in '%s': %s", doing, what, key,
				    s->describe, sent);
	answer_text(why, sizeof(why), r);
	return pr_error_set(err, r->status == 400 ? PR_EUSAGE : PR_EIO,
			    "cannot %s %s '%s' in '%s': %s", doing, what, key, s->describe, why);
}

static int s3_fail(s3 *s, int rc, const http_response *r, const char *sent, const char *doing,
		   const char *key, pr_error *err)
{
	return s3_fail_what(s, rc, r, sent, doing, "blob", key, err);
}

/* HEAD of an object: *found, and its size and time when found. */
static int s3_head(s3 *s, const char *key, const char *doing, bool *found, blob_entry *e,
		   pr_error *err)
{
	http_response r;
	buf url = BUF_INIT;
	s3_req q = {.method = HTTP_HEAD, .max_body = ERROR_BODY_MAX};
	char why[PR_ERROR_MSG_MAX];
	int rc;

	http_response_init(&r);
	*found = false;
	if (object_url(s, &url, key) < 0) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	q.url = url.ptr;
	rc = s3_send(s, &r, &q, why, sizeof(why));
	if (rc == 0 && r.status == 200) {
		*found = true;
		if (e) {
			memcpy(e->key, key, BLOB_KEY_HEX + 1);
			e->size = r.content_length >= 0 ? (uint64_t)r.content_length : 0;
			e->mtime_us = r.last_modified_s >= 0 ? r.last_modified_s * 1000000 : 0;
		}
	} else if (!(rc == 0 && r.status == 404)) {
		rc = s3_fail(s, rc, &r, why, doing, key, err);
	}
out:
	http_response_release(&r);
	buf_release(&url);
	return rc;
}

/* ------------------------------------------------------------- operations */

static int s3_put(void *impl, const char *key, const void *data, size_t len, bool *created,
		  pr_error *err)
{
	static const char *const headers[] = {"Content-Type: application/octet-stream",
					      "If-None-Match: *", NULL};
	s3 *s = impl;
	http_response r;
	buf url = BUF_INIT;
	s3_req q = {.method = HTTP_PUT,
		    .headers = headers,
		    .body = data,
		    .len = len,
		    .max_body = ERROR_BODY_MAX};
	char why[PR_ERROR_MSG_MAX];
	int rc;

	/*
	 * The generic layer has asked (HEAD) whether the object is there;
	 * If-None-Match makes a server that supports conditional writes
	 * refuse to replace what a racing writer put since.
	 */
	http_response_init(&r);
	*created = false;
	if (object_url(s, &url, key) < 0) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	q.url = url.ptr;
	rc = s3_send(s, &r, &q, why, sizeof(why));
	if (rc == 0 && r.status == 200)
		*created = true;
	else if (rc == 0 && r.status == 412)
		*created = false; /* a racing writer put it first */
	else
		rc = s3_fail(s, rc, &r, why, "store", key, err);
out:
	http_response_release(&r);
	buf_release(&url);
	return rc;
}

/*
 * GET `url` into `out`, at most `max` bytes; `what` and `key` name it in
 * messages ("blob 'ab12...'", "object 'x.pb.gz'").
 */
static int s3_fetch(s3 *s, const char *url, const char *what, const char *key, buf *out,
		    size_t max, pr_error *err)
{
	http_response r;
	/* Room for an error document even when the object's cap is tiny. */
	s3_req q = {.method = HTTP_GET, .url = url,
		    .max_body = max > ERROR_BODY_MAX ? max : ERROR_BODY_MAX};
	char why[PR_ERROR_MSG_MAX];
	int rc;

	http_response_init(&r);
	buf_release(out);
	out->max = max;
	if (max == SIZE_MAX)
		q.max_body = SIZE_MAX / 4;
	rc = s3_send(s, &r, &q, why, sizeof(why));
	if ((rc == PR_ELIMIT && r.status == 200) ||
	    (rc == 0 && r.status == 200 && r.body.len > max)) {
		rc = pr_error_set(err, PR_ELIMIT,
				  "%s '%s' is over the size limit: more than %zu bytes stored",
				  what, key, max);
		goto out;
	}
	/* A missing bucket is no missing blob: every read would say so, and blame the blobs. */
	if (rc == 0 && r.status == 404 && !no_such_bucket(&r)) {
		rc = pr_error_set(err, PR_ENOTFOUND, "%s '%s' not found", what, key);
		goto out;
	}
	if (rc < 0 || r.status != 200) {
		rc = s3_fail_what(s, rc, &r, why, "read", what, key, err);
		goto out;
	}
	if (r.content_length >= 0 && (uint64_t)r.content_length != r.body.len) {
		rc = pr_error_set(err, PR_EDATA,
				  "%s '%s' is corrupt: %zu bytes read, %" PRId64 " announced",
				  what, key, r.body.len, r.content_length);
		goto out;
	}
	/* The body moves to the caller; the response keeps nothing. */
	*out = r.body;
	out->max = max;
	buf_init(&r.body, SIZE_MAX);
out:
	/* An object may hold payment data: leave no copy behind. */
	wipe_mem(r.body.ptr, r.body.len);
	http_response_release(&r);
	return rc;
}

static int s3_get(void *impl, const char *key, buf *out, size_t max, pr_error *err)
{
	s3 *s = impl;
	buf url = BUF_INIT;
	int rc;

	if (object_url(s, &url, key) < 0) {
		buf_release(out);
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	rc = s3_fetch(s, url.ptr, "blob", key, out, max, err);
out:
	buf_release(&url);
	return rc;
}

static int s3_exists(void *impl, const char *key, bool *out, pr_error *err)
{
	return s3_head(impl, key, "look for", out, NULL, err);
}

static int s3_stat(void *impl, const char *key, blob_entry *out, pr_error *err)
{
	bool found = false;
	int rc = s3_head(impl, key, "look at", &found, out, err);

	if (rc == 0 && !found)
		rc = pr_error_set(err, PR_ENOTFOUND, "blob '%s' not found", key);
	return rc;
}

static int s3_size(void *impl, const char *key, uint64_t *out, pr_error *err)
{
	blob_entry e;
	int rc = s3_stat(impl, key, &e, err);

	*out = rc == 0 ? e.size : 0;
	return rc;
}

static int s3_del(void *impl, const char *key, pr_error *err)
{
	s3 *s = impl;
	http_response r;
	buf url = BUF_INIT;
	s3_req q = {.method = HTTP_DELETE, .max_body = ERROR_BODY_MAX};
	char why[PR_ERROR_MSG_MAX];
	int rc;

	http_response_init(&r);
	if (object_url(s, &url, key) < 0) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	q.url = url.ptr;
	rc = s3_send(s, &r, &q, why, sizeof(why));
	/* A delete of what is not there is done: retried deletes are harmless. */
	if (!(rc == 0 && (r.status == 204 || r.status == 200 || r.status == 404)))
		rc = s3_fail(s, rc, &r, why, "delete", key, err);
out:
	http_response_release(&r);
	buf_release(&url);
	return rc;
}

/* ListObjectsV2, page by page */

/* What reading one page keeps from one of expat's calls to the next. */
typedef struct list_page {
	blob_s3_page *pg; /* the caller's: what goes where, and what the page says */
	pr_error *err;
	int rc;                     /* the first error of the callback */
	bool listing;               /* the document was a whole ListBucketResult */
	char key[BLOB_KEY_HEX + 1]; /* the current Contents' blob key, "" when not one */
	bool have_size, have_time;
	blob_entry e;
	const char *bad; /* a Contents entry we cannot read */
	bool have_name;
	char name[XML_TEXT_MAX + 1];
} list_page;

/* The blob key of object `name` when it is one of the layout's, else false. */
static bool blob_of_object(const char *prefix, const char *name, char key[BLOB_KEY_HEX + 1])
{
	size_t pl = strlen(prefix), ll = strlen(LAYOUT);
	const char *p = name + pl + ll;

	if (strncmp(name, prefix, pl) != 0 || strncmp(name + pl, LAYOUT, ll) != 0 ||
	    strlen(p) != 2 + 1 + BLOB_KEY_HEX - 2 + strlen(SUFFIX) || p[2] != '/' ||
	    strcmp(p + 3 + BLOB_KEY_HEX - 2, SUFFIX) != 0)
		return false;
	memcpy(key, p, 2);
	memcpy(key + 2, p + 3, BLOB_KEY_HEX - 2);
	key[BLOB_KEY_HEX] = '\0';
	return blob_key_valid(key);
}

static void list_leaf(void *ud, int depth, const char *parent, const char *name, const char *text)
{
	list_page *l = ud;
	blob_s3_page *pg = l->pg;

	if (depth == 2 && strcmp(parent, "ListBucketResult") == 0) {
		if (strcmp(name, "IsTruncated") == 0)
			pg->truncated = strcmp(text, "true") == 0;
		else if (strcmp(name, "NextContinuationToken") == 0)
			snprintf(pg->token, sizeof(pg->token), "%s", text);
		return;
	}
	if (depth != 3 || strcmp(parent, "Contents") != 0)
		return;
	/*
	 * S3 lists keys in byte order, each page after the last: a key at or
	 * before the last one of the pages before is a page served again.
	 */
	if (strcmp(name, "Key") == 0) {
		if (pg->after[0] && strcmp(text, pg->after) <= 0)
			l->bad = "a page lists a key at or before the pages before it (a page "
				 "served again)";
		if (strcmp(text, pg->last_key) > 0)
			snprintf(pg->last_key, sizeof(pg->last_key), "%s", text);
	}
	if (strcmp(name, "Key") == 0 && pg->object_fn) {
		size_t pl = strlen(pg->prefix);
		/* Keys are listed under the prefix; one outside it is not ours. */
		l->have_name = strncmp(text, pg->prefix, pl) == 0 && text[pl];
		if (l->have_name)
			snprintf(l->name, sizeof(l->name), "%s", text + pl);
	} else if (strcmp(name, "Key") == 0) {
		if (!blob_of_object(pg->prefix, text, l->key))
			l->key[0] = '\0';
	} else if (strcmp(name, "Size") == 0) {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(text, &end, 10);
		l->have_size = !errno && end != text && !*end && isdigit((unsigned char)text[0]);
		l->e.size = (uint64_t)v;
	} else if (strcmp(name, "LastModified") == 0) {
		l->have_time = time_parse(&l->e.mtime_us, text) == 0;
	}
}

static void list_close(void *ud, int depth, const char *name)
{
	list_page *l = ud;
	blob_s3_page *pg = l->pg;

	if (depth == 1)
		l->listing = strcmp(name, "ListBucketResult") == 0;
	if (depth != 2 || strcmp(name, "Contents") != 0)
		return;
	if (pg->object_fn && l->have_name && l->rc == 0 && !l->bad) {
		if (!l->have_size) {
			l->bad = "an object without a readable Size";
		} else {
			blob_s3_object o = {l->name, l->e.size, l->have_time ? l->e.mtime_us : 0};
			l->rc = pg->object_fn(pg->ud, &o, l->err);
			pg->taken++;
		}
	}
	l->have_name = false;
	if (l->key[0] && l->rc == 0 && !l->bad) {
		if (!l->have_size || !l->have_time) {
			l->bad = "an object without a readable Size or LastModified";
		} else {
			memcpy(l->e.key, l->key, sizeof(l->key));
			l->rc = pg->blob_fn(pg->ud, &l->e, l->err);
			pg->taken++;
		}
	}
	l->key[0] = '\0';
	l->have_size = l->have_time = false;
}

int blob_s3_list_page(blob_s3_page *page, const char *body, size_t len, const char *what,
		      pr_error *err)
{
	list_page *l = calloc(1, sizeof(*l));
	xml_rd x = {.leaf = list_leaf, .close = list_close, .ud = l};
	char answer[PR_ERROR_MSG_MAX];
	int rc = 0;

	if (!page->prefix)
		page->prefix = "";
	if (!page->after)
		page->after = "";
	page->truncated = false;
	page->token[0] = '\0';
	page->taken = 0;
	snprintf(page->last_key, sizeof(page->last_key), "%s", page->after);
	if (!l) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	l->pg = page, l->err = err;
	snprintf(answer, sizeof(answer), "%s: the answer", what);
	rc = xml_read(&x, body, len, answer, err);
	/*
	 * The callback's failure came first and holds the message (the first
	 * error is kept): its code goes with it, whatever the rest of the
	 * document is.
	 */
	if (l->rc < 0)
		rc = l->rc;
	if (rc < 0)
		goto out;
	/* A 200 whose body is an <Error> (a proxy's, a throttled server's): not empty. */
	if (!l->bad && !l->listing)
		l->bad = "the answer is not a ListBucketResult document";
	if (l->bad)
		rc = pr_error_set(err, PR_EDATA, "%s: %s", what, l->bad);
out:
	free(l);
	return rc;
}

/* The query of one page, its parameters sorted as SigV4 wants them. */
static int list_query(s3 *s, buf *url, const char *token, bool raw)
{
	int rc = buf_printf(url, "%s?", s->list_url);

	if (rc == 0 && token && *token)
		rc = buf_puts(url, "continuation-token=") | uri_encode(url, token, false) |
		     buf_putc(url, '&');
	if (rc == 0)
		rc = buf_printf(url, "list-type=2&max-keys=%u&prefix=", (unsigned)s->page) |
		     uri_encode(url, s->prefix, false) | uri_encode(url, raw ? "" : LAYOUT, false);
	return rc;
}

/* Every page of the listing: blobs to `fn`, or every object to `ofn`. */
static int list_walk(s3 *s, blob_list_fn fn, blob_s3_object_fn ofn, void *ud, pr_error *err)
{
	blob_s3_page *pg = calloc(1, sizeof(*pg));
	char *prev = NULL, *after = NULL;
	buf url = BUF_INIT;
	http_response r;
	unsigned empty = 0;
	int rc = 0;

	http_response_init(&r);
	if (!pg || !(prev = calloc(1, XML_TEXT_MAX + 1)) ||
	    !(after = calloc(1, XML_TEXT_MAX + 1))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	pg->prefix = s->prefix, pg->after = after, pg->ud = ud;
	pg->blob_fn = fn, pg->object_fn = ofn;
	for (;;) {
		s3_req q = {.method = HTTP_GET, .max_body = LIST_BODY_MAX};
		char what[PR_ERROR_MSG_MAX], sent[PR_ERROR_MSG_MAX];

		buf_reset(&url);
		http_response_release(&r);
		if (list_query(s, &url, pg->token, ofn != NULL) < 0) {
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
			goto out;
		}
		q.url = url.ptr;
		rc = s3_send(s, &r, &q, sent, sizeof(sent));
		if (rc < 0 || r.status != 200) {
			char why[320];
			if (rc < 0) {
				rc = pr_error_set(err, rc, "cannot list '%s': %s", s->describe,
						  sent);
				goto out;
			}
			answer_text(why, sizeof(why), &r);
			rc = pr_error_set(err, PR_EIO, "cannot list '%s': %s", s->describe, why);
			goto out;
		}
		snprintf(prev, XML_TEXT_MAX + 1, "%s", pg->token);
		snprintf(what, sizeof(what), "cannot list '%s'", s->describe);
		if ((rc = blob_s3_list_page(pg, r.body.ptr, r.body.len, what, err)) < 0)
			goto out;
		if (!pg->truncated)
			break;
		/* A page that points nowhere new would make the walk endless. */
		if (!pg->token[0] || strcmp(pg->token, prev) == 0) {
			rc = pr_error_set(err, PR_EDATA,
					  "cannot list '%s': a truncated page without a new "
					  "continuation token",
					  s->describe);
			goto out;
		}
		/*
		 * Tokens that go round in a circle of empty pages would too, and
		 * so would endless pages of keys that are not ours.
		 */
		empty = pg->taken ? 0 : empty + 1;
		if (empty > LIST_EMPTY_PAGES_MAX) {
			rc = pr_error_set(err, PR_EDATA,
					  "cannot list '%s': more than %d truncated pages in a "
					  "row that list nothing to take",
					  s->describe, LIST_EMPTY_PAGES_MAX);
			goto out;
		}
		memcpy(after, pg->last_key, XML_TEXT_MAX + 1);
	}
out:
	http_response_release(&r);
	buf_release(&url);
	free(after);
	free(prev);
	free(pg);
	return rc;
}

static int s3_list(void *impl, blob_list_fn fn, void *ud, pr_error *err)
{
	return list_walk(impl, fn, NULL, ud, err);
}

static void s3_close(void *impl)
{
	s3 *s = impl;

	if (!s)
		return;
	free(s->base);
	free(s->list_url);
	free(s->bucket);
	free(s->prefix);
	free(s->provider);
	free(s->key_id);
	wipe_free(s->secret);
	wipe_free(s->token);
	free(s->ca_file);
	free(s->describe);
	free(s);
}

/*
 * A DELETE that timed out or lost its connection may have reached the
 * server and be carried out later (a request queued behind a stalled
 * server or proxy). The time covers four times a call's every try and
 * wait: retention sends in the first quarter, a call's last try goes by
 * the half, and the rest is the time it may take to land. Never less
 * than 15 minutes.
 */
static uint64_t s3_delete_linger_us(void *impl)
{
	const s3 *s = impl;
	uint64_t connect = s->connect_ms ? s->connect_ms : HTTP_DEFAULT_CONNECT_TIMEOUT_MS;
	uint64_t whole = s->timeout_ms ? s->timeout_ms : HTTP_DEFAULT_TIMEOUT_MS;
	uint64_t us = 4 * (uint64_t)s->attempts * (connect + whole + RETRY_WAIT_MAX_MS) * 1000;

	return us > BLOB_S3_DELETE_LINGER_MIN_US ? us : BLOB_S3_DELETE_LINGER_MIN_US;
}

static const blob_store_ops s3_ops = {
	.put = s3_put,
	.get = s3_get,
	.exists = s3_exists,
	.del = s3_del,
	.size = s3_size,
	.sweep = NULL,
	.close = s3_close,
	.touch = NULL,
	.list = s3_list,
	.stat = s3_stat,
	.temps = NULL,
	.kind = "s3",
	.delete_linger_us = s3_delete_linger_us,
};

static char *dup_or_null(const char *v, bool *fail)
{
	char *d = v ? strdup(v) : NULL;

	if (v && !d)
		*fail = true;
	return d;
}

/* The client's state for the settings `o` (checked here); no request is made. */
static int s3_new(s3 **out, const blob_s3_opts *o, pr_error *err)
{
	s3 *s = NULL;
	buf b = BUF_INIT;
	const char *se, *host, *end;
	bool fail = false;
	int rc;

	*out = NULL;
	if ((rc = blob_s3_check(o, err)) < 0)
		goto out;
	endpoint_split(o->endpoint, &se, &host, &end);
	if (!(s = calloc(1, sizeof(*s)))) {
		fail = true;
		goto out;
	}
	s->connect_ms = o->connect_timeout_ms;
	s->timeout_ms = o->timeout_ms;
	s->page = o->list_page ? o->list_page : BLOB_S3_LIST_PAGE;
	s->attempts = o->attempts ? o->attempts : BLOB_S3_ATTEMPTS;
	s->bucket = dup_or_null(o->bucket, &fail);
	s->key_id = dup_or_null(o->access_key_id, &fail);
	s->secret = dup_or_null(o->secret_access_key, &fail);
	s->token =
		o->session_token && *o->session_token ? dup_or_null(o->session_token, &fail) : NULL;
	s->ca_file = dup_or_null(o->ca_file, &fail);
	if (fail)
		goto out;
	/* The prefix always ends in '/' (or is empty). */
	if (buf_puts(&b, o->prefix ? o->prefix : "") < 0 ||
	    (b.len && b.ptr[b.len - 1] != '/' && buf_putc(&b, '/') < 0) ||
	    !(s->prefix = buf_detach(&b, NULL))) {
		fail = true;
		goto out;
	}
	if (buf_printf(&b, "aws:amz:%s:s3", o->region) < 0 ||
	    !(s->provider = buf_detach(&b, NULL))) {
		fail = true;
		goto out;
	}
	/* Path style: SCHEME://HOST/BUCKET/KEY; virtual host: SCHEME://BUCKET.HOST/KEY. */
	if (o->virtual_host)
		rc = buf_printf(&b, "%.*s%s.%.*s/", (int)(se - o->endpoint), o->endpoint, s->bucket,
				(int)(end - host), host);
	else
		rc = buf_printf(&b, "%.*s/%s", (int)(end - o->endpoint), o->endpoint, s->bucket);
	if (rc < 0 || !(s->list_url = strdup(b.ptr)) ||
	    (!o->virtual_host && buf_putc(&b, '/') < 0) || !(s->base = buf_detach(&b, NULL))) {
		rc = 0;
		fail = true;
		goto out;
	}
	if (buf_printf(&b, "s3://%s/%s", s->bucket, s->prefix) < 0 ||
	    !(s->describe = buf_detach(&b, NULL))) {
		fail = true;
		goto out;
	}
	*out = s;
	s = NULL;
out:
	if (fail)
		rc = pr_error_set(err, PR_ENOMEM, "cannot open an S3 blob store: out of memory");
	s3_close(s);
	buf_release(&b);
	return rc;
}

int blob_s3_open(blob_store **out, const blob_s3_opts *o, pr_error *err)
{
	s3 *s = NULL;
	int rc;

	*out = NULL;
	if ((rc = s3_new(&s, o, err)) < 0)
		return rc;
	return blob_store_new(out, &s3_ops, s, s->describe, err);
}

/* ---------------------------------------------------- any object of a bucket */

int blob_s3_bucket_open(blob_s3_bucket **out, const blob_s3_opts *o, pr_error *err)
{
	return s3_new(out, o, err);
}

const char *blob_s3_bucket_describe(const blob_s3_bucket *b)
{
	return b->describe;
}

void blob_s3_bucket_set_deadline(blob_s3_bucket *b, int64_t mono_us, const char *why)
{
	b->deadline_us = mono_us;
	snprintf(b->deadline_why, sizeof(b->deadline_why), "%s", why ? why : "its time ran out");
}

int blob_s3_bucket_list(blob_s3_bucket *b, blob_s3_object_fn fn, void *ud, pr_error *err)
{
	return list_walk(b, NULL, fn, ud, err);
}

int blob_s3_bucket_read(blob_s3_bucket *b, const char *name, buf *out, size_t max,
			pr_error *err)
{
	buf url = BUF_INIT, shown = BUF_INIT;
	int rc;

	if (raw_object_url(b, &url, name) < 0 ||
	    buf_printf(&shown, "%s%s", b->describe, name) < 0) {
		buf_release(out);
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	rc = s3_fetch(b, url.ptr, "object", shown.ptr, out, max, err);
out:
	buf_release(&url);
	buf_release(&shown);
	return rc;
}

void blob_s3_bucket_free(blob_s3_bucket *b)
{
	s3_close(b);
}
