/* SPDX-License-Identifier: MIT */
/*
 * Empty-queue CMD_SYNC latency, MSI polling against CONS polling against
 * the cache-line floor, as JSON on stdout (a summary on stderr):
 * percentiles and a CDF of every sync timed alone, per mode.
 *
 * One software SMMU + queue per mode (the mode is fixed per queue), the
 * devices' consumer threads pinned to the device CPU, the producer (this
 * thread) on another CPU.  A round is: a floor segment, then one segment
 * per mode, the order of the modes rotating each round (M S, S M, ...),
 * since the cross-core round trip of a KVM guest changes regime for
 * stretches: ratios are taken within a round, then the median over rounds.
 * Where the library has per-CPU queues (HWT_CMDQ_QUEUES_PER_CPU), a third
 * queue mode, msi_percpu: MSI polling on a queue created with .queues =
 * HWT_CMDQ_QUEUES_PER_CPU (its insert path is reported).
 *
 * The floor is measured two ways, both with our own two-line ping-pong
 * (prog/floor.c: the producer writes one line, an echo thread pinned on the
 * device CPU answers on another):
 *   - c2clat's method (Erik Rigtorp's c2clat): time 100 back-to-back round
 *     trips per sample, keep the smallest sample; reported as that minimum
 *     round trip and its half;
 *   - core-to-core-latency's method (Nicolas Viennot's core-to-core-latency,
 *     its "write then read on two cache lines" test): the median of round
 *     trips timed one by one; the same samples give the floor's CDF.
 *
 * Every sync (and every single floor trip) is timed alone with
 * clock_gettime(CLOCK_MONOTONIC), so each sample includes one clock read.
 * Every wait is bounded (--timeout-ms).  Never run by make check.
 *
 *   bench_sync [--rounds N] [--segment N] [--quantiles N] [--msi-cost-ns N]
 *              [--sev-cost-ns N] [--cmd-cost-ns N] [--device-cpu N]
 *              [--producer-cpu N] [--timeout-ms N] [--label WORD]
 */
#include <hwtune/hwtune.h>

#include "prog/cli.h"
#include "prog/floor.h"
#include "prog/json.h"
#include "prog/queue.h"
#include "prog/stats.h"
#include "prog/sys.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define C2C_TRIPS 100  /* round trips per c2clat sample */
#define C2C_SAMPLES 20 /* c2clat samples per round */
#define WARM 16        /* untimed syncs before each segment */
#define SWITCH 1.03    /* CONS polling must be > 3% faster to recommend it */

enum {
	M_FLOOR,
	M_MSI,
	M_SEV,
#ifdef HWT_CMDQ_QUEUES_PER_CPU
	M_PCPU,
#endif
	NMODES
};
static const char *const mode_name[NMODES] = {
	"floor", "msi", "sev",
#ifdef HWT_CMDQ_QUEUES_PER_CPU
	"msi_percpu",
#endif
};
#define NSYNC (NMODES - M_MSI) /* the queue modes */

#ifdef HWT_CMDQ_QUEUES_PER_CPU
/* The info's insert path and reason as words, whether the header carries
 * them as text (an array or a pointer) or as a code. */
static const char *words_text(const char *s)
{
	return s ? s : "";
}

static const char *words_code(long v)
{
	static char buf[24];

	snprintf(buf, sizeof(buf), "path %ld", v);
	return buf;
}

#define WORDS(x) _Generic((x), char *: words_text, const char *: words_text, default: words_code)(x)
#endif

struct opts {
	unsigned rounds, segment, quantiles, timeout_ms;
	unsigned msi_cost, sev_cost, cmd_cost;
	int dev_cpu, prod_cpu;
	const char *label;
};

struct series {
	uint64_t *v;
	size_t n;
};

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		cli_error("out of memory");
		exit(1);
	}
	return p;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: bench_sync [--rounds N] [--segment N] [--quantiles N] "
		   "[--msi-cost-ns N] [--sev-cost-ns N]\n"
		   "                  [--cmd-cost-ns N] [--device-cpu N] [--producer-cpu N] "
		   "[--timeout-ms N] [--label WORD]\n");
}

static void parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){ .rounds = 20, .segment = 500, .quantiles = 200, .timeout_ms = 1000,
			    .dev_cpu = -1, .prod_cpu = -1, .label = "default" };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *n, *v;

#define OPT(name) (v = cli_opt(argc, argv, &i, n = (name)))
		if (OPT("--rounds"))
			o->rounds = cli_arg_u(n, v, 1, 100000);
		else if (OPT("--segment"))
			o->segment = cli_arg_u(n, v, 1, 1000000);
		else if (OPT("--quantiles"))
			o->quantiles = cli_arg_u(n, v, 2, 10000);
		else if (OPT("--msi-cost-ns"))
			o->msi_cost = cli_arg_u(n, v, 0, 1000000);
		else if (OPT("--sev-cost-ns"))
			o->sev_cost = cli_arg_u(n, v, 0, 1000000);
		else if (OPT("--cmd-cost-ns"))
			o->cmd_cost = cli_arg_u(n, v, 0, 1000000);
		else if (OPT("--timeout-ms"))
			o->timeout_ms = cli_arg_u(n, v, 1, 60000);
		else if (OPT("--device-cpu"))
			o->dev_cpu = (int)cli_arg_u(n, v, 0, HWT_CPU_ID_MAX);
		else if (OPT("--producer-cpu"))
			o->prod_cpu = (int)cli_arg_u(n, v, 0, HWT_CPU_ID_MAX);
		else if (OPT("--label")) {
			for (const char *c = v; *c; c++)
				if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
				      *c == '-' || *c == '_')) {
					cli_error("--label: invalid value '%s' (expected [a-z0-9_-]+)",
						  v);
					exit(CLI_EXIT_USAGE);
				}
			o->label = v;
		} else {
			bool help = !strcmp(a, "--help") || !strcmp(a, "-h");

			usage(help ? stdout : stderr);
			exit(help ? 0 : CLI_EXIT_USAGE);
		}
#undef OPT
	}
}

static void *echo_main(void *arg)
{
	floor_echo(arg);
	return NULL;
}

/* One floor segment: n single trips into s (and *med, their median), and
 * C2C_SAMPLES samples of C2C_TRIPS trips: *c2c_min is the smallest mean. */
static int floor_segment(int echo_cpu, uint64_t spin_ns, uint64_t timeout_ns, unsigned n,
			 struct series *s, uint64_t *scratch, uint64_t *med, double *c2c_min)
{
	struct floor_pp *pp = aligned_alloc(UTIL_LINE, sizeof(*pp));
	pthread_t th;
	int err;

	if (!pp)
		return -ENOMEM;
	floor_init(pp, spin_ns, timeout_ns);
	err = util_thread_start(&th, echo_cpu, echo_main, pp);
	if (err) {
		free(pp);
		return err;
	}
	for (unsigned k = 0; k < WARM && !err; k++)
		err = floor_trip(pp);
	for (unsigned k = 0; k < n && !err; k++) {
		uint64_t t0 = util_now_ns();

		err = floor_trip(pp);
		scratch[k] = util_now_ns() - t0;
	}
	*c2c_min = 0;
	for (unsigned c = 0; c < C2C_SAMPLES && !err; c++) {
		uint64_t t0 = util_now_ns();
		double mean;

		for (unsigned k = 0; k < C2C_TRIPS && !err; k++)
			err = floor_trip(pp);
		mean = (double)(util_now_ns() - t0) / C2C_TRIPS;
		if (!c || mean < *c2c_min)
			*c2c_min = mean;
	}
	if (!err)
		err = floor_stop(pp);
	pthread_join(th, NULL);
	free(pp);
	if (err)
		return err;
	memcpy(s->v + s->n, scratch, n * sizeof(*scratch));
	s->n += n;
	stat_sort_u64(scratch, n);
	*med = scratch[n / 2];
	return 0;
}

/* One mode segment: WARM untimed syncs, then n timed ones. */
static int sync_segment(struct hwt_cmdq *q, unsigned n, struct series *s, uint64_t *scratch,
			uint64_t *med)
{
	int err = 0;

	for (unsigned k = 0; k < WARM && !err; k++)
		err = hwt_cmdq_sync(q);
	for (unsigned k = 0; k < n && !err; k++) {
		uint64_t t0 = util_now_ns();

		err = hwt_cmdq_sync(q);
		scratch[k] = util_now_ns() - t0;
	}
	if (err)
		return err;
	memcpy(s->v + s->n, scratch, n * sizeof(*scratch));
	s->n += n;
	stat_sort_u64(scratch, n);
	*med = scratch[n / 2];
	return 0;
}

static uint64_t quantile(const uint64_t *sorted, size_t n, double q)
{
	size_t r = (size_t)ceil(q * (double)n);

	return sorted[r ? (r > n ? n - 1 : r - 1) : 0];
}

static void print_mode(struct json *j, unsigned m, struct series *s, unsigned nq)
{
	struct stat_summary st;

	stat_sort_u64(s->v, s->n);
	stat_summary_u64(s->v, s->n, &st);
	json_nl(j, "    ");
	json_obj(j);
	json_key(j, "mode"), json_str(j, mode_name[m]);
	json_key(j, "n"), json_u64(j, st.n);
	json_key(j, "min"), json_u64(j, st.min);
	json_key(j, "p50"), json_u64(j, st.p50);
	json_key(j, "p90"), json_u64(j, st.p90);
	json_key(j, "p99"), json_u64(j, st.p99);
	json_key(j, "p999"), json_u64(j, st.p999);
	json_key(j, "max"), json_u64(j, st.max);
	json_key(j, "cdf_ns");
	json_arr(j);
	for (unsigned i = 1; i <= nq; i++)
		json_u64(j, quantile(s->v, s->n, (double)i / nq));
	json_close(j);
	json_close(j);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct hwt_smmu_dev *dev[NMODES] = { 0 };
	struct hwt_cmdq *q[NMODES] = { 0 };
	struct series s[NMODES];
	uint64_t *scratch, (*rmed)[NMODES], spin_ns, t_start = util_now_ns();
	double *c2c, *r_msi, *r_sev, *r_ms, *r_pcpu, best_floor = 0;
	unsigned msi_wins = 0, far = 0;
	int dcpu, pcpu, bad, err;
	struct json j;

	cli_prog = "bench_sync";
	parse(argc, argv, &o);
	err = util_cpu_pick(o.dev_cpu, o.prod_cpu, 1, &dcpu, &pcpu, &bad);
	if (bad != UTIL_CPU_OK) {
		cli_error("--%s-cpu: invalid value '%d' (not an allowed CPU)",
			  bad == UTIL_CPU_BAD_DEV ? "device" : "producer",
			  bad == UTIL_CPU_BAD_DEV ? o.dev_cpu : o.prod_cpu);
		return CLI_EXIT_USAGE;
	}
	if (err || util_pin_self(pcpu)) {
		cli_error("cannot pin the producer to CPU %d", pcpu);
		return 1;
	}
	spin_ns = util_spin_ns(pcpu, dcpu);
	for (unsigned m = M_MSI; m < NMODES; m++) {
		struct util_queue_cfg c = {
			.log2 = 8,
			.cpu = dcpu,
			.cons_poll = m == M_SEV,
#ifdef HWT_CMDQ_QUEUES_PER_CPU
			.queues = m == M_PCPU ? HWT_CMDQ_QUEUES_PER_CPU : 0,
#endif
			.msi_cost_ns = o.msi_cost,
			.sev_cost_ns = o.sev_cost,
			.cmd_cost_ns = o.cmd_cost,
			.timeout_ns = (uint64_t)o.timeout_ms * 1000000u,
			.handler = NULL, /* the SMMU cache model, as hwtune cmdq */
			.start = true,
		};

		err = util_queue_create(&c, &dev[m], &q[m]);
		if (err) {
			cli_error("%s queue: %s", mode_name[m], strerror(-err));
			return 1;
		}
	}
	for (unsigned m = 0; m < NMODES; m++) {
		s[m].v = xcalloc((size_t)o.rounds * o.segment, sizeof(uint64_t));
		s[m].n = 0;
	}
	scratch = xcalloc(o.segment, sizeof(*scratch));
	rmed = xcalloc(o.rounds, sizeof(*rmed));
	c2c = xcalloc(o.rounds, sizeof(*c2c));
	r_msi = xcalloc(o.rounds, sizeof(*r_msi));
	r_sev = xcalloc(o.rounds, sizeof(*r_sev));
	r_ms = xcalloc(o.rounds, sizeof(*r_ms));
	r_pcpu = xcalloc(o.rounds, sizeof(*r_pcpu));

	for (unsigned r = 0; r < o.rounds; r++) {
		err = floor_segment(dcpu, spin_ns, (uint64_t)o.timeout_ms * 1000000u, o.segment,
				    &s[M_FLOOR], scratch, &rmed[r][M_FLOOR], &c2c[r]);
		for (unsigned k = 0; k < NSYNC && !err; k++) {
			unsigned m = M_MSI + (r + k) % NSYNC; /* M S, S M, ... (M S P, S P M, ...) */

			err = sync_segment(q[m], o.segment, &s[m], scratch, &rmed[r][m]);
		}
		if (err) {
			cli_error("round %u: %s", r, strerror(-err));
			return 1;
		}
		r_msi[r] = (double)rmed[r][M_MSI] / (double)rmed[r][M_FLOOR];
		r_sev[r] = (double)rmed[r][M_SEV] / (double)rmed[r][M_FLOOR];
		r_ms[r] = (double)rmed[r][M_MSI] / (double)rmed[r][M_SEV];
#ifdef HWT_CMDQ_QUEUES_PER_CPU
		r_pcpu[r] = (double)rmed[r][M_PCPU] / (double)rmed[r][M_FLOOR];
#endif
		msi_wins += rmed[r][M_MSI] < rmed[r][M_SEV];
		if (!r || rmed[r][M_FLOOR] < best_floor)
			best_floor = (double)rmed[r][M_FLOOR];
		if (isatty(STDERR_FILENO))
			fprintf(stderr, "\rbench_sync %s: round %u/%u", o.label, r + 1, o.rounds);
	}
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "\n");
	for (unsigned r = 0; r < o.rounds; r++)
		far += rmed[r][M_FLOOR] > 3 * best_floor;

	double c2c_min = c2c[0], med_msi, med_sev, med_ms;
	uint64_t pp_med;
	struct hwt_smmu_dev_stats st;
	bool sev_better;

	for (unsigned r = 1; r < o.rounds; r++)
		if (c2c[r] < c2c_min)
			c2c_min = c2c[r];
	med_msi = stat_median(r_msi, o.rounds);
	med_sev = stat_median(r_sev, o.rounds);
	med_ms = stat_median(r_ms, o.rounds);
	sev_better = med_ms > SWITCH;
	{
		uint64_t *f = xcalloc(s[M_FLOOR].n, sizeof(*f));

		memcpy(f, s[M_FLOOR].v, s[M_FLOOR].n * sizeof(*f));
		stat_sort_u64(f, s[M_FLOOR].n);
		pp_med = f[s[M_FLOOR].n / 2];
		free(f);
	}

	json_begin(&j, stdout);
	json_obj(&j);
	json_key(&j, "bench_sync");
	json_obj(&j);
	json_key(&j, "version"), json_str(&j, hwt_version());
	json_key(&j, "label"), json_str(&j, o.label);
	json_nl(&j, "  ");
	json_key(&j, "config");
	json_obj(&j);
	json_key(&j, "producer_cpu"), json_int(&j, pcpu);
	json_key(&j, "device_cpu"), json_int(&j, dcpu);
	json_key(&j, "entries"), json_u64(&j, 256);
	json_key(&j, "rounds"), json_u64(&j, o.rounds);
	json_key(&j, "segment"), json_u64(&j, o.segment);
	json_key(&j, "warmup"), json_u64(&j, WARM);
	json_key(&j, "quantiles"), json_u64(&j, o.quantiles);
	json_key(&j, "timeout_ms"), json_u64(&j, o.timeout_ms);
	json_key(&j, "costs_ns");
	json_obj(&j);
	json_key(&j, "msi"), json_u64(&j, o.msi_cost);
	json_key(&j, "sev"), json_u64(&j, o.sev_cost);
	json_key(&j, "cmd"), json_u64(&j, o.cmd_cost);
	json_close(&j);
	json_close(&j);
	json_nl(&j, "  ");
	json_key(&j, "floor");
	json_obj(&j);
	json_key(&j, "c2clat_min_rtt_ns"), json_fixed(&j, c2c_min, 1);
	json_key(&j, "c2clat_one_way_ns"), json_fixed(&j, c2c_min / 2, 1);
	json_key(&j, "c2clat_method"),
		json_str(&j, "min over samples of the mean of 100 back-to-back round trips "
			     "(c2clat, rigtorp), our own ping-pong");
	json_key(&j, "c2c_median_rtt_ns"), json_u64(&j, pp_med);
	json_key(&j, "c2c_one_way_ns"), json_fixed(&j, (double)pp_med / 2, 1);
	json_key(&j, "c2c_method"),
		json_str(&j, "median of single timed round trips, write one line then read the "
			     "other (core-to-core-latency, nviennot), our own ping-pong");
	json_key(&j, "far_rounds"), json_u64(&j, far);
	json_close(&j);
	json_nl(&j, "  ");
	json_key(&j, "modes");
	json_arr(&j);
	for (unsigned m = 0; m < NMODES; m++)
		print_mode(&j, m, &s[m], o.quantiles);
	json_close(&j);
	json_nl(&j, "  ");
	json_key(&j, "ratios");
	json_obj(&j);
	json_key(&j, "msi_to_floor_p50"), json_fixed(&j, med_msi, 3);
	json_key(&j, "sev_to_floor_p50"), json_fixed(&j, med_sev, 3);
	json_key(&j, "msi_to_sev_p50"), json_fixed(&j, med_ms, 3);
	json_key(&j, "rounds_msi_faster"), json_u64(&j, msi_wins);
	json_key(&j, "rounds"), json_u64(&j, o.rounds);
#ifdef HWT_CMDQ_QUEUES_PER_CPU
	json_key(&j, "msi_percpu_to_floor_p50"), json_fixed(&j, stat_median(r_pcpu, o.rounds), 3);
#endif
	json_close(&j);
#ifdef HWT_CMDQ_QUEUES_PER_CPU
	{
		struct hwt_cmdq_info info;

		hwt_cmdq_get_info(q[M_PCPU], &info);
		json_nl(&j, "  ");
		json_key(&j, "percpu");
		json_obj(&j);
		json_key(&j, "queues"), json_u64(&j, info.queues);
		json_key(&j, "insert_path"), json_str(&j, WORDS(info.insert_path));
		json_key(&j, "insert_path_reason"), json_str(&j, WORDS(info.insert_path_reason));
		json_close(&j);
		fprintf(stderr,
			"bench_sync %s: per-CPU queue: MSI %.2fx floor; %u queues, insert path %s (%s)\n",
			o.label, stat_median(r_pcpu, o.rounds), (unsigned)info.queues,
			WORDS(info.insert_path), WORDS(info.insert_path_reason));
	}
#endif
	json_nl(&j, "  ");
	json_key(&j, "recommendation");
	json_obj(&j);
	json_key(&j, "poll"), json_str(&j, sev_better ? "sev" : "msi");
	json_key(&j, "disable_msipolling"), json_u64(&j, sev_better);
	json_key(&j, "rule"),
		json_str(&j, "sev (disable_msipolling=1) when the median per-round MSI/CONS "
			     "sync p50 ratio exceeds 1.03, as hwtune cmdq");
	json_close(&j);
	json_nl(&j, "  ");
	json_key(&j, "rounds_p50_ns");
	json_arr(&j);
	for (unsigned r = 0; r < o.rounds; r++) {
		json_arr(&j);
		for (unsigned m = 0; m < NMODES; m++)
			json_u64(&j, rmed[r][m]);
		json_close(&j);
	}
	json_close(&j);
	json_nl(&j, "  ");
	json_key(&j, "device_syncs");
	json_obj(&j);
	for (unsigned m = M_MSI; m < NMODES; m++) {
		hwt_smmu_dev_get_stats(dev[m], &st);
		json_key(&j, mode_name[m]), json_u64(&j, st.syncs);
	}
	json_close(&j);
	json_key(&j, "wall_s"), json_fixed(&j, (double)(util_now_ns() - t_start) / 1e9, 2);
	json_close(&j);
	json_close(&j);
	json_end(&j);

	fprintf(stderr,
		"bench_sync %s (costs msi %u sev %u cmd %u ns): floor %.0f ns (c2clat min RTT) / "
		"%llu ns (median RTT); MSI %.2fx floor, CONS %.2fx, MSI/CONS %.3f (%u/%u rounds MSI "
		"faster) -> %s\n",
		o.label, o.msi_cost, o.sev_cost, o.cmd_cost, c2c_min, (unsigned long long)pp_med,
		med_msi, med_sev, med_ms, msi_wins, o.rounds, sev_better ? "sev" : "msi");
	for (unsigned m = M_MSI; m < NMODES; m++)
		util_queue_destroy(dev[m], q[m]);
	for (unsigned m = 0; m < NMODES; m++)
		free(s[m].v);
	free(scratch), free(rmed), free(c2c), free(r_msi), free(r_sev), free(r_ms), free(r_pcpu);
	return 0;
}
