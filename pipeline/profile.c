/*
 * profile.c: the in-memory profile model (see profile.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "pipeline/profile.h"
#include "pipeline/symname.h"
#include "common/buf.h"
#include "common/memhint.h"
#include "common/redact.h"
#include "common/utf8.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void profile_limits_default(profile_limits *lim)
{
	lim->max_input_bytes = PROFILE_DEFAULT_MAX_INPUT;
	lim->max_decompressed_bytes = PROFILE_DEFAULT_MAX_DECOMPRESSED;
	lim->max_samples = PROFILE_DEFAULT_MAX_SAMPLES;
	lim->max_depth = PROFILE_DEFAULT_MAX_DEPTH;
	lim->max_string_len = PROFILE_DEFAULT_MAX_STRING;
	lim->max_functions = PROFILE_DEFAULT_MAX_FUNCTIONS;
}

uint64_t profile_mem_budget(const profile_limits *lim)
{
	uint64_t half = lim->max_decompressed_bytes / 2;

	return half > PROFILE_MEM_FLOOR ? half : PROFILE_MEM_FLOOR;
}

int profile_new(profile **out, profile_format format, const char *input_name,
		const profile_limits *lim, pr_error *err)
{
	profile *p;

	*out = NULL;
	if (!(p = calloc(1, sizeof(*p))) ||
	    !(p->input_name = strdup(input_name ? input_name : "-"))) {
		free(p);
		return pr_error_set(err, PR_ENOMEM, "cannot parse '%s': out of memory",
				    input_name ? input_name : "-");
	}
	p->format = format;
	if (lim)
		p->limits = *lim;
	else
		profile_limits_default(&p->limits);
	strmap_init(&p->func_index);
	p->default_value = -1;
	p->mem_max = profile_mem_budget(&p->limits);
	*out = p;
	return 0;
}

static void value_type_release(profile_value_type *vt)
{
	free(vt->type);
	free(vt->unit);
	vt->type = vt->unit = NULL;
}

void profile_free(profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nvalue_types; i++)
		value_type_release(&p->value_types[i]);
	value_type_release(&p->period_type);
	free(p->value_types);
	free(p->funcs);
	strmap_release(&p->func_index);
	free(p->frames);
	free(p->stack_off);
	free(p->stack_len);
	free(p->values);
	free(p->input_name);
	free(p);
}

/*
 * What a new function costs beside its key bytes: its profile_func entry,
 * the key's NUL, and the map's slots (up to three per key just after the
 * map doubled, at a load of 3/8).
 */
#define INTERN_OVERHEAD (sizeof(profile_func) + 1 + 3 * sizeof(strmap_slot))

static int oom(profile *p, pr_error *err)
{
	return pr_error_set(err, PR_ENOMEM, "cannot parse '%s': out of memory",
			    p->input_name);
}

int profile_mem_take(profile *p, uint64_t bytes, pr_error *err)
{
	if (bytes > p->mem_max - p->mem_used)
		return pr_error_set(err, PR_ELIMIT,
				    "cannot parse '%s': the profile needs more "
				    "than %llu MiB of memory "
				    "(half the decompressed size limit, at least 64 MiB)",
				    p->input_name, (unsigned long long)(p->mem_max >> 20));
	p->mem_used += bytes;
	return 0;
}

void profile_mem_give(profile *p, uint64_t bytes)
{
	p->mem_used -= bytes < p->mem_used ? bytes : p->mem_used;
}

int profile_set_value_types(profile *p, size_t n, const char *const *types,
			    const char *const *units, pr_error *err)
{
	if (p->nvalue_types || p->nsamples)
		return pr_error_set(err, PR_ERR, "'%s': value types set twice",
				    p->input_name);
	if (n == 0)
		return pr_error_set(err, PR_EDATA,
				    "cannot parse '%s': the profile declares no sample types",
				    p->input_name);
	if (!(p->value_types = calloc(n, sizeof(*p->value_types))))
		return oom(p, err);
	p->nvalue_types = n;
	for (size_t i = 0; i < n; i++) {
		p->value_types[i].type = strdup(types[i] ? types[i] : "");
		p->value_types[i].unit = strdup(units[i] ? units[i] : "");
		if (!p->value_types[i].type || !p->value_types[i].unit)
			return oom(p, err);
	}
	p->primary = n - 1;
	return 0;
}

/* Append s to b with every invalid byte (and NUL) replaced by U+FFFD. */
static int utf8_repair(buf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	int rc;

	for (size_t i = 0; i < n;) {
		size_t k = utf8_seq_len(u + i, n - i);
		if (k == 0 || u[i] == 0) {
			if ((rc = buf_put(b, "\xef\xbf\xbd", 3)) < 0)
				return rc;
			i++;
			continue;
		}
		if ((rc = buf_put(b, s + i, k)) < 0)
			return rc;
		i += k;
	}
	return 0;
}

/*
 * Whether a function was made by no C or C++ compiler (symname_stable_managed):
 * every function of a JFR or V8 profile, and one in a Go, Java, Kotlin or
 * JavaScript file.
 */
static bool managed(const profile *p, const char *file, size_t n)
{
	return p->format == PROFILE_FMT_JFR || p->format == PROFILE_FMT_V8 ||
	       p->format == PROFILE_FMT_V8HEAP || symname_managed_file(file, n);
}

/* A name profile_intern made: its key's bytes in the memo's `made`. */
typedef struct made_name {
	size_t off, len;
	bool replaced; /* its name or file had invalid UTF-8 */
} made_name;

struct profile_names {
	strmap map; /* managed flag, name length, name, file -> index in `names` */
	buf made;   /* the keys made, back to back */
	made_name *names;
	size_t n, cap;
	buf look;     /* the key being looked up */
	size_t bytes; /* held, counted against PROFILE_NAMES_MAX */
};

static _Thread_local profile_names *names_in_use;

profile_names *profile_names_new(void)
{
	profile_names *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	strmap_init(&m->map);
	buf_init(&m->made, SIZE_MAX);
	buf_init(&m->look, SIZE_MAX);
	return m;
}

/* Forget every name: what the memo's keys pointed at is gone (a failed append frees a buf). */
static void names_clear(profile_names *m)
{
	strmap_release(&m->map);
	buf_release(&m->made);
	m->n = 0;
	m->bytes = 0;
}

void profile_names_free(profile_names *m)
{
	if (!m)
		return;
	strmap_release(&m->map);
	buf_release(&m->made);
	buf_release(&m->look);
	free(m->names);
	free(m);
}

profile_names *profile_names_use(profile_names *m)
{
	profile_names *was = names_in_use;

	names_in_use = m;
	return was;
}

/*
 * The memo's key for a name and file: whether the function is managed,
 * the name's length (names and files may hold any byte), the name, the
 * file. In m->look; PR_ENOMEM when it cannot be made.
 */
static int names_key(profile_names *m, bool is_managed, const char *name, size_t name_len,
		     const char *file, size_t file_len)
{
	uint64_t n = name_len;
	char flag = is_managed ? 'm' : 'c';

	buf_reset(&m->look);
	if (buf_put(&m->look, &flag, 1) < 0 || buf_put(&m->look, &n, sizeof(n)) < 0 ||
	    buf_put(&m->look, name, name_len) < 0 ||
	    (file_len && buf_put(&m->look, file, file_len) < 0))
		return PR_ENOMEM;
	return 0;
}

/* Remember that m->look made key[0..len); a memo that is full or out of memory does not. */
static void names_add(profile_names *m, const char *key, size_t len, bool replaced)
{
	size_t cost = m->look.len + len + sizeof(made_name) + 1 + 3 * sizeof(strmap_slot);
	uint32_t idx;

	if (m->bytes + cost > PROFILE_NAMES_MAX || m->n >= UINT32_MAX)
		return;
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 256;
		made_name *nn = realloc(m->names, cap * sizeof(*nn));
		if (!nn)
			return;
		m->names = nn;
		m->cap = cap;
	}
	m->names[m->n].off = m->made.len;
	m->names[m->n].len = len;
	m->names[m->n].replaced = replaced;
	if (buf_put(&m->made, key, len) < 0) {
		names_clear(m);
		return;
	}
	if (strmap_put(&m->map, m->look.ptr, m->look.len, (uint32_t)m->n, &idx, NULL) != 1) {
		m->made.len = m->names[m->n].off;
		m->made.ptr[m->made.len] = '\0';
		return;
	}
	m->n++;
	m->bytes += cost;
}

/*
 * The function's key, "name\0file", made stable (symname.h) with its
 * invalid UTF-8 replaced, in *key (the caller's buffer); *replaced when
 * there was invalid UTF-8 to replace.
 */
static int make_key(buf *key, bool *replaced, bool is_managed, const char *name, size_t name_len,
		    const char *file, size_t file_len)
{
	size_t file_at;
	int rc;

	*replaced = false;
	if (utf8_valid(name, name_len) && utf8_valid(file ? file : "", file_len)) {
		if ((rc = buf_put(key, name, name_len)) < 0)
			return rc;
	} else {
		*replaced = true;
		if ((rc = utf8_repair(key, name, name_len)) < 0)
			return rc;
	}
	/* One name and file across processes and builds (symname.h). */
	key->len = is_managed ? symname_stable_managed(key->ptr, key->len)
			      : symname_stable(key->ptr, key->len);
	if ((rc = buf_putc(key, '\0')) < 0)
		return rc;
	file_at = key->len;
	if (file_len && !utf8_valid(file, file_len))
		rc = utf8_repair(key, file, file_len);
	else if (file_len)
		rc = buf_put(key, file, file_len);
	if (rc < 0)
		return rc;
	key->len = file_at + symname_stable_file(key->ptr + file_at, key->len - file_at);
	return 0;
}

int profile_intern(profile *p, uint32_t *out, const char *name, size_t name_len,
		   const char *file, size_t file_len, pr_error *err)
{
	profile_names *memo = names_in_use;
	buf made = BUF_INIT;
	const char *key, *stored;
	size_t key_len, stored_name_len;
	uint32_t id, at;
	bool replaced, is_managed, looked = false;
	int rc = 0;

	if (!file)
		file_len = 0;
	if (name_len > p->limits.max_string_len || file_len > p->limits.max_string_len) {
		rc = pr_error_set(err, PR_ELIMIT,
				  "cannot parse '%s': a name of %zu bytes "
				  "exceeds the limit of %u bytes",
				  p->input_name, name_len > file_len ? name_len : file_len,
				  p->limits.max_string_len);
		goto out;
	}
	if (name_len == 0) {
		name = "[unknown]";
		name_len = strlen(name);
	}
	is_managed = managed(p, file, file_len);
	if (memo && names_key(memo, is_managed, name, name_len, file, file_len) == 0) {
		looked = true;
		if (strmap_get(&memo->map, memo->look.ptr, memo->look.len, &at)) {
			key = memo->made.ptr + memo->names[at].off;
			key_len = memo->names[at].len;
			replaced = memo->names[at].replaced;
			goto made;
		}
	}
	if ((rc = make_key(&made, &replaced, is_managed, name, name_len, file, file_len)) < 0)
		goto nomem;
	key = made.ptr;
	key_len = made.len;
	if (looked)
		names_add(memo, key, key_len, replaced);
made:
	if (replaced)
		p->utf8_replaced++;
	if (!strmap_get(&p->func_index, key, key_len, &id)) {
		if (p->nfuncs >= p->limits.max_functions || p->nfuncs == UINT32_MAX) {
			rc = pr_error_set(err, PR_ELIMIT,
					  "cannot parse '%s': more than %u distinct functions "
					  "(the limit of limits.max_functions)",
					  p->input_name, p->limits.max_functions);
			goto out;
		}
		if ((rc = profile_mem_take(p, key_len + INTERN_OVERHEAD, err)) < 0)
			goto out;
	}
	rc = strmap_put(&p->func_index, key, key_len, p->nfuncs, &id, &stored);
	if (rc < 0)
		goto nomem;
	if (rc == 1) {
		if (p->nfuncs == p->funcs_cap) {
			size_t cap = p->funcs_cap ? p->funcs_cap * 2 : 256;
			profile_func *f = realloc(p->funcs, cap * sizeof(*f));
			if (!f)
				goto nomem;
			p->funcs = f;
			p->funcs_cap = cap;
		}
		stored_name_len = strlen(stored);
		p->funcs[p->nfuncs].name = stored;
		p->funcs[p->nfuncs].file = stored + stored_name_len + 1;
		p->nfuncs++;
	}
	*out = id;
	rc = 0;
	goto out;
nomem:
	rc = oom(p, err);
out:
	buf_release(&made);
	return rc;
}

static int grow_samples(profile *p, pr_error *err)
{
	size_t cap = p->samples_cap ? p->samples_cap * 2 : 1024;
	size_t *off;
	uint32_t *len;
	int64_t *vals;

	if (!(off = realloc(p->stack_off, cap * sizeof(*off))))
		return oom(p, err);
	p->stack_off = off;
	if (!(len = realloc(p->stack_len, cap * sizeof(*len))))
		return oom(p, err);
	p->stack_len = len;
	if (!(vals = realloc(p->values, cap * p->nvalue_types * sizeof(*vals))))
		return oom(p, err);
	p->values = vals;
	p->samples_cap = cap;
	return 0;
}

static int grow_frames(profile *p, size_t extra, pr_error *err)
{
	size_t cap = p->frames_cap ? p->frames_cap : 4096;
	uint32_t *f;

	while (cap < p->nframes + extra)
		cap *= 2;
	if (cap == p->frames_cap)
		return 0;
	if (!(f = realloc(p->frames, cap * sizeof(*f))))
		return oom(p, err);
	/* The largest array of a big profile: fewer, larger pages (memhint.h). */
	mem_hint_huge(f, cap * sizeof(*f));
	p->frames = f;
	p->frames_cap = cap;
	return 0;
}

void profile_reserve(profile *p, size_t nsamples, size_t nframes)
{
	size_t per_sample = sizeof(*p->stack_off) + sizeof(*p->stack_len) +
			    p->nvalue_types * sizeof(*p->values);
	size_t most;
	size_t *off;
	uint32_t *len, *f;
	int64_t *vals;

	/* No more than a parse within the sample limit and the budget can store. */
	most = p->limits.max_samples - (p->nsamples < p->limits.max_samples
					? p->nsamples : p->limits.max_samples);
	if (p->nvalue_types && p->mem_max / per_sample < most)
		most = p->mem_max / per_sample;
	if (nsamples > most)
		nsamples = most;
	if (p->nvalue_types && nsamples && p->nsamples + nsamples > p->samples_cap) {
		size_t cap = p->nsamples + nsamples;
		if ((off = realloc(p->stack_off, cap * sizeof(*off))))
			p->stack_off = off;
		if (off && (len = realloc(p->stack_len, cap * sizeof(*len))))
			p->stack_len = len;
		if (off && len &&
		    (vals = realloc(p->values, cap * p->nvalue_types * sizeof(*vals)))) {
			p->values = vals;
			p->samples_cap = cap;
		}
	}
	most = p->mem_max / sizeof(*p->frames);
	if (nframes > most)
		nframes = most;
	if (nframes && p->nframes + nframes > p->frames_cap &&
	    (f = realloc(p->frames, (p->nframes + nframes) * sizeof(*f)))) {
		mem_hint_huge(f, (p->nframes + nframes) * sizeof(*f));
		p->frames = f;
		p->frames_cap = p->nframes + nframes;
	}
}

static int check_sample(profile *p, uint32_t depth, const int64_t *values,
			pr_error *err)
{
	if (!p->nvalue_types)
		return pr_error_set(err, PR_ERR, "'%s': sample before value types",
				    p->input_name);
	if (p->nsamples >= p->limits.max_samples)
		return pr_error_set(err, PR_ELIMIT,
				    "cannot parse '%s': more than %llu samples (the sample limit)",
				    p->input_name, (unsigned long long)p->limits.max_samples);
	if (depth > p->limits.max_depth)
		return pr_error_set(err, PR_ELIMIT,
				    "cannot parse '%s': a stack of %u frames "
				    "exceeds the depth limit of %u",
				    p->input_name, depth, p->limits.max_depth);
	for (size_t i = 0; i < p->nvalue_types; i++)
		if (values[i] < 0)
			return pr_error_set(err, PR_EDATA,
					    "cannot parse '%s': negative sample value %lld",
					    p->input_name, (long long)values[i]);
	return 0;
}

static int add_sample(profile *p, const uint32_t *stack, uint32_t depth,
		      const int64_t *values, bool leaf_first, pr_error *err)
{
	uint32_t *dst;
	int rc;

	if ((rc = check_sample(p, depth, values, err)) < 0)
		return rc;
	if ((rc = profile_mem_take(p, depth * sizeof(*dst) + sizeof(*p->stack_off) +
				   sizeof(*p->stack_len) +
				   p->nvalue_types * sizeof(*p->values), err)) < 0)
		return rc;
	for (uint32_t i = 0; i < depth; i++)
		if (stack[i] >= p->nfuncs)
			return pr_error_set(err, PR_EDATA,
					    "cannot parse '%s': sample refers to "
					    "unknown function %u",
					    p->input_name, stack[i]);
	if (p->nsamples == p->samples_cap && (rc = grow_samples(p, err)) < 0)
		return rc;
	if ((rc = grow_frames(p, depth, err)) < 0)
		return rc;
	dst = p->frames + p->nframes;
	if (leaf_first)
		for (uint32_t i = 0; i < depth; i++)
			dst[i] = stack[depth - 1 - i];
	else if (depth)
		memcpy(dst, stack, depth * sizeof(*stack));
	p->stack_off[p->nsamples] = p->nframes;
	p->stack_len[p->nsamples] = depth;
	memcpy(p->values + p->nsamples * p->nvalue_types, values,
	       p->nvalue_types * sizeof(*values));
	p->nframes += depth;
	p->nsamples++;
	return 0;
}

int profile_add_sample(profile *p, const uint32_t *stack, uint32_t depth,
		       const int64_t *values, pr_error *err)
{
	return add_sample(p, stack, depth, values, false, err);
}

int profile_add_sample_leaf_first(profile *p, const uint32_t *stack,
				  uint32_t depth, const int64_t *values,
				  pr_error *err)
{
	return add_sample(p, stack, depth, values, true, err);
}

static long find_value(const profile *p, const char *type)
{
	for (size_t i = 0; i < p->nvalue_types; i++)
		if (strcmp(p->value_types[i].type, type) == 0)
			return (long)i;
	return -1;
}

#define PRIMARY_PREFS 5

/*
 * Each type's value columns, the preferred first. Go and most pprof
 * writers use Go's names; Datadog's libdatadog profilers (Python, Ruby,
 * PHP, .NET) and the OpenTelemetry eBPF profiler write "cpu-time",
 * "wall-time", "heap-space" or "heap-live-size", "alloc-space" or
 * "alloc-size".
 */
static const struct {
	const char *type;
	const char *pref[PRIMARY_PREFS];
} primary_rules[] = {
	{"cpu", {"cpu", "cpu-time", "samples", NULL}},
	{"heap", {"inuse_space", "inuse_objects", "heap-space", "heap-live-size", "space"}},
	{"alloc", {"alloc_space", "alloc_objects", "alloc-space", "alloc-size"}},
	{"wall", {"wall", "wall-time", "samples", NULL}},
	{"goroutine", {"goroutine", "samples", NULL, NULL}},
};

/* The first value column of `type`'s names the profile has, or -1. */
static long rule_value(const profile *p, size_t r)
{
	for (int k = 0; k < PRIMARY_PREFS && primary_rules[r].pref[k]; k++) {
		long i = find_value(p, primary_rules[r].pref[k]);
		if (i >= 0)
			return i;
	}
	return -1;
}

/* Is the profile's default value (pprof's default_sample_type) `type`? */
static bool default_is(const profile *p, const char *type)
{
	return p->default_value >= 0 && (size_t)p->default_value < p->nvalue_types &&
	       strcmp(p->value_types[p->default_value].type, type) == 0;
}

/* Google pprof-nodejs's heap columns: space/bytes, maybe beside objects/count. */
static bool google_node_heap(const profile *p)
{
	long space = find_value(p, "space"), objects = find_value(p, "objects");

	return space >= 0 && strcmp(p->value_types[space].unit, "bytes") == 0 &&
	       (objects < 0 || strcmp(p->value_types[objects].unit, "count") == 0);
}

const char *profile_guess_type(const profile *p)
{
	bool inuse = find_value(p, "inuse_space") >= 0 || find_value(p, "inuse_objects") >= 0;
	bool alloc = find_value(p, "alloc_space") >= 0 || find_value(p, "alloc_objects") >= 0;

	/*
	 * A default of samples or cpu says CPU, whatever else is beside it: a
	 * JFR recording of CPU and allocation samples is a CPU capture.
	 */
	if (default_is(p, "samples") || default_is(p, "cpu"))
		return "cpu";
	/* Go's /debug/pprof/allocs is the heap profile told to show allocations. */
	if (alloc && (!inuse || default_is(p, "alloc_space") || default_is(p, "alloc_objects")))
		return "alloc";
	if (inuse)
		return "heap";
	if (find_value(p, "goroutine") >= 0)
		return "goroutine";
	if (find_value(p, "wall") >= 0 && find_value(p, "cpu") < 0)
		return "wall";
	if (find_value(p, "cpu") >= 0 || find_value(p, "samples") >= 0 ||
	    find_value(p, "sample") >= 0)
		return "cpu";
	/* libdatadog's profiles hold CPU, wall, heap and allocations at once: CPU first. */
	if (find_value(p, "cpu-time") >= 0)
		return "cpu";
	if (find_value(p, "wall-time") >= 0)
		return "wall";
	if (find_value(p, "heap-space") >= 0 || find_value(p, "heap-live-size") >= 0)
		return "heap";
	if (find_value(p, "alloc-space") >= 0 || find_value(p, "alloc-size") >= 0)
		return "alloc";
	/*
	 * Google's pprof-nodejs (Cloud Profiler's Node agent) writes V8's
	 * sampling heap profile, the objects still in use, as objects/count
	 * and space/bytes.
	 */
	if (google_node_heap(p))
		return "heap";
	return NULL;
}

bool profile_has_values_of(const profile *p, const char *type)
{
	for (size_t r = 0; r < sizeof(primary_rules) / sizeof(primary_rules[0]); r++)
		if (strcmp(primary_rules[r].type, type) == 0)
			return rule_value(p, r) >= 0;
	return false;
}

const char *profile_pick_primary(profile *p, const char *type)
{
	if (!type && !(type = profile_guess_type(p))) {
		if (p->default_value >= 0 && (size_t)p->default_value < p->nvalue_types)
			p->primary = (size_t)p->default_value;
		else if (p->nvalue_types)
			p->primary = p->nvalue_types - 1;
		return NULL;
	}
	for (size_t r = 0; r < sizeof(primary_rules) / sizeof(primary_rules[0]); r++) {
		long i;

		if (strcmp(primary_rules[r].type, type) != 0)
			continue;
		if ((i = rule_value(p, r)) >= 0) {
			p->primary = (size_t)i;
			return primary_rules[r].type;
		}
		break;
	}
	if (p->default_value >= 0 && (size_t)p->default_value < p->nvalue_types)
		p->primary = (size_t)p->default_value;
	else if (p->nvalue_types)
		p->primary = p->nvalue_types - 1;
	for (size_t r = 0; r < sizeof(primary_rules) / sizeof(primary_rules[0]); r++)
		if (strcmp(primary_rules[r].type, type) == 0)
			return primary_rules[r].type;
	return "cpu";
}

/* Whether row x goes before row y: self desc, then total desc, then name and file. */
static bool row_before(const profile *p, const profile_summary_row *x, const profile_summary_row *y)
{
	int c;

	if (x->self != y->self)
		return x->self > y->self;
	if (x->total != y->total)
		return x->total > y->total;
	c = strcmp(p->funcs[x->func].name, p->funcs[y->func].name);
	if (c)
		return c < 0;
	return strcmp(p->funcs[x->func].file, p->funcs[y->func].file) < 0;
}

/*
 * Sort rows[0..n) by row_before, with room for n rows in tmp: runs of 8
 * by insertion, then merged. Two rows are never equal (a function's name
 * and file are its own), so any sort gives the same order; qsort's, with
 * a call through a pointer for each comparison, was 2% of an ingest.
 */
static void sort_rows(const profile *p, profile_summary_row *rows, profile_summary_row *tmp,
		      size_t n)
{
	profile_summary_row *src = rows, *dst = tmp, *t;

	for (size_t lo = 0; lo < n; lo += 8) {
		size_t hi = n - lo > 8 ? lo + 8 : n;
		for (size_t i = lo + 1; i < hi; i++) {
			profile_summary_row r = rows[i];
			size_t j = i;
			for (; j > lo && row_before(p, &r, &rows[j - 1]); j--)
				rows[j] = rows[j - 1];
			rows[j] = r;
		}
	}
	for (size_t w = 8; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = n - lo > w ? lo + w : n, hi = n - mid > w ? mid + w : n;
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				dst[k++] = row_before(p, &src[j], &src[i]) ? src[j++] : src[i++];
			while (i < mid)
				dst[k++] = src[i++];
			while (j < hi)
				dst[k++] = src[j++];
		}
		t = src;
		src = dst;
		dst = t;
	}
	if (src != rows)
		memcpy(rows, src, n * sizeof(*rows));
}

long profile_samples_column(const profile *p, size_t column)
{
	static const char *const counted[][2] = {
		{"cpu-time", "cpu-samples"},
		{"wall-time", "wall-samples"},
		{"alloc-space", "alloc-samples"},
		{"alloc-size", "alloc-samples"},
	};
	long col = find_value(p, "samples");
	bool uncounted = false;

	/* pprof-nodejs (Pyroscope's and Datadog's Node profilers) says "sample". */
	if (col < 0)
		col = find_value(p, "sample");
	/* libdatadog and the OpenTelemetry eBPF profiler count each column's samples apart. */
	for (size_t k = 0; col < 0 && column < p->nvalue_types && k < 4; k++)
		if (strcmp(p->value_types[column].type, counted[k][0]) == 0)
			col = find_value(p, counted[k][1]);
	/*
	 * A goroutine profile counts goroutines: a record is a stack with the
	 * number of goroutines on it, and each goroutine is one observation.
	 * Counting records instead gave 4 samples for Go's 49 goroutines.
	 */
	if (col < 0 && column < p->nvalue_types &&
	    strcmp(p->value_types[column].type, "goroutine") == 0 &&
	    strcmp(p->value_types[column].unit, "count") == 0)
		return (long)column;
	if (col < 0 || column >= p->nvalue_types)
		return col < 0 ? -1 : col;
	/*
	 * The count is another column's when it counts none of this one's
	 * records: a JFR recording's allocations are events apart from its
	 * CPU samples. A record of this column without a count is one the
	 * sampler did not catch: pprof-nodejs adds the CPU time of Node's
	 * other threads as a record "Non JS threads activity" of no sample,
	 * and refusing the count for it made a capture of 1,500 samples one
	 * of 6 (its records), whose noise floor hid a function doubling.
	 */
	for (size_t i = 0; i < p->nsamples; i++) {
		const int64_t *vals = p->values + i * p->nvalue_types;

		if (vals[column] != 0 && vals[col] != 0)
			return col;
		if (vals[column] != 0)
			uncounted = true;
	}
	return uncounted ? -1 : col;
}

/*
 * A pprof heap profile (Go's runtime/pprof) has no samples column, and its
 * records are no count: Go writes one record per stack and object size,
 * its objects and bytes scaled up to stand for the allocations the
 * sampler skipped, so a real heap profile holds a few dozen records for
 * hundreds of sampled objects, or 6 records for 6 sampled objects that
 * stand for 22,584 (tests/data/pprof/go119-heap.pb.gz, 512 KiB rate).
 * What weighs its shares is how many allocations the sampler caught.
 *
 * Go samples an allocation of s bytes with probability 1 - e^(-s/rate)
 * and scales a record's n objects and bytes by 1 / (1 - e^(-avg/rate)),
 * avg its bytes per object, which the scaling leaves as it was. So the
 * record's sampled objects are objects * (1 - e^(-(bytes/objects)/rate)),
 * with the rate the profile's period when its period type is in bytes
 * (space_period). V8's sampler, behind pprof-nodejs, scales alike.
 * The objects column alone would count 22,584 samples where there were 6;
 * without a rate (period 0 or 1, or another period type, as profilers that
 * sample every allocation write) the objects are the count.
 *
 * `column` is a heap column (inuse_* or alloc_*, or Google pprof-nodejs's
 * objects and space); its objects and space columns of the same prefix go
 * to `objects` and `space` (-1 when absent).
 * A V8 heap profile has no objects column (see samples_behind) and a JFR
 * recording's allocations are one event a record: neither is affected.
 */
static void heap_columns(const profile *p, size_t column, long *objects, long *space)
{
	const char *t = column < p->nvalue_types ? p->value_types[column].type : "";
	char name[16];

	*objects = *space = -1;
	if (strcmp(t, "space") == 0 || strcmp(t, "objects") == 0)
		t = "";
	else if (strncmp(t, "inuse_", 6) != 0 && strncmp(t, "alloc_", 6) != 0)
		return;
	snprintf(name, sizeof(name), "%.6sobjects", t);
	*objects = find_value(p, name);
	if (*objects >= 0 && strcmp(p->value_types[*objects].unit, "count") != 0)
		*objects = -1;
	snprintf(name, sizeof(name), "%.6sspace", t);
	*space = find_value(p, name);
	if (*space >= 0 && strcmp(p->value_types[*space].unit, "bytes") != 0)
		*space = -1;
}

/*
 * Is the profile's period a sampling rate in bytes? Go writes space/bytes;
 * pprof-nodejs (Datadog's, Pyroscope's) names it after its last column,
 * inuse_space/bytes (alloc_space with allocations), for V8's sampler,
 * which scales its counts as Go's does: a heap capture of 3,511 sampled
 * allocations (V8's own list of them) counted the 19,867 objects they
 * stand for.
 */
static bool space_period(const profile *p)
{
	const char *t = p->period_type.type;
	size_t n = t ? strlen(t) : 0;

	if (!t || !p->period_type.unit || strcmp(p->period_type.unit, "bytes") != 0)
		return false;
	return strcmp(t, "space") == 0 || (n > 6 && strcmp(t + n - 6, "_space") == 0);
}

/* The sampled objects behind a heap record of `objects` and `bytes` (see heap_columns). */
static int64_t heap_sampled(int64_t objects, int64_t bytes, double rate)
{
	double n;

	/* A record with a value was written because an allocation was sampled. */
	if (objects <= 0)
		return 1;
	if (rate <= 1 || bytes <= 0)
		return objects;
	n = -(double)objects * expm1(-((double)bytes / (double)objects) / rate);
	return n < 1 ? 1 : llround(n);
}

static int overflow(const profile *p, pr_error *err)
{
	return pr_error_set(err, PR_EDATA,
			    "cannot parse '%s': sample values overflow a 64-bit total",
			    p->input_name);
}

int profile_summarize(profile_summary *out, const profile *p,
		      size_t value_index, pr_error *err)
{
	int64_t *self = NULL, *total = NULL;
	size_t *seen = NULL; /* sample index + 1 that last counted a function */
	profile_summary_row *tmp = NULL;
	long samples_col = profile_samples_column(p, value_index);
	long objects_col = -1, space_col = -1;
	double rate = 0;
	size_t n = 0;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (p->nvalue_types && value_index >= p->nvalue_types)
		return pr_error_set(err, PR_EUSAGE, "'%s': no value column %zu",
				    p->input_name, value_index);
	if (p->nfuncs &&
	    (!(self = calloc(p->nfuncs, sizeof(*self))) ||
	     !(total = calloc(p->nfuncs, sizeof(*total))) ||
	     !(seen = calloc(p->nfuncs, sizeof(*seen))))) {
		rc = oom((profile *)p, err);
		goto out;
	}
	if (samples_col < 0)
		heap_columns(p, value_index, &objects_col, &space_col);
	if (objects_col >= 0 && space_period(p))
		rate = (double)p->period;
	for (size_t i = 0; i < p->nsamples; i++) {
		const int64_t *vals = p->values + i * p->nvalue_types;
		int64_t v = vals[value_index];
		const uint32_t *st = p->frames + p->stack_off[i];
		uint32_t d = p->stack_len[i];
		int64_t cnt = v != 0;

		/*
		 * Without a count, each record with a value is one sample of it.
		 * A count beside no value is another column's (Datadog's Ruby
		 * profiler counts wall samples as "cpu-samples"): not this one's.
		 */
		if (samples_col >= 0)
			cnt = v != 0 ? vals[samples_col] : 0;
		else if (objects_col >= 0 && v != 0)
			cnt = heap_sampled(vals[objects_col], space_col >= 0 ? vals[space_col] : 0,
					   rate);
		if (__builtin_add_overflow(out->total, v, &out->total) ||
		    __builtin_add_overflow(out->sample_count, cnt, &out->sample_count)) {
			rc = overflow(p, err);
			goto out;
		}
		if (d == 0 || v == 0)
			continue;
		if (__builtin_add_overflow(self[st[d - 1]], v, &self[st[d - 1]])) {
			rc = overflow(p, err);
			goto out;
		}
		/* Recursion: a function counts once per stack toward its total. */
		for (uint32_t k = 0; k < d; k++) {
			uint32_t f = st[k];
			if (seen[f] == i + 1)
				continue;
			seen[f] = i + 1;
			if (__builtin_add_overflow(total[f], v, &total[f])) {
				rc = overflow(p, err);
				goto out;
			}
		}
	}
	/* The format counted its samples apart from its records. */
	if (samples_col < 0 && p->samples_behind && value_index == p->primary)
		out->sample_count = (int64_t)p->samples_behind;
	for (uint32_t f = 0; f < p->nfuncs; f++)
		if (total[f])
			n++;
	if (n && !(out->rows = malloc(n * sizeof(*out->rows)))) {
		rc = oom((profile *)p, err);
		goto out;
	}
	for (uint32_t f = 0; f < p->nfuncs; f++) {
		if (!total[f])
			continue;
		out->rows[out->nrows].func = f;
		out->rows[out->nrows].self = self[f];
		out->rows[out->nrows].total = total[f];
		out->nrows++;
	}
	if (out->nrows > 1) {
		if (!(tmp = malloc(out->nrows * sizeof(*tmp)))) {
			rc = oom((profile *)p, err);
			goto out;
		}
		sort_rows(p, out->rows, tmp, out->nrows);
	}
out:
	free(tmp);
	free(self);
	free(total);
	free(seen);
	if (rc < 0)
		profile_summary_release(out);
	return rc;
}

void profile_summary_release(profile_summary *s)
{
	free(s->rows);
	memset(s, 0, sizeof(*s));
}

int profile_reject_nul(const char *text, size_t len, const char *name,
		       const char *what, pr_error *err)
{
	const char *nul = len ? memchr(text, '\0', len) : NULL;
	size_t line = 1;

	if (!nul)
		return 0;
	for (const char *q = text; (q = memchr(q, '\n', (size_t)(nul - q))); q++)
		line++;
	return pr_error_set(err, PR_EDATA,
			    "cannot parse '%s': line %zu: NUL byte at offset "
			    "%zu (binary data, not %s)",
			    name, line, (size_t)(nul - text), what);
}

const char *profile_quote(char out[40], const char *s, size_t n)
{
	return redact_excerpt(out, 40, s, n);
}

const char *profile_quote_arg(char out[40], const char *s, size_t n)
{
	size_t k = n > 32 ? 32 : n, i;

	for (i = 0; i < k; i++) {
		unsigned char c = (unsigned char)s[i];
		out[i] = c >= 0x20 && c < 0x7f && c != '\'' ? (char)c : '?';
	}
	if (n > k) {
		memcpy(out + i, "...", 3);
		i += 3;
	}
	out[i] = '\0';
	return out;
}

static const char *const format_names[] = {
	[PROFILE_FMT_AUTO] = "auto",
	[PROFILE_FMT_PPROF] = "pprof",
	[PROFILE_FMT_FOLDED] = "folded",
	[PROFILE_FMT_V8] = "v8",
	[PROFILE_FMT_PERF] = "perf",
	[PROFILE_FMT_SPEEDSCOPE] = "speedscope",
	[PROFILE_FMT_V8HEAP] = "v8heap",
	[PROFILE_FMT_JFR] = "jfr",
};

const char *profile_format_name(profile_format f)
{
	if ((size_t)f < sizeof(format_names) / sizeof(format_names[0]))
		return format_names[f];
	return "unknown";
}

int profile_format_from_name(profile_format *out, const char *name)
{
	for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++) {
		if (strcmp(format_names[i], name) == 0) {
			*out = (profile_format)i;
			return 0;
		}
	}
	if (strcmp(name, "collapsed") == 0) {
		*out = PROFILE_FMT_FOLDED;
		return 0;
	}
	if (strcmp(name, "cpuprofile") == 0) {
		*out = PROFILE_FMT_V8;
		return 0;
	}
	if (strcmp(name, "heapprofile") == 0) {
		*out = PROFILE_FMT_V8HEAP;
		return 0;
	}
	return PR_EUSAGE;
}
