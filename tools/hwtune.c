/* SPDX-License-Identifier: MIT */
/* hwtune's whole command line: the command named first, else the main job. */
#include "hwtune.h"

#include "commands.h"
#include "job/job.h"

#include <string.h>

int cli_parse(int argc, char **argv, struct cli_args *a)
{
	const struct cli_command *c = argc >= 2 ? cli_command(argv[1]) : NULL;

	memset(a, 0, sizeof(*a));
	/* A command is the first argument, spelt in full; everything else
	 * (options, "--", an unknown word) is the main job's to judge. */
	if (c)
		return c->parse(argc - 1, argv + 1, a);
	return main_parse(argc, argv, a);
}

int cli_run(struct cli_args *a)
{
	return a->run(a);
}
