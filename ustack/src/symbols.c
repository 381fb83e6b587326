// SPDX-License-Identifier: GPL-2.0
/*
 * File offsets to symbols and source lines, with libdwfl.
 *
 * A file is known by the (inode, device) that the frames carry, and named
 * by an inode_cache event.  Before a file is read, its path must still
 * lead to that inode and device: otherwise it was replaced or deleted
 * since, and reading it would give the symbols of another program.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/sysmacros.h>

#include "ustack.h"

enum file_state {
	FILE_UNCHECKED,
	FILE_OK,
	FILE_BAD,	/* why says why */
};

struct file {
	char		*path;
	enum file_state	state;
	char		*why;
	Dwfl		*dwfl;
	Dwfl_Module	*mod;
	struct map	*resolved;	/* offset (+1 for a return address) -> string */
};

struct symbols {
	struct map	*files;		/* (ino, dev) -> struct file */
	struct map	*unknown;	/* (ino, dev) of frames never named */
	size_t		changed, unresolved, resolved, cache_hits;
	char		buf[4096];
};

static char *debuginfo_path;

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

struct symbols *symbols_new(void)
{
	struct symbols *syms = xcalloc(1, sizeof(*syms));

	syms->files = map_new();
	syms->unknown = map_new();
	return syms;
}

static void free_file(void *p)
{
	struct file *file = p;

	if (file->dwfl)
		dwfl_end(file->dwfl);
	map_free(file->resolved, free);
	free(file->path);
	free(file->why);
	free(file);
}

void symbols_free(struct symbols *syms)
{
	map_free(syms->files, free_file);
	map_free(syms->unknown, NULL);
	free(syms);
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		die("out of memory");
	va_end(ap);
	return s;
}

void symbols_name_file(struct symbols *syms, uint64_t ino, uint32_t dev,
		       const char *path, int err)
{
	struct file *file = map_get(syms->files, ino, dev);

	if (file) {
		/* Named again after the kernel's table was emptied */
		if (path && file->path && !strcmp(path, file->path))
			return;
		map_del(syms->files, ino, dev);
		free_file(file);
	}
	file = xcalloc(1, sizeof(*file));
	file->resolved = map_new();
	if (path) {
		file->path = xstrdup(path);
	} else {
		file->state = FILE_BAD;
		file->why = xasprintf("the kernel could not name the file: %s", strerror(-err));
	}
	map_put(syms->files, ino, dev, file);
}

static const char DELETED[] = " (deleted)";

/*
 * The inode and device of a file as the kernel names the files of
 * mappings, which is what the frames carry: map a page of it and read
 * that mapping's line of /proc/self/maps.  stat() may say otherwise: on
 * overlayfs it gives a device of overlayfs's own, on NFS another inode.
 */
static int mapped_identity(const char *path, uint64_t *ino, unsigned int *ma, unsigned int *mi)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned long start, end;
	char line[512];
	FILE *maps;
	void *p;
	int fd, ret = -1;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	p = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	maps = fopen("/proc/self/maps", "re");
	while (maps && fgets(line, sizeof(line), maps)) {
		unsigned long long inode;

		if (sscanf(line, "%lx-%lx %*s %*s %x:%x %llu", &start, &end, ma, mi, &inode) == 5 &&
		    start == (unsigned long)p) {
			*ino = inode;
			ret = 0;
			break;
		}
	}
	if (maps)
		fclose(maps);
	munmap(p, (size_t)page);
	return ret;
}

/* Does the path still lead to the file the frames were in? */
static void check_file(struct file *file, uint64_t ino, uint32_t dev, size_t *changed)
{
	size_t len = strlen(file->path);
	unsigned int ma, mi;
	uint64_t now_ino;
	struct stat st;

	if (stat(file->path, &st)) {
		if (len > sizeof(DELETED) - 1 &&
		    !strcmp(file->path + len - (sizeof(DELETED) - 1), DELETED))
			file->why = xasprintf("%s was deleted while it was mapped", file->path);
		else
			file->why = xasprintf("%s: %s", file->path, strerror(errno));
		goto bad;
	}
	if (mapped_identity(file->path, &now_ino, &ma, &mi)) {
		now_ino = st.st_ino;
		ma = major(st.st_dev);
		mi = minor(st.st_dev);
	}
	if (now_ino == ino && ma == KDEV_MAJOR(dev) && mi == KDEV_MINOR(dev)) {
		file->state = FILE_OK;
		return;
	}
	file->why = xasprintf("%s is now inode %" PRIu64 " on %u:%u, not the traced inode %" PRIu64
			      " on %u:%u", file->path, now_ino, ma, mi, ino,
			      KDEV_MAJOR(dev), KDEV_MINOR(dev));
	(*changed)++;
bad:
	file->state = FILE_BAD;
}

static void open_file(struct file *file)
{
	file->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!file->dwfl) {
		file->why = xasprintf("libdwfl: %s", dwfl_errmsg(-1));
		goto bad;
	}
	dwfl_report_begin(file->dwfl);
	file->mod = dwfl_report_elf(file->dwfl, file->path, file->path, -1, 0, false);
	dwfl_report_end(file->dwfl, NULL, NULL);
	if (!file->mod) {
		file->why = xasprintf("%s: %s", file->path, dwfl_errmsg(-1));
		goto bad;
	}
	return;
bad:
	file->state = FILE_BAD;
}

/* The address that a file offset is loaded at, by the program headers */
static bool offset_to_address(struct file *file, uint64_t off, Dwarf_Addr *addr)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(file->mod, &bias);
	size_t i, n;

	if (!elf || elf_getphdrnum(elf, &n))
		return false;
	for (i = 0; i < n; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, (int)i, &mem);

		if (ph && ph->p_type == PT_LOAD && off >= ph->p_offset &&
		    off < ph->p_offset + ph->p_filesz) {
			*addr = off - ph->p_offset + ph->p_vaddr + bias;
			return true;
		}
	}
	return false;
}

static const char *describe(struct symbols *syms, struct file *file, uint64_t off,
			    bool return_address, const char **why)
{
	Dwarf_Addr addr, lookup;
	GElf_Off symoff;
	GElf_Sym sym;
	const char *name, *src = NULL;
	Dwfl_Line *line;
	int lineno = 0;
	size_t n;

	if (!offset_to_address(file, off, &addr)) {
		*why = "offset outside the file's loaded segments";
		return NULL;
	}
	/* A return address is after the call: look up the call itself */
	lookup = return_address && addr ? addr - 1 : addr;
	name = dwfl_module_addrinfo(file->mod, lookup, &symoff, &sym, NULL, NULL, NULL);
	line = dwfl_module_getsrc(file->mod, lookup);
	if (line)
		src = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);

	if (name)
		n = (size_t)snprintf(syms->buf, sizeof(syms->buf), "%s+0x%" PRIx64, name,
				     (uint64_t)(symoff + (addr - lookup)));
	else
		n = (size_t)snprintf(syms->buf, sizeof(syms->buf), "0x%" PRIx64, (uint64_t)addr);
	if (n < sizeof(syms->buf)) {
		if (src)
			snprintf(syms->buf + n, sizeof(syms->buf) - n, " (%s:%d)", src, lineno);
		else
			snprintf(syms->buf + n, sizeof(syms->buf) - n, " (%s)", file->path);
	}
	return syms->buf;
}

const char *symbols_resolve(struct symbols *syms, const struct frame *f,
			    bool return_address, const char **why)
{
	struct file *file;
	const char *s;
	char *cached;

	*why = NULL;
	if (f->ino == USTACK_NO_VMA) {
		*why = "no mapping at this address";
		goto raw;
	}
	if (f->ino == 0 && f->dev == 0) {
		*why = "anonymous memory or the vdso";
		goto raw;
	}
	file = map_get(syms->files, f->ino, f->dev);
	if (!file) {
		*why = "inode never named by an inode_cache event";
		map_put(syms->unknown, f->ino, f->dev, syms);
		goto raw;
	}
	cached = map_get(file->resolved, f->off, return_address);
	if (cached) {
		syms->cache_hits++;
		syms->resolved++;
		return cached;
	}
	if (file->state == FILE_UNCHECKED) {
		check_file(file, f->ino, f->dev, &syms->changed);
		if (file->state == FILE_OK)
			open_file(file);
	}
	if (file->state == FILE_BAD) {
		*why = file->why;
		goto raw;
	}
	s = describe(syms, file, f->off, return_address, why);
	if (!s)
		goto raw;
	map_put(file->resolved, f->off, return_address, xstrdup(s));
	syms->resolved++;
	return s;
raw:
	syms->unresolved++;
	return NULL;
}

void symbols_stats(const struct symbols *syms, struct symbols_stats *st)
{
	st->files = map_size(syms->files);
	st->unknown_inodes = map_size(syms->unknown);
	st->changed = syms->changed;
	st->unresolved = syms->unresolved;
	st->resolved = syms->resolved;
	st->cache_hits = syms->cache_hits;
}
