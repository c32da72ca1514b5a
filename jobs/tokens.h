/*
 * tokens.h: bearer tokens of the trigger API (profreg serve), table
 * api_tokens, owned here.
 *
 * A token is "prt_" and 64 hex digits from 32 bytes of RAND_bytes. It is
 * shown once, when created; only its SHA-256 is stored, with its first
 * twelve characters (the hint) to tell tokens apart in a list. A token
 * belongs to a team and may trigger that team's services, or only the
 * ones it names. It works until it expires or is revoked. A token may
 * name the database role its requests run as (migration 020), so that
 * row-level security decides what it sees.
 */
#ifndef PR_TOKENS_H
#define PR_TOKENS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pipeline/db.h"

#define TOKENS_LEN 68      /* "prt_" + 64 hex digits */
#define TOKENS_HINT_LEN 12

typedef struct token_info {
	int64_t id;
	char *team;
	char *role;        /* the database role its requests run as; NULL: the server's */
	char **services;   /* NULL: every service of the team */
	size_t nservices;
	char hint[TOKENS_HINT_LEN + 1];
	char *created_by;
	int64_t created_at_us;
	int64_t expires_at_us; /* 0: never */
	int64_t revoked_at_us; /* 0: not revoked */
} token_info;

/* Free the members and zero the struct. */
void token_info_release(token_info *t);

/*
 * Create a token for `team`, limited to `services` (n of them; 0: the
 * team's), expiring at `expires_at_us` (0: never), whose requests run as
 * database role `role` (NULL: the server's own role); audited. The token
 * is written to `out` (TOKENS_LEN + 1 bytes), its row id to *id. An
 * invalid team or service name is PR_EUSAGE; a team no service has, or a
 * service that does not exist, is PR_ENOTFOUND; a service of another team
 * (or of none) is PR_EUSAGE, and so is a role that does not exist or does
 * not see the team's services (profreg access grant).
 */
int tokens_create(char *out, int64_t *id, db *d, const char *team, const char *const *services,
		  size_t n, int64_t expires_at_us, const char *role, pr_error *err);

/* Every token, newest first; free with tokens_list_free. */
int tokens_list(token_info **out, size_t *n, db *d, pr_error *err);
void tokens_list_free(token_info *v, size_t n);

/* Revoke token `id` (audited); PR_ENOTFOUND when there is none, a revoked one stays so. */
int tokens_revoke(db *d, int64_t id, pr_error *err);

/*
 * The token `token` names, valid at `now_us`, into *out (released by the
 * caller). PR_EREFUSED with the reason (unknown, expired, revoked) when
 * it is not valid; the token itself is never in a message.
 */
int tokens_verify(token_info *out, db *d, const char *token, int64_t now_us, pr_error *err);

/* Whether token `t` may trigger service `service` of team `team` (NULL: none). */
bool tokens_allows(const token_info *t, const char *service, const char *team);

#endif
