/* SPDX-License-Identifier: MIT */
/* hwtune probe: its parse and run steps. */
#ifndef HWT_TOOL_PROBE_COMMAND_H
#define HWT_TOOL_PROBE_COMMAND_H

#include "args.h"

/* argv[0] is "probe". */
int probe_parse(int argc, char **argv, struct cli_args *a);
int probe_run(struct cli_args *a);

#endif
