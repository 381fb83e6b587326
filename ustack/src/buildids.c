// SPDX-License-Identifier: GPL-2.0
/*
 * ustack buildid-list: the build-ids of the files a trace names, one
 * "BUILD-ID PATH" line each, as perf buildid-list prints them, so that
 * the binaries and debug files a report needs elsewhere can be gathered;
 * ustack archive gathers them, by build-id, into one tar that
 * ustack report --binaries reads.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#include "ustack.h"

static void usage(bool help)
{
	fprintf(help ? stdout : stderr,
		"usage: ustack buildid-list [[-i] FILE]\n"
		"  -i FILE, --input FILE  the trace, as ustack report reads it (default\n"
		"                         ustack.trace); or FILE after the options\n"
		"Prints \"BUILD-ID PATH\" for each file the trace's inode_cache events name\n"
		"with a build-id, once; PATH escaped as in the trace.  On standard error, how\n"
		"many named files had none, or none read.\n");
	exit(help ? 0 : 2);
}

int cmd_buildid_list(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL;
	GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	unsigned long without = 0;
	struct input *in;
	struct rec rec;
	int opt, ret;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":hi:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			input_arg(&path, optarg);
			break;
		case 'h':
			usage(true);
			break;
		default:
			bad_option("buildid-list", opt, argv);
			usage(false);
		}
	}
	path = input_rest(path, argc, argv, "ustack.trace");
	in = input_open(path);
	while ((ret = input_next(in, &rec)) > 0) {
		GString *key;

		if (rec.type != REC_INODE || !rec.path)
			continue;
		key = g_string_new(NULL);
		for (size_t i = 0; rec.build_id && i < rec.build_id_len; i++)
			g_string_append_printf(key, "%02x", rec.build_id[i]);
		g_string_append_c(key, ' ');
		g_string_append(key, rec.path);
		if (g_hash_table_contains(seen, key->str)) {
			g_string_free(key, TRUE);
			continue;
		}
		if (!rec.build_id || !rec.build_id_len)
			without++;
		else {
			fwrite(key->str, 1, strchr(key->str, ' ') + 1 - key->str, stdout);
			path_escape(stdout, rec.path, strlen(rec.path));
			putchar('\n');
		}
		g_hash_table_add(seen, g_string_free(key, FALSE));
	}
	if (without)
		fprintf(stderr, "ustack: %lu named files with no build-id in the trace (none, "
			"or not read without I/O): report finds them by path\n", without);
	g_hash_table_destroy(seen);
	if (input_close(in) || ret < 0)
		return 2;
	return output_close_stdout() ? 2 : 0;
}

static void archive_usage(bool help)
{
	fprintf(help ? stdout : stderr,
		"usage: ustack archive [-o ARCHIVE] [[-i] FILE]\n"
		"  -i FILE, --input FILE  the trace, as ustack report reads it (default\n"
		"                         ustack.trace); or FILE after the options\n"
		"  -o ARCHIVE       the tar to write (default FILE.tar): each file the trace\n"
		"                   names with a build-id, as .build-id/xx/rest, and its debug\n"
		"                   file from /usr/lib/debug/.build-id, if any, beside it; on\n"
		"                   another machine, ustack report --binaries ARCHIVE reads it\n");
	exit(help ? 0 : 2);
}

/* A link to @target at DIR/.build-id/xx/rest[@suffix] */
static bool stage_link(const char *dir, const char *hex, const char *suffix, const char *target)
{
	char *top = xasprintf("%s/.build-id", dir);
	char *sub = xasprintf("%s/%.2s", top, hex);
	char *link = xasprintf("%s/%s%s", sub, hex + 2, suffix);
	bool ok;

	mkdir(top, 0755);
	mkdir(sub, 0755);
	ok = !symlink(target, link) || errno == EEXIST;
	free(top);
	free(sub);
	free(link);
	return ok;
}

int cmd_archive(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL, *out_opt = NULL;
	GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	unsigned long files = 0, debug = 0, missing = 0, without = 0;
	char *out;
	char stage[] = "/tmp/ustack-archive.XXXXXX", *tmp_out;
	struct input *in;
	struct rec rec;
	int opt, ret;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":hi:o:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			input_arg(&path, optarg);
			break;
		case 'o':
			out_opt = optarg;
			break;
		case 'h':
			archive_usage(true);
			break;
		default:
			bad_option("archive", opt, argv);
			archive_usage(false);
		}
	}
	path = input_rest(path, argc, argv, "ustack.trace");
	if (!strcmp(path, "-") && !out_opt)
		die("archive: give -o ARCHIVE when the trace is standard input");
	out = out_opt ? xstrdup(out_opt) : xasprintf("%s.tar", path);
	if (!mkdtemp(stage))
		die("archive: cannot make a directory to gather the files: %s", strerror(errno));
	in = input_open(path);
	while ((ret = input_next(in, &rec)) > 0) {
		unsigned char id[BUILD_ID_MAX];
		char hex[2 * BUILD_ID_MAX + 1], *dbg;
		ssize_t len;

		if (rec.type != REC_INODE || !rec.path)
			continue;
		if (!rec.build_id || !rec.build_id_len) {
			/* Counted once a file, as names come again in later sub-buffers */
			char *key = xasprintf(" %s", rec.path);

			if (g_hash_table_add(seen, key))
				without++;
			continue;
		}
		for (size_t i = 0; i < rec.build_id_len; i++)
			snprintf(hex + 2 * i, 3, "%02x", rec.build_id[i]);
		if (g_hash_table_contains(seen, hex))
			continue;
		g_hash_table_add(seen, xstrdup(hex));
		/* The file as it is here: only if it is still the one traced */
		len = symbols_file_build_id(rec.path, id);
		if (len != (ssize_t)rec.build_id_len || memcmp(id, rec.build_id, (size_t)len)) {
			warnx_("not archived: %s (build-id %s): %s", rec.path, hex,
			       len < 0 ? "no such ELF file here" : "the file here has another build-id");
			missing++;
			continue;
		}
		if (!stage_link(stage, hex, "", rec.path))
			die("archive: cannot link %s: %s", rec.path, strerror(errno));
		files++;
		dbg = xasprintf("/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
		if (!access(dbg, R_OK)) {
			if (!stage_link(stage, hex, ".debug", dbg))
				die("archive: cannot link %s: %s", dbg, strerror(errno));
			debug++;
		}
		free(dbg);
	}
	g_hash_table_destroy(seen);
	if (input_close(in) || ret < 0 || !files) {
		remove_tree(stage);
		free(out);
		if (!files)
			die("archive: no file of %s could be archived (%lu without a build-id, "
			    "%lu not here)", path, without, missing);
		return 2;
	}
	/* tar writes beside the archive, renamed over it when it succeeded */
	tmp_out = xasprintf("%s.tmp", out);
	{
		char *argv_tar[] = { "tar", "-chf", tmp_out, "-C", stage, ".build-id", NULL };

		ret = run_tar(argv_tar) || rename(tmp_out, out) ? 2 : 0;
		if (ret) {
			unlink(tmp_out);
			warnx_("archive: cannot write %s", out);
		}
	}
	remove_tree(stage);
	if (!ret)
		fprintf(stderr, "ustack: archived %lu files and %lu debug files in %s; %lu named "
			"without a build-id and %lu not found here are not in it\n",
			files, debug, out, without, missing);
	free(tmp_out);
	free(out);
	return ret;
}
