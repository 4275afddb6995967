/* SPDX-License-Identifier: MIT */
/* hwtune: measure this machine and recommend settings. */
#include "cli.h"

int main(int argc, char **argv)
{
	struct cli_args a;
	int r = cli_parse(argc, argv, &a);

	if (r == CLI_RUN)
		r = cli_run(&a);
	cli_args_free(&a);
	return r;
}
