/*
 * retention.c: the retention engine (see retention.h for the tiers, the
 * budget and what survives a crash).
 *
 * Every batch is two statements in one transaction: the first picks and
 * locks captures (FOR UPDATE SKIP LOCKED; a dry run FOR NO KEY UPDATE, see
 * retention.h), the second, under a fresh snapshot, re-checks that each
 * is still unprotected and moves it. A pin inserted by a concurrent
 * nightly either committed before the second statement (and is seen) or
 * waits on our row lock (its foreign-key check needs a share lock on the
 * capture) until we commit; so a pin is never undone by a degrade that did
 * not see it.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/retention.h"
#include "jobs/runs.h"
#include "jobs/snapshot.h"
#include "reports/report.h"
#include "common/buf.h"
#include "common/fileio.h"
#include "common/timeutil.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define US_TS(n) "('epoch'::timestamptz + $" #n "::bigint * interval '1 microsecond')"

/*
 * A capture the run may not touch: live forensic evidence, the evidence of
 * a finding still open (whatever its keep said: an open regression past
 * forensic_days lost its current captures while its baseline stayed
 * pinned; the capture's tag names only its first finding, so the open
 * findings' own current captures are looked at too), or the baseline of
 * an open finding. $1 is `at`.
 */
/* clang-format off */
#define PROTECTED_P \
	"((p.retention_class = 'forensic'" \
	"  and (p.retain_until is null or p.retain_until > " US_TS(1) \
	"    or exists (select 1 from findings f where f.status = 'open'" \
	"      and (f.id::text = p.tags ->> 'finding'" \
	"        or f.detail -> 'captures' -> 'current' @> to_jsonb(p.id)))))" \
	" or exists (select 1 from capture_pins cp join findings f on f.id = cp.finding_id" \
	"            where cp.profile_id = p.id and f.status = 'open'))"
/* clang-format on */

/*
 * Per-service thresholds, from arrays: $2 service ids, $3 hot cut, $4 delete cut (Unix us), $5
 * top.
 */
#define TIERS_CTE \
	"t as (select * from unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[])" \
	"      as t(sid, hot_cut, del_cut, top))"
#define TS_COL(c) "('epoch'::timestamptz + " c " * interval '1 microsecond')"

#define SWEEP_CHUNK 500
/* The most holds on unreferenced blobs a sweep reads (each a restore found). */
#define HOLDS_MAX 64
#define HOLDS_MAX_TEXT "64"

typedef struct ret {
	db *d;
	blob_store *bs;
	const config *cfg;
	retention_opts o;
	retention_result *res;
	char at[24], batch[24], other[24];
	buf sids, hot, del, top;   /* bigint[] literals, one entry per service */
	bool global_tx;            /* dry run: everything in one transaction, rolled back */
	/* The orphan sweep keeps unreferenced blobs put after this (db_newest). */
	int64_t newer_than_us;
	/* and those put within a hold (holds_load); how many it kept outside any */
	struct {
		int64_t from_us, until_us;
	} holds[HOLDS_MAX];
	size_t nholds, kept_unheld;
} ret;

static int oom(pr_error *err)
{
	return pr_error_set(err, PR_ENOMEM, "out of memory");
}

static const char *i64s(char out[24], int64_t v)
{
	snprintf(out, 24, "%" PRId64, v);
	return out;
}

/* ---- batches ------------------------------------------------------------ */

/*
 * Each batch is one short transaction: a statement that runs past
 * RETENTION_STATEMENT_TIMEOUT or waits on a lock past
 * RETENTION_LOCK_TIMEOUT fails the run instead of holding rows that
 * nightly and ingest need; what committed before stays done.
 */
static int bounded_begin(db *d, pr_error *err)
{
	static const char bound[] =
		"select set_config('statement_timeout', '" RETENTION_STATEMENT_TIMEOUT "', true),"
		" set_config('lock_timeout', '" RETENTION_LOCK_TIMEOUT "', true)";
	int rc;

	if ((rc = db_begin(d, err)) < 0)
		return rc;
	if ((rc = db_exec(d, NULL, err, "bounding a retention transaction", bound, 0, NULL)) < 0)
		db_rollback(d);
	return rc;
}

static int batch_begin(ret *r, pr_error *err)
{
	return r->global_tx ? 0 : bounded_begin(r->d, err);
}

static int batch_commit(ret *r, pr_error *err)
{
	return r->global_tx ? 0 : db_commit(r->d, err);
}

static void batch_abort(ret *r)
{
	if (!r->global_tx)
		db_rollback(r->d);
}

/* Ids from the first column of a result: *out is a bigint[] literal, *n how many. */
static int ids_of(buf *out, size_t *n, PGresult *res, pr_error *err)
{
	int rc = buf_putc(out, '{');

	*n = 0;
	for (int i = 0; rc == 0 && i < db_rows(res); i++, (*n)++)
		rc = buf_printf(out, "%s%s", i ? "," : "", db_get_text(res, i, 0));
	if (rc == 0)
		rc = buf_putc(out, '}');
	return rc < 0 ? oom(err) : 0;
}

static int audit_batch(ret *r, const char *action, const char *why, const char *ids,
		       uint64_t rows, pr_error *err)
{
	char object[48], num[24];
	buf detail = BUF_INIT;
	int rc;

	if (r->o.dry_run)
		return 0;
	snprintf(object, sizeof(object), "run:%" PRId64, r->res->run_id);
	/* ids is "{1,2,3}": the same list as a JSON array. */
	if (buf_printf(&detail, "{\"reason\":\"%s\",\"rows_removed\":%s,\"captures\":[%.*s]}", why,
		       i64s(num, (int64_t)rows), (int)(strlen(ids) - 2), ids + 1) < 0)
		return oom(err);
	rc = db_audit(r->d, action, object, detail.ptr, err);
	buf_release(&detail);
	return rc;
}

/*
 * Cut the rows of captures `ids` (just moved to summary) to each service's
 * top functions plus the "(other functions)" row. *removed is the net
 * number of rows gone.
 */
static int cut_rows(ret *r, const char *ids, uint64_t *removed, pr_error *err)
{
	/*
	 * c: each capture's entries (for services with a top); r: ranked,
	 * the "(other functions)" entry ($4) aside; g: what goes, summed into
	 * "(other functions)" (added to the one a capture may have); w: the
	 * rewritten capture, its ids ascending as ingest writes them.
	 */
	static const char sql[] =
		"with t as (select * from unnest($2::bigint[], $3::bigint[]) as t(sid, top)),"
		" c as (select v.profile_id, t.top, u.function_id, u.self_value, u.total_value"
		"   from profile_vectors v join t on t.sid = v.service_id"
		"   cross join lateral unnest(v.function_ids, v.self_values, v.total_values)"
		"     as u(function_id, self_value, total_value)"
		"   where v.profile_id = any($1::bigint[]) and t.top > 0),"
		" r as (select c.*, row_number() over (partition by c.profile_id"
		"   order by c.self_value desc, c.function_id) as rn"
		"   from c where c.function_id <> $4),"
		" g as (select profile_id, sum(self_value)::bigint as v, count(*) as n"
		"   from r where rn > top group by profile_id),"
		" o as (select profile_id, self_value, total_value from c where function_id = $4),"
		" n as (select profile_id, function_id, self_value, total_value from r"
		"   where rn <= top and profile_id in (select profile_id from g)"
		"   union all select g.profile_id, $4, coalesce(o.self_value, 0) + g.v,"
		"     coalesce(o.total_value, 0) + g.v from g left join o using (profile_id)),"
		" w as (update profile_vectors v set function_ids = a.ids, self_values = a.sv,"
		"     total_values = a.tv"
		"   from (select profile_id, array_agg(function_id order by function_id) as ids,"
		"     array_agg(self_value order by function_id) as sv,"
		"     array_agg(total_value order by function_id) as tv"
		"     from n group by profile_id) a"
		"   where v.profile_id = a.profile_id returning 1)"
		" select (select coalesce(sum(n), 0) from g),"
		"   (select count(*) from g where profile_id not in (select profile_id from o)),"
		"   (select count(*) from w)";
	const char *p[4] = {ids, r->sids.ptr, r->top.ptr, r->other};
	PGresult *res = NULL;
	int rc;

	if ((rc = db_exec(r->d, &res, err, "cutting summary rows", sql, 4, p)) < 0)
		return rc;
	/* Entries gone, less the "(other functions)" entries that are new. */
	*removed = (uint64_t)(db_get_i64(res, 0, 0) - db_get_i64(res, 0, 1));
	db_result_free(res);
	return 0;
}

/*
 * Move the locked captures `ids` that are still unprotected and not yet
 * summary to the summary tier, in the caller's transaction. *moved and
 * *rows get what happened.
 */
static int degrade(ret *r, const char *ids, const char *why, uint64_t *moved, uint64_t *rows,
		   pr_error *err)
{
	static const char sql[] =
		"with u as (update profiles p set retention_class = 'summary', retain_until = null,"
		"   blob_deleted_at = coalesce(p.blob_deleted_at, now())"
		"   where p.id = any($2::bigint[]) and p.retention_class <> 'summary'"
		"   and not " PROTECTED_P " returning p.id, p.blob_key),"
		" q as (insert into blob_sweep (blob_key) select distinct blob_key from u"
		"   on conflict do nothing)"
		" select id from u order by id";
	const char *p[2] = {r->at, ids};
	PGresult *res = NULL;
	buf done = BUF_INIT;
	size_t n = 0;
	int rc;

	*moved = *rows = 0;
	if ((rc = db_exec(r->d, &res, err, "moving captures to the summary tier", sql, 2, p)) < 0)
		goto out;
	if ((rc = ids_of(&done, &n, res, err)) < 0 || n == 0)
		goto out;
	if ((rc = cut_rows(r, done.ptr, rows, err)) < 0 ||
	    (rc = audit_batch(r, "retention.summary", why, done.ptr, *rows, err)) < 0)
		goto out;
	*moved = n;
out:
	db_result_free(res);
	buf_release(&done);
	return rc;
}

/* Delete the locked captures `ids` that are still unprotected, in the caller's transaction. */
static int delete_caps(ret *r, const char *ids, const char *why, uint64_t *deleted,
		       uint64_t *rows, pr_error *err)
{
	/*
	 * A run holds these rows FOR UPDATE already; a dry run only FOR NO KEY
	 * UPDATE, so it skips one a pin is being inserted for, as a run would.
	 */
	/* clang-format off */
	static const char sql[] =
		"with c as (select p.id, p.blob_key from profiles p"
		"   where p.id = any($2::bigint[]) and not " PROTECTED_P
		"   for update of p skip locked),"
		" q as (insert into blob_sweep (blob_key) select distinct blob_key from c"
		"   on conflict do nothing),"
		/* Their function values go with them (profile_vectors cascades). */
		" n as (select coalesce(sum(cardinality(function_ids)), 0) as k"
		"   from profile_vectors"
		"   where profile_id in (select id from c)),"
		" x as (delete from profiles where id in (select id from c)"
		"   returning id, service_id, blob_key, " DB_TS_TO_US("captured_at") " as us)"
		/* What ingest must not store again (db_deleted_record): one array each. */
		" select id, (select k from n),"
		"   (select array_agg(service_id order by id) from x),"
		"   (select array_agg(blob_key order by id) from x),"
		"   (select array_agg(us order by id) from x)"
		" from x order by id";
	/* clang-format on */
	const char *p[2] = {r->at, ids};
	PGresult *res = NULL;
	buf done = BUF_INIT;
	size_t n = 0;
	int rc;

	*deleted = *rows = 0;
	if ((rc = db_exec(r->d, &res, err, "deleting captures", sql, 2, p)) < 0)
		goto out;
	if ((rc = ids_of(&done, &n, res, err)) < 0 || n == 0)
		goto out;
	*rows = (uint64_t)db_get_i64(res, 0, 1);
	/*
	 * In the transaction that deletes them: a drop folder that still holds
	 * a capture's file offers it again at the next collect, and without
	 * the record it was stored again, to be deleted again, every night.
	 */
	if ((rc = db_deleted_record(r->d, db_get_text(res, 0, 2), db_get_text(res, 0, 3),
				    db_get_text(res, 0, 4), err)) < 0 ||
	    (rc = audit_batch(r, "retention.delete", why, done.ptr, *rows, err)) < 0)
		goto out;
	*deleted = n;
out:
	db_result_free(res);
	buf_release(&done);
	return rc;
}

/* ---- the blob sweep ----------------------------------------------------- */

/*
 * Whether blob `key` was put less than `grace` before `now` (its time as
 * the store keeps it: a file's mtime, an object's Last-Modified); one
 * that is gone is not, one that cannot be looked at is (kept: the safe
 * side).
 */
static bool blob_young(blob_store *bs, const char *key, int64_t now, int64_t grace)
{
	pr_error e2 = PR_ERROR_INIT;
	blob_entry st;
	int rc = blob_stat(bs, key, &st, &e2);

	if (rc < 0)
		return rc != PR_ENOTFOUND;
	return now - st.mtime_us < grace;
}

static int keys_literal(buf *b, char **keys, size_t n)
{
	int rc = buf_putc(b, '{');

	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = buf_printf(b, "%s%s", i ? "," : "", keys[i]);
	return rc ? rc : buf_putc(b, '}');
}

/* A blob that is to go, and its size for the run's counts. */
typedef struct doomed {
	const char *key;
	uint64_t size;
} doomed;

static void count_deleted(ret *r, bool orphans, uint64_t size)
{
	if (orphans) {
		r->res->orphans_deleted++;
		r->res->orphan_bytes += size;
	} else {
		r->res->blobs_deleted++;
		r->res->bytes_freed += size;
	}
}

/*
 * Send the deletes of `v` to a store where one that got no answer may
 * still land later (blob_delete_linger_us): each key was recorded, and
 * the record committed, before any is sent, so an ingest of the same
 * bytes is refused until the record runs out, answered or not (a try
 * without an answer may land after a later try was answered). Deletes
 * are sent only in the first quarter of the record's time, which leaves
 * each one's tries and their landing inside it; a store slower than that
 * stops the run, the rest left for the next.
 */
static int send_recorded(ret *r, const doomed *v, size_t n, bool orphans, double marked,
			 uint64_t linger, pr_error *err)
{
	int rc;

	for (size_t i = 0; i < n; i++) {
		if (time_mono() - marked > (double)linger / 4e6)
			return pr_error_set(err, PR_ELIMIT,
					    "cannot delete blobs in %s fast enough: %zu of %zu "
					    "left for the next run",
					    blob_store_describe(r->bs), n - i, n);
		if ((rc = blob_delete(r->bs, v[i].key, err)) < 0)
			return rc;
		count_deleted(r, orphans, v[i].size);
	}
	return 0;
}

/*
 * Delete the files of `keys` that no capture keeps, under the exclusive
 * lock of each key (db_blob_lock): an ingest writing or pointing a row at
 * one of them right now either committed before (its row is seen and the
 * file stays) or waits until the file is gone (and writes it again).
 * `orphans`: keys the store walk found with no row keeping them; under
 * the lock they must also still be older than the grace period (a put
 * since the walk makes a blob young again, and one whose age cannot be
 * read is taken as young), and they count as orphans. Where a delete can
 * land late (an object store), the keys are recorded under the lock and
 * the deletes sent once it is let go (send_recorded): the record, not the
 * lock, keeps an ingest off them from then on.
 */
static int delete_dead(ret *r, char **keys, size_t n, bool orphans, int64_t grace,
		       pr_error *err)
{
	static const char still_dead[] =
		"select k from unnest($1::text[]) k where not exists (select 1 from profiles p"
		" where p.blob_key = k and p.blob_deleted_at is null)"
		" and not " SNAPSHOT_KEEPS_BLOB("k") " order by k";
	uint64_t linger = blob_delete_linger_us(r->bs);
	PGresult *res = NULL;
	buf lit = BUF_INIT, marked = BUF_INIT;
	doomed *v = NULL;
	size_t nv = 0;
	const char *p[1];
	double t0 = time_mono();
	bool in_tx = false;
	int rc;

	if (keys_literal(&lit, keys, n) < 0 || !(v = calloc(n ? n : 1, sizeof(*v)))) {
		rc = oom(err);
		goto out;
	}
	p[0] = lit.ptr;
	if ((rc = db_begin(r->d, err)) < 0)
		goto out;
	in_tx = true;
	if ((rc = db_blob_lock_all(r->d, lit.ptr, err)) == 0)
		rc = db_exec(r->d, &res, err, "checking blobs before deleting them", still_dead, 1,
			     p);
	for (int i = 0; rc == 0 && i < db_rows(res); i++) {
		const char *k = db_get_text(res, i, 0);
		uint64_t size = 0;
		pr_error e2 = PR_ERROR_INIT;
		if (orphans && blob_young(r->bs, k, time_now_us(), grace))
			continue;
		if (blob_stored_size(r->bs, k, &size, &e2) < 0) {
			if (e2.code != PR_ENOTFOUND)
				rc = pr_error_set(err, e2.code, "%s", e2.msg);
			continue; /* already gone: a retried delete */
		}
		if (linger) {
			v[nv].key = k;
			v[nv++].size = size;
			continue;
		}
		if ((rc = blob_delete(r->bs, k, err)) < 0)
			break;
		count_deleted(r, orphans, size);
	}
	if (rc == 0 && nv) {
		char **ks = malloc(nv * sizeof(*ks));
		for (size_t i = 0; ks && i < nv; i++)
			ks[i] = (char *)v[i].key;
		if (!ks || keys_literal(&marked, ks, nv) < 0)
			rc = oom(err);
		else
			rc = db_blob_deletes_mark(r->d, marked.ptr, linger, err);
		free(ks);
	}
	if (rc == 0 && (rc = db_commit(r->d, err)) == 0)
		in_tx = false;
	if (rc == 0 && nv)
		rc = send_recorded(r, v, nv, orphans, t0, linger, err);
out:
	if (in_tx)
		db_rollback(r->d);
	db_result_free(res);
	buf_release(&lit);
	buf_release(&marked);
	free(v);
	return rc;
}

/*
 * Delete the queued blobs no capture keeps any more, then their queue
 * rows; drop from the queue the keys something live still names. A crash
 * between a file's deletion and its queue row's leaves a harmless second
 * delete. A dry run, inside the run's one transaction, only counts.
 */
static int sweep_queue(ret *r, pr_error *err)
{
	static const char pick[] =
		"select s.blob_key, exists (select 1 from profiles p where p.blob_key = s.blob_key"
		"   and p.blob_deleted_at is null) or " SNAPSHOT_KEEPS_BLOB("s.blob_key")
		" from blob_sweep s order by s.blob_key limit 500";
	static const char done_sql[] = "delete from blob_sweep where blob_key = any($1::text[])";
	int rc = 0;

	for (;;) {
		PGresult *res = NULL;
		char *dead[SWEEP_CHUNK], *all[SWEEP_CHUNK];
		size_t ndead = 0, nall = 0;
		buf lit = BUF_INIT;
		const char *p[1];

		if ((rc = db_exec(r->d, &res, err, "reading the blob sweep queue", pick, 0, NULL)) <
		    0)
			return rc;
		if (db_rows(res) == 0) {
			db_result_free(res);
			return 0;
		}
		for (int i = 0; i < db_rows(res) && i < SWEEP_CHUNK; i++) {
			char *k = (char *)db_get_text(res, i, 0);
			all[nall++] = k;
			if (!db_get_bool(res, i, 1))
				dead[ndead++] = k;
		}
		if (ndead && !r->o.dry_run) {
			rc = delete_dead(r, dead, ndead, false, 0, err);
		} else {
			for (size_t i = 0; i < ndead; i++) {
				uint64_t size = 0;
				pr_error e2 = PR_ERROR_INIT;
				if (blob_stored_size(r->bs, dead[i], &size, &e2) == 0) {
					r->res->blobs_deleted++;
					r->res->bytes_freed += size;
				}
			}
		}
		if (rc == 0) {
			if (keys_literal(&lit, all, nall) < 0) {
				rc = oom(err);
			} else {
				p[0] = lit.ptr;
				rc = db_exec(r->d, NULL, err, "emptying the blob sweep queue",
					     done_sql, 1, p);
			}
			buf_release(&lit);
		}
		db_result_free(res);
		if (rc < 0)
			return rc;
	}
}

/*
 * Which of `keys` (a text[] literal) no capture keeps its blob for: a
 * result of those keys.
 */
static int unkept(db *d, PGresult **res, const char *keys, pr_error *err)
{
	static const char sql[] =
		"select k from unnest($1::text[]) k where not exists (select 1 from profiles p"
		"  where p.blob_key = k and p.blob_deleted_at is null)"
		" and not " SNAPSHOT_KEEPS_BLOB("k");
	const char *p[1] = {keys};

	return db_exec(d, res, err, "looking for unreferenced blobs", sql, 1, p);
}

/*
 * The holds on unreferenced blobs taken in the last summary_days
 * (DB_BLOBS_HELD rows of the audit log): by a sweep that kept blobs newer
 * than the database, or by a run that found the database behind its
 * reports folder (runs.c). The newer-than rule alone lasted only until
 * the next capture was stored: after a restore, the nightly's own
 * collection stored one before its retention ran, and the blobs of the
 * lost captures then looked like dead ingests' and went. A hold keeps
 * the blobs put between its restore point and the time it was taken for
 * as long as a capture lives (summary_days), time enough to ingest them
 * again; a dead ingest's blob put after the hold goes as before.
 */
static int holds_load(ret *r, pr_error *err)
{
	static const char sql[] =
		"select (detail ->> 'newest_us')::bigint, (detail ->> 'until_us')::bigint"
		"  from audit_log where action = '" DB_BLOBS_HELD "'"
		"   and at >= now() - $1::bigint * interval '1 microsecond'"
		"   and jsonb_typeof(detail -> 'newest_us') = 'number'"
		"   and jsonb_typeof(detail -> 'until_us') = 'number'"
		" order by at desc limit " HOLDS_MAX_TEXT;
	const config_tiers *t = &r->cfg->retention.tiers;
	char horizon[24];
	const char *p[1] = {i64s(horizon, t->summary_us > t->hot_us ? t->summary_us : t->hot_us)};
	PGresult *res = NULL;
	int rc = db_exec(r->d, &res, err, "reading the holds on unreferenced blobs", sql, 1, p);

	r->nholds = 0;
	if (rc < 0)
		return rc;
	for (int i = 0; i < db_rows(res) && r->nholds < HOLDS_MAX; i++) {
		r->holds[r->nholds].from_us = db_get_i64(res, i, 0) - RETENTION_STORE_SKEW_US;
		r->holds[r->nholds++].until_us = db_get_i64(res, i, 1);
	}
	db_result_free(res);
	return 0;
}

/* Whether a blob put at mtime_us falls under one of the holds. */
static bool held(const ret *r, int64_t mtime_us)
{
	for (size_t i = 0; i < r->nholds; i++)
		if (mtime_us > r->holds[i].from_us && mtime_us <= r->holds[i].until_us)
			return true;
	return false;
}

/*
 * Takes a hold on the blobs this sweep kept as newer than the database
 * (from its newest row to now), so that the next sweeps keep them after
 * a capture newer than them is stored. Once: a sweep whose kept blobs
 * all fall under holds already taken takes none.
 */
static int hold_take(ret *r, pr_error *err)
{
	r->res->orphans_newly_held = r->kept_unheld;
	if (r->o.dry_run || !r->kept_unheld)
		return 0;
	return db_blobs_hold(r->d, r->res->db_newest_us, time_now_us(), err);
}

/*
 * When the database last saw a blob written, into r->newer_than_us: its
 * newest stored row (db_newest_stored) less RETENTION_STORE_SKEW_US;
 * INT64_MIN when it holds none (every unreferenced blob is then newer
 * than it). An ingest writes its blob just before its row, so a blob put
 * after the newest row is not a dead ingest's but one whose row the
 * database lost: restored from an older backup while the store kept
 * everything since. And the holds taken since summary_days ago (below).
 */
static int db_newest(ret *r, pr_error *err)
{
	int rc = db_newest_stored(r->d, &r->res->db_newest_us, err);

	if (rc < 0)
		return rc;
	r->newer_than_us =
		r->res->db_newest_us ? r->res->db_newest_us - RETENTION_STORE_SKEW_US : INT64_MIN;
	return holds_load(r, err);
}

/*
 * One chunk of old blobs of the store: those no capture keeps are
 * deleted like queued ones (delete_dead: the exclusive lock on the key,
 * the rows and the age checked again), or counted on a dry run; those
 * put after the newest row (r->newer_than_us) are kept and counted apart.
 */
static int sweep_chunk(ret *r, const blob_entry *files, size_t n, int64_t grace, pr_error *err)
{
	PGresult *res = NULL;
	buf lit = BUF_INIT;
	char *keys[SWEEP_CHUNK], *dead[SWEEP_CHUNK];
	size_t nd = 0;
	int rc;

	for (size_t k = 0; k < n; k++)
		keys[k] = (char *)files[k].key;
	if (keys_literal(&lit, keys, n) < 0) {
		rc = oom(err);
		goto out;
	}
	if ((rc = unkept(r->d, &res, lit.ptr, err)) < 0)
		goto out;
	for (int j = 0; j < db_rows(res); j++) {
		const char *k = db_get_text(res, j, 0);
		const blob_entry *f = NULL;
		for (size_t x = 0; x < n && !f; x++)
			if (strcmp(files[x].key, k) == 0)
				f = &files[x];
		if (!f)
			continue;
		bool in_hold = held(r, f->mtime_us);
		if (f->mtime_us > r->newer_than_us || in_hold) {
			r->kept_unheld += !in_hold;
			r->res->orphans_kept_newer++;
			r->res->orphan_kept_bytes += f->size;
		} else if (!r->o.dry_run) {
			dead[nd++] = (char *)k;
		} else {
			r->res->orphans_deleted++;
			r->res->orphan_bytes += f->size;
		}
	}
	if (nd)
		rc = delete_dead(r, dead, nd, true, grace, err);
out:
	db_result_free(res);
	buf_release(&lit);
	return rc;
}

/* The sweep's walk of the store: old blobs gathered a chunk at a time. */
typedef struct sweep_walk {
	ret *r;
	int64_t now, grace;
	size_t n;
	blob_entry chunk[SWEEP_CHUNK];
} sweep_walk;

static int sweep_seen(void *ud, const blob_entry *e, pr_error *err)
{
	sweep_walk *w = ud;

	if (w->now - e->mtime_us < w->grace)
		return 0;
	w->chunk[w->n++] = *e;
	if (w->n < SWEEP_CHUNK)
		return 0;
	w->n = 0;
	return sweep_chunk(w->r, w->chunk, SWEEP_CHUNK, w->grace, err);
}

/*
 * Blobs of the store (files of a local one, objects of a bucket) that no
 * capture keeps, older than the grace period. The walk and a first look
 * at the rows take no lock; each blob that looks dead is then deleted like
 * a queued one, so an ingest storing the same bytes right now never loses
 * the blob it is pointing its row at. A dry run only counts. The store is
 * judged a chunk at a time as it is walked, so a bucket of millions of
 * objects is never held in memory; deleting what the walk has passed
 * leaves the rest of it as it was (a directory's entries not yet read, a
 * listing's keys after its continuation token).
 */
static int sweep_orphans(ret *r, pr_error *err)
{
	sweep_walk *w = calloc(1, sizeof(*w));
	int rc;

	if (!w)
		return oom(err);
	w->r = r;
	w->now = time_now_us();
	w->grace = r->o.orphan_grace_us > 0 ? r->o.orphan_grace_us : RETENTION_ORPHAN_GRACE_US;
	/* Read before the walk: a row stored meanwhile only makes it keep more. */
	rc = db_newest(r, err);
	if (rc == 0)
		rc = blob_store_list(r->bs, sweep_seen, w, err);
	if (rc == 0 && w->n)
		rc = sweep_chunk(r, w->chunk, w->n, w->grace, err);
	if (rc == 0)
		rc = hold_take(r, err);
	free(w);
	return rc;
}

/* ---- tiers and budget --------------------------------------------------- */

static int tiers_load(ret *r, pr_error *err)
{
	db_service *svcs = NULL;
	size_t n = 0;
	int rc;

	if ((rc = db_service_list(r->d, &svcs, &n, err)) < 0)
		return rc;
	rc = buf_putc(&r->sids, '{') | buf_putc(&r->hot, '{') | buf_putc(&r->del, '{') |
	     buf_putc(&r->top, '{');
	for (size_t i = 0; rc == 0 && i < n; i++) {
		config_tiers t = config_service_tiers(r->cfg, svcs[i].name);
		int64_t keep = t.summary_us > t.hot_us ? t.summary_us : t.hot_us;
		const char *sep = i ? "," : "";
		rc = buf_printf(&r->sids, "%s%" PRId64, sep, svcs[i].id) |
		     buf_printf(&r->hot, "%s%" PRId64, sep, r->res->at_us - t.hot_us) |
		     buf_printf(&r->del, "%s%" PRId64, sep, r->res->at_us - keep) |
		     buf_printf(&r->top, "%s%" PRId64, sep, t.summary_top);
	}
	if (rc == 0)
		rc = buf_putc(&r->sids, '}') | buf_putc(&r->hot, '}') | buf_putc(&r->del, '}') |
		     buf_putc(&r->top, '}');
	for (size_t i = 0; i < n; i++)
		db_service_release(&svcs[i]);
	free(svcs);
	return rc ? oom(err) : 0;
}

/*
 * One batch: lock with `lock_sql` ($1 at, $2-$5 tiers, $6 batch size or
 * an id list), then degrade or delete. *moved is 0 when nothing was left.
 */
static int batch(ret *r, const char *const lock_sql[2], const char *arg6, bool del,
		 const char *why, uint64_t *moved, uint64_t *rows, pr_error *err)
{
	const char *p[6] = {r->at, r->sids.ptr, r->hot.ptr, r->del.ptr, r->top.ptr, arg6};
	PGresult *res = NULL;
	buf ids = BUF_INIT;
	size_t n = 0;
	int rc;

	*moved = *rows = 0;
	if ((rc = batch_begin(r, err)) < 0)
		return rc;
	if ((rc = db_exec(r->d, &res, err, "selecting captures to move", lock_sql[r->o.dry_run], 6,
			  p)) < 0 ||
	    (rc = ids_of(&ids, &n, res, err)) < 0)
		goto out;
	if (n == 0)
		goto out;
	rc = del ? delete_caps(r, ids.ptr, why, moved, rows, err)
		 : degrade(r, ids.ptr, why, moved, rows, err);
	if (rc < 0)
		goto out;
	if ((rc = batch_commit(r, err)) < 0)
		goto out;
	r->res->batches++;
	r->res->rows_removed += *rows;
	rc = sweep_queue(r, err);
out:
	if (rc < 0)
		batch_abort(r);
	else if (n == 0 && !r->global_tx)
		db_rollback(r->d);
	db_result_free(res);
	buf_release(&ids);
	return rc;
}

/*
 * Each lock statement twice: [0] for a run, [1] for a dry run, which
 * takes the lock a pin's foreign-key check does not wait on.
 */
#define LOCKING(sql) {sql " for update of p skip locked", sql " for no key update of p skip locked"}

/* By age: captures past their tier, oldest first. */
static const char *const age_delete_sql[2] = LOCKING(
	"with " TIERS_CTE
	" select p.id from profiles p join t on t.sid = p.service_id"
	" where (p.retention_class <> 'forensic' or p.retain_until is not null)"
	"   and p.captured_at < " TS_COL("t.del_cut")
	"   and not " PROTECTED_P
	" order by p.captured_at, p.id limit $6");
static const char *const age_summary_sql[2] = LOCKING(
	"with " TIERS_CTE
	" select p.id from profiles p join t on t.sid = p.service_id"
	" where (p.retention_class = 'hot' or (p.retention_class = 'forensic' and "
	"p.retain_until is not null))"
	"   and p.captured_at < " TS_COL("t.hot_cut")
	"   and not " PROTECTED_P
	" order by p.captured_at, p.id limit $6");

/* The budget: lock exactly these captures ($6, chosen beforehand). */
static const char *const lock_ids_sql[2] = LOCKING(
	"with " TIERS_CTE
	" select p.id from profiles p where p.id = any($6::bigint[]) and $1::bigint is not null"
	" order by p.id");

/*
 * Forget the deleted captures (db_deleted_record) whose bytes no ingest
 * has met for as long as the service keeps a capture (its delete cut,
 * summary_days before `at`): a file still in its drop folder is met at
 * every collect and keeps its record; one that is gone from every source
 * no longer needs it, so the records stay as many as the sources offer.
 * Only a `seen_at` by the clock is compared, never the capture's own
 * time: an old capture is exactly what a folder keeps offering.
 */
static int forget_deleted(ret *r, pr_error *err)
{
	uint64_t n = 0;
	int rc;

	if ((rc = batch_begin(r, err)) < 0)
		return rc;
	if ((rc = db_deleted_prune(r->d, &n, r->sids.ptr, r->del.ptr, err)) < 0 ||
	    (rc = batch_commit(r, err)) < 0) {
		batch_abort(r);
		return rc;
	}
	r->res->deletions_forgotten = n;
	return 0;
}

static int by_age(ret *r, pr_error *err)
{
	uint64_t moved, rows;
	int rc;

	do {
		if ((rc = batch(r, age_delete_sql, r->batch, true, "age", &moved, &rows, err)) < 0)
			return rc;
		r->res->deleted += moved;
	} while (moved);
	do {
		if ((rc = batch(r, age_summary_sql, r->batch, false, "age", &moved, &rows, err)) <
		    0)
			return rc;
		r->res->to_summary += moved;
	} while (moved);
	return 0;
}

/* Bytes of the blobs captures keep (each once); *missing counts keys with no file. */
static int bytes_kept(ret *r, uint64_t *bytes, uint64_t *missing, pr_error *err)
{
	static const char sql[] =
		"select distinct blob_key from profiles where blob_deleted_at is null";
	PGresult *res = NULL;
	int rc;

	*bytes = *missing = 0;
	if ((rc = db_exec(r->d, &res, err, "listing kept blobs", sql, 0, NULL)) < 0)
		return rc;
	for (int i = 0; rc == 0 && i < db_rows(res); i++) {
		uint64_t size = 0;
		pr_error e2 = PR_ERROR_INIT;
		if (blob_stored_size(r->bs, db_get_text(res, i, 0), &size, &e2) < 0) {
			if (e2.code == PR_ENOTFOUND)
				(*missing)++;
			else
				rc = pr_error_set(err, e2.code, "%s", e2.msg);
			continue;
		}
		*bytes += size;
	}
	db_result_free(res);
	return rc;
}

static int rows_kept(ret *r, uint64_t *rows, pr_error *err)
{
	PGresult *res = NULL;
	int rc = db_exec(r->d, &res, err, "counting per-function rows",
			 "select coalesce(sum(cardinality(function_ids)), 0)"
			 " from profile_vectors",
			 0, NULL);

	if (rc == 0)
		*rows = (uint64_t)db_get_i64(res, 0, 0);
	db_result_free(res);
	return rc;
}

/*
 * Choose from `res` (id, estimate of what moving it frees, key or NULL)
 * the oldest captures whose estimates cover `deficit`; a key counts once.
 */
static int choose(buf *ids, size_t *n, PGresult *res, uint64_t deficit, pr_error *err)
{
	uint64_t est = 0;
	int rc = buf_putc(ids, '{');

	*n = 0;
	for (int i = 0; rc == 0 && i < db_rows(res) && est < deficit; i++) {
		const char *key = db_get_text(res, i, 2);
		bool seen = false;
		for (int k = 0; key && k < i && !seen; k++)
			seen = strcmp(key, db_get_text(res, k, 2)) == 0;
		if (!seen)
			est += (uint64_t)db_get_i64(res, i, 1);
		rc = buf_printf(ids, "%s%s", *n ? "," : "", db_get_text(res, i, 0));
		(*n)++;
	}
	if (rc == 0)
		rc = buf_putc(ids, '}');
	return rc < 0 ? oom(err) : 0;
}

/* Sizes of the candidates' blobs, for the bytes budget: (id, size, key). */
static int with_sizes(ret *r, PGresult *res, buf *ids, size_t *n, uint64_t deficit,
		      pr_error *err)
{
	uint64_t est = 0;
	int rc = buf_putc(ids, '{');

	*n = 0;
	for (int i = 0; rc == 0 && i < db_rows(res) && est < deficit; i++) {
		const char *key = db_get_text(res, i, 1);
		bool seen = false;
		for (int k = 0; k < i && !seen; k++)
			seen = strcmp(key, db_get_text(res, k, 1)) == 0;
		if (!seen) {
			uint64_t size = 0;
			pr_error e2 = PR_ERROR_INIT;
			if (blob_stored_size(r->bs, key, &size, &e2) == 0)
				est += size;
		}
		rc = buf_printf(ids, "%s%s", *n ? "," : "", db_get_text(res, i, 0));
		(*n)++;
	}
	if (rc == 0)
		rc = buf_putc(ids, '}');
	return rc < 0 ? oom(err) : 0;
}

static int budget_bytes(ret *r, pr_error *err)
{
	/*
	 * Not a capture whose blob a protected capture keeps too: cut, it
	 * frees nothing, and the budget cut a young capture's rows for none.
	 */
	static const char cand_sql[] =
		"select c.id, c.blob_key from profiles c"
		" where c.blob_deleted_at is null and c.retention_class <> 'summary'"
		"   and not exists (select 1 from profiles p where p.id = c.id and " PROTECTED_P ")"
		"   and not exists (select 1 from profiles p where p.blob_key = c.blob_key"
		"     and p.id <> c.id and p.blob_deleted_at is null and " PROTECTED_P ")"
		" order by c.captured_at, c.id limit $2";
	uint64_t used, missing;
	int rc;

	if ((rc = bytes_kept(r, &used, &missing, err)) < 0)
		return rc;
	while (used > r->res->budget_bytes) {
		const char *p[2] = {r->at, r->batch};
		PGresult *res = NULL;
		buf ids = BUF_INIT;
		uint64_t moved = 0, rows = 0, before = r->res->bytes_freed, freed;
		size_t n = 0;

		if ((rc = db_exec(r->d, &res, err, "choosing captures over the budget", cand_sql, 2,
				  p)) < 0)
			return rc;
		if (db_rows(res) == 0) {
			db_result_free(res);
			r->res->over_budget = true;
			break;
		}
		rc = with_sizes(r, res, &ids, &n, used - r->res->budget_bytes, err);
		db_result_free(res);
		if (rc == 0)
			rc = batch(r, lock_ids_sql, ids.ptr, false, "budget", &moved, &rows, err);
		buf_release(&ids);
		if (rc < 0)
			return rc;
		r->res->budget_to_summary += moved;
		freed = r->res->bytes_freed - before;
		used = freed > used ? 0 : used - freed;
		if (moved == 0)
			break; /* every candidate is busy elsewhere: the next run goes on */
	}
	r->res->bytes_used = used;
	return 0;
}

/*
 * Over the row budget: where the rows that are left are, for the message.
 * Unprotected captures that are not summary are the hot ones the budget
 * may not cut further (summary_top 0, or no more rows than their top).
 */
static int rows_left(ret *r, pr_error *err)
{
	static const char sql[] = "select coalesce(sum(c.n) filter (where " PROTECTED_P "), 0),"
				  "  coalesce(sum(c.n) filter (where not " PROTECTED_P
				  " and p.retention_class <> 'summary'), 0)"
				  " from profiles p,"
				  "  lateral (select coalesce(sum(cardinality("
				  "v.function_ids)), 0) as n"
				  "   from profile_vectors v where v.profile_id = p.id) c";
	const char *p[1] = {r->at};
	PGresult *res = NULL;
	int rc = db_exec(r->d, &res, err, "counting the rows left over the budget", sql, 1, p);

	if (rc == 0) {
		r->res->protected_rows = (uint64_t)db_get_i64(res, 0, 0);
		r->res->uncut_hot_rows = (uint64_t)db_get_i64(res, 0, 1);
	}
	db_result_free(res);
	return rc;
}

static int budget_rows(ret *r, pr_error *err)
{
	/* First the oldest hot captures whose rows a cut would shrink, */
	static const char cut_sql[] =
		"with " TIERS_CTE
		" select p.id, c.n - t.top - 1, null from profiles p join "
		"t on t.sid = p.service_id,"
		"  lateral (select coalesce(sum(cardinality(v.function_ids)), 0) as n"
		"   from profile_vectors v where v.profile_id = p.id) c"
		" where p.blob_deleted_at is null and p.retention_class <> 'summary'"
		"   and t.top > 0 and c.n > t.top + 1 and not " PROTECTED_P
		" order by p.captured_at, p.id limit $6";
	/*
	 * then whole summary captures, oldest first. Never a hot one: it may
	 * be tonight's, not analysed yet; what cannot be cut stays, reported.
	 */
	static const char del_sql[] =
		"with " TIERS_CTE
		" select p.id, c.n, null from profiles p join t on t.sid = p.service_id,"
		"  lateral (select coalesce(sum(cardinality(v.function_ids)), 0) as n"
		"   from profile_vectors v where v.profile_id = p.id) c"
		" where p.retention_class = 'summary' and not " PROTECTED_P
		" order by p.captured_at, p.id limit $6";
	uint64_t used = 0;
	int rc;

	if ((rc = rows_kept(r, &used, err)) < 0)
		return rc;
	for (int phase = 0; phase < 2 && used > r->res->budget_rows;) {
		const char *p[6] = {r->at,      r->sids.ptr, r->hot.ptr,
				    r->del.ptr, r->top.ptr,  r->batch};
		PGresult *res = NULL;
		buf ids = BUF_INIT;
		uint64_t moved = 0, rows = 0;
		size_t n = 0;

		if ((rc = db_exec(r->d, &res, err, "choosing captures over the row budget",
				  phase ? del_sql : cut_sql, 6, p)) < 0)
			return rc;
		if (db_rows(res) == 0) {
			db_result_free(res);
			if (++phase == 2)
				r->res->over_budget = true; /* nothing left that may go */
			continue;
		}
		rc = choose(&ids, &n, res, used - r->res->budget_rows, err);
		db_result_free(res);
		if (rc == 0)
			rc = batch(r, lock_ids_sql, ids.ptr, phase == 1, "budget", &moved, &rows,
				   err);
		buf_release(&ids);
		if (rc < 0)
			return rc;
		if (phase)
			r->res->budget_deleted += moved;
		else
			r->res->budget_to_summary += moved;
		used -= rows > used ? used : rows;
		if (moved == 0)
			break; /* busy elsewhere, not exhausted: the next run goes on */
	}
	r->res->rows_used = used;
	return used > r->res->budget_rows ? rows_left(r, err) : 0;
}

/* What stayed past its tier: protected captures, and busy ones left for the next run. */
static int leftovers(ret *r, pr_error *err)
{
	static const char sql[] =
		"with " TIERS_CTE
		" select count(*) filter (where " PROTECTED_P "),"
		"  count(*) filter (where not " PROTECTED_P
		"   and (p.retention_class <> 'summary'"
		"     or p.captured_at < " TS_COL("t.del_cut") "))"
		" from profiles p join t on t.sid = p.service_id"
		" where p.captured_at < " TS_COL("t.hot_cut");
	const char *p[5] = {r->at, r->sids.ptr, r->hot.ptr, r->del.ptr, r->top.ptr};
	PGresult *res = NULL;
	int rc = db_exec(r->d, &res, err, "counting kept captures", sql, 5, p);

	if (rc == 0) {
		r->res->protected_kept = (uint64_t)db_get_i64(res, 0, 0);
		r->res->skipped_locked = (uint64_t)db_get_i64(res, 0, 1);
	}
	db_result_free(res);
	return rc;
}

/* ---- the run record ------------------------------------------------------ */

json_t *retention_result_json(const retention_result *r)
{
	char when[TIME_FMT_MAX], newest[TIME_FMT_MAX];
	json_t *j;

	time_format(when, r->at_us);
	j = json_pack("{s:I,s:s,s:b,s:{s:I,s:I,s:I,s:I},s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,"
		      "s:{s:I,s:I,s:I,s:I,s:b,s:I,s:I},s:f}",
		      "run_id", (json_int_t)r->run_id, "at", when, "dry_run", r->dry_run, "moved",
		      "to_summary", (json_int_t)r->to_summary, "deleted", (json_int_t)r->deleted,
		      "budget_to_summary", (json_int_t)r->budget_to_summary, "budget_deleted",
		      (json_int_t)r->budget_deleted, "rows_removed", (json_int_t)r->rows_removed,
		      "blobs_deleted", (json_int_t)r->blobs_deleted, "bytes_freed",
		      (json_int_t)r->bytes_freed, "orphans_deleted", (json_int_t)r->orphans_deleted,
		      "orphan_bytes", (json_int_t)r->orphan_bytes, "temps_deleted",
		      (json_int_t)r->temps_deleted, "batches", (json_int_t)r->batches,
		      "protected_kept", (json_int_t)r->protected_kept, "left_for_next_run",
		      (json_int_t)r->skipped_locked, "deletions_forgotten",
		      (json_int_t)r->deletions_forgotten, "budget", "bytes_used",
		      (json_int_t)r->bytes_used, "bytes", (json_int_t)r->budget_bytes, "rows_used",
		      (json_int_t)r->rows_used, "rows", (json_int_t)r->budget_rows, "over_budget",
		      r->over_budget, "protected_rows", (json_int_t)r->protected_rows,
		      "uncut_hot_rows", (json_int_t)r->uncut_hot_rows, "seconds", r->seconds);
	if (r->db_newest_us)
		time_format(newest, r->db_newest_us);
	if (j && (json_object_set_new(j, "reports_deleted",
				      json_integer((json_int_t)r->reports_deleted)) < 0 ||
		  json_object_set_new(j, "report_bytes_freed",
				      json_integer((json_int_t)r->report_bytes_freed)) < 0 ||
		  json_object_set_new(j, "orphans_kept_newer",
				      json_integer((json_int_t)r->orphans_kept_newer)) < 0 ||
		  json_object_set_new(j, "orphan_kept_bytes",
				      json_integer((json_int_t)r->orphan_kept_bytes)) < 0 ||
		  json_object_set_new(j, "orphans_newly_held",
				      json_integer((json_int_t)r->orphans_newly_held)) < 0 ||
		  json_object_set_new(j, "db_newest",
				      r->db_newest_us ? json_string(newest) : json_null()) < 0)) {
		json_decref(j);
		return NULL;
	}
	return j;
}

int retention_check_at(int64_t at_us, pr_error *err)
{
	int64_t now_us = time_now_us();
	char when[TIME_FMT_MAX], now[TIME_FMT_MAX];

	if (at_us <= now_us + RETENTION_AT_SLACK_US)
		return 0;
	time_format(when, at_us);
	time_format(now, now_us);
	return pr_error_set(err, PR_EUSAGE,
			    "cannot run retention as of '%s': it is more than %d minutes after now"
			    " ('%s'); a time in the future would expire forensic evidence early",
			    when, (int)(RETENTION_AT_SLACK_US / 60000000), now);
}

static int run_insert(ret *r, pr_error *err)
{
	json_t *params = json_pack("{s:I,s:I}", "at_us", (json_int_t)r->res->at_us, "batch",
				   (json_int_t)strtoll(r->batch, NULL, 10));
	int rc;

	if (!params)
		return oom(err);
	/* Any retention still "running" whose session is gone was killed: runs_begin says so. */
	rc = runs_begin(&r->res->run_id, r->d, "retention", 0, params, err);
	json_decref(params);
	return rc;
}

static int run_finish(ret *r, const char *status, json_t *detail, pr_error *err)
{
	char object[48], *text = json_dumps(detail, JSON_COMPACT | JSON_SORT_KEYS);
	int rc;

	if (!text)
		return oom(err);
	snprintf(object, sizeof(object), "run:%" PRId64, r->res->run_id);
	rc = runs_finish(r->d, r->res->run_id, status, detail, err);
	if (rc == 0)
		rc = db_audit(r->d, "retention", object, text, err);
	free(text);
	return rc;
}

static int other_function(ret *r, pr_error *err)
{
	PGresult *res = NULL;
	int rc = db_exec(r->d, &res, err, "finding the summary function",
			 "select id from functions where synthetic order by id limit 1", 0, NULL);

	if (rc < 0)
		return rc;
	if (db_rows(res) != 1)
		rc = pr_error_set(err, PR_EDB,
				  "database: the synthetic '(other functions)' row is missing;"
				  " re-run 'profreg db migrate'");
	else
		i64s(r->other, db_get_i64(res, 0, 0));
	db_result_free(res);
	return rc;
}

/*
 * The run id of a run report of this database's, a file named
 * "run-N-INSTANCE" then "." or "-" (report_run_name; a team's report
 * adds "-team-..."); 0 when it is none. Several databases may share one
 * reports folder, each naming its reports after its own instance: the
 * run 3 of another database is not our run 3, and its report may list
 * a finding still open over there.
 */
static int64_t report_run_id(const char *name, const char *instance)
{
	char own[REPORT_RUN_NAME_MAX], *end;
	long long id;
	size_t n;

	if (strncmp(name, "run-", 4) != 0 || !isdigit((unsigned char)name[4]))
		return 0;
	errno = 0;
	id = strtoll(name + 4, &end, 10);
	if (errno != 0 || id <= 0 || *end != '-')
		return 0;
	report_run_name(own, (int64_t)id, instance);
	n = strlen(own);
	return strncmp(name, own, n) == 0 && (name[n] == '.' || name[n] == '-') ? (int64_t)id : 0;
}

/*
 * Run reports past reports.keep_days. The folder is written to every
 * night (about 1.4 MB a night for 15 services) and was never emptied:
 * storage stayed bounded but for it. A report that lists a finding still
 * open stays, however old: the finding's page links there. Only the
 * files named after a run of this database are touched (run-N-INSTANCE...),
 * never another database's sharing the folder, a report written elsewhere
 * with --out, nor anything else in the folder.
 */
static int old_reports(ret *r, pr_error *err)
{
	/* clang-format off */
	static const char sql[] =
		"select r.id from runs r where r.id = any($1::bigint[])"
		" and coalesce(r.finished_at, r.started_at) < " US_TS(2)
		" and not exists (select 1 from run_findings rf join findings f"
		"   on f.id = rf.finding_id where rf.run_id = r.id and f.status = 'open')";
	/* clang-format on */
	const char *dir = r->o.reports_dir, *instance = NULL;
	int days = r->cfg->reports.keep_days;
	buf ids = BUF_INIT;
	PGresult *res = NULL;
	DIR *dh = NULL;
	struct dirent *e;
	int64_t *gone = NULL;
	size_t ngone = 0;
	char cutoff[24];
	const char *p[2];
	int rc = 0;

	if (!dir || days <= 0)
		return 0;
	if ((rc = db_instance(r->d, &instance, err)) < 0)
		return rc;
	if (!(dh = opendir(dir)))
		return 0; /* no folder yet: nothing written, nothing to delete */
	rc = buf_putc(&ids, '{');
	while (rc == 0 && (e = readdir(dh)))
		if (report_run_id(e->d_name, instance))
			rc = buf_printf(&ids, "%s%" PRId64, ids.len > 1 ? "," : "",
					report_run_id(e->d_name, instance));
	if (rc == 0)
		rc = buf_putc(&ids, '}');
	if (rc < 0) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	if (ids.len <= 2)
		goto out;
	i64s(cutoff, atoll(r->at) - (int64_t)days * 86400 * 1000000LL);
	p[0] = ids.ptr, p[1] = cutoff;
	if ((rc = db_exec(r->d, &res, err, "selecting run reports past reports.keep_days", sql, 2,
			  p)) < 0)
		goto out;
	ngone = (size_t)db_rows(res);
	if (ngone && !(gone = calloc(ngone, sizeof(*gone)))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < ngone; i++)
		gone[i] = db_get_i64(res, (int)i, 0);
	rewinddir(dh);
	while ((e = readdir(dh))) {
		int64_t id = report_run_id(e->d_name, instance);
		bool del = false;
		struct stat st;
		for (size_t i = 0; id && i < ngone && !del; i++)
			del = gone[i] == id;
		if (!del || fstatat(dirfd(dh), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (!r->o.dry_run && unlinkat(dirfd(dh), e->d_name, 0) < 0) {
			rc = pr_error_set(err, PR_EIO, "cannot delete the old report '%s/%s': %s",
					  dir, e->d_name, strerror(errno));
			goto out;
		}
		r->res->reports_deleted++;
		r->res->report_bytes_freed += (uint64_t)st.st_size;
	}
out:
	db_result_free(res);
	free(gone);
	buf_release(&ids);
	if (dh)
		closedir(dh);
	return rc;
}

int retention_run(retention_result *out, db *d, blob_store *bs, const config *cfg,
		  const retention_opts *o, pr_error *err)
{
	ret r;
	bool locked = false;
	int64_t t0 = time_now_us();
	unsigned temps = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&r, 0, sizeof(r));
	r.d = d, r.bs = bs, r.cfg = cfg, r.o = *o, r.res = out;
	r.sids = r.hot = r.del = r.top = (buf)BUF_INIT;
	out->at_us = o->at_us ? o->at_us : t0;
	out->dry_run = o->dry_run;
	out->budget_bytes = cfg->retention.budget_bytes;
	out->budget_rows = cfg->retention.budget_rows;
	i64s(r.at, out->at_us);
	i64s(r.batch, cfg->retention.batch ? cfg->retention.batch : 200);
	if ((rc = retention_check_at(out->at_us, err)) < 0)
		goto out;

	if ((rc = db_try_advisory_lock(d, RETENTION_LOCK, &locked, err)) < 0)
		goto out;
	if (!locked) {
		rc = pr_error_set(
			err, PR_ELOCKED,
			"another retention run holds the lock; not starting a second one");
		goto out;
	}
	if ((rc = other_function(&r, err)) < 0 || (rc = tiers_load(&r, err)) < 0)
		goto out;
	if (!o->dry_run && (rc = run_insert(&r, err)) < 0)
		goto out;
	if (o->dry_run) {
		/*
		 * A batch's bounds on each statement: a dry run never waits long on a lock
		 * either.
		 */
		if ((rc = bounded_begin(d, err)) < 0)
			goto out;
		r.global_tx = true;
	}
	/* What a killed run left queued first, then the tiers, then the budget. */
	if ((rc = sweep_queue(&r, err)) < 0 || (rc = by_age(&r, err)) < 0)
		goto out;
	if (out->budget_bytes && (rc = budget_bytes(&r, err)) < 0)
		goto out;
	if (out->budget_rows && (rc = budget_rows(&r, err)) < 0)
		goto out;
	if ((rc = forget_deleted(&r, err)) < 0 || (rc = sweep_orphans(&r, err)) < 0 ||
	    (rc = leftovers(&r, err)) < 0 || (rc = old_reports(&r, err)) < 0)
		goto out;
	if (!o->dry_run && (rc = blob_store_sweep_temp(bs, &temps, err)) < 0)
		goto out;
	out->temps_deleted = temps;
out:
	if (r.global_tx)
		db_rollback(d);
	out->seconds = (double)(time_now_us() - t0) / 1e6;
	if (out->run_id) {
		pr_error e2 = PR_ERROR_INIT;
		json_t *j = retention_result_json(out);
		if (rc < 0 && j)
			json_object_set_new(j, "error", json_string(err->msg));
		db_rollback(d);
		if (j) {
			int frc = run_finish(&r,
					     rc < 0             ? "failed"
					     : out->over_budget ? "over_budget"
								: "ok",
					     j, rc < 0 ? &e2 : err);
			if (rc == 0)
				rc = frc;
		}
		json_decref(j);
	}
	if (locked)
		db_advisory_unlock(d, RETENTION_LOCK);
	buf_release(&r.sids);
	buf_release(&r.hot);
	buf_release(&r.del);
	buf_release(&r.top);
	return rc;
}

/* ---- storage ------------------------------------------------------------- */

static int key_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_u64(json_t *o, const char *k, uint64_t v)
{
	json_t *old = json_object_get(o, k);
	json_int_t cur = old ? json_integer_value(old) : 0;

	json_object_set_new(o, k, json_integer(cur + (json_int_t)v));
}

/*
 * What the store holds, counted as it is walked (kept: sorted keys captures
 * keep; snaps: sorted keys incident snapshots keep, which retention never
 * deletes and which were counted as kept by nothing).
 */
typedef struct store_count {
	char *const *kept;
	size_t nkept;
	char *const *snaps;
	size_t nsnaps;
	uint64_t n, bytes, loose, loose_bytes, snap, snap_bytes;
} store_count;

static int count_stored(void *ud, const blob_entry *e, pr_error *err)
{
	store_count *c = ud;
	const char *k = e->key;

	(void)err;
	c->n++;
	c->bytes += e->size;
	/* No kept key: no array to search (bsearch's base must not be NULL). */
	if (c->nkept && bsearch(&k, c->kept, c->nkept, sizeof(*c->kept), key_cmp))
		return 0;
	if (c->nsnaps && bsearch(&k, c->snaps, c->nsnaps, sizeof(*c->snaps), key_cmp))
		c->snap++, c->snap_bytes += e->size;
	else
		c->loose++, c->loose_bytes += e->size;
	return 0;
}

/* The group object o[name] (created with zeroed counters). */
static json_t *group(json_t *o, const char *name)
{
	json_t *g = json_object_get(o, name);

	if (!g) {
		g = json_pack("{s:I,s:I,s:I,s:I}", "captures", (json_int_t)0, "rows", (json_int_t)0,
			      "blobs", (json_int_t)0, "blob_bytes", (json_int_t)0);
		json_object_set_new(o, name, g);
	}
	return g;
}

int retention_storage(json_t **out, db *d, blob_store *bs, const config *cfg, pr_error *err)
{
	/*
	 * Counts per service and tier; an expired forensic capture counts as forensic until the
	 * next run.
	 */
	static const char count_sql[] =
		"select s.name, p.retention_class, count(*), coalesce(sum(r.n), 0),"
		"  count(*) filter (where exists (select 1 from capture_pins cp join findings f"
		"    on f.id = cp.finding_id where cp.profile_id = p.id and f.status = 'open'))"
		" from profiles p join services s on s.id = p.service_id"
		" left join (select profile_id, cardinality(function_ids) as n"
		"   from profile_vectors) r"
		"   on r.profile_id = p.id"
		" group by 1, 2 order by 1, 2";
	/* Blobs kept, once per (service, tier) they are kept for. */
	static const char blob_sql[] =
		"select distinct s.name, p.retention_class, p.blob_key collate \"C\""
		" from profiles p join services s on s.id = p.service_id"
		" where p.blob_deleted_at is null order by 3";
	static const char snap_sql[] =
		"select distinct blob_key collate \"C\" from snapshots order by 1";
	PGresult *res = NULL, *sres = NULL;
	json_t *doc = NULL, *tiers, *services, *total;
	char **kept = NULL, **snaps = NULL;
	size_t nkept = 0, nsnaps = 0;
	uint64_t kept_bytes = 0, missing = 0;
	bool local = strcmp(blob_store_kind(bs), "dir") == 0;
	const char *described = blob_store_describe(bs);
	int rc;

	*out = NULL;
	doc = json_pack("{s:{},s:{},s:{s:I,s:I,s:I,s:I},s:{s:I,s:I}}", "tiers", "services", "total",
			"captures", (json_int_t)0, "rows", (json_int_t)0, "blobs", (json_int_t)0,
			"blob_bytes", (json_int_t)0, "budget", "bytes",
			(json_int_t)cfg->retention.budget_bytes, "rows",
			(json_int_t)cfg->retention.budget_rows);
	if (!doc)
		return oom(err);
	tiers = json_object_get(doc, "tiers");
	services = json_object_get(doc, "services");
	total = json_object_get(doc, "total");
	if ((rc = db_exec(d, &res, err, "counting captures by tier", count_sql, 0, NULL)) < 0)
		goto out;
	for (int i = 0; i < db_rows(res); i++) {
		json_t *t = group(tiers, db_get_text(res, i, 1));
		json_t *s = group(services, db_get_text(res, i, 0));
		uint64_t caps = (uint64_t)db_get_i64(res, i, 2),
			 rows = (uint64_t)db_get_i64(res, i, 3);
		add_u64(t, "captures", caps), add_u64(t, "rows", rows);
		add_u64(s, "captures", caps), add_u64(s, "rows", rows);
		add_u64(total, "captures", caps), add_u64(total, "rows", rows);
		add_u64(total, "pinned", (uint64_t)db_get_i64(res, i, 4));
	}
	db_result_free(res);
	res = NULL;
	if ((rc = db_exec(d, &res, err, "listing kept blobs", blob_sql, 0, NULL)) < 0)
		goto out;
	if (db_rows(res) && !(kept = calloc((size_t)db_rows(res), sizeof(*kept)))) {
		rc = oom(err);
		goto out;
	}
	for (int i = 0; i < db_rows(res); i++) {
		const char *key = db_get_text(res, i, 2);
		uint64_t size = 0;
		pr_error e2 = PR_ERROR_INIT;
		bool first = nkept == 0 || strcmp(kept[nkept - 1], key) != 0;

		if (blob_stored_size(bs, key, &size, &e2) < 0) {
			if (e2.code != PR_ENOTFOUND) {
				rc = pr_error_set(err, e2.code, "%s", e2.msg);
				goto out;
			}
			if (first)
				missing++;
			size = 0;
		} else {
			add_u64(group(tiers, db_get_text(res, i, 1)), "blobs", 1);
			add_u64(group(tiers, db_get_text(res, i, 1)), "blob_bytes", size);
			add_u64(group(services, db_get_text(res, i, 0)), "blobs", 1);
			add_u64(group(services, db_get_text(res, i, 0)), "blob_bytes", size);
			if (first)
				kept_bytes += size;
		}
		if (first)
			kept[nkept++] = (char *)key; /* ordered by key: duplicates are adjacent */
	}
	add_u64(total, "blobs", nkept - missing);
	add_u64(total, "blob_bytes", kept_bytes);
	json_object_set_new(total, "missing_blobs", json_integer((json_int_t)missing));
	if ((rc = db_exec(d, &sres, err, "listing the snapshots' blobs", snap_sql, 0, NULL)) < 0)
		goto out;
	if (db_rows(sres) && !(snaps = calloc((size_t)db_rows(sres), sizeof(*snaps)))) {
		rc = oom(err);
		goto out;
	}
	for (int i = 0; i < db_rows(sres); i++)
		snaps[nsnaps++] = (char *)db_get_text(sres, i, 0);
	{
		/* What the store holds: a local folder's files, a bucket's objects. */
		store_count sc = {kept, nkept, snaps, nsnaps, 0, 0, 0, 0, 0, 0};
		uint64_t tfiles = 0, tbytes = 0, nfiles, stored, loose, nloose;
		json_t *where;
		if ((rc = blob_store_list(bs, count_stored, &sc, err)) < 0 ||
		    (rc = blob_store_temps(bs, &tfiles, &tbytes, err)) < 0)
			goto out;
		nfiles = sc.n, stored = sc.bytes, loose = sc.loose_bytes, nloose = sc.loose;
		if (local)
			where = json_pack(
				"{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "store",
				strncmp(described, "dir:", 4) == 0 ? described + 4 : described,
				"files", (json_int_t)nfiles, "bytes", (json_int_t)stored,
				"unreferenced_files", (json_int_t)nloose, "unreferenced_bytes",
				(json_int_t)loose, "snapshot_files", (json_int_t)sc.snap,
				"snapshot_bytes", (json_int_t)sc.snap_bytes, "temp_files",
				(json_int_t)tfiles, "temp_bytes", (json_int_t)tbytes);
		else
			where = json_pack(
				"{s:s,s:I,s:I,s:I,s:I,s:I,s:I}", "store", described, "objects",
				(json_int_t)nfiles, "bytes", (json_int_t)stored,
				"unreferenced_objects", (json_int_t)nloose, "unreferenced_bytes",
				(json_int_t)loose, "snapshot_objects", (json_int_t)sc.snap,
				"snapshot_bytes", (json_int_t)sc.snap_bytes);
		if (!where) {
			rc = oom(err);
			goto out;
		}
		json_object_set_new(doc, local ? "disk" : "bucket", where);
	}
	json_object_set_new(json_object_get(doc, "budget"), "over",
			    json_boolean((cfg->retention.budget_bytes &&
					  kept_bytes > cfg->retention.budget_bytes) ||
					 (cfg->retention.budget_rows &&
					  (uint64_t)json_integer_value(json_object_get(
						  total, "rows")) > cfg->retention.budget_rows)));
	*out = doc;
	doc = NULL;
out:
	db_result_free(res);
	db_result_free(sres);
	free(kept);
	free(snaps);
	json_decref(doc);
	return rc;
}

void retention_newer_orphans_msg(char *out, size_t n, const retention_result *r)
{
	char newest[TIME_FMT_MAX];

	if (r->db_newest_us)
		time_format(newest, r->db_newest_us);
	snprintf(out, n,
		 "%s %" PRIu64 " unreferenced blobs (%" PRIu64 " bytes) put after %s%s%s:"
		 " the database may be behind the blob store (restored from an older backup?),"
		 " and they may be the captures stored since, evidence of findings among them."
		 " They are kept for as long as a capture lives (retention.summary_days):"
		 " ingest their files again (or `profreg collect`) and run `profreg blobs check`",
		 r->dry_run ? "would keep" : "kept", r->orphans_kept_newer, r->orphan_kept_bytes,
		 r->db_newest_us ? "the newest capture or snapshot the database holds ("
				 : "anything the database holds (it has no capture or snapshot)",
		 r->db_newest_us ? newest : "", r->db_newest_us ? ")" : "");
}

void retention_over_budget_msg(char *out, size_t n, const retention_result *r)
{
	size_t k = 0;

#define ADD(...) (k < n ? (void)(k += (size_t)snprintf(out + k, n - k, __VA_ARGS__)) : (void)0)
	ADD("over budget: what is left cannot be cut further:");
	if (r->budget_bytes && r->bytes_used > r->budget_bytes)
		ADD(" %" PRIu64 " bytes of blobs (budget %" PRIu64
		    "), kept by protected (forensic or "
		    "pinned) captures;", r->bytes_used, r->budget_bytes);
	if (r->budget_rows && r->rows_used > r->budget_rows)
		ADD(" %" PRIu64 " rows (budget %" PRIu64 "): %" PRIu64
		    " in protected (forensic or pinned) captures, %" PRIu64
		    " in hot captures the budget may not cut further (summary_top 0, or no more"
		    " rows than their top functions);", r->rows_used, r->budget_rows,
		    r->protected_rows, r->uncut_hot_rows);
	ADD(" nothing protected or hot was deleted");
#undef ADD
}
