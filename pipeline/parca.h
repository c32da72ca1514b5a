/*
 * parca.h: merged profiles from Parca.
 *
 * parca.query.v1alpha1.QueryService/Query in merge mode with the pprof
 * report type, over gRPC-Web as Parca's UI calls it: POST
 * <url>/parca.query.v1alpha1.QueryService/Query, Content-Type
 * application/grpc-web+proto, the QueryRequest (pipeline/parca.proto) in
 * one length-prefixed frame. The answer is a data frame holding a
 * QueryResponse whose pprof bytes are gzipped, then a trailer frame with
 * grpc-status (0: ok) and grpc-message. A frame cut short, a length past
 * the body, a QueryResponse protobuf-c refuses, one of more than 64
 * fields (checked before it is decoded) or one without pprof bytes is
 * malformed.
 */
#ifndef PR_PARCA_H
#define PR_PARCA_H

#include <stdint.h>

#include "pipeline/source.h"

typedef struct parca_query {
	const char *url;   /* base URL: "https://parca:7070" */
	const char *query; /* type and selector: "parca_agent:...:delta{comm=\"x\"}" */
	int64_t start_ms, end_ms;
	source_http http;
} parca_query;

/*
 * Fetch the merged profile of the window into out->body (the pprof
 * bytes, gzipped as Parca sends them; out->empty when they are empty).
 * Codes as pyroscope_fetch; a gRPC status other than 0 is PR_EIO for
 * UNAVAILABLE (14, out->retry) and RESOURCE_EXHAUSTED (8, out->retry),
 * PR_EREFUSED for UNAUTHENTICATED (16) and PERMISSION_DENIED (7), else
 * PR_EUSAGE, with the status name and message.
 */
int parca_fetch(source_fetched *out, const parca_query *q, pr_error *err);

/*
 * Read the body of Parca's 200 answer, `answer_len` bytes at `answer`,
 * into `out` (set up by the caller with source_fetched_init): the pprof
 * bytes into out->body (a new buffer capped at `max_bytes`), or
 * out->empty. Codes and out->retry as parca_fetch for everything after
 * the HTTP status; `shown` (the server, redacted) starts every message.
 * On failure out->body is empty. `hdr_status` and `hdr_message` are the
 * answer's grpc-status and grpc-message HTTP headers (NULL or "" when
 * absent), read when the body has no trailer frame: a call that fails
 * before any message may carry its status there alone. parca_fetch's
 * second half, exposed for the fuzz target.
 */
int parca_answer_parse(source_fetched *out, const uint8_t *answer, size_t answer_len,
		       size_t max_bytes, const char *shown, const char *hdr_status,
		       const char *hdr_message, pr_error *err);

/*
 * Read a gRPC-Web answer of `len` bytes: *msg and *msg_len the first data
 * frame's message (pointing into `body`; NULL when none), *status the
 * trailer's grpc-status (-1 when there is no trailer) and `message` its
 * grpc-message, made safe. PR_EDATA with `why` set when the framing is
 * broken. Exposed for the fuzz and unit tests.
 */
int parca_grpcweb_parse(const uint8_t **msg, size_t *msg_len, int *status, char *message,
			size_t message_n, const uint8_t *body, size_t len, char *why, size_t why_n);

#endif
