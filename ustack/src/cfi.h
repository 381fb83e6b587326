/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Unwinding a copy of the top of a user stack with the call frame
 * information (.eh_frame, .debug_frame) of the files it runs, through
 * libdwfl: the frames that code built without frame pointers leaves out
 * of a frame-pointer walk.
 */
#ifndef USTACK_CFI_H
#define USTACK_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* x86-64's registers in DWARF's numbering: rax, rdx, rcx, rbx, rsi, rdi,
 * rbp, rsp, r8 to r15, then the return address column (rip) */
enum { CFI_REG_RBP = 6, CFI_REG_RSP = 7, CFI_REG_RIP = 16, CFI_NR_REGS = 17 };

struct cfi_copy {
	uint64_t regs[CFI_NR_REGS];
	/* The registers the copy holds, bit n for regs[n]; 0: all of them */
	uint32_t valid;
	/* The bytes of the stack from regs[CFI_REG_RSP] on */
	const unsigned char *stack;
	size_t len;
};

struct cfi_space;

/*
 * The mappings of a process, as /proc/PID/maps prints them. Returns NULL,
 * with a message in *why (to free), if libdwfl cannot take them.
 */
struct cfi_space *cfi_space_new(FILE *maps, char **why);
void cfi_space_free(struct cfi_space *space);
/*
 * The mappings of @space replaced by those of @maps: a file mapped at the
 * same range keeps what was read of it. Returns false, with *why, if
 * libdwfl cannot take them; the space is then to be freed.
 */
bool cfi_space_report(struct cfi_space *space, FILE *maps, char **why);

/*
 * The return addresses of the frames of @copy, innermost first (the first
 * is the PC itself), at most @max of them. Returns how many; the unwind
 * ends where the CFI does, or where the copy does (then *edge is set).
 */
int cfi_unwind(struct cfi_space *space, const struct cfi_copy *copy,
	       uint64_t *pcs, int max, bool *edge);

/* The same copy walked by its frame-pointer chain only, for comparison */
int cfi_fp_walk(const struct cfi_copy *copy, uint64_t *pcs, int max);

#endif
