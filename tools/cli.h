/* SPDX-License-Identifier: MIT */
/* Shared helpers of the hwtune command-line tool. */
#ifndef HWT_CLI_H
#define HWT_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/cli.h"

struct cmdq_opts;

/* Subcommands: argv[0] is the subcommand name; return the exit status. */
int cmd_probe(int argc, char **argv);
int cmd_cmdq(int argc, char **argv);
int cmd_decode(int argc, char **argv);
int cmd_main(int argc, char **argv);
/* hwtune cmdq's options with no flags (HWTUNE_DISABLE_MSIPOLLING applied):
 * 0, or CLI_EXIT_USAGE after reporting a bad value of it. */
int cmdq_defaults(struct cmdq_opts *o);
/* Measure and print (as JSON or text), also copying the recommendation to
 * reco (NULL: none); returns the exit status (errors are reported). */
int cmdq_run(const struct cmdq_opts *o, bool json, char *reco, size_t len);

#endif
