/*
 * http_server.c: a loopback HTTP server for the HTTP client's tests
 * (tests/unit/test_http.c). What it answers depends on the path only:
 *
 *   http_server --port-file F --log F [--timeout SECONDS]
 *
 *   /ok                 200, "hello from http_server\n"
 *   /bytes/N            200, N bytes of "abc...z" repeated (N at most 64 MiB)
 *   /error-bytes/N      500, the same N bytes (an error answer of any size)
 *   /redirect           302 to /redirected-target on this server
 *   /redirected-target  200 (a client that follows the redirect lands here)
 *   /retry-seconds/N    429 with "Retry-After: N"
 *   /retry-date/N       503 with "Retry-After: <HTTP date N seconds from now>"
 *   /hang               read the request, never answer
 *   /echo               200, JSON {"method", "path", "headers": [lines], "body"}
 *   /echo-refused       401, the same JSON (a server that echoes the request
 *                       in its error answer)
 *   /big-header         200 whose one header line is 200 KiB long
 *   /no-status          bytes without a status line (an HTTP/0.9 answer)
 *   anything else       404
 *
 * The query string is ignored. Every request is logged, as soon as it is
 * read and before it is answered, as one JSON line {"n", "method",
 * "path"} (the path without its query). It listens on
 * 127.0.0.1 on a free port, written to the port file once it listens.
 * Every wait is bounded: a request must arrive within 5 s, a write that
 * blocks for 5 s gives up, and the server exits by itself after
 * --timeout seconds (default 120).
 */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
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

#define MAX_REQ (4 << 20)
#define MAX_HUNG 64
#define MAX_BYTES (64L << 20)

static struct timespec start;
static FILE *logf;
static int port;

static long elapsed_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
}

static _Noreturn void die(const char *what)
{
	fprintf(stderr, "http_server: %s: %s\n", what, strerror(errno));
	exit(3);
}

/* Write all of it; false when the client went away or stopped reading. */
static bool send_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		s += w;
		n -= (size_t)w;
	}
	return true;
}

static void respond(int fd, int status, const char *reason, const char *type, const char *extra,
		    const char *body, size_t len)
{
	char head[1024];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n%s\r\n", status, reason, type, len,
			 extra ? extra : "");

	if (send_all(fd, head, (size_t)n))
		send_all(fd, body, len);
}

/* Read one request within 5 s: 0, the head's end and the body, or -1. */
static int read_request(int fd, char *req, size_t *head, size_t *clen)
{
	size_t n = 0;
	long deadline = elapsed_ms() + 5000;

	*head = 0;
	*clen = 0;
	while (n < MAX_REQ) {
		struct pollfd p = {fd, POLLIN, 0};
		long left = deadline - elapsed_ms();
		ssize_t r;
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return -1;
		r = read(fd, req + n, MAX_REQ - n);
		if (r <= 0)
			return -1;
		n += (size_t)r;
		req[n] = '\0';
		if (!*head) {
			char *e = strstr(req, "\r\n\r\n");
			if (!e)
				continue;
			*head = (size_t)(e - req) + 4;
			for (char *l = strstr(req, "\r\n"); l && l < e; l = strstr(l + 2, "\r\n"))
				if (strncasecmp(l + 2, "Content-Length:", 15) == 0)
					*clen = strtoul(l + 17, NULL, 10);
			if (*clen > MAX_REQ - *head)
				return -1;
		}
		if (*head && n >= *head + *clen)
			return 0;
	}
	return -1;
}

static void log_request(long n, const char *method, const char *path)
{
	json_t *line = json_pack("{s:I,s:s,s:s}", "n", (json_int_t)n, "method", method, "path",
				 path);
	char *text = line ? json_dumps(line, JSON_COMPACT) : NULL;

	if (text) {
		fprintf(logf, "%s\n", text);
		fflush(logf);
	}
	free(text);
	json_decref(line);
}

static void echo(int fd, int status, const char *method, const char *path, char *req, size_t head,
		 size_t clen)
{
	json_t *o = json_object(), *hs = json_array();
	char *text;

	req[head - 2] = '\0';
	for (char *l = strstr(req, "\r\n"); l && *l; l = strstr(l, "\r\n")) {
		char *e;
		if (!*(l += 2))
			break;
		e = strstr(l, "\r\n");
		json_array_append_new(hs, json_stringn(l, e ? (size_t)(e - l) : strlen(l)));
		if (!e)
			break;
		l = e;
	}
	json_object_set_new(o, "method", json_string(method));
	json_object_set_new(o, "path", json_string(path));
	json_object_set_new(o, "headers", hs);
	json_object_set_new(o, "body", json_stringn(req + head, clen));
	text = json_dumps(o, JSON_COMPACT);
	respond(fd, status, status == 200 ? "OK" : "Unauthorized", "application/json", NULL,
		text ? text : "{}", text ? strlen(text) : 2);
	free(text);
	json_decref(o);
}

static void send_bytes(int fd, const char *status, long n)
{
	char head[256], chunk[65536];
	int hn = snprintf(head, sizeof(head),
			  "HTTP/1.1 %s\r\nContent-Type: application/octet-stream\r\n"
			  "Content-Length: %ld\r\nConnection: close\r\n\r\n", status, n);

	for (size_t i = 0; i < sizeof(chunk); i++)
		chunk[i] = (char)('a' + i % 26);
	if (!send_all(fd, head, (size_t)hn))
		return;
	while (n > 0) {
		size_t k = n < (long)sizeof(chunk) ? (size_t)n : sizeof(chunk);
		if (!send_all(fd, chunk, k))
			return;
		n -= (long)k;
	}
}

/* A 200 whose X-Big header line is 200 KiB: more than libcurl keeps of one line. */
static void send_big_header(int fd)
{
	static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
				   "Connection: close\r\nX-Big: ";
	static const char tail[] = "\r\nContent-Length: 3\r\n\r\nok\n";
	char chunk[4096];

	memset(chunk, 'h', sizeof(chunk));
	if (!send_all(fd, head, sizeof(head) - 1))
		return;
	for (int i = 0; i < 50; i++)
		if (!send_all(fd, chunk, sizeof(chunk)))
			return;
	send_all(fd, tail, sizeof(tail) - 1);
}

/* Answer one connection; a hung one is kept in `hung` instead of closed. */
static void serve(int fd, int *hung, size_t *nhung, long *count)
{
	static char req[MAX_REQ + 1];
	char method[16] = "", path[256] = "", extra[256];
	size_t head, clen;
	long n;

	if (read_request(fd, req, &head, &clen) < 0 ||
	    sscanf(req, "%15s %255s", method, path) != 2) {
		close(fd);
		return;
	}
	/* Routes and the log go by the path alone: a query may carry a test's secret. */
	path[strcspn(path, "?")] = '\0';
	log_request(++*count, method, path);
	if (strcmp(path, "/hang") == 0) {
		if (*nhung == MAX_HUNG) {
			close(hung[0]);
			memmove(hung, hung + 1, (MAX_HUNG - 1) * sizeof(*hung));
			(*nhung)--;
		}
		hung[(*nhung)++] = fd;
		return;
	}
	if (strcmp(path, "/ok") == 0) {
		static const char body[] = "hello from http_server\n";
		respond(fd, 200, "OK", "text/plain", NULL, body, sizeof(body) - 1);
	} else if (sscanf(path, "/bytes/%ld", &n) == 1 && n >= 0 && n <= MAX_BYTES) {
		send_bytes(fd, "200 OK", n);
	} else if (sscanf(path, "/error-bytes/%ld", &n) == 1 && n >= 0 && n <= MAX_BYTES) {
		send_bytes(fd, "500 Internal Server Error", n);
	} else if (strcmp(path, "/redirect") == 0) {
		snprintf(extra, sizeof(extra),
			 "Location: http://127.0.0.1:%d/redirected-target\r\n", port);
		respond(fd, 302, "Found", "text/plain", extra, "moved\n", 6);
	} else if (strcmp(path, "/redirected-target") == 0) {
		respond(fd, 200, "OK", "text/plain", NULL, "you followed a redirect\n", 24);
	} else if (sscanf(path, "/retry-seconds/%ld", &n) == 1) {
		snprintf(extra, sizeof(extra), "Retry-After: %ld\r\n", n);
		respond(fd, 429, "Too Many Requests", "text/plain", extra, "slow down\n", 10);
	} else if (sscanf(path, "/retry-date/%ld", &n) == 1) {
		time_t at = time(NULL) + n;
		struct tm tm;
		char date[64];
		gmtime_r(&at, &tm);
		strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
		snprintf(extra, sizeof(extra), "Retry-After: %s\r\n", date);
		respond(fd, 503, "Service Unavailable", "text/plain", extra, "later\n", 6);
	} else if (strcmp(path, "/echo") == 0) {
		echo(fd, 200, method, path, req, head, clen);
	} else if (strcmp(path, "/echo-refused") == 0) {
		echo(fd, 401, method, path, req, head, clen);
	} else if (strcmp(path, "/big-header") == 0) {
		send_big_header(fd);
	} else if (strcmp(path, "/no-status") == 0) {
		static const char junk[] = "not an HTTP answer\n";
		ssize_t w = write(fd, junk, sizeof(junk) - 1);
		(void)w;
	} else {
		respond(fd, 404, "Not Found", "text/plain", NULL, "no such path\n", 13);
	}
	close(fd);
}

int main(int argc, char **argv)
{
	const char *port_file = NULL, *log_file = NULL;
	long timeout_s = 120, count = 0;
	int lfd, hung[MAX_HUNG];
	size_t nhung = 0;
	struct sockaddr_in addr;
	socklen_t alen = sizeof(addr);

	clock_gettime(CLOCK_MONOTONIC, &start);
	/* A client that gives up mid-body must not kill the server. */
	signal(SIGPIPE, SIG_IGN);
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--port-file")) port_file = argv[i + 1];
		else if (!strcmp(argv[i], "--log")) log_file = argv[i + 1];
		else if (!strcmp(argv[i], "--timeout")) timeout_s = strtol(argv[i + 1], NULL, 10);
		else {
			fprintf(stderr, "http_server: unknown option '%s'\n", argv[i]);
			return 2;
		}
	}
	if (!port_file || !log_file) {
		fprintf(stderr, "usage: http_server --port-file F --log F [--timeout S]\n");
		return 2;
	}
	if (!(logf = fopen(log_file, "a")))
		die(log_file);
	if ((lfd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		die("socket");
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(lfd, 64) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&addr, &alen) < 0)
		die("listen");
	port = ntohs(addr.sin_port);
	{
		char tmp[4096];
		FILE *f;
		snprintf(tmp, sizeof(tmp), "%s.tmp", port_file);
		if (!(f = fopen(tmp, "w")) || fprintf(f, "%d\n", port) < 0 || fclose(f) != 0 ||
		    rename(tmp, port_file) < 0)
			die(port_file);
	}
	while (elapsed_ms() < timeout_s * 1000) {
		struct pollfd p[1 + MAX_HUNG];
		long left = timeout_s * 1000 - elapsed_ms();
		p[0].fd = lfd, p[0].events = POLLIN, p[0].revents = 0;
		for (size_t i = 0; i < nhung; i++)
			p[1 + i].fd = hung[i], p[1 + i].events = POLLIN, p[1 + i].revents = 0;
		if (poll(p, 1 + nhung, left > 1000 ? 1000 : (int)left) < 0 && errno != EINTR)
			die("poll");
		/* A hung client that gave up: close our side. */
		for (size_t i = nhung; i-- > 0;)
			if (p[1 + i].revents) {
				char c[256];
				if (read(hung[i], c, sizeof(c)) <= 0) {
					close(hung[i]);
					memmove(hung + i, hung + i + 1,
						(nhung - i - 1) * sizeof(*hung));
					nhung--;
				}
			}
		if (p[0].revents & POLLIN) {
			int fd = accept(lfd, NULL, NULL);
			struct timeval tv = {5, 0};
			if (fd >= 0) {
				setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
				serve(fd, hung, &nhung, &count);
			}
		}
	}
	for (size_t i = 0; i < nhung; i++)
		close(hung[i]);
	close(lfd);
	fclose(logf);
	return 0;
}
