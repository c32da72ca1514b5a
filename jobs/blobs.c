/*
 * blobs.c: the configured blob store, and the migration of a local store
 * into S3 (see blobs.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/blobs.h"
#include "jobs/runs.h"
#include "jobs/secret.h"
#include "jobs/snapshot.h"
#include "common/buf.h"
#include "common/timeutil.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int blobs_open_local(blob_store **out, const char *home, pr_error *err)
{
	buf path = BUF_INIT;
	int rc;

	*out = NULL;
	if (buf_printf(&path, "%s/blobs", home) < 0)
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
	else
		rc = blob_store_open_dir(out, path.ptr, err);
	buf_release(&path);
	return rc;
}

/*
 * One credential: the configured variable or file, else the default
 * variable (an optional one may be unset: *out stays NULL).
 */
static int credential(char **out, const char *env, const char *file, const char *dflt,
		      bool optional, pr_error *err)
{
	*out = NULL;
	if (env || file)
		return secret_read(out, env, file, err);
	if (optional && !getenv(dflt))
		return 0;
	return secret_read(out, dflt, NULL, err);
}

int blobs_s3_options(blob_s3_opts *o, blobs_s3_keys *keys, const config_s3 *s,
		     const char *ca_file, uint32_t connect_timeout_ms, uint32_t timeout_ms,
		     pr_error *err)
{
	int rc;

	memset(o, 0, sizeof(*o));
	memset(keys, 0, sizeof(*keys));
	if ((rc = credential(&keys->access_key_id, s->access_key_id_env, s->access_key_id_file,
			     "AWS_ACCESS_KEY_ID", false, err)) < 0 ||
	    (rc = credential(&keys->secret_access_key, s->secret_access_key_env,
			     s->secret_access_key_file, "AWS_SECRET_ACCESS_KEY", false, err)) < 0 ||
	    (rc = credential(&keys->session_token, s->session_token_env, s->session_token_file,
			     "AWS_SESSION_TOKEN", true, err)) < 0)
		return rc;
	o->endpoint = s->endpoint;
	o->bucket = s->bucket;
	o->prefix = s->prefix;
	o->region = s->region;
	o->virtual_host = s->virtual_host;
	o->access_key_id = keys->access_key_id;
	o->secret_access_key = keys->secret_access_key;
	o->session_token = keys->session_token;
	o->ca_file = ca_file;
	o->connect_timeout_ms = connect_timeout_ms;
	o->timeout_ms = timeout_ms;
	return 0;
}

void blobs_s3_keys_release(blobs_s3_keys *keys)
{
	secret_free(keys->access_key_id);
	secret_free(keys->secret_access_key);
	secret_free(keys->session_token);
	memset(keys, 0, sizeof(*keys));
}

int blobs_open_s3(blob_store **out, const config *cfg, pr_error *err)
{
	const config_blobs *b = &cfg->blobs;
	blobs_s3_keys keys = {NULL, NULL, NULL};
	blob_s3_opts o;
	int rc;

	*out = NULL;
	if (!b->s3_set) {
		rc = pr_error_set(err, PR_EUSAGE,
				  "no S3 store configured: set blobs.endpoint, blobs.bucket and "
				  "blobs.region in the configuration file");
		goto out;
	}
	if ((rc = blobs_s3_options(&o, &keys, &b->s3, b->ca_file, b->connect_timeout_ms,
				   b->timeout_ms, err)) < 0)
		goto out;
	rc = blob_s3_open(out, &o, err);
out:
	blobs_s3_keys_release(&keys);
	return rc;
}

int blobs_open(blob_store **out, const config *cfg, const char *home, pr_error *err)
{
	return cfg->blobs.use_s3 ? blobs_open_s3(out, cfg, err) : blobs_open_local(out, home, err);
}

/* ---- migration ----------------------------------------------------------- */

json_t *blobs_migrate_json(const blobs_migrate_result *r)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:s?}", "run_id", (json_int_t)r->run_id,
			 "blobs", (json_int_t)r->blobs, "copied", (json_int_t)r->copied, "present",
			 (json_int_t)r->present, "unreadable", (json_int_t)r->unreadable,
			 "deleted_local", (json_int_t)r->deleted_local, "bytes_copied",
			 (json_int_t)r->bytes_copied, "seconds", r->seconds, "first_unreadable",
			 r->first_unreadable[0] ? r->first_unreadable : NULL);
}

/*
 * Finish run `run_id` of a job on store `bs` that ended with `rc` (its
 * message in `err`), and write its audit row `action`: the run's status
 * is failed, incomplete (`short_of`) or ok, and `detail` (taken over;
 * NULL when out of memory) is the run's detail and the audit's, with the
 * error. Returns rc, else the first failure to record.
 */
static int run_end(db *d, int64_t run_id, const char *action, blob_store *bs, json_t *detail,
		   int rc, bool short_of, pr_error *err)
{
	pr_error e2 = PR_ERROR_INIT;
	const char *status = rc < 0 ? "failed" : short_of ? "incomplete" : "ok";
	char object[600], *detail_s = NULL;
	int frc;

	if (detail && rc < 0)
		json_object_set_new(detail, "error", json_string(err->msg));
	frc = runs_finish(d, run_id, status, detail, rc < 0 ? &e2 : err);
	if (rc == 0)
		rc = frc;
	if (detail && (detail_s = json_dumps(detail, JSON_COMPACT))) {
		snprintf(object, sizeof(object), "blobs:%s", blob_store_describe(bs));
		frc = db_audit(d, action, object, detail_s, rc < 0 ? &e2 : err);
		if (rc == 0)
			rc = frc;
	}
	free(detail_s);
	json_decref(detail);
	return rc;
}

/* Read blob `key` back from `to` and check it, before a local copy goes. */
static int read_back(blob_store *to, const char *key, size_t max, pr_error *err)
{
	buf b = BUF_INIT;
	int rc = blob_get(to, key, &b, max, err);

	buf_release(&b);
	return rc;
}

/* One blob: copy (or find) it in `to`, then maybe remove the local one. */
static int migrate_one(blobs_migrate_result *out, blob_store *from, blob_store *to, const char *key,
		       const blobs_migrate_opts *o, pr_error *err)
{
	pr_error e2 = PR_ERROR_INIT, e3 = PR_ERROR_INIT;
	bool created = false;
	uint64_t size = 0;
	int rc;

	/* blob_copy leaves what `to` holds already: a resumed run skips it. */
	rc = blob_copy(to, from, key, o->max_bytes, &created, &e2);
	if (rc == PR_EDATA || rc == PR_ELIMIT || rc == PR_ENOTFOUND) {
		/* A damaged local blob (or one gone meanwhile): left as it is. */
		if (rc != PR_ENOTFOUND && !out->unreadable++)
			memcpy(out->first_unreadable, key, BLOB_KEY_HEX + 1);
		return 0;
	}
	if (rc < 0)
		return pr_error_set(err, rc, "%s", e2.msg);
	if (created) {
		out->copied++;
		if (blob_stored_size(to, key, &size, &e3) == 0)
			out->bytes_copied += size;
	} else {
		out->present++;
	}
	if (!o->delete_local)
		return 0;
	if ((rc = read_back(to, key, o->max_bytes, err)) < 0 ||
	    (rc = blob_delete(from, key, err)) < 0)
		return rc;
	out->deleted_local++;
	return 0;
}

/*
 * A migration walks the store and moves each blob as it is listed, so
 * that a store of ten million blobs needs no list of them in memory.
 * blob_copy leaves what `to` holds, which is what makes a stopped run
 * resume, and a blob deleted behind the walk is safe both for a directory
 * being read and for S3's key-based continuation.
 */
typedef struct migration {
	blobs_migrate_result *out;
	blob_store *from, *to;
	const blobs_migrate_opts *o;
} migration;

static int migrate_listed(void *ud, const blob_entry *e, pr_error *err)
{
	migration *m = ud;

	m->out->blobs++;
	return migrate_one(m->out, m->from, m->to, e->key, m->o, err);
}

int blobs_migrate(blobs_migrate_result *out, db *d, blob_store *from, blob_store *to,
		  const blobs_migrate_opts *o, pr_error *err)
{
	json_t *params = NULL;
	int64_t t0 = time_now_us();
	bool locked = false;
	int rc;

	memset(out, 0, sizeof(*out));
	/*
	 * While blobs.store is "local", every capture is read from the local
	 * store, and an ingest may commit a row naming a blob the walk has
	 * just removed: the copies go only once the bucket is the live store.
	 */
	if (o->delete_local && o->from_live)
		return pr_error_set(err, PR_EUSAGE,
				    "--delete-local needs blobs.store set to \"s3\": the local "
				    "store is still the one profreg reads captures from");
	if ((rc = db_try_advisory_lock(d, BLOBS_MIGRATE_LOCK, &locked, err)) < 0)
		goto out;
	if (!locked) {
		rc = pr_error_set(
			err, PR_ELOCKED,
			"another blob migration holds the lock; not starting a second one");
		goto out;
	}
	params = json_pack("{s:s,s:s,s:b}", "from", blob_store_describe(from), "to",
			   blob_store_describe(to), "delete_local", o->delete_local);
	if (!params) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = runs_begin(&out->run_id, d, "blobs-migrate", 0, params, err)) < 0)
		goto out;
	{
		migration m = {out, from, to, o};
		rc = blob_store_list(from, migrate_listed, &m, err);
	}
	out->seconds = (double)(time_now_us() - t0) / 1e6;
	rc = run_end(d, out->run_id, "blobs.migrate", to, blobs_migrate_json(out), rc,
		     out->unreadable > 0, err);
out:
	if (locked)
		db_advisory_unlock(d, BLOBS_MIGRATE_LOCK);
	json_decref(params);
	if (!out->seconds)
		out->seconds = (double)(time_now_us() - t0) / 1e6;
	return rc;
}

/* ---- check ---------------------------------------------------------------- */

/* Keys a page: each page is one statement, so a long check holds no snapshot for its length. */
#define CHECK_PAGE 500
#define CHECK_PAGE_SQL "500"

/*
 * The live keys after $1 (NULL: from the start), in the database's key
 * order, with how many captures rest on each, the first of them and that
 * capture's own service (a blob two services share was named with one
 * service's capture and the other's name); $2 a JSON array of service
 * names or NULL for every service.
 * The second form adds the snapshots' keys, for a role that reads them.
 */
#define CHECK_CAPTURES                                                                             \
	"select p.blob_key k, count(*) n, min(p.id) cap,"                                          \
	" (array_agg(s.name order by p.id))[1] svc, null::bigint snap"                             \
	" from profiles p join services s on s.id = p.service_id"                                  \
	" where p.blob_deleted_at is null and ($1::text is null or p.blob_key > $1)"               \
	" and ($2::jsonb is null or s.name in (select jsonb_array_elements_text($2::jsonb)))"      \
	" group by p.blob_key"
static const char check_page_sql[] =
	"select k, sum(n)::bigint, min(cap), min(svc), min(snap) from (" CHECK_CAPTURES
	") u group by k order by k limit " CHECK_PAGE_SQL;
static const char check_page_snap_sql[] =
	"select k, sum(n)::bigint, min(cap), min(svc), min(snap) from (" CHECK_CAPTURES
	" union all select blob_key, 0, null, null, id from snapshots"
	" where $1::text is null or blob_key > $1"
	") u group by k order by k limit " CHECK_PAGE_SQL;

/* Whether a capture (or, `snaps`, a snapshot) still rests on `key`. */
static int key_live(db *d, const char *key, bool snaps, bool *live, pr_error *err)
{
	static const char sql[] =
		"select exists (select 1 from profiles where blob_key = $1"
		" and blob_deleted_at is null)";
	static const char sql_snap[] =
		"select exists (select 1 from profiles where blob_key = $1"
		" and blob_deleted_at is null) or exists (select 1 from snapshots"
		" where blob_key = $1)";
	PGresult *res = NULL;
	const char *params[1] = {key};
	int rc;

	*live = false;
	if ((rc = db_exec(d, &res, err, "looking up a blob's captures", snaps ? sql_snap : sql, 1,
			  params)) < 0)
		return rc;
	*live = db_rows(res) == 1 && db_get_bool(res, 0, 0);
	db_result_free(res);
	return 0;
}

/* Read blob `key` back: 0 when it checks, PR_ENOTFOUND / PR_EDATA / PR_ELIMIT in e, else fail. */
static int check_one(blob_store *bs, const char *key, size_t max, buf *plain, pr_error *e)
{
	int rc = blob_get(bs, key, plain, max, e);

	if (rc == PR_ENOTFOUND || rc == PR_EDATA || rc == PR_ELIMIT)
		return 1;
	return rc;
}

static int note_bad(blobs_check_result *out, const PGresult *res, int row, const pr_error *e)
{
	blobs_check_bad *b;
	const char *svc = db_get_text(res, row, 3);

	if (e->code == PR_ENOTFOUND)
		out->missing++;
	else
		out->damaged++;
	if (out->nbad == BLOBS_CHECK_LISTED)
		return 0;
	if (!out->bad && !(out->bad = calloc(BLOBS_CHECK_LISTED, sizeof(*out->bad))))
		return PR_ENOMEM;
	b = &out->bad[out->nbad];
	snprintf(b->key, sizeof(b->key), "%s", db_get_text(res, row, 0));
	b->missing = e->code == PR_ENOTFOUND;
	b->captures = (uint64_t)db_get_i64(res, row, 1);
	b->capture_id = db_get_i64(res, row, 2);
	b->snapshot_id = db_get_i64(res, row, 4);
	if (!(b->reason = strdup(e->msg)) || (svc && !(b->service = strdup(svc)))) {
		free(b->reason);
		b->reason = NULL;
		return PR_ENOMEM;
	}
	out->nbad++;
	return 0;
}

/* One page of keys: each read back; a failure looked at again if still live. */
static int check_page(blobs_check_result *out, db *d, blob_store *bs, const PGresult *res,
		      bool snaps, size_t max, buf *plain, pr_error *err)
{
	for (int i = 0; i < db_rows(res); i++) {
		const char *key = db_get_text(res, i, 0);
		pr_error e = PR_ERROR_INIT;
		bool live = false;
		/* A snapshot's archive alone is read to its own cap, as its readers do. */
		size_t lim = db_get_i64(res, i, 1) == 0 ? SNAPSHOT_ARCHIVE_MAX : max;
		int rc;

		if ((rc = check_one(bs, key, lim, plain, &e)) < 0)
			return pr_error_set(err, rc, "%s", e.msg);
		if (rc == 0) {
			out->blobs++;
			out->bytes += plain->len;
			continue;
		}
		/* Retention may have cut its captures meanwhile, and removed it. */
		if ((rc = key_live(d, key, snaps, &live, err)) < 0)
			return rc;
		if (!live)
			continue;
		pr_error_clear(&e);
		if ((rc = check_one(bs, key, lim, plain, &e)) < 0)
			return pr_error_set(err, rc, "%s", e.msg);
		out->blobs++;
		if (rc == 0) {
			out->bytes += plain->len;
			continue;
		}
		if (note_bad(out, res, i, &e) < 0)
			return pr_error_set(err, PR_ENOMEM, "out of memory");
	}
	return 0;
}

/* Whether this role reads the snapshots' table (team roles do not). */
static int reads_snapshots(db *d, bool *yes, pr_error *err)
{
	PGresult *res = NULL;
	int rc;

	*yes = false;
	if ((rc = db_exec(d, &res, err, "checking access to snapshots",
			  "select has_table_privilege('snapshots', 'select')", 0, NULL)) < 0)
		return rc;
	*yes = db_rows(res) == 1 && db_get_bool(res, 0, 0);
	db_result_free(res);
	return 0;
}

static int check_all(blobs_check_result *out, db *d, blob_store *bs, const blobs_check_opts *o,
		     const char *services, pr_error *err)
{
	char last[BLOB_KEY_HEX + 1] = "";
	buf plain = BUF_INIT;
	PGresult *res = NULL;
	bool snaps = false;
	int rc;

	if (!services && (rc = reads_snapshots(d, &snaps, err)) < 0)
		return rc;
	for (;;) {
		const char *params[2] = {last[0] ? last : NULL, services};

		if ((rc = db_exec(d, &res, err, "listing the blobs captures rest on",
				  snaps ? check_page_snap_sql : check_page_sql, 2, params)) < 0)
			break;
		if ((rc = check_page(out, d, bs, res, snaps, o->max_bytes, &plain, err)) < 0 ||
		    db_rows(res) < CHECK_PAGE)
			break;
		snprintf(last, sizeof(last), "%s", db_get_text(res, db_rows(res) - 1, 0));
		db_result_free(res);
		res = NULL;
	}
	db_result_free(res);
	buf_release(&plain);
	return rc;
}

json_t *blobs_check_json(const blobs_check_result *r)
{
	json_t *doc, *bad = json_array();

	for (size_t i = 0; bad && i < r->nbad; i++) {
		const blobs_check_bad *b = &r->bad[i];
		json_t *one = json_pack("{s:s,s:s,s:s,s:I,s:I,s:s?,s:I}", "key", b->key, "state",
					b->missing ? "missing" : "damaged", "reason",
					b->reason ? b->reason : "", "captures",
					(json_int_t)b->captures, "capture_id",
					(json_int_t)b->capture_id, "service", b->service,
					"snapshot_id", (json_int_t)b->snapshot_id);
		if (!one || json_array_append_new(bad, one) < 0) {
			json_decref(bad);
			return NULL;
		}
	}
	doc = json_pack("{s:I,s:I,s:I,s:I,s:I,s:o,s:f}", "run_id", (json_int_t)r->run_id, "blobs",
			(json_int_t)r->blobs, "bytes", (json_int_t)r->bytes, "missing",
			(json_int_t)r->missing, "damaged", (json_int_t)r->damaged, "bad", bad,
			"seconds", r->seconds);
	return doc;
}

void blobs_check_release(blobs_check_result *r)
{
	for (size_t i = 0; r->bad && i < r->nbad; i++) {
		free(r->bad[i].reason);
		free(r->bad[i].service);
	}
	free(r->bad);
	r->bad = NULL;
	r->nbad = 0;
}

int blobs_check(blobs_check_result *out, db *d, blob_store *bs, const blobs_check_opts *o,
		pr_error *err)
{
	json_t *params = NULL, *names = NULL;
	char *services = NULL;
	int64_t t0 = time_now_us();
	int rc = 0;

	memset(out, 0, sizeof(*out));
	/* A name that is no service the role sees would check nothing, and pass. */
	for (size_t i = 0; i < o->nservices; i++) {
		db_service svc;
		memset(&svc, 0, sizeof(svc));
		if ((rc = db_service_get(d, &svc, o->services[i], err)) < 0)
			goto out;
		db_service_release(&svc);
	}
	if (o->nservices) {
		if (!(names = json_array())) {
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
			goto out;
		}
		for (size_t i = 0; i < o->nservices; i++)
			if (json_array_append_new(names, json_string(o->services[i])) < 0) {
				rc = pr_error_set(err, PR_ENOMEM, "out of memory");
				goto out;
			}
		if (!(services = json_dumps(names, JSON_COMPACT))) {
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
			goto out;
		}
	}
	params = json_pack("{s:s,s:O?}", "store", blob_store_describe(bs), "services", names);
	if (!params) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = runs_begin(&out->run_id, d, "blobs-check", 0, params, err)) < 0)
		goto out;
	rc = check_all(out, d, bs, o, services, err);
	out->seconds = (double)(time_now_us() - t0) / 1e6;
	rc = run_end(d, out->run_id, "blobs.check", bs, blobs_check_json(out), rc,
		     out->missing || out->damaged, err);
out:
	json_decref(params);
	json_decref(names);
	free(services);
	if (!out->seconds)
		out->seconds = (double)(time_now_us() - t0) / 1e6;
	return rc;
}
