/*
 * folded.c: parser for folded stacks (see folded.h).
 *
 * One stack a line, root first: "main;serve;parse 42". The count is the
 * field after the LAST run of whitespace, so frames may contain spaces
 * ("std::vector<int> ::push_back", "[unknown]"), as C++ symbols and
 * Pyroscope's exports do. CRLF, blank lines, trailing whitespace, a
 * leading UTF-8 byte order mark and a last line without a newline are
 * accepted; a NUL byte is not (that is a binary file, not text), nor is a
 * CR inside the stack: a file whose lines end in a bare CR (old Mac
 * tools) is one line to this parser, and would be stored as one stack
 * whose frames hold the other lines. Other control bytes are kept, and
 * escaped wherever a name is printed.
 *
 * This parser is on the fleet simulator's hot path, so it avoids work per
 * frame: folded files are usually sorted, and a frame that lies inside the
 * byte prefix a line shares with the line before it keeps the id it had
 * there; every other frame is looked up in a cache keyed by its raw bytes
 * before profile_intern (which copies and validates) is asked.
 */
#define _GNU_SOURCE /* memmem */
#include "pipeline/folded.h"
#include "pipeline/v8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* A cache entry: the key, its NUL and up to three map slots. */
#define CACHE_COST(n) ((n) + 1 + 3 * sizeof(strmap_slot))

/* How far into the input folded_sniff starts new lines, and how many. */
#define SNIFF_BYTES 65536
#define SNIFF_LINES 8

typedef struct parser {
	profile *p;
	pr_error *err;
	size_t line;        /* 1-based number of the line being parsed */
	strmap cache;       /* raw frame bytes -> function id */
	uint32_t *stack;    /* frame ids, root first; kept across lines */
	uint32_t *kept;     /* the line's frame ids without austin's line frames */
	size_t *ends;       /* where each frame of the line ends (its ';' or the end) */
	size_t stack_cap;   /* entries in stack and in ends */
	const char *prev;   /* the previous line's stack text (in the input) */
	size_t prev_len;
	uint32_t prev_depth;
	size_t samples;      /* lines with a stack */
	size_t multi_number; /* of them, lines whose stack ends in a number too */
	/*
	 * What the profile model says went wrong, for model_error. One for the
	 * parse: its first error ends it. A record of 1 KiB made empty for
	 * every line and every frame looked up was 3% of an ingest's work.
	 */
	pr_error inner;
} parser;

static bool is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* The length of a UTF-8 byte order mark at the start of text: 3 or 0. */
static size_t bom(const char *text, size_t len)
{
	return len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/*
 * Report an error the profile model found, with the line number put in
 * after its "cannot parse 'name': " prefix so that every message from
 * this parser reads the same way.
 */
static int model_error(parser *ps, int rc, const pr_error *inner)
{
	char prefix[PR_ERROR_MSG_MAX];
	size_t k;

	snprintf(prefix, sizeof(prefix), "cannot parse '%s': ", ps->p->input_name);
	k = strlen(prefix);
	if (strncmp(inner->msg, prefix, k) == 0)
		return pr_error_set(ps->err, rc, "%sline %zu: %s", prefix, ps->line,
				    inner->msg + k);
	return pr_error_set(ps->err, rc, "%s (line %zu)", inner->msg, ps->line);
}

static int bad_line(parser *ps, const char *what, const char *s, size_t n)
{
	char q[40];

	return pr_error_set(ps->err, PR_EDATA, "cannot parse '%s': line %zu: %s '%s'",
			    ps->p->input_name, ps->line, what, profile_quote(q, s, n));
}

/* How many bytes s[0..n) begins with that are none of '(', ')' and ';'. */
static size_t plain_prefix(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && s[i] != '(' && s[i] != ')' && s[i] != ';')
		i++;
	return i;
}

/*
 * True when s[0..n) is "FILE:LINE", LINE digits and FILE of no '(', ')'
 * or ';'; *file_len is FILE's length. plain: plain_prefix of s, at least
 * n bytes' worth. Only the digits before n are looked at, and plain is
 * counted once by the caller: a frame of many " - " is tried at each of
 * them, and scanning back to a ':' each time made a 64 KiB name of
 * " - " take half a second.
 */
static bool file_line_plain(const char *s, size_t n, size_t plain, size_t *file_len)
{
	size_t colon = n;

	while (colon > 0 && is_digit((unsigned char)s[colon - 1]))
		colon--;
	if (colon < 2 || colon == n || s[colon - 1] != ':' || plain < colon - 1)
		return false;
	*file_len = colon - 1;
	return true;
}

/* file_line_plain for a string looked at once. */
static bool file_line(const char *s, size_t n, size_t *file_len)
{
	return file_line_plain(s, n, plain_prefix(s, n), file_len);
}

/*
 * The function a frame names, as its name (*name, *name_len) and its file
 * (*file, *file_len; none when *file_len is 0). Profilers of interpreted
 * languages write the line being run into each frame: py-spy
 * "compute (app/calc.py:42)", rbspy "compute - app/calc.rb:42",
 * pyroscope-rs "app/calc.py:42 - compute". Taken
 * whole, one function would be as many functions as it has lines
 * running, and a release that moves its code would give it new names
 * and no baseline; so the line is dropped and the file kept, as the
 * pprof parser keeps a function's file and not its lines. async-profiler
 * marks how a Java method ran ("_[j]" compiled, "_[i]" inlined, "_[0]"
 * interpreted, "_[1]" C1-compiled), which changes between captures as
 * the JIT warms up: the method is one function whatever ran it. Kernel
 * frames keep their "_[k]". (V8's names from perf maps, "JS:*f
 * file.js:3:9", are split by v8_code_name first.) Anything else is the
 * name as written.
 */
static void frame_split(const char *s, size_t n, const char **name, size_t *name_len,
			const char **file, size_t *file_len)
{
	size_t open = 0, plain;

	*name = s;
	*name_len = n;
	*file = NULL;
	*file_len = 0;
	if (n > 4 && s[n - 4] == '_' && s[n - 3] == '[' && s[n - 1] == ']' &&
	    (s[n - 2] == 'j' || s[n - 2] == 'i' || s[n - 2] == '0' || s[n - 2] == '1'))
		n -= 4;
	*name_len = n;
	if (n > 4 && s[n - 1] == ')') {
		for (open = n - 1; open > 0 && s[open] != '('; open--)
			;
		if (open >= 2 && s[open] == '(' && s[open - 1] == ' ' &&
		    file_line(s + open + 1, n - open - 2, file_len)) {
			*name_len = open - 1;
			*file = s + open + 1;
			return;
		}
	}
	/*
	 * Both searches below are for a " - ", which most frames lack; most
	 * lack a '-' too, which memchr finds many times faster than memmem
	 * finds a " - ".
	 */
	if (!memchr(s, '-', n) || !memmem(s, n, " - ", 3))
		return;
	for (size_t i = n; i >= 4; i--)
		if (s[i - 3] == ' ' && s[i - 2] == '-' && s[i - 1] == ' ') {
			if (file_line(s + i, n - i, file_len)) {
				*name_len = i - 3;
				*file = s + i;
				return;
			}
			break;
		}
	/*
	 * pyroscope-rs (Pyroscope's Python and Ruby agents) writes the file
	 * first, "app/calc.py:42 - compute": the first " - " after which a
	 * name follows and before which is a file and a line. The name is
	 * taken from after it, so the frame is the same function as py-spy's
	 * or rbspy's of that line.
	 */
	plain = plain_prefix(s, n);
	for (size_t i = 0; i + 3 < n; i++)
		if (s[i] == ' ' && s[i + 1] == '-' && s[i + 2] == ' ' &&
		    file_line_plain(s, i, plain, file_len)) {
			*name_len = n - i - 3;
			*name = s + i + 3;
			*file = s;
			return;
		}
}

/* Function id for the raw frame name s[0..n). */
static int frame_id(parser *ps, uint32_t *out, const char *s, size_t n)
{
	const char *name, *file;
	size_t name_len, file_len;
	int rc;

	if (strmap_get(&ps->cache, s, n, out))
		return 0;
	if (!v8_code_name(s, n, &name, &name_len, &file, &file_len))
		frame_split(s, n, &name, &name_len, &file, &file_len);
	/* The cache keeps its own copy of the raw name: charge it too. */
	if ((rc = profile_intern(ps->p, out, name, name_len, file, file_len, &ps->inner)) < 0 ||
	    (rc = profile_mem_take(ps->p, CACHE_COST(n), &ps->inner)) < 0)
		return model_error(ps, rc, &ps->inner);
	if (strmap_put(&ps->cache, s, n, *out, out, NULL) < 0)
		return pr_error_set(ps->err, PR_ENOMEM, "cannot parse '%s': out of memory",
				    ps->p->input_name);
	return 0;
}

/*
 * Parse the count field; every way it can be wrong gets its own message
 * because "count 1.5 is fractional" fixes a generator faster than
 * "bad count".
 */
static int parse_count(parser *ps, int64_t *out, const char *s, size_t n)
{
	uint64_t v = 0;
	size_t i = 0;

	while (i < n && is_digit((unsigned char)s[i])) {
		unsigned d = (unsigned)(s[i] - '0');
		if (v > ((uint64_t)INT64_MAX - d) / 10)
			return bad_line(ps, "count exceeds the 64-bit range:", s, n);
		v = v * 10 + d;
		i++;
	}
	if (i == n && n > 0) {
		*out = (int64_t)v;
		return 0;
	}
	if (s[0] == '-' && n > 1 && (is_digit((unsigned char)s[1]) || s[1] == '.'))
		return bad_line(ps, "count is negative:", s, n);
	if (i < n && s[i] == '.' && i + 1 < n && is_digit((unsigned char)s[i + 1]))
		return bad_line(ps, "count is not a whole number:", s, n);
	return bad_line(ps, "no count at the end of the line, found", s, n);
}

static int grow_stack(parser *ps, size_t depth)
{
	size_t cap = ps->stack_cap ? ps->stack_cap : 64;
	uint32_t *st;
	size_t *ends;

	if (depth <= ps->stack_cap)
		return 0;
	while (cap < depth)
		cap *= 2;
	if (!(st = realloc(ps->stack, cap * sizeof(*st))))
		return pr_error_set(ps->err, PR_ENOMEM, "cannot parse '%s': out of memory",
				    ps->p->input_name);
	ps->stack = st;
	if (!(ends = realloc(ps->ends, cap * sizeof(*ends))))
		return pr_error_set(ps->err, PR_ENOMEM, "cannot parse '%s': out of memory",
				    ps->p->input_name);
	ps->ends = ends;
	if (!(st = realloc(ps->kept, cap * sizeof(*st))))
		return pr_error_set(ps->err, PR_ENOMEM, "cannot parse '%s': out of memory",
				    ps->p->input_name);
	ps->kept = st;
	ps->stack_cap = cap;
	return 0;
}

/* The length of the common prefix of a[0..n) and b[0..n), a word at a time. */
static size_t common_prefix(const char *a, const char *b, size_t n)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t x, y;
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			break;
	}
	while (i < n && a[i] == b[i])
		i++;
	return i;
}

/* No function: a frame the sample leaves out. */
#define NO_FRAME UINT32_MAX

/*
 * True when frame s[start..end) is the line austin (1.x, by default)
 * writes as a frame of its own after each function's "name (file)":
 * "main (app.py);L18;compute (app.py);L42". The line is dropped, as the
 * line py-spy writes inside a frame is, or each function's self would sit
 * in frames named "L42".
 */
static bool austin_line_frame(const char *s, size_t start, size_t end)
{
	if (start < 2 || s[start - 2] != ')' || end - start < 2 || s[start] != 'L')
		return false;
	for (size_t i = start + 1; i < end; i++)
		if (!is_digit((unsigned char)s[i]))
			return false;
	return true;
}

/*
 * True when the stack s[0..n) ends in a number after a space: the line
 * held more than one number at its end, as austin --full writes its time
 * and memory ("main (app.py);L6 1067 0 0") and difffolded.pl its two
 * counts. Only the last would be taken as the count.
 */
static bool ends_in_number(const char *s, size_t n)
{
	size_t k = 0;

	while (k < n && is_digit((unsigned char)s[n - 1 - k]))
		k++;
	return k > 0 && k < n && is_space((unsigned char)s[n - 1 - k]);
}

/* Parse one line, without its newline; blank lines were skipped. */
static int parse_line(parser *ps, const char *s, size_t n)
{
	const char *count;
	size_t count_len, stack_len, lcp = 0, start = 0, depth = 1, kept = 0;
	int64_t value;
	int rc;

	while (n && is_space((unsigned char)s[n - 1]))
		n--;
	while (n && is_space((unsigned char)*s)) {
		s++;
		n--;
	}
	count_len = 0;
	while (count_len < n && !is_space((unsigned char)s[n - 1 - count_len]))
		count_len++;
	if (count_len == n)
		return bad_line(ps, "expected 'stack count', found a single field", s, n);
	count = s + n - count_len;
	if ((rc = parse_count(ps, &value, count, count_len)) < 0)
		return rc;
	stack_len = n - count_len;
	while (is_space((unsigned char)s[stack_len - 1]))
		stack_len--;
	/*
	 * heaptrack_print --print-flamegraph ends every stack with ';'.
	 * flamegraph.pl's split drops empty frames at the end, and so does
	 * this: the cost is the last function's, not an empty frame's.
	 */
	while (stack_len > 1 && s[stack_len - 1] == ';')
		stack_len--;
	if (ends_in_number(s, stack_len))
		ps->multi_number++;
	if (memchr(s, '\r', stack_len))
		return bad_line(ps,
				"a carriage return inside the stack (lines that end in a bare CR?)",
				s, n);

	/* One pass finds every frame's end; past the depth limit it only counts. */
	for (const char *q = s; (q = memchr(q, ';', (size_t)(s + stack_len - q))); q++) {
		if (depth < ps->p->limits.max_depth) {
			if (depth >= ps->stack_cap && (rc = grow_stack(ps, depth + 1)) < 0)
				return rc;
			ps->ends[depth - 1] = (size_t)(q - s);
		}
		depth++;
	}
	if (depth > ps->p->limits.max_depth)
		return pr_error_set(ps->err, PR_ELIMIT,
				    "cannot parse '%s': line %zu: a stack of %zu frames "
				    "exceeds the depth limit of %u",
				    ps->p->input_name, ps->line, depth,
				    ps->p->limits.max_depth);
	if ((rc = grow_stack(ps, depth)) < 0)
		return rc;
	ps->ends[depth - 1] = stack_len;

	lcp = common_prefix(s, ps->prev, stack_len < ps->prev_len ? stack_len : ps->prev_len);
	for (uint32_t i = 0; i < depth; i++) {
		size_t end = ps->ends[i];

		/*
		 * Frame i is byte-identical to the previous line's frame i when
		 * it ends inside the shared prefix and the previous line has a
		 * frame boundary at the same place: its id is already there.
		 */
		if (!(i < ps->prev_depth && end <= lcp &&
		      (end == ps->prev_len || ps->prev[end] == ';'))) {
			if (austin_line_frame(s, start, end))
				ps->stack[i] = NO_FRAME;
			else if ((rc = frame_id(ps, &ps->stack[i], s + start, end - start)) < 0)
				return rc;
		}
		if (ps->stack[i] != NO_FRAME)
			ps->kept[kept++] = ps->stack[i];
		start = end + 1;
	}
	ps->prev = s;
	ps->prev_len = stack_len;
	ps->prev_depth = (uint32_t)depth;

	if ((rc = profile_add_sample(ps->p, ps->kept, (uint32_t)kept, &value, &ps->inner)) < 0)
		return model_error(ps, rc, &ps->inner);
	return 0;
}

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_space((unsigned char)s[i]))
			return false;
	return true;
}

/*
 * How many bytes of s[0..n) are a and how many are b, in one pass, eight
 * at a time: a byte of w ^ c is zero exactly where w holds c, and
 * ((x & 0x7f..) + 0x7f..) | x sets the top bit of every byte that is not
 * zero. The per-byte counts are summed every 255 words, before a byte can
 * overflow, in 16-bit lanes.
 */
static void count_bytes(const char *s, size_t n, unsigned char a, unsigned char b,
			size_t *na, size_t *nb)
{
	const uint64_t ones = 0x0101010101010101ULL, low7 = 0x7f7f7f7f7f7f7f7fULL;
	const uint64_t lanes = 0x00ff00ff00ff00ffULL;
	uint64_t pa = ones * a, pb = ones * b;
	size_t i = 0, ta = 0, tb = 0;

#ifdef __SSE2__
	/*
	 * Sixteen at a time where every x86-64 has the instructions: a
	 * compare makes each match -1 in its byte, subtracted from a byte
	 * counter; every 255 blocks, before a counter can overflow, the
	 * counters are summed (psadbw). A quarter of the work of the words
	 * below, which was 5% of an ingest of folded files.
	 */
	const __m128i va = _mm_set1_epi8((char)a), vb = _mm_set1_epi8((char)b);
	const __m128i zero = _mm_setzero_si128();

	while (i + 16 <= n) {
		__m128i ca = zero, cb = zero, sa, sb;
		for (int k = 0; k < 255 && i + 16 <= n; k++, i += 16) {
			__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
			ca = _mm_sub_epi8(ca, _mm_cmpeq_epi8(x, va));
			cb = _mm_sub_epi8(cb, _mm_cmpeq_epi8(x, vb));
		}
		sa = _mm_sad_epu8(ca, zero);
		sb = _mm_sad_epu8(cb, zero);
		ta += (size_t)_mm_cvtsi128_si32(sa) + (size_t)_mm_extract_epi16(sa, 4);
		tb += (size_t)_mm_cvtsi128_si32(sb) + (size_t)_mm_extract_epi16(sb, 4);
	}
#endif
	while (i + 8 <= n) {
		uint64_t acc_a = 0, acc_b = 0;
		for (int k = 0; k < 255 && i + 8 <= n; k++, i += 8) {
			uint64_t w, x, y;
			memcpy(&w, s + i, 8);
			x = w ^ pa;
			y = w ^ pb;
			acc_a += (~(((x & low7) + low7) | x) >> 7) & ones;
			acc_b += (~(((y & low7) + low7) | y) >> 7) & ones;
		}
		acc_a = (acc_a & lanes) + ((acc_a >> 8) & lanes);
		acc_b = (acc_b & lanes) + ((acc_b >> 8) & lanes);
		ta += (size_t)((acc_a * 0x0001000100010001ULL) >> 48);
		tb += (size_t)((acc_b * 0x0001000100010001ULL) >> 48);
	}
	for (; i < n; i++) {
		ta += (unsigned char)s[i] == a;
		tb += (unsigned char)s[i] == b;
	}
	*na = ta;
	*nb = tb;
}

/*
 * Size the profile's arrays from the text: at most a sample a line and a
 * frame per ';' and per line. Counting costs one pass over the text;
 * growing a 20 MB capture's arrays by doubling cost copies and fresh pages.
 */
static void reserve(profile *p, const char *text, size_t len)
{
	size_t newlines, semicolons;

	count_bytes(text, len, '\n', ';', &newlines, &semicolons);
	profile_reserve(p, 1 + newlines, semicolons + 1 + newlines);
}

int folded_parse(profile **out, const uint8_t *data, size_t len,
		 const char *name, const profile_limits *lim, pr_error *err)
{
	static const char *const types[] = {"samples"};
	static const char *const units[] = {"count"};
	parser ps = {0};
	const char *text = (const char *)data;
	size_t pos = 0;
	int rc;

	*out = NULL;
	strmap_init(&ps.cache);
	ps.err = err;
	if ((rc = profile_new(&ps.p, PROFILE_FMT_FOLDED, name, lim, err)) < 0 ||
	    (rc = profile_set_value_types(ps.p, 1, types, units, err)) < 0)
		goto out;

	if ((rc = profile_reject_nul(text, len, ps.p->input_name, "folded stacks", err)) < 0)
		goto out;
	reserve(ps.p, text, len);
	pos = bom(text, len);

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;

		ps.line++;
		if (!blank(text + pos, end - pos)) {
			if ((rc = parse_line(&ps, text + pos, end - pos)) < 0)
				goto out;
			ps.samples++;
		}
		pos = end + 1;
	}
	if (ps.samples > 0 && ps.multi_number == ps.samples) {
		rc = pr_error_set(err, PR_EDATA,
				  "cannot parse '%s': every line ends in more than one number "
				  "(austin --full's time and memory, or a differential flame "
				  "graph's two counts): folded stacks have one count a line",
				  ps.p->input_name);
		goto out;
	}
	*out = ps.p;
	ps.p = NULL;
	rc = 0;
out:
	profile_free(ps.p);
	strmap_release(&ps.cache);
	free(ps.stack);
	free(ps.ends);
	free(ps.kept);
	return rc;
}

/*
 * A sniffed line must be "stack<whitespace>digits" with a stack that does
 * not start with whitespace or look like JSON, and no control bytes: perf
 * script headers end in "event:", JSON lines in punctuation, protobuf is
 * binary (a NUL byte is a control byte too). Nor may it be a bpftrace map
 * entry, "@[key]:" or "@name:" before the count.
 */
static bool sniff_line(const char *s, size_t n)
{
	size_t k = 0;

	while (n && is_space((unsigned char)s[n - 1]))
		n--;
	if (n == 0 || is_space((unsigned char)s[0]) || s[0] == '{')
		return false;
	if (s[0] == '[') {
		size_t i = 1;
		while (i < n && is_space((unsigned char)s[i]))
			i++;
		if (i == n || strchr("{[]\"-0123456789", s[i]))
			return false;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 && c != '\t')
			return false;
	}
	while (k < n && is_digit((unsigned char)s[n - 1 - k]))
		k++;
	if (!(k > 0 && k < n && is_space((unsigned char)s[n - 1 - k])))
		return false;
	/* bpftrace's "@[key]: 42" (-q) counts per key: no stack. */
	n -= k;
	while (n && is_space((unsigned char)s[n - 1]))
		n--;
	return !(s[0] == '@' && s[n - 1] == ':');
}

/*
 * A line that would be a sniffed line but for its count: the count is a
 * number gone wrong ("1.5", "-3", "1e3"), which folded_parse names.
 */
static bool bad_count_line(const char *s, size_t n)
{
	size_t k = 0;
	bool digit = false;

	while (n && is_space((unsigned char)s[n - 1]))
		n--;
	if (n == 0 || is_space((unsigned char)s[0]) || s[0] == '{')
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 && s[i] != '\t')
			return false;
	for (; k < n && !is_space((unsigned char)s[n - 1 - k]); k++) {
		char c = s[n - 1 - k];
		if (!is_digit((unsigned char)c) && !strchr(".+-eE", c))
			return false;
		digit = digit || is_digit((unsigned char)c);
	}
	return k < n && digit;
}

/*
 * The first non-empty lines, as folded_sniff judges them: how many were
 * judged (`seen`), how many are folded stacks (`good`) and how many
 * would be but for their count (`near`). Whole lines are judged, however
 * long (a deep Java stack can pass 64 KiB); after the first SNIFF_BYTES
 * only the line under way is. Stops at the first line that is not good
 * when `all_good`.
 */
static void sniff_lines(const char *text, size_t len, bool all_good, int *seen, int *good,
			int *near)
{
	size_t pos = bom(text, len);

	*seen = *good = *near = 0;
	while (pos < len && *seen < SNIFF_LINES && (pos < SNIFF_BYTES || *seen == 0)) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;

		if (!blank(text + pos, end - pos)) {
			(*seen)++;
			if (sniff_line(text + pos, end - pos))
				(*good)++;
			else if (all_good)
				return;
			else if (bad_count_line(text + pos, end - pos))
				(*near)++;
		}
		pos = end + 1;
	}
}

bool folded_sniff(const uint8_t *data, size_t len)
{
	int seen, good, near;

	if (!data)
		return false;
	sniff_lines((const char *)data, len, true, &seen, &good, &near);
	return seen > 0 && good == seen;
}

bool folded_sniff_near(const uint8_t *data, size_t len)
{
	int seen, good, near;

	if (!data)
		return false;
	sniff_lines((const char *)data, len, false, &seen, &good, &near);
	/*
	 * And a stack of frames: name-and-number lines alone are as much a
	 * Prometheus exposition ("up 1", "# HELP x") as a folded file. A
	 * file four fifths folded stacks is one too, whatever its other
	 * lines ("main;b x", a word for a count).
	 */
	return good > 0 && (near > 0 ? 2 * (good + near) > seen : 5 * good >= 4 * seen) &&
	       memchr(data, ';', len < SNIFF_BYTES ? len : SNIFF_BYTES);
}
