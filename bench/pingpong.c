// SPDX-License-Identifier: GPL-2.0
/*
 * The off-CPU benchmark's workload: two threads hand a byte back and forth
 * over two pipes, ROUNDS times; each hand-over blocks one thread and wakes
 * the other, so on one CPU each is a context switch.  Prints the switches
 * per second (two per round).
 *
 *   pingpong ROUNDS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int ping[2], pong[2];
static long rounds;

static void *echo(void *arg)
{
	char c;
	long i;

	(void)arg;
	for (i = 0; i < rounds; i++)
		if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1)
			exit(1);
	return NULL;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	pthread_t th;
	double s;
	char c = 'x';
	long i;

	rounds = argc > 1 ? atol(argv[1]) : 20000;
	if (rounds <= 0 || pipe(ping) || pipe(pong) || pthread_create(&th, NULL, echo, NULL))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < rounds; i++)
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			return 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pthread_join(th, NULL);
	s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("%.0f\n", 2.0 * (double)rounds / s);
	return 0;
}
