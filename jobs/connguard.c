/*
 * connguard.c: who may hold a libmicrohttpd server's connections (see
 * connguard.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/connguard.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Open connections from one address. */
struct connguard_peer {
	unsigned char addr[16]; /* the address's bytes (the port left out) */
	int family;             /* AF_INET, AF_INET6; 0: a free slot */
	unsigned open;
};

/*
 * One open connection (its socket context), in the guard's list: since
 * when its current request has been arriving.
 */
struct connguard_link {
	struct MHD_Connection *c;
	int64_t since_ms;   /* opened, or its last answer went out */
	int64_t busy_ms;    /* the guard's time in the handler then (busy_now) */
	bool arrived;       /* the request is whole (answered or being answered) */
	bool cut;           /* closed for its deadline; the slot frees once it goes */
	struct connguard_link *prev, *next;
};

int connguard_init(connguard *g, size_t max_open, unsigned max_per_addr, uint32_t deadline_ms,
		   connguard_refused_fn refused, void *cls, pr_error *err)
{
	memset(g, 0, sizeof(*g));
	g->max_open = max_open;
	g->max_per_addr = max_per_addr;
	g->deadline_ms = deadline_ms;
	g->refused = refused;
	g->cls = cls;
	/* Room for connections cut for their deadline and not closed yet (connguard_accept). */
	g->npeers = 2 * max_open;
	if (!(g->peers = calloc(g->npeers, sizeof(*g->peers))))
		return pr_error_set(err, PR_ENOMEM, "cannot serve: out of memory");
	return 0;
}

void connguard_release(connguard *g)
{
	/* Links are freed as their connections close (connguard_notify), before it stops. */
	free(g->peers);
	memset(g, 0, sizeof(*g));
}

unsigned connguard_mhd_limit(const connguard *g)
{
	return (unsigned)g->npeers;
}

static void refuse(connguard *g, const char *reason)
{
	if (g->refused)
		g->refused(g->cls, reason);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The time the polling thread has spent in the handler, at `now`. */
static int64_t busy_now(const connguard *g, int64_t now)
{
	return g->busy_ms + (g->entered_ms ? now - g->entered_ms : 0);
}

/* Starts the clock of the request arriving on `l`. */
static void clock_start(const connguard *g, connguard_link *l)
{
	int64_t now = now_ms();

	l->since_ms = now;
	l->busy_ms = busy_now(g, now);
}

/*
 * Whether the request on `l` is past its deadline at `now`: the time
 * since its clock started, less the time spent in the handler meanwhile,
 * when the polling thread (the only one reading connections) read none.
 * Without it, a request sent in full while the agent took a snapshot
 * (up to its time budget, 600 s at most) was cut as slow once the
 * snapshot ended, though nothing of it could be read before.
 */
static bool past_deadline(const connguard *g, const connguard_link *l, int64_t now)
{
	return now - l->since_ms - (busy_now(g, now) - l->busy_ms) > g->deadline_ms;
}

/*
 * The slot of `sa`'s address among those with open connections; with
 * `add`, a free one for it when it has none. NULL when it has none (or
 * every slot is taken, which the connection limit rules out).
 */
static connguard_peer *peer_of(connguard *g, const struct sockaddr *sa, bool add)
{
	unsigned char key[16] = {0};
	connguard_peer *free_slot = NULL;
	int family = sa ? sa->sa_family : 0;

	if (family == AF_INET)
		memcpy(key, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	else if (family == AF_INET6)
		memcpy(key, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	else
		return NULL;
	for (size_t i = 0; i < g->npeers; i++) {
		if (g->peers[i].family == family && memcmp(g->peers[i].addr, key, 16) == 0)
			return &g->peers[i];
		if (!g->peers[i].family && !free_slot)
			free_slot = &g->peers[i];
	}
	if (!add || !free_slot)
		return NULL;
	memcpy(free_slot->addr, key, 16);
	free_slot->family = family;
	free_slot->open = 0;
	return free_slot;
}

/* The list entry of connection `c`; NULL when it has none (memory ran out). */
static connguard_link *link_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

/*
 * Close every connection whose request has been arriving for longer than
 * the deadline. Run on the polling thread only, which alone closes
 * sockets, so each descriptor is still the connection's: shutting it
 * down makes libmicrohttpd read its end and close it.
 */
static void cut_slow(connguard *g)
{
	int64_t now = now_ms();

	for (connguard_link *l = g->links; l; l = l->next) {
		const union MHD_ConnectionInfo *ci;
		if (l->cut || l->arrived || !past_deadline(g, l, now))
			continue;
		if (!(ci = MHD_get_connection_info(l->c, MHD_CONNECTION_INFO_CONNECTION_FD)))
			continue;
		shutdown(ci->connect_fd, SHUT_RDWR);
		l->cut = true;
		g->nopen--;
		refuse(g, "slow_request");
	}
}

enum MHD_Result connguard_accept(void *cls, const struct sockaddr *sa, socklen_t len)
{
	connguard *g = cls;
	const connguard_peer *p;

	(void)len;
	cut_slow(g);
	p = g->max_per_addr ? peer_of(g, sa, false) : NULL;
	if (p && p->open >= g->max_per_addr) {
		refuse(g, "connections_per_ip");
		return MHD_NO;
	}
	if (g->nopen >= g->max_open) {
		refuse(g, "connections");
		return MHD_NO;
	}
	return MHD_YES;
}

void connguard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		      enum MHD_ConnectionNotificationCode code)
{
	connguard *g = cls;
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	bool started = code == MHD_CONNECTION_NOTIFY_STARTED;
	connguard_peer *p = peer_of(g, ci ? ci->client_addr : NULL, started);
	connguard_link *l = *socket_context;

	if (started && (l = calloc(1, sizeof(*l)))) {
		l->c = c;
		clock_start(g, l);
		l->next = g->links;
		if (g->links)
			g->links->prev = l;
		g->links = l;
		g->nopen++;
		*socket_context = l;
	} else if (!started && l) {
		if (l->prev)
			l->prev->next = l->next;
		else
			g->links = l->next;
		if (l->next)
			l->next->prev = l->prev;
		if (!l->cut)
			g->nopen--;
		free(l);
		*socket_context = NULL;
	}
	if (!p)
		return;
	if (started)
		p->open++;
	else if (p->open && --p->open == 0)
		p->family = 0;
}

bool connguard_late(connguard *g, struct MHD_Connection *c)
{
	const connguard_link *l = link_of(c);

	if (!l || !past_deadline(g, l, now_ms()))
		return false;
	refuse(g, "slow_request");
	return true;
}

void connguard_arrived(connguard *g, struct MHD_Connection *c)
{
	connguard_link *l = link_of(c);

	if (l)
		l->arrived = true;
	cut_slow(g);
}

void connguard_answered(connguard *g, struct MHD_Connection *c)
{
	connguard_link *l = link_of(c);

	if (l) {
		clock_start(g, l);
		l->arrived = false;
	}
}

void connguard_enter(connguard *g)
{
	/* 0 is "no handler runs": a clock reading 0 ms is taken for 1 ms. */
	g->entered_ms = now_ms();
	if (!g->entered_ms)
		g->entered_ms = 1;
}

void connguard_leave(connguard *g)
{
	if (g->entered_ms)
		g->busy_ms += now_ms() - g->entered_ms;
	g->entered_ms = 0;
}

/*
 * Counts the Content-Length and Transfer-Encoding headers of a request,
 * and the headers libmicrohttpd did not take as they should be taken.
 */
typedef struct framing {
	unsigned lengths, encodings;
	unsigned other_codings; /* a Transfer-Encoding that is not exactly "chunked" */
	unsigned bad_names; /* a name that is not a token */
	unsigned folded;    /* a line folded onto the one before */
} framing;

/* Whether a header's name is a token (RFC 9110 5.6.2): tchars, at least one. */
static bool is_token(const char *s, size_t n)
{
	static const char extra[] = "!#$%&'*+-.^_`|~";

	if (!n)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') ||
		      (ch >= 'A' && ch <= 'Z') || (ch && strchr(extra, ch))))
			return false;
	}
	return true;
}

/*
 * Whether libmicrohttpd took the header from one line of the request.
 * It keeps a header where it arrived, in the connection's read buffer:
 * the name, its colon (made a NUL), the blanks after it, the value. A
 * line that starts with a blank (obs-fold, RFC 9112 5.2) is taken by
 * libmicrohttpd 0.9.75 as the rest of the header before, which it copies
 * elsewhere with the line appended to its *name* (process_broken_line):
 * "Content-Length: 2" then " x" is a header "Content-Lengthx" of value
 * "2", and the body's length is gone. When a name, ":" or NUL, blanks
 * and the value are not one run of bytes, the name was rebuilt so.
 * (A libmicrohttpd that copied every header elsewhere would have every
 * request with a header refused here, which tests/cli/serve_guard.sh
 * shows at once.)
 */
static bool one_line(const char *key, size_t key_size, const char *value)
{
	uintptr_t from = (uintptr_t)key + key_size, to = (uintptr_t)value;

	if (to <= from || (key[key_size] != '\0' && key[key_size] != ':'))
		return false;
	for (uintptr_t i = 1; i < to - from; i++)
		if (key[key_size + i] != ' ' && key[key_size + i] != '\t')
			return false;
	return true;
}

static enum MHD_Result count_framing(void *cls, enum MHD_ValueKind kind, const char *key,
				     size_t key_size, const char *value, size_t value_size)
{
	framing *f = cls;

	(void)kind;
	(void)value_size;
	/*
	 * libmicrohttpd keeps the blanks before a header's colon in its
	 * name: "Transfer-Encoding : chunked" would not be counted below,
	 * while a proxy in front may take it for the body's length. RFC 9112
	 * 5.1 has such a request refused 400.
	 */
	if (!is_token(key, key_size))
		f->bad_names++;
	else if (!one_line(key, key_size, value))
		f->folded++;
	else if (key_size == 14 && strncasecmp(key, "Content-Length", 14) == 0)
		f->lengths++;
	else if (key_size == 17 && strncasecmp(key, "Transfer-Encoding", 17) == 0)
		f->encodings++, f->other_codings +=
				!(value_size == 7 && strncasecmp(value, "chunked", 7) == 0);
	return MHD_YES;
}

const char *connguard_framing(connguard *g, struct MHD_Connection *c)
{
	framing f = {0, 0, 0, 0, 0};
	const char *why = NULL;

	/*
	 * libmicrohttpd takes the first Content-Length and lets a
	 * Transfer-Encoding beside it pass: a proxy in front that took the
	 * other would read the rest of the body as a request of its own, or
	 * this server would. A header it took apart otherwise than a proxy
	 * would (a blank before the colon, a folded line) can hide either.
	 */
	MHD_get_connection_values_n(c, MHD_HEADER_KIND, count_framing, &f);
	if (f.bad_names)
		why = "a header name that is not a token (a blank before its colon?)";
	else if (f.folded)
		why = "a header line folded onto the one before (obs-fold)";
	else if (f.lengths > 1)
		why = "more than one Content-Length header";
	else if (f.lengths && f.encodings)
		why = "both Content-Length and Transfer-Encoding";
	else if (f.encodings > 1)
		why = "more than one Transfer-Encoding header";
	/*
	 * libmicrohttpd reads a body as chunked only for exactly "chunked";
	 * for "gzip, chunked" or "chunked " it waited for a body it would
	 * never frame, and took the next request on the connection into it,
	 * while a proxy in front frames such a body as chunked (its last
	 * coding). RFC 9112 6.3 has it refused.
	 */
	else if (f.other_codings)
		why = "a Transfer-Encoding other than chunked";
	if (why)
		refuse(g, "bad_framing");
	return why;
}
