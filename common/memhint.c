/*
 * memhint.c: huge page hints for large buffers (see memhint.h).
 */
#define _DEFAULT_SOURCE
#include "common/memhint.h"

#include <stdint.h>
#include <sys/mman.h>

#define PAGE ((uintptr_t)4096)

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
