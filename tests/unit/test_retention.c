/*
 * test_retention.c: the retention engine against a real PostgreSQL and a
 * real blob store: the budget's eviction order, protected data over the
 * budget, a pin taken concurrently by another session, and a summary
 * capture as a baseline member; the orphan sweep beside an ingest of the
 * same bytes, the row budget never deleting hot captures, a future `at`,
 * and what a dry run holds and for how long; evidence a second finding takes;
 * bytes of a deleted capture offered again, not stored again.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <libpq-fe.h>

#include "baselines/baseline.h"
#include "common/timeutil.h"
#include "jobs/evidence.h"
#include "jobs/retention.h"
#include "pipeline/ingest.h"
#include "tests/support/testdb.h"

#define DAY (86400LL * 1000000LL)
/* 2026-06-01T00:00:00Z */
#define AT 1780272000000000LL
/* pipeline/db.c's class of blob key locks, as an ingest takes them. */
#define BLOB_LOCK_CLASS "1886547815"

typedef struct fx {
	testdb *t;
	blob_store *bs;
	char dir[512];
	config cfg;
	int64_t sid;
} fx;

static int64_t intf(testdb *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int64_t intf(testdb *t, const char *fmt, ...)
{
	char q[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(q, sizeof(q), fmt, ap);
	va_end(ap);
	return testdb_int(t, q);
}

static int setup(void **state)
{
	static fx f;
	const char *base = getenv("PROFREG_TEST_TMP");
	pr_error err = PR_ERROR_INIT;
	int rc;

	if ((rc = testdb_reset(state)) != 0)
		return rc;
	memset(&f.cfg, 0, sizeof(f.cfg));
	f.t = *state;
	snprintf(f.dir, sizeof(f.dir), "%s/retention-XXXXXX", base ? base : "/tmp");
	if (!mkdtemp(f.dir) || blob_store_open_dir(&f.bs, f.dir, &err) < 0) {
		fprintf(stderr, "cannot make a blob store: %s\n", err.msg);
		return -1;
	}
	f.cfg.retention.tiers.hot_us = 7 * DAY;
	f.cfg.retention.tiers.summary_us = 90 * DAY;
	f.cfg.retention.tiers.summary_top = 2;
	f.cfg.retention.batch = 200;
	/* The reset emptied `functions`; put back what migration 006 adds. */
	testdb_execf(f.t,
	     "insert into functions (name, file, synthetic) values ('(other functions)', "
	     "'(profreg summary)', true)");
	testdb_execf(f.t, "insert into services (name, enabled) values ('svc', true)");
	f.sid = intf(f.t, "select id from services where name = 'svc'");
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	fx *f = *state;
	char cmd[600];

	blob_store_free(f->bs);
	f->bs = NULL;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		return -1;
	*state = f->t;
	return 0;
}

/*
 * A capture `age` days before AT with functions f1..fN (self 10*N .. 10),
 * a real blob of `bytes` distinct bytes, in retention class `cls`. Returns
 * its id.
 */
static int64_t capture(fx *f, int age, int nfuncs, size_t bytes, const char *cls)
{
	static int seq;
	char key[BLOB_KEY_HEX + 1], *data = malloc(bytes);
	pr_error err = PR_ERROR_INIT;
	int64_t id, total = 0;
	unsigned x = 2166136261u ^ (unsigned)++seq;

	assert_non_null(data);
	/* Incompressible enough that stored sizes differ little from `bytes`. */
	for (size_t i = 0; i < bytes; i++) {
		x = x * 1103515245u + 12345u;
		data[i] = (char)(x >> 16);
	}
	assert_int_equal(blob_put(f->bs, key, data, bytes, NULL, &err), 0);
	free(data);
	for (int i = 1; i <= nfuncs; i++)
		total += 10 * i;
	testdb_execf(f->t,
	     "insert into profiles (service_id, profile_type, release, "
	     "captured_at, value_type, value_unit,"
	     " total_value, sample_count, function_count, blob_key, format, "
	     "retention_class, blob_deleted_at)"
	     " values (%lld, 'cpu', 'r1', 'epoch'::timestamptz + %lld * interval '1 microsecond',"
	     " 'samples', 'count', %lld, %lld, %d, '%s', 'folded', '%s', case when '%s' = "
	     "'summary' then now() end)",
	     (long long)f->sid, (long long)(AT - age * DAY), (long long)total, (long long)total,
	     nfuncs, key, cls, cls);
	id = intf(f->t, "select max(id) from profiles");
	testdb_execf(f->t,
	     "insert into functions (name, file) select 'f' || g, '' from generate_series(1, %d) g"
	     " on conflict do nothing",
	     nfuncs);
	testdb_execf(f->t,
	     "insert into profile_vectors (profile_id, service_id, function_ids, self_values,"
	     " total_values)"
	     " select p.id, p.service_id, array_agg(fn.id order by fn.id),"
	     " array_agg(10 * substr(fn.name, 2)::int order by fn.id),"
	     " array_agg(10 * substr(fn.name, 2)::int order by fn.id)"
	     " from profiles p, functions fn"
	     " where p.id = %lld and fn.file = '' and fn.name ~ '^f[0-9]+$' and "
	     "substr(fn.name, 2)::int <= %d group by p.id, p.service_id",
	     (long long)id, nfuncs);
	return id;
}

static uint64_t stored(fx *f, int64_t id)
{
	char q[128];
	uint64_t size = 0;
	pr_error err = PR_ERROR_INIT;

	snprintf(q, sizeof(q), "select blob_key from profiles where id = %lld", (long long)id);
	assert_int_equal(blob_stored_size(f->bs, testdb_text(f->t, q), &size, &err), 0);
	return size;
}

static const char *cls(fx *f, int64_t id)
{
	char q[128];
	const char *s;

	snprintf(q, sizeof(q), "select retention_class from profiles where id = %lld",
		 (long long)id);
	s = testdb_text(f->t, q);
	return s ? s : "deleted";
}

static int run(fx *f, retention_result *r)
{
	retention_opts o = {AT, false, 0, NULL};
	pr_error err = PR_ERROR_INIT;
	int rc = retention_run(r, f->t->db, f->bs, &f->cfg, &o, &err);

	if (rc < 0)
		print_error("retention_run: %s\n", err.msg);
	return rc;
}

static void test_byte_budget_moves_the_oldest_unprotected_captures_to_summary_first(void **state)
{
	fx *f = *state;
	int64_t h1 = capture(f, 1, 3, 4000, "hot");
	int64_t h2 = capture(f, 2, 3, 4000, "hot");
	int64_t h3 = capture(f, 3, 3, 4000, "hot");
	int64_t h4 = capture(f, 4, 3, 4000, "hot");
	int64_t fo = capture(f, 6, 3, 4000, "forensic");
	uint64_t all =
		stored(f, h1) + stored(f, h2) + stored(f, h3) + stored(f, h4) + stored(f, fo);
	retention_result r;

	/* Room for everything but the two oldest hot captures' blobs. */
	f->cfg.retention.budget_bytes = all - stored(f, h4) - stored(f, h3);
	assert_int_equal(run(f, &r), 0);
	assert_string_equal(cls(f, h4), "summary");
	assert_string_equal(cls(f, h3), "summary");
	assert_string_equal(cls(f, h2), "hot");
	assert_string_equal(cls(f, h1), "hot");
	assert_string_equal(cls(f, fo), "forensic");
	assert_int_equal(r.budget_to_summary, 2);
	assert_int_equal(r.blobs_deleted, 2);
	assert_int_equal(r.bytes_used, f->cfg.retention.budget_bytes);
	assert_false(r.over_budget);
	assert_int_equal(intf(f->t,
			      "select count(*) from audit_log where action = 'retention.summary'"
			      " and detail->>'reason' = 'budget'"),
			 1);
}

/*
 * A capture whose blob a protected capture keeps too frees nothing when it
 * is cut: the budget passes it over. It cut the older one's rows for no
 * byte, then the one whose blob it could free.
 */
static void test_byte_budget_passes_over_a_blob_a_protected_capture_keeps(void **state)
{
	fx *f = *state;
	int64_t fo = capture(f, 6, 3, 4000, "forensic");
	int64_t h = capture(f, 4, 3, 4000, "hot");
	int64_t sh;
	retention_result r;

	testdb_execf(f->t, "insert into services (name, enabled) values ('other', true)");
	testdb_execf(f->t,
		     "insert into profiles (service_id, profile_type, release, captured_at,"
		     " value_type, value_unit, total_value, sample_count, function_count,"
		     " blob_key, format, retention_class)"
		     " select (select id from services where name = 'other'), profile_type,"
		     " release, captured_at - interval '1 day', value_type, value_unit,"
		     " total_value, sample_count, function_count, blob_key, format, 'hot'"
		     " from profiles where id = %lld",
		     (long long)fo);
	sh = intf(f->t, "select max(id) from profiles");
	f->cfg.retention.budget_bytes = stored(f, fo);
	assert_int_equal(run(f, &r), 0);
	assert_string_equal(cls(f, sh), "hot");
	assert_string_equal(cls(f, h), "summary");
	assert_string_equal(cls(f, fo), "forensic");
	assert_int_equal(r.budget_to_summary, 1);
	assert_false(r.over_budget);
}

static void test_row_budget_cuts_hot_captures_then_deletes_the_oldest_summary_ones(void **state)
{
	fx *f = *state;
	int64_t h1 = capture(f, 1, 5, 100, "hot");
	int64_t h2 = capture(f, 2, 5, 100, "hot");
	int64_t s1 = capture(f, 30, 3, 100, "summary");
	int64_t s2 = capture(f, 20, 3, 100, "summary");
	int64_t fo = capture(f, 40, 9, 100, "forensic");
	retention_result r;

	/* 5 + 5 + 3 + 3 + 9 = 25 rows; cutting h1 and h2 to 3 gives 21, deleting s1 gives 18. */
	f->cfg.retention.budget_rows = 18;
	assert_int_equal(run(f, &r), 0);
	assert_string_equal(cls(f, h1), "summary");
	assert_string_equal(cls(f, h2), "summary");
	assert_string_equal(cls(f, s1), "deleted");
	assert_string_equal(cls(f, s2), "summary");
	assert_string_equal(cls(f, fo), "forensic");
	assert_int_equal(intf(f->t, "select count(*) from profile_functions"), 18);
	assert_int_equal(intf(f->t,
			      "select count(*) from profile_functions where profile_id = %lld",
			      (long long)fo),
			 9);
	assert_int_equal(r.budget_to_summary, 2);
	assert_int_equal(r.budget_deleted, 1);
	assert_int_equal(r.rows_used, 18);
	assert_false(r.over_budget);
}

static void test_protected_data_alone_over_the_budget_is_flagged_and_kept(void **state)
{
	fx *f = *state;
	int64_t fo = capture(f, 200, 4, 3000, "forensic");
	int64_t pinned = capture(f, 200, 4, 3000, "hot");
	int64_t plain = capture(f, 1, 4, 3000, "hot");
	retention_result r;

	testdb_execf(f->t, "insert into findings (service_id, status) values (%lld, 'open')",
	     (long long)f->sid);
	testdb_execf(f->t,
	     "insert into capture_pins (profile_id, finding_id) values (%lld, "
	     "(select max(id) from findings))",
	     (long long)pinned);
	f->cfg.retention.budget_bytes = 1;
	f->cfg.retention.budget_rows = 1;
	assert_int_equal(run(f, &r), 0);
	assert_true(r.over_budget);
	assert_string_equal(cls(f, fo), "forensic");
	assert_string_equal(cls(f, pinned), "hot");
	/* The unprotected one went all the way for the row budget. */
	assert_string_equal(cls(f, plain), "deleted");
	assert_int_equal(intf(f->t, "select count(*) from profile_functions"), 8);
	assert_int_equal(r.bytes_used, stored(f, fo) + stored(f, pinned));
	assert_int_equal(
		intf(f->t,
		     "select count(*) from runs where kind = 'retention' "
		     "and status = 'over_budget'"),
		1);
}

/* Another session pins a capture and has not committed yet: the run must leave it alone. */
static void test_a_pin_taken_by_another_session_during_the_run_is_never_undone(void **state)
{
	fx *f = *state;
	int64_t c = capture(f, 10, 4, 500, "hot");
	int64_t e = capture(f, 10, 4, 500, "hot");
	PGconn *side = PQconnectdb(f->t->conninfo);
	retention_result r;
	char q[512];
	PGresult *res;

	assert_int_equal(PQstatus(side), CONNECTION_OK);
	testdb_execf(f->t, "insert into findings (service_id, status) values (%lld, 'open')",
	     (long long)f->sid);
	snprintf(q, sizeof(q),
		 "begin; insert into capture_pins (profile_id, finding_id) values (%lld, "
		 "(select max(id) from findings));"
		 " update profiles set retention_class = 'forensic' where id = %lld",
		 (long long)c, (long long)e);
	res = PQexec(side, q);
	assert_int_equal(PQresultStatus(res), PGRES_COMMAND_OK);
	PQclear(res);

	assert_int_equal(run(f, &r), 0);
	assert_string_equal(cls(f, c), "hot");
	assert_int_equal(r.to_summary, 0);
	assert_int_equal(r.skipped_locked, 2);

	res = PQexec(side, "commit");
	assert_int_equal(PQresultStatus(res), PGRES_COMMAND_OK);
	PQclear(res);
	PQfinish(side);
	assert_int_equal(run(f, &r), 0);
	assert_string_equal(cls(f, c), "hot");
	assert_string_equal(cls(f, e), "forensic");
	assert_int_equal(intf(f->t,
			      "select count(*) from profile_functions where profile_id = %lld",
			      (long long)c),
			 4);
	assert_int_equal(r.protected_kept, 2);
	assert_int_equal(r.skipped_locked, 0);
}

static void test_a_summary_capture_stays_a_baseline_member_without_its_other_row(void **state)
{
	fx *f = *state;
	int64_t c = capture(f, 10, 5, 100, "hot");
	capture_query q = {0};
	capture_set set = {0};
	func_matrix m = {0};
	pr_error err = PR_ERROR_INIT;
	retention_result r;
	int64_t top_self[2] = {0, 0};

	assert_int_equal(run(f, &r), 0);
	assert_string_equal(cls(f, c), "summary");
	assert_int_equal(intf(f->t,
			      "select count(*) from profile_functions where profile_id = %lld",
			      (long long)c),
			 3);
	q.service_id = f->sid;
	q.type = "cpu";
	q.eligible_only = true;
	assert_int_equal(capture_set_load(&set, f->t->db, &q, &err), 0);
	assert_int_equal(set.n, 1);
	assert_int_equal(func_matrix_load(&m, f->t->db, &set, NULL, &err), 0);
	/* f5 (50) and f4 (40) stay; f1..f3 are in "(other)", which is not a function. */
	assert_int_equal(m.nfuncs, 2);
	for (size_t i = 0; i < m.nfuncs; i++)
		top_self[i] = m.self[i];
	assert_true((top_self[0] == 50 && top_self[1] == 40) ||
		    (top_self[0] == 40 && top_self[1] == 50));
	/* Shares are against the capture's whole total, as before the cut. */
	assert_true(capture_share(&set.caps[0], 50) == 50.0 / 150.0);
	func_matrix_release(&m);
	capture_set_release(&set);
}

/* A side connection: fails the test unless it connects. */
static PGconn *side_open(fx *f)
{
	PGconn *c = PQconnectdb(f->t->conninfo);

	if (PQstatus(c) != CONNECTION_OK)
		fail_msg("side connection: %s", PQerrorMessage(c));
	return c;
}

static void side_exec(PGconn *c, const char *sql)
{
	PGresult *res = PQexec(c, sql);

	if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
		fail_msg("%s: %s", sql, PQerrorMessage(c));
	PQclear(res);
}

/* Wait for everything a PQsendQuery asked; the first error's message, or NULL. */
static char *side_drain(PGconn *c)
{
	PGresult *res;
	char *first = NULL;

	while ((res = PQgetResult(c))) {
		if (PQresultStatus(res) == PGRES_FATAL_ERROR && !first)
			first = strdup(PQresultErrorMessage(res));
		PQclear(res);
	}
	return first;
}

static const char *key_of(fx *f, int64_t id)
{
	char q[128];

	snprintf(q, sizeof(q), "select blob_key from profiles where id = %lld", (long long)id);
	return testdb_text(f->t, q);
}

static void blob_path(fx *f, const char *key, char *out, size_t n)
{
	snprintf(out, n, "%s/sha256/%.2s/%s.zst", f->dir, key, key + 2);
}

/* A blob file no row names, last written `hours` ago. */
static void orphan_aged(fx *f, const char *bytes, char key[BLOB_KEY_HEX + 1], int hours)
{
	char path[1024];
	pr_error err = PR_ERROR_INIT;
	struct timespec old[2];

	assert_int_equal(blob_put(f->bs, key, bytes, strlen(bytes), NULL, &err), 0);
	blob_path(f, key, path, sizeof(path));
	old[0].tv_sec = old[1].tv_sec = time(NULL) - hours * 3600;
	old[0].tv_nsec = old[1].tv_nsec = 0;
	assert_int_equal(utimensat(AT_FDCWD, path, old, 0), 0);
}

/* A blob file no row names, last written two days ago. */
static void orphan(fx *f, const char *bytes, char key[BLOB_KEY_HEX + 1])
{
	orphan_aged(f, bytes, key, 48);
}

static bool blob_there(fx *f, const char *key)
{
	char path[1024];
	struct stat st;

	blob_path(f, key, path, sizeof(path));
	return stat(path, &st) == 0;
}

/*
 * An ingest storing bytes that are already there as an orphan (blob_put
 * finds the file and writes nothing) holds the shared lock on the key
 * until its row commits: the sweep must wait, see the row and keep the
 * file. A plain orphan beside it still goes (older than the capture
 * stored first: one newer than every row is kept, see
 * test_orphans_newer_than_every_row_are_kept).
 */
static void test_the_orphan_sweep_never_deletes_a_blob_an_ingest_is_pointing_a_row_at(void **state)
{
	fx *f = *state;
	char busy[BLOB_KEY_HEX + 1], dead[BLOB_KEY_HEX + 1], q[1024];
	PGconn *side = side_open(f);
	retention_result r;
	char *side_err;

	orphan(f, "bytes an ingest is storing again", busy);
	orphan(f, "bytes nobody wants", dead);
	capture(f, 1, 3, 100, "hot");
	snprintf(q, sizeof(q),
		 "begin; select pg_advisory_xact_lock_shared(" BLOB_LOCK_CLASS ", hashtext('%s'));"
		 " insert into profiles (service_id, profile_type, release, "
		 "captured_at, value_type, value_unit,"
		 " total_value, sample_count, blob_key, format) values (%lld, "
		 "'cpu', 'r1', now(), 'samples',"
		 " 'count', 1, 1, '%s', 'folded')",
		 busy, (long long)f->sid, busy);
	side_exec(side, q);
	assert_int_equal(PQsendQuery(side, "select pg_sleep(1.5); commit"), 1);

	assert_int_equal(run(f, &r), 0);
	side_err = side_drain(side);
	PQfinish(side);
	if (side_err)
		fail_msg("the ingest's transaction failed: %s", side_err);
	assert_int_equal(
		intf(f->t,
		     "select count(*) from profiles where blob_key = '%s' "
		     "and blob_deleted_at is null",
		     busy),
		1);
	assert_true(blob_there(f, busy));
	assert_false(blob_there(f, dead));
	assert_int_equal(r.orphans_deleted, 1);
}

/*
 * The sweep judges the store a chunk at a time as it walks it (so that a
 * bucket of millions of objects is never held in memory), deleting
 * behind the walk: over a store of several chunks, with blobs rows keep
 * and young orphans among the old ones, a dry run counts every old
 * orphan and deletes nothing, and the run deletes every old orphan and
 * nothing else.
 */
static void test_a_sweep_of_many_chunks_deletes_every_orphan_and_nothing_else(void **state)
{
	enum { OLD = 1234, KEPT = 300, YOUNG = 7 };
	fx *f = *state;
	static char old[OLD][BLOB_KEY_HEX + 1], kept[KEPT][BLOB_KEY_HEX + 1],
		young[YOUNG][BLOB_KEY_HEX + 1];
	pr_error err = PR_ERROR_INIT;
	retention_result r;
	retention_opts o = {AT, true, 0, NULL};
	char bytes[64];
	size_t left = 0;

	for (int i = 0; i < OLD; i++) {
		snprintf(bytes, sizeof(bytes), "an orphan, number %d", i);
		orphan(f, bytes, old[i]);
	}
	for (int i = 0; i < KEPT; i++) {
		snprintf(bytes, sizeof(bytes), "a blob a capture keeps, number %d", i);
		orphan(f, bytes, kept[i]);
		testdb_execf(f->t, "insert into profiles (service_id, profile_type, release,"
			     " captured_at, value_type, value_unit, total_value, sample_count,"
			     " blob_key, format) values (%lld, 'cpu', 'r1', now(), 'samples',"
			     " 'count', 1, 1, '%s', 'folded')", (long long)f->sid, kept[i]);
	}
	for (int i = 0; i < YOUNG; i++) {
		snprintf(bytes, sizeof(bytes), "a young orphan, number %d", i);
		assert_int_equal(blob_put(f->bs, young[i], bytes, strlen(bytes), NULL, &err), 0);
	}
	if (retention_run(&r, f->t->db, f->bs, &f->cfg, &o, &err) < 0)
		fail_msg("retention_run --dry-run: %s", err.msg);
	assert_int_equal(r.orphans_deleted, OLD);
	for (int i = 0; i < OLD; i++)
		left += blob_there(f, old[i]);
	assert_int_equal(left, OLD);

	assert_int_equal(run(f, &r), 0);
	assert_int_equal(r.orphans_deleted, OLD);
	left = 0;
	for (int i = 0; i < OLD; i++)
		left += blob_there(f, old[i]);
	assert_int_equal(left, 0);
	for (int i = 0; i < KEPT; i++)
		assert_true(blob_there(f, kept[i]));
	for (int i = 0; i < YOUNG; i++)
		assert_true(blob_there(f, young[i]));
}

/*
 * A database restored from an older backup while the store kept
 * everything since: blobs put after its newest capture (ingested 3 days
 * ago) have no row, and are not a dead ingest's. Past the grace period
 * they are kept and counted apart, and held: they stay once newer rows
 * are stored (a snapshot here). An orphan older than the newest row still
 * goes.
 */
static void test_orphans_newer_than_every_row_are_kept(void **state)
{
	fx *f = *state;
	char lost[BLOB_KEY_HEX + 1], dead[BLOB_KEY_HEX + 1], snap[BLOB_KEY_HEX + 1];
	int64_t id = capture(f, 1, 3, 100, "hot");
	int64_t ingested;
	uint64_t size = 0;
	pr_error err = PR_ERROR_INIT;
	retention_result r;

	testdb_execf(f->t,
		     "update profiles set ingested_at = now() - interval '3 days'"
		     " where id = %lld",
		     (long long)id);
	/* The macro's SQL holds a '%': an argument, not part of the format. */
	ingested = intf(f->t, "select %s from profiles where id = %lld", DB_TS_TO_US("ingested_at"),
			(long long)id);
	orphan_aged(f, "a capture stored after the backup", lost, 24);
	orphan_aged(f, "an ingest that died before the backup", dead, 120);
	assert_int_equal(blob_stored_size(f->bs, lost, &size, &err), 0);
	assert_int_equal(run(f, &r), 0);
	assert_true(blob_there(f, lost));
	assert_false(blob_there(f, dead));
	assert_int_equal(r.orphans_deleted, 1);
	assert_int_equal(r.orphans_kept_newer, 1);
	assert_int_equal(r.orphan_kept_bytes, size);
	assert_int_equal(r.db_newest_us, ingested);

	assert_int_equal(r.orphans_newly_held, 1);

	/*
	 * A snapshot stored now: the database has seen writes up to now, and
	 * the lost blob is older than that; the hold the first run took
	 * keeps it all the same, without saying so again.
	 */
	orphan_aged(f, "a snapshot's archive", snap, 1);
	testdb_execf(f->t,
		     "insert into snapshots (host, taken_at, blob_key, archive_bytes,"
		     " manifest, stored_by) values ('h', now(), '%s', 1, '{}', 'test')",
		     snap);
	assert_int_equal(run(f, &r), 0);
	assert_true(blob_there(f, lost));
	assert_true(blob_there(f, snap));
	assert_true(r.db_newest_us > ingested);
	assert_int_equal(r.orphans_deleted, 0);
	assert_int_equal(r.orphans_kept_newer, 1);
	assert_int_equal(r.orphans_newly_held, 0);
}

/*
 * Once the summary captures are gone, the row budget stops: hot captures
 * it cannot cut (summary_top 0 keeps every row) are never deleted, and the
 * result says where the rows that are left are.
 */
static void test_the_row_budget_never_deletes_hot_captures_and_says_what_is_left(void **state)
{
	fx *f = *state;
	int64_t h1, h2, s1, fo;
	retention_result r;
	char msg[1024] = "";

	f->cfg.retention.tiers.summary_top = 0;
	h1 = capture(f, 1, 5, 100, "hot");
	h2 = capture(f, 3, 4, 100, "hot");
	s1 = capture(f, 30, 3, 100, "summary");
	fo = capture(f, 40, 9, 100, "forensic");
	/* 5 + 4 + 3 + 9 = 21 rows; only s1 may go. */
	f->cfg.retention.budget_rows = 5;
	assert_int_equal(run(f, &r), 0);
	assert_string_equal(cls(f, s1), "deleted");
	assert_string_equal(cls(f, h1), "hot");
	assert_string_equal(cls(f, h2), "hot");
	assert_string_equal(cls(f, fo), "forensic");
	assert_int_equal(
		intf(f->t,
		     "select count(*) from profile_functions where profile_id in (%lld, %lld)",
		     (long long)h1, (long long)h2),
		9);
	assert_true(stored(f, h1) > 0 && stored(f, h2) > 0);
	assert_int_equal(r.budget_deleted, 1);
	assert_int_equal(r.budget_to_summary, 0);
	assert_true(r.over_budget);
	assert_int_equal(r.rows_used, 18);
	assert_int_equal(r.protected_rows, 9);
	assert_int_equal(r.uncut_hot_rows, 9);
	assert_int_equal(
		intf(f->t,
		     "select count(*) from runs where kind = 'retention' "
		     "and status = 'over_budget'"),
		1);

	/* The line the command prints says both. */
	retention_over_budget_msg(msg, sizeof(msg), &r);
	assert_true(strncmp(msg, "over budget:", 12) == 0);
	assert_non_null(strstr(msg, "18 rows (budget 5)"));
	assert_non_null(strstr(msg, "9 in protected"));
	assert_non_null(strstr(msg, "9 in hot captures the budget may not cut further"));
	assert_null(strstr(msg, "bytes of blobs"));
}

/* Judged from a time to come, evidence kept until tomorrow would look expired. */
static void test_an_at_in_the_future_is_refused_and_nothing_is_touched(void **state)
{
	fx *f = *state;
	int64_t fo = capture(f, 10, 3, 100, "forensic");
	int64_t h = capture(f, 10, 3, 100, "hot");
	int64_t now = time_now_us();
	retention_opts o = {now + 2 * DAY, false, 0, NULL};
	pr_error err = PR_ERROR_INIT;
	retention_result r;
	char when[TIME_FMT_MAX];
	int rc;

	testdb_execf(f->t, "update profiles set retain_until = now() + interval '1 day'"
			   " where id = %lld", (long long)fo);
	rc = retention_run(&r, f->t->db, f->bs, &f->cfg, &o, &err);
	assert_int_equal(rc, PR_EUSAGE);
	time_format(when, o.at_us);
	assert_non_null(strstr(err.msg, when));
	assert_non_null(strstr(err.msg, "after now"));
	assert_string_equal(cls(f, fo), "forensic");
	assert_string_equal(cls(f, h), "hot");
	assert_int_equal(intf(f->t, "select count(*) from runs"), 0);
	/* A dry run is refused the same way. */
	pr_error_clear(&err);
	o.dry_run = true;
	assert_int_equal(retention_run(&r, f->t->db, f->bs, &f->cfg, &o, &err), PR_EUSAGE);
	/* A clock a little behind the database's is fine. */
	pr_error_clear(&err);
	o.dry_run = false;
	o.at_us = time_now_us() + 60 * 1000000LL;
	assert_int_equal(retention_run(&r, f->t->db, f->bs, &f->cfg, &o, &err), 0);
	/* Both are months old by the clock: the evidence is kept, the other goes. */
	assert_string_equal(cls(f, fo), "forensic");
	assert_string_equal(cls(f, h), "deleted");
}

/*
 * A dry run waits, mid-way, on another session's row (the sweep queue
 * entry of a blob it would free). Meanwhile nightly pins a capture the dry
 * run has picked: the pin's foreign-key check must not wait on it.
 */
static void test_a_dry_run_does_not_block_a_pin_on_a_capture_it_picked(void **state)
{
	fx *f = *state;
	int64_t c = capture(f, 10, 4, 100, "hot");
	int64_t d = capture(f, 10, 4, 100, "hot");
	PGconn *holder = side_open(f), *pinner = side_open(f);
	retention_opts o = {AT, true, 0, NULL};
	pr_error err = PR_ERROR_INIT;
	retention_result r;
	char q[512], *perr, *herr;
	int rc;

	testdb_execf(f->t, "insert into findings (service_id, status) values (%lld, 'open')",
	     (long long)f->sid);
	snprintf(q, sizeof(q), "begin; insert into blob_sweep (blob_key) values ('%s')",
		 key_of(f, c));
	side_exec(holder, q);
	assert_int_equal(PQsendQuery(holder, "select pg_sleep(3); rollback"), 1);
	snprintf(q, sizeof(q),
		 "begin; select pg_sleep(1); set local lock_timeout = '1s';"
		 " insert into capture_pins (profile_id, finding_id) values (%lld, "
		 "(select max(id) from findings));"
		 " rollback",
		 (long long)d);
	assert_int_equal(PQsendQuery(pinner, q), 1);

	rc = retention_run(&r, f->t->db, f->bs, &f->cfg, &o, &err);
	perr = side_drain(pinner);
	herr = side_drain(holder);
	PQfinish(pinner);
	PQfinish(holder);
	if (rc < 0)
		fail_msg("dry run: %s", err.msg);
	if (perr)
		fail_msg("the pin waited on the dry run: %s", perr);
	free(herr);
	assert_int_equal(r.to_summary, 2);
	assert_string_equal(cls(f, c), "hot");
	assert_string_equal(cls(f, d), "hot");
}

/* The dry run's one transaction has a batch's bounds: it gives up instead of waiting on. */
static void test_a_dry_run_gives_up_on_a_lock_it_waits_for_too_long(void **state)
{
	fx *f = *state;
	int64_t c = capture(f, 10, 4, 100, "hot");
	PGconn *holder = side_open(f);
	retention_opts o = {AT, true, 0, NULL};
	pr_error err = PR_ERROR_INIT;
	retention_result r;
	PGcancel *cancel;
	char q[512], errbuf[256];
	int64_t t0;
	int rc;

	snprintf(q, sizeof(q), "begin; insert into blob_sweep (blob_key) values ('%s')",
		 key_of(f, c));
	side_exec(holder, q);
	assert_int_equal(PQsendQuery(holder, "select pg_sleep(10); rollback"), 1);
	t0 = time_now_us();
	rc = retention_run(&r, f->t->db, f->bs, &f->cfg, &o, &err);
	t0 = time_now_us() - t0;
	cancel = PQgetCancel(holder);
	PQcancel(cancel, errbuf, sizeof(errbuf));
	PQfreeCancel(cancel);
	free(side_drain(holder));
	PQfinish(holder);
	assert_int_equal(rc, PR_EDB);
	assert_non_null(strstr(err.msg, "lock timeout"));
	assert_true(t0 < 9 * 1000000LL);
	assert_string_equal(cls(f, c), "hot");
}

/*
 * A capture already evidence of an older finding, kept until before AT,
 * becomes evidence of a new finding: it is kept `forensic_days` from the
 * new finding, not dropped at the old one's end; storing the new finding
 * again changes and audits nothing.
 */
static void test_evidence_of_a_second_finding_is_kept_for_the_second_finding(void **state)
{
	fx *f = *state;
	int64_t c = capture(f, 10, 4, 500, "forensic");
	int64_t old, fid;
	char ids[96];
	finding fnd;
	pr_error err = PR_ERROR_INIT;
	retention_result r;

	testdb_execf(f->t,
	     "insert into findings (service_id, status, created_at) values (%lld, 'open',"
	     " 'epoch'::timestamptz + %lld * interval '1 microsecond')",
	     (long long)f->sid, (long long)(AT - 40 * DAY));
	old = intf(f->t, "select max(id) from findings");
	testdb_execf(f->t,
	     "update profiles set tags = jsonb_build_object('finding', '%lld'),"
	     " retain_until = 'epoch'::timestamptz + %lld * interval '1 microsecond'"
	     " where id = %lld",
	     (long long)old, (long long)(AT - DAY), (long long)c);
	testdb_execf(f->t, "insert into findings (service_id, status) values (%lld, 'open')",
	     (long long)f->sid);
	fid = intf(f->t, "select max(id) from findings");
	memset(&fnd, 0, sizeof(fnd));
	fnd.id = fid;
	snprintf(ids, sizeof(ids), "{\"baseline\":[],\"current\":[%lld]}", (long long)c);
	fnd.capture_ids = ids;
	for (int i = 0; i < 2; i++)
		assert_int_equal(
			evidence_pin_finding(f->t->db, &fnd, 30 * DAY, NULL, NULL, &err), 0);
	assert_int_equal(intf(f->t,
			      "select count(*) from audit_log where action = 'pin'"
			      " and object = 'finding:%lld'",
			      (long long)fid),
			 1);
	assert_int_equal(intf(f->t,
			      "select count(*) from profiles p, findings fi where p.id = %lld"
			      " and fi.id = %lld and p.retain_until = fi.created_at"
			      " + interval '30 days'",
			      (long long)c, (long long)fid),
			 1);
	assert_int_equal(run(f, &r), 0);
	assert_string_equal(cls(f, c), "forensic");
	assert_int_equal(r.to_summary, 0);
}

/*
 * Retention runs beside the nightly: a capture the analysis read may be
 * cut to a summary before the night pins it. It still becomes evidence
 * (its top rows are kept for good), and the pin says its raw profile is
 * gone instead of leaving a forensic capture that looks whole.
 */
static void test_evidence_cut_to_a_summary_before_its_pin_is_counted(void **state)
{
	fx *f = *state;
	int64_t c = capture(f, 10, 4, 500, "hot"), whole = capture(f, 1, 4, 500, "hot");
	int64_t fid, cut = -1;
	char ids[96];
	finding fnd;
	pr_error err = PR_ERROR_INIT;
	retention_result r;

	testdb_execf(f->t, "insert into findings (service_id, status) values (%lld, 'open')",
		     (long long)f->sid);
	fid = intf(f->t, "select max(id) from findings");
	assert_int_equal(run(f, &r), 0);
	assert_string_equal(cls(f, c), "summary");
	memset(&fnd, 0, sizeof(fnd));
	fnd.id = fid;
	snprintf(ids, sizeof(ids), "{\"baseline\":[],\"current\":[%lld,%lld]}", (long long)c,
		 (long long)whole);
	fnd.capture_ids = ids;
	assert_int_equal(evidence_pin_finding(f->t->db, &fnd, 0, &cut, NULL, &err), 0);
	assert_int_equal(cut, 1);
	assert_string_equal(cls(f, c), "forensic");
	assert_string_equal(cls(f, whole), "forensic");
	/* Pinned again: nothing changes, nothing is counted twice. */
	assert_int_equal(evidence_pin_finding(f->t->db, &fnd, 0, &cut, NULL, &err), 0);
	assert_int_equal(cut, 0);
}

/*
 * The row budget deletes whole summary captures, baseline members among
 * them, beside the nightly: a baseline capture the analysis read may be
 * gone when the night pins it. The pin failed the foreign key and rolled
 * back every finding and page of the night; it now pins what is left
 * and counts what is gone.
 */
static void test_a_baseline_capture_deleted_before_its_pin_is_counted_not_fatal(void **state)
{
	fx *f = *state;
	int64_t kept = capture(f, 10, 4, 500, "summary"), gone = capture(f, 9, 4, 500, "summary");
	int64_t fid, cut = -1, deleted = -1;
	char ids[128];
	finding fnd;
	pr_error err = PR_ERROR_INIT;

	testdb_execf(f->t, "insert into findings (service_id, status) values (%lld, 'open')",
		     (long long)f->sid);
	fid = intf(f->t, "select max(id) from findings");
	testdb_execf(f->t, "delete from profiles where id = %lld", (long long)gone);
	memset(&fnd, 0, sizeof(fnd));
	fnd.id = fid;
	snprintf(ids, sizeof(ids), "{\"baseline\":[%lld,%lld],\"current\":[]}",
		 (long long)kept, (long long)gone);
	fnd.capture_ids = ids;
	assert_int_equal(evidence_pin_finding(f->t->db, &fnd, 0, &cut, &deleted, &err), 0);
	assert_int_equal(deleted, 1);
	assert_int_equal(intf(f->t, "select count(*) from capture_pins where finding_id = %lld"
				    " and profile_id = %lld", (long long)fid, (long long)kept), 1);
}

/* Ingest `path` for svc as a capture taken at `at_us`, with `again`; returns ingest_file's code. */
static int ingest_at(fx *f, ingest_result *res, const char *path, int64_t at_us, bool again)
{
	profile_limits lim;
	ingest_request req = {0};
	pr_error err = PR_ERROR_INIT;
	int rc;

	profile_limits_default(&lim);
	req.path = path;
	req.service = "svc";
	req.release = "r1";
	req.time_us = at_us;
	req.again = again;
	if ((rc = ingest_file(res, f->t->db, f->bs, &req, &lim, &err)) < 0)
		print_error("ingest_file: %s\n", err.msg);
	return rc;
}

/*
 * A capture retention deleted, whose file its drop folder still holds,
 * came back at every collect as a new capture, to be deleted again by
 * the next retention: every night, with an ingest and a delete audited.
 * Three nights: stored once, deleted once, then skipped, and nothing
 * audited after the first.
 */
static void test_bytes_retention_deleted_are_never_stored_again(void **state)
{
	fx *f = *state;
	char path[600];
	FILE *fp;
	ingest_result res;
	retention_result r;
	int64_t taken = AT - 30 * DAY, audit = 0;

	f->cfg.retention.tiers.summary_us = 16 * DAY;
	snprintf(path, sizeof(path), "%s.old.folded", f->dir);
	assert_non_null(fp = fopen(path, "w"));
	fputs("main;a 50\nmain;b 30\n", fp);
	assert_int_equal(fclose(fp), 0);
	for (int night = 0; night < 3; night++) {
		assert_int_equal(ingest_at(f, &res, path, taken, false), 0);
		assert_false(res.already);
		assert_int_equal(res.retention_deleted, night > 0);
		assert_int_equal(res.capture_id != 0, night == 0);
		assert_int_equal(run(f, &r), 0);
		assert_int_equal(r.deleted, night == 0);
		if (night == 0)
			audit = intf(f->t, "select count(*) from audit_log");
	}
	assert_int_equal(intf(f->t, "select count(*) from profiles"), 0);
	assert_int_equal(intf(f->t, "select count(*) from audit_log where action = 'ingest'"), 1);
	assert_int_equal(
		intf(f->t, "select count(*) from audit_log where action = 'retention.delete'"), 1);
	/* Only the runs' own rows since: nothing about a capture. */
	assert_int_equal(intf(f->t,
			      "select count(*) from audit_log where action <> 'retention'"
			      " and id > %lld",
			      (long long)audit),
			 0);
	assert_int_equal(res.deleted_captured_us, taken);
	assert_true(res.deleted_at_us > 0);

	/* --again stores them; a capture cut to a summary stays "already stored". */
	assert_int_equal(ingest_at(f, &res, path, AT - 10 * DAY, true), 0);
	assert_true(res.capture_id != 0 && !res.retention_deleted);
	assert_int_equal(run(f, &r), 0);
	assert_int_equal(r.to_summary, 1);
	assert_int_equal(ingest_at(f, &res, path, AT - 10 * DAY, false), 0);
	assert_true(res.already && !res.retention_deleted);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_byte_budget_moves_the_oldest_unprotected_captures_to_summary_first,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_byte_budget_passes_over_a_blob_a_protected_capture_keeps, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_evidence_cut_to_a_summary_before_its_pin_is_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_baseline_capture_deleted_before_its_pin_is_counted_not_fatal, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_row_budget_cuts_hot_captures_then_deletes_the_oldest_summary_ones,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_protected_data_alone_over_the_budget_is_flagged_and_kept, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_pin_taken_by_another_session_during_the_run_is_never_undone, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_summary_capture_stays_a_baseline_member_without_its_other_row, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_the_orphan_sweep_never_deletes_a_blob_an_ingest_is_pointing_a_row_at,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_sweep_of_many_chunks_deletes_every_orphan_and_nothing_else, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_orphans_newer_than_every_row_are_kept, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_the_row_budget_never_deletes_hot_captures_and_says_what_is_left, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_an_at_in_the_future_is_refused_and_nothing_is_touched, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_dry_run_does_not_block_a_pin_on_a_capture_it_picked, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_dry_run_gives_up_on_a_lock_it_waits_for_too_long, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_evidence_of_a_second_finding_is_kept_for_the_second_finding, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_bytes_retention_deleted_are_never_stored_again,
						setup, teardown),
	};
	return cmocka_run_group_tests_name("retention", tests, testdb_group_setup,
					   testdb_group_teardown);
}
