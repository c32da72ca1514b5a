/*
 * test_pager.c: the outbox against a real database (enqueue is
 * idempotent, only regressions at or above the threshold page, resolve
 * cancels unsent triggers and queues resolves for sent ones), and the
 * pure parts of the sender: dedup keys, backoff with jitter, Retry-After.
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

#include "jobs/pager.h"
#include "tests/support/testdb.h"

static void test_dedup_key_is_stable_and_separates_its_parts(void **state)
{
	char a[PAGER_KEY_MAX], b[PAGER_KEY_MAX], c[PAGER_KEY_MAX], d[PAGER_KEY_MAX];

	(void)state;
	pager_dedup_key(a, "svc", "cpu", "f", "x.go", "v1");
	pager_dedup_key(b, "svc", "cpu", "f", "x.go", "v1");
	pager_dedup_key(c, "svc", "cpu", "fx", ".go", "v1");
	pager_dedup_key(d, "svc", "cpu", "f", "x.go", "v2");
	assert_string_equal(a, b);
	assert_string_not_equal(a, c);
	assert_string_not_equal(a, d);
	assert_int_equal(strlen(a), 72);
	assert_memory_equal(a, "profreg-", 8);
	for (size_t i = 8; i < 72; i++)
		assert_non_null(strchr("0123456789abcdef", a[i]));
	pager_dedup_key(c, "svc", "cpu", "f", NULL, "v1");
	pager_dedup_key(d, "svc", "cpu", "f", "", "v1");
	assert_string_equal(c, d);
}

static void test_backoff_doubles_is_capped_and_jittered_in_the_upper_half(void **state)
{
	config_paging p;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.backoff_ms = 100;
	p.max_backoff_ms = 1000;
	assert_int_equal(pager_backoff_ms(&p, 1, 0), 50);
	assert_int_equal(pager_backoff_ms(&p, 1, 50), 100);
	assert_int_equal(pager_backoff_ms(&p, 2, 100), 200);
	assert_int_equal(pager_backoff_ms(&p, 3, 0), 200);
	assert_int_equal(pager_backoff_ms(&p, 10, 500), 1000);
	assert_int_equal(pager_backoff_ms(&p, 1000, 0), 500);
	for (uint32_t r = 0; r < 1000; r += 7) {
		uint32_t v = pager_backoff_ms(&p, 2, r * 2654435761u);
		assert_true(v >= 100 && v <= 200);
	}
	p.backoff_ms = 0;
	assert_int_equal(pager_backoff_ms(&p, 3, 12345), 0);
}

static void test_retry_after_reads_seconds_and_http_dates(void **state)
{
	int64_t ms = -1;
	/* 1994-11-06T08:49:37Z */
	const int64_t t = 784111777;

	(void)state;
	assert_int_equal(pager_retry_after(&ms, " 120", 0), 0);
	assert_int_equal(ms, 120000);
	assert_int_equal(pager_retry_after(&ms, "Sun, 06 Nov 1994 08:49:37 GMT", t - 30), 0);
	assert_int_equal(ms, 30000);
	assert_int_equal(pager_retry_after(&ms, "Sun, 06 Nov 1994 08:49:37 GMT", t + 30), 0);
	assert_int_equal(ms, 0);
	assert_int_equal(pager_retry_after(&ms, "99999999999999999999", 0), 0);
	assert_int_equal(ms, 86400LL * 1000);
	assert_int_equal(pager_retry_after(&ms, "soon", 0), -1);
	assert_int_equal(pager_retry_after(&ms, "12abc", 0), -1);
	assert_int_equal(pager_retry_after(&ms, "", 0), -1);
	assert_int_equal(pager_retry_after(&ms, NULL, 0), -1);
	/* The obsolete forms RFC 9110 still asks recipients to accept. */
	assert_int_equal(pager_retry_after(&ms, "Sunday, 06-Nov-94 08:49:37 GMT", t - 5), 0);
	assert_int_equal(ms, 5000);
	assert_int_equal(pager_retry_after(&ms, "Sun Nov  6 08:49:37 1994", t - 7), 0);
	assert_int_equal(ms, 7000);
}

/* A config paging every service to target "pd" from severity high. */
static void paging_config(config *c)
{
	static char *def[] = {(char *)"pd"};
	static config_target t[] = {{(char *)"pd", CONFIG_TARGET_PAGERDUTY, (char *)"http://127.0.0.1:9",
				     (char *)"PR_TEST_NO_SUCH_VAR", NULL}};

	memset(c, 0, sizeof(*c));
	c->paging.min_severity = STATS_SEV_HIGH;
	c->paging.max_attempts = 2;
	c->paging.connect_timeout_ms = 200;
	c->paging.timeout_ms = 500;
	c->paging.targets = t;
	c->paging.ntargets = 1;
	c->paging.default_targets = def;
	c->paging.ndefault = 1;
}

/* A stored finding row (the outbox references it) and its struct. */
static void make_finding(testdb *t, finding *f, stats_severity sev, finding_dir dir)
{
	memset(f, 0, sizeof(*f));
	f->service_id = testdb_int(t, "insert into services (name, enabled) values ('svc', true)"
				      " on conflict (name) do update set enabled = true returning id");
	f->id = testdb_int(t, "insert into findings (service_id, status) select id, 'open' from services"
			      " where name = 'svc' returning id");
	f->service = (char *)"svc";
	f->type = (char *)"cpu";
	f->function = (char *)"hot";
	f->file = (char *)"hot.c";
	f->current_release = (char *)"v2";
	f->significant = true;
	f->direction = dir;
	f->severity = sev;
	f->baseline_share = 0.1;
	f->current_share = 0.2;
	f->ci_low = 0.05;
	f->ci_high = 0.15;
	f->q_value = 0.001;
}

static void test_enqueue_twice_adds_one_row(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	config c;
	finding f;
	size_t added = 0;

	paging_config(&c);
	make_finding(t, &f, STATS_SEV_CRITICAL, FINDING_REGRESSION);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(db_begin(t->db, &err), 0);
		assert_int_equal(pager_enqueue_finding(t->db, &c, &f, 0, &added, &err), 0);
		assert_int_equal(db_commit(t->db, &err), 0);
	}
	assert_int_equal(added, 1);
	assert_int_equal(testdb_int(t, "select count(*) from pages where status = 'pending'"
				       " and event = 'trigger' and target = 'pd'"), 1);
	assert_int_equal(testdb_int(t, "select count(*) from pages where detail ->> 'function' = 'hot'"
				       " and dedup_key like 'profreg-%'"), 1);
}

static void test_rolled_back_enqueue_leaves_nothing(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	config c;
	finding f;

	paging_config(&c);
	make_finding(t, &f, STATS_SEV_HIGH, FINDING_REGRESSION);
	assert_int_equal(db_begin(t->db, &err), 0);
	assert_int_equal(pager_enqueue_finding(t->db, &c, &f, 0, NULL, &err), 0);
	db_rollback(t->db);
	assert_int_equal(testdb_int(t, "select count(*) from pages"), 0);
}

static void test_only_regressions_at_or_above_the_threshold_page(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	config c;
	finding f;
	size_t added = 0;

	paging_config(&c);
	make_finding(t, &f, STATS_SEV_MEDIUM, FINDING_REGRESSION);
	assert_int_equal(pager_enqueue_finding(t->db, &c, &f, 0, &added, &err), 0);
	make_finding(t, &f, STATS_SEV_CRITICAL, FINDING_IMPROVEMENT);
	assert_int_equal(pager_enqueue_finding(t->db, &c, &f, 0, &added, &err), 0);
	c.paging.ndefault = 0; /* nobody to page */
	make_finding(t, &f, STATS_SEV_CRITICAL, FINDING_REGRESSION);
	assert_int_equal(pager_enqueue_finding(t->db, &c, &f, 0, &added, &err), 0);
	assert_int_equal(added, 0);
	assert_int_equal(testdb_int(t, "select count(*) from pages"), 0);
}

static void test_resolve_cancels_unsent_and_queues_resolve_for_sent(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	config c;
	finding f1, f2;
	size_t added = 0, cancelled = 0;

	paging_config(&c);
	make_finding(t, &f1, STATS_SEV_CRITICAL, FINDING_REGRESSION);
	assert_int_equal(pager_enqueue_finding(t->db, &c, &f1, 0, NULL, &err), 0);
	make_finding(t, &f2, STATS_SEV_CRITICAL, FINDING_REGRESSION);
	f2.current_release = (char *)"v3";
	assert_int_equal(pager_enqueue_finding(t->db, &c, &f2, 0, NULL, &err), 0);
	testdb_int(t, "with u as (update pages set status = 'sent' where id = (select max(id) from pages)"
		      " returning 1) select count(*) from u");
	assert_int_equal(pager_enqueue_resolve(t->db, f1.id, &added, &cancelled, &err), 0);
	assert_int_equal(added, 0);
	assert_int_equal(cancelled, 1);
	assert_int_equal(pager_enqueue_resolve(t->db, f2.id, &added, &cancelled, &err), 0);
	assert_int_equal(pager_enqueue_resolve(t->db, f2.id, &added, &cancelled, &err), 0);
	assert_int_equal(added, 1);
	assert_int_equal(testdb_int(t, "select count(*) from pages where event = 'resolve' and status = 'pending'"), 1);
}

static void test_flush_without_the_secret_skips_and_keeps_the_page(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	pager_counts pc;
	config c;
	finding f;

	paging_config(&c);
	unsetenv("PR_TEST_NO_SUCH_VAR");
	make_finding(t, &f, STATS_SEV_CRITICAL, FINDING_REGRESSION);
	assert_int_equal(pager_enqueue_finding(t->db, &c, &f, 0, NULL, &err), 0);
	assert_int_equal(pager_flush(t->db, &c, NULL, &pc, &err), 0);
	assert_int_equal(pc.skipped, 1);
	assert_int_equal(pc.sent, 0);
	assert_int_equal(pc.pending, 1);
	assert_non_null(strstr(pc.first_error, "'PR_TEST_NO_SUCH_VAR'"));
	assert_int_equal(testdb_int(t, "select attempts from pages"), 0);
}

static void test_unreachable_target_is_retried_then_left_pending(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	pager_counts pc;
	config c;
	finding f;

	paging_config(&c);
	c.paging.backoff_ms = 1;
	c.paging.max_backoff_ms = 5;
	setenv("PR_TEST_NO_SUCH_VAR", "0123456789abcdef0123456789abcdef", 1);
	make_finding(t, &f, STATS_SEV_CRITICAL, FINDING_REGRESSION);
	assert_int_equal(pager_enqueue_finding(t->db, &c, &f, 0, NULL, &err), 0);
	/* Port 9 on loopback: connection refused, a network error. */
	assert_int_equal(pager_flush(t->db, &c, NULL, &pc, &err), 0);
	unsetenv("PR_TEST_NO_SUCH_VAR");
	assert_int_equal(pc.retried, 2);
	assert_int_equal(pc.pending, 1);
	assert_non_null(strstr(pc.first_error, "network error"));
	assert_int_equal(testdb_int(t, "select attempts from pages where status = 'pending'"), 2);
	assert_int_equal(testdb_int(t, "select count(*) from pages where last_error like 'network error%'"), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dedup_key_is_stable_and_separates_its_parts),
		cmocka_unit_test(test_backoff_doubles_is_capped_and_jittered_in_the_upper_half),
		cmocka_unit_test(test_retry_after_reads_seconds_and_http_dates),
		cmocka_unit_test_setup(test_enqueue_twice_adds_one_row, testdb_reset),
		cmocka_unit_test_setup(test_rolled_back_enqueue_leaves_nothing, testdb_reset),
		cmocka_unit_test_setup(test_only_regressions_at_or_above_the_threshold_page, testdb_reset),
		cmocka_unit_test_setup(test_resolve_cancels_unsent_and_queues_resolve_for_sent, testdb_reset),
		cmocka_unit_test_setup(test_flush_without_the_secret_skips_and_keeps_the_page, testdb_reset),
		cmocka_unit_test_setup(test_unreachable_target_is_retried_then_left_pending, testdb_reset),
	};
	return cmocka_run_group_tests_name("pager", tests, testdb_group_setup, testdb_group_teardown);
}
