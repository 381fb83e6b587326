// SPDX-License-Identifier: GPL-2.0
/* Allocation, errors, the escaping of paths, and the identity of a file */
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ftw.h>
#include <getopt.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "ustack.h"

static void vmessage(const char *fmt, va_list ap)
{
	fputs("ustack: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	exit(2);
}

/*
 * getopt's complaint about argv, said as ustack's (opterr is 0, and the
 * option string starts with ':'): @opt is ':' for a value missing
 */
void bad_option(const char *cmd, int opt, char **argv)
{
	if (opt == ':')
		warnx_("%s: %s needs a value", cmd, argv[optind - 1]);
	else if (optopt)
		warnx_("%s: unknown option -%c", cmd, optopt);
	else
		warnx_("%s: unknown option %s", cmd, argv[optind - 1]);
}

void warnx_(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		die("out of memory");
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		die("out of memory");
	return p;
}

void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (!p)
		die("out of memory");
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		die("out of memory");
	va_end(ap);
	return s;
}

char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		die("out of memory");
	return d;
}

static bool is_octal(char c)
{
	return c >= '0' && c <= '7';
}

/*
 * The kernel writes '\', control characters and non-ASCII bytes of a path
 * as \ooo (inode_cache).  Undo that in place; returns the new length.
 */
size_t path_unescape(char *s)
{
	char *o = s;
	const char *p;

	for (p = s; *p; p++) {
		if (p[0] == '\\' && is_octal(p[1]) && is_octal(p[2]) && is_octal(p[3])) {
			*o++ = (char)(((p[1] - '0') << 6) | ((p[2] - '0') << 3) | (p[3] - '0'));
			p += 3;
		} else {
			*o++ = *p;
		}
	}
	*o = '\0';
	return (size_t)(o - s);
}

/* The kernel's escaping, for printing a path on one line */
void path_escape(FILE *out, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\\' || c < 0x20 || c >= 0x7f)
			fprintf(out, "\\%03o", c);
		else
			fputc(c, out);
	}
}

/*
 * The inode and device of a file as the kernel names the files of
 * mappings, which is what the frames carry: map a page of it and read
 * that mapping's line of /proc/self/maps.  stat() may say otherwise: on
 * overlayfs it gives a device of overlayfs's own, on NFS another inode.
 */
int mapped_identity(const char *path, uint64_t *ino, unsigned int *ma, unsigned int *mi)
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

/* Numbers without printf, for what is written for every frame: @v in
 * @base, in @width digits at least, zero-padded (16 at most) */
void put_u64(FILE *out, uint64_t v, unsigned int base, unsigned int width)
{
	char buf[24];
	size_t i = sizeof(buf);

	buf[--i] = '\0';
	do {
		buf[--i] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v || sizeof(buf) - 1 - i < width);
	fputs_unlocked(buf + i, out);
}

/* tar(1) with @argv (argv[0] "tar"), its output on standard error: 0 when it succeeded */
int run_tar(char *const argv[])
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(STDERR_FILENO, STDOUT_FILENO);
		execvp("tar", argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

/* A command's trace given with -i: once, as perf's -i */
void input_arg(const char **path, const char *arg)
{
	if (*path)
		die("one trace at a time: %s and %s", *path, arg);
	*path = arg;
}

/* After the options: the trace given as FILE, if it was not with -i; else @dflt */
const char *input_rest(const char *path, int argc, char **argv, const char *dflt)
{
	if (optind < argc)
		input_arg(&path, argv[optind++]);
	if (optind < argc)
		die("one trace at a time: %s and %s", path, argv[optind]);
	return path ? path : dflt;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	remove(path);
	return 0;
}

/* A directory of ustack's own, with all it holds (links not followed) */
void remove_tree(const char *dir)
{
	nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}
