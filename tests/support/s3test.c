/*
 * s3test.c: s3rver and the signature-checking proxy on loopback (see
 * s3test.h).
 */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L
#include "tests/support/s3test.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define S3RVER_JS "tests/node/node_modules/s3rver/bin/s3rver.js"

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static pid_t spawn(char *const argv[], const char *out)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd;
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		fd = open(out, O_WRONLY | O_CREAT | O_APPEND, 0600);
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

/* A number after `marker` in `path` within `ms`; -1 when none came or `pid` died. */
static int wait_for_number(const char *path, const char *marker, pid_t pid, long ms)
{
	for (long waited = 0; waited < ms; waited += 50) {
		char text[8192] = "";
		FILE *f = fopen(path, "r");
		if (f) {
			size_t n = fread(text, 1, sizeof(text) - 1, f);
			const char *m;
			text[n] = '\0';
			fclose(f);
			if ((m = strstr(text, marker)) && strchr(m, '\n'))
				return atoi(m + strlen(marker));
		}
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return -1;
		sleep_ms(50);
	}
	return -1;
}

static void stop_pid(pid_t *pid)
{
	if (*pid > 0) {
		kill(*pid, SIGTERM);
		waitpid(*pid, NULL, 0);
	}
	*pid = -1;
}

static int start_proxy(s3test *t, const char *const *proxy_args)
{
	const char *build = getenv("BUILD");
	char server[512], port_file[700], out[700], secret_file[700], upstream[16];
	char *argv[32];
	int n = 0;
	FILE *f;

	snprintf(server, sizeof(server), "%s/servers/s3_sigcheck", build ? build : "build");
	snprintf(port_file, sizeof(port_file), "%s/proxy.port", t->dir);
	snprintf(out, sizeof(out), "%s/proxy.out", t->dir);
	snprintf(secret_file, sizeof(secret_file), "%s/proxy.secret", t->dir);
	snprintf(upstream, sizeof(upstream), "%d", t->upstream_port);
	unlink(port_file);
	if (!(f = fopen(secret_file, "w")))
		return -1;
	fprintf(f, "%s\n", S3TEST_SECRET);
	fclose(f);
	argv[n++] = server;
	argv[n++] = "--upstream", argv[n++] = upstream;
	argv[n++] = "--port-file", argv[n++] = port_file;
	argv[n++] = "--log", argv[n++] = t->log;
	argv[n++] = "--key-id", argv[n++] = S3TEST_KEY_ID;
	argv[n++] = "--secret-file", argv[n++] = secret_file;
	argv[n++] = "--region", argv[n++] = S3TEST_REGION;
	argv[n++] = "--timeout", argv[n++] = "900";
	for (const char *const *a = proxy_args; a && *a && n < 30; a++)
		argv[n++] = (char *)*a;
	argv[n] = NULL;
	t->proxy_pid = spawn(argv, out);
	if ((t->port = wait_for_number(port_file, "", t->proxy_pid, 10000)) <= 0) {
		fprintf(stderr, "s3test: '%s' did not start (make builds it)\n", server);
		return -1;
	}
	snprintf(t->endpoint, sizeof(t->endpoint), "http://127.0.0.1:%d", t->port);
	snprintf(t->vhost_endpoint, sizeof(t->vhost_endpoint), "http://s3.localhost:%d", t->port);
	return 0;
}

int s3test_start(s3test *t, const char *const *proxy_args)
{
	const char *tmp = getenv("PROFREG_TEST_TMP");
	char out[700];

	memset(t, 0, sizeof(*t));
	t->s3rver_pid = t->proxy_pid = -1;
	snprintf(t->dir, sizeof(t->dir), "%s/s3test.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(t->dir)) {
		perror("s3test: mkdtemp");
		return -1;
	}
	snprintf(t->data, sizeof(t->data), "%s/data", t->dir);
	snprintf(t->log, sizeof(t->log), "%s/requests.log", t->dir);
	snprintf(out, sizeof(out), "%s/s3rver.out", t->dir);
	mkdir(t->data, 0700);
	if (access(S3RVER_JS, R_OK) != 0) {
		fprintf(stderr,
			"s3test: %s is missing: run 'make deps' (scripts/install-deps "
			"installs s3rver with npm)\n",
			S3RVER_JS);
		return -1;
	}
	{
		/* s3rver's continuation tokens use DES, in OpenSSL 3's legacy provider. */
		char *argv[] = {"node",        "--openssl-legacy-provider",
				S3RVER_JS,     "--directory",
				t->data,       "--address",
				"127.0.0.1",   "--port",
				"0",           "--configure-bucket",
				S3TEST_BUCKET, "--service-endpoint",
				"localhost",   NULL};
		t->s3rver_pid = spawn(argv, out);
	}
	t->upstream_port =
		wait_for_number(out, "S3rver listening on 127.0.0.1:", t->s3rver_pid, 30000);
	if (t->upstream_port <= 0) {
		fprintf(stderr, "s3test: s3rver did not start (see %s)\n", out);
		return -1;
	}
	return start_proxy(t, proxy_args);
}

int s3test_restart_proxy(s3test *t, const char *const *proxy_args)
{
	stop_pid(&t->proxy_pid);
	return start_proxy(t, proxy_args);
}

void s3test_stop(s3test *t)
{
	char cmd[700];

	stop_pid(&t->proxy_pid);
	stop_pid(&t->s3rver_pid);
	if (t->dir[0] && !getenv("PROFREG_TEST_KEEP")) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
		if (system(cmd) != 0)
			fprintf(stderr, "s3test: cannot remove %s\n", t->dir);
	}
}

void s3test_counts(const s3test *t, long *total, long *bad)
{
	char line[65536];
	FILE *f = fopen(t->log, "r");

	*total = *bad = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		(*total)++;
		if (strstr(line, "\"ok\":false"))
			(*bad)++;
	}
	fclose(f);
}

void s3test_object_path(const s3test *t, const char *object_key, char *out, size_t n)
{
	snprintf(out, n, "%s/%s/%s._S3rver_object", t->data, S3TEST_BUCKET, object_key);
}
