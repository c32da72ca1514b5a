/*
 * fnquery.h: "every capture where function X exceeded Y% self time in the
 * last 30 days", answered from the per-function values written at ingest
 * (profile_vectors), never by reading a blob.
 *
 * A name pattern matches a function's name exactly, by prefix or as a
 * PostgreSQL regular expression (case-sensitive); a bad regular
 * expression is PR_EUSAGE naming the reason. Captures are listed newest
 * first, or aggregated per release or per day.
 */
#ifndef PR_FNQUERY_H
#define PR_FNQUERY_H

#include <stddef.h>
#include <stdint.h>

#include "pipeline/db.h"

struct json_t;

typedef enum fnquery_match {
	FNQUERY_EXACT = 0,
	FNQUERY_PREFIX,
	FNQUERY_REGEX,
} fnquery_match;

typedef enum fnquery_by {
	FNQUERY_CAPTURES = 0, /* one row a capture and function */
	FNQUERY_RELEASE,      /* per service, release and function */
	FNQUERY_DAY,          /* per service, day (UTC) and function */
} fnquery_by;

typedef struct fnquery_opts {
	const char *pattern;
	fnquery_match match;
	double min_self;          /* a share: 0.05 is 5%; 0: any */
	const char *service;      /* NULL: every service */
	const char *type;         /* profile type; NULL: any */
	int64_t since_us, until_us; /* [since, until); until 0: no end */
	fnquery_by by;
	size_t limit;             /* rows at most; 0: 1000 */
} fnquery_opts;

/*
 * Run the query. *out is a JSON object {"rows": [...], "truncated": bool,
 * "functions": N (names the pattern matched)}; each row of a capture list
 * is {capture_id, service, type, release, host, captured_at, function,
 * file, self_share, total_share}; an aggregate row is {service, type,
 * release or day, function, file, captures, mean_self_share,
 * min_self_share, max_self_share, mean_total_share, first, last}. An
 * unknown --service is PR_ENOTFOUND with the close name. The caller
 * decrefs *out.
 */
int fnquery_run(struct json_t **out, db *d, const fnquery_opts *o, pr_error *err);

#endif
