/*
 * strmap.h: a map from byte strings to 32-bit values, for interning.
 *
 * Open addressing with linear probing, hashing eight bytes at a time
 * (hash_bytes in strmap.c). Keys are copied into the map's own arena, so
 * callers may pass transient buffers; a key may contain NUL bytes. The
 * map never shrinks.
 *
 * The keys are names read from profiles, which anyone may write: each map
 * hashes with a seed of its own, picked when its first table is made, so
 * that nobody can choose names that all land in one run of slots and make
 * every insert a scan of them.
 */
#ifndef PR_STRMAP_H
#define PR_STRMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct strmap_slot {
	uint64_t hash;
	const char *key; /* NULL: empty slot */
	size_t len;
	uint32_t value;
} strmap_slot;

typedef struct strmap_chunk strmap_chunk;

typedef struct strmap {
	strmap_slot *slots;
	size_t cap; /* power of two or 0 */
	size_t count;
	strmap_chunk *arena;
	uint64_t seed; /* set with the first table */
} strmap;

#define STRMAP_INIT {NULL, 0, 0, NULL, 0}

void strmap_init(strmap *m);
void strmap_release(strmap *m);

/* Find a key; returns 1 and sets *value when present, 0 when absent. */
int strmap_get(const strmap *m, const char *key, size_t len, uint32_t *value);

/*
 * Look the key up and insert it with `value` when absent. *found is set
 * to the stored value (the existing one when present). Returns 1 when the
 * key was inserted, 0 when it was present, PR_ENOMEM on failure.
 * *stored_key, when not NULL, receives the map's own copy of the key,
 * NUL-terminated, valid until strmap_release.
 */
int strmap_put(strmap *m, const char *key, size_t len, uint32_t value,
	       uint32_t *found, const char **stored_key);

/*
 * The seed and the mix the map hashes with, for other tables keyed by
 * input someone else chose. A seed nobody can know from outside the
 * process: getrandom without blocking, or early in boot, when it cannot
 * answer, the clock and `where` (an address). The mix is MurmurHash3's
 * 64-bit finalizer.
 */
uint64_t strmap_seed_new(const void *where);
uint64_t strmap_mix(uint64_t h);

#endif
