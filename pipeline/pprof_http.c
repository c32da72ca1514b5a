/*
 * pprof_http.c: Go net/http/pprof endpoints (see pprof_http.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "pipeline/pprof_http.h"
#include "pipeline/http.h"

#include <stdio.h>
#include <string.h>

int pprof_http_what_valid(const char *what)
{
	static const char *const ok[] = {"profile", "heap", "allocs", "goroutine", NULL};

	for (size_t i = 0; ok[i]; i++)
		if (strcmp(ok[i], what) == 0)
			return 1;
	return 0;
}

int pprof_http_url(char *out, size_t n, const pprof_http_req *r)
{
	int w;

	if (strcmp(r->what, "profile") == 0)
		w = snprintf(out, n, "%s://%s/debug/pprof/profile?seconds=%u", r->scheme,
			     r->address, r->seconds);
	else
		w = snprintf(out, n, "%s://%s/debug/pprof/%s", r->scheme, r->address, r->what);
	return w < 0 || (size_t)w >= n ? PR_EUSAGE : 0;
}

int pprof_http_fetch(source_fetched *out, const pprof_http_req *r, pr_error *err)
{
	char url[512], hint[160];
	http_response resp;
	http_req req;
	pr_error herr = PR_ERROR_INIT;
	int rc;

	source_fetched_init(out);
	http_response_init(&resp);
	if (pprof_http_url(url, sizeof(url), r) < 0)
		return pr_error_set(err, PR_EUSAGE, "target '%.64s': address too long", r->address);
	memset(&req, 0, sizeof(req));
	req.method = HTTP_GET;
	req.url = url;
	req.secret_header = r->http.auth_header;
	req.secret_value = r->http.auth_value;
	req.connect_timeout_ms = r->http.connect_timeout_ms;
	req.timeout_ms = r->http.timeout_ms;
	req.max_body = r->http.max_bytes;
	/* An error answer is quoted by its first line only. */
	req.max_error_body = SOURCE_ERROR_BODY_MAX;
	req.ca_file = r->http.ca_file;
	if ((rc = http_request(&resp, &req, &herr)) < 0) {
		if (rc == PR_ELIMIT)
			rc = pr_error_set(err, PR_ELIMIT,
					  "target '%s': the answer is larger than the "
					  "input limit of %zu bytes",
					  r->address, r->http.max_bytes);
		else
			rc = pr_error_set(err, rc, "%s", herr.msg);
		goto out;
	}
	source_body_hint(hint, sizeof(hint), &resp.body);
	if (resp.status == 500 && strstr(resp.body.ptr, "already in use")) {
		out->retry = true;
		rc = pr_error_set(err, PR_EIO,
				  "target '%s': the CPU profiler is busy with another "
				  "profile (HTTP 500: '%s')",
				  r->address, hint);
		goto out;
	}
	if (resp.status == 400 && strstr(resp.body.ptr, "WriteTimeout")) {
		rc = pr_error_set(err, PR_EUSAGE,
				  "target '%s': a %u s CPU profile is at or above "
				  "the server's WriteTimeout (HTTP 400: '%s'); lower \"seconds\" "
				  "below it",
				  r->address, r->seconds, hint);
		goto out;
	}
	if (resp.status == 401 || resp.status == 403) {
		rc = pr_error_set(err, PR_EREFUSED,
				  "target '%s': HTTP %ld: the endpoint refused "
				  "the credentials%s",
				  r->address, resp.status,
				  r->http.auth_header ? "" : " (none were sent)");
		goto out;
	}
	if (resp.status != 200) {
		out->retry = resp.status == 503 || resp.status == 429;
		out->retry_after_ms = resp.retry_after_ms;
		rc = pr_error_set(err,
				  resp.status >= 500 || resp.status == 429 ? PR_EIO : PR_EUSAGE,
				  "target '%s': HTTP %ld%s%s%s", r->address, resp.status,
				  hint[0] ? ": '" : "", hint, hint[0] ? "'" : "");
		/* http_request masks what is not 2xx; a 2xx that is not 200 is quoted too. */
		http_mask_secrets(err->msg, &req);
		goto out;
	}
	if (resp.body.len < 2 || (unsigned char)resp.body.ptr[0] != 0x1f ||
	    (unsigned char)resp.body.ptr[1] != 0x8b) {
		rc = pr_error_set(err, PR_EDATA,
				  "target '%s': the answer (%zu bytes) is not a "
				  "gzipped pprof profile",
				  r->address, resp.body.len);
		goto out;
	}
	out->body = resp.body;
	http_response_init(&resp);
out:
	http_response_release(&resp);
	return rc;
}
