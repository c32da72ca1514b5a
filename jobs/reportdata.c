/*
 * reportdata.c: reports filled from the database and the blob store.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/reportdata.h"
#include "baselines/analysis.h"
#include "baselines/baseline.h"
#include "baselines/findings.h"
#include "jobs/access.h"
#include "jobs/evidence.h"
#include "jobs/job.h"
#include "jobs/snapshot.h"
#include "jobs/suspects.h"
#include "common/ahead.h"
#include "common/fileio.h"
#include "common/similar.h"
#include "common/timeutil.h"
#include "pipeline/format.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int oom(pr_error *err)
{
	return pr_error_set(err, PR_ENOMEM, "cannot build the report: out of memory");
}

/* strdup that keeps NULL; sets *bad on failure. */
static char *dup_or_null(const char *s, bool *bad)
{
	char *c;

	if (!s)
		return NULL;
	if (!(c = strdup(s)))
		*bad = true;
	return c;
}

static double f64n(const PGresult *res, int row, int col)
{
	return db_get_text(res, row, col) ? db_get_f64(res, row, col) : NAN;
}

/* ---- selections ---- */

void reportdata_sel_release(reportdata_sel *s)
{
	free(s->text);
	free(s->service);
	free(s->release);
	free(s->commit);
	free(s->host);
	free(s->type);
	free(s->ids);
	memset(s, 0, sizeof(*s));
}

static int set_str(char **dst, const char *v, size_t n, const char *key, const char *text,
		   pr_error *err)
{
	if (*dst)
		return pr_error_set(err, PR_EUSAGE, "selection '%s': '%s' given twice", text, key);
	if (!n)
		return pr_error_set(err, PR_EUSAGE, "selection '%s': '%s' is empty", text, key);
	if (!(*dst = strndup(v, n)))
		return oom(err);
	return 0;
}

static int add_id(reportdata_sel *s, const char *v, size_t n, const char *text, pr_error *err)
{
	char tmp[24], *end;
	long long id;
	int64_t *ni;

	if (n == 0 || n >= sizeof(tmp))
		return pr_error_set(err, PR_EUSAGE, "selection '%s': expected a capture id", text);
	memcpy(tmp, v, n);
	tmp[n] = 0;
	errno = 0;
	id = strtoll(tmp, &end, 10);
	if (*end || errno || id <= 0) {
		char q[40];
		return pr_error_set(err, PR_EUSAGE, "selection '%s': '%s' is not a capture id",
				    text, profile_quote_arg(q, tmp, n));
	}
	if (s->nids >= REPORTDATA_MAX_SELECTION)
		return pr_error_set(err, PR_ELIMIT, "selection '%s': more than %d capture ids",
				    text, REPORTDATA_MAX_SELECTION);
	if (!(ni = realloc(s->ids, (s->nids + 1) * sizeof(*ni))))
		return oom(err);
	s->ids = ni;
	s->ids[s->nids++] = id;
	return 0;
}

static int set_time(int64_t *dst, bool *set, const char *v, size_t n, const char *key,
		    const char *text, pr_error *err)
{
	char *tmp = strndup(v, n);
	int rc = 0;

	if (!tmp)
		return oom(err);
	*set = true;
	if (time_parse_since(dst, tmp, time_now_us()) < 0) {
		char q[40];
		rc = pr_error_set(err, PR_EUSAGE,
				  "selection '%s': %s '%s' is not a time or a duration", text, key,
				  profile_quote_arg(q, tmp, n));
	}
	free(tmp);
	return rc;
}

int reportdata_sel_parse(reportdata_sel *out, const char *raw, const char *host,
			 int64_t since_us, int64_t until_us, pr_error *err)
{
	const char *p = raw;
	char text[40]; /* the selection as messages quote it: short, no control bytes */
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!raw || !*raw)
		return pr_error_set(err, PR_EUSAGE, "empty selection: give 'service=S,release=R', "
				    "'service=S,commit=C' or 'id=1,2,3'");
	profile_quote_arg(text, raw, strlen(raw));
	if (!(out->text = strdup(raw)))
		return oom(err);
	while (*p && rc == 0) {
		const char *end = strchr(p, ','), *eq;
		size_t n;

		if (!end)
			end = p + strlen(p);
		n = (size_t)(end - p);
		eq = memchr(p, '=', n);
		if (!eq) {
			/* A bare number: a capture id ("42", "1,2,3", or after id=). */
			rc = add_id(out, p, n, text, err);
		} else {
			size_t k = (size_t)(eq - p);
			const char *v = eq + 1;
			size_t vn = n - k - 1;
			if (k == 7 && !strncmp(p, "service", k))
				rc = set_str(&out->service, v, vn, "service", text, err);
			else if (k == 7 && !strncmp(p, "release", k))
				rc = set_str(&out->release, v, vn, "release", text, err);
			else if (k == 6 && !strncmp(p, "commit", k))
				rc = set_str(&out->commit, v, vn, "commit", text, err);
			else if (k == 4 && !strncmp(p, "host", k))
				rc = set_str(&out->host, v, vn, "host", text, err);
			else if (k == 4 && !strncmp(p, "type", k))
				rc = set_str(&out->type, v, vn, "type", text, err);
			else if (k == 5 && !strncmp(p, "since", k))
				rc = set_time(&out->since_us, &out->since_set, v, vn, "since", text,
					      err);
			else if (k == 5 && !strncmp(p, "until", k))
				rc = set_time(&out->until_us, &out->until_set, v, vn, "until", text,
					      err);
			else if ((k == 2 && !strncmp(p, "id", k)) ||
				 (k == 3 && !strncmp(p, "ids", k))) {
				rc = add_id(out, v, vn, text, err);
			} else {
				char q[40];
				rc = pr_error_set(
					err, PR_EUSAGE,
					"selection '%s': unknown key '%s' (service, release, "
					"commit, host, type, since, until, id)",
					text, profile_quote_arg(q, p, k));
			}
		}
		p = *end ? end + 1 : end;
	}
	if (rc == 0 && !out->nids && !out->service && !out->release && !out->commit && !out->host &&
	    !out->since_set && !out->until_set)
		rc = pr_error_set(err, PR_EUSAGE, "selection '%s' selects nothing in particular: "
				  "give a service, release, commit, host, "
				  "time or capture ids", text);
	if (rc == 0 && host && !out->host && !(out->host = strdup(host)))
		rc = oom(err);
	if (rc == 0 && since_us && !out->since_set) {
		out->since_us = since_us;
		out->since_set = true;
	}
	if (rc == 0 && until_us && !out->until_set) {
		out->until_us = until_us;
		out->until_set = true;
	}
	if (rc < 0)
		reportdata_sel_release(out);
	return rc;
}

void reportdata_caps_free(reportdata_cap *c, size_t n)
{
	for (size_t i = 0; c && i < n; i++) {
		free(c[i].service);
		free(c[i].type);
		free(c[i].release);
		free(c[i].commit);
		free(c[i].host);
		free(c[i].blob_key);
		free(c[i].format);
		free(c[i].retention);
	}
	free(c);
}

/*
 * A selection as the user typed it, for an error message: whole up to
 * 200 bytes (a cut one hides the part that was wrong), with anything but
 * printable ASCII, and markup, as '?': the comparison page answers with
 * this line too.
 */
static void quote_sel(char *out, size_t cap, const char *s)
{
	size_t n = 0;

	for (; *s && n + 4 < cap; s++)
		out[n++] = *s >= 0x20 && *s < 0x7f && !strchr("<>&\"", *s) ? *s : '?';
	if (*s) {
		memcpy(out + n, "...", 3);
		n += 3;
	}
	out[n] = '\0';
}

/*
 * Why a selection that names a known service and release matched
 * nothing, into why[0..size) (": none on host 'h'", " of type cpu (add
 * type=...)"; "" when no one filter explains it): an inverted time range,
 * else the first of type, host, commit and time range without which
 * the query `sql` (parameters p, as reportdata_sel_captures fills them)
 * finds a capture. "add type=" for an empty result a host emptied sends
 * the user astray.
 */
static int emptied_by(char *why, size_t size, db *d, const char *sql, const char *const p[9],
		      const reportdata_sel *s, pr_error *err)
{
	static const int cols[] = {5, 4, 3, 6};
	char q[208], since[TIME_FMT_MAX], until[TIME_FMT_MAX];
	const char *tp[9];
	PGresult *res = NULL;
	int rc = 0;
	bool found = false;

	*why = '\0';
	if (s->since_set && s->until_set && s->since_us >= s->until_us) {
		time_format(since, s->since_us);
		time_format(until, s->until_us);
		snprintf(why, size, ": since %s is not before until %s", since, until);
		return 0;
	}
	for (size_t k = 0; k < sizeof(cols) / sizeof(cols[0]) && !found; k++) {
		int c = cols[k];
		if (!p[c] && !(c == 6 && p[7]))
			continue;
		memcpy(tp, p, sizeof(tp));
		tp[c] = NULL;
		if (c == 6)
			tp[7] = NULL;
		tp[8] = "1";
		if ((rc = db_exec(d, &res, err, "selecting captures", sql, 9, tp)) < 0)
			return rc;
		found = db_rows(res) > 0;
		db_result_free(res);
		res = NULL;
		if (!found)
			continue;
		if (c == 5) {
			quote_sel(q, sizeof(q), p[5]);
			snprintf(why, size,
				 s->type ? ": none of type '%s'" : " of type %s (add type=...)", q);
		} else if (c == 4 || c == 3) {
			quote_sel(q, sizeof(q), p[c]);
			snprintf(why, size,
				 c == 4 ? ": none on host '%s'" : ": none with commit '%s'", q);
		} else {
			time_format(since, s->since_us);
			time_format(until, s->until_us);
			snprintf(why, size, ": none in the time range (since %s, until %s)",
				 s->since_set ? since : "any", s->until_set ? until : "any");
		}
	}
	return 0;
}

int reportdata_sel_captures(reportdata_cap **out, size_t *n, db *d, const reportdata_sel *s,
			    pr_error *err)
{
	static const char sql[] =
		"select * from (select p.id, p.service_id, " DB_TS_TO_US("p.captured_at") ","
		" p.total_value, s.name, p.profile_type, p.release, p.commit_sha, p.host,"
		" case when p.blob_deleted_at is null then p.blob_key end, p.format,"
		" p.retention_class, p.captured_at, count(*) over ()"
		" from profiles p join services s on s.id = p.service_id"
		" where ($1::bigint[] is null or p.id = any($1::bigint[]))"
		" and ($2::text is null or s.name = $2) and ($3::text is null or p.release = $3)"
		" and ($4::text is null or left(p.commit_sha, length($4)) = $4)"
		" and ($5::text is null or p.host = $5) and ($6::text is "
		"null or p.profile_type = $6)"
		" and ($7::bigint is null or p.captured_at >= 'epoch'::timestamptz + $7::bigint * "
		"interval '1 microsecond')"
		" and ($8::bigint is null or p.captured_at < 'epoch'::timestamptz + $8::bigint * "
		"interval '1 microsecond')"
		" order by p.captured_at desc, p.id desc limit $9) x order by x.captured_at, x.id";
	buf ids = BUF_INIT;
	char since[24], until[24], lim[24];
	const char *p[9];
	PGresult *res = NULL;
	reportdata_cap *caps = NULL;
	int rows = 0, rc;
	bool bad = false;

	*out = NULL;
	*n = 0;
	if (s->nids && db_bigint_array(&ids, s->ids, s->nids, sizeof(*s->ids)) < 0)
		return oom(err);
	snprintf(since, sizeof(since), "%" PRId64, s->since_us);
	snprintf(until, sizeof(until), "%" PRId64, s->until_us);
	snprintf(lim, sizeof(lim), "%d", REPORTDATA_MAX_SELECTION);
	p[0] = s->nids ? ids.ptr : NULL;
	p[1] = s->service, p[2] = s->release, p[3] = s->commit, p[4] = s->host;
	/* Without ids, one profile type: CPU unless asked otherwise. */
	p[5] = s->type ? s->type : s->nids ? NULL : "cpu";
	/* 0 is a time too (1970-01-01T00:00:00Z): the flags say what was given. */
	p[6] = s->since_set || s->since_us ? since : NULL;
	p[7] = s->until_set || s->until_us ? until : NULL;
	p[8] = lim;
	if ((rc = db_exec(d, &res, err, "selecting captures", sql, 9, p)) < 0)
		goto out;
	rows = db_rows(res);
	/* Ids alone, none there (or none the role sees): the words of one missing among others. */
	if (rows == 0 && s->nids && !s->service && !s->release && !s->commit && !s->host &&
	    !s->type && !s->since_set && !s->until_set) {
		rc = pr_error_set(err, PR_ENOTFOUND, "capture %" PRId64 " not found", s->ids[0]);
		goto out;
	}
	if (rows == 0) {
		db_service svc = {0};
		db_capture_tally nrel = {-1, 0, 0, 0};
		char hint[400] = "", text[208], rel[208], svc_name[208], why[480];
		/* An unknown service is a typo: say so, with the close name. */
		if (s->service && (rc = db_service_get(d, &svc, s->service, err)) < 0)
			goto out;
		/* So is an unknown release: "add type=" would send the user astray. */
		if (s->service && s->release &&
		    ((rc = db_capture_count(d, &nrel, svc.id, s->release, 0, 0, 0, err)) < 0 ||
		     (nrel.all == 0 && (rc = job_release_hint(hint, sizeof(hint), d, svc.id,
							  s->release, err)) < 0))) {
			db_service_release(&svc);
			goto out;
		}
		db_service_release(&svc);
		quote_sel(svc_name, sizeof(svc_name), s->service ? s->service : "");
		quote_sel(text, sizeof(text), s->text);
		if (nrel.all == 0) {
			quote_sel(rel, sizeof(rel), s->release);
			rc = pr_error_set(err, PR_ENOTFOUND,
					  "selection '%s' matches no capture: service '%s' "
					  "has no release '%s'%s",
					  text, svc_name, rel, hint);
		} else if ((rc = emptied_by(why, sizeof(why), d, sql, p, s, err)) == 0) {
			rc = pr_error_set(err, PR_ENOTFOUND,
					  "selection '%s' matches no capture%s", text, why);
		}
		goto out;
	}
	if (!(caps = calloc((size_t)rows, sizeof(*caps)))) {
		rc = oom(err);
		goto out;
	}
	for (int i = 0; i < rows; i++) {
		reportdata_cap *c = &caps[i];
		c->id = db_get_i64(res, i, 0);
		c->service_id = db_get_i64(res, i, 1);
		c->at_us = db_get_i64(res, i, 2);
		c->total = db_get_i64(res, i, 3);
		c->service = dup_or_null(db_get_text(res, i, 4), &bad);
		c->type = dup_or_null(db_get_text(res, i, 5), &bad);
		c->release = dup_or_null(db_get_text(res, i, 6), &bad);
		c->commit = dup_or_null(db_get_text(res, i, 7), &bad);
		c->host = dup_or_null(db_get_text(res, i, 8), &bad);
		c->blob_key = dup_or_null(db_get_text(res, i, 9), &bad);
		c->format = dup_or_null(db_get_text(res, i, 10), &bad);
		c->retention = dup_or_null(db_get_text(res, i, 11), &bad);
	}
	if (bad) {
		rc = oom(err);
		goto out;
	}
	/*
	 * The newest REPORTDATA_MAX_SELECTION alone would be an export or a
	 * diff of part of what was asked for, told as the whole: refuse it.
	 */
	if (db_get_i64(res, 0, 13) > REPORTDATA_MAX_SELECTION) {
		char text[208];
		quote_sel(text, sizeof(text), s->text);
		rc = pr_error_set(err, PR_ELIMIT,
				  "selection '%s' matches %" PRId64 " captures, more than the %d "
				  "one selection may hold: narrow it (release=, host=, since=, "
				  "until=)",
				  text, db_get_i64(res, 0, 13), REPORTDATA_MAX_SELECTION);
		goto out;
	}
	/*
	 * Capture ids ask for exactly those captures: one that does not exist,
	 * or that the role may not see (the same words, so nothing leaks),
	 * refuses the selection rather than leaving a part to pass for all.
	 * With other filters too, one they leave out is named with them.
	 */
	for (size_t k = 0; k < s->nids; k++) {
		bool found = false, only_ids = !s->service && !s->release && !s->commit &&
					       !s->host && !s->type && !s->since_set &&
					       !s->until_set;
		char text[208];
		for (int i = 0; i < rows && !found; i++)
			found = caps[i].id == s->ids[k];
		if (found)
			continue;
		quote_sel(text, sizeof(text), s->text);
		rc = only_ids ? pr_error_set(err, PR_ENOTFOUND, "capture %" PRId64 " not found",
					     s->ids[k])
			      : pr_error_set(err, PR_ENOTFOUND,
					     "selection '%s' matches no capture %" PRId64, text,
					     s->ids[k]);
		goto out;
	}
	for (int i = 1; i < rows; i++)
		if (strcmp(caps[i].type, caps[0].type) != 0) {
			char q[40];
			rc = pr_error_set(err, PR_EUSAGE,
					  "selection '%s' mixes profile types '%s' and '%s': "
					  "add type=...",
					  profile_quote_arg(q, s->text, strlen(s->text)),
					  caps[0].type, caps[i].type);
			goto out;
		}
	*out = caps;
	*n = (size_t)rows;
	caps = NULL;
out:
	buf_release(&ids);
	reportdata_caps_free(caps, (size_t)rows);
	db_result_free(res);
	return rc;
}

static int load_where(profile **out, size_t *kept, blob_store *bs, const reportdata_cap *c,
		      const profile_limits *lim, const pprof_label_filter *only, buf *raw,
		      pr_error *err);

int reportdata_load_profile(profile **out, blob_store *bs, const reportdata_cap *c,
			    const profile_limits *lim, pr_error *err)
{
	buf raw = BUF_INIT;
	int rc = load_where(out, NULL, bs, c, lim, NULL, &raw, err);

	buf_release(&raw);
	return rc;
}

/*
 * Load and parse capture `c`, its text read into `raw`, a buffer the
 * caller keeps across captures (and releases): each capture reuses the
 * memory the one before it faulted in. `raw` holds no meaning afterwards.
 */
static int load_where(profile **out, size_t *kept, blob_store *bs, const reportdata_cap *c,
		      const profile_limits *lim, const pprof_label_filter *only, buf *raw,
		      pr_error *err)
{
	profile_format fmt = PROFILE_FMT_AUTO;
	pr_error be = PR_ERROR_INIT;
	char name[48];
	int rc;

	*out = NULL;
	snprintf(name, sizeof(name), "capture %" PRId64, c->id);
	if (!c->blob_key || !c->blob_key[0])
		return pr_error_set(err, PR_ENOTFOUND,
				    "capture %" PRId64 " has no blob (summary tier)", c->id);
	/*
	 * A capture whose row names a blob the store no longer has is a
	 * capture that cannot be read (bad data, 422 in serve), not one that
	 * does not exist; and the message names the capture, not the store's
	 * key or path.
	 */
	if ((rc = blob_get(bs, c->blob_key, raw, lim->max_decompressed_bytes, &be)) == PR_ENOTFOUND)
		return pr_error_set(err, PR_EDATA,
				    "cannot read capture %" PRId64 ": its profile is missing from "
				    "the blob store",
				    c->id);
	if (rc < 0)
		return pr_error_set(err, rc, "%s", be.msg);
	if (c->format)
		profile_format_from_name(&fmt, c->format);
	rc = format_parse_where(out, kept, (const uint8_t *)raw->ptr, raw->len, fmt, name, lim,
				only, err);
	buf_reset(raw);
	if (rc == 0)
		profile_pick_primary(*out, c->type);
	return rc;
}

/* One side's captures for add_sides. */
typedef struct side_spec {
	flame_side side;
	const reportdata_cap *caps;
	size_t n;
	const pprof_label_filter *only; /* NULL: every sample */
	size_t *kept;                   /* NULL, or as for load_where, added up */
} side_spec;

/* A capture add_sides loads, and what loading it gave. */
typedef struct side_load {
	const reportdata_cap *cap;
	const pprof_label_filter *only;
	profile *p;
	size_t kept;
	int rc;
	pr_error err;
} side_load;

#define LOAD_HELPERS_MAX 3

/* What load_one needs: the captures, and a text buffer per ahead slot. */
typedef struct side_loads {
	side_load *items;
	size_t n;
	unsigned helpers;
	blob_store *bs;
	const profile_limits *lim;
	buf *raw;                          /* slot 0, the caller's */
	buf raws[LOAD_HELPERS_MAX + 1];    /* slots 1.. */
} side_loads;

/* Load item i (ahead_fn): on the consumer's thread or a helper's. */
static void load_one(void *ctx, size_t i, unsigned slot)
{
	side_loads *sl = ctx;
	side_load *it = &sl->items[i];
	buf *raw = slot ? &sl->raws[slot] : sl->raw;

	it->kept = FORMAT_NO_LABELS;
	if (!it->cap->blob_key)
		return;
	it->rc = load_where(&it->p, &it->kept, sl->bs, it->cap, sl->lim, it->only, raw,
			    &it->err);
	/* A helper near the end will not need its text buffer again: give it back. */
	if (slot && sl->n - 1 - i <= sl->helpers)
		buf_release(raw);
}

/*
 * Add the captures of each side in turn, each weighted by 1 / its total.
 * Captures in the summary tier have no profile left: they are skipped and
 * counted in *skipped; a side left with none is an error. Each capture is
 * read, decompressed and parsed ahead on a helper thread where the machine
 * has a processor to spare, while this thread adds the ones before it to
 * the tree, in order: the tree, its sums and the first error reported are
 * those of adding the captures one after the other. `raw`: a text buffer
 * this thread reuses across captures (the caller releases it).
 */
static int add_sides(flame_tree *t, blob_store *bs, const side_spec *sides, size_t nsides,
		     const profile_limits *lim, size_t *skipped, buf *raw, pr_error *err)
{
	side_loads sl;
	ahead *ah = NULL;
	size_t k = 0;
	int rc = 0;

	memset(&sl, 0, sizeof(sl));
	for (size_t i = 0; i <= LOAD_HELPERS_MAX; i++)
		sl.raws[i] = (buf)BUF_INIT;
	sl.bs = bs;
	sl.lim = lim;
	sl.raw = raw;
	for (size_t s = 0; s < nsides; s++) {
		size_t n = sides[s].n;
		sl.n += n > REPORTDATA_MAX_FLAME_CAPTURES ? REPORTDATA_MAX_FLAME_CAPTURES : n;
	}
	if (sl.n && !(sl.items = calloc(sl.n, sizeof(*sl.items)))) {
		rc = oom(err);
		goto out;
	}
	for (size_t s = 0; s < nsides; s++) {
		size_t n = sides[s].n;
		for (size_t i = n > REPORTDATA_MAX_FLAME_CAPTURES
					? n - REPORTDATA_MAX_FLAME_CAPTURES : 0; i < n; i++) {
			sl.items[k].cap = &sides[s].caps[i];
			sl.items[k++].only = sides[s].only;
		}
	}
	sl.helpers = ahead_helpers(LOAD_HELPERS_MAX);
	if (ahead_start(&ah, sl.n, sl.helpers, sl.helpers, load_one, &sl) < 0) {
		rc = oom(err);
		goto out;
	}
	k = 0;
	for (size_t s = 0; s < nsides; s++) {
		const side_spec *sp = &sides[s];
		size_t first = sp->n > REPORTDATA_MAX_FLAME_CAPTURES
				       ? sp->n - REPORTDATA_MAX_FLAME_CAPTURES : 0;
		size_t used = 0;
		double sum = 0;

		for (size_t i = first; i < sp->n; i++, k++) {
			side_load *it = &sl.items[k];
			profile *p;
			double total = 0;

			ahead_wait(ah, k);
			if (!it->cap->blob_key) {
				(*skipped)++;
				continue;
			}
			if (it->rc < 0) {
				rc = pr_error_set(err, it->rc, "%s", it->err.msg);
				goto out;
			}
			p = it->p;
			if (sp->kept && it->kept != FORMAT_NO_LABELS)
				*sp->kept = (*sp->kept == FORMAT_NO_LABELS ? 0 : *sp->kept) +
					    it->kept;
			for (size_t j = 0; j < p->nsamples; j++)
				total += (double)p->values[j * p->nvalue_types + p->primary];
			if (total > 0)
				rc = flame_tree_add_profile(t, sp->side, p, p->primary, 1 / total,
							    err);
			/* The page's absolute values: what one capture holds on average. */
			sum += total;
			if (!t->unit[0])
				snprintf(t->unit, sizeof(t->unit), "%s",
					 p->value_types[p->primary].unit);
			profile_free(p);
			it->p = NULL;
			if (rc < 0)
				goto out;
			used++;
		}
		if (used)
			t->per_capture[sp->side] = sum / (double)used;
		if (sp->n && !used) {
			rc = pr_error_set(err, PR_ENOTFOUND,
					  "none of the %s captures still has its profile "
					  "(they are in the summary tier)",
					  sp->side == FLAME_BASE ? "baseline" : "current");
			goto out;
		}
	}
out:
	ahead_free(ah);
	for (size_t i = 0; i < sl.n; i++)
		profile_free(sl.items[i].p);
	for (size_t i = 0; i <= LOAD_HELPERS_MAX; i++)
		buf_release(&sl.raws[i]);
	free(sl.items);
	return rc;
}

static int build_flame(flame_tree **out, blob_store *bs, const reportdata_cap *base, size_t nb,
		       const reportdata_cap *cur, size_t nc, const profile_limits *lim,
		       size_t *skipped, pr_error *err)
{
	flame_tree *t = malloc(sizeof(*t));
	buf raw = BUF_INIT;
	side_spec sides[2];
	int rc;

	*out = NULL;
	*skipped = 0;
	if (!t)
		return oom(err);
	if ((rc = flame_tree_init(t, err)) < 0) {
		free(t);
		return rc;
	}
	/* One text buffer for every capture this thread loads, of both sides. */
	sides[0] = (side_spec){FLAME_BASE, base, nb, NULL, NULL};
	sides[1] = (side_spec){FLAME_CUR, cur, nc, NULL, NULL};
	if ((rc = add_sides(t, bs, sides, 2, lim, skipped, &raw, err)) < 0) {
		buf_release(&raw);
		flame_tree_release(t);
		free(t);
		return rc;
	}
	buf_release(&raw);
	*out = t;
	return 0;
}

/* The note under a graph drawn without the captures retention summarised. */
static char *skipped_note(size_t skipped)
{
	char note[160];

	snprintf(note, sizeof(note),
		 "The flame graph leaves out %zu capture%s in the summary tier, "
		 "whose profiles are no longer kept; the statistics use all.",
		 skipped, skipped == 1 ? "" : "s");
	return strdup(note);
}

/*
 * What retention did to a finding's captures, as sentences: `a` and `b`
 * (either ""), capitalised and joined, after `lead` and before `tail`.
 */
static char *gone_note(const char *lead, const char *a, const char *b, const char *tail)
{
	buf n = BUF_INIT;
	size_t start;

	buf_puts(&n, lead);
	start = n.len;
	buf_printf(&n, "%s%s%s%s", a, *a && *b ? "; " : "", b, tail);
	if (n.ptr && n.len > start && n.ptr[start] >= 'a' && n.ptr[start] <= 'z')
		n.ptr[start] = (char)(n.ptr[start] - 'a' + 'A');
	return buf_detach(&n, NULL);
}

/* ---- findings ---- */

static const char finding_cols[] =
	"select f.id, s.name, f.profile_type, f.function, coalesce(fn.file, "
	"''), f.direction, f.severity,"
	" f.status, f.detail ->> 'test', f.current_release, f.baseline_share, "
	"f.current_share, f.delta,"
	" f.rel_delta, f.ci_low, f.ci_high, f.p_value, f.q_value, "
	"f.baseline_captures, f.current_captures,"
	" coalesce((f.detail -> 'captures')::text, '{}'), f.function_id, f.service_id,"
	" coalesce((select d.commit_sha from deploys d where d.service_id = f.service_id"
	"   and d.release = f.current_release and d.commit_sha is not null order by d.deployed_at "
	"desc, d.id desc limit 1),"
	"  (select p.commit_sha from profiles p where p.service_id = f.service_id"
	"   and p.release = f.current_release and p.commit_sha is not null order by "
	"p.captured_at desc limit 1)),"
	" (select d2.commit_sha from deploys d2 where d2.service_id = f.service_id"
	"   and d2.release <> f.current_release and d2.commit_sha is not null and d2.deployed_at <="
	"   coalesce((select max(d3.deployed_at) from deploys d3 where d3.service_id = f.service_id"
	"   and d3.release = f.current_release), now()) order by d2.deployed_at "
	"desc, d2.id desc limit 1),"
	" f.state, f.fixed_by, coalesce(f.incident_id, 0), coalesce(g.lead_finding_id, 0),"
	" case when f.kind = 'cost' then coalesce(f.detail ->> 'cost_unit', 'cost') end,"
	" f.detail ->> 'renamed_from', coalesce((f.detail ->> 'renamed_from_id')::bigint, 0),"
	" coalesce(f.carried_from, 0), (select c.current_release from findings c"
	"   where c.id = f.carried_from),"
	" coalesce((select c.accepted from findings c where c.id = f.carried_from), false)"
	" from findings f join services s on s.id = f.service_id"
	" left join finding_groups g on g.id = f.incident_id"
	" left join functions fn on fn.id = f.function_id where ";
static const char finding_order[] =
	" order by case f.direction when 'regression' then 0 when "
	"'relative_shift' then 1 else 2 end,"
	" case f.severity when 'critical' then 0 when 'high' then 1 when 'medium' then 2 "
	"when 'low' then 3 else 4 end,"
	" f.score desc nulls last, f.id";

/*
 * The incident snapshots taken on a capture's host within
 * REPORT_SNAPSHOT_WINDOW_US of its time, each once, beside the capture it
 * is closest to. The query (snapshot_near, the snapshots table's owner)
 * covers every host of the captures over their whole time span; the
 * window is applied capture by capture here. Only snapshots of the
 * finding's service and of its team's other services (with `team`, of
 * that team's services): every report of a finding goes to its team (a
 * post-deploy's, a page's link, a finding's), and is written by a job
 * role that reads every snapshot. A shared host's snapshots of other
 * teams' services (their incident, their free-text reason) and the
 * host's own (no service, admins only) stay out of it.
 */
static int attach_snapshots(report_finding *f, db *d, const char *team, pr_error *err)
{
	const char **hosts = NULL;
	json_t *arr = NULL, *s;
	int64_t from = INT64_MAX, to = INT64_MIN;
	size_t nh = 0, i;
	bool bad = false;
	int rc = 0;

	if (!f->ncaps)
		return 0;
	if (!(hosts = calloc(f->ncaps, sizeof(*hosts))))
		return oom(err);
	for (i = 0; i < f->ncaps; i++) {
		if (!f->caps[i].host)
			continue;
		hosts[nh++] = f->caps[i].host;
		if (f->caps[i].at_us < from)
			from = f->caps[i].at_us;
		if (f->caps[i].at_us > to)
			to = f->caps[i].at_us;
	}
	if (!nh)
		goto out;
	if ((rc = snapshot_near(&arr, d, hosts, nh, from - REPORT_SNAPSHOT_WINDOW_US,
				to + REPORT_SNAPSHOT_WINDOW_US, team, f->service, err)) < 0)
		goto out;
	if (json_array_size(arr) &&
	    !(f->snaps = calloc(json_array_size(arr), sizeof(*f->snaps)))) {
		rc = oom(err);
		goto out;
	}
	json_array_foreach(arr, i, s) {
		const char *host = json_string_value(json_object_get(s, "host"));
		int64_t at = json_integer_value(json_object_get(s, "taken_at_us"));
		const report_capture *best = NULL;
		int64_t best_gap = 0;
		report_snapshot *rs;

		for (size_t k = 0; k < f->ncaps; k++) {
			const report_capture *c = &f->caps[k];
			int64_t gap = at - c->at_us;
			if (!c->host || !host || strcmp(c->host, host) != 0 ||
			    gap > REPORT_SNAPSHOT_WINDOW_US || gap < -REPORT_SNAPSHOT_WINDOW_US)
				continue;
			if (!best || llabs(gap) < llabs(best_gap)) {
				best = c;
				best_gap = gap;
			}
		}
		if (!best)
			continue;
		rs = &f->snaps[f->nsnaps++];
		rs->id = json_integer_value(json_object_get(s, "id"));
		rs->taken_us = at;
		rs->capture_id = best->id;
		rs->gap_us = best_gap;
		rs->host = dup_or_null(host, &bad);
		rs->incident = dup_or_null(json_string_value(json_object_get(s, "incident")), &bad);
		rs->reason = dup_or_null(json_string_value(json_object_get(s, "reason")), &bad);
	}
	if (bad)
		rc = oom(err);
out:
	json_decref(arr);
	free(hosts);
	return rc;
}

/* The captures of a finding's capture_ids (its baseline's and its current ones) into *out. */
static int cost_captures(capture_set *out, db *d, const char *captures_json, pr_error *err)
{
	static const char *const sides[] = {"baseline", "current"};
	json_t *ids = json_loads(captures_json ? captures_json : "{}", 0, NULL);
	json_t *all = json_array(), *v;
	char *text = NULL;
	bool bad = !all;
	size_t i;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	for (size_t k = 0; k < 2 && !bad; k++) {
		const json_t *side = json_object_get(ids, sides[k]);
		for (i = 0; i < json_array_size(side) && !bad; i++) {
			v = json_array_get(side, i);
			bad |= json_array_append_new(all, json_incref(v)) < 0;
		}
	}
	if (bad || (json_array_size(all) && !(text = json_dumps(all, JSON_COMPACT))))
		rc = oom(err);
	else if (text)
		rc = capture_set_load_ids(out, d, text, err);
	free(text);
	json_decref(all);
	json_decref(ids);
	return rc;
}

/* The cost of capture `id` of cs in `cost_unit` (analysis_capture_cost); 0 unknown. */
static double cost_of(const capture_set *cs, int64_t id, const char *type, const char *cost_unit)
{
	for (size_t i = 0; i < cs->n; i++)
		if (cs->caps[i].id == id)
			return analysis_capture_cost(&cs->caps[i], type, cost_unit);
	return 0;
}

/*
 * The finding's captures, with the function's share in each: in the
 * baseline captures, under its old id when the release renamed it
 * (`old_id`, 0 when not). A cost finding's points are each capture's
 * cost in the finding's unit, computed by the analysis's own code
 * (analysis_capture_cost): its "function" is no function, and its self
 * share was 0 in every capture, a flat line that hid the rise. A copy of
 * that measure in SQL drifted from it: it missed the finding's unit
 * ("per_load:cpu_s_per_s" is no "per_load"), samples of a CPU-time
 * period, and load figures such as "6.5e1". A function a summarised
 * capture did not keep is unknown there, not 0 (docs/retention.md): no
 * point, and no part in the band. The share is looked up in each
 * capture's vector: the profile_functions view unpacked every function
 * of every capture to find one (35 ms a capture of 30,000 functions, a
 * query of seconds for each finding of each report).
 */
static int load_captures(report_finding *f, reportdata_cap **caps_out, size_t *ncaps, db *d,
			 const char *captures_json, int64_t function_id, int64_t old_id,
			 pr_error *err)
{
	/* The query reads as SQL, one clause a line. */
	/* clang-format off */
	static const char sql[] =
		"with c as (select x::bigint as id, false as cur from "
		"jsonb_array_elements_text($1::jsonb -> 'baseline') x"
		" union all select x::bigint, true from "
		"jsonb_array_elements_text($1::jsonb -> 'current') x)"
		" select p.id, c.cur, " DB_TS_TO_US("p.captured_at") ","
		" case when p.blob_deleted_at is null then p.blob_key end, p.release,"
		" p.host, p.retention_class, p.format, p.profile_type, "
		"case when $4::text <> '' then null"
		" when m.k is not null then"
		"  coalesce(v.self_values[m.k]::float8 / nullif(p.total_value, 0), 0)"
		" when p.retention_class = 'summary' then null else 0 end, p.service_id,"
		" p.total_value, p.commit_sha"
		" from c join profiles p on p.id = c.id"
		" left join profile_vectors v on v.profile_id = p.id"
		" left join lateral (select array_position(v.function_ids,"
		"  case when c.cur or $3::bigint = 0 then $2::bigint else $3::bigint end) as k) m"
		"  on true"
		" order by c.cur, p.captured_at, p.id";
	/* clang-format on */
	char fid[24], oid[24];
	const char *p[4] = {captures_json, fid, oid, f->cost_unit ? f->cost_unit : ""};
	PGresult *res = NULL;
	reportdata_cap *caps = NULL;
	capture_set cost = {NULL, 0};
	int rows = 0, rc;
	bool bad = false;

	snprintf(fid, sizeof(fid), "%" PRId64, function_id);
	snprintf(oid, sizeof(oid), "%" PRId64, old_id);
	if (f->cost_unit && (rc = cost_captures(&cost, d, captures_json, err)) < 0)
		return rc;
	if ((rc = db_exec(d, &res, err, "reading a finding's captures", sql, 4, p)) < 0)
		goto out;
	rows = db_rows(res);
	if (rows && (!(f->caps = calloc((size_t)rows, sizeof(*f->caps))) ||
		     !(f->points = calloc((size_t)rows, sizeof(*f->points))) ||
		     !(caps = calloc((size_t)rows, sizeof(*caps))))) {
		rc = oom(err);
		goto out;
	}
	for (int i = 0; i < rows; i++) {
		report_capture *c = &f->caps[f->ncaps++];
		report_point *pt = &f->points[f->npoints];
		reportdata_cap *rc2 = &caps[i];
		c->id = pt->capture_id = rc2->id = db_get_i64(res, i, 0);
		c->current = pt->current = db_get_bool(res, i, 1);
		c->at_us = pt->at_us = rc2->at_us = db_get_i64(res, i, 2);
		c->blob_key = dup_or_null(db_get_text(res, i, 3), &bad);
		c->release = dup_or_null(db_get_text(res, i, 4), &bad);
		c->host = dup_or_null(db_get_text(res, i, 5), &bad);
		c->retention = dup_or_null(db_get_text(res, i, 6), &bad);
		pt->share = f->cost_unit
				    ? cost_of(&cost, c->id, db_get_text(res, i, 8), f->cost_unit)
				    : db_get_f64(res, i, 9);
		/* A capture without the measure (no duration, no load) has no point. */
		f->npoints += f->cost_unit ? pt->share > 0 : !PQgetisnull(res, i, 9);
		rc2->blob_key = dup_or_null(db_get_text(res, i, 3), &bad);
		rc2->format = dup_or_null(db_get_text(res, i, 7), &bad);
		rc2->type = dup_or_null(db_get_text(res, i, 8), &bad);
		rc2->service_id = db_get_i64(res, i, 10);
		rc2->total = db_get_i64(res, i, 11);
		rc2->commit = dup_or_null(db_get_text(res, i, 12), &bad);
		/* The scratch copy carries its side in `retention`. */
		rc2->retention = dup_or_null(c->current ? "current" : "baseline", &bad);
	}
	if (bad) {
		rc = oom(err);
		goto out;
	}
	report_finding_band(f);
	*caps_out = caps;
	*ncaps = (size_t)rows;
	caps = NULL;
out:
	reportdata_caps_free(caps, (size_t)rows);
	db_result_free(res);
	capture_set_release(&cost);
	return rc;
}

/*
 * The suspect commits stored by the run that computed them (run_id > 0:
 * that run's; else the latest), never recomputed here: the report, the
 * CI summary and the JSON all show the one computation.
 */
static int suspects(report_finding *f, db *d, int64_t run_id, pr_error *err)
{
	json_t *s = NULL, *commits, *c;
	const char *note;
	bool bad = false;
	size_t i;
	int rc;

	if ((rc = suspects_load(&s, d, run_id, f->id, err)) < 0)
		return rc;
	if (!s && run_id > 0 && (rc = suspects_load(&s, d, 0, f->id, err)) < 0)
		return rc;
	if (!s) {
		f->suspect_note = strdup("Suspect commits were not computed: no deploy of this "
					 "release was checked by 'profreg post-deploy'.");
		return f->suspect_note ? 0 : oom(err);
	}
	commits = json_object_get(s, "commits");
	note = json_string_value(json_object_get(s, "note"));
	if (json_array_size(commits) && !(f->suspects = calloc(json_array_size(commits),
							      sizeof(*f->suspects)))) {
		json_decref(s);
		return oom(err);
	}
	json_array_foreach(commits, i, c) {
		const char *subject = json_string_value(json_object_get(c, "subject"));
		const char *author = json_string_value(json_object_get(c, "author"));
		f->suspects[i].sha =
			dup_or_null(json_string_value(json_object_get(c, "sha")), &bad);
		f->suspects[i].author = dup_or_null(author ? author : "", &bad);
		f->suspects[i].subject = dup_or_null(subject ? subject : "", &bad);
		f->nsuspects++;
	}
	if (note)
		f->suspect_note = dup_or_null(note, &bad);
	json_decref(s);
	return bad ? oom(err) : 0;
}

/* The stored finding in the one finding schema, for the report's JSON. */
static int canonical(report_finding *f, db *d, pr_error *err)
{
	finding stored;
	findings_meta meta;
	json_t *j = NULL;
	int rc;

	if ((rc = findings_get(&stored, &meta, d, f->id, err)) < 0)
		return rc;
	if (!(j = analysis_finding_json(&stored)) ||
	    !(f->canonical = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(17))))
		rc = oom(err);
	json_decref(j);
	finding_clear(&stored);
	return rc;
}

/* A finding's states, oldest first (baselines/findings.h keeps them). */
static int history(report_finding *f, db *d, pr_error *err)
{
	json_t *h = NULL, *v;
	size_t i;
	bool bad = false;
	int rc;

	if ((rc = findings_history(&h, d, f->id, err)) < 0)
		return rc;
	if (json_array_size(h) && !(f->history = calloc(json_array_size(h), sizeof(*f->history)))) {
		json_decref(h);
		return oom(err);
	}
	json_array_foreach(h, i, v) {
		report_state *st = &f->history[f->nhistory++];
		st->state = dup_or_null(json_string_value(json_object_get(v, "state")), &bad);
		st->at = dup_or_null(json_string_value(json_object_get(v, "at")), &bad);
		st->reason = dup_or_null(json_string_value(json_object_get(v, "reason")), &bad);
		st->run = json_integer_value(json_object_get(v, "run"));
	}
	json_decref(h);
	return bad ? oom(err) : 0;
}

/* Load the findings that `where` (with params) selects into r. */
/* Append `s` percent-encoded: every byte but the URL's unreserved ones. */
static void url_put(buf *b, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~')
			buf_putc(b, (char)c);
		else
			buf_printf(b, "%%%02X", c);
	}
}

/* One side of a finding as the comparison page takes it (jobs/compare.h). */
static void url_side(buf *b, const report_finding *f, bool current, bool by_time)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	char t[TIME_FMT_MAX];
	bool first = true;

	for (size_t i = 0; i < f->ncaps; i++) {
		const report_capture *c = &f->caps[i];
		if (c->current != current)
			continue;
		if (!by_time) {
			buf_printf(b, "%s%" PRId64, first ? "id%3A" : ".", c->id);
			first = false;
		}
		lo = c->at_us < lo ? c->at_us : lo;
		hi = c->at_us > hi ? c->at_us : hi;
	}
	if (by_time) {
		time_format(t, lo);
		buf_puts(b, "since%3A");
		url_put(b, t);
		time_format(t, hi + 1);
		buf_puts(b, "%2Cuntil%3A");
		url_put(b, t);
	}
}

/*
 * The finding's captures on serve's comparison page at `page`: the
 * baseline's against the current's, by capture id, or by their time
 * spans when the ids would not fit the page's query cap. None for a
 * finding without captures on both sides, or of a heap type (the page
 * refuses those).
 */
static int compare_link(report_finding *f, const char *page, pr_error *err)
{
	buf b = BUF_INIT;
	size_t nb = 0, nc = 0, start;

	for (size_t i = 0; i < f->ncaps; i++)
		f->caps[i].current ? nc++ : nb++;
	if (!nb || !nc || !f->service || !f->type || !strcmp(f->type, "heap") ||
	    !strcmp(f->type, "alloc") || !strcmp(f->type, "allocs"))
		return 0;
	buf_printf(&b, "%s%cservice=", page, strchr(page, '?') ? '&' : '?');
	url_put(&b, f->service);
	buf_puts(&b, "&type=");
	url_put(&b, f->type);
	start = b.len;
	buf_puts(&b, "&a=");
	url_side(&b, f, false, false);
	buf_puts(&b, "&b=");
	url_side(&b, f, true, false);
	/* The page takes 500 ids a side and 4096 bytes a query. */
	if (b.len > start && (nb > 500 || nc > 500 || b.len - start > 3800)) {
		b.len = start;
		b.ptr[start] = '\0';
		buf_puts(&b, "&a=");
		url_side(&b, f, false, true);
		buf_puts(&b, "&b=");
		url_side(&b, f, true, true);
	}
	/* An append that failed emptied the buffer: the page's address is gone from its start. */
	if (strncmp(b.ptr, page, strlen(page)) != 0 || !(f->compare_href = buf_detach(&b, NULL))) {
		buf_release(&b);
		return oom(err);
	}
	return 0;
}

static int load_findings(report *r, db *d, blob_store *bs, const config *cfg, int64_t run_id,
			 const char *team, const char *where, int nparams,
			 const char *const *params, pr_error *err)
{
	buf sql = BUF_INIT;
	PGresult *res = NULL;
	profile_limits lim;
	int rows, rc;

	if (cfg)
		lim = cfg->limits;
	else
		profile_limits_default(&lim);
	if (buf_puts(&sql, finding_cols) < 0 || buf_puts(&sql, where) < 0 ||
	    buf_puts(&sql, finding_order) < 0)
		return oom(err);
	rc = db_exec(d, &res, err, "reading findings", sql.ptr, nparams, params);
	buf_release(&sql);
	if (rc < 0)
		return rc;
	rows = db_rows(res);
	for (int i = 0; i < rows && rc == 0; i++) {
		report_finding *f;
		reportdata_cap *caps = NULL;
		size_t ncaps = 0, nb = 0, drawable[2] = {0, 0};
		bool bad = false;
		const char *capjson = db_get_text(res, i, 20);
		evidence_left left;
		char gone[2][200];

		if ((rc = report_add_finding(r, &f, err)) < 0)
			break;
		f->id = db_get_i64(res, i, 0);
		f->service = dup_or_null(db_get_text(res, i, 1), &bad);
		f->type = dup_or_null(db_get_text(res, i, 2), &bad);
		f->function = dup_or_null(db_get_text(res, i, 3), &bad);
		f->file = dup_or_null(db_get_text(res, i, 4), &bad);
		f->direction = dup_or_null(db_get_text(res, i, 5), &bad);
		f->severity = dup_or_null(db_get_text(res, i, 6), &bad);
		f->status = dup_or_null(db_get_text(res, i, 7), &bad);
		f->test = dup_or_null(db_get_text(res, i, 8), &bad);
		f->release = dup_or_null(db_get_text(res, i, 9), &bad);
		f->baseline_share = f64n(res, i, 10);
		f->current_share = f64n(res, i, 11);
		f->delta = f64n(res, i, 12);
		f->rel_delta = f64n(res, i, 13);
		f->ci_low = f64n(res, i, 14);
		f->ci_high = f64n(res, i, 15);
		f->p_value = f64n(res, i, 16);
		f->q_value = f64n(res, i, 17);
		f->baseline_captures = (size_t)db_get_i64(res, i, 18);
		f->current_captures = (size_t)db_get_i64(res, i, 19);
		f->commit = dup_or_null(db_get_text(res, i, 23), &bad);
		f->state = dup_or_null(db_get_text(res, i, 25), &bad);
		f->fixed_by = dup_or_null(db_get_text(res, i, 26), &bad);
		f->incident_id = db_get_i64(res, i, 27);
		f->incident_lead = db_get_i64(res, i, 28);
		f->carried_from = db_get_i64(res, i, 32);
		if (!PQgetisnull(res, i, 33))
			f->carried_release = dup_or_null(db_get_text(res, i, 33), &bad);
		f->carried_accepted = db_get_bool(res, i, 34);
		if (!PQgetisnull(res, i, 29))
			f->cost_unit = dup_or_null(db_get_text(res, i, 29), &bad);
		if (!PQgetisnull(res, i, 30))
			f->renamed_from = dup_or_null(db_get_text(res, i, 30), &bad);
		if (!bad && ((rc = canonical(f, d, err)) < 0 || (rc = history(f, d, err)) < 0))
			break;
		if (bad) {
			rc = oom(err);
			break;
		}
		if ((rc = load_captures(f, &caps, &ncaps, d, capjson, db_get_i64(res, i, 21),
					db_get_i64(res, i, 31), err)) < 0 ||
		    (rc = attach_snapshots(f, d, team, err)) < 0)
			break;
		if (cfg && cfg->reports.compare_url &&
		    (rc = compare_link(f, cfg->reports.compare_url, err)) < 0)
			break;
		if ((rc = evidence_count(&left, d, f->id, err)) < 0) {
			reportdata_caps_free(caps, ncaps);
			break;
		}
		f->baseline_deleted = left.baseline.stored - left.baseline.left;
		f->current_deleted = left.current.stored - left.current.left;
		evidence_gone_text(gone[0], sizeof(gone[0]), &left, true);
		evidence_gone_text(gone[1], sizeof(gone[1]), &left, false);
		if ((gone[0][0] || gone[1][0]) &&
		    !(f->captures_note = gone_note("", gone[0], gone[1], "."))) {
			rc = oom(err);
			reportdata_caps_free(caps, ncaps);
			break;
		}
		for (size_t k = 0; k < ncaps; k++) {
			bool base = strcmp(caps[k].retention, "baseline") == 0;
			nb += base;
			/* Only a capture that has its profile can be drawn. */
			drawable[!base] += caps[k].blob_key != NULL;
			if (!r->window_from_us || caps[k].at_us < r->window_from_us)
				r->window_from_us = caps[k].at_us;
			if (caps[k].at_us > r->window_to_us)
				r->window_to_us = caps[k].at_us;
		}
		/* Findings of one target share their captures: draw them once. */
		for (int k = 0; k < i && f->flame_ref < 0; k++)
			if (r->findings[k].flame && strcmp(db_get_text(res, k, 20), capjson) == 0)
				f->flame_ref = k;
		/*
		 * A closed finding's baseline may be gone (its pins lifted, and
		 * retention deleted it or cut it to a summary): drawn against no
		 * baseline, every frame read as new ("baseline 0.000%"). Say
		 * what went where the graph would be, and draw none.
		 */
		if (f->flame_ref < 0 &&
		    ((left.baseline.stored && !drawable[0]) ||
		     (left.current.stored && !drawable[1])) &&
		    (gone[0][0] || gone[1][0])) {
			if (!(f->flame_note = gone_note(
				      "", left.baseline.stored && !drawable[0] ? gone[0] : "",
				      left.current.stored && !drawable[1] ? gone[1] : "",
				      ": no differential flame graph."))) {
				rc = oom(err);
				reportdata_caps_free(caps, ncaps);
				break;
			}
		} else if (f->flame_ref < 0 && ncaps) {
			pr_error ferr = PR_ERROR_INIT;
			size_t skipped = 0;
			/*
			 * The flame graph reads the captures whole: the database
			 * checks the heap permission and audits the read. Refused,
			 * the finding keeps its numbers and says why it has no graph.
			 */
			rc = access_read_captures(d, "capture.flame", NULL, &caps[0].id, ncaps,
						  sizeof(*caps), true, &ferr);
			if (rc == PR_EREFUSED || rc == PR_ENOTFOUND) {
				char note[PR_ERROR_MSG_MAX + 64];
				snprintf(note, sizeof(note), "No flame graph: %s", ferr.msg);
				f->flame_note = strdup(note);
				rc = 0;
			} else if (rc < 0) {
				pr_error_set(err, ferr.code, "%s", ferr.msg);
				reportdata_caps_free(caps, ncaps);
				break;
			} else if (build_flame(&f->flame, bs, caps, nb, caps + nb, ncaps - nb, &lim,
					&skipped, &ferr) < 0) {
				char note[PR_ERROR_MSG_MAX + 64];
				if (ferr.code == PR_EDB || ferr.code == PR_ENOMEM) {
					rc = pr_error_set(err, ferr.code, "%s", ferr.msg);
					reportdata_caps_free(caps, ncaps);
					break;
				}
				snprintf(note, sizeof(note), "No flame graph: %s", ferr.msg);
				f->flame_note = strdup(note);
			} else if (f->baseline_deleted || f->current_deleted) {
				/* Drawn from what is left: say how much that is. */
				f->flame_note = gone_note("The graph compares what is left: ",
							  f->baseline_deleted ? gone[0] : "",
							  f->current_deleted ? gone[1] : "", ".");
			} else if (skipped) {
				f->flame_note = skipped_note(skipped);
			}
		} else if (!ncaps) {
			f->flame_note = strdup("No flame graph: the finding's captures are gone.");
		}
		reportdata_caps_free(caps, ncaps);
		if (f->direction && strcmp(f->direction, "regression") == 0 &&
		    (rc = suspects(f, d, run_id, err)) < 0)
			break;
	}
	db_result_free(res);
	return rc;
}

/* Append "name: why" to a report's list of service lines; PR_ENOMEM, unset, on failure. */
static int add_line(char ***list, size_t *n, const char *name, const char *why)
{
	buf line = BUF_INIT;
	char **nl;

	if (buf_printf(&line, "%s: %s", name, why) < 0 ||
	    !(nl = realloc(*list, (*n + 1) * sizeof(*nl)))) {
		buf_release(&line);
		return PR_ENOMEM;
	}
	*list = nl;
	(*list)[(*n)++] = buf_detach(&line, NULL);
	return 0;
}

static int run_summary(report *r, db *d, int64_t run_id, pr_error *err)
{
	static const char sql[] =
		"select r.kind, r.status, " DB_TS_TO_US("r.started_at") ","
		" " DB_TS_TO_US("r.finished_at") ", profreg_run_detail(r.id)::text, s.name"
		" from runs r left join services s on s.id = r.service_id where r.id = $1";
	char id[24];
	buf title = BUF_INIT;
	const char *p[1] = {id};
	PGresult *res = NULL;
	json_t *detail = NULL, *services, *reasons;
	bool bad = false;
	int rc;

	snprintf(id, sizeof(id), "%" PRId64, run_id);
	if ((rc = db_exec(d, &res, err, "reading the run", sql, 1, p)) < 0)
		return rc;
	if (db_rows(res) != 1) {
		rc = pr_error_set(err, PR_ENOTFOUND, "run %s not found", id);
		goto out;
	}
	r->run_id = run_id;
	r->run_kind = dup_or_null(db_get_text(res, 0, 0), &bad);
	r->run_status = dup_or_null(db_get_text(res, 0, 1), &bad);
	r->started_us = db_get_i64(res, 0, 2);
	r->finished_us = db_get_i64(res, 0, 3);
	detail = json_loads(db_get_text(res, 0, 4), 0, NULL);
	if (json_is_integer(json_object_get(detail, "at_us")))
		r->judged_us = (int64_t)json_integer_value(json_object_get(detail, "at_us"));
	if (json_is_integer(json_object_get(detail, "analysed")))
		r->services_analysed =
			(long)json_integer_value(json_object_get(detail, "analysed"));
	if (json_is_integer(json_object_get(detail, "failed")))
		r->services_failed = (long)json_integer_value(json_object_get(detail, "failed"));
	if ((services = json_object_get(detail, "services"))) {
		const char *name;
		json_t *v;
		json_object_foreach(services, name, v) {
			const char *st = json_string_value(json_object_get(v, "status"));
			const char *why = json_string_value(json_object_get(v, "reason"));
			/*
			 * "analysed" with a reason: a type or a release of it was
			 * not judged. Left out, a heap never judged read as a heap
			 * in which nothing moved.
			 */
			bool part = st && strcmp(st, "analysed") == 0 && why;
			bool failed = st && strcmp(st, "failed") == 0;
			char ***list = part ? &r->partial : failed ? &r->failures : &r->skips;
			size_t *n = part ? &r->npartial : failed ? &r->nfailures : &r->nskips;
			if (!st || (!part && !failed && strcmp(st, "skipped") != 0))
				continue;
			if ((rc = add_line(list, n, name, why ? why : st)) < 0)
				break;
		}
	}
	/* A post-deploy's verdict left open: each reason, as its own terminal says it. */
	reasons = json_object_get(detail, "inconclusive_reasons");
	for (size_t k = 0; rc == 0 && k < json_array_size(reasons); k++)
		if (json_is_string(json_array_get(reasons, k)))
			rc = add_line(&r->partial, &r->npartial,
				      db_get_text(res, 0, 5) ? db_get_text(res, 0, 5) : "-",
				      json_string_value(json_array_get(reasons, k)));
	bad |= rc < 0;
	rc = 0;
	/*
	 * Whole, not cut to a fixed size: a release of 256 bytes cut in the
	 * middle of a character made the title invalid UTF-8, and the JSON
	 * report could not be written.
	 */
	if (db_get_text(res, 0, 5)) {
		const char *rel = json_string_value(json_object_get(detail, "release"));
		const char *verdict = json_string_value(json_object_get(detail, "verdict"));
		/* An analyze of one service names no release. */
		bad |= buf_printf(&title, "profreg %s run %s: %s%s%s%s%s%s",
				  db_get_text(res, 0, 0), id, db_get_text(res, 0, 5),
				  rel ? " " : "", rel ? rel : "", verdict ? " (" : "",
				  verdict ? verdict : "",
				  verdict ? ")" : "") < 0;
		if (r->services_analysed < 0)
			r->services_analysed = 1, r->services_failed = 0;
	} else {
		bad |= buf_printf(&title, "profreg %s run %s", db_get_text(res, 0, 0), id) < 0;
	}
	if (!bad)
		r->title = buf_detach(&title, NULL);
	buf_release(&title);
	if (bad)
		rc = oom(err);
out:
	json_decref(detail);
	db_result_free(res);
	return rc;
}

/* The findings run `run_id` closed, of `team`'s services (NULL: all), into r. */
static int load_closed(report *r, db *d, int64_t run_id, const char *team, pr_error *err)
{
	json_t *arr = NULL, *v;
	size_t i;
	bool bad = false;
	int rc;

	if ((rc = findings_closed_by_run(&arr, d, run_id, team, err)) < 0)
		return rc;
	if (json_array_size(arr) &&
	    !(r->closed = calloc(json_array_size(arr), sizeof(*r->closed)))) {
		json_decref(arr);
		return oom(err);
	}
	json_array_foreach(arr, i, v) {
		report_closed *c = &r->closed[r->nclosed++];
		c->id = json_integer_value(json_object_get(v, "id"));
		c->service = dup_or_null(json_string_value(json_object_get(v, "service")), &bad);
		c->type = dup_or_null(json_string_value(json_object_get(v, "type")), &bad);
		c->release = dup_or_null(json_string_value(json_object_get(v, "release")), &bad);
		c->function = dup_or_null(json_string_value(json_object_get(v, "function")), &bad);
		c->direction =
			dup_or_null(json_string_value(json_object_get(v, "direction")), &bad);
		c->severity = dup_or_null(json_string_value(json_object_get(v, "severity")), &bad);
		c->state = dup_or_null(json_string_value(json_object_get(v, "state")), &bad);
		c->reason = dup_or_null(json_string_value(json_object_get(v, "reason")), &bad);
	}
	json_decref(arr);
	return bad ? oom(err) : 0;
}

static void keep_services(char **lines, size_t *n, const PGresult *names);

int reportdata_run(report *out, db *d, blob_store *bs, const config *cfg, int64_t run_id,
		   pr_error *err)
{
	char id[24];
	const char *p[1] = {id};
	PGresult *names = NULL;
	int rc;

	snprintf(id, sizeof(id), "%" PRId64, run_id);
	if ((rc = report_init(out, "run", err)) < 0 ||
	    (rc = run_summary(out, d, run_id, err)) < 0 ||
	    (rc = load_findings(out, d, bs, cfg, run_id, NULL,
				"f.id in (select finding_id from run_findings where run_id = $1)",
				1, p, err)) < 0 ||
	    (rc = load_closed(out, d, run_id, NULL, err)) < 0)
		return rc;
	/*
	 * A role that is not an admin reads only the names of the services it
	 * may see (row security), not even in the failures and skips.
	 */
	if (out->nfailures || out->nskips || out->npartial) {
		bool admin;
		if ((rc = db_exec(d, &names, err, "reading the role", "select profreg_is_admin()",
				  0, NULL)) < 0)
			return rc;
		admin = db_get_bool(names, 0, 0);
		db_result_free(names);
		names = NULL;
		if (!admin && (rc = db_exec(d, &names, err, "reading the services",
					    "select name from services", 0, NULL)) < 0)
			return rc;
	}
	if (names) {
		keep_services(out->failures, &out->nfailures, names);
		keep_services(out->skips, &out->nskips, names);
		keep_services(out->partial, &out->npartial, names);
		db_result_free(names);
	}
	out->generated_us = time_now_us();
	return 0;
}

/* Keep the "service: reason" lines of the services in `names` (a result of names). */
static void keep_services(char **lines, size_t *n, const PGresult *names)
{
	size_t k = 0;

	for (size_t i = 0; i < *n; i++) {
		size_t len = strcspn(lines[i], ":");
		bool keep = false;
		for (int r = 0; r < db_rows(names) && !keep; r++) {
			const char *s = db_get_text(names, r, 0);
			keep = strlen(s) == len && strncmp(s, lines[i], len) == 0;
		}
		if (keep)
			lines[k++] = lines[i];
		else
			free(lines[i]);
	}
	*n = k;
}

/*
 * How many of the team's services the run analysed, from its record of
 * each service's outcome. When none was and nothing was found, the
 * report says so: an empty team report of services all skipped or
 * failed must not read as one where nothing moved. p: the run id and
 * the team. The record is read through profreg_run_detail: team roles,
 * whom this report is for, may not read runs.detail (migration 028).
 */
static int team_analysed(report *out, db *d, const char *const p[2], pr_error *err)
{
	PGresult *res = NULL;
	int rc;

	if ((rc = db_exec(d, &res, err, "reading a team's outcomes",
			  "select count(*) from (select profreg_run_detail($1::bigint) d) r,"
			  " services s where s.team = $2"
			  " and r.d -> 'services' -> s.name ->> 'status' = 'analysed'",
			  2, p)) < 0)
		return rc;
	if (db_rows(res) == 1 && db_get_i64(res, 0, 0) == 0 && !out->nfindings && !out->note &&
	    (out->nskips || out->nfailures) &&
	    !(out->note = strdup("None of the team's services was analysed in this run (see "
				 "above), so no finding here does not mean nothing moved.")))
		rc = oom(err);
	db_result_free(res);
	return rc;
}

/*
 * "team 'dem' has no services (did you mean 'demo'?)": a team report of
 * a team with no service is a typo, not an all-clear. The names come
 * from the services the role can see, so a team it cannot see gets the
 * same answer and no other team's name.
 */
static int team_not_found(db *d, const char *team, pr_error *err)
{
	PGresult *res = NULL;
	const char **names = NULL;
	char qt[208], qs[208];
	long best = -1;
	int n = 0, rc;

	if ((rc = db_exec(d, &res, err, "reading the teams",
			  "select team from services where team is not null"
			  " group by team order by team collate \"C\"",
			  0, NULL)) < 0)
		return rc;
	if ((n = db_rows(res)) > 0 && (names = calloc((size_t)n, sizeof(*names)))) {
		for (int i = 0; i < n; i++)
			names[i] = db_get_text(res, i, 0);
		best = similar_best(team, names, (size_t)n);
	}
	quote_sel(qt, sizeof(qt), team);
	if (best >= 0) {
		quote_sel(qs, sizeof(qs), names[best]);
		rc = pr_error_set(err, PR_ENOTFOUND,
				  "team '%s' has no services (did you mean '%s'?)", qt, qs);
	} else {
		rc = pr_error_set(err, PR_ENOTFOUND, "team '%s' has no services", qt);
	}
	free(names);
	db_result_free(res);
	return rc;
}

/* The kinds of run that analyse services, and so have findings a team may own. */
static bool analysis_run(const char *kind)
{
	return kind && (strcmp(kind, "analyze") == 0 || strcmp(kind, "nightly") == 0 ||
			strcmp(kind, "post-deploy") == 0);
}

int reportdata_run_team(report *out, db *d, blob_store *bs, const config *cfg, int64_t run_id,
			const char *team, pr_error *err)
{
	char id[24];
	const char *p[2] = {id, team};
	PGresult *names = NULL;
	buf title = BUF_INIT;
	int rc;

	snprintf(id, sizeof(id), "%" PRId64, run_id);
	if ((rc = report_init(out, "run", err)) < 0 || (rc = run_summary(out, d, run_id, err)) < 0)
		goto out;
	if (!analysis_run(out->run_kind)) {
		char qk[40];
		quote_sel(qk, sizeof(qk), out->run_kind ? out->run_kind : "");
		rc = pr_error_set(err, PR_EDATA,
				  "run %s is a '%s' run: a team report is of a run that analysed "
				  "services (analyze, nightly, post-deploy)",
				  id, qk);
		goto out;
	}
	if ((rc = db_exec(d, &names, err, "reading a team's services",
			  "select name from services where team = $1", 1, p + 1)) < 0)
		goto out;
	if (db_rows(names) == 0) {
		rc = team_not_found(d, team, err);
		goto out;
	}
	if ((rc = load_findings(out, d, bs, cfg, run_id, team,
				"f.id in (select finding_id from run_findings where run_id = $1)"
				" and s.team = $2",
				2, p, err)) < 0 ||
	    (rc = load_closed(out, d, run_id, team, err)) < 0)
		goto out;
	/* Other teams' services are not named, not even in the failures and skips. */
	keep_services(out->failures, &out->nfailures, names);
	keep_services(out->skips, &out->nskips, names);
	keep_services(out->partial, &out->npartial, names);
	out->services_analysed = out->services_failed = -1;
	if ((rc = team_analysed(out, d, p, err)) < 0)
		goto out;
	if (buf_printf(&title, "%s, team %s", out->title ? out->title : "profreg run", team) < 0) {
		rc = oom(err);
		goto out;
	}
	free(out->title);
	out->title = buf_detach(&title, NULL);
	out->generated_us = time_now_us();
out:
	db_result_free(names);
	return rc;
}

int reportdata_finding(report *out, db *d, blob_store *bs, const config *cfg,
		       int64_t finding_id, pr_error *err)
{
	char id[24], title[64];
	const char *p[1] = {id};
	int rc;

	snprintf(id, sizeof(id), "%" PRId64, finding_id);
	snprintf(title, sizeof(title), "profreg finding %s", id);
	if ((rc = report_init(out, "finding", err)) < 0)
		return rc;
	if (!(out->title = strdup(title)))
		return oom(err);
	if ((rc = load_findings(out, d, bs, cfg, 0, NULL, "f.id = $1", 1, p, err)) < 0)
		return rc;
	if (!out->nfindings)
		return pr_error_set(err, PR_ENOTFOUND, "finding %s not found", id);
	out->generated_us = time_now_us();
	return 0;
}

int reportdata_release(report *out, db *d, blob_store *bs, const config *cfg,
		       const char *service, const char *release, pr_error *err)
{
	const char *p[2] = {service, release};
	buf title = BUF_INIT;
	db_service svc = {0};
	db_capture_tally nrel = {-1, 0, 0, 0};
	char hint[400], qs[208], qr[208];
	int64_t sid;
	int rc;

	if ((rc = report_init(out, "release", err)) < 0)
		return rc;
	if ((rc = db_service_get(d, &svc, service, err)) < 0)
		return rc;
	/* A release the service never had is a typo, not a release where nothing moved. */
	if ((rc = db_capture_count(d, &nrel, svc.id, release, 0, 0, 0, err)) < 0 ||
	    (nrel.all == 0 &&
	     (rc = job_release_hint(hint, sizeof(hint), d, svc.id, release, err)) < 0)) {
		db_service_release(&svc);
		return rc;
	}
	sid = svc.id;
	db_service_release(&svc);
	if (nrel.all == 0) {
		quote_sel(qs, sizeof(qs), service);
		quote_sel(qr, sizeof(qr), release);
		return pr_error_set(err, PR_ENOTFOUND, "service '%s' has no release '%s'%s", qs, qr,
				    hint);
	}
	if (buf_printf(&title, "profreg report: %s release %s", service, release) < 0)
		return oom(err);
	out->title = buf_detach(&title, NULL);
	if ((rc = load_findings(out, d, bs, cfg, 0, NULL, "s.name = $1 and f.current_release = $2",
				2, p, err)) < 0)
		return rc;
	if (!out->nfindings) {
		/*
		 * Judged and passed, or never judged: a release manager asking
		 * whether v2 was checked got the same hedge for both.
		 */
		char types[128], when[TIME_FMT_MAX];
		int64_t first_us = 0;
		buf note = BUF_INIT;
		if ((rc = findings_release_judged(types, sizeof(types), &first_us, d, sid, release,
						  err)) < 0)
			return rc;
		time_format(when, first_us);
		if ((types[0] ? buf_printf(&note,
					   "No stored finding for this release: it was judged "
					   "(%s, first at %s) and nothing moved beyond the margin.",
					   types, when)
			      : buf_puts(&note, "No stored finding for this release: no run has "
						"judged it (a release of the baseline only, or one "
						"no gate or nightly has analysed yet).")) < 0)
			return oom(err);
		out->note = buf_detach(&note, NULL);
	}
	out->generated_us = time_now_us();
	return 0;
}

/* ---- diff ---- */

static int ids_json(buf *out, const reportdata_cap *c, size_t n)
{
	int rc = buf_putc(out, '[');
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = buf_printf(out, "%s%" PRId64, i ? "," : "", c[i].id);
	return rc == 0 ? buf_putc(out, ']') : rc;
}

typedef struct fshare {
	uint32_t name;
	double self[2];
} fshare;

static int cmp_absdelta(const void *a, const void *b)
{
	const fshare *x = a, *y = b;
	double dx = fabs(x->self[1] - x->self[0]), dy = fabs(y->self[1] - y->self[0]);
	return dx < dy ? 1 : dx > dy ? -1 : 0;
}

static int cmp_test_absdelta(const void *a, const void *b)
{
	const finding *x = a, *y = b;
	double dx = fabs(x->delta), dy = fabs(y->delta);
	if (x->significant != y->significant)
		return x->significant ? -1 : 1;
	return dx < dy ? 1 : dx > dy ? -1 : 0;
}

/* Rows from the merged stacks alone: per function, self share on each side. */
static int rows_from_tree(report *r, const flame_tree *t, size_t top, const reportdata_cap *tc,
			  pr_error *err)
{
	fshare *fs = calloc(t->nnames ? t->nnames : 1, sizeof(*fs));
	int rc = 0;

	if (!fs)
		return oom(err);
	for (size_t i = 0; i < t->nnames; i++)
		fs[i].name = (uint32_t)i;
	for (size_t i = 1; i < t->n; i++) {
		double self[2], tot[2];
		flame_node_shares(t, (uint32_t)i, self, tot);
		fs[t->nodes[i].name].self[0] += self[0];
		fs[t->nodes[i].name].self[1] += self[1];
	}
	qsort(fs, t->nnames, sizeof(*fs), cmp_absdelta);
	for (size_t i = 0; i < t->nnames && i < top && rc == 0; i++) {
		report_finding *f;
		bool bad = false;
		if (fs[i].self[0] == 0 && fs[i].self[1] == 0)
			break;
		if ((rc = report_add_finding(r, &f, err)) < 0)
			break;
		f->function = dup_or_null(t->names[fs[i].name], &bad);
		f->service = dup_or_null(tc->service, &bad);
		f->type = dup_or_null(tc->type, &bad);
		f->baseline_share = fs[i].self[0];
		f->current_share = fs[i].self[1];
		f->delta = fs[i].self[1] - fs[i].self[0];
		f->rel_delta = fs[i].self[0] > 0 ? f->delta / fs[i].self[0] : NAN;
		f->ci_low = f->ci_high = NAN;
		f->baseline_captures = r->base_ncaps;
		f->current_captures = r->target_ncaps;
		if (bad)
			rc = oom(err);
	}
	free(fs);
	return rc;
}

int reportdata_diff(report *out, db *d, blob_store *bs, const config *cfg,
		    const reportdata_sel *base, const reportdata_sel *target, size_t top,
		    pr_error *err)
{
	reportdata_cap *bc = NULL, *tc = NULL;
	size_t nb = 0, nt = 0, skipped = 0;
	buf bids = BUF_INIT, tids = BUF_INIT, title = BUF_INIT;
	analysis a;
	analysis_opts o;
	profile_limits lim;
	bool one_target, bad = false;
	size_t shared = 0;
	int rc;

	memset(&a, 0, sizeof(a));
	if (cfg)
		lim = cfg->limits, o = cfg->analysis;
	else
		profile_limits_default(&lim), analysis_opts_default(&o);
	if ((rc = report_init(out, "diff", err)) < 0 ||
	    (rc = access_audit_unseen(d, "capture.diff", base->ids, base->nids, true, err)) < 0 ||
	    (rc = access_audit_unseen(d, "capture.diff", target->ids, target->nids, true,
				      err)) < 0 ||
	    (rc = reportdata_sel_captures(&bc, &nb, d, base, err)) < 0 ||
	    (rc = reportdata_sel_captures(&tc, &nt, d, target, err)) < 0 ||
	    (rc = access_read_captures(d, "capture.diff", NULL, &bc[0].id, nb, sizeof(*bc), true,
				       err)) < 0 ||
	    (rc = access_read_captures(d, "capture.diff", NULL, &tc[0].id, nt, sizeof(*tc), true,
				       err)) < 0)
		goto out;
	if (strcmp(bc[0].type, tc[0].type) != 0) {
		rc = pr_error_set(err, PR_EUSAGE, "cannot compare '%s' captures with '%s' captures",
				  bc[0].type, tc[0].type);
		goto out;
	}
	out->base_desc = dup_or_null(base->text, &bad);
	out->target_desc = dup_or_null(target->text, &bad);
	out->base_ncaps = nb;
	out->target_ncaps = nt;
	out->window_from_us = bc[0].at_us < tc[0].at_us ? bc[0].at_us : tc[0].at_us;
	out->window_to_us =
		bc[nb - 1].at_us > tc[nt - 1].at_us ? bc[nb - 1].at_us : tc[nt - 1].at_us;
	if (buf_printf(&title, "profreg diff: %s vs %s", base->text, target->text) < 0)
		bad = true;
	out->title = buf_detach(&title, NULL);
	if (bad) {
		rc = oom(err);
		goto out;
	}
	if ((rc = build_flame(&out->flame, bs, bc, nb, tc, nt, &lim, &skipped, err)) < 0)
		goto out;
	if (skipped)
		out->note = skipped_note(skipped);
	else if (nb > REPORTDATA_MAX_FLAME_CAPTURES || nt > REPORTDATA_MAX_FLAME_CAPTURES)
		out->note = strdup(
			"The flame graph merges the newest 64 captures of each "
			"side; the table uses all.");

	/* The analysis' own tests when both sides are one service's captures. */
	one_target = true;
	for (size_t i = 0; i < nb; i++)
		one_target &= bc[i].service_id == tc[0].service_id;
	for (size_t i = 0; i < nt; i++)
		one_target &= tc[i].service_id == tc[0].service_id;
	/*
	 * A capture on both sides (overlapping selections, or one side named
	 * twice) cannot be tested against itself: say so, not that the
	 * baseline is too thin.
	 */
	for (size_t i = 0; i < nb; i++)
		for (size_t k = 0; k < nt; k++)
			shared += bc[i].id == tc[k].id;
	if (one_target && nb >= 2 && !shared) {
		o.min_baseline = 2;
		analysis_init(&a, &o);
		if (ids_json(&bids, bc, nb) < 0 || ids_json(&tids, tc, nt) < 0) {
			rc = oom(err);
			goto out;
		}
		{
			analysis_target t = {
				tc[0].service_id, tc[0].service, tc[0].type, NULL, 0, 0,
				bids.ptr, tids.ptr,
				cfg ? config_service_week(config_service_find(cfg, tc[0].service))
				    : NULL,
				NULL};
			if ((rc = analysis_add(&a, d, &t, false, err)) < 0 ||
			    (rc = analysis_finish(&a, err)) < 0)
				goto out;
		}
	}
	if (a.ntests) {
		qsort(a.tests, a.ntests, sizeof(*a.tests), cmp_test_absdelta);
		for (size_t i = 0; i < a.ntests && i < top; i++) {
			const finding *t = &a.tests[i];
			report_finding *f;
			if ((rc = report_add_finding(out, &f, err)) < 0)
				goto out;
			f->service = dup_or_null(t->service, &bad);
			f->type = dup_or_null(t->type, &bad);
			f->function = dup_or_null(t->function, &bad);
			f->file = dup_or_null(t->file, &bad);
			f->test = dup_or_null(t->test, &bad);
			f->release = dup_or_null(tc[nt - 1].release, &bad);
			f->commit = dup_or_null(tc[nt - 1].commit, &bad);
			if (t->significant) {
				f->direction = dup_or_null(finding_dir_name(t->direction), &bad);
				f->severity = dup_or_null(stats_severity_name(t->severity), &bad);
			}
			if (t->cost_unit)
				f->cost_unit = dup_or_null(t->cost_unit, &bad);
			f->baseline_share = t->baseline_share;
			f->current_share = t->current_share;
			f->delta = t->delta;
			f->rel_delta = t->rel_delta;
			f->ci_low = t->ci_low;
			f->ci_high = t->ci_high;
			f->p_value = t->p_value;
			f->q_value = t->q_value;
			f->baseline_captures = t->baseline_captures;
			f->current_captures = t->current_captures;
		}
		if (bad) {
			rc = oom(err);
			goto out;
		}
	} else {
		char why[160];
		if (shared)
			snprintf(why, sizeof(why),
				 "Shares only: %zu capture%s on both sides, and no test can "
				 "compare a capture with itself.",
				 shared, shared == 1 ? " is" : "s are");
		else
			snprintf(why, sizeof(why), "%s",
				 one_target ? "Shares only: the analysis' tests need at least"
					      " two baseline captures."
					    : "Shares only: the analysis' tests need one service"
					      " on both sides.");
		if (!out->note)
			out->note = strdup(why);
		if ((rc = rows_from_tree(out, out->flame, top, &tc[0], err)) < 0)
			goto out;
	}
	out->generated_us = time_now_us();
out:
	analysis_release(&a);
	buf_release(&bids);
	buf_release(&tids);
	reportdata_caps_free(bc, nb);
	reportdata_caps_free(tc, nt);
	return rc;
}

/* ---- files ---- */

char *reportdata_dir(const config *cfg, const char *home)
{
	buf b = BUF_INIT;

	if (cfg && cfg->reports.dir)
		return strdup(cfg->reports.dir);
	if (buf_printf(&b, "%s/reports", home ? home : ".") < 0)
		return NULL;
	return buf_detach(&b, NULL);
}

/*
 * A name as a file name piece: [A-Za-z0-9._-] kept, every other byte as
 * ~XX. One name, one file: with a single stand-in, "支付" and "결제"
 * (both six bytes) wrote the same team file, the second team's report
 * over the first's, and releases "a/b" and "a_b" one release report.
 * Past FILE_PIECE_MAX characters the rest is cut, on a whole byte's
 * encoding, and the full name's SHA-256 (12 hex digits) keeps it one
 * name's: a name's bytes encoded three times over could pass the 255
 * bytes a file name may have.
 */
#define FILE_PIECE_MAX 80

int reportdata_file_piece(buf *out, const char *name)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	size_t at = out->len;
	int rc = 0;

	for (const unsigned char *s = (const unsigned char *)name; *s && rc == 0; s++) {
		if (out->len - at + 3 > FILE_PIECE_MAX)
			break;
		if (*s == '.' || *s == '_' || *s == '-' ||
		    (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9'))
			rc = buf_putc(out, (char)*s);
		else
			rc = buf_printf(out, "~%02X", *s);
	}
	if (rc < 0 || out->len - at + 3 <= FILE_PIECE_MAX)
		return rc;
	if (EVP_Digest(name, strlen(name), md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen < 6)
		return PR_ENOMEM;
	return buf_printf(out, "~~%02x%02x%02x%02x%02x%02x", md[0], md[1], md[2], md[3], md[4],
			  md[5]);
}

static int team_file_name(buf *out, const char *team)
{
	int rc = buf_puts(out, "-team-");

	return rc < 0 ? rc : reportdata_file_piece(out, team);
}

/* The run's three report files; with `team`, only that team's services. */
static int write_run(db *d, blob_store *bs, const config *cfg, const char *home,
		     int64_t run_id, const char *team, char **html_path, pr_error *err)
{
	static const char *ext[3] = {"html", "md", "json"};
	report r;
	buf text = BUF_INIT, path = BUF_INIT, tname = BUF_INIT;
	char *dir = NULL, name[REPORT_RUN_NAME_MAX];
	const char *instance;
	int rc;

	memset(&r, 0, sizeof(r));
	if (html_path)
		*html_path = NULL;
	if ((rc = team ? reportdata_run_team(&r, d, bs, cfg, run_id, team, err)
		       : reportdata_run(&r, d, bs, cfg, run_id, err)) < 0 ||
	    (rc = db_instance(d, &instance, err)) < 0)
		goto out;
	report_run_name(name, run_id, instance);
	if (team && team_file_name(&tname, team) < 0) {
		rc = oom(err);
		goto out;
	}
	if (!(dir = reportdata_dir(cfg, home))) {
		rc = oom(err);
		goto out;
	}
	if ((rc = fileio_mkdirs(dir, 0755, err)) < 0)
		goto out;
	for (int k = 0; k < 3; k++) {
		buf_reset(&text);
		buf_reset(&path);
		rc = k == 0 ? report_html(&text, &r, err) : k == 1 ? report_md(&text, &r, err)
								   : report_json(&text, &r, err);
		if (rc < 0)
			goto out;
		if (buf_printf(&path, "%s/%s%s.%s", dir, name, team ? tname.ptr : "", ext[k]) < 0) {
			rc = oom(err);
			goto out;
		}
		if ((rc = fileio_write_out(path.ptr, text.ptr, text.len, 0644, err)) < 0)
			goto out;
		if (k == 0 && html_path && !(*html_path = strdup(path.ptr))) {
			rc = oom(err);
			goto out;
		}
	}
out:
	if (rc < 0 && html_path) {
		free(*html_path);
		*html_path = NULL;
	}
	buf_release(&text);
	buf_release(&path);
	buf_release(&tname);
	free(dir);
	report_release(&r);
	return rc;
}

int reportdata_write_run(db *d, blob_store *bs, const config *cfg, const char *home,
			 int64_t run_id, char **html_path, pr_error *err)
{
	return write_run(d, bs, cfg, home, run_id, NULL, html_path, err);
}

int reportdata_write_run_team(db *d, blob_store *bs, const config *cfg, const char *home,
			      int64_t run_id, const char *team, char **html_path, pr_error *err)
{
	return write_run(d, bs, cfg, home, run_id, team, html_path, err);
}

int reportdata_write_run_teams(db *d, blob_store *bs, const config *cfg, const char *home,
			       int64_t run_id, size_t *written, pr_error *err)
{
	/* The teams of the run's services: its own, those with findings, those it looked at. */
	static const char sql[] =
		"select distinct s.team from services s where coalesce(s.team, '') <> '' and"
		" (s.id in (select f.service_id from findings f join run_findings rf"
		"   on rf.finding_id = f.id where rf.run_id = $1)"
		"  or exists (select 1 from runs r where r.id = $1 and (r.service_id = s.id"
		"   or coalesce(r.detail -> 'services', '{}') ? s.name)))"
		" order by 1";
	char id[24];
	const char *p[1] = {id};
	PGresult *res = NULL;
	int rc;

	*written = 0;
	snprintf(id, sizeof(id), "%" PRId64, run_id);
	if ((rc = db_exec(d, &res, err, "reading the run's teams", sql, 1, p)) < 0)
		return rc;
	/* One team's failure (a full disk, a name) leaves the other teams' reports. */
	for (int i = 0; i < db_rows(res); i++) {
		pr_error one = PR_ERROR_INIT;
		int r = write_run(d, bs, cfg, home, run_id, db_get_text(res, i, 0), NULL, &one);
		if (r == 0)
			(*written)++;
		else if (rc == 0)
			rc = pr_error_set(err, r, "%s", one.msg);
		pr_error_clear(&one);
	}
	db_result_free(res);
	return rc;
}

/* The span's label keys: OpenTelemetry's and Pyroscope's span_id, Datadog's local root span. */
static const char *const span_keys[] = {"span_id", "spanID", "local root span id", "span id"};
static const char *const trace_keys[] = {"trace_id", "traceID", "trace id"};

int reportdata_span(report *out, db *d, blob_store *bs, const config *cfg,
		    const reportdata_span_sel *s, pr_error *err)
{
	db_capture_filter f = {0};
	db_capture *dc = NULL;
	db_service svc = {0};
	reportdata_cap *caps = NULL;
	pprof_label_filter only = {NULL, 0, NULL};
	profile_limits lim;
	flame_tree *t = NULL;
	size_t n = 0, skipped = 0, kept = FORMAT_NO_LABELS;
	char from[TIME_FMT_MAX], to[TIME_FMT_MAX];
	buf title = BUF_INIT, note = BUF_INIT, raw = BUF_INIT;
	side_spec sides[2];
	bool bad = false;
	int rc;

	if (cfg)
		lim = cfg->limits;
	else
		profile_limits_default(&lim);
	if ((rc = report_init(out, "diff", err)) < 0 ||
	    (rc = db_service_get(d, &svc, s->service, err)) < 0)
		goto out;
	f.service = s->service;
	f.host = s->host;
	f.profile_type = s->type ? s->type : "cpu";
	f.since_us = s->start_us - s->margin_us;
	f.until_us = s->start_us + s->duration_us + s->margin_us;
	f.covering = true;
	f.limit = REPORTDATA_MAX_FLAME_CAPTURES;
	time_format(from, f.since_us);
	time_format(to, f.until_us);
	if ((rc = db_capture_list(d, &dc, &n, &f, err)) < 0)
		goto out;
	if (!n) {
		rc = pr_error_set(err, PR_ENOTFOUND,
				  "no capture of type '%s' of service '%s' on host '%s'"
				  " covers %s to %s",
				  f.profile_type, s->service, s->host, from, to);
		goto out;
	}
	if (!(caps = calloc(n, sizeof(*caps)))) {
		rc = oom(err);
		goto out;
	}
	/* Oldest first, as the other selections are. */
	for (size_t i = 0; i < n; i++) {
		const db_capture *c = &dc[n - 1 - i];
		reportdata_cap *r = &caps[i];
		r->id = c->id;
		r->service_id = c->service_id;
		r->at_us = c->captured_at_us;
		r->total = c->total_value;
		r->service = dup_or_null(c->service, &bad);
		r->type = dup_or_null(c->profile_type, &bad);
		r->release = dup_or_null(c->release, &bad);
		r->commit = dup_or_null(c->commit_sha, &bad);
		r->host = dup_or_null(c->host, &bad);
		r->blob_key = c->retention_class && strcmp(c->retention_class, "summary") == 0
				      ? NULL : dup_or_null(c->blob_key, &bad);
		r->format = dup_or_null(c->format, &bad);
		r->retention = dup_or_null(c->retention_class, &bad);
	}
	if (bad) {
		rc = oom(err);
		goto out;
	}
	if (s->span_id) {
		only = (pprof_label_filter){span_keys, sizeof(span_keys) / sizeof(span_keys[0]),
					    s->span_id};
	} else if (s->trace_id) {
		only = (pprof_label_filter){trace_keys, sizeof(trace_keys) / sizeof(trace_keys[0]),
					    s->trace_id};
	}
	if (!(t = malloc(sizeof(*t)))) {
		rc = oom(err);
		goto out;
	}
	if ((rc = flame_tree_init(t, err)) < 0) {
		free(t);
		t = NULL;
		goto out;
	}
	/* Base: the window's whole captures; current: the span's samples of them. */
	sides[0] = (side_spec){FLAME_BASE, caps, n, NULL, NULL};
	sides[1] = (side_spec){FLAME_CUR, caps, n, only.nkeys ? &only : NULL, &kept};
	if ((rc = access_read_captures(d, "capture.span", NULL, &caps[0].id, n, sizeof(*caps),
				       true, err)) < 0)
		goto out;
	rc = add_sides(t, bs, sides, 2, &lim, &skipped, &raw, err);
	if (rc == 0 && only.nkeys && kept == 0) {
		rc = pr_error_set(err, PR_ENOTFOUND,
				  "none of the %zu captures covering %s to %s has"
				  " a sample labelled %s '%s'",
				  n, from, to, s->span_id ? "span id" : "trace id",
				  s->span_id ? s->span_id : s->trace_id);
	}
	if (rc < 0)
		goto out;
	out->flame = t;
	t = NULL;
	out->base_ncaps = out->target_ncaps = n;
	out->window_from_us = f.since_us;
	out->window_to_us = f.until_us;
	buf_printf(&title, "profreg span: %s on %s, %s to %s", s->service, s->host, from, to);
	out->base_desc = dup_or_null("every sample of the captures covering the window", &bad);
	if (!only.nkeys)
		buf_puts(&note,
			 "No span or trace id given: the graph is the window's whole profile.");
	else if (kept == FORMAT_NO_LABELS)
		buf_puts(&note,
			 "These captures' format carries no labels: the graph is the window's"
			 " whole profile, not the span's.");
	else
		/*
		 * kept counts pprof sample records: one stack each, holding
		 * any number of samples (Datadog's hold 30 for one span).
		 */
		buf_printf(&note,
			   "%zu stack records (each of one or more samples) of %zu captures"
			   " carry %s '%s'; the graph draws them against every sample of"
			   " those captures.",
			   kept, n, s->span_id ? "span id" : "trace id",
			   s->span_id ? s->span_id : s->trace_id);
	out->target_desc = dup_or_null(only.nkeys && kept != FORMAT_NO_LABELS
					       ? "the span's samples" : "the window", &bad);
	if (skipped)
		buf_printf(&note, " %zu captures in the summary tier have no profile left.",
			   skipped);
	out->title = buf_detach(&title, NULL);
	out->note = buf_detach(&note, NULL);
	if (bad || !out->title || !out->note)
		rc = oom(err);
	out->generated_us = time_now_us();
out:
	if (t) {
		flame_tree_release(t);
		free(t);
	}
	buf_release(&title);
	buf_release(&note);
	buf_release(&raw);
	reportdata_caps_free(caps, n);
	for (size_t i = 0; i < n; i++)
		db_capture_release(&dc[i]);
	free(dc);
	db_service_release(&svc);
	return rc;
}

/* A run's reports and its teams'; the first failure into problem (left as it is when none). */
static int write_run_all(const job_env *env, int64_t run_id, char **html_path, char *problem,
			 size_t len)
{
	pr_error e = PR_ERROR_INIT;
	size_t teams = 0;
	int rc = 0;

	if (reportdata_write_run(env->d, env->bs, env->cfg, env->home, run_id, html_path, &e) < 0) {
		if (!problem[0])
			snprintf(problem, len, "%s", e.msg);
		rc = -1;
	}
	/* Each team's own report names only its services. */
	pr_error_clear(&e);
	if (reportdata_write_run_teams(env->d, env->bs, env->cfg, env->home, run_id, &teams, &e) <
	    0) {
		if (!problem[0])
			snprintf(problem, len, "team report: %s", e.msg);
		rc = -1;
	}
	return rc;
}

/* At most this many earlier runs' reports are written by one run. */
#define OWED_MAX 16

/*
 * The reports of earlier runs whose pages are still to go and link to a
 * file that is not there (a team's report or the run's): a run killed
 * after it stored its findings and pages, and before it wrote its
 * reports, left pages whose link led nowhere, and the run that sends
 * them wrote only its own.
 */
static int write_owed(const job_env *env, int64_t run_id, char *problem, size_t len)
{
	static const char sql[] =
		"select distinct run_id, split_part(detail ->> 'link', '#', 1) from pages"
		" where status = 'pending' and run_id is not null and run_id <> $1::bigint"
		" and detail ->> 'link' is not null order by run_id desc limit 10000";
	char rid[24], *dir = NULL;
	const char *p[1] = {rid};
	int64_t done[OWED_MAX];
	size_t ndone = 0;
	PGresult *res = NULL;
	pr_error e = PR_ERROR_INIT;
	buf path = BUF_INIT;
	int rc = 0;

	snprintf(rid, sizeof(rid), "%" PRId64, run_id);
	if (db_exec(env->d, &res, &e, "reading the runs whose pages wait", sql, 1, p) < 0) {
		if (!problem[0])
			snprintf(problem, len, "%s", e.msg);
		rc = -1;
		goto out;
	}
	if (db_rows(res) && !(dir = reportdata_dir(env->cfg, env->home))) {
		if (!problem[0])
			snprintf(problem, len, "out of memory");
		rc = -1;
		goto out;
	}
	for (int i = 0; i < db_rows(res) && ndone < OWED_MAX; i++) {
		int64_t owed = db_get_i64(res, i, 0);
		const char *link = db_get_text(res, i, 1), *name = strrchr(link, '/');
		size_t n, k;
		for (k = 0; k < ndone && done[k] != owed; k++)
			;
		if (k < ndone || !name)
			continue;
		name++;
		n = strcspn(name, "#?");
		/* A name of the report folder's own: never a path elsewhere. */
		if (!n || memchr(name, '\\', n) || (n <= 2 && name[0] == '.'))
			continue;
		buf_reset(&path);
		if (buf_printf(&path, "%s/%.*s", dir, (int)n, name) < 0) {
			rc = -1;
			break;
		}
		if (access(path.ptr, F_OK) == 0)
			continue;
		done[ndone++] = owed;
		if (write_run_all(env, owed, NULL, problem, len) < 0)
			rc = -1;
	}
out:
	db_result_free(res);
	buf_release(&path);
	free(dir);
	return rc;
}

int reportdata_write_run_all(const job_env *env, int64_t run_id, char **html_path, char *problem,
			     size_t len)
{
	int rc;

	problem[0] = '\0';
	rc = write_run_all(env, run_id, html_path, problem, len);
	if (write_owed(env, run_id, problem, len) < 0)
		rc = -1;
	return rc;
}
