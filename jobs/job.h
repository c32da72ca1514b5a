/*
 * job.h: what every job takes and gives back.
 *
 * A job (nightly, post-deploy, analyze, ...) is a library function that
 * takes its dependencies in a job_env (the loaded configuration, an open
 * database, the blob store, the state directory and a clock) and fills a
 * result struct. It prints nothing: what a person should hear about
 * (a report that could not be written, a metrics push that failed) is
 * collected as notes in the result, and the command line prints them.
 */
#ifndef PR_JOB_H
#define PR_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "jobs/config.h"
#include "pipeline/blob.h"
#include "pipeline/db.h"

typedef struct job_env {
	const config *cfg;
	db *d;
	blob_store *bs;
	const char *home;           /* the state directory: default reports folder */
	int64_t (*now_us)(void);    /* the clock; NULL: the system's */
} job_env;

/* The clock of `env`, read now: every time-dependent decision reads it when it is made. */
int64_t job_now(const job_env *env);

/* One-line warnings a job collects instead of printing. */
typedef struct job_notes {
	char **lines;
	size_t n;
} job_notes;

/* Add a note; a note that cannot be added (no memory) is dropped. */
void job_note(job_notes *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void job_notes_release(job_notes *n);

/*
 * " (did you mean 'v4.2.0'?)", or " (its latest release is 'v4.1')", for
 * a release `release` that service `service_id` does not have, into
 * out[0..size) ("" when it has no release at all).
 */
int job_release_hint(char *out, size_t size, db *d, int64_t service_id, const char *release,
		     pr_error *err);

#endif
