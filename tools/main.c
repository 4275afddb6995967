/* SPDX-License-Identifier: MIT */
/* hwtune: measure this machine and recommend settings. */
#include "cli.h"

#include <hwtune/hwtune.h>
#include <string.h>

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "probe", cmd_probe, "misaligned-access speed of each allowed CPU" },
	{ "cmdq", cmd_cmdq, "CMD_SYNC latency: MSI vs CONS polling, floor, throughput" },
	{ "decode", cmd_decode, "decode one SMMUv3 command (DW0 DW1, hex) into its fields" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: hwtune [COMMAND] [OPTIONS]\n\n"
		   "With no command, measure this machine and recommend settings.\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\n  --version  print the version\n  --help     this text\n\n"
		   "Every command takes --help.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return cmd_main(argc, argv);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("hwtune %s\n", hwt_version());
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	if (argv[1][0] == '-')
		return cmd_main(argc, argv);
	cli_error("unknown command '%s' (try 'hwtune --help')", argv[1]);
	return CLI_EXIT_USAGE;
}
