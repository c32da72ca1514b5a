/*
 * http.h: the one HTTP client, on libcurl, for everything profreg sends
 * or fetches (pages, Pushgateway metrics, profiles from pprof endpoints,
 * profiler APIs and object storage).
 *
 * Every request, whatever the caller asks:
 *   - goes to an http:// or https:// URL only (any other scheme is
 *     refused before anything is sent, and libcurl is held to the two);
 *   - verifies TLS (peer certificate and host name), against the system
 *     store or the CA file the caller names; there is no way to turn this off;
 *   - never follows a redirect: a 3xx comes back as a status;
 *   - when it carries a secret (below) over plain http, which callers
 *     allow to loopback only, never goes through a proxy the environment
 *     names (http_proxy), which would take the secret to another host in
 *     cleartext; other requests use such a proxy as libcurl does;
 *   - is bounded in time (connect and total timeouts, never "none") and
 *     in the response it reads (a body cap, HTTP_DEFAULT_MAX_BODY unless
 *     the caller sets one);
 *   - sends "User-Agent: profreg/<version>" and no "Expect: 100-continue"
 *     (but a SigV4-signed body over 1 MiB goes with it: see sigv4);
 *   - prints nothing (libcurl's verbose mode stays off).
 *
 * Secrets: the caller names one header that carries a secret (a bearer
 * token, a signed authorization). Its value, and the user name and
 * password of a URL's userinfo, never appear in an error message, and
 * messages name a URL only by scheme, host and port ('http://h:9/...'),
 * since paths and queries carry tokens too (webhook URLs, signed links).
 * The copies of the secret header this module makes are wiped before they
 * are freed, and so is the response body (http_response_release). The
 * body of an answer whose status is not 2xx is read for its reason, which
 * callers quote and store: every copy of a secret in it is masked with
 * '*' (a 2xx body is data and is left as it came). The
 * request body belongs to the caller, who wipes it when it holds a secret.
 *
 * Errors follow common/error.h: "cannot reach 'http://127.0.0.1:9/...':
 * connection refused". An answer from the server is not an error,
 * whatever its status: the caller decides what a 404 or a 503 means.
 */
#ifndef PR_HTTP_H
#define PR_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/error.h"

/* The response body read when the caller sets no cap. */
#define HTTP_DEFAULT_MAX_BODY ((size_t)64 << 20)
/* Timeouts used when the caller leaves one at 0. */
#define HTTP_DEFAULT_CONNECT_TIMEOUT_MS 10000u
#define HTTP_DEFAULT_TIMEOUT_MS 60000u
/* A Retry-After further away than this is read as this (a day). */
#define HTTP_RETRY_AFTER_MAX_MS (86400LL * 1000)

typedef enum http_method {
	HTTP_GET,
	HTTP_HEAD,
	HTTP_POST,
	HTTP_PUT,
	HTTP_DELETE,
} http_method;

#define HTTP_KEEP_MAX 4    /* response headers a request may keep */
#define HTTP_KEPT_MAX 256  /* bytes kept of each, its NUL included */

typedef struct http_req {
	http_method method;
	const char *url;              /* http:// or https:// only */
	/*
	 * Extra request headers, "Name: value" each (no CR or LF), ending at
	 * a NULL entry; NULL: none. Never one that holds a secret.
	 */
	const char *const *headers;
	/*
	 * The header that carries a secret, e.g. "Authorization" and
	 * "Bearer <token>"; NULL name: none. The value may hold no CR, LF or
	 * other control character. It is never logged or put in a message.
	 */
	const char *secret_header;
	const char *secret_value;
	/*
	 * The body holds a secret (PagerDuty's routing key): like a secret
	 * header, it never goes through a proxy over plain http.
	 */
	bool body_secret;
	const void *body;             /* POST and PUT only; NULL: empty */
	size_t body_len;
	uint32_t connect_timeout_ms;  /* 0: HTTP_DEFAULT_CONNECT_TIMEOUT_MS */
	uint32_t timeout_ms;          /* the whole exchange; 0: HTTP_DEFAULT_TIMEOUT_MS */
	size_t max_body;              /* response body cap in bytes; 0: HTTP_DEFAULT_MAX_BODY */
	/*
	 * What a longer body does: false, the request fails with PR_ELIMIT;
	 * true, the first max_body bytes are kept, the rest is read and
	 * dropped, and out->truncated is set (for error bodies kept as a hint).
	 */
	bool prefix_only;
	/*
	 * The cap of a body whose status is not 2xx, which callers read for
	 * its reason only: its first max_error_body bytes are kept, nothing
	 * more is read (the connection is dropped there) and out->truncated
	 * is set; the answer still counts as one. 0: max_body and
	 * prefix_only apply to it as to any body. Without it, a server could
	 * make every error answer as long as the data's own cap.
	 */
	size_t max_error_body;
	const char *ca_file;          /* PEM CA bundle to verify against; NULL: the system's */
	/*
	 * Response headers whose values to keep in out->kept, by name (any
	 * case), ending at a NULL entry, at most HTTP_KEEP_MAX; NULL: none.
	 */
	const char *const *keep_headers;
	/*
	 * AWS Signature Version 4, computed by libcurl (CURLOPT_AWS_SIGV4):
	 * the provider string in full ("aws:amz:eu-west-1:s3"), the access
	 * key id and the secret access key; NULL sigv4: the request is not
	 * signed. libcurl signs the method, the path and the query exactly as
	 * the URL gives them (so the caller sends them encoded, and the query
	 * sorted, as SigV4 canonicalises them), every header of the request,
	 * X-Amz-Date (which it adds) and the body. What the service wants on
	 * top (S3: x-amz-content-sha256 on every request) the caller adds.
	 * The secret key itself never travels; like secret_value it is kept
	 * out of every message. None may hold a control character. libcurl
	 * would sign the empty header that turns "Expect: 100-continue" off
	 * and not send it, so a signed body over 1 MiB is sent after the
	 * server's 100 Continue (S3 answers it at once).
	 */
	const char *sigv4;
	const char *sigv4_key_id;
	const char *sigv4_secret;
} http_req;

typedef struct http_response {
	long status;                  /* the final HTTP status; 0 when none arrived */
	buf body;                     /* at most the cap; NUL-terminated (buf.h) */
	bool truncated;               /* prefix_only cut the body */
	bool timed_out;               /* the request failed on a timeout */
	/* Retry-After of the response, in seconds or as an HTTP date, in ms; -1: none. */
	int64_t retry_after_ms;
	/* Content-Length of the answer (a HEAD's too); -1: none was sent. */
	int64_t content_length;
	/* Last-Modified of the answer, in Unix seconds; -1: none or unreadable. */
	int64_t last_modified_s;
	/*
	 * The values of req->keep_headers in the final answer, in the same
	 * order, trimmed and cut to HTTP_KEPT_MAX - 1 bytes; "" when absent.
	 */
	char kept[HTTP_KEEP_MAX][HTTP_KEPT_MAX];
} http_response;

/*
 * Set up an empty response: status 0, no body, retry_after_ms,
 * content_length and last_modified_s -1.
 */
void http_response_init(http_response *r);

/*
 * Wipe and free the body; the response is empty and usable again.
 * NULL is fine.
 */
void http_response_release(http_response *r);

/*
 * Make the request `req` and wait for its answer (or the timeout).
 * `out` is initialised first (anything it held is not freed: release it
 * before reusing it) and belongs to the caller, who releases it
 * (http_response_release) whatever this returns.
 *
 * Returns 0 when an answer came, whatever its status (out->status, the
 * body, Retry-After). Otherwise, with the message set:
 *   PR_EUSAGE   a URL that is not http(s), a header with a line break, a
 *               body on GET, HEAD or DELETE, a SigV4 setting that is
 *               missing or holds a control character: nothing was sent
 *   PR_EIO      no answer: connection refused, name not resolved, TLS
 *               verification failed, a timeout (out->timed_out), a broken
 *               connection, a response header line longer than libcurl's
 *               CURL_MAX_HTTP_HEADER (100 KiB)
 *   PR_ELIMIT   the body is longer than the cap (without prefix_only);
 *               out->status is the status that came, the body is dropped
 *   PR_ENOMEM   out of memory
 * Safe to call from several threads at once, each with its own `out`.
 */
int http_request(http_response *out, const http_req *req, pr_error *err);

/*
 * Mask with '*', in place, every copy in the string `s` of a secret that
 * `req` carries (the secret header's value, and its last word alone; the
 * SigV4 secret key; the URL's user name and password), as http_request
 * masks an answer that is not 2xx. For what a caller quotes from a 2xx
 * answer that is an error all the same (a gRPC-Web trailer).
 */
void http_mask_secrets(char *s, const http_req *req);

/*
 * Whether the `n` bytes at `p` hold a copy of a secret `req` carries
 * (those http_mask_secrets masks, but the URL's user name, which is no
 * secret), for an answer that is data: a server that echoes the request
 * into a profile would have the credentials stored and shown in reports.
 * Secrets shorter than HTTP_SECRET_MATCH_MIN bytes are not looked for:
 * their bytes turn up in any large binary answer by chance.
 */
#define HTTP_SECRET_MATCH_MIN 8
bool http_holds_secret(const void *p, size_t n, const http_req *req);

/*
 * Parse a Retry-After value: delay-seconds or an HTTP date in any form
 * RFC 9110 accepts (IMF-fixdate, RFC 850, asctime), relative to `now_s`
 * (Unix seconds). 0 and *delay_ms (never negative, at most
 * HTTP_RETRY_AFTER_MAX_MS) on success; -1 (and *delay_ms unchanged) when
 * the value is neither, or NULL.
 */
int http_retry_after(int64_t *delay_ms, const char *value, int64_t now_s);

/*
 * Write `url` as it may appear in a message: scheme, host and port only,
 * with "/..." when a path, query or fragment followed, never userinfo
 * ("http://u:pw@h:9/x?t=1" is "http://h:9/..."). An authority whose
 * port is not a number (a password with an unescaped '/' cuts it short)
 * is shown as "(bad authority)". Control characters become '?'; `out`
 * (n > 0) is always NUL-terminated, cut at n - 1 bytes.
 */
void http_redact_url(char *out, size_t n, const char *url);

/*
 * Whether a request may still start before `deadline_us` (time_mono()
 * microseconds); if so, *timeout_ms and, unless NULL, *connect_ms (0:
 * the defaults above) are cut to the time left, at least a second, so a
 * request started near the deadline outlives it by a second at most.
 */
bool http_cut_to_deadline(int64_t deadline_us, uint32_t *timeout_ms, uint32_t *connect_ms);

/*
 * Append `s` percent-encoded for a URL query or a form body (every byte
 * but ALPHA, DIGIT and "-._~" as %XX; libcurl's curl_easy_escape) to
 * `out`. PR_ENOMEM, or PR_ELIMIT when `out` reaches its cap.
 */
int http_escape(buf *out, const char *s);

#endif
