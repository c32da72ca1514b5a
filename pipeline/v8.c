/*
 * v8.c: parser for V8 .cpuprofile JSON (see v8.h).
 *
 * The format, as node --cpu-prof and Chrome DevTools write it:
 *
 *   {"nodes": [{"id": 1, "callFrame": {"functionName": "(root)",
 *               "url": "", ...}, "hitCount": 0, "children": [2, 3]}, ...],
 *    "startTime": us, "endTime": us,
 *    "samples": [node id, ...], "timeDeltas": [us, ...]}
 *
 * The nodes form a call tree; a sample names the node that was on top of
 * the stack. Older Chrome versions link a node to its "parent" instead of
 * listing "children"; both are accepted, and may be mixed as long as they
 * agree.
 *
 * What becomes of it:
 *   - Two value columns, samples/count and cpu/nanoseconds. Nanoseconds
 *     rather than the file's microseconds so that V8 profiles share the
 *     unit of pprof's cpu column and rates compare across formats without
 *     conversion (and fractional microseconds, which some writers emit,
 *     survive).
 *   - A function is (functionName, url); an empty functionName is
 *     "(anonymous)", as DevTools shows it. Line and column are left out on
 *     purpose: they move with every deploy, and a function whose name
 *     changes between two releases breaks its baseline. The price is that
 *     anonymous functions of one file share a name.
 *   - "(program)" (V8 running native code, no JavaScript on the stack)
 *     and "(garbage collector)" stay frames: both are CPU time. "(idle)",
 *     a child of the root, is the thread waiting for work, no CPU time:
 *     its samples are left out of both columns, as DevTools' Performance
 *     panel leaves them out of its JavaScript samples and speedscope
 *     drops the frame, so that a service's shares are of its busy time
 *     and do not move with its load (a handler that is the only work of
 *     a service idle 80% of the time is its whole busy time, not a fifth
 *     of it). The root node is not a frame: a stack runs from the root's
 *     child down to the sampled node (a sample of the root itself has an
 *     empty stack and only counts toward the total).
 *   - Samples are summed per node, so each distinct stack is built once:
 *     a real profile has ~100k samples over ~5k nodes. The max_samples
 *     limit still applies to the samples array as written.
 *   - duration_ns is endTime - startTime. time_ns stays 0: startTime is a
 *     monotonic clock reading, not wall time.
 *
 * Time attribution follows Chrome DevTools (CPUProfileDataModel): sample
 * i lasts from its timestamp to the next sample's, i.e. timeDeltas[i + 1]
 * (the first delta is the gap from startTime to the first sample and
 * belongs to no sample); the last sample, which has no successor, lasts
 * the mean of the others, DevTools' own estimate for it. A lone sample
 * lasts until endTime. Negative deltas, which real profiles contain when
 * the sampler's clock readings cross, count as 0 (speedscope's rule;
 * DevTools re-sorts such samples instead, which moves the same few
 * microseconds between neighbours). DevTools' "missing sample" repair,
 * which rewrites a lone "(program)" sample between two samples of the
 * same stack, is a display heuristic and is not applied.
 *
 * Profiles without timestamps, also as DevTools treats them: samples
 * without timeDeltas spread endTime - startTime evenly over the samples;
 * without samples, each node's hitCount is its count and its time is
 * hitCount * (endTime - startTime) / total hitCount.
 *
 * Memory. yajl reads the text in one streaming pass and only what the
 * profile needs is kept: per node its id, links, hit count and the index
 * of its (name, url) pair, each pair once; per sample its node id and its
 * time delta. The value of any other key is skipped as yajl reads it,
 * neither stored nor decoded, however large or deeply nested. Everything
 * kept is charged to the parse's memory budget (profile_mem_take) as it
 * is read, and the limits are checked as each value arrives, so a
 * hostile document (millions of nodes, a stack expansion, a huge name, a
 * sample array over max_samples) stops where it goes over, in bounded
 * memory, instead of after being held whole. The one cost outside the
 * budget is yajl's own: it decodes a string with escapes into its buffer
 * before the parser sees it, so a functionName or url costs its size once
 * before the length limit refuses it. yajl has no nesting limit (it keeps
 * a byte per level); JSONSCAN_MAX_DEPTH is jansson's, the parser used before.
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
#include "pipeline/v8.h"
#include "common/buf.h"

#include "pipeline/jsonscan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_NODE UINT32_MAX
#define SNIFF_WINDOW 4096
/* Object contexts never nest deeper than top > nodes > node > callFrame. */
#define CTX_MAX 8

typedef struct v8_node {
	int64_t id;
	int64_t parent_id; /* "parent" as written, when F_PARENT */
	int64_t hits;
	int64_t count;     /* samples summed into this node */
	int64_t time_ns;
	size_t kids_off;   /* its "children" ids: kids[kids_off, kids_off + nkids) */
	uint32_t nkids;
	uint32_t parent;   /* index of the parent node, NO_NODE for the root */
	uint32_t depth;    /* frames on its stack; the root has 0 */
	uint32_t name;     /* index into frames: its (functionName, url) */
	uint32_t func;     /* interned function (not set for the root) */
	uint8_t flags;
} v8_node;

enum {
	F_ID = 1, F_HITS = 2, F_PARENT = 4, F_FRAME = 8, F_ON_PATH = 16, F_DEPTH = 32,
};

/* Per node: the node, its id index and dense table entries, its path slot. */
#define NODE_COST (sizeof(v8_node) + sizeof(id_index) + 5 * sizeof(uint32_t))

typedef struct id_index {
	int64_t id;
	uint32_t index;
} id_index;


/* What the JSON value being read belongs to. */
typedef enum ctx {
	X_TOP, X_NODES, X_NODE, X_FRAME, X_KIDS, X_SAMPLES, X_DELTAS,
} ctx;

typedef enum key {
	K_OTHER, K_NODES, K_SAMPLES, K_DELTAS, K_START, K_END, K_HEAD,
	K_ID, K_HITS, K_CHILDREN, K_PARENT, K_FRAME, K_FNAME, K_URL,
} key;

static const char *const key_names[] = {
	[K_NODES] = "nodes", [K_SAMPLES] = "samples", [K_DELTAS] = "timeDeltas",
	[K_START] = "startTime", [K_END] = "endTime", [K_HEAD] = "head",
	[K_ID] = "id", [K_HITS] = "hitCount", [K_CHILDREN] = "children",
	[K_PARENT] = "parent", [K_FRAME] = "callFrame", [K_FNAME] = "functionName",
	[K_URL] = "url",
};

typedef struct v8_parser {
	jsonscan js;        /* the text, the error rules; js.p is the profile */
	ctx stack[CTX_MAX];
	uint32_t seen[CTX_MAX]; /* keys met in each open object, for duplicates */
	uint32_t nctx;
	key key;            /* the key whose value comes next */

	bool have_nodes, have_samples, have_deltas, have_head;
	v8_node *nodes;
	uint32_t nnodes;
	size_t nodes_cap;
	int64_t *kids;      /* every "children" id, node after node */
	size_t nkids, kids_cap;
	int64_t *samples;   /* node ids, at most max_samples */
	size_t nsamples, samples_seen, samples_cap;
	int64_t *deltas;    /* in nanoseconds, at most max_samples */
	size_t ndeltas, deltas_seen, deltas_cap;
	jsonscan_frames frames; /* each node's (functionName, url) */

	/* The node being read: its call frame's strings and its own. */
	buf fname, furl, nname, nurl;
	key node_bad;       /* a node-level name field that is not a string */

	id_index *ids;      /* sorted by id, for lookup */
	uint32_t *dense;    /* id - ids[0].id -> index, when ids are compact */
	uint64_t dense_len;
	uint32_t root;
	bool have_start, have_end;
	int64_t start_ns, end_ns;
} v8_parser;

/* "node 12", or "node at index 3" while its id is still unknown. */
static const char *node_label(v8_parser *ps, char *b, size_t n)
{
	const v8_node *nd = &ps->nodes[ps->nnodes - 1];

	if (nd->flags & F_ID)
		snprintf(b, n, "node %lld", (long long)nd->id);
	else
		snprintf(b, n, "node at index %u", ps->nnodes - 1);
	return b;
}

/*
 * A time in microseconds (an integer or real token) as nanoseconds.
 * Integers are the norm; a few writers emit fractions, which nanoseconds
 * keep. Returns 1, 0 with a JSON error set, or -1 when the value does
 * not fit 64 bits of nanoseconds.
 */
static int to_ns(v8_parser *ps, jsonscan_kind kind, const char *s, size_t n, int64_t *out)
{
	int64_t us;
	double ns;

	if (kind == JSONSCAN_INT) {
		if (!jsonscan_int(&ps->js, s, n, &us))
			return 0;
		return __builtin_mul_overflow(us, 1000, out) ? -1 : 1;
	}
	if (!jsonscan_real(&ps->js, s, n, &ns))
		return 0;
	ns *= 1000.0;
	/* 9.2e18 is just under INT64_MAX, so llround cannot overflow. */
	if (!isfinite(ns) || ns > 9.2e18 || ns < -9.2e18)
		return -1;
	*out = (int64_t)llround(ns);
	return 1;
}

/* The node a "nodes" element starts. */
static int node_start(v8_parser *ps)
{
	v8_node *n;
	int rc;

	if (ps->nnodes == NO_NODE - 1) {
		return jsonscan_stop(&ps->js, jsonscan_limit(&ps->js, "too many nodes"));
	}
	if ((rc = jsonscan_take(&ps->js, NODE_COST - sizeof(v8_node))) < 0 ||
	    (rc = jsonscan_grow(&ps->js, (void **)&ps->nodes, &ps->nodes_cap, ps->nnodes,
				sizeof(*ps->nodes))) < 0)
		return jsonscan_stop(&ps->js, rc);
	n = &ps->nodes[ps->nnodes++];
	memset(n, 0, sizeof(*n));
	n->parent = NO_NODE;
	buf_reset(&ps->fname);
	buf_reset(&ps->furl);
	buf_reset(&ps->nname);
	buf_reset(&ps->nurl);
	ps->node_bad = K_OTHER;
	return 1;
}

/* The (functionName, url) pair of the node just read, kept once. */
static int node_end(v8_parser *ps)
{
	v8_node *n = &ps->nodes[ps->nnodes - 1];
	const buf *fn = n->flags & F_FRAME ? &ps->fname : &ps->nname;
	const buf *url = n->flags & F_FRAME ? &ps->furl : &ps->nurl;
	int rc;

	if (!(n->flags & F_ID)) {
		jsonscan_defer(&ps->js, "node at index %u has no id", ps->nnodes - 1);
		return 1;
	}
	if (ps->node_bad != K_OTHER && !(n->flags & F_FRAME)) {
		jsonscan_defer(&ps->js, "node %lld: %s is not a string", (long long)n->id,
			       key_names[ps->node_bad]);
		return 1;
	}
	if ((rc = jsonscan_frames_keep(&ps->js, &ps->frames, fn, url, &n->name)) < 0)
		return jsonscan_stop(&ps->js, rc);
	return 1;
}

/* A container opens as the value of ps->key, or as an array element. */
static int container_value(v8_parser *ps, bool object)
{
	ctx c = ps->stack[ps->nctx - 1];
	ctx push = X_TOP;
	char nb[48];

	switch (c) {
	case X_TOP:
		if (ps->key == K_NODES && !object) {
			ps->have_nodes = true;
			push = X_NODES;
		} else if (ps->key == K_SAMPLES && !object) {
			ps->have_samples = true;
			push = X_SAMPLES;
		} else if (ps->key == K_DELTAS && !object) {
			ps->have_deltas = true;
			push = X_DELTAS;
		} else if (ps->key == K_NODES || ps->key == K_SAMPLES || ps->key == K_DELTAS) {
			jsonscan_defer(&ps->js, "\"%s\" is not an array", key_names[ps->key]);
			return 1;
		} else if (ps->key == K_START || ps->key == K_END) {
			jsonscan_defer(&ps->js, "%s is not a number of microseconds",
				       key_names[ps->key]);
			return 1;
		}
		break;
	case X_NODES:
		if (!object) {
			jsonscan_defer(&ps->js, "node at index %u is not an object", ps->nnodes);
			return 1;
		}
		if (!node_start(ps))
			return 0;
		push = X_NODE;
		break;
	case X_NODE:
		if (ps->key == K_CHILDREN && !object) {
			ps->nodes[ps->nnodes - 1].kids_off = ps->nkids;
			push = X_KIDS;
		} else if (ps->key == K_FRAME && object) {
			ps->nodes[ps->nnodes - 1].flags |= F_FRAME;
			push = X_FRAME;
		} else if (ps->key == K_ID) {
			jsonscan_defer(&ps->js, "node at index %u: id is not an integer",
				       ps->nnodes - 1);
			return 1;
		} else if (ps->key == K_HITS) {
			jsonscan_defer(&ps->js, "%s: hitCount is not an integer",
				       node_label(ps, nb, sizeof(nb)));
			return 1;
		} else if (ps->key == K_CHILDREN) {
			jsonscan_defer(&ps->js, "%s: children is not an array",
				       node_label(ps, nb, sizeof(nb)));
			return 1;
		} else if (ps->key == K_PARENT) {
			jsonscan_defer(&ps->js, "%s: parent is not an integer id",
				       node_label(ps, nb, sizeof(nb)));
			return 1;
		} else if (ps->key == K_FRAME) {
			jsonscan_defer(&ps->js, "%s: callFrame is not an object",
				       node_label(ps, nb, sizeof(nb)));
			return 1;
		} else if (ps->key == K_FNAME || ps->key == K_URL) {
			ps->node_bad = ps->key;
		}
		break;
	case X_FRAME:
		if (ps->key == K_FNAME || ps->key == K_URL) {
			jsonscan_defer(&ps->js, "%s: %s is not a string",
				       node_label(ps, nb, sizeof(nb)), key_names[ps->key]);
			return 1;
		}
		break;
	case X_KIDS:
		jsonscan_defer(&ps->js, "%s: child at index %zu is not an integer id",
			       node_label(ps, nb, sizeof(nb)),
			       ps->nkids - ps->nodes[ps->nnodes - 1].kids_off);
		return 1;
	case X_SAMPLES:
		jsonscan_defer(&ps->js, "sample %zu is not an integer node id", ps->samples_seen);
		return 1;
	case X_DELTAS:
		jsonscan_defer(&ps->js, "timeDelta %zu is not a number of microseconds",
			       ps->deltas_seen);
		return 1;
	}
	if (push == X_TOP) {
		/* A value nothing here reads: skip it whole. */
		jsonscan_skip(&ps->js);
		return 1;
	}
	ps->stack[ps->nctx] = push;
	ps->seen[ps->nctx] = 0;
	ps->nctx++;
	return 1;
}

/* A container to read opens (jsonscan_ops.open). */
static int on_open(void *arg, bool object)
{
	v8_parser *ps = arg;

	if (ps->nctx == 0) {
		if (!object) {
			jsonscan_defer(&ps->js,
				       "the top level is an array, not a cpuprofile object");
			return 1;
		}
		ps->stack[0] = X_TOP;
		ps->seen[0] = 0;
		ps->nctx = 1;
		return 1;
	}
	return container_value(ps, object);
}

static int on_close(void *arg)
{
	v8_parser *ps = arg;
	ctx c = ps->stack[--ps->nctx];

	if (c == X_NODE)
		return node_end(ps);
	if (c == X_KIDS) {
		v8_node *n = &ps->nodes[ps->nnodes - 1];
		n->nkids = (uint32_t)(ps->nkids - n->kids_off);
	} else if (c == X_SAMPLES && ps->samples_seen > ps->js.p->limits.max_samples) {
		unsigned long long max = (unsigned long long)ps->js.p->limits.max_samples;

		return jsonscan_stop(&ps->js,
				     jsonscan_limit(&ps->js, "%zu samples exceed the limit of %llu",
						    ps->samples_seen, max));
	}
	return 1;
}

static int on_key(void *arg, const unsigned char *s, size_t n)
{
	v8_parser *ps = arg;
	ctx c = ps->stack[ps->nctx - 1];
	key first = c == X_TOP ? K_NODES : c == X_NODE ? K_ID : K_FNAME;
	key last = c == X_TOP ? K_HEAD : K_URL;
	int k = jsonscan_key(&ps->js, key_names, first, last, s, n, &ps->seen[ps->nctx - 1]);

	if (k < 0)
		return 0;
	ps->key = (key)k;
	if (ps->key == K_HEAD)
		ps->have_head = true;
	if (ps->key == K_OTHER || ps->key == K_HEAD)
		jsonscan_values_off(&ps->js);
	return 1;
}

/* A node id in an array: a child or a sample. */
static int id_element(v8_parser *ps, int64_t **arr, size_t *n, size_t *cap,
		      int64_t id)
{
	int rc;

	if ((rc = jsonscan_grow(&ps->js, (void **)arr, cap, *n, sizeof(**arr))) < 0)
		return jsonscan_stop(&ps->js, rc);
	(*arr)[(*n)++] = id;
	return 1;
}

/*
 * A scalar: `s`, `n` is the text of a number or the bytes of a string.
 * Numbers are converted only where a value is read, so one out of range
 * in a skipped value is no error.
 */
static int on_scalar(void *arg, jsonscan_kind kind, const char *s, size_t n)
{
	v8_parser *ps = arg;
	ctx c;
	v8_node *nd;
	int64_t v;
	char nb[48];
	int r;

	if (ps->nctx == 0) {
		jsonscan_defer(&ps->js, "the top level is not a cpuprofile object");
		return 1;
	}
	c = ps->stack[ps->nctx - 1];
	nd = ps->nnodes ? &ps->nodes[ps->nnodes - 1] : NULL;
	switch (c) {
	case X_TOP:
		if (ps->key == K_START || ps->key == K_END) {
			int64_t *dst = ps->key == K_START ? &ps->start_ns : &ps->end_ns;

			if ((kind != JSONSCAN_INT && kind != JSONSCAN_REAL) ||
			    (r = to_ns(ps, kind, s, n, dst)) < 0) {
				jsonscan_defer(&ps->js, "%s is not a number of microseconds",
					       key_names[ps->key]);
				return 1;
			}
			if (r == 0)
				return 0;
			if (ps->key == K_START)
				ps->have_start = true;
			else
				ps->have_end = true;
		} else if (ps->key == K_NODES || ps->key == K_SAMPLES || ps->key == K_DELTAS) {
			jsonscan_defer(&ps->js, "\"%s\" is not an array", key_names[ps->key]);
		}
		return 1;
	case X_NODES:
		jsonscan_defer(&ps->js, "node at index %u is not an object", ps->nnodes);
		return 1;
	case X_NODE:
		switch (ps->key) {
		case K_ID:
			if (kind != JSONSCAN_INT) {
				jsonscan_defer(&ps->js, "node at index %u: id is not an integer",
					       ps->nnodes - 1);
				return 1;
			}
			if (!jsonscan_int(&ps->js, s, n, &nd->id))
				return 0;
			nd->flags |= F_ID;
			return 1;
		case K_HITS:
			if (kind != JSONSCAN_INT) {
				jsonscan_defer(&ps->js, "%s: hitCount is not an integer",
					       node_label(ps, nb, sizeof(nb)));
				return 1;
			}
			if (!jsonscan_int(&ps->js, s, n, &v))
				return 0;
			if (v < 0) {
				jsonscan_defer(&ps->js, "%s: negative hitCount %lld",
					       node_label(ps, nb, sizeof(nb)), (long long)v);
				return 1;
			}
			nd->hits = v;
			nd->flags |= F_HITS;
			return 1;
		case K_PARENT:
			if (kind != JSONSCAN_INT) {
				jsonscan_defer(&ps->js, "%s: parent is not an integer id",
					       node_label(ps, nb, sizeof(nb)));
				return 1;
			}
			if (!jsonscan_int(&ps->js, s, n, &nd->parent_id))
				return 0;
			nd->flags |= F_PARENT;
			return 1;
		case K_CHILDREN:
			jsonscan_defer(&ps->js, "%s: children is not an array",
				       node_label(ps, nb, sizeof(nb)));
			return 1;
		case K_FRAME:
			jsonscan_defer(&ps->js, "%s: callFrame is not an object",
				       node_label(ps, nb, sizeof(nb)));
			return 1;
		case K_FNAME:
		case K_URL:
			/* Old writers put the call frame's fields on the node. */
			if (kind != JSONSCAN_STRING) {
				ps->node_bad = ps->key;
				return 1;
			}
			return jsonscan_name(&ps->js, ps->key == K_FNAME ? &ps->nname : &ps->nurl,
					     s, n);
		default:
			return 1;
		}
	case X_FRAME:
		if (ps->key != K_FNAME && ps->key != K_URL)
			return 1;
		if (kind != JSONSCAN_STRING) {
			jsonscan_defer(&ps->js, "%s: %s is not a string",
				       node_label(ps, nb, sizeof(nb)), key_names[ps->key]);
			return 1;
		}
		return jsonscan_name(&ps->js, ps->key == K_FNAME ? &ps->fname : &ps->furl, s, n);
	case X_KIDS:
		if (kind != JSONSCAN_INT) {
			jsonscan_defer(&ps->js, "%s: child at index %zu is not an integer id",
				       node_label(ps, nb, sizeof(nb)), ps->nkids - nd->kids_off);
			return 1;
		}
		if (!jsonscan_int(&ps->js, s, n, &v))
			return 0;
		return id_element(ps, &ps->kids, &ps->nkids, &ps->kids_cap, v);
	case X_SAMPLES:
		if (kind != JSONSCAN_INT) {
			jsonscan_defer(&ps->js, "sample %zu is not an integer node id",
				       ps->samples_seen);
			return 1;
		}
		if (!jsonscan_int(&ps->js, s, n, &v))
			return 0;
		/* Past the limit only count, for the message at the array's end. */
		if (ps->samples_seen++ >= ps->js.p->limits.max_samples)
			return 1;
		return id_element(ps, &ps->samples, &ps->nsamples, &ps->samples_cap, v);
	case X_DELTAS:
		if ((kind != JSONSCAN_INT && kind != JSONSCAN_REAL) ||
		    (r = to_ns(ps, kind, s, n, &v)) < 0) {
			jsonscan_defer(&ps->js, "timeDelta %zu is not a number of microseconds",
				       ps->deltas_seen);
			return 1;
		}
		if (r == 0)
			return 0;
		/* As many as samples can be kept; a longer array is a mismatch. */
		if (ps->deltas_seen++ >= ps->js.p->limits.max_samples)
			return 1;
		return id_element(ps, &ps->deltas, &ps->ndeltas, &ps->deltas_cap, v);
	}
	return 1;
}

/* ---- after the text: the tree, the times, the stacks ----------------- */

static int id_cmp(const void *a, const void *b)
{
	const id_index *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* Index of the node with `id`, or NO_NODE. */
static uint32_t find_node(const v8_parser *ps, int64_t id)
{
	size_t lo = 0, hi = ps->nnodes;

	if (ps->dense) {
		/* Unsigned: an id below the first wraps around and misses. */
		uint64_t k = (uint64_t)id - (uint64_t)ps->ids[0].id;
		return k < ps->dense_len ? ps->dense[k] : NO_NODE;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ps->ids[mid].id == id)
			return ps->ids[mid].index;
		if (ps->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NO_NODE;
}

/*
 * V8 numbers nodes 1..n, so a table indexed by id usually replaces the
 * binary search that each of the (many) samples would otherwise need.
 * Only when the ids are compact: the table never outgrows 4 entries per
 * node, which NODE_COST has charged.
 */
static int index_dense(v8_parser *ps)
{
	uint64_t span = (uint64_t)ps->ids[ps->nnodes - 1].id - (uint64_t)ps->ids[0].id;

	if (span >= 4 * (uint64_t)ps->nnodes + 64)
		return 0;
	ps->dense_len = span + 1;
	if (!(ps->dense = malloc(ps->dense_len * sizeof(*ps->dense))))
		return jsonscan_nomem(&ps->js);
	for (uint64_t k = 0; k < ps->dense_len; k++)
		ps->dense[k] = NO_NODE;
	for (uint32_t i = 0; i < ps->nnodes; i++)
		ps->dense[(uint64_t)ps->ids[i].id - (uint64_t)ps->ids[0].id] = ps->ids[i].index;
	return 0;
}

/* Index the nodes by id; ids are unique. */
static int index_nodes(v8_parser *ps)
{
	if (!(ps->ids = malloc(ps->nnodes * sizeof(*ps->ids))))
		return jsonscan_nomem(&ps->js);
	for (uint32_t i = 0; i < ps->nnodes; i++) {
		ps->ids[i].id = ps->nodes[i].id;
		ps->ids[i].index = i;
	}
	qsort(ps->ids, ps->nnodes, sizeof(*ps->ids), id_cmp);
	for (uint32_t i = 1; i < ps->nnodes; i++)
		if (ps->ids[i].id == ps->ids[i - 1].id)
			return jsonscan_bad(&ps->js, "duplicate node id %lld",
					    (long long)ps->ids[i].id);
	return index_dense(ps);
}

static int set_parent(v8_parser *ps, uint32_t child, uint32_t parent)
{
	v8_node *c = &ps->nodes[child];

	if (child == parent)
		return jsonscan_bad(&ps->js, "cycle at node %lld: it is its own parent",
				    (long long)c->id);
	if (c->parent == NO_NODE) {
		c->parent = parent;
		return 0;
	}
	if (c->parent == parent)
		return jsonscan_bad(&ps->js, "node %lld is listed twice as a child of node %lld",
				    (long long)c->id, (long long)ps->nodes[parent].id);
	return jsonscan_bad(&ps->js,
			    "node %lld is reached twice, as a child of node %lld and of node %lld",
			    (long long)c->id, (long long)ps->nodes[c->parent].id,
			    (long long)ps->nodes[parent].id);
}

/* Parent links from "children" lists and "parent" fields. */
static int link_nodes(v8_parser *ps)
{
	int rc;

	for (uint32_t i = 0; i < ps->nnodes; i++) {
		const v8_node *n = &ps->nodes[i];

		for (uint32_t k = 0; k < n->nkids; k++) {
			int64_t id = ps->kids[n->kids_off + k];
			uint32_t ci;

			if ((ci = find_node(ps, id)) == NO_NODE)
				return jsonscan_bad(&ps->js,
						    "node %lld lists child %lld, "
						    "which does not exist",
						    (long long)n->id, (long long)id);
			if ((rc = set_parent(ps, ci, i)) < 0)
				return rc;
		}
	}
	for (uint32_t i = 0; i < ps->nnodes; i++) {
		v8_node *n = &ps->nodes[i];
		uint32_t pi;

		if (!(n->flags & F_PARENT))
			continue;
		if ((pi = find_node(ps, n->parent_id)) == NO_NODE)
			return jsonscan_bad(&ps->js,
					    "node %lld names parent %lld, which does not exist",
					    (long long)n->id, (long long)n->parent_id);
		/* The same link given both ways is fine; a second parent is not. */
		if (n->parent == pi)
			continue;
		if ((rc = set_parent(ps, i, pi)) < 0)
			return rc;
	}
	return 0;
}

/*
 * Find the one root and every node's depth, walking parent links with an
 * explicit path so that a long chain cannot exhaust the C stack. A node
 * met again on the path it started is a cycle.
 */
static int compute_depths(v8_parser *ps)
{
	uint32_t *path = NULL;
	uint32_t nroots = 0, other_root = NO_NODE;
	int rc = 0;

	ps->root = NO_NODE;
	for (uint32_t i = 0; i < ps->nnodes; i++) {
		if (ps->nodes[i].parent != NO_NODE)
			continue;
		if (nroots++ == 0)
			ps->root = i;
		else if (other_root == NO_NODE)
			other_root = i;
	}
	if (nroots > 1)
		return jsonscan_bad(
			&ps->js,
			"%u nodes have no parent (node %lld and node %lld): a profile has one root",
			nroots, (long long)ps->nodes[ps->root].id,
			(long long)ps->nodes[other_root].id);
	if (!(path = malloc(ps->nnodes * sizeof(*path))))
		return jsonscan_nomem(&ps->js);
	if (ps->root != NO_NODE)
		ps->nodes[ps->root].flags |= F_DEPTH;
	for (uint32_t i = 0; i < ps->nnodes; i++) {
		uint32_t len = 0, j = i;

		while (!(ps->nodes[j].flags & F_DEPTH)) {
			if (ps->nodes[j].flags & F_ON_PATH) {
				rc = jsonscan_bad(&ps->js, "cycle at node %lld",
						  (long long)ps->nodes[j].id);
				goto out;
			}
			ps->nodes[j].flags |= F_ON_PATH;
			path[len++] = j;
			/* Only the root lacks a parent, and its depth is known. */
			j = ps->nodes[j].parent;
		}
		while (len > 0) {
			v8_node *n = &ps->nodes[path[--len]];
			n->depth = ps->nodes[n->parent].depth + 1;
			n->flags = (uint8_t)((n->flags | F_DEPTH) & ~F_ON_PATH);
		}
	}
out:
	free(path);
	return rc;
}

/* Intern every node but the root as a function, in node order. */
static int intern_funcs(v8_parser *ps)
{
	int rc;

	for (uint32_t i = 0; i < ps->nnodes; i++) {
		v8_node *n = &ps->nodes[i];

		if (i == ps->root)
			continue;
		if ((rc = jsonscan_frames_intern(&ps->js, &ps->frames, n->name, &n->func)) < 0)
			return rc;
	}
	return 0;
}

static int add_to_node(v8_parser *ps, v8_node *n, int64_t count, int64_t t)
{
	if (__builtin_add_overflow(n->count, count, &n->count) ||
	    __builtin_add_overflow(n->time_ns, t, &n->time_ns))
		return jsonscan_bad(&ps->js, "the time of node %lld overflows 64 bits",
				    (long long)n->id);
	return 0;
}

static int check_times(v8_parser *ps)
{
	if (ps->have_start && ps->have_end) {
		if (ps->end_ns < ps->start_ns)
			return jsonscan_bad(&ps->js, "endTime is before startTime");
		if (__builtin_sub_overflow(ps->end_ns, ps->start_ns, &ps->js.p->duration_ns))
			return jsonscan_bad(&ps->js, "endTime - startTime overflows 64 bits");
	}
	return 0;
}

/* Per-sample time by the rule in the header comment, summed per node. */
static int read_samples(v8_parser *ps)
{
	size_t n = ps->nsamples;
	const int64_t *deltas = ps->have_deltas ? ps->deltas : NULL;
	uint32_t cached = NO_NODE;
	int64_t cached_id = 0, sum = 0, even = 0;
	int rc;

	if (ps->have_deltas && ps->deltas_seen != n)
		return jsonscan_bad(&ps->js, "%zu samples but %zu timeDeltas", n, ps->deltas_seen);
	if (!deltas && n > 0)
		even = ps->js.p->duration_ns / (int64_t)n;
	for (size_t i = 0; i < n; i++) {
		int64_t id = ps->samples[i], t = even;

		if (cached == NO_NODE || id != cached_id) {
			if ((cached = find_node(ps, id)) == NO_NODE)
				return jsonscan_bad(&ps->js,
						    "sample %zu refers to node %lld, "
						    "which does not exist",
						    i, (long long)id);
			cached_id = id;
		}
		if (deltas) {
			int64_t d;

			if (i + 1 < n) {
				t = deltas[i + 1] > 0 ? deltas[i + 1] : 0;
				if (__builtin_add_overflow(sum, t, &sum))
					return jsonscan_bad(&ps->js, "timeDeltas overflow 64 bits");
			} else if (n > 1) {
				t = sum / (int64_t)(n - 1);
			} else if (ps->have_start && ps->have_end &&
				   !__builtin_add_overflow(ps->start_ns, deltas[0], &d) &&
				   !__builtin_sub_overflow(ps->end_ns, d, &t)) {
				t = t > 0 ? t : 0;
			} else {
				t = 0;
			}
		}
		if ((rc = add_to_node(ps, &ps->nodes[cached], 1, t)) < 0)
			return rc;
	}
	return 0;
}

/* No samples: hitCount per node, time spread as DevTools' tree view does. */
static int read_hit_counts(v8_parser *ps)
{
	int64_t total = 0;
	int rc;

	for (uint32_t i = 0; i < ps->nnodes; i++) {
		if (!(ps->nodes[i].flags & F_HITS))
			return jsonscan_bad(&ps->js,
					    "node %lld has no hitCount and the profile "
					    "has no samples",
					    (long long)ps->nodes[i].id);
		if (__builtin_add_overflow(total, ps->nodes[i].hits, &total))
			return jsonscan_bad(&ps->js, "hitCounts overflow 64 bits");
	}
	for (uint32_t i = 0; i < ps->nnodes; i++) {
		v8_node *n = &ps->nodes[i];
		/* long double: duration * hits may not fit 64 bits. */
		int64_t t =
			total ? (int64_t)((long double)ps->js.p->duration_ns * n->hits / total) : 0;

		if ((rc = add_to_node(ps, n, n->hits, t)) < 0)
			return rc;
	}
	return 0;
}

/* Is node `i` V8's "(idle)", the thread waiting for work (see the top)? */
static bool is_idle(const v8_parser *ps, uint32_t i)
{
	const v8_node *n = &ps->nodes[i];
	const profile_func *f;

	if (i == ps->root || n->parent != ps->root)
		return false;
	f = &ps->js.p->funcs[n->func];
	return strcmp(f->name, "(idle)") == 0 && f->file[0] == '\0';
}

/* One profile sample per node that was sampled, root first; "(idle)" is none. */
static int emit_samples(v8_parser *ps)
{
	uint32_t *stack = NULL, max_depth = 0;
	int rc = 0;

	for (uint32_t i = 0; i < ps->nnodes; i++)
		if ((ps->nodes[i].count || ps->nodes[i].time_ns) &&
		    ps->nodes[i].depth > max_depth)
			max_depth = ps->nodes[i].depth;
	/*
	 * Bounded by the node count, hence by the input. profile_add_sample
	 * enforces max_depth and the memory budget; the first stack over
	 * either ends the parse, so building stacks costs at most max_depth
	 * per node plus one long walk.
	 */
	/* One spare entry: never a NULL stack, even when only the root is hit. */
	if (!(stack = malloc(((size_t)max_depth + 1) * sizeof(*stack))))
		return jsonscan_nomem(&ps->js);
	for (uint32_t i = 0; i < ps->nnodes; i++) {
		const v8_node *n = &ps->nodes[i];
		int64_t values[2] = {n->count, n->time_ns};
		uint32_t j = i;

		if ((!n->count && !n->time_ns) || is_idle(ps, i))
			continue;
		for (uint32_t k = n->depth; k > 0; k--) {
			stack[k - 1] = ps->nodes[j].func;
			j = ps->nodes[j].parent;
		}
		if ((rc = profile_add_sample(ps->js.p, stack, n->depth, values, ps->js.err)) < 0)
			goto out;
	}
out:
	free(stack);
	return rc;
}

/* What the whole text must have had, checked once it was read. */
static int check_shape(v8_parser *ps)
{
	if (!ps->have_nodes)
		return jsonscan_bad(&ps->js, ps->have_head ?
				    "the legacy \"head\" tree format is not supported" :
				    "no \"nodes\" member: not a cpuprofile");
	if (ps->nnodes == 0)
		return jsonscan_bad(&ps->js, "\"nodes\" is empty: a profile has at least a root");
	if (ps->have_deltas && !ps->have_samples)
		return jsonscan_bad(&ps->js, "\"timeDeltas\" without \"samples\"");
	return 0;
}

/* Free what only reading and linking needed, and give its memory back. */
static void drop_scratch(v8_parser *ps)
{
	profile_mem_give(ps->js.p, ps->nkids * sizeof(*ps->kids));
	free(ps->kids);
	ps->kids = NULL;
	ps->nkids = 0;
	jsonscan_frames_drop(&ps->js, &ps->frames);
}

/* Free the samples once they are summed into the nodes. */
static void drop_samples(v8_parser *ps)
{
	profile_mem_give(ps->js.p, (ps->nsamples + ps->ndeltas) * sizeof(int64_t));
	free(ps->samples);
	free(ps->deltas);
	ps->samples = ps->deltas = NULL;
	ps->nsamples = ps->ndeltas = 0;
}

static void parser_release(v8_parser *ps)
{
	jsonscan_release(&ps->js);
	free(ps->nodes);
	free(ps->kids);
	free(ps->samples);
	free(ps->deltas);
	jsonscan_frames_release(&ps->frames);
	buf_release(&ps->fname);
	buf_release(&ps->furl);
	buf_release(&ps->nname);
	buf_release(&ps->nurl);
	free(ps->ids);
	free(ps->dense);
}

int v8_parse(profile **out, const uint8_t *data, size_t len,
	     const char *name, const profile_limits *lim, pr_error *err)
{
	static const char *const types[] = {"samples", "cpu"};
	static const char *const units[] = {"count", "nanoseconds"};
	static const jsonscan_ops ops = {on_open, on_close, on_key, on_scalar};
	v8_parser ps;
	int rc;

	*out = NULL;
	memset(&ps, 0, sizeof(ps));
	jsonscan_init(&ps.js, name, err, data, len, &ops, &ps);
	jsonscan_frames_init(&ps.frames);
	buf_init(&ps.fname, SIZE_MAX);
	buf_init(&ps.furl, SIZE_MAX);
	buf_init(&ps.nname, SIZE_MAX);
	buf_init(&ps.nurl, SIZE_MAX);
	if ((rc = jsonscan_begin(&ps.js, PROFILE_FMT_V8, lim)) < 0 ||
	    (rc = jsonscan_read(&ps.js)) < 0 ||
	    (rc = check_shape(&ps)) < 0 ||
	    (rc = index_nodes(&ps)) < 0 ||
	    (rc = link_nodes(&ps)) < 0 ||
	    (rc = compute_depths(&ps)) < 0 ||
	    (rc = profile_set_value_types(ps.js.p, 2, types, units, err)) < 0 ||
	    (rc = intern_funcs(&ps)) < 0 ||
	    (rc = check_times(&ps)) < 0)
		goto out;
	drop_scratch(&ps);
	if (ps.have_samples) {
		if ((rc = read_samples(&ps)) < 0)
			goto out;
		drop_samples(&ps);
	} else if ((rc = read_hit_counts(&ps)) < 0) {
		goto out;
	}
	if ((rc = emit_samples(&ps)) < 0)
		goto out;
	profile_pick_primary(ps.js.p, "cpu");
	*out = ps.js.p;
	ps.js.p = NULL;
out:
	parser_release(&ps);
	profile_free(ps.js.p);
	return rc;
}

bool v8_sniff(const uint8_t *data, size_t len)
{
	static const char key[] = "\"nodes\"";
	size_t i = jsonscan_bom(data, len), end;

	while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' ||
			   data[i] == '\r'))
		i++;
	if (i >= len || data[i] != '{')
		return false;
	end = len - i > SNIFF_WINDOW ? i + SNIFF_WINDOW : len;
	for (; i + sizeof(key) - 1 <= end; i++)
		if (memcmp(data + i, key, sizeof(key) - 1) == 0)
			return true;
	return false;
}

/*
 * Does s[0..n) end in ":LINE:COLUMN"? *out: the length before it, which
 * is 0 for code of no script: eval and new Function (":1:18").
 */
static bool before_line_column(size_t *out, const char *s, size_t n)
{
	size_t i = n;

	for (int part = 0; part < 2; part++) {
		size_t end = i;
		while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
			i--;
		if (i == end || i == 0 || s[i - 1] != ':')
			return false;
		i--;
	}
	*out = i;
	return true;
}

bool v8_code_name(const char *s, size_t n, const char **name, size_t *name_len,
		  const char **file, size_t *file_len)
{
	/* V8's tags for JavaScript code; builtins, stubs and handlers keep their names. */
	static const char *const tags[] = {"JS:", "LazyCompile:", "Function:",
					   "InterpretedFunction:", "Script:", "Eval:"};
	size_t i = 0, sp, f;

	for (size_t t = 0; t < sizeof(tags) / sizeof(tags[0]) && !i; t++) {
		size_t k = strlen(tags[t]);
		if (n > k && memcmp(s, tags[t], k) == 0 && s[k] != ':')
			i = k;
	}
	if (!i)
		return false;
	if (i < n && (s[i] == '~' || s[i] == '^' || s[i] == '+' || s[i] == '*'))
		i++;
	/* The location is the last word; a name may have spaces ("get total"). */
	for (sp = n; sp > i && s[sp - 1] != ' '; sp--)
		;
	if (sp == i || !before_line_column(&f, s + sp, n - sp))
		return false;
	*file = s + sp;
	*file_len = f;
	*name = s + i;
	*name_len = sp - 1 - i;
	while (*name_len && (*name)[*name_len - 1] == ' ')
		(*name_len)--;
	if (!*name_len) {
		*name = "(anonymous)";
		*name_len = strlen(*name);
	}
	return true;
}
