/*
 * catalog.c: registering many services at once (see catalog.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/catalog.h"
#include "common/buf.h"
#include "common/fileio.h"
#include "common/redact.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void catalog_release(catalog *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].name);
		free(c->v[i].team);
	}
	free(c->v);
	strmap_release(&c->names);
	memset(c, 0, sizeof(*c));
}

/* "where: " before a message, or nothing. */
static int fail_at(pr_error *err, int code, const char *where, const char *msg)
{
	if (where)
		return pr_error_set(err, code, "%s: %s", where, msg);
	return pr_error_set(err, code, "%s", msg);
}

int catalog_add(catalog *c, const char *name, const char *team, const char *where,
		pr_error *err)
{
	char msg[400];
	uint32_t at;

	/* From a file, the line is named; names from the command line get the database's words. */
	if (where && !db_service_name_valid(name)) {
		char q[140];
		/* Any text of the file: only the words that cannot carry payment data. */
		snprintf(msg, sizeof(msg),
			 "service name '%s' is not 1 to 128 letters, digits, "
			 "'.', '_' or '-'",
			 redact_excerpt(q, sizeof(q), name, strlen(name)));
		return fail_at(err, PR_EDATA, where, msg);
	}
	if (where && team && !db_service_team_valid(team)) {
		snprintf(msg, sizeof(msg), "the team of service '%s' must be 1 to %d bytes "
			 "without control characters", name, CATALOG_TEAM_MAX);
		return fail_at(err, PR_EDATA, where, msg);
	}
	/*
	 * Looked up by hash: a scan of the entries before each made a file of
	 * 200,000 services take over a minute to read.
	 */
	if (strmap_get(&c->names, name, strlen(name), &at)) {
		if (strcmp(c->v[at].team ? c->v[at].team : "", team ? team : "") == 0)
			return 0;
		snprintf(msg, sizeof(msg), "service '%s' is listed twice with different teams",
			 name);
		return fail_at(err, PR_EDATA, where, msg);
	}
	if (c->n >= UINT32_MAX)
		return fail_at(err, PR_ELIMIT, where, "too many services");
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		catalog_entry *v = realloc(c->v, cap * sizeof(*v));
		if (!v)
			return pr_error_set(err, PR_ENOMEM, "out of memory");
		c->v = v;
		c->cap = cap;
	}
	memset(&c->v[c->n], 0, sizeof(c->v[c->n]));
	if (!(c->v[c->n].name = strdup(name)) ||
	    (team && !(c->v[c->n].team = strdup(team))) ||
	    strmap_put(&c->names, name, strlen(name), (uint32_t)c->n, &at, NULL) < 0) {
		free(c->v[c->n].name);
		free(c->v[c->n].team);
		c->v[c->n].name = c->v[c->n].team = NULL;
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	}
	c->n++;
	return 0;
}

/* One line's object into the catalogue. */
static int read_line(catalog *c, const char *line, size_t len, const char *where, pr_error *err)
{
	json_error_t jerr;
	json_t *o = NULL, *v;
	const char *key, *name = NULL, *team = NULL;
	char msg[300];
	int rc = 0;

	if (len > CATALOG_LINE_MAX) {
		snprintf(msg, sizeof(msg), "longer than %u bytes", CATALOG_LINE_MAX);
		rc = fail_at(err, PR_EDATA, where, msg);
		goto out;
	}
	if (!(o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr))) {
		snprintf(msg, sizeof(msg), "invalid JSON: %.200s", pr_json_reason(jerr.text));
		rc = fail_at(err, PR_EDATA, where, msg);
		goto out;
	}
	if (!json_is_object(o)) {
		rc = fail_at(err, PR_EDATA, where, "not a JSON object");
		goto out;
	}
	json_object_foreach(o, key, v) {
		if (strcmp(key, "name") == 0 && json_is_string(v)) {
			name = json_string_value(v);
		} else if (strcmp(key, "team") == 0 && (json_is_string(v) || json_is_null(v))) {
			team = json_is_string(v) ? json_string_value(v) : NULL;
		} else if (strcmp(key, "name") == 0 || strcmp(key, "team") == 0) {
			snprintf(msg, sizeof(msg), "\"%s\" must be a string", key);
			rc = fail_at(err, PR_EDATA, where, msg);
			goto out;
		} else {
			snprintf(msg, sizeof(msg), "unknown key \"%.64s\" (name, team)", key);
			rc = fail_at(err, PR_EDATA, where, msg);
			goto out;
		}
	}
	if (!name) {
		rc = fail_at(err, PR_EDATA, where, "missing \"name\"");
		goto out;
	}
	rc = catalog_add(c, name, team, where, err);
out:
	json_decref(o);
	return rc;
}

static bool blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

int catalog_read(catalog *c, const char *path, pr_error *err)
{
	buf text = BUF_INIT, where = BUF_INIT;
	const char *end;
	size_t lineno = 0;
	int rc;

	if ((rc = fileio_read(&text, path, CATALOG_FILE_MAX, err)) < 0)
		goto out;
	end = text.ptr + text.len;
	/* A Windows editor's byte order mark, skipped as manifests and the config skip it. */
	for (const char *line = text.ptr +
				(text.len >= 3 && !memcmp(text.ptr, "\xef\xbb\xbf", 3) ? 3 : 0),
			*next;
	     line < end; line = next) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t len = (size_t)((nl ? nl : end) - line);

		next = nl ? nl + 1 : end;
		lineno++;
		if (blank(line, len))
			continue;
		buf_reset(&where);
		if (buf_printf(&where, "line %zu of '%s'", lineno, path) < 0) {
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
			goto out;
		}
		if ((rc = read_line(c, line, len, where.ptr, err)) < 0)
			goto out;
	}
out:
	if (rc < 0)
		catalog_release(c);
	buf_release(&where);
	buf_release(&text);
	return rc;
}

int catalog_from_config(catalog *c, const config *cfg, pr_error *err)
{
	buf where = BUF_INIT;
	int rc = 0;

	for (size_t i = 0; i < cfg->nservices && rc == 0; i++) {
		buf_reset(&where);
		if (buf_printf(&where, "services.%s", cfg->services[i].name) < 0)
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		else
			rc = catalog_add(c, cfg->services[i].name, cfg->services[i].team,
					 where.ptr, err);
	}
	buf_release(&where);
	return rc;
}

/*
 * Register the catalogue and, with enable, enable each service, in one
 * transaction and a statement for each: a catalogue of 1,000 services
 * was 2,000 statements, one after another.
 */
static int register_tx(db *d, catalog *c, bool enable, pr_error *err)
{
	const char **names = NULL, **teams = NULL;
	bool *added = NULL;
	int rc;

	if (!(names = calloc(c->n, sizeof(*names))) || !(teams = calloc(c->n, sizeof(*teams))) ||
	    !(added = calloc(c->n, sizeof(*added)))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < c->n; i++) {
		names[i] = c->v[i].name;
		teams[i] = c->v[i].team;
	}
	if ((rc = db_service_ensure_many(d, added, names, teams, c->n, err)) < 0 ||
	    (enable && (rc = db_service_set_enabled_many(d, names, c->n, true, err)) < 0))
		goto out;
	for (size_t i = 0; i < c->n; i++)
		c->v[i].added = added[i];
out:
	free(names);
	free(teams);
	free(added);
	return rc;
}

int catalog_register(db *d, catalog *c, bool enable, pr_error *err)
{
	bool in_tx = false;
	int rc;

	for (size_t i = 0; i < c->n; i++)
		c->v[i].added = false;
	if (c->n == 0)
		return 0;
	if ((rc = db_begin(d, err)) < 0)
		goto out;
	in_tx = true;
	if ((rc = register_tx(d, c, enable, err)) < 0 || (rc = db_commit(d, err)) < 0)
		goto out;
	in_tx = false;
out:
	if (in_tx)
		db_rollback(d);
	if (rc < 0)
		for (size_t i = 0; i < c->n; i++)
			c->v[i].added = false;
	return rc;
}

int catalog_set_enabled(db *d, char *const *names, size_t n, bool enabled, pr_error *err)
{
	bool in_tx = false;
	int rc;

	if ((rc = db_begin(d, err)) < 0)
		goto out;
	in_tx = true;
	if ((rc = db_service_set_enabled_many(d, (const char *const *)names, n, enabled,
					      err)) < 0 ||
	    (rc = db_commit(d, err)) < 0)
		goto out;
	in_tx = false;
out:
	if (in_tx)
		db_rollback(d);
	return rc;
}
