// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel benchmark's workload: nest DEPTH frames deep (with frame
 * pointers), then call getppid(2) WARMUP times (default 0), and CALLS
 * times more through an inline syscall, so that the user stack is the same
 * for every call. Prints the mean time of one of the CALLS, in ns: the
 * warm-up keeps one-off costs out of it, such as reading the names of the
 * files of the first stack.
 *
 *   getppid-depth DEPTH CALLS [WARMUP]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/syscall.h>

static long raw_getppid(void)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "0"((long)SYS_getppid)
			 : "rcx", "r11", "memory");
	return ret;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Not a tail call: each level keeps a frame */
static __attribute__((noinline)) long nest(int depth, long calls, long warmup)
{
	long i, sum = 0;
	double t0;

	if (depth > 1)
		return nest(depth - 1, calls, warmup) + 1;
	for (i = 0; i < warmup; i++)
		sum += raw_getppid();
	t0 = now_ns();
	for (i = 0; i < calls; i++)
		sum += raw_getppid();
	printf("%.1f\n", (now_ns() - t0) / calls);
	return sum;
}

int main(int argc, char **argv)
{
	long calls, warmup = 0;
	int depth;

	if (argc < 3 || argc > 4 || (depth = atoi(argv[1])) < 1 ||
	    (calls = atol(argv[2])) < 1 ||
	    (argc == 4 && (warmup = atol(argv[3])) < 0)) {
		fprintf(stderr, "usage: %s DEPTH CALLS [WARMUP]\n", argv[0]);
		return 2;
	}
	return nest(depth, calls, warmup) < 0;
}
