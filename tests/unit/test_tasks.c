/*
 * test_tasks.c: the task table of a night spread over workers
 * (jobs/tasks.h) against the real PostgreSQL: claims in order, no task
 * claimed twice by two connections at once (SKIP LOCKED), a lease that
 * runs out is claimed again and the old holder can neither renew nor
 * finish it, attempts are bounded, a released task goes back to the
 * queue, tasks of a run that ended are never claimed; and analysis parts
 * that are malformed are refused without changing the analysis.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include <jansson.h>
#include "baselines/analysis.h"
#include "jobs/runs.h"
#include "jobs/tasks.h"
#include "tests/support/testdb.h"

/* A running run and n services with a queued task each; returns the run's id. */
static int64_t queue(testdb *t, size_t n)
{
	pr_error err = PR_ERROR_INIT;
	int64_t run = 0, ids[8];
	const char *names[8];
	char buf[8][32];
	json_t *params = json_pack("{s:I,s:I}", "at_us", (json_int_t)1, "night_us",
				   (json_int_t)2);

	assert_true(n <= 8);
	assert_int_equal(runs_begin(&run, t->db, "nightly", 0, NULL, &err), 0);
	for (size_t i = 0; i < n; i++) {
		db_service s;
		snprintf(buf[i], sizeof(buf[i]), "svc-%zu", i);
		memset(&s, 0, sizeof(s));
		assert_int_equal(db_service_add(t->db, buf[i], NULL, &err), 0);
		assert_int_equal(db_service_get(t->db, &s, buf[i], &err), 0);
		ids[i] = s.id;
		names[i] = buf[i];
		db_service_release(&s);
	}
	assert_int_equal(tasks_enqueue(t->db, run, ids, names, n, TASKS_KIND_NIGHTLY, params,
				       &err), 0);
	/* Queuing the same run again adds nothing. */
	assert_int_equal(tasks_enqueue(t->db, run, ids, names, n, TASKS_KIND_NIGHTLY, params,
				       &err), 0);
	json_decref(params);
	return run;
}

static void test_claims_take_the_oldest_open_task_once(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	int64_t run = queue(t, 3);
	task a, b, c, d;
	bool got;

	assert_int_equal(testdb_int(t, "select count(*) from tasks"), 3);
	assert_int_equal(tasks_claim(&a, &got, t->db, run, "w1", 60, 3, &err), 0);
	assert_true(got);
	assert_string_equal(a.service, "svc-0");
	assert_string_equal(a.kind, TASKS_KIND_NIGHTLY);
	assert_int_equal(a.attempts, 1);
	assert_int_equal(json_integer_value(json_object_get(a.params, "night_us")), 2);
	assert_int_equal(tasks_claim(&b, &got, t->db, 0, "w2", 60, 3, &err), 0);
	assert_true(got);
	assert_string_equal(b.service, "svc-1");
	assert_int_equal(tasks_claim(&c, &got, t->db, run, "w1", 60, 3, &err), 0);
	assert_true(got);
	assert_int_equal(tasks_claim(&d, &got, t->db, run, "w2", 60, 3, &err), 0);
	assert_false(got);
	assert_int_equal(testdb_int(t, "select count(*) from tasks where state = 'leased'"
				       " and lease_until > now() + interval '50 seconds'"), 3);
	{
		tasks_counts n;
		assert_int_equal(tasks_count(&n, t->db, run, &err), 0);
		assert_int_equal(n.leased, 3);
		assert_int_equal(n.queued, 0);
	}
	task_release(&a);
	task_release(&b);
	task_release(&c);
}

static void test_two_connections_never_claim_the_same_task(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	int64_t run = queue(t, 8), seen[8];
	db *other = NULL;
	task a, b;
	bool got_a, got_b;
	size_t n = 0;

	assert_int_equal(db_open(&other, t->conninfo, &err), 0);
	/*
	 * The first claimer's row lock is held in an open transaction: the
	 * second one skips that row instead of waiting for it or taking it.
	 */
	assert_int_equal(db_begin(t->db, &err), 0);
	assert_int_equal(tasks_claim(&a, &got_a, t->db, run, "w1", 60, 3, &err), 0);
	assert_int_equal(tasks_claim(&b, &got_b, other, run, "w2", 60, 3, &err), 0);
	assert_true(got_a && got_b);
	assert_true(a.id != b.id);
	assert_int_equal(db_commit(t->db, &err), 0);
	seen[n++] = a.id, seen[n++] = b.id;
	task_release(&a);
	task_release(&b);
	/* Then alternately until nothing is left: each task once. */
	for (int i = 0; i < 20; i++) {
		task x;
		bool got;
		assert_int_equal(tasks_claim(&x, &got, i % 2 ? other : t->db, run,
					     i % 2 ? "w2" : "w1", 60, 3, &err), 0);
		if (!got)
			break;
		assert_true(n < 8);
		for (size_t k = 0; k < n; k++)
			assert_true(seen[k] != x.id);
		seen[n++] = x.id;
		task_release(&x);
	}
	assert_int_equal(n, 8);
	assert_int_equal(testdb_int(t, "select count(*) from tasks where attempts = 1"), 8);
	db_close(other);
}

static void test_a_lease_that_runs_out_is_claimed_again(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	int64_t run = queue(t, 1);
	task a, b;
	bool got, kept = true;
	json_t *result = json_pack("{s:s}", "k", "v");

	/* A lease of 0 seconds has run out by the next statement. */
	assert_int_equal(tasks_claim(&a, &got, t->db, run, "dead", 0, 3, &err), 0);
	assert_true(got);
	assert_int_equal(tasks_claim(&b, &got, t->db, run, "alive", 60, 3, &err), 0);
	assert_true(got);
	assert_int_equal(a.id, b.id);
	assert_int_equal(b.attempts, 2);
	/* The old holder can neither keep nor finish it. */
	assert_int_equal(tasks_renew(t->db, a.id, "dead", a.attempts, 60, &kept, &err), 0);
	assert_false(kept);
	assert_int_equal(tasks_complete(t->db, a.id, "dead", a.attempts, result, &err),
			 PR_ENOTFOUND);
	assert_non_null(strstr(err.msg, "no longer leased to worker 'dead'"));
	assert_int_equal(tasks_fail(t->db, a.id, "dead", a.attempts, "x", &err), PR_ENOTFOUND);
	assert_int_equal(tasks_renew(t->db, b.id, "alive", b.attempts, 60, &kept, &err), 0);
	assert_true(kept);
	assert_int_equal(tasks_complete(t->db, b.id, "alive", b.attempts, result, &err), 0);
	assert_string_equal(testdb_text(t, "select state || ' ' || worker || ' ' || "
				      "(result->>'k') from tasks"), "done alive v");
	assert_int_equal(testdb_int(t, "select count(*) from tasks where lease_until is null"), 1);
	/* A done task is never claimed again. */
	{
		task c;
		assert_int_equal(tasks_claim(&c, &got, t->db, run, "w", 0, 3, &err), 0);
	}
	assert_false(got);
	{
		task_outcome *o = NULL;
		size_t n = 0;
		assert_int_equal(tasks_outcomes(&o, &n, t->db, run, &err), 0);
		assert_int_equal(n, 1);
		assert_string_equal(o[0].state, "done");
		assert_string_equal(json_string_value(json_object_get(o[0].result, "k")), "v");
		assert_int_equal(o[0].attempts, 2);
		tasks_outcomes_free(o, n);
	}
	assert_int_equal(tasks_clear_results(t->db, run, &err), 0);
	assert_int_equal(testdb_int(t, "select count(*) from tasks where result is null"), 1);
	json_decref(result);
	task_release(&a);
	task_release(&b);
}

/* A handler whose connection the server drops once its work is done. */
static testdb *drop_t;

static int work_then_lose_the_connection(json_t **result, const job_env *env, const task *t,
					 pr_error *err)
{
	char q[160];
	int64_t pid;
	struct pg_result *res = NULL;

	(void)t;
	if (db_exec(env->d, &res, err, "reading the backend", "select pg_backend_pid()", 0,
		    NULL) < 0)
		return -1;
	pid = db_get_i64(res, 0, 0);
	db_result_free(res);
	snprintf(q, sizeof(q), "select pg_terminate_backend(%lld)", (long long)pid);
	(void)testdb_text(drop_t, q);
	*result = json_pack("{s:s}", "k", "kept");
	return 0;
}

/*
 * Queue one task and work it with `fn` on a connection of its own, as a
 * worker that mends a dropped connection when `reconnect`; the session
 * takes the advisory lock `lock` first when one is given. Returns what
 * tasks_work_one did; *wd is the connection, for the caller to close.
 */
static int work_on_own_connection(testdb *t, tasks_handler fn, bool reconnect, const char *lock,
				  db **wd, tasks_worked *out)
{
	pr_error err = PR_ERROR_INIT;
	int64_t run = queue(t, 1);
	job_env env = {0};
	tasks_worker w = {"w", 60, 3, 0, NULL, 0, NULL, reconnect};
	bool locked = false;

	drop_t = t;
	assert_int_equal(db_open(wd, t->conninfo, &err), 0);
	if (lock) {
		assert_int_equal(db_try_advisory_lock(*wd, lock, &locked, &err), 0);
		assert_true(locked);
	}
	env.d = *wd;
	return tasks_work_one(out, &env, &w, run, TASKS_KIND_NIGHTLY, fn, &err);
}

/*
 * The work of a task done, the server drops the worker's connection
 * before the result is recorded (a restart, a failover): the worker
 * connects again and records it while its lease holds, instead of
 * leaving the task to be worked again by the next claim.
 */
static void test_a_result_is_recorded_on_a_new_connection_when_the_old_one_dropped(void **state)
{
	testdb *t = *state;
	db *wd = NULL;
	tasks_worked out;

	assert_int_equal(work_on_own_connection(t, work_then_lose_the_connection, true, NULL, &wd,
						&out), 0);
	assert_true(out.claimed);
	assert_string_equal(out.outcome, "done");
	assert_string_equal(testdb_text(t, "select state || ' ' || attempts || ' ' ||"
				      " (result->>'k') from tasks"), "done 1 kept");
	db_close(wd);
}

/* A handler whose connection the server drops while it works: the work fails. */
static int lose_the_connection_while_working(json_t **result, const job_env *env,
					     const task *t, pr_error *err)
{
	struct pg_result *res = NULL;

	*result = NULL;
	if (work_then_lose_the_connection(result, env, t, err) < 0)
		return -1;
	json_decref(*result);
	*result = NULL;
	if (db_exec(env->d, &res, err, "reading a service", "select 1", 0, NULL) < 0)
		return -1;
	db_result_free(res);
	return 0;
}

/*
 * Work that failed because the server dropped the connection is not
 * recorded as a failure on a new connection: a failed task is never
 * tried again, and the drop, not the service, is why it failed. Its
 * lease hands it on.
 */
static void test_work_the_database_dropped_is_handed_on_not_failed(void **state)
{
	testdb *t = *state;
	db *wd = NULL;
	tasks_worked out;

	assert_true(work_on_own_connection(t, lose_the_connection_while_working, true, NULL, &wd,
					   &out) < 0);
	assert_string_equal(testdb_text(t, "select state || ' ' || attempts from tasks"),
			    "leased 1");
	db_close(wd);
}

/*
 * A session that holds a lock (the coordinating nightly works tasks on
 * the connection that holds the nightly's) is not mended behind its
 * back: the lock went with the old session, so the call fails instead of
 * carrying on without it.
 */
static void test_a_connection_holding_a_lock_is_not_mended_behind_its_back(void **state)
{
	testdb *t = *state;
	db *wd = NULL;
	tasks_worked out;

	assert_true(work_on_own_connection(t, work_then_lose_the_connection, false, "test-lock",
					   &wd, &out) < 0);
	assert_false(db_connected(wd));
	db_close(wd);
}

static void test_attempts_are_bounded_then_the_task_fails(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	int64_t run = queue(t, 1);
	task a;
	bool got;
	size_t n = 0;

	for (int i = 0; i < 2; i++) {
		assert_int_equal(tasks_claim(&a, &got, t->db, run, "dies", 0, 2, &err), 0);
		assert_true(got);
		task_release(&a);
	}
	assert_int_equal(tasks_claim(&a, &got, t->db, run, "w", 60, 2, &err), 0);
	assert_false(got);
	assert_int_equal(tasks_reap(t->db, run, 2, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(testdb_text(t, "select state || ': ' || error from tasks"),
			    "failed: its last worker (dies) was lost, after 2 attempts");
}

/*
 * Two processes of one name (`--id %H` on hosts of one name, host:pid in
 * containers that all run as pid 1): the one stalled past its lease can
 * neither keep nor finish the task the other claimed since. The name
 * alone let it record its stale result over the live claim.
 */
static void test_a_stale_claim_of_the_same_name_cannot_finish(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	int64_t run = queue(t, 1);
	task a, b;
	bool got, kept = true;
	json_t *result = json_pack("{s:s}", "k", "stale");

	assert_int_equal(tasks_claim(&a, &got, t->db, run, "host", 0, 3, &err), 0);
	assert_true(got);
	assert_int_equal(tasks_claim(&b, &got, t->db, run, "host", 60, 3, &err), 0);
	assert_true(got);
	assert_int_equal(a.id, b.id);
	assert_int_equal(tasks_renew(t->db, a.id, "host", a.attempts, 60, &kept, &err), 0);
	assert_false(kept);
	assert_int_equal(tasks_complete(t->db, a.id, "host", a.attempts, result, &err),
			 PR_ENOTFOUND);
	assert_int_equal(tasks_fail(t->db, a.id, "host", a.attempts, "x", &err), PR_ENOTFOUND);
	assert_string_equal(testdb_text(t, "select state || ' ' || attempts from tasks"),
			    "leased 2");
	json_decref(result);
	result = json_pack("{s:s}", "k", "live");
	assert_int_equal(tasks_complete(t->db, b.id, "host", b.attempts, result, &err), 0);
	assert_string_equal(testdb_text(t, "select state || ' ' || (result->>'k') from tasks"),
			    "done live");
	json_decref(result);
	task_release(&a);
	task_release(&b);
}

static void test_release_and_ended_runs(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	int64_t run = queue(t, 1);
	task a;
	bool got;

	assert_int_equal(tasks_claim(&a, &got, t->db, run, "w", 60, 3, &err), 0);
	assert_true(got);
	assert_int_equal(tasks_release(t->db, a.id, "w", a.attempts, &err), 0);
	assert_string_equal(testdb_text(t, "select state || ' ' || attempts || ' ' || "
				      "coalesce(worker, '-') from tasks"), "queued 0 -");
	assert_int_equal(tasks_release(t->db, a.id, "w", a.attempts, &err), PR_ENOTFOUND);
	task_release(&a);
	/* A run that ended (or was interrupted) has nothing left to claim. */
	assert_int_equal(runs_finish(t->db, run, "interrupted", NULL, &err), 0);
	assert_int_equal(tasks_claim(&a, &got, t->db, 0, "w", 60, 3, &err), 0);
	assert_false(got);
	{
		json_t *list = NULL;
		assert_int_equal(tasks_list(&list, t->db, 0, &err), 0);
		assert_int_equal(json_array_size(list), 1);
		assert_string_equal(json_string_value(json_object_get(json_array_get(list, 0),
								      "state")), "queued");
		json_decref(list);
	}
}

/*
 * A coordinator whose connection dropped and was made again (ingest does
 * that after a server dropped it on a bad row) has a new session: its run
 * names the old one. It still works its own run's tasks, or the night
 * waits on tasks nobody may claim until its deadline.
 */
static void test_a_coordinator_on_a_new_connection_claims_its_tasks(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	int64_t run = queue(t, 2);
	db *other = NULL;
	task a;
	bool got = false;
	char sql[160];

	assert_int_equal(db_open(&other, t->conninfo, &err), 0);
	snprintf(sql, sizeof(sql),
		 "select pg_terminate_backend(backend_pid) from runs where id = %lld",
		 (long long)run);
	assert_int_equal(db_exec(other, NULL, &err, "terminating", sql, 0, NULL), 0);
	for (int i = 0; i < 100; i++) {
		snprintf(sql, sizeof(sql), "select count(*) from pg_stat_activity a join runs r"
			 " on a.pid = r.backend_pid where r.id = %lld", (long long)run);
		if (testdb_int(t, sql) == 0)
			break;
		nanosleep(&(struct timespec){0, 20000000L}, NULL);
	}
	/* The dropped session is noticed by the next statement, then made again. */
	(void)db_exec(t->db, NULL, &err, "probing", "select 1", 0, NULL);
	pr_error_clear(&err);
	assert_int_equal(db_reconnect(t->db, &err), 0);
	assert_int_equal(tasks_claim(&a, &got, t->db, run, "coordinator", 60, 3, &err), 0);
	assert_true(got);
	task_release(&a);
	/* A worker, which claims from any run, still leaves it alone. */
	assert_int_equal(tasks_claim(&a, &got, other, 0, "w", 60, 3, &err), 0);
	assert_false(got);
	db_close(other);
}

/* Parts from another process are input: a malformed one changes nothing. */
static void test_malformed_parts_are_refused(void **state)
{
	static const char *const bad[] = {
		"{}",
		"{\"tests\": \"x\", \"targets\": [], \"skipped\": [], \"judged\": [],"
		" \"services\": 0, \"filtered\": 0, \"db_seconds\": 0, \"stats_seconds\": 0}",
		/* a test pointing at a target the part does not have */
		"{\"tests\": [{\"target\": 0}], \"targets\": [], \"skipped\": [], \"judged\": [],"
		" \"services\": 1, \"filtered\": 0, \"db_seconds\": 0, \"stats_seconds\": 0}",
		/* a target whose matrix does not fit its captures */
		"{\"tests\": [], \"targets\": [{\"base\": [], \"cur\": [], \"gb\": [], \"gc\": [],"
		" \"look\": 1, \"phi\": 1, \"phi_df\": 0, \"func_ids\": [1], \"self\": [1, 2]}],"
		" \"skipped\": [], \"judged\": [], \"services\": 1, \"filtered\": 0,"
		" \"db_seconds\": 0, \"stats_seconds\": 0}",
		/* a skipped target without its reason */
		"{\"tests\": [], \"targets\": [], \"skipped\": [{\"service\": \"a\"}],"
		" \"judged\": [],"
		" \"services\": 0, \"filtered\": 0, \"db_seconds\": 0, \"stats_seconds\": 0}",
	};
	analysis a;
	analysis_opts o;

	(void)state;
	analysis_opts_default(&o);
	analysis_init(&a, &o);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pr_error err = PR_ERROR_INIT;
		json_t *part = json_loads(bad[i], 0, NULL);
		assert_non_null(part);
		assert_int_equal(analysis_part_merge(&a, part, &err), PR_EDATA);
		assert_non_null(strstr(err.msg, "cannot read an analysis part: bad "));
		assert_int_equal(a.ntests, 0);
		assert_int_equal(a.ntargets, 0);
		assert_int_equal(a.services, 0);
		json_decref(part);
	}
	/* An empty analysis round-trips to a part that merges to nothing. */
	{
		pr_error err = PR_ERROR_INIT;
		json_t *part = NULL;
		assert_int_equal(analysis_part_json(&part, &a), 0);
		assert_int_equal(analysis_part_merge(&a, part, &err), 0);
		assert_int_equal(a.ntests, 0);
		json_decref(part);
	}
	analysis_release(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_claims_take_the_oldest_open_task_once, testdb_reset),
		cmocka_unit_test_setup(test_two_connections_never_claim_the_same_task,
				       testdb_reset),
		cmocka_unit_test_setup(test_a_lease_that_runs_out_is_claimed_again, testdb_reset),
		cmocka_unit_test_setup(test_attempts_are_bounded_then_the_task_fails, testdb_reset),
		cmocka_unit_test_setup(test_a_stale_claim_of_the_same_name_cannot_finish,
				       testdb_reset),
		cmocka_unit_test_setup(test_release_and_ended_runs, testdb_reset),
		cmocka_unit_test_setup(test_a_coordinator_on_a_new_connection_claims_its_tasks,
				       testdb_reset),
		cmocka_unit_test_setup(
			test_a_result_is_recorded_on_a_new_connection_when_the_old_one_dropped,
			testdb_reset),
		cmocka_unit_test_setup(test_work_the_database_dropped_is_handed_on_not_failed,
				       testdb_reset),
		cmocka_unit_test_setup(
			test_a_connection_holding_a_lock_is_not_mended_behind_its_back,
			testdb_reset),
		cmocka_unit_test(test_malformed_parts_are_refused),
	};
	return cmocka_run_group_tests_name("tasks", tests, testdb_group_setup,
					   testdb_group_teardown);
}
