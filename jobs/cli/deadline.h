/*
 * deadline.h: a command's deadline, watched from a thread.
 *
 * A job may be blocked anywhere in libpq (a lock another session holds,
 * a server that stopped answering over a live TCP connection), where its
 * own thread cannot give up. At the deadline the watch writes the line
 * it was given to standard error and ends the process with exit 3, as a
 * runner's timeout would, but saying why. The server rolls back the open
 * transaction and releases the session's locks when the connection
 * closes; a run left "running" is marked interrupted by the next run of
 * its kind. Stop the watch before printing results, so it never cuts
 * them short.
 */
#ifndef PR_CLI_DEADLINE_H
#define PR_CLI_DEADLINE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "common/error.h"

typedef struct cli_deadline {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	struct timespec at; /* CLOCK_MONOTONIC */
	bool stop, started;
	char line[512];
	size_t len;
} cli_deadline;

/*
 * Start watching: the command ends `after_us` from now, with `line` (a
 * newline is added; cut to fit) on standard error and exit 3. *w must
 * outlive the watch (cli_deadline_stop).
 */
int cli_deadline_start(cli_deadline *w, int64_t after_us, const char *line, pr_error *err);

/* Stop watching (safe on a watch never started): the command has its outcome. */
void cli_deadline_stop(cli_deadline *w);

#endif
