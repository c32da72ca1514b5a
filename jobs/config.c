/*
 * config.c: load and validate the configuration file (see config.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/config.h"
#include "common/buf.h"
#include "common/fileio.h"
#include "common/netaddr.h"
#include "common/redact.h"
#include "common/similar.h"
#include "pipeline/ingest.h"
#include "jobs/secret.h"
#include "pipeline/targets.h"
#include "pipeline/blob_s3.h"
#include "pipeline/http.h"

#include <openssl/evp.h>
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#define CONFIG_MAX (4u << 20)
#define DAY_US (86400LL * 1000000LL)

/*
 * One key of a section: how it is read and what it means. The tables
 * below are both what the loader applies and what `profreg config
 * reference` prints, so the documentation cannot drift from the loader.
 * A target is an offset into the struct the section is read into (the
 * config itself, a service, a source, a target, a snapshot service).
 */
typedef struct field {
	const char *key;
	char kind;       /* 'i' integer, 'f' number, 's' string, 'b' boolean, 'o' object of
			  * keys, 'm' object of entries by name, 'l' array of objects,
			  * 'a' anything else: read by the section's loader */
	char unit;       /* 0; 'd' days into int64 us; 's' seconds into int64 us;
			  * 'p' percentage points into a fraction */
	double lo, hi;   /* 'i', 'f': the range allowed */
	size_t off;      /* the target's offset ('i', 'f', 's', 'b'); 'o': where the
			  * object's struct is (0: its keys are the parent's) */
	size_t width;    /* the integer target's size in bytes */
	const struct field *sub;  /* 'o', 'm', 'l': the keys inside */
	const char *type;         /* 'a': what the value looks like */
	const char *def;          /* the default as text, where the struct cannot say */
	const char *doc;          /* what it means */
} field;

/* A target in struct T: where it is and its size. */
#define AT(T, m) offsetof(T, m), sizeof(((T *)0)->m)
#define END {NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL}

static int bad(pr_error *err, const char *path, const char *at, const char *why)
{
	char where[PR_ERROR_MSG_MAX];
	size_t n = strlen(at), m;

	/*
	 * A JSON path is made of the file's keys, which a message copies to
	 * terminals, logs and cron mail: payment data in one ("services.card
	 * 4111111111111111") is cut as in names.
	 */
	if (n >= sizeof(where))
		n = sizeof(where) - 1;
	memcpy(where, at, n);
	while ((m = redact_names(where, n)) != n)
		n = m;
	where[n] = '\0';
	return pr_error_set(err, PR_EUSAGE, "config '%s': %s: %s", path, where, why);
}

static void put_uint(void *p, size_t width, uint64_t v)
{
	if (width == 8)
		*(uint64_t *)p = v;
	else
		*(uint32_t *)p = (uint32_t)v;
}

/*
 * "unknown key", or "unknown key (did you mean 'services'?)" when one of
 * the `n` keys the object may hold is a likely typo of it: a misspelt key
 * is the usual first mistake in a configuration file.
 */
static int unknown_key(pr_error *err, const char *path, const char *at, const char *key,
		       const char *const *known, size_t n)
{
	long best = similar_best(key, known, n);
	char why[128];

	if (best < 0)
		return bad(err, path, at, "unknown key");
	snprintf(why, sizeof(why), "unknown key (did you mean '%.64s'?)", known[best]);
	return bad(err, path, at, why);
}

/* unknown_key against the keys of a field table. */
static int unknown_field(pr_error *err, const char *path, const char *at, const char *key,
			 const field *fields)
{
	const char *known[128];
	size_t n = 0;

	for (; fields->key && n < 128; fields++)
		known[n++] = fields->key;
	return unknown_key(err, path, at, key, known, n);
}

/*
 * Apply the keys of `obj` that `fields` reads to the struct at `base`;
 * an unknown key is an error naming its path. Kinds 'm', 'l' and 'a' are
 * left to the caller.
 */
static int apply(json_t *obj, const field *fields, void *base, const char *path,
		 const char *prefix, pr_error *err)
{
	const char *key;
	json_t *v;
	char at[256];
	int rc;

	json_object_foreach(obj, key, v) {
		const field *f;
		void *target;
		for (f = fields; f->key && strcmp(f->key, key) != 0; f++)
			;
		snprintf(at, sizeof(at), "%s%s%.64s", prefix, *prefix ? "." : "", key);
		if (!f->key)
			return unknown_field(err, path, at, key, fields);
		target = (char *)base + f->off;
		if (f->kind == 'o') {
			if (!json_is_object(v))
				return bad(err, path, at, "expected an object");
			if ((rc = apply(v, f->sub, (char *)base + f->off, path, at, err)) < 0)
				return rc;
			continue;
		}
		if (f->kind == 'a' || f->kind == 'm' || f->kind == 'l')
			continue; /* read by the caller */
		if (f->kind == 's') {
			if (!json_is_string(v) || json_string_length(v) == 0)
				return bad(err, path, at, "expected a non-empty string");
			free(*(char **)target);
			if (!(*(char **)target = strdup(json_string_value(v))))
				return pr_error_set(err, PR_ENOMEM, "out of memory");
			continue;
		}
		if (f->kind == 'b') {
			if (!json_is_boolean(v))
				return bad(err, path, at, "expected true or false");
			*(bool *)target = json_is_true(v);
			continue;
		}
		if (f->kind == 'i' ? !json_is_integer(v) : !json_is_number(v))
			return bad(err, path, at,
				   f->kind == 'i' ? "expected an integer" : "expected a number");
		double d = json_number_value(v);
		if (!(d >= f->lo && d <= f->hi)) {
			char why[96];
			snprintf(why, sizeof(why), "expected a value from %.15g to %.15g", f->lo,
				 f->hi);
			return bad(err, path, at, why);
		}
		if (f->unit == 'p')
			*(double *)target = d / 100;
		else if (f->kind == 'f')
			*(double *)target = d;
		else if (f->unit == 'd')
			*(int64_t *)target = (int64_t)json_integer_value(v) * DAY_US;
		else if (f->unit == 's')
			*(int64_t *)target = (int64_t)json_integer_value(v) * 1000000;
		else
			put_uint(target, f->width, (uint64_t)json_integer_value(v));
	}
	return 0;
}

/* A string the section's loader reads itself ('a'): NULL when absent. */
static int get_string(const char **out, json_t *obj, const char *key, const char *path,
		      const char *prefix, pr_error *err)
{
	json_t *v = json_object_get(obj, key);
	char at[256];

	*out = NULL;
	if (!v)
		return 0;
	snprintf(at, sizeof(at), "%s.%s", prefix, key);
	if (!json_is_string(v) || json_string_length(v) == 0)
		return bad(err, path, at, "expected a non-empty string");
	*out = json_string_value(v);
	return 0;
}

/* http://NAME.localhost[:port]: RFC 6761 names that libcurl resolves to loopback. */
static bool localhost_name(const char *url)
{
	const char *h, *end;
	size_t n;

	if (strncmp(url, "http://", 7) != 0)
		return false;
	h = url + 7;
	end = h + strcspn(h, ":/?#@");
	if (h[strcspn(h, "/?#@")] == '@')
		return false;
	n = (size_t)(end - h);
	return n > 10 && strncasecmp(end - 10, ".localhost", 10) == 0;
}

/*
 * A password in a URL's user info ("http://bob:pw@host/") goes out as
 * Authorization: Basic, which plain http carries in cleartext: the rule
 * of secret_env and secret_file holds for it too, https or loopback only.
 * The message names the key, never the URL.
 */
static int check_url_password(const char *url, const char *path, const char *at, pr_error *err)
{
	const char *a, *end, *last = NULL;

	if (!url || secret_url_safe(url) || !(a = strstr(url, "://")))
		return 0;
	a += 3;
	end = a + strcspn(a, "/?#");
	/* As secret_url_safe reads the host: the last '@' ends the user info. */
	for (const char *p = a; p < end; p++)
		if (*p == '@')
			last = p;
	if (!last || !memchr(a, ':', (size_t)(last - a)))
		return 0;
	return bad(err, path, at,
		   "a password in the URL needs https:// (plain http only to 127.0.0.1, [::1] "
		   "or localhost); better, give it with secret_env or secret_file");
}

static char *dup_string(json_t *v)
{
	return strdup(json_string_value(v));
}

/* An array of target names, each checked later against paging.targets. */
static int load_names(char ***out, size_t *n, json_t *v, const char *path, const char *at,
		      pr_error *err)
{
	size_t i;
	json_t *t;

	if (!json_is_array(v))
		return bad(err, path, at, "expected an array of target names");
	if (json_array_size(v) && !(*out = calloc(json_array_size(v), sizeof(**out))))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	json_array_foreach(v, i, t) {
		if (!json_is_string(t) || json_string_length(t) == 0)
			return bad(err, path, at, "expected an array of target names");
		if (!((*out)[(*n)++] = strdup(json_string_value(t))))
			return pr_error_set(err, PR_ENOMEM, "out of memory");
	}
	return 0;
}

static void free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* ---- the tables --------------------------------------------------------- */

#define K_INT(k, l, h, T, m) \
	.key = k, .kind = 'i', .lo = l, .hi = h, .off = offsetof(T, m), \
	.width = sizeof(((T *)0)->m)
#define K_NUM(k, l, h, T, m) .key = k, .kind = 'f', .lo = l, .hi = h, .off = offsetof(T, m)
#define K_STR(k, T, m) .key = k, .kind = 's', .off = offsetof(T, m)
#define K_BOOL(k, T, m) .key = k, .kind = 'b', .off = offsetof(T, m)
#define K_SUB(k, kind_, s) .key = k, .kind = kind_, .sub = s
#define K_OBJ(k, T, m, s) .key = k, .kind = 'o', .off = offsetof(T, m), .sub = s
#define K_ANY(k, t) .key = k, .kind = 'a', .type = t

static const field severity_keys[] = {
	{K_NUM("q_max", 1e-6, 0.5, config, analysis.severity.q_max),
	 .def = "the run's fdr (analysis.fdr)",
	 .doc = "a significant finding above this q-value has severity none: it is stored "
		"and reported, and never pages nor fails a gate"},
	{K_NUM("critical_pp", 0, 100, config, analysis.severity.critical_pp),
	 .doc = "critical when the conservative rise (the interval's lower end) reaches "
		"this many percentage points"},
	{K_NUM("critical_rel", 0, 1e6, config, analysis.severity.critical_rel),
	 .doc = "or critical when the conservative relative rise reaches this (1.0 is "
		"+100%) and the rise reaches critical_rel_pp"},
	{K_NUM("critical_rel_pp", 0, 100, config, analysis.severity.critical_rel_pp),
	 .doc = "the percentage points critical_rel needs beside it"},
	{K_NUM("high_pp", 0, 100, config, analysis.severity.high_pp),
	 .doc = "high from this conservative rise in percentage points"},
	{K_NUM("medium_pp", 0, 100, config, analysis.severity.medium_pp),
	 .doc = "medium from this; a significant finding below it is low"},
	END,
};

static const field analysis_keys[] = {
	{K_INT("window_days", 1, 3650, config, analysis.window_us), .unit = 'd',
	 .doc = "the rolling baseline: captures this many days before the judged ones"},
	{K_INT("min_captures", 2, 100000, config, analysis.min_baseline),
	 .doc = "fewer eligible baseline captures than this: the service is "
		"insufficient, not judged"},
	{K_NUM("rel_margin", 0, 10, config, analysis.rel_margin),
	 .doc = "a change must exceed this fraction of the baseline share to count "
		"(0.05: 5%)"},
	{K_NUM("abs_margin_pp", 0, 100, config, analysis.abs_margin), .unit = 'p',
	 .doc = "and this many percentage points"},
	{K_NUM("min_share_pp", 0, 100, config, analysis.min_share), .unit = 'p',
	 .doc = "a function under this self share (percentage points) in every capture "
		"is not tested"},
	{K_NUM("fdr", 1e-6, 0.5, config, analysis.fdr),
	 .doc = "the false-discovery rate over one run's tests (Benjamini-Hochberg)"},
	{K_NUM("mw_alpha", 1e-9, 1, config, analysis.mw_alpha),
	 .doc = "a finding is confirmed by the Mann-Whitney test at a p-value at or "
		"below this"},
	{K_INT("max_looks", 1, 60, config, analysis.max_looks),
	 .doc = "the nightly looks planned at one release: the error budget is spent "
		"over them"},
	{K_NUM("spend_rho", 0.1, 10, config, analysis.spend_rho),
	 .doc = "the shape of alpha spending over the looks, f(t) = t^rho"},
	{K_INT("confirm_looks", 1, 60, config, analysis.confirm_looks),
	 .doc = "a candidate finding is confirmed (and may page) after this many "
		"significant looks"},
	{K_BOOL("confirm_critical", config, analysis.confirm_critical),
	 .doc = "a critical finding of 2 or more current captures is confirmed at once (one "
		"of a single capture waits for its next look)"},
	{K_BOOL("cost_tests", config, analysis.cost_tests),
	 .doc = "also test whole-service cost (CPU seconds per second, heap bytes, cost "
		"per unit of load) where captures allow"},
	{K_BOOL("margin_in_test", config, analysis.margin_in_test),
	 .doc = "test the rise against the margins (stricter, fewer findings) instead of "
		"against no change with the estimate beyond the margins"},
	{K_BOOL("weekly", config, analysis.weekly),
	 .doc = "where a function's weekend and weekday baseline captures differ, a "
		"change must also hold against the captures of its own part of the week"},
	{K_NUM("utc_offset_hours", -12, 14, config, analysis.week.utc_offset_h),
	 .doc = "the services' clock in hours east of UTC, for where a weekend starts "
		"(-5 for New York in winter, 5.5 for India)"},
	{K_ANY("weekend", "string: days in a row, as sat-sun"), .def = "\"sat-sun\"",
	 .doc = "the services' weekend: one to three days in a row by their first three "
		"letters (fri-sat, sun)"},
	{K_INT("warmup_s", 0, 86400, config, analysis.warmup_us), .unit = 's',
	 .doc = "a capture taken less than this many seconds before or after a deploy of "
		"its release is not judged: its process was warming up (0: every capture is)"},
	{K_NUM("gate_max_unseen_pct", 0, 100000, config, analysis.gate_max_unseen), .unit = 'p',
	 .doc = "a gate that passes is inconclusive when one function could have made the "
		"service this many percent costlier, beyond what the gate's margins leave out, "
		"without the gate seeing it four times in five (captures too few or too small; "
		"0: never)"},
	{K_SUB("severity", 'o', severity_keys), .doc = "the severity thresholds"},
	END,
};

static const field limits_keys[] = {
	{K_INT("max_input_bytes", 1, 1e15, config, limits.max_input_bytes),
	 .doc = "an input file larger than this is refused before it is read"},
	{K_INT("max_decompressed_bytes", 1, 1e15, config, limits.max_decompressed_bytes),
	 .doc = "a compressed input that inflates beyond this is refused"},
	{K_INT("max_samples", 1, 4294967295.0, config, limits.max_samples),
	 .doc = "stacks or samples in one profile at most"},
	{K_INT("max_depth", 1, 1 << 20, config, limits.max_depth),
	 .doc = "frames in one stack at most"},
	{K_INT("max_string_length", 16, 1 << 24, config, limits.max_string_len),
	 .doc = "bytes in one function or file name at most"},
	{K_INT("max_functions", 1, 4294967295.0, config, limits.max_functions),
	 .doc = "distinct functions in one profile at most; a pprof profile costs about 700 "
		"bytes of the parse's memory budget (half of `max_decompressed_bytes`) a "
		"function, so by default one of about 380,000 functions or more is refused "
		"for memory first: `805306368` admits 500,000 (docs/ingest.md, Memory)"},
	END,
};

static const field retention_keys[] = {
	{K_INT("forensic_days", 0, 36500, config, analysis.forensic_keep_us), .unit = 'd',
	 .doc = "how long a finding's evidence is kept; 0: for ever"},
	{K_INT("hot_days", 0, 36500, config, retention.tiers.hot_us), .unit = 'd',
	 .doc = "a capture's blob and every per-function row are kept this long"},
	{K_INT("summary_days", 0, 36500, config, retention.tiers.summary_us), .unit = 'd',
	 .doc = "then only its top rows, up to this age; older captures are deleted"},
	{K_INT("summary_top", 0, 1000000, config, retention.tiers.summary_top),
	 .doc = "per-function rows a summary capture keeps (0: all)"},
	{K_INT("budget_bytes", 0, 1e18, config, retention.budget_bytes),
	 .doc = "blob bytes allowed in all; the oldest unpinned go first (0: no budget)"},
	{K_INT("budget_rows", 0, 1e18, config, retention.budget_rows),
	 .doc = "per-function rows allowed in all (0: no budget)"},
	{K_INT("batch", 1, 100000, config, retention.batch),
	 .doc = "captures moved per transaction"},
	{K_BOOL("after_nightly", config, retention.after_nightly),
	 .doc = "the nightly runs retention at its end"},
	END,
};

static const field metrics_keys[] = {
	{K_STR("pushgateway", config, metrics.pushgateway),
	 .doc = "the Prometheus Pushgateway's base URL the jobs push their metrics to"},
	{K_STR("instance", config, metrics.instance), .def = "the host name",
	 .doc = "the grouping label of the pushed metrics"},
	END,
};

static const field reports_keys[] = {
	{K_STR("dir", config, reports.dir), .def = "`<home>/reports`",
	 .doc = "where reports are written"},
	{K_STR("base_url", config, reports.base_url),
	 .doc = "the URL the reports folder is published under: pages and summaries "
		"link there"},
	{K_STR("compare_url", config, reports.compare_url),
	 .doc = "the address of `profreg serve`'s comparison page (http or https, e.g. "
		"`https://profreg.internal:8070/compare`): each finding of an HTML report "
		"links to its captures there"},
	{K_INT("keep_days", 0, 36500, config, reports.keep_days),
	 .doc = "retention deletes a run's report files (`run-N-*`) once the run is this "
		"many days old, unless a finding the run listed is still open (its page "
		"links there); 0 keeps them for good"},
	END,
};

static const field collect_keys[] = {
	{K_INT("max_concurrent", 1, 64, config, collect.max_concurrent),
	 .doc = "profile requests in flight per service"},
	{K_INT("max_concurrent_fleet", 1, 256, config, collect.max_concurrent_fleet),
	 .doc = "profile requests in flight in all"},
	{K_INT("cooldown_s", 0, 86400, config, collect.cooldown_us), .unit = 's',
	 .doc = "seconds between two CPU profiles of one host"},
	{K_INT("budget_s", 1, 86400, config, collect.budget_us), .unit = 's',
	 .doc = "the whole collection's time, retries included"},
	{K_INT("retries", 0, 20, config, collect.retries),
	 .doc = "more tries of a busy or unavailable target"},
	{K_INT("retry_s", 1, 3600, config, collect.retry_us), .unit = 's',
	 .doc = "the wait before the first retry, doubled each time"},
	END,
};

static const field workers_keys[] = {
	{K_BOOL("enabled", config, workers.enabled),
	 .doc = "the nightly queues per-service tasks for workers (also: nightly --workers)"},
	{K_INT("lease_s", 1, 86400, config, workers.lease_s),
	 .doc = "a task's lease, renewed every third of it; a dead worker's task is "
		"claimed again after it"},
	{K_INT("max_attempts", 1, 100, config, workers.max_attempts),
	 .doc = "claims of one task before it fails"},
	{K_INT("poll_ms", 10, 60000, config, workers.poll_ms),
	 .doc = "how often an idle worker or the waiting nightly looks for work"},
	{K_INT("task_timeout_s", 1, 7 * 86400, config, workers.task_timeout_s),
	 .doc = "a task's lease is renewed no longer than this"},
	{K_BOOL("coordinator_works", config, workers.coordinator_works),
	 .doc = "the nightly works tasks itself while it waits"},
	{K_INT("reconnect_s", 0, 86400, config, workers.reconnect_s),
	 .doc = "a worker the database dropped (a restart, a failover) connects again for "
		"this long before it exits (0: it exits at once)"},
	END,
};

static const field tiers_keys[] = {
	{K_INT("hot_days", 0, 36500, config_service, tiers.hot_us), .unit = 'd',
	 .def = "retention.hot_days", .doc = "the service's own hot_days"},
	{K_INT("summary_days", 0, 36500, config_service, tiers.summary_us), .unit = 'd',
	 .def = "retention.summary_days", .doc = "the service's own summary_days"},
	{K_INT("summary_top", 0, 1000000, config_service, tiers.summary_top),
	 .def = "retention.summary_top", .doc = "the service's own summary_top"},
	END,
};

static const field source_keys[] = {
	{K_ANY("type", "string: dir, pprof_http, pyroscope, parca or s3_prefix"),
	 .doc = "where the profiles come from (required)"},
	{K_STR("dir", config_source, dir),
	 .doc = "dir: the folder collectors drop captures and sidecars into"},
	{K_ANY("targets", "array of \"host:port\""),
	 .doc = "pprof_http: Go programs serving net/http/pprof"},
	{K_ANY("file_sd", "array of file paths"),
	 .doc = "pprof_http: Prometheus file_sd files naming the targets and their labels"},
	{K_STR("scheme", config_source, scheme), .def = "\"http\"",
	 .doc = "pprof_http: http or https"},
	{K_INT("seconds", 1, 3600, config_source, seconds),
	 .doc = "pprof_http: the CPU profile's length"},
	{K_STR("release_label", config_source, release_label), .def = "\"release\"",
	 .doc = "pprof_http: the target label naming the release"},
	{K_STR("commit_label", config_source, commit_label), .def = "\"commit\"",
	 .doc = "pprof_http: the target label naming the commit"},
	{K_STR("host_label", config_source, host_label), .def = "\"host\"",
	 .doc = "pprof_http: the target label naming the host"},
	{K_STR("url", config_source, url), .doc = "pyroscope, parca: the server's base URL"},
	{K_STR("tenant", config_source, tenant),
	 .doc = "pyroscope: the tenant (X-Scope-OrgID)"},
	{K_STR("selector", config_source, selector),
	 .def = "pyroscope: `{service_name=\"NAME\"}`; parca: required",
	 .doc = "pyroscope, parca: the label selector of the service's profiles"},
	{K_STR("version_label", config_source, version_label), .def = "\"service_git_ref\"",
	 .doc = "pyroscope: the label naming the release; one capture per value"},
	{K_ANY("types", "array of cpu, heap, alloc, wall, goroutine"),
	 .def = "the service's types", .doc = "what to pull"},
	{K_ANY("profile_types", "object: type to profile type id"),
	 .def = "the SDKs' and agents' usual ids",
	 .doc = "pyroscope, parca: the profile type id pulled for each type"},
	{K_INT("slot_s", 60, 86400, config_source, slot_us), .unit = 's',
	 .doc = "one capture per slot of this many seconds: per host for pprof_http (a second "
		"collect in the same slot takes nothing), per release for pyroscope and parca"},
	{K_STR("ca_file", config_source, ca_file), .def = "the system's",
	 .doc = "the certificate authorities that verify the server (a regular file: "
		"anything else fails each request before it is made)"},
	{K_ANY("auth", "string: bearer or basic"), .def = "bearer when a secret is set",
	 .doc = "how the secret is sent"},
	{K_STR("username", config_source, username), .doc = "basic auth's user name"},
	{K_STR("secret_env", config_source, secret_env),
	 .doc = "the variable holding the token or password (never logged)"},
	{K_STR("secret_file", config_source, secret_file),
	 .doc = "or a file holding it, mode 0600 or stricter"},
	{K_INT("connect_timeout_ms", 1, 600000, config_source, connect_timeout_ms),
	 .doc = "the connection's time limit"},
	{K_INT("timeout_ms", 1, 3600000, config_source, timeout_ms),
	 .doc = "the request's time limit (a CPU profile adds its seconds)"},
	{K_STR("endpoint", config_source, s3.endpoint),
	 .doc = "s3_prefix: the object store's URL"},
	{K_STR("bucket", config_source, s3.bucket), .doc = "s3_prefix: the bucket"},
	{K_STR("prefix", config_source, s3.prefix),
	 .doc = "s3_prefix: the key prefix the drops are under"},
	{K_STR("region", config_source, s3.region), .doc = "s3_prefix: the signing region"},
	{K_ANY("addressing", "string: path or virtual"), .def = "\"path\"",
	 .doc = "s3_prefix: path-style or virtual-host addressing"},
	{K_STR("access_key_id_env", config_source, s3.access_key_id_env),
	 .doc = "s3_prefix: the variable holding the access key id"},
	{K_STR("access_key_id_file", config_source, s3.access_key_id_file),
	 .doc = "s3_prefix: or a 0600 file holding it"},
	{K_STR("secret_access_key_env", config_source, s3.secret_access_key_env),
	 .doc = "s3_prefix: the variable holding the secret access key"},
	{K_STR("secret_access_key_file", config_source, s3.secret_access_key_file),
	 .doc = "s3_prefix: or a 0600 file holding it"},
	{K_STR("session_token_env", config_source, s3.session_token_env),
	 .doc = "s3_prefix: the variable holding a session token (optional)"},
	{K_STR("session_token_file", config_source, s3.session_token_file),
	 .doc = "s3_prefix: or a 0600 file holding it"},
	END,
};

static const field service_keys[] = {
	{K_STR("team", config_service, team),
	 .doc = "the owning team: access, paging routes and per-team reports follow it"},
	{K_ANY("types", "array of cpu, heap, alloc, wall, goroutine"), .def = "[\"cpu\"]",
	 .doc = "the profile types analysed"},
	{K_SUB("sources", 'l', source_keys), .doc = "where its profiles are pulled from"},
	{K_ANY("source", "object: {\"dir\": PATH}"),
	 .doc = "the older form of a single dir source"},
	{K_STR("repo", config_service, repo),
	 .doc = "its git repository: commits and suspects are resolved there"},
	{K_ANY("page", "array of target names"), .def = "the team's route, else paging.default",
	 .doc = "who is paged for it (an empty list: no one)"},
	{K_SUB("retention", 'o', tiers_keys), .doc = "its own retention tiers"},
	{K_INT("max_concurrent", 1, 64, config_service, max_concurrent),
	 .def = "collect.max_concurrent", .doc = "its profile requests in flight"},
	{K_ANY("utc_offset_hours", "number, -12 to 14"), .def = "analysis.utc_offset_hours",
	 .doc = "its clock, for where its weekend starts"},
	{K_ANY("weekend", "string: days in a row, as sat-sun"), .def = "analysis.weekend",
	 .doc = "its weekend (fri-sat for a Friday-Saturday week)"},
	{K_INT("warmup_s", 0, 86400, config_service, warmup_us), .unit = 's',
	 .def = "analysis.warmup_s", .doc = "its warm-up after a deploy (a JIT's minutes)"},
	END,
};

static const field target_keys[] = {
	{K_ANY("type", "string: pagerduty, alertmanager or webhook"),
	 .doc = "what the target is (required)"},
	{K_STR("url", config_target, url), .def = "PagerDuty's; else required",
	 .doc = "the base URL (Alertmanager, PagerDuty) or the webhook's URL"},
	{K_STR("secret_env", config_target, secret_env),
	 .doc = "the variable holding the routing key or token (https only, never logged)"},
	{K_STR("secret_file", config_target, secret_file),
	 .doc = "or a 0600 file holding it"},
	END,
};

static const field paging_keys[] = {
	{K_ANY("min_severity", "string: low, medium, high or critical"), .def = "\"high\"",
	 .doc = "findings below it never page"},
	{K_INT("max_attempts", 1, 100, config, paging.max_attempts),
	 .doc = "sends of one page per run before it waits for the next"},
	{K_INT("connect_timeout_ms", 1, 600000, config, paging.connect_timeout_ms),
	 .doc = "the connection's time limit"},
	{K_INT("timeout_ms", 1, 600000, config, paging.timeout_ms),
	 .doc = "the request's time limit"},
	{K_INT("backoff_ms", 0, 600000, config, paging.backoff_ms),
	 .doc = "the first retry's delay, doubled each time"},
	{K_INT("max_backoff_ms", 0, 3600000, config, paging.max_backoff_ms),
	 .doc = "the longest delay between retries"},
	{K_INT("alert_hours", 1, 8760, config, paging.alert_hours),
	 .doc = "an Alertmanager alert ends this long after each send; every flush "
		"re-sends the open ones"},
	{K_SUB("targets", 'm', target_keys), .doc = "where pages go, by name"},
	{K_ANY("default", "array of target names"), .def = "[] (no one)",
	 .doc = "the route of a service whose team has none"},
	{K_ANY("teams", "object: team to array of target names"),
	 .doc = "each team's route"},
	END,
};

static const field snapshot_service_keys[] = {
	{K_ANY("processes", "array of process names (1 to 15 bytes)"),
	 .doc = "its processes by the kernel's comm"},
	{K_ANY("cgroup", "string: a cgroup v2 path"),
	 .doc = "or by their cgroup (that one or one below it)"},
	{K_BOOL("full_cmdline", config_snapshot_service, full_cmdline),
	 .doc = "store its processes' full command lines (they can carry secrets): "
		"otherwise only the executable name and the argument count"},
	END,
};

static const field snapshot_keys[] = {
	{K_INT("time_budget_ms", 100, 600000, config, snapshot.time_budget_ms),
	 .doc = "the whole snapshot, archive included"},
	{K_INT("size_budget_bytes", 65536, 256 << 20, config, snapshot.size_budget_bytes),
	 .doc = "the archive at most"},
	{K_INT("sample_ms", 10, 60000, config, snapshot.sample_ms),
	 .doc = "the interval CPU use and the counters' deltas are measured over"},
	{K_INT("top_threads", 1, 10000, config, snapshot.top_threads),
	 .doc = "threads listed by CPU"},
	{K_INT("top_processes", 1, 1000, config, snapshot.top_processes),
	 .doc = "processes whose memory and status are kept"},
	{K_INT("file_max_bytes", 4096, 256 << 20, config, snapshot.file_max_bytes),
	 .doc = "any one file read at most"},
	{K_INT("kmsg_bytes", 0, 256 << 20, config, snapshot.kmsg_bytes),
	 .doc = "the kernel log's tail kept"},
	{K_INT("max_tasks", 1, 10000000, config, snapshot.max_tasks),
	 .doc = "threads looked at, at most"},
	{K_INT("nice", 0, 19, config, snapshot.nice),
	 .doc = "the CPU priority it runs at (I/O idle class beside it)"},
	{K_INT("cooldown_s", 0, 86400 * 7, config, snapshot.cooldown_s),
	 .doc = "seconds between two triggered snapshots of one host"},
	{K_SUB("services", 'm', snapshot_service_keys),
	 .doc = "which processes are which service's"},
	END,
};

static const field serve_keys[] = {
	{K_STR("listen", config, serve.listen), .doc = "the address and port it listens on"},
	{K_INT("max_body_bytes", 256, 16 << 20, config, serve.max_body_bytes),
	 .doc = "a request body at most"},
	{K_INT("max_connections", 4, 4096, config, serve.max_connections),
	 .doc = "open connections in all"},
	{K_INT("max_connections_per_ip", 0, 4096, config, serve.max_connections_per_ip),
	 .doc = "open connections from one address (0: no limit, as behind a proxy, "
		"whose connections all come from one address)"},
	{K_INT("token_rate", 1, 1000000, config, serve.token_rate),
	 .doc = "requests per token per minute"},
	{K_INT("global_rate", 1, 1000000, config, serve.global_rate),
	 .doc = "requests per second with a valid token, all tokens, every server"},
	{K_INT("host_cooldown_s", 0, 86400, config, serve.host_cooldown_s),
	 .doc = "seconds between two triggered captures of one host"},
	{K_INT("default_seconds", 1, 600, config, serve.default_seconds),
	 .doc = "the CPU profile's length when a request does not say"},
	{K_INT("max_seconds", 1, 600, config, serve.max_seconds),
	 .doc = "the longest a request may ask"},
	{K_INT("max_hosts", 1, 64, config, serve.max_hosts), .doc = "hosts in one request"},
	{K_INT("session_max_s", 1, 86400, config, serve.session_max_s),
	 .doc = "the hard expiry of every elevated session, whatever the signal does"},
	{K_INT("reescalate_s", 0, 7 * 86400, config, serve.reescalate_s),
	 .doc = "a host is elevated at most once per this many seconds"},
	{K_INT("max_sessions_service", 0, 100000, config, serve.max_sessions_service),
	 .doc = "open elevated sessions per service"},
	{K_INT("max_sessions_fleet", 0, 100000, config, serve.max_sessions_fleet),
	 .doc = "open elevated sessions in all"},
	{K_INT("lease_s", 10, 86400, config, serve.lease_s),
	 .doc = "a running request is taken over after its capture time and this"},
	{K_STR("alert_service_label", config, serve.alert_service_label),
	 .doc = "the alert label naming the service"},
	{K_ANY("alert_host_labels", "array of label names"), .def = "[\"instance\", \"pod\"]",
	 .doc = "the alert labels naming the host, the first found"},
	{K_ANY("agents", "array of {\"hosts\": GLOB, \"url\": URL}"), .def = "[] (none)",
	 .doc = "the snapshot agents (`serve --agent`) a firing alert asks, by host glob; "
		"`{host}` in the URL is the host"},
	{K_STR("agent_secret_env", config, serve.agent_secret_env),
	 .doc = "the variable holding the secret shared with the agents (never logged)"},
	{K_STR("agent_secret_file", config, serve.agent_secret_file),
	 .doc = "or a 0600 file holding it"},
	END,
};

static const field blobs_keys[] = {
	{K_ANY("store", "string: local or s3"), .def = "\"local\"",
	 .doc = "where blobs live: `<home>/blobs` or an S3-compatible bucket"},
	{K_STR("endpoint", config, blobs.s3.endpoint),
	 .doc = "s3: the store's URL (https, or plain http to loopback)"},
	{K_STR("bucket", config, blobs.s3.bucket), .doc = "s3: the bucket"},
	{K_STR("prefix", config, blobs.s3.prefix), .doc = "s3: a key prefix"},
	{K_STR("region", config, blobs.s3.region), .doc = "s3: the signing region"},
	{K_ANY("addressing", "string: path or virtual"), .def = "\"path\"",
	 .doc = "s3: path-style or virtual-host addressing"},
	{K_STR("access_key_id_env", config, blobs.s3.access_key_id_env),
	 .def = "`AWS_ACCESS_KEY_ID`", .doc = "s3: the variable holding the access key id"},
	{K_STR("access_key_id_file", config, blobs.s3.access_key_id_file),
	 .doc = "s3: or a 0600 file holding it"},
	{K_STR("secret_access_key_env", config, blobs.s3.secret_access_key_env),
	 .def = "`AWS_SECRET_ACCESS_KEY`",
	 .doc = "s3: the variable holding the secret access key"},
	{K_STR("secret_access_key_file", config, blobs.s3.secret_access_key_file),
	 .doc = "s3: or a 0600 file holding it"},
	{K_STR("session_token_env", config, blobs.s3.session_token_env),
	 .doc = "s3: the variable holding a session token (optional)"},
	{K_STR("session_token_file", config, blobs.s3.session_token_file),
	 .doc = "s3: or a 0600 file holding it"},
	{K_STR("ca_file", config, blobs.ca_file), .def = "the system's",
	 .doc = "s3: the certificate authorities that verify the store (a regular file, as "
		"for sources)"},
	{K_INT("connect_timeout_ms", 1, 600000, config, blobs.connect_timeout_ms),
	 .doc = "s3: the connection's time limit"},
	{K_INT("timeout_ms", 1, 3600000, config, blobs.timeout_ms),
	 .doc = "s3: a request's time limit"},
	END,
};

/* The keys of a level's capture plan, and of a load or memory ceiling. */
#define PLAN_KEYS \
	{K_INT("seconds", 1, 600, config_escalate_plan, seconds), \
	 .doc = "the CPU profile's length at this level"}, \
	{K_INT("every_s", 0, 86400, config_escalate_plan, every_s), \
	 .doc = "a capture of the host at most this often (0: back to back)"}, \
	{K_BOOL("heap", config_escalate_plan, heap), \
	 .doc = "a heap profile with each CPU profile"}

static const field plan1_keys[] = {PLAN_KEYS, END};

static const field plan2_keys[] = {
	PLAN_KEYS,
	{K_INT("window_s", 1, 86400, config_escalate_plan, window_s),
	 .doc = "how long level 2 lasts before the host goes back to level 1"},
	END,
};

static const field ceiling_keys[] = {
	{K_STR("query", config_escalate_ceiling, query),
	 .doc = "PromQL giving one value per host"},
	{K_NUM("max", 0, 1e15, config_escalate_ceiling, max),
	 .doc = "a host above it is skipped and audited, never profiled"},
	END,
};

static const field escalate_service_keys[] = {
	{K_ANY("signals", "object: signal name ([a-z0-9_], 1 to 64) to PromQL"),
	 .doc = "1 to 16 signals (p99 latency, error rate, GC pause, queue depth), each "
		"one value per host (required)"},
	{K_STR("host_label", config_escalate_service, host_label),
	 .def = "escalate.host_label", .doc = "the label naming the host"},
	{K_OBJ("load", config_escalate_service, load, ceiling_keys),
	 .doc = "its load ceiling (the query falls back to escalate.load's)"},
	{K_OBJ("memory", config_escalate_service, memory, ceiling_keys),
	 .doc = "its memory ceiling (the query falls back to escalate.memory's)"},
	{K_OBJ("level1", config_escalate_service, level1, plan1_keys),
	 .doc = "its level 1 plan, key by key over the section's"},
	{K_OBJ("level2", config_escalate_service, level2, plan2_keys),
	 .doc = "its level 2 plan, key by key over the section's"},
	END,
};

static const field escalate_keys[] = {
	{K_STR("prometheus", config, escalate.prometheus),
	 .doc = "the base URL of Prometheus's HTTP API; unset: escalate is off"},
	{K_STR("host_label", config, escalate.host_label), .def = "`\"instance\"`",
	 .doc = "the label naming the host in every answer"},
	{K_INT("timeout_ms", 100, 600000, config, escalate.timeout_ms),
	 .doc = "one query's time limit"},
	{K_INT("budget_s", 1, 3600, config, escalate.budget_s),
	 .doc = "a run's time for all its queries: each is cut to what is left, and a "
		"service not read by then fails"},
	{K_INT("max_response_bytes", 1024, 256 << 20, config, escalate.max_response_bytes),
	 .doc = "one answer at most"},
	{K_INT("max_series", 1, 1000000, config, escalate.max_series),
	 .doc = "series in one answer at most"},
	{K_INT("window_s", 60, 30 * 86400, config, escalate.window_s),
	 .doc = "the band's history: a host's samples this recent"},
	{K_INT("min_samples", 3, 100000, config, escalate.min_samples),
	 .doc = "samples a host needs before it is judged"},
	{K_NUM("band_mads", 0.5, 100, config, escalate.band_mads),
	 .doc = "the band: the median plus this many scaled MADs"},
	{K_NUM("large_mads", 0.5, 1000, config, escalate.large_mads),
	 .doc = "a crossing this many scales large goes straight to level 2"},
	{K_NUM("rel_floor", 0, 10, config, escalate.rel_floor),
	 .doc = "the scale is at least this share of the median"},
	{K_NUM("abs_floor", 0, 1e15, config, escalate.abs_floor), .doc = "and at least this"},
	{K_INT("persist_runs", 1, 10000, config, escalate.persist_runs),
	 .doc = "runs outside the band before level 1 becomes level 2"},
	{K_INT("cooldown_s", 0, 86400, config, escalate.cooldown_s),
	 .doc = "back inside the band this long before the host is de-escalated"},
	{K_INT("keep_days", 1, 3650, config, escalate.keep_days),
	 .doc = "signal samples are kept this long"},
	{K_OBJ("load", config, escalate.load, ceiling_keys), .doc = "the load ceiling"},
	{K_OBJ("memory", config, escalate.memory, ceiling_keys), .doc = "the memory ceiling"},
	{K_OBJ("level1", config, escalate.level1, plan1_keys),
	 .doc = "level 1: a signal crossed its band"},
	{K_OBJ("level2", config, escalate.level2, plan2_keys),
	 .doc = "level 2: the crossing persists or is large"},
	{K_SUB("services", 'm', escalate_service_keys), .doc = "the services escalated, by name"},
	END,
};

/* Every section, in the order the reference prints them. */
static const field top_keys[] = {
	{K_SUB("services", 'm', service_keys), .doc = "the services, by name"},
	{K_SUB("analysis", 'o', analysis_keys),
	 .doc = "baseline window, margins, false-discovery rate, looks, severity"},
	{K_SUB("limits", 'o', limits_keys), .doc = "the input limits of every parser"},
	{K_SUB("retention", 'o', retention_keys),
	 .doc = "tiers, budgets, how long evidence is kept"},
	{K_SUB("collect", 'o', collect_keys),
	 .doc = "collection from sources: concurrency, cooldown, budget, retries"},
	{K_SUB("paging", 'o', paging_keys), .doc = "who is paged and how pages are sent"},
	{K_SUB("metrics", 'o', metrics_keys), .doc = "the jobs' metrics"},
	{K_SUB("reports", 'o', reports_keys), .doc = "where reports go"},
	{K_SUB("blobs", 'o', blobs_keys), .doc = "where blobs live"},
	{K_SUB("workers", 'o', workers_keys), .doc = "a nightly spread over worker processes"},
	{K_SUB("serve", 'o', serve_keys), .doc = "the capture API and its safeguards"},
	{K_SUB("snapshot", 'o', snapshot_keys), .doc = "incident snapshots"},
	{K_SUB("escalate", 'o', escalate_keys),
	 .doc = "escalation levels: Prometheus signals, each host's band, the level plans, "
		"the ceilings"},
	END,
};

/* ---- sources ------------------------------------------------------------ */

static const char *const source_kinds[] = {"dir",   "pprof_http", "pyroscope",
					   "parca", "s3_prefix",  NULL};

/* pprof_http's name for a profreg type; NULL when it has none (wall). */
static const char *pprof_http_name(const char *type)
{
	static const char *const map[][2] = {{"cpu", "profile"}, {"heap", "heap"},
					     {"alloc", "allocs"}, {"goroutine", "goroutine"}};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(map[i][0], type) == 0)
			return map[i][1];
	return NULL;
}

/* The profile type ids Pyroscope's Go SDK and Parca's scrapers use by default. */
static const char *default_profile_id(config_source_kind kind, const char *type)
{
	static const char *const pyro[][2] = {
		{"cpu", "process_cpu:cpu:nanoseconds:cpu:nanoseconds"},
		{"heap", "memory:inuse_space:bytes:space:bytes"},
		{"alloc", "memory:alloc_space:bytes:space:bytes"},
		{"goroutine", "goroutine:goroutine:count:goroutine:count"}};
	static const char *const parca[][2] = {
		{"cpu", "parca_agent:samples:count:cpu:nanoseconds:delta"},
		{"heap", "memory:inuse_space:bytes:space:bytes"},
		{"alloc", "memory:alloc_space:bytes:space:bytes:delta"},
		{"goroutine", "goroutine:goroutine:count:goroutine:count"}};
	const char *const (*map)[2] = kind == CONFIG_SRC_PARCA ? parca : pyro;

	if (kind == CONFIG_SRC_PPROF_HTTP)
		return pprof_http_name(type);
	for (size_t i = 0; i < 4; i++)
		if (strcmp(map[i][0], type) == 0)
			return map[i][1];
	return NULL;
}

/* Text a source sends in a header or a query: printable ASCII, at most 1024 bytes. */
static int plain_text(const char *s)
{
	if (!*s || strlen(s) > 1024)
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			return 0;
	return 1;
}

static int load_strings(char ***out, size_t *n, json_t *v, const char *path, const char *at,
			const char *what, pr_error *err)
{
	size_t i;
	json_t *t;

	if (!json_is_array(v))
		return bad(err, path, at, what);
	if (json_array_size(v) && !(*out = calloc(json_array_size(v), sizeof(**out))))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	json_array_foreach(v, i, t) {
		if (!json_is_string(t) || json_string_length(t) == 0)
			return bad(err, path, at, what);
		if (!((*out)[(*n)++] = strdup(json_string_value(t))))
			return pr_error_set(err, PR_ENOMEM, "out of memory");
	}
	return 0;
}

/* "types" and "profile_types" of a source into its profile list. */
static int load_profiles(config_source *src, const config_service *s, json_t *types,
			 json_t *ids, const char *path, pr_error *err)
{
	char at[300];
	size_t n = types ? json_array_size(types) : s->ntypes, i;

	if (types && (!json_is_array(types) || n == 0)) {
		snprintf(at, sizeof(at), "%s.types", src->label);
		return bad(err, path, at, "expected a non-empty array of profile types");
	}
	if (ids && !json_is_object(ids)) {
		snprintf(at, sizeof(at), "%s.profile_types", src->label);
		return bad(err, path, at, "expected an object of profile type ids by type");
	}
	if (!(src->profiles = calloc(n, sizeof(*src->profiles))))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		json_t *t = types ? json_array_get(types, i) : NULL, *id;
		const char *type = types ? json_string_value(t) : s->types[i];
		const char *def;
		config_profile *p = &src->profiles[src->nprofiles];
		snprintf(at, sizeof(at), "%s.types", src->label);
		if (!type || !ingest_type_valid(type))
			return bad(err, path, at, "expected cpu, heap, alloc, wall or goroutine");
		id = ids ? json_object_get(ids, type) : NULL;
		def = default_profile_id(src->kind, type);
		if (id && (src->kind == CONFIG_SRC_PPROF_HTTP || !json_is_string(id) ||
			   !plain_text(json_string_value(id)))) {
			snprintf(at, sizeof(at), "%s.profile_types.%s", src->label, type);
			return bad(err, path, at, src->kind == CONFIG_SRC_PPROF_HTTP
					   ? "pprof_http profiles are named by type; no ids"
					   : "expected a profile type id of printable text");
		}
		if (!id && !def) {
			snprintf(at, sizeof(at), "%s.types", src->label);
			return bad(err, path, at, src->kind == CONFIG_SRC_PPROF_HTTP
					   ? "a Go pprof endpoint has no such profile (cpu, heap, "
					     "alloc, goroutine)"
					   : "no default profile type id for it: set "
					     "profile_types");
		}
		for (size_t k = 0; k < src->nprofiles; k++)
			if (strcmp(src->profiles[k].type, type) == 0)
				return bad(err, path, at, "a type is listed twice");
		if (!(p->type = strdup(type)) ||
		    !(p->id = strdup(id ? json_string_value(id) : def)))
			return pr_error_set(err, PR_ENOMEM, "out of memory");
		src->nprofiles++;
	}
	if (ids) {
		const char *key;
		json_t *v;
		json_object_foreach(ids, key, v) {
			bool used = false;
			for (size_t k = 0; k < src->nprofiles && !used; k++)
				used = strcmp(src->profiles[k].type, key) == 0;
			if (!used) {
				snprintf(at, sizeof(at), "%s.profile_types.%.32s", src->label, key);
				return bad(err, path, at, "not one of the source's types");
			}
		}
	}
	return 0;
}

/* What an s3_prefix source needs: the checks of the "blobs" S3 settings. */
static int check_s3_prefix(config_source *src, const char *addressing, const char *path,
			   pr_error *err)
{
	const char *const pairs[][2] = {
		{src->s3.access_key_id_env, src->s3.access_key_id_file},
		{src->s3.secret_access_key_env, src->s3.secret_access_key_file},
		{src->s3.session_token_env, src->s3.session_token_file},
	};
	static const char *const names[] = {"access key id", "secret access key",
					    "session token"};
	blob_s3_opts o = {.endpoint = src->s3.endpoint, .bucket = src->s3.bucket,
			  .prefix = src->s3.prefix, .region = src->s3.region, .access_key_id = "-",
			  .secret_access_key = "-"};
	pr_error e2 = PR_ERROR_INIT;
	char at[340];
	const char *missing = !src->s3.endpoint ? "endpoint"
			      : !src->s3.bucket ? "bucket"
			      : !src->s3.region ? "region" : NULL;

	if (missing) {
		snprintf(at, sizeof(at), "%s.%s", src->label, missing);
		return bad(err, path, at, "required for an s3_prefix source");
	}
	if (addressing && strcmp(addressing, "path") != 0 && strcmp(addressing, "virtual") != 0) {
		snprintf(at, sizeof(at), "%s.addressing", src->label);
		return bad(err, path, at, "expected \"path\" or \"virtual\"");
	}
	src->s3.virtual_host = addressing && strcmp(addressing, "virtual") == 0;
	for (size_t i = 0; i < 3; i++)
		if (pairs[i][0] && pairs[i][1]) {
			char why[128];
			snprintf(why, sizeof(why), "the %s from a variable or a file, not both",
				 names[i]);
			return bad(err, path, src->label, why);
		}
	if (blob_s3_check(&o, &e2) < 0)
		return bad(err, path, src->label, e2.msg);
	/* Profiles come back over it, and may hold payment data. */
	if (!secret_url_safe(src->s3.endpoint) && !localhost_name(src->s3.endpoint)) {
		snprintf(at, sizeof(at), "%s.endpoint", src->label);
		return bad(err, path, at,
			   "expected an https:// URL (plain http only to 127.0.0.1, [::1], "
			   "localhost or a name under .localhost)");
	}
	return 0;
}

/* What a source is before its keys are read. */
static void source_defaults(config_source *src)
{
	src->seconds = 10;
	src->connect_timeout_ms = 5000;
	src->timeout_ms = 30000;
	src->slot_us = 3600 * 1000000LL;
}

static int load_source(config_source *src, const config_service *s, json_t *obj, size_t idx,
		       const char *path, pr_error *err)
{
	static const char *const common[] = {"type", "types", "ca_file", "auth", "username",
					     "secret_env", "secret_file", "connect_timeout_ms",
					     "timeout_ms", NULL};
	static const char *const extra[][13] = {
		{"dir", NULL},
		{"targets", "file_sd", "scheme", "seconds", "release_label", "commit_label",
		 "host_label", "slot_s", NULL},
		{"url", "tenant", "selector", "profile_types", "version_label", "slot_s", NULL},
		{"url", "selector", "profile_types", "slot_s", NULL},
		{"endpoint", "bucket", "prefix", "region", "addressing", "access_key_id_env",
		 "access_key_id_file", "secret_access_key_env", "secret_access_key_file",
		 "session_token_env", "session_token_file", NULL},
	};
	/* The common keys an s3_prefix source takes: its credentials are its own. */
	static const char *const s3_common[] = {"type", "ca_file", "connect_timeout_ms",
						"timeout_ms", NULL};
	char at[300];
	const char *auth, *addressing;
	json_t *v;
	const char *key;
	int rc;

	snprintf(at, sizeof(at), "services.%.64s.sources[%zu]", s->name, idx);
	if (!(src->label = strdup(at)))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	source_defaults(src);
	if (!json_is_object(obj))
		return bad(err, path, at, "expected an object");
	v = json_object_get(obj, "type");
	if (!json_is_string(v))
		return bad(err, path, at,
			   "needs a \"type\": dir, pprof_http, pyroscope, parca or s3_prefix");
	if (strcmp(json_string_value(v), "s3") == 0) {
		snprintf(at, sizeof(at), "services.%.64s.sources[%zu].type", s->name, idx);
		return bad(err, path, at, "object-store drops are \"s3_prefix\"");
	}
	for (rc = 0; source_kinds[rc] && strcmp(source_kinds[rc], json_string_value(v)); rc++)
		;
	if (!source_kinds[rc]) {
		snprintf(at, sizeof(at), "services.%.64s.sources[%zu].type", s->name, idx);
		return bad(err, path, at,
			   "expected dir, pprof_http, pyroscope, parca or s3_prefix");
	}
	src->kind = (config_source_kind)rc;
	json_object_foreach(obj, key, v) {
		bool known = false;
		const char *const *com = src->kind == CONFIG_SRC_S3_PREFIX ? s3_common : common;
		for (size_t k = 0; com[k] && !known; k++)
			known = strcmp(com[k], key) == 0 && (src->kind != CONFIG_SRC_DIR || k == 0);
		for (size_t k = 0; extra[src->kind][k] && !known; k++)
			known = strcmp(extra[src->kind][k], key) == 0;
		snprintf(at, sizeof(at), "%s.%.64s", src->label, key);
		if (!known) {
			const char *keys[64];
			size_t n = 0;
			for (size_t k = 0; com[k] && n < 64; k++)
				if (src->kind != CONFIG_SRC_DIR || k == 0)
					keys[n++] = com[k];
			for (size_t k = 0; extra[src->kind][k] && n < 64; k++)
				keys[n++] = extra[src->kind][k];
			return unknown_key(err, path, at, key, keys, n);
		}
	}
	if ((rc = apply(obj, source_keys, src, path, src->label, err)) < 0 ||
	    (rc = get_string(&auth, obj, "auth", path, src->label, err)) < 0 ||
	    (rc = get_string(&addressing, obj, "addressing", path, src->label, err)) < 0)
		return rc;
	if (src->kind == CONFIG_SRC_PYROSCOPE && !src->version_label &&
	    !(src->version_label = strdup("service_git_ref"))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	if ((v = json_object_get(obj, "targets"))) {
		snprintf(at, sizeof(at), "%s.targets", src->label);
		if ((rc = load_strings(&src->targets, &src->ntargets, v, path, at,
				       "expected an array of host:port", err)) < 0)
			goto out;
		for (size_t k = 0; k < src->ntargets; k++)
			if (!targets_address_valid(src->targets[k])) {
				rc = bad(err, path, at,
					 "expected an array of host:port (no scheme, no path)");
				goto out;
			}
	}
	if ((v = json_object_get(obj, "file_sd"))) {
		snprintf(at, sizeof(at), "%s.file_sd", src->label);
		if ((rc = load_strings(&src->file_sd, &src->nfile_sd, v, path, at,
				       "expected an array of file paths", err)) < 0)
			goto out;
	}
	snprintf(at, sizeof(at), "%s", src->label);
	if (src->kind == CONFIG_SRC_DIR && !src->dir) {
		rc = bad(err, path, at, "a dir source needs \"dir\"");
		goto out;
	}
	if (src->kind == CONFIG_SRC_PPROF_HTTP && !src->ntargets && !src->nfile_sd) {
		rc = bad(err, path, at, "a pprof_http source needs \"targets\" or \"file_sd\"");
		goto out;
	}
	if (src->kind == CONFIG_SRC_PPROF_HTTP && src->scheme && strcmp(src->scheme, "http") &&
	    strcmp(src->scheme, "https")) {
		snprintf(at, sizeof(at), "%s.scheme", src->label);
		rc = bad(err, path, at, "expected http or https");
		goto out;
	}
	if ((src->kind == CONFIG_SRC_PYROSCOPE || src->kind == CONFIG_SRC_PARCA)) {
		snprintf(at, sizeof(at), "%s.url", src->label);
		if (!src->url ||
		    (strncmp(src->url, "http://", 7) && strncmp(src->url, "https://", 8))) {
			rc = bad(err, path, at, "expected an http:// or https:// URL");
			goto out;
		}
		while (strlen(src->url) > 8 && src->url[strlen(src->url) - 1] == '/')
			src->url[strlen(src->url) - 1] = '\0';
		if (!src->selector && src->kind == CONFIG_SRC_PARCA) {
			rc = bad(err, path, src->label,
				 "a parca source needs \"selector\" ({comm=\"...\"}, "
				 "{job=\"...\"}: whatever labels the service's profiles carry)");
			goto out;
		}
		if (!src->selector) {
			buf sel = BUF_INIT;
			if (buf_printf(&sel, "{service_name=\"%s\"}", s->name) < 0 ||
			    !(src->selector = buf_detach(&sel, NULL))) {
				rc = pr_error_set(err, PR_ENOMEM, "out of memory");
				goto out;
			}
		}
	}
	if ((src->tenant && !plain_text(src->tenant)) ||
	    (src->selector && !plain_text(src->selector))) {
		bool tenant = src->tenant && !plain_text(src->tenant);
		snprintf(at, sizeof(at), "%s.%s", src->label, tenant ? "tenant" : "selector");
		rc = bad(err, path, at, "expected printable text (no line breaks)");
		goto out;
	}
	if (auth && strcmp(auth, "bearer") && strcmp(auth, "basic")) {
		snprintf(at, sizeof(at), "%s.auth", src->label);
		rc = bad(err, path, at, "expected bearer or basic");
		goto out;
	}
	src->basic = auth && strcmp(auth, "basic") == 0;
	if (src->secret_env && src->secret_file) {
		rc = bad(err, path, at, "set secret_env or secret_file, not both");
		goto out;
	}
	if ((auth || src->username) && !src->secret_env && !src->secret_file) {
		rc = bad(err, path, at, "auth needs secret_env or secret_file (the token or "
			 "password)");
		goto out;
	}
	if (src->basic && !src->username) {
		rc = bad(err, path, at, "basic auth needs \"username\"");
		goto out;
	}
	if (src->username && (!plain_text(src->username) || strchr(src->username, ':'))) {
		snprintf(at, sizeof(at), "%s.username", src->label);
		rc = bad(err, path, at, "expected printable text without ':'");
		goto out;
	}
	if ((src->secret_env || src->secret_file) && src->url && !secret_url_safe(src->url)) {
		snprintf(at, sizeof(at), "%s.url", src->label);
		rc = bad(err, path, at, "a source with a secret needs an https:// URL (plain http "
			 "only to 127.0.0.1, [::1] or localhost)");
		goto out;
	}
	snprintf(at, sizeof(at), "%s.url", src->label);
	if ((rc = check_url_password(src->url, path, at, err)) < 0)
		goto out;
	if (src->kind == CONFIG_SRC_S3_PREFIX)
		rc = check_s3_prefix(src, addressing, path, err);
	else if (src->kind != CONFIG_SRC_DIR)
		rc = load_profiles(src, s, json_object_get(obj, "types"),
				   json_object_get(obj, "profile_types"), path, err);
out:
	return rc;
}

static int load_sources(config_service *s, json_t *v, const char *path, pr_error *err)
{
	char at[256];
	size_t i;
	json_t *o;
	int rc;

	snprintf(at, sizeof(at), "services.%.64s.sources", s->name);
	if (!json_is_array(v))
		return bad(err, path, at, "expected an array of sources");
	if (json_array_size(v) && !(s->sources = calloc(json_array_size(v), sizeof(*s->sources))))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	json_array_foreach(v, i, o) {
		rc = load_source(&s->sources[s->nsources], s, o, i, path, err);
		s->nsources++;
		if (rc < 0)
			return rc;
	}
	return 0;
}

/*
 * Fill `entry` (zeroed) from `v`, the value under key `name` of an object
 * of entries by name; `ctx` is the caller's (NULL when it needs none).
 */
typedef int (*entry_loader)(void *entry, const char *name, json_t *v, const char *path,
			    const void *ctx, pr_error *err);

/*
 * An object of entries by name at `at` ("services", "paging.targets"):
 * one entry of `size` bytes a member, in the object's order, in a new
 * array *out (NULL when the object is empty) of *n entries, each filled
 * by `load`. Not an object is `expected` at `at`. An entry is counted
 * before it is loaded, so that config_release frees one loaded in part:
 * *out and *n are set on error too, and the caller keeps them.
 */
static int load_by_name(void **out, size_t *n, size_t size, json_t *obj, const char *path,
			const char *at, const char *expected, entry_loader load, const void *ctx,
			pr_error *err)
{
	const char *name;
	json_t *v;
	char *entries = NULL;
	int rc;

	*out = NULL;
	*n = 0;
	if (!json_is_object(obj))
		return bad(err, path, at, expected);
	if (json_object_size(obj) && !(entries = calloc(json_object_size(obj), size)))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	*out = entries;
	json_object_foreach(obj, name, v) {
		void *entry = entries + *n * size;
		(*n)++;
		if ((rc = load(entry, name, v, path, ctx, err)) < 0)
			return rc;
	}
	return 0;
}

/* A weekend's text at `at` into w, or the one-line reason it is not one. */
static int load_weekend(analysis_week *w, json_t *v, const char *path, const char *at,
			pr_error *err)
{
	if (!json_is_string(v) || analysis_weekend_parse(w, json_string_value(v)) < 0)
		return bad(err, path, at, "expected one to three days in a row, by their first "
			   "three letters: \"sat-sun\", \"fri-sat\" or \"sun\"");
	return 0;
}

/* A service's own week (at is "services.NAME"): what it leaves out is analysis'. */
static int load_service_week(config_service *s, json_t *obj, const char *path, const char *at,
			     pr_error *err)
{
	json_t *off = json_object_get(obj, "utc_offset_hours");
	json_t *end = json_object_get(obj, "weekend");
	char where[320];
	int rc;

	if (off) {
		double h = json_is_number(off) ? json_number_value(off) : NAN;
		snprintf(where, sizeof(where), "%s.utc_offset_hours", at);
		if (!(h >= -12 && h <= 14))
			return bad(err, path, where, "expected a number from -12 to 14");
		s->week.utc_offset_h = h;
		s->own_offset = true;
	}
	if (end) {
		snprintf(where, sizeof(where), "%s.weekend", at);
		if ((rc = load_weekend(&s->week, end, path, where, err)) < 0)
			return rc;
		s->own_weekend = true;
	}
	return 0;
}

/* The analysis section: its numbers through the table, then the weekend. */
static int load_analysis(config *c, json_t *obj, const char *path, pr_error *err)
{
	json_t *end;
	int rc;

	if (!json_is_object(obj))
		return bad(err, path, "analysis", "expected an object");
	if ((rc = apply(obj, analysis_keys, c, path, "analysis", err)) < 0)
		return rc;
	if ((end = json_object_get(obj, "weekend")))
		return load_weekend(&c->analysis.week, end, path, "analysis.weekend", err);
	return 0;
}

/* Each service's week whole: what it did not set of its own is the analysis'. */
static void resolve_weeks(config *c)
{
	for (size_t i = 0; i < c->nservices; i++) {
		config_service *s = &c->services[i];
		if (!s->own_offset)
			s->week.utc_offset_h = c->analysis.week.utc_offset_h;
		if (!s->own_weekend) {
			s->week.weekend_first = c->analysis.week.weekend_first;
			s->week.weekend_days = c->analysis.week.weekend_days;
		}
	}
}

const analysis_week *config_service_week(const config_service *s)
{
	return s && (s->own_offset || s->own_weekend) ? &s->week : NULL;
}

const int64_t *config_service_warmup(const config_service *s)
{
	return s && s->warmup_us >= 0 ? &s->warmup_us : NULL;
}

int64_t config_warmup_of(const config *c, const config_service *s)
{
	const int64_t *own = config_service_warmup(s);

	return own ? *own : c->analysis.warmup_us;
}

/* One entry of "services": its scalars through the table, then the lists. */
static int load_service(void *entry, const char *name, json_t *obj, const char *path,
			const void *ctx, pr_error *err)
{
	config_service *s = entry;
	json_t *v;
	char at[256];
	int rc;

	(void)ctx;
	memset(s, 0, sizeof(*s));
	s->tiers.hot_us = s->tiers.summary_us = s->tiers.summary_top = -1;
	s->warmup_us = -1;
	if (!(s->name = strdup(name)))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	snprintf(at, sizeof(at), "services.%.64s", name);
	/* The same rule as `service add`: a name the CLI refuses can match nothing. */
	if (!db_service_name_valid(name))
		return bad(err, path, at, "not a valid service name (1 to 128 letters, digits, "
			   "'.', '_' or '-', starting with a letter or digit)");
	if (!json_is_object(obj))
		return bad(err, path, at, "expected an object");
	if ((rc = apply(obj, service_keys, s, path, at, err)) < 0)
		return rc;
	/* The same rule as `service add --team`: a team it refuses is refused here. */
	if (s->team && !db_service_team_valid(s->team)) {
		char why[96];
		snprintf(at, sizeof(at), "services.%.64s.team", name);
		snprintf(why, sizeof(why), "not a valid team (1 to %d bytes without control "
			 "characters)", DB_TEAM_MAX);
		return bad(err, path, at, why);
	}
	if ((rc = load_service_week(s, obj, path, at, err)) < 0)
		return rc;
	if ((v = json_object_get(obj, "types"))) {
		size_t i;
		json_t *t;
		snprintf(at, sizeof(at), "services.%.64s.types", name);
		if (!json_is_array(v) || json_array_size(v) == 0)
			return bad(err, path, at, "expected a non-empty array of profile types");
		if (!(s->types = calloc(json_array_size(v), sizeof(*s->types))))
			return pr_error_set(err, PR_ENOMEM, "out of memory");
		json_array_foreach(v, i, t) {
			if (!json_is_string(t) || !ingest_type_valid(json_string_value(t)))
				return bad(err, path, at,
					   "expected cpu, heap, alloc, wall or goroutine");
			if (!(s->types[s->ntypes++] = dup_string(t)))
				return pr_error_set(err, PR_ENOMEM, "out of memory");
		}
	}
	if ((v = json_object_get(obj, "page"))) {
		snprintf(at, sizeof(at), "services.%.64s.page", name);
		if ((rc = load_names(&s->page, &s->npage, v, path, at, err)) < 0)
			return rc;
		s->page_set = true;
	}
	if ((v = json_object_get(obj, "source"))) {
		json_t *dir = json_object_get(v, "dir");
		snprintf(at, sizeof(at), "services.%.64s.source", name);
		if (!json_is_object(v) || json_object_size(v) != 1 || !json_is_string(dir))
			return bad(err, path, at, "expected {\"dir\": \"PATH\"}");
		if (!(s->source_dir = dup_string(dir)))
			return pr_error_set(err, PR_ENOMEM, "out of memory");
	}
	if (!s->ntypes) {
		if (!(s->types = calloc(1, sizeof(*s->types))) || !(s->types[0] = strdup("cpu")))
			return pr_error_set(err, PR_ENOMEM, "out of memory");
		s->ntypes = 1;
	}
	if ((v = json_object_get(obj, "sources")))
		return load_sources(s, v, path, err);
	return 0;
}

static int load_services(config *c, json_t *obj, const char *path, pr_error *err)
{
	void *v;
	int rc = load_by_name(&v, &c->nservices, sizeof(*c->services), obj, path, "services",
			      "expected an object of services by name", load_service, NULL, err);

	c->services = v;
	return rc;
}

/* One entry of paging.targets. */
static int load_target(void *entry, const char *name, json_t *obj, const char *path,
		       const void *ctx, pr_error *err)
{
	config_target *t = entry;
	static const char *const kinds[] = {"pagerduty", "alertmanager", "webhook", NULL};
	const char *type;
	char at[256];
	int rc;

	(void)ctx;
	t->name = strdup(name);
	if (!t->name)
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	snprintf(at, sizeof(at), "paging.targets.%.64s", name);
	if (!json_is_object(obj))
		return bad(err, path, at, "expected an object");
	if ((rc = apply(obj, target_keys, t, path, at, err)) < 0 ||
	    (rc = get_string(&type, obj, "type", path, at, err)) < 0)
		goto out;
	rc = -1;
	for (int k = 0; type && kinds[k]; k++)
		if (strcmp(type, kinds[k]) == 0) {
			t->kind = (config_target_kind)k;
			rc = 0;
		}
	if (rc < 0) {
		snprintf(at, sizeof(at), "paging.targets.%.64s.type", name);
		rc = bad(err, path, at, "expected pagerduty, alertmanager or webhook");
		goto out;
	}
	if (!t->url && t->kind == CONFIG_TARGET_PAGERDUTY &&
	    !(t->url = strdup("https://events.pagerduty.com"))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	if (!t->url) {
		snprintf(at, sizeof(at), "paging.targets.%.64s.url", name);
		rc = bad(err, path, at, "required for alertmanager and webhook targets");
		goto out;
	}
	if (strncmp(t->url, "http://", 7) != 0 && strncmp(t->url, "https://", 8) != 0) {
		snprintf(at, sizeof(at), "paging.targets.%.64s.url", name);
		rc = bad(err, path, at, "expected an http:// or https:// URL");
		goto out;
	}
	if (t->kind == CONFIG_TARGET_PAGERDUTY && !t->secret_env && !t->secret_file) {
		snprintf(at, sizeof(at), "paging.targets.%.64s", name);
		rc = bad(err, path, at,
			 "a PagerDuty target needs secret_env or secret_file (its routing key)");
		goto out;
	}
	if (t->secret_env && t->secret_file) {
		snprintf(at, sizeof(at), "paging.targets.%.64s", name);
		rc = bad(err, path, at, "set secret_env or secret_file, not both");
		goto out;
	}
	/* The key would cross the network in cleartext: only loopback may be plain http. */
	if ((t->secret_env || t->secret_file) && !secret_url_safe(t->url)) {
		snprintf(at, sizeof(at), "paging.targets.%.64s.url", name);
		rc = bad(err, path, at,
			 "a target with a secret needs an https:// URL (plain http only to "
			 "127.0.0.1, [::1] or localhost)");
		goto out;
	}
	snprintf(at, sizeof(at), "paging.targets.%.64s.url", name);
	rc = check_url_password(t->url, path, at, err);
out:
	return rc;
}

/* One entry of paging.teams: the team's list of targets. */
static int load_route(void *entry, const char *name, json_t *v, const char *path,
		      const void *ctx, pr_error *err)
{
	config_route *r = entry;
	char at[256];

	(void)ctx;
	snprintf(at, sizeof(at), "paging.teams.%.64s", name);
	if (!(r->team = strdup(name)))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	return load_names(&r->targets, &r->ntargets, v, path, at, err);
}

/*
 * "paging": scalar settings through the table; "targets" and "teams" have
 * names for keys and "default" is a list, so they are read here.
 */
static int load_paging(config *c, json_t *obj, const char *path, pr_error *err)
{
	config_paging *p = &c->paging;
	json_t *targets, *teams, *def;
	const char *sev;
	void *v;
	int rc = 0;

	if (!json_is_object(obj))
		return bad(err, path, "paging", "expected an object");
	if ((rc = apply(obj, paging_keys, c, path, "paging", err)) < 0 ||
	    (rc = get_string(&sev, obj, "min_severity", path, "paging", err)) < 0)
		return rc;
	targets = json_object_get(obj, "targets");
	teams = json_object_get(obj, "teams");
	def = json_object_get(obj, "default");
	if (sev && (stats_severity_parse(&p->min_severity, sev) < 0 ||
		    p->min_severity == STATS_SEV_NONE))
		return bad(err, path, "paging.min_severity",
			   "expected low, medium, high or critical");
	if (targets) {
		rc = load_by_name(&v, &p->ntargets, sizeof(*p->targets), targets, path,
				  "paging.targets", "expected an object of targets by name",
				  load_target, NULL, err);
		p->targets = v;
		if (rc < 0)
			return rc;
	}
	if (def && (rc = load_names(&p->default_targets, &p->ndefault, def, path,
				    "paging.default", err)) < 0)
		return rc;
	if (teams) {
		rc = load_by_name(&v, &p->nteams, sizeof(*p->teams), teams, path, "paging.teams",
				  "expected an object of target lists by team", load_route, NULL,
				  err);
		p->teams = v;
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* One entry of snapshot.services: how the service's processes are known. */
static int load_snapshot_service(void *entry, const char *name, json_t *obj, const char *path,
				 const void *ctx, pr_error *err)
{
	config_snapshot_service *s = entry;
	json_t *procs = json_object_get(obj, "processes"), *v;
	char at[256];
	size_t i;
	int rc;

	(void)ctx;
	if (!(s->name = strdup(name)))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	snprintf(at, sizeof(at), "snapshot.services.%.64s", name);
	if (!db_service_name_valid(name))
		return bad(err, path, at, "not a valid service name (1 to 128 letters, digits, "
			   "'.', '_' or '-', starting with a letter or digit)");
	if (!json_is_object(obj))
		return bad(err, path, at, "expected an object");
	if ((rc = apply(obj, snapshot_service_keys, s, path, at, err)) < 0)
		return rc;
	if (procs) {
		snprintf(at, sizeof(at), "snapshot.services.%.64s.processes", name);
		if (!json_is_array(procs))
			return bad(err, path, at, "expected an array of process names");
		if (json_array_size(procs) &&
		    !(s->processes = calloc(json_array_size(procs), sizeof(*s->processes))))
			return pr_error_set(err, PR_ENOMEM, "out of memory");
		json_array_foreach(procs, i, v) {
			/* The kernel keeps 15 bytes of a process name: longer never matches. */
			if (!json_is_string(v) || json_string_length(v) == 0 ||
			    json_string_length(v) > 15)
				return bad(err, path, at, "expected process names of 1 to 15 bytes "
					   "(the kernel's comm)");
			if (!(s->processes[s->nprocesses++] = dup_string(v)))
				return pr_error_set(err, PR_ENOMEM, "out of memory");
		}
	}
	if ((v = json_object_get(obj, "cgroup"))) {
		const char *cg = json_string_value(v);
		snprintf(at, sizeof(at), "snapshot.services.%.64s.cgroup", name);
		if (!cg || cg[0] != '/' || strstr(cg, "/../") || strstr(cg, "/./") ||
		    (strlen(cg) >= 3 && strcmp(cg + strlen(cg) - 3, "/..") == 0) ||
		    strlen(cg) > 1024)
			return bad(err, path, at, "expected a cgroup v2 path starting with '/', "
				   "without '.' or '..' parts");
		if (!(s->cgroup = strdup(cg)))
			return pr_error_set(err, PR_ENOMEM, "out of memory");
	}
	return 0;
}

/* "snapshot": scalar settings through the table, then the services by name. */
static int load_snapshot(config *c, json_t *obj, const char *path, pr_error *err)
{
	config_snapshot *s = &c->snapshot;
	json_t *svcs;
	void *v;
	int rc = 0;

	if (!json_is_object(obj))
		return bad(err, path, "snapshot", "expected an object");
	if ((rc = apply(obj, snapshot_keys, c, path, "snapshot", err)) < 0)
		return rc;
	if (!(svcs = json_object_get(obj, "services")))
		return 0;
	rc = load_by_name(&v, &s->nservices, sizeof(*s->services), svcs, path,
			  "snapshot.services", "expected an object of services by name",
			  load_snapshot_service, NULL, err);
	s->services = v;
	return rc;
}

static void free_serve_agents(config_serve *s)
{
	for (size_t i = 0; i < s->nagents; i++) {
		free(s->agents[i].hosts);
		free(s->agents[i].url);
	}
	free(s->agents);
	s->agents = NULL;
	s->nagents = 0;
}

/* "serve.agents": [{"hosts": GLOB, "url": "http(s)://..."}], at most 256. */
static int load_serve_agents(config_serve *s, json_t *v, const char *path, pr_error *err)
{
	json_t *a;
	size_t i;

	free_serve_agents(s);
	if (!json_is_array(v) || json_array_size(v) > 256)
		return bad(err, path, "serve.agents", "expected an array of at most 256 objects");
	if (json_array_size(v) && !(s->agents = calloc(json_array_size(v), sizeof(*s->agents))))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	json_array_foreach(v, i, a)
	{
		const char *key, *hosts = json_string_value(json_object_get(a, "hosts")),
				 *url = json_string_value(json_object_get(a, "url"));
		json_t *x;
		char at[48];
		int rc;
		snprintf(at, sizeof(at), "serve.agents[%zu]", i);
		if (!json_is_object(a))
			return bad(err, path, at, "expected an object");
		json_object_foreach(a, key, x)
		{
			if (strcmp(key, "hosts") != 0 && strcmp(key, "url") != 0)
				return bad(err, path, at, "unknown key (hosts, url)");
		}
		if (!hosts || !*hosts || strlen(hosts) > 256)
			return bad(err, path, at, "'hosts' must be a glob of 1 to 256 bytes");
		if (!url || strlen(url) > 512 ||
		    (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0))
			return bad(err, path, at, "'url' must be an http:// or https:// URL");
		snprintf(at, sizeof(at), "serve.agents[%zu].url", i);
		if ((rc = check_url_password(url, path, at, err)) < 0)
			return rc;
		s->nagents = i + 1;
		if (!(s->agents[i].hosts = strdup(hosts)) || !(s->agents[i].url = strdup(url)))
			return pr_error_set(err, PR_ENOMEM, "out of memory");
	}
	return 0;
}

/* "serve": numbers and strings through the table, the host labels by hand. */
static int load_serve(config *c, json_t *obj, const char *path, pr_error *err)
{
	config_serve *s = &c->serve;
	struct sockaddr_storage ss;
	pr_error lerr = PR_ERROR_INIT;
	json_t *labels, *v;
	int rc = 0;

	if (!json_is_object(obj))
		return bad(err, path, "serve", "expected an object");
	if ((rc = apply(obj, serve_keys, c, path, "serve", err)) < 0)
		return rc;
	if (s->default_seconds > s->max_seconds)
		return bad(err, path, "serve.default_seconds", "longer than serve.max_seconds");
	if (s->listen && netaddr_parse_listen(&ss, s->listen, &lerr) < 0)
		return bad(err, path, "serve.listen", lerr.msg);
	if ((v = json_object_get(obj, "agents")) && (rc = load_serve_agents(s, v, path, err)) < 0)
		return rc;
	if (!(labels = json_object_get(obj, "alert_host_labels")))
		return 0;
	free_names(s->alert_host_labels, s->nalert_host_labels);
	s->alert_host_labels = NULL;
	s->nalert_host_labels = 0;
	if (!json_is_array(labels) || json_array_size(labels) == 0)
		return bad(err, path, "serve.alert_host_labels",
			   "expected a non-empty array of label names");
	return load_names(&s->alert_host_labels, &s->nalert_host_labels, labels, path,
			  "serve.alert_host_labels", err);
}

/* ---- "escalate" ------------------------------------------------------------ */

static bool signal_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 64)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* A ceiling with a query needs a maximum above 0. */
static int check_ceiling(const config_escalate_ceiling *c, const char *path, const char *at,
			 pr_error *err)
{
	if (c->query && !(c->max > 0))
		return bad(err, path, at, "a ceiling with a query needs \"max\" above 0");
	return 0;
}

/* escalate.services.NAME: its signals by hand, the rest through the table. */
static int load_escalate_service(void *entry, const char *name, json_t *v, const char *path,
				 const void *ctx, pr_error *err)
{
	config_escalate_service *s = entry;
	const config_escalate *e = ctx;
	json_t *sigs, *q;
	const char *sname;
	char at[256];
	int rc = 0;

	snprintf(at, sizeof(at), "escalate.services.%.64s", name);
	if (!(s->name = strdup(name)))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	s->level1 = e->level1;
	s->level2 = e->level2;
	s->load.max = e->load.max;
	s->memory.max = e->memory.max;
	if (!json_is_object(v))
		return bad(err, path, at, "expected an object");
	sigs = json_incref(json_object_get(v, "signals"));
	if ((rc = apply(v, escalate_service_keys, s, path, at, err)) < 0)
		goto out;
	snprintf(at, sizeof(at), "escalate.services.%.64s.signals", name);
	if (!json_is_object(sigs) || json_object_size(sigs) == 0 || json_object_size(sigs) > 16) {
		rc = bad(err, path, at,
			 "expected an object of 1 to 16 PromQL expressions by signal name");
		goto out;
	}
	if (!(s->signals = calloc(json_object_size(sigs), sizeof(*s->signals)))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	json_object_foreach(sigs, sname, q) {
		config_escalate_signal *g = &s->signals[s->nsignals];
		snprintf(at, sizeof(at), "escalate.services.%.64s.signals.%.64s", name, sname);
		if (!signal_name_ok(sname)) {
			rc = bad(err, path, at, "a signal name is 1 to 64 of [a-z0-9_]");
			goto out;
		}
		if (!json_is_string(q) || json_string_length(q) == 0 ||
		    json_string_length(q) > 4096) {
			rc = bad(err, path, at, "expected a PromQL expression (1 to 4096 bytes)");
			goto out;
		}
		s->nsignals++;
		if (!(g->name = strdup(sname)) || !(g->query = dup_string(q))) {
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
			goto out;
		}
	}
	snprintf(at, sizeof(at), "escalate.services.%.64s.load", name);
	if ((rc = check_ceiling(&s->load, path, at, err)) < 0)
		goto out;
	snprintf(at, sizeof(at), "escalate.services.%.64s.memory", name);
	rc = check_ceiling(&s->memory, path, at, err);
out:
	json_decref(sigs);
	return rc;
}

/*
 * "escalate": numbers, strings and the level plans through the table,
 * then the services by name (each starting from the section's plans and
 * ceilings).
 */
static int load_escalate(config *c, json_t *obj, const char *path, pr_error *err)
{
	config_escalate *e = &c->escalate;
	json_t *svcs;
	void *v;
	int rc = 0;

	if (!json_is_object(obj))
		return bad(err, path, "escalate", "expected an object");
	svcs = json_incref(json_object_get(obj, "services"));
	if ((rc = apply(obj, escalate_keys, c, path, "escalate", err)) < 0)
		goto out;
	if (e->prometheus && strncmp(e->prometheus, "http://", 7) != 0 &&
	    strncmp(e->prometheus, "https://", 8) != 0) {
		rc = bad(err, path, "escalate.prometheus", "expected an http:// or https:// URL");
		goto out;
	}
	if ((rc = check_url_password(e->prometheus, path, "escalate.prometheus", err)) < 0)
		goto out;
	if (e->large_mads < e->band_mads) {
		rc = bad(err, path, "escalate.large_mads", "smaller than escalate.band_mads");
		goto out;
	}
	if (!(e->rel_floor > 0) && !(e->abs_floor > 0)) {
		rc = bad(err, path, "escalate.rel_floor",
			 "rel_floor and abs_floor are both 0: a flat history would make any "
			 "wobble an escalation");
		goto out;
	}
	if ((rc = check_ceiling(&e->load, path, "escalate.load", err)) < 0 ||
	    (rc = check_ceiling(&e->memory, path, "escalate.memory", err)) < 0)
		goto out;
	if (svcs) {
		rc = load_by_name(&v, &e->nservices, sizeof(*e->services), svcs, path,
				  "escalate.services", "expected an object of services by name",
				  load_escalate_service, e, err);
		e->services = v;
	}
out:
	json_decref(svcs);
	return rc;
}

static void release_escalate(config_escalate *e)
{
	for (size_t i = 0; i < e->nservices; i++) {
		config_escalate_service *s = &e->services[i];
		free(s->name);
		for (size_t k = 0; k < s->nsignals; k++) {
			free(s->signals[k].name);
			free(s->signals[k].query);
		}
		free(s->signals);
		free(s->host_label);
		free(s->load.query);
		free(s->memory.query);
	}
	free(e->services);
	free(e->prometheus);
	free(e->host_label);
	free(e->load.query);
	free(e->memory.query);
	memset(e, 0, sizeof(*e));
}

const config_escalate_service *config_escalate_find(const config *c, const char *name)
{
	for (size_t i = 0; i < c->escalate.nservices; i++)
		if (strcmp(c->escalate.services[i].name, name) == 0)
			return &c->escalate.services[i];
	return NULL;
}

/*
 * "blobs": strings and numbers through the table, then the choices
 * and what the S3 store needs.
 */
static int load_blobs(config *c, json_t *obj, const char *path, pr_error *err)
{
	config_blobs *b = &c->blobs;
	const char *store, *addressing;
	static const char *const pairs[][3] = {
		{"access_key_id_env", "access_key_id_file", "access key id"},
		{"secret_access_key_env", "secret_access_key_file", "secret access key"},
		{"session_token_env", "session_token_file", "session token"},
	};
	char *const *vals[][2] = {
		{&b->s3.access_key_id_env, &b->s3.access_key_id_file},
		{&b->s3.secret_access_key_env, &b->s3.secret_access_key_file},
		{&b->s3.session_token_env, &b->s3.session_token_file},
	};
	int rc;

	if (!json_is_object(obj))
		return bad(err, path, "blobs", "expected an object");
	if ((rc = apply(obj, blobs_keys, c, path, "blobs", err)) < 0 ||
	    (rc = get_string(&store, obj, "store", path, "blobs", err)) < 0 ||
	    (rc = get_string(&addressing, obj, "addressing", path, "blobs", err)) < 0)
		goto out;
	if (store && strcmp(store, "s3") != 0 && strcmp(store, "local") != 0) {
		rc = bad(err, path, "blobs.store", "expected \"local\" or \"s3\"");
		goto out;
	}
	if (addressing && strcmp(addressing, "path") != 0 && strcmp(addressing, "virtual") != 0) {
		rc = bad(err, path, "blobs.addressing", "expected \"path\" or \"virtual\"");
		goto out;
	}
	b->use_s3 = store && strcmp(store, "s3") == 0;
	b->s3.virtual_host = addressing && strcmp(addressing, "virtual") == 0;
	for (size_t i = 0; i < 3; i++)
		if (*vals[i][0] && *vals[i][1]) {
			char why[128];
			snprintf(why, sizeof(why), "set %s or %s, not both", pairs[i][0],
				 pairs[i][1]);
			rc = bad(err, path, "blobs", why);
			goto out;
		}
	b->s3_set = b->s3.endpoint || b->s3.bucket || b->s3.region;
	if (b->use_s3 || b->s3_set) {
		blob_s3_opts o = {.endpoint = b->s3.endpoint, .bucket = b->s3.bucket,
				  .prefix = b->s3.prefix, .region = b->s3.region,
				  .access_key_id = "-", .secret_access_key = "-"};
		pr_error e2 = PR_ERROR_INIT;
		const char *missing = !b->s3.endpoint ? "blobs.endpoint"
				      : !b->s3.bucket ? "blobs.bucket"
				      : !b->s3.region ? "blobs.region" : NULL;
		if (missing) {
			rc = bad(err, path, missing, "required for an S3 store");
			goto out;
		}
		if (blob_s3_check(&o, &e2) < 0) {
			rc = bad(err, path, "blobs", e2.msg);
			goto out;
		}
		/*
		 * Profiles travel to the bucket: plain http only to this machine
		 * (a loopback address, localhost or a name under .localhost,
		 * which libcurl resolves to loopback itself).
		 */
		if (!secret_url_safe(b->s3.endpoint) && !localhost_name(b->s3.endpoint)) {
			rc = bad(err, path, "blobs.endpoint",
				 "expected an https:// URL (plain http only to 127.0.0.1, [::1], "
				 "localhost or a name under .localhost)");
			goto out;
		}
		b->s3_set = true;
	}
out:
	return rc;
}

/* Every name a routing list gives must be a configured target. */
static int check_routes(const config *c, const char *path, pr_error *err)
{
	char at[256];
	size_t i, k;

	for (k = 0; k < c->paging.ndefault; k++)
		if (!config_target_find(c, c->paging.default_targets[k]))
			return bad(err, path, "paging.default",
				   "names a target not under paging.targets");
	for (i = 0; i < c->paging.nteams; i++)
		for (k = 0; k < c->paging.teams[i].ntargets; k++)
			if (!config_target_find(c, c->paging.teams[i].targets[k])) {
				snprintf(at, sizeof(at), "paging.teams.%.64s",
					 c->paging.teams[i].team);
				return bad(err, path, at,
					   "names a target not under paging.targets");
			}
	for (i = 0; i < c->nservices; i++)
		for (k = 0; k < c->services[i].npage; k++)
			if (!config_target_find(c, c->services[i].page[k])) {
				snprintf(at, sizeof(at), "services.%.64s.page",
					 c->services[i].name);
				return bad(err, path, at,
					   "names a target not under paging.targets");
			}
	return 0;
}

/* The tiers of service s (NULL: the global ones), filled in from the global. */
static config_tiers tiers_of(const config *c, const config_service *s)
{
	config_tiers t = c->retention.tiers;

	if (s) {
		if (s->tiers.hot_us >= 0)
			t.hot_us = s->tiers.hot_us;
		if (s->tiers.summary_us >= 0)
			t.summary_us = s->tiers.summary_us;
		if (s->tiers.summary_top >= 0)
			t.summary_top = s->tiers.summary_top;
	}
	return t;
}

/*
 * A nightly baseline reaches back window_days before the night it judges,
 * so its oldest captures are window_days + 1 old; past the summary tier
 * they are gone and the baseline would silently shrink.
 */
static int check_retention(const config *c, const char *path, pr_error *err)
{
	char why[160];

	for (size_t i = 0; i <= c->nservices; i++) {
		/*
		 * Each service's own, not looked up by its name: a search of the
		 * services for each of them made a configuration of 100,000
		 * services (2.8 MB) take 46 s to load.
		 */
		config_tiers t = tiers_of(c, i < c->nservices ? &c->services[i] : NULL);
		const char *who = i < c->nservices ? c->services[i].name : NULL;
		char at[256];

		if (t.summary_us < t.hot_us) {
			snprintf(at, sizeof(at), who ? "services.%.64s.retention" : "retention",
				 who);
			return bad(err, path, at, "summary_days must be at least hot_days");
		}
		if (c->analysis.window_us + DAY_US > t.summary_us) {
			snprintf(at, sizeof(at), who ? "services.%.64s.retention.summary_days"
						     : "retention.summary_days", who);
			snprintf(why, sizeof(why),
				 "keeps %lld days, less than the %lld-day baseline window plus the "
				 "night it judges (analysis.window_days + 1)",
				 (long long)(t.summary_us / DAY_US),
				 (long long)(c->analysis.window_us / DAY_US));
			return bad(err, path, at, why);
		}
	}
	return 0;
}

const config_target *config_target_find(const config *c, const char *name)
{
	for (size_t i = 0; i < c->paging.ntargets; i++)
		if (strcmp(c->paging.targets[i].name, name) == 0)
			return &c->paging.targets[i];
	return NULL;
}

char *const *config_page_targets(const config *c, const char *service, const char *team,
				 size_t *n)
{
	const config_service *s = config_service_find(c, service);

	if (s && s->page_set) {
		*n = s->npage;
		return s->page;
	}
	if (s && s->team)
		team = s->team;
	if (team && *team)
		for (size_t i = 0; i < c->paging.nteams; i++)
			if (strcmp(c->paging.teams[i].team, team) == 0) {
				*n = c->paging.teams[i].ntargets;
				return c->paging.teams[i].targets;
			}
	*n = c->paging.ndefault;
	return c->paging.default_targets;
}

config_tiers config_service_tiers(const config *c, const char *service)
{
	return tiers_of(c, config_service_find(c, service));
}

static void defaults(config *c)
{
	profile_limits_default(&c->limits);
	analysis_opts_default(&c->analysis);
	c->retention.tiers.hot_us = 7 * DAY_US;
	c->retention.tiers.summary_us = 90 * DAY_US;
	c->retention.tiers.summary_top = 200;
	c->retention.batch = 200;
	c->workers.lease_s = 60;
	c->workers.max_attempts = 3;
	c->workers.poll_ms = 500;
	c->workers.task_timeout_s = 3600;
	c->workers.coordinator_works = true;
	c->workers.reconnect_s = 300;
	c->paging.min_severity = STATS_SEV_HIGH;
	c->paging.max_attempts = 5;
	c->paging.connect_timeout_ms = 3000;
	c->paging.timeout_ms = 10000;
	c->paging.backoff_ms = 500;
	c->paging.max_backoff_ms = 30000;
	c->paging.alert_hours = 48;
	c->collect.max_concurrent = 2;
	c->collect.max_concurrent_fleet = 8;
	c->collect.cooldown_us = 300 * 1000000LL;
	c->collect.budget_us = 900 * 1000000LL;
	c->collect.retries = 3;
	c->collect.retry_us = 5 * 1000000LL;
	c->snapshot.time_budget_ms = 5000;
	c->snapshot.size_budget_bytes = 16u << 20;
	c->snapshot.sample_ms = 1000;
	c->snapshot.top_threads = 20;
	c->snapshot.top_processes = 5;
	c->snapshot.file_max_bytes = 1u << 20;
	c->snapshot.kmsg_bytes = 1u << 20;
	c->snapshot.max_tasks = 200000;
	c->snapshot.nice = 19;
	c->snapshot.cooldown_s = 600;
	c->serve.max_body_bytes = 65536;
	c->serve.max_connections = 256;
	c->serve.max_connections_per_ip = 32;
	c->serve.token_rate = 60;
	c->serve.global_rate = 50;
	c->serve.host_cooldown_s = 300;
	c->serve.default_seconds = 30;
	c->serve.max_seconds = 120;
	c->serve.max_hosts = 16;
	c->serve.session_max_s = 900;
	c->serve.reescalate_s = 1800;
	c->serve.max_sessions_service = 4;
	c->serve.max_sessions_fleet = 10;
	c->serve.lease_s = 120;
	c->blobs.connect_timeout_ms = HTTP_DEFAULT_CONNECT_TIMEOUT_MS;
	c->blobs.timeout_ms = HTTP_DEFAULT_TIMEOUT_MS;
	c->escalate.timeout_ms = 5000;
	c->escalate.budget_s = 40;
	c->escalate.max_response_bytes = 4u << 20;
	c->escalate.max_series = 10000;
	c->escalate.window_s = 3600;
	c->escalate.min_samples = 10;
	c->escalate.band_mads = 4;
	c->escalate.large_mads = 12;
	c->escalate.rel_floor = 0.05;
	c->escalate.persist_runs = 3;
	c->escalate.cooldown_s = 300;
	c->escalate.keep_days = 14;
	c->reports.keep_days = 90;
	c->escalate.level1 = (config_escalate_plan){60, 180, false, 0};
	c->escalate.level2 = (config_escalate_plan){50, 0, true, 300};
}

/* Defaults that are strings: set after the file, when it did not. */
static int defaults_strings(config *c, pr_error *err)
{
	config_serve *s = &c->serve;

	if ((!c->escalate.host_label && !(c->escalate.host_label = strdup("instance"))) ||
	    (!s->listen && !(s->listen = strdup("127.0.0.1:8070"))) ||
	    (!s->alert_service_label && !(s->alert_service_label = strdup("service"))))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	if (!s->nalert_host_labels) {
		if (!(s->alert_host_labels = calloc(2, sizeof(char *))) ||
		    !(s->alert_host_labels[0] = strdup("instance")) ||
		    !(s->alert_host_labels[1] = strdup("pod")))
			return pr_error_set(err, PR_ENOMEM, "out of memory");
		s->nalert_host_labels = 2;
	}
	return 0;
}

const config_snapshot_service *config_snapshot_service_find(const config *c, const char *name)
{
	for (size_t i = 0; i < c->snapshot.nservices; i++)
		if (strcmp(c->snapshot.services[i].name, name) == 0)
			return &c->snapshot.services[i];
	return NULL;
}

const config_service *config_service_find(const config *c, const char *name)
{
	for (size_t i = 0; i < c->nservices; i++)
		if (strcmp(c->services[i].name, name) == 0)
			return &c->services[i];
	return NULL;
}

/*
 * The fingerprint of what decides a night's work (see config.h): the
 * file's "analysis", "limits", "services" and "collect", as canonical
 * JSON, hashed. The sections read are the file's, before loading
 * consumes them; a file without them, or no file, has the fingerprint
 * of "{}".
 */
static int fingerprint(config *c, const json_t *root, pr_error *err)
{
	static const char *const keys[] = {"analysis", "limits", "services", "collect"};
	json_t *part = json_object();
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char *text = NULL;
	int rc = 0;

	for (size_t i = 0; part && i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *v = root ? json_object_get(root, keys[i]) : NULL;
		if (v && json_object_set(part, keys[i], v) < 0) {
			json_decref(part);
			part = NULL;
		}
	}
	if (!part || !(text = json_dumps(part, JSON_SORT_KEYS | JSON_COMPACT)) ||
	    !EVP_Digest(text, strlen(text), md, &mdlen, EVP_sha256(), NULL) || mdlen < 8) {
		rc = pr_error_set(err, PR_ENOMEM, "cannot fingerprint the configuration");
		goto out;
	}
	for (size_t i = 0; i < 8; i++)
		snprintf(c->fingerprint + 2 * i, 3, "%02x", md[i]);
out:
	free(text);
	json_decref(part);
	return rc;
}

int config_load(config *c, const char *file, pr_error *err)
{
	buf path = BUF_INIT;
	json_error_t jerr;
	json_t *root = NULL;
	int rc = 0;

	memset(c, 0, sizeof(*c));
	defaults(c);
	if ((rc = fingerprint(c, NULL, err)) < 0 || !file)
		goto out; /* no file: defaults */
	if ((rc = buf_puts(&path, file)) < 0) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	{
		buf text = BUF_INIT;
		pr_error rerr = PR_ERROR_INIT;
		size_t bom;

		/* Unreadable, missing or not a file: a usage error, whatever fileio says. */
		if ((rc = fileio_read_named(&text, "config", path.ptr, CONFIG_MAX, &rerr)) < 0) {
			rc = pr_error_set(err, rc == PR_ENOMEM ? rc : PR_EUSAGE, "%s", rerr.msg);
			goto out;
		}
		/*
		 * A file saved by a Windows editor may start with a UTF-8 byte
		 * order mark, which jansson refuses as "'[' or '{' expected".
		 */
		bom = text.len >= 3 && memcmp(text.ptr, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
		root = json_loadb(text.ptr + bom, text.len - bom, JSON_REJECT_DUPLICATES, &jerr);
		buf_release(&text);
		if (!root) {
			/* Without jansson's "near '...'": the file's own bytes (a secret). */
			rc = pr_error_set(err, PR_EUSAGE, "config '%s': line %d: %s", path.ptr,
					  jerr.line, pr_json_reason(jerr.text));
			goto out;
		}
		if (!json_is_object(root)) {
			rc = bad(err, path.ptr, "(top level)", "expected an object");
			goto out;
		}
		if ((rc = fingerprint(c, root, err)) < 0)
			goto out;
		/*
		 * Sections with keys of their own (names, nested choices) are
		 * validated by their own loaders, and taken out before the rest.
		 */
		static const struct {
			const char *key;
			int (*load)(config *, json_t *, const char *, pr_error *);
		} sections[] = {
			{"services", load_services},
			{"analysis", load_analysis},
			{"snapshot", load_snapshot},
			{"serve", load_serve},
			{"escalate", load_escalate},
			{"blobs", load_blobs},
			{"paging", load_paging},
		};
		for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
			json_t *sec = json_object_get(root, sections[i].key);
			if (!sec)
				continue;
			json_incref(sec);
			json_object_del(root, sections[i].key);
			rc = sections[i].load(c, sec, path.ptr, err);
			json_decref(sec);
			if (rc < 0)
				goto out;
		}
		if ((rc = apply(root, top_keys, c, path.ptr, "", err)) < 0)
			goto out;
		resolve_weeks(c);
		if ((rc = check_routes(c, path.ptr, err)) < 0 ||
		    (rc = check_retention(c, path.ptr, err)) < 0)
			goto out;
		if (c->metrics.pushgateway && strncmp(c->metrics.pushgateway, "http://", 7) != 0 &&
		    strncmp(c->metrics.pushgateway, "https://", 8) != 0) {
			rc = bad(err, path.ptr, "metrics.pushgateway",
				 "expected an http:// or https:// URL");
			goto out;
		}
		if (c->reports.compare_url && strncmp(c->reports.compare_url, "http://", 7) != 0 &&
		    strncmp(c->reports.compare_url, "https://", 8) != 0) {
			rc = bad(err, path.ptr, "reports.compare_url",
				 "expected an http:// or https:// URL");
			goto out;
		}
		if ((rc = check_url_password(c->metrics.pushgateway, path.ptr,
					     "metrics.pushgateway", err)) < 0 ||
		    (rc = check_url_password(c->reports.compare_url, path.ptr,
					     "reports.compare_url", err)) < 0 ||
		    (rc = check_url_password(c->reports.base_url, path.ptr, "reports.base_url",
					     err)) < 0)
			goto out;
	}
	c->path = buf_detach(&path, NULL);
out:
	if (rc == 0)
		rc = defaults_strings(c, err);
	json_decref(root);
	buf_release(&path);
	if (rc < 0)
		config_release(c);
	return rc;
}

/* A folder we can list: exists, is a directory, readable and searchable. */
static int check_dir(const char *dir, const char *path, const char *at, const char *what,
		     pr_error *err)
{
	struct stat st;
	char why[512];

	if (stat(dir, &st) < 0) {
		snprintf(why, sizeof(why), "%s '%.300s': %s", what, dir, strerror(errno));
		return bad(err, path, at, why);
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, sizeof(why), "%s '%.300s': not a directory", what, dir);
		return bad(err, path, at, why);
	}
	if (access(dir, R_OK | X_OK) < 0) {
		snprintf(why, sizeof(why), "%s '%.300s': %s", what, dir, strerror(errno));
		return bad(err, path, at, why);
	}
	return 0;
}

/*
 * A secret file here, read as the job that needs it will read it
 * (secret_read: owner-only, a regular file, one line, not empty, not
 * oversized), and forgotten: refused at night by collect or the pager,
 * it was reported valid. One that is not here, or belongs to another
 * user, is the running host's to judge (CI checks a configuration whose
 * secrets are mounted only where it runs; sudo checks files of the
 * service's user): only what would be refused from any user is, a link
 * or other than a regular file, or a mode open to group or others.
 * Variables are not read, for the same reason.
 */
static int check_secret(const char *file, const char *path, const char *at, pr_error *err)
{
	pr_error e = PR_ERROR_INIT;
	char *secret = NULL;
	struct stat st;

	if (!file || lstat(file, &st) < 0)
		return 0;
	if (secret_file_kind(file, &st, &e) < 0)
		return bad(err, path, at, e.msg);
	if (st.st_uid != geteuid())
		return 0;
	if (secret_read(&secret, NULL, file, &e) < 0)
		return e.code == PR_ENOMEM ? pr_error_set(err, PR_ENOMEM, "%s", e.msg)
					   : bad(err, path, at, e.msg);
	secret_free(secret);
	return 0;
}

static int check_s3_secrets(const config_s3 *s, const char *path, const char *where, pr_error *err)
{
	char at[300];
	int rc;

	snprintf(at, sizeof(at), "%s.access_key_id_file", where);
	if ((rc = check_secret(s->access_key_id_file, path, at, err)) < 0)
		return rc;
	snprintf(at, sizeof(at), "%s.secret_access_key_file", where);
	if ((rc = check_secret(s->secret_access_key_file, path, at, err)) < 0)
		return rc;
	snprintf(at, sizeof(at), "%s.session_token_file", where);
	return check_secret(s->session_token_file, path, at, err);
}

/* Every secret file the configuration names (check_secret). */
static int check_secrets(const config *c, pr_error *err)
{
	char at[300];
	int rc;

	for (size_t i = 0; i < c->nservices; i++)
		for (size_t k = 0; k < c->services[i].nsources; k++) {
			const config_source *src = &c->services[i].sources[k];
			snprintf(at, sizeof(at), "%s.secret_file", src->label);
			if ((rc = check_secret(src->secret_file, c->path, at, err)) < 0 ||
			    (rc = check_s3_secrets(&src->s3, c->path, src->label, err)) < 0)
				return rc;
		}
	for (size_t i = 0; i < c->paging.ntargets; i++) {
		snprintf(at, sizeof(at), "paging.targets.%.64s.secret_file",
			 c->paging.targets[i].name);
		if ((rc = check_secret(c->paging.targets[i].secret_file, c->path, at, err)) < 0)
			return rc;
	}
	if ((rc = check_s3_secrets(&c->blobs.s3, c->path, "blobs", err)) < 0)
		return rc;
	return check_secret(c->serve.agent_secret_file, c->path, "serve.agent_secret_file", err);
}

int config_check_paths(const config *c, pr_error *err)
{
	char at[256];
	int rc;

	if ((rc = check_secrets(c, err)) < 0)
		return rc;
	for (size_t i = 0; i < c->nservices; i++) {
		const config_service *s = &c->services[i];
		snprintf(at, sizeof(at), "services.%.64s.source.dir", s->name);
		if (s->source_dir &&
		    (rc = check_dir(s->source_dir, c->path, at, "drop folder", err)) < 0)
			return rc;
		snprintf(at, sizeof(at), "services.%.64s.repo", s->name);
		if (s->repo && (rc = check_dir(s->repo, c->path, at, "repository", err)) < 0)
			return rc;
		for (size_t k = 0; k < s->nsources; k++) {
			const config_source *src = &s->sources[k];
			snprintf(at, sizeof(at), "%s.dir", src->label);
			if (src->dir &&
			    (rc = check_dir(src->dir, c->path, at, "drop folder", err)) < 0)
				return rc;
			snprintf(at, sizeof(at), "%s.file_sd", src->label);
			for (size_t f = 0; f < src->nfile_sd; f++)
				if (access(src->file_sd[f], R_OK) < 0) {
					char why[512];
					snprintf(why, sizeof(why), "file_sd '%.300s': %s",
						 src->file_sd[f], strerror(errno));
					return bad(err, c->path, at, why);
				}
		}
	}
	return 0;
}

static void s3_release(config_s3 *s)
{
	free(s->endpoint);
	free(s->bucket);
	free(s->prefix);
	free(s->region);
	free(s->access_key_id_env);
	free(s->access_key_id_file);
	free(s->secret_access_key_env);
	free(s->secret_access_key_file);
	free(s->session_token_env);
	free(s->session_token_file);
}

void config_release(config *c)
{
	for (size_t i = 0; i < c->nservices; i++) {
		config_service *s = &c->services[i];
		free(s->name);
		free(s->team);
		for (size_t k = 0; k < s->ntypes; k++)
			free(s->types[k]);
		free(s->types);
		free(s->source_dir);
		free(s->repo);
		free_names(s->page, s->npage);
		for (size_t k = 0; k < s->nsources; k++) {
			config_source *src = &s->sources[k];
			free(src->label);
			free(src->dir);
			free_names(src->targets, src->ntargets);
			free_names(src->file_sd, src->nfile_sd);
			free(src->scheme);
			free(src->release_label);
			free(src->commit_label);
			free(src->host_label);
			free(src->url);
			free(src->tenant);
			free(src->selector);
			free(src->version_label);
			for (size_t p = 0; p < src->nprofiles; p++) {
				free(src->profiles[p].type);
				free(src->profiles[p].id);
			}
			free(src->profiles);
			free(src->ca_file);
			free(src->username);
			free(src->secret_env);
			free(src->secret_file);
			s3_release(&src->s3);
		}
		free(s->sources);
	}
	for (size_t i = 0; i < c->paging.ntargets; i++) {
		config_target *t = &c->paging.targets[i];
		free(t->name);
		free(t->url);
		free(t->secret_env);
		free(t->secret_file);
	}
	free(c->paging.targets);
	free_names(c->paging.default_targets, c->paging.ndefault);
	for (size_t i = 0; i < c->paging.nteams; i++) {
		free(c->paging.teams[i].team);
		free_names(c->paging.teams[i].targets, c->paging.teams[i].ntargets);
	}
	for (size_t i = 0; i < c->snapshot.nservices; i++) {
		config_snapshot_service *s = &c->snapshot.services[i];
		free(s->name);
		free_names(s->processes, s->nprocesses);
		free(s->cgroup);
	}
	free(c->snapshot.services);
	c->snapshot.services = NULL;
	free(c->serve.listen);
	free(c->serve.alert_service_label);
	free_names(c->serve.alert_host_labels, c->serve.nalert_host_labels);
	free_serve_agents(&c->serve);
	free(c->serve.agent_secret_env);
	free(c->serve.agent_secret_file);
	memset(&c->serve, 0, sizeof(c->serve));
	release_escalate(&c->escalate);
	c->snapshot.nservices = 0;
	free(c->paging.teams);
	free(c->metrics.pushgateway);
	free(c->metrics.instance);
	free(c->reports.dir);
	free(c->reports.base_url);
	free(c->reports.compare_url);
	s3_release(&c->blobs.s3);
	free(c->blobs.ca_file);
	memset(&c->blobs, 0, sizeof(c->blobs));
	memset(&c->paging, 0, sizeof(c->paging));
	memset(&c->metrics, 0, sizeof(c->metrics));
	memset(&c->reports, 0, sizeof(c->reports));
	free(c->services);
	c->services = NULL;
	c->nservices = 0;
	free(c->path);
	c->path = NULL;
}

/* ---- the reference ------------------------------------------------------ */

/* What a default looks like in the reference: read from a defaulted struct. */
static int put_default(buf *b, const field *f, const void *base)
{
	const void *p = (const char *)base + f->off;

	/* A value is shown as code; a default that is a sentence, as it is. */
	if (f->def)
		return strchr("\"[0123456789", f->def[0]) ? buf_printf(b, "`%s`", f->def)
							   : buf_puts(b, f->def);
	switch (f->kind) {
	case 's':
		return *(char *const *)p ? buf_printf(b, "`\"%s\"`", *(char *const *)p)
					 : buf_puts(b, "none");
	case 'b':
		return buf_puts(b, *(const bool *)p ? "`true`" : "`false`");
	case 'f':
		return buf_printf(b, "`%g`", *(const double *)p * (f->unit == 'p' ? 100 : 1));
	case 'i':
		if (f->unit == 'd')
			return buf_printf(b, "`%lld`", (long long)(*(const int64_t *)p / DAY_US));
		if (f->unit == 's')
			return buf_printf(b, "`%lld`", (long long)(*(const int64_t *)p / 1000000));
		return buf_printf(b, "`%llu`", f->width == 8
						    ? (unsigned long long)*(const uint64_t *)p
						    : (unsigned long long)*(const uint32_t *)p);
	default:
		return buf_puts(b, "none");
	}
}

static int put_type(buf *b, const field *f)
{
	switch (f->kind) {
	case 'i':
		return buf_printf(b, "integer, %.0f to %.0f", f->lo, f->hi);
	case 'f':
		return buf_printf(b, "number, %g to %g", f->lo, f->hi);
	case 's':
		return buf_puts(b, "string");
	case 'b':
		return buf_puts(b, "boolean");
	case 'o':
		return buf_puts(b, "object");
	case 'm':
		return buf_puts(b, "object of objects by name");
	case 'l':
		return buf_puts(b, "array of objects");
	default:
		return buf_puts(b, f->type);
	}
}

/* The defaulted struct a table's offsets point into. */
typedef struct ref_bases {
	const config *cfg;
	const config_service *service;
	const config_source *source;
	const config_target *target;
	const config_snapshot_service *snapshot_service;
	const config_escalate_service *escalate_service;
} ref_bases;

static const void *ref_base(const ref_bases *rb, const field *table)
{
	if (table == service_keys || table == tiers_keys)
		return rb->service;
	if (table == source_keys)
		return rb->source;
	if (table == target_keys)
		return rb->target;
	if (table == snapshot_service_keys)
		return rb->snapshot_service;
	if (table == escalate_service_keys)
		return rb->escalate_service;
	return rb->cfg;
}

static int put_rows(buf *b, const field *table, const void *base, const char *prefix,
		    const ref_bases *rb, pr_error *err)
{
	char path[256];
	int rc;

	for (const field *f = table; f->key; f++) {
		snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "." : "", f->key);
		/* A cell cannot hold a '|', and every key says what it means. */
		if (!f->doc || !*f->doc || strchr(f->doc, '|') ||
		    (f->def && strchr(f->def, '|')) || (f->kind == 'a' && !f->type))
			return pr_error_set(err, PR_ERR, "config reference: '%s' has no meaning, "
					    "or a '|'", path);
		bool nested = f->kind == 'o' || f->kind == 'm' || f->kind == 'l';
		if (buf_printf(b, "| `%s` | ", path) < 0 || put_type(b, f) < 0 ||
		    buf_puts(b, " | ") < 0 || (!nested && put_default(b, f, base) < 0) ||
		    buf_printf(b, " | %s |\n", f->doc) < 0)
			return pr_error_set(err, PR_ENOMEM, "out of memory");
		if (nested) {
			char sub[300];
			snprintf(sub, sizeof(sub), "%s%s", path,
				 f->kind == 'm' ? ".NAME" : f->kind == 'l' ? "[]" : "");
			const void *in = f->kind == 'o' ? (const char *)base + f->off
							: ref_base(rb, f->sub);
			if ((rc = put_rows(b, f->sub, in, sub, rb, err)) < 0)
				return rc;
		}
	}
	return 0;
}

int config_reference(char **out, pr_error *err)
{
	config cfg;
	config_service service = {.tiers = {-1, -1, -1}};
	config_source source = {0};
	config_target target = {0};
	config_snapshot_service snapshot_service = {0};
	config_escalate_service escalate_service = {0};
	ref_bases rb = {&cfg, &service, &source, &target, &snapshot_service, &escalate_service};
	buf b = BUF_INIT;
	int rc;

	*out = NULL;
	if ((rc = config_load(&cfg, NULL, err)) < 0)
		return rc;
	source_defaults(&source);
	/* A service's plans and ceilings start from the section's. */
	escalate_service.level1 = cfg.escalate.level1;
	escalate_service.level2 = cfg.escalate.level2;
	escalate_service.load.max = cfg.escalate.load.max;
	escalate_service.memory.max = cfg.escalate.memory.max;
	rc = buf_puts(&b, "# Configuration reference\n\n"
			  "Back to the [README](../README.md#the-configuration-file).\n\n"
			  "Every key of the configuration file, written by `profreg config "
			  "reference` from the tables the configuration loader reads (regenerate "
			  "this file with it; a test checks that they agree). Every key is "
			  "optional unless its meaning says otherwise; a key not listed here is "
			  "refused with its JSON path. `NAME` stands for a name you choose, `[]` "
			  "for each element of an array. The file is UTF-8 JSON; a byte order "
			  "mark at its start, as Windows editors write one, is skipped. A URL "
			  "with a password in it (`http://user:password@host/`) is refused, by "
			  "its key, unless it is https or plain http to loopback (127.0.0.0/8, "
			  "[::1], localhost), the rule for `secret_env` and `secret_file`: plain "
			  "http would carry the password in cleartext. Better still, give it "
			  "with `secret_env` or `secret_file`.\n");
	for (const field *f = top_keys; rc == 0 && f->key; f++) {
		if (buf_printf(&b, "\n## `%s`\n\n%c%s.\n\n| key | type | default | meaning |\n"
				   "| --- | --- | --- | --- |\n",
			       f->key, toupper((unsigned char)f->doc[0]), f->doc + 1) < 0) {
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
			break;
		}
		char top[64];
		snprintf(top, sizeof(top), "%s%s", f->key, f->kind == 'm' ? ".NAME" : "");
		rc = put_rows(&b, f->sub, f->kind == 'o' ? (const char *)&cfg + f->off
							 : ref_base(&rb, f->sub), top, &rb, err);
	}
	if (rc == 0 && !(*out = buf_detach(&b, NULL)))
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
	buf_release(&b);
	config_release(&cfg);
	return rc;
}
