/*
 * memhint.c: huge page hints for large buffers (see memhint.h).
 */
#define _DEFAULT_SOURCE
#include "common/memhint.h"

#include <stdint.h>
#include <sys/mman.h>

#define HUGE_PAGE ((uintptr_t)2 << 20)

bool mem_hint_huge(void *p, size_t len)
{
#ifdef MADV_HUGEPAGE
	uintptr_t start = (uintptr_t)p, end;

	if (!p || len < MEM_HINT_MIN || start > UINTPTR_MAX - len)
		return false;
	end = (start + len) & ~(HUGE_PAGE - 1);
	start = (start + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	if (end <= start)
		return false;
	return madvise((void *)start, end - start, MADV_HUGEPAGE) == 0;
#else
	(void)p;
	(void)len;
	return false;
#endif
}
