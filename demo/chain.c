// SPDX-License-Identifier: GPL-2.0
/*
 * A program with a known call chain for the demo:
 * main -> parse_config -> read_file -> open_file -> openat(2),
 * built with frame pointers so that the user stack unwinds whole.
 *
 * open_file() makes the system call itself: Debian's libc is built
 * without frame pointers, and a frame-pointer unwinder loses the caller
 * of a libc function that does not keep one.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((noinline)) static int open_file(const char *path)
{
	long ret;

	asm volatile("syscall"
		     : "=a"(ret)
		     : "a"(SYS_openat), "D"(AT_FDCWD), "S"(path), "d"(O_RDONLY)
		     : "rcx", "r11", "memory");
	return ret;
}

__attribute__((noinline)) static long read_file(const char *path)
{
	char buf[256];
	long n;
	int fd;

	fd = open_file(path);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return n;
}

__attribute__((noinline)) static long parse_config(const char *path)
{
	return read_file(path);
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/etc/hostname";
	long n = parse_config(path);

	printf("chain: read %ld bytes of %s\n", n, path);
	return n < 0;
}
