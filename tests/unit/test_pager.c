/*
 * test_pager.c: the outbox against a real database (enqueue is
 * idempotent, only regressions at or above the threshold page, resolve
 * cancels unsent triggers and queues resolves for sent or tried ones, a
 * failed page is armed again by the next enqueue or by a retry, a
 * regression found again after its finding was closed pages and resolves
 * again, once, even for two runs at once, while its earlier page is kept
 * and never retried), the sender's scope and deadline, and the pure parts
 * of the sender: dedup keys, backoff with jitter, Retry-After, masking
 * the secret in a stored response.
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
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "jobs/pager.h"
#include "jobs/triage.h"
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
	static config_target t[] = {{(char *)"pd", CONFIG_TARGET_PAGERDUTY,
				     (char *)"http://127.0.0.1:9", (char *)"PR_TEST_NO_SUCH_VAR",
				     NULL}};

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
				      " on conflict (name) do update set "
				      "enabled = true returning id");
	f->id = testdb_int(
		t, "insert into findings (service_id, status) select id, 'open' from services"
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
	assert_int_equal(testdb_int(t,
				    "select count(*) from pages where detail ->> 'function' = 'hot'"
				    " and dedup_key like 'profreg-%'"),
			 1);
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

/*
 * A service whose team was given to `service add --team` and not in the
 * configuration is paged through that team's list: with no default
 * list, it paged no one. The configuration's team, where it names one,
 * is the one that counts; the page carries the team it went by.
 */
static void test_the_team_the_database_holds_routes_the_page(void **state)
{
	static char *team_targets[] = {(char *)"pd"};
	static config_route routes[] = {{(char *)"payments", team_targets, 1}};
	static config_service svcs[1];
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	config c;
	finding f;
	size_t added = 0;

	paging_config(&c);
	c.paging.ndefault = 0;
	c.paging.teams = routes;
	c.paging.nteams = 1;
	make_finding(t, &f, STATS_SEV_CRITICAL, FINDING_REGRESSION);
	testdb_execf(t, "update services set team = 'payments' where name = 'svc'");
	assert_int_equal(pager_enqueue_finding(t->db, &c, &f, 0, &added, &err), 0);
	assert_int_equal(added, 1);
	assert_int_equal(testdb_int(t, "select count(*) from pages where target = 'pd' and "
				       "detail ->> 'team' = 'payments'"), 1);
	/* The configuration names another team, which has no list: no page. */
	memset(svcs, 0, sizeof(svcs));
	svcs[0].name = (char *)"svc";
	svcs[0].team = (char *)"ops";
	c.services = svcs;
	c.nservices = 1;
	testdb_execf(t, "delete from pages");
	added = 0;
	make_finding(t, &f, STATS_SEV_CRITICAL, FINDING_REGRESSION);
	assert_int_equal(pager_enqueue_finding(t->db, &c, &f, 0, &added, &err), 0);
	assert_int_equal(added, 0);
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
	testdb_int(
		t,
		"with u as (update pages set status = 'sent' where id = (select max(id) from pages)"
		" returning 1) select count(*) from u");
	assert_int_equal(pager_enqueue_resolve(t->db, f1.id, &added, &cancelled, &err), 0);
	assert_int_equal(added, 0);
	assert_int_equal(cancelled, 1);
	assert_int_equal(pager_enqueue_resolve(t->db, f2.id, &added, &cancelled, &err), 0);
	assert_int_equal(pager_enqueue_resolve(t->db, f2.id, &added, &cancelled, &err), 0);
	assert_int_equal(added, 1);
	assert_int_equal(
		testdb_int(
			t,
			"select count(*) from pages where event = "
			"'resolve' and status = 'pending'"),
		1);
}

/*
 * A sent trigger whose finding is escalated goes again, from what was
 * sent; a look at the same or a milder severity leaves it sent; a resolve
 * before the escalation goes out still resolves what the receiver got.
 */
static void test_an_escalated_finding_pages_again_once_and_resolves_what_was_sent(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	config c;
	finding f;
	size_t added = 0, cancelled = 0;

	paging_config(&c);
	make_finding(t, &f, STATS_SEV_HIGH, FINDING_REGRESSION);
	assert_int_equal(pager_enqueue_finding(t->db, &c, &f, 0, &added, &err), 0);
	testdb_int(t, "with u as (update pages set status = 'sent', sent_at = now(), attempts = 1"
		      " returning 1) select count(*) from u");
	assert_int_equal(pager_enqueue_finding(t->db, &c, &f, 0, &added, &err), 0);
	assert_int_equal(added, 1);
	f.severity = STATS_SEV_CRITICAL;
	assert_int_equal(pager_enqueue_finding(t->db, &c, &f, 0, &added, &err), 0);
	assert_int_equal(added, 2);
	assert_int_equal(testdb_int(t, "select count(*) from pages where status = 'pending'"
				       " and attempts = 0 and detail ->> 'severity' = 'critical'"
				       " and detail ->> 'escalated_from' = 'high'"),
			 1);
	/* Found again at critical, before the escalation went: nothing more. */
	assert_int_equal(pager_enqueue_finding(t->db, &c, &f, 0, &added, &err), 0);
	assert_int_equal(added, 2);
	assert_int_equal(testdb_int(t, "select count(*) from pages"), 1);
	/*
	 * An escalation waiting to go is a page the receiver has: a merge into
	 * an incident cancels no page, but the member's escalation is not sent
	 * (its lead pages): the row is what was delivered again.
	 */
	{
		size_t cancelled_member = 0;
		int64_t first = 0;
		assert_int_equal(pager_cancel_member(t->db, f.id, 1, &cancelled_member, &err), 0);
		assert_int_equal(cancelled_member, 0);
		assert_int_equal(testdb_int(t, "select count(*) from pages where status = 'sent'"
					       " and detail ->> 'severity' = 'high'"
					       " and not detail ? 'escalated_from'"),
				 1);
		/* As the test had it: the escalation waiting. */
		testdb_int(t, "with u as (update pages set status = 'pending', detail = detail ||"
			      " '{\"severity\": \"critical\", \"escalated_from\": \"high\"}'"
			      " returning 1) select count(*) from u");
		/* Refused for good, then armed again by the next run: still an escalation. */
		testdb_int(t, "with u as (update pages set status = 'failed', attempts = 5"
			      " returning 1) select count(*) from u");
		assert_int_equal(pager_first_paged(t->db, &f.id, 1, &first, &err), 0);
		assert_int_equal(first, f.id);
		assert_int_equal(pager_enqueue_finding(t->db, &c, &f, 0, &added, &err), 0);
		assert_int_equal(added, 3);
		assert_int_equal(testdb_int(t, "select count(*) from pages where status = 'pending'"
					       " and detail ->> 'escalated_from' = 'high'"
					       " and detail ->> 'severity' = 'critical'"),
				 1);
		added = 2;
	}
	/* Resolved before it went: the escalation is cancelled, the high alert resolved. */
	assert_int_equal(pager_enqueue_resolve(t->db, f.id, &added, &cancelled, &err), 0);
	assert_int_equal(cancelled, 1);
	assert_int_equal(added, 3);
	assert_int_equal(
		testdb_int(t, "select count(*) from pages where event = 'resolve'"
			      " and status = 'pending' and detail ->> 'escalated_from' = 'high'"),
		1);
	/* Once sent at critical, a high look is no escalation. */
	testdb_int(t, "with u as (update pages set status = 'sent', sent_at = now(), attempts = 1,"
		      " detail = detail - 'escalated_from' where event = 'trigger' returning 1)"
		      " select count(*) from u");
	f.severity = STATS_SEV_HIGH;
	assert_int_equal(pager_enqueue_finding(t->db, &c, &f, 0, &added, &err), 0);
	assert_int_equal(added, 3);
	assert_int_equal(testdb_int(t, "select count(*) from pages where event = 'trigger'"
				       " and status = 'sent'"),
			 1);
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
	assert_int_equal(
		testdb_int(t, "select count(*) from pages where last_error like 'network error%'"),
		1);
}

static void test_failed_or_cancelled_trigger_is_armed_again_but_sent_is_not(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	config c;
	finding f;
	size_t added = 0;

	paging_config(&c);
	make_finding(t, &f, STATS_SEV_CRITICAL, FINDING_REGRESSION);
	assert_int_equal(pager_enqueue_finding(t->db, &c, &f, 0, &added, &err), 0);
	testdb_int(t,
		   "with u as (update pages set status = 'failed', attempts = 1, http_status = 404,"
		   " last_error = 'HTTP 404', response = 'no such integration' returning 1)"
		   " select count(*) from u");
	/* A pending resolve of the same key would close the alert the new trigger opens. */
	testdb_int(
		t,
		"with i as (insert into pages (service_id, finding_id, "
		"dedup_key, target, event, detail)"
		" select service_id, finding_id, dedup_key, target, 'resolve', detail from pages"
		" returning 1) select count(*) from i");
	added = 0;
	assert_int_equal(pager_enqueue_finding(t->db, &c, &f, 0, &added, &err), 0);
	assert_int_equal(added, 1);
	assert_int_equal(
		testdb_int(
			t,
			"select count(*) from pages where event = 'trigger' and status = 'pending'"
			" and attempts = 0 and next_attempt_at <= now()"),
		1);
	/* The last error stays until the next attempt says something new. */
	assert_string_equal(
		testdb_text(t, "select last_error || ' / ' || response || ' / ' || http_status"
			       " from pages where event = 'trigger'"),
		"HTTP 404 / no such integration / 404");
	assert_string_equal(testdb_text(t, "select status from pages where event = 'resolve'"),
			    "cancelled");

	/* Cancelled (resolved before it was sent): a new open finding arms it, for itself. */
	testdb_int(
		t,
		"with u as (update pages set status = 'cancelled' where "
		"event = 'trigger' returning 1)"
		" select count(*) from u");
	make_finding(t, &f, STATS_SEV_CRITICAL, FINDING_REGRESSION);
	added = 0;
	assert_int_equal(pager_enqueue_finding(t->db, &c, &f, 0, &added, &err), 0);
	assert_int_equal(added, 1);
	assert_int_equal(
		testdb_int(
			t,
			"select finding_id from pages where event = "
			"'trigger' and status = 'pending'"),
		f.id);

	/* Sent: the dedup guarantee, never paged twice. */
	testdb_int(
		t,
		"with u as (update pages set status = 'sent', attempts = 1 where event = 'trigger'"
		" returning 1) select count(*) from u");
	added = 0;
	assert_int_equal(pager_enqueue_finding(t->db, &c, &f, 0, &added, &err), 0);
	assert_int_equal(added, 0);
	assert_int_equal(
		testdb_int(t,
			   "select count(*) from pages where event = 'trigger' and status = 'sent'"
			   " and attempts = 1"),
		1);
	assert_int_equal(testdb_int(t, "select count(*) from pages"), 2);
}

static void test_resolve_queues_a_resolve_for_a_pending_trigger_that_was_tried(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	config c;
	finding f;
	size_t added = 0, cancelled = 0;

	paging_config(&c);
	make_finding(t, &f, STATS_SEV_CRITICAL, FINDING_REGRESSION);
	assert_int_equal(pager_enqueue_finding(t->db, &c, &f, 0, NULL, &err), 0);
	/* A timeout after the target accepted it: pending, but maybe delivered. */
	testdb_int(t,
		   "with u as (update pages set attempts = 1, last_error = 'timeout' returning 1)"
		   " select count(*) from u");
	assert_int_equal(pager_enqueue_resolve(t->db, f.id, &added, &cancelled, &err), 0);
	assert_int_equal(cancelled, 1);
	assert_int_equal(added, 1);
	assert_string_equal(
		testdb_text(
			t, "select string_agg(event || ':' || status, ',' order by id) from pages"),
		"trigger:cancelled,resolve:pending");
	assert_int_equal(testdb_int(t, "select count(*) from pages where finding_id = "
				       "(select max(id) from findings) and event = 'resolve'"), 1);
}

static void test_response_text_masks_before_the_cut_and_drops_short_secrets(void **state)
{
	static const char key[] = "KEY-0123456789abcdef";
	char body[4096 + 64], *out;
	bool nomem;
	size_t klen = strlen(key);

	(void)state;
	/* A copy that crosses the 2 KiB cut: masked whole, no head of it kept. */
	memset(body, 'x', sizeof(body));
	memcpy(body + 2048 - 6, key, klen);
	memcpy(body + 100, key, klen);
	body[3000] = '\0';
	out = pager_response_text(body, key, 2048, &nomem);
	assert_non_null(out);
	assert_false(nomem);
	assert_true(strlen(out) <= 2048);
	assert_null(strstr(out, "KEY-"));
	assert_null(strstr(out, "KEY"));
	/* One word of 3000 bytes: counted, not kept. */
	assert_string_equal(out, "<3000 bytes>");
	free(out);

	/* Short secrets are not masked: the body is not kept at all. */
	snprintf(body, sizeof(body), "{\"error\":\"bad token abc123\"}");
	assert_null(pager_response_text(body, "abc123", 2048, &nomem));
	assert_false(nomem);
	snprintf(body, sizeof(body), "{\"error\":\"bad token\"}");
	out = pager_response_text(body, "abc123", 2048, &nomem);
	assert_non_null(out);
	assert_string_equal(out, "<21 bytes>");
	free(out);
	/* Eight bytes and more: masked in place. */
	snprintf(body, sizeof(body), "token abcdefgh refused; abcdefgh");
	out = pager_response_text(body, "abcdefgh", 2048, &nomem);
	assert_string_equal(out, "token <26 bytes>");
	free(out);
	/* No secret, an empty body. */
	snprintf(body, sizeof(body), "plain\r\nlines");
	out = pager_response_text(body, NULL, 2048, &nomem);
	assert_string_equal(out, "plain lines");
	free(out);
	/* A target that echoes payment data back: its words kept, the data counted. */
	snprintf(body, sizeof(body), "refused: card 4111111111111111 password=hunter2");
	out = pager_response_text(body, NULL, 2048, &nomem);
	assert_string_equal(out, "refused: card <33 bytes>");
	free(out);
	body[0] = '\0';
	assert_null(pager_response_text(body, key, 2048, &nomem));
	assert_false(nomem);
}

static void test_retry_rearms_failed_pages_but_not_triggers_of_resolved_findings(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT, e2 = PR_ERROR_INIT, e3 = PR_ERROR_INIT;
	config c;
	finding open, gone;
	size_t n = 0, failed_open = 0, failed_resolves = 0;
	int64_t id;

	paging_config(&c);
	make_finding(t, &open, STATS_SEV_CRITICAL, FINDING_REGRESSION);
	assert_int_equal(pager_enqueue_finding(t->db, &c, &open, 0, NULL, &err), 0);
	make_finding(t, &gone, STATS_SEV_CRITICAL, FINDING_REGRESSION);
	gone.current_release = (char *)"v9";
	assert_int_equal(pager_enqueue_finding(t->db, &c, &gone, 0, NULL, &err), 0);
	testdb_int(
		t,
		"with u as (update pages set status = 'failed', attempts = "
		"1, last_error = 'HTTP 400'"
		" returning 1) select count(*) from u");
	testdb_int(
		t,
		"with u as (update findings set status = 'resolved' where id = "
		"(select max(id) from findings)"
		" returning 1) select count(*) from u");
	assert_int_equal(pager_count_failed_open(t->db, &failed_open, &failed_resolves, &err), 0);
	assert_int_equal(failed_open, 1);

	id = testdb_int(t, "select max(id) from pages");
	assert_int_equal(pager_retry_failed(t->db, id, &n, &e2), PR_EREFUSED);
	assert_non_null(strstr(e2.msg, "no longer open"));
	assert_int_equal(pager_retry_failed(t->db, 0, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(
		testdb_text(
			t,
			"select string_agg(status || ' ' || attempts, ',' order by id) from pages"),
		"pending 0,failed 1");
	assert_int_equal(testdb_int(t, "select count(*) from audit_log where action = 'page-retry'"
				       " and object = 'pages:failed' and (detail "
				       "->> 'count')::int = 1"), 1);
	id = testdb_int(t, "select min(id) from pages");
	assert_int_equal(pager_retry_failed(t->db, id, &n, &e3), PR_ENOTFOUND);
	assert_non_null(strstr(e3.msg, "is pending, not failed"));
	assert_int_equal(pager_retry_failed(t->db, 999999, &n, &e3), PR_ENOTFOUND);
	assert_int_equal(pager_count_failed_open(t->db, &failed_open, &failed_resolves, &err), 0);
	assert_int_equal(failed_open, 0);
}

static void test_unscoped_flush_names_failed_pages_of_open_findings(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	pager_counts pc;
	config c;
	finding f;

	paging_config(&c);
	make_finding(t, &f, STATS_SEV_CRITICAL, FINDING_REGRESSION);
	assert_int_equal(pager_enqueue_finding(t->db, &c, &f, 0, NULL, &err), 0);
	testdb_int(t, "with u as (update pages set status = 'failed', attempts = 1 returning 1)"
		      " select count(*) from u");
	assert_int_equal(pager_flush(t->db, &c, NULL, &pc, &err), 0);
	assert_int_equal(pc.failed, 0);
	assert_int_equal(pc.failed_open, 1);
	assert_non_null(strstr(pc.first_error, "1 failed page of open findings"));
	assert_non_null(strstr(pc.first_error, "profreg page retry"));
}

/* A loopback socket that accepts connections (the backlog) but never answers. */
static int silent_server(int *port)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 16), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_flush_with_a_deadline_and_a_scope_returns_in_time(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	pager_counts pc;
	config c;
	finding mine, other;
	char url[64];
	int port, fd = silent_server(&port);
	config_target hook = {(char *)"pd", CONFIG_TARGET_WEBHOOK, url, NULL, NULL};
	pager_flush_opts fo = {false, true, NULL, 1, 700};
	double t0;

	paging_config(&c);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/hook", port);
	c.paging.targets = &hook;
	c.paging.timeout_ms = 20000;
	c.paging.connect_timeout_ms = 20000;
	c.paging.max_attempts = 5;
	make_finding(t, &other, STATS_SEV_CRITICAL, FINDING_REGRESSION);
	other.current_release = (char *)"v7";
	assert_int_equal(pager_enqueue_finding(t->db, &c, &other, 0, NULL, &err), 0);
	make_finding(t, &mine, STATS_SEV_CRITICAL, FINDING_REGRESSION);
	assert_int_equal(pager_enqueue_finding(t->db, &c, &mine, 0, NULL, &err), 0);
	fo.finding_ids = &mine.id;
	t0 = now_s();
	assert_int_equal(pager_flush(t->db, &c, &fo, &pc, &err), 0);
	/* 20 s per request without the deadline; 0.7 s with it. */
	assert_true(now_s() - t0 < 3.0);
	assert_true(pc.deadline_hit);
	assert_int_equal(pc.sent, 0);
	assert_non_null(strstr(pc.first_error, "timeout"));
	assert_int_equal(testdb_int(t, "select count(*) from pages where status = 'pending'"), 2);
	assert_int_equal(
		testdb_int(
			t,
			"select attempts from pages where finding_id = "
			"(select max(id) from findings)"),
		1);
	/* The other finding's page was not touched. */
	assert_int_equal(
		testdb_int(
			t,
			"select attempts from pages where finding_id = "
			"(select min(id) from findings)"),
		0);
	/* A scope of no finding sends nothing. */
	fo.nfinding_ids = 0;
	fo.deadline_ms = 0;
	assert_int_equal(pager_flush(t->db, &c, &fo, &pc, &err), 0);
	assert_int_equal(pc.sent + pc.retried + pc.failed, 0);
	close(fd);
}

/* Read one request from `c` (headers and a Content-Length body) into b; its length. */
static size_t read_request(int c, char *b, size_t cap)
{
	size_t n = 0, want = 0;
	char *end = NULL;

	while (n + 1 < cap) {
		struct pollfd pfd = {c, POLLIN, 0};
		ssize_t r;
		if (poll(&pfd, 1, 5000) <= 0 || (r = recv(c, b + n, cap - 1 - n, 0)) <= 0)
			break;
		n += (size_t)r;
		b[n] = '\0';
		if (!end && (end = strstr(b, "\r\n\r\n"))) {
			const char *cl = strstr(b, "Content-Length:");
			if (!cl)
				cl = strstr(b, "content-length:");
			want = (size_t)(end + 4 - b) + (cl ? strtoul(cl + 15, NULL, 10) : 0);
		}
		if (end && n >= want)
			break;
	}
	b[n] = '\0';
	return n;
}

/*
 * A loopback server in a child process that answers every POST with 202
 * and appends its body, one line each, to a fresh log named after `name`
 * (its path written to log[0..n)). It stops by itself after 30 s without
 * a request; the test stops it before that (stop_server).
 */
static pid_t answering_server(int *port, char *log, size_t n, const char *name)
{
	int fd;
	pid_t pid;

	snprintf(log, n, "%s/pager-%s-%d.log",
		 getenv("PROFREG_TEST_TMP") ? getenv("PROFREG_TEST_TMP") : "/tmp", name,
		 (int)getpid());
	unlink(log);
	fd = silent_server(port);
	pid = fork();
	assert_true(pid >= 0);
	if (pid > 0) {
		close(fd);
		return pid;
	}
	for (int i = 0; i < 64; i++) {
		static char b[1 << 16];
		static const char ok[] = "HTTP/1.1 202 Accepted\r\n"
					 "Content-Type: application/json\r\n"
					 "Content-Length: 2\r\nConnection: close\r\n\r\n{}";
		struct pollfd pfd = {fd, POLLIN, 0};
		char *body;
		int c, l;
		if (poll(&pfd, 1, 30000) <= 0)
			break;
		if ((c = accept(fd, NULL, NULL)) < 0)
			continue;
		read_request(c, b, sizeof(b));
		body = strstr(b, "\r\n\r\n");
		if (body && (l = open(log, O_WRONLY | O_APPEND | O_CREAT, 0600)) >= 0) {
			body += 4;
			if (write(l, body, strlen(body)) < 0 || write(l, "\n", 1) < 0)
				_exit(3);
			close(l);
		}
		if (send(c, ok, sizeof(ok) - 1, 0) < 0)
			_exit(3);
		close(c);
	}
	_exit(0);
}

static void stop_server(pid_t pid)
{
	int st;

	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
}

/* The "event finding_id dedup_key" of every request in `log`, one a line, as one string. */
static const char *received(const char *log, char *out, size_t n)
{
	char line[1 << 16];
	FILE *f = fopen(log, "r");
	size_t len = 0;

	out[0] = '\0';
	while (f && fgets(line, sizeof(line), f)) {
		const char *ev = strstr(line, "\"event\":\"");
		const char *fid = strstr(line, "\"finding_id\":");
		const char *key = strstr(line, "\"dedup_key\":\"");
		assert_non_null(ev);
		assert_non_null(fid);
		assert_non_null(key);
		len += (size_t)snprintf(out + len, n - len, "%s%.*s %lld %.72s", len ? "," : "",
					(int)strcspn(ev + 9, "\""), ev + 9,
					(long long)strtoll(fid + 13, NULL, 10), key + 13);
		assert_true(len < n);
	}
	if (f)
		fclose(f);
	return out;
}

/* The webhook target "pd" at the answering server; paging_config otherwise. */
static void answered_config(config *c, config_target *hook, char *url, size_t n, int port)
{
	paging_config(c);
	snprintf(url, n, "http://127.0.0.1:%d/hook", port);
	*hook = (config_target){(char *)"pd", CONFIG_TARGET_WEBHOOK, url, NULL, NULL};
	c->paging.targets = hook;
}

/* Page finding f in a transaction of its own, as a run does; the rows added. */
static size_t enqueue(testdb *t, const config *c, const finding *f)
{
	pr_error err = PR_ERROR_INIT;
	size_t added = 0;

	assert_int_equal(db_begin(t->db, &err), 0);
	assert_int_equal(pager_enqueue_finding(t->db, c, f, 0, &added, &err), 0);
	assert_int_equal(db_commit(t->db, &err), 0);
	return added;
}

static size_t flush_sent(testdb *t, const config *c)
{
	pr_error err = PR_ERROR_INIT;
	pager_counts pc;

	assert_int_equal(pager_flush(t->db, c, NULL, &pc, &err), 0);
	assert_int_equal(pc.failed + pc.retried + pc.skipped + pc.pending, 0);
	return pc.sent;
}

/* Close finding f as a run does when it went away: the finding and its resolve events. */
static void close_finding(testdb *t, const finding *f)
{
	pr_error err = PR_ERROR_INIT;

	assert_int_equal(db_begin(t->db, &err), 0);
	testdb_execf(t, "update findings set status = 'resolved', state = 'went_away'"
			" where id = %lld", (long long)f->id);
	assert_int_equal(pager_enqueue_resolve(t->db, f->id, NULL, NULL, &err), 0);
	assert_int_equal(db_commit(t->db, &err), 0);
}

/*
 * A resolve the target refused for good leaves the alert open at the
 * receiver for a regression that is closed: a flush says so every time
 * and counts it as owed (a nightly then exits 3), as it does a refused
 * trigger of an open finding. It was dropped without a word.
 */
static void test_a_refused_resolve_is_owed_and_said(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	pager_counts pc;
	config c;
	finding f;

	paging_config(&c);
	make_finding(t, &f, STATS_SEV_CRITICAL, FINDING_REGRESSION);
	assert_int_equal(enqueue(t, &c, &f), 1);
	testdb_int(t, "with u as (update pages set status = 'sent', attempts = 1 returning 1)"
		      " select count(*) from u");
	close_finding(t, &f);
	testdb_int(t, "with u as (update pages set status = 'failed', attempts = 1,"
		      " http_status = 400 where event = 'resolve' returning 1)"
		      " select count(*) from u");
	assert_int_equal(pager_flush(t->db, &c, NULL, &pc, &err), 0);
	assert_int_equal(pc.failed_resolves, 1);
	assert_int_equal(pc.failed_open, 1);
	assert_non_null(strstr(pc.first_error, "1 failed resolve of closed findings: its alert"));
	assert_null(strstr(pc.first_error, "of open findings"));
}

/*
 * Paged, resolved by hand (profreg finding resolve), found again by a
 * later night as a new finding of the same regression: it pages again
 * under the same dedup key, and its own resolve is sent when it closes.
 * The earlier finding's trigger and resolve stay in the outbox, set aside.
 */
static void test_a_regression_found_again_after_its_finding_was_resolved_pages_again(
	void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	triage_resolution tr;
	config c;
	config_target hook;
	finding f1, f2;
	char url[64], log[512], got[1024], want[1024], key[PAGER_KEY_MAX];
	int port;
	pid_t srv;

	srv = answering_server(&port, log, sizeof(log), "again");
	answered_config(&c, &hook, url, sizeof(url), port);
	pager_dedup_key(key, "svc", "cpu", "hot", "hot.c", "v2");

	make_finding(t, &f1, STATS_SEV_CRITICAL, FINDING_REGRESSION);
	assert_int_equal(enqueue(t, &c, &f1), 1);
	assert_int_equal(flush_sent(t, &c), 1);
	assert_int_equal(triage_resolve(&tr, t->db, &c, f1.id, "rolled back", false, &err), 0);
	assert_int_equal(tr.resolve_events, 1);
	assert_int_equal(tr.pages.sent, 1);

	make_finding(t, &f2, STATS_SEV_CRITICAL, FINDING_REGRESSION);
	assert_int_equal(enqueue(t, &c, &f2), 1);
	assert_int_equal(flush_sent(t, &c), 1);
	assert_int_equal(triage_resolve(&tr, t->db, &c, f2.id, "rolled back again", false, &err),
			 0);
	assert_int_equal(tr.resolve_events, 1);
	assert_int_equal(tr.pages.sent, 1);
	stop_server(srv);

	snprintf(want, sizeof(want),
		 "trigger %lld %s,resolve %lld %s,trigger %lld %s,resolve %lld %s",
		 (long long)f1.id, key, (long long)f1.id, key, (long long)f2.id, key,
		 (long long)f2.id, key);
	assert_string_equal(received(log, got, sizeof(got)), want);
	/* The record of the first page is kept, set aside; the second is in use. */
	assert_string_equal(
		testdb_text(t, "select string_agg(event || ' ' || status || ' '"
			       " || (finding_id = (select min(id) from findings))::text || ' '"
			       " || (retired_at is not null)::text, ',' order by id) from pages"),
		"trigger sent true true,resolve sent true true,"
		"trigger sent false false,resolve sent false false");
	unlink(log);
}

/*
 * Went away (a later night with more captures), then confirmed again as
 * a new finding: one new trigger. Re-runs that see that open finding
 * again send nothing more; a refused trigger of it is armed again in its
 * own row, not in the earlier finding's.
 */
static void test_a_regression_back_after_it_went_away_pages_once_however_often_rerun(
	void **state)
{
	testdb *t = *state;
	config c;
	config_target hook;
	finding f1, f2;
	char url[64], log[512], got[1024], want[1024], key[PAGER_KEY_MAX];
	int port;
	pid_t srv;

	srv = answering_server(&port, log, sizeof(log), "rerun");
	answered_config(&c, &hook, url, sizeof(url), port);

	make_finding(t, &f1, STATS_SEV_HIGH, FINDING_REGRESSION);
	assert_int_equal(enqueue(t, &c, &f1), 1);
	assert_int_equal(flush_sent(t, &c), 1);
	/* What record_findings does for a finding that went away. */
	close_finding(t, &f1);
	assert_int_equal(flush_sent(t, &c), 1);

	make_finding(t, &f2, STATS_SEV_HIGH, FINDING_REGRESSION);
	assert_int_equal(enqueue(t, &c, &f2), 1);
	assert_int_equal(flush_sent(t, &c), 1);
	for (int rerun = 0; rerun < 3; rerun++) {
		assert_int_equal(enqueue(t, &c, &f2), 0);
		assert_int_equal(flush_sent(t, &c), 0);
	}
	stop_server(srv);
	pager_dedup_key(key, "svc", "cpu", "hot", "hot.c", "v2");
	snprintf(want, sizeof(want), "trigger %lld %s,resolve %lld %s,trigger %lld %s",
		 (long long)f1.id, key, (long long)f1.id, key, (long long)f2.id, key);
	assert_string_equal(received(log, got, sizeof(got)), want);
	assert_int_equal(testdb_int(t, "select count(*) from pages where event = 'trigger'"
				       " and status = 'sent' and retired_at is null"
				       " and finding_id = (select max(id) from findings)"),
			 1);
	assert_int_equal(testdb_int(t, "select count(*) from pages"), 3);

	/* A permanent refusal of the new trigger: armed again by the next run, in place. */
	testdb_int(t, "with u as (update pages set status = 'failed', http_status = 400"
		      " where retired_at is null returning 1) select count(*) from u");
	assert_int_equal(enqueue(t, &c, &f2), 1);
	assert_string_equal(
		testdb_text(t, "select string_agg(event || ' ' || status || ' '"
			       " || (retired_at is not null)::text, ',' order by id) from pages"),
		"trigger sent true,resolve sent true,trigger pending false");
}

/*
 * The earlier finding's resolve that a target refused stays on record,
 * set aside, and is never retried once a later finding of the regression
 * paged (it would close the later alert); one still unsent when the
 * regression came back is cancelled, naming the finding that paged.
 */
static void test_an_earlier_findings_resolve_never_closes_the_alert_of_its_return(
	void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT, e2 = PR_ERROR_INIT;
	config c;
	finding f1, f2, f3;
	size_t n = 9, failed_open = 9, failed_resolves = 9;
	int64_t refused;
	char want[128];

	paging_config(&c);
	make_finding(t, &f1, STATS_SEV_CRITICAL, FINDING_REGRESSION);
	assert_int_equal(enqueue(t, &c, &f1), 1);
	testdb_int(t, "with u as (update pages set status = 'sent', attempts = 1 returning 1)"
		      " select count(*) from u");
	close_finding(t, &f1);
	refused = testdb_int(t, "select id from pages where event = 'resolve'");
	testdb_int(t, "with u as (update pages set status = 'failed', attempts = 1,"
		      " http_status = 400 where event = 'resolve' returning 1)"
		      " select count(*) from u");

	make_finding(t, &f2, STATS_SEV_CRITICAL, FINDING_REGRESSION);
	assert_int_equal(enqueue(t, &c, &f2), 1);
	assert_int_equal(pager_retry_failed(t->db, refused, &n, &e2), PR_EREFUSED);
	assert_non_null(strstr(e2.msg, "earlier finding"));
	assert_int_equal(pager_retry_failed(t->db, 0, &n, &err), 0);
	assert_int_equal(n, 0);
	assert_int_equal(pager_count_failed_open(t->db, &failed_open, &failed_resolves, &err), 0);
	assert_int_equal(failed_open, 0);

	/* f2 delivered and closed; its resolve not sent yet when f3 pages. */
	testdb_int(t, "with u as (update pages set status = 'sent', attempts = 1"
		      " where retired_at is null returning 1) select count(*) from u");
	close_finding(t, &f2);
	make_finding(t, &f3, STATS_SEV_CRITICAL, FINDING_REGRESSION);
	assert_int_equal(enqueue(t, &c, &f3), 1);
	assert_string_equal(
		testdb_text(t, "select string_agg(event || ' ' || status || ' '"
			       " || (retired_at is not null)::text, ',' order by id) from pages"),
		"trigger sent true,resolve failed true,trigger sent true,resolve cancelled true,"
		"trigger pending false");
	snprintf(want, sizeof(want), "superseded by the trigger of finding %lld",
		 (long long)f3.id);
	assert_string_equal(testdb_text(t, "select last_error from pages where event = 'resolve'"
					   " and status = 'cancelled'"),
			    want);
	assert_int_equal(testdb_int(t, "select finding_id from pages where retired_at is null"),
			 f3.id);
}

typedef struct racer {
	const char *conninfo;
	const config *c;
	const finding *f;
	size_t added;
	int rc;
	pr_error err;
} racer;

/* Another process's run: page r->f on a connection of its own, and commit. */
static void *race_enqueue(void *arg)
{
	racer *r = arg;
	db *d = NULL;

	if ((r->rc = db_open(&d, r->conninfo, &r->err)) == 0 &&
	    (r->rc = db_begin(d, &r->err)) == 0 &&
	    (r->rc = pager_enqueue_finding(d, r->c, r->f, 0, &r->added, &r->err)) == 0)
		r->rc = db_commit(d, &r->err);
	if (d)
		db_close(d);
	return NULL;
}

/*
 * Two runs that find the regression back at once: the second waits for
 * the first to set the earlier page aside, then finds the new trigger in
 * place and adds nothing. One new trigger, whatever the timing.
 */
static void test_two_runs_paging_a_returned_regression_at_once_add_one_trigger(void **state)
{
	testdb *t = *state;
	pr_error err = PR_ERROR_INIT;
	config c;
	finding f1, f2;
	size_t added = 0;
	racer r;
	pthread_t th;
	int waited = 0;

	paging_config(&c);
	make_finding(t, &f1, STATS_SEV_CRITICAL, FINDING_REGRESSION);
	assert_int_equal(enqueue(t, &c, &f1), 1);
	testdb_int(t, "with u as (update pages set status = 'sent', attempts = 1 returning 1)"
		      " select count(*) from u");
	close_finding(t, &f1);
	testdb_int(t, "with u as (update pages set status = 'sent', attempts = 1"
		      " where event = 'resolve' returning 1) select count(*) from u");
	make_finding(t, &f2, STATS_SEV_CRITICAL, FINDING_REGRESSION);

	assert_int_equal(db_begin(t->db, &err), 0);
	assert_int_equal(pager_enqueue_finding(t->db, &c, &f2, 0, &added, &err), 0);
	assert_int_equal(added, 1);
	memset(&r, 0, sizeof(r));
	r.err = (pr_error)PR_ERROR_INIT;
	r.conninfo = t->conninfo;
	r.c = &c;
	r.f = &f2;
	assert_int_equal(pthread_create(&th, NULL, race_enqueue, &r), 0);
	/* The second run waits on the earlier trigger's row lock. */
	while (testdb_int(t, "select count(*) from pg_stat_activity where wait_event_type = 'Lock'"
			     " and datname = current_database()") == 0 && waited++ < 500)
		nanosleep(&(struct timespec){0, 10000000L}, NULL);
	assert_true(waited < 500);
	assert_int_equal(db_commit(t->db, &err), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	if (r.rc != 0)
		fail_msg("second run: %s", r.err.msg);
	assert_int_equal(r.added, 0);
	assert_string_equal(
		testdb_text(t, "select string_agg(event || ' ' || status || ' '"
			       " || (retired_at is not null)::text, ',' order by id) from pages"),
		"trigger sent true,resolve sent true,trigger pending false");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dedup_key_is_stable_and_separates_its_parts),
		cmocka_unit_test(test_backoff_doubles_is_capped_and_jittered_in_the_upper_half),
		cmocka_unit_test(test_retry_after_reads_seconds_and_http_dates),
		cmocka_unit_test_setup(test_enqueue_twice_adds_one_row, testdb_reset),
		cmocka_unit_test_setup(test_rolled_back_enqueue_leaves_nothing, testdb_reset),
		cmocka_unit_test_setup(test_only_regressions_at_or_above_the_threshold_page,
				       testdb_reset),
		cmocka_unit_test_setup(test_the_team_the_database_holds_routes_the_page,
				       testdb_reset),
		cmocka_unit_test_setup(test_resolve_cancels_unsent_and_queues_resolve_for_sent,
				       testdb_reset),
		cmocka_unit_test_setup(
			test_an_escalated_finding_pages_again_once_and_resolves_what_was_sent,
			testdb_reset),
		cmocka_unit_test_setup(test_flush_without_the_secret_skips_and_keeps_the_page,
				       testdb_reset),
		cmocka_unit_test_setup(test_unreachable_target_is_retried_then_left_pending,
				       testdb_reset),
		cmocka_unit_test_setup(
			test_failed_or_cancelled_trigger_is_armed_again_but_sent_is_not,
			testdb_reset),
		cmocka_unit_test_setup(
			test_resolve_queues_a_resolve_for_a_pending_trigger_that_was_tried,
			testdb_reset),
		cmocka_unit_test(test_response_text_masks_before_the_cut_and_drops_short_secrets),
		cmocka_unit_test_setup(
			test_retry_rearms_failed_pages_but_not_triggers_of_resolved_findings,
			testdb_reset),
		cmocka_unit_test_setup(test_unscoped_flush_names_failed_pages_of_open_findings,
				       testdb_reset),
		cmocka_unit_test_setup(test_a_refused_resolve_is_owed_and_said, testdb_reset),
		cmocka_unit_test_setup(test_flush_with_a_deadline_and_a_scope_returns_in_time,
				       testdb_reset),
		cmocka_unit_test_setup(
			test_a_regression_found_again_after_its_finding_was_resolved_pages_again,
			testdb_reset),
		cmocka_unit_test_setup(
			test_a_regression_back_after_it_went_away_pages_once_however_often_rerun,
			testdb_reset),
		cmocka_unit_test_setup(
			test_an_earlier_findings_resolve_never_closes_the_alert_of_its_return,
			testdb_reset),
		cmocka_unit_test_setup(
			test_two_runs_paging_a_returned_regression_at_once_add_one_trigger,
			testdb_reset),
	};
	return cmocka_run_group_tests_name("pager", tests, testdb_group_setup,
					   testdb_group_teardown);
}
