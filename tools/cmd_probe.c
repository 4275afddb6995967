/* SPDX-License-Identifier: MIT */
/* Placeholder until the probe lands (issue 2, in progress this session). */
#include "cli.h"

int cmd_probe(int argc, char **argv)
{
	(void)argc, (void)argv;
	cli_error("probe: not built yet");
	return 1;
}

int cmd_main(int argc, char **argv)
{
	return cmd_probe(argc, argv);
}
