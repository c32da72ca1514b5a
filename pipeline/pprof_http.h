/*
 * pprof_http.h: fetching a profile from a Go net/http/pprof endpoint.
 *
 * GET <scheme>://<host:port>/debug/pprof/<what>, where `what` is
 * "profile" (CPU, with ?seconds=N), "heap", "allocs" or "goroutine"
 * (the last three with no query: the handler's default, a pprof
 * protobuf). What the endpoint does, and what this module makes of it:
 *
 *   - the body is a gzipped profile.proto, sent without a
 *     Content-Encoding header: it is kept as it came (ingest gunzips it);
 *     a 200 whose body is not gzip is refused as malformed;
 *   - a second CPU profile while one runs is HTTP 500 with "cpu profiling
 *     already in use": `retry` is set, to try again later;
 *   - `seconds` at or above the server's WriteTimeout is HTTP 400
 *     "profile duration exceeds server's WriteTimeout": refused with a
 *     message saying to lower `seconds`;
 *   - the handler's own errors are short text/plain bodies (Go marks them
 *     with an X-Go-Pprof: 1 header); their first line is quoted, made
 *     safe (source_body_hint).
 *
 * The request's total timeout must cover the CPU profile's length: the
 * caller passes it (seconds + a margin).
 */
#ifndef PR_PPROF_HTTP_H
#define PR_PPROF_HTTP_H

#include <stdint.h>

#include "pipeline/source.h"

typedef struct pprof_http_req {
	const char *scheme;  /* "http" or "https" */
	const char *address; /* "host:port" (targets.h) */
	const char *what;    /* "profile", "heap", "allocs", "goroutine" */
	uint32_t seconds;    /* CPU profile length; "profile" only */
	source_http http;
} pprof_http_req;

/* Whether `what` is one of the four profiles above. */
int pprof_http_what_valid(const char *what);

/*
 * The URL of `r` into `out` (n bytes); 0, or PR_EUSAGE when it does not fit.
 */
int pprof_http_url(char *out, size_t n, const pprof_http_req *r);

/*
 * Fetch one profile into out->body (out is initialised here; release it
 * with source_fetched_release whatever this returns). 0 on success;
 * otherwise the message names the target and the reason, in one line:
 *   PR_EIO      no answer (refused, timeout, TLS), or a 5xx (out->retry
 *               when the CPU profiler was busy, or on 503 / 429)
 *   PR_EREFUSED 401 or 403: the endpoint wants other credentials
 *   PR_EUSAGE   400 for a CPU profile longer than the WriteTimeout, and
 *               other 4xx
 *   PR_ELIMIT   the body is larger than r->http.max_bytes
 *   PR_EDATA    a 200 whose body is not a gzipped profile
 */
int pprof_http_fetch(source_fetched *out, const pprof_http_req *r, pr_error *err);

#endif
