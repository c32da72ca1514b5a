/*
 * symname.c: one name for a function whatever process or build ran it
 * (symname.h).
 *
 * The JVM's forms are its own (JDK 8 to 21), as perf maps, async-profiler
 * and the JFR converters print them; async-profiler's --norm and the
 * Gradle profiler's flame graph sanitiser drop the same parts. Every rule
 * only removes bytes, so the name is rewritten in place.
 */
#define _GNU_SOURCE /* memmem */
#include <stdbool.h>
#include <string.h>

#include "pipeline/symname.h"
#include "common/redact.h"

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool is_ident(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       c == '$';
}

static size_t digits(const char *s, size_t n, size_t i)
{
	size_t j = i;

	while (j < n && is_digit(s[j]))
		j++;
	return j - i;
}

static bool at(const char *s, size_t n, size_t i, const char *lit)
{
	size_t k = strlen(lit);

	return n - i >= k && memcmp(s + i, lit, k) == 0;
}

/*
 * The length of a hidden class's suffix at s[i]: "/0x" or ".0x" and at
 * least `min_hex` hex digits, or (when `decimal`) "/" or "." and digits,
 * as JDK 8 printed a lambda's identity hash; ended by anything that cannot
 * go on a name. 0 when there is none.
 */
static size_t suffix_len(const char *s, size_t n, size_t i, size_t min_hex, bool decimal)
{
	size_t j, k;

	if (i >= n || (s[i] != '/' && s[i] != '.'))
		return 0;
	j = i + 1;
	if (at(s, n, j, "0x") || at(s, n, j, "0X")) {
		for (k = j + 2; k < n && is_hex(s[k]); k++)
			;
		if (k - j - 2 >= min_hex && (k == n || !is_ident(s[k])))
			return k - i;
	}
	if (decimal && (k = digits(s, n, j)) > 0 && (j + k == n || !is_ident(s[j + k])))
		return 1 + k;
	return 0;
}

/*
 * What to do at s[i]: keep `*keep` bytes, then drop `*drop`. False when
 * nothing starts there.
 */
static bool rule(const char *s, size_t n, size_t i, size_t *keep, size_t *drop)
{
	static const char *const numbered[] = {
		"GeneratedMethodAccessor", "GeneratedConstructorAccessor",
		"GeneratedSerializationConstructorAccessor", "$Proxy",
	};
	static const char *const random[] = {"$ByteBuddy$", "$HibernateProxy$"};
	bool word_start = i == 0 || !is_ident(s[i - 1]);
	size_t j, k;

	if (at(s, n, i, "$$Lambda") && (i + 8 == n || !is_ident(s[i + 8]) || s[i + 8] == '$')) {
		j = i + 8;
		if (j < n && s[j] == '$' && (k = digits(s, n, j + 1)) > 0 &&
		    (j + 1 + k == n || !is_ident(s[j + 1 + k])))
			j += 1 + k;
		while ((k = suffix_len(s, n, j, 1, true)) > 0)
			j += k;
		*keep = 8;
		*drop = j - i - 8;
		return *drop > 0;
	}
	if (at(s, n, i, "LambdaForm$") && (word_start || s[i - 1] == '$')) {
		for (j = i + 11; j < n && s[j] >= 'A' && s[j] <= 'Z'; j++)
			;
		*keep = j - i;
		if (j == i + 11)
			return false;
		while ((k = suffix_len(s, n, j, 1, true)) > 0)
			j += k;
		*drop = j - i - *keep;
		return *drop > 0;
	}
	for (size_t r = 0; r < sizeof(numbered) / sizeof(*numbered); r++) {
		size_t w = strlen(numbered[r]);

		if (at(s, n, i, numbered[r]) && word_start &&
		    (k = digits(s, n, i + w)) > 0 && (i + w + k == n || !is_ident(s[i + w + k]))) {
			*keep = w;
			*drop = k;
			return true;
		}
	}
	for (size_t r = 0; r < sizeof(random) / sizeof(*random); r++) {
		size_t w = strlen(random[r]);

		if (!at(s, n, i, random[r]))
			continue;
		/* Their RandomString: eight letters and digits. */
		for (j = i + w; j < n && is_ident(s[j]) && s[j] != '$' && s[j] != '_'; j++)
			;
		if (j - i - w != 8 || (j < n && is_ident(s[j])))
			return false;
		*keep = w - 1; /* without the '$' that led to the suffix */
		*drop = j - i - *keep;
		return true;
	}
	/*
	 * JFR's event handlers, as JDK 17 names them: one class
	 * made per event type as a recording starts, "jdk/jfr/internal/handlers/
	 * EventHandler1385_1796401219436-30042": the type's id, which moves
	 * with the settings, the time in milliseconds and the process id.
	 */
	if (at(s, n, i, "EventHandler") && i >= 9 &&
	    (at(s, n, i - 9, "handlers/") || at(s, n, i - 9, "handlers."))) {
		j = i + 12;
		/* The id and '_', the time and '-', then the process id. */
		for (int part = 0; part < 3; part++) {
			if ((k = digits(s, n, j)) == 0)
				return false;
			j += k;
			if (part < 2 && (j >= n || s[j] != (part ? '-' : '_')))
				return false;
			j += part < 2;
		}
		if (j < n && is_ident(s[j]))
			return false;
		*keep = 12;
		*drop = j - i - 12;
		return true;
	}
	/* "jdk/proxy2/$Proxy12": the module of a proxy is numbered too. */
	if ((at(s, n, i, "jdk/proxy") || at(s, n, i, "jdk.proxy")) && word_start &&
	    (k = digits(s, n, i + 9)) > 0 && i + 9 + k < n && s[i + 9 + k] == s[i + 3]) {
		*keep = 9;
		*drop = k;
		return true;
	}
	if (i > 0 && is_ident(s[i - 1]) && (k = suffix_len(s, n, i, 8, false)) > 0) {
		*keep = 0;
		*drop = k;
		return true;
	}
	return false;
}

/* True when s[0..16) are hex digits. */
static bool hex16(const char *s)
{
	for (int i = 0; i < 16; i++)
		if (!is_hex(s[i]))
			return false;
	return true;
}

/*
 * The length of s[0..n) without a build's hash at its end: rustc's
 * "::h" and 16 hex digits, the same still mangled ("_ZN4burn4spin17h
 * c780836d5ab3d805E" is "_ZN4burn4spinE"), ThinLTO's ".llvm." and
 * digits (in any order), or the address gperftools' google-pprof
 * --collapsed writes after a name, "compute_fee<0000000000001310>": the
 * next build moves every function, and every name would be new. Only
 * 16 hex digits of which one is a letter or a leading zero: a template's
 * argument ("Fixed<1234567890123456>") is written without zeros before it.
 */
static size_t without_build_hash(char *s, size_t n)
{
	for (;;) {
		size_t k = 0;

		if (n > 23 && s[n - 1] == 'E' && memcmp(s + n - 20, "17h", 3) == 0 &&
		    hex16(s + n - 17) && (at(s, n, 0, "_ZN") || at(s, n, 0, "__ZN"))) {
			s[n - 20] = 'E';
			n -= 19;
			continue;
		}
		if (n > 19 && memcmp(s + n - 19, "::h", 3) == 0 && hex16(s + n - 16)) {
			n -= 19;
			continue;
		}
		if (n > 18 && s[n - 1] == '>' && s[n - 18] == '<' && hex16(s + n - 17) &&
		    (s[n - 17] == '0' || digits(s, n, n - 17) < 16)) {
			n -= 18;
			continue;
		}
		while (k < n && is_digit(s[n - 1 - k]))
			k++;
		if (k > 0 && n >= k + 7 && memcmp(s + n - k - 6, ".llvm.", 6) == 0) {
			n -= k + 6;
			continue;
		}
		return n;
	}
}

/*
 * The length of a numbered suffix GCC gives a function's clone at the
 * end of s[0..n): ".isra.0" (arguments passed another way),
 * ".constprop.1" (an argument made a constant), ".part.2" (the body split
 * from a partly inlined function) or ".cold.3" (its cold part, as GCC 8
 * numbered it); 0 when there is none or nothing is left before it.
 */
static size_t numbered_clone(const char *s, size_t n)
{
	static const char *const kind[] = {".isra.", ".constprop.", ".part.", ".cold."};
	size_t k = 0;

	while (k < n && is_digit(s[n - 1 - k]))
		k++;
	if (k == 0)
		return 0;
	for (size_t i = 0; i < sizeof(kind) / sizeof(*kind); i++) {
		size_t w = strlen(kind[i]);

		if (n > k + w && memcmp(s + n - k - w, kind[i], w) == 0)
			return k + w;
	}
	return 0;
}

/*
 * The length of s[0..n) without the suffixes of GCC's clones, which a
 * build adds or takes away as its inlining decides, with no change to the
 * code: "parse_header" is "parse_header.isra.0" in the next build, and
 * its cold part "parse_header.cold" (GCC 9 on). A clone is the function
 * it was made of, so its samples count as that function's. Written after
 * the name ("foo.constprop.0.isra.0", a kernel's "foo.isra.0_[k]", which
 * keeps its "_[k]") or as the demangler writes it, "foo(int) [clone
 * .isra.0] [clone .cold]". ".cold" alone is a suffix only after another
 * suffix or in a name with no other '.' or '/': Java's dotted names and
 * Go's paths have methods and functions called cold ("com.acme.Cache
 * .cold"). Go's function cold of a package named by one word, "main
 * .cold", cannot be told from C's main.cold by its name: with !gcc (a
 * name no C compiler made: Java's, JavaScript's, Go's, see
 * symname_stable_managed) the bare ".cold" stays, as JFR's "Work.cold"
 * of a class in no package did not.
 */
static size_t without_clone(char *s, size_t n, bool gcc)
{
	size_t tail = n > 4 && at(s, n, n - 4, "_[k]") ? 4 : 0, m = n - tail, k;

	for (;;) {
		if ((k = numbered_clone(s, m)) > 0) {
			m -= k;
			continue;
		}
		if (m > 5 && at(s, m, m - 5, ".cold") && is_ident(s[m - 6]) &&
		    (numbered_clone(s, m - 5) ||
		     (gcc && !memchr(s, '.', m - 5) && !memchr(s, '/', m - 5)))) {
			m -= 5;
			continue;
		}
		/* " [clone .isra.0]", " [clone .cold]": the demangler's form. */
		if (m > 10 && s[m - 1] == ']') {
			size_t o = m - 10;

			while (o > 0 && !at(s, m, o, " [clone ."))
				o--;
			k = m - 1 - (o + 8); /* the suffix's length, from its '.' */
			if (o > 0 && ((k == 5 && at(s, m, o + 8, ".cold")) ||
				      (k > 0 && numbered_clone(s + o + 7, k + 1) == k))) {
				m = o;
				continue;
			}
		}
		break;
	}
	if (m == n - tail)
		return n;
	memmove(s + m, s + n - tail, tail);
	return m + tail;
}

/* The length of the run of base-62 digits ([0-9a-zA-Z]) at s[i]. */
static size_t base62(const char *s, size_t n, size_t i)
{
	size_t j = i;

	while (j < n &&
	       (is_digit(s[j]) || (s[j] >= 'a' && s[j] <= 'z') || (s[j] >= 'A' && s[j] <= 'Z')))
		j++;
	return j - i;
}

/*
 * What to drop at s[i] of the parts a build gives a function's
 * instance: keep `*keep` bytes and drop `*drop`, or write "[...]" in
 * place of `*drop` bytes when `*shape`. False when nothing starts there.
 *   - Rust's v0 mangling names a crate with a hash of the crate's build
 *     (the compiler's version, the package's, its features): "_RNvNtCs
 *     1234abcd_3app6handle7process", "Cs" and base 62 digits ending in
 *     '_' before the crate's name, new with each release. Crate roots
 *     only: the other disambiguators (closures', "s_") number code and
 *     stay. A hash has about eleven digits, so fewer than eight are not
 *     taken for one.
 *   - demangled, "app[1234abcd5678ef90]::handle::process": the same hash
 *     in hex after the crate's name (8 or more digits, as above).
 *   - Go's generic functions, compiled once per shape of their type
 *     arguments: perf names "main.Sum[go.shape.int_0]" what the runtime
 *     (pprof, Go 1.21 on) names "main.Sum[...]", and the shapes' names
 *     change with the compiler. Both become "main.Sum[...]".
 */
static bool instance_rule(const char *s, size_t n, size_t i, bool v0, size_t *keep, size_t *drop,
			  bool *shape)
{
	size_t k;

	*shape = false;
	if (v0 && s[i] == 'C' && at(s, n, i + 1, "s") && (k = base62(s, n, i + 2)) >= 8 &&
	    at(s, n, i + 2 + k, "_") && i + 3 + k < n &&
	    (is_digit(s[i + 3 + k]) ||
	     (s[i + 3 + k] == 'u' && i + 4 + k < n && is_digit(s[i + 4 + k])))) {
		*keep = 1;
		*drop = k + 2;
		return true;
	}
	if (s[i] != '[' || i == 0 || !is_ident(s[i - 1]))
		return false;
	if (at(s, n, i + 1, "go.shape.")) {
		size_t depth = 0;

		for (k = i; k < n; k++) {
			depth += s[k] == '[';
			depth -= s[k] == ']';
			if (depth == 0)
				break;
		}
		if (k == n)
			return false;
		*keep = 0;
		*drop = k + 1 - i;
		*shape = true;
		return true;
	}
	for (k = i + 1; k < n && (is_digit(s[k]) || (s[k] >= 'a' && s[k] <= 'f')); k++)
		;
	if (k - i - 1 < 8 || k - i - 1 > 16 || !at(s, n, k, "]::"))
		return false;
	*keep = 0;
	*drop = k + 1 - i;
	return true;
}

/* s[0..n) without what instance_rule drops, rewritten in place; its new length. */
static size_t without_instance(char *s, size_t n)
{
	bool v0 = at(s, n, 0, "_R") || at(s, n, 0, "__R"), shape;
	size_t r = 0, w = 0, keep, drop;

	if (!v0 && !memchr(s, '[', n))
		return n;
	while (r < n) {
		if (instance_rule(s, n, r, v0, &keep, &drop, &shape)) {
			memmove(s + w, s + r, keep);
			w += keep;
			r += keep + drop;
			if (shape) {
				memcpy(s + w, "[...]", 5);
				w += 5;
			}
			continue;
		}
		s[w++] = s[r++];
	}
	return w;
}

/*
 * A profiler's frame for a process or a thread, named by the ids the
 * kernel gave it, new in every process: py-spy's "process 4121:\"python
 * app.py ...\"" (--subprocesses, with the whole command line, which may
 * hold a password or a token) and "thread (4122)" or "thread
 * (0x7F3A2B1C4700): MainThread" (--threads), austin's "Thread
 * 55f2b010a310" (1.x, the root of every stack), and async-profiler's
 * "[worker-3 tid=4123]" (--threads). They become "process", "thread",
 * "thread: MainThread", "Thread" and "[worker-3]" ("[tid]" without a
 * name). True when s was such a frame; *n is then its new length.
 */
static bool profiler_frame(char *s, size_t *n)
{
	size_t len = *n, k, j;

	if (len > 7 && at(s, len, 0, "Thread ")) {
		bool digit = false;

		for (k = 7; k < len && is_hex(s[k]); k++)
			digit = digit || is_digit(s[k]);
		if (k == len && digit) {
			*n = 6;
			return true;
		}
	}

	if (at(s, len, 0, "process ") && (k = digits(s, len, 8)) > 0 &&
	    at(s, len, 8 + k, ":\"")) {
		*n = 7;
		return true;
	}
	if (at(s, len, 0, "thread (")) {
		j = 8;
		if (at(s, len, j, "0x") || at(s, len, j, "0X"))
			for (j += 2, k = j; k < len && is_hex(s[k]); k++)
				;
		else
			k = j + digits(s, len, j);
		if (k == j || k >= len || s[k] != ')' || (k + 1 < len && !at(s, len, k + 1, ": ")))
			return false;
		memmove(s + 6, s + k + 1, len - k - 1);
		*n = 6 + len - k - 1;
		return true;
	}
	if (len < 7 || s[0] != '[' || s[len - 1] != ']')
		return false;
	for (j = len - 1; j > 0 && is_digit(s[j - 1]); j--)
		;
	if (j == len - 1 || j < 5 || memcmp(s + j - 4, "tid=", 4) != 0)
		return false;
	if (j == 5) { /* "[tid=4123]" */
		memcpy(s, "[tid]", 5);
		*n = 5;
		return true;
	}
	if (s[j - 5] != ' ' || j - 5 < 2)
		return false;
	s[j - 5] = ']';
	*n = j - 4;
	return true;
}

/*
 * pprof-nodejs (Google's, and Datadog's that Pyroscope's Node SDK uses)
 * names an anonymous function after where it starts, "(anonymous:L#14:C#26)"
 * or "(anonymous:L#14)", which moves with every edit above it; V8's own
 * .cpuprofile of the same code says "(anonymous)" and a line apart. True
 * when s was such a name; *n is then the length of "(anonymous)".
 */
static bool anonymous_at_line(char *s, size_t *n)
{
	size_t len = *n, i = 13, k;

	if (!at(s, len, 0, "(anonymous:L#") || (k = digits(s, len, i)) == 0)
		return false;
	i += k;
	if (at(s, len, i, ":C#")) {
		if ((k = digits(s, len, i + 3)) == 0)
			return false;
		i += 3 + k;
	}
	if (i + 1 != len || s[i] != ')')
		return false;
	s[10] = ')';
	*n = 11;
	return true;
}

/*
 * A frame in a shared library with no symbol, named after the library's
 * file as perf and stackcollapse-perf.pl name it, "[libstdc++.so.6.0.30]":
 * libtool's file names add the age and revision to the soname's major
 * version, and those change with every minor upgrade of the library.
 * It becomes the soname, "[libstdc++.so.6]". A name with two numbers is
 * left as written: OpenSSL 1.1's "libssl.so.1.1" and "libpython3.11.so.1.0"
 * are sonames themselves, so the second number may be part of the
 * library's major version. True when s was such a name; *n is then its
 * new length.
 */
static bool library_version(char *s, size_t *n)
{
	size_t len = *n, so = 0, i, major, groups = 0;

	if (len < 10 || s[0] != '[' || s[len - 1] != ']')
		return false;
	for (i = 1; i + 4 < len; i++)
		if (memcmp(s + i, ".so.", 4) == 0)
			so = i;
	if (so < 2 || !(major = digits(s, len, so + 4)))
		return false;
	for (i = so + 4 + major; i < len - 1; groups++) {
		size_t k;

		if (s[i] != '.' || !(k = digits(s, len, i + 1)))
			return false;
		i += 1 + k;
	}
	if (groups < 2)
		return false;
	s[so + 4 + major] = ']';
	*n = so + 4 + major + 1;
	return true;
}

/*
 * JIT code that perf could not name, as perf script and
 * stackcollapse-perf.pl name it after the file perf took it from: a JIT
 * without a perf map (node without --perf-basic-prof, a JVM without an
 * agent) is "[perf-535.map]", and `perf inject --jit` puts each piece of
 * code in "[jitted-535-12.so]". The numbers are the process's id and the
 * order the code was made in, new in every process: a regression in JIT
 * code would be a new function in each capture and never judged. Every
 * number becomes "N" ("[perf-N.map]", "[jitted-N-N.so]"), never longer
 * as an id has a digit. True when s was such a name; *n is then its new
 * length.
 */
static bool jit_file(char *s, size_t *n)
{
	static const char *const form[][2] = {{"[perf-", ".map]"}, {"[jitted-", "-"}};
	size_t len = *n, i, k, w;

	for (size_t f = 0; f < sizeof(form) / sizeof(*form); f++) {
		size_t head = strlen(form[f][0]), tail = strlen(form[f][1]);

		if (!at(s, len, 0, form[f][0]) || !(k = digits(s, len, head)) ||
		    !at(s, len, head + k, form[f][1]))
			continue;
		i = head + k + tail;
		if (f == 1 &&
		    (!(k = digits(s, len, i)) || i + k + 4 != len || !at(s, len, i + k, ".so]")))
			return false;
		if (f == 0 && i != len)
			return false;
		w = head;
		s[w++] = 'N';
		memcpy(s + w, form[f][1], tail);
		w += tail;
		if (f == 1) {
			memcpy(s + w, "N.so]", 5);
			w += 5;
		}
		*n = w;
		return true;
	}
	return false;
}

static size_t stable(char *s, size_t n, bool gcc);

static size_t stable_name(char *s, size_t n, bool gcc)
{
	size_t m;

	n = stable(s, n, gcc);
	/*
	 * Last, personal data cut (redact_names): a name is any text a program
	 * chose (a thread's name, a script's path), and such data in it would
	 * reach the index, exports, reports and pages. A cut can make a suffix
	 * a rule takes off ("...:#$Proxy3"): again, until none.
	 */
	while ((m = redact_names(s, n)) != n)
		n = stable(s, m, gcc);
	return n;
}

size_t symname_stable(char *s, size_t n)
{
	return stable_name(s, n, true);
}

size_t symname_stable_managed(char *s, size_t n)
{
	return stable_name(s, n, false);
}

bool symname_managed_file(const char *f, size_t n)
{
	static const char *const ext[] = {".go", ".java", ".kt", ".js", ".mjs", ".cjs"};

	for (size_t i = 0; f && i < sizeof(ext) / sizeof(ext[0]); i++) {
		size_t k = strlen(ext[i]);
		if (n >= k && memcmp(f + n - k, ext[i], k) == 0)
			return true;
	}
	return false;
}

static size_t stable(char *s, size_t n, bool gcc)
{
	size_t r = 0, w = 0, keep, drop;

	/* Every JVM rule needs one of these; most names (Go's, C's) have none. */
	if (memchr(s, '$', n) || memmem(s, n, "0x", 2) || memmem(s, n, "0X", 2) ||
	    memmem(s, n, "Accessor", 8) || memmem(s, n, "proxy", 5) ||
	    memmem(s, n, "EventHandler", 12)) {
		while (r < n) {
			if (rule(s, n, r, &keep, &drop)) {
				memmove(s + w, s + r, keep);
				w += keep;
				r += keep + drop;
				continue;
			}
			s[w++] = s[r++];
		}
		n = w;
	}
	/* Each can uncover another's suffix ("f.isra.0.llvm.7"), or its own. */
	for (size_t was = 0; was != n;) {
		was = n;
		n = without_instance(s, without_clone(s, without_build_hash(s, n), gcc));
	}
	if (anonymous_at_line(s, &n) || library_version(s, &n) || jit_file(s, &n))
		return n;
	/* Last, so that a thread's name the rules shortened is read as it ends up. */
	while (profiler_frame(s, &n))
		;
	return n;
}

/*
 * The length of a semver version at s[0..n), "1.28.0", "0.17.0-rc.1" or
 * "0.0.3+build", kept as its compatible range as Cargo unifies it: "1",
 * "0.17" or "0.0.3" (0 when s is no such version).
 */
static size_t compatible_version(const char *s, size_t n)
{
	size_t a = digits(s, n, 0), b, c;

	if (!a || a + 1 >= n || s[a] != '.' || !(b = digits(s, n, a + 1)) || a + 1 + b >= n ||
	    s[a + 1 + b] != '.' || !(c = digits(s, n, a + 2 + b)))
		return 0;
	if (a + 2 + b + c < n && s[a + 2 + b + c] != '-' && s[a + 2 + b + c] != '+')
		return 0;
	for (size_t i = 0; i < a; i++)
		if (s[i] != '0')
			return a;
	for (size_t i = a + 1; i < a + 1 + b; i++)
		if (s[i] != '0')
			return a + 1 + b;
	return a + 2 + b + c;
}

/* True when path[0..plen) ends with `tail`. */
static bool ends_with(const char *path, size_t plen, const char *tail)
{
	size_t k = strlen(tail);

	/* A whole folder name, unless the tail starts inside one (".pyenv/"). */
	return plen >= k && memcmp(path + plen - k, tail, k) == 0 &&
	       (plen == k || path[plen - k - 1] == '/' || tail[0] == '.');
}

/* The length of the major part of version s[0..n) ("3" of "3.11.7", "v20" of "v20.1.0"), or 0. */
static size_t version_major(const char *s, size_t n)
{
	size_t v = n && s[0] == 'v', k = digits(s, n, v), j;

	if (k == 0 || v + k >= n || s[v + k] != '.')
		return 0;
	for (j = v + k; j < n && (is_digit(s[j]) || s[j] == '.'); j++)
		;
	return j == n && is_digit(s[n - 1]) ? v + k : 0;
}

/*
 * The length segment s[0..n) of a path keeps, given the segments before
 * it (`path`, `plen` bytes, ending in '/'), without a version the
 * packaging put in it. A version goes only where the program cannot hold
 * two of them: Go builds one version of a module (another major version
 * is another module path), Cargo one of each semver-compatible range
 * (so "tokio-1", "hashbrown-0.14" stay), an interpreter or a toolchain
 * is one; pnpm installs any two versions of a package side by side and
 * keeps its version, dropping only the peer dependencies' suffix.
 */
/* What segment_stable needs of the whole path before a segment, found as the path grows. */
typedef struct path_seen {
	bool url;  /* it holds "://" */
	bool ruby; /* it holds "/ruby/" */
} path_seen;

static size_t segment_stable(const char *s, size_t n, const char *path, size_t plen,
			     const path_seen *seen)
{
	size_t k;

	/*
	 * A process runs one interpreter: the version folders of pyenv's,
	 * rbenv's and nvm's installs ("~/.pyenv/versions/3.11.7/") and of
	 * Ruby's library ("lib/ruby/3.2.0/", "ruby/gems/3.2.0/") keep their
	 * major only.
	 */
	if ((ends_with(path, plen, ".pyenv/versions/") ||
	     ends_with(path, plen, ".rbenv/versions/") ||
	     ends_with(path, plen, ".nvm/versions/node/") || ends_with(path, plen, "ruby/") ||
	     ends_with(path, plen, "ruby/gems/")) &&
	    (k = version_major(s, n)) > 0)
		return k;
	/*
	 * Ruby's gems: Bundler (and RubyGems) activate one version of a gem in
	 * a process, so "gems/rails-7.0.4" is "gems/rails" ("activerecord-
	 * import-1.4.1", "nokogiri-1.14.2-x86_64-linux" too).
	 */
	if (ends_with(path, plen, "gems/") && (seen->ruby ||
					       ends_with(path, plen, "bundle/gems/")))
		for (size_t i = 1; i + 3 < n; i++)
			if (s[i] == '-' && (k = digits(s, n, i + 1)) > 0 && i + 1 + k + 1 < n &&
			    s[i + 1 + k] == '.' && is_digit(s[i + 2 + k]))
				return i;

	/*
	 * Go's module cache and -trimpath: "grpc@v1.56.0" (and /vN@vN.M.K);
	 * not in a URL, whose module is whatever version it names (Deno).
	 */
	if (!seen->url)
		for (size_t i = 1; i + 2 < n; i++)
			if (s[i] == '@' && s[i + 1] == 'v' && is_digit(s[i + 2]))
				return i;
	/* pnpm's store: ".pnpm/express@4.18.2_supports-color@8.1.1" -> "express@4.18.2". */
	if (ends_with(path, plen, ".pnpm/"))
		for (size_t i = 1; i + 1 < n; i++)
			if (s[i] == '@' && is_digit(s[i + 1])) {
				const char *peer = memchr(s + i, '_', n - i);

				return peer ? (size_t)(peer - s) : n;
			}
	/* An interpreter's or a toolchain's own folder: "python3.11", Debian's "go-1.19". */
	if (n > 7 && memcmp(s, "python", 6) == 0 && is_digit(s[6]) && s[7] == '.' &&
	    digits(s, n, 8) == n - 8 && n > 8)
		return 7;
	if (n > 5 && memcmp(s, "go-1.", 5) == 0 && digits(s, n, 5) == n - 5)
		return 2;
	/*
	 * Cargo's registry: ".../registry/src/index.crates.io-6f17d22bba15001f/tokio-1.28.0"
	 * -> "tokio-1". A crate's name has no '.', so its version starts at the first
	 * '-' that a version follows ("utf-8-0.7.6").
	 */
	if (plen >= 16 && path[plen - 1] == '/') {
		size_t idx = plen - 1;

		while (idx > 0 && path[idx - 1] != '/')
			idx--;
		if (idx >= 14 && idx < plen - 1 &&
		    memcmp(path + idx - 14, "/registry/src/", 14) == 0)
			for (size_t i = 1; i + 1 < n; i++)
				if (s[i] == '-' && (k = compatible_version(s + i + 1, n - i - 1)))
					return i + 1 + k;
	}
	return n;
}

/* Does s[0..n) end in '-' and 8 hex digits? */
static bool ends_in_hash8(const char *s, size_t n)
{
	if (n < 9 || s[n - 9] != '-')
		return false;
	for (size_t i = n - 8; i < n; i++)
		if (!is_hex(s[i]))
			return false;
	return true;
}

/* How many bytes at the end of s[0..n) are ":LINE" or ":LINE:COL" (0: none). */
static size_t line_col_len(const char *s, size_t n)
{
	size_t i = n, at = n;

	for (int part = 0; part < 2; part++) {
		size_t end = i;
		while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
			i--;
		if (i == end || i == 0 || s[i - 1] != ':')
			break;
		at = --i;
	}
	return n - at;
}

/*
 * A URL's query and fragment are dropped: a script loaded as
 * "app.js?card=...&password=..." or by a signed URL ("X-Amz-Signature=",
 * "?token=") would store and show the secret with each of its functions,
 * and a new signature would make them new functions. Scheme, host and
 * path stay, and a ":LINE:COL" that ended the name after the query. A URL
 * is a name whose first ':' comes before any '/' and is followed by
 * "//"; its query starts at the first '?' or '#' after that.
 */
static size_t url_without_query(char *s, size_t n)
{
	const char *colon = memchr(s, ':', n);
	size_t c, q, tail;

	if (!colon || colon == s || memchr(s, '/', (size_t)(colon - s)))
		return n;
	c = (size_t)(colon - s);
	if (n - c < 3 || s[c + 1] != '/' || s[c + 2] != '/')
		return n;
	for (q = c + 3; q < n && s[q] != '?' && s[q] != '#'; q++)
		;
	if (q == n)
		return n;
	tail = line_col_len(s + q, n - q);
	memmove(s + q, s + n - tail, tail);
	return q + tail;
}

/*
 * A URL's user and password ("https://deploy:hunter2@cdn.example/app.js")
 * are dropped: they would be stored and shown with each of its functions.
 * The user part is what comes before the last '@' between "://" and the
 * path, so a '@' later in the path (a version, "react@18.2.0") stays.
 */
static size_t url_without_userinfo(char *s, size_t n)
{
	const char *colon = memchr(s, ':', n);
	size_t c, at = 0, i;

	if (!colon || colon == s || memchr(s, '/', (size_t)(colon - s)))
		return n;
	c = (size_t)(colon - s);
	if (n - c < 3 || s[c + 1] != '/' || s[c + 2] != '/')
		return n;
	for (i = c + 3; i < n && s[i] != '/' && s[i] != '?' && s[i] != '#'; i++)
		if (s[i] == '@')
			at = i + 1;
	if (!at)
		return n;
	memmove(s + c + 3, s + at, n - at);
	return n - (at - c - 3);
}

static size_t stable_file(char *s, size_t n);

/*
 * A file name is any text a program or its deploy chose (a folder named
 * by a customer's card number or e-mail address, a script's URL): its
 * card numbers are cut as a name's are, first, so that a URL's '#' is
 * read as what it is: the fragment that follows is dropped
 * ("https://app.example/4111.../pay.js" is "https://app.example/"). The
 * rest (e-mail addresses, IBANs, key ids) after the URL's user and
 * password are dropped, which read as an address ("deploy:hunter2@cdn"),
 * and again until nothing changes, so a second pass changes nothing more.
 */
size_t symname_stable_file(char *s, size_t n)
{
	size_t m;

	n = stable_file(s, redact_card_numbers(s, n));
	while ((m = redact_names(s, n)) != n)
		n = stable_file(s, m);
	return n;
}

static size_t stable_file(char *s, size_t n)
{
	path_seen seen = {false, false};
	size_t r = 0, w = 0;

	n = url_without_query(s, url_without_userinfo(s, n));
	/*
	 * V8 names a WebAssembly module's script "wasm://wasm/<name>-<hash>",
	 * the hash of its bytes: every build of the module is new. A name
	 * that ends so itself is left whole, so that a second pass keeps it.
	 */
	if (n > 12 + 9 && memcmp(s, "wasm://wasm/", 12) == 0 && ends_in_hash8(s, n) &&
	    !ends_in_hash8(s, n - 9) && !memchr(s + 12, '/', n - 12))
		return n - 9;

	if (!memchr(s, '@', n) && !memmem(s, n, "python", 6) && !memmem(s, n, "go-1.", 5) &&
	    !memmem(s, n, "/registry/src/", 14) && !memmem(s, n, "versions/", 9) &&
	    !memmem(s, n, "ruby/", 5) && !memmem(s, n, "gems/", 5))
		return n;
	while (r < n) {
		const char *slash = memchr(s + r, '/', n - r);
		size_t end = slash ? (size_t)(slash - s) : n;
		size_t keep = end - r, k, from = w > 5 ? w - 5 : 0;

		/* Each rule only shortens a segment: apply them until none does. */
		while ((k = segment_stable(s + r, keep, s, w, &seen)) < keep)
			keep = k;

		memmove(s + w, s + r, keep);
		w += keep;
		r = end;
		if (r < n)
			s[w++] = s[r++];
		/*
		 * Only the bytes just written can complete "://" or "/ruby/":
		 * searching the whole path again for every segment made a long
		 * name of many segments cost its length squared.
		 */
		seen.url = seen.url || memmem(s + from, w - from, "://", 3);
		seen.ruby = seen.ruby || memmem(s + from, w - from, "/ruby/", 6);
	}
	return w;
}
