/*
 * export.h: captures out to the tools people already use.
 *
 *   folded      "root;...;leaf value" lines: flamegraph.pl, speedscope,
 *               and profreg's own folded parser read them
 *   speedscope  speedscope's JSON file format, one "sampled" profile
 *   pprof       gzip-compressed profile.proto: `go tool pprof` reads it
 *
 * Each writes one value column of a profile; a merged selection is first
 * folded into one profile with export_merge. Only function names, file
 * names and numbers are written (profiles keep nothing else).
 *
 * Folded stacks cannot carry a ';' or a line break inside a name: those
 * become '_' and ' ', and file names are dropped.
 */
#ifndef PR_EXPORT_H
#define PR_EXPORT_H

#include "common/buf.h"
#include "common/error.h"
#include "pipeline/profile.h"

typedef enum export_format {
	EXPORT_FOLDED = 0,
	EXPORT_SPEEDSCOPE,
	EXPORT_PPROF,
} export_format;

/* "folded", "speedscope", "pprof"; PR_EUSAGE otherwise. */
int export_format_parse(export_format *out, const char *name);

/*
 * A new empty profile with one value column (`type`, `unit`) to merge
 * captures into. Free with profile_free.
 */
int export_merged_new(profile **out, const char *name, const char *type, const char *unit,
		      pr_error *err);

/*
 * Append every sample of `src` (its primary column) to `dst`, which has
 * one column. Functions are matched by name and file. Sample-count and
 * depth limits of `dst` apply.
 */
int export_merge(profile *dst, const profile *src, pr_error *err);

/* Append `p`'s column `column` in the format to `out`. `name` titles speedscope. */
int export_write(buf *out, const profile *p, size_t column, export_format fmt,
		 const char *name, pr_error *err);

int export_folded(buf *out, const profile *p, size_t column, pr_error *err);
int export_speedscope(buf *out, const profile *p, size_t column, const char *name, pr_error *err);
int export_pprof(buf *out, const profile *p, size_t column, pr_error *err);

#endif
