/* small CPU burner: known hot function compute_fee; factor K slows it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static volatile double sink;
#ifdef SLOW
__attribute__((noinline)) double log_audit(int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += (i % 13) * 0.021;
	return s;
}
#endif
__attribute__((noinline)) double compute_fee(int n)
{
#ifdef SLOW
	n = n * 2;
#endif
	double s = 0;
	for (int i = 0; i < n; i++)
		s += (i % 7) * 0.013 + s * 1e-9;
	return s;
}
__attribute__((noinline)) double validate_card(int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += (i % 5) * 0.011;
	return s;
}
__attribute__((noinline)) double format_receipt(int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += (i % 3) * 0.017;
	return s;
}
__attribute__((noinline)) double charge_4111111111111111(int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += (i % 11) * 0.019;
	return s;
}
__attribute__((noinline)) void *alloc_buffers(int k)
{
	void *p = 0;
	for (int i = 0; i < k; i++) {
		free(p);
		p = malloc(4096 + i % 100);
	}
	return p;
}
static void *keep[100000];
static int nkeep;
__attribute__((noinline)) void retain_ledger(int k)
{
	for (int i = 0; i < k && nkeep < 100000; i++)
		keep[nkeep++] = malloc(1024);
}
__attribute__((noinline)) void retain_session(int k)
{
	for (int i = 0; i < k && nkeep < 100000; i++)
		keep[nkeep++] = malloc(512);
}
__attribute__((noinline)) void handle_payment(int k)
{
	sink += compute_fee(40000 * k);
	sink += validate_card(30000);
	sink += format_receipt(20000);
	sink += charge_4111111111111111(10000);
#ifdef SLOW
	sink += log_audit(10);
#endif
	free(alloc_buffers(5));
}
int main(int argc, char **argv)
{
	int k = argc > 1 ? atoi(argv[1]) : 1;
	double secs = argc > 2 ? atof(argv[2]) : 1.0;
	int heapk = argc > 3 ? atoi(argv[3]) : 1;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	long rounds = 0;
	for (;;) {
		handle_payment(k);
		rounds++;
		if (rounds % 50 == 0) {
			retain_ledger(10 * heapk);
			retain_session(10);
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 > secs ||
		    rounds > 2000000)
			break;
	}
	fprintf(stderr, "rounds %ld k %d\n", rounds, k);
	return 0;
}
