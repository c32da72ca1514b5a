/*
 * test_ingestrun.c: a manifest ingested through the library, as a job
 * would run it without the command line: outcomes in the manifest's
 * order across batches and the batch read ahead, the counts, and where a
 * failing store stops the run.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobs/ingestrun.h"
#include "tests/support/testdb.h"

#define LINES 140 /* three batches: 64, 64 and 12 */

static const profile_limits limits = {64u << 20, 512u << 20, 10000000, 4096, 65536, 500000};

typedef struct fixture {
	testdb *t;
	char dir[4096];
} fixture;

/* What the callback saw, in order. */
typedef struct seen {
	char names[LINES + 1][4200];
	int failed[LINES + 1];
	char last_error[1024];
	size_t n, progress_calls;
	ingestrun_counts last;
} seen;

static void on_record(void *payload, const char *name, const ingest_result *res,
		      const pr_error *err, const ingestrun_counts *counts)
{
	seen *s = payload;

	assert_true(s->n < LINES + 1);
	snprintf(s->names[s->n], sizeof(s->names[0]), "%s", name);
	s->failed[s->n] = err && err->code;
	if (err && err->code) {
		assert_null(res);
		snprintf(s->last_error, sizeof(s->last_error), "%s", err->msg);
	} else {
		assert_non_null(res);
	}
	s->n++;
	assert_int_equal(counts->done, s->n);
	s->last = *counts;
}

static void on_progress(void *payload, const char *name, const ingestrun_counts *counts)
{
	seen *s = payload;

	(void)name;
	assert_int_equal(counts->done, s->n);
	s->progress_calls++;
}

/*
 * A store that keeps blobs in memory and fails every put after the first
 * `ok_puts` as a full disk would. Ingest puts from several threads.
 */
typedef struct memstore {
	pthread_mutex_t lock;
	unsigned ok_puts, puts;
	char keys[LINES][BLOB_KEY_HEX + 1];
	buf data[LINES];
	size_t nkeys;
} memstore;

static buf *mem_find(memstore *m, const char *key)
{
	for (size_t i = 0; i < m->nkeys; i++)
		if (strcmp(m->keys[i], key) == 0)
			return &m->data[i];
	return NULL;
}

static int mem_put(void *impl, const char *key, const void *data, size_t len, bool *created,
		   pr_error *err)
{
	memstore *m = impl;
	int rc = 0;

	*created = false;
	pthread_mutex_lock(&m->lock);
	if (m->puts++ >= m->ok_puts)
		rc = pr_error_set(err, PR_EIO, "cannot store blob '%s': %s", key, strerror(ENOSPC));
	else if (!mem_find(m, key) && m->nkeys < LINES) {
		snprintf(m->keys[m->nkeys], BLOB_KEY_HEX + 1, "%s", key);
		if (buf_put(&m->data[m->nkeys++], data, len) < 0)
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		*created = rc == 0;
	}
	pthread_mutex_unlock(&m->lock);
	return rc;
}

static int mem_get(void *impl, const char *key, buf *out, size_t max, pr_error *err)
{
	memstore *m = impl;
	buf *b;
	int rc = 0;

	pthread_mutex_lock(&m->lock);
	if (!(b = mem_find(m, key)))
		rc = pr_error_set(err, PR_ENOTFOUND, "blob '%s' not found", key);
	else if (b->len > max)
		rc = pr_error_set(err, PR_EDATA, "blob '%s' is too large", key);
	else if (buf_put(out, b->ptr, b->len) < 0)
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
	pthread_mutex_unlock(&m->lock);
	return rc;
}

static int mem_exists(void *impl, const char *key, bool *out, pr_error *err)
{
	memstore *m = impl;

	(void)err;
	pthread_mutex_lock(&m->lock);
	*out = mem_find(m, key) != NULL;
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static int mem_del(void *impl, const char *key, pr_error *err)
{
	(void)impl;
	(void)key;
	(void)err;
	return 0;
}

static int mem_size(void *impl, const char *key, uint64_t *out, pr_error *err)
{
	(void)impl;
	(void)out;
	return pr_error_set(err, PR_ENOTFOUND, "blob '%s' not found", key);
}

static void mem_close(void *impl)
{
	memstore *m = impl;

	for (size_t i = 0; i < m->nkeys; i++)
		buf_release(&m->data[i]);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

static const blob_store_ops mem_ops = {
	.put = mem_put,
	.get = mem_get,
	.exists = mem_exists,
	.del = mem_del,
	.size = mem_size,
	.close = mem_close,
};

static blob_store *mem_store(unsigned ok_puts)
{
	pr_error err = PR_ERROR_INIT;
	blob_store *bs = NULL;
	memstore *m = calloc(1, sizeof(*m));

	assert_non_null(m);
	assert_int_equal(pthread_mutex_init(&m->lock, NULL), 0);
	m->ok_puts = ok_puts;
	for (size_t i = 0; i < LINES; i++)
		m->data[i] = (buf)BUF_INIT;
	if (blob_store_new(&bs, &mem_ops, m, "mem:", &err) < 0)
		fail_msg("%s", err.msg);
	return bs;
}

static int setup(void **state)
{
	const char *base = getenv("PROFREG_TEST_TMP");
	fixture *f = calloc(1, sizeof(*f));

	if (!f || !(f->t = testdb_new(true)))
		return -1;
	snprintf(f->dir, sizeof(f->dir), "%s/test_ingestrun.XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(f->dir))
		return -1;
	testdb_add_service(f->t, "svc");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", f->dir);
	testdb_free(f->t);
	free(f);
	return 0;
}

/*
 * A manifest of LINES lines in f->dir: line 5 is not JSON, line 70 names
 * a missing file, line 100 the same bytes as line 1. Returns its path.
 */
static void write_manifest(const fixture *f, char *path, size_t size)
{
	FILE *m;

	snprintf(path, size, "%s/manifest.jsonl", f->dir);
	assert_non_null(m = fopen(path, "w"));
	for (int i = 1; i <= LINES; i++) {
		char file[4200];
		FILE *fp;

		if (i == 5) {
			fputs("{not json\n", m);
			continue;
		}
		fprintf(m,
			"{\"path\":\"c%03d.folded\",\"service\":\"svc\",\"release\":\"v1\","
			"\"time\":\"2026-01-01T%02d:%02d:00Z\"}\n",
			i == 100 ? 1 : i, i / 60, i % 60);
		if (i == 70 || i == 100)
			continue;
		snprintf(file, sizeof(file), "%s/c%03d.folded", f->dir, i);
		assert_non_null(fp = fopen(file, "w"));
		fprintf(fp, "main;work;f%d %d\nmain;idle 7\n", i % 9, 10 + i);
		assert_int_equal(fclose(fp), 0);
	}
	assert_int_equal(fclose(m), 0);
}

static void run_manifest(fixture *f, seen *s, blob_store *bs, bool ahead, int *rc)
{
	pr_error err = PR_ERROR_INIT;
	ingestrun_opts o = {0};
	ingestrun *r = NULL;
	char path[4300];

	write_manifest(f, path, sizeof(path));
	o.d = f->t->db;
	if (ahead && db_open(&o.ahead, f->t->conninfo, &err) < 0)
		fail_msg("%s", err.msg);
	o.bs = bs;
	o.lim = limits;
	o.jobs = 2;
	o.record = on_record;
	o.progress = on_progress;
	o.payload = s;
	assert_int_equal(ingestrun_new(&r, &o, &err), 0);
	*rc = ingestrun_manifest(r, path, &err);
	ingestrun_finish(r);
	ingestrun_free(r);
	db_close(o.ahead);
}

static void every_line_in_order(bool ahead, void **state)
{
	fixture *f = *state;
	seen *s = calloc(1, sizeof(*s));
	blob_store *bs = mem_store(1000);
	int rc;

	assert_non_null(s);
	run_manifest(f, s, bs, ahead, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(s->n, LINES);
	for (int i = 1; i <= LINES; i++) {
		char want[64];

		if (i == 5)
			snprintf(want, sizeof(want), "line 5 of '");
		else
			snprintf(want, sizeof(want), "c%03d.folded", i == 100 ? 1 : i);
		if (!strstr(s->names[i - 1], want))
			fail_msg("outcome %d is '%s', not of '%s'", i, s->names[i - 1], want);
		assert_int_equal(s->failed[i - 1], i == 5 || i == 70);
	}
	assert_int_equal(s->last.total, LINES);
	assert_int_equal(s->last.failed, 2);
	assert_int_equal(s->last.already, 1);
	assert_int_equal(s->last.stored, LINES - 3);
	assert_int_equal(s->last.not_tried, 0);
	assert_int_equal(s->progress_calls, 3); /* a batch, a call */
	assert_int_equal(testdb_int(f->t, "select count(*) from profiles"), LINES - 3);
	blob_store_free(bs);
	free(s);
}

static void test_outcomes_come_in_the_manifests_order_across_batches(void **state)
{
	every_line_in_order(false, state);
}

static void test_outcomes_keep_their_order_with_the_next_batch_read_ahead(void **state)
{
	every_line_in_order(true, state);
}

/*
 * The store fills up after the first batch's 63 blobs (line 5 is bad): the
 * second batch's first line stops the run, saying how far it got, and
 * nothing after it is recorded, not even the batch already read ahead.
 */
static void test_a_failing_store_stops_the_run_at_its_line(void **state)
{
	fixture *f = *state;
	seen *s = calloc(1, sizeof(*s));
	blob_store *bs = mem_store(63);
	int rc;

	assert_non_null(s);
	run_manifest(f, s, bs, true, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(s->n, 65);
	assert_true(s->failed[64]);
	assert_non_null(strstr(s->names[64], "c065.folded"));
	assert_non_null(strstr(s->last_error, "stopped at line 65 of '"));
	assert_non_null(strstr(s->last_error, "63 ingested, 1 failed, 75 not tried"));
	assert_int_equal(s->last.not_tried, LINES - 65);
	assert_int_equal(s->last.stored, 63);
	assert_int_equal(testdb_int(f->t, "select count(*) from profiles"), 63);
	blob_store_free(bs);
	free(s);
}

static void test_an_empty_manifest_is_an_error_with_nothing_recorded(void **state)
{
	fixture *f = *state;
	pr_error err = PR_ERROR_INIT;
	ingestrun_opts o = {0};
	ingestrun *r = NULL;
	seen *s = calloc(1, sizeof(*s));
	char path[4300];
	FILE *fp;

	assert_non_null(s);
	snprintf(path, sizeof(path), "%s/empty.jsonl", f->dir);
	assert_non_null(fp = fopen(path, "w"));
	fputs("\n  \n", fp);
	assert_int_equal(fclose(fp), 0);
	o.d = f->t->db;
	o.bs = mem_store(10);
	o.lim = limits;
	o.jobs = 1;
	o.record = on_record;
	o.payload = s;
	assert_int_equal(ingestrun_new(&r, &o, &err), 0);
	assert_int_equal(ingestrun_manifest(r, path, &err), PR_EDATA);
	assert_non_null(strstr(err.msg, "lists no capture (only blank lines)"));
	ingestrun_finish(r);
	assert_int_equal(s->n, 0);
	ingestrun_free(r);
	blob_store_free(o.bs);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_outcomes_come_in_the_manifests_order_across_batches, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_outcomes_keep_their_order_with_the_next_batch_read_ahead, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_a_failing_store_stops_the_run_at_its_line,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_an_empty_manifest_is_an_error_with_nothing_recorded, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
