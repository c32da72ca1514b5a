/*
 * lazy_jansson.c: the jansson functions profreg calls, loaded on first
 * use (common/lazylib.h). Configuration files, --json output, reports,
 * the API and the sources use JSON; a command that only reads the
 * database and prints a table (`service list`) does not.
 */
#define _POSIX_C_SOURCE 200809L
#include "common/lazylib.h"

#include <jansson.h>
#include <stdarg.h>
#include <string.h>

#define JANSSON_FUNCS(X, V) \
	X(json_t *, json_array, (void), ()) \
	X(int, json_array_append_new, (json_t *a, json_t *v), (a, v)) \
	X(json_t *, json_array_get, (const json_t *a, size_t i), (a, i)) \
	X(int, json_array_remove, (json_t *a, size_t i), (a, i)) \
	X(size_t, json_array_size, (const json_t *a), (a)) \
	X(json_t *, json_deep_copy, (const json_t *v), (v)) \
	V(json_delete, (json_t *v), (v)) \
	X(int, json_dumpf, (const json_t *v, FILE *f, size_t flags), (v, f, flags)) \
	X(char *, json_dumps, (const json_t *v, size_t flags), (v, flags)) \
	X(int, json_equal, (const json_t *a, const json_t *b), (a, b)) \
	X(json_t *, json_false, (void), ()) \
	X(json_t *, json_integer, (json_int_t v), (v)) \
	X(json_int_t, json_integer_value, (const json_t *v), (v)) \
	X(json_t *, json_loadb, (const char *b, size_t n, size_t flags, json_error_t *e), \
	  (b, n, flags, e)) \
	X(json_t *, json_loads, (const char *s, size_t flags, json_error_t *e), (s, flags, e)) \
	X(json_t *, json_null, (void), ()) \
	X(double, json_number_value, (const json_t *v), (v)) \
	X(json_t *, json_object, (void), ()) \
	X(int, json_object_del, (json_t *o, const char *k), (o, k)) \
	X(json_t *, json_object_get, (const json_t *o, const char *k), (o, k)) \
	X(void *, json_object_iter, (json_t *o), (o)) \
	X(const char *, json_object_iter_key, (void *it), (it)) \
	X(void *, json_object_iter_next, (json_t *o, void *it), (o, it)) \
	X(json_t *, json_object_iter_value, (void *it), (it)) \
	X(void *, json_object_key_to_iter, (const char *k), (k)) \
	X(int, json_object_set_new, (json_t *o, const char *k, json_t *v), (o, k, v)) \
	X(size_t, json_object_size, (const json_t *o), (o)) \
	X(json_t *, json_real, (double v), (v)) \
	X(double, json_real_value, (const json_t *v), (v)) \
	X(json_t *, json_string, (const char *s), (s)) \
	X(size_t, json_string_length, (const json_t *s), (s)) \
	X(const char *, json_string_value, (const json_t *s), (s)) \
	X(json_t *, json_stringn, (const char *s, size_t n), (s, n)) \
	X(json_t *, json_true, (void), ()) \
	X(json_t *, json_vpack_ex, (json_error_t *e, size_t flags, const char *fmt, va_list ap), \
	  (e, flags, fmt, ap)) \
	X(int, json_vunpack_ex, \
	  (json_t *root, json_error_t *e, size_t flags, const char *fmt, va_list ap), \
	  (root, e, flags, fmt, ap))

enum { JANSSON_FUNCS(LAZYLIB_INDEX, LAZYLIB_INDEX_V) LAZY_COUNT };
static const char *const names[] = {JANSSON_FUNCS(LAZYLIB_NAME, LAZYLIB_NAME_V)};
static void *fns[LAZY_COUNT];
static lazylib jansson = {LAZY_SONAME_JANSSON, names, fns, LAZY_COUNT, false};

#define FORWARD(ret, name, params, args) LAZYLIB_FORWARD(jansson, ret, name, params, args)
#define FORWARD_V(name, params, args) LAZYLIB_FORWARD_V(jansson, name, params, args)
JANSSON_FUNCS(FORWARD, FORWARD_V)

/* The variadic two, as jansson defines them: their va_list forms with no error record. */
json_t *json_pack(const char *fmt, ...)
{
	json_t *v;
	va_list ap;

	va_start(ap, fmt);
	v = json_vpack_ex(NULL, 0, fmt, ap);
	va_end(ap);
	return v;
}

int json_unpack(json_t *root, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = json_vunpack_ex(root, NULL, 0, fmt, ap);
	va_end(ap);
	return rc;
}
