/*
 * pgembed.h: the private PostgreSQL cluster profreg runs when no database
 * is configured.
 *
 * Layout under <home>/pg:
 *   data/        the cluster (initdb once; owned by the cluster user)
 *   run/         the Unix socket folder, 0700 (no TCP: listen_addresses '')
 *   log/         postgres.log (the server) and pg_ctl.log (the tools)
 *   socket-dir   present only when run/ would make the socket path longer
 *                than a Unix socket allows: names the short folder under
 *                /tmp used instead (/tmp/profreg-<8 hex of sha256(home)>)
 *   lock         serialises start and stop between processes
 *
 * The server binaries come from PROFREG_PG_BIN when set, else the newest
 * /usr/lib/postgresql/<version>/bin (Debian's layout). initdb refuses to
 * run as root, so when profreg runs as root the cluster runs as the
 * `postgres` system user (the owner of an existing cluster, if another).
 * Authentication is trust on the private socket only; the socket folder's
 * permissions are the access control.
 *
 * Children are started with fork/exec and argument arrays (no shell of
 * ours), a minimal environment and their output in the log folder; every
 * wait is bounded.
 */
#ifndef PR_PGEMBED_H
#define PR_PGEMBED_H

#include <stdbool.h>

#include "common/error.h"

/*
 * Create the cluster under <home>/pg if it does not exist, start it if it
 * is not running, and make sure the database "profreg" exists. *conninfo_out
 * (the caller frees it) is a libpq connection string for that database.
 * Says what it did on stderr ("profreg: created a private PostgreSQL
 * cluster in 'var/pg' (owner postgres)") unless `quiet`. Starting a
 * running cluster changes nothing. A failed start names the last error
 * line of the server's log.
 */
int pgembed_start(char **conninfo_out, const char *home, bool quiet, pr_error *err);

/*
 * Start the existing cluster under <home>/pg if it is not running, and
 * connect to its database, like pgembed_start, but never create either:
 * a home without a cluster (a typo in --home) is PR_EDB with a message
 * that says how to make one. Jobs use this; setup commands use
 * pgembed_start.
 */
int pgembed_open(char **conninfo_out, const char *home, bool quiet, pr_error *err);

/*
 * Stop the cluster if it runs (fast shutdown, then immediate after 30 s).
 * A postmaster.pid whose PID another process has taken since a crash is
 * a cluster that does not run: that process is never signalled (and
 * pgembed_status says "not running"; a start removes the stale file).
 */
int pgembed_stop(const char *home, bool quiet, pr_error *err);

/*
 * Whether the cluster under <home>/pg runs. *conninfo_out (may be NULL;
 * the caller frees it) is the connection string it has or would have.
 * A home without a cluster is "not running", not an error.
 */
int pgembed_status(bool *running, char **conninfo_out, const char *home, pr_error *err);

#endif
