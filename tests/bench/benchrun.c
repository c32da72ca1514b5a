/*
 * benchrun.c: run one command and write what it cost.
 *
 * Runs CMD (standard streams inherited), waits for it with wait4 and
 * appends one line to OUT: wall seconds, user seconds, system seconds
 * (the command and the children it waited for) and its largest resident
 * set in KiB. Exits with the command's status (127 when it cannot run).
 * The benchmarks' scripts time references and profreg with it alike.
 *
 * usage: benchrun OUT CMD [ARG...]
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double secs(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	struct rusage ru;
	double t0, t1;
	int status;
	FILE *out;
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr, "usage: benchrun OUT CMD [ARG...]\n");
		return 2;
	}
	t0 = now();
	if ((pid = fork()) < 0) {
		perror("benchrun: fork");
		return 127;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "benchrun: cannot run '%s'\n", argv[2]);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid) {
		perror("benchrun: wait4");
		return 127;
	}
	t1 = now();
	if (!(out = fopen(argv[1], "a"))) {
		fprintf(stderr, "benchrun: cannot write '%s'\n", argv[1]);
		return 127;
	}
	fprintf(out, "%.4f %.4f %.4f %ld\n", t1 - t0, secs(ru.ru_utime), secs(ru.ru_stime),
		ru.ru_maxrss);
	if (fclose(out) != 0)
		return 127;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
