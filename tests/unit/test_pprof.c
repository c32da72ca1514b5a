/*
 * test_pprof.c: the pprof parser. Real Go CPU and heap profiles are
 * checked against `go tool pprof -top` output for the same files (the
 * golden files sit beside them in tests/data/pprof); hand-built profiles,
 * packed with protobuf-c and then corrupted on purpose, cover exact values,
 * naming, and malformed, truncated, hostile and oversized input.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/buf.h"
#include "pipeline/gunzip.h"
#include "pipeline/pprof.h"
#include "pipeline/profile.pb-c.h"
#include "tests/support/testdata.h"

#define NAME "t.pb"

/* ---- reading the real profiles and their golden files ---------------- */

static profile *parse_real(const char *rel)
{
	buf gz = BUF_INIT, raw = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;

	testdata_read(&gz, rel);
	if (gunzip_bounded(&raw, (const uint8_t *)gz.ptr, gz.len, 64u << 20, rel, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(pprof_sniff((const uint8_t *)raw.ptr, raw.len));
	if (pprof_parse(&p, (const uint8_t *)raw.ptr, raw.len, rel, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	buf_release(&gz);
	buf_release(&raw);
	return p;
}

typedef struct golden_row {
	char name[256];
	double flat_pct;
} golden_row;

/*
 * The rows of `go tool pprof -top`: "flat flat% sum% cum cum% name", the
 * name possibly followed by " (inline)", which is display only.
 */
static size_t read_golden(const char *rel, golden_row *rows, size_t max)
{
	buf b = BUF_INIT;
	size_t n = 0;
	bool in_table = false;
	char *save = NULL;

	testdata_read(&b, rel);
	for (char *line = strtok_r(b.ptr, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *s = line, *end;
		size_t len;

		if (!in_table) {
			in_table = strstr(line, "flat%") && strstr(line, "cum%");
			continue;
		}
		for (int field = 0; field < 5; field++) {
			while (*s == ' ')
				s++;
			if (field == 1) {
				rows[n].flat_pct = strtod(s, &end);
				assert_true(end != s && *end == '%');
			}
			while (*s && *s != ' ')
				s++;
		}
		while (*s == ' ')
			s++;
		len = strlen(s);
		if (len > 9 && strcmp(s + len - 9, " (inline)") == 0)
			len -= 9;
		assert_true(len > 0 && len < sizeof(rows[n].name));
		memcpy(rows[n].name, s, len);
		rows[n].name[len] = '\0';
		assert_true(++n < max);
	}
	buf_release(&b);
	assert_true(in_table);
	return n;
}

/* Self share of all functions called `name` (pprof -top merges by name). */
static double self_pct(const profile *p, const profile_summary *s, const char *name)
{
	int64_t self = 0;

	for (size_t i = 0; i < s->nrows; i++)
		if (strcmp(p->funcs[s->rows[i].func].name, name) == 0)
			self += s->rows[i].self;
	return 100.0 * (double)self / (double)s->total;
}

/*
 * Every function pprof shows with flat% >= 0.5 has that self share in
 * profreg within 0.1 points, and every function profreg gives >= 0.5%
 * self is one pprof shows with the same share.
 */
static void check_against_top(const char *pb, const char *top, const char *type,
			      const char *column, size_t min_rows)
{
	golden_row rows[256];
	size_t nrows = read_golden(top, rows, 256), checked = 0;
	profile *p = parse_real(pb);
	profile_summary s;
	pr_error err = PR_ERROR_INIT;

	profile_pick_primary(p, type);
	assert_string_equal(p->value_types[p->primary].type, column);
	if (profile_summarize(&s, p, p->primary, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(s.total > 0);
	for (size_t i = 0; i < nrows; i++) {
		double ours;
		if (rows[i].flat_pct < 0.5)
			continue;
		ours = self_pct(p, &s, rows[i].name);
		if (ours < rows[i].flat_pct - 0.1 || ours > rows[i].flat_pct + 0.1)
			fail_msg("%s: '%s' self %.3f%%, pprof says %.2f%%", pb, rows[i].name,
				 ours, rows[i].flat_pct);
		checked++;
	}
	assert_true(checked >= min_rows);
	for (size_t i = 0; i < s.nrows; i++) {
		const char *name = p->funcs[s.rows[i].func].name;
		double ours = self_pct(p, &s, name);
		bool found = false;
		if (ours < 0.5)
			continue;
		for (size_t k = 0; k < nrows; k++)
			if (strcmp(rows[k].name, name) == 0) {
				found = true;
				assert_true(ours >= rows[k].flat_pct - 0.1 &&
					    ours <= rows[k].flat_pct + 0.1);
			}
		if (!found)
			fail_msg("%s: '%s' has %.2f%% self but pprof does not show it", pb,
				 name, ours);
	}
	profile_summary_release(&s);
	profile_free(p);
}

static void test_go_cpu_profile_self_shares_match_pprof_top(void **state)
{
	(void)state;
	check_against_top("pprof/go-cpu.pb.gz", "pprof/go-cpu.top.txt", "cpu", "cpu", 4);
}

static void test_go_heap_profile_inuse_space_matches_pprof_top(void **state)
{
	(void)state;
	check_against_top("pprof/go-heap.pb.gz", "pprof/go-heap.top.txt", "heap",
			  "inuse_space", 3);
}

/*
 * Go's net/http/pprof serves /debug/pprof/heap?seconds=1 as the
 * difference of two heap profiles; main.grow freed during the window more
 * than it kept, so its in-use values are negative. What was allocated in
 * the window is read, as pprof -sample_index=alloc_space shows it, and
 * the in-use columns are left out: the file was refused before.
 */
static void test_go_delta_heap_profile_is_read_as_its_allocations(void **state)
{
	profile *p = parse_real("pprof/go119-heap-delta.pb.gz");

	(void)state;
	assert_int_equal(p->nvalue_types, 2);
	assert_string_equal(p->value_types[0].type, "alloc_objects");
	assert_string_equal(p->value_types[1].type, "alloc_space");
	assert_string_equal(profile_guess_type(p), "alloc");
	profile_free(p);
	check_against_top("pprof/go119-heap-delta.pb.gz", "pprof/go119-heap-delta.top.txt",
			  "alloc", "alloc_space", 3);
}

/*
 * The same served over a window in which every stack kept what it
 * allocated (main.allocBig appends to a slice that is never cut): no
 * in-use value is negative, yet they are the window's growth, not a heap.
 * Read as a heap it was a heap capture of 140 MB "in use" while the
 * process held more; known by its duration (Go writes none into a heap
 * profile), it is its allocations, as the shrinking window's are.
 */
static void test_go_delta_heap_profile_without_negatives_is_its_allocations(void **state)
{
	profile *p = parse_real("pprof/go119-heap-delta-grow.pb.gz");

	(void)state;
	assert_true(p->duration_ns > 0);
	assert_int_equal(p->nvalue_types, 2);
	assert_string_equal(p->value_types[0].type, "alloc_objects");
	assert_string_equal(p->value_types[1].type, "alloc_space");
	assert_string_equal(profile_guess_type(p), "alloc");
	assert_false(profile_has_values_of(p, "heap"));
	profile_free(p);
	check_against_top("pprof/go119-heap-delta-grow.pb.gz",
			  "pprof/go119-heap-delta-grow.top.txt", "alloc", "alloc_space", 3);
}

/* A heap profile the runtime wrote has no duration, and keeps its in-use columns. */
static void test_go_heap_profile_without_duration_keeps_inuse(void **state)
{
	profile *p = parse_real("pprof/go-heap.pb.gz");

	(void)state;
	assert_int_equal(p->duration_ns, 0);
	assert_string_equal(profile_guess_type(p), "heap");
	profile_free(p);
}

/*
 * A Go heap profile's records are stacks by object size, scaled to stand
 * for what the sampler skipped: its sample count is the allocations the
 * sampler caught, objects * (1 - e^(-(bytes/objects)/rate)) a record, as
 * computed from `go tool pprof -raw` (Period 4096: 489 of main.keepSmall's
 * 15,893 128-byte objects, 638 of main.keepMedium's 1,009). It was the 7
 * records with an in-use value (30 with allocations), a noise floor that
 * hid a share going from half to two thirds of the heap.
 * go119-heap.pb.gz, at Go's default 512 KiB rate, caught 6 allocations
 * that stand for 22,584 objects: summing objects would overcount them.
 */
static void test_go_heap_profile_counts_its_sampled_objects(void **state)
{
	static const struct {
		const char *file, *type;
		int64_t count;
	} cases[] = {
		{"pprof/go-heap.pb.gz", "heap", 1179},
		{"pprof/go-heap.pb.gz", "alloc", 1202},
		{"pprof/go119-heap.pb.gz", "heap", 6},
		{"pprof/go119-allocs.pb.gz", "alloc", 6},
	};
	pr_error err = PR_ERROR_INIT;

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		profile *p = parse_real(cases[c].file);
		profile_summary s;

		assert_string_equal(profile_pick_primary(p, cases[c].type), cases[c].type);
		assert_int_equal(profile_summarize(&s, p, p->primary, &err), 0);
		if (s.sample_count != cases[c].count)
			fail_msg("%s as %s: %lld samples, want %lld", cases[c].file, cases[c].type,
				 (long long)s.sample_count, (long long)cases[c].count);
		profile_summary_release(&s);
		profile_free(p);
	}
}

/*
 * net/http/pprof's goroutine?seconds=1 is a difference too, of counts: the
 * handler's own goroutine is on another line the second time, so one
 * stack is always -1. It is refused, as before, saying what it is.
 */
static void test_go_delta_goroutine_profile_is_refused_as_a_difference(void **state)
{
	buf gz = BUF_INIT, raw = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	const char *rel = "pprof/go119-goroutine-delta.pb.gz";

	(void)state;
	testdata_read(&gz, rel);
	assert_int_equal(gunzip_bounded(&raw, (const uint8_t *)gz.ptr, gz.len, 64u << 20, rel,
					&err), 0);
	assert_int_equal(pprof_parse(&p, (const uint8_t *)raw.ptr, raw.len, rel, NULL, &err),
			 PR_EDATA);
	assert_null(p);
	assert_non_null(strstr(err.msg, "cannot parse 'pprof/go119-goroutine-delta.pb.gz': "
				       "sample 1 has a negative value -1 for 'goroutine': a "
				       "difference of two profiles (net/http/pprof's ?seconds=)"));
	assert_non_null(strstr(err.msg, "fetch it without seconds="));
	assert_null(strchr(err.msg, '\n'));
	buf_release(&gz);
	buf_release(&raw);
}

static uint32_t func_id(const profile *p, const char *name)
{
	for (uint32_t i = 0; i < p->nfuncs; i++)
		if (strcmp(p->funcs[i].name, name) == 0)
			return i;
	fail_msg("no function '%s'", name);
	return UINT32_MAX;
}

static void test_go_cpu_profile_puts_inlined_frame_below_its_caller(void **state)
{
	profile *p = parse_real("pprof/go-cpu.pb.gz");
	uint32_t step = func_id(p, "main.step"), caller = func_id(p, "main.burnInlined");
	size_t seen = 0;

	(void)state;
	for (size_t i = 0; i < p->nsamples; i++) {
		const uint32_t *st = p->frames + p->stack_off[i];
		uint32_t d = p->stack_len[i];
		for (uint32_t k = 0; k < d; k++) {
			if (st[k] != step)
				continue;
			/* Root first: the function step was inlined into sits just above. */
			assert_true(k > 0);
			assert_int_equal(st[k - 1], caller);
			seen++;
		}
	}
	assert_true(seen > 0);
	assert_string_equal(p->funcs[step].file, "profreg.test/gen/pprof/main.go");
	profile_free(p);
}

static void test_go_cpu_profile_keeps_capture_metadata(void **state)
{
	profile *p = parse_real("pprof/go-cpu.pb.gz");

	(void)state;
	assert_int_equal(p->format, PROFILE_FMT_PPROF);
	assert_int_equal(p->nvalue_types, 2);
	assert_string_equal(p->value_types[0].type, "samples");
	assert_string_equal(p->value_types[0].unit, "count");
	assert_string_equal(p->value_types[1].type, "cpu");
	assert_string_equal(p->value_types[1].unit, "nanoseconds");
	assert_int_equal(p->period, 10000000);
	assert_string_equal(p->period_type.type, "cpu");
	assert_string_equal(p->period_type.unit, "nanoseconds");
	assert_true(p->duration_ns > 2000000000LL && p->duration_ns < 10000000000LL);
	assert_true(p->time_ns > 1600000000LL * 1000000000LL);
	assert_int_equal(p->default_value, -1);
	profile_free(p);
}

/*
 * pprof-nodejs names its count column "sample", not "samples": its 211
 * and 224 samples (from `go tool pprof -raw`, in 3 and 4 records) are
 * the capture's sample count, which weighs its shares in the analysis.
 */
static void test_node_wall_profile_counts_its_samples(void **state)
{
	static const char *const files[2] = {"pprof/nodejs-anon-v1.pb.gz",
					     "pprof/nodejs-anon-v2.pb.gz"};
	static const int64_t samples[2] = {211, 224};
	pr_error err = PR_ERROR_INIT;

	(void)state;
	for (int f = 0; f < 2; f++) {
		profile *p = parse_real(files[f]);
		profile_summary s;

		assert_string_equal(p->value_types[0].type, "sample");
		assert_string_equal(profile_pick_primary(p, NULL), "wall");
		assert_int_equal(profile_summarize(&s, p, p->primary, &err), 0);
		assert_int_equal(s.sample_count, samples[f]);
		profile_summary_release(&s);
		profile_free(p);
	}
}

/*
 * @datadog/pprof's CPU profile (collectCpuTime) adds the CPU time of
 * Node's other threads as a record "Non JS threads activity" of no
 * sample. Its 1,658 samples in 6 records and every function's CPU time
 * are those of `go tool pprof -raw`; the sample count was the 6 records,
 * as the record of no sample made "sample" count none of the column.
 */
static void test_datadog_node_cpu_profile_counts_its_samples(void **state)
{
	static const struct {
		const char *name;
		int64_t self;
	} want[] = {
		{"hot", 1051017334}, {"warm", 654988979},
		{"cold", 208382967}, {"Non JS threads activity", 65077644},
		{"main", 1446942},
	};
	profile *p = parse_real("pprof/dd-node/cpu-v1-01.pb.gz");
	pr_error err = PR_ERROR_INIT;
	profile_summary s;

	(void)state;
	assert_string_equal(profile_pick_primary(p, NULL), "cpu");
	assert_string_equal(p->value_types[p->primary].type, "cpu");
	assert_int_equal(p->nsamples, 6);
	assert_int_equal(profile_summarize(&s, p, p->primary, &err), 0);
	assert_int_equal(s.sample_count, 1658);
	assert_int_equal(s.total, 1982019577);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		size_t r = 0;

		while (r < s.nrows && strcmp(p->funcs[s.rows[r].func].name, want[i].name) != 0)
			r++;
		if (r == s.nrows || s.rows[r].self != want[i].self)
			fail_msg("%s: self %lld, want %lld", want[i].name,
				 r == s.nrows ? -1LL : (long long)s.rows[r].self,
				 (long long)want[i].self);
	}
	profile_summary_release(&s);
	profile_free(p);
}

/*
 * V8's sampling heap profiler, behind pprof-nodejs, scales its counts as
 * Go's does, so a record stands for objects * (1 - e^(-(bytes/objects) /
 * rate)) sampled allocations. @datadog/pprof names its period after its
 * last column (inuse_space/bytes) and Google's pprof-nodejs writes the
 * columns objects/count and space/bytes, which were no heap profile:
 * refused at ingest. Counts from tests/data/pprof/node-heap/records.js
 * (3,520 and 3,563; V8's own lists held 3,511 and 3,558 sampled
 * allocations; the objects columns 19,867 and 18,072), keepBig's bytes
 * from `go tool pprof -raw`.
 */
static void test_node_heap_profiles_count_their_sampled_objects(void **state)
{
	static const struct {
		const char *file, *column;
		int64_t count, keep_big;
	} cases[] = {
		{"pprof/node-heap/datadog.pb.gz", "inuse_space", 3520, 97855800},
		{"pprof/node-heap/google.pb.gz", "space", 3563, 99373224},
	};
	pr_error err = PR_ERROR_INIT;

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		profile *p = parse_real(cases[c].file);
		const char *type = profile_pick_primary(p, NULL);
		profile_summary s;
		size_t r = 0;

		if (!type || strcmp(type, "heap") != 0)
			fail_msg("%s: type %s, want heap", cases[c].file, type ? type : "none");
		assert_string_equal(p->value_types[p->primary].type, cases[c].column);
		assert_int_equal(profile_summarize(&s, p, p->primary, &err), 0);
		if (s.sample_count != cases[c].count)
			fail_msg("%s: %lld samples, want %lld", cases[c].file,
				 (long long)s.sample_count, (long long)cases[c].count);
		while (r < s.nrows && strcmp(p->funcs[s.rows[r].func].name, "keepBig") != 0)
			r++;
		assert_true(r < s.nrows);
		assert_int_equal(s.rows[r].self, cases[c].keep_big);
		profile_summary_release(&s);
		profile_free(p);
	}
}

/*
 * A real goroutine profile (Go 1.19.8's /debug/pprof/goroutine form) of
 * 49 goroutines, as runtime.NumGoroutine() counted them when it was
 * written, on 4 stacks (40, 5, 3 and 1 of them, `go tool pprof -raw`).
 * Each goroutine is a sample of the capture, not each stack: the count
 * weighs its shares in the analysis.
 */
static void test_go_goroutine_profile_counts_its_goroutines(void **state)
{
	profile *p = parse_real("pprof/go119-goroutine.pb.gz");
	pr_error err = PR_ERROR_INIT;
	profile_summary s;

	(void)state;
	assert_string_equal(profile_pick_primary(p, NULL), "goroutine");
	assert_int_equal(p->nsamples, 4);
	assert_int_equal(profile_summarize(&s, p, p->primary, &err), 0);
	assert_int_equal(s.total, 49);
	assert_int_equal(s.sample_count, 49);
	profile_summary_release(&s);
	profile_free(p);
}

/* ---- hand-built profiles --------------------------------------------- */

typedef Perftools__Profiles__Profile pb_profile;

/*
 * A small profile built field by field; tests change it, then pack it.
 * Strings: see pb_init. Functions 1 main, 2 work, 3 inner (main.go,
 * work.go, work.go). Locations 1 [work], 2 [main], 3 [inner, work] (inner
 * inlined into work). Mapping 1: libfoo.so at 0x1000-0x2000, offset 0x100.
 * Samples (samples, cpu): [1 2] (1, 10); [2] (2, 20); [3 2] (3, 30).
 */
typedef struct pb {
	pb_profile prof;
	ProtobufCBinaryData strs[64];
	Perftools__Profiles__ValueType vt[4], *vtp[4], period_type;
	Perftools__Profiles__Function fn[8], *fnp[8];
	Perftools__Profiles__Location loc[8], *locp[8];
	Perftools__Profiles__Line line[16], *linep[16];
	Perftools__Profiles__Mapping map[4], *mapp[4];
	Perftools__Profiles__Sample smp[8], *smpp[8];
	Perftools__Profiles__Label lab[4], *labp[4];
	uint64_t locids[8][8];
	int64_t vals[8][4];
} pb;

enum { S_EMPTY, S_SAMPLES, S_COUNT, S_CPU, S_NS, S_MAIN, S_MAIN_GO, S_WORK,
       S_WORK_GO, S_INNER, S_LIBFOO, S_NSTR };

static int64_t pb_str(pb *b, const char *s)
{
	size_t i = b->prof.n_string_table++;

	assert_true(i < 64);
	b->strs[i].data = (uint8_t *)(uintptr_t)s;
	b->strs[i].len = strlen(s);
	return (int64_t)i;
}

static void pb_func(pb *b, size_t i, uint64_t id, int64_t name, int64_t file)
{
	perftools__profiles__function__init(&b->fn[i]);
	b->fn[i].id = id;
	b->fn[i].name = name;
	b->fn[i].filename = file;
	b->fnp[i] = &b->fn[i];
	b->prof.n_function = i + 1;
}

/* Location `i` with the given function ids as its lines (0 ends the list). */
static void pb_loc(pb *b, size_t i, uint64_t id, uint64_t f0, uint64_t f1)
{
	Perftools__Profiles__Location *l = &b->loc[i];

	perftools__profiles__location__init(l);
	l->id = id;
	l->line = &b->linep[2 * i];
	for (uint64_t f = 0; f < 2; f++) {
		uint64_t fid = f == 0 ? f0 : f1;
		if (!fid)
			break;
		perftools__profiles__line__init(&b->line[2 * i + f]);
		b->line[2 * i + f].function_id = fid;
		b->linep[2 * i + f] = &b->line[2 * i + f];
		l->n_line++;
	}
	b->locp[i] = l;
	b->prof.n_location = i + 1;
}

static void pb_sample(pb *b, size_t i, int64_t v0, int64_t v1, size_t nloc, ...)
{
	Perftools__Profiles__Sample *s = &b->smp[i];
	va_list ap;

	perftools__profiles__sample__init(s);
	va_start(ap, nloc);
	for (size_t k = 0; k < nloc; k++)
		b->locids[i][k] = va_arg(ap, uint64_t);
	va_end(ap);
	s->n_location_id = nloc;
	s->location_id = b->locids[i];
	b->vals[i][0] = v0;
	b->vals[i][1] = v1;
	s->n_value = 2;
	s->value = b->vals[i];
	b->smpp[i] = s;
	b->prof.n_sample = i + 1;
}

static void pb_init(pb *b)
{
	static const char *const strs[S_NSTR] = {
		"", "samples", "count", "cpu", "nanoseconds", "main", "main.go",
		"work", "work.go", "inner", "/usr/lib/libfoo.so",
	};

	memset(b, 0, sizeof(*b));
	perftools__profiles__profile__init(&b->prof);
	b->prof.string_table = b->strs;
	for (size_t i = 0; i < S_NSTR; i++)
		pb_str(b, strs[i]);
	for (size_t i = 0; i < 2; i++) {
		perftools__profiles__value_type__init(&b->vt[i]);
		b->vtp[i] = &b->vt[i];
	}
	b->vt[0].type = S_SAMPLES;
	b->vt[0].unit = S_COUNT;
	b->vt[1].type = S_CPU;
	b->vt[1].unit = S_NS;
	b->prof.n_sample_type = 2;
	b->prof.sample_type = b->vtp;
	b->prof.function = b->fnp;
	b->prof.location = b->locp;
	b->prof.sample = b->smpp;
	b->prof.mapping = b->mapp;

	pb_func(b, 0, 1, S_MAIN, S_MAIN_GO);
	pb_func(b, 1, 2, S_WORK, S_WORK_GO);
	pb_func(b, 2, 3, S_INNER, S_WORK_GO);
	pb_loc(b, 0, 1, 2, 0);
	pb_loc(b, 1, 2, 1, 0);
	pb_loc(b, 2, 3, 3, 2);
	perftools__profiles__mapping__init(&b->map[0]);
	b->map[0].id = 1;
	b->map[0].memory_start = 0x1000;
	b->map[0].memory_limit = 0x2000;
	b->map[0].file_offset = 0x100;
	b->map[0].filename = S_LIBFOO;
	b->mapp[0] = &b->map[0];
	b->prof.n_mapping = 1;
	pb_sample(b, 0, 1, 10, 2, (uint64_t)1, (uint64_t)2);
	pb_sample(b, 1, 2, 20, 1, (uint64_t)2);
	pb_sample(b, 2, 3, 30, 2, (uint64_t)3, (uint64_t)2);
	perftools__profiles__value_type__init(&b->period_type);
	b->period_type.type = S_CPU;
	b->period_type.unit = S_NS;
	b->prof.period_type = &b->period_type;
	b->prof.period = 10000000;
	b->prof.duration_nanos = 3000000000LL;
	b->prof.time_nanos = 1700000000000000000LL;
}

/* The packed bytes; free() them. */
static uint8_t *pb_pack(const pb *b, size_t *len)
{
	size_t n = perftools__profiles__profile__get_packed_size(&b->prof);
	uint8_t *out = malloc(n ? n : 1);

	assert_non_null(out);
	assert_int_equal(perftools__profiles__profile__pack(&b->prof, out), n);
	*len = n;
	return out;
}

static int parse_bytes(profile **p, const uint8_t *data, size_t len,
		       const profile_limits *lim, pr_error *err)
{
	int rc = pprof_parse(p, data, len, NAME, lim, err);

	if (rc < 0)
		assert_null(*p);
	return rc;
}

static int parse_pb(profile **p, const pb *b, const profile_limits *lim, pr_error *err)
{
	size_t len;
	uint8_t *data = pb_pack(b, &len);
	int rc = parse_bytes(p, data, len, lim, err);

	free(data);
	return rc;
}

static profile *parse_pb_ok(const pb *b)
{
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;

	if (parse_pb(&p, b, NULL, &err) < 0)
		fail_msg("parse failed: %s", err.msg);
	return p;
}

/* The parse fails with `code`, naming the input and containing `why`. */
static void expect_error(const pb *b, const profile_limits *lim, int code, const char *why)
{
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	int rc = parse_pb(&p, b, lim, &err);

	if (rc != code || !strstr(err.msg, "'" NAME "'") || !strstr(err.msg, why))
		fail_msg("expected %d with '%s', got %d: %s", code, why, rc, err.msg);
}

static void expect_bytes_error(const uint8_t *data, size_t len, int code, const char *why)
{
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	int rc = parse_bytes(&p, data, len, NULL, &err);

	if (rc != code || !strstr(err.msg, "'" NAME "'") || !strstr(err.msg, why))
		fail_msg("expected %d with '%s', got %d: %s", code, why, rc, err.msg);
}

static const profile_summary_row *row(const profile *p, const profile_summary *s,
				      const char *name)
{
	for (size_t i = 0; i < s->nrows; i++)
		if (strcmp(p->funcs[s->rows[i].func].name, name) == 0)
			return &s->rows[i];
	fail_msg("no function '%s' in the summary", name);
	return NULL;
}

static void test_hand_built_profile_has_exact_self_and_total(void **state)
{
	pb b;
	profile *p;
	profile_summary s;
	pr_error err = PR_ERROR_INIT;

	(void)state;
	pb_init(&b);
	p = parse_pb_ok(&b);
	assert_int_equal(p->nsamples, 3);
	assert_int_equal(profile_summarize(&s, p, 1, &err), 0);
	assert_int_equal(s.total, 60);
	assert_int_equal(s.sample_count, 6);
	assert_int_equal(row(p, &s, "inner")->self, 30);
	assert_int_equal(row(p, &s, "inner")->total, 30);
	assert_int_equal(row(p, &s, "main")->self, 20);
	assert_int_equal(row(p, &s, "main")->total, 60);
	assert_int_equal(row(p, &s, "work")->self, 10);
	assert_int_equal(row(p, &s, "work")->total, 40);
	assert_string_equal(p->funcs[row(p, &s, "inner")->func].file, "work.go");
	assert_int_equal(p->period, 10000000);
	assert_int_equal(p->duration_ns, 3000000000LL);
	assert_int_equal(p->time_ns, 1700000000000000000LL);
	assert_int_equal(p->primary, 1);
	profile_summary_release(&s);
	profile_free(p);
}

static void test_inlined_lines_expand_with_innermost_as_leaf(void **state)
{
	pb b;
	profile *p;
	const uint32_t *st;

	(void)state;
	pb_init(&b);
	p = parse_pb_ok(&b);
	/* Sample 2 is [loc 3 = (inner, work), loc 2 = main]: root first. */
	assert_int_equal(p->stack_len[2], 3);
	st = p->frames + p->stack_off[2];
	assert_string_equal(p->funcs[st[0]].name, "main");
	assert_string_equal(p->funcs[st[1]].name, "work");
	assert_string_equal(p->funcs[st[2]].name, "inner");
	profile_free(p);
}

/*
 * As `pprof -top` names them: by the mapped object, not the address, so a
 * stripped binary is one function whatever addresses its samples hit.
 */
static void test_location_without_lines_is_named_by_its_object(void **state)
{
	pb b;
	profile *p;
	const char *names[4];

	(void)state;
	pb_init(&b);
	/*
	 * Location 4: in libfoo.so; 5: no mapping; 6: libfoo.so, no address;
	 * 7: libfoo.so at another address.
	 */
	pb_loc(&b, 3, 4, 0, 0);
	b.loc[3].mapping_id = 1;
	b.loc[3].address = 0x1234;
	pb_loc(&b, 4, 5, 0, 0);
	b.loc[4].address = 0xdeadbeef;
	pb_loc(&b, 5, 6, 0, 0);
	b.loc[5].mapping_id = 1;
	pb_loc(&b, 6, 7, 0, 0);
	b.loc[6].mapping_id = 1;
	b.loc[6].address = 0x1300;
	pb_sample(&b, 3, 1, 1, 2, (uint64_t)4, (uint64_t)2);
	pb_sample(&b, 4, 1, 1, 2, (uint64_t)5, (uint64_t)2);
	pb_sample(&b, 5, 1, 1, 2, (uint64_t)6, (uint64_t)2);
	pb_sample(&b, 6, 1, 1, 2, (uint64_t)7, (uint64_t)2);
	p = parse_pb_ok(&b);
	for (size_t i = 0; i < 4; i++)
		names[i] = p->funcs[p->frames[p->stack_off[3 + i] + 1]].name;
	assert_string_equal(names[0], "[libfoo.so]");
	assert_string_equal(p->funcs[p->frames[p->stack_off[3] + 1]].file, "/usr/lib/libfoo.so");
	assert_string_equal(names[1], "[unknown]");
	assert_string_equal(p->funcs[p->frames[p->stack_off[4] + 1]].file, "");
	assert_string_equal(names[2], "[libfoo.so]");
	/* One function, not one per address. */
	assert_int_equal(p->frames[p->stack_off[3] + 1], p->frames[p->stack_off[6] + 1]);
	profile_free(p);
}

static void test_default_sample_type_is_recorded(void **state)
{
	pb b;
	profile *p;

	(void)state;
	pb_init(&b);
	b.prof.default_sample_type = S_SAMPLES;
	p = parse_pb_ok(&b);
	assert_int_equal(p->default_value, 0);
	assert_int_equal(p->primary, 0);
	profile_free(p);
}

/*
 * A default sample type named by the empty string (not index 0, which
 * means none) matches the sample type of that name; an empty string
 * decodes with no bytes at all, which a byte comparison must not touch
 * (found by fuzz_pprof under UBSan).
 */
static void test_an_empty_default_sample_type_matches_the_empty_type(void **state)
{
	pb b;
	profile *p;
	int64_t empty;

	(void)state;
	pb_init(&b);
	empty = pb_str(&b, "");
	b.vt[1].type = empty;
	b.prof.default_sample_type = empty;
	p = parse_pb_ok(&b);
	assert_int_equal(p->default_value, 1);
	assert_int_equal(p->primary, 1);
	profile_free(p);
}

static void test_empty_profile_parses_with_zero_total(void **state)
{
	pb b;
	profile *p;
	profile_summary s;
	pr_error err = PR_ERROR_INIT;

	(void)state;
	pb_init(&b);
	b.prof.n_sample = 0;
	p = parse_pb_ok(&b);
	assert_int_equal(p->nsamples, 0);
	assert_int_equal(p->nvalue_types, 2);
	assert_int_equal(profile_summarize(&s, p, 1, &err), 0);
	assert_int_equal(s.total, 0);
	assert_int_equal(s.nrows, 0);
	profile_summary_release(&s);
	profile_free(p);
}

static void test_invalid_utf8_name_is_repaired_not_rejected(void **state)
{
	pb b;
	profile *p;

	(void)state;
	pb_init(&b);
	b.fn[0].name = pb_str(&b, "ma\xffin");
	p = parse_pb_ok(&b);
	assert_int_equal(p->utf8_replaced, 1);
	func_id(p, "ma\xef\xbf\xbdin");
	profile_free(p);
}

static void test_labels_are_checked_but_never_kept(void **state)
{
	pb b;
	profile *p;

	(void)state;
	pb_init(&b);
	perftools__profiles__label__init(&b.lab[0]);
	b.lab[0].key = pb_str(&b, "card");
	b.lab[0].str = pb_str(&b, "4111111111111111");
	b.labp[0] = &b.lab[0];
	b.smp[0].n_label = 1;
	b.smp[0].label = b.labp;
	p = parse_pb_ok(&b);
	for (uint32_t i = 0; i < p->nfuncs; i++) {
		assert_null(strstr(p->funcs[i].name, "4111"));
		assert_null(strstr(p->funcs[i].file, "4111"));
	}
	profile_free(p);

	/* A label's string index out of range: rejected without its value. */
	b.lab[0].str = 999;
	expect_error(&b, NULL, PR_EDATA,
		     "string index 999 of sample 0 label value is out of range");
}

static void test_a_label_filter_keeps_only_the_matching_samples(void **state)
{
	static const char *const keys[] = {"span_id", "local root span id"};
	pprof_label_filter only = {keys, 2, "s1"};
	pb b;
	profile *p = NULL;
	pr_error err = PR_ERROR_INIT;
	uint8_t *bytes;
	size_t len, kept = 0;

	(void)state;
	pb_init(&b);
	/* Sample 0: span s1; sample 1: no label; sample 2: span s2 with a card number. */
	perftools__profiles__label__init(&b.lab[0]);
	b.lab[0].key = pb_str(&b, "span_id");
	b.lab[0].str = pb_str(&b, "s1");
	perftools__profiles__label__init(&b.lab[1]);
	b.lab[1].key = pb_str(&b, "span_id");
	b.lab[1].str = pb_str(&b, "s2");
	perftools__profiles__label__init(&b.lab[2]);
	b.lab[2].key = pb_str(&b, "card");
	b.lab[2].str = pb_str(&b, "s1");
	b.labp[0] = &b.lab[0];
	b.labp[1] = &b.lab[1];
	b.labp[2] = &b.lab[2];
	b.smp[0].n_label = 1;
	b.smp[0].label = &b.labp[0];
	b.smp[2].n_label = 2;
	b.smp[2].label = &b.labp[1];
	bytes = pb_pack(&b, &len);
	assert_int_equal(pprof_parse_where(&p, &kept, bytes, len, NAME, NULL, &only, &err), 0);
	/* Only sample 0: sample 2's "s1" is a card label, not a span. */
	assert_int_equal(kept, 1);
	assert_int_equal(p->nsamples, 1);
	assert_int_equal(p->values[p->primary], 10);
	profile_free(p);
	only.value = "nobody";
	assert_int_equal(pprof_parse_where(&p, &kept, bytes, len, NAME, NULL, &only, &err), 0);
	assert_int_equal(kept, 0);
	assert_int_equal(p->nsamples, 0);
	profile_free(p);
	/* No filter: all three, as pprof_parse. */
	assert_int_equal(pprof_parse_where(&p, &kept, bytes, len, NAME, NULL, NULL, &err), 0);
	assert_int_equal(kept, 3);
	assert_int_equal(p->nsamples, 3);
	profile_free(p);
	free(bytes);
}

/*
 * libdatadog's profilers (dd-trace-py, -rb, -php, .NET) write "span id"
 * and "local root span id" as numbers with no string: a requested id is
 * matched as the decimal of that number, and only as a whole number.
 */
static void test_a_label_filter_matches_a_numeric_span_id(void **state)
{
	static const char *const keys[] = {"span_id", "local root span id", "span id"};
	static const struct {
		const char *value;
		size_t kept;
	} cases[] = {
		{"12345", 1},                /* sample 0's span */
		{"999", 1},                  /* sample 0's local root */
		{"18446744073709551615", 1}, /* sample 2's, the largest uint64 */
		{"777", 0},                  /* a string label "777" of another key */
		{"012345", 1},               /* decimal, leading zeros and all */
		{"+12345", 0},
		{"12345x", 0},
		{"18446744073709551616", 0}, /* overflows: no number matches it */
		{"", 0},
	};
	pb b;
	profile *p = NULL;
	pr_error err = PR_ERROR_INIT;
	uint8_t *bytes;
	size_t len, kept;

	(void)state;
	pb_init(&b);
	/* Sample 0: span 12345 under root 999; sample 1: card "777"; sample 2: span 2^64-1. */
	for (size_t i = 0; i < 4; i++) {
		perftools__profiles__label__init(&b.lab[i]);
		b.labp[i] = &b.lab[i];
	}
	b.lab[0].key = pb_str(&b, "local root span id");
	b.lab[0].num = 999;
	b.lab[1].key = pb_str(&b, "span id");
	b.lab[1].num = 12345;
	b.lab[2].key = pb_str(&b, "card");
	b.lab[2].str = pb_str(&b, "777");
	b.lab[3].key = pb_str(&b, "span id");
	b.lab[3].num = -1; /* written as a uint64 span id above 2^63 */
	b.smp[0].n_label = 2;
	b.smp[0].label = &b.labp[0];
	b.smp[1].n_label = 1;
	b.smp[1].label = &b.labp[2];
	b.smp[2].n_label = 1;
	b.smp[2].label = &b.labp[3];
	bytes = pb_pack(&b, &len);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pprof_label_filter only = {keys, 3, cases[i].value};
		kept = SIZE_MAX;
		assert_int_equal(pprof_parse_where(&p, &kept, bytes, len, NAME, NULL, &only, &err),
				 0);
		if (kept != cases[i].kept)
			fail_msg("'%s': kept %zu, expected %zu", cases[i].value, kept,
				 cases[i].kept);
		assert_int_equal(p->nsamples, cases[i].kept);
		profile_free(p);
		p = NULL;
	}
	free(bytes);
}

/* ---- malformed input --------------------------------------------------- */

static void test_empty_input_is_rejected(void **state)
{
	(void)state;
	expect_bytes_error((const uint8_t *)"", 0, PR_EDATA, "empty input");
}

static void test_truncated_message_is_rejected_with_offset(void **state)
{
	pb b;
	size_t len;
	uint8_t *data;

	(void)state;
	pb_init(&b);
	data = pb_pack(&b, &len);
	/* Cut inside the first submessage: it claims more than is there. */
	expect_bytes_error(data, 3, PR_EDATA,
			   "truncated input of 3 bytes: Profile.sample_type claims 4 bytes"
			   " but only 1 remain at offset 0");
	/* Cut inside the last field, period, a varint. */
	expect_bytes_error(data, len - 1, PR_EDATA, "truncated input");
	expect_bytes_error(data, len - 1, PR_EDATA, "bad varint");
	expect_bytes_error(data, len - 1, PR_EDATA, "Profile.period at offset");
	free(data);
}

static void test_bad_varint_is_rejected(void **state)
{
	pb b;
	size_t len;
	uint8_t *data, *bad;

	(void)state;
	pb_init(&b);
	data = pb_pack(&b, &len);
	/* time_nanos (field 9, varint) with eleven continuation bytes. */
	bad = malloc(len + 12);
	assert_non_null(bad);
	memcpy(bad, data, len);
	bad[len] = 0x48;
	memset(bad + len + 1, 0xff, 11);
	expect_bytes_error(bad, len + 12, PR_EDATA, "malformed profile.proto data: bad varint");
	expect_bytes_error(bad, len + 12, PR_EDATA, "Profile.time_nanos");
	/* And a varint cut off by the end of the input. */
	expect_bytes_error(bad, len + 3, PR_EDATA, "bad varint");
	free(bad);
	free(data);
}

/* Well-framed at the top, broken inside a sample or a table entry. */
static void test_corrupt_submessage_is_rejected_with_offset(void **state)
{
	static const uint8_t bad_sample[] = {0x12, 0x03, 0x0a, 0x01, 0x80};
	static const uint8_t bad_location[] = {0x22, 0x02, 0x08, 0x80};
	pb b;
	size_t len;
	uint8_t *data, *bad;
	char want[128];

	(void)state;
	pb_init(&b);
	data = pb_pack(&b, &len);
	bad = malloc(len + 8);
	assert_non_null(bad);
	memcpy(bad, data, len);
	memcpy(bad + len, bad_sample, sizeof(bad_sample));
	snprintf(want, sizeof(want),
		 "malformed profile.proto data: bad varint in packed "
		 "Sample.location_id at offset %zu",
		 len + 4);
	expect_bytes_error(bad, len + sizeof(bad_sample), PR_EDATA, want);
	memcpy(bad + len, bad_location, sizeof(bad_location));
	snprintf(want, sizeof(want), "Location.id at offset %zu", len + 3);
	expect_bytes_error(bad, len + sizeof(bad_location), PR_EDATA, want);
	free(bad);
	free(data);
}

static void test_wrong_wire_type_is_rejected(void **state)
{
	pb b;
	size_t len;
	uint8_t *data, *bad;

	(void)state;
	pb_init(&b);
	data = pb_pack(&b, &len);
	/* period (field 12) as a fixed64 instead of a varint. */
	bad = malloc(len + 9);
	assert_non_null(bad);
	memcpy(bad, data, len);
	bad[len] = (12 << 3) | 1;
	memset(bad + len + 1, 0, 8);
	expect_bytes_error(bad, len + 9, PR_EDATA, "wrong wire type 1 for Profile.period");
	free(bad);
	free(data);
}

static void test_text_is_rejected_as_not_a_profile(void **state)
{
	static const char text[] = "main;work;inner 30\nmain 20\n";

	(void)state;
	expect_bytes_error((const uint8_t *)text, strlen(text), PR_EDATA,
			   "malformed profile.proto data: wrong wire type 5 for "
			   "Profile.comment at offset 0");
}

static void test_string_index_out_of_range_is_rejected(void **state)
{
	pb b;

	(void)state;
	pb_init(&b);
	b.fn[1].name = 99;
	expect_error(&b, NULL, PR_EDATA, "string index 99 of function 2 name is out of range");
	pb_init(&b);
	b.vt[1].unit = -1;
	expect_error(&b, NULL, PR_EDATA, "string index -1 of sample_type 1 unit");
}

static void test_string_table_must_start_with_empty_string(void **state)
{
	pb b;

	(void)state;
	pb_init(&b);
	b.strs[0] = b.strs[S_MAIN];
	expect_error(&b, NULL, PR_EDATA, "string_table[0] is not the empty string");
	pb_init(&b);
	b.prof.n_string_table = 0;
	expect_error(&b, NULL, PR_EDATA, "the string table is empty");
}

static void test_dangling_location_id_is_rejected_naming_the_id(void **state)
{
	pb b;

	(void)state;
	pb_init(&b);
	b.locids[1][0] = 77;
	expect_error(&b, NULL, PR_EDATA, "sample 1 refers to location id 77 that does not exist");
}

static void test_dangling_function_id_is_rejected_naming_the_id(void **state)
{
	pb b;

	(void)state;
	pb_init(&b);
	b.line[2 * 2 + 1].function_id = 42;
	expect_error(&b, NULL, PR_EDATA, "location 3 refers to function id 42 that does not exist");
	pb_init(&b);
	b.line[0].function_id = 0;
	expect_error(&b, NULL, PR_EDATA, "location 1 has a line without a function");
}

static void test_dangling_mapping_id_is_rejected(void **state)
{
	pb b;

	(void)state;
	pb_init(&b);
	b.loc[0].mapping_id = 5;
	expect_error(&b, NULL, PR_EDATA, "location 1 refers to mapping id 5 that does not exist");
}

static void test_zero_and_duplicate_ids_are_rejected(void **state)
{
	pb b;

	(void)state;
	pb_init(&b);
	b.fn[2].id = 2;
	expect_error(&b, NULL, PR_EDATA, "duplicate function id 2");
	pb_init(&b);
	b.loc[1].id = 0;
	expect_error(&b, NULL, PR_EDATA, "the location at index 1 has the reserved id 0");
	pb_init(&b);
	b.map[0].id = 0;
	expect_error(&b, NULL, PR_EDATA, "the mapping at index 0 has the reserved id 0");
}

static void test_sparse_ids_resolve(void **state)
{
	pb b;
	profile *p;

	(void)state;
	/* Ids need not be 1..n: addresses are a common choice. */
	pb_init(&b);
	b.fn[0].id = 1000;
	b.fn[1].id = 1ULL << 40;
	b.fn[2].id = 7;
	b.line[0].function_id = 1ULL << 40;
	b.line[2].function_id = 1000;
	b.line[4].function_id = 7;
	b.line[5].function_id = 1ULL << 40;
	b.loc[0].id = 0x401000;
	b.locids[0][0] = 0x401000;
	p = parse_pb_ok(&b);
	assert_string_equal(p->funcs[p->frames[p->stack_off[0] + 1]].name, "work");
	assert_string_equal(p->funcs[p->frames[p->stack_off[2] + 2]].name, "inner");
	profile_free(p);
}

static void test_sample_with_wrong_number_of_values_is_rejected(void **state)
{
	pb b;

	(void)state;
	pb_init(&b);
	b.smp[1].n_value = 1;
	expect_error(&b, NULL, PR_EDATA, "sample 1 has 1 values for 2 sample types");
	pb_init(&b);
	b.prof.n_sample_type = 0;
	expect_error(&b, NULL, PR_EDATA, "3 samples but no sample types");
}

static void test_negative_value_is_rejected(void **state)
{
	pb b;

	(void)state;
	pb_init(&b);
	b.vals[2][1] = -5;
	expect_error(&b, NULL, PR_EDATA,
		     "sample 2 has a negative value -5 for 'cpu': a diff of two profiles, "
		     "not a capture");
	pb_init(&b);
	b.prof.duration_nanos = -1;
	expect_error(&b, NULL, PR_EDATA, "negative duration_nanos");
}

/*
 * A negative in-use value beside allocation columns is a delta heap
 * profile: its allocations are kept, exactly, and the in-use columns (the
 * default type among them) go. A negative value anywhere else is refused.
 */
static void test_negative_inuse_beside_alloc_keeps_the_allocations(void **state)
{
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	pb b;

	(void)state;
	pb_init(&b);
	b.vt[0].type = pb_str(&b, "alloc_space");
	b.vt[0].unit = pb_str(&b, "bytes");
	b.vt[1].type = pb_str(&b, "inuse_space");
	b.vt[1].unit = b.vt[0].unit;
	b.prof.default_sample_type = b.vt[1].type;
	b.vals[2][1] = -30;
	if (parse_pb(&p, &b, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(p->nvalue_types, 1);
	assert_string_equal(p->value_types[0].type, "alloc_space");
	assert_int_equal(p->default_value, -1);
	assert_int_equal(p->nsamples, 3);
	assert_int_equal(p->values[0], 1);
	assert_int_equal(p->values[1], 2);
	assert_int_equal(p->values[2], 3);
	profile_free(p);

	b.vals[2][1] = 30;
	b.vals[1][0] = -2;
	expect_error(&b, NULL, PR_EDATA, "sample 1 has a negative value -2 for 'alloc_space'");
	b.vals[1][0] = 2;
	b.vals[2][1] = -30;
	b.vt[0].type = S_SAMPLES;
	b.vt[0].unit = S_COUNT;
	expect_error(&b, NULL, PR_EDATA, "sample 2 has a negative value -30 for 'inuse_space'");
}

/*
 * A sample type may be named with 64 KiB of anything, a secret included:
 * the message says how long it is, and quotes none of it.
 */
static void test_a_long_sample_type_is_quoted_by_its_start(void **state)
{
	char *name = malloc(5001);
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	pb b;

	(void)state;
	assert_non_null(name);
	memset(name, 'A', 5000);
	memcpy(name, "token=", 6);
	name[5000] = '\0';
	pb_init(&b);
	b.vt[1].type = pb_str(&b, name);
	b.vals[2][1] = -5;
	assert_int_equal(parse_pb(&p, &b, NULL, &err), PR_EDATA);
	if (!strstr(err.msg, "sample 2 has a negative value -5 for '<5000 bytes>'") ||
	    strstr(err.msg, "token") || strlen(err.msg) > 120)
		fail_msg("quoted: %s", err.msg);
	free(name);
}

/*
 * A sample type's and the period type's names are the profile's text, as
 * far-reaching as a function's (the capture's row, profile show, export):
 * a card number or an e-mail address in them is cut as in names.
 */
static void test_payment_data_in_value_type_names_is_cut(void **state)
{
	pb b;
	profile *p;

	(void)state;
	pb_init(&b);
	b.vt[1].type = pb_str(&b, "card4111111111111111");
	b.vt[1].unit = pb_str(&b, "pan 5500 0000 0000 0004");
	b.period_type.type = pb_str(&b, "jane.doe@example.com");
	b.period_type.unit = pb_str(&b, "4111-1111-1111-1111");
	p = parse_pb_ok(&b);
	assert_string_equal(p->value_types[1].type, "card#");
	assert_string_equal(p->value_types[1].unit, "pan #");
	assert_string_equal(p->period_type.type, "#");
	assert_string_equal(p->period_type.unit, "#");
	assert_string_equal(p->value_types[0].type, "samples");
	profile_free(p);
}

static void test_too_deep_stack_is_rejected_at_the_limit(void **state)
{
	pb b;
	profile_limits lim;
	profile *p = NULL;
	pr_error err = PR_ERROR_INIT;

	(void)state;
	pb_init(&b);
	profile_limits_default(&lim);
	/* The deepest stack expands to three frames: exactly at the limit. */
	lim.max_depth = 3;
	assert_int_equal(parse_pb(&p, &b, &lim, &err), 0);
	profile_free(p);
	lim.max_depth = 2;
	expect_error(&b, &lim, PR_ELIMIT, "sample 2 has a stack deeper than the limit of 2 frames");
}

static void test_too_many_samples_is_rejected(void **state)
{
	pb b;
	profile_limits lim;
	profile *p = NULL;
	pr_error err = PR_ERROR_INIT;

	(void)state;
	pb_init(&b);
	profile_limits_default(&lim);
	lim.max_samples = 3;
	assert_int_equal(parse_pb(&p, &b, &lim, &err), 0);
	profile_free(p);
	lim.max_samples = 2;
	expect_error(&b, &lim, PR_ELIMIT, "more than 2 samples");
}

static void test_over_long_name_is_rejected(void **state)
{
	pb b;
	profile_limits lim;
	char *long_name = malloc(5001);

	(void)state;
	assert_non_null(long_name);
	memset(long_name, 'x', 5000);
	long_name[5000] = '\0';
	pb_init(&b);
	b.fn[0].name = pb_str(&b, long_name);
	profile_limits_default(&lim);
	lim.max_string_len = 4096;
	expect_error(&b, &lim, PR_ELIMIT, "exceeds the limit of 4096 bytes");
	free(long_name);
}

/* Many samples sharing one location with many inlined lines. */
static void test_stack_expansion_bomb_is_rejected(void **state)
{
	enum { LINES = 2000, SAMPLES = 20000 };
	pb_profile prof;
	Perftools__Profiles__ValueType vt, *vtp = &vt;
	Perftools__Profiles__Function fn, *fnp = &fn;
	Perftools__Profiles__Location loc, *locp = &loc;
	Perftools__Profiles__Line line, **linep = malloc(LINES * sizeof(*linep));
	Perftools__Profiles__Sample smp, **smpp = malloc(SAMPLES * sizeof(*smpp));
	ProtobufCBinaryData strs[3] = {
		{0, (uint8_t *)""}, {1, (uint8_t *)"x"}, {1, (uint8_t *)"f"}};
	uint64_t locid = 1;
	int64_t val = 1;
	uint8_t *data;
	size_t len;

	(void)state;
	assert_non_null(linep);
	assert_non_null(smpp);
	perftools__profiles__profile__init(&prof);
	perftools__profiles__value_type__init(&vt);
	vt.type = 1;
	vt.unit = 1;
	perftools__profiles__function__init(&fn);
	fn.id = 1;
	fn.name = 2;
	perftools__profiles__line__init(&line);
	line.function_id = 1;
	for (size_t i = 0; i < LINES; i++)
		linep[i] = &line;
	perftools__profiles__location__init(&loc);
	loc.id = 1;
	loc.n_line = LINES;
	loc.line = linep;
	perftools__profiles__sample__init(&smp);
	smp.n_location_id = 1;
	smp.location_id = &locid;
	smp.n_value = 1;
	smp.value = &val;
	for (size_t i = 0; i < SAMPLES; i++)
		smpp[i] = &smp;
	prof.n_sample_type = 1;
	prof.sample_type = &vtp;
	prof.n_function = 1;
	prof.function = &fnp;
	prof.n_location = 1;
	prof.location = &locp;
	prof.n_sample = SAMPLES;
	prof.sample = smpp;
	prof.n_string_table = 3;
	prof.string_table = strs;
	len = perftools__profiles__profile__get_packed_size(&prof);
	data = malloc(len);
	assert_non_null(data);
	perftools__profiles__profile__pack(&prof, data);
	/* ~150 KB of input would otherwise become 40 million frames. */
	expect_bytes_error(data, len, PR_ELIMIT, "frames per input byte");
	free(data);
	free(linep);
	free(smpp);
}

/*
 * Any number of Functions may name one long string, and the model holds it
 * once, so the memory budget never sees the repeats; but each was read
 * whole again, and a million of them (a 3 MB gzipped file) took ten
 * minutes. Here 1,500 Functions name one 60,000-byte string, 90 MB of names
 * in 80 KB of input, past the 64 MiB any profile may name freely.
 */
static void test_functions_naming_one_long_string_are_refused(void **state)
{
	enum { FUNCS = 1500, NAME_LEN = 60000 };
	pb_profile prof;
	Perftools__Profiles__ValueType vt, *vtp = &vt;
	Perftools__Profiles__Function *fn = calloc(FUNCS, sizeof(*fn));
	Perftools__Profiles__Function **fnp = calloc(FUNCS, sizeof(*fnp));
	Perftools__Profiles__Line *line = calloc(FUNCS, sizeof(*line));
	Perftools__Profiles__Line **linep = calloc(FUNCS, sizeof(*linep));
	Perftools__Profiles__Location loc, *locp = &loc;
	Perftools__Profiles__Sample smp, *smpp = &smp;
	char *big = malloc(NAME_LEN);
	ProtobufCBinaryData strs[3] = {{0, (uint8_t *)""}, {1, (uint8_t *)"x"}, {0, NULL}};
	uint64_t locid = 1;
	int64_t val = 1;
	uint8_t *data;
	size_t len;

	(void)state;
	assert_non_null(fn);
	assert_non_null(fnp);
	assert_non_null(line);
	assert_non_null(linep);
	assert_non_null(big);
	for (size_t i = 0; i < NAME_LEN; i++)
		big[i] = (char)('a' + i * 7 % 26);
	strs[2].len = NAME_LEN;
	strs[2].data = (uint8_t *)big;
	perftools__profiles__profile__init(&prof);
	perftools__profiles__value_type__init(&vt);
	vt.type = 1;
	vt.unit = 1;
	for (size_t i = 0; i < FUNCS; i++) {
		perftools__profiles__function__init(&fn[i]);
		fn[i].id = i + 1;
		fn[i].name = 2;
		fnp[i] = &fn[i];
		perftools__profiles__line__init(&line[i]);
		line[i].function_id = i + 1;
		linep[i] = &line[i];
	}
	perftools__profiles__location__init(&loc);
	loc.id = 1;
	loc.n_line = FUNCS;
	loc.line = linep;
	perftools__profiles__sample__init(&smp);
	smp.n_location_id = 1;
	smp.location_id = &locid;
	smp.n_value = 1;
	smp.value = &val;
	prof.n_sample_type = 1;
	prof.sample_type = &vtp;
	prof.n_function = FUNCS;
	prof.function = fnp;
	prof.n_location = 1;
	prof.location = &locp;
	prof.n_sample = 1;
	prof.sample = &smpp;
	prof.n_string_table = 3;
	prof.string_table = strs;
	len = perftools__profiles__profile__get_packed_size(&prof);
	data = malloc(len);
	assert_non_null(data);
	perftools__profiles__profile__pack(&prof, data);
	expect_bytes_error(data, len, PR_ELIMIT, "bytes per input byte");
	free(data);
	free(big);
	free(linep);
	free(line);
	free(fnp);
	free(fn);
}

/*
 * 8 MB of empty Location messages: protobuf-c would allocate about 40 times
 * that for their decoded form, past the 256 MiB memory budget of the
 * default limits; the decode stops there rather than after.
 */
static void test_table_decode_stops_at_the_memory_budget(void **state)
{
	enum { LOCS = 4 << 20 };
	static const uint8_t head[] = {
		0x32, 0x00,             /* string_table: "" */
		0x0a, 0x02, 0x08, 0x00, /* sample_type {type: 0} */
	};
	size_t len = sizeof(head) + 2 * (size_t)LOCS;
	uint8_t *data = malloc(len);

	(void)state;
	assert_non_null(data);
	memcpy(data, head, sizeof(head));
	for (size_t i = 0; i < LOCS; i++) {
		data[sizeof(head) + 2 * i] = 0x22; /* location, length 0 */
		data[sizeof(head) + 2 * i + 1] = 0x00;
	}
	expect_bytes_error(data, len, PR_ELIMIT, "the profile needs more than 256 MiB of memory");
	free(data);
}

static void test_sniff_accepts_profiles_and_rejects_text_and_json(void **state)
{
	static const char *const not_pprof[] = {
		"{\"nodes\":[],\"samples\":[]}",
		"[1,2,3]",
		"main;work;inner 30\nmain 20\n",
		"perf 1234 [000] 12.345: cycles:\n\t4005d0 main (/bin/x)\n",
		"\n\nmain;work 1\n",
		"\x1f\x8b\x08\x00\x00\x00\x00\x00",
		"# comment\n",
		"hello world",
	};
	pb b;
	size_t len;
	uint8_t *data;

	(void)state;
	pb_init(&b);
	data = pb_pack(&b, &len);
	assert_true(pprof_sniff(data, len));
	/* Truncated after a whole field: still pprof, for the parser to reject
	 * with the reason; truncated inside the first field: not sniffed. */
	assert_true(pprof_sniff(data, len / 2));
	assert_false(pprof_sniff(data, 3));
	free(data);
	assert_false(pprof_sniff((const uint8_t *)"", 0));
	assert_false(pprof_sniff((const uint8_t *)"\nab", 3));
	for (size_t i = 0; i < sizeof(not_pprof) / sizeof(not_pprof[0]); i++)
		if (pprof_sniff((const uint8_t *)not_pprof[i], strlen(not_pprof[i])))
			fail_msg("sniffed as pprof: %s", not_pprof[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_go_cpu_profile_self_shares_match_pprof_top),
		cmocka_unit_test(test_go_heap_profile_inuse_space_matches_pprof_top),
		cmocka_unit_test(test_go_cpu_profile_puts_inlined_frame_below_its_caller),
		cmocka_unit_test(test_go_cpu_profile_keeps_capture_metadata),
		cmocka_unit_test(test_node_wall_profile_counts_its_samples),
		cmocka_unit_test(test_datadog_node_cpu_profile_counts_its_samples),
		cmocka_unit_test(test_node_heap_profiles_count_their_sampled_objects),
		cmocka_unit_test(test_go_goroutine_profile_counts_its_goroutines),
		cmocka_unit_test(test_go_delta_heap_profile_is_read_as_its_allocations),
		cmocka_unit_test(test_go_delta_heap_profile_without_negatives_is_its_allocations),
		cmocka_unit_test(test_go_heap_profile_without_duration_keeps_inuse),
		cmocka_unit_test(test_go_heap_profile_counts_its_sampled_objects),
		cmocka_unit_test(test_go_delta_goroutine_profile_is_refused_as_a_difference),
		cmocka_unit_test(test_hand_built_profile_has_exact_self_and_total),
		cmocka_unit_test(test_inlined_lines_expand_with_innermost_as_leaf),
		cmocka_unit_test(test_location_without_lines_is_named_by_its_object),
		cmocka_unit_test(test_default_sample_type_is_recorded),
		cmocka_unit_test(test_an_empty_default_sample_type_matches_the_empty_type),
		cmocka_unit_test(test_empty_profile_parses_with_zero_total),
		cmocka_unit_test(test_invalid_utf8_name_is_repaired_not_rejected),
		cmocka_unit_test(test_labels_are_checked_but_never_kept),
		cmocka_unit_test(test_a_label_filter_keeps_only_the_matching_samples),
		cmocka_unit_test(test_a_label_filter_matches_a_numeric_span_id),
		cmocka_unit_test(test_empty_input_is_rejected),
		cmocka_unit_test(test_truncated_message_is_rejected_with_offset),
		cmocka_unit_test(test_bad_varint_is_rejected),
		cmocka_unit_test(test_corrupt_submessage_is_rejected_with_offset),
		cmocka_unit_test(test_wrong_wire_type_is_rejected),
		cmocka_unit_test(test_text_is_rejected_as_not_a_profile),
		cmocka_unit_test(test_string_index_out_of_range_is_rejected),
		cmocka_unit_test(test_string_table_must_start_with_empty_string),
		cmocka_unit_test(test_dangling_location_id_is_rejected_naming_the_id),
		cmocka_unit_test(test_dangling_function_id_is_rejected_naming_the_id),
		cmocka_unit_test(test_dangling_mapping_id_is_rejected),
		cmocka_unit_test(test_zero_and_duplicate_ids_are_rejected),
		cmocka_unit_test(test_sparse_ids_resolve),
		cmocka_unit_test(test_sample_with_wrong_number_of_values_is_rejected),
		cmocka_unit_test(test_negative_value_is_rejected),
		cmocka_unit_test(test_negative_inuse_beside_alloc_keeps_the_allocations),
		cmocka_unit_test(test_a_long_sample_type_is_quoted_by_its_start),
		cmocka_unit_test(test_payment_data_in_value_type_names_is_cut),
		cmocka_unit_test(test_too_deep_stack_is_rejected_at_the_limit),
		cmocka_unit_test(test_too_many_samples_is_rejected),
		cmocka_unit_test(test_over_long_name_is_rejected),
		cmocka_unit_test(test_stack_expansion_bomb_is_rejected),
		cmocka_unit_test(test_functions_naming_one_long_string_are_refused),
		cmocka_unit_test(test_table_decode_stops_at_the_memory_budget),
		cmocka_unit_test(test_sniff_accepts_profiles_and_rejects_text_and_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
