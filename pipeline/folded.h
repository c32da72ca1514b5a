/*
 * folded.h: parser for folded ("collapsed") stacks: "a;b;c 123" per line,
 * as Brendan Gregg's stackcollapse tools and Pyroscope write them.
 */
#ifndef PR_FOLDED_H
#define PR_FOLDED_H

#include "pipeline/profile.h"

/* Parse folded text; ownership as for pprof_parse. */
int folded_parse(profile **out, const uint8_t *data, size_t len,
		 const char *name, const profile_limits *lim, pr_error *err);

/* True when the first non-empty lines look like folded stacks. */
bool folded_sniff(const uint8_t *data, size_t len);

/*
 * True when most of the lines folded_sniff judges are folded stacks (one
 * at least) and the others, or some, are but for a count gone wrong
 * ("main;b 1.5", "main;b -3"): text meant as folded, whose error is
 * folded_parse's, naming the line and the reason.
 */
bool folded_sniff_near(const uint8_t *data, size_t len);

#endif
