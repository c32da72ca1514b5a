/*
 * testdb.c: per-test databases (see testdb.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "tests/support/testdb.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <libpq-fe.h>

static unsigned testdb_counter;

static void quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/* A connection to the server's maintenance database, or NULL after saying why. */
static PGconn *admin_connect(void)
{
	const char *base = getenv("PROFREG_TEST_DB");
	PGconn *c;

	if (!base || !*base) {
		fprintf(stderr,
			"testdb: PROFREG_TEST_DB is not set (run the tests through "
			"tests/run or make check)\n");
		return NULL;
	}
	c = PQconnectdb(base);
	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "testdb: cannot connect to PROFREG_TEST_DB: %s", PQerrorMessage(c));
		PQfinish(c);
		return NULL;
	}
	PQsetNoticeProcessor(c, quiet, NULL);
	return c;
}

static bool admin_exec(PGconn *c, const char *what, const char *name, const char *fmt)
{
	char *ident = PQescapeIdentifier(c, name, strlen(name));
	char sql[512];
	PGresult *res;
	bool ok;

	if (!ident)
		return false;
	snprintf(sql, sizeof(sql), fmt, ident);
	PQfreemem(ident);
	res = PQexec(c, sql);
	ok = PQresultStatus(res) == PGRES_COMMAND_OK;
	if (!ok)
		fprintf(stderr, "testdb: cannot %s '%s': %s", what, name, PQerrorMessage(c));
	PQclear(res);
	return ok;
}

testdb *testdb_new(bool migrate)
{
	const char *base = getenv("PROFREG_TEST_DB");
	pr_error err = PR_ERROR_INIT;
	struct timespec ts;
	PGconn *admin = NULL;
	testdb *t = NULL;
	size_t len;
	int applied;

	if (!(admin = admin_connect()))
		return NULL;
	if (!(t = calloc(1, sizeof(*t))))
		goto fail;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (!(t->name = malloc(64)))
		goto fail;
	snprintf(t->name, 64, "profreg_test_%ld_%u_%lx", (long)getpid(), testdb_counter++,
		 (unsigned long)ts.tv_nsec);
	/*
	 * template0: nobody is ever connected to it, unlike template1. Its
	 * files copied, not written through the WAL: a third less time.
	 */
	if (!admin_exec(admin, "create database", t->name,
			"create database %s template template0 encoding 'UTF8' strategy file_copy"))
		goto fail_name;
	len = strlen(base) + strlen(t->name) + 16;
	if (!(t->conninfo = malloc(len)))
		goto fail;
	snprintf(t->conninfo, len, "%s dbname=%s", base, t->name);
	if (db_open(&t->db, t->conninfo, &err) < 0) {
		fprintf(stderr, "testdb: %s\n", err.msg);
		goto fail;
	}
	if (migrate && db_migrate(t->db, &applied, &err) < 0) {
		fprintf(stderr, "testdb: %s\n", err.msg);
		goto fail;
	}
	PQfinish(admin);
	return t;
fail_name:
	free(t->name);
	t->name = NULL;
fail:
	PQfinish(admin);
	testdb_free(t);
	return NULL;
}

void testdb_free(testdb *t)
{
	PGconn *admin;

	if (!t)
		return;
	db_close(t->db);
	if (t->raw)
		PQfinish(t->raw);
	if (t->name && (admin = admin_connect())) {
		/* force: a test that leaked a connection must not leak the database. */
		admin_exec(admin, "drop database", t->name,
			   "drop database if exists %s with (force)");
		PQfinish(admin);
	}
	free(t->name);
	free(t->conninfo);
	free(t);
}

int testdb_group_setup(void **state)
{
	*state = testdb_new(true);
	return *state ? 0 : -1;
}

int testdb_group_teardown(void **state)
{
	testdb_free(*state);
	*state = NULL;
	return 0;
}

/* The side connection of the test's own queries, opened on first use. */
static ConnStatusType raw_connect(testdb *t)
{
	if (!t->raw) {
		t->raw = PQconnectdb(t->conninfo);
		PQsetNoticeProcessor(t->raw, quiet, NULL);
	}
	return PQstatus(t->raw);
}

int testdb_reset(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	/*
	 * Emptied row by row, not truncated: TRUNCATE gives every table and
	 * index a new file, which cost the server about 0.3 s of CPU a reset
	 * (test_lifecycle's 72 resets: 22 s), while deleting the few rows a
	 * test leaves is nearly free. Replica mode skips the foreign keys'
	 * and the tables' own triggers, as TRUNCATE does, and sequences start
	 * again, as with RESTART IDENTITY.
	 */
	static const char sql[] =
		"set lock_timeout = '10s';"
		"set session_replication_role = replica;"
		"do $$ declare r record; begin"
		" for r in select schemaname, tablename from pg_tables"
		"  where schemaname = current_schema() and tablename <> 'schema_migrations'"
		" loop execute format('delete from %I.%I', r.schemaname, r.tablename); end loop;"
		" end $$;"
		"select count(setval(format('%I.%I', schemaname, sequencename)::regclass,"
		" start_value, false)) from pg_sequences where schemaname = current_schema();"
		"reset session_replication_role";
	PGresult *res;
	bool ok;

	if (!t)
		return -1;
	db_close(t->db);
	t->db = NULL;
	if (db_open(&t->db, t->conninfo, &err) < 0) {
		fprintf(stderr, "testdb: %s\n", err.msg);
		return -1;
	}
	raw_connect(t);
	res = PQexec(t->raw, sql);
	ok = PQresultStatus(res) == PGRES_COMMAND_OK;
	if (!ok)
		fprintf(stderr, "testdb: cannot empty '%s': %s", t->name, PQerrorMessage(t->raw));
	PQclear(res);
	return ok ? 0 : -1;
}

int testdb_setup(void **state)
{
	*state = testdb_new(true);
	return *state ? 0 : -1;
}

int testdb_setup_empty(void **state)
{
	*state = testdb_new(false);
	return *state ? 0 : -1;
}

int testdb_teardown(void **state)
{
	testdb_free(*state);
	*state = NULL;
	return 0;
}

static PGresult *side_query(testdb *t, const char *sql)
{
	PGresult *res;

	if (raw_connect(t) != CONNECTION_OK)
		fail_msg("testdb: cannot connect to '%s': %s", t->name, PQerrorMessage(t->raw));
	res = PQexec(t->raw, sql);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		fprintf(stderr, "testdb: query failed: %s\n%s", sql, PQerrorMessage(t->raw));
		PQclear(res);
		fail_msg("testdb: query failed");
	}
	return res;
}

int64_t testdb_int(testdb *t, const char *sql)
{
	PGresult *res = side_query(t, sql);
	int64_t v = 0;

	if (PQntuples(res) > 0 && !PQgetisnull(res, 0, 0))
		v = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return v;
}

const char *testdb_text(testdb *t, const char *sql)
{
	static char out[4096];
	PGresult *res = side_query(t, sql);
	const char *v = NULL;

	if (PQntuples(res) > 0 && !PQgetisnull(res, 0, 0)) {
		snprintf(out, sizeof(out), "%s", PQgetvalue(res, 0, 0));
		v = out;
	}
	PQclear(res);
	return v;
}

void testdb_execf(testdb *t, const char *fmt, ...)
{
	pr_error err = PR_ERROR_INIT;
	va_list ap;
	char *q = NULL;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !(q = malloc((size_t)n + 1)))
		fail_msg("testdb: cannot format '%s'", fmt);
	va_start(ap, fmt);
	vsnprintf(q, (size_t)n + 1, fmt, ap);
	va_end(ap);
	if (db_exec(t->db, NULL, &err, "test sql", q, 0, NULL) < 0) {
		fprintf(stderr, "testdb: %s\n", q);
		free(q);
		fail_msg("%s", err.msg);
	}
	free(q);
}

int64_t testdb_add_service(testdb *t, const char *name)
{
	pr_error err = PR_ERROR_INIT;
	db_service s = {0};
	int64_t id;

	if (db_service_add(t->db, name, "team-x", &err) < 0 ||
	    db_service_set_enabled(t->db, name, true, &err) < 0 ||
	    db_service_get(t->db, &s, name, &err) < 0)
		fail_msg("testdb: cannot add service '%s': %s", name, err.msg);
	id = s.id;
	db_service_release(&s);
	return id;
}
