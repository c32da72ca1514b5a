/*
 * access.c: grants, checked reads and the audit log's reading side (see
 * access.h). The policies themselves are in migration 017; this module
 * holds every statement on access_grants and calls its functions.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/access.h"
#include "common/buf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int oom(pr_error *err)
{
	return pr_error_set(err, PR_ENOMEM, "out of memory");
}

static bool role_valid(const char *r)
{
	size_t n = r ? strlen(r) : 0;

	return n >= 1 && n <= ACCESS_ROLE_MAX;
}

static int bad_role(const char *r, pr_error *err)
{
	return pr_error_set(err, PR_EUSAGE, "role '%.80s' is not a valid role name "
			    "(1 to %d characters)", r ? r : "", ACCESS_ROLE_MAX);
}

int access_session(db *d, const char *command, pr_error *err)
{
	static const char sql[] =
		"select set_config('profreg.command', left($1, 256), false),"
		" set_config('profreg.os_user', left($2, 128), false),"
		" set_config('profreg.host', left($3, 256), false)";
	char host[256];
	const char *p[3];

	if (gethostname(host, sizeof(host)) < 0)
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	p[0] = command ? command : "profreg";
	p[1] = db_actor(d);
	p[2] = host;
	return db_exec(d, NULL, err, "cannot tag the session for the audit log", sql, 3, p);
}

/* Turn profreg_read's answer into 0, PR_ENOTFOUND or PR_EREFUSED. */
static int read_answer(struct pg_result *res, pr_error *err)
{
	const char *refused = db_get_text(res, 0, 0), *msg = db_get_text(res, 0, 1);

	if (!refused)
		return 0;
	return pr_error_set(err, strcmp(refused, "heap") == 0 ? PR_EREFUSED : PR_ENOTFOUND, "%s",
			    msg ? msg : refused);
}

int access_read_captures(db *d, const char *action, const char *object, const int64_t *ids,
			 size_t n, size_t stride, bool whole, pr_error *err)
{
	static const char sql[] =
		"select refused, message from profreg_read($1, $2::bigint[], $3::boolean, $4)";
	buf arr = BUF_INIT;
	struct pg_result *res = NULL;
	const char *p[4];
	int rc;

	if (n == 0)
		return 0;
	if (db_bigint_array(&arr, ids, n, stride) < 0)
		return oom(err);
	p[0] = action, p[1] = arr.ptr, p[2] = whole ? "true" : "false", p[3] = object;
	if ((rc = db_exec(d, &res, err, "cannot check and audit a read of captures", sql, 4,
			  p)) == 0)
		rc = read_answer(res, err);
	db_result_free(res);
	buf_release(&arr);
	return rc;
}

int access_audit_unseen(db *d, const char *action, const int64_t *ids, size_t n, bool whole,
			pr_error *err)
{
	/* Row security leaves in `profiles` only what the role sees. */
	static const char sql[] =
		"with u as (select array_agg(x order by x) as a from unnest($2::bigint[]) x"
		" where not exists (select 1 from profiles p where p.id = x))"
		" select case when u.a is not null then (select r.refused"
		" from profreg_read($1, u.a, $3::boolean) r) end from u";
	buf arr = BUF_INIT;
	struct pg_result *res = NULL;
	const char *p[3];
	int rc;

	if (n == 0)
		return 0;
	if (db_bigint_array(&arr, ids, n, sizeof(*ids)) < 0)
		return oom(err);
	p[0] = action, p[1] = arr.ptr, p[2] = whole ? "true" : "false";
	rc = db_exec(d, &res, err, "cannot audit a read of captures", sql, 3, p);
	db_result_free(res);
	buf_release(&arr);
	return rc < 0 ? rc : 0;
}

int access_read_finding(db *d, const char *action, int64_t finding_id, pr_error *err)
{
	/* The pins the role may see (row security on capture_pins decides). */
	static const char sql[] =
		"select refused, message from profreg_read($1, coalesce((select"
		" array_agg(profile_id order by profile_id) from capture_pins"
		" where finding_id = $2::bigint), '{}'), false, 'finding:' || $2)";
	struct pg_result *res = NULL;
	char id[24];
	const char *p[2] = {action, id};
	int rc;

	snprintf(id, sizeof(id), "%" PRId64, finding_id);
	if ((rc = db_exec(d, &res, err, "cannot audit a view of a finding", sql, 2, p)) == 0)
		rc = read_answer(res, err);
	db_result_free(res);
	return rc;
}

int access_read_snapshot(db *d, const char *action, int64_t snapshot_id, pr_error *err)
{
	static const char sql[] =
		"select refused, message from profreg_read_snapshot($1, $2::bigint)";
	struct pg_result *res = NULL;
	char id[24];
	const char *p[2] = {action, id};
	int rc;

	snprintf(id, sizeof(id), "%" PRId64, snapshot_id);
	if ((rc = db_exec(d, &res, err, "cannot check and audit a read of a snapshot", sql, 2,
			  p)) == 0)
		rc = read_answer(res, err);
	db_result_free(res);
	return rc;
}

/* Whether `role` exists in the cluster. */
static int role_exists(db *d, bool *out, const char *role, pr_error *err)
{
	struct pg_result *res = NULL;
	const char *p[1] = {role};
	int rc;

	*out = false;
	if ((rc = db_exec(d, &res, err, "cannot look up a role",
			  "select 1 from pg_roles where rolname = $1", 1, p)) == 0)
		*out = db_rows(res) > 0;
	db_result_free(res);
	return rc;
}

void access_create_role_sql(char *out, size_t size, const char *role)
{
	size_t n = 0;
	const char *tail = "\" LOGIN";

	if (size < 16) {
		*out = '\0';
		return;
	}
	n = (size_t)snprintf(out, size, "CREATE ROLE \"");
	for (; *role && n + strlen(tail) + 3 < size; role++) {
		if (*role == '"')
			out[n++] = '"';
		out[n++] = *role;
	}
	if (n + strlen(tail) < size)
		memcpy(out + n, tail, strlen(tail) + 1);
	else
		out[n < size ? n : size - 1] = '\0';
}

int access_grant(db *d, const char *role, const char *team, bool heap, bool admin,
		 pr_error *err)
{
	static const char upsert[] =
		"insert into access_grants (role, team, heap, admin) values ($1, $2, $3, $4)"
		" on conflict (role, team) do update set heap = excluded.heap,"
		" admin = excluded.admin, granted_at = now(), granted_by = session_user";
	char detail[96];
	const char *p[4] = {role, team ? team : "", heap ? "true" : "false",
			    admin ? "true" : "false"};
	const char *ap[2] = {role, admin ? "true" : "false"};
	buf object = BUF_INIT;
	bool exists = false, in_tx = false;
	int rc;

	if (!role_valid(role))
		return bad_role(role, err);
	if ((!team || !*team) && !admin)
		return pr_error_set(err, PR_EUSAGE, "a grant needs a team (or --admin)");
	/* service add's rule: a grant of a team no service can have is a typo. */
	if (team && *team && !db_service_team_valid(team))
		return pr_error_set(err, PR_EUSAGE,
				    "invalid team '%.64s': use 1 to %d bytes without control "
				    "characters",
				    team, DB_TEAM_MAX);
	if ((rc = role_exists(d, &exists, role, err)) < 0)
		return rc;
	if (!exists) {
		char sql[600];
		access_create_role_sql(sql, sizeof(sql), role);
		return pr_error_set(err, PR_ENOTFOUND,
				    "role '%s' does not exist (create it first: %s)", role, sql);
	}
	if ((rc = db_begin(d, err)) < 0)
		return rc;
	in_tx = true;
	snprintf(detail, sizeof(detail), "{\"heap\": %s, \"admin\": %s}", heap ? "true" : "false",
		 admin ? "true" : "false");
	if (buf_printf(&object, "role:%s team:%s", role, team ? team : "") < 0) {
		rc = oom(err);
		goto out;
	}
	if ((rc = db_exec(d, NULL, err, "cannot record a grant", upsert, 4, p)) < 0 ||
	    (rc = db_exec(d, NULL, err, "cannot grant the table privileges",
			  "select profreg_access_apply($1, $2::boolean)", 2, ap)) < 0 ||
	    (rc = db_audit(d, "access.grant", object.ptr, detail, err)) < 0 ||
	    (rc = db_commit(d, err)) < 0)
		goto out;
	in_tx = false;
out:
	if (in_tx)
		db_rollback(d);
	buf_release(&object);
	return rc;
}

int access_revoke(db *d, const char *role, const char *team, size_t *removed, pr_error *err)
{
	static const char left_sql[] =
		"select exists (select 1 from access_grants where role = $1),"
		" exists (select 1 from access_grants where role = $1 and admin),"
		" exists (select 1 from pg_roles where rolname = $1)";
	const char *p[2] = {role, team};
	struct pg_result *res = NULL;
	buf object = BUF_INIT;
	bool in_tx = false;
	int rc;

	*removed = 0;
	if (!role_valid(role))
		return bad_role(role, err);
	if ((rc = db_begin(d, err)) < 0)
		return rc;
	in_tx = true;
	if ((rc = db_exec(d, &res, err, "cannot remove a grant",
			  "with d as (delete from access_grants where role = $1 and"
			  " ($2::text is null or team = $2) returning 1) select count(*) from d",
			  2, p)) < 0)
		goto out;
	*removed = (size_t)db_get_i64(res, 0, 0);
	db_result_free(res);
	res = NULL;
	if (*removed == 0) {
		rc = team ? pr_error_set(err, PR_ENOTFOUND, "role '%s' has no grant for team '%s'",
					 role, team)
			  : pr_error_set(err, PR_ENOTFOUND, "role '%s' has no grant", role);
		goto out;
	}
	if ((rc = db_exec(d, &res, err, "cannot read the grants left", left_sql, 1, p)) < 0)
		goto out;
	/* The role's table privileges follow what is left: none, read-only or admin's. */
	if (db_get_bool(res, 0, 2)) {
		const char *ap[2] = {role, db_get_bool(res, 0, 1) ? "true" : "false"};
		bool any = db_get_bool(res, 0, 0);
		if ((rc = db_exec(d, NULL, err, "cannot revoke the table privileges",
				  "select profreg_access_drop($1)", 1, p)) < 0 ||
		    (any && (rc = db_exec(d, NULL, err, "cannot grant the table privileges",
					  "select profreg_access_apply($1, $2::boolean)", 2,
					  ap)) < 0))
			goto out;
	}
	if (buf_printf(&object, "role:%s team:%s", role, team ? team : "*") < 0) {
		rc = oom(err);
		goto out;
	}
	if ((rc = db_audit(d, "access.revoke", object.ptr, NULL, err)) < 0 ||
	    (rc = db_commit(d, err)) < 0)
		goto out;
	in_tx = false;
out:
	if (in_tx)
		db_rollback(d);
	db_result_free(res);
	buf_release(&object);
	return rc;
}

int access_list(access_grant_row **out, size_t *n, db *d, pr_error *err)
{
	static const char sql[] =
		"select g.role, g.team, g.heap, g.admin,"
		" exists (select 1 from pg_roles r where r.rolname = g.role),"
		" " DB_TS_TO_US("g.granted_at") ", g.granted_by"
		" from access_grants g order by g.role, g.team";
	struct pg_result *res = NULL;
	access_grant_row *rows = NULL;
	int nrows, rc;

	*out = NULL;
	*n = 0;
	if ((rc = db_exec(d, &res, err, "cannot list the grants", sql, 0, NULL)) < 0)
		return rc;
	nrows = db_rows(res);
	if (nrows && !(rows = calloc((size_t)nrows, sizeof(*rows)))) {
		rc = oom(err);
		goto out;
	}
	for (int i = 0; i < nrows; i++) {
		access_grant_row *g = &rows[i];
		snprintf(g->role, sizeof(g->role), "%s", db_get_text(res, i, 0));
		snprintf(g->team, sizeof(g->team), "%s", db_get_text(res, i, 1));
		g->heap = db_get_bool(res, i, 2);
		g->admin = db_get_bool(res, i, 3);
		g->role_exists = db_get_bool(res, i, 4);
		g->granted_at_us = db_get_i64(res, i, 5);
		snprintf(g->granted_by, sizeof(g->granted_by), "%s", db_get_text(res, i, 6));
	}
	*out = rows;
	*n = (size_t)nrows;
out:
	db_result_free(res);
	return rc;
}

void access_audit_rows_free(access_audit_row *rows, size_t n)
{
	for (size_t i = 0; rows && i < n; i++) {
		access_audit_row *r = &rows[i];
		free(r->actor);
		free(r->action);
		free(r->object);
		free(r->detail_json);
		free(r->db_role);
		free(r->session_role);
		free(r->command);
		free(r->client_addr);
		free(r->client_host);
		free(r->capture_ids);
	}
	free(rows);
}

static char *dup_or_null(const char *s, bool *bad)
{
	char *c;

	if (!s)
		return NULL;
	if (!(c = strdup(s)))
		*bad = true;
	return c;
}

/* Parse "{1,2,3}" (a bigint[] as text) into a new array. */
static int parse_ids(int64_t **out, size_t *n, const char *s)
{
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	if (!s)
		return 0;
	for (const char *c = s; *c; c++)
		cap += *c == ',';
	if (!(*out = calloc(cap + 1, sizeof(**out))))
		return -1;
	while (*s == '{' || *s == ',')
		s++;
	while (*s && *s != '}') {
		char *end;
		(*out)[(*n)++] = strtoll(s, &end, 10);
		if (end == s || *n > cap)
			break;
		s = *end == ',' ? end + 1 : end;
	}
	return 0;
}

int access_audit_list(access_audit_row **out, size_t *n, db *d, const access_audit_filter *f,
		      pr_error *err)
{
	static const char sql[] =
		"select a.id, " DB_TS_TO_US("a.at") ", a.actor, a.action, a.object,"
		" a.detail::text, a.db_role, a.session_role, a.command, host(a.client_addr),"
		" a.client_host, a.capture_ids::text"
		" from audit_log a"
		" where ($1::bigint is null or a.at >= " DB_US_TO_TS("$1") ")"
		" and ($2::text is null or a.db_role = $2)"
		" and ($3::bigint is null or a.capture_ids @> array[$3::bigint])"
		" order by a.at desc, a.id desc limit $4";
	char since[24], cap[24], lim[24];
	const char *p[4];
	struct pg_result *res = NULL;
	access_audit_row *rows = NULL;
	int nrows = 0, rc;
	bool bad = false;

	*out = NULL;
	*n = 0;
	snprintf(since, sizeof(since), "%" PRId64, f ? f->since_us : 0);
	snprintf(cap, sizeof(cap), "%" PRId64, f ? f->capture_id : 0);
	snprintf(lim, sizeof(lim), "%zu", f && f->limit ? f->limit : 1000);
	p[0] = f && f->since_us ? since : NULL;
	p[1] = f ? f->role : NULL;
	p[2] = f && f->capture_id ? cap : NULL;
	p[3] = lim;
	if ((rc = db_exec(d, &res, err, "cannot read the audit log", sql, 4, p)) < 0)
		return rc;
	nrows = db_rows(res);
	if (nrows && !(rows = calloc((size_t)nrows, sizeof(*rows)))) {
		rc = oom(err);
		goto out;
	}
	for (int i = 0; i < nrows; i++) {
		access_audit_row *r = &rows[i];
		r->id = db_get_i64(res, i, 0);
		r->at_us = db_get_i64(res, i, 1);
		r->actor = dup_or_null(db_get_text(res, i, 2), &bad);
		r->action = dup_or_null(db_get_text(res, i, 3), &bad);
		r->object = dup_or_null(db_get_text(res, i, 4), &bad);
		r->detail_json = dup_or_null(db_get_text(res, i, 5), &bad);
		r->db_role = dup_or_null(db_get_text(res, i, 6), &bad);
		r->session_role = dup_or_null(db_get_text(res, i, 7), &bad);
		r->command = dup_or_null(db_get_text(res, i, 8), &bad);
		r->client_addr = dup_or_null(db_get_text(res, i, 9), &bad);
		r->client_host = dup_or_null(db_get_text(res, i, 10), &bad);
		if (parse_ids(&r->capture_ids, &r->ncaptures, db_get_text(res, i, 11)) < 0)
			bad = true;
	}
	if (bad) {
		rc = oom(err);
		goto out;
	}
	*out = rows;
	*n = (size_t)nrows;
	rows = NULL;
out:
	access_audit_rows_free(rows, (size_t)nrows);
	db_result_free(res);
	return rc;
}

int access_set_role(db *d, const char *role, pr_error *err)
{
	const char *p[1] = {role};

	if (!role_valid(role))
		return bad_role(role, err);
	return db_exec(d, NULL, err, "cannot take the request's role",
		       "select set_config('role', $1, true)", 1, p);
}

int access_audit_call(db *d, const char *role, const char *action, const char *object,
		      const char *detail_json, const int64_t *ids, size_t n, pr_error *err)
{
	static const char sql[] =
		"select profreg_audit_as(coalesce($1::name, current_user), $2, $3,"
		" coalesce($4::jsonb, '{}'), $5::bigint[])";
	buf arr = BUF_INIT;
	const char *p[5] = {role, action, object, detail_json, NULL};
	int rc;

	if (role && !role_valid(role))
		return bad_role(role, err);
	if (n ? db_bigint_array(&arr, ids, n, sizeof(int64_t)) < 0 : buf_puts(&arr, "{}") < 0)
		return oom(err);
	p[4] = arr.ptr;
	rc = db_exec(d, NULL, err, "cannot write the audit row of an API call", sql, 5, p);
	buf_release(&arr);
	return rc;
}
