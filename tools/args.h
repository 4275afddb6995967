/* SPDX-License-Identifier: MIT */
/* What a parsed hwtune command line holds, whichever command it names. */
#ifndef HWT_TOOL_ARGS_H
#define HWT_TOOL_ARGS_H

#include <stdbool.h>
#include <stdint.h>

#include <hwtune/hwtune.h>

#include "prog/cli.h"
#include "cmdq/engine.h"

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
	int (*run)(struct cli_args *a);  /* the command's run step (set by its parse step) */
	bool json;                       /* --json, --format=json (every command) */
	bool per_cpu;                    /* --per-cpu (probe, the main job): one line per CPU */
	bool prom;                       /* --format=prom (probe, the main job) */
	char format_by[16];              /* the option that chose the format ("--json",
					  * "--format=prom"); "": none yet */
	struct hwt_misaligned_opts probe; /* probe, and the main job's probe */
	struct hwt_cpus cpus;            /* probe --cpus, when have_cpus */
	bool have_cpus;
	bool system;                     /* probe --system: probe fresh, write the system file */
	struct cmdq_opts cmdq;           /* cmdq */
	uint64_t dw[2];                  /* decode */
};

void cli_args_free(struct cli_args *a);
/*
 * --format=WORD of command cmd (NULL: the main job): text, json or prom
 * into a->json and a->prom; cli_json_flag is --json (= --format=json).
 * One output format per run: repeating the same one is fine, choosing a
 * different one (--json --format=prom) is refused.  false after reporting
 * a bad word or the conflict (naming both options).
 */
bool cli_parse_format(const char *cmd, const char *word, struct cli_args *a);
bool cli_json_flag(const char *cmd, struct cli_args *a);

#endif
