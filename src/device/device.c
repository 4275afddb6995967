/* SPDX-License-Identifier: MIT */
/*
 * The software SMMU's lifecycle and configuration.  The consumer itself is
 * in consumer.c, the cache models in model.c; the bus's attachment and DMA
 * map (src/bus/bus.c, dma.c) work on this object under its lock.
 */
#include "device/impl.h"
#include "arch/arch.h"
#include "common/futex.h"
#include "common/median.h"
#include "common/time.h"

_Static_assert(HWT_SMMU_DEV_CMDQS_MAX == HWT__CMDQS_ARCH_MAX, "the public limit is the architecture's");

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAUSE_WAIT_NS 1000000000ull
#define BURST_SEGS 8u /* a queue's turn while several are on: seg_max entries x this */

/* ---- configuration ------------------------------------------------------ */

void hwt_smmu_dev_config_default(struct hwt_smmu_dev_config *cfg)
{
	if (!cfg)
		return;
	memset(cfg, 0, sizeof(*cfg));
	cfg->idr0 = HWT_SMMU_IDR0_MSI | HWT_SMMU_IDR0_SEV | HWT_SMMU_IDR0_COHACC;
	cfg->cmdqs = 8;
	cfg->cpu = -1;
	cfg->cons_batch = 0; /* once per run */
	cfg->spin_ns = 0;    /* auto */
}

static int config_check(const struct hwt_smmu_dev_config *c)
{
	const uint32_t idr0_ok = HWT_SMMU_IDR0_MSI | HWT_SMMU_IDR0_SEV | HWT_SMMU_IDR0_COHACC;

	if (c->idr0 & ~idr0_ok)
		return -EINVAL;
	if (c->cmdqs < HWT_SMMU_DEV_CMDQS_MIN || c->cmdqs > HWT_SMMU_DEV_CMDQS_MAX)
		return -EINVAL;
	if (c->cpu < -1 || c->cpu >= CPU_SETSIZE)
		return -EINVAL;
	if (c->cons_batch > HWT_SMMU_DEV_CONS_BATCH_MAX)
		return -EINVAL;
	if (c->handler && c->handler_batch)
		return -EINVAL;
	if (c->spin_ns > HWT_SMMU_DEV_NS_MAX || c->msi_cost_ns > HWT_SMMU_DEV_NS_MAX ||
	    c->sev_cost_ns > HWT_SMMU_DEV_NS_MAX || c->cmd_cost_ns > HWT_SMMU_DEV_NS_MAX)
		return -EINVAL;
	return 0;
}

/* The bits a valid CMD_SYNC may have set: its opcode and fields. */
static void sync_mask(uint64_t ok[2])
{
	ok[0] = 0xff;
	ok[1] = 0;
	for (int f = 0; f < HWT_SMMU_F_COUNT; f++) {
		unsigned dw, hi, lo;

		if (hwt_smmu_field_layout(HWT_SMMU_OP_CMD_SYNC, (enum hwt_smmu_field)f, &dw, &hi,
					  &lo) != 1 ||
		    dw > 1)
			continue;
		ok[dw] |= (~0ull >> (63 - hi)) & (~0ull << lo);
	}
}

/* Possible CPUs (sysconf(_SC_NPROCESSORS_CONF)), at least 1. */
static unsigned possible_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	return n > 0 ? (unsigned)n : 1u;
}

/* ---- the machine's futex wake-up ------------------------------------------ */

/*
 * How long one futex wake-up takes here, from the waker's store to the
 * sleeper running again: what a device that sleeps too early adds to the
 * next command.  Measured with a helper thread: per round the helper
 * announces it is about to sleep (ready), we let it fall asleep
 * (WAKE_GAP_NS), then post (word odd) and wake it; it records the time from
 * the post to its return and ends the round (word even).  The median of the
 * rounds, or 0 if fewer than 3 completed.  We return by WAKE_BUDGET_NS
 * after pthread_create returned (its own cost, ~0.2 ms in a fresh process,
 * is not ours to bound; in a forked child it was seen at several ms) even
 * if the helper is not scheduled: it is detached, polls the same deadline,
 * sleeps at most WAKE_POLL_NS at a time, and the last of the two to leave
 * frees the probe.
 *
 * R_POST / A_POST: the post (word = 2i + 1, release; seq_cst for the futex
 * handshake) carries posted_ns to the helper's acquire load of word.
 * R_DONE / A_DONE: the helper's word = 2i + 2 (release) carries lat[i] to
 * our acquire load; we read lat[i] only for rounds seen done.  R_REF /
 * A_REF: the acq_rel decrements of refs order each side's last access
 * before the free.
 */
#define WAKE_ROUNDS 7
#define WAKE_BUDGET_NS 1500000u
#define WAKE_GAP_NS 20000u
#define WAKE_POLL_NS 200000u
#define WAKE_MAX_NS 1000000u

struct wake_probe {
	_Atomic uint32_t word;  /* 2i: round i not posted; 2i + 1 posted; 2i + 2 done */
	_Atomic uint32_t ready; /* i + 1: the helper is about to sleep in round i */
	_Atomic uint32_t stop;
	_Atomic uint32_t refs;  /* 2: both sides; the last to leave frees */
	_Atomic uint64_t posted_ns;
	_Atomic uint64_t deadline; /* a time bound only: relaxed */
	uint64_t lat[WAKE_ROUNDS];
};

static void wake_probe_put(struct wake_probe *p)
{
	if (atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) == 1) /* R_REF, A_REF */
		free(p);
}

static bool wake_in_time(const struct wake_probe *p)
{
	return !atomic_load_explicit(&p->stop, memory_order_relaxed) &&
	       hwt__now_ns() < atomic_load_explicit(&p->deadline, memory_order_relaxed);
}

static void *wake_helper(void *arg)
{
	struct wake_probe *p = arg;

	for (uint32_t i = 0; i < WAKE_ROUNDS; i++) {
		atomic_store_explicit(&p->ready, i + 1, memory_order_seq_cst);
		while (atomic_load_explicit(&p->word, memory_order_seq_cst) == 2 * i) { /* A_POST */
			if (!wake_in_time(p))
				goto out;
			hwt__futex_wait(&p->word, 2 * i, WAKE_POLL_NS);
		}
		if (atomic_load_explicit(&p->word, memory_order_relaxed) != 2 * i + 1)
			break; /* given up */
		p->lat[i] = hwt__now_ns() - atomic_load_explicit(&p->posted_ns, memory_order_relaxed);
		atomic_store_explicit(&p->word, 2 * i + 2, memory_order_release); /* R_DONE */
	}
out:
	wake_probe_put(p);
	return NULL;
}

static uint32_t wake_measured; /* under wake_ns()'s lock */

static void wake_measure(void)
{
	struct wake_probe *p = calloc(1, sizeof(*p));
	uint64_t lat[WAKE_ROUNDS], med;
	uint32_t done = 0, w = 0;
	pthread_attr_t attr;
	pthread_t th;
	int err;

	if (!p)
		return; /* not measured: the fixed spin */
	atomic_init(&p->deadline, UINT64_MAX); /* set once the helper exists */
	atomic_init(&p->refs, 2);
	err = pthread_attr_init(&attr);
	if (!err) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		err = pthread_create(&th, &attr, wake_helper, p);
		pthread_attr_destroy(&attr);
	}
	if (err) {
		free(p);
		return;
	}
	atomic_store_explicit(&p->deadline, hwt__now_ns() + WAKE_BUDGET_NS, memory_order_relaxed);
	for (; done < WAKE_ROUNDS; done++) {
		uint64_t gap;

		while (atomic_load_explicit(&p->ready, memory_order_seq_cst) != done + 1 &&
		       wake_in_time(p))
			sched_yield();
		gap = hwt__now_ns() + WAKE_GAP_NS; /* let it fall asleep */
		while (hwt__now_ns() < gap)
			hwt__cpu_relax();
		if (!wake_in_time(p))
			break;
		atomic_store_explicit(&p->posted_ns, hwt__now_ns(), memory_order_relaxed);
		atomic_store_explicit(&p->word, 2 * done + 1, memory_order_seq_cst); /* R_POST */
		hwt__futex_wake(&p->word, 1);
		/* A_DONE */
		while ((w = atomic_load_explicit(&p->word, memory_order_acquire)) != 2 * done + 2 &&
		       wake_in_time(p))
			sched_yield();
		if (w != 2 * done + 2)
			break;
		lat[done] = p->lat[done];
	}
	atomic_store_explicit(&p->stop, 1, memory_order_relaxed);
	atomic_store_explicit(&p->word, UINT32_MAX, memory_order_seq_cst); /* ends any round */
	hwt__futex_wake(&p->word, 1);
	wake_probe_put(p);
	if (done < 3)
		return;
	med = hwt__median_u64(lat, done);
	wake_measured = (uint32_t)(med < WAKE_MAX_NS ? med : WAKE_MAX_NS);
}

/* The futex wake-up of this machine (0: could not measure).  Measured at
 * the first call in the process; a measurement that did not finish in its
 * budget (a busy machine) is tried again by the next calls, WAKE_TRIES in
 * all.  Concurrent callers wait for the one measuring. */
#define WAKE_TRIES 3

static uint32_t wake_ns(void)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static unsigned tries;
	uint32_t v;

	pthread_mutex_lock(&lock);
	if (!wake_measured && tries < WAKE_TRIES) {
		tries++;
		wake_measure();
	}
	v = wake_measured;
	pthread_mutex_unlock(&lock);
	return v;
}

/* ---- create ---------------------------------------------------------------- */

/* Point queue i's consumer view at its registers. */
static void queue_regs(struct hwt_smmu_dev *dev, unsigned i)
{
	struct hwt__smmu_regs *r = &dev->regs;
	struct hwt__devq *q = &dev->qs[i];

	q->idx = i;
	if (!i) {
		q->r_prod = &r->prod;
		q->r_cons = &r->cons;
		q->r_en = &r->cr0;
		q->r_enack = &r->cr0ack;
		q->r_en_seen = &r->cr0_seen;
		q->r_gerror = &r->gerror;
		q->r_gerrorn = &r->gerrorn;
		q->r_base = &r->cmdq_base;
		return;
	}
	q->r_prod = &r->q[i].prod;
	q->r_cons = &r->q[i].cons;
	q->r_en = &r->q[i].en;
	q->r_enack = &r->q[i].enack;
	q->r_en_seen = &r->q[i].en_seen;
	q->r_gerror = &r->q[i].gerror;
	q->r_gerrorn = &r->q[i].gerrorn;
	q->r_base = &r->q[i].base;
}

static void dev_free_mem(struct hwt_smmu_dev *dev)
{
	free(dev->on_list);
	free(dev->qs);
	free(dev->regs.q);
	free(dev);
}

int hwt__dev_create_nq(struct hwt_smmu_dev **out, const struct hwt_smmu_dev_config *cfg, unsigned nq)
{
	struct hwt_smmu_dev *dev;
	int err;

	if (!out || !cfg || !nq || nq > HWT__NUMQ_MAX)
		return -EINVAL;
	err = config_check(cfg);
	if (err)
		return err;
	dev = hwt__zalloc_lines(sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	dev->cfg = *cfg;
	dev->spin_ns = cfg->spin_ns;
	if (!cfg->spin_ns) {
		dev->wake_ns = wake_ns();
		dev->spin_ns = dev->wake_ns > HWT_SMMU_DEV_SPIN_NS_AUTO ? dev->wake_ns
									: HWT_SMMU_DEV_SPIN_NS_AUTO;
	}
	dev->seg_max = hwt__dev_seg_max(cfg);
	dev->burst = BURST_SEGS * dev->seg_max;
	dev->regs.idr0 = cfg->idr0;
	dev->regs.asym = hwt__membarrier_init();
	dev->regs.idr1 = (cfg->cmdqs & HWT_SMMU_IDR1_CMDQS_MASK) << HWT_SMMU_IDR1_CMDQS_SHIFT;
	/* NUMQ; the register blocks of queues 1.. (q[0] unused: queue 0 is
	 * the register file's own) and the consumer's view of every queue. */
	dev->regs.idr6 = nq;
	dev->nq = nq;
	dev->regs.q = hwt__zalloc_lines(sizeof(*dev->regs.q) * nq);
	dev->qs = hwt__zalloc_lines(sizeof(*dev->qs) * nq);
	dev->on_list = calloc(nq, sizeof(*dev->on_list));
	if (!dev->regs.q || !dev->qs || !dev->on_list) {
		dev_free_mem(dev);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < nq; i++)
		queue_regs(dev, i);
	sync_mask(dev->sync_ok);
	err = -pthread_mutex_init(&dev->lock, NULL);
	if (err) {
		dev_free_mem(dev);
		return err;
	}
	err = hwt__model_init(&dev->model);
	if (err) {
		pthread_mutex_destroy(&dev->lock);
		dev_free_mem(dev);
		return err;
	}
	*out = dev;
	return 0;
}

/* NUMQ: one queue per possible CPU, at most HWT__NUMQ_MAX. */
int hwt_smmu_dev_create(struct hwt_smmu_dev **out, const struct hwt_smmu_dev_config *cfg)
{
	unsigned nq = possible_cpus();

	return hwt__dev_create_nq(out, cfg, nq < HWT__NUMQ_MAX ? nq : HWT__NUMQ_MAX);
}

void hwt_smmu_dev_get_config(const struct hwt_smmu_dev *dev, struct hwt_smmu_dev_config *cfg)
{
	if (dev && cfg)
		*cfg = dev->cfg;
}

/* The device object's memory: its cache models, its lock, itself. */
void hwt__dev_free(struct hwt_smmu_dev *dev)
{
	hwt__model_destroy(&dev->model);
	pthread_mutex_destroy(&dev->lock);
	dev_free_mem(dev);
}

/* ---- lifecycle ---------------------------------------------------------- */

/* Every queue disabled and acknowledged so (R_QACK, R_ACK: seq_cst, each
 * Q_ENACK 0, count included); Q_EN_SEEN keeps what we acted on.  With the
 * lock held and no consumer running. */
static void queues_off(struct hwt_smmu_dev *dev)
{
	for (unsigned i = 0; i < dev->nq; i++) {
		dev->qs[i].en = 0;
		dev->qs[i].on = false;
		atomic_store_explicit(dev->qs[i].r_enack, 0, memory_order_seq_cst); /* R_QACK */
	}
	dev->non = 0;
	dev->scan_all = true; /* a start reads every Q_EN again */
}

int hwt_smmu_dev_start(struct hwt_smmu_dev *dev)
{
	pthread_attr_t attr;
	int err;

	if (!dev)
		return -EINVAL;
	pthread_mutex_lock(&dev->lock);
	if (dev->running) {
		err = -EBUSY;
		goto out;
	}
	/* live, then A_CR0 (A_QEN for each queue): a driver enabling a queue
	 * right now is seen here or sees us live (and waits for the
	 * consumer's R_ACK).  A driver disabling it is seen here; or it reads
	 * our R_ACK of CMDQEN and waits for the consumer, whose own A_CR0
	 * (later in the seq_cst order than all of these) sees the disable
	 * before it touches the queue; or its A_ACK reads 0 before our R_ACK,
	 * and then its unmap of the queue, which takes our lock, sees CMDQEN
	 * and waits as well.  Queue 0 refused fails the start (-EINVAL); a
	 * queue i >= 1 refused is acknowledged with EN 0 and the start goes on. */
	hwt__dekker_store(&dev->regs.live, 1); /* pairs with the driver's live load */
	err = hwt__dev_cmdq_enable(dev, atomic_load_explicit(&dev->regs.cr0,
							     memory_order_seq_cst)); /* A_CR0, R_ACK */
	if (err)
		goto fail;
	for (unsigned i = 1; i < dev->nq; i++) {
		struct hwt__devq *q = &dev->qs[i];
		uint32_t en = atomic_load_explicit(q->r_en, memory_order_seq_cst); /* A_QEN */

		if (en)
			hwt__dev_q_enable(dev, q, en); /* R_QACK */
	}
	atomic_fetch_and_explicit(&dev->ctl, ~HWT__CTL_STOP, memory_order_seq_cst);
	err = -pthread_attr_init(&attr);
	if (err)
		goto fail;
	if (dev->cfg.cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET((unsigned)dev->cfg.cpu, &set);
		err = -pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	if (!err)
		err = -pthread_create(&dev->thread, &attr, hwt__dev_consumer, dev);
	pthread_attr_destroy(&attr);
	if (!err) {
		dev->running = true;
		goto out;
	}
fail:
	queues_off(dev); /* R_ACK, R_QACK */
	atomic_store_explicit(&dev->regs.live, 0, memory_order_seq_cst);
out:
	pthread_mutex_unlock(&dev->lock);
	return err;
}

/* Wake the consumer wherever it sleeps (doorbell, error wait or park: all
 * on DB), after the caller's seq_cst ctl RMW. */
static void kick(struct hwt_smmu_dev *dev)
{
	hwt__reg_ring(&dev->regs); /* DB2/DB3 */
}

/* Wait (bounded) until parked == want. */
static int wait_parked(struct hwt_smmu_dev *dev, uint32_t want)
{
	uint64_t deadline = hwt__now_ns() + PAUSE_WAIT_NS;

	while (atomic_load_explicit(&dev->parked, memory_order_seq_cst) != want) {
		if (hwt__now_ns() > deadline)
			return -ETIMEDOUT;
		kick(dev);
		sched_yield();
	}
	return 0;
}

int hwt_smmu_dev_pause(struct hwt_smmu_dev *dev)
{
	int err = 0;

	if (!dev)
		return -EINVAL;
	pthread_mutex_lock(&dev->lock);
	atomic_fetch_or_explicit(&dev->ctl, HWT__CTL_PAUSE, memory_order_seq_cst);
	if (dev->running)
		err = wait_parked(dev, 1);
	pthread_mutex_unlock(&dev->lock);
	return err;
}

int hwt_smmu_dev_resume(struct hwt_smmu_dev *dev)
{
	int err = 0;

	if (!dev)
		return -EINVAL;
	pthread_mutex_lock(&dev->lock);
	atomic_fetch_and_explicit(&dev->ctl, ~HWT__CTL_PAUSE, memory_order_seq_cst);
	/* Wait for the consumer to leave park(), so that a following pause()
	 * cannot mistake the old parked = 1 for its own acknowledgement. */
	if (dev->running)
		err = wait_parked(dev, 0);
	pthread_mutex_unlock(&dev->lock);
	return err;
}

int hwt_smmu_dev_stop(struct hwt_smmu_dev *dev)
{
	int cancel;

	if (!dev)
		return -EINVAL;
	/* pthread_join is a cancellation point: a caller cancelled in it
	 * would leave dev->lock held and the consumer unjoined. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	pthread_mutex_lock(&dev->lock);
	if (dev->running) {
		atomic_fetch_or_explicit(&dev->ctl, HWT__CTL_STOP, memory_order_seq_cst);
		kick(dev);
		pthread_join(dev->thread, NULL);
		dev->running = false;
		atomic_store_explicit(&dev->parked, 0, memory_order_seq_cst);
		/* R_ACK, R_QACK: a waiter that sees EN 0 sees the final CONS
		 * of its queue.  The consumer is joined: its state and
		 * counters are ours now.  Every Q_ENACK (CR0ACK) 0, count
		 * included: a driver waiting for its enable's count never
		 * takes a stale one for a refusal (Q_EN_SEEN, CR0_SEEN, keep
		 * what we acted on, for "stopped" vs "never started"). */
		queues_off(dev);
		atomic_store_explicit(&dev->regs.live, 0, memory_order_seq_cst);
		hwt__st_add(&dev->st.sevs, 1);
		hwt__reg_sev(&dev->regs); /* V1, V2: sleeping waiters notice */
	}
	pthread_mutex_unlock(&dev->lock);
	pthread_setcancelstate(cancel, NULL);
	return 0;
}

/*
 * With a queue still attached the registers and DMA map stay in use by it
 * (its calls see the stopped device and fail with -ENODEV; its destroy
 * disables, unmaps and detaches): the detach frees the device.  The lock
 * decides which of the two is last.
 */
void hwt_smmu_dev_destroy(struct hwt_smmu_dev *dev)
{
	bool owned;

	if (!dev)
		return;
	hwt_smmu_dev_stop(dev);
	pthread_mutex_lock(&dev->lock);
	owned = dev->owner != NULL;
	dev->destroyed = true;
	pthread_mutex_unlock(&dev->lock);
	if (!owned)
		hwt__dev_free(dev);
}

int hwt_smmu_dev_inject(struct hwt_smmu_dev *dev, enum hwt_smmu_fault fault)
{
	uint32_t bit;

	if (!dev)
		return -EINVAL;
	switch (fault) {
	case HWT_SMMU_FAULT_ABT:
		bit = HWT__CTL_INJ_ABT;
		break;
	case HWT_SMMU_FAULT_ATC_TIMEOUT:
		bit = HWT__CTL_INJ_ATC;
		break;
	default:
		return -EINVAL;
	}
	/* A command published after this returns sees it: this RMW is before
	 * the R_PROD that publishes it, and the consumer reads ctl after A_PROD. */
	atomic_fetch_or_explicit(&dev->ctl, bit, memory_order_seq_cst);
	return 0;
}

void hwt_smmu_dev_get_stats(const struct hwt_smmu_dev *dev, struct hwt_smmu_dev_stats *st)
{
	const struct hwt__dev_stats *s;

	if (!dev || !st)
		return;
	s = &dev->st;
	memset(st, 0, sizeof(*st));
	st->cmds = atomic_load_explicit(&s->cmds, memory_order_relaxed);
	st->syncs = atomic_load_explicit(&s->syncs, memory_order_relaxed);
	st->msi_writes = atomic_load_explicit(&s->msi_writes, memory_order_relaxed);
	st->sync_irqs = atomic_load_explicit(&s->sync_irqs, memory_order_relaxed);
	st->sevs = atomic_load_explicit(&s->sevs, memory_order_relaxed);
	st->errors = atomic_load_explicit(&s->errors, memory_order_relaxed);
	st->sleeps = atomic_load_explicit(&s->sleeps, memory_order_relaxed);
	st->cons_updates = atomic_load_explicit(&s->cons_updates, memory_order_relaxed);
	st->invalidated = atomic_load_explicit(&s->invalidated, memory_order_relaxed);
	st->msi_cost_ns = dev->cfg.msi_cost_ns;
	st->sev_cost_ns = dev->cfg.sev_cost_ns;
	st->cmd_cost_ns = dev->cfg.cmd_cost_ns;
	st->spin_ns = dev->spin_ns;
	st->wake_ns = dev->wake_ns;
}
