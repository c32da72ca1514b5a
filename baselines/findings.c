/*
 * findings.c: stored findings (tables `findings` and `run_findings`; see
 * findings.h). Every statement on them is here.
 */
#define _POSIX_C_SOURCE 200809L
#include "baselines/findings.h"
#include "common/buf.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int oom(pr_error *err)
{
	return pr_error_set(err, PR_ENOMEM, "out of memory");
}

static const char *fmt_f(char *b, size_t n, double v)
{
	if (isnan(v) || isinf(v))
		return NULL;
	snprintf(b, n, "%.17g", v);
	return b;
}

static int replace_str(char **dst, const char *src)
{
	char *c = strdup(src ? src : "");

	if (!c)
		return PR_ENOMEM;
	free(*dst);
	*dst = c;
	return 0;
}

/*
 * A finding stored by an earlier run: what this run prints and pages is
 * the stored finding, not this run's recomputation of it.
 */
static int load_stored(finding *f, db *d, pr_error *err)
{
	static const char sql[] =
		"select direction, severity, baseline_share, current_share, "
		"delta, rel_delta, ci_low,"
		" ci_high, p_value, q_value, mw_p, score, baseline_captures, current_captures,"
		" current_release, to_jsonb(baseline_releases)::text,"
		" coalesce((detail -> 'captures')::text, '{}'), detail ->> 'test', baseline_id"
		" from findings where id = $1";
	char id[24];
	const char *p[1] = {id};
	PGresult *res = NULL;
	const char *dir;
	int rc;

	snprintf(id, sizeof(id), "%" PRId64, f->id);
	if ((rc = db_exec(d, &res, err, "reading a stored finding", sql, 1, p)) < 0)
		return rc;
	if (db_rows(res) != 1) {
		rc = pr_error_set(err, PR_EDB, "database: finding %s vanished while it was stored",
				  id);
		goto out;
	}
	dir = db_get_text(res, 0, 0);
	f->direction = strcmp(dir, "regression") == 0 ? FINDING_REGRESSION
		       : strcmp(dir, "improvement") == 0 ? FINDING_IMPROVEMENT
							 : FINDING_RELATIVE_SHIFT;
	if (stats_severity_parse(&f->severity, db_get_text(res, 0, 1)) < 0)
		f->severity = STATS_SEV_NONE;
#define NUM(col) (PQgetisnull(res, 0, col) ? NAN : db_get_f64(res, 0, col))
	f->baseline_share = NUM(2);
	f->current_share = NUM(3);
	f->delta = NUM(4);
	f->rel_delta = NUM(5);
	f->ci_low = NUM(6);
	f->ci_high = NUM(7);
	f->p_value = NUM(8);
	f->q_value = NUM(9);
	f->mw_p = NUM(10);
	f->score = NUM(11);
#undef NUM
	f->baseline_captures = (size_t)db_get_i64(res, 0, 12);
	f->current_captures = (size_t)db_get_i64(res, 0, 13);
	f->baseline_id = db_get_i64(res, 0, 18);
	if (replace_str(&f->current_release, db_get_text(res, 0, 14)) < 0 ||
	    replace_str(&f->baseline_releases, db_get_text(res, 0, 15)) < 0 ||
	    replace_str(&f->capture_ids, db_get_text(res, 0, 16)) < 0 ||
	    (!PQgetisnull(res, 0, 17) && replace_str(&f->test, db_get_text(res, 0, 17)) < 0))
		rc = oom(err);
out:
	db_result_free(res);
	return rc;
}

int findings_store(analysis *a, db *d, int64_t run_id, pr_error *err)
{
	static const char sql[] =
		"insert into findings (run_id, service_id, profile_type, function_id, function,"
		" direction, baseline_share, current_share, delta, rel_delta, ci_low, ci_high,"
		" p_value, q_value, mw_p, score, severity, baseline_captures, current_captures,"
		" current_release, baseline_releases, baseline_id, fingerprint, detail)"
		" values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16,"
		" $17, $18, $19, $20, array(select jsonb_array_elements_text($21::jsonb)),"
		" nullif($22::bigint, 0), $23, $24::jsonb)"
		/*
		 * A stored finding never changes: its release, window and
		 * captures are what it was found on. A later run that sees it
		 * again only records that it did (run_findings).
		 */
		" on conflict (fingerprint) where status = 'open' do update set updated_at = now()"
		" returning id, xmax = 0";
	int rc = 0;

	for (size_t i = 0; i < a->ntests && a->tests[i].significant; i++) {
		finding *f = &a->tests[i];
		char run[24], sid[24], fid[24], bid[24], nb[24], nc[24], num[10][32];
		buf detail = BUF_INIT, fp = BUF_INIT;
		PGresult *res = NULL;
		const char *p[24];

		snprintf(run, sizeof(run), "%" PRId64, run_id);
		snprintf(sid, sizeof(sid), "%" PRId64, f->service_id);
		snprintf(fid, sizeof(fid), "%" PRId64, f->function_id);
		snprintf(bid, sizeof(bid), "%" PRId64, f->baseline_id);
		snprintf(nb, sizeof(nb), "%zu", f->baseline_captures);
		snprintf(nc, sizeof(nc), "%zu", f->current_captures);
		if (buf_printf(&fp, "%" PRId64 "/%s/%" PRId64 "/%s", f->service_id, f->type,
			       f->function_id, f->current_release) < 0 ||
		    buf_printf(&detail,
			       "{\"test\":\"%s\",\"rate_ratio\":%s,\"at_us\":%" PRId64
			       ",\"window_us\":%" PRId64 ",\"rel_margin\":%g,\"abs_margin\":%g,"
			       "\"fdr\":%g,\"mw_alpha\":%g,\"min_baseline\":%zu,\"captures\":%s}",
			       f->test,
			       isnan(f->rate_ratio) ? "null" : fmt_f(num[9], 32, f->rate_ratio),
			       a->opts.at_us, a->opts.window_us, a->opts.rel_margin,
			       a->opts.abs_margin, a->opts.fdr, a->opts.mw_alpha,
			       a->opts.min_baseline, f->capture_ids) < 0) {
			buf_release(&fp);
			rc = oom(err);
			goto out;
		}
		p[0] = run, p[1] = sid, p[2] = f->type, p[3] = fid, p[4] = f->function;
		p[5] = finding_dir_name(f->direction);
		p[6] = fmt_f(num[0], 32, f->baseline_share);
		p[7] = fmt_f(num[1], 32, f->current_share);
		p[8] = fmt_f(num[2], 32, f->delta);
		p[9] = fmt_f(num[3], 32, f->rel_delta);
		p[10] = fmt_f(num[4], 32, f->ci_low);
		p[11] = fmt_f(num[5], 32, f->ci_high);
		p[12] = fmt_f(num[6], 32, f->p_value);
		p[13] = fmt_f(num[7], 32, f->q_value);
		p[14] = fmt_f(num[8], 32, f->mw_p);
		p[15] = fmt_f(num[9], 32, f->score);
		p[16] = stats_severity_name(f->severity);
		p[17] = nb, p[18] = nc, p[19] = f->current_release, p[20] = f->baseline_releases;
		p[21] = bid, p[22] = fp.ptr, p[23] = detail.ptr;
		rc = db_exec(d, &res, err, "storing a finding", sql, 24, p);
		buf_release(&detail);
		buf_release(&fp);
		if (rc < 0)
			goto out;
		f->id = db_get_i64(res, 0, 0);
		f->stored_before = !db_get_bool(res, 0, 1);
		db_result_free(res);
		if (f->stored_before && (rc = load_stored(f, d, err)) < 0)
			goto out;
		if (run_id > 0) {
			static const char seen[] = "insert into run_findings (run_id, finding_id)"
						   " values ($1, $2) on conflict do nothing";
			char id[24];
			const char *q[2] = {run, id};
			snprintf(id, sizeof(id), "%" PRId64, f->id);
			if ((rc = db_exec(d, NULL, err, "recording a run's finding", seen, 2, q)) <
			    0)
				goto out;
		}
	}
out:
	return rc;
}

int findings_get(finding *out, findings_meta *meta, db *d, int64_t id, pr_error *err)
{
	static const char sql[] =
		"select f.service_id, s.name, f.profile_type, f.function_id, f.function,"
		" coalesce(fn.file, ''), f.status,"
		" coalesce((f.detail ->> 'at_us')::bigint, 0), (f.detail ->> 'rel_margin')::float8,"
		" (f.detail ->> 'abs_margin')::float8, coalesce((f.detail ->> "
		"'min_baseline')::int, 2),"
		" coalesce((f.detail ->> 'rate_ratio')::float8, 'NaN'::float8)"
		" from findings f join services s on s.id = f.service_id"
		" left join functions fn on fn.id = f.function_id where f.id = $1";
	char sid[24];
	const char *p[1] = {sid};
	PGresult *res = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(meta, 0, sizeof(*meta));
	snprintf(sid, sizeof(sid), "%" PRId64, id);
	if ((rc = db_exec(d, &res, err, "reading the finding", sql, 1, p)) < 0)
		return rc;
	if (db_rows(res) != 1) {
		rc = pr_error_set(err, PR_ENOTFOUND, "finding %" PRId64 " not found", id);
		goto out;
	}
	out->id = id;
	out->significant = true;
	out->stored_before = true;
	out->service_id = db_get_i64(res, 0, 0);
	out->function_id = db_get_i64(res, 0, 3);
	out->rate_ratio = db_get_f64(res, 0, 11);
	if (!(out->service = strdup(db_get_text(res, 0, 1))) ||
	    !(out->type = strdup(db_get_text(res, 0, 2))) ||
	    !(out->function = strdup(db_get_text(res, 0, 4))) ||
	    !(out->file = strdup(db_get_text(res, 0, 5)))) {
		rc = oom(err);
		goto out;
	}
	snprintf(meta->status, sizeof(meta->status), "%s", db_get_text(res, 0, 6));
	meta->at_us = db_get_i64(res, 0, 7);
	meta->rel_margin = db_get_f64(res, 0, 8);
	meta->abs_margin = db_get_f64(res, 0, 9);
	meta->min_baseline = (size_t)db_get_i64(res, 0, 10);
	rc = load_stored(out, d, err);
out:
	if (rc < 0)
		finding_clear(out);
	db_result_free(res);
	return rc;
}

int findings_resolve(db *d, int64_t id, const char *note, pr_error *err)
{
	static const char sql[] =
		"update findings set status = 'resolved', resolved_at = "
		"now(), resolution_note = $2,"
		" updated_at = now() where id = $1 and status = 'open'";
	char sid[24];
	const char *p[2] = {sid, note};
	PGresult *res = NULL;
	int rc;

	snprintf(sid, sizeof(sid), "%" PRId64, id);
	if ((rc = db_exec(d, &res, err, "resolving the finding", sql, 2, p)) < 0)
		return rc;
	if (strcmp(PQcmdTuples(res), "1") != 0)
		rc = pr_error_set(err, PR_ENOTFOUND, "finding %" PRId64 " is not an open finding",
				  id);
	db_result_free(res);
	return rc;
}

int findings_set_suspects(db *d, int64_t run_id, int64_t finding_id, const char *json,
			  pr_error *err)
{
	static const char sql[] =
		"update run_findings set suspects = $3::jsonb where "
		"run_id = $1 and finding_id = $2";
	char rid[24], fid[24];
	const char *p[3] = {rid, fid, json};

	snprintf(rid, sizeof(rid), "%" PRId64, run_id);
	snprintf(fid, sizeof(fid), "%" PRId64, finding_id);
	return db_exec(d, NULL, err, "storing suspect commits", sql, 3, p);
}

int findings_get_suspects(char **out, db *d, int64_t run_id, int64_t finding_id, pr_error *err)
{
	static const char sql[] =
		"select suspects::text from run_findings where finding_id = $2"
		" and suspects is not null and ($1::bigint = 0 or run_id = $1)"
		" order by run_id desc limit 1";
	char rid[24], fid[24];
	const char *p[2] = {rid, fid};
	PGresult *res = NULL;
	int rc;

	*out = NULL;
	snprintf(rid, sizeof(rid), "%" PRId64, run_id > 0 ? run_id : 0);
	snprintf(fid, sizeof(fid), "%" PRId64, finding_id);
	if ((rc = db_exec(d, &res, err, "reading suspect commits", sql, 2, p)) < 0)
		return rc;
	if (db_rows(res) == 1 && !(*out = strdup(db_get_text(res, 0, 0))))
		rc = oom(err);
	db_result_free(res);
	return rc;
}
