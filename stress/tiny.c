// SPDX-License-Identifier: GPL-2.0
/*
 * The smallest program that makes a system call: ustress runs copies of
 * it, each a file of its own, to fill the inode table up to its cap.
 */
#include <sys/syscall.h>

void _start(void)
{
	long ret;

	asm volatile("syscall" : "=a"(ret) : "a"(SYS_getppid) : "rcx", "r11", "memory");
	asm volatile("syscall" : : "a"(SYS_exit), "D"(0) : "rcx", "r11", "memory");
	__builtin_unreachable();
}
