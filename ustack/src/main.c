// SPDX-License-Identifier: GPL-2.0
/* ustack: record deferred user stacks with ftrace, and read them as symbols */
#include <string.h>

#include "ustack.h"

static int usage(void)
{
	fprintf(stderr,
		"usage: ustack record [-e SYSTEM:EVENT]... [-o FILE] -- COMMAND [ARGS]\n"
		"       ustack report [--folded] [--stats] [FILE]\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	if (!strcmp(argv[1], "record"))
		return cmd_record(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report"))
		return cmd_report(argc - 1, argv + 1);
	return usage();
}
