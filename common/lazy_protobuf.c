/*
 * lazy_protobuf.c: the protobuf-c functions profreg calls, loaded on
 * first use (common/lazylib.h). Only pprof captures, the Pyroscope and
 * Parca sources and pprof exports use them; the generated code in
 * build/gen calls these five.
 */
#define _POSIX_C_SOURCE 200809L
#include "common/lazylib.h"

#include <protobuf-c/protobuf-c.h>
#include <string.h>

#define PROTOBUF_FUNCS(X, V) \
	V(protobuf_c_message_free_unpacked, (ProtobufCMessage *m, ProtobufCAllocator *a), (m, a)) \
	X(size_t, protobuf_c_message_get_packed_size, (const ProtobufCMessage *m), (m)) \
	X(size_t, protobuf_c_message_pack, (const ProtobufCMessage *m, uint8_t *out), (m, out)) \
	X(size_t, protobuf_c_message_pack_to_buffer, \
	  (const ProtobufCMessage *m, ProtobufCBuffer *b), (m, b)) \
	X(ProtobufCMessage *, protobuf_c_message_unpack, \
	  (const ProtobufCMessageDescriptor *d, ProtobufCAllocator *a, size_t n, \
	   const uint8_t *data), (d, a, n, data))

enum { PROTOBUF_FUNCS(LAZYLIB_INDEX, LAZYLIB_INDEX_V) LAZY_COUNT };
static const char *const names[] = {PROTOBUF_FUNCS(LAZYLIB_NAME, LAZYLIB_NAME_V)};
static void *fns[LAZY_COUNT];
static lazylib protobuf = {LAZY_SONAME_PROTOBUF, names, fns, LAZY_COUNT, false};

/*
 * The one data symbol: the generated code points string fields and their
 * defaults at it. The library itself never takes its address (it compares
 * a string with the field's default in the descriptor), so this copy
 * serves.
 */
const char protobuf_c_empty_string[] = "";

#define FORWARD(ret, name, params, args) LAZYLIB_FORWARD(protobuf, ret, name, params, args)
#define FORWARD_V(name, params, args) LAZYLIB_FORWARD_V(protobuf, name, params, args)
PROTOBUF_FUNCS(FORWARD, FORWARD_V)
