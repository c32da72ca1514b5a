/*
 * runs.c: run records (see runs.h). Every statement on `runs` is here.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/runs.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int runs_begin(int64_t *id, db *d, const char *kind, int64_t service_id, const json_t *params,
	       pr_error *err)
{
	static const char sql[] =
		"insert into runs (kind, service_id, status, detail, backend_pid, backend_start)"
		" select $1, nullif($2::bigint, 0), 'running', $3::jsonb, pg_backend_pid(),"
		"   (select backend_start from pg_stat_activity where pid = pg_backend_pid())"
		" returning id";
	char sid[24], *text = NULL;
	const char *p[3] = {kind, sid, NULL};
	struct pg_result *res = NULL;
	int rc;

	*id = 0;
	if ((rc = runs_reap(d, kind, NULL, err)) < 0)
		return rc;
	if (!(text = dump(params)))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	p[2] = text;
	snprintf(sid, sizeof(sid), "%" PRId64, service_id);
	rc = db_exec(d, &res, err, "recording the run", sql, 3, p);
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
