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
 *   - "(program)", "(idle)" and "(garbage collector)" stay frames. The
 *     root node is not a frame: a stack runs from the root's child down to
 *     the sampled node (a sample of the root itself has an empty stack and
 *     only counts toward the total).
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
 */
#define _POSIX_C_SOURCE 200809L
#include "v8.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_NODE UINT32_MAX
#define SNIFF_WINDOW 4096

typedef struct v8_node {
	int64_t id;
	uint32_t parent;  /* index of the parent node, NO_NODE for the root */
	uint32_t depth;   /* frames on its stack; the root has 0 */
	uint32_t func;    /* interned function (not set for the root) */
	bool on_path;     /* cycle detection while depth is being computed */
	bool depth_known;
	bool has_hits;    /* hitCount present */
	int64_t hits;
	int64_t count;    /* samples summed into this node */
	int64_t time_ns;
	json_t *json;     /* borrowed from the document */
} v8_node;

typedef struct id_index {
	int64_t id;
	uint32_t index;
} id_index;

typedef struct v8_parser {
	const char *name;
	pr_error *err;
	profile *p;
	v8_node *nodes;
	uint32_t nnodes;
	id_index *ids;    /* sorted by id, for lookup */
	uint32_t *dense;  /* id - ids[0].id -> index, when ids are compact */
	uint64_t dense_len;
	uint32_t root;
	bool have_start, have_end;
	int64_t start_ns, end_ns;
} v8_parser;

static int bad(v8_parser *ps, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int bad(v8_parser *ps, const char *fmt, ...)
{
	char reason[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	return pr_error_set(ps->err, PR_EDATA, "cannot parse '%s': %s", ps->name,
			    reason);
}

static int nomem(v8_parser *ps)
{
	return pr_error_set(ps->err, PR_ENOMEM, "cannot parse '%s': out of memory",
			    ps->name);
}

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
 * A time in microseconds as nanoseconds. Integers are the norm; a few
 * writers emit fractions, which nanoseconds keep. Returns false when the
 * value is not a number or does not fit.
 */
static bool time_ns(const json_t *v, int64_t *out)
{
	if (json_is_integer(v)) {
		json_int_t us = json_integer_value(v);
		return !__builtin_mul_overflow((int64_t)us, 1000, out);
	}
	if (json_is_real(v)) {
		double ns = json_real_value(v) * 1000.0;
		/* 9.2e18 is just under INT64_MAX, so llround cannot overflow. */
		if (!isfinite(ns) || ns > 9.2e18 || ns < -9.2e18)
			return false;
		*out = (int64_t)llround(ns);
		return true;
	}
	return false;
}

/* A string member, "" when absent; PR_EDATA when present but no string. */
static int get_string(v8_parser *ps, const json_t *obj, const char *key,
		      int64_t node_id, const char **s, size_t *len)
{
	const json_t *v = json_object_get(obj, key);

	*s = "";
	*len = 0;
	if (!v)
		return 0;
	if (!json_is_string(v))
		return bad(ps, "node %lld: %s is not a string", (long long)node_id, key);
	*s = json_string_value(v);
	*len = json_string_length(v);
	return 0;
}

/*
 * V8 numbers nodes 1..n, so a table indexed by id usually replaces the
 * binary search that each of the (many) samples would otherwise need.
 * Only when the ids are compact: the table never outgrows 4 entries per
 * node, so its size stays bounded by the input.
 */
static int index_dense(v8_parser *ps)
{
	uint64_t span = (uint64_t)ps->ids[ps->nnodes - 1].id - (uint64_t)ps->ids[0].id;

	if (span >= 4 * (uint64_t)ps->nnodes + 64)
		return 0;
	ps->dense_len = span + 1;
	if (!(ps->dense = malloc(ps->dense_len * sizeof(*ps->dense))))
		return nomem(ps);
	for (uint64_t k = 0; k < ps->dense_len; k++)
		ps->dense[k] = NO_NODE;
	for (uint32_t i = 0; i < ps->nnodes; i++)
		ps->dense[(uint64_t)ps->ids[i].id - (uint64_t)ps->ids[0].id] = ps->ids[i].index;
	return 0;
}

/* Read the scalar fields of every node and index them by id. */
static int read_nodes(v8_parser *ps, const json_t *nodes)
{
	for (uint32_t i = 0; i < ps->nnodes; i++) {
		v8_node *n = &ps->nodes[i];
		json_t *obj = json_array_get(nodes, i);
		json_t *id, *hits;

		n->parent = NO_NODE;
		n->json = obj;
		if (!json_is_object(obj))
			return bad(ps, "node at index %u is not an object", i);
		id = json_object_get(obj, "id");
		if (!id)
			return bad(ps, "node at index %u has no id", i);
		if (!json_is_integer(id))
			return bad(ps, "node at index %u: id is not an integer", i);
		n->id = json_integer_value(id);
		if ((hits = json_object_get(obj, "hitCount"))) {
			if (!json_is_integer(hits))
				return bad(ps, "node %lld: hitCount is not an integer",
					   (long long)n->id);
			if (json_integer_value(hits) < 0)
				return bad(ps, "node %lld: negative hitCount %lld",
					   (long long)n->id,
					   (long long)json_integer_value(hits));
			n->hits = json_integer_value(hits);
			n->has_hits = true;
		}
		ps->ids[i].id = n->id;
		ps->ids[i].index = i;
	}
	qsort(ps->ids, ps->nnodes, sizeof(*ps->ids), id_cmp);
	for (uint32_t i = 1; i < ps->nnodes; i++)
		if (ps->ids[i].id == ps->ids[i - 1].id)
			return bad(ps, "duplicate node id %lld", (long long)ps->ids[i].id);
	return index_dense(ps);
}

static int set_parent(v8_parser *ps, uint32_t child, uint32_t parent)
{
	v8_node *c = &ps->nodes[child];

	if (child == parent)
		return bad(ps, "cycle at node %lld: it is its own parent",
			   (long long)c->id);
	if (c->parent == NO_NODE) {
		c->parent = parent;
		return 0;
	}
	if (c->parent == parent)
		return bad(ps, "node %lld is listed twice as a child of node %lld",
			   (long long)c->id, (long long)ps->nodes[parent].id);
	return bad(ps, "node %lld is reached twice, as a child of node %lld and of node %lld",
		   (long long)c->id, (long long)ps->nodes[c->parent].id,
		   (long long)ps->nodes[parent].id);
}

/* Parent links from "children" lists and "parent" fields. */
static int link_nodes(v8_parser *ps)
{
	int rc;

	for (uint32_t i = 0; i < ps->nnodes; i++) {
		v8_node *n = &ps->nodes[i];
		json_t *children = json_object_get(n->json, "children");
		json_t *c;
		size_t k;

		if (!children)
			continue;
		if (!json_is_array(children))
			return bad(ps, "node %lld: children is not an array", (long long)n->id);
		json_array_foreach(children, k, c) {
			uint32_t ci;

			if (!json_is_integer(c))
				return bad(ps, "node %lld: child at index %zu is not an integer id",
					   (long long)n->id, k);
			if ((ci = find_node(ps, json_integer_value(c))) == NO_NODE)
				return bad(ps, "node %lld lists child %lld, which does not exist",
					   (long long)n->id, (long long)json_integer_value(c));
			if ((rc = set_parent(ps, ci, i)) < 0)
				return rc;
		}
	}
	for (uint32_t i = 0; i < ps->nnodes; i++) {
		v8_node *n = &ps->nodes[i];
		json_t *parent = json_object_get(n->json, "parent");
		uint32_t pi;

		if (!parent)
			continue;
		if (!json_is_integer(parent))
			return bad(ps, "node %lld: parent is not an integer id", (long long)n->id);
		if ((pi = find_node(ps, json_integer_value(parent))) == NO_NODE)
			return bad(ps, "node %lld names parent %lld, which does not exist",
				   (long long)n->id, (long long)json_integer_value(parent));
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
		return bad(ps, "%u nodes have no parent (node %lld and node %lld): a profile has one root",
			   nroots, (long long)ps->nodes[ps->root].id,
			   (long long)ps->nodes[other_root].id);
	if (!(path = malloc(ps->nnodes * sizeof(*path))))
		return nomem(ps);
	if (ps->root != NO_NODE) {
		ps->nodes[ps->root].depth = 0;
		ps->nodes[ps->root].depth_known = true;
	}
	for (uint32_t i = 0; i < ps->nnodes; i++) {
		uint32_t len = 0, j = i;

		while (!ps->nodes[j].depth_known) {
			if (ps->nodes[j].on_path) {
				rc = bad(ps, "cycle at node %lld", (long long)ps->nodes[j].id);
				goto out;
			}
			ps->nodes[j].on_path = true;
			path[len++] = j;
			/* Only the root lacks a parent, and its depth is known. */
			j = ps->nodes[j].parent;
		}
		while (len > 0) {
			v8_node *n = &ps->nodes[path[--len]];
			n->depth = ps->nodes[n->parent].depth + 1;
			n->depth_known = true;
			n->on_path = false;
		}
	}
out:
	free(path);
	return rc;
}

/* Intern every node but the root as a function. */
static int intern_funcs(v8_parser *ps)
{
	int rc;

	for (uint32_t i = 0; i < ps->nnodes; i++) {
		v8_node *n = &ps->nodes[i];
		const json_t *frame = json_object_get(n->json, "callFrame");
		const char *fname, *url;
		size_t fname_len, url_len;

		if (!frame) {
			/* Old writers put the call frame's fields on the node. */
			frame = n->json;
		} else if (!json_is_object(frame)) {
			return bad(ps, "node %lld: callFrame is not an object", (long long)n->id);
		}
		if ((rc = get_string(ps, frame, "functionName", n->id, &fname, &fname_len)) < 0 ||
		    (rc = get_string(ps, frame, "url", n->id, &url, &url_len)) < 0)
			return rc;
		if (i == ps->root)
			continue;
		if (fname_len == 0) {
			fname = "(anonymous)";
			fname_len = strlen(fname);
		}
		if ((rc = profile_intern(ps->p, &n->func, fname, fname_len, url, url_len,
					 ps->err)) < 0)
			return rc;
	}
	return 0;
}

static int add_to_node(v8_parser *ps, v8_node *n, int64_t count, int64_t t)
{
	if (__builtin_add_overflow(n->count, count, &n->count) ||
	    __builtin_add_overflow(n->time_ns, t, &n->time_ns))
		return bad(ps, "the time of node %lld overflows 64 bits", (long long)n->id);
	return 0;
}

static int read_times(v8_parser *ps, const json_t *root)
{
	const json_t *start = json_object_get(root, "startTime");
	const json_t *end = json_object_get(root, "endTime");

	if (start) {
		if (!time_ns(start, &ps->start_ns))
			return bad(ps, "startTime is not a number of microseconds");
		ps->have_start = true;
	}
	if (end) {
		if (!time_ns(end, &ps->end_ns))
			return bad(ps, "endTime is not a number of microseconds");
		ps->have_end = true;
	}
	if (ps->have_start && ps->have_end) {
		if (ps->end_ns < ps->start_ns)
			return bad(ps, "endTime is before startTime");
		if (__builtin_sub_overflow(ps->end_ns, ps->start_ns, &ps->p->duration_ns))
			return bad(ps, "endTime - startTime overflows 64 bits");
	}
	return 0;
}

/* Per-sample time by the rule in the header comment, summed per node. */
static int read_samples(v8_parser *ps, const json_t *samples, const json_t *deltas)
{
	size_t n = json_array_size(samples);
	uint32_t cached = NO_NODE;
	int64_t cached_id = 0, sum = 0, even = 0;
	int rc;

	if (n > ps->p->limits.max_samples)
		return pr_error_set(ps->err, PR_ELIMIT,
				    "cannot parse '%s': %zu samples exceed the limit of %llu",
				    ps->name, n,
				    (unsigned long long)ps->p->limits.max_samples);
	if (deltas && json_array_size(deltas) != n)
		return bad(ps, "%zu samples but %zu timeDeltas", n, json_array_size(deltas));
	if (!deltas && n > 0)
		even = ps->p->duration_ns / (int64_t)n;
	for (size_t i = 0; i < n; i++) {
		const json_t *s = json_array_get(samples, i);
		int64_t id, t = even;

		if (!json_is_integer(s))
			return bad(ps, "sample %zu is not an integer node id", i);
		id = json_integer_value(s);
		if (cached == NO_NODE || id != cached_id) {
			if ((cached = find_node(ps, id)) == NO_NODE)
				return bad(ps, "sample %zu refers to node %lld, which does not exist",
					   i, (long long)id);
			cached_id = id;
		}
		if (deltas) {
			int64_t d0, d;

			if (!time_ns(json_array_get(deltas, i), &d0))
				return bad(ps, "timeDelta %zu is not a number of microseconds", i);
			if (i + 1 < n) {
				if (!time_ns(json_array_get(deltas, i + 1), &d))
					return bad(ps, "timeDelta %zu is not a number of microseconds",
						   i + 1);
				t = d > 0 ? d : 0;
				if (__builtin_add_overflow(sum, t, &sum))
					return bad(ps, "timeDeltas overflow 64 bits");
			} else if (n > 1) {
				t = sum / (int64_t)(n - 1);
			} else if (ps->have_start && ps->have_end &&
				   !__builtin_add_overflow(ps->start_ns, d0, &d) &&
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
		if (!ps->nodes[i].has_hits)
			return bad(ps, "node %lld has no hitCount and the profile has no samples",
				   (long long)ps->nodes[i].id);
		if (__builtin_add_overflow(total, ps->nodes[i].hits, &total))
			return bad(ps, "hitCounts overflow 64 bits");
	}
	for (uint32_t i = 0; i < ps->nnodes; i++) {
		v8_node *n = &ps->nodes[i];
		/* long double: duration * hits may not fit 64 bits. */
		int64_t t = total ? (int64_t)((long double)ps->p->duration_ns * n->hits / total) : 0;

		if ((rc = add_to_node(ps, n, n->hits, t)) < 0)
			return rc;
	}
	return 0;
}

/* One profile sample per node that was sampled, root first. */
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
	 * enforces max_depth; the first stack over it ends the parse, so
	 * building stacks costs at most max_depth per node plus one long walk.
	 */
	/* One spare entry: never a NULL stack, even when only the root is hit. */
	if (!(stack = malloc(((size_t)max_depth + 1) * sizeof(*stack))))
		return nomem(ps);
	for (uint32_t i = 0; i < ps->nnodes; i++) {
		const v8_node *n = &ps->nodes[i];
		int64_t values[2] = {n->count, n->time_ns};
		uint32_t j = i;

		if (!n->count && !n->time_ns)
			continue;
		for (uint32_t k = n->depth; k > 0; k--) {
			stack[k - 1] = ps->nodes[j].func;
			j = ps->nodes[j].parent;
		}
		if ((rc = profile_add_sample(ps->p, stack, n->depth, values, ps->err)) < 0)
			goto out;
	}
out:
	free(stack);
	return rc;
}

/*
 * jansson's error text without its "near '...'" quote of the input, which
 * could carry a payload into a log; the line and column say where.
 */
static void json_reason(char *out, size_t size, const json_error_t *jerr)
{
	const char *near = strstr(jerr->text, " near ");
	size_t n = near ? (size_t)(near - jerr->text) : strlen(jerr->text);

	if (n >= size)
		n = size - 1;
	memcpy(out, jerr->text, n);
	out[n] = '\0';
	if (near && strcmp(near, " near end of file") == 0 && n + 30 < size)
		strcat(out, " at the end of the input (truncated?)");
}

static size_t skip_bom(const uint8_t *data, size_t len)
{
	return len >= 3 && data[0] == 0xef && data[1] == 0xbb && data[2] == 0xbf ? 3 : 0;
}

int v8_parse(profile **out, const uint8_t *data, size_t len,
	     const char *name, const profile_limits *lim, pr_error *err)
{
	static const char *const types[] = {"samples", "cpu"};
	static const char *const units[] = {"count", "nanoseconds"};
	v8_parser ps = {0};
	json_t *root = NULL;
	json_t *nodes, *samples, *deltas;
	json_error_t jerr;
	size_t bom = skip_bom(data, len);
	int rc;

	*out = NULL;
	ps.name = name ? name : "-";
	ps.err = err;
	if ((rc = profile_new(&ps.p, PROFILE_FMT_V8, ps.name, lim, err)) < 0)
		goto out;
	if (len == bom) {
		rc = bad(&ps, "the input is empty");
		goto out;
	}
	/*
	 * jansson stops at JSON_PARSER_MAX_DEPTH (2048) levels of nesting, so
	 * a hostile nest of arrays is an error, not a stack overflow. NUL is
	 * allowed in strings because JavaScript names may contain it;
	 * profile_intern replaces it.
	 */
	root = json_loadb((const char *)data + bom, len - bom,
			  JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
	if (!root) {
		char reason[JSON_ERROR_TEXT_LENGTH];

		json_reason(reason, sizeof(reason), &jerr);
		rc = bad(&ps, "invalid JSON at line %d column %d: %s", jerr.line,
			 jerr.column, reason);
		goto out;
	}
	if (!json_is_object(root)) {
		rc = bad(&ps, "the top level is an array, not a cpuprofile object");
		goto out;
	}
	nodes = json_object_get(root, "nodes");
	if (!nodes) {
		rc = bad(&ps, json_object_get(root, "head") ?
			 "the legacy \"head\" tree format is not supported" :
			 "no \"nodes\" member: not a cpuprofile");
		goto out;
	}
	if (!json_is_array(nodes)) {
		rc = bad(&ps, "\"nodes\" is not an array");
		goto out;
	}
	if (json_array_size(nodes) == 0) {
		rc = bad(&ps, "\"nodes\" is empty: a profile has at least a root");
		goto out;
	}
	if (json_array_size(nodes) >= NO_NODE) {
		rc = pr_error_set(err, PR_ELIMIT, "cannot parse '%s': too many nodes",
				  ps.name);
		goto out;
	}
	samples = json_object_get(root, "samples");
	deltas = json_object_get(root, "timeDeltas");
	if (samples && !json_is_array(samples)) {
		rc = bad(&ps, "\"samples\" is not an array");
		goto out;
	}
	if (deltas && !json_is_array(deltas)) {
		rc = bad(&ps, "\"timeDeltas\" is not an array");
		goto out;
	}
	if (deltas && !samples) {
		rc = bad(&ps, "\"timeDeltas\" without \"samples\"");
		goto out;
	}
	ps.nnodes = (uint32_t)json_array_size(nodes);
	if (!(ps.nodes = calloc(ps.nnodes, sizeof(*ps.nodes))) ||
	    !(ps.ids = calloc(ps.nnodes, sizeof(*ps.ids)))) {
		rc = nomem(&ps);
		goto out;
	}
	if ((rc = read_nodes(&ps, nodes)) < 0 ||
	    (rc = link_nodes(&ps)) < 0 ||
	    (rc = compute_depths(&ps)) < 0 ||
	    (rc = profile_set_value_types(ps.p, 2, types, units, err)) < 0 ||
	    (rc = intern_funcs(&ps)) < 0 ||
	    (rc = read_times(&ps, root)) < 0)
		goto out;
	if (samples)
		rc = read_samples(&ps, samples, deltas);
	else
		rc = read_hit_counts(&ps);
	if (rc < 0 || (rc = emit_samples(&ps)) < 0)
		goto out;
	profile_pick_primary(ps.p, "cpu");
	*out = ps.p;
	ps.p = NULL;
out:
	json_decref(root);
	free(ps.nodes);
	free(ps.ids);
	free(ps.dense);
	profile_free(ps.p);
	return rc;
}

bool v8_sniff(const uint8_t *data, size_t len)
{
	static const char key[] = "\"nodes\"";
	size_t i = skip_bom(data, len), end;

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
