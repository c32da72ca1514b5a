/*
 * format.h: from raw bytes to a profile, whatever the format.
 *
 * Undoes gzip (bounded by max_decompressed_bytes), detects the format by
 * content when asked to (PROFILE_FMT_AUTO) and calls the right parser.
 * Detection looks at the decompressed bytes:
 *   - "FLR\0" at offset 0                             -> JFR (.jfr)
 *   - a JSON object naming speedscope's "$schema", or with "shared",
 *     "frames" and "profiles" keys                    -> speedscope
 *   - a JSON object with "nodes" and "samples"        -> V8 .cpuprofile
 *   - perf script text (a "comm pid[/tid] [cpu] time: ... event:" header
 *     line followed by indented "addr sym (dso)" frames) -> perf
 *   - lines of "frame;frame;... <integer>"            -> folded
 *   - anything else that decodes as protobuf           -> pprof
 */
#ifndef PR_FORMAT_H
#define PR_FORMAT_H

#include "pipeline/pprof.h"
#include "pipeline/profile.h"

/* Guess the format of decompressed bytes; PROFILE_FMT_AUTO when unknown. */
profile_format format_detect(const uint8_t *data, size_t len);

/* True when the bytes start with the gzip magic. */
bool format_is_gzip(const uint8_t *data, size_t len);

/*
 * Parse `len` bytes read from `name`. On success *out is a new profile
 * the caller frees with profile_free; on failure *out is NULL and `err`
 * names the input and the reason (PR_EDATA or PR_ELIMIT for bad input).
 */
int format_parse(profile **out, const uint8_t *data, size_t len,
		 profile_format fmt, const char *name,
		 const profile_limits *lim, pr_error *err);

/*
 * format_parse, keeping only the samples whose labels `only` matches (see
 * pprof_label_filter; NULL keeps all). Only pprof has labels: for the
 * other formats every sample is kept and *kept (may be NULL) is
 * FORMAT_NO_LABELS; for pprof it is the number of samples kept.
 */
#define FORMAT_NO_LABELS ((size_t)-1)
int format_parse_where(profile **out, size_t *kept, const uint8_t *data, size_t len,
		       profile_format fmt, const char *name, const profile_limits *lim,
		       const pprof_label_filter *only, pr_error *err);

#endif
