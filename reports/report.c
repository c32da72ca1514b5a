/*
 * report.c: the report model's lifecycle and the numbers renderers share.
 */
#define _POSIX_C_SOURCE 200809L
#include "reports/report.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void report_run_name(char out[REPORT_RUN_NAME_MAX], int64_t run_id, const char *instance)
{
	snprintf(out, REPORT_RUN_NAME_MAX, "run-%" PRId64 "-%.8s", run_id,
		 instance && *instance ? instance : "0");
}

int64_t report_run_name_id(const char *file, const char *instance)
{
	char name[REPORT_RUN_NAME_MAX];
	const char *rest;
	char *end;
	long long id;

	if (strncmp(file, "run-", 4) != 0 || !isdigit((unsigned char)file[4]))
		return 0;
	errno = 0;
	id = strtoll(file + 4, &end, 10);
	if (errno != 0 || id <= 0)
		return 0;
	/* Named back and compared, so the two can never disagree on what a name is. */
	report_run_name(name, (int64_t)id, instance);
	if (strncmp(file, name, strlen(name)) != 0)
		return 0;
	rest = file + strlen(name);
	return *rest == '.' || strncmp(rest, "-team-", 6) == 0 ? (int64_t)id : 0;
}

int report_init(report *r, const char *kind, pr_error *err)
{
	memset(r, 0, sizeof(*r));
	r->services_analysed = r->services_failed = -1;
	flame_opts_default(&r->fopts);
	if (!(r->kind = strdup(kind)))
		return pr_error_set(err, PR_ENOMEM, "cannot build the report: out of memory");
	return 0;
}

static void finding_release(report_finding *f)
{
	free(f->service);
	free(f->type);
	free(f->function);
	free(f->renamed_from);
	free(f->file);
	free(f->direction);
	free(f->severity);
	free(f->status);
	free(f->test);
	free(f->cost_unit);
	free(f->release);
	free(f->commit);
	for (size_t i = 0; i < f->ncaps; i++) {
		free(f->caps[i].blob_key);
		free(f->caps[i].release);
		free(f->caps[i].host);
		free(f->caps[i].retention);
	}
	free(f->caps);
	free(f->points);
	for (size_t i = 0; i < f->nsnaps; i++) {
		free(f->snaps[i].host);
		free(f->snaps[i].incident);
		free(f->snaps[i].reason);
	}
	free(f->snaps);
	for (size_t i = 0; i < f->nsuspects; i++) {
		free(f->suspects[i].sha);
		free(f->suspects[i].author);
		free(f->suspects[i].subject);
	}
	free(f->suspects);
	free(f->suspect_note);
	free(f->canonical);
	free(f->state);
	free(f->fixed_by);
	free(f->carried_release);
	free(f->compare_href);
	for (size_t i = 0; i < f->nhistory; i++) {
		free(f->history[i].state);
		free(f->history[i].at);
		free(f->history[i].reason);
	}
	free(f->history);
	if (f->flame) {
		flame_tree_release(f->flame);
		free(f->flame);
	}
	free(f->flame_note);
	free(f->captures_note);
}

void report_release(report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nfindings; i++)
		finding_release(&r->findings[i]);
	free(r->findings);
	for (size_t i = 0; i < r->nfailures; i++)
		free(r->failures[i]);
	free(r->failures);
	for (size_t i = 0; i < r->nskips; i++)
		free(r->skips[i]);
	free(r->skips);
	for (size_t i = 0; i < r->npartial; i++)
		free(r->partial[i]);
	free(r->partial);
	for (size_t i = 0; i < r->nclosed; i++) {
		free(r->closed[i].service);
		free(r->closed[i].type);
		free(r->closed[i].release);
		free(r->closed[i].function);
		free(r->closed[i].direction);
		free(r->closed[i].severity);
		free(r->closed[i].state);
		free(r->closed[i].reason);
	}
	free(r->closed);
	free(r->kind);
	free(r->title);
	free(r->run_kind);
	free(r->run_status);
	free(r->base_desc);
	free(r->target_desc);
	free(r->note);
	if (r->flame) {
		flame_tree_release(r->flame);
		free(r->flame);
	}
	memset(r, 0, sizeof(*r));
}

int report_add_finding(report *r, report_finding **out, pr_error *err)
{
	report_finding *nf = realloc(r->findings, (r->nfindings + 1) * sizeof(*nf));

	if (!nf)
		return pr_error_set(err, PR_ENOMEM, "cannot build the report: out of memory");
	r->findings = nf;
	*out = &nf[r->nfindings++];
	memset(*out, 0, sizeof(**out));
	(*out)->p_value = (*out)->q_value = NAN;
	(*out)->flame_ref = -1;
	return 0;
}

bool report_folded(const report *r, size_t i)
{
	const report_finding *f = &r->findings[i];

	if (!f->incident_id || !f->incident_lead || f->incident_lead == f->id)
		return false;
	for (size_t k = 0; k < r->nfindings; k++)
		if (r->findings[k].id == f->incident_lead)
			return true;
	return false;
}

size_t report_members(const report *r, size_t i, const report_finding **out, size_t max)
{
	const report_finding *f = &r->findings[i];
	size_t n = 0;

	if (!f->incident_id || f->incident_lead != f->id)
		return 0;
	for (size_t k = 0; k < r->nfindings; k++)
		if (k != i && r->findings[k].incident_id == f->incident_id && report_folded(r, k)) {
			if (n < max)
				out[n] = &r->findings[k];
			n++;
		}
	return n;
}

size_t report_entry(const report *r, size_t i, size_t *member)
{
	const report_finding *f = &r->findings[i];
	size_t n = 0, m = 0;

	if (member)
		*member = 0;
	if (report_folded(r, i)) {
		for (size_t k = 0; k < r->nfindings; k++)
			if (r->findings[k].id == f->incident_lead) {
				for (size_t j = 0; j <= i; j++)
					m += r->findings[j].incident_id == f->incident_id &&
					     report_folded(r, j);
				if (member)
					*member = m;
				return report_entry(r, k, NULL);
			}
	}
	for (size_t k = 0; k <= i; k++)
		n += !report_folded(r, k);
	return n;
}

bool report_mixes_types(const report *r)
{
	const char *first = NULL;

	for (size_t i = 0; i < r->nfindings; i++) {
		const char *t = r->findings[i].type;
		if (!t)
			continue;
		if (first && strcmp(first, t) != 0)
			return true;
		first = t;
	}
	for (size_t i = 0; i < r->nclosed; i++) {
		const char *t = r->closed[i].type;
		if (!t)
			continue;
		if (first && strcmp(first, t) != 0)
			return true;
		first = t;
	}
	return false;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void report_finding_band(report_finding *f)
{
	double *v = NULL;
	size_t n = 0;

	f->has_band = false;
	for (size_t i = 0; i < f->npoints; i++)
		n += !f->points[i].current;
	if (n < 2 || !(v = malloc(n * sizeof(*v))))
		return;
	n = 0;
	for (size_t i = 0; i < f->npoints; i++)
		if (!f->points[i].current)
			v[n++] = f->points[i].share;
	f->band_median = median(v, n);
	for (size_t i = 0; i < n; i++)
		v[i] = fabs(v[i] - f->band_median);
	/* 1.4826 x MAD estimates the standard deviation of normal data. */
	f->band_spread = 1.4826 * median(v, n);
	f->has_band = true;
	free(v);
}

void report_severity_counts(const report *r, size_t out[4])
{
	static const char *names[4] = {"low", "medium", "high", "critical"};

	memset(out, 0, 4 * sizeof(*out));
	for (size_t i = 0; i < r->nfindings; i++) {
		const report_finding *f = &r->findings[i];
		if (!f->direction || !f->severity || strcmp(f->direction, "regression") != 0)
			continue;
		for (int k = 0; k < 4; k++)
			if (strcmp(f->severity, names[k]) == 0)
				out[k]++;
	}
}

bool report_judged_whole(const report *r)
{
	if (strcmp(r->kind, "diff") == 0)
		return true;
	return !r->note && r->services_analysed != 0 && !r->npartial && !r->nskips && !r->nfailures;
}

const char *report_empty_line(const report *r)
{
	if (report_judged_whole(r))
		return "No function's self share moved beyond the margin.";
	if (r->note)
		return NULL;
	/* A run that judged nothing, or part of what it was asked to, is no all-clear. */
	if (r->services_analysed == 0)
		return "No service was analysed in this run (see above), so no finding here does "
		       "not mean nothing moved.";
	return "Nothing moved beyond the margin in what was judged; what is listed above as "
	       "failed, skipped or not judged was not looked at.";
}

const char *report_pct(char out[32], double share)
{
	if (isnan(share))
		snprintf(out, 32, "-");
	else
		snprintf(out, 32, "%.2f%%", 100 * share);
	return out;
}

void report_put(report_out *o, const char *fmt, ...)
{
	va_list ap;

	if (o->rc < 0)
		return;
	va_start(ap, fmt);
	o->rc = buf_vprintf(o->b, fmt, ap);
	va_end(ap);
}
