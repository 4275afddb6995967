/* SPDX-License-Identifier: MIT */
/* hwtune cmdq: its parse and run steps, and its defaults for the main job. */
#ifndef HWT_TOOL_CMDQ_COMMAND_H
#define HWT_TOOL_CMDQ_COMMAND_H

#include <stdbool.h>
#include <stddef.h>

#include "args.h"
#include "cmdq/engine.h"

/* argv[0] is "cmdq". */
int cmdq_parse(int argc, char **argv, struct cli_args *a);
int cmdq_cmd_run(struct cli_args *a);

/* hwtune cmdq's options with no flags (HWTUNE_DISABLE_MSIPOLLING applied):
 * 0, or CLI_EXIT_USAGE after reporting a bad value of it. */
int cmdq_defaults(struct cmdq_opts *o);
/* Measure and print (as JSON or text), also copying the recommendation to
 * reco (NULL: none); returns the exit status (errors are reported). */
int cmdq_run(const struct cmdq_opts *o, bool json, char *reco, size_t len);

#endif
