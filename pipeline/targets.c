/*
 * targets.c: static and file_sd target lists (see targets.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "pipeline/targets.h"
#include "common/buf.h"
#include "common/fileio.h"

#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

void target_clear(target *t)
{
	free(t->address);
	free(t->release);
	free(t->commit);
	free(t->host);
	memset(t, 0, sizeof(*t));
}

void target_list_release(target_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		target_clear(&l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int port_valid(const char *p)
{
	long v = 0;

	if (!*p || strlen(p) > 5)
		return 0;
	for (const char *c = p; *c; c++) {
		if (!isdigit((unsigned char)*c))
			return 0;
		v = v * 10 + (*c - '0');
	}
	return v >= 1 && v <= 65535 && p[0] != '0';
}

int targets_address_valid(const char *addr)
{
	const char *colon;
	size_t n = strlen(addr);

	if (n < 3 || n >= TARGETS_ADDR_MAX)
		return 0;
	if (addr[0] == '[') {
		const char *close = strchr(addr, ']');
		if (!close || close[1] != ':' || close == addr + 1)
			return 0;
		for (const char *c = addr + 1; c < close; c++)
			if (!isxdigit((unsigned char)*c) && *c != ':' && *c != '.')
				return 0;
		return port_valid(close + 2);
	}
	if (!(colon = strrchr(addr, ':')) || colon == addr)
		return 0;
	for (const char *c = addr; c < colon; c++)
		if (!isalnum((unsigned char)*c) && *c != '.' && *c != '-' && *c != '_')
			return 0;
	if (addr[0] == '.' || addr[0] == '-')
		return 0;
	return port_valid(colon + 1);
}

/* Append a target, taking ownership of *t's strings (a duplicate is freed). */
static int push(target_list *l, target *t, pr_error *err)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].address, t->address) == 0) {
			target_clear(t);
			return 0;
		}
	if (l->n >= TARGETS_MAX) {
		target_clear(t);
		return pr_error_set(err, PR_ELIMIT, "more than %d targets", TARGETS_MAX);
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		target *v = realloc(l->v, cap * sizeof(*v));
		if (!v) {
			target_clear(t);
			return pr_error_set(err, PR_ENOMEM, "out of memory");
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *t;
	memset(t, 0, sizeof(*t));
	return 0;
}

/*
 * A printable address for a message, at most 64 bytes, controls as '?'.
 * What comes before an '@' is a user and password ("admin:pw@host:6060"):
 * a message goes to cron mail and runs.detail, so it says only its length.
 */
static void shown(char *out, size_t n, const char *s)
{
	const char *at = strrchr(s, '@');
	size_t i = 0;

	if (at && n > 24) {
		i = (size_t)snprintf(out, n, "<%zu bytes>", (size_t)(at - s));
		s = at;
	}
	for (size_t k = 0; s[k] && i + 1 < n && k < 64; k++, i++)
		out[i] = (unsigned char)s[k] < 0x20 || s[k] == 0x7f || s[k] == '\'' ? '?' : s[k];
	out[i] = '\0';
}

int targets_add(target_list *l, const char *address, pr_error *err)
{
	target t = {0};
	char s[72];

	if (!targets_address_valid(address)) {
		shown(s, sizeof(s), address);
		return pr_error_set(err, PR_EDATA, "target '%s' is not a host:port", s);
	}
	if (!(t.address = strdup(address)))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	return push(l, &t, err);
}

/* A label's value when it is wanted: a string of printable text, at most 256 bytes. */
static int label(char **out, json_t *labels, const char *name, const char *path, size_t g,
		 pr_error *err)
{
	json_t *v;
	const char *s;

	if (!name || !labels || !(v = json_object_get(labels, name)))
		return 0;
	if (!json_is_string(v))
		return pr_error_set(err, PR_EDATA, "file_sd '%s': [%zu].labels.%.64s: not a string",
				    path, g, name);
	s = json_string_value(v);
	if (!*s || strlen(s) > 256)
		return pr_error_set(err, PR_EDATA,
				    "file_sd '%s': [%zu].labels.%.64s: must be 1 to 256 bytes",
				    path, g, name);
	for (const char *c = s; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == '"' || *c == '\\')
			return pr_error_set(
				err, PR_EDATA,
				"file_sd '%s': [%zu].labels.%.64s: a control character, "
				"quote or backslash",
				path, g, name);
	if (!(*out = strdup(s)))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	return 0;
}

/* One group {"targets": [...], "labels": {...}} into `l`. */
static int load_group(target_list *l, json_t *grp, size_t g, const char *path,
		      const target_labels *names, pr_error *err)
{
	json_t *ts, *labels, *v;
	const char *key;
	size_t i;
	int rc;

	if (!json_is_object(grp))
		return pr_error_set(err, PR_EDATA, "file_sd '%s': [%zu]: not an object", path, g);
	json_object_foreach(
		grp, key, v) if (strcmp(key, "targets") != 0 &&
				 strcmp(key, "labels") !=
					 0) return pr_error_set(err, PR_EDATA,
								"file_sd '%s': [%zu]: unknown key "
								"\"%.64s\"",
								path, g, key);
	ts = json_object_get(grp, "targets");
	labels = json_object_get(grp, "labels");
	if (!json_is_array(ts))
		return pr_error_set(err, PR_EDATA, "file_sd '%s': [%zu].targets: not an array",
				    path, g);
	if (labels && !json_is_object(labels))
		return pr_error_set(err, PR_EDATA, "file_sd '%s': [%zu].labels: not an object",
				    path, g);
	json_array_foreach(ts, i, v)
	{
		target t = {0};
		char s[72];
		if (!json_is_string(v) || !targets_address_valid(json_string_value(v))) {
			shown(s, sizeof(s),
			      json_is_string(v) ? json_string_value(v) : "(not text)");
			return pr_error_set(err, PR_EDATA,
					    "file_sd '%s': [%zu].targets[%zu]: '%s' "
					    "is not a host:port",
					    path, g, i, s);
		}
		if (!(t.address = strdup(json_string_value(v)))) {
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
			return rc;
		}
		if ((rc = label(&t.release, labels, names->release, path, g, err)) < 0 ||
		    (rc = label(&t.commit, labels, names->commit, path, g, err)) < 0 ||
		    (rc = label(&t.host, labels, names->host, path, g, err)) < 0) {
			target_clear(&t);
			return rc;
		}
		if ((rc = push(l, &t, err)) < 0)
			return rc;
	}
	return 0;
}

int targets_load_file_sd(target_list *l, const char *path, const target_labels *names,
			 pr_error *err)
{
	static const target_labels none = {NULL, NULL, NULL};
	pr_error rerr = PR_ERROR_INIT;
	buf text = BUF_INIT;
	json_error_t jerr;
	json_t *root = NULL, *grp;
	size_t before = l->n, g;
	int rc;

	if (!names)
		names = &none;
	if ((rc = fileio_read(&text, path, TARGETS_FILE_MAX, &rerr)) < 0) {
		rc = rc == PR_ELIMIT ? pr_error_set(err, PR_EDATA,
						    "file_sd '%s': larger than %u "
						    "bytes",
						    path, TARGETS_FILE_MAX)
				     : pr_error_set(err, rc, "%s", rerr.msg);
		goto out;
	}
	if (!(root = json_loadb(text.ptr, text.len, JSON_REJECT_DUPLICATES, &jerr))) {
		rc = pr_error_set(err, PR_EDATA, "file_sd '%s': line %d: %s", path, jerr.line,
				  pr_json_reason(jerr.text));
		goto out;
	}
	if (!json_is_array(root)) {
		rc = pr_error_set(err, PR_EDATA, "file_sd '%s': not a JSON array of target groups",
				  path);
		goto out;
	}
	json_array_foreach(root, g,
			   grp) if ((rc = load_group(l, grp, g, path, names, err)) < 0) goto out;
out:
	if (rc < 0)
		while (l->n > before)
			target_clear(&l->v[--l->n]);
	json_decref(root);
	buf_release(&text);
	return rc;
}
