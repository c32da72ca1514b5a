/*
 * pager.c: the paging outbox and its sender (see pager.h), over pipeline/http.h.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/pager.h"
#include "jobs/reportdata.h"
#include "reports/report.h"
#include "jobs/secret.h"
#include "common/buf.h"
#include "common/redact.h"
#include "common/timeutil.h"
#include "pipeline/http.h"
#include "reports/page.h"

#include <inttypes.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* How much of a response is kept on the row, and of an error message. */
#define RESPONSE_MAX 2048
/*
 * How much of a response is read: a copy of the secret that starts in
 * the part kept must be whole to be masked before the cut.
 */
#define CAPTURE_MAX (RESPONSE_MAX + SECRET_MAX)
#define ERROR_MAX 512

static int oom(pr_error *err)
{
	return pr_error_set(err, PR_ENOMEM, "out of memory");
}

void pager_dedup_key(char out[PAGER_KEY_MAX], const char *service, const char *type,
		     const char *function, const char *file, const char *release)
{
	const char *parts[5] = {service, type, function, file, release};
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	bool ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1;

	for (size_t i = 0; ok && i < 5; i++) {
		const char *s = parts[i] ? parts[i] : "";
		ok = EVP_DigestUpdate(ctx, s, strlen(s) + 1) == 1; /* the NUL separates the parts */
	}
	ok = ok && EVP_DigestFinal_ex(ctx, md, &mdlen) == 1 && mdlen == 32;
	EVP_MD_CTX_free(ctx);
	/* Only allocation can fail here; a constant key then still pages, once. */
	if (!ok)
		memset(md, 0, sizeof(md));
	memcpy(out, "profreg-", 8);
	for (size_t i = 0; i < 32; i++)
		snprintf(out + 8 + 2 * i, 3, "%02x", md[i]);
}

bool pager_should_page(const config_paging *p, const finding *f)
{
	return f->significant && f->direction == FINDING_REGRESSION &&
	       f->severity != STATS_SEV_NONE && f->severity >= p->min_severity;
}

/* The team the database holds for service `id`, into *out (NULL: none; free it). */
static int db_team(db *d, int64_t id, char **out, pr_error *err)
{
	char sid[24];
	const char *p[1] = {sid};
	PGresult *res = NULL;
	int rc;

	*out = NULL;
	snprintf(sid, sizeof(sid), "%" PRId64, id);
	if ((rc = db_exec(d, &res, err, "reading a service's team",
			  "select team from services where id = $1::bigint and team <> ''", 1,
			  p)) < 0)
		return rc;
	if (db_rows(res) && !(*out = strdup(db_get_text(res, 0, 0))))
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
	db_result_free(res);
	return rc;
}

int pager_enqueue_finding(db *d, const config *c, const finding *f, int64_t run_id,
			  size_t *added, pr_error *err)
{
	return pager_enqueue_incident(d, c, f, STATS_SEV_NONE, NULL, run_id, added, err);
}

int pager_enqueue_incident(db *d, const config *c, const finding *f0, stats_severity worst_sev,
			   const char *worst, int64_t run_id, size_t *added, pr_error *err)
{
	/*
	 * The regression found again after its earlier finding was closed
	 * (went away, fixed, resolved by hand): that finding's rows of this
	 * key and target are set aside (retired_at; kept as the record of
	 * the earlier page), so that this finding's trigger and, later, its
	 * resolve get rows of their own. One still pending is cancelled: a
	 * trigger of a closed finding is for nothing, and a resolve not yet
	 * sent would close the alert this trigger opens or keeps open. FOR
	 * UPDATE waits for a flush sending the trigger, and for another
	 * process setting the rows aside first (then there is nothing left
	 * to do). Rows of this finding, or of another finding still open,
	 * stay where they are: the statement below deals with them.
	 */
	static const char retire_sql[] =
		"with old as (select p.id from pages p left join findings f on f.id = p.finding_id"
		"   where p.dedup_key = $1 and p.target = $2 and p.event = 'trigger'"
		"   and p.retired_at is null and p.finding_id is distinct from $3::bigint"
		"   and f.status is distinct from 'open' for update of p)"
		" update pages set retired_at = now(), updated_at = now(),"
		"   status = case when status = 'pending' then 'cancelled' else status end,"
		"   last_error = case when status <> 'pending' then last_error"
		"     else 'superseded by the trigger of finding ' || $3::bigint end"
		" where dedup_key = $1 and target = $2 and retired_at is null"
		"   and exists (select 1 from old)";
	/*
	 * A sent trigger is never touched (the dedup guarantee). A failed or
	 * cancelled one is armed again for this open finding: a permanent
	 * refusal (a bad key, a 404 while a URL was wrong) must not lose the
	 * page for good. Its last error stays until the next attempt. One
	 * the receiver had before (an escalation that failed: sent_at) keeps
	 * what it had as escalated_from, so the escalation still ends the old
	 * alert and says so. A resolve still pending for the same key would
	 * close the new alert: it is cancelled.
	 */
	static const char sql[] =
		"with up as (insert into pages (service_id, finding_id, dedup_key, "
		"target, event, run_id, detail)"
		"   values ($1::bigint, $2::bigint, $3, $4, 'trigger', "
		"nullif($5::bigint, 0), $6::jsonb)"
		"   on conflict (dedup_key, target, event) where retired_at is null"
		"   do update set status = 'pending', attempts = 0,"
		"   next_attempt_at = now(), updated_at = now(), finding_id = excluded.finding_id,"
		"   service_id = excluded.service_id, run_id = "
		"excluded.run_id, detail = excluded.detail || case when pages.sent_at is null"
		"   then '{}' else jsonb_build_object('escalated_from',"
		"   coalesce(pages.detail ->> 'escalated_from', pages.detail ->> 'severity')) end"
		"   where pages.status in ('failed', 'cancelled') returning dedup_key, target),"
		" r as (update pages set status = 'cancelled', updated_at = now(),"
		"   last_error = 'superseded by a new trigger'"
		"   where event = 'resolve' and status = 'pending' and retired_at is null"
		"   and (dedup_key, target) in (select dedup_key, target from up) returning 1)"
		" select count(*), (select count(*) from r) from up";
	/*
	 * A trigger of this finding not sent yet, whose finding was escalated
	 * since: it goes with the new figures. Its attempts stay: one may have
	 * arrived (a timeout after delivery), which its resolve and a merge
	 * into an incident go by.
	 */
	static const char refresh_sql[] =
		"update pages set detail = $3::jsonb || case when detail ? 'escalated_from'"
		"   then jsonb_build_object('escalated_from', detail -> 'escalated_from')"
		"   else '{}' end, run_id = nullif($4::bigint, 0),"
		" updated_at = now() where finding_id = $1::bigint and target = $2"
		" and event = 'trigger' and status = 'pending' and retired_at is null"
		" and detail ->> 'severity' is distinct from $3::jsonb ->> 'severity'";
	/*
	 * A trigger already sent, whose finding was escalated past the
	 * severity it went with: it goes again, saying so, to the same dedup
	 * key (PagerDuty updates its alert; Alertmanager, which knows an
	 * alert by its labels, gets the new severity's alert and the end of
	 * the old one). escalated_from is what the receiver holds. The row
	 * keeps sent_at: a resolve before the escalation goes out still
	 * resolves what was sent.
	 */
	static const char escalate_sql[] =
		"with r as (select '{none,low,medium,high,critical}'::text[] s)"
		" update pages set status = 'pending', attempts = 0, next_attempt_at = now(),"
		" updated_at = now(), last_error = null, run_id = nullif($4::bigint, 0),"
		" detail = $3::jsonb || jsonb_build_object('escalated_from', detail ->> 'severity')"
		" from r where finding_id = $1::bigint and target = $2"
		" and event = 'trigger' and status = 'sent' and retired_at is null"
		" and array_position(r.s, $3::jsonb ->> 'severity')"
		"   > coalesce(array_position(r.s, detail ->> 'severity'), 0)"
		" returning 1";
	finding lifted = *f0; /* borrows f0's strings */
	const finding *f = &lifted;
	char key[PAGER_KEY_MAX], sid[24], fid[24], rid[24], *detail = NULL, *team = NULL;
	const config_service *cs = config_service_find(c, f->service);
	char *const *targets;
	size_t ntargets;
	buf link = BUF_INIT;
	page_event e;
	json_t *obj = NULL;
	int rc = 0;

	if (worst && worst_sev > lifted.severity)
		lifted.severity = worst_sev;
	else
		worst = NULL;
	if (!pager_should_page(&c->paging, f))
		return 0;
	if ((rc = db_team(d, f->service_id, &team, err)) < 0)
		return rc;
	targets = config_page_targets(c, f->service, team, &ntargets);
	if (!ntargets)
		goto out;
	pager_dedup_key(key, f->service, f->type, f->function, f->file, f->current_release);
	if (c->reports.base_url && c->reports.base_url[0]) {
		size_t n = strlen(c->reports.base_url);
		const char *instance;
		char name[REPORT_RUN_NAME_MAX];
		if ((rc = db_instance(d, &instance, err)) < 0)
			goto out;
		report_run_name(name, run_id, instance);
		while (n && c->reports.base_url[n - 1] == '/')
			n--;
		/*
		 * The run's report holds every team's findings and function
		 * names; each team's own (reportdata_write_run_teams, written
		 * by every job that pages) holds only its services', with the
		 * same anchors. On-call follows the link: it names the team's.
		 * A service without a team is in no team's report.
		 */
		if (buf_printf(&link, "%.*s/%s", (int)n, c->reports.base_url, name) < 0 ||
		    (team &&
		     (buf_puts(&link, "-team-") < 0 || reportdata_file_piece(&link, team) < 0)) ||
		    buf_printf(&link, ".html#finding-%" PRId64, f->id) < 0) {
			rc = oom(err);
			goto out;
		}
	}
	memset(&e, 0, sizeof(e));
	e.dedup_key = key;
	e.service = f->service;
	e.team = cs && cs->team ? cs->team : team;
	e.type = f->type;
	e.function = f->function;
	e.renamed_from = f->renamed_from;
	e.file = f->cost_unit ? NULL : f->file; /* a cost's "file" is its unit */
	e.release = f->current_release;
	e.severity = f->severity;
	e.incident_worst = worst;
	e.baseline_share = f->baseline_share;
	e.current_share = f->current_share;
	e.ci_low = f->ci_low;
	e.ci_high = f->ci_high;
	e.q_value = f->q_value;
	e.cost_unit = f->cost_unit;
	e.finding_id = f->id;
	e.run_id = run_id;
	e.link = link.len ? link.ptr : NULL;
	e.created_us = time_now_us();
	if (!(obj = page_event_to_json(&e)) ||
	    !(detail = json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS))) {
		rc = pr_error_set(err, PR_ENOMEM, "cannot describe the page of finding %" PRId64,
				  f->id);
		goto out;
	}
	snprintf(sid, sizeof(sid), "%" PRId64, f->service_id);
	snprintf(fid, sizeof(fid), "%" PRId64, f->id);
	snprintf(rid, sizeof(rid), "%" PRId64, run_id);
	for (size_t i = 0; i < ntargets; i++) {
		const char *p[6] = {sid, fid, key, targets[i], rid, detail};
		const char *rp[3] = {key, targets[i], fid};
		const char *fp[4] = {fid, targets[i], detail, rid};
		PGresult *res = NULL;
		if ((rc = db_exec(d, NULL, err, "setting an earlier page aside", retire_sql, 3,
				  rp)) < 0 ||
		    (rc = db_exec(d, NULL, err, "refreshing a page not sent", refresh_sql, 4, fp)) <
			    0 ||
		    (rc = db_exec(d, &res, err, "escalating a sent page", escalate_sql, 4, fp)) < 0)
			goto out;
		if (added)
			*added += (size_t)db_rows(res);
		db_result_free(res);
		res = NULL;
		if ((rc = db_exec(d, &res, err, "enqueueing a page", sql, 6, p)) < 0)
			goto out;
		if (added)
			*added += (size_t)db_get_i64(res, 0, 0);
		db_result_free(res);
	}
out:
	json_decref(obj);
	free(detail);
	free(team);
	buf_release(&link);
	return rc;
}

int pager_first_paged(db *d, const int64_t *ids, size_t n, int64_t *out, pr_error *err)
{
	static const char sql[] =
		"select coalesce((select u.id from unnest($1::bigint[]) with ordinality u(id, k)"
		"   where exists (select 1 from pages p where p.finding_id = u.id"
		"     and p.event = 'trigger' and p.retired_at is null"
		"     and (p.status in ('pending', 'sent') or p.sent_at is not null))"
		"   order by u.k limit 1), 0)";
	buf lit = BUF_INIT;
	const char *p[1];
	PGresult *res = NULL;
	int rc = buf_putc(&lit, '{');

	*out = 0;
	if (n == 0)
		goto out;
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = buf_printf(&lit, "%s%" PRId64, i ? "," : "", ids[i]);
	if (rc < 0 || (rc = buf_putc(&lit, '}')) < 0) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	p[0] = lit.ptr;
	if ((rc = db_exec(d, &res, err, "looking for the page of an earlier finding", sql, 1, p)) <
	    0)
		goto out;
	*out = db_get_i64(res, 0, 0);
out:
	db_result_free(res);
	buf_release(&lit);
	return rc;
}

int pager_enqueue_resolve(db *d, int64_t finding_id, size_t *added, size_t *cancelled,
			  pr_error *err)
{
	/*
	 * FOR UPDATE (without SKIP LOCKED) waits for a flush sending one of
	 * these triggers, so its outcome is known before deciding: a sent
	 * trigger needs a resolve, a pending one is simply never sent.
	 */
	/*
	 * A pending trigger that was tried may have arrived (a timeout after
	 * the target accepted it, a process killed after the send): it is
	 * cancelled AND gets a resolve, which is harmless where the trigger
	 * never arrived. A resolve row left from an earlier resolve of the
	 * same key is armed again only when the trigger was sent (or tried)
	 * since it: a regression paged again. Resolving a finding twice (by
	 * hand, then --accept) delivered the resolve twice.
	 */
	static const char sql[] =
		"with t as (select id, service_id, dedup_key, target, "
		"status, attempts, detail, run_id, sent_at"
		"   from pages where finding_id = $1::bigint and event = "
		"'trigger' and retired_at is null order by id for update),"
		" c as (update pages set status = 'cancelled', updated_at = now(),"
		"   last_error = 'finding resolved before the page was sent'"
		"   where id in (select id from t where status = 'pending') returning 1),"
		" i as (insert into pages (service_id, finding_id, dedup_key, "
		"target, event, run_id, detail)"
		"   select service_id, $1::bigint, dedup_key, target, "
		"'resolve', run_id, detail from t"
		"   where status = 'sent' or attempts > 0 or sent_at is not null"
		"   on conflict (dedup_key, target, event) where retired_at is null"
		"   do update set status = 'pending', attempts = 0,"
		"   next_attempt_at = now(), updated_at = now(), finding_id = excluded.finding_id,"
		"   run_id = excluded.run_id, detail = excluded.detail"
		"   where pages.status <> 'pending' and (pages.sent_at is null"
		"     or exists (select 1 from t where t.dedup_key = pages.dedup_key"
		"       and t.target = pages.target and (t.sent_at > pages.sent_at"
		"       or (t.status = 'pending' and t.attempts > 0))))"
		"   returning 1)"
		" select (select count(*) from i), (select count(*) from c)";
	char fid[24];
	const char *p[1] = {fid};
	PGresult *res = NULL;
	int rc;

	snprintf(fid, sizeof(fid), "%" PRId64, finding_id);
	if ((rc = db_exec(d, &res, err, "enqueueing resolve events", sql, 1, p)) < 0)
		return rc;
	if (added)
		*added += (size_t)db_get_i64(res, 0, 0);
	if (cancelled)
		*cancelled += (size_t)db_get_i64(res, 0, 1);
	db_result_free(res);
	return 0;
}

int pager_cancel_member(db *d, int64_t finding_id, int64_t incident_id, size_t *cancelled,
			pr_error *err)
{
	/*
	 * Never tried, never sent: nothing can have arrived, so nothing needs
	 * a resolve. An escalation waiting to go (pending, 0 attempts, sent
	 * before) is a page the receiver has: the escalation is not sent (the
	 * incident pages once, through its lead), and the row is what was
	 * delivered again, at the severity the receiver has, so that it is
	 * refreshed and resolved as it was.
	 */
	static const char sql[] =
		"with c as (update pages set status = 'cancelled', updated_at = now(),"
		"   last_error = 'merged into incident ' || $2 || '; its lead pages for it'"
		"   where finding_id = $1::bigint and event = 'trigger' and status = 'pending'"
		"   and attempts = 0 and sent_at is null returning 1),"
		" e as (update pages set status = 'sent', updated_at = now(),"
		"   detail = jsonb_set(detail - 'escalated_from', '{severity}',"
		"     detail -> 'escalated_from'),"
		"   last_error = 'escalation merged into incident ' || $2"
		"     || '; its lead pages for it'"
		"   where finding_id = $1::bigint and event = 'trigger' and status = 'pending'"
		"   and attempts = 0 and sent_at is not null and detail ? 'escalated_from')"
		" select count(*) from c";
	char fid[24], iid[24];
	const char *p[2] = {fid, iid};
	PGresult *res = NULL;
	int rc;

	snprintf(fid, sizeof(fid), "%" PRId64, finding_id);
	snprintf(iid, sizeof(iid), "%" PRId64, incident_id);
	if ((rc = db_exec(d, &res, err, "cancelling an incident member's page", sql, 2, p)) < 0)
		return rc;
	if (cancelled)
		*cancelled += (size_t)db_get_i64(res, 0, 0);
	db_result_free(res);
	return 0;
}

int pager_count(db *d, const char *status, size_t *out, pr_error *err)
{
	static const char sql[] =
		"select count(*) from pages where $1::text is null or status = $1";
	const char *p[1] = {status};
	PGresult *res = NULL;
	int rc;

	if ((rc = db_exec(d, &res, err, "counting pages", sql, 1, p)) < 0)
		return rc;
	*out = (size_t)db_get_i64(res, 0, 0);
	db_result_free(res);
	return 0;
}

int pager_count_failed_open(db *d, size_t *out, size_t *resolves, pr_error *err)
{
	static const char sql[] =
		"select (select count(*) from pages p join findings f on f.id = p.finding_id"
		"   where p.event = 'trigger' and p.status = 'failed' and f.status = 'open'),"
		" (select count(*) from pages p where p.event = 'resolve' and p.status = 'failed'"
		"   and p.retired_at is null)";
	PGresult *res = NULL;
	int rc;

	if ((rc = db_exec(d, &res, err, "counting failed pages", sql, 0, NULL)) < 0)
		return rc;
	*resolves = (size_t)db_get_i64(res, 0, 1);
	*out = (size_t)db_get_i64(res, 0, 0) + *resolves;
	db_result_free(res);
	return 0;
}

int pager_retry_failed(db *d, int64_t id, size_t *n, pr_error *err)
{
	/* A trigger of a finding resolved since would page for nothing: never re-armed. */
	static const char sql[] =
		"with u as (update pages p set status = 'pending', attempts = "
		"0, next_attempt_at = now(),"
		"   updated_at = now()"
		"   where p.status = 'failed' and ($1::bigint = 0 or p.id = $1::bigint)"
		"   and p.retired_at is null"
		"   and (p.event = 'resolve' or exists (select 1 from findings f"
		"        where f.id = p.finding_id and f.status = 'open'))"
		"   returning p.id)"
		" select count(*), coalesce((select string_agg(id::text, ',' order by id)"
		"   from (select id from u order by id limit 100) x), '') from u";
	static const char why_sql[] =
		"select p.status, p.event, coalesce(f.status, ''), p.retired_at is not null"
		" from pages p"
		" left join findings f on f.id = p.finding_id where p.id = $1::bigint";
	char sid[24], object[48];
	const char *p[1] = {sid};
	PGresult *res = NULL;
	buf detail = BUF_INIT;
	size_t changed;
	int rc;

	snprintf(sid, sizeof(sid), "%" PRId64, id);
	if ((rc = db_begin(d, err)) < 0)
		return rc;
	if ((rc = db_exec(d, &res, err, "retrying failed pages", sql, 1, p)) < 0)
		goto out;
	changed = (size_t)db_get_i64(res, 0, 0);
	if (id && !changed) {
		db_result_free(res);
		res = NULL;
		if ((rc = db_exec(d, &res, err, "reading a page", why_sql, 1, p)) < 0)
			goto out;
		if (db_rows(res) == 0)
			rc = pr_error_set(err, PR_ENOTFOUND, "page %" PRId64 " does not exist", id);
		else if (strcmp(db_get_text(res, 0, 0), "failed") != 0)
			rc = pr_error_set(err, PR_ENOTFOUND, "page %" PRId64 " is %s, not failed",
					  id, db_get_text(res, 0, 0));
		else if (db_get_bool(res, 0, 3))
			rc = pr_error_set(err, PR_EREFUSED,
					  "page %" PRId64 " belongs to an earlier finding of a"
					  " regression that paged again since", id);
		else
			rc = pr_error_set(err, PR_EREFUSED,
					  "page %" PRId64 " is the trigger of a finding"
					  " that is no longer open", id);
		goto out;
	}
	if (changed) {
		if (id)
			snprintf(object, sizeof(object), "page:%" PRId64, id);
		else
			snprintf(object, sizeof(object), "pages:failed");
		/* The first 100 ids: enough to find them in `page list`. */
		if (buf_printf(&detail, "{\"count\":%zu,\"pages\":[%s]}", changed,
			       db_get_text(res, 0, 1)) < 0) {
			rc = oom(err);
			goto out;
		}
		if ((rc = db_audit(d, "page-retry", object, detail.ptr, err)) < 0)
			goto out;
	}
	if ((rc = db_commit(d, err)) < 0)
		goto out;
	if (n)
		*n = changed;
out:
	if (rc < 0)
		db_rollback(d);
	db_result_free(res);
	buf_release(&detail);
	return rc;
}

uint32_t pager_backoff_ms(const config_paging *p, uint32_t attempt, uint32_t rnd)
{
	uint64_t d = p->backoff_ms, half;

	for (uint32_t i = 1; i < attempt && d < p->max_backoff_ms; i++)
		d *= 2;
	if (d > p->max_backoff_ms)
		d = p->max_backoff_ms;
	/* Equal jitter: never less than half the delay, never more than all. */
	half = d / 2;
	return (uint32_t)(d - half + (half ? rnd % (half + 1) : 0));
}

int pager_retry_after(int64_t *delay_ms, const char *value, int64_t now_s)
{
	return http_retry_after(delay_ms, value, now_s);
}

/* ---------------------------------------------------------------- sending */

/*
 * POST `body` as JSON to `url`, with `bearer` (may be NULL) in an
 * Authorization header; `body_secret`: the body holds the secret
 * (PagerDuty's routing key). Returns what http_request returns; *out, set up
 * by the caller (http_response_init), is the caller's to release either
 * way. Only the head of the response is kept (CAPTURE_MAX). `cap_ms`
 * (0: none) cuts both timeouts, for a flush with a deadline.
 */
static int send_json(http_response *out, const char *url, const char *body, const char *bearer,
		     bool body_secret, const config_paging *p, int64_t cap_ms, pr_error *err)
{
	static const char *const headers[] = {"Content-Type: application/json",
					      "Accept: application/json", NULL};
	buf auth = BUF_INIT;
	http_req req;
	int rc = 0;

	memset(&req, 0, sizeof(req));
	req.method = HTTP_POST;
	req.url = url;
	req.headers = headers;
	req.body = body;
	req.body_len = strlen(body);
	req.body_secret = body_secret;
	req.connect_timeout_ms = p->connect_timeout_ms;
	req.timeout_ms = p->timeout_ms;
	if (cap_ms > 0 && (req.timeout_ms == 0 || cap_ms < (int64_t)req.timeout_ms))
		req.timeout_ms = (uint32_t)cap_ms;
	if (cap_ms > 0 && (req.connect_timeout_ms == 0 || cap_ms < (int64_t)req.connect_timeout_ms))
		req.connect_timeout_ms = (uint32_t)cap_ms;
	/* Keep the head, and read the rest so that a big answer is not an error. */
	req.max_body = CAPTURE_MAX;
	req.prefix_only = true;
	if (bearer) {
		/* One allocation (an empty buffer): no realloc leaves a copy of the token. */
		if (buf_printf(&auth, "Bearer %s", bearer) < 0) {
			rc = oom(err);
			goto out;
		}
		req.secret_header = "Authorization";
		req.secret_value = auth.ptr;
	}
	rc = http_request(out, &req, err);
out:
	secret_wipe(auth.ptr, auth.len);
	buf_release(&auth);
	return rc;
}

/* A secret shorter than this is not masked in a response: the response is dropped. */
#define MASK_MIN 8

char *pager_response_text(char *body, const char *secret, size_t max, bool *nomem)
{
	size_t n = secret ? strlen(secret) : 0;
	char *hit, *out;

	*nomem = false;
	if (!body || !body[0])
		return NULL;
	if (n && strstr(body, secret)) {
		if (n < MASK_MIN)
			return NULL;
		/* Mask the whole body first: a copy across the cut must not leave its head. */
		while ((hit = strstr(body, secret)))
			memset(hit, '*', n);
	}
	/*
	 * A target may echo the page, or another sender's data, back: its
	 * words are kept, the rest only by length (redact_excerpt).
	 */
	if (!(out = malloc(max + 1))) {
		*nomem = true;
		return NULL;
	}
	redact_excerpt(out, max + 1, body, strlen(body));
	return out;
}

typedef struct target_state {
	const config_target *t;
	char *secret;
	bool read;
	pr_error err;
} target_state;

typedef struct flush_state {
	db *d;
	const config *c;
	target_state *targets;
	size_t ntargets;
	int64_t *done;           /* rows this flush is finished with */
	size_t ndone, capdone;
	int64_t *tried_id;       /* attempts this flush made, per row */
	uint32_t *tried_n;
	size_t ntried, captried;
	uint64_t rng;
	pager_counts *out;
	const char *scope;       /* bigint[] literal of the findings to flush; NULL: all */
	double deadline;         /* time_mono() to stop at; 0: none */
} flush_state;

/* Milliseconds left before the deadline: -1 without one, 0 when it passed. */
static int64_t left_ms(const flush_state *s)
{
	double left;

	if (s->deadline <= 0)
		return -1;
	left = (s->deadline - time_mono()) * 1000;
	return left <= 0 ? 0 : left > 1 ? (int64_t)left : 1;
}

static uint32_t next_rand(flush_state *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return (uint32_t)(s->rng >> 16);
}

static int mark_done(flush_state *s, int64_t id)
{
	if (s->ndone == s->capdone) {
		size_t cap = s->capdone ? 2 * s->capdone : 64;
		int64_t *p = realloc(s->done, cap * sizeof(*p));
		if (!p)
			return PR_ENOMEM;
		s->done = p;
		s->capdone = cap;
	}
	s->done[s->ndone++] = id;
	return 0;
}

/* Attempts made on row `id` in this flush, after counting one more. */
static int count_try(flush_state *s, int64_t id, uint32_t *n)
{
	for (size_t i = 0; i < s->ntried; i++)
		if (s->tried_id[i] == id) {
			*n = ++s->tried_n[i];
			return 0;
		}
	if (s->ntried == s->captried) {
		size_t cap = s->captried ? 2 * s->captried : 64;
		int64_t *a = realloc(s->tried_id, cap * sizeof(*a));
		uint32_t *b;
		if (!a)
			return PR_ENOMEM;
		s->tried_id = a;
		if (!(b = realloc(s->tried_n, cap * sizeof(*b))))
			return PR_ENOMEM;
		s->tried_n = b;
		s->captried = cap;
	}
	s->tried_id[s->ntried] = id;
	s->tried_n[s->ntried++] = *n = 1;
	return 0;
}

static void note_error(flush_state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note_error(flush_state *s, const char *fmt, ...)
{
	va_list ap;

	if (s->out->first_error[0])
		return;
	va_start(ap, fmt);
	vsnprintf(s->out->first_error, sizeof(s->out->first_error), fmt, ap);
	va_end(ap);
}

/*
 * Append a note that must be seen whatever went before it: the first
 * error is cut to make room.
 */
static void add_note(pager_counts *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_note(pager_counts *out, const char *fmt, ...)
{
	size_t n = strlen(out->first_error);
	va_list ap;

	if (n > 100) {
		memcpy(out->first_error + 97, "...", 4);
		n = 100;
	}
	if (n)
		n += (size_t)snprintf(out->first_error + n, sizeof(out->first_error) - n, "; ");
	va_start(ap, fmt);
	vsnprintf(out->first_error + n, sizeof(out->first_error) - n, fmt, ap);
	va_end(ap);
}

/* The target's state, its secret read on first use; NULL when not configured. */
static target_state *target_get(flush_state *s, const char *name)
{
	for (size_t i = 0; i < s->ntargets; i++) {
		target_state *t = &s->targets[i];
		if (strcmp(t->t->name, name) != 0)
			continue;
		if (!t->read) {
			t->read = true;
			if (secret_read(&t->secret, t->t->secret_env, t->t->secret_file, &t->err) ==
				    0 &&
			    !t->secret && t->t->kind == CONFIG_TARGET_PAGERDUTY)
				pr_error_set(&t->err, PR_EREFUSED, "no routing key configured");
		}
		return t;
	}
	return NULL;
}

/* The request of one row: URL and body. The body may hold the secret. */
static int build_request(buf *url, char **body, const target_state *ts, const char *event,
			 const char *detail, const config_paging *p, pr_error *err)
{
	const config_target *t = ts->t;
	bool resolve = strcmp(event, "resolve") == 0;
	bool refresh = strcmp(event, "refresh") == 0;
	json_t *obj = json_loads(detail, 0, NULL), *req = NULL;
	int64_t now = time_now_us();
	page_event e;
	const char *base = t->url;
	size_t n;
	int rc = 0;

	if (!obj || page_event_from_json(&e, obj) < 0) {
		rc = pr_error_set(err, PR_EDATA, "the stored page is not a page event");
		goto out;
	}
	/* The escalation was delivered with its first send; a re-post is the alert alone. */
	if (refresh)
		e.escalated_from = STATS_SEV_NONE;
	if (t->kind == CONFIG_TARGET_PAGERDUTY && !base)
		base = "https://events.pagerduty.com";
	if (!base) {
		rc = pr_error_set(err, PR_EUSAGE, "no url configured");
		goto out;
	}
	n = strlen(base);
	if (t->kind != CONFIG_TARGET_WEBHOOK)
		while (n && base[n - 1] == '/')
			n--;
	switch (t->kind) {
	case CONFIG_TARGET_PAGERDUTY:
		req = page_pagerduty(&e, ts->secret, resolve, now);
		rc = buf_printf(url, "%.*s/v2/enqueue", (int)n, base);
		break;
	case CONFIG_TARGET_ALERTMANAGER:
		req = page_alertmanager(
			&e, now, resolve ? now : now + (int64_t)p->alert_hours * 3600 * 1000000);
		rc = buf_printf(url, "%.*s/api/v2/alerts", (int)n, base);
		break;
	default:
		req = page_webhook(&e, resolve, now);
		rc = buf_puts(url, base);
		break;
	}
	if (rc < 0 || !req || !(*body = json_dumps(req, JSON_COMPACT))) {
		rc = pr_error_set(err, PR_ENOMEM, "cannot build the request");
		goto out;
	}
out:
	json_decref(obj);
	json_decref(req);
	return rc;
}

static void body_free(char *body)
{
	secret_free(body);
}

/* One text parameter, NULL when empty. */
static const char *nz(const char *s)
{
	return s && s[0] ? s : NULL;
}

typedef enum outcome { OUT_SENT, OUT_RETRY, OUT_FAILED } outcome;

/*
 * What to do after a request that returned `rc` (its message in `herr`);
 * fills `why` with a one-line reason.
 */
static outcome classify(const http_response *r, int rc, const pr_error *herr,
			const config_paging *p, char *why, size_t n)
{
	if (rc < 0) {
		if (r->timed_out)
			snprintf(why, n, "no answer within %" PRIu32 " ms (timeout)",
				 p->timeout_ms);
		else
			snprintf(why, n, "network error: %.480s", herr->msg);
		return OUT_RETRY;
	}
	if (r->status >= 200 && r->status < 300) {
		why[0] = '\0';
		return OUT_SENT;
	}
	snprintf(why, n, "HTTP %ld", r->status);
	if (r->status == 429 || r->status == 408 || r->status >= 500)
		return OUT_RETRY;
	if (r->status >= 300 && r->status < 400)
		snprintf(why, n, "HTTP %ld: redirects are not followed", r->status);
	return OUT_FAILED;
}

/*
 * Claim the next due row and send it. *idle_ms is set when nothing is due
 * yet (how long until something is), -1 when nothing is left to do.
 */
static int flush_one(flush_state *s, int64_t *idle_ms, pr_error *err)
{
	static const char claim_sql[] =
		"select id, target, event, detail::text,"
		" greatest(0, ceil(extract(epoch from (next_attempt_at - "
		"clock_timestamp())) * 1000))::bigint"
		" from pages where status = 'pending' and not (id = any($1::bigint[]))"
		" and ($2::bigint[] is null or finding_id = any($2::bigint[]))"
		" order by next_attempt_at, id limit 1 for update skip locked";
	static const char sent_sql[] =
		"update pages set status = 'sent', sent_at = now(), attempts = attempts + 1,"
		" last_attempt_at = now(), http_status = $2::int, response = $3, last_error = null,"
		" updated_at = now()"
		" where id = $1::bigint";
	static const char failed_sql[] =
		"update pages set status = 'failed', attempts = attempts + "
		"1, last_attempt_at = now(),"
		" http_status = $2::int, last_error = $4, response = $3, updated_at = now()"
		" where id = $1::bigint";
	static const char retry_sql[] =
		"update pages set attempts = attempts + 1, last_attempt_at = now(),"
		" http_status = $2::int, last_error = $4, response = $3, updated_at = now(),"
		" next_attempt_at = clock_timestamp() + $5::bigint * interval '1 millisecond'"
		" where id = $1::bigint";
	static const char skip_sql[] =
		"update pages set last_error = $2, updated_at = now() where id = $1::bigint";
	const config_paging *p = &s->c->paging;
	buf ids = BUF_INIT, url = BUF_INIT;
	char sid[24], status[16], why[ERROR_MAX], delay_s[24];
	char *body = NULL, *resp = NULL, *target = NULL, *event = NULL, *detail = NULL;
	const char *params[5];
	PGresult *res = NULL;
	http_response hr;
	pr_error herr = PR_ERROR_INIT;
	target_state *ts;
	bool in_tx = false;
	int64_t id, wait;
	uint32_t tries;
	outcome o;
	int rc, hrc;

	http_response_init(&hr);
	*idle_ms = 0;
	if (db_bigint_array(&ids, s->done, s->ndone, sizeof(*s->done)) < 0)
		return oom(err);
	params[0] = ids.ptr;
	params[1] = s->scope;
	if ((rc = db_begin(s->d, err)) < 0)
		goto out;
	in_tx = true;
	if ((rc = db_exec(s->d, &res, err, "claiming a page", claim_sql, 2, params)) < 0)
		goto out;
	if (db_rows(res) == 0) {
		*idle_ms = -1;
		goto out;
	}
	id = db_get_i64(res, 0, 0);
	wait = db_get_i64(res, 0, 4);
	if (wait > 0) {
		*idle_ms = wait;
		goto out;
	}
	if (!(target = strdup(db_get_text(res, 0, 1))) ||
	    !(event = strdup(db_get_text(res, 0, 2))) ||
	    !(detail = strdup(db_get_text(res, 0, 3)))) {
		rc = oom(err);
		goto out;
	}
	db_result_free(res);
	res = NULL;
	snprintf(sid, sizeof(sid), "%" PRId64, id);
	ts = target_get(s, target);
	if (!ts || ts->err.code) {
		/* Not an attempt: nothing was sent. The row waits for a fixed config. */
		snprintf(why, sizeof(why), "target '%.64s': %.400s", target,
			 ts ? ts->err.msg : "not configured under paging.targets");
		note_error(s, "page %" PRId64 ": %s", id, why);
		params[0] = sid;
		params[1] = why;
		if ((rc = db_exec(s->d, NULL, err, "recording a page", skip_sql, 2, params)) < 0 ||
		    (rc = db_commit(s->d, err)) < 0)
			goto out;
		in_tx = false;
		s->out->skipped++;
		if (mark_done(s, id) < 0)
			rc = oom(err);
		goto out;
	}
	{
		pr_error berr = PR_ERROR_INIT;
		if (build_request(&url, &body, ts, event, detail, p, &berr) < 0) {
			if (berr.code == PR_ENOMEM) {
				rc = oom(err);
				goto out;
			}
			/* A row that can never make a request fails for good. */
			snprintf(why, sizeof(why), "target '%.64s': %.400s", target, berr.msg);
			params[0] = sid, params[1] = NULL, params[2] = NULL, params[3] = why;
			note_error(s, "page %" PRId64 ": %s", id, why);
			if ((rc = db_exec(s->d, NULL, err, "recording a page", failed_sql, 4,
					  params)) < 0 ||
			    (rc = db_commit(s->d, err)) < 0)
				goto out;
			in_tx = false;
			s->out->failed++;
			if (mark_done(s, id) < 0)
				rc = oom(err);
			goto out;
		}
	}
	/* PagerDuty carries its key in the body; the others in a header. */
	hrc = send_json(&hr, url.ptr, body,
			ts->t->kind == CONFIG_TARGET_PAGERDUTY ? NULL : ts->secret,
			ts->t->kind == CONFIG_TARGET_PAGERDUTY, p, left_ms(s), &herr);
	if (hrc == PR_ENOMEM) {
		rc = oom(err);
		goto out;
	}
	o = classify(&hr, hrc, &herr, p, why, sizeof(why));
	if (hr.body.len) {
		bool nomem;
		if (!(resp = pager_response_text(hr.body.ptr, ts->secret, RESPONSE_MAX, &nomem)) &&
		    nomem) {
			rc = oom(err);
			goto out;
		}
	}
	snprintf(status, sizeof(status), "%ld", hr.status);
	params[0] = sid;
	params[1] = hr.status ? status : NULL;
	params[2] = nz(resp);
	params[3] = nz(why);
	if ((rc = count_try(s, id, &tries)) < 0) {
		rc = oom(err);
		goto out;
	}
	if (o == OUT_SENT) {
		rc = db_exec(s->d, NULL, err, "recording a sent page", sent_sql, 3, params);
		s->out->sent++;
	} else if (o == OUT_FAILED) {
		note_error(s, "page %" PRId64 " to '%.64s': %s", id, target, why);
		rc = db_exec(s->d, NULL, err, "recording a failed page", failed_sql, 4, params);
		s->out->failed++;
	} else {
		int64_t delay = pager_backoff_ms(p, tries, next_rand(s));
		if (hr.retry_after_ms > delay)
			delay = hr.retry_after_ms;
		snprintf(delay_s, sizeof(delay_s), "%" PRId64, delay);
		params[4] = delay_s;
		note_error(s, "page %" PRId64 " to '%.64s': %s", id, target, why);
		rc = db_exec(s->d, NULL, err, "recording a page to retry", retry_sql, 5, params);
		s->out->retried++;
	}
	if (rc < 0 || (rc = db_commit(s->d, err)) < 0)
		goto out;
	in_tx = false;
	if ((o != OUT_RETRY || tries >= p->max_attempts) && mark_done(s, id) < 0)
		rc = oom(err);
out:
	if (in_tx)
		db_rollback(s->d);
	db_result_free(res);
	buf_release(&ids);
	buf_release(&url);
	http_response_release(&hr);
	body_free(body);
	free(resp);
	free(target);
	free(event);
	free(detail);
	return rc;
}

/* A text[] literal of the names of the Alertmanager targets. */
static int am_targets(buf *out, const config *c)
{
	int rc = buf_putc(out, '{'), first = 1;

	for (size_t i = 0; rc == 0 && i < c->paging.ntargets; i++) {
		const char *n = c->paging.targets[i].name;
		if (c->paging.targets[i].kind != CONFIG_TARGET_ALERTMANAGER)
			continue;
		rc = buf_puts(out, first ? "\"" : ",\"");
		first = 0;
		for (; rc == 0 && *n; n++)
			rc = (*n == '"' || *n == '\\') ? buf_printf(out, "\\%c", *n)
						       : buf_putc(out, *n);
		if (rc == 0)
			rc = buf_putc(out, '"');
	}
	return rc == 0 ? buf_putc(out, '}') : rc;
}

/* Re-post one open alert that this flush did not just deliver. */
static int refresh_one(flush_state *s, const char *targets, const char *since, bool *more,
		       pr_error *err)
{
	static const char sql[] =
		"select p.id, p.target, p.detail::text from pages p join "
		"findings f on f.id = p.finding_id"
		/*
		 * Not a disabled service's: nothing judges it any more, so its
		 * findings never close on their own, and its alert was re-fired
		 * every night for good. Left alone, it ends at its endsAt.
		 */
		" join services s on s.id = f.service_id and s.enabled"
		" where p.event = 'trigger' and p.status = 'sent' and f.status = 'open'"
		" and p.retired_at is null"
		" and p.target = any($1::text[]) and not (p.id = any($2::bigint[]))"
		" and coalesce(p.refreshed_at, p.sent_at) < $3::timestamptz"
		" order by p.id limit 1 for update of p skip locked";
	/*
	 * The first statement read f.status from its snapshot, before its row
	 * lock was granted: a resolve committed in between is only seen by a
	 * new statement. The resolve's own transaction locks this trigger row
	 * (pager_enqueue_resolve), so once this statement sees the finding
	 * open, the resolve event is queued after this re-post, never before.
	 */
	static const char open_sql[] =
		"select f.status = 'open' and p.status = 'sent' from pages p"
		" join findings f on f.id = p.finding_id where p.id = $1::bigint";
	static const char done_sql[] =
		"update pages set refreshed_at = now(), refreshes = "
		"refreshes + 1, updated_at = now()"
		" where id = $1::bigint";
	buf ids = BUF_INIT, url = BUF_INIT;
	char sid[24], why[ERROR_MAX], *body = NULL;
	const char *params[3];
	PGresult *res = NULL;
	target_state *ts;
	http_response hr;
	pr_error herr = PR_ERROR_INIT;
	bool in_tx = false;
	int64_t id;
	int rc, hrc;

	http_response_init(&hr);
	*more = false;
	if (db_bigint_array(&ids, s->done, s->ndone, sizeof(*s->done)) < 0)
		return oom(err);
	params[0] = targets, params[1] = ids.ptr, params[2] = since;
	if ((rc = db_begin(s->d, err)) < 0)
		goto out;
	in_tx = true;
	if ((rc = db_exec(s->d, &res, err, "finding open alerts", sql, 3, params)) < 0 ||
	    db_rows(res) == 0)
		goto out;
	*more = true;
	id = db_get_i64(res, 0, 0);
	if ((rc = mark_done(s, id)) < 0) {
		rc = oom(err);
		goto out;
	}
	snprintf(sid, sizeof(sid), "%" PRId64, id);
	{
		PGresult *still = NULL;
		bool open;
		params[0] = sid;
		if ((rc = db_exec(s->d, &still, err, "checking an open alert", open_sql, 1,
				  params)) < 0)
			goto out;
		open = db_rows(still) == 1 && strcmp(db_get_text(still, 0, 0), "t") == 0;
		db_result_free(still);
		if (!open)
			goto out;
	}
	ts = target_get(s, db_get_text(res, 0, 1));
	if (!ts || ts->err.code) {
		s->out->refresh_failed++;
		goto out;
	}
	{
		pr_error berr = PR_ERROR_INIT;
		if (build_request(&url, &body, ts, "refresh", db_get_text(res, 0, 2), &s->c->paging,
				  &berr) < 0) {
			s->out->refresh_failed++;
			goto out;
		}
	}
	hrc = send_json(&hr, url.ptr, body, ts->secret, false, &s->c->paging, left_ms(s), &herr);
	if (hrc == PR_ENOMEM) {
		rc = oom(err);
		goto out;
	}
	if (classify(&hr, hrc, &herr, &s->c->paging, why, sizeof(why)) != OUT_SENT) {
		note_error(s, "re-sending alert %" PRId64 ": %s", id, why);
		s->out->refresh_failed++;
		goto out;
	}
	params[0] = sid;
	if ((rc = db_exec(s->d, NULL, err, "recording a re-sent alert", done_sql, 1, params)) < 0 ||
	    (rc = db_commit(s->d, err)) < 0)
		goto out;
	in_tx = false;
	s->out->refreshed++;
out:
	if (in_tx)
		db_rollback(s->d);
	db_result_free(res);
	buf_release(&ids);
	buf_release(&url);
	http_response_release(&hr);
	body_free(body);
	return rc;
}

static void sleep_ms(int64_t ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0)
		;
}

int pager_flush(db *d, const config *c, const pager_flush_opts *opts, pager_counts *out,
		pr_error *err)
{
	pager_flush_opts def = {true, false, NULL, 0, 0};
	flush_state s;
	buf am = BUF_INIT, scope = BUF_INIT;
	char since[64] = "";
	int64_t idle;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	memset(&s, 0, sizeof(s));
	if (!opts)
		opts = &def;
	s.d = d;
	s.c = c;
	s.out = out;
	s.rng = (uint64_t)time_now_us() ^ ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15ULL;
	if (opts->deadline_ms)
		s.deadline = time_mono() + opts->deadline_ms / 1000.0;
	if (opts->only_findings) {
		if (db_bigint_array(&scope, opts->finding_ids, opts->nfinding_ids,
				    sizeof(*opts->finding_ids)) < 0)
			return oom(err);
		s.scope = scope.ptr;
	}
	if (c->paging.ntargets && !(s.targets = calloc(c->paging.ntargets, sizeof(*s.targets))))
		return oom(err);
	s.ntargets = c->paging.ntargets;
	for (size_t i = 0; i < s.ntargets; i++)
		s.targets[i].t = &c->paging.targets[i];
	{
		PGresult *res = NULL;
		if ((rc = db_exec(d, &res, err, "reading the clock",
				  "select clock_timestamp()::text", 0, NULL)) < 0)
			goto out;
		snprintf(since, sizeof(since), "%s", db_get_text(res, 0, 0));
		db_result_free(res);
	}
	/*
	 * Every pass either sends a row (at most max_attempts per row) or
	 * sleeps until the next one is due, never longer than the longest
	 * backoff: a Retry-After further away ends the flush instead.
	 */
	for (;;) {
		if (left_ms(&s) == 0) {
			out->deadline_hit = true;
			break;
		}
		if ((rc = flush_one(&s, &idle, err)) < 0)
			goto out;
		if (idle < 0)
			break;
		if (idle > 0) {
			if (idle > (int64_t)c->paging.max_backoff_ms)
				break;
			if (left_ms(&s) >= 0 && idle >= left_ms(&s)) {
				out->deadline_hit = true;
				break;
			}
			sleep_ms(idle);
		}
	}
	if (opts->refresh && !opts->only_findings && !out->deadline_hit) {
		bool more = true;
		if (am_targets(&am, c) < 0) {
			rc = oom(err);
			goto out;
		}
		while (more && am.len > 2 && left_ms(&s) != 0)
			if ((rc = refresh_one(&s, am.ptr, since, &more, err)) < 0)
				goto out;
	}
	if ((rc = pager_count(d, "pending", &out->pending, err)) < 0 ||
	    (rc = pager_count_failed_open(d, &out->failed_open, &out->failed_resolves, err)) < 0)
		goto out;
	if (out->deadline_hit)
		add_note(out,
			 "stopped at the %" PRIu32
			 " ms paging deadline; the rest waits in the outbox",
			 opts->deadline_ms);
	/*
	 * A refused page of a finding still open is not done with: say so,
	 * every time. Nor is a refused resolve: the receiver's alert stays
	 * open for a regression that was fixed.
	 */
	if (out->failed_open > out->failed_resolves && !opts->only_findings)
		add_note(out,
			 "%zu failed page%s of open findings (profreg page list --state failed;"
			 " profreg page retry --all-failed)",
			 out->failed_open - out->failed_resolves,
			 out->failed_open - out->failed_resolves == 1 ? "" : "s");
	if (out->failed_resolves && !opts->only_findings)
		add_note(out,
			 "%zu failed resolve%s of closed findings: %s alert%s at the receiver "
			 "stay%s open (profreg page list --state failed; profreg page retry "
			 "--all-failed)",
			 out->failed_resolves, out->failed_resolves == 1 ? "" : "s",
			 out->failed_resolves == 1 ? "its" : "their",
			 out->failed_resolves == 1 ? "" : "s",
			 out->failed_resolves == 1 ? "s" : "");
out:
	for (size_t i = 0; i < s.ntargets; i++)
		secret_free(s.targets[i].secret);
	free(s.targets);
	free(s.done);
	free(s.tried_id);
	free(s.tried_n);
	buf_release(&am);
	buf_release(&scope);
	return rc;
}

int pager_list(json_t **out, db *d, const char *state, size_t limit, pr_error *err)
{
	/* The keys `page list --json` prints; a key without a value is left out. */
#define PAGE_TIME(c) "to_char(" c " at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
	static const char sql[] =
		"select coalesce(jsonb_agg(jsonb_strip_nulls(jsonb_build_object('id', p.id,"
		" 'state', p.status, 'event', p.event, 'target', p.target,"
		" 'dedup_key', p.dedup_key,"
		" 'finding_id', coalesce(p.finding_id, 0), 'attempts', p.attempts,"
		" 'http_status', nullif(p.http_status, 0), 'last_error', nullif(p.last_error, ''),"
		" 'response', nullif(p.response, ''), 'created_at', " PAGE_TIME("p.created_at") ","
		" 'sent_at', " PAGE_TIME("p.sent_at") ","
		" 'next_attempt_at', " PAGE_TIME("p.next_attempt_at") ","
		" 'retired_at', " PAGE_TIME("p.retired_at") ","
		" 'service', coalesce(p.detail ->> 'service', ''),"
		" 'function', coalesce(p.detail ->> 'function', ''),"
		" 'severity', coalesce(p.detail ->> 'severity', ''), 'refreshes', p.refreshes))"
		" order by p.id desc), '[]')::text"
		" from (select * from pages where $1::text is null or status = $1"
		"   order by id desc limit $2::int) p";
#undef PAGE_TIME
	char lim[24];
	const char *p[2] = {state, lim};
	PGresult *res = NULL;
	int rc;

	*out = NULL;
	snprintf(lim, sizeof(lim), "%zu", limit);
	if ((rc = db_exec(d, &res, err, "listing pages", sql, 2, p)) < 0)
		return rc;
	if (!(*out = json_loads(db_get_text(res, 0, 0), 0, NULL)))
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
	db_result_free(res);
	return rc;
}
