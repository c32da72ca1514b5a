/*
 * clockskew.c: an LD_PRELOAD shim that moves CLOCK_REALTIME by SKEW_S
 * seconds for the process it is loaded into, so a test can run profreg
 * on a machine whose clock differs from the database's. The monotonic
 * clock is left alone. Built by the tests that use it:
 *   cc -shared -fPIC -o clockskew.so tests/support/clockskew.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

int clock_gettime(clockid_t id, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);
	const char *skew = getenv("SKEW_S");
	int rc;

	if (!real)
		real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
	rc = real(id, ts);
	if (rc == 0 && id == CLOCK_REALTIME && skew)
		ts->tv_sec += strtol(skew, NULL, 10);
	return rc;
}
