/*
 * exports.h: `profreg export` as a job: the captures a selection names,
 * read from the blob store and written in one export format.
 *
 * One capture is written as it is; several are merged into one profile.
 * The value written is the profile's own (its primary column, in its
 * unit) or its sample counts (see export_samples_column): folded stacks
 * default to sample counts, speedscope and pprof to the profile's unit.
 * pprof captures exported as pprof keep their line numbers, mappings and
 * locations (export_pprof_set); other formats never had them.
 */
#ifndef PR_EXPORTS_H
#define PR_EXPORTS_H

#include <stdbool.h>

#include "jobs/job.h"
#include "jobs/reportdata.h"
#include "reports/export.h"

typedef enum exports_value {
	EXPORTS_VALUE_DEFAULT = 0, /* samples for folded, the unit otherwise */
	EXPORTS_VALUE_SAMPLES,
	EXPORTS_VALUE_UNIT,
} exports_value;

/* "samples" or "unit"; PR_EUSAGE otherwise. */
int exports_value_parse(exports_value *out, const char *name);

typedef struct exports_result {
	size_t ncaptures;
	bool detailed;        /* pprof written from the source's own tables */
	char type[64], unit[64]; /* the value written */
} exports_result;

/*
 * Append the export of the captures `sel` names to `out`. A capture whose
 * profile has no sample counts when they are asked for is PR_EUSAGE with
 * the reason; captures whose values differ in type or unit (a pprof's
 * cpu/nanoseconds, a folded file's samples/count) are PR_EDATA naming
 * both; the errors of reportdata_sel_captures and the blob store
 * otherwise.
 */
int exports_run(buf *out, exports_result *res, const job_env *env, const reportdata_sel *sel,
		export_format fmt, exports_value value, pr_error *err);

#endif
