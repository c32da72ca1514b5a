/*
 * test_export.c: folded, speedscope and pprof exports round-trip: export,
 * read back (profreg's own parsers for folded and pprof, the speedscope
 * file format read with jansson), and the per-function self values match
 * the original's.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "pipeline/format.h"
#include "pipeline/gunzip.h"
#include "pipeline/profile.pb-c.h"
#include "reports/export.h"

/* name -> self, summed over functions of the same name (folded drops files). */
typedef struct selfmap {
	char **names;
	int64_t *self;
	size_t n;
} selfmap;

static void selfmap_add(selfmap *m, const char *name, int64_t v)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->names[i], name) == 0) {
			m->self[i] += v;
			return;
		}
	m->names = realloc(m->names, (m->n + 1) * sizeof(*m->names));
	m->self = realloc(m->self, (m->n + 1) * sizeof(*m->self));
	m->names[m->n] = strdup(name);
	m->self[m->n++] = v;
}

static void selfmap_free(selfmap *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->names[i]);
	free(m->names);
	free(m->self);
}

static void summary_of(selfmap *m, const profile *p, size_t column, bool with_file)
{
	profile_summary s;
	pr_error err = PR_ERROR_INIT;
	char key[4096];

	memset(m, 0, sizeof(*m));
	assert_int_equal(profile_summarize(&s, p, column, &err), 0);
	for (size_t i = 0; i < s.nrows; i++) {
		const profile_func *f = &p->funcs[s.rows[i].func];
		if (!s.rows[i].self)
			continue;
		snprintf(key, sizeof(key), "%s%s%s", f->name, with_file ? "\t" : "",
			 with_file ? f->file : "");
		selfmap_add(m, key, s.rows[i].self);
	}
	profile_summary_release(&s);
}

static void assert_same(const selfmap *a, const selfmap *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		size_t j;
		for (j = 0; j < b->n && strcmp(a->names[i], b->names[j]) != 0; j++)
			;
		if (j == b->n)
			fail_msg("'%s' missing after the round trip", a->names[i]);
		if (a->self[i] != b->self[j])
			fail_msg("'%s': self %lld became %lld", a->names[i], (long long)a->self[i],
				 (long long)b->self[j]);
	}
}

static profile *load(const char *rel, const char *type)
{
	const char *dir = getenv("PROFREG_TEST_DATA");
	char path[1024];
	buf raw = BUF_INIT;
	profile *p = NULL;
	pr_error err = PR_ERROR_INIT;

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "tests/data", rel);
	if (fileio_read(&raw, path, 64 << 20, &err) < 0)
		fail_msg("%s", err.msg);
	if (format_parse(&p, (const uint8_t *)raw.ptr, raw.len, PROFILE_FMT_AUTO, path, NULL,
			 &err) < 0)
		fail_msg("%s", err.msg);
	buf_release(&raw);
	profile_pick_primary(p, type);
	return p;
}

static profile *reparse(const buf *b, profile_format fmt)
{
	profile *p = NULL;
	pr_error err = PR_ERROR_INIT;

	if (format_parse(&p, (const uint8_t *)b->ptr, b->len, fmt, "export", NULL, &err) < 0)
		fail_msg("%s", err.msg);
	return p;
}

static void test_pprof_round_trip_keeps_every_function_and_file(void **state)
{
	profile *p = load("pprof/go-cpu.pb.gz", "cpu"), *q;
	buf out = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	selfmap a, b;

	(void)state;
	assert_int_equal(export_pprof(&out, p, p->primary, &err), 0);
	assert_true(format_is_gzip((const uint8_t *)out.ptr, out.len));
	q = reparse(&out, PROFILE_FMT_PPROF);
	assert_int_equal(q->nvalue_types, 1);
	assert_string_equal(q->value_types[0].type, p->value_types[p->primary].type);
	assert_string_equal(q->value_types[0].unit, p->value_types[p->primary].unit);
	assert_int_equal(q->period, p->period);
	summary_of(&a, p, p->primary, true);
	summary_of(&b, q, 0, true);
	assert_true(a.n >= 6);
	assert_same(&a, &b);
	selfmap_free(&a);
	selfmap_free(&b);
	buf_release(&out);
	profile_free(p);
	profile_free(q);
}

static void test_folded_round_trip_keeps_every_function(void **state)
{
	static const char *inputs[] = {"pprof/go-cpu.pb.gz", "folded/mixed.folded",
				       "v8/node-burn.cpuprofile"};

	(void)state;
	for (size_t k = 0; k < sizeof(inputs) / sizeof(inputs[0]); k++) {
		profile *p = load(inputs[k], "cpu"), *q;
		buf out = BUF_INIT;
		pr_error err = PR_ERROR_INIT;
		selfmap a, b;

		assert_int_equal(export_folded(&out, p, p->primary, &err), 0);
		q = reparse(&out, PROFILE_FMT_FOLDED);
		summary_of(&a, p, p->primary, false);
		summary_of(&b, q, 0, false);
		assert_same(&a, &b);
		selfmap_free(&a);
		selfmap_free(&b);
		buf_release(&out);
		profile_free(p);
		profile_free(q);
	}
}

static void test_speedscope_round_trip_keeps_every_function(void **state)
{
	profile *p = load("pprof/go-cpu.pb.gz", "cpu");
	buf out = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	json_error_t jerr;
	json_t *j, *frames, *prof, *samples, *weights;
	selfmap a, b;

	(void)state;
	assert_int_equal(export_speedscope(&out, p, p->primary, "go <cpu>", &err), 0);
	j = json_loads(out.ptr, 0, &jerr);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "$schema")),
			    "https://www.speedscope.app/file-format-schema.json");
	frames = json_object_get(json_object_get(j, "shared"), "frames");
	prof = json_array_get(json_object_get(j, "profiles"), 0);
	assert_string_equal(json_string_value(json_object_get(prof, "type")), "sampled");
	assert_string_equal(json_string_value(json_object_get(prof, "unit")), "nanoseconds");
	assert_string_equal(json_string_value(json_object_get(prof, "name")), "go <cpu>");
	samples = json_object_get(prof, "samples");
	weights = json_object_get(prof, "weights");
	assert_int_equal(json_array_size(samples), json_array_size(weights));
	memset(&b, 0, sizeof(b));
	for (size_t i = 0; i < json_array_size(samples); i++) {
		json_t *st = json_array_get(samples, i);
		json_t *leaf = json_array_get(frames, (size_t)json_integer_value(json_array_get(
							      st, json_array_size(st) - 1)));
		char key[4096];
		json_t *file = json_object_get(leaf, "file");
		snprintf(key, sizeof(key), "%s\t%s",
			 json_string_value(json_object_get(leaf, "name")),
			 file ? json_string_value(file) : "");
		selfmap_add(&b, key, json_integer_value(json_array_get(weights, i)));
	}
	summary_of(&a, p, p->primary, true);
	assert_same(&a, &b);
	selfmap_free(&a);
	selfmap_free(&b);
	json_decref(j);
	buf_release(&out);
	profile_free(p);
}

static void test_merged_captures_add_up_and_hostile_names_survive(void **state)
{
	profile *p = NULL, *m = NULL, *q;
	pr_error err = PR_ERROR_INIT;
	const char *types[1] = {"samples"}, *units[1] = {"count"};
	uint32_t a, b, st[2];
	int64_t v = 7;
	buf out = BUF_INIT;
	selfmap x, y;

	(void)state;
	assert_int_equal(profile_new(&p, PROFILE_FMT_FOLDED, "t", NULL, &err), 0);
	assert_int_equal(profile_set_value_types(p, 1, types, units, &err), 0);
	assert_int_equal(profile_intern(p, &a, "main", 4, NULL, 0, &err), 0);
	assert_int_equal(profile_intern(p, &b, "<script>\"&'x", 12, "f.go", 4, &err), 0);
	st[0] = a, st[1] = b;
	assert_int_equal(profile_add_sample(p, st, 2, &v, &err), 0);
	assert_int_equal(export_merged_new(&m, "merged", "samples", "count", &err), 0);
	assert_int_equal(export_merge(m, p, &err), 0);
	assert_int_equal(export_merge(m, p, &err), 0);
	assert_int_equal(m->nsamples, 2);
	assert_int_equal(m->nfuncs, 2);
	assert_int_equal(export_pprof(&out, m, 0, &err), 0);
	q = reparse(&out, PROFILE_FMT_PPROF);
	summary_of(&x, q, 0, true);
	assert_int_equal(x.n, 1);
	assert_string_equal(x.names[0], "<script>\"&'x\tf.go");
	assert_int_equal(x.self[0], 14);
	selfmap_free(&x);
	profile_free(q);
	/* Folded text cannot carry ';' in a name: it becomes '_'. */
	assert_int_equal(profile_intern(p, &b, "a;b", 3, NULL, 0, &err), 0);
	st[1] = b;
	assert_int_equal(profile_add_sample(p, st, 2, &v, &err), 0);
	buf_reset(&out);
	assert_int_equal(export_folded(&out, p, 0, &err), 0);
	assert_non_null(strstr(out.ptr, "main;a_b 7\n"));
	q = reparse(&out, PROFILE_FMT_FOLDED);
	summary_of(&y, q, 0, false);
	assert_int_equal(y.n, 2);
	selfmap_free(&y);
	profile_free(q);
	/*
	 * Nor may a name's control characters reach a terminal or a parser:
	 * ESC, BEL, tab and DEL as \xNN, a C1 control (U+009B, CSI) as \u{NNNN}.
	 */
	assert_int_equal(profile_intern(p, &b, "\033[31mred\a\tx\x7f\xc2\x9b" "2J\xc3\xa9", 18,
				       NULL, 0, &err), 0);
	st[1] = b;
	assert_int_equal(profile_add_sample(p, st, 2, &v, &err), 0);
	buf_reset(&out);
	assert_int_equal(export_folded(&out, p, 0, &err), 0);
	assert_non_null(strstr(out.ptr,
			       "main;\\x1b[31mred\\x07\\x09x\\x7f\\u{009b}2J\xc3\xa9 7\n"));
	for (size_t i = 0; i < out.len; i++)
		if ((unsigned char)out.ptr[i] < 0x20 && out.ptr[i] != '\n')
			fail_msg("control byte 0x%02x at %zu", (unsigned char)out.ptr[i], i);
	/* Nor a bidirectional override, which reverses the text after it on screen. */
	assert_int_equal(profile_intern(p, &b, "pay\xe2\x80\xaeyap", 9, NULL, 0, &err), 0);
	st[1] = b;
	assert_int_equal(profile_add_sample(p, st, 2, &v, &err), 0);
	buf_reset(&out);
	assert_int_equal(export_folded(&out, p, 0, &err), 0);
	assert_non_null(strstr(out.ptr, "main;pay\\u{202e}yap 7\n"));
	assert_null(strstr(out.ptr, "\xe2\x80\xae"));
	assert_int_equal(export_folded(&out, p, 5, &err), PR_EUSAGE);
	assert_non_null(strstr(err.msg, "no value column 5"));
	buf_release(&out);
	profile_free(p);
	profile_free(m);
}


/* A test data file's bytes, gunzipped when they are gzip. */
static void raw_of(buf *out, const char *rel)
{
	const char *dir = getenv("PROFREG_TEST_DATA");
	char path[1024];
	buf raw = BUF_INIT;
	pr_error err = PR_ERROR_INIT;

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "tests/data", rel);
	if (fileio_read(&raw, path, 64 << 20, &err) < 0)
		fail_msg("%s", err.msg);
	if (format_is_gzip((const uint8_t *)raw.ptr, raw.len))
		assert_int_equal(gunzip_bounded(out, (const uint8_t *)raw.ptr, raw.len, 64 << 20,
						path, &err), 0);
	else
		assert_int_equal(buf_put(out, raw.ptr, raw.len), 0);
	buf_release(&raw);
}

static Perftools__Profiles__Profile *unpack_gz(const buf *gz)
{
	buf raw = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	Perftools__Profiles__Profile *m;

	assert_int_equal(gunzip_bounded(&raw, (const uint8_t *)gz->ptr, gz->len, 64 << 20, "out",
					&err), 0);
	m = perftools__profiles__profile__unpack(NULL, raw.len, (const uint8_t *)raw.ptr);
	assert_non_null(m);
	buf_release(&raw);
	return m;
}

static const char *pb_str(const Perftools__Profiles__Profile *m, int64_t i, char *tmp,
			  size_t n)
{
	assert_true(i >= 0 && (size_t)i < m->n_string_table);
	snprintf(tmp, n, "%.*s", (int)m->string_table[i].len,
		 (const char *)m->string_table[i].data);
	return tmp;
}

/*
 * Each capture's values and duration may come close to 64 bits, and a
 * selection merges many. The durations added up wrapped to a negative one,
 * which profreg's own pprof parser refuses, and speedscope's endValue (the
 * weights' sum) wrapped the same way: the duration now stops at the
 * largest, and a speedscope export whose weights overflow is refused.
 */
static void test_merged_sums_past_64_bits_do_not_wrap(void **state)
{
	profile *p = NULL, *m = NULL, *q;
	pr_error err = PR_ERROR_INIT;
	const char *types[1] = {"cpu"}, *units[1] = {"nanoseconds"};
	export_pprof_set *set = NULL;
	Perftools__Profiles__Profile *pb;
	uint32_t a;
	int64_t v = 6000000000000000000;
	buf out = BUF_INIT, raw = BUF_INIT;

	(void)state;
	assert_int_equal(profile_new(&p, PROFILE_FMT_FOLDED, "t", NULL, &err), 0);
	assert_int_equal(profile_set_value_types(p, 1, types, units, &err), 0);
	assert_int_equal(profile_intern(p, &a, "main", 4, NULL, 0, &err), 0);
	assert_int_equal(profile_add_sample(p, &a, 1, &v, &err), 0);
	p->duration_ns = v;
	assert_int_equal(export_merged_new(&m, "merged", "cpu", "nanoseconds", &err), 0);
	assert_int_equal(export_merge(m, p, &err), 0);
	assert_int_equal(export_merge(m, p, &err), 0);
	assert_true(m->duration_ns == INT64_MAX);
	assert_int_equal(export_speedscope(&out, m, 0, "merged", &err), PR_EDATA);
	assert_non_null(strstr(err.msg, "the weights' sum overflows"));
	buf_reset(&out);
	assert_int_equal(export_pprof(&out, m, 0, &err), 0);
	q = reparse(&out, PROFILE_FMT_PPROF);
	assert_true(q->duration_ns == INT64_MAX);
	profile_free(q);

	/* The detailed writer, given the bytes of one capture twice. */
	buf_reset(&out);
	assert_int_equal(export_pprof(&out, p, 0, &err), 0);
	assert_int_equal(gunzip_bounded(&raw, (const uint8_t *)out.ptr, out.len, 64 << 20, "t",
					&err), 0);
	assert_int_equal(export_pprof_set_new(&set, "cpu", "nanoseconds", &err), 0);
	for (int k = 0; k < 2; k++)
		assert_int_equal(export_pprof_set_add(set, (uint8_t *)raw.ptr, raw.len, "t", NULL,
						      &err), 0);
	buf_reset(&out);
	assert_int_equal(export_pprof_set_write(&out, set, &err), 0);
	pb = unpack_gz(&out);
	assert_true(pb->duration_nanos == INT64_MAX);
	perftools__profiles__profile__free_unpacked(pb, NULL);
	export_pprof_set_free(set);
	buf_release(&raw);
	buf_release(&out);
	profile_free(p);
	profile_free(m);
}

static void test_detailed_pprof_keeps_lines_and_mappings_and_drops_labels(void **state)
{
	static const char *inputs[] = {"pprof/go-cpu.pb.gz", "pprof/go-spans.pb.gz"};

	(void)state;
	for (size_t k = 0; k < sizeof(inputs) / sizeof(inputs[0]); k++) {
		profile *p = load(inputs[k], "cpu"), *q;
		Perftools__Profiles__Profile *src, *m;
		export_pprof_set *set = NULL;
		buf raw = BUF_INIT, out = BUF_INIT;
		pr_error err = PR_ERROR_INIT;
		char t1[512], t2[512];
		size_t with_line = 0, labels = 0;
		selfmap a, b;

		raw_of(&raw, inputs[k]);
		src = perftools__profiles__profile__unpack(NULL, raw.len, (uint8_t *)raw.ptr);
		assert_non_null(src);
		for (size_t i = 0; i < src->n_sample; i++)
			labels += src->sample[i]->n_label;
		assert_int_equal(export_pprof_set_new(&set, p->value_types[p->primary].type,
						      p->value_types[p->primary].unit, &err), 0);
		assert_int_equal(export_pprof_set_add(set, (uint8_t *)raw.ptr, raw.len, inputs[k],
						      NULL, &err), 0);
		assert_int_equal(export_pprof_set_write(&out, set, &err), 0);
		m = unpack_gz(&out);
		/* The mapping's file and build id, every location, the line numbers. */
		assert_true(src->n_mapping > 0);
		assert_int_equal(m->n_mapping, src->n_mapping);
		assert_string_equal(pb_str(m, m->mapping[0]->filename, t1, sizeof(t1)),
				    pb_str(src, src->mapping[0]->filename, t2, sizeof(t2)));
		assert_true(strlen(t1) > 0);
		assert_string_equal(pb_str(m, m->mapping[0]->build_id, t1, sizeof(t1)),
				    pb_str(src, src->mapping[0]->build_id, t2, sizeof(t2)));
		assert_int_equal(m->n_location, src->n_location);
		for (size_t i = 0; i < m->n_location; i++) {
			assert_int_equal(m->location[i]->address, src->location[i]->address);
			for (size_t j = 0; j < m->location[i]->n_line; j++)
				with_line += m->location[i]->line[j]->line > 0;
		}
		assert_true(with_line > 0);
		assert_int_equal(m->n_sample, src->n_sample);
		for (size_t i = 0; i < m->n_sample; i++)
			assert_int_equal(m->sample[i]->n_label, 0);
		/* Label keys and values are not even in the string table. */
		if (labels) {
			for (size_t i = 0; i < src->n_sample; i++)
				for (size_t j = 0; j < src->sample[i]->n_label; j++) {
					const char *v = pb_str(src, src->sample[i]->label[j]->str,
							       t2, sizeof(t2));
					for (size_t s = 1; v[0] && s < m->n_string_table; s++)
						assert_string_not_equal(
							pb_str(m, (int64_t)s, t1, sizeof(t1)), v);
				}
		}
		/* Parsed back: the same per-function self values, files included. */
		q = reparse(&out, PROFILE_FMT_PPROF);
		summary_of(&a, p, p->primary, true);
		summary_of(&b, q, 0, true);
		assert_same(&a, &b);
		selfmap_free(&a);
		selfmap_free(&b);
		/* The same capture twice: one set of locations, twice the values. */
		assert_int_equal(export_pprof_set_add(set, (uint8_t *)raw.ptr, raw.len, inputs[k],
						      NULL, &err), 0);
		buf_reset(&out);
		perftools__profiles__profile__free_unpacked(m, NULL);
		assert_int_equal(export_pprof_set_write(&out, set, &err), 0);
		m = unpack_gz(&out);
		assert_int_equal(m->n_location, src->n_location);
		assert_int_equal(m->n_mapping, src->n_mapping);
		assert_int_equal(m->n_sample, 2 * src->n_sample);
		perftools__profiles__profile__free_unpacked(m, NULL);
		perftools__profiles__profile__free_unpacked(src, NULL);
		export_pprof_set_free(set);
		buf_release(&raw);
		buf_release(&out);
		profile_free(p);
		profile_free(q);
	}
}

/*
 * A pprof of two functions, n0 called by n1, both in `file`, exported
 * through the detailed writer and read back (the caller frees it with
 * perftools__profiles__profile__free_unpacked).
 */
static Perftools__Profiles__Profile *export_two(const char *n0, const char *n1, const char *file)
{
	const char *strings[] = {"", "cpu", "nanoseconds", n0, n1, file};
	ProtobufCBinaryData st[6];
	Perftools__Profiles__ValueType vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT, *vts[1] = {&vt};
	Perftools__Profiles__Function fn[2], *fns[2] = {&fn[0], &fn[1]};
	Perftools__Profiles__Line ln[2], *lns[2][1] = {{&ln[0]}, {&ln[1]}};
	Perftools__Profiles__Location loc[2], *locs[2] = {&loc[0], &loc[1]};
	Perftools__Profiles__Sample smp = PERFTOOLS__PROFILES__SAMPLE__INIT, *smps[1] = {&smp};
	Perftools__Profiles__Profile src = PERFTOOLS__PROFILES__PROFILE__INIT, *m;
	uint64_t stack[2] = {2, 1};
	int64_t value[1] = {100};
	export_pprof_set *set = NULL;
	buf raw = BUF_INIT, out = BUF_INIT;
	pr_error err = PR_ERROR_INIT;

	for (size_t i = 0; i < 6; i++)
		st[i] = (ProtobufCBinaryData){strlen(strings[i]), (uint8_t *)strings[i]};
	vt.type = 1;
	vt.unit = 2;
	for (int i = 0; i < 2; i++) {
		perftools__profiles__function__init(&fn[i]);
		fn[i].id = (uint64_t)i + 1;
		fn[i].name = fn[i].system_name = 3 + i;
		fn[i].filename = 5;
		perftools__profiles__line__init(&ln[i]);
		ln[i].function_id = (uint64_t)i + 1;
		perftools__profiles__location__init(&loc[i]);
		loc[i].id = (uint64_t)i + 1;
		loc[i].n_line = 1;
		loc[i].line = lns[i];
	}
	smp.n_location_id = 2;
	smp.location_id = stack;
	smp.n_value = 1;
	smp.value = value;
	src.n_string_table = 6;
	src.string_table = st;
	src.n_sample_type = 1;
	src.sample_type = vts;
	src.n_function = 2;
	src.function = fns;
	src.n_location = 2;
	src.location = locs;
	src.n_sample = 1;
	src.sample = smps;
	assert_int_equal(buf_reserve(&raw, perftools__profiles__profile__get_packed_size(&src)),
			 0);
	raw.len = perftools__profiles__profile__pack(&src, (uint8_t *)raw.ptr);

	assert_int_equal(export_pprof_set_new(&set, "cpu", "nanoseconds", &err), 0);
	assert_int_equal(export_pprof_set_add(set, (uint8_t *)raw.ptr, raw.len, "capture 1", NULL,
					      &err), 0);
	assert_int_equal(export_pprof_set_write(&out, set, &err), 0);
	m = unpack_gz(&out);
	export_pprof_set_free(set);
	buf_release(&raw);
	buf_release(&out);
	return m;
}

/*
 * py-spy names a process's frame after its command line, which may hold
 * a secret; ingest keeps only "process" (symname.h), and the detailed
 * writer, which copies names from the stored profile, did not.
 */
static void test_detailed_pprof_drops_a_command_line_from_frame_names(void **state)
{
	Perftools__Profiles__Profile *m;
	char t[512];
	bool process = false;

	(void)state;
	m = export_two("process 4121:\"python app.py --card=4111111111111111\"", "main",
		       "/app/main.py");
	for (size_t i = 0; i < m->n_string_table; i++) {
		pb_str(m, (int64_t)i, t, sizeof(t));
		assert_null(strstr(t, "4111111111111111"));
		process |= strcmp(t, "process") == 0;
	}
	assert_true(process);
	assert_int_equal(m->n_function, 2);
	assert_string_equal(pb_str(m, m->function[0]->system_name, t, sizeof(t)), "process");
	perftools__profiles__profile__free_unpacked(m, NULL);
}

/* A Go function called cold is exported as ingest stored it, not as GCC's cold part of main. */
static void test_detailed_pprof_keeps_a_go_function_called_cold(void **state)
{
	Perftools__Profiles__Profile *m;
	char t[512];

	(void)state;
	m = export_two("main.cold", "main.main", "/app/main.go");
	assert_string_equal(pb_str(m, m->function[0]->name, t, sizeof(t)), "main.cold");
	perftools__profiles__profile__free_unpacked(m, NULL);
	m = export_two("parse.cold", "main", "/app/parse.c");
	assert_string_equal(pb_str(m, m->function[0]->name, t, sizeof(t)), "parse");
	perftools__profiles__profile__free_unpacked(m, NULL);
}

static void test_detailed_pprof_refuses_bad_input_with_a_reason(void **state)
{
	static const uint8_t garbage[] = {0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01};
	export_pprof_set *set = NULL;
	buf raw = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	profile_limits lim;

	(void)state;
	raw_of(&raw, "pprof/go-cpu.pb.gz");
	assert_int_equal(export_pprof_set_new(&set, "cpu", "nanoseconds", &err), 0);
	assert_int_equal(export_pprof_set_add(set, garbage, sizeof(garbage), "capture 7", NULL,
					      &err), PR_EDATA);
	assert_string_equal(err.msg,
			    "cannot export 'capture 7' as pprof: not a profile.proto message");
	/* Truncated. */
	pr_error_clear(&err);
	assert_true(export_pprof_set_add(set, (uint8_t *)raw.ptr, raw.len / 2, "capture 8", NULL,
					 &err) < 0);
	if (!strstr(err.msg, "'capture 8'"))
		fail_msg("%s", err.msg);
	/* Over the memory limit of the decode. */
	pr_error_clear(&err);
	profile_limits_default(&lim);
	lim.max_decompressed_bytes = raw.len - 1;
	assert_int_equal(export_pprof_set_add(set, (uint8_t *)raw.ptr, raw.len, "capture 9",
					      &lim, &err), PR_ELIMIT);
	assert_non_null(strstr(err.msg, "'capture 9'"));
	export_pprof_set_free(set);
	/* A profile without the asked-for column. */
	pr_error_clear(&err);
	assert_int_equal(export_pprof_set_new(&set, "inuse_space", "bytes", &err), 0);
	assert_int_equal(export_pprof_set_add(set, (uint8_t *)raw.ptr, raw.len, "capture 10", NULL,
					      &err), PR_EDATA);
	assert_string_equal(err.msg,
			    "cannot export 'capture 10' as pprof: no 'inuse_space/bytes' values");
	export_pprof_set_free(set);
	buf_release(&raw);
}

static void test_folded_is_one_line_per_stack_with_sample_counts(void **state)
{
	profile *p = load("pprof/go-cpu.pb.gz", "cpu"), *h = load("pprof/go-heap.pb.gz", "heap");
	buf out = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	size_t col, lines = 0;
	int64_t sum = 0, want = 0;
	char *save = NULL, *line, *prev = NULL;

	(void)state;
	assert_int_equal(export_samples_column(&col, p, p->primary), 0);
	assert_string_equal(p->value_types[col].type, "samples");
	assert_int_equal(export_folded(&out, p, col, &err), 0);
	for (line = strtok_r(out.ptr, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' ');
		assert_non_null(sp);
		*sp = '\0';
		/* Sorted and distinct: every stack once. */
		if (prev)
			assert_true(strcmp(prev, line) < 0);
		prev = line;
		sum += strtoll(sp + 1, NULL, 10);
		lines++;
	}
	for (size_t s = 0; s < p->nsamples; s++)
		if (p->stack_len[s])
			want += p->values[s * p->nvalue_types + col];
	assert_int_equal(sum, want);
	assert_true(lines > 0 && lines < p->nsamples);
	/* heap: inuse_space counts as inuse_objects. */
	assert_int_equal(export_samples_column(&col, h, h->primary), 0);
	assert_string_equal(h->value_types[h->primary].type, "inuse_space");
	assert_string_equal(h->value_types[col].type, "inuse_objects");
	profile_free(h);
	/* Google pprof-nodejs's heap: space counts as objects. */
	h = load("pprof/node-heap/google.pb.gz", "heap");
	assert_int_equal(export_samples_column(&col, h, h->primary), 0);
	assert_string_equal(h->value_types[h->primary].type, "space");
	assert_string_equal(h->value_types[col].type, "objects");
	buf_release(&out);
	profile_free(p);
	profile_free(h);
}

/*
 * A JFR recording's allocations have no count of their own, and its CPU
 * samples beside them count none of them: exported as samples, the
 * allocations of burn.jfr came out as its 223 CPU samples' stacks.
 */
static void test_jfr_allocations_have_no_sample_counts(void **state)
{
	profile *p = load("jfr/burn.jfr", "alloc");
	size_t col = 99;

	(void)state;
	assert_string_equal(p->value_types[p->primary].type, "alloc_space");
	assert_int_equal(export_samples_column(&col, p, p->primary), PR_ENOTFOUND);
	profile_pick_primary(p, "cpu");
	assert_int_equal(export_samples_column(&col, p, p->primary), 0);
	assert_string_equal(p->value_types[col].type, "samples");
	profile_free(p);
}

static void test_export_formats_parse_by_name(void **state)
{
	export_format f;

	(void)state;
	assert_int_equal(export_format_parse(&f, "speedscope"), 0);
	assert_int_equal(f, EXPORT_SPEEDSCOPE);
	assert_int_equal(export_format_parse(&f, "pprof"), 0);
	assert_int_equal(f, EXPORT_PPROF);
	assert_int_equal(export_format_parse(&f, "svg"), PR_EUSAGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pprof_round_trip_keeps_every_function_and_file),
		cmocka_unit_test(test_folded_round_trip_keeps_every_function),
		cmocka_unit_test(test_speedscope_round_trip_keeps_every_function),
		cmocka_unit_test(test_merged_captures_add_up_and_hostile_names_survive),
		cmocka_unit_test(test_merged_sums_past_64_bits_do_not_wrap),
		cmocka_unit_test(test_export_formats_parse_by_name),
		cmocka_unit_test(test_detailed_pprof_keeps_lines_and_mappings_and_drops_labels),
		cmocka_unit_test(test_detailed_pprof_refuses_bad_input_with_a_reason),
		cmocka_unit_test(test_detailed_pprof_drops_a_command_line_from_frame_names),
		cmocka_unit_test(test_detailed_pprof_keeps_a_go_function_called_cold),
		cmocka_unit_test(test_folded_is_one_line_per_stack_with_sample_counts),
		cmocka_unit_test(test_jfr_allocations_have_no_sample_counts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
