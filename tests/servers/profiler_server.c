/*
 * profiler_server.c: a loopback stand-in for Grafana Pyroscope's and
 * Parca's query APIs, for the collection tests. It speaks the wire format
 * of pipeline/pyroscope.proto and pipeline/parca.proto (compiled with
 * protoc-c, as profreg's own client is) and serves real pprof bytes.
 *
 *   profiler_server --protocol pyroscope|parca --port-file F --log F
 *                   --profile FILE [--release NAME=FILE]... [--label NAME]
 *                   [--mode ok|unauth|unavailable|hang|huge|garbage|badframe|
 *                    trailersonly|echoauth|echoauth203|echobasic|emptyhtml]
 *                   [--token T] [--tenant T] [--empty-before MS] [--delay-ms MS]
 *                   [--timeout S]
 *
 * Pyroscope (Connect, application/proto):
 *   POST /querier.v1.QuerierService/SelectMergeProfile: the request is
 *   decoded (a request that does not decode is 400 invalid_argument); the
 *   answer is --profile gunzipped, or the FILE of --release NAME=FILE when
 *   the selector holds NAME="<value>" for the --label; empty when the
 *   window ends before --empty-before (ms).
 *   POST /querier.v1.QuerierService/Series: one series per --release,
 *   labelled --label=NAME; an empty NAME ("--release =FILE") is a series
 *   without the label (pod="pod-0"), whose FILE a selector holding
 *   NAME="" gets.
 * Parca (gRPC-Web, application/grpc-web+proto):
 *   POST /parca.query.v1alpha1.QueryService/Query: a merge request for the
 *   pprof report; the answer is a data frame holding a QueryResponse with
 *   --profile (gzipped, as Parca sends it), then a trailer frame.
 *
 * Like the real servers, the profile served for a window carries the
 * window: its time_nanos and duration_nanos are set to the request's
 * start and length, so two windows never give the same bytes.
 *
 * --token requires "Authorization: Bearer T"; --tenant requires
 * "X-Scope-OrgID: T". --delay-ms holds every answer that long; each
 * request's log line has "inflight", how many requests the server was
 * answering at that moment, this one included (the tests read the
 * collection's concurrency caps from it). Modes: unauth (401 / grpc-status 16), unavailable
 * (503 / grpc-status 14), emptyhtml (Pyroscope: a 200 of type text/html
 * and no body, as a proxy in front of a server may answer), hang (never answers within the client's
 * patience: sleeps 30 s), huge (a 200 of 8 MiB), garbage (a profile that
 * is JSON text, the Series call answered as usual / a data frame that is
 * not a QueryResponse), badframe (a frame
 * length past the body), trailersonly (Parca: PERMISSION_DENIED in the
 * HTTP headers and an empty body, as gRPC-Web proxies send a call that
 * fails at once), echoauth (401 / grpc-status 16 whose message quotes the
 * request's Authorization header back, as a server that names the token
 * it refused), echoauth203 (the same refusal with HTTP status 203, a
 * success status that is no answer), echobasic (401 / grpc-status 16
 * quoting the Basic user name and password decoded). Every request is logged as one JSON line. It
 * listens on 127.0.0.1 on a free port, written to the port file, and
 * exits by itself after --timeout seconds (default 120).
 */
#define _GNU_SOURCE
#include "pipeline/parca.pb-c.h"
#include "pipeline/profile.pb-c.h"
#include "pipeline/pyroscope.pb-c.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#define MAX_REQ (1 << 20)
#define MAX_RELEASES 8

typedef struct blob {
	unsigned char *p;
	size_t n;
} blob;

static const char *protocol = "pyroscope", *mode = "ok", *token, *tenant,
		  *label = "service_git_ref";
static blob profile_raw;
static char *rel_names[MAX_RELEASES];
static blob rel_raw[MAX_RELEASES];
static int nrel;
static long long empty_before;
static FILE *logf;
static long delay_ms;
static int inflight;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

static _Noreturn void die(const char *what)
{
	fprintf(stderr, "profiler_server: %s\n", what);
	exit(3);
}

static blob read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	blob b = {NULL, 0};
	long n;

	if (!f || fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0)
		die(path);
	if (!(b.p = malloc((size_t)n + 1)) || fread(b.p, 1, (size_t)n, f) != (size_t)n)
		die(path);
	b.n = (size_t)n;
	fclose(f);
	return b;
}

static blob gunzip(blob in)
{
	blob out = {NULL, 0};
	z_stream z;
	size_t cap = in.n * 8 + 1024;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK || !(out.p = malloc(cap)))
		die("gunzip");
	z.next_in = in.p;
	z.avail_in = (uInt)in.n;
	for (;;) {
		int r;
		z.next_out = out.p + out.n;
		z.avail_out = (uInt)(cap - out.n);
		r = inflate(&z, Z_NO_FLUSH);
		out.n = cap - z.avail_out;
		if (r == Z_STREAM_END)
			break;
		if (r != Z_OK && r != Z_BUF_ERROR)
			die("gunzip: not gzip");
		if (!(out.p = realloc(out.p, cap *= 2)))
			die("gunzip");
	}
	inflateEnd(&z);
	free(in.p);
	return out;
}

static void log_line(json_t *o)
{
	char *s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);

	pthread_mutex_lock(&log_mu);
	if (s) {
		fprintf(logf, "%s\n", s);
		fflush(logf);
	}
	pthread_mutex_unlock(&log_mu);
	free(s);
	json_decref(o);
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
			     const void *body, size_t n)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(n, (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	MHD_add_response_header(r, "Content-Type", type);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* A Connect error: JSON {"code", "message"}. */
static enum MHD_Result connect_error(struct MHD_Connection *c, unsigned status, const char *code,
				     const char *msg)
{
	char body[512];
	int n = snprintf(body, sizeof(body), "{\"code\":\"%s\",\"message\":\"%s\"}", code, msg);

	return reply(c, status, "application/json", body, (size_t)n);
}

/* gRPC-Web: frames of [flag][length][bytes]. */
static void frame(unsigned char *out, size_t *pos, unsigned char flag, const void *p, size_t n)
{
	out[(*pos)++] = flag;
	out[(*pos)++] = (unsigned char)(n >> 24);
	out[(*pos)++] = (unsigned char)(n >> 16);
	out[(*pos)++] = (unsigned char)(n >> 8);
	out[(*pos)++] = (unsigned char)n;
	memcpy(out + *pos, p, n);
	*pos += n;
}

static enum MHD_Result grpc_status(struct MHD_Connection *c, int status, const char *msg)
{
	char trailer[256];
	unsigned char out[300];
	size_t pos = 0;
	int n = snprintf(trailer, sizeof(trailer), "grpc-status:%d\r\ngrpc-message:%s\r\n", status,
			 msg);

	frame(out, &pos, 0x80, trailer, (size_t)n);
	return reply(c, 200, "application/grpc-web+proto", out, pos);
}

/* `raw` (a pprof message) with the window's time; a new blob, gzipped when `gz`. */
static blob stamp(const blob *raw, long long start_ms, long long end_ms, bool gz)
{
	Perftools__Profiles__Profile *p =
		perftools__profiles__profile__unpack(NULL, raw->n, raw->p);
	blob out = {NULL, 0}, packed;

	if (!p)
		die("the --profile is not a pprof profile");
	p->time_nanos = start_ms * 1000000;
	p->duration_nanos = (end_ms - start_ms) * 1000000;
	packed.n = perftools__profiles__profile__get_packed_size(p);
	if (!(packed.p = malloc(packed.n + 1)))
		die("out of memory");
	perftools__profiles__profile__pack(p, packed.p);
	perftools__profiles__profile__free_unpacked(p, NULL);
	if (!gz)
		return packed;
	{
		z_stream z;
		size_t cap = packed.n + 1024;
		memset(&z, 0, sizeof(z));
		if (deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) !=
			    Z_OK ||
		    !(out.p = malloc(cap)))
			die("gzip");
		z.next_in = packed.p;
		z.avail_in = (uInt)packed.n;
		z.next_out = out.p;
		z.avail_out = (uInt)cap;
		if (deflate(&z, Z_FINISH) != Z_STREAM_END)
			die("gzip");
		out.n = cap - z.avail_out;
		deflateEnd(&z);
	}
	free(packed.p);
	return out;
}

/* The profile for a selector: a release's when it names one. */
static const blob *pick(const char *selector)
{
	char want[300];

	for (int i = 0; i < nrel; i++) {
		snprintf(want, sizeof(want), "%s=\"%s\"", label, rel_names[i]);
		if (selector && strstr(selector, want))
			return &rel_raw[i];
	}
	return &profile_raw;
}

static enum MHD_Result pyroscope(struct MHD_Connection *c, const char *url, const blob *req)
{
	if (strcmp(url, "/querier.v1.QuerierService/SelectMergeProfile") == 0) {
		Querier__V1__SelectMergeProfileRequest *m =
			querier__v1__select_merge_profile_request__unpack(NULL, req->n, req->p);
		blob b;
		enum MHD_Result ret;
		if (!m)
			return connect_error(c, 400, "invalid_argument",
					     "cannot decode the request");
		log_line(json_pack("{s:s,s:s,s:s,s:I,s:I}", "call", "SelectMergeProfile", "type_id",
				   m->profile_typeid, "selector", m->label_selector, "start",
				   (json_int_t)m->start, "end", (json_int_t)m->end));
		if (m->end <= empty_before) {
			querier__v1__select_merge_profile_request__free_unpacked(m, NULL);
			return reply(c, 200, "application/proto", "", 0);
		}
		b = stamp(pick(m->label_selector), m->start, m->end, false);
		ret = reply(c, 200, "application/proto", b.p, b.n);
		free(b.p);
		querier__v1__select_merge_profile_request__free_unpacked(m, NULL);
		return ret;
	}
	if (strcmp(url, "/querier.v1.QuerierService/Series") == 0) {
		Querier__V1__SeriesRequest *m =
			querier__v1__series_request__unpack(NULL, req->n, req->p);
		Querier__V1__SeriesResponse res = QUERIER__V1__SERIES_RESPONSE__INIT;
		Querier__V1__Labels sets[MAX_RELEASES], *psets[MAX_RELEASES];
		Querier__V1__LabelPair pairs[MAX_RELEASES], *ppairs[MAX_RELEASES];
		unsigned char out[4096];
		size_t n;
		if (!m)
			return connect_error(c, 400, "invalid_argument",
					     "cannot decode the request");
		log_line(json_pack("{s:s,s:s,s:I,s:I}", "call", "Series", "matcher",
				   m->n_matchers ? m->matchers[0] : "", "start",
				   (json_int_t)m->start, "end", (json_int_t)m->end));
		for (int i = 0; i < nrel; i++) {
			querier__v1__labels__init(&sets[i]);
			querier__v1__label_pair__init(&pairs[i]);
			/* A release of no name: a series without the label. */
			pairs[i].name = rel_names[i][0] ? (char *)label : "pod";
			pairs[i].value = rel_names[i][0] ? rel_names[i] : "pod-0";
			ppairs[i] = &pairs[i];
			sets[i].n_labels = 1;
			sets[i].labels = &ppairs[i];
			psets[i] = &sets[i];
		}
		res.n_labels_set = m->end <= empty_before ? 0 : (size_t)nrel;
		res.labels_set = psets;
		n = querier__v1__series_response__pack(&res, out);
		querier__v1__series_request__free_unpacked(m, NULL);
		return reply(c, 200, "application/proto", out, n);
	}
	return connect_error(c, 404, "unimplemented", "no such method");
}

static enum MHD_Result parca(struct MHD_Connection *c, const char *url, const blob *req)
{
	Parca__Query__V1alpha1__QueryRequest *m;
	Parca__Query__V1alpha1__QueryResponse res = PARCA__QUERY__V1ALPHA1__QUERY_RESPONSE__INIT;
	unsigned char *out, *msg;
	size_t pos = 0, n, len;
	const char trailer[] = "grpc-status:0\r\ngrpc-message:\r\n";
	enum MHD_Result ret;
	long long start, end;
	blob b = {NULL, 0};

	if (strcmp(url, "/parca.query.v1alpha1.QueryService/Query") != 0)
		return grpc_status(c, 12, "no such method");
	if (req->n < 5 || req->p[0] != 0 ||
	    (len = (size_t)req->p[1] << 24 | (size_t)req->p[2] << 16 | (size_t)req->p[3] << 8 |
		   req->p[4]) != req->n - 5 ||
	    !(m = parca__query__v1alpha1__query_request__unpack(NULL, len, req->p + 5)))
		return grpc_status(c, 3, "cannot decode the request");
	if (m->mode != PARCA__QUERY__V1ALPHA1__QUERY_REQUEST__MODE__MODE_MERGE ||
	    m->options_case != PARCA__QUERY__V1ALPHA1__QUERY_REQUEST__OPTIONS_MERGE ||
	    !m->merge->start || !m->merge->end ||
	    m->report_type !=
		    PARCA__QUERY__V1ALPHA1__QUERY_REQUEST__REPORT_TYPE__REPORT_TYPE_PPROF) {
		parca__query__v1alpha1__query_request__free_unpacked(m, NULL);
		return grpc_status(c, 3, "expected a merge request for the pprof report");
	}
	start = m->merge->start->seconds * 1000 + m->merge->start->nanos / 1000000;
	end = m->merge->end->seconds * 1000 + m->merge->end->nanos / 1000000;
	log_line(json_pack("{s:s,s:s,s:I,s:I}", "call", "Query", "query", m->merge->query, "start",
			   (json_int_t)start, "end", (json_int_t)end));
	if (end > empty_before)
		b = stamp(pick(m->merge->query), start, end, true);
	res.report_case = PARCA__QUERY__V1ALPHA1__QUERY_RESPONSE__REPORT_PPROF;
	res.pprof.data = b.p;
	res.pprof.len = b.n;
	parca__query__v1alpha1__query_request__free_unpacked(m, NULL);
	n = parca__query__v1alpha1__query_response__get_packed_size(&res);
	if (!(msg = malloc(n + 1)) || !(out = malloc(n + 64)))
		die("out of memory");
	parca__query__v1alpha1__query_response__pack(&res, msg);
	if (strcmp(mode, "garbage") == 0)
		memset(msg, 0xff, n); /* not a QueryResponse any more */
	frame(out, &pos, 0, msg, n);
	if (strcmp(mode, "badframe") == 0)
		out[1] = 0x7f; /* a length far past the body */
	frame(out, &pos, 0x80, trailer, sizeof(trailer) - 1);
	ret = reply(c, 200, "application/grpc-web+proto", out, pos);
	free(out);
	free(msg);
	free(b.p);
	return ret;
}

static enum MHD_Result answer(struct MHD_Connection *c, const char *url, const char *method,
			      const blob *req, const char *auth, const char *org, bool pyro);

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *data,
			      size_t *size, void **state)
{
	blob *req = *state;
	const char *auth, *org;
	bool pyro = strcmp(protocol, "pyroscope") == 0;

	(void)cls;
	(void)version;
	if (!req) {
		if (!(req = calloc(1, sizeof(*req))) || !(req->p = malloc(MAX_REQ)))
			die("out of memory");
		*state = req;
		return MHD_YES;
	}
	if (*size) {
		size_t k = *size < MAX_REQ - req->n ? *size : MAX_REQ - req->n;
		memcpy(req->p + req->n, data, k);
		req->n += k;
		*size = 0;
		return MHD_YES;
	}
	auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	org = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Scope-OrgID");
	log_line(json_pack("{s:s,s:s,s:b,s:s?,s:i}", "method", method, "path", url, "auth",
			   auth != NULL, "tenant", org, "inflight",
			   __atomic_add_fetch(&inflight, 1, __ATOMIC_SEQ_CST)));
	if (delay_ms)
		usleep((useconds_t)delay_ms * 1000);
	{
		enum MHD_Result r = answer(c, url, method, req, auth, org, pyro);
		__atomic_sub_fetch(&inflight, 1, __ATOMIC_SEQ_CST);
		return r;
	}
}

/* The answer to a whole request. */
static enum MHD_Result answer(struct MHD_Connection *c, const char *url, const char *method,
			      const blob *req, const char *auth, const char *org, bool pyro)
{
	if (strcmp(method, "POST") != 0)
		return reply(c, 405, "text/plain", "POST only\n", 10);
	if (token) {
		char want[512];
		snprintf(want, sizeof(want), "Bearer %s", token);
		if (!auth || strcmp(auth, want) != 0)
			return pyro ? connect_error(c, 401, "unauthenticated", "bad or no token")
				    : grpc_status(c, 16, "bad or no token");
	}
	if (tenant && (!org || strcmp(org, tenant) != 0))
		return connect_error(c, 401, "unauthenticated", "no org id");
	if (strcmp(mode, "echoauth") == 0 || strcmp(mode, "echoauth203") == 0) {
		char msg[200];
		snprintf(msg, sizeof(msg), "invalid token: %.100s", auth ? auth : "none");
		return pyro ? connect_error(c, strcmp(mode, "echoauth") ? 203 : 401,
					    "unauthenticated", msg)
			    : grpc_status(c, 16, msg);
	}
	if (strcmp(mode, "echobasic") == 0) {
		char msg[300], *pass = NULL, *user = MHD_basic_auth_get_username_password(c, &pass);
		snprintf(msg, sizeof(msg), "user %.100s with password %.100s: invalid credentials",
			 user ? user : "none", pass ? pass : "none");
		MHD_free(user);
		MHD_free(pass);
		return pyro ? connect_error(c, 401, "unauthenticated", msg)
			    : grpc_status(c, 16, msg);
	}
	if (pyro && strcmp(mode, "emptyhtml") == 0)
		return reply(c, 200, "text/html", "", 0);
	if (strcmp(mode, "unauth") == 0)
		return pyro ? connect_error(c, 401, "unauthenticated", "invalid credentials")
			    : grpc_status(c, 16, "invalid credentials");
	if (strcmp(mode, "unavailable") == 0)
		return pyro ? connect_error(c, 503, "unavailable", "ingesters are starting")
			    : grpc_status(c, 14, "query engine unavailable");
	if (strcmp(mode, "hang") == 0) {
		sleep(30);
		return MHD_NO;
	}
	if (!pyro && strcmp(mode, "trailersonly") == 0) {
		struct MHD_Response *r = MHD_create_response_from_buffer(0, (void *)"",
									 MHD_RESPMEM_PERSISTENT);
		enum MHD_Result ret;
		MHD_add_response_header(r, "Content-Type", "application/grpc-web+proto");
		MHD_add_response_header(r, "grpc-status", "7");
		MHD_add_response_header(r, "grpc-message", "tenant not allowed");
		ret = MHD_queue_response(c, 200, r);
		MHD_destroy_response(r);
		return ret;
	}
	if (strcmp(mode, "huge") == 0) {
		size_t n = 8u << 20;
		unsigned char *big = calloc(1, n);
		enum MHD_Result r;
		if (!big)
			die("out of memory");
		r = reply(c, 200, pyro ? "application/proto" : "application/grpc-web+proto", big,
			  n);
		free(big);
		return r;
	}
	if (pyro && strcmp(mode, "garbage") == 0 && strstr(url, "SelectMergeProfile"))
		return reply(c, 200, "application/json", "{\"profile\": \"none\"}", 19);
	return pyro ? pyroscope(c, url, req) : parca(c, url, req);
}

static void done(void *cls, struct MHD_Connection *c, void **state,
		 enum MHD_RequestTerminationCode why)
{
	blob *req = *state;

	(void)cls;
	(void)c;
	(void)why;
	if (req) {
		free(req->p);
		free(req);
	}
	*state = NULL;
}

int main(int argc, char **argv)
{
	const char *port_file = NULL, *log_file = NULL, *prof = NULL;
	long timeout_s = 120;
	struct sockaddr_in addr;
	struct MHD_Daemon *d;
	const union MHD_DaemonInfo *info;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--protocol"))
			protocol = argv[i + 1];
		else if (!strcmp(argv[i], "--port-file"))
			port_file = argv[i + 1];
		else if (!strcmp(argv[i], "--log"))
			log_file = argv[i + 1];
		else if (!strcmp(argv[i], "--profile"))
			prof = argv[i + 1];
		else if (!strcmp(argv[i], "--mode"))
			mode = argv[i + 1];
		else if (!strcmp(argv[i], "--token"))
			token = argv[i + 1];
		else if (!strcmp(argv[i], "--tenant"))
			tenant = argv[i + 1];
		else if (!strcmp(argv[i], "--label"))
			label = argv[i + 1];
		else if (!strcmp(argv[i], "--empty-before"))
			empty_before = atoll(argv[i + 1]);
		else if (!strcmp(argv[i], "--delay-ms"))
			delay_ms = strtol(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--timeout"))
			timeout_s = strtol(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--release") && nrel < MAX_RELEASES) {
			char *eq = strchr(argv[i + 1], '=');
			if (!eq)
				die("--release NAME=FILE");
			rel_names[nrel] = strndup(argv[i + 1], (size_t)(eq - argv[i + 1]));
			rel_raw[nrel] = gunzip(read_file(eq + 1));
			nrel++;
		} else {
			fprintf(stderr, "profiler_server: unknown option '%s'\n", argv[i]);
			return 2;
		}
	}
	if (!port_file || !log_file || !prof) {
		fprintf(stderr, "usage: profiler_server --protocol P --port-file F --log F "
				"--profile FILE [...]\n");
		return 2;
	}
	profile_raw = gunzip(read_file(prof));
	if (!(logf = fopen(log_file, "a")))
		die(log_file);
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0,
			     NULL, NULL, handle, NULL, MHD_OPTION_SOCK_ADDR, &addr,
			     MHD_OPTION_NOTIFY_COMPLETED, done, NULL, MHD_OPTION_CONNECTION_TIMEOUT,
			     (unsigned)10, MHD_OPTION_END);
	if (!d || !(info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)))
		die("cannot listen");
	{
		char tmp[4096];
		FILE *f;
		snprintf(tmp, sizeof(tmp), "%s.tmp", port_file);
		if (!(f = fopen(tmp, "w")) || fprintf(f, "%u\n", info->port) < 0 ||
		    fclose(f) != 0 || rename(tmp, port_file) < 0)
			die(port_file);
	}
	sleep((unsigned)timeout_s);
	MHD_stop_daemon(d);
	return 0;
}
