/*
 * cmd_functions.c: `profreg functions`: which captures a function took
 * more than a share of, listed or aggregated (the query is jobs/fnquery.c).
 */
#define _POSIX_C_SOURCE 200809L
#include "common/timeutil.h"
#include "jobs/cli/commands.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"
#include "jobs/cli/table.h"
#include "jobs/fnquery.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

enum { O_NAME = 1900, O_MATCH, O_MIN_SELF, O_SERVICE, O_SINCE, O_UNTIL, O_TYPE, O_BY, O_LIMIT };

static const char usage[] =
	"profreg functions --name PATTERN [--match exact|prefix|regex] [--min-self 5%]\n"
	"                  [--service S] [--type T] [--since 30d] [--until T]\n"
	"                  [--by capture|release|day] [--limit N] [--json]";
static const char desc[] =
	"Find every capture where a function took more than --min-self of the\n"
	"capture's self time, from the per-function rows stored at ingest (no blob\n"
	"is read). Listed newest first, or aggregated per release or per day (mean,\n"
	"min and max share, and how many captures).";

/* "5%", "5" (percent) or "0.05%": the share as a fraction. */
static int parse_percent(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || (*end && strcmp(end, "%") != 0) || !(v >= 0 && v <= 100))
		return -1;
	*out = v / 100;
	return 0;
}

/* Whether the rows are of more than one profile type (their "type"). */
static bool mixes_types(const json_t *rows)
{
	const char *first = NULL;
	const json_t *r;
	size_t i;

	json_array_foreach(rows, i, r) {
		const char *t = json_string_value(json_object_get(r, "type"));
		if (t && first && strcmp(first, t) != 0)
			return true;
		first = t ? t : first;
	}
	return false;
}

/*
 * The rows as a table; TYPE beside the service when they are of more than
 * one type: a heap row's "self" share is of bytes in use, not of CPU
 * time, and --by release showed a function twice per release with
 * nothing telling the two apart.
 */
static void print_rows(const cli_ctx *ctx, const json_t *res, fnquery_by by)
{
	static const table_col list_cols[] = {
		{"TIME", TABLE_WHOLE, 0, 0},
		{"SERVICE", TABLE_LEFT, 6, 20},
		{"RELEASE", TABLE_LEFT, 6, 16},
		{"HOST", TABLE_LEFT, 4, 16},
		{"SELF %", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"TOTAL %", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"FUNCTION", TABLE_LEFT, 12, 0},
	};
	static const table_col agg_cols[] = {
		{"SERVICE", TABLE_LEFT, 6, 20},
		{"GROUP", TABLE_LEFT, 6, 16},
		{"N", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"MEAN %", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"MIN %", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"MAX %", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"LAST", TABLE_WHOLE | TABLE_WIDE_ONLY, 0, 0},
		{"FUNCTION", TABLE_LEFT, 12, 0},
	};
	static const table_col list_typed[] = {
		{"TIME", TABLE_WHOLE, 0, 0},
		{"SERVICE", TABLE_LEFT, 6, 20},
		{"TYPE", TABLE_WHOLE, 0, 0},
		{"RELEASE", TABLE_LEFT, 6, 16},
		{"HOST", TABLE_LEFT, 4, 16},
		{"SELF %", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"TOTAL %", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"FUNCTION", TABLE_LEFT, 12, 0},
	};
	static const table_col agg_typed[] = {
		{"SERVICE", TABLE_LEFT, 6, 20},
		{"TYPE", TABLE_WHOLE, 0, 0},
		{"GROUP", TABLE_LEFT, 6, 16},
		{"N", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"MEAN %", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"MIN %", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"MAX %", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"LAST", TABLE_WHOLE | TABLE_WIDE_ONLY, 0, 0},
		{"FUNCTION", TABLE_LEFT, 12, 0},
	};
	const json_t *rows = json_object_get(res, "rows"), *r;
	bool list = by == FNQUERY_CAPTURES, types = mixes_types(rows);
	table *t = NULL;
	size_t i;

	if (table_new(&t, list ? (types ? list_typed : list_cols) : (types ? agg_typed : agg_cols),
		      (list ? 7 : 8) + types, ctx->wide) < 0)
		goto out;
	json_array_foreach(rows, i, r) {
#define S(k) (json_string_value(json_object_get(r, k)) ? json_string_value(json_object_get(r, k)) \
						      : "-")
#define PCT(k) (100 * json_number_value(json_object_get(r, k)))
		if (list) {
			table_add(t, S("captured_at"));
			table_add(t, S("service"));
			if (types)
				table_add(t, S("type"));
			table_add(t, S("release"));
			table_add(t, S("host"));
			table_addf(t, "%.2f", PCT("self_share"));
			table_addf(t, "%.2f", PCT("total_share"));
		} else {
			table_add(t, S("service"));
			if (types)
				table_add(t, S("type"));
			table_add(t, by == FNQUERY_RELEASE ? S("release") : S("day"));
			table_addf(t, "%" JSON_INTEGER_FORMAT,
				   json_integer_value(json_object_get(r, "captures")));
			table_addf(t, "%.2f", PCT("mean_self_share"));
			table_addf(t, "%.2f", PCT("min_self_share"));
			table_addf(t, "%.2f", PCT("max_self_share"));
			table_add(t, S("last"));
		}
		table_add(t, S("function"));
#undef S
#undef PCT
	}
	table_print(t, stdout);
out:
	table_free(t);
}

/*
 * Why the answer is empty: no stored function has the name (a typo, or a
 * part of a name given with the exact match), or some do but no capture
 * in the window met --min-self. The two want different next steps.
 */
static void no_rows(const cli_ctx *ctx, const fnquery_opts *o, json_int_t matched)
{
	if (matched == 0 && o->match == FNQUERY_EXACT)
		cli_warn(ctx, "no stored function is named '%s' (--match prefix or regex finds "
			 "part of a name)", o->pattern);
	else if (matched == 0)
		cli_warn(ctx, "no stored function's name %s '%s'",
			 o->match == FNQUERY_PREFIX ? "starts with" : "matches", o->pattern);
	else
		cli_warn(ctx, "%" JSON_INTEGER_FORMAT " function name%s matched; no capture in the"
			 " window met --min-self", matched, matched == 1 ? "" : "s");
}

int cmd_functions(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"name", required_argument, O_NAME, "PATTERN", "the function's name, or a pattern"},
		{"match", required_argument, O_MATCH, "HOW",
		 "exact (default), prefix or regex (a PostgreSQL regular expression)"},
		{"min-self", required_argument, O_MIN_SELF, "PCT",
		 "only captures where its self share is at least this (default 0%)"},
		{"service", required_argument, O_SERVICE, "NAME", "only this service"},
		{"type", required_argument, O_TYPE, "TYPE", "only this profile type"},
		{"since", required_argument, O_SINCE, "TIME",
		 "from TIME or a duration back (default 30d)"},
		{"until", required_argument, O_UNTIL, "TIME", "up to TIME (default now)"},
		{"by", required_argument, O_BY, "WHAT", "capture (default), release or day"},
		{"limit", required_argument, O_LIMIT, "N", "at most N rows (default 1000)"},
		{NULL, 0, 0, NULL, NULL},
	};
	pr_error err = PR_ERROR_INIT;
	fnquery_opts o;
	cli_parser *p = NULL;
	db *d = NULL;
	json_t *res = NULL;
	const char *arg, *since_s = "30d", *until_s = NULL;
	unsigned long long limit = 1000;
	int64_t now = time_now_us();
	bool bad = false;
	int c, rc, status;

	memset(&o, 0, sizeof(o));
	if (cli_parser_new(&p, ctx, argc, argv, opts, usage, desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		switch (c) {
		case O_NAME: o.pattern = arg; break;
		case O_SERVICE: o.service = arg; break;
		case O_TYPE: o.type = arg; break;
		case O_SINCE: since_s = arg; break;
		case O_UNTIL: until_s = arg; break;
		case O_MATCH:
			if (strcmp(arg, "exact") == 0)
				o.match = FNQUERY_EXACT;
			else if (strcmp(arg, "prefix") == 0)
				o.match = FNQUERY_PREFIX;
			else if (strcmp(arg, "regex") == 0)
				o.match = FNQUERY_REGEX;
			else {
				cli_error(ctx, "'--match %s' is not exact, prefix or regex", arg);
				bad = true;
			}
			break;
		case O_MIN_SELF:
			if (parse_percent(arg, &o.min_self) < 0) {
				cli_error(ctx, "'--min-self %s' is not a percentage from 0 to 100",
					  arg);
				bad = true;
			}
			break;
		case O_BY:
			if (strcmp(arg, "capture") == 0)
				o.by = FNQUERY_CAPTURES;
			else if (strcmp(arg, "release") == 0)
				o.by = FNQUERY_RELEASE;
			else if (strcmp(arg, "day") == 0)
				o.by = FNQUERY_DAY;
			else {
				cli_error(ctx, "'--by %s' is not capture, release or day", arg);
				bad = true;
			}
			break;
		case O_LIMIT:
			if (cli_parse_u64(ctx, "limit", arg, 1, 1000000, &limit) < 0)
				bad = true;
			break;
		}
	}
	if ((status = cli_end(p, c, bad, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	if (!o.pattern || !*o.pattern) {
		cli_error(ctx, "give the function with --name (see --help)");
		return EXIT_USAGE;
	}
	if (time_parse_since(&o.since_us, since_s, now) < 0 ||
	    (until_s && time_parse_since(&o.until_us, until_s, now) < 0)) {
		cli_error(ctx, "'%s' is not a time (ISO 8601) or a duration (24h, 30d)",
			  time_parse_since(&o.since_us, since_s, now) < 0 ? since_s : until_s);
		return EXIT_USAGE;
	}
	o.limit = (size_t)limit;
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 || (rc = fnquery_run(&res, d, &o, &err)) < 0) {
		db_close(d);
		return cli_fail(ctx, &err);
	}
	db_close(d);
	if (ctx->json)
		return cli_print_json(ctx, res);
	print_rows(ctx, res, o.by);
	if (json_is_true(json_object_get(res, "truncated")))
		cli_warn(ctx, "only the first %llu rows are shown (--limit)", limit);
	if (!json_array_size(json_object_get(res, "rows")))
		no_rows(ctx, &o, json_integer_value(json_object_get(res, "functions")));
	json_decref(res);
	return EXIT_OK;
}
