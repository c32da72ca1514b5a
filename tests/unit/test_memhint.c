/*
 * test_memhint.c: the huge page hint on large buffers.
 *
 * The hint is checked where the kernel records it: the VmFlags line of the
 * mapping in /proc/self/smaps carries "hg" once MADV_HUGEPAGE took. Where
 * transparent huge pages are off or unknown, that part is skipped.
 */
#define _DEFAULT_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/memhint.h"

#define MiB ((size_t)1 << 20)

/* Whether the kernel hands out huge pages on madvise at all. */
static bool thp_available(void)
{
	char line[256] = "";
	FILE *fp = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (!fp)
		return false;
	if (!fgets(line, sizeof(line), fp))
		line[0] = '\0';
	fclose(fp);
	return strstr(line, "[always]") || strstr(line, "[madvise]");
}

/* The VmFlags of the mapping that holds address `a`; false when not found. */
static bool vm_flags_of(uintptr_t a, char *out, size_t n)
{
	char line[512];
	bool in = false, found = false;
	FILE *fp = fopen("/proc/self/smaps", "r");

	if (!fp)
		return false;
	while (!found && fgets(line, sizeof(line), fp)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') &&
		    line[strspn(line, "0123456789abcdef")] == '-')
			in = a >= lo && a < hi;
		else if (in && strncmp(line, "VmFlags:", 8) == 0) {
			snprintf(out, n, "%s", line + 8);
			found = true;
		}
	}
	fclose(fp);
	return found;
}

static void test_small_and_null_buffers_are_left_alone(void **state)
{
	char small[64];

	(void)state;
	assert_false(mem_hint_huge(NULL, 64 * MiB));
	assert_false(mem_hint_huge(small, sizeof(small)));
	assert_false(mem_hint_huge(small, MEM_HINT_MIN - 1));
}

static void test_large_buffer_is_marked_and_keeps_its_bytes(void **state)
{
	size_t len = 16 * MiB;
	unsigned char *p = malloc(len);
	uintptr_t mid;
	char flags[512];

	(void)state;
	assert_non_null(p);
	for (size_t i = 0; i < len; i += 4093)
		p[i] = (unsigned char)(i * 31);
	if (!thp_available()) {
		free(p);
		skip();
	}
	assert_true(mem_hint_huge(p, len));
	for (size_t i = 0; i < len; i += 4093)
		assert_int_equal(p[i], (unsigned char)(i * 31));
	/* The middle of a 16 MiB buffer lies in its 2 MiB-aligned interior. */
	mid = ((uintptr_t)p + len / 2) & ~(((uintptr_t)2 << 20) - 1);
	assert_true(vm_flags_of(mid, flags, sizeof(flags)));
	if (!strstr(flags, " hg"))
		fail_msg("no 'hg' in the VmFlags of the hinted buffer:%s", flags);
	free(p);
}

/* Nothing past the pages of [p, p + len) is hinted. */
static void test_hint_stays_inside_the_buffer(void **state)
{
	size_t len = 8 * MiB;
	unsigned char *p = malloc(len + 4 * MiB);
	uintptr_t past;
	char flags[512];

	(void)state;
	assert_non_null(p);
	if (!thp_available()) {
		free(p);
		skip();
	}
	/* Hint only the first 8 MiB: the next page starts the unmarked rest. */
	assert_true(mem_hint_huge(p, len));
	past = ((uintptr_t)p + len + 4095) & ~(uintptr_t)4095;
	assert_true(vm_flags_of(past, flags, sizeof(flags)));
	if (strstr(flags, " hg"))
		fail_msg("the bytes past the hinted buffer are marked too:%s", flags);
	free(p);
}

/*
 * A large malloc block hinted whole stays one mapping: its first byte is
 * marked like its middle, and realloc grows it in place of a copy (a split
 * mapping makes mremap fail, and realloc falls back to copying).
 */
static void test_whole_block_is_marked_so_it_stays_one_mapping(void **state)
{
	size_t len = 8 * MiB;
	unsigned char *p = malloc(len), *q;
	char flags[512];

	(void)state;
	assert_non_null(p);
	if (!thp_available()) {
		free(p);
		skip();
	}
	memset(p, 0x5a, len);
	assert_true(mem_hint_huge(p, len));
	assert_true(vm_flags_of((uintptr_t)p, flags, sizeof(flags)));
	if (!strstr(flags, " hg"))
		fail_msg("the first page of the hinted block is not marked:%s", flags);
	q = realloc(p, 2 * len);
	assert_non_null(q);
	for (size_t i = 0; i < len; i += 4093)
		assert_int_equal(q[i], 0x5a);
	free(q);
}

/*
 * After mem_hint_heap, a block of several megabytes comes from the hinted
 * heap (malloc would otherwise map it on its own, unmarked), and a block
 * freed and asked for again is served from the same marked memory.
 */
static void test_heap_hint_puts_large_blocks_on_huge_pages(void **state)
{
	size_t len = 8 * MiB;
	unsigned char *p, *q;
	char flags[512];

	(void)state;
#if defined(__SANITIZE_ADDRESS__)
	skip(); /* the sanitizer's allocator has no heap to hint */
#endif
	if (!thp_available())
		skip();
	assert_true(mem_hint_heap(64 * MiB));
	p = malloc(len);
	assert_non_null(p);
	memset(p, 0x33, len);
	assert_true(vm_flags_of((uintptr_t)p + len / 2, flags, sizeof(flags)));
	if (!strstr(flags, " hg"))
		fail_msg("an 8 MiB block after the heap hint is not marked:%s", flags);
	free(p);
	q = malloc(len);
	assert_non_null(q);
	assert_true(vm_flags_of((uintptr_t)q + len / 2, flags, sizeof(flags)));
	if (!strstr(flags, " hg"))
		fail_msg("a block asked for again after a free is not marked:%s", flags);
	free(q);
	/* Too small to be worth a heap of its own. */
	assert_false(mem_hint_heap(MEM_HINT_MIN - 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_and_null_buffers_are_left_alone),
		cmocka_unit_test(test_large_buffer_is_marked_and_keeps_its_bytes),
		cmocka_unit_test(test_hint_stays_inside_the_buffer),
		cmocka_unit_test(test_whole_block_is_marked_so_it_stays_one_mapping),
		/* Last: it changes malloc's settings for the rest of the process. */
		cmocka_unit_test(test_heap_hint_puts_large_blocks_on_huge_pages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
