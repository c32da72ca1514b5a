/*
 * test_redact.c: excerpts of untrusted text for error messages. Each case
 * is an input and the excerpt it must give: words that name what was
 * wrong are kept, anything that can carry payment data or a secret is
 * only counted.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/redact.h"
#include "pipeline/profile.h"

typedef struct excerpt_case {
	const char *in;
	const char *want;
} excerpt_case;

static void check_cases(const excerpt_case *c, size_t n, size_t size)
{
	char out[256];

	for (size_t i = 0; i < n; i++) {
		redact_excerpt(out, size, c[i].in, strlen(c[i].in));
		if (strcmp(out, c[i].want) != 0)
			fail_msg("'%s': got '%s', want '%s'", c[i].in, out, c[i].want);
	}
}

static void test_harmless_words_are_kept(void **state)
{
	static const excerpt_case cases[] = {
		{"nanosecondz", "nanosecondz"},
		{"cpu-time", "cpu-time"},
		{"Sampled", "Sampled"},
		{"jdk.ExecutionSample", "jdk.ExecutionSample"},
		{"main;foo", "main;foo"},
		{"inuse_space", "inuse_space"},
		{"text/plain", "text/plain"},
		{"error: profiling already in use", "error: profiling already in use"},
		{"  plain\r\n\tlines ", "plain lines"},
		{"", ""},
	};

	(void)state;
	check_cases(cases, sizeof(cases) / sizeof(cases[0]), 256);
}

static void test_numbers_pairs_and_secrets_are_counted(void **state)
{
	static const excerpt_case cases[] = {
		/* Digits: card numbers, CVVs, tokens. */
		{"card=4111111111111111", "<21 bytes>"},
		{"4111111111111111", "<16 bytes>"},
		{"1e3", "<3 bytes>"},
		{"cvv 123", "cvv <3 bytes>"},
		/* key=value, user:pass, e-mail, URLs and their queries. */
		{"password=hunter", "<15 bytes>"},
		{"alice:hunter", "<12 bytes>"},
		{"alice@example.com", "<17 bytes>"},
		{"a?b", "<3 bytes>"},
		{"a&b", "<3 bytes>"},
		/* Everything after a word that names a secret. */
		{"password is hunter", "password <9 bytes>"},
		{"Authorization: Bearer abcdef", "Authorization: <13 bytes>"},
		{"my secret sauce", "my secret <5 bytes>"},
		{"api_key letmein", "api_key <7 bytes>"},
		{"token", "token"},
		/* A run of words is one placeholder, its spaces counted in it. */
		{"card 4111111111111111 password=hunter2", "card <33 bytes>"},
		{"a 12 34 b", "a <5 bytes> b"},
		/* Long words: a secret of letters only is long. */
		{"abcdefghijklmnopqrstuvwxyzABCDEFG", "<33 bytes>"},
		{"abcdefghijklmnopqrstuvwxyzABCDEF", "abcdefghijklmnopqrstuvwxyzABCDEF"},
		/* Quotes would end the quote around the excerpt, '<' forge a placeholder. */
		{"it's", "<4 bytes>"},
		{"\"x\"", "<3 bytes>"},
		{"<1 byte>", "<8 bytes>"},
		/* No control byte and nothing outside ASCII passes. */
		{"\x1b[31mred", "<8 bytes>"},
		{"a\x01 b", "<2 bytes> b"},
		{"caf\xc3\xa9", "<5 bytes>"},
		{"x\x7f", "<2 bytes>"},
	};

	(void)state;
	check_cases(cases, sizeof(cases) / sizeof(cases[0]), 256);
}

static void test_a_full_excerpt_is_cut_between_words(void **state)
{
	static const excerpt_case cases[] = {
		{"alpha beta gamma delta", "alpha beta..."},
		{"alpha 4111111111111111", "alpha..."},
		{"abcdefghijklmnop", "..."},
		{"abcdefghijk", "abcdefghijk"},
	};
	char out[40], tiny[3];
	char big[200];

	(void)state;
	check_cases(cases, sizeof(cases) / sizeof(cases[0]), 16);
	/* Too small for "...": empty, never past the end. */
	memset(tiny, 'z', sizeof(tiny));
	redact_excerpt(tiny, sizeof(tiny), "abc", 3);
	assert_string_equal(tiny, "");
	redact_excerpt(out, 0, "abc", 3);
	/* profile_quote: the same rule in 40 bytes. */
	memset(big, 'a', sizeof(big));
	profile_quote(out, big, sizeof(big));
	assert_string_equal(out, "<200 bytes>");
	assert_string_equal(profile_quote(out, "unknown card=4111111111111111", 29),
			    "unknown <21 bytes>");
	for (size_t i = 0; i < 50; i++)
		big[i] = i % 2 ? ' ' : 'w';
	profile_quote(out, big, 50);
	assert_true(strlen(out) < 40);
	assert_non_null(strstr(out, "..."));
}

/*
 * A commit's subject is read by people: it stays readable, and what
 * could be payment data or a secret in it goes.
 */
static void test_a_message_keeps_its_words_and_loses_cards_mails_and_secrets(void **state)
{
	static const excerpt_case c[] = {
		{"Fix refund for card 4111111111111111 (customer john.doe@example.com) "
		 "token=abcd1234",
		 "Fix refund for card # (customer <21 bytes> token=<8 bytes>"},
		{"Retry 4111-1111-1111-1111 twice; password: hunter2 was wrong",
		 "Retry # twice; password: <7 bytes> was wrong"},
		{"Bump libfoo to 1.2.3 and fix the session cache (#4512)",
		 "Bump libfoo to 1.2.3 and fix the session cache (#4512)"},
		{"api_key=XYZ  and  auth:", "api_key=<3 bytes>  and  auth:"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(*c); i++) {
		char *got = redact_message(c[i].in);
		assert_non_null(got);
		if (strcmp(got, c[i].want) != 0)
			fail_msg("'%s': got '%s', want '%s'", c[i].in, got, c[i].want);
		free(got);
	}
}

/* redact_names on `in`, compared with `want`. */
static void check_names(const char *in, const char *want)
{
	char buf[256];
	size_t n = strlen(in);

	assert_true(n < sizeof(buf));
	memcpy(buf, in, n + 1);
	n = redact_names(buf, n);
	buf[n] = '\0';
	if (strcmp(buf, want) != 0)
		fail_msg("'%s' became '%s', not '%s'", in, buf, want);
}

static void test_names_lose_mail_addresses_ibans_and_key_ids(void **state)
{
	(void)state;
	check_names("user_jane.doe@example.com", "#");
	check_names("charge(jane+vip@mail.example.co.uk)", "charge(#)");
	check_names("/srv/jane.doe@example.com/pay.go", "/srv/#/pay.go");
	check_names("iban_DE89370400440532013000", "iban_#");
	check_names("pay GB82WEST12345698765432 now", "pay # now");
	check_names("aws_AKIAIOSFODNN7EXAMPLE", "aws_#");
	check_names("charge_4111111111111111", "charge_#");
	/* Not addresses: symbol versions, module versions, packages, plt. */
	check_names("memcpy@GLIBC_2.14", "memcpy@GLIBC_2.14");
	check_names("memcpy@@GLIBC_2.2.5", "memcpy@@GLIBC_2.2.5");
	check_names("github.com/x/bar@v1.2.3/pkg.Func", "github.com/x/bar@v1.2.3/pkg.Func");
	check_names("node_modules/@babel/core/lib/index.js",
		    "node_modules/@babel/core/lib/index.js");
	check_names(".pnpm/core@7.22.5/x.js", ".pnpm/core@7.22.5/x.js");
	check_names("foo@plt", "foo@plt");
	check_names("x@1.2.ts", "x@1.2.ts");
	/* Not IBANs or key ids: a failed check, letters around, too short. */
	check_names("DE89370400440532013001", "DE89370400440532013001");
	check_names("xDE89370400440532013000", "xDE89370400440532013000");
	check_names("AB12CD", "AB12CD");
	check_names("AKIAIOSFODNN7EXAMPL", "AKIAIOSFODNN7EXAMPL");
	check_names("com.example.ChargeService.charge", "com.example.ChargeService.charge");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_harmless_words_are_kept),
		cmocka_unit_test(test_numbers_pairs_and_secrets_are_counted),
		cmocka_unit_test(test_a_full_excerpt_is_cut_between_words),
		cmocka_unit_test(test_a_message_keeps_its_words_and_loses_cards_mails_and_secrets),
		cmocka_unit_test(test_names_lose_mail_addresses_ibans_and_key_ids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
