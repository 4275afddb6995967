/* SPDX-License-Identifier: MIT */
/*
 * hwtune cmdq: the seed's micro-benchmark, MSI polling against CONS polling
 * beside the cache-line floor.  This file parses the options; the
 * measurement is engine.c, the output report.c.
 */
#include "cmdq/command.h"
#include "cmdq/engine.h"
#include "report/report.h"

#include <hwtune/hwtune.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The documented ranges (usage() prints these very numbers). */
#define CMDQ_THREADS_MAX 256u
#define CMDQ_SYNCS_MAX 5000000u
#define CMDQ_SEGMENT_MAX 1000000u
#define CMDQ_TIMEOUT_MS_MAX 600000u

static void cmdq_env_error(void)
{
	const char *v = getenv("HWTUNE_DISABLE_MSIPOLLING");

	cli_error("HWTUNE_DISABLE_MSIPOLLING: invalid value '%s' (expected 0 or 1; empty is "
		  "invalid too)", cli_value(v ? v : ""));
}

int cmdq_defaults(struct cmdq_opts *o)
{
	if (cmdq_opts_default(o) < 0) {
		cmdq_env_error();
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
		"                          (contradicts --poll msi|both: exit 2)\n"
		"  --threads N             producer threads (1..%u, default 1)\n"
		"  --batch N               commands (TLBI_NH_VA) before each CMD_SYNC (0..2^L-1\n"
		"                          for --entries-log2 L, so at most %u; default 0:\n"
		"                          empty-queue syncs)\n"
		"  --syncs N               timed CMD_SYNCs per mode, all threads together, rounded\n"
		"                          up to whole rounds (1..%u, default 20000)\n"
		"  --segment N             timed syncs per mode per round (1..%u; default\n"
		"                          syncs/10, at most %u)\n"
		"  --entries-log2 N        queue size 2^N (%u..%u, default 8)\n"
		"  --queues N|per-cpu      command queues of each measured device (0..%u; 0 and\n"
		"                          1: one queue, the default; per-cpu: one per possible\n"
		"                          CPU); more than the device has exits 2\n"
		"  --auto                  also let a queue with auto_poll measure and choose;\n"
		"                          report its choice and reason (one queue only:\n"
		"                          --queues over 1 or per-cpu with --auto exits 2)\n"
		"  --device-cpu N          CPU of the devices' consumer threads (0..%u, an\n"
		"                          allowed one; default: the last allowed CPU)\n"
		"  --producer-cpu N        CPU of producer thread 0 and of the floor (0..%u, an\n"
		"                          allowed one; default: the first allowed CPU other\n"
		"                          than the device CPU)\n"
		"  --msi-cost-ns N         device: extra busy-wait before each MSI write\n"
		"  --sev-cost-ns N         device: extra busy-wait before each SEV completion\n"
		"  --cmd-cost-ns N         device: extra busy-wait per non-sync command\n"
		"                          (each 0..%u, default 0: off; always shown when on)\n"
		"  --handler smmu|noop     device executor: the SMMU cache model (default) or a\n"
		"                          no-op handler\n"
		"  --timeout-ms N          deadline of every wait (1..%u, default 1000)\n"
		"  --json                  one JSON object on stdout\n"
		"  -h, --help              this text\n\n"
		"Numbers are decimal (leading zeros too: 010 is ten).  Options take --opt=value\n"
		"or --opt value and may be abbreviated while unambiguous; '--' ends them.\n\n"
		"Environment: HWTUNE_DISABLE_MSIPOLLING=0|1 as --disable-msipolling (any other\n"
		"value, empty included, exits 2); --poll or --disable-msipolling beats it.\n\n"
		"Times are single operations timed with CLOCK_MONOTONIC (p50/p99 include one\n"
		"clock read).  A round whose floor is over %dx the best round's is \"far\": the\n"
		"host moved the vCPUs apart.  Exit status: 0 ok, 1 run failed, 2 bad usage.\n",
		CMDQ_THREADS_MAX, (1u << HWT_SMMU_DEV_CMDQS_MAX) - 1, CMDQ_SYNCS_MAX,
		CMDQ_SEGMENT_MAX, (unsigned)CMDQ_SEG_DEFAULT_MAX, (unsigned)HWT_CMDQ_MIN_SHIFT,
		HWT_SMMU_DEV_CMDQS_MAX, CMDQ_QUEUES_MAX, (unsigned)HWT_CPU_ID_MAX, (unsigned)HWT_CPU_ID_MAX,
		HWT_SMMU_DEV_NS_MAX, CMDQ_TIMEOUT_MS_MAX,
		CMDQ_FAR_FACTOR);
}

/* --queues N|per-cpu: true and *out set, or false after the message. */
static bool parse_queues(const char *val, unsigned *out)
{
	const char *why;
	uint64_t v;

	if (!strcmp(val, "per-cpu")) {
		*out = HWT_CMDQ_QUEUES_PER_CPU;
		return true;
	}
	why = cli_dec(val, 0, CMDQ_QUEUES_MAX, &v);
	if (why) {
		cli_cmd_error("cmdq", "--queues: invalid value '%s' (%s; expected a decimal number in "
			      "0..%u, or per-cpu)", cli_value(val), why, CMDQ_QUEUES_MAX);
		return false;
	}
	*out = (unsigned)v;
	return true;
}

/* 0 to run, 1 after --help, -1 on bad usage (reported). */
static int parse(int argc, char **argv, struct cmdq_opts *o, bool *json)
{
	enum { O_JSON = 256, O_AUTO, O_DISABLE, O_POLL, O_HANDLER, O_THREADS, O_BATCH, O_SYNCS,
	       O_SEGMENT, O_LOG2, O_DEVCPU, O_PRODCPU, O_MSICOST, O_SEVCOST, O_CMDCOST,
	       O_TIMEOUT, O_QUEUES };
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, O_JSON },
		{ "auto", no_argument, NULL, O_AUTO },
		{ "disable-msipolling", no_argument, NULL, O_DISABLE },
		{ "poll", required_argument, NULL, O_POLL },
		{ "handler", required_argument, NULL, O_HANDLER },
		{ "threads", required_argument, NULL, O_THREADS },
		{ "batch", required_argument, NULL, O_BATCH },
		{ "syncs", required_argument, NULL, O_SYNCS },
		{ "segment", required_argument, NULL, O_SEGMENT },
		{ "entries-log2", required_argument, NULL, O_LOG2 },
		{ "device-cpu", required_argument, NULL, O_DEVCPU },
		{ "producer-cpu", required_argument, NULL, O_PRODCPU },
		{ "msi-cost-ns", required_argument, NULL, O_MSICOST },
		{ "sev-cost-ns", required_argument, NULL, O_SEVCOST },
		{ "cmd-cost-ns", required_argument, NULL, O_CMDCOST },
		{ "timeout-ms", required_argument, NULL, O_TIMEOUT },
		{ "queues", required_argument, NULL, O_QUEUES },
		{ NULL, 0, NULL, 0 },
	};
	bool flag_disable = false, poll_given = false;
	struct cli_getopt g;
	int c, env_err;
	uint64_t v;

	/* The defaults first; a bad HWTUNE_DISABLE_MSIPOLLING only counts
	 * when no flag decides (a flag beats the environment). */
	env_err = cmdq_opts_default(o);
	cli_getopt_begin(&g, "cmdq", argc, argv, "h", longopts);
	while ((c = cli_getopt_next(&g)) != -1) {
		const char *val = g.arg;

#define U64(lo, hi) \
	do { \
		if (!cli_parse_dec("cmdq", g.name, val, lo, hi, &v)) \
			return -1; \
	} while (0)
		switch (c) {
		case 'h':
			usage(stdout);
			return 1;
		case O_JSON:
			*json = true;
			break;
		case O_AUTO:
			o->auto_poll = true;
			break;
		case O_DISABLE:
			flag_disable = true;
			break;
		case O_POLL:
			/* an explicit --poll beats the environment */
			poll_given = true;
			o->mode[CMDQ_MSI] = !strcmp(val, "msi") || !strcmp(val, "both");
			o->mode[CMDQ_SEV] = !strcmp(val, "sev") || !strcmp(val, "both");
			if (!o->mode[CMDQ_MSI] && !o->mode[CMDQ_SEV]) {
				cli_cmd_error("cmdq", "--poll: invalid value '%s' (expected msi, sev or "
					      "both)", cli_value(val));
				return -1;
			}
			break;
		case O_HANDLER:
			if (strcmp(val, "smmu") && strcmp(val, "noop")) {
				cli_cmd_error("cmdq", "--handler: invalid value '%s' (expected smmu or "
					      "noop)", cli_value(val));
				return -1;
			}
			o->noop = !strcmp(val, "noop");
			break;
		case O_THREADS:
			U64(1, CMDQ_THREADS_MAX);
			o->threads = (unsigned)v;
			break;
		case O_BATCH:
			U64(0, (1u << HWT_SMMU_DEV_CMDQS_MAX) - 1);
			o->batch = (unsigned)v;
			break;
		case O_SYNCS:
			U64(1, CMDQ_SYNCS_MAX);
			o->syncs = v;
			break;
		case O_SEGMENT:
			U64(1, CMDQ_SEGMENT_MAX);
			o->seg = (unsigned)v;
			break;
		case O_LOG2:
			U64(HWT_CMDQ_MIN_SHIFT, HWT_SMMU_DEV_CMDQS_MAX);
			o->entries_log2 = (unsigned)v;
			break;
		case O_DEVCPU:
			U64(0, HWT_CPU_ID_MAX);
			o->device_cpu = (int)v;
			break;
		case O_PRODCPU:
			U64(0, HWT_CPU_ID_MAX);
			o->producer_cpu = (int)v;
			break;
		case O_MSICOST:
			U64(0, HWT_SMMU_DEV_NS_MAX);
			o->cost[0] = (unsigned)v;
			break;
		case O_SEVCOST:
			U64(0, HWT_SMMU_DEV_NS_MAX);
			o->cost[1] = (unsigned)v;
			break;
		case O_CMDCOST:
			U64(0, HWT_SMMU_DEV_NS_MAX);
			o->cost[2] = (unsigned)v;
			break;
		case O_TIMEOUT:
			U64(1, CMDQ_TIMEOUT_MS_MAX);
			o->timeout_ms = v;
			break;
		case O_QUEUES:
			if (!parse_queues(val, &o->queues))
				return -1;
			break;
		case 1:
			cli_cmd_error("cmdq", "unexpected argument '%s' (cmdq takes options only; "
				      "try 'hwtune cmdq --help')", cli_value(val));
			return -1;
		default:
			return -1;
		}
#undef U64
	}
	if (env_err && !poll_given && !flag_disable) {
		cmdq_env_error();
		return -1;
	}
	/* --poll msi|both beats HWTUNE_DISABLE_MSIPOLLING=1: it is then not in
	 * effect (neither reported nor passed to the --auto queue). */
	if (poll_given && o->mode[CMDQ_MSI] && o->disable_src == CMDQ_SRC_ENV)
		o->disable_msi = false, o->disable_src = CMDQ_SRC_DEFAULT;
	if (flag_disable) {
		if (poll_given && o->mode[CMDQ_MSI]) {
			cli_cmd_error("cmdq", "--disable-msipolling contradicts --poll %s (MSI polling "
				      "is disabled)", o->mode[CMDQ_SEV] ? "both" : "msi");
			return -1;
		}
		/* without --poll: measure what it selects */
		o->disable_msi = true, o->disable_src = CMDQ_SRC_FLAG;
		o->mode[CMDQ_MSI] = false;
	}
	if (o->auto_poll && o->queues > 1) {
		/* the library refuses auto_poll with several queues: say so first */
		char w[16];

		cli_cmd_error("cmdq", "--queues %s contradicts --auto (auto_poll measures one queue: "
			      "drop --auto, or use --queues 1)", cmdq_queues_word(o->queues, w, sizeof(w)));
		return -1;
	}
	if (o->batch + 1 > 1u << o->entries_log2) {
		cli_cmd_error("cmdq", "--batch: invalid value '%u' (a batch and its CMD_SYNC must fit "
			      "the queue of %u entries: expected 0..%u with --entries-log2 %u)",
			      o->batch, 1u << o->entries_log2, (1u << o->entries_log2) - 1,
			      o->entries_log2);
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
		cli_cmd_error("cmdq", "%s", r.error);
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
