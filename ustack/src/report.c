// SPDX-License-Identifier: GPL-2.0
/*
 * ustack report: join each event to its stack, by the task and the
 * cookie, and print the stacks as symbols, or folded for flame graphs.
 *
 * An event is followed, in its task, by its cookie; the stack comes when
 * the task returns to user space, before it can enter the kernel again.
 * So a task has at most one cookie waiting for its stack, and a new
 * cookie of the task means the old one will get none: memory stays
 * bounded by the number of tasks, whatever the length of the trace.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "ustack.h"

struct event {
	struct event	*next;
	char		*head;		/* comm-pid [cpu] ts: text */
	char		comm[64];
};

struct waiting {			/* a cookie waiting for its stack */
	uint64_t	cookie;
	int		pid;
	unsigned long	lost_mark;	/* losses seen when it came */
	struct event	*events, **tail;
};

struct folded {
	struct folded	*next;
	char		*stack;
	unsigned long	count;
};

struct report {
	struct symbols	*syms;
	bool		folded;
	struct map	*pending_event;	/* pid -> event waiting for its cookie */
	struct map	*waiting;	/* (cookie, pid) -> struct waiting */
	struct map	*task_cookie;	/* pid -> its struct waiting */
	struct map	*stacks;	/* string hash -> struct folded list */
	char		*fold;
	size_t		fold_cap;
	unsigned long	losses;		/* REC_LOST records */
	struct {
		unsigned long events, with_stack, no_stack, no_stack_lost, no_cookie;
		unsigned long stacks, stacks_no_cookie, cookies_no_event, frames, cut;
		uint64_t lost, lost_unknown;
	} n;
};

static void usage(bool help)
{
	fprintf(help ? stdout : stderr,
		"usage: ustack report [--folded] [--stats] [FILE]\n"
		"  FILE  ustack record's output (default ustack.trace), the text of\n"
		"        tracefs's trace or trace_pipe, a trace-cmd recording, or the\n"
		"        text of \"trace-cmd report -R\"; - for standard input\n"
		"  --folded  collapsed stacks, \"comm;outer;...;inner count\", for flame graphs\n"
		"  --stats   time, throughput and peak memory, on standard error\n"
		"Exit status: 0; 2 on an error, or when the trace is cut short or corrupt\n"
		"(what could be read is reported all the same).\n");
	exit(help ? 0 : 2);
}

static void free_event(struct event *ev)
{
	free(ev->head);
	free(ev);
}

static void add_folded(struct report *rep, const char *stack)
{
	uint64_t h1 = 1469598103934665603ULL, h2 = 0;
	struct folded *f, *head;
	const unsigned char *p;

	for (p = (const unsigned char *)stack; *p; p++) {
		h1 = (h1 ^ *p) * 1099511628211ULL;
		h2 = h2 * 31 + *p;
	}
	head = map_get(rep->stacks, h1, h2);
	for (f = head; f; f = f->next) {
		if (!strcmp(f->stack, stack)) {
			f->count++;
			return;
		}
	}
	f = xmalloc(sizeof(*f));
	f->stack = xstrdup(stack);
	f->count = 1;
	f->next = head;
	map_put(rep->stacks, h1, h2, f);
}

static void fold_append(struct report *rep, size_t *len, const char *s, size_t n)
{
	if (*len + n + 2 > rep->fold_cap) {
		rep->fold_cap = (*len + n + 2) * 2;
		rep->fold = xrealloc(rep->fold, rep->fold_cap);
	}
	memcpy(rep->fold + *len, s, n);
	*len += n;
	rep->fold[*len] = '\0';
}

/*
 * A name in a folded line: ';' separates frames and a newline separates
 * lines, so neither may come from a name (a comm or a symbol could forge
 * a frame). They become ':' and ' '.  The start is kept as an offset,
 * since fold_append may move rep->fold.
 */
static void fold_name(struct report *rep, size_t *len, const char *s, size_t n)
{
	size_t start = *len, i;

	fold_append(rep, len, s, n);
	for (i = start; i < *len; i++) {
		if (rep->fold[i] == ';')
			rep->fold[i] = ':';
		else if (rep->fold[i] == '\n')
			rep->fold[i] = ' ';
	}
}

/*
 * A frame's names, outer to inner: the function, then the calls inlined
 * in it; a frame without a symbol is its address, a raw frame "[unknown]"
 */
static void fold_frame(struct report *rep, size_t *len, const struct sym *lines, size_t n)
{
	char addr[32];

	if (!n) {
		fold_append(rep, len, ";[unknown]", 10);
		return;
	}
	while (n-- > 0) {
		const char *name = lines[n].name;

		if (!name) {
			snprintf(addr, sizeof(addr), "0x%" PRIx64, lines[n].off);
			name = addr;
		}
		fold_append(rep, len, ";", 1);
		fold_name(rep, len, name, strlen(name));
	}
}

struct resolved {
	const struct sym	*lines;	/* innermost first; the symbols' own storage */
	size_t			n;	/* 0: raw */
	const char		*why;
};

static void print_stack(struct report *rep, const struct rec *stack, struct event *events)
{
	struct resolved *res = xcalloc(stack->nr ? stack->nr : 1, sizeof(*res));
	struct event *ev;
	size_t i, k, len;

	for (i = 0; i < stack->nr; i++)
		res[i].n = symbols_resolve(rep->syms, &stack->frames[i], i > 0, &res[i].lines,
					   &res[i].why);
	rep->n.frames += stack->nr;
	if (stack->lost)
		rep->n.cut++;

	for (ev = events; ev; ev = ev->next) {
		rep->n.with_stack++;
		if (rep->folded) {
			len = 0;
			fold_name(rep, &len, ev->comm, strlen(ev->comm));
			if (stack->lost)
				fold_append(rep, &len, ";[cut]", 6);
			for (i = stack->nr; i-- > 0;)
				fold_frame(rep, &len, res[i].lines, res[i].n);
			add_folded(rep, rep->fold);
			continue;
		}
		printf("%s\n", ev->head);
		for (i = 0; i < stack->nr; i++) {
			const struct frame *f = &stack->frames[i];

			for (k = 0; k < res[i].n; k++) {
				fputs("    ", stdout);
				symbols_print(stdout, &res[i].lines[k]);
				putchar('\n');
			}
			if (res[i].n)
				continue;
			if (f->ino == USTACK_NO_VMA)
				printf("    <%016" PRIx64 "> (%s)\n", f->off, res[i].why);
			else
				printf("    <%016" PRIx64 "> inode %" PRIu64 " dev %u:%u (%s)\n",
				       f->off, f->ino, KDEV_MAJOR(f->dev), KDEV_MINOR(f->dev),
				       res[i].why);
		}
		if (stack->lost)
			printf("    ... %" PRIu64 " more frames were not recorded\n", stack->lost);
		putchar('\n');
	}
	free(res);
}

static void print_without_stack(struct report *rep, struct event *ev, const char *why)
{
	if (!rep->folded)
		printf("%s\n    (no user stack: %s)\n\n", ev->head, why);
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
		free_event(ev);
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
	return ev;
}

static void on_event(struct report *rep, const struct rec *rec)
{
	struct event *old = map_del(rep->pending_event, (uint64_t)rec->pid, 0);

	rep->n.events++;
	if (old) {
		rep->n.no_cookie++;
		print_without_stack(rep, old, "no cookie: the kernel asked no stack for it");
		free_event(old);
	}
	map_put(rep->pending_event, (uint64_t)rec->pid, 0, new_event(rec));
}

static void on_cookie(struct report *rep, const struct rec *rec)
{
	struct event *ev = map_del(rep->pending_event, (uint64_t)rec->pid, 0);
	struct waiting *w, *prev;

	if (!ev) {
		rep->n.cookies_no_event++;
		return;
	}
	w = map_get(rep->waiting, rec->cookie, (uint64_t)rec->pid);
	if (!w) {
		/* A new kernel entry: the task's previous cookie is answered or lost */
		prev = map_del(rep->task_cookie, (uint64_t)rec->pid, 0);
		if (prev) {
			map_del(rep->waiting, prev->cookie, (uint64_t)rec->pid);
			give_up(rep, prev, "the task entered the kernel again first");
		}
		w = xcalloc(1, sizeof(*w));
		w->cookie = rec->cookie;
		w->pid = rec->pid;
		w->lost_mark = rep->losses;
		w->tail = &w->events;
		map_put(rep->waiting, rec->cookie, (uint64_t)rec->pid, w);
		map_put(rep->task_cookie, (uint64_t)rec->pid, 0, w);
	}
	*w->tail = ev;
	w->tail = &ev->next;
}

static void on_stack(struct report *rep, const struct rec *rec)
{
	struct waiting *w = map_del(rep->waiting, rec->cookie, (uint64_t)rec->pid);
	struct event *ev, *next;

	rep->n.stacks++;
	if (!w) {
		rep->n.stacks_no_cookie++;
		return;
	}
	map_del(rep->task_cookie, (uint64_t)rec->pid, 0);
	print_stack(rep, rec, w->events);
	for (ev = w->events; ev; ev = next) {
		next = ev->next;
		free_event(ev);
	}
	free(w);
}

static void flush_waiting(uint64_t a, uint64_t b, void *value, void *ctx)
{
	struct report *rep = ctx;

	(void)a;
	(void)b;
	give_up(rep, value, "the trace ended, or the task exited, before its stack");
}

static void flush_pending(uint64_t a, uint64_t b, void *value, void *ctx)
{
	struct report *rep = ctx;

	(void)a;
	(void)b;
	rep->n.no_cookie++;
	print_without_stack(rep, value, "the trace ended before its cookie");
	free_event(value);
}

static int cmp_folded(const void *a, const void *b)
{
	return strcmp((*(struct folded *const *)a)->stack, (*(struct folded *const *)b)->stack);
}

struct folded_list {
	struct folded	**items;
	size_t		n, cap;
};

static void collect_folded(uint64_t a, uint64_t b, void *value, void *ctx)
{
	struct folded_list *l = ctx;
	struct folded *f;

	(void)a;
	(void)b;
	for (f = value; f; f = f->next) {
		if (l->n == l->cap) {
			l->cap = l->cap ? l->cap * 2 : 256;
			l->items = xrealloc(l->items, l->cap * sizeof(*l->items));
		}
		l->items[l->n++] = f;
	}
}

static void print_folded(struct report *rep)
{
	struct folded_list l = { 0 };
	size_t i;

	map_each(rep->stacks, collect_folded, &l);
	if (l.n)
		qsort(l.items, l.n, sizeof(*l.items), cmp_folded);
	for (i = 0; i < l.n; i++) {
		printf("%s %lu\n", l.items[i]->stack, l.items[i]->count);
		free(l.items[i]->stack);
		free(l.items[i]);
	}
	free(l.items);
}

static void summary(struct report *rep, const char *format)
{
	struct symbols_stats st;

	symbols_stats(rep->syms, &st);
	fprintf(stderr, "ustack: read %s\n", format);
	fprintf(stderr, "ustack: %lu events: %lu with a stack, %lu whose stack never came "
		"(%lu after lost events), %lu without a cookie\n",
		rep->n.events, rep->n.with_stack, rep->n.no_stack, rep->n.no_stack_lost,
		rep->n.no_cookie);
	fprintf(stderr, "ustack: %lu stacks (%lu cut short), %lu without a cookie event; "
		"%lu cookies without an event\n",
		rep->n.stacks, rep->n.cut, rep->n.stacks_no_cookie, rep->n.cookies_no_event);
	fprintf(stderr, "ustack: %zu frames symbolised, %zu printed raw; %zu files named, "
		"%zu inodes never named, %zu paths now name another file\n",
		st.resolved, st.unresolved, st.files, st.unknown_inodes, st.changed);
	if (rep->losses)
		fprintf(stderr, "ustack: the ring buffer lost events %lu times: %" PRIu64
			" events%s\n", rep->losses, rep->n.lost,
			rep->n.lost_unknown ? ", and an unknown number more" : "");
	else
		fprintf(stderr, "ustack: no events were lost\n");
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "folded", no_argument, NULL, 'f' },
		{ "stats", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct report rep = { 0 };
	const char *path = "ustack.trace";
	bool stats = false;
	struct input *in;
	struct rec rec;
	double t0 = now();
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "fsh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			rep.folded = true;
			break;
		case 's':
			stats = true;
			break;
		case 'h':
			usage(true);
			break;
		default:
			usage(false);
		}
	}
	if (optind < argc)
		path = argv[optind++];
	if (optind < argc)
		usage(false);

	rep.syms = symbols_new();
	rep.pending_event = map_new();
	rep.waiting = map_new();
	rep.task_cookie = map_new();
	rep.stacks = map_new();
	in = input_open(path);

	while (input_next(in, &rec) > 0) {
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
			symbols_name_file(rep.syms, rec.ino, rec.dev, rec.path, rec.err);
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
	if (rep.folded)
		print_folded(&rep);
	fflush(stdout);
	summary(&rep, input_format(in));
	ret = input_close(in);

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
	map_free(rep.stacks, NULL);
	free(rep.fold);
	symbols_free(rep.syms);
	return ret;
}
