// SPDX-License-Identifier: GPL-2.0
/*
 * ustack report: join each event to its stack, by the task and the
 * cookie, and print the stacks as symbols, or folded for flame graphs;
 * the other views (--top, --callers, --callees) and the files
 * (--flamegraph, --pprof) are made from the tables of views.c.  The
 * filters (--pid, --comm, --event, --time) mark each event when it comes.
 *
 * An event is followed, in its task, by its cookie; the stack comes when
 * the task returns to user space, before it can enter the kernel again.
 * So in a trace in time order a new cookie of the task means the old one
 * will get none.  A trace whose CPUs were merged out of order (by a
 * writer, or by hand) can hold the task's next cookie before the stack,
 * so a stack joins its cookie by the cookie's value within the task: a
 * task keeps its last TASK_WAITING cookies waiting, and only an older one
 * is given up.  Memory stays bounded by the number of tasks, whatever
 * the length of the trace.
 * An event made after the stack was walked, in the same return to user
 * space (a sched_switch on the way out), gets the same cookie, after its
 * stack: so the task's last stack that no cookie waited for is kept, until
 * the task's next cookie (with --off-cpu, its last stack, joined or not).
 *
 * --off-cpu: each sched_switch that takes a task off the CPU is an event,
 * weighed by the time until a sched_switch puts the same task back on.
 * Its stack comes once the task is back, but the switch in may come
 * after it (the case above), or never (the trace ended, events were
 * lost): such an event is held, with a copy of its stack, until then.  A
 * task is off the CPU once at a time, so memory stays bounded still.
 *
 * --wakers: a sched_waking, in the waker's context, names the task it
 * wakes; that task's next switch in takes the latest such wakeup.  The
 * waker is an interrupt when the record's flags say so (its task is then
 * whatever was interrupted, and its stack is not the waker's), a kernel
 * thread when no cookie follows, else a user task, whose stack comes with
 * its cookie: the woken task's switch out is held until then too.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <glib.h>

#include "offcpu.h"
#include "ustack.h"
#include "views.h"

/* --wakers: a task's latest wakeup, until its switch in takes it */
struct wake {
	int		refs;		/* its sched_waking event, and a map or a sample */
	double		ts;
	char		name[72];	/* [hardirq], [softirq], [nmi], or the waker's comm-pid */
	bool		settled;	/* the waker's stack is known, or known to be none */
	struct rec	*stack;		/* settled: a copy of the waker's stack, or NULL */
	struct event	*sample;	/* the switch out it ended, held for it */
};

struct event {
	struct event	*next;
	char		*head;		/* comm-pid [cpu] ts: text */
	char		comm[64];
	char		*name;		/* the event's name */
	int		pid;
	int		tgid;		/* its process, when the trace gives it; else 0 */
	double		ts;
	bool		keep;		/* passes the filters */
	/* --off-cpu: a switch out, weighed by the time until the switch in */
	bool		off_cpu;
	char		state;		/* S, D, R...: the frame [S] outermost */
	enum { OFF_OPEN, OFF_ENDED, OFF_NO_END } end;
	unsigned long	ns;		/* OFF_ENDED: the time off the CPU */
	bool		held;		/* shown before its end: waits for it */
	struct rec	*stack;		/* held: a copy of its stack, or NULL */
	const char	*why;		/* held without a stack: why it has none */
	struct wake	*woken;		/* --wakers, a switch out: what woke it, or NULL */
	struct wake	*wakes;		/* a sched_waking of a user task: its stack settles it */
	bool		not_sample;	/* --off-cpu: not a switch out (a sched_waking...) */
	unsigned long	lost_mark;	/* --off-cpu: losses seen when it left */
};

/* What report writes on standard output */
enum view {
	VIEW_TEXT,	/* each event and its stack */
	VIEW_FOLDED,
	VIEW_BY_EVENT,	/* folded, the event's name outermost */
	VIEW_TOP,
	VIEW_CALLERS,
	VIEW_CALLEES,
	VIEW_NONE,	/* only files: --flamegraph, --pprof */
};

/* --pid, --comm, --event, --time: an event is kept when it passes all */
struct filters {
	int		*pids;		/* --pid: processes (or threads, where no TGID is known) */
	size_t		npids;
	int		*tids;		/* --tid: threads */
	size_t		ntids;
	GRegex		**comms, **events;	/* matched anywhere in the name */
	size_t		ncomms, nevents;
	bool		have_from, have_to;
	double		from, to;
	/* --off-cpu: --state, -m, -M (ns; max 0: none) */
	char		states[16];
	unsigned long	min_ns, max_ns;
};

struct waiting {			/* a cookie waiting for its stack */
	uint64_t	cookie;
	int		pid;
	unsigned long	lost_mark;	/* losses seen when it came */
	struct event	*events, **tail;
	struct waiting	*older;		/* the task's previous cookie still waiting */
	bool		superseded;	/* a later cookie of the task came */
};

/* Cookies a task keeps waiting: see the top of this file */
#define TASK_WAITING	8

/* A task's last stack: a later cookie of the same kernel exit may join it */
struct early {
	struct rec	*stack;
	bool		used;		/* joined to a cookie */
};

/* A file as inode_cache named it, for the views: its path and build-id */
struct named {
	char	*path;
	char	*build_id;	/* hex, or NULL */
};

struct resolved {
	const struct sym	*lines;	/* innermost first; the symbols' own storage */
	size_t			n;	/* 0: raw */
	const char		*why;
};

struct report {
	struct symbols	*syms;
	bool		folded;		/* VIEW_FOLDED or VIEW_BY_EVENT */
	enum view	view;
	struct filters	filt;
	struct views	*views;		/* for --top, --callers, --callees and the files */
	struct map	*paths;		/* (ino, dev) -> struct named */
	unsigned long	filtered;	/* events left out by the filters */
	struct map	*pending_event;	/* (pid, irq) -> event waiting for its cookie */
	struct map	*waiting;	/* (cookie, pid) -> struct waiting */
	struct map	*task_cookie;	/* pid -> its newest struct waiting */
	struct map	*early;		/* pid -> struct early: its last stack (a copy) */
	bool		off_cpu, wakers;
	bool		offsets;	/* --offsets: frames as offset, build-id, path */
	struct map	*off;		/* pid -> its event OFF_OPEN, off the CPU now */
	struct map	*wakes;		/* pid -> struct wake: its latest wakeup */
	unsigned long	losses;		/* REC_LOST records */
	struct symbols_stats symstats;	/* kept when the symbols are freed early */
	/* The stack print_stack shows, resolved once for all its events */
	struct {
		const struct rec	*stack;
		struct resolved		*res;
		struct vframe		*vf;
	} cur;
	struct {
		unsigned long events, with_stack, no_stack, no_stack_lost, no_cookie;
		unsigned long stacks, stacks_no_cookie, cookies_no_event, frames, cut;
		/* frames the CFI unwind of a stack copy found; stacks whose
		 * unwind ran off the copy's end */
		unsigned long cfi_frames, copy_edge;
		unsigned long stacks_early;	/* joined to a cookie that came after */
		uint64_t lost, lost_unknown;
		unsigned long switches, no_end, other_events, wakeups, woken, zero, flagless;
		uint64_t off_ns;
	} n;
};

static void usage(bool help)
{
	fprintf(help ? stdout : stderr,
		"usage: ustack report [VIEW] [FILTER]... [--flamegraph F.html] [--pprof F.pb.gz]\n"
		"                     [--force] [--stats] [-q] [[-i] FILE]\n"
		"  FILE, -i FILE, --input FILE\n"
		"        ustack record's output (default ustack.trace), the text of\n"
		"        tracefs's trace or trace_pipe, or a trace-cmd recording\n"
		"        (trace.dat); - for standard input\n"
		"VIEW (one; by default each event and its stack):\n"
		"  --folded         collapsed stacks, \"comm;outer;...;inner count\", for flame graphs\n"
		"  --by-event       the same, the event's name outermost: \"event;comm;outer;... count\"\n"
		"  --top [N]        functions by count, children (in the stack) and self (innermost),\n"
		"                   with %% of the events; then whole stacks by count (N rows each,\n"
		"                   default 50, 0 for all)\n"
		"  --callers RE     the functions calling those whose name RE matches (a regex,\n"
		"                   anywhere in the name; ^...$ for the whole), with counts and %%\n"
		"  --callees RE     the functions they call, with counts and %% ([self]: innermost)\n"
		"  --offsets        (the default view) each frame unsymbolised: its offset in its\n"
		"                   file, the file's build-id (- if none) and path, to symbolise\n"
		"                   elsewhere; a caller's frame is its return address\n"
		"Files, with or without a VIEW (- for standard output):\n"
		"  --flamegraph FILE  an HTML flame graph, self-contained (click: zoom, search box)\n"
		"  --pprof FILE       a gzipped profile.proto for pprof (sample type events/count;\n"
		"                     with --off-cpu, off-cpu/nanoseconds)\n"
		"  --force            replace FILE even if it is the input, the other file, or a trace\n"
		"FILTER (for every view; an option given twice, or a list, keeps either):\n"
		"  --pid PID[,PID...]  processes: all their threads (a trace of ustack record,\n"
		"                      or tracefs's with record-tgid; else the thread of that id)\n"
		"  --tid TID[,TID...]  threads   --comm RE   --event [SYSTEM:]RE[,RE...]  (RE: a regex)\n"
		"  --time [FROM],[TO]    seconds, as the timestamps print\n"
		"OFF-CPU (a trace of ustack record --off-cpu):\n"
		"  --off-cpu   each sched_switch that takes a task off the CPU is an event,\n"
		"              weighed by the nanoseconds until it is back on, under a frame\n"
		"              for the state it left in ([S], [D], [R]...); every view\n"
		"  --state S,D,R  only switches out in these states\n"
		"  -m US, -M US   only times off the CPU of at least, at most, US microseconds\n"
		"  --wakers    (with --off-cpu; a trace of ustack record --wakers) what woke each\n"
		"              wait, innermost of all: a frame \"--\", then the waker's stack from\n"
		"              the wakeup out to the waker, [hardirq] or [softirq] for an interrupt,\n"
		"              or the kernel thread's name (--top, --callers, --callees leave it out)\n"
		"OTHER:\n"
		"  --stats   time, throughput and peak memory, on standard error\n"
		"  -q, --quiet  no summary or progress on standard error, only errors\n"
		"  --binaries DIR  symbolise from DIR (binaries and debug files copied from\n"
		"                  the traced machine): by build-id (DIR/.build-id/xx/rest,\n"
		"                  rest.debug, or any ELF file under DIR), else by path or name;\n"
		"                  DIR may be the tar of ustack archive\n"
		"Events whose stack never came are the frame \"[no user stack]\" in every view.\n"
		"A progress line goes to standard error when it is a terminal.\n"
		"Exit status: 0; 2 on an error, or when the trace is cut short or corrupt\n"
		"(what could be read is reported all the same).\n");
	exit(help ? 0 : 2);
}

static void free_stack_copy(struct rec *s)
{
	if (s) {
		free(s->frames);
		free(s);
	}
}

/* What a stack record holds that report uses, outliving the input's buffer */
static struct rec *copy_stack(const struct rec *stack)
{
	struct rec *s = xcalloc(1, sizeof(*s));

	s->type = REC_STACK;
	s->pid = stack->pid;
	s->cookie = stack->cookie;
	s->lost = stack->lost;
	s->nr = stack->nr;
	s->frames = xmalloc((stack->nr ? stack->nr : 1) * sizeof(*s->frames));
	if (stack->nr)
		memcpy(s->frames, stack->frames, stack->nr * sizeof(*s->frames));
	return s;
}

static void wake_put(struct wake *w)
{
	if (w && !--w->refs) {
		free_stack_copy(w->stack);
		free(w);
	}
}

static void free_event(struct event *ev)
{
	if (ev->woken && ev->woken->sample == ev)
		ev->woken->sample = NULL;
	wake_put(ev->woken);
	wake_put(ev->wakes);
	free_stack_copy(ev->stack);
	free(ev->head);
	free(ev->name);
	free(ev);
}

/* An event is done with once shown, unless held for its end */
static void done_with(struct event *ev)
{
	if (!ev->held)
		free_event(ev);
}

/* GRegex reads UTF-8 only: a name with other bytes is matched as the views show it */
static bool any_matches(GRegex **list, size_t n, const char *s)
{
	char *clean = g_utf8_validate(s, -1, NULL) ? NULL : text_utf8(s);
	bool hit = false;

	for (size_t i = 0; i < n && !hit; i++)
		hit = g_regex_match(list[i], clean ? clean : s, 0, NULL);
	free(clean);
	return hit;
}

static bool passes(const struct filters *f, const struct event *ev)
{
	size_t i;

	if (f->npids) {
		/* A process: its threads; a trace without TGIDs knows threads only */
		for (i = 0; i < f->npids && f->pids[i] != (ev->tgid ? ev->tgid : ev->pid); i++)
			;
		if (i == f->npids)
			return false;
	}
	if (f->ntids) {
		for (i = 0; i < f->ntids && f->tids[i] != ev->pid; i++)
			;
		if (i == f->ntids)
			return false;
	}
	if (f->ncomms && !any_matches(f->comms, f->ncomms, ev->comm))
		return false;
	if (f->nevents && !any_matches(f->events, f->nevents, ev->name))
		return false;
	if (f->have_from && ev->ts < f->from)
		return false;
	if (f->have_to && ev->ts > f->to)
		return false;
	if (ev->off_cpu && f->states[0] && !strchr(f->states, ev->state))
		return false;
	return true;
}


/*
 * --off-cpu: an event shown before its end is known is held until then;
 * one with no end is counted, and weighed by nothing. True: not shown now.
 */
static bool hold(struct report *rep, struct event *ev, const struct rec *stack, const char *why)
{
	if (!ev->off_cpu)
		return false;
	if (ev->end == OFF_NO_END) {
		rep->n.no_end++;
		return true;
	}
	/* Its end, or the stack of what woke it, is still to come */
	if (ev->end == OFF_ENDED && (!ev->woken || ev->woken->settled))
		return false;
	if (ev->woken)
		ev->woken->sample = ev;
	ev->held = true;
	if (stack != ev->stack) {
		free_stack_copy(ev->stack);
		ev->stack = stack ? copy_stack(stack) : NULL;
	}
	ev->why = why;
	return true;
}

static void show(struct report *rep, struct event *ev, const struct rec *stack, const char *why);

/* A held event, shown again: it may be done with now */
static void unhold(struct report *rep, struct event *ev)
{
	ev->held = false;
	show(rep, ev, ev->stack, ev->why);
	if (!ev->held)
		free_event(ev);
}

/* The waker's stack is known (NULL: it has none): the switch out it woke may go */
static void settle(struct report *rep, struct wake *w, const struct rec *stack)
{
	struct event *sample = w->sample;

	if (w->settled)
		return;
	w->settled = true;
	w->stack = stack ? copy_stack(stack) : NULL;
	w->sample = NULL;
	if (sample && sample->held)
		unhold(rep, sample);
}

/* Kept by the filters that only an off-CPU event's end can tell */
static bool keep_weight(const struct report *rep, const struct event *ev)
{
	if (!ev->off_cpu)
		return true;
	return ev->ns >= rep->filt.min_ns && (!rep->filt.max_ns || ev->ns <= rep->filt.max_ns);
}

/* A frame as --offsets prints it: false if it is in no named file */
static bool print_offset(struct report *rep, const struct frame *f)
{
	/* Only regular files are named: no marker inode gets here */
	const struct named *named = map_get(rep->paths, f->ino, f->dev);

	if (!named)
		return false;
	printf("    <%016" PRIx64 "> %s ", f->off, named->build_id ? named->build_id : "-");
	path_escape(stdout, named->path, strlen(named->path));
	putchar('\n');
	return true;
}

/* The frames of a stack, as the default view prints them */
static void print_frames(struct report *rep, const struct rec *stack, const struct resolved *res)
{
	size_t i, k;

	for (i = 0; i < stack->nr; i++) {
		const struct frame *f = &stack->frames[i];
		const struct named *named = res[i].n ? map_get(rep->paths, f->ino, f->dev) : NULL;
		const bool raw = rep->offsets;
		const char *obj = named ? strrchr(named->path, '/') : NULL;

		/* each line ends with the frame's shared object, as perf's */
		obj = obj ? obj + 1 : named ? named->path : NULL;
		if (raw && print_offset(rep, f))
			continue;
		for (k = 0; !raw && k < res[i].n; k++) {
			fputs("    ", stdout);
			symbols_print(stdout, &res[i].lines[k]);
			if (obj) {
				fputs(" [", stdout);
				fputs(obj, stdout);
				putchar(']');
			}
			putchar('\n');
		}
		if (res[i].n && !raw)
			continue;
		if (f->ino == USTACK_NO_VMA || f->ino == USTACK_NO_MM_LOCK ||
		    f->ino == USTACK_NOT_REG)
			printf("    <%016" PRIx64 "> (%s)\n", f->off, res[i].why);
		else
			printf("    <%016" PRIx64 "> inode %" PRIu64 " dev %u:%u (%s)\n",
			       f->off, f->ino, KDEV_MAJOR(f->dev), KDEV_MINOR(f->dev),
			       res[i].why);
	}
	if (stack->lost)
		printf("    ... %" PRIu64 " more frames were not recorded\n", stack->lost);
}

/* A stack's frames symbolised, and as the views take them; free both */
static struct resolved *resolve(struct report *rep, const struct rec *stack, struct vframe **vf)
{
	struct resolved *res = xcalloc(stack->nr ? stack->nr : 1, sizeof(*res));
	const struct named *named;
	size_t i;

	for (i = 0; i < stack->nr; i++)
		res[i].n = symbols_resolve(rep->syms, &stack->frames[i], i > 0, &res[i].lines,
					   &res[i].why);
	*vf = xcalloc(stack->nr ? stack->nr : 1, sizeof(**vf));
	for (i = 0; i < stack->nr; i++) {
		const struct frame *f = &stack->frames[i];

		(*vf)[i].f = f;
		(*vf)[i].ret = i > 0;
		named = map_get(rep->paths, f->ino, f->dev);
		(*vf)[i].file = named ? named->path : NULL;
		(*vf)[i].build_id = named ? named->build_id : NULL;
		(*vf)[i].lines = res[i].lines;
		(*vf)[i].n = res[i].n;
	}
	return res;
}

/* One event with its stack (NULL: it never came, for why) */
static void show(struct report *rep, struct event *ev, const struct rec *stack, const char *why)
{
	struct vsample smp = { ev->name, ev->comm, ev->pid, ev->ts, 1, NULL, NULL, NULL, 0 };
	char state[4] = { '[', ev->state, ']', '\0' };
	struct resolved *res, *wres = NULL;
	struct vframe *vf, *wvf = NULL;
	const struct wake *woken = ev->woken;

	/* A sched_waking: what it woke may wait for its stack */
	if (ev->wakes)
		settle(rep, ev->wakes, stack);
	if (ev->not_sample || hold(rep, ev, stack, why))
		return;
	if (!ev->keep || !keep_weight(rep, ev)) {
		rep->filtered++;
		return;
	}
	if (ev->off_cpu) {
		/* Back within the clock's tick (the text gives microseconds) */
		if (!ev->ns) {
			rep->n.zero++;
			return;
		}
		rep->n.off_ns += ev->ns;
		smp.weight = ev->ns;
		smp.outer = state;
	}
	if (woken) {
		rep->n.woken++;
		smp.waker = woken->name;
		if (woken->stack) {
			wres = resolve(rep, woken->stack, &wvf);
			smp.waker_frames = wvf;
			smp.nwaker = woken->stack->nr;
		}
	}
	if (stack && stack == rep->cur.stack) {
		res = rep->cur.res;
		vf = rep->cur.vf;
	} else {
		res = stack ? resolve(rep, stack, &vf) : NULL;
	}
	if (rep->views && stack)
		views_add(rep->views, &smp, vf, stack->nr, stack->lost != 0);
	else if (rep->views)
		views_add_nostack(rep->views, &smp);
	if (rep->view == VIEW_TEXT) {
		printf("%s\n", ev->head);
		if (ev->off_cpu)
			printf("    off the CPU %.6f ms, in %c\n", (double)ev->ns / 1e6, ev->state);
		if (stack)
			print_frames(rep, stack, res);
		else
			printf("    (no user stack: %s)\n", why);
		if (woken) {
			printf("    woken by %s%s\n", woken->name,
			       woken->stack || woken->name[0] == '[' ? "" : " (no user stack)");
			if (woken->stack)
				print_frames(rep, woken->stack, wres);
		}
		putchar('\n');
	}
	if (stack && stack != rep->cur.stack) {
		free(res);
		free(vf);
	}
	free(wres);
	free(wvf);
}

/* The events of a kernel entry, with their stack; each is done with */
static void print_stack(struct report *rep, const struct rec *stack, struct event *events)
{
	struct event *ev, *next;

	rep->cur.stack = stack;
	rep->cur.res = resolve(rep, stack, &rep->cur.vf);
	for (ev = events; ev; ev = next) {
		next = ev->next;
		rep->n.with_stack++;
		show(rep, ev, stack, NULL);
		done_with(ev);
	}
	free(rep->cur.res);
	free(rep->cur.vf);
	rep->cur.stack = NULL;
}

/* An event whose stack never came: the frame [no user stack] in the views */
static void print_without_stack(struct report *rep, struct event *ev, const char *why)
{
	show(rep, ev, NULL, why);
}

/* A cookie that no stack will answer */
static void give_up(struct report *rep, struct waiting *w, const char *why)
{
	struct event *ev, *next;
	bool after_loss = rep->losses != w->lost_mark;

	for (ev = w->events; ev; ev = next) {
		next = ev->next;
		rep->n.no_stack++;
		if (after_loss)
			rep->n.no_stack_lost++;
		print_without_stack(rep, ev, after_loss ? "events were lost after its cookie" : why);
		done_with(ev);
	}
	free(w);
}

static struct event *new_event(const struct rec *rec)
{
	struct event *ev = xcalloc(1, sizeof(*ev));
	size_t n = strlen(rec->comm) + strlen(rec->ts) + strlen(rec->text) + 48;

	ev->head = xmalloc(n);
	snprintf(ev->head, n, "%s-%d [%03d] %s: %s", rec->comm, rec->pid, rec->cpu,
		 rec->ts, rec->text);
	snprintf(ev->comm, sizeof(ev->comm), "%s", rec->comm);
	ev->name = xstrdup(rec->name ? rec->name : "[unnamed]");
	ev->pid = rec->pid;
	ev->tgid = rec->tgid;
	ev->ts = strtod(rec->ts, NULL);
	return ev;
}

/* --off-cpu: the end of a task's time off the CPU, known or not */
static void off_finish(struct report *rep, struct event *ev, double ts, bool known)
{
	/* Lost events may have held its real switch in: no guess */
	if (known && ts >= ev->ts && rep->losses == ev->lost_mark) {
		ev->end = OFF_ENDED;
		ev->ns = (unsigned long)((ts - ev->ts) * 1e9 + 0.5);
	} else {
		ev->end = OFF_NO_END;
	}
	if (ev->held)
		unhold(rep, ev);
}

static void off_end(struct report *rep, int pid, double ts, bool known)
{
	struct event *ev = map_del(rep->off, (uint64_t)pid, 0);
	struct wake *w;

	if (!ev)
		return;
	/*
	 * Back on: the latest wakeup since it was last on, if it slept (a
	 * wakeup may be recorded before the sleeper's own switch out, while
	 * the waker waits for it to leave the CPU); not for a preemption
	 */
	w = known ? map_del(rep->wakes, (uint64_t)pid, 0) : NULL;
	if (w && ev->state != 'R')
		ev->woken = w;
	else
		wake_put(w);
	off_finish(rep, ev, ts, known);
}

/* A sched_waking: the task it wakes keeps it until its switch in */
static void on_waking(struct report *rep, struct event *ev, const struct rec *rec, int wakee)
{
	static const char *const irqs[] = { ['h'] = "[hardirq]", ['s'] = "[softirq]", ['n'] = "[nmi]" };
	struct wake *w = xcalloc(1, sizeof(*w));

	rep->n.wakeups++;
	if (!rec->flags)
		rep->n.flagless++;
	ev->not_sample = true;
	w->refs = 1;
	w->ts = ev->ts;
	if (rec->irq) {
		/* Not the interrupted task's doing, nor its stack */
		snprintf(w->name, sizeof(w->name), "%s", irqs[(unsigned char)rec->irq]);
		w->settled = true;
	} else {
		snprintf(w->name, sizeof(w->name), "%s-%d", rec->comm, rec->pid);
		ev->wakes = w;
		w->refs++;
	}
	wake_put(map_del(rep->wakes, (uint64_t)wakee, 0));
	map_put(rep->wakes, (uint64_t)wakee, 0, w);
}

/*
 * An event's cookie follows it in the same context: an interrupt that
 * comes between a task's event and its cookie records its own event and
 * cookie, of the same kernel entry, before the task's cookie.
 */
static uint64_t context_of(const struct rec *rec)
{
	return (unsigned char)rec->irq;
}

static void on_event(struct report *rep, const struct rec *rec)
{
	struct event *old = map_del(rep->pending_event, (uint64_t)rec->pid, context_of(rec));
	struct sched_switch sw;
	struct event *ev;
	int wakee;

	rep->n.events++;
	if (old) {
		rep->n.no_cookie++;
		print_without_stack(rep, old, "no cookie: the kernel asked no stack for it");
		done_with(old);
	}
	ev = new_event(rec);
	if (rep->wakers && !strcmp(ev->name, "sched_waking") && sched_waking_parse(rec->text, &wakee)) {
		on_waking(rep, ev, rec, wakee);
	} else if (rep->off_cpu) {
		if (strcmp(ev->name, "sched_switch") || !sched_switch_parse(rec->text, &sw)) {
			/* Not a switch: not a sample of this profile */
			rep->n.other_events++;
			ev->not_sample = true;
		} else {
			off_end(rep, sw.next_pid, ev->ts, true);
			if (sw.prev_pid && sw.prev_pid == rec->pid) {
				/* A switch out whose switch in was never seen */
				off_end(rep, sw.prev_pid, 0, false);
				ev->off_cpu = true;
				ev->state = sw.state;
				ev->lost_mark = rep->losses;
				rep->n.switches++;
				map_put(rep->off, (uint64_t)rec->pid, 0, ev);
			} else {
				ev->not_sample = true;
			}
		}
	}
	/* After the above: --state reads a switch out's state */
	ev->keep = !ev->not_sample && passes(&rep->filt, ev);
	map_put(rep->pending_event, (uint64_t)rec->pid, context_of(rec), ev);
}

/* The task's last stack goes: counted if no cookie ever joined it */
static void drop_early(struct report *rep, int pid)
{
	struct early *e = map_del(rep->early, (uint64_t)pid, 0);

	if (!e)
		return;
	if (!e->used)
		rep->n.stacks_no_cookie++;
	free_stack_copy(e->stack);
	free(e);
}

/* The task's last stack, joined already or not: a later cookie may join it */
static void keep_early(struct report *rep, const struct rec *stack, bool used)
{
	struct early *e = xcalloc(1, sizeof(*e));

	drop_early(rep, stack->pid);
	e->stack = copy_stack(stack);
	e->used = used;
	map_put(rep->early, (uint64_t)stack->pid, 0, e);
}

/* The task's cookies past its TASK_WAITING newest (@w) get no stack */
static void give_up_older(struct report *rep, struct waiting *w)
{
	struct waiting *old;
	int n;

	for (n = 1; w && n < TASK_WAITING; n++)
		w = w->older;
	if (!w)
		return;
	old = w->older;
	w->older = NULL;
	while (old) {
		w = old->older;
		map_del(rep->waiting, old->cookie, (uint64_t)old->pid);
		give_up(rep, old, "the task entered the kernel again first");
		old = w;
	}
}

/* @w, joined, leaves its task's cookies */
static void unlink_waiting(struct report *rep, struct waiting *w)
{
	struct waiting *newest = map_get(rep->task_cookie, (uint64_t)w->pid, 0), **p;

	if (newest == w) {
		map_del(rep->task_cookie, (uint64_t)w->pid, 0);
		if (w->older)
			map_put(rep->task_cookie, (uint64_t)w->pid, 0, w->older);
		return;
	}
	for (p = &newest->older; *p; p = &(*p)->older) {
		if (*p == w) {
			*p = w->older;
			return;
		}
	}
}

static void on_cookie(struct report *rep, const struct rec *rec)
{
	struct event *ev = map_del(rep->pending_event, (uint64_t)rec->pid, context_of(rec));
	struct waiting *w, *prev;

	if (!ev) {
		rep->n.cookies_no_event++;
		return;
	}
	w = map_get(rep->waiting, rec->cookie, (uint64_t)rec->pid);
	if (!w) {
		struct early *early = map_get(rep->early, (uint64_t)rec->pid, 0);

		/* Its stack came first: walked before the event, in this exit */
		if (early && early->stack->cookie == rec->cookie) {
			rep->n.stacks_early++;
			early->used = true;
			ev->next = NULL;
			print_stack(rep, early->stack, ev);
			return;
		}
		drop_early(rep, rec->pid);
		/* A new kernel entry: the task's previous cookies wait on, a few */
		prev = map_del(rep->task_cookie, (uint64_t)rec->pid, 0);
		w = xcalloc(1, sizeof(*w));
		w->cookie = rec->cookie;
		w->pid = rec->pid;
		w->lost_mark = rep->losses;
		w->tail = &w->events;
		w->older = prev;
		if (prev)
			prev->superseded = true;
		map_put(rep->waiting, rec->cookie, (uint64_t)rec->pid, w);
		map_put(rep->task_cookie, (uint64_t)rec->pid, 0, w);
		give_up_older(rep, w);
	}
	*w->tail = ev;
	w->tail = &ev->next;
}

static void on_stack(struct report *rep, const struct rec *rec)
{
	struct waiting *w = map_del(rep->waiting, rec->cookie, (uint64_t)rec->pid);

	rep->n.stacks++;
	rep->n.frames += rec->nr;
	for (size_t i = 0; i < rec->nr; i++)
		rep->n.cfi_frames += rec->frames[i].cfi;
	rep->n.copy_edge += rec->copy_edge;
	if (rec->lost)
		rep->n.cut++;
	/*
	 * Kept for a later cookie of the same exit; once joined, only for
	 * --off-cpu, where switches on the way out make such cookies common
	 * (else it would cost a copy per stack)
	 */
	if (!w || rep->off_cpu)
		keep_early(rep, rec, w != NULL);
	else
		drop_early(rep, rec->pid);
	if (!w)
		return;
	unlink_waiting(rep, w);
	print_stack(rep, rec, w->events);
	free(w);
}

static void flush_waiting(uint64_t a, uint64_t b, void *value, void *ctx)
{
	struct report *rep = ctx;
	struct waiting *w = value;

	(void)a;
	(void)b;
	if (w->superseded)
		give_up(rep, w, "the task entered the kernel again first");
	else
		give_up(rep, w, "the trace ended, or the task exited, before its stack");
}

static void flush_pending(uint64_t a, uint64_t b, void *value, void *ctx)
{
	struct report *rep = ctx;

	(void)a;
	(void)b;
	rep->n.no_cookie++;
	print_without_stack(rep, value, "the trace ended before its cookie");
	done_with(value);
}

static void flush_early(uint64_t a, uint64_t b, void *value, void *ctx)
{
	struct report *rep = ctx;
	struct early *e = value;

	(void)a;
	(void)b;
	if (!e->used)
		rep->n.stacks_no_cookie++;
	free_stack_copy(e->stack);
	free(e);
}

static void flush_wake(uint64_t a, uint64_t b, void *value, void *ctx)
{
	(void)a;
	(void)b;
	(void)ctx;
	wake_put(value);
}

/* The trace ended with the task off the CPU: its end is not known */
static void flush_off(uint64_t a, uint64_t b, void *value, void *ctx)
{
	(void)a;
	(void)b;
	off_finish(ctx, value, 0, false);
}

static void summary(struct report *rep, const char *format)
{
	struct symbols_stats st;

	if (rep->syms)
		symbols_stats(rep->syms, &rep->symstats);
	st = rep->symstats;
	fprintf(stderr, "ustack: read %s\n", format);
	fprintf(stderr, "ustack: %lu events: %lu with a stack, %lu whose stack never came "
		"(%lu after lost events), %lu without a cookie\n",
		rep->n.events, rep->n.with_stack, rep->n.no_stack, rep->n.no_stack_lost,
		rep->n.no_cookie);
	fprintf(stderr, "ustack: %lu stacks (%lu cut short), %lu without a cookie event; "
		"%lu cookies without an event\n",
		rep->n.stacks, rep->n.cut, rep->n.stacks_no_cookie, rep->n.cookies_no_event);
	fprintf(stderr, "ustack: %zu frames symbolised, %zu printed raw; %zu files named, "
		"%zu inodes never named, %zu paths now name another file, "
		"%zu files replaced (build-id differs)\n",
		st.resolved, st.unresolved, st.files, st.unknown_inodes, st.changed, st.replaced);
	if (rep->n.cfi_frames || rep->n.copy_edge)
		fprintf(stderr, "ustack: %lu frames: %lu by frame pointers, %lu by the CFI of the "
			"stack copies; %lu stacks ended at the edge of their copy\n",
			rep->n.frames, rep->n.frames - rep->n.cfi_frames, rep->n.cfi_frames,
			rep->n.copy_edge);
	if (rep->losses)
		fprintf(stderr, "ustack: the ring buffer lost events %lu times: %" PRIu64
			" events%s\n", rep->losses, rep->n.lost,
			rep->n.lost_unknown ? ", and an unknown number more" : "");
	else
		fprintf(stderr, "ustack: no events were lost\n");
	if (rep->filtered)
		fprintf(stderr, "ustack: %lu events were left out by the filters\n", rep->filtered);
	if (rep->n.stacks_early)
		fprintf(stderr, "ustack: %lu events came after their stack (walked before them, in "
			"the same return to user space)\n", rep->n.stacks_early);
	if (rep->off_cpu)
		fprintf(stderr, "ustack: --off-cpu: %lu switches off the CPU; %.6f s off the CPU "
			"in the views; %lu whose switch back in was not seen (the trace ended, or "
			"events were lost): not weighed; %lu other events, not switches out\n",
			rep->n.switches, (double)rep->n.off_ns / 1e9, rep->n.no_end,
			rep->n.other_events);
	if (rep->n.zero)
		fprintf(stderr, "ustack: --off-cpu: %lu switches back within the clock's tick: "
			"weighed 0, left out\n", rep->n.zero);
	if (rep->wakers)
		fprintf(stderr, "ustack: --wakers: %lu wakeups; %lu switches out in the views "
			"with what woke them\n", rep->n.wakeups, rep->n.woken);
	if (rep->n.flagless)
		fprintf(stderr, "ustack: warning: %lu wakeups have no flags column (the trace was "
			"printed without irq-info): an interrupt's wakeup is taken for its task's\n",
			rep->n.flagless);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

enum {
	OPT_BY_EVENT = 256, OPT_FOLDED, OPT_STATS, OPT_TOP, OPT_CALLERS, OPT_CALLEES, OPT_FLAME,
	OPT_PPROF, OPT_PID, OPT_TID, OPT_COMM, OPT_EVENT, OPT_TIME, OPT_FORCE, OPT_OFF_CPU, OPT_STATE, OPT_WAKERS,
	OPT_OFFSETS,
};

/* -m, -M: microseconds, into nanoseconds */
static unsigned long parse_us(const char *opt, const char *arg)
{
	char *end;
	double us;

	errno = 0;
	us = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(us) || us < 0 || us > 1e12)
		die("%s %s: not a time in microseconds", opt, arg);
	return (unsigned long)(us * 1e3 + 0.5);
}

static void set_view(struct report *rep, enum view view)
{
	if (rep->view != VIEW_TEXT && rep->view != view) {
		warnx_("one view at a time: --folded, --by-event, --top, --callers or --callees");
		usage(false);
	}
	rep->view = view;
}

/*
 * A pattern of --callers, --callees, --comm, --event: a GRegex (PCRE),
 * matched anywhere in the name, as pprof's -focus; ^...$ for the whole
 */
static GRegex *compile_regex(const char *opt, const char *pattern)
{
	GError *err = NULL;
	GRegex *re = g_regex_new(pattern, G_REGEX_OPTIMIZE, 0, &err);

	if (!re)
		die("%s %s: not a regular expression: %s", opt, pattern, err->message);
	return re;
}

/* A pattern of a list, appended */
static void add_regex(GRegex ***list, size_t *n, const char *opt, const char *s, size_t len)
{
	char *pattern = strndup(s, len);

	if (!pattern)
		die("out of memory");
	*list = xrealloc(*list, (*n + 1) * sizeof(**list));
	(*list)[(*n)++] = compile_regex(opt, pattern);
	free(pattern);
}

static void parse_pids(int **pids, size_t *npids, const char *opt, const char *arg)
{
	const char *p = arg;
	char *end;
	long pid;

	for (;;) {
		errno = 0;
		pid = strtol(p, &end, 10);
		if (end == p || errno || pid < 0 || pid > INT32_MAX || (*end && *end != ','))
			die("%s %s: not a list of ids", opt, arg);
		*pids = xrealloc(*pids, (*npids + 1) * sizeof(**pids));
		(*pids)[(*npids)++] = (int)pid;
		if (!*end)
			break;
		p = end + 1;
	}
}

/*
 * PATTERN[,PATTERN...], each maybe SYSTEM:PATTERN (the text traces hold no
 * system): SYSTEM is a word before the first ':'
 */
static void parse_events(struct filters *f, const char *arg)
{
	const char *p = arg, *e, *colon;

	do {
		e = strchr(p, ',');
		if (!e)
			e = p + strlen(p);
		colon = memchr(p, ':', (size_t)(e - p));
		if (colon && colon > p && strspn(p, "abcdefghijklmnopqrstuvwxyz"
				"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == (size_t)(colon - p))
			p = colon + 1;
		if (e == p)
			die("--event %s: an empty event name", arg);
		add_regex(&f->events, &f->nevents, "--event", p, (size_t)(e - p));
		p = e + 1;
	} while (*e);
}

static bool parse_seconds(const char *s, size_t len, double *v)
{
	char buf[64], *end;

	if (!len || len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	*v = strtod(buf, &end);
	return !errno && *end == '\0' && end != buf && isfinite(*v);
}

static void parse_time(struct filters *f, const char *arg)
{
	const char *comma = strchr(arg, ',');

	if (!comma)
		die("--time %s: give FROM,TO (either may be empty)", arg);
	if (comma > arg) {
		if (!parse_seconds(arg, (size_t)(comma - arg), &f->from))
			die("--time %s: FROM is not a number of seconds", arg);
		f->have_from = true;
	}
	if (comma[1]) {
		if (!parse_seconds(comma + 1, strlen(comma + 1), &f->to))
			die("--time %s: TO is not a number of seconds", arg);
		f->have_to = true;
	}
	if (f->have_from && f->have_to && f->from > f->to)
		die("--time %s: FROM is after TO", arg);
}

static void free_filters(struct filters *f)
{
	size_t i;

	for (i = 0; i < f->ncomms; i++)
		g_regex_unref(f->comms[i]);
	for (i = 0; i < f->nevents; i++)
		g_regex_unref(f->events[i]);
	free(f->comms);
	free(f->events);
	free(f->pids);
	free(f->tids);
}

static void free_path(void *p)
{
	struct named *n = p;

	free(n->path);
	free(n->build_id);
	free(n);
}

static void name_file(struct report *rep, const struct rec *rec)
{
	struct named *n = map_del(rep->paths, rec->ino, rec->dev);
	size_t i;

	if (n)
		free_path(n);
	if (!rec->path)
		return;
	n = xcalloc(1, sizeof(*n));
	n->path = xstrdup(rec->path);
	if (rec->build_id && rec->build_id_len) {
		n->build_id = xmalloc(2 * rec->build_id_len + 1);
		for (i = 0; i < rec->build_id_len; i++)
			snprintf(n->build_id + 2 * i, 3, "%02x", rec->build_id[i]);
	}
	map_put(rep->paths, rec->ino, rec->dev, n);
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "folded", no_argument, NULL, OPT_FOLDED },
		{ "by-event", no_argument, NULL, OPT_BY_EVENT },
		{ "top", optional_argument, NULL, OPT_TOP },
		{ "callers", required_argument, NULL, OPT_CALLERS },
		{ "callees", required_argument, NULL, OPT_CALLEES },
		{ "flamegraph", required_argument, NULL, OPT_FLAME },
		{ "pprof", required_argument, NULL, OPT_PPROF },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "tid", required_argument, NULL, OPT_TID },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "event", required_argument, NULL, OPT_EVENT },
		{ "time", required_argument, NULL, OPT_TIME },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "binaries", required_argument, NULL, 'B' },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
		{ "state", required_argument, NULL, OPT_STATE },
		{ "wakers", no_argument, NULL, OPT_WAKERS },
		{ "offsets", no_argument, NULL, OPT_OFFSETS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "input", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct report rep = { 0 };
	const char *path = NULL, *flame = NULL, *pprof = NULL, *func = NULL;
	const char *outputs[2], *const output_opts[2] = { "--flamegraph", "--pprof" };
	GRegex *func_re = NULL;
	bool nomatch = false;
	size_t top = 50;
	bool stats = false, force = false, quiet = false;
	struct input *in;
	struct rec rec;
	double t0 = now();
	unsigned long records = 0;
	int opt, ret;
	char *end;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":hqi:m:M:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			input_arg(&path, optarg);
			break;
		case OPT_FOLDED:
			set_view(&rep, VIEW_FOLDED);
			break;
		case OPT_BY_EVENT:
			set_view(&rep, VIEW_BY_EVENT);
			break;
		case OPT_TOP:
			set_view(&rep, VIEW_TOP);
			/* --top 5, as --top=5: a number is N, not the trace */
			if (!optarg && optind < argc && argv[optind][0] &&
			    strspn(argv[optind], "0123456789") == strlen(argv[optind]))
				optarg = argv[optind++];
			if (optarg) {
				errno = 0;
				top = (size_t)strtoul(optarg, &end, 10);
				if (!*optarg || *end || errno || *optarg == '-')
					die("--top=%s: not a number of rows", optarg);
			}
			break;
		case OPT_CALLERS:
		case OPT_CALLEES:
			set_view(&rep, opt == OPT_CALLERS ? VIEW_CALLERS : VIEW_CALLEES);
			func = optarg;
			break;
		case OPT_FLAME:
			flame = optarg;
			break;
		case OPT_PPROF:
			pprof = optarg;
			break;
		case OPT_PID:
			parse_pids(&rep.filt.pids, &rep.filt.npids, "--pid", optarg);
			break;
		case OPT_TID:
			parse_pids(&rep.filt.tids, &rep.filt.ntids, "--tid", optarg);
			break;
		case OPT_COMM:
			add_regex(&rep.filt.comms, &rep.filt.ncomms, "--comm", optarg, strlen(optarg));
			break;
		case OPT_EVENT:
			parse_events(&rep.filt, optarg);
			break;
		case OPT_TIME:
			parse_time(&rep.filt, optarg);
			break;
		case OPT_STATS:
			stats = true;
			break;
		case 'q':
			quiet = true;
			break;
		case OPT_FORCE:
			force = true;
			break;
		case OPT_OFF_CPU:
			rep.off_cpu = true;
			break;
		case OPT_WAKERS:
			rep.wakers = true;
			break;
		case OPT_OFFSETS:
			rep.offsets = true;
			break;
		case OPT_STATE:
			if (!states_parse(optarg, rep.filt.states, sizeof(rep.filt.states)))
				die("--state %s: give states as letters, S,D,R (also I, T, t, X, Z, P, W)",
				    optarg);
			break;
		case 'm':
			rep.filt.min_ns = parse_us("-m", optarg);
			break;
		case 'M':
			rep.filt.max_ns = parse_us("-M", optarg);
			break;
		case 'B':
			symbols_binaries(optarg);
			break;
		case 'h':
			usage(true);
			break;
		default:
			bad_option("report", opt, argv);
			usage(false);
		}
	}
	path = input_rest(path, argc, argv, "ustack.trace");
	if (!rep.off_cpu && (rep.filt.states[0] || rep.filt.min_ns || rep.filt.max_ns || rep.wakers))
		die("--state, -m, -M and --wakers go with --off-cpu");
	if (rep.filt.max_ns && rep.filt.min_ns > rep.filt.max_ns)
		die("-m is more than -M: no time off the CPU can pass both");
	if (rep.offsets && rep.view != VIEW_TEXT)
		die("--offsets goes with the default view, not --folded, --by-event, --top, --callers or --callees");
	if (rep.view == VIEW_TEXT && (flame || pprof))
		rep.view = VIEW_NONE;
	outputs[0] = flame;
	outputs[1] = pprof;
	output_check(path, outputs, output_opts, 2, rep.view != VIEW_NONE, force);
	rep.folded = rep.view == VIEW_FOLDED || rep.view == VIEW_BY_EVENT;
	if (func)
		func_re = compile_regex(rep.view == VIEW_CALLERS ? "--callers" : "--callees", func);
	if (rep.view != VIEW_TEXT) {
		rep.views = views_new();
		if (rep.off_cpu)
			views_off_cpu(rep.views);
	}
	rep.paths = map_new();

	rep.syms = symbols_new();
	if (rep.views)
		rep.views->syms = rep.syms;
	rep.pending_event = map_new();
	rep.waiting = map_new();
	rep.task_cookie = map_new();
	rep.early = map_new();
	rep.off = map_new();
	rep.wakes = map_new();
	in = input_open(path);
	if (!quiet)
		progress_start(path);

	while (input_next(in, &rec) > 0) {
		progress_tick(++records);
		/* Each event is printed as it comes: a full disk ends it */
		if (rep.view == VIEW_TEXT)
			output_check_stdout();
		switch (rec.type) {
		case REC_EVENT:
			on_event(&rep, &rec);
			break;
		case REC_COOKIE:
			on_cookie(&rep, &rec);
			break;
		case REC_STACK:
			on_stack(&rep, &rec);
			break;
		case REC_INODE:
			symbols_name_file(rep.syms, rec.ino, rec.dev, rec.path, rec.err,
					  rec.build_id, rec.build_id_len);
			name_file(&rep, &rec);
			break;
		case REC_LOST:
			rep.losses++;
			rep.n.lost += rec.lost;
			if (!rec.lost)
				rep.n.lost_unknown++;
			break;
		}
	}
	map_each(rep.waiting, flush_waiting, &rep);
	map_each(rep.pending_event, flush_pending, &rep);
	map_each(rep.early, flush_early, &rep);
	map_each(rep.off, flush_off, &rep);
	map_each(rep.wakes, flush_wake, NULL);
	progress_end();
	if (rep.views) {
		/* The views hold copies of the names: libdw's memory goes first */
		views_done(rep.views);
		symbols_stats(rep.syms, &rep.symstats);
		symbols_free(rep.syms);
		rep.syms = NULL;
	}
	if (rep.folded)
		views_folded(rep.views, stdout, rep.view == VIEW_BY_EVENT);
	if (rep.view == VIEW_TOP)
		views_top(rep.views, stdout, top);
	else if (rep.view == VIEW_CALLERS || rep.view == VIEW_CALLEES)
		if (views_neighbours(rep.views, stdout, func, func_re, rep.view == VIEW_CALLEES))
			nomatch = true;
	output_flush_stdout();
	if (!quiet)
		summary(&rep, input_format(in));
	ret = input_close(in);
	if (nomatch)
		ret = 2;
	if (flame) {
		if (flame_write(rep.views, flame))
			ret = 2;
		else if (!quiet)
			fprintf(stderr, "ustack: wrote the flame graph %s\n", flame);
	}
	if (pprof) {
		if (pprof_write(rep.views, pprof))
			ret = 2;
		else if (!quiet)
			fprintf(stderr, "ustack: wrote the pprof profile %s\n", pprof);
	}
	if (output_close_stdout())
		ret = 2;

	if (stats) {
		struct rusage ru;
		double t = now() - t0;

		getrusage(RUSAGE_SELF, &ru);
		fprintf(stderr, "ustack: %.3f s, %.0f stacks/s, peak memory %ld KiB\n",
			t, t > 0 ? (double)rep.n.stacks / t : 0.0, ru.ru_maxrss);
	}
	map_free(rep.waiting, NULL);
	map_free(rep.pending_event, NULL);
	map_free(rep.task_cookie, NULL);
	map_free(rep.early, NULL);
	map_free(rep.off, NULL);
	map_free(rep.wakes, NULL);
	map_free(rep.paths, free_path);
	if (rep.views)
		views_free(rep.views);
	free_filters(&rep.filt);
	if (rep.syms)
		symbols_free(rep.syms);
	if (func_re)
		g_regex_unref(func_re);
	return ret;
}
