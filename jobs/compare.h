/*
 * compare.h: the comparison page `profreg serve` answers at /compare.
 *
 * A person picks a service, a profile type and two selections of its
 * captures from lists filled from the index, and gets the same
 * differential flame graph page `profreg diff` writes (the same
 * reportdata_diff and report_html), at a URL they can share:
 *
 *   /compare                                     the services the caller may see
 *   /compare?service=S[&type=T]                  the picker: types, releases,
 *                                                commits and hosts of S
 *   /compare?service=S&type=T&a=SIDE&b=SIDE      the diff of side a (the base)
 *                                                against side b
 *
 * A SIDE is one or more KEY:VALUE items separated by commas, each key at
 * most once: release:R, commit:C (4 to 64 hex digits, a prefix),
 * host:H, since:TIME and until:TIME (ISO 8601, absolute, so a shared URL
 * always means the same captures; until is exclusive) and id:N.N.N
 * (capture ids, '.' between them). "a=release:v1", "b=since:2026-03-10T
 * 00:00:00Z,until:2026-03-11T00:00:00Z,host:web-3".
 *
 * Who may see what: the caller is a verified token (jobs/tokens.h). Only
 * the services the token allows are listed or compared; any other,
 * existing or not, is refused alike. Reading the captures goes through
 * the same access_read_captures as the CLI's diff (one audit row per
 * side), and the page itself is audited as "compare.view" with the
 * token's hint. Heap and alloc captures are read whole only under a
 * database role holding the heap permission, which a token does not
 * carry: they are refused (403).
 *
 * Every name from the index or a profile is escaped as the report
 * escapes it; pages carry no script but the report's own, whose hashes
 * the Content-Security-Policy lists.
 */
#ifndef PR_COMPARE_H
#define PR_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "jobs/job.h"
#include "jobs/tokens.h"

/* All keys and values of one query together, bytes. */
#define COMPARE_QUERY_MAX 4096
/* One value (a release, a host) at most, bytes. */
#define COMPARE_VALUE_MAX 255
/* Capture ids in one side at most. */
#define COMPARE_IDS_MAX 500
/* Options in each list of the picker at most (the newest). */
#define COMPARE_LIST_MAX 200
/*
 * Stored bytes of both sides' captures together at most (the index's
 * blob_bytes, as ingested: gzipped pprof, folded text, ...). A
 * comparison is read, parsed and merged in the server's memory while
 * every other request waits: 12 pprof captures of 100,000 stacks over
 * 20,000 functions (48 MB) took 2.5 s and 250 MB on an idle 2-core
 * machine, and 37 to 99 s on a loaded one. Past it the comparison is
 * refused (422) before any capture is read.
 */
#define COMPARE_BYTES_MAX (32 << 20)

/* One query parameter as the server decoded it; neither string need end in NUL. */
typedef struct compare_param {
	const char *key, *value;
	size_t key_len, value_len;
} compare_param;

/* One side of a comparison; strings owned. */
typedef struct compare_side {
	char *release, *commit, *host;
	int64_t since_us, until_us;    /* 0: unbounded */
	int64_t *ids;
	size_t nids;
	char *text;                    /* canonical form, as in the URL */
} compare_side;

typedef struct compare_query {
	char *service;                 /* NULL: the list of services */
	char *type;                    /* NULL: not given */
	bool sides;                    /* a and b given: a diff */
	compare_side a, b;
} compare_query;

/*
 * Parse the query parameters `p` (n of them). A malformed, hostile or
 * oversized query is PR_EUSAGE with the reason in one line (the server
 * answers 400 with it): an unknown or repeated parameter, a NUL or
 * control byte, a value too long, a bad side, 'a' without 'b', a side
 * without a service. *out is the caller's (compare_query_release), left
 * empty on failure.
 */
int compare_query_parse(compare_query *out, const compare_param *p, size_t n, pr_error *err);
void compare_query_release(compare_query *q);

/*
 * The token an Authorization header carries: "Bearer TOKEN", or "Basic"
 * and base64 of "USER:TOKEN" (the user is ignored), which a browser
 * prompts for. 0 with the token in out (n bytes, NUL-terminated); -1
 * when there is none or the header is malformed. The token is not checked.
 */
int compare_token_from_header(char *out, size_t n, const char *header);

typedef struct compare_response {
	unsigned status;               /* 200, 400, 403, 404, 422 */
	const char *content_type;      /* static */
	char *body;                    /* owned: HTML, or one line of text for errors */
	size_t len;
	char *csp;                     /* owned: the Content-Security-Policy header */
} compare_response;

void compare_response_release(compare_response *r);

/*
 * Answer query `q` for `tok`: a page (200) or a refusal in one line of
 * text (400, 403, 404, 422), always 0. Fails (< 0, message in err) only
 * when the database or memory does; the server answers 503.
 */
int compare_page(compare_response *out, const job_env *env, const token_info *tok,
		 const compare_query *q, pr_error *err);

#endif
