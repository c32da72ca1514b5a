/*
 * tokens.c: bearer tokens of the trigger API (see tokens.h); owns the
 * table api_tokens.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/tokens.h"
#include "jobs/access.h"
#include "common/buf.h"
#include "common/wipe.h"

#include <inttypes.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEAM_MAX 128

void token_info_release(token_info *t)
{
	free(t->team);
	free(t->role);
	for (size_t i = 0; i < t->nservices; i++)
		free(t->services[i]);
	free(t->services);
	free(t->created_by);
	memset(t, 0, sizeof(*t));
}

void tokens_list_free(token_info *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		token_info_release(&v[i]);
	free(v);
}

static void hex(char *out, const unsigned char *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = '\0';
}

/* The SHA-256 of `token` in hex (65 bytes). */
static int token_hash(char *out, const char *token, pr_error *err)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned n = 0;

	if (!EVP_Digest(token, strlen(token), md, &n, EVP_sha256(), NULL) || n != 32)
		return pr_error_set(err, PR_ERR, "cannot hash a token: libcrypto failed");
	hex(out, md, 32);
	return 0;
}

static bool team_valid(const char *t)
{
	size_t n = strlen(t);

	if (n == 0 || n > TEAM_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)t[i] < 0x20 || t[i] == 0x7f)
			return false;
	return true;
}

/* PR_ENOTFOUND for a team no service has or an unknown service, PR_EUSAGE for another team's. */
static int check_scope(db *d, const char *team, const char *const *services, size_t n,
		       pr_error *err)
{
	struct pg_result *res = NULL;
	const char *p[1] = {team};
	db_service s = {0};
	int rc;

	if ((rc = db_exec(d, &res, err, "looking up a token's team",
			  "select 1 from services where team = $1 limit 1", 1, p)) < 0)
		return rc;
	if (db_rows(res) == 0)
		rc = pr_error_set(err, PR_ENOTFOUND,
				  "team '%s' has no services (give it one first: profreg service "
				  "set NAME --team %s)",
				  team, team);
	db_result_free(res);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if ((rc = db_service_get(d, &s, services[i], err)) < 0)
			break;
		if (!s.team || !*s.team)
			rc = pr_error_set(err, PR_EUSAGE,
					  "service '%s' is not of team '%s' (it has no team)",
					  services[i], team);
		else if (strcmp(s.team, team) != 0)
			rc = pr_error_set(err, PR_EUSAGE,
					  "service '%s' is not of team '%s' (its team is '%s')",
					  services[i], team, s.team);
		db_service_release(&s);
	}
	return rc;
}

int tokens_create(char *out, int64_t *id, db *d, const char *team, const char *const *services,
		  size_t n, int64_t expires_at_us, const char *role, pr_error *err)
{
	static const char sql[] =
		"insert into api_tokens (team, services, token_hash, hint, created_by, expires_at,"
		" role) values ($1, $2::text[], $3, $4, $5, " DB_US_TO_TS("$6") ", $7)"
		" returning id";
	static const char sees[] =
		"select exists (select 1 from pg_roles where rolname = $1),"
		" exists (select 1 from pg_roles where rolname = $1)"
		" and profreg_role_sees_team($1, $2)";
	unsigned char raw[32];
	char hash[65], hint[TOKENS_HINT_LEN + 1], exp[24], obj[32];
	buf list = BUF_INIT, detail = BUF_INIT;
	struct pg_result *res = NULL;
	json_t *dj = NULL;
	char *dtext = NULL;
	int rc = 0;

	out[0] = '\0';
	if (!team_valid(team))
		return pr_error_set(err, PR_EUSAGE,
				    "team '%.64s' is empty, too long or has "
				    "control characters",
				    team);
	for (size_t i = 0; i < n; i++)
		if (!db_service_name_valid(services[i]))
			return pr_error_set(err, PR_EUSAGE, "'%.64s' is not a service name",
					    services[i]);
	/*
	 * Serve lets a token act on its team's services only: a team without
	 * services, or a service unknown or of another team, would make a
	 * token that can do nothing, found out only when a capture is refused.
	 */
	if ((rc = check_scope(d, team, services, n, err)) < 0)
		return rc;
	if (role) {
		const char *p[2] = {role, team};
		bool exists, sees_team;
		if (strlen(role) == 0 || strlen(role) > 63)
			return pr_error_set(err, PR_EUSAGE,
					    "role '%.80s' is not a valid role name (1 to 63 "
					    "characters)",
					    role);
		if ((rc = db_exec(d, &res, err, "checking a token's role", sees, 2, p)) < 0)
			return rc;
		exists = strcmp(db_get_text(res, 0, 0), "t") == 0;
		sees_team = strcmp(db_get_text(res, 0, 1), "t") == 0;
		db_result_free(res);
		res = NULL;
		if (!exists) {
			char sql[600];
			access_create_role_sql(sql, sizeof(sql), role);
			return pr_error_set(err, PR_EUSAGE,
					    "role '%s' does not exist (create it first: %s)", role,
					    sql);
		}
		if (!sees_team)
			return pr_error_set(err, PR_EUSAGE,
					    "role '%s' does not see team '%s' (profreg access "
					    "grant %s --team %s)",
					    role, team, role, team);
	}
	if (RAND_bytes(raw, sizeof(raw)) != 1)
		return pr_error_set(err, PR_ERR,
				    "cannot make a token: no randomness from "
				    "libcrypto");
	memcpy(out, "prt_", 4);
	hex(out + 4, raw, sizeof(raw));
	wipe_mem(raw, sizeof(raw));
	if ((rc = token_hash(hash, out, err)) < 0)
		goto out;
	snprintf(hint, sizeof(hint), "%.*s", TOKENS_HINT_LEN, out);
	snprintf(exp, sizeof(exp), "%" PRId64, expires_at_us);
	if (n) {
		/* Service names are letters, digits and ._- only: a plain array literal. */
		rc = buf_puts(&list, "{");
		for (size_t i = 0; rc == 0 && i < n; i++)
			rc = buf_printf(&list, "%s%s", i ? "," : "", services[i]);
		if (rc == 0)
			rc = buf_puts(&list, "}");
		if (rc < 0) {
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
			goto out;
		}
	}
	{
		const char *p[7] = {team,        n ? list.ptr : NULL,        hash, hint,
				    db_actor(d), expires_at_us ? exp : NULL, role};
		if ((rc = db_exec(d, &res, err, "creating a token", sql, 7, p)) < 0)
			goto out;
	}
	*id = db_get_i64(res, 0, 0);
	snprintf(obj, sizeof(obj), "token:%" PRId64, *id);
	dj = json_pack("{s:s,s:s,s:s?,s:s?}", "team", team, "hint", hint, "services",
		       n ? list.ptr : NULL, "role", role);
	if (!dj || !(dtext = json_dumps(dj, JSON_COMPACT))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	rc = db_audit(d, "token.create", obj, dtext, err);
out:
	if (rc < 0)
		wipe_mem(out, TOKENS_LEN + 1);
	db_result_free(res);
	buf_release(&list);
	buf_release(&detail);
	json_decref(dj);
	free(dtext);
	return rc;
}

/* Split a text[] as PostgreSQL prints it ("{a,b}"): names only, never quoted. */
static int split_array(char ***out, size_t *n, const char *s)
{
	size_t len = strlen(s), k = 0;
	char *copy;

	*out = NULL;
	*n = 0;
	if (len < 2)
		return 0;
	if (!(copy = strndup(s + 1, len - 2)))
		return PR_ENOMEM;
	for (char *p = copy; *p; p++)
		k += *p == ',';
	if (!(*out = calloc(k + 1, sizeof(char *)))) {
		free(copy);
		return PR_ENOMEM;
	}
	for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
		if (!((*out)[(*n)++] = strdup(t))) {
			free(copy);
			return PR_ENOMEM;
		}
	free(copy);
	return 0;
}

#define TOKEN_COLS                                                                                 \
	"id, team, services::text, hint, created_by, " DB_TS_TO_US(                                \
		"created_at") ", "                                                                 \
			      "coalesce(" DB_TS_TO_US("expires_at") ", 0), coalesce(" DB_TS_TO_US( \
				      "revoked_at") ", 0), role"

static int read_row(token_info *t, const struct pg_result *res, int row)
{
	memset(t, 0, sizeof(*t));
	t->id = db_get_i64(res, row, 0);
	snprintf(t->hint, sizeof(t->hint), "%s", db_get_text(res, row, 3));
	t->created_at_us = db_get_i64(res, row, 5);
	t->expires_at_us = db_get_i64(res, row, 6);
	t->revoked_at_us = db_get_i64(res, row, 7);
	if (!(t->team = strdup(db_get_text(res, row, 1))) ||
	    !(t->created_by = strdup(db_get_text(res, row, 4))))
		return PR_ENOMEM;
	if (db_get_text(res, row, 8) && !(t->role = strdup(db_get_text(res, row, 8))))
		return PR_ENOMEM;
	if (db_get_text(res, row, 2) &&
	    split_array(&t->services, &t->nservices, db_get_text(res, row, 2)) < 0)
		return PR_ENOMEM;
	return 0;
}

int tokens_list(token_info **out, size_t *n, db *d, pr_error *err)
{
	static const char sql[] = "select " TOKEN_COLS " from api_tokens order by id desc";
	struct pg_result *res = NULL;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = db_exec(d, &res, err, "listing tokens", sql, 0, NULL)) < 0)
		return rc;
	if (db_rows(res) && !(*out = calloc((size_t)db_rows(res), sizeof(**out)))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < db_rows(res); i++) {
		(*n)++;
		if (read_row(&(*out)[i], res, i) < 0) {
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
			goto out;
		}
	}
out:
	db_result_free(res);
	if (rc < 0) {
		tokens_list_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

int tokens_revoke(db *d, int64_t id, pr_error *err)
{
	static const char sql[] =
		"update api_tokens set revoked_at = coalesce(revoked_at, now()),"
		" revoked_by = coalesce(revoked_by, $2) where id = $1 returning hint";
	char ids[24], obj[32];
	const char *p[2] = {ids, db_actor(d)};
	struct pg_result *res = NULL;
	int rc;

	snprintf(ids, sizeof(ids), "%" PRId64, id);
	if ((rc = db_exec(d, &res, err, "revoking a token", sql, 2, p)) < 0)
		return rc;
	if (!db_rows(res)) {
		db_result_free(res);
		return pr_error_set(err, PR_ENOTFOUND, "token %" PRId64 ": no such token", id);
	}
	db_result_free(res);
	snprintf(obj, sizeof(obj), "token:%" PRId64, id);
	return db_audit(d, "token.revoke", obj, NULL, err);
}

int tokens_verify(token_info *out, db *d, const char *token, int64_t now_us, pr_error *err)
{
	static const char sql[] = "select " TOKEN_COLS " from api_tokens where token_hash = $1";
	char hash[65];
	const char *p[1] = {hash};
	struct pg_result *res = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	/* The shape is checked first so that no string that cannot be a token costs a query. */
	if (strlen(token) != TOKENS_LEN || strncmp(token, "prt_", 4) != 0 ||
	    strspn(token + 4, "0123456789abcdef") != TOKENS_LEN - 4)
		return pr_error_set(err, PR_EREFUSED, "not a profreg token");
	if ((rc = token_hash(hash, token, err)) < 0)
		return rc;
	if ((rc = db_exec(d, &res, err, "checking a token", sql, 1, p)) < 0)
		return rc;
	if (!db_rows(res)) {
		rc = pr_error_set(err, PR_EREFUSED, "unknown token");
		goto out;
	}
	if (read_row(out, res, 0) < 0) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	if (out->revoked_at_us)
		rc = pr_error_set(err, PR_EREFUSED, "token %s... is revoked", out->hint);
	else if (out->expires_at_us && out->expires_at_us <= now_us)
		rc = pr_error_set(err, PR_EREFUSED, "token %s... has expired", out->hint);
out:
	db_result_free(res);
	if (rc < 0)
		token_info_release(out);
	return rc;
}

bool tokens_allows(const token_info *t, const char *service, const char *team)
{
	if (!team || strcmp(team, t->team) != 0)
		return false;
	if (!t->services)
		return true;
	for (size_t i = 0; i < t->nservices; i++)
		if (strcmp(t->services[i], service) == 0)
			return true;
	return false;
}
