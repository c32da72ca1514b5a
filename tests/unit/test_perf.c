/*
 * test_perf.c: the perf script parser: real captures folded exactly as
 * stackcollapse-perf.pl folds them (golden files), every header and frame
 * variant, and malformed, truncated, hostile and oversized input, each
 * error naming the input and the line.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/buf.h"
#include "pipeline/folded.h"
#include "pipeline/format.h"
#include "pipeline/perf.h"
#include "tests/support/testdata.h"

#define NAME "t.perf"

static int parse_n(profile **out, const char *text, size_t len,
		   const profile_limits *lim, pr_error *err)
{
	return perf_parse(out, (const uint8_t *)text, len, NAME, lim, err);
}

static profile *parse_ok(const char *text)
{
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;

	if (parse_n(&p, text, strlen(text), NULL, &err) != 0)
		fail_msg("parse failed: %s", err.msg);
	assert_non_null(p);
	return p;
}

static void expect_error(const char *text, size_t len, const profile_limits *lim,
			 int code, size_t line, const char *reason)
{
	pr_error err = PR_ERROR_INIT;
	profile *p = (profile *)1;
	char want[64];

	assert_int_equal(parse_n(&p, text, len, lim, &err), code);
	assert_null(p);
	assert_int_equal(err.code, code);
	snprintf(want, sizeof(want), "line %zu:", line);
	if (!strstr(err.msg, "'" NAME "'") || !strstr(err.msg, want) ||
	    !strstr(err.msg, reason))
		fail_msg("message '%s' lacks the name, '%s' or '%s'", err.msg, want,
			 reason);
}

/* Sample i's stack as "a;b;c". */
static void stack_str(buf *out, const profile *p, size_t i)
{
	buf_reset(out);
	for (uint32_t k = 0; k < p->stack_len[i]; k++)
		assert_int_equal(buf_printf(out, "%s%s", k ? ";" : "",
					    p->funcs[p->frames[p->stack_off[i] + k]].name), 0);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The profile as stackcollapse-perf.pl prints it, counting one an event
 * (its samples column): one "stack count" line per distinct stack,
 * sorted, joined by newlines. Caller frees.
 */
static char *folded_text(const profile *p)
{
	char **lines = calloc(p->nsamples + 1, sizeof(*lines));
	buf s = BUF_INIT, all = BUF_INIT;
	size_t n = 0;

	assert_non_null(lines);
	for (size_t i = 0; i < p->nsamples; i++) {
		stack_str(&s, p, i);
		assert_int_equal(buf_printf(&s, "\t%lld",
					    (long long)p->values[i * p->nvalue_types]), 0);
		lines[n++] = buf_detach(&s, NULL);
	}
	qsort(lines, n, sizeof(*lines), cmp_str);
	for (size_t i = 0; i < n;) {
		char *tab = strrchr(lines[i], '\t');
		long long sum = 0;
		size_t j = i;

		*tab = '\0';
		for (; j < n; j++) {
			char *t = strrchr(lines[j], '\t');
			if (j > i) {
				if (!t || strncmp(lines[j], lines[i], (size_t)(t - lines[j])) ||
				    lines[i][t - lines[j]] != '\0')
					break;
				*t = '\0';
			}
			sum += strtoll((j > i ? t : tab) + 1, NULL, 10);
		}
		assert_int_equal(buf_printf(&all, "%s %lld\n", lines[i], sum), 0);
		i = j;
	}
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
	buf_release(&s);
	return buf_detach(&all, NULL);
}

static const profile_summary_row *find_row(const profile *p,
					   const profile_summary *s,
					   const char *name)
{
	for (size_t i = 0; i < s->nrows; i++)
		if (strcmp(p->funcs[s->rows[i].func].name, name) == 0)
			return &s->rows[i];
	return NULL;
}

/*
 * Parse `rel`.perf with perf_parse and the golden `rel`.folded (the
 * script's output) with folded_parse: every function's self and total,
 * and every stack with its count, must agree.
 */
static void check_against_golden(const char *rel, size_t want_events)
{
	buf text = BUF_INIT, golden = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	profile *mine = NULL, *ref = NULL;
	profile_summary sm, sr;
	char path[256], *a, *b;

	snprintf(path, sizeof(path), "perf/%s.perf", rel);
	testdata_read(&text, path);
	snprintf(path, sizeof(path), "perf/%s.folded", rel);
	testdata_read(&golden, path);
	if (perf_parse(&mine, (const uint8_t *)text.ptr, text.len, rel, NULL, &err) < 0 ||
	    folded_parse(&ref, (const uint8_t *)golden.ptr, golden.len, rel, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(mine->nsamples, want_events);
	assert_int_equal(profile_summarize(&sm, mine, 0, &err), 0);
	assert_int_equal(profile_summarize(&sr, ref, 0, &err), 0);
	assert_int_equal(sm.total, (int64_t)want_events);
	assert_int_equal(sm.total, sr.total);
	assert_int_equal(sm.nrows, sr.nrows);
	for (size_t i = 0; i < sr.nrows; i++) {
		const char *name = ref->funcs[sr.rows[i].func].name;
		const profile_summary_row *r = find_row(mine, &sm, name);

		if (!r || r->self != sr.rows[i].self || r->total != sr.rows[i].total)
			fail_msg("%s: '%s' self %lld total %lld, stackcollapse-perf %lld %lld",
				 rel, name, r ? (long long)r->self : -1LL,
				 r ? (long long)r->total : -1LL,
				 (long long)sr.rows[i].self, (long long)sr.rows[i].total);
	}
	a = folded_text(mine);
	b = folded_text(ref);
	assert_string_equal(a, b);
	free(a);
	free(b);
	profile_summary_release(&sm);
	profile_summary_release(&sr);
	profile_free(mine);
	profile_free(ref);
	buf_release(&text);
	buf_release(&golden);
}

static void test_real_dwarf_capture_folds_like_stackcollapse_perf(void **state)
{
	(void)state;
	check_against_golden("burn-dwarf", 110);
}

static void test_real_pid_tid_cpu_capture_folds_like_stackcollapse_perf(void **state)
{
	(void)state;
	check_against_golden("burn-fp", 346);
}

static void test_documented_variants_fold_like_stackcollapse_perf(void **state)
{
	(void)state;
	check_against_golden("variants", 8);
}

static void test_real_capture_without_call_chains_folds_like_stackcollapse_perf(void **state)
{
	(void)state;
	check_against_golden("burn-nocg", 372);
}

/*
 * perf record -e page-faults asks the kernel for a frequency, and the
 * kernel changes the period from sample to sample (1 to 9 faults in this
 * real print). perf report weighs each sample by its period; the cpu
 * column must give every function it names the share it prints, to its
 * two decimals, and the total it prints as the event count. Counting
 * events gave _int_malloc 26.03% for its 32.52%. perf report names a
 * frame without a symbol by its address, profreg by its library: those
 * rows are left out.
 */
static void test_varying_periods_give_perf_report_shares(void **state)
{
	buf text = BUF_INIT, rep = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	profile_summary s;
	profile *p = NULL;
	long long events = -1;
	size_t checked = 0;
	char *save = NULL;

	(void)state;
	testdata_read(&text, "perf/tpl-pagefaults.perf");
	testdata_read(&rep, "perf/tpl-pagefaults.report.txt");
	if (perf_parse(&p, (const uint8_t *)text.ptr, text.len, "tpl-pagefaults.perf", NULL,
		       &err) < 0)
		fail_msg("%s", err.msg);
	assert_string_equal(profile_pick_primary(p, "cpu"), "cpu");
	assert_string_equal(p->value_types[p->primary].type, "cpu");
	assert_string_equal(p->value_types[p->primary].unit, "count");
	assert_int_equal(profile_summarize(&s, p, p->primary, &err), 0);
	for (char *line = strtok_r(rep.ptr, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		const profile_summary_row *r;
		char name[512], kind;
		double pct, ours;

		if (sscanf(line, "# Event count (approx.): %lld", &events) == 1 ||
		    sscanf(line, " %lf%% [%c] %511[^\n]", &pct, &kind, name) != 3)
			continue;
		for (size_t k = strlen(name); k > 0 && name[k - 1] == ' '; k--)
			name[k - 1] = '\0';
		if (strncmp(name, "0x", 2) == 0)
			continue;
		if (!(r = find_row(p, &s, name)))
			fail_msg("'%s' (%.2f%% in perf report) is not in the profile", name, pct);
		ours = 100.0 * (double)r->self / (double)s.total;
		if (ours < pct - 0.006 || ours > pct + 0.006)
			fail_msg("'%s': self %.3f%%, perf report says %.2f%%", name, ours, pct);
		checked++;
	}
	assert_int_equal(s.total, events);
	assert_int_equal(s.sample_count, p->nsamples);
	assert_true(checked >= 20);
	profile_summary_release(&s);
	profile_free(p);
	buf_release(&text);
	buf_release(&rep);
}

static void test_real_capture_has_the_expected_shape(void **state)
{
	buf text = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	profile_summary s;
	profile *p = NULL;

	(void)state;
	testdata_read(&text, "perf/burn-dwarf.perf");
	assert_int_equal(perf_parse(&p, (const uint8_t *)text.ptr, text.len,
				    "burn-dwarf.perf", NULL, &err), 0);
	assert_int_equal(p->format, PROFILE_FMT_PERF);
	/* Events, and the CPU time of their periods (10101010 ns each). */
	assert_int_equal(p->nvalue_types, 2);
	assert_string_equal(p->value_types[0].type, "samples");
	assert_string_equal(p->value_types[0].unit, "count");
	assert_string_equal(p->value_types[1].type, "cpu");
	assert_string_equal(p->value_types[1].unit, "nanoseconds");
	for (size_t i = 0; i < p->nsamples; i++)
		assert_int_equal(p->values[2 * i + 1], 10101010);
	assert_int_equal(profile_summarize(&s, p, 0, &err), 0);
	/* Three threads; a name with a space; leaf_hash burns the most. */
	assert_non_null(find_row(p, &s, "burn"));
	assert_non_null(find_row(p, &s, "io_worker"));
	assert_non_null(find_row(p, &s, "render_pool"));
	assert_int_equal(find_row(p, &s, "burn")->total + find_row(p, &s, "io_worker")->total +
			 find_row(p, &s, "render_pool")->total, 110);
	assert_string_equal(p->funcs[s.rows[0].func].name, "leaf_hash");
	assert_true(s.rows[0].self > 55);
	/* perf's "(inlined)" frame is a frame. */
	assert_non_null(find_row(p, &s, "checksum_inline"));
	/* No offset survives. */
	for (uint32_t f = 0; f < p->nfuncs; f++)
		assert_null(strstr(p->funcs[f].name, "+0x"));
	profile_summary_release(&s);
	profile_free(p);
	buf_release(&text);
}

/* Parse one event and return its stack, root first. */
static void expect_stack(const char *text, const char *want)
{
	profile *p = parse_ok(text);
	buf s = BUF_INIT;

	assert_int_equal(p->nsamples, 1);
	stack_str(&s, p, 0);
	if (strcmp(s.ptr, want) != 0)
		fail_msg("'%s' folded to '%s', expected '%s'", text, s.ptr, want);
	buf_release(&s);
	profile_free(p);
}

/*
 * node --perf-basic-prof names a JIT frame "JS:*hotLeaf /tmp/app/hot.js:1:17",
 * with the tier it ran in (* TurboFan, ^ Sparkplug, ~ interpreted) and
 * its line and column. A real print where hotLeaf ran both optimised and
 * in Sparkplug: one function hotLeaf of /tmp/app/hot.js, whose total is
 * every event with either frame and whose self is every event it is the
 * leaf of, counted here from the text; no function keeps a "JS:" name.
 */
static void test_v8_jit_frames_are_one_function_whatever_their_tier(void **state)
{
	buf text = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	profile_summary sm;
	const profile_summary_row *r;
	int64_t self = 0, total = 0;
	const char *ev;

	(void)state;
	testdata_read(&text, "perf/node-jit.perf");
	/* Each event: a header line, its frames (the leaf first), a blank line. */
	for (ev = text.ptr; ev && *ev;) {
		const char *end = strstr(ev, "\n\n"), *leaf = strchr(ev, '\n');
		const char *hit = strstr(ev, "hotLeaf /tmp/app/hot.js:");
		if (hit && (!end || hit < end)) {
			total++;
			self += leaf && hit < strchr(leaf + 1, '\n');
		}
		ev = end ? end + 2 : NULL;
	}
	assert_true(self > 0 && total > self);
	assert_int_equal(perf_parse(&p, (const uint8_t *)text.ptr, text.len, "node-jit.perf", NULL,
				    &err), 0);
	assert_int_equal(profile_summarize(&sm, p, 0, &err), 0);
	assert_non_null(r = find_row(p, &sm, "hotLeaf"));
	assert_string_equal(p->funcs[r->func].file, "/tmp/app/hot.js");
	assert_int_equal(r->self, self);
	assert_int_equal(r->total, total);
	assert_non_null(find_row(p, &sm, "mid"));
	for (size_t i = 0; i < p->nfuncs; i++)
		if (strncmp(p->funcs[i].name, "JS:", 3) == 0)
			fail_msg("function '%s' kept V8's tag", p->funcs[i].name);
	profile_summary_release(&sm);
	profile_free(p);
	buf_release(&text);
}

/* The self share of function `name` in p (0 when it is not there). */
static double self_share(const profile *p, const profile_summary *s, const char *name)
{
	const profile_summary_row *r = find_row(p, s, name);

	return r && s->total ? (double)r->self / (double)s->total : 0;
}

/*
 * python3.12 -X perf names each Python function in a perf map, above the
 * interpreter code that runs it. A real print (perf record --call-graph
 * dwarf of folded/austin-burn.py, where hot loops three times as long as
 * warm or cold): every self sample sat in the interpreter's functions, and
 * hot's 2x slowdown was no finding. The interpreter's frames below the
 * innermost Python function are its time now.
 */
static void test_python_functions_under_perf_keep_the_interpreters_time(void **state)
{
	buf text = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	profile_summary sm;
	double hot, warm, cold;

	(void)state;
	testdata_read(&text, "perf/python312-burn.perf");
	assert_int_equal(perf_parse(&p, (const uint8_t *)text.ptr, text.len, "python312-burn.perf",
				    NULL, &err),
			 0);
	assert_int_equal(profile_summarize(&sm, p, 0, &err), 0);
	hot = self_share(p, &sm, "py::hot:/tmp/app/burn.py");
	warm = self_share(p, &sm, "py::warm:/tmp/app/burn.py");
	cold = self_share(p, &sm, "py::cold:/tmp/app/burn.py");
	assert_true(hot > 0.45 && warm > 0.08 && cold > 0.08);
	assert_true(hot > 2 * warm && hot > 2 * cold);
	/* No interpreter function keeps time the Python functions ran. */
	assert_true(self_share(p, &sm, "_PyEval_EvalFrameDefault") < 0.02);
	assert_true(self_share(p, &sm, "pymalloc_alloc") < 0.02);
	profile_summary_release(&sm);
	profile_free(p);
	buf_release(&text);
}

/*
 * Below the innermost Python function, only the interpreter's frames go,
 * inlined ones too (their dso is the frame after them); a C extension's
 * or libc's keep their time, and a sample with no Python function in it
 * is left as it is.
 */
static void test_python_leaf_drops_only_the_interpreters_frames(void **state)
{
	static const char text[] =
		"python3.12 1 [000] 1.000000: 1000 cpu-clock:\n"
		"\t1 long_mul+0x1 (inlined)\n"
		"\t1 PyNumber_Multiply+0x1 (/usr/lib/libpython3.12.so.1.0)\n"
		"\t2 _PyEval_EvalFrameDefault+0x1 (/usr/lib/libpython3.12.so.1.0)\n"
		"\t3 py::hot:/app/a.py+0x5 (/tmp/perf-1.map)\n"
		"\t4 _PyEval_EvalFrameDefault+0x1 (/usr/lib/libpython3.12.so.1.0)\n"
		"\t5 py::main:/app/a.py+0x5 (/tmp/perf-1.map)\n"
		"\t6 _start+0x1 (/usr/bin/python3.12)\n"
		"\n"
		"python3.12 1 [000] 1.001000: 1000 cpu-clock:\n"
		"\t7 sha256_block_data_order+0x1 (/usr/lib/libcrypto.so.3)\n"
		"\t2 _PyEval_EvalFrameDefault+0x1 (/usr/lib/libpython3.12.so.1.0)\n"
		"\t8 py::digest:/app/a.py+0x5 (/tmp/perf-1.map)\n"
		"\t6 _start+0x1 (/usr/bin/python3.12)\n"
		"\n"
		"python3.12 1 [000] 1.002000: 1000 cpu-clock:\n"
		"\t1 PyNumber_Multiply+0x1 (/usr/lib/libpython3.12.so.1.0)\n"
		"\t6 _start+0x1 (/usr/bin/python3.12)\n"
		"\n";
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	profile_summary sm;
	const profile_summary_row *r;

	(void)state;
	assert_int_equal(
		perf_parse(&p, (const uint8_t *)text, sizeof(text) - 1, "py.perf", NULL, &err), 0);
	assert_int_equal(profile_summarize(&sm, p, 0, &err), 0);
	assert_non_null(r = find_row(p, &sm, "py::hot:/app/a.py"));
	assert_int_equal(r->self, 1);
	assert_null(find_row(p, &sm, "long_mul"));
	assert_non_null(r = find_row(p, &sm, "sha256_block_data_order"));
	assert_int_equal(r->self, 1);
	assert_non_null(r = find_row(p, &sm, "py::digest:/app/a.py"));
	assert_int_equal(r->self, 0);
	assert_non_null(r = find_row(p, &sm, "PyNumber_Multiply"));
	assert_int_equal(r->self, 1);
	/* The interpreter between two Python functions stays, with no self. */
	assert_non_null(r = find_row(p, &sm, "_PyEval_EvalFrameDefault"));
	assert_int_equal(r->self, 0);
	profile_summary_release(&sm);
	profile_free(p);
}

/*
 * Code of no script, made by eval or new Function, has an empty file in
 * a perf map: "JS:^evalSpin :1:19", "JS:* :1:20". A real print where
 * both ran in Sparkplug and optimised: evalSpin is one function with no
 * file, as a .cpuprofile names it, and so is the new Function, whose
 * name is empty ("(anonymous)"); each one's self and total are counted
 * here from the text.
 */
static void test_v8_jit_frames_of_eval_code_are_one_function(void **state)
{
	static const struct {
		const char *name;
		const char *frame; /* what its JIT frames end in */
	} funcs[] = {{"evalSpin", "evalSpin :1:19+0x"}, {"(anonymous)", " :1:20+0x"}};
	buf text = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	profile_summary sm;

	(void)state;
	testdata_read(&text, "perf/eval-jit.perf");
	assert_int_equal(perf_parse(&p, (const uint8_t *)text.ptr, text.len, "eval-jit.perf", NULL,
				    &err), 0);
	assert_int_equal(profile_summarize(&sm, p, 0, &err), 0);
	for (size_t f = 0; f < sizeof(funcs) / sizeof(funcs[0]); f++) {
		const profile_summary_row *r = NULL;
		int64_t self = 0, total = 0;

		/* Each event: a header line, its frames (the leaf first), a blank line. */
		for (const char *ev = text.ptr; ev && *ev;) {
			const char *end = strstr(ev, "\n\n"), *leaf = strchr(ev, '\n');
			const char *hit = strstr(ev, funcs[f].frame);
			if (hit && (!end || hit < end)) {
				total++;
				self += leaf && hit < strchr(leaf + 1, '\n');
			}
			ev = end ? end + 2 : NULL;
		}
		assert_true(self > 0);
		for (size_t i = 0; i < sm.nrows; i++)
			if (strcmp(p->funcs[sm.rows[i].func].name, funcs[f].name) == 0 &&
			    strcmp(p->funcs[sm.rows[i].func].file, "") == 0)
				r = &sm.rows[i];
		if (!r)
			fail_msg("no function '%s' without a file", funcs[f].name);
		assert_int_equal(r->self, self);
		assert_int_equal(r->total, total);
	}
	for (size_t i = 0; i < p->nfuncs; i++)
		if (strncmp(p->funcs[i].name, "JS:", 3) == 0)
			fail_msg("function '%s' kept V8's tag", p->funcs[i].name);
	profile_summary_release(&sm);
	profile_free(p);
	buf_release(&text);
}

/*
 * Names with a '(' inside brackets, braces or angle brackets: two lambdas
 * of one C++ function ("main::{lambda(int)#1}::operator()", "#2"), the
 * std::function handlers of two lambdas
 * ("std::_Function_handler<long (long), main::{lambda(long)#1}>::_M_invoke")
 * and Go generic functions instantiated for two function types
 * ("main.Apply[go.shape.func(int) int_0]", "func(string) error_0"), real
 * prints. Each stays a function of its own, whose self is every
 * event it is the leaf of, counted here from the text; but Go's
 * instances are one function, "main.Apply[...]" as Go's runtime names
 * them (symname.h), which a name cut at the '(' would not become.
 */
static void test_parens_inside_brackets_do_not_cut_the_name(void **state)
{
	static const struct {
		const char *file;
		const char *name;  /* as folded */
		const char *frame; /* as perf prints it, offset cut */
	} cases[] = {
		{"perf/cpp-lambdas.perf", "main::{lambda(int)#1}::operator",
		 " main::{lambda(int)#1}::operator()+0x"},
		{"perf/cpp-lambdas.perf", "main::{lambda(int)#2}::operator",
		 " main::{lambda(int)#2}::operator()+0x"},
		{"perf/go-generics.perf", "main.Apply[...]", " main.Apply[go.shape."},
		{"perf/cpp-function.perf",
		 "std::_Function_handler<long (long), main::{lambda(long)#1}>::_M_invoke",
		 " std::_Function_handler<long (long), main::{lambda(long)#1}>::_M_invoke+0x"},
		{"perf/cpp-function.perf",
		 "std::_Function_handler<long (long), main::{lambda(long)#2}>::_M_invoke",
		 " std::_Function_handler<long (long), main::{lambda(long)#2}>::_M_invoke+0x"},
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		buf text = BUF_INIT;
		pr_error err = PR_ERROR_INIT;
		profile *p = NULL;
		profile_summary sm;
		const profile_summary_row *r;
		int64_t self = 0;

		testdata_read(&text, cases[c].file);
		/* Each event: a header line, its frames (the leaf first), a blank line. */
		for (const char *ev = text.ptr; ev && *ev;) {
			const char *end = strstr(ev, "\n\n"), *leaf = strchr(ev, '\n');
			const char *hit = leaf ? strstr(leaf, cases[c].frame) : NULL;

			self += hit && hit < strchr(leaf + 1, '\n');
			ev = end ? end + 2 : NULL;
		}
		assert_true(self > 0);
		assert_int_equal(perf_parse(&p, (const uint8_t *)text.ptr, text.len, cases[c].file,
					    NULL, &err), 0);
		assert_int_equal(profile_summarize(&sm, p, 0, &err), 0);
		if (!(r = find_row(p, &sm, cases[c].name)))
			fail_msg("no function '%s' in '%s'", cases[c].name, cases[c].file);
		assert_int_equal(r->self, self);
		profile_summary_release(&sm);
		profile_free(p);
		buf_release(&text);
	}
}

static void test_header_variants_give_the_command_as_root(void **state)
{
	static const struct {
		const char *header;
		const char *comm;
	} cases[] = {
		/* The examples in stackcollapse-perf.pl's comments. */
		{"java 25607 4794564.109216: cycles:", "java"},
		{"java 12688 [002] 6544038.708352: cpu-clock:", "java"},
		{"V8 WorkerThread 25607 4794564.109216: 104345 cycles:", "V8_WorkerThread"},
		{"java 24636/25607 [000] 4794564.109216: 1 cycles:", "java"},
		{"java 12688/12764 6544038.708352: 10309278 cpu-clock:", "java"},
		{"V8 WorkerThread 24636/25607 [000] 94564.109216: 100 cycles:",
		 "V8_WorkerThread"},
		{"swapper     0 [000] 158665.570607: cpu-clock:", "swapper"},
		/* perf 6.1's default output, trailing space and all. */
		{"render pool 11455   648.610512:   10101010 cpu-clock: ", "render_pool"},
		{"kworker/0:1-ev   112 [000] 1000.000002:          1 cpu-clock:u: ",
		 "kworker/0:1-ev"},
		/* A name ending in a number stays whole (the script: "render_pool"). */
		{"render pool 2  7515   460.339740:    5025125 cpu-clock: ", "render_pool_2"},
		{"Thread 2 pool 7 7515/7516 [001] 460.339740: cycles:", "Thread_2_pool_7"},
		{"a 1 2.5: cycles:", "a"},
		/* Without a timestamp, the script's rule: up to the first number. */
		{"perf 123 cycles:", "perf"},
		{"Thread 2 pool 77 cycles:", "Thread"},
		/* -F without pid, and -F +misc's flags after the pid or cpu. */
		{"burn 49429.574345:    1001001 cpu-clock:ppp: ", "burn"},
		{"burn  2482 K     49429.574345:    1001001 cpu-clock:ppp: ", "burn"},
		{"render pool 2  7515 [001] U     460.339740: 1 cycles:", "render_pool_2"},
		{"java K U H 5.0: 1 cycles:", "java"},
		/* Names with spaces and digits, before every field perf prints. */
		{"Web Content  9001 [001] KGg   5.0: 1 cycles:", "Web_Content"},
		{"Web Content [001] 5.0: 1 cycles:", "Web_Content"},
		{"kworker/0:1 [000] K     5.0: 1 cycles:", "kworker/0:1"},
		{"render pool 2  7515 [001] 2024-03-15 10:20:30.123456 460.339740: 1 cycles:",
		 "render_pool_2"},
		{"Web Content [001] cycles:", "Web_Content"},
	};
	char text[256], want[128];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), "%s\n\t    4a1b2c leaf+0x1 (/bin/x)\n\n",
			 cases[i].header);
		snprintf(want, sizeof(want), "%s;leaf", cases[i].comm);
		expect_stack(text, want);
	}
}

/*
 * A thread names itself (prctl, pthread_setname_np), and its name is the
 * root frame of its samples, in the index, exports and reports: a run of
 * 13 digits or more, which could be a card number, is cut to one '#'.
 * Shorter numbers stay ("render pool 2", "worker-123456789012").
 */
static void test_a_thread_name_holding_a_card_number_is_masked(void **state)
{
	(void)state;
	expect_stack("378282246310005 7515 [001] 460.339740: 1 cycles:\n"
		     "\t    4a1b2c leaf+0x1 (/bin/x)\n\n",
		     "#;leaf");
	expect_stack("pan4111111111111111 7515 [001] 460.339740: 1 cycles:\n"
		     "\t    4a1b2c leaf+0x1 (/bin/x)\n\n",
		     "pan#;leaf");
	expect_stack("worker-123456789012 7515 [001] 460.339740: 1 cycles:\n"
		     "\t    4a1b2c leaf+0x1 (/bin/x)\n\n",
		     "worker-123456789012;leaf");
}

#define HDR "app 100 [000] 1.000001: 1 cpu-clock:\n"

static void test_frames_are_tidied_like_stackcollapse_perf(void **state)
{
	static const struct {
		const char *frame;
		const char *want;
	} cases[] = {
		{"7f00 parse+0x1f (/bin/app)", "parse"},
		{"7f00 parse+0xABC (/bin/app)", "parse+0xABC"},
		{"7f00 parse (/bin/app)", "parse"},
		{"7f00 [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)", "[libc.so.6]"},
		{"7f00 [unknown] ([kernel.kallsyms])", "[[kernel.kallsyms]]"},
		{"0 [unknown] ([unknown])", "[unknown]"},
		{"7f00 foo(int, char const*)+0x10 (/bin/app)", "foo"},
		{"7f00 net/http.(*Client).Do+0x20 (/bin/app)", "net/http.(*Client).Do"},
		{"7f00 ns::(anonymous namespace)::f(int) (/bin/app)",
		 "ns::(anonymous namespace)::f"},
		/* A template's arguments may hold a '('; an operator's '<' opens nothing. */
		{"7f00 std::_Function_handler<long (long), main::{lambda(long)#1}>::_M_invoke+0x30 "
		 "(/bin/app)",
		 "std::_Function_handler<long (long), main::{lambda(long)#1}>::_M_invoke"},
		{"7f00 <F as core::ops::function::FnOnce<()>>::call_once+0x9 (/bin/app)",
		 "<F as core::ops::function::FnOnce<()>>::call_once"},
		{"7f00 operator< <long>+0x5 (/bin/app)", "operator< <long>"},
		{"7f00 operator< <long>(V const&, long)+0x5 (/bin/app)", "operator< <long>"},
		{"7f00 operator<<(V&, long)+0x5 (/bin/app)", "operator<<"},
		{"7f00 std::operator<< <std::char_traits<char> >(std::basic_ostream<char, "
		 "std::char_traits<char> >&, char const*) (/bin/app)",
		 "std::operator<< <std::char_traits<char> >"},
		{"7f00 V::operator>(V const&) const (/bin/app)", "V::operator>"},
		{"7f00 V::operator>>=(int) (/bin/app)", "V::operator>>="},
		{"7f00 V::operator<=>(V const&) const (/bin/app)", "V::operator<=>"},
		{"7f00 cooperator<(int)>::run(int) (/bin/app)", "cooperator<(int)>::run"},
		/* operator-> is no "a->b" chain; operator() keeps the name it always had. */
		{"7f00 Ptr::operator->+0x5 (/bin/app)", "Ptr::operator->"},
		{"7f00 Ptr::operator->() const (/bin/app)", "Ptr::operator->"},
		{"7f00 Ptr::operator->*+0x5 (/bin/app)", "Ptr::operator->*"},
		{"7f00 Ptr::operator()+0x5 (/bin/app)", "Ptr::operator"},
		{"7f00 outer->Ptr::operator->+0x5 (/bin/app)", "outer;Ptr::operator->"},
		{"7f00 cooperator-> (/bin/app)", "cooperator"},
		{"7f00 (anonymous namespace)::g() (/bin/app)", "(anonymous namespace)::g"},
		{"7f00 \"RegExp:[&<>'x]\" (/tmp/perf-1.map)", "RegExp:[&<>x]"},
		{"7f00 a;b (/bin/app)", "a:b"},
		{"7f00 inlined_fn (inlined)", "inlined_fn"},
		{"7f00 outer->inner+0x3 (/bin/app)", "outer;inner"},
		{"7f00 a->b->c (/bin/app)", "a;b;c"},
		{"7f00 a->b_[i] (/bin/app)", "a;b_[i]"},
		{"7f00 a-> (/bin/app)", "a"},
		{"7f00 Lorg/x/Y;.call (/tmp/perf-1.map)", "Lorg/x/Y:.call"},
		{"7f00 close (/tmp/x.so (deleted))", "close"},
		{"7f00 [unknown] (/tmp/x.so (deleted))", "[x.so]"},
		{"7f00 sym_without_dso", "sym_without_dso"},
		{"7f00 (/bin/app)", "[app]"},
		{"7f00", "[unknown]"},
		{"7f00 parse+0x1f (/bin/app)   ", "parse"},
		{"FFFFFFFF8103CE3B native_safe_halt ([kernel.kallsyms])", "native_safe_halt"},
	};
	char text[512], want[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), HDR "\t    %s\n\n", cases[i].frame);
		snprintf(want, sizeof(want), "app;%s", cases[i].want);
		expect_stack(text, want);
	}
}

static void test_java_signatures_lose_their_leading_l(void **state)
{
	(void)state;
	expect_stack("java 1 1.0: cycles:\n"
		     "\t7f00 Lorg/x/Y;.call(Lorg/x/Ctx;)Ljava/lang/Object; (/tmp/perf-1.map)\n"
		     "\t7f01 Interpreter (/jvm/libjvm.so)\n"
		     "\t7f02 Lmain (/jvm/libjvm.so)\n\n",
		     "java;Lmain;Interpreter;org/x/Y:.call");
	expect_stack("javac 1 1.0: cycles:\n\t7f00 Lorg/a/B;.run (/tmp/perf-1.map)\n\n",
		     "javac;org/a/B:.run");
}

static void test_process_name_frames_are_skipped(void **state)
{
	(void)state;
	expect_stack(HDR "\t7f00 leaf (/bin/app)\n\t7f01 (/bin/app) (/bin/app)\n"
		     "\t7f02 main+0x4 (/bin/app)\n\n",
		     "app;main;leaf");
}

static void test_header_without_frames_is_a_stack_of_the_command(void **state)
{
	profile *p = parse_ok("kworker/0:1 112 [000] 1.0: 1 cpu-clock:\n\n"
			      HDR "\t7f00 leaf (/bin/app)\n\n");
	buf s = BUF_INIT;

	(void)state;
	assert_int_equal(p->nsamples, 2);
	stack_str(&s, p, 0);
	assert_string_equal(s.ptr, "kworker/0:1");
	stack_str(&s, p, 1);
	assert_string_equal(s.ptr, "app;leaf");
	buf_release(&s);
	profile_free(p);
}

static void test_only_the_first_event_type_is_kept(void **state)
{
	profile *p = parse_ok("app 1 1.0: 100 cycles:\n\t7f00 a (/x)\n\n"
			      "app 1 1.1: 900 instructions:\n\t7f00 b (/x)\n\t7f01 c (/x)\n\n"
			      "app 1 1.2: 100 cycles:\n\t7f00 d (/x)\n\n"
			      "app 1 1.3: 900 instructions:\n\n"
			      "app 1 1.4: 100 cycles:u:\n\t7f00 e (/x)\n\n");
	buf s = BUF_INIT;

	(void)state;
	assert_int_equal(p->nsamples, 2);
	stack_str(&s, p, 0);
	assert_string_equal(s.ptr, "app;a");
	stack_str(&s, p, 1);
	assert_string_equal(s.ptr, "app;d");
	buf_release(&s);
	profile_free(p);
}

static void test_headers_without_an_event_field_are_all_kept(void **state)
{
	profile *p = parse_ok("app 1 1.000001: \n\t7f00 a (/x)\n\n"
			      "app 1 1.000002: \n\t7f00 b (/x)\n\n");

	(void)state;
	assert_int_equal(p->nsamples, 2);
	profile_free(p);
}

static void test_one_line_events_are_the_command_and_the_symbol(void **state)
{
	static const struct {
		const char *line;
		const char *want;
	} cases[] = {
		/* perf 6.1's default without -g: the command padded to 16. */
		{"            burn 24193  7227.119856:    5025125 cpu-clock:      557ad0a49257 "
		"leaf_hash+0x27 (/tmp/pf/burn)",
		 "burn;leaf_hash"},
		{"     render pool 24196  7227.124237:    5025125 cpu-clock:      557ad0a49257 "
		"leaf_hash+0x27 (/tmp/pf/burn)",
		 "render_pool;leaf_hash"},
		{"burn 12345 [001] 12345.678901:     250000 cpu-clock:  "
		"55d0c3a1b149 main+0x19 (/tmp/burn)",
		 "burn;main"},
		{"java 24636/25607 [000] 4794564.109216: cycles: 7f00 "
		"Lorg/a/B;.run (/tmp/perf-1.map)",
		 "java;org/a/B:.run"},
		{"app 1/2 1.5: 100 cycles:u: 7f00 [unknown] (/usr/lib/libc.so.6)",
		 "app;[libc.so.6]"},
		{"a-very-long-command-name 7 1.0: 1 cpu-clock: ffffffff8103ce3b "
		"native_safe_halt ([kernel.kallsyms])",
		 "a-very-long-command-name;native_safe_halt"},
		{"app 1 1.0: 7f00 outer->inner+0x3 (/bin/app)", "app;outer;inner"},
		{"app 1 1.0:   5025125   7f00 parse (/bin/app)", "app;parse"},
		{"app 1 1.0: 7f00 sym_without_dso", "app;sym_without_dso"},
		{"app 1 1.0: 7f00 (/bin/app) (/bin/app)", "app"},
	};
	char text[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), "%s\n", cases[i].line);
		expect_stack(text, cases[i].want);
		/* The last line needs no newline, if it ends in its "(dso)". */
		if (cases[i].line[strlen(cases[i].line) - 1] == ')')
			expect_stack(cases[i].line, cases[i].want);
	}
}

static void test_one_line_and_call_chain_events_mix(void **state)
{
	profile *p = parse_ok("# ========\n"
			      HDR "\t7f00 leaf (/bin/app)\n\t7f01 main (/bin/app)\n\n"
			      "             app   100 [000] 1.000002:  1 cpu-clock:   "
			      "7f00 leaf+0x1 (/bin/app)\n"
			      "app 100 [000] 1.000003: 1 cpu-clock: 7f02 other (/bin/app)\n"
			      "             app   100 [000] 1.000004:  9 cycles:   "
			      "7f00 skipped (/bin/app)\n"
			      "             app   100 [000] 1.000005:  1 "
			      "cpu-clock:   7f00 last (/bin/app)\n"
			      "kworker/0:1 112 [000] 1.000006: 1 cpu-clock:\n\n"
			      HDR "\t7f03 deep (/bin/app)\n\n"
			      "swapper     0 [000] 1.000007:  1 cpu-clock:  0 "
			      "[unknown] ([unknown])\n");
	static const char *const want[] = {"app;main;leaf", "app;leaf",  "app;other",
					   "app;last",      "kworker/0:1", "app;deep",
					   "swapper;[unknown]"};
	buf s = BUF_INIT;

	(void)state;
	assert_int_equal(p->nsamples, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < p->nsamples; i++) {
		stack_str(&s, p, i);
		assert_string_equal(s.ptr, want[i]);
	}
	buf_release(&s);
	profile_free(p);
}

static void test_malformed_one_line_events_are_rejected_with_the_line(void **state)
{
	static const struct {
		const char *text;
		size_t line;
		const char *reason;
	} cases[] = {
		{"app 1 1.0: 1 cpu-clock: 7f00 a (/x)\napp 1 1.1: 1 cpu-clock: 7f00\n", 2,
		 "one-line event has no symbol after the address"},
		{"            burn 24193  7227.119856:    5025125 "
		"cpu-clock:      557ad0a49257   \n",
		 1, "one-line event has no symbol after the address"},
		{"# x\napp 1 [000] 1.0: 1 cpu-clock: 7f00 (/bin/app)\n", 2,
		 "one-line event has no symbol after the address"},
		{"app 1 1.0: 1 cpu-clock: 7f00 a (/x)\n\t7f01 b (/x)\n", 2,
		 "frame line outside an event"},
		{"     app 1 cpu-clock: 7f00 a (/x)\n", 1, "frame line outside an event"},
		{"app 1 1.0: 1 cpu-clock: 7f00 a (/x)\napp 1 1.1: 1 "
		"cpu-clock: 7f00 main+0x4 (/usr/li",
		 2, "input ends in the middle of a frame line"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_error(cases[i].text, strlen(cases[i].text), NULL, PR_EDATA,
			     cases[i].line, cases[i].reason);
}

static void test_last_event_without_blank_line_is_kept(void **state)
{
	(void)state;
	expect_stack(HDR "\t7f00 leaf (/bin/app)\n\t7f01 main (/bin/app)", "app;main;leaf");
	expect_stack(HDR "\t7f00 leaf (/bin/app)\n", "app;leaf");
}

/*
 * An input cut anywhere inside a line after the first (a copy
 * interrupted, a disk full) is refused, never stored with its last stack
 * short of callers: the cuts after a newline, and at a line's end, which
 * lose whole lines only, are the ones a parser cannot tell from a
 * complete print. Inside the indentation is one ("\t   " alone at the
 * end), and so is inside a lambda's name, whose ')' is not a dso's.
 */
static void test_input_cut_inside_a_line_is_rejected(void **state)
{
	static const char text[] = "app 100 [000] 1.000001: 1 cpu-clock: \n"
				   "\t    7f00 leaf+0x1 (/bin/app)\n"
				   "\t    7f01 main::{lambda(int)#1}::operator()+0x4 (/bin/app)\n"
				   "\t    7f02 main (/bin/app)\n\n"
				   "app 100 [000] 1.000002: 1 cpu-clock: \n"
				   "\t    7f00 leaf+0x1 (/bin/app)\n"
				   "\t    7f02 main (/bin/app)\n\n";
	size_t first = (size_t)(strchr(text, '\n') - text) + 1;

	(void)state;
	for (size_t cut = first; cut < sizeof(text) - 1; cut++) {
		pr_error err = PR_ERROR_INIT;
		profile *p = NULL;
		size_t rest = cut;

		while (text[rest] == ' ')
			rest++;
		if (text[cut - 1] == '\n' || text[rest] == '\n')
			continue;
		if (parse_n(&p, text, cut, NULL, &err) == 0)
			fail_msg("input cut at byte %zu was stored", cut);
		assert_null(p);
		assert_int_equal(err.code, PR_EDATA);
	}
}

static void test_header_while_an_event_is_open_ends_it(void **state)
{
	profile *p = parse_ok(HDR "\t7f00 a (/x)\n" HDR "\t7f00 b (/x)\n\n");
	buf s = BUF_INIT;

	(void)state;
	assert_int_equal(p->nsamples, 2);
	stack_str(&s, p, 0);
	assert_string_equal(s.ptr, "app;a");
	stack_str(&s, p, 1);
	assert_string_equal(s.ptr, "app;b");
	buf_release(&s);
	profile_free(p);
}

static void test_comments_crlf_and_stray_whitespace_lines_are_accepted(void **state)
{
	profile *p = parse_ok("# ========\r\n# captured on: today\r\n# ========\r\n#\r\n\r\n"
			      "app 100 [000] 1.000001: 1 cpu-clock: \r\n"
			      "\t7f00 leaf+0x1 (/bin/app)\r\n"
			      "# a comment inside an event\r\n"
			      "   \t\r\n"
			      "\t7f01 main+0x2 (/bin/app)\r\n\r\n\r\n");
	buf s = BUF_INIT;

	(void)state;
	assert_int_equal(p->nsamples, 1);
	stack_str(&s, p, 0);
	assert_string_equal(s.ptr, "app;main;leaf");
	buf_release(&s);
	profile_free(p);
}

static void test_empty_input_is_a_profile_without_samples(void **state)
{
	static const char *const inputs[] = {"", "\n\n", "# ========\n# only a header\n#\n"};

	(void)state;
	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		profile *p = parse_ok(inputs[i]);
		assert_int_equal(p->nsamples, 0);
		assert_int_equal(p->nvalue_types, 1);
		profile_free(p);
	}
}

static void test_malformed_lines_are_rejected_with_the_line(void **state)
{
	static const struct {
		const char *text;
		size_t line;
		const char *reason;
	} cases[] = {
		{"\t7f00 leaf (/bin/app)\n\n", 1, "frame line outside an event"},
		{"# header\n\n    7f00 leaf (/bin/app)\n", 3, "frame line outside an event"},
		{HDR "\t7f00 a (/x)\n\n\t7f01 b (/x)\n", 4, "frame line outside an event"},
		{HDR "\t7f00 a (/x)\n\nswapper\n", 4, "not an event header"},
		{HDR "\t7f00 a (/x)\nmain;serve 12\n", 3, "not an event header"},
		{HDR "\tleaf (/bin/app)\n", 2, "does not start with an address"},
		{HDR "\t7f00x leaf (/bin/app)\n", 2, "does not start with an address"},
		{HDR "\t7f00 a (/x)\n\t7f01 main+0x4 (/usr/li", 3,
		 "input ends in the middle of a frame line"},
		{"{\"nodes\": []}\n", 1, "not an event header"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_error(cases[i].text, strlen(cases[i].text), NULL, PR_EDATA,
			     cases[i].line, cases[i].reason);
}

static void test_binary_input_is_rejected(void **state)
{
	static const char text[] = HDR "\t7f00 a\0 (/x)\n\n";
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;

	(void)state;
	expect_error(text, sizeof(text) - 1, NULL, PR_EDATA, 2, "NUL byte at offset");
	assert_int_equal(parse_n(&p, "PERFILE2\x68\0\0\0", 12, NULL, &err), PR_EDATA);
	assert_null(p);
	assert_non_null(strstr(err.msg, "'" NAME "'"));
	assert_non_null(strstr(err.msg, "perf.data file"));
}

static void test_stack_deeper_than_the_limit_is_rejected(void **state)
{
	profile_limits lim;
	profile *p = NULL;
	pr_error err = PR_ERROR_INIT;
	/* Three frames and the command: four, the limit. */
	const char *ok = HDR "\t1 a (/x)\n\t2 b (/x)\n\t3 c (/x)\n\n";
	const char *deep = HDR "\t1 a (/x)\n\t2 b (/x)\n\t3 c (/x)\n\n"
			   HDR "\t1 a (/x)\n\t2 b (/x)\n\t3 c (/x)\n\t4 d (/x)\n\n";

	(void)state;
	profile_limits_default(&lim);
	lim.max_depth = 4;
	assert_int_equal(parse_n(&p, ok, strlen(ok), &lim, &err), 0);
	profile_free(p);
	expect_error(deep, strlen(deep), &lim, PR_ELIMIT, 10, "depth limit of 4");
	/* An inline chain counts every piece. */
	expect_error(HDR "\t1 a->b->c->d->e (/x)\n", strlen(HDR) + 22, &lim, PR_ELIMIT, 2,
		     "depth limit of 4");
}

static void test_hostile_deep_event_is_rejected_by_the_depth_limit(void **state)
{
	size_t n = 100000, len = strlen(HDR);
	char *text = malloc(len + n * 12 + 2);

	(void)state;
	assert_non_null(text);
	memcpy(text, HDR, len);
	for (size_t i = 0; i < n; i++) {
		memcpy(text + len, "\t1 fn (/x)\n", 11);
		len += 11;
	}
	text[len++] = '\n';
	expect_error(text, len, NULL, PR_ELIMIT, 4097,
		     "more than 4096 frames exceeds the depth limit of 4096");
	free(text);
}

static void test_too_many_samples_are_rejected(void **state)
{
	profile_limits lim;
	const char *text = HDR "\t1 a (/x)\n\n" HDR "\t1 a (/x)\n\n" HDR "\t1 a (/x)\n\n";

	(void)state;
	profile_limits_default(&lim);
	lim.max_samples = 2;
	expect_error(text, strlen(text), &lim, PR_ELIMIT, 7, "sample limit");
}

static void test_overlong_names_are_rejected(void **state)
{
	profile_limits lim;
	const char *frame = HDR "\t1 short (/x)\n\t2 abcdefghi+0x10 (/x)\n\n";
	const char *comm = HDR "\t1 a (/x)\n\nlongcommand 1 1.0: cpu-clock:\n\n";

	(void)state;
	profile_limits_default(&lim);
	lim.max_string_len = 8;
	expect_error(frame, strlen(frame), &lim, PR_ELIMIT, 3,
		     "a name of 9 bytes exceeds the limit of 8 bytes");
	expect_error(comm, strlen(comm), &lim, PR_ELIMIT, 4,
		     "a name of 11 bytes exceeds the limit of 8 bytes");
}

static void test_sniff_finds_perf_script_and_nothing_else(void **state)
{
	static const struct {
		const char *text;
		bool want;
	} cases[] = {
		{HDR "\t    7f00 leaf+0x1 (/bin/app)\n\n", true},
		{"# ========\n# captured on: x\n#\n\n" HDR "\t7f00 leaf (/bin/app)\n", true},
		{"render pool 11455   648.610512:   10101010 cpu-clock: \r\n"
		 "\t            1254 leaf_hash+0x24 (/tmp/pf/burn)\r\n",
		 true},
		{"", false},
		{HDR, false},
		{HDR "\n", false},
		{HDR "\tleaf (/bin/app)\n", false},
		{HDR "not a frame\n", false},
		{"\t7f00 leaf (/bin/app)\n", false},
		{"main;serve;parse 7\nmain;serve 2\n", false},
		{"{\"nodes\":[],\"samples\":[],\"timeDeltas\":[]}", false},
		{"\x0a\x04\x08\x01\x10\x02", false},
		{"            burn 24193  7227.119856:    5025125 cpu-clock:      557ad0a49257 "
		"leaf_hash+0x27 (/tmp/pf/burn)\n",
		 true},
		{"app 1 1.0: 1 cpu-clock: 7f00 a (/x)\n", true},
		{"app 1 1.0: 1 cpu-clock: 7f00\n", false},
		{"     app 1 1.0: 1 cpu-clock:\n\t7f00 a (/x)\n", false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (perf_sniff((const uint8_t *)cases[i].text, strlen(cases[i].text)) !=
		    cases[i].want)
			fail_msg("case %zu: sniff should be %d", i, cases[i].want);
	assert_false(perf_sniff(NULL, 0));
}

static void test_sniff_accepts_the_real_captures(void **state)
{
	static const char *const files[] = {"perf/burn-dwarf.perf", "perf/burn-fp.perf",
					    "perf/variants.perf", "perf/burn-nocg.perf"};

	(void)state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		buf text = BUF_INIT;
		testdata_read(&text, files[i]);
		assert_true(perf_sniff((const uint8_t *)text.ptr, text.len));
		assert_false(folded_sniff((const uint8_t *)text.ptr, text.len));
		buf_release(&text);
	}
}

/* Parse a file of tests/data; the caller frees the profile. */
static profile *parse_file(const char *rel)
{
	buf text = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;

	testdata_read(&text, rel);
	if (perf_parse(&p, (const uint8_t *)text.ptr, text.len, rel, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(perf_sniff((const uint8_t *)text.ptr, text.len));
	buf_release(&text);
	return p;
}

/*
 * A tracepoint's fields follow its event on the header line, so the
 * event is not the line's last field: it is read all the same, and the
 * recording is known for one of context switches, not of CPU time.
 */
static void test_a_tracepoint_recording_names_its_event(void **state)
{
	static const char text[] =
		"offcpu  2990 [001] 48246.471157: sched:sched_switch: prev_comm=offcpu "
		"prev_pid=2990 prev_prio=120 prev_state=R ==> next_comm=x next_pid=1 "
		"next_prio=120\n"
		"\tffffffff82249848 __schedule+0x628 ([kernel.kallsyms])\n"
		"\t55d0c1a01234 wait_for_bank+0x14 (/tmp/offcpu)\n\n"
		"offcpu  2990 [001] 48246.472157: 1 sched:sched_switch: prev_comm=offcpu\n"
		"\tffffffff82249848 __schedule+0x628 ([kernel.kallsyms])\n"
		"\t55d0c1a01234 wait_for_bank+0x14 (/tmp/offcpu)\n\n";
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;

	(void)state;
	if (perf_parse(&p, (const uint8_t *)text, sizeof(text) - 1, "off.perf", NULL, &err) < 0)
		fail_msg("%s", err.msg);
	assert_string_equal(p->event, "sched:sched_switch");
	assert_false(perf_event_is_cpu_time(p->event));
	profile_free(p);
}

/*
 * A tracepoint printed first, then a PMU's cycles: the cycles are kept,
 * as a clock after page faults is, though the name is not one profreg
 * knows; the recording was refused for its tracepoint.
 */
static void test_cycles_after_a_tracepoint_are_kept(void **state)
{
	static const char text[] =
		"java 1234 [000] 100.000001: sched:sched_switch: prev_comm=java prev_pid=1234\n"
		"\tffffffff81000000 __schedule+0x1 ([kernel.kallsyms])\n\n"
		"java 1234 [000] 100.000002:    1000000 cpu_core/cycles/: \n"
		"\t7f0000002000 work+0x1 (/bin/app)\n"
		"\t7f0000001000 main+0x1 (/bin/app)\n\n"
		"java 1234 [000] 100.000003:    1000000 cpu_core/cycles/: \n"
		"\t7f0000002000 work+0x1 (/bin/app)\n"
		"\t7f0000001000 main+0x1 (/bin/app)\n\n";
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;

	(void)state;
	if (perf_parse(&p, (const uint8_t *)text, sizeof(text) - 1, "mixed.perf", NULL, &err) < 0)
		fail_msg("%s", err.msg);
	assert_string_equal(p->event, "cpu_core/cycles/");
	assert_int_equal(p->other_events, 1);
	assert_true(perf_event_is_cpu_time(p->event));
	profile_free(p);
}

/* Which events count CPU time, and which surely do not. */
static void test_only_clocks_and_cycles_count_cpu_time(void **state)
{
	static const char *const yes[] = {"cpu-clock",    "cpu-clock:ppp",   "task-clock",
					  "cycles",       "cycles:u",        "cpu-cycles:uk",
					  "instructions", "cpu_core/cycles/"};
	static const char *const no[] = {"sched:sched_switch",
					 "page-faults",
					 "faults",
					 "context-switches",
					 "cs",
					 "cache-misses",
					 "L1-dcache-load-misses",
					 "LLC-loads",
					 "dTLB-store-misses",
					 "branch-misses",
					 "probe_app:charge",
					 "syscalls:sys_enter_read"};

	(void)state;
	for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++)
		if (!perf_event_is_cpu_time(yes[i]))
			fail_msg("'%s' counts CPU time", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(*no); i++)
		if (perf_event_is_cpu_time(no[i]))
			fail_msg("'%s' counts no CPU time", no[i]);
}

/*
 * p and ref hold the same stacks and the same period for each sample
 * (each profile's second value). Frees both.
 */
static void assert_same_samples(profile *p, profile *ref)
{
	char *want = folded_text(ref), *got = folded_text(p);

	assert_string_equal(got, want);
	assert_int_equal(p->nvalue_types, 2);
	assert_int_equal(p->nsamples, ref->nsamples);
	for (size_t i = 0; i < p->nsamples; i++)
		assert_int_equal(p->values[2 * i + 1], ref->values[2 * i + 1]);
	free(want);
	free(got);
	profile_free(p);
	profile_free(ref);
}

/*
 * The same recording printed without the time (perf script -F
 * comm,tid,period,event,ip,sym,dso): its headers end "tid period event:",
 * and its periods and event count as in the plain print. They were not
 * read, and the events were counted alone.
 */
static void test_periods_of_a_print_without_time_are_read(void **state)
{
	profile *ref = parse_file("perf/tpl-pagefaults.perf");
	profile *p = parse_file("perf/tpl-pagefaults-notime.perf");

	(void)state;
	assert_int_equal(ref->nvalue_types, 2);
	assert_string_equal(p->value_types[1].type, "cpu");
	assert_string_equal(p->event, ref->event);
	assert_same_samples(p, ref);
}

/*
 * A real recording of two events printed with and without the time: in
 * both the CPU-time events (cpu-clock) are kept though page faults come
 * first, the others are counted, and the two give the same stacks and
 * periods. Without the time, the other events' periods were added in.
 */
static void test_a_print_without_time_keeps_one_event_type(void **state)
{
	profile *ref = parse_file("perf/sort-two.perf");
	profile *p = parse_file("perf/sort-two-notime.perf");

	(void)state;
	/* Page faults come first; cpu-clock, a CPU time, is the event kept. */
	assert_string_equal(ref->event, "cpu-clock");
	assert_string_equal(p->event, "cpu-clock");
	assert_int_equal(ref->nsamples, 7);
	assert_int_equal(ref->other_events, 18);
	assert_int_equal(p->other_events, 18);
	assert_same_samples(p, ref);
}

/*
 * The same perf.data printed by perf script with other fields or extra
 * lines gives the same profile as the plain print: every stack and count.
 */
static void expect_same_profile(const char *ref_rel, const char *const *variants,
				size_t nvariants, size_t want_events)
{
	profile *ref = parse_file(ref_rel);
	char *want = folded_text(ref);

	assert_int_equal(ref->nsamples, want_events);
	for (size_t i = 0; i < nvariants; i++) {
		profile *p = parse_file(variants[i]);
		char *got = folded_text(p);

		if (p->nsamples != ref->nsamples || strcmp(got, want) != 0)
			fail_msg("%s: %zu events folded differently from %s (%zu events)",
				 variants[i], p->nsamples, ref_rel, ref->nsamples);
		free(got);
		profile_free(p);
	}
	free(want);
	profile_free(ref);
}

static void test_real_prints_with_srcline_sideband_or_no_event_give_the_same_profile(
	void **state)
{
	static const char *const chains[] = {"perf/burn-fp49-noevent.perf",
					     "perf/burn-fp49-srcline.perf",
					     "perf/burn-fp49-sideband.perf"};
	static const char *const nocg[] = {"perf/burn-nocg49-noevent.perf",
					   "perf/burn-nocg49-srcline.perf",
					   "perf/burn-nocg49-sideband.perf"};

	(void)state;
	expect_same_profile("perf/burn-fp49.perf", chains, 3, 78);
	expect_same_profile("perf/burn-nocg49.perf", nocg, 3, 77);
}

/*
 * perf script -F +srccode prints the sampled source line after an event,
 * unindented ("|10   unsigned long compute_tax(long n) ..."): it was read
 * as a header and refused ("the event has no period"). The same
 * recording printed with and without it gives the same profile.
 */
static void test_a_real_print_with_source_code_lines_gives_the_same_profile(void **state)
{
	static const char *const srccode[] = {"perf/burnc-srccode.perf"};

	(void)state;
	expect_same_profile("perf/burnc-plain.perf", srccode, 1, 167);
}

/*
 * A print of perf/leaf.c's recording of three events (8 page faults
 * first, then 52 each of cpu-clock and task-clock) keeps cpu-clock and
 * weighs it in nanoseconds: leaf has perf report's 94.23% (49 of 52).
 * Compared with the default print (ref, not freed): the same stacks and
 * periods. Frees p.
 */
static void expect_three_event_print(profile *p, profile *ref)
{
	pr_error err = PR_ERROR_INIT;
	profile_summary s;
	const profile_summary_row *r;
	char *want = folded_text(ref), *got = folded_text(p);

	assert_string_equal(p->event, "cpu-clock");
	assert_int_equal(p->nsamples, 52);
	assert_int_equal(p->other_events, 60);
	assert_int_equal(p->nvalue_types, 2);
	assert_string_equal(profile_pick_primary(p, "cpu"), "cpu");
	assert_string_equal(p->value_types[p->primary].unit, "nanoseconds");
	assert_int_equal(profile_summarize(&s, p, p->primary, &err), 0);
	assert_non_null(r = find_row(p, &s, "leaf"));
	assert_int_equal(r->self, 49 * 1001001);
	assert_int_equal(s.total, 52 * 1001001);
	profile_summary_release(&s);
	assert_string_equal(got, want);
	for (size_t i = 0; i < p->nsamples; i++)
		assert_int_equal(p->values[2 * i + 1], ref->values[2 * i + 1]);
	free(want);
	free(got);
	profile_free(p);
}

/*
 * Prints without the pid (-F comm,time,period,...) or with -F +misc (a
 * flag, "K" or "U", between the pid and the time) are headers like any
 * other. The pid was required before the time: "burn 49532.637227:" was
 * taken for the command name, a root of its own for every sample, and
 * the misc flag lost every period.
 */
static void test_prints_without_pid_or_with_misc_read_the_header(void **state)
{
	profile *ref = parse_file("perf/burn-three.perf");

	(void)state;
	expect_three_event_print(parse_file("perf/burn-three.perf"), ref);
	expect_three_event_print(parse_file("perf/burn-three-nopid.perf"), ref);
	expect_three_event_print(parse_file("perf/burn-three-misc.perf"), ref);
	profile_free(ref);
}

/*
 * Printed with neither pid nor time (-F comm,period,event,...), a header
 * is "burn    1001001 cpu-clock:": the period was read as the pid, then
 * neither period nor event was found, and the 112 events of all three
 * types were added up as samples. The lone number is the period when it
 * stands in perf's period column, else the pid, as the script reads it.
 */
static void test_a_print_without_pid_or_time_keeps_one_event_type(void **state)
{
	profile *ref = parse_file("perf/burn-three.perf");
	profile *p;

	(void)state;
	expect_three_event_print(parse_file("perf/burn-three-nopid-notime.perf"), ref);
	profile_free(ref);

	p = parse_ok("app    1001001 cpu-clock:\n\t7f00 a (/x)\n\n"
		     "app          7 page-faults:\n\t7f00 b (/x)\n\n"
		     "app 1234567890 cpu-clock:\n\t7f00 c (/x)\n\n");
	assert_int_equal(p->nsamples, 2);
	assert_int_equal(p->other_events, 1);
	assert_int_equal(p->nvalue_types, 2);
	assert_int_equal(p->values[1], 1001001);
	assert_int_equal(p->values[3], 1234567890);
	profile_free(p);
	/* A pid, with or without the cpu or misc flags after it: no period. */
	p = parse_ok("app  2482 cpu-clock:\n\t7f00 a (/x)\n\n"
		     "app  2482 [001] U      page-faults:\n\t7f00 b (/x)\n\n"
		     "app 2482 cpu-clock:\n\t7f00 c (/x)\n\n");
	assert_int_equal(p->nsamples, 2);
	assert_int_equal(p->other_events, 1);
	assert_int_equal(p->nvalue_types, 1);
	profile_free(p);
	p = parse_ok("app  2482 [001] U         1001001 cpu-clock:\n\t7f00 a (/x)\n\n");
	assert_int_equal(p->nvalue_types, 2);
	assert_int_equal(p->values[1], 1001001);
	profile_free(p);
}

/*
 * A print cut inside its last header line, before the event, was stored:
 * "burn  2482 49430.078328:    10010" became a sample of the command
 * alone with a period cut short. Every header before it had an event, so
 * that one has been cut: each cut from the first field after the command
 * to the event is refused, naming the line, as a cut frame line is.
 */
static void test_input_cut_inside_its_last_header_is_rejected(void **state)
{
	static const char *const files[] = {
		"perf/burn-three.perf", "perf/burn-three-nopid-notime.perf",
		"perf/burn-fp49.perf", "perf/tpl-pagefaults-notime.perf"};
	static const char modifier[] = "app 1 1.0: 1 cpu-clock:ppp:\n\t7f00 a (/x)\n\n"
				       "app 1 1.1: 1 cpu-clock:";

	(void)state;
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		buf text = BUF_INIT;
		size_t start, end, first, ev, line = 1;

		testdata_read(&text, files[f]);
		/* The last header: the last line that starts with neither space nor tab. */
		for (start = text.len - 1; start > 0; start--)
			if (text.ptr[start - 1] == '\n' && text.ptr[start] != '\n' &&
			    text.ptr[start] != '\t' && text.ptr[start] != ' ')
				break;
		end = (size_t)((char *)memchr(text.ptr + start, '\n', text.len - start) - text.ptr);
		for (size_t i = 0; i < start; i++)
			line += text.ptr[i] == '\n';
		/* The first field after the command, and the event (the last word). */
		first = start + strcspn(text.ptr + start, " ");
		first += strspn(text.ptr + first, " ");
		first += strcspn(text.ptr + first, " ") + 1;
		for (ev = end; text.ptr[ev - 1] == ' '; ev--)
			;
		while (text.ptr[ev - 1] != ' ')
			ev--;
		/* From the event back: the cuts after a whole period were stored. */
		for (size_t k = ev; k-- > first;)
			expect_error(text.ptr, k, NULL, PR_EDATA, line,
				     "input ends in the middle of a header line");
		buf_release(&text);
	}
	/* Cut inside the event, before its modifier. */
	expect_error(modifier, sizeof(modifier) - 1, NULL, PR_EDATA, 4,
		     "input ends in the middle of a header line");
}

/* Parse text and compare its folded form with want. */
static void expect_folded(const char *text, const char *want)
{
	profile *p = parse_ok(text);
	char *got = folded_text(p);

	assert_string_equal(got, want);
	free(got);
	profile_free(p);
}

/*
 * Parse text, compare its folded form with want, and check the periods
 * add up to `periods` (-1: the print has none).
 */
static void expect_folded_periods(const char *text, const char *want, int64_t periods)
{
	profile *p = parse_ok(text);
	char *got = folded_text(p);
	int64_t sum = 0;

	assert_string_equal(got, want);
	assert_int_equal(p->nvalue_types, periods < 0 ? 1 : 2);
	for (size_t i = 0; periods >= 0 && i < p->nsamples; i++)
		sum += p->values[2 * i + 1];
	assert_int_equal(sum, periods < 0 ? 0 : periods);
	free(got);
	profile_free(p);
}

#define LEAF "\t7f00 leaf (/x)\n\n"

/*
 * perf script -F +tod prints the time of day before the timestamp. It
 * was taken into the command name, a function of its own for every
 * sample ("burn____8090_[001]_2024-03-15_10:20:30.123456"): it is a
 * field, as are --ns's nine digits and the "disabled" of a recording
 * without clock data, with or without the pid and cpu.
 */
static void test_time_of_day_is_a_header_field(void **state)
{
	static const char text[] =
		"burn    8090 [001] 2024-03-15 10:20:30.123456  49532.689271:    1001001  "
		"cpu-clock: \n" LEAF
		"burn    8090 [001] 2024-03-15 10:20:30.124456  49532.690271:    1001001  "
		"cpu-clock: \n" LEAF
		"burn 2024-03-15 10:20:30.125456789 49532.691271123: 1001001 cpu-clock:\n" LEAF
		"Web Content [002] 2024-03-15 10:20:30.126456 49532.692271: 1001001 "
		"cpu-clock:\n" LEAF
		"render pool 2  7515 [001] disabled 49532.693271: 1001001 cpu-clock:\n" LEAF;

	(void)state;
	expect_folded_periods(text, "Web_Content;leaf 1\nburn;leaf 3\nrender_pool_2;leaf 1\n",
			      5 * 1001001);
}

/*
 * perf script -F +misc joins the flags and pads them to six columns:
 * "KGg" for a guest's user space, "KUH" for the hypervisor. Only one
 * letter and a space was read, so the flags, pid and cpu went into the
 * command name ("qemu-kvm__8090_[001]_KGg").
 */
static void test_joined_misc_flags_are_a_header_field(void **state)
{
	static const char text[] =
		"qemu-kvm  8090 [001] KGg   49532.689272:    1001001  cycles: \n" LEAF
		"qemu-kvm  8090 [001] KUH   49532.689273:    1001001  cycles: \n" LEAF
		"qemu-kvm [003] KGg   49532.689274:    1001001  cycles: \n" LEAF
		"kworker/0:1   112 [000] K     49532.689275:    1001001  cycles: \n" LEAF
		"Web Content  9001/9002 [000] Gg    49532.689276:    1001001  cycles: \n" LEAF;

	(void)state;
	expect_folded_periods(text, "Web_Content;leaf 1\nkworker/0:1;leaf 1\nqemu-kvm;leaf 3\n",
			      5 * 1001001);
}

/*
 * Printed without the time and the pid but with the cpu or the flags
 * (-F comm,cpu,period,event,...), a header was read by the script's
 * rule, the command up to the first number: "burn_[000]" and
 * "burn_K", a function per cpu or flag, and the period, read as the
 * pid, was lost. The cpu and flags are fields there too.
 */
static void test_cpu_and_flags_without_pid_or_time_are_header_fields(void **state)
{
	static const char text[] =
		"burn [000]    1001001 cpu-clock: \n" LEAF
		"burn [001]    1001001 cpu-clock: \n" LEAF
		"burn K         1001001 cpu-clock: \n" LEAF
		"burn U         1001001 cpu-clock: \n" LEAF
		"Web Content [001] KUH            7 page-faults: \n" LEAF
		"Web Content [001] KUH      1001001 cpu-clock: \n" LEAF
		"kworker/0:1 2024-03-15 10:20:30.123456    1001001 cpu-clock: \n" LEAF;
	profile *p;

	(void)state;
	expect_folded_periods(text, "Web_Content;leaf 1\nburn;leaf 4\nkworker/0:1;leaf 1\n",
			      6 * 1001001);
	p = parse_ok(text);
	assert_string_equal(p->event, "cpu-clock");
	assert_int_equal(p->other_events, 1);
	profile_free(p);
	/* Without the period. */
	expect_folded_periods("burn [000] cpu-clock:\n" LEAF "burn [001] K cpu-clock:\n" LEAF,
			      "burn;leaf 2\n", -1);
}

/*
 * Fields perf does not print (or this parser does not know) between the
 * command and the time were taken into the command name when no pid
 * came after them. A pid before them ends the command, as in
 * stackcollapse-perf.pl, and the period after the time is still read;
 * without a pid, the line is refused rather than folded into a function
 * of its own.
 */
static void test_unknown_fields_never_go_into_the_command(void **state)
{
	static const char *const refused[] = {
		"burn [001] weird 49532.689271: 1001001 cpu-clock:\n" LEAF,
		"burn K weird 49532.689271: 1001001 cpu-clock:\n" LEAF,
		"burn [001] weird    1001001 cpu-clock:\n" LEAF,
		"burn 2024-03-15 weird 49532.689271: 1001001 cpu-clock:\n" LEAF,
	};
	static const char pid[] =
		"burn    8090 [001] weird  49532.689271:    1001001  cpu-clock: \n" LEAF
		"burn    8090 [002] odd    49532.690271:    1001001  cpu-clock: \n" LEAF
		"burn    8090 [001] 10:20:30 49532.691271:  1001001  cpu-clock: \n" LEAF;

	(void)state;
	expect_folded_periods(pid, "burn;leaf 3\n", 3 * 1001001);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		expect_error(refused[i], strlen(refused[i]), NULL, PR_EDATA, 1,
			     "not an event header");
}

/*
 * The last line, without its newline, of a print keeping "cpu-clock:ppp"
 * has the event "cpu-clock": the start of the one kept, cut, unless the
 * space perf prints after an event's ':' is there or an earlier header
 * had "cpu-clock", which make it an event of its own, left out.
 */
static void test_a_last_header_whose_event_is_whole_is_kept(void **state)
{
	static const char *const kept[] = {
		"ab 12 1.0: 5 cpu-clock:ppp: \n" LEAF "ab 12 1.1: 5 cpu-clock: ",
		"ab 12 1.0: 5 cpu-clock:ppp:\n" LEAF "ab 12 1.1: 5 cpu-clock:\n" LEAF
		"ab 12 1.2: 5 cpu-clock:",
		"ab 12 1.0: 5 cpu-clock:u:ppp:\n" LEAF "ab 12 1.1: 5 cpu-clock:u:\n" LEAF
		"ab 12 1.2: 5 cpu-clock:u:",
	};
	static const char cut[] = "ab 12 1.0: 5 cpu-clock:u:ppp:\n" LEAF
				  "ab 12 1.1: 5 cpu-clock:\n" LEAF "ab 12 1.2: 5 cpu-clock:u:";

	(void)state;
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		profile *p = parse_ok(kept[i]);

		assert_int_equal(p->nsamples, 1);
		assert_int_equal(p->other_events, i ? 2 : 1);
		profile_free(p);
	}
	/* "cpu-clock" seen is not "cpu-clock:u": that one is still cut. */
	expect_error(cut, sizeof(cut) - 1, NULL, PR_EDATA, 7,
		     "input ends in the middle of a header line");
}

static void test_side_band_records_are_not_samples(void **state)
{
	static const char text[] =
		"swapper     0/0     [000]     0.000000: PERF_RECORD_MMAP -1/0: [0xff(0x12) @ "
		"0xff]: x [kernel.kallsyms]_text\n"
		"burn 17 PERF_RECORD_MMAP2 17/17: [0x55(0x1000) @ 0x1000 fe:00 1 0]: r-xp /b\n"
		"swapper PERF_RECORD_MMAP -1/0: [0xff(0x12) @ 0xff]: x [kernel.kallsyms]_text\n"
		"app 100 [000] 1.000001: 1 cpu-clock:\n"
		"\t    4a1b2c leaf+0x1 (/bin/x)\n"
		"\n"
		"app 100 [000] 1.000002: PERF_RECORD_EXIT(100:100):(1:1)\n"
		"PERF_RECORD_x 101 [000] 1.000003: 1 cpu-clock:\n"
		"\t    4a1b2c leaf+0x1 (/bin/x)\n"
		"\n";
	(void)state;
	/* A command may be called PERF_RECORD_x: its samples count. */
	expect_folded(text, "PERF_RECORD_x;leaf 1\napp;leaf 1\n");
}

/*
 * --show-namespace-events prints each namespace record on three lines,
 * two of them indented like frames, and --show-round-events prints
 * "PERF_RECORD_FINISHED_ROUND" with no fields before it: a real print
 * with both, which once was no perf script at all, gives the profile of
 * the same print without its records.
 */
static void test_namespace_and_round_records_are_not_samples(void **state)
{
	static const char *const records[] = {"perf/burn-ns49-records.perf"};
	static const char text[] =
		"PERF_RECORD_FINISHED_ROUND\n"
		"burn 17/17 [000] 0.000000: PERF_RECORD_NAMESPACES 17/17 - nr_namespaces: 7\n"
		"\t\t[0/net: 4/0xeffffff9, 1/uts: 4/0xeffffffe, 2/ipc: 4/0xefffffff, \n"
		"\t\t 4/user: 4/0xeffffffd, 5/mnt: 4/0xeffffff8, 6/cgroup: 4/0xeffffffb]\n"
		"app 100 [000] 1.000001: 1 cpu-clock:\n"
		"\t    4a1b2c leaf+0x1 (/bin/x)\n"
		"\n"
		"PERF_RECORD_FINISHED_ROUND\n"
		"app 100 [000] 1.000002: 1 cpu-clock:\n"
		"\t    4a1b2c leaf+0x1 (/bin/x)\n"
		"\n";
	static const char stray[] = "app 1 [000] 1.000001: 1 cpu-clock:\n\n"
				    "\t\t[0/net: 4/0xeffffff9]\n";

	(void)state;
	assert_true(perf_sniff((const uint8_t *)text, strlen(text)));
	expect_folded(text, "app;leaf 2\n");
	expect_same_profile("perf/burn-ns49.perf", records, 1, 61);
	/* Outside a record, an indented line that is no frame is still an error. */
	expect_error(stray, strlen(stray), NULL, PR_EDATA, 3, "outside an event");
}

/*
 * perf script -a --show-switch-events prints the switches of a CPU that
 * had no task as pid -1 and, when the next pid is short, pads it with
 * spaces to the end of the line (both lines are from a real print): the
 * line once read as a header of that whole text and counted a sample.
 */
static void test_switch_records_of_no_task_are_not_samples(void **state)
{
	static const char text[] =
		"app 100 [000] 1.000001: 1 cpu-clock:\n"
		"\t    4a1b2c leaf+0x1 (/bin/x)\n"
		"\n"
		":-1    -1 [001] 68826.061699: PERF_RECORD_SWITCH_CPU_WIDE OUT"
		"          next pid/tid:     0/0    \n"
		":-1    -1 [000] 68826.061866: PERF_RECORD_SWITCH_CPU_WIDE OUT"
		"          next pid/tid: 24322/24322\n";

	(void)state;
	expect_folded(text, "app;leaf 1\n");
}

/*
 * A system-wide recording printed with --show-mmap-events opens with
 * hundreds of KiB of records before its first sample: more than the
 * sniffer reads, which must take records alone for perf script.
 */
static void test_sniff_accepts_records_that_fill_its_window(void **state)
{
	static const char rec[] =
		"postgres     0 [000]     0.000000: PERF_RECORD_MMAP2 1569/1569: "
		"[0x558158a7a000(0x52a000) @ 0xcd000 fe:00 322894 0]: r-xp "
		"/usr/lib/postgresql/15/bin/postgres\n";
	static const char sample[] =
		"app 100 [000] 1.000001: 1 cpu-clock:\n"
		"\t    4a1b2c leaf+0x1 (/bin/x)\n";
	buf text = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;

	(void)state;
	while (text.len < 200000)
		assert_int_equal(buf_put(&text, rec, strlen(rec)), 0);
	assert_int_equal(buf_put(&text, sample, strlen(sample)), 0);
	assert_true(perf_sniff((const uint8_t *)text.ptr, text.len));
	assert_int_equal(format_parse(&p, (const uint8_t *)text.ptr, text.len,
				      PROFILE_FMT_AUTO, NAME, NULL, &err), 0);
	assert_int_equal(p->format, PROFILE_FMT_PERF);
	assert_int_equal(p->nsamples, 1);
	profile_free(p);
	/* Records, then a line that is no perf script, are not perf script. */
	buf_reset(&text);
	while (text.len < 1000)
		assert_int_equal(buf_put(&text, rec, strlen(rec)), 0);
	assert_int_equal(buf_puts(&text, "a;b 1\n"), 0);
	assert_false(perf_sniff((const uint8_t *)text.ptr, text.len));
	buf_release(&text);
}

/*
 * A recording of two events (perf record -e cpu-clock,task-clock) keeps
 * the first event's samples, as stackcollapse-perf.pl does, and counts
 * the others so that ingest can say that half the print was left out
 * (the script warns "Filtering for events of type: ..."; they were once
 * dropped without a word).
 */
static void test_events_of_other_types_are_counted_as_left_out(void **state)
{
	static const char *const two[] = {"perf/burn-two49.perf"};
	static const char text[] =
		"app 100 [000] 1.000001: 1 cycles:u:\n"
		"\t    4a1b2c leaf+0x1 (/bin/x)\n"
		"\n"
		"app 100 [000] 1.000002: 1 instructions:u:\n"
		"\t    4a1b2c leaf+0x1 (/bin/x)\n"
		"\n"
		"app 100 [000] 1.000003: 1 instructions:u:  4a1b2c leaf+0x1 (/bin/x)\n";
	profile *p;

	(void)state;
	expect_same_profile("perf/burn-two49-cpu.perf", two, 1, 67);
	p = parse_file("perf/burn-two49.perf");
	assert_string_equal(p->event, "cpu-clock");
	assert_int_equal(p->other_events, 67);
	profile_free(p);
	p = parse_file("perf/burn-two49-cpu.perf");
	assert_int_equal(p->other_events, 0);
	profile_free(p);

	p = parse_ok(text);
	assert_int_equal(p->nsamples, 1);
	assert_string_equal(p->event, "cycles:u");
	assert_int_equal(p->other_events, 2);
	profile_free(p);
	p = parse_ok("app 100 1.000001:\n\t    4a1b2c leaf+0x1 (/bin/x)\n");
	assert_string_equal(p->event, "");
	assert_int_equal(p->other_events, 0);
	profile_free(p);
}

/*
 * A real print of perf record -e cpu-clock,page-faults opens with a page
 * fault of the loader: keeping the first event seen made the cpu capture
 * one of 9 page faults, and left the 57 cpu-clock samples out. The clock
 * is kept: leaf_hash has perf report's 96.49% of cpu-clock (54 of 57).
 */
static void test_cpu_time_event_is_kept_over_an_earlier_other_event(void **state)
{
	profile *p = parse_file("perf/burn-cpu-pf49.perf");
	pr_error err = PR_ERROR_INIT;
	profile_summary s;
	const profile_summary_row *r;
	double share;

	(void)state;
	assert_string_equal(p->event, "cpu-clock");
	assert_int_equal(p->nsamples, 57);
	assert_int_equal(p->other_events, 9);
	assert_string_equal(profile_pick_primary(p, "cpu"), "cpu");
	assert_string_equal(p->value_types[p->primary].unit, "nanoseconds");
	assert_int_equal(profile_summarize(&s, p, p->primary, &err), 0);
	assert_non_null(r = find_row(p, &s, "leaf_hash"));
	share = 100.0 * (double)r->self / (double)s.total;
	assert_true(share > 96.48 && share < 96.50);
	profile_summary_release(&s);
	profile_free(p);
}

static void test_source_lines_count_only_right_after_a_frame(void **state)
{
	static const char ok[] =
		"app 100 [000] 1.000001: 1 cpu-clock:\n"
		"\t    4a1b2c leaf+0x1 (/bin/x)\n"
		"  leaf.c:17\n"
		"\t    4a1b3c mid (/bin/x)\n"
		"  mid.c:8 (discriminator 3)\n"
		"  inl.h:40 (inlined)\n"
		"\t    4a1b4c root (/bin/x)\n"
		"  ??:0\n"
		"\t    ffff81 irq ([kernel.kallsyms])\n"
		"  [kernel.kallsyms][ffff81]\n"
		"\t    2f440 [unknown] (/usr/bin/bash)\n"
		"  bash[2f440]\n"
		"\n"
		"app 100 [000] 1.000002:    5025125 cpu-clock:      4a1b2c leaf (/bin/x)\n"
		"  leaf.c:17\n";
	static const char first[] = "app 100 [000] 1.000001: 1 cpu-clock:\n"
				    "  leaf.c:17\n"
				    "\t    4a1b2c leaf+0x1 (/bin/x)\n";
	static const char alone[] = "app 100 [000] 1.000001: 1 cpu-clock:\n"
				    "\t    4a1b2c leaf+0x1 (/bin/x)\n"
				    "\n"
				    "  leaf.c:17\n";
	static const char junk[] = "app 100 [000] 1.000001: 1 cpu-clock:\n"
				   "\t    4a1b2c leaf+0x1 (/bin/x)\n"
				   "  leaf.c:x17\n";
	(void)state;
	expect_folded(ok, "app;[bash];irq;root;mid;leaf 1\napp;leaf 1\n");
	/* Before any frame, after a blank line, or not a source line: errors. */
	expect_error(first, sizeof(first) - 1, NULL, PR_EDATA, 2, "does not start with an address");
	expect_error(alone, sizeof(alone) - 1, NULL, PR_EDATA, 4, "outside an event");
	expect_error(junk, sizeof(junk) - 1, NULL, PR_EDATA, 3, "does not start with an address");
}

static void test_a_period_with_no_event_name_ends_the_header(void **state)
{
	(void)state;
	expect_stack("app 100/100 [000] 1.000001:    2004008 \n\t    4a1b2c leaf+0x1 (/bin/x)\n\n",
		     "app;leaf");
	expect_stack("app 100/100 [000] 1.000001:    2004008      4a1b2c leaf (/bin/x)\n",
		     "app;leaf");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_dwarf_capture_folds_like_stackcollapse_perf),
		cmocka_unit_test(test_a_tracepoint_recording_names_its_event),
		cmocka_unit_test(test_only_clocks_and_cycles_count_cpu_time),
		cmocka_unit_test(test_cycles_after_a_tracepoint_are_kept),
		cmocka_unit_test(test_real_pid_tid_cpu_capture_folds_like_stackcollapse_perf),
		cmocka_unit_test(test_documented_variants_fold_like_stackcollapse_perf),
		cmocka_unit_test(
			test_real_capture_without_call_chains_folds_like_stackcollapse_perf),
		cmocka_unit_test(test_real_capture_has_the_expected_shape),
		cmocka_unit_test(test_varying_periods_give_perf_report_shares),
		cmocka_unit_test(test_periods_of_a_print_without_time_are_read),
		cmocka_unit_test(test_a_print_without_time_keeps_one_event_type),
		cmocka_unit_test(test_prints_without_pid_or_with_misc_read_the_header),
		cmocka_unit_test(test_a_print_without_pid_or_time_keeps_one_event_type),
		cmocka_unit_test(test_input_cut_inside_its_last_header_is_rejected),
		cmocka_unit_test(test_time_of_day_is_a_header_field),
		cmocka_unit_test(test_joined_misc_flags_are_a_header_field),
		cmocka_unit_test(test_cpu_and_flags_without_pid_or_time_are_header_fields),
		cmocka_unit_test(test_unknown_fields_never_go_into_the_command),
		cmocka_unit_test(test_a_last_header_whose_event_is_whole_is_kept),
		cmocka_unit_test(test_header_variants_give_the_command_as_root),
		cmocka_unit_test(test_a_thread_name_holding_a_card_number_is_masked),
		cmocka_unit_test(test_frames_are_tidied_like_stackcollapse_perf),
		cmocka_unit_test(test_java_signatures_lose_their_leading_l),
		cmocka_unit_test(test_process_name_frames_are_skipped),
		cmocka_unit_test(test_header_without_frames_is_a_stack_of_the_command),
		cmocka_unit_test(test_only_the_first_event_type_is_kept),
		cmocka_unit_test(test_v8_jit_frames_are_one_function_whatever_their_tier),
		cmocka_unit_test(test_v8_jit_frames_of_eval_code_are_one_function),
		cmocka_unit_test(test_python_functions_under_perf_keep_the_interpreters_time),
		cmocka_unit_test(test_python_leaf_drops_only_the_interpreters_frames),
		cmocka_unit_test(test_parens_inside_brackets_do_not_cut_the_name),
		cmocka_unit_test(test_headers_without_an_event_field_are_all_kept),
		cmocka_unit_test(test_one_line_events_are_the_command_and_the_symbol),
		cmocka_unit_test(test_one_line_and_call_chain_events_mix),
		cmocka_unit_test(test_malformed_one_line_events_are_rejected_with_the_line),
		cmocka_unit_test(test_last_event_without_blank_line_is_kept),
		cmocka_unit_test(test_input_cut_inside_a_line_is_rejected),
		cmocka_unit_test(test_header_while_an_event_is_open_ends_it),
		cmocka_unit_test(test_comments_crlf_and_stray_whitespace_lines_are_accepted),
		cmocka_unit_test(test_empty_input_is_a_profile_without_samples),
		cmocka_unit_test(test_malformed_lines_are_rejected_with_the_line),
		cmocka_unit_test(test_binary_input_is_rejected),
		cmocka_unit_test(test_stack_deeper_than_the_limit_is_rejected),
		cmocka_unit_test(test_hostile_deep_event_is_rejected_by_the_depth_limit),
		cmocka_unit_test(test_too_many_samples_are_rejected),
		cmocka_unit_test(test_overlong_names_are_rejected),
		cmocka_unit_test(test_sniff_finds_perf_script_and_nothing_else),
		cmocka_unit_test(test_sniff_accepts_the_real_captures),
		cmocka_unit_test(
			test_real_prints_with_srcline_sideband_or_no_event_give_the_same_profile),
		cmocka_unit_test(test_a_real_print_with_source_code_lines_gives_the_same_profile),
		cmocka_unit_test(test_side_band_records_are_not_samples),
		cmocka_unit_test(test_namespace_and_round_records_are_not_samples),
		cmocka_unit_test(test_switch_records_of_no_task_are_not_samples),
		cmocka_unit_test(test_sniff_accepts_records_that_fill_its_window),
		cmocka_unit_test(test_events_of_other_types_are_counted_as_left_out),
		cmocka_unit_test(test_cpu_time_event_is_kept_over_an_earlier_other_event),
		cmocka_unit_test(test_source_lines_count_only_right_after_a_frame),
		cmocka_unit_test(test_a_period_with_no_event_name_ends_the_header),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
