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
 * and the controller checks that the inode table stays within its cap.
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
	unsigned long why_lost, why_disturbed, why_ended, unexplained;
	unsigned long stack_no_cookie_explained, stack_no_cookie_unexplained;
	unsigned long toggles, busy, instances_made, truncates, clocks, tracers;
	unsigned long tracing_on, event_flips, trace_reads, max_inodes, inode_cap;
	unsigned long cap_exceeded;
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
 * seconds, for a CPU that writes nothing more): what the
 * CPUs wrote before T has been read, or reported lost, by then.  It is
 * explained when the ring buffer reported a loss, or the controller
 * disturbed the instance (cnt->gen), since the cookie was read or while it
 * was read; otherwise the kernel lost it.  A stack without its cookie is
 * judged the same way.
 */
#define JUDGE_AFTER	5.0	/* seconds */
#define CLOCK_SLACK	0.05	/* seconds: CPUs' local clocks differ, uptime ticks */
#define MAX_CPUS	64

struct waiting {
	struct waiting	*next;		/* in the task's list, oldest first */
	struct waiting	*qnext;		/* in the judgment queue */
	uint64_t	cookie;
	bool		is_stack;	/* a stack without its cookie */
	bool		done;		/* answered: drop when judged */
	int		pid;
	unsigned long	gen, losses;	/* at the time it was read */
	unsigned long	markers;	/* ... and the markers read by then */
	double		judge_at;	/* 0: not passed yet */
	double		passed_ts;	/* trace time of what passed it */
};

struct task {
	struct waiting	*list;
	bool		seen;
	unsigned long	gen, losses, markers;	/* when its last record was read */
};

struct reader_state {
	int		inst;
	unsigned long	gen_start;	/* when the reading began */
	unsigned long	losses, markers;
	struct waiting	*qhead, **qtail;
	double		ts;		/* of the record being read */
	unsigned long	gen_clock;	/* disturbances when cpu_ts began */
	double		cpu_ts[MAX_CPUS];	/* the last record's, per CPU */
	bool		cpu_seen[MAX_CPUS];
};

/* Has every CPU given a record of time T or later? */
static bool all_cpus_past(const struct reader_state *st, double t)
{
	int c;

	for (c = 0; c < MAX_CPUS; c++)
		if (st->cpu_seen[c] && st->cpu_ts[c] < t)
			return false;
	return true;
}

static volatile sig_atomic_t reader_stop;

static void on_term(int sig)
{
	(void)sig;
	reader_stop = 1;
}

static int unexplained_shown;

static unsigned long gen_of(const struct reader_state *st)
{
	return __atomic_load_n(&cnt->gen[st->inst], __ATOMIC_ACQUIRE);
}

static void judge(struct waiting *w, const struct reader_state *st)
{
	bool lost = st->losses != w->losses;
	/* An odd count: it was read while the controller was at work */
	bool disturbed = gen_of(st) != w->gen || (w->gen & 1) ||
			 st->markers != w->markers;

	if (w->done)
		return;
	if (w->is_stack) {
		if (lost || disturbed) {
			ADD(stack_no_cookie_explained, 1);
			return;
		}
		ADD(stack_no_cookie_unexplained, 1);
	} else if (lost) {
		ADD(why_lost, 1);
		return;
	} else if (disturbed) {
		ADD(why_disturbed, 1);
		return;
	} else {
		ADD(unexplained, 1);
	}
	if (unexplained_shown++ < 20)
		fprintf(stderr, "ustress: %s: task %d cookie %llx\n",
			w->is_stack ? "a stack without its cookie" : "a cookie without its stack",
			w->pid, (unsigned long long)w->cookie);
}

/* Waiting items of the task that something later passed: judge them soon */
static void passed(struct task *t, struct waiting *upto, struct reader_state *st)
{
	struct waiting *w;

	for (w = t->list; w && w != upto; w = w->next) {
		if (w->judge_at)
			continue;
		w->judge_at = now() + JUDGE_AFTER;
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

static void judge_due(struct reader_state *st, struct map *tasks, bool all)
{
	double t = now();

	while (st->qhead && (all || st->qhead->judge_at <= t ||
			     all_cpus_past(st, st->qhead->passed_ts))) {
		struct waiting *w = st->qhead;
		struct task *task = map_get(tasks, (uint64_t)w->pid, 0);

		st->qhead = w->qnext;
		if (!st->qhead)
			st->qtail = &st->qhead;
		judge(w, st);
		unlink_waiting(task, w);
		free(w);
	}
}

static struct waiting *add_waiting(struct task *t, const struct rec *r, bool is_stack,
				   const struct reader_state *st)
{
	struct waiting *w = xcalloc(1, sizeof(*w)), **p;

	w->cookie = r->cookie;
	w->is_stack = is_stack;
	w->pid = r->pid;
	/* A cookie may be erased from then on; a stack's cookie before it */
	if (!is_stack) {
		w->gen = gen_of(st);
		w->losses = st->losses;
		w->markers = st->markers;
	} else if (t->seen) {
		w->gen = t->gen;
		w->losses = t->losses;
		w->markers = t->markers;
	} else {
		w->gen = st->gen_start;
	}
	for (p = &t->list; *p; p = &(*p)->next)
		;
	*p = w;
	return w;
}

static struct waiting *find(struct task *t, uint64_t cookie, bool is_stack)
{
	struct waiting *w;

	for (w = t->list; w; w = w->next)
		if (w->cookie == cookie && w->is_stack == is_stack && !w->done)
			return w;
	return NULL;
}

static void on_cookie(struct task *t, const struct rec *r, struct reader_state *st)
{
	struct waiting *w;

	ADD(cookies, 1);
	if (find(t, r->cookie, false))
		return;				/* another event of the same entry */
	w = find(t, r->cookie, true);
	if (w) {				/* its stack came first */
		w->done = true;
		ADD(matched, 1);
		return;
	}
	passed(t, NULL, st);
	add_waiting(t, r, false, st);
}

static void on_stack(struct task *t, const struct rec *r, struct reader_state *st)
{
	struct waiting *w;

	ADD(stacks, 1);
	w = find(t, r->cookie, false);
	if (w) {
		w->done = true;
		ADD(matched, 1);
		passed(t, NULL, st);
		return;
	}
	passed(t, NULL, st);
	add_waiting(t, r, true, st);
}

static void free_task(void *p)
{
	struct task *t = p;

	while (t->list) {
		struct waiting *w = t->list;

		t->list = w->next;
		free(w);
	}
	free(t);
}

/* The reading stopped: cookies that still wait are explained by that */
static void at_end(uint64_t a, uint64_t b, void *value, void *ctx)
{
	struct task *t = value;
	struct reader_state *st = ctx;
	struct waiting *w;

	(void)a;
	(void)b;
	for (w = t->list; w; w = w->next) {
		if (w->done || w->judge_at)
			continue;
		if (w->is_stack)
			judge(w, st);
		else
			ADD(why_ended, 1);
		w->done = true;
	}
}

static void reader(int inst, const char *name)
{
	struct sigaction sa = { .sa_handler = on_term };
	struct reader_state st = { .inst = inst };
	struct map *tasks = map_new();
	struct input *in;
	char path[256];
	struct rec r;

	st.qtail = &st.qhead;
	st.gen_start = gen_of(&st);
	sigaction(SIGTERM, &sa, NULL);		/* no SA_RESTART: reads stop */
	snprintf(path, sizeof(path), "%s/instances/%s/trace_pipe", tracefs_tracing_dir(), name);
	in = input_open(path);
	while (!reader_stop && input_next(in, &r) > 0) {
		struct task *t;

		ADD(records, 1);
		if (r.cpu >= 0 && r.cpu < MAX_CPUS) {
			st.ts = atof(r.ts);
			if (gen_of(&st) != st.gen_clock) {
				/* trace_clock may have changed: times start over */
				memset(st.cpu_seen, 0, sizeof(st.cpu_seen));
				st.gen_clock = gen_of(&st);
			}
			st.cpu_ts[r.cpu] = st.ts;
			st.cpu_seen[r.cpu] = true;
		}
		judge_due(&st, tasks, false);
		switch (r.type) {
		case REC_LOST:
			ADD(lost_records, 1);
			ADD(lost_events, r.lost);
			st.losses++;
			break;
		case REC_COOKIE:
		case REC_STACK:
			t = map_get(tasks, (uint64_t)r.pid, 0);
			if (!t) {
				t = xcalloc(1, sizeof(*t));
				map_put(tasks, (uint64_t)r.pid, 0, t);
			}
			if (r.type == REC_COOKIE)
				on_cookie(t, &r, &st);
			else
				on_stack(t, &r, &st);
			t->seen = true;
			t->gen = gen_of(&st);
			t->losses = st.losses;
			t->markers = st.markers;
			break;
		case REC_EVENT:
			if (!strncmp(r.text, "tracing_mark_write: ustress:", 28))
				st.markers++;
			break;
		default:
			break;
		}
	}
	/* What was passed gets its second; the rest ends with the reading */
	map_each(tasks, at_end, &st);
	judge_due(&st, tasks, true);
	input_close(in);
	map_free(tasks, free_task);
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
 * marker in the trace itself, which comes after whatever the CPUs wrote
 * before it (a record produced before a disturbance may be read long
 * after it).
 */
static void disturb(struct inst *in)
{
	__atomic_add_fetch(&cnt->gen[in - insts], 1, __ATOMIC_RELEASE);
	tracefs_instance_file_write(in->ti, "trace_marker", "ustress: disturbed\n");
}

static void start_reader(struct inst *in)
{
	in->reader = fork();
	if (in->reader == 0)
		reader((int)(in - insts), in->name);
}

static void stop_reader(struct inst *in)
{
	if (in->reader <= 0)
		return;
	kill(in->reader, SIGTERM);
	waitpid(in->reader, NULL, 0);
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

static void control_once(void)
{
	struct inst *in = &insts[pick(ninst)];
	char *s, *cur;

	/* Half of the operations are toggles: the cheapest, and the riskiest */
	switch (pick(16)) {
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
		s = tracefs_instance_file_read(in->ti, "trace", NULL);
		disturb(in);
		free(s);
		ADD(trace_reads, 1);
		break;
	}
	check_inodes(in);
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
		"               [-f FILES] [-P]\n"
		"  Runs for at least SECONDS (default 30), and on until both minimums are\n"
		"  reached, for at most 3 x SECONDS.  Exits 0 when every check passed.\n"
		"  -f  run copies of ./tiny from FILES files, each its own inode, to\n"
		"      fill the inode table (its cap is 4096)\n"
		"  -P  write only \"nop\" to current_tracer: the function tracer patches\n"
		"      kernel text, and QEMU's TCG with several vCPUs then runs stale code\n"
		"      (the guest dies of \"Oops: int3\"); use -P there\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long min_toggles = 0, min_stacks = 0;
	double duration = 30, t0, t;
	bool answers, ok;
	int opt, i;

	while ((opt = getopt(argc, argv, "d:t:s:i:w:f:Ph")) != -1) {
		switch (opt) {
		case 'f': pool_size = atoi(optarg); break;
		case 'P': no_patching = true; break;
		case 'd': duration = atof(optarg); break;
		case 't': min_toggles = strtoul(optarg, NULL, 10); break;
		case 's': min_stacks = strtoul(optarg, NULL, 10); break;
		case 'i': ninst = atoi(optarg); break;
		case 'w': nworkers = atoi(optarg); break;
		default: usage();
		}
	}
	if (ninst < 1 || ninst > MAX_INSTANCES || nworkers < 1 || nworkers > MAX_WORKERS ||
	    duration <= 0)
		usage();
	if (!tracefs_tracing_dir() || !tracefs_file_exists(NULL, "options/userstacktrace_delay"))
		die("this kernel has no options/userstacktrace_delay");

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
	cnt = mmap(NULL, sizeof(*cnt), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (cnt == MAP_FAILED)
		die("mmap: %s", strerror(errno));
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
	for (;;) {
		control_once();
		usleep(1000);
		t = now() - t0;
		if (t >= duration && cnt->toggles >= min_toggles && cnt->stacks >= min_stacks)
			break;
		if (t >= 3 * duration)
			break;
	}

	cnt->stop = 1;
	for (i = 0; i <= nworkers; i++)
		waitpid(workers[i], NULL, 0);
	for (i = 0; i < ninst; i++)
		remove_instance(&insts[i]);
	if (pool_size)
		remove_pool();
	answers = kernel_answers();
	t = now() - t0;

	printf("duration: %.0f s\n", t);
	printf("load: %lu system calls from deep chains, %lu fork+exec+exit, %lu map+unmap, %lu dlopen+dlclose\n",
	       cnt->syscalls, cnt->forks, cnt->maps, cnt->dlopens);
	printf("controller: %lu option toggles (%lu refused busy), %lu instances made, %lu truncates, "
	       "%lu clock changes, %lu tracer changes, %lu tracing_on cycles, %lu event flips, "
	       "%lu trace reads\n",
	       cnt->toggles, cnt->busy, cnt->instances_made, cnt->truncates, cnt->clocks,
	       cnt->tracers, cnt->tracing_on, cnt->event_flips, cnt->trace_reads);
	printf("read from trace_pipe: %lu records, %lu cookies, %lu stacks; "
	       "%lu losses of %lu events\n",
	       cnt->records, cnt->cookies, cnt->stacks, cnt->lost_records, cnt->lost_events);
	printf("stacks joined to their cookie: %lu\n", cnt->matched);
	printf("cookies without a stack, explained: %lu by lost events, %lu by the controller, "
	       "%lu by the end of reading; unexplained: %lu\n",
	       cnt->why_lost, cnt->why_disturbed, cnt->why_ended, cnt->unexplained);
	printf("stacks without a cookie: %lu after lost or erased events, unexplained: %lu\n",
	       cnt->stack_no_cookie_explained, cnt->stack_no_cookie_unexplained);
	printf("inode_cache: at most %lu entries seen, cap %lu, over the cap %lu times\n",
	       cnt->max_inodes, cnt->inode_cap, cnt->cap_exceeded);
	printf("kernel answers after the run: %s\n", answers ? "yes" : "NO");

	ok = answers && !cnt->unexplained && !cnt->stack_no_cookie_unexplained &&
	     !cnt->cap_exceeded && cnt->toggles >= min_toggles && cnt->stacks >= min_stacks &&
	     cnt->matched > 0;
	if (cnt->toggles < min_toggles || cnt->stacks < min_stacks)
		printf("the minimums (%lu toggles, %lu stacks) were not reached in %.0f s\n",
		       min_toggles, min_stacks, 3 * duration);
	printf("%s\n", ok ? "ustress: PASS" : "ustress: FAIL");
	return ok ? 0 : 1;
}
