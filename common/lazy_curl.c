/*
 * lazy_curl.c: the libcurl functions profreg calls, loaded on first use
 * (common/lazylib.h). Every HTTP request goes through pipeline/http.c:
 * sources, S3, paging; a command that only reads the database and the
 * local blob store never loads libcurl (nor nghttp2, libssh2, librtmp,
 * libpsl, brotli).
 */
#define _POSIX_C_SOURCE 200809L
#define CURL_DISABLE_TYPECHECK /* the type-checking macros would rename ours */
#include "common/lazylib.h"

#include <curl/curl.h>
#include <stdarg.h>
#include <string.h>

#define CURL_FUNCS(X, V) \
	V(curl_easy_cleanup, (CURL *c), (c)) \
	X(CURL *, curl_easy_init, (void), ()) \
	X(CURLcode, curl_easy_perform, (CURL *c), (c)) \
	X(char *, curl_easy_escape, (CURL *c, const char *s, int n), (c, s, n)) \
	V(curl_free, (void *p), (p)) \
	X(const char *, curl_easy_strerror, (CURLcode e), (e)) \
	X(time_t, curl_getdate, (const char *p, const time_t *u), (p, u)) \
	X(CURLcode, curl_global_init, (long flags), (flags)) \
	X(struct curl_slist *, curl_slist_append, (struct curl_slist *l, const char *s), (l, s)) \
	V(curl_slist_free_all, (struct curl_slist *l), (l))

enum {
	CURL_FUNCS(LAZYLIB_INDEX, LAZYLIB_INDEX_V)
	LAZY_curl_easy_setopt, LAZY_curl_easy_getinfo, LAZY_COUNT
};
static const char *const names[] = {CURL_FUNCS(LAZYLIB_NAME, LAZYLIB_NAME_V)
				    "curl_easy_setopt", "curl_easy_getinfo"};
static void *fns[LAZY_COUNT];
static lazylib curl = {LAZY_SONAME_CURL, names, fns, LAZY_COUNT, false};

#define FORWARD(ret, name, params, args) LAZYLIB_FORWARD(curl, ret, name, params, args)
#define FORWARD_V(name, params, args) LAZYLIB_FORWARD_V(curl, name, params, args)
CURL_FUNCS(FORWARD, FORWARD_V)

/*
 * Variadic with one argument whose type the option's number tells, as
 * libcurl itself reads it: below CURLOPTTYPE_OBJECTPOINT a long, then
 * object and function pointers, then curl_off_t, then blobs (pointers).
 */
CURLcode curl_easy_setopt(CURL *c, CURLoption opt, ...)
{
	CURLcode (*fn)(CURL *, CURLoption, ...);
	CURLcode rc;
	va_list ap;

	lazylib_load(&curl);
	memcpy(&fn, &curl.fns[LAZY_curl_easy_setopt], sizeof(fn));
	va_start(ap, opt);
	if (opt < CURLOPTTYPE_OBJECTPOINT)
		rc = fn(c, opt, va_arg(ap, long));
	else if (opt < CURLOPTTYPE_FUNCTIONPOINT)
		rc = fn(c, opt, va_arg(ap, void *));
	else if (opt < CURLOPTTYPE_OFF_T)
		rc = fn(c, opt, va_arg(ap, void (*)(void)));
	else if (opt < CURLOPTTYPE_BLOB)
		rc = fn(c, opt, va_arg(ap, curl_off_t));
	else
		rc = fn(c, opt, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

/* Variadic with one argument, always a pointer to where the answer goes. */
CURLcode curl_easy_getinfo(CURL *c, CURLINFO info, ...)
{
	CURLcode (*fn)(CURL *, CURLINFO, ...);
	CURLcode rc;
	va_list ap;

	lazylib_load(&curl);
	memcpy(&fn, &curl.fns[LAZY_curl_easy_getinfo], sizeof(fn));
	va_start(ap, info);
	rc = fn(c, info, va_arg(ap, void *));
	va_end(ap);
	return rc;
}
