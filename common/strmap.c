/*
 * strmap.c: string interning map (see strmap.h).
 */
#include "common/strmap.h"
#include "common/error.h"

#include <stdlib.h>
#include <string.h>

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

static uint64_t hash_bytes(const char *key, size_t len)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)key[i];
		h *= 1099511628211ULL;
	}
	return h;
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
	s = find_slot(m->slots, m->cap, hash_bytes(key, len), key, len);
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
	uint64_t h = hash_bytes(key, len);
	strmap_slot *s;
	char *copy;

	if ((m->count + 1) * 4 > m->cap * 3 && rehash(m) < 0)
		return PR_ENOMEM;
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
