/* SPDX-License-Identifier: MIT */
/*
 * hwtune cmdq: the seed's micro-benchmark.  CMD_SYNC latency per completion
 * mode (MSI polling vs CONS polling with SEV), both modes interleaved in
 * short segments with a producer <-> device-CPU cache-line ping-pong (the
 * floor), and with --threads/--batch the multi-producer throughput.
 *
 * One device + queue per mode (the mode is fixed per queue), every device's
 * consumer pinned to the same device CPU.  A round is: floor segment, then
 * one segment per mode (order alternating).  Each segment starts with an
 * untimed warm-up: an idle consumer sleeps on its doorbell.
 */
#include "cli.h"

#include <hwtune/hwtune.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { M_MSI, M_SEV, M_N };
static const char *const mode_name[M_N] = { "msi", "sev" };
static const char *const mode_long[M_N] = { "MSI polling", "CONS polling" };

enum { SRC_DEFAULT, SRC_ENV, SRC_FLAG };
static const char *const src_name[] = { "default", "env", "flag" };

#define WARMUP 16            /* untimed issues per thread per segment */
#define SEG_DEFAULT_MAX 500  /* timed syncs per mode per round */
#define SPIN_NS 20000        /* ping-pong: spin this long, then yield */
#define FAR_FACTOR 3         /* a round is "far" if its floor > 3x the best */
#define TIE 0.03             /* modes within 3% count as a tie */

struct opts {
	bool mode[M_N];
	bool poll_given;
	bool disable_msi;
	int disable_src;
	unsigned threads, batch, entries_log2, seg;
	uint64_t syncs;
	bool json, auto_poll, noop;
	int device_cpu, producer_cpu;
	unsigned cost[3]; /* msi, sev, cmd */
	uint64_t timeout_ms;
};

struct pingpong {
	alignas(64) _Atomic uint32_t ping; /* written by the producer */
	alignas(64) _Atomic uint32_t pong; /* written by the echo thread */
	alignas(64) uint32_t seq;          /* producer-private */
};

enum { JOB_NONE, JOB_FLOOR, JOB_SYNC, JOB_QUIT };

struct bench;

struct worker {
	struct bench *b;
	pthread_t thread;
	unsigned id;      /* 0..threads-1; threads = the echo thread */
	int cpu;
	uint64_t (*cmds)[2];
	uint64_t start, end; /* timed part of the last segment */
};

struct bench {
	const struct opts *o;
	struct hwt_smmu_dev *dev[M_N];
	struct hwt_cmdq *q[M_N];
	int dev_cpu;
	unsigned per_thread, per_round, rounds, nworkers; /* nworkers incl. echo */
	uint32_t *lat[M_N];  /* rounds * per_round samples, ns */
	uint32_t *floor;     /* rounds * per_round samples, ns */
	uint32_t *seg_p50[M_N + 1]; /* per round; [M_N] = floor */
	uint64_t *seg_wall[M_N]; /* per round */
	struct worker *w;
	struct pingpong *pp;
	uint64_t timeout_ns;
	uint64_t pp_spin_ns; /* 0 when both ends share a CPU */

	pthread_mutex_t mu;
	pthread_cond_t start_cv, done_cv;
	unsigned gen, done;
	int job, job_mode;
	unsigned job_round;

	_Atomic int failed;
	char err[200];
	pthread_mutex_t err_mu;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void fail(struct bench *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(struct bench *b, const char *fmt, ...)
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

static bool failed(struct bench *b)
{
	return atomic_load_explicit(&b->failed, memory_order_relaxed);
}

static int noop_handler(void *ctx, const uint64_t dw[2])
{
	(void)ctx, (void)dw;
	return HWT_SMMU_CERROR_NONE;
}

/* --- floor: two-line ping-pong ------------------------------------------ */

/*
 * Wait until *p != old (echo) or *p == want (producer), bounded: spin with
 * relax for pp_spin_ns, then yield (the partner may share our CPU).  Returns
 * the value seen, or old on timeout / failure.  Acquire: pairs with the
 * partner's release store, though only the value matters here.
 */
static uint32_t pp_wait(struct bench *b, _Atomic uint32_t *p, uint32_t old, bool changed,
			uint32_t want)
{
	uint64_t t0 = 0, t;

	for (unsigned n = 1;; n++) {
		uint32_t v = atomic_load_explicit(p, memory_order_acquire);

		if (changed ? v != old : v == want)
			return v;
		hwt_cpu_relax();
		if (n % 128)
			continue;
		t = now_ns();
		if (!t0)
			t0 = t;
		else if (t - t0 > b->timeout_ns || failed(b))
			return old;
		else if (t - t0 > b->pp_spin_ns)
			sched_yield();
	}
}

#define PP_STOP 0x80000000u

static void echo_segment(struct bench *b)
{
	struct pingpong *pp = b->pp;
	uint32_t last = atomic_load_explicit(&pp->pong, memory_order_relaxed);

	for (;;) {
		uint32_t v = pp_wait(b, &pp->ping, last, true, 0);

		if (v == last) {
			fail(b, "floor: no ping from the producer within %llu ms",
			     (unsigned long long)(b->timeout_ns / 1000000));
			return;
		}
		/* release: pairs with the producer's acquire in pp_wait */
		atomic_store_explicit(&pp->pong, v, memory_order_release);
		last = v;
		if (v & PP_STOP)
			return;
	}
}

/* Producer: one round trip, ns; 0 on timeout. */
static uint64_t pp_round(struct bench *b, uint32_t v)
{
	struct pingpong *pp = b->pp;
	uint64_t t0 = now_ns();

	/* release: pairs with the echo's acquire in pp_wait */
	atomic_store_explicit(&pp->ping, v, memory_order_release);
	if (pp_wait(b, &pp->pong, 0, false, v) != v) {
		fail(b, "floor: no pong from the device CPU within %llu ms",
		     (unsigned long long)(b->timeout_ns / 1000000));
		return 0;
	}
	return now_ns() - t0;
}

static void floor_segment(struct bench *b, unsigned round)
{
	struct pingpong *pp = b->pp;
	uint32_t *out = b->floor + (size_t)round * b->per_round;

	for (unsigned i = 0; i < WARMUP + b->per_round && !failed(b); i++) {
		uint64_t ns;

		pp->seq = (pp->seq + 1) & ~PP_STOP;
		ns = pp_round(b, pp->seq);
		if (i >= WARMUP)
			out[i - WARMUP] = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
	}
	if (!failed(b))
		pp_round(b, ++pp->seq | PP_STOP);
}

/* --- CMD_SYNC segments --------------------------------------------------- */

static int issue(struct bench *b, struct worker *w, struct hwt_cmdq *q)
{
	if (!b->o->batch)
		return hwt_cmdq_sync(q);
	return hwt_cmdq_issue(q, (const uint64_t (*)[2])w->cmds, b->o->batch, true);
}

static void sync_segment(struct bench *b, struct worker *w, int mode, unsigned round)
{
	struct hwt_cmdq *q = b->q[mode];
	uint32_t *out = b->lat[mode] + (size_t)round * b->per_round + (size_t)w->id * b->per_thread;
	int err = 0;

	for (unsigned i = 0; i < WARMUP && !err; i++)
		err = issue(b, w, q);
	w->start = now_ns();
	for (unsigned i = 0; i < b->per_thread && !err && !failed(b); i++) {
		uint64_t t0 = now_ns(), ns;

		err = issue(b, w, q);
		ns = now_ns() - t0;
		out[i] = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
	}
	w->end = now_ns();
	if (err)
		fail(b, "%s: CMD_SYNC failed: %s (thread %u, round %u)", mode_long[mode],
		     strerror(-err), w->id, round);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct bench *b = w->b;
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
static void run_job(struct bench *b, int job, int mode, unsigned round)
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
			cli_error("cmdq: a segment did not finish within %llu s; giving up",
				  (unsigned long long)limit);
			exit(1);
		}
	}
	pthread_mutex_unlock(&b->mu);
}

/* --- statistics ------------------------------------------------------------ */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of v[0..n) (sorted in place). */
/* Percentile p of n values, sorted in place first. */
static uint32_t sort_pct(uint32_t *v, size_t n, unsigned p)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u32);
	return v[(n * p + 99) / 100 ? (n * p + 99) / 100 - 1 : 0];
}


static double median_dbl(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct summary {
	uint32_t p50, p99, p999, max;
	uint64_t n;
	double per_s, cmds_per_s;
	double cmds_per_s_med; /* median over rounds */
};

struct report {
	struct summary s[M_N], floor;
	unsigned near, far;         /* rounds per regime */
	uint32_t near_floor, far_floor; /* median floor segment p50 per regime */
	uint32_t near_p50[M_N], far_p50[M_N];
	int faster;                 /* M_MSI, M_SEV, or -1 tie / not compared */
	bool tput;                  /* compared on cmds/s, else on sync p50 */
	double factor;              /* slower / faster, median of per-round ratios */
	unsigned agree;             /* rounds where the faster mode was faster */
	bool recommend_disable;
	char recommend[200];
	struct hwt_cmdq_info qinfo[M_N];
	struct hwt_smmu_dev_stats dstats[M_N];
	bool have_auto;
	int auto_err;
	struct hwt_cmdq_info auto_info;
};

static uint32_t median_of_rounds(const uint32_t *v, const bool *sel, unsigned rounds, bool want)
{
	uint32_t *tmp = malloc(sizeof(*tmp) * (rounds ? rounds : 1));
	size_t n = 0;
	uint32_t r;

	if (!tmp)
		return 0;
	for (unsigned i = 0; i < rounds; i++)
		if (sel[i] == want)
			tmp[n++] = v[i];
	r = sort_pct(tmp, n, 50);
	free(tmp);
	return r;
}

/* The summary of n sorted values. */
static void sorted_summary(const uint32_t *v, size_t n, struct summary *s)
{
	s->n = n;
	s->p50 = v[(n * 50 + 99) / 100 - 1];
	s->p99 = v[(n * 99 + 99) / 100 - 1];
	s->p999 = v[(n * 999 + 999) / 1000 - 1];
	s->max = v[n - 1];
}

static void summarize(struct bench *b, struct report *r)
{
	const struct opts *o = b->o;
	size_t total = (size_t)b->rounds * b->per_round;
	uint32_t fmin = UINT32_MAX;
	bool *far = calloc(b->rounds, sizeof(*far));
	double *ratio = calloc(b->rounds, sizeof(*ratio));

	/* per-round medians first (each segment is sorted in place) */
	for (unsigned k = 0; k <= M_N; k++) {
		uint32_t *v = k == M_N ? b->floor : b->lat[k];

		if (!v)
			continue;
		for (unsigned i = 0; i < b->rounds; i++)
			b->seg_p50[k][i] = sort_pct(v + (size_t)i * b->per_round, b->per_round, 50);
	}
	for (unsigned i = 0; i < b->rounds; i++)
		if (b->seg_p50[M_N][i] < fmin)
			fmin = b->seg_p50[M_N][i];
	for (unsigned i = 0; i < b->rounds && far; i++) {
		far[i] = b->seg_p50[M_N][i] > (uint64_t)FAR_FACTOR * fmin;
		r->far += far[i];
	}
	r->near = b->rounds - r->far;
	if (far) {
		r->near_floor = median_of_rounds(b->seg_p50[M_N], far, b->rounds, false);
		r->far_floor = median_of_rounds(b->seg_p50[M_N], far, b->rounds, true);
		for (int m = 0; m < M_N; m++) {
			if (!o->mode[m])
				continue;
			r->near_p50[m] = median_of_rounds(b->seg_p50[m], far, b->rounds, false);
			r->far_p50[m] = median_of_rounds(b->seg_p50[m], far, b->rounds, true);
		}
	}

	qsort(b->floor, total, sizeof(*b->floor), cmp_u32);
	sorted_summary(b->floor, total, &r->floor);
	for (int m = 0; m < M_N; m++) {
		struct summary *s = &r->s[m];
		uint64_t wall = 0;

		if (!o->mode[m])
			continue;
		qsort(b->lat[m], total, sizeof(*b->lat[m]), cmp_u32);
		sorted_summary(b->lat[m], total, s);
		for (unsigned i = 0; i < b->rounds; i++)
			wall += b->seg_wall[m][i];
		s->per_s = wall ? (double)total * 1e9 / (double)wall : 0;
		s->cmds_per_s = o->batch ? s->per_s * o->batch : s->per_s;
		for (unsigned i = 0; ratio && i < b->rounds; i++)
			ratio[i] = b->seg_wall[m][i] ? (double)b->per_round * (o->batch ? o->batch : 1) *
							       1e9 / (double)b->seg_wall[m][i]
						     : 0;
		s->cmds_per_s_med = ratio ? median_dbl(ratio, b->rounds) : 0;
		hwt_cmdq_info(b->q[m], &r->qinfo[m]);
		hwt_smmu_dev_get_stats(b->dev[m], &r->dstats[m]);
	}

	r->faster = -1;
	r->tput = o->batch || o->threads > 1;
	if (o->mode[M_MSI] && o->mode[M_SEV] && ratio) {
		unsigned sev_wins = 0;
		double med;

		/* per round, sev / msi: p50 latency, or time for the same work
		 * (inverse throughput) when batches or threads are in play */
		for (unsigned i = 0; i < b->rounds; i++) {
			uint64_t a = r->tput ? b->seg_wall[M_MSI][i] : b->seg_p50[M_MSI][i];
			uint64_t c = r->tput ? b->seg_wall[M_SEV][i] : b->seg_p50[M_SEV][i];

			ratio[i] = a ? (double)c / a : 1;
			sev_wins += c < a;
		}
		med = median_dbl(ratio, b->rounds); /* sev / msi */
		if (med < 1 - TIE) {
			r->faster = M_SEV, r->factor = 1 / med, r->agree = sev_wins;
		} else if (med > 1 + TIE) {
			r->faster = M_MSI, r->factor = med, r->agree = b->rounds - sev_wins;
		} else {
			r->factor = med >= 1 ? med : 1 / med;
			r->agree = med >= 1 ? b->rounds - sev_wins : sev_wins;
		}
		r->recommend_disable = r->faster == M_SEV;
		snprintf(r->recommend, sizeof(r->recommend), "%s",
			 r->faster == M_SEV ? "disable_msipolling=1 (CONS polling is faster here: "
					      "--disable-msipolling or HWTUNE_DISABLE_MSIPOLLING=1)"
			 : r->faster == M_MSI ? "disable_msipolling=0 (MSI polling is faster here)"
					      : "disable_msipolling=0 (no difference beyond 3%: keep the default)");
	} else {
		int m = o->mode[M_MSI] ? M_MSI : M_SEV;

		r->recommend_disable = m == M_SEV;
		snprintf(r->recommend, sizeof(r->recommend),
			 "only %s measured; use --poll both to compare", mode_long[m]);
	}
	free(far);
	free(ratio);
}

/* --- output ---------------------------------------------------------------- */

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static double ratio_of(uint32_t a, uint32_t f)
{
	return f ? (double)a / f : 0;
}

static void print_json(const struct bench *b, const struct report *r)
{
	const struct opts *o = b->o;

	printf("{\"cmdq\": {\"version\": ");
	json_str(hwt_version());
	printf(", \"producer_cpu\": %d, \"device_cpu\": %d, \"entries\": %u, \"threads\": %u, "
	       "\"batch\": %u, \"rounds\": %u, \"segment_syncs\": %u, \"handler\": \"%s\",\n",
	       b->w[0].cpu, b->dev_cpu, 1u << o->entries_log2, o->threads, o->batch, b->rounds,
	       b->per_round, o->noop ? "noop" : "smmu");
	printf("  \"disable_msipolling\": %s, \"disable_msipolling_source\": \"%s\",\n",
	       o->disable_msi ? "true" : "false", src_name[o->disable_src]);
	printf("  \"costs_ns\": {\"msi\": %u, \"sev\": %u, \"cmd\": %u},\n", o->cost[0], o->cost[1],
	       o->cost[2]);
	printf("  \"floor_ns\": {\"p50\": %u, \"p99\": %u, \"p999\": %u, \"max\": %u, "
	       "\"samples\": %llu},\n",
	       r->floor.p50, r->floor.p99, r->floor.p999, r->floor.max, (unsigned long long)r->floor.n);
	printf("  \"results\": [");
	for (int m = 0, first = 1; m < M_N; m++) {
		const struct summary *s = &r->s[m];
		const struct hwt_smmu_dev_stats *d = &r->dstats[m];

		if (!o->mode[m])
			continue;
		printf("%s\n    {\"poll\": \"%s\", \"threads\": %u, \"batch\": %u, \"syncs\": %llu, "
		       "\"sync_ns\": {\"p50\": %u, \"p99\": %u, \"p999\": %u, \"max\": %u}, "
		       "\"cmds_per_s\": %.0f, \"cmds_per_s_round_p50\": %.0f, "
		       "\"syncs_per_s\": %.0f, \"ratio_to_floor\": {\"p50\": %.3f, \"p99\": %.3f},\n"
		       "     \"near_p50_ns\": %u, \"far_p50_ns\": %u, \"msipolling\": %s, \"reason\": ",
		       first ? "" : ",", mode_name[m], o->threads, o->batch,
		       (unsigned long long)s->n, s->p50, s->p99, s->p999, s->max, s->cmds_per_s,
		       s->cmds_per_s_med, s->per_s,
		       ratio_of(s->p50, r->floor.p50), ratio_of(s->p99, r->floor.p99),
		       r->near_p50[m], r->far_p50[m], r->qinfo[m].msipolling ? "true" : "false");
		json_str(r->qinfo[m].reason);
		printf(",\n     \"device\": {\"cmds\": %llu, \"syncs\": %llu, \"msi_writes\": %llu, "
		       "\"sevs\": %llu, \"sleeps\": %llu}}",
		       (unsigned long long)d->cmds, (unsigned long long)d->syncs,
		       (unsigned long long)d->msi_writes, (unsigned long long)d->sevs,
		       (unsigned long long)d->sleeps);
		first = 0;
	}
	printf("],\n  \"regimes\": {\"near_rounds\": %u, \"far_rounds\": %u, \"near_floor_p50\": %u, "
	       "\"far_floor_p50\": %u},\n",
	       r->near, r->far, r->near_floor, r->far_floor);
	printf("  \"rounds_p50_ns\": [");
	for (unsigned i = 0; i < b->rounds; i++) {
		printf("%s[%u", i ? ", " : "", b->seg_p50[M_N][i]);
		for (int m = 0; m < M_N; m++)
			printf(", %u", o->mode[m] ? b->seg_p50[m][i] : 0);
		putchar(']');
	}
	printf("],\n");
	if (r->faster >= 0 || (o->mode[M_MSI] && o->mode[M_SEV]))
		printf("  \"comparison\": {\"metric\": \"%s\", \"faster\": \"%s\", \"factor\": %.3f, "
		       "\"agree\": %u, \"rounds\": %u},\n",
		       r->tput ? "cmds_per_s" : "sync_p50", r->faster < 0 ? "none" : mode_name[r->faster],
		       r->factor, r->agree, b->rounds);
	if (r->have_auto) {
		printf("  \"auto\": {\"error\": %d, \"msipolling\": %s, \"measured\": %s, "
		       "\"msi_ns\": %llu, \"sev_ns\": %llu, \"reason\": ",
		       r->auto_err, r->auto_info.msipolling ? "true" : "false",
		       r->auto_info.measured ? "true" : "false",
		       (unsigned long long)r->auto_info.msi_ns, (unsigned long long)r->auto_info.sev_ns);
		json_str(r->auto_info.reason);
		printf("},\n");
	}
	printf("  \"recommendation\": {\"disable_msipolling\": %s, \"reason\": ",
	       r->recommend_disable ? "true" : "false");
	json_str(r->recommend);
	printf("}}}\n");
}

static void print_human(const struct bench *b, const struct report *r)
{
	const struct opts *o = b->o;
	bool tput = o->batch || o->threads > 1;

	printf("hwtune cmdq: %s, %u thread%s, batch %u, queue %u entries, producer CPU %d, "
	       "device CPU %d%s\n",
	       tput ? "CMD_SYNC after each batch" : "empty-queue CMD_SYNC", o->threads,
	       o->threads > 1 ? "s" : "", o->batch, 1u << o->entries_log2, b->w[0].cpu, b->dev_cpu,
	       b->w[0].cpu == b->dev_cpu ? " (same CPU: only one CPU allowed)" : "");
	printf("  %u rounds interleaved (floor, then each mode), %u timed syncs per mode per round\n",
	       b->rounds, b->per_round);
	if (o->cost[0] || o->cost[1] || o->cost[2])
		printf("  device extra costs ON: msi %u ns, sev %u ns, cmd %u ns\n", o->cost[0],
		       o->cost[1], o->cost[2]);
	if (o->disable_src != SRC_DEFAULT)
		printf("  disable_msipolling=%d (from %s)\n", o->disable_msi,
		       o->disable_src == SRC_ENV ? "HWTUNE_DISABLE_MSIPOLLING" : "--disable-msipolling");
	printf("\n  %-22s %9s %9s %10s %10s", "", "p50 ns", "p99 ns", "p50/floor", "p99/floor");
	if (tput)
		printf(" %12s %12s", "cmds/s", "round p50");
	printf("\n  %-22s %9u %9u %10s %10s\n", "floor (line ping-pong)", r->floor.p50, r->floor.p99,
	       "1.00", "1.00");
	for (int m = 0; m < M_N; m++) {
		const struct summary *s = &r->s[m];

		if (!o->mode[m])
			continue;
		printf("  %-22s %9u %9u %10.2f %10.2f", mode_long[m], s->p50, s->p99,
		       ratio_of(s->p50, r->floor.p50), ratio_of(s->p99, r->floor.p99));
		if (tput)
			printf(" %12.0f %12.0f", s->cmds_per_s, s->cmds_per_s_med);
		putchar('\n');
	}
	printf("\n  regimes: %u round%s near (floor p50 %u ns)", r->near, r->near == 1 ? "" : "s",
	       r->near_floor);
	if (r->far)
		printf(", %u far (floor p50 %u ns)", r->far, r->far_floor);
	putchar('\n');
	for (int m = 0; m < M_N; m++) {
		if (!o->mode[m] || !r->far || !r->near)
			continue;
		printf("    %-14s near %u ns (%.2fx floor), far %u ns (%.2fx floor)\n", mode_long[m],
		       r->near_p50[m], ratio_of(r->near_p50[m], r->near_floor), r->far_p50[m],
		       ratio_of(r->far_p50[m], r->far_floor));
	}
	if (o->mode[M_MSI] && o->mode[M_SEV]) {
		if (r->faster < 0)
			printf("  faster (%s): neither (within %.0f%%: %.3fx, median of per-round "
			       "ratios)\n", r->tput ? "cmds/s" : "sync p50", TIE * 100, r->factor);
		else
			printf("  faster (%s): %s, by %.2fx (median of per-round ratios; %u of %u rounds "
			       "agree)\n", r->tput ? "cmds/s" : "sync p50", mode_long[r->faster],
			       r->factor, r->agree, b->rounds);
	}
	if (r->have_auto) {
		if (r->auto_err)
			printf("  auto: measurement failed: %s\n", strerror(-r->auto_err));
		printf("  auto: queue chose %s: %s\n", r->auto_info.msipolling ? "MSI polling" : "CONS polling",
		       r->auto_info.reason);
	}
	printf("  recommendation: %s\n", r->recommend);
}

/* --- setup ----------------------------------------------------------------- */

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
		FAR_FACTOR);
}

static int parse(int argc, char **argv, struct opts *o)
{
	struct hwt_cmdq_options qo;
	bool flag_disable = false, seg_given = false;
	uint64_t v;

	memset(o, 0, sizeof(*o));
	o->threads = 1;
	o->syncs = 20000;
	o->entries_log2 = 8;
	o->device_cpu = o->producer_cpu = -1;
	o->timeout_ms = 1000;
	o->mode[M_MSI] = o->mode[M_SEV] = true;
	if (hwt_cmdq_options_default(&qo) < 0) {
		cli_error("HWTUNE_DISABLE_MSIPOLLING: invalid value '%s' (expected 0 or 1)",
			  getenv("HWTUNE_DISABLE_MSIPOLLING"));
		return -1;
	}
	if (qo.disable_msipolling)
		o->disable_msi = true, o->disable_src = SRC_ENV;

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
			o->json = true;
		} else if (!strcmp(a, "--auto")) {
			o->auto_poll = true;
		} else if (!strcmp(a, "--disable-msipolling")) {
			flag_disable = true;
		} else if (OPT("--poll")) {
			if (err)
				return -1;
			o->poll_given = true;
			o->mode[M_MSI] = !strcmp(val, "msi") || !strcmp(val, "both");
			o->mode[M_SEV] = !strcmp(val, "sev") || !strcmp(val, "both");
			if (!o->mode[M_MSI] && !o->mode[M_SEV]) {
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
			o->seg = (unsigned)v, seg_given = true;
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

	if (flag_disable) {
		if (o->poll_given && o->mode[M_MSI]) {
			cli_error("--disable-msipolling contradicts --poll %s (MSI polling is disabled)",
				  o->mode[M_SEV] ? "both" : "msi");
			return -1;
		}
		o->disable_msi = true, o->disable_src = SRC_FLAG;
	}
	/* disable_msipolling without --poll: measure what it selects.  An
	 * explicit --poll beats the environment. */
	if (o->disable_msi && !o->poll_given)
		o->mode[M_MSI] = false;
	if (o->batch + 1 > 1u << o->entries_log2) {
		cli_error("--batch: invalid value '%u' (a batch and its CMD_SYNC must fit the queue of "
			  "%u entries)", o->batch, 1u << o->entries_log2);
		return -1;
	}
	if (!seg_given) {
		uint64_t s = o->syncs / 10;

		o->seg = s < 1 ? 1 : s > SEG_DEFAULT_MAX ? SEG_DEFAULT_MAX : (unsigned)s;
	}
	return 0;
}

/* Choose CPUs: device = --device-cpu or the last allowed; producers on the
 * others (or on the device CPU when it is the only one). */
static int pick_cpus(const struct opts *o, struct bench *b, struct hwt_cpus *prod)
{
	struct hwt_cpus allowed = HWT_CPUS_INIT;
	int err = hwt_cpu_allowed(&allowed);

	if (err < 0 || !allowed.n) {
		cli_error("cmdq: cannot read the allowed CPUs: %s", strerror(err < 0 ? -err : EINVAL));
		hwt_cpus_free(&allowed);
		return 1;
	}
	if (o->device_cpu >= 0 && !hwt_cpus_has(&allowed, o->device_cpu)) {
		cli_error("--device-cpu: invalid value '%d' (not an allowed CPU)", o->device_cpu);
		hwt_cpus_free(&allowed);
		return CLI_EXIT_USAGE;
	}
	if (o->producer_cpu >= 0 && !hwt_cpus_has(&allowed, o->producer_cpu)) {
		cli_error("--producer-cpu: invalid value '%d' (not an allowed CPU)", o->producer_cpu);
		hwt_cpus_free(&allowed);
		return CLI_EXIT_USAGE;
	}
	b->dev_cpu = o->device_cpu >= 0 ? o->device_cpu : allowed.cpu[allowed.n - 1];
	for (unsigned i = 0; i < allowed.n; i++)
		if (allowed.cpu[i] != b->dev_cpu && hwt_cpus_add(prod, allowed.cpu[i]) < 0)
			err = -ENOMEM;
	if (!prod->n && hwt_cpus_add(prod, b->dev_cpu) < 0)
		err = -ENOMEM;
	hwt_cpus_free(&allowed);
	if (err < 0) {
		cli_error("cmdq: out of memory");
		return 1;
	}
	return 0;
}

static int make_queue(const struct opts *o, int dev_cpu, bool disable, bool auto_poll,
		      struct hwt_smmu_dev **dev, struct hwt_cmdq **q)
{
	struct hwt_smmu_dev_config dc;
	struct hwt_cmdq_options qo;
	int err;

	hwt_smmu_dev_config_default(&dc);
	dc.idr0 = HWT_SMMU_IDR0_MSI | HWT_SMMU_IDR0_SEV | HWT_SMMU_IDR0_COHACC;
	dc.cmdqs = o->entries_log2 > dc.cmdqs ? o->entries_log2 : dc.cmdqs;
	dc.cpu = dev_cpu;
	dc.msi_cost_ns = o->cost[0];
	dc.sev_cost_ns = o->cost[1];
	dc.cmd_cost_ns = o->cost[2];
	if (o->noop)
		dc.handler = noop_handler;
	err = hwt_smmu_dev_create(dev, &dc);
	if (err)
		return err;
	hwt_cmdq_options_default(&qo);
	qo.entries_log2 = o->entries_log2;
	qo.disable_msipolling = disable;
	qo.auto_poll = auto_poll;
	qo.timeout_ns = o->timeout_ms * 1000000u;
	err = hwt_cmdq_create(q, *dev, &qo);
	if (!err)
		err = hwt_smmu_dev_start(*dev);
	return err;
}

static void drop_queue(struct hwt_smmu_dev *dev, struct hwt_cmdq *q)
{
	if (dev)
		hwt_smmu_dev_stop(dev);
	hwt_cmdq_destroy(q);
	hwt_smmu_dev_destroy(dev);
}

/* Pin the calling thread (best effort; pinning is checked at create). */
static int pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void run_auto(const struct opts *o, int dev_cpu, struct report *r)
{
	struct hwt_smmu_dev *dev = NULL;
	struct hwt_cmdq *q = NULL;
	int err = make_queue(o, dev_cpu, o->disable_msi, true, &dev, &q);

	r->have_auto = true;
	if (!err) {
		err = hwt_cmdq_calibrate(q);
		hwt_cmdq_info(q, &r->auto_info);
	} else {
		snprintf(r->auto_info.reason, sizeof(r->auto_info.reason), "setup failed: %s",
			 strerror(-err));
	}
	r->auto_err = err == -EOPNOTSUPP ? 0 : err;
	drop_queue(dev, q);
}

static void build_cmds(struct worker *w, unsigned batch)
{
	for (unsigned i = 0; i < batch; i++) {
		struct hwt_smmu_cmd c = { .op = HWT_SMMU_OP_TLBI_NH_VA };

		hwt_smmu_cmd_set(&c, HWT_SMMU_F_ASID, w->id + 1);
		hwt_smmu_cmd_set(&c, HWT_SMMU_F_VMID, 0);
		hwt_smmu_cmd_set(&c, HWT_SMMU_F_LEAF, 1);
		hwt_smmu_cmd_set(&c, HWT_SMMU_F_ADDR, (uint64_t)(0x10000 + i) << 12);
		if (hwt_smmu_encode(&c, w->cmds[i]) < 0) {
			/* cannot happen with these fields; keep a valid command */
			w->cmds[i][0] = HWT_SMMU_OP_TLBI_NH_ALL;
			w->cmds[i][1] = 0;
		}
	}
}

/* Runs the benchmark; the recommendation is also copied to reco (if any). */
int cmdq_run(int argc, char **argv, char *reco, size_t len)
{
	struct opts o;
	struct bench b;
	struct report r;
	struct hwt_cpus prod = HWT_CPUS_INIT;
	unsigned started = 0;
	int rc = 0, err;

	err = parse(argc, argv, &o);
	if (err)
		return err > 0 ? 0 : CLI_EXIT_USAGE;
	memset(&b, 0, sizeof(b));
	memset(&r, 0, sizeof(r));
	b.o = &o;
	b.timeout_ns = o.timeout_ms * 1000000u;
	rc = pick_cpus(&o, &b, &prod);
	if (rc)
		goto out;
	pthread_mutex_init(&b.mu, NULL);
	pthread_mutex_init(&b.err_mu, NULL);
	pthread_cond_init(&b.start_cv, NULL);
	pthread_cond_init(&b.done_cv, NULL);

	b.per_thread = (o.seg + o.threads - 1) / o.threads;
	b.per_round = b.per_thread * o.threads;
	b.rounds = (unsigned)((o.syncs + b.per_round - 1) / b.per_round);
	b.nworkers = o.threads + 1;
	b.w = calloc(b.nworkers, sizeof(*b.w));
	b.pp = aligned_alloc(64, sizeof(*b.pp));
	b.floor = malloc(sizeof(uint32_t) * b.rounds * b.per_round);
	for (int k = 0; k <= M_N; k++)
		b.seg_p50[k] = calloc(b.rounds, sizeof(uint32_t));
	for (int m = 0; m < M_N; m++)
		if (o.mode[m])
			b.lat[m] = calloc((size_t)b.rounds * b.per_round, sizeof(uint32_t));
	for (int m = 0; m < M_N; m++)
		b.seg_wall[m] = calloc(b.rounds, sizeof(uint64_t));
	if (!b.w || !b.pp || !b.floor || !b.seg_p50[0] || !b.seg_p50[1] || !b.seg_p50[2] ||
	    !b.seg_wall[M_MSI] || !b.seg_wall[M_SEV] || (o.mode[M_MSI] && !b.lat[M_MSI]) ||
	    (o.mode[M_SEV] && !b.lat[M_SEV])) {
		cli_error("cmdq: out of memory");
		rc = 1;
		goto out;
	}
	memset(b.pp, 0, sizeof(*b.pp));

	/* The main thread only coordinates; keep it off the device CPU. */
	pin_self(o.producer_cpu >= 0 ? o.producer_cpu : prod.cpu[0]);

	if (o.auto_poll)
		run_auto(&o, b.dev_cpu, &r);
	for (int m = 0; m < M_N; m++) {
		if (!o.mode[m])
			continue;
		err = make_queue(&o, b.dev_cpu, m == M_SEV, false, &b.dev[m], &b.q[m]);
		if (err) {
			cli_error("cmdq: cannot set up the %s device and queue: %s", mode_long[m],
				  strerror(-err));
			rc = 1;
			goto out;
		}
	}

	for (unsigned i = 0; i < b.nworkers; i++) {
		struct worker *w = &b.w[i];
		pthread_attr_t attr;
		cpu_set_t set;

		w->b = &b;
		w->id = i;
		if (i == o.threads)
			w->cpu = b.dev_cpu; /* the echo thread */
		else if (i == 0 && o.producer_cpu >= 0)
			w->cpu = o.producer_cpu;
		else
			w->cpu = prod.cpu[i % prod.n];
		if (i < o.threads && o.batch) {
			w->cmds = calloc(o.batch, sizeof(*w->cmds));
			if (!w->cmds) {
				cli_error("cmdq: out of memory");
				rc = 1;
				goto out;
			}
			build_cmds(w, o.batch);
		}
		CPU_ZERO(&set);
		CPU_SET(w->cpu, &set);
		pthread_attr_init(&attr);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		err = pthread_create(&w->thread, &attr, worker_main, w);
		pthread_attr_destroy(&attr);
		if (err) {
			cli_error("cmdq: cannot start thread %u: %s", i, strerror(err));
			rc = 1;
			goto out;
		}
		started++;
	}
	b.pp_spin_ns = b.w[0].cpu == b.dev_cpu ? 0 : SPIN_NS;

	for (unsigned round = 0; round < b.rounds && !failed(&b); round++) {
		run_job(&b, JOB_FLOOR, 0, round);
		for (int k = 0; k < M_N && !failed(&b); k++) {
			int m = round % 2 ? M_N - 1 - k : k; /* A B, B A, ... */
			uint64_t s = UINT64_MAX, e = 0;

			if (!o.mode[m])
				continue;
			run_job(&b, JOB_SYNC, m, round);
			for (unsigned i = 0; i < o.threads; i++) {
				s = b.w[i].start < s ? b.w[i].start : s;
				e = b.w[i].end > e ? b.w[i].end : e;
			}
			b.seg_wall[m][round] = e - s;
		}
	}
	if (failed(&b)) {
		cli_error("cmdq: %s", b.err);
		rc = 1;
		goto out;
	}
	summarize(&b, &r);
	if (reco)
		snprintf(reco, len, "%s", r.recommend);
	if (o.json)
		print_json(&b, &r);
	else
		print_human(&b, &r);
out:
	if (started) {
		run_job(&b, JOB_QUIT, 0, 0);
		for (unsigned i = 0; i < started; i++)
			pthread_join(b.w[i].thread, NULL);
	}
	for (int m = 0; m < M_N; m++) {
		drop_queue(b.dev[m], b.q[m]);
		free(b.lat[m]);
		free(b.seg_wall[m]);
	}
	for (unsigned i = 0; b.w && i < b.nworkers; i++)
		free(b.w[i].cmds);
	for (int k = 0; k <= M_N; k++)
		free(b.seg_p50[k]);
	free(b.w);
	free(b.pp);
	free(b.floor);
	hwt_cpus_free(&prod);
	return rc;
}

int cmd_cmdq(int argc, char **argv)
{
	return cmdq_run(argc, argv, NULL, 0);
}
