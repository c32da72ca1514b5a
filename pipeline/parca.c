/*
 * parca.c: Parca's QueryService/Query over gRPC-Web (see parca.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "pipeline/parca.h"
#include "pipeline/http.h"
#include "pipeline/parca.pb-c.h"
#include "pipeline/pyroscope.h"
#include "common/redact.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define FRAME_HEAD 5
/*
 * Fields at the top of a QueryResponse, at most: Parca's has a report
 * and two totals. protobuf-c keeps a structure of tens of bytes for each
 * field it does not know, so 64 MiB of 2-byte fields would cost 2.9 GB.
 */
#define FIELDS_MAX 64

static const char *const status_names[] = {
	"OK",
	"CANCELLED",
	"UNKNOWN",
	"INVALID_ARGUMENT",
	"DEADLINE_EXCEEDED",
	"NOT_FOUND",
	"ALREADY_EXISTS",
	"PERMISSION_DENIED",
	"RESOURCE_EXHAUSTED",
	"FAILED_PRECONDITION",
	"ABORTED",
	"OUT_OF_RANGE",
	"UNIMPLEMENTED",
	"INTERNAL",
	"UNAVAILABLE",
	"DATA_LOSS",
	"UNAUTHENTICATED",
};

/* Trailer lines "grpc-status: 0\r\ngrpc-message: ...\r\n". */
static void read_trailer(int *status, char *message, size_t n, const uint8_t *p, size_t len)
{
	size_t i = 0;

	while (i < len) {
		size_t e = i;
		while (e < len && p[e] != '\n')
			e++;
		size_t l = e - i;
		if (l && p[i + l - 1] == '\r')
			l--;
		if (l > 12 && strncasecmp((const char *)p + i, "grpc-status:", 12) == 0) {
			int v = 0;
			size_t k = i + 12, d = 0;
			while (k < i + l && p[k] == ' ')
				k++;
			for (; k < i + l && p[k] >= '0' && p[k] <= '9' && v < 1000; k++, d++)
				v = v * 10 + (p[k] - '0');
			while (k < i + l && (p[k] == ' ' || p[k] == '\t'))
				k++;
			/* Not a number ("", "ok", "0x"): never OK, but UNKNOWN (2). */
			*status = d && k == i + l ? v : 2;
		} else if (l > 13 && strncasecmp((const char *)p + i, "grpc-message:", 13) == 0) {
			size_t k = i + 13;
			while (k < i + l && p[k] == ' ')
				k++;
			/* The server's words: it may echo the request or its data back. */
			redact_excerpt(message, n, (const char *)p + k, i + l - k);
		}
		i = e + 1;
	}
}

/* Read a varint at p[*i] (n bytes in all); false when it is cut short or too long. */
static bool varint(const uint8_t *p, size_t n, size_t *i, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; *i < n && shift < 64; shift += 7) {
		uint8_t b = p[(*i)++];
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/*
 * The fields at the top level of the protobuf message p[0..n), counted
 * up to `stop` (then stop + 1). A field that cannot be walked ends the
 * count: protobuf-c says what is wrong with it.
 */
static size_t top_fields(const uint8_t *p, size_t n, size_t stop)
{
	size_t i = 0, count = 0;
	uint64_t tag, v;

	while (i < n && count <= stop) {
		if (!varint(p, n, &i, &tag))
			break;
		if ((tag & 7) == 0 && !varint(p, n, &i, &v))
			break;
		else if ((tag & 7) == 1)
			i += 8;
		else if ((tag & 7) == 2 && (!varint(p, n, &i, &v) || v > n - i))
			break;
		else if ((tag & 7) == 2)
			i += (size_t)v;
		else if ((tag & 7) == 5)
			i += 4;
		else if ((tag & 7) != 0)
			break;
		count++;
	}
	return count;
}

int parca_grpcweb_parse(const uint8_t **msg, size_t *msg_len, int *status, char *message,
			size_t message_n, const uint8_t *body, size_t len, char *why, size_t why_n)
{
	size_t i = 0;
	bool trailer = false;

	*msg = NULL;
	*msg_len = 0;
	*status = -1;
	if (message_n)
		message[0] = '\0';
	while (i < len) {
		uint32_t flen;
		uint8_t flag;
		if (len - i < FRAME_HEAD) {
			snprintf(why, why_n, "a frame header cut short at byte %zu", i);
			return PR_EDATA;
		}
		flag = body[i];
		flen = (uint32_t)body[i + 1] << 24 | (uint32_t)body[i + 2] << 16 |
		       (uint32_t)body[i + 3] << 8 | body[i + 4];
		if (flen > len - i - FRAME_HEAD) {
			snprintf(why, why_n,
				 "a frame of %u bytes at byte %zu runs past the end (%zu "
				 "bytes)",
				 flen, i, len);
			return PR_EDATA;
		}
		if (flag & 0x01) {
			snprintf(why, why_n, "a compressed frame (no compression was asked for)");
			return PR_EDATA;
		}
		/*
		 * A unary answer is at most one message, then one trailer: a
		 * second message was dropped in silence, and what came after
		 * the trailer read as if the call had gone on.
		 */
		if (trailer) {
			snprintf(why, why_n, "a frame at byte %zu after the trailer", i);
			return PR_EDATA;
		}
		if (flag & 0x80) {
			read_trailer(status, message, message_n, body + i + FRAME_HEAD, flen);
			trailer = true;
		} else if (*msg) {
			snprintf(why, why_n,
				 "a second message at byte %zu (a unary answer has one)", i);
			return PR_EDATA;
		} else {
			*msg = body + i + FRAME_HEAD;
			*msg_len = flen;
		}
		i += FRAME_HEAD + flen;
	}
	return 0;
}

int parca_answer_parse(source_fetched *out, const uint8_t *answer, size_t answer_len,
		       size_t max_bytes, const char *shown, const char *hdr_status,
		       const char *hdr_message, pr_error *err)
{
	Parca__Query__V1alpha1__QueryResponse *res = NULL;
	char why[320], gmsg[200];
	const uint8_t *data;
	size_t dlen;
	int status, rc = 0;

	if (parca_grpcweb_parse(&data, &dlen, &status, gmsg, sizeof(gmsg), answer, answer_len, why,
				sizeof(why)) < 0) {
		rc = pr_error_set(err, PR_EDATA, "parca '%s': malformed gRPC-Web answer: %s", shown,
				  why);
		goto out;
	}
	/*
	 * A call that fails before any message may answer with its status in
	 * the HTTP headers and no trailer frame ("trailers-only", as gRPC-Web
	 * proxies and Connect servers send errors): read them as a trailer.
	 */
	if (hdr_status && hdr_status[0]) {
		char t[2 * 256 + 40], hmsg[sizeof(gmsg)] = "";
		int n = snprintf(t, sizeof(t), "grpc-status:%.255s\r\ngrpc-message:%.255s\r\n",
				 hdr_status, hdr_message ? hdr_message : ""),
		    hs = -1;
		read_trailer(&hs, hmsg, sizeof(hmsg), (const uint8_t *)t, (size_t)n);
		/*
		 * With a trailer too, a failure in either is the answer's: a
		 * PERMISSION_DENIED header beside an OK trailer was stored as a
		 * success. Two failures: the trailer's.
		 */
		if (hs >= 0 && (status < 0 || (status == 0 && hs != 0))) {
			status = hs;
			memcpy(gmsg, hmsg, sizeof(gmsg));
		}
	}
	if (status > 0) {
		const char *name = status < 17 ? status_names[status] : "UNKNOWN";
		out->retry = status == 14 || status == 8;
		rc = pr_error_set(err,
				  status == 16 || status == 7 ? PR_EREFUSED
				  : out->retry                ? PR_EIO
							      : PR_EUSAGE,
				  "parca '%s': gRPC status %d %s%s%s", shown, status, name,
				  gmsg[0] ? ": " : "", gmsg);
		goto out;
	}
	if (status < 0) {
		rc = pr_error_set(err, PR_EDATA,
				  "parca '%s': malformed gRPC-Web answer: no "
				  "grpc-status trailer",
				  shown);
		goto out;
	}
	if (!data) {
		rc = pr_error_set(err, PR_EDATA,
				  "parca '%s': malformed gRPC-Web answer: no "
				  "message",
				  shown);
		goto out;
	}
	if (dlen > max_bytes + 64) {
		rc = pr_error_set(err, PR_ELIMIT,
				  "parca '%s': larger than the input limit of %zu "
				  "bytes",
				  shown, max_bytes);
		goto out;
	}
	if (top_fields(data, dlen, FIELDS_MAX) > FIELDS_MAX) {
		rc = pr_error_set(err, PR_EDATA,
				  "parca '%s': malformed QueryResponse (more than %d fields)",
				  shown, FIELDS_MAX);
		goto out;
	}
	if (!(res = parca__query__v1alpha1__query_response__unpack(NULL, dlen, data))) {
		rc = pr_error_set(err, PR_EDATA,
				  "parca '%s': malformed QueryResponse (%zu bytes "
				  "protobuf-c cannot decode)",
				  shown, dlen);
		goto out;
	}
	if (res->report_case != PARCA__QUERY__V1ALPHA1__QUERY_RESPONSE__REPORT_PPROF) {
		rc = pr_error_set(err, PR_EDATA,
				  "parca '%s': the QueryResponse holds no pprof "
				  "report",
				  shown);
		goto out;
	}
	if (res->pprof.len == 0) {
		out->empty = true;
		goto out;
	}
	buf_init(&out->body, max_bytes ? max_bytes : SIZE_MAX);
	if ((rc = buf_put(&out->body, res->pprof.data, res->pprof.len)) < 0) {
		rc = rc == PR_ELIMIT ? pr_error_set(err, PR_ELIMIT,
						    "parca '%s': larger than the "
						    "input limit of %zu bytes",
						    shown, max_bytes)
				     : pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
out:
	if (res)
		parca__query__v1alpha1__query_response__free_unpacked(res, NULL);
	if (rc < 0)
		buf_release(&out->body);
	return rc;
}

int parca_fetch(source_fetched *out, const parca_query *q, pr_error *err)
{
	static const char *const headers[] = {"Content-Type: application/grpc-web+proto",
					      "Accept: application/grpc-web+proto", "X-Grpc-Web: 1",
					      NULL};
	static const char *const kept_headers[] = {"grpc-status", "grpc-message", NULL};
	Parca__Query__V1alpha1__QueryRequest msg = PARCA__QUERY__V1ALPHA1__QUERY_REQUEST__INIT;
	Parca__Query__V1alpha1__MergeProfile merge = PARCA__QUERY__V1ALPHA1__MERGE_PROFILE__INIT;
	Parca__Query__V1alpha1__Timestamp start = PARCA__QUERY__V1ALPHA1__TIMESTAMP__INIT;
	Parca__Query__V1alpha1__Timestamp end = PARCA__QUERY__V1ALPHA1__TIMESTAMP__INIT;
	char url[1024], shown[320], why[320];
	uint8_t *body = NULL;
	size_t len;
	http_response resp;
	http_req req;
	pr_error herr = PR_ERROR_INIT;
	int rc;

	source_fetched_init(out);
	http_response_init(&resp);
	http_redact_url(shown, sizeof(shown), q->url);
	if (snprintf(url, sizeof(url), "%s/parca.query.v1alpha1.QueryService/Query", q->url) >=
	    (int)sizeof(url)) {
		rc = pr_error_set(err, PR_EUSAGE, "parca '%s': URL too long", shown);
		goto out;
	}
	start.seconds = q->start_ms / 1000;
	start.nanos = (int32_t)(q->start_ms % 1000) * 1000000;
	end.seconds = q->end_ms / 1000;
	end.nanos = (int32_t)(q->end_ms % 1000) * 1000000;
	merge.query = (char *)q->query;
	merge.start = &start;
	merge.end = &end;
	msg.mode = PARCA__QUERY__V1ALPHA1__QUERY_REQUEST__MODE__MODE_MERGE;
	msg.options_case = PARCA__QUERY__V1ALPHA1__QUERY_REQUEST__OPTIONS_MERGE;
	msg.merge = &merge;
	msg.report_type = PARCA__QUERY__V1ALPHA1__QUERY_REQUEST__REPORT_TYPE__REPORT_TYPE_PPROF;
	len = parca__query__v1alpha1__query_request__get_packed_size(&msg);
	if (!(body = malloc(len + FRAME_HEAD))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	body[0] = 0;
	body[1] = (uint8_t)(len >> 24);
	body[2] = (uint8_t)(len >> 16);
	body[3] = (uint8_t)(len >> 8);
	body[4] = (uint8_t)len;
	parca__query__v1alpha1__query_request__pack(&msg, body + FRAME_HEAD);
	memset(&req, 0, sizeof(req));
	req.method = HTTP_POST;
	req.url = url;
	req.headers = headers;
	req.body = body;
	req.body_len = len + FRAME_HEAD;
	req.secret_header = q->http.auth_header;
	req.secret_value = q->http.auth_value;
	req.connect_timeout_ms = q->http.connect_timeout_ms;
	req.timeout_ms = q->http.timeout_ms;
	/* The frames and the protobuf around the pprof bytes: a little room. */
	req.max_body = q->http.max_bytes + 4096;
	/* An HTTP error is read for its reason only (gRPC errors come as 200). */
	req.max_error_body = SOURCE_ERROR_BODY_MAX;
	req.ca_file = q->http.ca_file;
	req.keep_headers = kept_headers;
	if ((rc = http_request(&resp, &req, &herr)) < 0) {
		if (rc == PR_ELIMIT)
			rc = pr_error_set(err, PR_ELIMIT,
					  "parca '%s': the answer is larger than the "
					  "input limit of %zu bytes",
					  shown, q->http.max_bytes);
		else
			rc = pr_error_set(err, rc, "parca %s", herr.msg);
		goto out;
	}
	if (resp.status != 200) {
		pyroscope_connect_error(why, sizeof(why), resp.status, &resp.body);
		out->retry = resp.status == 503 || resp.status == 429;
		out->retry_after_ms = resp.retry_after_ms;
		rc = pr_error_set(err,
				  resp.status == 401 || resp.status == 403   ? PR_EREFUSED
				  : resp.status >= 500 || resp.status == 429 ? PR_EIO
									     : PR_EUSAGE,
				  "parca '%s': %s", shown, why);
		/* http_request masks what is not 2xx; a 2xx that is not 200 is quoted too. */
		http_mask_secrets(err->msg, &req);
		goto out;
	}
	rc = parca_answer_parse(out, (const uint8_t *)resp.body.ptr, resp.body.len,
				q->http.max_bytes, shown, resp.kept[0], resp.kept[1], err);
	/*
	 * A failed call answers 200 with its status in a trailer frame, which
	 * http_request leaves as it came: a server that quotes the token it
	 * refused ("invalid token: Bearer ...") must not put it in the message.
	 */
	if (rc < 0)
		http_mask_secrets(err->msg, &req);
out:
	http_response_release(&resp);
	free(body);
	return rc;
}
