/*
 * testdb.h: a fresh, uniquely named database per test on the server that
 * $PROFREG_TEST_DB names (tests/run starts one), dropped at teardown.
 *
 * Creating a database and migrating it costs about a second, so the usual
 * shape is one database per test binary, emptied before each test:
 *   cmocka_unit_test_setup(test_x, testdb_reset)
 *   ...
 *   cmocka_run_group_tests(tests, testdb_group_setup, testdb_group_teardown)
 * A test that needs a database of its own (or an unmigrated one) uses
 *   cmocka_unit_test_setup_teardown(test_y, testdb_setup_empty, testdb_teardown)
 * In the test: `testdb *t = *state;` then use t->db. A setup failure (no
 * PROFREG_TEST_DB, server down) fails the test with the reason; it never
 * passes silently.
 */
#ifndef PR_TESTDB_H
#define PR_TESTDB_H

#include <stdbool.h>
#include <stdint.h>

#include "pipeline/db.h"

typedef struct testdb {
	char *name;     /* profreg_test_<pid>_<n>_<random> */
	char *conninfo; /* libpq connection string for it */
	db *db;         /* connected; migrated unless made with migrate=false */
	void *raw;      /* PGconn * for testdb_int/testdb_text, opened on demand */
} testdb;

/*
 * Create the database, connect and (when `migrate`) migrate it. Returns
 * NULL after printing the reason on stderr. Free with testdb_free, which
 * closes every connection it made and drops the database.
 */
testdb *testdb_new(bool migrate);
void testdb_free(testdb *t);

/* cmocka group fixtures: one migrated testdb shared by the group's tests. */
int testdb_group_setup(void **state);
int testdb_group_teardown(void **state);

/*
 * cmocka per-test setup for a group's shared testdb: a fresh connection
 * (no open transaction, lock or temporary table carries over) and every
 * table but schema_migrations emptied, identities restarted.
 */
int testdb_reset(void **state);

/* cmocka per-test fixtures: a database of the test's own, migrated. */
int testdb_setup(void **state);
/* Same, without migrating (for tests of db_migrate itself). */
int testdb_setup_empty(void **state);
int testdb_teardown(void **state);

/*
 * Run `sql` (fixed test SQL, no parameters) on a side connection to the
 * test database and return the first column of the first row as an
 * integer / a string (static buffer, overwritten by the next call; NULL
 * for SQL NULL or no row). A failing query fails the test.
 */
int64_t testdb_int(testdb *t, const char *sql);
const char *testdb_text(testdb *t, const char *sql);

/* Run printf-formatted test SQL on t->db itself; a failing statement fails the test. */
void testdb_execf(testdb *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Register service `name` (team "team-x") and enable it; returns its id. */
int64_t testdb_add_service(testdb *t, const char *name);

#endif
