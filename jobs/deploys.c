/*
 * deploys.c: the deploy history of each service (see deploys.h). This
 * module is the only one that writes `deploys` and `deploy_rollouts`.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/deploys.h"

#include <inttypes.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEPLOY_COLS \
	"d.id, d.service_id, s.name, d.release, coalesce(d.commit_sha, '')," \
	" coalesce(d.previous_commit_sha, ''), " DB_TS_TO_US("d.deployed_at")

static void from_row(deploy *out, const PGresult *res, int row)
{
	memset(out, 0, sizeof(*out));
	out->id = db_get_i64(res, row, 0);
	out->service_id = db_get_i64(res, row, 1);
	snprintf(out->service, sizeof(out->service), "%s", db_get_text(res, row, 2));
	snprintf(out->release, sizeof(out->release), "%s", db_get_text(res, row, 3));
	snprintf(out->commit_sha, sizeof(out->commit_sha), "%s", db_get_text(res, row, 4));
	snprintf(out->previous_sha, sizeof(out->previous_sha), "%s", db_get_text(res, row, 5));
	out->deployed_at_us = db_get_i64(res, row, 6);
}

int deploy_record(deploy *out, bool *existed, db *d, int64_t service_id, const char *release,
		  const char *sha, const char *previous_sha, int64_t at_us, pr_error *err)
{
	/*
	 * One statement: the existing row (its report again a rollout of its
	 * own, for the warm-up), or a new one whose range starts at the latest
	 * earlier deploy of another release. Ordering by deploy
	 * time, not by id, keeps a re-run's range when later deploys exist.
	 */
	static const char sql[] =
		"with old as (select id from deploys where service_id = $1 and release = $2"
		"   and commit_sha = $3 order by deployed_at desc, id desc limit 1),"
		" prev as (select p.commit_sha from deploys p where p.service_id = $1"
		"   and p.release <> $2 and p.commit_sha is not null and p.commit_sha <> $3"
		"   and p.deployed_at <= coalesce((select o.deployed_at from deploys o"
		"     where o.id = (select id from old)), " DB_US_TO_TS("$5") ")"
		"   and p.id <> coalesce((select id from old), 0)"
		"   order by p.deployed_at desc, p.id desc limit 1),"
		" ins as (insert into deploys (service_id, release, "
		"commit_sha, previous_commit_sha,"
		"   deployed_at) select $1, $2, $3, coalesce(nullif($4, ''), "
		"(select commit_sha from prev)),"
		"   " DB_US_TO_TS("$5")
		"   where not exists (select 1 from old) returning id),"
		" upd as (update deploys set previous_commit_sha = $4 where "
		"id = (select id from old)"
		"   and nullif($4, '') is not null and previous_commit_sha is distinct from $4"
		"   returning id),"
		" again as (insert into deploy_rollouts"
		"   (deploy_id, service_id, release, rolled_out_at)"
		"   select id, $1, $2, " DB_US_TO_TS("$5") " from old on conflict do nothing)"
		" select coalesce((select id from ins), (select id from old)), "
		"exists (select 1 from old)";
	static const char get_sql[] =
		"select " DEPLOY_COLS " from deploys d join services s on s.id = d.service_id"
		" where d.id = $1";
	char sid[24], id[24], at[24];
	const char *p[5] = {sid, release, sha, previous_sha ? previous_sha : "", at};
	const char *g[1] = {id};
	PGresult *res = NULL;
	int rc;

	snprintf(sid, sizeof(sid), "%" PRId64, service_id);
	snprintf(at, sizeof(at), "%" PRId64, at_us);
	if ((rc = db_exec(d, &res, err, "recording the deploy", sql, 5, p)) < 0)
		return rc;
	snprintf(id, sizeof(id), "%" PRId64, db_get_i64(res, 0, 0));
	*existed = db_get_bool(res, 0, 1);
	db_result_free(res);
	if ((rc = db_exec(d, &res, err, "reading the deploy", get_sql, 1, g)) < 0)
		return rc;
	if (db_rows(res) != 1)
		rc = pr_error_set(err, PR_EDB, "database: deploy %s vanished while it was recorded",
				  id);
	else
		from_row(out, res, 0);
	db_result_free(res);
	return rc;
}

int deploy_find_release(deploy *out, db *d, int64_t service_id, const char *release,
			pr_error *err)
{
	static const char sql[] =
		"select " DEPLOY_COLS " from deploys d join services s on s.id = d.service_id"
		" where d.service_id = $1 and d.release = $2"
		" order by d.deployed_at desc, d.id desc limit 1";
	char sid[24];
	const char *p[2] = {sid, release};
	PGresult *res = NULL;
	int rc;

	snprintf(sid, sizeof(sid), "%" PRId64, service_id);
	if ((rc = db_exec(d, &res, err, "reading deploys", sql, 2, p)) < 0)
		return rc;
	if (db_rows(res) == 1)
		from_row(out, res, 0);
	else
		rc = PR_ENOTFOUND; /* not an error worth a message: callers say what it means */
	db_result_free(res);
	return rc;
}

int deploy_list(deploy **out, size_t *n, db *d, int64_t service_id, size_t limit,
		pr_error *err)
{
	static const char sql[] =
		"select " DEPLOY_COLS " from deploys d join services s on s.id = d.service_id"
		" where ($1::bigint = 0 or d.service_id = $1)"
		" order by d.deployed_at desc, d.id desc limit $2";
	char sid[24], lim[24];
	const char *p[2] = {sid, lim};
	PGresult *res = NULL;
	int rc;

	*out = NULL;
	*n = 0;
	snprintf(sid, sizeof(sid), "%" PRId64, service_id);
	snprintf(lim, sizeof(lim), "%zu", limit ? limit : (size_t)INT32_MAX);
	if ((rc = db_exec(d, &res, err, "listing deploys", sql, 2, p)) < 0)
		return rc;
	if (db_rows(res) > 0 && !(*out = calloc((size_t)db_rows(res), sizeof(**out)))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < db_rows(res); i++)
		from_row(&(*out)[(*n)++], res, i);
out:
	db_result_free(res);
	return rc;
}

int deploy_delete(db *d, int64_t id, pr_error *err)
{
	static const char sql[] =
		"delete from deploys where id = $1 returning "
		"jsonb_build_object('service_id', service_id,"
		" 'release', release, 'commit', commit_sha, 'previous_commit', previous_commit_sha,"
		" 'deployed_at', deployed_at)::text";
	char sid[24], object[48];
	const char *p[1] = {sid};
	PGresult *res = NULL;
	int rc;

	snprintf(sid, sizeof(sid), "%" PRId64, id);
	snprintf(object, sizeof(object), "deploy:%" PRId64, id);
	if ((rc = db_begin(d, err)) < 0)
		return rc;
	if ((rc = db_exec(d, &res, err, "deleting a deploy", sql, 1, p)) < 0)
		goto out;
	if (db_rows(res) == 0) {
		rc = pr_error_set(err, PR_ENOTFOUND, "deploy %" PRId64 " not found", id);
		goto out;
	}
	/* The audit row keeps what the deploy was. */
	if ((rc = db_audit(d, "deploy.delete", object, db_get_text(res, 0, 0), err)) < 0)
		goto out;
	rc = db_commit(d, err);
out:
	if (rc < 0)
		db_rollback(d);
	db_result_free(res);
	return rc;
}
