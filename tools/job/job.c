/* SPDX-License-Identifier: MIT */
/* hwtune with no command: measure this machine and recommend settings. */
#include "job/job.h"

#include "cmdq/command.h"
#include "cmdq/engine.h"
#include "commands.h"
#include "probe/engine.h"
#include "probe/report.h"
#include "report/report.h"

#include <string.h>

/* An operand of the main job: a command spelt elsewhere than first, or no
 * command at all. */
static void main_unknown(const char *word)
{
	if (cli_command(word))
		cli_error("'%s' must come first: 'hwtune %s [OPTIONS]' (options before it are "
			  "the main job's)", word, word);
	else
		cli_error("unknown command '%s' (commands: probe, cmdq, decode; try 'hwtune --help')",
			  cli_value(word));
}

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
	struct cli_getopt g;
	char opt[sizeof(g.name)];
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
			if (!cli_json_flag(NULL, a))
				return CLI_EXIT_USAGE;
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
				main_unknown(g.arg);
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
			cli_error("--version takes no other argument (got '%s')",
				  cli_value(other));
			return CLI_EXIT_USAGE;
		}
		printf("hwtune %s\n", hwt_version());
		return 0;
	}
	s = probe_env_override();
	if (s < 0)
		return CLI_EXIT_USAGE;
	o->override_speed = s;
	s = probe_env_vector_override();
	if (s < 0)
		return CLI_EXIT_USAGE;
	o->vector_override_speed = s;
	if (!probe_env_runtime_dir())
		return CLI_EXIT_USAGE;
	if (cmdq_defaults(&a->cmdq))
		return CLI_EXIT_USAGE;
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
		cli_error("cmdq: %s", st->c.error);
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
	char w[400], reco[512];

	printf("== machine\n");
	report_machine_human(stdout, &st->m);
	printf("\n== misaligned accesses\n");
	probe_print_human(stdout, &st->r, per_cpu);
	printf("recommendation: %s\n", probe_recommendation(&st->r, reco, sizeof(reco)));
	printf("\n== CMD_SYNC completion\n");
	if (st->have_c)
		cmdq_print_human(stdout, &st->c);
	else
		printf("  %s\n", st->reco);
	printf("\n== the kernel's settings\n");
	report_kernel_human(stdout, &st->k);
	printf("\n== recommendations\n");
	printf("  misaligned accesses: %s\n", probe_recommendation(&st->r, reco, sizeof(reco)));
	printf("  CMD_SYNC completion, in hwtune's software model: %s\n", st->reco);
	report_smmu_switch(&st->k, w, sizeof(w));
	printf("  CMD_SYNC completion, on this machine's SMMU: %s\n", w);
	if (st->have_c && cmdq_rounds_warning(&st->c, w, sizeof(w)))
		printf("  warning: %s\n", w);
}

/* {"version", "machine", "probe", "cmdq", "kernel", "recommendations"}:
 * "probe" and "cmdq" are the objects 'hwtune probe --json' and 'hwtune
 * cmdq --json' print (cmdq null when it was not measured). */
static void print_json(const struct main_state *st)
{
	struct json j;
	char w[400], reco[512];
	int sw;

	json_begin(&j, stdout);
	json_obj(&j);
	json_key(&j, "version"), json_str(&j, hwt_version());
	json_nl(&j, " ");
	json_key(&j, "machine");
	report_machine_json(&j, &st->m);
	json_nl(&j, " ");
	json_key(&j, "probe");
	probe_json(&j, &st->r);
	json_nl(&j, " ");
	json_key(&j, "cmdq");
	if (st->have_c)
		cmdq_json(&j, &st->c);
	else
		json_null(&j);
	json_nl(&j, " ");
	json_key(&j, "kernel");
	report_kernel_json(&j, &st->k);
	json_nl(&j, " ");
	json_key(&j, "recommendations");
	json_obj(&j);
	json_nl(&j, "    ");
	json_key(&j, "misaligned");
	json_obj(&j);
	json_key(&j, "summary"), json_str(&j, hwt_misaligned_speed_name(st->r.summary));
	json_key(&j, "text"), json_str(&j, probe_recommendation(&st->r, reco, sizeof(reco)));
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
	json_nl(&j, "    ");
	json_key(&j, "kernel_smmu");
	json_obj(&j);
	json_key(&j, "applies");
	sw = report_smmu_switch(&st->k, w, sizeof(w));
	if (sw < 0)
		json_null(&j);
	else
		json_bool(&j, sw);
	json_key(&j, "text"), json_str(&j, w);
	json_close(&j);
	json_nl(&j, "  ");
	json_close(&j);
	json_close(&j);
	json_end(&j);
}

int main_run(struct cli_args *a)
{
	struct main_state st;
	int s;

	memset(&st, 0, sizeof(st));
	report_machine_read(&st.m);
	report_kernel_read(&st.k);
	s = probe_self(&a->probe, NULL, &st.r);
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
	return st.cmdq_status ? 1 : 0; /* stdout is checked in main() */
}
