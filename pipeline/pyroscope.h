/*
 * pyroscope.h: merged profiles from Grafana Pyroscope.
 *
 * querier.v1.QuerierService/SelectMergeProfile over the Connect protocol:
 * POST <url>/querier.v1.QuerierService/SelectMergeProfile with
 * Content-Type application/proto and a SelectMergeProfileRequest
 * (pipeline/pyroscope.proto: the profile type id, the label selector,
 * start and end in milliseconds). The answer is a pprof profile,
 * uncompressed; an empty body is a window with no data. A multi-tenant
 * server gets the tenant in X-Scope-OrgID. Connect reports errors as
 * JSON {"code": "...", "message": "..."} with an HTTP status; both go
 * into the message, made safe.
 */
#ifndef PR_PYROSCOPE_H
#define PR_PYROSCOPE_H

#include <stdbool.h>
#include <stdint.h>

#include "pipeline/source.h"

typedef struct pyroscope_query {
	const char *url;      /* base URL: "https://pyroscope:4040" */
	const char *tenant;   /* X-Scope-OrgID, or NULL */
	const char *type_id;  /* "process_cpu:cpu:nanoseconds:cpu:nanoseconds" */
	const char *selector; /* "{service_name=\"checkout\"}" */
	int64_t start_ms, end_ms;
	source_http http;
} pyroscope_query;

/*
 * Fetch the merged profile of the window into out->body (out->empty when
 * the server has no data for it). Codes as pprof_http_fetch: PR_EIO (no
 * answer, 5xx; out->retry on 503 and 429), PR_EREFUSED (401, 403),
 * PR_EUSAGE (other 4xx: a bad selector or type id), PR_ELIMIT (over
 * the cap), PR_EDATA (a 200 that is not protobuf, a tenant header with
 * a line break). The message names the server (scheme, host, port) first.
 */
int pyroscope_fetch(source_fetched *out, const pyroscope_query *q, pr_error *err);

/*
 * The distinct values of label `label` among the series that match
 * q->selector in q's window (querier.v1.QuerierService/Series, the same
 * protocol), at most PYROSCOPE_MAX_VALUES, each 1 to 256 bytes of
 * printable text without quotes or backslashes; a series whose value is
 * not (too long, a control character, a quote) is PR_EDATA, naming its
 * length only: skipped, its samples were never collected and the slot
 * was stored all the same. When some series have the label and others
 * do not (or have it empty), the last value is "": the series without
 * it, which a selector matches with label="". None with the label: no
 * values (the whole selector is one release).
 * *values is a new array of *n new strings (free each, then the array).
 * Errors as pyroscope_fetch, *retry set as out->retry would be; an
 * answer protobuf-c cannot decode is PR_EDATA, and so is a value that
 * holds the credentials q sends (the message does not quote it).
 */
#define PYROSCOPE_MAX_VALUES 16
/*
 * A SeriesResponse larger than this is refused (PR_ELIMIT) before it is
 * decoded: 16 values make a few KB, and protobuf-c holds a structure of
 * tens of bytes for every 2-byte empty entry (64 MiB of them: 2.9 GB).
 */
#define PYROSCOPE_SERIES_MAX ((size_t)1 << 20)
int pyroscope_label_values(char ***values, size_t *n, bool *retry, const pyroscope_query *q,
			   const char *label, pr_error *err);

/*
 * The values of label `label` in a SeriesResponse, `answer_len` bytes at
 * `answer`, as pyroscope_label_values gives them (the same rules, codes
 * and ownership); `shown` (the server, redacted) starts every message.
 * pyroscope_label_values's second half, exposed for the fuzz target.
 * An answer over PYROSCOPE_SERIES_MAX bytes is PR_ELIMIT.
 */
int pyroscope_series_values(char ***values, size_t *n, const uint8_t *answer, size_t answer_len,
			    const char *label, const char *shown, pr_error *err);

/*
 * The selector `selector` narrowed to label=value: '{a="b"}' becomes
 * '{a="b",label="value"}'. A new string, or NULL (no memory, or a
 * selector that does not end in '}').
 */
char *pyroscope_selector_with(const char *selector, const char *label, const char *value);

/*
 * The error of a non-2xx answer of a Connect or gRPC-Web server: "HTTP
 * 401 unauthenticated: <message>", made safe (redact_excerpt: words
 * that may carry data or a secret become "<N bytes>"); shared with
 * parca.c. Only
 * a body of at most PYROSCOPE_ERROR_JSON_MAX bytes is read as JSON (a
 * Connect error is a few hundred; jansson holds about 20 times what it
 * parses); a longer one is quoted by its first line.
 */
#define PYROSCOPE_ERROR_JSON_MAX ((size_t)64 << 10)
void pyroscope_connect_error(char *out, size_t n, long status, const buf *body);

#endif
