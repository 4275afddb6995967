/* SPDX-License-Identifier: MIT */
/*
 * hwt_cmdq against peer queues, producer to consumer on different CPUs, as
 * JSON on stdout (a table on stderr).  Every element is one 16-byte command
 * (TLBI_NH_VA, VMID = producer id, ADDR = page sequence number); every
 * consumer calls a no-op handler through a pointer per element.  The
 * queues, hwt_cmdq among them, are behind one interface (peers/peers.h).
 *
 *   flow  completion not awaited.  hwt_cmdq: hwt_cmdq_issue(cmds, B, false);
 *         the software SMMU consumes with dc.handler; one CMD_SYNC ends each
 *         segment (drain, timed).  Rings: enqueue burst of B (retry the
 *         rest); a consumer thread dequeues up to 32 per call, then
 *         publishes each producer's last sequence number (release).  The
 *         drain waits for it (timed).
 *   sync  completion awaited per burst.  hwt_cmdq: hwt_cmdq_issue(cmds, B,
 *         true), MSI polling and CONS polling (one queue each).  Rings: the
 *         producer enqueues B, then waits until the consumer published the
 *         burst's last sequence number.
 *
 * A round measures the ping-pong floor (regime), then for each producer
 * count one segment per implementation of the group, the order rotated each
 * round (A B C, B C A, ...): this KVM guest's cross-core round trip changes
 * regime for stretches, so ratios hwt/peer (and to the fair share, see
 * cmdq/output.c) are taken within a round, then the median.  A segment
 * (cmdq/segment.c): consumer and producer threads started and pinned,
 * warm-up, drain, timed run of --segment-ms, drain.  Every wait is bounded
 * (spin, then sched_yield; --timeout-ms).  Never run by make check.
 *
 * Contention: --producers 1,2,4,8,16 runs every count in each round.  The
 * consumer gets the last allowed CPU, producer i the i-th of the others
 * (round robin): on 2 CPUs every producer shares one CPU (time-sharing),
 * on a larger machine they spread over real CPUs; the same command runs
 * unchanged on any CPU count, and each case says on how many CPUs its
 * producers ran.
 *
 *   bench_cmdq [--segment-ms N] [--rounds N] [--bursts 1,8,32]
 *              [--producers N[,N...]] [--group flow|sync|both] [--entries-log2 N]
 *              [--cons-batch N] [--producer-cpu N] [--consumer-cpu N] [--timeout-ms N]
 */
#include <hwtune/hwtune.h>

#include "bench/cmdq/bench.h"
#include "prog/cli.h"
#include "prog/floor.h"
#include "prog/queue.h"
#include "prog/stats.h"
#include "prog/sys.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const group_name[2] = { "flow", "sync" };

/* Every queue compiled in, the ones under test first. */
static const struct bench_queue_ops *const queues[] = {
	&bench_hwt_ops,
#ifdef HWT_CMDQ_QUEUES_PER_CPU
	&bench_hwt_percpu_ops,
#endif
#ifdef HAVE_DPDK
	&bench_dpdk_ops,
#endif
#ifdef HAVE_DPDK_RTS
	&bench_dpdk_rts_ops,
#endif
#ifdef HAVE_CK
	&bench_ck_ops,
#endif
#ifdef HAVE_URCU
	&bench_urcu_ops,
#endif
	&bench_mutex_ops,
};

/* --- setup ----------------------------------------------------------------- */

static void add_impl(struct bench *bn, enum group g, const struct bench_queue_ops *ops,
		     unsigned variant)
{
	struct impl *im = &bn->im[bn->nimpl++];
	struct bench_queue_cfg cfg = {
		.log2 = bn->o.log2,
		.cons_cpu = bn->cons_cpu,
		.cons_batch = bn->o.cons_batch,
		.timeout_ns = (uint64_t)bn->o.timeout_ms * 1000000u,
		.await = g == G_SYNC,
		.variant = variant,
		.handler = util_noop_handler,
	};
	size_t n = (size_t)bn->o.nprods * bn->o.nbursts * bn->o.rounds;
	int err;

	im->group = g;
	im->ops = ops;
	im->rate = calloc(n, sizeof(*im->rate));
	im->retry = calloc(n, sizeof(*im->retry));
	if (!im->rate || !im->retry) {
		cli_error("out of memory");
		exit(1);
	}
	err = ops->create(ops, &cfg, &im->q, &im->d);
	if (err) {
		cli_error("%s: cannot create: %s", im->d.name, strerror(-err));
		exit(1);
	}
}

static void skip(struct bench *bn, const char *peer, const char *package, const char *reason)
{
	bn->skipped[bn->nskip++] = (struct skipped){ peer, package, reason };
}

/* The peers this build left out: their libraries were not found (detect.sh),
 * or the library has no per-CPU queues yet. */
static void find_skipped(struct bench *bn)
{
#ifndef HWT_CMDQ_QUEUES_PER_CPU
	skip(bn, "hwt_cmdq_percpu", NULL, "no per-CPU queues in this build");
	skip(bn, "hwt_cmdq_percpu_sync_msi", NULL, "no per-CPU queues in this build");
#endif
#ifndef HAVE_DPDK
	skip(bn, "rte_ring", "dpdk-dev", NULL);
#endif
#ifndef HAVE_DPDK_RTS
	skip(bn, "rte_ring_rts", "dpdk-dev", NULL);
#endif
#ifndef HAVE_CK
	skip(bn, "ck_ring", "libck-dev", NULL);
#endif
#ifndef HAVE_URCU
	skip(bn, "urcu_wfcq", "liburcu-dev", NULL);
#endif
	(void)skip, (void)bn;
}

static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && c) {
			c += 1 + (c[1] == ' ');
			c[strcspn(c, "\n")] = 0;
			snprintf(buf, len, "%s", c);
			break;
		}
	}
	fclose(f);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: bench_cmdq [--segment-ms N] [--rounds N] [--bursts 1,8,32] "
		   "[--producers N[,N...]]\n"
		   "                  [--group flow|sync|both] [--entries-log2 N] "
		   "[--cons-batch N]\n"
		   "                  [--producer-cpu N] [--consumer-cpu N] [--timeout-ms N]\n");
}

/* A comma-separated list of at most max values in [lo, hi] into v. */
static unsigned parse_list(const char *opt, const char *s, unsigned *v, unsigned max, unsigned lo,
			   unsigned hi)
{
	char buf[128], *tok, *save = NULL;
	unsigned n = 0;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == max) {
			cli_error("%s: at most %u values", opt, max);
			exit(CLI_EXIT_USAGE);
		}
		v[n++] = cli_arg_u(opt, tok, lo, hi);
	}
	if (!n)
		cli_arg_u(opt, "", lo, hi);
	return n;
}

static void parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){ .segment_ms = 15, .rounds = 7, .log2 = 8, .cons_batch = 0,
			    .timeout_ms = 1000, .bursts = { 1, 8, 32 }, .nbursts = 3,
			    .prods = { 1 }, .nprods = 1, .flow = true, .sync = true,
			    .prod_cpu = -1, .cons_cpu = -1 };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *n, *v;

#define OPT(name) (v = cli_opt(argc, argv, &i, n = (name)))
		if (OPT("--segment-ms"))
			o->segment_ms = cli_arg_u(n, v, 1, 60000);
		else if (OPT("--rounds"))
			o->rounds = cli_arg_u(n, v, 1, 10000);
		else if (OPT("--producers"))
			o->nprods = parse_list(n, v, o->prods, MAX_PRODS, 1, BENCH_MAX_PROD);
		else if (OPT("--entries-log2"))
			o->log2 = cli_arg_u(n, v, HWT_CMDQ_MIN_SHIFT, 16);
		else if (OPT("--cons-batch"))
			o->cons_batch = cli_arg_u(n, v, 0, HWT_SMMU_DEV_CONS_BATCH_MAX); /* 0: once per run */
		else if (OPT("--timeout-ms"))
			o->timeout_ms = cli_arg_u(n, v, 1, 60000);
		else if (OPT("--producer-cpu"))
			o->prod_cpu = (int)cli_arg_u(n, v, 0, HWT_CPU_ID_MAX);
		else if (OPT("--consumer-cpu"))
			o->cons_cpu = (int)cli_arg_u(n, v, 0, HWT_CPU_ID_MAX);
		else if (OPT("--bursts"))
			o->nbursts = parse_list(n, v, o->bursts, MAX_BURSTS, 1, MAX_BURST);
		else if (OPT("--group")) {
			o->flow = !strcmp(v, "flow") || !strcmp(v, "both");
			o->sync = !strcmp(v, "sync") || !strcmp(v, "both");
			if (!o->flow && !o->sync) {
				cli_error("--group: invalid value '%s' (expected flow, sync or both)", v);
				exit(CLI_EXIT_USAGE);
			}
		} else {
			bool help = !strcmp(a, "--help") || !strcmp(a, "-h");

			usage(help ? stdout : stderr);
			exit(help ? 0 : CLI_EXIT_USAGE);
		}
#undef OPT
	}
	for (unsigned i = 0; i < o->nbursts; i++)
		if (o->bursts[i] + 1 > (1u << o->log2) / 2) {
			cli_error("burst %u too big for 2^%u entries", o->bursts[i], o->log2);
			exit(CLI_EXIT_USAGE);
		}
	o->max_prod = 0;
	for (unsigned i = 0; i < o->nprods; i++)
		o->max_prod = o->prods[i] > o->max_prod ? o->prods[i] : o->max_prod;
}

static void pick_cpus(struct bench *bn)
{
	int bad, err = util_cpu_pick(bn->o.cons_cpu, bn->o.prod_cpu, bn->o.max_prod, &bn->cons_cpu,
				     bn->prod_cpu, &bad);

	if (bad != UTIL_CPU_OK) {
		cli_error("--%s-cpu: invalid value '%d' (not an allowed CPU)",
			  bad == UTIL_CPU_BAD_DEV ? "consumer" : "producer",
			  bad == UTIL_CPU_BAD_DEV ? bn->o.cons_cpu : bn->o.prod_cpu);
		exit(CLI_EXIT_USAGE);
	}
	if (err) {
		cli_error("allowed CPUs: %s", strerror(-err));
		exit(1);
	}
	bn->spin_ns = UTIL_SPIN_NS;
	for (unsigned i = 0; i < bn->o.max_prod; i++)
		if (!util_spin_ns(bn->prod_cpu[i], bn->cons_cpu))
			bn->spin_ns = 0;
}

/* --- measurement ------------------------------------------------------------ */

/* Group g: per burst and round the floor, then per producer count every
 * implementation of the group, rotated.  0 or exit status 1. */
static int measure(struct bench *bn, enum group g, unsigned *nrun)
{
	struct impl *grp[MAX_IMPLS];
	unsigned n = 0, rounds = bn->o.rounds;

	for (unsigned i = 0; i < bn->nimpl; i++)
		if (bn->im[i].group == g)
			grp[n++] = &bn->im[i];
	for (unsigned bi = 0; n && bi < bn->o.nbursts; bi++)
		for (unsigned r = 0; r < rounds; r++) {
			bn->floor_ns[((size_t)g * bn->o.nbursts + bi) * rounds + r] =
				floor_measure(bn->cons_cpu, FLOOR_CHUNKS, FLOOR_ITERS, bn->spin_ns,
					      (uint64_t)bn->o.timeout_ms * 1000000u);
			for (unsigned pi = 0; pi < bn->o.nprods; pi++)
				for (unsigned k = 0; k < n; k++) {
					struct impl *im = grp[(k + r) % n];
					size_t at = bench_at(bn, pi, bi) + r;
					int err = bench_segment(bn, im, bn->o.prods[pi], bn->o.bursts[bi],
								&im->rate[at], &im->retry[at]);

					if (err) {
						cli_error("%s, %u producer(s), burst %u: %s", im->d.name,
							  bn->o.prods[pi], bn->o.bursts[bi], strerror(-err));
						return 1;
					}
					++*nrun;
				}
		}
	return 0;
}

int main(int argc, char **argv)
{
	static struct bench bn;
	unsigned nrun = 0;
	char model[128];
	uint64_t t_start = util_now_ns();

	cli_prog = "bench_cmdq";
	parse(argc, argv, &bn.o);
	pick_cpus(&bn);
	if (util_pin_self(bn.prod_cpu[0])) {
		cli_error("cannot pin to CPU %d", bn.prod_cpu[0]);
		return 1;
	}
	find_skipped(&bn);
	bn.s = aligned_alloc(128, (sizeof(*bn.s) + 127) & ~(size_t)127);
	bn.floor_ns = calloc(2 * (size_t)bn.o.nbursts * bn.o.rounds, sizeof(double));
	if (!bn.s || !bn.floor_ns) {
		cli_error("out of memory");
		return 1;
	}
	memset(bn.s, 0, sizeof(*bn.s));
	for (int g = 0; g < 2; g++) {
		if (!(g == G_FLOW ? bn.o.flow : bn.o.sync))
			continue;
		for (size_t i = 0; i < sizeof(queues) / sizeof(queues[0]); i++)
			for (unsigned v = 0; v < queues[i]->variants[g == G_SYNC]; v++)
				add_impl(&bn, (enum group)g, queues[i], v);
	}

	cpu_model(model, sizeof(model));
	fprintf(stderr, "bench_cmdq: up to %u producer(s) on CPU", bn.o.max_prod);
	for (unsigned i = 0; i < bn.o.max_prod; i++)
		fprintf(stderr, " %d", bn.prod_cpu[i]);
	fprintf(stderr, " -> consumer on CPU %d; 2^%u entries; %u rounds x %u ms segments\n",
		bn.cons_cpu, bn.o.log2, bn.o.rounds, bn.o.segment_ms);
	for (unsigned i = 0; i < bn.nskip; i++) {
		const struct skipped *s = &bn.skipped[i];

		if (s->package)
			fprintf(stderr, "bench_cmdq: skipped %s (not found; apt-get install %s)\n",
				s->peer, s->package);
		else
			fprintf(stderr, "bench_cmdq: skipped %s: %s\n", s->peer, s->reason);
	}
	for (unsigned i = 0; i < bn.nimpl; i++)
		if (bn.im[i].d.insert_path[0])
			fprintf(stderr, "bench_cmdq: %s: insert path %s (%s)\n", bn.im[i].d.name,
				bn.im[i].d.insert_path, bn.im[i].d.insert_path_reason);

	for (int g = 0; g < 2; g++)
		if (measure(&bn, (enum group)g, &nrun))
			return 1;
	/* what the queues ran, now that they ran */
	for (unsigned i = 0; i < bn.nimpl; i++)
		if (bn.im[i].ops->describe)
			bn.im[i].ops->describe(bn.im[i].q, &bn.im[i].d);

	bench_print(&bn, model, nrun, (double)(util_now_ns() - t_start) / 1e9);
	for (unsigned i = 0; i < bn.nimpl; i++) {
		bn.im[i].ops->destroy(bn.im[i].q);
		free(bn.im[i].rate);
		free(bn.im[i].retry);
	}
	free(bn.floor_ns);
	free(bn.s);
	return 0;
}
