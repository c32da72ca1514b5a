/*
 * targets.h: the hosts a pprof_http source profiles, from a static list
 * or from Prometheus file_sd files.
 *
 * A file_sd file is what operators already keep for Prometheus:
 *
 *   [{"targets": ["10.0.0.5:6060", "web-3:6060"],
 *     "labels": {"release": "v42", "commit": "9fceb02"}}]
 *
 * A target is "host:port": a host name (letters, digits, '.', '-', '_'),
 * an IPv4 address or a bracketed IPv6 address, and a port from 1 to
 * 65535; nothing else (no scheme, no path, no user), so a target can never
 * steer a request somewhere its address does not say. Labels are read for
 * three names the caller chooses (release, commit, host) and otherwise
 * ignored: they are never stored. A file is at most TARGETS_FILE_MAX bytes
 * and TARGETS_MAX targets; the same address twice is one target (the
 * first one's labels win).
 */
#ifndef PR_TARGETS_H
#define PR_TARGETS_H

#include <stddef.h>

#include "common/error.h"

#define TARGETS_FILE_MAX (4u << 20)
#define TARGETS_MAX 10000
#define TARGETS_ADDR_MAX 261

typedef struct target {
	char *address; /* "host:port" */
	char *release; /* from the release label, or NULL */
	char *commit;  /* from the commit label, or NULL */
	char *host;    /* from the host label, or NULL */
} target;

typedef struct target_list {
	target *v;
	size_t n, cap;
} target_list;

/* Which labels mean what; NULL: not read. */
typedef struct target_labels {
	const char *release;
	const char *commit;
	const char *host;
} target_labels;

/* Whether `addr` is a valid "host:port" (see above). */
int targets_address_valid(const char *addr);

/*
 * Add one target with no labels. An invalid address is PR_EDATA naming
 * it; a duplicate is ignored; more than TARGETS_MAX is PR_ELIMIT.
 */
int targets_add(target_list *l, const char *address, pr_error *err);

/*
 * Add every target of the file_sd file `path`, with the labels `names`
 * asks for. A missing file is PR_EIO; a file that is not the format
 * above (bad JSON, a wrong type, an unknown key, an invalid address, a
 * label value that is not a string) is PR_EDATA with one line naming the
 * file and where: "file_sd 'sd.json': [0].targets[2]: 'a b' is not a
 * host:port". On failure nothing from this file is added.
 */
int targets_load_file_sd(target_list *l, const char *path, const target_labels *names,
			 pr_error *err);

/* Free what one target holds; it is empty and usable again. */
void target_clear(target *t);

/* Free the targets; the list is empty and usable again. */
void target_list_release(target_list *l);

#endif
