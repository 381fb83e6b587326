// SPDX-License-Identifier: GPL-2.0
/*
 * A progress line for ustack report, on standard error, only when it is
 * a terminal: after the first second, at most 4 times a second, the
 * records and bytes read so far (of the file's size, when it has one);
 * cleared at the end.  The bytes are the process's own count of bytes
 * read (rchar of /proc/self/io), as the input is read by a FILE or by
 * libtracecmd.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "views.h"

static struct {
	bool		on, shown;
	double		start, last;
	unsigned long	ticks;
	long long	size;		/* of the input; -1 unknown */
	long long	rchar0;
} pg;

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long long rchar(void)
{
	FILE *f = fopen("/proc/self/io", "re");
	char line[128];
	long long v = -1;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "rchar: ", 7))
			v = strtoll(line + 7, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

void progress_start(const char *path)
{
	struct stat st;
	const char *env = getenv("USTACK_PROGRESS");

	/* USTACK_PROGRESS=0 turns it off, =1 on whatever stderr is (tests) */
	pg.on = env && *env ? strcmp(env, "0") != 0 : isatty(STDERR_FILENO);
	if (!pg.on)
		return;
	pg.start = pg.last = mono();
	pg.size = path && strcmp(path, "-") && !stat(path, &st) && S_ISREG(st.st_mode) ?
		  (long long)st.st_size : -1;
	pg.rchar0 = rchar();
}

void progress_tick(unsigned long records)
{
	double t;
	long long r;

	if (!pg.on || (++pg.ticks & 1023))
		return;
	t = mono();
	if (t - pg.start < 1.0 || t - pg.last < 0.25)
		return;
	pg.last = t;
	r = rchar();
	if (r >= 0 && pg.rchar0 >= 0)
		r -= pg.rchar0;
	if (r >= 0 && pg.size > 0)
		fprintf(stderr, "\rustack: %lu records, %.1f of %.1f MiB read (%.0f%%)\033[K",
			records, (double)r / 1048576, (double)pg.size / 1048576,
			r > pg.size ? 100.0 : 100.0 * (double)r / (double)pg.size);
	else if (r >= 0)
		fprintf(stderr, "\rustack: %lu records, %.1f MiB read\033[K", records,
			(double)r / 1048576);
	else
		fprintf(stderr, "\rustack: %lu records\033[K", records);
	pg.shown = true;
}

void progress_end(void)
{
	if (pg.shown)
		fputs("\r\033[K", stderr);
	pg.shown = false;
	pg.on = false;
}
