/*
 * jfr.h: parser for Java Flight Recorder recordings (.jfr: the JDK's own
 * JDK Flight Recorder, and async-profiler's JFR output, which Pyroscope's
 * Java agent sends).
 *
 * Reads the JDK 11+ chunk format (versions 1.x and 2.x), one chunk or
 * several back to back, generically from each chunk's metadata. CPU
 * samples (jdk.ExecutionSample) become samples/count, allocation samples
 * (jdk.ObjectAllocationSample) alloc_space/bytes; see jfr.c for what is
 * read and what is not.
 */
#ifndef PR_JFR_H
#define PR_JFR_H

#include "pipeline/profile.h"

/*
 * Parse a recording; ownership as for pprof_parse: on success *out is a
 * profile the caller frees with profile_free, on failure *out is NULL and
 * `err` names the input and the reason. `data` is only read, never kept;
 * beside it the parse holds at most the memory budget of `lim`
 * (profile_mem_budget).
 */
int jfr_parse(profile **out, const uint8_t *data, size_t len,
	      const char *name, const profile_limits *lim, pr_error *err);

/* True when the bytes start with a chunk's magic, "FLR\0". */
bool jfr_sniff(const uint8_t *data, size_t len);

#endif
