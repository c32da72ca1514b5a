/*
 * prom.h: instant queries to Prometheus's HTTP API (GET /api/v1/query),
 * through the one HTTP client (pipeline/http.h), and the parser of their
 * answers (jansson).
 *
 * An answer is trusted for nothing: it must be JSON no larger than the
 * cap, {"status": "success", "data": {"resultType": "vector", "result":
 * [...]}}, each result {"metric": {labels}, "value": [time, "number"]},
 * at most max_series of them. Anything else is refused whole with one
 * line naming the query and the reason; a Prometheus error answer
 * ({"status": "error", "errorType", "error"}) is refused with its type
 * and message, cut short and with control characters replaced.
 *
 * Each series is keyed by the value of one label (the one naming the
 * host). A series without that label, or whose value is not finite
 * (NaN, +Inf: a histogram with no observations), is left out and
 * counted; two series with the same key keep the larger value (the
 * signals of interest get worse upwards).
 */
#ifndef PR_PROM_H
#define PR_PROM_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/strmap.h"

/* The longest label value kept as a key. */
#define PROM_KEY_MAX 256

typedef struct prom_sample {
	char *key;     /* the label's value */
	double value;
} prom_sample;

typedef struct prom_vector {
	prom_sample *v;
	size_t n;
	strmap index;       /* key -> its sample's place in v */
	size_t unlabelled;  /* series without the label (or with an unusable value of it) */
	size_t nonfinite;   /* series whose value is NaN or infinite */
} prom_vector;

/* Free the samples; the vector is empty and usable again. */
void prom_vector_release(prom_vector *v);

/* The sample keyed `key`, or NULL; a hash look-up, however many series. */
const prom_sample *prom_vector_find(const prom_vector *v, const char *key);

/*
 * Parse the answer `body` (len bytes, not necessarily NUL-terminated) to
 * the query named `what` (for messages), keyed by `label`, at most
 * `max_series` series. `out` is set up here and belongs to the caller
 * (prom_vector_release) whatever this returns; it is empty after a
 * failure (an answer is taken whole or not at all). PR_EDATA for an answer
 * that is not as above (an error answer included), PR_ELIMIT for more
 * than max_series series, PR_ENOMEM.
 */
int prom_parse_vector(prom_vector *out, const char *body, size_t len, const char *label,
		      size_t max_series, const char *what, pr_error *err);

typedef struct prom_query {
	const char *base_url;     /* http(s)://host:port[/prefix], no trailing query */
	const char *expr;         /* PromQL */
	const char *what;         /* the query's name, for messages ("signal 'p99_latency'") */
	const char *label;        /* the label keying the result */
	int64_t at_us;            /* evaluation time; 0: the server's now */
	uint32_t timeout_ms;      /* the whole exchange */
	size_t max_bytes;         /* the answer at most */
	size_t max_series;
} prom_query;

/*
 * Run the instant query `q` and parse its answer into `out` (set up
 * here, the caller's whatever this returns). PR_EIO when no answer came
 * or its status is not 200 (400 and 422, Prometheus's answers to a bad
 * query, with its error), PR_ELIMIT for an answer over the cap, and the
 * codes of prom_parse_vector.
 */
int prom_query_vector(prom_vector *out, const prom_query *q, pr_error *err);

#endif
