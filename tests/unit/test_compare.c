/*
 * test_compare.c: the comparison page's query parser and Authorization
 * header, table-driven: well-formed queries give the sides in their
 * canonical text; malformed, hostile and oversized ones (unknown and
 * repeated parameters, NUL and control bytes, bad sides, values and
 * queries over their caps) are PR_EUSAGE with one short line; Basic and
 * Bearer headers give the token, anything else none.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <openssl/evp.h>

#include "jobs/compare.h"

/*
 * Split "k=v&k=v" into parameters as the server hands them over:
 * percent-decoded, so a value may hold any byte (NUL included).
 */
typedef struct parsed {
	char text[16384];
	compare_param p[64];
	size_t n;
} parsed;

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
	     : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static size_t decode(char *s)
{
	size_t o = 0;

	for (size_t i = 0; s[i]; i++) {
		if (s[i] == '%' && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
			s[o++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
			i += 2;
		} else {
			s[o++] = s[i];
		}
	}
	s[o] = '\0';
	return o;
}

static void split(parsed *q, const char *query)
{
	char *p, *save = NULL;

	memset(q, 0, sizeof(*q));
	assert_true(strlen(query) < sizeof(q->text));
	strcpy(q->text, query);
	for (p = strtok_r(q->text, "&", &save); p; p = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(p, '=');
		assert_true(q->n < 64);
		if (eq)
			*eq = '\0';
		q->p[q->n].key = p;
		q->p[q->n].key_len = decode(p);
		q->p[q->n].value = eq ? eq + 1 : "";
		q->p[q->n].value_len = eq ? decode(eq + 1) : 0;
		q->n++;
	}
}

static const struct good {
	const char *query;
	const char *service, *type, *a, *b; /* NULL: none */
} goods[] = {
	{"", NULL, NULL, NULL, NULL},
	{"service=web", "web", NULL, NULL, NULL},
	{"service=web&type=heap", "web", "heap", NULL, NULL},
	{"service=web&type=cpu&a=release:v1&b=release:v2", "web", "cpu", "release:v1",
	 "release:v2"},
	{"b=release:v2&a=release:v1&service=web", "web", NULL, "release:v1", "release:v2"},
	{"service=web&a=until:2026-03-02T00:00:00Z,host:h1,since:2026-03-01T00:00:00Z"
	 "&b=commit:ABCD1234",
	 "web", NULL, "host:h1,since:2026-03-01T00:00:00Z,until:2026-03-02T00:00:00Z",
	 "commit:ABCD1234"},
	{"service=web&a=id:3.1.2&b=release:v1:rc%2B1", "web", NULL, "id:3.1.2", "release:v1:rc+1"},
	{"service=web&a=release:%E2%9C%93&b=host:h", "web", NULL, "release:\xe2\x9c\x93", "host:h"},
};

static void test_good_queries(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(goods) / sizeof(goods[0]); i++) {
		parsed p;
		compare_query q;
		pr_error err = PR_ERROR_INIT;
		const struct good *g = &goods[i];

		split(&p, g->query);
		if (compare_query_parse(&q, p.p, p.n, &err) != 0)
			fail_msg("'%s': %s", g->query, err.msg);
		if (g->service)
			assert_string_equal(q.service, g->service);
		else
			assert_null(q.service);
		if (g->type)
			assert_string_equal(q.type, g->type);
		else
			assert_null(q.type);
		assert_int_equal(q.sides, g->a != NULL);
		if (g->a) {
			assert_string_equal(q.a.text, g->a);
			assert_string_equal(q.b.text, g->b);
		}
		compare_query_release(&q);
	}
}

static void test_sides_parsed(void **state)
{
	parsed p;
	compare_query q;
	pr_error err = PR_ERROR_INIT;

	(void)state;
	split(&p, "service=web&a=id:3.1.2,host:h%3Ax&b=since:2026-03-01T00:00:00Z,release:v1");
	assert_int_equal(compare_query_parse(&q, p.p, p.n, &err), 0);
	assert_int_equal(q.a.nids, 3);
	assert_int_equal(q.a.ids[0], 3);
	assert_int_equal(q.a.ids[2], 2);
	assert_string_equal(q.a.host, "h:x");
	assert_null(q.a.release);
	assert_int_equal(q.b.since_us, INT64_C(1772323200) * 1000000);
	assert_int_equal(q.b.until_us, 0);
	assert_string_equal(q.b.release, "v1");
	compare_query_release(&q);
}

static const struct bad {
	const char *query;
	const char *why; /* a part of the message */
} bads[] = {
	{"service=web&token=x", "unknown parameter 'token'"},
	{"%1b%5B2J=1", "unknown parameter '?[2J'"},
	{"service=web&service=web", "parameter 'service' is given twice"},
	{"service=web&a=release:v1", "give both 'a'"},
	{"service=web&b=release:v1", "give both 'a'"},
	{"a=release:v1&b=release:v2", "'a' needs a 'service'"},
	{"type=cpu", "'type' needs a 'service'"},
	{"service=", "'' is not a service name"},
	{"service=..%2F..%2Fetc", "'../../etc' is not a service name"},
	{"service=%3Cscript%3E", "'<script>' is not a service name"},
	{"service=web&type=CPU%3B", "'CPU;' is not a profile type"},
	{"service=web&type=", "'' is not a profile type"},
	{"service=web%00x", "parameter 'service' holds a NUL byte"},
	{"service=web&a=release:v1%00x&b=release:v2", "parameter 'a' holds a NUL byte"},
	{"service=web&a=release:v1%0D%0AX:1&b=release:v2", "parameter 'a' holds a control byte"},
	{"service=web&a=release:v%7F&b=release:v2", "parameter 'a' holds a control byte"},
	{"service=web&a=release:%ff&b=release:r1", "parameter 'a' is not UTF-8 text"},
	{"service=web&a=release:r1&b=host:%ff", "parameter 'b' is not UTF-8 text"},
	{"service=web&a=release:%C0%AE&b=release:r1", "parameter 'a' is not UTF-8 text"},
	{"service=web&a=release:%E2%9C&b=release:r1", "parameter 'a' is not UTF-8 text"},
	{"service=w%ffeb", "parameter 'service' is not UTF-8 text"},
	{"service=web&a=&b=release:v2", "'a' is empty"},
	{"service=web&a=release:v1&b=", "'b' is empty"},
	{"service=web&a=v1&b=release:v2", "'a': 'v1' is not KEY:VALUE"},
	{"service=web&a=branch:main&b=release:v2", "'a': unknown key 'branch'"},
	{"service=web&a=:v1&b=release:v2", "'a': unknown key ''"},
	{"service=web&a=release:v1,release:v2&b=release:v2", "'a': 'release' is given twice"},
	{"service=web&a=release:v1,,host:h&b=release:v2", "'a' has an empty item"},
	{"service=web&a=release:v1,&b=release:v2", "'a' has an empty item"},
	{"service=web&a=release:&b=release:v2", "'a': 'release' has no value"},
	{"service=web&a=release:v1&b=commit:xyz1", "'b': commit 'xyz1' is not 4 to 64 hex"},
	{"service=web&a=commit:abc&b=release:v2", "commit 'abc' is not 4 to 64 hex"},
	{"service=web&a=since:7d&b=release:v2", "'a': since '7d' is not an ISO 8601 time"},
	{"service=web&a=until:yesterday&b=release:v2", "until 'yesterday' is not an ISO 8601"},
	{"service=web&a=since:2026-03-05T00:00:00Z,until:2026-03-05T00:00:00Z&b=host:h",
	 "'a': since is not before until"},
	{"service=web&a=id:1.x&b=host:h", "'a': id 'x' is not a capture id"},
	{"service=web&a=id:0&b=host:h", "'a': id '0' is not a capture id"},
	{"service=web&a=id:1..2&b=host:h", "'a': id '' is not a capture id"},
	{"service=web&a=id:-1&b=host:h", "'a': id '-1' is not a capture id"},
	{"service=web&a=id:9999999999999999999&b=host:h", "is not a capture id"},
};

static void check_bad(const char *query, const char *why)
{
	parsed p;
	compare_query q;
	pr_error err = PR_ERROR_INIT;
	int rc;

	split(&p, query);
	rc = compare_query_parse(&q, p.p, p.n, &err);
	if (rc != PR_EUSAGE)
		fail_msg("'%.80s' gave %d, not PR_EUSAGE", query, rc);
	if (!strstr(err.msg, why))
		fail_msg("'%.80s': \"%s\" does not say \"%s\"", query, err.msg, why);
	/* One line, short, and no raw control byte from the query. */
	assert_null(strchr(err.msg, '\n'));
	assert_true(strlen(err.msg) < 200);
	for (const char *c = err.msg; *c; c++)
		assert_false((unsigned char)*c < 0x20);
	assert_null(q.service);
	assert_false(q.sides);
}

static void test_bad_queries(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++)
		check_bad(bads[i].query, bads[i].why);
}

static void test_oversized_queries(void **state)
{
	static char q[16000];
	size_t n;

	(void)state;
	/* A value over 255 bytes. */
	n = (size_t)snprintf(q, sizeof(q), "service=web&a=release:");
	memset(q + n, 'x', 256);
	snprintf(q + n + 256, sizeof(q) - n - 256, "&b=host:h");
	check_bad(q, "'a': the release is longer than 255 bytes");
	/* Exactly 255 is fine. */
	{
		parsed p;
		compare_query cq;
		pr_error err = PR_ERROR_INIT;
		n = (size_t)snprintf(q, sizeof(q), "service=web&a=release:");
		memset(q + n, 'x', 255);
		snprintf(q + n + 255, sizeof(q) - n - 255, "&b=host:h");
		split(&p, q);
		assert_int_equal(compare_query_parse(&cq, p.p, p.n, &err), 0);
		compare_query_release(&cq);
	}
	/* More than 500 ids. */
	n = (size_t)snprintf(q, sizeof(q), "service=web&b=host:h&a=id:1");
	for (int i = 0; i < 500; i++)
		n += (size_t)snprintf(q + n, sizeof(q) - n, ".%d", i + 2);
	check_bad(q, "'a': more than 500 capture ids");
	/* The whole query over 4096 bytes. */
	n = (size_t)snprintf(q, sizeof(q), "service=web&b=host:h&a=host:h,release:");
	memset(q + n, 'y', 200);
	n += 200;
	for (int i = 0; i < 25; i++)
		n += (size_t)snprintf(q + n, sizeof(q) - n, "&service=%0200d", i);
	check_bad(q, "the query is longer than 4096 bytes");
}

/* ---- the Authorization header -------------------------------------------------- */

static const char *basic(const char *userpass, size_t len)
{
	static char h[4096];
	unsigned char b64[4000];

	EVP_EncodeBlock(b64, (const unsigned char *)userpass, (int)len);
	snprintf(h, sizeof(h), "Basic %s", (char *)b64);
	return h;
}

static void test_token_header(void **state)
{
	char tok[80], big[800];

	(void)state;
	assert_int_equal(compare_token_from_header(tok, sizeof(tok), "Bearer prt_abc"), 0);
	assert_string_equal(tok, "prt_abc");
	assert_int_equal(compare_token_from_header(tok, sizeof(tok), "bearer prt_x"), 0);
	assert_string_equal(tok, "prt_x");
	assert_int_equal(compare_token_from_header(tok, sizeof(tok), basic("alice:prt_t", 11)), 0);
	assert_string_equal(tok, "prt_t");
	assert_int_equal(compare_token_from_header(tok, sizeof(tok), basic(":prt_t2", 7)), 0);
	assert_string_equal(tok, "prt_t2");
	assert_int_equal(compare_token_from_header(tok, sizeof(tok), basic("u:a:b", 5)), 0);
	assert_string_equal(tok, "a:b");
	assert_int_equal(compare_token_from_header(tok, sizeof(tok), basic("u:ab", 4)), 0);
	assert_string_equal(tok, "ab");

	/* None, or malformed: no token. */
	assert_int_equal(compare_token_from_header(tok, sizeof(tok), NULL), -1);
	assert_int_equal(compare_token_from_header(tok, sizeof(tok), ""), -1);
	assert_int_equal(compare_token_from_header(tok, sizeof(tok), "Bearer "), -1);
	assert_int_equal(compare_token_from_header(tok, sizeof(tok), "Bearer a b"), -1);
	assert_int_equal(compare_token_from_header(tok, sizeof(tok), "Bearer a\x01"), -1);
	assert_int_equal(compare_token_from_header(tok, sizeof(tok), "Digest x=1"), -1);
	assert_int_equal(compare_token_from_header(tok, sizeof(tok), "Basic "), -1);
	assert_int_equal(compare_token_from_header(tok, sizeof(tok), "Basic abc"), -1);
	assert_int_equal(compare_token_from_header(tok, sizeof(tok), "Basic !!!!"), -1);
	assert_int_equal(compare_token_from_header(tok, sizeof(tok), basic("nocolon", 7)), -1);
	assert_int_equal(compare_token_from_header(tok, sizeof(tok), basic("user:", 5)), -1);
	assert_int_equal(compare_token_from_header(tok, sizeof(tok), basic("u:t\x01", 4)), -1);
	assert_int_equal(compare_token_from_header(tok, sizeof(tok), basic("u:t\0x", 5)), -1);
	assert_string_equal(tok, "");
	/* Longer than the caller's room, or than any token. */
	memset(big, 'a', sizeof(big));
	big[0] = 'u', big[1] = ':';
	assert_int_equal(compare_token_from_header(tok, sizeof(tok), basic(big, 100)), -1);
	assert_int_equal(compare_token_from_header(tok, sizeof(tok), basic(big, 600)), -1);
	memcpy(big, "Bearer ", 7);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(compare_token_from_header(tok, sizeof(tok), big), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_queries),
		cmocka_unit_test(test_sides_parsed),
		cmocka_unit_test(test_bad_queries),
		cmocka_unit_test(test_oversized_queries),
		cmocka_unit_test(test_token_header),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
