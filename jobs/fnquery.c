/*
 * fnquery.c: the function query (see fnquery.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/fnquery.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/timeutil.h"

#define FNQUERY_DEFAULT_LIMIT 1000
/* A regular expression is the user's: it may not hold the database for long. */
#define FNQUERY_TIMEOUT "set local statement_timeout = '30s'"

#define ISO(c) "to_char(" c " at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"

/*
 * The matched functions, then their rows in the window; $1 pattern, $2
 * match, $3 min self share, $4 service id (0: any), $5 type, $6 since,
 * $7 until (us), $8 limit + 1 (one more tells the list was cut).
 *
 * A function's captures are looked for among the captures of the
 * services that use it (service_functions, migration 033), in the window
 * through the index on service, type and time, and in each capture the
 * function's values are found one of two ways, whichever the number of
 * matched functions makes cheaper (the other branch's one-time filter
 * keeps it from running at all):
 * - a few functions: each one's place in the ids (array_position), the
 *   arrays first taken out of their compressed storage once a capture
 *   (d, which OFFSET 0 keeps the planner from folding into each use:
 *   looked up for each function, they were decompressed each time);
 * - more: the capture's entries unnested once and matched by hash.
 * Shares are computed as ingest computes them (value / the capture's
 * total, 0 when the total is 0).
 */
#define FNQUERY_FEW "8"
#define SHARE(v) "coalesce(" v "::float8 / nullif(p.total_value, 0), 0)"
#define IN_WINDOW \
	"   and p.captured_at >= " DB_US_TO_TS("$6") " and p.captured_at < " DB_US_TO_TS("$7") \
	"   and ($4::bigint = 0 or p.service_id = $4)" \
	"   and ($5::text is null or p.profile_type = $5)"
#define MATCHED \
	"with f as (select id, name, file from functions where not synthetic and" \
	"   case $2 when 'exact' then name = $1" \
	"     when 'prefix' then left(name, length($1)) = $1 else name ~ $1 end)," \
	" fa as (select count(*) as n from f)," \
	" fs as (select distinct sf.service_id from service_functions sf" \
	"   where sf.function_id in (select id from f))," \
	" e as (select v.profile_id, m.id, d.sv[m.k] as self, d.tv[m.k] as total" \
	"   from profile_vectors v join profiles p on p.id = v.profile_id" \
	"   cross join lateral (select v.function_ids || '{}'::bigint[] as ids," \
	"     v.self_values || '{}'::bigint[] as sv, v.total_values || '{}'::bigint[] as tv" \
	"     offset 0) d" \
	"   cross join lateral (select f.id, array_position(d.ids, f.id) as k from f) m" \
	"   where (select n from fa) <= " FNQUERY_FEW \
	"   and p.service_id in (select service_id from fs) and m.k is not null" IN_WINDOW \
	"   union all select v.profile_id, u.id, u.s, u.t" \
	"   from profile_vectors v join profiles p on p.id = v.profile_id" \
	"   cross join lateral unnest(v.function_ids, v.self_values, v.total_values) u(id, s, t)" \
	"   where (select n from fa) > " FNQUERY_FEW \
	"   and p.service_id in (select service_id from fs) and u.id in (select id from f)" \
	IN_WINDOW ")," \
	" r as (select e.profile_id, e.id as function_id, p.captured_at," \
	"   " SHARE("e.self") " as self_share, " SHARE("e.total") " as total_share," \
	"   p.service_id, p.profile_type, p.release, p.host" \
	"   from e join profiles p on p.id = e.profile_id" \
	"   where $3::float8 <= 0 or " SHARE("e.self") " >= $3::float8)"

/*
 * The capture list as plain rows, made into JSON here: aggregating
 * thousands of rows into one jsonb value in the server sorted them twice
 * and spilled to disk, and cost more than reading them.
 */
static const char list_sql[] = MATCHED
	" select r.profile_id, s.name, r.profile_type, r.release, r.host,"
	"   " DB_TS_TO_US("r.captured_at") ", f.name, f.file, r.self_share, r.total_share"
	" from r join f on f.id = r.function_id join services s on s.id = r.service_id"
	" order by r.captured_at desc, r.profile_id, r.function_id limit $8";

/* How many functions the pattern matched ($1, $2; the others unused). */
static const char count_sql[] =
	"select count(*) from functions where not synthetic and"
	"   case $2 when 'exact' then name = $1"
	"     when 'prefix' then left(name, length($1)) = $1 else name ~ $1 end";

/* Per release or per day: $9 is 'release' or 'day'. */
static const char agg_sql[] = MATCHED
	" select coalesce(jsonb_agg(x.j order by x.last desc, x.k), '[]')::text,"
	"   (select count(*) from f)"
	" from (select max(r.captured_at) as last, min(s.name) || min(r.profile_type) as k,"
	"   jsonb_build_object('service', min(s.name), 'type', min(r.profile_type),"
	"   $9::text, g.grp, 'function', min(f.name), 'file', min(f.file),"
	"   'captures', count(*), 'mean_self_share', avg(r.self_share),"
	"   'min_self_share', min(r.self_share), 'max_self_share', max(r.self_share),"
	"   'mean_total_share', avg(r.total_share),"
	"   'first', " ISO("min(r.captured_at)") ", 'last', " ISO("max(r.captured_at)") ") as j"
	"   from r join f on f.id = r.function_id join services s on s.id = r.service_id"
	"   cross join lateral (select case $9 when 'release' then r.release"
	"     else to_char(r.captured_at at time zone 'UTC', 'YYYY-MM-DD') end as grp) g"
	"   group by r.service_id, r.profile_type, g.grp, r.function_id"
	"   order by max(r.captured_at) desc limit $8) x";

/* A text column as JSON: null stays null. */
static json_t *text_of(const struct pg_result *res, int row, int col)
{
	const char *v = db_get_text(res, row, col);

	return v ? json_string(v) : json_null();
}

/* A share column as JSON: null stays null. */
static json_t *share_of(const struct pg_result *res, int row, int col)
{
	const char *v = db_get_text(res, row, col);

	return v ? json_real(strtod(v, NULL)) : json_null();
}

/* list_sql's rows as the JSON objects fnquery_run returns. NULL: out of memory. */
static json_t *list_rows(const struct pg_result *res)
{
	json_t *rows = json_array();

	for (int i = 0; rows && i < db_rows(res); i++) {
		char at[TIME_FMT_MAX];
		int64_t us = db_get_i64(res, i, 5);
		json_t *o;

		/* Whole seconds, as every other listing shows a capture's time. */
		time_format(at, us - (us % 1000000 + 1000000) % 1000000);
		o = json_pack("{s:I,s:o,s:o,s:o,s:o,s:s,s:o,s:o,s:o,s:o}",
			      "capture_id", (json_int_t)db_get_i64(res, i, 0),
			      "service", text_of(res, i, 1), "type", text_of(res, i, 2),
			      "release", text_of(res, i, 3), "host", text_of(res, i, 4),
			      "captured_at", at, "function", text_of(res, i, 6),
			      "file", text_of(res, i, 7), "self_share", share_of(res, i, 8),
			      "total_share", share_of(res, i, 9));
		if (!o || json_array_append_new(rows, o) < 0) {
			json_decref(rows);
			rows = NULL;
		}
	}
	return rows;
}

int fnquery_run(json_t **out, db *d, const fnquery_opts *o, pr_error *err)
{
	static const char *const match[] = {"exact", "prefix", "regex"};
	char min[40], sid[24], since[24], until[24], lim[24];
	const char *p[9] = {o->pattern, match[o->match], min, sid, o->type, since, until, lim,
			    o->by == FNQUERY_RELEASE ? "release" : "day"};
	size_t limit = o->limit ? o->limit : FNQUERY_DEFAULT_LIMIT;
	db_service svc = {0};
	struct pg_result *res = NULL;
	json_t *rows = NULL;
	bool in_tx = false;
	int rc;

	*out = NULL;
	if (!o->pattern || !*o->pattern)
		return pr_error_set(err, PR_EUSAGE, "no function name or pattern given");
	if (o->service && (rc = db_service_get(d, &svc, o->service, err)) < 0)
		return rc;
	snprintf(min, sizeof(min), "%.17g", o->min_self);
	snprintf(sid, sizeof(sid), "%" PRId64, svc.id);
	snprintf(since, sizeof(since), "%" PRId64, o->since_us);
	snprintf(until, sizeof(until), "%" PRId64, o->until_us ? o->until_us : INT64_MAX / 2);
	snprintf(lim, sizeof(lim), "%zu", limit + 1);
	if ((rc = db_begin(d, err)) < 0)
		goto out;
	in_tx = true;
	if ((rc = db_exec(d, NULL, err, "bounding the query's time", FNQUERY_TIMEOUT, 0,
			  NULL)) < 0 ||
	    (rc = db_exec(d, &res, err, "querying functions",
			  o->by == FNQUERY_CAPTURES ? list_sql : agg_sql,
			  o->by == FNQUERY_CAPTURES ? 8 : 9, p)) < 0)
		goto out;
	if (o->by == FNQUERY_CAPTURES) {
		rows = list_rows(res);
		db_result_free(res);
		res = NULL;
		if (rows && (rc = db_exec(d, &res, err, "counting the matched functions",
					  count_sql, 2, p)) < 0)
			goto out;
	} else {
		rows = json_loads(db_get_text(res, 0, 0), 0, NULL);
	}
	if (!rows) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	{
		bool cut = json_array_size(rows) > limit;
		if (cut)
			json_array_remove(rows, limit);
		*out = json_pack("{s:o,s:b,s:I}", "rows", rows, "truncated", cut, "functions",
				 (json_int_t)db_get_i64(res, 0, o->by == FNQUERY_CAPTURES ? 0 : 1));
		rows = NULL;
		if (!*out)
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
	}
	rc = rc < 0 ? rc : db_commit(d, err);
	in_tx = false;
out:
	if (in_tx)
		db_rollback(d);
	if (rc < 0 && err->code == PR_EUSAGE && o->match == FNQUERY_REGEX) {
		/* The server's reason, without the "database: ..." the user did not ask about. */
		char why[PR_ERROR_MSG_MAX];
		const char *r = strstr(err->msg, "invalid regular expression");
		snprintf(why, sizeof(why), "%s", r ? r : err->msg);
		pr_error_clear(err);
		rc = pr_error_set(err, PR_EUSAGE, "'%s' is not a valid pattern: %s", o->pattern,
				  why);
	}
	json_decref(rows);
	db_result_free(res);
	db_service_release(&svc);
	return rc;
}
