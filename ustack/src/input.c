// SPDX-License-Identifier: GPL-2.0
/*
 * Read a trace as records, whatever produced it:
 *  - the text of tracefs's trace or trace_pipe, and ustack record's
 *    output, which has the same form;
 *  - the text of "trace-cmd report -R";
 *  - a trace-cmd recording (trace.dat), through "trace-cmd report -R".
 */
#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ustack.h"

enum text_form {
	FORM_KERNEL,	/* trace, trace_pipe, ustack record */
	FORM_TRACE_CMD,	/* trace-cmd report -R */
};

struct input {
	FILE		*f;
	const char	*name;
	pid_t		child;		/* trace-cmd report, for trace.dat */
	enum text_form	form;
	bool		seen_event;
	char		*line;		/* the line being parsed */
	size_t		line_cap;
	char		*ahead;		/* a line read too far, or NULL */
	size_t		ahead_cap;
	bool		have_ahead;
	unsigned long	lineno;
	unsigned long	skipped;	/* lines neither records nor headers */
	struct frame	*frames;
	size_t		frames_cap;
	regex_t		re_lost, re_dropped, re_entries;
};

static const char TRACE_DAT_MAGIC[] = "\027\010\104tracing";

static void compile(regex_t *re, const char *pattern)
{
	int err = regcomp(re, pattern, REG_EXTENDED);

	if (err)
		die("internal error: bad pattern %s", pattern);
}

static void run_trace_cmd(struct input *in, const char *path)
{
	int fd[2];

	if (pipe(fd))
		die("pipe: %s", strerror(errno));
	in->child = fork();
	if (in->child < 0)
		die("fork: %s", strerror(errno));
	if (in->child == 0) {
		dup2(fd[1], STDOUT_FILENO);
		close(fd[0]);
		close(fd[1]);
		execlp("trace-cmd", "trace-cmd", "report", "-R", "-i", path, (char *)NULL);
		fprintf(stderr, "ustack: cannot run trace-cmd to read %s: %s\n",
			path, strerror(errno));
		_exit(127);
	}
	close(fd[1]);
	in->f = fdopen(fd[0], "r");
	if (!in->f)
		die("fdopen: %s", strerror(errno));
	in->form = FORM_TRACE_CMD;
}

struct input *input_open(const char *path)
{
	struct input *in = xcalloc(1, sizeof(*in));
	ssize_t len;

	in->name = path && strcmp(path, "-") ? path : "standard input";
	in->f = path && strcmp(path, "-") ? fopen(path, "r") : stdin;
	if (!in->f)
		die("cannot open %s: %s", path, strerror(errno));

	/* A trace-cmd recording, or the first line of a text */
	len = getline(&in->ahead, &in->ahead_cap, in->f);
	if (len >= (ssize_t)sizeof(TRACE_DAT_MAGIC) - 1 &&
	    !memcmp(in->ahead, TRACE_DAT_MAGIC, sizeof(TRACE_DAT_MAGIC) - 1)) {
		if (in->f == stdin)
			die("a trace-cmd recording must be given as a file, not on standard input");
		fclose(in->f);
		run_trace_cmd(in, path);
	} else {
		in->have_ahead = len > 0;
	}

	/* The count is missing when the ring buffer could not tell it */
	compile(&in->re_lost, "^CPU:([0-9]+) \\[LOST ([0-9]+ )?EVENTS\\]");
	compile(&in->re_dropped, "^CPU:([0-9]+) \\[([0-9]+ )?EVENTS DROPPED\\]");
	compile(&in->re_entries, "^# entries-in-buffer/entries-written: ([0-9]+)/([0-9]+)");
	return in;
}

const char *input_format(const struct input *in)
{
	return in->form == FORM_TRACE_CMD ? "trace-cmd report -R" : "tracefs trace text";
}

static void swap_lines(struct input *in)
{
	char *t = in->line;
	size_t c = in->line_cap;

	in->line = in->ahead;
	in->line_cap = in->ahead_cap;
	in->ahead = t;
	in->ahead_cap = c;
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
		len = getline(&in->line, &in->line_cap, in->f);
		if (len < 0)
			return false;
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

static uint64_t num(const char *s, const char **end, int kernel_base)
{
	char *e;
	uint64_t v;
	int base = kernel_base;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		base = 16;
	errno = 0;
	v = strtoull(s, &e, base);
	if (e == s || errno)
		v = 0, e = (char *)s;
	if (end)
		*end = e;
	return v;
}

/* The value after "name=" in s, or NULL */
static const char *field(const char *s, const char *name)
{
	size_t n = strlen(name);
	const char *p = s;

	while ((p = strstr(p, name))) {
		if ((p == s || p[-1] == ' ') && p[n] == '=')
			return p + n + 1;
		p += n;
	}
	return NULL;
}

static void want_frames(struct input *in, size_t nr)
{
	if (nr > in->frames_cap) {
		in->frames_cap = nr * 2;
		in->frames = xrealloc(in->frames, in->frames_cap * sizeof(*in->frames));
	}
}

/* trace-cmd -R prints an array as its bytes: ARRAY[1d, 11, 00, ...] */
static size_t array_bytes(const char *s, const char *name, unsigned char **out, size_t *cap)
{
	const char *p = field(s, name);
	size_t n = 0;

	if (!p || strncmp(p, "ARRAY[", 6))
		return 0;
	p += 6;
	while (*p && *p != ']') {
		char *e;
		unsigned long b = strtoul(p, &e, 16);

		if (e == p)
			break;
		if (n == *cap) {
			*cap = *cap ? *cap * 2 : 256;
			*out = xrealloc(*out, *cap);
		}
		(*out)[n++] = (unsigned char)b;
		p = e;
		while (*p == ',' || *p == ' ')
			p++;
	}
	return n;
}

static uint64_t le(const unsigned char *b, size_t n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | b[n];
	return v;
}

static int parse_trace_cmd_stack(struct input *in, const char *s, struct rec *rec)
{
	static unsigned char *a, *i, *d;
	static size_t ac, ic, dc;
	size_t na, ni, nd, k;
	const char *p;

	if (!strstr(s, "ARRAY["))
		die("%s:%lu: user_unwind_stack without its frames: a trace-cmd report must be made with -R",
		    in->name, in->lineno);
	na = array_bytes(s, "addrs", &a, &ac) / 8;
	ni = array_bytes(s, "inodes", &i, &ic) / 8;
	nd = array_bytes(s, "devs", &d, &dc) / 4;
	if (na != ni || na != nd)
		return -1;
	want_frames(in, na);
	for (k = 0; k < na; k++) {
		in->frames[k].off = le(a + 8 * k, 8);
		in->frames[k].ino = le(i + 8 * k, 8);
		in->frames[k].dev = (uint32_t)le(d + 4 * k, 4);
	}
	/* libtraceevent prints a field as the event's print format does: %llx */
	p = field(s, "cookie");
	rec->cookie = p ? num(p, NULL, 16) : 0;
	p = field(s, "lost");
	rec->lost = p ? num(p, NULL, 10) : 0;
	rec->nr = na;
	rec->frames = in->frames;
	return p ? 0 : -1;
}

/* " =>  <%016llx> : INODE|-1 : MAJOR:MINOR" */
static bool parse_frame(const char *s, struct frame *f)
{
	const char *p;
	uint64_t ma, mi;

	if (strncmp(s, " =>  <", 6))
		return false;
	f->off = num(s + 6, &p, 16);
	if (strncmp(p, "> : ", 4))
		return false;
	p += 4;
	if (!strncmp(p, "-1 ", 3)) {
		f->ino = USTACK_NO_VMA;
		p += 2;
	} else {
		const char *q = p;

		f->ino = num(q, &p, 10);
		if (p == q)
			return false;
	}
	if (strncmp(p, " : ", 3))
		return false;
	ma = num(p + 3, &p, 10);
	if (*p != ':')
		return false;
	mi = num(p + 1, &p, 10);
	if (*p)
		return false;
	f->dev = KDEV(ma, mi);
	return true;
}

/* "<user stack unwind>", then "cookie=HEX[ lost=N]", then " =>  " frames */
static int parse_kernel_stack(struct input *in, struct rec *rec)
{
	const char *p;
	size_t nr = 0;

	if (!next_line(in))
		return -1;
	if (strncmp(in->line, "cookie=", 7)) {
		unread_line(in);
		return -1;
	}
	rec->cookie = num(in->line + 7, &p, 16);
	rec->lost = 0;
	if (!strncmp(p, " lost=", 6))
		rec->lost = num(p + 6, NULL, 10);
	while (next_line(in)) {
		struct frame f;

		if (!parse_frame(in->line, &f)) {
			unread_line(in);
			break;
		}
		want_frames(in, nr + 1);
		in->frames[nr++] = f;
	}
	rec->nr = nr;
	rec->frames = in->frames;
	return 0;
}

static int parse_inode(struct input *in, char *s, struct rec *rec)
{
	const char *p;
	char *path;

	rec->err = 0;
	if (in->form == FORM_KERNEL) {
		const char *d = strstr(s, "dev=[");
		unsigned int ma, mi;

		p = field(s, "inode");
		if (!p || !d || sscanf(d, "dev=[%u:%u]", &ma, &mi) != 2)
			return -1;
		rec->ino = num(p, NULL, 10);
		rec->dev = KDEV(ma, mi);
		p = field(s, "error");
		if (p) {
			rec->err = (int)strtol(p, NULL, 10);
			rec->path = NULL;
			return 0;
		}
	} else {
		p = field(s, "ino");
		if (!p || !field(s, "dev"))
			return -1;
		rec->ino = num(p, NULL, 10);
		rec->dev = (uint32_t)num(field(s, "dev"), NULL, 10);
		p = field(s, "err");
		rec->err = p ? (int)strtol(p, NULL, 10) : 0;
	}
	/* The path is the rest of the line: it may hold spaces */
	path = (char *)field(s, "path");
	if (!path && !rec->err)
		return -1;
	if (path)
		path_unescape(path);
	rec->path = path && *path ? path : NULL;
	if (!rec->path && !rec->err)
		rec->err = -ENOENT;
	return 0;
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

/*
 * "COMM-PID [CPU] FLAGS TS: REST", where "(TGID)" may follow PID and
 * FLAGS may be absent; COMM may hold anything, '-' and spaces included.
 * Regular expressions do this too, but at a tenth of the speed.
 */
static bool parse_head(char *line, struct rec *rec, char **rest)
{
	char *p = line, *cpu, *close, *e, *dash, *tok, *tok_end;
	size_t n;

	while (*p == ' ')
		p++;
	/* The first " [digits]" after the start: the CPU */
	for (cpu = strstr(p, " ["); cpu; cpu = strstr(cpu + 1, " [")) {
		close = strchr(cpu + 2, ']');
		if (close && all_digits(cpu + 2, close))
			break;
	}
	if (!cpu)
		return false;
	e = cpu;
	while (e > p && e[-1] == ' ')
		e--;
	if (e > p && e[-1] == ')') {		/* (TGID) */
		char *open = e - 1;

		while (open > p && *open != '(')
			open--;
		if (*open != '(')
			return false;
		e = open;
		while (e > p && e[-1] == ' ')
			e--;
	}
	for (dash = e - 1; dash > p && *dash != '-'; dash--)
		;
	if (dash <= p || !all_digits(dash + 1, e))
		return false;
	n = (size_t)(dash - p);
	if (n >= sizeof(rec->comm))
		n = sizeof(rec->comm) - 1;
	memcpy(rec->comm, p, n);
	rec->comm[n] = '\0';
	rec->pid = atoi(dash + 1);
	rec->cpu = atoi(cpu + 2);

	/* Then FLAGS (maybe) and TS: */
	tok = close + 1;
	while (*tok == ' ')
		tok++;
	tok_end = strchr(tok, ' ');
	if (!tok_end)
		tok_end = tok + strlen(tok);
	if (!is_timestamp(tok, tok_end)) {
		tok = tok_end;
		while (*tok == ' ')
			tok++;
		tok_end = strchr(tok, ' ');
		if (!tok_end)
			tok_end = tok + strlen(tok);
		if (!is_timestamp(tok, tok_end))
			return false;
	}
	n = (size_t)(tok_end - 1 - tok);
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

static bool is_header(const char *s)
{
	return !*s || *s == '#' || !strncmp(s, "cpus=", 5) || !strncmp(s, "version = ", 10) ||
	       (!strncmp(s, "CPU ", 4) && strstr(s, " is empty")) ||
	       (!strncmp(s, "CPU", 3) && strstr(s, " data recorded at offset"));
}

/*
 * The next record: 1, or 0 at the end.  Lines that are neither records
 * nor headers are counted in *skipped.
 */
static int next_rec(struct input *in, struct rec *rec, unsigned long *skipped)
{
	regmatch_t m[3];
	char *s;

	while (next_line(in)) {
		memset(rec, 0, sizeof(*rec));
		rec->cpu = -1;

		if (!in->seen_event && !strncmp(in->line, "cpus=", 5))
			in->form = FORM_TRACE_CMD;
		if (in->line[0] == '#' && !regexec(&in->re_entries, in->line, 3, m, 0)) {
			uint64_t kept = num(in->line + m[1].rm_so, NULL, 10);
			uint64_t written = num(in->line + m[2].rm_so, NULL, 10);

			if (written <= kept)
				continue;
			rec->type = REC_LOST;
			rec->lost = written - kept;
			return 1;
		}
		if (!strncmp(in->line, "CPU:", 4) &&
		    (!regexec(&in->re_lost, in->line, 3, m, 0) ||
		     !regexec(&in->re_dropped, in->line, 3, m, 0))) {
			rec->type = REC_LOST;
			rec->cpu = (int)num(in->line + m[1].rm_so, NULL, 10);
			rec->lost = m[2].rm_so >= 0 ? num(in->line + m[2].rm_so, NULL, 10) : 0;
			return 1;
		}
		if (!parse_head(in->line, rec, &s)) {
			if (!is_header(in->line))
				(*skipped)++;
			continue;
		}
		in->seen_event = true;

		if (!strncmp(s, "user_unwind_cookie:", 19)) {
			const char *p = field(s, "cookie");

			if (!p) {
				(*skipped)++;
				continue;
			}
			rec->type = REC_COOKIE;
			rec->cookie = num(p, NULL, 16);
			return 1;
		}
		if (!strncmp(s, "<user stack unwind>", 19) ||
		    !strncmp(s, "user_unwind_stack:", 18)) {
			int err;

			rec->type = REC_STACK;
			err = s[0] == '<' ? parse_kernel_stack(in, rec) :
					    parse_trace_cmd_stack(in, s, rec);
			if (err) {
				(*skipped)++;
				continue;
			}
			return 1;
		}
		if (!strncmp(s, "inode_cache:", 12)) {
			rec->type = REC_INODE;
			if (parse_inode(in, s, rec)) {
				(*skipped)++;
				continue;
			}
			return 1;
		}
		rec->type = REC_EVENT;
		rec->text = s;
		return 1;
	}
	return 0;
}

int input_next(struct input *in, struct rec *rec)
{
	return next_rec(in, rec, &in->skipped);
}

/* Closes the input; 0, or -1 when its producer failed */
int input_close(struct input *in)
{
	int status = 0, ret = 0;

	if (in->skipped)
		warnx_("%s: %lu lines were not understood and were skipped",
		       in->name, in->skipped);
	if (ferror(in->f) && errno != EINTR) {
		warnx_("%s: read error", in->name);
		ret = -1;
	}
	if (in->f != stdin)
		fclose(in->f);
	if (in->child > 0) {
		waitpid(in->child, &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			warnx_("trace-cmd report failed on %s", in->name);
			ret = -1;
		}
	}
	regfree(&in->re_lost);
	regfree(&in->re_dropped);
	regfree(&in->re_entries);
	free(in->line);
	free(in->ahead);
	free(in->frames);
	free(in);
	return ret;
}
