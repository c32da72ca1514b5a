/*
 * speedscope.h: parser for speedscope's JSON file format (py-spy, rbspy,
 * speedscope's own exports, `profreg export --format speedscope`).
 */
#ifndef PR_SPEEDSCOPE_H
#define PR_SPEEDSCOPE_H

#include "pipeline/profile.h"

/*
 * Parse a speedscope file; ownership as for pprof_parse: on success *out
 * is a new profile the caller frees with profile_free, on failure *out is
 * NULL and `err` names the input and the reason. Every profile of the file
 * is merged into one capture (see speedscope.c for the rules). `data` is
 * read in one streaming pass and not kept; beside it the parse holds at
 * most the memory budget of `lim` (profile_mem_budget), plus one copy of
 * the longest frame name or file that has escapes, which yajl decodes
 * before the length limit can refuse it.
 */
int speedscope_parse(profile **out, const uint8_t *data, size_t len,
		     const char *name, const profile_limits *lim, pr_error *err);

/*
 * True when the bytes are a JSON object that names speedscope's schema
 * in "$schema", or has "shared", "frames" and "profiles" keys, within
 * its first 4 KiB.
 */
bool speedscope_sniff(const uint8_t *data, size_t len);

#endif
