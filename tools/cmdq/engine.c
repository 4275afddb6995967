/* SPDX-License-Identifier: MIT */
/*
 * The cmdq measurement: one device + queue per mode (the mode is fixed per
 * queue), every device's consumer pinned to the same device CPU.  A pool
 * of workers (the producers, and an echo thread on the device CPU) runs
 * one job at a time.  A round is: floor segment, then one segment per mode
 * (order alternating).  Each segment starts with an untimed warm-up: an
 * idle consumer sleeps on its doorbell.
 */
#include "cmdq/engine.h"

#include "prog/cli.h"
#include "prog/floor.h"
#include "prog/queue.h"
#include "prog/sys.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *const cmdq_mode_name[CMDQ_MODES] = { "msi", "sev" };
const char *const cmdq_mode_long[CMDQ_MODES] = { "MSI polling", "CONS polling" };

enum { JOB_NONE, JOB_FLOOR, JOB_SYNC, JOB_QUIT };

struct run;

struct worker {
	struct run *b;
	pthread_t thread;
	unsigned id;      /* 0..threads-1; threads = the echo thread */
	int cpu;
	struct hwt_cmdq_cmd *cmds;
	uint64_t start, end; /* timed part of the last segment */
};

struct run {
	const struct cmdq_opts *o;
	struct cmdq_report *r;
	struct hwt_smmu_dev *dev[CMDQ_MODES];
	struct hwt_cmdq *q[CMDQ_MODES];
	unsigned per_thread, per_round, rounds, nworkers; /* nworkers incl. echo */
	uint32_t *lat[CMDQ_MODES]; /* rounds * per_round samples, ns */
	uint32_t *floor;           /* rounds * per_round samples, ns */
	uint64_t *seg_wall[CMDQ_MODES]; /* per round */
	struct worker *w;
	struct floor_pp *pp;
	uint64_t timeout_ns;

	pthread_mutex_t mu;
	pthread_cond_t start_cv, done_cv;
	unsigned gen, done;
	int job, job_mode;
	unsigned job_round;

	_Atomic int failed;
	char err[200];
	pthread_mutex_t err_mu;
};

int cmdq_opts_default(struct cmdq_opts *o)
{
	bool disable = false;
	int err;

	memset(o, 0, sizeof(*o));
	o->threads = 1;
	o->syncs = 20000;
	o->entries_log2 = 8;
	o->device_cpu = o->producer_cpu = -1;
	o->timeout_ms = 1000;
	o->mode[CMDQ_MSI] = o->mode[CMDQ_SEV] = true;
	err = hwt_cmdq_env_disable_msipolling(&disable, NULL);
	if (err > 0 && disable) {
		/* measure what it selects */
		o->disable_msi = true, o->disable_src = CMDQ_SRC_ENV;
		o->mode[CMDQ_MSI] = false;
	}
	return err < 0 ? err : 0;
}

const char *cmdq_queues_word(unsigned queues, char *buf, size_t len)
{
	if (queues == HWT_CMDQ_QUEUES_PER_CPU)
		snprintf(buf, len, "per-cpu");
	else
		snprintf(buf, len, "%u", queues);
	return buf;
}

static void fail(struct run *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(struct run *b, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&b->err_mu);
	if (!atomic_load_explicit(&b->failed, memory_order_relaxed)) {
		va_start(ap, fmt);
		vsnprintf(b->err, sizeof(b->err), fmt, ap);
		va_end(ap);
		atomic_store_explicit(&b->failed, 1, memory_order_relaxed);
	}
	pthread_mutex_unlock(&b->err_mu);
}

static bool failed(struct run *b)
{
	return atomic_load_explicit(&b->failed, memory_order_relaxed);
}

static unsigned long long timeout_ms(const struct run *b)
{
	return (unsigned long long)(b->timeout_ns / 1000000);
}

static uint32_t clamp_u32(uint64_t ns)
{
	return ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
}

/* --- segments -------------------------------------------------------------- */

/* Producer 0: warm-up and per_round timed round trips, then the stop. */
static void floor_segment(struct run *b, unsigned round)
{
	uint32_t *out = b->floor + (size_t)round * b->per_round;
	int err = 0;

	for (unsigned i = 0; i < CMDQ_WARMUP + b->per_round && !err; i++) {
		uint64_t t0 = util_now_ns();

		err = floor_trip(b->pp);
		if (i >= CMDQ_WARMUP)
			out[i - CMDQ_WARMUP] = clamp_u32(util_now_ns() - t0);
	}
	if (!err)
		err = floor_stop(b->pp);
	if (err == -ETIMEDOUT)
		fail(b, "floor: no pong from the device CPU within %llu ms", timeout_ms(b));
}

static void echo_segment(struct run *b)
{
	if (floor_echo(b->pp) == -ETIMEDOUT)
		fail(b, "floor: no ping from the producer within %llu ms", timeout_ms(b));
}

static int issue(struct run *b, struct worker *w, struct hwt_cmdq *q)
{
	if (!b->o->batch)
		return hwt_cmdq_sync(q);
	return hwt_cmdq_issue(q, w->cmds, b->o->batch, true);
}

static void sync_segment(struct run *b, struct worker *w, int mode, unsigned round)
{
	struct hwt_cmdq *q = b->q[mode];
	uint32_t *out = b->lat[mode] + (size_t)round * b->per_round + (size_t)w->id * b->per_thread;
	int err = 0;

	for (unsigned i = 0; i < CMDQ_WARMUP && !err; i++)
		err = issue(b, w, q);
	w->start = util_now_ns();
	for (unsigned i = 0; i < b->per_thread && !err && !failed(b); i++) {
		uint64_t t0 = util_now_ns();

		err = issue(b, w, q);
		out[i] = clamp_u32(util_now_ns() - t0);
	}
	w->end = util_now_ns();
	if (err == -ETIMEDOUT) /* say what the user can change */
		fail(b, "%s: CMD_SYNC failed: %s (thread %u, round %u): no completion within "
		     "--timeout-ms %llu with %u producer thread%s; try fewer --threads or a longer "
		     "--timeout-ms", cmdq_mode_long[mode], strerror(-err), w->id, round,
		     timeout_ms(b), b->o->threads, b->o->threads == 1 ? "" : "s");
	else if (err)
		fail(b, "%s: CMD_SYNC failed: %s (thread %u, round %u)", cmdq_mode_long[mode],
		     strerror(-err), w->id, round);
}

/* --- the worker pool ------------------------------------------------------- */

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run *b = w->b;
	unsigned seen = 0;

	for (;;) {
		int job, mode;
		unsigned round;

		pthread_mutex_lock(&b->mu);
		while (b->gen == seen)
			pthread_cond_wait(&b->start_cv, &b->mu);
		seen = b->gen;
		job = b->job, mode = b->job_mode, round = b->job_round;
		pthread_mutex_unlock(&b->mu);
		if (job == JOB_QUIT)
			return NULL;
		if (job == JOB_FLOOR && w->id == b->o->threads)
			echo_segment(b);
		else if (job == JOB_FLOOR && w->id == 0)
			floor_segment(b, round);
		else if (job == JOB_SYNC && w->id < b->o->threads)
			sync_segment(b, w, mode, round);
		pthread_mutex_lock(&b->mu);
		if (++b->done == b->nworkers)
			pthread_cond_signal(&b->done_cv);
		pthread_mutex_unlock(&b->mu);
	}
}

/* Run one job on every worker and wait for all; a wedged segment (which
 * the bounded waits should make impossible) ends the process. */
static void run_job(struct run *b, int job, int mode, unsigned round)
{
	uint64_t limit = 60 + 4 * b->timeout_ns / 1000000000u;
	struct timespec dl;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += (time_t)limit;
	pthread_mutex_lock(&b->mu);
	b->job = job, b->job_mode = mode, b->job_round = round;
	b->done = 0;
	b->gen++;
	pthread_cond_broadcast(&b->start_cv);
	while (b->done < b->nworkers && job != JOB_QUIT) {
		if (pthread_cond_timedwait(&b->done_cv, &b->mu, &dl) == ETIMEDOUT) {
			cli_error("a segment did not finish within %llu s; giving up",
				  (unsigned long long)limit);
			exit(1);
		}
	}
	pthread_mutex_unlock(&b->mu);
}

/* --- statistics ------------------------------------------------------------ */

/* Median (nearest rank) of the v[i] whose sel[i] == want; 0 if none. */
static uint32_t median_of_rounds(const uint32_t *v, const bool *sel, unsigned rounds, bool want,
				 uint32_t *tmp)
{
	size_t n = 0;

	for (unsigned i = 0; i < rounds; i++)
		if (sel[i] == want)
			tmp[n++] = v[i];
	if (!n)
		return 0;
	stat_sort_u32(tmp, n);
	return tmp[stat_rank(n, 500)];
}

/* +1: MSI polling faster beyond the tie, -1: CONS polling, 0: a tie. */
static int side(double sev_over_msi)
{
	return sev_over_msi > 1 + CMDQ_TIE ? 1 : sev_over_msi < 1 - CMDQ_TIE ? -1 : 0;
}

/* Whether the per-round ratios (CONS time / MSI time, in round order) make
 * a stable verdict: see cmdq_report.inconclusive.  ratio is sorted here. */
static void verdict(const struct run *b, struct cmdq_report *r, double *ratio, double med,
		    unsigned sev_wins)
{
	unsigned n = b->rounds, wins = med >= 1 ? n - sev_wins : sev_wins;
	const struct cmdq_mode_result *msi = &r->m[CMDQ_MSI], *sev = &r->m[CMDQ_SEV];
	int s = side(med);
	bool stable = s == 0 || wins * 4 >= n * 3;

	/* the table's figures: cmds/s over all rounds, or the p50 of all syncs */
	if (r->tput)
		r->ratio_all = sev->cmds_per_s > 0 ? msi->cmds_per_s / sev->cmds_per_s : 0;
	else
		r->ratio_all = msi->lat.p50 ? (double)sev->lat.p50 / (double)msi->lat.p50 : 0;
	stable &= side(r->ratio_all) == s;
	/* a verdict: every third on its side; a tie: no two thirds on opposite sides */
	for (unsigned t = 0, seen = 0; t < 3 && n >= 6; t++) {
		unsigned lo = n * t / 3, hi = n * (t + 1) / 3;

		r->ratio_third[t] = stat_median(ratio + lo, hi - lo);
		seen |= 1u << (side(r->ratio_third[t]) + 1);
		stable &= s ? side(r->ratio_third[t]) == s : (seen & 5u) != 5u;
	}
	r->ratio_med = med;
	stat_sort_dbl(ratio, n);
	r->ratio_p10 = ratio[stat_rank(n, 100)];
	r->ratio_p90 = ratio[stat_rank(n, 900)];
	r->inconclusive = !stable;
}

/* The report from the samples (sorted in place). */
static int summarize(struct run *b)
{
	const struct cmdq_opts *o = b->o;
	struct cmdq_report *r = b->r;
	size_t total = (size_t)b->rounds * b->per_round;
	unsigned batch = o->batch ? o->batch : 1;
	uint32_t fmin = UINT32_MAX, *fl = r->round_p50[CMDQ_MODES];
	bool *far = calloc(b->rounds, sizeof(*far));
	double *ratio = calloc(b->rounds, sizeof(*ratio));
	uint32_t *tmp = calloc(b->rounds, sizeof(*tmp));

	if (!far || !ratio || !tmp) {
		free(far), free(ratio), free(tmp);
		return -ENOMEM;
	}
	/* per-round medians first (each segment is sorted in place) */
	for (unsigned k = 0; k <= CMDQ_MODES; k++) {
		uint32_t *v = k == CMDQ_MODES ? b->floor : b->lat[k];

		for (unsigned i = 0; v && i < b->rounds; i++) {
			uint32_t *seg = v + (size_t)i * b->per_round;

			stat_sort_u32(seg, b->per_round);
			r->round_p50[k][i] = seg[stat_rank(b->per_round, 500)];
		}
	}
	for (unsigned i = 0; i < b->rounds; i++)
		fmin = fl[i] < fmin ? fl[i] : fmin;
	for (unsigned i = 0; i < b->rounds; i++) {
		far[i] = fl[i] > (uint64_t)CMDQ_FAR_FACTOR * fmin;
		r->far += far[i];
	}
	r->near = b->rounds - r->far;
	r->near_floor = median_of_rounds(fl, far, b->rounds, false, tmp);
	r->far_floor = median_of_rounds(fl, far, b->rounds, true, tmp);

	stat_sort_u32(b->floor, total);
	stat_summary_u32(b->floor, total, &r->floor);
	for (int m = 0; m < CMDQ_MODES; m++) {
		struct cmdq_mode_result *s = &r->m[m];
		uint64_t wall = 0;

		if (!o->mode[m])
			continue;
		s->near_p50 = median_of_rounds(r->round_p50[m], far, b->rounds, false, tmp);
		s->far_p50 = median_of_rounds(r->round_p50[m], far, b->rounds, true, tmp);
		stat_sort_u32(b->lat[m], total);
		stat_summary_u32(b->lat[m], total, &s->lat);
		for (unsigned i = 0; i < b->rounds; i++) {
			uint64_t ns = b->seg_wall[m][i];

			wall += ns;
			ratio[i] = ns ? (double)b->per_round * batch * 1e9 / (double)ns : 0;
		}
		s->per_s = wall ? (double)total * 1e9 / (double)wall : 0;
		s->cmds_per_s = s->per_s * batch;
		s->cmds_per_s_med = stat_median(ratio, b->rounds);
		hwt_cmdq_get_info(b->q[m], &s->qinfo);
		hwt_smmu_dev_get_stats(b->dev[m], &s->dstats);
	}

	r->faster = -1;
	r->tput = o->batch || o->threads > 1;
	if (o->mode[CMDQ_MSI] && o->mode[CMDQ_SEV]) {
		unsigned sev_wins = 0;
		double med;

		/* per round, sev / msi: p50 latency, or time for the same work
		 * (inverse throughput) when batches or threads are in play */
		for (unsigned i = 0; i < b->rounds; i++) {
			uint64_t a = r->tput ? b->seg_wall[CMDQ_MSI][i] : r->round_p50[CMDQ_MSI][i];
			uint64_t c = r->tput ? b->seg_wall[CMDQ_SEV][i] : r->round_p50[CMDQ_SEV][i];

			ratio[i] = a ? (double)c / a : 1;
			sev_wins += c < a;
		}
		med = stat_median(ratio, b->rounds);
		verdict(b, r, ratio, med, sev_wins);
		if (r->inconclusive) {
			r->factor = med >= 1 ? med : 1 / med;
			r->agree = med >= 1 ? b->rounds - sev_wins : sev_wins;
		} else if (med < 1 - CMDQ_TIE) {
			r->faster = CMDQ_SEV, r->factor = 1 / med, r->agree = sev_wins;
		} else if (med > 1 + CMDQ_TIE) {
			r->faster = CMDQ_MSI, r->factor = med, r->agree = b->rounds - sev_wins;
		} else {
			r->factor = med >= 1 ? med : 1 / med;
			r->agree = med >= 1 ? b->rounds - sev_wins : sev_wins;
		}
	}
	free(far);
	free(ratio);
	free(tmp);
	return 0;
}

/* --- setup ----------------------------------------------------------------- */

static int make_queue(const struct cmdq_opts *o, int dev_cpu, bool cons_poll, bool auto_poll,
		      struct hwt_smmu_dev **dev, struct hwt_cmdq **q)
{
	struct util_queue_cfg c = {
		.log2 = o->entries_log2,
		.cpu = dev_cpu,
		.cons_poll = cons_poll,
		.auto_poll = auto_poll,
		.queues = o->queues,
		.msi_cost_ns = o->cost[0],
		.sev_cost_ns = o->cost[1],
		.cmd_cost_ns = o->cost[2],
		.timeout_ns = o->timeout_ms * 1000000u,
		.handler = o->noop ? util_noop_handler : NULL,
		.start = true,
	};

	return util_queue_create(&c, dev, q);
}

static void run_auto(const struct cmdq_opts *o, struct cmdq_report *r)
{
	struct hwt_smmu_dev *dev;
	struct hwt_cmdq *q;
	int err = make_queue(o, r->device_cpu, o->disable_msi, true, &dev, &q);

	r->have_auto = true;
	if (!err) {
		err = hwt_cmdq_calibrate(q);
		hwt_cmdq_get_info(q, &r->auto_info);
	} else {
		snprintf(r->auto_info.reason, sizeof(r->auto_info.reason), "setup failed: %s",
			 strerror(-err));
	}
	r->auto_err = err == -EOPNOTSUPP ? 0 : err;
	util_queue_destroy(dev, q);
}

static void build_cmds(struct worker *w, unsigned batch)
{
	for (unsigned i = 0; i < batch; i++)
		util_tlbi_va(w->cmds[i].dw, w->id + 1, 0, (uint64_t)(0x10000 + i) << 12);
}

static int pick_cpus(struct run *b)
{
	const struct cmdq_opts *o = b->o;
	struct cmdq_report *r = b->r;
	int *prod = calloc(o->threads, sizeof(*prod));
	int bad = UTIL_CPU_OK;
	int err = prod ? util_cpu_pick(o->device_cpu, o->producer_cpu, o->threads,
				       &r->device_cpu, prod, &bad)
		       : -ENOMEM;
	bool prod0 = bad == UTIL_CPU_BAD_PROD0;

	if (bad != UTIL_CPU_OK) {
		struct hwt_cpus ok = HWT_CPUS_INIT;
		char list[128];

		if (hwt_cpu_allowed(&ok) < 0 || hwt_cpus_format(&ok, list, sizeof(list)) < 0)
			snprintf(list, sizeof(list), "?");
		hwt_cpus_free(&ok);
		snprintf(r->error, sizeof(r->error),
			 "--%s-cpu: invalid value '%d' (not an allowed CPU; allowed: %s)",
			 prod0 ? "producer" : "device", prod0 ? o->producer_cpu : o->device_cpu, list);
	} else if (err == -ENOMEM) {
		snprintf(r->error, sizeof(r->error), "out of memory");
	} else if (err) {
		snprintf(r->error, sizeof(r->error), "cannot read the allowed CPUs: %s",
			 strerror(-err));
	}
	for (unsigned i = 0; !err && i <= o->threads; i++)
		b->w[i].cpu = i < o->threads ? prod[i] : r->device_cpu; /* last: the echo */
	if (!err)
		r->producer_cpu = prod[0];
	free(prod);
	/* -EINVAL only for the CPU options: that is bad usage */
	return bad != UTIL_CPU_OK ? -EINVAL : err ? -EIO : 0;
}

static int setup(struct run *b)
{
	const struct cmdq_opts *o = b->o;
	size_t total;
	unsigned seg = o->seg;
	int err;

	if (!seg) {
		uint64_t s = o->syncs / 10;

		seg = s < 1 ? 1 : s > CMDQ_SEG_DEFAULT_MAX ? CMDQ_SEG_DEFAULT_MAX : (unsigned)s;
	}
	b->per_thread = (seg + o->threads - 1) / o->threads;
	b->per_round = b->per_thread * o->threads;
	b->rounds = (unsigned)((o->syncs + b->per_round - 1) / b->per_round);
	b->nworkers = o->threads + 1;
	b->r->rounds = b->rounds;
	b->r->per_round = b->per_round;
	b->w = calloc(b->nworkers, sizeof(*b->w));
	if (!b->w)
		goto oom;
	err = pick_cpus(b);
	if (err)
		return err;

	total = (size_t)b->rounds * b->per_round;
	b->pp = aligned_alloc(128, sizeof(*b->pp));
	b->floor = malloc(sizeof(uint32_t) * total);
	if (!b->pp || !b->floor)
		goto oom;
	for (int k = 0; k <= CMDQ_MODES; k++)
		if (!(b->r->round_p50[k] = calloc(b->rounds, sizeof(uint32_t))))
			goto oom;
	for (int m = 0; m < CMDQ_MODES; m++) {
		b->seg_wall[m] = calloc(b->rounds, sizeof(uint64_t));
		if (o->mode[m])
			b->lat[m] = calloc(total, sizeof(uint32_t));
		if (!b->seg_wall[m] || (o->mode[m] && !b->lat[m]))
			goto oom;
	}
	for (unsigned i = 0; i < o->threads && o->batch; i++) {
		b->w[i].cmds = calloc(o->batch, sizeof(*b->w[i].cmds));
		if (!b->w[i].cmds)
			goto oom;
	}
	floor_init(b->pp, util_spin_ns(b->w[0].cpu, b->r->device_cpu), b->timeout_ns);
	return 0;
oom:
	snprintf(b->r->error, sizeof(b->r->error), "out of memory");
	return -EIO;
}

/* --- the run --------------------------------------------------------------- */

/* The create refused --queues: the device (one queue per possible CPU, at
 * most CMDQ_QUEUES_MAX) has fewer, or the library takes no such number.
 * -EINVAL: the user's value, bad usage here. */
static int queues_refused(const struct cmdq_opts *o, struct cmdq_report *r)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	unsigned have = n < 1 ? 1 : n > CMDQ_QUEUES_MAX ? CMDQ_QUEUES_MAX : (unsigned)n;
	char w[16];

	if (o->queues != HWT_CMDQ_QUEUES_PER_CPU && o->queues > have)
		snprintf(r->error, sizeof(r->error),
			 "--queues: invalid value '%u' (the device has %u command queue%s here: one "
			 "per possible CPU; expected 1..%u or per-cpu)", o->queues, have,
			 have == 1 ? "" : "s", have);
	else
		snprintf(r->error, sizeof(r->error), "--queues %s: the library refused it (%s)",
			 cmdq_queues_word(o->queues, w, sizeof(w)), strerror(EINVAL));
	return -EINVAL;
}

static int measure(struct run *b, unsigned *started)
{
	const struct cmdq_opts *o = b->o;
	struct cmdq_report *r = b->r;
	int err;

	/* The main thread only coordinates; keep it off the device CPU. */
	util_pin_self(b->w[0].cpu);
	if (o->auto_poll)
		run_auto(o, r);
	for (int m = 0; m < CMDQ_MODES; m++) {
		if (!o->mode[m])
			continue;
		err = make_queue(o, r->device_cpu, m == CMDQ_SEV, false, &b->dev[m], &b->q[m]);
		if (err == -EINVAL && o->queues > 1)
			return queues_refused(o, r);
		if (err) {
			snprintf(r->error, sizeof(r->error),
				 "cannot set up the %s device and queue: %s", cmdq_mode_long[m],
				 strerror(-err));
			return -EIO;
		}
	}
	for (unsigned i = 0; i < b->nworkers; i++) {
		struct worker *w = &b->w[i];

		w->b = b;
		w->id = i;
		if (w->cmds)
			build_cmds(w, o->batch);
		err = util_thread_start(&w->thread, w->cpu, worker_main, w);
		if (err) {
			snprintf(r->error, sizeof(r->error), "cannot start thread %u: %s", i,
				 strerror(-err));
			return -EIO;
		}
		++*started;
	}

	for (unsigned round = 0; round < b->rounds && !failed(b); round++) {
		run_job(b, JOB_FLOOR, 0, round);
		for (int k = 0; k < CMDQ_MODES && !failed(b); k++) {
			int m = round % 2 ? CMDQ_MODES - 1 - k : k; /* A B, B A, ... */
			uint64_t s = UINT64_MAX, e = 0;

			if (!o->mode[m])
				continue;
			run_job(b, JOB_SYNC, m, round);
			for (unsigned i = 0; i < o->threads; i++) {
				s = b->w[i].start < s ? b->w[i].start : s;
				e = b->w[i].end > e ? b->w[i].end : e;
			}
			b->seg_wall[m][round] = e - s;
		}
		if (o->progress)
			o->progress(round + 1, b->rounds, o->progress_arg);
	}
	if (failed(b)) {
		snprintf(r->error, sizeof(r->error), "%s", b->err);
		return -EIO;
	}
	err = summarize(b);
	if (err)
		snprintf(r->error, sizeof(r->error), "out of memory");
	return err ? -EIO : 0;
}

int cmdq_measure(const struct cmdq_opts *o, struct cmdq_report *r)
{
	struct run b;
	unsigned started = 0;
	int err;

	memset(r, 0, sizeof(*r));
	r->o = *o;
	r->faster = -1;
	memset(&b, 0, sizeof(b));
	b.o = &r->o;
	b.r = r;
	b.timeout_ns = o->timeout_ms * 1000000u;
	pthread_mutex_init(&b.mu, NULL);
	pthread_mutex_init(&b.err_mu, NULL);
	pthread_cond_init(&b.start_cv, NULL);
	pthread_cond_init(&b.done_cv, NULL);

	err = setup(&b);
	if (!err)
		err = measure(&b, &started); /* -EINVAL: --queues refused (bad usage), or -EIO */
	if (started) {
		run_job(&b, JOB_QUIT, 0, 0);
		for (unsigned i = 0; i < started; i++)
			pthread_join(b.w[i].thread, NULL);
	}
	for (int m = 0; m < CMDQ_MODES; m++) {
		util_queue_destroy(b.dev[m], b.q[m]);
		free(b.lat[m]);
		free(b.seg_wall[m]);
	}
	for (unsigned i = 0; b.w && i < b.nworkers; i++)
		free(b.w[i].cmds);
	free(b.w);
	free(b.pp);
	free(b.floor);
	pthread_cond_destroy(&b.start_cv);
	pthread_cond_destroy(&b.done_cv);
	pthread_mutex_destroy(&b.mu);
	pthread_mutex_destroy(&b.err_mu);
	return err;
}

void cmdq_report_free(struct cmdq_report *r)
{
	for (int k = 0; k <= CMDQ_MODES; k++) {
		free(r->round_p50[k]);
		r->round_p50[k] = NULL;
	}
}
