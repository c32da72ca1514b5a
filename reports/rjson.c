/*
 * rjson.c: the report as JSON for machines, with a schema_version.
 *
 * Built with jansson, which escapes every string itself. Shares are
 * fractions (0.05 is 5%), times are ISO 8601 UTC. The flame graph is a
 * flat list of frames (parent by index into the same list), pruned like
 * the drawn one, frames that exist only in the baseline included.
 */
#define _POSIX_C_SOURCE 200809L
#include "reports/report.h"
#include "common/timeutil.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static json_t *num(double v)
{
	return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

static json_t *str(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *when(int64_t us)
{
	char t[TIME_FMT_MAX];

	if (!us)
		return json_null();
	time_format(t, us);
	return json_string(t);
}

static json_t *flame_json(const flame_tree *t, const flame_opts *o)
{
	json_t *arr = json_array();
	int64_t *idx = malloc(t->n * sizeof(*idx));
	size_t out = 0;

	if (!arr || !idx) {
		free(idx);
		json_decref(arr);
		return NULL;
	}
	/* A parent is always created before its children: one pass in order. */
	for (size_t i = 0; i < t->n; i++) {
		const flame_node *nd = &t->nodes[i];
		double self[2], tot[2];
		json_t *fr;

		idx[i] = -1;
		if (i && (idx[nd->parent] < 0 || out >= o->max_frames))
			continue;
		flame_node_shares(t, (uint32_t)i, self, tot);
		if (i && tot[FLAME_CUR] < o->min_frac && tot[FLAME_BASE] < o->min_frac)
			continue;
		fr = json_pack("{s:s,s:I,s:o,s:o,s:o,s:o}", "name", t->names[nd->name], "parent",
			       (json_int_t)(i ? idx[nd->parent] : -1), "current",
			       num(tot[FLAME_CUR]), "baseline", num(tot[FLAME_BASE]),
			       "self_current", num(self[FLAME_CUR]), "self_baseline",
			       num(self[FLAME_BASE]));
		if (!fr || json_array_append_new(arr, fr) < 0) {
			free(idx);
			json_decref(arr);
			return NULL;
		}
		idx[i] = (int64_t)out++;
	}
	free(idx);
	return arr;
}

static json_t *finding_json(const report_finding *f, const flame_opts *o)
{
	json_t *j, *caps = json_array(), *pts = json_array(), *sus = json_array();

	for (size_t i = 0; i < f->ncaps; i++)
		json_array_append_new(caps, json_pack("{s:I,s:s,s:o,s:o,s:o,s:o,s:o}", "id",
						      (json_int_t)f->caps[i].id, "side",
						      f->caps[i].current ? "current" : "baseline",
						      "captured_at", when(f->caps[i].at_us),
						      "release", str(f->caps[i].release), "host",
						      str(f->caps[i].host), "retention",
						      str(f->caps[i].retention), "blob_key",
						      str(f->caps[i].blob_key)));
	for (size_t i = 0; i < f->npoints; i++)
		json_array_append_new(
			pts, json_pack("{s:I,s:o,s:o,s:s}", "capture_id",
				       (json_int_t)f->points[i].capture_id, "captured_at",
				       when(f->points[i].at_us), "share", num(f->points[i].share),
				       "side", f->points[i].current ? "current" : "baseline"));
	for (size_t i = 0; i < f->nsuspects; i++)
		json_array_append_new(sus,
				      json_pack("{s:o,s:o,s:o}", "sha", str(f->suspects[i].sha),
						"author", str(f->suspects[i].author), "subject",
						str(f->suspects[i].subject)));
	/*
	 * A stored finding starts from its one schema (the same object
	 * analyze, nightly and post-deploy print); the report adds what only
	 * it knows. The keys set below overwrite nothing of that schema's but
	 * the ones they share, with the same values.
	 */
	if (f->canonical && (j = json_loads(f->canonical, 0, NULL))) {
		json_object_set_new(j, "status", str(f->status));
		json_object_set_new(j, "release", str(f->release));
		json_object_set_new(j, "commit", str(f->commit));
		goto extra;
	}
	j = json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "id",
		      f->id ? json_integer(f->id) : json_null(), "service", str(f->service), "type",
		      str(f->type), "function", str(f->function), "file", str(f->file), "direction",
		      str(f->direction), "severity", str(f->severity), "status", str(f->status),
		      "test", str(f->test), "release", str(f->release), "commit", str(f->commit));
	if (!j)
		goto fail;
	/* As in the one finding schema: a cost's values are its unit's, its changes relative. */
	json_object_set_new(j, "kind", json_string(f->cost_unit ? "cost" : "share"));
	json_object_set_new(j, "cost_unit", str(f->cost_unit));
	json_object_set_new(j, "baseline_share", num(f->baseline_share));
	json_object_set_new(j, "current_share", num(f->current_share));
	json_object_set_new(j, "delta", num(f->delta));
	json_object_set_new(j, "rel_delta", num(f->rel_delta));
	json_object_set_new(j, "ci_low", num(f->ci_low));
	json_object_set_new(j, "ci_high", num(f->ci_high));
	json_object_set_new(j, "p_value", num(f->p_value));
	json_object_set_new(j, "q_value", num(f->q_value));
	json_object_set_new(j, "baseline_captures", json_integer((json_int_t)f->baseline_captures));
	json_object_set_new(j, "current_captures", json_integer((json_int_t)f->current_captures));
extra:
	json_object_set_new(j, "captures", caps);
	json_object_set_new(j, "history", pts);
	json_object_set_new(j, "band",
			    f->has_band ? json_pack("{s:o,s:o}", "median", num(f->band_median),
						    "spread", num(f->band_spread))
					: json_null());
	json_object_set_new(j, "suspects", sus);
	json_object_set_new(j, "state", str(f->state && f->state[0] ? f->state : NULL));
	json_object_set_new(j, "fixed_by",
			    str(f->fixed_by && f->fixed_by[0] ? f->fixed_by : NULL));
	/* "incident" is the schema's id; the report adds which finding leads it. */
	json_object_set_new(j, "incident",
			    f->incident_id ? json_integer((json_int_t)f->incident_id)
					   : json_null());
	json_object_set_new(j, "incident_lead",
			    f->incident_lead ? json_integer((json_int_t)f->incident_lead)
					     : json_null());
	if (f->carried_from) /* as in the finding schema: absent when not carried */
		json_object_set_new(j, "carried_from", json_integer((json_int_t)f->carried_from));
	if (f->carried_from && f->carried_accepted)
		json_object_set_new(j, "accepted", json_true());
	{
		json_t *st = json_array();
		for (size_t k = 0; st && k < f->nhistory; k++)
			json_array_append_new(
				st,
				json_pack("{s:o,s:o,s:o,s:o}", "state", str(f->history[k].state),
					  "at", str(f->history[k].at), "run",
					  f->history[k].run ? json_integer(f->history[k].run)
							    : json_null(),
					  "reason", str(f->history[k].reason)));
		json_object_set_new(j, "states", st ? st : json_null());
	}
	json_object_set_new(j, "suspect_note", str(f->suspect_note));
	json_object_set_new(j, "flame", f->flame ? flame_json(f->flame, o) : json_null());
	/* Why the graph is missing or cut (unreadable, refused, skipped); null when whole. */
	json_object_set_new(j, "flame_note", str(f->flame_note));
	json_object_set_new(j, "baseline_captures_deleted",
			    json_integer((json_int_t)f->baseline_deleted));
	json_object_set_new(j, "current_captures_deleted",
			    json_integer((json_int_t)f->current_deleted));
	json_object_set_new(j, "captures_note", str(f->captures_note));
	if (f->flame_ref >= 0)
		json_object_set_new(j, "flame_same_as", json_integer(f->flame_ref));
	return j;
fail:
	json_decref(caps);
	json_decref(pts);
	json_decref(sus);
	return NULL;
}

int report_json(buf *b, const report *r, pr_error *err)
{
	json_t *root = NULL, *arr = NULL, *fails = NULL, *skips = NULL, *partial = NULL;
	size_t sev[4];
	const char *note;
	char *text = NULL;
	int rc = 0;

	report_severity_counts(r, sev);
	arr = json_array();
	fails = json_array();
	for (size_t i = 0; i < r->nfailures; i++)
		json_array_append_new(fails, json_string(r->failures[i]));
	skips = json_array();
	for (size_t i = 0; i < r->nskips; i++)
		json_array_append_new(skips, json_string(r->skips[i]));
	partial = json_array();
	for (size_t i = 0; i < r->npartial; i++)
		json_array_append_new(partial, json_string(r->partial[i]));
	for (size_t i = 0; i < r->nfindings; i++) {
		json_t *f = finding_json(&r->findings[i], &r->fopts);
		if (!f || json_array_append_new(arr, f) < 0) {
			rc = PR_ENOMEM;
			goto out;
		}
	}
	root = json_pack(
		"{s:i,s:s,s:o,s:o,s:o}", "schema_version", REPORT_SCHEMA_VERSION, "kind", r->kind,
		"title", str(r->title), "generated_at",
		when(r->generated_us ? r->generated_us : time_now_us()), "run",
		r->run_id ? json_pack("{s:I,s:o,s:o,s:o,s:o,s:o}", "id", (json_int_t)r->run_id,
				      "kind", str(r->run_kind), "status", str(r->run_status),
				      "judged_at", when(r->judged_us),
				      "started_at", when(r->started_us), "finished_at",
				      when(r->finished_us))
			  : json_null());
	if (!root) {
		rc = PR_ENOMEM;
		goto out;
	}
	json_object_set_new(root, "window", json_pack("{s:o,s:o}", "from", when(r->window_from_us),
						      "to", when(r->window_to_us)));
	json_object_set_new(root, "services", r->services_analysed >= 0
		? json_pack("{s:I,s:I}", "analysed", (json_int_t)r->services_analysed,
			    "failed", (json_int_t)(r->services_failed < 0 ? 0 : r->services_failed))
		: json_null());
	json_object_set_new(root, "failures", fails);
	json_object_set_new(root, "skipped", skips);
	/* Analysed, yet a part not judged (a type, a release, a post-deploy's verdict). */
	json_object_set_new(root, "partly_judged", partial);
	fails = skips = partial = NULL;
	json_object_set_new(root, "regressions_by_severity",
			    json_pack("{s:I,s:I,s:I,s:I}", "critical", (json_int_t)sev[3], "high",
				      (json_int_t)sev[2], "medium", (json_int_t)sev[1], "low",
				      (json_int_t)sev[0]));
	if (r->base_desc)
		json_object_set_new(
			root, "diff",
			json_pack("{s:s,s:s,s:I,s:I,s:o}", "base", r->base_desc, "target",
				  r->target_desc ? r->target_desc : "", "base_captures",
				  (json_int_t)r->base_ncaps, "target_captures",
				  (json_int_t)r->target_ncaps, "flame",
				  r->flame ? flame_json(r->flame, &r->fopts) : json_null()));
	/* With no finding, a run that left something unjudged says so here too. */
	note = r->note;
	if (!note && !r->nfindings && !report_judged_whole(r))
		note = report_empty_line(r);
	json_object_set_new(root, "note", str(note));
	json_object_set_new(root, "findings", arr);
	arr = NULL;
	/* The findings the run closed (fixed, rolled back, went away), with why. */
	if (!(arr = json_array())) {
		rc = PR_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < r->nclosed; i++) {
		const report_closed *c = &r->closed[i];
		if (json_array_append_new(
			    arr, json_pack("{s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "id",
					   (json_int_t)c->id, "service", str(c->service), "type",
					   str(c->type), "function", str(c->function), "release",
					   str(c->release), "direction", str(c->direction),
					   "severity", str(c->severity), "state", str(c->state),
					   "reason", str(c->reason))) < 0) {
			rc = PR_ENOMEM;
			goto out;
		}
	}
	json_object_set_new(root, "closed", arr);
	arr = NULL;
	if (!(text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER))) {
		rc = PR_ENOMEM;
		goto out;
	}
	if ((rc = buf_puts(b, text)) == 0)
		rc = buf_putc(b, '\n');
out:
	free(text);
	json_decref(root);
	json_decref(arr);
	json_decref(fails);
	json_decref(skips);
	json_decref(partial);
	if (rc < 0)
		return pr_error_set(err, rc, "cannot write the JSON report: %s",
				    rc == PR_ELIMIT ? "it exceeds its size limit"
						    : "out of memory");
	return 0;
}
