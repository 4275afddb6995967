/* SPDX-License-Identifier: MIT */
/*
 * hwt_cmdq against peer queues, producer to consumer on different CPUs, as
 * JSON on stdout (a table on stderr).  Every element is one 16-byte command
 * (dw0 = TLBI_NH_VA opcode | producer id << 32, dw1 = sequence number); every
 * consumer calls a no-op handler through a pointer per element.
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
 * threads created and pinned, warm-up, drain, timed run of --segment-ms,
 * drain.  Elements/s = elements issued in the timed run / (go .. drained).
 * Every wait is bounded (spin, then sched_yield; --timeout-ms).
 * Never run by make check.
 *
 *   bench_cmdq [--segment-ms N] [--rounds N] [--bursts 1,8,32] [--producers N]
 *              [--group flow|sync|both] [--entries-log2 N] [--cons-batch N]
 *              [--producer-cpu N] [--consumer-cpu N] [--timeout-ms N]
 */
#include <hwtune/hwtune.h>

#include "peers/peers.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_PROD 8
#define MAX_BURST 64
#define CONS_BURST 32 /* ring consumers dequeue up to this per call */
#define MAX_IMPLS 12
#define MAX_BURSTS 8
#define SPINS 2000 /* relax hints between yields */
#define FLOOR_ITERS 400
#define FLOOR_CHUNKS 5
#define OPC_TLBI_NH_VA 0x12u

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Bounded wait: call when the condition is still false; false once
 * timeout_ns passed since the first yield. */
struct wait {
	unsigned spins;
	uint64_t deadline;
};

static bool wait_more(struct wait *w, uint64_t timeout_ns)
{
	uint64_t t;

	if (++w->spins < SPINS) {
		hwt_cpu_relax();
		return true;
	}
	w->spins = 0;
	sched_yield();
	t = now_ns();
	if (!w->deadline)
		w->deadline = t + timeout_ns;
	return t < w->deadline;
}

static int noop_handler(void *ctx, const uint64_t dw[2])
{
	(void)ctx, (void)dw;
	return HWT_SMMU_CERROR_NONE;
}

enum group { G_FLOW, G_SYNC };
static const char *const group_name[] = { "flow", "sync" };

struct impl {
	char name[32];
	enum group group;
	const struct bench_queue_ops *ops; /* NULL: hwt_cmdq */
	struct hwt_cmdq *q;
	struct hwt_smmu_dev *dev;
	bool sync; /* hwt: CMD_SYNC per burst */
	void *ring;
	char what[512];
	double *rate; /* [burst index][round] */
};

struct done_line {
	_Alignas(128) _Atomic uint64_t v; /* consumer's last seq of a producer */
};

struct seg;

struct prod {
	struct seg *s;
	unsigned id;
	int cpu;
	uint64_t seq, timed; /* bursts issued in the timed run */
	int err;
	pthread_t th;
	_Alignas(64) uint64_t cmds[MAX_BURST][2];
};

struct seg {
	struct impl *im;
	unsigned burst, nprod, warm;
	bool awaited;
	uint64_t timeout_ns;
	int (*handler)(void *ctx, const uint64_t dw[2]);
	_Alignas(128) _Atomic int go;
	_Alignas(128) _Atomic int stop; /* producers stop */
	_Atomic int cons_stop;
	_Atomic int failed;
	_Atomic int bad; /* a ring consumer saw a sequence gap */
	_Atomic unsigned ready;
	struct done_line done[MAX_PROD];
	struct prod p[MAX_PROD];
};

struct opts {
	unsigned segment_ms, rounds, nprod, log2, cons_batch, timeout_ms;
	unsigned bursts[MAX_BURSTS], nbursts;
	bool flow, sync;
	int prod_cpu, cons_cpu;
};

static bool failed(struct seg *s)
{
	return atomic_load_explicit(&s->failed, memory_order_relaxed);
}

static void fail(struct seg *s)
{
	atomic_store_explicit(&s->failed, 1, memory_order_relaxed);
}

static int start_pinned(pthread_t *th, int cpu, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	cpu_set_t set;
	int err;

	pthread_attr_init(&attr);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	err = pthread_create(th, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return -err;
}

static int pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* --- ring consumer ------------------------------------------------------ */

static void *ring_consumer(void *arg)
{
	struct seg *s = arg;
	const struct bench_queue_ops *ops = s->im->ops;
	struct bench_elem buf[CONS_BURST];
	uint64_t last[MAX_PROD] = { 0 };
	unsigned spins = 0;

	for (;;) {
		unsigned n = ops->dequeue(s->im->ring, buf, CONS_BURST), seen = 0;

		if (!n) {
			/* stop comes after the drain: nothing is left behind */
			if (atomic_load_explicit(&s->cons_stop, memory_order_acquire) || failed(s))
				break;
			if (!ops->blocks && ++spins >= SPINS) {
				spins = 0;
				sched_yield();
			} else if (!ops->blocks) {
				hwt_cpu_relax();
			}
			continue;
		}
		spins = 0;
		for (unsigned i = 0; i < n; i++) {
			unsigned id = (unsigned)(buf[i].dw[0] >> 32) & (MAX_PROD - 1);

			s->handler(NULL, buf[i].dw);
			if (buf[i].dw[1] != last[id] + 1) { /* lost, doubled or reordered */
				atomic_store_explicit(&s->bad, 1, memory_order_relaxed);
				fail(s);
			}
			last[id] = buf[i].dw[1];
			seen |= 1u << id;
		}
		for (unsigned id = 0; seen; id++, seen >>= 1)
			if (seen & 1)
				atomic_store_explicit(&s->done[id].v, last[id], memory_order_release);
	}
	return NULL;
}

/* --- producers ---------------------------------------------------------- */

static int put_burst(struct prod *p)
{
	struct seg *s = p->s;
	struct impl *im = s->im;
	unsigned b = s->burst, k = 0;
	struct wait w = { 0, 0 };

	for (unsigned i = 0; i < b; i++)
		p->cmds[i][1] = ++p->seq;
	if (!im->ops)
		return hwt_cmdq_issue(im->q, (const uint64_t(*)[2])p->cmds, b, im->sync);
	while (k < b) {
		unsigned n = im->ops->enqueue(im->ring, (const struct bench_elem *)p->cmds[k], b - k);

		k += n;
		if (k < b && !n &&
		    (im->ops->blocks ? ++w.spins > s->timeout_ns / 1000000 /* 1 ms waits */
				     : !wait_more(&w, s->timeout_ns)))
			return -ETIMEDOUT;
		if (failed(s))
			return -ECANCELED;
	}
	if (s->awaited) {
		w = (struct wait){ 0, 0 };
		while (atomic_load_explicit(&s->done[p->id].v, memory_order_acquire) < p->seq)
			if (!wait_more(&w, s->timeout_ns))
				return -ETIMEDOUT;
	}
	return 0;
}

static void *producer(void *arg)
{
	struct prod *p = arg;
	struct seg *s = p->s;
	struct wait w = { 0, 0 };
	uint64_t n = 0;

	for (unsigned i = 0; i < s->warm && !p->err; i++)
		p->err = put_burst(p);
	atomic_fetch_add_explicit(&s->ready, 1, memory_order_release);
	if (p->err) {
		fail(s);
		return NULL;
	}
	while (!atomic_load_explicit(&s->go, memory_order_acquire))
		if (failed(s) || !wait_more(&w, s->timeout_ns)) {
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

/* Everything issued so far has been consumed. */
static int drain(struct seg *s)
{
	struct impl *im = s->im;

	if (!im->ops)
		return im->sync ? 0 : hwt_cmdq_sync(im->q);
	for (unsigned i = 0; i < s->nprod; i++) {
		struct wait w = { 0, 0 };

		while (atomic_load_explicit(&s->done[i].v, memory_order_acquire) < s->p[i].seq)
			if (failed(s) || !wait_more(&w, s->timeout_ns))
				return -ETIMEDOUT;
	}
	return 0;
}

struct bench {
	struct opts o;
	int prod_cpu[MAX_PROD], cons_cpu;
	struct seg *s;
	struct impl im[MAX_IMPLS];
	unsigned nimpl;
	struct hwt_smmu_dev *dev[2]; /* MSI polling, CONS polling */
	struct hwt_cmdq *q[2];
	double *floor_ns; /* [group][burst][round] */
};

/* One segment of im at burst b: elements/s, or a negative errno. */
static int segment(struct bench *bn, struct impl *im, unsigned b, double *rate)
{
	struct seg *s = bn->s;
	pthread_t cons;
	bool have_cons = false;
	struct wait w = { 0, 0 };
	uint64_t t0, t1, total = 0;
	struct timespec d = { (time_t)(bn->o.segment_ms / 1000),
			      (long)(bn->o.segment_ms % 1000) * 1000000 };
	int err = 0;
	unsigned started = 0;
	struct hwt_smmu_dev_stats st0, st1;

	s->im = im;
	s->burst = b;
	s->nprod = bn->o.nprod;
	s->awaited = im->group == G_SYNC;
	s->warm = (2048 + b - 1) / b;
	s->timeout_ns = (uint64_t)bn->o.timeout_ms * 1000000u;
	s->handler = noop_handler;
	/* threads start after these stores (pthread_create orders them) */
	atomic_store_explicit(&s->go, 0, memory_order_relaxed);
	atomic_store_explicit(&s->stop, 0, memory_order_relaxed);
	atomic_store_explicit(&s->cons_stop, 0, memory_order_relaxed);
	atomic_store_explicit(&s->failed, 0, memory_order_relaxed);
	atomic_store_explicit(&s->bad, 0, memory_order_relaxed);
	atomic_store_explicit(&s->ready, 0, memory_order_relaxed);
	for (unsigned i = 0; i < MAX_PROD; i++)
		atomic_store_explicit(&s->done[i].v, 0, memory_order_relaxed);
	if (!im->ops)
		hwt_smmu_dev_get_stats(im->dev, &st0);
	if (im->ops) {
		err = start_pinned(&cons, bn->cons_cpu, ring_consumer, s);
		if (err)
			return err;
		have_cons = true;
	}
	for (unsigned i = 0; i < s->nprod; i++) {
		struct prod *p = &s->p[i];

		p->s = s;
		p->id = i;
		p->cpu = bn->prod_cpu[i];
		p->seq = p->timed = 0;
		p->err = 0;
		for (unsigned k = 0; k < MAX_BURST; k++)
			p->cmds[k][0] = OPC_TLBI_NH_VA | (uint64_t)i << 32;
		err = start_pinned(&p->th, p->cpu, producer, p);
		if (err) {
			fail(s);
			break;
		}
		started++;
	}
	while (!err && atomic_load_explicit(&s->ready, memory_order_acquire) < s->nprod)
		if (failed(s) || !wait_more(&w, s->timeout_ns))
			err = -ETIMEDOUT;
	if (!err && !failed(s))
		err = drain(s); /* the warm-up */
	t0 = now_ns();
	if (err)
		fail(s);
	else
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
		err = drain(s);
	t1 = now_ns();
	atomic_store_explicit(&s->cons_stop, 1, memory_order_release);
	if (err)
		fail(s);
	if (have_cons)
		pthread_join(cons, NULL);
	if (!err && atomic_load_explicit(&s->bad, memory_order_relaxed))
		err = -EPROTO;
	if (!err && !im->ops) {
		uint64_t issued = 0;

		hwt_smmu_dev_get_stats(im->dev, &st1);
		for (unsigned i = 0; i < s->nprod; i++)
			issued += s->p[i].seq;
		if (st1.cmds - st0.cmds - (st1.syncs - st0.syncs) != issued)
			err = -EPROTO; /* the device executed another count */
	}
	*rate = err ? 0 : (double)total * 1e9 / (double)(t1 - t0);
	return err;
}

/* --- floor: two-line ping-pong between producer 0's CPU and the consumer's */

struct pp {
	_Alignas(128) _Atomic uint64_t ping;
	_Alignas(128) _Atomic uint64_t pong;
	_Atomic int fail;
	uint64_t timeout_ns;
};

static void *echo(void *arg)
{
	struct pp *pp = arg;

	for (uint64_t i = 1; i <= FLOOR_ITERS * FLOOR_CHUNKS; i++) {
		struct wait w = { 0, 0 };

		while (atomic_load_explicit(&pp->ping, memory_order_acquire) != i)
			if (atomic_load_explicit(&pp->fail, memory_order_relaxed) ||
			    !wait_more(&w, pp->timeout_ns)) {
				atomic_store_explicit(&pp->fail, 1, memory_order_relaxed);
				return NULL;
			}
		atomic_store_explicit(&pp->pong, i, memory_order_release);
	}
	return NULL;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(const double *v, unsigned n)
{
	double t[256];

	if (!n)
		return 0;
	if (n > 256)
		n = 256;
	memcpy(t, v, n * sizeof(*t));
	qsort(t, n, sizeof(*t), cmp_d);
	return n & 1 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

/* Round trip in ns (median of chunk means), 0 on failure. */
static double floor_ns(struct bench *bn)
{
	static struct pp pp;
	double chunk[FLOOR_CHUNKS];
	pthread_t th;
	uint64_t i = 0;

	atomic_store_explicit(&pp.ping, 0, memory_order_relaxed);
	atomic_store_explicit(&pp.pong, 0, memory_order_relaxed);
	atomic_store_explicit(&pp.fail, 0, memory_order_relaxed);
	pp.timeout_ns = (uint64_t)bn->o.timeout_ms * 1000000u;
	if (start_pinned(&th, bn->cons_cpu, echo, &pp))
		return 0;
	for (unsigned c = 0; c < FLOOR_CHUNKS; c++) {
		uint64_t t0 = now_ns();

		for (unsigned k = 0; k < FLOOR_ITERS; k++) {
			struct wait w = { 0, 0 };

			atomic_store_explicit(&pp.ping, ++i, memory_order_release);
			while (atomic_load_explicit(&pp.pong, memory_order_acquire) != i)
				if (atomic_load_explicit(&pp.fail, memory_order_relaxed) ||
				    !wait_more(&w, pp.timeout_ns)) {
					atomic_store_explicit(&pp.fail, 1, memory_order_relaxed);
					pthread_join(th, NULL);
					return 0;
				}
		}
		chunk[c] = (double)(now_ns() - t0) / FLOOR_ITERS;
	}
	pthread_join(th, NULL);
	return median(chunk, FLOOR_CHUNKS);
}

/* --- setup ---------------------------------------------------------------- */

static int make_hwt(struct bench *bn, bool cons_poll, struct hwt_smmu_dev **dev,
		    struct hwt_cmdq **q)
{
	struct hwt_smmu_dev_config dc;
	struct hwt_cmdq_options qo;
	struct hwt_cmdq_info info;
	int err;

	hwt_smmu_dev_config_default(&dc);
	dc.idr0 = HWT_SMMU_IDR0_MSI | HWT_SMMU_IDR0_SEV | HWT_SMMU_IDR0_COHACC;
	if (bn->o.log2 > dc.cmdqs)
		dc.cmdqs = bn->o.log2;
	dc.cpu = bn->cons_cpu;
	dc.cons_batch = bn->o.cons_batch;
	dc.handler = noop_handler;
	err = hwt_smmu_dev_create(dev, &dc);
	if (err)
		return err;
	hwt_cmdq_options_default(&qo); /* -EINVAL for a bad env value: overridden below */
	qo.entries_log2 = bn->o.log2;
	qo.disable_msipolling = cons_poll;
	qo.auto_poll = false;
	qo.timeout_ns = (uint64_t)bn->o.timeout_ms * 1000000u;
	err = hwt_cmdq_create(q, *dev, &qo);
	if (!err)
		err = hwt_smmu_dev_start(*dev);
	if (!err) {
		hwt_cmdq_info(*q, &info);
		if (info.msipolling == cons_poll)
			err = -EINVAL;
	}
	return err;
}

static struct impl *add_impl(struct bench *bn, const char *name, enum group g,
			     const struct bench_queue_ops *ops)
{
	struct impl *im = &bn->im[bn->nimpl++];

	snprintf(im->name, sizeof(im->name), "%s", name);
	im->group = g;
	im->ops = ops;
	im->rate = calloc((size_t)bn->o.nbursts * bn->o.rounds, sizeof(*im->rate));
	if (!im->rate) {
		fprintf(stderr, "bench_cmdq: out of memory\n");
		exit(1);
	}
	return im;
}

static void add_peers(struct bench *bn, enum group g)
{
	static const struct bench_queue_ops *const peers[] = {
#ifdef HAVE_DPDK
		&bench_dpdk_ops,
#endif
#ifdef HAVE_CK
		&bench_ck_ops,
#endif
		&bench_mutex_ops,
	};

	for (size_t i = 0; i < sizeof(peers) / sizeof(peers[0]); i++) {
		char name[32];
		struct impl *im;

		snprintf(name, sizeof(name), "%s%s", peers[i]->name, g == G_SYNC ? "_await" : "");
		im = add_impl(bn, name, g, peers[i]);
		snprintf(im->what, sizeof(im->what),
			 "%s; consumer thread: dequeue up to %u, no-op handler per element, "
			 "publishes each producer's last seq (release)%s",
			 peers[i]->detail, CONS_BURST,
			 g == G_SYNC ? "; producer waits for its burst's last seq after each burst"
				     : "; completion not awaited, drain timed");
		if (peers[i]->create(&im->ring, bn->o.log2)) {
			fprintf(stderr, "bench_cmdq: %s: create failed\n", peers[i]->name);
			exit(1);
		}
	}
}

/* --- output ---------------------------------------------------------------- */

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		putchar(*s);
	}
	putchar('"');
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

static unsigned arg_u(const char *opt, const char *v, unsigned lo, unsigned hi)
{
	char *end;
	unsigned long x;

	errno = 0;
	x = v ? strtoul(v, &end, 10) : 0;
	if (!v || !*v || *end || errno || x < lo || x > hi) {
		fprintf(stderr, "bench_cmdq: %s: invalid value '%s' (expected %u..%u)\n", opt,
			v ? v : "", lo, hi);
		exit(2);
	}
	return (unsigned)x;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: bench_cmdq [--segment-ms N] [--rounds N] [--bursts 1,8,32] "
		   "[--producers N]\n"
		   "                  [--group flow|sync|both] [--entries-log2 N] "
		   "[--cons-batch N]\n"
		   "                  [--producer-cpu N] [--consumer-cpu N] [--timeout-ms N]\n");
}

static void parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){ .segment_ms = 15, .rounds = 7, .nprod = 1, .log2 = 8,
			    .cons_batch = 1, .timeout_ms = 1000, .bursts = { 1, 8, 32 },
			    .nbursts = 3, .flow = true, .sync = true,
			    .prod_cpu = -1, .cons_cpu = -1 };
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		const char *a = argv[i];

		if (!strcmp(a, "--segment-ms"))
			o->segment_ms = arg_u(a, v, 1, 60000), i++;
		else if (!strcmp(a, "--rounds"))
			o->rounds = arg_u(a, v, 1, 256), i++;
		else if (!strcmp(a, "--producers"))
			o->nprod = arg_u(a, v, 1, MAX_PROD), i++;
		else if (!strcmp(a, "--entries-log2"))
			o->log2 = arg_u(a, v, HWT_CMDQ_MIN_SHIFT, 16), i++;
		else if (!strcmp(a, "--cons-batch"))
			o->cons_batch = arg_u(a, v, 1, HWT_SMMU_DEV_CONS_BATCH_MAX), i++;
		else if (!strcmp(a, "--timeout-ms"))
			o->timeout_ms = arg_u(a, v, 1, 60000), i++;
		else if (!strcmp(a, "--producer-cpu"))
			o->prod_cpu = (int)arg_u(a, v, 0, HWT_CPU_ID_MAX), i++;
		else if (!strcmp(a, "--consumer-cpu"))
			o->cons_cpu = (int)arg_u(a, v, 0, HWT_CPU_ID_MAX), i++;
		else if (!strcmp(a, "--group") && v) {
			o->flow = !strcmp(v, "flow") || !strcmp(v, "both");
			o->sync = !strcmp(v, "sync") || !strcmp(v, "both");
			if (!o->flow && !o->sync) {
				fprintf(stderr, "bench_cmdq: --group: invalid value '%s' "
						"(expected flow, sync or both)\n", v);
				exit(2);
			}
			i++;
		} else if (!strcmp(a, "--bursts") && v) {
			char buf[128], *tok, *save = NULL;

			snprintf(buf, sizeof(buf), "%s", v);
			o->nbursts = 0;
			for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				if (o->nbursts == MAX_BURSTS) {
					fprintf(stderr, "bench_cmdq: --bursts: at most %d\n", MAX_BURSTS);
					exit(2);
				}
				o->bursts[o->nbursts++] = arg_u(a, tok, 1, MAX_BURST);
			}
			if (!o->nbursts)
				arg_u(a, "", 1, MAX_BURST);
			i++;
		} else {
			bool help = !strcmp(a, "--help") || !strcmp(a, "-h");

			usage(help ? stdout : stderr);
			exit(help ? 0 : 2);
		}
	}
	for (unsigned i = 0; i < o->nbursts; i++)
		if (o->bursts[i] + 1 > (1u << o->log2) / 2) {
			fprintf(stderr, "bench_cmdq: burst %u too big for 2^%u entries\n",
				o->bursts[i], o->log2);
			exit(2);
		}
}

static void pick_cpus(struct bench *bn)
{
	struct hwt_cpus a = HWT_CPUS_INIT;
	unsigned k = 0;
	int err = hwt_cpu_allowed(&a);

	if (err || !a.n) {
		fprintf(stderr, "bench_cmdq: allowed CPUs: %s\n", strerror(err ? -err : ENOENT));
		exit(1);
	}
	bn->cons_cpu = bn->o.cons_cpu >= 0 ? bn->o.cons_cpu : a.cpu[a.n - 1];
	for (unsigned i = 0; i < bn->o.nprod; i++) {
		if (i == 0 && bn->o.prod_cpu >= 0) {
			bn->prod_cpu[0] = bn->o.prod_cpu;
			continue;
		}
		/* round robin over the other allowed CPUs (the consumer's if alone) */
		for (unsigned tries = 0; tries < a.n; tries++) {
			int c = a.cpu[k++ % a.n];

			if (c != bn->cons_cpu || a.n == 1) {
				bn->prod_cpu[i] = c;
				break;
			}
		}
	}
	hwt_cpus_free(&a);
}

int main(int argc, char **argv)
{
	static struct bench bn;
	const char *skipped[4][2];
	unsigned nskip = 0, nrun = 0;
	char model[128];
	uint64_t t_start = now_ns();

	parse(argc, argv, &bn.o);
	pick_cpus(&bn);
	if (pin_self(bn.prod_cpu[0])) {
		fprintf(stderr, "bench_cmdq: cannot pin to CPU %d\n", bn.prod_cpu[0]);
		return 1;
	}
#ifndef HAVE_DPDK
	skipped[nskip][0] = "rte_ring", skipped[nskip++][1] = "dpdk-dev";
#endif
#ifndef HAVE_CK
	skipped[nskip][0] = "ck_ring", skipped[nskip++][1] = "libck-dev";
#endif
	bn.s = aligned_alloc(128, (sizeof(*bn.s) + 127) & ~(size_t)127);
	bn.floor_ns = calloc(2 * (size_t)bn.o.nbursts * bn.o.rounds, sizeof(double));
	if (!bn.s || !bn.floor_ns) {
		fprintf(stderr, "bench_cmdq: out of memory\n");
		return 1;
	}
	memset(bn.s, 0, sizeof(*bn.s));
	for (int m = 0; m < 2; m++) {
		int err = make_hwt(&bn, m == 1, &bn.dev[m], &bn.q[m]);

		if (err) {
			fprintf(stderr, "bench_cmdq: hwt_cmdq (%s polling): %s\n", m ? "CONS" : "MSI",
				strerror(-err));
			return 1;
		}
	}
	if (bn.o.flow) {
		struct impl *im = add_impl(&bn, "hwt_cmdq", G_FLOW, NULL);

		im->q = bn.q[0];
		im->dev = bn.dev[0];
		snprintf(im->what, sizeof(im->what),
			 "hwt_cmdq_issue(cmds, B, false) per burst; software SMMU consumer with a "
			 "no-op dc.handler, CONS published every %u command(s); completion not "
			 "awaited; one CMD_SYNC (MSI polling) drains the segment (timed)",
			 bn.o.cons_batch);
		add_peers(&bn, G_FLOW);
	}
	if (bn.o.sync) {
		for (int m = 0; m < 2; m++) {
			struct impl *im = add_impl(&bn, m ? "hwt_cmdq_sync_cons" : "hwt_cmdq_sync_msi",
						   G_SYNC, NULL);

			im->q = bn.q[m];
			im->dev = bn.dev[m];
			im->sync = true;
			snprintf(im->what, sizeof(im->what),
				 "hwt_cmdq_issue(cmds, B, true) per burst: B commands + CMD_SYNC, "
				 "completion awaited by %s; no-op dc.handler, CONS published every %u "
				 "command(s)",
				 m ? "CONS polling (disable_msipolling)" : "MSI polling",
				 bn.o.cons_batch);
		}
		add_peers(&bn, G_SYNC);
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
				double f = floor_ns(&bn);

				bn.floor_ns[((size_t)g * bn.o.nbursts + bi) * bn.o.rounds + r] = f;
				for (unsigned k = 0; k < n; k++) {
					struct impl *im = grp[(k + r) % n];
					double *rate = &im->rate[bi * bn.o.rounds + r];
					int err = segment(&bn, im, bn.o.bursts[bi], rate);

					if (err) {
						fprintf(stderr, "bench_cmdq: %s, burst %u: %s\n",
							im->name, bn.o.bursts[bi], strerror(-err));
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
				fprintf(stderr, " | %s %.1f M/s", im->name,
					median(&im->rate[bi * bn.o.rounds], bn.o.rounds) / 1e6);
			}
			if (any)
				fprintf(stderr, "\n");
		}

	/* JSON */
	printf("{\"bench_cmdq\": {\n  \"machine\": {\"cpu_model\": ");
	json_str(model);
	printf(", \"producer_cpus\": [");
	for (unsigned i = 0; i < bn.o.nprod; i++)
		printf("%s%d", i ? ", " : "", bn.prod_cpu[i]);
	printf("], \"consumer_cpu\": %d},\n", bn.cons_cpu);
	printf("  \"config\": {\"producers\": %u, \"entries\": %u, \"segment_ms\": %u, "
	       "\"rounds\": %u, \"warmup_elements\": 2048, \"consumer_burst\": %u, "
	       "\"cons_batch\": %u, \"timeout_ms\": %u, \"element_bytes\": 16},\n",
	       bn.o.nprod, 1u << bn.o.log2, bn.o.segment_ms, bn.o.rounds, CONS_BURST,
	       bn.o.cons_batch, bn.o.timeout_ms);
	printf("  \"skipped\": [");
	for (unsigned i = 0; i < nskip; i++)
		printf("%s{\"peer\": \"%s\", \"package\": \"%s\"}", i ? ", " : "", skipped[i][0],
		       skipped[i][1]);
	printf("],\n  \"implementations\": [\n");
	for (unsigned i = 0; i < bn.nimpl; i++) {
		printf("    {\"name\": \"%s\", \"group\": \"%s\", \"what\": ", bn.im[i].name,
		       group_name[bn.im[i].group]);
		json_str(bn.im[i].what);
		printf("}%s\n", i + 1 < bn.nimpl ? "," : "");
	}
	printf("  ],\n  \"cases\": [\n");
	{
		bool first_case = true;

		for (int g = 0; g < 2; g++)
			for (unsigned bi = 0; bi < bn.o.nbursts; bi++) {
				const double *fl =
					&bn.floor_ns[((size_t)g * bn.o.nbursts + bi) * bn.o.rounds];
				double fmin = 0;
				unsigned far = 0, n = 0;
				bool first = true;

				for (unsigned i = 0; i < bn.nimpl; i++)
					n += bn.im[i].group == (enum group)g;
				if (!n)
					continue;
				for (unsigned r = 0; r < bn.o.rounds; r++)
					if (fl[r] > 0 && (!fmin || fl[r] < fmin))
						fmin = fl[r];
				for (unsigned r = 0; r < bn.o.rounds; r++)
					far += fl[r] > 3 * fmin;
				printf("%s    {\"group\": \"%s\", \"burst\": %u, \"floor_ns\": [",
				       first_case ? "" : ",\n", group_name[g], bn.o.bursts[bi]);
				first_case = false;
				for (unsigned r = 0; r < bn.o.rounds; r++)
					printf("%s%.0f", r ? ", " : "", fl[r]);
				printf("], \"far_rounds\": %u,\n      \"elements_per_s\": {", far);
				for (unsigned i = 0; i < bn.nimpl; i++) {
					const struct impl *im = &bn.im[i];
					const double *v = &im->rate[bi * bn.o.rounds];
					double lo = v[0], hi = v[0];

					if (im->group != (enum group)g)
						continue;
					for (unsigned r = 1; r < bn.o.rounds; r++) {
						lo = v[r] < lo ? v[r] : lo;
						hi = v[r] > hi ? v[r] : hi;
					}
					printf("%s\n        \"%s\": {\"p50\": %.0f, \"min\": %.0f, "
					       "\"max\": %.0f, \"segments\": [",
					       first ? "" : ",", im->name,
					       median(v, bn.o.rounds), lo, hi);
					first = false;
					for (unsigned r = 0; r < bn.o.rounds; r++)
						printf("%s%.0f", r ? ", " : "", v[r]);
					printf("]}");
				}
				printf("},\n      \"ratios\": [");
				first = true;
				for (unsigned i = 0; i < bn.nimpl; i++)
					for (unsigned j = 0; j < bn.nimpl; j++) {
						const struct impl *a = &bn.im[i], *p = &bn.im[j];
						double q[256];
						unsigned wins = 0, nr = bn.o.rounds > 256 ? 256 : bn.o.rounds;

						if (a->group != (enum group)g || p->group != a->group ||
						    a->ops || !p->ops)
							continue;
						for (unsigned r = 0; r < nr; r++) {
							q[r] = a->rate[bi * bn.o.rounds + r] /
							       p->rate[bi * bn.o.rounds + r];
							wins += q[r] > 1;
						}
						printf("%s\n        {\"hwt\": \"%s\", \"peer\": \"%s\", "
						       "\"ratio_p50\": %.3f, \"rounds_hwt_faster\": %u, "
						       "\"rounds\": %u}",
						       first ? "" : ",", a->name, p->name, median(q, nr),
						       wins, nr);
						fprintf(stderr, "%s B=%u: %s / %s = %.2fx (%u/%u rounds)\n",
							group_name[g], bn.o.bursts[bi], a->name, p->name,
							median(q, nr), wins, nr);
						first = false;
					}
				printf("]}");
			}
	}
	printf("\n  ],\n  \"segments_run\": %u, \"wall_s\": %.2f\n}}\n", nrun,
	       (double)(now_ns() - t_start) / 1e9);

	for (unsigned i = 0; i < bn.nimpl; i++) {
		if (bn.im[i].ops)
			bn.im[i].ops->destroy(bn.im[i].ring);
		free(bn.im[i].rate);
	}
	for (int m = 0; m < 2; m++) {
		hwt_smmu_dev_stop(bn.dev[m]);
		hwt_cmdq_destroy(bn.q[m]);
		hwt_smmu_dev_destroy(bn.dev[m]);
	}
	free(bn.floor_ns);
	free(bn.s);
	return 0;
}
