// SPDX-License-Identifier: GPL-2.0
/*
 * ustack: a user_unwind_copy record unwound with the CFI of the mapped
 * files, and merged into the frame-pointer frames of its stack.
 *
 * The copy follows its stack, with the same cookie, and holds the user
 * registers at kernel entry (perf's PERF_SAMPLE_REGS_USER order: bx, bp,
 * sp, ip, r12 to r15), the top of the user stack, and the task's
 * executable file mappings: mapping i starts at map_starts[i], is
 * map_lens[i] bytes long, maps file map_files[i] of the stack (its index
 * in the stack's inodes[], bases[] and devs[]) from offset
 * bases[map_files[i]] + map_offsets[i].  inode_cache named those files
 * before the stack, so each mapping has its path.
 *
 * libdwfl is given the mappings as /proc/PID/maps lines, each from where
 * its file's first PT_LOAD lies (file_base()).  A set of mappings is
 * opened once, and kept by its lines (most stacks of a process share one).
 * A task's set that grows (a library loaded) grows the task's space: the
 * files already in it are not read again.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <elfutils/libdwelf.h>
#include <event-parse.h>
#include <gelf.h>
#include <glib.h>

#include "cfi.h"
#include "ustack.h"

#define MAX_FRAMES	512
#define MAX_SPACES	32	/* spaces kept open, each with its files */
#define MAX_SETS	256	/* sets of mappings kept, each with its space */
#define PERF_REGS	8	/* bx, bp, sp, ip, r12 to r15 */

/* The DWARF number of each register of the copy, in its order */
static const int copy_dwarf_reg[PERF_REGS] = { 3, CFI_REG_RBP, CFI_REG_RSP, CFI_REG_RIP,
					       12, 13, 14, 15 };

/* x86-64's: the only copies are of x86-64 tasks */
#define COPY_PAGE	4096ULL

/* A PT_LOAD of an ELF file */
struct copy_load {
	uint64_t	off, vaddr, filesz;
	bool		exec;
};

/* A file inode_cache named */
struct copy_file {
	char		*path;
	unsigned char	build_id[20];
	size_t		build_id_len;	/* 0: the trace gives none */
	uint64_t	ino;
	uint32_t	dev;
	enum { FILE_UNCHECKED, FILE_SAME, FILE_OTHER } state;
	/* Its PT_LOADs, read when it is checked; none if it is not ELF */
	struct copy_load *loads;
	size_t		nr_loads;
};

/* The libdwfl view of a set of mappings, or of a larger set */
struct copy_space {
	struct cfi_space *cfi;		/* NULL: a set libdwfl could not take */
	char		*lines;		/* the set it has, as its key */
};

/* A mapping as the copy gives it, with its file */
struct copy_mapping {
	uint64_t	start, len, off, ino, dev;	/* no padding: compared whole */
};

struct copy_unwinder {
	GHashTable	*paths;		/* "ino:dev" -> struct copy_file */
	/* A set of mappings, by its lines -> the copy_space that has it */
	GHashTable	*sets;
	GPtrArray	*spaces;	/* the copy_spaces, which own them */
	GHashTable	*last;		/* pid -> its latest copy_space */
	GString		*key;
	/* The mappings of the latest copy, its pid, and what they gave */
	GArray		*mappings;
	int		memo_pid;
	struct copy_space *memo_space;
	unsigned long	nr_sets, nr_opened;
	uint64_t	pcs[MAX_FRAMES];
	struct frame	cfi[MAX_FRAMES];
};

static void space_free(gpointer p)
{
	struct copy_space *space = p;

	cfi_space_free(space->cfi);
	free(space->lines);
	free(space);
}

static void forget_spaces(struct copy_unwinder *u)
{
	g_hash_table_remove_all(u->sets);
	g_hash_table_remove_all(u->last);
	g_ptr_array_set_size(u->spaces, 0);
	u->memo_space = NULL;
}

static void file_free(gpointer p)
{
	struct copy_file *f = p;

	free(f->path);
	free(f->loads);
	free(f);
}

static void file_read_loads(struct copy_file *f, Elf *elf)
{
	GElf_Phdr ph;
	size_t n;

	if (elf_getphdrnum(elf, &n) || !n)
		return;
	f->loads = xcalloc(n, sizeof(*f->loads));
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			f->loads[f->nr_loads++] = (struct copy_load){
				ph.p_offset, ph.p_vaddr, ph.p_filesz, ph.p_flags & PF_X };
}

/*
 * Where the file's first PT_LOAD lies, for its executable mapping of file
 * offset @off at @start.  That is @start - @off where every segment lies
 * as far from the first in memory as in the file (GNU ld), not where they
 * are further apart in memory (lld puts each in a page of its own, after a
 * gap, with no padding in the file).
 */
static uint64_t file_base(const struct copy_file *f, uint64_t start, uint64_t off)
{
	const struct copy_load *load = NULL;
	uint64_t gap;

	/* The mapping's segment: with lld, a read-only one shares its page */
	for (size_t i = 0; i < f->nr_loads; i++)
		if ((f->loads[i].off & ~(COPY_PAGE - 1)) == off && (!load || f->loads[i].exec))
			load = &f->loads[i];
	if (!load)
		return start - off;
	gap = (load->vaddr & ~(COPY_PAGE - 1)) - (f->loads[0].vaddr & ~(COPY_PAGE - 1));
	return gap <= start ? start - gap : start - off;
}

/*
 * Is the file at the path the one the trace named?  By its build-id when
 * the trace gives one, else by its inode and device: the CFI of another
 * file would give wrong frames.
 */
static bool file_is_same(struct copy_file *f)
{
	const void *id;
	struct stat st;
	bool same = false;
	Elf *elf;
	int fd, n;

	if (f->state != FILE_UNCHECKED)
		return f->state == FILE_SAME;
	fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		/* Gone is gone; out of descriptors may pass */
		if (errno == ENOENT || errno == ENOTDIR || errno == EACCES)
			f->state = FILE_OTHER;
		return false;
	}
	f->state = FILE_OTHER;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && !f->loads)
		file_read_loads(f, elf);
	if (!f->build_id_len) {
		uint64_t ino = 0;
		unsigned int ma = 0, mi = 0;

		if (mapped_identity(f->path, &ino, &ma, &mi) && !fstat(fd, &st)) {
			ino = st.st_ino;
			ma = major(st.st_dev);
			mi = minor(st.st_dev);
		}
		same = ino == f->ino && KDEV(ma, mi) == f->dev;
	} else if (elf) {
		n = dwelf_elf_gnu_build_id(elf, &id);
		same = n > 0 && (size_t)n == f->build_id_len && !memcmp(id, f->build_id, n);
	}
	if (elf)
		elf_end(elf);
	close(fd);
	if (same)
		f->state = FILE_SAME;
	return same;
}

struct copy_unwinder *copy_unwinder_new(void)
{
	struct copy_unwinder *u = xcalloc(1, sizeof(*u));
	struct rlimit rl;

	/* Each set of mappings kept holds its files open */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	elf_version(EV_CURRENT);
	u->paths = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, file_free);
	u->sets = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	u->spaces = g_ptr_array_new_with_free_func(space_free);
	u->last = g_hash_table_new(g_direct_hash, g_direct_equal);
	u->key = g_string_new(NULL);
	u->mappings = g_array_new(FALSE, FALSE, sizeof(struct copy_mapping));
	return u;
}

void copy_unwinder_free(struct copy_unwinder *u)
{
	if (!u)
		return;
	g_hash_table_destroy(u->paths);
	g_hash_table_destroy(u->sets);
	g_hash_table_destroy(u->last);
	g_ptr_array_free(u->spaces, TRUE);
	g_array_free(u->mappings, TRUE);
	g_string_free(u->key, TRUE);
	free(u);
}

void copy_unwinder_name(struct copy_unwinder *u, uint64_t ino, uint32_t dev, const char *path,
			const unsigned char *build_id, size_t build_id_len)
{
	char *id = g_strdup_printf("%" G_GUINT64_FORMAT ":%u", ino, dev);
	struct copy_file *f;

	/* The latest naming holds; a file without a path is not opened */
	if (!path || path[0] != '/' || strchr(path, '\n')) {
		if (g_hash_table_remove(u->paths, id))
			u->memo_space = NULL;
		g_free(id);
		return;
	}
	/* Named again in each sub-buffer: what was checked stays checked */
	f = g_hash_table_lookup(u->paths, id);
	if (f && build_id_len && f->build_id_len == build_id_len && !strcmp(f->path, path) &&
	    !memcmp(f->build_id, build_id, build_id_len)) {
		g_free(id);
		return;
	}
	f = xcalloc(1, sizeof(*f));
	f->path = xstrdup(path);
	f->ino = ino;
	f->dev = dev;
	if (build_id && build_id_len <= sizeof(f->build_id)) {
		memcpy(f->build_id, build_id, build_id_len);
		f->build_id_len = build_id_len;
	}
	g_hash_table_replace(u->paths, id, f);
	/* The same mappings may now give other lines */
	u->memo_space = NULL;
}

void copy_unwinder_counts(const struct copy_unwinder *u, unsigned long *sets,
			  unsigned long *opened)
{
	*sets = u->nr_sets;
	*opened = u->nr_opened;
}

static const char *const copy_fields[] = {
	"cookie", "regs", "map_starts", "map_lens", "map_offsets", "map_files", "stack",
};

const char *copy_format_lacks(struct tep_event *ev)
{
	for (size_t i = 0; i < G_N_ELEMENTS(copy_fields); i++)
		if (!tep_find_field(ev, copy_fields[i]))
			return copy_fields[i];
	return NULL;
}

bool copy_cookie(struct tep_event *ev, struct tep_record *r, uint64_t *cookie)
{
	unsigned long long v;
	const char *why;

	if (!field_num(ev, r, "cookie", &v, &why))
		return false;
	*cookie = v;
	return true;
}

struct copy_maps {
	const unsigned char *starts, *lens, *offsets, *files;
	size_t nr;
};

/* The file and file offset of address @pc, from the copy's mappings */
static bool copy_frame(const GArray *maps, uint64_t pc, struct frame *f)
{
	for (guint i = 0; i < maps->len; i++) {
		const struct copy_mapping *m = &g_array_index(maps, struct copy_mapping, i);

		if (pc < m->start || pc - m->start >= m->len)
			continue;
		f->off = m->off + (pc - m->start);
		f->ino = m->ino;
		f->dev = (uint32_t)m->dev;
		f->cfi = true;
		return true;
	}
	return false;
}

struct map_line {
	uint64_t	base, end, ino;
	uint32_t	dev;
	const char	*path;
};

/* By address; a file's two mappings (same base) the shorter first, as
 * libdwfl ends a module where its last line does */
static int by_base(const void *a, const void *b)
{
	const struct map_line *x = a, *y = b;

	if (x->base != y->base)
		return x->base < y->base ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Is @line (@len bytes, its newline included) a whole line of @lines? */
static bool has_line(const char *lines, size_t n, const char *line, size_t len)
{
	for (const char *p = lines; (p = memmem(p, n - (size_t)(p - lines), line, len)); p++)
		if (p == lines || p[-1] == '\n')
			return true;
	return false;
}

/* Are all the lines of @old among @lines? */
static bool lines_within(const char *old, const char *lines)
{
	size_t n = strlen(lines);

	while (*old) {
		size_t len = strcspn(old, "\n") + (strchr(old, '\n') ? 1 : 0);

		if (!has_line(lines, n, old, len))
			return false;
		old += len;
	}
	return true;
}

/* The mappings of the copy, as far as the stack names their files */
static size_t copy_mappings(struct tep_handle *tep, const struct copy_maps *m,
			    const struct stack_frames *stack, struct copy_mapping *maps)
{
	size_t n = 0;

	for (size_t i = 0; i < m->nr; i++) {
		unsigned int k = (unsigned int)tep_read_number(tep, m->files + 2 * i, 2);

		if (k >= stack->nfiles)
			continue;
		maps[n++] = (struct copy_mapping){
			.start = tep_read_number(tep, m->starts + 8 * i, 8),
			.len = tep_read_number(tep, m->lens + 4 * i, 4),
			.off = stack->bases[k] + tep_read_number(tep, m->offsets + 4 * i, 4),
			.ino = stack->inodes[k], .dev = stack->devs[k],
		};
	}
	return n;
}

/*
 * The libdwfl view of the copy's mappings, opened once per set, or grown
 * from the task's last set.  A file whose path names another file now
 * (replaced since) is left out, so that the unwind stops there rather than
 * read the wrong CFI.
 */
static struct cfi_space *copy_space(struct copy_unwinder *u, struct tep_handle *tep,
				    const struct copy_maps *m, const struct stack_frames *stack,
				    int pid)
{
	struct copy_mapping *maps = xcalloc(m->nr ? m->nr : 1, sizeof(*maps));
	size_t nr = copy_mappings(tep, m, stack, maps), n = 0;
	struct copy_space *space, *grown;
	char id[48], *why = NULL;
	struct map_line *lines;
	FILE *f;

	/* Most copies have the mappings of the one before */
	if (u->memo_space && pid == u->memo_pid && nr == u->mappings->len &&
	    !memcmp(maps, u->mappings->data, nr * sizeof(*maps))) {
		free(maps);
		return u->memo_space->cfi;
	}
	g_array_set_size(u->mappings, 0);
	g_array_append_vals(u->mappings, maps, nr);
	lines = xcalloc(nr ? nr : 1, sizeof(*lines));
	for (size_t i = 0; i < nr; i++) {
		struct copy_file *file;

		snprintf(id, sizeof(id), "%" PRIu64 ":%u", maps[i].ino, (unsigned int)maps[i].dev);
		file = g_hash_table_lookup(u->paths, id);
		if (!file || maps[i].off > maps[i].start || !maps[i].len || !file_is_same(file))
			continue;
		lines[n++] = (struct map_line){ file_base(file, maps[i].start, maps[i].off),
						maps[i].start + maps[i].len, maps[i].ino,
						(uint32_t)maps[i].dev, file->path };
	}
	free(maps);
	qsort(lines, n, sizeof(*lines), by_base);
	g_string_truncate(u->key, 0);
	for (size_t i = 0; i < n; i++)
		g_string_append_printf(u->key, "%" PRIx64 "-%" PRIx64 " r-xp 00000000 %02x:%02x %"
				       PRIu64 " %s\n", lines[i].base, lines[i].end,
				       KDEV_MAJOR(lines[i].dev), KDEV_MINOR(lines[i].dev),
				       lines[i].ino, lines[i].path);
	free(lines);
	space = g_hash_table_lookup(u->sets, u->key->str);
	if (!space) {
		if (u->spaces->len >= MAX_SPACES || g_hash_table_size(u->sets) >= MAX_SETS)
			forget_spaces(u);
		grown = g_hash_table_lookup(u->last, GINT_TO_POINTER(pid));
		f = u->key->len ? fmemopen(u->key->str, u->key->len, "r") : NULL;
		if (grown && grown->cfi && f && lines_within(grown->lines, u->key->str)) {
			/* Its earlier sets are within this one: they keep it */
			space = grown;
			free(space->lines);
			if (!cfi_space_report(space->cfi, f, &why)) {
				cfi_space_free(space->cfi);
				space->cfi = NULL;
			}
		} else {
			space = xcalloc(1, sizeof(*space));
			/* A set libdwfl cannot take is kept as NULL: not tried again */
			space->cfi = f ? cfi_space_new(f, &why) : NULL;
			g_ptr_array_add(u->spaces, space);
			u->nr_opened++;
		}
		space->lines = xstrdup(u->key->str);
		free(why);
		if (f)
			fclose(f);
		g_hash_table_insert(u->sets, g_strdup(u->key->str), space);
		u->nr_sets++;
	}
	g_hash_table_insert(u->last, GINT_TO_POINTER(pid), space);
	u->memo_pid = pid;
	u->memo_space = space;
	return space->cfi;
}

static bool same_frame(const struct frame *a, const struct frame *b)
{
	return a->off == b->off && a->ino == b->ino && a->dev == b->dev;
}

bool copy_merge(struct copy_unwinder *u, struct tep_event *ev, struct tep_record *r,
		struct stack_frames *stack, bool *edge, const char **why)
{
	struct tep_handle *tep = ev->tep;
	struct cfi_copy copy = { .valid = 0 };
	const unsigned char *regs;
	struct copy_maps m;
	size_t nregs, nlens, noffs, nfiles, ncfi = 0, i, j, k, nr;
	struct cfi_space *space;
	int npcs;

	*edge = false;
	if (!(regs = field_array(ev, r, "regs", 8, &nregs, why)) ||
	    !(m.starts = field_array(ev, r, "map_starts", 8, &m.nr, why)) ||
	    !(m.lens = field_array(ev, r, "map_lens", 4, &nlens, why)) ||
	    !(m.offsets = field_array(ev, r, "map_offsets", 4, &noffs, why)) ||
	    !(m.files = field_array(ev, r, "map_files", 2, &nfiles, why)) ||
	    !(copy.stack = field_array(ev, r, "stack", 1, &copy.len, why)))
		return false;
	if (nlens != m.nr || noffs != m.nr || nfiles != m.nr) {
		*why = "mappings with unequal numbers of starts, lengths, offsets and files";
		return false;
	}
	/* No registers (a task the kernel took none of), or no stack */
	if (nregs < PERF_REGS || !copy.len || !m.nr)
		return true;
	for (i = 0; i < PERF_REGS; i++) {
		copy.regs[copy_dwarf_reg[i]] = tep_read_number(tep, regs + 8 * i, 8);
		copy.valid |= 1u << copy_dwarf_reg[i];
	}
	space = copy_space(u, tep, &m, stack, tep_data_pid(tep, r));
	if (!space)
		return true;
	npcs = cfi_unwind(space, &copy, u->pcs, MAX_FRAMES, edge);
	/* Each frame in a mapping, a caller's by its call (the address before) */
	for (i = 0; i < (size_t)npcs; i++) {
		uint64_t pc = u->pcs[i];

		/* copy_space() left the copy's mappings decoded in u->mappings */
		if (!copy_frame(u->mappings, i ? pc - 1 : pc, &u->cfi[ncfi]))
			break;
		if (i)
			u->cfi[ncfi].off++;
		ncfi++;
	}
	if (i < (size_t)npcs || ncfi < 2)
		*edge = false;
	if (ncfi < 2)
		return true;
	/*
	 * The unwind as far as it goes.  Where it ended (at the copy's end, or
	 * in code it has no CFI for), the kernel's walk goes on if it has that
	 * frame too; its frames before are left out, as the unwind found
	 * others there (a frame pointer that was a general register, or the
	 * caller of a leaf function without a frame).
	 */
	j = stack->nr;
	for (i = 1, k = 0; i < ncfi; i++)
		k += same_frame(&u->cfi[i], &u->cfi[ncfi - 1]);
	/* In a recursion, the same return address as many times in */
	for (i = 1; i < stack->nr; i++)
		if (same_frame(&u->cfi[ncfi - 1], &stack->frames[i]) && !--k) {
			j = i + 1;
			break;
		}
	/* Frames the walk found too are its own */
	for (i = 0; i < ncfi; i++)
		for (k = 0; k < stack->nr && u->cfi[i].cfi; k++)
			if (same_frame(&u->cfi[i], &stack->frames[k]))
				u->cfi[i].cfi = false;
	nr = ncfi + (stack->nr - j);
	if (nr > stack->cap) {
		stack->cap = nr * 2;
		stack->frames = xrealloc(stack->frames, stack->cap * sizeof(*stack->frames));
	}
	if (j < stack->nr)
		memmove(stack->frames + ncfi, stack->frames + j,
			(stack->nr - j) * sizeof(*stack->frames));
	memcpy(stack->frames, u->cfi, ncfi * sizeof(*stack->frames));
	stack->nr = nr;
	return true;
}
