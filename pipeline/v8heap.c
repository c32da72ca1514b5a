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
 *   - The "samples" array, one record per sampled allocation still
 *     alive, gives only the profile's sample count (profile.samples_behind):
 *     how many of its records name a node with bytes, 481 of the 489 of
 *     tests/data/v8's real profile, where the 26 nodes with bytes are no
 *     count of anything. Its sizes are not read: they repeat selfSize
 *     allocation by allocation, but round each one's scaling on its own,
 *     so a node's sample sizes miss its selfSize (which DevTools shows,
 *     and which scales the node's allocations together) by up to a fifth
 *     either way in node 20 output. V8 lists the samples after building
 *     the tree, so allocations made while the tree was built name nodes
 *     the tree does not have (the other 8 of those 489): their bytes are
 *     in no node, so they are not counted, and are no error. A record
 *     that is not an object with an integer nodeId is not counted
 *     either. Nor does the array give an object count for an
 *     inuse_objects column: how many objects a sampled allocation's
 *     scaled size stands for is not written. Counting records would count
 *     large objects far more often than small ones, so there is no count
 *     column.
 *   - duration_ns and time_ns stay 0: the file holds no times.
 *
 * Checks: an id is an integer, unique in the tree; selfSize is an integer
 * of bytes, at least 0 (a fraction, a string or a negative number is an
 * error naming the node, one beyond 64 bits is invalid JSON, as v8.c has
 * it); the sum of all selfSizes fits 64 bits, so the profile's total does.
 *
 * Limits. A node deeper than max_depth stops the parse as it is opened
 * (its stack, or that of any sampled node below it, would be refused
 * anyway); the nodes with selfSize > 0, each a stack, stop it once
 * there are more than max_samples, and so do the records of "samples"
 * with a nodeId, each kept until the tree is known (8 bytes,
 * charged); names longer than max_string_len stop it as they are read.
 * Each tree level nests two JSON levels (node, children), so
 * JSONSCAN_MAX_DEPTH also caps the tree at 1023 levels, far above the
 * 128 frames V8 records for a stack.
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

#include "pipeline/jsonscan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_NODE UINT32_MAX
/* The first key is near the start; "selfSize" ends the root's call frame. */
#define SNIFF_WINDOW 65536
/* One context per JSON container read, never more than the JSON nesting. */
#define LEVELS_MAX (JSONSCAN_MAX_DEPTH + 1)

typedef struct hp_node {
	int64_t id;
	int64_t self;     /* selfSize, bytes */
	uint32_t parent;  /* index of the parent node, NO_NODE for the root */
	uint32_t depth;   /* frames on its stack; the root has 0 */
	uint32_t name;    /* index into frames: its (functionName, url) */
	uint32_t func;    /* interned function (not set for the root) */
	uint8_t flags;
} hp_node;

enum { F_ID = 1, F_SELF = 2, F_FRAME = 4 };

/* Per node: the node and its entry in the sorted copy of the ids. */
#define NODE_COST (sizeof(hp_node) + sizeof(int64_t))

/* What the JSON value being read belongs to. */
typedef enum ctx { X_TOP, X_NODE, X_FRAME, X_KIDS, X_SAMPLES, X_SAMPLE } ctx;

typedef enum key {
	K_OTHER, K_HEAD, K_NODES, K_SAMPLES, K_FRAME, K_SELF, K_ID, K_CHILDREN, K_FNAME,
	K_URL, K_NODE_ID,
} key;

static const char *const key_names[] = {
	[K_HEAD] = "head", [K_NODES] = "nodes", [K_SAMPLES] = "samples",
	[K_FRAME] = "callFrame", [K_SELF] = "selfSize", [K_ID] = "id",
	[K_CHILDREN] = "children", [K_FNAME] = "functionName", [K_URL] = "url",
	[K_NODE_ID] = "nodeId",
};

/* One open container that is read (skipped ones have none). */
typedef struct level {
	uint32_t node;  /* the node it is, or belongs to; NO_NODE at the top */
	uint32_t kids;  /* in X_KIDS: elements met so far */
	uint16_t seen;  /* keys met in this object, for duplicates */
	uint8_t ctx;
} level;

typedef struct hp_parser {
	jsonscan js;        /* the text, the error rules; js.p is the profile */
	level *levels;      /* LEVELS_MAX of them */
	uint32_t nlevels;
	key key;            /* the key whose value comes next */

	bool have_head, have_nodes;
	hp_node *nodes;     /* in document order: the root first */
	uint32_t nnodes;
	size_t nodes_cap;
	uint64_t nsampled;  /* nodes with selfSize > 0 */
	int64_t *alloc_nodes; /* each "samples" record's nodeId, in order */
	size_t nallocs, allocs_cap;
	int64_t total;      /* every selfSize, to refuse a total over 64 bits */
	jsonscan_frames frames; /* each node's (functionName, url) */

	buf fname, furl;    /* the call frame being read */
	char label[48];     /* see label() */
} hp_parser;

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

	if (depth > ps->js.p->limits.max_depth) {
		rc = jsonscan_limit(&ps->js, "a stack of %u frames exceeds the depth limit of %u",
				    depth, ps->js.p->limits.max_depth);
		return jsonscan_stop(&ps->js, rc);
	}
	if (ps->nnodes == NO_NODE - 1) {
		return jsonscan_stop(&ps->js, jsonscan_limit(&ps->js, "too many nodes"));
	}
	if ((rc = jsonscan_take(&ps->js, NODE_COST - sizeof(hp_node))) < 0 ||
	    (rc = jsonscan_grow(&ps->js, (void **)&ps->nodes, &ps->nodes_cap, ps->nnodes,
				sizeof(*ps->nodes))) < 0)
		return jsonscan_stop(&ps->js, rc);
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
	int rc = jsonscan_frames_keep(&ps->js, &ps->frames, fn, url, &ps->nodes[i].name);

	if (rc < 0)
		return jsonscan_stop(&ps->js, rc);
	ps->nodes[i].flags |= F_FRAME;
	return 1;
}

/*
 * A node object closes. Its call frame's names were kept when the frame
 * closed: its children, read after the frame, reuse the buffers.
 */
static int node_end(hp_parser *ps, uint32_t i)
{
	hp_node *n = &ps->nodes[i];

	if (!(n->flags & F_ID)) {
		jsonscan_defer(&ps->js, "node at index %u has no id", i);
		return 1;
	}
	if (!(n->flags & F_SELF)) {
		jsonscan_defer(&ps->js, "node %lld has no selfSize", (long long)n->id);
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
				jsonscan_defer(&ps->js, "\"head\" is not an object");
				return 1;
			}
			ps->have_head = true;
			return node_start(ps, NO_NODE);
		}
		if (ps->key == K_SAMPLES && !object) {
			push(ps, X_SAMPLES, NO_NODE);
			return 1;
		}
		break;
	case X_SAMPLES:
		if (object) {
			push(ps, X_SAMPLE, NO_NODE);
			return 1;
		}
		break;
	case X_SAMPLE:
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
			jsonscan_defer(&ps->js, "node at index %u: id is not an integer", i);
			return 1;
		}
		if (ps->key == K_SELF) {
			jsonscan_defer(&ps->js, "%s: selfSize is not an integer", label(ps, i));
			return 1;
		}
		if (ps->key == K_FRAME) {
			jsonscan_defer(&ps->js, "%s: callFrame is not an object", label(ps, i));
			return 1;
		}
		if (ps->key == K_CHILDREN) {
			jsonscan_defer(&ps->js, "%s: children is not an array", label(ps, i));
			return 1;
		}
		break;
	case X_FRAME:
		if (ps->key == K_FNAME || ps->key == K_URL) {
			jsonscan_defer(&ps->js, "%s: %s is not a string", label(ps, i),
				       key_names[ps->key]);
			return 1;
		}
		break;
	case X_KIDS:
		if (!object) {
			jsonscan_defer(&ps->js, "%s: child at index %u is not an object",
				       label(ps, i), l->kids);
			return 1;
		}
		l->kids++;
		return node_start(ps, i);
	}
	/* A value nothing here reads: skip it whole. */
	jsonscan_skip(&ps->js);
	return 1;
}

/* A container to read opens (jsonscan_ops.open). */
static int on_open(void *arg, bool object)
{
	hp_parser *ps = arg;

	if (ps->nlevels == 0) {
		if (!object) {
			jsonscan_defer(&ps->js,
				       "the top level is an array, not a heap profile object");
			return 1;
		}
		push(ps, X_TOP, NO_NODE);
		return 1;
	}
	return container_value(ps, object);
}

static int on_close(void *arg)
{
	hp_parser *ps = arg;
	level *l = &ps->levels[--ps->nlevels];

	if (l->ctx == X_NODE)
		return node_end(ps, l->node);
	if (l->ctx == X_FRAME)
		return keep_name(ps, l->node, &ps->fname, &ps->furl);
	return 1;
}

static int on_key(void *arg, const unsigned char *s, size_t n)
{
	hp_parser *ps = arg;
	level *l = &ps->levels[ps->nlevels - 1];
	key first = l->ctx == X_TOP ? K_HEAD : l->ctx == X_NODE ? K_FRAME :
		    l->ctx == X_SAMPLE ? K_NODE_ID : K_FNAME;
	key last = l->ctx == X_TOP ? K_SAMPLES : l->ctx == X_NODE ? K_CHILDREN :
		   l->ctx == X_SAMPLE ? K_NODE_ID : K_URL;
	uint32_t seen = l->seen;
	int k = jsonscan_key(&ps->js, key_names, first, last, s, n, &seen);

	if (k < 0)
		return 0;
	l->seen = (uint16_t)seen;
	ps->key = (key)k;
	if (ps->key == K_NODES)
		ps->have_nodes = true;
	/* "nodes" only tells a cpuprofile apart in the message; it is not read. */
	if (ps->key == K_OTHER || ps->key == K_NODES)
		jsonscan_values_off(&ps->js);
	return 1;
}

/* The selfSize of node `i`: a count of bytes, and maybe one more sample. */
static int self_value(hp_parser *ps, uint32_t i, jsonscan_kind kind, const char *s, size_t n)
{
	hp_node *nd = &ps->nodes[i];

	if (kind != JSONSCAN_INT) {
		jsonscan_defer(&ps->js, "%s: selfSize is not an integer", label(ps, i));
		return 1;
	}
	if (!jsonscan_int(&ps->js, s, n, &nd->self))
		return 0;
	if (nd->self < 0) {
		jsonscan_defer(&ps->js, "%s: negative selfSize %lld", label(ps, i),
			       (long long)nd->self);
		return 1;
	}
	nd->flags |= F_SELF;
	if (__builtin_add_overflow(ps->total, nd->self, &ps->total)) {
		jsonscan_defer(&ps->js, "the selfSizes add up to more than 64 bits");
		return 1;
	}
	if (nd->self > 0 && ++ps->nsampled > ps->js.p->limits.max_samples) {
		int rc = jsonscan_limit(&ps->js,
					"more than %llu samples (the sample limit; a "
					"sample is a node with selfSize > 0)",
					(unsigned long long)ps->js.p->limits.max_samples);

		return jsonscan_stop(&ps->js, rc);
	}
	return 1;
}

/*
 * A "samples" record's nodeId, kept to count the record once the tree is
 * known (the array may come first). Anything but an integer is not counted.
 */
static int alloc_node(hp_parser *ps, jsonscan_kind kind, const char *s, size_t n)
{
	int rc;

	if (kind != JSONSCAN_INT)
		return 1;
	if (ps->nallocs >= ps->js.p->limits.max_samples) {
		rc = jsonscan_limit(&ps->js,
				    "more than %llu samples (the sample limit) in \"samples\"",
				    (unsigned long long)ps->js.p->limits.max_samples);
		return jsonscan_stop(&ps->js, rc);
	}
	if ((rc = jsonscan_grow(&ps->js, (void **)&ps->alloc_nodes, &ps->allocs_cap,
				ps->nallocs, sizeof(*ps->alloc_nodes))) < 0)
		return jsonscan_stop(&ps->js, rc);
	if (!jsonscan_int(&ps->js, s, n, &ps->alloc_nodes[ps->nallocs]))
		return 0;
	ps->nallocs++;
	return 1;
}

/*
 * A scalar: `s`, `n` is the text of a number or the bytes of a string.
 * Numbers are converted only where a value is read, so one out of range
 * in a skipped value is no error.
 */
static int on_scalar(void *arg, jsonscan_kind kind, const char *s, size_t n)
{
	hp_parser *ps = arg;
	level *l;
	uint32_t i;

	if (ps->nlevels == 0) {
		jsonscan_defer(&ps->js, "the top level is not a heap profile object");
		return 1;
	}
	l = &ps->levels[ps->nlevels - 1];
	i = l->node;
	switch ((ctx)l->ctx) {
	case X_TOP:
		if (ps->key == K_HEAD)
			jsonscan_defer(&ps->js, "\"head\" is not an object");
		return 1;
	case X_NODE:
		switch (ps->key) {
		case K_ID:
			if (kind != JSONSCAN_INT) {
				jsonscan_defer(&ps->js, "node at index %u: id is not an integer",
					       i);
				return 1;
			}
			if (!jsonscan_int(&ps->js, s, n, &ps->nodes[i].id))
				return 0;
			ps->nodes[i].flags |= F_ID;
			return 1;
		case K_SELF:
			return self_value(ps, i, kind, s, n);
		case K_FRAME:
			jsonscan_defer(&ps->js, "%s: callFrame is not an object", label(ps, i));
			return 1;
		case K_CHILDREN:
			jsonscan_defer(&ps->js, "%s: children is not an array", label(ps, i));
			return 1;
		default:
			return 1;
		}
	case X_FRAME:
		if (ps->key != K_FNAME && ps->key != K_URL)
			return 1;
		if (kind != JSONSCAN_STRING) {
			jsonscan_defer(&ps->js, "%s: %s is not a string", label(ps, i),
				       key_names[ps->key]);
			return 1;
		}
		return jsonscan_name(&ps->js, ps->key == K_FNAME ? &ps->fname : &ps->furl, s, n);
	case X_KIDS:
		jsonscan_defer(&ps->js, "%s: child at index %u is not an object", label(ps, i),
			       l->kids);
		return 1;
	case X_SAMPLES:
		return 1;
	case X_SAMPLE:
		return ps->key == K_NODE_ID ? alloc_node(ps, kind, s, n) : 1;
	}
	return 1;
}

/* Read the text: 0, or the error that stopped it. */
static int read_json(hp_parser *ps)
{
	int rc;

	if ((rc = jsonscan_take(&ps->js, LEVELS_MAX * sizeof(*ps->levels))) < 0)
		return rc;
	if (!(ps->levels = malloc(LEVELS_MAX * sizeof(*ps->levels))))
		return jsonscan_nomem(&ps->js);
	return jsonscan_read(&ps->js);
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
		return jsonscan_bad(
			&ps->js,
			ps->have_nodes
				? "no \"head\" member but \"nodes\": a V8 .cpuprofile, not a heap "
				  "profile"
				: "no \"head\" member: not a V8 heap profile");
	return 0;
}

/* Node ids are unique (NODE_COST has charged the sorted copy). */
static int check_ids(hp_parser *ps)
{
	int64_t *ids;
	int rc = 0;

	if (!(ids = malloc(ps->nnodes * sizeof(*ids))))
		return jsonscan_nomem(&ps->js);
	for (uint32_t i = 0; i < ps->nnodes; i++)
		ids[i] = ps->nodes[i].id;
	qsort(ids, ps->nnodes, sizeof(*ids), id_cmp);
	for (uint32_t i = 1; i < ps->nnodes; i++)
		if (ids[i] == ids[i - 1]) {
			rc = jsonscan_bad(&ps->js, "duplicate node id %lld", (long long)ids[i]);
			break;
		}
	free(ids);
	return rc;
}

/*
 * How many "samples" records name a node with bytes: the sampled
 * allocations behind the values (NODE_COST has charged the sorted ids).
 */
static int count_allocs(hp_parser *ps)
{
	int64_t *ids;
	size_t n = 0;

	if (!ps->nallocs)
		return 0;
	if (!(ids = malloc(ps->nnodes * sizeof(*ids))))
		return jsonscan_nomem(&ps->js);
	for (uint32_t i = 0; i < ps->nnodes; i++)
		if (ps->nodes[i].self > 0)
			ids[n++] = ps->nodes[i].id;
	qsort(ids, n, sizeof(*ids), id_cmp);
	for (size_t k = 0; k < ps->nallocs; k++)
		if (n && bsearch(&ps->alloc_nodes[k], ids, n, sizeof(*ids), id_cmp))
			ps->js.p->samples_behind++;
	free(ids);
	profile_mem_give(ps->js.p, ps->nallocs * sizeof(*ps->alloc_nodes));
	free(ps->alloc_nodes);
	ps->alloc_nodes = NULL;
	ps->nallocs = 0;
	return 0;
}

/* Intern every node but the root (node 0, "head") as a function. */
static int intern_funcs(hp_parser *ps)
{
	int rc;

	for (uint32_t i = 1; i < ps->nnodes; i++) {
		hp_node *n = &ps->nodes[i];

		if ((rc = jsonscan_frames_intern(&ps->js, &ps->frames, n->name, &n->func)) < 0)
			return rc;
	}
	return 0;
}

/* Free the names once the functions are interned, and give their memory back. */
static void drop_names(hp_parser *ps)
{
	jsonscan_frames_drop(&ps->js, &ps->frames);
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
		return jsonscan_nomem(&ps->js);
	for (uint32_t i = 0; i < ps->nnodes; i++) {
		const hp_node *n = &ps->nodes[i];
		uint32_t j = i;

		if (n->self <= 0)
			continue;
		for (uint32_t k = n->depth; k > 0; k--) {
			stack[k - 1] = ps->nodes[j].func;
			j = ps->nodes[j].parent;
		}
		if ((rc = profile_add_sample(ps->js.p, stack, n->depth, &n->self, ps->js.err)) < 0)
			goto out;
	}
out:
	free(stack);
	return rc;
}

static void parser_release(hp_parser *ps)
{
	jsonscan_release(&ps->js);
	free(ps->levels);
	free(ps->nodes);
	free(ps->alloc_nodes);
	jsonscan_frames_release(&ps->frames);
	buf_release(&ps->fname);
	buf_release(&ps->furl);
}

int v8heap_parse(profile **out, const uint8_t *data, size_t len,
		 const char *name, const profile_limits *lim, pr_error *err)
{
	static const char *const types[] = {"inuse_space"};
	static const char *const units[] = {"bytes"};
	static const jsonscan_ops ops = {on_open, on_close, on_key, on_scalar};
	hp_parser ps;
	int rc;

	*out = NULL;
	memset(&ps, 0, sizeof(ps));
	jsonscan_init(&ps.js, name, err, data, len, &ops, &ps);
	jsonscan_frames_init(&ps.frames);
	buf_init(&ps.fname, SIZE_MAX);
	buf_init(&ps.furl, SIZE_MAX);
	if ((rc = jsonscan_begin(&ps.js, PROFILE_FMT_V8HEAP, lim)) < 0 ||
	    (rc = read_json(&ps)) < 0 || (rc = check_shape(&ps)) < 0 || (rc = check_ids(&ps)) < 0 ||
	    (rc = count_allocs(&ps)) < 0 ||
	    (rc = profile_set_value_types(ps.js.p, 1, types, units, err)) < 0 ||
	    (rc = intern_funcs(&ps)) < 0)
		goto out;
	drop_names(&ps);
	if ((rc = emit_samples(&ps)) < 0)
		goto out;
	profile_pick_primary(ps.js.p, "heap");
	*out = ps.js.p;
	ps.js.p = NULL;
out:
	parser_release(&ps);
	profile_free(ps.js.p);
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
	size_t i = skip_space(data, len, jsonscan_bom(data, len)), end;

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
