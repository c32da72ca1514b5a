/*
 * test_db.c: the PostgreSQL index against a real server: migrations,
 * services, captures and their function rows, transactions, locks and
 * error messages. Each test gets its own database (tests/support/testdb).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "pipeline/db.h"
#include "pipeline/migrate.h"
#include "pipeline/profile.h"
#include "tests/support/testdb.h"

#define KEY_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define KEY_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define KEY_C "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"

/* 2025-11-29T10:12:25.123456Z: microseconds must survive the trip. */
#define T0 1764411145123456LL

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/*
 * A small profile: main -> foo (1 sample, 10 ns), main -> foo -> bar (2, 20), main -> bar (1, 5).
 */
static profile *small_profile(void)
{
	static const char *types[] = {"samples", "cpu"};
	static const char *units[] = {"count", "nanoseconds"};
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	uint32_t main_, foo, bar;

	assert_int_equal(profile_new(&p, PROFILE_FMT_FOLDED, "small.folded", NULL, &err), 0);
	assert_int_equal(profile_set_value_types(p, 2, types, units, &err), 0);
	assert_int_equal(profile_intern(p, &main_, "main", 4, "main.c", 6, &err), 0);
	assert_int_equal(profile_intern(p, &foo, "foo", 3, "", 0, &err), 0);
	assert_int_equal(profile_intern(p, &bar, "bar", 3, "b.c", 3, &err), 0);
	{
		uint32_t s1[] = {main_, foo}, s2[] = {main_, foo, bar}, s3[] = {main_, bar};
		int64_t v1[] = {1, 10}, v2[] = {2, 20}, v3[] = {1, 5};
		assert_int_equal(profile_add_sample(p, s1, 2, v1, &err), 0);
		assert_int_equal(profile_add_sample(p, s2, 3, v2, &err), 0);
		assert_int_equal(profile_add_sample(p, s3, 2, v3, &err), 0);
	}
	return p;
}

static void meta_init(db_capture *m, int64_t service_id, const char *key)
{
	memset(m, 0, sizeof(*m));
	m->service_id = service_id;
	m->service = (char *)"svc";
	m->profile_type = (char *)"cpu";
	m->release = (char *)"v1";
	m->captured_at_us = T0;
	m->value_type = (char *)"cpu";
	m->value_unit = (char *)"nanoseconds";
	m->blob_key = (char *)key;
	m->blob_bytes = 1234;
	m->format = (char *)"folded";
}

/* Insert `p` (summarised on its primary column) as a capture; returns its id. */
static int insert_profile(testdb *t, const db_capture *m, profile *p, int64_t *id, pr_error *err)
{
	profile_summary s = {0};
	pr_error perr = PR_ERROR_INIT;
	int rc;

	assert_int_equal(profile_summarize(&s, p, p->primary, &perr), 0);
	rc = db_capture_insert(t->db, id, m, p, &s, err);
	profile_summary_release(&s);
	return rc;
}

static int64_t insert_small(testdb *t, int64_t service_id, const char *key, const char *release,
			    int64_t at_us)
{
	pr_error err = PR_ERROR_INIT;
	profile *p = small_profile();
	db_capture m;
	int64_t id = 0;

	meta_init(&m, service_id, key);
	m.release = (char *)release;
	m.captured_at_us = at_us;
	if (insert_profile(t, &m, p, &id, &err) < 0)
		fail_msg("%s", err.msg);
	profile_free(p);
	assert_true(id > 0);
	return id;
}

/* ---- migrations ------------------------------------------------------ */

static void test_migrate_twice_applies_nothing_the_second_time(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	int applied = -1, version = -1;

	assert_int_equal(db_schema_version(t->db, &version, &err), 0);
	assert_int_equal(version, 0);
	assert_int_equal(db_migrate(t->db, &applied, &err), 0);
	assert_int_equal(applied, (int)migrations_count);
	assert_int_equal(db_schema_version(t->db, &version, &err), 0);
	assert_int_equal(version, migrations[migrations_count - 1].version);
	assert_int_equal(db_migrate(t->db, &applied, &err), 0);
	assert_int_equal(applied, 0);
	assert_int_equal(testdb_int(t, "select count(*) from schema_migrations"),
			 (int64_t)migrations_count);
	assert_string_equal(
		testdb_text(t, "select name from schema_migrations order by version limit 1"),
		migrations[0].name);
}

/*
 * A schema a newer profreg migrated is refused, whatever this binary
 * knows: "current" only asked whether every migration it knows is there.
 */
static void test_a_schema_a_newer_profreg_migrated_is_refused(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	db *d = NULL;
	int version = 0, applied = 0;
	bool current = false;

	assert_int_equal(db_migrate(t->db, &applied, &err), 0);
	testdb_execf(t, "insert into schema_migrations (version, name) values (%d, '999_later')",
		     migrations[migrations_count - 1].version + 1);
	assert_int_equal(db_open_check(&d, t->conninfo, &version, &current, &err), PR_EDB);
	assert_null(d);
	assert_non_null(strstr(err.msg, "newer than this profreg knows"));
	pr_error_clear(&err);
	assert_int_equal(db_schema_check(t->db, &version, &current, &err), PR_EDB);
	assert_int_equal(version, migrations[migrations_count - 1].version + 1);
}

/*
 * Migrations run as the schema's owner. A superuser's (after an upgrade)
 * made the new tables its own, and the owner could no longer grant or
 * revoke on them; a role that cannot act as the owner is told who can,
 * not "permission denied for schema public".
 */
static void test_migrations_run_as_the_schema_s_owner(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	char owner[64], team[64], conninfo[1024];
	db *as_team = NULL;
	int applied = 0;

	snprintf(owner, sizeof(owner), "profreg_t_owner_%d", (int)getpid());
	snprintf(team, sizeof(team), "profreg_t_team_%d", (int)getpid());
	testdb_execf(t, "create role %s nologin", owner);
	testdb_execf(t, "create role %s login", team);
	testdb_execf(t, "grant create, usage on schema public to %s", owner);
	testdb_execf(t, "grant usage on schema public to %s", team);
	testdb_execf(t, "set role %s", owner);
	testdb_execf(t, "create table schema_migrations (version int primary key,"
			" name text not null, applied_at timestamptz not null default now())");
	testdb_execf(t, "reset role");
	assert_int_equal(db_migrate(t->db, &applied, &err), 0);
	assert_int_equal(applied, (int)migrations_count);
	assert_int_equal(testdb_int(t, "select count(*) from pg_tables where schemaname ="
				       " current_schema() and tableowner <> current_user"),
			 testdb_int(t, "select count(*) from pg_tables where schemaname ="
				       " current_schema()"));
	assert_int_equal(testdb_int(t, "select count(*) from pg_tables where schemaname ="
				       " current_schema() and tableowner = current_user"), 0);

	testdb_execf(t, "grant select on schema_migrations to %s", team);
	testdb_execf(t, "delete from schema_migrations where version = %d",
		     migrations[migrations_count - 1].version);
	snprintf(conninfo, sizeof(conninfo), "%s user=%s", t->conninfo, team);
	assert_int_equal(db_open(&as_team, conninfo, &err), 0);
	assert_int_equal(db_migrate(as_team, &applied, &err), PR_EDB);
	assert_non_null(strstr(err.msg, "run 'profreg db migrate' as role"));
	assert_non_null(strstr(err.msg, owner));
	db_close(as_team);
	testdb_execf(t, "drop owned by %s, %s cascade", owner, team);
	testdb_execf(t, "drop role %s", owner);
	testdb_execf(t, "drop role %s", team);
}

/* The session's TimeZone and client_min_messages, as "UTC warning". */
static const char *session_settings(db *d, char out[64])
{
	struct pg_result *res = NULL;
	pr_error err = PR_ERROR_INIT;

	if (db_exec(d, &res, &err, "read the settings",
		    "select current_setting('TimeZone') || ' ' ||"
		    " current_setting('client_min_messages')", 0, NULL) < 0)
		fail_msg("%s", err.msg);
	snprintf(out, 64, "%s", db_get_text(res, 0, 0));
	db_result_free(res);
	return out;
}

/*
 * How a command connects: the session's settings and the schema check in
 * one round trip. On an empty database the check fails inside the same
 * implicit transaction as the settings, which that failure undoes: they
 * must be set again. Then a migrated database reads as current.
 */
static void test_open_check_sets_the_session_up_with_or_without_a_schema(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	int version = -1;
	bool current = true;
	char got[64];
	db *d = NULL;

	assert_int_equal(db_open_check(&d, t->conninfo, &version, &current, &err), 0);
	assert_int_equal(version, 0);
	assert_false(current);
	assert_string_equal(session_settings(d, got), "UTC warning");
	assert_int_equal(db_migrate(d, NULL, &err), 0);
	db_close(d);
	d = NULL;

	assert_int_equal(db_open_check(&d, t->conninfo, &version, &current, &err), 0);
	assert_int_equal(version, migrations[migrations_count - 1].version);
	assert_true(current);
	assert_string_equal(session_settings(d, got), "UTC warning");
	db_close(d);
	d = NULL;

	/* An older schema: not current, and the version says how old. */
	assert_int_equal(testdb_int(t, "with d as (delete from schema_migrations where version ="
				       " (select max(version) from schema_migrations)"
				       " returning 1) select count(*) from d"), 1);
	assert_int_equal(db_open_check(&d, t->conninfo, &version, &current, &err), 0);
	assert_int_equal(version, migrations[migrations_count - 2].version);
	assert_false(current);
	db_close(d);
}

static void test_open_check_failures_say_which_step(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	int version = -1;
	bool current = true;
	db *d = (db *)&err; /* set to NULL on failure */
	char bad[512];

	snprintf(bad, sizeof(bad), "%s dbname=profreg_no_such_database", t->conninfo);
	assert_int_equal(db_open_check(&d, bad, &version, &current, &err), PR_EDB);
	assert_null(d);
	assert_non_null(strstr(err.msg, "cannot connect to the database: "));
	assert_non_null(strstr(err.msg, "profreg_no_such_database"));
	/* What to do next, without libpq's severity in the middle. */
	assert_non_null(strstr(err.msg, "does not exist; create it (createdb), then run "
					"'profreg db init'"));
	assert_null(strstr(err.msg, "FATAL"));

	/* No server on the socket: libpq's hint is kept, on the same line. */
	pr_error_clear(&err);
	assert_int_equal(db_open_check(&d, "host=/nonexistent-profreg-dir port=5 user=u",
				       &version, &current, &err), PR_EDB);
	assert_non_null(strstr(err.msg, "No such file or directory; is the server running"));
	assert_null(strchr(err.msg, '\n'));

	/* A schema_migrations the role may not read: the check's own message. */
	assert_int_equal(testdb_int(t, "create table schema_migrations (version int);"
				       " revoke all on schema_migrations from public;"
				       " drop role if exists profreg_test_noread;"
				       " create role profreg_test_noread login; select 1"), 1);
	snprintf(bad, sizeof(bad), "%s user=profreg_test_noread", t->conninfo);
	pr_error_clear(&err);
	d = (db *)&err;
	assert_int_equal(db_open_check(&d, bad, &version, &current, &err), PR_EDB);
	assert_null(d);
	assert_non_null(strstr(err.msg, "database: cannot read the schema version: "));
	assert_non_null(strstr(err.msg, "permission denied"));
	assert_int_equal(testdb_int(t, "drop role profreg_test_noread; select 1"), 1);
}

#define RACERS 4

typedef struct racer {
	const char *conninfo;
	pthread_barrier_t *start;
	int rc, applied;
	char msg[PR_ERROR_MSG_MAX];
} racer;

static void *race_migrate(void *arg)
{
	racer *r = arg;
	pr_error err = PR_ERROR_INIT;
	db *d = NULL;

	r->rc = db_open(&d, r->conninfo, &err);
	pthread_barrier_wait(r->start);
	if (r->rc == 0)
		r->rc = db_migrate(d, &r->applied, &err);
	snprintf(r->msg, sizeof(r->msg), "%s", err.msg);
	db_close(d);
	return NULL;
}

static void test_concurrent_migrations_apply_each_migration_once(void **state)
{
	testdb *t = *state;
	pthread_t th[RACERS];
	pthread_barrier_t start;
	racer r[RACERS];
	int total = 0;

	pthread_barrier_init(&start, NULL, RACERS);
	for (int i = 0; i < RACERS; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].conninfo = t->conninfo;
		r[i].start = &start;
		assert_int_equal(pthread_create(&th[i], NULL, race_migrate, &r[i]), 0);
	}
	for (int i = 0; i < RACERS; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&start);
	for (int i = 0; i < RACERS; i++) {
		if (r[i].rc != 0)
			fail_msg("racer %d: %s", i, r[i].msg);
		total += r[i].applied;
	}
	assert_int_equal(total, (int)migrations_count);
	assert_int_equal(testdb_int(t, "select count(*) from schema_migrations"),
			 (int64_t)migrations_count);
	assert_int_equal(
		testdb_int(t,
			   "select count(*) from pg_tables where tablename = 'profile_vectors'"),
		1);
}

/* ---- services -------------------------------------------------------- */

/*
 * The per-capture and per-baseline arrays and the pairs are compressed
 * with lz4 (migrations 026 and 027; Debian's server has it): pglz was
 * ingest's largest cost in the server.
 */
static void test_vector_columns_are_compressed_with_lz4(void **state)
{
	testdb *t = *state;

	assert_int_equal(testdb_int(t, "select count(*) from pg_attribute"
				       " where attrelid = 'profile_vectors'::regclass"
				       " and attcompression = 'l'"),
			 4);
	assert_int_equal(testdb_int(t, "select count(*) from pg_attribute"
				       " where attrelid = 'baseline_vectors'::regclass"
				       " and attcompression = 'l'"),
			 9);
}

static void test_service_add_enable_disable_get_and_list(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	db_service s = {0}, *list = NULL;
	size_t n = 0;
	int64_t before = now_us();

	assert_int_equal(db_service_add(t->db, "checkout", "payments", &err), 0);
	assert_int_equal(db_service_add(t->db, "Auth.v2_x-y", NULL, &err), 0);

	assert_int_equal(db_service_get(t->db, &s, "checkout", &err), 0);
	assert_true(s.id > 0);
	assert_string_equal(s.name, "checkout");
	assert_string_equal(s.team, "payments");
	assert_false(s.enabled); /* opt-in */
	assert_true(s.created_at_us > before - 60000000 && s.created_at_us < now_us() + 60000000);
	db_service_release(&s);

	assert_int_equal(db_service_set_enabled(t->db, "checkout", true, &err), 0);
	assert_int_equal(db_service_get(t->db, &s, "checkout", &err), 0);
	assert_true(s.enabled);
	db_service_release(&s);
	assert_int_equal(db_service_set_enabled(t->db, "checkout", false, &err), 0);
	assert_int_equal(db_service_get(t->db, &s, "checkout", &err), 0);
	assert_false(s.enabled);
	db_service_release(&s);

	assert_int_equal(db_service_list(t->db, &list, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(list[0].name, "Auth.v2_x-y"); /* byte order: upper case first */
	assert_string_equal(list[0].team, "");
	assert_string_equal(list[1].name, "checkout");
	for (size_t i = 0; i < n; i++)
		db_service_release(&list[i]);
	free(list);
}

static void test_empty_service_list_is_null_and_zero(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	db_service *list = (db_service *)&err;
	size_t n = 99;

	assert_int_equal(db_service_list(t->db, &list, &n, &err), 0);
	assert_null(list);
	assert_int_equal(n, 0);
}

static void test_duplicate_service_is_eexists_and_names_it(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;

	assert_int_equal(db_service_add(t->db, "checkout", NULL, &err), 0);
	assert_int_equal(db_service_add(t->db, "checkout", "other", &err), PR_EEXISTS);
	assert_string_equal(err.msg, "service 'checkout' already exists");
	assert_int_equal(testdb_int(t, "select count(*) from services"), 1);
}

static void test_invalid_service_names_are_usage_errors(void **state)
{
	static const char *bad[] = {
		"", "-lead", ".dot", "_under", "with space", "a/b", "semi;colon", "quote'd",
		"na\xc3\xafve", "tab\there", "new\nline",
		("x123456789012345678901234567890123456789012345678901234567890123456789"
		 "0123456789012345678901234567890123456789012345678901234567890"), /* 129 */
	};
	testdb *t = *state;
	char max[129];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pr_error err = PR_ERROR_INIT;
		assert_int_equal(db_service_add(t->db, bad[i], NULL, &err), PR_EUSAGE);
		assert_non_null(strstr(err.msg, "invalid service name '"));
		assert_null(strchr(err.msg, '\n'));
	}
	assert_int_equal(testdb_int(t, "select count(*) from services"), 0);
	memset(max, 'm', 128);
	max[128] = '\0';
	{
		pr_error err = PR_ERROR_INIT;
		assert_int_equal(db_service_add(t->db, max, NULL, &err), 0);
	}
}

static void test_unknown_service_is_not_found(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	db_service s = {0};

	assert_int_equal(db_service_get(t->db, &s, "nope", &err), PR_ENOTFOUND);
	assert_string_equal(err.msg, "service 'nope' not found");
	pr_error_clear(&err);
	assert_int_equal(db_service_set_enabled(t->db, "nope", true, &err), PR_ENOTFOUND);
	assert_string_equal(err.msg, "service 'nope' not found");
	assert_int_equal(testdb_int(t, "select count(*) from audit_log"), 0);
}

static void test_service_changes_are_audited(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;

	assert_int_equal(db_service_add(t->db, "checkout", "payments", &err), 0);
	assert_int_equal(db_service_set_enabled(t->db, "checkout", true, &err), 0);
	assert_int_equal(db_service_set_enabled(t->db, "checkout", false, &err), 0);
	assert_int_equal(testdb_int(t, "select count(*) from audit_log"), 3);
	assert_string_equal(testdb_text(t,
					"select string_agg(action, ',' order by id) from audit_log"
					" where object = 'service:checkout'"),
			    "service.add,service.enable,service.disable");
	assert_string_equal(
		testdb_text(t,
			    "select detail->>'team' from audit_log where action = 'service.add'"),
		"payments");
	assert_string_equal(testdb_text(t, "select detail->>'was_enabled' from audit_log"
					   " where action = 'service.disable'"), "true");
	assert_int_equal(
		testdb_int(t, "select count(*) from audit_log where actor = '' or at is null"), 0);
}

/* ---- captures -------------------------------------------------------- */

static void test_capture_round_trips_row_and_function_numbers(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	profile *p = small_profile();
	db_capture m, c = {0};
	db_func_row *rows = NULL;
	size_t n = 0;
	int64_t sid = testdb_add_service(t, "svc"), id = 0, before = now_us();

	meta_init(&m, sid, KEY_A);
	m.commit_sha = (char *)"0123456789abcdef0123456789abcdef01234567";
	m.host = (char *)"web-1";
	m.duration_ns = 10000000000LL;
	m.period = 10000000;
	m.period_type = (char *)"cpu";
	m.period_unit = (char *)"nanoseconds";
	m.retention_class = (char *)"forensic";
	m.retain_until_us = 253402300799999999LL; /* 9999-12-31T23:59:59.999999Z */
	m.tags_json = (char *)"{\"env\": \"prod\"}";
	m.function_count = 999; /* ignored: comes from the summary */
	m.total_value = 999;
	if (insert_profile(t, &m, p, &id, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(id > 0);

	assert_int_equal(db_capture_get(t->db, &c, id, &err), 0);
	assert_int_equal(c.id, id);
	assert_int_equal(c.service_id, sid);
	assert_string_equal(c.service, "svc");
	assert_string_equal(c.profile_type, "cpu");
	assert_string_equal(c.release, "v1");
	assert_string_equal(c.commit_sha, m.commit_sha);
	assert_string_equal(c.host, "web-1");
	assert_int_equal(c.captured_at_us, T0);
	assert_int_equal(c.duration_ns, 10000000000LL);
	assert_int_equal(c.period, 10000000);
	assert_string_equal(c.period_type, "cpu");
	assert_string_equal(c.period_unit, "nanoseconds");
	assert_string_equal(c.value_type, "cpu");
	assert_string_equal(c.value_unit, "nanoseconds");
	assert_int_equal(c.total_value, 35);
	assert_int_equal(c.sample_count, 4);
	assert_int_equal(c.function_count, 3);
	assert_string_equal(c.blob_key, KEY_A);
	assert_int_equal(c.blob_bytes, 1234);
	assert_string_equal(c.format, "folded");
	assert_string_equal(c.retention_class, "forensic");
	assert_int_equal(c.retain_until_us, 253402300799999999LL);
	assert_string_equal(c.tags_json, "{\"env\": \"prod\"}");
	assert_true(c.ingested_at_us > before - 60000000 && c.ingested_at_us < now_us() + 60000000);
	db_capture_release(&c);

	assert_int_equal(db_capture_top(t->db, &rows, &n, id, 0, &err), 0);
	assert_int_equal(n, 3);
	/* bar: leaf of 20 + 5; foo: leaf of 10, on stacks worth 30; main: never a leaf. */
	assert_string_equal(rows[0].name, "bar");
	assert_string_equal(rows[0].file, "b.c");
	assert_int_equal(rows[0].self_value, 25);
	assert_int_equal(rows[0].total_value, 25);
	assert_true(rows[0].self_share == 25.0 / 35.0);
	assert_true(rows[0].total_share == 25.0 / 35.0);
	assert_string_equal(rows[1].name, "foo");
	assert_string_equal(rows[1].file, "");
	assert_int_equal(rows[1].self_value, 10);
	assert_int_equal(rows[1].total_value, 30);
	assert_true(rows[1].self_share == 10.0 / 35.0);
	assert_true(rows[1].total_share == 30.0 / 35.0);
	assert_string_equal(rows[2].name, "main");
	assert_string_equal(rows[2].file, "main.c");
	assert_int_equal(rows[2].self_value, 0);
	assert_int_equal(rows[2].total_value, 35);
	assert_true(rows[2].self_share == 0.0);
	assert_true(rows[2].total_share == 1.0);
	db_func_rows_free(rows, n);

	assert_int_equal(db_capture_top(t->db, &rows, &n, id, 2, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(rows[1].name, "foo");
	db_func_rows_free(rows, n);

	/* The denormalised columns agree with the capture. */
	assert_int_equal(testdb_int(t, "select count(*) from profile_functions pf join profiles p"
				       " on p.id = pf.profile_id where "
				       "pf.captured_at = p.captured_at"
				       " and pf.service_id = p.service_id and "
				       "pf.profile_type = p.profile_type"), 3);
	profile_free(p);
}

static void test_times_round_trip_to_the_microsecond(void **state)
{
	static const int64_t times[] = {T0, T0 + 1, -1, -1234567, 1, 999999, -62135596800000000LL,
					253402300799999999LL};
	static const char *const keys[] = {
		"0000000000000000000000000000000000000000000000000000000000000001",
		"0000000000000000000000000000000000000000000000000000000000000002",
		"0000000000000000000000000000000000000000000000000000000000000003",
		"0000000000000000000000000000000000000000000000000000000000000004",
		"0000000000000000000000000000000000000000000000000000000000000005",
		"0000000000000000000000000000000000000000000000000000000000000006",
		"0000000000000000000000000000000000000000000000000000000000000007",
		"0000000000000000000000000000000000000000000000000000000000000008",
	};
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	int64_t sid = testdb_add_service(t, "svc");

	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
		db_capture c = {0};
		int64_t id = insert_small(t, sid, keys[i], "v1", times[i]);
		assert_int_equal(db_capture_get(t->db, &c, id, &err), 0);
		assert_int_equal(c.captured_at_us, times[i]);
		db_capture_release(&c);
	}
	/* And they are real instants: the SQL side agrees. */
	assert_string_equal(testdb_text(t, "select to_char(captured_at at time zone 'UTC',"
					   " 'YYYY-MM-DD HH24:MI:SS.US') from profiles "
					   "where blob_key like '%1'"),
			    "2025-11-29 10:12:25.123456");
}

static void test_unknown_fields_are_stored_as_null_and_read_as_zero(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	int64_t sid = testdb_add_service(t, "svc"), id = insert_small(t, sid, KEY_A, "v1", T0);
	db_capture c = {0};

	assert_int_equal(db_capture_get(t->db, &c, id, &err), 0);
	assert_null(c.commit_sha);
	assert_null(c.host);
	assert_null(c.period_type);
	assert_int_equal(c.duration_ns, 0);
	assert_int_equal(c.retain_until_us, 0);
	assert_string_equal(c.retention_class, "hot");
	assert_string_equal(c.tags_json, "{}");
	db_capture_release(&c);
	assert_int_equal(testdb_int(t, "select count(*) from profiles where duration_ns is null"
				       " and retain_until is null and commit_sha is null"), 1);
}

static const char *const hostile_names[] = {
	"tab\there",
	"new\nline",
	"carriage\rreturn",
	"back\\slash",
	"\\N",
	"\\.",
	"trailing backslash\\",
	"\\t not a tab",
	"quotes ' and \" and `",
	"std::vector<int>::operator[](unsigned long) const",
	"na\xc3\xafve \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80",
	"%s %n %x",
	"semi;colon, comma",
};

static void test_hostile_and_huge_function_names_round_trip_exactly(void **state)
{
	enum { NH = sizeof(hostile_names) / sizeof(hostile_names[0]) };
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	profile_summary s = {0};
	db_func_row *rows = NULL;
	db_capture m;
	size_t n = 0, huge = PROFILE_DEFAULT_MAX_STRING;
	char *long_name = malloc(huge + 1), *long_file = malloc(huge + 1);
	uint32_t ids[NH + 2];
	int64_t sid = testdb_add_service(t, "svc"), id = 0, id2 = 0;
	static const char *types[] = {"cpu"};
	static const char *units[] = {"nanoseconds"};
	bool seen[NH + 2] = {0};

	assert_non_null(long_name);
	assert_non_null(long_file);
	for (size_t i = 0; i < huge; i++) {
		long_name[i] = (char)('a' + i % 26);
		long_file[i] = (char)('A' + i % 26);
	}
	long_name[huge] = long_file[huge] = '\0';
	long_name[100] = '\t'; /* escapes inside a long name too */
	long_file[200] = '\\';

	assert_int_equal(profile_new(&p, PROFILE_FMT_FOLDED, "hostile", NULL, &err), 0);
	assert_int_equal(profile_set_value_types(p, 1, types, units, &err), 0);
	for (size_t i = 0; i < NH; i++)
		assert_int_equal(profile_intern(p, &ids[i], hostile_names[i],
						strlen(hostile_names[i]), "f\tile\n.c", 8, &err),
				 0);
	assert_int_equal(profile_intern(p, &ids[NH], long_name, huge, "", 0, &err), 0);
	assert_int_equal(profile_intern(p, &ids[NH + 1], "short", 5, long_file, huge, &err), 0);
	for (size_t i = 0; i < NH + 2; i++) {
		int64_t v = (int64_t)(i + 1);
		assert_int_equal(profile_add_sample(p, &ids[i], 1, &v, &err), 0);
	}
	assert_int_equal(profile_summarize(&s, p, 0, &err), 0);
	assert_int_equal(s.nrows, NH + 2);

	meta_init(&m, sid, KEY_A);
	if (db_capture_insert(t->db, &id, &m, p, &s, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(db_capture_top(t->db, &rows, &n, id, 0, &err), 0);
	assert_int_equal(n, NH + 2);
	for (size_t r = 0; r < n; r++) {
		/* Each value is unique (i + 1), so it says which function came back. */
		size_t i = (size_t)rows[r].self_value - 1;
		assert_true(i < NH + 2);
		assert_false(seen[i]);
		seen[i] = true;
		if (i < NH) {
			assert_string_equal(rows[r].name, hostile_names[i]);
			assert_string_equal(rows[r].file, "f\tile\n.c");
		} else if (i == NH) {
			assert_int_equal(strlen(rows[r].name), huge);
			assert_memory_equal(rows[r].name, long_name, huge);
			assert_string_equal(rows[r].file, "");
		} else {
			assert_string_equal(rows[r].name, "short");
			assert_int_equal(strlen(rows[r].file), huge);
			assert_memory_equal(rows[r].file, long_file, huge);
		}
	}
	db_func_rows_free(rows, n);

	/* The same names again intern to the same rows. */
	meta_init(&m, sid, KEY_B);
	if (db_capture_insert(t->db, &id2, &m, p, &s, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(testdb_int(t, "select count(*) from functions"), NH + 2);
	assert_int_equal(testdb_int(t, "select count(*) from profile_functions"), 2 * (NH + 2));

	profile_summary_release(&s);
	profile_free(p);
	free(long_name);
	free(long_file);
}

static void test_same_name_in_two_files_is_two_functions(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	profile_summary s = {0};
	db_capture m;
	uint32_t a, b;
	int64_t v1 = 3, v2 = 4, id = 0, sid = testdb_add_service(t, "svc");
	static const char *types[] = {"cpu"};
	static const char *units[] = {"nanoseconds"};

	assert_int_equal(profile_new(&p, PROFILE_FMT_FOLDED, "two", NULL, &err), 0);
	assert_int_equal(profile_set_value_types(p, 1, types, units, &err), 0);
	assert_int_equal(profile_intern(p, &a, "init", 4, "a.c", 3, &err), 0);
	assert_int_equal(profile_intern(p, &b, "init", 4, "b.c", 3, &err), 0);
	assert_int_equal(profile_add_sample(p, &a, 1, &v1, &err), 0);
	assert_int_equal(profile_add_sample(p, &b, 1, &v2, &err), 0);
	assert_int_equal(profile_summarize(&s, p, 0, &err), 0);
	meta_init(&m, sid, KEY_A);
	assert_int_equal(db_capture_insert(t->db, &id, &m, p, &s, &err), 0);
	assert_int_equal(testdb_int(t, "select count(*) from functions where name = 'init'"), 2);
	/* An empty file and a file that is a prefix are distinct from each other too. */
	assert_int_equal(testdb_int(t, "select count(distinct key) from functions"), 2);
	profile_summary_release(&s);
	profile_free(p);
}

static void test_empty_profile_stores_zero_totals(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	profile_summary s = {0};
	db_func_row *rows = (db_func_row *)&err;
	db_capture m, c = {0};
	size_t n = 99;
	int64_t id = 0, sid = testdb_add_service(t, "svc");
	static const char *types[] = {"cpu"};
	static const char *units[] = {"nanoseconds"};

	assert_int_equal(profile_new(&p, PROFILE_FMT_FOLDED, "empty", NULL, &err), 0);
	assert_int_equal(profile_set_value_types(p, 1, types, units, &err), 0);
	assert_int_equal(profile_summarize(&s, p, 0, &err), 0);
	assert_int_equal(s.total, 0);
	meta_init(&m, sid, KEY_A);
	assert_int_equal(db_capture_insert(t->db, &id, &m, p, &s, &err), 0);
	assert_int_equal(db_capture_get(t->db, &c, id, &err), 0);
	assert_int_equal(c.total_value, 0);
	assert_int_equal(c.sample_count, 0);
	assert_int_equal(c.function_count, 0);
	db_capture_release(&c);
	assert_int_equal(db_capture_top(t->db, &rows, &n, id, 10, &err), 0);
	assert_null(rows);
	assert_int_equal(n, 0);
	profile_summary_release(&s);
	profile_free(p);
}

static void test_zero_total_gives_zero_shares_not_nan(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	profile *p = small_profile();
	/* A summary whose total is 0 while rows exist: division must not happen. */
	profile_summary_row r[2] = {{0, 0, 0}, {1, 0, 0}};
	profile_summary s = {r, 2, 0, 0};
	db_func_row *rows = NULL;
	db_capture m;
	size_t n = 0;
	int64_t id = 0, sid = testdb_add_service(t, "svc");

	meta_init(&m, sid, KEY_A);
	if (db_capture_insert(t->db, &id, &m, p, &s, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(db_capture_top(t->db, &rows, &n, id, 0, &err), 0);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		assert_false(isnan(rows[i].self_share));
		assert_false(isnan(rows[i].total_share));
		assert_true(rows[i].self_share == 0.0);
		assert_true(rows[i].total_share == 0.0);
	}
	assert_int_equal(testdb_int(t, "select count(*) from profile_functions"
				       " where self_share = 0 and total_share = 0"), 2);
	db_func_rows_free(rows, n);
	profile_free(p);
}

static void test_capture_is_found_by_service_and_blob_key(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	int64_t a = testdb_add_service(t, "a"), b = testdb_add_service(t, "b");
	int64_t id = insert_small(t, a, KEY_A, "v1", T0), found = -1;

	assert_int_equal(db_capture_find(t->db, &found, a, KEY_A, &err), 0);
	assert_int_equal(found, id);
	assert_int_equal(db_capture_find(t->db, &found, a, KEY_B, &err), PR_ENOTFOUND);
	pr_error_clear(&err);
	/* Keys are per service: the same bytes for another service are a new capture. */
	assert_int_equal(db_capture_find(t->db, &found, b, KEY_A, &err), PR_ENOTFOUND);
	assert_true(insert_small(t, b, KEY_A, "v1", T0) != id);
}

static void test_many_captures_are_found_in_one_call(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	int64_t a = testdb_add_service(t, "a"), b = testdb_add_service(t, "b");
	int64_t id = insert_small(t, a, KEY_A, "v1", T0);
	int64_t sids[4] = {b, a, a, a}, found[4] = {-1, -1, -1, -1};
	const char *keys[4] = {KEY_A, KEY_B, KEY_A, KEY_A};
	const char *hostile[2] = {KEY_A, "aa\"},{\"bb"};

	assert_int_equal(db_capture_find_many(t->db, found, sids, keys, 4, &err), 0);
	assert_int_equal(found[0], 0); /* the same bytes of another service */
	assert_int_equal(found[1], 0);
	assert_int_equal(found[2], id);
	assert_int_equal(found[3], id);
	assert_int_equal(db_capture_find_many(t->db, found, sids, keys, 0, &err), 0);
	/* A key that is not hex could break out of the array literal: refused, named. */
	assert_int_equal(db_capture_find_many(t->db, found, sids + 2, hostile, 2, &err),
			 PR_EUSAGE);
	assert_non_null(strstr(err.msg, "is not hex"));
	assert_int_equal(found[0], 0);
}

/* n captures of the small profile, keys[i] each, and their summaries. */
static int insert_many(testdb *t, int64_t *ids, db_capture *ms, int64_t sid,
		       const char *const *keys, size_t n, pr_error *err)
{
	profile *p = small_profile();
	profile_summary s = {0};
	const profile *ps[8];
	const profile_summary *sums[8];
	pr_error perr = PR_ERROR_INIT;
	int rc;

	assert_true(n <= 8);
	assert_int_equal(profile_summarize(&s, p, p->primary, &perr), 0);
	for (size_t i = 0; i < n; i++) {
		ms[i].service_id = sid;
		ms[i].blob_key = (char *)keys[i];
		ps[i] = p;
		sums[i] = &s;
	}
	assert_int_equal(db_begin(t->db, err), 0);
	rc = db_capture_insert_many(t->db, ids, ms, ps, sums, n, err);
	if (rc == 0)
		rc = db_commit(t->db, err);
	else
		db_rollback(t->db);
	profile_summary_release(&s);
	profile_free(p);
	return rc;
}

static void test_many_captures_in_one_call_fail_together(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	int64_t sid = testdb_add_service(t, "svc"), ids[4] = {-1, -1, -1, -1};
	int64_t first = insert_small(t, sid, KEY_C, "v1", T0);
	const char *keys[4] = {KEY_A, KEY_B, KEY_C, KEY_A};
	db_capture ms[4];

	for (size_t i = 0; i < 4; i++)
		meta_init(&ms[i], sid, keys[i]);
	/* The second carries tags that are not JSON: the server refuses its row. */
	ms[1].tags_json = (char *)"{broken";
	assert_int_equal(insert_many(t, ids, ms, sid, keys, 4, &err), PR_EUSAGE);
	assert_non_null(strstr(err.msg, "database: cannot insert 4 captures: "));
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(ids[i], 0);
	assert_int_equal(testdb_int(t, "select count(*) from profiles"), 1);
	pr_error_clear(&err);

	/* The connection is usable again; stored bytes and repeats are skipped. */
	ms[1].tags_json = (char *)"{\"k\": \"v\"}";
	ms[1].release = (char *)"v2";
	if (insert_many(t, ids, ms, sid, keys, 4, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(ids[0] > first && ids[1] > ids[0]);
	assert_int_equal(ids[2], 0); /* KEY_C was stored before */
	assert_int_equal(ids[3], 0); /* KEY_A earlier in the same call */
	assert_int_equal(testdb_int(t, "select count(*) from profiles"), 3);
	assert_string_equal(testdb_text(t, "select release || tags::text from profiles"
					   " where blob_key like 'b%'"), "v2{\"k\": \"v\"}");
	/* Each capture's function rows, none for the skipped ones. */
	assert_int_equal(testdb_int(t, "select count(*) from profile_functions"), 9);
}

/* Each stored value as "capture-is-KEY_A/name/file=value", in capture and function order. */
#define VALUES_ON_FUNCTIONS                                                                  \
	"select string_agg(format('%s/%s/%s=%s', p.blob_key < 'b', f.name, f.file,"         \
	" pf.self_value), ' ' order by p.blob_key, f.name, f.file, pf.self_value)"           \
	" from profile_functions pf join profiles p on p.id = pf.profile_id"                 \
	" join functions f on f.id = pf.function_id"

/* A profile of (name, file, self value) triples, one sample each. */
static profile *named_profile(const char *const (*fns)[2], const int64_t *values, size_t n)
{
	profile *p = NULL;
	pr_error err = PR_ERROR_INIT;
	static const char *types[] = {"cpu"};
	static const char *units[] = {"nanoseconds"};

	assert_int_equal(profile_new(&p, PROFILE_FMT_FOLDED, "named", NULL, &err), 0);
	assert_int_equal(profile_set_value_types(p, 1, types, units, &err), 0);
	for (size_t i = 0; i < n; i++) {
		uint32_t f;
		assert_int_equal(profile_intern(p, &f, fns[i][0], strlen(fns[i][0]), fns[i][1],
						strlen(fns[i][1]), &err), 0);
		assert_int_equal(profile_add_sample(p, &f, 1, &values[i], &err), 0);
	}
	return p;
}

static void test_a_batch_keys_functions_by_name_and_file_across_its_captures(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	/* "ab" in no file and "a" in file "b" hash different bytes ("ab\0" and "a\0b"). */
	static const char *const f1[][2] = {{"init", "a.c"}, {"init", "b.c"}, {"ab", ""}};
	static const char *const f2[][2] = {{"init", "b.c"}, {"a", "b"}, {"init", "a.c"}};
	static const int64_t v1[] = {11, 12, 13}, v2[] = {21, 22, 23};
	profile *p[2] = {named_profile(f1, v1, 3), named_profile(f2, v2, 3)};
	profile_summary s[2] = {{0}, {0}};
	const profile *ps[2] = {p[0], p[1]};
	const profile_summary *sums[2] = {&s[0], &s[1]};
	int64_t sid = testdb_add_service(t, "svc"), ids[2];
	db_capture ms[2];

	for (size_t i = 0; i < 2; i++)
		assert_int_equal(profile_summarize(&s[i], p[i], 0, &err), 0);
	meta_init(&ms[0], sid, KEY_A);
	meta_init(&ms[1], sid, KEY_B);
	assert_int_equal(db_begin(t->db, &err), 0);
	if (db_capture_insert_many(t->db, ids, ms, ps, sums, 2, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(db_commit(t->db, &err), 0);
	assert_int_equal(testdb_int(t, "select count(*) from functions"), 4);
	/* Every value sits on its own capture's function, found by name and file. */
	assert_string_equal(testdb_text(t, VALUES_ON_FUNCTIONS),
		"t/ab/=13 t/init/a.c=11 t/init/b.c=12 f/a/b=22 f/init/a.c=23 f/init/b.c=21");
	for (size_t i = 0; i < 2; i++) {
		profile_summary_release(&s[i]);
		profile_free(p[i]);
	}
}

/*
 * A later batch finds the functions interned before by their keys (one
 * lookup for the batch) and interns only what is new: every value still
 * sits on its own function, whatever order the known and the new come in.
 */
static void test_a_later_batch_finds_known_functions_and_interns_only_new_ones(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	static const char *const f1[][2] = {{"a", "x.c"}, {"b", "x.c"}, {"c", "y.c"}};
	static const char *const f2[][2] = {{"new", "z.c"}, {"c", "y.c"}, {"a", "x.c"},
					    {"b", "y.c"}};
	static const int64_t v1[] = {1, 2, 3}, v2[] = {40, 30, 10, 20};
	profile *p[2] = {named_profile(f1, v1, 3), named_profile(f2, v2, 4)};
	profile_summary s[2] = {{0}, {0}};
	static const char *const keys[2] = {KEY_A, KEY_B};
	int64_t sid = testdb_add_service(t, "svc");

	for (size_t i = 0; i < 2; i++) {
		const profile *ps[1] = {p[i]};
		const profile_summary *sums[1] = {&s[i]};
		db_capture m;
		int64_t id;

		assert_int_equal(profile_summarize(&s[i], p[i], 0, &err), 0);
		meta_init(&m, sid, keys[i]);
		assert_int_equal(db_begin(t->db, &err), 0);
		if (db_capture_insert_many(t->db, &id, &m, ps, sums, 1, &err) < 0)
			fail_msg("%s", err.msg);
		assert_int_equal(db_commit(t->db, &err), 0);
	}
	/* a, b and c from the first batch, new and b-in-y.c from the second. */
	assert_int_equal(testdb_int(t, "select count(*) from functions"), 5);
	assert_string_equal(testdb_text(t, VALUES_ON_FUNCTIONS),
		"t/a/x.c=1 t/b/x.c=2 t/c/y.c=3 f/a/x.c=10 f/b/y.c=20 f/c/y.c=30 f/new/z.c=40");
	for (size_t i = 0; i < 2; i++) {
		profile_summary_release(&s[i]);
		profile_free(p[i]);
	}
}

static void test_same_blob_twice_for_one_service_is_eexists(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	profile *p = small_profile();
	int64_t sid = testdb_add_service(t, "svc"), id = 0;
	db_capture m;

	insert_small(t, sid, KEY_A, "v1", T0);
	meta_init(&m, sid, KEY_A);
	assert_int_equal(insert_profile(t, &m, p, &id, &err), PR_EEXISTS);
	assert_int_equal(id, 0);
	assert_non_null(strstr(err.msg, "already exists"));
	assert_non_null(strstr(err.msg, KEY_A));
	assert_int_equal(testdb_int(t, "select count(*) from profiles"), 1);
	assert_int_equal(testdb_int(t, "select count(*) from profile_functions"), 3);
	profile_free(p);
}

static void test_bad_capture_fields_are_rejected(void **state)
{
	testdb *t = *state;
	profile *p = small_profile();
	int64_t sid = testdb_add_service(t, "svc"), id;
	db_capture m;
	pr_error err = PR_ERROR_INIT;

	meta_init(&m, sid, KEY_A);
	m.blob_key = (char *)"not-a-key";
	assert_int_equal(insert_profile(t, &m, p, &id, &err), PR_EUSAGE);
	assert_non_null(strstr(err.msg, "database: cannot insert a capture: "));

	pr_error_clear(&err);
	meta_init(&m, sid, KEY_A);
	m.tags_json = (char *)"[1, 2]";
	assert_int_equal(insert_profile(t, &m, p, &id, &err), PR_EUSAGE);

	pr_error_clear(&err);
	m.tags_json = (char *)"{not json";
	assert_int_equal(insert_profile(t, &m, p, &id, &err), PR_EUSAGE);

	pr_error_clear(&err);
	meta_init(&m, sid, KEY_A);
	m.retention_class = (char *)"forever";
	assert_int_equal(insert_profile(t, &m, p, &id, &err), PR_EUSAGE);

	pr_error_clear(&err);
	meta_init(&m, sid, KEY_A);
	m.captured_at_us = 0;
	assert_int_equal(insert_profile(t, &m, p, &id, &err), PR_EUSAGE);
	assert_string_equal(err.msg,
			    "database: cannot insert a capture: the capture time is missing");

	pr_error_clear(&err);
	meta_init(&m, sid, KEY_A);
	m.release = NULL;
	assert_int_equal(insert_profile(t, &m, p, &id, &err), PR_EUSAGE);

	pr_error_clear(&err);
	meta_init(&m, sid + 1000, KEY_A);
	assert_int_equal(insert_profile(t, &m, p, &id, &err), PR_ENOTFOUND);

	/* Every failure rolled back its own transaction: nothing is left. */
	assert_int_equal(testdb_int(t, "select count(*) from profiles"), 0);
	assert_int_equal(testdb_int(t, "select count(*) from functions"), 0);
	/* And the connection is still usable. */
	insert_small(t, sid, KEY_A, "v1", T0);
	profile_free(p);
}

static void test_rollback_leaves_nothing_behind(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	db_capture *list = NULL;
	size_t n = 0;
	int64_t sid = testdb_add_service(t, "svc"), id;

	assert_int_equal(db_begin(t->db, &err), 0);
	id = insert_small(t, sid, KEY_A, "v1", T0);
	assert_int_equal(db_audit(t->db, "ingest", "capture:1", NULL, &err), 0);
	db_rollback(t->db);

	{
		db_capture c = {0};
		char want[64];
		snprintf(want, sizeof(want), "capture %lld not found", (long long)id);
		assert_int_equal(db_capture_get(t->db, &c, id, &err), PR_ENOTFOUND);
		assert_string_equal(err.msg, want);
	}
	assert_int_equal(db_capture_list(t->db, &list, &n, NULL, &err), 0);
	assert_int_equal(n, 0);
	assert_int_equal(testdb_int(t, "select count(*) from profiles"), 0);
	assert_int_equal(testdb_int(t, "select count(*) from profile_functions"), 0);
	assert_int_equal(testdb_int(t, "select count(*) from functions"), 0);
	assert_int_equal(testdb_int(t, "select count(*) from audit_log where action = 'ingest'"),
			 0);

	/* The session's scratch table went with the rollback; the next insert still works. */
	id = insert_small(t, sid, KEY_A, "v1", T0);
	assert_int_equal(testdb_int(t, "select count(*) from profile_functions"), 3);
}

static void test_commit_after_a_failed_statement_is_an_error(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	profile *p = small_profile();
	int64_t sid = testdb_add_service(t, "svc"), id;
	db_capture m;

	insert_small(t, sid, KEY_A, "v1", T0);
	assert_int_equal(db_begin(t->db, &err), 0);
	assert_int_equal(db_begin(t->db, &err), PR_EUSAGE);
	pr_error_clear(&err);
	insert_small(t, sid, KEY_B, "v1", T0);
	meta_init(&m, sid, KEY_A);
	assert_int_equal(insert_profile(t, &m, p, &id, &err), PR_EEXISTS);
	pr_error_clear(&err);
	assert_int_equal(db_commit(t->db, &err), PR_EDB);
	assert_non_null(strstr(err.msg, "cannot commit"));
	/* KEY_B went with the failed transaction. */
	assert_int_equal(testdb_int(t, "select count(*) from profiles"), 1);
	pr_error_clear(&err);
	assert_int_equal(db_commit(t->db, &err), PR_EUSAGE); /* nothing open any more */
	profile_free(p);
}

static void test_two_captures_in_one_transaction_keep_their_own_functions(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	int64_t sid = testdb_add_service(t, "svc"), a, b;

	assert_int_equal(db_begin(t->db, &err), 0);
	a = insert_small(t, sid, KEY_A, "v1", T0);
	b = insert_small(t, sid, KEY_B, "v1", T0 + 1);
	assert_int_equal(db_commit(t->db, &err), 0);
	assert_int_equal(testdb_int(t, "select count(*) from profile_functions group by profile_id"
				       " order by 1 desc limit 1"), 3);
	assert_int_equal(testdb_int(t, "select count(*) from functions"), 3);
	assert_true(a != b);
}

static void test_capture_list_filters_and_orders_newest_first(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	int64_t a = testdb_add_service(t, "a"), b = testdb_add_service(t, "b");
	int64_t a1 = insert_small(t, a, KEY_A, "v1", T0);
	int64_t a2 = insert_small(t, a, KEY_B, "v2", T0 + 1000);
	int64_t a3 = insert_small(t, a, KEY_C, "v2", T0 + 2000);
	int64_t b1 = insert_small(t, b, KEY_A, "v1", T0 + 500);
	db_capture *l = NULL;
	size_t n = 0;

#define LIST(...) do { \
		db_capture_filter f = {__VA_ARGS__}; \
		for (size_t i = 0; i < n; i++) db_capture_release(&l[i]); \
		free(l); \
		l = NULL; \
		assert_int_equal(db_capture_list(t->db, &l, &n, &f, &err), 0); \
	} while (0)

	LIST(0);
	assert_int_equal(n, 4);
	assert_int_equal(l[0].id, a3);
	assert_int_equal(l[1].id, a2);
	assert_int_equal(l[2].id, b1);
	assert_int_equal(l[3].id, a1);
	assert_string_equal(l[2].service, "b");

	LIST(.service = "a");
	assert_int_equal(n, 3);
	assert_int_equal(l[0].id, a3);
	assert_int_equal(l[2].id, a1);

	LIST(.service = "a", .release = "v2");
	assert_int_equal(n, 2);
	assert_int_equal(l[0].id, a3);
	assert_int_equal(l[1].id, a2);

	LIST(.release = "v1");
	assert_int_equal(n, 2);
	assert_int_equal(l[0].id, b1);

	LIST(.since_us = T0 + 500);
	assert_int_equal(n, 3); /* inclusive */
	assert_int_equal(l[2].id, b1);

	LIST(.since_us = T0 + 500, .until_us = T0 + 2000);
	assert_int_equal(n, 2); /* until is exclusive */
	assert_int_equal(l[0].id, a2);

	LIST(.limit = 1);
	assert_int_equal(n, 1);
	assert_int_equal(l[0].id, a3);

	LIST(.profile_type = "heap");
	assert_int_equal(n, 0);
	assert_null(l);

	LIST(.service = "nobody");
	assert_int_equal(n, 0);

	/* Hostile filter values are values, not SQL. */
	LIST(.service = "a' or '1'='1");
	assert_int_equal(n, 0);
#undef LIST
}

static void test_missing_capture_is_not_found(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	db_capture c = {0};
	db_func_row *rows = NULL;
	size_t n = 0;

	assert_int_equal(db_capture_get(t->db, &c, 4242, &err), PR_ENOTFOUND);
	assert_string_equal(err.msg, "capture 4242 not found");
	pr_error_clear(&err);
	assert_int_equal(db_capture_top(t->db, &rows, &n, 4242, 5, &err), PR_ENOTFOUND);
	assert_string_equal(err.msg, "capture 4242 not found");
}

/* ---- audit, locks, sessions ------------------------------------------ */

static void test_audit_rows_are_written_and_checked(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;

	assert_int_equal(db_audit(t->db, "ingest", "capture:7", "{\"bytes\": 12}", &err), 0);
	assert_int_equal(db_audit(t->db, "retention", "capture:8", NULL, &err), 0);
	assert_string_equal(
		testdb_text(t, "select detail->>'bytes' from audit_log where object = 'capture:7'"),
		"12");
	assert_string_equal(
		testdb_text(t, "select detail::text from audit_log where object = 'capture:8'"),
		"{}");
	assert_int_equal(testdb_int(t, "select count(*) from audit_log where actor <> ''"), 2);
	assert_int_equal(db_audit(t->db, "ingest", "capture:9", "{broken", &err), PR_EUSAGE);
	assert_non_null(strstr(err.msg, "database: cannot write an audit row for 'ingest': "));
	pr_error_clear(&err);
	assert_int_equal(db_audit(t->db, "", "x", NULL, &err), PR_EUSAGE);
	assert_int_equal(testdb_int(t, "select count(*) from audit_log"), 2);
}

static void test_many_audit_rows_keep_their_order_and_text(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	const char *objects[4] = {"capture:1", "a \"quoted\", {braced} \\ object", "NULL", "x"};
	const char *details[4] = {"{\"s\": \"a\\\"b\"}", NULL, "{\"n\": 2}", "[]"};
	const char *broken[2] = {"{}", "{broken"};

	assert_int_equal(db_audit_many(t->db, "ingest", objects, details, 3, &err), 0);
	assert_int_equal(testdb_int(t, "select count(*) from audit_log where actor <> ''"), 3);
	assert_string_equal(testdb_text(t, "select string_agg(object, '|' order by id)"
					   " from audit_log"),
			    "capture:1|a \"quoted\", {braced} \\ object|NULL");
	assert_string_equal(testdb_text(t, "select string_agg(detail::text, '|' order by id)"
					   " from audit_log"),
			    "{\"s\": \"a\\\"b\"}|{}|{\"n\": 2}");
	assert_int_equal(db_audit_many(t->db, "ingest", objects, details, 0, &err), 0);
	/* One bad detail writes none of the rows. */
	assert_int_equal(db_audit_many(t->db, "ingest", objects, broken, 2, &err), PR_EUSAGE);
	assert_non_null(strstr(err.msg, "database: cannot write an audit row for 'ingest': "));
	pr_error_clear(&err);
	assert_int_equal(db_audit_many(t->db, "", objects, details, 1, &err), PR_EUSAGE);
	assert_int_equal(testdb_int(t, "select count(*) from audit_log"), 3);
}

static void test_advisory_lock_is_held_by_one_session(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	db *other = NULL;
	bool got = false;

	assert_int_equal(db_open(&other, t->conninfo, &err), 0);
	assert_int_equal(db_try_advisory_lock(t->db, "nightly", &got, &err), 0);
	assert_true(got);
	assert_int_equal(db_try_advisory_lock(other, "nightly", &got, &err), 0);
	assert_false(got);
	assert_int_equal(db_try_advisory_lock(other, "post-deploy:svc", &got, &err), 0);
	assert_true(got); /* another name is another lock */
	db_advisory_unlock(t->db, "nightly");
	assert_int_equal(db_try_advisory_lock(other, "nightly", &got, &err), 0);
	assert_true(got);
	/* Closing the session releases what it held, once its server process has gone. */
	db_close(other);
	for (int i = 0; i < 100; i++) {
		struct timespec pause = {0, 50000000};
		assert_int_equal(db_try_advisory_lock(t->db, "nightly", &got, &err), 0);
		if (got)
			break;
		nanosleep(&pause, NULL);
	}
	assert_true(got);
}

static void test_session_is_named_profreg(void **state)
{
	testdb *t = *state;

	/* At least ours: sessions of earlier tests may still be on their way out. */
	assert_true(testdb_int(t, "select count(*) from pg_stat_activity"
				  " where datname = current_database() and "
				  "application_name = 'profreg'") >= 1);
	assert_int_equal(testdb_int(t, "select count(*) from pg_stat_activity"
				       " where datname = current_database() and "
				       "application_name = ''"
				       " and backend_type = 'client backend' and "
				       "pid <> pg_backend_pid()"), 0);
}

static void test_a_dropped_connection_is_a_database_error(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	db_service *list = NULL;
	size_t n = 0;

	assert_int_equal(
		testdb_int(t,
			   "select count(pg_terminate_backend(pid)) from pg_stat_activity"
			   " where datname = current_database() and application_name = 'profreg'"),
		1);
	assert_int_equal(db_service_list(t->db, &list, &n, &err), PR_EDB);
	assert_non_null(strstr(err.msg, "database: cannot list services: "));
	assert_null(strchr(err.msg, '\n'));
	pr_error_clear(&err);
	assert_int_equal(db_begin(t->db, &err), PR_EDB);
	assert_non_null(strstr(err.msg, "database: the connection is lost"));
	pr_error_clear(&err);
	assert_int_equal(db_migrate(t->db, NULL, &err), PR_EDB);
	db_rollback(t->db); /* harmless on a dead connection */
}

static int64_t repeat_int(testdb *t, const char *sql, const char *param)
{
	pr_error err = PR_ERROR_INIT;
	const char *p[1] = {param};
	struct pg_result *res = NULL;
	int64_t v;

	if (db_exec_repeat(t->db, &res, &err, "a repeated statement", sql, param ? 1 : 0, p, 0) <
	    0)
		fail_msg("%s", err.msg);
	v = db_get_i64(res, 0, 0);
	db_result_free(res);
	return v;
}

/*
 * A statement run again and again is prepared once on the session and
 * answers each run with its own parameters; past the 32 kept, statements
 * still run; in a failed transaction the server's own error is reported;
 * after a reconnect the statements are prepared anew.
 */
static void test_repeated_statements_are_prepared_once_and_stay_right(void **state)
{
	static const char count_sql[] =
		"select count(*) from pg_prepared_statements where name like 'profreg_s%'";
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	char sql[64];

	for (int i = 1; i <= 10; i++) {
		char v[16];
		snprintf(v, sizeof(v), "%d", i);
		assert_int_equal(repeat_int(t, "select $1::int * 2", v), 2 * i);
	}
	assert_int_equal(repeat_int(t, count_sql, NULL), 2);
	for (int i = 0; i < 40; i++) {
		snprintf(sql, sizeof(sql), "select %d + $1::int", i);
		assert_int_equal(repeat_int(t, sql, "1"), i + 1);
	}
	assert_int_equal(repeat_int(t, count_sql, NULL), 32);
	assert_int_equal(db_begin(t->db, &err), 0);
	assert_int_equal(
		db_exec(t->db, NULL, &err, "failing", "select * from no_such_table", 0, NULL),
		PR_EDB);
	pr_error_clear(&err);
	assert_int_equal(db_exec_repeat(t->db, NULL, &err, "after the failure",
					"select $1::int * 3", 1, (const char *[]){"1"}, 0),
			 PR_EDB);
	assert_non_null(strstr(err.msg, "after the failure: current transaction is aborted"));
	db_rollback(t->db);
	pr_error_clear(&err);
	assert_int_equal(
		testdb_int(t,
			   "select count(pg_terminate_backend(pid)) from pg_stat_activity"
			   " where datname = current_database() and application_name = 'profreg'"),
		1);
	assert_int_equal(db_exec_repeat(t->db, NULL, &err, "dropped", "select 1", 0, NULL, 0),
			 PR_EDB);
	pr_error_clear(&err);
	assert_int_equal(db_reconnect(t->db, &err), 0);
	assert_int_equal(repeat_int(t, "select $1::int * 2", "21"), 42);
	assert_int_equal(repeat_int(t, count_sql, NULL), 2);
}

/* A session set-up that fails the first time it runs, then succeeds. */
static int fail_once(db *d, void *ctx, pr_error *err)
{
	int *runs = ctx;

	(void)d;
	if ((*runs)++ == 0)
		return pr_error_set(err, PR_EDB, "cannot tag the session: refused");
	return 0;
}

/*
 * A new session whose set-up failed (its audit tags, its clock) is not
 * taken as mended: it is not connected, and the next db_reconnect starts
 * it again and sets it up, instead of finding it up and carrying on
 * without the set-up.
 */
static void test_a_session_whose_set_up_failed_is_set_up_again(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	static int runs; /* outlives the test: a failed assertion leaves the hook set */

	runs = 0;
	db_on_session(t->db, fail_once, &runs);
	assert_int_equal(
		testdb_int(t,
			   "select count(pg_terminate_backend(pid)) from pg_stat_activity"
			   " where datname = current_database() and application_name = 'profreg'"),
		1);
	(void)db_exec(t->db, NULL, &err, "dropped", "select 1", 0, NULL);
	pr_error_clear(&err);
	assert_int_equal(db_reconnect(t->db, &err), PR_EDB);
	assert_non_null(strstr(err.msg, "refused"));
	assert_false(db_connected(t->db));
	pr_error_clear(&err);
	assert_int_equal(db_reconnect(t->db, &err), 0);
	assert_int_equal(runs, 2);
	assert_true(db_connected(t->db));
	assert_int_equal(repeat_int(t, "select $1::int * 2", "21"), 42);
	db_on_session(t->db, NULL, NULL);
}

/*
 * A pipeline runs its statements in order in one round trip and hands
 * back each result; when one fails, its error is reported, the ones
 * after it do not run, and what the ones before it wrote is rolled back
 * with it (outside a transaction a pipeline is one).
 */
static void test_a_pipeline_is_one_transaction_and_stops_at_its_failure(void **state)
{
	static const char ins[] = "insert into audit_log (actor, action, object, detail)"
				  " values ('t', 'pipeline', $1, '{}') returning id";
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	struct pg_result *res[3] = {0};
	const char *one[1] = {"one"}, *two[1] = {"two"}, *x[1] = {"x"};
	db_call ok[3] = {{"first", ins, 1, one, NULL, NULL, 0},
			 {"second", ins, 1, two, NULL, NULL, 0},
			 {"third", "select $1::int * 2", 1, (const char *[]){"21"}, NULL, NULL, 0}};
	db_call bad[3] = {{"first", ins, 1, x, NULL, NULL, 0},
			  {"a bad cast", "select $1::int", 1, x, NULL, NULL, 0},
			  {"never run", ins, 1, x, NULL, NULL, 0}};

	assert_int_equal(db_exec_pipeline(t->db, res, &err, ok, 3), 0);
	assert_true(db_get_i64(res[1], 0, 0) > db_get_i64(res[0], 0, 0));
	assert_int_equal(db_get_i64(res[2], 0, 0), 42);
	for (int i = 0; i < 3; i++)
		db_result_free(res[i]);
	assert_int_equal(testdb_int(t, "select count(*) from audit_log where action = 'pipeline'"),
			 2);
	assert_int_equal(db_exec_pipeline(t->db, res, &err, bad, 3), PR_EUSAGE);
	assert_non_null(strstr(err.msg, "a bad cast"));
	assert_null(res[0]);
	pr_error_clear(&err);
	assert_int_equal(testdb_int(t, "select count(*) from audit_log where object = 'x'"), 0);
	/* The session goes on: no transaction is left open, statements still run. */
	assert_int_equal(repeat_int(t, "select $1::int * 2", "4"), 8);
	assert_int_equal(db_begin(t->db, &err), 0);
	assert_int_equal(db_commit(t->db, &err), 0);
}

static void test_insert_without_a_transaction_commits_on_its_own(void **state)
{
	testdb *t = *state;
	int64_t sid = testdb_add_service(t, "svc");

	insert_small(t, sid, KEY_A, "v1", T0);
	/* The side connection sees it: it was committed. */
	assert_int_equal(testdb_int(t, "select count(*) from profile_functions"), 3);
}

static void test_connection_failure_names_the_problem_and_hides_the_password(void **state)
{
	/* A server not reached is the database's failure; a string that does not parse, usage. */
	static const struct {
		const char *conninfo;
		int rc;
	} bad[] = {
		{"host=/nonexistent-profreg-dir port=5 user=u password=hunter2 "
		 "dbname=x connect_timeout=2", PR_EDB},
		{"postgresql://u:hunter2@/x?host=/nonexistent-profreg-dir&port=5", PR_EDB},
		{"password=hunter2 nonsense", PR_EUSAGE},
		{"host=/x password='hunter2", PR_EUSAGE},
		{"postgresql://u:hunter2@%zz/x", PR_EUSAGE},
	};
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pr_error err = PR_ERROR_INIT;
		db *d = NULL;
		assert_int_equal(db_open(&d, bad[i].conninfo, &err), bad[i].rc);
		assert_null(d);
		assert_non_null(strstr(err.msg, "cannot connect to the database: "));
		if (strstr(err.msg, "hunter2"))
			fail_msg("password in message: %s", err.msg);
	}
}

static void test_redacted_conninfo_hides_passwords(void **state)
{
	char *r;
	(void)state;

	r = db_conninfo_redact("host=/tmp/s user=postgres password=hunter2 dbname=profreg");
	assert_non_null(r);
	assert_null(strstr(r, "hunter2"));
	assert_non_null(strstr(r, "password=***"));
	assert_non_null(strstr(r, "host=/tmp/s"));
	assert_non_null(strstr(r, "dbname=profreg"));
	free(r);
	r = db_conninfo_redact("postgresql://u:hunter2@db.example/prof");
	assert_null(strstr(r, "hunter2"));
	assert_non_null(strstr(r, "host=db.example"));
	free(r);
	r = db_conninfo_redact("host='/a b' password=x");
	assert_non_null(strstr(r, "host='/a b'"));
	free(r);
	r = db_conninfo_redact("password=hunter2 broken");
	assert_null(strstr(r, "hunter2"));
	free(r);
	r = db_conninfo_redact("profreg");
	assert_string_equal(r, "profreg");
	free(r);
}

/*
 * The --db argument, wiped in place: each password becomes "***", the
 * rest stays, and none of the password's bytes is left in the argument's
 * memory (what /proc/PID/cmdline shows), up to its old end.
 */
static void test_wiped_conninfo_keeps_no_password_in_place(void **state)
{
	static const char *const cases[][2] = {
		{"host=/tmp/s user=postgres password=hunter2db dbname=profreg",
		 "host=/tmp/s user=postgres password=*** dbname=profreg"},
		{"password = 'hunter2 \\'x' user=u", "password = *** user=u"},
		{"sslpassword=hunter2key host=h password=hunter2",
		 "sslpassword=*** host=h password=***"},
		{"broken password=hunter2", "broken password=***"},
		{"host=h PASSWORD=hunter2", "host=h PASSWORD=***"},
		{"password=ab", "password=**"},
		{"password=", "password="},
		{"postgresql://u:hunter2@db.example:5432/prof?sslmode=require&password=hunter2x",
		 "postgresql://u:***@db.example:5432/prof?sslmode=require&password=***"},
		{"postgres://u:hunter2@x@h/db", "postgres://u:***@h/db"},
		{"postgresql://h/db?pass%77ord=hunter2&user=u",
		 "postgresql://h/db?pass%77ord=***&user=u"},
		{"postgresql://u@h/db", "postgresql://u@h/db"},
		{"host=h user=hunter", "host=h user=hunter"},
		{"profreg", "profreg"},
	};
	char s[128];
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = strlen(cases[i][0]);
		assert_true(n < sizeof(s));
		memcpy(s, cases[i][0], n + 1);
		db_conninfo_wipe(s);
		assert_string_equal(s, cases[i][1]);
		for (size_t k = 0; k + 7 <= n + 1; k++)
			if (memcmp(s + k, "hunter2", 7) == 0)
				fail_msg("'%s': the password stays at %zu", cases[i][0], k);
	}
	db_conninfo_wipe(NULL);
}

/* ---- concurrency ----------------------------------------------------- */

typedef struct ingester {
	const char *conninfo;
	int64_t service_id;
	const char *key;
	pthread_barrier_t *start;
	int rc;
	char msg[PR_ERROR_MSG_MAX];
} ingester;

/* Many new functions shared with the other ingester, in a different order. */
static void *race_ingest(void *arg)
{
	ingester *g = arg;
	static const char *types[] = {"cpu"};
	static const char *units[] = {"nanoseconds"};
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	profile_summary s = {0};
	db_capture m;
	db *d = NULL;
	int64_t id;
	bool reverse = g->key[0] == 'b';

	if ((g->rc = db_open(&d, g->conninfo, &err)) < 0 ||
	    (g->rc = profile_new(&p, PROFILE_FMT_FOLDED, "race", NULL, &err)) < 0 ||
	    (g->rc = profile_set_value_types(p, 1, types, units, &err)) < 0)
		goto out;
	for (int i = 0; i < 2000; i++) {
		char name[32];
		uint32_t f;
		int64_t v = 1 + i;
		int k = reverse ? 1999 - i : i;
		snprintf(name, sizeof(name), "shared_fn_%d", k);
		if ((g->rc = profile_intern(p, &f, name, strlen(name), "", 0, &err)) < 0 ||
		    (g->rc = profile_add_sample(p, &f, 1, &v, &err)) < 0)
			goto out;
	}
	if ((g->rc = profile_summarize(&s, p, 0, &err)) < 0)
		goto out;
	meta_init(&m, g->service_id, g->key);
	pthread_barrier_wait(g->start);
	g->rc = db_capture_insert(d, &id, &m, p, &s, &err);
out:
	snprintf(g->msg, sizeof(g->msg), "%s", err.msg);
	profile_summary_release(&s);
	profile_free(p);
	db_close(d);
	return NULL;
}

static void test_concurrent_ingests_share_new_functions(void **state)
{
	testdb *t = *state;
	int64_t sid = testdb_add_service(t, "svc");
	pthread_barrier_t start;
	pthread_t th[2];
	ingester g[2] = {{t->conninfo, sid, KEY_A, &start, 0, ""},
			 {t->conninfo, sid, KEY_B, &start, 0, ""}};

	pthread_barrier_init(&start, NULL, 2);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, race_ingest, &g[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&start);
	for (int i = 0; i < 2; i++)
		if (g[i].rc != 0)
			fail_msg("ingester %d: %s", i, g[i].msg);
	assert_int_equal(testdb_int(t, "select count(*) from functions"), 2000);
	assert_int_equal(testdb_int(t, "select count(*) from profile_functions"), 4000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_migrate_twice_applies_nothing_the_second_time,
						testdb_setup_empty, testdb_teardown),
		cmocka_unit_test_setup_teardown(
			test_concurrent_migrations_apply_each_migration_once, testdb_setup_empty,
			testdb_teardown),
		cmocka_unit_test_setup_teardown(
			test_open_check_sets_the_session_up_with_or_without_a_schema,
			testdb_setup_empty, testdb_teardown),
		cmocka_unit_test_setup_teardown(test_a_schema_a_newer_profreg_migrated_is_refused,
						testdb_setup_empty, testdb_teardown),
		cmocka_unit_test_setup_teardown(test_migrations_run_as_the_schema_s_owner,
						testdb_setup_empty, testdb_teardown),
		cmocka_unit_test_setup_teardown(test_open_check_failures_say_which_step,
						testdb_setup_empty, testdb_teardown),
		cmocka_unit_test_setup(test_vector_columns_are_compressed_with_lz4, testdb_reset),
		cmocka_unit_test_setup(test_service_add_enable_disable_get_and_list, testdb_reset),
		cmocka_unit_test_setup(test_empty_service_list_is_null_and_zero, testdb_reset),
		cmocka_unit_test_setup(test_duplicate_service_is_eexists_and_names_it,
				       testdb_reset),
		cmocka_unit_test_setup(test_invalid_service_names_are_usage_errors, testdb_reset),
		cmocka_unit_test_setup(test_unknown_service_is_not_found, testdb_reset),
		cmocka_unit_test_setup(test_service_changes_are_audited, testdb_reset),
		cmocka_unit_test_setup(test_capture_round_trips_row_and_function_numbers,
				       testdb_reset),
		cmocka_unit_test_setup(test_times_round_trip_to_the_microsecond, testdb_reset),
		cmocka_unit_test_setup(test_unknown_fields_are_stored_as_null_and_read_as_zero,
				       testdb_reset),
		cmocka_unit_test_setup(test_hostile_and_huge_function_names_round_trip_exactly,
				       testdb_reset),
		cmocka_unit_test_setup(test_same_name_in_two_files_is_two_functions, testdb_reset),
		cmocka_unit_test_setup(test_empty_profile_stores_zero_totals, testdb_reset),
		cmocka_unit_test_setup(test_zero_total_gives_zero_shares_not_nan, testdb_reset),
		cmocka_unit_test_setup(test_capture_is_found_by_service_and_blob_key, testdb_reset),
		cmocka_unit_test_setup(
			test_a_batch_keys_functions_by_name_and_file_across_its_captures,
			testdb_reset),
		cmocka_unit_test_setup(
			test_a_later_batch_finds_known_functions_and_interns_only_new_ones,
			testdb_reset),
		cmocka_unit_test_setup(test_same_blob_twice_for_one_service_is_eexists,
				       testdb_reset),
		cmocka_unit_test_setup(test_bad_capture_fields_are_rejected, testdb_reset),
		cmocka_unit_test_setup(test_rollback_leaves_nothing_behind, testdb_reset),
		cmocka_unit_test_setup(test_commit_after_a_failed_statement_is_an_error,
				       testdb_reset),
		cmocka_unit_test_setup(
			test_two_captures_in_one_transaction_keep_their_own_functions,
			testdb_reset),
		cmocka_unit_test_setup(test_capture_list_filters_and_orders_newest_first,
				       testdb_reset),
		cmocka_unit_test_setup(test_missing_capture_is_not_found, testdb_reset),
		cmocka_unit_test_setup(test_audit_rows_are_written_and_checked, testdb_reset),
		cmocka_unit_test_setup(test_many_audit_rows_keep_their_order_and_text,
				       testdb_reset),
		cmocka_unit_test_setup(test_many_captures_are_found_in_one_call, testdb_reset),
		cmocka_unit_test_setup(test_many_captures_in_one_call_fail_together, testdb_reset),
		cmocka_unit_test_setup(test_advisory_lock_is_held_by_one_session, testdb_reset),
		cmocka_unit_test_setup(test_repeated_statements_are_prepared_once_and_stay_right,
				       testdb_reset),
		cmocka_unit_test_setup(test_a_pipeline_is_one_transaction_and_stops_at_its_failure,
				       testdb_reset),
		cmocka_unit_test_setup(test_a_session_whose_set_up_failed_is_set_up_again,
				       testdb_reset),
		cmocka_unit_test_setup(test_session_is_named_profreg, testdb_reset),
		cmocka_unit_test_setup(test_insert_without_a_transaction_commits_on_its_own,
				       testdb_reset),
		cmocka_unit_test_setup(test_a_dropped_connection_is_a_database_error, testdb_reset),
		cmocka_unit_test(test_connection_failure_names_the_problem_and_hides_the_password),
		cmocka_unit_test(test_redacted_conninfo_hides_passwords),
		cmocka_unit_test(test_wiped_conninfo_keeps_no_password_in_place),
		cmocka_unit_test_setup(test_concurrent_ingests_share_new_functions, testdb_reset),
	};

	return cmocka_run_group_tests_name("db", tests, testdb_group_setup, testdb_group_teardown);
}
