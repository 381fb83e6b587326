// SPDX-License-Identifier: GPL-2.0
/*
 * ustack buildid-list: the build-ids of the files a trace names, one
 * "BUILD-ID PATH" line each, as perf buildid-list prints them, so that
 * the binaries and debug files a report needs elsewhere can be gathered.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

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
			if (path)
				die("one trace at a time: %s and %s", path, optarg);
			path = optarg;
			break;
		case 'h':
			usage(true);
			break;
		default:
			bad_option("buildid-list", opt, argv);
			usage(false);
		}
	}
	if (optind < argc) {
		if (path)
			die("one trace at a time: %s and %s", path, argv[optind]);
		path = argv[optind++];
	}
	if (optind < argc)
		die("one trace at a time: %s and %s", path, argv[optind]);
	in = input_open(path ? path : "ustack.trace");
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
