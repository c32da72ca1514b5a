/*
 * fleetgen.c: the fleet simulator. Writes a fleet of simulated CPU profile
 * captures (folded stacks) with regressions injected at known places, the
 * ingest manifest that loads them into profreg, and the ground truth that
 * profreg's findings are scored against: recall by regression size and
 * baseline share, and false findings per 1,000 null service-nights.
 *
 * The model in one paragraph (tests/sim/README.md has all of it): each
 * service is a call tree whose functions have heavy-tailed self costs and
 * whose library functions are called from several places; a capture
 * multiplies every stack's cost by mean-1 lognormal noise (and optionally
 * a per-host offset and a per-endpoint traffic-mix factor) and draws its
 * samples multinomially; a regression multiplies one function's self cost
 * in every stack that ends in it, in the release under analysis only.
 *
 * Everything random comes from gsl's mt19937: one stream, seeded from
 * --seed, for the fleet-wide choices, and one stream per service, so the
 * same options give byte-identical output. The program is standalone (GSL
 * and libc only) so that it can be built and trusted apart from the code
 * it measures. `--verify DIR` reads a fleet back and checks, with its own
 * reader, that the injected changes are really in the captures.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_statistics_double.h>

/* Exit codes, as profreg's own: 1 a check failed, 2 usage, 3 runtime. */
enum { EX_OK = 0, EX_FAILED = 1, EX_USAGE = 2, EX_RUNTIME = 3 };

#define PROG "fleetgen"
#define DAY_S 86400
#define MIN_DEPTH 3
#define MAX_DEPTH 20
#define MAX_LIST 16
#define MAX_PKG 10
#define MAX_TYPES 4
#define MAX_HOSTS 64
#define NONE UINT32_MAX
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_CAPTURE_SAMPLES 1000000000.0
/* --verify flags a change that is further than this many standard errors
 * from the truth; 5 keeps a fleet of thousands free of false alarms. */
#define VERIFY_Z 5.0

/* ------------------------------------------------------------------ */
/* Small helpers: allocation that cannot fail, a growable string.      */

static void die(int code, const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		die(EX_RUNTIME, "out of memory");
	return q;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		die(EX_RUNTIME, "out of memory");
	return p;
}

static char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(xrealloc(NULL, n), s, n);
}

/* Grow an array of `*cap` elements so that it holds at least `need`. */
static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 16;

	if (need <= *cap)
		return p;
	while (c < need)
		c *= 2;
	*cap = c;
	return xrealloc(p, c * size);
}

typedef struct sbuf {
	char *ptr;
	size_t len, cap;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		size_t room = b->cap - b->len;
		va_start(ap, fmt);
		n = vsnprintf(b->ptr ? b->ptr + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0)
			die(EX_RUNTIME, "cannot format output");
		if ((size_t)n < room)
			break;
		b->ptr = grow(b->ptr, &b->cap, b->len + (size_t)n + 1, 1);
	}
	b->len += (size_t)n;
}

/* Append s as a JSON string literal, quotes included. */
static void sb_json_str(sbuf *b, const char *s)
{
	sb_printf(b, "\"");
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			sb_printf(b, "\\%c", *p);
		else if (*p < 0x20)
			sb_printf(b, "\\u%04x", *p);
		else
			sb_printf(b, "%c", *p);
	}
	sb_printf(b, "\"");
}

/* ------------------------------------------------------------------ */
/* Time: civil dates without timegm, which C11 and POSIX do not have.  */

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	int64_t era;
	unsigned doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = (unsigned)(z - era * 146097);
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

#define TIME_TEXT 32

/* "2026-01-03T06:00:00Z" for Unix seconds t. */
static void format_time(char out[TIME_TEXT], int64_t t)
{
	int64_t days = t >= 0 ? t / DAY_S : -((-t + DAY_S - 1) / DAY_S), y;
	int64_t sec = t - days * DAY_S;
	unsigned m, d;

	civil_from_days(days, &y, &m, &d);
	snprintf(out, TIME_TEXT, "%04lld-%02u-%02uT%02d:%02d:%02dZ", (long long)y, m, d,
		 (int)(sec / 3600), (int)(sec / 60 % 60), (int)(sec % 60));
}

/* Read exactly n digits. */
static bool digits(const char *s, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

/*
 * Parse "YYYY-MM-DD" or "YYYY-MM-DDTHH:MM:SSZ" (UTC) into Unix seconds;
 * the only forms the generator writes, so --verify accepts only them too.
 */
static bool parse_time(int64_t *out, const char *s)
{
	int y, mo, d, h = 0, mi = 0, se = 0;
	size_t n = strlen(s);
	int64_t days, yy;
	unsigned m2, d2;

	if (n != 10 && n != 20)
		return false;
	if (!digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) || s[7] != '-' ||
	    !digits(s + 8, 2, &d))
		return false;
	if (n == 20 && (s[10] != 'T' || !digits(s + 11, 2, &h) || s[13] != ':' ||
			!digits(s + 14, 2, &mi) || s[16] != ':' || !digits(s + 17, 2, &se) ||
			s[19] != 'Z' || h > 23 || mi > 59 || se > 59))
		return false;
	if (mo < 1 || mo > 12 || d < 1 || d > 31)
		return false;
	days = days_from_civil(y, (unsigned)mo, (unsigned)d);
	civil_from_days(days, &yy, &m2, &d2);
	if (yy != y || (int)m2 != mo || (int)d2 != d)
		return false; /* 2026-02-30 */
	*out = days * DAY_S + h * 3600 + mi * 60 + se;
	return true;
}

/* ------------------------------------------------------------------ */
/* Options: one table drives both parsing and --help.                  */

typedef struct band {
	double lo, hi; /* fractions, not percent */
} band;

typedef struct config {
	const char *out, *verify;
	uint64_t seed;
	unsigned long services, functions, days, per_day, current, hosts;
	unsigned long samples, release_every, nights, churn;
	double cv, host_cv, load_cv, mix_cv, weekly, daily, skew, regressed, improved, noisy,
		noisy_factor;
	double factors[MAX_LIST], improve_factors[MAX_LIST];
	size_t nfactors, nimprove;
	band bands[MAX_LIST];
	size_t nbands;
	int64_t start;
	bool verbose;
} config;

enum opt_id {
	O_OUT,
	O_SEED,
	O_SERVICES,
	O_FUNCTIONS,
	O_DAYS,
	O_PER_DAY,
	O_CURRENT,
	O_SAMPLES,
	O_CV,
	O_HOST_EFFECT,
	O_HOSTS,
	O_REGRESSED,
	O_FACTORS,
	O_BANDS,
	O_IMPROVED,
	O_IMPROVE_FACTORS,
	O_START,
	O_RELEASE_EVERY,
	O_LOAD_CV,
	O_MIX_CV,
	O_WEEKLY,
	O_DAILY,
	O_SKEW,
	O_NIGHTS,
	O_NOISY,
	O_NOISY_FACTOR,
	O_CHURN,
	O_VERIFY,
	O_VERBOSE,
	O_HELP,
};

enum { ARG_NONE, ARG_REQUIRED, ARG_OPTIONAL };

typedef struct opt_def {
	const char *name;
	enum opt_id id;
	int arg;
	const char *metavar;
	const char *help;
} opt_def;

static const opt_def opts[] = {
	{"out", O_OUT, ARG_REQUIRED, "DIR",
	 "write the fleet here (created; files in it are overwritten)"},
	{"seed", O_SEED, ARG_REQUIRED, "N",
	 "random seed; the same options and seed give identical output (default 1)"},
	{"services", O_SERVICES, ARG_REQUIRED, "N",
	 "number of services, named svc-000, svc-001, ... (default 200)"},
	{"functions", O_FUNCTIONS, ARG_REQUIRED, "N",
	 "typical functions per service; each service draws 0.4N to 2N (default 150)"},
	{"days", O_DAYS, ARG_REQUIRED, "N", "baseline days before the analysed night (default 14)"},
	{"per-day", O_PER_DAY, ARG_REQUIRED, "N",
	 "baseline captures per service per day (default 2)"},
	{"current", O_CURRENT, ARG_REQUIRED, "N",
	 "captures per service in each analysed night (default 4)"},
	{"nights", O_NIGHTS, ARG_REQUIRED, "N",
	 "nights the new release runs, --current captures each (default 1)"},
	{"samples", O_SAMPLES, ARG_REQUIRED, "N",
	 "samples in a baseline capture; scales with the capture's CPU cost (default 20000)"},
	{"cv", O_CV, ARG_REQUIRED, "X",
	 "capture-to-capture noise: coefficient of variation of each "
	 "stack's weight (default 0.10)"},
	{"host-effect", O_HOST_EFFECT, ARG_OPTIONAL, "CV",
	 "per-host systematic offset of each stack's weight (off; 0.05 "
	 "when given without a value)"},
	{"hosts", O_HOSTS, ARG_REQUIRED, "N",
	 "typical hosts per service; each service draws N/2 to 3N/2 (default 4)"},
	{"regressed", O_REGRESSED, ARG_REQUIRED, "FRAC",
	 "fraction of services with a regression in the new release (default 0.5)"},
	{"factors", O_FACTORS, ARG_REQUIRED, "LIST",
	 "regression factors, spread evenly over the regressed services (default 1.1,1.25,1.5,2)"},
	{"bands", O_BANDS, ARG_REQUIRED, "LIST",
	 "baseline self-share bands in percent for the regressed function "
	 "(default 0.1-1,1-10,10-30)"},
	{"improved", O_IMPROVED, ARG_REQUIRED, "FRAC",
	 "fraction of services where one function gets cheaper instead (default 0)"},
	{"improve-factors", O_IMPROVE_FACTORS, ARG_REQUIRED, "LIST",
	 "factors (below 1) for improved functions (default 0.5,0.8)"},
	{"start", O_START, ARG_REQUIRED, "DATE",
	 "first baseline day, YYYY-MM-DD, UTC (default 2026-01-01)"},
	{"release-every", O_RELEASE_EVERY, ARG_REQUIRED, "DAYS",
	 "a new baseline release every DAYS days: v1, v2, ... (default 7)"},
	{"load-cv", O_LOAD_CV, ARG_REQUIRED, "X",
	 "capture-to-capture variation of the sample count, i.e. of load (default 0)"},
	{"mix-cv", O_MIX_CV, ARG_REQUIRED, "X",
	 "capture-to-capture variation of each endpoint's traffic (default 0)"},
	{"weekly", O_WEEKLY, ARG_REQUIRED, "X",
	 "weekend traffic: on Saturdays and Sundays (UTC) each endpoint's traffic is its "
	 "weekday traffic times a factor drawn once per service, with this coefficient "
	 "of variation (default 0: no week)"},
	{"daily", O_DAILY, ARG_REQUIRED, "X",
	 "day-to-day traffic: each endpoint's traffic times a factor drawn once per service "
	 "and UTC day, shared by that day's captures, with this coefficient of variation "
	 "(default 0: off)"},
	{"noisy-release", O_NOISY, ARG_REQUIRED, "FRAC",
	 "fraction of services whose last baseline release is noisy (default 0)"},
	{"noisy-factor", O_NOISY_FACTOR, ARG_REQUIRED, "X",
	 "how many times --cv a noisy release's capture noise is (default 3)"},
	{"churn", O_CHURN, ARG_REQUIRED, "N",
	 "code changes in each baseline release after the first: N code paths removed and "
	 "N new functions added; the new release changes no code (default 0)"},
	{"skew", O_SKEW, ARG_REQUIRED, "SIGMA",
	 "lognormal sigma of functions' self costs; larger is more heavy-tailed (default 1.5)"},
	{"verify", O_VERIFY, ARG_REQUIRED, "DIR",
	 "check a generated fleet against its truth.jsonl instead of generating"},
	{"verbose", O_VERBOSE, ARG_NONE, NULL, "with --verify: one line per checked service"},
	{"help", O_HELP, ARG_NONE, NULL, "show this help"},
};

static void usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (try --help)\n", stderr);
	exit(EX_USAGE);
}

static void print_help(void)
{
	printf("usage: " PROG " --out DIR [options]\n"
	       "       " PROG " --verify DIR [--verbose]\n\n"
	       "Write a simulated fleet of CPU profile captures (folded stacks) with\n"
	       "known injected regressions: DIR/<service>/<capture>.folded,\n"
	       "DIR/manifest.jsonl (for 'profreg ingest --manifest'), DIR/truth.jsonl\n"
	       "and DIR/services.txt. The summary on stdout gives the --at time and\n"
	       "the release an analysis of the generated night should use.\n\n"
	       "options:\n");
	for (size_t i = 0; i < NELEM(opts); i++) {
		char left[48];
		if (opts[i].arg == ARG_REQUIRED)
			snprintf(left, sizeof(left), "--%s %s", opts[i].name, opts[i].metavar);
		else if (opts[i].arg == ARG_OPTIONAL)
			snprintf(left, sizeof(left), "--%s[=%s]", opts[i].name, opts[i].metavar);
		else
			snprintf(left, sizeof(left), "--%s", opts[i].name);
		printf("  %-24s %s\n", left, opts[i].help);
	}
	printf("\nexit status: 0 ok, 1 --verify found a problem, 2 usage, 3 runtime error\n");
}

static unsigned long parse_ulong(const char *opt, const char *s, unsigned long lo,
				 unsigned long hi)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || s[0] == '+' || v < lo || v > hi)
		usage_error(
			"invalid value '%.40s' for --%s: expected a whole number from %lu to %lu",
			s, opt, lo, hi);
	return (unsigned long)v;
}

static double parse_num(const char *opt, const char *s, double lo, double hi)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi)
		usage_error("invalid value '%.40s' for --%s: expected a number from %g to %g",
			    s, opt, lo, hi);
	return v;
}

/*
 * Split a comma-separated list into at most MAX_LIST items, in place in
 * `tmp`; an empty item ("1.1,,2") is an error, not something to skip.
 */
static size_t split_list(const char *opt, const char *s, char *tmp, size_t tmpsize,
			 char **items)
{
	size_t n = 0;
	char *p = tmp;

	if (strlen(s) >= tmpsize)
		usage_error("invalid value for --%s: the list is too long", opt);
	strcpy(tmp, s);
	for (;;) {
		char *comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		if (!*p)
			usage_error("invalid value '%.60s' for --%s: an empty item in the list", s,
				    opt);
		if (n == MAX_LIST)
			usage_error("invalid value for --%s: at most %d items", opt, MAX_LIST);
		items[n++] = p;
		if (!comma)
			return n;
		p = comma + 1;
	}
}

/* A comma-separated list of numbers in [lo, hi]. */
static size_t parse_list(const char *opt, const char *s, double *out, double lo,
			 double hi)
{
	char tmp[512], *items[MAX_LIST];
	size_t n = split_list(opt, s, tmp, sizeof(tmp), items);

	for (size_t i = 0; i < n; i++)
		out[i] = parse_num(opt, items[i], lo, hi);
	return n;
}

/* "0.1-1,1-10,10-30": share bands in percent. */
static size_t parse_bands(const char *s, band *out)
{
	char tmp[512], *items[MAX_LIST];
	size_t nitems = split_list("bands", s, tmp, sizeof(tmp), items), n = 0;

	for (size_t i = 0; i < nitems; i++) {
		char *tok = items[i], *dash = strchr(tok + 1, '-');
		if (!dash)
			usage_error(
				"invalid band '%.40s' for --bands: expected LOW-HIGH in percent",
				tok);
		*dash = '\0';
		out[n].lo = parse_num("bands", tok, 0.001, 90) / 100;
		out[n].hi = parse_num("bands", dash + 1, 0.001, 90) / 100;
		if (out[n].hi <= out[n].lo)
			usage_error(
				"invalid band '%s-%s' for --bands: the upper "
				"bound must exceed the lower",
				tok, dash + 1);
		n++;
	}
	return n;
}

static void config_defaults(config *c)
{
	static const double factors[] = {1.1, 1.25, 1.5, 2};
	static const double improve[] = {0.5, 0.8};
	static const band bands[] = {{0.001, 0.01}, {0.01, 0.10}, {0.10, 0.30}};

	memset(c, 0, sizeof(*c));
	c->seed = 1;
	c->services = 200;
	c->functions = 150;
	c->days = 14;
	c->per_day = 2;
	c->current = 4;
	c->nights = 1;
	c->noisy_factor = 3;
	c->samples = 20000;
	c->hosts = 4;
	c->release_every = 7;
	c->cv = 0.10;
	c->skew = 1.5;
	c->regressed = 0.5;
	memcpy(c->factors, factors, sizeof(factors));
	c->nfactors = NELEM(factors);
	memcpy(c->improve_factors, improve, sizeof(improve));
	c->nimprove = NELEM(improve);
	memcpy(c->bands, bands, sizeof(bands));
	c->nbands = NELEM(bands);
	c->start = days_from_civil(2026, 1, 1) * DAY_S;
}

static void apply_option(config *c, const opt_def *o, const char *v)
{
	switch (o->id) {
	case O_OUT: c->out = v; break;
	case O_VERIFY: c->verify = v; break;
	case O_SEED: c->seed = parse_ulong(o->name, v, 0, ULONG_MAX); break;
	case O_SERVICES: c->services = parse_ulong(o->name, v, 1, 100000); break;
	case O_FUNCTIONS: c->functions = parse_ulong(o->name, v, 20, 2000); break;
	case O_DAYS: c->days = parse_ulong(o->name, v, 1, 366); break;
	case O_PER_DAY: c->per_day = parse_ulong(o->name, v, 1, 96); break;
	case O_CURRENT: c->current = parse_ulong(o->name, v, 1, 96); break;
	case O_NIGHTS: c->nights = parse_ulong(o->name, v, 1, 30); break;
	case O_NOISY: c->noisy = parse_num(o->name, v, 0, 1); break;
	case O_NOISY_FACTOR: c->noisy_factor = parse_num(o->name, v, 1, 20); break;
	case O_SAMPLES: c->samples = parse_ulong(o->name, v, 1, 10000000); break;
	case O_HOSTS: c->hosts = parse_ulong(o->name, v, 1, 40); break;
	case O_RELEASE_EVERY: c->release_every = parse_ulong(o->name, v, 1, 366); break;
	case O_CV: c->cv = parse_num(o->name, v, 0, 2); break;
	case O_HOST_EFFECT: c->host_cv = v ? parse_num(o->name, v, 0, 2) : 0.05; break;
	case O_LOAD_CV: c->load_cv = parse_num(o->name, v, 0, 2); break;
	case O_MIX_CV: c->mix_cv = parse_num(o->name, v, 0, 2); break;
	case O_WEEKLY: c->weekly = parse_num(o->name, v, 0, 2); break;
	case O_DAILY: c->daily = parse_num(o->name, v, 0, 2); break;
	case O_SKEW: c->skew = parse_num(o->name, v, 0, 4); break;
	case O_CHURN: c->churn = parse_ulong(o->name, v, 0, 50); break;
	case O_REGRESSED: c->regressed = parse_num(o->name, v, 0, 1); break;
	case O_IMPROVED: c->improved = parse_num(o->name, v, 0, 1); break;
	case O_FACTORS:
		c->nfactors = parse_list(o->name, v, c->factors, 1.001, 20);
		break;
	case O_IMPROVE_FACTORS:
		c->nimprove = parse_list(o->name, v, c->improve_factors, 0.01, 0.999);
		break;
	case O_BANDS: c->nbands = parse_bands(v, c->bands); break;
	case O_START:
		if (!parse_time(&c->start, v) || strlen(v) != 10)
			usage_error("invalid value '%.40s' for --start: expected a date YYYY-MM-DD",
				    v);
		break;
	case O_VERBOSE: c->verbose = true; break;
	case O_HELP: print_help(); exit(EX_OK);
	}
}

static void parse_args(config *c, int argc, char **argv)
{
	config_defaults(c);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq, *val = NULL;
		const opt_def *o = NULL;
		size_t n;

		if (strcmp(a, "-h") == 0) {
			print_help();
			exit(EX_OK);
		}
		if (strncmp(a, "--", 2) != 0 || a[2] == '\0')
			usage_error("unexpected argument '%.60s'", a);
		eq = strchr(a, '=');
		n = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
		for (size_t k = 0; k < NELEM(opts); k++)
			if (strlen(opts[k].name) == n && strncmp(opts[k].name, a + 2, n) == 0)
				o = &opts[k];
		if (!o)
			usage_error("unknown option '%.*s'", (int)(n + 2 > 60 ? 60 : n + 2), a);
		if (eq) {
			if (o->arg == ARG_NONE)
				usage_error("option '--%s' takes no value", o->name);
			val = eq + 1;
		} else if (o->arg == ARG_REQUIRED) {
			if (i + 1 >= argc)
				usage_error("option '--%s' needs a value", o->name);
			val = argv[++i];
		} else if (o->arg == ARG_OPTIONAL && i + 1 < argc && argv[i + 1][0] != '-') {
			val = argv[++i];
		}
		apply_option(c, o, val);
	}
	if (c->verify && c->out)
		usage_error("give either --out or --verify, not both");
	if (!c->verify && !c->out)
		usage_error("--out DIR is required");
	if (c->regressed + c->improved > 1 + 1e-9)
		usage_error("--regressed plus --improved must not exceed 1");
}

/* ------------------------------------------------------------------ */
/* Word lists: what real Go, Java and Python profiles look like.        */

static const char *const domains[] = {
	"payments", "orders", "search", "catalog", "auth", "billing", "inventory",
	"shipping", "notify", "media", "ads", "feed", "geo", "pricing", "risk",
	"fraud", "users", "session", "cart", "checkout", "reviews", "recs",
	"messaging", "identity", "reporting", "loyalty", "tax", "invoices",
	"warehouse", "tracking",
};

static const char *const pkgs[] = {
	"ledger", "store", "cache", "handler", "api", "index", "ranker", "codec",
	"queue", "worker", "client", "repo", "model", "policy", "router",
	"validator", "encoder", "scheduler", "limiter", "resolver", "planner",
	"filter", "authz", "audit", "metrics", "batch", "stream", "render",
	"quota", "pricing",
};

static const char *const types[] = {
	"Book", "Server", "Client", "Store", "Cache", "Index", "Entry", "Batch",
	"Request", "Session", "Writer", "Reader", "Pool", "Tree", "Query", "Plan",
	"Shard", "Segment", "Builder", "Filter", "Account", "Order", "Item", "Cart",
	"Token", "Event", "Record", "Rule", "Tx", "Snapshot",
};

static const char *const verbs[] = {
	"get", "put", "post", "load", "save", "apply", "merge", "scan", "match",
	"rank", "score", "validate", "resolve", "render", "encode", "decode",
	"flush", "commit", "compact", "sort", "hash", "split", "build", "fetch",
	"parse", "check", "compute", "update", "find", "list", "lookup",
	"refresh", "sign", "verify", "emit", "handle",
};

static const char *const nouns[] = {
	"Entry", "Batch", "Key", "Header", "Row", "Page", "Token", "Price", "Items",
	"Index", "Rule", "Event", "Record", "Snapshot", "Limit", "Quote", "Total",
	"Balance", "Summary", "Query", "Result", "Payload", "Config", "IDs",
	"Fields", "Schema", "Offsets", "Window", "Bucket", "Route",
};

static const char *const java_suffixes[] = {
	"Service", "Repository", "Controller", "Handler", "Client", "Mapper",
	"Validator", "Cache", "Factory", "Impl", "Processor", "Resolver",
};

static const char *const py_modules[] = {
	"views", "models", "service", "utils", "tasks", "schemas", "core",
	"handlers", "serializers", "queries",
};

/*
 * Root chains are ';'-joined frames, root first. A background chain is
 * "chain|leaf|leaf...": threads that are not serving requests (garbage
 * collection, JIT compilation, schedulers), which take CPU in every real
 * profile.
 */
static const char *const go_serve[] = {
	"runtime.goexit;net/http.(*conn).serve;net/http.serverHandler.ServeHTTP;"
	"net/http.(*ServeMux).ServeHTTP;net/http.HandlerFunc.ServeHTTP",
	"runtime.goexit;google.golang.org/grpc.(*Server).serveStreams.func2.1;"
	"google.golang.org/grpc.(*Server).handleStream;"
	"google.golang.org/grpc.(*Server).processUnaryRPC",
	"runtime.goexit;github.com/segmentio/kafka-go.(*Reader).run;"
	"github.com/segmentio/kafka-go.(*reader).read",
	NULL,
};

static const char *const go_bg[] = {
	"runtime.goexit;runtime.gcBgMarkWorker;runtime.systemstack;runtime.gcDrain|"
	"runtime.scanobject|runtime.greyobject|runtime.findObject|"
	"runtime.markBits.isMarked|runtime.(*gcWork).tryGet",
	"runtime.mcall;runtime.park_m;runtime.schedule;runtime.findRunnable|runtime.netpoll|"
	"runtime.stealWork|runtime.runqgrab",
	"runtime.bgsweep;runtime.sweepone|runtime.(*sweepLocked).sweep|"
	"runtime.(*mspan).typePointersOfUnchecked",
	NULL,
};

static const char *const go_mid[] = {
	"encoding/json.Unmarshal", "encoding/json.Marshal", "fmt.Sprintf",
	"database/sql.(*DB).QueryContext", "github.com/jackc/pgx/v5.(*Conn).Query",
	"google.golang.org/protobuf/proto.Marshal",
	"google.golang.org/protobuf/proto.UnmarshalOptions.unmarshal",
	"go.uber.org/zap.(*Logger).Info", "net/http.(*Client).Do",
	"crypto/tls.(*Conn).Write", "compress/gzip.(*Writer).Write", "sort.Slice",
	"regexp.(*Regexp).FindStringSubmatch", "strconv.Quote",
	"github.com/redis/go-redis/v9.(*baseClient).process",
	"text/template.(*state).walk", "bufio.(*Writer).Flush", "io.Copy",
	"time.Parse", "github.com/prometheus/client_golang/prometheus.(*histogram).Observe",
	NULL,
};

static const char *const go_leaf[] = {
	"runtime.mallocgc", "runtime.memmove", "runtime.memclrNoHeapPointers",
	"runtime.mapaccess2_faststr", "runtime.mapassign_faststr", "runtime.growslice",
	"runtime.newobject", "runtime.makeslice", "runtime.concatstrings",
	"runtime.slicebytetostring", "runtime.typedmemmove", "runtime.memequal",
	"runtime.aeshashbody", "runtime.selectgo", "runtime.chansend1", "runtime.lock2",
	"runtime.nanotime1", "syscall.Syscall", "syscall.RawSyscall6",
	"internal/poll.(*FD).Write", "internal/poll.(*FD).Read",
	"encoding/json.(*decodeState).object", "encoding/json.checkValid",
	"encoding/json.(*encodeState).string", "reflect.Value.Field",
	"strconv.ParseFloat", "strconv.AppendInt", "fmt.(*pp).doPrintf",
	"crypto/sha256.block", "crypto/aes.gcmAesEnc", "hash/crc32.ieeeCLMUL",
	"compress/flate.(*compressor).deflate", "sync.(*Mutex).Lock",
	"sync.(*Pool).Get", "time.Now", "regexp.(*Regexp).doOnePass",
	"strings.Index", "bytes.(*Buffer).grow", "sort.insertionSort",
	"unicode/utf8.DecodeRuneInString", "runtime.cmpstring", "runtime.futex",
	"runtime.(*mheap).alloc", "runtime.(*mcache).refill",
	NULL,
};

static const char *const java_serve[] = {
	"java.lang.Thread.run;org.apache.tomcat.util.threads.ThreadPoolExecutor$Worker.run;"
	"org.apache.tomcat.util.threads.ThreadPoolExecutor.runWorker;"
	"org.apache.coyote.http11.Http11Processor.service;"
	"org.apache.catalina.connector.CoyoteAdapter.service;"
	"org.springframework.web.servlet.DispatcherServlet.doDispatch;"
	"org.springframework.web.method.support.InvocableHandlerMethod.invokeForRequest",
	"java.lang.Thread.run;io.netty.util.concurrent.FastThreadLocalRunnable.run;"
	"io.netty.channel.nio.NioEventLoop.run;io.grpc.internal.SerializingExecutor.run;"
	"io.grpc.stub.ServerCalls$UnaryServerCallHandler$UnaryServerCallListener.onHalfClose",
	"java.lang.Thread.run;"
	"org.springframework.kafka.listener.KafkaMessageListenerContainer$ListenerConsumer.run;"
	"org.springframework.kafka.listener."
	"KafkaMessageListenerContainer$ListenerConsumer.pollAndInvoke",
	NULL,
};

static const char *const java_bg[] = {
	"thread_native_entry(Thread*);Thread::call_run();WorkerThread::run()|"
	"G1ParEvacuateFollowersClosure::do_void()|G1ParScanThreadState::trim_queue_partially()|"
	"G1CMTask::do_marking_step(double, bool, bool)",
	"thread_native_entry(Thread*);Thread::call_run();JavaThread::thread_main_inner();"
	"CompileBroker::compiler_thread_loop()|"
	"C2Compiler::compile_method(ciEnv*, ciMethod*, int, bool, DirectiveSet*)|"
	"Compile::Optimize()|PhaseIdealLoop::build_and_optimize()",
	NULL,
};

static const char *const java_mid[] = {
	"com.fasterxml.jackson.databind.ObjectMapper.readValue",
	"com.fasterxml.jackson.databind.ObjectMapper.writeValueAsString",
	"org.hibernate.internal.SessionImpl.find", "org.hibernate.loader.Loader.doQuery",
	"com.zaxxer.hikari.pool.HikariProxyPreparedStatement.executeQuery",
	"java.util.stream.ReferencePipeline.collect", "java.lang.String.format",
	"ch.qos.logback.classic.Logger.info", "io.grpc.stub.ClientCalls.blockingUnaryCall",
	"okhttp3.internal.connection.RealCall.execute", "java.util.regex.Matcher.matches",
	"com.google.protobuf.CodedInputStream$ArrayDecoder.readMessage",
	"java.util.ArrayList.sort", "java.util.zip.GZIPOutputStream.write",
	"javax.crypto.Cipher.doFinal", "java.time.format.DateTimeFormatter.format",
	"io.micrometer.core.instrument.Timer.record", "redis.clients.jedis.Jedis.get",
	NULL,
};

static const char *const java_leaf[] = {
	"java.util.HashMap.getNode", "java.util.HashMap.putVal", "java.util.HashMap.resize",
	"java.lang.String.hashCode", "java.lang.String.equals",
	"java.lang.StringBuilder.append", "java.lang.AbstractStringBuilder.ensureCapacityInternal",
	"java.util.Arrays.copyOf", "java.util.ArrayList.grow", "java.lang.System.arraycopy",
	"java.util.regex.Pattern$CharProperty.match", "java.util.TimSort.mergeLo",
	"java.util.concurrent.ConcurrentHashMap.get", "jdk.internal.misc.Unsafe.park",
	"java.lang.Integer.parseInt", "java.lang.Long.toString", "java.math.BigDecimal.add",
	"java.util.UUID.randomUUID", "sun.nio.ch.SocketDispatcher.write0",
	"sun.nio.ch.SocketDispatcher.read0", "java.util.zip.Deflater.deflateBytesBytes",
	"com.sun.crypto.provider.GaloisCounterMode.encryptFinal",
	"sun.security.provider.SHA2.implCompress0",
	"com.fasterxml.jackson.core.json.UTF8StreamJsonParser.nextToken",
	"com.fasterxml.jackson.core.json.UTF8JsonGenerator.writeString",
	"java.lang.reflect.Method.invoke", "java.util.LinkedHashMap.get",
	"java.lang.ThreadLocal.get", "java.util.Formatter.parse",
	"org.postgresql.core.v3.QueryExecutorImpl.processResults",
	NULL,
};

static const char *const py_serve[] = {
	"<module> (gunicorn/app/wsgiapp.py);run (gunicorn/workers/sync.py);handle "
	"(gunicorn/workers/sync.py);handle_request (gunicorn/workers/sync.py);wsgi_app "
	"(flask/app.py);full_dispatch_request (flask/app.py);dispatch_request (flask/app.py)",
	"<module> (celery/__main__.py);main (celery/bin/celery.py);trace_task "
	"(celery/app/trace.py);__call__ (celery/app/task.py)",
	NULL,
};

static const char *const py_bg[] = {
	"_bootstrap (threading.py);_bootstrap_inner (threading.py);run (threading.py)|_worker "
	"(concurrent/futures/thread.py)|select (selectors.py)|_flush (sentry_sdk/worker.py)",
	NULL,
};

static const char *const py_mid[] = {
	"loads (json/__init__.py)", "dumps (json/__init__.py)",
	"execute (sqlalchemy/orm/session.py)", "_execute_context (sqlalchemy/engine/base.py)",
	"render_template (flask/templating.py)", "request (requests/sessions.py)",
	"validate_python (pydantic/type_adapter.py)", "info (logging/__init__.py)",
	"deepcopy (copy.py)", "sub (re/__init__.py)", "get (redis/commands/core.py)",
	"dump (marshmallow/schema.py)", "encode (jwt/api_jwt.py)",
	NULL,
};

static const char *const py_leaf[] = {
	"raw_decode (json/decoder.py)", "iterencode (json/encoder.py)",
	"_iterencode_dict (json/encoder.py)", "do_execute (sqlalchemy/engine/default.py)",
	"fetchall (psycopg2/extras.py)", "_deepcopy_dict (copy.py)",
	"_compile (re/__init__.py)", "recv_into (ssl.py)", "sendall (ssl.py)",
	"readinto (socket.py)", "format (logging/__init__.py)", "emit (logging/__init__.py)",
	"__get__ (sqlalchemy/orm/attributes.py)", "_instance (sqlalchemy/orm/loading.py)",
	"<listcomp> (sqlalchemy/orm/loading.py)", "__init__ (pydantic/main.py)",
	"_strptime (_strptime.py)", "urlencode (urllib/parse.py)", "quote (urllib/parse.py)",
	"b64encode (base64.py)", "hexdigest (hmac.py)", "render (jinja2/environment.py)",
	"send (requests/adapters.py)", "_read_status (http/client.py)",
	"__eq__ (decimal.py)", "_serialize (marshmallow/fields.py)",
	NULL,
};

struct service;
typedef void (*name_fn)(char *out, size_t n, const struct service *s, gsl_rng *r,
			unsigned salt);

typedef struct lang {
	const char *name;
	double weight; /* how common the language is in the fleet */
	const char *const *serve, *const *bg, *const *mid, *const *leaf;
	name_fn app_name;
} lang;

/* ------------------------------------------------------------------ */
/* The service model.                                                  */

enum node_kind { K_CHAIN, K_APP, K_MID, K_LEAF, K_BG };
enum role_kind { R_NULL, R_REGRESSED, R_IMPROVED };

typedef struct func {
	char *name;
	double cost;   /* intrinsic self cost, before the per-call-site factor */
	double share;  /* expected self share under the `cur` stack weights */
	uint32_t nstacks;
} func;

typedef struct node {
	uint32_t func, parent, first_child, next_sibling;
	uint32_t group; /* the endpoint or background thread it serves */
	uint8_t kind, depth;
	double w;       /* self weight of the stack ending here (baseline) */
} node;

typedef struct stack {
	char *text;     /* "root;...;leaf" */
	uint32_t func;  /* the leaf */
	uint32_t group, node;
	uint32_t from, until; /* the releases that run it: from <= release < until */
	double base, cur;
} stack;

typedef struct role {
	int kind;
	size_t band;
	double factor;
} role;

typedef struct service {
	char name[32];
	const lang *lang;
	unsigned domain, npkg, pkg[MAX_PKG], ntype[MAX_PKG], type[MAX_PKG][MAX_TYPES];

	func *funcs;
	size_t nfuncs, funcs_cap;
	uint32_t *slots; /* open-addressing name set: function index + 1 */
	size_t nslots;

	node *nodes;
	size_t nnodes, nodes_cap;
	uint32_t first_root;
	uint32_t *apps;  /* application nodes, in creation order */
	size_t napps, apps_cap;

	stack *stacks;
	size_t nstacks;

	role role;
	bool noisy;            /* its last baseline release has noisier captures */
	uint32_t target;       /* changed function, NONE for a null service */
	double target_base;    /* its expected share before the change */

	unsigned nhosts;
	char hosts[MAX_HOSTS][48];
	char (*commits)[41];   /* one per release, the current one last */
} service;

static unsigned pick(gsl_rng *r, size_t n)
{
	return (unsigned)gsl_rng_uniform_int(r, (unsigned long)n);
}

static size_t count_list(const char *const *l)
{
	size_t n = 0;

	while (l[n])
		n++;
	return n;
}

/* A mean-1 lognormal multiplier with coefficient of variation cv. */
static double noise(gsl_rng *r, double cv)
{
	double s2;

	if (cv <= 0)
		return 1;
	s2 = log1p(cv * cv);
	return gsl_ran_lognormal(r, -s2 / 2, sqrt(s2));
}

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Stream `stream` of seed `seed`: mt19937 takes a 32-bit seed, 0 not allowed. */
static void rng_seed(gsl_rng *r, uint64_t seed, uint64_t stream)
{
	unsigned long s = (unsigned long)(splitmix64(seed ^ splitmix64(stream)) & 0xffffffffu);

	gsl_rng_set(r, s ? s : 1);
}

/*
 * The stream of service `index`'s traffic mix on `day` (days since
 * 1970-01-01): a stream of its own, apart from the service's, so that
 * fleets without --daily draw exactly what they drew before, and a date's
 * mix does not depend on --per-day, --cv or any other draw. The tag keeps
 * these streams clear of the small numbers the services' streams use.
 */
static void daily_seed(gsl_rng *r, uint64_t seed, size_t index, int64_t day)
{
	rng_seed(r, seed, splitmix64(0x6461696c79ULL ^ splitmix64(index)) ^ (uint64_t)day);
}

static void capitalise(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src);
	if (dst[0] >= 'a' && dst[0] <= 'z')
		dst[0] = (char)(dst[0] - 'a' + 'A');
}

static void lowercase(char *dst, size_t n, const char *src)
{
	size_t i;

	for (i = 0; src[i] && i + 1 < n; i++)
		dst[i] = (char)(src[i] >= 'A' && src[i] <= 'Z' ? src[i] - 'A' + 'a' : src[i]);
	dst[i] = '\0';
}

/* "postEntry", "PostEntry", "post" or "Post", with the salt appended. */
static void method_name(char *out, size_t n, gsl_rng *r, bool exported, bool noun,
			unsigned salt)
{
	char v[32], num[16] = "";

	if (exported)
		capitalise(v, sizeof(v), verbs[pick(r, NELEM(verbs))]);
	else
		snprintf(v, sizeof(v), "%s", verbs[pick(r, NELEM(verbs))]);
	if (salt)
		snprintf(num, sizeof(num), "%u", salt);
	snprintf(out, n, "%s%s%s", v, noun ? nouns[pick(r, NELEM(nouns))] : "", num);
}

/* A package of this service and one of its types. */
static void pick_pkg(const service *s, gsl_rng *r, const char **pkg, const char **type)
{
	unsigned p = pick(r, s->npkg);

	*pkg = pkgs[s->pkg[p]];
	*type = types[s->type[p][pick(r, s->ntype[p])]];
}

/* payments/ledger.(*Book).Post, payments/ledger.parseEntry, ... */
static void go_name(char *out, size_t n, const service *s, gsl_rng *r, unsigned salt)
{
	const char *dom = domains[s->domain], *pkg, *type;
	double u = gsl_rng_uniform(r);
	char m[64];

	pick_pkg(s, r, &pkg, &type);
	if (u < 0.45) {
		method_name(m, sizeof(m), r, true, gsl_rng_uniform(r) < 0.5, salt);
		snprintf(out, n, "%s/%s.(*%s).%s", dom, pkg, type, m);
	} else if (u < 0.55) {
		method_name(m, sizeof(m), r, true, gsl_rng_uniform(r) < 0.5, salt);
		snprintf(out, n, "%s/%s.%s.%s", dom, pkg, type, m);
	} else if (u < 0.80) {
		method_name(m, sizeof(m), r, false, true, salt);
		snprintf(out, n, "%s/%s.%s", dom, pkg, m);
	} else if (u < 0.90) {
		method_name(m, sizeof(m), r, true, gsl_rng_uniform(r) < 0.5, salt);
		snprintf(out, n, "%s/%s.(*%s).%s.func%u", dom, pkg, type, m, 1 + pick(r, 3));
	} else {
		method_name(m, sizeof(m), r, true, true, salt);
		snprintf(out, n, "%s/internal/%s.%s", dom, pkg, m);
	}
}

/* com.acme.payments.ledger.BookService.postEntry, ... */
static void java_name(char *out, size_t n, const service *s, gsl_rng *r, unsigned salt)
{
	const char *dom = domains[s->domain], *pkg, *type;
	const char *suffix = java_suffixes[pick(r, NELEM(java_suffixes))];
	double u = gsl_rng_uniform(r);
	char m[64];

	pick_pkg(s, r, &pkg, &type);
	method_name(m, sizeof(m), r, false, gsl_rng_uniform(r) < 0.6, salt);
	if (u < 0.8)
		snprintf(out, n, "com.acme.%s.%s.%s%s.%s", dom, pkg, type, suffix, m);
	else if (u < 0.9)
		snprintf(out, n, "com.acme.%s.%s.%s%s.lambda$%s$%u", dom, pkg, type, suffix, m,
			 pick(r, 8));
	else
		snprintf(out, n, "com.acme.%s.%s.%s%s$Builder.%s", dom, pkg, type, suffix, m);
}

/* post_entry (payments/ledger.py), ... as py-spy writes frames. */
static void py_name(char *out, size_t n, const service *s, gsl_rng *r, unsigned salt)
{
	const char *dom = domains[s->domain], *pkg, *type;
	char m[64], noun[32] = "", num[16] = "";

	pick_pkg(s, r, &pkg, &type);
	(void)type;
	if (gsl_rng_uniform(r) < 0.8)
		lowercase(noun, sizeof(noun), nouns[pick(r, NELEM(nouns))]);
	if (salt)
		snprintf(num, sizeof(num), "%u", salt);
	snprintf(m, sizeof(m), "%s%s%s%s", verbs[pick(r, NELEM(verbs))], noun[0] ? "_" : "",
		 noun, num);
	if (gsl_rng_uniform(r) < 0.7)
		snprintf(out, n, "%s (%s/%s.py)", m, dom, pkg);
	else
		snprintf(out, n, "%s (%s/%s/%s.py)", m, dom, pkg,
			 py_modules[pick(r, NELEM(py_modules))]);
}

static const lang langs[] = {
	{"go", 0.6, go_serve, go_bg, go_mid, go_leaf, go_name},
	{"java", 0.25, java_serve, java_bg, java_mid, java_leaf, java_name},
	{"python", 0.15, py_serve, py_bg, py_mid, py_leaf, py_name},
};

static uint32_t hash_name(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* Index of the function called `name`, or NONE. */
static uint32_t func_find(const service *s, const char *name)
{
	if (s->nslots == 0)
		return NONE;
	for (size_t i = hash_name(name) & (s->nslots - 1);; i = (i + 1) & (s->nslots - 1)) {
		uint32_t v = s->slots[i];
		if (!v)
			return NONE;
		if (strcmp(s->funcs[v - 1].name, name) == 0)
			return v - 1;
	}
}

/* The function called `name`, added when new. */
static uint32_t func_intern(service *s, const char *name)
{
	uint32_t id = func_find(s, name);
	size_t i;

	if (id != NONE)
		return id;
	if ((s->nfuncs + 1) * 2 > s->nslots) {
		size_t old = s->nslots;
		uint32_t *prev = s->slots;
		s->nslots = old ? old * 2 : 1024;
		s->slots = xcalloc(s->nslots, sizeof(*s->slots));
		for (size_t k = 0; k < old; k++) {
			if (!prev[k])
				continue;
			for (i = hash_name(s->funcs[prev[k] - 1].name) & (s->nslots - 1);
			     s->slots[i]; i = (i + 1) & (s->nslots - 1))
				;
			s->slots[i] = prev[k];
		}
		free(prev);
	}
	s->funcs = grow(s->funcs, &s->funcs_cap, s->nfuncs + 1, sizeof(*s->funcs));
	s->funcs[s->nfuncs] = (func){xstrdup(name), 0, 0, 0};
	for (i = hash_name(name) & (s->nslots - 1); s->slots[i]; i = (i + 1) & (s->nslots - 1))
		;
	s->slots[i] = (uint32_t)++s->nfuncs;
	return (uint32_t)(s->nfuncs - 1);
}

/*
 * The node for `func` called from `parent` (NONE: a root), added when new:
 * the tree is a trie of call paths, so a path is never there twice.
 */
static uint32_t node_child(service *s, uint32_t parent, uint32_t fn, int kind)
{
	uint32_t *link = parent == NONE ? &s->first_root : &s->nodes[parent].first_child;
	uint32_t id;

	for (uint32_t c = *link; c != NONE; c = s->nodes[c].next_sibling)
		if (s->nodes[c].func == fn)
			return c;
	s->nodes = grow(s->nodes, &s->nodes_cap, s->nnodes + 1, sizeof(*s->nodes));
	id = (uint32_t)s->nnodes++;
	/* Re-take the link: grow() may have moved the nodes. */
	link = parent == NONE ? &s->first_root : &s->nodes[parent].first_child;
	s->nodes[id] = (node){
		.func = fn, .parent = parent, .first_child = NONE, .next_sibling = *link,
		.kind = (uint8_t)kind,
		.depth = (uint8_t)(parent == NONE ? 1 : s->nodes[parent].depth + 1),
	};
	*link = id;
	/* An endpoint handler (an app function called from a root chain)
	 * starts a traffic group; everything below it belongs to that group. */
	if (parent == NONE || (kind == K_APP && s->nodes[parent].kind == K_CHAIN))
		s->nodes[id].group = id;
	else
		s->nodes[id].group = s->nodes[parent].group;
	if (kind == K_APP) {
		s->apps = grow(s->apps, &s->apps_cap, s->napps + 1, sizeof(*s->apps));
		s->apps[s->napps++] = id;
	}
	return id;
}

/* Insert "a;b;c" below `parent`; returns the node of its last frame. */
static uint32_t insert_chain(service *s, uint32_t parent, const char *chain, size_t len)
{
	char name[256];

	while (len > 0) {
		const char *semi = memchr(chain, ';', len);
		size_t n = semi ? (size_t)(semi - chain) : len;
		snprintf(name, sizeof(name), "%.*s", (int)n, chain);
		parent = node_child(s, parent, func_intern(s, name), K_CHAIN);
		if (!semi)
			break;
		chain = semi + 1;
		len -= n + 1;
	}
	return parent;
}

/* A background chain and its leaves. */
static void insert_background(service *s, const char *spec)
{
	const char *bar = strchr(spec, '|');
	uint32_t tip = insert_chain(s, NONE, spec, bar ? (size_t)(bar - spec) : strlen(spec));
	char name[256];

	while (bar) {
		const char *next = strchr(bar + 1, '|');
		size_t n = next ? (size_t)(next - bar - 1) : strlen(bar + 1);
		snprintf(name, sizeof(name), "%.*s", (int)n, bar + 1);
		node_child(s, tip, func_intern(s, name), K_BG);
		bar = next;
	}
}

/* A random application node at most `max_depth` deep; NONE if none is. */
static uint32_t random_app(const service *s, gsl_rng *r, unsigned max_depth)
{
	for (int tries = 0; tries < 64; tries++) {
		uint32_t id = s->apps[pick(r, s->napps)];
		if (s->nodes[id].depth <= max_depth)
			return id;
	}
	for (size_t i = 0; i < s->napps; i++)
		if (s->nodes[s->apps[i]].depth <= max_depth)
			return s->apps[i];
	return NONE;
}

/* Names, packages and language of a service. */
static void choose_identity(service *s, const config *c, size_t index, gsl_rng *r)
{
	double u = gsl_rng_uniform(r), acc = 0;
	unsigned perm[NELEM(pkgs)];

	snprintf(s->name, sizeof(s->name), "svc-%03zu", index);
	s->lang = &langs[0];
	for (size_t i = 0; i < NELEM(langs); i++) {
		acc += langs[i].weight;
		if (u < acc) {
			s->lang = &langs[i];
			break;
		}
	}
	s->domain = pick(r, NELEM(domains));
	for (unsigned i = 0; i < NELEM(pkgs); i++)
		perm[i] = i;
	gsl_ran_shuffle(r, perm, NELEM(pkgs), sizeof(perm[0]));
	s->npkg = 3 + pick(r, MAX_PKG - 2);
	for (unsigned p = 0; p < s->npkg; p++) {
		s->pkg[p] = perm[p];
		s->ntype[p] = 1 + pick(r, MAX_TYPES);
		for (unsigned t = 0; t < s->ntype[p]; t++)
			s->type[p][t] = pick(r, NELEM(types));
	}
	/* Hosts look like Kubernetes pods: svc-000-7f9c4d-x2kq8. */
	s->nhosts = (unsigned)(c->hosts / 2 + pick(r, c->hosts + 1));
	if (s->nhosts < 1)
		s->nhosts = 1;
	if (s->nhosts > MAX_HOSTS)
		s->nhosts = MAX_HOSTS;
	for (unsigned h = 0; h < s->nhosts; h++) {
		static const char alnum[] = "0123456789abcdefghijklmnopqrstuvwxyz";
		char id[13];
		for (int k = 0; k < 12; k++)
			id[k] = alnum[pick(r, k < 6 ? 16 : 36)];
		id[6] = '-';
		id[12] = '\0';
		snprintf(s->hosts[h], sizeof(s->hosts[h]), "svc-%03zu-%s", index, id);
	}
}

/* Pick up to k distinct entries of a NULL-terminated list and intern them;
 * out holds k. */
static void intern_some(service *s, gsl_rng *r, const char *const *list, size_t k,
			uint32_t *out, size_t *nout)
{
	size_t n = count_list(list);
	unsigned *idx = xcalloc(n, sizeof(*idx));

	for (unsigned i = 0; i < n; i++)
		idx[i] = i;
	gsl_ran_shuffle(r, idx, n, sizeof(*idx));
	*nout = 0;
	for (size_t i = 0; i < n && *nout < k; i++) {
		if (func_find(s, list[idx[i]]) != NONE)
			continue; /* already a root frame: would recurse */
		out[(*nout)++] = func_intern(s, list[idx[i]]);
	}
	free(idx);
}

/* A new, unique application function name. */
static uint32_t new_app_func(service *s, gsl_rng *r)
{
	char name[256];

	for (unsigned salt = 0;; salt++) {
		/* A few plain draws first; then a numeric suffix guarantees
		 * progress when the word lists run out of combinations. */
		unsigned tries = salt == 0 ? 40 : 1;
		for (unsigned t = 0; t < tries; t++) {
			s->lang->app_name(name, sizeof(name), s, r, salt);
			if (func_find(s, name) == NONE)
				return func_intern(s, name);
		}
	}
}

/*
 * The call tree: root chains of the language's server framework, endpoint
 * handlers below them, application code below those (a random recursive
 * tree with a bias towards extending the newest path, for deep stacks),
 * libraries called from several places, and background threads.
 */
static void build_tree(service *s, gsl_rng *r, size_t nfuncs)
{
	const lang *L = s->lang;
	size_t nserve = count_list(L->serve), nbg = count_list(L->bg);
	size_t nchains = 1 + (gsl_rng_uniform(r) < 0.3), nmid, nleaf, napp, nhandlers;
	uint32_t tips[4], mids[64], leaves[64];
	unsigned order[8];

	s->first_root = NONE;
	if (nserve > NELEM(order))
		nserve = NELEM(order);
	for (unsigned i = 0; i < nserve; i++)
		order[i] = i;
	gsl_ran_shuffle(r, order, nserve, sizeof(order[0]));
	if (nchains > nserve)
		nchains = nserve;
	for (size_t i = 0; i < nchains; i++)
		tips[i] = insert_chain(s, NONE, L->serve[order[i]], strlen(L->serve[order[i]]));
	for (size_t i = 0; i < nbg; i++)
		if (i == 0 || gsl_rng_uniform(r) < 0.6)
			insert_background(s, L->bg[i]);

	nmid = (size_t)((double)nfuncs * 0.07) + 1;
	nleaf = (size_t)((double)nfuncs * 0.13) + 2;
	intern_some(s, r, L->mid, nmid < NELEM(mids) ? nmid : NELEM(mids), mids, &nmid);
	intern_some(s, r, L->leaf, nleaf < NELEM(leaves) ? nleaf : NELEM(leaves), leaves, &nleaf);
	napp = nfuncs > s->nfuncs + 8 ? nfuncs - s->nfuncs : 8;
	nhandlers = napp / 8 > nchains ? napp / 8 : nchains;

	for (size_t i = 0; i < napp; i++) {
		uint32_t fn = new_app_func(s, r), parent;
		if (i < nhandlers) {
			parent = tips[i < nchains ? i : pick(r, nchains)];
		} else {
			uint32_t last = s->apps[s->napps - 1];
			parent = gsl_rng_uniform(r) < 0.35 && s->nodes[last].depth <= MAX_DEPTH - 3
					 ? last
					 : random_app(s, r, MAX_DEPTH - 3);
			if (parent == NONE)
				parent = s->apps[pick(r, nhandlers)];
		}
		node_child(s, parent, fn, K_APP);
	}
	/* Libraries: a mid-level call (json.Unmarshal) from one to three
	 * places, each reaching one to three leaf routines (mallocgc); and
	 * each leaf routine also called directly from one to three places.
	 * This is what makes several stacks end in the same function. */
	for (size_t i = 0; i < nmid; i++) {
		for (unsigned k = 1 + pick(r, 3); k > 0; k--) {
			uint32_t at = random_app(s, r, MAX_DEPTH - 2), m;
			if (at == NONE)
				break;
			m = node_child(s, at, mids[i], K_MID);
			for (unsigned j = 1 + pick(r, 3); j > 0 && nleaf; j--)
				node_child(s, m, leaves[pick(r, nleaf)], K_LEAF);
		}
	}
	for (size_t i = 0; i < nleaf; i++) {
		for (unsigned k = 1 + pick(r, 3); k > 0; k--) {
			uint32_t at = random_app(s, r, MAX_DEPTH - 1);
			if (at != NONE)
				node_child(s, at, leaves[i], K_LEAF);
		}
	}
}

/*
 * Self weights: a heavy-tailed cost per function times a per-call-site
 * factor, so that a few functions hold most of the time and many hold
 * next to none. Dispatch frames above depth MIN_DEPTH and some interior
 * frames do no work of their own. Background threads are scaled to take
 * 2-12% of the service's time.
 */
static void assign_weights(service *s, const config *c, gsl_rng *r)
{
	double fg = 0, bg = 0, target, k;

	for (size_t f = 0; f < s->nfuncs; f++)
		s->funcs[f].cost = gsl_ran_lognormal(r, 0, c->skew);
	for (size_t i = 0; i < s->nnodes; i++) {
		node *n = &s->nodes[i];
		double w = s->funcs[n->func].cost * gsl_ran_lognormal(r, 0, 0.8);
		bool interior = n->first_child != NONE;

		if (n->kind == K_CHAIN || n->depth < MIN_DEPTH)
			w = 0;
		else if (interior && gsl_rng_uniform(r) < (n->kind == K_MID ? 0.5 : 0.4))
			w = 0;
		else if (interior)
			w *= 0.3;
		n->w = w;
		if (n->kind == K_BG)
			bg += w;
		else
			fg += w;
	}
	target = 0.02 + 0.10 * gsl_rng_uniform(r);
	k = bg > 0 ? target * fg / ((1 - target) * bg) : 1;
	for (size_t i = 0; i < s->nnodes; i++)
		if (s->nodes[i].kind == K_BG)
			s->nodes[i].w *= k;
}

static int cmp_stack(const void *a, const void *b)
{
	return strcmp(((const stack *)a)->text, ((const stack *)b)->text);
}

/* The stack that ends at node i, run from release `from` on. */
static stack stack_of(const service *s, uint32_t i, uint32_t from)
{
	sbuf text = {0};
	uint32_t path[MAX_DEPTH + 8];
	size_t depth = 0;

	for (uint32_t id = i; id != NONE; id = s->nodes[id].parent)
		path[depth++] = id;
	for (size_t d = depth; d-- > 0;)
		sb_printf(&text, "%s%s", s->funcs[s->nodes[path[d]].func].name, d ? ";" : "");
	return (stack){
		.text = text.ptr,
		.func = s->nodes[i].func,
		.group = s->nodes[i].group,
		.node = i,
		.from = from,
		.until = NONE,
		.base = s->nodes[i].w,
		.cur = s->nodes[i].w,
	};
}

/* Every node with self weight becomes a stack, in sorted text order as
 * stackcollapse tools write them. */
static void collect_stacks(service *s)
{
	s->stacks = xcalloc(s->nnodes, sizeof(*s->stacks));
	s->nstacks = 0;
	for (size_t i = 0; i < s->nnodes; i++)
		if (s->nodes[i].w > 0)
			s->stacks[s->nstacks++] = stack_of(s, (uint32_t)i, 0);
	qsort(s->stacks, s->nstacks, sizeof(*s->stacks), cmp_stack);
}

/*
 * --churn: each baseline release after the first changes code, as real
 * releases do: n application code paths stop (their stacks get no samples
 * from that release on) and n new functions start, each called from an
 * application frame and costing what a leaf would. The new release keeps
 * the code of the last baseline release, so a null service stays null.
 */
static void churn(service *s, const config *c, size_t nrel, gsl_rng *r)
{
	for (uint32_t rel = 1; rel < nrel; rel++) {
		for (unsigned long k = 0; k < c->churn; k++) {
			uint32_t *cand = xcalloc(s->nstacks, sizeof(*cand)), fn, parent, id;
			size_t n = 0;

			for (size_t i = 0; i < s->nstacks; i++)
				if (s->stacks[i].until == NONE && s->stacks[i].from < rel &&
				    s->nodes[s->stacks[i].node].kind == K_APP)
					cand[n++] = (uint32_t)i;
			if (n > 0)
				s->stacks[cand[pick(r, n)]].until = rel;
			free(cand);
			fn = new_app_func(s, r);
			if ((parent = random_app(s, r, MAX_DEPTH - 1)) == NONE)
				continue;
			id = node_child(s, parent, fn, K_APP);
			s->funcs[fn].cost = gsl_ran_lognormal(r, 0, c->skew);
			s->nodes[id].w = s->funcs[fn].cost * gsl_ran_lognormal(r, 0, 0.8);
			s->stacks = xrealloc(s->stacks, (s->nstacks + 1) * sizeof(*s->stacks));
			s->stacks[s->nstacks++] = stack_of(s, id, rel);
		}
	}
	qsort(s->stacks, s->nstacks, sizeof(*s->stacks), cmp_stack);
}

/* Expected self shares under the `cur` weights of the code the new
 * release runs, and stacks per function. */
static void compute_shares(service *s)
{
	double total = 0;

	for (size_t f = 0; f < s->nfuncs; f++)
		s->funcs[f].share = 0, s->funcs[f].nstacks = 0;
	for (size_t i = 0; i < s->nstacks; i++) {
		if (s->stacks[i].until != NONE)
			continue;
		total += s->stacks[i].cur;
		s->funcs[s->stacks[i].func].share += s->stacks[i].cur;
		s->funcs[s->stacks[i].func].nstacks++;
	}
	for (size_t f = 0; f < s->nfuncs; f++)
		s->funcs[f].share /= total;
}

static void scale_func(service *s, uint32_t fn, double k, bool baseline_too)
{
	for (size_t i = 0; i < s->nstacks; i++) {
		if (s->stacks[i].func != fn)
			continue;
		s->stacks[i].cur *= k;
		if (baseline_too)
			s->stacks[i].base *= k;
	}
}

/*
 * A function whose baseline self share lies in band b. When none does
 * (a small service may have nothing at 10-30%), the closest one is made
 * to: its cost is scaled to a log-uniform share inside the band, before
 * any capture is drawn, so the truth still describes the baseline.
 */
static uint32_t pick_in_band(service *s, gsl_rng *r, const band *b)
{
	uint32_t *cand = xcalloc(s->nfuncs, sizeof(*cand)), best = NONE, fn;
	size_t n = 0;
	double mid = log(sqrt(b->lo * b->hi)), bestd = HUGE_VAL;

	for (size_t f = 0; f < s->nfuncs; f++) {
		double sh = s->funcs[f].share;
		if (sh <= 0)
			continue;
		if (sh >= b->lo && sh < b->hi)
			cand[n++] = (uint32_t)f;
		if (fabs(log(sh) - mid) < bestd)
			bestd = fabs(log(sh) - mid), best = (uint32_t)f;
	}
	if (n > 0) {
		fn = cand[pick(r, n)];
	} else {
		double sh = s->funcs[best].share;
		double t = exp(log(b->lo) + gsl_rng_uniform(r) * (log(b->hi) - log(b->lo)));
		fn = best;
		scale_func(s, fn, t * (1 - sh) / (sh * (1 - t)), true);
		compute_shares(s);
	}
	free(cand);
	return fn;
}

/* Apply the service's role: find its function and change the new release. */
static void apply_role(service *s, const config *c, gsl_rng *r)
{
	compute_shares(s);
	s->target = NONE;
	if (s->role.kind == R_NULL)
		return;
	s->target = pick_in_band(s, r, &c->bands[s->role.band]);
	s->target_base = s->funcs[s->target].share;
	scale_func(s, s->target, s->role.factor, false);
	compute_shares(s);
}

static void service_build(service *s, const config *c, size_t index, gsl_rng *r)
{
	double lo = log(0.4 * (double)c->functions), hi = log(2.0 * (double)c->functions);
	size_t nfuncs = (size_t)lround(exp(lo + gsl_rng_uniform(r) * (hi - lo)));
	size_t nrel = (c->days - 1) / c->release_every + 2;

	memset(s, 0, sizeof(*s));
	choose_identity(s, c, index, r);
	build_tree(s, r, nfuncs < 20 ? 20 : nfuncs);
	assign_weights(s, c, r);
	collect_stacks(s);
	s->commits = xcalloc(nrel, sizeof(*s->commits));
	for (size_t k = 0; k < nrel; k++)
		for (int j = 0; j < 40; j++)
			s->commits[k][j] = "0123456789abcdef"[pick(r, 16)];
}

static void service_free(service *s)
{
	for (size_t i = 0; i < s->nfuncs; i++)
		free(s->funcs[i].name);
	for (size_t i = 0; i < s->nstacks; i++)
		free(s->stacks[i].text);
	free(s->funcs);
	free(s->slots);
	free(s->nodes);
	free(s->apps);
	free(s->stacks);
	free(s->commits);
}

/* ------------------------------------------------------------------ */
/* Writing the fleet.                                                  */

static void mkdirs(const char *path)
{
	char tmp[4096];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof(tmp))
		die(EX_RUNTIME, "cannot create directory '%.200s': bad path", path);
	memcpy(tmp, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (tmp[i] != '/' && tmp[i] != '\0')
			continue;
		tmp[i] = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			die(EX_RUNTIME, "cannot create directory '%s': %s", tmp, strerror(errno));
		tmp[i] = i < n ? '/' : '\0';
	}
}

/*
 * A listing (manifest.jsonl, truth.jsonl, services.txt) is written to a
 * temporary file as the services are generated, a service at a time so
 * that a large fleet never sits in memory, and renamed into place at the
 * end, so that a reader never sees half of one.
 */
typedef struct listing {
	FILE *f;
	char path[4200], tmp[4210];
} listing;

static void listing_open(listing *l, const char *dir, const char *name)
{
	snprintf(l->path, sizeof(l->path), "%s/%s", dir, name);
	snprintf(l->tmp, sizeof(l->tmp), "%s.tmp", l->path);
	if (!(l->f = fopen(l->tmp, "w")))
		die(EX_RUNTIME, "cannot write '%s': %s", l->tmp, strerror(errno));
}

/* Append b's contents and empty it. */
static void listing_put(listing *l, sbuf *b)
{
	if (b->len && fwrite(b->ptr, 1, b->len, l->f) != b->len)
		die(EX_RUNTIME, "cannot write '%s': %s", l->tmp, strerror(errno));
	b->len = 0;
}

static void listing_commit(listing *l)
{
	bool bad = ferror(l->f) != 0;

	/* fclose always runs: it flushes, and its failure counts too. */
	if (fclose(l->f) != 0)
		bad = true;
	l->f = NULL;
	if (bad)
		die(EX_RUNTIME, "cannot write '%s': %s", l->tmp, strerror(errno));
	if (rename(l->tmp, l->path) < 0)
		die(EX_RUNTIME, "cannot rename '%s': %s", l->tmp, strerror(errno));
}

static void write_folded(const char *path, const service *s, const unsigned *counts)
{
	static char iobuf[1 << 16];
	FILE *f = fopen(path, "w");
	bool bad;

	if (!f)
		die(EX_RUNTIME, "cannot write '%s': %s", path, strerror(errno));
	setvbuf(f, iobuf, _IOFBF, sizeof(iobuf));
	for (size_t i = 0; i < s->nstacks; i++)
		if (counts[i])
			fprintf(f, "%s %u\n", s->stacks[i].text, counts[i]);
	bad = ferror(f) != 0;
	if (fclose(f) != 0)
		bad = true;
	if (bad)
		die(EX_RUNTIME, "cannot write '%s': %s", path, strerror(errno));
}

typedef struct schedule {
	size_t nbase, ncap, nrel; /* nrel: baseline releases */
	int64_t night, at;        /* the analysed night and its end */
} schedule;

static void schedule_init(schedule *sc, const config *c)
{
	sc->nbase = c->days * c->per_day;
	sc->ncap = sc->nbase + c->current * c->nights;
	sc->nrel = (c->days - 1) / c->release_every + 1;
	sc->night = c->start + (int64_t)c->days * DAY_S;
	sc->at = sc->night + (int64_t)c->nights * DAY_S;
}

/* When capture k was taken and which release (0-based) was running:
 * captures are spread over each day, one per equal slot, jittered. */
static int64_t capture_time(const config *c, const schedule *sc, size_t k, gsl_rng *r,
			    size_t *release)
{
	double jitter = 0.1 + 0.8 * gsl_rng_uniform(r);

	if (k < sc->nbase) {
		size_t day = k / c->per_day, slot = k % c->per_day;
		*release = day / c->release_every;
		return c->start + (int64_t)day * DAY_S +
		       (int64_t)((slot + jitter) * DAY_S / (double)c->per_day);
	}
	*release = sc->nrel;
	k -= sc->nbase;
	return sc->night + (int64_t)(k / c->current) * DAY_S +
	       (int64_t)((k % c->current + jitter) * DAY_S / (double)c->current);
}

/*
 * Draw and write every capture of a service. A capture's weights are the
 * release's weights times per-stack noise (times the host's offsets and
 * the endpoints' traffic mix when enabled); its sample count is --samples
 * scaled by load and by the release's total cost, since a fixed-length
 * CPU profile at a fixed rate collects more samples when more CPU is used.
 */
static void write_captures(const config *c, const schedule *sc, service *s, size_t index,
			   gsl_rng *r, sbuf *manifest)
{
	size_t K = s->nstacks;
	double *p = xcalloc(K, sizeof(*p)), *host = NULL, *mix = xcalloc(s->nnodes, sizeof(*mix));
	double *weekend = NULL, *daily = NULL;
	int64_t daily_day = INT64_MIN;
	gsl_rng *dr = NULL;
	unsigned *counts = xcalloc(K, sizeof(*counts));
	double base_total = 0, cur_total = 0;
	char dir[4200], path[4300], when[TIME_TEXT];

	snprintf(dir, sizeof(dir), "%s/%s", c->out, s->name);
	mkdirs(dir);
	/* A release's total cost is the new release's code's (--churn moves a few
	 * paths, which a profile of fixed length shows as shares, not counts). */
	for (size_t i = 0; i < K; i++)
		if (s->stacks[i].until == NONE)
			base_total += s->stacks[i].base, cur_total += s->stacks[i].cur;
	if (c->host_cv > 0) {
		host = xcalloc(s->nhosts * K, sizeof(*host));
		for (size_t i = 0; i < s->nhosts * K; i++)
			host[i] = noise(r, c->host_cv);
	}
	if (c->weekly > 0) { /* drawn only when asked, so fleets without a week stay the same */
		weekend = xcalloc(s->nnodes, sizeof(*weekend));
		for (size_t g = 0; g < s->nnodes; g++)
			weekend[g] = s->nodes[g].group == g ? noise(r, c->weekly) : 1;
	}
	if (c->daily > 0) {
		daily = xcalloc(s->nnodes, sizeof(*daily));
		if (!(dr = gsl_rng_alloc(gsl_rng_mt19937)))
			die(EX_RUNTIME, "out of memory");
	}
	for (size_t k = 0; k < sc->ncap; k++) {
		size_t rel;
		int64_t t = capture_time(c, sc, k, r, &rel);
		/* 1 January 1970 was a Thursday: day 2 is a Saturday. */
		bool on_weekend = weekend && (t / DAY_S) % 7 >= 2 && (t / DAY_S) % 7 <= 3;
		/* The calendar day, rounded down for times before 1970 too. */
		int64_t day = t >= 0 ? t / DAY_S : -((-t + DAY_S - 1) / DAY_S);
		unsigned h = pick(r, s->nhosts);
		bool current = k >= sc->nbase;
		double n = (double)c->samples * noise(r, c->load_cv) *
			   (current ? cur_total / base_total : 1);
		/* The release before the new one, when it is the noisy one. */
		double cv = s->noisy && !current && sc->nrel >= 2 && rel == sc->nrel - 1
			    ? c->cv * c->noisy_factor : c->cv;

		/* Captures come in time order, so a day's factors are drawn at
		 * its first capture and shared by the rest of its captures. */
		if (daily && day != daily_day) {
			daily_seed(dr, c->seed, index, day);
			for (size_t g = 0; g < s->nnodes; g++)
				daily[g] = s->nodes[g].group == g ? noise(dr, c->daily) : 1;
			daily_day = day;
		}
		for (size_t g = 0; g < s->nnodes; g++)
			mix[g] = (s->nodes[g].group == g ? noise(r, c->mix_cv) : 1) *
				 (on_weekend ? weekend[g] : 1) * (daily ? daily[g] : 1);
		for (size_t i = 0; i < K; i++)
			p[i] = (rel < s->stacks[i].from || rel >= s->stacks[i].until ? 0
				: current ? s->stacks[i].cur
					  : s->stacks[i].base) *
			       (host ? host[h * K + i] : 1) * noise(r, cv) *
			       mix[s->stacks[i].group];
		n = n > MAX_CAPTURE_SAMPLES ? MAX_CAPTURE_SAMPLES : n < 1 ? 1 : n;
		gsl_ran_multinomial(r, K, (unsigned)lround(n), p, counts);

		snprintf(path, sizeof(path), "%s/c%03zu.folded", dir, k);
		write_folded(path, s, counts);
		format_time(when, t);
		sb_printf(manifest,
			  "{\"path\":\"%s/c%03zu.folded\",\"service\":\"%s\",\"release\":\"v%zu\","
			  "\"commit\":\"%.40s\",\"host\":\"%s\",\"time\":\"%s\",\"type\":\"cpu\","
			  "\"format\":\"folded\"}\n",
			  s->name, k, s->name, rel + 1, s->commits[rel], s->hosts[h], when);
	}
	free(p);
	free(host);
	free(mix);
	free(weekend);
	free(daily);
	if (dr)
		gsl_rng_free(dr);
	free(counts);
}

static void band_label(char *out, size_t n, const band *b)
{
	snprintf(out, n, "%g-%g%%", b->lo * 100, b->hi * 100);
}

static void write_truth(const config *c, const schedule *sc, const service *s, sbuf *truth)
{
	char label[64], at[TIME_TEXT];
	const func *f = s->target != NONE ? &s->funcs[s->target] : NULL;

	format_time(at, sc->at);
	sb_printf(truth, "{\"service\":\"%s\",\"regressed\":%s,", s->name,
		  s->role.kind == R_REGRESSED ? "true" : "false");
	if (s->role.kind == R_REGRESSED) {
		band_label(label, sizeof(label), &c->bands[s->role.band]);
		sb_printf(truth, "\"function\":");
		sb_json_str(truth, f->name);
		sb_printf(truth, ",\"factor\":%g,\"baseline_share\":%.6g,\"current_share\":%.6g,"
			  "\"band\":\"%s\",\"stacks\":%u,", s->role.factor, s->target_base,
			  f->share, label, f->nstacks);
	} else {
		sb_printf(truth, "\"function\":null,\"factor\":null,\"baseline_share\":null,"
			  "\"current_share\":null,\"band\":null,\"stacks\":null,");
	}
	if (s->role.kind == R_IMPROVED) {
		band_label(label, sizeof(label), &c->bands[s->role.band]);
		sb_printf(truth, "\"improved_function\":");
		sb_json_str(truth, f->name);
		sb_printf(truth, ",\"improve_factor\":%g,\"improved_baseline_share\":%.6g,"
			  "\"improved_current_share\":%.6g,\"improved_band\":\"%s\",",
			  s->role.factor, s->target_base, f->share, label);
	}
	sb_printf(truth, "\"language\":\"%s\",\"functions\":%zu,\"stacks_total\":%zu,"
		  "\"current_release\":\"v%zu\",\"at\":\"%s\"",
		  s->lang->name, s->nfuncs, s->nstacks, sc->nrel + 1, at);
	/* Only what differs from a one-night fleet, so old fleets read the same. */
	if (c->nights > 1)
		sb_printf(truth, ",\"nights\":%lu", c->nights);
	if (s->noisy && sc->nrel >= 2)
		sb_printf(truth, ",\"noisy_release\":\"v%zu\"", sc->nrel);
	/* --verify then checks the change against the last baseline release alone. */
	if (c->churn > 0 && sc->nrel >= 2)
		sb_printf(truth, ",\"churn\":%lu", c->churn);
	/* --verify needs to know that a day's captures are not independent. */
	if (c->daily > 0)
		sb_printf(truth, ",\"daily\":%g", c->daily);
	sb_printf(truth, "}\n");
}

/*
 * Which services regress (or improve) and how: exact counts, and the
 * (band, factor) cells dealt out in shuffled rounds so that every cell of
 * the recall table gets the same number of services, give or take one.
 */
static void assign_roles(role *roles, const config *c, gsl_rng *r)
{
	size_t n = c->services;
	size_t nreg = (size_t)lround(c->regressed * (double)n);
	size_t nimp = (size_t)lround(c->improved * (double)n);
	size_t *perm = xcalloc(n, sizeof(*perm)), ncells = c->nbands * c->nfactors, k;
	size_t *cells = xcalloc(ncells, sizeof(*cells));
	size_t ib[MAX_LIST], nib = 0;

	if (nreg + nimp > n)
		nimp = n - nreg;
	for (size_t i = 0; i < n; i++)
		perm[i] = i, roles[i] = (role){R_NULL, 0, 1};
	gsl_ran_shuffle(r, perm, n, sizeof(*perm));
	for (size_t i = 0; i < ncells; i++)
		cells[i] = i;
	for (k = 0; k < nreg; k++) {
		size_t cell;
		if (k % ncells == 0)
			gsl_ran_shuffle(r, cells, ncells, sizeof(*cells));
		cell = cells[k % ncells];
		roles[perm[k]] =
			(role){R_REGRESSED, cell / c->nfactors, c->factors[cell % c->nfactors]};
	}
	/* An improvement worth guarding against is a visible one: at least 1%. */
	for (size_t b = 0; b < c->nbands; b++)
		if (c->bands[b].lo >= 0.01)
			ib[nib++] = b;
	if (nib == 0)
		ib[nib++] = c->nbands - 1;
	for (size_t j = 0; j < nimp; j++)
		roles[perm[nreg + j]] = (role){R_IMPROVED, ib[j % nib],
					       c->improve_factors[(j / nib) % c->nimprove]};
	free(perm);
	free(cells);
}

static void print_summary(const config *c, const schedule *sc, const size_t count[3])
{
	char a[TIME_TEXT], b[TIME_TEXT], d[TIME_TEXT];

	format_time(a, c->start);
	format_time(b, sc->night);
	format_time(d, sc->at);
	printf(PROG
	       ": wrote %lu services (%zu regressed, %zu improved, %zu "
	       "null), %zu captures, to '%s'\n",
	       c->services, count[R_REGRESSED], count[R_IMPROVED], count[R_NULL],
	       sc->ncap * c->services, c->out);
	if (sc->nrel == 1)
		printf("baseline: %s to %s, release v1\n", a, b);
	else
		printf("baseline: %s to %s, releases v1 to v%zu\n", a, b, sc->nrel);
	printf("night: %s to %s\n", b, d);
	for (unsigned long k = 1; c->nights > 1 && k <= c->nights; k++) {
		format_time(a, sc->night + (int64_t)k * DAY_S);
		printf("at_night_%lu: %s\n", k, a);
	}
	printf("at: %s\n", d);
	printf("release: v%zu\n", sc->nrel + 1);
}

/* Drop the listings of an earlier run in the same directory. */
static void remove_listing(const char *dir)
{
	static const char *const names[] = {"manifest.jsonl", "truth.jsonl", "services.txt"};
	char path[4200];

	for (size_t i = 0; i < NELEM(names); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (remove(path) < 0 && errno != ENOENT)
			die(EX_RUNTIME, "cannot remove '%s': %s", path, strerror(errno));
	}
}

static int generate(const config *c)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	role *roles = xcalloc(c->services, sizeof(*roles));
	bool *noisy = NULL;
	sbuf chunk = {0};
	listing manifest, truth, names;
	size_t count[3] = {0, 0, 0};
	schedule sc;

	if (!r)
		die(EX_RUNTIME, "out of memory");
	schedule_init(&sc, c);
	mkdirs(c->out);
	/* Nothing is listed until everything is written: a run that fails
	 * leaves no manifest for a half-written fleet. */
	remove_listing(c->out);
	listing_open(&manifest, c->out, "manifest.jsonl");
	listing_open(&truth, c->out, "truth.jsonl");
	listing_open(&names, c->out, "services.txt");
	rng_seed(r, c->seed, UINT64_MAX);
	assign_roles(roles, c, r);
	if (c->noisy > 0) {
		noisy = xcalloc(c->services, sizeof(*noisy));
		for (size_t i = 0; i < c->services; i++)
			noisy[i] = gsl_rng_uniform(r) < c->noisy;
	}
	for (size_t i = 0; i < c->services; i++) {
		service s;
		rng_seed(r, c->seed, i);
		service_build(&s, c, i, r);
		s.role = roles[i];
		s.noisy = noisy && noisy[i];
		if (c->churn)
			churn(&s, c, sc.nrel, r);
		apply_role(&s, c, r);
		write_captures(c, &sc, &s, i, r, &chunk);
		listing_put(&manifest, &chunk);
		write_truth(c, &sc, &s, &chunk);
		listing_put(&truth, &chunk);
		sb_printf(&chunk, "%s\n", s.name);
		listing_put(&names, &chunk);
		count[s.role.kind]++;
		service_free(&s);
	}
	listing_commit(&names);
	listing_commit(&truth);
	listing_commit(&manifest);
	print_summary(c, &sc, count);
	free(chunk.ptr);
	free(roles);
	free(noisy);
	gsl_rng_free(r);
	if (fflush(stdout) != 0 || ferror(stdout))
		die(EX_RUNTIME, "cannot write the summary to stdout");
	return EX_OK;
}

/* ------------------------------------------------------------------ */
/* --verify: read a fleet back with a reader of its own and check it.  */

/* A flat JSON object: string, number, boolean and null values only, which
 * is all the generator writes. Strings are decoded in place. */
enum { J_STR, J_NUM, J_BOOL, J_NULL };
#define JMAX 32

typedef struct jfield {
	const char *key, *str;
	int type;
	double num;
	bool b;
} jfield;

typedef struct jobj {
	jfield f[JMAX];
	size_t n;
} jobj;

static void skip_ws(char **p)
{
	while (**p == ' ' || **p == '\t' || **p == '\r' || **p == '\n')
		(*p)++;
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Decode the string literal at *p in place; NULL when it is not one. */
static char *json_string(char **p)
{
	char *rd = *p + 1, *w = rd, *start = rd;

	if (**p != '"')
		return NULL;
	for (;;) {
		unsigned char ch = (unsigned char)*rd++;
		if (ch == '"')
			break;
		if (ch < 0x20)
			return NULL;
		if (ch != '\\') {
			*w++ = (char)ch;
			continue;
		}
		ch = (unsigned char)*rd++;
		switch (ch) {
		case '"': case '\\': case '/': *w++ = (char)ch; break;
		case 'b': *w++ = '\b'; break;
		case 'f': *w++ = '\f'; break;
		case 'n': *w++ = '\n'; break;
		case 'r': *w++ = '\r'; break;
		case 't': *w++ = '\t'; break;
		case 'u': {
			unsigned v = 0;
			for (int i = 0; i < 4; i++) {
				int h = hexval(rd[i]);
				if (h < 0)
					return NULL;
				v = v * 16 + (unsigned)h;
			}
			rd += 4;
			if (v == 0 || (v >= 0xd800 && v <= 0xdfff))
				return NULL; /* never written by the generator */
			if (v < 0x80) {
				*w++ = (char)v;
			} else if (v < 0x800) {
				*w++ = (char)(0xc0 | (v >> 6));
				*w++ = (char)(0x80 | (v & 0x3f));
			} else {
				/* "\uXXXX" is six bytes; its UTF-8 is at most three. */
				*w++ = (char)(0xe0 | (v >> 12));
				*w++ = (char)(0x80 | ((v >> 6) & 0x3f));
				*w++ = (char)(0x80 | (v & 0x3f));
			}
			break;
		}
		default:
			return NULL;
		}
	}
	*w = '\0';
	*p = rd;
	return start;
}

static bool json_value(jfield *f, char **p)
{
	char *end;

	if (**p == '"') {
		f->type = J_STR;
		return (f->str = json_string(p)) != NULL;
	}
	if (strncmp(*p, "true", 4) == 0 || strncmp(*p, "false", 5) == 0) {
		f->type = J_BOOL;
		f->b = **p == 't';
		*p += f->b ? 4 : 5;
		return true;
	}
	if (strncmp(*p, "null", 4) == 0) {
		f->type = J_NULL;
		*p += 4;
		return true;
	}
	if (**p != '-' && (**p < '0' || **p > '9'))
		return false;
	f->type = J_NUM;
	f->num = strtod(*p, &end);
	if (end == *p || !isfinite(f->num))
		return false;
	for (char *q = *p; q < end; q++)
		if (!strchr("0123456789+-.eE", *q))
			return false; /* hex, inf, nan: strtod takes them, JSON does not */
	*p = end;
	return true;
}

/* Parse one line holding one flat JSON object; duplicate keys are refused. */
static bool json_flat_parse(jobj *o, char *line)
{
	char *p = line;

	o->n = 0;
	skip_ws(&p);
	if (*p++ != '{')
		return false;
	skip_ws(&p);
	if (*p == '}') {
		p++;
		goto end;
	}
	for (;;) {
		jfield *f;
		if (o->n == JMAX)
			return false;
		f = &o->f[o->n];
		skip_ws(&p);
		if (!(f->key = json_string(&p)))
			return false;
		for (size_t i = 0; i < o->n; i++)
			if (strcmp(o->f[i].key, f->key) == 0)
				return false;
		skip_ws(&p);
		if (*p++ != ':')
			return false;
		skip_ws(&p);
		if (!json_value(f, &p))
			return false;
		o->n++;
		skip_ws(&p);
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p++ != '}')
			return false;
		break;
	}
end:
	skip_ws(&p);
	return *p == '\0';
}

static const jfield *jget(const jobj *o, const char *key, int type)
{
	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->f[i].key, key) == 0)
			return o->f[i].type == type ? &o->f[i] : NULL;
	return NULL;
}

typedef struct vsvc {
	char *name;
	bool has_truth, regressed, improved;
	bool daily; /* its captures share a day's traffic mix (--daily) */
	char *target, *current_release; /* target: the changed function, if any */
	char *judged_base; /* with --churn: the release whose captures the baseline is */
	double base_share, cur_share;
	int64_t at, last_time;
	size_t ncaps, ncur, nights;
	double *xb, *xc; /* the target's share in each baseline / current capture */
	uint32_t *hb;    /* the host (a hash of its name) of each baseline capture */
	int64_t *db, *dc; /* the UTC day of each baseline / current capture */
	size_t nb, nc, capb, capc, caph, capdb, capdc;
	double samples; /* mean samples per baseline capture */
} vsvc;

typedef struct verifier {
	const char *dir;
	bool verbose;
	vsvc *svcs;
	size_t nsvcs, caps;
	size_t failures, captures, checked;
} verifier;

static void vfail(verifier *v, const char *fmt, ...)
{
	va_list ap;

	v->failures++;
	fputs(PROG ": verify: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int cmp_vsvc(const void *a, const void *b)
{
	return strcmp(((const vsvc *)a)->name, ((const vsvc *)b)->name);
}

static vsvc *vfind(verifier *v, const char *name)
{
	vsvc key = {.name = (char *)name};

	return v->nsvcs ? bsearch(&key, v->svcs, v->nsvcs, sizeof(*v->svcs), cmp_vsvc) : NULL;
}

/* Call fn on every line of dir/name (newline removed); false if unreadable. */
static bool for_lines(verifier *v, const char *name,
		      void (*fn)(verifier *, char *, size_t, const char *))
{
	char path[4200], *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", v->dir, name);
	if (!(f = fopen(path, "r"))) {
		vfail(v, "cannot read '%s': %s", path, strerror(errno));
		return false;
	}
	while ((n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		else
			vfail(v, "'%s' line %zu: no newline at the end", name, lineno);
		fn(v, line, lineno, name);
	}
	free(line);
	fclose(f);
	return true;
}

static void read_service_name(verifier *v, char *line, size_t lineno, const char *file)
{
	if (!*line || strchr(line, '/') || strcmp(line, ".") == 0 || strcmp(line, "..") == 0) {
		vfail(v, "'%s' line %zu: '%.64s' is not a service name", file, lineno, line);
		return;
	}
	v->svcs = grow(v->svcs, &v->caps, v->nsvcs + 1, sizeof(*v->svcs));
	v->svcs[v->nsvcs++] = (vsvc){.name = xstrdup(line)};
}

static void read_truth(verifier *v, char *line, size_t lineno, const char *file)
{
	const jfield *svc, *reg, *fn, *base, *cur, *rel, *at, *imp;
	jobj o;
	vsvc *s;

	if (!json_flat_parse(&o, line)) {
		vfail(v, "'%s' line %zu: not a flat JSON object", file, lineno);
		return;
	}
	svc = jget(&o, "service", J_STR);
	reg = jget(&o, "regressed", J_BOOL);
	rel = jget(&o, "current_release", J_STR);
	at = jget(&o, "at", J_STR);
	if (!svc || !reg || !rel || !at) {
		vfail(v, "'%s' line %zu: service, regressed, current_release or at is missing",
		      file, lineno);
		return;
	}
	if (!(s = vfind(v, svc->str)) || s->has_truth) {
		vfail(v, "'%s' line %zu: service '%.64s' is %s", file, lineno, svc->str,
		      s ? "listed twice" : "not in services.txt");
		return;
	}
	s->has_truth = true;
	s->regressed = reg->b;
	{
		const jfield *nn = jget(&o, "nights", J_NUM);
		s->nights = nn && nn->num >= 1 && nn->num <= 30 ? (size_t)nn->num : 1;
	}
	{
		const jfield *dd = jget(&o, "daily", J_NUM);
		s->daily = dd && dd->num > 0;
	}
	s->current_release = xstrdup(rel->str);
	if (jget(&o, "churn", J_NUM)) {
		/* Earlier releases ran other code: the truth is the last one's. */
		unsigned long n = strtoul(rel->str + (rel->str[0] == 'v'), NULL, 10);
		char name[32];
		if (rel->str[0] != 'v' || n < 2) {
			vfail(v, "'%s' line %zu: a fleet with churn has a release before '%.40s'",
			      file, lineno, rel->str);
			return;
		}
		snprintf(name, sizeof(name), "v%lu", n - 1);
		s->judged_base = xstrdup(name);
	}
	if (!parse_time(&s->at, at->str))
		vfail(v, "'%s' line %zu: at '%.40s' is not a time", file, lineno, at->str);
	imp = jget(&o, "improved_function", J_STR);
	if (s->regressed) {
		fn = jget(&o, "function", J_STR);
		base = jget(&o, "baseline_share", J_NUM);
		cur = jget(&o, "current_share", J_NUM);
		if (!fn || !base || !cur || !jget(&o, "factor", J_NUM) ||
		    !jget(&o, "band", J_STR)) {
			vfail(v, "'%s' line %zu: a regressed service needs function, factor, "
			      "baseline_share, current_share and band", file, lineno);
			return;
		}
	} else if (imp) {
		s->improved = true;
		fn = imp;
		base = jget(&o, "improved_baseline_share", J_NUM);
		cur = jget(&o, "improved_current_share", J_NUM);
		if (!base || !cur) {
			vfail(v, "'%s' line %zu: an improved service needs its shares", file,
			      lineno);
			return;
		}
	} else {
		if (!jget(&o, "function", J_NULL))
			vfail(v, "'%s' line %zu: a null service names no function", file, lineno);
		return;
	}
	if (base->num <= 0 || base->num >= 1 || cur->num <= 0 || cur->num >= 1) {
		vfail(v, "'%s' line %zu: shares must lie between 0 and 1", file, lineno);
		return;
	}
	s->target = xstrdup(fn->str);
	s->base_share = base->num;
	s->cur_share = cur->num;
}

typedef struct folded_scan {
	uint64_t total, target;
	unsigned min_depth, max_depth;
} folded_scan;

/* Read one capture: every line "frame;...;frame COUNT", depth in range. */
static bool scan_folded(verifier *v, const char *rel, const char *target, folded_scan *out)
{
	char path[4200], *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t n;
	FILE *f;
	bool ok = true;

	*out = (folded_scan){.min_depth = UINT_MAX};
	snprintf(path, sizeof(path), "%s/%s", v->dir, rel);
	if (!(f = fopen(path, "r"))) {
		vfail(v, "cannot read '%s': %s", path, strerror(errno));
		return false;
	}
	while (ok && (n = getline(&line, &cap, f)) >= 0) {
		char *sp, *leaf, *end;
		unsigned long long count;
		unsigned depth = 1;

		lineno++;
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		sp = strrchr(line, ' ');
		if (!sp || sp == line || !sp[1] || sp[1] < '0' || sp[1] > '9') {
			vfail(v, "'%s' line %zu: not 'stack count'", rel, lineno);
			ok = false;
			break;
		}
		errno = 0;
		count = strtoull(sp + 1, &end, 10);
		if (errno || *end || count == 0) {
			vfail(v, "'%s' line %zu: the count is not a positive number", rel, lineno);
			ok = false;
			break;
		}
		*sp = '\0';
		for (char *q = line; *q; q++)
			depth += *q == ';';
		leaf = strrchr(line, ';');
		leaf = leaf ? leaf + 1 : line;
		out->total += count;
		if (target && strcmp(leaf, target) == 0)
			out->target += count;
		out->min_depth = depth < out->min_depth ? depth : out->min_depth;
		out->max_depth = depth > out->max_depth ? depth : out->max_depth;
	}
	free(line);
	fclose(f);
	if (ok && out->total == 0) {
		vfail(v, "'%s': no samples", rel);
		ok = false;
	}
	if (ok && (out->min_depth < MIN_DEPTH || out->max_depth > MAX_DEPTH)) {
		vfail(v, "'%s': stacks of %u to %u frames, outside %d to %d", rel,
		      out->min_depth, out->max_depth, MIN_DEPTH, MAX_DEPTH);
		ok = false;
	}
	return ok;
}

static bool is_hex40(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (hexval(s[i]) < 0 || (s[i] >= 'A' && s[i] <= 'F'))
			return false;
	return i == 40;
}

static void read_capture(verifier *v, char *line, size_t lineno, const char *file)
{
	static const char *const keys[] = {"path", "service", "release", "commit", "host",
					   "time", "type", "format"};
	const jfield *path, *svc, *rel, *tm, *type, *fmt, *commit, *host;
	folded_scan sc;
	int64_t t, day = INT64_MIN; /* INT64_MIN: no valid time, already reported */
	jobj o;
	vsvc *s;
	size_t nl;
	bool current;

	v->captures++;
	if (!json_flat_parse(&o, line)) {
		vfail(v, "'%s' line %zu: not a flat JSON object", file, lineno);
		return;
	}
	for (size_t i = 0; i < o.n; i++) {
		size_t k;
		for (k = 0; k < NELEM(keys) && strcmp(keys[k], o.f[i].key) != 0; k++)
			;
		if (k == NELEM(keys))
			vfail(v, "'%s' line %zu: unknown key \"%.40s\"", file, lineno, o.f[i].key);
	}
	path = jget(&o, "path", J_STR);
	svc = jget(&o, "service", J_STR);
	rel = jget(&o, "release", J_STR);
	commit = jget(&o, "commit", J_STR);
	host = jget(&o, "host", J_STR);
	tm = jget(&o, "time", J_STR);
	type = jget(&o, "type", J_STR);
	fmt = jget(&o, "format", J_STR);
	if (!path || !svc || !rel || !commit || !host || !tm || !type || !fmt) {
		vfail(v, "'%s' line %zu: path, service, release, commit, host, time, type and "
		      "format must all be strings", file, lineno);
		return;
	}
	if (!(s = vfind(v, svc->str)) || !s->has_truth) {
		vfail(v, "'%s' line %zu: service '%.64s' has no truth line", file, lineno,
		      svc->str);
		return;
	}
	nl = strlen(s->name);
	if (strncmp(path->str, s->name, nl) != 0 || path->str[nl] != '/' ||
	    strstr(path->str, "..") || strchr(path->str + nl + 1, '/'))
		vfail(v, "'%s' line %zu: path '%.80s' is not under '%s/'", file, lineno, path->str,
		      s->name);
	if (!is_hex40(commit->str))
		vfail(v, "'%s' line %zu: commit is not 40 hex digits", file, lineno);
	if (strcmp(type->str, "cpu") != 0 || strcmp(fmt->str, "folded") != 0)
		vfail(v, "'%s' line %zu: type must be cpu and format folded", file, lineno);
	if (strncmp(host->str, s->name, nl) != 0)
		vfail(v, "'%s' line %zu: host '%.64s' is not one of %s's", file, lineno, host->str,
		      s->name);
	current = strcmp(rel->str, s->current_release) == 0;
	if (!parse_time(&t, tm->str) || strlen(tm->str) != 20) {
		vfail(v, "'%s' line %zu: time '%.40s' is not YYYY-MM-DDTHH:MM:SSZ", file, lineno,
		      tm->str);
	} else {
		if (s->ncaps && t <= s->last_time)
			vfail(v, "'%s' line %zu: %s's captures are not in time order", file, lineno,
			      s->name);
		if (t >= s->at || current != (t >= s->at - (int64_t)s->nights * DAY_S))
			vfail(v, "'%s' line %zu: time %s is outside its %s period", file, lineno,
			      tm->str, current ? "current" : "baseline");
		s->last_time = t;
		day = t >= 0 ? t / DAY_S : -((-t + DAY_S - 1) / DAY_S);
	}
	s->ncaps++;
	s->ncur += current;
	if (!scan_folded(v, path->str, s->target, &sc))
		return;
	if (!current && s->judged_base && strcmp(rel->str, s->judged_base) != 0)
		return;
	if (!current)
		s->samples += (double)sc.total;
	if (!s->target)
		return;
	if (current) {
		s->xc = grow(s->xc, &s->capc, s->nc + 1, sizeof(double));
		s->dc = grow(s->dc, &s->capdc, s->nc + 1, sizeof(int64_t));
		s->dc[s->nc] = day;
		s->xc[s->nc++] = (double)sc.target / (double)sc.total;
	} else {
		s->xb = grow(s->xb, &s->capb, s->nb + 1, sizeof(double));
		s->hb = grow(s->hb, &s->caph, s->nb + 1, sizeof(uint32_t));
		s->db = grow(s->db, &s->capdb, s->nb + 1, sizeof(int64_t));
		s->hb[s->nb] = hash_name(host->str);
		s->db[s->nb] = day;
		s->xb[s->nb++] = (double)sc.target / (double)sc.total;
	}
}

/*
 * Variance of the baseline mean share when hosts differ systematically
 * (--host-effect): the captures of one host are not independent draws, so
 * the mean over a few hosts varies like the hosts' means do. Without a
 * host effect this is about sd^2/nb, as for independent captures.
 */
static double host_mean_variance(const vsvc *s, size_t *nhosts)
{
	double means[MAX_HOSTS];
	uint32_t ids[MAX_HOSTS];
	size_t counts[MAX_HOSTS] = {0}, nh = 0;

	*nhosts = 0;
	for (size_t i = 0; i < s->nb; i++) {
		size_t h;
		for (h = 0; h < nh && ids[h] != s->hb[i]; h++)
			;
		if (h == nh) {
			if (nh == MAX_HOSTS)
				return 0;
			ids[nh] = s->hb[i];
			means[nh++] = 0;
		}
		means[h] += s->xb[i];
		counts[h]++;
	}
	*nhosts = nh;
	if (nh < 2)
		return 0;
	for (size_t h = 0; h < nh; h++)
		means[h] /= (double)counts[h];
	return gsl_stats_variance(means, 1, nh) / (double)nh;
}

/* How many distinct days n captures in time order span. */
static size_t count_days(const int64_t *day, size_t n)
{
	size_t k = n > 0;

	for (size_t i = 1; i < n; i++)
		k += day[i] != day[i - 1];
	return k;
}

/*
 * Variances of the baseline and current mean shares when days differ
 * systematically (--daily): a day's captures share its traffic mix, so
 * they are not independent draws, and the night's few captures may all
 * come from one day. The baseline's days split the variance into a part
 * between days and a part within them; each mean then varies as what it
 * is, the mean of so many days of so many captures. False with fewer
 * than 2 baseline days. Captures are in time order (checked as read), so
 * a day's captures are next to each other.
 */
static bool day_mean_variances(const vsvc *s, double *var_b, double *var_c, size_t *ndays)
{
	size_t nd = count_days(s->db, s->nb), d = 0, start = 0;
	double *means = xcalloc(nd, sizeof(*means)), within = 0, between, day_var;

	for (size_t i = 1; i <= s->nb; i++) {
		if (i < s->nb && s->db[i] == s->db[start])
			continue;
		means[d] = gsl_stats_mean(s->xb + start, 1, i - start);
		for (size_t j = start; j < i; j++)
			within += (s->xb[j] - means[d]) * (s->xb[j] - means[d]);
		d++;
		start = i;
	}
	*ndays = nd;
	if (nd < 2) {
		free(means);
		return false;
	}
	/* With one capture a day nothing separates the parts: all of the
	 * day means' variance is then taken for the day's, the cautious way. */
	within = s->nb > nd ? within / (double)(s->nb - nd) : 0;
	between = gsl_stats_variance(means, 1, nd);
	day_var = fmax(0, between - within * (double)nd / (double)s->nb);
	*var_b = between / (double)nd;
	*var_c = day_var / (double)count_days(s->dc, s->nc) + within / (double)s->nc;
	free(means);
	return true;
}

/*
 * Is the changed function's share where the truth says, before and after?
 * The standard errors come from the baseline captures' own spread (the
 * model's noise, whatever options made it), with binomial sampling noise
 * as a floor: the baseline mean against the truth's baseline share, and
 * current over baseline against the truth's ratio on the log scale.
 */
static void check_change(verifier *v, vsvc *s)
{
	double mb, mc, sd, nbar, rel_sd, se_base, se_log, z_base, z_ratio, ratio, expect;
	double host_var, z_host = HUGE_VAL, t_crit = 0;
	double var_b, var_c, z_day_base = HUGE_VAL, z_day_ratio = HUGE_VAL, t_day = 0;
	size_t nh, nd;

	if (s->nb < 2 || s->nc < 1) {
		vfail(v, "%s: cannot check '%s' with %zu baseline and %zu current captures "
		      "(need 2 and 1)", s->name, s->target, s->nb, s->nc);
		return;
	}
	mb = gsl_stats_mean(s->xb, 1, s->nb);
	mc = gsl_stats_mean(s->xc, 1, s->nc);
	sd = gsl_stats_sd(s->xb, 1, s->nb);
	nbar = s->samples / (double)s->nb;
	rel_sd = fmax(sd / s->base_share, sqrt((1 - s->base_share) / (s->base_share * nbar)));
	se_base = rel_sd * s->base_share / sqrt((double)s->nb);
	host_var = host_mean_variance(s, &nh);
	se_log = rel_sd * sqrt(1.0 / (double)s->nb + 1.0 / (double)s->nc);
	expect = s->cur_share / s->base_share;
	ratio = mb > 0 ? mc / mb : 0;
	z_base = (mb - s->base_share) / se_base;
	/* With a host effect the baseline's level is known only as well as a
	 * few hosts' means tell it: a t test on those, with nh - 1 degrees of
	 * freedom at the same tail probability. The baseline check fails only
	 * when both tests do, so a host effect cannot fail it spuriously. */
	if (nh >= 2 && host_var > 0) {
		z_host = (mb - s->base_share) / sqrt(host_var);
		t_crit = gsl_cdf_tdist_Qinv(gsl_cdf_ugaussian_Q(VERIFY_Z), (double)(nh - 1));
	}
	z_ratio = ratio > 0 ? (log(ratio) - log(expect)) / se_log : -HUGE_VAL;
	/* Likewise with a day-to-day mix: a t test with the baseline's days
	 * (nd - 1 degrees of freedom), which also must fail for a check to.
	 * Only for a fleet that has one: the test is lenient with few days,
	 * and would let a wrong truth pass where no day effect excuses it. */
	if (s->daily && day_mean_variances(s, &var_b, &var_c, &nd) && var_b > 0) {
		t_day = gsl_cdf_tdist_Qinv(gsl_cdf_ugaussian_Q(VERIFY_Z), (double)(nd - 1));
		z_day_base = (mb - s->base_share) / sqrt(var_b);
		z_day_ratio = ratio > 0 ? (log(ratio) - log(expect)) /
						  (sqrt(var_b + var_c) / s->base_share)
					: -HUGE_VAL;
	}
	v->checked++;
	if (v->verbose)
		printf("%s %s '%s': baseline share %.5f (truth %.5f, z %+.1f),"
		       " current/baseline %.3f "
		       "(truth %.3f, z %+.1f)\n",
		       s->name, s->regressed ? "regressed" : "improved", s->target, mb,
		       s->base_share, z_base, ratio, expect, z_ratio);
	if (fabs(z_base) > VERIFY_Z && fabs(z_host) > t_crit && fabs(z_day_base) > t_day)
		vfail(v, "%s: '%s' has baseline share %.5f, truth says %.5f (z %.1f)", s->name,
		      s->target, mb, s->base_share, z_base);
	if (!(fabs(z_ratio) <= VERIFY_Z) && !(fabs(z_day_ratio) <= t_day))
		vfail(v, "%s: '%s' changed by %.3f, truth says %.3f (z %.1f)", s->name, s->target,
		      ratio, expect, z_ratio);
}

static int verify(const config *c)
{
	verifier v = {.dir = c->verify, .verbose = c->verbose};
	size_t reg = 0, imp = 0;

	if (!for_lines(&v, "services.txt", read_service_name))
		goto out;
	qsort(v.svcs, v.nsvcs, sizeof(*v.svcs), cmp_vsvc);
	for (size_t i = 1; i < v.nsvcs; i++)
		if (strcmp(v.svcs[i - 1].name, v.svcs[i].name) == 0)
			vfail(&v, "services.txt lists '%s' twice", v.svcs[i].name);
	if (v.nsvcs == 0)
		vfail(&v, "services.txt lists no service");
	if (!for_lines(&v, "truth.jsonl", read_truth) ||
	    !for_lines(&v, "manifest.jsonl", read_capture))
		goto out;
	for (size_t i = 0; i < v.nsvcs; i++) {
		vsvc *s = &v.svcs[i];
		if (!s->has_truth)
			vfail(&v, "%s: no line in truth.jsonl", s->name);
		else if (s->ncaps == 0 || s->ncur == 0)
			vfail(&v, "%s: %zu captures, %zu of them current", s->name, s->ncaps,
			      s->ncur);
		else if (s->target)
			check_change(&v, s);
		reg += s->regressed;
		imp += s->improved;
	}
out:
	printf(PROG ": verified '%s': %zu services (%zu regressed, %zu improved), %zu captures, "
	       "%zu changes checked, %zu problems\n", v.dir, v.nsvcs, reg, imp, v.captures,
	       v.checked, v.failures);
	for (size_t i = 0; i < v.nsvcs; i++) {
		free(v.svcs[i].name);
		free(v.svcs[i].target);
		free(v.svcs[i].current_release);
		free(v.svcs[i].judged_base);
		free(v.svcs[i].xb);
		free(v.svcs[i].hb);
		free(v.svcs[i].xc);
		free(v.svcs[i].db);
		free(v.svcs[i].dc);
	}
	free(v.svcs);
	if (fflush(stdout) != 0)
		return EX_RUNTIME;
	return v.failures ? EX_FAILED : EX_OK;
}

int main(int argc, char **argv)
{
	config c;

	parse_args(&c, argc, argv);
	gsl_set_error_handler_off();
	return c.verify ? verify(&c) : generate(&c);
}
