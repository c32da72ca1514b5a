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

/*
 * False when perf event `event` (as profile.event keeps it, "cpu-clock",
 * "sched:sched_switch") surely counts something other than CPU time: a
 * tracepoint, a software event such as page-faults or context-switches,
 * a cache or branch counter. True for the clocks and cycles, and for any
 * event it does not know (a PMU's "cpu_core/cycles/").
 */
bool perf_event_is_cpu_time(const char *event);

/*
 * `event` as a message may quote it, into out (80 bytes): as it is when
 * it is letters and "_.:-" alone, else a redacted excerpt (common/redact.h):
 * the event comes from the file. Returns out or event.
 */
const char *perf_event_text(char out[80], const char *event);

#endif
