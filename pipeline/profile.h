/*
 * profile.h: the in-memory profile model every parser produces.
 *
 * One model for every format: interned functions (a name and, where the
 * format has one, a file name), stacks as arrays of function ids stored
 * root first (outermost caller at index 0, the leaf last), one or more
 * values per stack with their types and units, and capture metadata.
 *
 * Labels, tags and any other per-sample payload are never kept: only
 * function names, file names and numbers leave a profile.
 *
 * The model enforces the input limits as it grows (stack depth, sample
 * count, name length), so every parser gets them for free and reports them
 * the same way. It also keeps the memory of one parse within a budget (see
 * profile_mem_take): the stacks, values and names it holds, plus what the
 * parser keeps on the side, beside the input bytes themselves.
 */
#ifndef PR_PROFILE_H
#define PR_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/strmap.h"

typedef enum profile_format {
	PROFILE_FMT_AUTO = 0,
	PROFILE_FMT_PPROF,
	PROFILE_FMT_FOLDED,
	PROFILE_FMT_V8,
	PROFILE_FMT_PERF,
	PROFILE_FMT_SPEEDSCOPE,
	PROFILE_FMT_V8HEAP,
	PROFILE_FMT_JFR,
} profile_format;

/* Limits on what one input may make us do; every one has a flag. */
typedef struct profile_limits {
	uint64_t max_input_bytes;        /* the file as read, compressed or not */
	uint64_t max_decompressed_bytes; /* after gunzip: a bomb stops here */
	uint64_t max_samples;            /* sample records in one profile */
	uint32_t max_depth;              /* frames in one stack */
	uint32_t max_string_len;         /* bytes in one function or file name */
	uint32_t max_functions;          /* distinct functions in one profile */
} profile_limits;

#define PROFILE_DEFAULT_MAX_INPUT (64ULL << 20)
#define PROFILE_DEFAULT_MAX_DECOMPRESSED (512ULL << 20)
#define PROFILE_DEFAULT_MAX_SAMPLES 10000000ULL
#define PROFILE_DEFAULT_MAX_DEPTH 4096u
#define PROFILE_DEFAULT_MAX_STRING 65536u
/*
 * Each distinct function of a stored capture becomes a row of `functions`
 * for good. Real captures hold thousands to a few hundred thousand (a
 * whole machine's perf record with kernel symbols); a file of a million
 * made-up names cost a minute of ingest and a million rows.
 */
#define PROFILE_DEFAULT_MAX_FUNCTIONS 500000u

void profile_limits_default(profile_limits *lim);

/*
 * The memory budget of one parse under `lim`: half the decompressed size
 * limit, never less than PROFILE_MEM_FLOOR; 256 MiB under the defaults.
 * With the input (at most max_input_bytes) and its gunzipped text (at most
 * max_decompressed_bytes) beside it, a parse stays under 1 GiB by default.
 */
#define PROFILE_MEM_FLOOR (64ULL << 20)
uint64_t profile_mem_budget(const profile_limits *lim);

typedef struct profile_func {
	const char *name; /* owned by the profile, valid UTF-8, never NULL */
	const char *file; /* owned by the profile, "" when unknown */
} profile_func;

typedef struct profile_value_type {
	char *type; /* "samples", "cpu", "inuse_space", ... */
	char *unit; /* "count", "nanoseconds", "bytes", ... */
} profile_value_type;

typedef struct profile {
	profile_format format;
	char *input_name;         /* for messages: the file this came from */
	profile_limits limits;

	profile_func *funcs;
	uint32_t nfuncs;
	size_t funcs_cap;
	strmap func_index;        /* "name\0file" -> function id */

	profile_value_type *value_types;
	size_t nvalue_types;
	size_t primary;           /* index of the value profreg analyses */

	uint32_t *frames;         /* every stack, root first, back to back */
	size_t nframes, frames_cap;
	size_t *stack_off;        /* sample i's stack: frames[stack_off[i]..] */
	uint32_t *stack_len;
	int64_t *values;          /* nsamples * nvalue_types, row per sample */
	size_t nsamples, samples_cap;

	int64_t period;           /* 0 when unknown */
	profile_value_type period_type; /* NULL members when unknown */
	int64_t duration_ns;      /* 0 when unknown */
	int64_t time_ns;          /* capture start, Unix ns; 0 when unknown */
	int64_t default_value;    /* pprof default_sample_type index, or -1 */

	uint32_t utf8_replaced;   /* names whose invalid UTF-8 was replaced */
	/*
	 * perf script: samples of the one event type kept (the first seen),
	 * its name ("" when the print has no event field; cut to fit), and
	 * how many samples of other event types were left out.
	 */
	char event[64];
	uint64_t other_events;
	/*
	 * The samples behind the values, where the format counts them apart
	 * from its stacks and has no samples column: a V8 heap profile's
	 * sampled allocations. 0 when the format does not say.
	 */
	uint64_t samples_behind;

	uint64_t mem_used;        /* bytes charged to this parse's budget */
	uint64_t mem_max;         /* profile_mem_budget(&limits) */
} profile;

/*
 * Create an empty profile. `input_name` is copied and used in every error
 * message; `lim` is copied (NULL: the defaults). Free with profile_free.
 */
int profile_new(profile **out, profile_format format, const char *input_name,
		const profile_limits *lim, pr_error *err);

void profile_free(profile *p);

/*
 * Charge `bytes` to the parse's memory budget before holding them: the
 * model charges what it stores (frames, per-sample rows, interned names);
 * a parser charges its own scratch (node tables, decoded messages, caches).
 * PR_ELIMIT, with the message set, when the budget would be exceeded.
 * profile_mem_give hands bytes back once they are freed.
 */
int profile_mem_take(profile *p, uint64_t bytes, pr_error *err);
void profile_mem_give(profile *p, uint64_t bytes);

/*
 * Declare the value columns (call once, before any sample). Strings are
 * copied. The primary value defaults to the last column, pprof's rule;
 * profile_pick_primary refines it.
 */
int profile_set_value_types(profile *p, size_t n, const char *const *types,
			    const char *const *units, pr_error *err);

/*
 * Intern a function by name and file (file may be NULL or ""). Lengths are
 * explicit, names need not be NUL-terminated. Invalid UTF-8 is replaced by
 * U+FFFD (counted in utf8_replaced); a name longer than max_string_len, or
 * a new name that does not fit the memory budget, is PR_ELIMIT; an empty
 * name becomes "[unknown]".
 */
int profile_intern(profile *p, uint32_t *out, const char *name, size_t name_len,
		   const char *file, size_t file_len, pr_error *err);

/*
 * A memo of the names profile_intern made. A service's captures name,
 * for the most part, the same functions, and making each name stable and
 * cutting payment data from it (symname.h, redact.h) was most of the work
 * of a folded parse, done again for every capture: 1,280 captures of 200
 * functions made the same 8,000 names 256,000 times. With a memo in use
 * on the calling thread (profile_names_use), profile_intern makes each
 * distinct name and file once and then takes what it made from the memo,
 * which is what it would make again: the same bytes (and the same
 * managed-or-not, see symname_stable_managed) give the same name, file
 * and count of replaced UTF-8. A memo holds at most PROFILE_NAMES_MAX
 * bytes; names past that are made as without one. One thread at a time.
 */
#define PROFILE_NAMES_MAX (16u << 20)

typedef struct profile_names profile_names;

/* A new, empty memo; NULL when out of memory (profile_intern then works without). */
profile_names *profile_names_new(void);
void profile_names_free(profile_names *m);

/*
 * Make m the memo of profile_intern on the calling thread (NULL: none)
 * and return the one it replaces, to put back when done.
 */
profile_names *profile_names_use(profile_names *m);

/*
 * Append one sample: `depth` function ids root first, and one value per
 * value column. Negative values are PR_EDATA; a stack deeper than
 * max_depth, a sample count over max_samples or a sample that does not fit
 * the memory budget is PR_ELIMIT; an id that was not interned is PR_EDATA.
 * A zero-depth stack is allowed (it counts toward the total but belongs to
 * no function).
 */
int profile_add_sample(profile *p, const uint32_t *stack, uint32_t depth,
		       const int64_t *values, pr_error *err);

/*
 * Make room for `nsamples` more samples holding `nframes` more frames in
 * all (call after profile_set_value_types), so that a parser that can
 * count them in its input grows each array once instead of by doubling.
 * A hint: capped by the sample limit and the memory budget (nothing is
 * charged until samples are added), and a failed allocation is no error,
 * the arrays then grow as they fill.
 */
void profile_reserve(profile *p, size_t nsamples, size_t nframes);

/* Same, with the stack given leaf first (pprof's order). */
int profile_add_sample_leaf_first(profile *p, const uint32_t *stack,
				  uint32_t depth, const int64_t *values,
				  pr_error *err);

/*
 * Choose the primary value for a profile type ("cpu", "heap", "alloc",
 * "wall", "goroutine", or NULL to guess from the value types), by this
 * rule, first match wins:
 *   cpu:       cpu, then samples
 *   heap:      inuse_space, then inuse_objects
 *   alloc:     alloc_space, then alloc_objects
 *   wall:      wall, then samples
 *   goroutine: goroutine, then samples
 *   otherwise: pprof's default_sample_type when set, else the last column.
 * Returns the profile type it settled on (a static string), NULL when
 * `type` is NULL and the value types say no type (see profile_guess_type).
 */
const char *profile_pick_primary(profile *p, const char *type);

/*
 * Guess the profile type from the value types: cpu when the default
 * value (pprof's default_sample_type) is samples or cpu, as in a JFR
 * recording of CPU and allocation samples; heap for inuse_*, alloc for
 * alloc_* (also where both are there and pprof's default is alloc_*, as
 * in Go's /debug/pprof/allocs), goroutine, wall (without cpu), cpu for
 * cpu or samples. NULL for anything else, such as Go's block and mutex
 * profiles (contentions, delay) or threadcreate: those are not CPU time
 * and must not join a CPU baseline.
 */
const char *profile_guess_type(const profile *p);

/* Does the profile have one of the values profile_pick_primary picks for `type`? */
bool profile_has_values_of(const profile *p, const char *type);

/*
 * The column that counts the samples behind the values of `column`: a
 * "samples" column (pprof-nodejs's "sample") that is non-zero in some
 * record where `column` is (or in a profile where `column` is zero
 * throughout); -1 when there is none. A JFR recording's CPU samples,
 * beside its allocations, count none of the allocations; a record of
 * `column` whose count is zero counts no sample (pprof-nodejs's CPU time
 * of Node's other threads). A goroutine/count column is its own count:
 * one sample per goroutine.
 */
long profile_samples_column(const profile *p, size_t column);

/* Per-function summary of one value column. */
typedef struct profile_summary_row {
	uint32_t func;
	int64_t self;  /* value where the function is the leaf */
	int64_t total; /* value of stacks that contain it, once per stack */
} profile_summary_row;

typedef struct profile_summary {
	profile_summary_row *rows; /* self desc, then total desc, then name */
	size_t nrows;              /* functions with a non-zero total */
	int64_t total;             /* sum of the column over all samples */
	/*
	 * profile_samples_column's sum; else, for a pprof heap column, the
	 * sampled objects its objects and bytes stand for at the profile's
	 * space/bytes rate; else samples_behind; else records with a value
	 */
	int64_t sample_count;
} profile_summary;

/*
 * Summarise column `value_index` of `p`. Overflow of a 64-bit sum is
 * PR_EDATA. Release with profile_summary_release.
 */
int profile_summarize(profile_summary *out, const profile *p,
		      size_t value_index, pr_error *err);

void profile_summary_release(profile_summary *s);

/*
 * Text formats: refuse input with a NUL byte, naming its line and offset
 * ("binary data, not <what>"). Returns 0 or PR_EDATA.
 */
int profile_reject_nul(const char *text, size_t len, const char *name,
		       const char *what, pr_error *err);

/*
 * An excerpt of input s[0..n) for an error message (redact_excerpt):
 * harmless words as they are, anything that may hold payment data as
 * "<N bytes>", "..." when cut. out holds 40 bytes.
 */
const char *profile_quote(char out[40], const char *s, size_t n);

/*
 * At most 32 bytes of s as printable ASCII ('?' for anything else, "..."
 * when cut), for quoting an argument back to the one who gave it (a
 * command line, an API query's parameter), who needs it whole: "id '-1'",
 * "since '7d'". Never for input from a profile or a peer (profile_quote).
 * out holds 40 bytes.
 */
const char *profile_quote_arg(char out[40], const char *s, size_t n);

const char *profile_format_name(profile_format f);
int profile_format_from_name(profile_format *out, const char *name);

#endif
