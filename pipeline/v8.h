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

/*
 * A V8 code name as perf maps print it (node --perf-basic-prof, read by
 * perf script, and the stacks folded from it): "JS:*hotLeaf
 * /srv/app/hot.js:1:17", older V8 "LazyCompile:~f node:events:517:28".
 * The function is hotLeaf of /srv/app/hot.js: the tier mark (~
 * interpreted, ^ Sparkplug, + Maglev, * TurboFan) changes as the JIT
 * warms up and the line and column as code moves, and neither makes it
 * another function. True, with the name (an empty one is "(anonymous)",
 * as in a cpuprofile) and the file, when s[0..n) is such a name with its
 * "FILE:LINE:COLUMN"; false for anything else, which stays as written.
 * Code of no script (eval, new Function) has an empty FILE, "JS:*f :1:18":
 * the function f with no file, as a cpuprofile's empty url names it.
 * The pointers are into s, or to static text.
 */
bool v8_code_name(const char *s, size_t n, const char **name, size_t *name_len,
		  const char **file, size_t *file_len);

#endif
