/* SPDX-License-Identifier: MIT */
/*
 * hwtune cmdq: the seed's micro-benchmark, MSI polling against CONS polling
 * beside the cache-line floor.  This file parses the options; the
 * measurement is cmdq_engine.c, the output cmdq_report.c.
 */
#include "cli.h"
#include "cmdq_engine.h"
#include "report.h"

#include <hwtune/hwtune.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int cmdq_defaults(struct cmdq_opts *o)
{
	if (cmdq_opts_default(o) < 0) {
		cli_error("HWTUNE_DISABLE_MSIPOLLING: invalid value '%s' (expected 0 or 1)",
			  getenv("HWTUNE_DISABLE_MSIPOLLING"));
		return CLI_EXIT_USAGE;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hwtune cmdq [OPTIONS]\n\n"
		"CMD_SYNC completion latency of the command queue by MSI polling and by CONS\n"
		"polling (SEV), both modes interleaved in short rounds, beside the producer <->\n"
		"device-CPU cache-line round trip (floor) measured in the same run.  With\n"
		"--threads/--batch: N producers each issue batches of B commands + CMD_SYNC.\n\n"
		"  --poll msi|sev|both     completion modes to measure (default both)\n"
		"  --disable-msipolling    as arm_smmu_v3.disable_msipolling=1: CONS polling only\n"
		"                          (contradicts --poll msi|both: exit 2); also set by\n"
		"                          HWTUNE_DISABLE_MSIPOLLING=1, which --poll overrides\n"
		"  --threads N             producer threads (1..256, default 1)\n"
		"  --batch N               commands (TLBI_NH_VA) before each CMD_SYNC (0..queue-1,\n"
		"                          default 0: empty-queue syncs)\n"
		"  --syncs N               timed CMD_SYNCs per mode, all threads together, rounded\n"
		"                          up to whole rounds (1..5000000, default 20000)\n"
		"  --segment N             timed syncs per mode per round (default syncs/10, max 500)\n"
		"  --entries-log2 N        queue size 2^N (7..19, default 8)\n"
		"  --auto                  also let a queue with auto_poll measure and choose;\n"
		"                          report its choice and reason\n"
		"  --device-cpu N          CPU of the devices' consumer threads (default: the last\n"
		"                          allowed CPU)\n"
		"  --producer-cpu N        CPU of producer thread 0 and of the floor (default: the\n"
		"                          first allowed CPU other than the device CPU)\n"
		"  --msi-cost-ns N         device: extra busy-wait before each MSI write (0..1e9)\n"
		"  --sev-cost-ns N         device: extra busy-wait before each SEV completion\n"
		"  --cmd-cost-ns N         device: extra busy-wait per non-sync command\n"
		"                          (costs are off by default and always shown when on)\n"
		"  --handler smmu|noop     device executor: the SMMU cache model (default) or a\n"
		"                          no-op handler\n"
		"  --timeout-ms N          deadline of every wait (1..600000, default 1000)\n"
		"  --json                  one JSON object on stdout\n"
		"  --help                  this text\n\n"
		"Times are single operations timed with CLOCK_MONOTONIC (p50/p99 include one\n"
		"clock read).  A round whose floor is over %dx the best round's is \"far\": the\n"
		"host moved the vCPUs apart.  Exit status: 0 ok, 1 run failed, 2 bad usage.\n",
		CMDQ_FAR_FACTOR);
}

/* 0 to run, 1 after --help, -1 on bad usage (reported). */
static int parse(int argc, char **argv, struct cmdq_opts *o, bool *json)
{
	bool flag_disable = false, poll_given = false;
	uint64_t v;

	if (cmdq_defaults(o))
		return -1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;
		bool err = false;

#define OPT(name) (cli_opt_value(argc, argv, &i, name, &val, &err))
#define U64(name, lo, hi) \
	(err || !cli_parse_u64(name, val, lo, hi, &v) ? (void)(err = true) : (void)0)
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 1;
		} else if (!strcmp(a, "--json")) {
			*json = true;
		} else if (!strcmp(a, "--auto")) {
			o->auto_poll = true;
		} else if (!strcmp(a, "--disable-msipolling")) {
			flag_disable = true;
		} else if (OPT("--poll")) {
			if (err)
				return -1;
			/* an explicit --poll beats the environment */
			poll_given = true;
			o->mode[CMDQ_MSI] = !strcmp(val, "msi") || !strcmp(val, "both");
			o->mode[CMDQ_SEV] = !strcmp(val, "sev") || !strcmp(val, "both");
			if (!o->mode[CMDQ_MSI] && !o->mode[CMDQ_SEV]) {
				cli_error("--poll: invalid value '%s' (expected msi, sev or both)", val);
				return -1;
			}
		} else if (OPT("--handler")) {
			if (err)
				return -1;
			if (strcmp(val, "smmu") && strcmp(val, "noop")) {
				cli_error("--handler: invalid value '%s' (expected smmu or noop)", val);
				return -1;
			}
			o->noop = !strcmp(val, "noop");
		} else if (OPT("--threads")) {
			U64("--threads", 1, 256);
			o->threads = (unsigned)v;
		} else if (OPT("--batch")) {
			U64("--batch", 0, (1u << HWT_SMMU_DEV_CMDQS_MAX) - 1);
			o->batch = (unsigned)v;
		} else if (OPT("--syncs")) {
			U64("--syncs", 1, 5000000);
			o->syncs = v;
		} else if (OPT("--segment")) {
			U64("--segment", 1, 1000000);
			o->seg = (unsigned)v;
		} else if (OPT("--entries-log2")) {
			U64("--entries-log2", HWT_CMDQ_MIN_SHIFT, HWT_SMMU_DEV_CMDQS_MAX);
			o->entries_log2 = (unsigned)v;
		} else if (OPT("--device-cpu")) {
			U64("--device-cpu", 0, HWT_CPU_ID_MAX);
			o->device_cpu = (int)v;
		} else if (OPT("--producer-cpu")) {
			U64("--producer-cpu", 0, HWT_CPU_ID_MAX);
			o->producer_cpu = (int)v;
		} else if (OPT("--msi-cost-ns")) {
			U64("--msi-cost-ns", 0, HWT_SMMU_DEV_NS_MAX);
			o->cost[0] = (unsigned)v;
		} else if (OPT("--sev-cost-ns")) {
			U64("--sev-cost-ns", 0, HWT_SMMU_DEV_NS_MAX);
			o->cost[1] = (unsigned)v;
		} else if (OPT("--cmd-cost-ns")) {
			U64("--cmd-cost-ns", 0, HWT_SMMU_DEV_NS_MAX);
			o->cost[2] = (unsigned)v;
		} else if (OPT("--timeout-ms")) {
			U64("--timeout-ms", 1, 600000);
			o->timeout_ms = v;
		} else {
			cli_error("cmdq: unknown option '%s' (try 'hwtune cmdq --help')", a);
			return -1;
		}
		if (err)
			return -1;
#undef OPT
#undef U64
	}

	/* --poll msi|both beats HWTUNE_DISABLE_MSIPOLLING=1: it is then not in
	 * effect (neither reported nor passed to the --auto queue). */
	if (poll_given && o->mode[CMDQ_MSI] && o->disable_src == CMDQ_SRC_ENV)
		o->disable_msi = false, o->disable_src = CMDQ_SRC_DEFAULT;
	if (flag_disable) {
		if (poll_given && o->mode[CMDQ_MSI]) {
			cli_error("--disable-msipolling contradicts --poll %s (MSI polling is disabled)",
				  o->mode[CMDQ_SEV] ? "both" : "msi");
			return -1;
		}
		/* without --poll: measure what it selects */
		o->disable_msi = true, o->disable_src = CMDQ_SRC_FLAG;
		o->mode[CMDQ_MSI] = false;
	}
	if (o->batch + 1 > 1u << o->entries_log2) {
		cli_error("--batch: invalid value '%u' (a batch and its CMD_SYNC must fit the queue of "
			  "%u entries)", o->batch, 1u << o->entries_log2);
		return -1;
	}
	return 0;
}

int cmdq_run(const struct cmdq_opts *opts, bool json, char *reco, size_t len)
{
	struct cmdq_opts o = *opts;
	struct report_progress p;
	struct cmdq_report r;
	int err;

	report_progress_start(&p, "cmdq");
	o.progress = report_progress_cmdq, o.progress_arg = &p;
	err = cmdq_measure(&o, &r);
	report_progress_end(&p);

	if (err) {
		cli_error("%s", r.error);
	} else {
		if (reco)
			cmdq_recommend(&r, reco, len);
		if (json)
			cmdq_print_json(stdout, &r);
		else
			cmdq_print_human(stdout, &r);
	}
	cmdq_report_free(&r);
	return err == -EINVAL ? CLI_EXIT_USAGE : err ? 1 : 0;
}

int cmdq_parse(int argc, char **argv, struct cli_args *a)
{
	int err = parse(argc, argv, &a->cmdq, &a->json);

	if (err)
		return err > 0 ? 0 : CLI_EXIT_USAGE;
	a->run = cmdq_cmd_run;
	return CLI_RUN;
}

int cmdq_cmd_run(struct cli_args *a)
{
	return cmdq_run(&a->cmdq, a->json, NULL, 0);
}
