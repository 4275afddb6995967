/* SPDX-License-Identifier: MIT */
/* hwtune's commands (probe, cmdq, decode) and the top-level usage text. */
#ifndef HWT_TOOL_COMMANDS_H
#define HWT_TOOL_COMMANDS_H

#include <stdio.h>

#include "args.h"

struct cli_command {
	const char *name;
	/* argv[0] is the command's name; see struct cli_args for the answer */
	int (*parse)(int argc, char **argv, struct cli_args *a);
	const char *help;
};

/* The command spelt exactly name, or NULL. */
const struct cli_command *cli_command(const char *name);
/* The top-level usage text (the commands and the main job's options). */
void cli_usage(FILE *f);

#endif
