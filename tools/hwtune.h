/* SPDX-License-Identifier: MIT */
/* hwtune's whole command line: the command named first, else the main job. */
#ifndef HWT_TOOL_HWTUNE_H
#define HWT_TOOL_HWTUNE_H

#include "args.h"

/* The whole command line, argv[0] being the program: zeroes *a first.
 * CLI_RUN, or the exit status (see struct cli_args). */
int cli_parse(int argc, char **argv, struct cli_args *a);
/* The parsed command's run step: the exit status. */
int cli_run(struct cli_args *a);

#endif
