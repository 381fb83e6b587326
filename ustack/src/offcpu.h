/* SPDX-License-Identifier: GPL-2.0 */
/* ustack report --off-cpu: reading sched_switch records (offcpu.c) */
#ifndef USTACK_OFFCPU_H
#define USTACK_OFFCPU_H

#include <stdbool.h>
#include <stddef.h>

struct sched_switch {
	int	prev_pid, next_pid;
	char	state;		/* prev_state's first letter: S, D, R, I... */
};

/* text: "sched_switch: prev_comm=..."; false when it is not one */
bool sched_switch_parse(const char *text, struct sched_switch *sw);
/* "sched_waking: comm=C pid=N prio=N target_cpu=N": the woken task's pid */
bool sched_waking_parse(const char *text, int *pid);
/* --state S,D,R: the letters, in states; false when arg is not such a list */
bool states_parse(const char *arg, char *states, size_t size);

#endif
