// SPDX-License-Identifier: GPL-2.0
/*
 * ustack report --off-cpu: what a sched_switch record says, read from the
 * text that the kernel's print format gives it (the same for tracefs's
 * text and for trace.dat, whose records libtraceevent prints):
 *   prev_comm=C prev_pid=N prev_prio=N prev_state=S[+] ==> next_comm=C next_pid=N next_prio=N
 * and what a sched_waking record says of the task it wakes:
 *   comm=C pid=N prio=N target_cpu=N
 * A comm may hold spaces and '=', so the fields are found from the right.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "offcpu.h"

/* The last occurrence of needle in [s, end) */
static const char *rfind(const char *s, const char *end, const char *needle)
{
	size_t n = strlen(needle);
	const char *p;

	if ((size_t)(end - s) < n)
		return NULL;
	for (p = end - n; p >= s; p--)
		if (!memcmp(p, needle, n))
			return p;
	return NULL;
}

static bool parse_int(const char *s, int *v)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(s, &end, 10);
	if (errno || end == s || (*end && *end != ' ') || n < 0 || n > INT32_MAX)
		return false;
	*v = (int)n;
	return true;
}

bool sched_switch_parse(const char *text, struct sched_switch *sw)
{
	const char *end, *next, *next_pid, *state, *prev_pid;

	if (strncmp(text, "sched_switch: ", 14))
		return false;
	text += 14;
	end = text + strlen(text);
	next_pid = rfind(text, end, " next_pid=");
	next = next_pid ? rfind(text, next_pid, " ==> next_comm=") : NULL;
	state = next ? rfind(text, next, " prev_state=") : NULL;
	prev_pid = state ? rfind(text, state, " prev_pid=") : NULL;
	if (!prev_pid || strncmp(text, "prev_comm=", 10))
		return false;
	if (!parse_int(next_pid + 10, &sw->next_pid) || !parse_int(prev_pid + 10, &sw->prev_pid))
		return false;
	state += 12;
	/* "R+": preempted while runnable; "S", "D", "I", "T"... */
	sw->state = state < next && *state >= 'A' && *state <= 'z' ? *state : '?';
	return true;
}

bool sched_waking_parse(const char *text, int *pid)
{
	const char *end, *prio, *p;

	if (strncmp(text, "sched_waking: comm=", 19))
		return false;
	end = text + strlen(text);
	prio = rfind(text, end, " prio=");
	p = prio ? rfind(text, prio, " pid=") : NULL;
	return p && parse_int(p + 5, pid);
}

bool states_parse(const char *arg, char *states, size_t size)
{
	size_t n = 0;
	const char *p;

	for (p = arg; *p; p++) {
		if (*p == ',')
			continue;
		if (!strchr("SDRITtXZPW?", *p) || (p[1] && p[1] != ','))
			return false;
		if (n + 1 >= size)
			return false;
		states[n++] = *p;
	}
	states[n] = '\0';
	return n > 0;
}
