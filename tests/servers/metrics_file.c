/*
 * metrics_file.c: a loopback Prometheus exporter whose metrics the test
 * drives: every GET answers 200 with the current contents of a file
 * (Prometheus text format), re-read at each request, so a test changes a
 * metric by replacing the file (write a temporary file, rename).
 *
 *   metrics_file --file F --port-file P [--timeout SECONDS]
 *
 * It listens on 127.0.0.1 on a free port, written to the port file once
 * it listens. Every wait is bounded: a request must arrive within 5 s,
 * the file is read up to 1 MiB, and the server exits by itself after
 * --timeout seconds (default 300).
 */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAX_FILE (1 << 20)

static _Noreturn void die(const char *what)
{
	fprintf(stderr, "metrics_file: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Read the request head (up to the blank line) within the socket's timeout. */
static int read_head(int fd)
{
	char buf[8192];
	size_t n = 0;

	while (n < sizeof(buf) - 1) {
		ssize_t r = read(fd, buf + n, sizeof(buf) - 1 - n);
		if (r <= 0)
			return -1;
		n += (size_t)r;
		buf[n] = '\0';
		if (strstr(buf, "\r\n\r\n"))
			return 0;
	}
	return -1;
}

static void write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

static void answer(int fd, const char *file)
{
	static char body[MAX_FILE];
	char head[256];
	size_t n = 0;
	FILE *f = fopen(file, "rb");

	if (f) {
		n = fread(body, 1, sizeof(body), f);
		fclose(f);
	}
	snprintf(head, sizeof(head),
		 "HTTP/1.1 %s\r\nContent-Type: text/plain; version=0.0.4\r\n"
		 "Content-Length: %zu\r\nConnection: close\r\n\r\n",
		 f ? "200 OK" : "503 Service Unavailable", n);
	write_all(fd, head, strlen(head));
	write_all(fd, body, n);
}

int main(int argc, char **argv)
{
	const char *file = NULL, *port_file = NULL;
	long timeout = 300;
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	struct timeval tv = {5, 0};
	time_t end;
	int s, one = 1;
	FILE *pf;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--file") == 0)
			file = argv[i + 1];
		else if (strcmp(argv[i], "--port-file") == 0)
			port_file = argv[i + 1];
		else if (strcmp(argv[i], "--timeout") == 0)
			timeout = strtol(argv[i + 1], NULL, 10);
	}
	if (!file || !port_file || timeout <= 0) {
		fprintf(stderr, "usage: metrics_file --file F --port-file P [--timeout S]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	if ((s = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		die("socket");
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 64) < 0)
		die("bind");
	if (getsockname(s, (struct sockaddr *)&a, &alen) < 0)
		die("getsockname");
	{
		char tmp[4096];
		snprintf(tmp, sizeof(tmp), "%s.tmp", port_file);
		if (!(pf = fopen(tmp, "w")))
			die("port file");
		fprintf(pf, "%d\n", ntohs(a.sin_port));
		if (fclose(pf) != 0 || rename(tmp, port_file) != 0)
			die("port file");
	}
	end = time(NULL) + timeout;
	while (time(NULL) < end) {
		struct pollfd p = {s, POLLIN, 0};
		int c;
		if (poll(&p, 1, 1000) <= 0)
			continue;
		if ((c = accept(s, NULL, NULL)) < 0)
			continue;
		setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (read_head(c) == 0)
			answer(c, file);
		close(c);
	}
	return 0;
}
