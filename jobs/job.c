/*
 * job.c: the clock and the notes of a job (see job.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/job.h"
#include "common/buf.h"
#include "common/similar.h"
#include "common/timeutil.h"

#include <stdarg.h>
#include <stdio.h>
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

int job_release_hint(char *out, size_t size, db *d, int64_t service_id, const char *release,
		     pr_error *err)
{
	char **rel = NULL;
	size_t n = 0;
	long best;
	int rc;

	*out = '\0';
	if ((rc = db_service_releases(d, &rel, &n, service_id, err)) < 0)
		return rc;
	best = similar_best(release, (const char *const *)rel, n);
	if (best >= 0)
		snprintf(out, size, " (did you mean '%.300s'?)", rel[best]);
	else if (n)
		snprintf(out, size, " (its latest release is '%.300s')", rel[0]);
	db_strings_free(rel, n);
	return 0;
}
