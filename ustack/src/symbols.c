// SPDX-License-Identifier: GPL-2.0
/*
 * File offsets to symbols and source lines, with libdwfl.
 *
 * A file is known by the (inode, device) that the frames carry, and named
 * by an inode_cache event, with its ELF build-id when the kernel gives it.
 * Before a file is read it must be the file that was traced: with a
 * build-id, the file's must be the same (a different one was replaced);
 * without one, its path must still lead to that inode and device.
 * Otherwise it was replaced or deleted since, and reading it would give
 * the symbols of another program.  With --binaries DIR, files are looked
 * up in DIR first, by build-id (DIR/.build-id/xx/rest[.debug], or any ELF
 * file under DIR), else by path or name, and checked by build-id alone.
 *
 * A file's symbols are read once into a table sorted by address, and the
 * subprograms of each CU once into another, so that a lookup is a binary
 * search; the inlined calls are found under the subprogram that holds the
 * address.  What is resolved is kept per (file, offset), as pointers to
 * libdw's strings and to strings interned per file.  README.md, "Symbols".
 */
#include <dwarf.h>
#include <glib.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <ftw.h>
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

/* A function symbol: the sorted table answers most lookups by binary search */
struct fsym {
	uint64_t	start, end;
	uint64_t	maxend;		/* the highest end of this and every entry before */
	const char	*raw;		/* libdw's string */
	const char	*name;		/* demangled, interned; NULL until asked */
	uint32_t	ndx;		/* in the symbol table: the first is preferred */
	uint8_t		bind;		/* as libdwfl ranks bindings */
};

/* A subprogram of a CU with code, by the ranges of its DIE */
struct subprog {
	uint64_t	start, end, maxend;
	Dwarf_Off	die;
};

struct cu_subprogs {
	struct subprog	*v;
	size_t		n;
};

/* Storage that lives as long as the file: a chain of chunks */
struct chunk {
	struct chunk	*next;
	size_t		used, size;
	max_align_t	data[];
};


struct file {
	char		*path;		/* as traced: what the report prints */
	char		*open_path;	/* what is read: path, or a file under --binaries */
	enum file_state	state;
	char		*why;
	bool		has_id;		/* the trace gave a build-id, or none */
	size_t		id_len;		/* 0: the file has none (build_id=none) */
	unsigned char	id[BUILD_ID_MAX];
	Dwfl		*dwfl;
	Dwfl_Module	*mod;
	bool		tables;		/* fsyms, sizeless built */
	struct fsym	*fsyms;
	size_t		nfsyms;
	uint64_t	*sizeless;	/* addresses of sizeless symbols, sorted */
	size_t		nsizeless;
	struct map	*cus;		/* CU DIE offset, Dwarf -> struct cu_subprogs */
	struct map	*strings;	/* string hash -> interned string list */
	struct chunk	*chunks;
	struct map	*resolved;	/* offset, return address -> struct lines */
	struct map	*abs_src;	/* libdw's source name, comp_dir -> absolute */
};

/* What the cache keeps for a (file, offset): pointers only */
struct lines {
	size_t		n;
	struct sym	v[];
};

/* An ELF file under --binaries, by its build-id */
struct binary {
	char		*path;
	const char	*base;		/* its name, in path */
	size_t		id_len;
	unsigned char	id[BUILD_ID_MAX];
	bool		debug_only;	/* a separate debug file: no code */
};

struct symbols {
	struct map	*files;		/* (ino, dev) -> struct file */
	struct map	*unknown;	/* (ino, dev) of frames never named */
	size_t		changed, replaced, unresolved, resolved, cache_hits;
	struct file	*last;		/* the file of the last frame: the next is often in it */
	uint64_t	last_ino;
	uint32_t	last_dev;
};

static char *debuginfo_path;

/* --binaries DIR: the files of the trace, and their debug files */
static char *binaries_dir;
static struct binary *binaries;
static size_t nbinaries;
static bool binaries_scanned;

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

static void free_cu(void *p)
{
	struct cu_subprogs *cu = p;

	free(cu->v);
	free(cu);
}

static void free_file(void *p)
{
	struct file *file = p;
	struct chunk *c, *next;

	if (file->dwfl)
		dwfl_end(file->dwfl);
	map_free(file->resolved, NULL);
	map_free(file->abs_src, NULL);
	map_free(file->strings, NULL);
	map_free(file->cus, free_cu);
	for (c = file->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	free(file->fsyms);
	free(file->sizeless);
	if (file->open_path != file->path)
		free(file->open_path);
	free(file->path);
	free(file->why);
	free(file);
}

void symbols_free(struct symbols *syms)
{
	map_free(syms->files, free_file);
	map_free(syms->unknown, NULL);
	free(syms);
	for (size_t i = 0; i < nbinaries; i++)
		free(binaries[i].path);
	free(binaries);
	binaries = NULL;
	nbinaries = 0;
	binaries_scanned = false;
}

static void set_why(struct file *file, char *why);

static bool same_id(const struct file *file, const unsigned char *id, size_t len)
{
	if (!id)
		return !file->has_id;
	return file->has_id && file->id_len == len && !memcmp(file->id, id, len);
}

void symbols_name_file(struct symbols *syms, uint64_t ino, uint32_t dev,
		       const char *path, int err, const unsigned char *build_id,
		       size_t build_id_len)
{
	struct file *file = map_get(syms->files, ino, dev);

	if (build_id_len > BUILD_ID_MAX)
		build_id_len = BUILD_ID_MAX;	/* input.c allows no more */
	if (file) {
		/* Named again after the kernel's table was emptied */
		if (path && file->path && !strcmp(path, file->path) &&
		    same_id(file, build_id, build_id_len))
			return;
		map_del(syms->files, ino, dev);
		if (syms->last == file)
			syms->last = NULL;
		free_file(file);
	}
	file = xcalloc(1, sizeof(*file));
	file->resolved = map_new();
	file->abs_src = map_new();
	file->strings = map_new();
	file->cus = map_new();
	if (build_id) {
		file->has_id = true;
		file->id_len = build_id_len;
		memcpy(file->id, build_id, build_id_len);
	}
	if (path) {
		file->path = xstrdup(path);
		file->open_path = file->path;
	} else {
		set_why(file, xasprintf("the kernel could not name the file: %s", strerror(-err)));
	}
	map_put(syms->files, ino, dev, file);
}

static const char DELETED[] = " (deleted)";

static void hex(char *out, const unsigned char *id, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * len] = '\0';
}

/* A reason, with the traced build-id after it: what to look for elsewhere */
static void set_why(struct file *file, char *why)
{
	char id[2 * BUILD_ID_MAX + 1];

	free(file->why);
	if (file->has_id && file->id_len) {
		hex(id, file->id, file->id_len);
		file->why = xasprintf("%s; build-id %s", why, id);
		free(why);
	} else {
		file->why = why;
	}
	file->state = FILE_BAD;
}

/* A file's build-id, read with libelf: -1 when it is no ELF file */
static ssize_t read_build_id(const char *path, unsigned char *id, bool *debug_only)
{
	const void *p;
	ssize_t len = -1;
	Elf *elf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF) {
		len = dwelf_elf_gnu_build_id(elf, &p);
		if (len > BUILD_ID_MAX)
			len = -1;	/* no kernel build-id is that long */
		else if (len > 0)
			memcpy(id, p, (size_t)len);
		else
			len = len < 0 ? -1 : 0;
		if (debug_only) {
			/* A separate debug file keeps .text's header, without its bytes */
			Elf_Scn *scn = NULL;
			size_t shstrndx;

			*debug_only = false;
			if (len >= 0 && !elf_getshdrstrndx(elf, &shstrndx))
				while ((scn = elf_nextscn(elf, scn))) {
					GElf_Shdr sh;
					const char *name;

					if (gelf_getshdr(scn, &sh) &&
					    (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
					    !strcmp(name, ".text")) {
						*debug_only = sh.sh_type == SHT_NOBITS;
						break;
					}
				}
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return len;
}

/* The build-id of an ELF file on this machine: -1 when it is none */
ssize_t symbols_file_build_id(const char *path, unsigned char *id)
{
	return read_build_id(path, id, NULL);
}

/* The directory an archive of ustack archive was unpacked into, removed at exit */
static char *unpacked;

static void remove_unpacked(void)
{
	if (unpacked)
		remove_tree(unpacked);
}

/* --binaries ARCHIVE: ustack archive's tar, unpacked into a directory of its own */
static char *unpack(const char *archive)
{
	char *dir = xstrdup("/tmp/ustack-binaries.XXXXXX");
	char *argv[] = { "tar", "-xf", (char *)archive, "-C", dir, NULL };

	if (!mkdtemp(dir))
		die("--binaries %s: cannot make a directory to unpack it: %s", archive,
		    strerror(errno));
	unpacked = dir;
	atexit(remove_unpacked);
	if (run_tar(argv))
		die("--binaries %s: not a directory, nor an archive that tar unpacks", archive);
	return dir;
}

void symbols_binaries(const char *dir)
{
	struct stat st;
	char *real;

	if (!stat(dir, &st) && S_ISREG(st.st_mode))
		dir = unpack(dir);
	real = realpath(dir, NULL);
	if (!real || stat(real, &st) || !S_ISDIR(st.st_mode))
		die("--binaries %s: %s", dir, real ? "not a directory" : strerror(errno));
	free(binaries_dir);
	binaries_dir = real;
	/* libdwfl looks for debug files in DIR/.build-id/xx/rest.debug too */
	free(debuginfo_path);
	debuginfo_path = xasprintf(":.debug:%s:/usr/lib/debug", real);
}

static int scan_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	unsigned char id[BUILD_ID_MAX];
	bool debug_only;
	ssize_t len;

	(void)ftw;
	if (type != FTW_F || !S_ISREG(st->st_mode) || st->st_size < 64)
		return 0;
	len = read_build_id(path, id, &debug_only);
	if (len < 0)
		return 0;
	binaries = xrealloc(binaries, (nbinaries + 1) * sizeof(*binaries));
	binaries[nbinaries] = (struct binary) { .path = xstrdup(path), .id_len = (size_t)len,
						.debug_only = debug_only };
	binaries[nbinaries].base = strrchr(binaries[nbinaries].path, '/') + 1;
	memcpy(binaries[nbinaries].id, id, (size_t)len);
	nbinaries++;
	return 0;
}

/* Every ELF file under DIR, once (symbolic links are not followed) */
static void scan_binaries(void)
{
	if (binaries_scanned)
		return;
	binaries_scanned = true;
	if (nftw(binaries_dir, scan_one, 32, FTW_PHYS))
		warnx_("--binaries %s: cannot read it all: %s", binaries_dir, strerror(errno));
}

static void use_path(struct file *file, const char *path)
{
	if (file->open_path != file->path)
		free(file->open_path);
	file->open_path = xstrdup(path);
}

/*
 * The file under --binaries: by build-id, else (when the trace has none
 * to check) by its path under DIR, then by its name anywhere in DIR.
 * A file of that path or name with another build-id is not the one.
 * The binary itself is needed, stripped or not: a separate debug file
 * (which libdwfl finds by build-id, in DIR/.build-id too) has lost the
 * file offsets of its program headers, which map a frame's offset.
 */
static bool find_in_binaries(struct file *file, bool *other)
{
	char idhex[2 * BUILD_ID_MAX + 1], *cand;
	const char *base = strrchr(file->path, '/');
	unsigned char id[BUILD_ID_MAX];
	bool debug_only;
	ssize_t len;
	size_t i;

	*other = false;
	base = base ? base + 1 : file->path;
	if (file->has_id && file->id_len) {
		hex(idhex, file->id, file->id_len);
		cand = xasprintf("%s/.build-id/%.2s/%s", binaries_dir, idhex, idhex + 2);
		len = read_build_id(cand, id, &debug_only);
		if (len == (ssize_t)file->id_len && !memcmp(id, file->id, file->id_len) &&
		    !debug_only) {
			use_path(file, cand);
			free(cand);
			return true;
		}
		free(cand);
		scan_binaries();
		for (i = 0; i < nbinaries; i++) {
			const struct binary *b = &binaries[i];

			if (b->id_len == file->id_len && !memcmp(b->id, file->id, b->id_len) &&
			    !b->debug_only) {
				use_path(file, b->path);
				return true;
			}
		}
		for (i = 0; i < nbinaries; i++)
			if (!strcmp(binaries[i].base, base) && !binaries[i].debug_only)
				*other = true;
		return false;
	}
	/* No build-id to look up: by path, then by name; "none" must have none */
	cand = xasprintf("%s%s%s", binaries_dir, file->path[0] == '/' ? "" : "/", file->path);
	len = read_build_id(cand, id, NULL);
	if (len >= 0 && (!file->has_id || len == 0)) {
		use_path(file, cand);
		free(cand);
		return true;
	}
	*other = len > 0;
	free(cand);
	scan_binaries();
	for (i = 0; i < nbinaries; i++) {
		if (strcmp(binaries[i].base, base) || binaries[i].debug_only)
			continue;
		if (!file->has_id || binaries[i].id_len == 0) {
			use_path(file, binaries[i].path);
			return true;
		}
		*other = true;
	}
	return false;
}

/*
 * Is the file the one the frames were in?  With a traced build-id, the
 * file's decides: the same is the same file (reinstalled, copied: at
 * another inode), another is a replaced file.  Without one (older
 * kernels, or build_id=none), the path must still lead to the traced
 * inode and device, as the kernel names the files of mappings.
 */
static void check_file(struct file *file, uint64_t ino, uint32_t dev, size_t *changed)
{
	size_t len = strlen(file->path);
	unsigned int ma, mi;
	uint64_t now_ino;
	struct stat st;

	if (stat(file->path, &st)) {
		if (len > sizeof(DELETED) - 1 &&
		    !strcmp(file->path + len - (sizeof(DELETED) - 1), DELETED))
			set_why(file, xasprintf("%s was deleted while it was mapped", file->path));
		else
			set_why(file, xasprintf("%s: %s", file->path, strerror(errno)));
		return;
	}
	if (file->has_id && file->id_len) {
		file->state = FILE_OK;	/* the build-id check follows */
		return;
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
	set_why(file, xasprintf("%s is now inode %" PRIu64 " on %u:%u, not the traced inode %"
				PRIu64 " on %u:%u", file->path, now_ino, ma, mi, ino,
				KDEV_MAJOR(dev), KDEV_MINOR(dev)));
	(*changed)++;
}

static void open_file(struct file *file, size_t *replaced)
{
	const unsigned char *id;
	GElf_Addr vaddr;
	int n;

	file->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!file->dwfl) {
		set_why(file, xasprintf("libdwfl: %s", dwfl_errmsg(-1)));
		return;
	}
	dwfl_report_begin(file->dwfl);
	file->mod = dwfl_report_elf(file->dwfl, file->path, file->open_path, -1, 0, false);
	dwfl_report_end(file->dwfl, NULL, NULL);
	if (!file->mod) {
		set_why(file, xasprintf("%s: %s", file->open_path, dwfl_errmsg(-1)));
		return;
	}
	if (!file->has_id)
		return;
	/* The traced build-id, or none, must be the file's */
	n = dwfl_module_build_id(file->mod, &id, &vaddr);
	if (n < 0)
		n = 0;
	if ((size_t)n != file->id_len || (n > 0 && memcmp(id, file->id, file->id_len))) {
		char now[2 * BUILD_ID_MAX + 1];

		if (n > 0 && n <= BUILD_ID_MAX)
			hex(now, id, (size_t)n);
		else
			strcpy(now, n ? "too long" : "none");
		if (file->id_len)
			set_why(file, xasprintf("%s was replaced: build-id differs (now %s)",
						file->open_path, now));
		else
			set_why(file, xasprintf("%s was replaced: build-id differs (traced none, now %s)",
						file->open_path, now));
		(*replaced)++;
	}
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

/*
 * The build-id and PT_LOAD segments of the file the frames of (ino, dev)
 * are in, from the ELF that libdwfl opened for its symbols: the binary
 * (the file, or its copy under --binaries), never a separate debug file,
 * whose program headers no longer give file offsets.
 */
bool symbols_elf(struct symbols *syms, uint64_t ino, uint32_t dev, struct elf_layout *out)
{
	struct file *file = map_get(syms->files, ino, dev);
	const unsigned char *id;
	GElf_Addr bias, vaddr;
	Elf *elf;
	size_t i, n;
	int len;

	memset(out, 0, sizeof(*out));
	if (!file || file->state != FILE_OK || !file->mod)
		return false;
	elf = dwfl_module_getelf(file->mod, &bias);
	if (!elf || elf_getphdrnum(elf, &n))
		return false;
	len = dwfl_module_build_id(file->mod, &id, &vaddr);
	if (len > 0 && len <= BUILD_ID_MAX)
		hex(out->build_id, id, (size_t)len);
	out->loads = xcalloc(n ? n : 1, sizeof(*out->loads));
	for (i = 0; i < n; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, (int)i, &mem);

		if (ph && ph->p_type == PT_LOAD)
			out->loads[out->nloads++] = (struct elf_load) {
				.vaddr = ph->p_vaddr, .offset = ph->p_offset,
				.filesz = ph->p_filesz, .memsz = ph->p_memsz,
			};
	}
	return true;
}

/* Memory that lives as long as the file */
static void *file_alloc(struct file *file, size_t size)
{
	struct chunk *c = file->chunks;
	void *p;

	/* What is kept here holds pointers and 64-bit numbers, no more */
	size = (size + sizeof(uint64_t) - 1) / sizeof(uint64_t) * sizeof(uint64_t);
	if (!c || c->size - c->used < size) {
		size_t cap = size > 65536 ? size : 65536;

		c = xmalloc(sizeof(*c) + cap);
		c->next = file->chunks;
		c->used = 0;
		c->size = cap;
		file->chunks = c;
	}
	p = (char *)c->data + c->used;
	c->used += size;
	return p;
}

struct istr {
	struct istr	*next;
	char		s[];
};

/* One copy of each string per file */
static const char *intern(struct file *file, const char *s)
{
	uint64_t h1 = 1469598103934665603ULL, h2 = 0;
	const unsigned char *p;
	struct istr *head, *i;
	size_t n;

	for (p = (const unsigned char *)s; *p; p++) {
		h1 = (h1 ^ *p) * 1099511628211ULL;
		h2 = h2 * 31 + *p;
	}
	head = map_get(file->strings, h1, h2);
	for (i = head; i; i = i->next)
		if (!strcmp(i->s, s))
			return i->s;
	n = strlen(s) + 1;
	i = file_alloc(file, sizeof(*i) + n);
	memcpy(i->s, s, n);
	i->next = head;
	map_put(file->strings, h1, h2, i);
	return i->s;
}

/* libstdc++'s demangler, the one eu-addr2line -C uses */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* A C++ (Itanium ABI) name demangled, as eu-addr2line -C does; interned */
static const char *demangled(struct file *file, const char *name)
{
	const char *r;
	char *d;
	int status = -1;

	if (name[0] != '_' || name[1] != 'Z')
		return intern(file, name);
	d = __cxa_demangle(name, NULL, NULL, &status);
	r = intern(file, status == 0 && d ? d : name);
	free(d);
	return r;
}

/* libdwfl's preference among symbols at one address (dwfl_module_addrsym.c) */
static uint8_t binding_rank(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		return 3;
	case STB_GNU_UNIQUE:
		return 2;
	case STB_WEAK:
		return 1;
	default:
		return 0;
	}
}

static int cmp_fsym(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* At one address, the one libdwfl would pick first */
	if (x->bind != y->bind)
		return x->bind > y->bind ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->ndx < y->ndx ? -1 : x->ndx > y->ndx;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The table of the symbols that dwfl_module_addrinfo considers, read once
 * with dwfl_module_getsym_info: sized ones sorted by address, and the
 * addresses of sizeless ones (labels), which send a lookup to libdwfl.
 */
static void build_tables(struct file *file)
{
	int i, n = dwfl_module_getsymtab(file->mod);
	size_t cap = 0, scap = 0;

	file->tables = true;
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(file->mod, i, &sym, &addr, &shndx,
							   NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);

		if (!name || !name[0] || sym.st_shndx == SHN_UNDEF || type == STT_SECTION ||
		    type == STT_FILE || type == STT_TLS)
			continue;
		if (!sym.st_size) {
			if (file->nsizeless == scap) {
				scap = scap ? scap * 2 : 64;
				file->sizeless = xrealloc(file->sizeless, scap * sizeof(uint64_t));
			}
			file->sizeless[file->nsizeless++] = addr;
			continue;
		}
		if (file->nfsyms == cap) {
			cap = cap ? cap * 2 : 256;
			file->fsyms = xrealloc(file->fsyms, cap * sizeof(*file->fsyms));
		}
		file->fsyms[file->nfsyms++] = (struct fsym) {
			.start = addr, .end = addr + sym.st_size, .raw = name,
			.ndx = (uint32_t)i, .bind = binding_rank(&sym),
		};
	}
	if (file->nfsyms)
		qsort(file->fsyms, file->nfsyms, sizeof(*file->fsyms), cmp_fsym);
	if (file->nsizeless)
		qsort(file->sizeless, file->nsizeless, sizeof(uint64_t), cmp_u64);
	for (size_t k = 0; k < file->nfsyms; k++)
		file->fsyms[k].maxend = k && file->fsyms[k - 1].maxend > file->fsyms[k].end ?
					file->fsyms[k - 1].maxend : file->fsyms[k].end;
}

/* The last index whose start is <= addr, or -1; works on fsym and subprog */
#define LAST_AT_OR_BELOW(v, n, addr) ({					\
	size_t lo_ = 0, hi_ = (n);					\
	while (lo_ < hi_) {						\
		size_t mid_ = lo_ + (hi_ - lo_) / 2;			\
		if ((v)[mid_].start <= (addr))				\
			lo_ = mid_ + 1;					\
		else							\
			hi_ = mid_;					\
	}								\
	(ptrdiff_t)lo_ - 1;						\
})

/*
 * The symbol of addr, as dwfl_module_addrinfo names it: the sized symbol
 * that holds it, of the highest binding, then the smallest.  What the
 * table cannot answer alone (symbols of different starts that hold it,
 * a label at that address, no sized symbol) goes to libdwfl.
 */
static const char *lookup_symbol(struct file *file, Dwarf_Addr addr, GElf_Off *off)
{
	const struct fsym *best = NULL;
	ptrdiff_t j;
	GElf_Sym sym;
	const char *name;

	if (!file->tables)
		build_tables(file);
	for (j = LAST_AT_OR_BELOW(file->fsyms, file->nfsyms, addr);
	     j >= 0 && file->fsyms[j].maxend > addr; j--) {
		const struct fsym *f = &file->fsyms[j];

		if (f->end <= addr)
			continue;
		if (best && best->start != f->start)
			goto slow;
		best = f;	/* earlier at one address: preferred */
	}
	if (!best)
		goto slow;
	if (file->nsizeless && bsearch(&addr, file->sizeless, file->nsizeless,
				       sizeof(uint64_t), cmp_u64))
		goto slow;
	if (!best->name)
		((struct fsym *)best)->name = demangled(file, best->raw);
	*off = addr - best->start;
	return best->name;
slow:
	name = dwfl_module_addrinfo(file->mod, addr, off, &sym, NULL, NULL, NULL);
	return name ? demangled(file, name) : NULL;
}

static int cmp_subprog(const void *a, const void *b)
{
	const struct subprog *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void add_subprogs(Dwarf_Die *parent, struct cu_subprogs *cu, size_t *cap)
{
	Dwarf_Die die;

	if (dwarf_child(parent, &die))
		return;
	do {
		int tag = dwarf_tag(&die);

		if (tag == DW_TAG_subprogram) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t o = 0;

			while ((o = dwarf_ranges(&die, o, &base, &lo, &hi)) > 0) {
				if (cu->n == *cap) {
					*cap = *cap ? *cap * 2 : 64;
					cu->v = xrealloc(cu->v, *cap * sizeof(*cu->v));
				}
				cu->v[cu->n++] = (struct subprog) {
					.start = lo, .end = hi, .die = dwarf_dieoffset(&die),
				};
			}
		} else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
			   tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
			   tag == DW_TAG_module) {
			add_subprogs(&die, cu, cap);
		}
	} while (dwarf_siblingof(&die, &die) == 0);
}

/* The subprograms of a CU, by address, read once per CU */
static struct cu_subprogs *cu_subprogs(struct file *file, Dwarf_Die *cudie)
{
	/* A CU of the file or of a file of its own (dwz, split DWARF) */
	uint64_t key = dwarf_dieoffset(cudie), dw = (uintptr_t)dwarf_cu_getdwarf(cudie->cu);
	struct cu_subprogs *cu = map_get(file->cus, key, dw);
	size_t cap = 0, k;

	if (cu)
		return cu;
	cu = xcalloc(1, sizeof(*cu));
	add_subprogs(cudie, cu, &cap);
	if (cu->n)
		qsort(cu->v, cu->n, sizeof(*cu->v), cmp_subprog);
	for (k = 0; k < cu->n; k++)
		cu->v[k].maxend = k && cu->v[k - 1].maxend > cu->v[k].end ?
				  cu->v[k - 1].maxend : cu->v[k].end;
	map_put(file->cus, key, dw, cu);
	return cu;
}

/* A DIE's name as eu-addr2line takes it: the linkage name, else DW_AT_name */
static const char *die_name(struct file *file, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name;

	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr) ?:
				dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!name)
		name = dwarf_diename(die);
	return name ? demangled(file, name) : "??";
}

#define MAX_INLINE 32

/*
 * The inlined subroutines that hold addr, outermost first: found from the
 * subprogram that holds it (by the CU's table), going down through the
 * scopes that hold it.  dwarf_getscopes would walk the whole CU.
 */
static size_t inline_chain(struct file *file, Dwarf_Addr addr, Dwarf_Die *cudie,
			   Dwarf_Die *chain)
{
	struct cu_subprogs *cu = cu_subprogs(file, cudie);
	Dwarf_Die scope, child;
	size_t n = 0;
	ptrdiff_t j;

	for (j = LAST_AT_OR_BELOW(cu->v, cu->n, addr); j >= 0 && cu->v[j].maxend > addr; j--)
		if (cu->v[j].end > addr)
			break;
	if (j < 0 || cu->v[j].end <= addr ||
	    !dwarf_offdie(dwarf_cu_getdwarf(cudie->cu), cu->v[j].die, &scope))
		return 0;
	for (;;) {
		bool deeper = false;

		if (dwarf_child(&scope, &child))
			break;
		do {
			int tag = dwarf_tag(&child);

			if ((tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block ||
			     tag == DW_TAG_try_block || tag == DW_TAG_catch_block) &&
			    dwarf_haspc(&child, addr) > 0) {
				if (tag == DW_TAG_inlined_subroutine && n < MAX_INLINE)
					chain[n++] = child;
				scope = child;
				deeper = true;
				break;
			}
		} while (dwarf_siblingof(&child, &child) == 0);
		if (!deeper)
			break;
	}
	return n;
}

/*
 * A source file's name made absolute with its CU's DW_AT_comp_dir, as
 * addr2line -A does ("../sysdeps/x.h" in /build/glibc/nptl), and without
 * "." or ".." (g_canonicalize_filename, by the name alone).  libdw's
 * names live as long as the file: the result is kept per name.
 */
static const char *absolute_src(struct file *file, const char *src, const char *comp_dir)
{
	const char *abs;
	char *c;

	if (!src)
		return NULL;
	if (src[0] != '/' && (!comp_dir || comp_dir[0] != '/'))
		return src;	/* nothing to make it absolute with */
	abs = map_get(file->abs_src, (uintptr_t)src, (uintptr_t)comp_dir);
	if (abs)
		return abs;
	c = g_canonicalize_filename(src, src[0] == '/' ? NULL : comp_dir);
	abs = intern(file, c);
	g_free(c);
	map_put(file->abs_src, (uintptr_t)src, (uintptr_t)comp_dir, (void *)abs);
	return abs;
}

static struct lines *describe(struct file *file, uint64_t off, bool return_address,
			     const char **why)
{
	Dwarf_Addr addr, lookup, cubias;
	Dwarf_Die chain[MAX_INLINE], *cudie;
	Dwarf_Files *files = NULL;
	Dwarf_Attribute cattr;
	GElf_Off symoff;
	const char *name, *src = NULL, *comp_dir = NULL;
	struct lines *l;
	Dwfl_Line *line;
	int lineno = 0;
	size_t n = 0, i;

	if (!offset_to_address(file, off, &addr)) {
		*why = "offset outside the file's loaded segments";
		return NULL;
	}
	/* A return address is after the call: look up the call itself */
	lookup = return_address && addr ? addr - 1 : addr;
	name = lookup_symbol(file, lookup, &symoff);
	line = dwfl_module_getsrc(file->mod, lookup);
	if (line)
		src = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);

	cudie = dwfl_module_addrdie(file->mod, lookup, &cubias);
	if (cudie)
		comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &cattr));
	src = absolute_src(file, src, comp_dir);
	if (cudie) {
		n = inline_chain(file, lookup - cubias, cudie, chain);
		if (n && dwarf_getsrcfiles(cudie, &files, NULL))
			files = NULL;
	}

	l = file_alloc(file, sizeof(*l) + (n + 1) * sizeof(l->v[0]));
	l->n = n + 1;
	/* Innermost first: its line is the line table's */
	for (i = 0; i < n; i++) {
		Dwarf_Die *die = &chain[n - 1 - i];
		struct sym *s = &l->v[i];
		Dwarf_Attribute attr;
		Dwarf_Word val;

		*s = (struct sym) { .name = die_name(file, die), .src = src ?: file->path,
				    .line = lineno, .no_line = !src, .inlined = true };
		/* The caller's line is where this one was inlined */
		src = NULL;
		lineno = 0;
		if (files && dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &val) == 0)
			src = absolute_src(file, dwarf_filesrc(files, val, NULL, NULL), comp_dir);
		if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &val) == 0)
			lineno = (int)val;
	}
	l->v[n] = (struct sym) {
		.name = name, .src = src ?: file->path, .line = lineno, .no_line = !src,
		.off = name ? (uint64_t)(symoff + (addr - lookup)) : (uint64_t)addr,
	};
	return l;
}

void symbols_print(FILE *out, const struct sym *s)
{
	if (s->inlined) {
		fputs_unlocked(s->name, out);
		fputs_unlocked(" (inlined)", out);
	} else if (s->name) {
		fputs_unlocked(s->name, out);
		fputs_unlocked("+0x", out);
		put_u64(out, s->off, 16, 1);
	} else {
		fputs_unlocked("0x", out);
		put_u64(out, s->off, 16, 1);
	}
	fputs_unlocked(" (", out);
	fputs_unlocked(s->src, out);
	if (!s->no_line) {
		putc_unlocked(':', out);
		if (s->line < 0)
			putc_unlocked('-', out);
		put_u64(out, s->line < 0 ? -(uint64_t)s->line : (uint64_t)s->line, 10, 1);
	}
	putc_unlocked(')', out);
}

size_t symbols_resolve(struct symbols *syms, const struct frame *f, bool return_address,
		       const struct sym **lines, const char **why)
{
	struct file *file;
	struct lines *l;

	*why = NULL;
	*lines = NULL;
	if (f->ino == USTACK_NO_VMA) {
		*why = "no mapping at this address";
		goto raw;
	}
	if (f->ino == USTACK_NO_MM_LOCK) {
		*why = "mm not locked: the kernel could not look up the mapping";
		goto raw;
	}
	if (f->ino == USTACK_NOT_REG) {
		*why = "a mapping of a file that is not regular";
		goto raw;
	}
	if (f->ino == 0 && f->dev == 0) {
		*why = "anonymous memory or the vdso";
		goto raw;
	}
	if (syms->last && syms->last_ino == f->ino && syms->last_dev == f->dev) {
		file = syms->last;
	} else {
		file = map_get(syms->files, f->ino, f->dev);
		if (file) {
			syms->last = file;
			syms->last_ino = f->ino;
			syms->last_dev = f->dev;
		}
	}
	if (!file) {
		*why = "inode never named by an inode_cache event";
		map_put(syms->unknown, f->ino, f->dev, syms);
		goto raw;
	}
	l = map_get(file->resolved, f->off, return_address);
	if (l) {
		syms->cache_hits++;
		syms->resolved++;
		*lines = l->v;
		return l->n;
	}
	if (file->state == FILE_UNCHECKED) {
		bool other = false;

		/* Under --binaries, by build-id: the live inode is not asked */
		if (!binaries_dir || !find_in_binaries(file, &other))
			check_file(file, f->ino, f->dev, &syms->changed);
		if (file->state != FILE_BAD)
			open_file(file, &syms->replaced);
		if (file->state == FILE_BAD && other) {
			char *why = file->why;

			file->why = xasprintf("%s (%s has a file of that name with another build-id)",
					      why, binaries_dir);
			free(why);
		}
		if (file->state != FILE_BAD)
			file->state = FILE_OK;
	}
	if (file->state == FILE_BAD) {
		*why = file->why;
		goto raw;
	}
	l = describe(file, f->off, return_address, why);
	if (!l)
		goto raw;
	map_put(file->resolved, f->off, return_address, l);
	syms->resolved++;
	*lines = l->v;
	return l->n;
raw:
	syms->unresolved++;
	return 0;
}

void symbols_stats(const struct symbols *syms, struct symbols_stats *st)
{
	st->files = map_size(syms->files);
	st->unknown_inodes = map_size(syms->unknown);
	st->changed = syms->changed;
	st->replaced = syms->replaced;
	st->unresolved = syms->unresolved;
	st->resolved = syms->resolved;
	st->cache_hits = syms->cache_hits;
}
