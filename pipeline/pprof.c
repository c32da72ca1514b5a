/*
 * pprof.c: parser for pprof's profile.proto (see pprof.h).
 *
 * protobuf-c decodes the message; everything the wire format cannot say
 * is checked here before a sample reaches the model: string indices in
 * range, ids nonzero, unique and resolvable, one value per sample type,
 * no negative values, and the limits. When protobuf-c refuses the bytes
 * it says nothing about why, so a small walk over the wire format
 * (wire_next, wire_scan) then finds the offset and the reason.
 *
 * Memory stays proportional to the tables, not to the samples: the walk
 * splits the top-level fields, the tables (strings, functions, locations,
 * mappings) are decoded in one go, and the samples, usually most of the
 * input, one at a time into an arena that is reused. Every decode runs
 * under a budget of DECODE_BYTES_PER_INPUT_BYTE, and the expanded stacks
 * (one location can stand for many inlined frames, and many samples can
 * share one location) are capped at FRAMES_PER_INPUT_BYTE. Both are
 * relative to the input, so on their own they let 512 MB of empty
 * Location messages grow past 5 GB once decoded: the copy of the tables, their
 * decoded form and the lookup arrays are charged to the parse's memory
 * budget too (profile_mem_take), and each decode may use no more than
 * what is left of it.
 *
 * Names are bounded apart, by NAME_BYTES_PER_INPUT_BYTE: every Function
 * and every Location without lines names its frame by strings of the
 * table, and any number of them may name the same long string. The model
 * holds a name once, so the memory budget does not see the repeats, but
 * each one is read whole again (checked, tidied, hashed): a million 8-byte
 * Functions naming one 64 KiB string cost ten minutes.
 *
 * A heap profile's in-use columns may be negative where the allocation
 * columns are not: Go's net/http/pprof serves /debug/pprof/heap?seconds=N
 * and allocs?seconds=N as the difference of two heap profiles, and the
 * memory in use of a stack that freed more than it kept during the window
 * went down. That is no memory in use to take a share of, but what was
 * allocated during the window is exactly an allocation profile. So a
 * profile with alloc_* columns whose inuse_* values are negative is read
 * again without its inuse_* columns: an alloc profile. A window in which
 * every stack kept what it allocated has no negative value, and its
 * in-use columns are still the change over the window, not a heap: such a
 * profile is known by its duration, which net/http/pprof sets to the
 * window and Go's runtime never writes into a heap profile (only into a
 * CPU profile), so it is read without its inuse_* columns at once.
 * A negative value anywhere else (a `pprof -diff_base` output) is refused.
 *
 * Naming follows `pprof -top`: a frame is function.name (its
 * system_name when the name is empty), its file function.filename.
 * A location without line information is named as `pprof -top` and
 * `perf report` name it: the mapped object's base name in brackets
 * ("[libc.so.6]"), its file the object's path; "[unknown]" when no
 * mapped object is known. Its address is no name: a stripped binary's
 * samples spread over hundreds of instruction addresses, each a function
 * too small to judge, and every rebuild moves them all, so a release
 * would be a regression from nothing in each new address. (Captures
 * stored before were named "libc.so.6+0x9a3f0": while a service's window
 * holds such names, the analysis leaves the object unjudged, see
 * drop_renaming_objects in baselines/analysis.c.)
 */
#define _POSIX_C_SOURCE 200809L
#include "pipeline/pprof.h"
#include "pipeline/profile.pb-c.h"
#include "common/buf.h"
#include "common/redact.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* protobuf-c needs at most ~40 bytes per input byte (an empty Location). */
#define DECODE_BYTES_PER_INPUT_BYTE 64u
#define DECODE_BYTES_SLACK (1u << 20)
/* Legitimate profiles expand to well under one frame per input byte. */
#define FRAMES_PER_INPUT_BYTE 8u
#define FRAMES_SLACK (1u << 16)
/*
 * The names of all the frames read, counted once per Function and per
 * Location without lines: each has its own name in a real profile, and
 * only a file is shared (Go's are about 0.4 bytes per input byte; 10-byte
 * names in one 200-byte file, about 7). The slack lets any small profile
 * name frames freely.
 */
#define NAME_BYTES_PER_INPUT_BYTE 8u
#define NAME_BYTES_SLACK (64u << 20)

#define NONE UINT32_MAX

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

/* ---- the wire walk: why protobuf-c refused, and sniffing ------------- */

enum wire_kind { W_VARINT, W_BYTES, W_VARINTS, W_MSG };
enum wire_msg {
	M_PROFILE, M_VALUE_TYPE, M_SAMPLE, M_LABEL, M_MAPPING, M_LOCATION,
	M_LINE, M_FUNCTION, M_COUNT
};

typedef struct wire_field {
	uint8_t kind; /* wire_kind */
	uint8_t sub;  /* wire_msg, for W_MSG */
	const char *name;
} wire_field;

/* Index: field number. A missing entry (name NULL) is an unknown field. */
static const wire_field wire_schema[M_COUNT][15] = {
	[M_PROFILE] = {
		[1] = {W_MSG, M_VALUE_TYPE, "sample_type"},
		[2] = {W_MSG, M_SAMPLE, "sample"},
		[3] = {W_MSG, M_MAPPING, "mapping"},
		[4] = {W_MSG, M_LOCATION, "location"},
		[5] = {W_MSG, M_FUNCTION, "function"},
		[6] = {W_BYTES, 0, "string_table"},
		[7] = {W_VARINT, 0, "drop_frames"},
		[8] = {W_VARINT, 0, "keep_frames"},
		[9] = {W_VARINT, 0, "time_nanos"},
		[10] = {W_VARINT, 0, "duration_nanos"},
		[11] = {W_MSG, M_VALUE_TYPE, "period_type"},
		[12] = {W_VARINT, 0, "period"},
		[13] = {W_VARINTS, 0, "comment"},
		[14] = {W_VARINT, 0, "default_sample_type"},
	},
	[M_VALUE_TYPE] = {
		[1] = {W_VARINT, 0, "type"},
		[2] = {W_VARINT, 0, "unit"},
	},
	[M_SAMPLE] = {
		[1] = {W_VARINTS, 0, "location_id"},
		[2] = {W_VARINTS, 0, "value"},
		[3] = {W_MSG, M_LABEL, "label"},
	},
	[M_LABEL] = {
		[1] = {W_VARINT, 0, "key"},
		[2] = {W_VARINT, 0, "str"},
		[3] = {W_VARINT, 0, "num"},
		[4] = {W_VARINT, 0, "num_unit"},
	},
	[M_MAPPING] = {
		[1] = {W_VARINT, 0, "id"},
		[2] = {W_VARINT, 0, "memory_start"},
		[3] = {W_VARINT, 0, "memory_limit"},
		[4] = {W_VARINT, 0, "file_offset"},
		[5] = {W_VARINT, 0, "filename"},
		[6] = {W_VARINT, 0, "build_id"},
		[7] = {W_VARINT, 0, "has_functions"},
		[8] = {W_VARINT, 0, "has_filenames"},
		[9] = {W_VARINT, 0, "has_line_numbers"},
		[10] = {W_VARINT, 0, "has_inline_frames"},
	},
	[M_LOCATION] = {
		[1] = {W_VARINT, 0, "id"},
		[2] = {W_VARINT, 0, "mapping_id"},
		[3] = {W_VARINT, 0, "address"},
		[4] = {W_MSG, M_LINE, "line"},
		[5] = {W_VARINT, 0, "is_folded"},
	},
	[M_LINE] = {
		[1] = {W_VARINT, 0, "function_id"},
		[2] = {W_VARINT, 0, "line"},
		[3] = {W_VARINT, 0, "column"},
	},
	[M_FUNCTION] = {
		[1] = {W_VARINT, 0, "id"},
		[2] = {W_VARINT, 0, "name"},
		[3] = {W_VARINT, 0, "system_name"},
		[4] = {W_VARINT, 0, "filename"},
		[5] = {W_VARINT, 0, "start_line"},
	},
};

static const char *const wire_msg_name[M_COUNT] = {
	"Profile", "ValueType", "Sample", "Label", "Mapping", "Location",
	"Line", "Function",
};

typedef struct wire_fault {
	size_t total; /* input length: the outermost message ends there */
	size_t off;
	bool eof;
	char why[160];
} wire_fault;

/* Read a varint at d[*pos] (end: one past the last byte); 0 or -1. */
static int wire_varint(const uint8_t *d, size_t *pos, size_t end, uint64_t *out)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < 10; i++) {
		if (*pos >= end)
			return -1;
		uint8_t b = d[(*pos)++];
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -1;
}

static int wire_fail(wire_fault *f, size_t off, bool eof, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int wire_fail(wire_fault *f, size_t off, bool eof, const char *fmt, ...)
{
	va_list ap;

	f->off = off;
	f->eof = eof;
	va_start(ap, fmt);
	vsnprintf(f->why, sizeof(f->why), fmt, ap);
	va_end(ap);
	return -1;
}

/* "Profile.sample", or "field 17 of Profile" for a field we do not know. */
static const char *field_label(char *b, size_t n, int msg, const wire_field *fd,
			       uint32_t num)
{
	if (fd)
		snprintf(b, n, "%s.%s", wire_msg_name[msg], fd->name);
	else
		snprintf(b, n, "field %" PRIu32 " of %s", num, wire_msg_name[msg]);
	return b;
}

/* One field as wire_next found it. */
typedef struct wire_item {
	size_t at;             /* offset of its tag */
	size_t off, len;       /* its payload, for length-delimited fields */
	uint32_t num;
	unsigned wt;
	const wire_field *fd;  /* NULL: a field the schema does not know */
} wire_item;

/*
 * Read the field at d[*pos] of a message of type `msg` that ends at
 * `end`, check what protobuf-c would check of it (tag, wire type for a
 * known field, lengths, packed varints) without looking inside
 * submessages, and move *pos past it. 0, or -1 with `f` filled in.
 */
static int wire_next(const uint8_t *d, size_t *pos, size_t end, int msg,
		     wire_item *it, wire_fault *f)
{
	/* Only the outermost message ends where the input does. */
	bool top = msg == M_PROFILE && end == f->total;
	const wire_field *fd = NULL;
	char name[64];
	uint64_t key, v;
	size_t vat;

	it->at = *pos;
	if (wire_varint(d, pos, end, &key) < 0)
		return wire_fail(f, it->at, top && *pos == end,
				 "bad field tag (truncated or over-long) in %s",
				 wire_msg_name[msg]);
	if (*pos - it->at > 5 || (key >> 3) > 0x1fffffff)
		return wire_fail(f, it->at, false, "field tag too large in %s",
				 wire_msg_name[msg]);
	it->num = (uint32_t)(key >> 3);
	it->wt = (unsigned)(key & 7);
	if (it->num == 0)
		return wire_fail(f, it->at, false, "field number 0 in %s", wire_msg_name[msg]);
	if (it->num < 15 && wire_schema[msg][it->num].name)
		fd = &wire_schema[msg][it->num];
	it->fd = fd;
	vat = *pos;
	switch (it->wt) {
	case 0:
		if (fd && fd->kind != W_VARINT && fd->kind != W_VARINTS)
			goto wrong_type;
		if (wire_varint(d, pos, end, &v) < 0)
			return wire_fail(f, vat, top && *pos == end,
					 "bad varint (truncated or longer than 10 bytes) in %s",
					 field_label(name, sizeof(name), msg, fd, it->num));
		return 0;
	case 1:
	case 5:
		if (fd)
			goto wrong_type;
		if (end - *pos < (it->wt == 1 ? 8u : 4u))
			return wire_fail(f, it->at, top, "truncated fixed-size %s",
					 field_label(name, sizeof(name), msg, fd, it->num));
		*pos += it->wt == 1 ? 8 : 4;
		return 0;
	case 2:
		if (fd && fd->kind == W_VARINT)
			goto wrong_type;
		if (wire_varint(d, pos, end, &v) < 0)
			return wire_fail(f, vat, top && *pos == end, "bad length of %s",
					 field_label(name, sizeof(name), msg, fd, it->num));
		if (v > end - *pos)
			return wire_fail(f, it->at, top,
					 "%s claims %" PRIu64 " bytes but only %zu remain",
					 field_label(name, sizeof(name), msg, fd, it->num),
					 v, end - *pos);
		it->off = *pos;
		it->len = (size_t)v;
		*pos += it->len;
		if (fd && fd->kind == W_VARINTS) {
			for (size_t p = it->off; p < *pos;) {
				vat = p;
				if (wire_varint(d, &p, *pos, &v) < 0)
					return wire_fail(f, vat, false, "bad varint in packed %s",
							 field_label(name, sizeof(name), msg,
								     fd, it->num));
			}
		}
		return 0;
	default:
		return wire_fail(f, it->at, false, "unsupported wire type %u for %s", it->wt,
				 field_label(name, sizeof(name), msg, fd, it->num));
	}
wrong_type:
	return wire_fail(f, it->at, false, "wrong wire type %u for %s", it->wt,
			 field_label(name, sizeof(name), msg, fd, it->num));
}

/*
 * Walk the message of type `msg` in d[start, end), recursing into known
 * submessages, and report the first thing protobuf-c would refuse.
 */
static int wire_scan(const uint8_t *d, size_t start, size_t end, int msg,
		     wire_fault *f)
{
	wire_item it;

	for (size_t pos = start; pos < end;) {
		if (wire_next(d, &pos, end, msg, &it, f) < 0)
			return -1;
		if (it.wt == 2 && it.fd && it.fd->kind == W_MSG &&
		    wire_scan(d, it.off, it.off + it.len, it.fd->sub, f) < 0)
			return -1;
	}
	return 0;
}

/*
 * Cheap: the first field must be one a Profile has, with its wire type,
 * and the first few fields (submessages included) must be well formed, so
 * text and JSON fail within a byte or two. Input that ends in the middle
 * of a field after at least one whole one passes: it is a truncated
 * profile, and the parser will say so better than "unknown format".
 */
bool pprof_sniff(const uint8_t *data, size_t len)
{
	wire_fault f;
	wire_item it;
	size_t pos = 0;

	if (!data || len == 0)
		return false;
	f.total = len;
	for (int i = 0; i < 8 && pos < len; i++) {
		if (wire_next(data, &pos, len, M_PROFILE, &it, &f) < 0)
			return i > 0 && f.eof;
		if (i == 0 && !it.fd)
			return false;
		if (it.wt == 2 && it.fd && it.fd->kind == W_MSG &&
		    wire_scan(data, it.off, it.off + it.len, it.fd->sub, &f) < 0)
			return false;
	}
	return true;
}

/* ---- decoding into an arena, under a memory budget ----------------- */

/*
 * protobuf-c makes several small allocations per sample; a bump arena
 * makes them nearly free, frees them all at once, and lets the budget
 * count exactly what the decoder asked for.
 */
#define ARENA_CHUNK (1u << 20)
#define ARENA_ALIGN 16u

typedef struct arena_chunk {
	struct arena_chunk *next;
	size_t used, cap;
	_Alignas(ARENA_ALIGN) unsigned char data[];
} arena_chunk;

typedef struct arena {
	arena_chunk *head; /* the chunk being filled, then older ones */
	size_t left;       /* budget: bytes the decoder may still ask for */
	bool exceeded;     /* the budget ran out */
	bool oom;          /* malloc failed */
} arena;

static void *arena_alloc(void *data, size_t size)
{
	arena *a = data;
	arena_chunk *c = a->head;
	size_t need;
	void *p;

	if (size > a->left || size > SIZE_MAX - 2 * ARENA_ALIGN - sizeof(*c)) {
		a->exceeded = true;
		return NULL;
	}
	a->left -= size;
	need = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (!need)
		need = ARENA_ALIGN;
	if (!c || c->cap - c->used < need) {
		size_t cap = need > ARENA_CHUNK / 4 ? need : ARENA_CHUNK;
		arena_chunk *n = malloc(sizeof(*n) + cap);
		if (!n) {
			a->oom = true;
			return NULL;
		}
		n->used = 0;
		n->cap = cap;
		if (c && cap == need) {
			/* A big block gets a chunk of its own behind the current one,
			 * which stays open for the small blocks that follow. */
			n->next = c->next;
			c->next = n;
			n->used = need;
			return n->data;
		}
		n->next = c;
		a->head = c = n;
	}
	p = c->data + c->used;
	c->used += need;
	return p;
}

/* Blocks are only ever freed together, by arena_release. */
static void arena_free(void *data, void *ptr)
{
	(void)data;
	(void)ptr;
}

/* Forget every block but keep the newest chunk, for the next message. */
static void arena_reset(arena *a, size_t budget)
{
	if (a->head) {
		arena_chunk *c = a->head->next;
		while (c) {
			arena_chunk *n = c->next;
			free(c);
			c = n;
		}
		a->head->next = NULL;
		a->head->used = 0;
	}
	a->left = budget;
	a->exceeded = false;
	a->oom = false;
}

static void arena_release(arena *a)
{
	while (a->head) {
		arena_chunk *n = a->head->next;
		free(a->head);
		a->head = n;
	}
}

/* ---- id -> index maps ----------------------------------------------- */

/*
 * Most producers number mappings, locations and functions 1..n in order;
 * then the index is the id minus one. Anything else goes through an
 * open-addressing table.
 */
typedef struct idmap {
	bool dense;
	size_t n;
	uint64_t *keys; /* 0: empty slot (ids are nonzero) */
	uint32_t *vals;
	size_t mask;
	uint64_t seed;
} idmap;

static void idmap_release(idmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/*
 * The ids come from the input: an unpredictable seed keeps anyone from
 * choosing ids that all land in one slot and make every lookup a scan.
 */
static inline uint64_t id_hash(uint64_t x, uint64_t seed)
{
	x += seed;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static uint32_t idmap_get(const idmap *m, uint64_t id)
{
	if (m->dense)
		return id >= 1 && id <= m->n ? (uint32_t)(id - 1) : NONE;
	if (!m->keys || id == 0)
		return NONE;
	for (size_t i = id_hash(id, m->seed) & m->mask;; i = (i + 1) & m->mask) {
		if (m->keys[i] == id)
			return m->vals[i];
		if (m->keys[i] == 0)
			return NONE;
	}
}

/* ---- the parser ------------------------------------------------------ */

typedef struct parser {
	const char *name;
	const pb_profile *m;
	profile *p;
	pr_error *err;

	idmap maps, locs, funcs;
	uint32_t *func_ids; /* function index -> profile function, or NONE */
	strmap pairs;       /* the (name, filename) string indices of a function -> its id */
	size_t *loc_off;    /* location index -> loc_frames offset, or SIZE_MAX */
	uint32_t *loc_len;
	uint32_t *loc_frames; /* each location's frames, innermost first */
	size_t nloc_frames, loc_frames_cap;
	uint32_t *stack;
	size_t stack_cap;
	uint64_t frames_left; /* budget for all expanded stacks together */
	uint64_t names_left;  /* budget for the bytes of every frame's names */
	size_t nsamples;      /* Profile.sample fields in the input */
	const pprof_label_filter *only; /* keep only the samples it matches; NULL: all */
	uint64_t only_num;              /* only->value as an unsigned decimal, when only_is_num */
	bool only_is_num;
	size_t kept, skipped;
	bool drop_inuse;      /* a delta heap profile: leave the inuse_* columns out */
	bool inuse_negative;  /* set when a negative inuse_* value stopped the parse */
	size_t *cols;         /* the sample types kept, as indices into the input's */
	size_t ncols;
	int64_t *vals;        /* scratch: one sample's kept values */
} parser;

static int bad(parser *ps, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int bad(parser *ps, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return pr_error_set(ps->err, PR_EDATA, "cannot parse '%s': %s", ps->name, msg);
}

static int nomem(parser *ps)
{
	return pr_error_set(ps->err, PR_ENOMEM, "cannot parse '%s': out of memory",
			    ps->name);
}

/* Count a frame's name and file against names_left before they are read. */
static int take_names(parser *ps, size_t name_len, size_t file_len)
{
	uint64_t n = (uint64_t)name_len + file_len;

	if (n > ps->names_left)
		return pr_error_set(ps->err, PR_ELIMIT,
				    "cannot parse '%s': the names of its functions and locations "
				    "add up to more than %u bytes per input byte",
				    ps->name, NAME_BYTES_PER_INPUT_BYTE);
	ps->names_left -= n;
	return 0;
}

static uint64_t hash_seed(const void *where)
{
	struct timespec ts;
	uint64_t s = (uint64_t)(uintptr_t)where;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	s ^= (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ULL ^ (uint64_t)ts.tv_sec;
	return s;
}

/* Build the map of `n` ids read by `get`; `what` names them in messages. */
static int idmap_build(parser *ps, idmap *m, size_t n, const char *what,
		       uint64_t (*get)(const pb_profile *, size_t))
{
	size_t cap = 16;
	int rc;

	memset(m, 0, sizeof(*m));
	m->n = n;
	if (n >= NONE)
		return pr_error_set(ps->err, PR_ELIMIT, "cannot parse '%s': too many %ss",
				    ps->name, what);
	m->dense = true;
	for (size_t i = 0; i < n; i++) {
		uint64_t id = get(ps->m, i);
		if (id == 0)
			return bad(ps, "the %s at index %zu has the reserved id 0", what, i);
		if (id != i + 1)
			m->dense = false;
	}
	if (m->dense)
		return 0;
	while (cap < 2 * n)
		cap *= 2;
	if ((rc = profile_mem_take(ps->p, cap * (sizeof(*m->keys) + sizeof(*m->vals)),
				   ps->err)) < 0)
		return rc;
	if (!(m->keys = calloc(cap, sizeof(*m->keys))) ||
	    !(m->vals = malloc(cap * sizeof(*m->vals))))
		return nomem(ps);
	m->mask = cap - 1;
	m->seed = hash_seed(m);
	for (size_t i = 0; i < n; i++) {
		uint64_t id = get(ps->m, i);
		size_t s = id_hash(id, m->seed) & m->mask;
		while (m->keys[s] && m->keys[s] != id)
			s = (s + 1) & m->mask;
		if (m->keys[s] == id)
			return bad(ps, "duplicate %s id %" PRIu64, what, id);
		m->keys[s] = id;
		m->vals[s] = (uint32_t)i;
	}
	return 0;
}

static uint64_t mapping_id(const pb_profile *m, size_t i) { return m->mapping[i]->id; }
static uint64_t location_id(const pb_profile *m, size_t i) { return m->location[i]->id; }
static uint64_t function_id(const pb_profile *m, size_t i) { return m->function[i]->id; }

/* `what` (a format) names the referring field, formatted only on error. */
static int check_str(parser *ps, int64_t idx, const char *what, ...)
	__attribute__((format(printf, 3, 4)));

static int check_str(parser *ps, int64_t idx, const char *what, ...)
{
	char field[128];
	va_list ap;

	if (idx >= 0 && (uint64_t)idx < ps->m->n_string_table)
		return 0;
	va_start(ap, what);
	vsnprintf(field, sizeof(field), what, ap);
	va_end(ap);
	return bad(ps,
		   "string index %" PRId64
		   " of %s is out of range (the string table has %zu entries)",
		   idx, field, ps->m->n_string_table);
}

static const ProtobufCBinaryData *str_at(const parser *ps, int64_t idx)
{
	return &ps->m->string_table[idx];
}

/* An empty string may come decoded with no data at all: memcmp must not see it. */
static bool bytes_equal(const void *a, size_t alen, const void *b, size_t blen)
{
	return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

static bool str_is(const ProtobufCBinaryData *s, const char *text)
{
	return bytes_equal(s->data, s->len, text, strlen(text));
}

/*
 * The filter's value as an unsigned decimal (digits only, no sign, no
 * overflow), for the labels that carry their value as a number.
 */
static bool parse_decimal(uint64_t *out, const char *text)
{
	uint64_t v = 0;

	if (!*text)
		return false;
	for (; *text; text++) {
		unsigned d = (unsigned)(*text - '0');
		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

/*
 * Does the label's value say the filter's? Go's profilers write a span
 * id as a string; libdatadog (dd-trace-py, -rb, -php, .NET) writes
 * "span id" and "local root span id" as a number (Label.num) with no
 * string, which the requested id names in decimal.
 */
static bool label_matches(const parser *ps, const pb_label *lb)
{
	if (lb->str != 0)
		return str_is(str_at(ps, lb->str), ps->only->value);
	return ps->only_is_num && (uint64_t)lb->num == ps->only_num;
}

/*
 * Does the (checked) sample carry one of the filter's keys with its
 * value? The label's value is compared and forgotten: nothing of it is
 * kept in the model.
 */
static bool wanted(const parser *ps, const pb_sample *s)
{
	const pprof_label_filter *f = ps->only;

	for (size_t k = 0; k < s->n_label; k++) {
		const pb_label *lb = s->label[k];
		if (!label_matches(ps, lb))
			continue;
		for (size_t j = 0; j < f->nkeys; j++)
			if (str_is(str_at(ps, lb->key), f->keys[j]))
				return true;
	}
	return false;
}

/* Is sample type i a heap profile's in-use column ("inuse_space")? */
static bool type_is_inuse(const parser *ps, size_t i)
{
	const ProtobufCBinaryData *t = str_at(ps, ps->m->sample_type[i]->type);

	return t->len > 6 && memcmp(t->data, "inuse_", 6) == 0;
}

/* Does the profile have an allocation column ("alloc_space")? */
static bool has_alloc_type(const parser *ps)
{
	for (size_t i = 0; i < ps->m->n_sample_type; i++) {
		const ProtobufCBinaryData *t = str_at(ps, ps->m->sample_type[i]->type);
		if (t->len > 6 && memcmp(t->data, "alloc_", 6) == 0)
			return true;
	}
	return false;
}

/* Does the profile have a CPU column ("cpu" or "samples")? */
static bool has_cpu_type(const parser *ps)
{
	for (size_t i = 0; i < ps->m->n_sample_type; i++) {
		const ProtobufCBinaryData *t = str_at(ps, ps->m->sample_type[i]->type);
		if ((t->len == 3 && memcmp(t->data, "cpu", 3) == 0) ||
		    (t->len == 7 && memcmp(t->data, "samples", 7) == 0))
			return true;
	}
	return false;
}

/*
 * A sample type name or unit as a C string: printable ASCII only, since it
 * ends up in the index and in reports; anything else becomes '?'.
 */
static char *dup_label(const ProtobufCBinaryData *s)
{
	char *c = malloc(s->len + 1);
	size_t n = s->len, m;

	if (!c)
		return NULL;
	for (size_t i = 0; i < s->len; i++)
		c[i] = s->data[i] >= 0x20 && s->data[i] < 0x7f ? (char)s->data[i] : '?';
	/*
	 * A value type's name is the profile's text as much as a function's,
	 * and goes as far (the capture's row, profile show, export): payment
	 * data in it is cut as in names.
	 */
	while ((m = redact_names(c, n)) != n)
		n = m;
	c[n] = '\0';
	return c;
}

/* Everything but the samples: the tables and every reference in them. */
static int check_tables(parser *ps)
{
	const pb_profile *m = ps->m;
	int rc;

	if (m->n_string_table == 0)
		return bad(ps, "the string table is empty (string_table[0] must be \"\")");
	if (m->string_table[0].len != 0)
		return bad(ps, "string_table[0] is not the empty string");
	if (m->n_sample_type == 0 && ps->nsamples != 0)
		return bad(ps, "%zu samples but no sample types", ps->nsamples);
	for (size_t i = 0; i < m->n_sample_type; i++) {
		if ((rc = check_str(ps, m->sample_type[i]->type, "sample_type %zu type", i)) < 0 ||
		    (rc = check_str(ps, m->sample_type[i]->unit, "sample_type %zu unit", i)) < 0)
			return rc;
	}
	if (m->period_type &&
	    ((rc = check_str(ps, m->period_type->type, "period_type type")) < 0 ||
	     (rc = check_str(ps, m->period_type->unit, "period_type unit")) < 0))
		return rc;
	if ((rc = check_str(ps, m->drop_frames, "drop_frames")) < 0 ||
	    (rc = check_str(ps, m->keep_frames, "keep_frames")) < 0 ||
	    (rc = check_str(ps, m->default_sample_type, "default_sample_type")) < 0)
		return rc;
	for (size_t i = 0; i < m->n_comment; i++)
		if ((rc = check_str(ps, m->comment[i], "comment %zu", i)) < 0)
			return rc;
	if (m->period < 0)
		return bad(ps, "negative period %" PRId64, m->period);
	if (m->duration_nanos < 0)
		return bad(ps, "negative duration_nanos %" PRId64, m->duration_nanos);
	if (m->time_nanos < 0)
		return bad(ps, "negative time_nanos %" PRId64, m->time_nanos);

	if ((rc = idmap_build(ps, &ps->maps, m->n_mapping, "mapping", mapping_id)) < 0 ||
	    (rc = idmap_build(ps, &ps->funcs, m->n_function, "function", function_id)) < 0 ||
	    (rc = idmap_build(ps, &ps->locs, m->n_location, "location", location_id)) < 0)
		return rc;

	for (size_t i = 0; i < m->n_mapping; i++) {
		const pb_mapping *mp = m->mapping[i];
		if ((rc = check_str(ps, mp->filename, "mapping %" PRIu64 " filename",
				    mp->id)) < 0 ||
		    (rc = check_str(ps, mp->build_id, "mapping %" PRIu64 " build_id",
				    mp->id)) < 0)
			return rc;
	}
	for (size_t i = 0; i < m->n_function; i++) {
		const pb_function *fn = m->function[i];
		if ((rc = check_str(ps, fn->name, "function %" PRIu64 " name", fn->id)) < 0 ||
		    (rc = check_str(ps, fn->system_name, "function %" PRIu64 " system_name",
				    fn->id)) < 0 ||
		    (rc = check_str(ps, fn->filename, "function %" PRIu64 " filename",
				    fn->id)) < 0)
			return rc;
	}
	for (size_t i = 0; i < m->n_location; i++) {
		const pb_location *l = m->location[i];
		if (l->mapping_id && idmap_get(&ps->maps, l->mapping_id) == NONE)
			return bad(ps, "location %" PRIu64 " refers to mapping id %" PRIu64
				   " that does not exist", l->id, l->mapping_id);
		for (size_t j = 0; j < l->n_line; j++) {
			uint64_t fid = l->line[j]->function_id;
			if (fid == 0)
				return bad(ps, "location %" PRIu64 " has a line without a function",
					   l->id);
			if (idmap_get(&ps->funcs, fid) == NONE)
				return bad(ps, "location %" PRIu64 " refers to function id %" PRIu64
					   " that does not exist", l->id, fid);
		}
	}
	return 0;
}

static int set_header(parser *ps)
{
	const pb_profile *m = ps->m;
	profile *p = ps->p;
	char **types = NULL, **units = NULL;
	size_t n = m->n_sample_type;
	int rc = 0;

	if (n && (!(types = calloc(n, sizeof(*types))) ||
		  !(units = calloc(n, sizeof(*units))) ||
		  !(ps->cols = malloc(n * sizeof(*ps->cols))) ||
		  !(ps->vals = malloc(n * sizeof(*ps->vals))))) {
		rc = nomem(ps);
		goto out;
	}
	ps->ncols = 0;
	if (m->duration_nanos > 0 && has_alloc_type(ps))
		ps->drop_inuse = true;
	for (size_t i = 0; i < n; i++)
		if (!ps->drop_inuse || !type_is_inuse(ps, i))
			ps->cols[ps->ncols++] = i;
	for (size_t c = 0; c < ps->ncols; c++) {
		size_t i = ps->cols[c];
		const ProtobufCBinaryData *t = str_at(ps, m->sample_type[i]->type);
		const ProtobufCBinaryData *u = str_at(ps, m->sample_type[i]->unit);
		if (t->len > p->limits.max_string_len || u->len > p->limits.max_string_len) {
			rc = pr_error_set(ps->err, PR_ELIMIT,
					  "cannot parse '%s': sample_type %zu has a "
					  "name of more than %u bytes",
					  ps->name, i, p->limits.max_string_len);
			goto out;
		}
		if (!(types[c] = dup_label(t)) || !(units[c] = dup_label(u))) {
			rc = nomem(ps);
			goto out;
		}
	}
	if ((rc = profile_set_value_types(p, ps->ncols, (const char *const *)types,
					  (const char *const *)units, ps->err)) < 0)
		goto out;

	if (m->default_sample_type) {
		const ProtobufCBinaryData *d = str_at(ps, m->default_sample_type);
		for (size_t c = 0; c < ps->ncols; c++) {
			const ProtobufCBinaryData *t =
				str_at(ps, m->sample_type[ps->cols[c]]->type);
			if (bytes_equal(t->data, t->len, d->data, d->len)) {
				p->default_value = (int64_t)c;
				p->primary = c;
				break;
			}
		}
	}
	if (m->period_type && str_at(ps, m->period_type->type)->len) {
		const ProtobufCBinaryData *t = str_at(ps, m->period_type->type);
		const ProtobufCBinaryData *u = str_at(ps, m->period_type->unit);
		if (t->len > p->limits.max_string_len || u->len > p->limits.max_string_len) {
			rc = pr_error_set(ps->err, PR_ELIMIT,
					  "cannot parse '%s': period_type has a name "
					  "of more than %u bytes",
					  ps->name, p->limits.max_string_len);
			goto out;
		}
		if (!(p->period_type.type = dup_label(t)) ||
		    !(p->period_type.unit = dup_label(u))) {
			rc = nomem(ps);
			goto out;
		}
	}
	p->period = m->period;
	p->duration_ns = m->duration_nanos;
	p->time_ns = m->time_nanos;
out:
	for (size_t i = 0; types && i < n; i++) {
		free(types[i]);
		free(units[i]);
	}
	free(types);
	free(units);
	return rc;
}

static int intern_function(parser *ps, uint32_t fi, uint32_t *out)
{
	const pb_function *fn;
	const ProtobufCBinaryData *name, *file;
	uint64_t pair[2];
	uint32_t same;
	int rc;

	if (ps->func_ids[fi] != NONE) {
		*out = ps->func_ids[fi];
		return 0;
	}
	fn = ps->m->function[fi];
	name = str_at(ps, fn->name);
	if (name->len == 0)
		name = str_at(ps, fn->system_name);
	file = str_at(ps, fn->filename);
	/*
	 * Functions that name the same strings are one function: made stable
	 * once, not once each (a file of a few KB can hold a thousand that
	 * share one 64 KB file name).
	 */
	pair[0] = (uint64_t)(name - ps->m->string_table);
	pair[1] = (uint64_t)(file - ps->m->string_table);
	/* Counted all the same: the budget bounds what a file may name, as it did. */
	if ((rc = take_names(ps, name->len, file->len)) < 0)
		return rc;
	if (strmap_get(&ps->pairs, (const char *)pair, sizeof(pair), out)) {
		ps->func_ids[fi] = *out;
		return 0;
	}
	if ((rc = profile_intern(ps->p, out, (const char *)name->data, name->len,
				 (const char *)file->data, file->len, ps->err)) < 0)
		return rc;
	/* The pair's key, and its slot of the map at its fullest and while it grows. */
	if ((rc = profile_mem_take(ps->p, sizeof(pair) + 1 + 3 * sizeof(strmap_slot),
				   ps->err)) < 0)
		return rc;
	if (strmap_put(&ps->pairs, (const char *)pair, sizeof(pair), *out, &same, NULL) < 0)
		return nomem(ps);
	ps->func_ids[fi] = *out;
	return 0;
}

/* The frame of a location that has no line information. */
static int intern_address(parser *ps, const pb_location *l, uint32_t *out)
{
	const pb_mapping *mp = NULL;
	const ProtobufCBinaryData *file = NULL;
	const char *base = NULL;
	size_t base_len = 0;
	bool bracketed;
	buf name = BUF_INIT;
	int rc;

	if (l->mapping_id)
		mp = ps->m->mapping[idmap_get(&ps->maps, l->mapping_id)];
	if (mp && (file = str_at(ps, mp->filename))->len) {
		const uint8_t *slash = NULL;
		for (size_t i = 0; i < file->len; i++)
			if (file->data[i] == '/')
				slash = file->data + i;
		base = slash ? (const char *)slash + 1 : (const char *)file->data;
		base_len = file->len - (size_t)((const uint8_t *)base - file->data);
	} else {
		file = NULL;
	}
	/* "[vdso]" and the like are bracketed already. */
	bracketed = base_len >= 2 && base[0] == '[' && base[base_len - 1] == ']';
	if (base_len)
		rc = (!bracketed && buf_putc(&name, '[') < 0) ||
		     buf_put(&name, base, base_len) < 0 || (!bracketed && buf_putc(&name, ']') < 0);
	else
		rc = 0; /* nothing known: the model names it "[unknown]" */
	if (rc) {
		buf_release(&name);
		return nomem(ps);
	}
	if ((rc = take_names(ps, name.len, file ? file->len : 0)) == 0)
		rc = profile_intern(ps->p, out, name.ptr, name.len,
				    file ? (const char *)file->data : NULL, file ? file->len : 0,
				    ps->err);
	buf_release(&name);
	return rc;
}

/* Expand location `li` into frames, innermost first, once. */
static int expand_location(parser *ps, uint32_t li)
{
	const pb_location *l = ps->m->location[li];
	size_t need = l->n_line ? l->n_line : 1;
	uint32_t *dst;
	int rc;

	if ((rc = profile_mem_take(ps->p, need * sizeof(*dst), ps->err)) < 0)
		return rc;
	if (need > ps->loc_frames_cap - ps->nloc_frames) {
		size_t cap = ps->loc_frames_cap ? ps->loc_frames_cap : 1024;
		uint32_t *f;
		while (cap - ps->nloc_frames < need)
			cap *= 2;
		if (!(f = realloc(ps->loc_frames, cap * sizeof(*f))))
			return nomem(ps);
		ps->loc_frames = f;
		ps->loc_frames_cap = cap;
	}
	dst = ps->loc_frames + ps->nloc_frames;
	if (l->n_line == 0) {
		if ((rc = intern_address(ps, l, dst)) < 0)
			return rc;
	}
	for (size_t j = 0; j < l->n_line; j++) {
		uint32_t fi = idmap_get(&ps->funcs, l->line[j]->function_id);
		if ((rc = intern_function(ps, fi, &dst[j])) < 0)
			return rc;
	}
	ps->loc_off[li] = ps->nloc_frames;
	ps->loc_len[li] = (uint32_t)need;
	ps->nloc_frames += need;
	return 0;
}

/* One decoded sample: check it, expand its stack and add it to the model. */
static int add_sample(parser *ps, size_t i, const pb_sample *s)
{
	profile *p = ps->p;
	size_t ntypes = ps->m->n_sample_type;
	size_t depth = 0;
	char q[40];
	int rc;

	if (s->n_value != ntypes)
		return bad(ps, "sample %zu has %zu values for %zu sample types",
			   i, s->n_value, ntypes);
	/* A sample type is the input's to name, up to 64 KiB: quote its start. */
	for (size_t k = 0; k < ntypes; k++) {
		const ProtobufCBinaryData *t;

		if (s->value[k] >= 0)
			continue;
		if (type_is_inuse(ps, k) && has_alloc_type(ps)) {
			if (ps->drop_inuse)
				continue;
			ps->inuse_negative = true;
		}
		t = str_at(ps, ps->m->sample_type[k]->type);
		/*
		 * Go's runtime writes a duration into a CPU profile only: any
		 * other with one and a negative count is net/http/pprof's
		 * difference over ?seconds=N (a goroutine profile's handler
		 * is always on another line in the second, so one is -1).
		 */
		if (ps->m->duration_nanos > 0 && !has_cpu_type(ps))
			return bad(ps, "sample %zu has a negative value %" PRId64 " for '%s': "
				   "a difference of two profiles (net/http/pprof's ?seconds=), "
				   "not a profile: fetch it without seconds=",
				   i, s->value[k],
				   profile_quote(q, (const char *)t->data, t->len));
		/* As 'go tool pprof -diff_base' writes, or a damaged one. */
		return bad(ps,
			   "sample %zu has a negative value %" PRId64 " for '%s': a diff "
			   "of two profiles, not a capture",
			   i, s->value[k], profile_quote(q, (const char *)t->data, t->len));
	}
	for (size_t c = 0; c < ps->ncols; c++)
		ps->vals[c] = s->value[ps->cols[c]];
	for (size_t k = 0; k < s->n_label; k++) {
		const pb_label *lb = s->label[k];
		if ((rc = check_str(ps, lb->key, "sample %zu label key", i)) < 0 ||
		    (rc = check_str(ps, lb->str, "sample %zu label value", i)) < 0 ||
		    (rc = check_str(ps, lb->num_unit, "sample %zu label unit", i)) < 0)
			return rc;
	}
	if (ps->only && !wanted(ps, s)) {
		ps->skipped++;
		return 0;
	}
	ps->kept++;
	for (size_t k = 0; k < s->n_location_id; k++) {
		uint32_t li = idmap_get(&ps->locs, s->location_id[k]);
		uint32_t n;
		if (li == NONE)
			return bad(ps, "sample %zu refers to location id %" PRIu64
				   " that does not exist", i, s->location_id[k]);
		if (ps->loc_off[li] == SIZE_MAX && (rc = expand_location(ps, li)) < 0)
			return rc;
		n = ps->loc_len[li];
		if (depth + n > p->limits.max_depth)
			return pr_error_set(ps->err, PR_ELIMIT,
					    "cannot parse '%s': sample %zu has a stack deeper "
					    "than the limit of %u frames",
					    ps->name, i, p->limits.max_depth);
		if (depth + n > ps->stack_cap) {
			size_t cap = ps->stack_cap ? ps->stack_cap : 256;
			uint32_t *st;
			while (cap < depth + n)
				cap *= 2;
			if (!(st = realloc(ps->stack, cap * sizeof(*st))))
				return nomem(ps);
			ps->stack = st;
			ps->stack_cap = cap;
		}
		/* Most locations are one frame: skip the call to memcpy. */
		if (n == 1)
			ps->stack[depth] = ps->loc_frames[ps->loc_off[li]];
		else
			memcpy(ps->stack + depth, ps->loc_frames + ps->loc_off[li],
			       n * sizeof(*ps->stack));
		depth += n;
	}
	if (depth > ps->frames_left)
		return pr_error_set(ps->err, PR_ELIMIT,
				    "cannot parse '%s': stacks expand to more than "
				    "%u frames per input byte",
				    ps->name, FRAMES_PER_INPUT_BYTE);
	ps->frames_left -= depth;
	return profile_add_sample_leaf_first(p, ps->stack, (uint32_t)depth, ps->vals,
					     ps->err);
}

static size_t decode_budget(size_t len)
{
	if (len > (SIZE_MAX - DECODE_BYTES_SLACK) / DECODE_BYTES_PER_INPUT_BYTE)
		return SIZE_MAX;
	return len * DECODE_BYTES_PER_INPUT_BYTE + DECODE_BYTES_SLACK;
}

/*
 * What a decode of `len` bytes may allocate: its own budget, or what is
 * left of the parse's memory budget when that is less (*capped says so).
 */
static size_t decode_room(const parser *ps, size_t len, bool *capped)
{
	size_t own = decode_budget(len);
	uint64_t left = ps->p->mem_max - ps->p->mem_used;

	*capped = left < own;
	return *capped ? (size_t)left : own;
}

/* The input is not well-formed protobuf: where and why. */
static int wire_error(parser *ps, const wire_fault *f)
{
	if (f->eof)
		return bad(ps, "truncated input of %zu bytes: %s at offset %zu",
			   f->total, f->why, f->off);
	return bad(ps, "malformed profile.proto data: %s at offset %zu", f->why, f->off);
}

/*
 * protobuf-c refused d[start, start + len), a message of type `msg`: say
 * why, with offsets into the whole input of `total` bytes.
 */
static int decode_failed(parser *ps, const uint8_t *d, size_t start, size_t len,
			 size_t total, int msg, const arena *mem, bool capped)
{
	wire_fault f;

	if (mem->oom)
		return nomem(ps);
	/* More than the parse's budget has left: the model's own message. */
	if (mem->exceeded && capped)
		return profile_mem_take(ps->p, UINT64_MAX, ps->err);
	if (mem->exceeded)
		return pr_error_set(ps->err, PR_ELIMIT,
				    "cannot parse '%s': decoding needs more than %zu bytes of "
				    "memory (%u per input byte)",
				    ps->name, decode_budget(len), DECODE_BYTES_PER_INPUT_BYTE);
	memset(&f, 0, sizeof(f));
	f.total = total;
	if (wire_scan(d, start, start + len, msg, &f) < 0)
		return wire_error(ps, &f);
	return bad(ps, "%s at offset %zu is not a valid %s message", wire_msg_name[msg],
		   start, wire_msg_name[msg]);
}

/*
 * Copy every top-level field but the samples to `rest` (NULL: only
 * measure them) and count the samples. The tables are decoded in one go
 * from `rest`; the samples, usually most of the input, one at a time into
 * memory that is reused, so that decoding them costs no memory that
 * grows with the profile.
 */
static int split_samples(parser *ps, const uint8_t *data, size_t len,
			 uint8_t *rest, size_t *rest_len, size_t *nsamples)
{
	wire_fault f;
	wire_item it;

	*rest_len = 0;
	*nsamples = 0;
	memset(&f, 0, sizeof(f));
	f.total = len;
	for (size_t pos = 0; pos < len;) {
		if (wire_next(data, &pos, len, M_PROFILE, &it, &f) < 0)
			return wire_error(ps, &f);
		if (it.num == 2) { /* Profile.sample; wire_next checked its type */
			++*nsamples;
			continue;
		}
		if (rest)
			memcpy(rest + *rest_len, data + it.at, pos - it.at);
		*rest_len += pos - it.at;
	}
	return 0;
}

static int add_samples(parser *ps, const uint8_t *data, size_t len)
{
	arena mem = {NULL, 0, false, false};
	ProtobufCAllocator alloc = {arena_alloc, arena_free, &mem};
	wire_fault f;
	wire_item it;
	size_t i = 0;
	bool capped;
	int rc = 0;

	memset(&f, 0, sizeof(f));
	f.total = len;
	for (size_t pos = 0; pos < len;) {
		pb_sample *s;

		/* split_samples has checked every top-level field already. */
		if (wire_next(data, &pos, len, M_PROFILE, &it, &f) < 0) {
			rc = wire_error(ps, &f);
			break;
		}
		if (it.num != 2)
			continue;
		arena_reset(&mem, decode_room(ps, it.len, &capped));
		if (!(s = perftools__profiles__sample__unpack(&alloc, it.len, data + it.off))) {
			rc = decode_failed(ps, data, it.off, it.len, len, M_SAMPLE, &mem, capped);
			break;
		}
		if ((rc = add_sample(ps, i++, s)) < 0)
			break;
	}
	arena_release(&mem);
	return rc;
}

int pprof_parse(profile **out, const uint8_t *data, size_t len,
		const char *name, const profile_limits *lim, pr_error *err)
{
	return pprof_parse_where(out, NULL, data, len, name, lim, NULL, err);
}

/* One reading of the input; drop_inuse leaves the inuse_* columns out. */
static int parse_once(profile **out, size_t *kept, bool *inuse_negative, const uint8_t *data,
		      size_t len, const char *name, const profile_limits *lim,
		      const pprof_label_filter *only, bool drop_inuse, pr_error *err)
{
	parser ps;
	pb_profile *m = NULL;
	arena mem = {NULL, 0, false, false};
	ProtobufCAllocator alloc = {arena_alloc, arena_free, &mem};
	uint8_t *rest = NULL;
	size_t rest_len, room;
	bool capped;
	int rc = 0;

	*out = NULL;
	memset(&ps, 0, sizeof(ps));
	strmap_init(&ps.pairs);
	ps.name = name ? name : "-";
	ps.err = err;
	ps.only = only && only->nkeys ? only : NULL;
	ps.only_is_num = ps.only && parse_decimal(&ps.only_num, ps.only->value);
	ps.drop_inuse = drop_inuse;

	if ((rc = profile_new(&ps.p, PROFILE_FMT_PPROF, ps.name, lim, err)) < 0)
		goto out;
	if (len == 0) {
		rc = bad(&ps, "empty input");
		goto out;
	}
	if ((rc = split_samples(&ps, data, len, NULL, &rest_len, &ps.nsamples)) < 0)
		goto out;
	if (ps.nsamples > ps.p->limits.max_samples) {
		rc = pr_error_set(err, PR_ELIMIT,
				  "cannot parse '%s': more than %llu samples (the sample limit)",
				  ps.name, (unsigned long long)ps.p->limits.max_samples);
		goto out;
	}
	/* The tables' copy is held while they decode, then handed back. */
	if ((rc = profile_mem_take(ps.p, rest_len, err)) < 0)
		goto out;
	if (!(rest = malloc(rest_len ? rest_len : 1))) {
		rc = nomem(&ps);
		goto out;
	}
	if ((rc = split_samples(&ps, data, len, rest, &rest_len, &ps.nsamples)) < 0)
		goto out;
	mem.left = room = decode_room(&ps, rest_len, &capped);
	if (!(m = perftools__profiles__profile__unpack(&alloc, rest_len, rest))) {
		/* Offsets in `rest` mean nothing to the user: scan the input. */
		rc = decode_failed(&ps, data, 0, len, len, M_PROFILE, &mem, capped);
		goto out;
	}
	free(rest);
	rest = NULL;
	profile_mem_give(ps.p, rest_len);
	/* The decoded tables live until the end of the parse. */
	if ((rc = profile_mem_take(ps.p, room - mem.left, err)) < 0)
		goto out;
	ps.m = m;
	if ((rc = check_tables(&ps)) < 0 || (rc = set_header(&ps)) < 0)
		goto out;
	/*
	 * Room for every sample at once, and for about a frame per two bytes
	 * of samples (a location id is a varint of a byte or more): growing
	 * them by doubling copied and faulted in most of their memory twice.
	 */
	profile_reserve(ps.p, ps.nsamples, (len - rest_len) / 2);

	if ((rc = profile_mem_take(ps.p, m->n_function * sizeof(*ps.func_ids) +
				   m->n_location * (sizeof(*ps.loc_off) + sizeof(*ps.loc_len)),
				   err)) < 0)
		goto out;
	if ((m->n_function &&
	     !(ps.func_ids = malloc(m->n_function * sizeof(*ps.func_ids)))) ||
	    (m->n_location &&
	     (!(ps.loc_off = malloc(m->n_location * sizeof(*ps.loc_off))) ||
	      !(ps.loc_len = malloc(m->n_location * sizeof(*ps.loc_len)))))) {
		rc = nomem(&ps);
		goto out;
	}
	for (size_t i = 0; i < m->n_function; i++)
		ps.func_ids[i] = NONE;
	for (size_t i = 0; i < m->n_location; i++)
		ps.loc_off[i] = SIZE_MAX;
	ps.frames_left = (uint64_t)len * FRAMES_PER_INPUT_BYTE + FRAMES_SLACK;
	ps.names_left = (uint64_t)len * NAME_BYTES_PER_INPUT_BYTE + NAME_BYTES_SLACK;
	if ((rc = add_samples(&ps, data, len)) < 0)
		goto out;
	*out = ps.p;
	ps.p = NULL;
	if (kept)
		*kept = ps.kept;
out:
	*inuse_negative = ps.inuse_negative;
	free(rest);
	arena_release(&mem); /* the decoded tables */
	idmap_release(&ps.maps);
	idmap_release(&ps.locs);
	idmap_release(&ps.funcs);
	strmap_release(&ps.pairs);
	free(ps.func_ids);
	free(ps.loc_off);
	free(ps.loc_len);
	free(ps.loc_frames);
	free(ps.stack);
	free(ps.cols);
	free(ps.vals);
	profile_free(ps.p);
	return rc;
}

int pprof_parse_where(profile **out, size_t *kept, const uint8_t *data, size_t len,
		      const char *name, const profile_limits *lim, const pprof_label_filter *only,
		      pr_error *err)
{
	bool inuse_negative = false;
	int rc;

	rc = parse_once(out, kept, &inuse_negative, data, len, name, lim, only, false, err);
	/* A delta heap profile: its allocations, read again (see the top). */
	if (rc < 0 && inuse_negative) {
		pr_error_clear(err);
		rc = parse_once(out, kept, &inuse_negative, data, len, name, lim, only, true,
				err);
	}
	return rc;
}
