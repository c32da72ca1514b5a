/*
 * burn.c: a small CPU burner for capturing real `perf script` output.
 * Three threads ("burn", "io worker", "render pool"); inlined, libc
 * (qsort, malloc) and recursive frames. See tests/data/README.md.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long leaf_hash(unsigned long x)
{
	for (int i = 0; i < 150; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

static int cmp_u64(const void *a, const void *b)
{
	unsigned long p = *(const unsigned long *)a, q = *(const unsigned long *)b;

	sink += leaf_hash(p & 15);
	return p < q ? -1 : p > q;
}

__attribute__((noinline)) static void sort_batch(int n)
{
	unsigned long *v = malloc(n * sizeof(*v));

	for (int i = 0; i < n; i++)
		v[i] = leaf_hash(i);
	qsort(v, n, sizeof(*v), cmp_u64);
	sink += v[0];
	free(v);
}

static inline __attribute__((always_inline)) void checksum_inline(int n)
{
	for (int i = 0; i < n; i++)
		sink ^= leaf_hash(i * 3);
}

__attribute__((noinline)) static unsigned long walk_tree(int depth)
{
	if (depth == 0)
		return leaf_hash(depth);
	return walk_tree(depth - 1) + 1;
}

__attribute__((noinline)) void render_page(int n)
{
	checksum_inline(n);
	for (int i = 0; i < n / 8; i++)
		sink += walk_tree(6);
}

__attribute__((noinline)) void handle_request(int n)
{
	render_page(n);
	sort_batch(n / 4);
}

static void *worker(void *arg)
{
	prctl(PR_SET_NAME, (unsigned long)arg, 0, 0, 0);
	for (int i = 0; i < 150; i++)
		handle_request(2000);
	return NULL;
}

int main(void)
{
	pthread_t t1, t2;

	pthread_create(&t1, NULL, worker, "io worker");
	pthread_create(&t2, NULL, worker, "render pool");
	for (int i = 0; i < 150; i++)
		sort_batch(3000);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	printf("%lu\n", sink);
	return 0;
}
