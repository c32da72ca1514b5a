/*
 * signals.c: stored signal samples (see signals.h); owns signal_samples.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/signals.h"
#include "common/buf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void signals_history_release(signals_history *h)
{
	for (size_t i = 0; i < h->n; i++) {
		free(h->v[i].host);
		free(h->v[i].values);
	}
	free(h->v);
	memset(h, 0, sizeof(*h));
}

const signals_series *signals_history_find(const signals_history *h, const char *host)
{
	for (size_t i = 0; i < h->n; i++)
		if (strcmp(h->v[i].host, host) == 0)
			return &h->v[i];
	return NULL;
}

int signals_history_read(signals_history *out, db *d, int64_t service_id, const char *signal,
			 int64_t since_us, int64_t until_us, size_t per_host, pr_error *err)
{
	static const char sql[] =
		"select host, value from (select host, value, at, row_number() over"
		"   (partition by host order by at desc) as k from signal_samples"
		"   where service_id = $1 and signal = $2 and not outside"
		"   and at >= " DB_US_TO_TS("$3")
		"   and at < " DB_US_TO_TS("$4") ") s"
		" where k <= $5 order by host, at";
	char sid[24], since[24], until[24], lim[24];
	const char *p[5] = {sid, signal, since, until, lim};
	struct pg_result *res = NULL;
	int rc, rows;

	memset(out, 0, sizeof(*out));
	snprintf(sid, sizeof(sid), "%" PRId64, service_id);
	snprintf(since, sizeof(since), "%" PRId64, since_us);
	snprintf(until, sizeof(until), "%" PRId64, until_us);
	snprintf(lim, sizeof(lim), "%zu", per_host);
	if ((rc = db_exec(d, &res, err, "reading signal history", sql, 5, p)) < 0)
		return rc;
	rows = db_rows(res);
	if (rows && !(out->v = calloc((size_t)rows, sizeof(*out->v))))
		goto oom;
	for (int i = 0; i < rows; i++) {
		const char *host = db_get_text(res, i, 0);
		signals_series *s = out->n ? &out->v[out->n - 1] : NULL;
		if (!s || strcmp(s->host, host) != 0) {
			s = &out->v[out->n++];
			if (!(s->host = strdup(host)) ||
			    !(s->values = malloc((size_t)(rows - i) * sizeof(double))))
				goto oom;
		}
		s->values[s->n++] = db_get_f64(res, i, 1);
	}
	db_result_free(res);
	return 0;
oom:
	db_result_free(res);
	signals_history_release(out);
	return pr_error_set(err, PR_ENOMEM, "out of memory");
}

int signals_store_many(db *d, int64_t service_id, const char *signal, int64_t at_us,
		       const char *const *hosts, const double *values, const bool *outside,
		       size_t n, pr_error *err)
{
	static const char sql[] =
		"insert into signal_samples (service_id, host, signal, at, value, outside)"
		" select $1, h, $2, " DB_US_TO_TS("$3") ", v, o"
		" from unnest($4::text[], $5::float8[], $6::boolean[]) as u (h, v, o)";
	buf hs = BUF_INIT, vs = BUF_INIT, os = BUF_INIT;
	char sid[24], at[24];
	const char *p[6] = {sid, signal, at, NULL, NULL, NULL};
	int rc = 0;

	if (!n)
		return 0;
	snprintf(sid, sizeof(sid), "%" PRId64, service_id);
	snprintf(at, sizeof(at), "%" PRId64, at_us);
	rc |= buf_puts(&hs, "{");
	rc |= buf_puts(&vs, "{");
	rc |= buf_puts(&os, "{");
	for (size_t i = 0; i < n && rc == 0; i++) {
		rc |= buf_puts(&hs, i ? ",\"" : "\"");
		for (const char *c = hosts[i]; rc == 0 && *c; c++)
			rc |= (*c == '"' || *c == '\\') ? buf_printf(&hs, "\\%c", *c)
							: buf_put(&hs, c, 1);
		rc |= buf_puts(&hs, "\"");
		rc |= buf_printf(&vs, "%s%.17g", i ? "," : "", values[i]);
		rc |= buf_printf(&os, "%s%s", i ? "," : "", outside[i] ? "t" : "f");
	}
	rc |= buf_puts(&hs, "}");
	rc |= buf_puts(&vs, "}");
	rc |= buf_puts(&os, "}");
	if (rc) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	p[3] = hs.ptr;
	p[4] = vs.ptr;
	p[5] = os.ptr;
	rc = db_exec(d, NULL, err, "storing signal samples", sql, 6, p);
out:
	buf_release(&hs);
	buf_release(&vs);
	buf_release(&os);
	return rc;
}

void signals_rows_release(signals_rows *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->host[i]);
		free(r->signal[i]);
	}
	free(r->service_id);
	free(r->host);
	free(r->signal);
	free(r->at_us);
	free(r->value);
	memset(r, 0, sizeof(*r));
}

int signals_range_read(signals_rows *out, db *d, const int64_t *service_ids, size_t nids,
		       int64_t from_us, int64_t to_us, size_t max_rows, pr_error *err)
{
	static const char sql[] =
		"select service_id, host, signal, " DB_TS_TO_US("at") ", value"
		" from signal_samples where service_id = any($1::bigint[])"
		" and at >= " DB_US_TO_TS("$2") " and at < " DB_US_TO_TS("$3")
		" order by at, service_id, host, signal, id limit $4";
	buf ids = BUF_INIT;
	char from[24], to[24], lim[24];
	const char *p[4] = {NULL, from, to, lim};
	struct pg_result *res = NULL;
	size_t rows;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	rc |= buf_puts(&ids, "{");
	for (size_t i = 0; i < nids && rc == 0; i++)
		rc |= buf_printf(&ids, "%s%" PRId64, i ? "," : "", service_ids[i]);
	rc |= buf_puts(&ids, "}");
	if (rc) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	p[0] = ids.ptr;
	snprintf(from, sizeof(from), "%" PRId64, from_us);
	snprintf(to, sizeof(to), "%" PRId64, to_us);
	snprintf(lim, sizeof(lim), "%zu", max_rows + 1);
	if ((rc = db_exec(d, &res, err, "reading signal samples", sql, 4, p)) < 0)
		goto out;
	rows = (size_t)db_rows(res);
	if (rows > max_rows) {
		rc = pr_error_set(err, PR_ELIMIT,
				  "more than %zu signal samples in one stretch of the replay",
				  max_rows);
		goto out;
	}
	if (rows && (!(out->service_id = calloc(rows, sizeof(*out->service_id))) ||
		     !(out->host = calloc(rows, sizeof(*out->host))) ||
		     !(out->signal = calloc(rows, sizeof(*out->signal))) ||
		     !(out->at_us = calloc(rows, sizeof(*out->at_us))) ||
		     !(out->value = calloc(rows, sizeof(*out->value)))))
		goto oom;
	for (size_t i = 0; i < rows; i++) {
		out->n = i + 1;
		out->service_id[i] = db_get_i64(res, (int)i, 0);
		out->at_us[i] = db_get_i64(res, (int)i, 3);
		out->value[i] = db_get_f64(res, (int)i, 4);
		if (!(out->host[i] = strdup(db_get_text(res, (int)i, 1))) ||
		    !(out->signal[i] = strdup(db_get_text(res, (int)i, 2))))
			goto oom;
	}
	goto out;
oom:
	rc = pr_error_set(err, PR_ENOMEM, "out of memory");
out:
	if (rc < 0)
		signals_rows_release(out);
	db_result_free(res);
	buf_release(&ids);
	return rc;
}

int signals_prune(size_t *n, db *d, int64_t before_us, size_t limit, pr_error *err)
{
	static const char sql[] =
		"with gone as (delete from signal_samples where id in (select id from"
		" signal_samples where at < " DB_US_TO_TS("$1")
		" order by at limit $2) returning 1) select count(*) from gone";
	char before[24], lim[24];
	const char *p[2] = {before, lim};
	struct pg_result *res = NULL;
	int rc;

	*n = 0;
	snprintf(before, sizeof(before), "%" PRId64, before_us);
	snprintf(lim, sizeof(lim), "%zu", limit);
	if ((rc = db_exec(d, &res, err, "pruning signal samples", sql, 2, p)) < 0)
		return rc;
	*n = (size_t)db_get_i64(res, 0, 0);
	db_result_free(res);
	return 0;
}
