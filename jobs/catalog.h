/*
 * catalog.h: registering many services at once.
 *
 * A catalogue is a list of services with their teams, from the command
 * line, a JSON Lines file ({"name": "checkout", "team": "payments"} a
 * line) or the configuration file's services. It is registered in one
 * transaction: every service is added (or found with the same team), or
 * nothing is written.
 */
#ifndef PR_CATALOG_H
#define PR_CATALOG_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"
#include "common/strmap.h"
#include "jobs/config.h"
#include "pipeline/db.h"

/* The largest catalogue file and line read. */
#define CATALOG_FILE_MAX (64u << 20)
#define CATALOG_LINE_MAX (64u * 1024u)
#define CATALOG_TEAM_MAX DB_TEAM_MAX

typedef struct catalog_entry {
	char *name;
	char *team;  /* NULL: none */
	bool added;  /* set by catalog_register: new, rather than there already */
} catalog_entry;

typedef struct catalog {
	catalog_entry *v;
	size_t n, cap;
	strmap names;  /* each name's index in v */
} catalog;

#define CATALOG_INIT {NULL, 0, 0, STRMAP_INIT}

/* Free the entries and zero the catalogue. */
void catalog_release(catalog *c);

/*
 * Append a service (strings copied). With `where` ("line 3 of 'c.jsonl'",
 * which starts the message), a bad name or team is PR_EDATA; without,
 * the name is checked when it is registered. A name listed before with
 * another team is PR_EDATA; with the same team, it is kept once.
 */
int catalog_add(catalog *c, const char *name, const char *team, const char *where,
		pr_error *err);

/*
 * Read a JSON Lines catalogue: one object a line with "name" (required)
 * and "team" (a string or null); blank lines are skipped. Anything else
 * (invalid JSON, another key, a line over CATALOG_LINE_MAX bytes, a file
 * over CATALOG_FILE_MAX) is PR_EDATA naming the file and the line:
 * "line 3 of 'c.jsonl': unknown key \"owner\"". A file that cannot be
 * read is PR_EIO. On failure *c is left empty.
 */
int catalog_read(catalog *c, const char *path, pr_error *err);

/* Append the configuration file's services with their teams. */
int catalog_from_config(catalog *c, const config *cfg, pr_error *err);

/*
 * Register every service in one transaction, setting each entry's
 * `added`, and with `enable` enable each (audited as catalog_set_enabled
 * audits it), new or not. A service that exists with another team is
 * PR_EEXISTS and nothing is written.
 */
int catalog_register(db *d, catalog *c, bool enable, pr_error *err);

/*
 * Enable (or disable) the services names[0..n) in one transaction: all or
 * none. An unknown name is PR_ENOTFOUND naming it, and nothing changes.
 * Each change is audited as `profreg service enable` audits one.
 */
int catalog_set_enabled(db *d, char *const *names, size_t n, bool enabled, pr_error *err);

#endif
