/*
 * evidence.c: forensic captures and finding pins (see evidence.h). Every
 * statement that makes a capture forensic, or pins one, is here.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/evidence.h"
#include "common/timeutil.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The one rule: what a capture is kept until once it is made forensic
 * with `until` (an SQL timestamptz expression, NULL for forever) asked.
 */
#define KEEP_UNTIL(until) \
	"case when (" until ") is null then null" \
	" when p.retention_class = 'forensic' and p.retain_until is null then null" \
	" when p.retention_class = 'forensic' then greatest(p.retain_until, " until ")" \
	" else " until " end"

int evidence_pin_finding(db *d, const finding *f, int64_t keep_us, int64_t *without_blob,
			 int64_t *deleted, pr_error *err)
{
	/*
	 * Kept `keep` from when the finding was first stored, not from now:
	 * storing it again then asks for the same end and changes nothing.
	 * A capture already another finding's evidence is kept to the later
	 * of the two ends (it keeps its first finding's tag, which its deploy
	 * tag belongs to): skipping it would drop this finding's evidence at
	 * the other one's end.
	 */
	static const char forensic_sql[] =
		"with c as (select (jsonb_array_elements_text($2::jsonb -> 'current'))::bigint"
		"   as id),"
		" k as (select case when $3::bigint > 0 then coalesce((select created_at"
		"   from findings where id = $1), now()) + $3::bigint * interval '1 microsecond'"
		"   end as until),"
		" u as (update profiles p set retention_class = 'forensic',"
		"   retain_until = " KEEP_UNTIL("(select until from k)") ","
		"   tags = case when p.tags ? 'finding' then p.tags"
		"     else p.tags || jsonb_build_object('finding', $1::bigint::text) end"
		"   where p.id = any(array(select id from c))"
		"   and (p.retention_class <> 'forensic' or not (p.tags ? 'finding')"
		"     or (p.retain_until is not null and ((select until from k) is null"
		"       or (select until from k) > p.retain_until)))"
		"   returning p.id, p.blob_deleted_at is not null as cut)"
		" select count(*), count(*) filter (where cut) from u";
	/*
	 * Retention's row budget, beside the night, may delete a baseline
	 * capture the analysis read: its pin then failed the foreign key and
	 * rolled back every finding and page of the night. The rows are
	 * locked first (a capture deleted meanwhile drops out, and one locked
	 * cannot be deleted before this commits); what is gone is counted.
	 */
	static const char pin_sql[] =
		"with b as (select distinct"
		"   (jsonb_array_elements_text($2::jsonb -> 'baseline'))::bigint as id),"
		" l as (select p.id from profiles p where p.id in (select id from b)"
		"   for key share),"
		" i as (insert into capture_pins (profile_id, finding_id) select id, $1 from l"
		"   on conflict do nothing returning profile_id)"
		" select count(*), (select count(*) from b) - (select count(*) from l) from i";
	char id[24], keep[24], object[48], detail[160];
	struct pg_result *res[2] = {NULL, NULL};
	const char *p[3] = {id, f->capture_ids, keep};
	/* Both in one round trip: a night pins the captures of every regression it finds. */
	const db_call calls[2] = {
		{"marking forensic captures", forensic_sql, 3, p, NULL, NULL, 0},
		{"pinning baseline captures", pin_sql, 2, p, NULL, NULL, 0},
	};
	int64_t made_forensic, pinned;
	int rc;

	snprintf(id, sizeof(id), "%" PRId64, f->id);
	snprintf(keep, sizeof(keep), "%" PRId64, keep_us);
	if ((rc = db_exec_pipeline(d, res, err, calls, 2)) < 0)
		return rc;
	made_forensic = db_get_i64(res[0], 0, 0);
	/*
	 * The analysis read these captures before this statement: retention,
	 * which runs beside it, may have cut one to a summary meanwhile (its
	 * row lock taken first, this update waited, then found the row as
	 * retention left it). Its rows that are left are evidence still; its
	 * raw profile is gone, and the caller says so.
	 */
	if (without_blob)
		*without_blob = db_get_i64(res[0], 0, 1);
	pinned = db_get_i64(res[1], 0, 0);
	if (deleted)
		*deleted = db_get_i64(res[1], 0, 1);
	db_result_free(res[0]);
	db_result_free(res[1]);
	if (!made_forensic && !pinned)
		return 0;
	snprintf(object, sizeof(object), "finding:%" PRId64, f->id);
	snprintf(detail, sizeof(detail),
		 "{\"forensic_captures\":%" PRId64 ",\"pinned_baseline_captures\":%" PRId64
		 ",\"reason\":\"regression finding\"}", made_forensic, pinned);
	return db_audit(d, "pin", object, detail, err);
}

int evidence_tag_deploy(db *d, int64_t finding_id, int64_t deploy_id, const char *sha,
			pr_error *err)
{
	static const char sql[] =
		"update profiles set"
		" tags = tags || jsonb_build_object('deploy', $2::text, 'commit', $3::text)"
		" where tags ->> 'finding' = $1 and not tags ? 'deploy'";
	char fid[24], did[24];
	const char *p[3] = {fid, did, sha};

	snprintf(fid, sizeof(fid), "%" PRId64, finding_id);
	snprintf(did, sizeof(did), "%" PRId64, deploy_id);
	return db_exec(d, NULL, err, "tagging evidence", sql, 3, p);
}

int evidence_release_finding(db *d, int64_t finding_id, int64_t *unpinned, pr_error *err)
{
	static const char sql[] =
		"with p as (delete from capture_pins where finding_id = $1 returning 1)"
		" select count(*) from p";
	char id[24];
	const char *p[1] = {id};
	struct pg_result *res = NULL;
	int rc;

	snprintf(id, sizeof(id), "%" PRId64, finding_id);
	if ((rc = db_exec(d, &res, err, "unpinning a finding's baseline", sql, 1, p)) < 0)
		return rc;
	if (unpinned)
		*unpinned = db_get_i64(res, 0, 0);
	db_result_free(res);
	return 0;
}

/* Audit a pin or unpin with its reason and what came of it; commits. */
static int audit_and_commit(db *d, int64_t id, bool pin, json_t *detail, pr_error *err)
{
	char object[48], *text = json_dumps(detail, JSON_COMPACT | JSON_SORT_KEYS);
	int rc;

	if (!text)
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	snprintf(object, sizeof(object), "capture:%" PRId64, id);
	rc = db_audit(d, pin ? "capture.pin" : "capture.unpin", object, text, err);
	free(text);
	return rc < 0 ? rc : db_commit(d, err);
}

int evidence_pin_capture(evidence_pin_result *out, db *d, int64_t id, const char *reason,
			 int64_t until_us, pr_error *err)
{
	static const char sql[] =
		"update profiles p set retention_class = 'forensic',"
		" retain_until = " KEEP_UNTIL(DB_US_TO_TS("$3")) ","
		" forensic_reason = $2, forensic_by = $4, forensic_at = now()"
		" where id = $1 returning blob_deleted_at is not null, retain_until is null,"
		" coalesce(" DB_TS_TO_US("retain_until") ", 0)";
	char sid[24], until[24];
	const char *p[4] = {sid, reason, until_us ? until : NULL, db_actor(d)};
	struct pg_result *res = NULL;
	json_t *detail = NULL;
	char when[TIME_FMT_MAX];
	int rc;

	memset(out, 0, sizeof(*out));
	snprintf(sid, sizeof(sid), "%" PRId64, id);
	snprintf(until, sizeof(until), "%" PRId64, until_us);
	if ((rc = db_begin(d, err)) < 0)
		return rc;
	if ((rc = db_exec(d, &res, err, "pinning the capture", sql, 4, p)) < 0)
		goto out;
	if (db_rows(res) != 1) {
		rc = pr_error_set(err, PR_ENOTFOUND, "capture %" PRId64 " not found", id);
		goto out;
	}
	out->blob_deleted = db_get_bool(res, 0, 0);
	out->kept_forever = db_get_bool(res, 0, 1);
	out->kept_until_us = out->kept_forever ? 0 : db_get_i64(res, 0, 2);
	out->longer = until_us && (out->kept_forever || out->kept_until_us > until_us);
	/* What is kept now, which may be longer than asked: null is forever. */
	if (!(detail = json_pack("{s:s}", "reason", reason))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	time_format(when, out->kept_until_us);
	json_object_set_new(detail, "until", out->kept_forever ? json_null() : json_string(when));
	if (until_us) {
		time_format(when, until_us);
		json_object_set_new(detail, "requested_until", json_string(when));
	}
	rc = audit_and_commit(d, id, true, detail, err);
out:
	if (rc < 0)
		db_rollback(d);
	json_decref(detail);
	db_result_free(res);
	return rc;
}

int evidence_unpin_capture(evidence_pin_result *out, db *d, int64_t id, const char *reason,
			   int64_t keep_us, pr_error *err)
{
	/*
	 * Back to the tier its data is in: hot while it has its blob, else
	 * summary. But a finding's evidence stays what the finding keeps it
	 * as (forensic, `keep_us` from when the finding was stored, forever
	 * for 0; kept while the finding is open, retention.c): only the pin
	 * by hand is taken off. An unpin took an open finding's current
	 * captures back to normal retention, which deleted them.
	 */
	static const char sql[] =
		"with e as (select f.id, f.created_at, f.id::text = p.tags ->> 'finding' as tagged"
		"   from profiles p join findings f on f.id::text = p.tags ->> 'finding'"
		"   or f.detail -> 'captures' -> 'current' @> to_jsonb(p.id) where p.id = $1)"
		" update profiles set retention_class = case when exists (select 1 from e)"
		"   then retention_class when blob_deleted_at is null then 'hot'"
		"   else 'summary' end,"
		" retain_until = case when $2::bigint > 0 then (select max(created_at) from e)"
		"   + $2::bigint * interval '1 microsecond' end,"
		" forensic_reason = null, forensic_by = null,"
		" forensic_at = null where id = $1 and retention_class = 'forensic'"
		" returning retention_class,"
		" coalesce((select id from e order by tagged desc, id limit 1), 0)";
	char sid[24], keep[24];
	const char *p[2] = {sid, keep};
	struct pg_result *res = NULL;
	json_t *detail = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	snprintf(sid, sizeof(sid), "%" PRId64, id);
	snprintf(keep, sizeof(keep), "%" PRId64, keep_us);
	if ((rc = db_begin(d, err)) < 0)
		return rc;
	if ((rc = db_exec(d, &res, err, "unpinning the capture", sql, 2, p)) < 0)
		goto out;
	if (db_rows(res) != 1) {
		rc = pr_error_set(err, PR_ENOTFOUND, "capture %" PRId64 " is not forensic", id);
		goto out;
	}
	snprintf(out->tier, sizeof(out->tier), "%s", db_get_text(res, 0, 0));
	out->evidence_of = db_get_i64(res, 0, 1);
	if (!(detail = json_pack("{s:s,s:s,s:I}", "reason", reason, "tier", out->tier,
				 "evidence_of", (json_int_t)out->evidence_of))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	rc = audit_and_commit(d, id, false, detail, err);
out:
	if (rc < 0)
		db_rollback(d);
	json_decref(detail);
	db_result_free(res);
	return rc;
}

int evidence_count(evidence_left *out, db *d, int64_t id, pr_error *err)
{
	/*
	 * A run closes a finding at its own time (closed_at_us, the night's
	 * --at), which retention's ages are against; a finding resolved by
	 * hand has only resolved_at.
	 */
	/* The query reads as SQL, one clause a line. */
	/* clang-format off */
	static const char sql[] =
		"with f as (select detail -> 'captures' as c, case when status = 'open' then 0"
		"   else coalesce((detail ->> 'closed_at_us')::bigint,"
		"     " DB_TS_TO_US("resolved_at") ", 0) end as closed, resolved_at"
		"   from findings where id = $1),"
		" x as (select false as cur, v::bigint as id"
		"   from f, jsonb_array_elements_text(f.c -> 'baseline') v"
		"   union all select true, v::bigint"
		"   from f, jsonb_array_elements_text(f.c -> 'current') v)"
		" select (select closed from f), x.cur, count(*), count(p.id),"
		"  count(p.id) filter (where p.blob_deleted_at is not null),"
		"  count(p.id) filter (where p.blob_deleted_at >= (select resolved_at from f))"
		" from x left join profiles p on p.id = x.id group by x.cur";
	/* clang-format on */
	char sid[24];
	const char *p[1] = {sid};
	struct pg_result *res = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	snprintf(sid, sizeof(sid), "%" PRId64, id);
	if ((rc = db_exec(d, &res, err, "counting a finding's captures", sql, 1, p)) < 0)
		return rc;
	for (int i = 0; i < db_rows(res); i++) {
		evidence_side *s = db_get_bool(res, i, 1) ? &out->current : &out->baseline;
		out->closed_at_us = db_get_i64(res, i, 0);
		s->stored = (size_t)db_get_i64(res, i, 2);
		s->left = (size_t)db_get_i64(res, i, 3);
		s->cut = (size_t)db_get_i64(res, i, 4);
		s->cut_closed = (size_t)db_get_i64(res, i, 5);
	}
	db_result_free(res);
	return 0;
}

void evidence_gone_text(char *out, size_t n, const evidence_left *e, bool baseline)
{
	const evidence_side *s = baseline ? &e->baseline : &e->current;
	const char *side = baseline ? "baseline" : "current";
	size_t gone = s->stored - s->left, len;
	char all[48];

	*out = '\0';
	if (!gone && !s->cut)
		return;
	/* "the 32 baseline captures were", "the baseline capture was", "12 of the 32 ... were". */
	if (s->stored == 1)
		snprintf(all, sizeof(all), "the %s capture was", side);
	else
		snprintf(all, sizeof(all), "the %zu %s captures were", s->stored, side);
	if (gone == s->stored || (!gone && s->cut == s->stored))
		snprintf(out, n, "%s %s by retention", all, gone ? "deleted" : "cut to a summary");
	else if (gone && s->cut)
		snprintf(out, n,
			 "%zu of the %zu %s captures were deleted and %zu cut to a summary "
			 "by retention",
			 gone, s->stored, side, s->cut);
	else
		snprintf(out, n, "%zu of the %zu %s captures %s %s by retention",
			 gone ? gone : s->cut, s->stored, side,
			 (gone ? gone : s->cut) == 1 ? "was" : "were",
			 gone ? "deleted" : "cut to a summary");
	/*
	 * An open finding pins its baseline: what went, went after it closed
	 * and the pins lifted. A baseline capture may have been a summary
	 * already when the finding was found (a summary is a valid baseline):
	 * that one was not cut after.
	 */
	len = strlen(out);
	if (baseline && e->closed_at_us && s->cut_closed == s->cut && len < n) {
		char when[TIME_FMT_MAX];
		time_format(when, e->closed_at_us);
		snprintf(out + len, n - len, " after the finding closed on %.10s", when);
	}
}
