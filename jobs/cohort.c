/*
 * cohort.c: the host sets of a canary comparison (see cohort.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cohort.h"
#include "baselines/baseline.h"
#include "common/buf.h"

#include <fnmatch.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* How many of the service's hosts an error message lists. */
#define HINT_HOSTS 8

/* The longest item of a host list, in bytes, and one. */
#define ITEM_MAX 300

void cohort_hosts_release(cohort_hosts *c)
{
	free(c->cohort);
	free(c->control);
	memset(c, 0, sizeof(*c));
}

/* The hosts the service knows, for an error message. */
static void known_hint(buf *b, char *const *hosts, size_t n, const char *service)
{
	buf_printf(b, " (service '%s' has captures from: ", service);
	for (size_t i = 0; i < n && i < HINT_HOSTS; i++)
		buf_printf(b, "%s%s", i ? ", " : "", hosts[i]);
	if (n > HINT_HOSTS)
		buf_printf(b, ", and %zu more", n - HINT_HOSTS);
	if (!n)
		buf_puts(b, "none with a host");
	buf_putc(b, ')');
}

/*
 * Mark in `in` every host `spec` names; every item of it that names no
 * host goes into `unknown` ("'web-9', 'db-*'").
 */
static int select_hosts(bool *in, char *const *hosts, size_t n, const char *spec, buf *unknown,
			bool *empty_item)
{
	const char *p = spec;

	*empty_item = false;
	for (;;) {
		size_t len = strcspn(p, ",");
		char item[ITEM_MAX];
		bool hit = false;
		if (len == 0 || len >= sizeof(item)) {
			*empty_item = true;
			return 0;
		}
		memcpy(item, p, len);
		item[len] = '\0';
		{
			/* "host=PATTERN", and "host=!PATTERN": every host it does not match. */
			const char *pat = strncmp(item, "host=", 5) == 0 ? item + 5 : item;
			bool neg = pat != item && pat[0] == '!';
			if (neg)
				pat++;
			bool exact = false;
			if (!*pat) {
				*empty_item = true;
				return 0;
			}
			/*
			 * A host whose name holds glob characters ("canary-[1]", "web*")
			 * is named as written: a name that is a host selects that host
			 * alone. As a glob it would match others ("canary-1"), or not
			 * itself. "canary-\[1\]" is the glob that matches it literally.
			 */
			for (size_t i = 0; i < n && !exact; i++)
				exact = strcmp(pat, hosts[i]) == 0;
			for (size_t i = 0; i < n; i++)
				if ((exact ? strcmp(pat, hosts[i]) == 0
					   : fnmatch(pat, hosts[i], 0) == 0) != neg) {
					in[i] = true;
					hit = true;
				}
		}
		if (!hit && buf_printf(unknown, "%s'%s'", unknown->len ? ", " : "", item) < 0)
			return PR_ENOMEM;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

/* Whether every item of `spec` is a name select_hosts takes: not empty, not overlong. */
static bool spec_valid(const char *spec)
{
	for (const char *p = spec;;) {
		size_t len = strcspn(p, ",");
		const char *pat = p;
		if (len == 0 || len >= ITEM_MAX)
			return false;
		if (len >= 5 && strncmp(p, "host=", 5) == 0) {
			pat = p + 5;
			pat += pat < p + len && *pat == '!';
			if (pat == p + len)
				return false;
		}
		if (!p[len])
			return true;
		p += len + 1;
	}
}

int cohort_check_spec(const char *spec, const char *which, pr_error *err)
{
	if (!spec || spec_valid(spec))
		return 0;
	return pr_error_set(err, PR_EUSAGE,
			    "the %s hosts '%.200s' hold an empty or overlong name (a list is "
			    "NAME[,NAME...], each a host, a glob, host=GLOB or host=!GLOB)",
			    which, spec);
}

static char *json_of(char *const *hosts, const bool *in, size_t n, bool want, size_t *count)
{
	json_t *arr = json_array();
	char *text = NULL;

	*count = 0;
	for (size_t i = 0; arr && i < n; i++)
		if (in[i] == want && json_array_append_new(arr, json_string(hosts[i])) == 0)
			(*count)++;
	if (arr)
		text = json_dumps(arr, JSON_COMPACT);
	json_decref(arr);
	return text;
}

int cohort_resolve(cohort_hosts *out, db *d, int64_t service_id, const char *service,
		   const char *cohort_spec, const char *control_spec, pr_error *err)
{
	char **hosts = NULL;
	size_t n = 0;
	bool *canary = NULL, *control = NULL, empty = false;
	buf unknown = BUF_INIT, hint = BUF_INIT;
	const char *which = "canary";
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = capture_hosts_of(&hosts, &n, d, service_id, err)) < 0)
		goto out;
	if (!(canary = calloc(n + 1, sizeof(*canary))) ||
	    !(control = calloc(n + 1, sizeof(*control)))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	rc = select_hosts(canary, hosts, n, cohort_spec, &unknown, &empty);
	if (rc == 0 && !empty && !unknown.len && control_spec) {
		which = "control";
		rc = select_hosts(control, hosts, n, control_spec, &unknown, &empty);
	}
	if (rc < 0) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	if (empty) {
		rc = cohort_check_spec(strcmp(which, "canary") == 0 ? cohort_spec : control_spec,
				       which, err);
		goto out;
	}
	if (unknown.len) {
		known_hint(&hint, hosts, n, service);
		rc = pr_error_set(err, PR_EUSAGE, "unknown host%s in the %s hosts: %s%s",
				  strchr(unknown.ptr, ',') ? "s" : "", which, unknown.ptr,
				  hint.ptr ? hint.ptr : "");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (canary[i] && control[i]) {
			rc = pr_error_set(err, PR_EUSAGE,
					  "host '%s' is in both the canary and the control hosts",
					  hosts[i]);
			goto out;
		}
		if (!control_spec)
			control[i] = !canary[i];
	}
	if (!(out->cohort = json_of(hosts, canary, n, true, &out->ncohort)) ||
	    !(out->control = json_of(hosts, control, n, true, &out->ncontrol))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	if (!out->ncontrol) {
		rc = pr_error_set(err, PR_EUSAGE,
				  "no control hosts: every host of service '%s' is a canary host",
				  service);
		goto out;
	}
out:
	if (rc < 0)
		cohort_hosts_release(out);
	capture_releases_free(hosts, n);
	free(canary);
	free(control);
	buf_release(&unknown);
	buf_release(&hint);
	return rc;
}
