/*
 * sigv4.h: an independent AWS Signature Version 4 computation for the
 * tests, written from the algorithm as AWS documents it ("Create a
 * signed AWS API request" and the S3 API reference's "Signature
 * Calculations for the Authorization Header"), on libcrypto's SHA-256 and
 * HMAC. It shares no code with libcurl's signer or with profreg: the S3
 * tests check every request profreg sends against it, and test_sigv4.c
 * checks it against the examples AWS publishes.
 *
 * S3's canonical form, which the server computes from what it received:
 *   - the URI: the path decoded, then each byte but A-Z a-z 0-9 - . _ ~ /
 *     percent-encoded once (upper-case hex); no normalisation;
 *   - the query: each name and value decoded, encoded the same way but
 *     '/' too, "name=value" pairs sorted by name then value, joined by
 *     '&' (a parameter without '=' has an empty value);
 *   - the headers SignedHeaders names, lower-case, each "name:value\n"
 *     with the value trimmed and inner runs of spaces made one, several
 *     lines of one name joined by ',';
 *   - the payload hash: the x-amz-content-sha256 header.
 */
#ifndef PR_TEST_SIGV4_H
#define PR_TEST_SIGV4_H

#include <stddef.h>

/* One header as received: name and value (not NUL-terminated). */
typedef struct sigv4_header {
	const char *name;
	size_t name_len;
	const char *value;
	size_t value_len;
} sigv4_header;

/*
 * The canonical request of `method` `target` (the request line's path and
 * query) with `headers`, signing the headers `signed_headers` names
 * ("host;x-amz-date") and `payload_hash`. A new string (free()); NULL when
 * a signed header is missing or memory ran out.
 */
char *sigv4_canonical_request(const char *method, const char *target, const sigv4_header *headers,
			      size_t nheaders, const char *signed_headers,
			      const char *payload_hash);

/* Lower-case hex SHA-256 of `len` bytes into out (65 bytes). */
void sigv4_sha256_hex(char out[65], const void *data, size_t len);

/*
 * The signature (64 hex characters and a NUL) of a canonical request made
 * at `amz_date` ("20150830T123600Z") in scope DATE/region/service/aws4_request.
 */
void sigv4_signature(char out[65], const char *secret, const char *amz_date, const char *region,
		     const char *service, const char *canonical_request);

/*
 * Check a received request: its Authorization header (AWS4-HMAC-SHA256,
 * Credential=KEY_ID/DATE/REGION/SERVICE/aws4_request, SignedHeaders,
 * Signature) against the signature computed here with `secret`;
 * `key_id`, `region` and `service` must be the ones given, DATE the day
 * of X-Amz-Date, which must be within 15 minutes of `now` (Unix
 * seconds; 0: not checked), the signed headers must include host and
 * every x-amz-* header sent, and x-amz-content-sha256 must be the SHA-256
 * of `body`. 0 when it all holds; -1 with the reason in why[n].
 */
int sigv4_verify(const char *method, const char *target, const sigv4_header *headers,
		 size_t nheaders, const void *body, size_t body_len, const char *key_id,
		 const char *secret, const char *region, const char *service, long long now,
		 char *why, size_t n);

#endif
