/*
 * test_cli.c: what reaches a terminal. Names in their safe form (C0, DEL,
 * C1, bidirectional controls, line and paragraph separators and bytes
 * that are not UTF-8 escaped; everything else kept) and their display
 * width; tables that fit 80 columns, shorten names in the middle without
 * splitting a character or an escape, and show everything in wide mode.
 * The end of a command's option loop: --help, usage errors and operand
 * counts become CLI_GO or one exit status, with one message at most.
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
#include <fcntl.h>
#include <unistd.h>

#include "jobs/cli/cli.h"
#include "jobs/cli/exitcode.h"
#include "jobs/cli/table.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

struct escape_case {
	const char *what;
	const char *in;
	const char *out;
	int cols;
};

static const struct escape_case escapes[] = {
	{"plain ASCII", "checkout.computeTax", "checkout.computeTax", 19},
	{"empty", "", "", 0},
	{"a backslash stays", "a\\x1b", "a\\x1b", 5},
	{"ESC (ANSI colour)", "\x1b[31mred", "\\x1b[31mred", 11},
	{"newline and CR", "a\nb\rc", "a\\x0ab\\x0dc", 11},
	{"tab", "a\tb", "a\\x09b", 6},
	{"U+0001", "\x01", "\\x01", 4},
	{"DEL", "a\x7f", "a\\x7f", 5},
	{"U+0080, first C1", "\xc2\x80", "\\u{0080}", 8},
	{"U+009B CSI", "a\xc2\x9b" "31m", "a\\u{009b}31m", 12},
	{"U+009D OSC .. U+009C ST", "\xc2\x9d" "0;t\xc2\x9c", "\\u{009d}0;t\\u{009c}", 19},
	{"U+009F, last C1", "\xc2\x9f", "\\u{009f}", 8},
	{"U+00A0 stays", "\xc2\xa0", "\xc2\xa0", 1},
	{"U+00E9 stays", "caf\xc3\xa9", "caf\xc3\xa9", 4},
	{"U+061C ALM", "\xd8\x9c", "\\u{061c}", 8},
	{"U+200E LRM", "\xe2\x80\x8e", "\\u{200e}", 8},
	{"U+200F RLM", "\xe2\x80\x8f", "\\u{200f}", 8},
	{"U+2027 stays", "\xe2\x80\xa7", "\xe2\x80\xa7", 1},
	{"U+2028 LS", "a\xe2\x80\xa8" "b", "a\\u{2028}b", 10},
	{"U+2029 PS", "\xe2\x80\xa9", "\\u{2029}", 8},
	{"U+202A LRE", "\xe2\x80\xaa", "\\u{202a}", 8},
	{"U+202E RLO", "txt.\xe2\x80\xae" "exe", "txt.\\u{202e}exe", 15},
	{"U+202F stays", "\xe2\x80\xaf", "\xe2\x80\xaf", 1},
	{"U+2066 LRI", "\xe2\x81\xa6", "\\u{2066}", 8},
	{"U+2069 PDI", "\xe2\x81\xa9", "\\u{2069}", 8},
	{"U+206A stays", "\xe2\x81\xaa", "\xe2\x81\xaa", 1},
	{"raw byte 0x9b (8-bit CSI)", "\x9b" "2J", "\\x9b2J", 6},
	{"stray continuation byte", "a\x80z", "a\\x80z", 6},
	{"lead byte at the end", "a\xc3", "a\\xc3", 5},
	{"cut 3-byte sequence", "\xe2\x80", "\\xe2\\x80", 8},
	{"cut sequence, then ASCII", "\xe2\x80z", "\\xe2\\x80z", 9},
	{"overlong '/'", "\xc0\xaf", "\\xc0\\xaf", 8},
	{"overlong 3-byte", "\xe0\x80\xaf", "\\xe0\\x80\\xaf", 12},
	{"surrogate U+D800", "\xed\xa0\x80", "\\xed\\xa0\\x80", 12},
	{"past U+10FFFF", "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80", 16},
	{"0xff", "\xff", "\\xff", 4},
	{"emoji, 2 columns", "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80", 2},
	{"CJK, 2 columns each", "\xe4\xb8\xad\xe6\x96\x87", "\xe4\xb8\xad\xe6\x96\x87", 4},
	{"combining accent, 0 columns", "e\xcc\x81", "e\xcc\x81", 1},
	{"U+2026 ellipsis", "\xe2\x80\xa6", "\xe2\x80\xa6", 1},
};

static void test_escape_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(escapes); i++) {
		const struct escape_case *c = &escapes[i];
		buf b = BUF_INIT;
		assert_int_equal(cli_escape(&b, c->in), 0);
		if (strcmp(b.ptr, c->out) != 0)
			fail_msg("%s: got '%s', want '%s'", c->what, b.ptr, c->out);
		if (cli_width(c->in) != c->cols)
			fail_msg("%s: %d columns, want %d", c->what, cli_width(c->in), c->cols);
		buf_release(&b);
	}
}

/* No byte of the safe form is a control character a terminal acts on. */
static void test_escaped_form_holds_no_control_byte(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(escapes); i++) {
		buf b = BUF_INIT;
		assert_int_equal(cli_escape(&b, escapes[i].in), 0);
		for (const unsigned char *p = (const unsigned char *)b.ptr; *p; p++)
			if (*p < 0x20 || *p == 0x7f)
				fail_msg("%s: byte 0x%02x in the output", escapes[i].what, *p);
		assert_null(strstr(b.ptr, "\xc2\x9b"));
		assert_null(strstr(b.ptr, "\xe2\x80\xae"));
		buf_release(&b);
	}
}

static void test_unit_next_steps_over_whole_characters(void **state)
{
	cli_unit u;

	(void)state;
	assert_int_equal(cli_unit_next(&u, "\xf0\x9f\x98\x80z"), 4);
	assert_string_equal(u.text, "\xf0\x9f\x98\x80");
	assert_int_equal(u.cols, 2);
	assert_int_equal(cli_unit_next(&u, "\xc2\x9bz"), 2);
	assert_string_equal(u.text, "\\u{009b}");
	assert_int_equal(cli_unit_next(&u, "\xe2\x80z"), 1);
	assert_string_equal(u.text, "\\xe2");
	assert_int_equal(u.cols, 4);
}

static char *put_safe(const char *s, int width)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	cli_put_safe(f, s, width);
	assert_int_equal(fclose(f), 0);
	return out;
}

static void test_put_safe_pads_by_display_columns(void **state)
{
	char *s;

	(void)state;
	s = put_safe("a\x1b" "b", 8);
	assert_string_equal(s, "a\\x1bb  ");
	free(s);
	s = put_safe("\xe4\xb8\xad", 4);
	assert_string_equal(s, "\xe4\xb8\xad  ");
	free(s);
	s = put_safe("\xe2\x80\xae", 0);
	assert_string_equal(s, "\\u{202e}");
	free(s);
}

/* ---- tables ---- */

/* Display columns of a line of the test tables (ASCII, escapes, U+2026, CJK). */
static int line_cols(const char *s, size_t n)
{
	char *copy = strndup(s, n);
	int cols;

	assert_non_null(copy);
	cols = cli_width(copy);
	free(copy);
	return cols;
}

/* Print `t` and return its text (the caller frees); checks the line widths. */
static char *render(table *t, int max_cols)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	assert_int_equal(table_print(t, f), 0);
	assert_int_equal(fclose(f), 0);
	for (const char *p = out, *nl; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		assert_non_null(nl);
		if (max_cols && line_cols(p, (size_t)(nl - p)) > max_cols)
			fail_msg("line wider than %d: '%.*s'", max_cols, (int)(nl - p), p);
		if (nl > p && nl[-1] == ' ')
			fail_msg("trailing blank: '%.*s'", (int)(nl - p), p);
	}
	return out;
}

static const char long_name[] = "checkout.(*Ledger).reconcileAndBatchWrite";

static void test_long_name_loses_its_middle(void **state)
{
	static const table_col cols[] = {{"FUNCTION", TABLE_LEFT, 0, 30}};
	table *t = NULL;
	char *out;

	(void)state;
	assert_int_equal(table_new(&t, cols, N(cols), false), 0);
	table_add(t, long_name);
	table_add(t, "short");
	out = render(t, 30);
	assert_string_equal(out, "FUNCTION\n"
				 "checkout.(*Ledg\xe2\x80\xa6" "eAndBatchWrite\n"
				 "short\n");
	free(out);
	table_free(t);
}

static void test_wide_shows_everything(void **state)
{
	static const table_col cols[] = {
		{"ID", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"WHEN", TABLE_WHOLE | TABLE_WIDE_ONLY, 0, 0},
		{"FUNCTION", TABLE_LEFT, 0, 30},
	};
	table *t = NULL;
	char *out;

	(void)state;
	assert_int_equal(table_new(&t, cols, N(cols), true), 0);
	table_add(t, "7");
	table_add(t, "2026-03-11T00:00:00Z");
	table_add(t, long_name);
	out = render(t, 0);
	assert_non_null(strstr(out, long_name));
	assert_non_null(strstr(out, "2026-03-11T00:00:00Z"));
	assert_non_null(strstr(out, "WHEN"));
	free(out);
	table_free(t);
	/* The same table, not wide: no WHEN column, the name shortened. */
	assert_int_equal(table_new(&t, cols, N(cols), false), 0);
	table_add(t, "7");
	table_add(t, "2026-03-11T00:00:00Z");
	table_add(t, long_name);
	out = render(t, 80);
	assert_string_equal(out, "ID FUNCTION\n"
				 " 7 checkout.(*Ledg\xe2\x80\xa6" "eAndBatchWrite\n");
	free(out);
	table_free(t);
}

static void test_columns_shrink_to_fit_80(void **state)
{
	static const table_col cols[] = {
		{"ID", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"SERVICE", TABLE_LEFT, 8, 0},
		{"CAPTURED", TABLE_WHOLE, 0, 0},
		{"FUNCTION", TABLE_LEFT, 12, 0},
		{"N", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
	};
	char name[200];
	table *t = NULL;
	char *out;

	(void)state;
	memset(name, 'f', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	assert_int_equal(table_new(&t, cols, N(cols), false), 0);
	for (int i = 0; i < 3; i++) {
		table_addf(t, "%d", 1000 + i);
		table_add(t, "payments-checkout-service-with-a-very-long-name-indeed");
		table_add(t, "2026-03-11T00:00:00Z");
		table_add(t, name);
		table_addf(t, "%d", i);
	}
	out = render(t, 80);
	/* Whole columns stay whole; both names are shortened. */
	assert_non_null(strstr(out, "1002"));
	assert_non_null(strstr(out, "2026-03-11T00:00:00Z"));
	assert_non_null(strstr(out, "payments-"));
	assert_null(strstr(out, "payments-checkout-service-with-a-very-long-name-indeed"));
	assert_non_null(strstr(out, "\xe2\x80\xa6"));
	/* The title line is exactly 80 columns here: all the room is used. */
	assert_int_equal(line_cols(out, (size_t)(strchr(out, '\n') - out)), 80);
	free(out);
	table_free(t);
}

static void test_shortening_never_splits_an_escape_or_a_character(void **state)
{
	static const table_col cols[] = {{"NAME", TABLE_LEFT, 0, 10}};
	table *t = NULL;
	char *out;

	(void)state;
	assert_int_equal(table_new(&t, cols, N(cols), false), 0);
	/* Head budget 5: "abc" and then "\x1b" (4 columns) would not fit. */
	table_add(t, "abc\x1b" "defghijklmnopqrstuv");
	/* CJK, 2 columns each: 2 fit the head (4 <= 5), the third would not. */
	table_add(t, "\xe4\xb8\x80\xe4\xb8\x81\xe4\xb8\x82\xe4\xb8\x83\xe4\xb8\x84\xe4\xb8\x85");
	/* A C1 escape (8 columns) is dropped whole, never cut. */
	table_add(t, "\xc2\x9b\xc2\x9b\xc2\x9b");
	out = render(t, 10);
	assert_string_equal(out, "NAME\n"
				 "abc\xe2\x80\xa6" "stuv\n"
				 "\xe4\xb8\x80\xe4\xb8\x81\xe2\x80\xa6\xe4\xb8\x84\xe4\xb8\x85\n"
				 "\xe2\x80\xa6\n");
	assert_null(strstr(out, "\x1b"));
	free(out);
	table_free(t);
}

static void test_cells_are_escaped_and_right_aligned(void **state)
{
	static const table_col cols[] = {
		{"NAME", TABLE_LEFT, 0, 0},
		{"COUNT", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
	};
	table *t = NULL;
	char *out;

	(void)state;
	assert_int_equal(table_new(&t, cols, N(cols), false), 0);
	table_add(t, "a\xe2\x80\xae" "b");
	table_add(t, "7");
	table_add(t, NULL);
	table_addf(t, "%d", 12345);
	out = render(t, 80);
	assert_string_equal(out, "NAME       COUNT\n"
				 "a\\u{202e}b     7\n"
				 "-          12345\n");
	free(out);
	table_free(t);
}

static void test_a_missing_last_cell_prints_empty(void **state)
{
	static const table_col cols[] = {{"A", TABLE_LEFT, 0, 0}, {"B", TABLE_LEFT, 0, 0}};
	table *t = NULL;
	char *out;

	(void)state;
	assert_int_equal(table_new(&t, cols, N(cols), false), 0);
	table_add(t, "x");
	out = render(t, 80);
	assert_string_equal(out, "A B\nx\n");
	free(out);
	table_free(t);
}

struct end_case {
	const char *what;
	const char *args;     /* argv, split at spaces; argv[0] is the command */
	bool bad;             /* the command reported a bad option value */
	int min, max;
	const char *operands; /* what cli_end names, or NULL */
	int want;             /* CLI_GO or the exit status */
	const char *first;    /* with CLI_GO: argv[*first], "" when there is none */
	const char *err;      /* all of stderr */
};

static const struct end_case end_cases[] = {
	{"no operands wanted, none given", "cmd", false, 0, 0, NULL, CLI_GO, "", ""},
	{"an operand where none is wanted", "cmd x", false, 0, 0, NULL, EXIT_USAGE, NULL,
	 "profreg t: unexpected argument 'x' (see --help)\n"},
	{"the first operand past the limit is named", "cmd a b c", false, 0, 1, NULL, EXIT_USAGE,
	 NULL, "profreg t: unexpected argument 'b' (see --help)\n"},
	{"one wanted, none given", "cmd", false, 1, 1, "one ID", EXIT_USAGE, NULL,
	 "profreg t: expected one ID (see --help)\n"},
	{"one wanted, two given", "cmd 1 2", false, 1, 1, "one ID", EXIT_USAGE, NULL,
	 "profreg t: expected one ID (see --help)\n"},
	{"operands and options mix", "cmd 7 --top 3", false, 1, 1, "one ID", CLI_GO, "7", ""},
	{"no limit", "cmd a b c", false, 0, -1, NULL, CLI_GO, "a", ""},
	{"too few, nothing named", "cmd a", false, 2, -1, NULL, EXIT_USAGE, NULL,
	 "profreg t: expected at least 2 arguments (see --help)\n"},
	{"--help is exit 0 whatever follows", "cmd --help x y", false, 0, 0, NULL, EXIT_OK, NULL,
	 ""},
	{"--help wins over a bad value before it", "cmd --help", true, 0, 0, NULL, EXIT_OK, NULL,
	 ""},
	{"an unknown option: the parser's message only", "cmd --nope x", false, 0, 0, NULL,
	 EXIT_USAGE, NULL, "profreg t: unknown option '--nope' (see --help)\n"},
	{"a typo of an option names the option meant", "cmd --tpo 3", false, 0, 0, NULL,
	 EXIT_USAGE, NULL, "profreg t: unknown option '--tpo' (did you mean '--top'?)\n"},
	{"a typo of a global option too, with its value", "cmd --qiuet=1", false, 0, 0, NULL,
	 EXIT_USAGE, NULL, "profreg t: unknown option '--qiuet=1' (did you mean '--quiet'?)\n"},
	{"a missing value: the parser's message only", "cmd x --top", false, 0, 0, NULL,
	 EXIT_USAGE, NULL, "profreg t: option '--top' needs a value (see --help)\n"},
	{"a bad value: the command's message only", "cmd x y", true, 1, 1, "one ID", EXIT_USAGE,
	 NULL, ""},
};

/*
 * Run a command's option loop and cli_end on `c`: stderr into *err (free
 * it), the first operand into first_arg.
 */
static int run_end(const struct end_case *c, char **err, char *first_arg, size_t size)
{
	static const cli_option opts[] = {
		{"top", required_argument, 't', "N", "a value"},
		{NULL, 0, 0, NULL, NULL},
	};
	cli_ctx ctx = {.prog = "profreg t"};
	char args[128], *argv[16], *save = NULL;
	cli_parser *p = NULL;
	const char *arg;
	int argc = 0, first = -1, status, k, saved_out, saved_err, null_fd;
	FILE *e = tmpfile();
	long n;

	assert_non_null(e);
	assert_true(strlen(c->args) < sizeof(args));
	strcpy(args, c->args);
	for (char *t = strtok_r(args, " ", &save); t; t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	argv[argc] = NULL;
	/* --help goes to stdout, which the test throws away; messages to e. */
	fflush(stdout);
	saved_out = dup(STDOUT_FILENO);
	saved_err = dup(STDERR_FILENO);
	null_fd = open("/dev/null", O_WRONLY);
	assert_true(saved_out >= 0 && saved_err >= 0 && null_fd >= 0);
	dup2(null_fd, STDOUT_FILENO);
	dup2(fileno(e), STDERR_FILENO);
	assert_int_equal(cli_parser_new(&p, &ctx, argc, argv, opts, "cmd [options]", NULL), 0);
	while ((k = cli_next(p, &arg)) > 0)
		;
	status = cli_end(p, k, c->bad, c->min, c->max, c->operands, &first);
	fflush(stdout);
	dup2(saved_out, STDOUT_FILENO);
	dup2(saved_err, STDERR_FILENO);
	close(saved_out);
	close(saved_err);
	close(null_fd);
	snprintf(first_arg, size, "%s", first >= 0 && first < argc ? argv[first] : "");
	n = ftell(e);
	rewind(e);
	assert_non_null(*err = calloc(1, (size_t)n + 1));
	assert_int_equal(fread(*err, 1, (size_t)n, e), (size_t)n);
	fclose(e);
	return status;
}

static int cmd_nothing(cli_ctx *ctx, int argc, char **argv)
{
	(void)ctx, (void)argc, (void)argv;
	return EXIT_OK;
}

/* cli_dispatch with `word` as the command: its exit status, stderr in *err (free it). */
static int dispatch(const char *word, char **err)
{
	static const cli_command cmds[] = {
		{"list", cmd_nothing, "list"},
		{"show", cmd_nothing, "show"},
		{"serve", cmd_nothing, "serve"},
		{"service", cmd_nothing, "service"},
		{NULL, NULL, NULL},
	};
	cli_ctx ctx = {.prog = "profreg profiles"};
	char w[32], *argv[] = {w, NULL};
	FILE *e = tmpfile();
	int saved, status;
	long n;

	assert_non_null(e);
	snprintf(w, sizeof(w), "%s", word);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	dup2(fileno(e), STDERR_FILENO);
	status = cli_dispatch(&ctx, cmds, "profreg profiles", 1, argv);
	dup2(saved, STDERR_FILENO);
	close(saved);
	n = ftell(e);
	rewind(e);
	assert_non_null(*err = calloc(1, (size_t)n + 1));
	assert_int_equal(fread(*err, 1, (size_t)n, e), (size_t)n);
	fclose(e);
	return status;
}

static void test_unknown_command_names_the_close_one(void **state)
{
	char *err = NULL;

	(void)state;
	assert_int_equal(dispatch("lsit", &err), EXIT_USAGE);
	assert_string_equal(err, "profreg profiles: unknown command 'lsit' (did you mean "
				 "'profreg profiles list'?)\n");
	free(err);
	assert_int_equal(dispatch("servce", &err), EXIT_USAGE);
	assert_string_equal(err, "profreg profiles: unknown command 'servce' (did you mean "
				 "'profreg profiles serve' or 'profreg profiles service'?)\n");
	free(err);
	assert_int_equal(dispatch("export", &err), EXIT_USAGE);
	assert_string_equal(err, "profreg profiles: unknown command 'export' (see 'profreg "
				 "profiles --help')\n");
	free(err);
	assert_int_equal(dispatch("show", &err), EXIT_OK);
	assert_string_equal(err, "");
	free(err);
}

static void test_end_of_options(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(end_cases); i++) {
		const struct end_case *c = &end_cases[i];
		char *err = NULL, first[32];
		int status = run_end(c, &err, first, sizeof(first));

		if (status != c->want)
			fail_msg("%s: returned %d, want %d", c->what, status, c->want);
		if (strcmp(err, c->err) != 0)
			fail_msg("%s: stderr '%s', want '%s'", c->what, err, c->err);
		if (c->want == CLI_GO && strcmp(first, c->first) != 0)
			fail_msg("%s: first operand '%s', want '%s'", c->what, first, c->first);
		free(err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape_table),
		cmocka_unit_test(test_escaped_form_holds_no_control_byte),
		cmocka_unit_test(test_unit_next_steps_over_whole_characters),
		cmocka_unit_test(test_put_safe_pads_by_display_columns),
		cmocka_unit_test(test_long_name_loses_its_middle),
		cmocka_unit_test(test_wide_shows_everything),
		cmocka_unit_test(test_columns_shrink_to_fit_80),
		cmocka_unit_test(test_shortening_never_splits_an_escape_or_a_character),
		cmocka_unit_test(test_cells_are_escaped_and_right_aligned),
		cmocka_unit_test(test_a_missing_last_cell_prints_empty),
		cmocka_unit_test(test_end_of_options),
		cmocka_unit_test(test_unknown_command_names_the_close_one),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
