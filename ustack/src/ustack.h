/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ustack: record deferred user stacks with ftrace and report them as
 * symbols.  Shared declarations.
 */
#ifndef USTACK_H
#define USTACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The kernel's "no VMA" inode, printed as -1 */
#define USTACK_NO_VMA	UINT64_MAX
/* The VMA could not be looked up: the mm lock was not taken; printed as -2 */
#define USTACK_NO_MM_LOCK	(UINT64_MAX - 1)
/* The frame is in a file that is not regular (a socket, a device): -3 */
#define USTACK_NOT_REG	(UINT64_MAX - 2)

/* A device in the encoding stat(2) gives user space, as the events carry it */
#define KDEV_MAJOR(d)	((unsigned int)(((d) >> 8) & 0xfff))
#define KDEV_MINOR(d)	((unsigned int)(((d) & 0xff) | (((d) >> 12) & 0xfff00)))
#define KDEV(ma, mi)	((((uint32_t)(mi) & 0xff) | ((uint32_t)(ma) & 0xfff) << 8 | \
			  ((uint32_t)(mi) & 0xfff00) << 12))

struct frame {
	uint64_t	off;	/* file offset, or address when not in a file */
	uint64_t	ino;
	uint32_t	dev;
	/* Found by the CFI unwind of the stack's copy, not by the kernel's
	 * frame-pointer walk */
	bool		cfi;
};

/* A user_unwind_stack record, decoded by stack_decode() (stackrec.c) */
struct stack_frames {
	uint64_t	cookie;
	uint64_t	lost;
	struct frame	*frames;	/* innermost first; grown as needed */
	size_t		nr;
	size_t		cap;
	/* The record's files, which a user_unwind_copy's mappings index */
	uint64_t	*inodes, *bases;
	uint32_t	*devs;
	size_t		nfiles, files_cap;
};

struct tep_event;
struct tep_record;
const char *stack_format_lacks(struct tep_event *ev);
/* Fields of a record by name, checked to lie inside it; *why says why not */
bool field_num(struct tep_event *ev, struct tep_record *r, const char *name,
	       unsigned long long *v, const char **why);
const unsigned char *field_array(struct tep_event *ev, struct tep_record *r,
				 const char *name, size_t elem, size_t *nr,
				 const char **why);
bool stack_decode(struct tep_event *ev, struct tep_record *r, struct stack_frames *out,
		  const char **why);
void stack_frames_free(struct stack_frames *sf);

/*
 * copy.c: a user_unwind_copy (the top of the user stack, the registers and
 * the executable mappings) unwound with the CFI of the mapped files, and
 * merged into the frame-pointer frames of the stack it follows.
 */
struct copy_unwinder;
struct copy_unwinder *copy_unwinder_new(void);
void copy_unwinder_free(struct copy_unwinder *u);
/* A file as inode_cache names it: the path unescaped, or NULL; its
 * build-id, or NULL when the trace gives none */
void copy_unwinder_name(struct copy_unwinder *u, uint64_t ino, uint32_t dev, const char *path,
			const unsigned char *build_id, size_t build_id_len);
/* The field of user_unwind_copy that the format lacks, or NULL */
const char *copy_format_lacks(struct tep_event *ev);
/* The copy's cookie: false if the record is too short for it */
bool copy_cookie(struct tep_event *ev, struct tep_record *r, uint64_t *cookie);
/*
 * The frames of @stack, which the copy @r follows, replaced by those the
 * CFI unwind finds up to the first frame both agree on, and the stack's
 * frames from there.  *edge: the unwind stopped at the copy's end.  False
 * with *why when the record is malformed (the stack is left as it was).
 */
/* The sets of mappings the copies had, and how many of them were opened
 * anew rather than grown from their task's set before */
void copy_unwinder_counts(const struct copy_unwinder *u, unsigned long *sets,
			  unsigned long *opened);
bool copy_merge(struct copy_unwinder *u, struct tep_event *ev, struct tep_record *r,
		struct stack_frames *stack, bool *edge, const char **why);

enum rec_type {
	REC_EVENT,	/* any event that may ask for a stack */
	REC_COOKIE,	/* user_unwind_cookie */
	REC_STACK,	/* user_unwind_stack */
	REC_INODE,	/* inode_cache */
	REC_LOST,	/* the ring buffer lost events */
};

/* One record of a trace, whatever the input format; see input.c */
struct rec {
	enum rec_type	type;
	int		cpu;
	int		pid;
	int		tgid;		/* its process, from "(TGID)" after the pid; 0 if none */
	char		comm[64];
	char		ts[32];		/* as printed: seconds.fraction */
	/* The context the record was written in, from its flags: 'h' a hard
	 * interrupt, 's' a soft one, 'n' an NMI; 0 the task (or not known) */
	char		irq;
	bool		flags;		/* the record gave its flags */
	const char	*text;		/* REC_EVENT: "name: details" */
	/* REC_EVENT: the name of its format (sys_enter_openat), whatever
	 * the text printed (sys_openat(...)) */
	const char	*name;
	uint64_t	cookie;		/* REC_COOKIE, REC_STACK */
	uint64_t	lost;		/* REC_STACK: frames cut; REC_LOST: events */
	size_t		nr;		/* REC_STACK */
	struct frame	*frames;	/* REC_STACK, innermost first */
	bool		copy_edge;	/* REC_STACK: the CFI unwind of its copy ran off its end */
	uint64_t	ino;		/* REC_INODE */
	uint32_t	dev;		/* REC_INODE */
	int		err;		/* REC_INODE: no path, -errno */
	const char	*path;		/* REC_INODE: unescaped */
	/* REC_INODE: the file's ELF build-id; NULL when the trace has no
	 * build_id (older kernels); build_id_len 0 is build_id=none */
	const unsigned char *build_id;
	size_t		build_id_len;
};

/* util.c */
void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t size);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void put_u64(FILE *out, uint64_t v, unsigned int base, unsigned int width);
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void bad_option(const char *cmd, int opt, char **argv);
void input_arg(const char **path, const char *arg);
const char *input_rest(const char *path, int argc, char **argv, const char *dflt);
void remove_tree(const char *dir);
void warnx_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
size_t path_unescape(char *s);
void path_escape(FILE *out, const char *s, size_t len);
/* The inode and device the kernel gives a mapping of the file at @path
 * (overlayfs's stat gives others): 0, or -1 */
int mapped_identity(const char *path, uint64_t *ino, unsigned int *ma, unsigned int *mi);

/* text.c: names as text for the files report writes */
char *text_utf8(const char *s);
void text_js(FILE *out, const char *s);

/* map.c: a hash map from a pair of u64 to a pointer */
struct map;
struct map *map_new(void);
void map_free(struct map *m, void (*free_value)(void *));
void *map_get(struct map *m, uint64_t a, uint64_t b);
void map_put(struct map *m, uint64_t a, uint64_t b, void *value);
void *map_del(struct map *m, uint64_t a, uint64_t b);
size_t map_size(const struct map *m);
void map_each(struct map *m, void (*fn)(uint64_t a, uint64_t b, void *value, void *ctx),
	      void *ctx);

/* input.c */
struct input;
struct input *input_open(const char *path);
int input_next(struct input *in, struct rec *rec);
int input_close(struct input *in);
const char *input_format(const struct input *in);
/* A file whose start says it is a trace, as input_open tells */
bool input_is_trace(const char *path);

/* output.c: the files report writes (--flamegraph, --pprof) */
struct output;
/* Before anything is read: refuse (exit 2) an output that would replace
 * the input, another output, or a file that holds a trace, unless force */
void output_check(const char *input, const char *const *paths, const char *const *opts,
		  size_t n, bool view_on_stdout, bool force);
/* NULL when it cannot be written, the reason said */
struct output *output_open(const char *path);
FILE *output_stream(struct output *o);
int output_fd(struct output *o);
/* The file in its place: 0, or -1 with the reason said and the old file kept */
int output_commit(struct output *o);
void output_abort(struct output *o);
/* Standard output: exit 2 if a write failed; flushed, its error noted;
 * flushed and closed at the end: 0, or -1 with the reason said */
void output_check_stdout(void);
void output_flush_stdout(void);
int output_close_stdout(void);

/* symbols.c */
struct symbols;
struct symbols *symbols_new(void);
void symbols_free(struct symbols *syms);
/* build_id: NULL when the trace gives none (older kernels); len 0: "none" */
void symbols_name_file(struct symbols *syms, uint64_t ino, uint32_t dev,
		       const char *path, int err, const unsigned char *build_id,
		       size_t build_id_len);
/* --binaries DIR: look the files up in DIR first, by build-id, path or name */
#define BUILD_ID_MAX	20	/* the kernel's BUILD_ID_SIZE_MAX */
void symbols_binaries(const char *dir);
ssize_t symbols_file_build_id(const char *path, unsigned char *id);
int run_tar(char *const argv[]);
/*
 * One line of a frame: an inlined call, or the function the code is in.
 * The strings belong to the symbols (libdw's, or interned per file) and
 * stay valid until the file is named again or the symbols are freed.
 */
struct sym {
	const char	*name;		/* demangled; NULL: no symbol (off is the address) */
	const char	*src;		/* the source file; the ELF file if no_line */
	uint64_t	off;		/* from the function's symbol (not for inlined) */
	int		line;
	bool		no_line;	/* no line information */
	bool		inlined;	/* inlined into the next line's function */
};
/*
 * The lines of a frame, innermost first: the inlined calls the address is
 * in, then the function ("function+0xoff (file:line)"). Returns how many,
 * or 0 with *why set.
 */
size_t symbols_resolve(struct symbols *syms, const struct frame *f,
		       bool return_address, const struct sym **lines, const char **why);
/* One line as report prints it, without indent or newline */
void symbols_print(FILE *out, const struct sym *s);
/* A loadable segment (PT_LOAD) of an ELF file, as its program header says */
struct elf_load {
	uint64_t	vaddr, offset, filesz, memsz;
};
struct elf_layout {
	char		build_id[2 * 20 + 1];	/* hex, of up to 20 bytes; "" for none */
	size_t		nloads;
	struct elf_load	*loads;		/* malloc'd: the caller frees it */
};
/*
 * The ELF of the frames of (ino, dev), when symbols_resolve opened it (for
 * --pprof's mappings): its build-id and PT_LOAD segments.  false: not opened.
 */
bool symbols_elf(struct symbols *syms, uint64_t ino, uint32_t dev, struct elf_layout *out);
struct symbols_stats {
	size_t files;		/* named by inode_cache */
	size_t unknown_inodes;	/* frames in files never named */
	size_t changed;		/* files whose path now names another */
	size_t replaced;	/* files whose build-id differs from the traced one */
	size_t unresolved;	/* frames printed raw */
	size_t resolved;
	size_t cache_hits;
};
void symbols_stats(const struct symbols *syms, struct symbols_stats *st);

/* record.c, report.c */
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_buildid_list(int argc, char **argv);
int cmd_archive(int argc, char **argv);

#endif
