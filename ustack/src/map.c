// SPDX-License-Identifier: GPL-2.0
/*
 * A map from a pair of u64 to a pointer: a typed front over glib's
 * GHashTable.  A NULL value is the same as no entry.
 */
#include <glib.h>
#include <stdlib.h>

#include "ustack.h"

struct entry {
	uint64_t	a, b;
	void		*value;
};

/*
 * Keys whose halves both fit in 32 bits (pids, offsets, indexes: nearly
 * all) are packed into the pointer itself, with the value beside it: no
 * allocation at all.  The others are entries, each its own key (a set:
 * GHashTable keeps no array of values then).
 */
struct map {
	GHashTable	*packed;
	GHashTable	*entries;
};

#define PACKS(a, b)	(sizeof(gpointer) >= 8 && (a) <= UINT32_MAX && (b) <= UINT32_MAX)

static gpointer pack(uint64_t a, uint64_t b)
{
	return (gpointer)(uintptr_t)(a << 32 | b);
}

static guint mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (guint)h;
}

static guint packed_hash(gconstpointer p)
{
	return mix((uintptr_t)p);
}

static guint entry_hash(gconstpointer p)
{
	const struct entry *e = p;

	return mix(e->a * 0x9e3779b97f4a7c15ULL ^ e->b);
}

static gboolean entry_equal(gconstpointer x, gconstpointer y)
{
	const struct entry *e = x, *f = y;

	return e->a == f->a && e->b == f->b;
}

struct map *map_new(void)
{
	struct map *m = xmalloc(sizeof(*m));

	m->packed = g_hash_table_new(packed_hash, NULL);
	m->entries = g_hash_table_new_full(entry_hash, entry_equal, free, NULL);
	return m;
}

void map_free(struct map *m, void (*free_value)(void *))
{
	GHashTableIter it;
	gpointer key, value;

	if (!m)
		return;
	if (free_value) {
		g_hash_table_iter_init(&it, m->packed);
		while (g_hash_table_iter_next(&it, NULL, &value))
			free_value(value);
		g_hash_table_iter_init(&it, m->entries);
		while (g_hash_table_iter_next(&it, &key, NULL))
			free_value(((struct entry *)key)->value);
	}
	g_hash_table_destroy(m->packed);
	g_hash_table_destroy(m->entries);
	free(m);
}

void *map_get(struct map *m, uint64_t a, uint64_t b)
{
	struct entry probe = { .a = a, .b = b }, *e;

	if (PACKS(a, b))
		return g_hash_table_lookup(m->packed, pack(a, b));
	e = g_hash_table_lookup(m->entries, &probe);
	return e ? e->value : NULL;
}

void map_put(struct map *m, uint64_t a, uint64_t b, void *value)
{
	struct entry probe = { .a = a, .b = b }, *e;

	if (PACKS(a, b)) {
		g_hash_table_insert(m->packed, pack(a, b), value);
		return;
	}
	e = g_hash_table_lookup(m->entries, &probe);
	if (e) {
		e->value = value;
		return;
	}
	e = xmalloc(sizeof(*e));
	*e = (struct entry) { .a = a, .b = b, .value = value };
	g_hash_table_add(m->entries, e);
}

void *map_del(struct map *m, uint64_t a, uint64_t b)
{
	struct entry probe = { .a = a, .b = b }, *e;
	gpointer key, value;

	if (PACKS(a, b)) {
		if (!g_hash_table_steal_extended(m->packed, pack(a, b), &key, &value))
			return NULL;
		return value;
	}
	e = g_hash_table_lookup(m->entries, &probe);
	if (!e)
		return NULL;
	value = e->value;
	g_hash_table_remove(m->entries, e);	/* frees e */
	return value;
}

size_t map_size(const struct map *m)
{
	return g_hash_table_size(m->packed) + g_hash_table_size(m->entries);
}

void map_each(struct map *m, void (*fn)(uint64_t a, uint64_t b, void *value, void *ctx),
	      void *ctx)
{
	GHashTableIter it;
	gpointer key, value;

	g_hash_table_iter_init(&it, m->packed);
	while (g_hash_table_iter_next(&it, &key, &value))
		fn((uintptr_t)key >> 32, (uintptr_t)key & UINT32_MAX, value, ctx);
	g_hash_table_iter_init(&it, m->entries);
	while (g_hash_table_iter_next(&it, &key, NULL)) {
		struct entry *e = key;

		fn(e->a, e->b, e->value, ctx);
	}
}
