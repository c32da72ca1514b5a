/*
 * v8heap.c: parser for V8 sampling heap profiles (see v8heap.h).
 *
 * The format, as node --heap-prof and Chrome DevTools (Memory panel,
 * "Allocation sampling", saved) write it:
 *
 *   {"head": {"callFrame": {"functionName": "(root)", "scriptId": "0",
 *                           "url": "", "lineNumber": -1, "columnNumber": -1},
 *             "selfSize": 0, "id": 1,
 *             "children": [{"callFrame": {...}, "selfSize": bytes,
 *                           "id": 2, "children": [...]}, ...]},
 *    "samples": [{"size": bytes, "nodeId": 3, "ordinal": 17}, ...]}
 *
 * The call tree nests as written: a node's children are node objects. A
 * node's selfSize is the bytes allocated by that function with that stack
 * and still alive when the profile was taken, as V8's sampler estimates
 * them: each sampled allocation is scaled by the odds of sampling it.
 *
 * What becomes of it:
 *   - One value column, inuse_space/bytes, pprof's name for live bytes,
 *     so that profile_guess_type makes it a heap profile as it does a Go
 *     heap profile (whose primary value is inuse_space too).
 *   - A function is (functionName, url); an empty functionName is
 *     "(anonymous)", as DevTools shows it and as v8.c names the functions
 *     of a .cpuprofile, so that one function has one name in both. Line
 *     and column are left out on purpose: they move with every deploy.
 *     (node 20 writes the functions of a CommonJS main script with an
 *     empty url and line -1, so those of one name there are one
 *     function; other CommonJS modules have their path as url, ES
 *     modules their file:// URL.)
 *   - The root ("head", always "(root)" in V8's output) is not a frame.
 *     Each node with selfSize > 0 is one sample whose stack runs from the
 *     root's child down to the node; selfSize of the root itself counts
 *     toward the total only. The nodes V8 makes for allocations outside
 *     JavaScript, "(V8 API)", "(BYTECODE_COMPILER)", "(GC)" and the like,
 *     stay frames, as "(program)" does in a cpuprofile.
 *   - The "samples" array is not read: it is skipped unread like any key
 *     not named here. It repeats selfSize allocation by allocation, but
 *     rounds each one's scaling on its own, so a node's sample sizes miss
 *     its selfSize (which DevTools shows, and which scales the node's
 *     allocations together) by up to a fifth either way in node 20
 *     output. And V8 lists the samples after building the tree, so
 *     allocations made while the tree was built name nodes the tree does
 *     not have (8 of the 489 samples of tests/data/v8's real profile):
 *     checking that every nodeId names a node would refuse real files.
 *     Nor does it give an object count for an inuse_objects column: a
 *     record is one sampled allocation, and how many objects its scaled
 *     size stands for is not written. Counting records would count large
 *     objects far more often than small ones, so there is no count column.
 *   - duration_ns and time_ns stay 0: the file holds no times.
 *
 * Checks: an id is an integer, unique in the tree; selfSize is an integer
 * of bytes, at least 0 (a fraction, a string or a negative number is an
 * error naming the node, one beyond 64 bits is invalid JSON, as v8.c has
 * it); the sum of all selfSizes fits 64 bits, so the profile's total does.
 *
 * Limits. A node deeper than max_depth stops the parse as it is opened
 * (its stack, or that of any sampled node below it, would be refused
 * anyway); the nodes with selfSize > 0, each a sample, stop it once
 * there are more than max_samples; names longer than max_string_len stop
 * it as they are read. Each tree level nests two JSON levels (node,
 * children), so JSON_MAX_DEPTH also caps the tree at 1023 levels, far
 * above the 128 frames V8 records for a stack.
 *
 * Memory, as in v8.c. yajl reads the text in one streaming pass and only
 * what the profile needs is kept: per node its id, selfSize, parent and
 * the index of its (name, url) pair, each pair once. The value of any
 * other key is skipped as yajl reads it, neither stored nor decoded,
 * however large or deeply nested. Everything kept is charged to the
 * parse's memory budget (profile_mem_take) as it is read, so a hostile
 * document stops where it goes over, in bounded memory. The one cost
 * outside the budget is yajl's own: it decodes a string with escapes into
 * its buffer before the parser sees it, so a functionName or url costs
 * its size once before the length limit refuses it.
 *
 * Errors come in the order a whole-document parser reports them: a
 * document that is not well-formed JSON is "invalid JSON" wherever it
 * breaks, even after a part that is well-formed but wrong as a profile.
 * So the first such profile error is kept, the rest of the text is only
 * checked as JSON, and the error is reported once the text has proved
 * well-formed. Limits, and JSON errors profreg finds itself (duplicate
 * keys, numbers out of range, nesting), stop the parse at once.
 */
#define _POSIX_C_SOURCE 200809L
#include "pipeline/v8heap.h"
#include "common/buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#define NO_NODE UINT32_MAX
/* The first key is near the start; "selfSize" ends the root's call frame. */
#define SNIFF_WINDOW 65536
#define JSON_MAX_DEPTH 2048
/* Longer number texts are refused: no writer needs them. */
#define NUMBER_MAX 128
/* One context per JSON container read, never more than the JSON nesting. */
#define LEVELS_MAX (JSON_MAX_DEPTH + 1)

typedef struct hp_node {
	int64_t id;
	int64_t self;     /* selfSize, bytes */
	uint32_t parent;  /* index of the parent node, NO_NODE for the root */
	uint32_t depth;   /* frames on its stack; the root has 0 */
	uint32_t name;    /* index into names_at: its (functionName, url) */
	uint32_t func;    /* interned function (not set for the root) */
	uint8_t flags;
} hp_node;

enum { F_ID = 1, F_SELF = 2, F_FRAME = 4 };

/* Per node: the node and its entry in the sorted copy of the ids. */
#define NODE_COST (sizeof(hp_node) + sizeof(int64_t))

/* A (functionName, url) pair as kept: u32 name length, name, url. */
typedef struct name_key {
	const char *key; /* owned by the names map */
	size_t len;
} name_key;

/* What the JSON value being read belongs to. */
typedef enum ctx { X_TOP, X_NODE, X_FRAME, X_KIDS } ctx;

typedef enum key {
	K_OTHER, K_HEAD, K_NODES, K_FRAME, K_SELF, K_ID, K_CHILDREN, K_FNAME, K_URL,
} key;

static const char *const key_names[] = {
	[K_HEAD] = "head", [K_NODES] = "nodes", [K_FRAME] = "callFrame",
	[K_SELF] = "selfSize", [K_ID] = "id", [K_CHILDREN] = "children",
	[K_FNAME] = "functionName", [K_URL] = "url",
};

/* One open container that is read (skipped ones have none). */
typedef struct level {
	uint32_t node;  /* the node it is, or belongs to; NO_NODE at the top */
	uint32_t kids;  /* in X_KIDS: elements met so far */
	uint16_t seen;  /* keys met in this object, for duplicates */
	uint8_t ctx;
} level;

/* A scalar as yajl reported it. */
typedef enum vkind { V_INT, V_REAL, V_STRING, V_OTHER } vkind;

typedef struct hp_parser {
	const char *name;
	pr_error *err;
	pr_error pending;   /* the first profile error, reported if the JSON is well-formed */
	int rc;             /* why a callback stopped the parse */
	profile *p;
	yajl_handle yh;
	/* yajl reads the callbacks through this pointer: skipping turns scalars off. */
	yajl_callbacks cb;
	const unsigned char *text;
	size_t text_len;
	bool completing;    /* in yajl_complete_parse: the offset is the end */

	uint32_t depth;     /* JSON nesting of the value being read */
	uint32_t skip;      /* nesting of the container being skipped; 0: none */
	bool ignoring;      /* after a profile error: only the JSON is checked */
	level *levels;      /* LEVELS_MAX of them */
	uint32_t nlevels;
	key key;            /* the key whose value comes next */

	bool have_head, have_nodes;
	hp_node *nodes;     /* in document order: the root first */
	uint32_t nnodes;
	size_t nodes_cap;
	uint64_t nsampled;  /* nodes with selfSize > 0 */
	int64_t total;      /* every selfSize, to refuse a total over 64 bits */
	strmap names;       /* name_key bytes -> index into names_at */
	name_key *names_at;
	uint32_t nnames;
	size_t names_cap;
	uint64_t names_charged;

	buf fname, furl;    /* the call frame being read */
	char label[48];     /* see label() */
} hp_parser;

static int bad(hp_parser *ps, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A profile error found after the text was read: reported at once. */
static int bad(hp_parser *ps, const char *fmt, ...)
{
	char reason[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	return pr_error_set(ps->err, PR_EDATA, "cannot parse '%s': %s", ps->name,
			    reason);
}

static int nomem(hp_parser *ps)
{
	return pr_error_set(ps->err, PR_ENOMEM, "cannot parse '%s': out of memory",
			    ps->name);
}

/* ---- while yajl reads: skipping, errors, limits ---------------------- */

static void scalars_on(hp_parser *ps);
static void scalars_off(hp_parser *ps);
static void values_off(hp_parser *ps);

static void defer(hp_parser *ps, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * A profile error found while reading: keep the first, and only check
 * the rest of the text as JSON (see the header comment).
 */
static void defer(hp_parser *ps, const char *fmt, ...)
{
	char reason[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	pr_error_set(&ps->pending, PR_EDATA, "cannot parse '%s': %s", ps->name, reason);
	ps->ignoring = true;
	scalars_off(ps);
}

/* Where yajl is in the text, as a line and a column (both from 1). */
static void position(const hp_parser *ps, size_t *line, size_t *col)
{
	size_t off = ps->completing ? ps->text_len : yajl_get_bytes_consumed(ps->yh);
	const unsigned char *t = ps->text, *q = t, *nl;

	if (off > ps->text_len)
		off = ps->text_len;
	*line = 1;
	while ((nl = memchr(q, '\n', off - (size_t)(q - t)))) {
		(*line)++;
		q = nl + 1;
	}
	*col = off - (size_t)(q - t) + 1;
}

static int json_error(hp_parser *ps, const char *reason)
{
	size_t line, col;

	position(ps, &line, &col);
	ps->rc = pr_error_set(ps->err, PR_EDATA,
			      "cannot parse '%s': invalid JSON at line %zu column %zu: %s",
			      ps->name, line, col, reason);
	return 0;
}

/* Stop the parse: ps->err is set, ps->rc says why. yajl's "cancel" is 0. */
static int stop(hp_parser *ps, int rc)
{
	ps->rc = rc;
	return 0;
}

static int take(hp_parser *ps, uint64_t bytes)
{
	return profile_mem_take(ps->p, bytes, ps->err);
}

/* Room for one more element of a growing array; the element is charged. */
static int grow(hp_parser *ps, void **arr, size_t *cap, size_t n, size_t size)
{
	void *a;
	size_t c;
	int rc;

	if ((rc = take(ps, size)) < 0)
		return rc;
	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 256;
	if (!(a = realloc(*arr, c * size)))
		return nomem(ps);
	*arr = a;
	*cap = c;
	return 0;
}

/*
 * "node 12", or "node at index 3" (document order) while its id is
 * unknown, for a message; valid until the next call.
 */
static const char *label(hp_parser *ps, uint32_t i)
{
	const hp_node *nd = &ps->nodes[i];

	if (nd->flags & F_ID)
		snprintf(ps->label, sizeof(ps->label), "node %lld", (long long)nd->id);
	else
		snprintf(ps->label, sizeof(ps->label), "node at index %u", i);
	return ps->label;
}

/*
 * An integer token as int64. Returns 1, or 0 with a JSON error set (out
 * of range, as jansson refused such numbers too).
 */
static int to_int(hp_parser *ps, const char *s, size_t n, int64_t *out)
{
	char tmp[NUMBER_MAX + 1];
	long long v;

	if (n > 20)
		return json_error(ps, "integer out of range");
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	errno = 0;
	v = strtoll(tmp, NULL, 10);
	if (errno == ERANGE)
		return json_error(ps, "integer out of range");
	*out = v;
	return 1;
}

static void push(hp_parser *ps, ctx c, uint32_t node)
{
	level *l = &ps->levels[ps->nlevels++];

	l->node = node;
	l->kids = 0;
	l->seen = 0;
	l->ctx = (uint8_t)c;
}

/* A node object opens: "head", or an element of its parent's "children". */
static int node_start(hp_parser *ps, uint32_t parent)
{
	uint32_t depth = parent == NO_NODE ? 0 : ps->nodes[parent].depth + 1;
	hp_node *n;
	int rc;

	if (depth > ps->p->limits.max_depth) {
		ps->rc = pr_error_set(ps->err, PR_ELIMIT,
				      "cannot parse '%s': a stack of %u frames "
				      "exceeds the depth limit of %u",
				      ps->name, depth, ps->p->limits.max_depth);
		return 0;
	}
	if (ps->nnodes == NO_NODE - 1) {
		ps->rc = pr_error_set(ps->err, PR_ELIMIT, "cannot parse '%s': too many nodes",
				      ps->name);
		return 0;
	}
	if ((rc = take(ps, NODE_COST - sizeof(hp_node))) < 0 ||
	    (rc = grow(ps, (void **)&ps->nodes, &ps->nodes_cap, ps->nnodes,
		       sizeof(*ps->nodes))) < 0)
		return stop(ps, rc);
	n = &ps->nodes[ps->nnodes];
	memset(n, 0, sizeof(*n));
	n->parent = parent;
	n->depth = depth;
	push(ps, X_NODE, ps->nnodes++);
	return 1;
}

/* Keep the (functionName, url) pair once; its index goes to node `i`. */
static int keep_name(hp_parser *ps, uint32_t i, const buf *fn, const buf *url)
{
	buf key = BUF_INIT;
	uint32_t len = (uint32_t)fn->len, idx;
	const char *stored;
	int rc;

	if (buf_put(&key, &len, sizeof(len)) < 0 || buf_put(&key, fn->ptr, fn->len) < 0 ||
	    buf_put(&key, url->ptr, url->len) < 0) {
		rc = nomem(ps);
		goto out;
	}
	if (!strmap_get(&ps->names, key.ptr, key.len, &idx)) {
		uint64_t cost = key.len + 1 + 3 * sizeof(strmap_slot);

		if ((rc = take(ps, cost)) < 0 ||
		    (rc = grow(ps, (void **)&ps->names_at, &ps->names_cap, ps->nnames,
			       sizeof(*ps->names_at))) < 0)
			goto out;
		ps->names_charged += cost + sizeof(*ps->names_at);
		if (strmap_put(&ps->names, key.ptr, key.len, ps->nnames, &idx, &stored) < 0) {
			rc = nomem(ps);
			goto out;
		}
		ps->names_at[ps->nnames].key = stored;
		ps->names_at[ps->nnames].len = key.len;
		ps->nnames++;
	}
	ps->nodes[i].name = idx;
	ps->nodes[i].flags |= F_FRAME;
	rc = 0;
out:
	buf_release(&key);
	return rc < 0 ? stop(ps, rc) : 1;
}

/*
 * A node object closes. Its call frame's names were kept when the frame
 * closed: its children, read after the frame, reuse the buffers.
 */
static int node_end(hp_parser *ps, uint32_t i)
{
	hp_node *n = &ps->nodes[i];

	if (!(n->flags & F_ID)) {
		defer(ps, "node at index %u has no id", i);
		return 1;
	}
	if (!(n->flags & F_SELF)) {
		defer(ps, "node %lld has no selfSize", (long long)n->id);
		return 1;
	}
	if (!(n->flags & F_FRAME)) {
		buf none = BUF_INIT;

		return keep_name(ps, i, &none, &none);
	}
	return 1;
}

/* A container opens as the value of ps->key, or as an array element. */
static int container_value(hp_parser *ps, bool object)
{
	level *l = &ps->levels[ps->nlevels - 1];
	uint32_t i = l->node;

	switch ((ctx)l->ctx) {
	case X_TOP:
		if (ps->key == K_HEAD) {
			if (!object) {
				defer(ps, "\"head\" is not an object");
				return 1;
			}
			ps->have_head = true;
			return node_start(ps, NO_NODE);
		}
		break;
	case X_NODE:
		if (ps->key == K_FRAME && object) {
			buf_reset(&ps->fname);
			buf_reset(&ps->furl);
			push(ps, X_FRAME, i);
			return 1;
		}
		if (ps->key == K_CHILDREN && !object) {
			push(ps, X_KIDS, i);
			return 1;
		}
		if (ps->key == K_ID) {
			defer(ps, "node at index %u: id is not an integer", i);
			return 1;
		}
		if (ps->key == K_SELF) {
			defer(ps, "%s: selfSize is not an integer", label(ps, i));
			return 1;
		}
		if (ps->key == K_FRAME) {
			defer(ps, "%s: callFrame is not an object", label(ps, i));
			return 1;
		}
		if (ps->key == K_CHILDREN) {
			defer(ps, "%s: children is not an array", label(ps, i));
			return 1;
		}
		break;
	case X_FRAME:
		if (ps->key == K_FNAME || ps->key == K_URL) {
			defer(ps, "%s: %s is not a string", label(ps, i), key_names[ps->key]);
			return 1;
		}
		break;
	case X_KIDS:
		if (!object) {
			defer(ps, "%s: child at index %u is not an object", label(ps, i), l->kids);
			return 1;
		}
		l->kids++;
		return node_start(ps, i);
	}
	/* A value nothing here reads: skip it whole. */
	ps->skip = ps->depth;
	scalars_off(ps);
	return 1;
}

static int open_container(hp_parser *ps, bool object)
{
	if (++ps->depth > JSON_MAX_DEPTH) {
		char reason[64];

		snprintf(reason, sizeof(reason), "maximum parsing depth of %d exceeded",
			 JSON_MAX_DEPTH);
		return json_error(ps, reason);
	}
	if (ps->ignoring || ps->skip)
		return 1;
	if (ps->nlevels == 0) {
		if (!object) {
			defer(ps, "the top level is an array, not a heap profile object");
			return 1;
		}
		push(ps, X_TOP, NO_NODE);
		return 1;
	}
	return container_value(ps, object);
}

static int cb_start_map(void *arg)
{
	return open_container(arg, true);
}

static int cb_start_array(void *arg)
{
	return open_container(arg, false);
}

static int close_container(hp_parser *ps)
{
	level *l;

	if (ps->skip) {
		/* The skipped value, or a container inside it, ends. */
		if (ps->depth == ps->skip) {
			ps->skip = 0;
			if (!ps->ignoring)
				scalars_on(ps);
		}
		ps->depth--;
		return 1;
	}
	ps->depth--;
	if (ps->ignoring)
		return 1;
	scalars_on(ps);
	l = &ps->levels[--ps->nlevels];
	if (l->ctx == X_NODE)
		return node_end(ps, l->node);
	if (l->ctx == X_FRAME)
		return keep_name(ps, l->node, &ps->fname, &ps->furl);
	return 1;
}

static int cb_end(void *arg)
{
	return close_container(arg);
}

static int cb_key(void *arg, const unsigned char *s, size_t n)
{
	hp_parser *ps = arg;
	level *l = &ps->levels[ps->nlevels - 1];
	key first = l->ctx == X_TOP ? K_HEAD : l->ctx == X_NODE ? K_FRAME : K_FNAME;
	key last = l->ctx == X_TOP ? K_NODES : l->ctx == X_NODE ? K_CHILDREN : K_URL;

	scalars_on(ps);
	ps->key = K_OTHER;
	for (key k = first; k <= last; k++) {
		if (strlen(key_names[k]) != n || memcmp(key_names[k], s, n) != 0)
			continue;
		if (l->seen & (1u << k)) {
			char reason[64];

			snprintf(reason, sizeof(reason), "duplicate object key \"%s\"",
				 key_names[k]);
			return json_error(ps, reason);
		}
		l->seen |= (uint16_t)(1u << k);
		ps->key = k;
		if (k == K_NODES)
			ps->have_nodes = true;
		break;
	}
	/* "nodes" only tells a cpuprofile apart in the message; it is not read. */
	if (ps->key == K_OTHER || ps->key == K_NODES)
		values_off(ps);
	return 1;
}

/* A string value of a name field: kept for the frame, within the limit. */
static int name_value(hp_parser *ps, buf *dst, const unsigned char *s, size_t n)
{
	if (n > ps->p->limits.max_string_len) {
		ps->rc = pr_error_set(ps->err, PR_ELIMIT,
				      "cannot parse '%s': a name of %zu bytes "
				      "exceeds the limit of %u bytes",
				      ps->name, n, ps->p->limits.max_string_len);
		return 0;
	}
	buf_reset(dst);
	if (buf_put(dst, s, n) < 0)
		return stop(ps, nomem(ps));
	return 1;
}

/* The selfSize of node `i`: a count of bytes, and maybe one more sample. */
static int self_value(hp_parser *ps, uint32_t i, vkind kind, const char *s, size_t n)
{
	hp_node *nd = &ps->nodes[i];

	if (kind != V_INT) {
		defer(ps, "%s: selfSize is not an integer", label(ps, i));
		return 1;
	}
	if (!to_int(ps, s, n, &nd->self))
		return 0;
	if (nd->self < 0) {
		defer(ps, "%s: negative selfSize %lld", label(ps, i), (long long)nd->self);
		return 1;
	}
	nd->flags |= F_SELF;
	if (__builtin_add_overflow(ps->total, nd->self, &ps->total)) {
		defer(ps, "the selfSizes add up to more than 64 bits");
		return 1;
	}
	if (nd->self > 0 && ++ps->nsampled > ps->p->limits.max_samples) {
		ps->rc = pr_error_set(ps->err, PR_ELIMIT,
				      "cannot parse '%s': more than %llu samples (the sample "
				      "limit; a sample is a node with selfSize > 0)",
				      ps->name, (unsigned long long)ps->p->limits.max_samples);
		return 0;
	}
	return 1;
}

/*
 * A scalar: `s`, `n` is the text of a number or the bytes of a string.
 * Numbers are converted only where a value is read, so one out of range
 * in a skipped value is no error.
 */
static int scalar(hp_parser *ps, vkind kind, const char *s, size_t n)
{
	level *l;
	uint32_t i;

	if (ps->nlevels == 0) {
		defer(ps, "the top level is not a heap profile object");
		return 1;
	}
	l = &ps->levels[ps->nlevels - 1];
	i = l->node;
	switch ((ctx)l->ctx) {
	case X_TOP:
		if (ps->key == K_HEAD)
			defer(ps, "\"head\" is not an object");
		return 1;
	case X_NODE:
		switch (ps->key) {
		case K_ID:
			if (kind != V_INT) {
				defer(ps, "node at index %u: id is not an integer", i);
				return 1;
			}
			if (!to_int(ps, s, n, &ps->nodes[i].id))
				return 0;
			ps->nodes[i].flags |= F_ID;
			return 1;
		case K_SELF:
			return self_value(ps, i, kind, s, n);
		case K_FRAME:
			defer(ps, "%s: callFrame is not an object", label(ps, i));
			return 1;
		case K_CHILDREN:
			defer(ps, "%s: children is not an array", label(ps, i));
			return 1;
		default:
			return 1;
		}
	case X_FRAME:
		if (ps->key != K_FNAME && ps->key != K_URL)
			return 1;
		if (kind != V_STRING) {
			defer(ps, "%s: %s is not a string", label(ps, i), key_names[ps->key]);
			return 1;
		}
		return name_value(ps, ps->key == K_FNAME ? &ps->fname : &ps->furl,
				  (const unsigned char *)s, n);
	case X_KIDS:
		defer(ps, "%s: child at index %u is not an object", label(ps, i), l->kids);
		return 1;
	}
	return 1;
}

static int cb_number(void *arg, const char *s, size_t n)
{
	bool real = memchr(s, '.', n) || memchr(s, 'e', n) || memchr(s, 'E', n);

	return scalar(arg, real ? V_REAL : V_INT, s, n);
}

static int cb_string(void *arg, const unsigned char *s, size_t n)
{
	return scalar(arg, V_STRING, (const char *)s, n);
}

static int cb_bool(void *arg, int v)
{
	(void)v;
	return scalar(arg, V_OTHER, "", 0);
}

static int cb_null(void *arg)
{
	return scalar(arg, V_OTHER, "", 0);
}

/*
 * yajl decodes a string only for a string callback, so the value of a
 * key nothing here reads is never decoded or converted: its scalars are
 * turned off until the next key or the end of its object.
 */
static void values_off(hp_parser *ps)
{
	ps->cb.yajl_null = NULL;
	ps->cb.yajl_boolean = NULL;
	ps->cb.yajl_number = NULL;
	ps->cb.yajl_string = NULL;
}

/* Inside a skipped container only the nesting is followed. */
static void scalars_off(hp_parser *ps)
{
	values_off(ps);
	ps->cb.yajl_map_key = NULL;
}

static void scalars_on(hp_parser *ps)
{
	ps->cb.yajl_null = cb_null;
	ps->cb.yajl_boolean = cb_bool;
	ps->cb.yajl_number = cb_number;
	ps->cb.yajl_string = cb_string;
	ps->cb.yajl_map_key = cb_key;
}

/*
 * yajl's own message without its "parse error: " or "lexical error: "
 * prefix and full stop. Never verbose: that would quote the input.
 */
static int yajl_failed(hp_parser *ps)
{
	unsigned char *msg = yajl_get_error(ps->yh, 0, NULL, 0);
	char reason[256];
	const char *r = msg ? (const char *)msg : "malformed";
	const char *colon = strstr(r, "error: ");
	size_t k;

	if (colon)
		r = colon + 7;
	snprintf(reason, sizeof(reason), "%s", r);
	k = strlen(reason);
	while (k && (reason[k - 1] == '\n' || reason[k - 1] == '.'))
		reason[--k] = '\0';
	if (msg)
		yajl_free_error(ps->yh, msg);
	if (strcmp(reason, "premature EOF") == 0)
		snprintf(reason, sizeof(reason), "the input ends too early (truncated?)");
	json_error(ps, reason);
	return ps->rc;
}

/* Read the text with yajl: 0, or the error that stopped it. */
static int read_json(hp_parser *ps)
{
	yajl_status st;
	int rc;

	if ((rc = take(ps, LEVELS_MAX * sizeof(*ps->levels))) < 0)
		return rc;
	if (!(ps->levels = malloc(LEVELS_MAX * sizeof(*ps->levels))))
		return nomem(ps);
	scalars_on(ps);
	ps->cb.yajl_start_map = cb_start_map;
	ps->cb.yajl_end_map = cb_end;
	ps->cb.yajl_start_array = cb_start_array;
	ps->cb.yajl_end_array = cb_end;
	/* UTF-8 is validated (the default); no comments, one value, no garbage. */
	if (!(ps->yh = yajl_alloc(&ps->cb, NULL, ps)))
		return nomem(ps);
	st = yajl_parse(ps->yh, ps->text, ps->text_len);
	if (st == yajl_status_ok) {
		ps->completing = true;
		st = yajl_complete_parse(ps->yh);
	}
	if (st == yajl_status_client_canceled)
		return ps->rc;
	if (st != yajl_status_ok)
		return yajl_failed(ps);
	if (ps->pending.code)
		return pr_error_set(ps->err, ps->pending.code, "%s", ps->pending.msg);
	return 0;
}

/* ---- after the text: ids, functions, stacks -------------------------- */

static int id_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* What the whole text must have had, checked once it was read. */
static int check_shape(hp_parser *ps)
{
	if (!ps->have_head)
		return bad(ps, ps->have_nodes ?
			   "no \"head\" member but \"nodes\": a V8 .cpuprofile, not a heap "
			   "profile" :
			   "no \"head\" member: not a V8 heap profile");
	return 0;
}

/* Node ids are unique (NODE_COST has charged the sorted copy). */
static int check_ids(hp_parser *ps)
{
	int64_t *ids;
	int rc = 0;

	if (!(ids = malloc(ps->nnodes * sizeof(*ids))))
		return nomem(ps);
	for (uint32_t i = 0; i < ps->nnodes; i++)
		ids[i] = ps->nodes[i].id;
	qsort(ids, ps->nnodes, sizeof(*ids), id_cmp);
	for (uint32_t i = 1; i < ps->nnodes; i++)
		if (ids[i] == ids[i - 1]) {
			rc = bad(ps, "duplicate node id %lld", (long long)ids[i]);
			break;
		}
	free(ids);
	return rc;
}

/* Intern every node but the root (node 0, "head") as a function. */
static int intern_funcs(hp_parser *ps)
{
	int rc;

	for (uint32_t i = 1; i < ps->nnodes; i++) {
		hp_node *n = &ps->nodes[i];
		const name_key *k = &ps->names_at[n->name];
		const char *fname = k->key + sizeof(uint32_t), *url;
		uint32_t fname_len;
		size_t url_len;

		memcpy(&fname_len, k->key, sizeof(fname_len));
		url = fname + fname_len;
		url_len = k->len - sizeof(fname_len) - fname_len;
		if (fname_len == 0) {
			fname = "(anonymous)";
			fname_len = (uint32_t)strlen(fname);
		}
		if ((rc = profile_intern(ps->p, &n->func, fname, fname_len, url, url_len,
					 ps->err)) < 0)
			return rc;
	}
	return 0;
}

/* Free the names once the functions are interned, and give their memory back. */
static void drop_names(hp_parser *ps)
{
	profile_mem_give(ps->p, ps->names_charged);
	strmap_release(&ps->names);
	free(ps->names_at);
	ps->names_at = NULL;
	ps->names_charged = 0;
}

/* One profile sample per node with selfSize > 0, root first. */
static int emit_samples(hp_parser *ps)
{
	uint32_t *stack = NULL, max_depth = 0;
	int rc = 0;

	for (uint32_t i = 0; i < ps->nnodes; i++)
		if (ps->nodes[i].self > 0 && ps->nodes[i].depth > max_depth)
			max_depth = ps->nodes[i].depth;
	/*
	 * Depths were checked against max_depth as the nodes opened, and
	 * profile_add_sample charges each stack to the memory budget, so the
	 * first stack over it ends the parse.
	 */
	/* One spare entry: never a NULL stack, even when only the root is hit. */
	if (!(stack = malloc(((size_t)max_depth + 1) * sizeof(*stack))))
		return nomem(ps);
	for (uint32_t i = 0; i < ps->nnodes; i++) {
		const hp_node *n = &ps->nodes[i];
		uint32_t j = i;

		if (n->self <= 0)
			continue;
		for (uint32_t k = n->depth; k > 0; k--) {
			stack[k - 1] = ps->nodes[j].func;
			j = ps->nodes[j].parent;
		}
		if ((rc = profile_add_sample(ps->p, stack, n->depth, &n->self, ps->err)) < 0)
			goto out;
	}
out:
	free(stack);
	return rc;
}

static void parser_release(hp_parser *ps)
{
	if (ps->yh)
		yajl_free(ps->yh);
	free(ps->levels);
	free(ps->nodes);
	strmap_release(&ps->names);
	free(ps->names_at);
	buf_release(&ps->fname);
	buf_release(&ps->furl);
}

static size_t skip_bom(const uint8_t *data, size_t len)
{
	return len >= 3 && data[0] == 0xef && data[1] == 0xbb && data[2] == 0xbf ? 3 : 0;
}

int v8heap_parse(profile **out, const uint8_t *data, size_t len,
		 const char *name, const profile_limits *lim, pr_error *err)
{
	static const char *const types[] = {"inuse_space"};
	static const char *const units[] = {"bytes"};
	hp_parser ps;
	size_t bom = skip_bom(data, len);
	int rc;

	*out = NULL;
	memset(&ps, 0, sizeof(ps));
	ps.name = name ? name : "-";
	ps.err = err;
	ps.text = data + bom;
	ps.text_len = len - bom;
	strmap_init(&ps.names);
	buf_init(&ps.fname, SIZE_MAX);
	buf_init(&ps.furl, SIZE_MAX);
	if ((rc = profile_new(&ps.p, PROFILE_FMT_V8HEAP, ps.name, lim, err)) < 0)
		goto out;
	if (len == bom) {
		rc = bad(&ps, "the input is empty");
		goto out;
	}
	if ((rc = read_json(&ps)) < 0 ||
	    (rc = check_shape(&ps)) < 0 ||
	    (rc = check_ids(&ps)) < 0 ||
	    (rc = profile_set_value_types(ps.p, 1, types, units, err)) < 0 ||
	    (rc = intern_funcs(&ps)) < 0)
		goto out;
	drop_names(&ps);
	if ((rc = emit_samples(&ps)) < 0)
		goto out;
	profile_pick_primary(ps.p, "heap");
	*out = ps.p;
	ps.p = NULL;
out:
	parser_release(&ps);
	profile_free(ps.p);
	return rc;
}

static size_t skip_space(const uint8_t *data, size_t len, size_t i)
{
	while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' ||
			   data[i] == '\r'))
		i++;
	return i;
}

/* Does data[i..) start with `s`? */
static bool at(const uint8_t *data, size_t len, size_t i, const char *s)
{
	size_t n = strlen(s);

	return len - i >= n && memcmp(data + i, s, n) == 0;
}

bool v8heap_sniff(const uint8_t *data, size_t len)
{
	static const char self[] = "\"selfSize\"";
	size_t i = skip_space(data, len, skip_bom(data, len)), end;

	if (i >= len || data[i] != '{')
		return false;
	i = skip_space(data, len, i + 1);
	if (!at(data, len, i, "\"head\"") && !at(data, len, i, "\"samples\""))
		return false;
	end = len - i > SNIFF_WINDOW ? i + SNIFF_WINDOW : len;
	for (; i + sizeof(self) - 1 <= end; i++)
		if (memcmp(data + i, self, sizeof(self) - 1) == 0)
			return true;
	return false;
}
