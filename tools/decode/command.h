/* SPDX-License-Identifier: MIT */
/* hwtune decode: one SMMUv3 command (DW0 DW1) into its fields. */
#ifndef HWT_TOOL_DECODE_COMMAND_H
#define HWT_TOOL_DECODE_COMMAND_H

#include "args.h"

/* argv[0] is "decode". */
int decode_parse(int argc, char **argv, struct cli_args *a);
int decode_run(struct cli_args *a);

#endif
