/*
 * escrules.h: the escalation rules of profreg escalate, as pure
 * functions over numbers: a host's value against its band, and the move
 * of the host's level from what one run saw. No database, no clock, no
 * I/O: escalate (jobs/escalate.h) calls them once a run with what it
 * read and stored, and the backtest's replay (jobs/escreplay.h) calls
 * them sample by sample over stored signal history, so that both follow
 * the same rules.
 *
 * A run, per host:
 *   the session is gone (its hard      level 0 ("ended"), whatever the
 *   expiry, or closed elsewhere)       signal does;
 *   level 0, outside the band          open a session at level 1, or 2
 *                                      when the crossing is large or has
 *                                      lasted persist_runs runs
 *                                      (ESCRULES_OPEN: admission decides,
 *                                      escrules_opened when admitted);
 *   level 1 or 2, back inside for      de-escalate: level 0
 *   cooldown_s                         (ESCRULES_DEESCALATE);
 *   level 2, its window over           level 1 ("lowered");
 *   level 1, outside persist_runs      level 2 for the level 2 window,
 *   runs in a row (or large), once     once per session ("raised");
 *   per session
 *   level 1 or 2                       a capture of the level's plan when
 *                                      the last is every_s old
 *                                      (ESCRULES_CAPTURE).
 */
#ifndef PR_ESCRULES_H
#define PR_ESCRULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jobs/config.h"

/* The rules' settings, from the config (escrules_rules_of). Times in seconds. */
typedef struct escrules_rules {
	size_t min_samples;        /* history before a host is judged */
	double band_mads, large_mads, rel_floor, abs_floor;
	uint32_t persist_runs;     /* runs outside before level 2 */
	uint32_t cooldown_s;       /* back inside this long before de-escalation */
	uint32_t every_s[3];       /* [1], [2]: a capture at that level at most this often */
	uint32_t level2_window_s;  /* how long level 2 lasts */
} escrules_rules;

/* The rules of service `es` (its level plans) under section `e`. */
void escrules_rules_of(escrules_rules *out, const config_escalate *e,
		       const config_escalate_service *es);

/* One value judged against its band. */
typedef struct escrules_judged {
	bool judged;    /* the history had min_samples values */
	bool outside;   /* above the band's upper edge */
	bool large;     /* outside by large_mads scales or more */
	double z;       /* scales above the median (judged only) */
	double median, hi;
} escrules_judged;

/*
 * Judge `value` against the band of history[0..n-1] (the host's inside
 * samples of the window; not modified). A history shorter than
 * min_samples judges nothing: not outside. STATS_ENOMEM (stats/stats.h)
 * when memory fails; 0 otherwise (a history the band refuses, such as a
 * non-finite value, judges nothing).
 */
int escrules_judge(escrules_judged *out, const escrules_rules *r, const double *history,
		   size_t n, double value);

/* A host's state as the rules see it (escalation_hosts holds it between runs). */
typedef struct escrules_host {
	int level;              /* 0, 1, 2 */
	int out_runs;           /* runs in a row outside the band */
	int64_t in_band_since;  /* back inside since (us; 0: outside, or level 0 never moved) */
	int64_t level2_until;   /* level 2: when its window is over (us) */
	int64_t last_capture;   /* the last capture asked for (us; 0: none) */
	bool level2_used;       /* level 2 is used once per session */
} escrules_host;

/* What one run saw of a host. */
typedef struct escrules_obs {
	bool seen;              /* a value of at least one signal */
	bool outside, large;    /* any signal outside its band; any large */
	bool session_open;      /* level > 0: the host's session is still open */
	int adopt_level;        /* level 0: the level of an open session of escalate's
				 * the state does not record (a run that died half-way),
				 * adopted; 0: none */
} escrules_obs;

typedef enum escrules_action {
	ESCRULES_NONE = 0,
	ESCRULES_OPEN,          /* open a session at out->to; escrules_opened if admitted */
	ESCRULES_DEESCALATE,    /* end the session: the host is back at level 0 */
	ESCRULES_CAPTURE,       /* a capture of the host's level's plan is due */
} escrules_action;

typedef struct escrules_step_out {
	bool ended;             /* the session was gone: the host went to level 0 */
	bool adopted;           /* obs->adopt_level was taken */
	int ended_from;         /* ended: the level it had */
	int from;               /* the level after ended and adopted, before any move */
	bool lowered, raised;   /* level 2 -> 1 (window over), 1 -> 2 */
	escrules_action action;
	int to;                 /* ESCRULES_OPEN: the level to open at (1 or 2) */
	int64_t inside_us;      /* ESCRULES_DEESCALATE: how long it had been back inside */
} escrules_step_out;

/*
 * One run at `now_us` for host `h` (updated in place) under `r`: the
 * level moves above, and what the caller is to do (out->action). Never
 * fails.
 */
void escrules_step(escrules_step_out *out, escrules_host *h, const escrules_rules *r,
		   const escrules_obs *obs, int64_t now_us);

/* A session opened at `level` for `h` at `now_us` was admitted, with its first capture. */
void escrules_opened(escrules_host *h, const escrules_rules *r, int level, int64_t now_us);

/* Back to level 0 (the session ended): the run counters stay. */
void escrules_reset(escrules_host *h);

#endif
