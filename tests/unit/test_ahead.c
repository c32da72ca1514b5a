/*
 * test_ahead.c: items prepared ahead of their consumer on helper threads.
 *
 * Every item is prepared exactly once and before the consumer gets it,
 * helpers never run further ahead than the window, the consumer prepares
 * what no helper claimed, a helper really works while the consumer does
 * (checked by making the consumer's own item wait for a helper's, with a
 * bounded wait), and stopping early leaves nothing running.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "common/ahead.h"

#define N 64

typedef struct fixture {
	atomic_int prepared[N];   /* times fn ran for each item */
	atomic_uint slot[N];      /* who prepared it */
	atomic_size_t consumer_at; /* the item the consumer asked for last */
	size_t window;
	atomic_bool too_far;      /* a helper ran past the window */
	atomic_bool wait_for_1;   /* item 0 waits until item 1 is prepared */
	atomic_bool gave_up;      /* ... and that wait timed out */
} fixture;

static void prepare(void *ctx, size_t i, unsigned slot)
{
	fixture *f = ctx;

	if (slot && i > atomic_load(&f->consumer_at) + f->window)
		atomic_store(&f->too_far, true);
	if (i == 0 && atomic_load(&f->wait_for_1)) {
		/* Bounded: 10 s, then the test fails instead of hanging. */
		struct timespec ts = {0, 1000000};
		int k = 0;
		while (!atomic_load(&f->prepared[1]) && k++ < 10000)
			nanosleep(&ts, NULL);
		if (!atomic_load(&f->prepared[1]))
			atomic_store(&f->gave_up, true);
	}
	atomic_store(&f->slot[i], slot);
	atomic_fetch_add(&f->prepared[i], 1);
}

static void consume_all(fixture *f, unsigned threads, size_t window, size_t n)
{
	ahead *a = NULL;

	f->window = window;
	assert_int_equal(ahead_start(&a, n, threads, window, prepare, f), 0);
	assert_non_null(a);
	for (size_t i = 0; i < n; i++) {
		atomic_store(&f->consumer_at, i);
		ahead_wait(a, i);
		/* Prepared once, before the consumer has it. */
		assert_int_equal(atomic_load(&f->prepared[i]), 1);
	}
	ahead_free(a);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(atomic_load(&f->prepared[i]), 1);
	assert_false(atomic_load(&f->too_far));
}

static void test_every_item_once_in_order_within_the_window(void **state)
{
	static fixture f;

	(void)state;
	memset(&f, 0, sizeof(f));
	consume_all(&f, 3, 2, N);
}

static void test_without_helpers_the_consumer_prepares_everything(void **state)
{
	static fixture f;

	(void)state;
	memset(&f, 0, sizeof(f));
	consume_all(&f, 0, 1, N);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(atomic_load(&f.slot[i]), 0);
}

static void test_one_item_starts_no_helper(void **state)
{
	static fixture f;

	(void)state;
	memset(&f, 0, sizeof(f));
	consume_all(&f, 2, 2, 1);
	assert_int_equal(atomic_load(&f.slot[0]), 0);
}

/* The consumer prepares item 0 itself while a helper prepares item 1 at the same time. */
static void test_a_helper_works_while_the_consumer_does(void **state)
{
	static fixture f;

	(void)state;
	memset(&f, 0, sizeof(f));
	atomic_store(&f.wait_for_1, true);
	consume_all(&f, 1, 1, 2);
	assert_false(atomic_load(&f.gave_up));
	assert_int_equal(atomic_load(&f.slot[0]), 0);
	assert_int_equal(atomic_load(&f.slot[1]), 1);
}

/* Stopping after three items: nothing prepared twice, nothing runs after the stop. */
static void test_stop_early(void **state)
{
	static fixture f;
	ahead *a = NULL;
	int before[N], total = 0;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.window = 2;
	assert_int_equal(ahead_start(&a, N, 2, 2, prepare, &f), 0);
	for (size_t i = 0; i < 3; i++) {
		atomic_store(&f.consumer_at, i);
		ahead_wait(a, i);
	}
	ahead_free(a);
	for (size_t i = 0; i < N; i++) {
		before[i] = atomic_load(&f.prepared[i]);
		assert_true(before[i] <= 1);
		total += before[i];
	}
	/* The window allows at most two items past the last one waited for. */
	assert_true(total >= 3 && total <= 5);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(atomic_load(&f.prepared[i]), before[i]);
	assert_false(atomic_load(&f.too_far));
}

static void test_helpers_stay_within_the_cap(void **state)
{
	(void)state;
	assert_int_equal(ahead_helpers(0), 0);
	assert_true(ahead_helpers(3) <= 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_item_once_in_order_within_the_window),
		cmocka_unit_test(test_without_helpers_the_consumer_prepares_everything),
		cmocka_unit_test(test_one_item_starts_no_helper),
		cmocka_unit_test(test_a_helper_works_while_the_consumer_does),
		cmocka_unit_test(test_stop_early),
		cmocka_unit_test(test_helpers_stay_within_the_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
