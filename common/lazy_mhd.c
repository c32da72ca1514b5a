/*
 * lazy_mhd.c: the libmicrohttpd functions profreg calls, loaded on first
 * use (common/lazylib.h). Only `profreg serve` runs a server.
 */
#define _POSIX_C_SOURCE 200809L
#include "common/lazylib.h"

#include <microhttpd.h>
#include <stdarg.h>
#include <string.h>

#define MHD_FUNCS(X, V) \
	X(enum MHD_Result, MHD_add_response_header, \
	  (struct MHD_Response *r, const char *h, const char *c), (r, h, c)) \
	X(struct MHD_Response *, MHD_create_response_from_buffer, \
	  (size_t n, void *b, enum MHD_ResponseMemoryMode m), (n, b, m)) \
	V(MHD_destroy_response, (struct MHD_Response *r), (r)) \
	X(const char *, MHD_lookup_connection_value, \
	  (struct MHD_Connection *c, enum MHD_ValueKind k, const char *key), (c, k, key)) \
	X(int, MHD_get_connection_values_n, \
	  (struct MHD_Connection *c, enum MHD_ValueKind k, MHD_KeyValueIteratorN it, void *cls), \
	  (c, k, it, cls)) \
	X(enum MHD_Result, MHD_queue_response, \
	  (struct MHD_Connection *c, unsigned int s, struct MHD_Response *r), (c, s, r)) \
	V(MHD_stop_daemon, (struct MHD_Daemon *d), (d))

enum {
	MHD_FUNCS(LAZYLIB_INDEX, LAZYLIB_INDEX_V)
	LAZY_MHD_start_daemon_va, LAZY_MHD_get_daemon_info, LAZY_MHD_get_connection_info,
	LAZY_COUNT
};
static const char *const names[] = {MHD_FUNCS(LAZYLIB_NAME, LAZYLIB_NAME_V)
				    "MHD_start_daemon_va", "MHD_get_daemon_info",
				    "MHD_get_connection_info"};
static void *fns[LAZY_COUNT];
static lazylib mhd = {LAZY_SONAME_MHD, names, fns, LAZY_COUNT, false};

#define FORWARD(ret, name, params, args) LAZYLIB_FORWARD(mhd, ret, name, params, args)
#define FORWARD_V(name, params, args) LAZYLIB_FORWARD_V(mhd, name, params, args)
MHD_FUNCS(FORWARD, FORWARD_V)

/* Variadic: the options go on through the library's own va_list form. */
struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port,
				    MHD_AcceptPolicyCallback apc, void *apc_cls,
				    MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
	struct MHD_Daemon *(*fn)(unsigned int, uint16_t, MHD_AcceptPolicyCallback, void *,
				 MHD_AccessHandlerCallback, void *, va_list);
	struct MHD_Daemon *d;
	va_list ap;

	lazylib_load(&mhd);
	memcpy(&fn, &mhd.fns[LAZY_MHD_start_daemon_va], sizeof(fn));
	va_start(ap, dh_cls);
	d = fn(flags, port, apc, apc_cls, dh, dh_cls, ap);
	va_end(ap);
	return d;
}

/* Variadic, but no information profreg asks for takes an argument. */
const union MHD_DaemonInfo *MHD_get_daemon_info(struct MHD_Daemon *d,
						enum MHD_DaemonInfoType t, ...)
{
	const union MHD_DaemonInfo *(*fn)(struct MHD_Daemon *, enum MHD_DaemonInfoType, ...);

	lazylib_load(&mhd);
	memcpy(&fn, &mhd.fns[LAZY_MHD_get_daemon_info], sizeof(fn));
	return fn(d, t);
}

/* Variadic, but no information profreg asks for takes an argument. */
const union MHD_ConnectionInfo *MHD_get_connection_info(struct MHD_Connection *c,
							enum MHD_ConnectionInfoType t, ...)
{
	const union MHD_ConnectionInfo *(*fn)(struct MHD_Connection *,
					      enum MHD_ConnectionInfoType, ...);

	lazylib_load(&mhd);
	memcpy(&fn, &mhd.fns[LAZY_MHD_get_connection_info], sizeof(fn));
	return fn(c, t);
}
