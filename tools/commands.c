/* SPDX-License-Identifier: MIT */
/* hwtune's command line: which command, its parse step and its run step. */
#include "cli.h"

#include <hwtune/hwtune.h>
#include <stdbool.h>
#include <string.h>

static const struct {
	const char *name;
	int (*parse)(int argc, char **argv, struct cli_args *a);
	const char *help;
} commands[] = {
	{ "probe", probe_parse, "misaligned-access speed of each allowed CPU" },
	{ "cmdq", cmdq_parse, "CMD_SYNC latency: MSI vs CONS polling, floor, throughput" },
	{ "decode", decode_parse, "decode one SMMUv3 command (DW0 DW1, hex) into its fields" },
};

void cli_usage(FILE *f)
{
	fprintf(f, "usage: hwtune [OPTIONS]            measure this machine, recommend settings\n"
		   "       hwtune COMMAND [OPTIONS]    one part of it (hwtune COMMAND --help)\n"
		   "       hwtune -V|--version\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nWith no command: 'hwtune probe' on every allowed CPU (the system result of\n"
		   "'hwtune probe --system' first, then the cache per boot, then a probe),\n"
		   "then 'hwtune cmdq' (MSI polling against CONS polling on an empty queue,\n"
		   "interleaved with the cache-line floor), the kernel's own settings beside\n"
		   "them (arm_smmu_v3's disable_msipolling, an SMMUv3, boot parameters,\n"
		   "riscv_hwprobe, its log), then the recommendations.\n\n"
		   "  --no-cache         measure again, do not read the system result nor touch\n"
		   "                     the probe cache\n"
		   "  --json             one JSON object on stdout (= --format=json; docs/json.md)\n"
		   "  --per-cpu          one line per CPU instead of groups\n"
		   "  --format=FORMAT    text (default), json or prom (Prometheus text format,\n"
		   "                     for node_exporter's textfile collector)\n"
		   "  -V, --version      print the version (alone: no other argument)\n"
		   "  -h, --help         this text\n\n"
		   "Options take --opt=value or --opt value and may be abbreviated while\n"
		   "unambiguous; '--' ends the options.\n\n"
		   "Environment (checked before anything is measured; bad values, empty ones\n"
		   "included, exit 2; a command's flag beats its variable):\n"
		   "  HWTUNE_UNALIGNED_SCALAR_SPEED=slow|fast|unsupported   skip the scalar probe\n"
		   "  HWTUNE_UNALIGNED_VECTOR_SPEED=slow|fast|unsupported   skip the vector probe\n"
		   "                     (both: nothing is probed)\n"
		   "  HWTUNE_RUNTIME_DIR=DIR   folder of the system result (default /run/hwtune)\n"
		   "  HWTUNE_DISABLE_MSIPOLLING=0|1   1: measure CONS polling only\n\n"
		   "Exit status: 0 done, 1 a measurement or writing the output failed, 2 bad usage.\n");
}

bool cli_parse_format(const char *cmd, const char *word, struct cli_args *a)
{
	if (!strcmp(word, "text")) {
		a->json = a->prom = false;
	} else if (!strcmp(word, "json")) {
		a->json = true, a->prom = false;
	} else if (!strcmp(word, "prom")) {
		a->prom = true, a->json = false;
	} else {
		cli_cmd_error(cmd, "--format: invalid value '%s' (expected text, json or prom)", word);
		return false;
	}
	return true;
}

int cli_parse(int argc, char **argv, struct cli_args *a)
{
	memset(a, 0, sizeof(*a));
	/* A command is the first argument, spelt in full; everything else
	 * (options, "--", an unknown word) is the main job's to judge. */
	if (argc >= 2)
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			if (!strcmp(argv[1], commands[i].name))
				return commands[i].parse(argc - 1, argv + 1, a);
	return main_parse(argc, argv, a);
}

int cli_run(struct cli_args *a)
{
	return a->run(a);
}

void cli_args_free(struct cli_args *a)
{
	hwt_cpus_free(&a->cpus);
}
