/*
 * http.c: the HTTP client on libcurl (see http.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "pipeline/http.h"
#include "common/fileio.h"
#include "common/timeutil.h"
#include "common/wipe.h"

#include <ctype.h>
#include <curl/curl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#ifndef PROFREG_VERSION
#define PROFREG_VERSION "0.0.0"
#endif

/* Room for a URL in a message: scheme, host, port and "/...". */
#define SHOWN_MAX 320
/* Room for the reason libcurl gives, as it goes into a message. */
#define DETAIL_MAX 256
/* A body grows by doubling from here. */
#define BODY_FIRST 4096

/* ------------------------------------------------------------ Retry-After */

int http_retry_after(int64_t *delay_ms, const char *value, int64_t now_s)
{
	const char *s = value;
	int64_t at;

	if (!s)
		return -1;
	while (*s == ' ' || *s == '\t')
		s++;
	if (isdigit((unsigned char)*s)) {
		int64_t v = 0;
		for (; isdigit((unsigned char)*s); s++)
			v = v > HTTP_RETRY_AFTER_MAX_MS ? v : v * 10 + (*s - '0');
		while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
			s++;
		if (*s)
			return -1;
		*delay_ms = v * 1000 > HTTP_RETRY_AFTER_MAX_MS ? HTTP_RETRY_AFTER_MAX_MS : v * 1000;
		return 0;
	}
	/* An HTTP date: curl parses every form RFC 9110 allows. */
	if ((at = (int64_t)curl_getdate(s, NULL)) < 0)
		return -1;
	at -= now_s;
	if (at <= 0)
		*delay_ms = 0;
	else if (at > HTTP_RETRY_AFTER_MAX_MS / 1000)
		*delay_ms = HTTP_RETRY_AFTER_MAX_MS;
	else
		*delay_ms = at * 1000;
	return 0;
}

/* ---------------------------------------------------------------- messages */

/* Append at most `len` bytes of `s` to out[*pos], control characters as '?'. */
static void shown_put(char *out, size_t n, size_t *pos, const char *s, size_t len)
{
	for (size_t i = 0; i < len && s[i] && *pos + 1 < n; i++)
		out[(*pos)++] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	out[*pos] = '\0';
}

/* Whether the host in [h, end) has no port or a port of digits only. */
static bool port_ok(const char *h, const char *end)
{
	const char *colon;

	if (h < end && *h == '[') {
		const char *close = memchr(h, ']', (size_t)(end - h));
		if (!close)
			return false;
		h = close + 1;
		if (h == end)
			return true;
		if (*h != ':')
			return false;
		colon = h;
	} else if (!(colon = memchr(h, ':', (size_t)(end - h)))) {
		return true;
	}
	for (const char *d = colon + 1; d < end; d++)
		if (!isdigit((unsigned char)*d))
			return false;
	return true;
}

void http_redact_url(char *out, size_t n, const char *url)
{
	const char *p = url ? url : "", *sep = strstr(p, "://"), *host, *end;
	size_t pos = 0;

	if (!n)
		return;
	out[0] = '\0';
	if (!sep) {
		/* Not a URL with an authority: its leading word only. */
		static const char scheme_chars[] = "abcdefghijklmnopqrstuvwxyz"
						   "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-";
		size_t word = strspn(p, scheme_chars);
		shown_put(out, n, &pos, p, word);
		if (p[word])
			shown_put(out, n, &pos, p[word] == ':' ? ":..." : "...", 4);
		return;
	}
	host = sep + 3;
	end = host + strcspn(host, "/?#");
	/* The last '@' before the path ends the userinfo. */
	for (const char *a = host; a < end; a++)
		if (*a == '@')
			host = a + 1;
	shown_put(out, n, &pos, p, (size_t)(sep + 3 - p));
	/*
	 * A port that is not a number means the authority was cut early, by
	 * a '/', '?' or '#' that a userinfo should have escaped: what is left
	 * may be part of a password.
	 */
	if (port_ok(host, end))
		shown_put(out, n, &pos, host, (size_t)(end - host));
	else
		shown_put(out, n, &pos, "(bad authority)", 15);
	if (*end && strcmp(end, "/") != 0)
		shown_put(out, n, &pos, "/...", 4);
}

/* The strings a message must never show: the secret and the URL's userinfo. */
#define SECRETS_MAX 8
typedef struct secrets {
	const char *s[SECRETS_MAX];
	size_t len[SECRETS_MAX];
	size_t n;
	char user[256];
	char pass[256];
	char basic[400]; /* "user:password" decoded from a Basic value */
} secrets;

static void secrets_add(secrets *x, const char *s, size_t len)
{
	if (s && len && x->n < SECRETS_MAX) {
		x->s[x->n] = s;
		x->len[x->n++] = len;
	}
}

/*
 * A server that refuses Basic credentials may quote them decoded
 * ("user:password"): that, and the password alone, are secrets too.
 */
static void basic_collect(secrets *x, const char *b64)
{
	size_t len = strlen(b64), pad = 0;
	const char *colon;
	int n;

	if (len == 0 || len % 4 || len / 4 * 3 >= sizeof(x->basic))
		return;
	n = EVP_DecodeBlock((unsigned char *)x->basic, (const unsigned char *)b64, (int)len);
	if (n < 0)
		return;
	/* EVP_DecodeBlock counts the padding's bytes as zeros. */
	pad = (b64[len - 1] == '=') + (len > 1 && b64[len - 2] == '=');
	n -= (int)pad;
	x->basic[n > 0 ? n : 0] = '\0';
	if (n <= 0 || strlen(x->basic) != (size_t)n || !(colon = strchr(x->basic, ':')))
		return;
	secrets_add(x, x->basic, (size_t)n);
	secrets_add(x, colon + 1, strlen(colon + 1));
}

static void secrets_collect(secrets *x, const http_req *req)
{
	const char *v = req->secret_header ? req->secret_value : NULL;
	const char *sep, *host, *end, *at = NULL;

	memset(x, 0, sizeof(*x));
	if (v && *v) {
		const char *sp = strrchr(v, ' ');
		secrets_add(x, v, strlen(v));
		/* "Bearer <token>": the token alone too. */
		if (sp && sp[1])
			secrets_add(x, sp + 1, strlen(sp + 1));
		if (strncasecmp(v, "Basic ", 6) == 0)
			basic_collect(x, v + 6);
	}
	if (req->sigv4 && req->sigv4_secret)
		secrets_add(x, req->sigv4_secret, strlen(req->sigv4_secret));
	if (!req->url || !(sep = strstr(req->url, "://")))
		return;
	host = sep + 3;
	end = host + strcspn(host, "/?#");
	for (const char *a = host; a < end; a++)
		if (*a == '@')
			at = a;
	if (at) {
		const char *colon = memchr(host, ':', (size_t)(at - host));
		const char *ue = colon ? colon : at;
		snprintf(x->user, sizeof(x->user), "%.*s", (int)(ue - host), host);
		if (colon)
			snprintf(x->pass, sizeof(x->pass), "%.*s", (int)(at - colon - 1),
				 colon + 1);
		secrets_add(x, x->pass, strlen(x->pass));
		secrets_add(x, x->user, strlen(x->user));
	}
}

/* Mask every copy of every secret in `s` with '*' (same length, in place). */
static void secrets_mask(const secrets *x, char *s)
{
	for (size_t i = 0; i < x->n; i++)
		for (char *hit = strstr(s, x->s[i]); hit; hit = strstr(hit + x->len[i], x->s[i]))
			memset(hit, '*', x->len[i]);
}

void http_mask_secrets(char *s, const http_req *req)
{
	secrets x;

	secrets_collect(&x, req);
	secrets_mask(&x, s);
	wipe_mem(&x, sizeof(x));
}

/* Whether `len` bytes at `s` occur in the `n` at `p` (memmem, which is not POSIX). */
static bool bytes_hold(const char *p, size_t n, const char *s, size_t len)
{
	const char *end = p + n, *at = p;

	while (len <= (size_t)(end - at) && (at = memchr(at, s[0], (size_t)(end - at) - len + 1))) {
		if (memcmp(at, s, len) == 0)
			return true;
		at++;
	}
	return false;
}

bool http_holds_secret(const void *p, size_t n, const http_req *req)
{
	secrets x;
	bool found = false;

	secrets_collect(&x, req);
	for (size_t i = 0; i < x.n && !found; i++)
		found = x.s[i] != x.user && x.len[i] >= HTTP_SECRET_MATCH_MIN &&
			bytes_hold(p, n, x.s[i], x.len[i]);
	wipe_mem(&x, sizeof(x));
	return found;
}

/*
 * Mask every copy of every secret in the `n` bytes at `p` with '*' (same
 * length, in place); NUL bytes do not stop the search.
 */
static void secrets_mask_bytes(const secrets *x, char *p, size_t n)
{
	for (size_t i = 0; i < x->n; i++) {
		size_t len = x->len[i];
		for (size_t at = 0; len <= n && at <= n - len; at++)
			if (p[at] == x->s[i][0] && memcmp(p + at, x->s[i], len) == 0) {
				memset(p + at, '*', len);
				at += len - 1;
			}
	}
}

/*
 * libcurl's reason as it goes into a message: its first letter lower
 * case unless it starts an acronym ("SSL"), no trailing newline, any
 * secret masked.
 */
static void detail_text(char *out, size_t n, const char *errbuf, CURLcode cr, const secrets *x)
{
	size_t len;

	snprintf(out, n, "%s", errbuf && errbuf[0] ? errbuf : curl_easy_strerror(cr));
	len = strlen(out);
	while (len && (out[len - 1] == '\n' || out[len - 1] == '\r' || out[len - 1] == '.'))
		out[--len] = '\0';
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
			out[i] = '?';
	if (isupper((unsigned char)out[0]) && !isupper((unsigned char)out[1]))
		out[0] = (char)tolower((unsigned char)out[0]);
	secrets_mask(x, out);
}

/* strerror of a socket error, lower case first: "connection refused". */
static void errno_text(char *out, size_t n, long os_errno)
{
	/* The XSI strerror_r: strerror itself may share its buffer between threads. */
	if (strerror_r((int)os_errno, out, n) != 0)
		snprintf(out, n, "error %ld", os_errno);
	if (isupper((unsigned char)out[0]) && !isupper((unsigned char)out[1]))
		out[0] = (char)tolower((unsigned char)out[0]);
}

/* ------------------------------------------------------------------ setup */

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

static void global_init(void)
{
	global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* Whether `s` holds a CR, LF or another control character (tab allowed when `tab`). */
static bool has_control(const char *s, bool tab)
{
	for (; *s; s++)
		if (((unsigned char)*s < 0x20 && !(tab && *s == '\t')) || *s == 0x7f)
			return true;
	return false;
}

/* A header name: RFC 9110 token characters. */
static bool header_name_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("!#$%&'*+-.^_`|~", *s))
			return false;
	return true;
}

static bool scheme_ok(const char *url)
{
	return strncasecmp(url, "http://", 7) == 0 || strncasecmp(url, "https://", 8) == 0;
}

/* Check what can be checked before anything is sent. */
static int check_req(const http_req *req, const char *shown, pr_error *err)
{
	const char *name = req->secret_header;
	pr_error cerr = PR_ERROR_INIT;
	int bad = 0;

	if (!req->url || !scheme_ok(req->url))
		return pr_error_set(err, PR_EUSAGE, "cannot request '%s': only http:// and "
				    "https:// URLs are allowed", shown);
	for (const char *const *h = req->headers; h && *h && !bad; h++)
		if (has_control(*h, true) || !strchr(*h, ':'))
			bad = (int)(h - req->headers) + 1;
	if (bad)
		return pr_error_set(err, PR_EUSAGE, "cannot request '%s': header %d is not one "
				    "'Name: value' line", shown, bad);
	if (name && (!header_name_ok(name) || !req->secret_value ||
		     has_control(req->secret_value, false)))
		return pr_error_set(err, PR_EUSAGE, "cannot request '%s': secret header '%.64s' "
				    "has no value or a control character in it", shown,
				    header_name_ok(name) ? name : "?");
	if (req->sigv4 && (!*req->sigv4 || has_control(req->sigv4, false) ||
			   !req->sigv4_key_id || !*req->sigv4_key_id ||
			   has_control(req->sigv4_key_id, false) || !req->sigv4_secret ||
			   !*req->sigv4_secret || has_control(req->sigv4_secret, false)))
		return pr_error_set(err, PR_EUSAGE, "cannot request '%s': the SigV4 provider, key "
				    "id or secret key is missing or has a control character in it",
				    shown);
	if (req->body_len && !req->body)
		return pr_error_set(err, PR_EUSAGE, "cannot request '%s': a body length without "
				    "a body", shown);
	if ((req->body || req->body_len) && req->method != HTTP_POST && req->method != HTTP_PUT)
		return pr_error_set(err, PR_EUSAGE, "cannot request '%s': only POST and PUT send "
				    "a body", shown);
	/*
	 * libcurl opens the CA file as it connects: a FIFO there waited for a
	 * writer for ever, and a directory or a missing file failed as a
	 * network error, which callers retry. It is the configuration that
	 * is wrong, so say so before any request, whatever the scheme.
	 */
	if (req->ca_file && fileio_check_named("CA file", req->ca_file, &cerr) < 0)
		return pr_error_set(err, PR_EUSAGE, "cannot request '%s': %s", shown, cerr.msg);
	return 0;
}

/* ---------------------------------------------------------------- receive */

typedef struct recv_state {
	http_response *r;
	CURL *c;
	size_t max;          /* the body cap */
	size_t max_error;    /* the cap of a body whose status is not 2xx; 0: max */
	bool prefix_only;
	bool over;           /* the body passed the cap (not prefix_only) */
	bool error_cut;      /* an error body passed max_error: reading stopped */
	bool nomem;
	bool body_started;   /* a byte of the body came */
	const char *const *keep; /* req->keep_headers */
} recv_state;

/*
 * Append to a body that may hold a secret. Growing copies into a new
 * block and wipes the old one (realloc would leave a copy behind).
 */
static int body_put(buf *b, const char *data, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t want = b->cap ? b->cap * 2 : BODY_FIRST;
		buf nb;
		if (want < b->len + n)
			want = b->len + n;
		if (want > b->max)
			want = b->max;
		buf_init(&nb, b->max);
		if (buf_grow(&nb, want) < 0 || buf_put(&nb, b->ptr, b->len) < 0)
			return PR_ENOMEM;
		wipe_mem(b->ptr, b->len);
		buf_release(b);
		*b = nb;
	}
	return buf_put(b, data, n);
}

static size_t on_body(char *data, size_t size, size_t n, void *ud)
{
	recv_state *s = ud;
	buf *b = &s->r->body;
	size_t len = size * n, room = b->len < s->max ? s->max - b->len : 0;
	long status = 0;

	s->body_started = true;
	/* The status is known by the time the body comes. */
	if (s->max_error && curl_easy_getinfo(s->c, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK &&
	    (status < 200 || status > 299)) {
		size_t cap = s->max_error < s->max ? s->max_error : s->max;
		room = b->len < cap ? cap - b->len : 0;
		if (len > room) {
			if (room && body_put(b, data, room) < 0) {
				s->nomem = true;
				return 0;
			}
			s->r->truncated = true;
			s->error_cut = true;
			return 0;
		}
	}
	if (len > room) {
		if (!s->prefix_only) {
			s->over = true;
			return 0;
		}
		s->r->truncated = true;
	}
	if (room && body_put(b, data, len < room ? len : room) < 0) {
		s->nomem = true;
		return 0;
	}
	return len;
}

/* Keep the value of header line data[0..len) if its name is one of s->keep. */
static void keep_header(recv_state *s, const char *data, size_t len)
{
	for (size_t k = 0; s->keep && k < HTTP_KEEP_MAX && s->keep[k]; k++) {
		size_t nl = strlen(s->keep[k]), b, e;
		char *v = s->r->kept[k];

		if (len <= nl || data[nl] != ':' || strncasecmp(data, s->keep[k], nl) != 0)
			continue;
		for (b = nl + 1; b < len && (data[b] == ' ' || data[b] == '\t'); b++)
			;
		for (e = len; e > b && (data[e - 1] == '\r' || data[e - 1] == '\n' ||
					 data[e - 1] == ' ' || data[e - 1] == '\t'); e--)
			;
		if (e - b > HTTP_KEPT_MAX - 1)
			e = b + HTTP_KEPT_MAX - 1;
		memcpy(v, data + b, e - b);
		v[e - b] = '\0';
	}
}

static size_t on_header(char *data, size_t size, size_t n, void *ud)
{
	recv_state *s = ud;
	size_t len = size * n;
	static const char name[] = "retry-after:";

	/* A new status line starts a new response (after a 100 Continue, say). */
	if (len >= 5 && memcmp(data, "HTTP/", 5) == 0) {
		s->r->retry_after_ms = -1;
		memset(s->r->kept, 0, sizeof(s->r->kept));
	}
	keep_header(s, data, len);
	if (len > sizeof(name) - 1 && len < 256 && strncasecmp(data, name, sizeof(name) - 1) == 0) {
		char v[256];
		size_t vl = len - (sizeof(name) - 1);
		int64_t ms;
		memcpy(v, data + sizeof(name) - 1, vl);
		while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' ' ||
			      v[vl - 1] == '\t'))
			vl--;
		v[vl] = '\0';
		if (http_retry_after(&ms, v, (int64_t)time(NULL)) == 0)
			s->r->retry_after_ms = ms;
	}
	return len;
}

/* ------------------------------------------------------------------- send */

void http_response_init(http_response *r)
{
	memset(r, 0, sizeof(*r));
	buf_init(&r->body, SIZE_MAX);
	r->retry_after_ms = -1;
	r->content_length = -1;
	r->last_modified_s = -1;
}

void http_response_release(http_response *r)
{
	if (!r)
		return;
	wipe_mem(r->body.ptr, r->body.len);
	buf_release(&r->body);
	http_response_init(r);
}

/* Overwrite a header list's strings (one may hold the secret) before they are freed. */
static void wipe_headers(struct curl_slist *h)
{
	for (; h; h = h->next)
		if (h->data)
			wipe_mem(h->data, strlen(h->data));
}

/* The header list: the caller's, the secret one, and no Expect (unless signed). */
static int build_headers(struct curl_slist **out, const http_req *req)
{
	struct curl_slist *h = NULL, *t;
	buf line = BUF_INIT;
	int rc = 0;

	for (const char *const *p = req->headers; p && *p; p++) {
		if (!(t = curl_slist_append(h, *p))) {
			rc = PR_ENOMEM;
			goto out;
		}
		h = t;
	}
	/*
	 * libcurl 7.88 signs every header of the list for SigV4, this empty
	 * one too, which it then does not send: the server's signature would
	 * differ. A signed request keeps libcurl's Expect (bodies over 1 MiB).
	 */
	if (!req->sigv4) {
		if (!(t = curl_slist_append(h, "Expect:"))) {
			rc = PR_ENOMEM;
			goto out;
		}
		h = t;
	}
	if (req->secret_header) {
		/* One allocation of the final size: no realloc leaves a copy behind. */
		size_t nl = strlen(req->secret_header), vl = strlen(req->secret_value);
		if (buf_grow(&line, nl + 2 + vl) < 0 ||
		    buf_put(&line, req->secret_header, nl) < 0 || buf_put(&line, ": ", 2) < 0 ||
		    buf_put(&line, req->secret_value, vl) < 0 ||
		    !(t = curl_slist_append(h, line.ptr))) {
			rc = PR_ENOMEM;
			goto out;
		}
		h = t;
	}
out:
	wipe_mem(line.ptr, line.len);
	buf_release(&line);
	if (rc < 0) {
		wipe_headers(h);
		curl_slist_free_all(h);
		h = NULL;
	}
	*out = h;
	return rc;
}

static void set_method(CURL *c, const http_req *req)
{
	const char *body = req->body ? req->body : "";

	switch (req->method) {
	case HTTP_HEAD:
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
		break;
	case HTTP_POST:
	case HTTP_PUT:
		/* POSTFIELDS with a custom verb sends the body with PUT too. */
		if (req->method == HTTP_PUT)
			curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
		break;
	case HTTP_DELETE:
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "DELETE");
		break;
	default:
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
		break;
	}
}

/*
 * The error of a transfer that failed with `cr`; the code returned. The
 * message is "<what could not be done> '<url shown>': <why>".
 */
static int transfer_error(CURL *c, CURLcode cr, const recv_state *rs, const char *errbuf,
			  const char *shown, const secrets *x, long connect_ms, long total_ms,
			  const http_req *req, pr_error *err)
{
	const char *verb = "cannot reach";
	char detail[DETAIL_MAX], why[DETAIL_MAX + 320];
	curl_off_t connect_us = 0;
	long os_errno = 0, sent = 0;
	int code = PR_EIO;

	if (rs->nomem)
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	if (cr == CURLE_OUT_OF_MEMORY) {
		/*
		 * libcurl 7.88 fails a response header line longer than
		 * CURL_MAX_HTTP_HEADER with this code, as if memory had run out.
		 * Between the request sent and the body, that is what it is: the
		 * server's doing, not ours, and no reason to stop everything else.
		 */
		curl_easy_getinfo(c, CURLINFO_REQUEST_SIZE, &sent);
		if (!sent || rs->body_started)
			return pr_error_set(err, PR_ENOMEM, "out of memory");
		return pr_error_set(err, PR_EIO, "cannot read '%s': a response header line "
				    "longer than %d bytes", shown, CURL_MAX_HTTP_HEADER);
	}
	detail_text(detail, sizeof(detail), errbuf, cr, x);
	snprintf(why, sizeof(why), "%s", detail);
	if (rs->over) {
		code = PR_ELIMIT;
		verb = "cannot read";
		snprintf(why, sizeof(why), "response body larger than %zu bytes", rs->max);
	} else {
		switch (cr) {
		case CURLE_OPERATION_TIMEDOUT:
			/* Connected when either says so: a loopback connect can take under 1 us. */
			curl_easy_getinfo(c, CURLINFO_CONNECT_TIME_T, &connect_us);
			curl_easy_getinfo(c, CURLINFO_REQUEST_SIZE, &sent);
			if (!connect_us && !sent) {
				snprintf(why, sizeof(why), "no connection within %ld ms (timeout)",
					 connect_ms < total_ms ? connect_ms : total_ms);
			} else {
				verb = "cannot read";
				snprintf(why, sizeof(why), "no answer within %ld ms (timeout)",
					 total_ms);
			}
			break;
		case CURLE_COULDNT_CONNECT:
			curl_easy_getinfo(c, CURLINFO_OS_ERRNO, &os_errno);
			if (os_errno)
				errno_text(why, sizeof(why), os_errno);
			break;
		case CURLE_COULDNT_RESOLVE_HOST:
			snprintf(why, sizeof(why), "host name not found");
			break;
		case CURLE_COULDNT_RESOLVE_PROXY:
			snprintf(why, sizeof(why), "proxy host name not found");
			break;
		case CURLE_PEER_FAILED_VERIFICATION:
			snprintf(why, sizeof(why), "TLS verification failed (%s)", detail);
			break;
		case CURLE_SSL_CACERT_BADFILE:
			snprintf(why, sizeof(why), "cannot use CA file '%.256s' (%s)",
				 req->ca_file ? req->ca_file : "(system)", detail);
			break;
		case CURLE_SSL_CONNECT_ERROR:
			snprintf(why, sizeof(why), "TLS handshake failed (%s)", detail);
			break;
		case CURLE_UNSUPPORTED_PROTOCOL:
			/* Sent, then refused: an answer without a status line (HTTP/0.9). */
			curl_easy_getinfo(c, CURLINFO_REQUEST_SIZE, &sent);
			if (sent) {
				verb = "cannot read";
				snprintf(why, sizeof(why),
					 "the answer has no HTTP status line (%s)", detail);
				break;
			}
			code = PR_EUSAGE;
			verb = "cannot request";
			break;
		case CURLE_URL_MALFORMAT:
			code = PR_EUSAGE;
			verb = "cannot request";
			break;
		case CURLE_GOT_NOTHING:
			verb = "cannot read";
			snprintf(why, sizeof(why),
				 "the server closed the connection without an answer");
			break;
		default:
			verb = "cannot read";
			break;
		}
	}
	return pr_error_set(err, code, "%s '%s': %s", verb, shown, why);
}

int http_request(http_response *out, const http_req *req, pr_error *err)
{
	char shown[SHOWN_MAX], errbuf[CURL_ERROR_SIZE] = "";
	long connect_ms = req->connect_timeout_ms ? (long)req->connect_timeout_ms :
						    (long)HTTP_DEFAULT_CONNECT_TIMEOUT_MS;
	long total_ms = req->timeout_ms ? (long)req->timeout_ms : (long)HTTP_DEFAULT_TIMEOUT_MS;
	struct curl_slist *headers = NULL;
	recv_state rs;
	secrets x;
	CURL *c = NULL;
	CURLcode cr;
	int rc = 0;

	http_response_init(out);
	secrets_collect(&x, req);
	/* Scheme, host and port only: no userinfo to mask there. */
	http_redact_url(shown, sizeof(shown), req->url);
	if ((rc = check_req(req, shown, err)) < 0)
		goto out;
	pthread_once(&global_once, global_init);
	if (global_rc != CURLE_OK) {
		rc = pr_error_set(err, PR_ERR, "cannot set up libcurl: %s",
				  curl_easy_strerror(global_rc));
		goto out;
	}
	memset(&rs, 0, sizeof(rs));
	rs.r = out;
	rs.max = req->max_body ? req->max_body : HTTP_DEFAULT_MAX_BODY;
	if (rs.max > SIZE_MAX / 4)
		rs.max = SIZE_MAX / 4;
	rs.prefix_only = req->prefix_only;
	rs.max_error = req->max_error_body;
	rs.keep = req->keep_headers;
	out->body.max = rs.max;
	if (!(c = curl_easy_init()) || (rc = build_headers(&headers, req)) < 0) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	rs.c = c;
	curl_easy_setopt(c, CURLOPT_URL, req->url);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	/*
	 * A secret goes over plain http only to this machine (the callers'
	 * rule); a proxy from the environment (http_proxy) would carry it
	 * across the network in cleartext instead, to the proxy's host.
	 */
	if ((x.n || req->body_secret) && strncasecmp(req->url, "http://", 7) == 0)
		curl_easy_setopt(c, CURLOPT_PROXY, "");
	/* A redirect could carry the secret elsewhere: never follow one. */
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, 0L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	if (req->ca_file)
		curl_easy_setopt(c, CURLOPT_CAINFO, req->ca_file);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_VERBOSE, 0L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, total_ms);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "profreg/" PROFREG_VERSION);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	set_method(c, req);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &rs);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &rs);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_FILETIME, 1L);
	if (req->sigv4) {
		curl_easy_setopt(c, CURLOPT_AWS_SIGV4, req->sigv4);
		curl_easy_setopt(c, CURLOPT_USERNAME, req->sigv4_key_id);
		curl_easy_setopt(c, CURLOPT_PASSWORD, req->sigv4_secret);
	}
	cr = curl_easy_perform(c);
	/* An error answer cut at its cap is an answer all the same. */
	if (cr == CURLE_WRITE_ERROR && rs.error_cut)
		cr = CURLE_OK;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
	if (cr == CURLE_OK) {
		curl_off_t v = -1;
		if (curl_easy_getinfo(c, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &v) == CURLE_OK &&
		    v >= 0)
			out->content_length = (int64_t)v;
		v = -1;
		if (curl_easy_getinfo(c, CURLINFO_FILETIME_T, &v) == CURLE_OK && v >= 0)
			out->last_modified_s = (int64_t)v;
		/*
		 * An error answer is read for its reason, which callers quote in
		 * messages and store: a server that echoes the request (a debug
		 * endpoint, a proxy's error page) must not carry the secret there.
		 */
		if (out->status < 200 || out->status > 299)
			secrets_mask_bytes(&x, out->body.ptr, out->body.len);
		/* Kept headers are quoted in messages too, whatever the status. */
		for (size_t k = 0; k < HTTP_KEEP_MAX; k++)
			secrets_mask_bytes(&x, out->kept[k], strlen(out->kept[k]));
	}
	if (cr != CURLE_OK) {
		out->timed_out = cr == CURLE_OPERATION_TIMEDOUT;
		rc = transfer_error(c, cr, &rs, errbuf, shown, &x, connect_ms, total_ms, req, err);
		if (rc != PR_ELIMIT)
			out->status = 0;
		wipe_mem(out->body.ptr, out->body.len);
		buf_release(&out->body);
	}
out:
	/* The header list held the secret; libcurl is done with it. */
	curl_easy_cleanup(c);
	wipe_headers(headers);
	curl_slist_free_all(headers);
	wipe_mem(errbuf, sizeof(errbuf));
	wipe_mem(&x, sizeof(x));
	return rc;
}

int http_escape(buf *out, const char *s)
{
	size_t n = strlen(s);
	char *e;
	int rc;

	if (n > INT32_MAX)
		return PR_ELIMIT;
	if (!(e = curl_easy_escape(NULL, s, (int)n)))
		return PR_ENOMEM;
	rc = buf_puts(out, e);
	curl_free(e);
	return rc;
}

bool http_cut_to_deadline(int64_t deadline_us, uint32_t *timeout_ms, uint32_t *connect_ms)
{
	int64_t left_ms = (deadline_us - (int64_t)(time_mono() * 1e6)) / 1000;
	uint32_t whole = *timeout_ms ? *timeout_ms : HTTP_DEFAULT_TIMEOUT_MS;

	if (left_ms <= 0)
		return false;
	if (left_ms < 1000)
		left_ms = 1000;
	if (whole > left_ms)
		*timeout_ms = (uint32_t)left_ms;
	if (connect_ms && (*connect_ms ? *connect_ms : HTTP_DEFAULT_CONNECT_TIMEOUT_MS) > left_ms)
		*connect_ms = (uint32_t)left_ms;
	return true;
}
