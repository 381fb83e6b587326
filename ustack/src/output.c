// SPDX-License-Identifier: GPL-2.0
/*
 * The files report writes (--flamegraph, --pprof).  An output never
 * replaces what it should not: the input, another output, a trace (an
 * output name forgotten: "--flamegraph t2.trace").  A regular file is
 * written to a temporary file beside it and renamed over it at the end,
 * with the old file's mode, so a failed write leaves the old file whole;
 * standard output ("-"), a FIFO or a device is written in place.
 */
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ustack.h"

struct output {
	char	*path;		/* as given */
	char	*target;	/* renamed over at the end; NULL: written in place */
	char	*tmp;		/* the temporary file, until renamed */
	FILE	*f;
	struct output *next;	/* in open_outputs */
};

/* The temporary files of outputs not yet committed, removed at exit */
static struct output *open_outputs;

static void remove_temporaries(void)
{
	for (struct output *o = open_outputs; o; o = o->next)
		if (o->tmp)
			unlink(o->tmp);
}

/* A file as the checks compare them: its inode if it exists, its path */
struct ident {
	bool	exists;
	dev_t	dev;
	ino_t	ino;
	char	*canon;		/* the real directory and the name; NULL for "-" */
};

static void identify(const char *path, int std_fd, struct ident *id)
{
	struct stat st;
	char *copy, *dir;

	memset(id, 0, sizeof(*id));
	if (!strcmp(path, "-")) {
		if (!fstat(std_fd, &st)) {
			id->exists = true;
			id->dev = st.st_dev;
			id->ino = st.st_ino;
		}
		return;
	}
	if (!stat(path, &st)) {
		id->exists = true;
		id->dev = st.st_dev;
		id->ino = st.st_ino;
	}
	id->canon = realpath(path, NULL);
	if (id->canon)
		return;
	/* A file still to be made: its directory's real path, and its name */
	copy = xstrdup(path);
	dir = realpath(dirname(copy), NULL);
	free(copy);
	copy = xstrdup(path);
	if (dir && asprintf(&id->canon, "%s/%s", dir, basename(copy)) < 0)
		die("out of memory");
	free(dir);
	free(copy);
}

static bool same(const struct ident *a, const struct ident *b)
{
	if (a->exists && b->exists)
		return a->dev == b->dev && a->ino == b->ino;
	return a->canon && b->canon && !strcmp(a->canon, b->canon);
}

/* Its temporary file can be made: said before the input is read */
static void dir_writable(const char *opt, const char *path)
{
	char *copy = xstrdup(path), *dir = dirname(copy);

	if (access(dir, W_OK | X_OK))
		die("%s %s: cannot write in %s: %s", opt, path, dir, strerror(errno));
	free(copy);
}

void output_check(const char *input, const char *const *paths, const char *const *opts,
		  size_t n, bool view_on_stdout, bool force)
{
	struct ident in, out[8], std;
	bool refused = false;
	struct stat st;
	size_t i, j;

	if (n > 8)
		die("internal error: too many outputs");
	identify(input, STDIN_FILENO, &in);
	/* "ustack report t.trace >> t.trace" would read what it writes */
	identify("-", STDOUT_FILENO, &std);
	if (view_on_stdout && !force && std.exists && !fstat(STDOUT_FILENO, &st) &&
	    S_ISREG(st.st_mode) && same(&std, &in)) {
		warnx_("standard output is the input %s: the report would read what it writes",
		       input);
		refused = true;
	}
	for (i = 0; i < n; i++) {
		if (!paths[i])
			continue;
		if (!*paths[i])
			die("%s: an empty file name", opts[i]);
		identify(paths[i], STDOUT_FILENO, &out[i]);
		if (!stat(paths[i], &st) && S_ISDIR(st.st_mode))
			die("%s %s is a directory: name the file to write", opts[i], paths[i]);
		if (strcmp(paths[i], "-") && (stat(paths[i], &st) || S_ISREG(st.st_mode)))
			dir_writable(opts[i], paths[i]);
		if (force)
			continue;
		if (!strcmp(paths[i], "-") && view_on_stdout) {
			warnx_("%s -: standard output already has the view (give a file, "
			       "or --force)", opts[i]);
			refused = true;
			continue;
		}
		for (j = 0; j < i && !(paths[j] && !strcmp(paths[j], "-") &&
				       !strcmp(paths[i], "-")); j++)
			;
		if (j < i) {
			warnx_("%s - and %s - both write standard output (give a file, "
			       "or --force)", opts[j], opts[i]);
			refused = true;
			continue;
		}
		/* Written in place, a FIFO or a device replaces nothing */
		if (!(strcmp(paths[i], "-") ? stat(paths[i], &st) : fstat(STDOUT_FILENO, &st)) &&
		    !S_ISREG(st.st_mode))
			continue;
		if (same(&out[i], &in) || (strcmp(input, "-") && !strcmp(paths[i], input))) {
			warnx_("%s %s is the input: it would be replaced (name another file, "
			       "or --force)", opts[i], paths[i]);
			refused = true;
			continue;
		}
		for (j = 0; j < i; j++) {
			if (paths[j] && (same(&out[i], &out[j]) || !strcmp(paths[i], paths[j])))
				break;
		}
		if (j < i) {
			warnx_("%s %s is also the file of %s: one would replace the other "
			       "(name another file, or --force)", opts[i], paths[i], opts[j]);
			refused = true;
			continue;
		}
		if (strcmp(paths[i], "-") && !stat(paths[i], &st) && input_is_trace(paths[i])) {
			warnx_("%s %s holds a trace: it would be replaced (was the output's "
			       "name forgotten? name another file, or --force)", opts[i], paths[i]);
			refused = true;
		}
	}
	free(in.canon);
	free(std.canon);
	for (i = 0; i < n; i++)
		if (paths[i])
			free(out[i].canon);
	if (refused)
		exit(2);
}

static void output_free(struct output *o)
{
	struct output **p;

	for (p = &open_outputs; *p; p = &(*p)->next) {
		if (*p == o) {
			*p = o->next;
			break;
		}
	}
	free(o->path);
	free(o->target);
	free(o->tmp);
	free(o);
}

static mode_t new_file_mode(void)
{
	mode_t mask = umask(0);

	umask(mask);
	return 0666 & ~mask;
}

struct output *output_open(const char *path)
{
	static bool at_exit;
	struct output *o = xcalloc(1, sizeof(*o));
	struct stat st;
	char *copy;
	mode_t mode;
	int fd;

	o->path = xstrdup(path);
	if (!strcmp(path, "-")) {
		fflush(stdout);
		o->f = stdout;
		return o;
	}
	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		/* A FIFO, a device: written in place */
		o->f = fopen(path, "w");
		if (!o->f) {
			warnx_("cannot write %s: %s", path, strerror(errno));
			output_free(o);
			return NULL;
		}
		return o;
	}
	if (!stat(path, &st)) {
		/* Through a symbolic link, the file it names is replaced */
		o->target = realpath(path, NULL);
		mode = st.st_mode & 07777;
	} else {
		o->target = NULL;
		mode = new_file_mode();
	}
	if (!o->target)
		o->target = xstrdup(path);
	copy = xstrdup(o->target);
	if (asprintf(&o->tmp, "%s/.ustack-out.XXXXXX", dirname(copy)) < 0)
		die("out of memory");
	free(copy);
	fd = mkstemp(o->tmp);
	if (fd < 0) {
		warnx_("cannot write %s: a temporary file beside it: %s", path, strerror(errno));
		free(o->tmp);
		o->tmp = NULL;
		output_free(o);
		return NULL;
	}
	o->next = open_outputs;
	open_outputs = o;
	if (!at_exit) {
		atexit(remove_temporaries);
		at_exit = true;
	}
	if (fchmod(fd, mode) || !(o->f = fdopen(fd, "w"))) {
		warnx_("cannot write %s: %s", path, strerror(errno));
		close(fd);
		output_abort(o);
		return NULL;
	}
	return o;
}

FILE *output_stream(struct output *o)
{
	return o->f;
}

int output_fd(struct output *o)
{
	fflush(o->f);
	return fileno(o->f);
}

/* Why a stream could not be written, or NULL: flushed, and its error flag */
static const char *stream_error(FILE *f)
{
	if (fflush(f))
		return strerror(errno);
	if (ferror(f))
		return "a write failed";
	return NULL;
}

int output_commit(struct output *o)
{
	const char *why = stream_error(o->f);

	if (o->f == stdout) {
		if (why)
			warnx_("cannot write %s (standard output): %s", o->path, why);
		output_free(o);
		return why ? -1 : 0;
	}
	if (!why && o->tmp && fsync(fileno(o->f)))
		why = strerror(errno);
	if (fclose(o->f) && !why)
		why = strerror(errno);
	o->f = NULL;
	if (!why && o->tmp && rename(o->tmp, o->target))
		why = strerror(errno);
	if (why) {
		warnx_("cannot write %s: %s%s", o->path, why,
		       o->tmp ? " (the file is left as it was)" : "");
		if (o->tmp)
			unlink(o->tmp);
		output_free(o);
		return -1;
	}
	free(o->tmp);
	o->tmp = NULL;
	output_free(o);
	return 0;
}

void output_abort(struct output *o)
{
	if (o->f && o->f != stdout)
		fclose(o->f);
	if (o->tmp)
		unlink(o->tmp);
	output_free(o);
}

/* The first write error of standard output: errno, -1 when unknown */
static int stdout_errno;

static bool stdout_failed(void)
{
	if (!ferror_unlocked(stdout))
		return false;
	/* Called right after the writes: errno is the failed write's */
	if (!stdout_errno)
		stdout_errno = errno ? errno : -1;
	return true;
}

static const char *stdout_reason(void)
{
	return stdout_errno > 0 ? strerror(stdout_errno) : "a write failed";
}

void output_check_stdout(void)
{
	if (stdout_failed())
		die("cannot write standard output: %s", stdout_reason());
}

void output_flush_stdout(void)
{
	/* A failed flush keeps what it could not write: the next one would
	 * drop it and succeed, so its errno is noted now */
	if (fflush(stdout) && !stdout_errno)
		stdout_errno = errno;
	stdout_failed();
}

int output_close_stdout(void)
{
	output_flush_stdout();
	if (!stdout_errno && fclose(stdout))
		stdout_errno = errno;
	if (stdout_errno) {
		warnx_("cannot write standard output: %s", stdout_reason());
		return -1;
	}
	return 0;
}
