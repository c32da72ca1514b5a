/*
 * findings.c: stored findings (tables `findings` and `run_findings`; see
 * findings.h). Every statement on them is here.
 */
#define _POSIX_C_SOURCE 200809L
#include "baselines/findings.h"
#include "common/buf.h"

#include <inttypes.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DAY_US ((int64_t)86400 * 1000000)

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
static const char stored_sql[] =
	"select direction, severity, baseline_share, current_share, "
	"delta, rel_delta, ci_low,"
	" ci_high, p_value, q_value, mw_p, score, baseline_captures, current_captures,"
	" current_release, to_jsonb(baseline_releases)::text,"
	" coalesce((detail -> 'captures')::text, '{}'), detail ->> 'test', baseline_id,"
	" kind, detail ->> 'cost_unit', detail ->> 'renamed_from', coalesce(incident_id, 0),"
	" coalesce((detail ->> 'week_adjusted')::boolean, false),"
	/* The look it was last stored at: an escalation's, not its first. */
	" coalesce((detail ->> 'look')::int, 0), (detail ->> 'host_p')::float8,"
	" (detail ->> 'hours_p')::float8"
	" from findings where id = $1";

/* f as stored_sql read it into res (which this frees). */
static int stored_from(finding *f, PGresult *res, pr_error *err)
{
	char id[24];
	const char *dir;
	int rc = 0;

	snprintf(id, sizeof(id), "%" PRId64, f->id);
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
	f->host_p = NUM(25); /* absent (not judged on new hosts, or stored before it): NaN */
	f->hours_p = NUM(26);
	f->score = NUM(11);
#undef NUM
	f->baseline_captures = (size_t)db_get_i64(res, 0, 12);
	f->current_captures = (size_t)db_get_i64(res, 0, 13);
	f->baseline_id = db_get_i64(res, 0, 18);
	/* A cost finding's values are its unit's, never shares: keep what it measured. */
	f->kind = finding_static_name(db_get_text(res, 0, 19));
	if (!f->kind)
		f->kind = FINDING_KIND_SHARE;
	f->cost_unit = NULL;
	if (strcmp(f->kind, FINDING_KIND_COST) == 0) {
		if (!PQgetisnull(res, 0, 20))
			f->cost_unit = finding_static_name(db_get_text(res, 0, 20));
		if (!f->cost_unit)
			f->cost_unit = FINDING_KIND_COST; /* a unit this version does not know */
	}
	/*
	 * Its incident, merged on an earlier run: a re-run that does not link
	 * it again (no suspect commits this time) must not page it beside its
	 * lead. Whether it leads is findings_incident_lead's to say.
	 */
	f->incident_id = db_get_i64(res, 0, 22);
	f->incident_lead = false;
	f->weekly = db_get_bool(res, 0, 23);
	if (db_get_i64(res, 0, 24) > 0)
		f->look = (size_t)db_get_i64(res, 0, 24);
	free(f->renamed_from);
	f->renamed_from = NULL;
	if ((!PQgetisnull(res, 0, 21) && !(f->renamed_from = strdup(db_get_text(res, 0, 21)))) ||
	    replace_str(&f->current_release, db_get_text(res, 0, 14)) < 0 ||
	    replace_str(&f->baseline_releases, db_get_text(res, 0, 15)) < 0 ||
	    replace_str(&f->capture_ids, db_get_text(res, 0, 16)) < 0 ||
	    (!PQgetisnull(res, 0, 17) && replace_str(&f->test, db_get_text(res, 0, 17)) < 0))
		rc = oom(err);
out:
	db_result_free(res);
	return rc;
}

static int load_stored(finding *f, db *d, pr_error *err)
{
	char id[24];
	const char *p[1] = {id};
	PGresult *res = NULL;
	int rc;

	snprintf(id, sizeof(id), "%" PRId64, f->id);
	if ((rc = db_exec(d, &res, err, "reading a stored finding", stored_sql, 1, p)) < 0)
		return rc;
	return stored_from(f, res, err);
}

/*
 * Record a state change: the current state on the row, and its history.
 * A finding that closes keeps the logical time of the run that closed it
 * (closed_at_us, the run's --at): a run of an earlier night after that
 * sees the finding as it was then, and links to it (findings_store).
 */
static const char state_sql[] =
	"with u as (update findings set state = $2, updated_at = now(),"
	"   fixed_by = coalesce($5, fixed_by),"
	"   detail = case when $2 in ('candidate', 'confirmed') then detail"
	"                 else detail || jsonb_build_object('closed_at_us', $6::bigint) end,"
	"   status = case when $2 in ('candidate', 'confirmed') then status"
	"                 else 'resolved' end,"
	"   resolved_at = case when $2 in ('candidate', 'confirmed') then resolved_at"
	"                      else now() end,"
	"   resolution_note = case when $2 in ('candidate', 'confirmed')"
	"                          then resolution_note else $4 end"
	"   where id = $1 returning id)"
	" insert into finding_states (finding_id, state, run_id, reason)"
	" select id, $2, nullif($3::bigint, 0), $4 from u";

/* The parameters of state_sql. */
typedef struct state_args {
	char sid[24], rid[24], at[24];
	const char *p[6];
} state_args;

static void state_args_fill(state_args *s, int64_t id, const char *state, int64_t run_id,
			    int64_t at_us, const char *reason, const char *fixed_by)
{
	snprintf(s->sid, sizeof(s->sid), "%" PRId64, id);
	snprintf(s->rid, sizeof(s->rid), "%" PRId64, run_id);
	snprintf(s->at, sizeof(s->at), "%" PRId64, at_us);
	s->p[0] = s->sid, s->p[1] = state, s->p[2] = s->rid, s->p[3] = reason;
	s->p[4] = fixed_by, s->p[5] = s->at;
}

static int set_state(db *d, int64_t id, const char *state, int64_t run_id, int64_t at_us,
		     const char *reason, const char *fixed_by, pr_error *err)
{
	state_args s;

	state_args_fill(&s, id, state, run_id, at_us, reason, fixed_by);
	return db_exec_repeat(d, NULL, err, "recording a finding's state", state_sql, 6, s.p, 0);
}

/* One look at a finding's release: this run's test of its function. */
static const char look_sql[] =
	"insert into finding_looks (finding_id, look, analysed_at, run_id, significant,"
	" p_value, p_seq, q_value, current_share, delta, ci_low, ci_high, current_captures)"
	" values ($1, $2, 'epoch'::timestamptz + $3::bigint * interval '1 microsecond',"
	" nullif($4::bigint, 0), $5, $6, $7, $8, $9, $10, $11, $12, $13)"
	" on conflict (finding_id, analysed_at) do nothing";

/* The parameters of look_sql. */
typedef struct look_args {
	char id[24], look[24], at[24], rid[24], nc[24], num[7][32];
	const char *p[13];
} look_args;

static void look_args_fill(look_args *l, const finding *f, int64_t run_id,
			   const analysis_opts *o, bool significant)
{
	const char **p = l->p;

	snprintf(l->id, sizeof(l->id), "%" PRId64, f->id);
	snprintf(l->look, sizeof(l->look), "%zu", f->look ? f->look : 1);
	snprintf(l->at, sizeof(l->at), "%" PRId64, o->at_us);
	snprintf(l->rid, sizeof(l->rid), "%" PRId64, run_id);
	snprintf(l->nc, sizeof(l->nc), "%zu", f->current_captures);
	p[0] = l->id, p[1] = l->look, p[2] = l->at, p[3] = l->rid;
	p[4] = significant ? "true" : "false";
	p[5] = fmt_f(l->num[0], 32, f->p_value);
	p[6] = fmt_f(l->num[1], 32, f->p_seq);
	p[7] = fmt_f(l->num[2], 32, f->q_value);
	p[8] = fmt_f(l->num[3], 32, f->current_share);
	p[9] = fmt_f(l->num[4], 32, f->delta);
	p[10] = fmt_f(l->num[5], 32, f->ci_low);
	p[11] = fmt_f(l->num[6], 32, f->ci_high);
	p[12] = l->nc;
}

static int record_look(db *d, const finding *f, int64_t run_id, const analysis_opts *o,
		       bool significant, pr_error *err)
{
	look_args l;

	look_args_fill(&l, f, run_id, o, significant);
	return db_exec_repeat(d, NULL, err, "recording a look at a finding", look_sql, 13, l.p, 0);
}

/*
 * A significant finding's state after this look: a new one starts as a
 * candidate, or confirmed at once when it is critical (confirm_critical)
 * or one look is enough (confirm_looks <= 1); a candidate is confirmed
 * once it was significant on confirm_looks different looks. A critical
 * finding of one capture waits for its next look all the same: one
 * capture is one witness, and an odd one (a burst of a rare request, a
 * host that was swapping) looks exactly like a regression, with nothing
 * for the rank test to set it against.
 *
 * Looks count only as far as they judged more captures: a run later the
 * same day with nothing new (a rerun after a failure, an analyze by
 * hand) counts its nights back from its own time, so cuts the night's
 * captures in two and calls it a second look; it is no new evidence.
 * The captures a look judged are all of its release's so far, so a later
 * night judges more, never as many.
 */
static const char looks_sql[] =
	"select least(count(distinct look), count(distinct coalesce(current_captures, -look)))"
	" from finding_looks where finding_id = $1 and significant";

/* Whether next_state needs the finding's count of looks: not once it is confirmed. */
static bool needs_looks(const finding *f)
{
	return strcmp(f->state, "candidate") == 0 || !f->stored_before;
}

/*
 * Whether an earlier finding of the same regression (fingerprint $1:
 * service, type, function and release) was confirmed, then closed as
 * fixed (a rollback too) or resolved by hand, not as noise nor accepted.
 * The release running again with the rise is that regression back, not a
 * new one.
 */
static const char again_sql[] =
	"select exists (select 1 from findings e where e.fingerprint = $1"
	"   and e.id <> $2::bigint and e.status <> 'open' and e.state in ('fixed', 'resolved')"
	"   and not e.accepted"
	"   and exists (select 1 from finding_states s where s.finding_id = e.id"
	"     and s.state = 'confirmed'))";

/* Regression f's ids and rise as the parameters of the queries of a rise. */
static void rise_text(const finding *f, char sid[24], char fid[24], char id[24], char low[32],
		      char delta[32])
{
	snprintf(sid, 24, "%" PRId64, f->service_id);
	snprintf(fid, 24, "%" PRId64, f->function_id);
	snprintf(id, 24, "%" PRId64, f->id);
	snprintf(low, 32, "%.17g", f->ci_low);
	snprintf(delta, 32, "%.17g", f->delta);
}

/*
 * The release (quoted) and id of the oldest open regression of the same function in
 * another release that was significant on a look of another run, in the
 * baseline window before this run's time and no later than it, with a
 * rise its interval shares with this one's: the same rise, seen in other
 * captures. A service that deploys several times a day judges each
 * release once (a gate and the nightly of one day are one look), so a
 * rise shipped in five releases of a few hours was five candidates that
 * never reached a second look and never paged. Two releases, each
 * significant on its own captures, are two looks at the rise; each spent
 * its own look's alpha, so the false finding rate is no more than that of
 * one release on two nights. A look of a past night's rerun that came
 * after it, a candidate left open for weeks, or a rise of another size
 * confirms nothing.
 */
static const char chain_sql[] =
	"select quote_literal(e.current_release) || ' (finding ' || e.id || ')'"
	"  from findings e"
	" where e.service_id = $1::bigint and e.profile_type = $2"
	"   and coalesce(e.function_id, 0) = $3::bigint and e.function = $4 and e.kind = $5"
	"   and e.direction = 'regression' and e.status = 'open' and e.current_release <> $6"
	"   and e.id <> $7::bigint and coalesce(e.ci_low, e.delta) <= $9::float8"
	"   and $8::float8 <= coalesce(e.ci_high, e.delta)"
	"   and exists (select 1 from finding_looks l"
	"     where l.finding_id = e.id and l.significant and coalesce(l.run_id, 0) <> $10::bigint"
	"       and l.analysed_at <= " DB_US_TO_TS("$11") " and l.analysed_at > " DB_US_TO_TS(
		"$11::bigint - $12::bigint") ")"
					     " order by e.id limit 1";

/*
 * The state f moves to after this look, with its reason in why (NULL:
 * it stays as it is), from the count of its significant looks, whether
 * the same regression of its release was confirmed before (again) and
 * the release in which an earlier finding saw the same rise (chain,
 * NULL when none: chain_sql).
 *
 * At the release's last planned look (max_looks) one look confirms: no
 * later look can come (the spending gives it no alpha), and a
 * regression first significant then (a canary of one host for three
 * nights, then every host) stayed a candidate for good and never paged.
 * That look spent its share of alpha as every look does: the false
 * finding rate stays the one budgeted.
 */
static const char *next_state(const finding *f, size_t looks, bool again, const char *chain,
			      const analysis_opts *o, char why[160])
{
	bool critical = o->confirm_critical && f->severity == STATS_SEV_CRITICAL &&
			f->current_captures >= 2 && !f->hours_unseen;
	bool last = o->max_looks > 0 && f->look >= o->max_looks;

	if (critical || looks >= o->confirm_looks) {
		snprintf(why, 160,
			 critical ? "critical: confirmed at once (look %zu)"
				  : "significant on %zu looks", critical ? f->look : looks);
		return "confirmed";
	}
	if (chain && looks + 1 >= o->confirm_looks) {
		snprintf(why, 160, "significant on %zu look%s, and the same rise in release %.60s",
			 looks, looks == 1 ? "" : "s", chain);
		return "confirmed";
	}
	if (again && !f->stored_before) {
		snprintf(why, 160,
			 "significant at look %zu: release '%.40s' runs again with its "
			 "regression, confirmed before",
			 f->look ? f->look : 1, f->current_release);
		return "confirmed";
	}
	if (last) {
		snprintf(why, 160,
			 "significant at look %zu, the last planned: no later look can confirm it",
			 f->look);
		return "confirmed";
	}
	if (!f->stored_before) {
		snprintf(why, 160,
			 "significant at look %zu; confirmed once significant on %zu looks",
			 f->look ? f->look : 1, o->confirm_looks);
		return "candidate";
	}
	return NULL;
}

/*
 * What storing a finding does after its row: its look, its count of
 * looks, the run's record of it, then its next state and, when an earlier
 * run stored it, the stored finding read back. Two round trips.
 */
static int store_after_row(finding *f, db *d, int64_t run_id, const analysis_opts *o,
			   const char *fp, bool escalated, pr_error *err)
{
	static const char seen_sql[] = "insert into run_findings (run_id, finding_id)"
				       " values ($1, $2) on conflict do nothing";
	look_args l;
	state_args st;
	char run[24], why[160];
	const char *seen[2] = {run, l.id}, *again_p[2] = {fp, l.id}, *state = NULL, *chain = NULL;
	char sid[24], fid[24], id[24], low[32], delta[32], high[32], at[24], window[24];
	const char *chain_p[12] = {sid,
				   f->type,
				   fid,
				   f->function,
				   f->kind ? f->kind : FINDING_KIND_SHARE,
				   f->current_release,
				   id,
				   low,
				   high,
				   run,
				   at,
				   window};
	db_call calls[5];
	PGresult *res[5] = {0};
	size_t n = 0, counted = 0, again = 0, stored = 0, chained = 0;
	int rc;

	look_args_fill(&l, f, run_id, o, true);
	snprintf(run, sizeof(run), "%" PRId64, run_id);
	calls[n++] = (db_call){"recording a look at a finding", look_sql, 13, l.p, NULL, NULL, 0};
	if (needs_looks(f)) {
		counted = n;
		calls[n++] = (db_call){"counting a finding's looks", looks_sql, 1, l.p, NULL,
				       NULL, 0};
	}
	if (counted && f->direction == FINDING_REGRESSION) {
		rise_text(f, sid, fid, id, low, delta);
		if (isfinite(f->ci_high))
			snprintf(high, sizeof(high), "%.17g", f->ci_high);
		else
			snprintf(high, sizeof(high), "%s", f->ci_high > 0 ? "Infinity" : delta);
		snprintf(at, sizeof(at), "%" PRId64, o->at_us);
		snprintf(window, sizeof(window), "%" PRId64,
			 o->window_us > 0 ? o->window_us : INT64_C(14) * 86400 * 1000000);
		chained = n;
		calls[n++] = (db_call){"looking for the same rise in another release",
				       chain_sql,
				       12,
				       chain_p,
				       NULL,
				       NULL,
				       0};
	}
	if (!f->stored_before) {
		again = n;
		calls[n++] = (db_call){
			"reading a finding's earlier life", again_sql, 2, again_p, NULL, NULL, 0};
	}
	if (run_id > 0)
		calls[n++] = (db_call){"recording a run's finding", seen_sql, 2, seen, NULL, NULL,
				       0};
	if ((rc = db_exec_pipeline(d, res, err, calls, n)) < 0)
		return rc;
	if (chained && db_rows(res[chained]))
		chain = db_get_text(res[chained], 0, 0);
	if (counted)
		state = next_state(f, (size_t)db_get_i64(res[counted], 0, 0),
				   again && db_get_bool(res[again], 0, 0), chain, o, why);
	for (size_t i = 0; i < n; i++)
		db_result_free(res[i]);
	memset(res, 0, sizeof(res));
	n = 0;
	if (state) {
		state_args_fill(&st, f->id, state, run_id, o->at_us, why, NULL);
		calls[n++] =
			(db_call){"recording a finding's state", state_sql, 6, st.p, NULL, NULL, 0};
	}
	if (f->stored_before && !escalated) {
		stored = n;
		calls[n++] = (db_call){"reading a stored finding", stored_sql, 1, l.p, NULL, NULL,
				       0};
	}
	if (n == 0)
		return 0;
	if ((rc = db_exec_pipeline(d, res, err, calls, n)) < 0)
		return rc;
	if (state)
		snprintf(f->state, sizeof(f->state), "%s", state);
	if (f->stored_before && !escalated) {
		rc = stored_from(f, res[stored], err);
		res[stored] = NULL;
	}
	for (size_t i = 0; i < n; i++)
		db_result_free(res[i]);
	return rc;
}

/*
 * Two option values the same, as a finding's detail keeps them (%g, six
 * digits); one a finding stored before it was kept (NaN) does not count.
 */
static bool same_opt(double stored, double now)
{
	return isnan(stored) || fabs(stored - now) <= 1e-5 * fmax(fabs(stored), fabs(now));
}

/*
 * Whether the run's options are those a stored finding was judged with:
 * columns col to col + 4 of row r hold its rel_margin, abs_margin, fdr,
 * window_us and min_baseline (OPTIONS_COLS), NaN or 0 when not kept.
 */
static bool same_options_at(const PGresult *res, int r, int col, const analysis_opts *o)
{
	int64_t window = db_get_i64(res, r, col + 3), fewest = db_get_i64(res, r, col + 4);

	return same_opt(db_get_f64(res, r, col), o->rel_margin) &&
	       same_opt(db_get_f64(res, r, col + 1), o->abs_margin) &&
	       same_opt(db_get_f64(res, r, col + 2), o->fdr) &&
	       (window == 0 || window == o->window_us) &&
	       (fewest == 0 || fewest == (int64_t)o->min_baseline);
}

/* What a finding was judged with, as same_options_at reads it. */
#define OPTIONS_COLS(f) \
	" coalesce((" f "detail ->> 'rel_margin')::float8, 'NaN')," \
	" coalesce((" f "detail ->> 'abs_margin')::float8, 'NaN')," \
	" coalesce((" f "detail ->> 'fdr')::float8, 'NaN')," \
	" coalesce((" f "detail ->> 'window_us')::bigint, 0)," \
	" coalesce((" f "detail ->> 'min_baseline')::bigint, 0)"

/*
 * Whether this run's figures of an open finding are worse news than the
 * ones stored by an earlier run: a regression where an improvement or a
 * relative shift was stored, or a more severe regression. An early look
 * sees fewer captures and a smaller effect (a regression that grows with
 * load, a canary's first night), so the stored finding can say "medium"
 * while the release's captures now say "critical"; a gate and paging that
 * read the stored figures would pass what is in front of them.
 */
static bool worse_than_stored(const finding *f, const char *direction, const char *severity)
{
	stats_severity stored;

	if (f->direction != FINDING_REGRESSION)
		return false;
	if (strcmp(direction, "regression") != 0)
		return true;
	if (stats_severity_parse(&stored, severity) < 0)
		stored = STATS_SEV_NONE;
	return f->severity > stored;
}

/*
 * The stored finding takes this run's figures, from the parameters p of
 * findings_store's insert, and its state history says from what: the
 * finding then reports, gates and pages on the worst that was seen. Its
 * state is left to the look (a candidate that turned critical is
 * confirmed by it). A trigger already sent for it is not sent again.
 */
static int escalate(db *d, const finding *f, const char *const *p, int64_t run_id,
		    const char *was_direction, const char *was_severity, pr_error *err)
{
	static const char escalate_sql[] =
		"with u as (update findings set direction = $3, baseline_share = $4,"
		" current_share = $5, delta = $6, rel_delta = $7, ci_low = $8, ci_high = $9,"
		" p_value = $10, q_value = $11, mw_p = $12, score = $13, severity = $14,"
		" baseline_captures = $15, current_captures = $16,"
		" baseline_releases = array(select jsonb_array_elements_text($17::jsonb)),"
		" baseline_id = nullif($18::bigint, 0), detail = $19::jsonb, kind = $20,"
		" function = $21, updated_at = now() where id = $1 returning id, state)"
		" insert into finding_states (finding_id, state, run_id, reason)"
		" select id, state, nullif($2::bigint, 0), $22 from u";
	char id[24], run[24], why[160];
	const char *q[22];

	snprintf(id, sizeof(id), "%" PRId64, f->id);
	snprintf(run, sizeof(run), "%" PRId64, run_id);
	snprintf(why, sizeof(why), "escalated at look %zu, %zu captures: %s %s -> %s regression",
		 f->look ? f->look : 1, f->current_captures, was_severity ? was_severity : "",
		 was_direction, stats_severity_name(f->severity));
	q[0] = id, q[1] = run;
	for (int i = 0; i < 14; i++)
		q[2 + i] = p[5 + i]; /* direction .. current_captures */
	q[16] = p[20], q[17] = p[21], q[18] = p[23], q[19] = p[24], q[20] = p[4];
	q[21] = why;
	return db_exec_repeat(d, NULL, err, "escalating a stored finding", escalate_sql, 22, q, 0);
}

/*
 * f becomes the stored finding f->id, as it is stored, and the run
 * records that it saw it; no look, no change of state.
 */
static int seen_as_stored(finding *f, db *d, int64_t run_id, pr_error *err)
{
	static const char seen_sql[] = "insert into run_findings (run_id, finding_id)"
				       " values ($1, $2) on conflict do nothing";
	char run[24], id[24];
	const char *seen[2] = {run, id};
	int rc;

	f->stored_before = true;
	snprintf(run, sizeof(run), "%" PRId64, run_id);
	snprintf(id, sizeof(id), "%" PRId64, f->id);
	if (run_id > 0 && (rc = db_exec_repeat(d, NULL, err, "recording a run's finding", seen_sql,
					       2, seen, 0)) < 0)
		return rc;
	return load_stored(f, d, err);
}

/*
 * The finding of fingerprint fp closed by a run whose "now" is at or
 * after this one's: f becomes it (closed), as it is stored, and the run
 * records that it saw it. 0 and f untouched when there is none. A run
 * of an earlier night after the regression was fixed saw it as it was
 * that night, and stored and paged it as new. A finding resolved by
 * hand keeps no such time: the next run that sees the regression again
 * finds and pages it again.
 *
 * The one whose life covers the run's time (first look at or before it)
 * is taken, even when a newer finding of the fingerprint is open (the
 * release rolled back, then forward again): the open one did not exist
 * that night, and a night run again gave it a look dated before its
 * first, confirmed it and paged it. A closed one that began after the
 * run's time is taken only when none is open, as before.
 */
static int link_closed(finding *f, db *d, int64_t run_id, const analysis_opts *o, const char *fp,
		       pr_error *err)
{
	/* clang-format off */
	static const char closed_sql[] =
		"select f.id, f.state from findings f,"
		" lateral (select coalesce((select " DB_TS_TO_US("min(l.analysed_at)")
		"   from finding_looks l where l.finding_id = f.id),"
		"   (f.detail ->> 'at_us')::bigint, 0) as first_us) x"
		" where f.service_id = $1::bigint and f.fingerprint = $2 and f.status <> 'open'"
		" and (f.detail ->> 'closed_at_us')::bigint >= $3::bigint"
		" and (x.first_us <= $3::bigint or not exists (select 1 from findings o"
		"   where o.fingerprint = $2 and o.status = 'open'))"
		" order by x.first_us <= $3::bigint desc, f.id desc limit 1";
	/* clang-format on */
	char sid[24], at[24];
	const char *p[3] = {sid, fp, at};
	PGresult *res = NULL;
	int rc;

	snprintf(sid, sizeof(sid), "%" PRId64, f->service_id);
	snprintf(at, sizeof(at), "%" PRId64, o->at_us);
	if ((rc = db_exec_repeat(d, &res, err, "looking for a closed finding", closed_sql, 3, p,
				 0)) < 0 ||
	    db_rows(res) != 1)
		goto out;
	f->id = db_get_i64(res, 0, 0);
	f->closed = true;
	snprintf(f->state, sizeof(f->state), "%s", db_get_text(res, 0, 1));
	rc = seen_as_stored(f, d, run_id, err);
out:
	db_result_free(res);
	return rc;
}

/*
 * Records every release the analysis judged whole as judged (migration
 * 038), at the analysis' "now", the earliest such time kept: from then on
 * its captures may be another release's baseline (baseline.c). A release
 * that runs a few hours with no gate, never judged, was the baseline of
 * the next release's gate, its regressed captures hiding the same
 * regression shipped again.
 */
static int record_judged(const analysis *a, db *d, pr_error *err)
{
	static const char sql[] =
		"insert into judged_releases (service_id, profile_type, release, judged_at)"
		" select (e ->> 's')::bigint, e ->> 't', e ->> 'r', " DB_US_TO_TS(
			"$2") " from"
			      "   jsonb_array_elements($1::jsonb) e"
			      " on conflict (service_id, profile_type, release) do update set"
			      "   judged_at = least(judged_releases.judged_at,"
			      "   excluded.judged_at)";
	json_t *arr = json_array();
	char *text = NULL, at[24];
	const char *p[2] = {NULL, at};
	int rc = 0;

	if (!arr)
		return oom(err);
	for (size_t i = 0; i < a->njudged && rc == 0; i++) {
		const analysis_judged *j = &a->judged[i];
		if (json_array_append_new(arr,
					  json_pack("{s:I,s:s,s:s}", "s", (json_int_t)j->service_id,
						    "t", j->type, "r", j->release)) < 0)
			rc = oom(err);
	}
	if (rc == 0 && a->njudged) {
		if (!(text = json_dumps(arr, JSON_COMPACT))) {
			rc = oom(err);
		} else {
			p[0] = text;
			snprintf(at, sizeof(at), "%" PRId64, a->opts.at_us);
			rc = db_exec(d, NULL, err, "recording the releases judged", sql, 2, p);
		}
	}
	free(text);
	json_decref(arr);
	return rc;
}

int findings_store(analysis *a, db *d, int64_t run_id, pr_error *err)
{
	/* clang-format off */
	static const char sql[] =
		"insert into findings (run_id, service_id, profile_type, function_id, function,"
		" direction, baseline_share, current_share, delta, rel_delta, ci_low, ci_high,"
		" p_value, q_value, mw_p, score, severity, baseline_captures, current_captures,"
		" current_release, baseline_releases, baseline_id, fingerprint, detail, kind)"
		" values ($1, $2, $3, nullif($4::bigint, 0), $5, $6, $7, $8, $9, $10, $11, $12,"
		" $13,"
		" $14, $15, $16, $17, $18, $19, $20,"
		" array(select jsonb_array_elements_text($21::jsonb)),"
		" nullif($22::bigint, 0), $23, $24::jsonb, $25)"
		/*
		 * A stored finding keeps what it was found on: its release,
		 * window and captures. A later run that sees it again records
		 * that it did (run_findings), and changes it only when its
		 * news is worse (escalate_sql).
		 */
		" on conflict (fingerprint) where status = 'open' do update set updated_at = now()"
		" returning id, xmax = 0, state, direction, severity, coalesce(incident_id, 0),"
		" coalesce((select " DB_TS_TO_US("max(l.analysed_at)") " from finding_looks l"
		"   where l.finding_id = findings.id), (detail ->> 'at_us')::bigint, 0),"
		OPTIONS_COLS("") ","
		" coalesce((select g.lead_finding_id = findings.id from finding_groups g"
		"   where g.id = findings.incident_id), false),"
		/* Its first look: a finding that began after this run's "now". */
		" coalesce((select " DB_TS_TO_US("min(l.analysed_at)") " from finding_looks l"
		"   where l.finding_id = findings.id), (detail ->> 'at_us')::bigint, 0)";
	/* clang-format on */
	int rc = 0;

	for (size_t i = 0; i < a->ntests && a->tests[i].significant; i++) {
		finding *f = &a->tests[i];
		char run[24], sid[24], fid[24], bid[24], nb[24], nc[24], num[10][32];
		char weekend[ANALYSIS_WEEKEND_MAX];
		buf detail = BUF_INIT, fp = BUF_INIT;
		PGresult *res = NULL;
		const char *p[25];
		char *was = NULL;
		bool escalated = false;
		char state_was[sizeof(f->state)] = "";
		json_t *js;

		snprintf(run, sizeof(run), "%" PRId64, run_id);
		snprintf(sid, sizeof(sid), "%" PRId64, f->service_id);
		analysis_weekend_format(weekend, &f->week);
		snprintf(fid, sizeof(fid), "%" PRId64, f->function_id);
		snprintf(bid, sizeof(bid), "%" PRId64, f->baseline_id);
		snprintf(nb, sizeof(nb), "%zu", f->baseline_captures);
		snprintf(nc, sizeof(nc), "%zu", f->current_captures);
		/* A name is any text: jansson writes it as a JSON string. */
		js = f->renamed_from ? json_string(f->renamed_from) : NULL;
		was = js ? json_dumps(js, JSON_ENCODE_ANY) : strdup("null");
		json_decref(js);
		if (!was) {
			rc = oom(err);
			goto out;
		}
		if ((f->row == SIZE_MAX
			     ? buf_printf(&fp, "%" PRId64 "/%s/cost:%s/%s", f->service_id, f->type,
					  f->cost_unit ? finding_cost_family(f->cost_unit) : "",
					  f->current_release)
			     : buf_printf(&fp, "%" PRId64 "/%s/%" PRId64 "/%s", f->service_id,
					  f->type, f->function_id, f->current_release)) < 0 ||
		    buf_printf(&detail,
			       "{\"test\":\"%s\",\"rate_ratio\":%s,\"at_us\":%" PRId64
			       ",\"window_us\":%" PRId64 ",\"rel_margin\":%g,\"abs_margin\":%g,"
			       "\"fdr\":%g,\"mw_alpha\":%g,\"min_baseline\":%zu,\"captures\":%s,"
			       "\"look\":%zu,\"max_looks\":%zu,\"spend_rho\":%g,\"p_seq\":%.17g,"
			       "\"cost_unit\":%s%s%s,\"renamed_from\":%s,"
			       "\"renamed_from_id\":%" PRId64 ",\"weekly\":%s,"
			       "\"utc_offset_h\":%g,\"weekend\":\"%s\",\"week_adjusted\":%s,"
			       "\"host_p\":%s,\"hours_p\":%s,\"hours_unseen\":%s}",
			       f->test,
			       isnan(f->rate_ratio) ? "null" : fmt_f(num[9], 32, f->rate_ratio),
			       a->opts.at_us, a->opts.window_us, a->opts.rel_margin,
			       a->opts.abs_margin, a->opts.fdr, a->opts.mw_alpha,
			       a->opts.min_baseline, f->capture_ids, f->look ? f->look : 1,
			       a->opts.max_looks, a->opts.spend_rho, isnan(f->p_seq) ? 1 : f->p_seq,
			       f->cost_unit ? "\"" : "", f->cost_unit ? f->cost_unit : "null",
			       f->cost_unit ? "\"" : "", was, f->renamed_from_id,
			       a->opts.weekly ? "true" : "false", f->week.utc_offset_h, weekend,
			       f->weekly ? "true" : "false",
			       isnan(f->host_p) ? "null" : fmt_f(num[8], 32, f->host_p),
			       isnan(f->hours_p) ? "null" : fmt_f(num[7], 32, f->hours_p),
			       f->hours_unseen ? "true" : "false") < 0) {
			buf_release(&fp);
			free(was);
			rc = oom(err);
			goto out;
		}
		free(was);
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
		p[24] = f->kind ? f->kind : FINDING_KIND_SHARE;
		if ((rc = link_closed(f, d, run_id, &a->opts, fp.ptr, err)) < 0 || f->closed) {
			buf_release(&detail);
			buf_release(&fp);
			if (rc < 0)
				goto out;
			continue;
		}
		/* This look's captures, before the stored finding's replace them. */
		free(f->look_capture_ids);
		if (f->capture_ids && !(f->look_capture_ids = strdup(f->capture_ids))) {
			buf_release(&detail);
			buf_release(&fp);
			rc = oom(err);
			goto out;
		}
		rc = db_exec_repeat(d, &res, err, "storing a finding", sql, 25, p, 0);
		if (rc == 0 && !db_get_bool(res, 0, 1) && db_get_i64(res, 0, 13) > a->opts.at_us) {
			/*
			 * An open finding that began after this run's "now" (a
			 * night run again, --at in the past): that night did not
			 * see it. No look on it, nothing counted towards its
			 * confirmation, no escalation; the run reports it as
			 * stored and, as for a closed one (this run looked at
			 * the past), pins, links and pages nothing for it.
			 */
			f->id = db_get_i64(res, 0, 0);
			f->closed = true;
			snprintf(f->state, sizeof(f->state), "%s", db_get_text(res, 0, 2));
			db_result_free(res);
			buf_release(&detail);
			buf_release(&fp);
			if ((rc = seen_as_stored(f, d, run_id, err)) < 0)
				goto out;
			continue;
		}
		if (rc == 0) {
			f->id = db_get_i64(res, 0, 0);
			f->stored_before = !db_get_bool(res, 0, 1);
			snprintf(f->state, sizeof(f->state), "%s", db_get_text(res, 0, 2));
			snprintf(state_was, sizeof(state_was), "%s", f->state);
			/*
			 * Only a look as well founded as the stored finding's:
			 * its options, and no earlier than its last look (as
			 * findings_follow_up closes one).
			 */
			escalated = f->stored_before &&
				    worse_than_stored(f, db_get_text(res, 0, 3),
						      db_get_text(res, 0, 4)) &&
				    a->opts.at_us >= db_get_i64(res, 0, 6) &&
				    same_options_at(res, 0, 7, &a->opts);
			if (escalated) {
				/*
				 * Still in its incident: a member is not paged beside
				 * its lead, and the lead still pages for it.
				 */
				f->incident_id = db_get_i64(res, 0, 5);
				f->incident_lead = db_get_bool(res, 0, 12);
				rc = escalate(d, f, p, run_id, db_get_text(res, 0, 3),
					      db_get_text(res, 0, 4), err);
			}
			db_result_free(res);
		}
		buf_release(&detail);
		if (rc < 0 ||
		    (rc = store_after_row(f, d, run_id, &a->opts, fp.ptr, escalated, err)) < 0) {
			buf_release(&fp);
			goto out;
		}
		buf_release(&fp);
		/*
		 * The later look that confirmed it (and pages) judged more
		 * captures than the stored finding names: they are its evidence
		 * too, or retention cut the profiles the page rests on. A look
		 * that changed nothing adds none: a release that runs for weeks
		 * would keep every capture it had.
		 */
		if (f->look_capture_ids &&
		    (!f->stored_before || strcmp(state_was, f->state) == 0 || !f->capture_ids ||
		     strcmp(f->look_capture_ids, f->capture_ids) == 0)) {
			free(f->look_capture_ids);
			f->look_capture_ids = NULL;
		}
	}
	if (rc == 0)
		rc = record_judged(a, d, err);
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
		" coalesce((f.detail ->> 'rate_ratio')::float8, 'NaN'::float8),"
		" coalesce(f.state, ''), coalesce(f.incident_id, 0),"
		/* Stored before the week was judged: without it. */
		" coalesce((f.detail ->> 'weekly')::boolean, false),"
		" coalesce((f.detail ->> 'utc_offset_h')::float8, 0),"
		" coalesce(f.detail ->> 'weekend', 'sat-sun'), coalesce(f.carried_from, 0)"
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
	snprintf(out->state, sizeof(out->state), "%s", db_get_text(res, 0, 12));
	out->incident_id = db_get_i64(res, 0, 13);
	meta->weekly = db_get_bool(res, 0, 14);
	meta->week.utc_offset_h = db_get_f64(res, 0, 15);
	out->carried_from = db_get_i64(res, 0, 17);
	if (analysis_weekend_parse(&meta->week, db_get_text(res, 0, 16)) < 0) {
		rc = pr_error_set(err, PR_EDB, "database: finding %" PRId64 " has a weekend "
				  "that is not one: '%.16s'", id, db_get_text(res, 0, 16));
		goto out;
	}
	rc = load_stored(out, d, err);
out:
	if (rc < 0)
		finding_clear(out);
	db_result_free(res);
	return rc;
}

int findings_resolve(db *d, int64_t id, const char *note, bool accept, pr_error *err)
{
	/*
	 * Its state and history too: `finding list --state resolved` lists it.
	 * Accepting a finding already resolved by hand only marks it: its
	 * pages were resolved then.
	 */
	static const char sql[] =
		"with u as (update findings set status = 'resolved', state = 'resolved',"
		"   resolved_at = coalesce(resolved_at, now()), resolution_note = coalesce($2,"
		"   resolution_note), accepted = accepted or $3::boolean, updated_at = now()"
		"   where id = $1 and (status = 'open' or ($3::boolean and state = 'resolved'"
		"     and not accepted and direction = 'regression')) returning id)"
		" insert into finding_states (finding_id, state, run_id, reason)"
		" select id, 'resolved', null, left(case when $3::boolean then"
		"   coalesce('accepted by hand: ' || $2, 'accepted by hand') else"
		"   coalesce('resolved by hand: ' || $2, 'resolved by hand') end, 1024) from u";
	char sid[24];
	const char *p[3] = {sid, note, accept ? "true" : "false"};
	PGresult *res = NULL;
	int rc;

	snprintf(sid, sizeof(sid), "%" PRId64, id);
	if ((rc = db_exec(d, &res, err, "resolving the finding", sql, 3, p)) < 0)
		return rc;
	if (strcmp(PQcmdTuples(res), "1") != 0)
		rc = pr_error_set(err, PR_ENOTFOUND,
				  accept ? "finding %" PRId64 " is not a regression that is open"
					   " or resolved by hand, and not yet accepted"
					 : "finding %" PRId64 " is not an open finding",
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

/* This run's test of a stored finding's function in a judged release, or NULL. */
static const finding *test_of(const analysis *a, int64_t service_id, const char *type,
			      const char *release, int64_t function_id, const char *function,
			      const char *file)
{
	for (size_t i = 0; i < a->ntests; i++) {
		const finding *t = &a->tests[i];
		if (t->service_id != service_id || strcmp(t->type, type) != 0 ||
		    strcmp(t->current_release, release) != 0)
			continue;
		if (function_id ? t->function_id == function_id
				: (t->row == SIZE_MAX && strcmp(t->function, function) == 0 &&
				   strcmp(finding_cost_family(t->file ? t->file : ""),
					  finding_cost_family(file)) == 0))
			return t;
	}
	return NULL;
}

/* Whether this run judges a release of the service and type as a whole. */
static bool judged_release(const analysis *a, int64_t service_id, const char *type,
			   const char *release)
{
	for (size_t j = 0; j < a->njudged; j++)
		if (a->judged[j].service_id == service_id && strcmp(a->judged[j].type, type) == 0 &&
		    strcmp(a->judged[j].release, release) == 0)
			return true;
	return false;
}

static int add_closed(findings_closed *c, int64_t id)
{
	int64_t *n = realloc(c->ids, (c->n + 1) * sizeof(*n));

	if (!n)
		return PR_ENOMEM;
	c->ids = n;
	c->ids[c->n++] = id;
	return 0;
}


/*
 * Whether this run may change what the stored finding (row r of the
 * follow-up) is, judging it with its own options: a run that tests with
 * other margins, another fdr, window or fewest baseline captures asks
 * another question (an analyze with --rel-margin 0.5 found a +25% change
 * immaterial and closed a confirmed, paged finding).
 */
static bool same_options(const PGresult *res, int r, const analysis_opts *o)
{
	return same_options_at(res, r, 12, o);
}

void findings_closed_release(findings_closed *c)
{
	free(c->ids);
	memset(c, 0, sizeof(*c));
}

/* Why an allocation profile's cost finding in bytes closes (see findings_follow_up). */
#define RETIRED_BYTES \
	"its unit is retired: an allocation profile's bytes grow with uptime or the " \
	"capture's window, and are tested per second now"

/* Why a heap profile's cost finding per unit of load closes (see findings_follow_up). */
#define RETIRED_HEAP_LOAD                                                                          \
	"its unit is retired: heap bytes in use are a level, not a flow, and are no "              \
	"longer divided by load (a quieter night read as a heap regression)"

int findings_follow_up(findings_closed *out, analysis *a, db *d, int64_t run_id, pr_error *err)
{
	/*
	 * Open findings of the services and types this run judged a release
	 * of: the same release (did it go away?) or an earlier one (is it
	 * fixed by this release?).
	 */
	/* clang-format off */
	static const char sql[] =
		"select f.id, coalesce(f.function_id, 0), coalesce(f.function, ''),"
		" coalesce(fn.file, ''),"
		" f.current_release, f.direction, f.baseline_share, f.kind,"
		" coalesce(f.detail ->> 'cost_unit', ''), coalesce(f.delta, 0),"
		/* What the finding was judged with: its last look, its options. */
		" coalesce((select " DB_TS_TO_US("max(l.analysed_at)") " from finding_looks l"
		"   where l.finding_id = f.id), (f.detail ->> 'at_us')::bigint, 0),"
		/*
		 * Whether its release still runs: captured in the last night
		 * before this run's "now" ($6 is its start).
		 */
		" exists (select 1 from profiles p where p.service_id = f.service_id"
		"   and p.profile_type = f.profile_type and p.release = f.current_release"
		"   and p.captured_at >= 'epoch'::timestamptz"
		"                        + $6::bigint * interval '1 microsecond'"
		"   and p.captured_at < 'epoch'::timestamptz"
		"                       + $4::bigint * interval '1 microsecond'),"
		OPTIONS_COLS("f.") ","
		/* Whether this release ran before the finding's: a rollback to it. */
		" coalesce((select min(p.captured_at) from profiles p"
		"   where p.service_id = f.service_id and p.profile_type = f.profile_type"
		"     and p.release = $3)"
		"  < (select min(p.captured_at) from profiles p"
		"     where p.service_id = f.service_id and p.profile_type = f.profile_type"
		"       and p.release = f.current_release), false),"
		/*
		 * Whether it runs again: two captures or more of it in the
		 * last night, and a night before it (the nightly's nights,
		 * counted back from $4 by $7) when the finding's release ran
		 * and it did not. One that never stopped (a host pinned to it
		 * beside the new release) is not rolled back to when the new
		 * release misses one night of captures.
		 */
		" (select count(*) from profiles p where p.service_id = f.service_id"
		"   and p.profile_type = f.profile_type and p.release = $3 and p.total_value > 0"
		"   and p.captured_at >= 'epoch'::timestamptz"
		"                        + $6::bigint * interval '1 microsecond'"
		"   and p.captured_at < 'epoch'::timestamptz"
		"                       + $4::bigint * interval '1 microsecond') >= 2"
		" and exists (select 1 from profiles p where p.service_id = f.service_id"
		"   and p.profile_type = f.profile_type and p.release = f.current_release"
		"   and p.total_value > 0"
		"   and p.captured_at < 'epoch'::timestamptz"
		"                       + $6::bigint * interval '1 microsecond'"
		"   and not exists (select 1 from profiles q where q.service_id = f.service_id"
		"     and q.profile_type = f.profile_type and q.release = $3 and q.total_value > 0"
		"     and q.captured_at < 'epoch'::timestamptz"
		"                         + $6::bigint * interval '1 microsecond'"
		"     and ($4::bigint - " DB_TS_TO_US("q.captured_at") ") / $7::bigint"
		"       = ($4::bigint - " DB_TS_TO_US("p.captured_at") ") / $7::bigint))"
		" from findings f left join functions fn on fn.id = f.function_id"
		" where f.service_id = $1 and f.profile_type = $2 and f.status = 'open'"

		/*
		 * Another release's, found by an analysis before this one's
		 * "now": a release that started before this one (is it fixed?),
		 * or one this release ran again after (a rollback to it).
		 */
		"   and (f.current_release = $3"
		"        or (coalesce((f.detail ->> 'at_us')::bigint, 0) < $4"
		"        and ((select min(p.captured_at) from profiles p"
		"            where p.service_id = f.service_id"
		"              and p.profile_type = f.profile_type"
		"              and p.release = f.current_release)"
		"             < 'epoch'::timestamptz + $5::bigint * interval '1 microsecond'"
		"          or exists (select 1 from profiles p"
		"              where p.service_id = f.service_id"
		"                and p.profile_type = f.profile_type"
		"                and p.release = $3"
		"                and p.captured_at < 'epoch'::timestamptz"
		"                                    + $4::bigint * interval '1 microsecond'"
		"                and p.captured_at > (select max(q.captured_at) from profiles q"
		"                    where q.service_id = f.service_id"
		"                      and q.profile_type = f.profile_type"
		"                      and q.release = f.current_release)))))"
		" order by f.id";
	/* clang-format on */
	const analysis_opts *o = &a->opts;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	for (size_t j = 0; j < a->njudged && rc == 0; j++) {
		const analysis_judged *jd = &a->judged[j];
		char sid[24], at[24], first[24], night[24], len[24];
		const char *p[7] = {sid, jd->type, jd->release, at, first, night, len};
		int64_t night_us = o->look_us > 0 ? o->look_us : DAY_US;
		PGresult *res = NULL;

		snprintf(sid, sizeof(sid), "%" PRId64, jd->service_id);
		snprintf(at, sizeof(at), "%" PRId64, o->at_us);
		snprintf(first, sizeof(first), "%" PRId64, jd->first_us);
		snprintf(night, sizeof(night), "%" PRId64, o->at_us - night_us);
		snprintf(len, sizeof(len), "%" PRId64, night_us);
		if ((rc = db_exec_repeat(d, &res, err, "reading open findings", sql, 7, p, 0)) < 0)
			break;
		for (int r = 0; r < db_rows(res) && rc == 0; r++) {
			int64_t id = db_get_i64(res, r, 0);
			const char *release = db_get_text(res, r, 4);
			const char *kind = db_get_text(res, r, 7);
			bool same = strcmp(release, jd->release) == 0;
			/* Which way it moved: a relative shift by the sign of its change. */
			bool reg = strcmp(db_get_text(res, r, 5), "regression") == 0 ||
				   (strcmp(db_get_text(res, r, 5), "relative_shift") == 0 &&
				    db_get_f64(res, r, 9) > 0);
			double base = db_get_f64(res, r, 6);
			const char *file = strcmp(kind, FINDING_KIND_COST) == 0
					   ? db_get_text(res, r, 8) : db_get_text(res, r, 3);
			const finding *t = test_of(a, jd->service_id, jd->type, jd->release,
						   db_get_i64(res, r, 1), db_get_text(res, r, 2),
						   file);
			double p_dir = t ? (reg ? t->p_up : t->p_down) : 1;
			/* Still there: significant, and the estimate still material. */
			bool held = t && p_dir <= o->fdr &&
				    (reg ? t->material_up : t->material_down);
			char why[256];

			/*
			 * An allocation profile's bytes were once its cost; they
			 * count since the process started, or over the capture's
			 * window, and are now tested per second only
			 * (capture_cost). No test has that unit any more: the
			 * finding would stay open for good, and keep its release's
			 * captures out of every baseline.
			 */
			bool retired_bytes = strcmp(kind, FINDING_KIND_COST) == 0 &&
					     strcmp(file, "bytes") == 0 &&
					     strcmp(jd->type, "heap") != 0;
			/*
			 * Likewise a heap profile's cost per unit of load: bytes in
			 * use are tested as bytes now, and no test has its unit.
			 */
			bool retired_heap_load = strcmp(kind, FINDING_KIND_COST) == 0 &&
						 strcmp(jd->type, "heap") == 0 &&
						 strcmp(finding_cost_family(file), "per_load") == 0;
			if (retired_bytes || retired_heap_load) {
				if ((rc = set_state(d, id, "went_away", run_id, o->at_us,
						    retired_bytes ? RETIRED_BYTES
								  : RETIRED_HEAP_LOAD,
						    NULL, err)) < 0 ||
				    (rc = add_closed(out, id)) < 0)
					break;
				out->went_away++;
				continue;
			}
			if (same) {
				finding look;
				if (t && t->significant && t->id == id)
					continue; /* seen again: findings_store took it */
				/*
				 * A finding closes only on evidence as strong as what
				 * it was judged on: this run must test its function
				 * (a run that leaves it out, --min-share higher, says
				 * nothing about it), see at least the captures of its
				 * last look (an analysis with --at in the past sees
				 * fewer, and a weaker test is not a change going away)
				 * and ask with the finding's own options.
				 */
				if (!t || o->at_us < db_get_i64(res, r, 10) ||
				    !same_options(res, r, o))
					continue;
				/*
				 * Gone when, with every capture so far, its own test is
				 * no longer significant even before any adjustment for
				 * the run's many tests, or its estimate no longer
				 * reaches the margin.
				 */
				look = *t;
				look.id = id;
				if ((rc = record_look(d, &look, run_id, o, false, err)) < 0)
					break;
				if (held)
					continue;
				snprintf(why, sizeof(why),
					 "went away at look %zu: p %.3g, change %+.3g%% "
					 "with %zu current captures",
					 jd->look, p_dir, 100 * t->rel_delta, t->current_captures);
				if ((rc = set_state(d, id, "went_away", run_id, o->at_us, why, NULL,
						    err)) < 0 ||
				    (rc = add_closed(out, id)) < 0)
					break;
				out->went_away++;
				continue;
			}
			/*
			 * A later release: fixed when the function is back inside the
			 * band the finding was measured against (its baseline share and
			 * its own margins) and no longer significantly beyond it. An
			 * earlier release running again after the finding's stopped (a
			 * rollback) closes it the same way, named as a rollback: the
			 * code is not fixed, and a release that brings it back is
			 * judged, and pages, anew.
			 *
			 * Not while the finding's own release still runs: judged by
			 * this run too, or captured in the last night. A fix rolled
			 * out to some hosts, or one capture of it judged by hand,
			 * closed the finding of the release that still ran on the
			 * others, and the next night found and paged it anew. Nor on
			 * one capture of the later release, or other options: less
			 * than what the finding was judged on. A rollback needs
			 * the earlier release to run again (column 18): two
			 * captures of it in the last night, not two in all its
			 * life, and a night when it had stopped. A host pinned to
			 * it, captured once a night beside the new release, closed
			 * a running regression on the one night the new release
			 * went uncaptured, resolved its page and paged it again
			 * the night after.
			 */
			if (!t || held || t->current_captures < 2 || !same_options(res, r, o) ||
			    db_get_bool(res, r, 11) ||
			    (db_get_bool(res, r, 17) && !db_get_bool(res, r, 18)) ||
			    judged_release(a, jd->service_id, jd->type, release))
				continue;
			{
				bool cost = strcmp(kind, FINDING_KIND_COST) == 0;
				double rel = db_get_f64(res, r, 12), abs_m = db_get_f64(res, r, 13);
				double band;
				if (isnan(rel))
					rel = o->rel_margin;
				if (isnan(abs_m))
					abs_m = o->abs_margin;
				band = cost ? base * rel : fmax(rel * base, abs_m);
				if (!(reg ? t->current_share <= base + band
					  : t->current_share >= base - band))
					continue;
			}
			if (db_get_bool(res, r, 17))
				snprintf(why, sizeof(why),
					 "rolled back to release '%.100s': %.4g against a "
					 "baseline of %.4g",
					 jd->release, t->current_share, base);
			else
				snprintf(why, sizeof(why),
					 "fixed by release '%.100s': %.4g against a "
					 "baseline of %.4g",
					 jd->release, t->current_share, base);
			if ((rc = set_state(d, id, "fixed", run_id, o->at_us, why, jd->release,
					    err)) < 0 ||
			    (rc = add_closed(out, id)) < 0)
				break;
			out->fixed++;
		}
		db_result_free(res);
	}
	if (rc == PR_ENOMEM)
		rc = oom(err);
	return rc;
}

int findings_list(json_t **out, db *d, const char *state, const char *service, size_t limit,
		  pr_error *err)
{
	static const char sql[] =
		"select coalesce(jsonb_agg(x order by x.id desc), '[]')::text from ("
		" select f.id, s.name as service, f.profile_type as type, f.kind, f.function,"
		"  f.direction, f.severity, f.state, f.status, f.current_release as release,"
		"  f.fixed_by, f.baseline_share, f.current_share, f.delta, f.q_value,"
		"  coalesce(f.carried_from, 0) as carried_from,"
		"  to_char(f.created_at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
		"   as created,"
		"  (select coalesce(jsonb_agg(jsonb_build_object('state', st.state,"
		"     'at', to_char(st.at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
		"     'run', st.run_id, 'reason', st.reason) order by st.id), '[]')"
		"     from finding_states st where st.finding_id = f.id) as states,"
		"  (select count(*) from finding_looks l where l.finding_id = f.id) as looks"
		" from findings f join services s on s.id = f.service_id"
		" where ($1::text is null or f.state = $1) and ($2::text is null or s.name = $2)"
		" order by f.id desc limit $3) x";
	char lim[24];
	const char *p[3] = {state, service, lim};
	PGresult *res = NULL;
	json_error_t jerr;
	int rc;

	*out = NULL;
	snprintf(lim, sizeof(lim), "%zu", limit ? limit : 100);
	if ((rc = db_exec(d, &res, err, "listing findings", sql, 3, p)) < 0)
		return rc;
	if (!(*out = json_loads(db_get_text(res, 0, 0), 0, &jerr)))
		rc = pr_error_set(err, PR_EDB, "database: cannot read the finding list: %s",
				  jerr.text);
	db_result_free(res);
	return rc;
}

int findings_history(json_t **out, db *d, int64_t id, pr_error *err)
{
	static const char sql[] =
		"select coalesce(jsonb_agg(jsonb_build_object('state', st.state,"
		"  'at', to_char(st.at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
		"  'run', st.run_id, 'reason', st.reason) order by st.id), '[]')::text"
		" from finding_states st where st.finding_id = $1";
	char sid[24];
	const char *p[1] = {sid};
	PGresult *res = NULL;
	int rc;

	*out = NULL;
	snprintf(sid, sizeof(sid), "%" PRId64, id);
	if ((rc = db_exec(d, &res, err, "reading a finding's history", sql, 1, p)) < 0)
		return rc;
	if (!(*out = json_loads(db_get_text(res, 0, 0), 0, NULL)))
		rc = oom(err);
	db_result_free(res);
	return rc;
}

static size_t uf_find(size_t *parent, size_t i)
{
	while (parent[i] != i)
		i = parent[i] = parent[parent[i]];
	return i;
}

/*
 * Whether a finding's rise (estimate D, lower bound L, SQL parameters) is
 * no rise beyond earlier finding f0's: the difference of the estimates
 * within what the two 95% intervals allow, sqrt((D - L)^2 + (H0 - D0)^2),
 * the 1.96s cancelling. Against f0's estimate alone, one that had landed
 * low let the same rise measured again clear it, and page a second time
 * (2 of 10 regressions carried in a month of simulated releases); against
 * the top of its interval, a release that doubled the rise again (2x, then
 * 4x) on a few captures was carried and paged no one.
 */
#define NOT_BEYOND(D, L)                                                                           \
	D "::float8 - f0.delta <= sqrt(power(" D "::float8 - " L "::float8, 2)"                    \
	  " + power(greatest(coalesce(f0.ci_high, f0.delta) - f0.delta, 0), 2))"

int findings_same_rise_open(db *d, const finding *f, int64_t **ids, int64_t **holders, size_t *n,
			    pr_error *err)
{
	static const char sql[] =
		"select f0.id, x.id from findings f0"
		"  join findings x on x.id = f0.id or x.incident_id = f0.incident_id"
		" where f0.service_id = $1::bigint and f0.profile_type = $2"
		" and coalesce(f0.function_id, 0) = $3::bigint and f0.function = $4"
		" and f0.kind = $5 and f0.direction = 'regression' and f0.status = 'open'"
		" and f0.current_release <> $6 and f0.id <> $7::bigint and " NOT_BEYOND(
			"$9", "$8") " order by f0.id, x.id <> f0.id, x.id";
	char sid[24], fid[24], id[24], low[32], delta[32];
	const char *p[9] = {sid,
			    f->type,
			    fid,
			    f->function,
			    f->kind ? f->kind : FINDING_KIND_SHARE,
			    f->current_release,
			    id,
			    low,
			    delta};
	PGresult *res = NULL;
	size_t rows;
	int rc;

	*ids = *holders = NULL;
	*n = 0;
	rise_text(f, sid, fid, id, low, delta);
	if ((rc = db_exec(d, &res, err, "looking for an earlier finding of the same rise", sql, 9,
			  p)) < 0)
		return rc;
	rows = (size_t)db_rows(res);
	if (rows && (!(*ids = calloc(rows, sizeof(**ids))) ||
		     !(*holders = calloc(rows, sizeof(**holders))))) {
		free(*ids);
		*ids = NULL;
		rc = oom(err);
	}
	for (size_t r = 0; rc == 0 && r < rows; r++, (*n)++) {
		(*ids)[r] = db_get_i64(res, (int)r, 0);
		(*holders)[r] = db_get_i64(res, (int)r, 1);
	}
	db_result_free(res);
	return rc;
}

int findings_carry_accepted(db *d, finding *f, pr_error *err)
{
	/*
	 * Any release, not only earlier ones: the level was accepted for the
	 * function, and a finding of a release deployed before the accept
	 * (carried from the finding that paged, now closed) is within it too.
	 */
	static const char find_sql[] =
		"select f0.id from findings f0"
		" where f0.service_id = $1::bigint and f0.profile_type = $2"
		" and coalesce(f0.function_id, 0) = $3::bigint and f0.function = $4"
		" and f0.kind = $5 and f0.direction = 'regression' and f0.accepted"
		" and f0.id <> $6::bigint and " NOT_BEYOND("$8",
							   "$7") " order by f0.id desc limit 1";
	/* One that rose beyond it since keeps no carry from it; any other stays. */
	static const char set_sql[] =
		"update findings f set carried_from = nullif($2::bigint, 0) where f.id = $1::bigint"
		" and ($2::bigint <> 0 or exists (select 1 from findings a"
		"   where a.id = f.carried_from and a.accepted))";
	char sid[24], fid[24], id[24], low[32], delta[32], from[24];
	const char *p[8] = {sid, f->type, fid,  f->function, f->kind ? f->kind : FINDING_KIND_SHARE,
			    id,  low,     delta};
	const char *q[2] = {id, from};
	PGresult *res = NULL;
	int64_t acc = 0;
	int rc;

	rise_text(f, sid, fid, id, low, delta);
	if ((rc = db_exec(d, &res, err, "looking for an accepted rise", find_sql, 8, p)) < 0)
		return rc;
	if (db_rows(res) > 0)
		acc = db_get_i64(res, 0, 0);
	db_result_free(res);
	snprintf(from, sizeof(from), "%" PRId64, acc);
	if ((rc = db_exec(d, NULL, err, "recording an accepted rise", set_sql, 2, q)) < 0)
		return rc;
	f->accepted = acc != 0;
	if (acc)
		f->carried_from = acc;
	return 0;
}

int findings_set_carried(db *d, int64_t id, int64_t from, pr_error *err)
{
	static const char sql[] =
		"update findings set carried_from = nullif($2::bigint, 0) where id = $1::bigint";
	char sid[24], sfrom[24];
	const char *p[2] = {sid, sfrom};

	snprintf(sid, sizeof(sid), "%" PRId64, id);
	snprintf(sfrom, sizeof(sfrom), "%" PRId64, from);
	return db_exec(d, NULL, err, "recording what a finding is carried from", sql, 2, p);
}

int findings_incident_lead(db *d, int64_t incident, int64_t *lead, pr_error *err)
{
	/*
	 * The lead pages for its incident. A lead that went away or was fixed
	 * had its page resolved: were it kept, members still open would page
	 * no one. Nor does a lead that is still a candidate and was never
	 * paged: a confirmed member waited for it, a night or for good (a
	 * candidate whose looks stop counting, under other options). The
	 * lead passes to an open member, a confirmed one first; a lead that
	 * paged keeps its incident while it is open. A lead within a rise
	 * accepted by hand pages no one: it passes the lead on too, last in
	 * line.
	 */
	static const char sql[] =
		"with pick as (select m.id from findings m where m.incident_id = $1"
		"   and m.status = 'open' order by exists (select 1 from findings a"
		"     where a.id = m.carried_from and a.accepted),"
		"   m.state is distinct from 'confirmed', m.id limit 1),"
		" u as (update finding_groups g set lead_finding_id = (select id from pick)"
		"   where g.id = $1 and exists (select 1 from pick)"
		"   and not exists (select 1 from findings l where l.id = g.lead_finding_id"
		"                   and l.status = 'open' and (l.state = 'confirmed'"
		"                   or exists (select 1 from pages pg where pg.finding_id = l.id))"
		"                   and not exists (select 1 from findings a"
		"                     where a.id = l.carried_from and a.accepted))"
		"   returning lead_finding_id)"
		" select coalesce((select lead_finding_id from u),"
		"   (select lead_finding_id from finding_groups where id = $1), 0)";
	char inc[24];
	const char *p[1] = {inc};
	PGresult *res = NULL;
	int rc;

	*lead = 0;
	snprintf(inc, sizeof(inc), "%" PRId64, incident);
	if ((rc = db_exec(d, &res, err, "reading an incident", sql, 1, p)) < 0)
		return rc;
	if (db_rows(res))
		*lead = db_get_i64(res, 0, 0);
	db_result_free(res);
	return 0;
}

int findings_incident_members(db *d, int64_t incident, int64_t lead, int64_t **ids, size_t *n,
			      pr_error *err)
{
	static const char sql[] =
		"select id from findings where incident_id = $1::bigint and id <> $2::bigint"
		" and status = 'open' and state = 'confirmed' and direction = 'regression'"
		" order by id";
	char inc[24], lid[24];
	const char *p[2] = {inc, lid};
	PGresult *res = NULL;
	int rc;

	*ids = NULL;
	*n = 0;
	snprintf(inc, sizeof(inc), "%" PRId64, incident);
	snprintf(lid, sizeof(lid), "%" PRId64, lead);
	if ((rc = db_exec(d, &res, err, "reading an incident's members", sql, 2, p)) < 0)
		return rc;
	if (db_rows(res) && !(*ids = calloc((size_t)db_rows(res), sizeof(**ids))))
		rc = oom(err);
	for (int i = 0; rc == 0 && i < db_rows(res); i++)
		(*ids)[(*n)++] = db_get_i64(res, i, 0);
	db_result_free(res);
	return rc;
}

int findings_incident_worst(db *d, int64_t incident, int64_t lead, const int64_t *skip,
			    size_t nskip, stats_severity *sev, char **function, pr_error *err)
{
	static const char sql[] =
		"select m.severity, m.function from findings m where m.incident_id = $1::bigint"
		" and m.id <> $2::bigint and m.status = 'open' and m.state = 'confirmed'"
		" and m.direction = 'regression' and m.id <> all($3::bigint[])"
		" and not exists (select 1 from findings a where a.id = m.carried_from"
		"   and a.accepted)"
		" and not exists (select 1 from pages t where t.finding_id = m.id"
		"   and t.event = 'trigger' and t.retired_at is null"
		"   and t.status in ('pending', 'sent')"
		/* A page without a severity we know holds none: paging again beats silence. */
		"   and coalesce(array_position('{none,low,medium,high,critical}'::text[],"
		"     t.detail ->> 'severity'), 0) >="
		"     coalesce(array_position('{none,low,medium,high,critical}'::text[],"
		"     m.severity), 0)"
		"   and not exists (select 1 from pages r"
		"     where r.event = 'resolve' and r.dedup_key = t.dedup_key"
		"     and r.target = t.target and r.retired_at is null"
		"     and r.status <> 'cancelled'))"
		" order by array_position('{none,low,medium,high,critical}'::text[], m.severity)"
		"   desc nulls last, m.id limit 1";
	char inc[24], lid[24];
	const char *p[3] = {inc, lid, NULL};
	buf ids = BUF_INIT;
	PGresult *res = NULL;
	int rc = buf_putc(&ids, '{');

	*sev = STATS_SEV_NONE;
	*function = NULL;
	for (size_t i = 0; rc == 0 && i < nskip; i++)
		rc = buf_printf(&ids, "%s%" PRId64, i ? "," : "", skip[i]);
	if (rc < 0 || buf_putc(&ids, '}') < 0) {
		buf_release(&ids);
		return oom(err);
	}
	p[2] = ids.ptr;
	snprintf(inc, sizeof(inc), "%" PRId64, incident);
	snprintf(lid, sizeof(lid), "%" PRId64, lead);
	rc = db_exec(d, &res, err, "reading an incident's members", sql, 3, p);
	buf_release(&ids);
	if (rc < 0)
		return rc;
	if (!db_rows(res) || stats_severity_parse(sev, db_get_text(res, 0, 0)) < 0)
		*sev = STATS_SEV_NONE;
	else if (!(*function = strdup(db_get_text(res, 0, 1)))) {
		*sev = STATS_SEV_NONE;
		rc = oom(err);
	}
	db_result_free(res);
	return rc;
}

int findings_link(analysis *a, db *d, const int64_t *from, const int64_t *to,
		  const char *const *why, size_t n, pr_error *err)
{
	static const char existing_sql[] =
		"select min(incident_id) from findings where id = any($1::bigint[])";
	static const char new_sql[] =
		"insert into finding_groups (service_id, profile_type, release, lead_finding_id,"
		" reason) select service_id, profile_type, current_release, id, $2 from findings"
		" where id = $1 returning id";
	static const char join_sql[] =
		"update findings set incident_id = $1 where id = any($2::bigint[])"
		" and incident_id is distinct from $1";
	int64_t *ids = NULL;
	size_t *parent = NULL, nids = 0;
	int rc = 0;

	if (!n)
		return 0;
	if (!(ids = calloc(2 * n, sizeof(*ids))) || !(parent = calloc(2 * n, sizeof(*parent)))) {
		rc = oom(err);
		goto out;
	}
	/* The findings involved, each once; then union by the links. */
	for (size_t i = 0; i < 2 * n; i++) {
		int64_t id = i < n ? from[i] : to[i - n];
		size_t k;
		for (k = 0; k < nids && ids[k] != id; k++)
			;
		if (k == nids)
			ids[nids++] = id;
	}
	for (size_t k = 0; k < nids; k++)
		parent[k] = k;
	for (size_t i = 0; i < n; i++) {
		size_t x = 0, y = 0;
		while (ids[x] != from[i])
			x++;
		while (ids[y] != to[i])
			y++;
		parent[uf_find(parent, x)] = uf_find(parent, y);
	}
	for (size_t root = 0; root < nids && rc == 0; root++) {
		buf members = BUF_INIT;
		int64_t first = 0, incident = 0, lead = 0;
		const char *reason = "";
		char sid[24], inc[24];
		PGresult *res = NULL;
		size_t count = 0;

		if (uf_find(parent, root) != root)
			continue;
		rc = buf_putc(&members, '{');
		for (size_t k = 0; k < nids && rc == 0; k++) {
			if (uf_find(parent, k) != root)
				continue;
			rc = buf_printf(&members, "%s%" PRId64, count++ ? "," : "", ids[k]);
			if (!first || ids[k] < first)
				first = ids[k];
		}
		/* The reason of the first link inside this incident. */
		for (size_t i = 0; i < n && !*reason; i++) {
			size_t x = 0;
			while (ids[x] != from[i])
				x++;
			if (uf_find(parent, x) == root)
				reason = why[i];
		}
		if (rc == 0)
			rc = buf_putc(&members, '}');
		if (rc < 0) {
			buf_release(&members);
			rc = oom(err);
			break;
		}
		{
			const char *p[1] = {members.ptr};
			rc = db_exec(d, &res, err, "finding an incident", existing_sql, 1, p);
			if (rc < 0) {
				buf_release(&members);
				break;
			}
			incident = PQgetisnull(res, 0, 0) ? 0 : db_get_i64(res, 0, 0);
			db_result_free(res);
			res = NULL;
		}
		if (!incident) {
			const char *p[2] = {sid, reason};
			snprintf(sid, sizeof(sid), "%" PRId64, first);
			rc = db_exec(d, &res, err, "storing an incident", new_sql, 2, p);
			if (rc < 0) {
				buf_release(&members);
				break;
			}
			incident = db_get_i64(res, 0, 0);
			db_result_free(res);
			res = NULL;
		}
		snprintf(inc, sizeof(inc), "%" PRId64, incident);
		{
			const char *p[2] = {inc, members.ptr};
			rc = db_exec(d, NULL, err, "joining an incident", join_sql, 2, p);
			if (rc == 0)
				rc = findings_incident_lead(d, incident, &lead, err);
		}
		buf_release(&members);
		for (size_t k = 0; rc == 0 && k < nids; k++) {
			if (uf_find(parent, k) != root)
				continue;
			for (size_t t = 0; t < a->ntests; t++)
				if (a->tests[t].id == ids[k]) {
					a->tests[t].incident_id = incident;
					a->tests[t].incident_lead = ids[k] == lead;
				}
		}
	}
out:
	free(ids);
	free(parent);
	return rc;
}

int findings_incident_of(db *d, int64_t id, int64_t *incident, int64_t *lead, pr_error *err)
{
	static const char sql[] =
		"select coalesce(f.incident_id, 0), coalesce(g.lead_finding_id, 0) from findings f"
		" left join finding_groups g on g.id = f.incident_id where f.id = $1";
	char sid[24];
	const char *p[1] = {sid};
	PGresult *res = NULL;
	int rc;

	*incident = *lead = 0;
	snprintf(sid, sizeof(sid), "%" PRId64, id);
	if ((rc = db_exec(d, &res, err, "reading a finding's incident", sql, 1, p)) < 0)
		return rc;
	if (db_rows(res) == 1) {
		*incident = db_get_i64(res, 0, 0);
		*lead = db_get_i64(res, 0, 1);
	}
	db_result_free(res);
	return 0;
}

int findings_closed_by_run(json_t **out, db *d, int64_t run_id, const char *team, pr_error *err)
{
	/*
	 * The run's own closing of each finding: its last state change by the
	 * run, when that closed it. A night run again after the close records
	 * no state, and lists the closed finding among its findings instead.
	 */
	static const char sql[] =
		"select coalesce(jsonb_agg(x order by case x.direction when 'regression' then 0"
		"   when 'improvement' then 1 else 2 end, case x.severity when 'critical' then 0"
		"   when 'high' then 1 when 'medium' then 2 when 'low' then 3 else 4 end, x.id),"
		"  '[]')::text from ("
		" select distinct on (f.id) f.id, s.name as service, f.profile_type as type,"
		"  f.function, f.current_release as release, f.direction, f.severity, st.state,"
		"  st.reason"
		" from finding_states st join findings f on f.id = st.finding_id"
		" join services s on s.id = f.service_id"
		" where st.run_id = $1 and ($2::text is null or s.team = $2)"
		" order by f.id, st.id desc) x"
		" where x.state in ('went_away', 'fixed', 'resolved')";
	char id[24];
	const char *p[2] = {id, team};
	PGresult *res = NULL;
	json_error_t jerr;
	int rc;

	*out = NULL;
	snprintf(id, sizeof(id), "%" PRId64, run_id);
	if ((rc = db_exec(d, &res, err, "reading the findings the run closed", sql, 2, p)) < 0)
		return rc;
	if (!(*out = json_loads(db_get_text(res, 0, 0), 0, &jerr)))
		rc = oom(err);
	db_result_free(res);
	return rc;
}

int findings_release_judged(char *types, size_t size, int64_t *first_us, db *d, int64_t service_id,
			    const char *release, pr_error *err)
{
	static const char sql[] = "select profile_type, " DB_TS_TO_US(
		"judged_at") " from judged_releases where service_id = $1::bigint"
			     " and release = $2 order by judged_at, profile_type";
	char sid[24];
	const char *p[2] = {sid, release};
	PGresult *res = NULL;
	size_t len = 0;
	int rc;

	if (size)
		types[0] = '\0';
	*first_us = 0;
	snprintf(sid, sizeof(sid), "%" PRId64, service_id);
	if ((rc = db_exec(d, &res, err, "reading which runs judged a release", sql, 2, p)) < 0)
		return rc;
	for (int r = 0; r < db_rows(res); r++) {
		int k = snprintf(types + len, size > len ? size - len : 0, "%s%s", r ? ", " : "",
				 db_get_text(res, r, 0));
		if (k > 0 && len + (size_t)k < size)
			len += (size_t)k;
		if (r == 0)
			*first_us = db_get_i64(res, 0, 1);
	}
	db_result_free(res);
	return 0;
}
