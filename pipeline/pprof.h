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

/*
 * Which samples to keep: those carrying a label whose key is one of
 * `keys` and whose string value is `value` (a span id, a trace id), or,
 * for a label with a number and no string (libdatadog's span ids), whose
 * number is `value` read as an unsigned decimal. The labels are compared
 * while the sample is read and never kept: the profile holds only the
 * matching samples, without their labels.
 */
typedef struct pprof_label_filter {
	const char *const *keys;
	size_t nkeys;
	const char *value;
} pprof_label_filter;

/*
 * pprof_parse, keeping only the samples `only` matches (NULL: all). *kept
 * (may be NULL) is how many matched. Every sample is still checked.
 */
int pprof_parse_where(profile **out, size_t *kept, const uint8_t *data, size_t len,
		      const char *name, const profile_limits *lim, const pprof_label_filter *only,
		      pr_error *err);

/* True when the bytes look like a profile.proto message. */
bool pprof_sniff(const uint8_t *data, size_t len);

#endif
