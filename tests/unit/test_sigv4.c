/*
 * test_sigv4.c: the tests' own SigV4 computation (tests/support/sigv4.c),
 * which checks every request the S3 tests send, reproduces the
 * signatures AWS publishes:
 *   - the Signature Version 4 test suite (credentials AKIDEXAMPLE /
 *     wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY, us-east-1, service
 *     "service", 20150830T123600Z): get-vanilla (with the hash of its
 *     canonical request), get-vanilla-query-order-key-case, post-vanilla;
 *   - the S3 API reference, "Signature Calculations for the Authorization
 *     Header: Transferring Payload in a Single Chunk" (AKIAIOSFODNN7EXAMPLE
 *     / wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY, us-east-1, s3,
 *     20130524T000000Z, examplebucket.s3.amazonaws.com): GET Object with a
 *     Range (and the hash of its canonical request), PUT Object
 *     "test$file.text", GET Bucket lifecycle, GET Bucket (list objects).
 * Then sigv4_verify: it accepts a request signed so, and refuses one whose
 * body, signed header, path, query order, secret, scope or date is not
 * what was signed.
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

#include "tests/support/sigv4.h"

#define EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define SUITE_SECRET "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define S3_SECRET "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define S3_HOST "examplebucket.s3.amazonaws.com"
#define S3_DATE "20130524T000000Z"

/* Headers from "Name: value" strings (the array of lines ends with NULL). */
static size_t headers_of(sigv4_header *out, const char *const *lines)
{
	size_t n = 0;

	for (; lines[n]; n++) {
		const char *colon = strchr(lines[n], ':');
		out[n].name = lines[n];
		out[n].name_len = (size_t)(colon - lines[n]);
		out[n].value = colon + 1;
		out[n].value_len = strlen(colon + 1);
	}
	return n;
}

static void signature_of(char out[65], const char *method, const char *target,
			 const char *const *lines, const char *signed_headers, const char *payload,
			 const char *secret, const char *date, const char *service,
			 char creq_hash[65])
{
	sigv4_header h[16];
	size_t n = headers_of(h, lines);
	char *creq = sigv4_canonical_request(method, target, h, n, signed_headers, payload);

	assert_non_null(creq);
	if (creq_hash)
		sigv4_sha256_hex(creq_hash, creq, strlen(creq));
	sigv4_signature(out, secret, date, "us-east-1", service, creq);
	free(creq);
}

static void test_the_signature_v4_test_suite(void **state)
{
	static const char *const vanilla[] = {"Host:example.amazonaws.com",
					      "X-Amz-Date:20150830T123600Z", NULL};
	char sig[65], crh[65];

	(void)state;
	signature_of(sig, "GET", "/", vanilla, "host;x-amz-date", EMPTY, SUITE_SECRET,
		     "20150830T123600Z", "service", crh);
	assert_string_equal(crh,
			    "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63");
	assert_string_equal(sig,
			    "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
	/* get-vanilla-query-order-key-case: the query is sorted before signing. */
	signature_of(sig, "GET", "/?Param2=value2&Param1=value1", vanilla, "host;x-amz-date", EMPTY,
		     SUITE_SECRET, "20150830T123600Z", "service", NULL);
	assert_string_equal(sig,
			    "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500");
	signature_of(sig, "POST", "/", vanilla, "host;x-amz-date", EMPTY, SUITE_SECRET,
		     "20150830T123600Z", "service", NULL);
	assert_string_equal(sig,
			    "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b");
}

static void test_the_s3_documentation_examples(void **state)
{
	static const char *const get_object[] = {"Host: " S3_HOST, "Range: bytes=0-9",
						 "x-amz-content-sha256: " EMPTY,
						 "x-amz-date: " S3_DATE, NULL};
	static const char *const put_object[] = {
		"Host: " S3_HOST,
		"Date: Fri, 24 May 2013 00:00:00 GMT",
		"x-amz-date: " S3_DATE,
		"x-amz-storage-class: REDUCED_REDUNDANCY",
		"x-amz-content-sha256: "
		"44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072",
		NULL};
	static const char *const bucket[] = {"Host: " S3_HOST, "x-amz-content-sha256: " EMPTY,
					     "x-amz-date: " S3_DATE, NULL};
	char sig[65], crh[65], payload[65];

	(void)state;
	signature_of(sig, "GET", "/test.txt", get_object,
		     "host;range;x-amz-content-sha256;x-amz-date", EMPTY, S3_SECRET, S3_DATE, "s3",
		     crh);
	assert_string_equal(crh,
			    "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
	assert_string_equal(sig,
			    "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");

	sigv4_sha256_hex(payload, "Welcome to Amazon S3.", 21);
	assert_string_equal(payload,
			    "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
	/* '$' is encoded in the canonical URI whether or not the client sent it so. */
	signature_of(sig, "PUT", "/test$file.text", put_object,
		     "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class", payload,
		     S3_SECRET, S3_DATE, "s3", NULL);
	assert_string_equal(sig,
			    "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
	signature_of(sig, "PUT", "/test%24file.text", put_object,
		     "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class", payload,
		     S3_SECRET, S3_DATE, "s3", NULL);
	assert_string_equal(sig,
			    "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");

	signature_of(sig, "GET", "/?lifecycle", bucket, "host;x-amz-content-sha256;x-amz-date",
		     EMPTY, S3_SECRET, S3_DATE, "s3", NULL);
	assert_string_equal(sig,
			    "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
	signature_of(sig, "GET", "/?prefix=J&max-keys=2", bucket,
		     "host;x-amz-content-sha256;x-amz-date", EMPTY, S3_SECRET, S3_DATE, "s3", NULL);
	assert_string_equal(sig,
			    "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

/* A request as a server receives it, signed with the S3 example's credentials. */
typedef struct received {
	char target[256];
	char auth[512];
	char sha[100];
	const char *lines[8];
	sigv4_header h[8];
	size_t n;
	const char *body;
} received;

static void sign(received *r, const char *method, const char *target, const char *body,
		 const char *secret)
{
	static const char signed_h[] = "host;x-amz-content-sha256;x-amz-date";
	char payload[65], sig[65];
	char *creq;

	snprintf(r->target, sizeof(r->target), "%s", target);
	sigv4_sha256_hex(payload, body, strlen(body));
	snprintf(r->sha, sizeof(r->sha), "x-amz-content-sha256: %s", payload);
	r->lines[0] = "Host: " S3_HOST;
	r->lines[1] = "x-amz-date: " S3_DATE;
	r->lines[2] = r->sha;
	r->lines[3] = NULL;
	r->n = headers_of(r->h, r->lines);
	creq = sigv4_canonical_request(method, target, r->h, r->n, signed_h, payload);
	assert_non_null(creq);
	sigv4_signature(sig, secret, S3_DATE, "us-east-1", "s3", creq);
	free(creq);
	snprintf(r->auth, sizeof(r->auth),
		 "Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/"
		 "us-east-1/s3/aws4_request, SignedHeaders=%s, Signature=%s",
		 signed_h, sig);
	r->lines[3] = r->auth;
	r->lines[4] = NULL;
	r->n = headers_of(r->h, r->lines);
	r->body = body;
}

static int verify(received *r, const char *method, char *why, size_t n)
{
	return sigv4_verify(method, r->target, r->h, r->n, r->body, strlen(r->body),
			    "AKIAIOSFODNN7EXAMPLE", S3_SECRET, "us-east-1", "s3", 0, why, n);
}

static void test_verify_accepts_the_signed_request_and_nothing_else(void **state)
{
	received r;
	char why[4096];

	(void)state;
	sign(&r, "PUT", "/examplebucket/a/b.zst?x-id=PutObject", "payload", S3_SECRET);
	assert_int_equal(verify(&r, "PUT", why, sizeof(why)), 0);

	/* Another method, another body, another path. */
	assert_int_equal(verify(&r, "POST", why, sizeof(why)), -1);
	assert_non_null(strstr(why, "signature"));
	r.body = "payloax";
	assert_int_equal(verify(&r, "PUT", why, sizeof(why)), -1);
	assert_non_null(strstr(why, "x-amz-content-sha256"));
	r.body = "payload";
	snprintf(r.target, sizeof(r.target), "/examplebucket/a/c.zst?x-id=PutObject");
	assert_int_equal(verify(&r, "PUT", why, sizeof(why)), -1);

	/* A query the client signed unsorted is not what the server computes. */
	sign(&r, "GET", "/examplebucket?prefix=J&list-type=2", "", S3_SECRET);
	assert_int_equal(verify(&r, "GET", why, sizeof(why)), 0);
	{
		/* The same request signed over the query as sent, not sorted: refused. */
		sigv4_header h[8];
		const char *lines[] = {"Host: " S3_HOST, "x-amz-date: " S3_DATE,
				       "x-amz-content-sha256: " EMPTY, NULL, NULL};
		char auth[512], sig[65];
		const char *creq = "GET\n/examplebucket\nprefix=J&list-type=2\nhost:" S3_HOST
				   "\nx-amz-content-sha256:" EMPTY "\nx-amz-date:" S3_DATE
				   "\n\nhost;x-amz-content-sha256;x-amz-date\n" EMPTY;
		sigv4_signature(sig, S3_SECRET, S3_DATE, "us-east-1", "s3", creq);
		snprintf(auth, sizeof(auth),
			 "Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/"
			 "us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-content-sha256;"
			 "x-amz-date, Signature=%s",
			 sig);
		lines[3] = auth;
		size_t n = headers_of(h, lines);
		assert_int_equal(sigv4_verify("GET", "/examplebucket?prefix=J&list-type=2", h, n,
					      "", 0, "AKIAIOSFODNN7EXAMPLE", S3_SECRET, "us-east-1",
					      "s3", 0, why, sizeof(why)),
				 -1);
	}

	/* The wrong secret, key id, region or service; a date far from the clock. */
	sign(&r, "GET", "/examplebucket/k", "", "not-the-secret");
	assert_int_equal(verify(&r, "GET", why, sizeof(why)), -1);
	sign(&r, "GET", "/examplebucket/k", "", S3_SECRET);
	assert_int_equal(sigv4_verify("GET", r.target, r.h, r.n, "", 0, "AKIAOTHER", S3_SECRET,
				      "us-east-1", "s3", 0, why, sizeof(why)),
			 -1);
	assert_non_null(strstr(why, "credential scope"));
	assert_int_equal(sigv4_verify("GET", r.target, r.h, r.n, "", 0, "AKIAIOSFODNN7EXAMPLE",
				      S3_SECRET, "eu-west-1", "s3", 0, why, sizeof(why)),
			 -1);
	assert_int_equal(sigv4_verify("GET", r.target, r.h, r.n, "", 0, "AKIAIOSFODNN7EXAMPLE",
				      S3_SECRET, "us-east-1", "s3", 1369353600LL + 3600, why,
				      sizeof(why)),
			 -1);
	assert_non_null(strstr(why, "15 minutes"));
	assert_int_equal(sigv4_verify("GET", r.target, r.h, r.n, "", 0, "AKIAIOSFODNN7EXAMPLE",
				      S3_SECRET, "us-east-1", "s3", 1369353600LL + 60, why,
				      sizeof(why)),
			 0);
}

/* An x-amz-* header sent but left out of the signature is refused. */
static void test_verify_wants_every_amz_header_signed(void **state)
{
	received r;
	char why[4096];
	const char *extra = "x-amz-security-token: tok";

	(void)state;
	sign(&r, "GET", "/examplebucket/k", "", S3_SECRET);
	r.lines[4] = extra;
	r.lines[5] = NULL;
	r.n = headers_of(r.h, r.lines);
	assert_int_equal(verify(&r, "GET", why, sizeof(why)), -1);
	assert_non_null(strstr(why, "x-amz-security-token"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_signature_v4_test_suite),
		cmocka_unit_test(test_the_s3_documentation_examples),
		cmocka_unit_test(test_verify_accepts_the_signed_request_and_nothing_else),
		cmocka_unit_test(test_verify_wants_every_amz_header_signed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
