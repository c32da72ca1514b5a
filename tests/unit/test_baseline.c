/*
 * test_baseline.c: the per-function matrix the analysis reads
 * (func_matrix_load), against the rows stored in the real database.
 *
 * Each capture's values are one row of profile_vectors, merged by
 * function in profreg; every cell must land on its function's row and
 * its capture's column, and the rows must be in ascending id order
 * whatever order the functions were interned in.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "baselines/baseline.h"
#include "pipeline/db.h"
#include "pipeline/profile.h"
#include "tests/support/testdb.h"

#define NFUNCS 300
#define NCAPS 6
#define T0 1764411145000000LL

/* A small deterministic generator: the same cells on every run. */
static uint32_t next(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

/* Function i's value in capture c, 0 when the capture does not have it. */
static int64_t cell(size_t i, size_t c)
{
	uint32_t s = (uint32_t)(i * 7919 + c * 104729 + 17);

	return next(&s) % 3 == 0 ? 0 : 1 + (int64_t)(next(&s) % 100000);
}

/* Capture c of service sid: every function with a value, one sample each. */
static int64_t store_capture(testdb *t, int64_t sid, size_t c)
{
	static const char *types[] = {"cpu"};
	static const char *units[] = {"nanoseconds"};
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	profile_summary s = {0};
	db_capture m = {0};
	char key[65], name[32];
	int64_t id = 0;

	assert_int_equal(profile_new(&p, PROFILE_FMT_FOLDED, "m.folded", NULL, &err), 0);
	assert_int_equal(profile_set_value_types(p, 1, types, units, &err), 0);
	/* Each capture meets its functions in another order (steps prime to NFUNCS). */
	static const size_t step[NCAPS] = {1, 7, 11, 13, 17, 19};
	for (size_t k = 0; k < NFUNCS; k++) {
		size_t i = (k * step[c] + c * 37) % NFUNCS;
		int64_t v = cell(i, c);
		uint32_t f;

		if (!v)
			continue;
		snprintf(name, sizeof(name), "fn_%03zu", i);
		assert_int_equal(profile_intern(p, &f, name, strlen(name), "", 0, &err), 0);
		assert_int_equal(profile_add_sample(p, &f, 1, &v, &err), 0);
	}
	assert_int_equal(profile_summarize(&s, p, 0, &err), 0);
	memset(key, 'a' + (int)c, 64);
	key[64] = '\0';
	m.service_id = sid;
	m.service = (char *)"svc";
	m.profile_type = (char *)"cpu";
	m.release = (char *)"v1";
	m.captured_at_us = T0 + (int64_t)c * 1000000;
	m.value_type = (char *)"cpu";
	m.value_unit = (char *)"nanoseconds";
	m.blob_key = key;
	m.blob_bytes = 1;
	m.format = (char *)"folded";
	if (db_capture_insert(t->db, &id, &m, p, &s, &err) < 0)
		fail_msg("%s", err.msg);
	profile_summary_release(&s);
	profile_free(p);
	return id;
}

static void test_matrix_puts_every_value_on_its_function_and_capture(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	int64_t sid = testdb_add_service(t, "svc"), ids[NCAPS];
	capture_query q = {0};
	capture_set all = {0}, a = {0}, b = {0};
	func_matrix m = {0};
	size_t seen = 0;

	/* Interned in an order unlike the names': ids do not follow names. */
	assert_int_equal(testdb_int(t, "with n as (select format('fn_%s', lpad(i::text, 3, '0'))"
				       " as name from generate_series(0, 299) i"
				       " order by md5(i::text))"
				       " insert into functions (name, file) select name, '' from n;"
				       " select 1"), 1);
	for (size_t c = 0; c < NCAPS; c++)
		ids[c] = store_capture(t, sid, c);
	q.service_id = sid;
	q.type = "cpu";
	assert_int_equal(capture_set_load(&all, t->db, &q, &err), 0);
	assert_int_equal(all.n, NCAPS);
	/* The first four as one set, the last two as the other: a's columns first. */
	a = all;
	a.n = 4;
	b.caps = all.caps + 4;
	b.n = 2;
	if (func_matrix_load(&m, t->db, &a, &b, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(m.ncaps, NCAPS);
	for (size_t r = 1; r < m.nfuncs; r++)
		assert_true(m.func_ids[r - 1] < m.func_ids[r]);
	for (size_t r = 0; r < m.nfuncs; r++) {
		char sql[160];
		int i;

		snprintf(sql, sizeof(sql),
			 "select substr(name, 4)::int from functions where id = %lld",
			 (long long)m.func_ids[r]);
		i = testdb_int(t, sql);
		for (size_t c = 0; c < NCAPS; c++) {
			assert_int_equal(all.caps[c].id, ids[c]);
			if (m.self[r * NCAPS + c] != cell((size_t)i, c))
				fail_msg("fn_%03d in capture %zu: %lld, stored %lld", i, c,
					 (long long)m.self[r * NCAPS + c],
					 (long long)cell((size_t)i, c));
			seen += m.self[r * NCAPS + c] != 0;
		}
	}
	/* Every stored row, and a row for every function with a value somewhere. */
	assert_int_equal(seen, testdb_int(t, "select count(*) from profile_functions"));
	assert_int_equal(m.nfuncs, testdb_int(t, "select count(distinct function_id)"
					       " from profile_functions"));
	func_matrix_release(&m);
	a.caps = NULL;
	b.caps = NULL;
	capture_set_release(&all);
}

/*
 * A capture's vector written by hand with its ids descending is read in
 * order; one cut to a summary (it holds the synthetic "(other
 * functions)" entry) gives every function it does not list as unknown,
 * and the synthetic entry is no row of the matrix. An update of the
 * arrays recomputes the pairs that are read (migration 026), and a row
 * without pairs (written before them) is read from its arrays.
 */
static void test_vectors_out_of_order_and_cut_captures_are_read_right(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	int64_t sid = testdb_add_service(t, "svc"), ids[NCAPS];
	capture_query q = {0};
	capture_set all = {0};
	func_matrix m = {0};
	size_t unknown = 0;

	for (size_t c = 0; c < NCAPS; c++)
		ids[c] = store_capture(t, sid, c);
	testdb_execf(t, "update profile_vectors set"
		     " function_ids = array(select x from unnest(function_ids) with ordinality"
		     "   u(x, o) order by o desc),"
		     " self_values = array(select x from unnest(self_values) with ordinality"
		     "   u(x, o) order by o desc),"
		     " total_values = array(select x from unnest(total_values) with ordinality"
		     "   u(x, o) order by o desc) where profile_id = %lld", (long long)ids[1]);
	testdb_execf(t, "insert into functions (name, file, synthetic)"
		     " values ('(other functions)', '', true)");
	/* Capture 2 keeps its last 20 functions and sums the rest into the synthetic one. */
	testdb_execf(t, "update profile_vectors set"
		     " function_ids = function_ids[cardinality(function_ids) - 19:]"
		     "   || (select id from functions where synthetic),"
		     " self_values = self_values[cardinality(self_values) - 19:] || 12345::bigint,"
		     " total_values = total_values[cardinality(total_values) - 19:]"
		     "   || 12345::bigint"
		     " where profile_id = %lld", (long long)ids[2]);
	testdb_execf(t, "update profile_vectors set self_pairs = null where profile_id = %lld",
		     (long long)ids[3]);
	assert_int_equal(
		testdb_int(t, "select count(*) from profile_vectors where self_pairs is null"), 1);
	q.service_id = sid;
	q.type = "cpu";
	assert_int_equal(capture_set_load(&all, t->db, &q, &err), 0);
	if (func_matrix_load(&m, t->db, &all, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(m.nfuncs, testdb_int(t, "select count(*) from functions"
					       " where not synthetic and name like 'fn_%'"));
	for (size_t r = 0; r < m.nfuncs; r++) {
		char sql[160];
		int i;

		snprintf(sql, sizeof(sql), "select substr(name, 4)::int from functions"
			 " where id = %lld and not synthetic", (long long)m.func_ids[r]);
		i = testdb_int(t, sql);
		for (size_t c = 0; c < NCAPS; c++) {
			int64_t got = m.self[r * NCAPS + c];

			if (c == 2 && got == FUNC_MATRIX_UNKNOWN) {
				unknown++;
				continue;
			}
			if (got != cell((size_t)i, c))
				fail_msg("fn_%03d in capture %zu: %lld, stored %lld", i, c,
					 (long long)got, (long long)cell((size_t)i, c));
		}
	}
	/* Only the 20 functions capture 2 kept are known there. */
	assert_int_equal(unknown, m.nfuncs - 20);
	func_matrix_release(&m);
	capture_set_release(&all);
}

/*
 * Retention may delete a listed capture before its values are read: the
 * capture is unknown in every function, not one where all cost nothing.
 */
static void test_a_capture_deleted_after_listing_is_unknown_not_zero(void **state)
{
	testdb *t = *state;
	int64_t sid = testdb_add_service(t, "svc"), ids[3];
	capture_query q = {0};
	capture_set all;
	func_matrix m;
	pr_error err = PR_ERROR_INIT;

	for (size_t c = 0; c < 3; c++)
		ids[c] = store_capture(t, sid, c);
	q.service_id = sid;
	q.type = "cpu";
	assert_int_equal(capture_set_load(&all, t->db, &q, &err), 0);
	assert_int_equal(all.n, 3);
	testdb_execf(t, "delete from profiles where id = %lld", (long long)ids[1]);
	if (func_matrix_load(&m, t->db, &all, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(m.nfuncs > 0);
	for (size_t r = 0; r < m.nfuncs; r++) {
		assert_int_equal(m.self[r * 3 + 1], FUNC_MATRIX_UNKNOWN);
		assert_int_not_equal(m.self[r * 3 + 0], FUNC_MATRIX_UNKNOWN);
		assert_int_not_equal(m.self[r * 3 + 2], FUNC_MATRIX_UNKNOWN);
	}
	func_matrix_release(&m);
	capture_set_release(&all);
}

/* The pairs of a capture cannot disagree in length with its function ids. */
static void test_pairs_of_the_wrong_length_are_refused(void **state)
{
	testdb *t = *state;
	int64_t sid = testdb_add_service(t, "svc"), id = store_capture(t, sid, 0);
	pr_error err = PR_ERROR_INIT;
	char sql[160];

	snprintf(sql, sizeof(sql), "update profile_vectors set self_pairs = self_pairs || '\\x00'"
		 " where profile_id = %lld", (long long)id);
	assert_true(db_exec(t->db, NULL, &err, "lengthening the pairs", sql, 0, NULL) < 0);
	assert_non_null(strstr(err.msg, "profile_vectors_pairs_length"));
	snprintf(sql, sizeof(sql),
		 "select (octet_length(self_pairs) = 16 * cardinality(function_ids))::int"
		 " from profile_vectors where profile_id = %lld", (long long)id);
	assert_int_equal(testdb_int(t, sql), 1);
}

/*
 * A stored baseline's per-function summaries read back through the view
 * baseline_functions to the last bit, an unknown variance or rate as
 * NULL, each on its own function; the same captures again reuse it; one
 * with no function stores empty arrays.
 */
static void test_a_stored_baseline_reads_back_per_function(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	int64_t sid = testdb_add_service(t, "svc"), id = 0, again = 0;
	capture_query q = {0};
	capture_set all = {0};
	baseline_func f[3];
	bool reused = true;

	for (size_t c = 0; c < 3; c++)
		store_capture(t, sid, c);
	q.service_id = sid;
	q.type = "cpu";
	assert_int_equal(capture_set_load(&all, t->db, &q, &err), 0);
	for (size_t i = 0; i < 3; i++) {
		double x = 0.1 / (double)(i + 3);

		f[i] = (baseline_func){
			.function_id = testdb_int(t, "select min(id) from functions") + (int64_t)i,
			.n = all.n, .mean_share = x, .median_share = x * 1.1, .mad_share = x / 7,
			.ewma_share = x * 0.9, .mean_vst = x * 3, .var_vst = i == 1 ? NAN : x / 3,
			.var_floor = x / 11, .mean_rate = i == 2 ? NAN : x * 1e9};
	}
	if (baseline_store(&id, &reused, t->db, sid, "cpu", T0 - 1, T0 + 10000000, &all, f, 3,
			   &err) < 0)
		fail_msg("%s", err.msg);
	assert_false(reused);
	for (size_t i = 0; i < 3; i++) {
		char sql[768], vst[64], rate[64];

		/* NaN is stored as NULL; a number must come back exactly. */
		if (isnan(f[i].var_vst))
			snprintf(vst, sizeof(vst), "var_vst is null");
		else
			snprintf(vst, sizeof(vst), "var_vst = %.17g", f[i].var_vst);
		if (isnan(f[i].mean_rate))
			snprintf(rate, sizeof(rate), "mean_rate is null");
		else
			snprintf(rate, sizeof(rate), "mean_rate = %.17g", f[i].mean_rate);
		snprintf(sql, sizeof(sql),
			 "select count(*) from baseline_functions where baseline_id = %lld"
			 " and function_id = %lld and n = %zu and mean_share = %.17g"
			 " and median_share = %.17g and mad_share = %.17g and ewma_share = %.17g"
			 " and mean_vst = %.17g and %s and var_floor = %.17g and %s",
			 (long long)id, (long long)f[i].function_id, all.n, f[i].mean_share,
			 f[i].median_share, f[i].mad_share, f[i].ewma_share, f[i].mean_vst, vst,
			 f[i].var_floor, rate);
		if (testdb_int(t, sql) != 1)
			fail_msg("function %zu does not read back: %s", i, sql);
	}
	assert_int_equal(testdb_int(t, "select count(*) from baseline_functions"), 3);
	assert_int_equal(baseline_store(&again, &reused, t->db, sid, "cpu", T0 - 2,
					T0 + 20000000, &all, f, 3, &err), 0);
	assert_true(reused);
	assert_int_equal(again, id);
	/* A baseline of other captures with no function to summarise: empty arrays. */
	all.n = 2;
	assert_int_equal(baseline_store(&again, &reused, t->db, sid, "cpu", T0 - 2,
					T0 + 20000000, &all, f, 0, &err), 0);
	assert_false(reused);
	assert_int_equal(testdb_int(t, "select count(*) from baseline_vectors"
				       " where cardinality(function_ids) = 0"
				       " and cardinality(mean_rate) = 0 and n = 2"),
			 1);
	all.n = 3;
	capture_set_release(&all);
}

static void test_matrix_of_captures_without_rows_is_empty(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	capture_set none = {0};
	func_matrix m = {0};

	assert_int_equal(func_matrix_load(&m, t->db, &none, NULL, &err), 0);
	assert_int_equal(m.nfuncs, 0);
	assert_null(m.func_ids);
	func_matrix_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_matrix_puts_every_value_on_its_function_and_capture,
				       testdb_reset),
		cmocka_unit_test_setup(test_pairs_of_the_wrong_length_are_refused, testdb_reset),
		cmocka_unit_test_setup(test_vectors_out_of_order_and_cut_captures_are_read_right,
				       testdb_reset),
		cmocka_unit_test_setup(test_a_capture_deleted_after_listing_is_unknown_not_zero,
				       testdb_reset),
		cmocka_unit_test_setup(test_a_stored_baseline_reads_back_per_function,
				       testdb_reset),
		cmocka_unit_test_setup(test_matrix_of_captures_without_rows_is_empty, testdb_reset),
	};

	return cmocka_run_group_tests(tests, testdb_group_setup, testdb_group_teardown);
}
