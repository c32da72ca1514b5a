/*
 * escrules.c: the escalation rules as pure functions (see escrules.h).
 */
#include "jobs/escrules.h"
#include "stats/band.h"

#include <string.h>

#define S_US ((int64_t)1000000)

void escrules_rules_of(escrules_rules *out, const config_escalate *e,
		       const config_escalate_service *es)
{
	const config_escalate_plan *l1 = es ? &es->level1 : &e->level1;
	const config_escalate_plan *l2 = es ? &es->level2 : &e->level2;

	memset(out, 0, sizeof(*out));
	out->min_samples = e->min_samples;
	out->band_mads = e->band_mads;
	out->large_mads = e->large_mads;
	out->rel_floor = e->rel_floor;
	out->abs_floor = e->abs_floor;
	out->persist_runs = e->persist_runs;
	out->cooldown_s = e->cooldown_s;
	out->every_s[1] = l1->every_s;
	out->every_s[2] = l2->every_s;
	out->level2_window_s = l2->window_s;
}

int escrules_judge(escrules_judged *out, const escrules_rules *r, const double *history,
		   size_t n, double value)
{
	stats_band b;
	int rc;

	memset(out, 0, sizeof(*out));
	if (n == 0 || n < r->min_samples)
		return 0;
	rc = stats_band_of(&b, history, n, r->band_mads, r->rel_floor, r->abs_floor);
	if (rc == STATS_ENOMEM)
		return rc;
	if (rc < 0)
		return 0;
	out->judged = true;
	out->median = b.median;
	out->hi = b.hi;
	out->z = stats_band_z(&b, value);
	out->outside = value > b.hi;
	out->large = out->outside && out->z >= r->large_mads;
	return 0;
}

void escrules_reset(escrules_host *h)
{
	h->level = 0;
	h->level2_used = false;
	h->level2_until = 0;
	h->in_band_since = 0;
}

void escrules_opened(escrules_host *h, const escrules_rules *r, int level, int64_t now_us)
{
	h->level = level;
	h->last_capture = now_us;
	h->level2_used = level == 2;
	h->level2_until = level == 2 ? now_us + (int64_t)r->level2_window_s * S_US : 0;
}

void escrules_step(escrules_step_out *out, escrules_host *h, const escrules_rules *r,
		   const escrules_obs *obs, int64_t now_us)
{
	bool persists;

	memset(out, 0, sizeof(*out));
	/* The session ended (its hard expiry, or ended elsewhere): level 0 whatever the signal. */
	if (h->level > 0 && !obs->session_open) {
		out->ended = true;
		out->ended_from = h->level;
		escrules_reset(h);
	}
	if (h->level == 0 && obs->adopt_level > 0) {
		h->level = obs->adopt_level;
		out->adopted = true;
	}
	out->from = h->level;
	if (!obs->seen)
		return;
	if (obs->outside) {
		h->out_runs++;
		h->in_band_since = 0;
	} else {
		h->out_runs = 0;
		if (!h->in_band_since)
			h->in_band_since = now_us;
	}
	persists = obs->large || h->out_runs >= (int)r->persist_runs;
	if (h->level == 0) {
		if (obs->outside) {
			out->action = ESCRULES_OPEN;
			out->to = persists ? 2 : 1;
		}
		return;
	}
	if (!obs->outside && now_us - h->in_band_since >= (int64_t)r->cooldown_s * S_US) {
		out->action = ESCRULES_DEESCALATE;
		out->inside_us = now_us - h->in_band_since;
		escrules_reset(h);
		return;
	}
	if (h->level == 2 && now_us >= h->level2_until) {
		h->level = 1;
		out->lowered = true;
	} else if (h->level == 1 && obs->outside && !h->level2_used && persists) {
		h->level = 2;
		h->level2_used = true;
		h->level2_until = now_us + (int64_t)r->level2_window_s * S_US;
		out->raised = true;
	}
	if (!out->raised && h->last_capture &&
	    now_us - h->last_capture < (int64_t)r->every_s[h->level] * S_US)
		return;
	out->action = ESCRULES_CAPTURE;
}
