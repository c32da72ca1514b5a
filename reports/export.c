/*
 * export.c: folded stacks, speedscope JSON and gzip-compressed pprof.
 */
#define _POSIX_C_SOURCE 200809L
#include "reports/export.h"
#include "common/utf8.h"
#include "pipeline/profile.pb-c.h"
#include "pipeline/symname.h"

#include <inttypes.h>
#include <stdbool.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static int oom(pr_error *err, const char *what)
{
	return pr_error_set(err, PR_ENOMEM, "cannot write %s: out of memory", what);
}

static int bad_column(const profile *p, size_t column, pr_error *err)
{
	if (column < p->nvalue_types)
		return 0;
	return pr_error_set(err, PR_EUSAGE, "cannot export '%s': no value column %zu",
			    p->input_name ? p->input_name : "profile", column);
}

int export_format_parse(export_format *out, const char *name)
{
	if (strcmp(name, "folded") == 0)
		*out = EXPORT_FOLDED;
	else if (strcmp(name, "speedscope") == 0)
		*out = EXPORT_SPEEDSCOPE;
	else if (strcmp(name, "pprof") == 0)
		*out = EXPORT_PPROF;
	else
		return PR_EUSAGE;
	return 0;
}

int export_merged_new(profile **out, const char *name, const char *type, const char *unit,
		      pr_error *err)
{
	profile_limits lim;
	const char *types[1] = {type}, *units[1] = {unit};
	int rc;

	profile_limits_default(&lim);
	if ((rc = profile_new(out, PROFILE_FMT_PPROF, name, &lim, err)) < 0)
		return rc;
	if ((rc = profile_set_value_types(*out, 1, types, units, err)) < 0) {
		profile_free(*out);
		*out = NULL;
	}
	return rc;
}

int export_merge(profile *dst, const profile *src, pr_error *err)
{
	return export_merge_column(dst, src, src->primary, err);
}

int export_merge_column(profile *dst, const profile *src, size_t column, pr_error *err)
{
	uint32_t *map = NULL, *stack = NULL;
	size_t cap = 0;
	int rc;

	if ((rc = bad_column(src, column, err)) < 0)
		return rc;
	if (src->nfuncs && !(map = malloc(src->nfuncs * sizeof(*map))))
		return oom(err, "the merged profile");
	for (uint32_t f = 0; f < src->nfuncs && rc == 0; f++)
		rc = profile_intern(dst, &map[f], src->funcs[f].name, strlen(src->funcs[f].name),
				    src->funcs[f].file, strlen(src->funcs[f].file), err);
	for (size_t s = 0; s < src->nsamples && rc == 0; s++) {
		uint32_t n = src->stack_len[s];
		int64_t v = src->values[s * src->nvalue_types + column];
		if (n > cap) {
			uint32_t *ns = realloc(stack, n * sizeof(*ns));
			if (!ns) {
				rc = oom(err, "the merged profile");
				break;
			}
			stack = ns;
			cap = n;
		}
		for (uint32_t i = 0; i < n; i++)
			stack[i] = map[src->frames[src->stack_off[s] + i]];
		rc = profile_add_sample(dst, stack, n, &v, err);
	}
	if (rc == 0 && !dst->duration_ns)
		dst->time_ns = src->time_ns;
	/* Each capture's duration is the input's to say: the sum stops at the largest. */
	if (rc == 0 && __builtin_add_overflow(dst->duration_ns, src->duration_ns,
					      &dst->duration_ns))
		dst->duration_ns = INT64_MAX;
	free(map);
	free(stack);
	return rc;
}

/*
 * A frame name as folded text allows it: no ';', no line breaks. Folded
 * text goes to terminals (`export` writes standard output by default)
 * and to other tools' parsers, so no other character a reader's terminal
 * acts on rather than shows (utf8_hidden) goes out as it is: C0 controls
 * and DEL are written as the text \xNN, and C1 controls, bidirectional
 * overrides and line separators as \u{NNNN}, the forms profreg's
 * terminal output uses. (U+202E went out as it was, and reversed the
 * text after it on the reader's screen.)
 */
static int folded_name(buf *out, const char *s)
{
	int rc = 0;

	while (*s && rc == 0) {
		const unsigned char *u = (const unsigned char *)s;
		uint32_t cp = u[0];
		size_t len = 1;
		bool valid = true;

		/* Not UTF-8 (names are, after ingest): the byte is kept as it is. */
		if (u[0] >= 0x80 && (len = utf8_decode(u, &cp)) == 0) {
			len = 1;
			valid = false;
		}
		if (u[0] == ';')
			rc = buf_putc(out, '_');
		else if (u[0] == '\n' || u[0] == '\r')
			rc = buf_putc(out, ' ');
		else if (valid && utf8_hidden(cp))
			rc = buf_printf(out, cp < 0x80 ? "\\x%02x" : "\\u{%04x}", (unsigned)cp);
		else
			rc = buf_put(out, s, len);
		s += len;
	}
	return rc;
}

/* One distinct stack of the folded output and its summed value. */
typedef struct folded_row {
	const char *key; /* the stack's text, owned by the strmap */
	int64_t sum;
} folded_row;

static int folded_row_cmp(const void *a, const void *b)
{
	return strcmp(((const folded_row *)a)->key, ((const folded_row *)b)->key);
}

int export_folded(buf *out, const profile *p, size_t column, pr_error *err)
{
	strmap index = STRMAP_INIT;
	folded_row *rows = NULL;
	size_t nrows = 0, cap = 0;
	buf line = BUF_INIT;
	int rc;

	if ((rc = bad_column(p, column, err)) < 0)
		return rc;
	/* Identical stacks (after name cleaning) become one line: flamegraph.pl's input. */
	for (size_t s = 0; s < p->nsamples && rc == 0; s++) {
		int64_t v = p->values[s * p->nvalue_types + column];
		uint32_t idx;
		const char *stored;
		int r;

		if (!v || !p->stack_len[s])
			continue;
		buf_reset(&line);
		for (uint32_t i = 0; i < p->stack_len[s] && rc == 0; i++) {
			if (i)
				rc = buf_putc(&line, ';');
			if (rc == 0)
				rc = folded_name(&line,
						 p->funcs[p->frames[p->stack_off[s] + i]].name);
		}
		if (rc < 0)
			break;
		if ((r = strmap_put(&index, line.ptr, line.len, (uint32_t)nrows, &idx, &stored)) <
		    0) {
			rc = PR_ENOMEM;
			break;
		}
		if (r == 1) {
			if (nrows == cap) {
				size_t ncap = cap ? cap * 2 : 256;
				folded_row *nr = realloc(rows, ncap * sizeof(*nr));
				if (!nr) {
					rc = PR_ENOMEM;
					break;
				}
				rows = nr;
				cap = ncap;
			}
			rows[nrows].key = stored;
			rows[nrows++].sum = 0;
		}
		if (rows[idx].sum > INT64_MAX - v) {
			rc = pr_error_set(err, PR_EDATA,
					  "cannot write folded stacks: a stack's sum overflows");
			goto out;
		}
		rows[idx].sum += v;
	}
	if (rc == 0 && nrows)
		qsort(rows, nrows, sizeof(*rows), folded_row_cmp);
	for (size_t i = 0; i < nrows && rc == 0; i++)
		rc = buf_printf(out, "%s %lld\n", rows[i].key, (long long)rows[i].sum);
	if (rc < 0)
		rc = pr_error_set(err, rc, "cannot write folded stacks: %s",
				  rc == PR_ELIMIT ? "output size limit reached" : "out of memory");
out:
	free(rows);
	buf_release(&line);
	strmap_release(&index);
	return rc;
}

int export_samples_column(size_t *out, const profile *p, size_t column)
{
	const profile_value_type *vt = &p->value_types[column];
	size_t tl = strlen(vt->type);
	long samples = profile_samples_column(p, column);

	if (samples >= 0) {
		*out = (size_t)samples;
		return 0;
	}
	/*
	 * heap and alloc: inuse_space counts as inuse_objects, alloc_space as
	 * alloc_objects, and Google pprof-nodejs's space as its objects.
	 */
	if (strcmp(vt->type, "space") == 0 || (tl > 6 && strcmp(vt->type + tl - 6, "_space") == 0))
		for (size_t i = 0; i < p->nvalue_types; i++) {
			const char *t = p->value_types[i].type;
			if (strlen(t) == tl + 2 && strncmp(t, vt->type, tl - 5) == 0 &&
			    strcmp(t + tl - 5, "objects") == 0) {
				*out = i;
				return 0;
			}
		}
	if (strcmp(vt->unit, "count") == 0) {
		*out = column;
		return 0;
	}
	return PR_ENOTFOUND;
}

static const char *speedscope_unit(const char *unit)
{
	static const char *known[] = {"nanoseconds", "microseconds", "milliseconds", "seconds",
				      "bytes"};

	for (size_t i = 0; unit && i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(unit, known[i]) == 0)
			return known[i];
	return "none";
}

int export_speedscope(buf *out, const profile *p, size_t column, const char *name, pr_error *err)
{
	json_t *root = NULL, *frames = NULL, *samples = NULL, *weights = NULL;
	char *text = NULL;
	int64_t total = 0;
	int rc;

	if ((rc = bad_column(p, column, err)) < 0)
		return rc;
	frames = json_array();
	samples = json_array();
	weights = json_array();
	for (uint32_t f = 0; f < p->nfuncs && frames; f++) {
		json_t *fr = json_pack("{s:s}", "name", p->funcs[f].name);
		if (fr && p->funcs[f].file[0])
			json_object_set_new(fr, "file", json_string(p->funcs[f].file));
		if (!fr || json_array_append_new(frames, fr) < 0)
			goto nomem;
	}
	for (size_t s = 0; s < p->nsamples && samples && weights; s++) {
		int64_t v = p->values[s * p->nvalue_types + column];
		json_t *st;
		if (!v || !p->stack_len[s])
			continue;
		if (!(st = json_array()) || json_array_append_new(samples, st) < 0)
			goto nomem;
		for (uint32_t i = 0; i < p->stack_len[s]; i++)
			if (json_array_append_new(st,
						  json_integer(p->frames[p->stack_off[s] + i])) < 0)
				goto nomem;
		if (json_array_append_new(weights, json_integer(v)) < 0)
			goto nomem;
		/* endValue is the weights' sum: merged captures can pass 64 bits. */
		if (__builtin_add_overflow(total, v, &total)) {
			rc = pr_error_set(err, PR_EDATA, "cannot write speedscope JSON: "
					  "the weights' sum overflows");
			goto out;
		}
	}
	if (!frames || !samples || !weights)
		goto nomem;
	root = json_pack("{s:s,s:{s:o},s:[{s:s,s:s,s:s,s:i,s:I,s:o,s:o}],s:s,s:i,s:s}", "$schema",
			 "https://www.speedscope.app/file-format-schema.json", "shared", "frames",
			 frames, "profiles", "type", "sampled", "name", name ? name : "profile",
			 "unit", speedscope_unit(p->value_types[column].unit), "startValue", 0,
			 "endValue", (json_int_t)total, "samples", samples, "weights", weights,
			 "name", name ? name : "profile", "activeProfileIndex", 0, "exporter",
			 "profreg");
	frames = samples = weights = NULL;
	if (!root || !(text = json_dumps(root, JSON_COMPACT)))
		goto nomem;
	rc = buf_puts(out, text);
	if (rc == 0)
		rc = buf_putc(out, '\n');
	if (rc < 0)
		rc = pr_error_set(err, rc,
				  "cannot write speedscope JSON: output size limit reached");
	goto out;
nomem:
	rc = oom(err, "speedscope JSON");
out:
	free(text);
	json_decref(root);
	json_decref(frames);
	json_decref(samples);
	json_decref(weights);
	return rc;
}

/* The pprof string table: index of s, adding it when new. */
typedef struct strtab {
	strmap map;
	ProtobufCBinaryData *v;
	size_t n, cap;
} strtab;

static int64_t str_index_n(strtab *t, const char *s, size_t len)
{
	uint32_t idx;
	const char *stored;
	int r;

	if (t->n == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 64;
		ProtobufCBinaryData *nv = realloc(t->v, ncap * sizeof(*nv));
		if (!nv)
			return -1;
		t->v = nv;
		t->cap = ncap;
	}
	if ((r = strmap_put(&t->map, s, len, (uint32_t)t->n, &idx, &stored)) < 0)
		return -1;
	if (r == 1) {
		t->v[t->n].data = (uint8_t *)stored;
		t->v[t->n].len = len;
		t->n++;
	}
	return idx;
}

static int64_t str_index(strtab *t, const char *s)
{
	return str_index_n(t, s, strlen(s));
}

static int gzip_append(buf *out, const uint8_t *data, size_t len)
{
	z_stream z;
	uint8_t chunk[65536];
	int zr, rc = 0;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return PR_ENOMEM;
	z.next_in = (uint8_t *)data;
	z.avail_in = (uInt)len; /* callers keep len under 4 GiB */
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR) {
			rc = PR_ENOMEM;
			break;
		}
		rc = buf_put(out, chunk, sizeof(chunk) - z.avail_out);
	} while (rc == 0 && zr != Z_STREAM_END);
	deflateEnd(&z);
	return rc;
}

/* Pack a whole pprof message and append it gzipped, as pprof files are. */
static int pack_gzip(buf *out, const Perftools__Profiles__Profile *pr, pr_error *err)
{
	size_t len = perftools__profiles__profile__get_packed_size(pr);
	uint8_t *packed;
	int rc;

	if (len > UINT32_MAX)
		return pr_error_set(err, PR_ELIMIT,
				    "cannot write pprof: %zu bytes before compression is too large",
				    len);
	if (!(packed = malloc(len ? len : 1)))
		return oom(err, "pprof");
	perftools__profiles__profile__pack(pr, packed);
	if ((rc = gzip_append(out, packed, len)) < 0)
		rc = pr_error_set(err, rc, "cannot write pprof: %s",
				  rc == PR_ELIMIT ? "output size limit reached" : "out of memory");
	free(packed);
	return rc;
}

int export_pprof(buf *out, const profile *p, size_t column, pr_error *err)
{
	Perftools__Profiles__Profile pr = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT, *vts[1] = {&vt};
	Perftools__Profiles__ValueType pt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	Perftools__Profiles__Function *fn = NULL, **fnp = NULL;
	Perftools__Profiles__Location *loc = NULL, **locp = NULL;
	Perftools__Profiles__Line *line = NULL, **linep = NULL;
	Perftools__Profiles__Sample *smp = NULL, **smpp = NULL;
	uint64_t *ids = NULL;
	int64_t *vals = NULL;
	strtab st;
	size_t ns = 0, nf = 0;
	int rc;

	if ((rc = bad_column(p, column, err)) < 0)
		return rc;
	memset(&st, 0, sizeof(st));
	strmap_init(&st.map);
	nf = p->nfuncs;
	if (str_index(&st, "") < 0)
		goto nomem;
	if (nf && (!(fn = calloc(nf, sizeof(*fn))) || !(fnp = calloc(nf, sizeof(*fnp))) ||
		   !(loc = calloc(nf, sizeof(*loc))) || !(locp = calloc(nf, sizeof(*locp))) ||
		   !(line = calloc(nf, sizeof(*line))) || !(linep = calloc(nf, sizeof(*linep)))))
		goto nomem;
	/* One function, one location, one line per profile function: id = index + 1. */
	for (size_t f = 0; f < nf; f++) {
		int64_t name = str_index(&st, p->funcs[f].name),
			file = str_index(&st, p->funcs[f].file);
		if (name < 0 || file < 0)
			goto nomem;
		perftools__profiles__function__init(&fn[f]);
		fn[f].id = f + 1;
		fn[f].name = fn[f].system_name = name;
		fn[f].filename = file;
		fnp[f] = &fn[f];
		perftools__profiles__line__init(&line[f]);
		line[f].function_id = f + 1;
		linep[f] = &line[f];
		perftools__profiles__location__init(&loc[f]);
		loc[f].id = f + 1;
		loc[f].n_line = 1;
		loc[f].line = &linep[f];
		locp[f] = &loc[f];
	}
	if (p->nsamples && (!(smp = calloc(p->nsamples, sizeof(*smp))) ||
			    !(smpp = calloc(p->nsamples, sizeof(*smpp))) ||
			    !(vals = calloc(p->nsamples, sizeof(*vals))) ||
			    !(ids = calloc(p->nframes ? p->nframes : 1, sizeof(*ids)))))
		goto nomem;
	for (size_t s = 0, off = 0; s < p->nsamples; s++) {
		uint32_t n = p->stack_len[s];
		perftools__profiles__sample__init(&smp[ns]);
		/* pprof lists the leaf first. */
		for (uint32_t i = 0; i < n; i++)
			ids[off + i] = (uint64_t)p->frames[p->stack_off[s] + n - 1 - i] + 1;
		smp[ns].location_id = ids + off;
		smp[ns].n_location_id = n;
		vals[ns] = p->values[s * p->nvalue_types + column];
		smp[ns].value = &vals[ns];
		smp[ns].n_value = 1;
		smpp[ns] = &smp[ns];
		ns++;
		off += n;
	}
	vt.type = str_index(&st, p->value_types[column].type);
	vt.unit = str_index(&st, p->value_types[column].unit);
	if (vt.type < 0 || vt.unit < 0)
		goto nomem;
	pr.n_sample_type = 1;
	pr.sample_type = vts;
	pr.n_sample = ns;
	pr.sample = smpp;
	pr.n_location = nf;
	pr.location = locp;
	pr.n_function = nf;
	pr.function = fnp;
	pr.time_nanos = p->time_ns;
	pr.duration_nanos = p->duration_ns;
	if (p->period_type.type && p->period_type.unit) {
		pt.type = str_index(&st, p->period_type.type);
		pt.unit = str_index(&st, p->period_type.unit);
		if (pt.type < 0 || pt.unit < 0)
			goto nomem;
		pr.period_type = &pt;
		pr.period = p->period;
	}
	pr.n_string_table = st.n;
	pr.string_table = st.v;
	rc = pack_gzip(out, &pr, err);
	goto out;
nomem:
	rc = oom(err, "pprof");
out:
	free(fn);
	free(fnp);
	free(loc);
	free(locp);
	free(line);
	free(linep);
	free(smp);
	free(smpp);
	free(vals);
	free(ids);
	free(st.v);
	strmap_release(&st.map);
	return rc;
}

int export_write(buf *out, const profile *p, size_t column, export_format fmt,
		 const char *name, pr_error *err)
{
	switch (fmt) {
	case EXPORT_SPEEDSCOPE: return export_speedscope(out, p, column, name, err);
	case EXPORT_PPROF: return export_pprof(out, p, column, err);
	default: return export_folded(out, p, column, err);
	}
}

/*
 * The detailed pprof export: the source profile.proto's own tables, merged
 * over captures. Every table is a growing array of output messages with
 * a strmap from the message's content to its index, so the same mapping,
 * function or location in two captures becomes one.
 */
typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

struct export_pprof_set {
	char *type, *unit;
	strtab st;
	pb_mapping *maps;
	size_t nmaps, maps_cap;
	strmap map_index;
	pb_function *fns;
	size_t nfns, fns_cap;
	strmap fn_index;
	pb_location *locs;
	size_t nlocs, locs_cap;
	size_t *loc_line_off;    /* each location's lines: lines[off..off+n_line] */
	size_t loc_line_off_cap;
	pb_line *lines;
	size_t nlines, lines_cap;
	strmap loc_index;
	uint64_t *sample_locs;   /* every sample's location ids, leaf first */
	size_t nsample_locs, sample_locs_cap;
	size_t *sample_off, *sample_len;
	int64_t *sample_val;
	size_t nsamples, off_cap, len_cap, val_cap;
	int64_t period, time_ns, duration_ns;
	char *period_type, *period_unit;
	size_t ncaptures;
};

/* Grow `*arr` (element size `size`) to hold `need` elements. */
static int grow(void *arr, size_t *cap, size_t need, size_t size)
{
	void **p = arr, *np;
	size_t ncap = *cap ? *cap : 64;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	if (!(np = realloc(*p, ncap * size)))
		return PR_ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

int export_pprof_set_new(export_pprof_set **out, const char *type, const char *unit,
			 pr_error *err)
{
	export_pprof_set *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return oom(err, "pprof");
	strmap_init(&s->st.map);
	strmap_init(&s->map_index);
	strmap_init(&s->fn_index);
	strmap_init(&s->loc_index);
	if (!(s->type = strdup(type)) || !(s->unit = strdup(unit)) || str_index(&s->st, "") < 0) {
		export_pprof_set_free(s);
		return oom(err, "pprof");
	}
	*out = s;
	return 0;
}

void export_pprof_set_free(export_pprof_set *s)
{
	if (!s)
		return;
	free(s->type);
	free(s->unit);
	free(s->st.v);
	strmap_release(&s->st.map);
	free(s->maps);
	strmap_release(&s->map_index);
	free(s->fns);
	strmap_release(&s->fn_index);
	free(s->locs);
	free(s->loc_line_off);
	free(s->lines);
	strmap_release(&s->loc_index);
	free(s->sample_locs);
	free(s->sample_off);
	free(s->sample_len);
	free(s->sample_val);
	free(s->period_type);
	free(s->period_unit);
	free(s);
}

/* protobuf-c's allocations for one decode, under a byte budget. */
typedef struct budget {
	size_t used, max;
	bool refused; /* an allocation went over the budget */
} budget;

static void *budget_alloc(void *data, size_t size)
{
	budget *b = data;
	size_t *p;

	if (size > b->max - b->used) {
		b->refused = true;
		return NULL;
	}
	if (!(p = malloc(size + sizeof(size_t))))
		return NULL;
	b->used += size;
	p[0] = size;
	return p + 1;
}

static void budget_free(void *data, void *ptr)
{
	budget *b = data;
	size_t *p = ptr;

	if (!p)
		return;
	b->used -= p[-1];
	free(p - 1);
}

/* One source profile being merged: its message and its id lookups. */
typedef struct source {
	const pb_profile *m;
	const char *name;
	strmap map_ids, fn_ids, loc_ids; /* source id -> output id */
	pr_error *err;
} source;

static int src_bad(source *src, const char *what, uint64_t id)
{
	return pr_error_set(src->err, PR_EDATA, "cannot export '%s' as pprof: %s %" PRIu64
			    " is not valid", src->name, what, id);
}

/* The string at index i of the source, cut to tmpsz - 1 bytes; NULL when out of range. */
static const char *src_str(source *src, int64_t i, char *tmp, size_t tmpsz)
{
	const ProtobufCBinaryData *b;
	size_t n;

	if (i < 0 || (uint64_t)i >= src->m->n_string_table)
		return NULL;
	b = &src->m->string_table[i];
	n = b->len < tmpsz - 1 ? b->len : tmpsz - 1;
	memcpy(tmp, b->data, n);
	tmp[n] = '\0';
	return tmp;
}

/* Index in the output string table of source string i; -1 on failure. */
static int64_t out_str(export_pprof_set *s, source *src, int64_t i)
{
	const ProtobufCBinaryData *b;

	if (i < 0 || (uint64_t)i >= src->m->n_string_table)
		return -1;
	b = &src->m->string_table[i];
	return str_index_n(&s->st, b->len ? (const char *)b->data : "", b->len);
}

/*
 * Index in the output string table of source string i as a function's
 * name or file, rewritten as ingest rewrote it (symname.h): a py-spy
 * frame's command line, which may hold a secret, is never stored in the
 * index, and must not leave through the export either. -1 on failure.
 */
/* Source string i into `tmp` (not NUL-terminated): 0, or -1 when there is none. */
static int source_string(const source *src, int64_t i, buf *tmp)
{
	const ProtobufCBinaryData *b;

	if (i < 0 || (uint64_t)i >= src->m->n_string_table)
		return -1;
	b = &src->m->string_table[i];
	buf_reset(tmp);
	return buf_put(tmp, b->len ? (const char *)b->data : "", b->len) < 0 ? -1 : 0;
}

/*
 * `in`: for a function's name, the index of its file (whose extension
 * says whether a C compiler could have made it, as at ingest); -1 for a
 * file's name.
 */
static int64_t out_name(export_pprof_set *s, source *src, int64_t i, int64_t in, buf *tmp)
{
	bool managed = false;

	if (in >= 0 && (uint64_t)in < src->m->n_string_table)
		managed = symname_managed_file((const char *)src->m->string_table[in].data,
					       src->m->string_table[in].len);
	if (source_string(src, i, tmp) < 0)
		return -1;
	tmp->len = in < 0    ? symname_stable_file(tmp->ptr, tmp->len)
		   : managed ? symname_stable_managed(tmp->ptr, tmp->len)
			     : symname_stable(tmp->ptr, tmp->len);
	return str_index_n(&s->st, tmp->len ? tmp->ptr : "", tmp->len);
}

static int id_put(strmap *m, uint64_t id, uint32_t out_id)
{
	uint32_t found;

	return strmap_put(m, (const char *)&id, sizeof(id), out_id, &found, NULL) < 0 ? PR_ENOMEM
										      : 0;
}

static int id_get(const strmap *m, uint64_t id, uint32_t *out)
{
	return strmap_get(m, (const char *)&id, sizeof(id), out);
}

/* Intern `key` in `index` as `next`; *out is the existing or new index. */
static int key_put(strmap *index, const buf *key, size_t next, uint32_t *out, int *added)
{
	int r = strmap_put(index, key->ptr, key->len, (uint32_t)next, out, NULL);

	if (r < 0)
		return PR_ENOMEM;
	*added = r;
	return 0;
}

/*
 * A mapping's file name as out_name writes a function's file, and cut
 * at its first blank, where a command line's arguments begin: some profilers name the
 * mapping of the main binary by its whole command line, which may hold
 * a secret passed as an argument. -1 on failure.
 */
static int64_t out_map_file(export_pprof_set *s, source *src, int64_t i, buf *tmp)
{
	if (source_string(src, i, tmp) < 0)
		return -1;
	/* Any argument, not only options: a card number needs no dash. */
	for (size_t k = 0; k < tmp->len; k++)
		if (tmp->ptr[k] == ' ' || tmp->ptr[k] == '\t') {
			tmp->len = k;
			break;
		}
	tmp->len = symname_stable_file(tmp->ptr, tmp->len);
	return str_index_n(&s->st, tmp->len ? tmp->ptr : "", tmp->len);
}

/*
 * Is source string i a build id that can leave as it is? A build id is
 * written by the toolchain, not the user, yet a profiler copies whatever
 * its binary says, and a profile's strings may carry a card number
 * (tests/data/pprof/mkcard.py: "buildid-4111111111111111"). GNU build ids
 * are hex (40 digits for SHA-1), Go's are base64url parts joined by '/':
 * 1 to 128 of [A-Za-z0-9_/-] pass, unless 13 or more digits follow each
 * other, '-' or '_' between them no break, as a card number's 13 to 19
 * would. A hex id with such a run (about 1 in 40 at random) is dropped
 * too: a build id that does not leave costs symbolization, a card
 * number that leaves costs more.
 */
static bool build_id_is_plain(const source *src, int64_t i)
{
	const ProtobufCBinaryData *b;
	size_t digits = 0;

	if (i < 0 || (uint64_t)i >= src->m->n_string_table)
		return false;
	b = &src->m->string_table[i];
	if (b->len == 0 || b->len > 128)
		return false;
	for (size_t k = 0; k < b->len; k++) {
		unsigned char c = b->data[k];

		if (c >= '0' && c <= '9') {
			if (++digits >= 13)
				return false;
		} else if (c == '-' || c == '_') {
			continue;
		} else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '/') {
			digits = 0;
		} else {
			return false;
		}
	}
	return true;
}

static int add_mappings(export_pprof_set *s, source *src, buf *key)
{
	for (size_t i = 0; i < src->m->n_mapping; i++) {
		const pb_mapping *mp = src->m->mapping[i];
		pb_mapping o = PERFTOOLS__PROFILES__MAPPING__INIT;
		uint32_t idx;
		int added;

		o.memory_start = mp->memory_start;
		o.memory_limit = mp->memory_limit;
		o.file_offset = mp->file_offset;
		o.has_functions = mp->has_functions;
		o.has_filenames = mp->has_filenames;
		o.has_line_numbers = mp->has_line_numbers;
		o.has_inline_frames = mp->has_inline_frames;
		/*
		 * The mapping's file is a file name and leaves as a function's file
		 * does; its build id only when it looks like one (string 0, "", else).
		 */
		if ((o.filename = out_map_file(s, src, mp->filename, key)) < 0 ||
		    (build_id_is_plain(src, mp->build_id) &&
		     (o.build_id = out_str(s, src, mp->build_id)) < 0))
			return src_bad(src, "mapping", mp->id);
		buf_reset(key);
		if (buf_put(key, &o.memory_start, 3 * sizeof(uint64_t)) < 0 ||
		    buf_put(key, &o.filename, 2 * sizeof(int64_t)) < 0 ||
		    buf_printf(key, "%d%d%d%d", o.has_functions, o.has_filenames,
			       o.has_line_numbers, o.has_inline_frames) < 0 ||
		    key_put(&s->map_index, key, s->nmaps, &idx, &added) < 0)
			return PR_ENOMEM;
		if (added) {
			if (grow(&s->maps, &s->maps_cap, s->nmaps + 1, sizeof(*s->maps)) < 0)
				return PR_ENOMEM;
			o.id = s->nmaps + 1;
			s->maps[s->nmaps++] = o;
		}
		if (id_put(&src->map_ids, mp->id, idx + 1) < 0)
			return PR_ENOMEM;
	}
	return 0;
}

/* Functions that are the same once their names are rewritten (out_name) become one. */
static int add_functions(export_pprof_set *s, source *src, buf *key)
{
	buf tmp = BUF_INIT;
	int rc = 0;

	for (size_t i = 0; i < src->m->n_function && rc == 0; i++) {
		const pb_function *f = src->m->function[i];
		pb_function o = PERFTOOLS__PROFILES__FUNCTION__INIT;
		uint32_t idx;
		int added;

		o.start_line = f->start_line;
		/*
		 * system_name is written as name: it is the one name ingest
		 * keeps, and a mangled name that differs may carry anything.
		 */
		if ((o.name = out_name(s, src, f->name, f->filename, &tmp)) < 0 ||
		    (o.filename = out_name(s, src, f->filename, -1, &tmp)) < 0) {
			rc = src_bad(src, "function", f->id);
			break;
		}
		o.system_name = o.name;
		buf_reset(key);
		if (buf_put(key, &o.name, 4 * sizeof(int64_t)) < 0 ||
		    key_put(&s->fn_index, key, s->nfns, &idx, &added) < 0) {
			rc = PR_ENOMEM;
			break;
		}
		if (added) {
			if (grow(&s->fns, &s->fns_cap, s->nfns + 1, sizeof(*s->fns)) < 0) {
				rc = PR_ENOMEM;
				break;
			}
			o.id = s->nfns + 1;
			s->fns[s->nfns++] = o;
		}
		if (id_put(&src->fn_ids, f->id, idx + 1) < 0)
			rc = PR_ENOMEM;
	}
	buf_release(&tmp);
	return rc;
}

static int add_locations(export_pprof_set *s, source *src, buf *key)
{
	for (size_t i = 0; i < src->m->n_location; i++) {
		const pb_location *l = src->m->location[i];
		uint64_t head[3] = {0, l->address, l->is_folded};
		uint32_t idx, id;
		int added;

		if (l->mapping_id) {
			if (!id_get(&src->map_ids, l->mapping_id, &id))
				return src_bad(src, "location", l->id);
			head[0] = id;
		}
		buf_reset(key);
		if (buf_put(key, head, sizeof(head)) < 0)
			return PR_ENOMEM;
		for (size_t j = 0; j < l->n_line; j++) {
			int64_t ln[3] = {0, l->line[j]->line, l->line[j]->column};
			if (!id_get(&src->fn_ids, l->line[j]->function_id, &id))
				return src_bad(src, "location", l->id);
			ln[0] = id;
			if (buf_put(key, ln, sizeof(ln)) < 0)
				return PR_ENOMEM;
		}
		if (key_put(&s->loc_index, key, s->nlocs, &idx, &added) < 0)
			return PR_ENOMEM;
		if (added) {
			pb_location o = PERFTOOLS__PROFILES__LOCATION__INIT;
			if (grow(&s->locs, &s->locs_cap, s->nlocs + 1, sizeof(*s->locs)) < 0 ||
			    grow(&s->loc_line_off, &s->loc_line_off_cap, s->nlocs + 1,
				 sizeof(size_t)) < 0 ||
			    grow(&s->lines, &s->lines_cap, s->nlines + l->n_line,
				 sizeof(*s->lines)) < 0)
				return PR_ENOMEM;
			o.id = s->nlocs + 1;
			o.mapping_id = head[0];
			o.address = l->address;
			o.is_folded = l->is_folded;
			o.n_line = l->n_line;
			s->loc_line_off[s->nlocs] = s->nlines;
			for (size_t j = 0; j < l->n_line; j++) {
				pb_line ln = PERFTOOLS__PROFILES__LINE__INIT;
				id_get(&src->fn_ids, l->line[j]->function_id, &id);
				ln.function_id = id;
				ln.line = l->line[j]->line;
				ln.column = l->line[j]->column;
				s->lines[s->nlines++] = ln;
			}
			s->locs[s->nlocs++] = o;
		}
		if (id_put(&src->loc_ids, l->id, idx + 1) < 0)
			return PR_ENOMEM;
	}
	return 0;
}

static int add_samples(export_pprof_set *s, source *src, size_t column)
{
	for (size_t i = 0; i < src->m->n_sample; i++) {
		const Perftools__Profiles__Sample *sm = src->m->sample[i];
		size_t n = sm->n_location_id;
		if (sm->n_value <= column)
			return src_bad(src, "sample", (uint64_t)i);
		if (grow(&s->sample_locs, &s->sample_locs_cap, s->nsample_locs + n,
			 sizeof(*s->sample_locs)) < 0)
			return PR_ENOMEM;
		if (grow(&s->sample_off, &s->off_cap, s->nsamples + 1, sizeof(size_t)) < 0 ||
		    grow(&s->sample_len, &s->len_cap, s->nsamples + 1, sizeof(size_t)) < 0 ||
		    grow(&s->sample_val, &s->val_cap, s->nsamples + 1, sizeof(int64_t)) < 0)
			return PR_ENOMEM;
		for (size_t k = 0; k < n; k++) {
			uint32_t id;
			if (!id_get(&src->loc_ids, sm->location_id[k], &id))
				return src_bad(src, "sample", (uint64_t)i);
			s->sample_locs[s->nsample_locs + k] = id;
		}
		s->sample_off[s->nsamples] = s->nsample_locs;
		s->sample_len[s->nsamples] = n;
		s->sample_val[s->nsamples] = sm->value[column];
		s->nsamples++;
		s->nsample_locs += n;
	}
	return 0;
}

int export_pprof_set_add(export_pprof_set *s, const uint8_t *data, size_t len, const char *name,
			 const profile_limits *lim, pr_error *err)
{
	profile_limits dl;
	budget bud = {0, 0, false};
	ProtobufCAllocator alloc = {budget_alloc, budget_free, &bud};
	pb_profile *m = NULL;
	source src;
	buf key = BUF_INIT;
	char t1[256], t2[256];
	size_t column = SIZE_MAX;
	int rc = 0;

	if (!lim) {
		profile_limits_default(&dl);
		lim = &dl;
	}
	memset(&src, 0, sizeof(src));
	src.name = name;
	src.err = err;
	strmap_init(&src.map_ids);
	strmap_init(&src.fn_ids);
	strmap_init(&src.loc_ids);
	bud.max = (size_t)profile_mem_budget(lim);
	if (len > lim->max_decompressed_bytes ||
	    !(m = perftools__profiles__profile__unpack(&alloc, len, data))) {
		bool big = bud.refused || len > lim->max_decompressed_bytes;
		rc = pr_error_set(err, big ? PR_ELIMIT : PR_EDATA,
				  "cannot export '%s' as pprof: %s", name,
				  big ? "too large to decode within the memory limit"
				      : "not a profile.proto message");
		goto out;
	}
	src.m = m;
	for (size_t j = 0; j < m->n_sample_type && column == SIZE_MAX; j++) {
		const char *ty = src_str(&src, m->sample_type[j]->type, t1, sizeof(t1));
		const char *un = src_str(&src, m->sample_type[j]->unit, t2, sizeof(t2));
		if (ty && un && strcmp(ty, s->type) == 0 && strcmp(un, s->unit) == 0)
			column = j;
	}
	if (column == SIZE_MAX) {
		rc = pr_error_set(err, PR_EDATA, "cannot export '%s' as pprof: no '%s/%s' values",
				  name, s->type, s->unit);
		goto out;
	}
	if ((rc = add_mappings(s, &src, &key)) < 0 || (rc = add_functions(s, &src, &key)) < 0 ||
	    (rc = add_locations(s, &src, &key)) < 0 || (rc = add_samples(s, &src, column)) < 0)
		goto out;
	if (!s->ncaptures++) {
		const char *pt, *pu;
		s->time_ns = m->time_nanos;
		s->period = m->period;
		if (m->period_type &&
		    (pt = src_str(&src, m->period_type->type, t1, sizeof(t1))) &&
		    (pu = src_str(&src, m->period_type->unit, t2, sizeof(t2))) &&
		    (!(s->period_type = strdup(pt)) || !(s->period_unit = strdup(pu)))) {
			rc = PR_ENOMEM;
			goto out;
		}
	} else if (m->time_nanos && (!s->time_ns || m->time_nanos < s->time_ns)) {
		s->time_ns = m->time_nanos;
	}
	/* As in export_merge: a sum that wrapped would be a negative duration. */
	if (__builtin_add_overflow(s->duration_ns, m->duration_nanos, &s->duration_ns))
		s->duration_ns = INT64_MAX;
out:
	if (rc == PR_ENOMEM)
		rc = oom(err, "pprof");
	if (m)
		perftools__profiles__profile__free_unpacked(m, &alloc);
	buf_release(&key);
	strmap_release(&src.map_ids);
	strmap_release(&src.fn_ids);
	strmap_release(&src.loc_ids);
	return rc;
}

int export_pprof_set_write(buf *out, export_pprof_set *s, pr_error *err)
{
	pb_profile pr = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT, *vts[1] = {&vt};
	Perftools__Profiles__ValueType pt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	Perftools__Profiles__Sample *smp = NULL, **smpp = NULL;
	pb_mapping **mapp = NULL;
	pb_function **fnp = NULL;
	pb_location **locp = NULL;
	pb_line **linep = NULL;
	int rc = 0;

	if ((s->nmaps && !(mapp = calloc(s->nmaps, sizeof(*mapp)))) ||
	    (s->nfns && !(fnp = calloc(s->nfns, sizeof(*fnp)))) ||
	    (s->nlocs && !(locp = calloc(s->nlocs, sizeof(*locp)))) ||
	    (s->nlines && !(linep = calloc(s->nlines, sizeof(*linep)))) ||
	    (s->nsamples && (!(smp = calloc(s->nsamples, sizeof(*smp))) ||
			     !(smpp = calloc(s->nsamples, sizeof(*smpp))))))
		goto nomem;
	for (size_t i = 0; i < s->nmaps; i++)
		mapp[i] = &s->maps[i];
	for (size_t i = 0; i < s->nfns; i++)
		fnp[i] = &s->fns[i];
	for (size_t i = 0; i < s->nlines; i++)
		linep[i] = &s->lines[i];
	for (size_t i = 0; i < s->nlocs; i++) {
		s->locs[i].line = s->locs[i].n_line ? linep + s->loc_line_off[i] : NULL;
		locp[i] = &s->locs[i];
	}
	for (size_t i = 0; i < s->nsamples; i++) {
		perftools__profiles__sample__init(&smp[i]);
		smp[i].location_id = s->sample_locs + s->sample_off[i];
		smp[i].n_location_id = s->sample_len[i];
		smp[i].value = &s->sample_val[i];
		smp[i].n_value = 1;
		smpp[i] = &smp[i];
	}
	if ((vt.type = str_index(&s->st, s->type)) < 0 ||
	    (vt.unit = str_index(&s->st, s->unit)) < 0)
		goto nomem;
	if (s->period_type) {
		if ((pt.type = str_index(&s->st, s->period_type)) < 0 ||
		    (pt.unit = str_index(&s->st, s->period_unit)) < 0)
			goto nomem;
		pr.period_type = &pt;
	}
	pr.period = s->period;
	pr.n_sample_type = 1;
	pr.sample_type = vts;
	pr.n_sample = s->nsamples;
	pr.sample = smpp;
	pr.n_mapping = s->nmaps;
	pr.mapping = mapp;
	pr.n_location = s->nlocs;
	pr.location = locp;
	pr.n_function = s->nfns;
	pr.function = fnp;
	pr.time_nanos = s->time_ns;
	pr.duration_nanos = s->duration_ns;
	pr.n_string_table = s->st.n;
	pr.string_table = s->st.v;
	rc = pack_gzip(out, &pr, err);
	goto out;
nomem:
	rc = oom(err, "pprof");
out:
	free(mapp);
	free(fnp);
	free(locp);
	free(linep);
	free(smp);
	free(smpp);
	return rc;
}
