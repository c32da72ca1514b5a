/*
 * pager.h: the paging outbox and its sender.
 *
 * Enqueue: a finding that pages gets one 'trigger' row in `pages` per
 * target, written inside the caller's transaction (the one that stores
 * the finding), keyed by (dedup_key, target, event): a re-run, a retry or
 * a crash never sends a delivered page twice. A trigger row that is
 * 'failed' or 'cancelled' is put back to 'pending' by the next enqueue of
 * the same open regression (a permanent failure is retried once per run,
 * not lost). Resolving a finding cancels its unsent triggers and adds one
 * 'resolve' row per target its trigger may have reached: sent, or tried
 * at least once (a timeout can follow an accepted request).
 *
 * The key is unique among the rows in use (retired_at null). A new
 * finding of the same regression (a later night found it again after
 * the earlier finding was closed: went away, fixed or resolved by hand)
 * pages again under the same dedup key: the earlier finding's rows of
 * that key and target are set aside (retired_at set, kept as history; a
 * pending one cancelled) and the new finding gets a trigger, and later a
 * resolve, of its own. While a finding is open, it pages once.
 *
 * Flush: one row at a time, each in a short transaction that claims it
 * with SELECT ... FOR UPDATE SKIP LOCKED, sends it (pipeline/http.h) and
 * records the outcome before committing. Two flushes at once never send
 * the same row at the same time; a process killed mid-send leaves its row
 * pending (the transaction rolls back) and the next flush sends it again:
 * delivery is at least once, and the dedup key makes a repeat harmless at
 * PagerDuty and Alertmanager. 2xx is delivered; 429 and 5xx and network
 * errors and timeouts are retried with exponential backoff and jitter
 * (429's Retry-After is honoured, in seconds or as an HTTP date), at most
 * paging.max_attempts times per row per flush; any other status is a
 * permanent failure recorded with the response body (the row is
 * 'failed' until the next run finds the regression open again, or until
 * `profreg page retry`; meanwhile every unscoped flush reports it). The
 * time of the next attempt is stored, so a later flush respects it.
 *
 * Alertmanager forgets an alert at its endsAt, so each flush also
 * re-posts the alert of every trigger it delivered whose finding is
 * still open and whose service is enabled (endsAt = now +
 * paging.alert_hours); a disabled service's alerts lapse. That refresh creates no
 * row and is best effort: a failed refresh is counted and retried by the
 * next flush.
 *
 * Secrets are read at send time (jobs/secret.h), put only in the request
 * (PagerDuty's body, or an Authorization header, both wiped before they
 * are freed), and never stored, printed or logged; a response body is
 * stored with any copy of the secret masked and its words redacted
 * (pager_response_text).
 */
#ifndef PR_PAGER_H
#define PR_PAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "baselines/analysis.h"
#include "jobs/config.h"

/* "profreg-" and 64 hex digits, NUL-terminated. */
#define PAGER_KEY_MAX 73

/*
 * The dedup key of a regression: "profreg-" + hex SHA-256 of service,
 * profile type, function name, file and release (NUL-separated, so no two
 * different tuples meet). NULL file is "".
 */
void pager_dedup_key(char out[PAGER_KEY_MAX], const char *service, const char *type,
		     const char *function, const char *file, const char *release);

/* Whether a finding pages under `p`: a regression at or above min_severity. */
bool pager_should_page(const config_paging *p, const finding *f);

/*
 * Inside the caller's open transaction: enqueue the trigger of stored
 * finding `f` (f->id set) for every target config_page_targets names for
 * its service. *added (may be NULL) grows by the rows actually inserted
 * (0 for targets this finding, or another open finding of the same dedup
 * key, already paged; a trigger of a closed finding of the same key is
 * set aside and a new one inserted, see above). The report link is
 * <reports.base_url>/run-<run_id>.html#finding-<id> when base_url is set.
 */
int pager_enqueue_finding(db *d, const config *c, const finding *f, int64_t run_id,
			  size_t *added, pr_error *err);
/*
 * (*added also counts 'failed' or 'cancelled' triggers put back to
 * pending; those keep their last error and response until the next
 * attempt, and a pending resolve of the same key and target is cancelled.)
 */

/*
 * The same for `f` as the lead of its incident, whose member `worst`
 * (may be NULL) is confirmed at severity `worst_sev`: when that is above
 * f's own, the page goes at it and names the member, so that an incident
 * pages as its worst member would have paged alone (and a sent page is
 * escalated to it).
 */
int pager_enqueue_incident(db *d, const config *c, const finding *f, stats_severity worst_sev,
			   const char *worst, int64_t run_id, size_t *added, pr_error *err);

/*
 * The first of findings ids[0..n) with a trigger in use that is pending
 * or sent (its alert is, or is about to be, open), in *out; 0 when none.
 */
int pager_first_paged(db *d, const int64_t *ids, size_t n, int64_t *out, pr_error *err);

/*
 * Inside the caller's open transaction: for each trigger of finding
 * `finding_id`, cancel it when it is still pending, and enqueue a resolve
 * when it was sent or tried at least once (it may have arrived). Waits
 * for a flush that is sending one of them. *added and *cancelled (may be
 * NULL) are the counts.
 */
int pager_enqueue_resolve(db *d, int64_t finding_id, size_t *added, size_t *cancelled,
			  pr_error *err);

/*
 * Inside the caller's open transaction: a finding merged into incident
 * `incident_id` under another lead no longer pages on its own. Its
 * triggers that were never tried are cancelled (*cancelled, may be NULL,
 * counts them); one tried or sent stays as it is.
 */
int pager_cancel_member(db *d, int64_t finding_id, int64_t incident_id, size_t *cancelled,
			pr_error *err);

typedef struct pager_counts {
	size_t sent;            /* delivered by this flush */
	size_t failed;          /* refused for good by this flush */
	size_t retried;         /* attempts that failed and were rescheduled */
	size_t skipped;         /* rows not tried: unknown target or unreadable secret */
	size_t pending;         /* rows still pending after the flush (all of them) */
	size_t refreshed;       /* open Alertmanager alerts re-posted */
	size_t refresh_failed;
	size_t failed_open;     /* pages still owed after failing (all of them): 'failed'
				 * triggers whose finding is open, and failed_resolves */
	size_t failed_resolves; /* 'failed' resolves not set aside: the receiver's alert
				 * of a closed finding stays open */
	bool deadline_hit;      /* stopped at opts->deadline_ms with work left */
	char first_error[256];  /* first delivery problem, "" when none */
} pager_counts;

typedef struct pager_flush_opts {
	bool refresh;                /* re-post open Alertmanager alerts (unscoped flush only) */
	bool only_findings;          /* only rows of these findings (none: no row) */
	const int64_t *finding_ids;
	size_t nfinding_ids;
	uint32_t deadline_ms;        /* stop sending after this long; 0: no limit */
} pager_flush_opts;

/*
 * Send what is due (see above). Delivery problems are counted in *out,
 * recorded on their rows and are not errors; an error is a database
 * failure or running out of memory. `opts` may be NULL (refresh, every
 * row, no deadline). With a deadline, no request outlasts it (its
 * timeout is cut to what is left) and no backoff sleeps past it; what is
 * not sent by then stays pending for the next flush. An unscoped flush
 * that leaves failed triggers of open findings says so in first_error.
 */
int pager_flush(db *d, const config *c, const pager_flush_opts *opts, pager_counts *out,
		pr_error *err);

/*
 * The outbox, newest first, at most `limit` rows with status `state`
 * (NULL: any): *out is a JSON array of {id, state, event, target,
 * dedup_key, finding_id, attempts, http_status, last_error, response,
 * created_at, sent_at, next_attempt_at, retired_at, service, function,
 * severity, refreshes}, a key without a value left out (retired_at: when
 * the row was set aside for a later finding of the same regression). The
 * caller decrefs it.
 */
struct json_t;
int pager_list(struct json_t **out, db *d, const char *state, size_t limit, pr_error *err);

/* Count rows by status (NULL: every row). */
int pager_count(db *d, const char *status, size_t *out, pr_error *err);

/*
 * Count the failed pages still owed: 'failed' triggers whose finding is
 * still open, and 'failed' resolves not set aside (*resolves, also in
 * *out): a resolve refused for good left the receiver's alert open.
 */
int pager_count_failed_open(db *d, size_t *out, size_t *resolves, pr_error *err);

/*
 * Put failed rows back to pending (attempts 0, due now; last error and
 * response kept until the next attempt): row `id`, or with id 0 every
 * failed row. A trigger whose finding is no longer open, and a row set
 * aside for a later finding (an earlier finding's resolve would close
 * the later one's alert), are left alone (with an id: PR_EREFUSED); an
 * id that is not a failed row is PR_ENOTFOUND. Audit-logged. *n (may be
 * NULL) is the rows changed.
 */
int pager_retry_failed(db *d, int64_t id, size_t *n, pr_error *err);

/*
 * The response text to store for a body received from a target that
 * holds `secret` (may be NULL): every copy of the secret masked with '*'
 * first, then through redact_excerpt, at most `max` bytes: harmless
 * words kept, anything that may hold payment data or a secret (digits,
 * key=value, what follows "token", "card", ...) as "<N bytes>". NULL when
 * nothing is to be stored: an empty body, or a secret shorter than 8
 * bytes that appears in it (masking so short a string would say too
 * much about it). *nomem is set when NULL means out of memory. `body` is
 * changed in place (the masking).
 */
char *pager_response_text(char *body, const char *secret, size_t max, bool *nomem);

/*
 * Delay before retry number `attempt` (1 = after the first failure):
 * backoff_ms doubled each time up to max_backoff_ms, of which the upper
 * half is jitter drawn from `rnd`.
 */
uint32_t pager_backoff_ms(const config_paging *p, uint32_t attempt, uint32_t rnd);

/*
 * Parse a Retry-After value: delay-seconds or an HTTP-date (IMF-fixdate,
 * "Sun, 06 Nov 1994 08:49:37 GMT"), relative to `now_s`. 0 and
 * *delay_ms (never negative; capped at a day) on success, -1 when the
 * value is neither.
 */
int pager_retry_after(int64_t *delay_ms, const char *value, int64_t now_s);

#endif
