// SPDX-License-Identifier: GPL-2.0
/*
 * Read a trace as records, whatever produced it:
 *  - a trace-cmd recording (trace.dat), in process with libtracecmd: the
 *    fields come from libtraceevent, by name, through the events' format
 *    files stored in the file;
 *  - the text of tracefs's trace or trace_pipe, and ustack record's
 *    output, which has the same form.  The text of "trace-cmd report" is
 *    refused: the trace.dat it was made from is the better input.
 *
 * A text line is "COMM-PID [CPU] FLAGS TS: EVENT: ...", and the fields of
 * each of the series' events are taken in the order the kernel prints
 * them, from the event's name on, never by searching the line: a path is
 * the rest of its line and may hold anything.  A record of the series'
 * events that does not parse is malformed: it is named on standard error
 * (with its line), counted, and makes the report exit 2.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <regex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <glib.h>
#include <trace-cmd.h>

#include "ustack.h"

#define MAX_PID		(1 << 22)	/* PID_MAX_LIMIT */
#define MAX_CPU		(1 << 16)
#define MAX_ERRNO	4095
#define BUILD_ID_BYTES	BUILD_ID_MAX

struct input {
	FILE		*f;
	const char	*name;
	bool		dat;		/* a trace.dat, read with libtracecmd */
	unsigned long	skipped;	/* lines neither records nor headers */
	unsigned long	malformed;	/* records of our events that do not parse */
	struct frame	*frames;
	size_t		frames_cap;
	char		*path;		/* REC_INODE's path */
	size_t		path_cap;
	unsigned char	build_id[BUILD_ID_BYTES];	/* REC_INODE's build-id */

	int		spool_fd;	/* a trace.dat from standard input, or -1 */

	/* text */
	bool		seen_event;
	bool		is_trace;	/* a header or an event of the series was seen */
	char		*start;		/* the lines read to tell what the file is */
	size_t		start_len, start_pos;
	char		*event_name;	/* REC_EVENT's name */
	size_t		event_name_cap;
	char		*line;		/* the line being parsed */
	size_t		line_cap;
	char		*ahead;		/* a line given back by unread_line */
	size_t		ahead_cap;
	bool		have_ahead;
	bool		cut_line;	/* the last line had no newline */
	unsigned long	lineno;
	regex_t		re_lost, re_dropped, re_entries;

	/* trace.dat */
	struct tracecmd_input	*tc;
	struct tep_handle	*tep;
	struct tep_event	*ev_cookie, *ev_stack, *ev_inode;
	struct tep_event	*ev_copy;	/* user_unwind_copy, on kernels that have it */
	struct copy_unwinder	*unwinder;
	struct stack_frames	sf;
	int			ncpus;
	GQueue			*read_ahead;	/* each CPU's next records, in order; empty at its end */
	struct tep_record	*cur;		/* taken, its loss not yet given */
	struct trace_seq	seq;
};

/* libtracecmd's handle, also when a die() ends the process */
static struct tracecmd_input *open_handle;

static const char TRACE_DAT_MAGIC[] = "\027\010\104tracing";

static void compile(regex_t *re, const char *pattern)
{
	if (regcomp(re, pattern, REG_EXTENDED))
		die("internal error: bad pattern %s", pattern);
}

static void malformed(struct input *in, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A record that does not parse: name the first few */
static void malformed(struct input *in, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	in->malformed++;
	if (in->malformed > 5)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (in->dat)
		warnx_("%s: %s", in->name, msg);
	else
		warnx_("%s:%lu: %s", in->name, in->lineno, msg);
}

static void want_frames(struct input *in, size_t nr)
{
	if (nr > in->frames_cap) {
		in->frames_cap = nr * 2;
		in->frames = xrealloc(in->frames, in->frames_cap * sizeof(*in->frames));
	}
}

static const char *set_path(struct input *in, const char *s, size_t len)
{
	if (len + 1 > in->path_cap) {
		in->path_cap = len + 1;
		in->path = xrealloc(in->path, in->path_cap);
	}
	memcpy(in->path, s, len);
	in->path[len] = '\0';
	path_unescape(in->path);
	return in->path;
}

/* --- trace.dat, with libtracecmd and libtraceevent */

/* How the header probe's child ends when it did not crash */
enum { PROBE_READ = 0, PROBE_UNREADABLE = 3 };

/*
 * libtraceevent 1.7 can crash parsing a damaged event format (found by
 * tests/fuzz, seed 19308).  The headers, formats among them, are parsed
 * first in a child, so that such a file gets an error rather than a
 * crash; the parse costs milliseconds.  A file the child cannot open is
 * left to the parse that counts, which says why.
 */
static void dat_probe_headers(const char *path, const char *name)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL }, old_chld;
	const struct rlimit no_core = { 0, 0 };
	struct tracecmd_input *h;
	int status, null;
	pid_t pid;

	/* With SIGCHLD ignored, the child could not be waited for */
	sigaction(SIGCHLD, &dfl, &old_chld);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("%s: cannot fork to read the recording's headers: %s", name, strerror(errno));
	if (!pid) {
		/* Its output comes again from the parse that counts */
		null = open("/dev/null", O_WRONLY);
		if (null >= 0) {
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
			close(null);
		}
		/* Die of the signal, even under ASan, and leave no core */
		sigaction(SIGSEGV, &dfl, NULL);
		sigaction(SIGBUS, &dfl, NULL);
		sigaction(SIGFPE, &dfl, NULL);
		setrlimit(RLIMIT_CORE, &no_core);
		h = tracecmd_open_head(path, TRACECMD_FL_LOAD_NO_PLUGINS);
		_exit(h ? PROBE_READ : PROBE_UNREADABLE);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("%s: waiting for the header probe: %s", name, strerror(errno));
	sigaction(SIGCHLD, &old_chld, NULL);
	if (WIFSIGNALED(status))
		die("%s: reading its headers crashed libtraceevent (%s): the recording is corrupt",
		    name, strsignal(WTERMSIG(status)));
	/* A sanitizer's report, for one */
	if (WEXITSTATUS(status) != PROBE_READ && WEXITSTATUS(status) != PROBE_UNREADABLE)
		die("%s: reading its headers failed in libtraceevent (exit %d): the recording is corrupt",
		    name, WEXITSTATUS(status));
}

static void dat_open(struct input *in, const char *path)
{
	const char *lacks;

	dat_probe_headers(path, in->name);

	/*
	 * tracecmd_open() is open_head + init_data; on a file cut short,
	 * its cleanup crashes in libtracecmd 1.3 (a NULL dereference in
	 * tracecmd_close), so the two are called here and a failed handle
	 * is left to the exit.
	 */
	open_handle = tracecmd_open_head(path, TRACECMD_FL_LOAD_NO_PLUGINS);
	if (!open_handle)
		die("%s: not a readable trace-cmd recording: its headers are cut short or corrupt",
		    in->name);
	if (tracecmd_init_data(open_handle) < 0)
		die("%s: the trace-cmd recording's data cannot be read: the file is cut short or corrupt",
		    in->name);
	in->tc = open_handle;
	in->tep = tracecmd_get_tep(in->tc);
	in->ncpus = tep_get_cpus(in->tep);
	if (!in->tep || in->ncpus <= 0 || in->ncpus > MAX_CPU)
		die("%s: a trace-cmd recording without CPUs", in->name);
	in->ev_cookie = tep_find_event_by_name(in->tep, "ftrace", "user_unwind_cookie");
	in->ev_stack = tep_find_event_by_name(in->tep, "ftrace", "user_unwind_stack");
	in->ev_inode = tep_find_event_by_name(in->tep, "ftrace", "inode_cache");
	if (!in->ev_cookie || !in->ev_stack || !in->ev_inode)
		die("%s: the recording has no format for user_unwind_cookie, user_unwind_stack "
		    "or inode_cache: it was not made on a kernel with the deferred user stack series",
		    in->name);
	/* Every field this reader takes must be in the formats, by name */
	lacks = stack_format_lacks(in->ev_stack);
	if (lacks)
		die("%s: user_unwind_stack has no field %s: the recording was made on a kernel "
		    "whose stack records ustack cannot read (a series before v8)", in->name, lacks);
	if (!tep_find_field(in->ev_cookie, "cookie") ||
	    !tep_find_field(in->ev_inode, "ino") || !tep_find_field(in->ev_inode, "dev") ||
	    !tep_find_field(in->ev_inode, "err") || !tep_find_field(in->ev_inode, "path"))
		die("%s: the formats of the series' events lack a field ustack reads", in->name);
	in->ev_copy = tep_find_event_by_name(in->tep, "ftrace", "user_unwind_copy");
	if (in->ev_copy && !copy_format_lacks(in->ev_copy))
		in->unwinder = copy_unwinder_new();
	in->read_ahead = xcalloc((size_t)in->ncpus, sizeof(*in->read_ahead));
	for (int cpu = 0; cpu < in->ncpus; cpu++) {
		struct tep_record *r = tracecmd_read_cpu_first(in->tc, cpu);

		g_queue_init(&in->read_ahead[cpu]);
		if (r)
			g_queue_push_tail(&in->read_ahead[cpu], r);
	}
	trace_seq_init(&in->seq);
	in->dat = true;
}

/* A field of the record, by name; a record too short is malformed */
static bool dat_num(struct input *in, struct tep_event *ev, struct tep_record *r,
		    const char *name, unsigned long long *v)
{
	const char *why = NULL;

	if (field_num(ev, r, name, v, &why))
		return true;
	malformed(in, "%s: field %s: %s", ev->name, name, why);
	return false;
}

static const unsigned char *dat_array(struct input *in, struct tep_event *ev,
				      struct tep_record *r, const char *name,
				      size_t elem, size_t *nr)
{
	const char *why = NULL;
	const unsigned char *p = field_array(ev, r, name, elem, nr, &why);

	if (!p)
		malformed(in, "%s: array %s: %s", ev->name, name, why);
	return p;
}

/* The record N places ahead on CPU, read as needed; NULL past the last */
static struct tep_record *dat_ahead(struct input *in, int cpu, unsigned int n)
{
	GQueue *q = &in->read_ahead[cpu];
	struct tep_record *r;

	while (q->length <= n) {
		r = tracecmd_read_data(in->tc, cpu);
		if (!r)
			return NULL;
		g_queue_push_tail(q, r);
	}
	return g_queue_peek_nth(q, n);
}

/* Takes the record N places ahead on CPU, keeping the next one read */
static struct tep_record *dat_take(struct input *in, int cpu, unsigned int n)
{
	struct tep_record *r = g_queue_pop_nth(&in->read_ahead[cpu], n);

	dat_ahead(in, cpu, 0);
	return r;
}

/* common_flags: TRACE_FLAG_HARDIRQ 0x08, _SOFTIRQ 0x10, _NMI 0x40 */
static char irq_of_flags(int flags)
{
	return flags < 0 ? 0 : flags & 0x40 ? 'n' : flags & 0x08 ? 'h' : flags & 0x10 ? 's' : 0;
}

/* How far past its stack a copy is looked for, in records */
#define COPY_AHEAD	256

/*
 * The copy of the stack's top follows the stack on its CPU with its
 * cookie: the kernel records both with preemption off, so only records of
 * interrupts (and NMIs) can come between.  It is unwound into the stack's
 * frames and taken with it; the records before it stay where they are.
 */
static void dat_copy(struct input *in, struct tep_record *stack, struct rec *rec)
{
	const char *why = NULL;
	struct tep_record *r;
	uint64_t cookie;
	unsigned int n;

	for (n = 0; n < COPY_AHEAD; n++) {
		r = dat_ahead(in, stack->cpu, n);
		if (!r || r->missed_events)
			return;
		if (tep_find_event_by_record(in->tep, r) == in->ev_copy)
			break;
		if (!irq_of_flags(tep_data_flags(in->tep, r)))
			return;
	}
	if (n == COPY_AHEAD || !copy_cookie(in->ev_copy, r, &cookie) || cookie != in->sf.cookie)
		return;
	r = dat_take(in, stack->cpu, n);
	if (!copy_merge(in->unwinder, in->ev_copy, r, &in->sf, &rec->copy_edge, &why))
		malformed(in, "user_unwind_copy: %s", why);
	tracecmd_free_record(r);
}

static bool dat_stack(struct input *in, struct tep_record *r, struct rec *rec)
{
	const char *why = NULL;

	if (!stack_decode(in->ev_stack, r, &in->sf, &why)) {
		malformed(in, "user_unwind_stack: %s", why);
		return false;
	}
	if (in->unwinder)
		dat_copy(in, r, rec);
	rec->type = REC_STACK;
	rec->cookie = in->sf.cookie;
	rec->lost = in->sf.lost;
	rec->nr = in->sf.nr;
	rec->frames = in->sf.frames;
	return true;
}

static bool dat_inode(struct input *in, struct tep_record *r, struct rec *rec)
{
	struct tep_event *ev = in->ev_inode;
	unsigned long long ino, dev, err, state;
	const unsigned char *p;
	size_t len;
	int e;

	if (!dat_num(in, ev, r, "ino", &ino) || !dat_num(in, ev, r, "dev", &dev) ||
	    !dat_num(in, ev, r, "err", &err))
		return false;
	p = dat_array(in, ev, r, "path", 1, &len);
	if (!p)
		return false;
	e = (int)(int32_t)(uint32_t)err;
	if (e > 0 || e < -MAX_ERRNO) {
		malformed(in, "inode_cache with error %d, not -errno", e);
		return false;
	}
	/* The build-id, on kernels that give it: length 0 is "none" */
	if (tep_find_field(ev, "build_id")) {
		const unsigned char *id;
		size_t n;

		id = dat_array(in, ev, r, "build_id", 1, &n);
		if (!id)
			return false;
		if (n > BUILD_ID_BYTES) {
			malformed(in, "inode_cache with a build-id of %zu bytes, more than %d",
				  n, BUILD_ID_BYTES);
			return false;
		}
		memcpy(in->build_id, id, n);
		rec->build_id = in->build_id;
		rec->build_id_len = n;
		/* Not in the page cache (state 2): as if the kernel gave none */
		if (!n && tep_find_field(ev, "build_id_state") &&
		    dat_num(in, ev, r, "build_id_state", &state) && state == 2)
			rec->build_id = NULL;
	}
	rec->type = REC_INODE;
	rec->ino = ino;
	rec->dev = (uint32_t)dev;
	len = strnlen((const char *)p, len);
	if (e || !len) {
		rec->err = e ? e : -ENOENT;
		rec->path = NULL;
	} else {
		rec->path = set_path(in, (const char *)p, len);
	}
	if (in->unwinder)
		copy_unwinder_name(in->unwinder, rec->ino, rec->dev, rec->path,
				   rec->build_id, rec->build_id_len);
	return true;
}

static bool dat_decode(struct input *in, struct tep_record *r, struct rec *rec)
{
	struct tep_event *ev = tep_find_event_by_record(in->tep, r);
	unsigned long long v;
	char *p;

	if (!ev) {
		malformed(in, "a record of an event type the file has no format for");
		return false;
	}
	rec->pid = tep_data_pid(in->tep, r);
	rec->irq = irq_of_flags(tep_data_flags(in->tep, r));
	rec->flags = true;
	snprintf(rec->comm, sizeof(rec->comm), "%s", tep_data_comm_from_pid(in->tep, rec->pid));
	snprintf(rec->ts, sizeof(rec->ts), "%llu.%09llu", r->ts / 1000000000ULL,
		 r->ts % 1000000000ULL);
	if (ev == in->ev_cookie) {
		if (!dat_num(in, ev, r, "cookie", &v))
			return false;
		rec->type = REC_COOKIE;
		rec->cookie = v;
		return true;
	}
	if (ev == in->ev_stack)
		return dat_stack(in, r, rec);
	if (ev == in->ev_inode)
		return dat_inode(in, r, rec);
	/* A copy that did not follow its stack: it asks for no stack */
	if (ev == in->ev_copy)
		return false;
	trace_seq_reset(&in->seq);
	tep_print_event(in->tep, &in->seq, r, "%s: %s", TEP_PRINT_NAME, TEP_PRINT_INFO);
	trace_seq_terminate(&in->seq);
	for (p = in->seq.buffer; *p; p++)
		if (*p == '\n')
			*p = ' ';
	rec->type = REC_EVENT;
	rec->text = in->seq.buffer;
	rec->name = ev->name;
	return true;
}

/* The records of all CPUs, in time order */
static int dat_next(struct input *in, struct rec *rec)
{
	for (;;) {
		struct tep_record *r;
		bool ok;

		if (!in->cur) {
			struct tep_record *first = NULL, *next;
			int cpu, best = -1;

			for (cpu = 0; cpu < in->ncpus; cpu++) {
				next = g_queue_peek_head(&in->read_ahead[cpu]);
				if (next && (!first || next->ts < first->ts)) {
					first = next;
					best = cpu;
				}
			}
			if (best < 0)
				return 0;
			in->cur = dat_take(in, best, 0);
			/* The ring buffer lost events before this record */
			if (in->cur->missed_events) {
				memset(rec, 0, sizeof(*rec));
				rec->type = REC_LOST;
				rec->cpu = best;
				rec->lost = in->cur->missed_events > 0 ?
					    (uint64_t)in->cur->missed_events : 0;
				return 1;
			}
		}
		r = in->cur;
		in->cur = NULL;
		memset(rec, 0, sizeof(*rec));
		rec->cpu = r->cpu;
		ok = dat_decode(in, r, rec);
		tracecmd_free_record(r);
		if (ok)
			return 1;
	}
}

/* --- text */

static void swap_lines(struct input *in)
{
	char *t = in->line;
	size_t c = in->line_cap;

	in->line = in->ahead;
	in->line_cap = in->ahead_cap;
	in->ahead = t;
	in->ahead_cap = c;
}

/* The next line of the start read by input_open, or of the file; its length */
static ssize_t read_line(struct input *in)
{
	const char *p, *nl;
	size_t n;

	if (in->start_pos >= in->start_len)
		return getline(&in->line, &in->line_cap, in->f);
	p = in->start + in->start_pos;
	nl = memchr(p, '\n', in->start_len - in->start_pos);
	n = nl ? (size_t)(nl - p) + 1 : in->start_len - in->start_pos;
	if (n + 1 > in->line_cap) {
		in->line_cap = n + 1;
		in->line = xrealloc(in->line, in->line_cap);
	}
	memcpy(in->line, p, n);
	in->line[n] = '\0';
	in->start_pos += n;
	return (ssize_t)n;
}

/* Read the next line into in->line, without its newline; false at the end */
static bool next_line(struct input *in)
{
	ssize_t len;

	if (in->have_ahead) {
		swap_lines(in);
		in->have_ahead = false;
		len = (ssize_t)strlen(in->line);
	} else {
		len = read_line(in);
		if (len < 0)
			return false;
		if ((size_t)len != strlen(in->line)) {
			/* A NUL byte: no text trace has one */
			in->lineno++;
			malformed(in, "a NUL byte in a text trace");
			in->line[0] = '\0';
			return true;
		}
		if (in->line[len - 1] != '\n')
			in->cut_line = true;
	}
	in->lineno++;
	while (len > 0 && (in->line[len - 1] == '\n' || in->line[len - 1] == '\r'))
		in->line[--len] = '\0';
	return true;
}

/* Give back the current line: the next call of next_line returns it */
static void unread_line(struct input *in)
{
	swap_lines(in);
	in->have_ahead = true;
	in->lineno--;
}

static int digit(char c, int base)
{
	int d;

	if (c >= '0' && c <= '9')
		d = c - '0';
	else if (c >= 'a' && c <= 'f')
		d = c - 'a' + 10;
	else if (c >= 'A' && c <= 'F')
		d = c - 'A' + 10;
	else
		return -1;
	return d < base ? d : -1;
}

/*
 * An unsigned number at *s, without sign or spaces; false when there is
 * no digit or it does not fit in 64 bits (*wide is then set).
 */
static bool u64_at(const char **s, int base, uint64_t *v, bool *wide)
{
	const char *p = *s;
	uint64_t x = 0;
	int d;

	if (wide)
		*wide = false;
	if (digit(*p, base) < 0)
		return false;
	for (; (d = digit(*p, base)) >= 0; p++) {
		if (x > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) {
			if (wide)
				*wide = true;
			return false;
		}
		x = x * (uint64_t)base + (uint64_t)d;
	}
	*v = x;
	*s = p;
	return true;
}

static bool word(const char **s, const char *w)
{
	size_t n = strlen(w);

	if (strncmp(*s, w, n))
		return false;
	*s += n;
	return true;
}

static bool all_digits(const char *s, const char *end)
{
	if (s == end)
		return false;
	for (; s < end; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* A timestamp and its colon: digits[.digits]: */
static bool is_timestamp(const char *s, const char *end)
{
	const char *dot = memchr(s, '.', (size_t)(end - s));

	if (end == s || end[-1] != ':')
		return false;
	end--;
	if (!dot)
		return all_digits(s, end);
	return all_digits(s, dot) && all_digits(dot + 1, end);
}

static const char *token_end(const char *s)
{
	const char *e = strchr(s, ' ');

	return e ? e : s + strlen(s);
}

/*
 * The head, given where its "[CPU]" is: "COMM-PID[ (TGID)] [CPU] [FLAGS ]TS: "
 * with the rest after it.  COMM may hold anything, spaces, '-' and
 * brackets included: it is what lies before "-PID".
 */
static bool try_head(const char *line, const char *cpu, const char *close,
		     struct rec *rec, const char **rest)
{
	const char *e = cpu, *dash, *tok, *tok_end, *p;
	uint64_t pid, n, tgid = 0;

	while (e > line && e[-1] == ' ')
		e--;
	if (e > line && e[-1] == ')') {		/* (TGID), or (-------) */
		const char *open = e - 1, *t;

		while (open > line && *open != '(')
			open--;
		if (*open != '(')
			return false;
		for (t = open + 1; *t == ' '; t++)
			;
		if (!u64_at(&t, 10, &tgid, NULL) || *t != ')' || tgid > MAX_PID)
			tgid = 0;
		e = open;
		while (e > line && e[-1] == ' ')
			e--;
	}
	for (dash = e - 1; dash > line && *dash >= '0' && *dash <= '9'; dash--)
		;
	if (dash <= line || *dash != '-' || !all_digits(dash + 1, e))
		return false;
	p = dash + 1;
	if (!u64_at(&p, 10, &pid, NULL) || pid > MAX_PID)
		return false;
	p = cpu + 2;
	if (!u64_at(&p, 10, &n, NULL) || n > MAX_CPU || p != close)
		return false;

	/* Then FLAGS (maybe) and TS: */
	tok = close + 1;
	while (*tok == ' ')
		tok++;
	tok_end = token_end(tok);
	rec->irq = 0;
	rec->flags = false;
	if (!is_timestamp(tok, tok_end)) {
		if (tok_end == tok || tok_end - tok > 8 || memchr(tok, ':', (size_t)(tok_end - tok)))
			return false;
		/* irqs-off, need-resched, then hardirq/softirq: h H, s, z Z (NMI) */
		rec->flags = tok_end - tok >= 3;
		if (rec->flags)
			rec->irq = tok[2] == 'h' || tok[2] == 'H' ? 'h' : tok[2] == 's' ? 's' :
				   tok[2] == 'z' || tok[2] == 'Z' ? 'n' : 0;
		tok = tok_end;
		while (*tok == ' ')
			tok++;
		tok_end = token_end(tok);
		if (!is_timestamp(tok, tok_end))
			return false;
	}
	n = (uint64_t)(dash - line);
	if (n >= sizeof(rec->comm))
		n = sizeof(rec->comm) - 1;
	memcpy(rec->comm, line, n);
	rec->comm[n] = '\0';
	rec->pid = (int)pid;
	rec->tgid = (int)tgid;
	rec->cpu = (int)(cpu[2] ? strtol(cpu + 2, NULL, 10) : 0);
	n = (uint64_t)(tok_end - 1 - tok);
	if (n >= sizeof(rec->ts))
		n = sizeof(rec->ts) - 1;
	memcpy(rec->ts, tok, n);
	rec->ts[n] = '\0';
	p = tok_end;
	while (*p == ' ')
		p++;
	*rest = p;
	return true;
}

/* Each " [digits]" in turn, from the left, until one makes a whole head */
static bool parse_head(const char *line, struct rec *rec, const char **rest)
{
	const char *cpu, *close;

	while (*line == ' ')
		line++;
	for (cpu = strstr(line, " ["); cpu; cpu = strstr(cpu + 1, " [")) {
		for (close = cpu + 2; *close >= '0' && *close <= '9'; close++)
			;
		if (*close == ']' && close > cpu + 2 && try_head(line, cpu, close, rec, rest))
			return true;
	}
	return false;
}

/* "user_unwind_cookie: cookie=HEX" */
static bool parse_cookie(struct input *in, const char *s, struct rec *rec)
{
	bool wide;

	if (!word(&s, "cookie=")) {
		malformed(in, "user_unwind_cookie without cookie=");
		return false;
	}
	if (!u64_at(&s, 16, &rec->cookie, &wide) || *s) {
		malformed(in, "user_unwind_cookie: %s", wide ?
			  "the cookie is wider than 64 bits" : "the cookie is not a hex number");
		return false;
	}
	rec->type = REC_COOKIE;
	return true;
}

/*
 * " =>  <%016llx> : INODE|-1|-2|-3 : MAJOR:MINOR", and " cfi" after it in
 * ustack record's output when the CFI unwind of the stack's copy found it
 */
static bool parse_frame(const char *s, struct frame *f)
{
	uint64_t ma, mi;

	if (!word(&s, " =>  <") || !u64_at(&s, 16, &f->off, NULL) || !word(&s, "> : "))
		return false;
	if (word(&s, "-1"))
		f->ino = USTACK_NO_VMA;
	else if (word(&s, "-2"))
		f->ino = USTACK_NO_MM_LOCK;
	else if (word(&s, "-3"))
		f->ino = USTACK_NOT_REG;
	else if (!u64_at(&s, 10, &f->ino, NULL))
		return false;
	if (!word(&s, " : ") || !u64_at(&s, 10, &ma, NULL) || !word(&s, ":") ||
	    !u64_at(&s, 10, &mi, NULL) || ma > 0xfff || mi > 0xfffff)
		return false;
	f->cfi = word(&s, " cfi");
	if (*s)
		return false;
	f->dev = KDEV(ma, mi);
	return true;
}

/*
 * "<user stack unwind>", then "cookie=HEX[ lost=N]", then " =>  " frames,
 * then "cut=N" if trace could not print N more of them; in ustack record's
 * output, "copy=edge" when the CFI unwind of its copy ran off the copy
 */
static bool parse_stack(struct input *in, struct rec *rec)
{
	const char *p;
	size_t nr = 0;
	bool wide = false, ok = true;

	if (!next_line(in)) {
		malformed(in, "<user stack unwind> at the end of the trace, without its cookie");
		return false;
	}
	p = in->line;
	if (!word(&p, "cookie=")) {
		unread_line(in);
		malformed(in, "<user stack unwind> is not followed by its cookie= line");
		return false;
	}
	rec->lost = 0;
	if (!u64_at(&p, 16, &rec->cookie, &wide) ||
	    (word(&p, " lost=") && (!u64_at(&p, 10, &rec->lost, NULL) || rec->lost > UINT32_MAX)) ||
	    *p) {
		malformed(in, "user stack: %s", wide ? "the cookie is wider than 64 bits" :
			  "the cookie= line is not \"cookie=HEX[ lost=N]\"");
		ok = false;
	}
	while (next_line(in)) {
		const char *c = in->line;
		struct frame f;
		uint64_t cut;

		if (!strcmp(c, "copy=edge")) {
			rec->copy_edge = true;
			continue;
		}
		/* Frames in the record that trace did not print count as lost */
		if (word(&c, "cut=")) {
			/* Malformed: said, and the frames kept */
			if (!u64_at(&c, 10, &cut, NULL) || *c || cut > UINT32_MAX)
				malformed(in, "user stack: the line after the frames is not \"cut=N\"");
			else
				rec->lost += cut;
			break;
		}
		if (strncmp(in->line, " =>  ", 5)) {
			unread_line(in);
			break;
		}
		if (!parse_frame(in->line, &f)) {
			if (ok)
				malformed(in, "user stack: the frame is not \" =>  <HEX> : INODE : MAJOR:MINOR\"");
			ok = false;
			continue;
		}
		want_frames(in, nr + 1);
		in->frames[nr++] = f;
	}
	rec->type = REC_STACK;
	rec->nr = nr;
	rec->frames = in->frames;
	return ok;
}

/*
 * "build_id=HEX ", "build_id=none " or "build_id=unread ": HEX an even
 * number of hex digits, at most 40; false when it is not that. unread (not
 * in the page cache) is as if the kernel gave no build-id.
 */
static bool parse_build_id(struct input *in, const char **s, struct rec *rec)
{
	const char *p = *s;
	size_t n = 0;

	if (word(&p, "unread ")) {
		rec->build_id = NULL;
		*s = p;
		return true;
	}
	if (word(&p, "none ")) {
		rec->build_id = in->build_id;
		rec->build_id_len = 0;
		*s = p;
		return true;
	}
	while (digit(p[0], 16) >= 0 && digit(p[1], 16) >= 0 && n < BUILD_ID_BYTES) {
		in->build_id[n++] = (unsigned char)(digit(p[0], 16) << 4 | digit(p[1], 16));
		p += 2;
	}
	if (!n || *p != ' ')
		return false;
	rec->build_id = in->build_id;
	rec->build_id_len = n;
	*s = p + 1;
	return true;
}

/*
 * "inode_cache: inode=N dev=[MAJOR:MINOR] [build_id=HEX|none ]path=PATH",
 * or "... error=-ERRNO" in place of path= (build_id= is not on older kernels)
 */
static bool parse_inode(struct input *in, const char *s, struct rec *rec)
{
	uint64_t ma, mi, e;

	if (!word(&s, "inode=") || !u64_at(&s, 10, &rec->ino, NULL) || !word(&s, " dev=[") ||
	    !u64_at(&s, 10, &ma, NULL) || !word(&s, ":") || !u64_at(&s, 10, &mi, NULL) ||
	    !word(&s, "] ") || ma > 0xfff || mi > 0xfffff) {
		malformed(in, "inode_cache is not \"inode=N dev=[MAJOR:MINOR] [build_id=HEX|none ]path=PATH\"");
		return false;
	}
	rec->type = REC_INODE;
	rec->dev = KDEV(ma, mi);
	rec->err = 0;
	if (word(&s, "build_id=") && !parse_build_id(in, &s, rec)) {
		malformed(in, "inode_cache: build_id= is neither none, unread nor up to 40 hex "
			  "digits, two a byte");
		return false;
	}
	if (word(&s, "path=")) {
		/* The rest of the line, whatever it holds */
		rec->path = *s ? set_path(in, s, strlen(s)) : NULL;
		if (!rec->path)
			rec->err = -ENOENT;
		return true;
	}
	if (word(&s, "error=-") && u64_at(&s, 10, &e, NULL) && !*s && e >= 1 && e <= MAX_ERRNO) {
		rec->err = -(int)e;
		rec->path = NULL;
		return true;
	}
	malformed(in, "inode_cache has neither path= nor error=-ERRNO after its device");
	return false;
}

static bool is_header(const char *s)
{
	return !*s || *s == '#' || (!strncmp(s, "CPU ", 4) && strstr(s, " is empty"));
}

/* An event of the series, by the name it prints with */
static bool series_event(const char *s)
{
	return !strncmp(s, "user_unwind_cookie:", 19) || !strncmp(s, "user_unwind_stack:", 18) ||
	       !strncmp(s, "<user stack unwind>", 19) || !strncmp(s, "inode_cache:", 12) ||
	       !strncmp(s, "user_unwind_copy:", 17) ||
	       /* the meta records that start each stream ustress -R saves */
	       !strncmp(s, "ustress_meta:", 13);
}

/*
 * The event's name as its format names it, which is how trace.dat and
 * ustack record name it ("sys_enter_openat: dfd: ...").  The text names
 * an event by what it prints, up to ':', '(' or a space; but tracefs
 * prints a syscall's events by the syscall: "sys_openat(dfd: ...)" for
 * sys_enter_openat, "sys_openat -> 0x3" for sys_exit_openat.
 */
static const char *text_event_name(struct input *in, const char *s)
{
	size_t n = strcspn(s, ":( ");
	const char *format = "";	/* the format's name for the syscall's */

	if (!n)
		return "[unnamed]";
	if (n > 4 && !strncmp(s, "sys_", 4)) {
		if (s[n] == '(')
			format = "sys_enter_";
		else if (!strncmp(s + n, " -> ", 4))
			format = "sys_exit_";
	}
	if (*format) {
		s += 4;
		n -= 4;
	}
	if (n + 16 > in->event_name_cap) {
		in->event_name_cap = n + 16;
		in->event_name = xrealloc(in->event_name, in->event_name_cap);
	}
	snprintf(in->event_name, in->event_name_cap, "%s%.*s", format, (int)n, s);
	return in->event_name;
}

static int text_next(struct input *in, struct rec *rec)
{
	regmatch_t m[3];
	const char *s;

	while (next_line(in)) {
		memset(rec, 0, sizeof(*rec));
		rec->cpu = -1;

		if (!in->seen_event && (!strncmp(in->line, "cpus=", 5) ||
					!strncmp(in->line, "version = ", 10)))
			die("%s is the text of trace-cmd report: give ustack the trace.dat itself, "
			    "which it reads with libtracecmd", in->name);
		if (in->line[0] == '#' && !regexec(&in->re_entries, in->line, 3, m, 0)) {
			const char *k = in->line + m[1].rm_so, *w = in->line + m[2].rm_so;
			uint64_t kept, written;

			if (!u64_at(&k, 10, &kept, NULL) || !u64_at(&w, 10, &written, NULL)) {
				malformed(in, "entries-in-buffer/entries-written out of range");
				continue;
			}
			if (written <= kept)
				continue;
			rec->type = REC_LOST;
			rec->lost = written - kept;
			return 1;
		}
		if (!strncmp(in->line, "CPU:", 4) &&
		    (!regexec(&in->re_lost, in->line, 3, m, 0) ||
		     !regexec(&in->re_dropped, in->line, 3, m, 0))) {
			const char *c = in->line + m[1].rm_so, *l = in->line + m[2].rm_so;
			uint64_t cpu;

			rec->type = REC_LOST;
			if (!u64_at(&c, 10, &cpu, NULL) || cpu > MAX_CPU ||
			    (m[2].rm_so >= 0 && !u64_at(&l, 10, &rec->lost, NULL))) {
				malformed(in, "a loss record out of range");
				continue;
			}
			rec->cpu = (int)cpu;
			return 1;
		}
		if (!parse_head(in->line, rec, &s)) {
			if (!is_header(in->line))
				in->skipped++;
			continue;
		}
		in->seen_event = true;
		if (series_event(s))
			in->is_trace = true;

		if (word(&s, "user_unwind_cookie: ")) {
			if (parse_cookie(in, s, rec))
				return 1;
		} else if (!strcmp(s, "<user stack unwind>")) {
			if (parse_stack(in, rec))
				return 1;
		} else if (word(&s, "inode_cache: ")) {
			if (parse_inode(in, s, rec))
				return 1;
		} else if (!strncmp(s, "user_unwind_copy:", 17)) {
			/* A stack copy's summary: its bytes are in trace.dat only */
			continue;
		} else if (!strncmp(s, "user_unwind_cookie:", 19) || !strncmp(s, "inode_cache:", 12) ||
			   !strncmp(s, "user_unwind_stack:", 18) || !strncmp(s, "<user stack unwind>", 19)) {
			malformed(in, "%.19s is not in the form the kernel prints", s);
		} else {
			rec->type = REC_EVENT;
			rec->text = s;
			rec->name = text_event_name(in, s);
			return 1;
		}
	}
	return 0;
}

/* --- what a file is, from its start */

#define START_MAX	(1 << 20)	/* bytes of text read at most to tell */

enum start {
	START_EMPTY,
	START_DAT,	/* trace.dat's magic */
	START_DAT_CUT,	/* the file ends inside the magic */
	START_TRACE,	/* a trace header, or an event of the series */
	START_NOT,	/* not a trace */
	START_UNSURE,	/* events, but none of the series in the first START_MAX bytes */
};

/* What one line of text tells, events: an event line came before it */
static enum start line_tells(const char *line, bool *events)
{
	struct rec rec;
	const char *rest;

	/* tracefs's header; the text of trace-cmd report, refused by text_next */
	if (!strncmp(line, "# tracer:", 9) ||
	    (!*events && (!strncmp(line, "cpus=", 5) || !strncmp(line, "version = ", 10))))
		return START_TRACE;
	if (parse_head(line, &rec, &rest)) {
		*events = true;
		return series_event(rest) ? START_TRACE : START_UNSURE;
	}
	/* Comments, CPU lines; other lines only once events came (trace_pipe
	 * may hold what other options print, kernel stacks for one) */
	if (is_header(line) || !strncmp(line, "CPU:", 4) || *events)
		return START_UNSURE;
	/* the rest of a stack whose head was cut off (tail -n of a trace) */
	if (!strncmp(line, " =>  <", 6) || !strncmp(line, "cookie=", 7))
		return START_UNSURE;
	return START_NOT;
}

/*
 * Whole lines of f, into *buf, until they tell what the file is: a
 * trace.dat by its magic, a text trace by tracefs's "# tracer:" header or
 * an event of the series (a trace_pipe, a made-up trace has no header).
 * A line before any event that is neither an event nor a comment (a
 * README, /etc/passwd), or the end before a header or an event of the
 * series, tells it is not a trace.  *err: a read error, errno.
 */
static enum start read_start(FILE *f, char **buf, size_t *len, int *err)
{
	const size_t magic = sizeof(TRACE_DAT_MAGIC) - 1;
	enum start tells = START_UNSURE;
	bool events = false;
	char *line = NULL;
	size_t cap = 0, bufcap = 0;
	ssize_t n;

	*buf = NULL;
	*len = 0;
	*err = 0;
	while (tells == START_UNSURE && *len < START_MAX) {
		errno = 0;
		n = getline(&line, &cap, f);
		if (n < 0) {
			*err = ferror(f) ? errno : 0;
			/* Interrupted (a reader stopping): let the reading go on */
			if (*err && *len)
				break;
			tells = *len ? START_NOT : START_EMPTY;
			break;
		}
		if (*len + (size_t)n > bufcap) {
			bufcap = (*len + (size_t)n) * 2;
			*buf = xrealloc(*buf, bufcap);
		}
		memcpy(*buf + *len, line, (size_t)n);
		if (!*len && !memcmp(line, TRACE_DAT_MAGIC, (size_t)n < magic ? (size_t)n : magic)) {
			*len = (size_t)n;
			/* The magic holds no newline: a shorter line is the end */
			tells = (size_t)n < magic ? START_DAT_CUT : START_DAT;
			break;
		}
		*len += (size_t)n;
		/* A NUL byte tells nothing; text_next names its line */
		if ((size_t)n != strlen(line))
			continue;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		tells = line_tells(line, &events);
	}
	free(line);
	return tells;
}

bool input_is_trace(const char *path)
{
	FILE *f = fopen(path, "r");
	enum start tells;
	char *buf;
	size_t len;
	int err;

	if (!f)
		return false;
	tells = read_start(f, &buf, &len, &err);
	fclose(f);
	free(buf);
	return tells == START_DAT || tells == START_DAT_CUT || tells == START_TRACE;
}

/*
 * libtracecmd reads a file by its name.  A trace.dat on standard input is
 * read again from its start when standard input is that file, else it is
 * spooled into an unlinked temporary file.  Returns the name to open.
 */
static const char *stdin_dat(struct input *in, char *name, size_t size)
{
	const char *dir = getenv("TMPDIR");
	char tmp[4096], *buf = xmalloc(1 << 16);
	const char *data = in->start;
	size_t n = in->start_len;
	struct stat st;
	ssize_t w;
	int fd;

	if (!fstat(STDIN_FILENO, &st) && S_ISREG(st.st_mode) && ftell(stdin) == (long)n) {
		free(buf);
		snprintf(name, size, "/proc/self/fd/%d", STDIN_FILENO);
		return name;
	}
	snprintf(tmp, sizeof(tmp), "%s/ustack-stdin.XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(tmp);
	if (fd < 0)
		die("cannot spool standard input into %s: %s", tmp, strerror(errno));
	unlink(tmp);
	for (;;) {
		while (n) {
			w = write(fd, data, n);
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				die("cannot spool standard input into %s: %s", tmp, strerror(errno));
			data += w;
			n -= (size_t)w;
		}
		n = fread(buf, 1, 1 << 16, stdin);
		data = buf;
		if (!n)
			break;
	}
	if (ferror(stdin))
		die("cannot read standard input: %s", strerror(errno));
	free(buf);
	in->spool_fd = fd;
	snprintf(name, size, "/proc/self/fd/%d", fd);
	return name;
}

/* --- either */

struct input *input_open(const char *path)
{
	bool std = !path || !strcmp(path, "-");
	FILE *f = std ? stdin : fopen(path, "r");
	char dat_name[64];
	struct input *in;
	struct stat st;
	int err;

	if (!f)
		die("cannot open %s: %s", path, strerror(errno));
	in = xcalloc(1, sizeof(*in));
	in->f = f;
	in->name = std ? "standard input" : path;
	in->spool_fd = -1;
	if (!fstat(fileno(f), &st) && S_ISDIR(st.st_mode))
		die("%s is a directory, not a trace", in->name);

	switch (read_start(f, &in->start, &in->start_len, &err)) {
	case START_DAT:
		if (std)
			path = stdin_dat(in, dat_name, sizeof(dat_name));
		else
			fclose(in->f);
		in->f = NULL;
		dat_open(in, path);
		return in;
	case START_DAT_CUT:
		die("%s: a trace-cmd recording cut short in its magic", in->name);
	case START_EMPTY:
		if (err)
			die("cannot read %s: %s", in->name, strerror(err));
		die("%s is empty: no trace", in->name);
	case START_NOT:
		if (in->start_len >= 8 && !memcmp(in->start, "PERFILE2", 8))
			die("%s is perf's (perf record), not a trace of deferred user stacks: "
			    "read it with perf report; ustack reads ustack record's files, "
			    "tracefs's trace text and trace-cmd's trace.dat", in->name);
		die("%s is not a trace: it has no trace header (trace.dat's magic, tracefs's "
		    "\"# tracer:\") and no event of the series (user_unwind_cookie, "
		    "<user stack unwind>, inode_cache)", in->name);
	case START_TRACE:
		in->is_trace = true;
		break;
	case START_UNSURE:
		break;
	}

	/* The count is missing when the ring buffer could not tell it */
	compile(&in->re_lost, "^CPU:([0-9]+) \\[LOST ([0-9]+ )?EVENTS\\]$");
	compile(&in->re_dropped, "^CPU:([0-9]+) \\[([0-9]+ )?EVENTS DROPPED\\]$");
	compile(&in->re_entries, "^# entries-in-buffer/entries-written: ([0-9]+)/([0-9]+)");
	return in;
}

const char *input_format(const struct input *in)
{
	return in->dat ? "trace-cmd recording (libtracecmd)" : "tracefs trace text";
}

int input_next(struct input *in, struct rec *rec)
{
	return in->dat ? dat_next(in, rec) : text_next(in, rec);
}

/* Closes the input; 0, or 2 when it was malformed, cut short or unreadable */
int input_close(struct input *in)
{
	int ret = 0;

	if (in->skipped)
		warnx_("%s: %lu lines were not understood and were skipped",
		       in->name, in->skipped);
	if (in->cut_line) {
		warnx_("%s: the last line has no newline: the trace is cut short", in->name);
		ret = 2;
	}
	if (in->malformed) {
		warnx_("%s: %lu malformed records were left out: the trace is cut short or corrupt",
		       in->name, in->malformed);
		ret = 2;
	}
	if (in->f && ferror(in->f)) {
		warnx_("%s: read error", in->name);
		ret = 2;
	}
	if (!in->dat && !in->is_trace) {
		warnx_("%s is not a trace: no event of the series (user_unwind_cookie, "
		       "<user stack unwind>, inode_cache) and no trace header", in->name);
		ret = 2;
	}
	if (in->spool_fd >= 0)
		close(in->spool_fd);
	if (in->f && in->f != stdin)
		fclose(in->f);
	free(in->start);
	free(in->event_name);
	if (in->dat) {
		for (int cpu = 0; cpu < in->ncpus; cpu++)
			g_queue_clear_full(&in->read_ahead[cpu], (GDestroyNotify)tracecmd_free_record);
		free(in->read_ahead);
		trace_seq_destroy(&in->seq);
		tracecmd_close(in->tc);
		open_handle = NULL;
	} else {
		regfree(&in->re_lost);
		regfree(&in->re_dropped);
		regfree(&in->re_entries);
	}
	free(in->line);
	free(in->ahead);
	free(in->frames);
	stack_frames_free(&in->sf);
	copy_unwinder_free(in->unwinder);
	free(in->path);
	free(in);
	return ret;
}
