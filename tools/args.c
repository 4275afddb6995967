/* SPDX-License-Identifier: MIT */
/* What a parsed hwtune command line holds: its one shared option, its release. */
#include "args.h"

#include <string.h>

/* The format word chosen by option `by` (as written for messages). */
static bool set_format(const char *cmd, const char *word, const char *by, struct cli_args *a)
{
	bool json = !strcmp(word, "json"), prom = !strcmp(word, "prom");

	if (a->format_by[0] && (a->json != json || a->prom != prom)) {
		cli_cmd_error(cmd, "%s and %s choose different output formats (give one; --json is "
			      "--format=json)", a->format_by, by);
		return false;
	}
	a->json = json, a->prom = prom;
	snprintf(a->format_by, sizeof(a->format_by), "%s", by);
	return true;
}

bool cli_parse_format(const char *cmd, const char *word, struct cli_args *a)
{
	char by[sizeof(a->format_by)];

	if (strcmp(word, "text") && strcmp(word, "json") && strcmp(word, "prom")) {
		cli_cmd_error(cmd, "--format: invalid value '%s' (expected text, json or prom)",
			      cli_value(word));
		return false;
	}
	snprintf(by, sizeof(by), "--format=%s", word);
	return set_format(cmd, word, by, a);
}

bool cli_json_flag(const char *cmd, struct cli_args *a)
{
	return set_format(cmd, "json", "--json", a);
}

void cli_args_free(struct cli_args *a)
{
	hwt_cpus_free(&a->cpus);
}
