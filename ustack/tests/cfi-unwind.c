// SPDX-License-Identifier: GPL-2.0
/*
 * cfi-unwind MAPS REGS STACK: unwind one stack copy with ustack's CFI
 * unwinder (src/cfi.c) and walk it by frame pointers, for cfi-tests.
 * MAPS is the process's /proc/PID/maps, REGS the 17 registers in DWARF's
 * order (hex, one line), STACK the bytes from rsp on. Prints two lines,
 * "cfi PC..." and "fp PC...", in hex.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfi.h"
#include "ustack.h"

#define MAX_FRAMES 512

static unsigned char *read_all(const char *path, size_t *len)
{
	unsigned char *buf = NULL;
	size_t size = 0, n;
	FILE *f = fopen(path, "rb");

	if (!f)
		die("%s: %s", path, strerror(errno));
	*len = 0;
	do {
		if (*len == size) {
			size = size ? 2 * size : 65536;
			buf = xrealloc(buf, size);
		}
		n = fread(buf + *len, 1, size - *len, f);
		*len += n;
	} while (n > 0);
	if (ferror(f))
		die("%s: cannot read", path);
	fclose(f);
	return buf;
}

static void print_pcs(const char *what, const uint64_t *pcs, int nr)
{
	int i;

	fputs(what, stdout);
	for (i = 0; i < nr; i++)
		printf(" %#llx", (unsigned long long)pcs[i]);
	putchar('\n');
}

int main(int argc, char **argv)
{
	uint64_t pcs[MAX_FRAMES];
	struct cfi_copy copy = { .valid = 0 };
	struct cfi_space *space;
	unsigned char *stack;
	FILE *maps, *regs;
	char *why = NULL;
	int i, nr;
	bool edge;

	if (argc != 4)
		die("usage: cfi-unwind MAPS REGS STACK");
	regs = fopen(argv[2], "r");
	if (!regs)
		die("%s: %s", argv[2], strerror(errno));
	for (i = 0; i < CFI_NR_REGS; i++) {
		unsigned long long r;

		if (fscanf(regs, "%llx", &r) != 1)
			die("%s: %d registers, not %d", argv[2], i, CFI_NR_REGS);
		copy.regs[i] = r;
	}
	fclose(regs);
	stack = read_all(argv[3], &copy.len);
	copy.stack = stack;

	maps = fopen(argv[1], "r");
	if (!maps)
		die("%s: %s", argv[1], strerror(errno));
	space = cfi_space_new(maps, &why);
	fclose(maps);
	if (!space)
		die("%s: %s", argv[1], why);
	nr = cfi_unwind(space, &copy, pcs, MAX_FRAMES, &edge);
	print_pcs(edge ? "cfi-edge" : "cfi", pcs, nr);
	nr = cfi_fp_walk(&copy, pcs, MAX_FRAMES);
	print_pcs("fp", pcs, nr);
	cfi_space_free(space);
	free(stack);
	return 0;
}
