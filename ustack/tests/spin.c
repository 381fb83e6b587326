// SPDX-License-Identifier: GPL-2.0
/*
 * A program that is already running when ustack record attaches to it
 * (vm-tests: -p, -a, -d, Ctrl-C).  Its main thread and a second thread,
 * started at once, each call getppid through a chain of their own every
 * 20 ms, until SECONDS have passed (default 120); with THREADS, that many
 * such second threads.  The lines a test expects are marked as in prog.c.
 * It prints "ready" once every thread runs.
 *
 *   spin [SECONDS [THREADS]]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int workers_ran;

__attribute__((noinline)) static long spin_leaf(void)
{
	long ret;

	asm volatile("syscall" /* SYSCALL */
		     : "=a"(ret) : "a"(SYS_getppid) : "rcx", "r11", "memory");
	return ret;
}

__attribute__((noinline)) static long spin_step2(void)
{
	return spin_leaf() + 1; /* CALL spin_leaf from spin_step2 */
}

__attribute__((noinline)) static long spin_step1(void)
{
	return spin_step2() + 1; /* CALL spin_step2 */
}

__attribute__((noinline)) static long thread_step(void)
{
	return spin_leaf() + 2; /* CALL spin_leaf from thread_step */
}

static void pause_a_little(void)
{
	struct timespec ts = { 0, 20000000L };

	nanosleep(&ts, NULL);
}

static void *worker(void *arg)
{
	(void)arg;
	__atomic_add_fetch(&workers_ran, 1, __ATOMIC_RELAXED);
	for (;;) {
		thread_step(); /* CALL thread_step */
		pause_a_little();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	time_t end = time(NULL) + (argc > 1 ? atoi(argv[1]) : 120);
	int i, threads = argc > 2 ? atoi(argv[2]) : 1;
	pthread_t t;

	for (i = 0; i < threads; i++)
		if (pthread_create(&t, NULL, worker, NULL))
			return 1;
	while (__atomic_load_n(&workers_ran, __ATOMIC_RELAXED) < threads)
		pause_a_little();
	printf("ready\n");
	fflush(stdout);
	while (time(NULL) < end) {
		spin_step1(); /* CALL spin_step1 */
		pause_a_little();
	}
	return 0;
}
