/*
 * test_http.c: the HTTP client against real loopback servers: a plain
 * one (tests/servers/http_server.c) and `openssl s_server` with a
 * self-signed certificate made here. Bodies and their cap, a redirect
 * that is returned and never followed, Retry-After in seconds and as a
 * date, a server that never answers (the total timeout), a refused
 * connection, TLS verified with and without the right CA, schemes other
 * than http(s) refused before anything is sent, header injection refused,
 * requests from several threads at once, and no secret (a header's value,
 * a URL's userinfo) in any error message, nor in an error answer that
 * echoes the request; a header line past libcurl's limit is an I/O error.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "pipeline/http.h"

#define PASSWORD "hunter2-url-password"
#define USER "alice-url-user"
#define TOKEN "tok-SECRET-0123456789abcdef"
#define QUERY_SECRET "query-SECRET-9876"

static char dir[256];
static char log_path[512];
static char cert_path[512];
static pid_t server_pid = -1, tls_pid = -1;
static int port, tls_port;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/*
 * Start argv[0] with stdout and stderr to `out`; the child's pid. The
 * child gets SIGTERM should this process die first (a failed bound, a
 * crash), so no server outlives the run.
 */
static pid_t spawn(char *const argv[], const char *out)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd;
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* Read a number after `marker` in `path` within 10 s; -1 when it never came. */
static int wait_for_number(const char *path, const char *marker)
{
	for (int i = 0; i < 200; i++) {
		char text[4096] = "";
		FILE *f = fopen(path, "r");
		if (f) {
			size_t n = fread(text, 1, sizeof(text) - 1, f);
			const char *m;
			text[n] = '\0';
			fclose(f);
			if ((m = strstr(text, marker)) && strchr(m, '\n'))
				return atoi(m + strlen(marker));
		}
		sleep_ms(50);
	}
	return -1;
}

static void stop(pid_t *pid)
{
	if (*pid > 0) {
		kill(*pid, SIGTERM);
		waitpid(*pid, NULL, 0);
	}
	*pid = -1;
}

static int group_setup(void **state)
{
	const char *tmp = getenv("PROFREG_TEST_TMP"), *build = getenv("BUILD");
	char server[512], port_file[512], out[512], key[512], cmd[2048];

	(void)state;
	snprintf(dir, sizeof(dir), "%s/test_http.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return -1;
	snprintf(server, sizeof(server), "%s/servers/http_server", build ? build : "build");
	snprintf(port_file, sizeof(port_file), "%s/port", dir);
	snprintf(log_path, sizeof(log_path), "%s/requests.log", dir);
	snprintf(out, sizeof(out), "%s/server.out", dir);
	{
		char *argv[] = {server, "--port-file", port_file, "--log", log_path,
				"--timeout", "300", NULL};
		server_pid = spawn(argv, out);
	}
	if ((port = wait_for_number(port_file, "")) <= 0) {
		fprintf(stderr, "test_http: '%s' did not start (make builds it)\n", server);
		return -1;
	}
	/* A self-signed certificate for IP 127.0.0.1, and a TLS server with it. */
	snprintf(cert_path, sizeof(cert_path), "%s/cert.pem", dir);
	snprintf(key, sizeof(key), "%s/key.pem", dir);
	snprintf(cmd, sizeof(cmd),
		 "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
		 " -keyout '%s' -out '%s' -days 2 -subj /CN=127.0.0.1"
		 " -addext subjectAltName=IP:127.0.0.1 >'%s/req.out' 2>&1", key, cert_path, dir);
	if (system(cmd) != 0) {
		fprintf(stderr, "test_http: cannot make a certificate with openssl (make deps)\n");
		return -1;
	}
	snprintf(out, sizeof(out), "%s/tls.out", dir);
	{
		/* s_server has no time limit of its own. */
		char *argv[] = {"timeout", "300", "openssl", "s_server", "-accept", "127.0.0.1:0",
				"-cert", cert_path, "-key", key, "-www", NULL};
		tls_pid = spawn(argv, out);
	}
	if ((tls_port = wait_for_number(out, "ACCEPT 127.0.0.1:")) <= 0) {
		fprintf(stderr, "test_http: openssl s_server did not start\n");
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[512];

	(void)state;
	stop(&server_pid);
	stop(&tls_pid);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *url(const char *path)
{
	static char u[4][512];
	static int next;
	char *s = u[next++ % 4];

	snprintf(s, 512, "http://127.0.0.1:%d%s", port, path);
	return s;
}

/* How many requests the plain server has logged for `path` (NULL: all). */
static int logged(const char *path)
{
	char line[1024], want[512];
	FILE *f = fopen(log_path, "r");
	int n = 0;

	assert_non_null(f);
	snprintf(want, sizeof(want), "\"path\":\"%s\"", path ? path : "");
	while (fgets(line, sizeof(line), f))
		n += !path || strstr(line, want) != NULL;
	fclose(f);
	return n;
}

/* A message must show none of the secrets of these tests. */
static void assert_no_secret(const char *msg)
{
	static const char *const never[] = {PASSWORD, USER, TOKEN, QUERY_SECRET, "hunter2",
					    "SECRET", "alice"};

	for (size_t i = 0; i < sizeof(never) / sizeof(*never); i++)
		if (strstr(msg, never[i])) {
			fprintf(stderr, "message shows '%s': %s\n", never[i], msg);
			fail();
		}
}

static void test_a_200_brings_its_body(void **state)
{
	http_req req = {.method = HTTP_GET, .url = url("/ok"), .timeout_ms = 10000};
	pr_error err = PR_ERROR_INIT;
	http_response r;

	(void)state;
	assert_int_equal(http_request(&r, &req, &err), 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body.ptr, "hello from http_server\n");
	assert_int_equal(r.body.len, 23);
	assert_false(r.truncated);
	assert_false(r.timed_out);
	assert_int_equal(r.retry_after_ms, -1);
	assert_int_equal(err.code, 0);
	http_response_release(&r);
	assert_int_equal(r.body.len, 0);
	/* An error status is an answer, not an error. */
	req.url = url("/no-such-path");
	assert_int_equal(http_request(&r, &req, &err), 0);
	assert_int_equal(r.status, 404);
	assert_string_equal(r.body.ptr, "no such path\n");
	http_response_release(&r);
	/* HEAD: the status, no body. */
	req.method = HTTP_HEAD;
	req.url = url("/ok");
	assert_int_equal(http_request(&r, &req, &err), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body.len, 0);
	http_response_release(&r);
}

/* The request the echo server saw, as JSON (the caller decrefs). */
static json_t *echoed(const http_response *r)
{
	json_t *o = json_loadb(r->body.ptr, r->body.len, 0, NULL);

	assert_non_null(o);
	return o;
}

static bool has_header(json_t *o, const char *line)
{
	json_t *h = json_object_get(o, "headers"), *v;
	size_t i;

	json_array_foreach(h, i, v)
		if (strcmp(json_string_value(v), line) == 0)
			return true;
	return false;
}

static bool has_header_prefix(json_t *o, const char *prefix)
{
	json_t *h = json_object_get(o, "headers"), *v;
	size_t i;

	json_array_foreach(h, i, v)
		if (strncasecmp(json_string_value(v), prefix, strlen(prefix)) == 0)
			return true;
	return false;
}

static void test_requests_carry_method_headers_body_agent_and_secret(void **state)
{
	static const char *const headers[] = {"Content-Type: application/json", "X-Test: 1", NULL};
	static const char body[] = "{\"a\":1}";
	http_req req = {.method = HTTP_POST, .url = url("/echo"), .headers = headers,
			.secret_header = "Authorization", .secret_value = "Bearer " TOKEN,
			.body = body, .body_len = sizeof(body) - 1, .timeout_ms = 10000};
	pr_error err = PR_ERROR_INIT;
	http_response r;
	json_t *o;
	const char *ua = NULL;
	char *big;
	json_t *v;
	size_t i;

	(void)state;
	assert_int_equal(http_request(&r, &req, &err), 0);
	assert_int_equal(r.status, 200);
	o = echoed(&r);
	assert_string_equal(json_string_value(json_object_get(o, "method")), "POST");
	assert_string_equal(json_string_value(json_object_get(o, "body")), body);
	assert_true(has_header(o, "Content-Type: application/json"));
	assert_true(has_header(o, "X-Test: 1"));
	/* The secret does travel (so the message tests below mean something). */
	assert_true(has_header(o, "Authorization: Bearer " TOKEN));
	json_array_foreach(json_object_get(o, "headers"), i, v)
		if (strncmp(json_string_value(v), "User-Agent: ", 12) == 0)
			ua = json_string_value(v) + 12;
	assert_non_null(ua);
	assert_memory_equal(ua, "profreg/", 8);
	assert_true(strlen(ua) > 8 && strspn(ua + 8, "0123456789.") == strlen(ua + 8));
	json_decref(o);
	http_response_release(&r);

	req.method = HTTP_PUT;
	assert_int_equal(http_request(&r, &req, &err), 0);
	o = echoed(&r);
	assert_string_equal(json_string_value(json_object_get(o, "method")), "PUT");
	assert_string_equal(json_string_value(json_object_get(o, "body")), body);
	json_decref(o);
	http_response_release(&r);

	/* A big body goes without "Expect: 100-continue" (and its wait for an answer). */
	big = malloc(2 << 20);
	assert_non_null(big);
	memset(big, 'b', 2 << 20);
	req.body = big;
	req.body_len = 2 << 20;
	assert_int_equal(http_request(&r, &req, &err), 0);
	o = echoed(&r);
	assert_int_equal(json_string_length(json_object_get(o, "body")), 2 << 20);
	assert_false(has_header_prefix(o, "Expect:"));
	json_decref(o);
	http_response_release(&r);
	free(big);

	req.method = HTTP_DELETE;
	req.body = NULL;
	req.body_len = 0;
	assert_int_equal(http_request(&r, &req, &err), 0);
	o = echoed(&r);
	assert_string_equal(json_string_value(json_object_get(o, "method")), "DELETE");
	json_decref(o);
	http_response_release(&r);
	assert_int_equal(err.code, 0);
}

static void test_a_body_over_the_cap_fails_or_keeps_its_prefix(void **state)
{
	http_req req = {.method = HTTP_GET, .url = url("/bytes/100000"), .max_body = 1000,
			.timeout_ms = 10000};
	pr_error err = PR_ERROR_INIT;
	http_response r;
	char want[128];

	(void)state;
	assert_int_equal(http_request(&r, &req, &err), PR_ELIMIT);
	snprintf(want, sizeof(want), "cannot read 'http://127.0.0.1:%d/...': response body larger "
		 "than 1000 bytes", port);
	assert_string_equal(err.msg, want);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body.len, 0);
	http_response_release(&r);

	/* A prefix only: the first 1000 bytes, the rest read and dropped. */
	pr_error_clear(&err);
	req.prefix_only = true;
	assert_int_equal(http_request(&r, &req, &err), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body.len, 1000);
	assert_memory_equal(r.body.ptr, "abcdefghijklmnopqrstuvwxyzabcd", 30);
	assert_int_equal(r.body.ptr[1000], '\0');
	assert_true(r.truncated);
	http_response_release(&r);

	/* Exactly the cap is not over it. */
	req.prefix_only = false;
	req.url = url("/bytes/1000");
	assert_int_equal(http_request(&r, &req, &err), 0);
	assert_int_equal(r.body.len, 1000);
	assert_false(r.truncated);
	http_response_release(&r);

	/* A body of many reads arrives whole and in order. */
	req.url = url("/bytes/3000000");
	req.max_body = 4000000;
	assert_int_equal(http_request(&r, &req, &err), 0);
	assert_int_equal(r.body.len, 3000000);
	for (size_t i = 0; i < r.body.len; i += 9973)
		assert_int_equal(r.body.ptr[i], 'a' + (i % 65536) % 26);
	http_response_release(&r);
	assert_int_equal(err.code, 0);
}

/*
 * An error answer is read for its reason: as long as its server likes
 * (32 MiB here, under a data cap of 64 MiB), only its first
 * max_error_body bytes are read, and it is still an answer.
 */
static void test_an_error_answer_is_read_only_to_its_own_cap(void **state)
{
	http_req req = {.method = HTTP_GET, .url = url("/error-bytes/33554432"),
			.max_body = (size_t)64 << 20, .max_error_body = 4096, .timeout_ms = 20000};
	pr_error err = PR_ERROR_INIT;
	http_response r;

	(void)state;
	assert_int_equal(http_request(&r, &req, &err), 0);
	assert_int_equal(r.status, 500);
	assert_int_equal(r.body.len, 4096);
	assert_memory_equal(r.body.ptr, "abcdefghijklmnopqrstuvwxyzabcd", 30);
	assert_int_equal(r.body.ptr[4096], '\0');
	assert_true(r.truncated);
	http_response_release(&r);

	/* A shorter one comes whole, and a 2xx body is held to max_body alone. */
	req.url = url("/error-bytes/100");
	assert_int_equal(http_request(&r, &req, &err), 0);
	assert_int_equal(r.status, 500);
	assert_int_equal(r.body.len, 100);
	assert_false(r.truncated);
	http_response_release(&r);
	req.url = url("/bytes/100000");
	assert_int_equal(http_request(&r, &req, &err), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body.len, 100000);
	assert_false(r.truncated);
	http_response_release(&r);
	assert_int_equal(err.code, 0);
}

static void test_a_redirect_is_returned_not_followed(void **state)
{
	http_req req = {.method = HTTP_GET, .url = url("/redirect"), .timeout_ms = 10000};
	pr_error err = PR_ERROR_INIT;
	http_response r;

	(void)state;
	assert_int_equal(http_request(&r, &req, &err), 0);
	assert_int_equal(r.status, 302);
	assert_string_equal(r.body.ptr, "moved\n");
	http_response_release(&r);
	/* The server logs a request before it answers: a followed redirect would show. */
	assert_int_equal(logged("/redirect"), 1);
	assert_int_equal(logged("/redirected-target"), 0);
}

static void test_retry_after_in_seconds_and_as_an_http_date(void **state)
{
	http_req req = {.method = HTTP_GET, .url = url("/retry-seconds/7"), .timeout_ms = 10000};
	pr_error err = PR_ERROR_INIT;
	http_response r;
	int64_t ms = -1;

	(void)state;
	assert_int_equal(http_request(&r, &req, &err), 0);
	assert_int_equal(r.status, 429);
	assert_int_equal(r.retry_after_ms, 7000);
	http_response_release(&r);
	/* 120 s from the server's clock, read on ours: generous bounds. */
	req.url = url("/retry-date/120");
	assert_int_equal(http_request(&r, &req, &err), 0);
	assert_int_equal(r.status, 503);
	assert_true(r.retry_after_ms >= 100000 && r.retry_after_ms <= 121000);
	http_response_release(&r);
	/* A response without one says none. */
	req.url = url("/ok");
	assert_int_equal(http_request(&r, &req, &err), 0);
	assert_int_equal(r.retry_after_ms, -1);
	http_response_release(&r);

	assert_int_equal(http_retry_after(&ms, "0", 0), 0);
	assert_int_equal(ms, 0);
	assert_int_equal(http_retry_after(&ms, "Sun, 06 Nov 1994 08:49:37 GMT", 784111777 - 2), 0);
	assert_int_equal(ms, 2000);
	assert_int_equal(http_retry_after(&ms, "in a while", 0), -1);
	assert_int_equal(ms, 2000);
	assert_int_equal(http_retry_after(&ms, "-5", 0), -1);
}

static void test_a_hanging_server_hits_the_total_timeout(void **state)
{
	http_req req = {.method = HTTP_GET, .url = url("/hang"), .connect_timeout_ms = 5000,
			.timeout_ms = 300};
	pr_error err = PR_ERROR_INIT;
	http_response r;
	char want[128];
	double t0 = now_s(), took;

	(void)state;
	/* Should the timeout not hold, the alarm ends the run instead of the wait. */
	alarm(30);
	assert_int_equal(http_request(&r, &req, &err), PR_EIO);
	alarm(0);
	took = now_s() - t0;
	assert_true(took >= 0.25);
	assert_true(took < 5.0);
	assert_true(r.timed_out);
	assert_int_equal(r.status, 0);
	snprintf(want, sizeof(want),
		 "cannot read 'http://127.0.0.1:%d/...': no answer within 300 ms (timeout)", port);
	assert_string_equal(err.msg, want);
	http_response_release(&r);
}

/*
 * A header line past libcurl's limit is the server's fault: PR_EIO naming
 * the URL and the reason, never PR_ENOMEM (which callers take for their
 * own memory running out, and stop everything for).
 */
static void test_a_giant_response_header_is_an_io_error_not_out_of_memory(void **state)
{
	http_req req = {.method = HTTP_GET, .url = url("/big-header"), .timeout_ms = 10000};
	pr_error err = PR_ERROR_INIT;
	http_response r;
	char want[160];

	(void)state;
	assert_int_equal(http_request(&r, &req, &err), PR_EIO);
	snprintf(want, sizeof(want),
		 "cannot read 'http://127.0.0.1:%d/...': a response header line longer than "
		 "102400 bytes", port);
	assert_string_equal(err.msg, want);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.body.len, 0);
	http_response_release(&r);
}

/* An answer without a status line is the server's fault: an I/O error, not a usage one. */
static void test_an_answer_without_a_status_line_is_an_io_error(void **state)
{
	http_req req = {.method = HTTP_GET, .url = url("/no-status"), .timeout_ms = 10000};
	pr_error err = PR_ERROR_INIT;
	http_response r;
	char want[160];

	(void)state;
	assert_int_equal(http_request(&r, &req, &err), PR_EIO);
	snprintf(want, sizeof(want),
		 "cannot read 'http://127.0.0.1:%d/...': the answer has no HTTP status line", port);
	if (strncmp(err.msg, want, strlen(want)) != 0)
		fail_msg("%s", err.msg);
	http_response_release(&r);
}

/* Whether the body holds `s` anywhere, NUL bytes or not. */
static bool body_has(const http_response *r, const char *s)
{
	size_t n = strlen(s);

	for (size_t i = 0; n <= r->body.len && i <= r->body.len - n; i++)
		if (memcmp(r->body.ptr + i, s, n) == 0)
			return true;
	return false;
}

/*
 * A server that echoes the request in an error answer (a debug endpoint,
 * a proxy's error page) gets no secret into what callers quote: every
 * copy of the header's value, the token alone and the URL's password is
 * masked in the body of a non-2xx answer, its length kept.
 */
/*
 * A profile (data, not an error answer) that holds the credentials sent:
 * the token, the Basic password decoded, anywhere in the bytes (NUL bytes
 * included); never the URL's user name, nor a secret too short to tell
 * from chance bytes.
 */
static void test_data_holding_a_sent_secret_is_told_apart(void **state)
{
	static const char bin[] = "\x0a\x00prefix\x00tok-1234-abcd\x12";
	http_req r;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.secret_header = "Authorization";
	r.secret_value = "Bearer tok-1234-abcd";
	assert_true(http_holds_secret(bin, sizeof(bin) - 1, &r));
	assert_false(http_holds_secret(bin, 14, &r)); /* cut inside the token */
	assert_false(http_holds_secret("tok-1234-abc", 12, &r));
	assert_false(http_holds_secret("", 0, &r));
	r.secret_value = "Bearer abc"; /* 3 bytes: everywhere by chance */
	assert_false(http_holds_secret("xxabcxx", 7, &r));
	/* "Basic " of "jane:s3cret-pass" */
	r.secret_value = "Basic amFuZTpzM2NyZXQtcGFzcw==";
	assert_true(http_holds_secret("fn_s3cret-pass_x", 16, &r));
	assert_false(http_holds_secret("jane_handler", 12, &r));
	r.secret_header = NULL;
	r.url = "https://someone:0123456789@h.example/";
	assert_true(http_holds_secret("a0123456789b", 12, &r));
	assert_false(http_holds_secret("someone_else", 12, &r));
}

static void test_an_error_answer_that_echoes_the_secret_comes_back_masked(void **state)
{
	char u[512];
	http_req req = {.method = HTTP_GET, .url = u, .secret_header = "Authorization",
			.secret_value = "Bearer " TOKEN, .timeout_ms = 10000};
	pr_error err = PR_ERROR_INIT;
	http_response r;
	json_t *o;

	(void)state;
	snprintf(u, sizeof(u), "http://" USER ":" PASSWORD "@127.0.0.1:%d/echo-refused", port);
	assert_int_equal(http_request(&r, &req, &err), 0);
	assert_int_equal(r.status, 401);
	assert_false(body_has(&r, TOKEN));
	o = echoed(&r);
	/* The header's line is there, its value starred: the answer is still readable. */
	assert_true(has_header_prefix(o, "Authorization: ****"));
	json_decref(o);
	http_response_release(&r);
	/* A 2xx body is data: left as it came. */
	snprintf(u, sizeof(u), "http://127.0.0.1:%d/echo", port);
	assert_int_equal(http_request(&r, &req, &err), 0);
	assert_int_equal(r.status, 200);
	assert_true(body_has(&r, TOKEN));
	http_response_release(&r);
}

/*
 * A request with a secret over plain http (allowed to loopback only)
 * never goes through a proxy named by the environment, which would carry
 * the secret to the proxy's host in cleartext, nor does one whose body
 * holds a secret; one without a secret still does. The plain server
 * stands in for the proxy: a request sent through it names the whole
 * URL, which it does not know (404).
 */
static void test_a_secret_over_plain_http_never_goes_through_a_proxy(void **state)
{
	char proxy[64], u[512];
	http_req req = {.method = HTTP_GET, .url = url("/echo"), .secret_header = "Authorization",
			.secret_value = "Bearer " TOKEN, .timeout_ms = 10000};
	pr_error err = PR_ERROR_INIT;
	http_response r;
	int before = logged("/echo");

	(void)state;
	snprintf(proxy, sizeof(proxy), "http://127.0.0.1:%d", port);
	assert_int_equal(setenv("http_proxy", proxy, 1), 0);
	assert_int_equal(http_request(&r, &req, &err), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(logged("/echo"), before + 1);
	http_response_release(&r);
	/* The same through a URL's user name and password. */
	snprintf(u, sizeof(u), "http://" USER ":" PASSWORD "@127.0.0.1:%d/echo", port);
	req.url = u;
	req.secret_header = NULL;
	req.secret_value = NULL;
	assert_int_equal(http_request(&r, &req, &err), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(logged("/echo"), before + 2);
	http_response_release(&r);
	/* A secret in the body (a routing key) likewise. */
	req.url = url("/echo");
	req.body_secret = true;
	assert_int_equal(http_request(&r, &req, &err), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(logged("/echo"), before + 3);
	http_response_release(&r);
	/* Without a secret, the environment's proxy is used as before. */
	req.body_secret = false;
	assert_int_equal(http_request(&r, &req, &err), 0);
	assert_int_equal(r.status, 404);
	assert_int_equal(logged("/echo"), before + 3);
	http_response_release(&r);
	assert_int_equal(unsetenv("http_proxy"), 0);
}

/* A loopback port that refuses connections: bound, never listening. */
static int refusing_port(int *fd)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);

	*fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(*fd >= 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(*fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(*fd, (struct sockaddr *)&a, &len), 0);
	return ntohs(a.sin_port);
}

static void test_connection_refused_names_the_url_and_the_reason(void **state)
{
	char u[128], want[160];
	int fd, p = refusing_port(&fd);
	http_req req = {.method = HTTP_GET, .url = u, .timeout_ms = 5000};
	pr_error err = PR_ERROR_INIT;
	http_response r;

	(void)state;
	snprintf(u, sizeof(u), "http://127.0.0.1:%d/v2/enqueue", p);
	assert_int_equal(http_request(&r, &req, &err), PR_EIO);
	snprintf(want, sizeof(want), "cannot reach 'http://127.0.0.1:%d/...': connection refused",
		 p);
	assert_string_equal(err.msg, want);
	assert_int_equal(r.status, 0);
	assert_false(r.timed_out);
	http_response_release(&r);
	close(fd);
}

static void test_no_error_message_shows_a_secret(void **state)
{
	char u[512];
	int fd, refused = refusing_port(&fd);
	http_req req = {.method = HTTP_GET, .url = u, .secret_header = "Authorization",
			.secret_value = "Bearer " TOKEN, .timeout_ms = 300, .max_body = 10};
	static const char *const cases[] = {"http", "https", "ftp"};
	pr_error err = PR_ERROR_INIT;
	http_response r;
	int n = 0, hangs = logged("/hang"), bytes = logged("/bytes/1000");

	(void)state;
	/* Refused, timed out, over the cap, TLS refused, a scheme refused. */
	for (int i = 0; i < 5; i++) {
		const char *scheme = i < 3 ? cases[0] : cases[i - 2];
		int p = i == 0 ? refused : i == 3 ? tls_port : port;
		const char *path = i == 1 ? "/hang" : i == 2 ? "/bytes/1000" : "/x";
		snprintf(u, sizeof(u),
			 "%s://" USER ":" PASSWORD "@127.0.0.1:%d%s?token=" QUERY_SECRET, scheme, p,
			 path);
		pr_error_clear(&err);
		assert_true(http_request(&r, &req, &err) < 0);
		assert_non_null(strstr(err.msg, "://127.0.0.1:"));
		assert_no_secret(err.msg);
		http_response_release(&r);
		n++;
	}
	assert_int_equal(n, 5);
	/* Two of them reached the plain server, with the secrets. */
	assert_int_equal(logged("/hang"), hangs + 1);
	assert_int_equal(logged("/bytes/1000"), bytes + 1);
	/* A secret header that would inject a line is refused, unseen. */
	req.secret_value = "Bearer " TOKEN "\r\nX-Injected: 1";
	snprintf(u, sizeof(u), "http://127.0.0.1:%d/ok", port);
	pr_error_clear(&err);
	assert_int_equal(http_request(&r, &req, &err), PR_EUSAGE);
	assert_no_secret(err.msg);
	assert_non_null(strstr(err.msg, "'Authorization'"));
	http_response_release(&r);
	close(fd);
}

/*
 * A request signed with SigV4 carries libcurl's Authorization and
 * X-Amz-Date and the headers it was given, never the secret key; a HEAD
 * brings the answer's Content-Length. A SigV4 setting with a control
 * character is refused before anything is sent, and no message shows the
 * secret key.
 */
static void test_sigv4_requests_are_signed_and_never_carry_the_secret_key(void **state)
{
	static const char *const headers[] = {
		"x-amz-content-sha256: "
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		NULL};
	http_req req = {.method = HTTP_GET, .url = url("/echo"), .headers = headers,
			.sigv4 = "aws:amz:eu-west-1:s3", .sigv4_key_id = "AKIDTEST",
			.sigv4_secret = "SECRET-sigv4-key/+=", .timeout_ms = 10000};
	pr_error err = PR_ERROR_INIT;
	http_response r;
	json_t *o, *v;
	const char *auth = NULL;
	size_t i;
	char u[512];
	int fd, refused;

	(void)state;
	assert_int_equal(http_request(&r, &req, &err), 0);
	assert_int_equal(r.status, 200);
	assert_null(strstr(r.body.ptr, "SECRET-sigv4-key"));
	o = echoed(&r);
	json_array_foreach(json_object_get(o, "headers"), i, v)
		if (strncmp(json_string_value(v), "Authorization: ", 15) == 0)
			auth = json_string_value(v) + 15;
	assert_non_null(auth);
	assert_memory_equal(auth, "AWS4-HMAC-SHA256 Credential=AKIDTEST/", 37);
	assert_non_null(strstr(auth, "/eu-west-1/s3/aws4_request"));
	if (!strstr(auth, "SignedHeaders=host;x-amz-content-sha256;x-amz-date,"))
		fail_msg("unexpected signed headers: %s", auth);
	assert_true(has_header_prefix(o, "X-Amz-Date: "));
	json_decref(o);
	http_response_release(&r);

	/* The size of what a HEAD names. */
	req.method = HTTP_HEAD;
	req.url = url("/bytes/1234");
	assert_int_equal(http_request(&r, &req, &err), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.content_length, 1234);
	assert_int_equal(r.body.len, 0);
	assert_int_equal(r.last_modified_s, -1);
	http_response_release(&r);

	/* Refused before sending: a line break in the secret key, a missing key id. */
	req.method = HTTP_GET;
	req.url = url("/ok");
	req.sigv4_secret = "SECRET-sigv4\r\nX-Injected: 1";
	assert_int_equal(http_request(&r, &req, &err), PR_EUSAGE);
	assert_null(strstr(err.msg, "SECRET"));
	http_response_release(&r);
	req.sigv4_secret = "SECRET-sigv4-key";
	req.sigv4_key_id = NULL;
	pr_error_clear(&err);
	assert_int_equal(http_request(&r, &req, &err), PR_EUSAGE);
	http_response_release(&r);

	/* A failure's message never shows the secret key. */
	refused = refusing_port(&fd);
	snprintf(u, sizeof(u), "http://127.0.0.1:%d/SECRET-sigv4-key", refused);
	req.url = u;
	req.sigv4_key_id = "AKIDTEST";
	pr_error_clear(&err);
	assert_true(http_request(&r, &req, &err) < 0);
	assert_null(strstr(err.msg, "SECRET"));
	http_response_release(&r);
	close(fd);
}

static void test_only_http_and_https_are_requested(void **state)
{
	static const char *const refused[] = {"ftp://127.0.0.1:%d/ok", "file:///etc/passwd",
					      "gopher://127.0.0.1:%d/ok", "127.0.0.1:%d/ok",
					      "dict://127.0.0.1:%d/ok", ""};
	char u[256];
	http_req req = {.method = HTTP_GET, .url = u, .timeout_ms = 5000};
	pr_error err = PR_ERROR_INIT;
	http_response r;
	int before = logged(NULL);

	(void)state;
	for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++) {
		snprintf(u, sizeof(u), refused[i], port);
		pr_error_clear(&err);
		assert_int_equal(http_request(&r, &req, &err), PR_EUSAGE);
		assert_non_null(strstr(err.msg, "only http:// and https:// URLs are allowed"));
		http_response_release(&r);
	}
	snprintf(u, sizeof(u), "ftp://127.0.0.1:%d/ok", port);
	pr_error_clear(&err);
	assert_int_equal(http_request(&r, &req, &err), PR_EUSAGE);
	snprintf(u, sizeof(u), "cannot request 'ftp://127.0.0.1:%d/...': only http:// and https:// "
		 "URLs are allowed", port);
	assert_string_equal(err.msg, u);
	http_response_release(&r);
	/* Nothing reached the server. */
	assert_int_equal(logged(NULL), before);
	/* The scheme is case-insensitive. */
	snprintf(u, sizeof(u), "HTTP://127.0.0.1:%d/ok", port);
	assert_int_equal(http_request(&r, &req, &err), 0);
	assert_int_equal(r.status, 200);
	http_response_release(&r);
	assert_int_equal(logged(NULL), before + 1);
}

static void test_requests_that_cannot_be_sent_as_asked_are_refused(void **state)
{
	static const char *const injected[] = {"X-A: 1\r\nX-Injected: 1", NULL};
	static const char *const nameless[] = {"no colon here", NULL};
	http_req req = {.method = HTTP_GET, .url = url("/ok"), .headers = injected,
			.timeout_ms = 5000};
	pr_error err = PR_ERROR_INIT;
	http_response r;
	int before = logged(NULL);

	(void)state;
	assert_int_equal(http_request(&r, &req, &err), PR_EUSAGE);
	assert_non_null(strstr(err.msg, "header 1 is not one 'Name: value' line"));
	http_response_release(&r);
	req.headers = nameless;
	pr_error_clear(&err);
	assert_int_equal(http_request(&r, &req, &err), PR_EUSAGE);
	http_response_release(&r);
	req.headers = NULL;
	req.body = "x";
	req.body_len = 1;
	pr_error_clear(&err);
	assert_int_equal(http_request(&r, &req, &err), PR_EUSAGE);
	assert_non_null(strstr(err.msg, "only POST and PUT send a body"));
	http_response_release(&r);
	assert_int_equal(logged(NULL), before);
}

static void test_tls_is_verified_against_the_system_or_the_given_ca(void **state)
{
	char u[128], missing[600];
	http_req req = {.method = HTTP_GET, .url = u, .timeout_ms = 10000};
	pr_error err = PR_ERROR_INIT;
	http_response r;

	(void)state;
	/* Self-signed: not in the system store. */
	snprintf(u, sizeof(u), "https://127.0.0.1:%d/", tls_port);
	assert_int_equal(http_request(&r, &req, &err), PR_EIO);
	assert_non_null(strstr(err.msg, "TLS verification failed"));
	assert_non_null(strstr(err.msg, "'https://127.0.0.1:"));
	http_response_release(&r);
	/* Trusted through the CA file. */
	req.ca_file = cert_path;
	pr_error_clear(&err);
	assert_int_equal(http_request(&r, &req, &err), 0);
	assert_int_equal(r.status, 200);
	assert_true(r.body.len > 0);
	http_response_release(&r);
	/* The right CA but another name: the host name is verified too. */
	snprintf(u, sizeof(u), "https://localhost:%d/", tls_port);
	assert_int_equal(http_request(&r, &req, &err), PR_EIO);
	assert_non_null(strstr(err.msg, "TLS verification failed"));
	http_response_release(&r);
	/* A CA file that is not there: the configuration is wrong, not the network. */
	snprintf(u, sizeof(u), "https://127.0.0.1:%d/", tls_port);
	snprintf(missing, sizeof(missing), "%s/no-such-ca.pem", dir);
	req.ca_file = missing;
	pr_error_clear(&err);
	assert_int_equal(http_request(&r, &req, &err), PR_EUSAGE);
	assert_non_null(strstr(err.msg, "cannot read CA file '"));
	assert_non_null(strstr(err.msg, "no-such-ca.pem': No such file or directory"));
	http_response_release(&r);
}

/*
 * A CA file that is not a regular file is refused before any request: a
 * FIFO made libcurl wait for a writer for ever, a directory failed as a
 * network error (retried by the S3 store), and over plain http, where no
 * CA is read, the mistake went unseen.
 */
static void test_a_ca_file_that_is_not_a_file_is_refused_before_any_request(void **state)
{
	char u[128], fifo[600];
	http_req req = {.method = HTTP_GET, .url = u, .timeout_ms = 10000, .ca_file = dir};
	pr_error err = PR_ERROR_INIT;
	http_response r;
	int before = logged(NULL);

	(void)state;
	snprintf(u, sizeof(u), "%s", url("/ok"));
	assert_int_equal(http_request(&r, &req, &err), PR_EUSAGE);
	assert_non_null(strstr(err.msg, "cannot request 'http://127.0.0.1:"));
	assert_non_null(strstr(err.msg, "': cannot read CA file '"));
	assert_non_null(strstr(err.msg, "': not a regular file (a directory)"));
	http_response_release(&r);
	assert_int_equal(logged(NULL), before);

	snprintf(fifo, sizeof(fifo), "%s/ca.fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	snprintf(u, sizeof(u), "https://127.0.0.1:%d/", tls_port);
	req.ca_file = fifo;
	pr_error_clear(&err);
	alarm(20); /* without the check, this waits for a writer */
	assert_int_equal(http_request(&r, &req, &err), PR_EUSAGE);
	alarm(0);
	assert_non_null(strstr(err.msg, "ca.fifo': not a regular file (a FIFO"));
	http_response_release(&r);
	unlink(fifo);
}

static void test_redacted_urls_show_scheme_host_and_port_only(void **state)
{
	static const char *const cases[][2] = {
		{"http://u:pw@h:9/x?t=1", "http://h:9/..."},
		{"https://example.com", "https://example.com"},
		{"https://example.com/", "https://example.com"},
		{"https://a@b@example.com:8443/p", "https://example.com:8443/..."},
		{"http://h?token=1", "http://h/..."},
		{"http://[::1]:9/x", "http://[::1]:9/..."},
		{"mailto:someone@example.com", "mailto:..."},
		/* An unescaped '/' in a password cuts the authority: none of it shows. */
		{"http://user:pa/ss@example.com/x", "http://(bad authority)/..."},
		{"http://[::1/x", "http://(bad authority)/..."},
		{"http://h:80x/", "http://(bad authority)"},
		{"http://h\r\nX/", "http://h??X"},
		{"http://h\r\nX/x", "http://h??X/..."},
		{"", ""},
	};
	char out[64], small[8];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		http_redact_url(out, sizeof(out), cases[i][0]);
		assert_string_equal(out, cases[i][1]);
	}
	http_redact_url(out, sizeof(out), NULL);
	assert_string_equal(out, "");
	http_redact_url(small, sizeof(small), "https://example.com/x");
	assert_string_equal(small, "https:/");
}

/* One thread's requests: each must get its own answer. */
typedef struct worker {
	pthread_t t;
	int id;
	int ok;
} worker;

static void *work(void *arg)
{
	worker *w = arg;
	char hdr[64], want[64], u[128];
	const char *headers[] = {hdr, NULL};
	http_req req = {.method = HTTP_GET, .url = u, .headers = headers, .timeout_ms = 20000};

	snprintf(u, sizeof(u), "http://127.0.0.1:%d/echo", port);
	snprintf(hdr, sizeof(hdr), "X-Worker: %d", w->id);
	snprintf(want, sizeof(want), "\"X-Worker: %d\"", w->id);
	for (int i = 0; i < 5; i++) {
		pr_error err = PR_ERROR_INIT;
		http_response r;
		if (http_request(&r, &req, &err) == 0 && r.status == 200 &&
		    strstr(r.body.ptr, want))
			w->ok++;
		http_response_release(&r);
	}
	return NULL;
}

static void test_requests_from_several_threads_at_once(void **state)
{
	worker w[4];

	(void)state;
	/* First in the run: the threads also race to set libcurl up. */
	for (int i = 0; i < 4; i++) {
		w[i].id = i;
		w[i].ok = 0;
		assert_int_equal(pthread_create(&w[i].t, NULL, work, &w[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(w[i].t, NULL), 0);
		assert_int_equal(w[i].ok, 5);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_requests_from_several_threads_at_once),
		cmocka_unit_test(test_a_200_brings_its_body),
		cmocka_unit_test(test_requests_carry_method_headers_body_agent_and_secret),
		cmocka_unit_test(test_a_body_over_the_cap_fails_or_keeps_its_prefix),
		cmocka_unit_test(test_an_error_answer_is_read_only_to_its_own_cap),
		cmocka_unit_test(test_a_redirect_is_returned_not_followed),
		cmocka_unit_test(test_retry_after_in_seconds_and_as_an_http_date),
		cmocka_unit_test(test_a_hanging_server_hits_the_total_timeout),
		cmocka_unit_test(test_a_giant_response_header_is_an_io_error_not_out_of_memory),
		cmocka_unit_test(test_an_answer_without_a_status_line_is_an_io_error),
		cmocka_unit_test(test_an_error_answer_that_echoes_the_secret_comes_back_masked),
		cmocka_unit_test(test_data_holding_a_sent_secret_is_told_apart),
		cmocka_unit_test(test_a_secret_over_plain_http_never_goes_through_a_proxy),
		cmocka_unit_test(test_connection_refused_names_the_url_and_the_reason),
		cmocka_unit_test(test_no_error_message_shows_a_secret),
		cmocka_unit_test(test_sigv4_requests_are_signed_and_never_carry_the_secret_key),
		cmocka_unit_test(test_only_http_and_https_are_requested),
		cmocka_unit_test(test_a_ca_file_that_is_not_a_file_is_refused_before_any_request),
		cmocka_unit_test(test_requests_that_cannot_be_sent_as_asked_are_refused),
		cmocka_unit_test(test_tls_is_verified_against_the_system_or_the_given_ca),
		cmocka_unit_test(test_redacted_urls_show_scheme_host_and_port_only),
	};
	return cmocka_run_group_tests_name("http", tests, group_setup, group_teardown);
}
