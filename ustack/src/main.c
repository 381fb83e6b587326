// SPDX-License-Identifier: GPL-2.0
/* ustack: record deferred user stacks with ftrace, and read them as symbols */
#include <string.h>

#include "ustack.h"

#define USTACK_VERSION	"0.3"

static int usage(FILE *out, int ret)
{
	fprintf(out,
		"usage: ustack record [OPTIONS] (-- COMMAND [ARGS] | -p PID[,PID]... | -a)\n"
		"       ustack report [VIEW] [FILTER]... [FILE]\n"
		"       ustack buildid-list [FILE]\n"
		"       ustack archive [-o ARCHIVE] [FILE]\n"
		"       ustack --help | --version\n"
		"\"ustack COMMAND --help\" tells more.\n");
	return ret;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage(stderr, 2);
	if (!strcmp(argv[1], "record"))
		return cmd_record(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report"))
		return cmd_report(argc - 1, argv + 1);
	if (!strcmp(argv[1], "buildid-list"))
		return cmd_buildid_list(argc - 1, argv + 1);
	if (!strcmp(argv[1], "archive"))
		return cmd_archive(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))
		return usage(stdout, 0);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("ustack %s\n", USTACK_VERSION);
		return 0;
	}
	warnx_("unknown command '%s'", argv[1]);
	return usage(stderr, 2);
}
