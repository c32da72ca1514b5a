/*
 * exports.c: a selection's captures out in one export format.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/exports.h"
#include "jobs/access.h"
#include "pipeline/format.h"
#include "pipeline/gunzip.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int exports_value_parse(exports_value *out, const char *name)
{
	if (strcmp(name, "samples") == 0)
		*out = EXPORTS_VALUE_SAMPLES;
	else if (strcmp(name, "unit") == 0)
		*out = EXPORTS_VALUE_UNIT;
	else
		return PR_EUSAGE;
	return 0;
}

/* The column of `p` to write under `value`. */
static int pick_column(size_t *out, const profile *p, const reportdata_cap *c,
		       exports_value value, pr_error *err)
{
	if (value != EXPORTS_VALUE_SAMPLES) {
		*out = p->primary;
		return 0;
	}
	if (export_samples_column(out, p, p->primary) == 0)
		return 0;
	return pr_error_set(err, PR_EUSAGE,
			    "cannot export capture %" PRId64 " as samples: its '%s' profile has "
			    "no sample counts (use --value unit)", c->id,
			    p->value_types[p->primary].type);
}

/* The original bytes of a capture, gunzipped. */
static int load_raw(buf *out, blob_store *bs, const reportdata_cap *c, const profile_limits *lim,
		    pr_error *err)
{
	buf raw = BUF_INIT;
	char name[48];
	int rc;

	snprintf(name, sizeof(name), "capture %" PRId64, c->id);
	if ((rc = blob_get(bs, c->blob_key, &raw, lim->max_decompressed_bytes, err)) < 0)
		goto out;
	if (format_is_gzip((const uint8_t *)raw.ptr, raw.len))
		rc = gunzip_bounded(out, (const uint8_t *)raw.ptr, raw.len,
				    lim->max_decompressed_bytes, name, err);
	else
		rc = buf_put(out, raw.ptr, raw.len) < 0
			     ? pr_error_set(err, PR_ENOMEM, "cannot read %s: out of memory", name)
			     : 0;
out:
	buf_release(&raw);
	return rc;
}

/*
 * Merging adds values: nanoseconds of one capture and sample counts of
 * another summed under the first one's unit is a number that means
 * nothing, so a capture whose column differs from the first's refuses
 * the export.
 */
static int same_unit(const exports_result *res, const reportdata_cap *first,
		     const reportdata_cap *c, const profile_value_type *vt, exports_value value,
		     pr_error *err)
{
	char type[sizeof(res->type)], unit[sizeof(res->unit)];

	/* Compared as res holds them: cut to its size. */
	snprintf(type, sizeof(type), "%s", vt->type);
	snprintf(unit, sizeof(unit), "%s", vt->unit);
	if (strcmp(type, res->type) == 0 && strcmp(unit, res->unit) == 0)
		return 0;
	return pr_error_set(err, PR_EDATA,
			    "cannot merge capture %" PRId64 " (%s/%s) with capture %" PRId64
			    " (%s/%s): their values are not in the same unit%s",
			    first->id, res->type, res->unit, c->id, vt->type, vt->unit,
			    value == EXPORTS_VALUE_UNIT ? " (try --value samples)" : "");
}

static bool all_pprof(const reportdata_cap *caps, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!caps[i].format || strcmp(caps[i].format, "pprof") != 0)
			return false;
	return n > 0;
}

int exports_run(buf *out, exports_result *res, const job_env *env, const reportdata_sel *sel,
		export_format fmt, exports_value value, pr_error *err)
{
	const profile_limits *lim = &env->cfg->limits;
	reportdata_cap *caps = NULL;
	profile *one = NULL, *merged = NULL;
	export_pprof_set *set = NULL;
	buf raw = BUF_INIT;
	size_t ncaps = 0, col;
	int rc;

	memset(res, 0, sizeof(*res));
	if (value == EXPORTS_VALUE_DEFAULT)
		value = fmt == EXPORT_FOLDED ? EXPORTS_VALUE_SAMPLES : EXPORTS_VALUE_UNIT;
	/* Reading a profile whole is a read of each capture, checked and audited. */
	if ((rc = access_audit_unseen(env->d, "capture.export", sel->ids, sel->nids, true,
				      err)) < 0 ||
	    (rc = reportdata_sel_captures(&caps, &ncaps, env->d, sel, err)) < 0 ||
	    (rc = access_read_captures(env->d, "capture.export", NULL, &caps[0].id, ncaps,
				       sizeof(*caps), true, err)) < 0)
		goto out;
	res->ncaptures = ncaps;
	res->detailed = fmt == EXPORT_PPROF && all_pprof(caps, ncaps);
	for (size_t i = 0; i < ncaps; i++) {
		const profile_value_type *vt;
		char name[48];

		if ((rc = reportdata_load_profile(&one, env->bs, &caps[i], lim, err)) < 0 ||
		    (rc = pick_column(&col, one, &caps[i], value, err)) < 0)
			goto out;
		vt = &one->value_types[col];
		if (i == 0) {
			snprintf(res->type, sizeof(res->type), "%s", vt->type);
			snprintf(res->unit, sizeof(res->unit), "%s", vt->unit);
		} else if ((rc = same_unit(res, &caps[0], &caps[i], vt, value, err)) < 0) {
			goto out;
		}
		if (res->detailed) {
			snprintf(name, sizeof(name), "capture %" PRId64, caps[i].id);
			buf_reset(&raw);
			if ((!set &&
			     (rc = export_pprof_set_new(&set, vt->type, vt->unit, err)) < 0) ||
			    (rc = load_raw(&raw, env->bs, &caps[i], lim, err)) < 0 ||
			    (rc = export_pprof_set_add(set, (const uint8_t *)raw.ptr, raw.len, name,
						       lim, err)) < 0)
				goto out;
		} else if (ncaps > 1 || col != one->primary) {
			if (!merged && (rc = export_merged_new(&merged, sel->text, vt->type,
							       vt->unit, err)) < 0)
				goto out;
			if ((rc = export_merge_column(merged, one, col, err)) < 0)
				goto out;
		} else {
			rc = export_write(out, one, col, fmt, sel->text, err);
			goto out;
		}
		profile_free(one);
		one = NULL;
	}
	if (set)
		rc = export_pprof_set_write(out, set, err);
	else if (merged)
		rc = export_write(out, merged, 0, fmt, sel->text, err);
out:
	buf_release(&raw);
	export_pprof_set_free(set);
	profile_free(one);
	profile_free(merged);
	reportdata_caps_free(caps, ncaps);
	return rc;
}
