/*
 * export.c: folded stacks, speedscope JSON and gzip-compressed pprof.
 */
#define _POSIX_C_SOURCE 200809L
#include "reports/export.h"
#include "pipeline/profile.pb-c.h"

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
	uint32_t *map = NULL, *stack = NULL;
	size_t cap = 0;
	int rc = 0;

	if (src->nfuncs && !(map = malloc(src->nfuncs * sizeof(*map))))
		return oom(err, "the merged profile");
	for (uint32_t f = 0; f < src->nfuncs && rc == 0; f++)
		rc = profile_intern(dst, &map[f], src->funcs[f].name, strlen(src->funcs[f].name),
				    src->funcs[f].file, strlen(src->funcs[f].file), err);
	for (size_t s = 0; s < src->nsamples && rc == 0; s++) {
		uint32_t n = src->stack_len[s];
		int64_t v = src->values[s * src->nvalue_types + src->primary];
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
	if (rc == 0)
		dst->duration_ns += src->duration_ns;
	free(map);
	free(stack);
	return rc;
}

/* A frame name as folded text allows it: no ';', no line breaks. */
static int folded_name(buf *out, const char *s)
{
	int rc = 0;

	for (; *s && rc == 0; s++)
		rc = buf_putc(out, *s == ';' ? '_' : (*s == '\n' || *s == '\r') ? ' ' : *s);
	return rc;
}

int export_folded(buf *out, const profile *p, size_t column, pr_error *err)
{
	int rc;

	if ((rc = bad_column(p, column, err)) < 0)
		return rc;
	for (size_t s = 0; s < p->nsamples && rc == 0; s++) {
		int64_t v = p->values[s * p->nvalue_types + column];
		if (!v || !p->stack_len[s])
			continue;
		for (uint32_t i = 0; i < p->stack_len[s] && rc == 0; i++) {
			if (i)
				rc = buf_putc(out, ';');
			if (rc == 0)
				rc = folded_name(out,
						 p->funcs[p->frames[p->stack_off[s] + i]].name);
		}
		if (rc == 0)
			rc = buf_printf(out, " %lld\n", (long long)v);
	}
	if (rc < 0)
		return pr_error_set(err, rc, "cannot write folded stacks: %s",
				    rc == PR_ELIMIT ? "output size limit reached"
						    : "out of memory");
	return 0;
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
		total += v;
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
	free(text);
	json_decref(root);
	if (rc < 0)
		return pr_error_set(err, rc,
				    "cannot write speedscope JSON: output size limit reached");
	return 0;
nomem:
	json_decref(root);
	json_decref(frames);
	json_decref(samples);
	json_decref(weights);
	return oom(err, "speedscope JSON");
}

/* The pprof string table: index of s, adding it when new. */
typedef struct strtab {
	strmap map;
	ProtobufCBinaryData *v;
	size_t n, cap;
} strtab;

static int64_t str_index(strtab *t, const char *s)
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
	if ((r = strmap_put(&t->map, s, strlen(s), (uint32_t)t->n, &idx, &stored)) < 0)
		return -1;
	if (r == 1) {
		t->v[t->n].data = (uint8_t *)stored;
		t->v[t->n].len = strlen(stored);
		t->n++;
	}
	return idx;
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
	uint8_t *packed = NULL;
	strtab st;
	size_t ns = 0, nf = 0, len;
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
	len = perftools__profiles__profile__get_packed_size(&pr);
	if (len > UINT32_MAX) {
		rc = pr_error_set(err, PR_ELIMIT,
				  "cannot write pprof: %zu bytes before compression is too large",
				  len);
		goto out;
	}
	if (!(packed = malloc(len ? len : 1)))
		goto nomem;
	perftools__profiles__profile__pack(&pr, packed);
	if ((rc = gzip_append(out, packed, len)) < 0)
		rc = pr_error_set(err, rc, "cannot write pprof: %s",
				  rc == PR_ELIMIT ? "output size limit reached" : "out of memory");
	goto out;
nomem:
	rc = oom(err, "pprof");
out:
	free(packed);
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
