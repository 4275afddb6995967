/* SPDX-License-Identifier: MIT */
/* hwtune's command line: which command, its parse step and its run step. */
#include "cli.h"

#include <hwtune/hwtune.h>
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

int cli_parse(int argc, char **argv, struct cli_args *a)
{
	memset(a, 0, sizeof(*a));
	if (argc < 2)
		return main_parse(argc, argv, a);
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
			return commands[i].parse(argc - 1, argv + 1, a);
	if (argv[1][0] == '-')
		return main_parse(argc, argv, a);
	cli_error("unknown command '%s' (try 'hwtune --help')", argv[1]);
	return CLI_EXIT_USAGE;
}

int cli_run(struct cli_args *a)
{
	return a->run(a);
}

void cli_args_free(struct cli_args *a)
{
	hwt_cpus_free(&a->cpus);
}
