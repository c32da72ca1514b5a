/*
 * v8heap.h: parser for V8 sampling heap profiles (.heapprofile JSON, as
 * node --heap-prof and Chrome DevTools' allocation sampling write them).
 */
#ifndef PR_V8HEAP_H
#define PR_V8HEAP_H

#include "pipeline/profile.h"

/*
 * Parse .heapprofile JSON; ownership as for pprof_parse: on success *out
 * is a profile the caller frees with profile_free, on failure *out is NULL
 * and `err` names the input and the reason. `data` is read in one
 * streaming pass and not kept; beside it the parse holds at most the
 * memory budget of `lim` (profile_mem_budget), plus one copy of the
 * longest functionName or url that has escapes, which yajl decodes before
 * the length limit can refuse it.
 */
int v8heap_parse(profile **out, const uint8_t *data, size_t len,
		 const char *name, const profile_limits *lim, pr_error *err);

/*
 * True when the bytes are a JSON object whose first key is "head" or
 * "samples" and which holds "selfSize" in its first 64 KiB: a heap
 * profile, and never a .cpuprofile, which V8 starts with "nodes".
 */
bool v8heap_sniff(const uint8_t *data, size_t len);

#endif
