/*
 * test_folded.c: the folded-stacks parser: exact self and total values,
 * the whitespace rules, frame-id reuse between lines, a data file checked
 * against a hand-computed summary, and malformed, hostile and oversized
 * input, each error naming the input and the line.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "common/buf.h"
#include "pipeline/folded.h"
#include "tests/support/testdata.h"

#define NAME "t.folded"

static int parse_n(profile **out, const char *text, size_t len,
		   const profile_limits *lim, pr_error *err)
{
	return folded_parse(out, (const uint8_t *)text, len, NAME, lim, err);
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

static const profile_summary_row *find_row(const profile *p,
					   const profile_summary *s,
					   const char *name)
{
	for (size_t i = 0; i < s->nrows; i++)
		if (strcmp(p->funcs[s->rows[i].func].name, name) == 0)
			return &s->rows[i];
	return NULL;
}

static const profile_summary_row *row(const profile *p, const profile_summary *s,
				      const char *name)
{
	const profile_summary_row *r = find_row(p, s, name);

	if (!r)
		fail_msg("no function '%s' in the summary", name);
	return r;
}

static void summarize(profile_summary *s, const profile *p)
{
	pr_error err = PR_ERROR_INIT;

	assert_int_equal(profile_summarize(s, p, 0, &err), 0);
}

/* Sample i's stack as "a;b;c", into out (for checking frame ids). */
static const char *stack_str(char *out, size_t cap, const profile *p, size_t i)
{
	size_t len = 0;

	out[0] = '\0';
	for (uint32_t k = 0; k < p->stack_len[i]; k++) {
		const char *n = p->funcs[p->frames[p->stack_off[i] + k]].name;
		len += (size_t)snprintf(out + len, cap - len, "%s%s", k ? ";" : "", n);
		assert_true(len < cap);
	}
	return out;
}

/* The parse fails with `code`, naming the input and "line N". */
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

static void test_stacks_give_exact_self_and_total(void **state)
{
	profile *p = parse_ok("main;serve;parse 7\n"
			      "main;serve;render 3\n"
			      "main;serve 2\n"
			      "main;fib;fib;fib 5\n"
			      "main;serve;parse 1\n");
	profile_summary s;

	(void)state;
	assert_int_equal(p->format, PROFILE_FMT_FOLDED);
	assert_int_equal(p->nvalue_types, 1);
	assert_string_equal(p->value_types[0].type, "samples");
	assert_string_equal(p->value_types[0].unit, "count");
	assert_int_equal(p->nsamples, 5);
	assert_int_equal(p->nfuncs, 5);
	summarize(&s, p);
	assert_int_equal(s.total, 18);
	assert_int_equal(s.sample_count, 18);
	assert_int_equal(row(p, &s, "parse")->self, 8);
	assert_int_equal(row(p, &s, "parse")->total, 8);
	assert_int_equal(row(p, &s, "render")->self, 3);
	assert_int_equal(row(p, &s, "serve")->self, 2);
	assert_int_equal(row(p, &s, "serve")->total, 13);
	assert_int_equal(row(p, &s, "main")->self, 0);
	assert_int_equal(row(p, &s, "main")->total, 18);
	/* Recursion counts once toward the total. */
	assert_int_equal(row(p, &s, "fib")->self, 5);
	assert_int_equal(row(p, &s, "fib")->total, 5);
	profile_summary_release(&s);
	profile_free(p);
}

static void test_count_is_the_field_after_the_last_whitespace(void **state)
{
	profile *p = parse_ok("main;std::vector<int> ::push_back 4\n"
			      "main;[unknown] 2\n"
			      "io worker;epoll wait\t \t9\n"
			      "  main;leading 1\n");
	profile_summary s;

	(void)state;
	summarize(&s, p);
	assert_int_equal(row(p, &s, "std::vector<int> ::push_back")->self, 4);
	assert_int_equal(row(p, &s, "[unknown]")->self, 2);
	assert_int_equal(row(p, &s, "io worker")->total, 9);
	assert_int_equal(row(p, &s, "epoll wait")->self, 9);
	assert_int_equal(row(p, &s, "leading")->self, 1);
	assert_int_equal(row(p, &s, "main")->total, 7);
	assert_null(find_row(p, &s, "  main"));
	profile_summary_release(&s);
	profile_free(p);
}

static void test_crlf_blank_lines_and_a_last_line_without_newline_are_accepted(void **state)
{
	profile *p = parse_ok("\r\n\n  \t\r\na;b 1\r\n\r\na;c 2  \r\n\n\na;b 3");
	profile_summary s;

	(void)state;
	assert_int_equal(p->nsamples, 3);
	summarize(&s, p);
	assert_int_equal(s.total, 6);
	assert_int_equal(row(p, &s, "b")->self, 4);
	assert_int_equal(row(p, &s, "c")->self, 2);
	assert_null(find_row(p, &s, "c\r"));
	profile_summary_release(&s);
	profile_free(p);
}

/* A byte order mark (Windows tools write one) is not part of the first frame. */
static void test_a_leading_byte_order_mark_is_skipped(void **state)
{
	static const char text[] = "\xef\xbb\xbfmain;a 10\nmain;b 30\n";
	profile *p = parse_ok(text);
	profile_summary s;

	(void)state;
	summarize(&s, p);
	assert_int_equal(row(p, &s, "main")->total, 40);
	assert_int_equal(p->nfuncs, 3);
	assert_true(folded_sniff((const uint8_t *)text, sizeof(text) - 1));
	profile_summary_release(&s);
	profile_free(p);
}

/*
 * Lines ending in a bare CR are one line here: stored, they were one stack
 * whose frames held the other lines, and the first line's samples were
 * lost. A CR inside a stack is refused, naming the line.
 */
static void test_a_carriage_return_inside_a_stack_is_refused(void **state)
{
	static const struct {
		const char *text;
		size_t line;
		const char *reason;
	} cases[] = {
		{"main;a 10\rmain;b 30\r", 1, "a carriage return inside the stack"},
		{"a 1\nmain;a 10\rmain;b 30\n", 2, "a carriage return inside the stack"},
		{"a 1\nmain;x\ry 2\r\n", 2, "a carriage return inside the stack"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_error(cases[i].text, strlen(cases[i].text), NULL, PR_EDATA, cases[i].line,
			     cases[i].reason);
}

/*
 * An empty frame inside a stack is "[unknown]"; empty frames at its end
 * are none, as flamegraph.pl's split drops them: "y; 4" is y's.
 */
static void test_empty_frames_become_unknown(void **state)
{
	profile *p = parse_ok("a;;b 2\n;x 1\ny; 4\nz;; 8\n; 16\n");
	profile_summary s;

	(void)state;
	summarize(&s, p);
	assert_int_equal(row(p, &s, "[unknown]")->total, 19);
	assert_int_equal(row(p, &s, "[unknown]")->self, 16);
	assert_int_equal(row(p, &s, "b")->self, 2);
	assert_int_equal(row(p, &s, "x")->self, 1);
	assert_int_equal(row(p, &s, "y")->self, 4);
	assert_int_equal(row(p, &s, "z")->self, 8);
	profile_summary_release(&s);
	profile_free(p);
}

static void test_empty_input_is_a_profile_without_samples(void **state)
{
	static const char *const inputs[] = {"", "\n", "\r\n \t\n\n"};

	(void)state;
	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		profile *p = parse_ok(inputs[i]);
		profile_summary s;

		assert_int_equal(p->nsamples, 0);
		assert_int_equal(p->nvalue_types, 1);
		summarize(&s, p);
		assert_int_equal(s.total, 0);
		assert_int_equal(s.nrows, 0);
		profile_summary_release(&s);
		profile_free(p);
	}
}

static void test_zero_and_int64_max_counts_are_accepted(void **state)
{
	profile *p = parse_ok("a;b 0\na;c 9223372036854775807\n");

	(void)state;
	assert_int_equal(p->nsamples, 2);
	assert_int_equal(p->values[0], 0);
	assert_true(p->values[1] == INT64_MAX);
	profile_free(p);
}

/*
 * Frames inside the prefix a line shares with the one before keep their
 * ids; these lines share prefixes that end inside a frame, at a frame
 * boundary on one side only, and cover the whole of either line.
 */
static void test_shared_prefixes_never_confuse_frames(void **state)
{
	static const char *const lines[] = {
		"a;bc;d", "a;b;d", "a;b", "a;b;c;d", "a;bc", "ab;c", "a", "a;b;c;d",
		"a;b;c;dd", "x;b;c;d", "a;;c", "a;;", "a;b;c;d",
	};
	char text[512] = "", got[128];
	size_t len = 0;
	profile *p;

	(void)state;
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s 1\n", lines[i]);
	p = parse_ok(text);
	assert_int_equal(p->nsamples, sizeof(lines) / sizeof(lines[0]));
	for (size_t i = 0; i < p->nsamples; i++) {
		char want[128], line[64];
		size_t w = 0, n = strlen(lines[i]);
		/* Empty frames at the end are dropped, others come back as "[unknown]". */
		while (n > 1 && lines[i][n - 1] == ';')
			n--;
		snprintf(line, sizeof(line), "%.*s", (int)n, lines[i]);
		for (const char *c = line;; c++) {
			bool start = c == line || c[-1] == ';';
			if (start && (*c == ';' || *c == '\0'))
				w += (size_t)snprintf(want + w, sizeof(want) - w, "[unknown]");
			if (!*c)
				break;
			want[w++] = *c;
			want[w] = '\0';
		}
		assert_string_equal(stack_str(got, sizeof(got), p, i), want);
	}
	profile_free(p);
}

/*
 * tests/data/folded/austin-burn.folded: austin 1.0.1 writes each line
 * being run as a frame of its own after the function's frame, "hot
 * (/tmp/app/burn.py);L6", and roots every stack at "Thread" and an
 * address. The functions hold the self time, not frames named "L6"; the
 * figures are summed from the file by tests/data/README.md's rule.
 */
static void test_austin_line_frames_are_dropped(void **state)
{
	buf text = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	profile_summary s;
	profile *p = NULL;

	(void)state;
	testdata_read(&text, "folded/austin-burn.folded");
	assert_int_equal(folded_parse(&p, (const uint8_t *)text.ptr, text.len, NAME, NULL, &err),
			 0);
	summarize(&s, p);
	assert_int_equal(s.total, 586590);
	assert_int_equal(row(p, &s, "hot (/tmp/app/burn.py)")->self, 312650);
	assert_int_equal(row(p, &s, "warm (/tmp/app/burn.py)")->self, 134346);
	assert_int_equal(row(p, &s, "cold (/tmp/app/burn.py)")->self, 134524);
	assert_int_equal(row(p, &s, "<module> (/tmp/app/burn.py)")->self, 5070);
	assert_int_equal(row(p, &s, "<module> (/tmp/app/burn.py)")->total, 586590);
	assert_int_equal(row(p, &s, "Thread")->total, 586590);
	for (size_t i = 0; i < s.nrows; i++) {
		const char *n = p->funcs[s.rows[i].func].name;
		if (n[0] == 'L' && strspn(n + 1, "0123456789") == strlen(n + 1))
			fail_msg("a line frame '%s' became a function", n);
	}
	assert_null(find_row(p, &s, "L6"));
	profile_summary_release(&s);
	profile_free(p);
	buf_release(&text);
}

/*
 * tests/data/folded/austin-burn-full.folded: austin --full ends every
 * line in three numbers (time, memory allocated and released). Read as
 * folded stacks, the last was the count: 0 almost everywhere, stored as a
 * capture of nothing. It is refused.
 */
static void test_austin_full_metrics_are_refused(void **state)
{
	buf text = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;

	(void)state;
	testdata_read(&text, "folded/austin-burn-full.folded");
	assert_int_equal(folded_parse(&p, (const uint8_t *)text.ptr, text.len, NAME, NULL, &err),
			 PR_EDATA);
	assert_null(p);
	assert_non_null(strstr(err.msg, "every line ends in more than one number"));
	buf_release(&text);
	/* One frame named after a number is still a frame. */
	p = parse_ok("main;retry 3 7\nmain;serve 5\n");
	profile_free(p);
}

/*
 * tests/data/folded/heaptrack-retain.folded: heaptrack_print
 * --print-flamegraph ends every stack with ';'. keep_big retained 3
 * times the bytes of keep_small (heaptrack_print's own figures).
 */
static void test_heaptrack_stacks_end_in_their_last_function(void **state)
{
	buf text = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	profile_summary s;
	profile *p = NULL;

	(void)state;
	testdata_read(&text, "folded/heaptrack-retain.folded");
	assert_int_equal(folded_parse(&p, (const uint8_t *)text.ptr, text.len, NAME, NULL, &err),
			 0);
	summarize(&s, p);
	assert_int_equal(s.total, 19660800 + 6553600);
	assert_int_equal(row(p, &s, "keep_big (retain.c)")->self, 19660800);
	assert_int_equal(row(p, &s, "keep_small (retain.c)")->self, 6553600);
	assert_null(find_row(p, &s, "[unknown]"));
	profile_summary_release(&s);
	profile_free(p);
	buf_release(&text);
}

/* tests/data/folded/mixed.summary was worked out by hand. */
static void test_data_file_matches_hand_computed_summary(void **state)
{
	buf text = BUF_INIT, golden = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	profile_summary s;
	profile *p = NULL;
	char *line, *save = NULL;
	size_t n = 0;

	(void)state;
	testdata_read(&text, "folded/mixed.folded");
	testdata_read(&golden, "folded/mixed.summary");
	assert_int_equal(folded_parse(&p, (const uint8_t *)text.ptr, text.len,
				      "mixed.folded", NULL, &err), 0);
	assert_int_equal(p->nsamples, 9);
	summarize(&s, p);
	assert_int_equal(s.total, 38);
	for (line = strtok_r(golden.ptr, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *t1, *t2;
		const profile_summary_row *r;

		if (line[0] == '#')
			continue;
		assert_non_null(t1 = strchr(line, '\t'));
		assert_non_null(t2 = strchr(t1 + 1, '\t'));
		r = row(p, &s, t2 + 1);
		if (r->self != strtoll(line, NULL, 10) || r->total != strtoll(t1 + 1, NULL, 10))
			fail_msg("%s: self %lld total %lld, expected %s", t2 + 1,
				 (long long)r->self, (long long)r->total, line);
		n++;
	}
	assert_int_equal(n, s.nrows);
	profile_summary_release(&s);
	profile_free(p);
	buf_release(&text);
	buf_release(&golden);
}

static void test_bad_counts_are_rejected_with_the_line(void **state)
{
	static const struct {
		const char *text;
		const char *reason;
	} cases[] = {
		{"a;b 1\na;b 1\na;b x12\n", "no count"},
		{"a;b 1\na;b 1\na;b 12x\n", "no count"},
		{"a;b 1\na;b 1\na;b +5\n", "no count"},
		{"a;b 1\na;b 1\na;b -5\n", "negative"},
		{"a;b 1\na;b 1\na;b -0.5\n", "negative"},
		{"a;b 1\na;b 1\na;b 9223372036854775808\n", "64-bit"},
		{"a;b 1\na;b 1\na;b 99999999999999999999999\n", "64-bit"},
		{"a;b 1\na;b 1\na;b 1.5\n", "whole number"},
		{"a;b 1\na;b 1\na;b 1e3\n", "no count"},
		{"a;b 1\na;b 1\nmain;serve;parse\n", "single field"},
		{"a;b 1\na;b 1\n12\n", "single field"},
		{"a;b 1\r\na;b 1\r\nmain;std::vector<int> ::push_back\r\n", "no count"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_error(cases[i].text, strlen(cases[i].text), NULL, PR_EDATA, 3,
			     cases[i].reason);
}

static void test_nul_byte_is_rejected_as_binary(void **state)
{
	static const char text[] = "a;b 1\nc;d 2\na;b\0 3\n";

	(void)state;
	expect_error(text, sizeof(text) - 1, NULL, PR_EDATA, 3, "NUL byte at offset 15");
	/* A protobuf-looking prefix is refused the same way. */
	expect_error("\x08\x00\x12\x04", 4, NULL, PR_EDATA, 1, "NUL byte at offset 1");
}

static void test_stack_deeper_than_the_limit_is_rejected(void **state)
{
	profile_limits lim;
	profile *p = NULL;
	pr_error err = PR_ERROR_INIT;
	const char *ok = "a;b;c;d 1\n";

	(void)state;
	profile_limits_default(&lim);
	lim.max_depth = 4;
	assert_int_equal(parse_n(&p, ok, strlen(ok), &lim, &err), 0);
	profile_free(p);
	expect_error("a;b;c;d 1\na;b;c;d;e 1\n", 22, &lim, PR_ELIMIT, 2,
		     "a stack of 5 frames exceeds the depth limit of 4");
}

static void test_hostile_deep_line_is_rejected_by_the_depth_limit(void **state)
{
	size_t n = 1u << 20;
	char *text = malloc(2 * n + 8);

	(void)state;
	assert_non_null(text);
	for (size_t i = 0; i < n; i++) {
		text[2 * i] = 'f';
		text[2 * i + 1] = ';';
	}
	memcpy(text + 2 * n, "f 1\n", 4);
	expect_error(text, 2 * n + 4, NULL, PR_ELIMIT, 1,
		     "a stack of 1048577 frames exceeds the depth limit of 4096");
	free(text);
}

static void test_too_many_samples_are_rejected(void **state)
{
	profile_limits lim;

	(void)state;
	profile_limits_default(&lim);
	lim.max_samples = 2;
	expect_error("a 1\n\nb 1\nc 1\n", 13, &lim, PR_ELIMIT, 4, "sample limit");
}

static void test_overlong_frame_name_is_rejected(void **state)
{
	profile_limits lim;
	const char *text = "main;short 1\nmain;abcdefghi 1\n";

	(void)state;
	profile_limits_default(&lim);
	lim.max_string_len = 8;
	expect_error(text, strlen(text), &lim, PR_ELIMIT, 2,
		     "a name of 9 bytes exceeds the limit of 8 bytes");
}

static void test_invalid_utf8_is_replaced_not_rejected(void **state)
{
	profile *p = parse_ok("main;caf\xe9 3\nmain;caf\xe9 1\n");

	(void)state;
	assert_int_equal(p->nfuncs, 2);
	assert_string_equal(p->funcs[1].name, "caf\xef\xbf\xbd");
	assert_int_equal(p->utf8_replaced, 1);
	profile_free(p);
}

static void test_error_quotes_are_short_and_printable(void **state)
{
	char text[300];
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;

	(void)state;
	memset(text, 'x', sizeof(text));
	memcpy(text, "main;serve \x1b[31m\x01", 17);
	text[sizeof(text) - 1] = '\n';
	assert_int_equal(parse_n(&p, text, sizeof(text), NULL, &err), PR_EDATA);
	/* The control bytes start a word that is counted, not quoted. */
	assert_non_null(strstr(err.msg, "found '<"));
	assert_null(strstr(err.msg, "[31m"));
	assert_null(strchr(err.msg, '\x1b'));
	assert_null(strchr(err.msg, '\x01'));
	assert_true(strlen(err.msg) < 120);
}

static void test_sniff_accepts_folded_and_refuses_other_formats(void **state)
{
	static const struct {
		const char *text;
		bool want;
	} cases[] = {
		{"main;serve;parse 7\nmain;serve 2\n", true},
		{"\n\nmain;std::vector<int> ::push_back 4\r\n", true},
		{"[unknown];runtime.goexit 1\n", true},
		{"single 1", true},
		{"", false},
		{"\n \n", false},
		{"{\"nodes\":[], \"samples\": 12\n", false},
		{"[1, 2\n", false},
		{"[ {\"a\": 1\n", false},
		{"burn  7205   450.213772:    2004008 cpu-clock: \n"
		 "\t            11f7 leaf_hash+0x27 (/tmp/burn)\n", false},
		{"main;serve 7\n\t 11f7 leaf (/x)\n", false},
		{"main;serve 7\nnot folded\n", false},
		{"main;serve\n", false},
		{"a;b 1\x01\n", false},
	};
	static const uint8_t pb[] = {0x0a, 0x04, 0x08, 0x01, 0x10, 0x02, ' ', '1'};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (folded_sniff((const uint8_t *)cases[i].text, strlen(cases[i].text)) !=
		    cases[i].want)
			fail_msg("case %zu: sniff should be %d", i, cases[i].want);
	assert_false(folded_sniff(pb, sizeof(pb)));
	assert_false(folded_sniff(NULL, 0));
}

/* A deep stack makes a long line; the sniffer reads it to its end. */
static void test_sniff_judges_lines_longer_than_its_window(void **state)
{
	size_t n = 200000;
	char *text = malloc(n + 16);

	(void)state;
	assert_non_null(text);
	for (size_t i = 0; i < n; i++)
		text[i] = i % 10 == 9 ? ';' : 'f';
	memcpy(text + n, "f 12\nf;g x\n", 12);
	assert_true(folded_sniff((const uint8_t *)text, n + 5));
	/* The next line is past the window and is not judged... */
	assert_true(folded_sniff((const uint8_t *)text, n + 12));
	/* ...but a bad first line is, however long. */
	text[n + 2] = 'x';
	assert_false(folded_sniff((const uint8_t *)text, n + 5));
	free(text);
}

/*
 * The parser sizes the profile's arrays from the text before parsing: a
 * sample a line and a frame per ';' and per line, counted exactly (two
 * lines of 3,001 ';' overflow a byte counter, whether the bytes are
 * counted eight or sixteen at a time; an odd length leaves a tail that is
 * not a whole word). The stacks stored are the same as without it.
 */
static void test_arrays_are_sized_from_the_text_and_stacks_kept(void **state)
{
	buf text = BUF_INIT;
	profile *p;
	size_t semis = 2 * 3001 + 2 * 5000, lines;

	(void)state;
	for (int k = 0; k < 2; k++) {
		assert_int_equal(buf_puts(&text, "main"), 0);
		for (int i = 0; i < 3000; i++)
			assert_int_equal(buf_putc(&text, ';'), 0);
		assert_int_equal(buf_puts(&text, ";x 1\n"), 0);
	}
	for (int i = 0; i < 5000; i++)
		assert_int_equal(buf_printf(&text, "a;b%d;c %d\n", i % 7, i + 1), 0);
	/* A last line without its newline. */
	assert_int_equal(buf_puts(&text, "a;b;c 5"), 0);
	semis += 2;
	lines = 5003;
	assert_true(text.len % 8 != 0);
	p = parse_ok(text.ptr);
	assert_int_equal(p->nsamples, 5003);
	assert_int_equal(p->samples_cap, lines);
	assert_int_equal(p->frames_cap, semis + lines);
	assert_int_equal(p->stack_len[0], 3002);
	assert_string_equal(p->funcs[p->frames[p->stack_off[0] + 3001]].name, "x");
	assert_int_equal(p->stack_len[1], 3002);
	assert_int_equal(p->stack_len[5002], 3);
	assert_string_equal(p->funcs[p->frames[p->stack_off[5002] + 2]].name, "c");
	assert_int_equal(p->values[5002], 5);
	assert_string_equal(p->funcs[p->frames[p->stack_off[9] + 1]].name, "b0");
	profile_free(p);
	buf_release(&text);
}

/* The function named `name` with file `file`, or fail. */
static const profile_summary_row *row_in(const profile *p, const profile_summary *s,
					 const char *name, const char *file)
{
	for (size_t i = 0; i < s->nrows; i++) {
		const profile_func *f = &p->funcs[s->rows[i].func];
		if (strcmp(f->name, name) == 0 && strcmp(f->file, file) == 0)
			return &s->rows[i];
	}
	fail_msg("no function '%s' in '%s' in the summary", name, file);
	return NULL;
}

static void test_python_frames_are_one_function_whatever_line_runs(void **state)
{
	/* py-spy's frames: "name (file:line)", the line being run. */
	profile *p = parse_ok("<module> (app.py:1);main (app.py:10);compute (calc.py:42) 5\n"
			      "<module> (app.py:1);main (app.py:12);compute (calc.py:44) 3\n"
			      "<module> (app.py:1);main (app.py:12);compute (other.py:7) 2\n");
	profile_summary s;

	(void)state;
	summarize(&s, p);
	assert_int_equal(row_in(p, &s, "compute", "calc.py")->self, 8);
	/* The same name in another file is another function. */
	assert_int_equal(row_in(p, &s, "compute", "other.py")->self, 2);
	assert_int_equal(row_in(p, &s, "main", "app.py")->total, 10);
	assert_int_equal(row_in(p, &s, "<module>", "app.py")->total, 10);
	assert_int_equal(s.nrows, 4);
	profile_summary_release(&s);
	profile_free(p);
}

static void test_a_release_that_moves_lines_keeps_the_function(void **state)
{
	profile *before = parse_ok("main (app.py:10);compute (calc.py:42) 5\n");
	profile *after = parse_ok("main (app.py:31);compute (calc.py:57) 5\n");
	profile_summary a, b;
	const profile_summary_row *ra, *rb;

	(void)state;
	summarize(&a, before);
	summarize(&b, after);
	ra = row_in(before, &a, "compute", "calc.py");
	rb = row_in(after, &b, "compute", "calc.py");
	assert_int_equal(ra->self, rb->self);
	profile_summary_release(&a);
	profile_summary_release(&b);
	profile_free(before);
	profile_free(after);
}

static void test_ruby_frames_are_one_function_whatever_line_runs(void **state)
{
	/* rbspy's frames: "name - file:line". */
	profile *p = parse_ok("<main> - app.rb:1;block in compute - lib/calc.rb:4 2\n"
			      "<main> - app.rb:1;block in compute - lib/calc.rb:9 1\n");
	profile_summary s;

	(void)state;
	summarize(&s, p);
	assert_int_equal(row_in(p, &s, "block in compute", "lib/calc.rb")->self, 3);
	assert_int_equal(s.nrows, 2);
	profile_summary_release(&s);
	profile_free(p);
}

/*
 * pyroscope-rs, the profiler of Pyroscope's Python and Ruby agents,
 * writes "file:line - name": a release that moves the code keeps the
 * function, which is the one py-spy or rbspy name for the same line.
 */
static void test_pyroscope_rs_frames_are_one_function_whatever_line_runs(void **state)
{
	profile *before = parse_ok("app.py:1 - <module>;app.py:22 - idle 5\n"
				   "app.py:1 - <module>;app.py:30 - work;lib/calc.py:7 - add 2\n"
				   "app.rb:3 - <main>;lib/calc.rb:4 - block in compute 4\n"
				   "py-spy;idle (app.py:23) 1\n");
	profile *after = parse_ok("app.py:1 - <module>;app.py:40 - idle 5\n"
				  "app.py:1 - <module>;app.py:12 - work;lib/calc.py:9 - add 2\n"
				  "app.rb:3 - <main>;lib/calc.rb:11 - block in compute 4\n");
	profile_summary a, b;

	(void)state;
	summarize(&a, before);
	summarize(&b, after);
	assert_int_equal(row_in(before, &a, "idle", "app.py")->self, 6);
	assert_int_equal(row_in(after, &b, "idle", "app.py")->self, 5);
	assert_int_equal(row_in(before, &a, "add", "lib/calc.py")->self, 2);
	assert_int_equal(row_in(after, &b, "add", "lib/calc.py")->self, 2);
	assert_int_equal(row_in(after, &b, "work", "app.py")->total, 2);
	assert_int_equal(row_in(after, &b, "<module>", "app.py")->total, 7);
	assert_int_equal(row_in(before, &a, "block in compute", "lib/calc.rb")->self, 4);
	assert_int_equal(row_in(after, &b, "block in compute", "lib/calc.rb")->self, 4);
	assert_int_equal(a.nrows, 7);
	assert_int_equal(b.nrows, 6);
	profile_summary_release(&a);
	profile_summary_release(&b);
	profile_free(before);
	profile_free(after);
}

static void test_java_methods_are_one_function_whatever_tier_ran_them(void **state)
{
	/* async-profiler's annotations: compiled, inlined, interpreted, C1, kernel. */
	profile *p = parse_ok("java/lang/Thread.run_[j];com/acme/Pricer.quote_[j] 5\n"
			      "java/lang/Thread.run_[j];com/acme/Pricer.quote_[i] 2\n"
			      "java/lang/Thread.run_[0];com/acme/Pricer.quote_[0] 1\n"
			      "java/lang/Thread.run_[j];com/acme/Pricer.quote_[1] 1\n"
			      "java/lang/Thread.run_[j];write_[j];do_syscall_64_[k] 4\n");
	profile_summary s;

	(void)state;
	summarize(&s, p);
	assert_int_equal(row(p, &s, "com/acme/Pricer.quote")->self, 9);
	assert_int_equal(row(p, &s, "java/lang/Thread.run")->total, 13);
	assert_int_equal(row(p, &s, "do_syscall_64_[k]")->self, 4);
	assert_null(find_row(p, &s, "com/acme/Pricer.quote_[j]"));
	assert_int_equal(s.nrows, 4);
	profile_summary_release(&s);
	profile_free(p);
}

/*
 * Stacks folded from node --perf-basic-prof (stackcollapse-perf.pl keeps
 * V8's names whole): one function of its file whatever tier ran it or
 * where in the file it now is; the script's top level is "(anonymous)".
 */
static void test_node_jit_frames_are_one_function_whatever_tier_or_line(void **state)
{
	profile *p = parse_ok("node;JS:* /srv/app/main.js:1:1;JS:*hot /srv/app/calc.js:3:9 5\n"
			      "node;JS:* /srv/app/main.js:1:1;JS:^hot /srv/app/calc.js:3:9 2\n"
			      "node;JS:* /srv/app/main.js:1:1;JS:~hot /srv/app/calc.js:7:9 1\n"
			      "node;JS:*emit node:events:517:28;"
			      "LazyCompile:*hot /srv/app/calc.js:3:9 1\n"
			      "node;JS:*get total /srv/app/cart.js:10:2 3\n"
			      "node;Builtins_ArrayMap 4\n");
	profile_summary s;
	const profile_summary_row *r;

	(void)state;
	summarize(&s, p);
	assert_non_null(r = row(p, &s, "hot"));
	assert_int_equal(r->self, 9);
	assert_string_equal(p->funcs[r->func].file, "/srv/app/calc.js");
	assert_string_equal(p->funcs[row(p, &s, "emit")->func].file, "node:events");
	assert_int_equal(row(p, &s, "(anonymous)")->total, 8);
	assert_string_equal(p->funcs[row(p, &s, "(anonymous)")->func].file,
			    "/srv/app/main.js");
	assert_int_equal(row(p, &s, "get total")->self, 3);
	assert_int_equal(row(p, &s, "Builtins_ArrayMap")->self, 4);
	assert_int_equal(s.nrows, 6);
	profile_summary_release(&s);
	profile_free(p);
}

/*
 * Code of no script (eval, new Function) has an empty file in V8's names
 * ("JS:*evalSpin :1:19", as tests/data/perf/eval-jit.perf has them): it
 * too is one function whatever its tier, with no file.
 */
static void test_node_jit_frames_of_eval_code_are_one_function(void **state)
{
	profile *p = parse_ok("node;JS:* /srv/app/main.js:1:1;JS:*evalSpin :1:19 5\n"
			      "node;JS:* /srv/app/main.js:1:1;JS:^evalSpin :1:19 2\n"
			      "node;JS:* /srv/app/main.js:1:1;JS:^ :1:20 1\n");
	profile_summary s;
	const profile_summary_row *r;
	int64_t anonymous = 0;

	(void)state;
	summarize(&s, p);
	assert_non_null(r = row(p, &s, "evalSpin"));
	assert_int_equal(r->self, 7);
	assert_string_equal(p->funcs[r->func].file, "");
	for (size_t i = 0; i < s.nrows; i++)
		if (strcmp(p->funcs[s.rows[i].func].name, "(anonymous)") == 0 &&
		    strcmp(p->funcs[s.rows[i].func].file, "") == 0)
			anonymous += s.rows[i].self;
	assert_int_equal(anonymous, 1);
	assert_int_equal(s.nrows, 4);
	profile_summary_release(&s);
	profile_free(p);
}

static void test_frames_that_only_look_annotated_keep_their_name(void **state)
{
	static const char *const kept[] = {
		"std::function<void (int)>::operator()(int) const",
		"foo (bar)",           /* no line: the name as written */
		"foo (bar.py:12x)",    /* not a line number */
		"foo (a(b).py:12)",    /* not one group */
		" (calc.py:12)",       /* no name before it */
		"a - b",               /* no line */
		"a - :12",             /* no file */
		"app.py:12x - idle",   /* not a line number */
		":12 - idle",          /* no file */
		"app.py - idle",       /* no line */
		"a(b).py:12 - idle",   /* not a file */
		"My Project - app.py", /* neither */
		"[unknown]",
		"_[j]",
		"x_[q]",
		"JS:*hot /srv/app/calc.js:3", /* no column */
		"JS:*hot",                    /* no location */
		"Function::call /a.js:1:2",   /* C++, not V8's tag */
		"Builtin:ArrayMap /a.js:1:2", /* not JavaScript code */
	};
	char text[128];

	(void)state;
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		profile *p;
		profile_summary s;

		snprintf(text, sizeof(text), "root;%s 1\n", kept[i]);
		p = parse_ok(text);
		summarize(&s, p);
		if (!find_row(p, &s, kept[i]))
			fail_msg("frame '%s' was renamed", kept[i]);
		assert_string_equal(p->funcs[s.rows[0].func].file, "");
		profile_summary_release(&s);
		profile_free(p);
	}
}

/*
 * CPU milliseconds to parse LINES frames of NAME_LEN bytes made of `unit`
 * repeated, best of two; each frame keeps its name whole (no file split off).
 */
static double parse_frames_ms(const char *unit)
{
	enum { LINES = 32, NAME_LEN = 65000 };
	size_t ulen = strlen(unit);
	double best = 1e30;
	buf text = BUF_INIT;
	char last[16];

	for (int i = 0; i < LINES; i++) {
		assert_int_equal(buf_puts(&text, "root;"), 0);
		for (size_t k = 0; k + ulen <= NAME_LEN; k += ulen)
			assert_int_equal(buf_put(&text, unit, ulen), 0);
		snprintf(last, sizeof(last), "x%d 1\n", i);
		assert_int_equal(buf_puts(&text, last), 0);
	}
	for (int k = 0; k < 2; k++) {
		struct timespec t0, t1;
		pr_error err = PR_ERROR_INIT;
		profile_summary s;
		profile *p;
		double ms;

		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
		assert_int_equal(parse_n(&p, text.ptr, text.len, NULL, &err), 0);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
		ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
		     (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
		best = ms < best ? ms : best;
		summarize(&s, p);
		assert_int_equal(s.nrows, LINES + 1);
		for (size_t r = 0; r < s.nrows; r++)
			assert_string_equal(p->funcs[s.rows[r].func].file, "");
		profile_summary_release(&s);
		profile_free(p);
	}
	buf_release(&text);
	return best;
}

/*
 * A frame of many " - " and no line anywhere: each " - " is tried as
 * the end of pyroscope-rs's "file:line", and looking back from each one
 * for a ':' made a 64 KiB name take a quarter of a second of CPU, a
 * 64 MiB file of them many minutes. Such frames now cost about what
 * frames of the same length without " - " cost (8.7 s against
 * milliseconds before). Compared within the run, in CPU time, so
 * neither the machine nor the sanitizers decide.
 */
static void test_frames_of_many_dashes_take_linear_time(void **state)
{
	double plain, dashes;

	(void)state;
	plain = parse_frames_ms("abc");
	dashes = parse_frames_ms(" - ");
	if (dashes > 10 * (plain > 5 ? plain : 5))
		fail_msg("frames of \" - \" took %.1f ms, frames of \"abc\" %.1f ms", dashes,
			 plain);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stacks_give_exact_self_and_total),
		cmocka_unit_test(test_count_is_the_field_after_the_last_whitespace),
		cmocka_unit_test(
			test_crlf_blank_lines_and_a_last_line_without_newline_are_accepted),
		cmocka_unit_test(test_a_leading_byte_order_mark_is_skipped),
		cmocka_unit_test(test_a_carriage_return_inside_a_stack_is_refused),
		cmocka_unit_test(test_empty_frames_become_unknown),
		cmocka_unit_test(test_empty_input_is_a_profile_without_samples),
		cmocka_unit_test(test_zero_and_int64_max_counts_are_accepted),
		cmocka_unit_test(test_shared_prefixes_never_confuse_frames),
		cmocka_unit_test(test_data_file_matches_hand_computed_summary),
		cmocka_unit_test(test_austin_line_frames_are_dropped),
		cmocka_unit_test(test_austin_full_metrics_are_refused),
		cmocka_unit_test(test_heaptrack_stacks_end_in_their_last_function),
		cmocka_unit_test(test_bad_counts_are_rejected_with_the_line),
		cmocka_unit_test(test_nul_byte_is_rejected_as_binary),
		cmocka_unit_test(test_stack_deeper_than_the_limit_is_rejected),
		cmocka_unit_test(test_hostile_deep_line_is_rejected_by_the_depth_limit),
		cmocka_unit_test(test_too_many_samples_are_rejected),
		cmocka_unit_test(test_overlong_frame_name_is_rejected),
		cmocka_unit_test(test_invalid_utf8_is_replaced_not_rejected),
		cmocka_unit_test(test_error_quotes_are_short_and_printable),
		cmocka_unit_test(test_sniff_accepts_folded_and_refuses_other_formats),
		cmocka_unit_test(test_sniff_judges_lines_longer_than_its_window),
		cmocka_unit_test(test_arrays_are_sized_from_the_text_and_stacks_kept),
		cmocka_unit_test(test_python_frames_are_one_function_whatever_line_runs),
		cmocka_unit_test(test_a_release_that_moves_lines_keeps_the_function),
		cmocka_unit_test(test_ruby_frames_are_one_function_whatever_line_runs),
		cmocka_unit_test(test_pyroscope_rs_frames_are_one_function_whatever_line_runs),
		cmocka_unit_test(test_java_methods_are_one_function_whatever_tier_ran_them),
		cmocka_unit_test(test_node_jit_frames_are_one_function_whatever_tier_or_line),
		cmocka_unit_test(test_node_jit_frames_of_eval_code_are_one_function),
		cmocka_unit_test(test_frames_that_only_look_annotated_keep_their_name),
		cmocka_unit_test(test_frames_of_many_dashes_take_linear_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
