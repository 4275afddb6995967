/* SPDX-License-Identifier: MIT */
/* What a parsed hwtune command line holds: its one shared option, its release. */
#include "args.h"

#include <string.h>

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

void cli_args_free(struct cli_args *a)
{
	hwt_cpus_free(&a->cpus);
}
