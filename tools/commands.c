/* SPDX-License-Identifier: MIT */
/* hwtune's commands: each one's name, parse step and one-line help. */
#include "commands.h"

#include "cmdq/command.h"
#include "decode/command.h"
#include "probe/command.h"

#include <string.h>

static const struct cli_command commands[] = {
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
		   "                     for node_exporter's textfile collector); one format\n"
		   "                     per run: --json --format=prom is an error\n"
		   "  -V, --version      print the version (alone: no other argument)\n"
		   "  -h, --help         this text\n\n"
		   "Options take --opt=value or --opt value and may be abbreviated while\n"
		   "unambiguous; '--' ends the options.\n\n"
		   "Environment (checked before anything is measured; bad values, empty ones\n"
		   "included, exit 2; a command's flag beats its variable):\n"
		   "  HWTUNE_UNALIGNED_SCALAR_SPEED=slow|fast|unsupported   skip the scalar probe\n"
		   "  HWTUNE_UNALIGNED_VECTOR_SPEED=slow|fast|unsupported   skip the vector probe\n"
		   "                     (both: nothing is probed)\n"
		   "  HWTUNE_RUNTIME_DIR=DIR   folder of the system result, absolute (unset or\n"
		   "                     empty: /run/hwtune)\n"
		   "  HWTUNE_DISABLE_MSIPOLLING=0|1   1: measure CONS polling only\n\n"
		   "Exit status: 0 done, 1 a measurement or writing the output failed, 2 bad usage.\n");
}

const struct cli_command *cli_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}
