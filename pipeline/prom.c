/*
 * prom.c: Prometheus instant queries and their answers (see prom.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "pipeline/prom.h"
#include "common/buf.h"
#include "pipeline/http.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void prom_vector_release(prom_vector *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->v[i].key);
	free(v->v);
	strmap_release(&v->index);
	memset(v, 0, sizeof(*v));
	strmap_init(&v->index);
}

const prom_sample *prom_vector_find(const prom_vector *v, const char *key)
{
	uint32_t at;

	return strmap_get(&v->index, key, strlen(key), &at) ? &v->v[at] : NULL;
}

/* Objects and arrays a series takes (itself, its metric, its value), and room for the rest. */
#define CONTAINERS_PER_SERIES 3
#define CONTAINERS_SLACK 64

/* `s` cut to n - 1 bytes with control characters as '?', for a message. */
static void printable(char *out, size_t n, const char *s)
{
	size_t i = 0;

	for (; s && s[i] && i + 1 < n; i++)
		out[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
	out[i] = '\0';
}

static int refuse(pr_error *err, int code, const char *what, const char *why)
{
	return pr_error_set(err, code, "cannot read prometheus answer to %s: %s", what, why);
}

/* A label value usable as a key: 1 to PROM_KEY_MAX bytes, no control character. */
static bool key_ok(const char *k, size_t len)
{
	if (len == 0 || len > PROM_KEY_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)k[i] < 0x20 || k[i] == 0x7f)
			return false;
	return true;
}

/* The number of a sample value, a string as Prometheus writes floats. */
static int sample_value(double *out, const json_t *s)
{
	const char *t = json_string_value(s);
	char *end;

	if (!t || !*t || json_string_length(s) > 64)
		return -1;
	*out = strtod(t, &end);
	return *end ? -1 : 0;
}

/*
 * The objects and arrays in the JSON text `body`, counted without parsing
 * it (brackets inside strings are not counted), stopping past `stop`.
 */
static size_t containers(const char *body, size_t len, size_t stop)
{
	size_t n = 0;
	bool in_string = false;

	for (size_t i = 0; i < len && n <= stop; i++) {
		char c = body[i];
		if (in_string) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = false;
		} else if (c == '"') {
			in_string = true;
		} else if (c == '{' || c == '[') {
			n++;
		}
	}
	return n;
}

int prom_parse_vector(prom_vector *out, const char *body, size_t len, const char *label,
		      size_t max_series, const char *what, pr_error *err)
{
	json_error_t jerr;
	json_t *root = NULL, *data, *result, *r;
	const char *status, *type;
	char why[400];
	size_t i, most;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	strmap_init(&out->index);
	/*
	 * jansson builds the whole tree before anything is checked, at about
	 * 240 bytes an empty object: a 4 MiB answer of "{}," under a key
	 * nothing reads took 333 MB. A vector of N series has 3 N + 3 objects
	 * and arrays (the answer, its data, the result; each series, its
	 * metric, its value); more cannot be an answer within max_series.
	 */
	most = max_series > (SIZE_MAX - CONTAINERS_SLACK) / CONTAINERS_PER_SERIES
		       ? SIZE_MAX
		       : CONTAINERS_PER_SERIES * max_series + CONTAINERS_SLACK;
	if (containers(body, len, most) > most) {
		snprintf(why, sizeof(why),
			 "more objects and arrays than %zu series hold (%zu at most), not read",
			 max_series, most);
		rc = refuse(err, PR_ELIMIT, what, why);
		goto out;
	}
	if (!(root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr))) {
		snprintf(why, sizeof(why), "not JSON (%s at byte %d)",
			 jerr.position >= (int)len ? "truncated" : "bad", jerr.position);
		rc = refuse(err, PR_EDATA, what, why);
		goto out;
	}
	status = json_string_value(json_object_get(root, "status"));
	if (!json_is_object(root) || !status) {
		rc = refuse(err, PR_EDATA, what, "no \"status\": not a Prometheus API answer");
		goto out;
	}
	if (strcmp(status, "success") != 0) {
		char etype[64], emsg[200];
		printable(etype, sizeof(etype),
			  json_string_value(json_object_get(root, "errorType")));
		printable(emsg, sizeof(emsg), json_string_value(json_object_get(root, "error")));
		snprintf(why, sizeof(why), "status '%.20s'%s%s%s%s",
			 strcmp(status, "error") == 0 ? "error" : "(unknown)", etype[0] ? " (" : "",
			 etype, etype[0] ? ")" : "", emsg[0] ? ": " : "");
		if (emsg[0])
			snprintf(why + strlen(why), sizeof(why) - strlen(why), "%s", emsg);
		rc = refuse(err, PR_EDATA, what, why);
		goto out;
	}
	data = json_object_get(root, "data");
	type = json_string_value(json_object_get(data, "resultType"));
	result = json_object_get(data, "result");
	if (!json_is_object(data) || !type || !json_is_array(result)) {
		rc = refuse(err, PR_EDATA, what, "no data.resultType and data.result");
		goto out;
	}
	if (strcmp(type, "vector") != 0) {
		char t[32];
		printable(t, sizeof(t), type);
		snprintf(why, sizeof(why), "result type '%s', expected an instant vector", t);
		rc = refuse(err, PR_EDATA, what, why);
		goto out;
	}
	if (json_array_size(result) > max_series) {
		snprintf(why, sizeof(why), "%zu series, more than the %zu allowed",
			 json_array_size(result), max_series);
		rc = refuse(err, PR_ELIMIT, what, why);
		goto out;
	}
	if (json_array_size(result) &&
	    !(out->v = calloc(json_array_size(result), sizeof(*out->v)))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	json_array_foreach(result, i, r)
	{
		const json_t *metric = json_object_get(r, "metric");
		const json_t *value = json_object_get(r, "value");
		const json_t *k;
		uint32_t at;
		int put;
		double v;
		if (!json_is_object(metric) || !json_is_array(value) ||
		    json_array_size(value) != 2 || !json_is_number(json_array_get(value, 0)) ||
		    sample_value(&v, json_array_get(value, 1)) < 0) {
			snprintf(
				why, sizeof(why),
				"series %zu is not {\"metric\": {...}, "
				"\"value\": [time, \"number\"]}",
				i);
			rc = refuse(err, PR_EDATA, what, why);
			goto out;
		}
		k = json_object_get(metric, label);
		if (!json_is_string(k) || !key_ok(json_string_value(k), json_string_length(k))) {
			out->unlabelled++;
			continue;
		}
		if (!isfinite(v)) {
			out->nonfinite++;
			continue;
		}
		/*
		 * Found through the map: a scan of the keys so far made 80,000
		 * series take 14 s, and an answer may hold a million.
		 */
		put = strmap_put(&out->index, json_string_value(k), json_string_length(k),
				 (uint32_t)out->n, &at, NULL);
		if (put < 0) {
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
			goto out;
		}
		if (put == 0) {
			if (v > out->v[at].value)
				out->v[at].value = v;
			continue;
		}
		if (!(out->v[out->n].key = strdup(json_string_value(k)))) {
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
			goto out;
		}
		out->v[out->n++].value = v;
	}
out:
	if (rc < 0)
		prom_vector_release(out);
	json_decref(root);
	return rc;
}

int prom_query_vector(prom_vector *out, const prom_query *q, pr_error *err)
{
	buf url = BUF_INIT;
	http_response res;
	http_req req;
	char shown[320], why[300];
	int rc;

	memset(out, 0, sizeof(*out));
	http_response_init(&res);
	http_redact_url(shown, sizeof(shown), q->base_url);
	if ((rc = buf_printf(&url, "%s%sapi/v1/query?query=", q->base_url,
			     q->base_url[0] && q->base_url[strlen(q->base_url) - 1] == '/' ? ""
											   : "/")) <
		    0 ||
	    (rc = http_escape(&url, q->expr)) < 0 ||
	    (q->at_us && (rc = buf_printf(&url, "&time=%" PRId64 ".%06" PRId64, q->at_us / 1000000,
					  q->at_us % 1000000)) < 0)) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	memset(&req, 0, sizeof(req));
	req.method = HTTP_GET;
	req.url = url.ptr;
	req.timeout_ms = q->timeout_ms;
	req.connect_timeout_ms = q->timeout_ms;
	req.max_body = q->max_bytes;
	if ((rc = http_request(&res, &req, err)) < 0) {
		/* The client's message, put in the query's words. */
		char msg[PR_ERROR_MSG_MAX];
		snprintf(msg, sizeof(msg), "%s", err->msg);
		if (rc != PR_ENOMEM)
			pr_error_clear(err);
		if (rc == PR_ELIMIT) {
			snprintf(why, sizeof(why), "larger than %zu bytes", q->max_bytes);
			rc = pr_error_set(err, PR_ELIMIT,
					  "cannot read prometheus answer to %s from "
					  "'%s': %s",
					  q->what, shown, why);
		} else if (rc != PR_ENOMEM) {
			rc = pr_error_set(err, PR_EIO, "cannot query prometheus for %s: %s",
					  q->what, msg);
		}
		goto out;
	}
	if (res.status != 200 && res.status != 400 && res.status != 422) {
		rc = pr_error_set(err, PR_EIO, "cannot query prometheus for %s at '%s': HTTP %ld",
				  q->what, shown, res.status);
		goto out;
	}
	if ((rc = prom_parse_vector(out, res.body.ptr, res.body.len, q->label, q->max_series,
				    q->what, err)) < 0)
		goto out;
	if (res.status != 200)
		rc = pr_error_set(err, PR_EIO, "cannot query prometheus for %s at '%s': HTTP %ld",
				  q->what, shown, res.status);
out:
	if (rc < 0)
		prom_vector_release(out);
	http_response_release(&res);
	buf_release(&url);
	return rc;
}
