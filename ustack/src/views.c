// SPDX-License-Identifier: GPL-2.0
/*
 * ustack report's views of the stacks as a whole: each distinct stack is
 * kept once, with its count, as location ids; a location is a frame (its
 * file, offset and the lines libdw gave it), a line names a function.
 * --top, --callers and --callees are computed here; --flamegraph
 * (flame.c) and --pprof (pprof.c) read the same tables.
 *
 * Every function view sees a stack as its functions, outer to inner, as
 * --folded does: a frame's function, then the calls inlined in it.  An
 * event whose stack never came is the one frame "[no user stack]"; a
 * stack the kernel cut short starts with "[cut]"; a frame without a
 * symbol is "[unknown]", one in the vdso or anonymous memory "[vdso/anon]"
 * (--folded calls both "[unknown]").
 */
#include <glib.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "views.h"

const char *const vclass_names[VC_N] = {
	[VC_PROGRAM] = "program",
	[VC_LIBRARY] = "library",
	[VC_ANON] = "anon",
	[VC_RAW] = "raw",
	[VC_NOSTACK] = "nostack",
	[VC_OTHER] = "other",
};

/* --- interning: a key of bytes -> an index, in a GHashTable */

/* Storage that lives as long as the views: a chain of chunks, no header per item */
struct arena_chunk {
	struct arena_chunk	*next;
	size_t			used, size;
	max_align_t		data[];
};

static void *arena_alloc(struct arena_chunk **arena, size_t size)
{
	struct arena_chunk *c = *arena;
	void *p;

	size = (size + sizeof(uint64_t) - 1) / sizeof(uint64_t) * sizeof(uint64_t);
	if (!c || c->size - c->used < size) {
		size_t cap = size > 1 << 20 ? size : 1 << 20;

		c = xmalloc(sizeof(*c) + cap);
		c->next = *arena;
		c->used = 0;
		c->size = cap;
		*arena = c;
	}
	p = (char *)c->data + c->used;
	c->used += size;
	return p;
}

static void arena_free(struct arena_chunk **arena)
{
	struct arena_chunk *c, *next;

	for (c = *arena; c; c = next) {
		next = c->next;
		free(c);
	}
	*arena = NULL;
}

/* A key as the table holds it: in the arena, 8-aligned */
struct ikey {
	uint32_t	len, idx;
	unsigned char	b[];
};

static guint ikey_hash(gconstpointer p)
{
	const struct ikey *k = p;
	uint32_t h = 2166136261u ^ k->len;

	for (uint32_t i = 0; i < k->len; i++)
		h = (h ^ k->b[i]) * 16777619u;
	return h;
}

static gboolean ikey_equal(gconstpointer x, gconstpointer y)
{
	const struct ikey *a = x, *b = y;

	return a->len == b->len && !memcmp(a->b, b->b, a->len);
}

/* The key's bytes as stored, 8-aligned: valid as long as the table */
static const void *itab_get_key(struct itab *t, const void *key, size_t len, uint32_t *idx,
				bool *fresh)
{
	struct ikey *k;

	if (len > UINT32_MAX)
		die("a key of %zu bytes", len);
	if (t->sealed)
		die("internal error: a key added to a sealed table");
	if (!t->h)
		t->h = g_hash_table_new(ikey_hash, ikey_equal);
	if (t->probe_cap < sizeof(*k) + len) {
		t->probe_cap = (sizeof(*k) + len) * 2;
		t->probe = xrealloc(t->probe, t->probe_cap);
	}
	k = t->probe;
	k->len = (uint32_t)len;
	memcpy(k->b, key, len);
	k = g_hash_table_lookup(t->h, k);
	*fresh = !k;
	if (!k) {
		k = arena_alloc(&t->arena, sizeof(*k) + len);
		k->len = (uint32_t)len;
		k->idx = (uint32_t)t->n++;
		memcpy(k->b, key, len);
		g_hash_table_add(t->h, k);
	}
	*idx = k->idx;
	return k->b;
}

uint32_t itab_get(struct itab *t, const void *key, size_t len, bool *fresh)
{
	uint32_t idx;

	itab_get_key(t, key, len, &idx, fresh);
	return idx;
}

/* No more keys: the index goes, the keys stay if asked (n stays) */
static void itab_seal(struct itab *t, bool keep_keys)
{
	if (t->h)
		g_hash_table_destroy(t->h);
	t->h = NULL;
	free(t->probe);
	t->probe = NULL;
	t->probe_cap = 0;
	if (!keep_keys)
		arena_free(&t->arena);
	t->sealed = true;
}

void itab_free(struct itab *t)
{
	if (t->h)
		g_hash_table_destroy(t->h);
	arena_free(&t->arena);
	free(t->probe);
	t->h = NULL;
	t->probe = NULL;
	t->probe_cap = 0;
}

/* Room for one more element of *arr (n elements, *cap of room) */
static void *grow(void *arr, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return arr;
	*cap = *cap ? *cap * 2 : 64;
	return xrealloc(arr, *cap * size);
}

/* A key builder: a growing buffer of bytes */
struct key {
	unsigned char	*p;
	size_t		len, cap;
};

static void key_add(struct key *k, const void *s, size_t n)
{
	if (k->len + n > k->cap) {
		k->cap = (k->len + n) * 2 + 64;
		k->p = xrealloc(k->p, k->cap);
	}
	memcpy(k->p + k->len, s, n);
	k->len += n;
}

static void key_str(struct key *k, const char *s)
{
	key_add(k, s ? s : "", s ? strlen(s) + 1 : 1);
	key_add(k, s ? "s" : "n", 1);	/* NULL is not "" */
}

static uint32_t str_id(struct views *v, const char *s)
{
	bool fresh;
	uint32_t id = itab_get(&v->strs_t, s, strlen(s), &fresh);

	if (fresh) {
		v->strs = grow(v->strs, id, &v->strs_cap, sizeof(*v->strs));
		v->strs[id] = text_utf8(s);
	}
	return id;
}

static const char *str(struct views *v, const char *s)
{
	uint32_t id;

	if (!s)
		return NULL;
	id = str_id(v, s);	/* before v->strs is read: it may move */
	return v->strs[id];
}

/*
 * A function is its name in its object and, for one that is not inlined,
 * where its symbol starts (two static functions of one name are two): not
 * its lines' source file, which differs within one function (a .c file it
 * includes, as glibc's vfprintf does); the first one seen is kept.  An
 * inlined one (start NO_START) is told by its lines' file.
 */
#define NO_START	UINT64_MAX

static uint32_t func_id(struct views *v, const char *name, const char *file, const char *src,
			enum vclass cls, uint64_t start)
{
	struct key k = { 0 };
	unsigned char c = (unsigned char)cls;
	uint32_t id;
	bool fresh;

	key_str(&k, name);
	key_str(&k, file);
	if (start == NO_START)
		key_str(&k, src);
	else
		key_add(&k, &start, sizeof(start));
	key_add(&k, &c, 1);
	id = itab_get(&v->funcs_t, k.p, k.len, &fresh);
	free(k.p);
	if (fresh) {
		v->funcs = grow(v->funcs, id, &v->funcs_cap, sizeof(*v->funcs));
		v->funcs[id].name = str(v, name);
		v->funcs[id].file = str(v, file);
		v->funcs[id].src = str(v, src);
		v->funcs[id].cls = cls;
	}
	return id;
}

/* A location's lines, in the views' arena */
static struct vline *new_lines(struct views *v, size_t n)
{
	struct vline *l = arena_alloc(&v->arena, n * sizeof(*l));

	memset(l, 0, n * sizeof(*l));
	return l;
}

/* A location of one line, for the frames that are not in a file */
static uint32_t special_loc(struct views *v, const char *name, enum vclass cls)
{
	struct key k = { 0 };
	uint32_t id;
	bool fresh;

	key_add(&k, "\xff", 1);
	key_str(&k, name);
	id = itab_get(&v->locs_t, k.p, k.len, &fresh);
	free(k.p);
	if (fresh) {
		v->locs = grow(v->locs, id, &v->locs_cap, sizeof(*v->locs));
		memset(&v->locs[id], 0, sizeof(v->locs[id]));
		v->locs[id].n = 1;
		v->locs[id].lines = new_lines(v, 1);
		v->locs[id].lines[0].func = func_id(v, name, NULL, NULL, cls, NO_START);
	}
	return id;
}

struct views *views_new(void)
{
	struct views *v = xcalloc(1, sizeof(*v));

	v->nostack_loc = special_loc(v, "[no user stack]", VC_NOSTACK);
	v->cut_loc = special_loc(v, "[cut]", VC_OTHER);
	v->what = "events";
	v->sample_type = "events";
	v->sample_unit = "count";
	return v;
}

void views_off_cpu(struct views *v)
{
	v->off_cpu = true;
	v->what = "ns off-CPU";
	v->sample_type = "off-cpu";
	v->sample_unit = "nanoseconds";
}

void views_done(struct views *v)
{
	itab_seal(&v->strs_t, false);
	itab_seal(&v->funcs_t, false);
	itab_seal(&v->locs_t, false);
	itab_seal(&v->maps_t, false);
	itab_seal(&v->stacks_t, true);	/* the stacks' locations */
	v->syms = NULL;			/* freed next, by report */
}

void views_free(struct views *v)
{
	size_t i;

	for (i = 0; i < v->strs_t.n; i++)
		free(v->strs[i]);
	for (i = 0; i < v->maps_t.n; i++)
		free(v->maps[i].loads);
	free(v->strs);
	free(v->funcs);
	free(v->locs);
	free(v->maps);
	free(v->stacks);
	itab_free(&v->strs_t);
	itab_free(&v->funcs_t);
	itab_free(&v->locs_t);
	itab_free(&v->maps_t);
	itab_free(&v->stacks_t);
	arena_free(&v->arena);
	free(v);
}

/* A shared library by its name: "libc.so.6", "ld-linux-x86-64.so.2", "x.so" */
static enum vclass file_class(const char *path)
{
	const char *base = strrchr(path, '/'), *so;

	base = base ? base + 1 : path;
	for (so = strstr(base, ".so"); so; so = strstr(so + 1, ".so"))
		if (so[3] == '\0' || so[3] == '.')
			return VC_LIBRARY;
	return VC_PROGRAM;
}

/* The build-id and segments of the file's ELF, when symbols opened it */
static void mapping_elf(struct views *v, struct vmapping *m, const struct frame *f)
{
	struct elf_layout el;

	if (!v->syms || !symbols_elf(v->syms, f->ino, f->dev, &el))
		return;
	m->nloads = el.nloads;
	m->loads = el.loads;
	if (el.build_id[0])
		m->build_id = str(v, el.build_id);
}

/* The mapping of a frame's file: index + 1, or 0 when it is in no file */
static uint32_t mapping_of(struct views *v, const struct vframe *vf)
{
	const struct frame *f = vf->f;
	struct key k = { 0 };
	struct vmapping *m;
	uint32_t id;
	bool fresh;

	if (!vf->file || f->ino >= UINT64_MAX - 1 || (f->ino == 0 && f->dev == 0))
		return 0;
	key_str(&k, vf->file);
	key_add(&k, &f->ino, sizeof(f->ino));
	key_add(&k, &f->dev, sizeof(f->dev));
	id = itab_get(&v->maps_t, k.p, k.len, &fresh);
	free(k.p);
	if (fresh) {
		v->maps = grow(v->maps, id, &v->maps_cap, sizeof(*v->maps));
		m = &v->maps[id];
		memset(m, 0, sizeof(*m));
		m->path = str(v, vf->file);
		m->cls = file_class(vf->file);
		mapping_elf(v, m, f);
	}
	m = &v->maps[id];
	if (f->off > m->max_off)
		m->max_off = f->off;
	if (vf->build_id && *vf->build_id && !m->build_id)
		m->build_id = str(v, vf->build_id);
	return id + 1;
}

static uint32_t loc_of(struct views *v, const struct vframe *vf)
{
	const struct frame *f = vf->f;
	uint32_t mapping = mapping_of(v, vf), id;
	struct key k = { 0 };
	unsigned char ret = vf->ret;
	enum vclass cls;
	struct vloc *l;
	char addr[32];
	bool fresh;
	size_t i;

	key_add(&k, &mapping, sizeof(mapping));
	key_add(&k, &f->ino, sizeof(f->ino));
	key_add(&k, &f->dev, sizeof(f->dev));
	key_add(&k, &f->off, sizeof(f->off));
	key_add(&k, &ret, 1);
	id = itab_get(&v->locs_t, k.p, k.len, &fresh);
	free(k.p);
	if (!fresh)
		return id;
	v->locs = grow(v->locs, id, &v->locs_cap, sizeof(*v->locs));
	l = &v->locs[id];
	memset(l, 0, sizeof(*l));
	l->mapping = mapping;
	l->off = f->off;
	l->ret = vf->ret;
	cls = mapping ? v->maps[mapping - 1].cls : VC_RAW;
	if (!vf->n) {
		l->raw = true;
		l->n = 1;
		l->lines = new_lines(v, 1);
		if (f->ino == 0 && f->dev == 0)
			l->lines[0].func = func_id(v, "[vdso/anon]", NULL, NULL, VC_ANON, NO_START);
		else
			l->lines[0].func = func_id(v, "[unknown]", mapping ? v->maps[mapping - 1].path : NULL,
						   NULL, VC_RAW, NO_START);
		return id;
	}
	l->n = vf->n;
	l->lines = new_lines(v, vf->n);
	for (i = 0; i < vf->n; i++) {
		const struct sym *s = &vf->lines[i];
		const char *name = s->name;

		if (!name) {
			snprintf(addr, sizeof(addr), "0x%" PRIx64, s->off);
			name = addr;
		}
		/* the lines' strings may be freed later: func_id copies them */
		v->locs[id].lines[i].func = func_id(v, name, mapping ? v->maps[mapping - 1].path : vf->file,
						    s->src, cls, s->name && !s->inlined && f->off >= s->off ?
						    f->off - s->off : NO_START);
		v->locs[id].lines[i].line = s->no_line ? 0 : s->line;
	}
	return id;
}

static void add_stack(struct views *v, const struct vsample *smp, const uint32_t *locs, size_t n)
{
	struct key k = { 0 };
	uint32_t ev = str_id(v, smp->event), cm = str_id(v, smp->comm), id;
	int pid = smp->pid;
	double ts = smp->ts;
	const unsigned char *key;
	struct vstack *s;
	bool fresh;

	key_add(&k, &ev, sizeof(ev));
	key_add(&k, &cm, sizeof(cm));
	key_add(&k, &pid, sizeof(pid));
	key_add(&k, locs, n * sizeof(*locs));
	key = itab_get_key(&v->stacks_t, k.p, k.len, &id, &fresh);
	free(k.p);
	if (fresh) {
		v->stacks = grow(v->stacks, id, &v->stacks_cap, sizeof(*v->stacks));
		s = &v->stacks[id];
		s->event = ev;
		s->comm = cm;
		s->pid = pid;
		s->count = 0;
		s->n = n;
		/* the key's copy, 4-aligned after three 32-bit fields */
		s->locs = (uint32_t *)(key + 3 * sizeof(uint32_t));
	}
	v->stacks[id].count += smp->weight;
	v->total += smp->weight;
	if (!v->have_ts || ts < v->ts_min)
		v->ts_min = ts;
	if (!v->have_ts || ts > v->ts_max)
		v->ts_max = ts;
	v->have_ts = true;
}

/* A sample's stack: the waker's part, its own locations, its outer frame */
static void add_sample(struct views *v, const struct vsample *smp, const uint32_t *own, size_t n)
{
	uint32_t *locs = xmalloc((n + smp->nwaker + 3) * sizeof(*locs));
	size_t i, k = 0;

	/* the waker, its outermost frame ... its innermost, "--", then its own */
	if (smp->waker) {
		locs[k++] = special_loc(v, smp->waker, VC_OTHER);
		for (i = smp->nwaker; i-- > 0;)
			locs[k++] = loc_of(v, &smp->waker_frames[i]);
		locs[k++] = special_loc(v, "--", VC_OTHER);
		v->sep_func = v->locs[locs[k - 1]].lines[0].func;
		v->have_sep = true;
	}
	memcpy(locs + k, own, n * sizeof(*own));
	k += n;
	if (smp->outer)
		locs[k++] = special_loc(v, smp->outer, VC_OTHER);
	add_stack(v, smp, locs, k);
	free(locs);
}

void views_add(struct views *v, const struct vsample *smp, const struct vframe *frames, size_t n,
	       bool cut)
{
	uint32_t *locs = xmalloc((n + 1) * sizeof(*locs));
	size_t i;

	for (i = 0; i < n; i++)
		locs[i] = loc_of(v, &frames[i]);
	if (cut)
		locs[n++] = v->cut_loc;		/* the outermost of the stack */
	add_sample(v, smp, locs, n);
	free(locs);
}

void views_add_nostack(struct views *v, const struct vsample *smp)
{
	add_sample(v, smp, &v->nostack_loc, 1);
}

size_t views_seq(const struct views *v, const struct vstack *s, uint32_t **buf, size_t *cap)
{
	size_t i, k, n = 0;

	for (i = s->n; i-- > 0;) {
		const struct vloc *l = &v->locs[s->locs[i]];

		for (k = l->n; k-- > 0;) {
			*buf = grow(*buf, n, cap, sizeof(**buf));
			(*buf)[n++] = l->lines[k].func;
		}
	}
	return n;
}

size_t views_seq_own(const struct views *v, const struct vstack *s, uint32_t **buf, size_t *cap)
{
	size_t i, n = views_seq(v, s, buf, cap);

	for (i = 0; v->have_sep && i < n; i++)
		if ((*buf)[i] == v->sep_func)
			return i;
	return n;
}

/* --- folded stacks: --folded, --by-event, --top's stacks */

/*
 * The one place a name becomes a frame of a folded line: ';' separates
 * frames and a newline separates lines, so neither may come from a name
 * (a comm or a symbol could forge a frame).  They become ':' and ' '.
 */
static char fold_char(char c)
{
	return c == ';' ? ':' : c == '\n' ? ' ' : c;
}

/*
 * The views' stacks as folded lines, [event;]comm;outer;...;inner, read
 * in place: every name folded once, a stack never made into text.  Stacks
 * whose lines are the same are merged after sorting them by their text.
 */
struct fold {
	const struct views	*v;
	bool			by_event;
	struct itab		names_t;	/* folded names; the key is the string */
	const char		**names;
	size_t			names_cap;
	uint32_t		*of_func, *of_str;	/* folded name ids */
	char			*buf;
	size_t			buf_cap;
	uint32_t		*first;		/* a merged line: its first stack */
	unsigned long		*count;		/* and the events of all its stacks */
	size_t			n;
};

static uint32_t fold_intern(struct fold *fd, const char *s)
{
	size_t n = strlen(s) + 1, i;
	const char *key;
	uint32_t id;
	bool fresh;

	if (n > fd->buf_cap) {
		fd->buf_cap = n * 2;
		fd->buf = xrealloc(fd->buf, fd->buf_cap);
	}
	for (i = 0; i < n; i++)
		fd->buf[i] = fold_char(s[i]);
	key = itab_get_key(&fd->names_t, fd->buf, n, &id, &fresh);
	if (fresh) {
		fd->names = grow(fd->names, id, &fd->names_cap, sizeof(*fd->names));
		fd->names[id] = key;
	}
	return id;
}

/* A folded line's text, a character at a time, without making it */
struct ftext {
	const struct fold	*fd;
	const struct vstack	*s;
	int			part;	/* -2: event, -1: comm, then the stack */
	size_t			loc, line;	/* the next line, outer to inner */
	const char		*p;
};

/* The next name of the line, or NULL at its end */
static const char *ftext_name(struct ftext *t)
{
	const struct views *v = t->fd->v;
	const struct vloc *l;

	if (t->part < 0)
		return t->fd->names[t->fd->of_str[t->part++ == -2 ? t->s->event : t->s->comm]];
	while (t->loc > 0) {
		l = &v->locs[t->s->locs[t->loc - 1]];
		if (t->line > 0)
			return t->fd->names[t->fd->of_func[l->lines[--t->line].func]];
		if (--t->loc > 0)
			t->line = v->locs[t->s->locs[t->loc - 1]].n;
	}
	return NULL;
}

static void ftext_init(struct ftext *t, const struct fold *fd, uint32_t stack)
{
	t->fd = fd;
	t->s = &fd->v->stacks[stack];
	t->part = fd->by_event ? -2 : -1;
	t->loc = t->s->n;
	t->line = t->loc ? fd->v->locs[t->s->locs[t->loc - 1]].n : 0;
	t->p = ftext_name(t);
}

static int ftext_next(struct ftext *t)
{
	if (!t->p)
		return 0;
	if (*t->p)
		return (unsigned char)*t->p++;
	t->p = ftext_name(t);
	return t->p ? ';' : 0;
}

/* As strcmp of the two stacks' folded lines */
static int cmp_ftext(const struct fold *fd, uint32_t x, uint32_t y)
{
	struct ftext a, b;
	int c, d;

	ftext_init(&a, fd, x);
	ftext_init(&b, fd, y);
	do {
		c = ftext_next(&a);
		d = ftext_next(&b);
	} while (c == d && c);
	return c - d;
}

static int cmp_by_text(const void *a, const void *b, void *ctx)
{
	return cmp_ftext(ctx, *(const uint32_t *)a, *(const uint32_t *)b);
}

static void put_ftext(FILE *out, const struct fold *fd, uint32_t stack)
{
	struct ftext t;
	const char *name;
	bool first = true;

	ftext_init(&t, fd, stack);
	for (name = t.p; name; name = ftext_name(&t), first = false) {
		if (!first)
			fputc(';', out);
		fputs(name, out);
	}
}

/*
 * Every stack of the views as folded lines, merged, in the order of their
 * text.  folded: --folded's names ([vdso/anon] is [unknown] there).
 */
static void fold_stacks(struct fold *fd, const struct views *v, bool folded, bool by_event)
{
	size_t i, ns = v->stacks_t.n;
	uint32_t *order = xmalloc((ns ? ns : 1) * sizeof(*order));

	memset(fd, 0, sizeof(*fd));
	fd->v = v;
	fd->by_event = by_event;
	fd->of_func = xmalloc((v->funcs_t.n + 1) * sizeof(*fd->of_func));
	fd->of_str = xmalloc((v->strs_t.n + 1) * sizeof(*fd->of_str));
	for (i = 0; i < v->funcs_t.n; i++)
		fd->of_func[i] = fold_intern(fd, folded && v->funcs[i].cls == VC_ANON ?
					     "[unknown]" : v->funcs[i].name);
	for (i = 0; i < v->strs_t.n; i++)
		fd->of_str[i] = fold_intern(fd, v->strs[i]);
	for (i = 0; i < ns; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, ns, sizeof(*order), cmp_by_text, fd);
	/* merged in place: first[] reuses order */
	fd->first = order;
	fd->count = xmalloc((ns ? ns : 1) * sizeof(*fd->count));
	for (i = 0; i < ns; i++) {
		uint32_t s = order[i];

		if (fd->n && !cmp_ftext(fd, fd->first[fd->n - 1], s)) {
			fd->count[fd->n - 1] += v->stacks[s].count;
			continue;
		}
		fd->first[fd->n] = s;
		fd->count[fd->n++] = v->stacks[s].count;
	}
}

static void fold_free(struct fold *fd)
{
	itab_free(&fd->names_t);
	free(fd->names);
	free(fd->of_func);
	free(fd->of_str);
	free(fd->buf);
	free(fd->first);
	free(fd->count);
}

void views_folded(const struct views *v, FILE *out, bool by_event)
{
	struct fold fd;

	fold_stacks(&fd, v, true, by_event);
	for (size_t i = 0; i < fd.n; i++) {
		put_ftext(out, &fd, fd.first[i]);
		fprintf(out, " %lu\n", fd.count[i]);
	}
	fold_free(&fd);
}

/* --- --top */

struct row {
	uint32_t	id;
	unsigned long	total, self;
	const char	*text;
};

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return strcmp(x->text, y->text);
}

static double pct(unsigned long n, unsigned long of)
{
	return of ? 100.0 * (double)n / (double)of : 0.0;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

static void print_func(FILE *out, const struct vfunc *f)
{
	fputs(f->name, out);
	if (f->file)
		fprintf(out, " [%s]", base_name(f->file));
}

/* Merged lines by count, then by text (their index: they are in its order) */
static int cmp_merged_by_count(const void *a, const void *b, void *ctx)
{
	const struct fold *fd = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (fd->count[x] != fd->count[y])
		return fd->count[x] > fd->count[y] ? -1 : 1;
	return (x > y) - (x < y);
}

void views_top(const struct views *v, FILE *out, size_t limit)
{
	size_t nf = v->funcs_t.n, i, j, n, cap = 0, nrows = 0, objw = strlen("shared object");
	struct row *rows = xcalloc(nf ? nf : 1, sizeof(*rows));
	size_t *mark = xcalloc(nf ? nf : 1, sizeof(*mark));
	uint32_t *seq = NULL, *order;
	struct fold fd;

	for (i = 0; i < nf; i++) {
		rows[i].id = (uint32_t)i;
		rows[i].text = v->funcs[i].name;
	}
	for (i = 0; i < v->stacks_t.n; i++) {
		const struct vstack *s = &v->stacks[i];

		n = views_seq_own(v, s, &seq, &cap);
		if (!n)
			continue;
		rows[seq[n - 1]].self += s->count;
		for (j = 0; j < n; j++) {
			if (mark[seq[j]] == i + 1)
				continue;	/* recursion: once per stack */
			mark[seq[j]] = i + 1;
			rows[seq[j]].total += s->count;
		}
	}
	for (i = 0; i < nf; i++)
		if (rows[i].total)
			rows[nrows++] = rows[i];
	qsort(rows, nrows, sizeof(*rows), cmp_row);

	/* the shared object: the object file's name, as perf report's */
	for (i = 0; i < nrows && (!limit || i < limit); i++)
		if (v->funcs[rows[i].id].file && strlen(base_name(v->funcs[rows[i].id].file)) > objw)
			objw = strlen(base_name(v->funcs[rows[i].id].file));
	fprintf(out, "# %lu %s; children: the %s whose stack holds the function, "
		"self: those it is the innermost of\n", v->total, v->what, v->what);
	fprintf(out, "# %8s %8s %8s %8s  %-*s  function\n", "children", "", "self", "", (int)objw,
		"shared object");
	for (i = 0; i < nrows && (!limit || i < limit); i++) {
		const struct vfunc *f = &v->funcs[rows[i].id];

		fprintf(out, "%10lu %7.2f%% %8lu %7.2f%%  %-*s  %s\n", rows[i].total,
			pct(rows[i].total, v->total), rows[i].self, pct(rows[i].self, v->total),
			(int)objw, f->file ? base_name(f->file) : "-", f->name);
	}
	if (limit && nrows > limit)
		fprintf(out, "# ... %zu functions more\n", nrows - limit);

	/* the whole stacks, as folded lines with their comm, by count */
	fold_stacks(&fd, v, false, false);
	order = xmalloc((fd.n ? fd.n : 1) * sizeof(*order));
	for (i = 0; i < fd.n; i++)
		order[i] = (uint32_t)i;	/* in the order of the text already */
	qsort_r(order, fd.n, sizeof(*order), cmp_merged_by_count, &fd);
	fprintf(out, "\n# stacks by count: comm;outermost;...;innermost\n");
	for (i = 0; i < fd.n && (!limit || i < limit); i++) {
		fprintf(out, "%10lu %7.2f%%  ", fd.count[order[i]], pct(fd.count[order[i]], v->total));
		put_ftext(out, &fd, fd.first[order[i]]);
		fputc('\n', out);
	}
	if (limit && fd.n > limit)
		fprintf(out, "# ... %zu stacks more\n", fd.n - limit);
	free(order);
	fold_free(&fd);
	free(seq);
	free(mark);
	free(rows);
}

/* --- --callers, --callees */

#define NB_EDGE	UINT32_MAX	/* no caller (outermost) or no callee (self) */

int views_neighbours(const struct views *v, FILE *out, const char *pattern,
		     const struct _GRegex *re, bool callees)
{
	size_t nf = v->funcs_t.n, i, j, n, cap = 0, nrows = 0, nmatch = 0;
	struct row *rows = xcalloc(nf + 1, sizeof(*rows));
	size_t *mark = xcalloc(nf + 1, sizeof(*mark));
	bool *is = xcalloc(nf ? nf : 1, sizeof(*is));
	unsigned long with = 0;
	uint32_t *seq = NULL;

	for (i = 0; i < nf; i++) {
		is[i] = g_regex_match(re, v->funcs[i].name, 0, NULL);
		nmatch += is[i];
		rows[i].id = (uint32_t)i;
		rows[i].text = v->funcs[i].name;
	}
	if (!nmatch) {
		warnx_("--%s %s: no function matches (of %zu in the stacks)",
		       callees ? "callees" : "callers", pattern, nf);
		goto out;
	}
	rows[nf].id = NB_EDGE;
	rows[nf].text = callees ? "[self]" : "[outermost]";
	for (i = 0; i < v->stacks_t.n; i++) {
		const struct vstack *s = &v->stacks[i];
		bool found = false;

		n = views_seq_own(v, s, &seq, &cap);
		for (j = 0; j < n; j++) {
			size_t nb;

			if (!is[seq[j]])
				continue;
			found = true;
			if (callees)
				nb = j + 1 < n ? seq[j + 1] : nf;
			else
				nb = j > 0 ? seq[j - 1] : nf;
			if (mark[nb] == i + 1)
				continue;
			mark[nb] = i + 1;
			rows[nb].total += s->count;
		}
		if (found)
			with += s->count;
	}
	for (i = 0; i <= nf; i++)
		if (rows[i].total)
			rows[nrows++] = rows[i];
	qsort(rows, nrows, sizeof(*rows), cmp_row);
	if (nmatch > 1)
		warnx_("--%s %s: %zu functions match; reported together (^NAME$ for one)",
		       callees ? "callees" : "callers", pattern, nmatch);
	fprintf(out, "# %s of %s: in %lu of %lu %s (%.2f%%); %% of those %lu %s\n",
		callees ? "callees" : "callers", pattern, with, v->total, v->what,
		pct(with, v->total), with, v->what);
	for (i = 0; i < nf; i++) {
		if (!is[i])
			continue;
		fputs(nmatch > 1 ? "#   matches: " : "#   function: ", out);
		print_func(out, &v->funcs[i]);
		fputc('\n', out);
	}
	for (i = 0; i < nrows; i++) {
		fprintf(out, "%10lu %7.2f%%  ", rows[i].total, pct(rows[i].total, with));
		if (rows[i].id == NB_EDGE)
			fputs(rows[i].text, out);
		else
			print_func(out, &v->funcs[rows[i].id]);
		fputc('\n', out);
	}
out:
	free(seq);
	free(is);
	free(mark);
	free(rows);
	return nmatch ? 0 : -1;
}

/* --- per frame, for the flame graph (flame.c) */

size_t views_seq_lines(const struct views *v, const struct vstack *s, struct vseq **buf, size_t *cap)
{
	size_t i, k, n = 0;

	for (i = s->n; i-- > 0;) {
		const struct vloc *l = &v->locs[s->locs[i]];

		for (k = l->n; k-- > 0;) {
			*buf = grow(*buf, n, cap, sizeof(**buf));
			(*buf)[n].func = l->lines[k].func;
			(*buf)[n].line = l->lines[k].line;
			/* symbols_resolve: the inlined calls come before their function */
			(*buf)[n++].inlined = !l->raw && k + 1 < l->n;
		}
	}
	return n;
}
