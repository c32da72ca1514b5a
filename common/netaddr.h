/*
 * netaddr.h: the listening address of profreg's servers (`serve` and the
 * snapshot agent), "ADDR:PORT" or "[V6ADDR]:PORT", numeric only so that
 * starting a server never waits on a name lookup.
 */
#ifndef PR_NETADDR_H
#define PR_NETADDR_H

#include <sys/socket.h>

#include "common/error.h"

/* Parse `listen` into *ss; a name, a missing port or NULL is PR_EUSAGE. */
int netaddr_parse_listen(struct sockaddr_storage *ss, const char *listen, pr_error *err);

#endif
