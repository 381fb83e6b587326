/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ustack report's views of the stacks as a whole (views.c): --top,
 * --callers, --callees, and the files of flame.c (--flamegraph) and
 * pprof.c (--pprof).  The stacks are kept once each, as ids: functions,
 * locations (a frame: its file, offset and lines), mappings (files).
 */
#ifndef USTACK_VIEWS_H
#define USTACK_VIEWS_H

#include "ustack.h"

/* The colour class of a frame in the flame graph */
enum vclass {
	VC_PROGRAM,	/* a file that is not a shared library: the traced program */
	VC_LIBRARY,	/* a shared library (its name holds ".so") */
	VC_ANON,	/* anonymous memory or the vdso (inode 0) */
	VC_RAW,		/* not symbolised: file gone, never named, no VMA */
	VC_NOSTACK,	/* [no user stack] */
	VC_OTHER,	/* the comm, [cut] */
	VC_N
};
extern const char *const vclass_names[VC_N];

/* A frame as report has it, handed to views_add */
struct vframe {
	const struct frame	*f;
	bool			ret;	/* a return address (not the innermost) */
	const char		*file;	/* the path inode_cache gave, or NULL */
	const char		*build_id; /* the file's, in hex, or NULL */
	const struct sym	*lines;	/* innermost first; n == 0: raw */
	size_t			n;
};

struct vfunc {
	const char	*name;
	const char	*file;		/* the object file, or NULL */
	const char	*src;		/* the source file, or NULL */
	enum vclass	cls;
};

struct vline {
	uint32_t	func;		/* index in funcs */
	int		line;
};

struct vloc {
	uint32_t	mapping;	/* index + 1 in maps; 0: none */
	uint64_t	off;		/* file offset, or address */
	bool		raw;		/* no symbol: pprof gives no line */
	bool		ret;		/* a return address: the call is before it */
	size_t		n;
	struct vline	*lines;		/* innermost first; at least one */
};

struct vmapping {
	const char	*path;
	const char	*build_id;	/* or NULL */
	uint64_t	max_off;
	enum vclass	cls;
	size_t		nloads;		/* the file's PT_LOADs, when ustack opened it */
	struct elf_load	*loads;
};

struct vstack {
	uint32_t	event, comm;	/* indexes in strs */
	int		pid;
	unsigned long	count;
	size_t		n;
	uint32_t	*locs;		/* innermost first; the stacks_t key's */
};

/* An interning table: a key of bytes -> an index (views.c, over GHashTable) */
struct _GHashTable;
struct arena_chunk;
struct itab {
	struct _GHashTable	*h;
	struct arena_chunk	*arena;	/* the keys */
	void			*probe;	/* a key being looked up */
	size_t			probe_cap;
	size_t			n;
	bool			sealed;	/* views_done: no more keys */
};

uint32_t itab_get(struct itab *t, const void *key, size_t len, bool *fresh);
void itab_free(struct itab *t);

struct views {
	struct itab	strs_t, funcs_t, locs_t, maps_t, stacks_t;
	struct arena_chunk *arena;	/* the locations' lines */
	char		**strs;
	struct vfunc	*funcs;
	struct vloc	*locs;
	struct vmapping	*maps;
	struct vstack	*stacks;
	size_t		strs_cap, funcs_cap, locs_cap, maps_cap, stacks_cap;
	unsigned long	total;		/* events, or what they weigh */
	/* What a stack's count is: "events" ("events"/"count" in pprof), or
	 * off-CPU time ("ns off-CPU"; "off-cpu"/"nanoseconds") */
	const char	*what, *sample_type, *sample_unit;
	bool		off_cpu;	/* views_off_cpu(): counts are nanoseconds */
	/* --wakers: the function "--" before a waker's part, once there is one */
	bool		have_sep;
	uint32_t	sep_func;
	uint32_t	nostack_loc, cut_loc;
	double		ts_min, ts_max;
	bool		have_ts;
	struct symbols	*syms;		/* for the files' ELF layout, or NULL */
};

struct views *views_new(void);
void views_free(struct views *v);
/* The stacks weigh nanoseconds off the CPU, not events: before views_add */
void views_off_cpu(struct views *v);
/* An event as the views count it */
struct vsample {
	const char	*event, *comm;
	int		pid;
	double		ts;
	unsigned long	weight;		/* 1, or nanoseconds off the CPU */
	const char	*outer;		/* a frame outermost of all ("[S]"), or NULL */
	/* --wakers: what woke the task, innermost of all: its stack, innermost
	 * first (shown from it out, after a frame "--"), and a name for it */
	const char	*waker;		/* its comm, [hardirq], [softirq]..., or NULL */
	const struct vframe *waker_frames;
	size_t		nwaker;
};
/* One event with its stack, frames innermost first */
void views_add(struct views *v, const struct vsample *smp, const struct vframe *frames, size_t n,
	       bool cut);
/* One event whose stack never came */
void views_add_nostack(struct views *v, const struct vsample *smp);
/* The last event is added: the tables' indexes are freed */
void views_done(struct views *v);

/* A stack as functions, outer to inner (with [cut] first); returns how many */
size_t views_seq(const struct views *v, const struct vstack *s, uint32_t **buf, size_t *cap);
/* The same, without a waker's part: what --top, --callers and --callees count */
size_t views_seq_own(const struct views *v, const struct vstack *s, uint32_t **buf, size_t *cap);

/* --folded (by_event: --by-event): "[event;]comm;outer;...;inner count", by text */
void views_folded(const struct views *v, FILE *out, bool by_event);
void views_top(const struct views *v, FILE *out, size_t limit);
/*
 * --callers, --callees: the functions whose name the regex matches
 * (anywhere in it), together.  -1 when none does (said on stderr).
 */
struct _GRegex;
int views_neighbours(const struct views *v, FILE *out, const char *pattern,
		     const struct _GRegex *re, bool callees);

/* flame.c, pprof.c: 0, or -1 with an error said */
int flame_write(const struct views *v, const char *path);
int pprof_write(const struct views *v, const char *path);

/* progress.c: a line on standard error when it is a terminal */
void progress_start(const char *path);
void progress_tick(unsigned long records);
void progress_end(void);

/* A frame of a stack as views_seq gives it, with its line (0: none) and
 * whether it is a call inlined into the frame before it */
struct vseq {
	uint32_t	func;
	int		line;
	bool		inlined;
};
size_t views_seq_lines(const struct views *v, const struct vstack *s, struct vseq **buf, size_t *cap);

#endif
