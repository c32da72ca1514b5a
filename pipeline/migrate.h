/*
 * migrate.h: the schema migrations the binary carries.
 *
 * Each migration is a numbered SQL file in pipeline/migrations/, turned
 * into this table at build time (scripts/sql2c) and applied in its own
 * transaction, in order, by db_migrate.
 */
#ifndef PR_MIGRATE_H
#define PR_MIGRATE_H

#include <stddef.h>

typedef struct migration {
	int version;
	const char *name;
	const char *sql;
} migration;

extern const migration migrations[];
extern const size_t migrations_count;

#endif
