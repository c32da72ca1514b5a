/*
 * db.h: the PostgreSQL index of services and captures.
 *
 * One `db` is one libpq connection. Every query is parameterised; bulk
 * rows go in with COPY. Timestamps cross this boundary as Unix
 * microseconds (int64) and are timestamptz inside; the session runs with
 * TimeZone UTC. Any libpq failure is PR_EDB with a one-line message
 * "database: <what we were doing>: <the server's first line>".
 *
 * Transactions: db_begin/db_commit/db_rollback wrap several calls into one
 * transaction. A call made outside a transaction is atomic on its own
 * (db_capture_insert opens and commits its own when none is open).
 *
 * Not thread-safe: one connection, one thread at a time.
 */
#ifndef PR_DB_H
#define PR_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "pipeline/profile.h"

typedef struct db db;

/*
 * Connect. `conninfo` is a libpq connection string or URI; "" uses the
 * libpq environment (PGHOST, PGDATABASE, ...). application_name defaults
 * to "profreg", connect_timeout to 10 s (PGCONNECT_TIMEOUT overrides),
 * TCP keepalives to a probe after 30 s of silence, every 10 s, 3 at
 * most (a server gone without a reset is noticed in about a minute, not
 * the kernel's 2 hours; `conninfo` overrides each),
 * client_encoding is UTF8 and TimeZone UTC. A failure says "cannot
 * connect to the database: ..." and never echoes a password. Free with
 * db_close.
 */
int db_open(db **out, const char *conninfo, pr_error *err);
void db_close(db *d);

/*
 * When the server dropped the connection, connect again with the same
 * parameters and set the session up as db_open does (0 when the
 * connection is fine). Whatever was in flight is gone: the caller
 * decides what to try again.
 */
int db_reconnect(db *d, pr_error *err);

/*
 * What a caller set on the session beyond db_open's (session settings
 * such as the audit log's tags) is gone with it: fn(d, ctx) is run again
 * on each new session db_reconnect makes, and its failure is
 * db_reconnect's. ctx must outlive d (or the next db_on_session).
 */
typedef int (*db_session_fn)(db *d, void *ctx, pr_error *err);
void db_on_session(db *d, db_session_fn fn, void *ctx);

/*
 * False once the server has dropped the connection, or when the session
 * db_reconnect made could not be set up (db_reconnect mends both).
 */
bool db_connected(const db *d);

/*
 * Apply every migration the binary carries (pipeline/migrate.h) that the
 * database lacks, in order, each in its own transaction under an
 * advisory lock, so two processes migrating at once are safe. Idempotent:
 * *applied (may be NULL) is the number newly applied, 0 when up to date.
 */
int db_migrate(db *d, int *applied, pr_error *err);

/* Highest applied migration version, 0 for an empty database. */
int db_schema_version(db *d, int *out, pr_error *err);

/*
 * The schema's version (0: no profreg schema) and whether every migration
 * this binary carries is applied, in one round trip: what every command
 * checks on connecting, so db_migrate only runs when there is work.
 */
int db_schema_check(db *d, int *version, bool *current, pr_error *err);

/*
 * db_open then db_schema_check, the session's settings and the schema
 * check sent in one round trip: how a command connects. The same
 * messages as the two calls; *out is NULL on failure.
 */
int db_open_check(db **out, const char *conninfo, int *version, bool *current, pr_error *err);

/*
 * Transactions. db_begin fails with PR_EUSAGE when one is already open;
 * db_commit fails (PR_EDB) when the transaction had failed and the server
 * rolled it back. db_rollback is safe to call in any state.
 */
int db_begin(db *d, pr_error *err);
int db_commit(db *d, pr_error *err);
void db_rollback(db *d);

/*
 * Session-level advisory lock named `name` (a job name): *got is true when
 * this session now holds it, false when another session does. Held until
 * db_advisory_unlock or the connection closes; taking it twice needs two
 * unlocks.
 */
int db_try_advisory_lock(db *d, const char *name, bool *got, pr_error *err);
void db_advisory_unlock(db *d, const char *name);

/* The same lock taken shared: any number of shared holders, no exclusive one. */
int db_try_advisory_lock_shared(db *d, const char *name, bool *got, pr_error *err);
void db_advisory_unlock_shared(db *d, const char *name);

/*
 * Transaction-level advisory lock on a blob key, released at commit or
 * rollback; call it inside a transaction. Shared: an ingest about to store
 * or point a row at the blob. Exclusive: retention about to delete the
 * file once no row keeps it. Either side then sees the other's outcome,
 * so a file is never deleted under a row that was just written.
 */
int db_blob_lock(db *d, const char *blob_key, bool exclusive, pr_error *err);

/* The same exclusive lock on every key of a text[] literal, in one round trip. */
int db_blob_lock_all(db *d, const char *keys_literal, pr_error *err);

/* The shared lock of db_blob_lock on every key of a text[] literal, in the same order. */
int db_blob_lock_all_shared(db *d, const char *keys_literal, pr_error *err);

/*
 * Deletes that may still land (migration 035; see blob_delete_linger_us).
 *
 * db_blob_deletes_mark records, in the caller's transaction (committed
 * before any delete is sent, under the keys' exclusive lock), that each
 * key of a text[] literal may be deleted up to `linger_us` from now; a
 * record runs out, it is never dropped early (records past their time
 * are dropped on the way).
 *
 * db_blob_delete_doubt, under the keys' shared lock, sets `key_out` to
 * one of the keys a delete may still land on and `*until_us` to the
 * latest time it may; `key_out` "" and 0 when none. Any role may ask: it
 * learns only about keys of bytes it holds.
 */
int db_blob_deletes_mark(db *d, const char *keys_literal, uint64_t linger_us, pr_error *err);
int db_blob_delete_doubt(db *d, const char *keys_literal, char key_out[65], int64_t *until_us,
			 pr_error *err);

/* A service; `name` and `team` belong to the struct ("" when no team). */
typedef struct db_service {
	int64_t id;
	char *name;
	char *team;
	bool enabled;
	int64_t created_at_us;
} db_service;

/* Free the members and zero the struct. */
void db_service_release(db_service *s);

/*
 * Add a service, disabled (profiling is opt-in). `team` may be NULL. A name
 * outside [A-Za-z0-9][A-Za-z0-9._-]{0,127}, or a team that is not a team
 * name (db_service_team_valid), is PR_EUSAGE; a name in use is
 * PR_EEXISTS. Writes an audit row ("service.add").
 */
int db_service_add(db *d, const char *name, const char *team, pr_error *err);

/*
 * Register each of n distinct services unless it exists, in one
 * statement: added[i] says which (audited like db_service_add), for
 * names[i] and teams[i] (NULL: none). Checked in order: the first bad
 * name or team, or the first service that exists with another team (""
 * and NULL are none: PR_EEXISTS, saying how to change it), is the error.
 * Meant for a caller's transaction, so a catalogue is registered whole
 * or not at all.
 */
int db_service_ensure_many(db *d, bool *added, const char *const *names,
			   const char *const *teams, size_t n, pr_error *err);

/*
 * Whether `name` is a valid service name (the rule db_service_add
 * enforces), for checks made before a database is at hand (the
 * configuration file).
 */
bool db_service_name_valid(const char *name);

/* The longest team name, in bytes. */
#define DB_TEAM_MAX 128

/*
 * Whether `team` is a team name: 1 to DB_TEAM_MAX bytes, no control
 * character (C0 or DEL). db_service_add, db_service_ensure_many and
 * db_service_set_team refuse any other non-empty team with PR_EUSAGE.
 */
bool db_service_team_valid(const char *team);

/*
 * Set or clear (NULL or "") a service's team; PR_ENOTFOUND when absent,
 * PR_EUSAGE for a team db_service_team_valid refuses. Audited.
 */
int db_service_set_team(db *d, const char *name, const char *team, pr_error *err);

/*
 * Enable or disable; PR_ENOTFOUND when absent. Audited. Every "not found"
 * of a service names the closest registered name when one is likely
 * meant ("did you mean 'payments-api'?").
 */
int db_service_set_enabled(db *d, const char *name, bool enabled, pr_error *err);

/*
 * db_service_set_enabled for n distinct names in one statement, audited
 * one by one; the first name in order that is not a service is
 * PR_ENOTFOUND. Meant for a caller's transaction: on failure the others
 * may be changed until it is rolled back.
 */
int db_service_set_enabled_many(db *d, const char *const *names, size_t n, bool enabled,
				pr_error *err);

/* Fill *out (release it with db_service_release); PR_ENOTFOUND when absent. */
int db_service_get(db *d, db_service *out, const char *name, pr_error *err);

/*
 * Every service by name. *out is a new array of *n services (NULL when
 * none): release each with db_service_release, then free(*out).
 */
int db_service_list(db *d, db_service **out, size_t *n, pr_error *err);

/*
 * SQL true for a capture `p` (of table profiles) taken within `us` (SQL
 * text of a bigint of microseconds, used twice, so a placeholder, not an
 * expression) of a recorded rollout of its release, before or after it:
 * its process was starting (JIT compilers, caches filling, connection
 * pools opening), and right after a deploy every process of the release
 * is. Before as well as after, because the pods of a rolling deploy
 * start before CI reports the deploy. A rollout is a deploy's time or a
 * later report of the same deploy (deploy_rollouts). The times are compared
 * as a range, so the index on (service_id, release, deployed_at) finds
 * them however many deploys a release name has had.
 */
#define DB_WARMUP_SQL(us)                                                                       \
	"(exists (select 1 from deploys d where d.service_id = p.service_id"                      \
	"  and d.release = p.release"                                                             \
	"  and d.deployed_at > p.captured_at - (" us ")::bigint * interval '1 microsecond'"     \
	"  and d.deployed_at < p.captured_at + (" us ")::bigint * interval '1 microsecond')"    \
	" or exists (select 1 from deploy_rollouts r where r.service_id = p.service_id"         \
	"  and r.release = p.release"                                                             \
	"  and r.rolled_out_at > p.captured_at - (" us ")::bigint * interval '1 microsecond'"   \
	"  and r.rolled_out_at < p.captured_at + (" us ")::bigint * interval '1 microsecond'))"

/* What db_capture_count counts of one release's captures. */
typedef struct db_capture_tally {
	int64_t all;          /* every capture of the release */
	int64_t with_samples; /* holding samples, stamped before `before_us`, not warming up */
	int64_t later;        /* holding samples, stamped at or after `before_us` */
	int64_t warming;      /* holding samples, before `before_us`, in a warm-up */
} db_capture_tally;

/*
 * Count the captures of `release` of service `service_id` into *out.
 * With `before_us` (0: any time), with_samples counts only those stamped
 * before it: an analysis "now" leaves the later ones out, so a gate
 * waiting for captures it can judge must not count them. With
 * `warmup_us` (0: none), a capture within it of a recorded deploy of the
 * release (DB_WARMUP_SQL) or of `deploy_us` (a deploy being reported and
 * not yet recorded; 0: none) is warming, not one with samples: the
 * analysis leaves it out.
 */
int db_capture_count(db *d, db_capture_tally *out, int64_t service_id, const char *release,
		     int64_t before_us, int64_t deploy_us, int64_t warmup_us, pr_error *err);

/*
 * The releases a service has captures of, the most recently captured
 * first, at most 1000. *out is a new array of *n strings (NULL when none),
 * freed with db_strings_free.
 */
int db_service_releases(db *d, char ***out, size_t *n, int64_t service_id, pr_error *err);
void db_strings_free(char **s, size_t n);

/*
 * One capture's index row. Strings belong to the struct when it was filled
 * by db_capture_get/db_capture_list; NULL members are unknown (commit_sha,
 * host, period_type, period_unit). Numbers are 0 when unknown.
 */
typedef struct db_capture {
	int64_t id, service_id;
	char *service;
	char *profile_type;
	char *release;
	char *commit_sha;
	char *host;
	int64_t captured_at_us; /* Unix microseconds */
	int64_t duration_ns, period;
	char *period_type, *period_unit;
	char *value_type, *value_unit;
	int64_t total_value, sample_count;
	int32_t function_count;
	char *blob_key;
	int64_t blob_bytes;
	char *format;
	char *retention_class;
	int64_t retain_until_us; /* 0: none */
	char *tags_json;         /* JSON object text, "{}" when none */
	int64_t ingested_at_us;
	bool blob_deleted;       /* retention cut it to a summary: its blob is gone on purpose */
} db_capture;

/* Free the members and zero the struct. */
void db_capture_release(db_capture *c);

/*
 * The capture of this service with this blob key: 0 and *id when present, PR_ENOTFOUND when
 * absent.
 */
int db_capture_find(db *d, int64_t *id, int64_t service_id, const char *blob_key, pr_error *err);

/*
 * db_capture_find for n captures in one round trip: ids[i] is the id of
 * the capture of service service_ids[i] with blob blob_keys[i] (hex, as
 * blob_key_of writes it; anything else is PR_EUSAGE), 0 when there is
 * none. On failure every ids[i] is 0.
 */
int db_capture_find_many(db *d, int64_t *ids, const int64_t *service_ids,
			 const char *const *blob_keys, size_t n, pr_error *err);

/*
 * live[i]: capture ids[i] exists and still rests on its blob (retention
 * has not cut it to a summary), in one round trip. On failure every
 * live[i] is false.
 */
int db_capture_blobs_live(db *d, bool *live, const int64_t *ids, size_t n, pr_error *err);

/*
 * deleted_captures (migration 037): the bytes of captures retention
 * deleted, by service, so that ingest does not store them again when a
 * drop folder or an object store offers them once more.
 *
 * db_deleted_record records, in the caller's transaction (the one that
 * deletes the captures), the captures of three array literals of one
 * length: service ids (bigint[]), blob keys (text[]) and capture times
 * in Unix microseconds (bigint[]); a record already there is renewed.
 *
 * db_deleted_find, for n (service, key) pairs as db_capture_find_many
 * takes them: deleted_us[i] and captured_us[i] of the pair's record, 0
 * when there is none. Each record found whose seen_at is a day old or
 * more gets seen_at now (db_deleted_prune forgets records whose bytes no
 * ingest meets any more), so a folder collected every few seconds
 * writes a record once a day.
 *
 * db_deleted_prune drops, in the caller's transaction, each record of
 * service sids[i] (bigint[] literal) whose seen_at is before cuts[i]
 * (Unix microseconds, bigint[] literal); *n gets how many went.
 */
int db_deleted_record(db *d, const char *sids_literal, const char *keys_literal,
		      const char *times_literal, pr_error *err);
int db_deleted_find(db *d, int64_t *deleted_us, int64_t *captured_us, const int64_t *service_ids,
		    const char *const *blob_keys, size_t n, pr_error *err);
int db_deleted_prune(db *d, uint64_t *n, const char *sids_literal, const char *cuts_literal,
		     pr_error *err);

/*
 * Insert a capture's row and one row per function of `s` (a summary of
 * `p`), interning function names and files into `functions`. Runs inside
 * the caller's transaction when one is open, else in its own.
 *
 * From `meta` it takes service_id, profile_type, release, value_type,
 * value_unit, blob_key (64 lowercase hex), format and captured_at_us
 * (required; 0 is PR_EUSAGE), and the optional rest (NULL strings and 0
 * numbers are stored as unknown; retention_class NULL is "hot"; tags_json
 * NULL is "{}" and must be a JSON object). It ignores id, service,
 * ingested_at_us, and takes function_count, total_value and sample_count
 * from `s`, so the row always agrees with its per-function rows.
 * Per-function shares are value / s->total, 0 when the total is 0.
 *
 * A second capture with the same service and blob key is PR_EEXISTS; an
 * unknown service_id is PR_ENOTFOUND. *id is the new capture's id.
 */
int db_capture_insert(db *d, int64_t *id, const db_capture *meta,
		      const profile *p, const profile_summary *s, pr_error *err);

/*
 * Which stored captures give a release another commit, in the caller's
 * open transaction (PR_EUSAGE without one). For each i with a commit,
 * release releases[i] of service service_ids[i] is locked until that
 * transaction ends, so that no other ingest can store a capture of it
 * meanwhile; then ids[i] is a stored capture of that release whose
 * commit is not commits[i], 0 when there is none (and for every i whose
 * commit is NULL). Two commits are one when either is a prefix of the
 * other, ignoring case (a short and a full SHA). On failure every ids[i]
 * is 0 and the caller must roll back.
 */
int db_release_commit_conflicts(db *d, int64_t *ids, const int64_t *service_ids,
				const char *const *releases, const char *const *commits,
				size_t n, pr_error *err);

/*
 * Insert n captures in the caller's open transaction (PR_EUSAGE without
 * one), as db_capture_insert does each, with one COPY and one statement
 * for all their function rows. A capture whose service and blob key are
 * stored already (committed by another ingest, which the insert waits
 * for, or earlier in this call) is skipped and leaves ids[i] 0; the
 * others get their new ids. On failure every ids[i] is 0 and the caller
 * must roll back.
 */
int db_capture_insert_many(db *d, int64_t *ids, const db_capture *metas,
			   const profile *const *ps, const profile_summary *const *sums,
			   size_t n, pr_error *err);

/*
 * Which captures db_capture_list returns: NULL strings and 0 numbers do
 * not filter. since_us is inclusive, until_us exclusive.
 */
typedef struct db_capture_filter {
	const char *service;
	const char *release;
	const char *profile_type;
	int64_t since_us; /* 0: unbounded unless since_set */
	int64_t until_us; /* 0: unbounded unless until_set */
	size_t limit; /* 0: all */
	const char *host;  /* NULL: any host */
	bool covering;     /* since/until select the captures whose own span
			    * [captured_at, captured_at + duration] overlaps
			    * [since, until), not those taken in it */
	const int64_t *ids; /* only these captures, when nids > 0 */
	size_t nids;
	bool since_set, until_set; /* given, even as 0 (1970-01-01T00:00:00Z) */
} db_capture_filter;

/*
 * Captures matching `f` (NULL: all), newest first (captured_at, then id).
 * *out is a new array of *n captures (NULL when none): release each with
 * db_capture_release, then free(*out).
 */
int db_capture_list(db *d, db_capture **out, size_t *n, const db_capture_filter *f, pr_error *err);

/* Fill *out (release with db_capture_release); PR_ENOTFOUND when absent. */
int db_capture_get(db *d, db_capture *out, int64_t capture_id, pr_error *err);

/* One function's numbers in one capture; strings belong to the row. */
typedef struct db_func_row {
	char *name;
	char *file;
	int64_t self_value, total_value;
	double self_share, total_share;
} db_func_row;

/* Free every row's strings and the array itself. */
void db_func_rows_free(db_func_row *rows, size_t n);

/*
 * The stored function values of several captures (profile_vectors), in
 * one read: capture i (capture_id[i]) has the values at
 * [start[i], start[i + 1]) of function_id and value (self values, or
 * total values from db_vectors_read_totals), its function ids ascending.
 * Captures without functions are absent. Every array is the struct's,
 * freed with db_vectors_release.
 */
typedef struct db_vectors {
	size_t n;
	int64_t *capture_id; /* n */
	size_t *start;       /* n + 1 */
	int64_t *function_id, *value; /* start[n] each */
} db_vectors;

void db_vectors_release(db_vectors *v);

/*
 * Read the values of the captures whose ids `ids_literal` lists (a
 * bigint[] literal, db_bigint_array). Each comes as its pairs of id and
 * value (migration 026), or where a row has none as its two arrays in
 * PostgreSQL's binary form; either is checked: a malformed one is PR_EDB.
 */
int db_vectors_read(db *d, db_vectors *out, const char *ids_literal, pr_error *err);

/*
 * The same captures' total (inclusive) values, from their arrays: only
 * an analysis that needs them reads them (the pairs hold self values).
 */
int db_vectors_read_totals(db *d, db_vectors *out, const char *ids_literal, pr_error *err);

/*
 * The capture's functions by self value desc, then total desc, then name
 * and file (byte order), at most `limit` (0: all). *out is a new array of
 * *n rows (NULL when none), freed with db_func_rows_free. PR_ENOTFOUND
 * when the capture does not exist; a capture with no functions gives 0 rows.
 */
int db_capture_top(db *d, db_func_row **out, size_t *n, int64_t capture_id,
		   size_t limit, pr_error *err);

/*
 * Append to the audit log: `action` ("ingest", "service.enable", ...), the
 * `object` it acted on ("capture:42"), and `detail_json` (a JSON object,
 * NULL for none). The actor is the operating-system user running profreg.
 */
int db_audit(db *d, const char *action, const char *object, const char *detail_json, pr_error *err);

/*
 * db_audit of n rows with the same action in one statement: objects[i]
 * and details_json[i] (NULL for none) for each, in order.
 */
int db_audit_many(db *d, const char *action, const char *const *objects,
		  const char *const *details_json, size_t n, pr_error *err);

/*
 * A copy of `conninfo` safe to print: any password (key=value or in a
 * URI) is replaced by "***". The caller frees the result; NULL when out of
 * memory.
 */
char *db_conninfo_redact(const char *conninfo);

/*
 * Overwrite in place any password in `conninfo` (a key=value string or a
 * URI, as db_conninfo_redact reads them) by "***", moving what follows
 * left and clearing the bytes freed at the end. For the --db argument,
 * once it is copied: /proc/PID/cmdline, which every local user can read,
 * shows the process's arguments as they are now. NULL does nothing.
 */
void db_conninfo_wipe(char *conninfo);

/*
 * SQL text that turns a bigint of Unix microseconds into a timestamptz
 * and back, exactly (never through double precision): every module that
 * owns SQL with timestamps uses these.
 */
#define DB_US_TO_TS(p)                                                                             \
	"(to_timestamp((" p ")::bigint / 1000000) + ((" p                                          \
	")::bigint % 1000000) * interval '1 microsecond')"
#define DB_TS_TO_US(c) \
	"(extract(epoch from date_trunc('second', " c "))::bigint * 1000000" \
	" + extract(microseconds from " c ")::bigint % 1000000)"

/*
 * The database's instance id: 32 hex digits made when its schema was
 * created, so that files named after rows (run reports) of two databases
 * never collide in one folder. *out points into `d`.
 */
#define DB_INSTANCE_MAX 32
int db_instance(db *d, const char **out, pr_error *err);

/*
 * When the database last stored a row that points at a blob, into *us:
 * the newest capture's ingested_at or snapshot's stored_at; 0 when it
 * holds neither. A blob put later than that (less some clock skew) is
 * one whose row the database never saw or lost: a database restored from
 * an older backup while the blob store kept everything since.
 */
int db_newest_stored(db *d, int64_t *us, pr_error *err);

/*
 * Audit action of a hold on unreferenced blobs: its detail's newest_us is
 * the database's newest stored row when the hold was taken (a restore
 * point) and until_us the time it was taken; the orphan sweep keeps an
 * unreferenced blob put between the two (docs/retention.md).
 */
#define DB_BLOBS_HELD "blobs_held"

/* Take such a hold: an audit row DB_BLOBS_HELD of newest_us and until_us. */
int db_blobs_hold(db *d, int64_t newest_us, int64_t until_us, pr_error *err);

/* The OS user profreg runs as, for audit rows ("root", "uid 1000"). */
const char *db_actor(const db *d);

/*
 * Run one parameterised statement for a module that owns its own SQL
 * (baselines, findings, runs). `what` names the operation in the error
 * message ("database: <what>: <server message>"). On success *out (when
 * not NULL) is the result, which the caller frees with PQclear; on
 * failure it is NULL and the code is PR_EDB (or PR_EUSAGE for invalid
 * input such as a bad cast). Parameters are text, NULL for SQL NULL.
 */
struct pg_result;
int db_exec(db *d, struct pg_result **out, pr_error *err, const char *what,
	    const char *sql, int nparams, const char *const *params);

/*
 * db_exec for a statement run many times on one session (once a service,
 * say): prepared on its first run and kept, by its text, for the
 * session's life, so the server parses it once and may keep its plan.
 * Results are text, or binary when `binary` is 1. The first 32 distinct
 * statements of a session are kept; others run as db_exec would.
 */
int db_exec_repeat(db *d, struct pg_result **out, pr_error *err, const char *what,
		   const char *sql, int nparams, const char *const *params, int binary);

/*
 * db_exec_repeat with parameters in binary where formats[i] is 1
 * (lengths[i] bytes at params[i]; text where 0); text results.
 */
int db_exec_repeat_bin(db *d, struct pg_result **out, pr_error *err, const char *what,
		       const char *sql, int nparams, const char *const *params, const int *lengths,
		       const int *formats);

/* One statement of a pipeline: as db_exec_repeat_bin's arguments (lengths, formats NULL: text). */
typedef struct db_call {
	const char *what; /* names the statement in an error message */
	const char *sql;
	int nparams;
	const char *const *params;
	const int *lengths, *formats;
	int binary; /* results in binary */
} db_call;

#define DB_PIPELINE_MAX 8

/*
 * Run n (at most DB_PIPELINE_MAX) statements, each prepared as
 * db_exec_repeat prepares it, in one round trip (libpq's pipeline mode):
 * for statements none of which needs another's result in the client. The
 * server runs them in order; after one fails it runs none of the rest,
 * and its error is returned. Outside a transaction the statements are
 * one transaction, committed at the pipeline's end or rolled back with
 * the failure; inside one, they are part of it. On success out[i]
 * (when out is not NULL) is statement i's result, for the caller to
 * PQclear; on failure every result is freed and out[i] is NULL.
 */
int db_exec_pipeline(db *d, struct pg_result **out, pr_error *err, const db_call *calls,
		     size_t n);

/*
 * Append to b a float8[] / bigint[] parameter in PostgreSQL's binary form
 * (for db_exec_repeat_bin): n values, `stride` bytes apart from `first`;
 * a NaN goes as NULL. PR_ENOMEM on failure.
 */
struct buf;
int db_float8_array_bin(struct buf *b, const double *first, size_t n, size_t stride);
int db_int8_array_bin(struct buf *b, const int64_t *first, size_t n, size_t stride);

/* Column accessors for results from db_exec: SQL NULL reads as 0 / false / NULL. */
int64_t db_get_i64(const struct pg_result *res, int row, int col);
double db_get_f64(const struct pg_result *res, int row, int col);
bool db_get_bool(const struct pg_result *res, int row, int col);
const char *db_get_text(const struct pg_result *res, int row, int col);
int db_rows(const struct pg_result *res);
void db_result_free(struct pg_result *res);

/*
 * Append a bigint[] literal ("{1,2,3}") of n values to `out`, for an
 * `= any($1::bigint[])` parameter. The values start at `first` and lie
 * `stride` bytes apart: sizeof(int64_t) for a plain array, the size of a
 * struct to read one field of an array of structs. Returns 0 or PR_ENOMEM
 * (the buffer is then released).
 */
struct buf;
int db_bigint_array(struct buf *out, const int64_t *first, size_t n, size_t stride);

#endif
