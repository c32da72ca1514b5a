/*
 * record.c: findings, evidence and pages in one transaction (see record.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/record.h"
#include "baselines/findings.h"
#include "common/buf.h"
#include "jobs/evidence.h"
#include "jobs/pager.h"
#include "jobs/reportdata.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* At most this many regressions of one release are matched on stacks. */
#define MAX_PATH_FINDINGS 64

/* The newest current capture of a finding (its capture_ids), 0 when none. */
static int64_t newest_current(const finding *f)
{
	json_t *o = json_loads(f->capture_ids ? f->capture_ids : "{}", 0, NULL);
	json_t *cur = json_object_get(o, "current");
	int64_t id = 0;

	if (json_array_size(cur))
		id = (int64_t)json_integer_value(json_array_get(cur, json_array_size(cur) - 1));
	json_decref(o);
	return id;
}

/* Append the link from -> to, said by `why`, to the arrays of *n links. */
static int add_link(int64_t **from, int64_t **to, const char ***why, size_t *n, int64_t a,
		    int64_t b, const char *w, pr_error *err)
{
	int64_t *nfrom = realloc(*from, (*n + 1) * sizeof(**from));
	int64_t *nto = nfrom ? realloc(*to, (*n + 1) * sizeof(**to)) : NULL;
	const char **nwhy = nto ? realloc(*why, (*n + 1) * sizeof(**why)) : NULL;

	if (nfrom)
		*from = nfrom;
	if (nto)
		*to = nto;
	if (!nwhy)
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	*why = nwhy;
	(*from)[*n] = a;
	(*to)[*n] = b;
	(*why)[*n] = w;
	(*n)++;
	return 0;
}

/*
 * Links between the regressions of one release that lie on one call path:
 * in the newest current capture, a stack that holds both functions (one
 * calls the other, directly or through others). A capture whose profile
 * cannot be read (retention took its blob) links nothing: a note, not an
 * error, since the findings stand on their own.
 */
static int call_path_links(int64_t **from, int64_t **to, const char ***why, size_t *n,
			   blob_store *bs, db *d, const profile_limits *lim,
			   const finding *const *fs, size_t nf, pr_error *err)
{
	reportdata_sel sel;
	reportdata_cap *caps = NULL;
	size_t ncaps = 0;
	profile *p = NULL;
	uint32_t fid[MAX_PATH_FINDINGS];
	uint64_t *pairs = NULL;
	int64_t id = newest_current(fs[0]);
	pr_error perr = PR_ERROR_INIT;
	int rc = 0;

	memset(&sel, 0, sizeof(sel));
	if (!id || !bs)
		return 0;
	sel.ids = &id;
	sel.nids = 1;
	sel.text = "finding captures";
	if (reportdata_sel_captures(&caps, &ncaps, d, &sel, &perr) < 0 || ncaps != 1 ||
	    reportdata_load_profile(&p, bs, &caps[0], lim, &perr) < 0) {
		if (perr.code == PR_EDB || perr.code == PR_ENOMEM)
			rc = pr_error_set(err, perr.code, "%s", perr.msg);
		goto out;
	}
	for (size_t k = 0; k < nf; k++) {
		fid[k] = UINT32_MAX;
		for (uint32_t j = 0; j < p->nfuncs && fid[k] == UINT32_MAX; j++)
			if (strcmp(p->funcs[j].name, fs[k]->function) == 0 &&
			    strcmp(p->funcs[j].file, fs[k]->file ? fs[k]->file : "") == 0)
				fid[k] = j;
	}
	/* pairs[a] has bit b when findings a and b met on a stack. */
	if (!(pairs = calloc(nf, sizeof(*pairs)))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t s = 0; s < p->nsamples; s++) {
		uint64_t on = 0;
		for (uint32_t i = 0; i < p->stack_len[s]; i++) {
			uint32_t fr = p->frames[p->stack_off[s] + i];
			for (size_t k = 0; k < nf; k++)
				if (fid[k] == fr)
					on |= 1ull << k;
		}
		for (size_t k = 0; k < nf && (on & (on - 1)); k++)
			if (on & (1ull << k))
				pairs[k] |= on & ~(1ull << k);
	}
	for (size_t a = 0; a < nf && rc == 0; a++)
		for (size_t b = a + 1; b < nf && rc == 0; b++)
			if (pairs[a] & (1ull << b))
				rc = add_link(from, to, why, n, fs[a]->id, fs[b]->id,
					      "one call path: the functions share stacks", err);
out:
	free(pairs);
	profile_free(p);
	reportdata_caps_free(caps, ncaps);
	return rc;
}

/* Whether f is a regression of this run that an incident may take in. */
static bool linkable(const finding *f, const char *kind)
{
	return f->id && !f->closed && f->direction == FINDING_REGRESSION &&
	       strcmp(f->kind, kind) == 0;
}

static bool same_release(const finding *f, const finding *g)
{
	return g->service_id == f->service_id && strcmp(g->type, f->type) == 0 &&
	       strcmp(g->current_release, f->current_release) == 0;
}

/*
 * The whole service's cost rising in a release where functions rose is
 * those functions' rise seen whole, not a cause of its own: it joins the
 * incident of `anchor` (the release's highest-ranked share regression) as
 * a member, and pages through it. Not when the anchor would not page and
 * the cost would: a member does not page beside its lead, and the cost
 * must not go unpaged. A cost alone (everything slower by one factor, no
 * function rose) stays a finding of its own, and pages on its own.
 */
static int cost_links(int64_t **from, int64_t **to, const char ***why, size_t *n, int64_t **cfrom,
		      int64_t **cto, const char ***cwhy, size_t *nc, const analysis *a,
		      const config *cfg, const finding *anchor, pr_error *err)
{
	static const char reason[] = "the whole service's cost rose with this function";
	bool joined = false;
	int rc = 0;

	for (size_t k = 0; k < a->ntests && a->tests[k].significant && rc == 0; k++) {
		const finding *c = &a->tests[k];
		if (!linkable(c, FINDING_KIND_COST) || !same_release(anchor, c) ||
		    (!pager_should_page(&cfg->paging, anchor) &&
		     pager_should_page(&cfg->paging, c)))
			continue;
		/*
		 * The anchor is linked to itself first, in a call of its own:
		 * an incident made of the two would be led by the lower id,
		 * which may be the cost's.
		 */
		if (!joined)
			rc = add_link(from, to, why, n, anchor->id, anchor->id, reason, err);
		joined = true;
		if (rc == 0)
			rc = add_link(cfrom, cto, cwhy, nc, c->id, anchor->id, reason, err);
	}
	return rc;
}

/*
 * Merge the run's regressions that share a call path into incidents, and
 * a rise of the whole service's cost into the incident of the functions
 * that rose with it.
 */
static int link_incidents(analysis *a, db *d, blob_store *bs, const config *cfg, pr_error *err)
{
	const finding **fs = NULL;
	int64_t *from = NULL, *to = NULL, *cfrom = NULL, *cto = NULL;
	const char **why = NULL, **cwhy = NULL;
	size_t n = 0, nc = 0;
	bool *done = calloc(a->ntests ? a->ntests : 1, sizeof(*done));
	int rc = 0;

	if (!done || !(fs = calloc(MAX_PATH_FINDINGS, sizeof(*fs)))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < a->ntests && a->tests[i].significant && rc == 0; i++) {
		const finding *f = &a->tests[i];
		size_t nf = 0;
		if (done[i] || !linkable(f, FINDING_KIND_SHARE))
			continue;
		for (size_t j = i; j < a->ntests && a->tests[j].significant; j++) {
			const finding *g = &a->tests[j];
			if (done[j] || !linkable(g, FINDING_KIND_SHARE) || !same_release(f, g))
				continue;
			done[j] = true;
			if (nf < MAX_PATH_FINDINGS)
				fs[nf++] = g;
		}
		if (nf >= 2)
			rc = call_path_links(&from, &to, &why, &n, bs, d, &cfg->limits, fs, nf,
					     err);
		if (rc == 0)
			rc = cost_links(&from, &to, &why, &n, &cfrom, &cto, &cwhy, &nc, a, cfg,
					fs[0], err);
	}
	if (rc == 0 && n)
		rc = findings_link(a, d, from, to, why, n, err);
	if (rc == 0 && nc)
		rc = findings_link(a, d, cfrom, cto, cwhy, nc, err);
out:
	free(done);
	free(fs);
	free(from);
	free(to);
	free(why);
	free(cfrom);
	free(cto);
	free(cwhy);
	return rc;
}

/*
 * The finding g is carried from, in *from: the oldest open finding of the
 * same rise in another release (findings_same_rise_open) whose page, its
 * own or its incident's, is pending or sent; 0 when none.
 */
static int carry_from(db *d, const finding *g, int64_t *from, pr_error *err)
{
	int64_t *ids = NULL, *holders = NULL, paged = 0, own = 0;
	size_t n = 0;
	int rc;

	*from = 0;
	/*
	 * Not one that holds its own page: an earlier release's finding that
	 * paged, seen again after a later release rose beyond it and paged
	 * too, was recorded as carried from that one.
	 */
	if (g->id && (rc = pager_first_paged(d, &g->id, 1, &own, err)) < 0)
		return rc;
	if (own)
		return 0;
	if ((rc = findings_same_rise_open(d, g, &ids, &holders, &n, err)) == 0 &&
	    (rc = pager_first_paged(d, holders, n, &paged, err)) == 0)
		for (size_t i = 0; i < n && paged && !*from; i++)
			if (holders[i] == paged)
				*from = ids[i];
	free(ids);
	free(holders);
	return rc;
}

/* Whether g is f or a regression of f's incident in this run. */
static bool of_incident(const finding *f, const finding *g)
{
	return g == f || (f->incident_id && g->incident_id == f->incident_id && !g->closed &&
			  g->direction == FINDING_REGRESSION);
}

/*
 * Whether lead f (a finding alone, or the lead of its incident) is
 * carried: f and every regression of its incident in this run that would
 * page on its own are carried from an earlier release's open, paged
 * finding. One that is not, a rise of its own, pages through f, and then
 * none of them is recorded as carried: the incident paged itself.
 */
static int carried(analysis *a, db *d, const config *cfg, finding *f, bool *all, pr_error *err)
{
	int rc;

	*all = true;
	for (size_t i = 0; i < a->ntests && a->tests[i].significant; i++) {
		finding *g = &a->tests[i];
		if (!of_incident(f, g) || g->accepted)
			continue;
		if ((rc = carry_from(d, g, &g->carried_from, err)) < 0)
			return rc;
		if (!g->carried_from && (g == f || pager_should_page(&cfg->paging, g)))
			*all = false;
	}
	for (size_t i = 0; i < a->ntests && a->tests[i].significant; i++) {
		finding *g = &a->tests[i];
		if (!of_incident(f, g) || g->accepted)
			continue;
		if (!*all)
			g->carried_from = 0;
		if ((rc = findings_set_carried(d, g->id, g->carried_from, err)) < 0)
			return rc;
	}
	return 0;
}

/*
 * The significant tests' places, the oldest finding first (by id; one not
 * stored last), or NULL when out of memory. Findings page in this order,
 * so that of several findings of one rise confirmed in one run the
 * oldest, the release that brought the rise, holds the page and the
 * others are carried from it (carry_from); in rank order a later
 * release's finding, ranked first, held it.
 */
static size_t *oldest_first(const analysis *a, size_t *n)
{
	size_t *order;

	for (*n = 0; *n < a->ntests && a->tests[*n].significant; (*n)++)
		;
	if (!(order = malloc((*n ? *n : 1) * sizeof(*order))))
		return NULL;
	/* Insertion sort, stable: a run has few findings, and ties keep rank order. */
	for (size_t k = 0; k < *n; k++) {
		uint64_t id = (uint64_t)a->tests[k].id - 1; /* 0, not stored, sorts last */
		size_t j = k;
		for (; j > 0 && (uint64_t)a->tests[order[j - 1]].id - 1 > id; j--)
			order[j] = order[j - 1];
		order[j] = k;
	}
	return order;
}

/* Whether a regression before tests[i] has the same captures. */
static bool same_captures_before(const analysis *a, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (a->tests[j].direction == FINDING_REGRESSION && a->tests[j].capture_ids &&
		    a->tests[i].capture_ids &&
		    strcmp(a->tests[j].capture_ids, a->tests[i].capture_ids) == 0)
			return true;
	return false;
}

/*
 * A finding resolved by hand (finding resolve) closes when it was
 * resolved, as one that went away or was fixed closes at the night that
 * closed it (closed_at_us): findings_store links a run judging a time at
 * or before that to the closed finding. Without it, a past night run
 * again after the resolve stored the regression as a new finding and
 * paged it again, though on-call had dealt with it. A run judging a
 * later time that finds the regression still stores and pages it anew.
 */
static int close_resolved(db *d, const analysis *a, pr_error *err)
{
	/* clang-format off */
	static const char sql[] =
		"update findings set detail = coalesce(detail, '{}'::jsonb)"
		" || jsonb_build_object('closed_at_us', " DB_TS_TO_US("resolved_at") ")"
		" where service_id = any($1::bigint[]) and status = 'resolved'"
		" and state = 'resolved' and resolved_at is not null"
		" and not coalesce(detail, '{}'::jsonb) ? 'closed_at_us'";
	/* clang-format on */
	buf ids = BUF_INIT;
	const char *p[1];
	int rc = buf_putc(&ids, '{');

	for (size_t i = 0; i < a->ntests && a->tests[i].significant && rc == 0; i++)
		rc = buf_printf(&ids, "%s%" PRId64, i ? "," : "", a->tests[i].service_id);
	if (rc == 0)
		rc = buf_putc(&ids, '}');
	if (rc < 0) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	p[0] = ids.ptr;
	if (ids.len > 2) /* not "{}": the run found something */
		rc = db_exec(d, NULL, err, "closing findings resolved by hand", sql, 1, p);
out:
	buf_release(&ids);
	return rc;
}

/* Whether tests[i] is a confirmed member of an incident, open, that pages through its lead. */
static bool incident_member(const finding *f)
{
	return f->incident_id && !f->closed && !f->accepted && f->direction == FINDING_REGRESSION &&
	       strcmp(f->state, "confirmed") == 0;
}

/* Whether such a test before tests[i] is of the same incident. */
static bool incident_before(const analysis *a, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (incident_member(&a->tests[j]) &&
		    a->tests[j].incident_id == a->tests[i].incident_id)
			return true;
	return false;
}

/* This run's test of stored finding `id`, or NULL. */
static const finding *test_of(const analysis *a, int64_t id)
{
	for (size_t j = 0; j < a->ntests && a->tests[j].significant; j++)
		if (a->tests[j].id == id)
			return &a->tests[j];
	return NULL;
}

/*
 * The members of `incident` (but `lead`) whose rise an earlier release's
 * open finding paged (carry_from), into *skip (*nskip of them; the caller
 * frees it): alone, they would not have paged. Worked out now, for this
 * run's members as this run judged them and the others as stored: a
 * stored carried_from is only as fresh as the last run in which the lead
 * paged.
 */
static int carried_members(const analysis *a, db *d, int64_t incident, int64_t lead, int64_t **skip,
			   size_t *nskip, pr_error *err)
{
	int64_t *ids = NULL;
	size_t n = 0;
	int rc;

	*nskip = 0;
	if ((rc = findings_incident_members(d, incident, lead, &ids, &n, err)) < 0)
		return rc;
	*skip = ids; /* filled in place: each kept id moves to a slot at or before its own */
	for (size_t k = 0; k < n && rc == 0; k++) {
		const finding *g = test_of(a, ids[k]);
		int64_t from = 0;
		if (g) {
			rc = carry_from(d, g, &from, err);
		} else {
			findings_meta meta;
			finding stored;
			if ((rc = findings_get(&stored, &meta, d, ids[k], err)) == 0) {
				rc = carry_from(d, &stored, &from, err);
				finding_clear(&stored);
			}
		}
		if (rc == 0 && from)
			ids[(*nskip)++] = ids[k];
	}
	return rc;
}

/*
 * The lead's page of `incident` at its worst member's severity, if that
 * is worse; a member carried from an earlier page is left out
 * (carried_members).
 */
static int page_lead(analysis *a, db *d, const config *cfg, int64_t incident, int64_t run_id,
		     pr_error *err)
{
	int64_t lead = 0, *skip = NULL;
	stats_severity sev = STATS_SEV_NONE;
	size_t nskip = 0;
	char *worst = NULL;
	findings_meta meta;
	finding l;
	int rc;

	if ((rc = findings_incident_lead(d, incident, &lead, err)) < 0 || !lead)
		return rc;
	if ((rc = carried_members(a, d, incident, lead, &skip, &nskip, err)) < 0)
		goto out;
	if ((rc = findings_incident_worst(d, incident, lead, skip, nskip, &sev, &worst, err)) < 0 ||
	    !worst)
		goto out;
	if ((rc = findings_get(&l, &meta, d, lead, err)) == 0) {
		if (sev > l.severity && strcmp(meta.status, "open") == 0 &&
		    strcmp(l.state, "confirmed") == 0 && l.direction == FINDING_REGRESSION &&
		    !l.carried_from)
			rc = pager_enqueue_incident(d, cfg, &l, sev, worst, run_id,
						    &a->pages_enqueued, err);
		finding_clear(&l);
	}
out:
	free(worst);
	free(skip);
	return rc;
}

int record_page_leads(analysis *a, db *d, const config *cfg, int64_t run_id, pr_error *err)
{
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < a->ntests && a->tests[i].significant; i++)
		if (incident_member(&a->tests[i]) && !incident_before(a, i))
			rc = page_lead(a, d, cfg, a->tests[i].incident_id, run_id, err);
	return rc;
}

/*
 * `lead`, the lead that a member of `incident` closed in this run passed
 * on, pages now when it is an open, confirmed regression that this run
 * did not judge (its own test pages below). That is a finding of an
 * earlier release: a later release fixed the old lead and not this
 * member. No run judges the earlier release again, so waiting for the
 * next run that sees it left a regression still in production without
 * a page until the new release's own finding was confirmed. A rise
 * another release's open finding paged is carried from it instead.
 */
static int page_passed_lead(analysis *a, db *d, const config *cfg, int64_t incident, int64_t lead,
			    int64_t run_id, pr_error *err)
{
	findings_meta meta;
	finding l;
	int64_t from = 0;
	int rc;

	if (!lead)
		return 0;
	/* Judged in this run, significant or not: as this run left it. */
	for (size_t i = 0; i < a->ntests; i++)
		if (a->tests[i].id == lead)
			return 0;
	if ((rc = findings_get(&l, &meta, d, lead, err)) < 0)
		return rc;
	if (strcmp(meta.status, "open") != 0 || strcmp(l.state, "confirmed") != 0 ||
	    l.direction != FINDING_REGRESSION || l.carried_from)
		goto out;
	/* Within a rise accepted by hand since: the new level, no page. */
	if ((rc = findings_carry_accepted(d, &l, err)) < 0 || l.accepted)
		goto out;
	if ((rc = carry_from(d, &l, &from, err)) < 0)
		goto out;
	if (from) {
		rc = findings_set_carried(d, l.id, from, err);
		goto out;
	}
	if ((rc = pager_enqueue_finding(d, cfg, &l, run_id, &a->pages_enqueued, err)) == 0)
		rc = page_lead(a, d, cfg, incident, run_id, err);
out:
	finding_clear(&l);
	return rc;
}

int record_findings_bs(analysis *a, db *d, blob_store *bs, int64_t run_id, const config *cfg,
		       bool page, pr_error *err)
{
	size_t enqueued0 = a->pages_enqueued, went0 = a->went_away, fixed0 = a->fixed;
	size_t carried0 = a->carried, accepted0 = a->accepted, cut0 = a->evidence_without_blob;
	size_t deleted0 = a->evidence_deleted;
	findings_closed closed = {0};
	size_t *order = NULL, nsig = 0;
	int rc;

	if ((rc = db_begin(d, err)) < 0)
		return rc;
	if ((rc = close_resolved(d, a, err)) < 0 || (rc = findings_store(a, d, run_id, err)) < 0 ||
	    (rc = findings_follow_up(&closed, a, d, run_id, err)) < 0 ||
	    (rc = link_incidents(a, d, bs, cfg, err)) < 0)
		goto out;
	/*
	 * What went away or was fixed: its pins lift and its pages resolve,
	 * whether or not this run pages. A run that closes a finding and
	 * leaves its page open (analyze without --page after a nightly that
	 * paged) had the alert stay open for good, and a trigger still
	 * pending went out later for a finding already closed.
	 */
	for (size_t i = 0; i < closed.n; i++) {
		int64_t unpinned = 0;
		if ((rc = evidence_release_finding(d, closed.ids[i], &unpinned, err)) < 0 ||
		    (rc = pager_enqueue_resolve(d, closed.ids[i], &a->pages_enqueued, NULL,
						err)) < 0)
			goto out;
	}
	/*
	 * An incident whose member closed passes its lead on now, though no
	 * member of it may be in this run (page_passed_lead).
	 */
	for (size_t i = 0; i < closed.n; i++) {
		int64_t incident = 0, lead = 0;
		if ((rc = findings_incident_of(d, closed.ids[i], &incident, &lead, err)) < 0 ||
		    (incident && (rc = findings_incident_lead(d, incident, &lead, err)) < 0) ||
		    (incident && page && lead != closed.ids[i] &&
		     (rc = page_passed_lead(a, d, cfg, incident, lead, run_id, err)) < 0))
			goto out;
	}
	a->went_away += closed.went_away;
	a->fixed += closed.fixed;
	/*
	 * Before any paging: a lead within an accepted rise passes its
	 * incident's lead on (findings_incident_lead), whichever comes first.
	 */
	for (size_t i = 0; i < a->ntests && a->tests[i].significant; i++) {
		finding *f = &a->tests[i];
		if (f->closed || f->direction != FINDING_REGRESSION || !f->id)
			continue;
		if ((rc = findings_carry_accepted(d, f, err)) < 0)
			goto out;
		a->accepted += f->accepted;
	}
	if (!(order = oldest_first(a, &nsig))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t k = 0; k < nsig; k++) {
		size_t i = order[k];
		finding *f = &a->tests[i];
		bool carry;
		/*
		 * Closed by a later night than this run's, or resolved by hand
		 * after it (close_resolved): as it was left. Within a rise
		 * accepted by hand: the new level, nothing to keep or page.
		 */
		if (f->closed || f->accepted)
			continue;
		/*
		 * Both are idempotent and use the stored finding's captures: a
		 * finding first stored without paging (analyze) pages when a
		 * later run that pages sees it again.
		 */
		if (f->direction == FINDING_REGRESSION) {
			int64_t cut = 0, gone = 0;
			if ((rc = evidence_pin_finding(d, f, a->opts.forensic_keep_us, &cut,
						       &gone, err)) < 0)
				goto out;
			if (f->look_capture_ids) {
				finding look = *f;
				int64_t lcut = 0, lgone = 0;
				look.capture_ids = f->look_capture_ids;
				if ((rc = evidence_pin_finding(d, &look, a->opts.forensic_keep_us,
							       &lcut, &lgone, err)) < 0)
					goto out;
				cut += lcut;
			}
			a->evidence_without_blob += (size_t)cut;
			/* A target's regressions share a baseline: what it lacks counts once. */
			if (gone && !same_captures_before(a, i))
				a->evidence_deleted += (size_t)gone;
		}
		/*
		 * Only a confirmed finding pages (a critical one is confirmed at
		 * once when the config says so): a candidate waits for the next
		 * look, and pages the night it is confirmed. An incident pages
		 * once, through its lead.
		 */
		if (!page || strcmp(f->state, "confirmed") != 0)
			continue;
		/*
		 * A member of an earlier run's incident that this run did not
		 * link again, or a lead this run's follow-up or link left
		 * behind: the lead is asked again.
		 */
		if (f->incident_id) {
			int64_t lead;
			if ((rc = findings_incident_lead(d, f->incident_id, &lead, err)) < 0)
				goto out;
			f->incident_lead = lead == f->id;
		}
		if (f->incident_id && !f->incident_lead)
			continue;
		if (pager_should_page(&cfg->paging, f)) {
			if ((rc = carried(a, d, cfg, f, &carry, err)) < 0)
				goto out;
			if (carry) {
				a->carried++;
				continue;
			}
		}
		if ((rc = pager_enqueue_finding(d, cfg, f, run_id, &a->pages_enqueued, err)) < 0)
			goto out;
	}
	if (page && (rc = record_page_leads(a, d, cfg, run_id, err)) < 0)
		goto out;
	rc = db_commit(d, err);
out:
	if (rc < 0) {
		db_rollback(d);
		a->pages_enqueued = enqueued0; /* rolled back with the findings */
		a->went_away = went0;
		a->fixed = fixed0;
		a->carried = carried0;
		a->accepted = accepted0;
		for (size_t i = 0; i < a->ntests; i++)
			a->tests[i].accepted = false;
		a->evidence_without_blob = cut0;
		a->evidence_deleted = deleted0;
	}
	findings_closed_release(&closed);
	free(order);
	return rc;
}
