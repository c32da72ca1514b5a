/*
 * memhint.c: huge page hints for large buffers (see memhint.h).
 */
#define _DEFAULT_SOURCE
#include "common/memhint.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE ((uintptr_t)4096)
#define HUGE ((uintptr_t)2 << 20)
/* glibc's largest mmap threshold on 64-bit systems */
#define HEAP_BLOCK_MAX (32 << 20)

bool mem_hint_huge(void *p, size_t len)
{
#ifdef MADV_HUGEPAGE
	uintptr_t start = (uintptr_t)p, end;

	if (!p || len < MEM_HINT_MIN || start > UINTPTR_MAX - len - PAGE)
		return false;
	/*
	 * The whole pages the buffer spans, not just its 2 MiB-aligned
	 * interior: a large malloc block is a mapping of its own, and hinting
	 * all of it keeps it one mapping, which realloc can still grow with
	 * mremap instead of copying. (The kernel backs only the aligned 2 MiB
	 * ranges with huge pages either way.)
	 */
	end = (start + len + PAGE - 1) & ~(PAGE - 1);
	start &= ~(PAGE - 1);
	return madvise((void *)start, end - start, MADV_HUGEPAGE) == 0;
#else
	(void)p;
	(void)len;
	return false;
#endif
}

#if defined(MADV_HUGEPAGE) && defined(M_TOP_PAD)
static void *heap_pad;
#endif

bool mem_hint_heap(size_t bytes)
{
#if defined(MADV_HUGEPAGE) && defined(M_TOP_PAD)
	uintptr_t start, end;
	size_t top;
	void *block;

	if (bytes < MEM_HINT_MIN || bytes > (size_t)INT32_MAX)
		return false;
	/*
	 * Every thread's blocks from the one heap, large blocks too (not
	 * mappings of their own), freed memory kept, and the heap grown by
	 * `bytes` at once when it next grows.
	 */
	if (!mallopt(M_ARENA_MAX, 1) || !mallopt(M_MMAP_THRESHOLD, HEAP_BLOCK_MAX) ||
	    !mallopt(M_TRIM_THRESHOLD, (int)(bytes * 2 > INT32_MAX ? INT32_MAX : bytes * 2)) ||
	    !mallopt(M_TOP_PAD, (int)bytes))
		return false;
	/*
	 * The next blocks come from the heap's free top. A block kept for good
	 * up to the next 2 MiB boundary (at most 2 MiB of address space, one
	 * page of it used) makes the blocks after it start on a huge page;
	 * then a block larger than what is left of the top makes the heap
	 * grow now, by `bytes` more, all of it hinted.
	 */
	top = mallinfo2().keepcost;
	if ((start = (uintptr_t)sbrk(0)) == (uintptr_t)-1 || start < top)
		return false;
	start -= top;
	if (!heap_pad && ((start + HUGE - 1) & ~(HUGE - 1)) - start > PAGE &&
	    (heap_pad = malloc(((start + HUGE - 1) & ~(HUGE - 1)) - start - 64)))
		start = (start + HUGE - 1) & ~(HUGE - 1);
	top = mallinfo2().keepcost;
	if (top + MEM_HINT_MIN <= HEAP_BLOCK_MAX) {
		if (!(block = malloc(top + MEM_HINT_MIN)))
			return false;
		free(block);
	}
	if ((end = (uintptr_t)sbrk(0)) == (uintptr_t)-1 || end <= start)
		return false;
	/* The whole huge pages of that. */
	start = (start + HUGE - 1) & ~(HUGE - 1);
	end &= ~(HUGE - 1);
	return end > start && madvise((void *)start, end - start, MADV_HUGEPAGE) == 0;
#else
	(void)bytes;
	return false;
#endif
}
