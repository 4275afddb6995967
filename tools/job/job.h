/* SPDX-License-Identifier: MIT */
/* hwtune with no command: the main job (probe, cmdq, the kernel, advice). */
#ifndef HWT_TOOL_JOB_H
#define HWT_TOOL_JOB_H

#include "args.h"

/* argv[0] is the program's name; the whole environment is checked here. */
int main_parse(int argc, char **argv, struct cli_args *a);
int main_run(struct cli_args *a);

#endif
