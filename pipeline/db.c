/*
 * db.c: the PostgreSQL index over libpq (see db.h).
 *
 * Every statement goes through PQexecParams with text parameters, except
 * the fixed, parameterless SQL of migrations and transaction control.
 * Microseconds and timestamptz convert in SQL, exactly over the whole
 * timestamp range and on every supported server version: whole seconds
 * and the microseconds within them travel separately, so no value ever
 * passes through a double that could round it.
 */
#define _POSIX_C_SOURCE 200809L
#include "pipeline/db.h"
#include "common/similar.h"
#include "pipeline/migrate.h"
#include "common/buf.h"
#include "common/redact.h"
#include "common/strmap.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <libpq-fe.h>
#include <openssl/evp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define US_TO_TS(p) DB_US_TO_TS(p)
#define TS_TO_US(c) DB_TS_TO_US(c)

/* First key of every profreg advisory lock ("prof"), the second is hashtext(name). */
#define LOCK_CLASS "1886547814"
/* First key of the per-blob locks: LOCK_CLASS + 1, so they never meet a job's. */
#define BLOB_LOCK_CLASS "1886547815"
/* First key of the per-release locks of ingest (db_release_commit_conflicts). */
#define RELEASE_LOCK_CLASS "1886547816"
#define MIGRATE_LOCK "profreg.schema-migrations"

/* COPY data goes to the server in chunks of about this size. */
#define COPY_CHUNK (256u * 1024u)

/* Server versions older than this lack what the schema uses (generated columns). */
#define MIN_SERVER_VERSION 120000

/* A statement prepared on this session by db_exec_repeat, found by its text. */
typedef struct db_stmt {
	uint64_t hash;
	char *sql;
} db_stmt;

#define DB_STMTS 32 /* more distinct repeated statements run unprepared */

struct db {
	PGconn *conn;
	char actor[128];
	char instance[DB_INSTANCE_MAX + 1]; /* "" until read */
	bool prepared_capture; /* the capture inserts are prepared on this session */
	int vectors_rls;       /* row security applies to profile_vectors: 0 unknown, 1 no, 2 yes */
	db_stmt stmts[DB_STMTS]; /* named profreg_s<i> on the server */
	size_t nstmts;
	db_session_fn on_session; /* set up a new session again after db_reconnect */
	void *on_session_ctx;
	bool unset;            /* db_reconnect's session is up but its set-up failed */
};

/* ---- errors ---------------------------------------------------------- */

/* The server's message for a failed result, else the connection's, first line only. */
static void first_line(char *out, size_t cap, db *d, const PGresult *res)
{
	const char *m = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	size_t n;

	if (!m || !*m)
		m = d && d->conn ? PQerrorMessage(d->conn) : "";
	/* libpq puts the severity in front of connection-level messages. */
	while (strncmp(m, "ERROR:  ", 8) == 0 || strncmp(m, "FATAL:  ", 8) == 0)
		m += 8;
	n = strcspn(m, "\r\n");
	if (n == 0) {
		m = "unknown error";
		n = strlen(m);
	}
	if (n >= cap)
		n = cap - 1;
	memcpy(out, m, n);
	out[n] = '\0';
}

static const char *sqlstate(const PGresult *res)
{
	const char *s = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	return s ? s : "";
}

static int db_failv(db *d, const PGresult *res, pr_error *err, bool input,
		    const char *fmt, va_list ap)
{
	char what[512], line[512];
	const char *st = sqlstate(res);
	int code = PR_EDB;

	vsnprintf(what, sizeof(what), fmt, ap);
	first_line(line, sizeof(line), d, res);
	if (input && (strncmp(st, "22", 2) == 0 || strcmp(st, "23514") == 0))
		code = PR_EUSAGE;
	return pr_error_set(err, code, "database: %s: %s", what, line);
}

/* Record a failed statement as PR_EDB: "database: <what>: <first line>". */
static int db_fail(db *d, const PGresult *res, pr_error *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int db_fail(db *d, const PGresult *res, pr_error *err, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = db_failv(d, res, err, false, fmt, ap);
	va_end(ap);
	return rc;
}

/*
 * Same, for a statement that carries values the caller handed us: a data
 * exception or a failed check there is the caller's bad value, PR_EUSAGE.
 */
static int db_fail_input(db *d, const PGresult *res, pr_error *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int db_fail_input(db *d, const PGresult *res, pr_error *err, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = db_failv(d, res, err, true, fmt, ap);
	va_end(ap);
	return rc;
}

/* A connection the server dropped (restart, network) says so plainly. */
static int conn_lost(db *d, pr_error *err)
{
	char line[512];

	first_line(line, sizeof(line), d, NULL);
	return pr_error_set(err, PR_EDB, "database: the connection is lost: %s", line);
}

static int oom(pr_error *err)
{
	return pr_error_set(err, PR_ENOMEM, "database: out of memory");
}

static bool res_ok(const PGresult *res)
{
	ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
	return st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
}

static PGresult *q(db *d, const char *sql, int n, const char *const *params)
{
	return PQexecParams(d->conn, sql, n, NULL, params, NULL, NULL, 0);
}

/* Run a statement; on failure record "database: <what>: ..." and clear the result. */
static int run(db *d, PGresult **out, pr_error *err, const char *sql, int n,
	       const char *const *params, const char *what)
{
	PGresult *res = q(d, sql, n, params);
	int rc = 0;

	if (!res_ok(res)) {
		rc = db_fail(d, res, err, "%s", what);
		PQclear(res);
		res = NULL;
	}
	if (out)
		*out = res;
	else
		PQclear(res);
	return rc;
}

/* Fixed SQL without parameters (transaction control, migrations). */
static int run_plain(db *d, pr_error *err, const char *sql, const char *what)
{
	PGresult *res = PQexec(d->conn, sql);
	int rc = 0;

	if (!res_ok(res))
		rc = db_fail(d, res, err, "%s", what);
	PQclear(res);
	return rc;
}

/* ---- small conversions ----------------------------------------------- */

typedef struct num {
	char s[24];
} num;

static const char *i64(num *n, int64_t v)
{
	snprintf(n->s, sizeof(n->s), "%" PRId64, v);
	return n->s;
}

static int64_t get_i64(const PGresult *res, int row, int col)
{
	if (PQgetisnull(res, row, col))
		return 0;
	return strtoll(PQgetvalue(res, row, col), NULL, 10);
}

/*
 * Rows of (ordinality - 1, id or NULL), as the "unnest ... with
 * ordinality" look-ups return them: ids[ord] = id for each non-NULL id
 * whose ord is in [0, n); the other ids stay as they were.
 */
static void ids_by_ord(int64_t *ids, size_t n, const PGresult *res)
{
	for (int r = 0; r < PQntuples(res); r++) {
		int64_t ord = get_i64(res, r, 0);
		if (ord >= 0 && (size_t)ord < n && !PQgetisnull(res, r, 1))
			ids[ord] = get_i64(res, r, 1);
	}
}

static double get_f64(const PGresult *res, int row, int col)
{
	if (PQgetisnull(res, row, col))
		return 0;
	return strtod(PQgetvalue(res, row, col), NULL);
}

static bool get_bool(const PGresult *res, int row, int col)
{
	return !PQgetisnull(res, row, col) && PQgetvalue(res, row, col)[0] == 't';
}

/* A copy of a text column, NULL for SQL NULL; sets *oom when memory runs out. */
static char *get_str(const PGresult *res, int row, int col, bool *oom_flag)
{
	char *s;

	if (PQgetisnull(res, row, col))
		return NULL;
	if (!(s = strdup(PQgetvalue(res, row, col))))
		*oom_flag = true;
	return s;
}

/* At most 64 bytes of `s`, printable ASCII only, for quoting caller input in a message. */
static const char *sanitize(char out[68], const char *s)
{
	size_t i = 0;

	for (; s && s[i] && i < 64; i++)
		out[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	out[i] = '\0';
	if (s && s[i])
		memcpy(out + 61, "...", 4); /* i is 64 here */
	return out;
}

/*
 * A service name for a message: as it is when it is a valid name (what
 * users type, and what a suggestion is made from), else only the words
 * that cannot carry payment data (common/redact.h): a name from a
 * manifest line or a catalogue can be any text of the file.
 */
static const char *quote_service(char out[68], const char *s);

/* ---- connection ------------------------------------------------------ */

static void drop_notice(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

static void set_actor(db *d)
{
	struct passwd *pw = getpwuid(geteuid());

	if (pw && pw->pw_name && *pw->pw_name)
		snprintf(d->actor, sizeof(d->actor), "%s", pw->pw_name);
	else
		snprintf(d->actor, sizeof(d->actor), "uid %ld", (long)geteuid());
}

/*
 * libpq takes a bare word as a database name, anything with '=' or a URI prefix as a connection
 * string.
 */
static bool is_conn_string(const char *s)
{
	return strncmp(s, "postgresql://", 13) == 0 || strncmp(s, "postgres://", 11) == 0 ||
	       strchr(s, '=') != NULL;
}

/*
 * libpq's complaint about a connection string it cannot parse may quote a
 * piece of it; when that piece could be a password, say less.
 */
static bool may_hold_secret(const char *conninfo)
{
	return strstr(conninfo, "password") || strchr(conninfo, '@');
}

/* Replace every occurrence of `secret` in the string `s` (capacity `cap`) by "***". */
static void scrub(char *s, size_t cap, const char *secret)
{
	size_t n = secret ? strlen(secret) : 0;
	char *p, *from = s;

	if (n == 0)
		return;
	while ((p = strstr(from, secret))) {
		size_t tail = strlen(p + n);
		if ((size_t)(p - s) + 3 + tail >= cap) {
			/* No room to grow: cut the message at the secret. */
			*p = '\0';
			return;
		}
		memmove(p + 3, p + n, tail + 1);
		memcpy(p, "***", 3);
		from = p + 3;
	}
}

/* The session's settings, sent after every connection (db.h). */
#define SESSION_SQL "set timezone to 'UTC'; set client_min_messages to warning"

/*
 * Why a connection failed, and what to do about it: libpq's first line
 * with its "FATAL:  " taken out, then libpq's own hint ("is the server
 * running ...?") when it gave one, or how to make a database that is not
 * there. A user who mistyped a socket or forgot to start the server reads
 * what to check next, not only an errno.
 */
static void connect_failure(char *out, size_t cap, db *d)
{
	const char *m = d->conn ? PQerrorMessage(d->conn) : "", *nl, *hint = NULL;
	char *fatal;
	size_t n;

	first_line(out, cap, d, NULL);
	while ((fatal = strstr(out, "FATAL:  ")))
		memmove(fatal, fatal + 8, strlen(fatal + 8) + 1);
	/* libpq's hint is an indented line after its message. */
	for (nl = strchr(m, '\n'); nl && !hint; nl = strchr(nl + 1, '\n'))
		if (nl[1] == '\t' && nl[2])
			hint = nl + 2;
	n = strlen(out);
	if (hint)
		snprintf(out + n, cap - n, "; %c%.*s", tolower((unsigned char)hint[0]),
			 (int)strcspn(hint + 1, "\r\n"), hint + 1);
	else if (strstr(out, "database \"") && strstr(out, "\" does not exist"))
		snprintf(out + n, cap - n, "; create it (createdb), then run 'profreg db init'");
}

/* Connect and check the server; the session is not set up yet. */
static int db_connect(db **out, const char *conninfo, pr_error *err)
{
	const char *keys[10], *vals[10];
	PQconninfoOption *opts = NULL;
	char *perr = NULL, line[512];
	const char *password = NULL;
	db *d = NULL;
	int k = 0, rc = 0;

	*out = NULL;
	if (!conninfo)
		conninfo = "";
	if (is_conn_string(conninfo)) {
		opts = PQconninfoParse(conninfo, &perr);
		if (!opts) {
			if (perr && !may_hold_secret(conninfo))
				snprintf(line, sizeof(line), "%.*s", (int)strcspn(perr, "\r\n"),
					 perr);
			else
				snprintf(line, sizeof(line), "the connection string is not valid");
			/* The caller's string, not the server: a usage error (exit 2). */
			rc = pr_error_set(err, PR_EUSAGE, "cannot connect to the database: %s",
					  line);
			goto out;
		}
		for (PQconninfoOption *o = opts; o->keyword; o++)
			if (strcmp(o->keyword, "password") == 0 && o->val && *o->val)
				password = o->val;
	}
	if (!(d = calloc(1, sizeof(*d)))) {
		rc = oom(err);
		goto out;
	}
	/* Ours first, so the caller's string overrides them (expand_dbname). */
	if (!getenv("PGCONNECT_TIMEOUT")) {
		keys[k] = "connect_timeout";
		vals[k++] = "10";
	}
	keys[k] = "fallback_application_name";
	vals[k++] = "profreg";
	/*
	 * A remote server that goes away without a reset (a host down, a
	 * network cut, a failover) leaves a query waiting for an answer that
	 * never comes, and with the kernel's defaults a dead peer is noticed
	 * after 2 h 11 min: a nightly or a CI gate hangs that long. Probe after
	 * 30 s of silence, every 10 s, and give up after 3: about a minute.
	 * (Ignored on a Unix socket.)
	 */
	keys[k] = "keepalives";
	vals[k++] = "1";
	keys[k] = "keepalives_idle";
	vals[k++] = "30";
	keys[k] = "keepalives_interval";
	vals[k++] = "10";
	keys[k] = "keepalives_count";
	vals[k++] = "3";
	keys[k] = "dbname";
	vals[k++] = conninfo;
	/* Function names travel as UTF-8 whatever the caller's setting. */
	keys[k] = "client_encoding";
	vals[k++] = "UTF8";
	keys[k] = NULL;
	vals[k] = NULL;
	d->conn = PQconnectdbParams(keys, vals, 1);
	if (!d->conn) {
		rc = oom(err);
		goto out;
	}
	if (PQstatus(d->conn) != CONNECTION_OK) {
		connect_failure(line, sizeof(line), d);
		scrub(line, sizeof(line), password);
		rc = pr_error_set(err, PR_EDB, "cannot connect to the database: %s", line);
		goto out;
	}
	if (PQserverVersion(d->conn) < MIN_SERVER_VERSION) {
		rc = pr_error_set(err, PR_EDB,
				  "database: the server runs PostgreSQL %d, "
				  "profreg needs 12 or newer",
				  PQserverVersion(d->conn) / 10000);
		goto out;
	}
	PQsetNoticeProcessor(d->conn, drop_notice, NULL);
	set_actor(d);
	*out = d;
	d = NULL;
out:
	db_close(d);
	PQconninfoFree(opts);
	PQfreemem(perr);
	return rc;
}

int db_open(db **out, const char *conninfo, pr_error *err)
{
	int rc;

	if ((rc = db_connect(out, conninfo, err)) < 0)
		return rc;
	if ((rc = run_plain(*out, err, SESSION_SQL, "cannot set up the session")) < 0) {
		db_close(*out);
		*out = NULL;
	}
	return rc;
}

/*
 * A schema a newer profreg migrated is refused: this binary knows nothing
 * of what its migrations changed (an older one copied function rows into
 * what had become a view, and its nightly would page without the newer
 * one's rules), and "current" would be true, every migration it knows
 * being there.
 */
static int newer_schema(int version, pr_error *err)
{
	int latest = migrations_count ? migrations[migrations_count - 1].version : 0;

	if (version <= latest)
		return 0;
	return pr_error_set(err, PR_EDB, "database: the schema is at version %d, newer than "
			    "this profreg knows (up to %d): run a profreg at least as new as "
			    "the one that upgraded it", version, latest);
}

/* What "select version from schema_migrations" says of the schema (db_schema_check). */
static void schema_state(const PGresult *res, int *version, bool *current)
{
	size_t have = 0;

	for (int r = 0; r < PQntuples(res); r++) {
		int v = (int)get_i64(res, r, 0);
		if (v > *version)
			*version = v;
		for (size_t i = 0; i < migrations_count; i++)
			if (migrations[i].version == v) {
				have++;
				break;
			}
	}
	*current = have == migrations_count;
}

int db_open_check(db **out, const char *conninfo, int *version, bool *current, pr_error *err)
{
	static const char sql[] = SESSION_SQL "; select version from schema_migrations";
	PGresult *res = NULL, *failed = NULL;
	int rc, n = 0, failed_at = 0;
	db *d = NULL;

	*version = 0;
	*current = false;
	if ((rc = db_connect(&d, conninfo, err)) < 0)
		goto out;
	if (!PQsendQuery(d->conn, sql)) {
		rc = db_fail(d, NULL, err, "cannot set up the session");
		goto out;
	}
	/* Three results: two settings, then the versions; the server stops at an error. */
	while ((res = PQgetResult(d->conn))) {
		n++;
		if (!failed && !res_ok(res)) {
			failed = res;
			failed_at = n;
			continue;
		}
		if (!failed && n == 3)
			schema_state(res, version, current);
		PQclear(res);
	}
	if (failed && failed_at == 3 && strcmp(sqlstate(failed), "42P01") == 0) {
		/*
		 * No bookkeeping table: no schema at all. The statements ran as
		 * one implicit transaction, so the error undid the settings.
		 */
		rc = run_plain(d, err, SESSION_SQL, "cannot set up the session");
	} else if (failed) {
		rc = db_fail(d, failed, err, "%s", failed_at == 3 ? "cannot read the schema version"
								: "cannot set up the session");
	} else if (n != 3) {
		rc = db_fail(d, NULL, err, "cannot set up the session");
	} else {
		rc = newer_schema(*version, err);
	}
out:
	PQclear(failed);
	if (rc < 0) {
		db_close(d);
		d = NULL;
	}
	*out = d;
	return rc;
}

/* The session's prepared statements are gone with it. */
static void forget_stmts(db *d)
{
	for (size_t i = 0; i < d->nstmts; i++)
		free(d->stmts[i].sql);
	d->nstmts = 0;
}

int db_reconnect(db *d, pr_error *err)
{
	char line[512];
	int rc;

	if (PQstatus(d->conn) == CONNECTION_OK && !d->unset)
		return 0;
	PQreset(d->conn);
	d->prepared_capture = false;
	d->vectors_rls = 0;
	forget_stmts(d);
	if (PQstatus(d->conn) != CONNECTION_OK) {
		first_line(line, sizeof(line), d, NULL);
		return pr_error_set(err, PR_EDB, "cannot connect to the database: %s", line);
	}
	PQsetNoticeProcessor(d->conn, drop_notice, NULL);
	/*
	 * A session whose set-up failed (its clock not UTC, its audit tags not
	 * set) is not one to carry on with: the next call resets it again.
	 */
	d->unset = true;
	if ((rc = run_plain(d, err, SESSION_SQL, "cannot set up the session")) < 0 ||
	    (d->on_session && (rc = d->on_session(d, d->on_session_ctx, err)) < 0))
		return rc;
	d->unset = false;
	return 0;
}

void db_on_session(db *d, db_session_fn fn, void *ctx)
{
	d->on_session = fn;
	d->on_session_ctx = ctx;
}

bool db_connected(const db *d)
{
	return d && d->conn && PQstatus(d->conn) == CONNECTION_OK && !d->unset;
}

void db_close(db *d)
{
	if (!d)
		return;
	if (d->conn)
		PQfinish(d->conn);
	forget_stmts(d);
	free(d);
}

/* A conninfo value, in single quotes with \ and ' escaped when it needs them. */
static int put_conninfo_value(buf *b, const char *v)
{
	int rc;

	if (*v && !strpbrk(v, " '\\\t\n"))
		return buf_puts(b, v);
	if ((rc = buf_putc(b, '\'')) < 0)
		return rc;
	for (; *v; v++)
		if (((*v == '\'' || *v == '\\') && (rc = buf_putc(b, '\\')) < 0) ||
		    (rc = buf_putc(b, *v)) < 0)
			return rc;
	return buf_putc(b, '\'');
}

char *db_conninfo_redact(const char *conninfo)
{
	PQconninfoOption *opts;
	char *perr = NULL;
	buf b = BUF_INIT;
	int rc = 0;

	if (!conninfo)
		conninfo = "";
	if (!is_conn_string(conninfo))
		return strdup(conninfo); /* a bare database name */
	if (!(opts = PQconninfoParse(conninfo, &perr))) {
		PQfreemem(perr);
		return strdup("(an invalid connection string)");
	}
	for (PQconninfoOption *o = opts; rc == 0 && o->keyword; o++) {
		bool secret = strcmp(o->keyword, "password") == 0 ||
			      strcmp(o->keyword, "sslpassword") == 0;
		if (!o->val || !*o->val)
			continue;
		if ((rc = buf_printf(&b, "%s%s=", b.len ? " " : "", o->keyword)) == 0)
			rc = secret ? buf_puts(&b, "***") : put_conninfo_value(&b, o->val);
	}
	PQconninfoFree(opts);
	if (rc < 0) {
		buf_release(&b);
		return NULL;
	}
	return buf_detach(&b, NULL);
}

/*
 * Replace s[from, to) by "***" (fewer stars for a shorter value, so that
 * nothing is added), move the rest of the string left and clear the bytes
 * that frees at its end, where the value's last bytes would stay. Returns
 * the index just after the stars.
 */
static size_t wipe_span(char *s, size_t from, size_t to)
{
	size_t n = to - from, stars = n < 3 ? n : 3, rest = strlen(s + to);

	memset(s + from, '*', stars);
	memmove(s + from + stars, s + to, rest + 1);
	memset(s + from + stars + rest + 1, '\0', n - stars);
	return from + stars;
}

/*
 * Whether the keyword s[0, n) names a secret. In a URI's query it may be
 * percent-encoded ("pass%77ord"), as libpq decodes it; the case is
 * ignored, as wiping more costs nothing.
 */
static bool secret_keyword(const char *s, size_t n, bool uri)
{
	char k[16];
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (uri && c == '%' && i + 2 < n && isxdigit((unsigned char)s[i + 1]) &&
		    isxdigit((unsigned char)s[i + 2])) {
			char hex[3] = {s[i + 1], s[i + 2], '\0'};
			c = (char)strtol(hex, NULL, 16);
			i += 2;
		}
		if (len == sizeof(k) - 1)
			return false;
		k[len++] = (char)tolower((unsigned char)c);
	}
	k[len] = '\0';
	return strcmp(k, "password") == 0 || strcmp(k, "sslpassword") == 0;
}

/* postgresql://user:password@host/db?password=x: the URI form's two places. */
static void wipe_uri(char *s, size_t at)
{
	size_t slash = at + strcspn(s + at, "/"), end = at, i;

	/*
	 * libpq ends the user info at the first '@' before any '/'; the last
	 * one is taken here, so that a password holding an '@' is wiped whole.
	 */
	for (i = at; i < slash; i++)
		if (s[i] == '@')
			end = i;
	if (end > at) {
		size_t colon = at + strcspn(s + at, ":");
		if (colon < end)
			wipe_span(s, colon + 1, end);
	}
	i = strcspn(s, "?");
	if (!s[i])
		return;
	while (s[i]) {
		size_t key = ++i, eq = key + strcspn(s + key, "=&"), val, stop;
		if (s[eq] != '=') {
			i = eq;
			continue;
		}
		val = eq + 1;
		stop = val + strcspn(s + val, "&");
		i = secret_keyword(s + key, eq - key, true) ? wipe_span(s, val, stop) : stop;
	}
}

/*
 * key=value pairs, read as libpq reads them: spaces around '=', a value
 * in single quotes or up to the next space, backslash escapes in both. A
 * keyword without '=' (a string libpq refuses) is skipped, so that a
 * password after it is still found.
 */
static void wipe_keywords(char *s)
{
	size_t i = 0;

	while (s[i]) {
		size_t key, key_end, val;
		while (isspace((unsigned char)s[i]))
			i++;
		key = i;
		while (s[i] && s[i] != '=' && !isspace((unsigned char)s[i]))
			i++;
		key_end = i;
		while (isspace((unsigned char)s[i]))
			i++;
		if (s[i] != '=')
			continue;
		i++;
		while (isspace((unsigned char)s[i]))
			i++;
		val = i;
		if (s[i] == '\'') {
			for (i++; s[i] && s[i] != '\''; i++)
				if (s[i] == '\\' && s[i + 1])
					i++;
			if (s[i])
				i++;
		} else {
			for (; s[i] && !isspace((unsigned char)s[i]); i++)
				if (s[i] == '\\' && s[i + 1])
					i++;
		}
		if (secret_keyword(s + key, key_end - key, false))
			i = wipe_span(s, val, i);
	}
}

void db_conninfo_wipe(char *conninfo)
{
	if (!conninfo)
		return;
	if (strncmp(conninfo, "postgresql://", 13) == 0)
		wipe_uri(conninfo, 13);
	else if (strncmp(conninfo, "postgres://", 11) == 0)
		wipe_uri(conninfo, 11);
	else
		wipe_keywords(conninfo);
}

/* ---- migrations ------------------------------------------------------ */

static const char create_migrations_table[] =
	"create table if not exists schema_migrations ("
	" version int primary key,"
	" name text not null,"
	" applied_at timestamptz not null default now())";

static const char take_migrate_lock[] =
	"select pg_advisory_xact_lock(" LOCK_CLASS ", hashtext('" MIGRATE_LOCK "'))";

int db_schema_version(db *d, int *out, pr_error *err)
{
	PGresult *res = NULL;
	int rc;

	*out = 0;
	if ((rc = run(d, &res, err, "select to_regclass('schema_migrations') is not null", 0, NULL,
		      "cannot read the schema version")) < 0)
		goto out;
	if (!get_bool(res, 0, 0))
		goto out;
	PQclear(res);
	if ((rc = run(d, &res, err, "select coalesce(max(version), 0) from schema_migrations",
		      0, NULL, "cannot read the schema version")) < 0)
		goto out;
	*out = (int)get_i64(res, 0, 0);
out:
	PQclear(res);
	return rc;
}

int db_schema_check(db *d, int *version, bool *current, pr_error *err)
{
	PGresult *res = PQexec(d->conn, "select version from schema_migrations");
	int rc = 0;

	*version = 0;
	*current = false;
	/* No bookkeeping table: no schema at all (an error outside a transaction costs nothing). */
	if (strcmp(sqlstate(res), "42P01") == 0)
		goto out;
	if (!res_ok(res)) {
		rc = db_fail(d, res, err, "cannot read the schema version");
		goto out;
	}
	schema_state(res, version, current);
	rc = newer_schema(*version, err);
out:
	PQclear(res);
	return rc;
}

/* True when every migration the binary carries is recorded; a cheap check without locks. */
static int migrations_pending(db *d, bool *pending, pr_error *err)
{
	PGresult *res = NULL;
	size_t have = 0;
	int rc;

	*pending = migrations_count > 0;
	if ((rc = run(d, &res, err, "select to_regclass('schema_migrations') is not null", 0, NULL,
		      "cannot read the applied migrations")) < 0)
		goto out;
	if (!get_bool(res, 0, 0))
		goto out;
	PQclear(res);
	if ((rc = run(d, &res, err, "select version from schema_migrations", 0, NULL,
		      "cannot read the applied migrations")) < 0)
		goto out;
	for (size_t i = 0; i < migrations_count; i++)
		for (int r = 0; r < PQntuples(res); r++)
			if (get_i64(res, r, 0) == migrations[i].version) {
				have++;
				break;
			}
	*pending = have < migrations_count;
out:
	PQclear(res);
	return rc;
}

/*
 * The role migrations run as: NULL for the session's own (it owns the
 * schema, or there is none yet), else the schema's owner, as a quoted
 * identifier the caller frees. A role that is not the owner made the
 * new tables its own when it migrated (a superuser after an upgrade):
 * the owner could then neither grant nor revoke on them, and the
 * functions it revoked from PUBLIC were no longer its to run. A role
 * that cannot act as the owner is told to ask it (a team role ran into
 * "permission denied for schema public" creating a table that existed).
 */
static int migrate_role(db *d, char **role, pr_error *err)
{
	static const char sql[] =
		"select pg_get_userbyid(c.relowner), pg_get_userbyid(c.relowner) = current_user,"
		" pg_has_role(current_user, c.relowner, 'MEMBER'), current_user"
		" from pg_class c where c.oid = to_regclass('schema_migrations')";
	PGresult *res = NULL;
	int rc, at = 0;

	*role = NULL;
	if ((rc = run(d, &res, err, sql, 0, NULL, "cannot read the schema's owner")) < 0 ||
	    PQntuples(res) == 0 || get_bool(res, 0, 1))
		goto out;
	if (!get_bool(res, 0, 2)) {
		if ((rc = db_schema_version(d, &at, err)) == 0)
			rc = pr_error_set(err, PR_EDB, "database: the schema is at version %d and "
					  "this profreg needs %d: run 'profreg db migrate' as role "
					  "'%s' (the schema's owner); role '%s' cannot", at,
					  migrations[migrations_count - 1].version,
					  PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 3));
		goto out;
	}
	if (!(*role = PQescapeIdentifier(d->conn, PQgetvalue(res, 0, 0),
					 strlen(PQgetvalue(res, 0, 0)))))
		rc = db_fail(d, NULL, err, "cannot name the schema's owner");
out:
	PQclear(res);
	return rc;
}

/* In a migration's transaction: act as `role` (migrate_role), when one is given. */
static int as_role(db *d, const char *role, pr_error *err)
{
	buf sql = BUF_INIT;
	int rc;

	if (!role)
		return 0;
	if (buf_printf(&sql, "set local role %s", role) < 0)
		return oom(err);
	rc = run_plain(d, err, sql.ptr, "cannot act as the schema's owner");
	buf_release(&sql);
	return rc;
}

/* Apply one migration unless another process got there first; *did says which. */
static int apply_migration(db *d, const migration *m, const char *role, bool *did,
			   pr_error *err)
{
	num v;
	const char *p[2] = {i64(&v, m->version), m->name};
	PGresult *res = NULL;
	bool in_tx = false;
	int rc;

	*did = false;
	if ((rc = run_plain(d, err, "begin", "cannot start a migration")) < 0)
		goto out;
	in_tx = true;
	/* A migration stuck behind a lock fails in bounded time rather than hanging a job. */
	if ((rc = run_plain(d, err, "set local lock_timeout = '120s'",
			    "cannot start a migration")) < 0)
		goto out;
	if ((rc = run_plain(d, err, take_migrate_lock,
			    "cannot lock the schema for migration")) < 0 ||
	    (rc = as_role(d, role, err)) < 0)
		goto out;
	if ((rc = run(d, &res, err, "select 1 from schema_migrations where version = $1",
		      1, p, "cannot read the applied migrations")) < 0)
		goto out;
	if (PQntuples(res) > 0)
		goto out; /* applied while we waited for the lock */
	PQclear(res);
	res = PQexec(d->conn, m->sql);
	if (!res_ok(res)) {
		rc = db_fail(d, res, err, "cannot apply migration %s", m->name);
		goto out;
	}
	PQclear(res);
	res = NULL;
	if ((rc = run(d, NULL, err, "insert into schema_migrations (version, name) values ($1, $2)",
		      2, p, "cannot record a migration")) < 0)
		goto out;
	if ((rc = run_plain(d, err, "commit", "cannot commit a migration")) < 0)
		goto out;
	in_tx = false;
	*did = true;
out:
	PQclear(res);
	if (in_tx)
		db_rollback(d);
	return rc;
}

int db_migrate(db *d, int *applied, pr_error *err)
{
	bool pending = false, did;
	char *role = NULL;
	int n = 0, rc;

	if (applied)
		*applied = 0;
	if (PQstatus(d->conn) != CONNECTION_OK)
		return conn_lost(d, err);
	if (PQtransactionStatus(d->conn) != PQTRANS_IDLE)
		return pr_error_set(err, PR_EUSAGE,
				    "database: cannot migrate inside a transaction");
	for (size_t i = 1; i < migrations_count; i++)
		if (migrations[i].version <= migrations[i - 1].version)
			return pr_error_set(err, PR_ERR,
					    "database: migrations '%s' and '%s' are out of order",
					    migrations[i - 1].name, migrations[i].name);
	if ((rc = migrations_pending(d, &pending, err)) < 0 || !pending ||
	    (rc = migrate_role(d, &role, err)) < 0)
		goto out;

	/* The bookkeeping table itself, created under the same lock. */
	if ((rc = run_plain(d, err, "begin", "cannot start a migration")) < 0)
		goto out;
	if ((rc = run_plain(d, err, "set local lock_timeout = '120s'",
			    "cannot start a migration")) < 0 ||
	    (rc = run_plain(d, err, take_migrate_lock, "cannot lock the schema for migration")) <
		    0 ||
	    (rc = as_role(d, role, err)) < 0 ||
	    (rc = run_plain(d, err, create_migrations_table,
			    "cannot create the migrations table")) < 0 ||
	    (rc = run_plain(d, err, "commit", "cannot create the migrations table")) < 0) {
		db_rollback(d);
		goto out;
	}
	for (size_t i = 0; i < migrations_count; i++) {
		if ((rc = apply_migration(d, &migrations[i], role, &did, err)) < 0)
			break;
		n += did;
	}
	if (applied)
		*applied = n;
out:
	PQfreemem(role);
	return rc;
}

/* ---- transactions and locks ------------------------------------------ */

int db_begin(db *d, pr_error *err)
{
	if (PQstatus(d->conn) != CONNECTION_OK)
		return conn_lost(d, err);
	if (PQtransactionStatus(d->conn) != PQTRANS_IDLE)
		return pr_error_set(err, PR_EUSAGE,
				    "database: cannot begin: a transaction is already open");
	return run_plain(d, err, "begin", "cannot begin a transaction");
}

int db_commit(db *d, pr_error *err)
{
	PGresult *res = NULL;
	int rc = 0;

	switch (PQtransactionStatus(d->conn)) {
	case PQTRANS_INTRANS:
		break;
	case PQTRANS_INERROR:
		db_rollback(d);
		return pr_error_set(err, PR_EDB,
				    "database: cannot commit: an earlier statement failed, the "
				    "transaction was rolled back");
	case PQTRANS_IDLE:
		return pr_error_set(err, PR_EUSAGE,
				    "database: cannot commit: no transaction is open");
	default:
		if (PQstatus(d->conn) != CONNECTION_OK)
			return conn_lost(d, err);
		return pr_error_set(err, PR_EDB, "database: cannot commit: the connection is busy");
	}
	res = PQexec(d->conn, "commit");
	if (!res_ok(res))
		rc = db_fail(d, res, err, "cannot commit");
	else if (strcmp(PQcmdStatus(res), "ROLLBACK") == 0)
		rc = pr_error_set(
			err, PR_EDB,
			"database: cannot commit: the server rolled the transaction back");
	PQclear(res);
	return rc;
}

void db_rollback(db *d)
{
	PGTransactionStatusType st;

	if (!d || !d->conn)
		return;
	st = PQtransactionStatus(d->conn);
	if (st == PQTRANS_INTRANS || st == PQTRANS_INERROR)
		PQclear(PQexec(d->conn, "rollback"));
}

static int try_lock(db *d, const char *name, bool shared, bool *got, pr_error *err)
{
	const char *p[1] = {name};
	PGresult *res = NULL;
	int rc;

	*got = false;
	if ((rc = run(d, &res, err,
		      shared ? "select pg_try_advisory_lock_shared(" LOCK_CLASS ", hashtext($1))"
			     : "select pg_try_advisory_lock(" LOCK_CLASS ", hashtext($1))",
		      1, p, "cannot take a lock")) < 0)
		return rc;
	*got = get_bool(res, 0, 0);
	PQclear(res);
	return 0;
}

int db_try_advisory_lock(db *d, const char *name, bool *got, pr_error *err)
{
	return try_lock(d, name, false, got, err);
}

int db_try_advisory_lock_shared(db *d, const char *name, bool *got, pr_error *err)
{
	return try_lock(d, name, true, got, err);
}

void db_advisory_unlock(db *d, const char *name)
{
	const char *p[1] = {name};

	if (d && d->conn)
		PQclear(q(d, "select pg_advisory_unlock(" LOCK_CLASS ", hashtext($1))", 1, p));
}

void db_advisory_unlock_shared(db *d, const char *name)
{
	const char *p[1] = {name};

	if (d && d->conn)
		PQclear(q(d, "select pg_advisory_unlock_shared(" LOCK_CLASS ", hashtext($1))", 1,
			  p));
}

int db_blob_lock(db *d, const char *blob_key, bool exclusive, pr_error *err)
{
	const char *p[1] = {blob_key};
	PGresult *res = NULL;
	int rc;

	rc = run(d, &res, err, exclusive
		 ? "select pg_advisory_xact_lock(" BLOB_LOCK_CLASS ", hashtext($1))"
		 : "select pg_advisory_xact_lock_shared(" BLOB_LOCK_CLASS ", hashtext($1))",
		 1, p, "cannot lock a blob key");
	PQclear(res);
	return rc;
}

int db_blob_lock_all(db *d, const char *keys_literal, pr_error *err)
{
	/* In one order, so two lockers of overlapping sets cannot deadlock. */
	static const char sql[] =
		"select count(pg_advisory_xact_lock(" BLOB_LOCK_CLASS ", h)) from"
		" (select distinct hashtext(k) as h from unnest($1::text[]) k order by 1) x";
	const char *p[1] = {keys_literal};
	PGresult *res = NULL;
	int rc = run(d, &res, err, sql, 1, p, "cannot lock blob keys");

	PQclear(res);
	return rc;
}

int db_blob_lock_all_shared(db *d, const char *keys_literal, pr_error *err)
{
	/* The order of db_blob_lock_all, so a batch and a retention sweep cannot deadlock. */
	static const char sql[] =
		"select count(pg_advisory_xact_lock_shared(" BLOB_LOCK_CLASS ", h)) from"
		" (select distinct hashtext(k) as h from unnest($1::text[]) k order by 1) x";
	const char *p[1] = {keys_literal};
	PGresult *res = NULL;
	int rc = run(d, &res, err, sql, 1, p, "cannot lock blob keys");

	PQclear(res);
	return rc;
}

int db_blob_deletes_mark(db *d, const char *keys_literal, uint64_t linger_us, pr_error *err)
{
	static const char sql[] =
		"with gone as (delete from blob_deletes where until <= now()"
		"              and blob_key <> all($1::text[]))"
		" insert into blob_deletes (blob_key, until)"
		" select distinct k, now() + $2::bigint * interval '1 microsecond'"
		"   from unnest($1::text[]) k"
		" on conflict (blob_key) do update"
		" set until = greatest(blob_deletes.until, excluded.until)";
	char us[24];
	const char *p[2] = {keys_literal, us};
	PGresult *res = NULL;
	int rc;

	snprintf(us, sizeof(us), "%" PRIu64, linger_us);
	rc = run(d, &res, err, sql, 2, p, "cannot record blob deletes");
	PQclear(res);
	return rc;
}

int db_blob_delete_doubt(db *d, const char *keys_literal, char key_out[65], int64_t *until_us,
			 pr_error *err)
{
	static const char sql[] =
		"select blob_key, (extract(epoch from until) * 1000000)::bigint"
		"  from profreg_blob_delete_doubt($1::text[]) where blob_key is not null";
	const char *p[1] = {keys_literal};
	PGresult *res = NULL;
	int rc;

	key_out[0] = '\0';
	*until_us = 0;
	if ((rc = run(d, &res, err, sql, 1, p, "cannot look up blob deletes")) == 0 &&
	    PQntuples(res) == 1) {
		snprintf(key_out, 65, "%s", PQgetvalue(res, 0, 0));
		*until_us = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
	}
	PQclear(res);
	return rc;
}

/* ---- services -------------------------------------------------------- */

static bool service_name_valid(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n < 1 || n > 128)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool alnum =
			(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-')))
			return false;
	}
	return true;
}

static int bad_service_name(const char *name, pr_error *err)
{
	char q[68];

	return pr_error_set(err, PR_EUSAGE,
			    "invalid service name '%s': use 1 to 128 letters, digits, '.', '_' or "
			    "'-', starting with a letter or digit",
			    quote_service(q, name));
}

/*
 * "service 'paymnts-api' not found (did you mean 'payments-api'?)": an
 * unknown name is far more often a typo than a new service. The
 * suggestion is best effort: a failed lookup leaves it out.
 */
static const char *quote_service(char out[68], const char *s)
{
	if (s && service_name_valid(s))
		return sanitize(out, s);
	return redact_excerpt(out, 68, s, s ? strlen(s) : 0);
}

static int service_not_found(db *d, const char *name, pr_error *err)
{
	PGresult *res = NULL;
	const char **names = NULL;
	char qn[68], qs[68];
	long best = -1;
	int n = 0;

	res = q(d, "select name from services order by name collate \"C\" limit 100000", 0, NULL);
	if (res_ok(res) && (n = PQntuples(res)) > 0 &&
	    (names = calloc((size_t)n, sizeof(*names)))) {
		for (int i = 0; i < n; i++)
			names[i] = PQgetvalue(res, i, 0);
		best = service_name_valid(name) ? similar_best(name, names, (size_t)n) : -1;
	}
	if (best >= 0)
		pr_error_set(err, PR_ENOTFOUND, "service '%s' not found (did you mean '%s'?)",
			     quote_service(qn, name), sanitize(qs, names[best]));
	else
		pr_error_set(err, PR_ENOTFOUND, "service '%s' not found", quote_service(qn, name));
	free(names);
	PQclear(res);
	return PR_ENOTFOUND;
}

int db_newest_stored(db *d, int64_t *us, pr_error *err)
{
	/*
	 * No index on these times: ids are handed out in the order rows are
	 * written, so the newest times are among the newest ids (the last
	 * thousand cover rows of transactions that were open together).
	 */
	/* clang-format off */
	static const char sql[] =
		"select n is not null, coalesce(" DB_TS_TO_US("n") ", 0) from (select greatest("
		"  (select max(ingested_at) from (select ingested_at from profiles"
		"    order by id desc limit 1000) p),"
		"  (select max(stored_at) from (select stored_at from snapshots"
		"    order by id desc limit 1000) s)) as n) x";
	/* clang-format on */
	PGresult *res = NULL;
	int rc = db_exec(d, &res, err, "reading when the newest capture was stored", sql, 0, NULL);

	*us = 0;
	if (rc < 0)
		return rc;
	*us = db_get_bool(res, 0, 0) ? db_get_i64(res, 0, 1) : 0;
	db_result_free(res);
	return 0;
}

int db_blobs_hold(db *d, int64_t newest_us, int64_t until_us, pr_error *err)
{
	char detail[96];

	snprintf(detail, sizeof(detail), "{\"newest_us\": %" PRId64 ", \"until_us\": %" PRId64 "}",
		 newest_us, until_us);
	return db_audit(d, DB_BLOBS_HELD, "blob store", detail, err);
}

int db_instance(db *d, const char **out, pr_error *err)
{
	PGresult *res = NULL;
	int rc;

	*out = d->instance;
	if (d->instance[0])
		return 0;
	if ((rc = run(d, &res, err, "select replace(id::text, '-', '') from instance", 0, NULL,
		      "cannot read the instance id")) < 0)
		return rc;
	if (PQntuples(res) == 1)
		snprintf(d->instance, sizeof(d->instance), "%s", PQgetvalue(res, 0, 0));
	else
		rc = pr_error_set(err, PR_EDB, "database: the instance id is missing");
	PQclear(res);
	return rc;
}

const char *db_actor(const db *d)
{
	return d->actor;
}

bool db_service_name_valid(const char *name)
{
	return service_name_valid(name);
}

bool db_service_team_valid(const char *team)
{
	size_t n = strlen(team);

	if (n == 0 || n > DB_TEAM_MAX)
		return false;
	for (const unsigned char *p = (const unsigned char *)team; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

/* A team given (not NULL or "") that is not a team name: PR_EUSAGE. */
static int check_team(const char *team, pr_error *err)
{
	char q[68];

	if (!team || !*team || db_service_team_valid(team))
		return 0;
	return pr_error_set(err, PR_EUSAGE,
			    "invalid team '%s': use 1 to %d bytes without control characters",
			    sanitize(q, team), DB_TEAM_MAX);
}

void db_service_release(db_service *s)
{
	if (!s)
		return;
	free(s->name);
	free(s->team);
	memset(s, 0, sizeof(*s));
}

int db_service_add(db *d, const char *name, const char *team, pr_error *err)
{
	const char *p[3] = {name, team, d->actor};
	PGresult *res = NULL;
	int rc = 0;

	if (!service_name_valid(name))
		return bad_service_name(name, err);
	if ((rc = check_team(team, err)) < 0)
		return rc;
	res = q(d,
		"with s as (insert into services (name, team) values ($1, nullif($2, ''))"
		"           returning id, name, team)"
		" insert into audit_log (actor, action, object, detail)"
		" select $3, 'service.add', 'service:' || s.name,"
		"        jsonb_build_object('id', s.id, 'team', s.team) from s",
		3, p);
	if (strcmp(sqlstate(res), "23505") == 0)
		rc = pr_error_set(err, PR_EEXISTS, "service '%s' already exists", name);
	else if (!res_ok(res))
		rc = db_fail(d, res, err, "cannot add service '%s'", name);
	PQclear(res);
	return rc;
}

static int text_array(buf *b, const char *const *v, size_t n, pr_error *err);

int db_service_ensure_many(db *d, bool *added, const char *const *names,
			   const char *const *teams, size_t n, pr_error *err)
{
	buf nl = BUF_INIT, tl = BUF_INIT;
	const char *p[3];
	PGresult *res = NULL;
	pr_error bad = PR_ERROR_INIT;
	size_t valid = 0;
	int rc = 0;

	for (size_t i = 0; i < n; i++)
		added[i] = false;
	/*
	 * The services before the first bad name or team go to the server:
	 * one of them that exists with another team is the error, as it was
	 * when each was added in turn; else the bad one is.
	 */
	while (valid < n && service_name_valid(names[valid]) && check_team(teams[valid], &bad) == 0)
		valid++;
	if (valid < n && !bad.code)
		bad_service_name(names[valid], &bad);
	n = valid;
	if (n == 0)
		goto out;
	if ((rc = text_array(&nl, names, n, err)) < 0 || (rc = text_array(&tl, teams, n, err)) < 0)
		goto out;
	p[0] = nl.ptr;
	p[1] = tl.ptr;
	p[2] = d->actor;
	/* The join on services sees the rows as they were before: a new one is absent. */
	if ((rc = run(d, &res, err,
		      "with i as (select u.name, coalesce(u.team, '') as team, u.ord"
		      "   from unnest($1::text[], $2::text[])"
		      "     with ordinality as u(name, team, ord)),"
		      " s as (insert into services (name, team)"
		      "   select name, nullif(team, '') from i order by ord"
		      "   on conflict (name) do nothing returning id, name, team),"
		      " a as (insert into audit_log (actor, action, object, detail)"
		      "   select $3, 'service.add', 'service:' || s.name,"
		      "          jsonb_build_object('id', s.id, 'team', s.team)"
		      "     from s join i on i.name = s.name order by i.ord)"
		      " select s.id is not null, coalesce(x.team, '')"
		      "   from i left join s on s.name = i.name"
		      "   left join services x on x.name = i.name"
		      "  order by i.ord",
		      3, p, "cannot add services")) < 0)
		goto out;
	if ((size_t)PQntuples(res) != n) {
		rc = pr_error_set(err, PR_EDB, "database: cannot add services: %d of %zu answered",
				  PQntuples(res), n);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const char *had = PQgetvalue(res, (int)i, 1), *team = teams[i] ? teams[i] : "";
		if ((added[i] = get_bool(res, (int)i, 0)))
			continue;
		if (strcmp(had, team) != 0) {
			rc = pr_error_set(err, PR_EEXISTS,
					  "service '%s' already exists with team '%s', not '%s' "
					  "(change it with 'profreg service set %s --team %s')",
					  names[i], *had ? had : "(none)", *team ? team : "(none)",
					  names[i], *team ? team : "''");
			goto out;
		}
	}
out:
	if (rc == 0 && bad.code)
		rc = pr_error_set(err, bad.code, "%s", bad.msg);
	if (rc < 0)
		for (size_t i = 0; i < n; i++)
			added[i] = false;
	PQclear(res);
	buf_release(&nl);
	buf_release(&tl);
	return rc;
}

int db_service_set_enabled_many(db *d, const char *const *names, size_t n, bool enabled,
				pr_error *err)
{
	buf nl = BUF_INIT;
	const char *p[3];
	PGresult *res = NULL;
	size_t valid = 0;
	int rc = 0;

	/* Names up to the first that cannot be one: that one is not found, unless one before is. */
	while (valid < n && service_name_valid(names[valid]))
		valid++;
	if (valid > 0) {
		if ((rc = text_array(&nl, names, valid, err)) < 0)
			goto out;
		p[0] = nl.ptr;
		p[1] = enabled ? "t" : "f";
		p[2] = d->actor;
		if ((rc = run(d, &res, err,
			      "with u as (select distinct on (name) name, ord"
			      "   from unnest($1::text[]) with ordinality as u(name, ord)"
			      "   order by name, ord),"
			      " old as (select id, enabled from services"
			      "   where name in (select name from u) for update),"
			      " s as (update services set enabled = $2::boolean, updated_at = now()"
			      "   from old where services.id = old.id"
			      "   returning services.id, services.name, old.enabled as was),"
			      " a as (insert into audit_log (actor, action, object, detail)"
			      "   select $3, case when $2::boolean then 'service.enable'"
			      "          else 'service.disable' end,"
			      "          'service:' || s.name,"
			      "          jsonb_build_object('id', s.id, 'was_enabled', s.was)"
			      "     from s join u on u.name = s.name order by u.ord)"
			      " select u.ord from u where not exists"
			      "   (select 1 from s where s.name = u.name) order by u.ord limit 1",
			      3, p,
			      enabled ? "cannot enable services" : "cannot disable services")) < 0)
			goto out;
		if (PQntuples(res) > 0) {
			long long k = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
			rc = service_not_found(d, names[k >= 1 && (size_t)k <= valid ? k - 1 : 0],
					       err);
			goto out;
		}
	}
	if (valid < n)
		rc = service_not_found(d, names[valid], err);
out:
	PQclear(res);
	buf_release(&nl);
	return rc;
}

int db_service_set_enabled(db *d, const char *name, bool enabled, pr_error *err)
{
	const char *names[1] = {name};

	return db_service_set_enabled_many(d, names, 1, enabled, err);
}

int db_service_set_team(db *d, const char *name, const char *team, pr_error *err)
{
	const char *p[3] = {name, team ? team : "", d->actor};
	PGresult *res = NULL;
	int rc;

	if (!service_name_valid(name))
		return service_not_found(d, name, err);
	if ((rc = check_team(team, err)) < 0)
		return rc;
	if ((rc = run(d, &res, err,
		      "with old as (select id, team from services where name = $1 for update),"
		      " s as (update services set team = nullif($2, ''), updated_at = now()"
		      "       from old where services.id = old.id"
		      "       returning services.id, services.name, old.team as was, services.team)"
		      " insert into audit_log (actor, action, object, detail)"
		      " select $3, 'service.set', 'service:' || s.name,"
		      "        jsonb_build_object('id', s.id, 'team', s.team, 'was_team', s.was)"
		      " from s",
		      3, p, "cannot change a service")) < 0)
		return rc;
	if (strcmp(PQcmdTuples(res), "0") == 0)
		rc = service_not_found(d, name, err);
	PQclear(res);
	return rc;
}

#define SERVICE_COLS "id, name, coalesce(team, ''), enabled, " TS_TO_US("created_at")

static int service_from_row(db_service *s, const PGresult *res, int row)
{
	bool fail = false;

	s->id = get_i64(res, row, 0);
	s->name = get_str(res, row, 1, &fail);
	s->team = get_str(res, row, 2, &fail);
	s->enabled = get_bool(res, row, 3);
	s->created_at_us = get_i64(res, row, 4);
	if (fail) {
		db_service_release(s);
		return PR_ENOMEM;
	}
	return 0;
}

int db_service_get(db *d, db_service *out, const char *name, pr_error *err)
{
	const char *p[1] = {name};
	PGresult *res = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!service_name_valid(name))
		return service_not_found(d, name, err);
	if ((rc = run(d, &res, err, "select " SERVICE_COLS " from services where name = $1",
		      1, p, "cannot read a service")) < 0)
		return rc;
	if (PQntuples(res) == 0)
		rc = service_not_found(d, name, err);
	else if (service_from_row(out, res, 0) < 0)
		rc = oom(err);
	PQclear(res);
	return rc;
}

int db_service_list(db *d, db_service **out, size_t *n, pr_error *err)
{
	PGresult *res = NULL;
	db_service *arr = NULL;
	size_t rows, done = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = run(d, &res, err,
		      "select " SERVICE_COLS " from services order by name collate \"C\"", 0, NULL,
		      "cannot list services")) < 0)
		goto out;
	rows = (size_t)PQntuples(res);
	if (rows == 0)
		goto out;
	if (!(arr = calloc(rows, sizeof(*arr)))) {
		rc = oom(err);
		goto out;
	}
	for (; done < rows; done++)
		if (service_from_row(&arr[done], res, (int)done) < 0) {
			rc = oom(err);
			goto out;
		}
	*out = arr;
	*n = rows;
	arr = NULL;
out:
	if (arr) {
		for (size_t i = 0; i < done; i++)
			db_service_release(&arr[i]);
		free(arr);
	}
	PQclear(res);
	return rc;
}

int db_capture_count(db *d, db_capture_tally *out, int64_t service_id, const char *release,
		     int64_t before_us, int64_t deploy_us, int64_t warmup_us, pr_error *err)
{
	char sid[24];
	num before, deploy, warmup;
	const char *p[5] = {sid, release, before_us ? i64(&before, before_us) : NULL,
			    deploy_us ? i64(&deploy, deploy_us) : NULL,
			    warmup_us > 0 ? i64(&warmup, warmup_us) : NULL};
	PGresult *res = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	snprintf(sid, sizeof(sid), "%" PRId64, service_id);
	if ((rc = run(d, &res, err,
		      "select count(*),"
		      "       count(*) filter (where total_value > 0 and not warming and"
		      "                        ($3::bigint is null or"
		      "                         captured_at < " US_TO_TS("$3") ")),"
		      "       count(*) filter (where total_value > 0 and"
		      "                        captured_at >= " US_TO_TS("$3") "),"
		      "       count(*) filter (where total_value > 0 and warming and"
		      "                        ($3::bigint is null or"
		      "                         captured_at < " US_TO_TS("$3") "))"
		      "  from (select p.total_value, p.captured_at,"
		      "               coalesce($5::bigint > 0 and"
		      "                        (abs(extract(epoch from p.captured_at - "
		      US_TO_TS("$4") ")) * 1000000 < $5::bigint or " DB_WARMUP_SQL("$5") "),"
		      "                        false) warming"
		      "          from profiles p where p.service_id = $1 and p.release = $2"
		      "        offset 0) c",
		      5, p, "cannot count captures")) < 0)
		return rc;
	out->all = get_i64(res, 0, 0);
	out->with_samples = get_i64(res, 0, 1);
	out->later = get_i64(res, 0, 2);
	out->warming = get_i64(res, 0, 3);
	PQclear(res);
	return 0;
}

int db_service_releases(db *d, char ***out, size_t *n, int64_t service_id, pr_error *err)
{
	char sid[24];
	const char *p[1] = {sid};
	PGresult *res = NULL;
	char **arr = NULL;
	size_t rows;
	int rc;

	*out = NULL;
	*n = 0;
	snprintf(sid, sizeof(sid), "%" PRId64, service_id);
	if ((rc = run(d, &res, err,
		      "select release from profiles where service_id = $1 group by release"
		      " order by max(captured_at) desc limit 1000", 1, p,
		      "cannot list a service's releases")) < 0)
		return rc;
	rows = (size_t)PQntuples(res);
	if (rows && !(arr = calloc(rows, sizeof(*arr)))) {
		rc = oom(err);
		goto out;
	}
	for (size_t i = 0; i < rows; i++)
		if (!(arr[i] = strdup(PQgetvalue(res, (int)i, 0)))) {
			db_strings_free(arr, i);
			arr = NULL;
			rc = oom(err);
			goto out;
		}
	*out = arr;
	*n = rows;
out:
	PQclear(res);
	return rc;
}

void db_strings_free(char **s, size_t n)
{
	for (size_t i = 0; s && i < n; i++)
		free(s[i]);
	free(s);
}

/* ---- captures -------------------------------------------------------- */

void db_capture_release(db_capture *c)
{
	if (!c)
		return;
	free(c->service);
	free(c->profile_type);
	free(c->release);
	free(c->commit_sha);
	free(c->host);
	free(c->period_type);
	free(c->period_unit);
	free(c->value_type);
	free(c->value_unit);
	free(c->blob_key);
	free(c->format);
	free(c->retention_class);
	free(c->tags_json);
	memset(c, 0, sizeof(*c));
}

int db_capture_find(db *d, int64_t *id, int64_t service_id, const char *blob_key, pr_error *err)
{
	num sid;
	const char *p[2] = {i64(&sid, service_id), blob_key};
	PGresult *res = NULL;
	char qk[68];
	int rc;

	*id = 0;
	if ((rc = run(d, &res, err,
		      "select id from profiles where service_id = $1 and blob_key = $2", 2, p,
		      "cannot look a capture up")) < 0)
		return rc;
	if (PQntuples(res) == 0)
		rc = pr_error_set(err, PR_ENOTFOUND,
				  "no capture of service %" PRId64 " with blob '%s'", service_id,
				  sanitize(qk, blob_key));
	else
		*id = get_i64(res, 0, 0);
	PQclear(res);
	return rc;
}

/* A text[] literal of n hex strings, which need no quoting: PR_EUSAGE for any other. */
static int hex_array(buf *b, const char *const *keys, size_t n, pr_error *err)
{
	char qk[68];

	if (buf_putc(b, '{') < 0)
		return oom(err);
	for (size_t i = 0; i < n; i++) {
		const char *k = keys[i];
		if (!k || !*k || k[strspn(k, "0123456789abcdefABCDEF")])
			return pr_error_set(err, PR_EUSAGE,
					    "database: cannot look a capture up: blob key '%s' "
					    "is not hex", k ? sanitize(qk, k) : "");
		if ((i && buf_putc(b, ',') < 0) || buf_puts(b, k) < 0)
			return oom(err);
	}
	return buf_putc(b, '}') < 0 ? oom(err) : 0;
}

/* A bigint[] literal of n numbers. */
static int i64_array(buf *b, const int64_t *v, size_t n, pr_error *err)
{
	if (buf_putc(b, '{') < 0)
		return oom(err);
	for (size_t i = 0; i < n; i++)
		if (buf_printf(b, "%s%" PRId64, i ? "," : "", v[i]) < 0)
			return oom(err);
	return buf_putc(b, '}') < 0 ? oom(err) : 0;
}

/*
 * A text[] literal of n strings: each in double quotes with its quotes
 * and backslashes escaped, NULL for a null pointer.
 */
static int text_array(buf *b, const char *const *v, size_t n, pr_error *err)
{
	if (buf_putc(b, '{') < 0)
		return oom(err);
	for (size_t i = 0; i < n; i++) {
		if (i && buf_putc(b, ',') < 0)
			return oom(err);
		if (!v[i]) {
			if (buf_puts(b, "NULL") < 0)
				return oom(err);
			continue;
		}
		if (buf_putc(b, '"') < 0)
			return oom(err);
		for (const char *c = v[i]; *c; c++)
			if (((*c == '"' || *c == '\\') && buf_putc(b, '\\') < 0) ||
			    buf_putc(b, *c) < 0)
				return oom(err);
		if (buf_putc(b, '"') < 0)
			return oom(err);
	}
	return buf_putc(b, '}') < 0 ? oom(err) : 0;
}

/*
 * One index probe per capture (a scalar subquery, so that the planner
 * never scans profiles for a batch it guesses is large).
 */
int db_capture_find_many(db *d, int64_t *ids, const int64_t *service_ids,
			 const char *const *blob_keys, size_t n, pr_error *err)
{
	PGresult *res = NULL;
	buf sids = BUF_INIT, keys = BUF_INIT;
	const char *p[2];
	int rc = 0;

	for (size_t i = 0; i < n; i++)
		ids[i] = 0;
	if (n == 0)
		return 0;
	if ((rc = i64_array(&sids, service_ids, n, err)) < 0 ||
	    (rc = hex_array(&keys, blob_keys, n, err)) < 0)
		goto out;
	p[0] = sids.ptr;
	p[1] = keys.ptr;
	if ((rc = run(d, &res, err,
		      "select k.ord - 1, (select p.id from profiles p"
		      "   where p.service_id = k.sid and p.blob_key = k.key)"
		      " from unnest($1::bigint[], $2::text[]) with ordinality k(sid, key, ord)",
		      2, p, "cannot look captures up")) < 0)
		goto out;
	ids_by_ord(ids, n, res);
out:
	PQclear(res);
	buf_release(&sids);
	buf_release(&keys);
	return rc;
}

int db_capture_blobs_live(db *d, bool *live, const int64_t *ids, size_t n, pr_error *err)
{
	PGresult *res = NULL;
	buf lit = BUF_INIT;
	const char *p[1];
	int rc = 0;

	for (size_t i = 0; i < n; i++)
		live[i] = false;
	if (n == 0)
		return 0;
	if ((rc = i64_array(&lit, ids, n, err)) < 0)
		goto out;
	p[0] = lit.ptr;
	if ((rc = run(d, &res, err,
		      "select k.ord - 1 from unnest($1::bigint[]) with ordinality k(id, ord)"
		      " where exists (select 1 from profiles p where p.id = k.id"
		      "   and p.blob_deleted_at is null)",
		      1, p, "cannot read whether captures keep their blobs")) < 0)
		goto out;
	for (int r = 0; r < PQntuples(res); r++) {
		long long at = strtoll(PQgetvalue(res, r, 0), NULL, 10);
		if (at >= 0 && (size_t)at < n)
			live[at] = true;
	}
out:
	PQclear(res);
	buf_release(&lit);
	return rc;
}

/* ---- deleted_captures (this module's table) ---------------------------- */

int db_deleted_record(db *d, const char *sids_literal, const char *keys_literal,
		      const char *times_literal, pr_error *err)
{
	/* clang-format off */
	static const char sql[] =
		"insert into deleted_captures (service_id, blob_key, captured_at)"
		" select k.sid, k.key, " DB_US_TO_TS("k.us")
		" from unnest($1::bigint[], $2::text[], $3::bigint[]) k(sid, key, us)"
		" on conflict (service_id, blob_key) do update"
		" set captured_at = excluded.captured_at, deleted_at = now(), seen_at = now()";
	/* clang-format on */
	const char *p[3] = {sids_literal, keys_literal, times_literal};
	PGresult *res = NULL;
	int rc = run(d, &res, err, sql, 3, p, "cannot record deleted captures");

	PQclear(res);
	return rc;
}

int db_deleted_find(db *d, int64_t *deleted_us, int64_t *captured_us, const int64_t *service_ids,
		    const char *const *blob_keys, size_t n, pr_error *err)
{
	/* clang-format off */
	static const char sql[] =
		"select k.ord - 1, " DB_TS_TO_US("dc.deleted_at") ","
		" " DB_TS_TO_US("dc.captured_at") ", dc.seen_at < now() - interval '1 day'"
		" from unnest($1::bigint[], $2::text[]) with ordinality k(sid, key, ord)"
		" join deleted_captures dc on dc.service_id = k.sid and dc.blob_key = k.key";
	/* clang-format on */
	/*
	 * Only when a record was met: a look-up that finds none writes
	 * nothing, and a role that may only read still looks up.
	 */
	static const char touch_sql[] = "update deleted_captures dc set seen_at = now()"
					" from unnest($1::bigint[], $2::text[]) k(sid, key)"
					" where dc.service_id = k.sid and dc.blob_key = k.key"
					"   and dc.seen_at < now() - interval '1 day'";
	PGresult *res = NULL;
	buf sids = BUF_INIT, keys = BUF_INIT;
	const char *p[2];
	bool stale = false;
	int rc = 0;

	for (size_t i = 0; i < n; i++)
		deleted_us[i] = captured_us[i] = 0;
	if (n == 0)
		return 0;
	if ((rc = i64_array(&sids, service_ids, n, err)) < 0 ||
	    (rc = hex_array(&keys, blob_keys, n, err)) < 0)
		goto out;
	p[0] = sids.ptr;
	p[1] = keys.ptr;
	if ((rc = run(d, &res, err, sql, 2, p, "cannot look deleted captures up")) < 0)
		goto out;
	for (int r = 0; r < PQntuples(res); r++) {
		int64_t ord = get_i64(res, r, 0);
		if (ord < 0 || (size_t)ord >= n)
			continue;
		deleted_us[ord] = get_i64(res, r, 1);
		captured_us[ord] = get_i64(res, r, 2);
		stale = stale || strcmp(PQgetvalue(res, r, 3), "t") == 0;
	}
	PQclear(res);
	res = NULL;
	if (stale)
		rc = run(d, &res, err, touch_sql, 2, p, "cannot mark deleted captures seen");
out:
	if (rc < 0)
		for (size_t i = 0; i < n; i++)
			deleted_us[i] = captured_us[i] = 0;
	PQclear(res);
	buf_release(&sids);
	buf_release(&keys);
	return rc;
}

int db_deleted_prune(db *d, uint64_t *n, const char *sids_literal, const char *cuts_literal,
		     pr_error *err)
{
	static const char sql[] =
		"with c as (select * from unnest($1::bigint[], $2::bigint[]) c(sid, cut)),"
		" x as (delete from deleted_captures dc using c where dc.service_id = c.sid"
		"   and dc.seen_at < " DB_US_TO_TS("c.cut") " returning 1)"
							    " select count(*) from x";
	const char *p[2] = {sids_literal, cuts_literal};
	PGresult *res = NULL;
	int rc = run(d, &res, err, sql, 2, p, "cannot forget deleted captures");

	*n = rc == 0 && PQntuples(res) ? (uint64_t)get_i64(res, 0, 0) : 0;
	PQclear(res);
	return rc;
}

int db_release_commit_conflicts(db *d, int64_t *ids, const int64_t *service_ids,
				const char *const *releases, const char *const *commits,
				size_t n, pr_error *err)
{
	/* Sorted, so two batches that share releases take their locks in one order. */
	static const char lock_sql[] =
		"select count(pg_advisory_xact_lock(" RELEASE_LOCK_CLASS ", h)) from"
		" (select distinct hashtext(k.sid::text || '/' || k.rel) as h"
		"   from unnest($1::bigint[], $2::text[], $3::text[]) k(sid, rel, cmt)"
		"   where k.cmt is not null order by 1) x";
	/* One names the other when either is a prefix of it: a short and a full SHA. */
	static const char find_sql[] =
		"select k.ord - 1, (select p.id from profiles p"
		"   where p.service_id = k.sid and p.release = k.rel"
		"     and p.commit_sha is not null"
		"     and not starts_with(lower(p.commit_sha), lower(k.cmt))"
		"     and not starts_with(lower(k.cmt), lower(p.commit_sha))"
		"   order by p.id limit 1)"
		" from unnest($1::bigint[], $2::text[], $3::text[]) with ordinality"
		"   k(sid, rel, cmt, ord) where k.cmt is not null";
	PGresult *res[2] = {NULL, NULL};
	db_call calls[2];
	buf sids = BUF_INIT, rels = BUF_INIT, cmts = BUF_INIT;
	const char *p[3];
	bool any = false;
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		ids[i] = 0;
		any = any || commits[i];
	}
	if (!any)
		return 0;
	if (PQtransactionStatus(d->conn) != PQTRANS_INTRANS)
		return pr_error_set(err, PR_EUSAGE, "database: cannot check release commits: "
				    "no transaction is open");
	if ((rc = i64_array(&sids, service_ids, n, err)) < 0 ||
	    (rc = text_array(&rels, releases, n, err)) < 0 ||
	    (rc = text_array(&cmts, commits, n, err)) < 0)
		goto out;
	p[0] = sids.ptr;
	p[1] = rels.ptr;
	p[2] = cmts.ptr;
	/*
	 * The locks first, in a statement of their own: the look-up's snapshot
	 * is taken after them, so it sees every capture a transaction that
	 * held one of them committed. Both go in one round trip.
	 */
	calls[0] = (db_call){"cannot lock releases", lock_sql, 3, p, NULL, NULL, 0};
	calls[1] = (db_call){"cannot look release commits up", find_sql, 3, p, NULL, NULL, 0};
	if ((rc = db_exec_pipeline(d, res, err, calls, 2)) < 0)
		goto out;
	ids_by_ord(ids, n, res[1]);
out:
	PQclear(res[0]);
	PQclear(res[1]);
	buf_release(&sids);
	buf_release(&rels);
	buf_release(&cmts);
	return rc;
}

/* Text-format COPY: backslash, tab, newline and carriage return are escaped. */
static int copy_field(buf *b, const char *s)
{
	const char *run_start = s;
	int rc = 0;

	for (; *s; s++) {
		const char *esc;
		switch (*s) {
		case '\\': esc = "\\\\"; break;
		case '\t': esc = "\\t"; break;
		case '\n': esc = "\\n"; break;
		case '\r': esc = "\\r"; break;
		default: continue;
		}
		if ((rc = buf_put(b, run_start, (size_t)(s - run_start))) < 0 ||
		    (rc = buf_put(b, esc, 2)) < 0)
			return rc;
		run_start = s + 1;
	}
	return buf_put(b, run_start, (size_t)(s - run_start));
}

/* Send what is buffered; on failure the COPY is left for the caller to end. */
static int copy_flush(db *d, buf *b, pr_error *err)
{
	if (b->len && PQputCopyData(d->conn, b->ptr, (int)b->len) != 1)
		return db_fail(d, NULL, err, "cannot send function rows");
	buf_reset(b);
	return 0;
}

/* End a COPY (aborting it when `abort_msg` is set) and collect every result. */
static int copy_finish(db *d, const char *abort_msg, pr_error *err)
{
	PGresult *res;
	int rc = 0;

	if (PQputCopyEnd(d->conn, abort_msg) != 1)
		rc = db_fail(d, NULL, err, "cannot finish sending function rows");
	while ((res = PQgetResult(d->conn))) {
		if (rc == 0 && !res_ok(res))
			rc = db_fail(d, res, err, "cannot store function rows");
		PQclear(res);
	}
	return rc;
}

/*
 * The key `functions` is unique on: SHA-256 of the UTF-8 name, a NUL and
 * the UTF-8 file, exactly what profreg_function_key computes in SQL (the
 * session's client encoding is UTF-8). Hashing here rather than in SQL
 * saves a function call per row on the server, which is most of the cost
 * of a large capture; the count check in capture_insert_tx catches any
 * disagreement between the two.
 */
#define SHA256_LEN 32

static int function_key(EVP_MD_CTX *ctx, unsigned char key[SHA256_LEN], const char *name,
			const char *file)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	if (!EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) ||
	    !EVP_DigestUpdate(ctx, name, strlen(name) + 1) ||
	    !EVP_DigestUpdate(ctx, file, strlen(file)) || !EVP_DigestFinal_ex(ctx, md, &n) ||
	    n != SHA256_LEN)
		return PR_ERR;
	memcpy(key, md, SHA256_LEN);
	return 0;
}

/* The distinct functions of a batch: their keys in first-seen order, and each row's index. */
typedef struct fn_set {
	strmap map;           /* name, NUL, file (the bytes the key hashes) -> index */
	const char **name;    /* per index: the profile's strings */
	const char **file;
	unsigned char (*key)[SHA256_LEN]; /* per index: the key's bytes */
	int64_t *id;          /* per index: functions.id, once known */
	size_t n, cap;
	uint32_t **row;       /* per capture: the index of each summary row */
} fn_set;

static void fn_set_release(fn_set *fs, size_t ncaptures)
{
	strmap_release(&fs->map);
	free(fs->name);
	free(fs->file);
	free(fs->key);
	free(fs->id);
	if (fs->row)
		for (size_t c = 0; c < ncaptures; c++)
			free(fs->row[c]);
	free(fs->row);
	memset(fs, 0, sizeof(*fs));
}

/* Key every summary row of the captures with ids[c] != 0 and collect the distinct functions. */
static int fn_set_build(fn_set *fs, const int64_t *ids, const profile *const *ps,
			const profile_summary *const *sums, size_t n, pr_error *err)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	buf nf = BUF_INIT;
	unsigned char key[SHA256_LEN];
	int rc = 0;

	strmap_init(&fs->map);
	if (!ctx || !(fs->row = calloc(n, sizeof(*fs->row)))) {
		rc = oom(err);
		goto out;
	}
	for (size_t c = 0; c < n; c++) {
		const profile *p = ps[c];
		const profile_summary *s = sums[c];

		if (!ids[c] || !s->nrows)
			continue;
		if (!(fs->row[c] = malloc(s->nrows * sizeof(*fs->row[c])))) {
			rc = oom(err);
			goto out;
		}
		for (size_t i = 0; i < s->nrows; i++) {
			const profile_summary_row *r = &s->rows[i];
			const profile_func *f;
			const char *file;
			uint32_t idx;
			int put;

			if (r->func >= p->nfuncs) {
				rc = pr_error_set(err, PR_EUSAGE,
						  "database: cannot insert a capture: summary "
						  "row %zu names function %" PRIu32
						  " of %" PRIu32, i, r->func, p->nfuncs);
				goto out;
			}
			f = &p->funcs[r->func];
			file = f->file ? f->file : "";
			/* The key hashes exactly these bytes: hash each distinct one once. */
			buf_reset(&nf);
			if (buf_put(&nf, f->name, strlen(f->name) + 1) < 0 ||
			    buf_put(&nf, file, strlen(file)) < 0) {
				rc = oom(err);
				goto out;
			}
			if (strmap_get(&fs->map, nf.ptr, nf.len, &idx)) {
				fs->row[c][i] = idx;
				continue;
			}
			if (function_key(ctx, key, f->name, file) < 0) {
				rc = pr_error_set(err, PR_ERR,
						  "database: cannot hash a function name");
				goto out;
			}
			if (fs->n == fs->cap) {
				size_t cap = fs->cap ? 2 * fs->cap : 1024;
				const char **nn = realloc(fs->name, cap * sizeof(*nn));
				if (nn)
					fs->name = nn;
				const char **nf = nn ? realloc(fs->file, cap * sizeof(*nf)) : NULL;
				if (nf)
					fs->file = nf;
				int64_t *ni = nf ? realloc(fs->id, cap * sizeof(*ni)) : NULL;
				if (ni)
					fs->id = ni;
				unsigned char (*nk)[SHA256_LEN] =
					ni ? realloc(fs->key, cap * sizeof(*nk)) : NULL;
				if (!nk) {
					rc = oom(err);
					goto out;
				}
				fs->key = nk;
				fs->cap = cap;
			}
			put = strmap_put(&fs->map, nf.ptr, nf.len, (uint32_t)fs->n, &idx, NULL);
			if (put < 0) {
				rc = oom(err);
				goto out;
			}
			if (put == 1) {
				fs->name[fs->n] = f->name;
				fs->file[fs->n] = file;
				memcpy(fs->key[fs->n], key, sizeof(key));
				fs->id[fs->n] = 0;
				fs->n++;
			}
			fs->row[c][i] = idx;
		}
	}
out:
	buf_release(&nf);
	EVP_MD_CTX_free(ctx);
	return rc;
}

#define PG_BYTEA_OID 17

static int put_be(buf *b, uint64_t v, size_t n);
static int put_array_header(buf *b, uint32_t oid, size_t n, bool nulls);

/* The batch's keys as one bytea[] in PostgreSQL's binary form, 32 bytes each. */
static int keys_bytea_array(buf *b, const fn_set *fs)
{
	if (buf_reserve(b, 20 + fs->n * (4 + SHA256_LEN)) < 0 ||
	    put_array_header(b, PG_BYTEA_OID, fs->n, false) < 0)
		return PR_ENOMEM;
	for (size_t i = 0; i < fs->n; i++)
		if (put_be(b, SHA256_LEN, 4) < 0 || buf_put(b, fs->key[i], SHA256_LEN) < 0)
			return PR_ENOMEM;
	return 0;
}

/*
 * Learn the ids of the batch's functions that are already interned, in
 * one round trip: every key as one bytea[] in binary (the server took
 * 12 ms to parse a text[] of 5,000 hex keys, 5 ms for the same keys in
 * binary), one index probe each (a scalar subquery, so that the planner
 * never hashes the whole table instead). Most functions of a service's
 * capture were seen before, so this is usually all there is to do.
 * *missing is how many have no id yet.
 */
static int fn_set_lookup(db *d, fn_set *fs, size_t *missing, pr_error *err)
{
	PGresult *res = NULL;
	const char *params[1];
	int lengths[1], formats[1] = {1};
	buf keys = BUF_INIT;
	int rc = 0;

	*missing = 0;
	if ((rc = keys_bytea_array(&keys, fs)) < 0) {
		rc = oom(err);
		goto out;
	}
	if (keys.len > INT_MAX) {
		rc = pr_error_set(err, PR_ELIMIT,
				  "cannot read function ids: %zu functions in one batch", fs->n);
		goto out;
	}
	params[0] = keys.ptr;
	lengths[0] = (int)keys.len;
	if ((rc = db_exec_repeat_bin(d, &res, err, "cannot read function ids",
				     "select k.ord - 1,"
				     " (select f.id from functions f where f.key = k.key)"
				     " from unnest($1::bytea[]) with ordinality k(key, ord)",
				     1, params, lengths, formats)) < 0)
		goto out;
	ids_by_ord(fs->id, fs->n, res);
	for (size_t i = 0; i < fs->n; i++)
		if (fs->id[i] <= 0)
			(*missing)++;
out:
	PQclear(res);
	buf_release(&keys);
	return rc;
}

/* A key as 64 lowercase hex digits. */
static int put_hex(buf *b, const unsigned char key[SHA256_LEN])
{
	static const char digits[] = "0123456789abcdef";
	char hex[2 * SHA256_LEN];

	for (size_t i = 0; i < SHA256_LEN; i++) {
		hex[2 * i] = digits[key[i] >> 4];
		hex[2 * i + 1] = digits[key[i] & 15];
	}
	return buf_put(b, hex, sizeof(hex));
}

/*
 * Intern the functions fn_set_lookup found no id for and learn their ids:
 * they go to the session's scratch table (created once per session; it
 * survives commits, a rollback of the transaction that created it drops
 * it, and the next call creates it again), what is still new is inserted
 * in key order (two ingests adding the same new functions wait for each
 * other instead of deadlocking), then one index probe per function reads
 * the ids.
 */
static int fn_set_insert_new(db *d, fn_set *fs, pr_error *err)
{
	PGresult *res = NULL;
	buf b = BUF_INIT;
	bool copying = false;
	int rc = 0;

	if ((rc = run_plain(d, err,
			    "create temp table if not exists profreg_batch_functions ("
			    " ord int not null, name text not null, file text not null,"
			    " key bytea not null) on commit delete rows;"
			    " delete from profreg_batch_functions",
			    "cannot prepare function rows")) < 0)
		goto out;
	res = PQexec(d->conn, "copy profreg_batch_functions (ord, name, file, key) from stdin");
	if (!res || PQresultStatus(res) != PGRES_COPY_IN) {
		rc = db_fail(d, res, err, "cannot send function rows");
		goto out;
	}
	PQclear(res);
	res = NULL;
	copying = true;
	for (size_t i = 0; i < fs->n; i++) {
		if (fs->id[i] > 0)
			continue;
		/* bytea's text form is \x<hex>; COPY wants its backslash doubled. */
		if ((rc = buf_printf(&b, "%zu\t", i)) < 0 ||
		    (rc = copy_field(&b, fs->name[i])) < 0 ||
		    (rc = buf_putc(&b, '\t')) < 0 || (rc = copy_field(&b, fs->file[i])) < 0 ||
		    (rc = buf_puts(&b, "\t\\\\x")) < 0 || (rc = put_hex(&b, fs->key[i])) < 0 ||
		    (rc = buf_putc(&b, '\n')) < 0) {
			rc = oom(err);
			goto out;
		}
		if (b.len >= COPY_CHUNK && (rc = copy_flush(d, &b, err)) < 0)
			goto out;
	}
	if ((rc = copy_flush(d, &b, err)) < 0)
		goto out;
	copying = false;
	if ((rc = copy_finish(d, NULL, err)) < 0)
		goto out;
	if ((rc = run_plain(d, err,
			    "insert into functions (name, file)"
			    " select t.name, t.file from profreg_batch_functions t"
			    " where not exists (select 1 from functions f where f.key = t.key)"
			    " order by t.key"
			    " on conflict (key) do nothing",
			    "cannot intern function names")) < 0)
		goto out;
	if ((rc = run(d, &res, err,
		      "select t.ord, (select f.id from functions f where f.key = t.key)"
		      " from profreg_batch_functions t",
		      0, NULL, "cannot read function ids")) < 0)
		goto out;
	ids_by_ord(fs->id, fs->n, res);
out:
	PQclear(res);
	buf_release(&b);
	if (copying) {
		int frc = copy_finish(d, rc < 0 ? "profreg abandoned the copy" : NULL, err);
		if (rc == 0)
			rc = frc;
	}
	return rc;
}

/* Intern the batch's functions and learn every one's id. */
static int fn_set_intern(db *d, fn_set *fs, pr_error *err)
{
	size_t missing = 0;
	int rc;

	if ((rc = fn_set_lookup(d, fs, &missing, err)) < 0 ||
	    (missing && (rc = fn_set_insert_new(d, fs, err)) < 0))
		return rc;
	/* Every row must find its function; a silent gap would skew every baseline. */
	for (size_t i = 0; i < fs->n; i++)
		if (fs->id[i] <= 0)
			return pr_error_set(err, PR_EDB,
					    "database: cannot insert function rows: function "
					    "%zu of %zu has no id", i, fs->n);
	return 0;
}

/* Binary COPY: every number big-endian, every field behind its length. */
static int put_be(buf *b, uint64_t v, size_t n)
{
	char o[8];

	for (size_t i = 0; i < n; i++)
		o[i] = (char)(v >> (8 * (n - 1 - i)));
	return buf_put(b, o, n);
}

static int put_i64_field(buf *b, int64_t v)
{
	return put_be(b, 8, 4) < 0 ? -1 : put_be(b, (uint64_t)v, 8);
}

/* A summary row's place and its function's id, to send a capture's rows by id. */
typedef struct row_order {
	int64_t id;
	size_t row;
} row_order;

/*
 * Sort o[0..n) by id, with room for n in tmp: runs of 8 by insertion,
 * then merged. A capture's rows are distinct functions, so no two ids are
 * equal and any sort gives the same order; qsort's, with a call through
 * a pointer for each comparison, was 1.5% of an ingest.
 */
static void sort_by_id(row_order *o, row_order *tmp, size_t n)
{
	row_order *src = o, *dst = tmp, *t;

	for (size_t lo = 0; lo < n; lo += 8) {
		size_t hi = n - lo > 8 ? lo + 8 : n;
		for (size_t i = lo + 1; i < hi; i++) {
			row_order r = o[i];
			size_t j = i;
			for (; j > lo && r.id < o[j - 1].id; j--)
				o[j] = o[j - 1];
			o[j] = r;
		}
	}
	for (size_t w = 8; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = n - lo > w ? lo + w : n, hi = n - mid > w ? mid + w : n;
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				dst[k++] = src[j].id < src[i].id ? src[j++] : src[i++];
			while (i < mid)
				dst[k++] = src[i++];
			while (j < hi)
				dst[k++] = src[j++];
		}
		t = src;
		src = dst;
		dst = t;
	}
	if (src != o)
		memcpy(o, src, n * sizeof(*o));
}

#define PG_INT8_OID 20

#define PG_FLOAT8_OID 701

/*
 * The header of an array in PostgreSQL's binary form: one dimension from
 * 1 of n elements of type `oid`, or no dimension at all when n is 0 (as
 * the server writes an empty array).
 */
static int put_array_header(buf *b, uint32_t oid, size_t n, bool nulls)
{
	if (put_be(b, n > 0, 4) < 0 || put_be(b, nulls, 4) < 0 || put_be(b, oid, 4) < 0)
		return -1;
	if (n > 0 && (put_be(b, n, 4) < 0 || put_be(b, 1, 4) < 0))
		return -1;
	return 0;
}

/* Element i of values `stride` bytes apart from `first`. */
static double double_at(const double *first, size_t i, size_t stride)
{
	double v;

	memcpy(&v, (const char *)first + i * stride, sizeof(v));
	return v;
}

/*
 * Write v big-endian in n bytes at o, for a loop that made room for all
 * its bytes at once (buf_grow) and counts them when done (put_end): a
 * buf_put of each 4 and 8 bytes of a capture's function rows was a
 * quarter of the work of sending them.
 */
static char *be_at(char *o, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		o[i] = (char)(v >> (8 * (n - 1 - i)));
	return o + n;
}

/* The bytes written in place up to `end` are b's, with its NUL after them. */
static void put_end(buf *b, char *end)
{
	b->len = (size_t)(end - b->ptr);
	b->ptr[b->len] = '\0';
}

int db_int8_array_bin(buf *b, const int64_t *first, size_t n, size_t stride)
{
	char *o;

	if (put_array_header(b, PG_INT8_OID, n, false) < 0 ||
	    (n && (n > SIZE_MAX / 12 || buf_grow(b, 12 * n) < 0)))
		return PR_ENOMEM;
	o = b->ptr + b->len;
	for (size_t i = 0; i < n; i++) {
		int64_t v;
		memcpy(&v, (const char *)first + i * stride, sizeof(v));
		o = be_at(be_at(o, 8, 4), (uint64_t)v, 8);
	}
	if (n)
		put_end(b, o);
	return 0;
}

int db_float8_array_bin(buf *b, const double *first, size_t n, size_t stride)
{
	bool nulls = false;

	for (size_t i = 0; i < n && !nulls; i++)
		nulls = isnan(double_at(first, i, stride));
	if (put_array_header(b, PG_FLOAT8_OID, n, nulls) < 0)
		return PR_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		double v = double_at(first, i, stride);
		uint64_t bits;
		memcpy(&bits, &v, sizeof(bits));
		/* An unknown value is a NULL element: length -1 and nothing after. */
		if (isnan(v) ? put_be(b, 0xffffffffu, 4) < 0
			     : put_be(b, 8, 4) < 0 || put_be(b, bits, 8) < 0)
			return PR_ENOMEM;
	}
	return 0;
}

/* One bigint[] field of binary COPY: its length, then the array (db_int8_array_bin). */
static int put_int8_array(buf *b, const int64_t *v, size_t n)
{
	if (put_be(b, n ? 20 + 12 * (uint64_t)n : 12, 4) < 0 ||
	    db_int8_array_bin(b, v, n, sizeof(*v)) < 0)
		return -1;
	return 0;
}

/* One bytea field of binary COPY: each id, then its value, as big-endian int8. */
static int put_pairs(buf *b, const int64_t *ids, const int64_t *v, size_t n)
{
	char *o;

	if (put_be(b, 16 * (uint64_t)n, 4) < 0 ||
	    (n && (n > SIZE_MAX / 16 || buf_grow(b, 16 * n) < 0)))
		return -1;
	o = b->ptr + b->len;
	for (size_t i = 0; i < n; i++)
		o = be_at(be_at(o, (uint64_t)ids[i], 8), (uint64_t)v[i], 8);
	if (n)
		put_end(b, o);
	return 0;
}

/*
 * Where the function rows are copied to. PostgreSQL refuses COPY FROM
 * into a table whose row security applies to the session (a team or job
 * role, docs/access.md), so such a session copies into a temporary table
 * and inserts from it, under the table's policies; the owner copies
 * straight in. Asked once per session.
 */
static int vectors_target(db *d, const char **table, pr_error *err)
{
	PGresult *res = NULL;
	int rc;

	if (!d->vectors_rls) {
		if ((rc = run(d, &res, err, "select row_security_active('profile_vectors')", 0,
			      NULL, "cannot ask about row security")) < 0)
			return rc;
		d->vectors_rls = strcmp(PQgetvalue(res, 0, 0), "t") == 0 ? 2 : 1;
		PQclear(res);
	}
	*table = "profile_vectors";
	if (d->vectors_rls == 1)
		return 0;
	*table = "profreg_stage_vectors";
	return run_plain(d, err,
			 "create temp table if not exists profreg_stage_vectors"
			 " (like profile_vectors) on commit delete rows;"
			 " delete from profreg_stage_vectors",
			 "cannot prepare function rows");
}

#define VECTOR_COLS "profile_id, service_id, function_ids, self_values, total_values, self_pairs"

/*
 * COPY one row of profile_vectors per capture with ids[c] != 0 and at
 * least one function, in COPY's binary format (the server converts no
 * text): the function ids in ascending order, and each one's self and
 * total value at the same place; the ids and self values again as pairs
 * (migration 026). want is how many rows that makes. A session under row
 * security goes through a temporary table (vectors_target).
 */
static int copy_profile_vectors(db *d, const fn_set *fs, const int64_t *ids,
				const db_capture *metas, const profile_summary *const *sums,
				size_t n, int64_t want, pr_error *err)
{
	static const char header[] = "PGCOPY\n\377\r\n\0\0\0\0\0\0\0\0\0";
	PGresult *res = NULL;
	buf b = BUF_INIT, sql = BUF_INIT;
	const char *table = NULL;
	row_order *order = NULL;
	int64_t *vals = NULL;
	size_t most = 0;
	bool copying = false;
	int rc = 0;

	for (size_t c = 0; c < n; c++)
		if (ids[c] && sums[c]->nrows > most)
			most = sums[c]->nrows;
	if (!most)
		most = 1;
	if (!(order = malloc(2 * most * sizeof(*order))) ||
	    !(vals = malloc(3 * most * sizeof(*vals)))) {
		rc = oom(err);
		goto out;
	}
	if ((rc = vectors_target(d, &table, err)) < 0)
		goto out;
	if (buf_printf(&sql, "copy %s (" VECTOR_COLS ") from stdin (format binary)", table) < 0) {
		rc = oom(err);
		goto out;
	}
	res = PQexec(d->conn, sql.ptr);
	if (!res || PQresultStatus(res) != PGRES_COPY_IN) {
		rc = db_fail(d, res, err, "cannot send function rows");
		goto out;
	}
	PQclear(res);
	res = NULL;
	copying = true;
	if (buf_put(&b, header, sizeof(header) - 1) < 0) {
		rc = oom(err);
		goto out;
	}
	for (size_t c = 0; c < n; c++) {
		const profile_summary *s = sums[c];
		size_t m = s->nrows;

		if (!ids[c] || !m)
			continue;
		for (size_t i = 0; i < m; i++) {
			order[i].id = fs->id[fs->row[c][i]];
			order[i].row = i;
		}
		sort_by_id(order, order + most, m);
		for (size_t k = 0; k < m; k++) {
			vals[k] = order[k].id;
			vals[most + k] = s->rows[order[k].row].self;
			vals[2 * most + k] = s->rows[order[k].row].total;
		}
		if (put_be(&b, 6, 2) < 0 || put_i64_field(&b, ids[c]) < 0 ||
		    put_i64_field(&b, metas[c].service_id) < 0 ||
		    put_int8_array(&b, vals, m) < 0 || put_int8_array(&b, vals + most, m) < 0 ||
		    put_int8_array(&b, vals + 2 * most, m) < 0 ||
		    put_pairs(&b, vals, vals + most, m) < 0) {
			rc = oom(err);
			goto out;
		}
		if (b.len >= COPY_CHUNK && (rc = copy_flush(d, &b, err)) < 0)
			goto out;
	}
	if (put_be(&b, 0xffff, 2) < 0) { /* the trailer: a field count of -1 */
		rc = oom(err);
		goto out;
	}
	if ((rc = copy_flush(d, &b, err)) < 0)
		goto out;
	copying = false;
	if (PQputCopyEnd(d->conn, NULL) != 1) {
		rc = db_fail(d, NULL, err, "cannot finish sending function rows");
		goto out;
	}
	while ((res = PQgetResult(d->conn))) {
		if (rc == 0 && !res_ok(res))
			rc = db_fail(d, res, err, "cannot store function rows");
		else if (rc == 0 && strtoll(PQcmdTuples(res), NULL, 10) != want)
			rc = pr_error_set(err, PR_EDB,
					  "database: cannot insert function rows: those of %s "
					  "of %" PRId64 " captures stored",
					  PQcmdTuples(res), want);
		PQclear(res);
	}
	res = NULL;
	if (rc == 0 && strcmp(table, "profile_vectors") != 0) {
		/* Staged: the rows go in under the table's policies. */
		if ((rc = run(d, &res, err, "insert into profile_vectors (" VECTOR_COLS ")"
			      " select " VECTOR_COLS " from profreg_stage_vectors", 0, NULL,
			      "cannot store function rows")) < 0)
			goto out;
		if (strtoll(PQcmdTuples(res), NULL, 10) != want)
			rc = pr_error_set(err, PR_EDB, "database: cannot insert function rows: "
					  "those of %s of %" PRId64 " captures stored",
					  PQcmdTuples(res), want);
	}
out:
	PQclear(res);
	buf_release(&sql);
	buf_release(&b);
	free(order);
	free(vals);
	if (copying) {
		int frc = copy_finish(d, "profreg abandoned the copy", err);
		if (rc == 0)
			rc = frc;
	}
	return rc;
}

/*
 * Record which functions the services of the captures with ids[c] != 0
 * use (service_functions, migration 033): the batch's pairs in one
 * statement, as two bigint[] in binary. A pair already there costs an
 * index probe, and most are: a service's captures use much the same
 * functions every night. A function is sent again only when another
 * service's capture came between (seen holds the last service of each):
 * a manifest's captures come service by service, and the few repeats
 * cost less than sorting every pair on the writing thread. The server
 * inserts them in key order, as functions are interned: two ingests of
 * one service's captures take the same pairs' locks in the same order,
 * and cannot deadlock.
 */
static int record_service_functions(db *d, const fn_set *fs, const int64_t *ids,
				    const db_capture *metas, const profile_summary *const *sums,
				    size_t n, pr_error *err)
{
	int64_t *seen = NULL;
	buf fa = BUF_INIT, sa = BUF_INIT, fids = BUF_INIT, sids = BUF_INIT;
	const char *params[2];
	int lengths[2], formats[2] = {1, 1};
	size_t m = 0;
	int rc = 0;

	if (!fs->n)
		return 0;
	if (!(seen = calloc(fs->n, sizeof(*seen)))) {
		rc = oom(err);
		goto out;
	}
	for (size_t c = 0; c < n; c++) {
		int64_t sid = metas[c].service_id;
		if (!ids[c])
			continue;
		for (size_t i = 0; i < sums[c]->nrows; i++) {
			uint32_t k = fs->row[c][i];
			if (seen[k] == sid)
				continue;
			seen[k] = sid;
			if (buf_put(&fids, &fs->id[k], sizeof(int64_t)) < 0 ||
			    buf_put(&sids, &sid, sizeof(sid)) < 0) {
				rc = oom(err);
				goto out;
			}
			m++;
		}
	}
	if (!m)
		goto out;
	if (db_int8_array_bin(&fa, (const int64_t *)(void *)fids.ptr, m, sizeof(int64_t)) < 0 ||
	    db_int8_array_bin(&sa, (const int64_t *)(void *)sids.ptr, m, sizeof(int64_t)) < 0) {
		rc = oom(err);
		goto out;
	}
	if (fa.len > INT_MAX || sa.len > INT_MAX) {
		rc = pr_error_set(err, PR_ELIMIT, "cannot record the functions of services: "
				  "%zu pairs in one batch", m);
		goto out;
	}
	params[0] = fa.ptr;
	params[1] = sa.ptr;
	lengths[0] = (int)fa.len;
	lengths[1] = (int)sa.len;
	rc = db_exec_repeat_bin(d, NULL, err, "cannot record the functions of services",
				"insert into service_functions (function_id, service_id)"
				" select * from unnest($1::bigint[], $2::bigint[]) order by 1, 2"
				" on conflict do nothing",
				2, params, lengths, formats);
out:
	free(seen);
	buf_release(&fa);
	buf_release(&sa);
	buf_release(&fids);
	buf_release(&sids);
	return rc;
}

static int missing_field(const char *field, pr_error *err)
{
	return pr_error_set(err, PR_EUSAGE, "database: cannot insert a capture: %s is missing",
			    field);
}

/* What db_capture_insert requires of one capture. */
static int check_capture(const db_capture *meta, const profile *p, const profile_summary *s,
			 pr_error *err)
{
	if (!meta->profile_type)
		return missing_field("the profile type", err);
	if (!meta->release)
		return missing_field("the release", err);
	if (!meta->value_type || !meta->value_unit)
		return missing_field("the value type", err);
	if (!meta->blob_key)
		return missing_field("the blob key", err);
	if (!meta->format)
		return missing_field("the format", err);
	if (!meta->captured_at_us)
		return missing_field("the capture time", err);
	if (!s)
		return missing_field("the summary", err);
	if (s->nrows && !p)
		return missing_field("the profile", err);
	if (s->nrows > INT32_MAX)
		return pr_error_set(err, PR_ELIMIT,
				    "database: cannot insert a capture: %zu functions", s->nrows);
	return 0;
}

#define CAPTURE_INSERT_SQL \
	"insert into profiles (service_id, profile_type, release, commit_sha, host," \
	" captured_at, duration_ns, period, period_type, period_unit, value_type, value_unit," \
	" total_value, sample_count, function_count, blob_key, blob_bytes, format," \
	" retention_class, retain_until, tags)" \
	" values ($1, $2, $3, $4, $5, " US_TO_TS("$6") ", $7, $8, $9, $10, $11, $12," \
	" $13, $14, $15, $16, $17, $18, $19, " US_TO_TS("$20") "," \
	" coalesce($21::jsonb, '{}'))"

/* Prepare the two capture inserts, once per session. */
static int prepare_capture(db *d, pr_error *err)
{
	static const char *const sql[2] = {
		CAPTURE_INSERT_SQL " returning id",
		CAPTURE_INSERT_SQL " on conflict (service_id, blob_key) do nothing"
		" returning id",
	};
	static const char *const name[2] = {"profreg_capture_insert", "profreg_capture_skip"};
	PGresult *res = NULL;

	if (d->prepared_capture)
		return 0;
	for (int i = 0; i < 2; i++) {
		res = PQprepare(d->conn, name[i], sql[i], 21, NULL);
		if (!res_ok(res)) {
			int rc = db_fail(d, res, err, "cannot prepare the capture insert");
			PQclear(res);
			return rc;
		}
		PQclear(res);
	}
	d->prepared_capture = true;
	return 0;
}

/* The parameters of a capture's insert, pointing into m, s and v. */
typedef struct capture_params {
	num v[9];
	const char *p[21];
} capture_params;

static void capture_params_fill(capture_params *cp, const db_capture *m,
				const profile_summary *s)
{
	const char **ins = cp->p;
	num *v = cp->v;

	ins[0] = i64(&v[0], m->service_id);
	ins[1] = m->profile_type;
	ins[2] = m->release;
	ins[3] = m->commit_sha && *m->commit_sha ? m->commit_sha : NULL;
	ins[4] = m->host && *m->host ? m->host : NULL;
	ins[5] = i64(&v[1], m->captured_at_us);
	ins[6] = m->duration_ns ? i64(&v[2], m->duration_ns) : NULL;
	ins[7] = m->period ? i64(&v[3], m->period) : NULL;
	ins[8] = m->period_type;
	ins[9] = m->period_unit;
	ins[10] = m->value_type;
	ins[11] = m->value_unit;
	ins[12] = i64(&v[4], s->total);
	ins[13] = i64(&v[5], s->sample_count);
	ins[14] = i64(&v[6], (int64_t)s->nrows);
	ins[15] = m->blob_key;
	ins[16] = i64(&v[7], m->blob_bytes);
	ins[17] = m->format;
	ins[18] = m->retention_class ? m->retention_class : "hot";
	ins[19] = m->retain_until_us ? i64(&v[8], m->retain_until_us) : NULL;
	ins[20] = m->tags_json;
}

/* What a capture's insert returned: *id (0 when skipped), or why it failed. */
static int capture_result(db *d, int64_t *id, const PGresult *res, const db_capture *m,
			  pr_error *err)
{
	char qk[68];
	num sid;

	*id = 0;
	if (strcmp(sqlstate(res), "23505") == 0)
		return pr_error_set(err, PR_EEXISTS,
				    "capture of service '%s' with blob '%s' already exists",
				    m->service ? m->service : i64(&sid, m->service_id),
				    sanitize(qk, m->blob_key));
	if (strcmp(sqlstate(res), "23503") == 0)
		return pr_error_set(err, PR_ENOTFOUND, "service %" PRId64 " not found",
				    m->service_id);
	if (!res_ok(res))
		return db_fail_input(d, res, err, "cannot insert a capture");
	if (PQntuples(res) > 0)
		*id = get_i64(res, 0, 0);
	return 0;
}

/* One element of a text[] literal: NULL, or quoted with '"' and '\' escaped. */
static int array_elem(buf *b, const char *s)
{
	int rc = 0;

	if (!s)
		return buf_puts(b, "NULL");
	if ((rc = buf_putc(b, '"')) < 0)
		return rc;
	for (; *s && rc == 0; s++)
		rc = (*s == '"' || *s == '\\') ? buf_printf(b, "\\%c", *s) : buf_putc(b, *s);
	return rc < 0 ? rc : buf_putc(b, '"');
}

/*
 * Many captures' rows in one statement: each column goes as one text[]
 * parameter and the server unnests them in order, so the ids rise in the
 * order of the captures. A statement a capture cost the server more than
 * the rows themselves: 1,280 captures in batches of 64 took 140-148 ms
 * of the server's time one by one, 54-62 ms as one insert a batch. The
 * rows come back by service and key, which a batch holds once each (the
 * caller dedups them); a second row with a pair already stored or
 * earlier in the batch is skipped and keeps id 0.
 */
#define CAPTURE_BATCH_SQL(onconflict) \
	"insert into profiles (service_id, profile_type, release, commit_sha, host," \
	" captured_at, duration_ns, period, period_type, period_unit, value_type, value_unit," \
	" total_value, sample_count, function_count, blob_key, blob_bytes, format," \
	" retention_class, retain_until, tags)" \
	" select u.c1::bigint, u.c2, u.c3, u.c4, u.c5, " US_TO_TS("u.c6") ", u.c7::bigint," \
	" u.c8::bigint, u.c9, u.c10, u.c11, u.c12, u.c13::bigint, u.c14::bigint, u.c15::int," \
	" u.c16, u.c17::bigint, u.c18, u.c19, " US_TO_TS("u.c20") ", coalesce(u.c21::jsonb, '{}')" \
	" from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[]," \
	" $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[]," \
	" $14::text[], $15::text[], $16::text[], $17::text[], $18::text[], $19::text[]," \
	" $20::text[], $21::text[]) with ordinality" \
	" as u(c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, c17, c18," \
	" c19, c20, c21, ord)" \
	" order by u.ord" onconflict " returning id, service_id, blob_key"

static int insert_capture_batch(db *d, int64_t *ids, const db_capture *metas,
				const profile_summary *const *sums, size_t n,
				bool skip_existing, pr_error *err)
{
	static const char *const sql[2] = {
		CAPTURE_BATCH_SQL(""),
		CAPTURE_BATCH_SQL(" on conflict (service_id, blob_key) do nothing"),
	};
	buf col[21];
	const char *params[21];
	capture_params cp;
	PGresult *res = NULL;
	int rc = 0;

	for (int c = 0; c < 21; c++)
		col[c] = (buf)BUF_INIT;
	for (size_t i = 0; i < n && rc == 0; i++) {
		capture_params_fill(&cp, &metas[i], sums[i]);
		for (int c = 0; c < 21 && rc == 0; c++)
			if ((rc = buf_putc(&col[c], i ? ',' : '{')) == 0)
				rc = array_elem(&col[c], cp.p[c]);
	}
	for (int c = 0; c < 21 && rc == 0; c++)
		rc = buf_putc(&col[c], '}');
	if (rc < 0) {
		rc = oom(err);
		goto out;
	}
	for (int c = 0; c < 21; c++)
		params[c] = col[c].ptr;
	res = q(d, sql[skip_existing], 21, params);
	if (!res_ok(res)) {
		rc = db_fail_input(d, res, err, "cannot insert %zu captures", n);
		goto out;
	}
	for (int r = 0; r < PQntuples(res); r++) {
		int64_t id = get_i64(res, r, 0), sid = get_i64(res, r, 1);
		const char *key = PQgetvalue(res, r, 2);
		size_t i = 0;

		while (i < n && (ids[i] || metas[i].service_id != sid ||
				 strcmp(metas[i].blob_key, key) != 0))
			i++;
		if (i == n) {
			rc = pr_error_set(err, PR_EDB, "database: cannot insert captures: the "
					  "server returned a row for blob '%.64s' not sent", key);
			goto out;
		}
		ids[i] = id;
	}
out:
	PQclear(res);
	for (int c = 0; c < 21; c++)
		buf_release(&col[c]);
	return rc;
}

/*
 * The captures' rows. With `skip_existing`, a row with the same service
 * and blob key (committed, or written earlier in this transaction) leaves
 * ids[i] 0; without, it is PR_EEXISTS. One capture goes by a statement
 * prepared once per session, which names the failure exactly; more go
 * in one statement (insert_capture_batch), and when that fails the
 * caller can try them one by one to learn which.
 */
static int insert_capture_rows(db *d, int64_t *ids, const db_capture *metas,
			       const profile_summary *const *sums, size_t n, bool skip_existing,
			       pr_error *err)
{
	const char *stmt = skip_existing ? "profreg_capture_skip" : "profreg_capture_insert";
	capture_params cp;
	PGresult *res = NULL;
	int rc = 0;

	for (size_t i = 0; i < n; i++)
		ids[i] = 0;
	if (n > 1) {
		rc = insert_capture_batch(d, ids, metas, sums, n, skip_existing, err);
		goto out;
	}
	if ((rc = prepare_capture(d, err)) < 0)
		goto out;
	capture_params_fill(&cp, &metas[0], sums[0]);
	res = PQexecPrepared(d->conn, stmt, 21, cp.p, NULL, NULL, 0);
	rc = capture_result(d, &ids[0], res, &metas[0], err);
out:
	PQclear(res);
	if (rc < 0)
		for (size_t i = 0; i < n; i++)
			ids[i] = 0;
	return rc;
}

/*
 * The body of db_capture_insert and db_capture_insert_many, inside a
 * transaction: the capture rows, then their functions interned, then
 * every capture's function values in one COPY, then the services'
 * functions recorded.
 */
static int capture_insert_tx(db *d, int64_t *ids, const db_capture *metas,
			     const profile *const *ps, const profile_summary *const *sums,
			     size_t n, bool skip_existing, pr_error *err)
{
	fn_set fs = {0};
	int64_t want = 0;
	int rc = 0;

	if ((rc = insert_capture_rows(d, ids, metas, sums, n, skip_existing, err)) < 0)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (ids[i] && sums[i]->nrows)
			want++;
	if (want == 0)
		goto out;
	if ((rc = fn_set_build(&fs, ids, ps, sums, n, err)) < 0 ||
	    (rc = fn_set_intern(d, &fs, err)) < 0 ||
	    (rc = copy_profile_vectors(d, &fs, ids, metas, sums, n, want, err)) < 0 ||
	    (rc = record_service_functions(d, &fs, ids, metas, sums, n, err)) < 0)
		goto out;
out:
	fn_set_release(&fs, n);
	return rc;
}

int db_capture_insert(db *d, int64_t *id, const db_capture *meta, const profile *p,
		      const profile_summary *s, pr_error *err)
{
	bool own_tx = false;
	int rc;

	*id = 0;
	if ((rc = check_capture(meta, p, s, err)) < 0)
		return rc;
	switch (PQtransactionStatus(d->conn)) {
	case PQTRANS_IDLE:
		if ((rc = db_begin(d, err)) < 0)
			return rc;
		own_tx = true;
		break;
	case PQTRANS_INTRANS:
		break;
	default:
		return pr_error_set(err, PR_EDB,
				    "database: cannot insert a capture: the "
				    "transaction has already failed");
	}
	rc = capture_insert_tx(d, id, meta, &p, &s, 1, false, err);
	if (own_tx) {
		if (rc == 0)
			rc = db_commit(d, err);
		else
			db_rollback(d);
	}
	if (rc < 0)
		*id = 0;
	return rc;
}

int db_capture_insert_many(db *d, int64_t *ids, const db_capture *metas,
			   const profile *const *ps, const profile_summary *const *sums,
			   size_t n, pr_error *err)
{
	int rc = 0;

	for (size_t i = 0; i < n; i++)
		ids[i] = 0;
	for (size_t i = 0; i < n; i++)
		if ((rc = check_capture(&metas[i], ps[i], sums[i], err)) < 0)
			return rc;
	if (PQtransactionStatus(d->conn) != PQTRANS_INTRANS)
		return pr_error_set(err, PR_EUSAGE,
				    "database: cannot insert captures: no usable "
				    "transaction is open");
	if ((rc = capture_insert_tx(d, ids, metas, ps, sums, n, true, err)) < 0)
		for (size_t i = 0; i < n; i++)
			ids[i] = 0;
	return rc;
}

#define CAPTURE_COLS \
	"p.id, p.service_id, s.name, p.profile_type, p.release, p.commit_sha, p.host," \
	" " TS_TO_US("p.captured_at") ", p.duration_ns, p.period, p.period_type, p.period_unit," \
	" p.value_type, p.value_unit, p.total_value, p.sample_count, p.function_count," \
	" p.blob_key, p.blob_bytes, p.format, p.retention_class, " TS_TO_US("p.retain_until") "," \
	" p.tags::text, " TS_TO_US("p.ingested_at") ", p.blob_deleted_at is not null" \
	" from profiles p join services s on s.id = p.service_id"

static int capture_from_row(db_capture *c, const PGresult *res, int r)
{
	bool fail = false;

	memset(c, 0, sizeof(*c));
	c->id = get_i64(res, r, 0);
	c->service_id = get_i64(res, r, 1);
	c->service = get_str(res, r, 2, &fail);
	c->profile_type = get_str(res, r, 3, &fail);
	c->release = get_str(res, r, 4, &fail);
	c->commit_sha = get_str(res, r, 5, &fail);
	c->host = get_str(res, r, 6, &fail);
	c->captured_at_us = get_i64(res, r, 7);
	c->duration_ns = get_i64(res, r, 8);
	c->period = get_i64(res, r, 9);
	c->period_type = get_str(res, r, 10, &fail);
	c->period_unit = get_str(res, r, 11, &fail);
	c->value_type = get_str(res, r, 12, &fail);
	c->value_unit = get_str(res, r, 13, &fail);
	c->total_value = get_i64(res, r, 14);
	c->sample_count = get_i64(res, r, 15);
	c->function_count = (int32_t)get_i64(res, r, 16);
	c->blob_key = get_str(res, r, 17, &fail);
	c->blob_bytes = get_i64(res, r, 18);
	c->format = get_str(res, r, 19, &fail);
	c->retention_class = get_str(res, r, 20, &fail);
	c->retain_until_us = get_i64(res, r, 21);
	c->tags_json = get_str(res, r, 22, &fail);
	c->ingested_at_us = get_i64(res, r, 23);
	c->blob_deleted = get_bool(res, r, 24);
	if (fail) {
		db_capture_release(c);
		return PR_ENOMEM;
	}
	return 0;
}

int db_capture_get(db *d, db_capture *out, int64_t capture_id, pr_error *err)
{
	num cid;
	const char *p[1] = {i64(&cid, capture_id)};
	PGresult *res = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = run(d, &res, err, "select " CAPTURE_COLS " where p.id = $1", 1, p,
		      "cannot read a capture")) < 0)
		return rc;
	if (PQntuples(res) == 0)
		rc = pr_error_set(err, PR_ENOTFOUND, "capture %" PRId64 " not found", capture_id);
	else if (capture_from_row(out, res, 0) < 0)
		rc = oom(err);
	PQclear(res);
	return rc;
}

int db_capture_list(db *d, db_capture **out, size_t *n, const db_capture_filter *f, pr_error *err)
{
	static const db_capture_filter all = {0};
	num since, until, limit;
	const char *p[9];
	buf ids = BUF_INIT;
	PGresult *res = NULL;
	db_capture *arr = NULL;
	size_t rows, done = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (!f)
		f = &all;
	p[0] = f->service;
	p[1] = f->release;
	p[2] = f->profile_type;
	p[3] = f->since_us || f->since_set ? i64(&since, f->since_us) : NULL;
	p[4] = f->until_us || f->until_set ? i64(&until, f->until_us) : NULL;
	p[5] = f->limit ? i64(&limit, f->limit > INT64_MAX ? INT64_MAX : (int64_t)f->limit) : NULL;
	p[6] = f->host;
	p[7] = f->covering ? "t" : "f";
	p[8] = NULL;
	if (f->nids) {
		if ((rc = i64_array(&ids, f->ids, f->nids, err)) < 0)
			goto out;
		p[8] = ids.ptr;
	}
	/* A capture covers from its time to its time plus its duration (0 when unknown). */
	if ((rc = run(d, &res, err,
		      "select " CAPTURE_COLS
		      " where ($1::text is null or s.name = $1)"
		      " and ($2::text is null or p.release = $2)"
		      " and ($3::text is null or p.profile_type = $3)"
		      " and ($4::bigint is null or (case when $8::boolean then p.captured_at"
		      "   + coalesce(p.duration_ns, 0) / 1000 * interval '1 microsecond'"
		      "   else p.captured_at end) >= " US_TO_TS("$4") ")"
		      " and ($5::bigint is null or p.captured_at < " US_TO_TS("$5") ")"
		      " and ($7::text is null or p.host = $7)"
		      " and ($9::bigint[] is null or p.id = any($9::bigint[]))"
		      " order by p.captured_at desc, p.id desc"
		      " limit $6::bigint",
		      9, p, "cannot list captures")) < 0)
		goto out;
	rows = (size_t)PQntuples(res);
	if (rows == 0)
		goto out;
	if (!(arr = calloc(rows, sizeof(*arr)))) {
		rc = oom(err);
		goto out;
	}
	for (; done < rows; done++)
		if (capture_from_row(&arr[done], res, (int)done) < 0) {
			rc = oom(err);
			goto out;
		}
	*out = arr;
	*n = rows;
	arr = NULL;
out:
	if (arr) {
		for (size_t i = 0; i < done; i++)
			db_capture_release(&arr[i]);
		free(arr);
	}
	PQclear(res);
	buf_release(&ids);
	return rc;
}

void db_func_rows_free(db_func_row *rows, size_t n)
{
	if (!rows)
		return;
	for (size_t i = 0; i < n; i++) {
		free(rows[i].name);
		free(rows[i].file);
	}
	free(rows);
}

int db_capture_top(db *d, db_func_row **out, size_t *n, int64_t capture_id, size_t limit,
		   pr_error *err)
{
	num cid, lim;
	const char *p[2] = {i64(&cid, capture_id),
			    limit ? i64(&lim, limit > INT64_MAX ? INT64_MAX : (int64_t)limit)
				  : NULL};
	PGresult *res = NULL;
	db_func_row *arr = NULL;
	size_t rows = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = run(d, &res, err,
		      "select f.name, f.file, pf.self_value, pf.total_value,"
		      " coalesce(pf.self_share, 0), coalesce(pf.total_share, 0)"
		      " from profile_functions pf join functions f on f.id = pf.function_id"
		      " where pf.profile_id = $1"
		      " order by pf.self_value desc, pf.total_value desc,"
		      "  f.name collate \"C\", f.file collate \"C\""
		      " limit $2::bigint",
		      2, p, "cannot read a capture's functions")) < 0)
		goto out;
	rows = (size_t)PQntuples(res);
	if (rows == 0) {
		PQclear(res);
		if ((rc = run(d, &res, err, "select 1 from profiles where id = $1", 1, p,
			      "cannot read a capture")) < 0)
			goto out;
		if (PQntuples(res) == 0)
			rc = pr_error_set(err, PR_ENOTFOUND, "capture %" PRId64 " not found",
					  capture_id);
		goto out;
	}
	if (!(arr = calloc(rows, sizeof(*arr)))) {
		rc = oom(err);
		goto out;
	}
	for (size_t i = 0; i < rows; i++) {
		bool fail = false;
		arr[i].name = get_str(res, (int)i, 0, &fail);
		arr[i].file = get_str(res, (int)i, 1, &fail);
		arr[i].self_value = get_i64(res, (int)i, 2);
		arr[i].total_value = get_i64(res, (int)i, 3);
		arr[i].self_share = get_f64(res, (int)i, 4);
		arr[i].total_share = get_f64(res, (int)i, 5);
		if (fail) {
			rc = oom(err);
			goto out;
		}
	}
	*out = arr;
	*n = rows;
	arr = NULL;
out:
	db_func_rows_free(arr, rows);
	PQclear(res);
	return rc;
}

void db_vectors_release(db_vectors *v)
{
	free(v->capture_id);
	free(v->start);
	free(v->function_id);
	free(v->value);
	memset(v, 0, sizeof(*v));
}

/* Big-endian numbers of binary results: one load and a byte swap each. */
static uint32_t be32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}

static uint64_t be64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

/*
 * The element count of a binary int8[] of `len` bytes at p, or -1 unless
 * it is one dimension from 1 (or none, empty) of int8 without nulls whose
 * elements fill it exactly.
 */
static int64_t int8_array_len(const unsigned char *p, size_t len)
{
	uint64_t n;

	if (len < 12 || be32(p + 4) != 0 || be32(p + 8) != PG_INT8_OID)
		return -1;
	if (be32(p) == 0)
		return len == 12 ? 0 : -1;
	if (be32(p) != 1 || len < 20 || be32(p + 16) != 1)
		return -1;
	n = be32(p + 12);
	if (n > (len - 20) / 12 || len - 20 != 12 * n)
		return -1;
	for (uint64_t i = 0; i < n; i++)
		if (be32(p + 20 + 12 * i) != 8)
			return -1;
	return (int64_t)n;
}

static void int8_array_get(int64_t *v, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		v[i] = (int64_t)be64(p + 20 + 12 * i + 4);
}

typedef struct id_value {
	int64_t id, v;
} id_value;

static int id_value_cmp(const void *x, const void *y)
{
	const id_value *a = x, *b = y;

	return (a->id > b->id) - (a->id < b->id);
}

/*
 * Ingest and retention store a capture's ids ascending; a row written
 * otherwise (by hand) is put in order here rather than misread.
 */
static int ascend(int64_t *ids, int64_t *v, size_t n)
{
	id_value *t;
	size_t k = 1;

	while (k < n && ids[k - 1] < ids[k])
		k++;
	if (k >= n)
		return 0;
	if (!(t = malloc(n * sizeof(*t))))
		return -1;
	for (k = 0; k < n; k++)
		t[k] = (id_value){ids[k], v[k]};
	qsort(t, n, sizeof(*t), id_value_cmp);
	for (k = 0; k < n; k++) {
		ids[k] = t[k].id;
		v[k] = t[k].v;
	}
	free(t);
	return 0;
}

/*
 * The function count of row i of a vectors read, from its pairs (column
 * 1) or, where it has none, its two arrays (2 and 3); -1 when malformed.
 */
static int64_t vectors_row_len(const PGresult *res, int i)
{
	const unsigned char *f = (const unsigned char *)PQgetvalue(res, i, 2);
	size_t plen = (size_t)PQgetlength(res, i, 1);
	int64_t nf;

	if (PQgetlength(res, i, 0) != 8)
		return -1;
	if (!PQgetisnull(res, i, 1))
		return plen % 16 == 0 ? (int64_t)(plen / 16) : -1;
	if (PQgetisnull(res, i, 2) || PQgetisnull(res, i, 3))
		return -1;
	nf = int8_array_len(f, (size_t)PQgetlength(res, i, 2));
	if (nf < 0 || int8_array_len((const unsigned char *)PQgetvalue(res, i, 3),
				     (size_t)PQgetlength(res, i, 3)) != nf)
		return -1;
	return nf;
}

/* Read by `sql`, whose columns are an id, pairs or null, ids and values. */
static int vectors_read(db *d, db_vectors *out, const char *sql, const char *ids_literal,
			pr_error *err)
{
	const char *p[1] = {ids_literal};
	PGresult *res = NULL;
	size_t total = 0;
	int rows, rc = 0;

	memset(out, 0, sizeof(*out));
	if ((rc = db_exec_repeat(d, &res, err, "cannot read captures' function values", sql, 1, p,
				 1)) < 0)
		goto out;
	rows = PQntuples(res);
	if (!(out->capture_id = malloc(((size_t)rows + 1) * sizeof(*out->capture_id))) ||
	    !(out->start = malloc(((size_t)rows + 1) * sizeof(*out->start)))) {
		rc = oom(err);
		goto out;
	}
	for (int i = 0; i < rows; i++) {
		int64_t nf = vectors_row_len(res, i);

		if (nf < 0) {
			rc = pr_error_set(err, PR_EDB,
					  "database: the function values of a capture are neither "
					  "16-byte pairs nor two int8 arrays of one length");
			goto out;
		}
		out->start[i] = total;
		total += (size_t)nf;
	}
	out->start[rows] = total;
	if (!(out->function_id = malloc((total ? total : 1) * sizeof(int64_t))) ||
	    !(out->value = malloc((total ? total : 1) * sizeof(int64_t)))) {
		rc = oom(err);
		goto out;
	}
	for (int i = 0; i < rows; i++) {
		size_t at = out->start[i], m = out->start[i + 1] - at;
		const unsigned char *pairs = (const unsigned char *)PQgetvalue(res, i, 1);

		out->capture_id[i] = (int64_t)be64((const unsigned char *)PQgetvalue(res, i, 0));
		if (!PQgetisnull(res, i, 1))
			for (size_t k = 0; k < m; k++) {
				out->function_id[at + k] = (int64_t)be64(pairs + 16 * k);
				out->value[at + k] = (int64_t)be64(pairs + 16 * k + 8);
			}
		else {
			int8_array_get(out->function_id + at,
				       (const unsigned char *)PQgetvalue(res, i, 2), m);
			int8_array_get(out->value + at,
				       (const unsigned char *)PQgetvalue(res, i, 3), m);
		}
		if (ascend(out->function_id + at, out->value + at, m) < 0) {
			rc = oom(err);
			goto out;
		}
	}
	out->n = (size_t)rows;
out:
	PQclear(res);
	if (rc < 0)
		db_vectors_release(out);
	return rc;
}

int db_vectors_read(db *d, db_vectors *out, const char *ids_literal, pr_error *err)
{
	/*
	 * Binary results: the server sends the pairs as it holds them, with
	 * no number turned into text and back, nor formatted one by one as
	 * array elements are (most of this read's cost). The arrays only of
	 * a row without pairs: the CASE leaves the others undecompressed.
	 */
	static const char sql[] =
		"select profile_id, self_pairs,"
		" case when self_pairs is null then function_ids end,"
		" case when self_pairs is null then self_values end"
		" from profile_vectors where profile_id = any($1::bigint[])";

	return vectors_read(d, out, sql, ids_literal, err);
}

int db_vectors_read_totals(db *d, db_vectors *out, const char *ids_literal, pr_error *err)
{
	static const char sql[] = "select profile_id, null::bytea, function_ids, total_values"
				  " from profile_vectors where profile_id = any($1::bigint[])";

	return vectors_read(d, out, sql, ids_literal, err);
}

int db_audit(db *d, const char *action, const char *object, const char *detail_json, pr_error *err)
{
	const char *p[4] = {d->actor, action, object ? object : "", detail_json};
	PGresult *res;
	int rc = 0;

	if (!action || !*action)
		return pr_error_set(err, PR_EUSAGE,
				    "database: cannot write an audit row: no action");
	res = q(d, "insert into audit_log (actor, action, object, detail)"
		   " values ($1, $2, $3, coalesce($4::jsonb, '{}'))", 4, p);
	if (!res_ok(res))
		rc = db_fail_input(d, res, err, "cannot write an audit row for '%s'", action);
	PQclear(res);
	return rc;
}

int db_audit_many(db *d, const char *action, const char *const *objects,
		  const char *const *details_json, size_t n, pr_error *err)
{
	buf objs = BUF_INIT, dets = BUF_INIT;
	const char *p[4] = {d->actor, action, NULL, NULL};
	PGresult *res = NULL;
	int rc = 0;

	if (!action || !*action)
		return pr_error_set(err, PR_EUSAGE,
				    "database: cannot write an audit row: no action");
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!objects[i])
			return pr_error_set(err, PR_EUSAGE,
					    "database: cannot write an audit row: no object");
	if ((rc = text_array(&objs, objects, n, err)) < 0 ||
	    (rc = text_array(&dets, details_json, n, err)) < 0)
		goto out;
	p[2] = objs.ptr;
	p[3] = dets.ptr;
	res = q(d, "insert into audit_log (actor, action, object, detail)"
		   " select $1, $2, a.object, coalesce(a.detail::jsonb, '{}')"
		   " from unnest($3::text[], $4::text[]) with ordinality a(object, detail, ord)"
		   " order by a.ord", 4, p);
	if (!res_ok(res))
		rc = db_fail_input(d, res, err, "cannot write an audit row for '%s'", action);
out:
	PQclear(res);
	buf_release(&objs);
	buf_release(&dets);
	return rc;
}

/* ---- generic access for modules that own their SQL ------------------- */

/*
 * A statement's result to the caller of db_exec and db_exec_repeat: *out
 * (or freed), or the failure as PR_EUSAGE for bad input (SQLSTATE class
 * 22) and PR_EDB otherwise.
 */
static int exec_result(db *d, PGresult *res, PGresult **out, pr_error *err, const char *what)
{
	if (out)
		*out = NULL;
	if (!res_ok(res)) {
		int rc = res && sqlstate(res)[0] == '2' && sqlstate(res)[1] == '2'
			? db_fail_input(d, res, err, "%s", what)
			: db_fail(d, res, err, "%s", what);
		PQclear(res);
		return rc;
	}
	if (out)
		*out = res;
	else
		PQclear(res);
	return 0;
}

int db_exec(db *d, PGresult **out, pr_error *err, const char *what,
	    const char *sql, int nparams, const char *const *params)
{
	return exec_result(d, q(d, sql, nparams, params), out, err, what);
}

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/*
 * The statement's name on this session, prepared now if it is new; NULL
 * when the cache is full or the prepare failed (the caller then runs it
 * unprepared, and a real error shows there).
 */
static const char *stmt_name(db *d, const char *sql, int nparams, char name[24])
{
	uint64_t h = fnv1a(sql);
	PGresult *res;
	char *copy;
	size_t i;

	for (i = 0; i < d->nstmts; i++)
		if (d->stmts[i].hash == h && strcmp(d->stmts[i].sql, sql) == 0)
			break;
	snprintf(name, 24, "profreg_s%zu", i);
	if (i < d->nstmts)
		return name;
	if (i == DB_STMTS || !(copy = strdup(sql)))
		return NULL;
	res = PQprepare(d->conn, name, sql, nparams, NULL);
	if (!res_ok(res)) {
		PQclear(res);
		free(copy);
		return NULL;
	}
	PQclear(res);
	d->stmts[d->nstmts++] = (db_stmt){h, copy};
	return name;
}

static int exec_repeat(db *d, PGresult **out, pr_error *err, const char *what, const char *sql,
		       int nparams, const char *const *params, const int *lengths,
		       const int *formats, int binary)
{
	char name[24];
	const char *stmt;
	PGresult *res;

	/* In a failed transaction a prepare fails too: the statement's own error says why. */
	stmt = PQtransactionStatus(d->conn) == PQTRANS_INERROR ? NULL
	       : stmt_name(d, sql, nparams, name);
	res = stmt ? PQexecPrepared(d->conn, stmt, nparams, params, lengths, formats, binary)
		   : PQexecParams(d->conn, sql, nparams, NULL, params, lengths, formats, binary);
	return exec_result(d, res, out, err, what);
}

int db_exec_repeat(db *d, PGresult **out, pr_error *err, const char *what, const char *sql,
		   int nparams, const char *const *params, int binary)
{
	return exec_repeat(d, out, err, what, sql, nparams, params, NULL, NULL, binary);
}

int db_exec_repeat_bin(db *d, PGresult **out, pr_error *err, const char *what, const char *sql,
		       int nparams, const char *const *params, const int *lengths,
		       const int *formats)
{
	return exec_repeat(d, out, err, what, sql, nparams, params, lengths, formats, 0);
}

/*
 * The results of a pipeline of n statements up to its sync: out[i] is
 * statement i's result (NULL when it never ran: an earlier one failed).
 * Returns 0 when libpq delivered them all, else -1 (the connection broke).
 */
static int pipeline_results(db *d, PGresult **res, size_t n)
{
	PGresult *r;

	for (size_t i = 0; i < n; i++) {
		if (!(r = PQgetResult(d->conn)))
			return -1;
		if (PQresultStatus(r) == PGRES_PIPELINE_ABORTED)
			PQclear(r);
		else
			res[i] = r;
		/* A statement's results end with NULL. */
		while ((r = PQgetResult(d->conn)))
			PQclear(r);
	}
	if (!(r = PQgetResult(d->conn)))
		return -1;
	n = PQresultStatus(r) == PGRES_PIPELINE_SYNC;
	PQclear(r);
	return n ? 0 : -1;
}

int db_exec_pipeline(db *d, PGresult **out, pr_error *err, const db_call *calls, size_t n)
{
	PGresult *res[DB_PIPELINE_MAX] = {0};
	char names[DB_PIPELINE_MAX][24];
	const char *stmt[DB_PIPELINE_MAX];
	bool sent = true;
	int rc = 0;

	if (n > DB_PIPELINE_MAX)
		return pr_error_set(err, PR_EUSAGE, "database: a pipeline of %zu statements "
				    "(at most %d)", n, DB_PIPELINE_MAX);
	if (PQstatus(d->conn) != CONNECTION_OK)
		return conn_lost(d, err);
	/* Prepared first: a prepare is a round trip of its own, once a session. */
	for (size_t i = 0; i < n; i++)
		stmt[i] = PQtransactionStatus(d->conn) == PQTRANS_INERROR
			  ? NULL : stmt_name(d, calls[i].sql, calls[i].nparams, names[i]);
	if (!PQenterPipelineMode(d->conn))
		return conn_lost(d, err);
	for (size_t i = 0; sent && i < n; i++) {
		const db_call *c = &calls[i];
		sent = stmt[i] ? PQsendQueryPrepared(d->conn, stmt[i], c->nparams, c->params,
						     c->lengths, c->formats, c->binary)
			       : PQsendQueryParams(d->conn, c->sql, c->nparams, NULL, c->params,
						   c->lengths, c->formats, c->binary);
	}
	if (!sent || !PQpipelineSync(d->conn) || pipeline_results(d, res, n) < 0) {
		rc = conn_lost(d, err);
		goto out;
	}
	/* The first failure is the one to report: the statements after it never ran. */
	for (size_t i = 0; i < n; i++) {
		if (!res[i] || res_ok(res[i]))
			continue;
		rc = exec_result(d, res[i], NULL, err, calls[i].what);
		res[i] = NULL;
		break;
	}
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (res[i] == NULL)
			rc = pr_error_set(err, PR_EDB, "database: %s: not run", calls[i].what);
out:
	(void)PQexitPipelineMode(d->conn);
	for (size_t i = 0; i < n; i++) {
		if (out)
			out[i] = rc == 0 ? res[i] : NULL;
		if (rc < 0 || !out)
			PQclear(res[i]);
	}
	return rc;
}

int64_t db_get_i64(const PGresult *res, int row, int col)
{
	return get_i64(res, row, col);
}

double db_get_f64(const PGresult *res, int row, int col)
{
	return get_f64(res, row, col);
}

bool db_get_bool(const PGresult *res, int row, int col)
{
	return get_bool(res, row, col);
}

const char *db_get_text(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? NULL : PQgetvalue(res, row, col);
}

int db_rows(const PGresult *res)
{
	return res ? PQntuples(res) : 0;
}

void db_result_free(PGresult *res)
{
	PQclear(res);
}

int db_bigint_array(buf *out, const int64_t *first, size_t n, size_t stride)
{
	const char *at = (const char *)first;
	int rc = buf_putc(out, '{');

	for (size_t i = 0; rc == 0 && i < n; i++, at += stride) {
		int64_t v;
		memcpy(&v, at, sizeof(v));
		rc = buf_printf(out, "%s%" PRId64, i ? "," : "", v);
	}
	if (rc == 0)
		rc = buf_putc(out, '}');
	return rc < 0 ? PR_ENOMEM : 0;
}
