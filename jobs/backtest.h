/*
 * backtest.h: replay the nightly analysis night by night over stored
 * history, to learn which settings to trust before changing them.
 *
 * Each night is judged as the nightly job judges it (every enabled
 * service's captures in the night against its rolling baseline, one
 * false-discovery family a night), but nothing is stored: no baseline, no
 * finding, no run, no page. Known incidents (a service and a function or
 * a release, and when it started) say which regressions were real: the
 * result tells for each whether and on which night it would have been
 * found, and counts the regressions raised on every other service-night,
 * the false findings an on-call engineer would have been paged for.
 *
 * When the config has an escalate section, the escalation rules are
 * replayed too over the stored signal samples of the range
 * (jobs/escreplay.h): escalations, host-minutes and captures per
 * service, and for each incident whether an escalation started near it.
 */
#ifndef PR_BACKTEST_H
#define PR_BACKTEST_H

#include <stddef.h>
#include <stdint.h>

#include "jobs/job.h"

struct json_t;

typedef struct backtest_incident {
	char *service;
	char *function;          /* NULL: any function of the release */
	char *release;           /* NULL: any release */
	int64_t at_us;           /* when it started */
	char *where;             /* "line 3 of 'FILE'", for messages */
} backtest_incident;

/*
 * Read known incidents from JSON Lines text: one object a line with
 * "service" and "time" (ISO 8601) and at least one of "function" and
 * "release"; blank lines are skipped. A bad line is PR_EDATA naming
 * `name` and the line. *out (n entries) is freed with
 * backtest_incidents_free.
 */
int backtest_incidents_parse(backtest_incident **out, size_t *n, const char *text, size_t len,
			     const char *name, pr_error *err);
void backtest_incidents_free(backtest_incident *v, size_t n);

typedef struct backtest_opts {
	int64_t since_us, until_us;  /* the nights whose end falls in (since, until] */
	int64_t night_us;            /* a night's length; 0: 24 hours */
	const backtest_incident *incidents;
	size_t nincidents;
	/* the escalation replay: an escalation this near an incident counts; 0: the default */
	int64_t escalation_window_us;
} backtest_opts;

typedef struct backtest_result {
	size_t nights;
	size_t service_nights;        /* enabled service x night, analysed or not */
	size_t analysed;              /* service-nights with enough baseline to judge */
	size_t regressions;           /* regressions raised, over all nights */
	size_t false_regressions;     /* raised on a service-night no incident covers */
	size_t clean_service_nights;  /* analysed service-nights no incident covers */
	struct json_t *incidents;     /* per incident: found, night, finding */
	struct json_t *nights_json;   /* per night: at, analysed, regressions */
	struct json_t *escalation;    /* the escalation replay (jobs/escreplay.h) */
} backtest_result;

/*
 * Replay. PR_EUSAGE when the range is empty or longer than 366 nights.
 * Release *out with backtest_result_release, also after a failure.
 */
int backtest_run(backtest_result *out, const job_env *env, const backtest_opts *o,
		 pr_error *err);
void backtest_result_release(backtest_result *r);

#endif
