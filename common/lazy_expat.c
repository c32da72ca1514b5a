/*
 * lazy_expat.c: the expat functions profreg calls, loaded on first use
 * (common/lazylib.h). Only the S3 blob store (pipeline/blob_s3.c) reads
 * XML, the bucket's answers.
 */
#define _POSIX_C_SOURCE 200809L
#include "common/lazylib.h"

#include <expat.h>
#include <string.h>

#define EXPAT_FUNCS(X, V) \
	X(const XML_LChar *, XML_ErrorString, (enum XML_Error code), (code)) \
	X(enum XML_Error, XML_GetErrorCode, (XML_Parser p), (p)) \
	X(enum XML_Status, XML_Parse, (XML_Parser p, const char *s, int len, int final), \
	  (p, s, len, final)) \
	X(XML_Parser, XML_ParserCreate, (const XML_Char *encoding), (encoding)) \
	V(XML_ParserFree, (XML_Parser p), (p)) \
	V(XML_SetCharacterDataHandler, (XML_Parser p, XML_CharacterDataHandler h), (p, h)) \
	V(XML_SetElementHandler, \
	  (XML_Parser p, XML_StartElementHandler start, XML_EndElementHandler end), \
	  (p, start, end)) \
	V(XML_SetStartDoctypeDeclHandler, (XML_Parser p, XML_StartDoctypeDeclHandler h), (p, h)) \
	V(XML_SetUserData, (XML_Parser p, void *data), (p, data)) \
	X(enum XML_Status, XML_StopParser, (XML_Parser p, XML_Bool resumable), (p, resumable))

enum { EXPAT_FUNCS(LAZYLIB_INDEX, LAZYLIB_INDEX_V) LAZY_COUNT };
static const char *const names[] = {EXPAT_FUNCS(LAZYLIB_NAME, LAZYLIB_NAME_V)};
static void *fns[LAZY_COUNT];
static lazylib expat = {LAZY_SONAME_EXPAT, names, fns, LAZY_COUNT, false};

#define FORWARD(ret, name, params, args) LAZYLIB_FORWARD(expat, ret, name, params, args)
#define FORWARD_V(name, params, args) LAZYLIB_FORWARD_V(expat, name, params, args)
EXPAT_FUNCS(FORWARD, FORWARD_V)
