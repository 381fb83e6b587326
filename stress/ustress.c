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
 *    events, the controller disturbed the instance (it writes a marker
 *    after each disturbing operation), or the reading stopped first;
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
	unsigned long records, cookies, stacks, matched, lost_records, lost_events, markers;
	unsigned long why_lost, why_disturbed, why_ended, unexplained;
	unsigned long stack_no_cookie_explained, stack_no_cookie_unexplained;
	unsigned long toggles, busy, instances_made, truncates, clocks, tracers;
	unsigned long tracing_on, event_flips, trace_reads, max_inodes, inode_cap;
	unsigned long cap_exceeded;
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
static char *ftrace_enabled_was;
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

static void churner(const char *self)
{
	if (nice(10) < 0)
		_exit(1);
	while (!cnt->stop) {
		pid_t pid = fork();
		int fd;

		if (pid == 0) {
			execl("/bin/true", "true", (char *)NULL);
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
 * Records of different CPUs come merged by timestamp, and clocks such as
 * "uptime" tick coarsely: a stack may come just before its cookie, or a
 * cookie just before the stack of the task's previous entry.  So a task
 * keeps its last few cookies, and a stack whose cookie is not seen yet.
 */
#define PENDING 4

struct pending {
	uint64_t	cookie;
	unsigned long	epoch, losses;	/* disturbances and losses seen then */
};

struct task {
	struct pending	pend[PENDING];	/* oldest first */
	int		npend;
	bool		has_orphan;
	uint64_t	orphan;		/* a stack without its cookie, yet */
	unsigned long	epoch_stack;	/* disturbances seen at the last stack */
	unsigned long	orphan_epoch;	/* ... at the stack before the orphan */
};

static volatile sig_atomic_t reader_stop;

static void on_term(int sig)
{
	(void)sig;
	reader_stop = 1;
}

static int unexplained_shown;

static void unexplained(const char *what, int pid, uint64_t cookie)
{
	if (unexplained_shown++ < 20)
		fprintf(stderr, "ustress: %s: task %d cookie %llx\n", what, pid,
			(unsigned long long)cookie);
}

struct reader_state {
	unsigned long	epoch, losses;
};

/* A cookie that will get no stack: why? */
static void cookie_unanswered(const struct pending *p, const struct reader_state *st, int pid)
{
	if (st->losses != p->losses)
		ADD(why_lost, 1);
	else if (st->epoch != p->epoch)
		ADD(why_disturbed, 1);
	else {
		ADD(unexplained, 1);
		unexplained("a cookie got no stack", pid, p->cookie);
	}
}

/* A stack whose cookie never came: erased or lost since the stack before? */
static void orphan_final(struct task *t, const struct reader_state *st, int pid)
{
	if (!t->has_orphan)
		return;
	t->has_orphan = false;
	if (st->epoch != t->orphan_epoch) {
		ADD(stack_no_cookie_explained, 1);
	} else {
		ADD(stack_no_cookie_unexplained, 1);
		unexplained("a stack without a cookie", pid, t->orphan);
	}
}

static void drop_pending(struct task *t, int n, const struct reader_state *st, int pid, bool answer)
{
	int i;

	for (i = 0; i < n; i++)
		if (!answer)
			cookie_unanswered(&t->pend[i], st, pid);
	memmove(t->pend, t->pend + n, (size_t)(t->npend - n) * sizeof(t->pend[0]));
	t->npend -= n;
}

static void on_cookie(struct task *t, const struct rec *r, const struct reader_state *st)
{
	int i;

	ADD(cookies, 1);
	if (t->has_orphan && t->orphan == r->cookie) {
		t->has_orphan = false;		/* its stack came first */
		ADD(matched, 1);
		return;
	}
	for (i = 0; i < t->npend; i++)
		if (t->pend[i].cookie == r->cookie)
			return;			/* another event of the same entry */
	orphan_final(t, st, r->pid);
	if (t->npend == PENDING)
		drop_pending(t, 1, st, r->pid, false);
	t->pend[t->npend].cookie = r->cookie;
	t->pend[t->npend].epoch = st->epoch;
	t->pend[t->npend].losses = st->losses;
	t->npend++;
}

static void on_stack(struct task *t, const struct rec *r, const struct reader_state *st)
{
	int i;

	ADD(stacks, 1);
	for (i = 0; i < t->npend; i++) {
		if (t->pend[i].cookie == r->cookie) {
			/* Older cookies of the task will get no stack now */
			drop_pending(t, i, st, r->pid, false);
			drop_pending(t, 1, st, r->pid, true);
			ADD(matched, 1);
			t->epoch_stack = st->epoch;
			return;
		}
	}
	orphan_final(t, st, r->pid);
	t->has_orphan = true;
	t->orphan = r->cookie;
	t->orphan_epoch = t->epoch_stack;
	t->epoch_stack = st->epoch;
}

static void at_end(uint64_t a, uint64_t b, void *value, void *ctx)
{
	struct task *t = value;
	struct reader_state *st = ctx;

	(void)b;
	/* The reading stopped: what still waits is explained by that */
	ADD(why_ended, (unsigned long)t->npend);
	orphan_final(t, st, (int)a);
}

static void reader(const char *name)
{
	struct sigaction sa = { .sa_handler = on_term };
	struct reader_state st = { 0 };
	struct map *tasks = map_new();
	struct input *in;
	char path[256];
	struct rec r;

	sigaction(SIGTERM, &sa, NULL);		/* no SA_RESTART: reads stop */
	snprintf(path, sizeof(path), "%s/instances/%s/trace_pipe", tracefs_tracing_dir(), name);
	in = input_open(path);
	while (!reader_stop && input_next(in, &r) > 0) {
		struct task *t = NULL;

		ADD(records, 1);
		if (r.type == REC_COOKIE || r.type == REC_STACK) {
			t = map_get(tasks, (uint64_t)r.pid, 0);
			if (!t) {
				t = xcalloc(1, sizeof(*t));
				map_put(tasks, (uint64_t)r.pid, 0, t);
			}
		}
		switch (r.type) {
		case REC_LOST:
			ADD(lost_records, 1);
			ADD(lost_events, r.lost);
			st.epoch++;
			st.losses++;
			break;
		case REC_EVENT:
			if (!strncmp(r.text, "tracing_mark_write: ustress:", 28)) {
				ADD(markers, 1);
				st.epoch++;
			}
			break;
		case REC_COOKIE:
			on_cookie(t, &r, &st);
			break;
		case REC_STACK:
			on_stack(t, &r, &st);
			break;
		case REC_INODE:
			break;
		}
	}
	map_each(tasks, at_end, &st);
	input_close(in);
	map_free(tasks, free);
	_exit(0);
}

/* --- the controller */

static unsigned int seed;

static int pick(int n)
{
	return (int)(rand_r(&seed) % (unsigned int)n);
}

static void marker(struct inst *in, const char *what)
{
	char msg[64];

	snprintf(msg, sizeof(msg), "ustress: %s\n", what);
	tracefs_instance_file_write(in->ti, "trace_marker", msg);
}

static void start_reader(struct inst *in)
{
	in->reader = fork();
	if (in->reader == 0)
		reader(in->name);
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
	set_option(in, 1);
	ADD(instances_made, 1);
}

static void remove_instance(struct inst *in)
{
	set_option(in, 1);		/* removed with the option set */
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

	switch (pick(9)) {
	case 0:
	case 1:
		cur = tracefs_instance_file_read(in->ti, "options/userstacktrace_delay", NULL);
		set_option(in, !(cur && cur[0] == '1'));
		free(cur);
		marker(in, "option");
		break;
	case 2:
		remove_instance(in);
		make_instance(in);
		break;
	case 3:
		tracefs_instance_file_clear(in->ti, "trace");
		ADD(truncates, 1);
		marker(in, "truncate");
		break;
	case 4:
		tracefs_instance_file_write(in->ti, "trace_clock", clocks[pick(5)]);
		ADD(clocks, 1);
		marker(in, "clock");
		break;
	case 5:
		tracefs_instance_file_write(in->ti, "current_tracer", pick(2) ? "function" : "nop");
		ADD(tracers, 1);
		marker(in, "tracer");
		break;
	case 6:
		tracefs_instance_file_write(in->ti, "tracing_on", "0");
		tracefs_instance_file_write(in->ti, "tracing_on", "1");
		ADD(tracing_on, 1);
		marker(in, "tracing_on");
		break;
	case 7:
		flip_event(in, pick(3));
		break;
	case 8:
		s = tracefs_instance_file_read(in->ti, "trace", NULL);
		free(s);
		ADD(trace_reads, 1);
		break;
	}
	check_inodes(in);
}

#define FTRACE_ENABLED "/proc/sys/kernel/ftrace_enabled"

static char *read_file(const char *path)
{
	char buf[64] = "";
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		die("cannot read %s", path);
	buf[n] = '\0';
	return xstrdup(buf);
}

static void write_sysctl(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0 || write(fd, value, strlen(value)) < 0)
		die("cannot write %s: %s", path, strerror(errno));
	close(fd);
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
		"usage: ustress [-d SECONDS] [-t MIN_TOGGLES] [-s MIN_STACKS] [-i INSTANCES] [-w WORKERS] [-P]\n"
		"  Runs for at least SECONDS (default 30), and on until both minimums are\n"
		"  reached, for at most 3 x SECONDS.  Exits 0 when every check passed.\n"
		"  -P  keep kernel.ftrace_enabled at 0 meanwhile, so that switching to the\n"
		"      function tracer patches no kernel text (QEMU's TCG with several\n"
		"      vCPUs runs stale code across such patching, and the guest dies)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long min_toggles = 0, min_stacks = 0;
	double duration = 30, t0, t;
	bool answers, ok, no_patching = false;
	int opt, i;

	while ((opt = getopt(argc, argv, "d:t:s:i:w:Ph")) != -1) {
		switch (opt) {
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

	if (no_patching) {
		ftrace_enabled_was = read_file(FTRACE_ENABLED);
		write_sysctl(FTRACE_ENABLED, "0");
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
		usleep(2000);
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
	if (ftrace_enabled_was)
		write_sysctl(FTRACE_ENABLED, ftrace_enabled_was);
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
	printf("read from trace_pipe: %lu records, %lu cookies, %lu stacks, %lu markers; "
	       "%lu losses of %lu events\n",
	       cnt->records, cnt->cookies, cnt->stacks, cnt->markers, cnt->lost_records,
	       cnt->lost_events);
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
