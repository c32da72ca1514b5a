/*
 * signals.h: the signal samples profreg escalate reads from Prometheus,
 * one row per host, signal and run; owns the table signal_samples. Each
 * host's band is made from its own stored samples, so that later runs
 * (and a backtest) replay exactly what earlier runs saw.
 */
#ifndef PR_SIGNALS_H
#define PR_SIGNALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pipeline/db.h"

/* The history of one host: values, oldest first. */
typedef struct signals_series {
	char *host;
	double *values;
	size_t n;
} signals_series;

typedef struct signals_history {
	signals_series *v;
	size_t n;
} signals_history;

void signals_history_release(signals_history *h);

/* The series of `host` in `h`, or NULL. */
const signals_series *signals_history_find(const signals_history *h, const char *host);

/*
 * Every host's samples of `signal` of service `service_id` taken at or
 * after `since_us` and before `until_us` that were inside their band
 * (outside ones are left out), at most `per_host` newest of each host.
 * `out` is set up here and is the caller's whatever this returns.
 */
int signals_history_read(signals_history *out, db *d, int64_t service_id, const char *signal,
			 int64_t since_us, int64_t until_us, size_t per_host, pr_error *err);

/*
 * Store n samples of `signal` taken at `at_us` in one statement:
 * hosts[i], values[i], outside[i].
 */
int signals_store_many(db *d, int64_t service_id, const char *signal, int64_t at_us,
		       const char *const *hosts, const double *values, const bool *outside,
		       size_t n, pr_error *err);

/* Stored samples as they were taken (signals_range_read). */
typedef struct signals_rows {
	int64_t *service_id;
	char **host;
	char **signal;
	int64_t *at_us;
	double *value;
	size_t n;
} signals_rows;

void signals_rows_release(signals_rows *r);

/*
 * Every sample of the services service_ids[0..nids-1] taken at or after
 * `from_us` and before `to_us`, ordered by time, service, host and
 * signal. More than `max_rows` is PR_ELIMIT. `out` is set up here and is
 * the caller's whatever this returns.
 */
int signals_range_read(signals_rows *out, db *d, const int64_t *service_ids, size_t nids,
		       int64_t from_us, int64_t to_us, size_t max_rows, pr_error *err);

/* Delete samples taken before `before_us`, at most `limit` of them; *n how many. */
int signals_prune(size_t *n, db *d, int64_t before_us, size_t limit, pr_error *err);

#endif
