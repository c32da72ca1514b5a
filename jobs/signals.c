/*
 * signals.c: stored signal samples (see signals.h); owns signal_samples.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/signals.h"

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

int signals_store(db *d, int64_t service_id, const char *host, const char *signal, int64_t at_us,
		  double value, bool outside, pr_error *err)
{
	static const char sql[] =
		"insert into signal_samples (service_id, host, signal, at, value, outside)"
		" values ($1, $2, $3, " DB_US_TO_TS("$4") ", $5, $6)";
	char sid[24], at[24], v[40];
	const char *p[6] = {sid, host, signal, at, v, outside ? "true" : "false"};

	snprintf(sid, sizeof(sid), "%" PRId64, service_id);
	snprintf(at, sizeof(at), "%" PRId64, at_us);
	snprintf(v, sizeof(v), "%.17g", value);
	return db_exec(d, NULL, err, "storing a signal sample", sql, 6, p);
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
