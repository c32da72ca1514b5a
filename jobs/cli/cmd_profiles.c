/*
 * cmd_profiles.c: `profreg profiles list` and `profreg profile show`.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/commands.h"
#include "jobs/access.h"
#include "jobs/job.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"
#include "jobs/cli/table.h"
#include "reports/measure.h"
#include "common/timeutil.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

enum { O_SERVICE = 's', O_RELEASE = 'r', O_SINCE = 1200, O_UNTIL, O_TYPE, O_LIMIT, O_TOP };

/*
 * A value in its unit: 1.25s, 1200, and bytes as the reports print them
 * (measure_value), with binary prefixes: 1,609,817,431 bytes is 1.50 GiB,
 * which was labelled "1.50GB" (1.61 GB).
 */
static void format_value(char *out, size_t n, int64_t v, const char *unit)
{
	double d = (double)v;

	if (unit && strcmp(unit, "nanoseconds") == 0) {
		if (v >= 1000000000)
			snprintf(out, n, "%.2fs", d / 1e9);
		else if (v >= 1000000)
			snprintf(out, n, "%.2fms", d / 1e6);
		else if (v >= 1000)
			snprintf(out, n, "%.2fus", d / 1e3);
		else
			snprintf(out, n, "%lldns", (long long)v);
	} else if (unit && strcmp(unit, "microseconds") == 0) {
		format_value(out, n, v > INT64_MAX / 1000 ? INT64_MAX : v * 1000, "nanoseconds");
	} else if (unit && strcmp(unit, "bytes") == 0) {
		measure_value(out, n, "bytes", d);
	} else {
		snprintf(out, n, "%lld", (long long)v);
	}
}

static json_t *capture_json(const db_capture *c)
{
	char when[TIME_FMT_MAX];
	json_t *tags = json_loads(c->tags_json ? c->tags_json : "{}", 0, NULL);

	time_format(when, c->captured_at_us);
	return json_pack("{s:I,s:s,s:s,s:s,s:s?,s:s?,s:s,s:I,s:s,s:s,s:I,s:I,s:i,s:s,s:I,s:s,"
			 "s:s,s:o}",
		"id", (json_int_t)c->id, "service", c->service, "type", c->profile_type,
		"release", c->release, "commit", c->commit_sha, "host", c->host,
		"captured_at", when, "duration_ns", (json_int_t)c->duration_ns,
		"value_type", c->value_type, "value_unit", c->value_unit,
		"total_value", (json_int_t)c->total_value,
		"sample_count", (json_int_t)c->sample_count,
		"function_count", (int)c->function_count,
		"blob_key", c->blob_key, "blob_bytes", (json_int_t)c->blob_bytes,
		"format", c->format, "retention_class", c->retention_class,
		"tags", tags ? tags : json_object());
}

/* The captures as a table that fits 80 columns (all of it with --wide). */
static int print_list(const cli_ctx *ctx, const db_capture *caps, size_t n)
{
	static const table_col cols[] = {
		{"ID", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"SERVICE", TABLE_LEFT, 8, 32},
		{"TYPE", TABLE_LEFT, 9, 16},
		{"RELEASE", TABLE_LEFT, 8, 24},
		{"HOST", TABLE_LEFT, 6, 24},
		{"CAPTURED", TABLE_WHOLE, 0, 0},
		{"SAMPLES", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"FUNCS", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
	};
	table *t = NULL;
	int status = EXIT_OK;

	if (table_new(&t, cols, sizeof(cols) / sizeof(cols[0]), ctx->wide) < 0)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		char when[TIME_FMT_MAX];
		time_format(when, caps[i].captured_at_us - caps[i].captured_at_us % 1000000);
		table_addf(t, "%lld", (long long)caps[i].id);
		table_add(t, caps[i].service);
		table_add(t, caps[i].profile_type);
		table_add(t, caps[i].release);
		table_add(t, caps[i].host);
		table_add(t, when);
		table_addf(t, "%lld", (long long)caps[i].sample_count);
		table_addf(t, "%d", (int)caps[i].function_count);
	}
	if (table_print(t, stdout) < 0)
		goto oom;
	goto out;
oom:
	cli_error(ctx, "out of memory");
	status = EXIT_RUNTIME;
out:
	table_free(t);
	return status;
}

/*
 * A release the service never had is a typo, not an empty list: an error
 * naming the close one, as analyze and post-deploy give. 0 when the
 * service has captures of the release (the other filters left none).
 */
static int no_release(db *d, const db_service *svc, const char *release, pr_error *err)
{
	char hint[400];
	db_capture_tally n;
	int rc;

	if ((rc = db_capture_count(d, &n, svc->id, release, 0, 0, 0, err)) < 0 || n.all > 0)
		return rc;
	if ((rc = job_release_hint(hint, sizeof(hint), d, svc->id, release, err)) < 0)
		return rc;
	return pr_error_set(err, PR_ENOTFOUND, "no captures of release '%s' of service '%s'%s",
			    release, svc->name, hint);
}

static int profiles_list(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"service", required_argument, O_SERVICE, "NAME", "only this service"},
		{"release", required_argument, O_RELEASE, "RELEASE", "only this release"},
		{"type", required_argument, O_TYPE, "TYPE", "only this profile type"},
		{"since", required_argument, O_SINCE, "TIME",
		 "captured at or after TIME (ISO 8601, or a duration like 24h)"},
		{"until", required_argument, O_UNTIL, "TIME", "captured before TIME"},
		{"limit", required_argument, O_LIMIT, "N",
		 "at most N captures (default 100, 0 for all)"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char usage[] =
		"profreg profiles list [--service S] [--release R] [--type T] [--since T]\n"
		"                      [--until T] [--limit N] [--json]";
	static const char desc[] = "List stored captures, newest first.";
	pr_error err = PR_ERROR_INIT;
	db_capture_filter f = {0};
	db_capture *caps = NULL;
	cli_parser *p = NULL;
	size_t n = 0;
	db *d = NULL;
	db_service svc = {0};
	const char *arg;
	unsigned long long lim = 100;
	int64_t now = time_now_us();
	bool bad = false;
	int c, rc, status;

	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		switch (c) {
		case O_SERVICE: f.service = arg; break;
		case O_RELEASE: f.release = arg; break;
		case O_TYPE: f.profile_type = arg; break;
		case O_SINCE:
		case O_UNTIL:
			if (time_parse_since(c == O_SINCE ? &f.since_us : &f.until_us, arg,
					     now) < 0) {
				cli_error(ctx, "'%s' is not a time (ISO 8601) or a duration "
					  "(24h, 7d)", arg);
				bad = true;
			}
			if (c == O_SINCE)
				f.since_set = true;
			else
				f.until_set = true;
			break;
		case O_LIMIT:
			if (cli_parse_u64(ctx, "limit", arg, 0, 1000000000, &lim) < 0)
				bad = true;
			break;
		}
	}
	if ((status = cli_end(p, c, bad, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	f.limit = (size_t)lim;
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (f.service && (rc = db_service_get(d, &svc, f.service, &err)) < 0) ||
	    (rc = db_capture_list(d, &caps, &n, &f, &err)) < 0 ||
	    (n == 0 && f.service && f.release && (rc = no_release(d, &svc, f.release, &err)) < 0)) {
		db_service_release(&svc);
		db_close(d);
		return cli_fail(ctx, &err);
	}
	db_service_release(&svc);
	db_close(d);
	if (ctx->json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(arr, capture_json(&caps[i]));
		status = cli_print_json(ctx, json_pack("{s:o}", "captures", arr));
	} else {
		status = print_list(ctx, caps, n);
	}
	for (size_t i = 0; i < n; i++)
		db_capture_release(&caps[i]);
	free(caps);
	return status;
}

int cmd_profiles(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_command cmds[] = {
		{"list", profiles_list, "list stored captures"},
		{NULL, NULL, NULL},
	};
	return cli_dispatch(ctx, cmds, ctx->prog, argc - 1, argv + 1);
}

/*
 * One "label     value" line of profile show: the value in its safe form,
 * shortened in the middle to end within 80 columns unless --wide.
 */
static void put_field(const cli_ctx *ctx, const char *label, const char *value)
{
	buf line = BUF_INIT;

	if (buf_printf(&line, "%-9s ", label) == 0 &&
	    table_fit(&line, value, ctx->wide ? 0 : TABLE_WIDTH - (int)line.len) >= 0 &&
	    buf_putc(&line, '\n') == 0)
		fwrite(line.ptr, 1, line.len, stdout);
	buf_release(&line);
}

static int print_capture(const cli_ctx *ctx, const db_capture *c, const db_func_row *rows,
			 size_t n)
{
	static const table_col cols[] = {
		{"SELF", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"SELF%", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"TOTAL", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"TOTAL%", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"FUNCTION", TABLE_LEFT, 16, 0},
	};
	char when[TIME_FMT_MAX], total[32], text[128];
	buf type = BUF_INIT;
	table *t = NULL;
	int status = EXIT_OK;

	time_format(when, c->captured_at_us);
	format_value(total, sizeof(total), c->total_value, c->value_unit);
	snprintf(text, sizeof(text), "%lld", (long long)c->id);
	put_field(ctx, "capture", text);
	put_field(ctx, "service", c->service);
	if (buf_printf(&type, "%s (%s/%s, %s)", c->profile_type, c->value_type, c->value_unit,
		       c->format) < 0)
		goto oom;
	put_field(ctx, "type", type.ptr);
	put_field(ctx, "release", c->release);
	put_field(ctx, "commit", c->commit_sha ? c->commit_sha : "-");
	put_field(ctx, "host", c->host ? c->host : "-");
	put_field(ctx, "captured", when);
	if (c->duration_ns)
		printf("duration  %.3fs\n", (double)c->duration_ns / 1e9);
	printf("total     %s in %lld samples, %d functions\n", total,
	       (long long)c->sample_count, (int)c->function_count);
	put_field(ctx, "blob", c->blob_key);
	snprintf(text, sizeof(text), "%s, %lld bytes", c->retention_class,
		 (long long)c->blob_bytes);
	put_field(ctx, "retention", text);
	if (c->sample_count == 0 || c->total_value == 0) {
		printf("\nthe profile has no samples\n");
		goto out;
	}
	putchar('\n');
	if (table_new(&t, cols, sizeof(cols) / sizeof(cols[0]), ctx->wide) < 0)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		char v[32];
		format_value(v, sizeof(v), rows[i].self_value, c->value_unit);
		table_add(t, v);
		table_addf(t, "%.2f%%", rows[i].self_share * 100);
		format_value(v, sizeof(v), rows[i].total_value, c->value_unit);
		table_add(t, v);
		table_addf(t, "%.2f%%", rows[i].total_share * 100);
		table_add(t, rows[i].name);
	}
	if (table_print(t, stdout) < 0)
		goto oom;
	goto out;
oom:
	cli_error(ctx, "out of memory");
	status = EXIT_RUNTIME;
out:
	buf_release(&type);
	table_free(t);
	return status;
}

int cmd_profile(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"top", required_argument, O_TOP, "N",
		 "show the top N functions by self value (default 20)"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char usage[] = "profreg profile show ID [--top N] [--json]";
	static const char desc[] = "Show a capture's metadata and its top functions by self value.";
	pr_error err = PR_ERROR_INIT;
	db_capture cap = {0};
	db_func_row *rows = NULL;
	cli_parser *p = NULL;
	size_t n = 0;
	db *d = NULL;
	const char *arg;
	unsigned long long top = 20, id = 0;
	int64_t cid;
	bool bad = false;
	int c, first, rc, status;

	/* `profile show ID`: accept the "show" verb, the only one there is. */
	if (argc > 1 && strcmp(argv[1], "show") == 0) {
		argc--;
		argv++;
	}
	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		if (c == O_TOP && cli_parse_u64(ctx, "top", arg, 0, 1000000, &top) < 0)
			bad = true;
	if ((status = cli_end(p, c, bad, 1, 1, "one capture ID", &first)) != CLI_GO)
		return status;
	if (cli_parse_u64(ctx, "ID", argv[first], 1, INT64_MAX, &id) < 0)
		return EXIT_USAGE;
	cid = (int64_t)id;
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = access_read_captures(d, "capture.show", NULL, &cid, 1, sizeof(cid), false,
				       &err)) < 0 ||
	    (rc = db_capture_get(d, &cap, (int64_t)id, &err)) < 0 ||
	    (rc = db_capture_top(d, &rows, &n, (int64_t)id, (size_t)top, &err)) < 0) {
		db_close(d);
		db_capture_release(&cap);
		return cli_fail(ctx, &err);
	}
	db_close(d);
	if (ctx->json) {
		json_t *obj = capture_json(&cap), *arr = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(arr, json_pack("{s:s,s:s,s:I,s:I,s:f,s:f}",
				"name", rows[i].name, "file", rows[i].file ? rows[i].file : "",
				"self", (json_int_t)rows[i].self_value,
				"total", (json_int_t)rows[i].total_value,
				"self_share", rows[i].self_share,
				"total_share", rows[i].total_share));
		json_object_set_new(obj, "top", arr);
		status = cli_print_json(ctx, obj);
	} else {
		status = print_capture(ctx, &cap, rows, n);
	}
	db_func_rows_free(rows, n);
	db_capture_release(&cap);
	return status;
}
