/* SPDX-License-Identifier: MIT */
/* hwtune with no command: measure this machine and recommend settings. */
#include "cli.h"
#include "cmd_probe.h"
#include "cmdq_engine.h"

#include <string.h>

/* The whole environment is checked here, before anything is measured. */
int main_parse(int argc, char **argv, struct cli_args *a)
{
	enum { O_NOCACHE = 256, O_JSON, O_PERCPU, O_FORMAT };
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "no-cache", no_argument, NULL, O_NOCACHE },
		{ "json", no_argument, NULL, O_JSON },
		{ "per-cpu", no_argument, NULL, O_PERCPU },
		{ "format", required_argument, NULL, O_FORMAT },
		{ NULL, 0, NULL, 0 },
	};
	struct hwt_misaligned_opts *o = &a->probe;
	const char *other = NULL;
	char opt[64];
	struct cli_getopt g;
	bool version = false;
	int c, s;

	cli_getopt_begin(&g, NULL, argc, argv, "hV", longopts);
	while ((c = cli_getopt_next(&g)) != -1) {
		switch (c) {
		case 'h':
			cli_usage(stdout);
			return 0;
		case 'V':
			version = true;
			continue;
		case O_NOCACHE:
			o->flags |= HWT_MISALIGNED_NO_CACHE;
			break;
		case O_JSON:
			a->json = true, a->prom = false;
			break;
		case O_PERCPU:
			a->per_cpu = true;
			break;
		case O_FORMAT:
			if (!cli_parse_format(NULL, g.arg, a))
				return CLI_EXIT_USAGE;
			break;
		case 1:
			if (!version) {
				cli_error("unknown command '%s' (try 'hwtune --help')", g.arg);
				return CLI_EXIT_USAGE;
			}
			other = g.arg;
			continue;
		default:
			return CLI_EXIT_USAGE;
		}
		if (!other) {
			snprintf(opt, sizeof(opt), "%s", g.name);
			other = opt;
		}
	}
	if (version) {
		if (other) {
			cli_error("--version takes no other argument (got '%s')", other);
			return CLI_EXIT_USAGE;
		}
		printf("hwtune %s\n", hwt_version());
		return 0;
	}
	s = probe_env_override();
	if (s < 0)
		return CLI_EXIT_USAGE;
	o->override_speed = s;
	if (cmdq_defaults(&a->cmdq))
		return CLI_EXIT_USAGE;
	a->run = main_run;
	return CLI_RUN;
}

/* HWTUNE_DISABLE_MSIPOLLING is read after the probe ran (cmdq_defaults). */
int main_run(struct cli_args *a)
{
	struct hwt_misaligned_report r;
	struct cmdq_opts co;
	char reco[200];
	int s;

	printf("== misaligned accesses\n");
	s = hwt_misaligned_probe(NULL, &a->probe, &r);
	if (s < 0) {
		cli_error("probe: %s", strerror(-s));
		return 1;
	}
	probe_print_human(stdout, &r);
	printf("recommendation: %s\n", probe_recommendation(r.summary));

	printf("\n== CMD_SYNC completion\n");
	fflush(stdout);
	s = cmdq_defaults(&co);
	if (!s)
		s = cmdq_run(&co, false, reco, sizeof(reco));
	if (s)
		snprintf(reco, sizeof(reco), "not measured (hwtune cmdq failed)");

	printf("\n== recommendations\n");
	printf("  misaligned accesses: %s\n", probe_recommendation(r.summary));
	printf("  CMD_SYNC completion: %s\n", reco);
	hwt_misaligned_report_free(&r);
	return fflush(stdout) || s ? 1 : 0;
}
