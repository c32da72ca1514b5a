/*
 * job.c: the clock and the notes of a job (see job.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/job.h"
#include "common/buf.h"
#include "common/timeutil.h"

#include <stdarg.h>
#include <stdlib.h>

int64_t job_now(const job_env *env)
{
	return env && env->now_us ? env->now_us() : time_now_us();
}

void job_note(job_notes *n, const char *fmt, ...)
{
	buf line = BUF_INIT;
	char **grown;
	va_list ap;

	va_start(ap, fmt);
	if (buf_vprintf(&line, fmt, ap) < 0) {
		va_end(ap);
		return;
	}
	va_end(ap);
	if (!(grown = realloc(n->lines, (n->n + 1) * sizeof(*grown)))) {
		buf_release(&line);
		return;
	}
	n->lines = grown;
	n->lines[n->n++] = buf_detach(&line, NULL);
}

void job_notes_release(job_notes *n)
{
	for (size_t i = 0; i < n->n; i++)
		free(n->lines[i]);
	free(n->lines);
	n->lines = NULL;
	n->n = 0;
}
