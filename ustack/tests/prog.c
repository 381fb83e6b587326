// SPDX-License-Identifier: GPL-2.0
/*
 * The program that ustack's VM tests trace.  Built with frame pointers
 * and -g.  Each call that a test expects in a stack is marked "CALL name"
 * on its line, and the system call "SYSCALL": the tests find the lines
 * they expect with grep, so editing this file cannot break them.
 *
 *   prog chain [N]     main -> level1 -> level2 -> level3 -> leaf -> getppid,
 *                      N times (default 1)
 *   prog dlopen LIB    main -> LIB's lib_entry -> lib_leaf -> getppid
 *   prog grow LIB      the chain, then dlopen: its mappings grow between them
 *   prog unlink        removes its own file, then runs the chain
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((noinline)) static long leaf(void)
{
	long ret;

	asm volatile("syscall" /* SYSCALL */
		     : "=a"(ret) : "a"(SYS_getppid) : "rcx", "r11", "memory");
	return ret;
}

__attribute__((noinline)) static long level3(void)
{
	return leaf() + 1; /* CALL leaf */
}

__attribute__((noinline)) static long level2(void)
{
	return level3() + 1; /* CALL level3 */
}

__attribute__((noinline)) static long level1(void)
{
	return level2() + 1; /* CALL level2 */
}

int main(int argc, char **argv)
{
	long (*entry)(void);
	void *lib;

	if (argc > 1 && !strcmp(argv[1], "chain")) {
		for (long n = argc > 2 ? atol(argv[2]) : 1; n > 0; n--)
			if (level1() <= 0) /* CALL level1 */
				return 1;
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "grow") && level1() <= 0)
		return 1;
	if (argc > 2 && (!strcmp(argv[1], "dlopen") || !strcmp(argv[1], "grow"))) {
		lib = dlopen(argv[2], RTLD_NOW);
		if (!lib) {
			fprintf(stderr, "prog: %s\n", dlerror());
			return 1;
		}
		entry = (long (*)(void))dlsym(lib, "lib_entry");
		if (!entry)
			return 1;
		if (entry() <= 0) /* CALL lib_entry */
			return 1;
		return dlclose(lib);
	}
	if (argc > 1 && !strcmp(argv[1], "unlink")) {
		if (unlink(argv[0]))
			return 1;
		return level1() > 0 ? 0 : 1;
	}
	fprintf(stderr, "usage: prog chain [N] | dlopen LIB | grow LIB | unlink\n");
	return 2;
}
