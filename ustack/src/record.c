// SPDX-License-Identifier: GPL-2.0
/*
 * ustack record: trace a command in a tracefs instance of its own, with
 * userstacktrace_delay set, and write the records as tracefs's trace
 * file prints them, so that ustack report, and people, read one form.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event-parse.h>
#include <tracefs.h>

#include "ustack.h"

#define OPTION		"options/userstacktrace_delay"
#define DEFAULT_EVENT	"raw_syscalls:sys_enter"
#define POLL_NS		100000000L
#define KILL_AFTER_S	5	/* after the first signal, SIGKILL the command */

struct recorder {
	struct tep_handle	*tep;
	struct tep_event	*cookie, *stack, *inode;
	struct trace_seq	seq;
	FILE			*out;
	unsigned long		records, stacks, lost;
	bool			comms_fresh;	/* saved_cmdlines read this pass */
	uint64_t		cpu_lost[1024];
};

static struct tracefs_instance *instance;
static volatile sig_atomic_t stop_signal, signals;

static void remove_instance(void)
{
	if (!instance)
		return;
	tracefs_instance_file_write(instance, OPTION, "0");
	if (tracefs_instance_destroy(instance))
		warnx_("could not remove tracefs instance %s: %s",
		       tracefs_instance_get_name(instance), strerror(errno));
	tracefs_instance_free(instance);
	instance = NULL;
}

static void on_signal(int sig)
{
	if (!stop_signal)
		stop_signal = sig;
	signals++;
}

static void usage(bool help)
{
	fprintf(help ? stdout : stderr,
		"usage: ustack record [-e SYSTEM:EVENT]... [-o FILE] -- COMMAND [ARGS]\n"
		"  -e  an event that asks for the user stack (default " DEFAULT_EVENT ")\n"
		"  -o  where to write the trace (default ustack.trace)\n"
		"On SIGINT, SIGTERM or SIGHUP the command gets SIGINT; it is killed after\n"
		"%d s, or at a second signal.  The tracefs instance is removed in any case,\n"
		"even when ustack itself is killed (a watchdog process does it).\n",
		KILL_AFTER_S);
	exit(help ? 0 : 2);
}

/*
 * The watchdog: a child that holds the read end of a pipe whose write end
 * only ustack holds.  When ustack is gone, however it ended (SIGKILL
 * included), the read sees EOF, and the watchdog removes the instance if
 * it is still there, which gives back its deferred unwinder slot.  It
 * ignores the signals of Ctrl-C, and never runs ustack's exit handlers.
 */
static void start_watchdog(const char *name)
{
	int fd[2];
	pid_t pid;

	if (pipe2(fd, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		struct tracefs_instance *inst;
		char c;

		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		close(fd[1]);
		while (read(fd[0], &c, 1) < 0 && errno == EINTR)
			;
		if (tracefs_instance_exists(name) && (inst = tracefs_instance_alloc(NULL, name))) {
			tracefs_instance_file_write(inst, OPTION, "0");
			if (tracefs_instance_destroy(inst))
				fprintf(stderr, "ustack: watchdog: could not remove tracefs instance %s: %s\n",
					name, strerror(errno));
		}
		_exit(0);
	}
	close(fd[0]);
	/* fd[1] stays open, unused, until ustack ends; the command does not get it */
}

/* Wait for the command; a second signal, or KILL_AFTER_S, kills it */
static bool wait_stopped(pid_t child, int *status)
{
	struct timespec t0, now, poll = { 0, POLL_NS / 10 };
	bool killed = false;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	kill(child, SIGINT);
	for (;;) {
		pid_t w = waitpid(child, status, WNOHANG);

		if (w == child)
			return true;
		if (w < 0 && errno != EINTR)
			return false;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!killed && (signals > 1 || now.tv_sec - t0.tv_sec >= KILL_AFTER_S)) {
			warnx_("the command did not stop on SIGINT%s: killing it",
			       signals > 1 ? ", and a second signal came" : "");
			kill(child, SIGKILL);
			killed = true;
		}
		nanosleep(&poll, NULL);
	}
}

static void check_tracefs(void)
{
	const char *dir = tracefs_tracing_dir();

	if (!dir)
		die("tracefs is not mounted and could not be mounted%s",
		    geteuid() ? ": ustack record needs root" : "");
	if (access(dir, W_OK))
		die("%s: %s: ustack record needs root (or write access to tracefs)",
		    dir, strerror(errno));
}

static void write_file(const char *file, const char *value, const char *what)
{
	if (tracefs_instance_file_write(instance, file, value) < 0)
		die("cannot %s (%s): %s", what, file, strerror(errno));
}

/* Comms as the kernel saved them: refreshed, since exec changes them */
static void load_comms(struct tep_handle *tep)
{
	char *buf = tracefs_instance_file_read(NULL, "saved_cmdlines", NULL);
	char *line, *save = NULL;

	if (!buf)
		return;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char comm[64];
		int pid;

		if (sscanf(line, "%d %63[^\n]", &pid, comm) == 2)
			tep_override_comm(tep, comm, pid);
	}
	free(buf);
}

/* "%16s-%-7d [%03d] %5lu.%06lu: ", as tracefs's trace file prints */
static void print_head(struct recorder *r, struct tep_record *rec, int pid)
{
	const char *comm = tep_data_comm_from_pid(r->tep, pid);

	if (!strcmp(comm, "<...>") && !r->comms_fresh) {
		load_comms(r->tep);
		r->comms_fresh = true;
		comm = tep_data_comm_from_pid(r->tep, pid);
	}
	unsigned long long sec = rec->ts / 1000000000ULL;
	unsigned long long usec = rec->ts % 1000000000ULL / 1000;

	fprintf(r->out, "%16s-%-7d [%03d] %5llu.%06llu: ", comm, pid, rec->cpu, sec, usec);
}

static uint64_t val(struct tep_event *ev, const char *name,
		    struct tep_record *rec)
{
	unsigned long long v = 0;

	if (tep_get_field_val(NULL, ev, name, rec, &v, 0))
		warnx_("%s has no field %s", ev->name, name);
	return v;
}

static const void *array(struct tep_event *ev, const char *name, struct tep_record *rec,
			 size_t elem, size_t *nr)
{
	int len = 0;
	const void *p = tep_get_field_raw(NULL, ev, name, rec, &len, 0);

	*nr = p && len > 0 ? (size_t)len / elem : 0;
	return p;
}

static void print_stack(struct recorder *r, struct tep_record *rec)
{
	size_t na, ni, nd, i;
	const unsigned char *a = array(r->stack, "addrs", rec, 8, &na);
	const unsigned char *in = array(r->stack, "inodes", rec, 8, &ni);
	const unsigned char *d = array(r->stack, "devs", rec, 4, &nd);
	uint64_t lost = val(r->stack, "lost", rec);

	fprintf(r->out, "<user stack unwind>\ncookie=%" PRIx64, val(r->stack, "cookie", rec));
	if (lost)
		fprintf(r->out, " lost=%" PRIu64, lost);
	fputc('\n', r->out);
	if (ni < na)
		na = ni;
	if (nd < na)
		na = nd;
	for (i = 0; i < na; i++) {
		uint64_t off, ino;
		uint32_t dev;

		memcpy(&off, a + 8 * i, 8);
		memcpy(&ino, in + 8 * i, 8);
		memcpy(&dev, d + 4 * i, 4);
		fprintf(r->out, " =>  <%016" PRIx64 "> : ", off);
		if (ino == USTACK_NO_VMA)
			fputs("-1", r->out);
		else
			fprintf(r->out, "%" PRIu64, ino);
		fprintf(r->out, " : %u:%u\n", KDEV_MAJOR(dev), KDEV_MINOR(dev));
	}
	r->stacks++;
}

static void print_inode(struct recorder *r, struct tep_record *rec)
{
	uint32_t dev = (uint32_t)val(r->inode, "dev", rec);
	int err = (int)val(r->inode, "err", rec);
	size_t len;
	const char *path = array(r->inode, "path", rec, 1, &len);

	fprintf(r->out, "inode_cache: inode=%" PRIu64 " dev=[%u:%u] ",
		val(r->inode, "ino", rec), KDEV_MAJOR(dev), KDEV_MINOR(dev));
	if (err || !path || !len)
		fprintf(r->out, "error=%d\n", err ? err : -ENOENT);
	else
		/* The kernel escaped the path already; keep it one line anyway */
		fprintf(r->out, "path=%.*s\n", (int)strnlen(path, len), path);
}

static void print_other(struct recorder *r, struct tep_record *rec)
{
	char *p;

	trace_seq_reset(&r->seq);
	tep_print_event(r->tep, &r->seq, rec, "%s: %s", TEP_PRINT_NAME, TEP_PRINT_INFO);
	trace_seq_terminate(&r->seq);
	for (p = r->seq.buffer; *p; p++)
		if (*p == '\n')
			*p = ' ';
	fprintf(r->out, "%s\n", r->seq.buffer);
}

static int on_record(struct tep_event *ev, struct tep_record *rec, int cpu, void *ctx)
{
	struct recorder *r = ctx;
	int pid = tep_data_pid(r->tep, rec);

	if (rec->missed_events) {
		if (rec->missed_events > 0) {
			fprintf(r->out, "CPU:%d [LOST %lld EVENTS]\n", cpu, rec->missed_events);
			r->lost += (unsigned long)rec->missed_events;
			if (cpu >= 0 && cpu < 1024)
				r->cpu_lost[cpu] += (uint64_t)rec->missed_events;
		} else {
			fprintf(r->out, "CPU:%d [EVENTS DROPPED]\n", cpu);
		}
	}
	print_head(r, rec, pid);
	if (ev == r->cookie)
		fprintf(r->out, "user_unwind_cookie: cookie=%" PRIx64 "\n",
			val(ev, "cookie", rec));
	else if (ev == r->stack)
		print_stack(r, rec);
	else if (ev == r->inode)
		print_inode(r, rec);
	else
		print_other(r, rec);
	r->records++;
	return stop_signal ? 1 : 0;
}

/* Events the ring buffer dropped or overwrote, that no record reported */
static void report_unseen_losses(struct recorder *r)
{
	int cpu, ncpus = sysconf(_SC_NPROCESSORS_CONF);

	for (cpu = 0; cpu < ncpus && cpu < 1024; cpu++) {
		char file[64], *stats, *p;
		uint64_t lost = 0;

		snprintf(file, sizeof(file), "per_cpu/cpu%d/stats", cpu);
		stats = tracefs_instance_file_read(instance, file, NULL);
		if (!stats)
			continue;
		p = strstr(stats, "overrun: ");
		if (p)
			lost += strtoull(p + 9, NULL, 10);
		p = strstr(stats, "dropped events: ");
		if (p)
			lost += strtoull(p + 16, NULL, 10);
		free(stats);
		if (lost > r->cpu_lost[cpu]) {
			fprintf(r->out, "CPU:%d [LOST %" PRIu64 " EVENTS]\n", cpu,
				lost - r->cpu_lost[cpu]);
			r->lost += lost - r->cpu_lost[cpu];
		}
	}
}

static pid_t start_command(char **argv, int *go, int *exec_err)
{
	int gate[2], err[2];
	pid_t pid;

	if (pipe(gate) || pipe2(err, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		char c;
		int e;

		close(gate[1]);
		close(err[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		/* Wait until tracing is set up */
		if (read(gate[0], &c, 1) != 1)
			_exit(127);
		close(gate[0]);
		execvp(argv[0], argv);
		e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(gate[0]);
	close(err[1]);
	*go = gate[1];
	*exec_err = err[0];
	return pid;
}

static void add_system(const char ***systems, size_t *n, const char *sys)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp((*systems)[i], sys))
			return;
	*systems = xrealloc(*systems, (*n + 2) * sizeof(**systems));
	(*systems)[(*n)++] = sys;
	(*systems)[*n] = NULL;
}

int cmd_record(int argc, char **argv)
{
	const char *out_path = "ustack.trace", **systems = NULL;
	char **events = NULL, **evsys, name[64], pidbuf[32];
	size_t nevents = 0, nsystems = 0, i;
	struct recorder r = { 0 };
	struct timespec poll = { 0, POLL_NS };
	int opt, go, exec_err, status = 0, e;
	bool exited = false;
	pid_t child;

	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};

	while ((opt = getopt_long(argc, argv, "+e:o:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'e':
			events = xrealloc(events, (nevents + 1) * sizeof(*events));
			events[nevents++] = optarg;
			break;
		case 'o':
			out_path = optarg;
			break;
		case 'h':
			usage(true);
			break;
		default:
			usage(false);
		}
	}
	if (optind >= argc)
		usage(false);
	if (!nevents) {
		events = xmalloc(sizeof(*events));
		events[nevents++] = DEFAULT_EVENT;
	}

	check_tracefs();
	snprintf(name, sizeof(name), "ustack-%d", (int)getpid());
	atexit(remove_instance);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	start_watchdog(name);
	instance = tracefs_instance_create(name);
	if (!instance)
		die("cannot create tracefs instance %s: %s", name, strerror(errno));
	if (!tracefs_file_exists(instance, OPTION))
		die("this kernel has no " OPTION ": it needs the deferred user stack series, "
		    "built with CONFIG_UNWIND_USER");

	evsys = xcalloc(nevents, sizeof(*evsys));
	add_system(&systems, &nsystems, "ftrace");
	for (i = 0; i < nevents; i++) {
		char *sys = xstrdup(events[i]), *ev = strchr(sys, ':');

		if (!ev || !ev[1] || ev == sys)
			die("bad event '%s': give it as SYSTEM:EVENT", events[i]);
		*ev++ = '\0';
		if (!tracefs_event_file_exists(instance, sys, ev, "enable"))
			die("no event %s:%s in this kernel (see %s/available_events)",
			    sys, ev, tracefs_tracing_dir());
		add_system(&systems, &nsystems, sys);
		evsys[i] = sys;
		events[i] = ev;
	}
	r.tep = tracefs_local_events_system(NULL, systems);
	if (!r.tep)
		die("cannot read the event formats: %s", strerror(errno));
	r.cookie = tep_find_event_by_name(r.tep, "ftrace", "user_unwind_cookie");
	r.stack = tep_find_event_by_name(r.tep, "ftrace", "user_unwind_stack");
	r.inode = tep_find_event_by_name(r.tep, "ftrace", "inode_cache");
	if (!r.cookie || !r.stack || !r.inode)
		die("this kernel lacks the user_unwind_cookie, user_unwind_stack or inode_cache event");

	r.out = strcmp(out_path, "-") ? fopen(out_path, "w") : stdout;
	if (!r.out)
		die("cannot write %s: %s", out_path, strerror(errno));
	trace_seq_init(&r.seq);
	fprintf(r.out, "# ustack record:");
	for (i = (size_t)optind; i < (size_t)argc; i++)
		fprintf(r.out, " %s", argv[i]);
	fprintf(r.out, "\n# tracer: nop\n#\n");

	child = start_command(argv + optind, &go, &exec_err);
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)child);
	write_file("set_event_pid", pidbuf, "follow the command");
	write_file("options/event-fork", "1", "follow the command's children");
	for (i = 0; i < nevents; i++)
		if (tracefs_event_enable(instance, evsys[i], events[i]))
			die("cannot enable %s:%s: %s", evsys[i], events[i], strerror(errno));
	e = tracefs_instance_file_write(instance, OPTION, "1");
	if (e < 0) {
		e = errno;
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		if (e == EBUSY)
			die("cannot set userstacktrace_delay: no deferred unwinder slot is free "
			    "(too many instances with the option set, or perf users)");
		die("cannot set userstacktrace_delay: %s", strerror(e));
	}
	write_file("tracing_on", "1", "turn tracing on");
	if (write(go, "g", 1) != 1)
		die("cannot start the command: %s", strerror(errno));
	close(go);
	if (read(exec_err, &e, sizeof(e)) == sizeof(e)) {
		waitpid(child, NULL, 0);
		die("cannot run %s: %s", argv[optind], strerror(e));
	}
	close(exec_err);

	while (!exited) {
		pid_t w;

		r.comms_fresh = false;
		tracefs_iterate_raw_events(r.tep, instance, NULL, 0, on_record, &r);
		w = waitpid(child, &status, WNOHANG);
		if (w == child) {
			exited = true;
		} else if (stop_signal) {
			exited = wait_stopped(child, &status);
			if (!exited)
				break;
		} else {
			nanosleep(&poll, NULL);
		}
	}
	/* What was recorded after the last pass */
	write_file(OPTION, "0", "clear userstacktrace_delay");
	write_file("tracing_on", "0", "turn tracing off");
	r.comms_fresh = false;
	tracefs_iterate_raw_events(r.tep, instance, NULL, 0, on_record, &r);
	report_unseen_losses(&r);

	if (fflush(r.out) || (r.out != stdout && fclose(r.out)))
		die("cannot write %s: %s", out_path, strerror(errno));
	fprintf(stderr, "ustack: %lu records, %lu stacks, %lu events lost, written to %s\n",
		r.records, r.stacks, r.lost, out_path);
	trace_seq_destroy(&r.seq);
	tep_free(r.tep);
	for (i = 0; i < nevents; i++)
		free(evsys[i]);
	free(evsys);
	free(systems);
	free(events);
	remove_instance();
	if (stop_signal)
		return 128 + stop_signal;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
