/*
 * test_profile.c: the profile model: interning, limits, summaries.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "pipeline/profile.h"

static profile *new_profile(const profile_limits *lim)
{
	static const char *types[] = {"samples", "cpu"};
	static const char *units[] = {"count", "nanoseconds"};
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;

	assert_int_equal(profile_new(&p, PROFILE_FMT_FOLDED, "t.folded", lim, &err), 0);
	assert_int_equal(profile_set_value_types(p, 2, types, units, &err), 0);
	return p;
}

static uint32_t fn(profile *p, const char *name)
{
	pr_error err = PR_ERROR_INIT;
	uint32_t id;

	assert_int_equal(profile_intern(p, &id, name, strlen(name), "f.c", 3, &err), 0);
	return id;
}

static void add(profile *p, const uint32_t *st, uint32_t d, int64_t n)
{
	pr_error err = PR_ERROR_INIT;
	int64_t v[2] = {n, n * 10};

	assert_int_equal(profile_add_sample(p, st, d, v, &err), 0);
}

static const profile_summary_row *row(const profile *p, const profile_summary *s,
				      const char *name)
{
	for (size_t i = 0; i < s->nrows; i++)
		if (strcmp(p->funcs[s->rows[i].func].name, name) == 0)
			return &s->rows[i];
	return NULL;
}

static void test_interning_returns_one_id_per_name_and_file(void **state)
{
	pr_error err = PR_ERROR_INIT;
	profile *p = new_profile(NULL);
	uint32_t a, b, c;

	(void)state;
	a = fn(p, "main");
	b = fn(p, "main");
	assert_int_equal(profile_intern(p, &c, "main", 4, "other.c", 7, &err), 0);
	assert_int_equal(a, b);
	assert_int_not_equal(a, c);
	assert_string_equal(p->funcs[c].file, "other.c");
	assert_int_equal(p->nfuncs, 2);
	profile_free(p);
}

/* The name function `name` in `file` is stored as, in a profile of format f. */
static const char *interned(profile_format f, const char *name, const char *file)
{
	static char out[64];
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	uint32_t id;

	assert_int_equal(profile_new(&p, f, "t", NULL, &err), 0);
	assert_int_equal(
		profile_intern(p, &id, name, strlen(name), file, file ? strlen(file) : 0, &err), 0);
	snprintf(out, sizeof(out), "%s", p->funcs[id].name);
	profile_free(p);
	return out;
}

/*
 * ".cold" is GCC's cold part of a C function, and a Java method or a Go
 * function of its own: JFR's "Work.cold" (a class in no package) became
 * "Work", Go's "main.cold" became "main".
 */
static void test_a_cold_function_keeps_its_name_where_no_c_compiler_made_it(void **state)
{
	(void)state;
	assert_string_equal(interned(PROFILE_FMT_FOLDED, "parse_header.cold", NULL),
			    "parse_header");
	assert_string_equal(interned(PROFILE_FMT_PPROF, "parse_header.cold", "parse.c"),
			    "parse_header");
	assert_string_equal(interned(PROFILE_FMT_JFR, "Work.cold", NULL), "Work.cold");
	assert_string_equal(interned(PROFILE_FMT_V8, "cold", "app.js"), "cold");
	assert_string_equal(interned(PROFILE_FMT_PPROF, "main.cold", "/app/main.go"), "main.cold");
	assert_string_equal(interned(PROFILE_FMT_PPROF, "FileKt.cold", "File.kt"), "FileKt.cold");
	/* Every other rule holds for them too. */
	assert_string_equal(interned(PROFILE_FMT_JFR, "Work.charge_4111111111111111", NULL),
			    "Work.charge_#");
}

/*
 * What profile_intern makes with a memo of names in use, the second time
 * as the first: what it makes without one. The cases share bytes in ways
 * a memo could mix up: a name and a file that run together alike ("ab"
 * in "c", "a" in "bc"), the same name managed or not (".cold"), payment
 * data to cut, invalid UTF-8 to replace and count.
 */
static void test_a_memo_of_names_makes_what_interning_makes(void **state)
{
	static const struct {
		profile_format f;
		const char *name, *file;
		size_t name_len;
	} cases[] = {
		{PROFILE_FMT_FOLDED, "ab", "c", 2},
		{PROFILE_FMT_FOLDED, "a", "bc", 1},
		{PROFILE_FMT_FOLDED, "Work.cold", NULL, 9},
		{PROFILE_FMT_JFR, "Work.cold", NULL, 9},
		{PROFILE_FMT_PPROF, "main.cold", "/app/main.go", 9},
		{PROFILE_FMT_PPROF, "main.cold", "/app/main.c", 9},
		{PROFILE_FMT_FOLDED, "Pay.charge_4111111111111111", NULL, 27},
		{PROFILE_FMT_FOLDED, "send", "/srv/jane.doe@example.com/m.py", 4},
		{PROFILE_FMT_FOLDED, "Checkout$$Lambda$41/0x00007f5df8000a08.apply", NULL, 44},
		{PROFILE_FMT_FOLDED, "bad\xff\xfename", "f.c", 9},
		{PROFILE_FMT_FOLDED, "ok", "bad\xff.c", 2},
		{PROFILE_FMT_FOLDED, "a\0b", NULL, 3},
		{PROFILE_FMT_FOLDED, "", NULL, 0},
	};
	size_t n = sizeof(cases) / sizeof(cases[0]);
	profile *want[sizeof(cases) / sizeof(cases[0])], *got;
	profile_names *m = profile_names_new(), *was;
	pr_error err = PR_ERROR_INIT;
	uint32_t id;

	(void)state;
	assert_non_null(m);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(profile_new(&want[i], cases[i].f, "t", NULL, &err), 0);
		assert_int_equal(profile_intern(want[i], &id, cases[i].name, cases[i].name_len,
						cases[i].file,
						cases[i].file ? strlen(cases[i].file) : 0, &err),
				 0);
	}
	was = profile_names_use(m);
	assert_null(was);
	for (int round = 0; round < 2; round++)
		for (size_t i = 0; i < n; i++) {
			assert_int_equal(profile_new(&got, cases[i].f, "t", NULL, &err), 0);
			assert_int_equal(profile_intern(got, &id, cases[i].name, cases[i].name_len,
							cases[i].file,
							cases[i].file ? strlen(cases[i].file) : 0,
							&err),
					 0);
			assert_int_equal(got->nfuncs, 1);
			assert_string_equal(got->funcs[id].name, want[i]->funcs[0].name);
			assert_string_equal(got->funcs[id].file, want[i]->funcs[0].file);
			assert_int_equal(got->utf8_replaced, want[i]->utf8_replaced);
			assert_int_equal(got->mem_used, want[i]->mem_used);
			profile_free(got);
		}
	assert_ptr_equal(profile_names_use(was), m);
	profile_names_free(m);
	for (size_t i = 0; i < n; i++)
		profile_free(want[i]);
}

static void test_recursion_counts_once_toward_total(void **state)
{
	profile *p = new_profile(NULL);
	profile_summary s;
	pr_error err = PR_ERROR_INIT;
	uint32_t m, f, g;

	(void)state;
	m = fn(p, "main");
	f = fn(p, "fib");
	g = fn(p, "leaf");
	add(p, (uint32_t[]){m, f, f, f}, 4, 5);
	add(p, (uint32_t[]){m, f, g}, 3, 3);
	add(p, (uint32_t[]){m}, 1, 2);
	assert_int_equal(profile_summarize(&s, p, 0, &err), 0);
	assert_int_equal(s.total, 10);
	assert_int_equal(s.sample_count, 10); /* the "samples" column */
	assert_int_equal(row(p, &s, "fib")->self, 5);
	assert_int_equal(row(p, &s, "fib")->total, 8);
	assert_int_equal(row(p, &s, "main")->total, 10);
	assert_int_equal(row(p, &s, "main")->self, 2);
	assert_int_equal(row(p, &s, "leaf")->self, 3);
	/* Sorted by self, descending. */
	assert_string_equal(p->funcs[s.rows[0].func].name, "fib");
	profile_summary_release(&s);
	assert_int_equal(profile_summarize(&s, p, 1, &err), 0);
	assert_int_equal(s.total, 100);
	assert_int_equal(row(p, &s, "fib")->self, 50);
	profile_summary_release(&s);
	profile_free(p);
}

static void test_leaf_first_stacks_are_stored_root_first(void **state)
{
	profile *p = new_profile(NULL);
	pr_error err = PR_ERROR_INIT;
	uint32_t m = fn(p, "main"), l = fn(p, "leaf");
	int64_t v[2] = {1, 1};

	(void)state;
	assert_int_equal(profile_add_sample_leaf_first(p, (uint32_t[]){l, m}, 2, v, &err), 0);
	assert_int_equal(p->frames[p->stack_off[0]], m);
	assert_int_equal(p->frames[p->stack_off[0] + 1], l);
	profile_free(p);
}

static void test_invalid_utf8_is_replaced_and_counted(void **state)
{
	profile *p = new_profile(NULL);
	uint32_t id;

	(void)state;
	id = fn(p, "bad\xff\xfename");
	assert_string_equal(p->funcs[id].name, "bad\xef\xbf\xbd\xef\xbf\xbdname");
	assert_int_equal(p->utf8_replaced, 1);
	/* A NUL inside a name is replaced too: it cannot be stored. */
	{
		pr_error err = PR_ERROR_INIT;
		assert_int_equal(profile_intern(p, &id, "a\0b", 3, NULL, 0, &err), 0);
		assert_string_equal(p->funcs[id].name, "a\xef\xbf\xbd" "b");
	}
	profile_free(p);
}

static void test_empty_name_becomes_unknown(void **state)
{
	profile *p = new_profile(NULL);
	pr_error err = PR_ERROR_INIT;
	uint32_t id;

	(void)state;
	assert_int_equal(profile_intern(p, &id, "", 0, NULL, 0, &err), 0);
	assert_string_equal(p->funcs[id].name, "[unknown]");
	profile_free(p);
}

static void test_limits_are_enforced_with_a_named_message(void **state)
{
	profile_limits lim;
	profile *p;
	pr_error err = PR_ERROR_INIT;
	uint32_t id, st[4];
	int64_t v[2] = {1, 1};
	char longname[40];

	(void)state;
	profile_limits_default(&lim);
	lim.max_depth = 3;
	lim.max_samples = 2;
	lim.max_string_len = 32;
	p = new_profile(&lim);
	id = fn(p, "x");
	for (int i = 0; i < 4; i++)
		st[i] = id;
	assert_int_equal(profile_add_sample(p, st, 4, v, &err), PR_ELIMIT);
	assert_non_null(strstr(err.msg, "'t.folded'"));
	assert_non_null(strstr(err.msg, "depth limit"));
	pr_error_clear(&err);
	assert_int_equal(profile_add_sample(p, st, 3, v, &err), 0);
	assert_int_equal(profile_add_sample(p, st, 3, v, &err), 0);
	assert_int_equal(profile_add_sample(p, st, 3, v, &err), PR_ELIMIT);
	assert_non_null(strstr(err.msg, "sample limit"));
	pr_error_clear(&err);
	memset(longname, 'a', sizeof(longname));
	assert_int_equal(profile_intern(p, &id, longname, sizeof(longname), NULL, 0, &err),
			 PR_ELIMIT);
	assert_non_null(strstr(err.msg, "'t.folded'"));
	profile_free(p);
}

static void test_distinct_functions_beyond_the_limit_are_refused(void **state)
{
	profile_limits lim;
	profile *p;
	pr_error err = PR_ERROR_INIT;
	uint32_t id;

	(void)state;
	profile_limits_default(&lim);
	lim.max_functions = 2;
	p = new_profile(&lim);
	assert_int_equal(profile_intern(p, &id, "a", 1, NULL, 0, &err), 0);
	assert_int_equal(profile_intern(p, &id, "b", 1, "b.go", 4, &err), 0);
	/* Names already held cost nothing; a third, or a second file, is refused. */
	assert_int_equal(profile_intern(p, &id, "a", 1, NULL, 0, &err), 0);
	assert_int_equal(id, 0);
	assert_int_equal(profile_intern(p, &id, "c", 1, NULL, 0, &err), PR_ELIMIT);
	assert_non_null(strstr(err.msg, "'t.folded'"));
	assert_non_null(strstr(err.msg, "more than 2 distinct functions"));
	pr_error_clear(&err);
	assert_int_equal(profile_intern(p, &id, "a", 1, "a.go", 4, &err), PR_ELIMIT);
	pr_error_clear(&err);
	assert_int_equal(p->nfuncs, 2);
	profile_free(p);
}

static void test_negative_values_and_unknown_ids_are_rejected(void **state)
{
	profile *p = new_profile(NULL);
	pr_error err = PR_ERROR_INIT;
	uint32_t id = fn(p, "x"), bad = 99;
	int64_t neg[2] = {-1, 1}, ok[2] = {1, 1};

	(void)state;
	assert_int_equal(profile_add_sample(p, &id, 1, neg, &err), PR_EDATA);
	assert_non_null(strstr(err.msg, "negative"));
	pr_error_clear(&err);
	assert_int_equal(profile_add_sample(p, &bad, 1, ok, &err), PR_EDATA);
	assert_non_null(strstr(err.msg, "unknown function"));
	profile_free(p);
}

static void test_overflowing_totals_are_rejected(void **state)
{
	profile *p = new_profile(NULL);
	profile_summary s;
	pr_error err = PR_ERROR_INIT;
	uint32_t id = fn(p, "x");
	int64_t big[2] = {INT64_MAX, 1};

	(void)state;
	assert_int_equal(profile_add_sample(p, &id, 1, big, &err), 0);
	assert_int_equal(profile_add_sample(p, &id, 1, big, &err), 0);
	assert_int_equal(profile_summarize(&s, p, 0, &err), PR_EDATA);
	assert_non_null(strstr(err.msg, "overflow"));
	assert_null(s.rows);
	profile_free(p);
}

static void test_empty_profile_summarises_to_zero(void **state)
{
	profile *p = new_profile(NULL);
	profile_summary s;
	pr_error err = PR_ERROR_INIT;

	(void)state;
	assert_int_equal(profile_summarize(&s, p, 0, &err), 0);
	assert_int_equal(s.total, 0);
	assert_int_equal(s.nrows, 0);
	profile_summary_release(&s);
	profile_free(p);
}

/*
 * A heap profile in pprof's columns with no sampling rate (no space/bytes
 * period: a profiler that records every allocation) counts its objects:
 * 300 allocations in 2 records, of which the second freed its 100
 * objects (counted for the allocations, not for what is in use).
 */
static void test_heap_columns_without_a_rate_count_their_objects(void **state)
{
	static const char *types[] = {"alloc_objects", "alloc_space", "inuse_objects",
				      "inuse_space"};
	static const char *units[] = {"count", "bytes", "count", "bytes"};
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	profile_summary s;
	uint32_t m;

	(void)state;
	assert_int_equal(profile_new(&p, PROFILE_FMT_PPROF, "t.pb", NULL, &err), 0);
	assert_int_equal(profile_set_value_types(p, 4, types, units, &err), 0);
	m = fn(p, "main");
	assert_int_equal(profile_add_sample(p, &m, 1, (int64_t[]){200, 6400, 200, 6400}, &err), 0);
	assert_int_equal(profile_add_sample(p, &m, 1, (int64_t[]){100, 800, 0, 0}, &err), 0);
	assert_int_equal(profile_summarize(&s, p, 3, &err), 0);
	assert_int_equal(s.sample_count, 200);
	profile_summary_release(&s);
	assert_int_equal(profile_summarize(&s, p, 1, &err), 0);
	assert_int_equal(s.sample_count, 300);
	profile_summary_release(&s);
	/* At Go's rate of one sample per 512 bytes: 200 * (1 - e^(-32/512)) = 12.1 */
	p->period = 512;
	p->period_type.type = strdup("space");
	p->period_type.unit = strdup("bytes");
	assert_int_equal(profile_summarize(&s, p, 3, &err), 0);
	assert_int_equal(s.sample_count, 12);
	profile_summary_release(&s);
	profile_free(p);
}

static void test_primary_value_follows_the_documented_rule(void **state)
{
	static const char *types[] = {"alloc_objects", "alloc_space", "inuse_objects",
				      "inuse_space"};
	static const char *units[] = {"count", "bytes", "count", "bytes"};
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;

	(void)state;
	assert_int_equal(profile_new(&p, PROFILE_FMT_PPROF, "heap.pb", NULL, &err), 0);
	assert_int_equal(profile_set_value_types(p, 4, types, units, &err), 0);
	assert_string_equal(profile_guess_type(p), "heap");
	assert_string_equal(profile_pick_primary(p, "heap"), "heap");
	assert_int_equal(p->primary, 3);
	assert_string_equal(profile_pick_primary(p, "alloc"), "alloc");
	assert_int_equal(p->primary, 1);
	/* No rule matches: pprof's default, else the last column. */
	p->default_value = 0;
	profile_pick_primary(p, "cpu");
	assert_int_equal(p->primary, 0);
	profile_free(p);
}

static void test_the_type_guessed_is_what_the_values_measure(void **state)
{
	static const char *heap_t[] = {"alloc_objects", "alloc_space", "inuse_objects",
				       "inuse_space"};
	static const char *heap_u[] = {"count", "bytes", "count", "bytes"};
	static const char *lock_t[] = {"contentions", "delay"};
	static const char *lock_u[] = {"count", "nanoseconds"};
	static const char *samp_t[] = {"samples"};
	static const char *samp_u[] = {"count"};
	static const char *jfr_t[] = {"samples", "alloc_space"};
	static const char *jfr_u[] = {"count", "bytes"};
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;

	(void)state;
	/* Go's allocs: the heap profile with alloc_space as its default. */
	assert_int_equal(profile_new(&p, PROFILE_FMT_PPROF, "allocs.pb", NULL, &err), 0);
	assert_int_equal(profile_set_value_types(p, 4, heap_t, heap_u, &err), 0);
	p->default_value = 1;
	assert_string_equal(profile_guess_type(p), "alloc");
	assert_string_equal(profile_pick_primary(p, NULL), "alloc");
	assert_int_equal(p->primary, 1);
	assert_true(profile_has_values_of(p, "heap"));
	assert_false(profile_has_values_of(p, "cpu"));
	profile_free(p);
	/* Go's block and mutex profiles measure waiting, not CPU. */
	assert_int_equal(profile_new(&p, PROFILE_FMT_PPROF, "block.pb", NULL, &err), 0);
	assert_int_equal(profile_set_value_types(p, 2, lock_t, lock_u, &err), 0);
	assert_null(profile_guess_type(p));
	assert_null(profile_pick_primary(p, NULL));
	assert_false(profile_has_values_of(p, "cpu"));
	profile_free(p);
	assert_int_equal(profile_new(&p, PROFILE_FMT_FOLDED, "x.folded", NULL, &err), 0);
	assert_int_equal(profile_set_value_types(p, 1, samp_t, samp_u, &err), 0);
	assert_string_equal(profile_guess_type(p), "cpu");
	profile_free(p);
	/* A JFR recording of CPU and allocation samples: samples is the default. */
	assert_int_equal(profile_new(&p, PROFILE_FMT_JFR, "x.jfr", NULL, &err), 0);
	assert_int_equal(profile_set_value_types(p, 2, jfr_t, jfr_u, &err), 0);
	assert_string_equal(profile_guess_type(p), "alloc");
	p->default_value = 0;
	assert_string_equal(profile_guess_type(p), "cpu");
	assert_string_equal(profile_pick_primary(p, NULL), "cpu");
	assert_int_equal(p->primary, 0);
	assert_string_equal(profile_pick_primary(p, "alloc"), "alloc");
	assert_int_equal(p->primary, 1);
	profile_free(p);
}

/*
 * The budget is half the decompressed size limit, at least 64 MiB; the
 * model charges what it stores, so a full budget refuses a new sample or
 * a new name, and memory handed back makes room again.
 */
static void test_memory_budget_refuses_what_does_not_fit(void **state)
{
	profile_limits lim;
	pr_error err = PR_ERROR_INIT;
	profile *p;
	uint32_t a, b, st[1];
	int64_t v[2] = {1, 1};

	(void)state;
	profile_limits_default(&lim);
	assert_int_equal(profile_mem_budget(&lim), 256ULL << 20);
	lim.max_decompressed_bytes = 1 << 20;
	assert_int_equal(profile_mem_budget(&lim), PROFILE_MEM_FLOOR);
	lim.max_decompressed_bytes = 1ULL << 30;
	p = new_profile(&lim);
	assert_int_equal(p->mem_max, 512ULL << 20);
	a = fn(p, "main");
	st[0] = a;
	assert_int_equal(profile_mem_take(p, p->mem_max - p->mem_used, &err), 0);
	assert_int_equal(profile_add_sample(p, st, 1, v, &err), PR_ELIMIT);
	assert_non_null(strstr(err.msg, "'t.folded': the profile needs more than 512 MiB"));
	assert_int_equal(p->nsamples, 0);
	pr_error_clear(&err);
	/* A name already held costs nothing; a new one does not fit. */
	assert_int_equal(profile_intern(p, &b, "main", 4, "f.c", 3, &err), 0);
	assert_int_equal(b, a);
	assert_int_equal(profile_intern(p, &b, "other", 5, "f.c", 3, &err), PR_ELIMIT);
	assert_int_equal(p->nfuncs, 1);
	pr_error_clear(&err);
	profile_mem_give(p, 4096);
	assert_int_equal(profile_add_sample(p, st, 1, v, &err), 0);
	assert_int_equal(p->nsamples, 1);
	profile_free(p);
}

/*
 * profile_reserve sizes the arrays once, keeps what is stored, and never
 * reserves more than the sample limit and the memory budget allow, however
 * large the count a parser asks for.
 */
static void test_reserve_sizes_arrays_within_the_limits(void **state)
{
	profile_limits lim;
	profile *p;
	uint32_t st[3];

	(void)state;
	p = new_profile(NULL);
	st[0] = fn(p, "main"), st[1] = fn(p, "a"), st[2] = fn(p, "b");
	add(p, st, 3, 5);
	/* Past the first growth steps (1024 samples, 4096 frames). */
	profile_reserve(p, 3000, 6000);
	assert_int_equal(p->samples_cap, 3001);
	assert_int_equal(p->frames_cap, 6003);
	/* Room already there: nothing changes. */
	profile_reserve(p, 10, 10);
	assert_int_equal(p->samples_cap, 3001);
	assert_int_equal(p->frames_cap, 6003);
	for (int i = 0; i < 3000; i++)
		add(p, st, (uint32_t)(i % 2) + 1, i);
	/* 4,503 frames in 3,001 samples: no array grew again. */
	assert_int_equal(p->samples_cap, 3001);
	assert_int_equal(p->frames_cap, 6003);
	assert_int_equal(p->nsamples, 3001);
	assert_int_equal(p->nframes, 4503);
	assert_int_equal(p->stack_len[0], 3);
	assert_int_equal(p->values[0], 5);
	assert_int_equal(p->values[1], 50);
	assert_int_equal(p->frames[p->stack_off[3000]], st[0]);
	assert_int_equal(p->values[2 * 3000], 2999);
	profile_free(p);

	/*
	 * A hostile count is cut to the sample limit and the budget (counts
	 * that malloc would grant, so only the caps can refuse them), and an
	 * absurd one is simply not reserved.
	 */
	profile_limits_default(&lim);
	lim.max_samples = 5000;
	lim.max_decompressed_bytes = 1 << 20; /* the 64 MiB budget floor */
	p = new_profile(&lim);
	profile_reserve(p, 1000000, 2 * (p->mem_max / sizeof(uint32_t)));
	assert_true(p->samples_cap <= 5000);
	assert_true(p->frames_cap > 0);
	assert_true(p->frames_cap <= p->mem_max / sizeof(uint32_t));
	profile_reserve(p, SIZE_MAX / 2, SIZE_MAX / 2);
	assert_true(p->samples_cap <= 5000);
	assert_true(p->frames_cap <= p->mem_max / sizeof(uint32_t));
	st[0] = fn(p, "main");
	add(p, st, 1, 1);
	assert_int_equal(p->nsamples, 1);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interning_returns_one_id_per_name_and_file),
		cmocka_unit_test(test_recursion_counts_once_toward_total),
		cmocka_unit_test(test_leaf_first_stacks_are_stored_root_first),
		cmocka_unit_test(test_invalid_utf8_is_replaced_and_counted),
		cmocka_unit_test(test_empty_name_becomes_unknown),
		cmocka_unit_test(test_limits_are_enforced_with_a_named_message),
		cmocka_unit_test(test_distinct_functions_beyond_the_limit_are_refused),
		cmocka_unit_test(test_negative_values_and_unknown_ids_are_rejected),
		cmocka_unit_test(test_overflowing_totals_are_rejected),
		cmocka_unit_test(test_empty_profile_summarises_to_zero),
		cmocka_unit_test(test_heap_columns_without_a_rate_count_their_objects),
		cmocka_unit_test(test_primary_value_follows_the_documented_rule),
		cmocka_unit_test(test_the_type_guessed_is_what_the_values_measure),
		cmocka_unit_test(test_memory_budget_refuses_what_does_not_fit),
		cmocka_unit_test(test_reserve_sizes_arrays_within_the_limits),
		cmocka_unit_test(test_a_cold_function_keeps_its_name_where_no_c_compiler_made_it),
		cmocka_unit_test(test_a_memo_of_names_makes_what_interning_makes),
	};
	return cmocka_run_group_tests_name("profile", tests, NULL, NULL);
}
