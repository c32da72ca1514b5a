/*
 * connguard.h: who may hold the connections of a libmicrohttpd server,
 * shared by profreg serve (jobs/serve.h) and its snapshot agent
 * (jobs/agent.h).
 *
 * libmicrohttpd closes only a connection that stays silent for its
 * timeout: a client sending a byte or a header line now and then keeps
 * its connection for as long as it likes, and a few of them every
 * connection, locking everyone else out (the alert webhooks, the server
 * asking its agents). The guard keeps, for each server:
 *
 *   - at most `max_open` connections open; the next is closed at once
 *     (refusal "connections");
 *   - at most `max_per_addr` of them from one address (0: no limit, as
 *     behind a proxy); the next is closed at once ("connections_per_ip");
 *   - a deadline: a request's head and body arrive within `deadline_ms`
 *     of the connection opening or its previous answer going out, or the
 *     connection is closed ("slow_request"). The time the polling thread
 *     spends in the daemon's handler (connguard_enter, connguard_leave)
 *     does not count: nothing is read meanwhile, so a request that
 *     arrived while another was answered (a snapshot of the agent takes
 *     up to its time budget) is not late for it. A client can stretch
 *     deadlines so only by keeping the server busy, which locks everyone
 *     out anyway. (libmicrohttpd's own timeout for a silent connection
 *     still counts that time: one it reads only after the handler
 *     returned, its bytes sent meanwhile, may be closed by it, uncounted,
 *     when the handler outlasted that timeout.);
 *   - one length for a request's body: two Content-Length headers, or one
 *     with Transfer-Encoding, leave where the body ends to whoever reads
 *     it (RFC 9112 6.3), and are refused 400 ("bad_framing"); so is a
 *     header whose name is not a token (a blank before its colon, RFC
 *     9112 5.1) or a line folded onto the one before (obs-fold, RFC 9112
 *     5.2), either of which libmicrohttpd reads otherwise than a proxy
 *     in front may, and which could hide a length.
 *
 * Each refusal is passed to the server's `refused` callback, which counts
 * it (for /metrics). The limits are kept here rather than by
 * libmicrohttpd so that refusals are counted, and so that a connection
 * past its deadline gives its slot to the one arriving (libmicrohttpd's
 * own limit, connguard_mhd_limit, leaves room for those still closing).
 *
 * Every function runs on the server's one polling thread (a daemon
 * started with MHD_USE_INTERNAL_POLLING_THREAD and no thread per
 * connection), which alone touches the guard and alone closes sockets.
 */
#ifndef PR_CONNGUARD_H
#define PR_CONNGUARD_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common/error.h"

/* Counts one refusal; `reason` is one of the names above. */
typedef void (*connguard_refused_fn)(void *cls, const char *reason);

typedef struct connguard_peer connguard_peer;
typedef struct connguard_link connguard_link;

typedef struct connguard {
	size_t max_open;            /* open connections at most */
	unsigned max_per_addr;      /* from one address at most; 0: no limit */
	int64_t deadline_ms;        /* a request's head and body arrive within this */
	connguard_refused_fn refused;
	void *cls;                  /* refused's */
	connguard_peer *peers;      /* addresses with open connections */
	size_t npeers;
	connguard_link *links;      /* open connections */
	size_t nopen;               /* of them, not cut for their deadline */
	int64_t busy_ms;            /* spent in the handler, in all (monotonic ms) */
	int64_t entered_ms;         /* when the handler running now was entered; 0: none */
} connguard;

/*
 * Set up a guard of the limits above; `refused` (with `cls`) counts each
 * refusal. PR_ENOMEM when its tables cannot be had. Release with
 * connguard_release once the daemon has stopped.
 */
int connguard_init(connguard *g, size_t max_open, unsigned max_per_addr, uint32_t deadline_ms,
		   connguard_refused_fn refused, void *cls, pr_error *err);
void connguard_release(connguard *g);

/* MHD_OPTION_CONNECTION_LIMIT for the daemon: room for cut connections still closing. */
unsigned connguard_mhd_limit(const connguard *g);

/* The daemon's accept policy (MHD_start_daemon's apc, with the guard as its cls). */
enum MHD_Result connguard_accept(void *cls, const struct sockaddr *sa, socklen_t len);

/* The daemon's MHD_OPTION_NOTIFY_CONNECTION callback, with the guard as its cls. */
void connguard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		      enum MHD_ConnectionNotificationCode code);

/*
 * For a piece of a body arriving: whether the request is past its
 * deadline (counted; the caller returns MHD_NO, which closes the
 * connection).
 */
bool connguard_late(connguard *g, struct MHD_Connection *c);

/* The request on `c` is whole: its clock stops; others past their deadline are closed. */
void connguard_arrived(connguard *g, struct MHD_Connection *c);

/* The answer on `c` went out (MHD_OPTION_NOTIFY_COMPLETED): the next request's clock starts. */
void connguard_answered(connguard *g, struct MHD_Connection *c);

/*
 * The daemon's handler starts, and returns: while it runs the polling
 * thread reads no connection, so no request's deadline counts that time.
 */
void connguard_enter(connguard *g);
void connguard_leave(connguard *g);

/*
 * Whether the request on `c` says where its body ends in one way only,
 * in headers taken as they arrived: NULL when it does, else why not
 * (counted as "bad_framing"; the caller answers 400, after which
 * libmicrohttpd closes the connection, the body unread). Call once its
 * head has arrived.
 */
const char *connguard_framing(connguard *g, struct MHD_Connection *c);

#endif
