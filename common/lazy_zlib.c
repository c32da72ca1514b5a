/*
 * lazy_zlib.c: the zlib functions profreg calls, loaded on first use
 * (common/lazylib.h). Only gzip'd captures (pipeline/gunzip.c) and
 * gzip'd exports use them.
 */
#define _POSIX_C_SOURCE 200809L
#include "common/lazylib.h"

#include <string.h>
#include <zlib.h>

#define ZLIB_FUNCS(X, V) \
	X(int, deflate, (z_streamp s, int flush), (s, flush)) \
	X(int, deflateEnd, (z_streamp s), (s)) \
	X(int, deflateInit2_, (z_streamp s, int level, int method, int bits, int mem, \
			       int strategy, const char *version, int size), \
	  (s, level, method, bits, mem, strategy, version, size)) \
	X(int, inflate, (z_streamp s, int flush), (s, flush)) \
	X(int, inflateEnd, (z_streamp s), (s)) \
	X(int, inflateInit2_, (z_streamp s, int bits, const char *version, int size), \
	  (s, bits, version, size)) \
	X(int, inflateReset, (z_streamp s), (s))

enum { ZLIB_FUNCS(LAZYLIB_INDEX, LAZYLIB_INDEX_V) LAZY_COUNT };
static const char *const names[] = {ZLIB_FUNCS(LAZYLIB_NAME, LAZYLIB_NAME_V)};
static void *fns[LAZY_COUNT];
static lazylib zlib = {LAZY_SONAME_ZLIB, names, fns, LAZY_COUNT, false};

#define FORWARD(ret, name, params, args) LAZYLIB_FORWARD(zlib, ret, name, params, args)
#define FORWARD_V(name, params, args) LAZYLIB_FORWARD_V(zlib, name, params, args)
ZLIB_FUNCS(FORWARD, FORWARD_V)
