/*
 * perf.h: parser for Linux `perf script` text (after `perf record`, with or without -g).
 */
#ifndef PR_PERF_H
#define PR_PERF_H

#include "pipeline/profile.h"

/*
 * Parse perf script output: one stack per sample event, folded the way
 * stackcollapse-perf.pl folds them, the command name as the root frame.
 * Ownership as for pprof_parse.
 */
int perf_parse(profile **out, const uint8_t *data, size_t len,
	       const char *name, const profile_limits *lim, pr_error *err);

/* True when the bytes look like perf script output. */
bool perf_sniff(const uint8_t *data, size_t len);

#endif
