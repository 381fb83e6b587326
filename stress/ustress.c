// SPDX-License-Identifier: GPL-2.0
/*
 * ustress: userstacktrace_delay under load and churn, with a checker.
 *
 * Workers make system calls from deep call chains; a churner forks,
 * execs and exits, maps and unmaps files, and dlopens and dlcloses a
 * library.  Meanwhile a controller, at random, toggles the option in
 * several instances, removes and remakes instances with the option set,
 * truncates their trace, changes trace_clock and current_tracer, writes
 * tracing_on, enables and disables events, and reads trace; one reader
 * per instance reads trace_pipe all along and checks, with ustack's own
 * parser, that:
 *  - every stack follows a cookie of the same task;
 *  - every cookie without a stack is explained: the ring buffer lost
 *    events, the controller disturbed the instance (it counts, before and
 *    after each operation that may erase or drop records), or the
 *    reading stopped first;
 *  - in quiet windows, when the controller does nothing at all, every
 *    cookie has its stack, unless the ring buffer lost events;
 *  - no more than 5% of the cookies (-x) need an explanation at all;
 * and the controller checks that the inode table stays within its cap.
 * -R saves what each reader read; -C checks saved streams again, with no
 * kernel (stress/selftest).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tracefs.h>

#include "ustack.h"

#define MAX_INSTANCES	8
#define MAX_WORKERS	16

struct counters {
	unsigned long syscalls, forks, maps, dlopens;
	unsigned long records, cookies, stacks, matched, lost_records, lost_events;
	/* Stacks whose mappings the kernel did not look up (inode -2) */
	unsigned long stacks_unlocked;
	/* Each distinct cookie (kernel entry) judged, and how */
	unsigned long entries, joined, why_lost, why_disturbed, why_ended, unexplained;
	unsigned long stack_no_cookie_explained, stack_no_cookie_unexplained;
	/* Quiet windows: begun and armed; cookies judged inside */
	unsigned long q_begun, q_windows, q_judged, q_joined, q_lost, q_unexplained;
	unsigned long q_stack_no_cookie, sessions;
	unsigned long toggles, busy, instances_made, truncates, clocks, tracers;
	unsigned long tracing_on, event_flips, trace_reads, max_inodes, inode_cap;
	unsigned long cap_exceeded, quiet_windows, quiet_preps, stuck_readers;
	unsigned long gen[MAX_INSTANCES];	/* disturbances, per instance */
	volatile int stop;
};

static struct counters *cnt;

#define ADD(field, n) __atomic_add_fetch(&cnt->field, (n), __ATOMIC_RELAXED)

struct inst {
	struct tracefs_instance	*ti;
	char			name[32];
	pid_t			reader;
	bool			events[3];
};

static const char *const events[][2] = {
	{ "syscalls", "sys_enter_getppid" },
	{ "syscalls", "sys_enter_mmap" },
	{ "syscalls", "sys_enter_execve" },
};
static const char *const clocks[] = { "local", "global", "mono", "uptime", "counter" };

static struct inst insts[MAX_INSTANCES];
static int ninst = 3, nworkers = 4;
static bool no_patching;	/* current_tracer stays "nop" */
static pid_t workers[MAX_WORKERS + 1];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --- the load */

__attribute__((noinline)) static long deep(int n)
{
	long ret;

	if (n) {
		ret = deep(n - 1);
		asm volatile("" : "+r"(ret) : : "memory");
		return ret + 1;
	}
	asm volatile("syscall" : "=a"(ret) : "a"(SYS_getppid) : "rcx", "r11", "memory");
	return ret;
}

static void worker(unsigned int seed)
{
	/* The controller and the readers must not starve */
	if (nice(19) < 0)
		_exit(1);
	while (!cnt->stop) {
		deep((int)(rand_r(&seed) % 64));
		ADD(syscalls, 1);
	}
	_exit(0);
}

static char pool_dir[] = "/tmp/ustress-pool.XXXXXX";
static int pool_size;

/* POOL copies of tiny, each its own inode */
static void make_pool(const char *tiny)
{
	char cmd[512];
	int i;

	if (!mkdtemp(pool_dir))
		die("mkdtemp: %s", strerror(errno));
	for (i = 0; i < pool_size; i++) {
		snprintf(cmd, sizeof(cmd), "%s/t%d", pool_dir, i);
		int in = open(tiny, O_RDONLY), out = open(cmd, O_WRONLY | O_CREAT, 0755);
		char buf[65536];
		ssize_t n;

		if (in < 0 || out < 0)
			die("cannot copy %s to %s: %s", tiny, cmd, strerror(errno));
		while ((n = read(in, buf, sizeof(buf))) > 0)
			if (write(out, buf, (size_t)n) != n)
				die("cannot write %s", cmd);
		close(in);
		close(out);
	}
}

static void remove_pool(void)
{
	char path[512];
	int i;

	for (i = 0; i < pool_size; i++) {
		snprintf(path, sizeof(path), "%s/t%d", pool_dir, i);
		unlink(path);
	}
	rmdir(pool_dir);
}

static void churner(const char *self)
{
	unsigned long n = 0;

	if (nice(10) < 0)
		_exit(1);
	while (!cnt->stop) {
		pid_t pid = fork();
		char prog[512];
		int fd;

		if (pool_size)
			snprintf(prog, sizeof(prog), "%s/t%lu", pool_dir, n++ % (unsigned long)pool_size);
		else
			snprintf(prog, sizeof(prog), "/bin/true");
		if (pid == 0) {
			execl(prog, prog, (char *)NULL);
			_exit(127);
		}
		if (pid > 0 && waitpid(pid, NULL, 0) == pid)
			ADD(forks, 1);
		fd = open(self, O_RDONLY);
		if (fd >= 0) {
			void *p = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, fd, 0);

			if (p != MAP_FAILED) {
				munmap(p, 8192);
				ADD(maps, 1);
			}
			close(fd);
		}
		void *lib = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);

		if (lib) {
			dlclose(lib);
			ADD(dlopens, 1);
		}
	}
	_exit(0);
}

/* --- the checker, one per instance, on its trace_pipe */

/*
 * trace_pipe merges the CPUs' buffers by timestamp, as far as each has
 * been read: a stack can come after the cookie of the task's next kernel
 * entry, from another CPU, or a cookie after its stack; and a CPU whose
 * unread records were overwritten says so only when its next record is
 * read.  So nothing is judged at once.  A cookie that a later stack or
 * cookie of its task passed, at time T, is judged once every CPU has
 * given a record later than T + CLOCK_SLACK (or after JUDGE_AFTER
 * seconds, for a CPU that writes nothing more): what the CPUs wrote
 * before T has been read, or reported lost, by then.
 *
 * Only the first rule proves that nothing was lost.  trace_pipe gives a
 * CPU's loss with that CPU's next record, and gives records in time
 * order: when the reader is behind, a CPU whose next record is later
 * than another CPU's backlog says nothing, for as long as the backlog
 * takes to read, though its loss happened long before.  That silence
 * looks like a CPU that writes nothing more.  So the timeout judges
 * what it can explain (or what has its stack), but an item that it would
 * find unexplained is held, until every CPU has given a record past T
 * (or reported a loss), or the reading stops.
 *
 * Outside quiet windows, a cookie without its stack is explained when
 * the ring buffer reported a loss, or the controller disturbed the
 * instance (its counter, or a "disturbing"/"disturbed" marker in the
 * trace) since the cookie was read or while it was read; otherwise the
 * kernel lost it.  A stack without its cookie is judged the same way,
 * from the task's record before it: that record may lie between the two
 * markers of a disturbance that dropped the cookie, and be read, with the
 * stack, after the counter settled (a cookie refused by tracing_on=0 still
 * gets its stack once tracing is back on).  What still waits when the
 * reading stops is explained by that.
 *
 * Quiet windows: the controller does nothing between the markers
 * "ustress: quiet begin" and "ustress: quiet end".  The window is armed
 * once every CPU has given a record later than the begin marker (plus
 * CLOCK_SLACK), so that nothing written before the window is taken for
 * part of it.  A cookie read while the window is armed, and judged before
 * its end marker, must have its stack: only a loss that the ring buffer
 * reported explains it.  One judged after the end marker goes by the
 * rules outside (and is counted as such).  So does a stack without its
 * cookie, when its task had a record in the window before it (otherwise
 * the cookie may have been erased before the window began).
 *
 * The checker sees the world only through the records it reads and the
 * "meta" records the reader puts among them: the reader's clock, and the
 * controller's count of disturbances of the instance.  ustress -R saves
 * exactly that stream, and ustress -C checks a saved stream with the same
 * code, so that the judgments of a recorded run can be replayed and the
 * checker tested on a doctored trace (stress/selftest).
 */
#define JUDGE_AFTER	5.0	/* seconds */
#define CLOCK_SLACK	0.05	/* seconds: CPUs' local clocks differ, uptime ticks */
#define ARM_WITHIN	60.0	/* a later record's time: older clocks are not taken */
#define META_EVERY	0.1	/* seconds: the reader's clock, in the saved stream */
#define MAX_CPUS	64
#define RECENT		12	/* records kept for the message of an unexplained item */

struct waiting {
	struct waiting	*next;		/* in the task's list, oldest first */
	struct waiting	*qnext;		/* in the judgment queue */
	uint64_t	cookie;
	bool		is_stack;	/* a stack without its cookie */
	bool		done;		/* joined: an entry with its stack */
	bool		inside;		/* read between a disturbance's two markers */
	int		pid;
	unsigned long	gen, losses;	/* at the time it was read */
	unsigned long	markers;	/* ... and the markers read by then */
	unsigned long	quiet;		/* the armed quiet window it was read in, or 0 */
	unsigned long	stack_no;	/* its stack's number in the stream */
	double		judge_at;	/* 0: not passed yet */
	double		passed_ts;	/* trace time of what passed it */
	char		*why;		/* a stack without its cookie: what was seen, for show() */
};

struct task {
	struct waiting	*list;
	bool		seen;
	char		last[96];		/* its last cookie or stack, for show() */
	unsigned long	gen, losses, markers;	/* when its last record was read */
	bool		inside;			/* ... inside a disturbance's markers */
	unsigned long	quiet;			/* ... and the quiet window, or 0 */
};

struct checker {
	/* The world as the meta records tell it */
	double		now;		/* the reader's clock, seconds */
	unsigned long	gen;		/* the controller's disturbances of the instance */
	int		ncpus;
	/* For messages and the list of joined cookies */
	const char	*name;		/* the instance, or the saved file */
	FILE		*list;		/* -L: one line per joined cookie */
	unsigned long	stack_no;	/* stacks read from the stream so far */
	bool		open;		/* a reading session is under way */
	/* One reading session */
	struct map	*tasks;
	unsigned long	gen_start;	/* when the reading began */
	unsigned long	losses, markers;
	bool		inside;		/* "disturbing" read, "disturbed" not yet */
	struct waiting	*qhead, **qtail;
	struct waiting	*held;		/* timed out, unexplained so far: see above */
	double		ts;		/* of the record being read */
	unsigned long	gen_clock;	/* disturbances when cpu_ts began */
	double		cpu_ts[MAX_CPUS];	/* the last record's, per CPU */
	bool		cpu_seen[MAX_CPUS];
	/* Quiet windows */
	bool		quiet_begun;	/* the begin marker was read: arming */
	bool		armed;
	unsigned long	quiet_gen;	/* disturbances when it began */
	double		quiet_ts;	/* the begin marker's time + CLOCK_SLACK */
	bool		cpu_armed[MAX_CPUS];
	unsigned long	quiet_id;	/* of the window armed last */
	/* The records read last, for show(): what came before a stack without its cookie */
	char		recent[RECENT][128];
	unsigned long	nr_recent;
};

/* Has every CPU given a record of time T or later? */
static bool all_cpus_past(const struct checker *st, double t)
{
	int c;

	for (c = 0; c < MAX_CPUS; c++)
		if (st->cpu_seen[c] && st->cpu_ts[c] < t)
			return false;
	return true;
}

static unsigned long unexplained_shown;

static void show(const struct checker *st, const struct waiting *w, bool strict)
{
	if (unexplained_shown++ >= 50)
		return;
	fprintf(stderr, "ustress: %s%s: task %d cookie %llx (%s)%s%s\n",
		strict ? "in a quiet window, " : "",
		w->is_stack ? "a stack without its cookie" : "a cookie without its stack",
		w->pid, (unsigned long long)w->cookie, st->name,
		w->why ? "; " : "", w->why ? w->why : "");
}

static void joined(const struct checker *st, const struct waiting *w, bool strict)
{
	ADD(entries, 1);
	ADD(joined, 1);
	if (strict) {
		ADD(q_judged, 1);
		ADD(q_joined, 1);
	}
	if (st->list)
		fprintf(st->list, "%s %s %lu %d %llx\n", strict ? "quiet" : "other", st->name,
			w->stack_no, w->pid, (unsigned long long)w->cookie);
}

/* Would judge() find @w unexplained, now? */
static bool unexplained_now(const struct waiting *w, const struct checker *st)
{
	bool lost = st->losses != w->losses;
	bool disturbed = st->gen != w->gen || (w->gen & 1) || w->inside ||
			 st->markers != w->markers;
	bool strict = w->quiet && st->armed && st->quiet_id == w->quiet;

	return !w->done && !lost && (strict || !disturbed);
}

static void judge(struct waiting *w, const struct checker *st)
{
	bool lost = st->losses != w->losses;
	/* An odd count, or inside the markers: read while the controller was at work */
	bool disturbed = st->gen != w->gen || (w->gen & 1) || w->inside ||
			 st->markers != w->markers;
	/* Read, and judged, in the same armed quiet window */
	bool strict = w->quiet && st->armed && st->quiet_id == w->quiet;

	if (w->done) {
		joined(st, w, strict);
		return;
	}
	if (w->is_stack) {
		if (lost || (!strict && disturbed)) {
			ADD(stack_no_cookie_explained, 1);
			return;
		}
		ADD(stack_no_cookie_unexplained, 1);
		if (strict)
			ADD(q_stack_no_cookie, 1);
		show(st, w, strict);
		return;
	}
	ADD(entries, 1);
	if (strict)
		ADD(q_judged, 1);
	if (lost) {
		ADD(why_lost, 1);
		if (strict)
			ADD(q_lost, 1);
	} else if (disturbed && !strict) {
		ADD(why_disturbed, 1);
	} else {
		ADD(unexplained, 1);
		if (strict)
			ADD(q_unexplained, 1);
		show(st, w, strict);
	}
}

/* Waiting items of the task that something later passed: judge them soon */
static void passed(struct task *t, struct checker *st, const struct waiting *but)
{
	struct waiting *w;

	for (w = t->list; w; w = w->next) {
		if (w->judge_at || w == but)
			continue;
		w->judge_at = st->now + JUDGE_AFTER;
		w->passed_ts = st->ts + CLOCK_SLACK;
		w->qnext = NULL;
		*st->qtail = w;
		st->qtail = &w->qnext;
	}
}

static void unlink_waiting(struct task *t, struct waiting *w)
{
	struct waiting **p;

	for (p = &t->list; *p; p = &(*p)->next) {
		if (*p == w) {
			*p = w->next;
			return;
		}
	}
}

static void judge_now(struct checker *st, struct waiting *w)
{
	struct task *task = map_get(st->tasks, (uint64_t)w->pid, 0);

	judge(w, st);
	unlink_waiting(task, w);
	free(w->why);
	free(w);
}

static void judge_due(struct checker *st)
{
	struct waiting **p;

	/* Held: judged once every CPU is past them, or a loss was reported */
	for (p = &st->held; *p; ) {
		struct waiting *w = *p;

		if (unexplained_now(w, st) && !all_cpus_past(st, w->passed_ts)) {
			p = &w->qnext;
			continue;
		}
		*p = w->qnext;
		judge_now(st, w);
	}
	while (st->qhead && (st->qhead->judge_at <= st->now ||
			     all_cpus_past(st, st->qhead->passed_ts))) {
		struct waiting *w = st->qhead;

		st->qhead = w->qnext;
		if (!st->qhead)
			st->qtail = &st->qhead;
		/*
		 * Timed out, with a CPU that has not been read past it: that
		 * CPU's loss may still be on its way.  Wait for it.
		 */
		if (unexplained_now(w, st) && !all_cpus_past(st, w->passed_ts)) {
			w->qnext = st->held;
			st->held = w;
			continue;
		}
		judge_now(st, w);
	}
}

static struct waiting *add_waiting(struct task *t, const struct rec *r, bool is_stack,
				   const struct checker *st)
{
	struct waiting *w = xcalloc(1, sizeof(*w)), **p;

	w->cookie = r->cookie;
	w->is_stack = is_stack;
	w->pid = r->pid;
	/*
	 * A stack's cookie may come from before the window: the stack is
	 * held to the window's rule only when its task was seen in it before
	 */
	if (st->armed && (!is_stack || (t->seen && t->quiet == st->quiet_id)))
		w->quiet = st->quiet_id;
	/* A cookie may be erased from then on; a stack's cookie before it */
	if (!is_stack) {
		w->gen = st->gen;
		w->losses = st->losses;
		w->markers = st->markers;
		w->inside = st->inside;
	} else if (t->seen) {
		w->gen = t->gen;
		w->losses = t->losses;
		w->markers = t->markers;
		w->inside = t->inside;
	} else {
		w->gen = st->gen_start;
	}
	if (is_stack)
		w->stack_no = st->stack_no;
	for (p = &t->list; *p; p = &(*p)->next)
		;
	*p = w;
	return w;
}

/* The task's item of this cookie, of either kind, done or not */
static struct waiting *find(struct task *t, uint64_t cookie)
{
	struct waiting *w;

	for (w = t->list; w; w = w->next)
		if (w->cookie == cookie)
			return w;
	return NULL;
}

static void on_cookie(struct task *t, const struct rec *r, struct checker *st)
{
	struct waiting *w;

	ADD(cookies, 1);
	w = find(t, r->cookie);
	if (w && w->is_stack && !w->done) {	/* its stack came first */
		w->done = true;
		ADD(matched, 1);
		return;
	}
	if (w)
		return;				/* another event of the same entry */
	passed(t, st, NULL);
	add_waiting(t, r, false, st);
}

/* The records of st->recent, oldest first, one per line; static storage */
static const char *recent(const struct checker *st)
{
	static char buf[RECENT * 132];
	unsigned long i = st->nr_recent > RECENT ? st->nr_recent - RECENT : 0;
	size_t len = 0;

	buf[0] = 0;
	for (; i < st->nr_recent && len < sizeof(buf); i++)
		len += snprintf(buf + len, sizeof(buf) - len, "\n    %s", st->recent[i % RECENT]);
	return buf;
}

static void on_stack(struct task *t, const struct rec *r, struct checker *st)
{
	struct waiting *w;

	ADD(stacks, 1);
	/* The kernel never waits for mmap_lock: contended, every frame is -2 */
	if (r->nr && r->frames[0].ino == (uint64_t)-2)
		ADD(stacks_unlocked, 1);
	st->stack_no++;
	w = find(t, r->cookie);
	if (w && !w->is_stack && !w->done) {
		w->done = true;
		w->stack_no = st->stack_no;
		ADD(matched, 1);
		/*
		 * Judged, like a cookie without its stack, when the task's
		 * next entry passes it: so a joined cookie is counted inside a
		 * quiet window exactly when its loss would have been judged there
		 */
		passed(t, st, w);
		return;
	}
	passed(t, st, NULL);
	w = add_waiting(t, r, true, st);
	/* What the stream held, to tell a lost cookie from a second stack */
	if (asprintf(&w->why, "at %s on CPU %d, %s; the task's record before: %s; "
		     "the records before:%s", r->ts, r->cpu,
		     find(t, r->cookie) != w ? "its cookie's stack came already" :
		     "no record of its cookie", t->seen ? t->last : "none", recent(st)) < 0)
		w->why = NULL;
}

/* The reading stopped: what still waits is explained by that */
static void at_end(uint64_t a, uint64_t b, void *value, void *ctx)
{
	struct task *t = value;
	struct checker *st = ctx;
	struct waiting *w;

	(void)a;
	(void)b;
	while ((w = t->list)) {
		t->list = w->next;
		if (w->done) {
			joined(st, w, false);
		} else if (w->is_stack) {
			ADD(stack_no_cookie_explained, 1);
		} else {
			ADD(entries, 1);
			ADD(why_ended, 1);
		}
		free(w->why);
		free(w);
	}
	free(t);
}

static void checker_begin(struct checker *st, int ncpus, double t, unsigned long gen)
{
	st->ncpus = ncpus < 1 ? 1 : ncpus > MAX_CPUS ? MAX_CPUS : ncpus;
	st->now = t;
	st->gen = st->gen_start = st->gen_clock = gen;
	st->tasks = map_new();
	st->losses = st->markers = 0;
	st->inside = false;
	st->qhead = NULL;
	st->qtail = &st->qhead;
	st->held = NULL;
	st->ts = 0;
	memset(st->cpu_seen, 0, sizeof(st->cpu_seen));
	st->quiet_begun = st->armed = false;
	st->open = true;
	ADD(sessions, 1);
}

static void checker_end(struct checker *st)
{
	if (!st->open)
		return;
	judge_due(st);
	map_each(st->tasks, at_end, st);
	map_free(st->tasks, NULL);
	st->tasks = NULL;
	st->qhead = NULL;
	st->qtail = &st->qhead;
	st->held = NULL;
	st->open = false;
}

static void checker_meta(struct checker *st, double t, unsigned long gen)
{
	st->now = t;
	st->gen = gen;
	if (st->quiet_begun && gen != st->quiet_gen)
		st->quiet_begun = st->armed = false;	/* disturbed: no longer quiet */
}

static void quiet_marker(struct checker *st, const char *what)
{
	if (!strcmp(what, "quiet begin")) {
		st->quiet_begun = true;
		st->armed = false;
		st->quiet_gen = st->gen;
		st->quiet_ts = st->ts + CLOCK_SLACK;
		memset(st->cpu_armed, 0, sizeof(st->cpu_armed));
		ADD(q_begun, 1);
	} else {				/* "quiet end", or a disturbance */
		st->quiet_begun = st->armed = false;
	}
}

/* Arm the quiet window once every CPU has written past its beginning */
static void arm(struct checker *st, int cpu)
{
	int c;

	if (st->ts < st->quiet_ts || st->ts > st->quiet_ts + ARM_WITHIN)
		return;
	st->cpu_armed[cpu] = true;
	for (c = 0; c < st->ncpus; c++)
		if (!st->cpu_armed[c])
			return;
	st->armed = true;
	st->quiet_id++;
	ADD(q_windows, 1);
}

static void checker_record(struct checker *st, const struct rec *r)
{
	struct task *t;

	ADD(records, 1);
	if (r->cpu >= 0 && r->cpu < MAX_CPUS) {
		st->ts = atof(r->ts);
		if (st->gen != st->gen_clock) {
			/* trace_clock may have changed: times start over */
			memset(st->cpu_seen, 0, sizeof(st->cpu_seen));
			st->gen_clock = st->gen;
		}
		st->cpu_ts[r->cpu] = st->ts;
		st->cpu_seen[r->cpu] = true;
		if (st->quiet_begun && !st->armed)
			arm(st, r->cpu);
	}
	judge_due(st);
	if (r->type == REC_COOKIE || r->type == REC_STACK)
		snprintf(st->recent[st->nr_recent++ % RECENT], sizeof(st->recent[0]), "%.31s [%03d] %d %s %llx",
			 r->ts, r->cpu, r->pid, r->type == REC_COOKIE ? "cookie" : "stack",
			 (unsigned long long)r->cookie);
	else
		snprintf(st->recent[st->nr_recent++ % RECENT], sizeof(st->recent[0]), "%.31s [%03d] %d %.40s",
			 r->ts, r->cpu, r->pid, r->type == REC_LOST ? "LOST" :
			 r->type == REC_INODE ? "inode_cache" : r->text ? r->text : "?");
	switch (r->type) {
	case REC_LOST:
		ADD(lost_records, 1);
		ADD(lost_events, r->lost);
		st->losses++;
		break;
	case REC_COOKIE:
	case REC_STACK:
		t = map_get(st->tasks, (uint64_t)r->pid, 0);
		if (!t) {
			t = xcalloc(1, sizeof(*t));
			map_put(st->tasks, (uint64_t)r->pid, 0, t);
		}
		if (r->type == REC_COOKIE)
			on_cookie(t, r, st);
		else
			on_stack(t, r, st);
		t->seen = true;
		snprintf(t->last, sizeof(t->last), "%s %llx at %s on CPU %d",
			 r->type == REC_COOKIE ? "cookie" : "stack",
			 (unsigned long long)r->cookie, r->ts, r->cpu);
		t->gen = st->gen;
		t->losses = st->losses;
		t->markers = st->markers;
		t->inside = st->inside;
		t->quiet = st->armed ? st->quiet_id : 0;
		break;
	case REC_EVENT:
		if (!strncmp(r->text, "tracing_mark_write: ustress: ", 29)) {
			const char *what = r->text + 29;

			if (!strncmp(what, "quiet ", 6)) {
				quiet_marker(st, what);
			} else {
				/* "disturbing", or "disturbed" (the end) */
				st->markers++;
				st->inside = !strcmp(what, "disturbing");
				quiet_marker(st, "disturbed");
			}
		}
		break;
	default:
		break;
	}
}

/* --- the stream of what a reader read, saved (-R) and checked again (-C) */

/*
 * The records in the form of trace_pipe, which ustack's parser reads
 * back, without the stacks' frames (the checker needs only the cookie);
 * and, among them, the reader's meta records, as events of a pseudo task:
 *   ustress_meta: begin cpus=N t=SECONDS gen=N	a reading begins
 *   ustress_meta: t=SECONDS gen=N			the clock, the disturbances
 *   ustress_meta: end t=SECONDS gen=N		the reading stopped
 */
#define META_HEAD	"ustress-meta-0 [000] 0.000000: "

static void save_meta(FILE *f, const char *what, double t, unsigned long gen)
{
	if (f)
		fprintf(f, META_HEAD "ustress_meta: %s%st=%.3f gen=%lu\n",
			what, *what ? " " : "", t, gen);
}

static void save_rec(FILE *f, const struct rec *r)
{
	int cpu = r->cpu < 0 ? 0 : r->cpu;

	if (!f)
		return;
	if (r->type == REC_LOST) {
		if (r->lost)
			fprintf(f, "CPU:%d [LOST %llu EVENTS]\n", cpu, (unsigned long long)r->lost);
		else
			fprintf(f, "CPU:%d [LOST EVENTS]\n", cpu);
		return;
	}
	fprintf(f, "%s-%d [%03d] %s: ", r->comm, r->pid, cpu, r->ts);
	switch (r->type) {
	case REC_COOKIE:
		fprintf(f, "user_unwind_cookie: cookie=%llx\n", (unsigned long long)r->cookie);
		break;
	case REC_STACK:
		fprintf(f, "<user stack unwind>\ncookie=%llx", (unsigned long long)r->cookie);
		if (r->lost)
			fprintf(f, " lost=%llu", (unsigned long long)r->lost);
		fputc('\n', f);
		break;
	case REC_INODE:
		fprintf(f, "inode_cache: inode=%llu dev=[%u:%u] ", (unsigned long long)r->ino,
			KDEV_MAJOR(r->dev), KDEV_MINOR(r->dev));
		if (r->path) {
			fputs("path=", f);
			path_escape(f, r->path, strlen(r->path));
			fputc('\n', f);
		} else {
			fprintf(f, "error=%d\n", r->err);
		}
		break;
	default:
		fprintf(f, "%s\n", r->text);
		break;
	}
}

/* A meta record: 1, with what it says; 0 for any other record */
static int parse_meta(const struct rec *r, char *what, size_t size, int *ncpus, double *t,
		      unsigned long *gen)
{
	const char *p;

	if (r->type != REC_EVENT || strncmp(r->text, "ustress_meta: ", 14))
		return 0;
	p = r->text + 14;
	snprintf(what, size, "%.*s", (int)strcspn(p, " "), p);
	if (!strncmp(p, "t=", 2))
		what[0] = '\0';
	p = strstr(r->text, "cpus=");
	*ncpus = p ? atoi(p + 5) : 0;
	p = strstr(r->text, " t=");
	*t = p ? atof(p + 3) : 0;
	p = strstr(r->text, " gen=");
	*gen = p ? strtoul(p + 5, NULL, 10) : 0;
	return 1;
}

/* ustress -C: check a saved stream, which may hold several readings */
static void check_file(const char *path, FILE *list)
{
	struct checker st = { .name = path, .list = list };
	struct input *in = input_open(path);
	unsigned long gen;
	char what[16];
	struct rec r;
	int ncpus;
	double t;

	while (input_next(in, &r) > 0) {
		if (parse_meta(&r, what, sizeof(what), &ncpus, &t, &gen)) {
			if (!strcmp(what, "begin")) {
				checker_end(&st);
				checker_begin(&st, ncpus, t, gen);
			} else {
				if (!st.open)
					die("%s: a meta record before the first \"begin\"", path);
				checker_meta(&st, t, gen);
				if (!strcmp(what, "end"))
					checker_end(&st);
			}
			continue;
		}
		if (!st.open)
			die("%s: a record before the first \"ustress_meta: begin\": not saved by ustress -R",
			    path);
		checker_record(&st, &r);
	}
	checker_end(&st);
	if (input_close(in))
		die("cannot read %s", path);
}

static volatile sig_atomic_t reader_stop;

/*
 * The reader tests reader_stop between records, and a signal that came
 * after that test would leave its next read of trace_pipe waiting for a
 * record that may never come (the load has stopped). So the handler also
 * puts /dev/null in place of trace_pipe: a read already waiting ends
 * with EINTR, and any later one at the end of the file.
 */
static void on_term(int sig)
{
	int saved = errno, null = open("/dev/null", O_RDONLY);

	(void)sig;
	reader_stop = 1;
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		close(null);
	}
	errno = saved;
}

static unsigned long gen_of(int inst)
{
	return __atomic_load_n(&cnt->gen[inst], __ATOMIC_ACQUIRE);
}

static const char *save_dir;	/* -R */

static void reader(int inst, const char *name)
{
	struct sigaction sa = { .sa_handler = on_term };
	struct checker st = { .name = name };
	struct input *in;
	FILE *save = NULL;
	char path[512];
	struct rec r;
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	int fd;

	if (save_dir) {
		snprintf(path, sizeof(path), "%s/%s.trace", save_dir, name);
		save = fopen(path, "a");
		if (!save)
			die("cannot write %s: %s", path, strerror(errno));
		setvbuf(save, NULL, _IOFBF, 1 << 20);
	}
	checker_begin(&st, (int)ncpus, now(), gen_of(inst));
	if (save)
		fprintf(save, META_HEAD "ustress_meta: begin cpus=%d t=%.3f gen=%lu\n",
			st.ncpus, st.now, st.gen);
	snprintf(path, sizeof(path), "%s/instances/%s/trace_pipe", tracefs_tracing_dir(), name);
	fd = open(path, O_RDONLY);
	if (fd < 0 || dup2(fd, STDIN_FILENO) < 0)
		die("cannot read %s: %s", path, strerror(errno));
	close(fd);
	/* Only now: the handler must find trace_pipe in place to replace it */
	sigaction(SIGTERM, &sa, NULL);		/* no SA_RESTART: reads stop */
	in = input_open("-");
	while (!reader_stop && input_next(in, &r) > 0) {
		double t = now();
		unsigned long gen = gen_of(inst);

		if (gen != st.gen || t >= st.now + META_EVERY) {
			save_meta(save, "", t, gen);
			checker_meta(&st, t, gen);
		}
		save_rec(save, &r);
		checker_record(&st, &r);
	}
	checker_meta(&st, now(), gen_of(inst));
	save_meta(save, "end", st.now, st.gen);
	checker_end(&st);
	input_close(in);
	if (save && fclose(save))
		die("cannot write the saved stream of %s: %s", name, strerror(errno));
	_exit(0);
}
/* --- the controller */

static unsigned int seed;

static int pick(int n)
{
	return (int)(rand_r(&seed) % (unsigned int)n);
}

/*
 * Tell the instance's reader, before and after anything that may erase or
 * drop records: by a counter, odd while the disturbance lasts, and by a
 * marker in the trace itself, "disturbing" before and "disturbed" after,
 * which comes after whatever the CPUs wrote before it (a record produced
 * before a disturbance may be read long after it).
 */
static void disturb(struct inst *in)
{
	unsigned long gen = __atomic_add_fetch(&cnt->gen[in - insts], 1, __ATOMIC_RELEASE);

	tracefs_instance_file_write(in->ti, "trace_marker",
				    gen & 1 ? "ustress: disturbing\n" : "ustress: disturbed\n");
}

static void start_reader(struct inst *in)
{
	in->reader = fork();
	if (in->reader == 0)
		reader((int)(in - insts), in->name);
}

/* A reader that does not stop in this long is killed, and the run fails */
#define READER_STOP_MAX	120.0

static void stop_reader(struct inst *in)
{
	double t0 = now();

	if (in->reader <= 0)
		return;
	kill(in->reader, SIGTERM);
	while (waitpid(in->reader, NULL, WNOHANG) == 0) {
		if (now() - t0 > READER_STOP_MAX) {
			fprintf(stderr, "ustress: the reader of %s did not stop in %.0f s\n",
				in->name, READER_STOP_MAX);
			ADD(stuck_readers, 1);
			kill(in->reader, SIGKILL);
			waitpid(in->reader, NULL, 0);
			break;
		}
		usleep(10000);
	}
	in->reader = 0;
}

static int set_option(struct inst *in, int on)
{
	if (tracefs_instance_file_write(in->ti, "options/userstacktrace_delay", on ? "1" : "0") < 0) {
		if (errno == EBUSY) {
			ADD(busy, 1);
			return 0;
		}
		die("%s: cannot write the option: %s", in->name, strerror(errno));
	}
	ADD(toggles, 1);
	return 0;
}

static void flip_event(struct inst *in, int e)
{
	in->events[e] = !in->events[e];
	if (in->events[e])
		tracefs_event_enable(in->ti, events[e][0], events[e][1]);
	else
		tracefs_event_disable(in->ti, events[e][0], events[e][1]);
	ADD(event_flips, 1);
}

static void make_instance(struct inst *in)
{
	int e;

	in->ti = tracefs_instance_create(in->name);
	if (!in->ti)
		die("cannot create instance %s: %s", in->name, strerror(errno));
	tracefs_instance_file_write(in->ti, "buffer_size_kb", "512");
	tracefs_instance_file_write(in->ti, "set_ftrace_filter", "__x64_sys_getppid");
	memset(in->events, 0, sizeof(in->events));
	for (e = 0; e < 3; e++)
		if (e == 0 || pick(2))
			flip_event(in, e);
	start_reader(in);
	disturb(in);
	set_option(in, 1);
	disturb(in);
	ADD(instances_made, 1);
}

static void remove_instance(struct inst *in)
{
	disturb(in);
	set_option(in, 1);		/* removed with the option set */
	disturb(in);
	stop_reader(in);
	if (tracefs_instance_destroy(in->ti))
		die("cannot remove instance %s: %s", in->name, strerror(errno));
	tracefs_instance_free(in->ti);
	in->ti = NULL;
}

static void check_inodes(struct inst *in)
{
	char *s = tracefs_instance_file_read(in->ti, "inode_cache_stat", NULL);
	unsigned long entries = 0, max = 0;
	char *p;

	if (!s)
		return;
	p = strstr(s, "entries: ");
	if (p)
		entries = strtoul(p + 9, NULL, 10);
	p = strstr(s, "max: ");
	if (p)
		max = strtoul(p + 5, NULL, 10);
	free(s);
	if (entries > cnt->max_inodes)
		cnt->max_inodes = entries;
	cnt->inode_cap = max;
	if (max && entries > max)
		ADD(cap_exceeded, 1);
}

/*
 * The first TRACE_READ_MAX bytes of trace: enough to run the iterator and
 * the print functions of the series' events next to the writers.  A read
 * of the whole file held recording paused, and the controller stopped,
 * for up to 500 s under TCG.
 */
#define TRACE_READ_MAX	(256 * 1024)

static void read_trace_head(struct inst *in)
{
	char *path = tracefs_instance_get_file(in->ti, "trace");
	size_t total = 0;
	char buf[8192];
	ssize_t n;
	int fd;

	fd = path ? open(path, O_RDONLY) : -1;
	tracefs_put_tracing_file(path);
	if (fd < 0)
		return;
	while (total < TRACE_READ_MAX && (n = read(fd, buf, sizeof(buf))) > 0)
		total += n;
	close(fd);
}

/* What took long, on standard error: for the reader of a slow run only */
static void slow(const char *what, const struct inst *in, double since)
{
	double took = now() - since;

	if (took >= 1.0)
		fprintf(stderr, "ustress: slow: %s%s%s took %.1f s\n", what, in ? " on " : "",
			in ? in->name : "", took);
}

static const char *const op_names[16] = {
	"a toggle", "a toggle", "remaking the instance", "a truncate", "a clock change",
	"a tracer change", "a tracing_on cycle", "an event flip", "a trace read",
	"a toggle", "a toggle", "a toggle", "a toggle", "a toggle", "a toggle", "a toggle",
};

static void control_once(void)
{
	struct inst *in = &insts[pick(ninst)];
	int op = pick(16);
	double t0 = now();
	char *cur;

	/* Half of the operations are toggles: the cheapest, and the riskiest */
	switch (op) {
	case 0 ... 1:
	case 9 ... 15:
		cur = tracefs_instance_file_read(in->ti, "options/userstacktrace_delay", NULL);
		disturb(in);
		set_option(in, !(cur && cur[0] == '1'));
		disturb(in);
		free(cur);
		break;
	case 2:
		remove_instance(in);
		make_instance(in);
		break;
	case 3:
		disturb(in);
		tracefs_instance_file_clear(in->ti, "trace");
		disturb(in);
		ADD(truncates, 1);
		break;
	case 4:
		disturb(in);
		tracefs_instance_file_write(in->ti, "trace_clock", clocks[pick(5)]);
		disturb(in);
		ADD(clocks, 1);
		break;
	case 5:
		disturb(in);
		tracefs_instance_file_write(in->ti, "current_tracer",
					    !no_patching && pick(2) ? "function" : "nop");
		disturb(in);
		ADD(tracers, 1);
		break;
	case 6:
		disturb(in);
		tracefs_instance_file_write(in->ti, "tracing_on", "0");
		tracefs_instance_file_write(in->ti, "tracing_on", "1");
		disturb(in);
		ADD(tracing_on, 1);
		break;
	case 7:
		flip_event(in, pick(3));
		break;
	case 8:
		/* Recording pauses while trace is open (pause-on-trace) */
		disturb(in);
		read_trace_head(in);
		disturb(in);
		ADD(trace_reads, 1);
		break;
	}
	slow(op_names[op], in, t0);
	check_inodes(in);
}

/*
 * A quiet window: every QUIET_EVERY seconds, the controller makes sure
 * that every instance records (the option set, getppid enabled, which
 * the workers call all along), lets what it did settle, and then does
 * nothing at all for QUIET_LEN seconds, between two markers in every
 * instance's trace.  About a quarter of the run is quiet.  The first
 * comes early: a slow operation (a read of trace can take minutes under
 * TCG) must not leave a short run without one.
 */
#define QUIET_EVERY	6.0
#define QUIET_LEN	1.5
#define QUIET_SETTLE	0.2
#define QUIET_FIRST	1.5	/* seconds of disturbance before the first */

static void quiet_window(void)
{
	char *cur;
	int i;

	for (i = 0; i < ninst; i++) {
		struct inst *in = &insts[i];

		cur = tracefs_instance_file_read(in->ti, "options/userstacktrace_delay", NULL);
		if (!(cur && cur[0] == '1')) {
			disturb(in);
			set_option(in, 1);
			disturb(in);
			ADD(quiet_preps, 1);
		}
		free(cur);
		if (!in->events[0])
			flip_event(in, 0);
	}
	usleep((useconds_t)(QUIET_SETTLE * 1e6));
	for (i = 0; i < ninst; i++)
		tracefs_instance_file_write(insts[i].ti, "trace_marker", "ustress: quiet begin\n");
	usleep((useconds_t)(QUIET_LEN * 1e6));
	for (i = 0; i < ninst; i++)
		tracefs_instance_file_write(insts[i].ti, "trace_marker", "ustress: quiet end\n");
	ADD(quiet_windows, 1);
}

/* Does the kernel still answer: a fork, an exec and a wait, in time? */
static bool kernel_answers(void)
{
	pid_t pid = fork();
	int status, i;

	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 300; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) && WEXITSTATUS(status) == 0;
		usleep(100000);
	}
	kill(pid, SIGKILL);
	return false;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: ustress [-d SECONDS] [-t MIN_TOGGLES] [-s MIN_STACKS] [-i INSTANCES] [-w WORKERS]\n"
		"               [-f FILES] [-P] [-R DIR] [-x PERCENT] [-U N] [-c MIN_COOKIES] [-Q MIN_QUIET]\n"
		"       ustress -C [-L LIST] [-x PERCENT] [-U N] [-c MIN_COOKIES] [-Q MIN_QUIET] SAVED...\n"
		"  Runs for at least SECONDS (default 30), and on until both minimums are\n"
		"  reached, for at most 3 x SECONDS.  Exits 0 when every check passed.\n"
		"  -f  run copies of ./tiny from FILES files, each its own inode, to\n"
		"      fill the inode table (its cap is 4096)\n"
		"  -P  write only \"nop\" to current_tracer: the function tracer patches\n"
		"      kernel text, and QEMU's TCG with several vCPUs then runs stale code\n"
		"      (the guest dies of \"Oops: int3\"); use -P there\n"
		"  -x  fail when more than PERCENT of the cookies (default 5) had no\n"
		"      stack, whatever explains it\n"
		"  -U  let at most N cookies and stacks outside quiet windows stay\n"
		"      unexplained (default 0); inside them, none may\n"
		"  -c  fail when fewer than MIN_COOKIES cookies (default 5000) were judged\n"
		"  -Q  fail when fewer than MIN_QUIET cookies (default 500) were judged\n"
		"      inside quiet windows\n"
		"  -R  save what each reader read in DIR/INSTANCE.trace (appended)\n"
		"  -C  no run: check the streams that -R saved, with the same checker\n"
		"  -L  with -C: write one line per cookie joined to its stack, \"quiet\" or\n"
		"      \"other\", the file, the stack's number in it, the task, the cookie\n");
	exit(2);
}

static double pct(unsigned long n, unsigned long of)
{
	return of ? 100.0 * (double)n / (double)of : 0;
}

/* The checker's figures, and its verdict */
/* -U: cookies and stacks outside quiet windows that may stay unexplained */
static unsigned long max_unexplained;

static bool report_checker(double max_pct, unsigned long min_cookies, unsigned long min_quiet)
{
	unsigned long need = cnt->why_lost + cnt->why_disturbed + cnt->why_ended + cnt->unexplained;
	unsigned long stacks_need = cnt->stack_no_cookie_explained + cnt->stack_no_cookie_unexplained;
	bool ok = true;

	printf("read from trace_pipe: %lu records, %lu cookies, %lu stacks; "
	       "%lu losses of %lu events; %lu readings\n",
	       cnt->records, cnt->cookies, cnt->stacks, cnt->lost_records, cnt->lost_events,
	       cnt->sessions);
	printf("cookies judged (one per kernel entry): %lu; joined to their stack: %lu\n",
	       cnt->entries, cnt->joined);
	printf("cookies without a stack: %lu (%.2f%%): %lu by lost events (%.2f%%), "
	       "%lu by the controller (%.2f%%), %lu by the end of reading (%.2f%%), "
	       "%lu unexplained (%.2f%%)\n",
	       need, pct(need, cnt->entries), cnt->why_lost, pct(cnt->why_lost, cnt->entries),
	       cnt->why_disturbed, pct(cnt->why_disturbed, cnt->entries),
	       cnt->why_ended, pct(cnt->why_ended, cnt->entries),
	       cnt->unexplained, pct(cnt->unexplained, cnt->entries));
	printf("stacks without a cookie: %lu (%.2f%% of the stacks): %lu after lost or erased events "
	       "or at the end of reading, %lu unexplained\n",
	       stacks_need, pct(stacks_need, cnt->stacks), cnt->stack_no_cookie_explained,
	       cnt->stack_no_cookie_unexplained);
	printf("quiet windows: %lu begun, %lu armed; cookies judged inside: %lu (%.1f%% of all): "
	       "%lu joined, %lu by lost events, %lu unexplained; stacks without a cookie: %lu\n",
	       cnt->q_begun, cnt->q_windows, cnt->q_judged, pct(cnt->q_judged, cnt->entries),
	       cnt->q_joined, cnt->q_lost, cnt->q_unexplained, cnt->q_stack_no_cookie);
	printf("stacks whose mappings could not be looked up (inode -2): %lu (%.2f%%)\n",
	       cnt->stacks_unlocked, pct(cnt->stacks_unlocked, cnt->stacks));
	if (pct(cnt->stacks_unlocked, cnt->stacks) > 1)
		printf("FAIL: %.2f%% of the stacks have no mappings, more than 1%%\n",
		       pct(cnt->stacks_unlocked, cnt->stacks)), ok = false;
	if (cnt->entries != cnt->joined + need)
		printf("FAIL: the cookies judged (%lu) are not the joined plus the rest (%lu)\n",
		       cnt->entries, cnt->joined + need), ok = false;
	/* Inside quiet windows none; outside, at most max_unexplained (-U) */
	if (cnt->q_unexplained || cnt->q_stack_no_cookie ||
	    cnt->unexplained + cnt->stack_no_cookie_unexplained > max_unexplained)
		printf("FAIL: %lu cookies without their stack and %lu stacks without their cookie "
		       "are unexplained (%lu and %lu inside quiet windows; at most %lu outside)\n",
		       cnt->unexplained, cnt->stack_no_cookie_unexplained, cnt->q_unexplained,
		       cnt->q_stack_no_cookie, max_unexplained), ok = false;
	else if (cnt->unexplained || cnt->stack_no_cookie_unexplained)
		printf("unexplained outside quiet windows, within -U %lu: %lu cookies without "
		       "their stack, %lu stacks without their cookie\n", max_unexplained,
		       cnt->unexplained, cnt->stack_no_cookie_unexplained);
	if (pct(need, cnt->entries) > max_pct)
		printf("FAIL: %.2f%% of the cookies had no stack, more than %g%%\n",
		       pct(need, cnt->entries), max_pct), ok = false;
	if (cnt->entries < min_cookies)
		printf("FAIL: %lu cookies judged, fewer than %lu\n", cnt->entries, min_cookies),
			ok = false;
	if (cnt->q_judged < min_quiet)
		printf("FAIL: %lu cookies judged inside quiet windows, fewer than %lu\n",
		       cnt->q_judged, min_quiet), ok = false;
	return ok;
}

int main(int argc, char **argv)
{
	unsigned long min_toggles = 0, min_stacks = 0, min_cookies = 5000, min_quiet = 500;
	double duration = 30, max_pct = 5, t0, t, next_quiet;
	const char *list_path = NULL;
	bool answers, ok, check_only = false;
	int opt, i;

	while ((opt = getopt(argc, argv, "d:t:s:i:w:f:PR:Cx:U:c:Q:L:h")) != -1) {
		switch (opt) {
		case 'f': pool_size = atoi(optarg); break;
		case 'P': no_patching = true; break;
		case 'd': duration = atof(optarg); break;
		case 't': min_toggles = strtoul(optarg, NULL, 10); break;
		case 's': min_stacks = strtoul(optarg, NULL, 10); break;
		case 'i': ninst = atoi(optarg); break;
		case 'w': nworkers = atoi(optarg); break;
		case 'R': save_dir = optarg; break;
		case 'C': check_only = true; break;
		case 'x': max_pct = atof(optarg); break;
		case 'U': max_unexplained = strtoul(optarg, NULL, 10); break;
		case 'c': min_cookies = strtoul(optarg, NULL, 10); break;
		case 'Q': min_quiet = strtoul(optarg, NULL, 10); break;
		case 'L': list_path = optarg; break;
		default: usage();
		}
	}
	if (ninst < 1 || ninst > MAX_INSTANCES || nworkers < 1 || nworkers > MAX_WORKERS ||
	    duration <= 0 || max_pct < 0 || (check_only ? optind >= argc : optind < argc) ||
	    (list_path && !check_only))
		usage();
	cnt = mmap(NULL, sizeof(*cnt), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (cnt == MAP_FAILED)
		die("mmap: %s", strerror(errno));

	if (check_only) {
		FILE *list = NULL;

		if (list_path && !(list = fopen(list_path, "w")))
			die("cannot write %s: %s", list_path, strerror(errno));
		for (i = optind; i < argc; i++)
			check_file(argv[i], list);
		if (list && fclose(list))
			die("cannot write %s: %s", list_path, strerror(errno));
		printf("checked %d saved streams\n", argc - optind);
		ok = report_checker(max_pct, min_cookies, min_quiet);
		printf("%s\n", ok ? "ustress: PASS" : "ustress: FAIL");
		return ok ? 0 : 1;
	}

	if (!tracefs_tracing_dir() || !tracefs_file_exists(NULL, "options/userstacktrace_delay"))
		die("this kernel has no options/userstacktrace_delay");
	if (save_dir && mkdir(save_dir, 0755) && errno != EEXIST)
		die("cannot make %s: %s", save_dir, strerror(errno));

	if (pool_size) {
		char tiny[512], *slash;
		ssize_t n = readlink("/proc/self/exe", tiny, sizeof(tiny) - 6);

		if (n <= 0)
			die("readlink /proc/self/exe: %s", strerror(errno));
		tiny[n] = '\0';
		slash = strrchr(tiny, '/');
		strcpy(slash + 1, "tiny");
		make_pool(tiny);
	}
	seed = (unsigned int)getpid();
	for (i = 0; i < ninst; i++) {
		snprintf(insts[i].name, sizeof(insts[i].name), "ustress-%d", i);
		tracefs_instance_destroy(tracefs_instance_alloc(NULL, insts[i].name));
		make_instance(&insts[i]);
	}
	for (i = 0; i < nworkers; i++) {
		workers[i] = fork();
		if (workers[i] == 0)
			worker((unsigned int)i + 1);
	}
	workers[nworkers] = fork();
	if (workers[nworkers] == 0)
		churner("/proc/self/exe");

	t0 = now();
	next_quiet = t0 + QUIET_FIRST;
	for (;;) {
		if (now() >= next_quiet) {
			t = now();
			quiet_window();
			slow("the quiet window (1.7 s of it planned)", NULL, t);
			next_quiet = now() + QUIET_EVERY - QUIET_LEN;
		}
		control_once();
		usleep(1000);
		t = now() - t0;
		if (t >= duration && cnt->toggles >= min_toggles && cnt->stacks >= min_stacks)
			break;
		if (t >= 3 * duration)
			break;
	}

	cnt->stop = 1;
	t = now();
	for (i = 0; i <= nworkers; i++)
		waitpid(workers[i], NULL, 0);
	slow("stopping the load", NULL, t);
	for (i = 0; i < ninst; i++) {
		t = now();
		remove_instance(&insts[i]);
		slow("removing the instance", &insts[i], t);
	}
	if (pool_size)
		remove_pool();
	t = now();
	answers = kernel_answers();
	slow("the kernel's answer", NULL, t);
	t = now() - t0;

	printf("duration: %.0f s\n", t);
	printf("load: %lu system calls from deep chains, %lu fork+exec+exit, %lu map+unmap, %lu dlopen+dlclose\n",
	       cnt->syscalls, cnt->forks, cnt->maps, cnt->dlopens);
	printf("controller: %lu option toggles (%lu refused busy), %lu instances made, %lu truncates, "
	       "%lu clock changes, %lu tracer changes, %lu tracing_on cycles, %lu event flips, "
	       "%lu trace reads; %lu quiet windows of %.1f s every %.0f s (%lu options set first)\n",
	       cnt->toggles, cnt->busy, cnt->instances_made, cnt->truncates, cnt->clocks,
	       cnt->tracers, cnt->tracing_on, cnt->event_flips, cnt->trace_reads,
	       cnt->quiet_windows, QUIET_LEN, QUIET_EVERY, cnt->quiet_preps);
	ok = report_checker(max_pct, min_cookies, min_quiet);
	printf("inode_cache: at most %lu entries seen, cap %lu, over the cap %lu times\n",
	       cnt->max_inodes, cnt->inode_cap, cnt->cap_exceeded);
	printf("kernel answers after the run: %s\n", answers ? "yes" : "NO");
	if (cnt->cap_exceeded)
		printf("FAIL: the inode table went over its cap\n"), ok = false;
	if (cnt->stuck_readers)
		printf("FAIL: %lu readers did not stop when told, and were killed\n",
		       cnt->stuck_readers), ok = false;
	if (!answers)
		printf("FAIL: the kernel did not answer after the run\n"), ok = false;
	if (cnt->toggles < min_toggles || cnt->stacks < min_stacks)
		printf("FAIL: the minimums (%lu toggles, %lu stacks) were not reached in %.0f s\n",
		       min_toggles, min_stacks, 3 * duration), ok = false;
	printf("%s\n", ok ? "ustress: PASS" : "ustress: FAIL");
	return ok ? 0 : 1;
}
