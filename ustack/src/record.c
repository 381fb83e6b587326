// SPDX-License-Identifier: GPL-2.0
/*
 * ustack record: trace a command, running processes (-p) or every user
 * task (-a) in a tracefs instance of its own, with userstacktrace_delay
 * set, and write the records as tracefs's trace file prints them, so
 * that ustack report, and people, read one form.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>	/* isfinite */
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event-parse.h>
#include <kbuffer.h>
#include <tracefs.h>

#include "ustack.h"

#define OPTION		"options/userstacktrace_delay"
#define DEFAULT_EVENT	"raw_syscalls:sys_enter"
#define OFF_CPU_EVENT	"sched:sched_switch"
#define WAKER_EVENT	"sched:sched_waking"
#define POLL_NS		100000000L
#define KILL_AFTER_S	5	/* after the first signal, SIGKILL the command */
#define COPY_FILE	"userstacktrace_copy"
#define DEFAULT_COPY	8192	/* bytes: whole stacks of Debian's own programs */
#define MAX_CPUS	1024
#define COPY_BUFFER_KB	8192	/* a CPU's buffer with copies, unless -b */

/* A CPU's trace_pipe_raw, and the sub-buffer being read from it */
struct raw_cpu {
	int			fd;
	struct kbuffer		*kbuf;
	void			*page;
	bool			have_page;	/* kbuf holds a sub-buffer */
	bool			loaded;		/* kbuf holds a record not given yet */
	bool			drained;	/* read up to its writer this pass */
	struct tep_record	rec;
};

/* A stack held for its copy */
struct held {
	struct tep_record	rec;	/* its own copy of the data */
	int			pid;
};

struct recorder {
	struct tep_handle	*tep;
	struct tep_event	*cookie, *stack, *inode;
	struct tep_event	*copy;		/* user_unwind_copy, when copies are on */
	struct tep_event	*sched_switch;
	struct copy_unwinder	*unwinder;
	struct map		*held;		/* per task: a stack its copy is due for */
	struct stack_frames	frames;		/* the stack being printed */
	char			*path;		/* an inode_cache path, unescaped */
	unsigned long		copies, copy_frames;
	struct trace_seq	seq;
	FILE			*out;
	unsigned long		records, stacks, lost;
	bool			comms_fresh;	/* saved_cmdlines read this pass */
	struct map		*proc_tried;	/* PIDs looked up in /proc already */
	struct map		*tgids;		/* pid -> its process + 1; 1: not known */
	bool			tgids_fresh;	/* saved_tgids read this pass */
	bool			draining;	/* the last pass: read everything */
	bool			build_id;	/* inode_cache has the build_id field */
	bool			build_id_state;	/* and build_id_state */
	struct timespec		deadline;	/* -d: when the run ends; 0: none */
	uint64_t		cpu_lost[MAX_CPUS];
	struct raw_cpu		*raw;		/* each CPU's trace_pipe_raw */
	int			ncpus;
	size_t			subbuf;		/* bytes a read of one gives */
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
		"usage: ustack record [OPTIONS] -- COMMAND [ARGS]\n"
		"       ustack record [OPTIONS] -p PID[,PID]...\n"
		"       ustack record [OPTIONS] -a\n"
		"  -e EVENT         an event that asks for the user stack (repeatable):\n"
		"                   SYSTEM:EVENT, or SYSTEM for all its events, with globs\n"
		"                   ('syscalls:sys_enter_open*'); default " DEFAULT_EVENT "\n"
		"  --filter EXPR    the kernel's filter for the events of the -e before it,\n"
		"                   on the fields of their format ('flags & 64', 'count > 4096')\n"
		"  -o FILE          where to write the trace (default ustack.trace; - for stdout);\n"
		"                   an earlier FILE is kept as FILE.old\n"
		"  -p PID[,PID]...  attach to running processes, all their threads, and\n"
		"                   the children they start (repeatable); no COMMAND\n"
		"  -a               every user task (but ustack itself); no COMMAND\n"
		"  -d SECONDS       end the run after this time (decimals allowed)\n"
		"  -b, --buffer-size KB  the per-CPU ring buffer size of the instance\n"
		"  --off-cpu        for ustack report --off-cpu: sched:sched_switch asks for the\n"
		"                   stack of each task that leaves the CPU (with -e, as well as\n"
		"                   those), and the clock is one that CPUs share (mono)\n"
		"  --wakers         --off-cpu, and sched:sched_waking asks for the stack of the\n"
		"                   task that wakes another (for ustack report --wakers)\n"
		"  --copy BYTES     with each stack, copy this much of the top of the user\n"
		"                   stack, and unwind it with the CFI (.eh_frame) of the\n"
		"                   mapped files: whole stacks through code built without\n"
		"                   frame pointers (default %d; 0: frame pointers only;\n"
		"                   at most 32768; needs CAP_PERFMON)\n"
		"  --stats          record's own CPU time and peak memory, on standard error\n"
		"A COMMAND run ends when it exits.  On SIGINT, SIGTERM or SIGHUP, or at the\n"
		"end of -d, the command gets SIGINT; it is killed after %d s, or at a second\n"
		"signal.  With -p or -a the run ends at a signal, at the end of -d, or (-p)\n"
		"when every attached process has exited; attached tasks are never signalled.\n"
		"The trace is written whole in every case, and the tracefs instance removed,\n"
		"even when ustack itself is killed (a watchdog process does it).\n"
		"Exit status: the command's (128+N after signal N), 0 when -d ended it;\n"
		"0 for -p and -a, however they end; 2 on an error.\n",
		DEFAULT_COPY, KILL_AFTER_S);
	exit(help ? 0 : 2);
}

/*
 * The watchdog: a child that holds the read end of a pipe whose write end
 * only ustack holds.  When ustack is gone, however it ended (SIGKILL
 * included), the read sees EOF, and the watchdog removes the instance if
 * it is still there, which gives back its deferred unwinder slot.  It
 * ignores the signals of Ctrl-C, and never runs ustack's exit handlers.
 */
static pid_t start_watchdog(const char *name)
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
	return pid;
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

/* The comm of a task that is still there, from /proc: saved_cmdlines is small */
static bool proc_comm(struct tep_handle *tep, int pid)
{
	char file[64], comm[64];
	FILE *f;
	bool ok = false;

	snprintf(file, sizeof(file), "/proc/%d/comm", pid);
	f = fopen(file, "re");
	if (!f)
		return false;
	if (fgets(comm, sizeof(comm), f)) {
		comm[strcspn(comm, "\n")] = '\0';
		ok = comm[0] && !tep_override_comm(tep, comm, pid);
	}
	fclose(f);
	return ok;
}

/* saved_tgids, which record-tgid fills as events are recorded, into r->tgids */
static void load_tgids(struct recorder *r)
{
	char *text = tracefs_instance_file_read(NULL, "saved_tgids", NULL), *line, *save;
	int pid, tgid;

	for (line = text ? strtok_r(text, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "%d %d", &pid, &tgid) == 2 && pid > 0 && tgid > 0)
			map_put(r->tgids, (uint64_t)pid, 0, (void *)(uintptr_t)(tgid + 1));
	free(text);
}

/* The process of thread @pid, for --pid of report: 0 when it is not known */
static int tgid_of(struct recorder *r, int pid)
{
	uintptr_t v = (uintptr_t)map_get(r->tgids, (uint64_t)pid, 0);
	char path[64], line[128];
	int tgid = 0;
	FILE *f;

	if (pid <= 0)
		return 0;
	if (!v && !r->tgids_fresh) {
		load_tgids(r);
		r->tgids_fresh = true;
		v = (uintptr_t)map_get(r->tgids, (uint64_t)pid, 0);
	}
	if (v)
		return (int)(v - 1);
	/* A thread the kernel's table has not seen yet: /proc, while it lives */
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	if (f)
		fclose(f);
	map_put(r->tgids, (uint64_t)pid, 0, (void *)(uintptr_t)(tgid + 1));
	return tgid;
}

/*
 * "%16s-%-7d (%7d) [%03d] %5lu.%06lu: ", as tracefs's trace file prints
 * with record-tgid: (-------) for a process not known
 */
static void print_head(struct recorder *r, struct tep_record *rec, int pid)
{
	const char *comm = tep_data_comm_from_pid(r->tep, pid);
	int tgid = tgid_of(r, pid);
	char tgid_s[16] = "-------";

	if (!strcmp(comm, "<...>") && !r->comms_fresh) {
		load_comms(r->tep);
		r->comms_fresh = true;
		comm = tep_data_comm_from_pid(r->tep, pid);
	}
	if (!strcmp(comm, "<...>") && pid > 0 && !map_get(r->proc_tried, (uint64_t)pid, 0)) {
		map_put(r->proc_tried, (uint64_t)pid, 0, r);
		if (proc_comm(r->tep, pid))
			comm = tep_data_comm_from_pid(r->tep, pid);
	}
	unsigned long long sec = rec->ts / 1000000000ULL;
	unsigned long long usec = rec->ts % 1000000000ULL / 1000;
	int flags = tep_data_flags(r->tep, rec), depth = tep_data_preempt_count(r->tep, rec);

	/* The latency flags as trace_pipe prints them: irqs-off, need-resched,
	 * hardirq/softirq/NMI, preempt depth (TRACE_FLAG_* of common_flags) */
	if (flags < 0)
		flags = 0;
	if (tgid > 0)
		snprintf(tgid_s, sizeof(tgid_s), "%7d", tgid);
	fprintf(r->out, "%16s-%-7d (%s) [%03d] %c%c%c%c. %5llu.%06llu: ", comm, pid, tgid_s, rec->cpu,
		flags & 0x01 ? 'd' : '.', flags & 0x04 ? 'N' : '.',
		flags & 0x40 ? (flags & 0x08 ? 'Z' : 'z') :
		(flags & 0x08) && (flags & 0x10) ? 'H' : flags & 0x08 ? 'h' : flags & 0x10 ? 's' : '.',
		depth > 0 && (depth & 15) ? "0123456789abcdef"[depth & 15] : '.', sec, usec);
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

/* " =>  <%016x> : INODE : MAJOR:MINOR[ cfi]", as trace prints a frame */
static void print_frame(FILE *out, const struct frame *f)
{
	fputs_unlocked(" =>  <", out);
	put_u64(out, f->off, 16, 16);
	fputs_unlocked("> : ", out);
	if (f->ino == USTACK_NO_VMA)
		fputs_unlocked("-1", out);
	else if (f->ino == USTACK_NO_MM_LOCK)
		fputs_unlocked("-2", out);
	else if (f->ino == USTACK_NOT_REG)
		fputs_unlocked("-3", out);
	else
		put_u64(out, f->ino, 10, 1);
	fputs_unlocked(" : ", out);
	put_u64(out, KDEV_MAJOR(f->dev), 10, 1);
	fputc_unlocked(':', out);
	put_u64(out, KDEV_MINOR(f->dev), 10, 1);
	fputs_unlocked(f->cfi ? " cfi\n" : "\n", out);
}

/* A stack, and the copy that follows it (or NULL) unwound into it */
static void print_stack(struct recorder *r, struct tep_record *rec, struct tep_record *copy)
{
	const char *why = NULL;
	bool edge = false;

	if (!stack_decode(r->stack, rec, &r->frames, &why)) {
		warnx_("a user_unwind_stack record is malformed (%s): left out", why);
		return;
	}
	if (copy && !copy_merge(r->unwinder, r->copy, copy, &r->frames, &edge, &why))
		warnx_("a user_unwind_copy record is malformed (%s): its stack is the kernel's", why);
	fprintf(r->out, "<user stack unwind>\ncookie=%" PRIx64, r->frames.cookie);
	if (r->frames.lost)
		fprintf(r->out, " lost=%" PRIu64, r->frames.lost);
	fputc('\n', r->out);
	for (size_t i = 0; i < r->frames.nr; i++) {
		const struct frame *f = &r->frames.frames[i];

		print_frame(r->out, f);
		r->copy_frames += f->cfi;
	}
	if (edge)
		fputs("copy=edge\n", r->out);
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
	if (r->build_id) {
		size_t n, i;
		const unsigned char *id = array(r->inode, "build_id", rec, 1, &n);

		/* As the kernel prints it: hex, none, or unread */
		fputs("build_id=", r->out);
		if ((!id || !n) && r->build_id_state && val(r->inode, "build_id_state", rec) == 2)
			fputs("unread", r->out);
		else if (!id || !n)
			fputs("none", r->out);
		for (i = 0; id && i < n; i++)
			fprintf(r->out, "%02x", id[i]);
		fputc(' ', r->out);
	}
	if (err || !path || !len)
		fprintf(r->out, "error=%d\n", err ? err : -ENOENT);
	else
		/* The kernel escaped the path already; keep it one line anyway */
		fprintf(r->out, "path=%.*s\n", (int)strnlen(path, len), path);
	if (r->unwinder) {
		const unsigned char *id = NULL;
		size_t n = 0;

		if (!err && path && len) {
			free(r->path);
			r->path = xasprintf("%.*s", (int)strnlen(path, len), path);
			path_unescape(r->path);
		}
		if (r->build_id)
			id = array(r->inode, "build_id", rec, 1, &n);
		copy_unwinder_name(r->unwinder, val(r->inode, "ino", rec), dev,
				   !err && path && len ? r->path : NULL, id, n);
	}
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

static uint64_t stack_cookie(struct recorder *r, struct tep_record *rec)
{
	unsigned long long v = 0;
	const char *why;

	return field_num(r->stack, rec, "cookie", &v, &why) ? v : 0;
}

static void hold(struct recorder *r, struct tep_record *rec, int cpu, int pid)
{
	struct held *h = xcalloc(1, sizeof(*h));

	h->rec.ts = rec->ts;
	h->rec.cpu = cpu;
	h->rec.size = rec->size;
	h->rec.data = xmalloc(rec->size ? rec->size : 1);
	memcpy(h->rec.data, rec->data, rec->size);
	h->pid = pid;
	map_put(r->held, (uint64_t)pid, 0, h);
}

/* The task's held stack printed, with @copy unwound into it (or NULL) */
static void release(struct recorder *r, struct held *h, struct tep_record *copy)
{
	map_del(r->held, (uint64_t)h->pid, 0);
	print_head(r, &h->rec, h->pid);
	print_stack(r, &h->rec, copy);
	free(h->rec.data);
	free(h);
}

struct held_list {
	struct held	**h;
	size_t		n;
};

static void collect_held(uint64_t a, uint64_t b, void *value, void *ctx)
{
	struct held_list *l = ctx;

	(void)a;
	(void)b;
	l->h[l->n++] = value;
}

static int by_time(const void *a, const void *b)
{
	const struct held *x = *(struct held *const *)a, *y = *(struct held *const *)b;

	return x->rec.ts < y->rec.ts ? -1 : x->rec.ts > y->rec.ts;
}

/* Every held stack, without its copy, in time order */
static void release_all(struct recorder *r)
{
	struct held_list l = { 0 };

	if (!r->held || !map_size(r->held))
		return;
	l.h = xmalloc(map_size(r->held) * sizeof(*l.h));
	map_each(r->held, collect_held, &l);
	qsort(l.h, l.n, sizeof(*l.h), by_time);
	for (size_t i = 0; i < l.n; i++)
		release(r, l.h[i], NULL);
	free(l.h);
}

/*
 * A stack is held until its copy comes, from the same task with the same
 * cookie: the copy is written right after the stack, on the same CPU with
 * preemption off, but an interrupt's records can come between.  It goes
 * without its copy when the task's next cookie or stack comes first, or
 * at the end.  True: @rec was the copy, and is printed.
 */
static bool take_copy(struct recorder *r, struct tep_event *ev, struct tep_record *rec, int pid)
{
	struct held *h = map_get(r->held, (uint64_t)pid, 0);
	uint64_t cookie;

	if (!h)
		return false;
	if (ev == r->copy) {
		if (copy_cookie(ev, rec, &cookie) && stack_cookie(r, &h->rec) == cookie) {
			release(r, h, rec);
			r->copies++;
			print_head(r, rec, pid);
			print_other(r, rec);
			return true;
		}
	} else if (ev == r->cookie) {
		/* An event on the way out (a sched_switch) takes the stack's
		 * cookie: the copy is still to come */
		if (val(ev, "cookie", rec) == stack_cookie(r, &h->rec))
			return false;
	} else if (ev != r->stack) {
		return false;
	}
	release(r, h, NULL);
	return false;
}

/*
 * A sched_switch names the task it takes off the CPU, as it is then: the
 * comm of a thread that is gone before its records are read, and that
 * saved_cmdlines no longer holds
 */
static void switch_comm(struct recorder *r, struct tep_event *ev, struct tep_record *rec, int pid)
{
	unsigned long long prev;
	const char *why;
	size_t len;
	const char *comm;

	if (ev != r->sched_switch || !field_num(ev, rec, "prev_pid", &prev, &why) ||
	    prev != (unsigned long long)pid)
		return;
	comm = array(ev, "prev_comm", rec, 1, &len);
	/* The task's comm then: after an exec, its new one */
	if (comm && len && strnlen(comm, len) < len &&
	    strcmp(tep_data_comm_from_pid(r->tep, pid), comm))
		tep_override_comm(r->tep, comm, pid);
}

static int on_record(struct tep_event *ev, struct tep_record *rec, int cpu, void *ctx)
{
	struct recorder *r = ctx;
	int pid = tep_data_pid(r->tep, rec);

	if (rec->missed_events) {
		/* What is held waits no longer, as its copy may be what was
		 * lost; but the copy itself may come after the loss */
		struct held *h = r->held ? map_get(r->held, (uint64_t)pid, 0) : NULL;

		if (h && ev == r->copy)
			map_del(r->held, (uint64_t)pid, 0);
		release_all(r);
		if (h && ev == r->copy)
			map_put(r->held, (uint64_t)pid, 0, h);
		if (rec->missed_events > 0) {
			fprintf(r->out, "CPU:%d [LOST %lld EVENTS]\n", cpu, rec->missed_events);
			r->lost += (unsigned long)rec->missed_events;
			if (cpu >= 0 && cpu < 1024)
				r->cpu_lost[cpu] += (uint64_t)rec->missed_events;
		} else {
			fprintf(r->out, "CPU:%d [EVENTS DROPPED]\n", cpu);
		}
	}
	switch_comm(r, ev, rec, pid);
	if (r->unwinder && take_copy(r, ev, rec, pid))
		goto done;
	if (ev == r->stack && r->unwinder) {
		hold(r, rec, cpu, pid);
		goto done;
	}
	print_head(r, rec, pid);
	if (ev == r->cookie)
		fprintf(r->out, "user_unwind_cookie: cookie=%" PRIx64 "\n",
			val(ev, "cookie", rec));
	else if (ev == r->stack)
		print_stack(r, rec, NULL);
	else if (ev == r->inode)
		print_inode(r, rec);
	else
		print_other(r, rec);
done:
	r->records++;
	if (r->draining)
		return 0;
	/* Stop this pass at a signal, or at the end of -d: the loop decides */
	if (stop_signal)
		return 1;
	if (r->deadline.tv_sec && !(r->records & 255)) {
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > r->deadline.tv_sec ||
		    (now.tv_sec == r->deadline.tv_sec && now.tv_nsec >= r->deadline.tv_nsec))
			return 1;
	}
	return 0;
}

/*
 * The raw buffers, read as libtracefs's tracefs_iterate_raw_events() does,
 * but in sub-buffers of any size (libtracefs 1.6 reads pages only, and the
 * copies need larger ones): every CPU's records in time order, until each
 * CPU has nothing more to give.  What a stopped pass leaves is kept for
 * the next.
 */
static void open_raw(struct recorder *r)
{
	char *s = tracefs_instance_file_read(instance, "buffer_subbuf_size_kb", NULL);
	long page = sysconf(_SC_PAGESIZE);

	r->subbuf = s ? strtoul(s, NULL, 10) * 1024 : 0;
	free(s);
	if (r->subbuf < (size_t)page)
		r->subbuf = (size_t)page;
	r->ncpus = (int)sysconf(_SC_NPROCESSORS_CONF);
	if (r->ncpus > MAX_CPUS)
		r->ncpus = MAX_CPUS;
	r->raw = xcalloc((size_t)r->ncpus, sizeof(*r->raw));
	for (int cpu = 0; cpu < r->ncpus; cpu++) {
		struct raw_cpu *c = &r->raw[cpu];
		char file[64], *path;

		snprintf(file, sizeof(file), "per_cpu/cpu%d/trace_pipe_raw", cpu);
		path = tracefs_instance_get_file(instance, file);
		c->fd = path ? open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
		tracefs_put_tracing_file(path);
		/* A CPU that is not there has no file */
		if (c->fd < 0)
			continue;
		/* The kernel's long size and byte order, from the page header */
		c->kbuf = tep_kbuffer(r->tep);
		if (!c->kbuf)
			die("cannot parse the ring buffer's pages: %s", strerror(errno));
		c->page = xmalloc(r->subbuf);
		c->rec.cpu = cpu;
	}
}

static void close_raw(struct recorder *r)
{
	for (int cpu = 0; cpu < r->ncpus; cpu++) {
		if (r->raw[cpu].fd < 0)
			continue;
		close(r->raw[cpu].fd);
		kbuffer_free(r->raw[cpu].kbuf);
		free(r->raw[cpu].page);
	}
	free(r->raw);
}

/* The CPU's next record, reading a sub-buffer if need be: false if none */
static bool raw_peek(struct recorder *r, struct raw_cpu *c)
{
	unsigned long long ts;
	void *data;

	if (c->loaded)
		return true;
	if (c->fd < 0)
		return false;
	data = c->have_page ? kbuffer_next_event(c->kbuf, &ts) : NULL;
	c->rec.missed_events = 0;
	while (!data) {
		ssize_t n;

		/*
		 * A sub-buffer read before its writer left it was not full:
		 * the rest waits for the next pass, not a read per record
		 */
		if (c->drained)
			return false;
		n = read(c->fd, c->page, r->subbuf);
		if (n <= 0)
			return false;
		c->have_page = kbuffer_load_subbuffer(c->kbuf, c->page) >= 0;
		if (!c->have_page)
			continue;
		c->drained = !r->draining &&
			     (size_t)kbuffer_subbuffer_size(c->kbuf) < r->subbuf / 2;
		c->rec.missed_events = kbuffer_missed_events(c->kbuf);
		data = kbuffer_read_event(c->kbuf, &ts);
	}
	c->rec.ts = ts;
	c->rec.data = data;
	c->rec.size = kbuffer_event_size(c->kbuf);
	c->loaded = true;
	return true;
}

static void read_raw(struct recorder *r)
{
	for (int cpu = 0; cpu < r->ncpus; cpu++)
		r->raw[cpu].drained = false;
	for (;;) {
		struct raw_cpu *best = NULL;
		struct tep_event *ev;

		for (int cpu = 0; cpu < r->ncpus; cpu++)
			if (raw_peek(r, &r->raw[cpu]) && (!best || r->raw[cpu].rec.ts < best->rec.ts))
				best = &r->raw[cpu];
		if (!best)
			return;
		best->loaded = false;
		ev = tep_find_event_by_record(r->tep, &best->rec);
		if (ev && on_record(ev, &best->rec, best->rec.cpu, r))
			return;
	}
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

/*
 * The copy of the stack's top with each stack, in sub-buffers that hold
 * it (the instance is ustack's own, and goes at the end).  Without the
 * file, or without CAP_PERFMON, the default gives way to frame pointers
 * only; a size the user gave does not.
 */
static void set_copy(struct recorder *r, unsigned long long copy, bool given,
		     unsigned long long buffer_kb)
{
	const char *why = NULL;
	unsigned int kb;
	char buf[32];
	int err = 0;

	if (!tracefs_file_exists(instance, COPY_FILE)) {
		why = "this kernel has no " COPY_FILE;
	} else {
		snprintf(buf, sizeof(buf), "%llu", copy);
		if (tracefs_instance_file_write(instance, COPY_FILE, buf) < 0) {
			err = errno;
			why = err == EPERM ? "setting " COPY_FILE " needs CAP_PERFMON" :
			      err == EOPNOTSUPP ? "this kernel records no user registers "
						  "(x86-64 with CONFIG_PERF_EVENTS only)" :
			      strerror(err);
		}
	}
	if (why && given)
		die("--copy: %s", why);
	if (why) {
		warnx_("no copies of the stack's top (%s): frames by frame pointers only; "
		       "--copy 0 says so without this warning", why);
		return;
	}
	/*
	 * Sub-buffers that hold some 16 copies with their mappings: a stack
	 * names its files again in each sub-buffer, so one copy a sub-buffer
	 * would name every file of every stack (order 7, 512 KiB, at most)
	 */
	for (kb = 16; kb < 512 && kb * 1024 < 16 * (copy + 2048); kb *= 2)
		;
	snprintf(buf, sizeof(buf), "%u", kb);
	if (tracefs_file_exists(instance, "buffer_subbuf_size_kb"))
		write_file("buffer_subbuf_size_kb", buf, "set the sub-buffer size for the copies");
	/* A stack then takes a sub-buffer: room for some hundreds a CPU,
	 * and 256 MiB in all at most */
	if (!buffer_kb) {
		long ncpus = sysconf(_SC_NPROCESSORS_CONF);

		snprintf(buf, sizeof(buf), "%ld", ncpus > 32 ? 262144 / ncpus : COPY_BUFFER_KB);
		write_file("buffer_size_kb", buf, "set the buffer size for the copies");
	}
	r->unwinder = copy_unwinder_new();
	r->held = map_new();
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

/* ustack's own events, which its instance records beside those asked for */
static const char *const own_events[] = {
	"user_unwind_cookie", "user_unwind_stack", "inode_cache", "user_unwind_copy",
};

/* Parse the format of SYS:NAME into @tep, if the kernel has it */
static bool load_format(struct tep_handle *tep, const char *sys, const char *name)
{
	int size = 0;
	char *buf = tracefs_event_file_read(NULL, sys, name, "format", &size);
	bool ok = buf && tep_parse_event(tep, buf, size, sys) == TEP_ERRNO__SUCCESS;

	free(buf);
	return ok;
}

/*
 * The formats of the events that the instance records, and no other:
 * tracefs_local_events_system() parses every event of each system (some
 * 700 of syscalls) and all of kallsyms
 */
static struct tep_handle *load_formats(char *const *sys, char *const *names, size_t n)
{
	struct tep_handle *tep = tep_alloc();
	int size = 0;
	char *header = tep ? tracefs_instance_file_read(NULL, "events/header_page", &size) : NULL;
	bool ok = header && !tep_parse_header_page(tep, header, size, sizeof(long));

	free(header);
	if (tep) {
		tep_set_file_bigendian(tep, tep_is_bigendian() ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
		tep_set_long_size(tep, sizeof(long));
		tep_set_page_size(tep, getpagesize());
	}
	for (size_t i = 0; ok && i < sizeof(own_events) / sizeof(own_events[0]); i++)
		load_format(tep, "ftrace", own_events[i]);
	for (size_t i = 0; ok && i < n; i++)
		ok = load_format(tep, sys[i], names[i]);
	if (!ok) {
		tep_free(tep);
		return NULL;
	}
	return tep;
}

/* The events of the run, each with the filter its -e was given */
struct events {
	char		**sys, **name;
	const char	**filter;
	size_t		n;
};

/*
 * Add the events that SPEC names: SYSTEM:EVENT, or SYSTEM for all of its
 * events, with shell globs in either ("syscalls:sys_enter_*"); the
 * series' own events are recorded anyway.  An event named twice is
 * added once, with the filter it came with first.
 */
static void add_events(struct events *ev, const char *spec, const char *filter)
{
	char *sys = xstrdup(spec), *name = strchr(sys, ':'), **systems, **names;
	size_t i, j, k, found = 0;

	if (name)
		*name++ = '\0';
	if (!*sys || (name && !*name))
		die("bad event '%s': give it as SYSTEM:EVENT or SYSTEM (globs allowed)", spec);
	systems = tracefs_event_systems(NULL);
	for (i = 0; systems && systems[i]; i++) {
		if (fnmatch(sys, systems[i], 0) || !strcmp(systems[i], "ftrace"))
			continue;
		names = tracefs_system_events(NULL, systems[i]);
		for (j = 0; names && names[j]; j++) {
			if (name && fnmatch(name, names[j], 0))
				continue;
			found++;
			for (k = 0; k < ev->n; k++)
				if (!strcmp(ev->sys[k], systems[i]) && !strcmp(ev->name[k], names[j]))
					break;
			if (k < ev->n)
				continue;
			ev->sys = xrealloc(ev->sys, (ev->n + 1) * sizeof(*ev->sys));
			ev->name = xrealloc(ev->name, (ev->n + 1) * sizeof(*ev->name));
			ev->filter = xrealloc(ev->filter, (ev->n + 1) * sizeof(*ev->filter));
			ev->sys[ev->n] = xstrdup(systems[i]);
			ev->name[ev->n] = xstrdup(names[j]);
			ev->filter[ev->n++] = filter;
		}
		tracefs_list_free(names);
	}
	tracefs_list_free(systems);
	if (!found)
		die("no event %s in this kernel (see %s/available_events)", spec,
		    tracefs_tracing_dir());
	free(sys);
}

/* A process given with -p: its thread group, held by a pidfd */
struct target {
	pid_t	pid;
	int	pidfd;
	bool	gone;
};

static bool parse_uint(const char *s, unsigned long long max, unsigned long long *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return !errno && !*end && *v <= max;
}

/* -p PID[,PID]...: each checked to be a process now, and held */
static void add_targets(struct target **t, size_t *n, const char *arg)
{
	char *list = xstrdup(arg), *tok, *save = NULL;

	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned long long v;
		char file[64], line[256];
		pid_t tgid = -1;
		FILE *f;
		int fd;

		if (!parse_uint(tok, 1 << 22, &v) || !v)
			die("-p: '%s' is not a process ID", tok);
		snprintf(file, sizeof(file), "/proc/%llu/status", v);
		f = fopen(file, "re");
		if (!f)
			die("-p %llu: no such process", v);
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "Tgid: %d", &tgid) == 1)
				break;
		fclose(f);
		if (tgid <= 0)
			die("-p %llu: no such process", v);
		if ((unsigned long long)tgid != v)
			warnx_("-p %llu is a thread of process %d: attaching to all of its threads",
			       v, (int)tgid);
		fd = (int)pidfd_open(tgid, 0);
		if (fd < 0)
			die("-p %llu: %s", v, errno == ESRCH ? "no such process" : strerror(errno));
		*t = xrealloc(*t, (*n + 1) * sizeof(**t));
		(*t)[(*n)++] = (struct target) { .pid = tgid, .pidfd = fd };
	}
	free(list);
}

/* Has every attached process exited?  Asked of the pidfds: no signal */
static bool targets_gone(struct target *t, size_t n)
{
	size_t i, gone = 0;

	for (i = 0; i < n; i++) {
		struct pollfd p = { .fd = t[i].pidfd, .events = POLLIN };

		if (!t[i].gone && poll(&p, 1, 0) == 1)
			t[i].gone = true;
		gone += t[i].gone;
	}
	return n && gone == n;
}

struct pidlist {
	char	*buf;
	size_t	len, cap;
	int	*tids;
	size_t	ntids;
};

static bool pidlist_has(const struct pidlist *l, int tid)
{
	for (size_t i = 0; i < l->ntids; i++)
		if (l->tids[i] == tid)
			return true;
	return false;
}

/*
 * The threads of each target not in the list yet, added to it and to
 * set_event_pid (appended: tasks followed by event-fork stay), and named
 * for the trace.  Returns how many were new.
 */
static size_t attach_threads(struct recorder *r, struct target *t, size_t n,
			     struct pidlist *l, bool first)
{
	size_t i, added = 0;

	l->len = 0;
	for (i = 0; i < n; i++) {
		char dir[64];
		struct dirent *de;
		DIR *d;

		snprintf(dir, sizeof(dir), "/proc/%d/task", (int)t[i].pid);
		d = opendir(dir);
		if (!d)
			continue;	/* exited: the pidfd will tell */
		while ((de = readdir(d))) {
			unsigned long long tid;
			char num[16];
			int k;

			if (!parse_uint(de->d_name, 1 << 22, &tid) || pidlist_has(l, (int)tid))
				continue;
			l->tids = xrealloc(l->tids, (l->ntids + 1) * sizeof(*l->tids));
			l->tids[l->ntids++] = (int)tid;
			k = snprintf(num, sizeof(num), "%llu ", tid);
			if (l->len + (size_t)k + 1 > l->cap) {
				l->cap = (l->len + (size_t)k + 1) * 2;
				l->buf = xrealloc(l->buf, l->cap);
			}
			memcpy(l->buf + l->len, num, (size_t)k + 1);
			l->len += (size_t)k;
			proc_comm(r->tep, (int)tid);
			added++;
		}
		closedir(d);
	}
	if (added && (first ? tracefs_instance_file_write(instance, "set_event_pid", l->buf) :
			      tracefs_instance_file_append(instance, "set_event_pid", l->buf)) < 0)
		die("cannot attach (set_event_pid): %s", strerror(errno));
	return added;
}

static bool time_up(const struct timespec *deadline)
{
	struct timespec now;

	if (!deadline->tv_sec)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > deadline->tv_sec ||
	       (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}

int cmd_record(int argc, char **argv)
{
	const char *out_path = "ustack.trace";
	char **events = NULL, name[64], pidbuf[32];
	const char **filters = NULL;
	struct events ev = { 0 };
	size_t nevents = 0, ntargets = 0, i;
	struct recorder r = { 0 };
	struct timespec poll_ts = { 0, POLL_NS };
	struct target *targets = NULL;
	struct pidlist tids = { 0 };
	struct output *out;
	struct stat st;
	unsigned long long buffer_kb = 0;
	double duration = 0;
	int opt, go = -1, exec_err = -1, status = 0, e;
	bool all = false, have_cmd, exited = false, ended_by_time = false, targets_exited = false;
	bool off_cpu = false, wakers = false, copy_given = false, stats = false;
	unsigned long long copy = DEFAULT_COPY;
	pid_t child = -1, watchdog;

	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "buffer-size", required_argument, NULL, 'b' },
		{ "off-cpu", no_argument, NULL, 'O' },
		{ "wakers", no_argument, NULL, 'W' },
		{ "copy", required_argument, NULL, 'C' },
		{ "stats", no_argument, NULL, 'S' },
		{ "filter", required_argument, NULL, 'F' },
		{ NULL, 0, NULL, 0 },
	};

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:e:o:p:ad:b:h", longopts, NULL)) != -1) {
		char *end;

		switch (opt) {
		case 'e':
			events = xrealloc(events, (nevents + 1) * sizeof(*events));
			filters = xrealloc(filters, (nevents + 1) * sizeof(*filters));
			filters[nevents] = NULL;
			events[nevents++] = optarg;
			break;
		case 'F':
			/* As perf's: the filter of the -e before it */
			if (!nevents)
				die("--filter '%s' goes after the -e whose events it filters", optarg);
			if (filters[nevents - 1])
				die("-e %s has two filters: join them with && in one", events[nevents - 1]);
			filters[nevents - 1] = optarg;
			break;
		case 'o':
			out_path = optarg;
			break;
		case 'p':
			add_targets(&targets, &ntargets, optarg);
			break;
		case 'a':
			all = true;
			break;
		case 'd':
			errno = 0;
			duration = strtod(optarg, &end);
			if (errno || end == optarg || *end || !isfinite(duration) ||
			    duration <= 0 || duration > 1e9)
				die("-d: '%s' is not a duration in seconds", optarg);
			break;
		case 'b':
			if (!parse_uint(optarg, 1ULL << 32, &buffer_kb) || !buffer_kb)
				die("--buffer-size: '%s' is not a size in KB", optarg);
			break;
		case 'O':
			off_cpu = true;
			break;
		case 'W':
			off_cpu = wakers = true;
			break;
		case 'S':
			stats = true;
			break;
		case 'C':
			if (!parse_uint(optarg, 32768, &copy))
				die("--copy: '%s' is not a number of bytes from 0 to 32768", optarg);
			copy_given = true;
			break;
		case 'h':
			usage(true);
			break;
		default:
			bad_option("record", opt, argv);
			usage(false);
		}
	}
	have_cmd = optind < argc;
	if (all && ntargets)
		die("-p and -a cannot go together: -a traces every user task already");
	if (have_cmd && (all || ntargets))
		die("%s attaches to running tasks: give no command with it (or drop %s)",
		    all ? "-a" : "-p", all ? "-a" : "-p");
	if (!have_cmd && !all && !ntargets) {
		warnx_("give a command to run, -p PID to attach to a process, or -a");
		usage(false);
	}
	if (off_cpu) {
		events = xrealloc(events, (nevents + 2) * sizeof(*events));
		filters = xrealloc(filters, (nevents + 2) * sizeof(*filters));
		filters[nevents] = NULL;
		events[nevents++] = OFF_CPU_EVENT;
		if (wakers) {
			filters[nevents] = NULL;
			events[nevents++] = WAKER_EVENT;
		}
	}
	if (!nevents) {
		events = xmalloc(sizeof(*events));
		filters = xcalloc(1, sizeof(*filters));
		events[nevents++] = DEFAULT_EVENT;
	}

	check_tracefs();
	snprintf(name, sizeof(name), "ustack-%d", (int)getpid());
	atexit(remove_instance);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	watchdog = start_watchdog(name);
	instance = tracefs_instance_create(name);
	if (!instance)
		die("cannot create tracefs instance %s: %s", name, strerror(errno));
	if (!tracefs_file_exists(instance, OPTION))
		die("this kernel has no " OPTION ": it needs the deferred user stack series, "
		    "built with CONFIG_UNWIND_USER");
	/* Nothing is recorded until all is set: no event without its cookie */
	write_file("tracing_on", "0", "turn tracing off");
	/* The sub-buffers first: changing them allocates the buffer anew */
	if (copy)
		set_copy(&r, copy, copy_given, buffer_kb);
	if (buffer_kb) {
		snprintf(pidbuf, sizeof(pidbuf), "%llu", buffer_kb);
		write_file("buffer_size_kb", pidbuf, "set the buffer size");
	}
	/* A task leaves the CPU on one CPU and comes back on another */
	if (off_cpu && tracefs_instance_file_write(instance, "trace_clock", "mono") < 0)
		write_file("trace_clock", "global", "set a clock that CPUs share");

	for (i = 0; i < nevents; i++)
		add_events(&ev, events[i], filters[i]);
	r.tep = load_formats(ev.sys, ev.name, ev.n);
	if (!r.tep)
		die("cannot read the event formats: %s", strerror(errno));
	r.cookie = tep_find_event_by_name(r.tep, "ftrace", "user_unwind_cookie");
	r.stack = tep_find_event_by_name(r.tep, "ftrace", "user_unwind_stack");
	r.inode = tep_find_event_by_name(r.tep, "ftrace", "inode_cache");
	if (!r.cookie || !r.stack || !r.inode)
		die("this kernel lacks the user_unwind_cookie, user_unwind_stack or inode_cache event");
	if (stack_format_lacks(r.stack))
		die("this kernel's user_unwind_stack has no field %s: ustack reads the layout "
		    "of series v8 and later", stack_format_lacks(r.stack));
	if (r.unwinder) {
		r.copy = tep_find_event_by_name(r.tep, "ftrace", "user_unwind_copy");
		if (!r.copy || copy_format_lacks(r.copy))
			die("this kernel has " COPY_FILE " but no user_unwind_copy event that "
			    "ustack can read");
	}
	r.sched_switch = tep_find_event_by_name(r.tep, "sched", "sched_switch");
	r.build_id = tep_find_field(r.inode, "build_id") != NULL;
	r.build_id_state = tep_find_field(r.inode, "build_id_state") != NULL;

	open_raw(&r);
	/* Beside the file, renamed over it at the end: a run that fails keeps it */
	out = output_open(out_path);
	if (!out)
		exit(2);
	r.out = output_stream(out);
	trace_seq_init(&r.seq);
	r.proc_tried = map_new();
	r.tgids = map_new();
	fprintf(r.out, "# ustack record:");
	if (off_cpu)
		fprintf(r.out, wakers ? " --wakers" : " --off-cpu");
	if (all)
		fprintf(r.out, " -a");
	for (i = 0; i < ntargets; i++)
		fprintf(r.out, "%s%d", i ? "," : " -p ", (int)targets[i].pid);
	if (duration > 0)
		fprintf(r.out, " -d %g", duration);
	/* The command's words escaped as paths are: a newline in one would
	 * end the comment */
	for (i = (size_t)optind; i < (size_t)argc; i++) {
		fputs(i == (size_t)optind && (all || ntargets || duration > 0) ? " -- " : " ", r.out);
		path_escape(r.out, argv[i], strlen(argv[i]));
	}
	fprintf(r.out, "\n# tracer: nop\n#\n");

	/* Children of the followed tasks are followed: set before the PIDs */
	if (!all)
		write_file("options/event-fork", "1", "follow children");
	if (have_cmd) {
		child = start_command(argv + optind, &go, &exec_err);
		snprintf(pidbuf, sizeof(pidbuf), "%d", (int)child);
		write_file("set_event_pid", pidbuf, "follow the command");
	} else if (ntargets) {
		/* Threads started while the list was written: until none is new */
		attach_threads(&r, targets, ntargets, &tids, true);
		for (i = 0; i < 100 && attach_threads(&r, targets, ntargets, &tids, false); i++)
			;
		if (!tids.ntids)
			die("-p: every process given has exited already");
	} else if (tracefs_file_exists(instance, "set_event_notrace_pid")) {
		/* -a: not ustack's own reading of the buffer, nor its watchdog */
		snprintf(pidbuf, sizeof(pidbuf), "%d %d", (int)getpid(), (int)watchdog);
		write_file("set_event_notrace_pid", pidbuf, "leave ustack out");
	}
	e = tracefs_instance_file_write(instance, OPTION, "1");
	if (e < 0) {
		e = errno;
		if (child > 0) {
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
		}
		if (e == EBUSY)
			die("cannot set userstacktrace_delay: no deferred unwinder slot is free "
			    "(too many instances with the option set, or perf users)");
		die("cannot set userstacktrace_delay: %s", strerror(e));
	}
	for (i = 0; i < ev.n; i++) {
		if (ev.filter[i] &&
		    tracefs_event_file_write(instance, ev.sys[i], ev.name[i], "filter",
					     ev.filter[i]) < 0)
			die("--filter '%s': %s:%s refused it (%s); see the fields in %s/events/%s/%s/format",
			    ev.filter[i], ev.sys[i], ev.name[i], strerror(errno),
			    tracefs_tracing_dir(), ev.sys[i], ev.name[i]);
		if (tracefs_event_enable(instance, ev.sys[i], ev.name[i]))
			die("cannot enable %s:%s: %s", ev.sys[i], ev.name[i], strerror(errno));
	}
	/* report --pid takes processes: the kernel keeps each thread's, as tracefs's (TGID) */
	tracefs_instance_file_write(instance, "options/record-tgid", "1");
	write_file("tracing_on", "1", "turn tracing on");
	if (duration > 0) {
		time_t whole = (time_t)duration;

		clock_gettime(CLOCK_MONOTONIC, &r.deadline);
		r.deadline.tv_sec += whole;
		r.deadline.tv_nsec += (long)((duration - (double)whole) * 1e9);
		if (r.deadline.tv_nsec >= 1000000000L) {
			r.deadline.tv_sec++;
			r.deadline.tv_nsec -= 1000000000L;
		}
	}
	if (have_cmd) {
		if (write(go, "g", 1) != 1)
			die("cannot start the command: %s", strerror(errno));
		close(go);
		if (read(exec_err, &e, sizeof(e)) == sizeof(e)) {
			waitpid(child, NULL, 0);
			die("cannot run %s: %s", argv[optind], strerror(e));
		}
		close(exec_err);
	}

	while (!exited) {
		r.comms_fresh = false;
		r.tgids_fresh = false;
		read_raw(&r);
		if (have_cmd && waitpid(child, &status, WNOHANG) == child)
			break;
		if (!ended_by_time && time_up(&r.deadline))
			ended_by_time = true;
		if (stop_signal || ended_by_time) {
			/* The command stops as on Ctrl-C; attached tasks are left alone */
			if (have_cmd && !wait_stopped(child, &status))
				warnx_("cannot wait for the command: %s", strerror(errno));
			break;
		}
		if (ntargets && targets_gone(targets, ntargets)) {
			targets_exited = true;
			break;
		}
		nanosleep(&poll_ts, NULL);
	}
	/*
	 * No new event, then a moment for the stacks of the last ones (they
	 * come when their tasks return to user space), then tracing off
	 */
	for (i = 0; i < ev.n; i++)
		tracefs_event_disable(instance, ev.sys[i], ev.name[i]);
	nanosleep(&poll_ts, NULL);
	write_file("tracing_on", "0", "turn tracing off");
	write_file(OPTION, "0", "clear userstacktrace_delay");
	/* What was recorded after the last pass: everything, signals or not */
	r.comms_fresh = false;
	r.tgids_fresh = false;
	r.draining = true;
	read_raw(&r);
	release_all(&r);
	map_free(r.held, NULL);
	report_unseen_losses(&r);

	fprintf(r.out, "# ustack record: ended (%s): %lu records, %lu stacks, %lu events lost\n",
		stop_signal ? strsignal(stop_signal) : ended_by_time ? "duration" :
		targets_exited ? "attached processes exited" : "command exited",
		r.records, r.stacks, r.lost);
	/* The previous trace, as perf keeps perf.data.old */
	if (strcmp(out_path, "-") && !stat(out_path, &st) && S_ISREG(st.st_mode)) {
		char *old;

		if (asprintf(&old, "%s.old", out_path) < 0)
			die("out of memory");
		/* A second name, so that a commit that fails leaves FILE itself */
		unlink(old);
		if (link(out_path, old))
			warnx_("cannot keep the previous %s as %s: %s", out_path, old,
			       strerror(errno));
		free(old);
	}
	if (output_commit(out))
		exit(2);
	fprintf(stderr, "ustack: %lu records, %lu stacks, %lu events lost, written to %s\n",
		r.records, r.stacks, r.lost, out_path);
	if (r.unwinder) {
		unsigned long sets, opened;

		copy_unwinder_counts(r.unwinder, &sets, &opened);
		fprintf(stderr, "ustack: %lu stacks with a copy of their top; %lu frames found "
			"by its CFI unwind; %lu sets of mappings, %lu of them opened anew\n",
			r.copies, r.copy_frames, sets, opened);
	}
	if (stats) {
		struct rusage ru;

		/* Its own: not the command's, nor the kernel's work in it */
		getrusage(RUSAGE_SELF, &ru);
		fprintf(stderr, "ustack: record's own CPU time %.3f s (user %.3f s, system %.3f s), "
			"peak memory %ld KiB\n",
			(double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
			(double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
			(double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
			(double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss);
	}
	trace_seq_destroy(&r.seq);
	stack_frames_free(&r.frames);
	copy_unwinder_free(r.unwinder);
	free(r.path);
	close_raw(&r);
	map_free(r.proc_tried, NULL);
	map_free(r.tgids, NULL);
	tep_free(r.tep);
	for (i = 0; i < ev.n; i++) {
		free(ev.sys[i]);
		free(ev.name[i]);
	}
	for (i = 0; i < ntargets; i++)
		close(targets[i].pidfd);
	free(targets);
	free(tids.buf);
	free(tids.tids);
	free(ev.sys);
	free(ev.name);
	free(ev.filter);
	free(filters);
	free(events);
	remove_instance();
	if (!have_cmd || (ended_by_time && !stop_signal))
		return 0;
	if (stop_signal)
		return 128 + stop_signal;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
