/*
 * s3_sigcheck.c: a loopback proxy in front of an S3-compatible test
 * server (s3rver, which does not check SigV4 signatures) that checks the
 * signature of every request before passing it on:
 *
 *   s3_sigcheck --upstream PORT --port-file F --log F --key-id ID
 *               --secret-file F --region R [--timeout SECONDS]
 *               [--fail-first N] [--fail-puts-after N] [--list-answer F]
 *               [--list-endless 1|2] [--error-pad N] [--hold-deletes 1]
 *               [--delay-ms N] [--fail-gets 1]
 *
 * Each request is checked with tests/support/sigv4.c (an independent
 * SigV4 computation: see test_sigv4.c for the AWS examples it
 * reproduces): Authorization, credential scope, X-Amz-Date within 15
 * minutes, every x-amz-* header signed, x-amz-content-sha256 equal to the
 * body's SHA-256. A request that fails is answered 403
 * SignatureDoesNotMatch, its message quoting the request's Authorization
 * header back (as some servers do), and not passed on. Every request is logged, as one
 * JSON line {"n", "method", "path" (without its query), "ok", "why"}.
 *
 * --fail-first N answers the first N requests 503 SlowDown (a server
 * under load), --fail-puts-after N every PUT after the first N (a store
 * that went away mid-way), --fail-gets 1 every GET of an object (reads
 * that fail while HEAD works); none is passed on, and each is logged
 * with "ok": true (the signature was fine) and "injected": true.
 * --error-pad N follows the document of each injected 503 with N bytes of
 * white space (an error answer as long as a server likes) and, once it is
 * written, logs {"n", "sent"}: how many bytes of it the client read
 * before it stopped reading.
 * --list-answer F answers every ListObjectsV2 request (a GET with
 * list-type=2) 200 with the bytes of F, for hostile listings; a request
 * with continuation-token=T (letters and digits) gets F.T instead when
 * that file exists (pages that lead somewhere, or round in a circle).
 * --list-endless answers every ListObjectsV2 request with a truncated page
 * of 10 new keys under the request's prefix, each page after the last,
 * and a new continuation token: a listing that never ends. With 2 the
 * keys are outside the prefix ("~/..."), which no real server lists: a
 * listing that never ends and never names an object of the prefix.
 *
 * --delay-ms N holds every answer N milliseconds (a slow server).
 * --hold-deletes 1 passes no DELETE on when it comes: the connection is
 * closed without an answer (the client cannot know whether it was
 * carried out, and tries again) and the request is kept; on SIGUSR1
 * every kept DELETE is passed on, and logged once more with "why":
 * "released". A request that reached a stalled server and is carried
 * out after the client gave up. With 2 only the first DELETE is kept,
 * and the client's next try goes through and is answered.
 *
 * One connection at a time, one request per connection (the answer says
 * Connection: close). It listens on 127.0.0.1 on a free port, written to
 * the port file once it listens; every read and write is bounded by 10 s,
 * and the proxy exits by itself after --timeout seconds (default 600).
 */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/sigv4.h"

#define HEAD_MAX (64 << 10)
#define BODY_MAX ((size_t)256 << 20)
#define ANSWER_MAX ((size_t)512 << 20)
#define MAX_HEADERS 64
#define IO_TIMEOUT_S 10

static FILE *logf;
static const char *key_id, *region;
static char secret[4096];
static int upstream;
static long fail_first, fail_puts_after = -1, puts_seen, count, error_pad, fail_gets;
static const char *list_answer;
static int list_endless; /* 1: keys under the prefix; 2: outside it */
static int hold_deletes;
static long deletes_held;
static long delay_ms;
static volatile sig_atomic_t release_held;
static struct {
	char *head; /* the request as it is passed on (a DELETE has no body) */
	size_t len;
	char target[512];
} held[256];
static size_t nheld;

static _Noreturn void die(const char *what)
{
	fprintf(stderr, "s3_sigcheck: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void set_timeouts(int fd)
{
	struct timeval tv = {IO_TIMEOUT_S, 0};

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static bool write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

static void log_line(const char *method, const char *target, bool ok, bool injected,
		     const char *why)
{
	char path[2048];
	json_t *o;
	char *s;

	snprintf(path, sizeof(path), "%.*s", (int)strcspn(target, "?"), target);
	o = json_pack("{s:I,s:s,s:s,s:b,s:b,s:s}", "n", (json_int_t)count, "method", method, "path",
		      path, "ok", ok, "injected", injected, "why", why);
	if (o && (s = json_dumps(o, JSON_COMPACT))) {
		fprintf(logf, "%s\n", s);
		fflush(logf);
		free(s);
	}
	json_decref(o);
}

static void answer_error(int fd, int status, const char *reason, const char *code,
			 const char *message, long pad)
{
	char body[8192], head[512], spaces[65536];
	long sent = 0;
	int bl = snprintf(body, sizeof(body),
			  "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>%s</Code>"
			  "<Message>%s</Message></Error>",
			  code, message);
	int hl;

	if (bl < 0 || (size_t)bl >= sizeof(body))
		bl = (int)strlen(body);
	hl = snprintf(head, sizeof(head),
		      "HTTP/1.1 %d %s\r\nContent-Type: application/xml\r\nContent-Length: %ld\r\n"
		      "Connection: close\r\n\r\n",
		      status, reason, (long)bl + pad);
	if (!write_all(fd, head, (size_t)hl) || !write_all(fd, body, (size_t)bl) || !pad)
		return;
	memset(spaces, ' ', sizeof(spaces));
	while (sent < pad) {
		size_t k = sizeof(spaces);
		if (pad - sent < (long)k)
			k = (size_t)(pad - sent);
		if (!write_all(fd, spaces, k))
			break;
		sent += (long)k;
	}
	fprintf(logf, "{\"n\":%ld,\"sent\":%ld}\n", count, sent);
	fflush(logf);
}

/* Pass the request on and the answer back, whole. */
static void forward(int fd, const char *head, size_t head_len, const char *body, size_t body_len)
{
	struct sockaddr_in a = {0};
	char chunk[65536];
	size_t total = 0;
	int up = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_family = AF_INET;
	a.sin_port = htons((unsigned short)upstream);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (up < 0 || connect(up, (struct sockaddr *)&a, sizeof(a)) < 0) {
		answer_error(fd, 502, "Bad Gateway", "UpstreamDown", "the upstream is not there",
			     0);
		if (up >= 0)
			close(up);
		return;
	}
	set_timeouts(up);
	if (!write_all(up, head, head_len) || !write_all(up, body, body_len)) {
		answer_error(fd, 502, "Bad Gateway", "UpstreamWrite", "cannot write upstream", 0);
		close(up);
		return;
	}
	for (;;) {
		ssize_t r = read(up, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || total > ANSWER_MAX)
			break;
		total += (size_t)r;
		if (!write_all(fd, chunk, (size_t)r))
			break;
	}
	close(up);
}

/* Read until the end of the head; the bytes after it (the body's start) stay in buf. */
static bool read_head(int fd, char *buf, size_t cap, size_t *got, size_t *head_len)
{
	*got = 0;
	for (;;) {
		char *end;
		ssize_t r;
		buf[*got] = '\0';
		if ((end = strstr(buf, "\r\n\r\n"))) {
			*head_len = (size_t)(end - buf) + 4;
			return true;
		}
		if (*got + 1 >= cap)
			return false;
		r = read(fd, buf + *got, cap - 1 - *got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		*got += (size_t)r;
	}
}

/*
 * A page of the listing that never ends (--list-endless): the page after
 * continuation-token=N (0 without one) lists keys PREFIX + "eN-I" and
 * points to page N + 1.
 */
static void endless_page(int fd, const char *method, const char *target)
{
	static char doc[16384];
	char prefix[1024], hd[256];
	const char *tok = strstr(target, "continuation-token="), *p = strstr(target, "prefix=");
	long page = tok ? atol(tok + 19) : 0;
	size_t k = 0, n;
	int hl;

	/* The prefix as the request sent it, percent-decoded. */
	for (p = p ? p + 7 : ""; *p && *p != '&' && k + 1 < sizeof(prefix); p++) {
		unsigned v;
		if (*p == '%' && sscanf(p + 1, "%2x", &v) == 1) {
			prefix[k++] = (char)v;
			p += 2;
		} else {
			prefix[k++] = *p;
		}
	}
	prefix[k] = '\0';
	if (list_endless == 2)
		snprintf(prefix, sizeof(prefix), "~/");
	n = (size_t)snprintf(doc, sizeof(doc), "<ListBucketResult><IsTruncated>true</IsTruncated>");
	for (int i = 0; i < 10; i++)
		n += (size_t)snprintf(doc + n, sizeof(doc) - n,
				      "<Contents><Key>%se%010ld-%02d.folded</Key><Size>1</Size>"
				      "<LastModified>2026-01-01T00:00:00.000Z</LastModified>"
				      "</Contents>",
				      prefix, page, i);
	n += (size_t)snprintf(doc + n, sizeof(doc) - n,
			      "<NextContinuationToken>%ld</NextContinuationToken>"
			      "</ListBucketResult>",
			      page + 1);
	hl = snprintf(hd, sizeof(hd),
		      "HTTP/1.1 200 OK\r\nContent-Type: application/xml"
		      "\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
		      n);
	log_line(method, target, true, true, "");
	write_all(fd, hd, (size_t)hl);
	write_all(fd, doc, n);
}

static void serve(int fd)
{
	static char head[HEAD_MAX + 1];
	char method[16] = "", target[4096] = "", why[16384] = "";
	sigv4_header h[MAX_HEADERS];
	size_t got, head_len, nh = 0, body_len = 0;
	char *body = NULL, *p, *line_end, *out_head = NULL;
	size_t out_len = 0;
	bool expect = false, ok;

	set_timeouts(fd);
	if (!read_head(fd, head, sizeof(head), &got, &head_len))
		return;
	count++;
	if (sscanf(head, "%15s %4095s", method, target) != 2) {
		answer_error(fd, 400, "Bad Request", "BadRequest", "no request line", 0);
		return;
	}
	/* Headers, and the head to send upstream: no Expect, Connection: close. */
	out_head = malloc(head_len + 64);
	if (!out_head)
		return;
	p = strstr(head, "\r\n") + 2;
	out_len = (size_t)(p - head);
	memcpy(out_head, head, out_len);
	for (; p < head + head_len - 2; p = line_end + 2) {
		char *colon;
		line_end = strstr(p, "\r\n");
		colon = memchr(p, ':', (size_t)(line_end - p));
		if (!colon || nh == MAX_HEADERS)
			continue;
		h[nh].name = p;
		h[nh].name_len = (size_t)(colon - p);
		h[nh].value = colon + 1;
		h[nh].value_len = (size_t)(line_end - colon - 1);
		if (h[nh].name_len == 14 && strncasecmp(p, "Content-Length", 14) == 0)
			body_len = strtoul(colon + 1, NULL, 10);
		if (h[nh].name_len == 6 && strncasecmp(p, "Expect", 6) == 0) {
			expect = true;
		} else if (!(h[nh].name_len == 10 && strncasecmp(p, "Connection", 10) == 0)) {
			memcpy(out_head + out_len, p, (size_t)(line_end - p) + 2);
			out_len += (size_t)(line_end - p) + 2;
		}
		nh++;
	}
	memcpy(out_head + out_len, "Connection: close\r\n\r\n", 21);
	out_len += 21;
	if (body_len > BODY_MAX) {
		answer_error(fd, 400, "Bad Request", "EntityTooLarge", "body too large", 0);
		goto out;
	}
	if (expect && got == head_len)
		write_all(fd, "HTTP/1.1 100 Continue\r\n\r\n", 25);
	body = malloc(body_len + 1);
	if (!body)
		goto out;
	{
		size_t have = got - head_len < body_len ? got - head_len : body_len;
		memcpy(body, head + head_len, have);
		while (have < body_len) {
			ssize_t r = read(fd, body + have, body_len - have);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				goto out;
			have += (size_t)r;
		}
	}
	ok = sigv4_verify(method, target, h, nh, body, body_len, key_id, secret, region, "s3",
			  (long long)time(NULL), why, sizeof(why)) == 0;
	if (!ok) {
		/* As some servers do, the request's Authorization quoted back. */
		char msg[1200];
		int k = snprintf(msg, sizeof(msg), "The request signature does not match; got ");
		for (size_t i = 0; i < nh && k > 0 && (size_t)k < sizeof(msg); i++)
			if (h[i].name_len == 13 && strncasecmp(h[i].name, "Authorization", 13) == 0)
				k += snprintf(msg + k, sizeof(msg) - (size_t)k, "%.*s",
					      (int)(h[i].value_len < 1000 ? h[i].value_len : 1000),
					      h[i].value);
		log_line(method, target, false, false, why);
		answer_error(fd, 403, "Forbidden", "SignatureDoesNotMatch", msg, 0);
		goto out;
	}
	if (delay_ms) {
		struct timespec ts = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	if (strcmp(method, "PUT") == 0)
		puts_seen++;
	if (count <= fail_first ||
	    (fail_puts_after >= 0 && strcmp(method, "PUT") == 0 && puts_seen > fail_puts_after) ||
	    (fail_gets && strcmp(method, "GET") == 0 && !strstr(target, "list-type=2"))) {
		log_line(method, target, true, true, "");
		answer_error(fd, 503, "Service Unavailable", "SlowDown", "injected by s3_sigcheck",
			     error_pad);
		goto out;
	}
	if (hold_deletes && strcmp(method, "DELETE") == 0 && body_len == 0 &&
	    nheld < sizeof(held) / sizeof(*held) && (hold_deletes == 1 || deletes_held++ == 0)) {
		log_line(method, target, true, true, "held");
		held[nheld].head = out_head;
		held[nheld].len = out_len;
		snprintf(held[nheld++].target, sizeof(held[0].target), "%.500s", target);
		out_head = NULL;
		goto out; /* closed without an answer */
	}
	if (list_endless && strcmp(method, "GET") == 0 && strstr(target, "list-type=2")) {
		endless_page(fd, method, target);
		goto out;
	}
	if (list_answer && strcmp(method, "GET") == 0 && strstr(target, "list-type=2")) {
		static char doc[1 << 20];
		char hd[256], page[1200];
		const char *tok = strstr(target, "continuation-token=");
		static const char alnum[] = "abcdefghijklmnopqrstuvwxyz"
					    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
		size_t tl = tok ? strspn(tok + 19, alnum) : 0;
		FILE *f = NULL;
		if (tl && tl < 64) {
			snprintf(page, sizeof(page), "%s.%.*s", list_answer, (int)tl, tok + 19);
			f = fopen(page, "rb");
		}
		if (!f)
			f = fopen(list_answer, "rb");
		size_t n = f ? fread(doc, 1, sizeof(doc), f) : 0;
		int hl = snprintf(hd, sizeof(hd),
				  "HTTP/1.1 200 OK\r\nContent-Type: application/xml"
				  "\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
				  n);
		if (f)
			fclose(f);
		log_line(method, target, true, true, "");
		write_all(fd, hd, (size_t)hl);
		write_all(fd, doc, n);
		goto out;
	}
	log_line(method, target, true, false, "");
	forward(fd, out_head, out_len, body, body_len);
out:
	free(body);
	free(out_head);
}

static void on_usr1(int sig)
{
	(void)sig;
	release_held = 1;
}

/* Pass every kept DELETE on, its answer to nobody. */
static void release(void)
{
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

	release_held = 0;
	for (size_t i = 0; i < nheld; i++) {
		forward(null, held[i].head, held[i].len, "", 0);
		log_line("DELETE", held[i].target, true, true, "released");
		free(held[i].head);
	}
	nheld = 0;
	if (null >= 0)
		close(null);
}

static void read_secret(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		die(path);
	n = fread(secret, 1, sizeof(secret) - 1, f);
	fclose(f);
	secret[n] = '\0';
	secret[strcspn(secret, "\r\n")] = '\0';
}

int main(int argc, char **argv)
{
	const char *port_file = NULL, *log_path = NULL;
	struct sockaddr_in a = {0};
	socklen_t al = sizeof(a);
	time_t deadline;
	long timeout = 600;
	FILE *pf;
	int s, one = 1;

	signal(SIGPIPE, SIG_IGN);
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--upstream") == 0)
			upstream = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--port-file") == 0)
			port_file = argv[i + 1];
		else if (strcmp(argv[i], "--log") == 0)
			log_path = argv[i + 1];
		else if (strcmp(argv[i], "--key-id") == 0)
			key_id = argv[i + 1];
		else if (strcmp(argv[i], "--secret-file") == 0)
			read_secret(argv[i + 1]);
		else if (strcmp(argv[i], "--region") == 0)
			region = argv[i + 1];
		else if (strcmp(argv[i], "--timeout") == 0)
			timeout = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--fail-first") == 0)
			fail_first = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--error-pad") == 0)
			error_pad = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--fail-gets") == 0)
			fail_gets = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--fail-puts-after") == 0)
			fail_puts_after = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--list-answer") == 0)
			list_answer = argv[i + 1];
		else if (strcmp(argv[i], "--list-endless") == 0)
			list_endless = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--hold-deletes") == 0)
			hold_deletes = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--delay-ms") == 0)
			delay_ms = atol(argv[i + 1]);
	}
	{
		struct sigaction sa = {0};
		sa.sa_handler = on_usr1;
		sigaction(SIGUSR1, &sa, NULL);
	}
	if (!upstream || !port_file || !log_path || !key_id || !region || !secret[0]) {
		fprintf(stderr, "usage: s3_sigcheck --upstream PORT --port-file F --log F "
				"--key-id ID --secret-file F --region R [--timeout S] "
				"[--fail-first N] [--fail-puts-after N]\n");
		return 2;
	}
	if (!(logf = fopen(log_path, "a")))
		die(log_path);
	if ((s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		die("socket");
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 64) < 0 ||
	    getsockname(s, (struct sockaddr *)&a, &al) < 0)
		die("bind");
	if (!(pf = fopen(port_file, "w")))
		die(port_file);
	fprintf(pf, "%d\n", ntohs(a.sin_port));
	fclose(pf);
	deadline = time(NULL) + timeout;
	while (time(NULL) < deadline) {
		struct pollfd p = {s, POLLIN, 0};
		int fd;
		if (release_held)
			release();
		if (poll(&p, 1, 1000) <= 0)
			continue;
		if ((fd = accept(s, NULL, NULL)) < 0)
			continue;
		serve(fd);
		close(fd);
	}
	return 0;
}
