/*
 * sigv4.c: AWS Signature Version 4 computed independently, for the tests
 * (see sigv4.h).
 */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L
#include "tests/support/sigv4.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

/* A growable string; `bad` once memory ran out. */
typedef struct str {
	char *p;
	size_t len, cap;
	bool bad;
} str;

static void put(str *s, const char *d, size_t n)
{
	if (s->bad)
		return;
	if (s->len + n + 1 > s->cap) {
		size_t cap = (s->len + n + 1) * 2;
		char *p = realloc(s->p, cap);
		if (!p) {
			s->bad = true;
			return;
		}
		s->p = p;
		s->cap = cap;
	}
	memcpy(s->p + s->len, d, n);
	s->len += n;
	s->p[s->len] = '\0';
}

static void puts_(str *s, const char *d)
{
	put(s, d, strlen(d));
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decode %XX escapes of [s, s + n) into out (a '+' stays a '+'). */
static void decode(str *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
			char c = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
			put(out, &c, 1);
			i += 2;
		} else {
			put(out, s + i, 1);
		}
	}
}

/* Encode as SigV4 does: unreserved kept, '/' kept when `slash`, the rest %XX. */
static void encode(str *out, const char *s, size_t n, bool slash)
{
	static const char hex[] = "0123456789ABCDEF";

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' ||
		    (slash && c == '/')) {
			put(out, (const char *)&c, 1);
		} else {
			char e[3] = {'%', hex[c >> 4], hex[c & 15]};
			put(out, e, 3);
		}
	}
}

void sigv4_sha256_hex(char out[65], const void *data, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	EVP_Digest(len ? data : "", len, md, &n, EVP_sha256(), NULL);
	for (unsigned int i = 0; i < n && i < 32; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[64] = '\0';
}

/* One query parameter, encoded. */
typedef struct param {
	char *name;
	char *value;
} param;

static int param_cmp(const void *a, const void *b)
{
	const param *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->value, y->value);
}

/* The canonical query of `q` (without '?'), appended to out. */
static void canonical_query(str *out, const char *q)
{
	param *ps = NULL;
	size_t n = 0, cap = 0;

	while (*q) {
		size_t len = strcspn(q, "&");
		const char *eq = memchr(q, '=', len);
		size_t nl = eq ? (size_t)(eq - q) : len;
		str dn = {0}, dv = {0}, en = {0}, ev = {0};

		if (len == 0) {
			q++;
			continue;
		}
		decode(&dn, q, nl);
		if (eq)
			decode(&dv, eq + 1, len - nl - 1);
		encode(&en, dn.p ? dn.p : "", dn.len, false);
		encode(&ev, dv.p ? dv.p : "", dv.len, false);
		puts_(&en, "");
		puts_(&ev, "");
		free(dn.p);
		free(dv.p);
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			param *g = realloc(ps, cap * sizeof(*ps));
			if (!g) {
				out->bad = true;
				free(en.p);
				free(ev.p);
				break;
			}
			ps = g;
		}
		ps[n].name = en.p;
		ps[n].value = ev.p;
		n++;
		q += len;
		if (*q == '&')
			q++;
	}
	qsort(ps, n, sizeof(*ps), param_cmp);
	for (size_t i = 0; i < n; i++) {
		if (i)
			puts_(out, "&");
		puts_(out, ps[i].name);
		puts_(out, "=");
		puts_(out, ps[i].value);
		free(ps[i].name);
		free(ps[i].value);
	}
	free(ps);
}

/* A header's value trimmed, inner runs of spaces and tabs made one space. */
static void trimmed(str *out, const char *v, size_t n)
{
	size_t i = 0, end = n;
	bool space = false;

	while (i < end && (v[i] == ' ' || v[i] == '\t'))
		i++;
	while (end > i && (v[end - 1] == ' ' || v[end - 1] == '\t'))
		end--;
	for (; i < end; i++) {
		if (v[i] == ' ' || v[i] == '\t') {
			space = true;
			continue;
		}
		if (space)
			put(out, " ", 1);
		space = false;
		put(out, v + i, 1);
	}
}

char *sigv4_canonical_request(const char *method, const char *target, const sigv4_header *headers,
			      size_t nheaders, const char *signed_headers, const char *payload_hash)
{
	str out = {0}, path = {0};
	size_t plen = strcspn(target, "?");
	const char *sh = signed_headers;

	puts_(&out, method);
	puts_(&out, "\n");
	decode(&path, target, plen);
	encode(&out, path.p ? path.p : "", path.len, true);
	free(path.p);
	puts_(&out, "\n");
	if (target[plen] == '?')
		canonical_query(&out, target + plen + 1);
	puts_(&out, "\n");
	while (*sh) {
		size_t len = strcspn(sh, ";");
		bool found = false;

		put(&out, sh, len);
		puts_(&out, ":");
		for (size_t i = 0; i < nheaders; i++) {
			if (headers[i].name_len != len ||
			    strncasecmp(headers[i].name, sh, len) != 0)
				continue;
			if (found)
				puts_(&out, ",");
			trimmed(&out, headers[i].value, headers[i].value_len);
			found = true;
		}
		if (!found) {
			free(out.p);
			return NULL;
		}
		puts_(&out, "\n");
		sh += len;
		if (*sh == ';')
			sh++;
	}
	puts_(&out, "\n");
	puts_(&out, signed_headers);
	puts_(&out, "\n");
	puts_(&out, payload_hash);
	if (out.bad) {
		free(out.p);
		return NULL;
	}
	return out.p;
}

static void hmac(unsigned char out[32], const void *key, size_t klen, const char *msg)
{
	unsigned int n = 32;

	HMAC(EVP_sha256(), key, (int)klen, (const unsigned char *)msg, strlen(msg), out, &n);
}

void sigv4_signature(char out[65], const char *secret, const char *amz_date, const char *region,
		     const char *service, const char *canonical_request)
{
	static const char hex[] = "0123456789abcdef";
	char date[9], crh[65], *key0, *sts;
	unsigned char k[32], sig[32];
	size_t kl = strlen(secret) + 5, sl;

	snprintf(date, sizeof(date), "%.8s", amz_date);
	key0 = malloc(kl);
	snprintf(key0, kl, "AWS4%s", secret);
	hmac(k, key0, kl - 1, date);
	free(key0);
	hmac(k, k, 32, region);
	hmac(k, k, 32, service);
	hmac(k, k, 32, "aws4_request");
	sigv4_sha256_hex(crh, canonical_request, strlen(canonical_request));
	sl = strlen(amz_date) + strlen(region) + strlen(service) + 128;
	sts = malloc(sl);
	snprintf(sts, sl, "AWS4-HMAC-SHA256\n%s\n%s/%s/%s/aws4_request\n%s", amz_date, date, region,
		 service, crh);
	hmac(sig, k, 32, sts);
	free(sts);
	for (int i = 0; i < 32; i++) {
		out[2 * i] = hex[sig[i] >> 4];
		out[2 * i + 1] = hex[sig[i] & 15];
	}
	out[64] = '\0';
}

/* The value of header `name` as a new string, or NULL. */
static char *header(const sigv4_header *h, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (h[i].name_len == strlen(name) &&
		    strncasecmp(h[i].name, name, h[i].name_len) == 0) {
			str s = {0};
			trimmed(&s, h[i].value, h[i].value_len);
			puts_(&s, "");
			return s.p;
		}
	return NULL;
}

static int fail(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
	return -1;
}

/* Copy the value after "key=" in an Authorization header, up to ',' or the end. */
static bool auth_field(char *out, size_t n, const char *auth, const char *key)
{
	const char *p = strstr(auth, key);
	size_t len;

	if (!p)
		return false;
	p += strlen(key);
	len = strcspn(p, ", ");
	if (len >= n)
		return false;
	memcpy(out, p, len);
	out[len] = '\0';
	return true;
}

/* The time of "YYYYMMDDTHHMMSSZ" in Unix seconds, or -1. */
static long long amz_time(const char *s)
{
	struct tm tm;
	int y, mo, d, h, mi, se;

	if (strlen(s) != 16 || s[8] != 'T' || s[15] != 'Z' ||
	    sscanf(s, "%4d%2d%2dT%2d%2d%2dZ", &y, &mo, &d, &h, &mi, &se) != 6)
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900, tm.tm_mon = mo - 1, tm.tm_mday = d;
	tm.tm_hour = h, tm.tm_min = mi, tm.tm_sec = se;
	return (long long)timegm(&tm);
}

int sigv4_verify(const char *method, const char *target, const sigv4_header *headers,
		 size_t nheaders, const void *body, size_t body_len, const char *key_id,
		 const char *secret, const char *region, const char *service, long long now,
		 char *why, size_t n)
{
	char *auth = header(headers, nheaders, "authorization");
	char *date = header(headers, nheaders, "x-amz-date");
	char *sha = header(headers, nheaders, "x-amz-content-sha256");
	char cred[512], signed_h[1024], sig[128], want_scope[256], got[65], body_hash[65];
	char *creq = NULL;
	int rc = -1;

	if (!auth || strncmp(auth, "AWS4-HMAC-SHA256 ", 17) != 0) {
		fail(why, n, "no AWS4-HMAC-SHA256 Authorization header");
		goto out;
	}
	if (!auth_field(cred, sizeof(cred), auth, "Credential=") ||
	    !auth_field(signed_h, sizeof(signed_h), auth, "SignedHeaders=") ||
	    !auth_field(sig, sizeof(sig), auth, "Signature=")) {
		fail(why, n, "Authorization lacks Credential, SignedHeaders or Signature");
		goto out;
	}
	if (!date || amz_time(date) < 0) {
		fail(why, n, "no valid X-Amz-Date");
		goto out;
	}
	if (now && (amz_time(date) > now + 900 || amz_time(date) < now - 900)) {
		fail(why, n, "X-Amz-Date %s is more than 15 minutes from the clock", date);
		goto out;
	}
	snprintf(want_scope, sizeof(want_scope), "%s/%.8s/%s/%s/aws4_request", key_id, date, region,
		 service);
	if (strcmp(cred, want_scope) != 0) {
		fail(why, n, "credential scope '%s', expected '%s'", cred, want_scope);
		goto out;
	}
	if (!sha) {
		fail(why, n, "no x-amz-content-sha256 header");
		goto out;
	}
	sigv4_sha256_hex(body_hash, body, body_len);
	if (strcmp(sha, body_hash) != 0) {
		fail(why, n, "x-amz-content-sha256 %s is not the body's SHA-256 %s", sha,
		     body_hash);
		goto out;
	}
	/* host and every x-amz-* header sent must be signed. */
	for (size_t i = 0; i <= nheaders; i++) {
		const char *name = i == nheaders ? "host" : headers[i].name;
		size_t len = i == nheaders ? 4 : headers[i].name_len;
		char lower[128];
		const char *p;
		bool ok = false;
		if (i < nheaders && !(len > 6 && strncasecmp(name, "x-amz-", 6) == 0))
			continue;
		if (len >= sizeof(lower))
			continue;
		for (size_t k = 0; k < len; k++)
			lower[k] = (char)tolower((unsigned char)name[k]);
		lower[len] = '\0';
		for (p = signed_h; *p;) {
			size_t l = strcspn(p, ";");
			if (l == len && strncmp(p, lower, len) == 0)
				ok = true;
			p += l;
			if (*p == ';')
				p++;
		}
		if (!ok) {
			fail(why, n, "header '%s' is not signed (SignedHeaders=%s)", lower,
			     signed_h);
			goto out;
		}
	}
	if (!(creq = sigv4_canonical_request(method, target, headers, nheaders, signed_h, sha))) {
		fail(why, n, "a signed header is missing from the request (SignedHeaders=%s)",
		     signed_h);
		goto out;
	}
	sigv4_signature(got, secret, date, region, service, creq);
	if (strcmp(got, sig) != 0) {
		fail(why, n, "signature %s, expected %s for the canonical request [%s]", sig, got,
		     creq);
		goto out;
	}
	rc = 0;
out:
	free(auth);
	free(date);
	free(sha);
	free(creq);
	return rc;
}
