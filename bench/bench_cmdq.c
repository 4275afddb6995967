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
 * A round measures the ping-pong floor (regime), then one segment per
 * implementation of the group, the order rotated each round (A B C, B C A,
 * ...): this KVM guest's cross-core round trip changes regime for stretches,
 * so ratios hwt/peer are taken within a round, then the median.  A segment:
 * consumer and producer threads started and pinned, warm-up, drain, timed
 * run of --segment-ms, drain.  Elements/s = elements issued in the timed
 * run / (go .. drained).  Every wait is bounded (spin, then sched_yield;
 * --timeout-ms).  Never run by make check.
 *
 *   bench_cmdq [--segment-ms N] [--rounds N] [--bursts 1,8,32] [--producers N]
 *              [--group flow|sync|both] [--entries-log2 N] [--cons-batch N]
 *              [--producer-cpu N] [--consumer-cpu N] [--timeout-ms N]
 */
#include <hwtune/hwtune.h>

#include "peers/peers.h"
#include "prog/cli.h"
#include "prog/floor.h"
#include "prog/json.h"
#include "prog/queue.h"
#include "prog/stats.h"
#include "prog/sys.h"

#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_BURST 64
#define MAX_IMPLS 12
#define MAX_BURSTS 8
#define WARM_ELEMS 2048
#define FLOOR_ITERS 400
#define FLOOR_CHUNKS 5

enum group { G_FLOW, G_SYNC };
static const char *const group_name[] = { "flow", "sync" };

/* Every queue compiled in, the one under test first. */
static const struct bench_queue_ops *const queues[] = {
	&bench_hwt_ops,
#ifdef HAVE_DPDK
	&bench_dpdk_ops,
#endif
#ifdef HAVE_CK
	&bench_ck_ops,
#endif
#ifdef HAVE_URCU
	&bench_urcu_ops,
#endif
	&bench_mutex_ops,
};

struct impl {
	struct bench_queue_desc d;
	enum group group;
	const struct bench_queue_ops *ops;
	void *q;
	double *rate;  /* [burst index][round] */
	double *retry; /* the same, failed reservation CASes per put (cas_retries) */
};

struct seg;

/* Written per element by its producer: on lines of its own (128-byte pairs,
 * for the adjacent-line prefetch) apart from the flags others poll. */
struct prod {
	alignas(UTIL_LINE) struct seg *s;
	unsigned id;
	int cpu;
	uint64_t seq, timed; /* bursts issued in the timed run */
	int err;
	pthread_t th;
	alignas(UTIL_LINE) struct hwt_cmdq_cmd e[MAX_BURST];
};

struct seg {
	struct impl *im;
	unsigned burst, nprod, warm;
	uint64_t timeout_ns, spin_ns;
	alignas(UTIL_LINE) _Atomic int go;
	alignas(UTIL_LINE) _Atomic int stop; /* producers stop */
	_Atomic int failed;
	_Atomic unsigned ready;
	struct prod p[BENCH_MAX_PROD];
};

struct opts {
	unsigned segment_ms, rounds, nprod, log2, cons_batch, timeout_ms;
	unsigned bursts[MAX_BURSTS], nbursts;
	bool flow, sync;
	int prod_cpu, cons_cpu;
};

struct bench {
	struct opts o;
	int prod_cpu[BENCH_MAX_PROD], cons_cpu;
	uint64_t spin_ns; /* of every wait: 0 when a producer shares the consumer's CPU */
	struct seg *s;
	struct impl im[MAX_IMPLS];
	unsigned nimpl;
	double *floor_ns; /* [group][burst][round] */
};

static bool failed(struct seg *s)
{
	return atomic_load_explicit(&s->failed, memory_order_relaxed);
}

static void fail(struct seg *s)
{
	atomic_store_explicit(&s->failed, 1, memory_order_relaxed);
}

/* --- producers and segments ------------------------------------------------ */

static int put_burst(struct prod *p)
{
	struct seg *s = p->s;
	unsigned b = s->burst, id = p->id;
	uint64_t seq = p->seq;

	for (unsigned i = 0; i < b; i++)
		bench_elem_set(&p->e[i], id, ++seq);
	p->seq = seq;
	return s->im->ops->put(s->im->q, id, p->e, b);
}

static void *producer(void *arg)
{
	struct prod *p = arg;
	struct seg *s = p->s;
	struct util_wait w = UTIL_WAIT(s->spin_ns, s->timeout_ns);
	uint64_t n = 0;

	for (unsigned i = 0; i < s->warm && !p->err; i++)
		p->err = put_burst(p);
	/* release: pairs with the main thread's acquire load of ready in
	 * segment(), which then drains (it reads what the puts recorded) */
	atomic_fetch_add_explicit(&s->ready, 1, memory_order_release);
	if (p->err) {
		fail(s);
		return NULL;
	}
	/* acquire: pairs with the main thread's release store of go */
	while (!atomic_load_explicit(&s->go, memory_order_acquire))
		if (failed(s) || !util_wait_more(&w)) {
			p->err = failed(s) ? -ECANCELED : -ETIMEDOUT;
			fail(s);
			return NULL;
		}
	while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		p->err = put_burst(p);
		if (p->err) {
			fail(s);
			break;
		}
		n++;
	}
	p->timed = n;
	return NULL;
}

/* One segment of im at burst b: elements/s, or a negative errno. */
static int segment(struct bench *bn, struct impl *im, unsigned b, double *rate, double *retry)
{
	const struct bench_queue_ops *ops = im->ops;
	struct seg *s = bn->s;
	struct util_wait w = UTIL_WAIT(bn->spin_ns, (uint64_t)bn->o.timeout_ms * 1000000u);
	uint64_t t0, t1, total = 0;
	struct timespec d = { (time_t)(bn->o.segment_ms / 1000),
			      (long)(bn->o.segment_ms % 1000) * 1000000 };
	unsigned started = 0;
	int err, end_err;

	s->im = im;
	s->burst = b;
	s->nprod = bn->o.nprod;
	/* WARM_ELEMS in all, shared among the producers: the main thread's
	 * wait for the warm-up is bounded by one timeout, and 16 producers of
	 * 2048 awaited elements each on one CPU took longer than 5 s */
	s->warm = (WARM_ELEMS + b * s->nprod - 1) / (b * s->nprod);
	s->timeout_ns = (uint64_t)bn->o.timeout_ms * 1000000u;
	s->spin_ns = bn->spin_ns;
	/* threads start after these stores (pthread_create orders them) */
	atomic_store_explicit(&s->go, 0, memory_order_relaxed);
	atomic_store_explicit(&s->stop, 0, memory_order_relaxed);
	atomic_store_explicit(&s->failed, 0, memory_order_relaxed);
	atomic_store_explicit(&s->ready, 0, memory_order_relaxed);
	err = ops->begin(im->q, s->nprod, &s->failed);
	if (err)
		return err;
	for (unsigned i = 0; i < s->nprod; i++) {
		struct prod *p = &s->p[i];

		p->s = s;
		p->id = i;
		p->cpu = bn->prod_cpu[i];
		p->seq = p->timed = 0;
		p->err = 0;
		err = util_thread_start(&p->th, p->cpu, producer, p);
		if (err) {
			fail(s);
			break;
		}
		started++;
	}
	/* acquire: pairs with each producer's release increment of ready */
	while (!err && atomic_load_explicit(&s->ready, memory_order_acquire) < s->nprod)
		if (failed(s) || !util_wait_more(&w))
			err = -ETIMEDOUT;
	if (!err && !failed(s))
		err = ops->drain(im->q); /* the warm-up */
	t0 = util_now_ns();
	if (err)
		fail(s);
	else /* release: pairs with the producers' acquire load of go */
		atomic_store_explicit(&s->go, 1, memory_order_release);
	if (!err)
		nanosleep(&d, NULL);
	atomic_store_explicit(&s->stop, 1, memory_order_relaxed);
	for (unsigned i = 0; i < started; i++) {
		pthread_join(s->p[i].th, NULL);
		if (!err && s->p[i].err)
			err = s->p[i].err;
		total += s->p[i].timed * b;
	}
	if (!err)
		err = ops->drain(im->q);
	t1 = util_now_ns();
	if (err)
		fail(s);
	end_err = ops->end(im->q);
	*retry = ops->cas_retries ? ops->cas_retries(im->q) : 0;
	if (!err)
		err = end_err;
	*rate = err ? 0 : (double)total * 1e9 / (double)(t1 - t0);
	return err;
}

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
	int err;

	im->group = g;
	im->ops = ops;
	im->rate = calloc((size_t)bn->o.nbursts * bn->o.rounds, sizeof(*im->rate));
	im->retry = calloc((size_t)bn->o.nbursts * bn->o.rounds, sizeof(*im->retry));
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
		   "[--producers N]\n"
		   "                  [--group flow|sync|both] [--entries-log2 N] "
		   "[--cons-batch N]\n"
		   "                  [--producer-cpu N] [--consumer-cpu N] [--timeout-ms N]\n");
}

static void parse_bursts(struct opts *o, const char *v)
{
	char buf[128], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", v);
	o->nbursts = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->nbursts == MAX_BURSTS) {
			cli_error("--bursts: at most %d", MAX_BURSTS);
			exit(CLI_EXIT_USAGE);
		}
		o->bursts[o->nbursts++] = cli_arg_u("--bursts", tok, 1, MAX_BURST);
	}
	if (!o->nbursts)
		cli_arg_u("--bursts", "", 1, MAX_BURST);
}

static void parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){ .segment_ms = 15, .rounds = 7, .nprod = 1, .log2 = 8,
			    .cons_batch = 0, .timeout_ms = 1000, .bursts = { 1, 8, 32 },
			    .nbursts = 3, .flow = true, .sync = true,
			    .prod_cpu = -1, .cons_cpu = -1 };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *n, *v;

#define OPT(name) (v = cli_opt(argc, argv, &i, n = (name)))
		if (OPT("--segment-ms"))
			o->segment_ms = cli_arg_u(n, v, 1, 60000);
		else if (OPT("--rounds"))
			o->rounds = cli_arg_u(n, v, 1, 10000);
		else if (OPT("--producers"))
			o->nprod = cli_arg_u(n, v, 1, BENCH_MAX_PROD);
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
			parse_bursts(o, v);
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
}

static void pick_cpus(struct bench *bn)
{
	int bad, err = util_cpu_pick(bn->o.cons_cpu, bn->o.prod_cpu, bn->o.nprod, &bn->cons_cpu,
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
	for (unsigned i = 0; i < bn->o.nprod; i++)
		if (!util_spin_ns(bn->prod_cpu[i], bn->cons_cpu))
			bn->spin_ns = 0;
}

/* --- output ---------------------------------------------------------------- */

/* "elements_per_s" and "ratios" of one group and burst. */
static void print_case(struct json *j, struct bench *bn, enum group g, unsigned bi)
{
	const double *fl = &bn->floor_ns[((size_t)g * bn->o.nbursts + bi) * bn->o.rounds];
	unsigned rounds = bn->o.rounds, far = 0;
	double fmin = 0, *q = calloc(rounds, sizeof(*q));

	if (!q) {
		cli_error("out of memory");
		exit(1);
	}
	for (unsigned r = 0; r < rounds; r++)
		if (fl[r] > 0 && (!fmin || fl[r] < fmin))
			fmin = fl[r];
	for (unsigned r = 0; r < rounds; r++)
		far += fl[r] > 3 * fmin;
	json_nl(j, "    ");
	json_obj(j);
	json_key(j, "group"), json_str(j, group_name[g]);
	json_key(j, "burst"), json_u64(j, bn->o.bursts[bi]);
	json_key(j, "floor_ns");
	json_arr(j);
	for (unsigned r = 0; r < rounds; r++)
		json_fixed(j, fl[r], 0);
	json_close(j);
	json_key(j, "far_rounds"), json_u64(j, far);
	json_nl(j, "      ");
	json_key(j, "elements_per_s");
	json_obj(j);
	for (unsigned i = 0; i < bn->nimpl; i++) {
		const struct impl *im = &bn->im[i];
		const double *v = &im->rate[bi * rounds];
		double lo = v[0], hi = v[0];

		if (im->group != g)
			continue;
		for (unsigned r = 1; r < rounds; r++) {
			lo = v[r] < lo ? v[r] : lo;
			hi = v[r] > hi ? v[r] : hi;
		}
		json_nl(j, "        ");
		json_key(j, im->d.name);
		json_obj(j);
		json_key(j, "p50"), json_fixed(j, stat_median(v, rounds), 0);
		json_key(j, "min"), json_fixed(j, lo, 0);
		json_key(j, "max"), json_fixed(j, hi, 0);
		json_key(j, "segments");
		json_arr(j);
		for (unsigned r = 0; r < rounds; r++)
			json_fixed(j, v[r], 0);
		json_close(j);
		if (im->ops->cas_retries)
			json_key(j, "cas_retries_per_call_p50"),
				json_fixed(j, stat_median(&im->retry[bi * rounds], rounds), 4);
		json_close(j);
	}
	json_close(j);
	json_nl(j, "      ");
	json_key(j, "ratios");
	json_arr(j);
	for (unsigned i = 0; i < bn->nimpl; i++)
		for (unsigned k = 0; k < bn->nimpl; k++) {
			const struct impl *a = &bn->im[i], *p = &bn->im[k];
			unsigned wins = 0;
			double med;

			if (a->group != g || p->group != g || !a->ops->subject || p->ops->subject)
				continue;
			for (unsigned r = 0; r < rounds; r++) {
				q[r] = a->rate[bi * rounds + r] / p->rate[bi * rounds + r];
				wins += q[r] > 1;
			}
			med = stat_median(q, rounds);
			json_nl(j, "        ");
			json_obj(j);
			json_key(j, "hwt"), json_str(j, a->d.name);
			json_key(j, "peer"), json_str(j, p->d.name);
			json_key(j, "ratio_p50"), json_fixed(j, med, 3);
			json_key(j, "rounds_hwt_faster"), json_u64(j, wins);
			json_key(j, "rounds"), json_u64(j, rounds);
			json_close(j);
			fprintf(stderr, "%s B=%u: %s / %s = %.2fx (%u/%u rounds)\n", group_name[g],
				bn->o.bursts[bi], a->d.name, p->d.name, med, wins, rounds);
		}
	json_close(j);
	json_close(j);
	free(q);
}

static void print_json(struct bench *bn, const char *model, const char *const (*skipped)[2],
		       unsigned nskip, unsigned nrun, double wall_s)
{
	struct json j;

	json_begin(&j, stdout);
	json_obj(&j);
	json_key(&j, "bench_cmdq");
	json_obj(&j);
	json_nl(&j, "  ");
	json_key(&j, "machine");
	json_obj(&j);
	json_key(&j, "cpu_model"), json_str(&j, model);
	json_key(&j, "producer_cpus");
	json_arr(&j);
	for (unsigned i = 0; i < bn->o.nprod; i++)
		json_int(&j, bn->prod_cpu[i]);
	json_close(&j);
	json_key(&j, "consumer_cpu"), json_int(&j, bn->cons_cpu);
	json_close(&j);
	json_nl(&j, "  ");
	json_key(&j, "config");
	json_obj(&j);
	json_key(&j, "producers"), json_u64(&j, bn->o.nprod);
	json_key(&j, "entries"), json_u64(&j, 1u << bn->o.log2);
	json_key(&j, "segment_ms"), json_u64(&j, bn->o.segment_ms);
	json_key(&j, "rounds"), json_u64(&j, bn->o.rounds);
	json_key(&j, "warmup_elements"), json_u64(&j, WARM_ELEMS);
	json_key(&j, "consumer_burst"), json_u64(&j, BENCH_CONS_BURST);
	json_key(&j, "cons_batch"), json_u64(&j, bn->o.cons_batch);
	json_key(&j, "timeout_ms"), json_u64(&j, bn->o.timeout_ms);
	json_key(&j, "element_bytes"), json_u64(&j, sizeof(struct hwt_cmdq_cmd));
	json_close(&j);
	json_nl(&j, "  ");
	json_key(&j, "skipped");
	json_arr(&j);
	for (unsigned i = 0; i < nskip; i++) {
		json_obj(&j);
		json_key(&j, "peer"), json_str(&j, skipped[i][0]);
		json_key(&j, "package"), json_str(&j, skipped[i][1]);
		json_close(&j);
	}
	json_close(&j);
	json_nl(&j, "  ");
	json_key(&j, "implementations");
	json_arr(&j);
	for (unsigned i = 0; i < bn->nimpl; i++) {
		json_nl(&j, "    ");
		json_obj(&j);
		json_key(&j, "name"), json_str(&j, bn->im[i].d.name);
		json_key(&j, "group"), json_str(&j, group_name[bn->im[i].group]);
		json_key(&j, "what"), json_str(&j, bn->im[i].d.what);
		json_close(&j);
	}
	json_nl(&j, "  ");
	json_close(&j);
	json_nl(&j, "  ");
	json_key(&j, "cases");
	json_arr(&j);
	for (int g = 0; g < 2; g++)
		for (unsigned bi = 0; bi < bn->o.nbursts; bi++) {
			unsigned n = 0;

			for (unsigned i = 0; i < bn->nimpl; i++)
				n += bn->im[i].group == (enum group)g;
			if (n)
				print_case(&j, bn, g, bi);
		}
	json_nl(&j, "  ");
	json_close(&j);
	json_nl(&j, "  ");
	json_key(&j, "segments_run"), json_u64(&j, nrun);
	json_key(&j, "wall_s"), json_fixed(&j, wall_s, 2);
	json_nl(&j, "");
	json_close(&j);
	json_close(&j);
	json_end(&j);
}

int main(int argc, char **argv)
{
	static struct bench bn;
	const char *skipped[4][2];
	unsigned nskip = 0, nrun = 0;
	char model[128];
	uint64_t t_start = util_now_ns();

	cli_prog = "bench_cmdq";
	parse(argc, argv, &bn.o);
	pick_cpus(&bn);
	if (util_pin_self(bn.prod_cpu[0])) {
		cli_error("cannot pin to CPU %d", bn.prod_cpu[0]);
		return 1;
	}
#ifndef HAVE_DPDK
	skipped[nskip][0] = "rte_ring", skipped[nskip++][1] = "dpdk-dev";
#endif
#ifndef HAVE_CK
	skipped[nskip][0] = "ck_ring", skipped[nskip++][1] = "libck-dev";
#endif
#ifndef HAVE_URCU
	skipped[nskip][0] = "urcu_wfcq", skipped[nskip++][1] = "liburcu-dev";
#endif
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
				add_impl(&bn, g, queues[i], v);
	}

	cpu_model(model, sizeof(model));
	fprintf(stderr, "bench_cmdq: %u producer(s) on CPU", bn.o.nprod);
	for (unsigned i = 0; i < bn.o.nprod; i++)
		fprintf(stderr, " %d", bn.prod_cpu[i]);
	fprintf(stderr, " -> consumer on CPU %d; 2^%u entries; %u rounds x %u ms segments\n",
		bn.cons_cpu, bn.o.log2, bn.o.rounds, bn.o.segment_ms);
	for (unsigned i = 0; i < nskip; i++)
		fprintf(stderr, "bench_cmdq: skipped %s (not found; apt-get install %s)\n",
			skipped[i][0], skipped[i][1]);

	/* measure: group, burst, round, rotated implementations */
	for (int g = 0; g < 2; g++) {
		struct impl *grp[MAX_IMPLS];
		unsigned n = 0;

		for (unsigned i = 0; i < bn.nimpl; i++)
			if (bn.im[i].group == (enum group)g)
				grp[n++] = &bn.im[i];
		for (unsigned bi = 0; n && bi < bn.o.nbursts; bi++)
			for (unsigned r = 0; r < bn.o.rounds; r++) {
				bn.floor_ns[((size_t)g * bn.o.nbursts + bi) * bn.o.rounds + r] =
					floor_measure(bn.cons_cpu, FLOOR_CHUNKS, FLOOR_ITERS, bn.spin_ns,
						      (uint64_t)bn.o.timeout_ms * 1000000u);
				for (unsigned k = 0; k < n; k++) {
					struct impl *im = grp[(k + r) % n];
					double *rate = &im->rate[bi * bn.o.rounds + r];
					int err = segment(&bn, im, bn.o.bursts[bi], rate,
							  &im->retry[bi * bn.o.rounds + r]);

					if (err) {
						cli_error("%s, burst %u: %s", im->d.name, bn.o.bursts[bi],
							  strerror(-err));
						return 1;
					}
					nrun++;
				}
			}
	}

	/* stderr table */
	for (int g = 0; g < 2; g++)
		for (unsigned bi = 0; bi < bn.o.nbursts; bi++) {
			bool any = false;

			for (unsigned i = 0; i < bn.nimpl; i++) {
				struct impl *im = &bn.im[i];

				if (im->group != (enum group)g)
					continue;
				if (!any)
					fprintf(stderr, "%-4s B=%-2u", group_name[g], bn.o.bursts[bi]);
				any = true;
				fprintf(stderr, " | %s %.1f M/s", im->d.name,
					stat_median(&im->rate[bi * bn.o.rounds], bn.o.rounds) / 1e6);
				if (im->ops->cas_retries)
					fprintf(stderr, " (CAS retries/call %.3f)",
						stat_median(&im->retry[bi * bn.o.rounds], bn.o.rounds));
			}
			if (any)
				fprintf(stderr, "\n");
		}

	print_json(&bn, model, (const char *const (*)[2])skipped, nskip, nrun,
		   (double)(util_now_ns() - t_start) / 1e9);
	for (unsigned i = 0; i < bn.nimpl; i++) {
		bn.im[i].ops->destroy(bn.im[i].q);
		free(bn.im[i].rate);
		free(bn.im[i].retry);
	}
	free(bn.floor_ns);
	free(bn.s);
	return 0;
}
