/*
 * test_jobs.c: the jobs as library functions, against a real PostgreSQL
 * and a real blob store: the per-function matrix the analysis reads, the
 * analysis engine on a small generated fleet, nightly_run, postdeploy_run
 * and analyze_run, the run lifecycle (including a run whose session
 * died), and the one finding object all three jobs print.
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
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "baselines/analysis.h"
#include "baselines/baseline.h"
#include "common/timeutil.h"
#include "jobs/analyze.h"
#include "jobs/capreq.h"
#include "jobs/nightly.h"
#include "jobs/postdeploy.h"
#include "jobs/runs.h"
#include "pipeline/ingest.h"
#include "tests/support/testdb.h"

#define DAY (86400LL * 1000000LL)
#define HOUR (3600LL * 1000000LL)
/* The night judged: 2026-06-15T00:00:00Z, and the baseline's 14 days before it. */
#define NIGHT_END 1781481600000000LL
#define SHA_V2 "2222222222222222222222222222222222222222"

typedef struct fx {
	testdb *t;
	blob_store *bs;
	char dir[512];
	config cfg;
	job_env env;
	unsigned seed;
} fx;

static fx F;

/* A number in [1 - spread, 1 + spread), from a fixed sequence. */
static double noise(fx *f, double spread)
{
	f->seed = f->seed * 1103515245u + 12345u;
	return 1 - spread + 2 * spread * (double)((f->seed >> 8) & 0xffff) / 65536.0;
}

/*
 * One capture of `service`: eight steady functions and work.hot, whose
 * weight is multiplied by `factor`; every weight varies by `spread` (a
 * fraction) from capture to capture.
 */
static void capture_spread(fx *f, const char *service, const char *release, int64_t at,
			   double factor, double spread)
{
	static const char *const names[] = {"work.a", "work.b", "work.c", "work.d", "io.read",
					    "io.write", "runtime.gc", "json.encode"};
	static const int weights[] = {3000, 2500, 2000, 1500, 1200, 900, 700, 500};
	static int seq;
	char path[600];
	FILE *out;
	ingest_request req;
	ingest_result res;
	pr_error err = PR_ERROR_INIT;

	snprintf(path, sizeof(path), "%s/c%d.folded", f->dir, ++seq);
	assert_non_null(out = fopen(path, "w"));
	for (size_t i = 0; i < sizeof(weights) / sizeof(weights[0]); i++)
		fprintf(out, "main;serve;%s %d\n", names[i], (int)(weights[i] * noise(f, spread)));
	fprintf(out, "main;serve;work.hot %d\n", (int)(2000 * factor * noise(f, spread)));
	assert_int_equal(fclose(out), 0);
	memset(&req, 0, sizeof(req));
	req.path = path;
	req.service = service;
	req.release = release;
	req.commit = strcmp(release, "v2") == 0 ? SHA_V2 : NULL;
	req.time_us = at;
	req.type = "cpu";
	req.format = PROFILE_FMT_FOLDED;
	if (ingest_file(&res, f->t->db, f->bs, &req, &f->cfg.limits, &err) < 0)
		fail_msg("ingest: %s", err.msg);
}

/* A capture as capture_spread's whose weights vary by 5%. */
static void capture(fx *f, const char *service, const char *release, int64_t at, double factor)
{
	capture_spread(f, service, release, at, factor, 0.05);
}

/* One capture of `service` and type `type` whose folded text is `text`. */
static void capture_text_type(fx *f, const char *service, const char *release, int64_t at,
			      const char *text, const char *type)
{
	static int seq;
	char path[600];
	FILE *out;
	ingest_request req;
	ingest_result res;
	pr_error err = PR_ERROR_INIT;

	snprintf(path, sizeof(path), "%s/t%d.folded", f->dir, ++seq);
	assert_non_null(out = fopen(path, "w"));
	fputs(text, out);
	assert_int_equal(fclose(out), 0);
	memset(&req, 0, sizeof(req));
	req.path = path;
	req.service = service;
	req.release = release;
	req.time_us = at;
	req.type = type;
	req.format = PROFILE_FMT_FOLDED;
	if (ingest_file(&res, f->t->db, f->bs, &req, &f->cfg.limits, &err) < 0)
		fail_msg("ingest: %s", err.msg);
}

/* One cpu capture of `service` whose folded text is `text`. */
static void capture_text(fx *f, const char *service, const char *release, int64_t at,
			 const char *text)
{
	capture_text_type(f, service, release, at, text, "cpu");
}

/* Load the configuration `json`, written to NAME.json in the fixture's folder. */
static void use_config(fx *f, const char *name, const char *json)
{
	pr_error err = PR_ERROR_INIT;
	char path[sizeof(f->dir) + 64];
	FILE *c;

	snprintf(path, sizeof(path), "%s/%s.json", f->dir, name);
	assert_non_null(c = fopen(path, "w"));
	fputs(json, c);
	assert_int_equal(fclose(c), 0);
	config_release(&f->cfg);
	if (config_load(&f->cfg, path, &err) < 0)
		fail_msg("config: %s", err.msg);
}

/*
 * A service with 14 days of release v1 (two captures a day) and four
 * captures of v2 in the night before NIGHT_END, in which work.hot costs
 * `factor` times as much.
 */
static void service(fx *f, const char *name, double factor)
{
	testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)", name);
	for (int day = 14; day >= 1; day--) {
		capture(f, name, "v1", NIGHT_END - day * DAY - 9 * 3600 * 1000000LL, 1);
		capture(f, name, "v1", NIGHT_END - day * DAY - 3 * 3600 * 1000000LL, 1);
	}
	for (int k = 0; k < 4; k++)
		capture(f, name, "v2", NIGHT_END - (20 - 4 * k) * 3600 * 1000000LL, factor);
}

static int64_t fixed_now(void)
{
	return NIGHT_END;
}

static int setup(void **state)
{
	const char *base = getenv("PROFREG_TEST_TMP");
	pr_error err = PR_ERROR_INIT;
	int rc;

	if ((rc = testdb_reset(state)) != 0)
		return rc;
	memset(&F, 0, sizeof(F));
	F.t = *state;
	F.seed = 7;
	snprintf(F.dir, sizeof(F.dir), "%s/jobs-XXXXXX", base ? base : "/tmp");
	if (!mkdtemp(F.dir) || blob_store_open_dir(&F.bs, F.dir, &err) < 0 ||
	    config_load(&F.cfg, NULL, &err) < 0) {
		fprintf(stderr, "cannot set up: %s\n", err.msg);
		return -1;
	}
	/* The reset emptied `functions`; put back what migration 006 adds. */
	testdb_execf(F.t, "insert into functions (name, file, synthetic)"
		  " values ('(other functions)', '(profreg summary)', true)");
	testdb_execf(F.t, "insert into instance default values");
	F.env = (job_env){&F.cfg, F.t->db, F.bs, F.dir, fixed_now};
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

static const finding *regression(const analysis *a, const char *service)
{
	for (size_t i = 0; i < a->ntests && a->tests[i].significant; i++)
		if (a->tests[i].direction == FINDING_REGRESSION &&
		    strcmp(a->tests[i].service, service) == 0)
			return &a->tests[i];
	return NULL;
}

/* The column of capture `id` in a matrix of `base` then `cur`, or -1. */
static long column_of(const capture_set *base, const capture_set *cur, int64_t id)
{
	for (size_t i = 0; i < base->n; i++)
		if (base->caps[i].id == id)
			return (long)i;
	for (size_t i = 0; i < cur->n; i++)
		if (cur->caps[i].id == id)
			return (long)(base->n + i);
	return -1;
}

/*
 * The per-function matrix the analysis reads is in function-id order,
 * one column per capture (baseline first), 0 where a capture lacks the
 * function, and equals cell by cell what a plain query ordered by
 * function reads. The captures' functions interleave (each capture
 * brings a function first seen there, so with a higher id; one function
 * is in every other capture only; one is new in v2), so the rows in
 * primary-key order (capture, function) are not in function order.
 */
static void test_the_function_matrix_is_in_function_order_whatever_order_rows_come_in(
	void **state)
{
	fx *f = *state;
	capture_query q = {0};
	capture_set base, cur;
	func_matrix m;
	struct pg_result *res = NULL;
	pr_error err = PR_ERROR_INIT;
	char text[1024], sql[512];
	const char *rel[2] = {"v1", "v2"};
	int64_t sid, cells = 0, nonzero = 0;
	size_t row = 0;

	testdb_execf(f->t, "insert into services (name, enabled) values ('mix', true)");
	sid = testdb_int(f->t, "select id from services where name = 'mix'");
	for (int k = 0; k < 12; k++) {
		int n = snprintf(text, sizeof(text), "main;work.a %d\nmain;late.f%d %d\n",
				 100 + k, k, 10 + k);
		if (k % 2 == 0)
			n += snprintf(text + n, sizeof(text) - (size_t)n, "main;rare %d\n", 5 + k);
		if (k >= 9)
			snprintf(text + n, sizeof(text) - (size_t)n, "main;new.v2 %d\n", 7 * k);
		capture_text(f, "mix", rel[k >= 9], NIGHT_END - (12 - k) * DAY, text);
	}
	q.service_id = sid;
	q.type = "cpu";
	q.release = "v1";
	assert_int_equal(capture_set_load(&base, f->t->db, &q, &err), 0);
	q.release = "v2";
	assert_int_equal(capture_set_load(&cur, f->t->db, &q, &err), 0);
	assert_int_equal(base.n, 9);
	assert_int_equal(cur.n, 3);
	assert_int_equal(func_matrix_load(&m, f->t->db, &base, &cur, &err), 0);
	assert_int_equal(m.ncaps, 12);
	/* main (no self time, but a row), work.a, rare, new.v2, the twelve late.f */
	assert_int_equal(m.nfuncs, 16);
	snprintf(sql, sizeof(sql),
		 "select function_id, profile_id, self_value from profile_functions"
		 " where service_id = %lld order by function_id, profile_id", (long long)sid);
	assert_int_equal(db_exec(f->t->db, &res, &err, "reading rows", sql, 0, NULL), 0);
	for (int i = 0; i < db_rows(res); i++) {
		int64_t fid = db_get_i64(res, i, 0);
		long col = column_of(&base, &cur, db_get_i64(res, i, 1));
		if (i > 0 && fid != db_get_i64(res, i - 1, 0))
			row++;
		assert_true(row < m.nfuncs);
		assert_int_equal(m.func_ids[row], fid);
		assert_true(col >= 0);
		assert_int_equal(m.self[row * m.ncaps + (size_t)col], db_get_i64(res, i, 2));
		nonzero += db_get_i64(res, i, 2) != 0;
	}
	assert_int_equal(row + 1, m.nfuncs);
	for (size_t i = 0; i < m.nfuncs * m.ncaps; i++)
		cells += m.self[i] != 0;
	/* Every other cell is 0: the function is not in that capture. */
	assert_int_equal(cells, nonzero);
	db_result_free(res);
	func_matrix_release(&m);
	capture_set_release(&base);
	capture_set_release(&cur);
}

static void test_the_engine_finds_a_doubled_function_and_nothing_in_a_null_service(void **state)
{
	fx *f = *state;
	analysis_opts o;
	analysis a;
	pr_error err = PR_ERROR_INIT;
	int64_t sid[2];

	service(f, "bad", 2);
	service(f, "good", 1);
	sid[0] = testdb_int(f->t, "select id from services where name = 'bad'");
	sid[1] = testdb_int(f->t, "select id from services where name = 'good'");
	analysis_opts_default(&o);
	o.at_us = NIGHT_END;
	analysis_init(&a, &o);
	for (int i = 0; i < 2; i++) {
		analysis_target t = {sid[i], i ? "good" : "bad", "cpu", "v2", 0, 0,
				     NULL, NULL, NULL, NULL};
		assert_int_equal(analysis_add(&a, f->t->db, &t, false, &err), 0);
	}
	assert_int_equal(analysis_finish(&a, &err), 0);
	assert_int_equal(a.services, 2);
	assert_non_null(regression(&a, "bad"));
	assert_string_equal(regression(&a, "bad")->function, "work.hot");
	assert_true(regression(&a, "bad")->severity >= STATS_SEV_HIGH);
	assert_null(regression(&a, "good"));
	analysis_release(&a);
}

/*
 * A service like service()'s whose hot function is `old` in v1 and `new`
 * in v2, where it costs `factor` times as much; `old2` and `new2`, when
 * given, a second function renamed the same way at 1500 samples.
 */
static void renamed_service(fx *f, const char *name, const char *old, const char *new,
			    double factor, const char *old2, const char *new2)
{
	static const char *const steady[] = {"work.a", "work.b", "work.c", "work.d", "io.read",
					     "io.write", "runtime.gc", "json.encode"};
	static const int weights[] = {3000, 2500, 2000, 1500, 1200, 900, 700, 500};

	testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)", name);
	for (int k = 0; k < 32; k++) {
		bool cur = k >= 28;
		int64_t hour = 3600 * 1000000LL;
		int64_t at = cur ? NIGHT_END - (20 - 4 * (k - 28)) * hour
				 : NIGHT_END - (14 - k / 2) * DAY - (k % 2 ? 3 : 9) * hour;
		char text[2048];
		size_t n = 0;

		for (size_t i = 0; i < sizeof(weights) / sizeof(weights[0]); i++)
			n += (size_t)snprintf(text + n, sizeof(text) - n, "main;serve;%s %d\n",
					      steady[i], (int)(weights[i] * noise(f, 0.05)));
		n += (size_t)snprintf(text + n, sizeof(text) - n, "main;serve;%s %d\n",
				      cur ? new : old,
				      (int)(2000 * (cur ? factor : 1) * noise(f, 0.05)));
		if (old2)
			snprintf(text + n, sizeof(text) - n, "main;serve;%s %d\n",
				 cur ? new2 : old2, (int)(1500 * noise(f, 0.05)));
		capture_text(f, name, cur ? "v2" : "v1", at, text);
	}
}

/*
 * A service whose function `now` was stored as `stored` before a rule of
 * the names made it stable: its baseline captures are ingested, the
 * function's stored name set back to the old form, and its current
 * captures (at `factor` times the cost) ingested under today's name.
 */
static void upgraded_service(fx *f, const char *name, const char *stored, const char *now,
			     double factor)
{
	static const char *const steady[] = {"work.a",  "work.b",   "work.c",     "work.d",
					     "io.read", "io.write", "runtime.gc", "json.encode"};
	static const int weights[] = {3000, 2500, 2000, 1500, 1200, 900, 700, 500};

	testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)", name);
	for (int k = 0; k < 32; k++) {
		bool cur = k >= 28;
		int64_t hour = 3600 * 1000000LL;
		int64_t at = cur ? NIGHT_END - (20 - 4 * (k - 28)) * hour
				 : NIGHT_END - (14 - k / 2) * DAY - (k % 2 ? 3 : 9) * hour;
		char text[2048];
		size_t n = 0;

		if (k == 28)
			testdb_execf(f->t, "update functions set name = '%s' where name = '%s'",
				     stored, now);
		for (size_t i = 0; i < sizeof(weights) / sizeof(weights[0]); i++)
			n += (size_t)snprintf(text + n, sizeof(text) - n, "main;serve;%s %d\n",
					      steady[i], (int)(weights[i] * noise(f, 0.05)));
		snprintf(text + n, sizeof(text) - n, "main;serve;%s %d\n", now,
			 (int)(2000 * (cur ? factor : 1) * noise(f, 0.05)));
		capture_text(f, name, cur ? "v2" : "v1", at, text);
	}
}

/* The significant finding of `function` in `service`, or NULL. */
static const finding *finding_of(const analysis *a, const char *service, const char *function)
{
	for (size_t i = 0; i < a->ntests && a->tests[i].significant; i++)
		if (strcmp(a->tests[i].service, service) == 0 &&
		    strcmp(a->tests[i].function, function) == 0)
			return &a->tests[i];
	return NULL;
}

static void analyse_all(fx *f, analysis *a, const char *const *names, size_t n)
{
	analysis_opts o;
	pr_error err = PR_ERROR_INIT;

	analysis_opts_default(&o);
	o.at_us = NIGHT_END;
	analysis_init(a, &o);
	for (size_t i = 0; i < n; i++) {
		char q[128];
		int64_t sid;
		analysis_target t = {0, names[i], "cpu", "v2", 0, 0, NULL, NULL, NULL, NULL};

		snprintf(q, sizeof(q), "select id from services where name = '%s'", names[i]);
		t.service_id = sid = testdb_int(f->t, q);
		assert_true(sid > 0);
		assert_int_equal(analysis_add(a, f->t->db, &t, false, &err), 0);
	}
	assert_int_equal(analysis_finish(a, &err), 0);
}

/*
 * A release that renames a function is judged as if the name had stayed:
 * the same cost under a new name is no finding (tested apart, it was a
 * regression from nothing and an improvement to nothing), a doubled one is
 * one regression under the new name that says the old one.
 */
static void test_a_renamed_function_is_judged_against_its_old_name(void **state)
{
	static const char *const names[] = {"same", "slower", "closure", "moved"};
	fx *f = *state;
	analysis a;
	const finding *x;

	renamed_service(f, "same", "store.(*Cache).parseKey", "store.(*Cache).parseCacheKey", 1,
			NULL, NULL);
	renamed_service(f, "slower", "store.(*Cache).parseKey", "store.(*Cache).parseCacheKey",
			2, NULL, NULL);
	renamed_service(f, "closure", "api.handle.func1", "api.handle.func2", 1, NULL, NULL);
	renamed_service(f, "moved", "fetch (app/router.py)", "fetch (app/handlers.py)", 1, NULL,
			NULL);
	analyse_all(f, &a, names, 4);
	assert_null(finding_of(&a, "moved", "fetch (app/handlers.py)"));
	assert_null(finding_of(&a, "moved", "fetch (app/router.py)"));
	assert_null(finding_of(&a, "same", "store.(*Cache).parseCacheKey"));
	assert_null(finding_of(&a, "same", "store.(*Cache).parseKey"));
	assert_null(finding_of(&a, "closure", "api.handle.func2"));
	assert_null(finding_of(&a, "closure", "api.handle.func1"));
	assert_non_null(x = finding_of(&a, "slower", "store.(*Cache).parseCacheKey"));
	assert_int_equal(x->direction, FINDING_REGRESSION);
	assert_non_null(x->renamed_from);
	assert_string_equal(x->renamed_from, "store.(*Cache).parseKey");
	assert_true(x->baseline_share > 0.1 && x->current_share > 1.5 * x->baseline_share);
	assert_null(finding_of(&a, "slower", "store.(*Cache).parseKey"));
	/* One test a service for the pair, under the new name. */
	for (size_t k = 0; k < 4; k++) {
		size_t renamed = 0;
		for (size_t i = 0; i < a.ntests; i++)
			if (strcmp(a.tests[i].service, names[k]) == 0 && a.tests[i].renamed_from) {
				renamed++;
				assert_true(strstr(a.tests[i].function, ".parseCacheKey") ||
					    strstr(a.tests[i].function, ".func2") ||
					    strstr(a.tests[i].function, "(app/handlers.py)"));
			}
		assert_int_equal(renamed, 1);
	}
	analysis_release(&a);
}

/*
 * A function of a V8 profile: name ("" for an anonymous one), file under
 * the release folder (a path from '/': that path, in every release), and
 * weight (negative: in every capture of the release, and in only every
 * third of the baseline's).
 */
typedef struct v8fn {
	const char *name, *file;
	int weight;
} v8fn;

/*
 * A Node service deployed into a folder of each release's own
 * ("/srv/NAME/releases/RELEASE/...", as Capistrano does): 28 baseline
 * captures of v1 over 14 days and 4 of v2, each a .cpuprofile whose
 * functions, all children of the root, are fns1 (v1) or fns2 (v2).
 */
static void v8_service(fx *f, const char *name, const v8fn *fns1, size_t n1, const v8fn *fns2,
		       size_t n2)
{
	static int seq;

	testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)", name);
	for (int k = 0; k < 32; k++) {
		bool cur = k >= 28;
		const v8fn *fns = cur ? fns2 : fns1;
		size_t nf = cur ? n2 : n1;
		int64_t hour = 3600 * 1000000LL;
		int64_t at = cur ? NIGHT_END - (20 - 4 * (k - 28)) * hour
				 : NIGHT_END - (14 - k / 2) * DAY - (k % 2 ? 3 : 9) * hour;
		char path[600];
		FILE *out;
		ingest_request req;
		ingest_result res;
		pr_error err = PR_ERROR_INIT;

		snprintf(path, sizeof(path), "%s/v8-%d.cpuprofile", f->dir, ++seq);
		assert_non_null(out = fopen(path, "w"));
		fputs("{\"nodes\":[{\"id\":1,\"callFrame\":{\"functionName\":\"(root)\","
		      "\"scriptId\":\"0\",\"url\":\"\",\"lineNumber\":-1,\"columnNumber\":-1},"
		      "\"hitCount\":0,\"children\":[",
		      out);
		for (size_t i = 0; i < nf; i++)
			fprintf(out, "%s%zu", i ? "," : "", i + 2);
		fputs("]}", out);
		for (size_t i = 0; i < nf; i++)
			fprintf(out,
				",{\"id\":%zu,\"callFrame\":{\"functionName\":\"%s\","
				"\"scriptId\":\"%zu\",\"url\":\"file://%s%s%s%s%s\","
				"\"lineNumber\":%zu,\"columnNumber\":4},\"hitCount\":%d}",
				i + 2, fns[i].name, i + 10, *fns[i].file == '/' ? "" : "/srv/",
				*fns[i].file == '/' ? "" : name,
				*fns[i].file == '/' ? "" : "/releases/",
				*fns[i].file == '/' ? ""
				: cur               ? "v2/"
						    : "v1/",
				fns[i].file, 3 * i + 1,
				fns[i].weight >= 0  ? (int)(fns[i].weight * noise(f, 0.05))
				: cur || k % 3 == 0 ? (int)(-fns[i].weight * noise(f, 0.05))
						    : 0);
		fputs("],\"startTime\":0,\"endTime\":10000000}\n", out);
		assert_int_equal(fclose(out), 0);
		memset(&req, 0, sizeof(req));
		req.path = path;
		req.service = name;
		req.release = cur ? "v2" : "v1";
		req.time_us = at;
		req.type = "cpu";
		req.format = PROFILE_FMT_V8;
		if (ingest_file(&res, f->t->db, f->bs, &req, &f->cfg.limits, &err) < 0)
			fail_msg("ingest: %s", err.msg);
	}
}

/*
 * A release deployed or built in a folder of its own names every file
 * anew. The same code is no finding, though anonymous functions of
 * several files share a name (each file is paired with the one it moved
 * to); a function renamed there, or renamed within its class and moved
 * to another file at once, is judged against its old name; and a
 * function that only moved says no old name ("x (was x)").
 */
static void test_functions_of_files_a_release_moved_keep_their_baseline(void **state)
{
	static const char *const names[] = {"redeploy", "rename", "classmove", "slower",
					    "rarely",   "lone",   "kept",      "mail"};
	/* The release's folder moved, and lib/index.js went while mail/index.js came. */
	static const v8fn mail1[] = {{"handle", "app.js", 3000},
				     {"validate", "lib/index.js", 2000},
				     {"query", "db.js", 900}};
	static const v8fn mail2[] = {{"handle", "app.js", 3000},
				     {"sendMail", "mail/index.js", 2000},
				     {"query", "db.js", 900}};
	/* One index.js, routes/ to handlers/, with another function: not a folder's move. */
	static const v8fn lone1[] = {{"handle", "/app/app.js", 3000},
				     {"legacyRoute", "/app/routes/index.js", 2000},
				     {"Router.oldName", "/app/routes/index.js", 1500},
				     {"query", "/app/db.js", 900}};
	static const v8fn lone2[] = {{"handle", "/app/app.js", 3000},
				     {"newHandler", "/app/handlers/index.js", 2000},
				     {"Router.newName", "/app/handlers/index.js", 1500},
				     {"query", "/app/db.js", 900}};
	/* A package's function gone from a.go and another new in b.go, both kept. */
	static const v8fn kept1[] = {{"main.handle", "/src/main.go", 3000},
				     {"main.oldHelper", "/src/a.go", 2000},
				     {"main.aOther", "/src/a.go", 1200},
				     {"main.bOther", "/src/b.go", 900}};
	static const v8fn kept2[] = {{"main.handle", "/src/main.go", 3000},
				     {"main.newFeature", "/src/b.go", 2000},
				     {"main.aOther", "/src/a.go", 1200},
				     {"main.bOther", "/src/b.go", 900}};
	static const v8fn same[] = {
		{"handle", "app.js", 3000},       {"", "app.js", 2500},
		{"", "lib/util.js", 2000},        {"parse", "lib/util.js", 1500},
		{"", "lib/db.js", 1200},          {"query", "lib/db.js", 900},
		{"render", "views/page.js", 700}, {"", "views/page.js", 500}};
	static const v8fn renamed[] = {
		{"handle", "app.js", 3000},       {"", "app.js", 2500},
		{"", "lib/util.js", 2000},        {"parseAll", "lib/util.js", 1500},
		{"", "lib/db.js", 1200},          {"query", "lib/db.js", 900},
		{"render", "views/page.js", 700}, {"", "views/page.js", 500}};
	static const v8fn before[] = {{"handle", "app.js", 3000},
				      {"Cache.parseKey", "lib/cache.js", 2000},
				      {"Cache.get", "lib/cache.js", 1500},
				      {"query", "lib/db.js", 900}};
	static const v8fn after[] = {{"handle", "app.js", 3000},
				     {"Cache.parseCacheKey", "lib/keys.js", 2000},
				     {"Cache.get", "lib/cache.js", 1500},
				     {"query", "lib/db.js", 900}};
	static const v8fn slower[] = {
		{"handle", "app.js", 3000},       {"", "app.js", 2500},
		{"", "lib/util.js", 4000},        {"parse", "lib/util.js", 1500},
		{"", "lib/db.js", 1200},          {"query", "lib/db.js", 900},
		{"render", "views/page.js", 700}, {"", "views/page.js", 500}};
	/* main.work is in a third of the baseline's captures: no partner for the rename. */
	static const v8fn go1[] = {{"main.handle", "main.go", 3000},
				   {"main.hashWork", "main.go", 2000},
				   {"main.work", "main.go", -800},
				   {"main.encode", "enc.go", 1500}};
	static const v8fn go2[] = {{"main.handle", "main.go", 3000},
				   {"main.mixBits", "main.go", 2000},
				   {"main.work", "main.go", -800},
				   {"main.encode", "enc.go", 1500}};
	fx *f = *state;
	analysis a;
	const finding *x;
	size_t n = sizeof(same) / sizeof(same[0]), mixbits = 0;

	v8_service(f, "redeploy", same, n, same, n);
	v8_service(f, "rename", same, n, renamed, n);
	v8_service(f, "classmove", before, 4, after, 4);
	v8_service(f, "slower", same, n, slower, n);
	v8_service(f, "rarely", go1, 4, go2, 4);
	v8_service(f, "lone", lone1, 4, lone2, 4);
	v8_service(f, "kept", kept1, 4, kept2, 4);
	v8_service(f, "mail", mail1, 3, mail2, 3);
	analyse_all(f, &a, names, 8);
	for (size_t i = 0; i < a.ntests && a.tests[i].significant; i++) {
		const finding *t = &a.tests[i];
		/*
		 * rarely's main.work did rise: in every capture now, a third
		 * before. lone's and kept's new functions are new.
		 */
		if (strcmp(t->service, "slower") != 0 && strcmp(t->service, "lone") != 0 &&
		    strcmp(t->service, "kept") != 0 && strcmp(t->service, "mail") != 0 &&
		    (strcmp(t->service, "rarely") != 0 || !strcmp(t->function, "main.mixBits")))
			fail_msg("%s: %s [%s] %.4f -> %.4f", t->service, t->function, t->file,
				 t->baseline_share, t->current_share);
	}
	for (size_t i = 0; i < a.ntests; i++) {
		const finding *t = &a.tests[i];
		if (strcmp(t->service, "rename") == 0 && strcmp(t->function, "parseAll") == 0) {
			assert_non_null(t->renamed_from);
			assert_string_equal(t->renamed_from, "parse");
		} else if (strcmp(t->service, "rarely") == 0 &&
			   strcmp(t->function, "main.mixBits") == 0) {
			assert_non_null(t->renamed_from);
			assert_string_equal(t->renamed_from, "main.hashWork");
			mixbits++;
		} else if (strcmp(t->service, "classmove") == 0 &&
			   strcmp(t->function, "Cache.parseCacheKey") == 0) {
			assert_non_null(t->renamed_from);
			assert_string_equal(t->renamed_from, "Cache.parseKey");
		} else if ((strcmp(t->service, "lone") == 0 || strcmp(t->service, "kept") == 0 ||
			    strcmp(t->service, "mail") == 0) &&
			   t->renamed_from) {
			fail_msg("%s: %s (was %s): not one function", t->service, t->function,
				 t->renamed_from);
		} else if (t->renamed_from && strcmp(t->renamed_from, t->function) == 0) {
			fail_msg("%s: %s (was %s)", t->service, t->function, t->renamed_from);
		}
	}
	assert_int_equal(mixbits, 1);
	assert_non_null(x = finding_of(&a, "lone", "newHandler"));
	assert_non_null(x = finding_of(&a, "kept", "main.newFeature"));
	assert_non_null(x = finding_of(&a, "mail", "sendMail"));
	/* The anonymous function of lib/util.js doubled: one regression, in its new file. */
	assert_non_null(x = finding_of(&a, "slower", "(anonymous)"));
	assert_int_equal(x->direction, FINDING_REGRESSION);
	assert_non_null(strstr(x->file, "releases/v2/lib/util.js"));
	assert_true(x->baseline_share > 0.1 && x->current_share > 1.5 * x->baseline_share);
	analysis_release(&a);
}

/*
 * A service like renamed_service()'s whose extra functions are `nb`
 * names and weights in v1 and `nc` in v2.
 */
static void family_service(fx *f, const char *name, const char *const *bn, const int *bw,
			   size_t nb, const char *const *cn, const int *cw, size_t nc)
{
	static const char *const steady[] = {"work.a", "work.b", "work.c", "work.d", "io.read",
					     "io.write", "runtime.gc", "json.encode"};
	static const int weights[] = {3000, 2500, 2000, 1500, 1200, 900, 700, 500};

	testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)", name);
	for (int k = 0; k < 32; k++) {
		bool cur = k >= 28;
		int64_t hour = 3600 * 1000000LL;
		int64_t at = cur ? NIGHT_END - (20 - 4 * (k - 28)) * hour
				 : NIGHT_END - (14 - k / 2) * DAY - (k % 2 ? 3 : 9) * hour;
		char text[4096];
		size_t n = 0;

		for (size_t i = 0; i < sizeof(weights) / sizeof(weights[0]); i++)
			n += (size_t)snprintf(text + n, sizeof(text) - n, "main;serve;%s %d\n",
					      steady[i], (int)(weights[i] * noise(f, 0.05)));
		for (size_t i = 0; i < (cur ? nc : nb); i++)
			n += (size_t)snprintf(text + n, sizeof(text) - n, "main;serve;%s %d\n",
					      cur ? cn[i] : bn[i],
					      (int)((cur ? cw[i] : bw[i]) * noise(f, 0.05)));
		capture_text(f, name, cur ? "v2" : "v1", at, text);
	}
}

/*
 * A rule of the names added after a function was stored (a GCC clone
 * suffix, a Go shape) leaves the stored name as it was: the first
 * release ingested under the rule has the function under today's name.
 * It is the same function: no finding when its cost is the same (it was
 * a critical regression from nothing, and an improvement to nothing),
 * and a regression under today's name, renamed from the stored one, when
 * it doubled.
 */
static void test_a_name_stored_before_a_rule_is_the_same_function(void **state)
{
	static const char *const names[] = {"gcc", "goshape", "gcc2x"};
	fx *f = *state;
	analysis a;
	const finding *x;

	upgraded_service(f, "gcc", "parse_header.isra.0", "parse_header", 1);
	upgraded_service(f, "goshape", "main.Sum[go.shape.int_0]", "main.Sum[...]", 1);
	upgraded_service(f, "gcc2x", "parse_body.part.0", "parse_body", 2);
	analyse_all(f, &a, names, 3);
	for (size_t i = 0; i < a.ntests && a.tests[i].significant; i++) {
		const finding *t = &a.tests[i];
		if (strcmp(t->service, "gcc2x") != 0)
			fail_msg("%s: %s %.4f -> %.4f", t->service, t->function, t->baseline_share,
				 t->current_share);
	}
	assert_non_null(x = finding_of(&a, "gcc2x", "parse_body"));
	assert_int_equal(x->direction, FINDING_REGRESSION);
	assert_non_null(x->renamed_from);
	assert_string_equal(x->renamed_from, "parse_body.part.0");
	assert_true(x->baseline_share > 0.05);
	analysis_release(&a);
}

/*
 * A release that adds a closure before the others renumbers them: each
 * takes the next one's cost and the last is new. The family is judged as
 * one function ("api.handle.func*"): no finding when only the new
 * closure's small cost was added, and one regression when a closure's
 * cost doubled. Numbered Java lambdas and Rust closures likewise, and two
 * closures both renumbered; a family whose members all stay is judged
 * member by member.
 */
static void test_renumbered_closures_are_judged_as_one_family(void **state)
{
	static const char *const names[] = {"go", "goslow", "java", "steady", "twice", "rust"};
	static const char *const g1[] = {"api.handle.func1", "api.handle.func2"};
	static const char *const g2[] = {"api.handle.func1", "api.handle.func2",
					 "api.handle.func3"};
	static const char *const j1[] = {"com.acme.Api.lambda$handle$0",
					 "com.acme.Api.lambda$handle$1"};
	static const char *const j2[] = {"com.acme.Api.lambda$handle$0",
					 "com.acme.Api.lambda$handle$1",
					 "com.acme.Api.lambda$handle$2"};
	static const char *const r1[] = {"app::serve::{closure#0}", "app::serve::{closure#1}"};
	static const char *const r2[] = {"app::serve::{closure#0}", "app::serve::{closure#1}",
					 "app::serve::{closure#2}"};
	static const int w1[] = {2000, 1500}, w2[] = {60, 2000, 1500}, slow[] = {60, 4000, 1500};
	fx *f = *state;
	analysis a;
	const finding *x;

	family_service(f, "go", g1, w1, 2, g2, w2, 3);
	family_service(f, "goslow", g1, w1, 2, g2, slow, 3);
	family_service(f, "java", j1, w1, 2, j2, w2, 3);
	family_service(f, "steady", g1, w1, 2, g1, slow + 1, 2);
	/* Both renumbered, none added: func1 and func2 are now func3 and func4. */
	renamed_service(f, "twice", "api.handle.func1", "api.handle.func3", 1, "api.handle.func2",
			"api.handle.func4");
	family_service(f, "rust", r1, w1, 2, r2, w2, 3);
	analyse_all(f, &a, names, 6);
	for (size_t i = 0; i < a.ntests && a.tests[i].significant; i++) {
		const finding *t = &a.tests[i];
		if (strcmp(t->service, "go") == 0 || strcmp(t->service, "java") == 0 ||
		    strcmp(t->service, "twice") == 0 || strcmp(t->service, "rust") == 0)
			fail_msg("%s: %s %.4f -> %.4f", t->service, t->function, t->baseline_share,
				 t->current_share);
	}
	assert_non_null(x = finding_of(&a, "goslow", "api.handle.func*"));
	assert_int_equal(x->direction, FINDING_REGRESSION);
	assert_null(finding_of(&a, "goslow", "api.handle.func2"));
	assert_null(finding_of(&a, "goslow", "api.handle.func3"));
	assert_non_null(x = finding_of(&a, "steady", "api.handle.func1"));
	assert_int_equal(x->direction, FINDING_REGRESSION);
	analysis_release(&a);
}

/*
 * A release that inlines a function into its caller, or extracts a
 * helper from one, moves self time between caller and callee and leaves
 * the caller's total where it was: no finding. A helper extracted and
 * made costlier is one regression of the two; new code under an
 * unchanged caller, and a new function beside another that fell but
 * does not contain it, are judged on their own as before.
 */
static void test_cost_moved_between_caller_and_callee_is_no_finding(void **state)
{
	static const char *const names[] = {"extract", "inline", "costlier", "newcode",
					    "elsewhere"};
	static const char *const b1[] = {"api.handle", "api.handle;api.parse"};
	static const char *const x2[] = {"api.handle", "api.handle;api.parse",
					 "api.handle;api.parse;api.tokens"};
	static const char *const i2[] = {"api.handle"};
	static const char *const e1[] = {"api.handle;api.parse", "api.cache"};
	static const char *const e2[] = {"api.handle;api.parse", "api.cache",
					 "api.handle;api.tokens"};
	static const int w1[] = {300, 2000}, xw[] = {300, 1200, 800}, iw[] = {2300},
			 cw[] = {300, 1200, 1600}, nw[] = {300, 2000, 800}, ew1[] = {2000, 800},
			 ew2[] = {2000, 100, 700};
	fx *f = *state;
	analysis a;
	const finding *x;

	family_service(f, "extract", b1, w1, 2, x2, xw, 3);
	family_service(f, "inline", b1, w1, 2, i2, iw, 1);
	family_service(f, "costlier", b1, w1, 2, x2, cw, 3);
	family_service(f, "newcode", b1, w1, 2, x2, nw, 3);
	family_service(f, "elsewhere", e1, ew1, 2, e2, ew2, 3);
	analyse_all(f, &a, names, 5);
	for (size_t i = 0; i < a.ntests && a.tests[i].significant; i++) {
		const finding *t = &a.tests[i];
		if (strcmp(t->service, "extract") == 0 || strcmp(t->service, "inline") == 0)
			fail_msg("%s: %s %.4f -> %.4f", t->service, t->function, t->baseline_share,
				 t->current_share);
	}
	assert_non_null(x = finding_of(&a, "costlier", "api.parse (+api.tokens)"));
	assert_int_equal(x->direction, FINDING_REGRESSION);
	assert_true(x->current_share > 1.2 * x->baseline_share);
	assert_null(finding_of(&a, "costlier", "api.tokens"));
	assert_non_null(x = finding_of(&a, "newcode", "api.tokens"));
	assert_int_equal(x->direction, FINDING_REGRESSION);
	assert_non_null(x = finding_of(&a, "elsewhere", "api.tokens"));
	assert_int_equal(x->direction, FINDING_REGRESSION);
	assert_non_null(x = finding_of(&a, "elsewhere", "api.cache"));
	assert_int_equal(x->direction, FINDING_IMPROVEMENT);
	analysis_release(&a);
}

/*
 * A callee a compiler inlined into two callers at one optimisation level
 * and called at another (-O2 then -O1): the callee is new, each caller's
 * self share fell by its part of it, their totals held. The same code is
 * no finding, tested as one row under the caller that moved most (before:
 * a critical regression from nothing and two improvements). New code
 * under the same two callers raises their totals, and is a regression.
 */
static void test_a_callee_inlined_into_two_callers_is_no_finding(void **state)
{
	static const char *const names[] = {"inlined", "newcode"};
	static const char *const b1[] = {"app.main", "app.main;app.checksum", "app.main;app.parse",
					 "app.main;app.other"};
	static const char *const b2[] = {"app.main",
					 "app.main;app.checksum",
					 "app.main;app.checksum;app.hash",
					 "app.main;app.parse",
					 "app.main;app.parse;app.hash",
					 "app.main;app.other"};
	static const int w1[] = {200, 3000, 800, 2000}, w2[] = {200, 1200, 1800, 400, 400, 2000},
			 nw[] = {200, 3000, 1800, 800, 400, 2000};
	fx *f = *state;
	analysis a;
	const finding *x;

	family_service(f, "inlined", b1, w1, 4, b2, w2, 6);
	family_service(f, "newcode", b1, w1, 4, b2, nw, 6);
	analyse_all(f, &a, names, 2);
	for (size_t i = 0; i < a.ntests && a.tests[i].significant; i++) {
		const finding *t = &a.tests[i];
		if (strcmp(t->service, "inlined") == 0)
			fail_msg("%s: %s %.4f -> %.4f", t->service, t->function, t->baseline_share,
				 t->current_share);
	}
	assert_non_null(x = finding_of(&a, "newcode", "app.hash"));
	assert_int_equal(x->direction, FINDING_REGRESSION);
	analysis_release(&a);
}

/*
 * Callers whose own code moved while their totals held are no callers
 * of new code when another function's total took the change: a check
 * new under an unchanged validate() that two handlers call, released
 * with both handlers made cheaper by as much (validate's total rose), or
 * the same check deleted while the handlers grew; new code elsewhere
 * while the callers' cost went into a callee both releases have (the
 * callee's total rose). Each is judged on its own, as before.
 */
static void test_new_code_is_not_merged_into_callers_whose_cost_went_elsewhere(void **state)
{
	static const char *const names[] = {"added", "deleted", "elsewhere"};
	static const char *const v1[] = {"api.handle", "api.handle;api.validate", "api.admin",
					 "api.admin;api.validate"};
	static const char *const v2[] = {
		"api.handle", "api.handle;api.validate", "api.handle;api.validate;api.fraud",
		"api.admin",  "api.admin;api.validate",  "api.admin;api.validate;api.fraud"};
	static const int w1[] = {1500, 300, 1500, 300}, w2[] = {900, 300, 600, 900, 300, 600};
	static const char *const e1[] = {"app.main",
					 "app.main;app.checksum",
					 "app.main;app.checksum;app.hash",
					 "app.main;app.parse",
					 "app.main;app.parse;app.hash",
					 "app.main;app.other"};
	static const char *const e2[] = {"app.main",
					 "app.main;app.checksum",
					 "app.main;app.checksum;app.hash",
					 "app.main;app.parse",
					 "app.main;app.parse;app.hash",
					 "app.main;app.other",
					 "app.main;app.newscan"};
	static const int ew1[] = {200, 3000, 200, 800, 100, 2000},
			 ew2[] = {200, 1200, 2000, 400, 500, 2000, 2200};
	fx *f = *state;
	analysis a;
	const finding *x;

	family_service(f, "added", v1, w1, 4, v2, w2, 6);
	family_service(f, "deleted", v2, w2, 6, v1, w1, 4);
	family_service(f, "elsewhere", e1, ew1, 6, e2, ew2, 7);
	analyse_all(f, &a, names, 3);
	assert_non_null(x = finding_of(&a, "added", "api.fraud"));
	assert_int_equal(x->direction, FINDING_REGRESSION);
	assert_non_null(x = finding_of(&a, "deleted", "api.handle"));
	assert_int_equal(x->direction, FINDING_REGRESSION);
	assert_non_null(x = finding_of(&a, "deleted", "api.admin"));
	assert_int_equal(x->direction, FINDING_REGRESSION);
	assert_non_null(x = finding_of(&a, "elsewhere", "app.newscan"));
	assert_int_equal(x->direction, FINDING_REGRESSION);
	analysis_release(&a);
}

/*
 * A goroutine leak: every goroutine waits in runtime.gopark, so no share
 * moves, but their number doubles from 60 to about 85. The whole
 * service's goroutines are tested as a level, like heap bytes in use:
 * a regression in goroutines, at most low without a load figure. The
 * same number in the release is no finding.
 */
static void test_a_goroutine_leak_is_a_whole_service_finding(void **state)
{
	static const char *const names[] = {"leak", "steady"};
	fx *f = *state;
	analysis_opts o;
	analysis a;
	pr_error err = PR_ERROR_INIT;
	const finding *x = NULL;

	for (size_t s = 0; s < 2; s++) {
		testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)",
			     names[s]);
		for (int k = 0; k < 32; k++) {
			bool cur = k >= 28;
			int64_t at = cur ? NIGHT_END - (20 - 4 * (k - 28)) * HOUR
					 : NIGHT_END - (14 - k / 2) * DAY - (k % 2 ? 3 : 9) * HOUR;
			int watch = (int)(22 * noise(f, 0.08)) + (cur && s == 0 ? 25 : 0);
			char text[512];
			/* A goroutine of its own a capture: no two captures are the same bytes. */
			snprintf(text, sizeof(text),
				 "runtime.goexit;main.worker;runtime.gopark %d\n"
				 "runtime.goexit;main.watchConfig;runtime.gopark %d\n"
				 "runtime.goexit;net.(*TCPListener).Accept;runtime.gopark %d\n"
				 "runtime.goexit;main.conn%d;runtime.gopark 1\n",
				 (int)(20 * noise(f, 0.08)), watch, (int)(18 * noise(f, 0.08)), k);
			capture_text_type(f, names[s], cur ? "v2" : "v1", at, text, "goroutine");
		}
	}
	analysis_opts_default(&o);
	o.at_us = NIGHT_END;
	analysis_init(&a, &o);
	for (size_t s = 0; s < 2; s++) {
		char q[128];
		analysis_target t = {0, names[s], "goroutine", "v2", 0, 0, NULL, NULL, NULL, NULL};
		snprintf(q, sizeof(q), "select id from services where name = '%s'", names[s]);
		t.service_id = testdb_int(f->t, q);
		assert_int_equal(analysis_add(&a, f->t->db, &t, false, &err), 0);
	}
	assert_int_equal(analysis_finish(&a, &err), 0);
	assert_non_null(x = finding_of(&a, "leak", FINDING_WHOLE_SERVICE));
	assert_string_equal(x->kind, FINDING_KIND_COST);
	assert_string_equal(x->cost_unit, "goroutines");
	assert_int_equal(x->direction, FINDING_REGRESSION);
	assert_int_equal(x->severity, STATS_SEV_LOW);
	assert_true(x->baseline_share > 50 && x->baseline_share < 70);
	assert_true(x->current_share > 75 && x->current_share < 95);
	assert_null(finding_of(&a, "steady", FINDING_WHOLE_SERVICE));
	analysis_release(&a);
}

/*
 * Two functions could have held an extracted helper: its caller, whose
 * self share fell by what the helper holds, and an unrelated function
 * with callees as large as the helper whose own self share fell by as
 * much in the same release. Neither was taken (no pair is made between
 * two candidates), and the helper was a regression from nothing beside
 * two improvements. The one whose callees' share rose with the helper is
 * its caller: parse and its helper are one function, and no finding; the
 * other function's fall is still an improvement of its own.
 */
static void test_of_two_possible_callers_the_one_whose_callees_took_the_helper_is_it(void **state)
{
	static const char *const names[] = {"decoy"};
	static const char *const b1[] = {"api.handle", "api.handle;api.parse", "api.other",
					 "api.other;api.leaf"};
	static const char *const b2[] = {"api.handle", "api.handle;api.parse",
					 "api.handle;api.parse;api.tokens", "api.other",
					 "api.other;api.leaf"};
	static const int w1[] = {300, 2000, 1500, 1000}, w2[] = {300, 1200, 800, 700, 1000};
	fx *f = *state;
	analysis a;
	const finding *x;

	family_service(f, "decoy", b1, w1, 4, b2, w2, 5);
	analyse_all(f, &a, names, 1);
	assert_null(finding_of(&a, "decoy", "api.tokens"));
	assert_null(finding_of(&a, "decoy", "api.parse"));
	assert_null(finding_of(&a, "decoy", "api.parse (+api.tokens)"));
	assert_non_null(x = finding_of(&a, "decoy", "api.other"));
	assert_int_equal(x->direction, FINDING_IMPROVEMENT);
	analysis_release(&a);
}

/*
 * A caller of most of the service falls by more than half of any new
 * code's share from dilution alone: a new check of 17% under a loop of
 * 87% left unchanged is a regression from nothing (it was merged,
 * "api.loop (+api.fraud)", and no finding). Cost moved out of that loop
 * into a new helper is still one function, and no finding.
 */
static void test_new_code_under_a_dominant_caller_is_no_move(void **state)
{
	static const char *const names[] = {"dominant", "dominantmove"};
	static const char *const d1[] = {"api.loop"};
	static const char *const d2[] = {"api.loop", "api.loop;api.fraud"};
	static const int dw1[] = {85000}, dw2[] = {85000, 20000}, mw2[] = {65000, 20000};
	fx *f = *state;
	analysis a;
	const finding *x;

	family_service(f, "dominant", d1, dw1, 1, d2, dw2, 2);
	family_service(f, "dominantmove", d1, dw1, 1, d2, mw2, 2);
	analyse_all(f, &a, names, 2);
	assert_non_null(x = finding_of(&a, "dominant", "api.fraud"));
	assert_int_equal(x->direction, FINDING_REGRESSION);
	for (size_t i = 0; i < a.ntests && a.tests[i].significant; i++) {
		const finding *t = &a.tests[i];
		if (strcmp(t->service, "dominantmove") == 0 ||
		    (strcmp(t->service, "dominant") == 0 && strstr(t->function, "(+")))
			fail_msg("%s: %s %.4f -> %.4f", t->service, t->function, t->baseline_share,
				 t->current_share);
	}
	analysis_release(&a);
}

/*
 * Cost that came or went under an unchanged function is not paired with
 * an ancestor whose own self time moved for another reason: a new
 * fraud check under validate(), released with a cheaper handler above
 * it, is a regression from nothing (paired, "api.handle (+api.fraud)"
 * was no finding), and a deleted check under validate() leaves a rise
 * of the handler's own code a regression. A helper extracted beside a
 * callee with a deep subtree of its own (which also looks large enough
 * to hold it) is still paired with the caller it came from.
 */
static void test_new_code_under_an_unchanged_caller_is_not_paired_with_its_ancestor(
	void **state)
{
	static const char *const names[] = {"added", "deleted", "beside"};
	static const char *const v1[] = {"api.handle", "api.handle;api.validate"};
	static const char *const v2[] = {"api.handle", "api.handle;api.validate",
					 "api.handle;api.validate;api.fraud"};
	static const char *const s1[] = {"api.parse", "api.parse;api.read",
					 "api.parse;api.read;sys.read"};
	static const char *const s2[] = {"api.parse", "api.parse;api.read",
					 "api.parse;api.read;sys.read", "api.parse;api.tokens"};
	static const int aw1[] = {1500, 600}, aw2[] = {900, 600, 600}, dw1[] = {900, 600, 600},
			 dw2[] = {1500, 600}, sw1[] = {2000, 200, 1000},
			 sw2[] = {1200, 200, 1000, 800};
	fx *f = *state;
	analysis a;
	const finding *x;

	family_service(f, "added", v1, aw1, 2, v2, aw2, 3);
	family_service(f, "deleted", v2, dw1, 3, v1, dw2, 2);
	family_service(f, "beside", s1, sw1, 3, s2, sw2, 4);
	analyse_all(f, &a, names, 3);
	for (size_t i = 0; i < a.ntests; i++)
		if (strcmp(a.tests[i].service, "beside") != 0 && strstr(a.tests[i].function, "(+"))
			fail_msg("%s: %s", a.tests[i].service, a.tests[i].function);
	assert_non_null(x = finding_of(&a, "added", "api.fraud"));
	assert_int_equal(x->direction, FINDING_REGRESSION);
	assert_non_null(x = finding_of(&a, "deleted", "api.handle"));
	assert_int_equal(x->direction, FINDING_REGRESSION);
	assert_null(finding_of(&a, "beside", "api.tokens"));
	assert_null(finding_of(&a, "beside", "api.parse (+api.tokens)"));
	for (size_t i = 0; i < a.ntests; i++)
		if (strcmp(a.tests[i].service, "beside") == 0 &&
		    strstr(a.tests[i].function, "api.tokens"))
			assert_string_equal(a.tests[i].function, "api.parse (+api.tokens)");
	analysis_release(&a);
}

/*
 * A caller whose share moved by no more than its captures' spread says
 * nothing of where a new function's cost came from: a new check of 0.4%
 * under a handler of 20% whose share read 1.7% lower (each capture within
 * the baseline's 5%) is a regression from nothing, not
 * "api.handle (+api.fraud)" and no finding.
 */
static void test_a_new_function_is_not_paired_with_a_caller_that_moved_within_its_noise(
	void **state)
{
	static const char *const names[] = {"noisy"};
	static const char *const n1[] = {"api.handle"};
	static const char *const n2[] = {"api.handle", "api.handle;api.fraud"};
	static const int nw1[] = {3000}, nw2[] = {2950, 70};
	fx *f = *state;
	analysis a;
	const finding *x;

	family_service(f, "noisy", n1, nw1, 1, n2, nw2, 2);
	analyse_all(f, &a, names, 1);
	for (size_t i = 0; i < a.ntests; i++)
		if (strstr(a.tests[i].function, "(+"))
			fail_msg("%s: %s", a.tests[i].service, a.tests[i].function);
	assert_non_null(x = finding_of(&a, "noisy", "api.fraud"));
	assert_int_equal(x->direction, FINDING_REGRESSION);
	assert_null(finding_of(&a, "noisy", "api.handle"));
	analysis_release(&a);
}

/*
 * Baseline captures that retention cut to their top functions do not
 * know the small ones. When a helper extracted from such a function is
 * judged with it ("api.parse (+api.tokens)"), a capture that knows
 * neither must stay unknown: summed as numbers, the two "unknown" marks
 * made a value of -2, a negative share in the baseline.
 */
static void test_a_pair_summed_over_cut_captures_stays_unknown_where_neither_is_known(
	void **state)
{
	static const char *const names[] = {"cut"};
	static const char *const b1[] = {"api.handle", "api.handle;api.parse"};
	static const char *const x2[] = {"api.handle", "api.handle;api.parse",
					 "api.handle;api.parse;api.tokens"};
	static const int w1[] = {300, 2000}, xw[] = {300, 1200, 1600};
	fx *f = *state;
	analysis a;
	const finding *t = NULL;

	family_service(f, "cut", b1, w1, 2, x2, xw, 3);
	/* Cut 8 of the 28 baseline captures to their top: api.parse left out. */
	testdb_execf(f->t,
		     "update profile_vectors v set (function_ids, self_values, total_values) ="
		     " (select array_agg(x.id order by x.id), array_agg(x.s order by x.id),"
		     "  array_agg(x.t order by x.id) from"
		     "  (select u.id, u.s, u.t from unnest(v.function_ids, v.self_values,"
		     "   v.total_values) u(id, s, t) join functions fn on fn.id = u.id"
		     "   where fn.name <> 'api.parse'"
		     "   union all select fn.id, 2000, 2000 from functions fn"
		     "   where fn.synthetic) x)"
		     " where v.profile_id in (select p.id from profiles p join services s"
		     "  on s.id = p.service_id where s.name = 'cut' and p.release = 'v1'"
		     "  order by p.id limit 8)");
	analyse_all(f, &a, names, 1);
	for (size_t i = 0; i < a.ntests; i++) {
		if (strcmp(a.tests[i].function, "api.parse (+api.tokens)") == 0)
			t = &a.tests[i];
		if (!(a.tests[i].baseline_share >= 0) || !(a.tests[i].current_share >= 0))
			fail_msg("%s: %s %.4f -> %.4f", a.tests[i].service, a.tests[i].function,
				 a.tests[i].baseline_share, a.tests[i].current_share);
	}
	assert_non_null(t);
	assert_int_equal(t->baseline_captures, 20);
	assert_true(t->significant && t->direction == FINDING_REGRESSION);
	analysis_release(&a);
}

/* A target's skip reason, or NULL when it was not skipped. */
static const char *skip_reason(const analysis *a, const char *service)
{
	for (size_t i = 0; i < a->nskipped; i++)
		if (strcmp(a->skipped[i].service, service) == 0)
			return a->skipped[i].reason;
	return NULL;
}

/*
 * A build that lost its symbols is not judged: its samples moved into
 * nameless frames, so every function fell and "[unknown]" rose. A
 * nameless frame that is steady (a stripped library in both releases)
 * leaves the service judged as usual.
 */
static void test_a_release_that_lost_its_symbols_is_not_judged(void **state)
{
	static const char *const names[] = {"stripped", "steady"};
	fx *f = *state;
	analysis a;
	const char *why;

	renamed_service(f, "stripped", "work.hot", "[unknown]", 6, NULL, NULL);
	renamed_service(f, "steady", "work.hot", "work.hot", 2, "[libcrypto.so.3]",
			"[libcrypto.so.3]");
	analyse_all(f, &a, names, 2);
	assert_non_null(why = skip_reason(&a, "stripped"));
	assert_non_null(strstr(why, "in frames without a name"));
	assert_non_null(strstr(why, "the release lost its symbols"));
	assert_null(finding_of(&a, "stripped", "[unknown]"));
	assert_null(skip_reason(&a, "steady"));
	assert_non_null(finding_of(&a, "steady", "work.hot"));
	assert_int_equal(a.services, 1);
	analysis_release(&a);
}

/*
 * A release whose captures all hold no samples (an idle service, a
 * profiler that sends empty profiles) was captured: the skip says so, and
 * is not the "no captures" that makes a release name an error. A baseline
 * too thin for the same reason counts them too.
 */
static void test_a_release_of_empty_captures_is_skipped_as_such(void **state)
{
	static const char *const names[] = {"idle", "mute"};
	fx *f = *state;
	analysis a;
	const char *why;
	char text[32];

	testdb_execf(f->t, "insert into services (name, enabled) values ('idle', true)");
	for (int day = 14; day >= 1; day--)
		capture(f, "idle", "v1", NIGHT_END - day * DAY, 1);
	capture_text(f, "idle", "v2", NIGHT_END - 5 * 3600 * 1000000LL, "");
	capture_text(f, "idle", "v2", NIGHT_END - 4 * 3600 * 1000000LL, "main;serve 0\n");
	testdb_execf(f->t, "insert into services (name, enabled) values ('mute', true)");
	for (int day = 6; day >= 1; day--) {
		capture(f, "mute", "v1", NIGHT_END - day * DAY, 1);
		snprintf(text, sizeof(text), "main;wait%d 0\n", day);
		capture_text(f, "mute", "v1", NIGHT_END - day * DAY + 3600 * 1000000LL, text);
	}
	capture(f, "mute", "v2", NIGHT_END - 3600 * 1000000LL, 1);
	analyse_all(f, &a, names, 2);
	assert_non_null(why = skip_reason(&a, "idle"));
	assert_string_equal(why, "the 2 cpu captures of release 'v2' hold no samples");
	assert_false(a.skipped[0].no_current);
	assert_non_null(why = skip_reason(&a, "mute"));
	assert_non_null(strstr(why, "insufficient baseline: 6 eligible cpu captures"));
	assert_non_null(strstr(why, "(need 8); 6 more there hold no samples"));
	assert_int_equal(a.services, 0);
	analysis_release(&a);
}

/* One capture of `service` with these self counts, each varying by 5%. */
static void capture_counts(fx *f, const char *service, const char *release, int64_t at,
			   const char *const *names, const int *counts, size_t n)
{
	char text[512];
	size_t len = 0;

	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "main;serve;%s %d\n",
					names[i], (int)(counts[i] * noise(f, 0.05)));
	capture_text(f, service, release, at, text);
}

/* A service of `funcs` whose counts are `before` for 14 days and `after` in v2. */
static void counted_service(fx *f, const char *name, const char *const *funcs,
			    const int *before, const int *after, size_t n)
{
	testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)", name);
	for (int day = 14; day >= 1; day--) {
		capture_counts(f, name, "v1", NIGHT_END - day * DAY - 9 * 3600 * 1000000LL, funcs,
			       before, n);
		capture_counts(f, name, "v1", NIGHT_END - day * DAY - 3 * 3600 * 1000000LL, funcs,
			       before, n);
	}
	for (int k = 0; k < 4; k++)
		capture_counts(f, name, "v2", NIGHT_END - (20 - 4 * k) * 3600 * 1000000LL, funcs,
			       after, n);
}

/*
 * A function that held most of the time and doubled: every other share
 * falls by more than its own rose (60% -> 75% against 20% -> 12.5%), yet
 * they all fell by one factor, which is dilution. It is the regression,
 * and the others are relative shifts, not improvements. The same
 * function made twice as cheap is an improvement, and the others, which
 * rose by more than it fell, are no regressions.
 */
static void test_a_function_that_held_most_of_the_time_and_doubled_is_the_regression(
	void **state)
{
	static const char *const names[] = {"hot", "cool"};
	static const char *const funcs[] = {"zip.deflate", "io.read", "json.encode", "log.write"};
	static const int before[] = {6000, 2000, 1200, 800}, slower[] = {12000, 2000, 1200, 800},
			 faster[] = {3000, 2000, 1200, 800};
	fx *f = *state;
	analysis a;
	const finding *x;

	counted_service(f, "hot", funcs, before, slower, 4);
	counted_service(f, "cool", funcs, before, faster, 4);
	analyse_all(f, &a, names, 2);
	assert_non_null(x = finding_of(&a, "hot", "zip.deflate"));
	assert_int_equal(x->direction, FINDING_REGRESSION);
	assert_non_null(x = finding_of(&a, "cool", "zip.deflate"));
	assert_int_equal(x->direction, FINDING_IMPROVEMENT);
	for (size_t i = 1; i < 4; i++) {
		if ((x = finding_of(&a, "hot", funcs[i])))
			assert_int_equal(x->direction, FINDING_RELATIVE_SHIFT);
		if ((x = finding_of(&a, "cool", funcs[i])))
			assert_int_equal(x->direction, FINDING_RELATIVE_SHIFT);
	}
	analysis_release(&a);
}

/*
 * A release judged on one capture has no spread of its own. One taken
 * six times noisier than the baseline's (a busy host, a process still
 * warming up) moved every share, and a typical release's spread made
 * regressions of them; its noise is now read off its distance from the
 * baseline across all functions. One quiet capture with a doubled
 * function is still a regression.
 */
static void test_one_noisy_capture_is_judged_by_its_own_noise(void **state)
{
	static const char *const names[] = {"noisy1", "noisy2", "noisy3", "noisy4", "doubled"};
	fx *f = *state;
	analysis a;

	for (size_t s = 0; s < 5; s++) {
		testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)",
			     names[s]);
		for (int day = 14; day >= 1; day--) {
			capture(f, names[s], "v1", NIGHT_END - day * DAY - 9 * 3600 * 1000000LL, 1);
			capture(f, names[s], "v1", NIGHT_END - day * DAY - 3 * 3600 * 1000000LL, 1);
		}
		if (s < 4)
			capture_spread(f, names[s], "v2", NIGHT_END - 3600 * 1000000LL, 1, 0.3);
		else
			capture(f, names[s], "v2", NIGHT_END - 3600 * 1000000LL, 2);
	}
	analyse_all(f, &a, names, 5);
	for (size_t s = 0; s < 4; s++)
		if (regression(&a, names[s]))
			fail_msg("%s: a regression of %s in a null release", names[s],
				 regression(&a, names[s])->function);
	assert_non_null(regression(&a, "doubled"));
	assert_string_equal(regression(&a, "doubled")->function, "work.hot");
	analysis_release(&a);
}

/*
 * Service "slower", its parseKey renamed and twice as slow, analysed into
 * a on `week` (NULL: the options'), its worker's part in *part merged
 * into b: both analyses are the caller's to finish and release.
 */
static void slower_part(fx *f, analysis *a, analysis *b, json_t **part,
			const analysis_week *week)
{
	analysis_opts o;
	pr_error err = PR_ERROR_INIT;
	analysis_target t = {0, "slower", "cpu", "v2", 0, 0, NULL, NULL, week, NULL};

	renamed_service(f, "slower", "store.(*Cache).parseKey", "store.(*Cache).parseCacheKey",
			2, NULL, NULL);
	t.service_id = testdb_int(f->t, "select id from services where name = 'slower'");
	analysis_opts_default(&o);
	o.at_us = NIGHT_END;
	analysis_init(a, &o);
	analysis_init(b, &o);
	assert_int_equal(analysis_add(a, f->t->db, &t, false, &err), 0);
	assert_int_equal(analysis_part_json(part, a), 0);
	if (analysis_part_merge(b, *part, &err) < 0)
		fail_msg("merge: %s", err.msg);
}

/* A worker's part carries the renamed finding whole to the process that finishes. */
static void test_a_renamed_function_travels_in_a_worker_part(void **state)
{
	fx *f = *state;
	analysis a, b;
	json_t *part = NULL;
	pr_error err = PR_ERROR_INIT;
	const finding *x, *y;

	slower_part(f, &a, &b, &part, NULL);
	json_decref(part);
	assert_int_equal(analysis_finish(&a, &err), 0);
	assert_int_equal(analysis_finish(&b, &err), 0);
	assert_non_null(x = finding_of(&a, "slower", "store.(*Cache).parseCacheKey"));
	assert_non_null(y = finding_of(&b, "slower", "store.(*Cache).parseCacheKey"));
	assert_non_null(y->renamed_from);
	assert_string_equal(y->renamed_from, x->renamed_from);
	assert_true(y->p_value == x->p_value && y->q_value == x->q_value);
	analysis_release(&a);
	analysis_release(&b);
}

/*
 * A service's own week travels in a worker's part: the process that
 * finishes the night judges and stores its findings on that week, not on
 * its own options' (a worker's part without a week or a day share, from
 * an older worker, is read on the options' week and without one).
 */
static void test_a_service_s_own_week_travels_in_a_worker_part(void **state)
{
	fx *f = *state;
	analysis_opts o;
	analysis a, b;
	analysis_week gulf = {3, 5, 2};
	json_t *part = NULL, *older;
	pr_error err = PR_ERROR_INIT;
	size_t i;
	json_t *v;

	slower_part(f, &a, &b, &part, &gulf);
	assert_true(b.ntests > 0);
	for (size_t k = 0; k < b.ntests; k++) {
		assert_true(b.tests[k].week.utc_offset_h == 3);
		assert_int_equal(b.tests[k].week.weekend_first, 5);
		assert_int_equal(b.tests[k].week.weekend_days, 2);
	}
	analysis_release(&b);
	/* An older worker's part: no week and no day share in its targets. */
	older = json_deep_copy(part);
	json_array_foreach(json_object_get(older, "targets"), i, v) {
		json_object_del(v, "week");
		json_object_del(v, "day_rho");
	}
	analysis_opts_default(&o);
	o.at_us = NIGHT_END;
	analysis_init(&b, &o);
	assert_int_equal(analysis_part_merge(&b, older, &err), 0);
	assert_true(b.ntests > 0);
	assert_int_equal(b.tests[0].week.weekend_first, 6);
	assert_int_equal(b.tests[0].week.weekend_days, 2);
	json_decref(older);
	json_decref(part);
	analysis_release(&a);
	analysis_release(&b);
}

/*
 * Only a pair that names itself is one function: a function of another
 * container and another name is new code beside a removed one, and two
 * renames in one container pair by the nearest name, when one is nearest
 * (parseKey to parseCacheKey, readKey to readCacheKey), a word added
 * before fewer edits (mergeOffers to mergeOffersAsync, not
 * mergeOfferAsync), and not at all when the names cannot tell (loadA
 * and loadB to loadC and loadD).
 */
static void test_two_renames_in_a_container_pair_by_the_nearest_name(void **state)
{
	static const char *const names[] = {"apart", "twice", "even", "siblings", "cppstd"};
	fx *f = *state;
	analysis a;
	const finding *x;

	renamed_service(f, "apart", "store.(*Cache).parseKey", "billing.Ledger.post", 1, NULL,
			NULL);
	renamed_service(f, "twice", "store.(*Cache).parseKey", "store.(*Cache).parseCacheKey", 2,
			"store.(*Cache).readKey", "store.(*Cache).readCacheKey");
	renamed_service(f, "even", "store.(*Cache).loadA", "store.(*Cache).loadC", 1,
			"store.(*Cache).loadB", "store.(*Cache).loadD");
	renamed_service(f, "siblings", "offer.(*Book).mergeOffer", "offer.(*Book).mergeOfferAsync",
			2, "offer.(*Book).mergeOffers", "offer.(*Book).mergeOffersAsync");
	/* C++ keeps the parameters, whose "::" is no container. */
	renamed_service(f, "cppstd", "acme::QuoteEngine::loadQuote(std::string const&)",
			"acme::QuoteEngine::loadQuoteV2(std::string const&)", 1, NULL, NULL);
	analyse_all(f, &a, names, 5);
	assert_non_null(x = finding_of(&a, "apart", "billing.Ledger.post"));
	assert_int_equal(x->direction, FINDING_REGRESSION);
	assert_null(x->renamed_from);
	assert_non_null(x = finding_of(&a, "apart", "store.(*Cache).parseKey"));
	assert_int_equal(x->direction, FINDING_IMPROVEMENT);
	/* parseKey's baseline (2000 samples, 12.5%), not readKey's (1500), doubled. */
	assert_non_null(x = finding_of(&a, "twice", "store.(*Cache).parseCacheKey"));
	assert_int_equal(x->direction, FINDING_REGRESSION);
	assert_non_null(x->renamed_from);
	assert_string_equal(x->renamed_from, "store.(*Cache).parseKey");
	assert_true(x->baseline_share > 0.115 && x->baseline_share < 0.14);
	/* readKey's share fell only as parseKey's rise diluted it, if at all. */
	if ((x = finding_of(&a, "twice", "store.(*Cache).readCacheKey"))) {
		assert_int_equal(x->direction, FINDING_RELATIVE_SHIFT);
		assert_non_null(x->renamed_from);
		assert_string_equal(x->renamed_from, "store.(*Cache).readKey");
	}
	assert_null(finding_of(&a, "twice", "store.(*Cache).readKey"));
	assert_null(finding_of(&a, "twice", "store.(*Cache).parseKey"));
	assert_non_null(x = finding_of(&a, "even", "store.(*Cache).loadC"));
	assert_null(x->renamed_from);
	assert_non_null(x = finding_of(&a, "even", "store.(*Cache).loadD"));
	assert_null(x->renamed_from);
	/* A word added: mergeOffers is mergeOffersAsync, not mergeOfferAsync (fewer edits). */
	assert_non_null(x = finding_of(&a, "siblings", "offer.(*Book).mergeOfferAsync"));
	assert_int_equal(x->direction, FINDING_REGRESSION);
	assert_non_null(x->renamed_from);
	assert_string_equal(x->renamed_from, "offer.(*Book).mergeOffer");
	assert_true(x->baseline_share > 0.115 && x->baseline_share < 0.14);
	if ((x = finding_of(&a, "siblings", "offer.(*Book).mergeOffersAsync"))) {
		assert_int_equal(x->direction, FINDING_RELATIVE_SHIFT);
		assert_string_equal(x->renamed_from, "offer.(*Book).mergeOffers");
	}
	assert_null(finding_of(&a, "cppstd", "acme::QuoteEngine::loadQuoteV2(std::string const&)"));
	assert_null(finding_of(&a, "cppstd", "acme::QuoteEngine::loadQuote(std::string const&)"));
	analysis_release(&a);
}

/*
 * A function moved to another class or package under its own name
 * ("ledger.(*Rules).flushPlan" to "ledgerutil.FlushPlan", exported on the
 * way) is the same code: judged against its old name, no finding. Not so
 * where the own name does not say which code it is: a numbered closure
 * of another function ("api.handle.func1" gone, "api.serve.func1" new),
 * a method of another anonymous class ("app.Outer$1.apply"), a C++
 * parameter list cut at its last "::" ("get(std::string const&)" and
 * "dispatch(std::string const&)"), a name every package has
 * ("legacy.init", "feature.init"), a name moved while another of the same
 * name came elsewhere, or one a third function still has. A class renamed
 * keeps its methods' baselines; a class replaced by another that
 * implements the same interface ("AuditFilter.doFilter" gone,
 * "RateLimitFilter.doFilter" new) does not, nor does a Python function
 * gone from one file and new in another while a third file keeps one of
 * that name.
 */
static void test_a_function_moved_to_another_container_keeps_its_baseline(void **state)
{
	static const char *const names[] = {"moved",     "closure", "twice",    "anonymous",
					    "cpp",       "init",    "shared",   "renamed",
					    "interface", "python",  "cppclass", "generic"};
	fx *f = *state;
	analysis a;
	const finding *x;

	renamed_service(f, "moved", "ledger.(*Rules).flushPlan", "ledgerutil.FlushPlan", 1,
			"ledger.(*Rules).checkRule", "ledger.(*Rules).checkRule");
	renamed_service(f, "renamed", "com.acme.TaxService.computeRule",
			"com.acme.TaxEngine.computeRule", 1, "com.acme.TaxService.loadToken",
			"com.acme.TaxEngine.loadToken");
	renamed_service(f, "interface", "audit.AuditFilter.doFilter",
			"ratelimit.RateLimitFilter.doFilter", 1, NULL, NULL);
	renamed_service(f, "python", "handle (app/audit.py)", "handle (app/scorer.py)", 1,
			"handle (app/orders.py)", "handle (app/orders.py)");
	renamed_service(f, "closure", "api.handle.func1", "api.serve.func1", 1, NULL, NULL);
	renamed_service(f, "anonymous", "app.Outer$1.apply", "app.Other$2.apply", 1, NULL, NULL);
	renamed_service(f, "cpp", "app::Cache::get(std::string const&)",
			"app::Router::dispatch(std::string const&)", 1, NULL, NULL);
	renamed_service(f, "init", "legacy.init", "feature.init", 1, NULL, NULL);
	renamed_service(f, "shared", "old.(*A).encodeRow", "fresh.(*B).encodeRow", 1,
			"other.(*C).encodeRow", "other.(*C).encodeRow");
	renamed_service(f, "twice", "ledger.(*Rules).flushPlan", "ledgerutil.flushPlan", 1,
			"cache.(*Store).load", "batch.flushPlan");
	renamed_service(f, "cppclass", "acme::TaxService::computeRule(double)",
			"acme::TaxEngine::computeRule(double)", 1,
			"acme::TaxService::loadToken(double)",
			"acme::TaxEngine::loadToken(double)");
	/* A class renamed takes its methods that say nothing alone along. */
	renamed_service(f, "generic", "com.acme.TaxService.computeRule",
			"com.acme.TaxEngine.computeRule", 1, "com.acme.TaxService.toString",
			"com.acme.TaxEngine.toString");
	analyse_all(f, &a, names, 12);
	assert_null(finding_of(&a, "generic", "com.acme.TaxEngine.toString"));
	assert_null(finding_of(&a, "generic", "com.acme.TaxEngine.computeRule"));
	assert_null(finding_of(&a, "cppclass", "acme::TaxEngine::computeRule(double)"));
	assert_null(finding_of(&a, "cppclass", "acme::TaxEngine::loadToken(double)"));
	assert_null(finding_of(&a, "moved", "ledgerutil.FlushPlan"));
	assert_null(finding_of(&a, "renamed", "com.acme.TaxEngine.computeRule"));
	assert_null(finding_of(&a, "renamed", "com.acme.TaxEngine.loadToken"));
	assert_non_null(x = finding_of(&a, "interface", "ratelimit.RateLimitFilter.doFilter"));
	assert_null(x->renamed_from);
	assert_non_null(x = finding_of(&a, "python", "handle (app/scorer.py)"));
	assert_null(x->renamed_from);
	assert_null(finding_of(&a, "moved", "ledger.(*Rules).flushPlan"));
	assert_non_null(x = finding_of(&a, "closure", "api.serve.func1"));
	assert_null(x->renamed_from);
	assert_non_null(x = finding_of(&a, "anonymous", "app.Other$2.apply"));
	assert_null(x->renamed_from);
	assert_non_null(x = finding_of(&a, "cpp", "app::Router::dispatch(std::string const&)"));
	assert_null(x->renamed_from);
	assert_non_null(x = finding_of(&a, "init", "feature.init"));
	assert_null(x->renamed_from);
	assert_non_null(x = finding_of(&a, "shared", "fresh.(*B).encodeRow"));
	assert_null(x->renamed_from);
	assert_non_null(x = finding_of(&a, "twice", "ledgerutil.flushPlan"));
	assert_null(x->renamed_from);
	assert_non_null(x = finding_of(&a, "twice", "batch.flushPlan"));
	assert_null(x->renamed_from);
	analysis_release(&a);
}

static void test_the_nightly_job_finds_the_regression_and_records_an_ok_run(void **state)
{
	fx *f = *state;
	nightly_opts o = {0};
	nightly_result r;
	pr_error err = PR_ERROR_INIT;

	service(f, "bad", 2);
	service(f, "good", 1);
	assert_int_equal(nightly_run(&r, &f->env, &o, &err), 0);
	assert_string_equal(r.status, "ok");
	assert_int_equal(r.at_us, NIGHT_END);
	assert_int_equal(r.analysed, 2);
	assert_non_null(regression(&r.a, "bad"));
	assert_int_equal(testdb_int(f->t, "select count(*) from runs where kind = 'nightly'"
					  " and status = 'ok'"), 1);
	assert_int_equal(testdb_int(f->t, "select count(*) from findings"
					  " where direction = 'regression'"), 1);
	assert_non_null(r.report);
	nightly_result_release(&r);
}

/*
 * A service whose cpu captures were judged and whose heap captures were
 * missing that night was analysed, not skipped: called skipped, a fleet
 * without heap captures one night counted no service analysed although
 * every cpu profile was judged. The part left out still says why.
 */
static void test_a_service_judged_for_one_type_of_two_is_analysed(void **state)
{
	fx *f = *state;
	nightly_opts o = {0};
	nightly_result r;
	pr_error err = PR_ERROR_INIT;
	json_t *bad;

	use_config(f, "types", "{\"services\": {\"bad\": {\"types\": [\"cpu\", \"heap\"]}}}");
	service(f, "bad", 2);
	assert_int_equal(nightly_run(&r, &f->env, &o, &err), 0);
	assert_string_equal(r.status, "ok");
	assert_int_equal(r.analysed, 1);
	assert_int_equal(r.skipped, 0);
	assert_non_null(regression(&r.a, "bad"));
	bad = json_object_get(r.services, "bad");
	assert_string_equal(json_string_value(json_object_get(bad, "status")), "analysed");
	assert_non_null(strstr(json_string_value(json_object_get(bad, "reason")),
			       "heap not judged: "));
	nightly_result_release(&r);
}

/*
 * A rollout night: the old release's captures were judged, the release
 * deployed last in the night lost its symbols and was not. The service
 * is skipped, not analysed: called analysed, the night passed although
 * the release running now was never judged, and its reason said the
 * type had not been judged when it had.
 */
static void test_a_night_whose_newest_release_was_not_judged_skips_the_service(void **state)
{
	fx *f = *state;
	nightly_opts o = {0};
	nightly_result r;
	pr_error err = PR_ERROR_INIT;
	const char *why;
	json_t *svc;

	service(f, "svc", 1);
	for (int h = 3; h >= 1; h--)
		capture_text(f, "svc", "v3", NIGHT_END - h * 3600 * 1000000LL,
			     "main;serve;work.a 900\n[unknown] 4000\n0x7f3a12 3000\n");
	assert_int_equal(nightly_run(&r, &f->env, &o, &err), 0);
	assert_string_equal(r.status, "incomplete");
	assert_int_equal(r.analysed, 0);
	assert_int_equal(r.skipped, 1);
	svc = json_object_get(r.services, "svc");
	assert_string_equal(json_string_value(json_object_get(svc, "status")), "skipped");
	why = json_string_value(json_object_get(svc, "reason"));
	assert_non_null(strstr(why, "cpu release 'v3' not judged: "));
	assert_non_null(strstr(why, "lost its symbols"));
	nightly_result_release(&r);
}

/*
 * The same night with heap captures too, all of the old release (judged):
 * the release deployed last was still judged in no type, so the service
 * is skipped. Taken type by type, heap's newest release was v2, judged,
 * and the service passed as analysed.
 */
static void test_a_newest_release_judged_in_no_type_skips_the_service(void **state)
{
	fx *f = *state;
	nightly_opts o = {0};
	nightly_result r;
	pr_error err = PR_ERROR_INIT;
	json_t *svc;

	use_config(f, "types", "{\"services\": {\"svc\": {\"types\": [\"cpu\", \"heap\"]}}}");
	service(f, "svc", 1);
	for (int day = 14; day >= 1; day--)
		for (int k = 0; k < 2; k++)
			capture_text_type(f, "svc", "v1",
					  NIGHT_END - day * DAY - (9 - 6 * k) * HOUR,
					  k ? "main;alloc.a 3100\nmain;alloc.b 1900\n"
					    : "main;alloc.a 2900\nmain;alloc.b 2100\n", "heap");
	for (int k = 0; k < 4; k++)
		capture_text_type(f, "svc", "v2", NIGHT_END - (20 - 4 * k) * HOUR,
				  k % 2 ? "main;alloc.a 3050\nmain;alloc.b 1950\n"
					: "main;alloc.a 2950\nmain;alloc.b 2050\n", "heap");
	for (int h = 3; h >= 1; h--)
		capture_text(f, "svc", "v3", NIGHT_END - h * HOUR,
			     "main;serve;work.a 900\n[unknown] 4000\n0x7f3a12 3000\n");
	assert_int_equal(nightly_run(&r, &f->env, &o, &err), 0);
	svc = json_object_get(r.services, "svc");
	assert_string_equal(json_string_value(json_object_get(svc, "status")), "skipped");
	assert_non_null(strstr(json_string_value(json_object_get(svc, "reason")),
			       "cpu release 'v3' not judged: "));
	assert_string_equal(r.status, "incomplete");
	nightly_result_release(&r);
}

static void test_a_night_that_analyses_nothing_is_incomplete(void **state)
{
	fx *f = *state;
	nightly_opts o = {0};
	nightly_result r;
	pr_error err = PR_ERROR_INIT;

	service(f, "bad", 2);
	testdb_execf(f->t, "update services set enabled = false");
	assert_int_equal(nightly_run(&r, &f->env, &o, &err), 0);
	assert_string_equal(r.status, "incomplete");
	assert_int_equal(r.analysed, 0);
	assert_int_equal(r.skipped, 1);
	assert_int_equal(testdb_int(f->t, "select count(*) from runs where status = 'incomplete'"),
			 1);
	nightly_result_release(&r);
}

static void test_the_postdeploy_job_fails_a_regression_and_passes_a_clean_release(void **state)
{
	fx *f = *state;
	postdeploy_opts o = {"bad",          "v2", SHA_V2, NULL, NULL, 0, 4,
			     STATS_SEV_HIGH, 0,    0,      NULL, NULL, 0, 0};
	postdeploy_result r;
	pr_error err = PR_ERROR_INIT;

	service(f, "bad", 2);
	service(f, "good", 1);
	assert_int_equal(postdeploy_run(&r, &f->env, &o, &err), 0);
	assert_string_equal(r.verdict, "fail");
	assert_int_equal(r.captures, 4);
	assert_string_equal(r.sha, SHA_V2);
	assert_non_null(regression(&r.a, "bad"));
	postdeploy_result_release(&r);
	o.service = "good";
	assert_int_equal(postdeploy_run(&r, &f->env, &o, &err), 0);
	assert_string_equal(r.verdict, "pass");
	postdeploy_result_release(&r);
	assert_int_equal(testdb_int(f->t, "select count(*) from deploys"), 2);
}

static void test_the_postdeploy_job_is_inconclusive_with_too_few_captures(void **state)
{
	fx *f = *state;
	postdeploy_opts o = {"good",         "v2", SHA_V2, NULL, NULL, 0, 10,
			     STATS_SEV_HIGH, 0,    0,      NULL, NULL, 0, 0};
	postdeploy_result r;
	pr_error err = PR_ERROR_INIT;

	service(f, "good", 1);
	assert_int_equal(postdeploy_run(&r, &f->env, &o, &err), 0);
	assert_string_equal(r.verdict, "inconclusive");
	assert_int_equal(json_array_size(r.reasons), 1);
	assert_non_null(
		strstr(json_string_value(json_array_get(r.reasons, 0)), "only 4 of the 10"));
	postdeploy_result_release(&r);
}

/* Two captures of v2 (work.hot doubled) on each of the two nights before service()'s. */
static void two_nights_before(fx *f, const char *name)
{
	for (int night = 1; night <= 2; night++)
		for (int k = 0; k < 2; k++)
			capture(f, name, "v2", NIGHT_END - night * DAY - (20 - 8 * k) * HOUR, 2);
}

/*
 * A release that has run for more nights than the looks planned for it,
 * judged on them (a rollback to it, or its promotion to another stage),
 * has no alpha left: its 2x regression is significant on no look. The
 * gate does not pass it as clean.
 */
static void test_the_postdeploy_job_is_inconclusive_past_the_planned_looks(void **state)
{
	fx *f = *state;
	postdeploy_opts o = {"bad",          "v2", SHA_V2, NULL, NULL, 0, 4,
			     STATS_SEV_HIGH, 0,    0,      NULL, NULL, 0, 0};
	postdeploy_result r;
	pr_error err = PR_ERROR_INIT;

	use_config(f, "looks", "{\"analysis\": {\"max_looks\": 2}}");
	service(f, "bad", 2);
	two_nights_before(f, "bad");
	/* Judged on its first night, when it deployed. */
	o.at_us = NIGHT_END - 2 * DAY;
	o.min_captures = 1;
	assert_int_equal(postdeploy_run(&r, &f->env, &o, &err), 0);
	postdeploy_result_release(&r);
	o.at_us = 0;
	o.min_captures = 4;
	assert_int_equal(postdeploy_run(&r, &f->env, &o, &err), 0);
	assert_string_equal(r.verdict, "inconclusive");
	assert_null(regression(&r.a, "bad"));
	assert_int_equal(json_array_size(r.reasons), 1);
	assert_non_null(strstr(json_string_value(json_array_get(r.reasons, 0)),
			       "planned looks (analysis.max_looks) before this one, look 3"));
	postdeploy_result_release(&r);
}

/*
 * The same release, when no run judged it on its earlier nights (deployed
 * while no nightly ran): those looks were never taken, so this first one
 * spends their alpha too (stats_seq_pvalue_from), and the regression
 * fails the gate. Judged with no alpha, it found nothing, and was then
 * the baseline of the next release.
 */
static void test_a_release_first_judged_past_its_looks_spends_them(void **state)
{
	fx *f = *state;
	postdeploy_opts o = {"bad",          "v2", SHA_V2, NULL, NULL, 0, 4,
			     STATS_SEV_HIGH, 0,    0,      NULL, NULL, 0, 0};
	postdeploy_result r;
	pr_error err = PR_ERROR_INIT;

	use_config(f, "looks", "{\"analysis\": {\"max_looks\": 2}}");
	service(f, "bad", 2);
	two_nights_before(f, "bad");
	assert_int_equal(postdeploy_run(&r, &f->env, &o, &err), 0);
	assert_string_equal(r.verdict, "fail");
	assert_non_null(regression(&r.a, "bad"));
	assert_int_equal(regression(&r.a, "bad")->look, 3);
	assert_int_equal(regression(&r.a, "bad")->first_look, 1);
	postdeploy_result_release(&r);
}

/*
 * A release judged the night before, at the very end of that night, was
 * tested on that look: tonight's look spends its own share only, not the
 * earlier ones again (that would spend them twice).
 */
static void test_a_release_judged_last_night_spends_tonight_s_share(void **state)
{
	fx *f = *state;
	postdeploy_opts o = {"bad",          "v2", SHA_V2, NULL, NULL, 0, 1,
			     STATS_SEV_HIGH, 0,    0,      NULL, NULL, 0, 0};
	postdeploy_result r;
	pr_error err = PR_ERROR_INIT;

	service(f, "bad", 2);
	two_nights_before(f, "bad");
	o.at_us = NIGHT_END - DAY;
	assert_int_equal(postdeploy_run(&r, &f->env, &o, &err), 0);
	/* Never judged before: its second look spends looks 1 and 2. */
	assert_true(r.a.ntests > 0);
	assert_int_equal(r.a.tests[0].first_look, 1);
	postdeploy_result_release(&r);
	/* Its third look (a stored finding's look counts its own looks after). */
	o.at_us = NIGHT_END;
	assert_int_equal(postdeploy_run(&r, &f->env, &o, &err), 0);
	assert_true(r.a.ntests > 0);
	assert_int_equal(r.a.tests[0].first_look, 3);
	postdeploy_result_release(&r);
}

/*
 * Judged a few hours before (a gate, then the nightly; a nightly that
 * started earlier than the day before), the release spent its looks
 * then: this run spends only its own look's share. Counting only
 * judgements a whole night back spent looks 1 to k again on every run
 * less than 24 hours after the last.
 */
static void test_a_release_judged_hours_before_spends_its_own_share(void **state)
{
	fx *f = *state;
	postdeploy_opts o = {"bad",          "v2", SHA_V2, NULL, NULL, 0, 1,
			     STATS_SEV_HIGH, 0,    0,      NULL, NULL, 0, 0};
	postdeploy_result r;
	pr_error err = PR_ERROR_INIT;

	service(f, "bad", 2);
	two_nights_before(f, "bad");
	o.at_us = NIGHT_END - 20 * HOUR;
	assert_int_equal(postdeploy_run(&r, &f->env, &o, &err), 0);
	assert_true(r.a.ntests > 0);
	assert_int_equal(r.a.tests[0].first_look, 1);
	postdeploy_result_release(&r);
	o.at_us = NIGHT_END;
	assert_int_equal(postdeploy_run(&r, &f->env, &o, &err), 0);
	assert_true(r.a.ntests > 0);
	assert_true(r.a.tests[0].first_look >= 2);
	postdeploy_result_release(&r);
	/* This night run again spends as it did: its own time is no judgement before it. */
	o.at_us = NIGHT_END - 20 * HOUR;
	assert_int_equal(postdeploy_run(&r, &f->env, &o, &err), 0);
	assert_int_equal(r.a.tests[0].first_look, 1);
	postdeploy_result_release(&r);
}

/*
 * Captures without samples (pods idle right after the deploy) are none
 * to judge: the gate asked for six does not pass on the four that hold
 * samples as if it had them all.
 */
static void test_the_postdeploy_job_does_not_count_empty_captures(void **state)
{
	fx *f = *state;
	postdeploy_opts o = {"good",         "v2", SHA_V2, NULL, NULL, 0, 6,
			     STATS_SEV_HIGH, 0,    0,      NULL, NULL, 0, 0};
	postdeploy_result r;
	pr_error err = PR_ERROR_INIT;

	service(f, "good", 1);
	capture_text(f, "good", "v2", NIGHT_END - 3 * 3600 * 1000000LL, "");
	capture_text(f, "good", "v2", NIGHT_END - 2 * 3600 * 1000000LL, "main;serve 0\n");
	assert_int_equal(postdeploy_run(&r, &f->env, &o, &err), 0);
	assert_int_equal(r.captures, 6);
	assert_int_equal(r.with_samples, 4);
	assert_string_equal(r.verdict, "inconclusive");
	assert_int_equal(json_array_size(r.reasons), 1);
	assert_string_equal(json_string_value(json_array_get(r.reasons, 0)),
			    "only 4 of the 6 captures asked for (--min-captures) arrived within "
			    "--wait with samples (2 more hold none)");
	postdeploy_result_release(&r);
}

/*
 * A service with 14 days of v1 and four captures of v2 taken in the
 * minutes before NIGHT_END, when post-deploy (whose "now" is NIGHT_END)
 * reports the deploy: its pods starting, work.hot at three times its cost.
 */
static void warming_service(fx *f, const char *name)
{
	testdb_execf(f->t, "insert into services (name, enabled) values ('%s', true)", name);
	for (int day = 14; day >= 1; day--) {
		capture(f, name, "v1", NIGHT_END - day * DAY - 9 * 3600 * 1000000LL, 1);
		capture(f, name, "v1", NIGHT_END - day * DAY - 3 * 3600 * 1000000LL, 1);
	}
	for (int k = 0; k < 4; k++)
		capture(f, name, "v2", NIGHT_END - (8 - 2 * k) * 60 * 1000000LL, 3);
}

/*
 * Captures taken right around a deploy are of processes still warming up
 * (a JIT compiling, caches filling): in v2's first four, taken in the
 * minutes before the deploy was reported, work.hot costs three times its
 * steady cost. Judged, they fail the gate; with analysis.warmup_s they
 * are not judged, the gate waits for captures after the warm-up, and the
 * steady captures that come later pass.
 */
static void test_captures_in_the_warm_up_around_a_deploy_are_not_judged(void **state)
{
	fx *f = *state;
	postdeploy_opts o = {"warm",         "v2", SHA_V2, NULL, NULL, 0, 4,
			     STATS_SEV_HIGH, 0,    0,      NULL, NULL, 0, 0};
	postdeploy_result r;
	pr_error err = PR_ERROR_INIT;

	warming_service(f, "warm");
	assert_int_equal(postdeploy_run(&r, &f->env, &o, &err), 0);
	assert_string_equal(r.verdict, "fail");
	assert_non_null(regression(&r.a, "warm"));
	postdeploy_result_release(&r);

	f->cfg.analysis.warmup_us = 600 * 1000000LL;
	assert_int_equal(postdeploy_run(&r, &f->env, &o, &err), 0);
	assert_int_equal(r.captures, 4);
	assert_int_equal(r.with_samples, 0);
	assert_int_equal(r.warming, 4);
	assert_string_equal(r.verdict, "inconclusive");
	assert_null(regression(&r.a, "warm"));
	assert_int_equal(json_array_size(r.reasons), 2);
	assert_string_equal(json_string_value(json_array_get(r.reasons, 0)),
			    "cpu: the 4 cpu captures of release 'v2' with samples were taken in "
			    "the warm-up, less than 600 s from a deploy of the release "
			    "(warmup_s)");
	assert_string_equal(json_string_value(json_array_get(r.reasons, 1)),
			    "only 0 of the 4 captures asked for (--min-captures) arrived within "
			    "--wait with samples (4 more were taken in the warm-up, less than "
			    "600 s from the deploy)");
	postdeploy_result_release(&r);

	for (int k = 1; k <= 4; k++)
		capture(f, "warm", "v2", NIGHT_END + k * 3600 * 1000000LL, 1);
	o.at_us = NIGHT_END + 5 * 3600 * 1000000LL;
	assert_int_equal(postdeploy_run(&r, &f->env, &o, &err), 0);
	assert_int_equal(r.captures, 8);
	assert_int_equal(r.with_samples, 4);
	assert_int_equal(r.warming, 4);
	assert_int_equal(analysis_current_captures(&r.a), 4);
	assert_null(regression(&r.a, "warm"));
	assert_string_equal(r.verdict, "pass");
	postdeploy_result_release(&r);
}

/*
 * The same build rolled out again (a canary, then the whole fleet) is the
 * deploy already recorded, and its pods start again: their warm-up is
 * left out around the second rollout as around the first.
 */
static void test_a_second_rollout_of_the_same_build_has_its_warm_up_too(void **state)
{
	fx *f = *state;
	postdeploy_opts o = {"warm",         "v2", SHA_V2, NULL, NULL, 0, 4,
			     STATS_SEV_HIGH, 0,    0,      NULL, NULL, 0, 0};
	postdeploy_result r;
	pr_error err = PR_ERROR_INIT;

	warming_service(f, "warm");
	testdb_execf(f->t, "insert into deploys (service_id, release, commit_sha, deployed_at)"
		     " select id, 'v2', '%s', to_timestamp(%lld / 1000000.0) from services"
		     " where name = 'warm'", SHA_V2, (long long)(NIGHT_END - DAY));
	f->cfg.analysis.warmup_us = 600 * 1000000LL;
	assert_int_equal(postdeploy_run(&r, &f->env, &o, &err), 0);
	assert_int_equal(r.warming, 4);
	assert_int_equal(analysis_current_captures(&r.a), 0);
	assert_null(regression(&r.a, "warm"));
	assert_string_equal(r.verdict, "inconclusive");
	postdeploy_result_release(&r);
	assert_int_equal(testdb_int(f->t, "select count(*) from deploys"), 1);
	assert_int_equal(testdb_int(f->t, "select count(*) from deploy_rollouts"), 1);
}

/*
 * --min-captures asks for that many captures of each type the gate
 * judges: two cpu and two heap captures are not four of either, and the
 * gate judged each type on two.
 */
static void test_min_captures_counts_each_judged_type_alone(void **state)
{
	fx *f = *state;
	postdeploy_opts o = {"bad",          "v2", SHA_V2, NULL, NULL, 0, 4,
			     STATS_SEV_HIGH, 0,    0,      NULL, NULL, 0, 0};
	postdeploy_result r;
	pr_error err = PR_ERROR_INIT;

	use_config(f, "types", "{\"services\": {\"bad\": {\"types\": [\"cpu\", \"heap\"]}}}");
	service(f, "bad", 1);
	/* Half of each release's captures become heap profiles of the same shape. */
	testdb_execf(f->t, "update profiles set profile_type = 'heap' where id in (select id from"
			   " (select id, row_number() over (partition by release order by id) as k"
			   " from profiles) x where k %% 2 = 0)");
	assert_int_equal(postdeploy_run(&r, &f->env, &o, &err), 0);
	assert_int_equal(analysis_current_captures(&r.a), 4);
	assert_int_equal(analysis_fewest_current_captures(&r.a), 2);
	assert_string_equal(r.verdict, "inconclusive");
	assert_non_null(strstr(json_string_value(json_array_get(r.reasons, 0)),
			       "only 2 of the 4 captures asked for"));
	postdeploy_result_release(&r);
}

/* A service's own warm-up (services.NAME.warmup_s) is its alone. */
static void test_a_service_s_own_warm_up_is_its_alone(void **state)
{
	fx *f = *state;
	postdeploy_opts o = {"jvm",          "v2", SHA_V2, NULL, NULL, 0, 4,
			     STATS_SEV_HIGH, 0,    0,      NULL, NULL, 0, 0};
	postdeploy_result r;
	pr_error err = PR_ERROR_INIT;

	use_config(f, "warm", "{\"services\": {\"jvm\": {\"warmup_s\": 600}, \"go\": {}}}");
	warming_service(f, "jvm");
	warming_service(f, "go");
	assert_int_equal(postdeploy_run(&r, &f->env, &o, &err), 0);
	assert_int_equal(r.warming, 4);
	assert_int_equal(r.warmup_us, 600 * 1000000LL);
	assert_int_equal(analysis_current_captures(&r.a), 0);
	assert_null(regression(&r.a, "jvm"));
	assert_string_equal(r.verdict, "inconclusive");
	postdeploy_result_release(&r);
	o.service = "go";
	assert_int_equal(postdeploy_run(&r, &f->env, &o, &err), 0);
	assert_int_equal(r.warming, 0);
	assert_string_equal(r.verdict, "fail");
	postdeploy_result_release(&r);
}

/* The baseline leaves out what an earlier release captured warming up, too. */
static void test_a_baseline_leaves_out_captures_in_an_earlier_deploy_s_warm_up(void **state)
{
	fx *f = *state;
	capture_set cs = {0};
	capture_query q = {0};
	pr_error err = PR_ERROR_INIT;
	int64_t sid;

	service(f, "warm", 1);
	sid = testdb_int(f->t, "select id from services where name = 'warm'");
	/* v1's first capture (day 14, 15:00) was taken a minute after v1's deploy. */
	testdb_execf(f->t, "insert into deploys (service_id, release, deployed_at) values"
		     " (%lld, 'v1', to_timestamp(%lld / 1000000.0))", (long long)sid,
		     (long long)(NIGHT_END - 14 * DAY - 9 * 3600 * 1000000LL - 60 * 1000000LL));
	q.service_id = sid;
	q.type = "cpu";
	q.exclude_release = "v2";
	q.eligible_only = true;
	assert_int_equal(capture_set_load(&cs, f->t->db, &q, &err), 0);
	assert_int_equal(cs.n, 28);
	capture_set_release(&cs);
	q.warmup_us = 600 * 1000000LL;
	assert_int_equal(capture_set_load(&cs, f->t->db, &q, &err), 0);
	assert_int_equal(cs.n, 27);
	assert_true(cs.caps[0].captured_at_us == NIGHT_END - 14 * DAY - 3 * 3600 * 1000000LL);
	capture_set_release(&cs);
	/* A warm-up of one minute was over when that capture was taken. */
	q.warmup_us = 60 * 1000000LL;
	assert_int_equal(capture_set_load(&cs, f->t->db, &q, &err), 0);
	assert_int_equal(cs.n, 28);
	capture_set_release(&cs);
}

/*
 * A release with a regression stays out of later baselines; a release
 * with only a whole-service cost finding that cannot page (low: per
 * second, it also rises with traffic) does not, or a busier release
 * starved every later release's baseline.
 */
static void test_a_low_cost_finding_keeps_its_release_in_baselines(void **state)
{
	fx *f = *state;
	capture_set cs = {0};
	capture_query q = {0};
	pr_error err = PR_ERROR_INIT;
	int64_t sid;

	service(f, "busy", 1);
	sid = testdb_int(f->t, "select id from services where name = 'busy'");
	testdb_execf(f->t,
		     "insert into findings (service_id, profile_type, kind, direction, state,"
		     " status, severity, current_release, function) values (%lld, 'cpu', 'cost',"
		     " 'regression', 'confirmed', 'open', 'low', 'v1', '(whole service)')",
		     (long long)sid);
	q.service_id = sid;
	q.type = "cpu";
	q.exclude_release = "v2";
	q.eligible_only = true;
	assert_int_equal(capture_set_load(&cs, f->t->db, &q, &err), 0);
	assert_int_equal(cs.n, 28);
	capture_set_release(&cs);
	/* The same finding able to page, and a function's regression, keep it out. */
	testdb_execf(f->t, "update findings set severity = 'high' where service_id = %lld",
		     (long long)sid);
	assert_int_equal(capture_set_load(&cs, f->t->db, &q, &err), 0);
	assert_int_equal(cs.n, 0);
	capture_set_release(&cs);
	testdb_execf(f->t,
		     "update findings set severity = 'low', kind = 'share', function = 'work.a'"
		     " where service_id = %lld",
		     (long long)sid);
	assert_int_equal(capture_set_load(&cs, f->t->db, &q, &err), 0);
	assert_int_equal(cs.n, 0);
	capture_set_release(&cs);
}

static void test_the_postdeploy_job_refuses_a_release_without_captures(void **state)
{
	fx *f = *state;
	postdeploy_opts o = {"good",         "v3", SHA_V2, NULL, NULL, 0, 1,
			     STATS_SEV_HIGH, 0,    0,      NULL, NULL, 0, 0};
	postdeploy_result r;
	pr_error err = PR_ERROR_INIT;

	service(f, "good", 1);
	assert_int_equal(postdeploy_run(&r, &f->env, &o, &err), PR_ENOTFOUND);
	assert_non_null(strstr(err.msg, "no captures of release 'v3'"));
	assert_non_null(strstr(err.msg, "did you mean 'v2'?"));
	assert_int_equal(testdb_int(f->t, "select count(*) from deploys"), 0);
	assert_int_equal(testdb_int(f->t, "select count(*) from runs"), 0);
	postdeploy_result_release(&r);
}

/* The finding object without what only says which run printed it. */
static char *finding_text(const finding *f)
{
	json_t *o = analysis_finding_json(f);
	char *s;

	assert_non_null(o);
	s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(12));
	json_decref(o);
	return s;
}

/* Every test of a run, in order, as text; skipped targets after them. */
static char *run_text(const analysis *a)
{
	char *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);

	assert_non_null(m);
	for (size_t i = 0; i < a->ntests; i++) {
		char *t = finding_text(&a->tests[i]);
		fprintf(m, "%s\n", t);
		free(t);
	}
	for (size_t i = 0; i < a->nskipped; i++)
		fprintf(m, "skipped %s: %s\n", a->skipped[i].service, a->skipped[i].reason);
	fclose(m);
	return out;
}

/*
 * With a second connection, each service's captures are loaded while the
 * one before is analysed: every test, number for number, and every skip
 * must be as with one connection, in the same order (a disabled service
 * and one without the release among them), and the stored run the same.
 */
static void test_analysis_with_captures_read_ahead_is_the_same(void **state)
{
	fx *f = *state;
	analyze_opts ao = {NULL, "v2", 0, 0, "cpu", f->cfg.analysis, "v2", true,
			   false, NULL, NULL, NULL};
	analyze_result one, two;
	pr_error err = PR_ERROR_INIT;
	db *d2 = NULL;
	char *a, *b;

	service(f, "alpha", 2);
	service(f, "beta", 1);
	service(f, "gamma", 1.5);
	service(f, "dormant", 3);
	testdb_execf(f->t, "update services set enabled = false where name = 'dormant'");
	testdb_execf(f->t, "insert into services (name, enabled) values ('empty', true)");
	service(f, "omega", 1);
	assert_int_equal(analyze_run(&one, &f->env, &ao, &err), 0);
	assert_int_equal(db_open(&d2, f->t->conninfo, &err), 0);
	ao.ahead_db = d2;
	assert_int_equal(analyze_run(&two, &f->env, &ao, &err), 0);
	a = run_text(&one.a);
	b = run_text(&two.a);
	assert_non_null(strstr(a, "skipped empty"));
	assert_null(strstr(a, "dormant"));
	assert_non_null(regression(&two.a, "alpha"));
	assert_string_equal(a, b);
	assert_int_equal(one.a.services, two.a.services);
	free(a);
	free(b);
	analyze_result_release(&one);
	analyze_result_release(&two);
	db_close(d2);
}

static void test_analyze_nightly_and_postdeploy_give_the_same_finding_object(void **state)
{
	fx *f = *state;
	analyze_opts ao = {"bad", "v2", 0, 0, "cpu", f->cfg.analysis, "v2", false,
			   false, NULL, NULL, NULL};
	postdeploy_opts po = {"bad",          "v2", SHA_V2, NULL, NULL, 0, 4,
			      STATS_SEV_HIGH, 0,    0,      NULL, NULL, 0, 0};
	nightly_opts no = {0};
	analyze_result ar;
	nightly_result nr;
	postdeploy_result pr;
	pr_error err = PR_ERROR_INIT;
	char *a, *n, *p;

	service(f, "bad", 2);
	assert_int_equal(analyze_run(&ar, &f->env, &ao, &err), 0);
	assert_int_equal(nightly_run(&nr, &f->env, &no, &err), 0);
	assert_int_equal(postdeploy_run(&pr, &f->env, &po, &err), 0);
	assert_non_null(regression(&ar.a, "bad"));
	assert_non_null(regression(&nr.a, "bad"));
	assert_non_null(regression(&pr.a, "bad"));
	a = finding_text(regression(&ar.a, "bad"));
	n = finding_text(regression(&nr.a, "bad"));
	p = finding_text(regression(&pr.a, "bad"));
	assert_string_equal(a, n);
	assert_string_equal(a, p);
	assert_int_equal(testdb_int(f->t, "select count(*) from findings"
					  " where direction = 'regression'"), 1);
	assert_int_equal(testdb_int(f->t, "select count(distinct run_id) from run_findings"), 3);
	free(a);
	free(n);
	free(p);
	analyze_result_release(&ar);
	nightly_result_release(&nr);
	postdeploy_result_release(&pr);
}

/*
 * Two hosts whose names hash alike under PostgreSQL's 32-bit hashtext()
 * ("cpu-profile 10.1.249.30" and "cpu-profile 10.3.128.254") shared one
 * profiling lock: one was refused as busy while the other was profiled.
 */
static void test_two_hosts_never_share_a_profiling_lock(void **state)
{
	fx *f = *state;
	pr_error err = PR_ERROR_INIT;
	db *other = NULL;
	bool got = false;

	assert_int_equal(testdb_int(f->t, "select (hashtext('cpu-profile 10.1.249.30') ="
					  " hashtext('cpu-profile 10.3.128.254'))::int"), 1);
	assert_int_equal(db_open(&other, f->t->conninfo, &err), 0);
	assert_int_equal(capreq_host_lock(&got, f->t->db, "10.1.249.30", &err), 0);
	assert_true(got);
	assert_int_equal(capreq_host_lock(&got, other, "10.3.128.254", &err), 0);
	assert_true(got);
	assert_int_equal(capreq_host_lock(&got, other, "10.1.249.30", &err), 0);
	assert_false(got);
	capreq_host_unlock(other, "10.3.128.254");
	capreq_host_unlock(f->t->db, "10.1.249.30");
	assert_int_equal(capreq_host_lock(&got, other, "10.1.249.30", &err), 0);
	assert_true(got);
	capreq_host_unlock(other, "10.1.249.30");
	db_close(other);
}

/*
 * A deploy's regression has its evidence tagged with the deploy and its
 * commit, also when the finding was stored before post-deploy saw it: by
 * an analysis of the release, or by a post-deploy that failed after
 * recording it (here, the tagging itself fails once), which CI retries.
 */
static void test_evidence_stored_before_the_post_deploy_is_tagged_with_the_deploy(void **state)
{
	fx *f = *state;
	analyze_opts ao = {"bad", "v2", 0, 0, "cpu", f->cfg.analysis, "v2", false,
			   false, NULL, NULL, NULL};
	postdeploy_opts po = {"bad",          "v2", SHA_V2, NULL, NULL, 0, 4,
			      STATS_SEV_HIGH, 0,    0,      NULL, NULL, 0, 0};
	const char *tagged = "select count(*) from profiles where tags ? 'finding'"
			     " and tags ->> 'commit' = '" SHA_V2 "'";
	analyze_result ar;
	postdeploy_result pr;
	pr_error err = PR_ERROR_INIT;

	service(f, "bad", 2);
	assert_int_equal(analyze_run(&ar, &f->env, &ao, &err), 0);
	assert_non_null(regression(&ar.a, "bad"));
	analyze_result_release(&ar);
	assert_true(testdb_int(f->t, "select count(*) from profiles where tags ? 'finding'") > 0);
	testdb_execf(f->t, "create function fail_tag() returns trigger language plpgsql as $$"
			   " begin if new.tags ? 'deploy' then raise exception 'no tags today';"
			   " end if; return new; end $$");
	testdb_execf(f->t, "create trigger fail_tag before update on profiles for each row"
			   " execute function fail_tag()");
	assert_true(postdeploy_run(&pr, &f->env, &po, &err) < 0);
	assert_non_null(strstr(err.msg, "no tags today"));
	postdeploy_result_release(&pr);
	pr_error_clear(&err);
	assert_int_equal(testdb_int(f->t, tagged), 0);
	testdb_execf(f->t, "drop trigger fail_tag on profiles");
	assert_int_equal(postdeploy_run(&pr, &f->env, &po, &err), 0);
	assert_string_equal(pr.verdict, "fail");
	postdeploy_result_release(&pr);
	assert_true(testdb_int(f->t, tagged) > 0);
	assert_int_equal(testdb_int(f->t, tagged),
			 testdb_int(f->t, "select count(*) from profiles where tags ? 'finding'"));
}

static void test_a_run_whose_session_died_is_marked_interrupted_by_the_next_of_its_kind(
	void **state)
{
	fx *f = *state;
	pr_error err = PR_ERROR_INIT;
	db *other = NULL;
	int64_t dead = 0, alive = 0, next = 0, pid;
	char q[200];

	assert_int_equal(db_open(&other, f->t->conninfo, &err), 0);
	assert_int_equal(runs_begin(&dead, other, "nightly", 0, NULL, &err), 0);
	assert_int_equal(runs_begin(&alive, f->t->db, "post-deploy", 0, NULL, &err), 0);
	snprintf(q, sizeof(q), "select backend_pid from runs where id = %lld", (long long)dead);
	pid = testdb_int(f->t, q);
	db_close(other);
	/* The server ends the closed session's backend on its own time: wait, bounded. */
	snprintf(q, sizeof(q), "select count(*) from pg_stat_activity where pid = %lld",
		 (long long)pid);
	for (int i = 0; i < 200 && testdb_int(f->t, q) > 0; i++) {
		struct timespec ts = {0, 50 * 1000000L};
		nanosleep(&ts, NULL);
	}
	assert_int_equal(runs_begin(&next, f->t->db, "post-deploy", 0, NULL, &err), 0);
	snprintf(q, sizeof(q), "select status from runs where id = %lld", (long long)dead);
	assert_string_equal(testdb_text(f->t, q), "running");
	assert_int_equal(runs_begin(&next, f->t->db, "nightly", 0, NULL, &err), 0);
	assert_string_equal(testdb_text(f->t, q), "interrupted");
	snprintf(q, sizeof(q), "select status from runs where id = %lld", (long long)alive);
	assert_string_equal(testdb_text(f->t, q), "running");
	assert_int_equal(runs_finish(f->t->db, alive, "ok", NULL, &err), 0);
	assert_string_equal(testdb_text(f->t, q), "ok");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_the_function_matrix_is_in_function_order_whatever_order_rows_come_in),
		T(test_the_engine_finds_a_doubled_function_and_nothing_in_a_null_service),
		T(test_a_renamed_function_is_judged_against_its_old_name),
		T(test_functions_of_files_a_release_moved_keep_their_baseline),
		T(test_renumbered_closures_are_judged_as_one_family),
		T(test_a_name_stored_before_a_rule_is_the_same_function),
		T(test_cost_moved_between_caller_and_callee_is_no_finding),
		T(test_a_callee_inlined_into_two_callers_is_no_finding),
		T(test_new_code_is_not_merged_into_callers_whose_cost_went_elsewhere),
		T(test_a_goroutine_leak_is_a_whole_service_finding),
		T(test_of_two_possible_callers_the_one_whose_callees_took_the_helper_is_it),
		T(test_new_code_under_a_dominant_caller_is_no_move),
		T(test_new_code_under_an_unchanged_caller_is_not_paired_with_its_ancestor),
		T(test_a_new_function_is_not_paired_with_a_caller_that_moved_within_its_noise),
		T(test_a_pair_summed_over_cut_captures_stays_unknown_where_neither_is_known),
		T(test_two_renames_in_a_container_pair_by_the_nearest_name),
		T(test_a_function_moved_to_another_container_keeps_its_baseline),
		T(test_a_renamed_function_travels_in_a_worker_part),
		T(test_a_service_s_own_week_travels_in_a_worker_part),
		T(test_a_release_that_lost_its_symbols_is_not_judged),
		T(test_a_release_of_empty_captures_is_skipped_as_such),
		T(test_a_function_that_held_most_of_the_time_and_doubled_is_the_regression),
		T(test_one_noisy_capture_is_judged_by_its_own_noise),
		T(test_the_nightly_job_finds_the_regression_and_records_an_ok_run),
		T(test_a_service_judged_for_one_type_of_two_is_analysed),
		T(test_a_night_whose_newest_release_was_not_judged_skips_the_service),
		T(test_a_newest_release_judged_in_no_type_skips_the_service),
		T(test_a_night_that_analyses_nothing_is_incomplete),
		T(test_the_postdeploy_job_fails_a_regression_and_passes_a_clean_release),
		T(test_the_postdeploy_job_is_inconclusive_with_too_few_captures),
		T(test_the_postdeploy_job_is_inconclusive_past_the_planned_looks),
		T(test_a_release_first_judged_past_its_looks_spends_them),
		T(test_a_release_judged_last_night_spends_tonight_s_share),
		T(test_a_release_judged_hours_before_spends_its_own_share),
		T(test_the_postdeploy_job_does_not_count_empty_captures),
		T(test_a_low_cost_finding_keeps_its_release_in_baselines),
		T(test_the_postdeploy_job_refuses_a_release_without_captures),
		T(test_captures_in_the_warm_up_around_a_deploy_are_not_judged),
		T(test_a_service_s_own_warm_up_is_its_alone),
		T(test_a_second_rollout_of_the_same_build_has_its_warm_up_too),
		T(test_a_baseline_leaves_out_captures_in_an_earlier_deploy_s_warm_up),
		T(test_analysis_with_captures_read_ahead_is_the_same),
		T(test_analyze_nightly_and_postdeploy_give_the_same_finding_object),
		T(test_evidence_stored_before_the_post_deploy_is_tagged_with_the_deploy),
		T(test_two_hosts_never_share_a_profiling_lock),
		T(test_min_captures_counts_each_judged_type_alone),
		T(test_a_run_whose_session_died_is_marked_interrupted_by_the_next_of_its_kind),
#undef T
	};

	return cmocka_run_group_tests(tests, testdb_group_setup, testdb_group_teardown);
}
