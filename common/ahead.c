/*
 * ahead.c: items prepared ahead of their consumer (see ahead.h).
 *
 * One lock guards the claim counter, the consumer's position and the
 * items' done flags; one condition variable wakes both sides (an item
 * done, the consumer moved on, a stop). The consumer's own item is never
 * claimed by a helper: the consumer prepares it at once when it is
 * unclaimed, so that a helper never makes the consumer wait for work the
 * consumer could have started itself.
 */
#define _DEFAULT_SOURCE
#include "common/ahead.h"
#include "common/error.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#define AHEAD_MAX_THREADS 16

typedef struct helper {
	ahead *a;
	unsigned slot;
} helper;

struct ahead {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	ahead_fn fn;
	void *ctx;
	size_t n, window;
	size_t next;          /* the next item to claim */
	size_t cur;           /* the item the consumer waits for or works on */
	unsigned char *done;  /* per item: prepared */
	bool stop;
	unsigned nthreads;
	pthread_t tid[AHEAD_MAX_THREADS];
	helper h[AHEAD_MAX_THREADS];
};

/* A helper may claim `next` when it lies after the consumer's item, within the window. */
static bool claimable(const ahead *a)
{
	return a->next < a->n && a->next > a->cur && a->next - a->cur <= a->window;
}

static void *helper_run(void *arg)
{
	helper *h = arg;
	ahead *a = h->a;

	pthread_mutex_lock(&a->mu);
	for (;;) {
		size_t i;

		while (!a->stop && a->next < a->n && !claimable(a))
			pthread_cond_wait(&a->cv, &a->mu);
		if (a->stop || a->next >= a->n)
			break;
		i = a->next++;
		pthread_mutex_unlock(&a->mu);
		a->fn(a->ctx, i, h->slot);
		pthread_mutex_lock(&a->mu);
		a->done[i] = 1;
		pthread_cond_broadcast(&a->cv);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

int ahead_start(ahead **out, size_t n, unsigned threads, size_t window, ahead_fn fn,
		void *ctx)
{
	ahead *a;

	*out = NULL;
	if (!(a = calloc(1, sizeof(*a))))
		return PR_ENOMEM;
	if (n && !(a->done = calloc(n, 1))) {
		free(a);
		return PR_ENOMEM;
	}
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	a->fn = fn;
	a->ctx = ctx;
	a->n = n;
	a->window = window ? window : 1;
	if (threads > AHEAD_MAX_THREADS)
		threads = AHEAD_MAX_THREADS;
	if (n < 2)
		threads = 0;
	/* A helper that cannot start leaves its share to the others and the consumer. */
	for (unsigned t = 0; t < threads; t++) {
		a->h[a->nthreads] = (helper){a, a->nthreads + 1};
		if (pthread_create(&a->tid[a->nthreads], NULL, helper_run, &a->h[a->nthreads]))
			break;
		a->nthreads++;
	}
	*out = a;
	return 0;
}

void ahead_wait(ahead *a, size_t i)
{
	pthread_mutex_lock(&a->mu);
	a->cur = i;
	if (a->next <= i) {
		/* Unclaimed (every item before i was waited for, so next == i). */
		a->next = i + 1;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
		a->fn(a->ctx, i, 0);
		pthread_mutex_lock(&a->mu);
		a->done[i] = 1;
	} else {
		pthread_cond_broadcast(&a->cv);
		while (!a->done[i])
			pthread_cond_wait(&a->cv, &a->mu);
	}
	pthread_mutex_unlock(&a->mu);
}

void ahead_free(ahead *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->mu);
	a->stop = true;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	for (unsigned t = 0; t < a->nthreads; t++)
		pthread_join(a->tid[t], NULL);
	pthread_cond_destroy(&a->cv);
	pthread_mutex_destroy(&a->mu);
	free(a->done);
	free(a);
}

unsigned ahead_helpers(unsigned max)
{
	long c = sysconf(_SC_NPROCESSORS_ONLN);
	double load = 0;
	long idle;

	if (c < 2)
		return 0;
	/* getloadavg fills nothing on failure: then every processor counts as idle. */
	(void)getloadavg(&load, 1);
	idle = lround((double)c - load);
	if (idle < 2)
		return 0;
	return (unsigned long)(idle - 1) < max ? (unsigned)(idle - 1) : max;
}
