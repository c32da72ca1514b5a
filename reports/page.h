/*
 * page.h: what a page says, and the request bodies that carry it to
 * PagerDuty Events v2, Prometheus Alertmanager API v2 and a JSON webhook.
 *
 * Pure: no I/O, no database, no clock (times are passed in). A page only
 * ever carries a finding's service, profile type, function and file
 * names, release and numbers, plus a report link: nothing from a
 * profile's labels. Every name goes through page_clean_text first, so a
 * hostile function name (invalid UTF-8, control characters, megabytes of
 * text) can neither break the JSON nor bloat a page.
 */
#ifndef PR_REPORTS_PAGE_H
#define PR_REPORTS_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats/rank.h"

/* PagerDuty's limit on payload.summary, in bytes here (<= characters). */
#define PAGE_SUMMARY_MAX 1024
/* Longest name (function, file, service...) a page carries, in bytes. */
#define PAGE_NAME_MAX 512

/* What one page is about. Strings are borrowed; NULL: absent. */
typedef struct page_event {
	const char *dedup_key;
	const char *service, *team, *type, *function, *file, *release;
	const char *renamed_from;             /* the function's old name, or NULL */
	stats_severity severity;
	double baseline_share, current_share; /* fractions, 0.12 = 12%; a cost: its value */
	double ci_low, ci_high;               /* interval of the change, fraction (a
					       * cost: relative to the baseline) */
	const char *cost_unit;                /* NULL: a self share; else the whole-service
					       * cost's unit (reports/measure.h) */
	double q_value;
	int64_t finding_id, run_id;
	const char *link;                     /* report URL or NULL */
	int64_t created_us;                   /* when the finding paged */
	/*
	 * The severity the receiver was last sent for this finding, when the
	 * finding has since been escalated past it; STATS_SEV_NONE otherwise.
	 * A trigger with it says so, and an Alertmanager body also ends the
	 * alert of the old severity (severity is one of its labels).
	 */
	stats_severity escalated_from;
	/*
	 * The member of the finding's incident whose severity, above the
	 * finding's own, the page carries (the finding leads the incident);
	 * NULL otherwise.
	 */
	const char *incident_worst;
} page_event;

/* PagerDuty's severity for a class: critical, error, warning, info. */
const char *page_pd_severity(stats_severity s);

/*
 * A copy of `s` safe for a page: invalid UTF-8 becomes U+FFFD, control
 * characters a space, and the result is cut to at most `max` bytes on a
 * UTF-8 boundary ("..." marks a cut). The caller frees it; NULL when out
 * of memory. NULL `s` gives "".
 */
char *page_clean_text(const char *s, size_t max);

/*
 * The one-line summary ("[high] svc: cpu self share of fn rose 1.20% ->
 * 3.40% (+2.20pp, q 0.001) in release r"), at most PAGE_SUMMARY_MAX bytes,
 * cut on a UTF-8 boundary. The caller frees it; NULL when out of memory.
 */
char *page_summary(const page_event *e);

/* The event as stored in the outbox (pages.detail); a new reference. */
struct json_t *page_event_to_json(const page_event *e);

/*
 * Read an event back from page_event_to_json's object: the strings point
 * into `obj`, which must outlive *out. Missing strings are NULL, missing
 * numbers 0. Returns 0, or -1 when `obj` is not an object or has no
 * dedup_key.
 */
int page_event_from_json(page_event *out, struct json_t *obj);

/*
 * PagerDuty Events v2 body for POST /v2/enqueue: a trigger (with payload
 * and links) or, with `resolve`, a resolve event (routing_key, dedup_key,
 * event_action only). `routing_key` is put in the body and nowhere else.
 * `now_us` is the payload timestamp. A new reference; NULL on failure.
 */
struct json_t *page_pagerduty(const page_event *e, const char *routing_key, bool resolve,
			      int64_t now_us);

/*
 * Alertmanager API v2 body for POST /api/v2/alerts: an array of one alert
 * whose labels are alertname, service, function, severity, profile_type,
 * release; startsAt is when the finding paged; endsAt is `ends_us` (now +
 * alert_hours while firing, now to resolve). An escalated event has a
 * second alert, the same with its old severity, ended at `now_us`. A new
 * reference; NULL on failure.
 */
struct json_t *page_alertmanager(const page_event *e, int64_t now_us, int64_t ends_us);

/* The label value Alertmanager alerts from profreg carry as alertname. */
#define PAGE_ALERTNAME "ProfregRegression"

/*
 * The generic webhook body (docs/paging.md): version, event ("trigger" or
 * "resolve"), dedup_key, text (the summary, for chat tools), and the
 * finding's fields. A new reference; NULL on failure.
 */
struct json_t *page_webhook(const page_event *e, bool resolve, int64_t now_us);

/* RFC 3339 UTC with milliseconds ("2024-05-01T12:00:00.000Z"), 32 bytes. */
void page_time_format(char out[32], int64_t us);

#endif
