/*
 * speedscope.c: parser for speedscope's JSON file format (see speedscope.h).
 *
 * The format (https://www.speedscope.app/file-format-schema.json), as
 * py-spy (`record -f speedscope`), rbspy, speedscope itself and profreg's
 * own exporter write it:
 *
 *   {"$schema": "https://www.speedscope.app/file-format-schema.json",
 *    "shared": {"frames": [{"name": "f", "file": "a.py", "line": 3}, ...]},
 *    "profiles": [
 *      {"type": "sampled", "name": "Thread 1", "unit": "seconds",
 *       "startValue": 0, "endValue": 1.5,
 *       "samples": [[0, 1, 2], ...], "weights": [0.01, ...]},
 *      {"type": "evented", "name": "main", "unit": "milliseconds",
 *       "startValue": 0, "endValue": 30,
 *       "events": [{"type": "O", "frame": 0, "at": 0}, ...,
 *                  {"type": "C", "frame": 0, "at": 30}]}],
 *    "activeProfileIndex": 0, "exporter": "py-spy@0.3.14", "name": "..."}
 *
 * A sample is a list of indices into the shared frames, root first; its
 * weight is what it measured. An evented profile lists when each frame
 * opened and closed, in time order. Keys may come in any order: py-spy
 * writes "profiles" before "shared", so frame indices are kept as read
 * and resolved once the whole text is read.
 *
 * What becomes of it:
 *   - Every profile of the file is merged into one capture: py-spy and
 *     rbspy write one profile per thread, and a capture is the process.
 *     activeProfileIndex, which only says which one speedscope shows
 *     first, is ignored.
 *   - A function is a frame's (name, file). Line and column are left out
 *     on purpose, as in every other parser: py-spy writes a frame per line
 *     that runs, and a function must stay one function across deploys.
 *     An empty name is "[unknown]" (profile_intern's rule).
 *   - Units. "none" counts samples: one value column, samples/count, and
 *     every weight (or evented duration) must be a whole number (older
 *     py-spy wrote each weight as 1.0). The time units (nanoseconds to
 *     seconds) all become nanoseconds, pprof's unit for cpu, so rates
 *     compare across formats: samples/count and cpu/nanoseconds when every
 *     profile is sampled (each sample counts 1, its weight is its time),
 *     and cpu/nanoseconds alone when any is evented, which has no
 *     samples to count. Fractions of a nanosecond are rounded. A file
 *     mixing "none" with a time unit is refused: counts and times do not
 *     add up. "bytes" is refused too: the file does not say whether they
 *     were allocated or are still in use, which profreg keeps apart (heap
 *     and alloc profiles); take heap profiles as pprof.
 *   - Evented profiles are replayed: each frame opened is pushed on a
 *     stack, and the time from one event to the next belongs to the stack
 *     open between them, as speedscope draws it. Time with no frame open
 *     belongs to no one and is not counted (it is not the program's).
 *     A close that does not name the innermost open frame, an event
 *     earlier than the one before it, or a frame never closed is an error
 *     naming the event, where speedscope also stops.
 *   - duration_ns is the longest endValue - startValue of the profiles
 *     (they run side by side), for time units; 0 for "none". time_ns
 *     stays 0: startValue is no wall-clock time.
 *   - Stacks are summed into a call tree keyed by function, so that each
 *     distinct stack becomes one profile sample, as the V8 parser does:
 *     py-spy writes one sample per tick of each thread. max_samples still
 *     applies to the samples of sampled profiles, and separately to the
 *     events of evented ones, as written, over the whole file.
 *
 * Memory. yajl reads the text in one streaming pass, as in v8.c, and only
 * what the capture needs is kept: per frame its interned function, per
 * sample its frame indices and weight, per event its kind, frame and
 * time. The value of any other key ("name", "line", "exporter", ...) is
 * skipped as yajl reads it, neither stored nor decoded. All that is kept
 * is charged to the parse's memory budget (profile_mem_take) as it is
 * read, and the limits are checked as each value arrives, so hostile
 * input stops where it goes over. The nesting limit is jsonscan's, as for
 * the V8 parsers.
 *
 * Errors come in the order a whole-document parser reports them, as in
 * v8.c: a document that is not well-formed JSON is "invalid JSON"
 * wherever it breaks, so the first profile error found while reading is
 * kept and reported once the text has proved well-formed. Limits, and
 * JSON errors profreg finds itself (duplicate keys, numbers out of range,
 * nesting), stop the parse at once.
 */
#define _POSIX_C_SOURCE 200809L
#include "pipeline/speedscope.h"
#include "common/buf.h"
#include "common/strmap.h"

#include "pipeline/jsonscan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SNIFF_WINDOW 4096
/* Contexts never nest deeper than top > profiles > profile > samples > stack. */
#define CTX_MAX 8
/* Frame indices at or above this cannot name a frame (see frame_start). */
#define NO_FRAME UINT32_MAX
/* Reals are converted to int64 only below this, so llround cannot overflow. */
#define REAL_MAX 9.2e18

/* What the JSON value being read belongs to. */
typedef enum ctx {
	X_TOP, X_SHARED, X_FRAMES, X_FRAME, X_PROFILES, X_PROFILE,
	X_SAMPLES, X_STACK, X_WEIGHTS, X_EVENTS, X_EVENT,
} ctx;

/* The keys read; each object context reads a range of them. */
typedef enum key {
	K_OTHER,
	K_SHARED, K_PROFILES,                           /* the top object */
	K_FRAMES,                                       /* "shared" */
	K_NAME, K_FILE,                                 /* a frame */
	K_TYPE, K_UNIT, K_START, K_END, K_SAMPLES, K_WEIGHTS, K_EVENTS, /* a profile */
	K_ETYPE, K_EFRAME, K_AT,                        /* an event */
} key;

static const char *const key_names[] = {
	[K_SHARED] = "shared", [K_PROFILES] = "profiles", [K_FRAMES] = "frames",
	[K_NAME] = "name", [K_FILE] = "file", [K_TYPE] = "type", [K_UNIT] = "unit",
	[K_START] = "startValue", [K_END] = "endValue", [K_SAMPLES] = "samples",
	[K_WEIGHTS] = "weights", [K_EVENTS] = "events", [K_ETYPE] = "type",
	[K_EFRAME] = "frame", [K_AT] = "at",
};

typedef enum unit { U_UNSET, U_NONE, U_NS, U_US, U_MS, U_S, U_BYTES } unit;

static const char *const unit_names[] = {
	[U_NONE] = "none", [U_NS] = "nanoseconds", [U_US] = "microseconds",
	[U_MS] = "milliseconds", [U_S] = "seconds", [U_BYTES] = "bytes",
};

/* Nanoseconds per unit; 0 for "none", which counts. */
static const int64_t unit_scale[U_BYTES + 1] = {
	[U_NS] = 1, [U_US] = 1000, [U_MS] = 1000000, [U_S] = 1000000000,
};

typedef enum ptype { T_UNSET, T_SAMPLED, T_EVENTED } ptype;

/* A number as written: exact when an integer, a double when not. */
typedef struct num {
	union {
		int64_t i;
		double d;
	} v;
	bool real;
} num;

enum {
	P_TYPE = 1, P_UNIT = 2, P_START = 4, P_END = 8, P_SAMPLES = 16, P_WEIGHTS = 32,
	P_EVENTS = 64,
};

/* One element of "profiles", as read. Its data lives in the parser's arrays. */
typedef struct ss_prof {
	num start, end;
	size_t samples_off; /* its first stack in stack_off */
	size_t nsamples;    /* samples as written */
	size_t weights_off, nweights;
	size_t events_off, nevents;
	uint8_t type, unit, flags;
} ss_prof;

enum { E_TYPE = 1, E_FRAME = 2, E_AT = 4 };

typedef struct ss_event {
	num at;
	uint32_t frame;
	uint8_t open;  /* 1 for "O", 0 for "C" */
	uint8_t flags;
} ss_event;

/* A node of the call tree stacks are summed into; node 0 is the root. */
typedef struct ss_node {
	uint32_t parent, func, depth;
	int64_t v[2];
} ss_node;

/* The tree's child index: (parent, func) -> node; node 0 marks a free slot. */
typedef struct kid_slot {
	uint64_t key;
	uint32_t node;
} kid_slot;

/* Per node: the node and, at a load of at most 1/2 after doubling, 4 slots. */
#define NODE_COST (sizeof(ss_node) + 4 * sizeof(kid_slot))

typedef struct ss_parser {
	jsonscan js;        /* the text, the error rules; js.p is the profile */
	ctx stack[CTX_MAX];
	uint32_t seen[CTX_MAX]; /* keys met in each open object, for duplicates */
	uint32_t nctx;
	key key;            /* the key whose value comes next */

	bool have_shared, have_frames, have_profiles;

	/* Frames: each frame's function, interned as the frame ends. */
	uint32_t *frame_func;
	uint32_t nframes;
	size_t frames_cap;
	buf fname, ffile;   /* the frame being read */
	bool have_name;
	strmap frame_ids;   /* u32 name length, name, file -> the function of a frame read before */
	uint64_t frame_ids_charged;

	ss_prof *profs;
	size_t nprofs, profs_cap;
	uint32_t *idx;      /* every stack's frame indices, back to back */
	size_t nidx, idx_cap;
	size_t *stack_off;  /* stack k is idx[stack_off[k], stack_off[k + 1] or nidx) */
	size_t nstacks, stacks_cap;
	size_t stack_seen;  /* elements of the stack being read, as written */
	num *weights;
	size_t nweights, weights_cap;
	ss_event *events;
	size_t nevents, events_cap;
	/* As written over the whole file; past max_samples only counted. */
	size_t samples_seen, weights_seen, events_seen;

	/* After the text: the call tree and the value columns. */
	ss_node *nodes;
	uint32_t nnodes;
	size_t nodes_cap;
	kid_slot *kids;
	size_t kids_cap;    /* a power of two */
	uint64_t kids_seed; /* picked with the first table */
	unit cls;           /* U_NONE, or U_NS for every time unit */
	size_t ncols;
	size_t ns_col;      /* the column of nanoseconds, for time units */
} ss_parser;

/*
 * Where in the file a value is, for messages: written out only when one
 * is needed, as replaying a large file looks up millions of frames.
 */
typedef struct site {
	size_t prof;
	const char *kind; /* "sample", "event" */
	size_t index;
} site;

static const char *site_str(char *b, size_t n, const site *at)
{
	snprintf(b, n, "profile %zu: %s %zu", at->prof, at->kind, at->index);
	return b;
}

/* A number token as written. Returns 1, or 0 with a JSON error set. */
static int to_num(ss_parser *ps, jsonscan_kind kind, const char *s, size_t n, num *out)
{
	out->real = kind != JSONSCAN_INT;
	if (!out->real)
		return jsonscan_int(&ps->js, s, n, &out->v.i);
	return jsonscan_real(&ps->js, s, n, &out->v.d);
}

static ss_prof *cur_prof(ss_parser *ps)
{
	return &ps->profs[ps->nprofs - 1];
}

/* The frame a "frames" element starts. */
static int frame_start(ss_parser *ps)
{
	int rc;

	/* NO_FRAME stays free, so that no index that names a frame is refused. */
	if (ps->nframes == NO_FRAME - 1)
		return jsonscan_stop(&ps->js, jsonscan_limit(&ps->js, "too many frames"));
	if ((rc = jsonscan_grow(&ps->js, (void **)&ps->frame_func, &ps->frames_cap, ps->nframes,
				sizeof(*ps->frame_func))) < 0)
		return jsonscan_stop(&ps->js, rc);
	ps->frame_func[ps->nframes++] = 0;
	buf_reset(&ps->fname);
	buf_reset(&ps->ffile);
	ps->have_name = false;
	return 1;
}

/* The frame just read becomes a function: its name and file, nothing else. */
static int frame_end(ss_parser *ps)
{
	uint32_t i = ps->nframes - 1, len, same;
	buf key = BUF_INIT;
	int rc;

	if (!ps->have_name) {
		jsonscan_defer(&ps->js, "frame %u has no name", i);
		return 1;
	}
	/*
	 * A frame written again (duplicates are allowed) is the function it
	 * was: made stable once, as a long file name costs its length.
	 */
	len = (uint32_t)ps->fname.len;
	if (buf_put(&key, &len, sizeof(len)) < 0 ||
	    buf_put(&key, ps->fname.ptr, ps->fname.len) < 0 ||
	    buf_put(&key, ps->ffile.ptr, ps->ffile.len) < 0) {
		rc = jsonscan_stop(&ps->js, jsonscan_nomem(&ps->js));
		goto out;
	}
	if (strmap_get(&ps->frame_ids, key.ptr, key.len, &ps->frame_func[i])) {
		rc = 1;
		goto out;
	}
	if ((rc = profile_intern(ps->js.p, &ps->frame_func[i], ps->fname.ptr, ps->fname.len,
				 ps->ffile.ptr, ps->ffile.len, ps->js.err)) < 0 ||
	    (rc = jsonscan_take(&ps->js, key.len + 1 + 3 * sizeof(strmap_slot))) < 0) {
		rc = jsonscan_stop(&ps->js, rc);
		goto out;
	}
	ps->frame_ids_charged += key.len + 1 + 3 * sizeof(strmap_slot);
	if (strmap_put(&ps->frame_ids, key.ptr, key.len, ps->frame_func[i], &same, NULL) < 0)
		rc = jsonscan_stop(&ps->js, jsonscan_nomem(&ps->js));
	else
		rc = 1;
out:
	buf_release(&key);
	return rc;
}

/* The profile a "profiles" element starts. */
static int profile_start(ss_parser *ps)
{
	ss_prof *pr;
	int rc;

	if ((rc = jsonscan_grow(&ps->js, (void **)&ps->profs, &ps->profs_cap, ps->nprofs,
				sizeof(*ps->profs))) < 0)
		return jsonscan_stop(&ps->js, rc);
	pr = &ps->profs[ps->nprofs++];
	memset(pr, 0, sizeof(*pr));
	pr->samples_off = ps->nstacks;
	pr->weights_off = ps->nweights;
	pr->events_off = ps->nevents;
	return 1;
}

/* What a profile must have, checked as it ends. */
static int profile_end(ss_parser *ps)
{
	const ss_prof *pr = cur_prof(ps);
	size_t i = ps->nprofs - 1;

	if (!(pr->flags & P_TYPE))
		jsonscan_defer(&ps->js, "profile %zu has no type", i);
	else if (!(pr->flags & P_UNIT))
		jsonscan_defer(&ps->js, "profile %zu has no unit", i);
	else if (!(pr->flags & P_START))
		jsonscan_defer(&ps->js, "profile %zu has no startValue", i);
	else if (!(pr->flags & P_END))
		jsonscan_defer(&ps->js, "profile %zu has no endValue", i);
	else if (pr->type == T_SAMPLED && !(pr->flags & P_SAMPLES))
		jsonscan_defer(&ps->js, "profile %zu is sampled but has no \"samples\"", i);
	else if (pr->type == T_SAMPLED && !(pr->flags & P_WEIGHTS))
		jsonscan_defer(&ps->js, "profile %zu is sampled but has no \"weights\"", i);
	else if (pr->type == T_SAMPLED && (pr->flags & P_EVENTS))
		jsonscan_defer(&ps->js, "profile %zu is sampled but has \"events\"", i);
	else if (pr->type == T_SAMPLED && pr->nsamples != pr->nweights)
		jsonscan_defer(&ps->js, "profile %zu: %zu samples but %zu weights", i, pr->nsamples,
			       pr->nweights);
	else if (pr->type == T_EVENTED && !(pr->flags & P_EVENTS))
		jsonscan_defer(&ps->js, "profile %zu is evented but has no \"events\"", i);
	else if (pr->type == T_EVENTED && (pr->flags & (P_SAMPLES | P_WEIGHTS)))
		jsonscan_defer(&ps->js, "profile %zu is evented but has \"%s\"", i,
			       pr->flags & P_SAMPLES ? "samples" : "weights");
	return 1;
}

/* A sample's stack starts: its indices follow in idx. */
static int stack_start(ss_parser *ps)
{
	int rc;

	cur_prof(ps)->nsamples++;
	ps->stack_seen = 0;
	/* Past the limit only count, for the message at the array's end. */
	if (ps->samples_seen++ >= ps->js.p->limits.max_samples)
		return 1;
	if ((rc = jsonscan_grow(&ps->js, (void **)&ps->stack_off, &ps->stacks_cap, ps->nstacks,
				sizeof(*ps->stack_off))) < 0)
		return jsonscan_stop(&ps->js, rc);
	ps->stack_off[ps->nstacks++] = ps->nidx;
	return 1;
}

static int stack_end(ss_parser *ps)
{
	if (ps->stack_seen > ps->js.p->limits.max_depth)
		return jsonscan_stop(&ps->js,
				     jsonscan_limit(&ps->js,
						    "profile %zu: sample %zu: a stack of %zu "
						    "frames exceeds the depth limit of %u",
						    ps->nprofs - 1, cur_prof(ps)->nsamples - 1,
						    ps->stack_seen, ps->js.p->limits.max_depth));
	return 1;
}

static int event_start(ss_parser *ps)
{
	int rc;

	cur_prof(ps)->nevents++;
	if (ps->events_seen++ >= ps->js.p->limits.max_samples)
		return 1;
	if ((rc = jsonscan_grow(&ps->js, (void **)&ps->events, &ps->events_cap, ps->nevents,
				sizeof(*ps->events))) < 0)
		return jsonscan_stop(&ps->js, rc);
	memset(&ps->events[ps->nevents++], 0, sizeof(*ps->events));
	return 1;
}

/* The event being read, or NULL past the events limit. */
static ss_event *cur_event(ss_parser *ps)
{
	return ps->events_seen <= ps->js.p->limits.max_samples ? &ps->events[ps->nevents - 1]
							       : NULL;
}

static int event_end(ss_parser *ps)
{
	const ss_event *ev = cur_event(ps);
	size_t i = cur_prof(ps)->nevents - 1;

	if (!ev)
		return 1;
	if (!(ev->flags & E_TYPE))
		jsonscan_defer(&ps->js, "profile %zu: event %zu has no type", ps->nprofs - 1, i);
	else if (!(ev->flags & E_FRAME))
		jsonscan_defer(&ps->js, "profile %zu: event %zu has no frame", ps->nprofs - 1, i);
	else if (!(ev->flags & E_AT))
		jsonscan_defer(&ps->js, "profile %zu: event %zu has no \"at\"", ps->nprofs - 1, i);
	return 1;
}

/* Messages for a value of the wrong type, by context and key. */
static void wrong_type(ss_parser *ps, ctx c)
{
	size_t pi = ps->nprofs ? ps->nprofs - 1 : 0;
	const ss_prof *pr = ps->nprofs ? cur_prof(ps) : NULL;

	switch (c) {
	case X_TOP:
		if (ps->key == K_SHARED)
			jsonscan_defer(&ps->js, "\"shared\" is not an object");
		else if (ps->key == K_PROFILES)
			jsonscan_defer(&ps->js, "\"profiles\" is not an array");
		return;
	case X_SHARED:
		if (ps->key == K_FRAMES)
			jsonscan_defer(&ps->js, "\"frames\" is not an array");
		return;
	case X_FRAMES:
		jsonscan_defer(&ps->js, "frame %u is not an object", ps->nframes);
		return;
	case X_FRAME:
		if (ps->key == K_NAME || ps->key == K_FILE)
			jsonscan_defer(&ps->js, "frame %u: %s is not a string", ps->nframes - 1,
				       key_names[ps->key]);
		return;
	case X_PROFILES:
		jsonscan_defer(&ps->js, "profile %zu is not an object", ps->nprofs);
		return;
	case X_PROFILE:
		if (ps->key == K_TYPE || ps->key == K_UNIT)
			jsonscan_defer(&ps->js, "profile %zu: %s is not a string", pi,
				       key_names[ps->key]);
		else if (ps->key == K_START || ps->key == K_END)
			jsonscan_defer(&ps->js, "profile %zu: %s is not a number", pi,
				       key_names[ps->key]);
		else if (ps->key == K_SAMPLES || ps->key == K_WEIGHTS || ps->key == K_EVENTS)
			jsonscan_defer(&ps->js, "profile %zu: \"%s\" is not an array", pi,
				       key_names[ps->key]);
		return;
	case X_SAMPLES:
		jsonscan_defer(&ps->js, "profile %zu: sample %zu is not an array of frame indices",
			       pi, pr->nsamples);
		return;
	case X_STACK:
		jsonscan_defer(&ps->js,
			       "profile %zu: sample %zu: the frame index at position %zu "
			       "is not an integer",
			       pi, pr->nsamples - 1, ps->stack_seen);
		return;
	case X_WEIGHTS:
		jsonscan_defer(&ps->js, "profile %zu: weight %zu is not a number", pi,
			       pr->nweights);
		return;
	case X_EVENTS:
		jsonscan_defer(&ps->js, "profile %zu: event %zu is not an object", pi, pr->nevents);
		return;
	case X_EVENT:
		if (ps->key == K_ETYPE)
			jsonscan_defer(&ps->js,
				       "profile %zu: event %zu: type is not \"O\" or \"C\"", pi,
				       pr->nevents - 1);
		else if (ps->key == K_EFRAME)
			jsonscan_defer(&ps->js, "profile %zu: event %zu: frame is not an integer",
				       pi, pr->nevents - 1);
		else if (ps->key == K_AT)
			jsonscan_defer(&ps->js, "profile %zu: event %zu: \"at\" is not a number",
				       pi, pr->nevents - 1);
		return;
	}
}

/* A container opens as the value of ps->key, or as an array element. */
static int container_value(ss_parser *ps, bool object)
{
	ctx c = ps->stack[ps->nctx - 1];
	ctx push = X_TOP; /* X_TOP: nothing here reads it, skip it */
	bool wrong = false;

	switch (c) {
	case X_TOP:
		if (ps->key == K_SHARED && object) {
			ps->have_shared = true;
			push = X_SHARED;
		} else if (ps->key == K_PROFILES && !object) {
			ps->have_profiles = true;
			push = X_PROFILES;
		} else {
			wrong = ps->key != K_OTHER;
		}
		break;
	case X_SHARED:
		if (ps->key == K_FRAMES && !object) {
			ps->have_frames = true;
			push = X_FRAMES;
		} else {
			wrong = ps->key != K_OTHER;
		}
		break;
	case X_FRAMES:
		if (!object) {
			wrong = true;
			break;
		}
		if (!frame_start(ps))
			return 0;
		push = X_FRAME;
		break;
	case X_PROFILES:
		if (!object) {
			wrong = true;
			break;
		}
		if (!profile_start(ps))
			return 0;
		push = X_PROFILE;
		break;
	case X_PROFILE:
		if (ps->key == K_SAMPLES && !object) {
			cur_prof(ps)->flags |= P_SAMPLES;
			push = X_SAMPLES;
		} else if (ps->key == K_WEIGHTS && !object) {
			cur_prof(ps)->flags |= P_WEIGHTS;
			push = X_WEIGHTS;
		} else if (ps->key == K_EVENTS && !object) {
			cur_prof(ps)->flags |= P_EVENTS;
			push = X_EVENTS;
		} else {
			wrong = ps->key != K_OTHER;
		}
		break;
	case X_SAMPLES:
		if (object) {
			wrong = true;
			break;
		}
		if (!stack_start(ps))
			return 0;
		push = X_STACK;
		break;
	case X_EVENTS:
		if (!object) {
			wrong = true;
			break;
		}
		if (!event_start(ps))
			return 0;
		push = X_EVENT;
		break;
	case X_FRAME:
	case X_EVENT:
		wrong = ps->key != K_OTHER;
		break;
	case X_STACK:
	case X_WEIGHTS:
		wrong = true;
		break;
	}
	if (wrong) {
		wrong_type(ps, c);
		return 1;
	}
	if (push == X_TOP) {
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
	ss_parser *ps = arg;

	if (ps->nctx == 0) {
		if (!object) {
			jsonscan_defer(&ps->js,
				       "the top level is an array, not a speedscope object");
			return 1;
		}
		ps->stack[0] = X_TOP;
		ps->seen[0] = 0;
		ps->nctx = 1;
		return 1;
	}
	return container_value(ps, object);
}

/* Counts over a limit are reported as their array ends, with the count. */
static int counts_end(ss_parser *ps, ctx c)
{
	unsigned long long max = (unsigned long long)ps->js.p->limits.max_samples;

	if (c == X_SAMPLES && ps->samples_seen > max)
		return jsonscan_stop(&ps->js,
				     jsonscan_limit(&ps->js, "%zu samples exceed the limit of %llu",
						    ps->samples_seen, max));
	if (c == X_EVENTS && ps->events_seen > max)
		return jsonscan_stop(&ps->js,
				     jsonscan_limit(&ps->js, "%zu events exceed the limit of %llu",
						    ps->events_seen, max));
	return 1;
}

static int on_close(void *arg)
{
	ss_parser *ps = arg;
	ctx c = ps->stack[--ps->nctx];

	switch (c) {
	case X_FRAME:
		return frame_end(ps);
	case X_PROFILE:
		return profile_end(ps);
	case X_STACK:
		return stack_end(ps);
	case X_EVENT:
		return event_end(ps);
	default:
		return counts_end(ps, c);
	}
}

static int on_key(void *arg, const unsigned char *s, size_t n)
{
	ss_parser *ps = arg;
	ctx c = ps->stack[ps->nctx - 1];
	key first = K_OTHER, last = K_OTHER;
	int k;

	/* Only objects have keys; each reads its own range of them. */
	if (c == X_TOP) {
		first = K_SHARED;
		last = K_PROFILES;
	} else if (c == X_SHARED) {
		first = last = K_FRAMES;
	} else if (c == X_FRAME) {
		first = K_NAME;
		last = K_FILE;
	} else if (c == X_PROFILE) {
		first = K_TYPE;
		last = K_EVENTS;
	} else if (c == X_EVENT) {
		first = K_ETYPE;
		last = K_AT;
	}
	if ((k = jsonscan_key(&ps->js, key_names, first, last, s, n, &ps->seen[ps->nctx - 1])) < 0)
		return 0;
	ps->key = (key)k;
	if (ps->key == K_OTHER)
		jsonscan_values_off(&ps->js);
	return 1;
}

/* n bytes of s equal the NUL-terminated word w? */
static bool is(const char *s, size_t n, const char *w)
{
	return strlen(w) == n && memcmp(s, w, n) == 0;
}

static int profile_scalar(ss_parser *ps, jsonscan_kind kind, const char *s, size_t n)
{
	ss_prof *pr = cur_prof(ps);
	size_t pi = ps->nprofs - 1;
	char q[40];

	switch (ps->key) {
	case K_TYPE:
		if (kind != JSONSCAN_STRING)
			break;
		if (is(s, n, "sampled"))
			pr->type = T_SAMPLED;
		else if (is(s, n, "evented"))
			pr->type = T_EVENTED;
		else
			jsonscan_defer(&ps->js,
				       "profile %zu: unknown type '%s' (sampled or evented)", pi,
				       profile_quote(q, s, n));
		pr->flags |= P_TYPE;
		return 1;
	case K_UNIT:
		if (kind != JSONSCAN_STRING)
			break;
		for (unit u = U_NONE; u <= U_BYTES; u++)
			if (is(s, n, unit_names[u]))
				pr->unit = (uint8_t)u;
		if (pr->unit == U_BYTES)
			jsonscan_defer(&ps->js,
				       "profile %zu is in bytes, which profreg does not "
				       "read: the file does not say whether they were allocated or "
				       "are in use; take heap profiles as pprof",
				       pi);
		else if (pr->unit == U_UNSET)
			jsonscan_defer(&ps->js,
				       "profile %zu: unknown unit '%s' (none, nanoseconds, "
				       "microseconds, milliseconds, seconds)",
				       pi, profile_quote(q, s, n));
		pr->flags |= P_UNIT;
		return 1;
	case K_START:
	case K_END:
		if (kind != JSONSCAN_INT && kind != JSONSCAN_REAL)
			break;
		if (!to_num(ps, kind, s, n, ps->key == K_START ? &pr->start : &pr->end))
			return 0;
		pr->flags |= ps->key == K_START ? P_START : P_END;
		return 1;
	case K_SAMPLES:
	case K_WEIGHTS:
	case K_EVENTS:
		break;
	default:
		return 1;
	}
	wrong_type(ps, X_PROFILE);
	return 1;
}

/*
 * A frame index: an integer that is not negative. One too large to name
 * any frame is refused here; one past the file's frames once they are
 * all read. Returns 1 with *out set, 1 with an error deferred (*out is
 * NO_FRAME), 0 with a JSON error set, or -1 when it is no integer (the
 * caller names what it is).
 */
static int frame_index(ss_parser *ps, jsonscan_kind kind, const char *s, size_t n, uint32_t *out,
		       const site *at)
{
	char where[96];
	int64_t v;

	*out = NO_FRAME;
	if (kind != JSONSCAN_INT)
		return -1;
	if (!jsonscan_int(&ps->js, s, n, &v))
		return 0;
	if (v < 0)
		jsonscan_defer(&ps->js, "%s: negative frame index %lld",
			       site_str(where, sizeof(where), at), (long long)v);
	else if (v >= NO_FRAME)
		jsonscan_defer(&ps->js, "%s refers to frame %lld, which does not exist",
			       site_str(where, sizeof(where), at), (long long)v);
	else
		*out = (uint32_t)v;
	return 1;
}

static int stack_scalar(ss_parser *ps, jsonscan_kind kind, const char *s, size_t n)
{
	site at = {ps->nprofs - 1, "sample", cur_prof(ps)->nsamples - 1};
	uint32_t f;
	int r, rc;

	if ((r = frame_index(ps, kind, s, n, &f, &at)) < 0) {
		wrong_type(ps, X_STACK);
		return 1;
	}
	if (r == 0 || f == NO_FRAME)
		return r;
	/* Past a limit only count: the stack or its array ends in an error. */
	if (ps->stack_seen++ >= ps->js.p->limits.max_depth ||
	    ps->samples_seen > ps->js.p->limits.max_samples)
		return 1;
	if ((rc = jsonscan_grow(&ps->js, (void **)&ps->idx, &ps->idx_cap, ps->nidx,
				sizeof(*ps->idx))) < 0)
		return jsonscan_stop(&ps->js, rc);
	ps->idx[ps->nidx++] = f;
	return 1;
}

static int event_scalar(ss_parser *ps, jsonscan_kind kind, const char *s, size_t n)
{
	ss_event *ev = cur_event(ps), scratch;
	site at = {ps->nprofs - 1, "event", cur_prof(ps)->nevents - 1};
	uint32_t f;
	int r;

	/* Past the events limit the event is still read, for its errors. */
	if (!ev)
		ev = memset(&scratch, 0, sizeof(scratch));
	switch (ps->key) {
	case K_ETYPE:
		if (kind != JSONSCAN_STRING || !(is(s, n, "O") || is(s, n, "C")))
			break;
		ev->open = s[0] == 'O';
		ev->flags |= E_TYPE;
		return 1;
	case K_EFRAME:
		if ((r = frame_index(ps, kind, s, n, &f, &at)) < 0)
			break;
		ev->frame = f;
		ev->flags |= E_FRAME;
		return r;
	case K_AT:
		if (kind != JSONSCAN_INT && kind != JSONSCAN_REAL)
			break;
		if (!to_num(ps, kind, s, n, &ev->at))
			return 0;
		ev->flags |= E_AT;
		return 1;
	default:
		return 1;
	}
	wrong_type(ps, X_EVENT);
	return 1;
}

/*
 * A scalar: `s`, `n` is the text of a number or the bytes of a string.
 * Numbers are converted only where a value is read, so one out of range
 * in a skipped value is no error.
 */
static int on_scalar(void *arg, jsonscan_kind kind, const char *s, size_t n)
{
	ss_parser *ps = arg;
	ctx c;
	int rc;

	if (ps->nctx == 0) {
		jsonscan_defer(&ps->js, "the top level is not a speedscope object");
		return 1;
	}
	c = ps->stack[ps->nctx - 1];
	switch (c) {
	case X_FRAME:
		if (ps->key == K_NAME && kind == JSONSCAN_STRING) {
			ps->have_name = true;
			return jsonscan_name(&ps->js, &ps->fname, s, n);
		}
		if (ps->key == K_FILE && kind == JSONSCAN_STRING)
			return jsonscan_name(&ps->js, &ps->ffile, s, n);
		/* A null file is no file, as serde writes an absent Option. */
		if (ps->key == K_FILE && kind == JSONSCAN_NULL)
			return 1;
		break;
	case X_PROFILE:
		return profile_scalar(ps, kind, s, n);
	case X_STACK:
		return stack_scalar(ps, kind, s, n);
	case X_WEIGHTS:
		if (kind != JSONSCAN_INT && kind != JSONSCAN_REAL)
			break;
		cur_prof(ps)->nweights++;
		if (ps->weights_seen++ >= ps->js.p->limits.max_samples) {
			num scratch;
			return to_num(ps, kind, s, n, &scratch);
		}
		if ((rc = jsonscan_grow(&ps->js, (void **)&ps->weights, &ps->weights_cap,
					ps->nweights, sizeof(*ps->weights))) < 0)
			return jsonscan_stop(&ps->js, rc);
		return to_num(ps, kind, s, n, &ps->weights[ps->nweights++]);
	case X_EVENT:
		return event_scalar(ps, kind, s, n);
	default:
		break;
	}
	wrong_type(ps, c);
	return 1;
}

/* ---- after the text: units, the call tree, the samples --------------- */

/* What the whole text must have had, checked once it was read. */
static int check_shape(ss_parser *ps)
{
	if (!ps->have_shared)
		return jsonscan_bad(&ps->js, "no \"shared\" member: not a speedscope file");
	if (!ps->have_frames)
		return jsonscan_bad(&ps->js, "\"shared\" has no \"frames\"");
	if (!ps->have_profiles)
		return jsonscan_bad(&ps->js, "no \"profiles\" member: not a speedscope file");
	if (ps->nprofs == 0)
		return jsonscan_bad(&ps->js, "\"profiles\" is empty");
	return 0;
}

/*
 * One unit for the capture: counts or nanoseconds, never both. Sets the
 * value columns (see the header comment).
 */
static int pick_columns(ss_parser *ps)
{
	static const char *const count_t[] = {"samples"}, *const count_u[] = {"count"};
	static const char *const both_t[] = {"samples", "cpu"};
	static const char *const both_u[] = {"count", "nanoseconds"};
	static const char *const ns_t[] = {"cpu"}, *const ns_u[] = {"nanoseconds"};
	bool evented = false;

	ps->cls = ps->profs[0].unit == U_NONE ? U_NONE : U_NS;
	for (size_t i = 0; i < ps->nprofs; i++) {
		unit u = ps->profs[i].unit;

		if ((u == U_NONE) != (ps->cls == U_NONE))
			return jsonscan_bad(
				&ps->js,
				"profile %zu is in %s and profile 0 in %s: "
				"the profiles of one file must all count samples (none) "
				"or all measure time",
				i, unit_names[u], unit_names[ps->profs[0].unit]);
		evented |= ps->profs[i].type == T_EVENTED;
	}
	if (ps->cls == U_NONE) {
		ps->ncols = 1;
		return profile_set_value_types(ps->js.p, 1, count_t, count_u, ps->js.err);
	}
	if (evented) {
		ps->ncols = 1;
		ps->ns_col = 0;
		return profile_set_value_types(ps->js.p, 1, ns_t, ns_u, ps->js.err);
	}
	ps->ncols = 2;
	ps->ns_col = 1;
	return profile_set_value_types(ps->js.p, 2, both_t, both_u, ps->js.err);
}

enum { NUM_RANGE = -1, NUM_FRACTION = -2 };

/*
 * `n` in the capture's unit: nanoseconds for a time unit (`scale` per
 * unit), the number itself for "none" (scale 0), which must be whole.
 * 0, NUM_RANGE when it does not fit 64 bits, or NUM_FRACTION.
 */
static int num_value(const num *n, int64_t scale, int64_t *out)
{
	double x;

	if (!n->real) {
		if (!scale) {
			*out = n->v.i;
			return 0;
		}
		return __builtin_mul_overflow(n->v.i, scale, out) ? NUM_RANGE : 0;
	}
	x = n->v.d;
	if (scale)
		x *= (double)scale;
	if (!isfinite(x) || x > REAL_MAX || x < -REAL_MAX)
		return NUM_RANGE;
	if (!scale && x != floor(x))
		return NUM_FRACTION;
	*out = (int64_t)llround(x);
	return 0;
}

/* "profile 0: weight 3 is out of range" and the like, for num_value's errors. */
static int num_bad(ss_parser *ps, int r, const char *what)
{
	if (r == NUM_FRACTION)
		return jsonscan_bad(&ps->js,
				    "%s is not a whole number, which unit none (a count) needs",
				    what);
	return jsonscan_bad(&ps->js, "%s is out of range", what);
}

/* Start and end of each profile; the longest span is the duration. */
static int check_spans(ss_parser *ps)
{
	char what[96];
	int r;

	for (size_t i = 0; i < ps->nprofs; i++) {
		const ss_prof *pr = &ps->profs[i];
		int64_t scale = unit_scale[pr->unit], s = 0, e = 0, span;

		if (ps->cls == U_NONE) {
			long double ls = pr->start.real ? pr->start.v.d : pr->start.v.i;
			long double le = pr->end.real ? pr->end.v.d : pr->end.v.i;

			if (le < ls)
				return jsonscan_bad(&ps->js,
						    "profile %zu: endValue is before startValue",
						    i);
			continue;
		}
		snprintf(what, sizeof(what), "profile %zu: startValue", i);
		if ((r = num_value(&pr->start, scale, &s)) < 0)
			return num_bad(ps, r, what);
		snprintf(what, sizeof(what), "profile %zu: endValue", i);
		if ((r = num_value(&pr->end, scale, &e)) < 0)
			return num_bad(ps, r, what);
		if (e < s)
			return jsonscan_bad(&ps->js, "profile %zu: endValue is before startValue",
					    i);
		if (__builtin_sub_overflow(e, s, &span))
			return jsonscan_bad(&ps->js,
					    "profile %zu: endValue - startValue overflows 64 bits",
					    i);
		if (span > ps->js.p->duration_ns)
			ps->js.p->duration_ns = span;
	}
	return 0;
}

/*
 * The slot of `t` (`cap` slots, a power of two) holding key k, or the free
 * one for it. Keys are mixed from a seeded start (strmap's): node and
 * function ids are small consecutive numbers, whose bits must be spread
 * before the table masks them, and the file picks which (parent,
 * function) pairs exist: with a known hash it could pick those that share
 * low bits and pile into one run of slots (4 million samples of 30,000
 * such pairs took 36 s against 1 s).
 */
static size_t kid_slot_of(const kid_slot *t, size_t cap, uint64_t seed, uint64_t k)
{
	size_t j = strmap_mix(k + seed) & (cap - 1);

	while (t[j].node && t[j].key != k)
		j = (j + 1) & (cap - 1);
	return j;
}

static int kids_grow(ss_parser *ps)
{
	size_t cap = ps->kids_cap ? ps->kids_cap * 2 : 1024;
	kid_slot *t = calloc(cap, sizeof(*t));

	if (!t)
		return jsonscan_nomem(&ps->js);
	if (!ps->kids_cap)
		ps->kids_seed = strmap_seed_new(t);
	for (size_t i = 0; i < ps->kids_cap; i++)
		if (ps->kids[i].node)
			t[kid_slot_of(t, cap, ps->kids_seed, ps->kids[i].key)] = ps->kids[i];
	free(ps->kids);
	ps->kids = t;
	ps->kids_cap = cap;
	return 0;
}

/* The tree's root: the stack with no frame. */
static int tree_init(ss_parser *ps)
{
	int rc;

	if ((rc = jsonscan_grow(&ps->js, (void **)&ps->nodes, &ps->nodes_cap, 0,
				sizeof(*ps->nodes))) < 0)
		return rc;
	memset(&ps->nodes[0], 0, sizeof(ps->nodes[0]));
	ps->nnodes = 1;
	return 0;
}

/*
 * The node for `func` called from `parent`, made when new. A stack past
 * max_depth is refused here: evented profiles can open frames without
 * end, and the tree must not outgrow what a sample may hold.
 */
static int child(ss_parser *ps, uint32_t parent, uint32_t func, uint32_t *out,
		 const site *at)
{
	char where[96];
	uint64_t k = (uint64_t)parent << 32 | func;
	uint32_t depth = ps->nodes[parent].depth + 1;
	ss_node *n;
	size_t j;
	int rc;

	if (ps->kids_cap &&
	    ps->kids[j = kid_slot_of(ps->kids, ps->kids_cap, ps->kids_seed, k)].node) {
		*out = ps->kids[j].node;
		return 0;
	}
	if (depth > ps->js.p->limits.max_depth)
		return jsonscan_limit(&ps->js,
				      "%s: a stack of %u frames exceeds the depth limit of %u",
				      site_str(where, sizeof(where), at), depth,
				      ps->js.p->limits.max_depth);
	if (ps->nnodes == UINT32_MAX)
		return jsonscan_limit(&ps->js, "too many distinct stacks");
	if ((rc = jsonscan_take(&ps->js, NODE_COST - sizeof(ss_node))) < 0 ||
	    (rc = jsonscan_grow(&ps->js, (void **)&ps->nodes, &ps->nodes_cap, ps->nnodes,
				sizeof(*ps->nodes))) < 0)
		return rc;
	if (2 * ((size_t)ps->nnodes + 1) > ps->kids_cap && (rc = kids_grow(ps)) < 0)
		return rc;
	n = &ps->nodes[ps->nnodes];
	memset(n, 0, sizeof(*n));
	n->parent = parent;
	n->func = func;
	n->depth = depth;
	j = kid_slot_of(ps->kids, ps->kids_cap, ps->kids_seed, k);
	ps->kids[j].key = k;
	ps->kids[j].node = ps->nnodes;
	*out = ps->nnodes++;
	return 0;
}

static int add_value(ss_parser *ps, uint32_t node, size_t col, int64_t v)
{
	ss_node *n = &ps->nodes[node];

	if (__builtin_add_overflow(n->v[col], v, &n->v[col]))
		return jsonscan_bad(&ps->js, "the values of one stack overflow 64 bits");
	return 0;
}

/* The function of frame `f`, or an error when the file has no such frame. */
static int frame_func(ss_parser *ps, uint32_t f, uint32_t *out, const site *at)
{
	char where[96];

	if (f >= ps->nframes)
		return jsonscan_bad(&ps->js,
				    "%s refers to frame %u, which does not exist "
				    "(there are %u frames)",
				    site_str(where, sizeof(where), at), f, ps->nframes);
	*out = ps->frame_func[f];
	return 0;
}

/*
 * Each sample of a sampled profile, summed into its stack's node. A
 * sample mostly shares a long prefix with the one before (the same
 * thread a tick later), so the nodes of the last stack are kept in
 * `path` and only the frames after the common prefix are looked up.
 */
static int replay_sampled(ss_parser *ps, size_t pi)
{
	const ss_prof *pr = &ps->profs[pi];
	int64_t scale = unit_scale[pr->unit];
	const uint32_t *prev = NULL;
	uint32_t *path = NULL;
	size_t prev_len = 0;
	char where[96];
	int rc = 0, r;

	/* Stacks were held to max_depth as they were read, and hold at most nidx frames. */
	if (!(path = malloc(((ps->nidx < ps->js.p->limits.max_depth ? ps->nidx
							    : ps->js.p->limits.max_depth) + 1) *
			    sizeof(*path))))
		return jsonscan_nomem(&ps->js);
	for (size_t k = 0; k < pr->nsamples; k++) {
		size_t s = pr->samples_off + k;
		size_t end = s + 1 < ps->nstacks ? ps->stack_off[s + 1] : ps->nidx;
		const uint32_t *st = ps->idx + ps->stack_off[s];
		size_t len = end - ps->stack_off[s], same = 0;
		const num *w = &ps->weights[pr->weights_off + k];
		site at = {pi, "sample", k};
		uint32_t node, func = 0;
		int64_t v;

		while (same < len && same < prev_len && st[same] == prev[same])
			same++;
		node = same ? path[same - 1] : 0;
		for (size_t j = same; j < len; j++) {
			if ((rc = frame_func(ps, st[j], &func, &at)) < 0 ||
			    (rc = child(ps, node, func, &node, &at)) < 0)
				goto out;
			path[j] = node;
		}
		prev = st;
		prev_len = len;
		if ((r = num_value(w, scale, &v)) < 0) {
			snprintf(where, sizeof(where), "profile %zu: weight %zu", pi, k);
			rc = num_bad(ps, r, where);
			goto out;
		}
		if (v < 0 || (w->real && signbit(w->v.d) && v == 0 && w->v.d != 0)) {
			rc = jsonscan_bad(&ps->js, "profile %zu: weight %zu is negative", pi, k);
			goto out;
		}
		if (ps->ncols == 2 && (rc = add_value(ps, node, 0, 1)) < 0)
			goto out;
		if ((rc = add_value(ps, node, ps->cls == U_NONE ? 0 : ps->ns_col, v)) < 0)
			goto out;
	}
out:
	free(path);
	return rc;
}

/* An open frame of an evented profile: which, and which event opened it. */
typedef struct open_frame {
	uint32_t frame;
	size_t event;
} open_frame;

/* An evented profile's events, replayed (see the header comment). */
static int replay_evented(ss_parser *ps, size_t pi)
{
	const ss_prof *pr = &ps->profs[pi];
	int64_t scale = unit_scale[pr->unit], prev = 0;
	open_frame *open = NULL;
	uint32_t depth = 0, node = 0, func = 0;
	size_t cap = pr->nevents < ps->js.p->limits.max_depth ? pr->nevents
								: ps->js.p->limits.max_depth;
	char where[96];
	int rc = 0, r;

	if (!(open = malloc((cap + 1) * sizeof(*open))))
		return jsonscan_nomem(&ps->js);
	for (size_t k = 0; k < pr->nevents; k++) {
		const ss_event *ev = &ps->events[pr->events_off + k];
		site at_ = {pi, "event", k};
		int64_t at, d;

		if ((r = num_value(&ev->at, scale, &at)) < 0) {
			snprintf(where, sizeof(where), "profile %zu: event %zu: \"at\"", pi, k);
			rc = num_bad(ps, r, where);
			goto out;
		}
		if (k > 0 && at < prev) {
			rc = jsonscan_bad(&ps->js,
					  "profile %zu: event %zu goes back in time, "
					  "before event %zu",
					  pi, k, k - 1);
			goto out;
		}
		/* "at" may be negative: the gap itself can pass 64 bits. */
		if (k > 0 && depth > 0 && __builtin_sub_overflow(at, prev, &d)) {
			rc = jsonscan_bad(&ps->js,
					  "profile %zu: event %zu is more than 64 bits "
					  "after event %zu",
					  pi, k, k - 1);
			goto out;
		}
		if (k > 0 && depth > 0 && (rc = add_value(ps, node, 0, d)) < 0)
			goto out;
		prev = at;
		if ((rc = frame_func(ps, ev->frame, &func, &at_)) < 0)
			goto out;
		if (ev->open) {
			if ((rc = child(ps, node, func, &node, &at_)) < 0)
				goto out;
			/* child() refused depths past max_depth; cap is that or nevents. */
			open[depth].frame = ev->frame;
			open[depth].event = k;
			depth++;
			continue;
		}
		if (depth == 0) {
			rc = jsonscan_bad(&ps->js,
					  "profile %zu: event %zu closes frame %u, "
					  "but no frame is open",
					  pi, k, ev->frame);
			goto out;
		}
		if (open[depth - 1].frame != ev->frame) {
			rc = jsonscan_bad(&ps->js,
					  "profile %zu: event %zu closes frame %u, but the "
					  "innermost open frame is %u (opened by event %zu)",
					  pi, k, ev->frame, open[depth - 1].frame,
					  open[depth - 1].event);
			goto out;
		}
		depth--;
		node = ps->nodes[node].parent;
	}
	if (depth > 0)
		rc = jsonscan_bad(&ps->js,
				  "profile %zu: frame %u, opened by event %zu, is never closed", pi,
				  open[depth - 1].frame, open[depth - 1].event);
out:
	free(open);
	return rc;
}

/* Free what only reading needed, and give its memory back. */
static void drop_scratch(ss_parser *ps)
{
	profile_mem_give(ps->js.p, ps->nidx * sizeof(*ps->idx) +
				   ps->nstacks * sizeof(*ps->stack_off) +
				   ps->nweights * sizeof(*ps->weights) +
				   ps->nevents * sizeof(*ps->events) + ps->frame_ids_charged);
	strmap_release(&ps->frame_ids);
	strmap_init(&ps->frame_ids);
	ps->frame_ids_charged = 0;
	free(ps->idx);
	free(ps->stack_off);
	free(ps->weights);
	free(ps->events);
	ps->idx = NULL;
	ps->stack_off = NULL;
	ps->weights = NULL;
	ps->events = NULL;
	ps->nidx = ps->nstacks = ps->nweights = ps->nevents = 0;
}

/* One profile sample per node that holds a value, root first. */
static int emit_samples(ss_parser *ps)
{
	uint32_t *stack = NULL, max_depth = 0;
	int rc = 0;

	for (uint32_t i = 0; i < ps->nnodes; i++)
		if (ps->nodes[i].depth > max_depth)
			max_depth = ps->nodes[i].depth;
	/* One spare entry: never a NULL stack, even when only the root holds a value. */
	if (!(stack = malloc(((size_t)max_depth + 1) * sizeof(*stack))))
		return jsonscan_nomem(&ps->js);
	profile_reserve(ps->js.p, ps->nnodes, 0);
	for (uint32_t i = 0; i < ps->nnodes; i++) {
		const ss_node *n = &ps->nodes[i];
		uint32_t j = i;

		if (!n->v[0] && !n->v[1])
			continue;
		for (uint32_t k = n->depth; k > 0; k--) {
			stack[k - 1] = ps->nodes[j].func;
			j = ps->nodes[j].parent;
		}
		if ((rc = profile_add_sample(ps->js.p, stack, n->depth, n->v, ps->js.err)) < 0)
			goto out;
	}
out:
	free(stack);
	return rc;
}

static void parser_release(ss_parser *ps)
{
	jsonscan_release(&ps->js);
	free(ps->frame_func);
	strmap_release(&ps->frame_ids);
	buf_release(&ps->fname);
	buf_release(&ps->ffile);
	free(ps->profs);
	free(ps->idx);
	free(ps->stack_off);
	free(ps->weights);
	free(ps->events);
	free(ps->nodes);
	free(ps->kids);
}

int speedscope_parse(profile **out, const uint8_t *data, size_t len,
		     const char *name, const profile_limits *lim, pr_error *err)
{
	static const jsonscan_ops ops = {on_open, on_close, on_key, on_scalar};
	ss_parser ps;
	int rc;

	*out = NULL;
	memset(&ps, 0, sizeof(ps));
	strmap_init(&ps.frame_ids);
	jsonscan_init(&ps.js, name, err, data, len, &ops, &ps);
	buf_init(&ps.fname, SIZE_MAX);
	buf_init(&ps.ffile, SIZE_MAX);
	if ((rc = jsonscan_begin(&ps.js, PROFILE_FMT_SPEEDSCOPE, lim)) < 0 ||
	    (rc = jsonscan_read(&ps.js)) < 0 ||
	    (rc = check_shape(&ps)) < 0 ||
	    (rc = pick_columns(&ps)) < 0 ||
	    (rc = check_spans(&ps)) < 0 ||
	    (rc = tree_init(&ps)) < 0)
		goto out;
	for (size_t i = 0; i < ps.nprofs; i++) {
		rc = ps.profs[i].type == T_SAMPLED ? replay_sampled(&ps, i)
						    : replay_evented(&ps, i);
		if (rc < 0)
			goto out;
	}
	drop_scratch(&ps);
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

/* ---- detection -------------------------------------------------------- */

static bool is_space(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/*
 * Is `name` a key in data[0..len), that is, its quoted text followed by
 * a colon? Inside a JSON string a quote is escaped, so only a key (or a
 * string value followed by a colon, which JSON does not allow) matches.
 * On success *after is the offset just past the colon.
 */
static bool has_key(const uint8_t *data, size_t len, const char *name, size_t *after)
{
	size_t n = strlen(name);

	for (size_t i = 0; i + n + 2 <= len; i++) {
		size_t j = i + n + 2;

		if (data[i] != '"' || memcmp(data + i + 1, name, n) != 0 || data[i + n + 1] != '"')
			continue;
		while (j < len && is_space(data[j]))
			j++;
		if (j < len && data[j] == ':') {
			*after = j + 1;
			return true;
		}
	}
	return false;
}

bool speedscope_sniff(const uint8_t *data, size_t len)
{
	static const char mark[] = "speedscope";
	size_t i = jsonscan_bom(data, len), end, at;

	while (i < len && is_space(data[i]))
		i++;
	if (i >= len || data[i] != '{')
		return false;
	end = len - i > SNIFF_WINDOW ? i + SNIFF_WINDOW : len;
	data += i;
	len = end - i;
	if (has_key(data, len, "$schema", &at)) {
		while (at < len && is_space(data[at]))
			at++;
		/* The value: a string that names speedscope before it ends. */
		if (at < len && data[at] == '"')
			for (size_t k = at + 1; k + sizeof(mark) - 1 <= len && data[k] != '"'; k++)
				if (memcmp(data + k, mark, sizeof(mark) - 1) == 0)
					return true;
	}
	return has_key(data, len, "shared", &at) && has_key(data, len, "frames", &at) &&
	       has_key(data, len, "profiles", &at);
}
