/* SPDX-License-Identifier: MIT */
/*
 * The software SMMU's command queues as a set: the consumer thread's main
 * loop, which serves every enabled queue in turn (round-robin, a bounded
 * burst per queue per turn: consumer.c executes the turn), acts on every
 * queue's enable, handles each queue's command errors without holding up
 * the others, and sleeps on the one doorbell when no queue has work.
 *
 * Ordering contract (labels name the partner on the driver's side of the
 * register file, bus/regs.h; queue 0's registers keep their own names):
 *
 *   A_QEN    load of Q_EN (seq_cst; A_CR0 of CR0 for queue 0); pairs with
 *            R_QEN (R_CR0): Q_BASE, Q_PROD and Q_CONS written before the
 *            enable are visible.  Its acknowledgement R_QACK (R_ACK) is in
 *            enable.c.
 *   A_PROD   acquire load of Q_PROD; pairs with R_PROD: every entry before
 *            PROD is written when we read it.
 *   R_QGERR  release store of Q_GERROR (R_GERR of GERROR for queue 0),
 *            after that queue's CONS.ERR (R_CONS); pairs with A_QGERR
 *            (A_GERR): CONS.ERR is visible with the toggle.
 *   A_QGERRN acquire load of Q_GERRORN (A_GERRN of GERRORN for queue 0);
 *            pairs with R_QGERRN (R_GERRN): an entry the driver rewrote
 *            before acknowledging is visible when we re-fetch it.
 *   A_IRQ    acquire load of the GERROR line; pairs with R_IRQ (bus.c).
 *   S1..S4   the doorbell sleep with its barrier SB (bus/regs.h): S3 loads
 *            Q_EN of every queue and Q_PROD and Q_GERRORN of every enabled
 *            one, so a doorbell for any queue is not lost.  V1/V2 the SEV
 *            (hwt__reg_sev), one EVT for all queues.
 *
 * The loop:
 *   1. Requests: stop, pause (park; every Q_EN is still acted on).
 *   2. A_QEN of every queue: a changed Q_EN enables or disables that queue
 *      and is acknowledged (R_QACK), also while paused and, through the
 *      checks in consumer.c, between two segments of a run.
 *   3. A round: every enabled queue once, from dev->rr, the queue after
 *      the last one served (a cursor: every round keeps one order).  A
 *      queue just enabled re-raises an error left unacknowledged; a queue
 *      in error is looked at only for its acknowledgement (A_QGERRN: then
 *      CONS.ERR is cleared, R_CONS, and the queue re-fetches at CONS);
 *      otherwise A_PROD and a turn of its run.  While more than one queue
 *      is enabled a turn is at most dev->burst entries, so a queue with
 *      work waits for at most one turn of each other queue; a lone queue
 *      runs to PROD as a single queue always did, unless another queue's
 *      Q_EN changes.
 *   4. A round with nothing to do: spin spin_ns, then sleep on the doorbell
 *      (S1..S4, bounded) until any queue's PROD, GERRORN or EN changes or a
 *      request comes.  While spinning, the first enabled queue from dev->rr
 *      whose PROD moved gets its turn at once, before the next pass of
 *      1..3 (the cursor then moves past it); nothing is served after the
 *      sleep.
 *
 * A command error on queue i stops queue i only: its CONS.ERR, its GERROR
 * toggled (R_QGERR), the one GERROR line; the other queues run on.
 */
#include "device/impl.h"
#include "arch/arch.h"
#include "common/futex.h"
#include "common/time.h"

#include <sched.h>

#define SLEEP_NS 5000000u     /* every doorbell sleep is at most this */
#define ERR_SLEEP_NS 1000000u /* the same while a queue waits for its GERRORN */
#define YIELD_AFTER_NS 2000u  /* idle spinning longer than this also yields */

static inline uint32_t ctl_load(struct hwt_smmu_dev *dev)
{
	return atomic_load_explicit(&dev->ctl, memory_order_relaxed);
}

/* ---- signals ------------------------------------------------------------ */

void hwt__dev_sev(struct hwt_smmu_dev *dev)
{
	/* Counted before the signal: whoever sees the signal sees the count. */
	hwt__st_add(&dev->st.sevs, 1);
	hwt__reg_sev(&dev->regs); /* V1, V2 */
}

static void raise_gerror_irq(struct hwt_smmu_dev *dev)
{
	void (*fn)(void *) = atomic_load_explicit(&dev->gerror_fn, memory_order_acquire); /* A_IRQ */

	if (fn)
		fn(atomic_load_explicit(&dev->gerror_ctx, memory_order_relaxed));
}

/* ---- enables ------------------------------------------------------------ */

/*
 * Looking at NUMQ (up to 256) Q_EN words per round and per idle spin would
 * cost queue 0 alone several hundred ns a command on a machine with many
 * CPUs.  So a partial look reads queue 0 (CR0, as a single queue always
 * did), the enabled queues and one more queue, dev->scan, which rotates
 * over all of them: an enable of any queue is seen within NUMQ looks.  The
 * doorbell's S3, park() and the first look after a doorbell wait or an
 * enable change (scan_all) read every queue.
 */
void hwt__dev_on_list_update(struct hwt_smmu_dev *dev)
{
	unsigned n = 0;

	for (unsigned i = 0; i < dev->nq; i++)
		if (dev->qs[i].on)
			dev->on_list[n++] = (uint16_t)i;
	dev->non = n;
	dev->rr = 0;
	dev->scan_all = true;
}

/* i + 1, wrapping at n. */
static inline unsigned next_of(unsigned i, unsigned n)
{
	return i + 1 < n ? i + 1 : 0;
}

/* The queue a partial look reads besides queue 0 and the enabled ones. */
static inline struct hwt__devq *scan_next(struct hwt_smmu_dev *dev)
{
	dev->scan = next_of(dev->scan, dev->nq);
	return &dev->qs[dev->scan];
}

/* A_QEN of q (A_CR0 for queue 0); act on a change (R_QACK).  True if
 * it changed. */
static bool act_on_enable(struct hwt_smmu_dev *dev, struct hwt__devq *q)
{
	uint32_t en = atomic_load_explicit(q->r_en, memory_order_seq_cst); /* A_QEN */

	if (en == q->en)
		return false;
	hwt__dev_q_enable(dev, q, en); /* R_QACK */
	return true;
}

/* A_QEN of every queue, or (partial look) of queue 0, the enabled queues
 * and scan_next(); act on each change (R_QACK).  True if any changed. */
static bool act_on_enables(struct hwt_smmu_dev *dev, bool all)
{
	bool changed = false;

	if (all || dev->scan_all) {
		dev->scan_all = false;
		for (unsigned i = 0; i < dev->nq; i++)
			changed |= act_on_enable(dev, &dev->qs[i]);
		return changed;
	}
	if (act_on_enable(dev, &dev->qs[0]) || act_on_enable(dev, scan_next(dev)))
		return true;
	/* on_list changes under an enable: stop at the first change */
	for (unsigned k = 0; k < dev->non; k++)
		if (act_on_enable(dev, &dev->qs[dev->on_list[k]]))
			return true;
	return false;
}

/* ---- pause and doorbell --------------------------------------------------- */

/* Anything for the consumer?  DB_EN: a changed Q_EN (of every queue if
 * all, else of queue 0, the enabled queues and scan_next()); DB_WORK: a
 * request, a new Q_PROD of an enabled queue not in error, a changed
 * Q_GERRORN of an enabled queue (as at the last look: seen_prod,
 * seen_gerrorn); 0: nothing.  The enabled queues are looked at from
 * dev->rr; *fed (if fed) is the on_list index of the queue whose new
 * Q_PROD made it DB_WORK, else dev->non. */
enum { DB_WORK = 1, DB_EN = 2 };

static int doorbell_any(struct hwt_smmu_dev *dev, memory_order mo, bool all, unsigned *fed)
{
	unsigned n = dev->non, k = dev->rr < n ? dev->rr : 0;

	if (fed)
		*fed = n;
	if (atomic_load_explicit(&dev->ctl, mo) & (HWT__CTL_STOP | HWT__CTL_PAUSE))
		return DB_WORK;
	if (all) {
		for (unsigned i = 0; i < dev->nq; i++)
			if (atomic_load_explicit(dev->qs[i].r_en, mo) != dev->qs[i].en)
				return DB_EN;
	} else {
		const struct hwt__devq *s = scan_next(dev);

		if (atomic_load_explicit(dev->qs[0].r_en, mo) != dev->qs[0].en ||
		    atomic_load_explicit(s->r_en, mo) != s->en)
			return DB_EN;
	}
	for (unsigned j = 0; j < n; j++, k = next_of(k, n)) {
		const struct hwt__devq *q = &dev->qs[dev->on_list[k]];

		if (!all && atomic_load_explicit(q->r_en, mo) != q->en)
			return DB_EN;
		if (atomic_load_explicit(q->r_gerrorn, mo) != q->seen_gerrorn)
			return DB_WORK;
		if (!q->err_pending && atomic_load_explicit(q->r_prod, mo) != q->seen_prod) {
			if (fed)
				*fed = k;
			return DB_WORK;
		}
	}
	return 0;
}

/*
 * Sit still while PAUSE is set.  parked = 1 tells hwt_smmu_dev_pause() that
 * no command is in flight; seq_cst on both sides of the ctl/parked pair.
 * Every Q_EN is still acted on (enabling and disabling touch no queue
 * memory).  Sleeps on the doorbell (S1..S4 of bus/regs.h), which resume,
 * stop and a Q_EN write ring.  Returns false if asked to stop.
 */
static bool park(struct hwt_smmu_dev *dev)
{
	for (;;) {
		uint64_t sleep;
		uint32_t c, db;
		bool en_same = true;

		atomic_store_explicit(&dev->parked, 1, memory_order_seq_cst);
		act_on_enables(dev, true); /* A_QEN, R_QACK */
		c = atomic_load_explicit(&dev->ctl, memory_order_seq_cst);
		if (c & HWT__CTL_STOP)
			return false;
		if (!(c & HWT__CTL_PAUSE)) {
			atomic_store_explicit(&dev->parked, 0, memory_order_seq_cst);
			return true;
		}
		hwt__dekker_store(&dev->regs.dev_sleeping, 1);                       /* S1 */
		sleep = hwt__reg_sleeper_barrier(&dev->regs, SLEEP_NS);                  /* SB */
		db = atomic_load_explicit(&dev->regs.db, memory_order_seq_cst);          /* S2 */
		for (unsigned i = 0; i < dev->nq && en_same; i++)                        /* S3 */
			en_same = atomic_load_explicit(dev->qs[i].r_en, memory_order_seq_cst) ==
				  dev->qs[i].en;
		if (en_same && atomic_load_explicit(&dev->ctl, memory_order_seq_cst) == c) /* S3 */
			hwt__futex_wait(&dev->regs.db, db, sleep);                       /* S4 */
		atomic_store_explicit(&dev->regs.dev_sleeping, 0, memory_order_relaxed);
	}
}

static bool serve(struct hwt_smmu_dev *dev, struct hwt__devq *q);

/*
 * Nothing to do in the last round: spin spin_ns (yielding the CPU now and
 * then once idle for YIELD_AFTER_NS, so producers sharing this CPU are not
 * held back for the whole budget), then sleep once (S1..S4, at most
 * max_sleep).  Returns as soon as doorbell_any() sees something, after a
 * turn of the queue whose new PROD it saw, if that was it.  The caller
 * re-checks everything after this returns.
 */
static void doorbell_wait(struct hwt_smmu_dev *dev, uint64_t max_sleep)
{
	uint64_t start = 0;
	uint32_t db;

	for (unsigned i = 1;; i++) {
		unsigned fed;
		int why = doorbell_any(dev, memory_order_relaxed, false, &fed);

		if (why) {
			/* the partial look moved on: the next one reads every Q_EN */
			dev->scan_all |= why == DB_EN;
			/* A new PROD: its queue's turn now, not after the main
			 * loop's look at the enables (docs/benchmarks-hand.md:
			 * the empty CMD_SYNC's latency).  The look just saw no
			 * request and no change of Q_EN or GERRORN of queue 0,
			 * the scanned queue and the enabled queues up to this
			 * one; hwt__dev_consume() checks ctl and this queue's
			 * Q_EN before each segment.  A change at a later queue
			 * waits for this one turn. */
			if (fed < dev->non) {
				(void)serve(dev, &dev->qs[dev->on_list[fed]]);
				dev->rr = next_of(fed, dev->non);
			}
			return;
		}
		if (!(i & 63)) {
			uint64_t now = hwt__now_ns();

			if (!start)
				start = now;
			else if (now - start >= dev->spin_ns)
				break;
			else if (now - start >= YIELD_AFTER_NS)
				sched_yield(); /* a producer on this CPU may run */
		}
		hwt__cpu_relax();
	}
	hwt__dekker_store(&dev->regs.dev_sleeping, 1);                                      /* S1 */
	max_sleep = hwt__reg_sleeper_barrier(&dev->regs, max_sleep);                       /* SB */
	db = atomic_load_explicit(&dev->regs.db, memory_order_seq_cst);                    /* S2 */
	if (!doorbell_any(dev, memory_order_seq_cst, true, NULL)) {                        /* S3 */
		hwt__st_add(&dev->st.sleeps, 1);
		hwt__futex_wait(&dev->regs.db, db, max_sleep);                             /* S4 */
	}
	atomic_store_explicit(&dev->regs.dev_sleeping, 0, memory_order_relaxed);
	dev->scan_all = true; /* after S3 or a sleep: read every Q_EN */
}

/* ---- errors ------------------------------------------------------------- */

/*
 * Command error at cons of q: CONS.ERR (R_CONS), Q_GERROR.CMDQ_ERR toggled
 * (unless already pending), the GERROR line.  q waits (err_pending) for
 * its acknowledgement, which error_acked() sees; the other queues run on.
 */
void hwt__dev_raise_error(struct hwt_smmu_dev *dev, struct hwt__devq *q, uint32_t cons,
			  uint32_t code)
{
	uint32_t g = atomic_load_explicit(q->r_gerror, memory_order_relaxed);

	hwt__st_add(&dev->st.errors, 1);
	q->cons = cons;
	q->err_pending = true;
	hwt__dev_publish_cons(dev, q, cons, code);                           /* R_CONS */
	if (!((g ^ atomic_load_explicit(q->r_gerrorn, memory_order_relaxed)) &
	      HWT_SMMU_GERROR_CMDQ_ERR))
		/* R_QGERR (R_GERR): pairs with A_QGERR (A_GERR): CONS.ERR is
		 * visible with the toggle. */
		atomic_store_explicit(q->r_gerror, g ^ HWT_SMMU_GERROR_CMDQ_ERR,
				      memory_order_release);
	raise_gerror_irq(dev);
}

/*
 * Has Q_GERRORN acknowledged q's pending error?  Then clear CONS.ERR
 * (R_CONS) and let q re-fetch at CONS: true.  Else remember the GERRORN
 * seen, for the doorbell: false.
 */
static bool error_acked(struct hwt_smmu_dev *dev, struct hwt__devq *q)
{
	uint32_t n = atomic_load_explicit(q->r_gerrorn, memory_order_acquire); /* A_QGERRN */
	uint32_t g = atomic_load_explicit(q->r_gerror, memory_order_relaxed);

	q->seen_gerrorn = n;
	if ((g ^ n) & HWT_SMMU_GERROR_CMDQ_ERR)
		return false;
	q->err_pending = false;
	hwt__dev_publish_cons(dev, q, q->cons, HWT_SMMU_CERROR_NONE); /* R_CONS: ERR cleared */
	return true;
}

/* Just enabled: an error left unacknowledged (before a stop, or by a
 * previous owner of the queue) keeps the queue stopped until it is
 * acknowledged; the new owner gets the interrupt.  True if there was one. */
static bool pending_error(struct hwt_smmu_dev *dev, struct hwt__devq *q)
{
	uint32_t g = atomic_load_explicit(q->r_gerror, memory_order_relaxed);
	uint32_t n = atomic_load_explicit(q->r_gerrorn, memory_order_acquire); /* A_QGERRN */
	uint32_t cons = atomic_load_explicit(q->r_cons, memory_order_relaxed);

	if ((g ^ n) & HWT_SMMU_GERROR_CMDQ_ERR) {
		hwt__dev_raise_error(dev, q, q->cons,
				     cons >> HWT_SMMU_CONS_ERR_SHIFT & HWT_SMMU_CONS_ERR_MASK);
		error_acked(dev, q);
		return true;
	}
	return false;
}

/* GERROR.MSI_CMDQ_ABT_ERR of q: the sync completed but its MSI had no target. */
void hwt__dev_msi_abort(struct hwt_smmu_dev *dev, struct hwt__devq *q)
{
	uint32_t g = atomic_load_explicit(q->r_gerror, memory_order_relaxed);

	hwt__st_add(&dev->st.errors, 1);
	if (!((g ^ atomic_load_explicit(q->r_gerrorn, memory_order_relaxed)) &
	      HWT_SMMU_GERROR_MSI_CMDQ_ABT))
		atomic_store_explicit(q->r_gerror, g ^ HWT_SMMU_GERROR_MSI_CMDQ_ABT,
				      memory_order_release); /* R_QGERR (R_GERR) */
	raise_gerror_irq(dev);
}

/* ---- the loop ----------------------------------------------------------- */

/* q's part of a round; true if it did anything. */
static bool serve(struct hwt_smmu_dev *dev, struct hwt__devq *q)
{
	uint32_t raw, prod;

	/* No error pending: the look costs the queue no turn. */
	if (q->check_error) {
		q->check_error = false;
		if (pending_error(dev, q))
			return true;
	}
	if (q->err_pending && !error_acked(dev, q))
		return false;
	/* For the doorbell: relaxed, the value compared is the driver's own. */
	q->seen_gerrorn = atomic_load_explicit(q->r_gerrorn, memory_order_relaxed);
	raw = atomic_load_explicit(q->r_prod, memory_order_acquire); /* A_PROD */
	q->seen_prod = raw;
	prod = hwt__q_pos(q->shift, raw);
	if (prod == q->cons)
		return false;
	if (hwt__q_full(q->shift, prod, q->cons))
		q->full_seen = true;
	hwt__dev_consume(dev, q, prod);
	return true;
}

/* One round: every enabled queue once (on_list, which serve() does not
 * change), from dev->rr, which is left at the queue after the last one
 * served: every round keeps one order, so a queue with work waits for at
 * most one turn of each other queue.  True if any queue did anything;
 * *err_wait if a queue waits for its GERRORN. */
static bool round_robin(struct hwt_smmu_dev *dev, bool *err_wait)
{
	unsigned n = dev->non, i = dev->rr < n ? dev->rr : 0;
	bool worked = false;

	*err_wait = false;
	for (unsigned k = 0; k < n; k++, i = next_of(i, n)) {
		struct hwt__devq *q = &dev->qs[dev->on_list[i]];

		if (ctl_load(dev) & (HWT__CTL_STOP | HWT__CTL_PAUSE)) {
			dev->rr = i;
			return true; /* the main loop acts on it */
		}
		worked |= serve(dev, q);
		*err_wait |= q->err_pending;
	}
	dev->rr = i;
	return worked;
}

void *hwt__dev_consumer(void *arg)
{
	struct hwt_smmu_dev *dev = arg;

	for (;;) {
		uint32_t c = ctl_load(dev);
		bool err_wait;

		if (c & HWT__CTL_STOP)
			break;
		if (c & HWT__CTL_PAUSE) {
			if (!park(dev))
				break;
			continue;
		}
		if (act_on_enables(dev, false)) /* A_QEN, R_QACK */
			continue;
		if (!round_robin(dev, &err_wait))
			doorbell_wait(dev, err_wait ? ERR_SLEEP_NS : SLEEP_NS);
	}
	return NULL;
}
