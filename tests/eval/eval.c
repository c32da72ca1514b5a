/*
 * eval.c: scores `profreg analyze` against a simulated fleet's ground
 * truth, beside a naive "+10%" rule computed from the same database.
 *
 *   eval [options] --truth T --findings F [--db CONNINFO] [--label L]
 *                  [--setting S] [--truth T2 ...]
 *
 * Each fleet starts with --truth; the --findings, --db, --label and
 * --setting that follow belong to it. Fleets that share a setting (the
 * same simulator settings, e.g. "4 current captures") are pooled into one
 * set of tables, so that null service-nights from several fleets add up.
 *
 * A profreg finding is true when its direction is "regression", its
 * service regressed in the truth and its function is the one the truth
 * names; every other regression finding is false. The naive rule flags a
 * function when its mean self share over the current release's captures
 * exceeds 1.10 times its mean over the baseline captures before them.
 *
 * The program measures and never gates: it exits 0 whenever it produced
 * its tables, 2 on a usage error, 3 when the database or stdout fails, 4
 * when an input file is missing, malformed or does not match its truth.
 *
 * It is built apart from profreg (jansson, libpq and libc only), so that
 * the yardstick does not share code with what it measures.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { EXIT_OK = 0, EXIT_USAGE = 2, EXIT_RUNTIME = 3, EXIT_DATA = 4 };

/* Negative codes inside the program; main turns them into exit codes. */
enum { E_RUNTIME = -3, E_DATA = -4, E_NOMEM = -5 };

#define MAX_AXIS 32                      /* bands, factors */
#define MAX_FLEETS 64
#define MAX_LINE (1u << 20)              /* one truth line */
#define MAX_SERVICES 1000000u
#define MAX_INPUT_BYTES (1024ull << 20)  /* a findings file */
#define NAME_W 44                        /* function column in lists */

enum { T_PROFREG, T_NAIVE, T_FLOOR, NTOOLS };

/* ---------------------------------------------------------------- errors */

static char errmsg[600];

/* Record the first error's message and return its code. */
__attribute__((format(printf, 2, 3)))
static int fail(int code, const char *fmt, ...)
{
	va_list ap;

	if (!errmsg[0]) {
		va_start(ap, fmt);
		vsnprintf(errmsg, sizeof(errmsg), fmt, ap);
		va_end(ap);
	}
	return code;
}

static int nomem(void)
{
	return fail(E_NOMEM, "out of memory");
}

/*
 * A short, printable copy of a name taken from an input, for messages:
 * control bytes become '?', and at most 64 bytes are kept.
 */
static const char *quote(char out[72], const char *s)
{
	size_t i;

	for (i = 0; s && s[i] && i < 64; i++)
		out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	if (s && s[i])
		memcpy(out + i, "...", 4);
	else
		out[i] = '\0';
	return out;
}

/* ------------------------------------------------------------------ data */

typedef struct svc {
	char *name;
	bool regressed;
	char *function;    /* truth: the regressed function, NULL when null */
	double factor;
	double share;      /* its baseline share */
	const char *band;  /* interned in bands[] */
	bool insufficient; /* analyze skipped it for too little data */
	bool naive_data;   /* it had baseline and current captures in the database */
	bool shifted;      /* analyze called the truth function a relative shift */
	bool tested;       /* --all-tests: the truth function's test, not significant */
	double t_p, t_pseq, t_q, t_mw; /* ... its p, sequential p, q and Mann-Whitney p */
	long long t_look;
	bool hit[NTOOLS];
	unsigned true_n[NTOOLS];
	unsigned false_n[NTOOLS];
} svc;

typedef struct false_finding {
	const char *fleet, *sequence;
	char *service, *function;
	double baseline_share, current_share, q, score;
	bool null_service;   /* on a service that did not regress */
} false_finding;

typedef struct fleet {
	const char *label, *setting, *truth_path, *findings_path, *conninfo;
	const char *sequence; /* nights of one fleet share a sequence (NULL: its own) */
	const char *states_path; /* profreg finding list --json after the last night */
	svc *svcs;           /* sorted by name */
	size_t nsvcs;
	char *release;       /* the truth's current_release */
	long long analyzed;  /* "services" in the findings file, -1 when absent */
	unsigned dir_n[3];   /* counted findings by direction */
	unsigned shift_null; /* relative shifts on null services */
	unsigned not_significant;
	unsigned other_type; /* findings of another profile type, ignored */
	unsigned naive_new;  /* functions that rose from a zero baseline (not flagged) */
	unsigned db_unknown; /* services in the database that the truth lacks */
	bool naive_done;
} fleet;

enum { D_REGRESSION, D_IMPROVEMENT, D_SHIFT };
static const char *const dir_names[3] = {"regression", "improvement", "relative_shift"};

typedef struct opts {
	const char *type;
	double window_days;
	double naive_ratio;
	double naive_floor;
	double target;
	int list;
	bool json;
	const char *json_out;
} opts;

static fleet fleets[MAX_FLEETS];
static size_t nfleets;

static char *bands[MAX_AXIS];
static double band_lo[MAX_AXIS];
static size_t nbands;
static double factors[MAX_AXIS];
static size_t nfactors;

static false_finding *falses;
static size_t nfalses, falses_cap;

static char tool_names[NTOOLS][64];
static const char *const tool_keys[NTOOLS] = {"profreg", "naive", "naive_floor"};

/* Intern a band name; its order comes from the number it starts with. */
static int band_intern(const char **out, const char *s)
{
	char *end;

	for (size_t i = 0; i < nbands; i++)
		if (strcmp(bands[i], s) == 0) {
			*out = bands[i];
			return 0;
		}
	if (nbands == MAX_AXIS)
		return fail(E_DATA, "more than %d share bands in the truth", MAX_AXIS);
	if (!(bands[nbands] = strdup(s)))
		return nomem();
	band_lo[nbands] = strtod(s, &end);
	if (end == s)
		band_lo[nbands] = INFINITY;
	*out = bands[nbands++];
	return 0;
}

static int factor_add(double f)
{
	for (size_t i = 0; i < nfactors; i++)
		if (factors[i] == f)
			return 0;
	if (nfactors == MAX_AXIS)
		return fail(E_DATA, "more than %d regression factors in the truth", MAX_AXIS);
	factors[nfactors++] = f;
	return 0;
}

static int band_index(const char *b)
{
	for (size_t i = 0; i < nbands; i++)
		if (bands[i] == b)
			return (int)i;
	return -1;
}

static int factor_index(double f)
{
	for (size_t i = 0; i < nfactors; i++)
		if (factors[i] == f)
			return (int)i;
	return -1;
}

static void sort_axes(void)
{
	for (size_t i = 1; i < nbands; i++)
		for (size_t j = i;
		     j > 0 && (band_lo[j - 1] > band_lo[j] || (band_lo[j - 1] == band_lo[j] &&
							       strcmp(bands[j - 1], bands[j]) > 0));
		     j--) {
			char *b = bands[j];
			double l = band_lo[j];
			bands[j] = bands[j - 1];
			band_lo[j] = band_lo[j - 1];
			bands[j - 1] = b;
			band_lo[j - 1] = l;
		}
	for (size_t i = 1; i < nfactors; i++)
		for (size_t j = i; j > 0 && factors[j - 1] > factors[j]; j--) {
			double f = factors[j];
			factors[j] = factors[j - 1];
			factors[j - 1] = f;
		}
}

static int svc_cmp(const void *a, const void *b)
{
	return strcmp(((const svc *)a)->name, ((const svc *)b)->name);
}

static svc *svc_find(fleet *fl, const char *name)
{
	svc key = {.name = (char *)name};

	return fl->nsvcs ? bsearch(&key, fl->svcs, fl->nsvcs, sizeof(svc), svc_cmp) : NULL;
}

/* ----------------------------------------------------------------- truth */

static const char *kind_of(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_TRUE: case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

/* Check one truth line and add it as fleet->svcs[fleet->nsvcs]. */
static int truth_line(fleet *fl, json_t *o, size_t line)
{
	static const char *const keys[] = {"service", "regressed", "current_release"};
	static const char *const rkeys[] = {"function", "factor", "band", "baseline_share"};
	svc *s = &fl->svcs[fl->nsvcs];
	const char *rel;
	json_t *v;
	int rc;

	if (!json_is_object(o))
		return fail(E_DATA, "truth '%s': line %zu is %s, not an object", fl->truth_path,
			    line, kind_of(o));
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!json_object_get(o, keys[i]))
			return fail(E_DATA, "truth '%s': line %zu: missing key '%s'",
				    fl->truth_path, line, keys[i]);
	v = json_object_get(o, "service");
	if (!json_is_string(v) || !*json_string_value(v))
		return fail(E_DATA, "truth '%s': line %zu: 'service' is not a non-empty string",
			    fl->truth_path, line);
	if (!json_is_boolean(json_object_get(o, "regressed")))
		return fail(E_DATA, "truth '%s': line %zu: 'regressed' is not a boolean",
			    fl->truth_path, line);
	v = json_object_get(o, "current_release");
	if (!json_is_string(v) || !*json_string_value(v))
		return fail(E_DATA,
			    "truth '%s': line %zu: 'current_release' is not a non-empty string",
			    fl->truth_path, line);
	rel = json_string_value(v);
	if (!fl->release) {
		if (!(fl->release = strdup(rel)))
			return nomem();
	} else if (strcmp(fl->release, rel) != 0) {
		char a[72], b[72];
		return fail(
			E_DATA,
			"truth '%s': line %zu: current_release '%s' differs from '%s' on line 1",
			fl->truth_path, line, quote(a, rel), quote(b, fl->release));
	}

	memset(s, 0, sizeof(*s));
	if (!(s->name = strdup(json_string_value(json_object_get(o, "service")))))
		return nomem();
	fl->nsvcs++; /* owned from here on, whatever fails below */
	s->regressed = json_is_true(json_object_get(o, "regressed"));
	if (!s->regressed)
		return 0;
	for (size_t i = 0; i < sizeof(rkeys) / sizeof(rkeys[0]); i++)
		if (!json_object_get(o, rkeys[i]))
			return fail(E_DATA, "truth '%s': line %zu: regressed service without '%s'",
				    fl->truth_path, line, rkeys[i]);
	v = json_object_get(o, "function");
	if (!json_is_string(v) || !*json_string_value(v))
		return fail(E_DATA, "truth '%s': line %zu: 'function' is not a non-empty string",
			    fl->truth_path, line);
	if (!(s->function = strdup(json_string_value(v))))
		return nomem();
	v = json_object_get(o, "factor");
	if (!json_is_number(v) || !(json_number_value(v) > 0))
		return fail(E_DATA, "truth '%s': line %zu: 'factor' is not a positive number",
			    fl->truth_path, line);
	s->factor = json_number_value(v);
	v = json_object_get(o, "baseline_share");
	if (!json_is_number(v))
		return fail(E_DATA, "truth '%s': line %zu: 'baseline_share' is not a number",
			    fl->truth_path, line);
	s->share = json_number_value(v);
	v = json_object_get(o, "band");
	if (!json_is_string(v) || !*json_string_value(v))
		return fail(E_DATA, "truth '%s': line %zu: 'band' is not a non-empty string",
			    fl->truth_path, line);
	if ((rc = band_intern(&s->band, json_string_value(v))) < 0 ||
	    (rc = factor_add(s->factor)) < 0)
		return rc;
	return 0;
}

static int truth_load(fleet *fl)
{
	FILE *f = NULL;
	char *line = NULL;
	size_t cap = 0, lineno = 0, svcs_cap = 0;
	ssize_t n;
	json_error_t jerr;
	json_t *o;
	int rc = 0;

	if (!(f = fopen(fl->truth_path, "r"))) {
		rc = fail(E_DATA, "cannot open truth '%s': %s", fl->truth_path, strerror(errno));
		goto out;
	}
	while ((n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if ((size_t)n > MAX_LINE) {
			rc = fail(E_DATA, "truth '%s': line %zu is longer than %u bytes",
				  fl->truth_path, lineno, MAX_LINE);
			goto out;
		}
		if (strspn(line, " \t\r\n") == (size_t)n)
			continue;
		if (fl->nsvcs == svcs_cap) {
			size_t nc = svcs_cap ? svcs_cap * 2 : 256;
			svc *p;
			if (nc > MAX_SERVICES) {
				rc = fail(E_DATA, "truth '%s': more than %u services",
					  fl->truth_path, MAX_SERVICES);
				goto out;
			}
			if (!(p = realloc(fl->svcs, nc * sizeof(*p)))) {
				rc = nomem();
				goto out;
			}
			fl->svcs = p;
			svcs_cap = nc;
		}
		if (!(o = json_loads(line, 0, &jerr))) {
			rc = fail(E_DATA, "truth '%s': line %zu: %s", fl->truth_path, lineno,
				  jerr.text);
			goto out;
		}
		rc = truth_line(fl, o, lineno);
		json_decref(o);
		if (rc < 0)
			goto out;
	}
	if (ferror(f)) {
		rc = fail(E_DATA, "cannot read truth '%s': %s", fl->truth_path, strerror(errno));
		goto out;
	}
	if (fl->nsvcs == 0) {
		rc = fail(E_DATA, "truth '%s' lists no services", fl->truth_path);
		goto out;
	}
	qsort(fl->svcs, fl->nsvcs, sizeof(svc), svc_cmp);
	for (size_t i = 1; i < fl->nsvcs; i++)
		if (strcmp(fl->svcs[i - 1].name, fl->svcs[i].name) == 0) {
			char a[72];
			rc = fail(E_DATA, "truth '%s': service '%s' appears twice", fl->truth_path,
				  quote(a, fl->svcs[i].name));
			goto out;
		}
out:
	free(line);
	if (f)
		fclose(f);
	return rc;
}

/* -------------------------------------------------------------- findings */

enum { K_STR, K_STR_NULL, K_NUM_NULL, K_INT, K_ARR };

/* The keys issue 3 promises in every finding, and what each must hold. */
static const struct {
	const char *key;
	int kind;
} finding_keys[] = {
	{"service", K_STR}, {"type", K_STR}, {"function", K_STR}, {"direction", K_STR},
	{"baseline_share", K_NUM_NULL}, {"current_share", K_NUM_NULL}, {"delta", K_NUM_NULL},
	{"rel_delta", K_NUM_NULL}, {"ci_low", K_NUM_NULL}, {"ci_high", K_NUM_NULL},
	{"p_value", K_NUM_NULL}, {"q_value", K_NUM_NULL}, {"score", K_NUM_NULL},
	{"severity", K_STR_NULL}, {"baseline_captures", K_INT}, {"current_captures", K_INT},
	{"current_release", K_STR}, {"baseline_releases", K_ARR},
};

static const char *const kind_names[] = {
	"a string", "a string or null", "a number or null", "an integer", "an array",
};

static bool kind_ok(const json_t *v, int kind)
{
	switch (kind) {
	case K_STR: return json_is_string(v);
	case K_STR_NULL: return json_is_string(v) || json_is_null(v);
	case K_NUM_NULL: return json_is_number(v) || json_is_null(v);
	case K_INT: return json_is_integer(v);
	default: return json_is_array(v);
	}
}

static double num_or_nan(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

typedef struct fkey {
	char *key;
	size_t idx;
} fkey;

static int fkey_cmp(const void *a, const void *b)
{
	const fkey *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : (x->idx < y->idx ? -1 : x->idx > y->idx);
}

/* service, type, function, file and direction, joined by 0x1f. */
static char *finding_key(const json_t *o)
{
	const char *parts[5];
	const json_t *file = json_object_get(o, "file");
	size_t len = 0;
	char *k, *p;

	parts[0] = json_string_value(json_object_get(o, "service"));
	parts[1] = json_string_value(json_object_get(o, "type"));
	parts[2] = json_string_value(json_object_get(o, "function"));
	parts[3] = json_is_string(file) ? json_string_value(file) : "";
	parts[4] = json_string_value(json_object_get(o, "direction"));
	for (int i = 0; i < 5; i++)
		len += strlen(parts[i]) + 1;
	if (!(k = malloc(len)))
		return NULL;
	p = k;
	for (int i = 0; i < 5; i++) {
		size_t n = strlen(parts[i]);
		memcpy(p, parts[i], n);
		p += n;
		*p++ = i < 4 ? '\x1f' : '\0';
	}
	return k;
}

static int false_add(fleet *fl, const svc *s, const json_t *o)
{
	false_finding *x;

	if (nfalses == falses_cap) {
		size_t nc = falses_cap ? falses_cap * 2 : 64;
		false_finding *p = realloc(falses, nc * sizeof(*p));
		if (!p)
			return nomem();
		falses = p;
		falses_cap = nc;
	}
	x = &falses[nfalses];
	x->fleet = fl->label;
	x->sequence = fl->sequence ? fl->sequence : fl->label;
	x->null_service = !s->regressed;
	x->service = strdup(json_string_value(json_object_get(o, "service")));
	x->function = strdup(json_string_value(json_object_get(o, "function")));
	if (!x->service || !x->function) {
		free(x->service);
		free(x->function);
		return nomem();
	}
	x->baseline_share = num_or_nan(o, "baseline_share");
	x->current_share = num_or_nan(o, "current_share");
	x->q = num_or_nan(o, "q_value");
	x->score = num_or_nan(o, "score");
	nfalses++;
	return 0;
}

/* Check one finding's keys; sets *dir to its direction. */
static int finding_check(fleet *fl, const json_t *o, size_t i, int *dir)
{
	const char *d;
	char a[72];

	if (!json_is_object(o))
		return fail(E_DATA, "findings '%s': finding %zu is %s, not an object",
			    fl->findings_path, i, kind_of(o));
	for (size_t k = 0; k < sizeof(finding_keys) / sizeof(finding_keys[0]); k++) {
		const json_t *v = json_object_get(o, finding_keys[k].key);
		if (!v)
			return fail(E_DATA, "findings '%s': finding %zu: missing key '%s'",
				    fl->findings_path, i, finding_keys[k].key);
		if (!kind_ok(v, finding_keys[k].kind))
			return fail(E_DATA, "findings '%s': finding %zu: '%s' is %s, not %s",
				    fl->findings_path, i, finding_keys[k].key, kind_of(v),
				    kind_names[finding_keys[k].kind]);
	}
	d = json_string_value(json_object_get(o, "direction"));
	for (*dir = 0; *dir < 3; (*dir)++)
		if (strcmp(d, dir_names[*dir]) == 0)
			return 0;
	return fail(E_DATA, "findings '%s': finding %zu: unknown direction '%s'"
		    " (regression, improvement, "
		    "relative_shift)", fl->findings_path, i, quote(a, d));
}

/* Mark the services analyze skipped for too little data. */
static int findings_insufficient(fleet *fl, const json_t *arr)
{
	size_t i;
	json_t *v;
	char a[72];

	json_array_foreach(arr, i, v) {
		const json_t *name = json_is_object(v) ? json_object_get(v, "service") : v;
		svc *s;
		if (!json_is_string(name))
			return fail(E_DATA,
				    "findings '%s': insufficient entry %zu is neither a service"
				    " name nor an object with 'service'",
				    fl->findings_path, i);
		if (!(s = svc_find(fl, json_string_value(name))))
			return fail(E_DATA,
				    "findings '%s': insufficient entry %zu names service '%s',"
				    " which truth '%s' does not list",
				    fl->findings_path, i, quote(a, json_string_value(name)),
				    fl->truth_path);
		s->insufficient = true;
	}
	return 0;
}

/*
 * The truth function's own test when it did not pass (the findings come
 * from --all-tests): why it was missed, for the list of misses.
 */
static void miss_note(svc *s, const json_t *o)
{
	const json_t *look = json_object_get(o, "look");

	s->tested = true;
	s->t_p = num_or_nan(o, "p_value");
	s->t_pseq = num_or_nan(o, "p_seq");
	s->t_q = num_or_nan(o, "q_value");
	s->t_mw = num_or_nan(o, "mw_p");
	s->t_look = json_is_integer(look) ? (long long)json_integer_value(look) : 0;
}

static int findings_load(fleet *fl, const opts *opt)
{
	json_t *root = NULL, *arr, *ins, *o;
	json_error_t jerr;
	struct stat st;
	fkey *keys = NULL;
	size_t nkeys = 0, i;
	int rc = 0;

	if (stat(fl->findings_path, &st) < 0) {
		rc = fail(E_DATA, "cannot open findings '%s': %s", fl->findings_path,
			  strerror(errno));
		goto out;
	}
	if ((unsigned long long)st.st_size > MAX_INPUT_BYTES) {
		rc = fail(E_DATA, "findings '%s' is larger than %llu MiB", fl->findings_path,
			  MAX_INPUT_BYTES >> 20);
		goto out;
	}
	if (!(root = json_load_file(fl->findings_path, JSON_REJECT_DUPLICATES, &jerr))) {
		rc = fail(E_DATA, "cannot parse findings '%s': %s at line %d column %d",
			  fl->findings_path, jerr.text, jerr.line, jerr.column);
		goto out;
	}
	if (!json_is_object(root)) {
		rc = fail(E_DATA, "findings '%s' is %s, not an object with 'findings'",
			  fl->findings_path, kind_of(root));
		goto out;
	}
	arr = json_object_get(root, "findings");
	ins = json_object_get(root, "insufficient");
	if (!json_is_array(arr) || !json_is_array(ins)) {
		rc = fail(E_DATA, "findings '%s': '%s' is missing or not an array",
			  fl->findings_path, json_is_array(arr) ? "insufficient" : "findings");
		goto out;
	}
	o = json_object_get(root, "services");
	fl->analyzed = json_is_integer(o) ? (long long)json_integer_value(o) : -1;
	if ((rc = findings_insufficient(fl, ins)) < 0)
		goto out;
	if (!(keys = calloc(json_array_size(arr) + 1, sizeof(*keys)))) {
		rc = nomem();
		goto out;
	}

	json_array_foreach(arr, i, o) {
		const char *service, *function;
		const json_t *sig = NULL;
		svc *s;
		int dir;
		char a[72];

		if ((rc = finding_check(fl, o, i, &dir)) < 0)
			goto out;
		service = json_string_value(json_object_get(o, "service"));
		function = json_string_value(json_object_get(o, "function"));
		if (!(s = svc_find(fl, service))) {
			rc = fail(E_DATA,
				  "findings '%s': finding %zu names service '%s', which truth '%s'"
				  " does not list",
				  fl->findings_path, i, quote(a, service), fl->truth_path);
			goto out;
		}
		/* --all-tests lists tests that did not pass: they are not findings. */
		sig = json_object_get(o, "significant");
		if (sig && json_is_false(sig)) {
			fl->not_significant++;
			if (s->regressed && strcmp(function, s->function) == 0)
				miss_note(s, o);
			continue;
		}
		/* The truth describes one profile type; findings of others are not about it. */
		if (strcmp(json_string_value(json_object_get(o, "type")), opt->type) != 0) {
			fl->other_type++;
			continue;
		}
		if (!(keys[nkeys].key = finding_key(o))) {
			rc = nomem();
			goto out;
		}
		keys[nkeys++].idx = i;
		fl->dir_n[dir]++;
		if (dir == D_SHIFT && !s->regressed)
			fl->shift_null++;
		if (dir == D_SHIFT && s->regressed && strcmp(function, s->function) == 0)
			s->shifted = true;
		if (dir != D_REGRESSION)
			continue;
		if (s->regressed && strcmp(function, s->function) == 0) {
			s->hit[T_PROFREG] = true;
			s->true_n[T_PROFREG]++;
		} else {
			s->false_n[T_PROFREG]++;
			if ((rc = false_add(fl, s, o)) < 0)
				goto out;
		}
	}

	qsort(keys, nkeys, sizeof(*keys), fkey_cmp);
	for (i = 1; i < nkeys; i++)
		if (strcmp(keys[i - 1].key, keys[i].key) == 0) {
			const json_t *f = json_array_get(arr, keys[i].idx);
			char a[72], b[72];
			rc = fail(E_DATA, "findings '%s': findings %zu and %zu are the same"
				  " (service '%s', function '%s', "
				  "direction '%s')", fl->findings_path,
				  keys[i - 1].idx, keys[i].idx,
				  quote(a, json_string_value(json_object_get(f, "service"))),
				  quote(b, json_string_value(json_object_get(f, "function"))),
				  json_string_value(json_object_get(f, "direction")));
			goto out;
		}
out:
	if (keys)
		for (i = 0; i < nkeys; i++)
			free(keys[i].key);
	free(keys);
	json_decref(root);
	return rc;
}

/* ----------------------------------------------------------- naive rule */

/*
 * Per service and function: the mean self share over the current
 * release's captures and over the baseline captures (same service and
 * profile type, in the window before the first current capture). A
 * capture where the function has no row counts as share 0, so each sum
 * is divided by the number of captures, not of rows.
 */
static const char naive_sql[] =
	"with cur as ("
	"  select p.id, p.service_id, p.captured_at from profiles p"
	"  where p.release = $1 and p.profile_type = $2),"
	" cn as ("
	"  select service_id, min(captured_at) as t0, count(*) as n from cur group by service_id),"
	" base as ("
	"  select p.id, p.service_id from profiles p join cn on cn.service_id = p.service_id"
	"  where p.profile_type = $2 and p.captured_at < cn.t0"
	"    and p.captured_at >= cn.t0 - make_interval(secs => $3::float8)),"
	" bn as (select service_id, count(*) as n from base group by service_id),"
	" cs as ("
	"  select c.service_id, pf.function_id, sum(coalesce(pf.self_share, 0)) as s"
	"  from cur c join profile_functions pf on pf.profile_id = c.id group by 1, 2),"
	" bs as ("
	"  select b.service_id, pf.function_id, sum(coalesce(pf.self_share, 0)) as s"
	"  from base b join profile_functions pf on pf.profile_id = b.id group by 1, 2)"
	" select s.name, f.name, cn.n, bn.n,"
	"   (coalesce(bs.s, 0) / bn.n)::text, (coalesce(cs.s, 0) / cn.n)::text"
	" from cs full join bs using (service_id, function_id)"
	" join cn using (service_id) join bn using (service_id)"
	" join services s on s.id = service_id"
	" join functions f on f.id = function_id"
	" order by 1, 2";

static void naive_row(fleet *fl, const opts *o, svc *s, const char *fname, double bmean,
		      double cmean)
{
	bool flag = bmean > 0 && cmean > o->naive_ratio * bmean;
	bool flags[NTOOLS] = {false, flag, flag && bmean >= o->naive_floor};

	s->naive_data = true;
	if (bmean == 0 && cmean > 0)
		fl->naive_new++;
	for (int t = T_NAIVE; t < NTOOLS; t++) {
		if (!flags[t])
			continue;
		if (s->regressed && strcmp(fname, s->function) == 0) {
			s->hit[t] = true;
			s->true_n[t]++;
		} else {
			s->false_n[t]++;
		}
	}
}

static int naive_run(fleet *fl, const opts *o)
{
	PGconn *conn = NULL;
	PGresult *res = NULL;
	char secs[64];
	const char *params[3];
	const char *last = NULL;
	int rc = 0;

	conn = PQconnectdb(fl->conninfo);
	if (PQstatus(conn) != CONNECTION_OK) {
		char *m = PQerrorMessage(conn), *nl;
		if ((nl = strchr(m, '\n')))
			*nl = '\0';
		rc = fail(E_RUNTIME, "cannot connect to the database of fleet '%s': %s", fl->label,
			  m);
		goto out;
	}
	snprintf(secs, sizeof(secs), "%.0f", o->window_days * 86400.0);
	params[0] = fl->release;
	params[1] = o->type;
	params[2] = secs;
	res = PQexecParams(conn, naive_sql, 3, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		char *m = PQresultErrorMessage(res), *nl;
		if ((nl = strchr(m, '\n')))
			*nl = '\0';
		rc = fail(E_RUNTIME, "naive rule query failed on fleet '%s': %s", fl->label, m);
		goto out;
	}
	for (int r = 0; r < PQntuples(res); r++) {
		const char *sname = PQgetvalue(res, r, 0);
		svc *s = svc_find(fl, sname);
		if (!s) {
			if (!last || strcmp(last, sname) != 0)
				fl->db_unknown++;
			last = sname;
			continue;
		}
		naive_row(fl, o, s, PQgetvalue(res, r, 1), strtod(PQgetvalue(res, r, 4), NULL),
			  strtod(PQgetvalue(res, r, 5), NULL));
	}
	fl->naive_done = true;
out:
	PQclear(res);
	PQfinish(conn);
	return rc;
}

/* ---------------------------------------------------------- aggregation */

typedef struct tool_stats {
	unsigned hits[MAX_AXIS][MAX_AXIS], total[MAX_AXIS][MAX_AXIS];
	unsigned null_nights, false_null, null_with_false, false_regressed, true_findings;
	bool done; /* every fleet of the setting had this tool */
} tool_stats;

typedef struct setting {
	const char *name;
	unsigned services, regressed, nulls, insufficient;
	unsigned dir_n[3], shift_null, shifted_truth, not_significant, naive_new;
	tool_stats t[NTOOLS];
} setting;

static setting settings[MAX_FLEETS];
static size_t nsettings;

static void aggregate(void)
{
	for (size_t i = 0; i < nfleets; i++) {
		fleet *fl = &fleets[i];
		setting *st = NULL;

		for (size_t k = 0; k < nsettings; k++)
			if (strcmp(settings[k].name, fl->setting) == 0)
				st = &settings[k];
		if (!st) {
			st = &settings[nsettings++];
			memset(st, 0, sizeof(*st));
			st->name = fl->setting;
			for (int t = 0; t < NTOOLS; t++)
				st->t[t].done = true;
		}
		for (int d = 0; d < 3; d++)
			st->dir_n[d] += fl->dir_n[d];
		st->shift_null += fl->shift_null;
		st->not_significant += fl->not_significant;
		st->naive_new += fl->naive_new;
		if (!fl->naive_done)
			st->t[T_NAIVE].done = st->t[T_FLOOR].done = false;
		for (size_t j = 0; j < fl->nsvcs; j++) {
			svc *s = &fl->svcs[j];
			st->services++;
			st->insufficient += s->insufficient;
			if (s->regressed) {
				st->regressed++;
				st->shifted_truth += s->shifted;
			} else {
				st->nulls++;
			}
			for (int t = 0; t < NTOOLS; t++) {
				tool_stats *ts = &st->t[t];
				bool seen = t == T_PROFREG ? !s->insufficient : s->naive_data;
				ts->true_findings += s->true_n[t];
				if (s->regressed) {
					/* A service the tool could not judge counts as a miss. */
					int b = band_index(s->band), f = factor_index(s->factor);
					ts->total[b][f]++;
					ts->hits[b][f] += s->hit[t];
					ts->false_regressed += s->false_n[t];
				} else if (seen) {
					ts->null_nights++;
					ts->false_null += s->false_n[t];
					ts->null_with_false += s->false_n[t] > 0;
				}
			}
		}
	}
}

static double ratio(unsigned a, unsigned b)
{
	return b ? (double)a / b : NAN;
}

/*
 * One-sided 95% upper bound of a Poisson mean after seeing k events: the
 * mean under which k or fewer events have probability 0.05. Zero events
 * give about 3 (the "rule of three"), so a false-finding count of 0 over
 * N null service-nights bounds the rate at about 3000 / N per 1,000.
 */
static double poisson_upper(unsigned k)
{
	double lo = 0, hi = k + 10 * sqrt(k + 1.0) + 10;

	for (int it = 0; it < 100; it++) {
		double mid = (lo + hi) / 2, cdf = 0;
		for (unsigned i = 0; i <= k; i++)
			cdf += exp(-mid + (i ? i * log(mid) : 0) - lgamma(i + 1.0));
		if (cdf > 0.05)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

static double per_1000_upper(const tool_stats *ts)
{
	return ts->null_nights ? 1000.0 * poisson_upper(ts->false_null) / ts->null_nights : NAN;
}

/*
 * Issue 3's targets for the default settings: at most 1 false finding per
 * 1,000 null service-nights, every 1.5x and 2x regression of a function
 * with a 1-10% share found, precision of at least 98%.
 */
#define TARGET_FALSE_PER_1000 1.0
#define TARGET_PRECISION 0.98
#define TARGET_BAND "1-10%"
#define TARGET_FACTOR 1.5

static void target_recall(const tool_stats *ts, unsigned *h, unsigned *n)
{
	*h = *n = 0;
	for (size_t b = 0; b < nbands; b++)
		for (size_t f = 0; f < nfactors; f++)
			if (strcmp(bands[b], TARGET_BAND) == 0 && factors[f] >= TARGET_FACTOR) {
				*h += ts->hits[b][f];
				*n += ts->total[b][f];
			}
}

static void row_sum(const tool_stats *ts, int b, unsigned *h, unsigned *n)
{
	*h = *n = 0;
	for (size_t f = 0; f < nfactors; f++) {
		*h += ts->hits[b][f];
		*n += ts->total[b][f];
	}
}

static void col_sum(const tool_stats *ts, int f, unsigned *h, unsigned *n)
{
	*h = *n = 0;
	for (size_t b = 0; b < nbands; b++) {
		*h += ts->hits[b][f];
		*n += ts->total[b][f];
	}
}

/*
 * The smallest factor from which on recall reaches the target: that
 * factor and every larger one with cases must reach it, so one lucky cell
 * below a failing one does not count. -1 when even the largest fails, -2
 * when the band has no cases.
 */
static int smallest_factor(const tool_stats *ts, int b, double target)
{
	int best = -2;

	for (int f = (int)nfactors - 1; f >= 0; f--) {
		if (!ts->total[b][f])
			continue;
		if ((double)ts->hits[b][f] / ts->total[b][f] + 1e-12 < target)
			return best == -2 ? -1 : best;
		best = f;
	}
	return best;
}

/* ---------------------------------------------------------------- text */

/*
 * A name from an input, safe on a terminal (control bytes as \xNN), cut
 * to `width` bytes with "..." when longer, and padded to `width`.
 */
static void put_name(FILE *out, const char *s, int width)
{
	char buf[4 * NAME_W + 8];
	size_t n = 0, w = (size_t)width;

	for (size_t i = 0; s[i] && n <= w; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\\x%02x", c);
		else
			buf[n++] = (char)c;
	}
	if (n > w) {
		n = w - 3;
		/* Never leave half a UTF-8 sequence before the ellipsis. */
		while (n > 0 && ((unsigned char)buf[n] & 0xc0) == 0x80)
			n--;
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	buf[n] = '\0';
	fprintf(out, "%-*s", width, buf);
}

static void cell(char *out, size_t cap, unsigned h, unsigned n)
{
	if (n)
		snprintf(out, cap, "%u/%u (%.0f%%)", h, n, 100.0 * h / n);
	else
		snprintf(out, cap, "-");
}

static void print_recall(FILE *out, const tool_stats *ts, const char *title)
{
	char c[48];
	unsigned h, n;

	fprintf(out, "\n  %s\n  %-10s", title, "share");
	for (size_t f = 0; f < nfactors; f++) {
		snprintf(c, sizeof(c), "%gx", factors[f]);
		fprintf(out, " %-15s", c);
	}
	fprintf(out, " %s\n", "all");
	for (size_t b = 0; b <= nbands; b++) {
		fprintf(out, "  %-10s", b < nbands ? bands[b] : "all");
		for (size_t f = 0; f <= nfactors; f++) {
			if (b < nbands && f < nfactors) {
				h = ts->hits[b][f];
				n = ts->total[b][f];
			} else if (b < nbands) {
				row_sum(ts, (int)b, &h, &n);
			} else if (f < nfactors) {
				col_sum(ts, (int)f, &h, &n);
			} else {
				unsigned hh, nn;
				h = n = 0;
				for (size_t k = 0; k < nbands; k++) {
					row_sum(ts, (int)k, &hh, &nn);
					h += hh;
					n += nn;
				}
			}
			cell(c, sizeof(c), h, n);
			fprintf(out, f < nfactors ? " %-15s" : " %s", c);
		}
		fputc('\n', out);
	}
}

static void fmt_num(char *out, size_t cap, double v, const char *fmt)
{
	if (isnan(v))
		snprintf(out, cap, "-");
	else
		snprintf(out, cap, fmt, v);
}

static void print_counts(FILE *out, const setting *st)
{
	char c[NTOOLS][48];
	const tool_stats *t = st->t;

#define ROW(label, ...) do { \
		for (int k = 0; k < NTOOLS; k++) { \
			if (!t[k].done) { snprintf(c[k], sizeof(c[k]), "-"); continue; } \
			__VA_ARGS__; \
		} \
		fprintf(out, "  %-44s %14s %14s %18s\n", label, c[0], c[1], c[2]); \
	} while (0)

	fprintf(out, "\n  %-44s %14s %14s %18s\n", "false findings and precision", "profreg",
		"naive", "naive, floor");
	ROW("null service-nights", snprintf(c[k], 48, "%u", t[k].null_nights));
	ROW("false findings on null services", snprintf(c[k], 48, "%u", t[k].false_null));
	ROW("  per 1,000 null service-nights",
	    fmt_num(c[k], 48, 1000.0 * ratio(t[k].false_null, t[k].null_nights), "%.1f"));
	ROW("  95% upper bound per 1,000", fmt_num(c[k], 48, per_1000_upper(&t[k]), "%.1f"));
	ROW("null services with >= 1 false finding",
	    snprintf(c[k], 48, "%u", t[k].null_with_false));
	ROW("false findings in regressed services", snprintf(c[k], 48, "%u", t[k].false_regressed));
	ROW("true findings", snprintf(c[k], 48, "%u", t[k].true_findings));
	ROW("all regression findings",
	    snprintf(c[k], 48, "%u", t[k].true_findings + t[k].false_null + t[k].false_regressed));
	ROW("precision (true / all)",
	    fmt_num(c[k], 48,
		    100.0 * ratio(t[k].true_findings,
				  t[k].true_findings + t[k].false_null + t[k].false_regressed),
		    "%.1f%%"));
#undef ROW
}

static const char *met(bool ok)
{
	return ok ? "met" : "NOT met";
}

static void print_targets(FILE *out, const tool_stats *ts)
{
	unsigned h, n, all = ts->true_findings + ts->false_null + ts->false_regressed;
	double rate = 1000.0 * ratio(ts->false_null, ts->null_nights),
	       prec = ratio(ts->true_findings, all);
	char c[48];

	fprintf(out, "\n  targets of issue 3 for profreg analyze\n");
	fmt_num(c, sizeof(c), rate, "%.1f");
	fprintf(out, "    %-52s %10s   %s", "false findings per 1,000 null service-nights <= 1", c,
		isnan(rate) ? "-" : met(rate <= TARGET_FALSE_PER_1000));
	/* A rate of 0 over few nights is not yet evidence of a rate under 1. */
	if (!isnan(rate) && rate <= TARGET_FALSE_PER_1000 &&
	    per_1000_upper(ts) > TARGET_FALSE_PER_1000)
		fprintf(out, ", not yet shown: 95%% upper bound %.1f", per_1000_upper(ts));
	fputc('\n', out);
	target_recall(ts, &h, &n);
	snprintf(c, sizeof(c), "%u/%u", h, n);
	fprintf(out, "    %-52s %10s   %s\n", "recall 100% at >= 1.5x for a 1-10% share",
		n ? c : "-", n ? met(h == n) : "-");
	fmt_num(c, sizeof(c), 100.0 * prec, "%.1f%%");
	fprintf(out, "    %-52s %10s   %s\n", "precision >= 98%", c,
		isnan(prec) ? "-" : met(prec >= TARGET_PRECISION));
}

static void print_setting(FILE *out, const setting *st)
{
	bool first = true;

	fprintf(out, "\n== %s (fleets:", st->name);
	for (size_t i = 0; i < nfleets; i++)
		if (strcmp(fleets[i].setting, st->name) == 0) {
			fprintf(out, "%s%s", first ? " " : ", ", fleets[i].label);
			first = false;
		}
	fprintf(out, ") ==\n");
	fprintf(out,
		"services %u: %u regressed, %u null; %u skipped by analyze for too little data\n",
		st->services, st->regressed, st->nulls, st->insufficient);
	fprintf(out,
		"\nrecall: regressions found, hits/total (percent), by "
		"baseline share band and factor\n");
	for (int t = 0; t < NTOOLS; t++) {
		if (st->t[t].done)
			print_recall(out, &st->t[t], tool_names[t]);
		else
			fprintf(out, "\n  %s: not computed (no --db)\n", tool_names[t]);
	}
	print_counts(out, st);
	print_targets(out, &st->t[T_PROFREG]);
	fprintf(out, "\n  profreg's other findings: %u relative_shift (%u on null services),"
		" %u improvement;\n  regressed functions called relative_shift: %u\n",
		st->dir_n[D_SHIFT], st->shift_null, st->dir_n[D_IMPROVEMENT], st->shifted_truth);
	if (st->t[T_NAIVE].done)
		fprintf(out,
			"  naive rule: %u function(s) rose from a zero "
			"baseline share (not flagged)\n",
			st->naive_new);
}

static void print_smallest(FILE *out, const opts *o)
{
	char c[32];

	fprintf(out,
		"\n== smallest factor with >= %.0f%% recall (at that factor "
		"and every larger one) ==\n",
		100.0 * o->target);
	for (int t = 0; t < NTOOLS; t++) {
		if (t == T_FLOOR)
			continue;
		fprintf(out, "\n  %s\n  %-10s", tool_names[t], "share");
		for (size_t k = 0; k < nsettings; k++)
			fprintf(out, " %-22.22s", settings[k].name);
		fputc('\n', out);
		for (size_t b = 0; b < nbands; b++) {
			fprintf(out, "  %-10s", bands[b]);
			for (size_t k = 0; k < nsettings; k++) {
				int f = smallest_factor(&settings[k].t[t], (int)b, o->target);
				if (!settings[k].t[t].done || f == -2)
					snprintf(c, sizeof(c), "-");
				else if (f == -1)
					snprintf(c, sizeof(c), "none");
				else
					snprintf(c, sizeof(c), "%gx", factors[f]);
				fprintf(out, " %-22s", c);
			}
			fputc('\n', out);
		}
	}
}

static int false_cmp(const void *a, const void *b)
{
	const false_finding *x = a, *y = b;
	double sx = isnan(x->score) ? -INFINITY : x->score,
	       sy = isnan(y->score) ? -INFINITY : y->score;

	if (sx != sy)
		return sx > sy ? -1 : 1;
	return strcmp(x->service, y->service);
}

static void print_pct(FILE *out, double v)
{
	if (isnan(v))
		fprintf(out, " %9s", "-");
	else
		fprintf(out, " %8.3f%%", 100.0 * v);
}

/* Why a regression was missed: skipped, called a shift, or its test's p and q. */
static void print_miss_note(FILE *out, const svc *s)
{
	if (s->insufficient)
		fprintf(out, "skipped: too little data\n");
	else if (s->shifted)
		fprintf(out, "reported as relative_shift\n");
	else if (s->tested)
		fprintf(out, "look %lld p %.2g p_seq %.2g q %.2g mw %.2g\n", s->t_look, s->t_p,
			s->t_pseq, s->t_q, s->t_mw);
	else
		fputc('\n', out);
}

static void print_lists(FILE *out, const opts *o)
{
	size_t shown = 0, misses = 0;

	if (o->list <= 0)
		return;
	if (nfalses)
		qsort(falses, nfalses, sizeof(*falses), false_cmp);
	fprintf(out, "\n== false regression findings of profreg analyze: %zu",
		nfalses);
	if (nfalses > (size_t)o->list)
		fprintf(out, " (the %d with the highest score)", o->list);
	fprintf(out, " ==\n");
	if (nfalses)
		fprintf(out, "  %-10s %-10s %-*s %9s %9s %10s %8s\n", "fleet", "service", NAME_W,
			"function", "baseline", "current", "q", "score");
	for (size_t i = 0; i < nfalses && i < (size_t)o->list; i++) {
		const false_finding *x = &falses[i];
		fputs("  ", out);
		put_name(out, x->fleet, 10);
		fputc(' ', out);
		put_name(out, x->service, 10);
		fputc(' ', out);
		put_name(out, x->function, NAME_W);
		print_pct(out, x->baseline_share);
		print_pct(out, x->current_share);
		fprintf(out, " %10.2g %8.2f\n", x->q, x->score);
	}

	for (size_t i = 0; i < nfleets; i++)
		for (size_t j = 0; j < fleets[i].nsvcs; j++)
			misses += fleets[i].svcs[j].regressed && !fleets[i].svcs[j].hit[T_PROFREG];
	fprintf(out, "\n== regressions profreg analyze missed: %zu", misses);
	if (misses > (size_t)o->list)
		fprintf(out, " (the %d largest)", o->list);
	fprintf(out, " ==\n");
	if (misses)
		fprintf(out, "  %-10s %-10s %-*s %9s %6s  %s\n", "fleet", "service", NAME_W,
			"function", "baseline", "factor", "note");
	/* Largest factor first, then largest share: the misses that matter most. */
	for (size_t f = nfactors; f-- > 0 && shown < (size_t)o->list;)
		for (size_t b = nbands; b-- > 0 && shown < (size_t)o->list;)
			for (size_t i = 0; i < nfleets && shown < (size_t)o->list; i++)
				for (size_t j = 0; j < fleets[i].nsvcs && shown < (size_t)o->list;
				     j++) {
					const svc *s = &fleets[i].svcs[j];
					if (!s->regressed || s->hit[T_PROFREG] ||
					    s->factor != factors[f] || s->band != bands[b])
						continue;
					fputs("  ", out);
					put_name(out, fleets[i].label, 10);
					fputc(' ', out);
					put_name(out, s->name, 10);
					fputc(' ', out);
					put_name(out, s->function, NAME_W);
					print_pct(out, s->share);
					fprintf(out, " %5gx  ", s->factor);
					print_miss_note(out, s);
					shown++;
				}
}


/* ------------------------------------------------------------ sequences */

/*
 * Several nights of one fleet (--sequence): a release analysed night
 * after night with its captures so far. A false finding is counted once
 * however many nights it is reported on (it is one false alarm); every
 * night of every null service the analysis judged is a null
 * service-night. Findings are distinct (service, function) pairs.
 */
typedef struct seq_stats {
	unsigned sequences, nights, null_nights, false_null, false_regressed, true_distinct;
	unsigned null_with_false;
} seq_stats;

static seq_stats seqs;

static bool same_false(const false_finding *a, const false_finding *b)
{
	return strcmp(a->sequence, b->sequence) == 0 && strcmp(a->service, b->service) == 0 &&
	       strcmp(a->function, b->function) == 0;
}

static bool service_false_before(size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (strcmp(falses[j].sequence, falses[i].sequence) == 0 &&
		    strcmp(falses[j].service, falses[i].service) == 0)
			return true;
	return false;
}

static void aggregate_sequences(void)
{
	memset(&seqs, 0, sizeof(seqs));
	for (size_t i = 0; i < nfleets; i++) {
		const fleet *fl = &fleets[i];
		bool first = true;
		if (!fl->sequence)
			continue;
		for (size_t k = 0; k < i; k++)
			if (fleets[k].sequence && strcmp(fleets[k].sequence, fl->sequence) == 0)
				first = false;
		seqs.sequences += first;
		seqs.nights++;
		for (size_t j = 0; j < fl->nsvcs; j++) {
			const svc *sv = &fl->svcs[j];
			bool hit_before = false;
			if (!sv->regressed && !sv->insufficient)
				seqs.null_nights++;
			if (!sv->regressed || !sv->hit[T_PROFREG])
				continue;
			/* A true finding counts once per sequence: on its first night. */
			for (size_t k = 0; k < i && !hit_before; k++) {
				const svc *o;
				if (!fleets[k].sequence || strcmp(fleets[k].sequence, fl->sequence))
					continue;
				o = svc_find((fleet *)&fleets[k], sv->name);
				hit_before = o && o->hit[T_PROFREG];
			}
			seqs.true_distinct += !hit_before;
		}
	}
	for (size_t i = 0; i < nfalses; i++) {
		bool dup = false;
		bool in_seq = false;
		for (size_t k = 0; k < nfleets && !in_seq; k++)
			in_seq = fleets[k].sequence &&
				 strcmp(fleets[k].sequence, falses[i].sequence) == 0;
		if (!in_seq)
			continue;
		for (size_t j = 0; j < i && !dup; j++)
			dup = same_false(&falses[j], &falses[i]);
		if (dup)
			continue;
		if (falses[i].null_service) {
			seqs.false_null++;
			seqs.null_with_false += !service_false_before(i);
		} else {
			seqs.false_regressed++;
		}
	}
}

/*
 * Pages: only a confirmed finding pages (a candidate waits for its
 * second look), so a false page is what costs on-call sleep. A
 * regression finding paged if it was ever confirmed: its state now, or
 * one in its history (it may have gone away since).
 */
typedef struct page_stats {
	unsigned fleets, true_pages, false_null, false_regressed;
} page_stats;

static page_stats pages;

static bool ever_confirmed(const json_t *o)
{
	const json_t *h = json_object_get(o, "states"), *e;
	const char *st = json_string_value(json_object_get(o, "state"));
	size_t i;

	if (st && strcmp(st, "confirmed") == 0)
		return true;
	json_array_foreach(h, i, e) {
		st = json_string_value(json_object_get(e, "state"));
		if (st && strcmp(st, "confirmed") == 0)
			return true;
	}
	return false;
}

static int states_load(fleet *fl)
{
	json_error_t jerr;
	json_t *root, *o;
	size_t i;
	int rc = 0;

	if (!(root = json_load_file(fl->states_path, JSON_REJECT_DUPLICATES, &jerr)))
		return fail(E_DATA, "cannot read states '%s': %s (line %d)", fl->states_path,
			    jerr.text, jerr.line);
	if (!json_is_array(root)) {
		json_decref(root);
		return fail(E_DATA, "states '%s': not an array of findings", fl->states_path);
	}
	pages.fleets++;
	json_array_foreach(root, i, o) {
		const char *service = json_string_value(json_object_get(o, "service"));
		const char *function = json_string_value(json_object_get(o, "function"));
		const char *dir = json_string_value(json_object_get(o, "direction"));
		const svc *sv;
		if (!service || !function || !dir) {
			rc = fail(E_DATA, "states '%s', finding %zu: no service, function or "
				  "direction", fl->states_path, i);
			break;
		}
		if (strcmp(dir, "regression") != 0 || !ever_confirmed(o))
			continue;
		if (!(sv = svc_find(fl, service))) {
			rc = fail(E_DATA, "states '%s': service '%s' is not in truth '%s'",
				  fl->states_path, service, fl->truth_path);
			break;
		}
		if (!sv->regressed)
			pages.false_null++;
		else if (!sv->function || strcmp(sv->function, function) != 0)
			pages.false_regressed++;
		else
			pages.true_pages++;
	}
	json_decref(root);
	return rc;
}

static double seq_upper(void)
{
	return seqs.null_nights ? 1000.0 * poisson_upper(seqs.false_null) / seqs.null_nights : NAN;
}

static double seq_precision(void)
{
	return ratio(seqs.true_distinct,
		     seqs.true_distinct + seqs.false_null + seqs.false_regressed);
}

static void print_sequences(FILE *out)
{
	char c[48];
	double rate = 1000.0 * ratio(seqs.false_null, seqs.null_nights);

	if (!seqs.sequences)
		return;
	fprintf(out, "\n== all nights together: %u fleet%s analysed on %u nights in all ==\n",
		seqs.sequences, seqs.sequences == 1 ? "" : "s", seqs.nights);
	fprintf(out, "  (a finding reported on several nights counts once)\n");
	fprintf(out, "  %-52s %10u\n", "null service-nights", seqs.null_nights);
	fprintf(out, "  %-52s %10u\n", "distinct false findings on null services", seqs.false_null);
	fmt_num(c, sizeof(c), rate, "%.2f");
	fprintf(out, "  %-52s %10s\n", "  per 1,000 null service-nights", c);
	fmt_num(c, sizeof(c), seq_upper(), "%.2f");
	fprintf(out, "  %-52s %10s\n", "  95% upper bound per 1,000", c);
	fprintf(out, "  %-52s %10u\n", "null services with >= 1 false finding",
		seqs.null_with_false);
	fprintf(out, "  %-52s %10u\n", "distinct false findings in regressed services",
		seqs.false_regressed);
	fprintf(out, "  %-52s %10u\n", "distinct true findings", seqs.true_distinct);
	fmt_num(c, sizeof(c), 100.0 * seq_precision(), "%.1f%%");
	fprintf(out, "  %-52s %10s\n", "precision (true / all, distinct)", c);
	if (!pages.fleets)
		return;
	fprintf(out, "  pages (regression findings ever confirmed; a candidate does not page):\n");
	fprintf(out, "  %-52s %10u\n", "  false pages on null services", pages.false_null);
	fmt_num(c, sizeof(c), 1000.0 * ratio(pages.false_null, seqs.null_nights), "%.2f");
	fprintf(out, "  %-52s %10s\n", "    per 1,000 null service-nights", c);
	fmt_num(c, sizeof(c),
		seqs.null_nights ? 1000.0 * poisson_upper(pages.false_null) / seqs.null_nights
				 : NAN, "%.2f");
	fprintf(out, "  %-52s %10s\n", "    95% upper bound per 1,000", c);
	fprintf(out, "  %-52s %10u\n", "  false pages in regressed services",
		pages.false_regressed);
	fprintf(out, "  %-52s %10u\n", "  true pages", pages.true_pages);
}

/* Recall of one band at one factor in a setting, as hits and total. */
static void cell_of(const char *setting_name, const char *band, double factor, unsigned *h,
		    unsigned *n)
{
	*h = *n = 0;
	for (size_t k = 0; k < nsettings; k++) {
		if (strcmp(settings[k].name, setting_name) != 0)
			continue;
		for (size_t b = 0; b < nbands; b++)
			for (size_t f = 0; f < nfactors; f++)
				if (strcmp(bands[b], band) == 0 && factors[f] == factor) {
					*h += settings[k].t[T_PROFREG].hits[b][f];
					*n += settings[k].t[T_PROFREG].total[b][f];
				}
	}
}

/*
 * Issue 18's targets, when the settings it names are there (make eval's
 * multi-night fleet: "night 1", "night 3").
 */
static void print_targets18(FILE *out, const opts *o)
{
	static const struct {
		const char *what, *setting, *band;
		double factor, target;
	} rows[] = {
		{"x1.25, 1-10%, night 1 (4 captures) >= 80%", "night 1", "1-10%", 1.25, 0.8},
		{"x1.25, 10-30%, night 1 (4 captures) >= 80%", "night 1", "10-30%", 1.25, 0.8},
		{"x1.1, 1-10%, night 3 >= 50%", "night 3", "1-10%", 1.1, 0.5},
		{"x1.1, 10-30%, night 3 >= 50%", "night 3", "10-30%", 1.1, 0.5},
		{"x2, 0.1-1%, night 3 (12 captures) >= 80%", "night 3", "0.1-1%", 2, 0.8},
	};
	char name[128], c[48];
	bool any = false;
	double prec = seq_precision();

	(void)o;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		unsigned h, n;
		for (size_t k = 0; k < nsettings && !any; k++)
			any = strncmp(settings[k].name, "night ", 6) == 0;
		if (!any)
			return;
		if (i == 0)
			fprintf(out, "\n== targets of issue 18 ==\n");
		snprintf(name, sizeof(name), "%s", rows[i].setting);
		cell_of(name, rows[i].band, rows[i].factor, &h, &n);
		snprintf(c, sizeof(c), "%u/%u", h, n);
		fprintf(out, "  %-52s %10s   %s\n", rows[i].what, n ? c : "-",
			n ? met((double)h / n + 1e-12 >= rows[i].target) : "-");
	}
	if (seqs.sequences) {
		fmt_num(c, sizeof(c), seq_upper(), "%.2f");
		fprintf(out, "  %-52s %10s   %s\n",
			"false findings <= 1 per 1,000 null nights (95% bound)", c,
			isnan(seq_upper()) ? "-" : met(seq_upper() < 1.0));
		fmt_num(c, sizeof(c), 100.0 * prec, "%.1f%%");
		fprintf(out, "  %-52s %10s   %s\n", "precision >= 98% (distinct findings)", c,
			isnan(prec) ? "-" : met(prec >= TARGET_PRECISION));
	}
}

static void print_text(FILE *out, const opts *o)
{
	fprintf(out, "profreg eval: %zu fleet%s, %zu setting%s\n", nfleets, nfleets == 1 ? "" : "s",
		nsettings, nsettings == 1 ? "" : "s");
	for (size_t i = 0; i < nfleets; i++) {
		const fleet *fl = &fleets[i];
		unsigned reg = 0;
		for (size_t j = 0; j < fl->nsvcs; j++)
			reg += fl->svcs[j].regressed;
		fprintf(out,
			"  fleet %s (%s): %zu services, %u regressed, release %s;"
			" analyze: %u regression, %u relative_shift, %u improvement findings",
			fl->label, fl->setting, fl->nsvcs, reg, fl->release,
			fl->dir_n[D_REGRESSION], fl->dir_n[D_SHIFT], fl->dir_n[D_IMPROVEMENT]);
		if (fl->not_significant)
			fprintf(out, " (%u non-significant tests ignored)", fl->not_significant);
		if (fl->other_type)
			fprintf(out, " (%u findings of types other than %s ignored)",
				fl->other_type, o->type);
		fputc('\n', out);
		if (fl->analyzed >= 0 && (size_t)fl->analyzed != fl->nsvcs)
			fprintf(out,
				"  warning: analyze reports %lld services for fleet "
				"%s, the truth lists %zu\n",
				fl->analyzed, fl->label, fl->nsvcs);
		if (fl->db_unknown)
			fprintf(out,
				"  warning: the database of fleet %s has %u services "
				"the truth does not list\n",
				fl->label, fl->db_unknown);
	}
	fprintf(out, "\nnaive: flags a function when its mean self share over the current captures"
		" exceeds %.2f x its mean over the baseline captures (%g days before them);"
		" naive, floor: the same, only for functions with a baseline share >= %g%%\n",
		o->naive_ratio, o->window_days, 100.0 * o->naive_floor);
	for (size_t k = 0; k < nsettings; k++)
		print_setting(out, &settings[k]);
	print_smallest(out, o);
	print_sequences(out);
	print_targets18(out, o);
	print_lists(out, o);
}

/* ---------------------------------------------------------------- json */

static json_t *jnum(double v)
{
	return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

static json_t *tool_json(const tool_stats *ts, const opts *o)
{
	json_t *cells = json_array(), *small = json_object(), *t;
	unsigned all_h = 0, all_n = 0, h, n;
	unsigned all_false = ts->false_null + ts->false_regressed;

	for (size_t b = 0; b < nbands; b++) {
		int f = smallest_factor(ts, (int)b, o->target);
		for (size_t k = 0; k < nfactors; k++)
			json_array_append_new(cells, json_pack("{s:s,s:f,s:i,s:i}", "band",
							       bands[b], "factor", factors[k],
							       "hits", (int)ts->hits[b][k], "total",
							       (int)ts->total[b][k]));
		row_sum(ts, (int)b, &h, &n);
		all_h += h;
		all_n += n;
		json_object_set_new(small, bands[b], f >= 0 ? json_real(factors[f]) : json_null());
	}
	t = json_pack("{s:o,s:{s:i,s:i},s:i,s:i,s:o,s:o,s:i,s:i,s:i,s:o,s:o}",
		"recall", cells, "recall_all", "hits", (int)all_h, "total", (int)all_n,
		"null_service_nights", (int)ts->null_nights, "false_on_null", (int)ts->false_null,
		"false_per_1000_null_nights", jnum(1000.0 * ratio(ts->false_null, ts->null_nights)),
		"false_per_1000_upper95", jnum(per_1000_upper(ts)),
		"null_services_with_false", (int)ts->null_with_false,
		"false_in_regressed", (int)ts->false_regressed, "true", (int)ts->true_findings,
		"precision", jnum(ratio(ts->true_findings, ts->true_findings + all_false)),
		"smallest_factor", small);
	target_recall(ts, &h, &n);
	json_object_set_new(t, "target_recall", json_pack("{s:s,s:f,s:i,s:i}", "band", TARGET_BAND,
		"min_factor", TARGET_FACTOR, "hits", (int)h, "total", (int)n));
	return t;
}

static json_t *summary_json(const opts *o)
{
	json_t *fl = json_array(), *st = json_array();

	for (size_t i = 0; i < nfleets; i++) {
		unsigned reg = 0, ins = 0;
		for (size_t j = 0; j < fleets[i].nsvcs; j++) {
			reg += fleets[i].svcs[j].regressed;
			ins += fleets[i].svcs[j].insufficient;
		}
		json_array_append_new(
			fl, json_pack("{s:s,s:s,s:s,s:i,s:i,s:i,s:{s:i,s:i,s:i},s:I}", "label",
				      fleets[i].label, "setting", fleets[i].setting, "release",
				      fleets[i].release, "services", (int)fleets[i].nsvcs,
				      "regressed", (int)reg, "insufficient", (int)ins, "findings",
				      "regression", (int)fleets[i].dir_n[D_REGRESSION],
				      "relative_shift", (int)fleets[i].dir_n[D_SHIFT],
				      "improvement", (int)fleets[i].dir_n[D_IMPROVEMENT],
				      "analyzed", (json_int_t)fleets[i].analyzed));
	}
	for (size_t k = 0; k < nsettings; k++) {
		const setting *s = &settings[k];
		json_t *tools = json_object(), *fls = json_array();
		for (size_t i = 0; i < nfleets; i++)
			if (strcmp(fleets[i].setting, s->name) == 0)
				json_array_append_new(fls, json_string(fleets[i].label));
		for (int t = 0; t < NTOOLS; t++)
			json_object_set_new(tools, tool_keys[t],
					    s->t[t].done ? tool_json(&s->t[t], o) : json_null());
		json_array_append_new(st, json_pack("{s:s,s:o,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:o}",
						    "name", s->name, "fleets", fls, "services",
						    (int)s->services, "regressed",
						    (int)s->regressed, "null", (int)s->nulls,
						    "insufficient", (int)s->insufficient,
						    "relative_shift", (int)s->dir_n[D_SHIFT],
						    "improvement", (int)s->dir_n[D_IMPROVEMENT],
						    "regressed_called_relative_shift",
						    (int)s->shifted_truth, "tools", tools));
	}
	return json_pack("{s:f,s:f,s:f,s:f,s:o,s:o,s:{s:i,s:i,s:i,s:i,s:o,s:o,s:i,s:i,s:o,s:o}}",
		"recall_target", o->target,
		"naive_ratio", o->naive_ratio, "naive_floor", o->naive_floor,
		"window_days", o->window_days, "fleets", fl, "settings", st, "all_nights",
		"fleets", (int)seqs.sequences, "nights", (int)seqs.nights, "null_service_nights",
		(int)seqs.null_nights, "false_on_null", (int)seqs.false_null,
		"false_per_1000_null_nights",
		jnum(1000.0 * ratio(seqs.false_null, seqs.null_nights)),
		"false_per_1000_upper95", jnum(seq_upper()), "false_in_regressed",
		(int)seqs.false_regressed, "true", (int)seqs.true_distinct,
		"precision", jnum(seq_precision()), "pages",
		pages.fleets ? json_pack("{s:i,s:i,s:i}", "false_on_null", (int)pages.false_null,
					 "false_in_regressed", (int)pages.false_regressed, "true",
					 (int)pages.true_pages)
			     : json_null());
}

/* ---------------------------------------------------------------- main */

static void usage(FILE *f)
{
	fputs("usage: eval [options] --truth FILE --findings FILE [--db CONNINFO] [--label NAME]\n"
	      "            [--setting NAME] [--truth FILE ...]\n"
	      "\n"
	      "Score profreg analyze's findings against a simulated fleet's truth, beside a\n"
	      "naive +10% rule computed from the fleet's database. Each fleet starts with\n"
	      "--truth; the --findings, --db, --label and --setting after it belong to it.\n"
	      "Fleets with the same setting are pooled into one set of tables.\n"
	      "\n"
	      "per fleet:\n"
	      "  --truth FILE          fleetgen's truth.jsonl (starts a fleet)\n"
	      "  --findings FILE       profreg analyze --all-services --json output\n"
	      "  --db CONNINFO         the fleet's database, for the naive rule (without it,\n"
	      "                        the naive rule is not computed)\n"
	      "  --label NAME          name in the tables (default: fleetN)\n"
	      "  --setting NAME        pool with fleets of the same setting (default: label)\n"
	      "  --sequence NAME       nights of one fleet: fleets with the same sequence are\n"
	      "                        one fleet analysed night after night (a false finding\n"
	      "                        reported on several nights counts once)\n"
	      "  --states FILE         profreg finding list --json after the fleet's last\n"
	      "                        night: counts the pages (findings ever confirmed)\n"
	      "options:\n"
	      "  --type TYPE           profile type for the naive rule (default cpu)\n"
	      "  --window-days N       naive rule's baseline window (default 14)\n"
	      "  --naive-ratio X       naive rule flags current > X times baseline (default 1.10)\n"
	      "  --naive-floor SHARE   the floor variant's smallest "
	      "baseline share (default 0.001)\n"
	      "  --target X            recall for the smallest-factor table (default 0.8)\n"
	      "  --list N              false findings and misses to list (default 10, 0: none)\n"
	      "  --json                print the summary as JSON instead of tables\n"
	      "  --json-out FILE       also write the JSON summary to FILE\n"
	      "  --help                show this help\n"
	      "\n"
	      "exit: 0 when it measured (it never gates), 2 usage, 3 database or output\n"
	      "failure, 4 an input missing, malformed or not matching its truth\n", f);
}

static int parse_double(const char *opt, const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !(v >= lo && v <= hi)) {
		fprintf(stderr, "eval: '--%s %s' is not a number from %g to %g\n", opt, s, lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

enum { O_TRUTH = 256, O_FINDINGS, O_DB, O_LABEL, O_SETTING, O_SEQUENCE, O_STATES, O_TYPE,
       O_WINDOW, O_RATIO, O_FLOOR, O_TARGET, O_LIST, O_JSON, O_JSON_OUT, O_HELP };

static int parse_args(int argc, char **argv, opts *o)
{
	static const struct option longopts[] = {
		{"truth", required_argument, NULL, O_TRUTH},
		{"findings", required_argument, NULL, O_FINDINGS},
		{"db", required_argument, NULL, O_DB},
		{"label", required_argument, NULL, O_LABEL},
		{"setting", required_argument, NULL, O_SETTING},
		{"sequence", required_argument, NULL, O_SEQUENCE},
		{"states", required_argument, NULL, O_STATES},
		{"type", required_argument, NULL, O_TYPE},
		{"window-days", required_argument, NULL, O_WINDOW},
		{"naive-ratio", required_argument, NULL, O_RATIO},
		{"naive-floor", required_argument, NULL, O_FLOOR},
		{"target", required_argument, NULL, O_TARGET},
		{"list", required_argument, NULL, O_LIST},
		{"json", no_argument, NULL, O_JSON},
		{"json-out", required_argument, NULL, O_JSON_OUT},
		{"help", no_argument, NULL, O_HELP},
		{NULL, 0, NULL, 0},
	};
	fleet *cur = NULL;
	double d;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		if (c >= O_FINDINGS && c <= O_STATES && !cur) {
			fprintf(stderr, "eval: '--%s' must follow a --truth\n",
				longopts[c - O_TRUTH].name);
			return EXIT_USAGE;
		}
		switch (c) {
		case O_TRUTH:
			if (nfleets == MAX_FLEETS) {
				fprintf(stderr, "eval: at most %d fleets\n", MAX_FLEETS);
				return EXIT_USAGE;
			}
			cur = &fleets[nfleets++];
			cur->truth_path = optarg;
			cur->analyzed = -1;
			break;
		case O_FINDINGS: cur->findings_path = optarg; break;
		case O_DB: cur->conninfo = optarg; break;
		case O_LABEL: cur->label = optarg; break;
		case O_SETTING: cur->setting = optarg; break;
		case O_SEQUENCE: cur->sequence = optarg; break;
		case O_STATES: cur->states_path = optarg; break;
		case O_TYPE: o->type = optarg; break;
		case O_WINDOW:
			if (parse_double("window-days", optarg, 0.001, 3660, &o->window_days) < 0)
				return EXIT_USAGE;
			break;
		case O_RATIO:
			if (parse_double("naive-ratio", optarg, 1, 100, &o->naive_ratio) < 0)
				return EXIT_USAGE;
			break;
		case O_FLOOR:
			if (parse_double("naive-floor", optarg, 0, 1, &o->naive_floor) < 0)
				return EXIT_USAGE;
			break;
		case O_TARGET:
			if (parse_double("target", optarg, 0, 1, &o->target) < 0)
				return EXIT_USAGE;
			break;
		case O_LIST:
			if (parse_double("list", optarg, 0, 100000, &d) < 0)
				return EXIT_USAGE;
			if (d != floor(d)) {
				fprintf(stderr, "eval: '--list %s' is not a whole number\n",
					optarg);
				return EXIT_USAGE;
			}
			o->list = (int)d;
			break;
		case O_JSON: o->json = true; break;
		case O_JSON_OUT: o->json_out = optarg; break;
		case O_HELP:
			usage(stdout);
			return -1;
		case ':':
			fprintf(stderr, "eval: '%s' needs a value\n", argv[optind - 1]);
			return EXIT_USAGE;
		default:
			fprintf(stderr, "eval: unknown option '%s' (see --help)\n",
				argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "eval: unexpected argument '%s' (see --help)\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (!nfleets) {
		fprintf(stderr,
			"eval: no fleet given (--truth FILE --findings FILE; see --help)\n");
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < nfleets; i++) {
		fleet *fl = &fleets[i];
		if (!fl->findings_path) {
			fprintf(stderr, "eval: truth '%s' has no --findings after it\n",
				fl->truth_path);
			return EXIT_USAGE;
		}
		if (!fl->label) {
			static char names[MAX_FLEETS][32];
			snprintf(names[i], sizeof(names[i]), "fleet%zu", i + 1);
			fl->label = names[i];
		}
		if (!fl->setting)
			fl->setting = fl->label;
		for (size_t j = 0; j < i; j++)
			if (strcmp(fleets[j].label, fl->label) == 0) {
				fprintf(stderr, "eval: two fleets are labelled '%s'\n", fl->label);
				return EXIT_USAGE;
			}
	}
	return 0;
}

static void cleanup(void)
{
	for (size_t i = 0; i < nfleets; i++) {
		for (size_t j = 0; j < fleets[i].nsvcs; j++) {
			free(fleets[i].svcs[j].name);
			free(fleets[i].svcs[j].function);
		}
		free(fleets[i].svcs);
		free(fleets[i].release);
	}
	for (size_t i = 0; i < nbands; i++)
		free(bands[i]);
	for (size_t i = 0; i < nfalses; i++) {
		free(falses[i].service);
		free(falses[i].function);
	}
	free(falses);
}

/* The summary, indented, with a final newline, as --json prints it. */
static int write_json(const json_t *summary, const char *path)
{
	FILE *f = fopen(path, "w");
	int bad;

	if (!f)
		return fail(E_RUNTIME, "cannot write '%s': %s", path, strerror(errno));
	bad = json_dumpf(summary, f, JSON_INDENT(2) | JSON_REAL_PRECISION(6)) < 0;
	bad |= fputc('\n', f) == EOF;
	bad |= fclose(f) != 0;
	return bad ? fail(E_RUNTIME, "cannot write '%s'", path) : 0;
}

static int exit_for(int rc)
{
	return rc == E_DATA ? EXIT_DATA : EXIT_RUNTIME;
}

int main(int argc, char **argv)
{
	opts o = {.type = "cpu", .window_days = 14, .naive_ratio = 1.10, .naive_floor = 0.001,
		  .target = 0.8, .list = 10};
	json_t *summary = NULL;
	int rc, code = EXIT_OK;

	if ((rc = parse_args(argc, argv, &o)) != 0)
		return rc < 0 ? EXIT_OK : rc;
	snprintf(tool_names[T_PROFREG], sizeof(tool_names[0]), "profreg analyze");
	snprintf(tool_names[T_NAIVE], sizeof(tool_names[0]), "naive +%g%% rule",
		 round((o.naive_ratio - 1) * 1000) / 10);
	snprintf(tool_names[T_FLOOR], sizeof(tool_names[0]),
		 "naive +%g%% rule, baseline share >= %g%%", round((o.naive_ratio - 1) * 1000) / 10,
		 100 * o.naive_floor);

	for (size_t i = 0; i < nfleets; i++)
		if ((rc = truth_load(&fleets[i])) < 0)
			goto out;
	sort_axes();
	for (size_t i = 0; i < nfleets; i++) {
		if ((rc = findings_load(&fleets[i], &o)) < 0)
			goto out;
		if (fleets[i].states_path && (rc = states_load(&fleets[i])) < 0)
			goto out;
		if (fleets[i].conninfo && (rc = naive_run(&fleets[i], &o)) < 0)
			goto out;
	}
	aggregate();
	aggregate_sequences();

	if (!(summary = summary_json(&o))) {
		rc = nomem();
		goto out;
	}
	if (o.json_out && (rc = write_json(summary, o.json_out)) < 0)
		goto out;
	if (o.json) {
		if (json_dumpf(summary, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(6)) < 0)
			rc = fail(E_RUNTIME, "cannot write to stdout");
		putchar('\n');
	} else {
		print_text(stdout, &o);
	}
	if (fflush(stdout) != 0 || ferror(stdout))
		rc = fail(E_RUNTIME, "cannot write to stdout: %s", strerror(errno));
out:
	if (rc < 0) {
		fprintf(stderr, "eval: %s\n", errmsg);
		code = exit_for(rc);
	}
	json_decref(summary);
	cleanup();
	return code;
}
