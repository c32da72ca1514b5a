/*
 * s3test.h: a real S3-compatible server on loopback for the tests:
 * s3rver (installed by scripts/install-deps into tests/node) behind
 * s3_sigcheck (tests/servers), which checks every request's SigV4
 * signature with the tests' own computation (tests/support/sigv4.c) and
 * logs it. Tests talk to the proxy's endpoint; a request whose signature
 * is wrong is answered 403 and logged with "ok": false.
 *
 * s3rver takes any access key id "S3RVER" (it checks no V4 signature:
 * that is the proxy's job), so the tests use that id with a secret of
 * their own. Both servers get SIGTERM when the test process dies.
 */
#ifndef PR_TEST_S3TEST_H
#define PR_TEST_S3TEST_H

#include <stdbool.h>
#include <sys/types.h>

#define S3TEST_KEY_ID "S3RVER"
#define S3TEST_SECRET "test-S3-secret/Key+with=chars"
#define S3TEST_REGION "eu-central-1"
#define S3TEST_BUCKET "profreg-test"

typedef struct s3test {
	char dir[512];           /* a private folder: s3rver's data, logs, ports */
	char data[600];          /* s3rver's directory (bucket folders inside) */
	char log[600];           /* the proxy's request log, one JSON line a request */
	char endpoint[64];       /* "http://127.0.0.1:PORT", the proxy */
	char vhost_endpoint[64]; /* "http://s3.localhost:PORT": BUCKET.s3.localhost */
	int upstream_port;       /* s3rver's own port */
	int port;                /* the proxy's */
	pid_t s3rver_pid;
	pid_t proxy_pid;
} s3test;

/*
 * Start s3rver with bucket S3TEST_BUCKET and the proxy in front of it,
 * in a new folder under $PROFREG_TEST_TMP (or /tmp). `proxy_args` (NULL,
 * or NULL-terminated) are extra proxy flags ("--fail-first", "2").
 * 0, or -1 after printing why on stderr.
 */
int s3test_start(s3test *t, const char *const *proxy_args);

/*
 * Restart the proxy alone (same upstream, same log) with other flags;
 * 0 or -1.
 */
int s3test_restart_proxy(s3test *t, const char *const *proxy_args);

/* Stop both servers and remove the folder. */
void s3test_stop(s3test *t);

/* Requests the proxy logged so far, and how many of them failed the check. */
void s3test_counts(const s3test *t, long *total, long *bad);

/* The path of object `object_key` in s3rver's data folder (its bytes). */
void s3test_object_path(const s3test *t, const char *object_key, char *out, size_t n);

#endif
