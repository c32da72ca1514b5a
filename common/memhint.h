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

/*
 * For a process about to allocate and free tens of megabytes in blocks of
 * every size (a command that parses large captures): serve the next
 * `bytes` of malloc'd memory from the heap backed by huge pages, blocks of
 * up to 32 MiB included, and keep what is freed there for the next
 * allocation instead of handing it back to the kernel. Without it, every
 * block of 128 KiB or more is a mapping of its own, faulted in 4 KiB at a
 * time (a large block's unaligned head and tail too) and unmapped when
 * freed, so that the next capture faults it all in again. This changes
 * malloc's settings for the whole process, for good: call it in a
 * short-lived command, not in a server. Every thread allocates from
 * that heap (one malloc arena), so it suits a few threads, not many.
 * Returns true when the kernel took the hint, false otherwise (nothing is
 * required of it: it is a hint).
 */
bool mem_hint_heap(size_t bytes);

#endif
