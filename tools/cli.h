/* SPDX-License-Identifier: MIT */
/* Shared helpers of the hwtune command-line tool. */
#ifndef HWT_CLI_H
#define HWT_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <hwtune/hwtune.h>

#include "cmdq_engine.h"
#include "util/cli.h"

/*
 * Every command is a parse step and a run step.  Parsing reads argv into
 * struct cli_args and measures nothing (tests/fuzz/cli_args.c runs it
 * alone); it returns CLI_RUN when the command should go on, else the exit
 * status the tool ends with: 0 after --help or --version (printed),
 * CLI_EXIT_USAGE after reporting bad usage.  Running returns the exit
 * status.  Release the arguments with cli_args_free() in either case.
 */
#define CLI_RUN (-1)

struct cli_args {
	int (*run)(struct cli_args *a);  /* the command's run step (set by cli_parse) */
	bool json;                       /* --json, --format=json (every command) */
	bool per_cpu;                    /* --per-cpu (probe, the main job): one line per CPU */
	bool prom;                       /* --format=prom (probe, the main job) */
	struct hwt_misaligned_opts probe; /* probe, and the main job's probe */
	struct hwt_cpus cpus;            /* probe --cpus, when have_cpus */
	bool have_cpus;
	bool system;                     /* probe --system: probe fresh, write the system file */
	struct cmdq_opts cmdq;           /* cmdq */
	uint64_t dw[2];                  /* decode */
};

/* The whole command line, argv[0] being the program: zeroes *a first. */
int cli_parse(int argc, char **argv, struct cli_args *a);
int cli_run(struct cli_args *a);
void cli_args_free(struct cli_args *a);

/* Subcommands: argv[0] is the subcommand name (the main job: the program's). */
int probe_parse(int argc, char **argv, struct cli_args *a);
int probe_run(struct cli_args *a);
int cmdq_parse(int argc, char **argv, struct cli_args *a);
int cmdq_cmd_run(struct cli_args *a);
int decode_parse(int argc, char **argv, struct cli_args *a);
int decode_run(struct cli_args *a);
int main_parse(int argc, char **argv, struct cli_args *a);
int main_run(struct cli_args *a);

/* The top-level usage text (commands and the main job's options). */
void cli_usage(FILE *f);
/* --format=WORD of command cmd (NULL: the main job): text, json or prom
 * into a->json and a->prom; false after reporting a bad word. */
bool cli_parse_format(const char *cmd, const char *word, struct cli_args *a);

/* hwtune cmdq's options with no flags (HWTUNE_DISABLE_MSIPOLLING applied):
 * 0, or CLI_EXIT_USAGE after reporting a bad value of it. */
int cmdq_defaults(struct cmdq_opts *o);
/* Measure and print (as JSON or text), also copying the recommendation to
 * reco (NULL: none); returns the exit status (errors are reported). */
int cmdq_run(const struct cmdq_opts *o, bool json, char *reco, size_t len);

#endif
