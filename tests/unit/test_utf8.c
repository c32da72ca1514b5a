/*
 * test_utf8.c: which byte sequences are UTF-8, at the edges of each
 * length, for text from outside on its way into the database and pages.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/utf8.h"

static size_t seq(const char *s)
{
	return utf8_seq_len((const unsigned char *)s, strlen(s));
}

static void test_each_length_is_read_to_its_last_code_point(void **state)
{
	(void)state;
	assert_int_equal(seq("a"), 1);
	assert_int_equal(seq("\x7f"), 1);
	assert_int_equal(seq("\xc2\x80"), 2);             /* U+0080 */
	assert_int_equal(seq("\xdf\xbf"), 2);             /* U+07FF */
	assert_int_equal(seq("\xe0\xa0\x80"), 3);         /* U+0800 */
	assert_int_equal(seq("\xef\xbf\xbd"), 3);         /* U+FFFD */
	assert_int_equal(seq("\xf0\x90\x80\x80"), 4);     /* U+10000 */
	assert_int_equal(seq("\xf4\x8f\xbf\xbf"), 4);     /* U+10FFFF */
}

static void test_overlongs_surrogates_and_values_past_the_last_are_not(void **state)
{
	(void)state;
	assert_int_equal(seq("\xc0\xaf"), 0);             /* '/' in two bytes */
	assert_int_equal(seq("\xc1\xbf"), 0);
	assert_int_equal(seq("\xe0\x9f\xbf"), 0);         /* U+07FF in three */
	assert_int_equal(seq("\xf0\x8f\xbf\xbf"), 0);     /* U+FFFF in four */
	assert_int_equal(seq("\xed\xa0\x80"), 0);         /* U+D800 */
	assert_int_equal(seq("\xed\xbf\xbf"), 0);         /* U+DFFF */
	assert_int_equal(seq("\xf4\x90\x80\x80"), 0);     /* U+110000 */
	assert_int_equal(seq("\xf5\x80\x80\x80"), 0);
	assert_int_equal(seq("\xff"), 0);
	assert_int_equal(seq("\x80"), 0);                 /* a lone continuation */
}

static void test_a_sequence_cut_short_is_not(void **state)
{
	(void)state;
	assert_int_equal(utf8_seq_len((const unsigned char *)"\xe2\x82\xac", 2), 0);
	assert_int_equal(seq("\xe2\x82"), 0);
	assert_int_equal(seq("\xf0\x9f\x98"), 0);
	assert_int_equal(seq("\xc3"), 0);
	assert_int_equal(seq("\xc3x"), 0);
}

static void test_a_string_is_valid_only_whole_and_without_nul(void **state)
{
	(void)state;
	assert_true(utf8_valid("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14));
	assert_true(utf8_valid("", 0));
	assert_false(utf8_valid("v1\xff", 3));
	assert_false(utf8_valid("caf\xc3", 4));
	assert_false(utf8_valid("a\0b", 3));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_length_is_read_to_its_last_code_point),
		cmocka_unit_test(test_overlongs_surrogates_and_values_past_the_last_are_not),
		cmocka_unit_test(test_a_sequence_cut_short_is_not),
		cmocka_unit_test(test_a_string_is_valid_only_whole_and_without_nul),
	};
	return cmocka_run_group_tests_name("utf8", tests, NULL, NULL);
}
