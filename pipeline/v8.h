/*
 * v8.h: parser for V8 .cpuprofile JSON (node --cpu-prof, Chrome DevTools).
 */
#ifndef PR_V8_H
#define PR_V8_H

#include "pipeline/profile.h"

/*
 * Parse .cpuprofile JSON; ownership as for pprof_parse. `data` is read in
 * one streaming pass and not kept; beside it the parse holds at most the
 * memory budget of `lim` (profile_mem_budget), plus one copy of the longest
 * functionName or url that has escapes, which yajl decodes before the
 * length limit can refuse it.
 */
int v8_parse(profile **out, const uint8_t *data, size_t len,
	     const char *name, const profile_limits *lim, pr_error *err);

/* True when the bytes are a JSON object that looks like a cpuprofile. */
bool v8_sniff(const uint8_t *data, size_t len);

#endif
