/*
 * jsonscan.h: the streaming JSON reading that the JSON profile parsers
 * (v8.c, v8heap.c, speedscope.c) share.
 *
 * Each of those parsers reads its text in one pass with yajl and keeps
 * only what its profile needs. What they have in common lives here: the
 * yajl handle and its callback table, skipping values nothing reads
 * without decoding them, the nesting limit, the error rules and the
 * charged growing arrays. What a format means stays in its parser, which
 * gets four callbacks (jsonscan_ops) for what is read.
 *
 * The error rules (see v8.c's header comment for why): errors come in
 * the order a whole-document parser reports them. A profile error found
 * while reading is deferred (jsonscan_defer): the first is kept, the rest
 * of the text is only checked as JSON, and the kept error is reported
 * once the text has proved well-formed. JSON errors, and limits
 * (jsonscan_limit, then jsonscan_stop), stop the parse at once.
 *
 * Ownership: a jsonscan is embedded in its parser's state, which owns
 * it; jsonscan_release frees the yajl handle. The text is the caller's
 * and must outlive the scan. The profile `p` is created and freed by the
 * parser; the scan only charges memory to it. Errors follow libgit2:
 * functions that can fail return 0 or a negative PR_E* code with `err`
 * set, callbacks return yajl's 1 (go on) or 0 (stop, with `rc` set).
 */
#ifndef PR_JSONSCAN_H
#define PR_JSONSCAN_H

#include "common/buf.h"
#include "common/strmap.h"
#include "pipeline/profile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_parse.h>

/* yajl has no nesting limit (it keeps a byte per level); this is jansson's. */
#define JSONSCAN_MAX_DEPTH 2048

/* A scalar as yajl reported it. */
typedef enum jsonscan_kind {
	JSONSCAN_INT, JSONSCAN_REAL, JSONSCAN_STRING, JSONSCAN_NULL, JSONSCAN_BOOL,
} jsonscan_kind;

/*
 * What a parser reads, each called with its `owner`. They return 1 to go
 * on, or 0 to stop (after jsonscan_stop or a JSON error). open and close
 * are called only for containers that are read: not inside a skipped
 * value nor after a deferred error. key and scalar are called only where
 * values are read (see jsonscan_values_off).
 */
typedef struct jsonscan_ops {
	int (*open)(void *owner, bool object);
	int (*close)(void *owner);
	int (*key)(void *owner, const unsigned char *s, size_t n);
	/* `s`, `n`: the text of a number, the bytes of a string, "" else. */
	int (*scalar)(void *owner, jsonscan_kind kind, const char *s, size_t n);
} jsonscan_ops;

typedef struct jsonscan {
	const char *name;   /* the input's name, for messages */
	pr_error *err;
	profile *p;         /* memory is charged to it; set by the parser */
	pr_error pending;   /* the first profile error, reported if the JSON is well-formed */
	int rc;             /* why a callback stopped the parse */
	yajl_handle yh;
	/* yajl reads the callbacks through this pointer: skipping turns scalars off. */
	yajl_callbacks cb;
	const unsigned char *text;
	size_t text_len;
	bool completing;    /* in yajl_complete_parse: the offset is the end */
	uint32_t depth;     /* JSON nesting of the value being read */
	uint32_t skip;      /* nesting of the container being skipped; 0: none */
	bool ignoring;      /* after a profile error: only the JSON is checked */
	const jsonscan_ops *ops;
	void *owner;
} jsonscan;

/* Bytes of a UTF-8 byte order mark at the start of data: 3 or 0. */
size_t jsonscan_bom(const uint8_t *data, size_t len);

/*
 * Set up `js` (zeroed by the caller) to read data[0..len) past any BOM;
 * a NULL name is "-". Nothing is allocated before jsonscan_read.
 */
void jsonscan_init(jsonscan *js, const char *name, pr_error *err, const uint8_t *data,
		   size_t len, const jsonscan_ops *ops, void *owner);

/*
 * Make js->p, the profile of format `format` the parse fills in, and
 * refuse an empty input (nothing past the BOM): 0, or the error. js->p
 * is the caller's to free either way.
 */
int jsonscan_begin(jsonscan *js, profile_format format, const profile_limits *lim);

/* Read the whole text: 0, or the error that stopped it (see above). */
int jsonscan_read(jsonscan *js);

void jsonscan_release(jsonscan *js);

/* "cannot parse 'name': <reason>" as PR_EDATA, reported at once. */
int jsonscan_bad(jsonscan *js, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The same as PR_ELIMIT: a limit gone over, whatever the rest of the text. */
int jsonscan_limit(jsonscan *js, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int jsonscan_nomem(jsonscan *js);

/* A profile error found while reading: kept if first, reported after the JSON. */
void jsonscan_defer(jsonscan *js, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Stop the parse from a callback: js->err is set, rc says why. Returns 0. */
int jsonscan_stop(jsonscan *js, int rc);

/* Charge `bytes` to the profile's memory budget. */
int jsonscan_take(jsonscan *js, uint64_t bytes);

/* Room for element `n` of a growing array; the element is charged. */
int jsonscan_grow(jsonscan *js, void **arr, size_t *cap, size_t n, size_t size);

/* Skip the container just opened whole: nothing in it reaches the parser. */
void jsonscan_skip(jsonscan *js);

/* The value of the key just read is not read: its scalars are not decoded. */
void jsonscan_values_off(jsonscan *js);

/*
 * Which of names[first..last] the key `s`, `n` is, marking its bit in
 * *seen: its index, 0 when none (or first is 0), or -1 with a JSON error
 * set when the object had it already.
 */
int jsonscan_key(jsonscan *js, const char *const *names, int first, int last,
		 const unsigned char *s, size_t n, uint32_t *seen);

/*
 * A string value kept in `dst` (a name of a frame or function): 1, or 0
 * with the parse stopped when it is over max_string_len or out of memory.
 */
int jsonscan_name(jsonscan *js, buf *dst, const char *s, size_t n);

/*
 * Number tokens, converted only where a value is read. Each returns 1
 * with *out set, or 0 with a JSON error set (out of range, as jansson
 * refused such numbers, or a real of more than 128 characters).
 */
int jsonscan_int(jsonscan *js, const char *s, size_t n, int64_t *out);
int jsonscan_real(jsonscan *js, const char *s, size_t n, double *out);

/*
 * A V8 call frame's (functionName, url) pairs, each kept once for the
 * parse (the .cpuprofile and .heapprofile parsers name functions the
 * same way), their memory charged to the scan's budget.
 */
typedef struct jsonscan_frame {
	const char *key; /* owned by the map: u32 name length, name, url */
	size_t len;
	uint32_t func;   /* its profile function once interned, else UINT32_MAX */
} jsonscan_frame;

typedef struct jsonscan_frames {
	strmap map;          /* key bytes -> index into at */
	jsonscan_frame *at;
	uint32_t n;
	size_t cap;
	uint64_t charged;
} jsonscan_frames;

void jsonscan_frames_init(jsonscan_frames *f);

/* Keep (fn, url) once; *idx is its index. 0, or a negative code (error set). */
int jsonscan_frames_keep(jsonscan *js, jsonscan_frames *f, const buf *fn, const buf *url,
			 uint32_t *idx);

/*
 * Intern frame `idx` as the profile's function: its name, "(anonymous)"
 * when empty, and its url as the file; line and column never count. A
 * frame is interned once, however many nodes name it.
 */
int jsonscan_frames_intern(jsonscan *js, jsonscan_frames *f, uint32_t idx, uint32_t *func);

/* Free the pairs and give their memory back to the budget. */
void jsonscan_frames_drop(jsonscan *js, jsonscan_frames *f);

/* Free the pairs (the profile, and its budget, are going too). */
void jsonscan_frames_release(jsonscan_frames *f);

#endif
