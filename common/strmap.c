/*
 * strmap.c: string interning map (see strmap.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "common/strmap.h"
#include "common/error.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

/* Keys live in chunks that never move, so stored key pointers stay valid. */
struct strmap_chunk {
	strmap_chunk *next;
	size_t used, cap;
	char data[];
};

#define CHUNK_MIN (64 * 1024)

void strmap_init(strmap *m)
{
	memset(m, 0, sizeof(*m));
}

void strmap_release(strmap *m)
{
	strmap_chunk *c = m->arena, *next;

	while (c) {
		next = c->next;
		free(c);
		c = next;
	}
	free(m->slots);
	strmap_init(m);
}

uint64_t strmap_seed_new(const void *where)
{
	struct timespec ts;
	uint64_t s;

	if (getrandom(&s, sizeof(s), GRND_NONBLOCK) == (ssize_t)sizeof(s))
		return s;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)(uintptr_t)where ^ (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ULL ^
	       (uint64_t)ts.tv_sec;
}

uint64_t strmap_mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/*
 * a times b as 128 bits, the two halves folded into one: each bit of the
 * high half depends, through the carries, on every lower bit of a. A
 * plain 64-bit multiply passes a change of a's top bit through as it is
 * (the product changes in its top bit only), which the next word can undo
 * whatever the seed: names that differ in the top bits of two words side
 * by side would all collide. Folded, what a change does depends on the
 * state, and the state on the seed.
 */
static uint64_t fold_mul(uint64_t a, uint64_t b)
{
#ifdef __SIZEOF_INT128__
	unsigned __int128 r = (unsigned __int128)a * b;

	return (uint64_t)r ^ (uint64_t)(r >> 64);
#else
	uint64_t al = a & 0xffffffffu, ah = a >> 32, bl = b & 0xffffffffu, bh = b >> 32;
	uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
	uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);

	return ((mid << 32) | (ll & 0xffffffffu)) ^ (hh + (lh >> 32) + (hl >> 32) + (mid >> 32));
#endif
}

#define HASH_K0 0xa0761d6478bd642fULL
#define HASH_K1 0xe7037ed1a0b428dbULL

/*
 * Eight bytes at a time, each mixed into a state that starts from the
 * seed and the length by fold_mul, then MurmurHash3's finalizer, so that
 * the slot (the low bits) depends on every bit. A byte at a time (FNV-1a)
 * cost a multiply's latency per byte: hashing names was a tenth of an
 * ingest's parse. Two names share a slot only where the whole 64-bit
 * hashes of an unknown seed collide.
 */
static uint64_t hash_bytes(const char *key, size_t len, uint64_t seed)
{
	uint64_t h = seed ^ fold_mul((uint64_t)len ^ HASH_K0, HASH_K1), w;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, key + i, 8);
		h = fold_mul(h ^ w ^ HASH_K0, HASH_K1);
	}
	if (i < len) {
		w = 0;
		memcpy(&w, key + i, len - i);
		h = fold_mul(h ^ w ^ HASH_K0, HASH_K1);
	}
	return strmap_mix(h);
}

static strmap_slot *find_slot(strmap_slot *slots, size_t cap, uint64_t h,
			      const char *key, size_t len)
{
	size_t i = (size_t)h & (cap - 1);

	for (;;) {
		strmap_slot *s = &slots[i];
		if (!s->key)
			return s;
		if (s->hash == h && s->len == len && memcmp(s->key, key, len) == 0)
			return s;
		i = (i + 1) & (cap - 1);
	}
}

int strmap_get(const strmap *m, const char *key, size_t len, uint32_t *value)
{
	strmap_slot *s;

	if (!m->cap)
		return 0;
	s = find_slot(m->slots, m->cap, hash_bytes(key, len, m->seed), key, len);
	if (!s->key)
		return 0;
	*value = s->value;
	return 1;
}

static int rehash(strmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	strmap_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return PR_ENOMEM;
	if (!m->cap)
		m->seed = strmap_seed_new(m);
	for (size_t i = 0; i < m->cap; i++) {
		strmap_slot *s = &m->slots[i];
		if (s->key)
			*find_slot(slots, cap, s->hash, s->key, s->len) = *s;
	}
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return 0;
}

static char *arena_copy(strmap *m, const char *key, size_t len)
{
	strmap_chunk *c = m->arena;
	char *p;

	if (!c || c->cap - c->used < len + 1) {
		size_t cap = len + 1 > CHUNK_MIN ? len + 1 : CHUNK_MIN;
		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		c->next = m->arena;
		m->arena = c;
	}
	p = c->data + c->used;
	memcpy(p, key, len);
	p[len] = '\0';
	c->used += len + 1;
	return p;
}

int strmap_put(strmap *m, const char *key, size_t len, uint32_t value,
	       uint32_t *found, const char **stored_key)
{
	uint64_t h;
	strmap_slot *s;
	char *copy;

	/* The first table sets the seed: hash after it is made. */
	if ((m->count + 1) * 4 > m->cap * 3 && rehash(m) < 0)
		return PR_ENOMEM;
	h = hash_bytes(key, len, m->seed);
	s = find_slot(m->slots, m->cap, h, key, len);
	if (s->key) {
		*found = s->value;
		if (stored_key)
			*stored_key = s->key;
		return 0;
	}
	if (!(copy = arena_copy(m, key, len)))
		return PR_ENOMEM;
	s->hash = h;
	s->key = copy;
	s->len = len;
	s->value = value;
	m->count++;
	*found = value;
	if (stored_key)
		*stored_key = copy;
	return 1;
}
