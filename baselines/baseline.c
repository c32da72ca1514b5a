/*
 * baseline.c: eligible captures, their per-function values, and the
 * summaries a baseline keeps (see baseline.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "baselines/baseline.h"
#include "common/buf.h"
#include "pipeline/ingest.h"
#include "stats/stats.h"

#include <inttypes.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void capture_set_release(capture_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->caps[i].release);
		free(s->caps[i].host);
	}
	free(s->caps);
	s->caps = NULL;
	s->n = 0;
}

static int oom(pr_error *err)
{
	return pr_error_set(err, PR_ENOMEM, "out of memory");
}

/*
 * A capture's load figure, as text: its "load" tag, else its "rps" tag.
 * capture_fill reads it as ingest does (ingest_parse_load): a pattern
 * here took "6.5e1", which ingest let in, for no load at all.
 */
#define LOAD_SQL "coalesce(p.tags ->> 'load', p.tags ->> 'rps', '')"

/* The sampling period's columns: how many units of what one sample stands for. */
#define PERIOD_SQL "coalesce(p.period, 0), coalesce(p.period_type, ''), coalesce(p.period_unit, '')"

/* Fill the columns every capture query returns after the id and time. */
static int capture_fill(capture_ref *c, PGresult *res, int i)
{
	c->id = db_get_i64(res, i, 0);
	c->captured_at_us = db_get_i64(res, i, 1);
	if (!(c->release = strdup(db_get_text(res, i, 2))))
		return PR_ENOMEM;
	c->total = db_get_i64(res, i, 3);
	c->sample_count = db_get_i64(res, i, 4);
	c->duration_ns = db_get_i64(res, i, 5);
	/* Unreadable (stored before ingest checked it): none, and the capture is left out. */
	if (ingest_parse_load(&c->load, db_get_text(res, i, 6)) < 0)
		c->load = 0;
	snprintf(c->unit, sizeof(c->unit), "%s", db_get_text(res, i, 7));
	if (*db_get_text(res, i, 8) && !(c->host = strdup(db_get_text(res, i, 8))))
		return PR_ENOMEM;
	c->period = db_get_i64(res, i, 9);
	snprintf(c->period_type, sizeof(c->period_type), "%s", db_get_text(res, i, 10));
	snprintf(c->period_unit, sizeof(c->period_unit), "%s", db_get_text(res, i, 11));
	return 0;
}

/* A query being built: its text, and its parameters, numbered from $1. */
typedef struct query {
	buf sql;
	const char *params[12];
	int n;
} query;

/* Append `fmt`, whose one %s is the placeholder of the new parameter `v`. */
static int cond(query *qb, const char *fmt, const char *v)
{
	char ph[16];

	qb->params[qb->n++] = v;
	snprintf(ph, sizeof(ph), "$%d", qb->n);
	return buf_printf(&qb->sql, fmt, ph);
}

#define US_PARAM(ph) "'epoch'::timestamptz + " ph "::bigint * interval '1 microsecond'"

int capture_set_load(capture_set *out, db *d, const capture_query *q, pr_error *err)
{
	/*
	 * Eligibility lives in SQL so the rule is one statement: evidence and
	 * incident captures are out, and so is every release with a
	 * regression for this service and type that did not go away. The statement holds only the
	 * conditions this query has (rather than "$n is null or ..."), so
	 * that one plan serves every service: it is prepared once a session
	 * for each shape, and the server stops planning it anew.
	 */
	/* clang-format off */
	static const char head[] =
		"select p.id, " DB_TS_TO_US("p.captured_at") ","
		"       p.release, p.total_value, p.sample_count, coalesce(p.duration_ns, 0),"
		"       " LOAD_SQL ", p.value_unit, coalesce(p.host, ''), " PERIOD_SQL
		"  from profiles p";
	/* clang-format on */
	char sid[24], since[24], until[24], asof[24], warmup[24];
	query qb = {BUF_INIT, {0}, 0};
	PGresult *res = NULL;
	int rc, n;

	memset(out, 0, sizeof(*out));
	snprintf(sid, sizeof(sid), "%" PRId64, q->service_id);
	snprintf(since, sizeof(since), "%" PRId64, q->since_us);
	snprintf(until, sizeof(until), "%" PRId64, q->until_us);
	snprintf(asof, sizeof(asof), "%" PRId64, q->as_of_us);
	snprintf(warmup, sizeof(warmup), "%" PRId64, q->warmup_us);
	rc = buf_puts(&qb.sql, head);
	rc = rc < 0 ? rc : buf_puts(&qb.sql, q->empty ? " where p.total_value = 0"
						      : " where p.total_value > 0");
	rc = rc < 0 ? rc : cond(&qb, " and p.service_id = %s", sid);
	rc = rc < 0 ? rc : cond(&qb, " and p.profile_type = %s", q->type);
	if (rc == 0 && q->release)
		rc = cond(&qb, " and p.release = %s", q->release);
	if (rc == 0 && q->exclude_release)
		rc = cond(&qb, " and p.release <> %s", q->exclude_release);
	if (rc == 0 && q->since_us)
		rc = cond(&qb, " and p.captured_at >= " US_PARAM("%s"), since);
	if (rc == 0 && q->until_us)
		rc = cond(&qb, " and p.captured_at < " US_PARAM("%s"), until);
	if (rc == 0 && q->exclude_releases)
		rc = cond(&qb, " and not (%s::jsonb ? p.release)", q->exclude_releases);
	if (rc == 0 && q->hosts)
		rc = cond(&qb, " and p.host is not null and %s::jsonb ? p.host", q->hosts);
	if (rc == 0 && q->warmup_us > 0) {
		char ph[16];
		qb.params[qb.n++] = warmup;
		snprintf(ph, sizeof(ph), "$%d", qb.n);
		rc = buf_printf(&qb.sql, " and not " DB_WARMUP_SQL("%s"), ph, ph, ph, ph);
	}
	if (rc == 0 && (q->eligible_only || q->no_evidence))
		rc = buf_puts(&qb.sql,
			      " and p.retention_class <> 'forensic'"
			      " and not (p.tags ? 'incident') and not (p.tags ? 'forensic')");
	if (rc == 0 && q->eligible_only) {
		/*
		 * A regression never becomes its own baseline: a release
		 * stays out while its regression is open, and after it is
		 * fixed, rolled back or resolved by hand too. The code that
		 * regressed is still in it; in the baseline, it hid the same
		 * regression shipped again (a roll-forward after a rollback,
		 * a fix undone). Only a finding that went away, noise, lets
		 * its release back. So does a whole-service cost finding that
		 * cannot page (`low`: a cost per second, which also rises with
		 * traffic): a busier release kept out of every later baseline
		 * starved the next release's gate ("insufficient baseline").
		 * And a rise accepted by hand (finding resolve --accept), or
		 * carried from one: it is the new level.
		 */
		rc = buf_puts(&qb.sql,
			      " and not exists (select 1 from findings f"
			      "   where f.service_id = p.service_id"
			      "     and f.profile_type = p.profile_type"
			      "     and f.state <> 'went_away' and f.direction = 'regression'"
			      "     and not (f.kind = 'cost'"
			      "       and coalesce(f.severity, 'none') in ('none', 'low'))"
			      "     and not f.accepted and not exists (select 1 from findings a"
			      "       where a.id = f.carried_from and a.accepted)"
			      "     and f.current_release = p.release");
		/*
		 * Found by then in the run's own time (its first look, or the
		 * "now" it was stored with), not the wall clock: a night run
		 * later with --at (a missed night filled in) stores findings
		 * whose created_at is after its as_of, and a release with an
		 * open regression went into the next release's baseline.
		 */
		if (rc == 0 && q->as_of_us)
			rc = cond(
				&qb,
				" and coalesce((select min(l.analysed_at) from finding_looks l"
				"   where l.finding_id = f.id),"
				"   'epoch'::timestamptz + (f.detail ->> 'at_us')::bigint"
				"     * interval '1 microsecond', f.created_at) <= " US_PARAM("%s"),
				asof);
		rc = rc < 0 ? rc : buf_puts(&qb.sql, ")");
		/*
		 * Nor a release no run has judged (migration 038): one deployed
		 * without a gate has no finding even when it regressed, and in
		 * the next release's baseline its captures hid the same
		 * regression shipped again. The history taken before the
		 * service and type were first judged is the exception: nothing
		 * judged it, and it is all a first judgement has.
		 */
		if (rc == 0 && !q->unjudged_too) {
			char by[128] = "";
			if (q->as_of_us) {
				qb.params[qb.n++] = asof;
				snprintf(by, sizeof(by), " and j.judged_at <= " US_PARAM("$%d"),
					 qb.n);
			}
			rc = buf_printf(
				&qb.sql,
				" and (exists (select 1 from judged_releases j"
				"   where j.service_id = p.service_id"
				"     and j.profile_type = p.profile_type"
				"     and j.release = p.release%s)"
				"   or p.captured_at < coalesce((select min(j.judged_at)"
				"     from judged_releases j where j.service_id = p.service_id"
				"       and j.profile_type = p.profile_type%s), 'infinity'))",
				by, by);
		}
	}
	rc = rc < 0 ? rc : buf_puts(&qb.sql, " order by p.captured_at, p.id");
	if (rc < 0) {
		rc = oom(err);
		goto out;
	}
	if ((rc = db_exec_repeat(d, &res, err, "selecting captures", qb.sql.ptr, qb.n, qb.params,
				 0)) < 0)
		goto out;
	n = db_rows(res);
	if (n && !(out->caps = calloc((size_t)n, sizeof(*out->caps)))) {
		rc = oom(err);
		goto out;
	}
	for (int i = 0; i < n; i++) {
		if (capture_fill(&out->caps[i], res, i) < 0) {
			rc = oom(err);
			goto out;
		}
		out->n++;
	}
out:
	db_result_free(res);
	buf_release(&qb.sql);
	if (rc < 0)
		capture_set_release(out);
	return rc;
}

int capture_releases_in(char ***out, size_t *n, db *d, int64_t service_id, const char *type,
			int64_t since_us, int64_t until_us, pr_error *err)
{
	static const char sql[] =
		"select release from profiles"
		" where service_id = $1 and profile_type = $2 and total_value > 0"
		"   and captured_at >= 'epoch'::timestamptz + $3::bigint * interval '1 microsecond'"
		"   and captured_at < 'epoch'::timestamptz + $4::bigint * interval '1 microsecond'"
		" group by release order by min(captured_at), release";
	char sid[24], since[24], until[24];
	const char *p[4] = {sid, type, since, until};
	PGresult *res = NULL;
	int rc;

	*out = NULL;
	*n = 0;
	snprintf(sid, sizeof(sid), "%" PRId64, service_id);
	snprintf(since, sizeof(since), "%" PRId64, since_us);
	snprintf(until, sizeof(until), "%" PRId64, until_us);
	if ((rc = db_exec(d, &res, err, "listing the night's releases", sql, 4, p)) < 0)
		return rc;
	if (db_rows(res) && !(*out = calloc((size_t)db_rows(res), sizeof(**out))))
		rc = oom(err);
	for (int i = 0; rc == 0 && i < db_rows(res); i++) {
		if (!((*out)[i] = strdup(db_get_text(res, i, 0))))
			rc = oom(err);
		else
			(*n)++;
	}
	db_result_free(res);
	if (rc < 0) {
		capture_releases_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

int baseline_release_judged(bool *out, db *d, int64_t service_id, const char *type,
			    const char *release, int64_t by_us, pr_error *err)
{
	static const char sql[] =
		"select 1 from judged_releases where service_id = $1 and profile_type = $2"
		"   and release = $3 and judged_at <= " US_PARAM("$4");
	char sid[24], by[24];
	const char *p[4] = {sid, type, release, by};
	PGresult *res = NULL;
	int rc;

	*out = false;
	snprintf(sid, sizeof(sid), "%" PRId64, service_id);
	snprintf(by, sizeof(by), "%" PRId64, by_us);
	if ((rc = db_exec(d, &res, err, "reading when the release was first judged", sql, 4, p)) <
	    0)
		return rc;
	*out = db_rows(res) > 0;
	db_result_free(res);
	return 0;
}

int baseline_first_judged(int64_t *out_us, db *d, int64_t service_id, const char *type,
			  int64_t by_us, pr_error *err)
{
	static const char sql[] =
		"select (extract(epoch from min(judged_at)) * 1000000)::bigint from judged_releases"
		" where service_id = $1 and profile_type = $2 and judged_at <= " US_PARAM("$3");
	char sid[24], by[24];
	const char *p[3] = {sid, type, by};
	PGresult *res = NULL;
	int rc;

	*out_us = 0;
	snprintf(sid, sizeof(sid), "%" PRId64, service_id);
	snprintf(by, sizeof(by), "%" PRId64, by_us);
	if ((rc = db_exec(d, &res, err, "reading when the service was first judged", sql, 3, p)) <
	    0)
		return rc;
	if (db_rows(res) > 0)
		*out_us = db_get_i64(res, 0, 0); /* NULL, none judged: 0 */
	db_result_free(res);
	return 0;
}

int capture_newest_release(char **out, db *d, int64_t service_id, const char *const *types,
			   size_t ntypes, int64_t since_us, int64_t until_us, pr_error *err)
{
	static const char sql[] =
		"select release from profiles"
		" where service_id = $1 and total_value > 0"
		"   and profile_type in (select jsonb_array_elements_text($2::jsonb))"
		"   and captured_at >= 'epoch'::timestamptz + $3::bigint * interval '1 microsecond'"
		"   and captured_at < 'epoch'::timestamptz + $4::bigint * interval '1 microsecond'"
		" group by release order by min(captured_at) desc, release desc limit 1";
	char sid[24], since[24], until[24];
	const char *p[4] = {sid, NULL, since, until};
	json_t *arr = json_array();
	char *list = NULL;
	PGresult *res = NULL;
	int rc = 0;

	*out = NULL;
	for (size_t i = 0; arr && i < ntypes; i++)
		if (json_array_append_new(arr, json_string(types[i])) < 0)
			break;
	if (!arr || json_array_size(arr) != ntypes || !(list = json_dumps(arr, JSON_COMPACT))) {
		rc = oom(err);
		goto out;
	}
	p[1] = list;
	snprintf(sid, sizeof(sid), "%" PRId64, service_id);
	snprintf(since, sizeof(since), "%" PRId64, since_us);
	snprintf(until, sizeof(until), "%" PRId64, until_us);
	if ((rc = db_exec(d, &res, err, "finding the night's newest release", sql, 4, p)) < 0)
		goto out;
	if (db_rows(res) && !(*out = strdup(db_get_text(res, 0, 0))))
		rc = oom(err);
out:
	db_result_free(res);
	json_decref(arr);
	free(list);
	return rc;
}

int capture_hosts_of(char ***out, size_t *n, db *d, int64_t service_id, pr_error *err)
{
	static const char sql[] = "select distinct host from profiles"
				  " where service_id = $1 and host is not null order by host";
	char sid[24];
	const char *p[1] = {sid};
	PGresult *res = NULL;
	int rc;

	*out = NULL;
	*n = 0;
	snprintf(sid, sizeof(sid), "%" PRId64, service_id);
	if ((rc = db_exec(d, &res, err, "listing the service's hosts", sql, 1, p)) < 0)
		return rc;
	if (db_rows(res) && !(*out = calloc((size_t)db_rows(res), sizeof(**out))))
		rc = oom(err);
	for (int i = 0; rc == 0 && i < db_rows(res); i++) {
		if (!((*out)[i] = strdup(db_get_text(res, i, 0))))
			rc = oom(err);
		else
			(*n)++;
	}
	db_result_free(res);
	if (rc < 0) {
		capture_releases_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

void capture_releases_free(char **r, size_t n)
{
	for (size_t i = 0; r && i < n; i++)
		free(r[i]);
	free(r);
}

int capture_set_load_ids(capture_set *out, db *d, const char *ids_json, pr_error *err)
{
	/* clang-format off */
	static const char sql[] =
		"select p.id, " DB_TS_TO_US("p.captured_at") ","
		"       p.release, p.total_value, p.sample_count, coalesce(p.duration_ns, 0),"
		"       " LOAD_SQL ", p.value_unit, coalesce(p.host, ''), " PERIOD_SQL
		"  from profiles p"
		" where p.id in (select (jsonb_array_elements_text($1::jsonb))::bigint)"
		" order by p.captured_at, p.id";
	/* clang-format on */
	const char *params[1] = {ids_json};
	PGresult *res = NULL;
	int rc, n;

	memset(out, 0, sizeof(*out));
	if ((rc = db_exec(d, &res, err, "loading the pinned captures", sql, 1, params)) < 0)
		return rc;
	n = db_rows(res);
	if (n && !(out->caps = calloc((size_t)n, sizeof(*out->caps))))
		rc = oom(err);
	for (int i = 0; rc == 0 && i < n; i++) {
		if (capture_fill(&out->caps[i], res, i) < 0)
			rc = oom(err);
		out->n++;
	}
	db_result_free(res);
	if (rc < 0)
		capture_set_release(out);
	return rc;
}

void func_matrix_release(func_matrix *m)
{
	free(m->func_ids);
	free(m->self);
	free(m->total);
	memset(m, 0, sizeof(*m));
}

/* "{1,2,3}": a bigint[] literal of the captures' ids. */
static int id_array(buf *b, const capture_set *a, const capture_set *c)
{
	int rc = buf_putc(b, '{');

	for (size_t k = 0; rc == 0 && k < 2; k++) {
		const capture_set *s = k ? c : a;
		for (size_t i = 0; rc == 0 && s && i < s->n; i++)
			rc = buf_printf(b, "%s%" PRId64, b->len > 1 ? "," : "", s->caps[i].id);
	}
	return rc ? rc : buf_putc(b, '}');
}

static int col_of(const capture_set *a, const capture_set *b, int64_t id, size_t *col)
{
	/* Captures are few (tens); a linear scan beats building a map. */
	for (size_t i = 0; i < a->n; i++)
		if (a->caps[i].id == id)
			return (void)(*col = i), 0;
	for (size_t i = 0; b && i < b->n; i++)
		if (b->caps[i].id == id)
			return (void)(*col = a->n + i), 0;
	return -1;
}

static int i64_cmp(const void *x, const void *y)
{
	const int64_t *a = x, *b = y;

	return (*a > *b) - (*a < *b);
}

static bool in_sorted(const int64_t *v, size_t n, int64_t x)
{
	return n && bsearch(&x, v, n, sizeof(*v), i64_cmp);
}

/* The ids of synthetic functions ("(other functions)" of retention), ascending. */
static int synthetic_ids(int64_t **out, size_t *n, db *d, pr_error *err)
{
	PGresult *res = NULL;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = db_exec_repeat(d, &res, err, "reading synthetic functions",
				 "select id from functions where synthetic order by id", 0, NULL,
				 0)) < 0)
		return rc;
	if (db_rows(res) && !(*out = malloc((size_t)db_rows(res) * sizeof(**out))))
		rc = PR_ENOMEM;
	for (int i = 0; rc == 0 && i < db_rows(res); i++)
		(*out)[(*n)++] = db_get_i64(res, i, 0);
	db_result_free(res);
	return rc;
}

/*
 * Every function id of the captures in v but the synthetic ones, once
 * each and ascending, into a new array *out of *n. Each capture's ids
 * already ascend, so the union is a merge of sorted lists: captures of
 * one service share most functions and it stays about one list long.
 */
static int union_ids(int64_t **out, size_t *n, const db_vectors *v, const int64_t *synth,
		     size_t nsynth)
{
	size_t cap = v->start[v->n] ? v->start[v->n] : 1, na = 0;
	int64_t *acc = malloc(cap * sizeof(*acc)), *tmp = malloc(cap * sizeof(*tmp));

	*out = NULL;
	*n = 0;
	if (!acc || !tmp) {
		free(acc);
		free(tmp);
		return -1;
	}
	for (size_t i = 0; i < v->n; i++) {
		const int64_t *b = v->function_id + v->start[i];
		size_t nb = v->start[i + 1] - v->start[i], x = 0, y = 0, nt = 0;
		int64_t *swap;

		while (x < na || y < nb) {
			int64_t id;

			if (y == nb || (x < na && acc[x] <= b[y])) {
				id = acc[x++];
				if (y < nb && b[y] == id)
					y++;
			} else {
				id = b[y++];
				if (in_sorted(synth, nsynth, id))
					continue;
			}
			if (nt == 0 || tmp[nt - 1] != id) /* a hand-written row may repeat one */
				tmp[nt++] = id;
		}
		swap = acc, acc = tmp, tmp = swap;
		na = nt;
	}
	free(tmp);
	*out = acc;
	*n = na;
	return 0;
}

int func_matrix_load(func_matrix *out, db *d, const capture_set *a,
		     const capture_set *b, pr_error *err)
{
	buf ids = BUF_INIT;
	db_vectors v = {0};
	int64_t *synth = NULL, *all = NULL;
	size_t nsynth = 0, ncaps = a->n + (b ? b->n : 0), nall = 0;
	bool *seen = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	out->ncaps = ncaps;
	if ((rc = id_array(&ids, a, b)) < 0) {
		rc = oom(err);
		goto out;
	}
	if ((rc = synthetic_ids(&synth, &nsynth, d, err)) < 0 ||
	    (rc = db_vectors_read(d, &v, ids.ptr, err)) < 0)
		goto out;
	/*
	 * The matrix's functions: every id the captures hold but the
	 * synthetic ones, ascending. A summary capture's "(other functions)"
	 * stands for many functions: it is never a function to test or count
	 * (the shares of the functions a summary keeps are unchanged).
	 */
	if ((rc = union_ids(&all, &nall, &v, synth, nsynth)) < 0) {
		rc = oom(err);
		goto out;
	}
	if (nall) {
		out->func_ids = all;
		out->nfuncs = nall;
		all = NULL;
	}
	if ((out->nfuncs && !(out->self = calloc(out->nfuncs * ncaps, sizeof(*out->self)))) ||
	    !(seen = calloc(ncaps ? ncaps : 1, sizeof(*seen)))) {
		rc = oom(err);
		goto out;
	}
	for (size_t i = 0; i < v.n; i++) {
		const int64_t *fid = v.function_id;
		size_t col, r = 0, end = v.start[i + 1];
		bool cut = false;

		if (col_of(a, b, v.capture_id[i], &col) < 0)
			continue;
		seen[col] = true;
		/* Both lists ascend: one pass puts each value on its function's row. */
		for (size_t k = v.start[i]; k < end; k++) {
			if (in_sorted(synth, nsynth, fid[k])) {
				cut = true;
				continue;
			}
			while (r < out->nfuncs && out->func_ids[r] < fid[k])
				r++;
			if (r < out->nfuncs && out->func_ids[r] == fid[k])
				out->self[r * ncaps + col] = v.value[k];
		}
		/* Captures cut to their top functions: what they do not list is unknown. */
		if (!cut)
			continue;
		for (size_t f = 0, k = v.start[i]; f < out->nfuncs; f++) {
			while (k < end && fid[k] < out->func_ids[f])
				k++;
			if (k == end || fid[k] != out->func_ids[f])
				out->self[f * ncaps + col] = FUNC_MATRIX_UNKNOWN;
		}
	}
	/*
	 * A capture listed but without values was deleted since the list was
	 * read (retention beside the analysis): it is unknown, not a capture
	 * where every function cost nothing.
	 */
	for (size_t col = 0; col < ncaps; col++)
		for (size_t f = 0; !seen[col] && f < out->nfuncs; f++)
			out->self[f * ncaps + col] = FUNC_MATRIX_UNKNOWN;
out:
	free(seen);
	free(synth);
	free(all);
	db_vectors_release(&v);
	buf_release(&ids);
	if (rc < 0)
		func_matrix_release(out);
	return rc;
}

int func_matrix_load_totals(func_matrix *m, db *d, const capture_set *a,
			    const capture_set *b, pr_error *err)
{
	buf ids = BUF_INIT;
	db_vectors v = {0};
	int rc;

	free(m->total);
	m->total = NULL;
	if (id_array(&ids, a, b) < 0 ||
	    !(m->total = calloc(m->nfuncs * m->ncaps + 1, sizeof(*m->total)))) {
		rc = oom(err);
		goto out;
	}
	if ((rc = db_vectors_read_totals(d, &v, ids.ptr, err)) < 0)
		goto out;
	for (size_t i = 0; i < v.n; i++) {
		size_t col, r = 0;
		if (col_of(a, b, v.capture_id[i], &col) < 0)
			continue;
		for (size_t k = v.start[i]; k < v.start[i + 1]; k++) {
			while (r < m->nfuncs && m->func_ids[r] < v.function_id[k])
				r++;
			if (r < m->nfuncs && m->func_ids[r] == v.function_id[k])
				m->total[r * m->ncaps + col] = v.value[k];
		}
	}
out:
	db_vectors_release(&v);
	buf_release(&ids);
	if (rc < 0) {
		free(m->total);
		m->total = NULL;
	}
	return rc;
}

double capture_share(const capture_ref *c, int64_t self)
{
	return c->total > 0 ? (double)self / (double)c->total : 0.0;
}

double capture_rate(const capture_ref *c, int64_t self)
{
	/*
	 * Without a duration there is no rate: counting a capture as a unit of
	 * time made captures of different lengths look like cost changes.
	 */
	return c->duration_ns > 0 ? (double)self / ((double)c->duration_ns / 1e9) : NAN;
}

int baseline_summarize(baseline_func *out, const func_matrix *m, size_t row,
		       size_t col0, const capture_set *base, pr_error *err)
{
	double *share = NULL, *vst = NULL;
	double floor_sum = 0, rate_sum = 0;
	size_t n = 0;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->function_id = m->func_ids[row];
	if (base->n == 0)
		return pr_error_set(err, PR_EUSAGE, "an empty baseline has no summary");
	if (!(share = malloc(base->n * sizeof(*share))) ||
	    !(vst = malloc(base->n * sizeof(*vst)))) {
		rc = oom(err);
		goto out;
	}
	for (size_t i = 0; i < base->n; i++) {
		int64_t self = m->self[row * m->ncaps + col0 + i];
		const capture_ref *c = &base->caps[i];
		if (self == FUNC_MATRIX_UNKNOWN)
			continue;
		share[n] = capture_share(c, self);
		vst[n] = stats_vst(share[n]);
		floor_sum +=
			stats_vst_var_floor(c->sample_count > 0 ? (double)c->sample_count : 1.0);
		rate_sum += capture_rate(c, self);
		n++;
	}
	out->n = n;
	if (n == 0) {
		/* Known in no capture of the baseline: nothing to summarise. */
		out->var_floor = out->mean_rate = out->mean_share = out->mean_vst = NAN;
		out->median_share = out->mad_share = out->ewma_share = out->var_vst = NAN;
		goto out;
	}
	out->var_floor = floor_sum / (double)n;
	out->mean_rate = rate_sum / (double)n;
	if (stats_mean(&out->mean_share, share, n) < 0 ||
	    stats_mean(&out->mean_vst, vst, n) < 0 ||
	    stats_median(&out->median_share, share, n) < 0 ||
	    stats_mad(&out->mad_share, share, n) < 0 ||
	    stats_ewma(&out->ewma_share, share, n, BASELINE_EWMA_ALPHA) < 0) {
		rc = pr_error_set(err, PR_ERR,
				  "cannot summarise function %" PRId64 " over %zu captures",
				  out->function_id, n);
		goto out;
	}
	out->var_vst = NAN;
	if (n >= 2)
		stats_variance(&out->var_vst, vst, n);
out:
	free(share);
	free(vst);
	return rc;
}

/* SHA-256 over the sorted capture ids: the identity of a baseline's data. */
static int capture_set_key(char hex[65], const capture_set *s)
{
	int64_t *ids = malloc((s->n ? s->n : 1) * sizeof(*ids));
	unsigned char md[32];
	unsigned int mdlen = 0;

	if (!ids)
		return PR_ENOMEM;
	for (size_t i = 0; i < s->n; i++)
		ids[i] = s->caps[i].id;
	/* Already ordered by time then id; ids are unique, that is enough. */
	if (!EVP_Digest(ids, s->n * sizeof(*ids), md, &mdlen, EVP_sha256(), NULL)) {
		free(ids);
		return PR_ERR;
	}
	free(ids);
	for (unsigned i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	return 0;
}

/* The summary `field` (0 to 7, in the column order of baseline_vectors) of f. */
static const double *summary_field(const baseline_func *f, size_t field)
{
	const double *v[8] = {&f->mean_share, &f->median_share, &f->mad_share, &f->ewma_share,
			      &f->mean_vst,   &f->var_vst,      &f->var_floor, &f->mean_rate};

	return v[field];
}

int baseline_store(int64_t *id, bool *reused, db *d, int64_t service_id,
		   const char *type, int64_t window_start_us, int64_t window_end_us,
		   const capture_set *base, const baseline_func *funcs, size_t nfuncs,
		   pr_error *err)
{
	static const char find_sql[] =
		"select id from baselines where service_id = $1 and profile_type = $2"
		" and capture_set = $3 order by id desc limit 1";
	static const char insert_sql[] =
		"insert into baselines (service_id, profile_type, window_start, window_end,"
		" captures, capture_set, releases)"
		" values ($1, $2, 'epoch'::timestamptz + $3::bigint * interval '1 microsecond',"
		" 'epoch'::timestamptz + $4::bigint * interval '1 microsecond', $5, $6,"
		" (select coalesce(array_agg(distinct release order by release), '{}')"
		"    from profiles where id = any($7::bigint[])))"
		" returning id";
	/*
	 * One row a baseline, its functions' summaries as arrays (migration
	 * 025). It goes with the baseline's row, before the client knows that
	 * row's id: the id is the one the insert just drew from the sequence
	 * on this session (every role that may insert a baseline may read it).
	 */
	static const char funcs_sql[] =
		"insert into baseline_vectors (baseline_id, n, function_ids, mean_share,"
		" median_share, mad_share, ewma_share, mean_vst, var_vst, var_floor, mean_rate)"
		" values (currval(pg_get_serial_sequence('baselines', 'id')), $1, $2::bigint[],"
		" $3::float8[], $4::float8[], $5::float8[], $6::float8[], $7::float8[],"
		" $8::float8[], $9::float8[], $10::float8[])";
	char key[65], sid[24], ws[24], we[24], ncap[24];
	buf ids = BUF_INIT, fids = BUF_INIT, arr[8];
	PGresult *res = NULL, *got[2] = {0};
	const char *p[7], *pf[10];
	int lens[10], fmts[10];
	int rc;

	for (size_t k = 0; k < 8; k++)
		buf_init(&arr[k], SIZE_MAX);
	*reused = false;
	if ((rc = capture_set_key(key, base)) < 0) {
		rc = pr_error_set(err, rc, "cannot hash the baseline's captures");
		goto out;
	}
	snprintf(sid, sizeof(sid), "%" PRId64, service_id);
	p[0] = sid, p[1] = type, p[2] = key;
	if ((rc = db_exec_repeat(d, &res, err, "finding a stored baseline", find_sql, 3, p,
				 0)) < 0)
		goto out;
	if (db_rows(res) == 1) {
		*id = db_get_i64(res, 0, 0);
		*reused = true;
		goto out;
	}
	db_result_free(res);
	res = NULL;

	snprintf(ws, sizeof(ws), "%" PRId64, window_start_us);
	snprintf(we, sizeof(we), "%" PRId64, window_end_us);
	snprintf(ncap, sizeof(ncap), "%zu", base->n);
	if (id_array(&ids, base, NULL) < 0) {
		rc = oom(err);
		goto out;
	}
	p[0] = sid, p[1] = type, p[2] = ws, p[3] = we, p[4] = ncap, p[5] = key, p[6] = ids.ptr;

	/*
	 * The arrays go in binary: no double is printed to 17 digits and read
	 * back (most of this statement's cost on both sides), and every bit
	 * is kept. An unknown value (NaN) is a NULL element.
	 */
	rc = db_int8_array_bin(&fids, nfuncs ? &funcs[0].function_id : NULL, nfuncs,
			       sizeof(*funcs));
	for (size_t k = 0; rc == 0 && k < 8; k++)
		rc = db_float8_array_bin(&arr[k], nfuncs ? summary_field(&funcs[0], k) : NULL,
					 nfuncs, sizeof(*funcs));
	if (rc < 0) {
		rc = oom(err);
		goto out;
	}
	pf[0] = ncap, pf[1] = fids.ptr;
	lens[0] = fmts[0] = 0;
	lens[1] = (int)fids.len, fmts[1] = 1;
	for (size_t k = 0; k < 8; k++) {
		pf[2 + k] = arr[k].ptr;
		lens[2 + k] = (int)arr[k].len;
		fmts[2 + k] = 1;
	}
	/*
	 * The row and its function rows appear together or not at all (a
	 * pipeline is one transaction), and go in one round trip: a night
	 * stores a baseline for every service.
	 */
	{
		const db_call calls[2] = {
			{"storing a baseline", insert_sql, 7, p, NULL, NULL, 0},
			{"storing baseline functions", funcs_sql, 10, pf, lens, fmts, 0},
		};
		if ((rc = db_exec_pipeline(d, got, err, calls, 2)) < 0)
			goto out;
	}
	*id = db_get_i64(got[0], 0, 0);
out:
	db_result_free(res);
	for (size_t k = 0; k < 2; k++)
		db_result_free(got[k]);
	buf_release(&ids);
	buf_release(&fids);
	for (size_t k = 0; k < 8; k++)
		buf_release(&arr[k]);
	return rc;
}

int func_names_load(char ***names, char ***files, db *d, const int64_t *ids, size_t n,
		      pr_error *err)
{
	static const char sql[] =
		"select f.name, f.file from unnest($1::bigint[]) with ordinality as u(id, k)"
		" join functions f on f.id = u.id order by u.k";
	buf arr = BUF_INIT;
	PGresult *res = NULL;
	const char *p[1];
	int rc = db_bigint_array(&arr, ids, n, sizeof(*ids));

	*names = calloc(n ? n : 1, sizeof(**names));
	*files = calloc(n ? n : 1, sizeof(**files));
	if (rc < 0 || !*names || !*files) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	p[0] = arr.ptr;
	if ((rc = db_exec_repeat(d, &res, err, "loading function names", sql, 1, p, 0)) < 0)
		goto out;
	if ((size_t)db_rows(res) != n) {
		rc = pr_error_set(err, PR_EDB, "database: %zu function names missing",
				  n - (size_t)db_rows(res));
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		(*names)[i] = strdup(db_get_text(res, (int)i, 0));
		(*files)[i] = strdup(db_get_text(res, (int)i, 1));
		if (!(*names)[i] || !(*files)[i]) {
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
			goto out;
		}
	}
out:
	db_result_free(res);
	buf_release(&arr);
	return rc;
}

void func_names_free(char **names, char **files, size_t n)
{
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	for (size_t i = 0; files && i < n; i++)
		free(files[i]);
	free(names);
	free(files);
}


static int by_mean_share(const void *x, const void *y)
{
	const baseline_func *a = x, *b = y;

	if (a->mean_share != b->mean_share)
		return a->mean_share > b->mean_share ? -1 : 1;
	return a->function_id < b->function_id ? -1 : a->function_id > b->function_id;
}

int baseline_view_load(baseline_view *out, db *d, int64_t service_id, const char *type,
		       int64_t at_us, int64_t window_us, pr_error *err)
{
	capture_set base = {0};
	capture_query q = {0};
	func_matrix m = {0};
	int64_t *ids = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	q.service_id = service_id;
	q.type = type;
	q.since_us = at_us - window_us;
	q.until_us = at_us;
	q.eligible_only = true;
	if ((rc = capture_set_load(&base, d, &q, err)) < 0)
		goto out;
	out->captures = base.n;
	if (!base.n)
		goto out;
	if ((rc = func_matrix_load(&m, d, &base, NULL, err)) < 0)
		goto out;
	if (m.nfuncs && (!(out->funcs = calloc(m.nfuncs, sizeof(*out->funcs))) ||
			 !(ids = calloc(m.nfuncs, sizeof(*ids))))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t r = 0; r < m.nfuncs; r++, out->nfuncs++)
		if ((rc = baseline_summarize(&out->funcs[r], &m, r, 0, &base, err)) < 0)
			goto out;
	/* Highest mean share first, then the names in that order. */
	qsort(out->funcs, out->nfuncs, sizeof(*out->funcs), by_mean_share);
	for (size_t r = 0; r < out->nfuncs; r++)
		ids[r] = out->funcs[r].function_id;
	rc = func_names_load(&out->names, &out->files, d, ids, out->nfuncs, err);
out:
	if (rc < 0)
		baseline_view_release(out);
	free(ids);
	func_matrix_release(&m);
	capture_set_release(&base);
	return rc;
}

void baseline_view_release(baseline_view *v)
{
	func_names_free(v->names, v->files, v->names ? v->nfuncs : 0);
	free(v->funcs);
	memset(v, 0, sizeof(*v));
}
