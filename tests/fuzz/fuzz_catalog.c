/*
 * fuzz_catalog.c: libFuzzer target for service catalogues in JSON Lines
 * (catalog_read), as `profreg service import` reads them.
 *
 * catalog_read reads a path, so the input is written to one temporary
 * file (made under /tmp once per process, rewritten on every run).
 * Either the read fails with PR_EDATA, a message that starts with
 * "line N of '<file>': " and an empty catalogue, or it succeeds with
 * entries whose names pass db_service_name_valid, appear once each, and
 * whose teams are NULL or 1 to CATALOG_TEAM_MAX bytes with no control
 * character. catalog_release must free all of it (ASan's leak check).
 *
 * Seeds (tests/fuzz/corpus/catalog/): catalogues like those of
 * tests/cli/service_import.sh: good lines with a blank line and a null
 * team, and files whose second line lacks "name", has an unknown key, a
 * bad name, a team with an escape character, a NUL in a name, the same
 * name with another team, and a duplicate key.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobs/catalog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char file_path[] = "/tmp/profreg-fuzz-catalog.XXXXXX";
static int file_fd = -1;

static void cleanup(void)
{
	if (file_fd >= 0)
		unlink(file_path);
}

/* "line N of '<file>': " at the start of msg. */
static int names_the_line(const char *msg)
{
	char *end;

	if (strncmp(msg, "line ", 5) != 0 || strtoul(msg + 5, &end, 10) == 0 || end == msg + 5)
		return 0;
	if (strncmp(end, " of '", 5) != 0 || strncmp(end + 5, file_path, strlen(file_path)) != 0)
		return 0;
	return strncmp(end + 5 + strlen(file_path), "': ", 3) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	catalog c = CATALOG_INIT;
	pr_error err = PR_ERROR_INIT;
	int rc;

	if (file_fd < 0) {
		if ((file_fd = mkstemp(file_path)) < 0)
			abort();
		atexit(cleanup);
	}
	if (ftruncate(file_fd, 0) < 0 || pwrite(file_fd, data, size, 0) != (ssize_t)size)
		abort();
	rc = catalog_read(&c, file_path, &err);
	if (rc < 0) {
		if (rc != PR_EDATA || err.code != rc || !names_the_line(err.msg) || c.n || c.v)
			abort();
		return 0;
	}
	for (size_t i = 0; i < c.n; i++) {
		const char *t = c.v[i].team;
		if (!db_service_name_valid(c.v[i].name))
			abort();
		for (size_t k = 0; k < i; k++)
			if (strcmp(c.v[k].name, c.v[i].name) == 0)
				abort();
		if (t && (!*t || strlen(t) > CATALOG_TEAM_MAX))
			abort();
		for (; t && *t; t++)
			if ((unsigned char)*t < 0x20 || *t == 0x7f)
				abort();
	}
	catalog_release(&c);
	return 0;
}
