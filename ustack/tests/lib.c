// SPDX-License-Identifier: GPL-2.0
/* The library that "prog dlopen" loads; see prog.c for the markers */
#include <sys/syscall.h>

__attribute__((noinline)) static long lib_leaf(void)
{
	long ret;

	asm volatile("syscall" /* SYSCALL */
		     : "=a"(ret) : "a"(SYS_getppid) : "rcx", "r11", "memory");
	return ret;
}

long lib_entry(void)
{
	return lib_leaf() + 1; /* CALL lib_leaf */
}
