/*
 * pushgw.c: Pushgateway text exposition and push (see pushgw.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/pushgw.h"
#include "stats/rank.h"
#include "common/timeutil.h"
#include "pipeline/http.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* How much of the pushgateway's answer is read. */
#define RESPONSE_MAX 4096

static int metric(buf *b, const char *name, const char *help)
{
	return buf_printf(b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

int pushgw_format(buf *out, const pushgw_run *r)
{
	int rc = 0;

	rc |= metric(out, "profreg_run_duration_seconds", "Wall time of the last run.");
	rc |= buf_printf(out, "profreg_run_duration_seconds %.3f\n", r->duration_seconds);
	rc |= metric(out, "profreg_run_success",
		     "1 when the last run completed, 0 when it failed.");
	rc |= buf_printf(out, "profreg_run_success %d\n", r->success ? 1 : 0);
	rc |= metric(out, "profreg_last_run_timestamp_seconds",
		     "When the last run ended, success or not.");
	rc |= buf_printf(out, "profreg_last_run_timestamp_seconds %.3f\n",
			 (double)r->finished_us / 1e6);
	rc |= metric(out, "profreg_services_analysed", "Services analysed by the last run.");
	rc |= buf_printf(out, "profreg_services_analysed %zu\n", r->services_analysed);
	rc |= metric(out, "profreg_services_failed", "Services that failed in the last run.");
	rc |= buf_printf(out, "profreg_services_failed %zu\n", r->services_failed);
	rc |= metric(out, "profreg_findings", "Findings of the last run by severity.");
	for (int s = STATS_SEV_NONE; s <= STATS_SEV_CRITICAL; s++)
		rc |= buf_printf(out, "profreg_findings{severity=\"%s\"} %zu\n",
				 stats_severity_name((stats_severity)s), r->findings[s]);
	rc |= metric(
		out, "profreg_pages",
		"Pages of the last run: enqueued, sent, failed; pending: all not yet delivered.");
	rc |= buf_printf(out, "profreg_pages{state=\"enqueued\"} %zu\n", r->pages_enqueued);
	rc |= buf_printf(out, "profreg_pages{state=\"sent\"} %zu\n", r->pages_sent);
	rc |= buf_printf(out, "profreg_pages{state=\"failed\"} %zu\n", r->pages_failed);
	rc |= buf_printf(out, "profreg_pages{state=\"pending\"} %zu\n", r->pages_pending);
	rc |= buf_printf(out, "profreg_pages{state=\"failed_open\"} %zu\n", r->pages_failed_open);
	if (r->success) {
		rc |= metric(out, "profreg_last_success_timestamp_seconds",
			     "When a run last completed (pushed only by a run that did).");
		rc |= buf_printf(out, "profreg_last_success_timestamp_seconds %.3f\n",
				 (double)r->finished_us / 1e6);
	}
	return rc ? PR_ENOMEM : 0;
}

/*
 * "/NAME/VALUE" of the push URL. A value of [A-Za-z0-9._-] goes as it is;
 * any other, and "." and ".." (which a URL's path drops: ".." once arrived
 * as instance=""), and "" go as the Pushgateway's "/NAME@base64/VALUE",
 * VALUE in base64url ("=" for ""), so that every value arrives as it is
 * and two values never share a group ("a/b" used to be sent as "a_b").
 */
static int grouping_label(buf *b, const char *name, const char *v)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	const unsigned char *u = (const unsigned char *)v;
	size_t n = strlen(v);
	bool plain = n > 0 && strcmp(v, ".") != 0 && strcmp(v, "..") != 0;
	int rc;

	for (size_t i = 0; plain && i < n; i++)
		plain = (v[i] >= 'a' && v[i] <= 'z') || (v[i] >= 'A' && v[i] <= 'Z') ||
			(v[i] >= '0' && v[i] <= '9') || v[i] == '.' || v[i] == '_' || v[i] == '-';
	if (plain)
		return buf_printf(b, "/%s/%s", name, v);
	if ((rc = buf_printf(b, "/%s@base64/", name)) < 0)
		return rc;
	if (n == 0)
		return buf_putc(b, '=');
	for (size_t i = 0; rc == 0 && i < n; i += 3) {
		uint32_t w = (uint32_t)u[i] << 16 | (i + 1 < n ? (uint32_t)u[i + 1] << 8 : 0) |
			     (i + 2 < n ? u[i + 2] : 0);
		rc = buf_putc(b, b64[w >> 18 & 63]);
		if (rc == 0)
			rc = buf_putc(b, b64[w >> 12 & 63]);
		if (rc == 0 && i + 1 < n)
			rc = buf_putc(b, b64[w >> 6 & 63]);
		if (rc == 0 && i + 2 < n)
			rc = buf_putc(b, b64[w & 63]);
	}
	return rc;
}

int pushgw_post(const char *base_url, const char *instance, const char *kind, const char *body,
		uint32_t connect_timeout_ms, uint32_t timeout_ms, pr_error *err)
{
	static const char *const headers[] = {"Content-Type: text/plain; version=0.0.4", NULL};
	char host[256] = "";
	pr_error herr = PR_ERROR_INIT;
	http_response res;
	http_req req;
	buf url = BUF_INIT;
	size_t n = strlen(base_url);
	int rc = 0;

	http_response_init(&res);
	if (!instance) {
		if (gethostname(host, sizeof(host) - 1) < 0)
			snprintf(host, sizeof(host), "unknown");
		instance = host;
	}
	while (n && base_url[n - 1] == '/')
		n--;
	if (buf_printf(&url, "%.*s/metrics/job/profreg", (int)n, base_url) < 0 ||
	    grouping_label(&url, "instance", instance) < 0 ||
	    grouping_label(&url, "kind", kind ? kind : "") < 0) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	memset(&req, 0, sizeof(req));
	req.method = HTTP_POST;
	req.url = url.ptr;
	req.headers = headers;
	req.body = body;
	req.body_len = strlen(body);
	req.connect_timeout_ms = connect_timeout_ms;
	req.timeout_ms = timeout_ms;
	/* The answer is not used: a little of it, never an error for its size. */
	req.max_body = RESPONSE_MAX;
	req.prefix_only = true;
	if ((rc = http_request(&res, &req, &herr)) < 0) {
		/* Whatever went wrong on the way, the push failed: PR_EIO, as before. */
		rc = rc == PR_ENOMEM ? pr_error_set(err, rc, "out of memory") :
		     pr_error_set(err, PR_EIO, "cannot push metrics to the pushgateway: %s",
				  herr.msg);
		goto out;
	}
	if (res.status < 200 || res.status >= 300)
		rc = pr_error_set(err, PR_EIO, "cannot push metrics to the pushgateway: HTTP %ld",
				  res.status);
out:
	http_response_release(&res);
	buf_release(&url);
	return rc;
}

/* The least time worth a push: a connection and one small POST on a loaded machine. */
#define PUSH_MIN_MS 500

int pushgw_push_run(const config *c, const pushgw_run *r, pr_error *err)
{
	uint32_t connect_ms = c->paging.connect_timeout_ms, timeout_ms = c->paging.timeout_ms;
	buf body = BUF_INIT;
	int rc;

	if (!c->metrics.pushgateway || !c->metrics.pushgateway[0])
		return 0;
	if (r->deadline_us) {
		/* Done a second before the deadline, or not started. */
		int64_t left_ms = (r->deadline_us - (int64_t)(time_mono() * 1e6)) / 1000 - 1000;
		if (left_ms < PUSH_MIN_MS)
			return pr_error_set(err, PR_EIO,
					    "metrics not pushed: no time left before the deadline");
		if (!timeout_ms || timeout_ms > left_ms)
			timeout_ms = (uint32_t)left_ms;
		if (!connect_ms || connect_ms > timeout_ms)
			connect_ms = timeout_ms;
	}
	if (pushgw_format(&body, r) < 0)
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	rc = pushgw_post(c->metrics.pushgateway, c->metrics.instance, r->kind, body.ptr, connect_ms,
			 timeout_ms, err);
	buf_release(&body);
	return rc;
}

int pushgw_push_analysis(const config *c, const char *kind, bool success, double t0,
			 int64_t deadline_us, const analysis *a, size_t services_analysed,
			 size_t services_failed, const pager_counts *pc, pr_error *err)
{
	pushgw_run r;

	memset(&r, 0, sizeof(r));
	r.kind = kind;
	r.deadline_us = deadline_us;
	r.success = success;
	r.duration_seconds = time_mono() - t0;
	r.finished_us = time_now_us();
	r.services_analysed = services_analysed;
	r.services_failed = services_failed;
	for (size_t i = 0; i < a->ntests && a->tests[i].significant; i++)
		r.findings[a->tests[i].severity]++;
	r.pages_enqueued = a->pages_enqueued;
	if (pc) {
		r.pages_sent = pc->sent;
		r.pages_failed = pc->failed;
		r.pages_pending = pc->pending;
		r.pages_failed_open = pc->failed_open;
	}
	return pushgw_push_run(c, &r, err);
}
