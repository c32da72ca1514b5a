/*
 * pd_server.c: a loopback HTTP server that speaks the PagerDuty Events v2
 * contract (POST /v2/enqueue), for the paging tests. It also accepts any
 * other POST (an Alertmanager or webhook stand-in), and any GET (a
 * profiled service's endpoint), with the same script.
 *
 *   pd_server --port-file F --log F [--script "500,429:2,202,hang,delay:100,400"]
 *             [--then ACTION] [--timeout SECONDS]
 *
 * Each request takes the next action of the script, then --then (202)
 * once the script is used up:
 *   202        validate the event; 202 when it is valid, else 400 with errors
 *   400        400 with a PagerDuty-style error body
 *   429:N      429 with "Retry-After: N"
 *   500        500
 *   hang       read the request, never answer (the client must time out)
 *   delay:MS   wait MS milliseconds, then as 202
 *   body:TEXT  500 with TEXT as its body (a server that echoes data back)
 * Every request is logged, as soon as it is read and before it is
 * answered, as one JSON line: {"n", "ms" (since start), "path", "action",
 * "auth" (an Authorization header came), "body" (the JSON body, or null),
 * "valid" (the PagerDuty checks passed)}. It listens on 127.0.0.1 on a
 * free port, written to the port file once it listens. Every loop is
 * bounded; it exits by itself after --timeout seconds (default 120).
 */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_REQ (1 << 20)
#define MAX_HUNG 64
#define MAX_SCRIPT 256

static struct timespec start;
static const char *script[MAX_SCRIPT];
static size_t nscript, next_action;
static const char *then_action = "202";
static FILE *logf;

static long elapsed_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
}

static _Noreturn void die(const char *what)
{
	fprintf(stderr, "pd_server: %s: %s\n", what, strerror(errno));
	exit(3);
}

static void send_all(int fd, const char *s, size_t n)
{
	for (int tries = 0; n && tries < 1000; tries++) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static void respond(int fd, int status, const char *reason, const char *extra, const char *body)
{
	char head[512];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d %s\r\nContent-Type: "
			 "application/json\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n%s\r\n",
			 status, reason, strlen(body), extra ? extra : "");
	send_all(fd, head, (size_t)n);
	send_all(fd, body, strlen(body));
}

/* The PagerDuty Events v2 checks; appends the reasons to `errors`. */
static bool pd_valid(json_t *b, json_t *errors)
{
	const char *rk = json_string_value(json_object_get(b, "routing_key"));
	const char *act = json_string_value(json_object_get(b, "event_action"));
	const char *key = json_string_value(json_object_get(b, "dedup_key"));
	json_t *p = json_object_get(b, "payload");
	size_t before = json_array_size(errors);

	if (!json_is_object(b)) {
		json_array_append_new(errors, json_string("Event object is not a JSON object"));
		return false;
	}
	if (!rk || strlen(rk) != 32)
		json_array_append_new(
			errors,
			json_string(
				"Length of 'routing_key' is incorrect (should be 32 characters)"));
	if (!act ||
	    (strcmp(act, "trigger") && strcmp(act, "resolve") && strcmp(act, "acknowledge")))
		json_array_append_new(errors, json_string("'event_action' is invalid"));
	if (key && strlen(key) > 255)
		json_array_append_new(errors, json_string("'dedup_key' is too long"));
	if (act && strcmp(act, "trigger") == 0) {
		const char *sum = json_string_value(json_object_get(p, "summary"));
		const char *sev = json_string_value(json_object_get(p, "severity"));
		const char *src = json_string_value(json_object_get(p, "source"));
		if (!sum || !*sum || strlen(sum) > 1024)
			json_array_append_new(
				errors,
				json_string("'payload.summary' is missing or longer than 1024"));
		if (!src || !*src)
			json_array_append_new(errors, json_string("'payload.source' is missing"));
		if (!sev || (strcmp(sev, "critical") && strcmp(sev, "error") &&
			     strcmp(sev, "warning") && strcmp(sev, "info")))
			json_array_append_new(errors, json_string("'payload.severity' is invalid"));
	} else if (act && !key) {
		json_array_append_new(errors, json_string("'dedup_key' is required to resolve"));
	}
	return json_array_size(errors) == before;
}

/* Read one request with a deadline; 0 and the body, or -1. */
static int read_request(int fd, char *req, size_t *len, char **body, size_t *blen, char *path,
			bool *auth)
{
	size_t n = 0, clen = 0, head = 0;
	long deadline = elapsed_ms() + 5000;

	*auth = false;
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
		if (!head) {
			char *e = strstr(req, "\r\n\r\n");
			if (!e)
				continue;
			head = (size_t)(e - req) + 4;
			for (char *l = strstr(req, "\r\n"); l && l < e; l = strstr(l + 2, "\r\n")) {
				if (strncasecmp(l + 2, "Content-Length:", 15) == 0)
					clen = strtoul(l + 17, NULL, 10);
				if (strncasecmp(l + 2, "Authorization:", 14) == 0)
					*auth = true;
			}
			if (sscanf(req, "%*15s %255s", path) != 1)
				return -1;
			if (clen > MAX_REQ - head)
				return -1;
		}
		if (head && n >= head + clen) {
			*len = n;
			*body = req + head;
			*blen = clen;
			return 0;
		}
	}
	return -1;
}

static void serve(int fd, int *hung, size_t *nhung, long *count)
{
	static char req[MAX_REQ + 1];
	char path[256] = "", *body = NULL;
	size_t len = 0, blen = 0;
	const char *action = next_action < nscript ? script[next_action++] : then_action;
	json_t *doc, *errors = json_array(), *line;
	json_error_t jerr;
	bool auth, valid = false;
	char *text;

	if (read_request(fd, req, &len, &body, &blen, path, &auth) < 0) {
		close(fd);
		return;
	}
	doc = json_loadb(body, blen, 0, &jerr);
	if (doc && strcmp(path, "/v2/enqueue") == 0)
		valid = pd_valid(doc, errors);
	else
		valid = doc != NULL;
	line = json_pack("{s:I,s:I,s:s,s:s,s:b,s:O?,s:b}", "n", (json_int_t)++ * count, "ms",
			 (json_int_t)elapsed_ms(), "path", path, "action", action, "auth", auth,
			 "body", doc, "valid", valid);
	if (line && (text = json_dumps(line, JSON_COMPACT))) {
		fprintf(logf, "%s\n", text);
		fflush(logf);
		free(text);
	}
	json_decref(line);
	if (strcmp(action, "hang") == 0) {
		if (*nhung == MAX_HUNG) {
			close(hung[0]);
			memmove(hung, hung + 1, (MAX_HUNG - 1) * sizeof(*hung));
			(*nhung)--;
		}
		hung[(*nhung)++] = fd;
		json_decref(doc);
		json_decref(errors);
		return;
	}
	if (strncmp(action, "delay:", 6) == 0) {
		long ms = strtol(action + 6, NULL, 10);
		struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
		nanosleep(&ts, NULL);
		action = "202";
	}
	if (strcmp(action, "202") == 0 && valid) {
		const char *key = json_string_value(json_object_get(doc, "dedup_key"));
		json_t *ok = json_pack("{s:s,s:s,s:s}", "status", "success", "message",
				       "Event processed", "dedup_key", key ? key : "");
		char *s = json_dumps(ok, JSON_COMPACT);
		respond(fd, 202, "Accepted", NULL, s ? s : "{}");
		free(s);
		json_decref(ok);
	} else if (strcmp(action, "202") == 0 || strcmp(action, "400") == 0) {
		json_t *bad;
		char *s;
		if (!json_array_size(errors))
			json_array_append_new(errors, json_string("Event object is invalid"));
		bad = json_pack("{s:s,s:s,s:O}", "status", "invalid event", "message",
				"Event object is invalid", "errors", errors);
		s = json_dumps(bad, JSON_COMPACT);
		respond(fd, 400, "Bad Request", NULL, s ? s : "{}");
		free(s);
		json_decref(bad);
	} else if (strncmp(action, "body:", 5) == 0) {
		respond(fd, 500, "Internal Server Error", NULL, action + 5);
	} else if (strncmp(action, "429", 3) == 0) {
		char extra[64];
		snprintf(extra, sizeof(extra), "Retry-After: %s\r\n",
			 action[3] == ':' ? action + 4 : "1");
		respond(fd, 429, "Too Many Requests", extra,
			"{\"status\":\"throttle event\",\"message\":\"Requests for this service "
			"are arriving too quickly.\"}");
	} else {
		respond(fd, 500, "Internal Server Error", NULL, "{\"status\":\"error\"}");
	}
	json_decref(doc);
	json_decref(errors);
	close(fd);
}

int main(int argc, char **argv)
{
	const char *port_file = NULL, *log_file = NULL;
	char *script_text = NULL;
	long timeout_s = 120, count = 0;
	int lfd, hung[MAX_HUNG];
	size_t nhung = 0;
	struct sockaddr_in addr;
	socklen_t alen = sizeof(addr);

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--port-file")) port_file = argv[i + 1];
		else if (!strcmp(argv[i], "--log")) log_file = argv[i + 1];
		else if (!strcmp(argv[i], "--script")) script_text = argv[i + 1];
		else if (!strcmp(argv[i], "--then")) then_action = argv[i + 1];
		else if (!strcmp(argv[i], "--timeout")) timeout_s = strtol(argv[i + 1], NULL, 10);
		else {
			fprintf(stderr, "pd_server: unknown option '%s'\n", argv[i]);
			return 2;
		}
	}
	if (!port_file || !log_file) {
		fprintf(stderr,
			"usage: pd_server --port-file F --log F [--script A,B,...] "
			"[--then A] [--timeout S]\n");
		return 2;
	}
	for (char *s = script_text ? strtok(script_text, ",") : NULL; s && nscript < MAX_SCRIPT;
	     s = strtok(NULL, ","))
		script[nscript++] = s;
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
	{
		char tmp[4096];
		FILE *f;
		snprintf(tmp, sizeof(tmp), "%s.tmp", port_file);
		if (!(f = fopen(tmp, "w")) || fprintf(f, "%d\n", ntohs(addr.sin_port)) < 0 ||
		    fclose(f) != 0 || rename(tmp, port_file) < 0)
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
			if (fd >= 0)
				serve(fd, hung, &nhung, &count);
		}
	}
	for (size_t i = 0; i < nhung; i++)
		close(hung[i]);
	close(lfd);
	fclose(logf);
	return 0;
}
