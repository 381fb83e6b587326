// SPDX-License-Identifier: GPL-2.0
/*
 * A map from a pair of u64 to a pointer: a typed front over glib's
 * GHashTable.  Each entry holds its key and value and is the table's key
 * (a set: GHashTable keeps no array of values then), so an entry costs
 * one small allocation and a slot.
 */
#include <glib.h>
#include <stdlib.h>

#include "ustack.h"

struct entry {
	uint64_t	a, b;
	void		*value;
};

struct map {
	GHashTable	*h;
};

static guint entry_hash(gconstpointer p)
{
	const struct entry *e = p;
	uint64_t h = e->a * 0x9e3779b97f4a7c15ULL ^ (e->b + 0x632be59bd9b4e019ULL) * 0xbf58476d1ce4e5b9ULL;

	return (guint)(h ^ h >> 32);
}

static gboolean entry_equal(gconstpointer x, gconstpointer y)
{
	const struct entry *e = x, *f = y;

	return e->a == f->a && e->b == f->b;
}

struct map *map_new(void)
{
	struct map *m = xmalloc(sizeof(*m));

	m->h = g_hash_table_new_full(entry_hash, entry_equal, free, NULL);
	return m;
}

void map_free(struct map *m, void (*free_value)(void *))
{
	GHashTableIter it;
	gpointer key;

	if (!m)
		return;
	if (free_value) {
		g_hash_table_iter_init(&it, m->h);
		while (g_hash_table_iter_next(&it, &key, NULL))
			free_value(((struct entry *)key)->value);
	}
	g_hash_table_destroy(m->h);
	free(m);
}

void *map_get(struct map *m, uint64_t a, uint64_t b)
{
	struct entry probe = { .a = a, .b = b }, *e = g_hash_table_lookup(m->h, &probe);

	return e ? e->value : NULL;
}

void map_put(struct map *m, uint64_t a, uint64_t b, void *value)
{
	struct entry probe = { .a = a, .b = b }, *e = g_hash_table_lookup(m->h, &probe);

	if (e) {
		e->value = value;
		return;
	}
	e = xmalloc(sizeof(*e));
	*e = (struct entry) { .a = a, .b = b, .value = value };
	g_hash_table_add(m->h, e);
}

void *map_del(struct map *m, uint64_t a, uint64_t b)
{
	struct entry probe = { .a = a, .b = b }, *e = g_hash_table_lookup(m->h, &probe);
	void *value;

	if (!e)
		return NULL;
	value = e->value;
	g_hash_table_remove(m->h, e);	/* frees e */
	return value;
}

size_t map_size(const struct map *m)
{
	return g_hash_table_size(m->h);
}

void map_each(struct map *m, void (*fn)(uint64_t a, uint64_t b, void *value, void *ctx),
	      void *ctx)
{
	GHashTableIter it;
	gpointer key;

	g_hash_table_iter_init(&it, m->h);
	while (g_hash_table_iter_next(&it, &key, NULL)) {
		struct entry *e = key;

		fn(e->a, e->b, e->value, ctx);
	}
}
