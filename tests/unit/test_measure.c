/*
 * test_measure.c: how a finding's values read, a share against each unit
 * of a whole-service cost.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "reports/measure.h"

static void test_a_share_reads_in_percent_and_points(void **state)
{
	char b[MEASURE_TEXT_MAX];

	(void)state;
	assert_string_equal(measure_value(b, sizeof(b), NULL, 0.3004), "30.04%");
	assert_string_equal(measure_pair(b, sizeof(b), NULL, 0.0192, 0.0408, " -> "),
			    "1.92% -> 4.08%");
	assert_string_equal(measure_change(b, sizeof(b), NULL, 0.1326, 0.1217, 0.1437, 2),
			    "+13.26pp [+12.17, +14.37]");
	assert_string_equal(measure_change(b, sizeof(b), NULL, -0.0005, NAN, NAN, 3), "-0.050pp");
	assert_string_equal(measure_name(NULL), "self share");
	/* A tiny change found with lowered margins never reads as none. */
	assert_string_equal(measure_pair(b, sizeof(b), NULL, 0.00150, 0.00153, " -> "),
			    "0.150% -> 0.153%");
	assert_string_equal(measure_change(b, sizeof(b), NULL, 0.00003, 0.00001, 0.00005, 2),
			    "+0.003pp [+0.001, +0.005]");
	assert_string_equal(measure_change(b, sizeof(b), NULL, 0, NAN, NAN, 2), "+0.00pp");
}

static void test_a_cost_reads_in_its_unit_and_its_change_in_percent(void **state)
{
	char b[MEASURE_TEXT_MAX];

	(void)state;
	assert_string_equal(measure_value(b, sizeof(b), "cpu_s_per_s", 0.3004), "0.300 CPU s/s");
	assert_string_equal(measure_pair(b, sizeof(b), "cpu_s_per_s", 0.3004, 0.4298, " -> "),
			    "0.300 -> 0.430 CPU s/s");
	assert_string_equal(measure_change(b, sizeof(b), "cpu_s_per_s", 0.4309, 0.3393, 0.5287, 2),
			    "+43.1% [+33.9%, +52.9%]");
	assert_string_equal(measure_value(b, sizeof(b), "per_load", 0.0123),
			    "0.0123 per unit of load");
	/*
	 * A cost per unit of load keeps its unit: CPU per request read
	 * "0.0027->0.00369 per unit of load".
	 */
	assert_string_equal(
		measure_pair(b, sizeof(b), "per_load:cpu_s_per_s", 0.0027, 0.00369, " -> "),
		"2.70 -> 3.69 ms CPU per unit of load");
	assert_string_equal(measure_value(b, sizeof(b), "per_load:cpu_s_per_s", 0.00042),
			    "420.00 us CPU per unit of load");
	assert_string_equal(measure_value(b, sizeof(b), "per_load:bytes_per_s", 17700),
			    "17.29 KiB per unit of load");
	assert_string_equal(measure_value(b, sizeof(b), "per_load:value_per_s", 12.5),
			    "12.5 per unit of load");
	/* A wall profile's time is not CPU time. */
	assert_string_equal(measure_value(b, sizeof(b), "wall_s_per_s", 1.5), "1.500 wall s/s");
	assert_string_equal(measure_value(b, sizeof(b), "per_load:wall_s_per_s", 0.0125),
			    "12.50 ms wall per unit of load");
	assert_string_equal(measure_value(b, sizeof(b), "value_per_s", 950), "950/s");
	assert_string_equal(measure_value(b, sizeof(b), "value_per_s", 1520), "1.52k/s");
	assert_string_equal(measure_pair(b, sizeof(b), "bytes_per_s", 9984.8, 20123.1, " -> "),
			    "9.75 -> 19.65 KiB/s");
	assert_string_equal(measure_name("bytes"), "whole-service cost");
	/* Goroutines are counted: a geometric mean reads as a whole number. */
	assert_string_equal(measure_pair(b, sizeof(b), "goroutines", 60.4, 84.6, " -> "),
			    "60 -> 85 goroutines");
	/* A unit this version does not know is a plain number, never a share. */
	assert_string_equal(measure_value(b, sizeof(b), "joules", 0.25), "0.25");
}

/* Both values of a pair in the larger one's unit: no "900.00 MiB -> 1.17 GiB". */
static void test_bytes_take_one_binary_prefix_for_both_values(void **state)
{
	char b[MEASURE_TEXT_MAX];

	(void)state;
	assert_string_equal(measure_value(b, sizeof(b), "bytes", 512), "512 B");
	assert_string_equal(measure_value(b, sizeof(b), "bytes", 1.5 * 1024 * 1024),
			    "1.50 MiB");
	assert_string_equal(measure_pair(b, sizeof(b), "bytes", 900.0 * 1024 * 1024,
					 1200.0 * 1024 * 1024, " -> "),
			    "0.88 -> 1.17 GiB");
}

static void test_unknown_values_read_as_a_dash(void **state)
{
	char b[MEASURE_TEXT_MAX];

	(void)state;
	assert_string_equal(measure_value(b, sizeof(b), NULL, NAN), "-");
	assert_string_equal(measure_value(b, sizeof(b), "bytes", NAN), "-");
	assert_string_equal(measure_pair(b, sizeof(b), "cpu_s_per_s", NAN, 0.5, " -> "),
			    "- -> 0.500 CPU s/s");
	assert_string_equal(measure_change(b, sizeof(b), "bytes", NAN, 0.1, 0.2, 2), "-");
}

/* A buffer too small is cut, never overrun. */
static void test_a_small_buffer_is_cut_and_terminated(void **state)
{
	char b[8];

	(void)state;
	assert_string_equal(measure_pair(b, sizeof(b), "per_load", 0.0123, 0.015, " -> "),
			    "0.0123 ");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_share_reads_in_percent_and_points),
		cmocka_unit_test(test_a_cost_reads_in_its_unit_and_its_change_in_percent),
		cmocka_unit_test(test_bytes_take_one_binary_prefix_for_both_values),
		cmocka_unit_test(test_unknown_values_read_as_a_dash),
		cmocka_unit_test(test_a_small_buffer_is_cut_and_terminated),
	};
	return cmocka_run_group_tests_name("measure", tests, NULL, NULL);
}
