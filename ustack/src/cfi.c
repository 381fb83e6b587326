// SPDX-License-Identifier: GPL-2.0
/*
 * A copy of the top of a user stack, unwound with libdwfl: the registers
 * at kernel entry start the unwind, the copy answers its reads of the
 * stack, and the files of the process's mappings give the CFI.
 */
#include <glib.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "cfi.h"
#include "ustack.h"

struct cfi_space {
	Dwfl *dwfl;
	bool attached;
	/* The copy being unwound, for the callbacks */
	const struct cfi_copy *copy;
	uint64_t *pcs;
	int nr, max;
	bool edge;	/* a read past the copy */
	bool covered;	/* the last frame's code has CFI */
	GHashTable *covers;	/* cfi_covers() of each address asked: 1 or 2 */
};

/* The files of the mappings only: [vdso] and the like are not read */
static int cfi_find_elf(Dwfl_Module *mod, void **userdata, const char *name,
			Dwarf_Addr base, char **file_name, Elf **elfp)
{
	if (name[0] != '/')
		return -1;
	return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);
}

/* Has the ELF file at @fd a section named @name, or its .zdebug twin? */
static bool cfi_has_section(int fd, const char *name)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	bool found = false;
	size_t shstrndx;
	GElf_Shdr shdr;

	if (!elf)
		return false;
	if (!elf_getshdrstrndx(elf, &shstrndx))
		while (!found && (scn = elf_nextscn(elf, scn)))
			if (gelf_getshdr(scn, &shdr) && shdr.sh_type != SHT_NOBITS) {
				const char *s = elf_strptr(elf, shstrndx, shdr.sh_name);

				found = s && (!strcmp(s, name) ||
					      (!strncmp(s, ".z", 2) && !strcmp(s + 2, name + 1)));
			}
	elf_end(elf);
	return found;
}

/*
 * A debug file only for its .debug_frame.  libdwfl looks for one when
 * .eh_frame lacks an address, and then reads and decompresses all of its
 * DWARF; Debian's debug files have no .debug_frame (.eh_frame stays in the
 * binary).  The one under the build-id in the default debug directory is
 * checked first, by its section headers; libdwfl's own search takes an
 * Elf handle of what it finds, which its caller cannot give back.
 */
static int cfi_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			      Dwarf_Addr base, const char *file_name,
			      const char *debuglink_file, GElf_Word debuglink_crc,
			      char **debuginfo_file_name)
{
	const unsigned char *id;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(mod, &id, &vaddr);

	if (n > 1) {
		GString *path = g_string_new("/usr/lib/debug/.build-id/");
		bool has = true;
		int fd;

		g_string_append_printf(path, "%02x/", id[0]);
		for (int i = 1; i < n; i++)
			g_string_append_printf(path, "%02x", id[i]);
		g_string_append(path, ".debug");
		fd = open(path->str, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			has = cfi_has_section(fd, ".debug_frame");
			close(fd);
		}
		g_string_free(path, TRUE);
		if (!has)
			return -1;
	}
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					    debuglink_file, debuglink_crc, debuginfo_file_name);
}

static char *cfi_debuginfo_path;

static const Dwfl_Callbacks cfi_callbacks = {
	.find_elf = cfi_find_elf,
	.find_debuginfo = cfi_find_debuginfo,
	.debuginfo_path = &cfi_debuginfo_path,
};

struct cfi_space *cfi_space_new(FILE *maps, char **why)
{
	struct cfi_space *space = xcalloc(1, sizeof(*space));

	space->covers = g_hash_table_new(g_direct_hash, g_direct_equal);
	space->dwfl = dwfl_begin(&cfi_callbacks);
	if (!space->dwfl) {
		*why = xasprintf("libdwfl: %s", dwfl_errmsg(-1));
		cfi_space_free(space);
		return NULL;
	}
	if (!cfi_space_report(space, maps, why)) {
		cfi_space_free(space);
		return NULL;
	}
	return space;
}

bool cfi_space_report(struct cfi_space *space, FILE *maps, char **why)
{
	/* What was asked of the mappings before may have changed */
	g_hash_table_remove_all(space->covers);
	dwfl_report_begin(space->dwfl);
	if (dwfl_linux_proc_maps_report(space->dwfl, maps) != 0 ||
	    dwfl_report_end(space->dwfl, NULL, NULL) != 0) {
		*why = xasprintf("the mappings: %s", dwfl_errmsg(-1));
		return false;
	}
	return true;
}

void cfi_space_free(struct cfi_space *space)
{
	if (!space)
		return;
	dwfl_end(space->dwfl);
	g_hash_table_destroy(space->covers);
	free(space);
}

/* One thread: the copy's */
static pid_t cfi_next_thread(Dwfl *dwfl, void *arg, void **thread_arg)
{
	(void)dwfl;
	if (*thread_arg)
		return 0;
	*thread_arg = arg;
	return 1;
}

static bool cfi_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
			    void *arg)
{
	struct cfi_space *space = arg;
	const struct cfi_copy *copy = space->copy;
	uint64_t sp = copy->regs[CFI_REG_RSP];

	(void)dwfl;
	if (addr < sp || addr - sp > copy->len ||
	    copy->len - (addr - sp) < sizeof(*result)) {
		/* Above the copy: where a longer copy would have gone on */
		if (addr >= sp)
			space->edge = true;
		return false;
	}
	memcpy(result, copy->stack + (addr - sp), sizeof(*result));
	return true;
}

static bool cfi_initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct cfi_copy *copy = ((struct cfi_space *)arg)->copy;
	Dwarf_Word regs[CFI_NR_REGS];
	int i;

	for (i = 0; i < CFI_NR_REGS; i++)
		regs[i] = copy->regs[i];
	if (!copy->valid) {
		if (!dwfl_thread_state_registers(thread, 0, CFI_NR_REGS, regs))
			return false;
	} else {
		/* Only those it holds: a register it lacks ends the unwind
		 * where the CFI needs it, rather than giving a wrong frame */
		for (i = 0; i < CFI_NR_REGS; i++)
			if ((copy->valid & (1u << i)) &&
			    !dwfl_thread_state_registers(thread, i, 1, &regs[i]))
				return false;
	}
	dwfl_thread_state_register_pc(thread, copy->regs[CFI_REG_RIP]);
	return true;
}

static const Dwfl_Thread_Callbacks cfi_thread_callbacks = {
	.next_thread = cfi_next_thread,
	.memory_read = cfi_memory_read,
	.set_initial_registers = cfi_initial_registers,
};

/* Does CFI describe the code at @pc (.eh_frame, or .debug_frame)? */
static bool cfi_covers(Dwfl *dwfl, Dwarf_Addr pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
	Dwarf_Frame *frame;
	Dwarf_Addr bias;
	Dwarf_CFI *cfi;

	if (!mod)
		return false;
	cfi = dwfl_module_eh_cfi(mod, &bias);
	if (cfi && !dwarf_cfi_addrframe(cfi, pc - bias, &frame)) {
		free(frame);
		return true;
	}
	cfi = dwfl_module_dwarf_cfi(mod, &bias);
	if (cfi && !dwarf_cfi_addrframe(cfi, pc - bias, &frame)) {
		free(frame);
		return true;
	}
	return false;
}

/* The same return addresses come in stack after stack */
static bool cfi_covers_cached(struct cfi_space *space, Dwarf_Addr pc)
{
	gpointer key = GSIZE_TO_POINTER(pc), v = g_hash_table_lookup(space->covers, key);

	if (!v) {
		v = GINT_TO_POINTER(cfi_covers(space->dwfl, pc) ? 1 : 2);
		g_hash_table_insert(space->covers, key, v);
	}
	return GPOINTER_TO_INT(v) == 1;
}

static int cfi_frame(Dwfl_Frame *frame, void *arg)
{
	struct cfi_space *space = arg;
	bool activation;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(frame, &pc, &activation))
		return DWARF_CB_ABORT;
	/*
	 * Where the code had no CFI, libdwfl went on by its frame-pointer
	 * guess, which code without frame pointers makes wrong: stop there
	 */
	if (space->nr && !space->covered) {
		space->edge = false;
		return DWARF_CB_ABORT;
	}
	space->pcs[space->nr++] = pc;
	space->covered = cfi_covers_cached(space, activation || !pc ? pc : pc - 1);
	return space->nr < space->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

int cfi_unwind(struct cfi_space *space, const struct cfi_copy *copy,
	       uint64_t *pcs, int max, bool *edge)
{
	*edge = false;
	if (max <= 0)
		return 0;
	if (!space->attached) {
		/* The architecture from the first module that has one */
		if (!dwfl_attach_state(space->dwfl, NULL, 1, &cfi_thread_callbacks,
				       space))
			return 0;
		space->attached = true;
	}
	space->copy = copy;
	space->pcs = pcs;
	space->nr = 0;
	space->max = max;
	space->edge = false;
	/* Its end is an error on some systems, and a short unwind here */
	dwfl_getthread_frames(space->dwfl, 1, cfi_frame, space);
	space->copy = NULL;
	*edge = space->edge;
	return space->nr;
}

int cfi_fp_walk(const struct cfi_copy *copy, uint64_t *pcs, int max)
{
	uint64_t sp = copy->regs[CFI_REG_RSP], fp = copy->regs[CFI_REG_RBP];
	uint64_t frame[2];
	int nr = 0;

	if (max <= 0)
		return 0;
	pcs[nr++] = copy->regs[CFI_REG_RIP];
	while (nr < max && fp >= sp && fp % 8 == 0 && fp - sp <= copy->len &&
	       copy->len - (fp - sp) >= sizeof(frame)) {
		memcpy(frame, copy->stack + (fp - sp), sizeof(frame));
		if (!frame[1])
			break;
		pcs[nr++] = frame[1];
		/* The chain goes up the stack, or it loops */
		if (frame[0] <= fp)
			break;
		fp = frame[0];
	}
	return nr;
}
