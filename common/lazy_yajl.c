/*
 * lazy_yajl.c: the yajl functions profreg calls, loaded on first use
 * (common/lazylib.h). Only the V8 profile parser (pipeline/v8.c) streams
 * JSON through yajl.
 */
#define _POSIX_C_SOURCE 200809L
#include "common/lazylib.h"

#include <string.h>
#include <yajl/yajl_parse.h>

#define YAJL_FUNCS(X, V) \
	X(yajl_handle, yajl_alloc, (const yajl_callbacks *cb, yajl_alloc_funcs *afs, void *ctx), \
	  (cb, afs, ctx)) \
	X(yajl_status, yajl_complete_parse, (yajl_handle h), (h)) \
	V(yajl_free, (yajl_handle h), (h)) \
	V(yajl_free_error, (yajl_handle h, unsigned char *s), (h, s)) \
	X(size_t, yajl_get_bytes_consumed, (yajl_handle h), (h)) \
	X(unsigned char *, yajl_get_error, \
	  (yajl_handle h, int verbose, const unsigned char *text, size_t n), \
	  (h, verbose, text, n)) \
	X(yajl_status, yajl_parse, (yajl_handle h, const unsigned char *text, size_t n), \
	  (h, text, n))

enum { YAJL_FUNCS(LAZYLIB_INDEX, LAZYLIB_INDEX_V) LAZY_COUNT };
static const char *const names[] = {YAJL_FUNCS(LAZYLIB_NAME, LAZYLIB_NAME_V)};
static void *fns[LAZY_COUNT];
static lazylib yajl = {LAZY_SONAME_YAJL, names, fns, LAZY_COUNT, false};

#define FORWARD(ret, name, params, args) LAZYLIB_FORWARD(yajl, ret, name, params, args)
#define FORWARD_V(name, params, args) LAZYLIB_FORWARD_V(yajl, name, params, args)
YAJL_FUNCS(FORWARD, FORWARD_V)
