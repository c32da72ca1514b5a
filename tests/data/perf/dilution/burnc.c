#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
static volatile unsigned long sink;
static int factor = 1;
__attribute__((noinline)) unsigned long hot(long n)
{
	unsigned long s = 0;
	for (long i = 0; i < n * 5; i++)
		s = (s ^ i) * 2654435761u;
	return s;
}
__attribute__((noinline)) unsigned long compute_tax(long n)
{
	unsigned long s = 0;
	for (long i = 0; i < n * 2 * factor; i++)
		s = (s + 3 ^ i) * 40503u;
	return s;
}
static inline unsigned long mixin(unsigned long a)
{
	return a * 31 + 7;
}
__attribute__((noinline)) unsigned long cold(long n)
{
	unsigned long s = 0;
	for (long i = 0; i < n; i++)
		s = mixin(s + i);
	return s;
}
__attribute__((noinline)) void syscalls(void)
{
	char buf[4096];
	int fd = open("/dev/zero", O_RDONLY);
	for (int i = 0; i < 200; i++)
		read(fd, buf, sizeof buf);
	close(fd);
	void *p = malloc(1 << 20);
	memset(p, 1, 1 << 20);
	free(p);
}
int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "slow"))
		factor = 2;
	double secs = argc > 2 ? atof(argv[2]) : 3;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		sink += hot(200000);
		sink += compute_tax(200000);
		sink += cold(200000);
		syscalls();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
