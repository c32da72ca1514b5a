/*
 * memhint.h: telling the kernel how a large buffer will be used.
 *
 * A parse of a 20 MB capture writes tens of megabytes of fresh memory (the
 * decompressed text, the frames, the call tree), and every first write to
 * a 4 KiB page is a page fault. On a virtual machine a fault costs several
 * microseconds, enough to make the faults most of `profreg diff`'s time.
 * Backing such a buffer with transparent huge pages turns 512 faults into
 * one. The hint changes no byte of the buffer and is never required: where
 * the kernel does not support it, it does nothing.
 */
#ifndef PR_MEMHINT_H
#define PR_MEMHINT_H

#include <stdbool.h>
#include <stddef.h>

/* Buffers smaller than this are left alone (no whole huge page inside). */
#define MEM_HINT_MIN ((size_t)4 << 20)

/*
 * Ask for huge pages on the 4 KiB pages that [p, p + len) spans; the
 * caller owns the buffer (from malloc or realloc). The hint covers whole
 * pages so that a large malloc block stays one mapping (realloc can grow
 * it with mremap); no byte anywhere changes, and nothing past those pages
 * is touched. Returns true when the kernel took the hint, false when the
 * buffer is too small or the kernel refused (no error: it is a hint).
 * Call again after a realloc moves or grows the buffer.
 */
bool mem_hint_huge(void *p, size_t len);

#endif
