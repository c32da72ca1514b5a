/*
 * deadline.c: a command's deadline, watched from a thread (see deadline.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/deadline.h"
#include "jobs/cli/exitcode.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void *deadline_thread(void *arg)
{
	cli_deadline *w = arg;
	int rc = 0;

	pthread_mutex_lock(&w->mu);
	while (!w->stop && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&w->cv, &w->mu, &w->at);
	if (!w->stop) {
		/* One write, then out: no lock the blocked thread may hold is taken. */
		(void)!write(STDERR_FILENO, w->line, w->len);
		_exit(EXIT_RUNTIME);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

int cli_deadline_start(cli_deadline *w, int64_t after_us, const char *line, pr_error *err)
{
	pthread_condattr_t ca;
	int n;

	memset(w, 0, sizeof(*w));
	clock_gettime(CLOCK_MONOTONIC, &w->at);
	w->at.tv_sec += (time_t)(after_us / 1000000);
	w->at.tv_nsec += (long)(after_us % 1000000) * 1000;
	if (w->at.tv_nsec >= 1000000000L) {
		w->at.tv_sec++;
		w->at.tv_nsec -= 1000000000L;
	}
	n = snprintf(w->line, sizeof(w->line) - 1, "%s", line);
	w->len = n < 0 ? 0 : (size_t)n < sizeof(w->line) - 1 ? (size_t)n : sizeof(w->line) - 2;
	w->line[w->len++] = '\n';
	if (pthread_condattr_init(&ca) != 0)
		return pr_error_set(err, PR_ENOMEM, "cannot watch the deadline: out of memory");
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&w->thread, NULL, deadline_thread, w) != 0) {
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
		return pr_error_set(err, PR_ERR, "cannot watch the deadline: no thread");
	}
	w->started = true;
	return 0;
}

void cli_deadline_stop(cli_deadline *w)
{
	if (!w->started)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	w->started = false;
}
