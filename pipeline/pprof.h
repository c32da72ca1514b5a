/*
 * pprof.h: parser for pprof's profile.proto (Go, pyroscope, many others).
 */
#ifndef PR_PPROF_H
#define PR_PPROF_H

#include "pipeline/profile.h"

/*
 * Parse an uncompressed profile.proto message. Every sample type is kept
 * as a value column; inlined frames (several lines in one location)
 * become separate frames; labels are dropped. On success *out belongs to
 * the caller (profile_free); on failure it is NULL and `err` says why.
 */
int pprof_parse(profile **out, const uint8_t *data, size_t len,
		const char *name, const profile_limits *lim, pr_error *err);

/* True when the bytes look like a profile.proto message. */
bool pprof_sniff(const uint8_t *data, size_t len);

#endif
