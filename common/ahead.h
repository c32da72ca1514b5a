/*
 * ahead.h: items prepared ahead of their consumer, on helper threads.
 *
 * A consumer takes items 0..n-1 in order, each prepared first by
 * fn(ctx, i, slot) (a capture read, decompressed and parsed) and then used
 * on the consumer's thread (added to a call tree, in order, so that every
 * sum comes out as it would one item after the other). While the consumer
 * works on item i, helper threads prepare the items after it; when the
 * consumer reaches an item no helper has claimed yet, it prepares that
 * item itself rather than wait. With no helper, the work and its order are
 * the sequential ones.
 *
 * At most `window` items from the one the consumer waits for are claimed
 * at any time: that bounds the memory prepared items hold. `slot` tells
 * who prepares the item: 0 the consumer, 1..threads a helper; fn may keep
 * per-slot state (a buffer it reuses) in ctx. fn must be safe to run on
 * several threads at once for different items; it reports failure in ctx
 * (the consumer decides, in item order, which failure counts).
 */
#ifndef PR_AHEAD_H
#define PR_AHEAD_H

#include <stddef.h>

typedef void (*ahead_fn)(void *ctx, size_t i, unsigned slot);

typedef struct ahead ahead;

/*
 * Start up to `threads` helpers (fewer when a thread cannot be started,
 * none when n < 2) for items 0..n-1, at most `window` (at least 1) claimed
 * ahead of the consumer. Returns 0, or PR_ENOMEM with *out NULL; free
 * with ahead_free.
 */
int ahead_start(ahead **out, size_t n, unsigned threads, size_t window, ahead_fn fn,
		void *ctx);

/*
 * Item i prepared: call with i = 0, 1, 2... in order. Returns when a
 * helper has finished it, or after preparing it on the calling thread
 * (slot 0). Calling it for i means the consumer is done with every item
 * before i.
 */
void ahead_wait(ahead *a, size_t i);

/*
 * Stop: no item is claimed any more, every helper is joined, `a` is
 * freed. Items prepared but never waited for are the caller's to clean
 * up afterwards (it knows them from ctx). NULL is a no-op.
 */
void ahead_free(ahead *a);

/*
 * Helpers worth starting now, 0 to `max`: the processors the 1-minute load
 * average leaves idle, less the consumer's own. On a machine whose other
 * processors are busy, a helper only takes turns with the consumer and
 * holds a second capture in memory.
 */
unsigned ahead_helpers(unsigned max);

#endif
