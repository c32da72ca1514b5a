/*
 * fuzz_folded.c: libFuzzer target for the folded-stacks parser.
 *
 * Whatever the bytes, folded_parse must either fail with a message that
 * names the input and a line, or return a profile that says exactly what
 * the text says: the target splits the lines again the plain way (no
 * prefix reuse, no cache) and every sample's frames and count must match,
 * each frame's name and file as the plain reading of py-spy, rbspy,
 * async-profiler marks and V8's perf-map names (expect) gives them, less
 * the frames folded_parse leaves out: empty frames at the end of a stack
 * (heaptrack's trailing ';') and austin's line frames ("L18" after a frame
 * ending in ')').
 *
 * Seeds (tests/fuzz/corpus/folded/): tests/data/folded/mixed.folded,
 * austin-burn.folded and heaptrack-retain.folded, the golden
 * tests/data/perf/burn-fp.folded, and small hand-written files for
 * CRLF, shared prefixes, empty frames, annotated and V8 perf-map frames,
 * a leading byte order mark, each kind of bad count, and frames of many
 * " - " (many-dashes.folded, which took time quadratic in their length).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/folded.h"
#include "pipeline/symname.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool ws(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool digits(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* "FILE:LINE" with a FILE of no parentheses: FILE's length, else -1. */
static long file_of(const char *s, size_t n)
{
	long colon = -1;

	for (size_t i = 0; i < n; i++)
		if (s[i] == ':')
			colon = (long)i;
	if (colon < 1 || !digits(s + colon + 1, n - (size_t)colon - 1))
		return -1;
	for (long i = 0; i < colon; i++)
		if (s[i] == '(' || s[i] == ')')
			return -1;
	return colon;
}

/*
 * A V8 name from a perf map, "TAG:[~^+*]NAME FILE:LINE:COLUMN" (TAG one
 * of V8's tags for JavaScript code, NAME maybe empty or with spaces):
 * NAME, or "(anonymous)", and FILE.
 */
static bool expect_v8(const char *s, size_t n, const char **name, size_t *name_len,
		      const char **file, size_t *file_len)
{
	static const char *const tags[] = {"JS:", "LazyCompile:", "Function:",
					   "InterpretedFunction:", "Script:", "Eval:"};
	size_t at = 0, sp = 0, c1 = 0, c2 = 0;
	bool space = false;

	for (size_t t = 0; t < sizeof(tags) / sizeof(tags[0]); t++)
		if (n > strlen(tags[t]) && memcmp(s, tags[t], strlen(tags[t])) == 0 &&
		    s[strlen(tags[t])] != ':')
			at = strlen(tags[t]);
	if (!at)
		return false;
	if (at < n && (s[at] == '~' || s[at] == '^' || s[at] == '+' || s[at] == '*'))
		at++;
	for (size_t i = at; i < n; i++)
		if (s[i] == ' ')
			sp = i, space = true;
	if (!space)
		return false;
	/*
	 * The last two colons of the last word, digits after each. The file
	 * before them may be empty: code of no script (eval, new Function).
	 */
	for (size_t i = sp + 1; i < n; i++)
		if (s[i] == ':')
			c1 = c2, c2 = i;
	if (!c1 || !digits(s + c1 + 1, c2 - c1 - 1) ||
	    !digits(s + c2 + 1, n - c2 - 1))
		return false;
	*file = s + sp + 1;
	*file_len = c1 - sp - 1;
	*name = s + at;
	*name_len = sp - at;
	while (*name_len && (*name)[*name_len - 1] == ' ')
		(*name_len)--;
	if (!*name_len) {
		*name = "(anonymous)";
		*name_len = 11;
	}
	return true;
}

/*
 * The name and file a frame must become, worked out the plain way: a V8
 * perf-map name is split (expect_v8); else an async-profiler tier mark
 * goes, then a trailing " (FILE:LINE)" (py-spy) or the last " -
 * FILE:LINE" (rbspy) becomes the file.
 */
static void expect(const char *s, size_t n, const char **name, size_t *name_len,
		   const char **file, size_t *file_len)
{
	long open = -1, dash = -1, f;

	*name = s;
	*file = "";
	*file_len = 0;
	if (expect_v8(s, n, name, name_len, file, file_len))
		return;
	if (n > 4 && memcmp(s + n - 4, "_[", 2) == 0 && s[n - 1] == ']' &&
	    strchr("ji01", s[n - 2]) && s[n - 2])
		n -= 4;
	*name_len = n;
	if (n > 4 && s[n - 1] == ')') {
		for (size_t i = 0; i < n; i++)
			if (s[i] == '(')
				open = (long)i;
		if (open >= 2 && s[open - 1] == ' ' &&
		    (f = file_of(s + open + 1, n - (size_t)open - 2)) > 0) {
			*name_len = (size_t)open - 1;
			*file = s + open + 1;
			*file_len = (size_t)f;
			return;
		}
	}
	for (size_t i = 1; i + 3 <= n; i++)
		if (memcmp(s + i, " - ", 3) == 0)
			dash = (long)i;
	if (dash >= 1 && (f = file_of(s + dash + 3, n - (size_t)dash - 3)) > 0) {
		*name_len = (size_t)dash;
		*file = s + dash + 3;
		*file_len = (size_t)f;
		return;
	}
	/* pyroscope-rs: "app/calc.py:42 - compute", the first " - " after a file and a line. */
	for (size_t i = 0; i + 3 < n; i++)
		if (memcmp(s + i, " - ", 3) == 0 && (f = file_of(s, i)) > 0) {
			*name = s + i + 3;
			*name_len = n - i - 3;
			*file = s;
			*file_len = (size_t)f;
			return;
		}
}

/*
 * Austin's line frame: "L" and digits right after a frame that ends in
 * ')', "main (app.py);L18". folded_parse leaves it out of the stack.
 */
static bool austin_line(const char *s, size_t start, size_t end)
{
	return start >= 2 && s[start - 2] == ')' && end - start >= 2 && s[start] == 'L' &&
	       digits(s + start + 1, end - start - 1);
}

/* Sample `i` must be the stack s[0..n) with value v. */
static void check_sample(const profile *p, size_t i, const char *s, size_t n,
			 int64_t v)
{
	const uint32_t *st = p->frames + p->stack_off[i];
	static char stable[4096], stable_file[4096];
	uint32_t k = 0;
	size_t start = 0;

	if (p->values[i] != v)
		abort();
	for (;;) {
		const char *semi = memchr(s + start, ';', n - start);
		size_t end = semi ? (size_t)(semi - s) : n;
		const char *want = s + start, *want_file, *name, *file;
		size_t want_len, file_len;

		if (austin_line(s, start, end)) {
			if (!semi)
				break;
			start = end + 1;
			continue;
		}
		expect(s + start, end - start, &want, &want_len, &want_file, &file_len);
		if (want_len == 0) {
			want = "[unknown]";
			want_len = 9;
		}
		/* What a process or build made up goes, as test_symname proves. */
		if (want_len > sizeof(stable) || file_len > sizeof(stable_file))
			abort();
		memcpy(stable, want, want_len);
		want = stable;
		want_len = symname_stable(stable, want_len);
		memcpy(stable_file, want_file, file_len);
		want_file = stable_file;
		file_len = symname_stable_file(stable_file, file_len);
		if (k >= p->stack_len[i])
			abort();
		name = p->funcs[st[k]].name;
		file = p->funcs[st[k++]].file;
		if (strlen(name) != want_len || memcmp(name, want, want_len) != 0 ||
		    strlen(file) != file_len || memcmp(file, want_file, file_len) != 0)
			abort();
		if (!semi)
			break;
		start = end + 1;
	}
	if (k != p->stack_len[i])
		abort();
}

static void check_profile(const profile *p, const uint8_t *data, size_t size,
			  const profile_limits *lim)
{
	const char *text = (const char *)data;
	size_t pos = 0, sample = 0;

	/* folded_parse skips a UTF-8 byte order mark: it is no part of a name. */
	if (size >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		pos = 3;
	if (p->nvalue_types != 1 || strcmp(p->value_types[0].type, "samples"))
		abort();
	for (size_t i = 0; i < p->nsamples; i++)
		if (p->stack_len[i] == 0 || p->stack_len[i] > lim->max_depth)
			abort();
	/* Replaced UTF-8 changes names; the structure is still checked. */
	if (p->utf8_replaced)
		return;
	while (pos < size) {
		const char *nl = memchr(text + pos, '\n', size - pos);
		size_t end = nl ? (size_t)(nl - text) : size;
		const char *s = text + pos;
		size_t n = end - pos, c;
		int64_t v = 0;

		pos = end + 1;
		while (n && ws(s[n - 1]))
			n--;
		while (n && ws(*s)) {
			s++;
			n--;
		}
		if (n == 0)
			continue;
		/* The count: the field after the last run of whitespace. */
		c = n;
		while (c && !ws(s[c - 1]))
			c--;
		for (size_t d = c; d < n; d++)
			v = v * 10 + (s[d] - '0');
		while (c && ws(s[c - 1]))
			c--;
		/* Empty frames at the end go, as flamegraph.pl drops them. */
		while (c > 1 && s[c - 1] == ';')
			c--;
		if (sample >= p->nsamples)
			abort();
		check_sample(p, sample++, s, c, v);
	}
	if (sample != p->nsamples)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	profile_limits lim;
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	int rc;

	profile_limits_default(&lim);
	/* Small limits, so the fuzzer reaches them with small inputs. */
	lim.max_depth = 64;
	lim.max_samples = 1000;
	lim.max_string_len = 256;
	(void)folded_sniff(data, size);
	rc = folded_parse(&p, data, size, "fuzz.folded", &lim, &err);
	if (rc < 0) {
		if (p || err.code != rc || !strstr(err.msg, "'fuzz.folded'") ||
		    !strstr(err.msg, "line "))
			abort();
		if (rc != PR_EDATA && rc != PR_ELIMIT && rc != PR_ENOMEM)
			abort();
		return 0;
	}
	if (!p)
		abort();
	check_profile(p, data, size, &lim);
	{
		profile_summary s;

		if (profile_summarize(&s, p, 0, &err) == 0) {
			for (size_t r = 0; r < s.nrows; r++)
				if (s.rows[r].self > s.rows[r].total || s.rows[r].total > s.total)
					abort();
			profile_summary_release(&s);
		}
	}
	profile_free(p);
	return 0;
}
