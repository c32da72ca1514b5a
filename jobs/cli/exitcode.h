/*
 * exitcode.h: what profreg's exit status means, in one place.
 *
 * CI hooks and cron wrappers branch on these, so they never change
 * meaning: 0 ok, 1 a gate or finding condition, 2 usage, 3 a runtime or
 * infrastructure failure, 4 bad input data, 5 inconclusive (a gate that
 * could not judge and was told to fail closed).
 */
#ifndef PR_EXITCODE_H
#define PR_EXITCODE_H

enum {
	EXIT_OK = 0,
	EXIT_GATE = 1,
	EXIT_USAGE = 2,
	EXIT_RUNTIME = 3,
	EXIT_DATA = 4,
	EXIT_INCONCLUSIVE = 5,
};

/* Map a PR_E* code to the exit status it deserves. */
int exitcode_for(int pr_code);

#endif
