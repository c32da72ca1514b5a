/*
 * cmd_profiles.c: `profreg profiles list` and `profreg profile show`.
 */
#define _POSIX_C_SOURCE 200809L
#include "commands.h"
#include "context.h"
#include "exitcode.h"
#include "../common/timeutil.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

enum { O_SERVICE = 's', O_RELEASE = 'r', O_SINCE = 1200, O_UNTIL, O_TYPE, O_LIMIT, O_TOP };

/* A value in its unit, the way pprof shows them: 1.25s, 3.50MB, 1200. */
static void format_value(char *out, size_t n, int64_t v, const char *unit)
{
	static const char *const bytes[] = {"B", "kB", "MB", "GB", "TB"};
	double d = (double)v;
	int i = 0;

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
		while (d >= 1024 && i < 4) {
			d /= 1024;
			i++;
		}
		if (i == 0)
			snprintf(out, n, "%lldB", (long long)v);
		else
			snprintf(out, n, "%.2f%s", d, bytes[i]);
	} else {
		snprintf(out, n, "%lld", (long long)v);
	}
}

static json_t *capture_json(const db_capture *c)
{
	char when[TIME_FMT_MAX];
	json_t *tags = json_loads(c->tags_json ? c->tags_json : "{}", 0, NULL);

	time_format(when, c->captured_at_us);
	return json_pack("{s:I,s:s,s:s,s:s,s:s?,s:s?,s:s,s:I,s:s,s:s,s:I,s:I,s:i,s:s,s:I,s:s,s:s,s:o}",
		"id", (json_int_t)c->id, "service", c->service, "type", c->profile_type,
		"release", c->release, "commit", c->commit_sha, "host", c->host,
		"captured_at", when, "duration_ns", (json_int_t)c->duration_ns,
		"value_type", c->value_type, "value_unit", c->value_unit,
		"total_value", (json_int_t)c->total_value,
		"sample_count", (json_int_t)c->sample_count, "function_count", (int)c->function_count,
		"blob_key", c->blob_key, "blob_bytes", (json_int_t)c->blob_bytes,
		"format", c->format, "retention_class", c->retention_class,
		"tags", tags ? tags : json_object());
}

static int profiles_list(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"service", required_argument, O_SERVICE, "NAME", "only this service"},
		{"release", required_argument, O_RELEASE, "RELEASE", "only this release"},
		{"type", required_argument, O_TYPE, "TYPE", "only this profile type"},
		{"since", required_argument, O_SINCE, "TIME", "captured at or after TIME (ISO 8601, or a duration like 24h)"},
		{"until", required_argument, O_UNTIL, "TIME", "captured before TIME"},
		{"limit", required_argument, O_LIMIT, "N", "at most N captures (default 100, 0 for all)"},
		{NULL, 0, 0, NULL, NULL},
	};
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
	int c, rc = 0;

	if (cli_parser_new(&p, ctx, argc, argv, opts,
			   "profreg profiles list [--service S] [--release R] [--since T] [--json]",
			   "List stored captures, newest first.") < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		switch (c) {
		case O_SERVICE: f.service = arg; break;
		case O_RELEASE: f.release = arg; break;
		case O_TYPE: f.profile_type = arg; break;
		case O_SINCE:
		case O_UNTIL:
			if (time_parse_since(c == O_SINCE ? &f.since_us : &f.until_us, arg, now) < 0) {
				cli_error(ctx, "'%s' is not a time (ISO 8601) or a duration (24h, 7d)", arg);
				rc = EXIT_USAGE;
			}
			break;
		case O_LIMIT:
			if (cli_parse_u64(ctx, "limit", arg, 0, 1000000000, &lim) < 0)
				rc = EXIT_USAGE;
			break;
		}
	}
	if (c == 0 && !rc && cli_optind(p) != argc) {
		cli_error(ctx, "unexpected argument '%s' (see --help)", argv[cli_optind(p)]);
		rc = EXIT_USAGE;
	}
	cli_parser_free(p);
	if (c == CLI_HELP)
		return EXIT_OK;
	if (c == CLI_BAD || rc)
		return EXIT_USAGE;
	f.limit = (size_t)lim;
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (f.service && (rc = db_service_get(d, &svc, f.service, &err)) < 0) ||
	    (rc = db_capture_list(d, &caps, &n, &f, &err)) < 0) {
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
		rc = cli_print_json(ctx, json_pack("{s:o}", "captures", arr));
	} else {
		printf("%-8s %-20s %-6s %-16s %-20s %-20s %10s %8s\n", "ID", "SERVICE", "TYPE",
		       "RELEASE", "HOST", "CAPTURED", "SAMPLES", "FUNCS");
		for (size_t i = 0; i < n; i++) {
			char when[TIME_FMT_MAX];
			time_format(when, caps[i].captured_at_us - caps[i].captured_at_us % 1000000);
			printf("%-8lld ", (long long)caps[i].id);
			cli_put_safe(stdout, caps[i].service, 20);
			printf(" %-6s ", caps[i].profile_type);
			cli_put_safe(stdout, caps[i].release, 16);
			putchar(' ');
			cli_put_safe(stdout, caps[i].host ? caps[i].host : "-", 20);
			printf(" %-20s %10lld %8d\n", when, (long long)caps[i].sample_count,
			       (int)caps[i].function_count);
		}
		rc = EXIT_OK;
	}
	for (size_t i = 0; i < n; i++)
		db_capture_release(&caps[i]);
	free(caps);
	return rc;
}

int cmd_profiles(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_command cmds[] = {
		{"list", profiles_list, "list stored captures"},
		{NULL, NULL, NULL},
	};
	return cli_dispatch(ctx, cmds, ctx->prog, argc - 1, argv + 1);
}

static void print_capture(const db_capture *c, const db_func_row *rows, size_t n)
{
	char when[TIME_FMT_MAX], total[32];

	time_format(when, c->captured_at_us);
	format_value(total, sizeof(total), c->total_value, c->value_unit);
	printf("capture   %lld\n", (long long)c->id);
	printf("service   ");
	cli_put_safe(stdout, c->service, 0);
	printf("\ntype      %s (%s/%s, %s)\n", c->profile_type, c->value_type, c->value_unit,
	       c->format);
	printf("release   ");
	cli_put_safe(stdout, c->release, 0);
	printf("\ncommit    %s\nhost      ", c->commit_sha ? c->commit_sha : "-");
	cli_put_safe(stdout, c->host ? c->host : "-", 0);
	printf("\ncaptured  %s\n", when);
	if (c->duration_ns)
		printf("duration  %.3fs\n", (double)c->duration_ns / 1e9);
	printf("total     %s in %lld samples, %d functions\n", total,
	       (long long)c->sample_count, (int)c->function_count);
	printf("blob      %s (%lld bytes, %s)\n", c->blob_key, (long long)c->blob_bytes,
	       c->retention_class);
	if (c->sample_count == 0 || c->total_value == 0) {
		printf("\nthe profile has no samples\n");
		return;
	}
	printf("\n%12s %7s %12s %7s  %s\n", "SELF", "SELF%", "TOTAL", "TOTAL%", "FUNCTION");
	for (size_t i = 0; i < n; i++) {
		char s[32], t[32];
		format_value(s, sizeof(s), rows[i].self_value, c->value_unit);
		format_value(t, sizeof(t), rows[i].total_value, c->value_unit);
		printf("%12s %6.2f%% %12s %6.2f%%  ", s, rows[i].self_share * 100, t,
		       rows[i].total_share * 100);
		cli_put_safe(stdout, rows[i].name, 0);
		putchar('\n');
	}
}

int cmd_profile(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"top", required_argument, O_TOP, "N", "show the top N functions by self value (default 20)"},
		{NULL, 0, 0, NULL, NULL},
	};
	pr_error err = PR_ERROR_INIT;
	db_capture cap = {0};
	db_func_row *rows = NULL;
	cli_parser *p = NULL;
	size_t n = 0;
	db *d = NULL;
	const char *arg;
	unsigned long long top = 20, id = 0;
	int c, first, rc = 0;

	/* `profile show ID`: accept the "show" verb, the only one there is. */
	if (argc > 1 && strcmp(argv[1], "show") == 0) {
		argc--;
		argv++;
	}
	if (cli_parser_new(&p, ctx, argc, argv, opts, "profreg profile show ID [--top N] [--json]",
			   "Show a capture's metadata and its top functions by self value.") < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		if (c == O_TOP && cli_parse_u64(ctx, "top", arg, 0, 1000000, &top) < 0)
			rc = EXIT_USAGE;
	first = cli_optind(p);
	cli_parser_free(p);
	if (c == CLI_HELP)
		return EXIT_OK;
	if (c == CLI_BAD || rc)
		return EXIT_USAGE;
	if (argc - first != 1 || cli_parse_u64(ctx, "ID", argv[first], 1, INT64_MAX, &id) < 0) {
		if (argc - first != 1)
			cli_error(ctx, "expected one capture ID (see --help)");
		return EXIT_USAGE;
	}
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 ||
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
				"self_share", rows[i].self_share, "total_share", rows[i].total_share));
		json_object_set_new(obj, "top", arr);
		rc = cli_print_json(ctx, obj);
	} else {
		print_capture(&cap, rows, n);
		rc = EXIT_OK;
	}
	db_func_rows_free(rows, n);
	db_capture_release(&cap);
	return rc;
}
