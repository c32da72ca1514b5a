/*
 * config.c: load and validate the configuration file (see config.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"
#include "common/buf.h"

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
		const field top[] = {
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
	return rc;
}

void config_release(config *c)
{
	free(c->path);
	c->path = NULL;
}
