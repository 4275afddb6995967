/* SPDX-License-Identifier: MIT */
/* hwtune with no command: measure this machine and recommend settings. */
#include "cli.h"
#include "cmd_probe.h"
#include "cmdq_engine.h"
#include "report.h"

#include <string.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: hwtune [--no-cache] [--json | --format=prom] [--per-cpu]\n\n"
		   "Measure this machine and recommend settings:\n"
		   "  misaligned accesses   'hwtune probe' on every allowed CPU (cached per boot;\n"
		   "                        HWTUNE_UNALIGNED_SCALAR_SPEED overrides it)\n"
		   "  CMD_SYNC completion   'hwtune cmdq': MSI polling against CONS polling on an\n"
		   "                        empty queue, interleaved with the cache-line floor\n"
		   "                        (HWTUNE_DISABLE_MSIPOLLING=1 measures CONS polling only)\n\n"
		   "and show the kernel's own settings beside them (arm_smmu_v3's\n"
		   "disable_msipolling, an SMMUv3, boot parameters, riscv_hwprobe, its log).\n\n"
		   "  --no-cache   measure again, do not touch the cache\n"
		   "  --json       one JSON object on stdout (docs/json.md)\n"
		   "  --format=prom  Prometheus text format, for node_exporter's textfile collector\n"
		   "  --per-cpu    one line per CPU (default: CPUs that agree share a line)\n"
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
struct main_state {
	struct report_machine m;
	struct report_kernel k;
	struct hwt_misaligned_report r;
	struct cmdq_report c;
	bool have_c;       /* c measured */
	int cmdq_status;   /* exit status of the cmdq part: 0 ok */
	char reco[256];    /* the CMD_SYNC recommendation in words */
	bool disable;      /* ... and whether to set disable_msipolling */
};

static void measure_cmdq(struct main_state *st)
{
	struct report_progress p;
	struct cmdq_opts co;
	int err;

	st->cmdq_status = cmdq_defaults(&co);
	if (st->cmdq_status) {
		snprintf(st->reco, sizeof(st->reco), "not measured (bad HWTUNE_DISABLE_MSIPOLLING)");
		return;
	}
	report_progress_start(&p, "cmdq");
	co.progress = report_progress_cmdq;
	co.progress_arg = &p;
	err = cmdq_measure(&co, &st->c);
	report_progress_end(&p);
	if (err) {
		cli_error("%s", st->c.error);
		cmdq_report_free(&st->c);
		st->cmdq_status = 1;
		snprintf(st->reco, sizeof(st->reco), "not measured (hwtune cmdq failed)");
		return;
	}
	st->have_c = true;
	st->disable = cmdq_recommend(&st->c, st->reco, sizeof(st->reco));
}

static void print_human(const struct main_state *st, bool per_cpu)
{
	char w[160];

	printf("== machine\n");
	report_machine_human(stdout, &st->m);
	printf("\n== misaligned accesses\n");
	probe_print_human(stdout, &st->r, per_cpu);
	printf("recommendation: %s\n", probe_recommendation(st->r.summary));
	printf("\n== CMD_SYNC completion\n");
	if (st->have_c)
		cmdq_print_human(stdout, &st->c);
	else
		printf("  %s\n", st->reco);
	printf("\n== the kernel's settings\n");
	report_kernel_human(stdout, &st->k);
	printf("\n== recommendations\n");
	printf("  misaligned accesses: %s\n", probe_recommendation(st->r.summary));
	printf("  CMD_SYNC completion: %s\n", st->reco);
	if (st->have_c && cmdq_rounds_warning(&st->c, w, sizeof(w)))
		printf("  warning: %s\n", w);
}

/* {"version", "machine", "probe", "cmdq", "kernel", "recommendations"}:
 * "probe" and "cmdq" are the objects 'hwtune probe --json' and 'hwtune
 * cmdq --json' print (cmdq null when it was not measured). */
static void print_json(const struct main_state *st)
{
	struct json j;
	char w[160];

	printf("{\"version\": \"%s\",\n \"machine\": ", hwt_version());
	json_begin(&j, stdout);
	report_machine_json(&j, &st->m);
	printf(",\n \"probe\": ");
	probe_json(stdout, &st->r);
	printf(",\n \"cmdq\": ");
	json_begin(&j, stdout);
	if (st->have_c)
		cmdq_json(&j, &st->c);
	else
		json_null(&j);
	printf(",\n \"kernel\": ");
	json_begin(&j, stdout);
	report_kernel_json(&j, &st->k);
	printf(",\n \"recommendations\": ");
	json_begin(&j, stdout);
	json_obj(&j);
	json_nl(&j, "    ");
	json_key(&j, "misaligned");
	json_obj(&j);
	json_key(&j, "summary"), json_str(&j, hwt_misaligned_speed_name(st->r.summary));
	json_key(&j, "text"), json_str(&j, probe_recommendation(st->r.summary));
	json_close(&j);
	json_nl(&j, "    ");
	json_key(&j, "cmdq");
	json_obj(&j);
	json_key(&j, "measured"), json_bool(&j, st->have_c);
	json_key(&j, "disable_msipolling");
	if (st->have_c)
		json_bool(&j, st->disable);
	else
		json_null(&j);
	json_key(&j, "text"), json_str(&j, st->reco);
	json_key(&j, "rounds");
	if (st->have_c)
		json_u64(&j, st->c.rounds);
	else
		json_null(&j);
	json_key(&j, "warning");
	if (st->have_c && cmdq_rounds_warning(&st->c, w, sizeof(w)))
		json_str(&j, w);
	else
		json_null(&j);
	json_close(&j);
	json_nl(&j, "  ");
	json_close(&j);
	printf("}\n");
}

int main_run(struct cli_args *a)
{
	struct main_state st;
	int s;

	memset(&st, 0, sizeof(st));
	report_machine_read(&st.m);
	report_kernel_read(&st.k);
	s = hwt_misaligned_probe(NULL, &a->probe, &st.r);
	if (s < 0) {
		cli_error("probe: %s", strerror(-s));
		return 1;
	}
	measure_cmdq(&st);
	if (a->json)
		print_json(&st);
	else if (a->prom)
		report_prom(stdout, &(struct report_prom){ .m = &st.m, .probe = &st.r,
							    .cmdq = st.have_c ? &st.c : NULL,
							    .k = &st.k });
	else
		print_human(&st, a->per_cpu);
	hwt_misaligned_report_free(&st.r);
	if (st.have_c)
		cmdq_report_free(&st.c);
	return fflush(stdout) || st.cmdq_status ? 1 : 0;
}
