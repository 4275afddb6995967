/* SPDX-License-Identifier: MIT */
/* hwtune with no command: measure this machine and recommend settings. */
#include "cli.h"
#include "cmd_probe.h"
#include "cmdq_engine.h"

#include <string.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: hwtune [--no-cache]\n\n"
		   "Measure this machine and recommend settings:\n"
		   "  misaligned accesses   'hwtune probe' on every allowed CPU (cached per boot;\n"
		   "                        HWTUNE_UNALIGNED_SCALAR_SPEED overrides it)\n"
		   "  CMD_SYNC completion   'hwtune cmdq': MSI polling against CONS polling on an\n"
		   "                        empty queue, interleaved with the cache-line floor\n"
		   "                        (HWTUNE_DISABLE_MSIPOLLING=1 measures CONS polling only)\n\n"
		   "  --no-cache   measure again, do not touch the cache\n"
		   "  -h, --help   this text\n\n"
		   "See 'hwtune --help' for the commands.\n");
}

int main_parse(int argc, char **argv, struct cli_args *a)
{
	struct hwt_misaligned_opts *o = &a->probe;
	int s;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--no-cache")) {
			o->flags |= HWT_MISALIGNED_NO_CACHE;
			continue;
		}
		if (!strcmp(argv[i], "--json")) {
			a->json = true;
			continue;
		}
		if (!strcmp(argv[i], "--per-cpu")) {
			a->per_cpu = true;
			continue;
		}
		if (!strcmp(argv[i], "--format=prom")) {
			a->prom = true;
			continue;
		}
		cli_error("unknown argument '%s' (try 'hwtune --help')", argv[i]);
		return CLI_EXIT_USAGE;
	}
	s = probe_env_override();
	if (s < 0)
		return CLI_EXIT_USAGE;
	o->override_speed = s;
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
