/*
 * Off-CPU: a loop waits on the bank (usleep), on a fraud check and on
 * an audit write, then computes a fee; "./offcpu 2" waits twice as long
 * on the bank.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <time.h>
static volatile double sink;
__attribute__((noinline)) void wait_for_bank(int us)
{
	usleep(us);
	sink += 1;
}
__attribute__((noinline)) void wait_for_fraud_check(int us)
{
	usleep(us);
	sink += 1;
}
__attribute__((noinline)) void write_audit(int us)
{
	usleep(us);
	sink += 1;
}
__attribute__((noinline)) double compute_fee(int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += (i % 7) * 0.013;
	return s;
}
int main(int argc, char **argv)
{
	int slow = argc > 1 ? atoi(argv[1]) : 1;
	double secs = argc > 2 ? atof(argv[2]) : 1.0;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long r = 0; r < 100000; r++) {
		wait_for_bank(600 * slow);
		wait_for_fraud_check(300);
		write_audit(100);
		sink += compute_fee(20000);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 > secs)
			break;
	}
	return 0;
}
