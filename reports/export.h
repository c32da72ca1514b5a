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
 * become '_' and ' ', other C0 controls and DEL the text \xNN and C1
 * controls \u{NNNN}, and file names are dropped. Identical stacks are
 * one line holding their sum, lines sorted by stack.
 *
 * A profile as parsed holds functions, not lines or addresses. For pprof
 * sources the detailed writer (export_pprof_set) works from the original
 * profile.proto instead and keeps its mappings (file, build id, address
 * range), locations (address, inlined lines), line numbers and function
 * start lines, so that `go tool pprof -lines`, `-list` and `-raw` work on
 * the export. Labels, comments and unreferenced strings are never copied.
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

/* export_merge of `src`'s column `column` instead of its primary one. */
int export_merge_column(profile *dst, const profile *src, size_t column, pr_error *err);

/*
 * The column of `p` that counts samples for the values of `column`: a
 * "samples" column (profile_samples_column), the "_objects" twin of a
 * "_space" column, or `column` itself when its unit is "count".
 * PR_ENOTFOUND when there is none.
 */
int export_samples_column(size_t *out, const profile *p, size_t column);

/* Append `p`'s column `column` in the format to `out`. `name` titles speedscope. */
int export_write(buf *out, const profile *p, size_t column, export_format fmt,
		 const char *name, pr_error *err);

int export_folded(buf *out, const profile *p, size_t column, pr_error *err);
int export_speedscope(buf *out, const profile *p, size_t column, const char *name, pr_error *err);
int export_pprof(buf *out, const profile *p, size_t column, pr_error *err);

/*
 * The detailed pprof writer: add the original (uncompressed) profile.proto
 * bytes of each capture, then write them as one gzip-compressed profile
 * with one value column, `type`/`unit`, which every added profile must
 * have. Identical mappings, functions and locations are merged; samples
 * keep their stacks and that column's value, nothing else. Each decode
 * runs within profile_mem_budget(lim) (NULL: the defaults). The set owns
 * its copies; free with export_pprof_set_free.
 */
typedef struct export_pprof_set export_pprof_set;

int export_pprof_set_new(export_pprof_set **out, const char *type, const char *unit,
			 pr_error *err);
int export_pprof_set_add(export_pprof_set *s, const uint8_t *data, size_t len, const char *name,
			 const profile_limits *lim, pr_error *err);
int export_pprof_set_write(buf *out, export_pprof_set *s, pr_error *err);
void export_pprof_set_free(export_pprof_set *s);

#endif
