// SPDX-License-Identifier: GPL-2.0
/*
 * The program that the off-CPU VM tests trace (offcpu-vm-tests).  Built
 * with frame pointers and -g.  Debian's libc has no frame pointers, so
 * every blocking call is an inline system call in the function that the
 * tests expect innermost; each is marked "SITE name" on its line.
 *
 *   offcpu ROUNDS MS [SPIN_MS]
 * Each round blocks the main thread once at each site, for MS ms:
 *   site_sleep   nanosleep                                      (S)
 *   site_pipe    read() on a pipe that the feeder thread writes  (S)
 *   site_futex   FUTEX_WAIT on a word that the feeder wakes      (S)
 *   site_vfork   vfork(): the parent waits until the child exits (D)
 * and logs it, with CLOCK_MONOTONIC, on standard output:
 *   block SITE TID START_NS END_NS
 * and, last, when it begins to exit: exit TID NS
 * Then two threads pinned to one CPU spin in spin() for SPIN_MS ms
 * (default 300), each preempting the other (R).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long ms;
static int pipefd[2];
static int futex_word;
static int feeder_go;		/* a futex: 1 = feed the pipe, 2 = wake the futex, 3 = quit */

#define SYSCALL6(ret, nr, a, b, c, d)						\
	do {									\
		register long r10 asm("r10") = (long)(d);			\
		asm volatile("syscall"						\
			     : "=a"(ret)					\
			     : "a"((long)(nr)), "D"((long)(a)), "S"((long)(b)),	\
			       "d"((long)(c)), "r"(r10)				\
			     : "rcx", "r11", "memory");				\
	} while (0)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void logged(const char *site, uint64_t t0)
{
	uint64_t t1 = now_ns();

	printf("block %s %ld %llu %llu\n", site, (long)syscall(SYS_gettid),
	       (unsigned long long)t0, (unsigned long long)t1);
}

__attribute__((noinline)) static void site_sleep(void)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };
	uint64_t t0 = now_ns();
	long ret;

	SYSCALL6(ret, SYS_nanosleep, &ts, NULL, 0, 0); /* SITE sleep */
	(void)ret;
	logged("sleep", t0);
}

static void tell_feeder(int what)
{
	__atomic_store_n(&feeder_go, what, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &feeder_go, FUTEX_WAKE, 1, NULL, NULL, 0);
}

__attribute__((noinline)) static void site_pipe(void)
{
	uint64_t t0 = now_ns();
	char c;
	long ret;

	tell_feeder(1);
	SYSCALL6(ret, SYS_read, pipefd[0], &c, 1, 0); /* SITE pipe */
	if (ret != 1)
		exit(1);
	logged("pipe", t0);
}

__attribute__((noinline)) static void site_futex(void)
{
	uint64_t t0 = now_ns();
	long ret;

	__atomic_store_n(&futex_word, 0, __ATOMIC_SEQ_CST);
	tell_feeder(2);
	do
		SYSCALL6(ret, SYS_futex, &futex_word, FUTEX_WAIT, 0, NULL); /* SITE futex */
	while (!__atomic_load_n(&futex_word, __ATOMIC_SEQ_CST));
	logged("futex", t0);
}

__attribute__((noinline)) static void site_vfork(void)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };
	uint64_t t0 = now_ns();
	long ret, dummy;

	/* The child shares this stack: it only makes system calls, then exits */
	SYSCALL6(ret, SYS_vfork, 0, 0, 0, 0); /* SITE vfork */
	if (ret == 0) {
		SYSCALL6(dummy, SYS_nanosleep, &ts, NULL, 0, 0);
		SYSCALL6(dummy, SYS_exit, 0, 0, 0, 0);
	}
	(void)dummy;
	if (ret < 0)
		exit(1);
	logged("vfork", t0);
	syscall(SYS_wait4, ret, NULL, 0, NULL);
}

__attribute__((noinline)) static void feed_pipe(void)
{
	long ret;

	SYSCALL6(ret, SYS_write, pipefd[1], "x", 1, 0); /* WAKER pipe */
	(void)ret;
}

__attribute__((noinline)) static void wake_futex(void)
{
	long ret;

	__atomic_store_n(&futex_word, 1, __ATOMIC_SEQ_CST);
	SYSCALL6(ret, SYS_futex, &futex_word, FUTEX_WAKE, 1, 0); /* WAKER futex */
	(void)ret;
}

static void *feeder(void *arg)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };
	int what;

	(void)arg;
	for (;;) {
		while (!(what = __atomic_exchange_n(&feeder_go, 0, __ATOMIC_SEQ_CST)))
			syscall(SYS_futex, &feeder_go, FUTEX_WAIT, 0, NULL, NULL, 0);
		if (what == 3)
			return NULL;
		nanosleep(&ts, NULL);
		if (what == 1)
			feed_pipe();
		else
			wake_futex();
	}
}

static volatile int spinning = 1;

__attribute__((noinline)) static void spin(void)
{
	while (spinning) /* SITE spin */
		;
}

static void *spinner(void *arg)
{
	cpu_set_t set;

	(void)arg;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		exit(1);
	spin();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t feed, spin_a, spin_b;
	struct timespec spin_ts;
	long rounds, spin_ms = 300;
	long i;

	if (argc < 3) {
		fprintf(stderr, "usage: offcpu ROUNDS MS [SPIN_MS]\n");
		return 2;
	}
	rounds = atol(argv[1]);
	ms = atol(argv[2]);
	if (argc > 3)
		spin_ms = atol(argv[3]);
	if (rounds < 0 || ms <= 0 || spin_ms < 0 || pipe(pipefd) ||
	    pthread_create(&feed, NULL, feeder, NULL))
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < rounds; i++) {
		site_sleep();
		site_pipe();
		site_futex();
		site_vfork();
	}
	tell_feeder(3);
	pthread_join(feed, NULL);
	if (spin_ms) {
		if (pthread_create(&spin_a, NULL, spinner, NULL) ||
		    pthread_create(&spin_b, NULL, spinner, NULL))
			return 1;
		spin_ts.tv_sec = spin_ms / 1000;
		spin_ts.tv_nsec = spin_ms % 1000 * 1000000L;
		nanosleep(&spin_ts, NULL);
		spinning = 0;
		pthread_join(spin_a, NULL);
		pthread_join(spin_b, NULL);
	}
	printf("exit %ld %llu\n", (long)syscall(SYS_gettid), (unsigned long long)now_ns());
	return 0;
}
