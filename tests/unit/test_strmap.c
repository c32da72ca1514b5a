/*
 * test_strmap.c: the interning map finds what it holds, and names made
 * to collide do not pile up in one run of slots.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/strmap.h"

/* 2^STAGES names of 2 * STAGES bytes, built by colliding_names. */
#define STAGES 12
#define NNAMES (1u << STAGES)
#define LOW_BITS 16

static uint32_t fnv_low(uint32_t h, const unsigned char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (uint32_t)(((h ^ b[i]) * 1099511628211ULL) & ((1u << LOW_BITS) - 1));
	return h;
}

/*
 * Names whose plain FNV-1a hashes (offset basis, no seed) agree in their
 * low 16 bits, which is all a table of up to 65536 slots looks at. The low
 * bits of FNV-1a depend only on the low bits before each byte, so two
 * 2-byte blocks that lead from one state to the same next state can be
 * swapped freely: STAGES such pairs give 2^STAGES names. Each pair is
 * found by trying blocks until two land alike (a birthday search).
 */
static char *colliding_names(void)
{
	unsigned char pair[STAGES][2][2];
	uint32_t h = (uint32_t)(1469598103934665603ULL & ((1u << LOW_BITS) - 1));
	uint32_t *seen = malloc((1u << LOW_BITS) * sizeof(*seen));
	char *names = malloc((size_t)NNAMES * 2 * STAGES);

	assert_non_null(seen);
	assert_non_null(names);
	for (int s = 0; s < STAGES; s++) {
		memset(seen, 0xff, (1u << LOW_BITS) * sizeof(*seen));
		for (uint32_t b = 0;; b++) {
			unsigned char blk[2] = {(unsigned char)(b >> 8), (unsigned char)b};
			uint32_t next = fnv_low(h, blk, 2);
			assert_true(b < 0x10000);
			if (seen[next] != UINT32_MAX) {
				pair[s][0][0] = (unsigned char)(seen[next] >> 8);
				pair[s][0][1] = (unsigned char)seen[next];
				memcpy(pair[s][1], blk, 2);
				h = next;
				break;
			}
			seen[next] = b;
		}
	}
	for (uint32_t i = 0; i < NNAMES; i++)
		for (int s = 0; s < STAGES; s++)
			memcpy(names + (size_t)i * 2 * STAGES + 2 * s, pair[s][(i >> s) & 1], 2);
	free(seen);
	return names;
}

static void test_keys_are_found_with_their_values(void **state)
{
	strmap m = STRMAP_INIT;
	char key[32];
	uint32_t v;
	const char *stored;

	(void)state;
	assert_int_equal(strmap_get(&m, "a", 1, &v), 0);
	for (uint32_t i = 0; i < 10000; i++) {
		int n = snprintf(key, sizeof(key), "name %u", i);
		assert_int_equal(strmap_put(&m, key, (size_t)n, i, &v, NULL), 1);
		assert_int_equal(v, i);
	}
	assert_int_equal(strmap_put(&m, "name 7", 6, 99, &v, &stored), 0);
	assert_int_equal(v, 7);
	assert_string_equal(stored, "name 7");
	assert_int_equal(strmap_put(&m, "a\0b", 3, 5, &v, NULL), 1);
	assert_int_equal(strmap_get(&m, "a\0b", 3, &v), 1);
	assert_int_equal(v, 5);
	assert_int_equal(strmap_get(&m, "a", 1, &v), 0);
	for (uint32_t i = 0; i < 10000; i += 997) {
		int n = snprintf(key, sizeof(key), "name %u", i);
		assert_int_equal(strmap_get(&m, key, (size_t)n, &v), 1);
		assert_int_equal(v, i);
	}
	strmap_release(&m);
}

/*
 * A profile's names are anyone's to choose. With an unseeded FNV-1a, the
 * names above all took one slot and its neighbours: inserting n of them
 * cost n^2 / 2 probes, and a 40 MB folded file of such names kept a parse
 * busy for minutes. Spread, the longest run of taken slots at the map's
 * load of at most 3/4 stays within a few dozen.
 */
static void test_names_made_to_collide_spread_over_the_table(void **state)
{
	strmap m = STRMAP_INIT;
	char *names = colliding_names();
	size_t run = 0, longest = 0;
	uint32_t v;

	(void)state;
	for (uint32_t i = 0; i < NNAMES; i++)
		assert_int_equal(strmap_put(&m, names + (size_t)i * 2 * STAGES, 2 * STAGES, i,
					    &v, NULL), 1);
	assert_int_equal(m.count, NNAMES);
	for (size_t i = 0; i < 2 * m.cap; i++) {
		run = m.slots[i & (m.cap - 1)].key ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	assert_true(longest < 256);
	for (uint32_t i = 0; i < NNAMES; i += 101) {
		assert_int_equal(strmap_get(&m, names + (size_t)i * 2 * STAGES, 2 * STAGES, &v),
				 1);
		assert_int_equal(v, i);
	}
	free(names);
	strmap_release(&m);
}

/*
 * Names of 2 * STAGES eight-byte words, word 2s and 2s + 1 both as they
 * are or both with their top bit set, in every combination. A hash that
 * multiplies each word into its state in 64 bits carries the change of
 * a top bit to the top bit alone, and the next word undoes it, whatever
 * the seed: all 2^STAGES names would land in one slot.
 */
static void test_names_alike_but_for_the_top_bits_of_words_spread_over_the_table(void **state)
{
	enum { WORDS = 2 * STAGES };
	strmap m = STRMAP_INIT;
	char *names = malloc((size_t)NNAMES * WORDS * 8);
	size_t run = 0, longest = 0;
	uint32_t v;

	(void)state;
	assert_non_null(names);
	for (uint32_t i = 0; i < NNAMES; i++)
		for (int k = 0; k < WORDS; k++) {
			uint64_t w = 0x6e69616d2e707061ULL; /* "app.main" */
			if ((i >> (k / 2)) & 1)
				w ^= 1ULL << 63;
			memcpy(names + ((size_t)i * WORDS + (size_t)k) * 8, &w, 8);
		}
	for (uint32_t i = 0; i < NNAMES; i++)
		assert_int_equal(
			strmap_put(&m, names + (size_t)i * WORDS * 8, WORDS * 8, i, &v, NULL), 1);
	assert_int_equal(m.count, NNAMES);
	for (size_t i = 0; i < 2 * m.cap; i++) {
		run = m.slots[i & (m.cap - 1)].key ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	assert_true(longest < 256);
	free(names);
	strmap_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys_are_found_with_their_values),
		cmocka_unit_test(test_names_made_to_collide_spread_over_the_table),
		cmocka_unit_test(
			test_names_alike_but_for_the_top_bits_of_words_spread_over_the_table),
	};
	return cmocka_run_group_tests_name("strmap", tests, NULL, NULL);
}
