/*
 * config.c: load and validate the configuration file (see config.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"
#include "common/buf.h"
#include "pipeline/ingest.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CONFIG_MAX (4u << 20)
#define DAY_US (86400LL * 1000000LL)

typedef struct field {
	const char *key;
	int kind;        /* 'i' integer, 'f' number, 'o' object */
	double lo, hi;
	void *target;    /* uint64_t*, uint32_t*, size_t*, int64_t* (days), double* */
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
		if (f->kind == 'i' ? !json_is_integer(v) : !json_is_number(v))
			return bad(err, path, at, f->kind == 'i' ? "expected an integer" : "expected a number");
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
		else if (f->width == 8)
			*(uint64_t *)f->target = (uint64_t)json_integer_value(v);
		else
			*(uint32_t *)f->target = (uint32_t)json_integer_value(v);
	}
	return 0;
}

static char *dup_string(json_t *v)
{
	return strdup(json_string_value(v));
}

/* One entry of "services": strings, an array of types, a source object. */
static int load_service(config_service *s, const char *name, json_t *obj, const char *path,
			pr_error *err)
{
	static const char *const keys[] = {"team", "types", "source", "repo", NULL};
	const char *key;
	json_t *v;
	char at[256];

	memset(s, 0, sizeof(*s));
	if (!(s->name = strdup(name)))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	if (!json_is_object(obj)) {
		snprintf(at, sizeof(at), "services.%.64s", name);
		return bad(err, path, at, "expected an object");
	}
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
				return bad(err, path, at, "expected a non-empty array of profile types");
			if (!(s->types = calloc(json_array_size(v), sizeof(*s->types))))
				return pr_error_set(err, PR_ENOMEM, "out of memory");
			json_array_foreach(v, i, t) {
				if (!json_is_string(t) || !ingest_type_valid(json_string_value(t)))
					return bad(err, path, at, "expected cpu, heap, alloc, wall or goroutine");
				if (!(s->types[s->ntypes++] = dup_string(t)))
					return pr_error_set(err, PR_ENOMEM, "out of memory");
			}
		}
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

const config_service *config_service_find(const config *c, const char *name)
{
	for (size_t i = 0; i < c->nservices; i++)
		if (strcmp(c->services[i].name, name) == 0)
			return &c->services[i];
	return NULL;
}

int config_load(config *c, const cli_ctx *ctx, pr_error *err)
{
	buf path = BUF_INIT;
	json_error_t jerr;
	json_t *root = NULL;
	double abs_pp = -1;
	int rc = 0;

	memset(c, 0, sizeof(*c));
	profile_limits_default(&c->limits);
	analysis_opts_default(&c->analysis);
	if (ctx->config) {
		rc = buf_puts(&path, ctx->config);
	} else {
		rc = buf_printf(&path, "%s/profreg.json", ctx->home);
		if (rc == 0 && access(path.ptr, F_OK) != 0)
			goto out; /* no file: defaults */
	}
	if (rc < 0) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	{
		size_t min_captures = c->analysis.min_baseline;
		const field severity[] = {
			{"q_max", 'f', 1e-6, 0.5, &c->analysis.severity.q_max, 0, NULL},
			{"critical_pp", 'f', 0, 100, &c->analysis.severity.critical_pp, 0, NULL},
			{"critical_rel", 'f', 0, 1e6, &c->analysis.severity.critical_rel, 0, NULL},
			{"critical_rel_pp", 'f', 0, 100, &c->analysis.severity.critical_rel_pp, 0, NULL},
			{"high_pp", 'f', 0, 100, &c->analysis.severity.high_pp, 0, NULL},
			{"medium_pp", 'f', 0, 100, &c->analysis.severity.medium_pp, 0, NULL},
			{NULL, 0, 0, 0, NULL, 0, NULL},
		};
		uint32_t minc = (uint32_t)min_captures;
		const field analysis[] = {
			{"window_days", 'i', 1, 3650, &c->analysis.window_us, -1, NULL},
			{"min_captures", 'i', 2, 100000, &minc, 4, NULL},
			{"rel_margin", 'f', 0, 10, &c->analysis.rel_margin, 0, NULL},
			{"abs_margin_pp", 'f', 0, 100, &abs_pp, 0, NULL},
			{"fdr", 'f', 1e-6, 0.5, &c->analysis.fdr, 0, NULL},
			{"mw_alpha", 'f', 1e-9, 1, &c->analysis.mw_alpha, 0, NULL},
			{"severity", 'o', 0, 0, NULL, 0, severity},
			{NULL, 0, 0, 0, NULL, 0, NULL},
		};
		const field limits[] = {
			{"max_input_bytes", 'i', 1, 1e15, &c->limits.max_input_bytes, 8, NULL},
			{"max_decompressed_bytes", 'i', 1, 1e15, &c->limits.max_decompressed_bytes, 8, NULL},
			{"max_samples", 'i', 1, 4294967295.0, &c->limits.max_samples, 8, NULL},
			{"max_depth", 'i', 1, 1 << 20, &c->limits.max_depth, 4, NULL},
			{"max_string_length", 'i', 16, 1 << 24, &c->limits.max_string_len, 4, NULL},
			{NULL, 0, 0, 0, NULL, 0, NULL},
		};
		const field retention[] = {
			{"forensic_days", 'i', 0, 36500, &c->analysis.forensic_keep_us, -1, NULL},
			{NULL, 0, 0, 0, NULL, 0, NULL},
		};
		const field top[] = {
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
			rc = pr_error_set(err, PR_EUSAGE, "cannot read config '%s': no such file or unreadable",
					  path.ptr);
			goto out;
		}
		buf_init(&text, CONFIG_MAX);
		while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
			if (buf_put(&text, chunk, n) < 0) {
				fclose(f);
				rc = pr_error_set(err, PR_EUSAGE, "config '%s': larger than %u bytes",
						  path.ptr, CONFIG_MAX);
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
		{
			/* "services" has names for keys: validated on its own. */
			json_t *svcs = json_object_get(root, "services");
			if (svcs) {
				json_incref(svcs);
				json_object_del(root, "services");
				rc = load_services(c, svcs, path.ptr, err);
				json_decref(svcs);
				if (rc < 0)
					goto out;
			}
		}
		if ((rc = apply(root, top, path.ptr, "", err)) < 0)
			goto out;
		c->analysis.min_baseline = minc;
		if (abs_pp >= 0)
			c->analysis.abs_margin = abs_pp / 100;
	}
	c->path = buf_detach(&path, NULL);
out:
	json_decref(root);
	buf_release(&path);
	if (rc < 0)
		config_release(c);
	return rc;
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
	}
	free(c->services);
	c->services = NULL;
	c->nservices = 0;
	free(c->path);
	c->path = NULL;
}
