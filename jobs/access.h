/*
 * access.h: who may see which services, and the audit of every read
 * (table `access_grants`, the reading functions of migration 017, and
 * the audit columns it adds to `audit_log`).
 *
 * PostgreSQL enforces it: each person or robot connects as its own
 * database role; row-level security keeps the rows of the services whose
 * team the role was granted; admins (the schema owner, and roles granted
 * --admin: the job roles) see and write everything. Reading a heap or
 * alloc capture whole (export, diff, a report's flame graph) or a
 * snapshot needs the heap permission, checked by the database in the
 * same call that writes the audit row, so neither can be skipped.
 *
 * The `serve` hook: a request authenticated by a token runs as the
 * token's role with access_set_role inside the request's transaction,
 * so it meets exactly the same policies as that role's own connection.
 */
#ifndef PR_ACCESS_H
#define PR_ACCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pipeline/db.h"

/* Longest role name PostgreSQL keeps. */
#define ACCESS_ROLE_MAX 63

/*
 * Tag the session with the command (`command`, e.g. "profreg export"),
 * the operating-system user and the host name, which the audit rows the
 * database writes record beside the database role and the client's
 * address. Call once after connecting.
 */
int access_session(db *d, const char *command, pr_error *err);

/*
 * Check and audit a read of captures `ids` (n of them, `stride` bytes
 * apart, as db_bigint_array takes them): whole (their blobs: export,
 * diff, flame graphs) or their numbers only (profile show, finding
 * show). `action` names it in the audit log ("capture.read",
 * "capture.show"); `object` (may be NULL) overrides the default
 * "captures:1,2,3". One audit row is written whether or not the read is
 * allowed. A capture the role may not see is PR_ENOTFOUND ("capture N
 * not found", as for one that does not exist); a heap or alloc capture
 * read whole without the heap permission is PR_EREFUSED.
 */
int access_read_captures(db *d, const char *action, const char *object, const int64_t *ids,
			 size_t n, size_t stride, bool whole, pr_error *err);

/*
 * Audit the refused part of a selection by capture ids: those of `ids`
 * the role does not see (another team's, or none) get one refused
 * profreg_read row for `action`, as a `profile show` of them would.
 * The selection then fails or drops them as before, so only the audit
 * is added; returns 0 whatever the refusal, < 0 when the database fails.
 */
int access_audit_unseen(db *d, const char *action, const int64_t *ids, size_t n, bool whole,
			pr_error *err);

/*
 * Audit a view of finding `finding_id` with its pinned captures (their
 * numbers: no heap permission needed), as "finding:ID".
 */
int access_read_finding(db *d, const char *action, int64_t finding_id, pr_error *err);

/* The same for one stored snapshot, always whole. */
int access_read_snapshot(db *d, const char *action, int64_t snapshot_id, pr_error *err);

/*
 * Grant `role` the services of `team` (NULL or "" only with admin), with
 * the heap permission and/or as an admin, and the table privileges
 * profreg's commands need (select; with admin also insert, update,
 * delete). The role must exist (CREATE ROLE ... LOGIN is the DBA's);
 * granting again updates the flags. A team db_service_team_valid refuses
 * (control characters, over DB_TEAM_MAX bytes) is PR_EUSAGE. Runs as the
 * schema owner (GRANT needs it). Audited ("access.grant").
 */
/*
 * `CREATE ROLE "NAME" LOGIN` for role `role`, its double quotes doubled
 * as SQL wants them, into out[0..size) (cut when it does not fit): the
 * statement a message suggests must be the one that creates that role.
 */
void access_create_role_sql(char *out, size_t size, const char *role);

int access_grant(db *d, const char *role, const char *team, bool heap, bool admin,
		 pr_error *err);

/*
 * Revoke `role`'s grant for `team`, or every grant of the role when team
 * is NULL; with no grant left its table privileges go too. *removed is
 * the number of grants removed; none is PR_ENOTFOUND. Audited.
 */
int access_revoke(db *d, const char *role, const char *team, size_t *removed, pr_error *err);

typedef struct access_grant_row {
	char role[ACCESS_ROLE_MAX + 1];
	char team[257];     /* "" for an admin grant without a team */
	bool heap, admin;
	bool role_exists;   /* false: the grant names a role that is gone */
	int64_t granted_at_us;
	char granted_by[ACCESS_ROLE_MAX + 1];
} access_grant_row;

/* Every grant by role, then team. *out is a new array of *n (NULL when none); free it. */
int access_list(access_grant_row **out, size_t *n, db *d, pr_error *err);

/* Which audit rows access_audit_list returns; NULL and 0 do not filter. */
typedef struct access_audit_filter {
	int64_t since_us;       /* inclusive */
	const char *role;       /* the database role the row is for */
	int64_t capture_id;     /* rows naming this capture */
	size_t limit;           /* 0: 1000 */
} access_audit_filter;

/* One audit row; strings owned (access_audit_rows_free). NULL when unknown. */
typedef struct access_audit_row {
	int64_t id, at_us;
	char *actor, *action, *object, *detail_json;
	char *db_role, *session_role, *command, *client_addr, *client_host;
	int64_t *capture_ids;
	size_t ncaptures;
} access_audit_row;

/*
 * Audit rows newest first. A non-admin role sees only its own rows (the
 * database decides). *out is a new array of *n (NULL when none).
 */
int access_audit_list(access_audit_row **out, size_t *n, db *d, const access_audit_filter *f,
		      pr_error *err);
void access_audit_rows_free(access_audit_row *rows, size_t n);

/*
 * For a server answering for many roles (`serve`): run the rest of the
 * current transaction as `role` (SET LOCAL ROLE), so row security and
 * the reading functions treat the request as that role's. The server's
 * login role must be a member of it (GRANT role TO serve_login). Call
 * inside db_begin/db_commit; the role ends with the transaction.
 */
int access_set_role(db *d, const char *role, pr_error *err);

/*
 * The audit row of one API call made for database role `role` (NULL: the
 * session's own role), written by the database as the schema owner
 * (profreg_audit_as, migration 020) so that it names `role` rather than
 * the server's login: `action` (a lower-case word, e.g. "serve.capture.get"),
 * `object`, `detail_json` (an object; NULL: {}) and the captures `ids` (n
 * of them). The session must be an admin's (the serve job role) and a
 * member of `role`; otherwise PR_ERR with the database's message.
 */
int access_audit_call(db *d, const char *role, const char *action, const char *object,
		      const char *detail_json, const int64_t *ids, size_t n, pr_error *err);

#endif
