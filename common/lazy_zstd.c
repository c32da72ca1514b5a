/*
 * lazy_zstd.c: the libzstd functions profreg calls, loaded on first use
 * (common/lazylib.h). Only the blob store (pipeline/blob.c) compresses
 * and decompresses captures; a command that reads the index alone never
 * loads it.
 */
#define _POSIX_C_SOURCE 200809L
#include "common/lazylib.h"

#include <string.h>
#include <zstd.h>
#include <zstd_errors.h>

#define ZSTD_FUNCS(X, V) \
	X(size_t, ZSTD_CCtx_setParameter, (ZSTD_CCtx *c, ZSTD_cParameter p, int v), (c, p, v)) \
	X(size_t, ZSTD_DCtx_setParameter, (ZSTD_DCtx *d, ZSTD_dParameter p, int v), (d, p, v)) \
	X(size_t, ZSTD_compress2, (ZSTD_CCtx *c, void *dst, size_t cap, const void *src, \
				   size_t n), (c, dst, cap, src, n)) \
	X(size_t, ZSTD_compressBound, (size_t n), (n)) \
	X(ZSTD_CCtx *, ZSTD_createCCtx, (void), ()) \
	X(ZSTD_DCtx *, ZSTD_createDCtx, (void), ()) \
	X(size_t, ZSTD_decompressStream, (ZSTD_DStream *d, ZSTD_outBuffer *o, ZSTD_inBuffer *i), \
	  (d, o, i)) \
	X(size_t, ZSTD_freeCCtx, (ZSTD_CCtx *c), (c)) \
	X(size_t, ZSTD_freeDCtx, (ZSTD_DCtx *d), (d)) \
	X(ZSTD_ErrorCode, ZSTD_getErrorCode, (size_t code), (code)) \
	X(const char *, ZSTD_getErrorName, (size_t code), (code)) \
	X(unsigned long long, ZSTD_getFrameContentSize, (const void *src, size_t n), (src, n)) \
	X(unsigned, ZSTD_isError, (size_t code), (code))

enum { ZSTD_FUNCS(LAZYLIB_INDEX, LAZYLIB_INDEX_V) LAZY_COUNT };
static const char *const names[] = {ZSTD_FUNCS(LAZYLIB_NAME, LAZYLIB_NAME_V)};
static void *fns[LAZY_COUNT];
static lazylib zstd = {LAZY_SONAME_ZSTD, names, fns, LAZY_COUNT, false};

#define FORWARD(ret, name, params, args) LAZYLIB_FORWARD(zstd, ret, name, params, args)
#define FORWARD_V(name, params, args) LAZYLIB_FORWARD_V(zstd, name, params, args)
ZSTD_FUNCS(FORWARD, FORWARD_V)
