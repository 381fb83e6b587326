// SPDX-License-Identifier: GPL-2.0
/* A hash map from a pair of u64 to a pointer, with chaining */
#include <stdlib.h>

#include "ustack.h"

struct entry {
	uint64_t	a, b;
	void		*value;
	struct entry	*next;
};

struct map {
	struct entry	**buckets;
	size_t		nbuckets;
	size_t		size;
};

static size_t map_hash(const struct map *m, uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL) * 0xbf58476d1ce4e5b9ULL;

	h ^= h >> 31;
	return (size_t)(h & (m->nbuckets - 1));
}

struct map *map_new(void)
{
	struct map *m = xcalloc(1, sizeof(*m));

	m->nbuckets = 64;
	m->buckets = xcalloc(m->nbuckets, sizeof(*m->buckets));
	return m;
}

void map_free(struct map *m, void (*free_value)(void *))
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nbuckets; i++) {
		struct entry *e = m->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			if (free_value)
				free_value(e->value);
			free(e);
		}
	}
	free(m->buckets);
	free(m);
}

static struct entry **map_slot(struct map *m, uint64_t a, uint64_t b)
{
	struct entry **e = &m->buckets[map_hash(m, a, b)];

	while (*e && ((*e)->a != a || (*e)->b != b))
		e = &(*e)->next;
	return e;
}

void *map_get(struct map *m, uint64_t a, uint64_t b)
{
	struct entry *e = *map_slot(m, a, b);

	return e ? e->value : NULL;
}

static void map_grow(struct map *m)
{
	struct entry **old = m->buckets;
	size_t i, n = m->nbuckets;

	m->nbuckets *= 2;
	m->buckets = xcalloc(m->nbuckets, sizeof(*m->buckets));
	for (i = 0; i < n; i++) {
		struct entry *e = old[i], *next;

		for (; e; e = next) {
			size_t h = map_hash(m, e->a, e->b);

			next = e->next;
			e->next = m->buckets[h];
			m->buckets[h] = e;
		}
	}
	free(old);
}

void map_put(struct map *m, uint64_t a, uint64_t b, void *value)
{
	struct entry **slot = map_slot(m, a, b), *e;

	if (*slot) {
		(*slot)->value = value;
		return;
	}
	e = xmalloc(sizeof(*e));
	e->a = a;
	e->b = b;
	e->value = value;
	e->next = NULL;
	*slot = e;
	if (++m->size > m->nbuckets)
		map_grow(m);
}

void *map_del(struct map *m, uint64_t a, uint64_t b)
{
	struct entry **slot = map_slot(m, a, b), *e = *slot;
	void *value;

	if (!e)
		return NULL;
	value = e->value;
	*slot = e->next;
	free(e);
	m->size--;
	return value;
}

size_t map_size(const struct map *m)
{
	return m->size;
}

void map_each(struct map *m, void (*fn)(uint64_t a, uint64_t b, void *value, void *ctx),
	      void *ctx)
{
	size_t i;

	for (i = 0; i < m->nbuckets; i++) {
		struct entry *e = m->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			fn(e->a, e->b, e->value, ctx);
		}
	}
}
