/*
 * config.c: load and validate the configuration file (see config.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/config.h"
#include "common/buf.h"
#include "pipeline/ingest.h"
#include "jobs/secret.h"
#include "pipeline/targets.h"
#include "pipeline/blob_s3.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#define CONFIG_MAX (4u << 20)
#define DAY_US (86400LL * 1000000LL)

typedef struct field {
	const char *key;
	int kind;        /* 'i' integer, 'f' number, 'o' object, 's' string, 'b' boolean */
	double lo, hi;
	void *target;    /* uint64_t*, uint32_t*, int64_t* (days), double*, char**, bool* */
	int width;       /* integer target size in bytes; -1: days into int64_t us */
	const struct field *sub;
} field;

static int bad(pr_error *err, const char *path, const char *at, const char *why)
{
	return pr_error_set(err, PR_EUSAGE, "config '%s': %s: %s", path, at, why);
}

static int apply(json_t *obj, const field *fields, const char *path, const char *prefix,
		 pr_error *err)
{
	const char *key;
	json_t *v;
	char at[256];
	int rc;

	json_object_foreach(obj, key, v) {
		const field *f;
		for (f = fields; f->key && strcmp(f->key, key) != 0; f++)
			;
		snprintf(at, sizeof(at), "%s%s%.64s", prefix, *prefix ? "." : "", key);
		if (!f->key)
			return bad(err, path, at, "unknown key");
		if (f->kind == 'o') {
			if (!json_is_object(v))
				return bad(err, path, at, "expected an object");
			if ((rc = apply(v, f->sub, path, at, err)) < 0)
				return rc;
			continue;
		}
		if (f->kind == 's') {
			if (!json_is_string(v) || json_string_length(v) == 0)
				return bad(err, path, at, "expected a non-empty string");
			free(*(char **)f->target);
			if (!(*(char **)f->target = strdup(json_string_value(v))))
				return pr_error_set(err, PR_ENOMEM, "out of memory");
			continue;
		}
		if (f->kind == 'a')
			continue; /* read by the caller */
		if (f->kind == 'b') {
			if (!json_is_boolean(v))
				return bad(err, path, at, "expected true or false");
			*(bool *)f->target = json_is_true(v);
			continue;
		}
		if (f->kind == 'i' ? !json_is_integer(v) : !json_is_number(v))
			return bad(err, path, at,
				   f->kind == 'i' ? "expected an integer" : "expected a number");
		double d = json_number_value(v);
		if (!(d >= f->lo && d <= f->hi)) {
			char why[96];
			snprintf(why, sizeof(why), "expected a value from %g to %g", f->lo, f->hi);
			return bad(err, path, at, why);
		}
		if (f->kind == 'f')
			*(double *)f->target = d;
		else if (f->width == -1)
			*(int64_t *)f->target = (int64_t)json_integer_value(v) * DAY_US;
		else if (f->width == -2)
			*(int64_t *)f->target = (int64_t)json_integer_value(v);
		else if (f->width == 8)
			*(uint64_t *)f->target = (uint64_t)json_integer_value(v);
		else
			*(uint32_t *)f->target = (uint32_t)json_integer_value(v);
	}
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

/* A service's own tiers: -1 inherits the global value. */
static int load_tiers(config_tiers *t, json_t *v, const char *path, const char *at,
		      pr_error *err)
{
	const field f[] = {
		{"hot_days", 'i', 0, 36500, &t->hot_us, -1, NULL},
		{"summary_days", 'i', 0, 36500, &t->summary_us, -1, NULL},
		{"summary_top", 'i', 0, 1000000, &t->summary_top, -2, NULL},
		{NULL, 0, 0, 0, NULL, 0, NULL},
	};
	if (!json_is_object(v))
		return bad(err, path, at, "expected an object");
	return apply(v, f, path, at, err);
}

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
		{src->access_key_id_env, src->access_key_id_file},
		{src->secret_access_key_env, src->secret_access_key_file},
		{src->session_token_env, src->session_token_file},
	};
	static const char *const names[] = {"access key id", "secret access key",
					    "session token"};
	blob_s3_opts o = {.endpoint = src->endpoint, .bucket = src->bucket,
			  .prefix = src->prefix, .region = src->region, .access_key_id = "-",
			  .secret_access_key = "-"};
	pr_error e2 = PR_ERROR_INIT;
	char at[340];
	const char *missing = !src->endpoint ? "endpoint"
			      : !src->bucket ? "bucket"
			      : !src->region ? "region" : NULL;

	if (missing) {
		snprintf(at, sizeof(at), "%s.%s", src->label, missing);
		return bad(err, path, at, "required for an s3_prefix source");
	}
	if (addressing && strcmp(addressing, "path") != 0 && strcmp(addressing, "virtual") != 0) {
		snprintf(at, sizeof(at), "%s.addressing", src->label);
		return bad(err, path, at, "expected \"path\" or \"virtual\"");
	}
	src->virtual_host = addressing && strcmp(addressing, "virtual") == 0;
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
	if (!secret_url_safe(src->endpoint) && !localhost_name(src->endpoint)) {
		snprintf(at, sizeof(at), "%s.endpoint", src->label);
		return bad(err, path, at,
			   "expected an https:// URL (plain http only to 127.0.0.1, [::1], "
			   "localhost or a name under .localhost)");
	}
	return 0;
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
	char at[300], *type = NULL, *auth = NULL, *addressing = NULL;
	json_t *v;
	const char *key;
	uint32_t slot_s = 3600;
	int rc;

	snprintf(at, sizeof(at), "services.%.64s.sources[%zu]", s->name, idx);
	if (!(src->label = strdup(at)))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	src->seconds = 10;
	src->connect_timeout_ms = 5000;
	src->timeout_ms = 30000;
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
		if (!known)
			return bad(err, path, at, "unknown key");
	}
	{
		const field f[] = {
			{"dir", 's', 0, 0, &src->dir, 0, NULL},
			{"scheme", 's', 0, 0, &src->scheme, 0, NULL},
			{"seconds", 'i', 1, 3600, &src->seconds, 4, NULL},
			{"release_label", 's', 0, 0, &src->release_label, 0, NULL},
			{"commit_label", 's', 0, 0, &src->commit_label, 0, NULL},
			{"host_label", 's', 0, 0, &src->host_label, 0, NULL},
			{"url", 's', 0, 0, &src->url, 0, NULL},
			{"tenant", 's', 0, 0, &src->tenant, 0, NULL},
			{"selector", 's', 0, 0, &src->selector, 0, NULL},
			{"version_label", 's', 0, 0, &src->version_label, 0, NULL},
			{"slot_s", 'i', 60, 86400, &slot_s, 4, NULL},
			{"ca_file", 's', 0, 0, &src->ca_file, 0, NULL},
			{"auth", 's', 0, 0, &auth, 0, NULL},
			{"username", 's', 0, 0, &src->username, 0, NULL},
			{"secret_env", 's', 0, 0, &src->secret_env, 0, NULL},
			{"secret_file", 's', 0, 0, &src->secret_file, 0, NULL},
			{"connect_timeout_ms", 'i', 1, 600000, &src->connect_timeout_ms, 4, NULL},
			{"timeout_ms", 'i', 1, 3600000, &src->timeout_ms, 4, NULL},
			{"endpoint", 's', 0, 0, &src->endpoint, 0, NULL},
			{"bucket", 's', 0, 0, &src->bucket, 0, NULL},
			{"prefix", 's', 0, 0, &src->prefix, 0, NULL},
			{"region", 's', 0, 0, &src->region, 0, NULL},
			{"addressing", 's', 0, 0, &addressing, 0, NULL},
			{"access_key_id_env", 's', 0, 0, &src->access_key_id_env, 0, NULL},
			{"access_key_id_file", 's', 0, 0, &src->access_key_id_file, 0, NULL},
			{"secret_access_key_env", 's', 0, 0, &src->secret_access_key_env, 0, NULL},
			{"secret_access_key_file", 's', 0, 0, &src->secret_access_key_file, 0,
			 NULL},
			{"session_token_env", 's', 0, 0, &src->session_token_env, 0, NULL},
			{"session_token_file", 's', 0, 0, &src->session_token_file, 0, NULL},
			{"type", 's', 0, 0, &type, 0, NULL},
			{"types", 'a', 0, 0, NULL, 0, NULL},
			{"targets", 'a', 0, 0, NULL, 0, NULL},
			{"file_sd", 'a', 0, 0, NULL, 0, NULL},
			{"profile_types", 'a', 0, 0, NULL, 0, NULL},
			{NULL, 0, 0, 0, NULL, 0, NULL},
		};
		if ((rc = apply(obj, f, path, src->label, err)) < 0)
			goto out;
	}
	src->slot_us = (int64_t)slot_s * 1000000;
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
	if (src->kind == CONFIG_SRC_S3_PREFIX)
		rc = check_s3_prefix(src, addressing, path, err);
	else if (src->kind != CONFIG_SRC_DIR)
		rc = load_profiles(src, s, json_object_get(obj, "types"),
				   json_object_get(obj, "profile_types"), path, err);
out:
	free(type);
	free(auth);
	free(addressing);
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

/* One entry of "services": strings, an array of types, a source object. */
static int load_service(config_service *s, const char *name, json_t *obj, const char *path,
			pr_error *err)
{
	static const char *const keys[] = {"team", "types", "source", "repo", "page",
					   "retention", "sources", "max_concurrent", NULL};
	const char *key;
	json_t *v;
	char at[256];

	memset(s, 0, sizeof(*s));
	s->tiers.hot_us = s->tiers.summary_us = s->tiers.summary_top = -1;
	if (!(s->name = strdup(name)))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	snprintf(at, sizeof(at), "services.%.64s", name);
	/* The same rule as `service add`: a name the CLI refuses can match nothing. */
	if (!db_service_name_valid(name))
		return bad(err, path, at, "not a valid service name (1 to 128 letters, digits, "
			   "'.', '_' or '-', starting with a letter or digit)");
	if (!json_is_object(obj))
		return bad(err, path, at, "expected an object");
	json_object_foreach(obj, key, v) {
		size_t k;
		for (k = 0; keys[k] && strcmp(keys[k], key) != 0; k++)
			;
		snprintf(at, sizeof(at), "services.%.64s.%.64s", name, key);
		if (!keys[k])
			return bad(err, path, at, "unknown key");
		if ((k == 0 || k == 3) && !json_is_string(v))
			return bad(err, path, at, "expected a string");
		if (k == 0 && !(s->team = dup_string(v)))
			return pr_error_set(err, PR_ENOMEM, "out of memory");
		if (k == 3 && !(s->repo = dup_string(v)))
			return pr_error_set(err, PR_ENOMEM, "out of memory");
		if (k == 1) {
			size_t i;
			json_t *t;
			if (!json_is_array(v) || json_array_size(v) == 0)
				return bad(err, path, at,
					   "expected a non-empty array of profile types");
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
		if (k == 4) {
			int rc = load_names(&s->page, &s->npage, v, path, at, err);
			if (rc < 0)
				return rc;
			s->page_set = true;
		}
		if (k == 5) {
			int rc = load_tiers(&s->tiers, v, path, at, err);
			if (rc < 0)
				return rc;
		}
		if (k == 6 || k == 7)
			continue; /* read below, once "types" is known */
		if (k == 2) {
			json_t *dir = json_object_get(v, "dir");
			if (!json_is_object(v) || json_object_size(v) != 1 || !json_is_string(dir))
				return bad(err, path, at, "expected {\"dir\": \"PATH\"}");
			if (!(s->source_dir = dup_string(dir)))
				return pr_error_set(err, PR_ENOMEM, "out of memory");
		}
	}
	if (!s->ntypes) {
		if (!(s->types = calloc(1, sizeof(*s->types))) || !(s->types[0] = strdup("cpu")))
			return pr_error_set(err, PR_ENOMEM, "out of memory");
		s->ntypes = 1;
	}
	if ((v = json_object_get(obj, "max_concurrent"))) {
		snprintf(at, sizeof(at), "services.%.64s.max_concurrent", name);
		if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 64)
			return bad(err, path, at, "expected an integer from 1 to 64");
		s->max_concurrent = (uint32_t)json_integer_value(v);
	}
	if ((v = json_object_get(obj, "sources")))
		return load_sources(s, v, path, err);
	return 0;
}

static int load_services(config *c, json_t *obj, const char *path, pr_error *err)
{
	const char *name;
	json_t *v;
	int rc;

	if (!json_is_object(obj))
		return bad(err, path, "services", "expected an object of services by name");
	if (json_object_size(obj) &&
	    !(c->services = calloc(json_object_size(obj), sizeof(*c->services))))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	json_object_foreach(obj, name, v) {
		rc = load_service(&c->services[c->nservices], name, v, path, err);
		c->nservices++;
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int load_target(config_target *t, const char *name, json_t *obj, const char *path,
		       pr_error *err)
{
	static const char *const kinds[] = {"pagerduty", "alertmanager", "webhook", NULL};
	char *type = NULL;
	char at[256];
	int rc;

	t->name = strdup(name);
	if (!t->name)
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	snprintf(at, sizeof(at), "paging.targets.%.64s", name);
	if (!json_is_object(obj))
		return bad(err, path, at, "expected an object");
	{
		const field f[] = {
			{"type", 's', 0, 0, &type, 0, NULL},
			{"url", 's', 0, 0, &t->url, 0, NULL},
			{"secret_env", 's', 0, 0, &t->secret_env, 0, NULL},
			{"secret_file", 's', 0, 0, &t->secret_file, 0, NULL},
			{NULL, 0, 0, 0, NULL, 0, NULL},
		};
		if ((rc = apply(obj, f, path, at, err)) < 0)
			goto out;
	}
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
	}
out:
	free(type);
	return rc;
}

/*
 * "paging": scalar settings through the field table; "targets" and
 * "teams" have names for keys and "default" is a list, so they are taken
 * out first and read here.
 */
static int load_paging(config *c, json_t *obj, const char *path, pr_error *err)
{
	config_paging *p = &c->paging;
	json_t *targets, *teams, *def;
	char *sev = NULL;
	const char *name;
	json_t *v;
	int rc = 0;

	if (!json_is_object(obj))
		return bad(err, path, "paging", "expected an object");
	targets = json_incref(json_object_get(obj, "targets"));
	teams = json_incref(json_object_get(obj, "teams"));
	def = json_incref(json_object_get(obj, "default"));
	json_object_del(obj, "targets");
	json_object_del(obj, "teams");
	json_object_del(obj, "default");
	{
		const field f[] = {
			{"min_severity", 's', 0, 0, &sev, 0, NULL},
			{"max_attempts", 'i', 1, 100, &p->max_attempts, 4, NULL},
			{"connect_timeout_ms", 'i', 1, 600000, &p->connect_timeout_ms, 4, NULL},
			{"timeout_ms", 'i', 1, 600000, &p->timeout_ms, 4, NULL},
			{"backoff_ms", 'i', 0, 600000, &p->backoff_ms, 4, NULL},
			{"max_backoff_ms", 'i', 0, 3600000, &p->max_backoff_ms, 4, NULL},
			{"alert_hours", 'i', 1, 8760, &p->alert_hours, 4, NULL},
			{NULL, 0, 0, 0, NULL, 0, NULL},
		};
		if ((rc = apply(obj, f, path, "paging", err)) < 0)
			goto out;
	}
	if (sev && (stats_severity_parse(&p->min_severity, sev) < 0 ||
		    p->min_severity == STATS_SEV_NONE)) {
		rc = bad(err, path, "paging.min_severity",
			 "expected low, medium, high or critical");
		goto out;
	}
	if (targets) {
		if (!json_is_object(targets)) {
			rc = bad(err, path, "paging.targets",
				 "expected an object of targets by name");
			goto out;
		}
		if (json_object_size(targets) &&
		    !(p->targets = calloc(json_object_size(targets), sizeof(*p->targets)))) {
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
			goto out;
		}
		json_object_foreach(targets, name, v) {
			rc = load_target(&p->targets[p->ntargets++], name, v, path, err);
			if (rc < 0)
				goto out;
		}
	}
	if (def && (rc = load_names(&p->default_targets, &p->ndefault, def, path,
				    "paging.default", err)) < 0)
		goto out;
	if (teams) {
		if (!json_is_object(teams)) {
			rc = bad(err, path, "paging.teams",
				 "expected an object of target lists by team");
			goto out;
		}
		if (json_object_size(teams) &&
		    !(p->teams = calloc(json_object_size(teams), sizeof(*p->teams)))) {
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
			goto out;
		}
		json_object_foreach(teams, name, v) {
			config_route *r = &p->teams[p->nteams++];
			char at[256];
			snprintf(at, sizeof(at), "paging.teams.%.64s", name);
			if (!(r->team = strdup(name))) {
				rc = pr_error_set(err, PR_ENOMEM, "out of memory");
				goto out;
			}
			if ((rc = load_names(&r->targets, &r->ntargets, v, path, at, err)) < 0)
				goto out;
		}
	}
out:
	free(sev);
	json_decref(targets);
	json_decref(teams);
	json_decref(def);
	return rc;
}

/* One entry of snapshot.services: how the service's processes are known. */
static int load_snapshot_service(config_snapshot_service *s, const char *name, json_t *obj,
				 const char *path, pr_error *err)
{
	json_t *procs = json_object_get(obj, "processes"), *v;
	const char *key;
	char at[256];
	size_t i;

	if (!(s->name = strdup(name)))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	snprintf(at, sizeof(at), "snapshot.services.%.64s", name);
	if (!db_service_name_valid(name))
		return bad(err, path, at, "not a valid service name (1 to 128 letters, digits, "
			   "'.', '_' or '-', starting with a letter or digit)");
	if (!json_is_object(obj))
		return bad(err, path, at, "expected an object");
	json_object_foreach(obj, key, v) {
		snprintf(at, sizeof(at), "snapshot.services.%.64s.%.64s", name, key);
		if (strcmp(key, "processes") != 0 && strcmp(key, "cgroup") != 0 &&
		    strcmp(key, "full_cmdline") != 0)
			return bad(err, path, at, "unknown key");
	}
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
	if ((v = json_object_get(obj, "full_cmdline"))) {
		snprintf(at, sizeof(at), "snapshot.services.%.64s.full_cmdline", name);
		if (!json_is_boolean(v))
			return bad(err, path, at, "expected true or false");
		s->full_cmdline = json_is_true(v);
	}
	return 0;
}

/* "snapshot": scalar settings through the field table, then the services by name. */
static int load_snapshot(config *c, json_t *obj, const char *path, pr_error *err)
{
	config_snapshot *s = &c->snapshot;
	json_t *svcs, *v;
	const char *name;
	int rc = 0;

	if (!json_is_object(obj))
		return bad(err, path, "snapshot", "expected an object");
	svcs = json_incref(json_object_get(obj, "services"));
	json_object_del(obj, "services");
	{
		const field f[] = {
			{"time_budget_ms", 'i', 100, 600000, &s->time_budget_ms, 4, NULL},
			{"size_budget_bytes", 'i', 65536, 256 << 20, &s->size_budget_bytes, 8,
			 NULL},
			{"sample_ms", 'i', 10, 60000, &s->sample_ms, 4, NULL},
			{"top_threads", 'i', 1, 10000, &s->top_threads, 4, NULL},
			{"top_processes", 'i', 1, 1000, &s->top_processes, 4, NULL},
			{"file_max_bytes", 'i', 4096, 256 << 20, &s->file_max_bytes, 8, NULL},
			{"kmsg_bytes", 'i', 0, 256 << 20, &s->kmsg_bytes, 8, NULL},
			{"max_tasks", 'i', 1, 10000000, &s->max_tasks, 4, NULL},
			{"nice", 'i', 0, 19, &s->nice, 4, NULL},
			{"cooldown_s", 'i', 0, 86400 * 7, &s->cooldown_s, 4, NULL},
			{NULL, 0, 0, 0, NULL, 0, NULL},
		};
		if ((rc = apply(obj, f, path, "snapshot", err)) < 0)
			goto out;
	}
	if (svcs) {
		if (!json_is_object(svcs)) {
			rc = bad(err, path, "snapshot.services",
				 "expected an object of services by "
				 "name");
			goto out;
		}
		if (json_object_size(svcs) &&
		    !(s->services = calloc(json_object_size(svcs), sizeof(*s->services)))) {
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
			goto out;
		}
		json_object_foreach(svcs, name, v) {
			rc = load_snapshot_service(&s->services[s->nservices++], name, v, path,
						   err);
			if (rc < 0)
				goto out;
		}
	}
out:
	json_decref(svcs);
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
		s->nagents = i + 1;
		if (!(s->agents[i].hosts = strdup(hosts)) || !(s->agents[i].url = strdup(url)))
			return pr_error_set(err, PR_ENOMEM, "out of memory");
	}
	return 0;
}

/* "serve": numbers and strings through the field table, the host labels by hand. */
static int load_serve(config *c, json_t *obj, const char *path, pr_error *err)
{
	config_serve *s = &c->serve;
	json_t *labels, *agents;
	int rc = 0;

	if (!json_is_object(obj))
		return bad(err, path, "serve", "expected an object");
	labels = json_incref(json_object_get(obj, "alert_host_labels"));
	json_object_del(obj, "alert_host_labels");
	agents = json_incref(json_object_get(obj, "agents"));
	json_object_del(obj, "agents");
	{
		const field f[] = {
			{"listen", 's', 0, 0, &s->listen, 0, NULL},
			{"max_body_bytes", 'i', 256, 16 << 20, &s->max_body_bytes, 4, NULL},
			{"token_rate", 'i', 1, 1000000, &s->token_rate, 4, NULL},
			{"global_rate", 'i', 1, 1000000, &s->global_rate, 4, NULL},
			{"host_cooldown_s", 'i', 0, 86400, &s->host_cooldown_s, 4, NULL},
			{"default_seconds", 'i', 1, 600, &s->default_seconds, 4, NULL},
			{"max_seconds", 'i', 1, 600, &s->max_seconds, 4, NULL},
			{"max_hosts", 'i', 1, 64, &s->max_hosts, 4, NULL},
			{"session_max_s", 'i', 1, 86400, &s->session_max_s, 4, NULL},
			{"reescalate_s", 'i', 0, 7 * 86400, &s->reescalate_s, 4, NULL},
			{"max_sessions_service", 'i', 0, 100000, &s->max_sessions_service, 4,
			 NULL},
			{"max_sessions_fleet", 'i', 0, 100000, &s->max_sessions_fleet, 4, NULL},
			{"lease_s", 'i', 10, 86400, &s->lease_s, 4, NULL},
			{"alert_service_label", 's', 0, 0, &s->alert_service_label, 0, NULL},
			{"agent_secret_env", 's', 0, 0, &s->agent_secret_env, 0, NULL},
			{"agent_secret_file", 's', 0, 0, &s->agent_secret_file, 0, NULL},
			{NULL, 0, 0, 0, NULL, 0, NULL},
		};
		if ((rc = apply(obj, f, path, "serve", err)) < 0)
			goto out;
	}
	if (s->default_seconds > s->max_seconds) {
		rc = bad(err, path, "serve.default_seconds", "longer than serve.max_seconds");
		goto out;
	}
	if (labels) {
		free_names(s->alert_host_labels, s->nalert_host_labels);
		s->alert_host_labels = NULL;
		s->nalert_host_labels = 0;
		if (!json_is_array(labels) || json_array_size(labels) == 0) {
			rc = bad(err, path, "serve.alert_host_labels",
				 "expected a non-empty array of label names");
			goto out;
		}
		rc = load_names(&s->alert_host_labels, &s->nalert_host_labels, labels, path,
				"serve.alert_host_labels", err);
	}
	if (rc == 0 && agents)
		rc = load_serve_agents(s, agents, path, err);
out:
	json_decref(labels);
	json_decref(agents);
	return rc;
}

/*
 * "blobs": strings and numbers through the field table, then the choices
 * and what the S3 store needs.
 */
static int load_blobs(config *c, json_t *obj, const char *path, pr_error *err)
{
	config_blobs *b = &c->blobs;
	char *store = NULL, *addressing = NULL;
	const field f[] = {
		{"store", 's', 0, 0, &store, 0, NULL},
		{"endpoint", 's', 0, 0, &b->endpoint, 0, NULL},
		{"bucket", 's', 0, 0, &b->bucket, 0, NULL},
		{"prefix", 's', 0, 0, &b->prefix, 0, NULL},
		{"region", 's', 0, 0, &b->region, 0, NULL},
		{"addressing", 's', 0, 0, &addressing, 0, NULL},
		{"access_key_id_env", 's', 0, 0, &b->access_key_id_env, 0, NULL},
		{"access_key_id_file", 's', 0, 0, &b->access_key_id_file, 0, NULL},
		{"secret_access_key_env", 's', 0, 0, &b->secret_access_key_env, 0, NULL},
		{"secret_access_key_file", 's', 0, 0, &b->secret_access_key_file, 0, NULL},
		{"session_token_env", 's', 0, 0, &b->session_token_env, 0, NULL},
		{"session_token_file", 's', 0, 0, &b->session_token_file, 0, NULL},
		{"ca_file", 's', 0, 0, &b->ca_file, 0, NULL},
		{"connect_timeout_ms", 'i', 1, 600000, &b->connect_timeout_ms, 4, NULL},
		{"timeout_ms", 'i', 1, 3600000, &b->timeout_ms, 4, NULL},
		{NULL, 0, 0, 0, NULL, 0, NULL},
	};
	static const char *const pairs[][3] = {
		{"access_key_id_env", "access_key_id_file", "access key id"},
		{"secret_access_key_env", "secret_access_key_file", "secret access key"},
		{"session_token_env", "session_token_file", "session token"},
	};
	char *const *vals[][2] = {
		{&b->access_key_id_env, &b->access_key_id_file},
		{&b->secret_access_key_env, &b->secret_access_key_file},
		{&b->session_token_env, &b->session_token_file},
	};
	int rc;

	if (!json_is_object(obj))
		return bad(err, path, "blobs", "expected an object");
	if ((rc = apply(obj, f, path, "blobs", err)) < 0)
		goto out;
	if (store && strcmp(store, "s3") != 0 && strcmp(store, "local") != 0) {
		rc = bad(err, path, "blobs.store", "expected \"local\" or \"s3\"");
		goto out;
	}
	if (addressing && strcmp(addressing, "path") != 0 && strcmp(addressing, "virtual") != 0) {
		rc = bad(err, path, "blobs.addressing", "expected \"path\" or \"virtual\"");
		goto out;
	}
	b->s3 = store && strcmp(store, "s3") == 0;
	b->virtual_host = addressing && strcmp(addressing, "virtual") == 0;
	for (size_t i = 0; i < 3; i++)
		if (*vals[i][0] && *vals[i][1]) {
			char why[128];
			snprintf(why, sizeof(why), "set %s or %s, not both", pairs[i][0],
				 pairs[i][1]);
			rc = bad(err, path, "blobs", why);
			goto out;
		}
	b->s3_set = b->endpoint || b->bucket || b->region;
	if (b->s3 || b->s3_set) {
		blob_s3_opts o = {.endpoint = b->endpoint, .bucket = b->bucket, .prefix = b->prefix,
				  .region = b->region, .access_key_id = "-",
				  .secret_access_key = "-"};
		pr_error e2 = PR_ERROR_INIT;
		const char *missing = !b->endpoint ? "blobs.endpoint"
				      : !b->bucket ? "blobs.bucket"
				      : !b->region ? "blobs.region" : NULL;
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
		if (!secret_url_safe(b->endpoint) && !localhost_name(b->endpoint)) {
			rc = bad(err, path, "blobs.endpoint",
				 "expected an https:// URL (plain http only to 127.0.0.1, [::1], "
				 "localhost or a name under .localhost)");
			goto out;
		}
		b->s3_set = true;
	}
out:
	free(store);
	free(addressing);
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

/*
 * A nightly baseline reaches back window_days before the night it judges,
 * so its oldest captures are window_days + 1 old; past the summary tier
 * they are gone and the baseline would silently shrink.
 */
static int check_retention(const config *c, const char *path, pr_error *err)
{
	char why[160];

	for (size_t i = 0; i <= c->nservices; i++) {
		config_tiers t = i < c->nservices ? config_service_tiers(c, c->services[i].name)
						 : c->retention.tiers;
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

char *const *config_page_targets(const config *c, const char *service, size_t *n)
{
	const config_service *s = config_service_find(c, service);

	if (s && s->page_set) {
		*n = s->npage;
		return s->page;
	}
	if (s && s->team)
		for (size_t i = 0; i < c->paging.nteams; i++)
			if (strcmp(c->paging.teams[i].team, s->team) == 0) {
				*n = c->paging.teams[i].ntargets;
				return c->paging.teams[i].targets;
			}
	*n = c->paging.ndefault;
	return c->paging.default_targets;
}

config_tiers config_service_tiers(const config *c, const char *service)
{
	const config_service *s = config_service_find(c, service);
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
}

/* Defaults that are strings: set after the file, when it did not. */
static int defaults_strings(config *c, pr_error *err)
{
	config_serve *s = &c->serve;

	if ((!s->listen && !(s->listen = strdup("127.0.0.1:8070"))) ||
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

int config_load(config *c, const char *file, pr_error *err)
{
	buf path = BUF_INIT;
	json_error_t jerr;
	json_t *root = NULL;
	double abs_pp = -1, min_pp = -1;
	int rc = 0;

	memset(c, 0, sizeof(*c));
	defaults(c);
	if (!file)
		goto out; /* no file: defaults */
	if ((rc = buf_puts(&path, file)) < 0) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	{
		size_t min_captures = c->analysis.min_baseline;
		const field severity[] = {
			{"q_max", 'f', 1e-6, 0.5, &c->analysis.severity.q_max, 0, NULL},
			{"critical_pp", 'f', 0, 100, &c->analysis.severity.critical_pp, 0, NULL},
			{"critical_rel", 'f', 0, 1e6, &c->analysis.severity.critical_rel, 0, NULL},
			{"critical_rel_pp", 'f', 0, 100, &c->analysis.severity.critical_rel_pp, 0,
			 NULL},
			{"high_pp", 'f', 0, 100, &c->analysis.severity.high_pp, 0, NULL},
			{"medium_pp", 'f', 0, 100, &c->analysis.severity.medium_pp, 0, NULL},
			{NULL, 0, 0, 0, NULL, 0, NULL},
		};
		uint32_t minc = (uint32_t)min_captures;
		uint32_t looks = (uint32_t)c->analysis.max_looks;
		uint32_t confirm = (uint32_t)c->analysis.confirm_looks;
		const field analysis[] = {
			{"window_days", 'i', 1, 3650, &c->analysis.window_us, -1, NULL},
			{"min_captures", 'i', 2, 100000, &minc, 4, NULL},
			{"rel_margin", 'f', 0, 10, &c->analysis.rel_margin, 0, NULL},
			{"abs_margin_pp", 'f', 0, 100, &abs_pp, 0, NULL},
			{"min_share_pp", 'f', 0, 100, &min_pp, 0, NULL},
			{"fdr", 'f', 1e-6, 0.5, &c->analysis.fdr, 0, NULL},
			{"mw_alpha", 'f', 1e-9, 1, &c->analysis.mw_alpha, 0, NULL},
			{"max_looks", 'i', 1, 60, &looks, 4, NULL},
			{"spend_rho", 'f', 0.1, 10, &c->analysis.spend_rho, 0, NULL},
			{"confirm_looks", 'i', 1, 60, &confirm, 4, NULL},
			{"confirm_critical", 'b', 0, 0, &c->analysis.confirm_critical, 0, NULL},
			{"cost_tests", 'b', 0, 0, &c->analysis.cost_tests, 0, NULL},
			{"severity", 'o', 0, 0, NULL, 0, severity},
			{NULL, 0, 0, 0, NULL, 0, NULL},
		};
		const field limits[] = {
			{"max_input_bytes", 'i', 1, 1e15, &c->limits.max_input_bytes, 8, NULL},
			{"max_decompressed_bytes", 'i', 1, 1e15, &c->limits.max_decompressed_bytes,
			 8, NULL},
			{"max_samples", 'i', 1, 4294967295.0, &c->limits.max_samples, 8, NULL},
			{"max_depth", 'i', 1, 1 << 20, &c->limits.max_depth, 4, NULL},
			{"max_string_length", 'i', 16, 1 << 24, &c->limits.max_string_len, 4, NULL},
			{NULL, 0, 0, 0, NULL, 0, NULL},
		};
		config_retention *r = &c->retention;
		const field retention[] = {
			{"forensic_days", 'i', 0, 36500, &c->analysis.forensic_keep_us, -1, NULL},
			{"hot_days", 'i', 0, 36500, &r->tiers.hot_us, -1, NULL},
			{"summary_days", 'i', 0, 36500, &r->tiers.summary_us, -1, NULL},
			{"summary_top", 'i', 0, 1000000, &r->tiers.summary_top, -2, NULL},
			{"budget_bytes", 'i', 0, 1e18, &r->budget_bytes, 8, NULL},
			{"budget_rows", 'i', 0, 1e18, &r->budget_rows, 8, NULL},
			{"batch", 'i', 1, 100000, &r->batch, 4, NULL},
			{"after_nightly", 'b', 0, 0, &r->after_nightly, 0, NULL},
			{NULL, 0, 0, 0, NULL, 0, NULL},
		};
		const field metrics[] = {
			{"pushgateway", 's', 0, 0, &c->metrics.pushgateway, 0, NULL},
			{"instance", 's', 0, 0, &c->metrics.instance, 0, NULL},
			{NULL, 0, 0, 0, NULL, 0, NULL},
		};
		const field reports[] = {
			{"dir", 's', 0, 0, &c->reports.dir, 0, NULL},
			{"base_url", 's', 0, 0, &c->reports.base_url, 0, NULL},
			{NULL, 0, 0, 0, NULL, 0, NULL},
		};
		uint32_t cooldown_s = 300, budget_s = 900, retry_s = 5;
		const field collect[] = {
			{"max_concurrent", 'i', 1, 64, &c->collect.max_concurrent, 4, NULL},
			{"max_concurrent_fleet", 'i', 1, 256, &c->collect.max_concurrent_fleet, 4,
			 NULL},
			{"cooldown_s", 'i', 0, 86400, &cooldown_s, 4, NULL},
			{"budget_s", 'i', 1, 86400, &budget_s, 4, NULL},
			{"retries", 'i', 0, 20, &c->collect.retries, 4, NULL},
			{"retry_s", 'i', 1, 3600, &retry_s, 4, NULL},
			{NULL, 0, 0, 0, NULL, 0, NULL},
		};
		config_workers *w = &c->workers;
		const field workers[] = {
			{"enabled", 'b', 0, 0, &w->enabled, 0, NULL},
			{"lease_s", 'i', 1, 86400, &w->lease_s, 4, NULL},
			{"max_attempts", 'i', 1, 100, &w->max_attempts, 4, NULL},
			{"poll_ms", 'i', 10, 60000, &w->poll_ms, 4, NULL},
			{"task_timeout_s", 'i', 1, 7 * 86400, &w->task_timeout_s, 4, NULL},
			{"coordinator_works", 'b', 0, 0, &w->coordinator_works, 0, NULL},
			{NULL, 0, 0, 0, NULL, 0, NULL},
		};
		const field top[] = {
			{"collect", 'o', 0, 0, NULL, 0, collect},
			{"workers", 'o', 0, 0, NULL, 0, workers},
			{"metrics", 'o', 0, 0, NULL, 0, metrics},
			{"reports", 'o', 0, 0, NULL, 0, reports},
			{"retention", 'o', 0, 0, NULL, 0, retention},
			{"limits", 'o', 0, 0, NULL, 0, limits},
			{"analysis", 'o', 0, 0, NULL, 0, analysis},
			{NULL, 0, 0, 0, NULL, 0, NULL},
		};
		buf text = BUF_INIT;
		FILE *f = fopen(path.ptr, "rb");
		size_t n;
		char chunk[8192];

		if (!f) {
			rc = pr_error_set(err, PR_EUSAGE,
					  "cannot read config '%s': no such file or unreadable",
					  path.ptr);
			goto out;
		}
		buf_init(&text, CONFIG_MAX);
		while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
			if (buf_put(&text, chunk, n) < 0) {
				fclose(f);
				rc = pr_error_set(err, PR_EUSAGE,
						  "config '%s': larger than %u bytes", path.ptr,
						  CONFIG_MAX);
				goto out;
			}
		}
		fclose(f);
		root = json_loadb(text.ptr, text.len, JSON_REJECT_DUPLICATES, &jerr);
		buf_release(&text);
		if (!root) {
			rc = pr_error_set(err, PR_EUSAGE, "config '%s': line %d: %s", path.ptr,
					  jerr.line, jerr.text);
			goto out;
		}
		if (!json_is_object(root)) {
			rc = bad(err, path.ptr, "(top level)", "expected an object");
			goto out;
		}
		/*
		 * Sections with keys of their own (names, nested choices) are
		 * validated by their own loaders, and taken out before the rest.
		 */
		static const struct {
			const char *key;
			int (*load)(config *, json_t *, const char *, pr_error *);
		} sections[] = {
			{"services", load_services},
			{"snapshot", load_snapshot},
			{"serve", load_serve},
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
		if ((rc = apply(root, top, path.ptr, "", err)) < 0)
			goto out;
		if ((rc = check_routes(c, path.ptr, err)) < 0 ||
		    (rc = check_retention(c, path.ptr, err)) < 0)
			goto out;
		if (c->metrics.pushgateway && strncmp(c->metrics.pushgateway, "http://", 7) != 0 &&
		    strncmp(c->metrics.pushgateway, "https://", 8) != 0) {
			rc = bad(err, path.ptr, "metrics.pushgateway",
				 "expected an http:// or https:// URL");
			goto out;
		}
		c->analysis.min_baseline = minc;
		c->collect.cooldown_us = (int64_t)cooldown_s * 1000000;
		c->collect.budget_us = (int64_t)budget_s * 1000000;
		c->collect.retry_us = (int64_t)retry_s * 1000000;
		c->analysis.max_looks = looks;
		c->analysis.confirm_looks = confirm;
		if (abs_pp >= 0)
			c->analysis.abs_margin = abs_pp / 100;
		if (min_pp >= 0)
			c->analysis.min_share = min_pp / 100;
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

int config_check_paths(const config *c, pr_error *err)
{
	char at[256];
	int rc;

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
			free(src->endpoint);
			free(src->bucket);
			free(src->prefix);
			free(src->region);
			free(src->access_key_id_env);
			free(src->access_key_id_file);
			free(src->secret_access_key_env);
			free(src->secret_access_key_file);
			free(src->session_token_env);
			free(src->session_token_file);
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
	c->snapshot.nservices = 0;
	free(c->paging.teams);
	free(c->metrics.pushgateway);
	free(c->metrics.instance);
	free(c->reports.dir);
	free(c->reports.base_url);
	free(c->blobs.endpoint);
	free(c->blobs.bucket);
	free(c->blobs.prefix);
	free(c->blobs.region);
	free(c->blobs.access_key_id_env);
	free(c->blobs.access_key_id_file);
	free(c->blobs.secret_access_key_env);
	free(c->blobs.secret_access_key_file);
	free(c->blobs.session_token_env);
	free(c->blobs.session_token_file);
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
