/*
 * pyroscope.c: Pyroscope's SelectMergeProfile (see pyroscope.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "pipeline/pyroscope.h"
#include "pipeline/http.h"
#include "pipeline/pyroscope.pb-c.h"
#include "common/redact.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/*
 * A server's code or message, through redact_excerpt: a service's error
 * may echo the request or its data back.
 */
static void safe_copy(char *out, size_t n, const char *s)
{
	redact_excerpt(out, n, s, s ? strlen(s) : 0);
}

void pyroscope_connect_error(char *out, size_t n, long status, const buf *body)
{
	bool small = body->len <= PYROSCOPE_ERROR_JSON_MAX;
	json_t *j = small ? json_loadb(body->ptr, body->len, 0, NULL) : NULL;
	const char *code = json_string_value(json_object_get(j, "code"));
	const char *msg = json_string_value(json_object_get(j, "message"));
	char c[64], m[200];

	if (code) {
		safe_copy(c, sizeof(c), code);
		safe_copy(m, sizeof(m), msg);
		snprintf(out, n, "HTTP %ld %s%s%s", status, c, m[0] ? ": " : "", m);
	} else {
		source_body_hint(m, sizeof(m), body);
		snprintf(out, n, "HTTP %ld%s%s%s", status, m[0] ? ": '" : "", m, m[0] ? "'" : "");
	}
	json_decref(j);
}

/*
 * POST `body` to <url>/querier.v1.QuerierService/<method>; a 200's body
 * into resp. Any other status is an error with the Connect reason.
 */
static int connect_call(http_response *resp, bool *retry, int64_t *retry_after,
			const pyroscope_query *q, const char *method, const uint8_t *body,
			size_t len, pr_error *err)
{
	const char *headers[4] = {"Content-Type: application/proto", "Connect-Protocol-Version: 1",
				  NULL, NULL};
	static const char *const keep[2] = {"Content-Type", NULL};
	char url[1024], shown[320], tenant[320], why[320];
	pr_error herr = PR_ERROR_INIT;
	http_req req;
	int rc;

	http_response_init(resp);
	http_redact_url(shown, sizeof(shown), q->url);
	if (snprintf(url, sizeof(url), "%s/querier.v1.QuerierService/%s", q->url, method) >=
	    (int)sizeof(url))
		return pr_error_set(err, PR_EUSAGE, "pyroscope '%s': URL too long", shown);
	if (q->tenant) {
		snprintf(tenant, sizeof(tenant), "X-Scope-OrgID: %.256s", q->tenant);
		headers[2] = tenant;
	}
	memset(&req, 0, sizeof(req));
	req.method = HTTP_POST;
	req.url = url;
	req.headers = headers;
	req.body = body;
	req.body_len = len;
	req.secret_header = q->http.auth_header;
	req.secret_value = q->http.auth_value;
	req.connect_timeout_ms = q->http.connect_timeout_ms;
	req.timeout_ms = q->http.timeout_ms;
	req.max_body = q->http.max_bytes;
	/* An error answer is read for its Connect code and message only. */
	req.max_error_body = SOURCE_ERROR_BODY_MAX;
	req.ca_file = q->http.ca_file;
	req.keep_headers = keep;
	if ((rc = http_request(resp, &req, &herr)) < 0) {
		if (rc == PR_ELIMIT)
			return pr_error_set(err, PR_ELIMIT,
					    "pyroscope '%s': the answer is larger "
					    "than the input limit of %zu bytes",
					    shown, q->http.max_bytes);
		return pr_error_set(err, rc, "pyroscope %s", herr.msg);
	}
	if (resp->status != 200) {
		pyroscope_connect_error(why, sizeof(why), resp->status, &resp->body);
		*retry = resp->status == 503 || resp->status == 429;
		*retry_after = resp->retry_after_ms;
		rc = pr_error_set(err,
				  resp->status == 401 || resp->status == 403   ? PR_EREFUSED
				  : resp->status >= 500 || resp->status == 429 ? PR_EIO
									       : PR_EUSAGE,
				  "pyroscope '%s': %s", shown, why);
		/* http_request masks what is not 2xx; a 2xx that is not 200 is quoted too. */
		http_mask_secrets(err->msg, &req);
		return rc;
	}
	/*
	 * An empty message is an empty body, so nothing but the type tells an
	 * empty answer from a proxy's empty page: read as "no data", that
	 * slot would be recorded and never asked again.
	 */
	if (resp->body.len == 0 && strncasecmp(resp->kept[0], "application/proto", 17) != 0) {
		char type[64];
		size_t k = 0;
		/* The server's words, printable ASCII only. */
		for (const char *c = resp->kept[0]; *c && k < sizeof(type) - 1; c++)
			type[k++] = *c >= 0x20 && *c < 0x7f ? *c : '?';
		type[k] = '\0';
		*retry = true;
		return pr_error_set(err, PR_EIO,
				    "pyroscope '%s': an empty answer of type '%s', not an empty "
				    "message (application/proto)",
				    shown, type[0] ? type : "none");
	}
	return 0;
}

int pyroscope_fetch(source_fetched *out, const pyroscope_query *q, pr_error *err)
{
	Querier__V1__SelectMergeProfileRequest msg =
		QUERIER__V1__SELECT_MERGE_PROFILE_REQUEST__INIT;
	char shown[320];
	uint8_t *body = NULL;
	http_response resp;
	size_t len;
	int rc;

	source_fetched_init(out);
	http_response_init(&resp);
	http_redact_url(shown, sizeof(shown), q->url);
	msg.profile_typeid = (char *)q->type_id;
	msg.label_selector = (char *)q->selector;
	msg.start = q->start_ms;
	msg.end = q->end_ms;
	len = querier__v1__select_merge_profile_request__get_packed_size(&msg);
	if (!(body = malloc(len ? len : 1))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	querier__v1__select_merge_profile_request__pack(&msg, body);
	if ((rc = connect_call(&resp, &out->retry, &out->retry_after_ms, q, "SelectMergeProfile",
			       body, len, err)) < 0)
		goto out;
	if (resp.body.len == 0) {
		out->empty = true;
		goto out;
	}
	/* A pprof message starts with a field of profile.proto: a tag byte, never '{' or '<'. */
	if (resp.body.ptr[0] == '{' || resp.body.ptr[0] == '<') {
		rc = pr_error_set(err, PR_EDATA,
				  "pyroscope '%s': the answer (%zu bytes) is text, "
				  "not a protobuf profile",
				  shown, resp.body.len);
		goto out;
	}
	out->body = resp.body;
	http_response_init(&resp);
out:
	http_response_release(&resp);
	free(body);
	return rc;
}

/* The longest label value profreg keeps as a release. */
#define VALUE_MAX 256

/* A label value profreg may keep as a release: the ingest text rule. */
static bool value_ok(const char *v)
{
	size_t n = strlen(v);

	if (n == 0 || n > VALUE_MAX)
		return false;
	for (; *v; v++)
		if ((unsigned char)*v < 0x20 || *v == 0x7f || *v == '"' || *v == '\\')
			return false;
	return true;
}

/* Value v into values (n of them) unless there already; PR_ELIMIT past the cap. */
static int add_value(char **values, size_t *n, const char *v, const char *label, const char *shown,
		     pr_error *err)
{
	for (size_t j = 0; j < *n; j++)
		if (strcmp(values[j], v) == 0)
			return 0;
	if (*n == PYROSCOPE_MAX_VALUES)
		return pr_error_set(err, PR_ELIMIT,
				    "pyroscope '%s': more than %d values of label '%.64s' in one "
				    "slot",
				    shown, PYROSCOPE_MAX_VALUES, label);
	if (!(values[*n] = strdup(v)))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	(*n)++;
	return 0;
}

int pyroscope_series_values(char ***values, size_t *n, const uint8_t *answer, size_t answer_len,
			    const char *label, const char *shown, pr_error *err)
{
	Querier__V1__SeriesResponse *res = NULL;
	bool unlabelled = false;
	int rc = 0;

	*values = NULL;
	*n = 0;
	if (answer_len > PYROSCOPE_SERIES_MAX) {
		rc = pr_error_set(err, PR_ELIMIT,
				  "pyroscope '%s': a SeriesResponse of %zu bytes, more than the "
				  "%zu a slot's label values need",
				  shown, answer_len, PYROSCOPE_SERIES_MAX);
		goto out;
	}
	if (!(res = querier__v1__series_response__unpack(NULL, answer_len, answer))) {
		rc = pr_error_set(err, PR_EDATA,
				  "pyroscope '%s': malformed SeriesResponse (%zu "
				  "bytes protobuf-c cannot decode)",
				  shown, answer_len);
		goto out;
	}
	if (!(*values = calloc(PYROSCOPE_MAX_VALUES, sizeof(**values)))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < res->n_labels_set && rc == 0; i++) {
		const char *v = NULL;
		for (size_t k = 0; k < res->labels_set[i]->n_labels && !v; k++)
			if (strcmp(res->labels_set[i]->labels[k]->name, label) == 0)
				v = res->labels_set[i]->labels[k]->value;
		/* As in Prometheus's matchers, an empty value is no label. */
		if (!v || !*v)
			unlabelled = true;
		else if (!value_ok(v))
			rc = pr_error_set(err, PR_EDATA,
					  "pyroscope '%s': a series' value of label '%.64s' (%zu "
					  "bytes) cannot be a release (longer than %d bytes, or "
					  "holding a control character, quote or backslash): the "
					  "slot is not collected",
					  shown, label, strlen(v), VALUE_MAX);
		else
			rc = add_value(*values, n, v, label, shown, err);
	}
	/* Series without the label, beside others with it: fetched too, as "". */
	if (rc == 0 && unlabelled && *n)
		rc = add_value(*values, n, "", label, shown, err);
out:
	if (rc < 0 && *values) {
		for (size_t i = 0; i < *n; i++)
			free((*values)[i]);
		free(*values);
		*values = NULL;
		*n = 0;
	}
	if (res)
		querier__v1__series_response__free_unpacked(res, NULL);
	return rc;
}

/* Whether `v` holds the credentials `q` sends (as http_request masks them in an error). */
static bool holds_secret(const char *v, const pyroscope_query *q)
{
	char copy[VALUE_MAX + 1];
	http_req req;

	if (!q->http.auth_header || !q->http.auth_value)
		return false;
	memset(&req, 0, sizeof(req));
	req.secret_header = q->http.auth_header;
	req.secret_value = q->http.auth_value;
	snprintf(copy, sizeof(copy), "%s", v);
	http_mask_secrets(copy, &req);
	return strcmp(copy, v) != 0;
}

int pyroscope_label_values(char ***values, size_t *n, bool *retry, const pyroscope_query *q,
			   const char *label, pr_error *err)
{
	Querier__V1__SeriesRequest msg = QUERIER__V1__SERIES_REQUEST__INIT;
	char *matchers[1] = {(char *)q->selector}, *names[1] = {(char *)label}, shown[320];
	pyroscope_query qs = *q;
	uint8_t *body = NULL;
	http_response resp;
	int64_t retry_after = -1;
	size_t len;
	int rc;

	*retry = false;
	*values = NULL;
	*n = 0;
	http_response_init(&resp);
	http_redact_url(shown, sizeof(shown), q->url);
	msg.n_matchers = 1;
	msg.matchers = matchers;
	msg.n_label_names = 1;
	msg.label_names = names;
	msg.start = q->start_ms;
	msg.end = q->end_ms;
	len = querier__v1__series_request__get_packed_size(&msg);
	if (!(body = malloc(len ? len : 1))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	querier__v1__series_request__pack(&msg, body);
	/* A longer answer is not even read: pyroscope_series_values would refuse it. */
	if (!qs.http.max_bytes || qs.http.max_bytes > PYROSCOPE_SERIES_MAX)
		qs.http.max_bytes = PYROSCOPE_SERIES_MAX;
	if ((rc = connect_call(&resp, retry, &retry_after, &qs, "Series", body, len, err)) < 0)
		goto out;
	if ((rc = pyroscope_series_values(values, n, (const uint8_t *)resp.body.ptr, resp.body.len,
					  label, shown, err)) < 0)
		goto out;
	/*
	 * A value becomes the release of the slot's capture, stored and shown
	 * in every report: a server that answers with the credentials it was
	 * sent (an echo, a proxy quoting the request) must not put them
	 * there. The value is not quoted, nor the slot taken.
	 */
	for (size_t i = 0; i < *n; i++)
		if (holds_secret((*values)[i], q)) {
			rc = pr_error_set(err, PR_EDATA,
					  "pyroscope '%s': a value of label '%.64s' holds the "
					  "credentials this source sends: not used as a release",
					  shown, label);
			for (size_t k = 0; k < *n; k++)
				free((*values)[k]);
			free(*values);
			*values = NULL;
			*n = 0;
			goto out;
		}
out:
	http_response_release(&resp);
	free(body);
	return rc;
}

char *pyroscope_selector_with(const char *selector, const char *label, const char *value)
{
	size_t n = strlen(selector);
	buf b = BUF_INIT;
	bool empty;

	if (n < 2 || selector[n - 1] != '}' || selector[0] != '{')
		return NULL;
	empty = n == 2;
	if (buf_put(&b, selector, n - 1) < 0 ||
	    buf_printf(&b, "%s%s=\"%s\"}", empty ? "" : ",", label, value) < 0)
		return NULL;
	return buf_detach(&b, NULL);
}
