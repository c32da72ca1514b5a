/*
 * jfr.c: parser for Java Flight Recorder recordings (see jfr.h).
 *
 * The format, as the JDK's jdk.jfr.internal.consumer reads it and
 * async-profiler writes it. A file is one or more chunks back to back;
 * each starts with a 68-byte big-endian header:
 *
 *   "FLR\0", major u16, minor u16, chunk size, constant-pool offset,
 *   metadata offset, start (ns since the epoch), duration (ns), start
 *   ticks, ticks per second (i64 each), features u32
 *
 * followed by events: a size, a type id, then the type's fields. Bit 0 of
 * the features says the integers (size, ids, short, int, long, char) are
 * LEB128 (seven bits a byte, low first, the ninth byte whole), which the
 * JDK and async-profiler always set; without it they are big-endian of
 * their width. Offsets are relative to the chunk.
 *
 *   - The metadata event (type 0) holds a table of strings and a tree of
 *     elements (name, attributes, children) naming each string by index:
 *     root > metadata > class (name, id) > field (name, class = the
 *     field's type id, constantPool = "true", dimension = "1" for an
 *     array). Primitive types are classes named "int", "long" and so on.
 *   - Constant-pool events (type 1) are chained: the header points at the
 *     last one and each one's delta leads to the one before (0 ends it).
 *     Each holds pools: a type id, a count, then (key, value) pairs.
 *   - A field that is a constant-pool reference holds the key only. An
 *     array is a count, then its elements. A struct is its fields in
 *     order; byte and boolean are one byte, float and double four and
 *     eight raw bytes. A string is an encoding byte: 0 null, 1 empty,
 *     2 a key into the java.lang.String pool, 3 UTF-8, 4 chars (each an
 *     integer), 5 Latin-1; the last three are a length, then the data.
 *
 * Nothing is hard-coded but the names of the events, types and fields
 * used: every value is read or skipped by what the chunk's metadata says,
 * so the JDK's recordings and async-profiler's (whose type ids and field
 * lists differ) are read by the same code.
 *
 * What becomes of it:
 *   - Each jdk.ExecutionSample is one sample of value 1 in samples/count
 *     on its stackTrace; each jdk.ObjectAllocationSample (JDK 16+) one of
 *     its weight, the bytes the sampler says it stands for, in
 *     alloc_space/bytes. A column is there when the recording has its
 *     events (samples also when it has neither, so an empty recording is
 *     an empty CPU profile), and samples is the default, so a recording of
 *     both is a cpu capture and `--type alloc` picks its allocations.
 *   - jdk.NativeMethodSample is not read: the JDK takes it from threads
 *     in native code whether or not they run (a thread blocked in a socket
 *     read or epoll is sampled as often as one that computes), so it would
 *     mix waiting into CPU time. Nor are wall-clock, lock, I/O or
 *     async-profiler's own event types, nor the JDK's TLAB allocation
 *     events, whose sizes are not scaled to stand for what was not sampled.
 *   - A stack trace is its frames array, the leaf first; each frame's
 *     method is "Class.method" from the Class's name and the Method's
 *     name, the class in the JVM's internal form with '/' as
 *     async-profiler's collapsed output and perf maps print it
 *     ("java/util/HashMap.get"). A hidden class, which the JDK writes
 *     "acme.Gen+0x<address>/<identity hash>", is written
 *     "acme/Gen/0x<address>", the address in Class.getName()'s form,
 *     so that symname.h drops it as it does in a perf map. A frame
 *     whose class name is empty (async-profiler's native and kernel
 *     frames) is its method name alone. The file is left empty: a
 *     recording names no source files. A truncated stack trace is used
 *     as it is.
 *   - A stack trace key 0 that is not in its pool is a sample without a
 *     stack (the JDK writes 0 for "none"); any other key, or a method,
 *     class or symbol, missing from its pool is an error: the JDK and
 *     async-profiler write every constant they refer to into the chunk,
 *     so a missing one is a corrupt file, and naming it "[unknown]" would
 *     move its samples to a function that did not run.
 *   - time_ns is the first chunk's start; duration_ns runs from there to
 *     the latest end of a chunk.
 *   - The period is jdk.ExecutionSample's "period" setting (jdk.ActiveSetting,
 *     "20 ms" by default, "10 ms" under settings=profile), as CPU
 *     nanoseconds: each sample stands for one period of a running
 *     thread. Unknown (0) when the settings say none or two different ones.
 *
 * Hostile input: every size, count, offset and integer is checked against
 * what is left of its event, pool or chunk before it is used; a count can
 * never allocate more than the bytes after it could hold. The
 * constant-pool chain is refused once the events it visited add up to
 * more than the chunk, which a loop does. Struct types nest at most
 * MAX_NEST levels (a type may contain itself), metadata elements
 * MAX_ELEMENT_DEPTH, and all the value walking of a parse is bounded by
 * WORK_PER_BYTE steps per input byte, so a tree of empty structs cannot
 * take exponential time. What the parser keeps (metadata, the pool index,
 * decoded stack traces) is charged to the parse's memory budget.
 */
#define _POSIX_C_SOURCE 200809L
#include "pipeline/jfr.h"
#include "common/buf.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEADER_SIZE 68
#define NONE UINT32_MAX
#define MAX_NEST 32
#define MAX_ELEMENT_DEPTH 32
#define WORK_PER_BYTE 16u
#define WORK_SLACK (1u << 20)
/*
 * Any number of methods may name one long class or method name, which a
 * recording holds once but each method's name copies again: the names
 * built may add up to 64 MiB, and past that to 8 bytes per input byte
 * (as pprof.c bounds its frames' names).
 */
#define NAME_BYTES_PER_INPUT_BYTE 8u
#define NAME_BYTES_SLACK (64u << 20)

enum kind { K_STRUCT, K_BOOL, K_BYTE, K_SHORT, K_INT, K_LONG, K_FLOAT, K_DOUBLE, K_CHAR,
	    K_STRING };

/* The fields the parser looks for, by name, in whatever type has them. */
enum role { R_NONE, R_STACKTRACE, R_FRAMES, R_METHOD, R_TYPE, R_NAME, R_STRING, R_WEIGHT,
	    R_ID, R_VALUE, R_COUNT };

static const char *const role_names[R_COUNT] = {
	[R_STACKTRACE] = "stackTrace", [R_FRAMES] = "frames", [R_METHOD] = "method",
	[R_TYPE] = "type", [R_NAME] = "name", [R_STRING] = "string", [R_WEIGHT] = "weight",
	[R_ID] = "id", [R_VALUE] = "value",
};

typedef struct jf_field {
	uint64_t type_id;
	uint32_t type;  /* index into types, once resolved */
	uint8_t role;
	bool cp, array;
} jf_field;

typedef struct jf_type {
	uint64_t id;
	uint32_t name;  /* offset into strs */
	uint32_t field0, nfields;
	uint8_t kind;
} jf_type;

/* One constant: where its value is, and what it was resolved to. */
typedef struct jf_id {
	uint64_t id;
	uint32_t type;
} jf_id;

typedef struct jf_entry {
	uint64_t type_id, key;
	size_t pos, end; /* the value, and the end of its constant-pool event */
	uint32_t cache;  /* Method: function id; StackTrace: index into stacks */
} jf_entry;

typedef struct jf_stack {
	size_t off;
	uint32_t len;
} jf_stack;

/* Where a value is: its type, and its bytes from pos up to end at most. */
typedef struct jf_val {
	uint32_t type;
	size_t pos, end;
	jf_entry *entry; /* the constant it is, NULL when written in place */
} jf_val;

typedef struct jf_parser {
	profile *p;
	const char *name;
	const uint8_t *data;
	size_t len;
	pr_error *err;

	/* The chunk being read. */
	size_t chunk, chunk_end;
	bool compressed;
	bool pools_read;

	/* Its metadata: decoded strings (NUL-terminated), types, fields. */
	buf strs;
	uint32_t *str_off;
	size_t nstrs;
	jf_type *types;
	size_t ntypes, types_cap;
	jf_id *by_id;     /* the types sorted by id */
	jf_field *fields;
	size_t nfields, fields_cap;
	uint32_t t_exec, t_alloc, t_string, t_setting;

	/* Its constant pools, and the stack traces decoded from them. */
	jf_entry *entries;
	size_t nentries, entries_cap;
	uint32_t *sframes;
	size_t nsframes, sframes_cap;
	jf_stack *stacks;
	size_t nstacks, stacks_cap;
	uint64_t charged;  /* bytes of this chunk's tables taken from the budget */

	buf name_buf;       /* the function being named */
	uint64_t str_max;   /* the longest string read: a name's limit, or none */
	uint64_t work, work_max;
	uint64_t names_left; /* bytes of names that may still be built */

	/* The whole file. */
	uint64_t nexec, nalloc;
	bool exec_enabled;  /* a jdk.ActiveSetting says CPU sampling was on */
	int64_t exec_period; /* the CPU sampling period its settings say, ns; 0 unknown */
	bool period_mixed;   /* settings said two periods: none is the recording's */
	int col_samples, col_alloc;
	size_t ncols;
	int64_t first_start;
	buf spans;          /* each chunk's start and end (int64_t pairs, ns) */
} jf_parser;

/* The error `code` with "cannot parse 'NAME': " and the message. */
static int vfail(jf_parser *ps, int code, const char *fmt, va_list ap)
{
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	return pr_error_set(ps->err, code, "cannot parse '%s': %s", ps->name, msg);
}

/* Bad input. */
static int bad(jf_parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int bad(jf_parser *ps, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfail(ps, PR_EDATA, fmt, ap);
	va_end(ap);
	return rc;
}

/* Input past a limit. */
static int limit(jf_parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int limit(jf_parser *ps, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfail(ps, PR_ELIMIT, fmt, ap);
	va_end(ap);
	return rc;
}

static int nomem(jf_parser *ps)
{
	return pr_error_set(ps->err, PR_ENOMEM, "cannot parse '%s': out of memory", ps->name);
}

static const char *str_at(const jf_parser *ps, uint32_t off)
{
	return ps->strs.ptr + off;
}

/*
 * Type t's name for a message, quoted into out: the name is the file's own
 * bytes, which may be control sequences or anything else.
 */
static const char *type_name(char out[40], const jf_parser *ps, uint32_t t)
{
	const char *s;

	if (t >= ps->ntypes)
		return "?";
	s = str_at(ps, ps->types[t].name);
	return profile_quote(out, s, strlen(s));
}

/* Charge `bytes` of this chunk's tables to the parse's budget. */
static int take(jf_parser *ps, uint64_t bytes)
{
	int rc = profile_mem_take(ps->p, bytes, ps->err);

	if (rc == 0)
		ps->charged += bytes;
	return rc;
}

/* Grow *arr (of `size`-byte items) to hold n + 1, charging what it adds. */
static int grow(jf_parser *ps, void **arr, size_t *cap, size_t n, size_t size)
{
	size_t ncap;
	void *q;
	int rc;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 64;
	if (ncap > SIZE_MAX / size)
		return nomem(ps);
	if ((rc = take(ps, (uint64_t)(ncap - *cap) * size)) < 0)
		return rc;
	if (!(q = realloc(*arr, ncap * size)))
		return nomem(ps);
	*arr = q;
	*cap = ncap;
	return 0;
}

/* One step of value walking; refused once the parse has taken too many. */
static int step(jf_parser *ps)
{
	if (++ps->work > ps->work_max)
		return limit(ps, "the recording's types nest too much work into its %zu bytes",
			     ps->len);
	return 0;
}

/* ---- integers ---------------------------------------------------------- */

static int past(jf_parser *ps, size_t pos)
{
	return bad(ps, "a value at offset %zu runs past the end of its event", pos);
}

static int rd_u8(jf_parser *ps, size_t *pos, size_t end, uint8_t *out)
{
	if (*pos >= end)
		return past(ps, *pos);
	*out = ps->data[(*pos)++];
	return 0;
}

static int rd_raw(jf_parser *ps, size_t *pos, size_t end, unsigned width, uint64_t *out)
{
	uint64_t v = 0;

	if (*pos > end || end - *pos < width)
		return past(ps, *pos);
	for (unsigned i = 0; i < width; i++)
		v = v << 8 | ps->data[*pos + i];
	*pos += width;
	*out = v;
	return 0;
}

/* An integer of `width` bytes: LEB128 in a compressed chunk, else raw. */
static int rd_int(jf_parser *ps, size_t *pos, size_t end, unsigned width, uint64_t *out)
{
	uint64_t v = 0;
	size_t at = *pos;

	if (!ps->compressed)
		return rd_raw(ps, pos, end, width, out);
	for (unsigned i = 0; i < 9; i++) {
		uint8_t b;

		if (at >= end)
			return past(ps, *pos);
		b = ps->data[at++];
		if (i == 8) {
			v |= (uint64_t)b << 56;
			break;
		}
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80))
			break;
	}
	*pos = at;
	*out = v;
	return 0;
}

static int rd_long(jf_parser *ps, size_t *pos, size_t end, uint64_t *out)
{
	return rd_int(ps, pos, end, 8, out);
}

/* A count of things that take at least one byte each: at most what is left. */
static int rd_count(jf_parser *ps, size_t *pos, size_t end, const char *what, uint64_t *out)
{
	size_t at = *pos;
	int rc;

	if ((rc = rd_int(ps, pos, end, 4, out)) < 0)
		return rc;
	if (*out > end - *pos)
		return bad(ps, "%s count %llu at offset %zu is more than the %zu bytes after it "
			   "could hold", what, (unsigned long long)*out, at, end - *pos);
	return 0;
}

/* ---- strings ----------------------------------------------------------- */

static int put_utf8(buf *out, uint32_t c)
{
	char b[4];
	size_t n;

	if (c < 0x80) {
		b[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		b[0] = (char)(0xc0 | c >> 6);
		b[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		b[0] = (char)(0xe0 | c >> 12);
		b[1] = (char)(0x80 | (c >> 6 & 0x3f));
		b[2] = (char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		b[0] = (char)(0xf0 | c >> 18);
		b[1] = (char)(0x80 | (c >> 12 & 0x3f));
		b[2] = (char)(0x80 | (c >> 6 & 0x3f));
		b[3] = (char)(0x80 | (c & 0x3f));
		n = 4;
	}
	return buf_put(out, b, n);
}

static jf_entry *lookup(jf_parser *ps, uint64_t type_id, uint64_t key);

/* UTF-16 code units, each an integer, as UTF-8 (a lone surrogate is U+FFFD). */
static int read_chars(jf_parser *ps, size_t *pos, size_t end, uint64_t n, buf *out)
{
	uint32_t high = 0;
	int rc;

	for (uint64_t i = 0; i < n; i++) {
		uint64_t u;

		if ((rc = rd_int(ps, pos, end, 2, &u)) < 0)
			return rc;
		if (!out)
			continue;
		u &= 0xffff;
		bool low = u >= 0xdc00 && u <= 0xdfff;

		if (high && low) {
			rc = put_utf8(out, 0x10000 + ((high - 0xd800) << 10) +
					   ((uint32_t)u - 0xdc00));
			high = 0;
		} else {
			if (high)
				rc = put_utf8(out, 0xfffd);
			high = 0;
			if (rc == 0 && u >= 0xd800 && u <= 0xdbff)
				high = (uint32_t)u;
			else if (rc == 0)
				rc = put_utf8(out, low ? 0xfffd : (uint32_t)u);
		}
		if (rc < 0)
			return nomem(ps);
	}
	if (out && high && put_utf8(out, 0xfffd) < 0)
		return nomem(ps);
	return 0;
}

/*
 * Read (out: append as UTF-8; NULL: skip) the string at *pos. A constant
 * pool reference is followed once (`follow`): a pooled string is never a
 * reference itself.
 */
static int read_string(jf_parser *ps, size_t *pos, size_t end, buf *out, bool follow)
{
	size_t at = *pos, start = out ? out->len : 0;
	uint64_t n, key;
	uint8_t enc = 0;
	jf_entry *e;
	int rc;

	if ((rc = rd_u8(ps, pos, end, &enc)) < 0)
		return rc;
	switch (enc) {
	case 0: /* null */
	case 1: /* empty */
		return 0;
	case 2:
		if ((rc = rd_long(ps, pos, end, &key)) < 0 || !out)
			return rc;
		if (!follow || !ps->pools_read || ps->t_string == NONE)
			return bad(ps, "string at offset %zu refers to a constant pool where none "
				   "can be", at);
		if (!(e = lookup(ps, ps->types[ps->t_string].id, key)))
			return bad(ps, "string constant %llu at offset %zu is missing from its "
				   "pool", (unsigned long long)key, at);
		at = e->pos;
		return read_string(ps, &at, e->end, out, false);
	case 3:
	case 5:
		if ((rc = rd_count(ps, pos, end, "string byte", &n)) < 0)
			return rc;
		if (out && n > ps->str_max)
			return limit(ps, "a string of %llu bytes at offset %zu exceeds the length "
				     "limit of %llu", (unsigned long long)n, at,
				     (unsigned long long)ps->str_max);
		if (out && enc == 3 && buf_put(out, ps->data + *pos, (size_t)n) < 0)
			return nomem(ps);
		for (uint64_t i = 0; out && enc == 5 && i < n; i++)
			if (put_utf8(out, ps->data[*pos + i]) < 0)
				return nomem(ps);
		*pos += (size_t)n;
		return 0;
	case 4:
		if ((rc = rd_count(ps, pos, end, "string char", &n)) < 0)
			return rc;
		if (out && n > ps->str_max)
			return limit(ps, "a string of %llu chars at offset %zu exceeds the length "
				     "limit of %llu", (unsigned long long)n, at,
				     (unsigned long long)ps->str_max);
		if ((rc = read_chars(ps, pos, end, n, out)) < 0)
			return rc;
		if (out && out->len - start > ps->str_max)
			return limit(ps, "a string at offset %zu exceeds the length limit of %llu",
				     at, (unsigned long long)ps->str_max);
		return 0;
	default:
		return bad(ps, "string at offset %zu has an unknown encoding %u", at, enc);
	}
}

/* ---- values, walked by the metadata ------------------------------------ */

static int skip_value(jf_parser *ps, uint32_t t, size_t *pos, size_t end, unsigned depth);

static int skip_one(jf_parser *ps, const jf_field *f, size_t *pos, size_t end, unsigned depth)
{
	uint64_t key;

	if (f->cp)
		return rd_long(ps, pos, end, &key);
	return skip_value(ps, f->type, pos, end, depth + 1);
}

static int skip_field(jf_parser *ps, const jf_field *f, size_t *pos, size_t end,
		      unsigned depth)
{
	uint64_t n;
	int rc;

	if (!f->array)
		return skip_one(ps, f, pos, end, depth);
	if ((rc = rd_count(ps, pos, end, "array", &n)) < 0)
		return rc;
	for (uint64_t i = 0; i < n; i++)
		if ((rc = skip_one(ps, f, pos, end, depth)) < 0)
			return rc;
	return 0;
}

static int skip_value(jf_parser *ps, uint32_t t, size_t *pos, size_t end, unsigned depth)
{
	const jf_type *ty = &ps->types[t];
	uint64_t v;
	uint8_t b;
	int rc;

	if (depth > MAX_NEST) {
		char q[40];

		return bad(ps, "type '%s' nests more than %d levels deep", type_name(q, ps, t),
			   MAX_NEST);
	}
	if ((rc = step(ps)) < 0)
		return rc;
	switch (ty->kind) {
	case K_BOOL:
	case K_BYTE:
		return rd_u8(ps, pos, end, &b);
	case K_SHORT:
	case K_CHAR:
		return rd_int(ps, pos, end, 2, &v);
	case K_INT:
		return rd_int(ps, pos, end, 4, &v);
	case K_LONG:
		return rd_int(ps, pos, end, 8, &v);
	case K_FLOAT:
		return rd_raw(ps, pos, end, 4, &v);
	case K_DOUBLE:
		return rd_raw(ps, pos, end, 8, &v);
	case K_STRING:
		return read_string(ps, pos, end, NULL, false);
	default:
		for (uint32_t i = 0; i < ty->nfields; i++) {
			if ((rc = step(ps)) < 0 ||
			    (rc = skip_field(ps, &ps->fields[ty->field0 + i], pos, end, depth)) < 0)
				return rc;
		}
		return 0;
	}
}

/*
 * Walk the struct of type t at *pos to its end, noting where the fields of
 * the roles asked for (want[r] true) begin: at[r] is their position, and
 * field[r] the field, or NULL when the type has none.
 */
static int walk(jf_parser *ps, uint32_t t, size_t *pos, size_t end, const bool want[R_COUNT],
		size_t at[R_COUNT], const jf_field *field[R_COUNT])
{
	const jf_type *ty = &ps->types[t];
	char q[40];
	int rc;

	for (int r = 0; r < R_COUNT; r++)
		field[r] = NULL;
	if (ty->kind != K_STRUCT)
		return bad(ps, "type '%s' is used as a struct", type_name(q, ps, t));
	for (uint32_t i = 0; i < ty->nfields; i++) {
		const jf_field *f = &ps->fields[ty->field0 + i];

		if (want[f->role] && !field[f->role]) {
			field[f->role] = f;
			at[f->role] = *pos;
		}
		if ((rc = step(ps)) < 0 || (rc = skip_field(ps, f, pos, end, 0)) < 0)
			return rc;
	}
	return 0;
}

static int need(jf_parser *ps, uint32_t t, const jf_field *f, int role)
{
	char q[40];

	if (!f)
		return bad(ps, "type '%s' has no field '%s'", type_name(q, ps, t),
			   role_names[role]);
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const jf_entry *x = a, *y = b;

	if (x->type_id != y->type_id)
		return x->type_id < y->type_id ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static jf_entry *lookup(jf_parser *ps, uint64_t type_id, uint64_t key)
{
	jf_entry k = {.type_id = type_id, .key = key};

	if (!ps->nentries)
		return NULL;
	return bsearch(&k, ps->entries, ps->nentries, sizeof(k), entry_cmp);
}

/*
 * The value of one element of field f at *pos (advanced past it): in
 * place, or the constant its key names. Returns 1 for key 0 missing from
 * the pool (null), 0 with *v set, or an error.
 */
static int deref(jf_parser *ps, const jf_field *f, size_t *pos, size_t end, jf_val *v)
{
	size_t at = *pos;
	uint64_t key;
	char q[40];
	int rc;

	v->type = f->type;
	v->entry = NULL;
	if (!f->cp) {
		v->pos = *pos;
		v->end = end;
		return skip_value(ps, f->type, pos, end, 1);
	}
	if ((rc = rd_long(ps, pos, end, &key)) < 0)
		return rc;
	if (!(v->entry = lookup(ps, ps->types[f->type].id, key))) {
		if (key == 0)
			return 1;
		return bad(ps, "constant %llu of type '%s' at offset %zu is missing from its pool",
			   (unsigned long long)key, type_name(q, ps, f->type), at);
	}
	v->pos = v->entry->pos;
	v->end = v->entry->end;
	return 0;
}

/* Append the string a value stands for: a string, or a Symbol's "string". */
static int string_of(jf_parser *ps, const jf_field *f, size_t pos, size_t end, buf *out,
		     unsigned depth)
{
	bool want[R_COUNT] = {[R_STRING] = true};
	size_t at[R_COUNT];
	const jf_field *field[R_COUNT];
	jf_val v;
	int rc;

	if (f->array) {
		char q[40];

		return bad(ps, "field of type '%s' at offset %zu is an array, not a string",
			   type_name(q, ps, f->type), pos);
	}
	if (ps->types[f->type].kind == K_STRING && !f->cp)
		return read_string(ps, &pos, end, out, true);
	if (depth > 4)
		return bad(ps, "string at offset %zu is nested too deep", pos);
	if ((rc = deref(ps, f, &pos, end, &v)) != 0)
		return rc > 0 ? 0 : rc;
	if (ps->types[v.type].kind == K_STRING)
		return read_string(ps, &v.pos, v.end, out, true);
	if ((rc = walk(ps, v.type, &v.pos, v.end, want, at, field)) < 0 ||
	    (rc = need(ps, v.type, field[R_STRING], R_STRING)) < 0)
		return rc;
	return string_of(ps, field[R_STRING], at[R_STRING], v.end, out, depth + 1);
}

/*
 * The JDK names a hidden class "acme.Gen+0x00007f5e14007400/191037037" in
 * a recording: unlike every other class, in the external form with '.',
 * then its address after '+' and, after a '/', its identity hash, which
 * is new in every JVM. Write it as perf maps and every other class of the
 * recording are written, "acme/Gen/0x00007f5e14007400": the package with
 * '/', the address as Class.getName() puts it, which symname.h knows how
 * to drop, and no hash. Returns the new length of s[0..n).
 */
static size_t hidden_class_name(char *s, size_t n)
{
	size_t i = 0, j;

	while (i + 3 < n && !(s[i] == '+' && s[i + 1] == '0' && s[i + 2] == 'x'))
		i++;
	if (i + 3 >= n)
		return n;
	for (j = 0; j < i; j++)
		if (s[j] == '.')
			s[j] = '/';
	s[i] = '/';
	for (j = i + 3; j < n && isxdigit((unsigned char)s[j]); j++)
		;
	if (j + 1 < n && s[j] == '/') {
		size_t k = j + 1;

		while (k < n && isdigit((unsigned char)s[k]))
			k++;
		if (k == n)
			n = j;
	}
	return n;
}

/* The function of the Method value v, interned; cached on its constant. */
static int method_func(jf_parser *ps, const jf_val *v, uint32_t *out)
{
	bool want[R_COUNT] = {[R_TYPE] = true, [R_NAME] = true};
	size_t at[R_COUNT], cat[R_COUNT], pos = v->pos;
	const jf_field *field[R_COUNT], *cfield[R_COUNT];
	jf_val cls;
	int rc;

	if (v->entry && v->entry->cache != NONE) {
		*out = v->entry->cache;
		return 0;
	}
	buf_reset(&ps->name_buf);
	if ((rc = walk(ps, v->type, &pos, v->end, want, at, field)) < 0 ||
	    (rc = need(ps, v->type, field[R_TYPE], R_TYPE)) < 0 ||
	    (rc = need(ps, v->type, field[R_NAME], R_NAME)) < 0)
		return rc;
	pos = at[R_TYPE];
	if ((rc = deref(ps, field[R_TYPE], &pos, v->end, &cls)) < 0)
		return rc;
	if (rc == 0) {
		bool cwant[R_COUNT] = {[R_NAME] = true};

		pos = cls.pos;
		if ((rc = walk(ps, cls.type, &pos, cls.end, cwant, cat, cfield)) < 0 ||
		    (rc = need(ps, cls.type, cfield[R_NAME], R_NAME)) < 0 ||
		    (rc = string_of(ps, cfield[R_NAME], cat[R_NAME], cls.end, &ps->name_buf,
				    0)) < 0)
			return rc;
	}
	if (ps->name_buf.len) {
		ps->name_buf.len = hidden_class_name(ps->name_buf.ptr, ps->name_buf.len);
		ps->name_buf.ptr[ps->name_buf.len] = '\0';
	}
	if (ps->name_buf.len && buf_putc(&ps->name_buf, '.') < 0)
		return nomem(ps);
	if ((rc = string_of(ps, field[R_NAME], at[R_NAME], v->end, &ps->name_buf, 0)) < 0)
		return rc;
	if (ps->name_buf.len > ps->names_left)
		return limit(ps, "the names of its methods add up to more than %u bytes per "
			     "input byte", NAME_BYTES_PER_INPUT_BYTE);
	ps->names_left -= ps->name_buf.len;
	if ((rc = profile_intern(ps->p, out, ps->name_buf.ptr, ps->name_buf.len, NULL, 0,
				 ps->err)) < 0)
		return rc;
	if (v->entry)
		v->entry->cache = *out;
	return 0;
}

/* One frame (a StackFrame value) of a stack trace: its method's function. */
static int frame_func(jf_parser *ps, const jf_field *f, size_t *pos, size_t end, uint32_t *out)
{
	bool want[R_COUNT] = {[R_METHOD] = true};
	size_t at[R_COUNT], fpos;
	const jf_field *field[R_COUNT];
	jf_val fr, m;
	char q[40];
	int rc;

	if ((rc = deref(ps, f, pos, end, &fr)) != 0)
		return rc < 0 ? rc : bad(ps, "stack frame at offset %zu is null", *pos);
	fpos = fr.pos;
	if ((rc = walk(ps, fr.type, &fpos, fr.end, want, at, field)) < 0 ||
	    (rc = need(ps, fr.type, field[R_METHOD], R_METHOD)) < 0)
		return rc;
	if (field[R_METHOD]->array)
		return bad(ps, "field 'method' of type '%s' is an array",
			   type_name(q, ps, fr.type));
	fpos = at[R_METHOD];
	if ((rc = deref(ps, field[R_METHOD], &fpos, fr.end, &m)) != 0)
		return rc < 0 ? rc : bad(ps, "stack frame at offset %zu has no method", fr.pos);
	return method_func(ps, &m, out);
}

/* Decode a StackTrace value into stacks[*out]: its functions, leaf first. */
static int decode_stack(jf_parser *ps, const jf_val *v, uint32_t *out)
{
	bool want[R_COUNT] = {[R_FRAMES] = true};
	size_t at[R_COUNT], pos = v->pos, off = ps->nsframes;
	const jf_field *field[R_COUNT];
	uint64_t n;
	char q[40];
	int rc;

	if ((rc = walk(ps, v->type, &pos, v->end, want, at, field)) < 0 ||
	    (rc = need(ps, v->type, field[R_FRAMES], R_FRAMES)) < 0)
		return rc;
	if (!field[R_FRAMES]->array)
		return bad(ps, "field 'frames' of type '%s' is not an array",
			   type_name(q, ps, v->type));
	pos = at[R_FRAMES];
	if ((rc = rd_count(ps, &pos, v->end, "frame", &n)) < 0)
		return rc;
	if (n > ps->p->limits.max_depth)
		return limit(ps, "a stack trace of %llu frames at offset %zu exceeds the depth "
			     "limit of %u", (unsigned long long)n, v->pos, ps->p->limits.max_depth);
	for (uint64_t i = 0; i < n; i++) {
		uint32_t fn;

		if ((rc = frame_func(ps, field[R_FRAMES], &pos, v->end, &fn)) < 0 ||
		    (rc = grow(ps, (void **)&ps->sframes, &ps->sframes_cap, ps->nsframes,
			       sizeof(*ps->sframes))) < 0)
			return rc;
		ps->sframes[ps->nsframes++] = fn;
	}
	if ((rc = grow(ps, (void **)&ps->stacks, &ps->stacks_cap, ps->nstacks,
		       sizeof(*ps->stacks))) < 0)
		return rc;
	ps->stacks[ps->nstacks].off = off;
	ps->stacks[ps->nstacks].len = (uint32_t)n;
	*out = (uint32_t)ps->nstacks++;
	return 0;
}

/* ---- metadata ---------------------------------------------------------- */

static uint32_t type_by_id(const jf_parser *ps, uint64_t id)
{
	size_t lo = 0, hi = ps->ntypes;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t m = ps->by_id[mid].id;

		if (m == id)
			return ps->by_id[mid].type;
		if (m < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NONE;
}

static int by_id_cmp(const void *a, const void *b)
{
	uint64_t x = ((const jf_id *)a)->id, y = ((const jf_id *)b)->id;

	return x < y ? -1 : x > y;
}

/* A decimal attribute (a type id, a dimension); false when it is not one. */
static bool decimal(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return true;
}

static uint8_t kind_of(const char *name)
{
	static const struct {
		const char *name;
		uint8_t kind;
	} prims[] = {
		{"boolean", K_BOOL}, {"byte", K_BYTE}, {"short", K_SHORT}, {"int", K_INT},
		{"long", K_LONG}, {"float", K_FLOAT}, {"double", K_DOUBLE}, {"char", K_CHAR},
		{"java.lang.String", K_STRING},
	};

	for (size_t i = 0; i < sizeof(prims) / sizeof(prims[0]); i++)
		if (strcmp(name, prims[i].name) == 0)
			return prims[i].kind;
	return K_STRUCT;
}

static uint8_t role_of(const char *name)
{
	for (int r = 1; r < R_COUNT; r++)
		if (strcmp(name, role_names[r]) == 0)
			return (uint8_t)r;
	return R_NONE;
}

enum elem { E_ROOT, E_METADATA, E_CLASS, E_FIELD, E_OTHER };

/* A string index of the metadata, read at *pos. */
static int rd_str(jf_parser *ps, size_t *pos, size_t end, const char **out)
{
	size_t at = *pos;
	uint64_t i;
	int rc;

	if ((rc = rd_int(ps, pos, end, 4, &i)) < 0)
		return rc;
	if (i >= ps->nstrs)
		return bad(ps, "metadata string index %llu at offset %zu is out of range (%zu "
			   "strings)", (unsigned long long)i, at, ps->nstrs);
	*out = str_at(ps, ps->str_off[i]);
	return 0;
}

/* A class or field element's attributes, into the type or field it makes. */
static int element_attr(jf_parser *ps, enum elem kind, const char *key, const char *val,
			size_t at)
{
	uint64_t v;
	char q[40];

	if (kind == E_CLASS) {
		jf_type *t = &ps->types[ps->ntypes - 1];

		if (strcmp(key, "id") == 0 && !decimal(val, &t->id))
			return bad(ps, "class id '%s' at offset %zu is not a number",
				   profile_quote(q, val, strlen(val)), at);
		if (strcmp(key, "name") == 0) {
			t->name = (uint32_t)(val - ps->strs.ptr);
			t->kind = kind_of(val);
		}
	} else if (kind == E_FIELD) {
		jf_field *f = &ps->fields[ps->nfields - 1];

		if (strcmp(key, "class") == 0 && !decimal(val, &f->type_id))
			return bad(ps, "field type '%s' at offset %zu is not a number",
				   profile_quote(q, val, strlen(val)), at);
		if (strcmp(key, "name") == 0)
			f->role = role_of(val);
		if (strcmp(key, "constantPool") == 0)
			f->cp = strcmp(val, "true") == 0;
		if (strcmp(key, "dimension") == 0) {
			if (!decimal(val, &v) || v > 1)
				return bad(ps, "field dimension '%s' at offset %zu is not 0 "
					   "or 1", profile_quote(q, val, strlen(val)), at);
			f->array = v == 1;
		}
	}
	return 0;
}

static int read_element(jf_parser *ps, size_t *pos, size_t end, enum elem parent,
			unsigned depth)
{
	size_t at = *pos;
	const char *name, *key, *val;
	uint64_t nattr, nkids;
	enum elem kind = E_OTHER;
	int rc;

	if (depth > MAX_ELEMENT_DEPTH)
		return bad(ps, "metadata elements nest more than %d levels deep at offset %zu",
			   MAX_ELEMENT_DEPTH, at);
	if ((rc = step(ps)) < 0 || (rc = rd_str(ps, pos, end, &name)) < 0)
		return rc;
	if (parent == E_ROOT && depth == 0)
		kind = E_ROOT;
	else if (parent == E_ROOT && strcmp(name, "metadata") == 0)
		kind = E_METADATA;
	else if (parent == E_METADATA && strcmp(name, "class") == 0)
		kind = E_CLASS;
	else if (parent == E_CLASS && strcmp(name, "field") == 0)
		kind = E_FIELD;
	if (kind == E_CLASS) {
		if ((rc = grow(ps, (void **)&ps->types, &ps->types_cap, ps->ntypes,
			       sizeof(*ps->types))) < 0)
			return rc;
		ps->types[ps->ntypes++] = (jf_type){.id = UINT64_MAX, .name = NONE,
						    .field0 = (uint32_t)ps->nfields};
	} else if (kind == E_FIELD) {
		if ((rc = grow(ps, (void **)&ps->fields, &ps->fields_cap, ps->nfields,
			       sizeof(*ps->fields))) < 0)
			return rc;
		ps->fields[ps->nfields++] = (jf_field){.type_id = UINT64_MAX, .type = NONE};
		ps->types[ps->ntypes - 1].nfields++;
	}
	if ((rc = rd_count(ps, pos, end, "attribute", &nattr)) < 0)
		return rc;
	for (uint64_t i = 0; i < nattr; i++) {
		size_t a = *pos;

		if ((rc = rd_str(ps, pos, end, &key)) < 0 ||
		    (rc = rd_str(ps, pos, end, &val)) < 0 ||
		    (rc = element_attr(ps, kind, key, val, a)) < 0)
			return rc;
	}
	if (kind == E_CLASS && (ps->types[ps->ntypes - 1].id == UINT64_MAX ||
				ps->types[ps->ntypes - 1].name == NONE))
		return bad(ps, "class element at offset %zu has no name or id", at);
	if (kind == E_FIELD && ps->fields[ps->nfields - 1].type_id == UINT64_MAX)
		return bad(ps, "field element at offset %zu has no class", at);
	if ((rc = rd_count(ps, pos, end, "element", &nkids)) < 0)
		return rc;
	for (uint64_t i = 0; i < nkids; i++)
		if ((rc = read_element(ps, pos, end, kind, depth + 1)) < 0)
			return rc;
	return 0;
}

/* After the metadata: types by id, each field's type, the types used. */
static int resolve_types(jf_parser *ps)
{
	int rc;

	if ((rc = take(ps, ps->ntypes * sizeof(jf_id))) < 0)
		return rc;
	if (!(ps->by_id = malloc((ps->ntypes ? ps->ntypes : 1) * sizeof(jf_id))))
		return nomem(ps);
	for (size_t i = 0; i < ps->ntypes; i++)
		ps->by_id[i] = (jf_id){ps->types[i].id, (uint32_t)i};
	qsort(ps->by_id, ps->ntypes, sizeof(jf_id), by_id_cmp);
	for (size_t i = 1; i < ps->ntypes; i++)
		if (ps->by_id[i].id == ps->by_id[i - 1].id)
			return bad(ps, "metadata defines type id %llu twice",
				   (unsigned long long)ps->by_id[i].id);
	for (size_t i = 0; i < ps->nfields; i++)
		if ((ps->fields[i].type = type_by_id(ps, ps->fields[i].type_id)) == NONE)
			return bad(ps, "a field's type id %llu is not in the metadata",
				   (unsigned long long)ps->fields[i].type_id);
	ps->t_exec = ps->t_alloc = ps->t_string = ps->t_setting = NONE;
	for (size_t i = 0; i < ps->ntypes; i++) {
		const char *n = str_at(ps, ps->types[i].name);

		if (strcmp(n, "jdk.ExecutionSample") == 0)
			ps->t_exec = (uint32_t)i;
		else if (strcmp(n, "jdk.ObjectAllocationSample") == 0)
			ps->t_alloc = (uint32_t)i;
		else if (strcmp(n, "java.lang.String") == 0)
			ps->t_string = (uint32_t)i;
		else if (strcmp(n, "jdk.ActiveSetting") == 0)
			ps->t_setting = (uint32_t)i;
	}
	return 0;
}

static int read_metadata(jf_parser *ps, size_t off)
{
	size_t pos = ps->chunk + off, end;
	uint64_t size, id, v, n;
	int rc;

	if ((rc = rd_int(ps, &pos, ps->chunk_end, 4, &size)) < 0)
		return rc;
	if (size > ps->chunk_end - (ps->chunk + off) || size < 2)
		return bad(ps, "metadata at offset %zu runs past the chunk", ps->chunk + off);
	end = ps->chunk + off + (size_t)size;
	if ((rc = rd_long(ps, &pos, end, &id)) < 0)
		return rc;
	if (id != 0)
		return bad(ps, "event at offset %zu is not the metadata (type %llu)",
			   ps->chunk + off, (unsigned long long)id);
	if ((rc = rd_long(ps, &pos, end, &v)) < 0 || (rc = rd_long(ps, &pos, end, &v)) < 0 ||
	    (rc = rd_long(ps, &pos, end, &v)) < 0 ||
	    (rc = rd_count(ps, &pos, end, "metadata string", &n)) < 0)
		return rc;
	if ((rc = take(ps, n * sizeof(uint32_t))) < 0)
		return rc;
	/* Type names and descriptions: bounded by the input and the budget. */
	ps->str_max = UINT64_MAX;
	if (!(ps->str_off = malloc((n ? n : 1) * sizeof(uint32_t))))
		return nomem(ps);
	for (uint64_t i = 0; i < n; i++) {
		size_t before = ps->strs.len;

		ps->str_off[i] = (uint32_t)ps->strs.len;
		if ((rc = read_string(ps, &pos, end, &ps->strs, false)) < 0)
			return rc;
		if (buf_putc(&ps->strs, '\0') < 0)
			return nomem(ps);
		if ((rc = take(ps, ps->strs.len - before)) < 0)
			return rc;
		if (ps->strs.len > UINT32_MAX / 2)
			return limit(ps, "the metadata's strings are too long");
	}
	ps->nstrs = (size_t)n;
	ps->str_max = ps->p->limits.max_string_len;
	if ((rc = read_element(ps, &pos, end, E_ROOT, 0)) < 0)
		return rc;
	return resolve_types(ps);
}

/* ---- constant pools ---------------------------------------------------- */

static int read_pool(jf_parser *ps, size_t *pos, size_t end)
{
	uint64_t type_id, n;
	size_t at = *pos;
	uint32_t t;
	int rc;

	if ((rc = rd_long(ps, pos, end, &type_id)) < 0)
		return rc;
	if ((t = type_by_id(ps, type_id)) == NONE)
		return bad(ps, "constant pool at offset %zu is of type id %llu, which the "
			   "metadata does not define", at, (unsigned long long)type_id);
	if ((rc = rd_count(ps, pos, end, "constant", &n)) < 0)
		return rc;
	for (uint64_t i = 0; i < n; i++) {
		jf_entry *e;

		if ((rc = grow(ps, (void **)&ps->entries, &ps->entries_cap, ps->nentries,
			       sizeof(*ps->entries))) < 0)
			return rc;
		e = &ps->entries[ps->nentries];
		e->type_id = type_id;
		e->cache = NONE;
		e->end = end;
		if ((rc = rd_long(ps, pos, end, &e->key)) < 0)
			return rc;
		e->pos = *pos;
		if ((rc = skip_value(ps, t, pos, end, 0)) < 0)
			return rc;
		ps->nentries++;
	}
	return 0;
}

/* Follow the chain of constant-pool events from the header's offset. */
static int read_pools(jf_parser *ps, size_t off)
{
	size_t cp = ps->chunk + off, chunk_size = ps->chunk_end - ps->chunk;
	uint64_t visited = 0;
	int rc;

	for (;;) {
		size_t pos = cp, end;
		uint64_t size, id, v, delta, npools;
		uint8_t flags;

		if (cp < ps->chunk + HEADER_SIZE || cp >= ps->chunk_end)
			return bad(ps, "constant pool offset %zu is outside its chunk", cp);
		if ((rc = rd_int(ps, &pos, ps->chunk_end, 4, &size)) < 0)
			return rc;
		if (size > ps->chunk_end - cp || size < 2)
			return bad(ps, "constant pool at offset %zu runs past the chunk", cp);
		if ((visited += size) > chunk_size)
			return bad(ps, "the constant pools chained from offset %zu loop",
				   ps->chunk + off);
		end = cp + (size_t)size;
		if ((rc = rd_long(ps, &pos, end, &id)) < 0)
			return rc;
		if (id != 1)
			return bad(ps, "event at offset %zu is not a constant pool (type %llu)", cp,
				   (unsigned long long)id);
		if ((rc = rd_long(ps, &pos, end, &v)) < 0 ||
		    (rc = rd_long(ps, &pos, end, &v)) < 0 ||
		    (rc = rd_long(ps, &pos, end, &delta)) < 0 ||
		    (rc = rd_u8(ps, &pos, end, &flags)) < 0 ||
		    (rc = rd_count(ps, &pos, end, "pool", &npools)) < 0)
			return rc;
		for (uint64_t i = 0; i < npools; i++)
			if ((rc = read_pool(ps, &pos, end)) < 0)
				return rc;
		if (delta == 0)
			break;
		/* Two's complement: the delta is usually negative, to the one before. */
		if ((int64_t)delta < -(int64_t)(cp - ps->chunk) ||
		    (int64_t)delta >= (int64_t)(ps->chunk_end - cp))
			return bad(ps, "constant pool at offset %zu points outside its chunk", cp);
		cp = (size_t)((int64_t)cp + (int64_t)delta);
	}
	if (ps->nentries) /* no pools: entries is still NULL */
		qsort(ps->entries, ps->nentries, sizeof(*ps->entries), entry_cmp);
	ps->pools_read = true;
	return 0;
}

/* ---- events ------------------------------------------------------------ */

static int add_event(jf_parser *ps, uint32_t t, size_t pos, size_t end)
{
	char q[40];
	bool want[R_COUNT] = {[R_STACKTRACE] = true, [R_WEIGHT] = true};
	size_t at[R_COUNT], spos;
	const jf_field *field[R_COUNT];
	int64_t values[2] = {0, 0};
	const uint32_t *frames = NULL;
	uint32_t depth = 0;
	jf_val st;
	int rc;

	if ((rc = walk(ps, t, &pos, end, want, at, field)) < 0 ||
	    (rc = need(ps, t, field[R_STACKTRACE], R_STACKTRACE)) < 0)
		return rc;
	if (t == ps->t_alloc) {
		uint64_t w;

		spos = at[R_WEIGHT];
		if ((rc = need(ps, t, field[R_WEIGHT], R_WEIGHT)) < 0)
			return rc;
		if (field[R_WEIGHT]->array || field[R_WEIGHT]->cp ||
		    ps->types[field[R_WEIGHT]->type].kind != K_LONG)
			return bad(ps, "field 'weight' of type '%s' is not a long",
				   type_name(q, ps, t));
		if ((rc = rd_long(ps, &spos, end, &w)) < 0)
			return rc;
		if (w > INT64_MAX)
			return bad(ps, "allocation weight at offset %zu is negative", at[R_WEIGHT]);
		values[ps->col_alloc] = (int64_t)w;
	} else {
		values[ps->col_samples] = 1;
	}
	if (field[R_STACKTRACE]->array)
		return bad(ps, "field 'stackTrace' of type '%s' is an array", type_name(q, ps, t));
	spos = at[R_STACKTRACE];
	if ((rc = deref(ps, field[R_STACKTRACE], &spos, end, &st)) < 0)
		return rc;
	if (rc == 0) {
		uint32_t s = 0;

		if (st.entry && st.entry->cache != NONE) {
			s = st.entry->cache;
		} else {
			if ((rc = decode_stack(ps, &st, &s)) < 0)
				return rc;
			if (st.entry)
				st.entry->cache = s;
		}
		frames = ps->sframes + ps->stacks[s].off;
		depth = ps->stacks[s].len;
	}
	return profile_add_sample_leaf_first(ps->p, frames, depth, values, ps->err);
}

/*
 * The string at pos, if written in place (UTF-8, Latin-1 or an array of
 * chars, as the JDK writes a setting) and shorter than `size` bytes,
 * into out; *ok false (and out "") for a string of another encoding (a
 * pooled one among them), a longer one, or a char beyond Latin-1.
 */
static int inline_string(jf_parser *ps, size_t pos, size_t end, char *out, size_t size, bool *ok)
{
	uint64_t n, c;
	uint8_t enc = 0;
	int rc;

	*ok = false;
	out[0] = '\0';
	if ((rc = rd_u8(ps, &pos, end, &enc)) < 0 || enc < 3 || enc > 5 ||
	    (rc = rd_int(ps, &pos, end, 4, &n)) < 0 || n >= size)
		return rc;
	if (enc != 4) {
		if (end - pos < n)
			return 0;
		memcpy(out, ps->data + pos, (size_t)n);
	} else {
		for (size_t k = 0; k < n; k++) {
			if ((rc = rd_int(ps, &pos, end, 2, &c)) < 0) {
				out[0] = '\0';
				return rc;
			}
			if (c == 0 || c > 0xff) {
				out[0] = '\0';
				return 0;
			}
			out[k] = (char)c;
		}
	}
	out[n] = '\0';
	*ok = memchr(out, '\0', (size_t)n) == NULL;
	return 0;
}

/*
 * A period as the JDK's settings write it ("20 ms", "10 ms", "1 s"), in
 * nanoseconds; 0 for anything else ("everyChunk", "0 ms", a bad number).
 */
static int64_t setting_period_ns(const char *text)
{
	static const struct {
		const char *unit;
		int64_t ns;
	} units[] = {
		{"ns", 1},          {"us", 1000},         {"ms", 1000000},      {"s", 1000000000},
		{"m", 60000000000}, {"h", 3600000000000}, {"d", 86400000000000}};
	char *rest;
	long long n;

	if (*text < '0' || *text > '9')
		return 0;
	errno = 0;
	n = strtoll(text, &rest, 10);
	if (errno || n <= 0)
		return 0;
	while (*rest == ' ')
		rest++;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(rest, units[i].unit) == 0)
			return n <= INT64_MAX / units[i].ns ? n * units[i].ns : 0;
	return 0;
}

/*
 * A jdk.ActiveSetting event of jdk.ExecutionSample: whether it says the
 * event was enabled, and the period it sampled at. The JDK writes one per
 * setting of every event type as a recording starts, with the type's id.
 * Each sample stands for one period of a running thread's CPU time: a
 * recording at 10 ms holds twice the samples of one at 20 ms of the same
 * code, which counted per second was a 2x regression of the service's
 * cost. Two different periods in one file (recordings that overlapped,
 * or settings changed while recording) leave the period unknown. What it
 * cannot read in place (a pooled string) says nothing.
 */
static int read_exec_setting(jf_parser *ps, size_t pos, size_t end)
{
	bool want[R_COUNT] = {[R_ID] = true, [R_NAME] = true, [R_VALUE] = true};
	size_t at[R_COUNT];
	const jf_field *field[R_COUNT];
	char name[16], value[32];
	bool name_ok, value_ok;
	uint64_t id;
	int64_t ns;
	int rc;

	if ((rc = walk(ps, ps->t_setting, &pos, end, want, at, field)) < 0)
		return rc;
	if (!field[R_ID] || !field[R_NAME] || !field[R_VALUE] || field[R_ID]->cp ||
	    field[R_ID]->array || ps->types[field[R_ID]->type].kind != K_LONG ||
	    field[R_NAME]->cp || field[R_VALUE]->cp)
		return 0;
	pos = at[R_ID];
	if ((rc = rd_long(ps, &pos, end, &id)) < 0 || id != ps->types[ps->t_exec].id ||
	    (rc = inline_string(ps, at[R_NAME], end, name, sizeof(name), &name_ok)) < 0 ||
	    !name_ok ||
	    (rc = inline_string(ps, at[R_VALUE], end, value, sizeof(value), &value_ok)) < 0 ||
	    !value_ok)
		return rc;
	if (strcmp(name, "enabled") == 0 && strcmp(value, "true") == 0) {
		ps->exec_enabled = true;
	} else if (strcmp(name, "period") == 0 && (ns = setting_period_ns(value)) > 0) {
		if (ps->exec_period && ps->exec_period != ns)
			ps->period_mixed = true;
		ps->exec_period = ns;
	}
	return 0;
}

/*
 * The events of the chunk: counted (`add` false), or added as samples.
 * Every event's size is checked either way.
 */
static int read_events(jf_parser *ps, bool add)
{
	size_t pos = ps->chunk + HEADER_SIZE;
	int rc;

	while (pos < ps->chunk_end) {
		size_t at = pos, end;
		uint64_t size, id;

		if ((rc = rd_int(ps, &pos, ps->chunk_end, 4, &size)) < 0)
			return rc;
		if (size > ps->chunk_end - at || size <= pos - at)
			return bad(ps, "event at offset %zu has a size of %llu bytes, which "
				   "does not fit its chunk", at, (unsigned long long)size);
		end = at + (size_t)size;
		if ((rc = rd_long(ps, &pos, end, &id)) < 0)
			return rc;
		if (ps->t_exec != NONE && id == ps->types[ps->t_exec].id) {
			if (!add)
				ps->nexec++;
			else if ((rc = add_event(ps, ps->t_exec, pos, end)) < 0)
				return rc;
		} else if (ps->t_alloc != NONE && id == ps->types[ps->t_alloc].id) {
			if (!add)
				ps->nalloc++;
			else if ((rc = add_event(ps, ps->t_alloc, pos, end)) < 0)
				return rc;
		} else if (!add && ps->t_exec != NONE && ps->t_setting != NONE &&
			   id == ps->types[ps->t_setting].id) {
			if ((rc = read_exec_setting(ps, pos, end)) < 0)
				return rc;
		}
		pos = end;
	}
	return 0;
}

/* ---- chunks ------------------------------------------------------------ */

static void chunk_release(jf_parser *ps)
{
	buf_release(&ps->strs);
	free(ps->str_off);
	free(ps->types);
	free(ps->by_id);
	free(ps->fields);
	free(ps->entries);
	free(ps->sframes);
	free(ps->stacks);
	ps->str_off = NULL;
	ps->types = NULL;
	ps->by_id = NULL;
	ps->fields = NULL;
	ps->entries = NULL;
	ps->sframes = NULL;
	ps->stacks = NULL;
	ps->nstrs = ps->ntypes = ps->types_cap = ps->nfields = ps->fields_cap = 0;
	ps->nentries = ps->entries_cap = ps->nsframes = ps->sframes_cap = 0;
	ps->nstacks = ps->stacks_cap = 0;
	ps->pools_read = false;
	profile_mem_give(ps->p, ps->charged);
	ps->charged = 0;
}

static uint64_t be64(const uint8_t *b)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | b[i];
	return v;
}

/* The chunk at `off`: its header, metadata, then (in pass 1) pools and samples. */
static int read_chunk(jf_parser *ps, size_t off, int pass, size_t *next)
{
	const uint8_t *h = ps->data + off;
	uint64_t size, cp, meta;
	unsigned major, minor;
	int64_t start, dur;
	int rc;

	if (ps->len - off < HEADER_SIZE)
		return bad(ps, "chunk header at offset %zu is cut short (%zu of %d bytes)", off,
			   ps->len - off, HEADER_SIZE);
	if (memcmp(h, "FLR\0", 4) != 0)
		return bad(ps, "bytes at offset %zu are not a JFR chunk (no \"FLR\" magic)", off);
	major = (unsigned)h[4] << 8 | h[5];
	minor = (unsigned)h[6] << 8 | h[7];
	if (major != 1 && major != 2)
		return bad(ps, "chunk at offset %zu is of version %u.%u; profreg reads 1.x and 2.x",
			   off, major, minor);
	size = be64(h + 8);
	cp = be64(h + 16);
	meta = be64(h + 24);
	if (size < HEADER_SIZE || size > ps->len - off)
		return bad(ps, "chunk at offset %zu says it is %llu bytes, but the file has %zu "
			   "from there", off, (unsigned long long)size, ps->len - off);
	if (meta < HEADER_SIZE || meta >= size || cp < HEADER_SIZE || cp >= size)
		return bad(ps, "chunk at offset %zu has its metadata or constant pools outside it",
			   off);
	ps->chunk = off;
	ps->chunk_end = off + (size_t)size;
	ps->compressed = (h[67] & 1) != 0;
	*next = ps->chunk_end;
	start = (int64_t)be64(h + 32);
	dur = (int64_t)be64(h + 40);
	if (pass == 1) {
		if (off == 0)
			ps->first_start = start;
		/* Summed only once known not to overflow: the header is the file's. */
		if (dur > 0 && start > 0 && start <= INT64_MAX - dur) {
			int64_t span[2] = {start, start + dur};
			if (buf_put(&ps->spans, span, sizeof(span)) < 0)
				return nomem(ps);
		}
	}
	if ((rc = read_metadata(ps, (size_t)meta)) < 0)
		goto out;
	if (pass == 0) {
		rc = read_events(ps, false);
		goto out;
	}
	if ((rc = read_pools(ps, (size_t)cp)) < 0)
		goto out;
	rc = read_events(ps, true);
out:
	chunk_release(ps);
	return rc;
}

static int read_chunks(jf_parser *ps, int pass)
{
	size_t off = 0, next;
	int rc;

	do {
		if ((rc = read_chunk(ps, off, pass, &next)) < 0)
			return rc;
		off = next;
	} while (off < ps->len);
	return 0;
}

/* The value columns, from what the first pass counted. */
static int set_columns(jf_parser *ps)
{
	const char *types[2], *units[2];
	size_t n = 0;

	/*
	 * A recording that sampled the CPU and caught no thread running (an
	 * idle service, a short window) is a CPU profile of nothing, not an
	 * allocation profile: typed by its allocations, it left the service's
	 * CPU series and `--type cpu` refused it.
	 */
	if (ps->nexec || ps->exec_enabled || !ps->nalloc) {
		ps->col_samples = (int)n;
		types[n] = "samples";
		units[n++] = "count";
	}
	if (ps->nalloc) {
		ps->col_alloc = (int)n;
		types[n] = "alloc_space";
		units[n++] = "bytes";
	}
	ps->ncols = n;
	ps->p->default_value = 0;
	profile_reserve(ps->p, ps->nexec + ps->nalloc, 0);
	return profile_set_value_types(ps->p, n, types, units, ps->err);
}

bool jfr_sniff(const uint8_t *data, size_t len)
{
	return len >= 4 && memcmp(data, "FLR\0", 4) == 0;
}

static int span_cmp(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;

	return (x[0] > y[0]) - (x[0] < y[0]);
}

/*
 * How long the chunks recorded, overlaps counted once: recordings joined
 * with `cat` have gaps between them, and their span (the first chunk's
 * start to the last one's end) made rates per second too low (30.5 s for
 * two recordings of 8 s in all).
 */
static int64_t recorded_ns(buf *spans)
{
	int64_t (*v)[2] = (void *)spans->ptr, total = 0, lo = 0, hi = 0;
	size_t n = spans->len / sizeof(*v);

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), span_cmp);
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || v[i][0] > hi) {
			total += hi - lo;
			lo = v[i][0];
			hi = v[i][1];
		} else if (v[i][1] > hi) {
			hi = v[i][1];
		}
	}
	return total + (hi - lo);
}

int jfr_parse(profile **out, const uint8_t *data, size_t len,
	      const char *name, const profile_limits *lim, pr_error *err)
{
	jf_parser ps;
	profile *p = NULL;
	int rc;

	*out = NULL;
	memset(&ps, 0, sizeof(ps));
	ps.strs = (buf)BUF_INIT;
	ps.name_buf = (buf)BUF_INIT;
	ps.spans = (buf)BUF_INIT;
	if ((rc = profile_new(&p, PROFILE_FMT_JFR, name, lim, err)) < 0)
		goto out;
	ps.p = p;
	ps.name = p->input_name;
	ps.data = data;
	ps.len = len;
	ps.err = err;
	ps.col_samples = ps.col_alloc = -1;
	ps.work_max = (uint64_t)len * WORK_PER_BYTE + WORK_SLACK;
	ps.names_left = (uint64_t)len * NAME_BYTES_PER_INPUT_BYTE + NAME_BYTES_SLACK;
	if (!jfr_sniff(data, len)) {
		rc = bad(&ps, "not a JFR recording (no \"FLR\" magic at offset 0)");
		goto out;
	}
	if ((rc = read_chunks(&ps, 0)) < 0 || (rc = set_columns(&ps)) < 0 ||
	    (rc = read_chunks(&ps, 1)) < 0)
		goto out;
	p->time_ns = ps.first_start > 0 ? ps.first_start : 0;
	p->duration_ns = recorded_ns(&ps.spans);
	/* Only a sampler that was on: another may have written the samples. */
	if (ps.col_samples >= 0 && ps.exec_enabled && ps.exec_period > 0 && !ps.period_mixed) {
		p->period = ps.exec_period;
		if (!(p->period_type.type = strdup("cpu")) ||
		    !(p->period_type.unit = strdup("nanoseconds"))) {
			rc = nomem(&ps);
			goto out;
		}
	}
	*out = p;
	p = NULL;
out:
	chunk_release(&ps);
	buf_release(&ps.name_buf);
	buf_release(&ps.spans);
	profile_free(p);
	return rc;
}
