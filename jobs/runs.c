/*
 * runs.c: run records (see runs.h). Every statement on `runs` is here.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/runs.h"
#include "common/timeutil.h"
#include "reports/report.h"

#include <dirent.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The reports folder of the process (runs_set_reports_dir), NULL when
 * none was set. Process-wide because every caller of runs_begin takes its
 * id from the one sequence, and not every one knows where reports go;
 * under a lock because serve's and workers' threads begin runs.
 */
static pthread_mutex_t reports_lock = PTHREAD_MUTEX_INITIALIZER;
static char *reports_dir;

/*
 * A database restored from a dump skips at most this many run ids to
 * get past its reports: more is no restore but a stray file, said and
 * left alone; taking that many values from the sequence would stall
 * every run.
 */
#define RUNS_SKIP_MAX INT64_C(10000000)

static char *dump(const json_t *v)
{
	return v ? json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS) : strdup("{}");
}

int runs_reap(db *d, const char *kind, int64_t *n, pr_error *err)
{
	/*
	 * A session is identified by pid and start time: a pid reused by a
	 * later session does not keep a dead run alive. A run from before
	 * sessions were recorded (no pid) cannot still be running either. A
	 * session of another role may hide its start time: alive, then.
	 */
	static const char sql[] =
		"with r as (update runs set status = 'interrupted', finished_at = now(),"
		"   detail = detail || jsonb_build_object('error',"
		"     'the process running it ended without finishing it (killed, "
		"or the machine stopped)')"
		" where kind = $1 and status = 'running' and (backend_pid is null"
		"   or not exists (select 1 from pg_stat_activity a where a.pid = runs.backend_pid"
		"     and (a.backend_start is null or a.backend_start = "
		"runs.backend_start))) returning 1)"
		" select count(*) from r";
	const char *p[1] = {kind};
	struct pg_result *res = NULL;
	int rc;

	if ((rc = db_exec(d, &res, err, "closing interrupted runs", sql, 1, p)) < 0)
		return rc;
	if (n)
		*n = db_get_i64(res, 0, 0);
	db_result_free(res);
	return 0;
}

int runs_set_reports_dir(const char *dir, pr_error *err)
{
	char *copy = NULL;

	if (dir && !(copy = strdup(dir)))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	pthread_mutex_lock(&reports_lock);
	free(reports_dir);
	reports_dir = copy;
	pthread_mutex_unlock(&reports_lock);
	return 0;
}

/*
 * The largest run id among the report files of `instance`'s database in
 * folder `dir`, 0 when there are none. A folder not made yet holds none;
 * one that cannot be read is taken as empty too: the run's own report
 * cannot be written there either, and that failure is said where it
 * happens, while a nightly stopped here would find and page nothing.
 */
static int64_t reports_max_run(const char *dir, const char *instance)
{
	DIR *dh = opendir(dir);
	struct dirent *e;
	int64_t max = 0;

	if (!dh)
		return 0;
	while ((e = readdir(dh))) {
		int64_t id = report_run_name_id(e->d_name, instance);
		if (id > max)
			max = id;
	}
	closedir(dh);
	return max;
}

/*
 * A database behind its reports folder was restored from a dump while
 * the blob store kept everything since: the blobs of the captures stored
 * after the dump have no row any more. A hold (DB_BLOBS_HELD, read by
 * retention's orphan sweep) keeps the blobs put between the database's
 * newest stored row and now: the nightly's own collection stores a
 * capture newer than them before its retention runs, and without the
 * hold they then looked like a dead ingest's and went.
 */
static int hold_lost_blobs(db *d, pr_error *err)
{
	int64_t newest;
	int rc;

	if ((rc = db_newest_stored(d, &newest, err)) < 0)
		return rc;
	return db_blobs_hold(d, newest, time_now_us(), err);
}

/*
 * The id for a new run: from the runs sequence, past every run report
 * of this database in the reports folder. A database restored from a
 * dump has the sequence of the dump: the runs since were lost, their
 * reports were not, and pages already sent link to them. Values are only
 * ever taken with nextval, never set back with setval (which needs
 * UPDATE on the sequence, and can hand a value out twice to runs begun
 * at the same time): two runs never share an id. *id 0: no reports
 * folder is known, or it holds none of this database's run reports; the
 * insert takes the sequence's next value then.
 */
static int next_id(int64_t *id, db *d, pr_error *err)
{
	static const char one[] = "select nextval(pg_get_serial_sequence('runs', 'id'))";
	static const char past[] = "select max(nextval(pg_get_serial_sequence('runs', 'id')))"
				   " from generate_series($1::bigint, $2::bigint)";
	char from[24], to[24], *dir = NULL;
	const char *p[2] = {from, to}, *instance;
	struct pg_result *res = NULL;
	int64_t max = 0, next = 0;
	int rc = 0;

	*id = 0;
	pthread_mutex_lock(&reports_lock);
	if (reports_dir && !(dir = strdup(reports_dir)))
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
	pthread_mutex_unlock(&reports_lock);
	if (rc < 0 || !dir || (rc = db_instance(d, &instance, err)) < 0 ||
	    !(max = reports_max_run(dir, instance)))
		goto out;
	if ((rc = db_exec(d, &res, err, "taking a run id", one, 0, NULL)) < 0)
		goto out;
	next = db_get_i64(res, 0, 0);
	db_result_free(res);
	res = NULL;
	if (next > max)
		goto out;
	if (max - next >= RUNS_SKIP_MAX) {
		/*
		 * No restore loses that many runs: a stray file. Said, and left
		 * alone (this run is far from reaching its name); a run refused
		 * for it left every nightly finding and paging nothing.
		 */
		fprintf(stderr,
			"profreg: warning: the reports folder '%s' holds a report of run %" PRId64
			" (run-%" PRId64
			"-%.8s), far past this database's runs (this run is %" PRId64
			"): left alone; move it out of the folder\n",
			dir, max, max, instance, next);
		goto out;
	}
	/* nextval once a value from next to max: the last is past max, whatever others take. */
	snprintf(from, sizeof(from), "%" PRId64, next);
	snprintf(to, sizeof(to), "%" PRId64, max);
	if ((rc = db_exec(d, &res, err, "taking a run id past the reports folder's", past, 2, p)) <
	    0)
		goto out;
	next = db_get_i64(res, 0, 0);
	if ((rc = hold_lost_blobs(d, err)) < 0)
		goto out;
	fprintf(stderr,
		"profreg: the database is behind its reports folder (restored from a backup?): "
		"'%s' holds reports of runs up to %" PRId64 " it does not know; run ids "
		"continue after %" PRId64 " (this run is %" PRId64 ")\n",
		dir, max, max, next);
out:
	if (rc == 0)
		*id = next;
	db_result_free(res);
	free(dir);
	return rc;
}

int runs_begin(int64_t *id, db *d, const char *kind, int64_t service_id, const json_t *params,
	       pr_error *err)
{
	static const char sql[] =
		"insert into runs (id, kind, service_id, status, detail, backend_pid,"
		"   backend_start)"
		" select coalesce(nullif($4::bigint, 0),"
		"   nextval(pg_get_serial_sequence('runs', 'id'))),"
		"   $1, nullif($2::bigint, 0), 'running', $3::jsonb, pg_backend_pid(),"
		"   (select backend_start from pg_stat_activity where pid = pg_backend_pid())"
		" returning id";
	char sid[24], rid[24], *text = NULL;
	const char *p[4] = {kind, sid, NULL, rid};
	struct pg_result *res = NULL;
	int64_t next = 0;
	int rc;

	*id = 0;
	if ((rc = runs_reap(d, kind, NULL, err)) < 0 || (rc = next_id(&next, d, err)) < 0)
		return rc;
	if (!(text = dump(params)))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	p[2] = text;
	snprintf(sid, sizeof(sid), "%" PRId64, service_id);
	snprintf(rid, sizeof(rid), "%" PRId64, next);
	rc = db_exec(d, &res, err, "recording the run", sql, 4, p);
	free(text);
	if (rc < 0)
		return rc;
	*id = db_get_i64(res, 0, 0);
	db_result_free(res);
	return 0;
}

int runs_finish(db *d, int64_t id, const char *status, const json_t *detail, pr_error *err)
{
	static const char sql[] =
		"update runs set status = $2, finished_at = now(), detail = detail || $3::jsonb"
		" where id = $1";
	char rid[24], *text = dump(detail);
	const char *p[3] = {rid, status, text};
	int rc;

	if (!text)
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	snprintf(rid, sizeof(rid), "%" PRId64, id);
	rc = db_exec(d, NULL, err, "recording the run", sql, 3, p);
	free(text);
	return rc;
}

int runs_last_night(int64_t *at_us, bool *found, db *d, const char *kind, pr_error *err)
{
	static const char sql[] =
		"select max((detail ->> 'at_us')::bigint) from runs"
		" where kind = $1 and status in ('ok', 'incomplete')"
		" and jsonb_typeof(detail -> 'at_us') = 'number' and not detail ? 'only'";
	const char *p[1] = {kind};
	struct pg_result *res = NULL;
	int rc;

	*at_us = 0;
	*found = false;
	if ((rc = db_exec(d, &res, err, "reading the last run", sql, 1, p)) < 0)
		return rc;
	if (db_rows(res) == 1 && db_get_text(res, 0, 0)) {
		*at_us = db_get_i64(res, 0, 0);
		*found = true;
	}
	db_result_free(res);
	return 0;
}

#define RUN_TIME(c) "to_char(" c " at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"

int runs_list(json_t **out, db *d, size_t limit, pr_error *err)
{
	static const char sql[] =
		"select coalesce(jsonb_agg(jsonb_build_object('id', r.id, 'kind', r.kind,"
		"   'service', s.name, 'status', r.status,"
		"   'started_at', " RUN_TIME("r.started_at") ","
		"   'finished_at', " RUN_TIME("r.finished_at") ","
		"   'findings', (r.detail ->> 'findings')::bigint, 'failed', "
		"(r.detail ->> 'failed')::bigint,"
		"   'seconds', extract(epoch from r.finished_at - r.started_at)::float8)"
		"   order by r.id desc), '[]')::text"
		/* Team roles may not read runs.detail: its share for them (028). */
		" from (select id, kind, service_id, status, started_at, finished_at,"
		"   profreg_run_detail(id) as detail from runs order by id desc limit $1) r"
		" left join services s on s.id = r.service_id";
	char lim[24];
	const char *p[1] = {lim};
	struct pg_result *res = NULL;
	int rc;

	*out = NULL;
	snprintf(lim, sizeof(lim), "%zu", limit);
	if ((rc = db_exec(d, &res, err, "listing runs", sql, 1, p)) < 0)
		return rc;
	if (!(*out = json_loads(db_get_text(res, 0, 0), 0, NULL)))
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
	db_result_free(res);
	return rc;
}

int runs_show(json_t **out, db *d, int64_t id, pr_error *err)
{
	static const char sql[] =
		"select jsonb_build_object('id', r.id, 'kind', r.kind, 'status', r.status,"
		" 'service', s.name,"
		" 'started_at', " RUN_TIME("r.started_at") ","
		" 'finished_at', " RUN_TIME("r.finished_at") ","
		" 'detail', profreg_run_detail(r.id),"
		" 'findings', coalesce((select jsonb_agg(jsonb_build_object('id', f.id,"
		"   'service', fs.name, 'type', f.profile_type, 'function', f.function,"
		"   'direction', f.direction, 'severity', f.severity, "
		"'baseline_share', f.baseline_share,"
		"   'current_share', f.current_share, 'q_value', f.q_value, 'status', f.status,"
		"   'current_release', f.current_release, 'kind', f.kind,"
		"   'cost_unit', case when f.kind = 'cost' then"
		"     coalesce(f.detail ->> 'cost_unit', 'cost') end)"
		"   order by case f.severity when 'critical' then 0 when 'high' then 1"
		"     when 'medium' then 2 when 'low' then 3 else 4 end,"
		"     f.score desc nulls last, f.id)"
		"   from findings f join services fs on fs.id = f.service_id"
		"   where f.id in (select finding_id from run_findings rf where "
		"rf.run_id = r.id)), '[]'))::text"
		" from runs r left join services s on s.id = r.service_id where r.id = $1";
	char rid[24];
	const char *p[1] = {rid};
	struct pg_result *res = NULL;
	int rc;

	*out = NULL;
	snprintf(rid, sizeof(rid), "%" PRId64, id);
	if ((rc = db_exec(d, &res, err, "reading the run", sql, 1, p)) < 0)
		return rc;
	if (db_rows(res) != 1)
		rc = pr_error_set(err, PR_ENOTFOUND, "run %" PRId64 " not found", id);
	else if (!(*out = json_loads(db_get_text(res, 0, 0), 0, NULL)))
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
	db_result_free(res);
	return rc;
}
