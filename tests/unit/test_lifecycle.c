/*
 * test_lifecycle.c: findings with a life across nights, against a real
 * PostgreSQL and blob store, through nightly_run as cron runs it: a
 * candidate confirmed on its second look (and only then paged), a
 * critical finding confirmed and paged at once, a finding that goes away
 * when more captures come (its page resolved), one fixed by a later
 * release, two regressions on one call path merged into one incident
 * that pages once, an incident whose lead went away paging through a
 * member still open, a re-run that does not page a member of an earlier
 * run's incident, and the two misses of issue 18 (a noisy release
 * between the baseline and the regression; a 1.25x regression of a
 * function whose share is noisy) found without a false finding on the
 * same data without the regression, and a release noisy in every
 * function that neither hides a rise nor, when it is the new release,
 * makes one, and a rise on one host alone that is not the release's;
 * and a weekend judged against the baseline's weekends.
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
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>
#include <libpq-fe.h>

#include "baselines/analysis.h"
#include "baselines/baseline.h"
#include "baselines/findings.h"
#include "jobs/analyze.h"
#include "jobs/nightly.h"
#include "jobs/triage.h"
#include "pipeline/format.h"
#include "pipeline/ingest.h"
#include "reports/export.h"
#include "tests/support/testdb.h"

#define DAY (86400LL * 1000000LL)
#define HOUR (3600LL * 1000000LL)
/* The first night of the new release ends here: 2026-06-15T00:00:00Z. */
#define NIGHT_END 1781481600000000LL

typedef struct fx {
	testdb *t;
	blob_store *bs;
	char dir[512];
	config cfg;
	job_env env;
	unsigned seed;
	int seq;
	const char *host; /* the host of the captures ingested next (NULL: unknown) */
	double deep;      /* above 0: work.deep below work.inner, weight 500 x deep */
	double side;      /* above 0: work.a's weight times this (a stack of its own) */
	const char *type; /* the profile type ingested and judged (NULL: "cpu") */
	const char *tags; /* the tags of the captures ingested next, JSON (NULL: none) */
	int64_t period;   /* above 0: the pprof captures' sampling period, of period_type */
	const char *period_type; /* "cpu" (nanoseconds of CPU) or another, in "count" */
} fx;

static fx F;
static int64_t now_us;

static int64_t clock_now(void)
{
	return now_us;
}

static int64_t intf(testdb *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int64_t intf(testdb *t, const char *fmt, ...)
{
	char q[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(q, sizeof(q), fmt, ap);
	va_end(ap);
	return testdb_int(t, q);
}

/* A number in [1 - spread, 1 + spread), from a fixed sequence. */
static double noise(fx *f, double spread)
{
	f->seed = f->seed * 1103515245u + 12345u;
	return 1 - spread + 2 * spread * (double)((f->seed >> 8) & 0xffff) / 65536.0;
}

/* Ingest the file at path as one cpu capture of service and release at `at`. */
static void ingest_capture(fx *f, const char *path, const char *service, const char *release,
			   int64_t at, profile_format format)
{
	ingest_request req;
	ingest_result res;
	pr_error err = PR_ERROR_INIT;

	memset(&req, 0, sizeof(req));
	req.path = path;
	req.service = service;
	req.release = release;
	req.time_us = at;
	req.type = f->type ? f->type : "cpu";
	req.format = format;
	req.host = f->host;
	req.tags_json = f->tags;
	if (ingest_file(&res, f->t->db, f->bs, &req, &f->cfg.limits, &err) < 0)
		fail_msg("ingest: %s", err.msg);
}

/*
 * One capture: eight steady functions, work.hot (weight 2000 x hot) and,
 * below it on the same stack, work.inner (weight 600 x inner). Every
 * weight varies by `spread` from capture to capture.
 */
static void capture_scaled(fx *f, const char *service, const char *release, int64_t at,
			   double hot, double inner, double spread, int scale)
{
	static const char *const names[] = {"work.a", "work.b", "work.c", "work.d", "io.read",
					    "io.write", "runtime.gc", "json.encode"};
	static const int weights[] = {3000, 2500, 2000, 1500, 1200, 900, 700, 500};
	char path[600];
	FILE *out;
	snprintf(path, sizeof(path), "%s/c%d.folded", f->dir, ++f->seq);
	assert_non_null(out = fopen(path, "w"));
	for (size_t i = 0; i < sizeof(weights) / sizeof(weights[0]); i++)
		fprintf(out, "main;serve;%s %d\n", names[i],
			(int)(scale * weights[i] * (i == 0 && f->side > 0 ? f->side : 1) *
			      noise(f, spread)));
	fprintf(out, "main;serve;work.hot %d\n", (int)(scale * 2000 * hot * noise(f, spread)));
	fprintf(out, "main;serve;work.hot;work.inner %d\n",
		(int)(scale * 600 * inner * noise(f, spread)));
	if (f->deep > 0)
		fprintf(out, "main;serve;work.hot;work.inner;work.deep %d\n",
			(int)(scale * 500 * f->deep * noise(f, spread)));
	assert_int_equal(fclose(out), 0);
	ingest_capture(f, path, service, release, at, PROFILE_FMT_FOLDED);
}

static void capture(fx *f, const char *service, const char *release, int64_t at, double hot,
		    double inner, double spread)
{
	capture_scaled(f, service, release, at, hot, inner, spread, 1);
}

/* 14 days of v1, two captures a day, before the first night. */
static void history(fx *f, const char *name)
{
	testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)", name);
	for (int day = 14; day >= 1; day--) {
		capture(f, name, "v1", NIGHT_END - day * DAY - 9 * HOUR, 1, 1, 0.05);
		capture(f, name, "v1", NIGHT_END - day * DAY - 3 * HOUR, 1, 1, 0.05);
	}
}

/* n captures of `release` in night k (1: the night before NIGHT_END). */
static void night(fx *f, const char *name, const char *release, int k, int n, double hot,
		  double inner)
{
	int64_t end = NIGHT_END + (k - 1) * DAY;

	for (int i = 0; i < n; i++)
		capture(f, name, release, end - DAY + (i + 1) * (DAY / (n + 1)), hot, inner, 0.05);
}

/* The nightly, run at `at`. */
static void run_at(fx *f, int64_t at)
{
	nightly_opts o = {0};
	nightly_result r;
	pr_error err = PR_ERROR_INIT;

	now_us = at;
	if (nightly_run(&r, &f->env, &o, &err) < 0)
		fail_msg("nightly at %lld: %s", (long long)at, err.msg);
	nightly_result_release(&r);
}

static void run_night(fx *f, int k)
{
	run_at(f, NIGHT_END + (k - 1) * DAY);
}

/* Night 1 of v2, which doubles work.hot and makes work.a `side` times as costly. */
static void night_one(fx *f, double side)
{
	history(f, "svc");
	f->side = side;
	night(f, "svc", "v2", 1, 4, 2, 1);
	run_night(f, 1);
}

static const char *state_of(fx *f, const char *function, char *buf, size_t n)
{
	PGresult *res = NULL;
	pr_error err = PR_ERROR_INIT;
	const char *p[1] = {function};

	if (db_exec(f->t->db, &res, &err, "state", "select state from findings where function = $1"
		    " and direction = 'regression' order by id desc limit 1", 1, p) < 0)
		fail_msg("%s", err.msg);
	snprintf(buf, n, "%s", db_rows(res) ? db_get_text(res, 0, 0) : "none");
	db_result_free(res);
	return buf;
}

static int64_t triggers(fx *f, const char *function)
{
	return intf(f->t, "select count(*) from pages p join findings x on x.id = p.finding_id"
		    " where x.function = '%s' and p.event = 'trigger' and p.status <> 'cancelled'",
		    function);
}

static int setup(void **state)
{
	const char *base = getenv("PROFREG_TEST_TMP");
	pr_error err = PR_ERROR_INIT;
	char conf[700];
	FILE *c;
	int rc;

	if ((rc = testdb_reset(state)) != 0)
		return rc;
	memset(&F, 0, sizeof(F));
	F.t = *state;
	F.seed = 11;
	snprintf(F.dir, sizeof(F.dir), "%s/life-XXXXXX", base ? base : "/tmp");
	if (!mkdtemp(F.dir))
		return -1;
	/* A webhook that nobody answers: pages stay in the outbox, where they are counted. */
	snprintf(conf, sizeof(conf), "%s/profreg.json", F.dir);
	if (!(c = fopen(conf, "w")))
		return -1;
	fputs("{\"paging\": {\"min_severity\": \"low\", \"max_attempts\": 1, \"backoff_ms\": 1,"
	      " \"connect_timeout_ms\": 200, \"timeout_ms\": 200,"
	      " \"targets\": {\"hook\": {\"type\": \"webhook\","
	      " \"url\": \"http://127.0.0.1:9/x\"}},"
	      " \"default\": [\"hook\"]}}\n", c);
	fclose(c);
	if (blob_store_open_dir(&F.bs, F.dir, &err) < 0 || config_load(&F.cfg, conf, &err) < 0) {
		fprintf(stderr, "cannot set up: %s\n", err.msg);
		return -1;
	}
	testdb_execf(F.t, "insert into functions (name, file, synthetic)"
		  " values ('(other functions)', '(profreg summary)', true)");
	testdb_execf(F.t, "insert into instance default values");
	F.env = (job_env){&F.cfg, F.t->db, F.bs, F.dir, clock_now};
	*state = &F;
	return 0;
}

static int teardown(void **state)
{
	fx *f = *state;
	char cmd[600];

	blob_store_free(f->bs);
	config_release(&f->cfg);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	*state = f->t;
	return system(cmd) == 0 ? 0 : -1;
}

/* A 1.3x regression, not critical: a candidate on night 1, confirmed and paged on night 2. */
static void test_a_candidate_is_confirmed_on_its_second_look_and_only_then_pages(void **state)
{
	fx *f = *state;
	char st[32];
	int64_t states;
	json_t *list = NULL;
	pr_error err = PR_ERROR_INIT;

	history(f, "svc");
	night(f, "svc", "v2", 1, 4, 1.3, 1);
	run_night(f, 1);
	assert_string_equal(state_of(f, "work.hot", st, sizeof(st)), "candidate");
	assert_int_equal(triggers(f, "work.hot"), 0);
	night(f, "svc", "v2", 2, 4, 1.3, 1);
	run_night(f, 2);
	assert_string_equal(state_of(f, "work.hot", st, sizeof(st)), "confirmed");
	assert_int_equal(triggers(f, "work.hot"), 1);
	/* One finding, two looks, and its history in order. */
	assert_int_equal(intf(f->t, "select count(*) from findings"
			      " where function = 'work.hot'"), 1);
	assert_int_equal(intf(f->t, "select count(distinct look) from finding_looks"), 2);
	assert_int_equal(findings_list(&list, f->t->db, "confirmed", NULL, 0, &err), 0);
	assert_int_equal(json_array_size(list), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(
				    json_array_get(list, 0), "states"), 0), "state")),
			    "candidate");
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(
				    json_array_get(list, 0), "states"), 1), "state")),
			    "confirmed");
	json_decref(list);
	/*
	 * The same night again changes nothing. (The other functions' shares
	 * fall by about 4% as work.hot rises: on a night whose noise pushes
	 * that estimate past the 5% margin they are relative shifts, with
	 * states of their own, and the rerun must add none to those either.)
	 */
	states = intf(f->t, "select count(*) from finding_states");
	run_night(f, 2);
	assert_int_equal(intf(f->t, "select count(*) from finding_states"), states);
	assert_int_equal(intf(f->t, "select count(*) from finding_states s join findings x"
			      " on x.id = s.finding_id where x.function = 'work.hot'"), 2);
	assert_int_equal(triggers(f, "work.hot"), 1);
}

/*
 * The nightly run again later the same day, with no capture since: its
 * nights, counted back from its own time, cut the night's captures in
 * two, and look 2 confirmed the candidate on one night's captures and
 * paged. A look that judges no capture more than the looks before it is
 * no new evidence: the candidate waits for night 2.
 */
static void test_a_rerun_without_new_captures_does_not_confirm(void **state)
{
	fx *f = *state;
	char st[32];

	history(f, "svc");
	night(f, "svc", "v2", 1, 4, 1.3, 1);
	run_night(f, 1);
	assert_string_equal(state_of(f, "work.hot", st, sizeof(st)), "candidate");
	run_at(f, NIGHT_END + 6 * HOUR);
	assert_int_equal(
		intf(f->t, "select count(distinct look) from finding_looks l"
			   " join findings x on x.id = l.finding_id where x.function = 'work.hot'"),
		2);
	assert_string_equal(state_of(f, "work.hot", st, sizeof(st)), "candidate");
	assert_int_equal(triggers(f, "work.hot"), 0);
	night(f, "svc", "v2", 2, 4, 1.3, 1);
	run_night(f, 2);
	assert_string_equal(state_of(f, "work.hot", st, sizeof(st)), "confirmed");
	assert_int_equal(triggers(f, "work.hot"), 1);
}

/*
 * Captures collected at the same time every night (a cron job, the
 * nightly's own collection): night 2's were taken a few minutes less than
 * 24 hours after night 1's. They are still night 2's look, so the 1.3x
 * regression seen on both nights is confirmed and pages on night 2.
 * Nights counted from the release's first capture made both nights look
 * 1, and the finding stayed a candidate.
 */
static void test_captures_taken_at_one_hour_every_night_are_one_look_a_night(void **state)
{
	fx *f = *state;
	char st[32];

	history(f, "svc");
	for (int k = 1; k <= 2; k++) {
		/* Night 2's burst starts 5 minutes earlier in the day than night 1's. */
		int64_t start = NIGHT_END + (k - 1) * DAY - HOUR / 2 - (k - 1) * 300 * 1000000LL;
		for (int i = 0; i < 4; i++)
			capture(f, "svc", "v2", start + i * 60 * 1000000LL, 1.3, 1, 0.05);
		run_night(f, k);
		assert_string_equal(state_of(f, "work.hot", st, sizeof(st)),
				    k == 1 ? "candidate" : "confirmed");
	}
	assert_int_equal(intf(f->t, "select count(distinct look) from finding_looks l join"
			      " findings x on x.id = l.finding_id where x.function = 'work.hot'"),
			 2);
	assert_int_equal(triggers(f, "work.hot"), 1);
}

/* A doubled function is critical: confirmed and paged on its first night. */
static void test_a_critical_finding_pages_at_once(void **state)
{
	fx *f = *state;
	char st[32];

	night_one(f, 0);
	assert_string_equal(state_of(f, "work.hot", st, sizeof(st)), "confirmed");
	assert_int_equal(triggers(f, "work.hot"), 1);
}

/*
 * The same doubling seen in one capture is one witness: a candidate that
 * does not page, confirmed on the next night's look with more captures.
 */
static void test_a_critical_finding_of_one_capture_waits_for_its_next_look(void **state)
{
	fx *f = *state;
	char st[32];

	history(f, "svc");
	night(f, "svc", "v2", 1, 1, 2, 1);
	run_night(f, 1);
	assert_string_equal(state_of(f, "work.hot", st, sizeof(st)), "candidate");
	assert_int_equal(triggers(f, "work.hot"), 0);
	night(f, "svc", "v2", 2, 3, 2, 1);
	run_night(f, 2);
	assert_string_equal(state_of(f, "work.hot", st, sizeof(st)), "confirmed");
	assert_int_equal(triggers(f, "work.hot"), 1);
}

/*
 * work.hot 1.6x in four captures of v2 on night 1, confirmed (and its
 * evidence pinned) by the nightly; then 40 captures of v2 on night 2
 * in which it is back to normal, not yet judged. Returns its id.
 */
static int64_t confirmed_then_gone(fx *f)
{
	char st[32];
	int64_t id;

	history(f, "svc");
	night(f, "svc", "v2", 1, 4, 1.6, 1);
	run_night(f, 1);
	assert_string_equal(state_of(f, "work.hot", st, sizeof(st)), "confirmed");
	id = intf(f->t, "select id from findings where function = 'work.hot'");
	assert_true(intf(f->t, "select count(*) from capture_pins where finding_id = %lld",
			 (long long)id) > 0);
	night(f, "svc", "v2", 2, 40, 1, 1);
	return id;
}

/*
 * A release whose first night looked 1.6x worse but whose next nights
 * are normal: with every capture so far the change is no longer there.
 * The finding went away, its pins lift, its page is resolved.
 */
static void test_a_finding_that_does_not_hold_goes_away_and_its_page_resolves(void **state)
{
	fx *f = *state;
	char st[32];
	int64_t id;

	id = confirmed_then_gone(f);
	run_night(f, 2);
	assert_string_equal(state_of(f, "work.hot", st, sizeof(st)), "went_away");
	assert_int_equal(intf(f->t, "select count(*) from findings where status = 'open'"), 0);
	assert_int_equal(intf(f->t, "select count(*) from capture_pins where finding_id = %lld",
			      (long long)id), 0);
	assert_int_equal(intf(f->t, "select count(*) from pages where event = 'resolve'"
			      " and finding_id = %lld", (long long)id), 1);
	assert_int_equal(intf(f->t, "select count(*) from finding_looks where finding_id = %lld"
			      " and not significant", (long long)id), 1);
}

/*
 * The finding went away in a run that does not page (analyze without
 * --page, after the nightly paged it): its page is resolved all the
 * same, and its trigger, not yet sent, is cancelled, never sent for a
 * closed finding.
 */
static void test_a_finding_closed_by_a_run_that_does_not_page_still_resolves_its_page(
	void **state)
{
	fx *f = *state;
	char st[32];
	analyze_opts o;
	analyze_result r;
	pr_error err = PR_ERROR_INIT;
	int64_t id;

	id = confirmed_then_gone(f);
	/* Its trigger is sent, or still pending (delivery is another matter). */
	assert_int_equal(intf(f->t, "select count(*) from pages where event = 'trigger'"
			      " and finding_id = %lld and status in ('sent', 'pending', 'failed')",
			      (long long)id), 1);
	testdb_execf(f->t, "update pages set status = 'pending', attempts = 0"
		     " where finding_id = %lld", (long long)id);
	now_us = NIGHT_END + DAY;
	memset(&o, 0, sizeof(o));
	analysis_opts_default(&o.analysis);
	o.analysis.at_us = now_us;
	o.release = "v2";
	o.selection = "test";
	if (analyze_run(&r, &f->env, &o, &err) < 0)
		fail_msg("analyze: %s", err.msg);
	analyze_result_release(&r);
	assert_string_equal(state_of(f, "work.hot", st, sizeof(st)), "went_away");
	assert_int_equal(intf(f->t, "select count(*) from pages where event = 'trigger'"
			      " and finding_id = %lld and status = 'pending'", (long long)id), 0);
	assert_int_equal(intf(f->t, "select count(*) from pages where event = 'trigger'"
			      " and finding_id = %lld and status = 'cancelled'", (long long)id), 1);
}

/* v2 regressed; v3, deployed the next day, is back to normal: v2's finding is fixed by v3. */
static void test_a_later_release_back_in_the_band_fixes_the_finding(void **state)
{
	fx *f = *state;
	char st[32];
	PGresult *res = NULL;
	pr_error err = PR_ERROR_INIT;

	night_one(f, 0);
	assert_string_equal(state_of(f, "work.hot", st, sizeof(st)), "confirmed");
	night(f, "svc", "v3", 2, 4, 1, 1);
	run_night(f, 2);
	assert_string_equal(state_of(f, "work.hot", st, sizeof(st)), "fixed");
	assert_int_equal(db_exec(f->t->db, &res, &err, "fixed_by",
				 "select fixed_by from findings where function = 'work.hot'", 0,
				 NULL), 0);
	assert_string_equal(db_get_text(res, 0, 0), "v3");
	db_result_free(res);
	assert_int_equal(intf(f->t, "select count(*) from pages where event = 'resolve'"), 1);
}

/*
 * A regression that v2 brought is still in v3 and v4, deployed a night
 * apart, each judged against a baseline still mostly from before v2: each
 * is a finding of its own, and v3's, whose rise is v2's, is carried from
 * v2's open and paged finding and pages no one. v4, whose work.hot costs
 * three times what it did, rises beyond v2's finding and pages. A later
 * release back in the band fixes all three; the two pages sent resolve.
 */
static void test_a_regression_carried_into_later_releases_pages_once(void **state)
{
	fx *f = *state;
	int64_t v2;

	night_one(f, 0);
	night(f, "svc", "v3", 2, 4, 2, 1);
	run_night(f, 2);
	v2 = intf(f->t, "select id from findings where function = 'work.hot'"
		  " and current_release = 'v2'");
	assert_int_equal(intf(f->t, "select count(*) from findings where function = 'work.hot'"
			      " and current_release = 'v3' and state = 'confirmed'"
			      " and carried_from = %lld", (long long)v2), 1);
	assert_int_equal(intf(f->t, "select count(*) from pages where event = 'trigger'"), 1);
	assert_int_equal(intf(f->t, "select count(*) from pages p join findings x"
			      " on x.id = p.finding_id where x.current_release = 'v2'"), 1);
	{
		finding got;
		findings_meta meta;
		pr_error err = PR_ERROR_INIT;
		int64_t v3 = intf(f->t, "select id from findings where function = 'work.hot'"
				  " and current_release = 'v3'");
		if (findings_get(&got, &meta, f->t->db, v3, &err) < 0)
			fail_msg("findings_get: %s", err.msg);
		assert_int_equal(got.carried_from, v2);
		finding_clear(&got);
	}

	night(f, "svc", "v4", 3, 4, 3, 1);
	run_night(f, 3);
	assert_int_equal(intf(f->t, "select count(*) from findings where function = 'work.hot'"
			      " and current_release = 'v4' and state = 'confirmed'"
			      " and carried_from is null"), 1);
	assert_int_equal(intf(f->t, "select count(*) from pages where event = 'trigger'"), 2);

	night(f, "svc", "v5", 4, 4, 1, 1);
	run_night(f, 4);
	assert_int_equal(intf(f->t, "select count(*) from findings where function = 'work.hot'"
			      " and state = 'fixed'"), 3);
	assert_int_equal(intf(f->t, "select count(*) from pages where event = 'resolve'"), 2);
}

/*
 * A carried finding is judged against the earlier finding's interval, not
 * its point estimate: v2 doubles work.hot and pages, with an estimate
 * that landed low (stored here at half its rise, its interval as it
 * was); v3 costs the same, and its lower bound, above that estimate but
 * within the interval, is no rise beyond it. Against the estimate alone,
 * v3 paged the same regression a second time.
 */
static void test_a_carried_rise_within_the_earlier_interval_pages_once(void **state)
{
	fx *f = *state;
	int64_t v2;

	night_one(f, 0);
	v2 = intf(f->t, "select id from findings where function = 'work.hot'"
			" and current_release = 'v2'");
	testdb_execf(f->t, "update findings set delta = delta / 2 where id = %lld", (long long)v2);
	night(f, "svc", "v3", 2, 4, 2, 1);
	run_night(f, 2);
	assert_int_equal(intf(f->t,
			      "select count(*) from findings where function = 'work.hot'"
			      " and current_release = 'v3' and ci_low > (select delta from findings"
			      " where id = %lld)",
			      (long long)v2),
			 1);
	assert_int_equal(intf(f->t,
			      "select count(*) from findings where function = 'work.hot'"
			      " and current_release = 'v3' and carried_from = %lld",
			      (long long)v2),
			 1);
	assert_int_equal(intf(f->t, "select count(*) from pages where event = 'trigger'"), 1);
}

/* analyze of `release` at `at`, stored and not paged (a gate without a pager). */
static void analyze_at(fx *f, const char *release, int64_t at)
{
	analyze_opts o;
	analyze_result r;
	pr_error err = PR_ERROR_INIT;

	memset(&o, 0, sizeof(o));
	analysis_opts_default(&o.analysis);
	o.analysis.at_us = at;
	o.release = release;
	o.selection = "test";
	now_us = at;
	if (analyze_run(&r, &f->env, &o, &err) < 0)
		fail_msg("analyze %s: %s", release, err.msg);
	analyze_result_release(&r);
}

/*
 * One rise in two short releases of one day, each judged after its
 * deploy by a gate that does not page, then both confirmed by the
 * nightly: v3, a little worse and captured more, ranks above v2. Taken
 * in rank order, v3 paged before v2's page existed to carry it from, and
 * v2, with no earlier finding, paged too: two pages for one rise. The
 * earlier finding pages and the later one is carried from it.
 */
static void test_one_rise_in_two_releases_confirmed_in_one_run_pages_once(void **state)
{
	fx *f = *state;
	int64_t day = NIGHT_END - DAY;

	history(f, "svc");
	for (int i = 1; i <= 4; i++)
		capture(f, "svc", "v2", day + i * HOUR, 2, 1, 0.05);
	analyze_at(f, "v2", day + 5 * HOUR);
	for (int i = 6; i <= 11; i++)
		capture(f, "svc", "v3", day + i * HOUR, 2.05, 1, 0.05);
	analyze_at(f, "v3", day + 12 * HOUR);
	assert_int_equal(intf(f->t, "select count(*) from findings where function = 'work.hot'"
				    " and direction = 'regression'"),
			 2);
	run_night(f, 1);
	assert_int_equal(intf(f->t, "select count(*) from findings where function = 'work.hot'"
				    " and state = 'confirmed'"),
			 2);
	assert_int_equal(triggers(f, "work.hot"), 1);
	assert_int_equal(intf(f->t,
			      "select count(*) from findings where function = 'work.hot'"
			      " and current_release = 'v3' and carried_from = (select id from"
			      " findings where function = 'work.hot' and current_release = 'v2')"),
			 1);
}

/*
 * A rise shipped in two releases of a few hours each, each judged once
 * by its gate (a gate and the nightly of one day are one look): v2's
 * finding was a candidate, v3's too, and neither ever reached a second
 * look, so the rise never paged. v3 is confirmed by v2's significant
 * look in another run, v2 by v3's in the nightly, and the nightly pages
 * the rise once.
 */
static void test_a_rise_in_two_short_releases_is_confirmed_and_pages_once(void **state)
{
	fx *f = *state;
	int64_t day = NIGHT_END - DAY;
	char st[32];

	history(f, "svc");
	for (int i = 1; i <= 4; i++)
		capture(f, "svc", "v2", day + i * HOUR, 1.3, 1, 0.05);
	analyze_at(f, "v2", day + 5 * HOUR);
	assert_string_equal(state_of(f, "work.hot", st, sizeof(st)), "candidate");
	for (int i = 6; i <= 9; i++)
		capture(f, "svc", "v3", day + i * HOUR, 1.3, 1, 0.05);
	analyze_at(f, "v3", day + 10 * HOUR);
	assert_int_equal(intf(f->t,
			      "select count(*) from finding_states s join findings x"
			      " on x.id = s.finding_id where x.current_release = 'v3'"
			      " and s.reason like 'significant on 1 look, and the same rise in"
			      " release ''v2'' (finding %%)'"),
			 1);
	assert_int_equal(intf(f->t, "select count(*) from findings where function = 'work.hot'"
				    " and current_release = 'v3' and state = 'confirmed'"
				    " and severity <> 'critical'"),
			 1);
	run_night(f, 1);
	assert_int_equal(intf(f->t, "select count(*) from findings where function = 'work.hot'"
				    " and state = 'confirmed'"),
			 2);
	assert_int_equal(triggers(f, "work.hot"), 1);
}

/* svc's v1 was judged when it was new, 20 days before NIGHT_END: its history is before that. */
static void v1_judged_when_new(fx *f)
{
	testdb_execf(f->t,
		     "insert into judged_releases (service_id, profile_type, release,"
		     " judged_at) select id, 'cpu', 'v1', to_timestamp(%lld / 1e6) - interval"
		     " '20 days' from services where name = 'svc'",
		     (long long)NIGHT_END);
}

/*
 * v2 raises work.hot by a half and runs a few hours with no gate; v3,
 * deployed after it with the same rise, is gated. v2 was never judged,
 * so it has no finding: in v3's baseline its regressed captures raised
 * the baseline share and hid part of the rise. A release no run has
 * judged is no baseline; the history from before the first judgement
 * still is (v1 here).
 */
static void test_a_release_never_judged_is_not_the_next_ones_baseline(void **state)
{
	fx *f = *state;
	int64_t day = NIGHT_END - DAY;

	history(f, "svc");
	v1_judged_when_new(f);
	for (int i = 1; i <= 8; i++)
		capture(f, "svc", "v2", day + i * HOUR, 1.5, 1, 0.05);
	for (int i = 10; i <= 13; i++)
		capture(f, "svc", "v3", day + i * HOUR, 1.5, 1, 0.05);
	analyze_at(f, "v3", day + 14 * HOUR);
	assert_int_equal(intf(f->t, "select count(*) from judged_releases where release = 'v3'"),
			 1);
	assert_int_equal(intf(f->t, "select count(*) from judged_releases where release = 'v2'"),
			 0);
	assert_int_equal(
		intf(f->t, "select count(*) from findings where function = 'work.hot'"
			   " and current_release = 'v3' and not ('v2' = any(baseline_releases))"),
		1);
	/* Measured against v1's share (about 13.4%), not one raised by v2's captures. */
	assert_int_equal(intf(f->t, "select count(*) from findings where function = 'work.hot'"
				    " and current_release = 'v3' and baseline_share < 0.14"),
			 1);
}

/*
 * A release no run judged fills a whole baseline window (the nightly was
 * down longer than its catch-up): v2 ran for fifteen days unjudged, then
 * v3 came. Holding v2 out left v3 with no baseline, v3 was never judged
 * either, and so on for good. With too few judged captures the unjudged
 * ones are taken, and the run says so.
 */
static void test_a_window_of_unjudged_captures_is_still_a_baseline(void **state)
{
	fx *f = *state;
	int64_t at = NIGHT_END + 15 * DAY;
	analyze_opts o;
	analyze_result r;
	pr_error err = PR_ERROR_INIT;
	bool said = false;

	history(f, "svc");
	v1_judged_when_new(f);
	for (int d = 0; d < 15; d++) {
		capture(f, "svc", "v2", NIGHT_END + d * DAY + 3 * HOUR, 1, 1, 0.05);
		capture(f, "svc", "v2", NIGHT_END + d * DAY + 9 * HOUR, 1, 1, 0.05);
	}
	for (int i = 1; i <= 4; i++)
		capture(f, "svc", "v3", at + i * HOUR, 1, 1, 0.05);
	memset(&o, 0, sizeof(o));
	analysis_opts_default(&o.analysis);
	o.analysis.at_us = now_us = at + 6 * HOUR;
	o.release = "v3";
	o.selection = "test";
	if (analyze_run(&r, &f->env, &o, &err) < 0)
		fail_msg("analyze: %s", err.msg);
	for (size_t i = 0; i < r.a.nnotes; i++)
		said = said || strstr(r.a.notes[i], "releases no run has judged") != NULL;
	analyze_result_release(&r);
	assert_true(said);
	assert_int_equal(intf(f->t, "select count(*) from judged_releases where release = 'v3'"),
			 1);
}

/*
 * v2 and v3 run side by side with one rise. v3's gate finding is
 * confirmed by v2's gate look and v3 pages on the first night; v2,
 * still running, is confirmed on its own second look the night after.
 * A finding was carried only from one stored before it, so v2 paged the
 * same rise a second time; it is carried from v3's page.
 */
static void test_the_earlier_release_confirmed_after_the_later_one_paged_is_carried(void **state)
{
	fx *f = *state;
	int64_t day = NIGHT_END - DAY;

	history(f, "svc");
	for (int i = 1; i <= 4; i++)
		capture(f, "svc", "v2", day + i * HOUR, 1.3, 1, 0.05);
	analyze_at(f, "v2", day + 5 * HOUR);
	for (int i = 6; i <= 9; i++)
		capture(f, "svc", "v3", day + i * HOUR, 1.3, 1, 0.05);
	analyze_at(f, "v3", day + 10 * HOUR);
	run_night(f, 1);
	assert_int_equal(triggers(f, "work.hot"), 1);
	night(f, "svc", "v2", 2, 4, 1.3, 1);
	night(f, "svc", "v3", 2, 4, 1.3, 1);
	run_night(f, 2);
	assert_int_equal(intf(f->t, "select count(*) from findings where function = 'work.hot'"
				    " and current_release = 'v2' and state = 'confirmed'"),
			 1);
	assert_int_equal(triggers(f, "work.hot"), 1);
}

/*
 * v2 doubles work.hot and pages; v3, beside it, quadruples it and pages
 * on its own (beyond v2's rise). Seen again the night after, v2 was
 * recorded as carried from v3, though it had paged itself: the report
 * then said it paged through v3. A finding that holds its own page is
 * never carried.
 */
static void test_a_finding_that_paged_itself_is_never_recorded_as_carried(void **state)
{
	fx *f = *state;

	night_one(f, 0);
	night(f, "svc", "v2", 2, 4, 2, 1);
	night(f, "svc", "v3", 2, 4, 4, 1);
	run_night(f, 2);
	assert_int_equal(triggers(f, "work.hot"), 2);
	night(f, "svc", "v2", 3, 4, 2, 1);
	night(f, "svc", "v3", 3, 4, 4, 1);
	run_night(f, 3);
	assert_int_equal(intf(f->t,
			      "select count(*) from findings where function = 'work.hot'"
			      " and carried_from is not null and exists (select 1 from pages p"
			      " where p.finding_id = findings.id and p.event = 'trigger')"),
			 0);
	assert_int_equal(triggers(f, "work.hot"), 2);
}

/*
 * An incident carried into the next release pages once too: v2 doubles
 * work.hot and work.inner below it (one incident, paged through its
 * lead), v3 costs the same. Only the lead holds the page, so each of v3's
 * members is carried from its own v2 finding through that finding's
 * incident; and v3's incident, carried whole, pages no one.
 */
static void test_an_incident_carried_into_the_next_release_pages_once(void **state)
{
	fx *f = *state;

	history(f, "svc");
	night(f, "svc", "v2", 1, 4, 2, 2);
	run_night(f, 1);
	assert_int_equal(intf(f->t, "select count(*) from pages where event = 'trigger'"
			      " and status <> 'cancelled'"), 1);
	night(f, "svc", "v3", 2, 4, 2, 2);
	run_night(f, 2);
	assert_int_equal(intf(f->t, "select count(*) from pages where event = 'trigger'"
			      " and status <> 'cancelled'"), 1);
	/* Each of v3's confirmed regressions names its own v2 finding. */
	assert_int_equal(intf(f->t, "select count(*) from findings x join findings y"
			      " on y.id = x.carried_from and y.function = x.function"
			      " and y.current_release = 'v2'"
			      " where x.current_release = 'v3' and x.state = 'confirmed'"),
			 intf(f->t, "select count(*) from findings where current_release = 'v3'"
			      " and state = 'confirmed' and direction = 'regression'"));
	assert_true(intf(f->t, "select count(*) from findings where current_release = 'v3'"
			 " and carried_from is not null") >= 1);
}

/*
 * A lead whose incident pages (one of its members is a rise of its own)
 * is not recorded as carried, though it alone would be: v3 keeps
 * work.hot at v2's cost and takes work.inner from twice its first cost
 * to three times.
 */
static void test_a_lead_whose_incident_pages_is_not_recorded_as_carried(void **state)
{
	fx *f = *state;

	history(f, "svc");
	night(f, "svc", "v2", 1, 4, 2, 2);
	run_night(f, 1);
	night(f, "svc", "v3", 2, 4, 2, 3);
	run_night(f, 2);
	assert_int_equal(intf(f->t, "select count(*) from pages p join findings x"
			      " on x.id = p.finding_id where p.event = 'trigger'"
			      " and x.current_release = 'v3'"), 1);
	assert_int_equal(intf(f->t, "select count(*) from findings x join pages p"
			      " on p.finding_id = x.id and p.event = 'trigger'"
			      " where x.carried_from is not null"), 0);
}

/* work.hot and work.inner below it both double: one incident, one page. */
static void test_regressions_on_one_call_path_are_one_incident_that_pages_once(void **state)
{
	fx *f = *state;

	history(f, "svc");
	night(f, "svc", "v2", 1, 4, 2, 2);
	run_night(f, 1);
	assert_int_equal(intf(f->t, "select count(*) from findings where direction = 'regression'"
			      " and function in ('work.hot', 'work.inner')"), 2);
	assert_int_equal(intf(f->t, "select count(distinct incident_id) from findings"
			      " where function in ('work.hot', 'work.inner')"), 1);
	assert_int_equal(intf(f->t, "select count(*) from findings where incident_id is null"
			      " and function in ('work.hot', 'work.inner')"), 0);
	assert_int_equal(intf(f->t, "select count(*) from pages where event = 'trigger'"
			      " and status <> 'cancelled'"), 1);
	assert_int_equal(intf(f->t, "select count(*) from finding_groups"), 1);
}

/*
 * work.hot, work.inner and work.deep below them all double: one incident,
 * paged through its lead. When the lead goes away and the two others stay,
 * the lead's page is resolved and the incident, still open, pages through
 * one of them; a later release that fixes both resolves that page, once.
 */
static void test_an_incident_whose_lead_went_away_pages_through_a_member(void **state)
{
	fx *f = *state;
	int64_t lead, triggers_open, pages;

	f->deep = 1;
	history(f, "svc");
	f->deep = 2;
	night(f, "svc", "v2", 1, 4, 2, 2);
	run_night(f, 1);
	assert_int_equal(intf(f->t, "select count(*) from findings where incident_id is not null"
			      " and function in ('work.hot', 'work.inner', 'work.deep')"), 3);
	assert_int_equal(triggers(f, "work.hot"), 1);
	lead = intf(f->t, "select lead_finding_id from finding_groups");
	assert_int_equal(intf(f->t, "select id from findings where function = 'work.hot'"), lead);
	/* Night 2: work.hot is back to normal, the two below it are not. */
	night(f, "svc", "v2", 2, 40, 1, 2);
	run_night(f, 2);
	assert_int_equal(intf(f->t, "select count(*) from findings where status = 'open'"
			      " and state = 'confirmed'"
			      " and function in ('work.inner', 'work.deep')"),
			 2);
	assert_int_equal(intf(f->t, "select count(*) from pages where event = 'resolve'"
			      " and finding_id = %lld", (long long)lead), 1);
	triggers_open = intf(f->t, "select count(*) from pages p join findings x"
			     " on x.id = p.finding_id where p.event = 'trigger'"
			     " and p.status <> 'cancelled' and x.status = 'open'");
	assert_int_equal(triggers_open, 1);
	assert_int_equal(intf(f->t, "select count(*) from finding_groups g join findings x"
			      " on x.id = g.lead_finding_id where x.status = 'open'"), 1);
	/* The same night again pages no one more. */
	pages = intf(f->t, "select count(*) from pages");
	run_night(f, 2);
	assert_int_equal(intf(f->t, "select count(*) from pages"), pages);
	assert_int_equal(intf(f->t, "select count(*) from pages where status <> 'cancelled'"
			      " and event = 'trigger'"), 1);
	assert_int_equal(intf(f->t, "select count(*) from pages where event = 'resolve'"), 1);
	/* v3 fixes both: the page of the incident is resolved once. */
	f->deep = 1;
	night(f, "svc", "v3", 3, 4, 1, 1);
	run_night(f, 3);
	assert_int_equal(intf(f->t, "select count(*) from findings where status = 'open'"
			      " and function in ('work.hot', 'work.inner', 'work.deep')"), 0);
	assert_int_equal(intf(f->t, "select count(*) from pages where event = 'resolve'"), 2);
	assert_int_equal(intf(f->t, "select count(*) from pages t join pages r"
			      " on r.dedup_key = t.dedup_key and r.target = t.target"
			      " and r.event = 'resolve'"
			      " where t.event = 'trigger' and t.attempts > 0"),
			 2);
}

/*
 * The same incident, but a later release fixes its lead (work.hot) and
 * not the two below it. The lead passes to an open member of the older
 * release, which no later run judges: it pages in the run that passed
 * it the lead, not a night later through the new release's own finding.
 */
static void test_an_incident_whose_lead_a_release_fixed_pages_through_a_member_at_once(void **state)
{
	fx *f = *state;
	int64_t lead;

	f->deep = 1;
	history(f, "svc");
	f->deep = 2;
	night(f, "svc", "v2", 1, 4, 2, 2);
	run_night(f, 1);
	lead = intf(f->t, "select lead_finding_id from finding_groups");
	assert_int_equal(intf(f->t, "select id from findings where function = 'work.hot'"), lead);
	assert_int_equal(triggers(f, "work.hot"), 1);
	night(f, "svc", "v2", 2, 4, 2, 2);
	run_night(f, 2);
	assert_int_equal(intf(f->t, "select count(*) from findings where state = 'confirmed'"
				    " and function in ('work.inner', 'work.deep')"),
			 2);
	/* v3 brings work.hot back; work.inner and work.deep stay doubled. */
	night(f, "svc", "v3", 3, 4, 1, 2);
	run_night(f, 3);
	assert_int_equal(intf(f->t,
			      "select count(*) from findings where id = %lld"
			      " and state = 'fixed'",
			      (long long)lead),
			 1);
	assert_int_equal(intf(f->t,
			      "select count(*) from pages where event = 'resolve'"
			      " and finding_id = %lld",
			      (long long)lead),
			 1);
	assert_int_equal(intf(f->t, "select count(*) from finding_groups g join findings x"
				    " on x.id = g.lead_finding_id where x.status = 'open'"
				    " and x.state = 'confirmed' and x.current_release = 'v2'"),
			 1);
	/* The rise still runs: one trigger of an open finding stands for it. */
	assert_int_equal(intf(f->t, "select count(*) from pages p join findings x"
				    " on x.id = p.finding_id where p.event = 'trigger'"
				    " and p.status <> 'cancelled' and p.retired_at is null"
				    " and x.status = 'open'"),
			 1);
	/* The night again pages no one more. */
	run_night(f, 3);
	assert_int_equal(intf(f->t, "select count(*) from pages p join findings x"
				    " on x.id = p.finding_id where p.event = 'trigger'"
				    " and p.status <> 'cancelled' and p.retired_at is null"
				    " and x.status = 'open'"),
			 1);
}

/* Night 1 of a release whose work.hot and work.a both rose: both confirmed. */
static void confirmed_on_night_one(fx *f)
{
	night_one(f, 2);
}

/* Findings a, b (and c) of release `rel`, merged into one incident led by a, as a commit does. */
static void merge_under(fx *f, const char *rel, const char *a, const char *b, const char *c)
{
	testdb_execf(f->t,
		     "insert into finding_groups (service_id, profile_type, release,"
		     " lead_finding_id, reason) select service_id, profile_type, current_release,"
		     " id, 'the same suspect commit' from findings where function = '%s'"
		     " and direction = 'regression' and current_release = '%s'",
		     a, rel);
	testdb_execf(f->t,
		     "update findings set incident_id = (select max(id) from finding_groups)"
		     " where function in ('%s', '%s', '%s') and direction = 'regression'"
		     " and current_release = '%s'",
		     a, b, c ? c : a, rel);
	testdb_execf(f->t,
		     "update findings set state = 'confirmed' where function = '%s'"
		     " and current_release = '%s'",
		     a, rel);
}

/* v2's work.hot and work.a merged under work.a, work.hot's page cancelled, as a merge does. */
static void merged_by_commit(fx *f)
{
	merge_under(f, "v2", "work.a", "work.hot", NULL);
	testdb_execf(f->t,
		     "update pages set status = 'cancelled', last_error = 'merged'"
		     " where finding_id = (select id from findings where function = 'work.hot')");
}

/*
 * work.hot and work.a (no stack in common) both double, and an earlier
 * run merged them into one incident led by work.a, as a shared suspect
 * commit does, cancelling work.hot's page. A re-run of the night that
 * does not link them again (the repository could not be read this time)
 * must not page work.hot beside its lead.
 */
static void test_a_rerun_does_not_page_a_member_of_an_earlier_incident(void **state)
{
	fx *f = *state;

	confirmed_on_night_one(f);
	assert_int_equal(intf(f->t, "select count(*) from findings where direction = 'regression'"
			      " and state = 'confirmed'"
			      " and function in ('work.hot', 'work.a')"), 2);
	assert_int_equal(intf(f->t, "select count(*) from finding_groups"), 0);
	merged_by_commit(f);
	run_night(f, 1);
	assert_int_equal(triggers(f, "work.hot"), 0);
	assert_int_equal(triggers(f, "work.a"), 1);
}

/* analyze of release v2 at `at`, stored: the default options, a baseline window of `days`. */
static void analyze_v2(fx *f, int64_t at, int days)
{
	analyze_opts o;
	analyze_result r;
	pr_error err = PR_ERROR_INIT;

	memset(&o, 0, sizeof(o));
	analysis_opts_default(&o.analysis);
	o.analysis.at_us = at;
	o.analysis.window_us = days * DAY;
	o.release = "v2";
	o.selection = "test";
	now_us = at;
	if (analyze_run(&r, &f->env, &o, &err) < 0)
		fail_msg("analyze: %s", err.msg);
	analyze_result_release(&r);
}

static int64_t escalations(fx *f, const char *function)
{
	return intf(f->t, "select count(*) from finding_states s join findings x"
		    " on x.id = s.finding_id where x.function = '%s'"
		    " and s.reason like 'escalated%%'", function);
}

/*
 * Night 1 stores work.hot's regression (and work.a's), then its stored
 * severity is set to low, as an early look with fewer captures leaves it.
 */
static void stored_as_low(fx *f)
{
	confirmed_on_night_one(f);
	testdb_execf(f->t, "update findings set severity = 'low' where function = 'work.hot'");
}

/*
 * A member of an earlier run's incident that a rerun finds worse than it
 * was stored is escalated, and still pages only through its incident's
 * lead: escalating it once dropped its incident, and it paged on its own.
 */
static void test_an_escalated_member_of_an_incident_is_not_paged_beside_its_lead(void **state)
{
	fx *f = *state;

	stored_as_low(f);
	merged_by_commit(f);
	run_night(f, 1);
	assert_int_equal(escalations(f, "work.hot"), 1);
	assert_int_equal(intf(f->t, "select count(*) from findings where function = 'work.hot'"
			      " and incident_id is not null and severity <> 'low'"), 1);
	assert_int_equal(triggers(f, "work.hot"), 0);
	assert_int_equal(triggers(f, "work.a"), 1);
}

/*
 * Night 1 of a release that doubles work.hot (critical) and makes work.a
 * 1.4 times as costly (milder), merged into one incident led by work.a
 * as a shared suspect commit does, work.hot's page cancelled; work.a is
 * taken as confirmed (its second look).
 */
static void incident_with_a_critical_member(fx *f)
{
	night_one(f, 1.4);
	merge_under(f, "v2", "work.a", "work.hot", NULL);
	testdb_execf(f->t, "delete from pages");
	assert_int_equal(intf(f->t, "select count(*) from findings where function = 'work.hot'"
				    " and severity = 'critical' and state = 'confirmed'"),
			 1);
	assert_int_equal(intf(f->t, "select count(*) from findings where function = 'work.a'"
				    " and direction = 'regression' and severity not in ('none',"
				    " 'critical')"),
			 1);
}

/*
 * An incident pages through its lead at its worst member's severity: a
 * member critical under a milder lead paged no one at critical. A page
 * the lead sent at its own severity is escalated, naming the member; the
 * member still does not page beside it.
 */
static void test_an_incident_pages_at_its_worst_members_severity(void **state)
{
	fx *f = *state;

	incident_with_a_critical_member(f);
	run_night(f, 1);
	assert_int_equal(triggers(f, "work.hot"), 0);
	assert_int_equal(intf(f->t,
			      "select count(*) from pages p join findings x"
			      " on x.id = p.finding_id where x.function = 'work.a'"
			      " and p.event = 'trigger' and p.detail ->> 'severity' = 'critical'"
			      " and p.detail ->> 'incident_worst' = 'work.hot'"
			      " and not p.detail ? 'escalated_from'"),
			 1);
	/* As if sent before work.hot was confirmed: at work.a's own severity. */
	testdb_execf(f->t,
		     "update pages p set status = 'sent', sent_at = now(), detail ="
		     " jsonb_set(p.detail - 'incident_worst', '{severity}', to_jsonb(x.severity))"
		     " from findings x where x.id = p.finding_id and x.function = 'work.a'");
	run_night(f, 1);
	assert_int_equal(triggers(f, "work.hot"), 0);
	assert_int_equal(intf(f->t, "select count(*) from pages p join findings x"
				    " on x.id = p.finding_id where x.function = 'work.a'"
				    " and p.event = 'trigger' and p.retired_at is null"
				    " and p.detail ->> 'severity' = 'critical'"
				    " and p.detail ->> 'incident_worst' = 'work.hot'"
				    " and p.detail ->> 'escalated_from' = x.severity"),
			 1);
	/* Sent at critical: the same night again sends nothing more. */
	testdb_execf(f->t, "update pages set status = 'sent', sent_at = now()");
	run_night(f, 1);
	assert_int_equal(intf(f->t, "select count(*) from pages where status <> 'sent'"), 0);
}

/*
 * A lead below paging.min_severity whose member is above it: the incident
 * paged no one. It pages through its lead at the member's severity.
 */
static void test_a_lead_below_min_severity_pages_at_its_members_severity(void **state)
{
	fx *f = *state;

	incident_with_a_critical_member(f);
	testdb_execf(f->t, "delete from pages");
	f->cfg.paging.min_severity = STATS_SEV_CRITICAL;
	run_night(f, 1);
	assert_int_equal(triggers(f, "work.hot"), 0);
	assert_int_equal(intf(f->t,
			      "select count(*) from pages p join findings x"
			      " on x.id = p.finding_id where x.function = 'work.a'"
			      " and p.event = 'trigger' and p.detail ->> 'severity' = 'critical'"
			      " and p.detail ->> 'incident_worst' = 'work.hot'"
			      " and not p.detail ? 'escalated_from'"),
			 1);
}

/*
 * A member whose rise an earlier release's open finding already paged
 * (carried from it) does not raise its lead: alone it would not have
 * paged. v2 doubles work.hot and pages it; v3 keeps that rise and makes
 * work.a 1.4 times as costly, under paging.min_severity of critical.
 */
static void test_a_member_carried_from_an_earlier_page_does_not_raise_its_lead(void **state)
{
	fx *f = *state;

	night_one(f, 0);
	assert_int_equal(triggers(f, "work.hot"), 1);
	f->side = 1.4;
	night(f, "svc", "v3", 2, 4, 2, 1);
	run_night(f, 2);
	merge_under(f, "v3", "work.a", "work.hot", NULL);
	f->cfg.paging.min_severity = STATS_SEV_CRITICAL;
	run_night(f, 2);
	assert_int_equal(intf(f->t, "select count(*) from pages p join findings x"
				    " on x.id = p.finding_id where x.current_release = 'v3'"
				    " and p.event = 'trigger' and p.status <> 'cancelled'"),
			 0);
}

/* Night 1 of v2, work.hot doubled and work.a 1.4 times as costly: both paged, sent. */
static void both_paged(fx *f)
{
	night_one(f, 1.4);
	testdb_execf(f->t, "update pages set status = 'sent', sent_at = now()");
}

/*
 * A member that holds an open page of its own (it paged before it was
 * merged under an older, milder lead) does not page a second time
 * through its lead.
 */
static void test_a_member_that_paged_on_its_own_is_not_paged_again_by_its_lead(void **state)
{
	fx *f = *state;

	both_paged(f);
	merge_under(f, "v2", "work.a", "work.hot", NULL);
	run_night(f, 1);
	assert_int_equal(intf(f->t,
			      "select count(*) from pages where event = 'trigger'"
			      " and status <> 'cancelled' and detail ->> 'severity' = 'critical'"),
			 1);
	assert_int_equal(intf(f->t, "select count(*) from pages where detail ? 'incident_worst'"),
			 0);
}

/*
 * A member that paged on its own at high, merged under a milder lead and
 * since escalated to critical: its own page holds high, so the lead pages
 * critical (the member was left out of its lead's severity whatever its
 * page held, and no one paged critical).
 */
static void test_a_member_escalated_past_its_own_page_raises_its_lead(void **state)
{
	fx *f = *state;

	both_paged(f);
	testdb_execf(f->t,
		     "update pages set detail = jsonb_set(detail, '{severity}', '\"high\"')"
		     " where finding_id in (select id from findings where function = 'work.hot')");
	testdb_execf(f->t, "update findings set severity = 'high' where function = 'work.hot'");
	merge_under(f, "v2", "work.a", "work.hot", NULL);
	run_night(f, 1);
	assert_int_equal(intf(f->t, "select count(*) from pages p join findings x"
				    " on x.id = p.finding_id where x.function = 'work.a'"
				    " and p.event = 'trigger' and p.status <> 'cancelled'"
				    " and p.detail ->> 'severity' = 'critical'"
				    " and p.detail ->> 'incident_worst' = 'work.hot'"),
			 1);
}

/*
 * v2 doubles work.hot, which pages; v3 keeps that rise and makes work.a
 * 1.4 times as costly; then v2's finding is resolved by hand (`accept`:
 * its rise taken as the new level), v3's two merged under work.a, and
 * paging.min_severity set to critical: work.a alone pages no one.
 */
static void v3_merged_after_v2_resolved(fx *f, bool accept)
{
	triage_resolution r;
	pr_error err = PR_ERROR_INIT;

	night_one(f, 0);
	testdb_execf(f->t, "update pages set status = 'sent', sent_at = now()");
	f->side = 1.4;
	night(f, "svc", "v3", 2, 4, 2, 1);
	run_night(f, 2);
	if (triage_resolve(&r, f->t->db, &f->cfg,
			   intf(f->t, "select id from findings where function = 'work.hot'"
				      " and current_release = 'v2' and direction = 'regression'"),
			   accept ? "the new level" : "fixed", accept, &err) < 0)
		fail_msg("%s", err.msg);
	merge_under(f, "v3", "work.a", "work.hot", NULL);
	f->cfg.paging.min_severity = STATS_SEV_CRITICAL;
}

/* v3's triggers that went or will go out at `severity`. */
static int64_t v3_triggers(fx *f, const char *severity)
{
	return intf(f->t,
		    "select count(*) from pages p join findings x on x.id = p.finding_id"
		    " where x.current_release = 'v3' and p.event = 'trigger'"
		    " and p.status <> 'cancelled' and p.detail ->> 'severity' like '%s'",
		    severity);
}

/*
 * A member stored as carried from an earlier release's finding that was
 * resolved by hand since: its rise is paged nowhere now, so it raises its
 * lead (the stored carried_from, stale, kept it out for good).
 */
static void test_a_member_whose_earlier_page_was_resolved_raises_its_lead(void **state)
{
	fx *f = *state;

	v3_merged_after_v2_resolved(f, false);
	testdb_execf(f->t, "update findings set carried_from = (select id from findings"
			   " where function = 'work.hot' and current_release = 'v2'"
			   " and direction = 'regression') where function = 'work.hot'"
			   " and current_release = 'v3'");
	run_night(f, 2);
	assert_int_equal(v3_triggers(f, "critical"), 1);
}

/*
 * A member within a rise accepted by hand (on-call took v2's doubling of
 * work.hot as the new level; v3 keeps it) does not raise its lead: its
 * rise pages no one.
 */
static void test_a_member_within_an_accepted_rise_does_not_raise_its_lead(void **state)
{
	fx *f = *state;

	v3_merged_after_v2_resolved(f, true);
	run_night(f, 2);
	assert_int_equal(v3_triggers(f, "%%"), 0);
}

/* One capture: big.loop at `big`, four small functions at 200 each. */
static void dominant_capture(fx *f, const char *svc, const char *rel, int64_t at, int big)
{
	char path[600];
	FILE *out;

	snprintf(path, sizeof(path), "%s/d%d.folded", f->dir, ++f->seq);
	assert_non_null(out = fopen(path, "w"));
	fprintf(out, "main;serve;big.loop %d\n", (int)(big * noise(f, 0.03)));
	for (int i = 0; i < 4; i++)
		fprintf(out, "main;serve;small.f%d %d\n", i, (int)(200 * noise(f, 0.03)));
	assert_int_equal(fclose(out), 0);
	ingest_capture(f, path, svc, rel, at, PROFILE_FMT_FOLDED);
}

/*
 * A function of 92% of the samples falls to 84% (its cost halved): every
 * other share doubles, by dilution alone. Those are relative shifts, not
 * regressions, though each doubled: what the mover can do is measured
 * against the rest of the whole it left (8%), not the whole.
 */
static void test_a_dominant_function_s_fall_dilutes_into_relative_shifts(void **state)
{
	fx *f = *state;

	testdb_execf(f->t, "insert into services (name, enabled) values ('dom', true)");
	for (int day = 14; day >= 1; day--) {
		dominant_capture(f, "dom", "v1", NIGHT_END - day * DAY - 9 * HOUR, 9200);
		dominant_capture(f, "dom", "v1", NIGHT_END - day * DAY - 3 * HOUR, 9200);
	}
	for (int i = 0; i < 6; i++)
		dominant_capture(f, "dom", "v2", NIGHT_END - DAY + (i + 1) * (DAY / 7), 4200);
	run_night(f, 1);
	assert_int_equal(intf(f->t, "select count(*) from findings where function like 'small.%%'"
				    " and direction = 'regression'"),
			 0);
	assert_int_equal(intf(f->t, "select count(*) from findings where function like 'small.%%'"
				    " and direction = 'relative_shift'"),
			 4);
	assert_int_equal(intf(f->t, "select count(*) from pages where event = 'trigger'"), 0);
}

/*
 * A member resolved by hand, ranked before the incident's worst, does not
 * hide it: the lead still pages at the worst open member's severity.
 */
static void test_a_member_resolved_by_hand_does_not_hide_the_worst_one(void **state)
{
	fx *f = *state;

	history(f, "svc");
	f->side = 1.4;
	night(f, "svc", "v2", 1, 4, 2, 3);
	run_night(f, 1);
	testdb_execf(f->t, "update findings set incident_id = null");
	testdb_execf(f->t, "delete from finding_groups");
	merge_under(f, "v2", "work.a", "work.hot", "work.inner");
	testdb_execf(f->t, "update findings set status = 'resolved', state = 'resolved',"
			   " resolved_at = now() where function = 'work.hot'"
			   " and direction = 'regression'");
	testdb_execf(f->t, "delete from pages");
	run_night(f, 1);
	assert_int_equal(intf(f->t,
			      "select count(*) from pages p join findings x"
			      " on x.id = p.finding_id where x.function = 'work.a'"
			      " and p.event = 'trigger' and p.detail ->> 'severity' = 'critical'"
			      " and p.detail ->> 'incident_worst' = 'work.inner'"),
			 1);
}

/*
 * A finding escalated on a later night is read back at that night's look,
 * as its history says ("escalated at look 2"): finding show printed the
 * later figures beside the first night's look.
 */
static void test_a_finding_escalated_on_night_two_reads_back_at_look_two(void **state)
{
	fx *f = *state;
	pr_error err = PR_ERROR_INIT;
	findings_meta meta;
	finding got;

	stored_as_low(f);
	night(f, "svc", "v2", 2, 4, 2, 1);
	run_night(f, 2);
	assert_int_equal(intf(f->t, "select count(*) from finding_states s join findings x"
				    " on x.id = s.finding_id where x.function = 'work.hot'"
				    " and s.reason like 'escalated at look 2%%'"),
			 1);
	assert_int_equal(
		findings_get(&got, &meta, f->t->db,
			     intf(f->t, "select id from findings where function = 'work.hot'"
					" and direction = 'regression'"),
			     &err),
		0);
	assert_int_equal(got.look, 2);
	finding_clear(&got);
}

/*
 * A trigger not yet sent when its finding is escalated goes out with the
 * escalated figures, not the early look's milder ones; its attempts and
 * its next try stay (one tried may have arrived, which its resolve and a
 * merge into an incident go by).
 */
static void test_a_pending_trigger_of_an_escalated_finding_takes_its_figures(void **state)
{
	fx *f = *state;

	stored_as_low(f);
	testdb_execf(f->t, "update pages set status = 'pending', attempts = 1,"
		     " next_attempt_at = now() + interval '1 hour',"
		     " detail = jsonb_set(detail, '{severity}', '\"low\"')"
		     " where event = 'trigger' and finding_id ="
		     " (select id from findings where function = 'work.hot')");
	run_night(f, 1);
	assert_int_equal(escalations(f, "work.hot"), 1);
	assert_int_equal(intf(f->t, "select count(*) from pages p join findings x"
			      " on x.id = p.finding_id where x.function = 'work.hot'"
			      " and p.event = 'trigger' and p.detail ->> 'severity' = x.severity"
			      " and x.severity <> 'low' and p.status = 'pending' and p.attempts = 1"
			      " and p.next_attempt_at > now() + interval '50 minutes'"), 1);
}

/*
 * A look with other options (another baseline window) asks another
 * question: it does not escalate the stored finding, whose later
 * follow-ups would then use those options and never close it. The same
 * look with the finding's own options does.
 */
static void test_a_look_with_other_options_does_not_escalate_a_finding(void **state)
{
	fx *f = *state;

	stored_as_low(f);
	analyze_v2(f, NIGHT_END, 10);
	assert_int_equal(escalations(f, "work.hot"), 0);
	assert_int_equal(intf(f->t, "select count(*) from findings where function = 'work.hot'"
			      " and severity = 'low' and (detail ->> 'window_us')::bigint = %lld",
			      (long long)(14 * DAY)), 1);
	analyze_v2(f, NIGHT_END, 14);
	assert_int_equal(escalations(f, "work.hot"), 1);
}

/*
 * Issue 18's second miss: a 1.2x regression (22% -> 26.4%, sd 0.6 points
 * in the first release) behind a release that changed nothing but was
 * very noisy (16.8% to 23.8%). Shares are set directly: one function
 * with the given share, the rest in one other function.
 */
static void share_capture(fx *f, const char *service, const char *release, int64_t at,
			  double share)
{
	char path[600];
	FILE *out;
	int total = 20000, hot = (int)lround(share * total);

	snprintf(path, sizeof(path), "%s/s%d.folded", f->dir, ++f->seq);
	assert_non_null(out = fopen(path, "w"));
	fprintf(out, "main;serve;work.hot %d\n", hot);
	/* The rest: six steady functions, each varying a little. */
	for (int k = 0, left = total - hot; k < 6; k++) {
		int w = k < 5 ? (int)(left * (0.1 + 0.02 * k) * noise(f, 0.03)) : left;
		fprintf(out, "main;serve;work.rest%d %d\n", k, w);
		left -= w;
		if (k == 4)
			w = left;
	}
	assert_int_equal(fclose(out), 0);
	ingest_capture(f, path, service, release, at, PROFILE_FMT_FOLDED);
}

static double gauss(fx *f)
{
	double s = 0;

	for (int i = 0; i < 12; i++)
		s += (noise(f, 0.5) - 1) * 2; /* uniform on [-1, 1): variance 1/3 */
	return s / 2;                          /* 12 of them / 4: variance 1 */
}

static void noisy_release_case(fx *f, const char *name, double current)
{
	testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)", name);
	for (int i = 0; i < 12; i++)
		share_capture(f, name, "v1", NIGHT_END - 13 * DAY + i * 12 * HOUR,
			      0.22 + 0.006 * gauss(f));
	/*
	 * It changed nothing (its mean is the first release's, give or take
	 * its noise), but its captures range from 16.8% to 23.8%.
	 */
	static const double wide[] = {0.168, 0.185, 0.205, 0.215, 0.223, 0.228,
				      0.230, 0.232, 0.234, 0.235, 0.236, 0.238};
	for (int i = 0; i < 12; i++)
		share_capture(f, name, "v2", NIGHT_END - 7 * DAY + i * 12 * HOUR,
			      wide[(i * 5) % 12]);
	for (int i = 0; i < 4; i++)
		share_capture(f, name, "v3", NIGHT_END - 20 * HOUR + i * 4 * HOUR,
			      current + 0.006 * gauss(f));
}

static const finding *found(const analysis *a, const char *service)
{
	for (size_t i = 0; i < a->ntests; i++) {
		const finding *t = &a->tests[i];
		if (strcmp(t->service, service) != 0 || strcmp(t->function, "work.hot") != 0)
			continue;
		if (getenv("LIFECYCLE_DEBUG"))
			fprintf(stderr,
				"%s: %s %s %.4f -> %.4f p %.3g p_seq %.3g q %.3g mw %.3g"
				" host %.3g hours %.3g\n",
				service, t->significant ? "significant" : "not significant",
				finding_dir_name(t->direction), t->baseline_share, t->current_share,
				t->p_value, t->p_seq, t->q_value, t->mw_p, t->host_p, t->hours_p);
		if (t->significant && t->direction == FINDING_REGRESSION)
			return t;
	}
	return NULL;
}

static void judge_opts(fx *f, analysis *a, const char *const *names, size_t n,
		       const analysis_opts *o)
{
	pr_error err = PR_ERROR_INIT;

	analysis_init(a, o);
	for (size_t i = 0; i < n; i++) {
		const char *type = f->type ? f->type : "cpu";
		analysis_target t = {intf(f->t, "select id from services where name = '%s'",
					  names[i]), names[i], type, "v3", 0, 0, NULL, NULL, NULL,
				     NULL};
		if (analysis_add(a, f->t->db, &t, false, &err) < 0)
			fail_msg("%s", err.msg);
	}
	assert_int_equal(analysis_finish(a, &err), 0);
}

static void judge_with(fx *f, analysis *a, const char *const *names, size_t n,
		       bool margin_in_test)
{
	analysis_opts o;

	analysis_opts_default(&o);
	o.at_us = NIGHT_END;
	o.margin_in_test = margin_in_test;
	judge_opts(f, a, names, n, &o);
}

static void judge(fx *f, analysis *a, const char *const *names, size_t n)
{
	judge_with(f, a, names, n, false);
}

/*
 * 14 days of v1 (two captures a day) and 4 captures of v3 in the night,
 * work.hot at `hot` times its cost in v3; every stack's weight varies by
 * `spread` and a capture holds `scale` times about 14,000 samples.
 */
static void margin_case(fx *f, const char *name, double hot, double spread, int scale)
{
	testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)", name);
	for (int day = 14; day >= 1; day--) {
		capture_scaled(f, name, "v1", NIGHT_END - day * DAY - 9 * HOUR, 1, 1, spread,
			       scale);
		capture_scaled(f, name, "v1", NIGHT_END - day * DAY - 3 * HOUR, 1, 1, spread,
			       scale);
	}
	for (int k = 0; k < 4; k++)
		capture_scaled(f, name, "v3", NIGHT_END - (20 - 4 * k) * HOUR, hot, 1, spread,
			       scale);
}

/*
 * work.hot 1.09x as costly: its share (14%) rises by about 7.7%, beyond
 * the 5% margin but by less than twice it, with about 1.5% of noise on
 * the mean of 4 captures. Tested against no change, with the estimate
 * beyond the margin, it is found; tested against the margin itself (the
 * design before), the 2.7 points left over are too few for 4 captures.
 * The service without the change raises nothing either way.
 */
static void test_a_rise_beyond_the_margin_needs_no_proof_of_the_margin(void **state)
{
	static const char *const names[] = {"reg", "null"};
	fx *f = *state;
	analysis a;

	margin_case(f, "reg", 1.09, 0.05, 1);
	margin_case(f, "null", 1, 0.05, 1);
	judge(f, &a, names, 2);
	assert_non_null(found(&a, "reg"));
	assert_null(found(&a, "null"));
	analysis_release(&a);
	judge_with(f, &a, names, 2, true);
	assert_null(found(&a, "reg"));
	assert_null(found(&a, "null"));
	analysis_release(&a);
}

/*
 * A change under the margin is never a finding, however sure: 100 times
 * the samples and almost no capture noise make a 1.03x rise of work.hot
 * (about 2.6% of its share) overwhelmingly significant against no change,
 * but its estimate is below the 5% margin. The same data with 1.08x
 * (about 6.9%) is found, so the test can see such a service at all.
 */
static void test_a_sure_change_below_the_margin_is_not_a_finding(void **state)
{
	static const char *const names[] = {"small", "material"};
	fx *f = *state;
	analysis a;
	bool tested = false;

	margin_case(f, "small", 1.03, 0.002, 100);
	margin_case(f, "material", 1.08, 0.002, 100);
	judge(f, &a, names, 2);
	assert_null(found(&a, "small"));
	assert_non_null(found(&a, "material"));
	for (size_t i = 0; i < a.ntests; i++) {
		const finding *t = &a.tests[i];
		if (strcmp(t->service, "small") != 0 || strcmp(t->function, "work.hot") != 0)
			continue;
		/* Significant against no change, and only the margin stops it. */
		assert_true(t->p_up < 1e-6);
		assert_true(t->rel_delta > 0.01 && t->rel_delta < 0.05);
		assert_false(t->significant);
		tested = true;
	}
	assert_true(tested);
	analysis_release(&a);
}

/*
 * work.hot's weight on the day of `at` (UTC): days d1 and d2 (0 Sunday to
 * 6 Saturday), the weekend, call it 1.5 times as much.
 */
static double weekend_hot(int64_t at, int d1, int d2)
{
	time_t sec = (time_t)(at / 1000000);
	struct tm tm;

	assert_non_null(gmtime_r(&sec, &tm));
	return tm.tm_wday == d1 || tm.tm_wday == d2 ? 1.5 : 1;
}

/*
 * 14 days of v1 before the night that ends at `end`, two captures a day,
 * with work.hot 1.5 times as costly on days d1 and d2 (about 13% of a
 * capture against 9%), and 4 captures of v3 in that night, work.hot
 * `factor` times as costly as on any such day before.
 */
static void week_case(fx *f, const char *name, double factor, int64_t end, int d1, int d2)
{
	testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)", name);
	for (int day = 14; day >= 1; day--)
		for (int h = 9; h >= 3; h -= 6) {
			int64_t at = end - day * DAY - h * HOUR;
			capture(f, name, "v1", at, weekend_hot(at, d1, d2), 1, 0.05);
		}
	for (int k = 0; k < 4; k++) {
		int64_t at = end - (20 - 4 * k) * HOUR;
		capture(f, name, "v3", at, weekend_hot(at, d1, d2) * factor, 1, 0.05);
	}
}

/* A Saturday-Sunday weekend, judged on the Sunday before NIGHT_END. */
static void weekly_case(fx *f, const char *name, double factor)
{
	week_case(f, name, factor, NIGHT_END, 0, 6);
}

/*
 * A release deployed before a weekend is judged on the weekend, against
 * a baseline of mostly weekdays: a function the weekend calls more
 * rises without any change of code. Where the baseline's weekends and
 * weekdays differ, the weekend's difference is taken out before the
 * comparison: the service without a change raises nothing, and a 1.4x
 * slowdown of the same function on the same Sunday is still found.
 */
static void test_a_weekend_is_judged_against_the_baseline_s_weekends(void **state)
{
	static const char *const names[] = {"weekend", "slower"};
	fx *f = *state;
	analysis_opts o;
	analysis a;

	weekly_case(f, "weekend", 1);
	weekly_case(f, "slower", 1.4);
	analysis_opts_default(&o);
	o.at_us = NIGHT_END;
	judge_opts(f, &a, names, 2, &o);
	assert_null(found(&a, "weekend"));
	assert_non_null(found(&a, "slower"));
	for (size_t i = 0; i < a.ntests; i++)
		if (strcmp(a.tests[i].function, "work.hot") == 0)
			assert_true(a.tests[i].weekly);
	analysis_release(&a);
	/*
	 * Without the week, the weekend's mix is a day's: counted as noise
	 * that every capture of that day shares, it raises nothing in the
	 * unchanged service either, and the slowdown is still found.
	 */
	o.weekly = false;
	judge_opts(f, &a, names, 2, &o);
	assert_null(found(&a, "weekend"));
	assert_non_null(found(&a, "slower"));
	analysis_release(&a);
}

/*
 * Reproduce stored finding id as finding show does; returns its baseline
 * share, and in *weekly whether the week was taken out again.
 */
static double reproduced_base(fx *f, int64_t id, findings_meta *meta, bool *weekly)
{
	finding stored, again;
	pr_error err = PR_ERROR_INIT;
	bool found = false;
	double share;

	if (findings_get(&stored, meta, f->t->db, id, &err) < 0 ||
	    triage_reproduce(&again, &found, f->t->db, &stored, meta, &err) < 0)
		fail_msg("reproduce: %s", err.msg);
	assert_true(found);
	assert_true(stored.weekly);
	*weekly = again.weekly;
	share = again.baseline_share;
	finding_clear(&stored);
	finding_clear(&again);
	return share;
}

/* analyze --all-services of release v3 at `at`, stored. */
static void analyze_all(fx *f, int64_t at)
{
	analyze_opts o;
	analyze_result r;
	pr_error err = PR_ERROR_INIT;

	memset(&o, 0, sizeof(o));
	analysis_opts_default(&o.analysis);
	o.analysis.at_us = at;
	o.release = "v3";
	o.type = f->type;
	o.selection = "test";
	now_us = at;
	if (analyze_run(&r, &f->env, &o, &err) < 0)
		fail_msg("analyze: %s", err.msg);
	analyze_result_release(&r);
}

/* The baseline share stored finding id was found with. */
static double stored_base(fx *f, int64_t id)
{
	char q[128];

	snprintf(q, sizeof(q), "select baseline_share from findings where id = %lld",
		 (long long)id);
	return strtod(testdb_text(f->t, q), NULL);
}

/*
 * A finding made with the week taken out says so, and is reproduced
 * (finding show) with the week as it was judged: one stored before the
 * week was judged is reproduced without it.
 */
static void test_a_finding_judged_with_its_week_is_reproduced_with_it(void **state)
{
	fx *f = *state;
	findings_meta meta;
	double stored, with_week, without;
	bool weekly;
	int64_t id;

	weekly_case(f, "slower", 1.4);
	analyze_all(f, NIGHT_END);
	id = intf(f->t, "select id from findings where function = 'work.hot'"
		  " and (detail ->> 'week_adjusted')::boolean");
	stored = stored_base(f, id);
	with_week = reproduced_base(f, id, &meta, &weekly);
	assert_true(meta.weekly);
	assert_true(weekly);
	assert_true(fabs(with_week - stored) <= 1e-9 * stored);
	testdb_execf(f->t, "update findings set detail = detail - 'weekly' - 'utc_offset_h'"
		     " where id = %lld", (long long)id);
	without = reproduced_base(f, id, &meta, &weekly);
	assert_false(meta.weekly);
	assert_false(weekly);
	/* Without the week, the baseline is its days' mix, mostly weekdays: lower. */
	assert_true(without < with_week - 0.01);
}

/* f's configuration replaced by `text`, written to its folder. */
static void reconfigure(fx *f, const char *text)
{
	char path[sizeof(f->dir) + 32];
	pr_error err = PR_ERROR_INIT;
	FILE *c;

	snprintf(path, sizeof(path), "%s/again.json", f->dir);
	assert_non_null(c = fopen(path, "w"));
	fputs(text, c);
	fclose(c);
	config_release(&f->cfg);
	if (config_load(&f->cfg, path, &err) < 0)
		fail_msg("config: %s", err.msg);
}


/*
 * A service whose weekend is Friday and Saturday, judged on a Friday:
 * with its own weekend in the configuration (services.NAME.weekend) the
 * release without a change raises nothing and a 1.4x slowdown on the same
 * Friday is found, judged and stored on that week. Judged on the default
 * Saturday-Sunday week instead, its Friday counts as a weekday, and the
 * service without a change is a regression.
 */
static void test_a_service_s_own_weekend_is_the_one_judged(void **state)
{
	fx *f = *state;
	const int64_t friday_night = NIGHT_END - 2 * DAY;
	findings_meta meta;
	double stored, again;
	bool weekly;
	int64_t id;

	week_case(f, "gulf", 1, friday_night, 5, 6);
	week_case(f, "gulf-slower", 1.4, friday_night, 5, 6);
	reconfigure(f, "{\"services\": {\"gulf\": {\"weekend\": \"fri-sat\"},"
		    " \"gulf-slower\": {\"weekend\": \"fri-sat\"}}}");
	analyze_all(f, friday_night);
	assert_int_equal(intf(f->t, "select count(*) from findings f join services s"
			      " on s.id = f.service_id where s.name = 'gulf'"
			      " and f.direction = 'regression'"), 0);
	assert_int_equal(intf(f->t, "select count(*) from findings f join services s"
			      " on s.id = f.service_id where s.name = 'gulf-slower'"
			      " and f.function = 'work.hot' and f.direction = 'regression'"
			      " and f.detail ->> 'weekend' = 'fri-sat'"
			      " and (f.detail ->> 'week_adjusted')::boolean"), 1);
	/* finding show reproduces it on the week it was judged on. */
	id = intf(f->t, "select f.id from findings f join services s on s.id = f.service_id"
		  " where s.name = 'gulf-slower' and f.function = 'work.hot'");
	stored = stored_base(f, id);
	again = reproduced_base(f, id, &meta, &weekly);
	assert_int_equal(meta.week.weekend_first, 5);
	assert_int_equal(meta.week.weekend_days, 2);
	assert_true(weekly);
	assert_true(fabs(again - stored) <= 1e-9 * stored);

	testdb_execf(f->t, "delete from findings");
	reconfigure(f, "{\"services\": {\"gulf\": {}, \"gulf-slower\": {}}}");
	analyze_all(f, friday_night);
	assert_true(intf(f->t, "select count(*) from findings f join services s"
			 " on s.id = f.service_id where s.name = 'gulf'"
			 " and f.function = 'work.hot' and f.direction = 'regression'") > 0);
}

static void test_a_noisy_release_in_between_does_not_hide_a_regression(void **state)
{
	static const char *const names[] = {"reg", "null"};
	fx *f = *state;
	analysis a;

	noisy_release_case(f, "reg", 0.264);
	noisy_release_case(f, "null", 0.22);
	judge(f, &a, names, 2);
	assert_non_null(found(&a, "reg"));
	assert_null(found(&a, "null"));
	analysis_release(&a);
}

/*
 * Issue 18's first miss: a 1.25x slowdown of a function at about 20%,
 * 6 current captures against 12 baseline ones whose share varies with a
 * standard deviation of 2 points: here most of that variation is
 * sampling noise of small captures (a few hundred samples), which the
 * sample counts say.
 */
static void small_capture(fx *f, const char *service, const char *release, int64_t at,
			  double share, int total)
{
	char path[600];
	FILE *out;
	int hot = (int)lround(share * total);

	snprintf(path, sizeof(path), "%s/m%d.folded", f->dir, ++f->seq);
	assert_non_null(out = fopen(path, "w"));
	fprintf(out, "main;serve;work.hot %d\nmain;serve;work.rest %d\n", hot, total - hot);
	assert_int_equal(fclose(out), 0);
	ingest_capture(f, path, service, release, at, PROFILE_FMT_FOLDED);
}

static void small_case(fx *f, const char *name, double factor)
{
	/* Sample counts of real short captures: 200 to 3,000. */
	static const int sizes[] = {400, 2500, 300, 1800, 600, 3000,
				    250, 900, 2200, 350, 1500, 700};
	double cur = 0.2 * factor / (1 - 0.2 + 0.2 * factor);

	testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)", name);
	for (int i = 0; i < 12; i++) {
		double sd = sqrt(0.2 * 0.8 / sizes[i]);
		small_capture(f, name, "v1", NIGHT_END - 12 * DAY + i * DAY,
			      0.2 + sd * gauss(f), sizes[i]);
	}
	for (int i = 0; i < 6; i++) {
		double sd = sqrt(cur * (1 - cur) / sizes[11 - i]);
		small_capture(f, name, "v3", NIGHT_END - 20 * HOUR + i * 3 * HOUR,
			      cur + sd * gauss(f), sizes[11 - i]);
	}
}

static void test_a_noisy_small_sample_function_is_weighed_by_its_sample_counts(void **state)
{
	static const char *const names[] = {"reg", "null"};
	fx *f = *state;
	analysis a;

	small_case(f, "reg", 1.25);
	small_case(f, "null", 1);
	judge(f, &a, names, 2);
	assert_non_null(found(&a, "reg"));
	assert_null(found(&a, "null"));
	analysis_release(&a);
}

/*
 * A release noisy in every function. Twelve functions of 20,000 to
 * 90,000 samples each (sampling noise well under 1%), each capture's
 * weights varying by `cv` (Gaussian, relative); work.hot costs `hot`
 * times the usual.
 */
static void release_capture(fx *f, const char *service, const char *release, int64_t at,
			    double cv, double hot)
{
	char path[600];
	FILE *out;
	snprintf(path, sizeof(path), "%s/r%d.folded", f->dir, ++f->seq);
	assert_non_null(out = fopen(path, "w"));
	for (int i = 0; i < 11; i++)
		fprintf(out, "main;serve;fn%02d %d\n", i,
			(int)lround((20000 + 7000 * i) * fmax(0.2, 1 + cv * gauss(f))));
	fprintf(out, "main;serve;work.hot %d\n",
		(int)lround(60000 * hot * fmax(0.2, 1 + cv * gauss(f))));
	assert_int_equal(fclose(out), 0);
	ingest_capture(f, path, service, release, at, PROFILE_FMT_FOLDED);
}

/* 12 captures each of v1 and v2 at their spreads in every function, then 4 of v3. */
static void releases_case(fx *f, const char *name, double v1_cv, double v2_cv, double cur_cv,
			  double hot)
{
	testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)", name);
	for (int i = 0; i < 12; i++)
		release_capture(f, name, "v1", NIGHT_END - 13 * DAY + i * 12 * HOUR, v1_cv, 1);
	for (int i = 0; i < 12; i++)
		release_capture(f, name, "v2", NIGHT_END - 7 * DAY + i * 12 * HOUR, v2_cv, 1);
	for (int i = 0; i < 4; i++)
		release_capture(f, name, "v3", NIGHT_END - 20 * HOUR + i * 4 * HOUR, cur_cv, hot);
}

/* v1 quiet (4%), v2 four times noisier in every function. */
static void noisy_everywhere_case(fx *f, const char *name, double cur_cv, double hot)
{
	releases_case(f, name, 0.04, 0.16, cur_cv, hot);
}

/*
 * The noisy release v2 says how noisy a release can be, not how noisy
 * v3 is: v3 is as quiet as v1 in all of its functions, so its 10% rise
 * of work.hot is judged against a quiet release's spread and found
 * (against the baseline releases' typical spread it was not: p 0.002,
 * q 0.08 among these 36 tests). The same service without the rise raises
 * nothing, and a v3 as noisy as v2 with no rise raises nothing either:
 * its own factor is learnt as well.
 */
static void test_a_release_noisy_in_every_function_does_not_hide_a_rise(void **state)
{
	static const char *const names[] = {"reg", "null", "noisy"};
	fx *f = *state;
	analysis a;

	noisy_everywhere_case(f, "reg", 0.04, 1.10);
	noisy_everywhere_case(f, "null", 0.04, 1);
	noisy_everywhere_case(f, "noisy", 0.16, 1);
	judge(f, &a, names, 3);
	assert_non_null(found(&a, "reg"));
	assert_null(found(&a, "null"));
	assert_null(found(&a, "noisy"));
	for (size_t i = 0; i < a.ntests; i++)
		if (a.tests[i].significant && a.tests[i].direction == FINDING_REGRESSION &&
		    strcmp(a.tests[i].service, "reg") != 0)
			fail_msg("false finding: %s %s", a.tests[i].service, a.tests[i].function);
	analysis_release(&a);
}

/*
 * Four captures of a new release that agree with each other ten times
 * more closely than any release before (taken close together, say) are
 * not taken at their word: their spread is floored at the quietest
 * baseline release's, so a 7% offset they share is not a finding
 * (with their own spread it was: p 1e-6, q 3e-5). A 30% rise still is.
 */
static void test_a_release_quieter_than_any_before_is_judged_by_the_quietest(void **state)
{
	static const char *const names[] = {"tight", "rise"};
	fx *f = *state;
	analysis a;

	releases_case(f, "tight", 0.08, 0.08, 0.008, 1.07);
	releases_case(f, "rise", 0.08, 0.08, 0.008, 1.3);
	judge(f, &a, names, 2);
	assert_null(found(&a, "tight"));
	assert_non_null(found(&a, "rise"));
	analysis_release(&a);
}

/*
 * 24 baseline captures (v1 and v2) taken in turn on hosts h1 to h4, then
 * 4 of v3 on hosts cur[0..3] with work.hot at hot[0..3] times its cost.
 */
static void hosts_case(fx *f, const char *name, const char *const cur[4], const double hot[4])
{
	static const char *const hosts[] = {"h1", "h2", "h3", "h4"};

	testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)", name);
	for (int i = 0; i < 24; i++) {
		f->host = hosts[i % 4];
		release_capture(f, name, i < 12 ? "v1" : "v2", NIGHT_END - 13 * DAY + i * 12 * HOUR,
				0.04, 1);
	}
	for (int i = 0; i < 4; i++) {
		f->host = cur[i];
		release_capture(f, name, "v3", NIGHT_END - 20 * HOUR + i * 4 * HOUR, 0.04, hot[i]);
	}
	f->host = NULL;
}

/*
 * A release's change shows on each of its hosts. Two of the new
 * release's four captures come from a host new to the service on which
 * work.hot costs 40% more; on the two others it costs what it did. The
 * mean rose by a fifth, but with that host left out it did not rise at
 * all: no finding (without the check it was one). The same rise on
 * every host (four hosts, all at 1.2x) is found.
 */
static void test_a_rise_on_one_host_alone_is_not_the_release_s(void **state)
{
	static const char *const names[] = {"one", "every"};
	static const char *const one_hosts[] = {"h1", "h2", "h9", "h9"};
	static const char *const every_hosts[] = {"h1", "h2", "h3", "h4"};
	static const double one_hot[] = {1, 1, 1.4, 1.4}, every_hot[] = {1.2, 1.2, 1.2, 1.2};
	fx *f = *state;
	analysis a;

	hosts_case(f, "one", one_hosts, one_hot);
	hosts_case(f, "every", every_hosts, every_hot);
	judge(f, &a, names, 2);
	assert_null(found(&a, "one"));
	assert_non_null(found(&a, "every"));
	analysis_release(&a);
}

/*
 * Hosts new to the service. The release's four captures come from two
 * hosts the baseline never saw, which disagree: work.hot costs 90% more
 * on one and 30% more on the other. Both sit above the baseline, and
 * either left out still leaves a rise, but two hosts this far apart say
 * more about those hosts than about the release (Welch's test of the two
 * host means against the baseline's four: t about 2 on one degree of
 * freedom). No finding. The same two new hosts agreeing on a 1.6x rise
 * are one.
 */
static void test_two_new_hosts_that_disagree_are_two_witnesses(void **state)
{
	static const char *const names[] = {"apart", "agree"};
	static const char *const cur[] = {"h8", "h8", "h9", "h9"};
	static const double apart[] = {1.9, 1.9, 1.3, 1.3}, agree[] = {1.6, 1.6, 1.6, 1.6};
	fx *f = *state;
	analysis a;
	const finding *g;

	hosts_case(f, "apart", cur, apart);
	hosts_case(f, "agree", cur, agree);
	judge(f, &a, names, 2);
	assert_null(found(&a, "apart"));
	assert_non_null(g = found(&a, "agree"));
	assert_true(g->host_p <= 0.05);
	analysis_release(&a);
}

/*
 * A Go capture with runtime.asyncPreempt under work.a at `pre` times its
 * usual 1,500 samples, and work.hot at `hot` times its 2,000.
 */
static void preempt_capture(fx *f, const char *service, const char *release, int64_t at, double pre,
			    double hot, const char *file)
{
	char path[600];
	FILE *out;

	snprintf(path, sizeof(path), "%s/p%d.folded", f->dir, ++f->seq);
	assert_non_null(out = fopen(path, "w"));
	fprintf(out, "main;serve;work.a %d\n", (int)(3000 * noise(f, 0.05)));
	fprintf(out, "main;serve;work.b %d\n", (int)(2500 * noise(f, 0.05)));
	fprintf(out, "main;serve;work.c %d\n", (int)(2000 * noise(f, 0.05)));
	fprintf(out, "main;serve;work.hot %d\n", (int)(2000 * hot * noise(f, 0.05)));
	if (file)
		fprintf(out, "main;serve;work.a;runtime.asyncPreempt (%s:27) %d\n", file,
			(int)(1500 * pre * noise(f, 0.05)));
	else
		fprintf(out, "main;serve;work.a;runtime.asyncPreempt %d\n",
			(int)(1500 * pre * noise(f, 0.05)));
	assert_int_equal(fclose(out), 0);
	ingest_capture(f, path, service, release, at, PROFILE_FMT_FOLDED);
}

/*
 * Go's preemption frame moves with the CPU the process gets, not with its
 * code: a release whose captures hold 1.8 times as much of it (a host
 * starved by its neighbours) is no finding, neither of the frame nor of
 * the functions its rise diluted, also where the frame's file changed
 * (amd64 hosts in the baseline, arm64 in the release: two functions of
 * one name). A real 1.5x slowdown of work.hot in such captures is still
 * found.
 */
static void test_go_preemption_frame_is_judged_by_no_one(void **state)
{
	static const char *const names[] = {"starved", "slower", "arm"};
	static const char *const amd = "/usr/local/go/src/runtime/preempt_amd64.s",
				 *const arm = "/usr/local/go/src/runtime/preempt_arm64.s";
	fx *f = *state;
	analysis a;
	size_t regressions = 0;

	for (int s = 0; s < 3; s++) {
		testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)",
			     names[s]);
		for (int day = 14; day >= 1; day--)
			for (int h = 9; h >= 3; h -= 6)
				preempt_capture(f, names[s], "v1", NIGHT_END - day * DAY - h * HOUR,
						1, 1, s == 2 ? amd : NULL);
		for (int k = 0; k < 4; k++)
			preempt_capture(f, names[s], "v3", NIGHT_END - (20 - 4 * k) * HOUR, 1.8,
					s == 1 ? 1.5 : 1, s == 2 ? arm : NULL);
	}
	judge(f, &a, names, 3);
	for (size_t i = 0; i < a.ntests; i++) {
		const finding *t = &a.tests[i];
		assert_string_not_equal(t->function, "runtime.asyncPreempt");
		if (strcmp(t->service, "slower") != 0 && t->significant)
			regressions++;
	}
	assert_int_equal(regressions, 0);
	assert_non_null(found(&a, "slower"));
	analysis_release(&a);
}

/*
 * A host keeps its offsets: function k costs 1 + 0.2 u(k, h) times the
 * usual on host h, u in [-1, 1) from a fixed hash; captures vary by 2%
 * around that. work.hot (k = 11) has the offsets of hot_off[h].
 */
static void offset_capture(fx *f, const char *service, const char *release, int64_t at,
			   int h, double hot)
{
	static const double hot_off[] = {0.8, 0.85, 0.9, 0.95, 1.0, 1.05, 1.2, 1.25};
	char path[600], name[8];
	FILE *out;

	snprintf(path, sizeof(path), "%s/o%d.folded", f->dir, ++f->seq);
	snprintf(name, sizeof(name), "h%d", h + 1);
	assert_non_null(out = fopen(path, "w"));
	for (int k = 0; k < 11; k++) {
		unsigned x = (unsigned)(k * 7919 + h * 104729) * 2654435761u;
		double u = (double)(x >> 16) / 32768.0 - 1;
		fprintf(out, "main;serve;fn%02d %d\n", k,
			(int)lround((20000 + 7000 * k) * (1 + 0.2 * u) * (1 + 0.02 * gauss(f))));
	}
	fprintf(out, "main;serve;work.hot %d\n",
		(int)lround(60000 * hot * hot_off[h] * (1 + 0.02 * gauss(f))));
	assert_int_equal(fclose(out), 0);
	f->host = name;
	ingest_capture(f, path, service, release, at, PROFILE_FMT_FOLDED);
	f->host = NULL;
}

/*
 * Traffic has a day: work.hot costs 1 + 0.3 sin(2 pi (h - 3) / 24) times
 * its usual at hour h, the most at 09:00. The baseline's 28 captures are
 * taken around the clock; the release's twelve all between 09:00 and
 * 10:00, where work.hot always runs 40% high. Against the whole
 * baseline that was a regression; against the baseline's captures
 * within three hours of nine it is none. A 1.6x slowdown judged at the
 * same hour is still found.
 */
static double hour_factor(int h)
{
	return 1 + 0.4 * sin(2 * 3.14159265358979323846 * (h - 3) / 24.0);
}

static void hours_case(fx *f, const char *name, double slower)
{
	testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)", name);
	for (int day = 14; day >= 1; day--)
		for (int k = 0; k < 2; k++) {
			int h = (day * 5 + k * 12) % 24;
			capture(f, name, "v1", NIGHT_END - day * DAY + h * HOUR, hour_factor(h), 1,
				0.03);
		}
	for (int k = 0; k < 12; k++)
		capture(f, name, "v3", NIGHT_END - DAY + 9 * HOUR + k * HOUR / 12,
			hour_factor(9) * slower, 1, 0.03);
}

/*
 * Two baseline captures near the judged hours are too few to judge by:
 * a baseline taken at 15:00 and 21:00 but for two captures at 08:00, and
 * a real 1.5x slowdown captured at 09:00, with no day in the traffic
 * and stacks that vary by 30%.
 * Held to those two (Welch's test of about one degree of freedom) it was
 * vetoed; it is found.
 */
static void test_two_near_captures_do_not_veto_a_slowdown(void **state)
{
	static const char *const names[] = {"twonear"};
	fx *f = *state;
	analysis a;

	testdb_execf(f->t, "insert into services (name, enabled) values ('twonear', true)");
	for (int day = 14; day >= 1; day--)
		for (int k = 0; k < 2; k++) {
			int h = day <= 1 ? 8 : k ? 21 : 15;
			capture(f, "twonear", "v1", NIGHT_END - day * DAY + h * HOUR + k * HOUR / 2,
				1, 1, 0.3);
		}
	for (int k = 0; k < 4; k++)
		capture(f, "twonear", "v3", NIGHT_END - DAY + 9 * HOUR + k * HOUR / 4, 1.5, 1, 0.3);
	judge(f, &a, names, 1);
	assert_non_null(found(&a, "twonear"));
	analysis_release(&a);
}

static void test_captures_of_one_hour_are_judged_against_the_baseline_s_same_hours(void **state)
{
	static const char *const names[] = {"nine", "nineslower"};
	fx *f = *state;
	analysis a;
	const finding *g;

	hours_case(f, "nine", 1);
	hours_case(f, "nineslower", 1.6);
	judge(f, &a, names, 2);
	assert_null(found(&a, "nine"));
	assert_non_null(g = found(&a, "nineslower"));
	assert_true(g->hours_p <= 0.05);
	analysis_release(&a);
}

/*
 * A release deployed in the morning and judged on captures at 09:00,
 * against a baseline captured only at 21:00 and 22:00, when work.hot
 * runs at 0.6 of its usual against 1.4 at nine (hour_factor): no code
 * changed, yet work.hot "rose" 2.3 times, critical. Nothing near nine in
 * the baseline can tell the hour from the release: the finding stays a
 * candidate, pages no one, and says why; the same rise at the baseline's
 * own hours is confirmed at once.
 */
static void test_a_critical_rise_at_unseen_hours_waits_for_a_second_look(void **state)
{
	static const char *const names[] = {"svc"};
	fx *f = *state;
	char st[32];
	analysis a;
	size_t said = 0;

	testdb_execf(f->t, "insert into services (name, enabled) values ('svc', true)");
	for (int day = 14; day >= 1; day--)
		for (int h = 21; h <= 22; h++)
			capture(f, "svc", "v1", NIGHT_END - day * DAY + h * HOUR, hour_factor(h), 1,
				0.03);
	for (int k = 0; k < 4; k++)
		capture(f, "svc", "v3", NIGHT_END - DAY + 9 * HOUR + k * HOUR / 4, hour_factor(9),
			1, 0.03);
	run_night(f, 1);
	assert_string_equal(state_of(f, "work.hot", st, sizeof(st)), "candidate");
	assert_int_equal(
		intf(f->t, "select count(*) from findings where function = 'work.hot'"
			   " and severity = 'critical' and (detail ->> 'hours_unseen')::boolean"),
		1);
	assert_int_equal(triggers(f, "work.hot"), 0);
	judge(f, &a, names, 1);
	for (size_t i = 0; i < a.nnotes; i++)
		said += strstr(a.notes[i], "svc/cpu: the judged captures were taken at hours") !=
			NULL;
	assert_int_equal(said, 1);
	analysis_release(&a);

	/*
	 * Captures at 06:00, 09:00, 12:00 and 15:00 span 9 hours, too many
	 * for the check of a few hours, yet each is far from the baseline's:
	 * the same.
	 */
	testdb_execf(f->t, "insert into services (name, enabled) values ('day', true)");
	for (int day = 14; day >= 1; day--)
		for (int h = 21; h <= 22; h++)
			capture(f, "day", "v1", NIGHT_END - day * DAY + h * HOUR, hour_factor(h), 1,
				0.03);
	for (int k = 0; k < 4; k++)
		capture(f, "day", "v3", NIGHT_END - DAY + (6 + 3 * k) * HOUR,
			hour_factor(6 + 3 * k), 1, 0.03);
	run_night(f, 1);
	assert_int_equal(intf(f->t, "select count(*) from findings x join services s"
				    " on s.id = x.service_id where s.name = 'day'"
				    " and x.function = 'work.hot' and x.severity = 'critical'"
				    " and x.state = 'candidate'"
				    " and (x.detail ->> 'hours_unseen')::boolean"),
			 1);
	assert_int_equal(triggers(f, "work.hot"), 0);

	/* The same rise captured at the baseline's hours: confirmed at once. */
	testdb_execf(f->t, "insert into services (name, enabled) values ('late', true)");
	for (int day = 14; day >= 1; day--)
		for (int h = 21; h <= 22; h++)
			capture(f, "late", "v1", NIGHT_END - day * DAY + h * HOUR, 1, 1, 0.03);
	for (int k = 0; k < 4; k++)
		capture(f, "late", "v3", NIGHT_END - DAY + 21 * HOUR + k * HOUR / 4, 2.3, 1, 0.03);
	run_night(f, 1);
	assert_int_equal(intf(f->t, "select count(*) from findings x join services s"
				    " on s.id = x.service_id where s.name = 'late'"
				    " and x.function = 'work.hot' and x.state = 'confirmed'"
				    " and not (x.detail ->> 'hours_unseen')::boolean"),
			 1);
}

/*
 * A day's traffic mix: every capture of one day sees it. work.hot's cost
 * moves from day to day by a factor exp(0.25 z) (z below, one a day),
 * shared by that day's two captures, which otherwise vary by 3%. The
 * judged night is a busy day like the baseline's busiest (1.5x, z 1.6),
 * all four captures in it: counted as four independent draws, that was
 * a regression; counted as one day, it is not. A 2.5x slowdown on an
 * ordinary day is still found. The week is off: days alone are judged.
 */
static void day_case(fx *f, const char *name, double night)
{
	static const double z[14] = {0.3, -1.1, 0.8, -0.4, 1.5, -0.9, 0.1,
				     -1.6, 1.2, -0.2, 0.6, -0.7, 1.9, -1.3};

	testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)", name);
	for (int day = 14; day >= 1; day--)
		for (int h = 14; h >= 8; h -= 6)
			capture(f, name, "v1", NIGHT_END - day * DAY - h * HOUR,
				exp(0.25 * z[day - 1]), 1, 0.03);
	for (int k = 0; k < 4; k++)
		capture(f, name, "v3", NIGHT_END - (16 - 2 * k) * HOUR, night, 1, 0.03);
}

static void test_a_day_s_traffic_mix_shared_by_a_night_is_not_a_regression(void **state)
{
	static const char *const names[] = {"busy", "slower"};
	fx *f = *state;
	analysis_opts o;
	analysis a;

	day_case(f, "busy", 1.5);
	day_case(f, "slower", 2.5);
	analysis_opts_default(&o);
	o.at_us = NIGHT_END;
	o.weekly = false;
	judge_opts(f, &a, names, 2, &o);
	assert_null(found(&a, "busy"));
	assert_non_null(found(&a, "slower"));
	analysis_release(&a);
}

/*
 * Captures of one host are not independent: the baseline's 24 captures
 * come from 8 hosts whose offsets spread every function by up to 20%,
 * and the new release's from the two hosts where work.hot runs 20%
 * and 25% above the usual. Nothing changed, but the new release's eight
 * captures, four on each of those hosts, sit about 20% above the
 * baseline's mean; counted as eight independent captures that was a
 * finding. Counted as two hosts, it is not. Eight captures, one on each
 * host, with a 1.3x rise are still found.
 */
static void test_captures_of_few_hosts_weigh_as_few_hosts(void **state)
{
	static const char *const names[] = {"two", "rise"};
	fx *f = *state;
	analysis a;

	for (int s = 0; s < 2; s++) {
		testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)",
			     names[s]);
		for (int i = 0; i < 24; i++)
			offset_capture(f, names[s], i < 12 ? "v1" : "v2",
				       NIGHT_END - 13 * DAY + i * 12 * HOUR, i % 8, 1);
	}
	for (int i = 0; i < 8; i++)
		offset_capture(f, "two", "v3", NIGHT_END - 20 * HOUR + i * 2 * HOUR, 6 + i % 2, 1);
	for (int i = 0; i < 8; i++)
		offset_capture(f, "rise", "v3", NIGHT_END - 20 * HOUR + i * 2 * HOUR, i, 1.3);
	judge(f, &a, names, 2);
	assert_null(found(&a, "two"));
	assert_non_null(found(&a, "rise"));
	analysis_release(&a);
}

/*
 * Folded `text` parsed, given `type`/`unit` (NULL: as parsed) and a
 * duration, ingested as pprof; its frames of code without symbols
 * ("[burn]", "burn+0x10a0") in the object `object` when given.
 */
static void ingest_as_pprof_in(fx *f, const char *text, size_t n, const char *type,
			       const char *unit, int64_t duration_ns, const char *service,
			       const char *release, int64_t at, const char *object)
{
	char path[600];
	profile *p = NULL;
	buf out = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	FILE *o;

	if (format_parse(&p, (const uint8_t *)text, n, PROFILE_FMT_FOLDED, "t", NULL, &err) < 0)
		fail_msg("%s", err.msg);
	if (type) {
		/* The folded column renamed: the parser set it, as each parser sets its own. */
		assert_int_equal(p->nvalue_types, 1);
		free(p->value_types[0].type);
		free(p->value_types[0].unit);
		assert_non_null(p->value_types[0].type = strdup(type));
		assert_non_null(p->value_types[0].unit = strdup(unit));
	}
	p->duration_ns = duration_ns;
	if (f->period > 0) {
		bool cpu = strcmp(f->period_type, "cpu") == 0;
		const char *unit = cpu ? "nanoseconds" : "count";
		if (strcmp(f->period_type, "space") == 0)
			unit = "bytes"; /* Go's heap and allocation sampling rate */
		p->period = f->period;
		assert_non_null(p->period_type.type = strdup(f->period_type));
		assert_non_null(p->period_type.unit = strdup(unit));
	}
	for (size_t i = 0; object && i < p->nfuncs; i++)
		if (p->funcs[i].name[0] == '[' || strstr(p->funcs[i].name, "+0x"))
			p->funcs[i].file = object; /* outlives the profile */
	if (export_pprof(&out, p, 0, &err) < 0)
		fail_msg("%s", err.msg);
	profile_free(p);
	snprintf(path, sizeof(path), "%s/p%d.pb.gz", f->dir, ++f->seq);
	assert_non_null(o = fopen(path, "wb"));
	assert_int_equal(fwrite(out.ptr, 1, out.len, o), out.len);
	assert_int_equal(fclose(o), 0);
	buf_release(&out);
	ingest_capture(f, path, service, release, at, PROFILE_FMT_PPROF);
}

static void ingest_as_pprof(fx *f, const char *text, size_t n, const char *type, const char *unit,
			    int64_t duration_ns, const char *service, const char *release,
			    int64_t at)
{
	ingest_as_pprof_in(f, text, n, type, unit, duration_ns, service, release, at, NULL);
}

/*
 * A capture of a service whose binary /srv/bin/burn has no symbols: its
 * cost `burn` (over 4 steady functions of 10,000) spread over the frames
 * `frames`, as pprof named them before ("burn+0x10a0") or now ("[burn]");
 * work.a `slow` times its cost.
 */
static void stripped_capture(fx *f, const char *service, const char *release, int64_t at,
			     const char *const *frames, size_t nframes, double burn, double slow)
{
	static const char *const names[] = {"work.a", "work.b", "work.c", "io.read"};
	static const int weights[] = {3000, 2500, 2000, 2500};
	size_t cap = 256 + 32 * nframes, n = 0;
	char *text = malloc(cap);

	assert_non_null(text);
	for (size_t i = 0; i < 4; i++)
		n += (size_t)snprintf(text + n, cap - n, "main;%s %d\n", names[i],
				      (int)(weights[i] * (i ? 1 : slow) * noise(f, 0.04)));
	for (size_t i = 0; i < nframes; i++)
		n += (size_t)snprintf(text + n, cap - n, "main;%s %d\n", frames[i],
				      (int)(burn / (double)nframes * noise(f, 0.04)));
	ingest_as_pprof_in(f, text, n, NULL, NULL, 10000000000LL, service, release, at,
			   "/srv/bin/burn");
	free(text);
}

/* 14 days of v1 and 4 captures of v3 of stripped_capture()'s service `name`. */
static void stripped_service(fx *f, const char *name, const char *const *v1, size_t n1,
			     const char *const *v3, size_t n3, double burn3, double slow3)
{
	testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)", name);
	for (int day = 14; day >= 1; day--)
		for (int h = 3; h <= 9; h += 6)
			stripped_capture(f, name, "v1", NIGHT_END - day * DAY - h * HOUR, v1, n1,
					 4000, 1);
	for (int k = 0; k < 4; k++)
		stripped_capture(f, name, "v3", NIGHT_END - (20 - 4 * k) * HOUR, v3, n3, burn3,
				 slow3);
}

/*
 * A capture of `svc`: 4 named functions of 10,000 samples (none when
 * `named` is false) and the folded lines `extra`, as pprof.
 */
static void lines_capture(fx *f, const char *svc, const char *rel, int64_t at, bool named,
			  const char *extra)
{
	static const char *const names[] = {"work.a", "work.b", "work.c", "io.read"};
	static const int weights[] = {3000, 2500, 2000, 2500};
	size_t cap = 256 + strlen(extra), n = 0;
	char *text = malloc(cap);

	assert_non_null(text);
	for (size_t i = 0; i < 4 && named; i++)
		n += (size_t)snprintf(text + n, cap - n, "main;%s %d\n", names[i],
				      (int)(weights[i] * noise(f, 0.04)));
	n += (size_t)snprintf(text + n, cap - n, "%s", extra);
	ingest_as_pprof(f, text, n, NULL, NULL, 10000000000LL, svc, rel, at);
	free(text);
}

/* Whether `a` has `function` of `service` as a significant regression. */
static bool regressed(const analysis *a, const char *service, const char *function)
{
	for (size_t i = 0; i < a->ntests; i++)
		if (a->tests[i].significant && a->tests[i].direction == FINDING_REGRESSION &&
		    strcmp(a->tests[i].service, service) == 0 &&
		    strcmp(a->tests[i].function, function) == 0)
			return true;
	return false;
}

/*
 * Symbols lost where no tested named function shows it go: a JIT release
 * without its perf map, whose 400 methods were each too small to test
 * (0.07%), all falling into the "[unknown]" the baseline had at 0.3%; and
 * a perf map agent broken on 2 hosts of 5, whose captures are all
 * "[unknown]" while the other hosts keep every name. Neither is judged
 * (each was a critical regression of "[unknown]"): one judged capture's
 * nameless share is far past twice the baseline's.
 */
static void test_symbols_lost_behind_small_or_few_captures_are_not_judged(void **state)
{
	static const char *const names[] = {"jit", "part"};
	static const char *const hosts[] = {"h1", "h2", "h3", "h4", "h5"};
	fx *f = *state;
	analysis a;
	char *jit = malloc(64 * 1024), one[64];
	size_t n = 0;

	assert_non_null(jit);
	for (int i = 0; i < 400; i++)
		n += (size_t)snprintf(jit + n, 64 * 1024 - n, "main;com.pay.M%d.run 10\n", i);
	snprintf(jit + n, 64 * 1024 - n, "main;[unknown] 40\n");
	testdb_execf(f->t, "insert into services (name, enabled) values ('jit', true), "
			   "('part', true)");
	for (int day = 14; day >= 1; day--)
		for (int h = 3; h <= 9; h += 6)
			lines_capture(f, "jit", "v1", NIGHT_END - day * DAY - h * HOUR, true, jit);
	for (int k = 0; k < 4; k++)
		lines_capture(f, "jit", "v3", NIGHT_END - (20 - 4 * k) * HOUR, true,
			      "main;[unknown] 4040\n");
	free(jit);
	for (int day = 14; day >= 1; day--)
		for (int h = 0; h < 5; h++) {
			f->host = hosts[h];
			lines_capture(f, "part", "v1", NIGHT_END - day * DAY - (3 + 2 * h) * HOUR,
				      true, "");
		}
	for (int k = 0; k < 10; k++) {
		f->host = hosts[k % 5];
		snprintf(one, sizeof(one), "main;[unknown] %d\n", (int)(10000 * noise(f, 0.04)));
		lines_capture(f, "part", "v3", NIGHT_END - (20 - 2 * k) * HOUR, k % 5 < 3,
			      k % 5 < 3 ? "" : one);
	}
	f->host = NULL;
	judge(f, &a, names, 2);
	assert_false(regressed(&a, "jit", "[unknown]"));
	assert_false(regressed(&a, "part", "[unknown]"));
	assert_int_equal(a.nskipped, 2);
	for (size_t i = 0; i < 2; i++)
		assert_non_null(strstr(a.skipped[i].reason, "lost its symbols"));
	analysis_release(&a);
}

/*
 * Code without symbols is one function per object, "[burn]", whatever
 * addresses its samples hit: 1.4 times its cost is a regression of it.
 * Captures stored before were named by address, and a rebuild moved every
 * address: a regression from nothing in each new one. While a window
 * holds an object's address names, the object is not judged under either
 * name, and the rest of the service is: work.a twice as costly is found.
 * That holds when the addresses are each too small to test (400 of them,
 * 0.07% each), which are left out before their names are read: their
 * object rose from nothing (a critical page) and the nameless share moved
 * by 22 points (the whole service skipped as one that lost its symbols).
 * And twice the cost of "[burn]", its share 29% -> 44%, is a regression
 * of it: the nameless share rose in a frame the baseline had, with no
 * named function gone, which is no build that lost its symbols.
 */
static void test_a_stripped_binary_is_one_function_whatever_its_addresses(void **state)
{
	static const char *const names[] = {"rebuilt", "slower", "renamed",
					    "small",   "twice",  "bare"};
	static const char *const v1[] = {"burn+0x10a0", "burn+0x10c4", "burn+0x1112"};
	static const char *const v3[] = {"burn+0x11b0", "burn+0x11d8", "burn+0x1230",
					 "burn+0x1254"};
	static const char *const now[] = {"[burn]"};
	static char many_buf[400][24];
	const char *many[400];
	fx *f = *state;
	analysis a;

	char *bare = malloc(400 * 24);
	size_t nbare = 0;

	assert_non_null(bare);
	for (size_t i = 0; i < 400; i++) {
		snprintf(many_buf[i], sizeof(many_buf[i]), "burn+0x%zx", 0x1000 + 8 * i);
		many[i] = many_buf[i];
		nbare += (size_t)snprintf(bare + nbare, 400 * 24 - nbare, "main;0x%zx 2\n",
					  0x401000 + 16 * i);
	}
	stripped_service(f, "rebuilt", v1, 3, v3, 4, 4000, 1);
	testdb_execf(f->t, "insert into services (name, enabled) values ('slower', true)");
	for (int day = 14; day >= 1; day--)
		for (int h = 3; h <= 9; h += 6)
			stripped_capture(f, "slower", "v1", NIGHT_END - day * DAY - h * HOUR, now,
					 1, 4000, 1);
	for (int k = 0; k < 4; k++)
		stripped_capture(f, "slower", "v3", NIGHT_END - (20 - 4 * k) * HOUR, now, 1, 5600,
				 1);
	stripped_service(f, "renamed", v1, 3, now, 1, 4000, 2);
	stripped_service(f, "small", many, 400, now, 1, 4000, 2);
	stripped_service(f, "twice", now, 1, now, 1, 8000, 1);
	/* A location in no object: 400 bare addresses before, "[unknown]" now. */
	testdb_execf(f->t, "insert into services (name, enabled) values ('bare', true)");
	for (int day = 14; day >= 1; day--)
		for (int h = 3; h <= 9; h += 6)
			lines_capture(f, "bare", "v1", NIGHT_END - day * DAY - h * HOUR, true,
				      bare);
	for (int k = 0; k < 4; k++)
		lines_capture(f, "bare", "v3", NIGHT_END - (20 - 4 * k) * HOUR, true,
			      "main;[unknown] 800\n");
	free(bare);
	judge(f, &a, names, 6);
	assert_false(regressed(&a, "bare", "[unknown]"));
	assert_int_equal(a.nskipped, 0);
	/* "[burn]" of "twice": 8,000 of 18,000 samples, what a verdict could not see into. */
	assert_true(a.nameless > 0.40 && a.nameless < 0.49);
	for (size_t i = 0; i < a.ntests; i++) {
		const finding *t = &a.tests[i];
		bool want =
			((strcmp(t->service, "slower") == 0 || strcmp(t->service, "twice") == 0) &&
			 strcmp(t->function, "[burn]") == 0) ||
			(strcmp(t->service, "renamed") == 0 &&
			 strcmp(t->function, "work.a") == 0) ||
			(strcmp(t->service, "small") == 0 && strcmp(t->function, "work.a") == 0);
		if (!t->significant || t->direction != FINDING_REGRESSION ||
		    strcmp(t->kind, FINDING_KIND_COST) == 0)
			continue;
		if (!want)
			fail_msg("%s: %s %.4f -> %.4f", t->service, t->function, t->baseline_share,
				 t->current_share);
	}
	for (size_t s = 1; s < 5; s++) {
		const char *fn = s == 1 || s == 4 ? "[burn]" : "work.a";
		bool seen = false;
		for (size_t i = 0; i < a.ntests; i++)
			seen |= a.tests[i].significant &&
				strcmp(a.tests[i].service, names[s]) == 0 &&
				a.tests[i].direction == FINDING_REGRESSION &&
				strcmp(a.tests[i].function, fn) == 0;
		if (!seen)
			fail_msg("%s: no regression of %s", names[s], fn);
	}
	analysis_release(&a);
}

/*
 * A pprof capture of 10 seconds whose every stack costs `cost` times the
 * usual: shares do not move at all, the cost per second does.
 */
static void pprof_capture(fx *f, const char *service, const char *release, int64_t at,
			  double cost)
{
	static const char *const names[] = {"work.a", "work.b", "work.c", "work.d", "io.read"};
	static const int weights[] = {3000, 2500, 2000, 1500, 1000};
	char text[1024];
	size_t n = 0;

	for (size_t i = 0; i < sizeof(weights) / sizeof(weights[0]); i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "main;%s %d\n", names[i],
				      (int)(weights[i] * cost * noise(f, 0.04)));
	ingest_as_pprof(f, text, n, NULL, NULL, 10000000000LL, service, release, at);
}

static void cost_case(fx *f, const char *name, double cost)
{
	testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)", name);
	for (int day = 14; day >= 1; day--) {
		pprof_capture(f, name, "v1", NIGHT_END - day * DAY - 9 * HOUR, 1);
		pprof_capture(f, name, "v1", NIGHT_END - day * DAY - 3 * HOUR, 1);
	}
	for (int k = 0; k < 4; k++)
		pprof_capture(f, name, "v3", NIGHT_END - (20 - 4 * k) * HOUR, cost);
}

/*
 * Every function twice as expensive: no share moves, so only the
 * whole-service cost (CPU per second of capture) can see it. It is found
 * as a finding of its own kind; the same service without the change
 * raises nothing.
 */
static void test_a_service_slower_everywhere_is_a_cost_finding(void **state)
{
	static const char *const names[] = {"reg", "null"};
	fx *f = *state;
	analysis a;
	const finding *cost = NULL;
	size_t share = 0, null_cost = 0;

	cost_case(f, "reg", 2);
	cost_case(f, "null", 1);
	judge(f, &a, names, 2);
	for (size_t i = 0; i < a.ntests && a.tests[i].significant; i++) {
		const finding *t = &a.tests[i];
		if (t->direction != FINDING_REGRESSION)
			continue;
		if (strcmp(t->kind, FINDING_KIND_COST) != 0)
			share++;
		else if (strcmp(t->service, "reg") == 0)
			cost = t;
		else
			null_cost++;
	}
	assert_non_null(cost);
	assert_string_equal(cost->function, FINDING_WHOLE_SERVICE);
	assert_true(cost->current_share / cost->baseline_share > 1.8);
	/* Per second of capture, not per unit of load: reported, never gating. */
	assert_string_not_equal(cost->cost_unit, "per_load");
	assert_int_equal(cost->severity, STATS_SEV_LOW);
	assert_int_equal(share, 0);
	assert_int_equal(null_cost, 0);
	analysis_release(&a);
}

/*
 * An allocation profile (alloc_space, bytes) of 60 stacks, whose every
 * stack allocates `scale` times the usual, over `duration_s` seconds (0:
 * none known, as Go's /debug/pprof/allocs, which counts since the
 * process started). Its records are its samples: 60 make the total sure
 * to a tenth.
 */
static void alloc_capture(fx *f, const char *service, const char *release, int64_t at,
			  double scale, int duration_s)
{
	char text[4096];
	size_t n = 0;

	for (int i = 0; i < 60; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "main;alloc.f%d %d\n", i,
				      (int)((1000 + 100 * i) * scale * noise(f, 0.04)));
	ingest_as_pprof(f, text, n, "alloc_space", "bytes", (int64_t)duration_s * 1000000000LL,
			service, release, at);
}

/* 14 days of two allocation captures of `base_s` seconds, then 4 of `cur_s` at `scale`. */
static void alloc_case(fx *f, const char *name, int base_s, int cur_s, double scale)
{
	testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)", name);
	for (int day = 14; day >= 1; day--) {
		alloc_capture(f, name, "v1", NIGHT_END - day * DAY - 9 * HOUR, 1, base_s);
		alloc_capture(f, name, "v1", NIGHT_END - day * DAY - 3 * HOUR, 1, base_s);
	}
	for (int k = 0; k < 4; k++)
		alloc_capture(f, name, "v3", NIGHT_END - (20 - 4 * k) * HOUR, scale, cur_s);
}

static const finding *cost_finding(const analysis *a, const char *service);

/*
 * An allocation profile counts over a span: since its process started
 * when it has no duration (the new release's captures taken longer after
 * a restart hold four times the bytes), or over its window (a 30-second
 * window holds three times a 10-second one's). Neither is a whole-service
 * regression; bytes allocated per second that doubled is one, in bytes
 * per second.
 */
static void test_allocated_bytes_are_a_cost_only_per_second_of_a_known_span(void **state)
{
	static const char *const names[] = {"uptime", "window", "rate"};
	fx *f = *state;
	analysis a, b;
	const finding *rate;
	json_t *part = NULL;
	pr_error err = PR_ERROR_INIT;
	finding got;
	findings_meta meta;
	int64_t old, id;

	f->type = "alloc";
	alloc_case(f, "uptime", 0, 0, 4);
	alloc_case(f, "window", 10, 30, 3);
	alloc_case(f, "rate", 10, 10, 2);
	judge(f, &a, names, 3);
	assert_null(cost_finding(&a, "uptime"));
	assert_null(cost_finding(&a, "window"));
	assert_non_null(rate = cost_finding(&a, "rate"));
	assert_string_equal(rate->cost_unit, "bytes_per_s");
	assert_true(rate->current_share / rate->baseline_share > 1.8);
	/* The unit travels in a worker's part... */
	assert_int_equal(analysis_part_json(&part, &a), 0);
	analysis_init(&b, &a.opts);
	if (analysis_part_merge(&b, part, &err) < 0 || analysis_finish(&b, &err) < 0)
		fail_msg("merge: %s", err.msg);
	assert_non_null(rate = cost_finding(&b, "rate"));
	assert_string_equal(rate->cost_unit, "bytes_per_s");
	json_decref(part);
	analysis_release(&b);
	analysis_release(&a);
	/*
	 * ...and through the database. An earlier version's finding of an
	 * allocation profile's bytes, a unit no test has now, is closed as
	 * gone, not left open for good.
	 */
	old = intf(f->t, "insert into findings (service_id, profile_type, kind, direction, "
			 "current_release, detail) select id, 'alloc', 'cost', 'regression', 'v3', "
			 "'{\"cost_unit\": \"bytes\"}' from services where name = 'uptime' "
			 "returning id");
	analyze_all(f, NIGHT_END);
	f->type = NULL;
	id = intf(f->t, "select f.id from findings f join services s on s.id = f.service_id "
			"where s.name = 'rate' and f.kind = 'cost'");
	assert_int_equal(findings_get(&got, &meta, f->t->db, id, &err), 0);
	assert_string_equal(got.cost_unit, "bytes_per_s");
	finding_clear(&got);
	assert_int_equal(intf(f->t, "select count(*) from findings where id = %lld and "
				    "state = 'went_away' and status = 'resolved'", (long long)old),
			 1);
}

/*
 * A run with a whole-service cost finding (low: no load figure) and a
 * critical share regression lists the critical one first: a cost's score
 * (a relative change of 100%) outranked the share's, and the low row
 * headed the gate's summary above the critical one.
 */
static void test_a_critical_regression_is_ranked_above_a_low_cost_finding(void **state)
{
	static const char *const names[] = {"cost", "hot"};
	fx *f = *state;
	analysis a;
	size_t crit = SIZE_MAX, low = SIZE_MAX;

	cost_case(f, "cost", 2);
	margin_case(f, "hot", 3, 0.02, 1);
	judge(f, &a, names, 2);
	for (size_t i = 0; i < a.ntests && a.tests[i].significant; i++) {
		const finding *t = &a.tests[i];
		if (t->direction != FINDING_REGRESSION)
			continue;
		if (crit == SIZE_MAX && t->severity == STATS_SEV_CRITICAL)
			crit = i;
		if (low == SIZE_MAX && strcmp(t->kind, FINDING_KIND_COST) == 0)
			low = i;
	}
	assert_true(crit != SIZE_MAX && low != SIZE_MAX);
	assert_int_equal(a.tests[low].severity, STATS_SEV_LOW);
	assert_true(a.tests[low].score > a.tests[crit].score);
	assert_true(crit < low);
	analysis_release(&a);
}

/* 28 baseline captures taken in turn on h1 to h4; v3 on cur[0..3] at cost[0..3]. */
static void cost_hosts_case(fx *f, const char *name, const char *const cur[4],
			    const double cost[4])
{
	static const char *const hosts[] = {"h1", "h2", "h3", "h4"};

	testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)", name);
	for (int i = 0; i < 28; i++) {
		f->host = hosts[i % 4];
		pprof_capture(f, name, "v1", NIGHT_END - 14 * DAY + i * 12 * HOUR, 1);
	}
	for (int k = 0; k < 4; k++) {
		f->host = cur[k];
		pprof_capture(f, name, "v3", NIGHT_END - (20 - 4 * k) * HOUR, cost[k]);
	}
	f->host = NULL;
}

static const finding *cost_finding(const analysis *a, const char *service)
{
	for (size_t i = 0; i < a->ntests; i++) {
		const finding *t = &a->tests[i];
		if (t->significant && t->direction == FINDING_REGRESSION &&
		    strcmp(t->kind, FINDING_KIND_COST) == 0 && strcmp(t->service, service) == 0)
			return t;
	}
	return NULL;
}

/* The whole-service cost test of `service`, significant or not; NULL when none ran. */
static const finding *cost_test_of(const analysis *a, const char *service)
{
	for (size_t i = 0; i < a->ntests; i++)
		if (strcmp(a->tests[i].kind, FINDING_KIND_COST) == 0 &&
		    strcmp(a->tests[i].service, service) == 0)
			return &a->tests[i];
	return NULL;
}

/*
 * A heap profile (inuse_space) of 60 stacks holding `scale` times the
 * usual bytes, tagged with `load` (NULL: untagged), over 10 seconds as Go
 * writes one.
 */
static void heap_capture(fx *f, const char *service, const char *release, int64_t at, double scale,
			 const char *load)
{
	char text[4096], tags[64];
	size_t n = 0;

	for (int i = 0; i < 60; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "main;keep.f%d %d\n", i,
				      (int)((100000 + 1000 * i) * scale * noise(f, 0.04)));
	snprintf(tags, sizeof(tags), "{\"load\": \"%s\"}", load ? load : "");
	f->tags = load ? tags : NULL;
	ingest_as_pprof(f, text, n, "inuse_space", "bytes", 10000000000LL, service, release, at);
	f->tags = NULL;
}

/*
 * 28 baseline captures of a service at `base_period` of `period_type`,
 * then 4 at `cur_period` whose every stack holds `cur_samples` times the
 * baseline's samples: count-only pprof captures of 10 seconds.
 */
static void period_case(fx *f, const char *name, const char *period_type, int64_t base_period,
			int64_t cur_period, double cur_samples)
{
	testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)", name);
	f->period_type = period_type;
	f->period = base_period;
	for (int day = 14; day >= 1; day--) {
		pprof_capture(f, name, "v1", NIGHT_END - day * DAY - 9 * HOUR, 1);
		pprof_capture(f, name, "v1", NIGHT_END - day * DAY - 3 * HOUR, 1);
	}
	f->period = cur_period;
	for (int k = 0; k < 4; k++)
		pprof_capture(f, name, "v3", NIGHT_END - (20 - 4 * k) * HOUR, cur_samples);
	f->period = 0;
}

/*
 * Google's Node profiler writes wall time in microseconds: 1,304,000 of
 * them over 2.03 s are 0.642 wall seconds a second, not 642,364 values
 * a second.
 */
static void test_wall_microseconds_are_wall_seconds_per_second(void **state)
{
	capture_ref c = {.total = 1304000,
			 .sample_count = 1304,
			 .duration_ns = 2030000000,
			 .unit = "microseconds"};

	(void)state;
	assert_true(fabs(analysis_capture_cost(&c, "wall", "wall_s_per_s") - 0.642365) < 1e-5);
	memcpy(c.unit, "milliseconds", sizeof("milliseconds"));
	c.total = 1304;
	assert_true(fabs(analysis_capture_cost(&c, "wall", "wall_s_per_s") - 0.642365) < 1e-5);
}

/*
 * A profiler's rate raised from 100 to 500 Hz: five times the samples for
 * the same CPU. Samples each standing for a period of CPU time are CPU
 * seconds per second, the same before and after: no finding (counted
 * per second, +400%). Samples of a period that is not CPU time cannot be
 * converted: no cost test, and the run says why.
 */
static void test_a_sampling_rate_change_is_no_cost_change(void **state)
{
	static const char *const names[] = {"rate", "events"};
	fx *f = *state;
	analysis a;
	const finding *t;
	bool said = false;

	period_case(f, "rate", "cpu", 10000000, 2000000, 5);
	period_case(f, "events", "events", 1000, 200, 5);
	judge(f, &a, names, 2);
	assert_non_null(t = cost_test_of(&a, "rate"));
	assert_string_equal(t->cost_unit, "cpu_s_per_s");
	assert_true(t->current_share / t->baseline_share < 1.1);
	assert_null(cost_finding(&a, "rate"));
	assert_null(cost_test_of(&a, "events"));
	for (size_t i = 0; i < a.nskipped; i++)
		said |= strcmp(a.skipped[i].service, "events") == 0 &&
			strstr(a.skipped[i].reason, "whole-service cost not tested") &&
			strstr(a.skipped[i].reason, "a period of 1000 events count");
	assert_true(said);
	analysis_release(&a);
}

/*
 * Captures that name no sampling period (samples a second: JFR captures
 * stored before the parser read the sampler's period) in a baseline whose
 * later captures, and the release's, name a CPU period: the test runs on
 * the baseline captures measured as the release's are, the others left
 * out. It refused the whole test ("capture 1 measures value_per_s, capture
 * 40 cpu_s_per_s"), and every such gate was inconclusive for a window.
 * With too few of them left, it says why, naming both measures.
 */
static void test_baseline_captures_of_another_measure_are_left_out(void **state)
{
	static const char *const names[] = {"mixed", "fewer"};
	fx *f = *state;
	analysis a;
	const finding *t;
	bool said = false;

	for (size_t s = 0; s < 2; s++) {
		testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)",
			     names[s]);
		f->period_type = "cpu";
		for (int day = 14; day >= 1; day--) {
			/* "mixed": 6 days without a period; "fewer": 2 captures with one. */
			f->period = day > (s == 0 ? 8 : 1) ? 0 : 10000000;
			pprof_capture(f, names[s], "v1", NIGHT_END - day * DAY - 9 * HOUR, 1);
			pprof_capture(f, names[s], "v1", NIGHT_END - day * DAY - 3 * HOUR, 1);
		}
		f->period = 10000000;
		for (int k = 0; k < 4; k++)
			pprof_capture(f, names[s], "v3", NIGHT_END - (20 - 4 * k) * HOUR, 1);
		f->period = 0;
	}
	judge(f, &a, names, 2);
	assert_non_null(t = cost_test_of(&a, "mixed"));
	assert_string_equal(t->cost_unit, "cpu_s_per_s");
	assert_int_equal(t->baseline_captures, 16);
	assert_null(cost_finding(&a, "mixed"));
	assert_null(cost_test_of(&a, "fewer"));
	for (size_t i = 0; i < a.nskipped; i++) {
		assert_string_not_equal(a.skipped[i].service, "mixed");
		said |= strcmp(a.skipped[i].service, "fewer") == 0 &&
			strstr(a.skipped[i].reason, "measures value_per_s") &&
			strstr(a.skipped[i].reason, "2 of 28 baseline captures measure as the "
						    "judged ones do");
	}
	assert_true(said);
	analysis_release(&a);
}

/*
 * cost_case's captures with a load figure of `load`, then, of the
 * baseline's captures, the first `no_duration` without a duration.
 */
static void load_cost_case(fx *f, const char *name, double cost, const char *load, int no_duration)
{
	char tags[64];

	snprintf(tags, sizeof(tags), "{\"load\": \"%s\"}", load);
	f->tags = tags;
	cost_case(f, name, cost);
	f->tags = NULL;
	testdb_execf(f->t,
		     "update profiles set duration_ns = null where id in (select p.id from "
		     "profiles p join services s on s.id = p.service_id where s.name = '%s' "
		     "and p.release = 'v1' order by p.captured_at limit %d)",
		     name, no_duration);
}

/*
 * One baseline capture without a duration, or a load figure written
 * "1e2", switched the whole-service cost test off, or down to per
 * second: a service twice as costly passed with no finding. The capture
 * is left out and the figure read as a number; with too few captures
 * left the run says the cost was not tested, and why.
 */
static void test_a_capture_without_a_duration_leaves_the_cost_tested(void **state)
{
	static const char *const names[] = {"one", "most"};
	fx *f = *state;
	analysis a;
	const finding *t;
	bool said = false;

	load_cost_case(f, "one", 2, "1e2", 1);
	load_cost_case(f, "most", 2, "100", 24);
	judge(f, &a, names, 2);
	assert_non_null(t = cost_finding(&a, "one"));
	/* Its unit kept: samples per second (these captures have no period) per unit of load. */
	assert_string_equal(t->cost_unit, "per_load:value_per_s");
	assert_int_equal(t->baseline_captures, 27);
	assert_true(t->severity > STATS_SEV_LOW);
	assert_null(cost_test_of(&a, "most"));
	for (size_t i = 0; i < a.nskipped; i++)
		said |= strcmp(a.skipped[i].service, "most") == 0 &&
			strstr(a.skipped[i].reason, "whole-service cost not tested: capture ") &&
			strstr(a.skipped[i].reason, " has no duration, and 4 of 28 baseline");
	assert_true(said);
	analysis_release(&a);
}

/*
 * A pprof capture (pprof_capture) of `cost` times the usual, tagged with
 * a load figure of `load` ("" none).
 */
static void load_capture(fx *f, const char *name, const char *release, int64_t at, const char *load,
			 double cost)
{
	char tags[64];

	snprintf(tags, sizeof(tags), "{\"load\": \"%s\"}", load);
	f->tags = *load ? tags : NULL;
	pprof_capture(f, name, release, at, cost);
	f->tags = NULL;
}

static bool skipped_for(const analysis *a, const char *service, const char *what)
{
	for (size_t i = 0; i < a->nskipped; i++)
		if (strcmp(a->skipped[i].service, service) == 0 &&
		    strstr(a->skipped[i].reason, what))
			return true;
	return false;
}

/*
 * A release whose captures lost their load figure (untagged, or tagged
 * load=0) against a baseline that has them was tested per second only,
 * capped at low: a service twice as costly passed the gate. The run now
 * says the cost per unit of load was not tested, so a gate is
 * inconclusive; the finding per second is still shown.
 */
static void test_a_release_that_lost_its_load_figure_is_not_judged_per_second_alone(void **state)
{
	static const char *const names[] = {"zero", "untagged"};
	fx *f = *state;
	analysis a;
	const finding *t;

	testdb_execf(f->t, "insert into services (name, enabled) values ('zero', true), "
			   "('untagged', true)");
	for (int day = 14; day >= 1; day--)
		for (int j = 0; j < 2; j++) {
			int64_t at = NIGHT_END - day * DAY - (9 - 6 * j) * HOUR;
			load_capture(f, "zero", "v1", at, "100", 1);
			load_capture(f, "untagged", "v1", at, "100", 1);
		}
	for (int k = 0; k < 4; k++) {
		load_capture(f, "zero", "v3", NIGHT_END - (20 - 4 * k) * HOUR, "0", 2);
		load_capture(f, "untagged", "v3", NIGHT_END - (20 - 4 * k) * HOUR, "", 2);
	}
	judge(f, &a, names, 2);
	for (size_t i = 0; i < 2; i++) {
		assert_true(skipped_for(&a, names[i],
					"cost per unit of load not tested: 0 of 4 judged captures "
					"have a load figure (none, or load=0), 28 of 28 baseline"));
		assert_non_null(t = cost_finding(&a, names[i]));
		assert_string_equal(t->cost_unit, "value_per_s");
		assert_int_equal(t->severity, STATS_SEV_LOW);
	}
	analysis_release(&a);
}

/*
 * 28 baseline captures whose load figures run from base_lo to base_hi,
 * then 4 judged captures at `load`, each costing `overhead` plus its load
 * times `per_load` (in pprof_capture's units), times `slower` for the
 * judged ones; `bad` of the baseline's load figures (from the sixth on,
 * every twelfth) are written 60 times too large (requests per minute).
 */
static void overhead_case(fx *f, const char *name, double base_lo, double base_hi, double load,
			  double overhead, double per_load, double slower, int bad)
{
	char text[32];

	testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)", name);
	for (int i = 0; i < 28; i++) {
		double l = base_lo + (base_hi - base_lo) * (double)((i * 11) % 28) / 27;
		snprintf(text, sizeof(text), "%.3f", i % 12 == 5 && i / 12 < bad ? l * 60 : l);
		load_capture(f, name, "v1", NIGHT_END - 14 * DAY + i * 12 * HOUR, text,
			     overhead + per_load * l);
	}
	snprintf(text, sizeof(text), "%.3f", load);
	for (int k = 0; k < 4; k++)
		load_capture(f, name, "v3", NIGHT_END - (20 - 4 * k) * HOUR, text,
			     slower * (overhead + per_load * load));
}

static bool said_of(char *const *lines, size_t n, const char *service, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (strncmp(lines[i], service, strlen(service)) == 0 && strstr(lines[i], what))
			return true;
	return false;
}

/*
 * A fixed overhead (a fifth of the cost at the baseline's load) makes a
 * quieter night costlier per request: at half the load, divided by load
 * as if cost were proportional to it, an unchanged release read +25% and
 * paged critical. Where the baseline's loads vary enough, cost is read
 * along the baseline's own slope: no finding, nor for cost proportional
 * to load at twice or half the traffic, while a release twice as slow at
 * the same load is still critical. Where the baseline's loads are all
 * alike, a night at half the load is at most low, and the run says why.
 */
static void test_a_quieter_night_with_a_fixed_overhead_is_no_regression(void **state)
{
	static const char *const names[] = {"half",     "seventy", "double",
					    "halfprop", "slower",  "flat"};
	fx *f = *state;
	analysis a;
	const finding *t;

	overhead_case(f, "half", 150, 250, 100, 0.2, 0.004, 1, 0);
	overhead_case(f, "seventy", 150, 250, 140, 0.2, 0.004, 1, 0);
	overhead_case(f, "double", 150, 250, 400, 0, 0.005, 1, 0);
	overhead_case(f, "halfprop", 150, 250, 100, 0, 0.005, 1, 0);
	overhead_case(f, "slower", 150, 250, 200, 0.2, 0.004, 2, 0);
	overhead_case(f, "flat", 200, 200, 100, 0.2, 0.004, 1, 0);
	judge(f, &a, names, 6);
	for (size_t i = 0; i < 4; i++) {
		assert_non_null(t = cost_test_of(&a, names[i]));
		assert_string_equal(t->cost_unit, "per_load:value_per_s");
		assert_null(cost_finding(&a, names[i]));
	}
	assert_non_null(t = cost_finding(&a, "slower"));
	assert_string_equal(t->cost_unit, "per_load:value_per_s");
	assert_int_equal(t->severity, STATS_SEV_CRITICAL);
	if ((t = cost_finding(&a, "flat")))
		assert_true(t->severity <= STATS_SEV_LOW);
	assert_true(
		said_of(a.notes, a.nnotes, "flat/cpu: ",
			"the judged load (100) lies outside what the baseline saw (200 to 200)"));
	analysis_release(&a);
}

/*
 * Two baseline captures whose load was written in requests per minute
 * (60 times the rest) widened the baseline's spread of cost per unit of
 * load until a release twice as costly raised nothing; fitted, they
 * would flatten the baseline's slope of cost on load until twice the
 * traffic read as a regression. Captures far from the rest are left
 * out, and the run says how many.
 */
static void test_a_load_figure_in_another_unit_does_not_hide_a_regression(void **state)
{
	static const char *const names[] = {"rpm", "busy"};
	fx *f = *state;
	analysis a;
	const finding *t;

	overhead_case(f, "rpm", 150, 250, 200, 0, 0.005, 2, 2);
	overhead_case(f, "busy", 150, 250, 400, 0, 0.005, 1, 2);
	judge(f, &a, names, 2);
	assert_non_null(t = cost_finding(&a, "rpm"));
	assert_string_equal(t->cost_unit, "per_load:value_per_s");
	/* The window's baseline less the two. */
	assert_true(t->baseline_captures >= 24 && t->baseline_captures <= 26);
	assert_true(t->severity > STATS_SEV_LOW);
	assert_true(said_of(a.notes, a.nnotes, "rpm/cpu: ",
			    "2 baseline captures left out of the cost per unit of load"));
	assert_null(cost_finding(&a, "busy"));
	analysis_release(&a);
}

/*
 * pprof captures that name a CPU sampling period but carry no duration
 * cannot be tested for their whole cost, and a gate passed a service
 * twice as costly without a word: the run notes it. Folded captures
 * never carry a duration: nothing is said of them.
 */
static void test_captures_that_could_carry_a_duration_and_do_not_are_noted(void **state)
{
	static const char *const names[] = {"nodur", "folded"};
	fx *f = *state;
	analysis a;

	period_case(f, "nodur", "cpu", 10000000, 10000000, 2);
	testdb_execf(f->t, "update profiles set duration_ns = null where service_id = "
			   "(select id from services where name = 'nodur')");
	history(f, "folded");
	for (int k = 0; k < 4; k++)
		capture(f, "folded", "v3", NIGHT_END - (20 - 4 * k) * HOUR, 1, 1, 0.05);
	judge(f, &a, names, 2);
	assert_null(cost_test_of(&a, "nodur"));
	assert_true(said_of(a.notes, a.nnotes, "nodur/cpu: ",
			    "whole-service cost not tested: no capture carries a duration"));
	assert_false(said_of(a.notes, a.nnotes, "folded/cpu: ", "whole-service cost"));
	assert_false(skipped_for(&a, "folded", "whole-service cost"));
	analysis_release(&a);
}

/*
 * A wall profile's nanoseconds are wall time, waiting included: its
 * whole-service cost is wall seconds per second, not CPU seconds, which
 * is how it was labelled.
 */
static void test_a_wall_profile_costs_wall_seconds(void **state)
{
	static const char *const names[] = {"wall"};
	fx *f = *state;
	analysis a;
	const finding *t;
	char text[128];

	f->type = "wall";
	testdb_execf(f->t, "insert into services (name, enabled) values ('wall', true)");
	for (int i = 0; i < 32; i++) {
		int n = snprintf(text, sizeof(text), "main;work.a %lld\nmain;io.wait %lld\n",
				 (long long)(3e9 * noise(f, 0.04)),
				 (long long)(9e9 * noise(f, 0.04)));
		ingest_as_pprof(f, text, (size_t)n, "wall", "nanoseconds", 10000000000LL, "wall",
				i < 28 ? "v1" : "v3",
				i < 28 ? NIGHT_END - 14 * DAY + i * 12 * HOUR
				       : NIGHT_END - (20 - 4 * (i - 28)) * HOUR);
	}
	judge(f, &a, names, 1);
	f->type = NULL;
	assert_non_null(t = cost_test_of(&a, "wall"));
	assert_string_equal(t->cost_unit, "wall_s_per_s");
	analysis_release(&a);
}

/*
 * Heap bytes in use are a level, not a flow: the same retained heap at
 * half the request rate (a quiet night) is no regression. Divided by
 * load, it read as twice the bytes per unit of load, a critical
 * regression; it is tested as bytes in use.
 */
static void test_heap_in_use_at_half_the_load_is_no_regression(void **state)
{
	static const char *const names[] = {"quiet"};
	fx *f = *state;
	analysis a;
	const finding *t;
	long long old;

	f->type = "heap";
	testdb_execf(f->t, "insert into services (name, enabled) values ('quiet', true)");
	for (int day = 14; day >= 1; day--) {
		heap_capture(f, "quiet", "v1", NIGHT_END - day * DAY - 9 * HOUR, 1, "100");
		heap_capture(f, "quiet", "v1", NIGHT_END - day * DAY - 3 * HOUR, 1, "100");
	}
	for (int k = 0; k < 4; k++)
		heap_capture(f, "quiet", "v3", NIGHT_END - (20 - 4 * k) * HOUR, 1, "50");
	judge(f, &a, names, 1);
	f->type = NULL;
	assert_non_null(t = cost_test_of(&a, "quiet"));
	assert_string_equal(t->cost_unit, "bytes");
	assert_true(t->current_share / t->baseline_share < 1.1);
	assert_null(cost_finding(&a, "quiet"));
	analysis_release(&a);
	/*
	 * An earlier version's heap finding per unit of load, a unit no heap
	 * test has now, is closed as gone, not left open for good (keeping
	 * its release out of every baseline).
	 */
	old = intf(f->t, "insert into findings (service_id, profile_type, kind, direction, "
			 "function, current_release, detail) select id, 'heap', 'cost', "
			 "'regression', '" FINDING_WHOLE_SERVICE "', 'v3', "
			 "'{\"cost_unit\": \"per_load\"}' from services where name = 'quiet' "
			 "returning id");
	f->type = "heap";
	analyze_all(f, NIGHT_END);
	f->type = NULL;
	assert_int_equal(intf(f->t,
			      "select count(*) from findings where id = %lld and "
			      "state = 'went_away' and status = 'resolved'",
			      (long long)old),
			 1);
	assert_int_equal(intf(f->t,
			      "select count(*) from finding_states where finding_id = %lld "
			      "and reason like 'its unit is retired: heap bytes%%'",
			      (long long)old),
			 1);
}

/*
 * 28 baseline heap captures of service `name` at load `base_load`, then 4
 * holding `scale` times their bytes at `cur_load` (NULL: untagged).
 */
static void heap_case(fx *f, const char *name, double scale, const char *base_load,
		      const char *cur_load)
{
	testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)", name);
	for (int day = 14; day >= 1; day--) {
		heap_capture(f, name, "v1", NIGHT_END - day * DAY - 9 * HOUR, 1, base_load);
		heap_capture(f, name, "v1", NIGHT_END - day * DAY - 3 * HOUR, 1, base_load);
	}
	for (int k = 0; k < 4; k++)
		heap_capture(f, name, "v3", NIGHT_END - (20 - 4 * k) * HOUR, scale, cur_load);
}

/*
 * Heap bytes in use are never divided by load, and were always capped at
 * low as if no capture had a load figure: a heap doubled at the same load
 * passed every gate. With every capture's load known and the judged load
 * not above the baseline's, the finding keeps its severity; at twice the
 * load, or without load figures, it stays at most low (more traffic may
 * hold more heap), and the same bytes under more load are no finding.
 */
static void test_a_heap_doubled_at_the_same_load_gates(void **state)
{
	static const char *const names[] = {"held", "busier", "busier2", "untagged"};
	fx *f = *state;
	analysis a;
	const finding *t;
	bool said = false;

	f->type = "heap";
	heap_case(f, "held", 2, "100", "100");
	heap_case(f, "busier", 1, "100", "200");
	heap_case(f, "busier2", 2, "100", "200");
	heap_case(f, "untagged", 2, NULL, NULL);
	judge(f, &a, names, 4);
	f->type = NULL;
	assert_non_null(t = cost_finding(&a, "held"));
	assert_string_equal(t->cost_unit, "bytes");
	assert_true(t->severity > STATS_SEV_LOW);
	assert_null(cost_finding(&a, "busier"));
	assert_non_null(t = cost_finding(&a, "busier2"));
	assert_int_equal(t->severity, STATS_SEV_LOW);
	assert_non_null(t = cost_finding(&a, "untagged"));
	assert_int_equal(t->severity, STATS_SEV_LOW);
	for (size_t i = 0; i < a.nnotes; i++) {
		said |= strstr(a.notes[i], "busier2/heap: heap bytes in use at most low") != NULL;
		/* A heap that did not rise under more load is no news: no note every night. */
		assert_null(strstr(a.notes[i], "busier/heap:"));
	}
	assert_true(said);
	analysis_release(&a);
}

/*
 * A Go heap profile of 60 stacks sampled every `period` bytes, where
 * runtime.malg holds `malg` of the bytes: set before main, a lower
 * MemProfileRate scales what was sampled at the default rate by itself;
 * the other stacks hold `scale` times the usual bytes.
 */
static void rate_capture(fx *f, const char *service, const char *release, int64_t at,
			 int64_t period, double malg, double scale)
{
	char text[4096];
	size_t n = 0;
	double total = 0;

	for (int i = 0; i < 60; i++) {
		int v = (int)((100000 + 1000 * i) * scale * noise(f, 0.04));
		n += (size_t)snprintf(text + n, sizeof(text) - n, "main;keep.f%d %d\n", i, v);
		total += v;
	}
	n += (size_t)snprintf(text + n, sizeof(text) - n, "runtime.goexit;runtime.malg %d\n",
			      (int)(total * malg / (1 - malg) * noise(f, 0.04)));
	f->period_type = "space";
	f->period = period;
	ingest_as_pprof(f, text, n, "inuse_space", "bytes", 10000000000LL, service, release, at);
	f->period = 0;
	f->period_type = NULL;
}

/*
 * Two heap releases alike but for Go's sampling rate (MemProfileRate,
 * the pprof period of space/bytes): at 4096 bytes instead of 524288,
 * runtime.malg went from 0.03% to 2.62%, a medium regression of
 * nothing. Shares sampled at two rates are not judged: the run says so,
 * naming both, and a gate is inconclusive; the same captures at one
 * rate are judged as before. The bytes in use at two rates stay at most
 * low even at the same load.
 */
static void test_a_heap_sampling_rate_change_is_not_judged(void **state)
{
	static const char *const names[] = {"rate", "same", "bytes"};
	fx *f = *state;
	analysis a;
	const finding *t;
	bool said = false, judged = false;

	f->type = "heap";
	for (size_t s = 0; s < 3; s++) {
		bool same = s == 1;
		testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)",
			     names[s]);
		f->tags = s == 2 ? "{\"load\": \"100\"}" : NULL;
		for (int day = 14; day >= 1; day--) {
			rate_capture(f, names[s], "v1", NIGHT_END - day * DAY - 9 * HOUR, 524288,
				     0.0003, 1);
			rate_capture(f, names[s], "v1", NIGHT_END - day * DAY - 3 * HOUR, 524288,
				     0.0003, 1);
		}
		for (int k = 0; k < 4; k++)
			rate_capture(f, names[s], "v3", NIGHT_END - (20 - 4 * k) * HOUR,
				     same ? 524288 : 4096, same ? 0.0003 : 0.0262,
				     s == 2 ? 1.3 : 1);
		f->tags = NULL;
	}
	judge(f, &a, names, 3);
	f->type = NULL;
	/*
	 * The bytes themselves move with the rate (a fifth on a null pair in
	 * Go): at the same load they stay at most low, as without a load.
	 */
	assert_non_null(t = cost_finding(&a, "bytes"));
	assert_int_equal(t->severity, STATS_SEV_LOW);
	assert_false(regressed(&a, "rate", "runtime.malg"));
	for (size_t i = 0; i < a.ntests; i++) {
		bool share = strcmp(a.tests[i].kind, FINDING_KIND_COST) != 0;
		assert_false(share && strcmp(a.tests[i].service, "rate") == 0);
		judged |= share && strcmp(a.tests[i].service, "same") == 0;
	}
	assert_true(judged);
	for (size_t i = 0; i < a.nskipped; i++) {
		assert_string_not_equal(a.skipped[i].service, "same");
		said |= strcmp(a.skipped[i].service, "rate") == 0 &&
			strcmp(a.skipped[i].reason,
			       "heap sampling rate changed: baseline 524288 bytes, judged 4096 "
			       "bytes; shares are not comparable") == 0;
	}
	assert_true(said);
	analysis_release(&a);
}

/*
 * A host whose CPUs are slower burns more CPU for the same work. Three
 * of the new release's four captures come from a new host where every
 * stack costs half as much again: the service's cost per second rose by
 * a third on average, but not at all without that host, so it is no
 * cost finding. The same captures with no host known are one: nothing
 * says they are one host's.
 */
static void test_a_service_slower_on_one_host_alone_is_no_cost_finding(void **state)
{
	static const char *const names[] = {"one", "unknown"};
	static const char *const one_hosts[] = {"h1", "h9", "h9", "h9"};
	static const char *const no_hosts[] = {NULL, NULL, NULL, NULL};
	static const double cost[] = {1, 1.5, 1.5, 1.5};
	fx *f = *state;
	analysis a;

	cost_hosts_case(f, "one", one_hosts, cost);
	cost_hosts_case(f, "unknown", no_hosts, cost);
	judge(f, &a, names, 2);
	assert_null(cost_finding(&a, "one"));
	assert_non_null(cost_finding(&a, "unknown"));
	analysis_release(&a);
}

/*
 * A whole-service cost finding read back from the database is still a
 * cost in its unit: the night's report prints samples per second and a
 * change in percent, never shares and points (a cost of 0.5 CPU s/s read
 * "50.00%" there, and its doubling "+100.00pp").
 */
static void test_a_stored_cost_finding_reads_back_in_its_own_unit(void **state)
{
	fx *f = *state;
	nightly_opts o = {0};
	nightly_result r;
	pr_error err = PR_ERROR_INIT;
	finding got;
	findings_meta meta;
	char md[700], *text = NULL, *row;
	size_t len = 0;
	FILE *in;

	cost_case(f, "reg", 2);
	now_us = NIGHT_END;
	if (nightly_run(&r, &f->env, &o, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(findings_get(&got, &meta, f->t->db,
				      intf(f->t, "select id from findings where kind = 'cost'"),
				      &err), 0);
	assert_string_equal(got.kind, FINDING_KIND_COST);
	assert_non_null(got.cost_unit);
	/* The captures count samples: the cost is samples per second of capture. */
	assert_string_equal(got.cost_unit, "value_per_s");
	finding_clear(&got);
	/* The run's Markdown report sits beside its HTML one. */
	assert_non_null(r.report);
	snprintf(md, sizeof(md), "%.*s.md", (int)(strlen(r.report) - 5), r.report);
	nightly_result_release(&r);
	assert_non_null(in = fopen(md, "r"));
	assert_int_equal(getdelim(&text, &len, '\0', in) > 0, 1);
	fclose(in);
	assert_non_null(row = strstr(text, "whole service"));
	if (strchr(row, '\n'))
		*strchr(row, '\n') = '\0';
	assert_non_null(strstr(row, "/s | +"));
	assert_null(strstr(row, "pp"));
	free(text);
}

/*
 * A cost finding's history in the run's report is each capture's cost in
 * its unit, the baseline's around the baseline value and the current
 * ones around the current value: it was the self share of "(whole
 * service)", no function, so 0 in every capture, a flat line at 0% with
 * a band of {0, 0} that hid a doubling.
 */
static void test_a_cost_finding_history_is_the_cost_of_each_capture(void **state)
{
	fx *f = *state;
	nightly_opts o = {0};
	nightly_result r;
	pr_error err = PR_ERROR_INIT;
	char path[700];
	json_t *doc, *fs, *cost = NULL, *h;
	size_t i, nb = 0, nc = 0;
	FILE *in;

	cost_case(f, "reg", 2);
	now_us = NIGHT_END;
	if (nightly_run(&r, &f->env, &o, &err) < 0)
		fail_msg("%s", err.msg);
	assert_non_null(r.report);
	snprintf(path, sizeof(path), "%.*s.json", (int)(strlen(r.report) - 5), r.report);
	nightly_result_release(&r);
	assert_non_null(in = fopen(path, "r"));
	assert_non_null(doc = json_loadf(in, 0, NULL));
	fclose(in);
	fs = json_object_get(doc, "findings");
	for (i = 0; i < json_array_size(fs); i++)
		if (strcmp(json_string_value(json_object_get(json_array_get(fs, i), "kind")),
			   "cost") == 0)
			cost = json_array_get(fs, i);
	assert_non_null(cost);
	h = json_object_get(cost, "history");
	assert_int_equal(json_array_size(h), 32);
	for (i = 0; i < json_array_size(h); i++) {
		json_t *pt = json_array_get(h, i);
		bool cur = strcmp(json_string_value(json_object_get(pt, "side")), "current") == 0;
		double v = json_real_value(json_object_get(pt, "share"));
		double want = json_real_value(
			json_object_get(cost, cur ? "current_share" : "baseline_share"));
		/* Each capture's cost is near its side's mean cost, and the sides are apart. */
		assert_true(want > 0 && fabs(v - want) < 0.25 * want);
		nb += !cur, nc += cur;
	}
	assert_int_equal(nb, 28);
	assert_int_equal(nc, 4);
	assert_true(json_real_value(json_object_get(json_object_get(cost, "band"), "median")) > 0);
	json_decref(doc);
	/* The HTML draws the cost, not a share. */
	snprintf(path + strlen(path) - 5, 6, ".html");
	{
		char *text = NULL;
		size_t len = 0;
		assert_non_null(in = fopen(path, "r"));
		assert_int_equal(getdelim(&text, &len, '\0', in) > 0, 1);
		fclose(in);
		assert_non_null(strstr(text, "Whole-service cost (as the analysis measures it) per "
					     "capture"));
		free(text);
	}
}

/*
 * The report's cost history under a finding per unit of load is the
 * analysis's own measure: its baseline's median is the finding's
 * baseline figure. Drawn by a copy of the measure in SQL, it tested for
 * the unit "per_load" (stored as "per_load:cpu_s_per_s"), counted
 * samples of a CPU-time period as samples, and refused a load of
 * "6.5e1": the line showed samples per second under "ms CPU per unit of
 * load".
 */
static void test_a_cost_history_per_unit_of_load_is_the_finding_s_measure(void **state)
{
	fx *f = *state;
	nightly_opts o = {0};
	nightly_result r;
	pr_error err = PR_ERROR_INIT;
	char path[700];
	json_t *doc, *fs, *cost = NULL;
	double median, base;
	FILE *in;

	testdb_execf(f->t, "insert into services (name, enabled) values ('rate', true)");
	f->period_type = "cpu";
	f->period = 10000000;
	for (int day = 14; day >= 1; day--)
		for (int j = 0; j < 2; j++)
			load_capture(f, "rate", "v1", NIGHT_END - day * DAY - (9 - 6 * j) * HOUR,
				     "6.5e1", 1);
	for (int k = 0; k < 4; k++)
		load_capture(f, "rate", "v3", NIGHT_END - (20 - 4 * k) * HOUR, "6.5e1", 2);
	f->period = 0;
	now_us = NIGHT_END;
	if (nightly_run(&r, &f->env, &o, &err) < 0)
		fail_msg("%s", err.msg);
	assert_non_null(r.report);
	snprintf(path, sizeof(path), "%.*s.json", (int)(strlen(r.report) - 5), r.report);
	nightly_result_release(&r);
	assert_non_null(in = fopen(path, "r"));
	assert_non_null(doc = json_loadf(in, 0, NULL));
	fclose(in);
	fs = json_object_get(doc, "findings");
	for (size_t i = 0; i < json_array_size(fs); i++)
		if (strcmp(json_string_value(json_object_get(json_array_get(fs, i), "kind")),
			   "cost") == 0)
			cost = json_array_get(fs, i);
	assert_non_null(cost);
	assert_string_equal(json_string_value(json_object_get(cost, "cost_unit")),
			    "per_load:cpu_s_per_s");
	median = json_real_value(json_object_get(json_object_get(cost, "band"), "median"));
	base = json_real_value(json_object_get(cost, "baseline_share"));
	/* A median of noisy captures against their mean: equal to a few percent. */
	assert_true(base > 0 && fabs(median / base - 1) < 0.03);
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_a_candidate_is_confirmed_on_its_second_look_and_only_then_pages, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_cost_finding_history_is_the_cost_of_each_capture, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_cost_history_per_unit_of_load_is_the_finding_s_measure, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_a_rerun_without_new_captures_does_not_confirm,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_captures_taken_at_one_hour_every_night_are_one_look_a_night, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_a_critical_finding_pages_at_once, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_a_critical_finding_of_one_capture_waits_for_its_next_look, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_finding_that_does_not_hold_goes_away_and_its_page_resolves, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_finding_closed_by_a_run_that_does_not_page_still_resolves_its_page,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_later_release_back_in_the_band_fixes_the_finding, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_regression_carried_into_later_releases_pages_once, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_carried_rise_within_the_earlier_interval_pages_once, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_an_incident_carried_into_the_next_release_pages_once, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_one_rise_in_two_releases_confirmed_in_one_run_pages_once, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_rise_in_two_short_releases_is_confirmed_and_pages_once, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_release_never_judged_is_not_the_next_ones_baseline, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_window_of_unjudged_captures_is_still_a_baseline, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_finding_that_paged_itself_is_never_recorded_as_carried, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_the_earlier_release_confirmed_after_the_later_one_paged_is_carried,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_lead_whose_incident_pages_is_not_recorded_as_carried, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_regressions_on_one_call_path_are_one_incident_that_pages_once, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_an_incident_whose_lead_went_away_pages_through_a_member, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_an_incident_whose_lead_a_release_fixed_pages_through_a_member_at_once,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_an_incident_pages_at_its_worst_members_severity, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_lead_below_min_severity_pages_at_its_members_severity, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_member_carried_from_an_earlier_page_does_not_raise_its_lead, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_member_that_paged_on_its_own_is_not_paged_again_by_its_lead, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_member_resolved_by_hand_does_not_hide_the_worst_one, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_member_escalated_past_its_own_page_raises_its_lead, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_member_whose_earlier_page_was_resolved_raises_its_lead, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_dominant_function_s_fall_dilutes_into_relative_shifts, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_member_within_an_accepted_rise_does_not_raise_its_lead, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_rerun_does_not_page_a_member_of_an_earlier_incident, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_an_escalated_member_of_an_incident_is_not_paged_beside_its_lead, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_look_with_other_options_does_not_escalate_a_finding, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_pending_trigger_of_an_escalated_finding_takes_its_figures, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_noisy_release_in_between_does_not_hide_a_regression, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_weekend_is_judged_against_the_baseline_s_weekends, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_finding_judged_with_its_week_is_reproduced_with_it, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_service_s_own_weekend_is_the_one_judged,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_noisy_small_sample_function_is_weighed_by_its_sample_counts, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_release_noisy_in_every_function_does_not_hide_a_rise, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_release_quieter_than_any_before_is_judged_by_the_quietest, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_rise_beyond_the_margin_needs_no_proof_of_the_margin, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_sure_change_below_the_margin_is_not_a_finding, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_stored_cost_finding_reads_back_in_its_own_unit, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_finding_escalated_on_night_two_reads_back_at_look_two, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_a_heap_doubled_at_the_same_load_gates, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_a_heap_sampling_rate_change_is_not_judged,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_heap_in_use_at_half_the_load_is_no_regression,
						setup, teardown),
		cmocka_unit_test(test_wall_microseconds_are_wall_seconds_per_second),
		cmocka_unit_test_setup_teardown(test_a_sampling_rate_change_is_no_cost_change,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_baseline_captures_of_another_measure_are_left_out, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_capture_without_a_duration_leaves_the_cost_tested, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_release_that_lost_its_load_figure_is_not_judged_per_second_alone,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_quieter_night_with_a_fixed_overhead_is_no_regression, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_load_figure_in_another_unit_does_not_hide_a_regression, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_captures_that_could_carry_a_duration_and_do_not_are_noted, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_a_wall_profile_costs_wall_seconds, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_a_service_slower_everywhere_is_a_cost_finding,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_rise_on_one_host_alone_is_not_the_release_s,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_new_hosts_that_disagree_are_two_witnesses,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_go_preemption_frame_is_judged_by_no_one, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_captures_of_one_hour_are_judged_against_the_baseline_s_same_hours,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_critical_rise_at_unseen_hours_waits_for_a_second_look, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_two_near_captures_do_not_veto_a_slowdown,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_stripped_binary_is_one_function_whatever_its_addresses, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_symbols_lost_behind_small_or_few_captures_are_not_judged, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_captures_of_few_hosts_weigh_as_few_hosts,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_day_s_traffic_mix_shared_by_a_night_is_not_a_regression, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_service_slower_on_one_host_alone_is_no_cost_finding, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_allocated_bytes_are_a_cost_only_per_second_of_a_known_span, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_critical_regression_is_ranked_above_a_low_cost_finding, setup,
			teardown),
	};

	return cmocka_run_group_tests(tests, testdb_group_setup, testdb_group_teardown);
}
