/* SPDX-License-Identifier: MIT */
/*
 * The software SMMU's command-queue consumer: the mirror of src/cmdq/cmdq.c.
 *
 * Ordering contract (labels name the partner on the driver's side of the
 * register file, bus/regs.h and src/cmdq/):
 *
 *   A_CR0    load of CR0 (seq_cst); pairs with R_CR0: CMDQ_BASE, PROD and
 *            CONS written before the enable are visible.
 *   R_ACK    store of CR0ACK (seq_cst, in enable.c, which acts on CR0 and
 *            sets up the consumer's view of the queue); pairs with A_ACK
 *            (seq_cst, bus/regs.h): a driver that reads CMDQEN 0 knows we
 *            no longer touch queue memory or call its GERROR line.  seq_cst
 *            on both sides, so that a start racing a disable cannot let the
 *            consumer miss the disable (see hwt_smmu_dev_start()).
 *   A_PROD   acquire load of PROD; pairs with R_PROD: every entry before
 *            PROD is written when we read it.
 *   R_CONS   release store of CONS; pairs with A_CONS: the commands behind
 *            CONS executed, their effects (cache model updates, handler side
 *            effects) are visible, the statistics count them (relaxed
 *            stores made before), and we will never read their slots again
 *            (nor may handler_batch, which saw them in place).
 *   R_MSI    release store of the CMD_SYNC MSI; pairs with A_MSI (the MSI
 *            waiter's load of its slot word).  Made after R_CONS up to the
 *            sync and before R_CONS past it (see cmd_sync()).
 *   R_GERR   release store of GERROR (after CONS.ERR); pairs with A_GERR.
 *   A_GERRN  acquire load of GERRORN; pairs with R_GERRN: an entry the
 *            driver rewrote before acknowledging is visible when we re-fetch.
 *   A_IRQ    acquire load of the GERROR line; pairs with R_IRQ (src/bus/bus.c).
 *   S1..S4   the doorbell sleep with its barrier SB (bus/regs.h); V1/V2 the
 *            SEV (hwt__reg_sev).
 *
 * Steps of the consumer loop:
 *   1. Requests: stop, pause.  A_CR0: a changed CR0.CMDQEN enables or
 *      disables the queue and is acknowledged (R_ACK), also while paused
 *      and between two commands.
 *   2. A_PROD.  Nothing new (or the queue disabled): spin spin_ns (auto:
 *      at least one futex wake-up, measured in device.c), then sleep
 *      (bounded) and re-check.
 *   3. The run from CONS to that PROD, in segments: contiguous entries
 *      (never across the wrap nor past PROD), at most seg_max of them
 *      (hwt__dev_seg_max) for the per-command executors.  Before each
 *      segment: requests (stop, pause, injected abort; one relaxed load of
 *      ctl, a line written only by those requests) and CR0 (a relaxed load
 *      of a line the driver writes only to enable or disable), and the
 *      prefetch window moved along, never past PROD.  Then fetch the
 *      little-endian dwords and execute: per command (handler or the
 *      built-in executor) or one handler_batch call for the commands
 *      before the next CMD_SYNC.
 *   4. Publish CONS (R_CONS) at the end of the run, at each CMD_SYNC, on an
 *      error, when a request or CR0 interrupts the run, and every
 *      cons_batch commands if that is not 0.  A segment's commands are
 *      added to the statistics once, after it and so before any R_CONS
 *      covering them: whoever saw CONS past a command (A_CONS) sees it
 *      counted.
 *   5. CMD_SYNC: R_CONS up to the sync, its signal (MSI write R_MSI), R_CONS
 *      past the sync; or the wired-IRQ callback or SEV after R_CONS.
 *   6. Error: CONS.ERR (R_CONS), GERROR toggled (R_GERR), GERROR line, then
 *      wait for GERRORN (A_GERRN), clear CONS.ERR and re-fetch at CONS.  A
 *      pause interrupts the wait; the error stays pending (err_pending) and
 *      the wait resumes without a second interrupt.  After a stop or a
 *      disable, the next enable raises the unacknowledged error again.
 *
 * The hot path takes no lock and makes no system call: counters are plain
 * load + store by the consumer only, once per segment or CONS store, the
 * cache models' lock is taken only for invalidations when the models hold
 * entries.
 */
#include "device/impl.h"
#include "arch/arch.h"
#include "common/futex.h"
#include "common/time.h"

#include <endian.h>
#include <errno.h>
#include <sched.h>

#define SEG_MAX 32u           /* per-command executors: entries per check */
#define COST_SLICE_NS 100000u /* with cmd_cost_ns: cost spent per check at most */
#define SLEEP_NS 5000000u     /* every doorbell sleep is at most this */
#define ERR_SLEEP_NS 1000000u /* sleeps while waiting for GERRORN */
#define YIELD_AFTER_NS 2000u  /* idle spinning longer than this also yields */

/* Queue entries are little-endian, as is every supported host: a run of
 * them is handed to handler_batch in place. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "queue entries are read in place");

/* ---- small helpers ------------------------------------------------------ */

static void busy_ns(unsigned ns)
{
	uint64_t end = hwt__now_ns() + ns;

	while (hwt__now_ns() < end)
		hwt__cpu_relax();
}

static inline uint32_t ctl_load(struct hwt_smmu_dev *dev)
{
	return atomic_load_explicit(&dev->ctl, memory_order_relaxed);
}

/* WRP|IDX k entries after p (bus/queue.h, as the driver counts). */
static inline uint32_t cons_add(const struct hwt_smmu_dev *dev, uint32_t p, uint32_t k)
{
	return hwt__q_inc(dev->shift, p, k);
}

/* Did the driver write CR0 since we last acted on it?  A plain look, from
 * the consumer's hot loop; A_CR0 follows at the top of the main loop. */
static inline bool cr0_changed(struct hwt_smmu_dev *dev)
{
	return atomic_load_explicit(&dev->regs.cr0, memory_order_relaxed) != dev->cr0;
}

/* ---- signals ------------------------------------------------------------ */

static void sev(struct hwt_smmu_dev *dev)
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

static void not_full_sev(struct hwt_smmu_dev *dev)
{
	dev->full_seen = false;
	if ((dev->cfg.idr0 & HWT_SMMU_IDR0_SEV) && !dev->cfg.no_sev_on_not_full) {
		if (dev->cfg.sev_cost_ns)
			busy_ns(dev->cfg.sev_cost_ns);
		sev(dev);
	}
}

/*
 * Publish CONS (R_CONS).  err is CONS.ERR.  If the queue was full at the
 * last PROD read, this update makes it not full: SEV (unless the MMU-600
 * erratum mode).  "Full" is judged at the PROD read (A_PROD), not at this
 * store: a queue that fills between the two gets no SEV for this update;
 * its waiters' sleeps are bounded, so that costs latency, never progress.
 */
static inline void publish_cons(struct hwt_smmu_dev *dev, uint32_t cons, uint32_t err)
{
	/* counted before R_CONS: a reader that saw this CONS sees the count */
	hwt__st_add(&dev->st.cons_updates, 1);
	atomic_store_explicit(&dev->regs.cons,
			      dev->cons_ovf | err << HWT_SMMU_CONS_ERR_SHIFT | cons,
			      memory_order_release); /* R_CONS: pairs with A_CONS (bus/regs.h) */
	dev->published = cons;
	if (__builtin_expect(dev->full_seen, 0))
		not_full_sev(dev);
}

/* ---- pause and doorbell --------------------------------------------------- */

/*
 * Sit still while PAUSE is set.  parked = 1 tells hwt_smmu_dev_pause() that
 * no command is in flight; seq_cst on both sides of the ctl/parked pair.
 * CR0 is still acted on (enabling and disabling touch no queue memory).
 * Sleeps on the doorbell (S1..S4 of bus/regs.h), which resume, stop and a
 * CR0 write ring.  Returns false if asked to stop.
 */
static bool park(struct hwt_smmu_dev *dev)
{
	for (;;) {
		uint64_t sleep;
		uint32_t c, cr0, db;

		atomic_store_explicit(&dev->parked, 1, memory_order_seq_cst);
		cr0 = atomic_load_explicit(&dev->regs.cr0, memory_order_seq_cst); /* A_CR0 */
		if (cr0 != dev->cr0)
			hwt__dev_cmdq_enable(dev, cr0); /* R_ACK */
		c = atomic_load_explicit(&dev->ctl, memory_order_seq_cst);
		if (c & HWT__CTL_STOP)
			return false;
		if (!(c & HWT__CTL_PAUSE)) {
			atomic_store_explicit(&dev->parked, 0, memory_order_seq_cst);
			return true;
		}
		atomic_store_explicit(&dev->regs.dev_sleeping, 1, memory_order_seq_cst); /* S1 */
		sleep = hwt__reg_sleeper_barrier(&dev->regs, SLEEP_NS);                  /* SB */
		db = atomic_load_explicit(&dev->regs.db, memory_order_seq_cst);          /* S2 */
		if (atomic_load_explicit(&dev->ctl, memory_order_seq_cst) == c &&        /* S3 */
		    atomic_load_explicit(&dev->regs.cr0, memory_order_seq_cst) == dev->cr0)
			hwt__futex_wait(&dev->regs.db, db, sleep);                       /* S4 */
		atomic_store_explicit(&dev->regs.dev_sleeping, 0, memory_order_relaxed);
	}
}

/* Anything for the consumer besides new commands at PROD? */
static bool doorbell_other(struct hwt_smmu_dev *dev, uint32_t gerrorn, memory_order mo)
{
	return atomic_load_explicit(&dev->regs.gerrorn, mo) != gerrorn ||
	       atomic_load_explicit(&dev->regs.cr0, mo) != dev->cr0 ||
	       (atomic_load_explicit(&dev->ctl, mo) & (HWT__CTL_STOP | HWT__CTL_PAUSE));
}

/*
 * Nothing to do at PROD == seen: spin spin_ns (yielding the CPU now and then
 * once idle for YIELD_AFTER_NS, so producers sharing this CPU are not held
 * back for the whole budget), then sleep once (S1..S4, at most max_sleep).
 * Also returns when GERRORN differs from gerrorn, CR0 changes, or stop/pause
 * is requested.  The caller re-checks everything after this returns.
 */
static void doorbell_wait(struct hwt_smmu_dev *dev, uint32_t seen, uint32_t gerrorn,
			  uint64_t max_sleep)
{
	uint64_t start = 0;
	uint32_t db;

	for (unsigned i = 1;; i++) {
		if (atomic_load_explicit(&dev->regs.prod, memory_order_relaxed) != seen ||
		    doorbell_other(dev, gerrorn, memory_order_relaxed))
			return;
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
	atomic_store_explicit(&dev->regs.dev_sleeping, 1, memory_order_seq_cst);           /* S1 */
	max_sleep = hwt__reg_sleeper_barrier(&dev->regs, max_sleep);                       /* SB */
	db = atomic_load_explicit(&dev->regs.db, memory_order_seq_cst);                    /* S2 */
	if (atomic_load_explicit(&dev->regs.prod, memory_order_seq_cst) == seen &&         /* S3 */
	    !doorbell_other(dev, gerrorn, memory_order_seq_cst)) {
		hwt__st_add(&dev->st.sleeps, 1);
		hwt__futex_wait(&dev->regs.db, db, max_sleep);                             /* S4 */
	}
	atomic_store_explicit(&dev->regs.dev_sleeping, 0, memory_order_relaxed);
}

/* ---- errors ------------------------------------------------------------- */

/*
 * Command error at cons: CONS.ERR (R_CONS), GERROR.CMDQ_ERR toggled (unless
 * already pending), the GERROR line; the acknowledgement is awaited by
 * wait_error_ack().
 */
static void raise_error(struct hwt_smmu_dev *dev, uint32_t cons, uint32_t code)
{
	uint32_t g = atomic_load_explicit(&dev->regs.gerror, memory_order_relaxed);

	hwt__st_add(&dev->st.errors, 1);
	dev->cons = cons;
	dev->err_pending = true;
	publish_cons(dev, cons, code);                                       /* R_CONS */
	if (!((g ^ atomic_load_explicit(&dev->regs.gerrorn, memory_order_relaxed)) &
	      HWT_SMMU_GERROR_CMDQ_ERR))
		/* R_GERR: pairs with A_GERR: CONS.ERR is visible with GERROR. */
		atomic_store_explicit(&dev->regs.gerror, g ^ HWT_SMMU_GERROR_CMDQ_ERR,
				      memory_order_release);
	raise_gerror_irq(dev);
}

/*
 * Wait for GERRORN to acknowledge the pending error, then clear CONS.ERR:
 * true.  False if a stop, pause or CR0 change comes first (the error stays
 * pending: the main loop comes back here, or a disable drops it).
 */
static bool wait_error_ack(struct hwt_smmu_dev *dev)
{
	for (;;) {
		uint32_t n = atomic_load_explicit(&dev->regs.gerrorn, memory_order_acquire); /* A_GERRN */
		uint32_t g = atomic_load_explicit(&dev->regs.gerror, memory_order_relaxed);

		if (!((g ^ n) & HWT_SMMU_GERROR_CMDQ_ERR))
			break;
		if ((ctl_load(dev) & (HWT__CTL_STOP | HWT__CTL_PAUSE)) || cr0_changed(dev))
			return false;
		doorbell_wait(dev, atomic_load_explicit(&dev->regs.prod, memory_order_relaxed), n,
			      ERR_SLEEP_NS);
	}
	dev->err_pending = false;
	publish_cons(dev, dev->cons, HWT_SMMU_CERROR_NONE); /* R_CONS: ERR cleared */
	return true;
}

/* Just enabled: an error left unacknowledged (before a stop, or by a
 * previous queue) keeps the queue stopped until it is acknowledged; the
 * new owner gets the interrupt. */
static void pending_error(struct hwt_smmu_dev *dev)
{
	uint32_t g = atomic_load_explicit(&dev->regs.gerror, memory_order_relaxed);
	uint32_t n = atomic_load_explicit(&dev->regs.gerrorn, memory_order_acquire); /* A_GERRN */
	uint32_t cons = atomic_load_explicit(&dev->regs.cons, memory_order_relaxed);

	if ((g ^ n) & HWT_SMMU_GERROR_CMDQ_ERR) {
		raise_error(dev, dev->cons, cons >> HWT_SMMU_CONS_ERR_SHIFT & HWT_SMMU_CONS_ERR_MASK);
		wait_error_ack(dev);
	}
}

/* GERROR.MSI_CMDQ_ABT_ERR: the sync completed but its MSI had no target. */
static void msi_abort(struct hwt_smmu_dev *dev)
{
	uint32_t g = atomic_load_explicit(&dev->regs.gerror, memory_order_relaxed);

	hwt__st_add(&dev->st.errors, 1);
	if (!((g ^ atomic_load_explicit(&dev->regs.gerrorn, memory_order_relaxed)) &
	      HWT_SMMU_GERROR_MSI_CMDQ_ABT))
		atomic_store_explicit(&dev->regs.gerror, g ^ HWT_SMMU_GERROR_MSI_CMDQ_ABT,
				      memory_order_release); /* R_GERR */
	raise_gerror_irq(dev);
}

/* ---- execution ---------------------------------------------------------- */

/*
 * An injected ATC_INV timeout (hwt_smmu_dev_inject) hits the first ATC_INV
 * executed after it: if dw is one and the request is in ctl (NULL: load it
 * now), take the request and fail the next CMD_SYNC.  True if it hit dw.
 */
static bool atc_timeout_take(struct hwt_smmu_dev *dev, const uint64_t dw[2], const uint32_t *ctl)
{
	if (hwt_smmu_opcode(dw) != HWT_SMMU_OP_ATC_INV ||
	    !((ctl ? *ctl : ctl_load(dev)) & HWT__CTL_INJ_ATC))
		return false;
	atomic_fetch_and_explicit(&dev->ctl, ~HWT__CTL_INJ_ATC, memory_order_relaxed);
	dev->atc_fail = true;
	return true;
}

/* Execute one command other than CMD_SYNC.  Returns a CERROR. */
static uint32_t execute(struct hwt_smmu_dev *dev, const uint64_t dw[2])
{
	struct hwt_smmu_cmd cmd;
	int r;

	if (dev->cfg.cmd_cost_ns)
		busy_ns(dev->cfg.cmd_cost_ns);
	atc_timeout_take(dev, dw, NULL);
	if (dev->cfg.handler) {
		r = dev->cfg.handler(dev->cfg.handler_ctx, dw);
		return r >= HWT_SMMU_CERROR_NONE && r <= HWT_SMMU_CERROR_ATC_INV_SYNC
			       ? (uint32_t)r
			       : HWT_SMMU_CERROR_ILL;
	}
	/* decode rejects reserved bits, SSec (dw0 bit 10) among them: there is
	 * no secure side here. */
	if (hwt_smmu_decode(dw, &cmd) < 0)
		return HWT_SMMU_CERROR_ILL;
	/* Relaxed: an insert that this command must see happened before the
	 * PROD write that published it (A_PROD). */
	if (atomic_load_explicit(&dev->model.count, memory_order_relaxed))
		hwt__st_add(&dev->st.invalidated, hwt__model_exec(&dev->model, &cmd));
	return HWT_SMMU_CERROR_NONE;
}

/* The MSI target of a CMD_SYNC, or NULL (unmapped: an MSI abort). */
static void *msi_target(struct hwt_smmu_dev *dev, uint64_t msiaddr, unsigned len)
{
	if (msiaddr - dev->q_iova < dev->q_bytes && dev->q_bytes - (msiaddr - dev->q_iova) >= len)
		return (char *)dev->q + (msiaddr - dev->q_iova);
	return hwt__dev_translate(dev, msiaddr, len);
}

static void msi_write(struct hwt_smmu_dev *dev, void *p, unsigned len, uint32_t msidata)
{
	if (dev->cfg.msi_cost_ns)
		busy_ns(dev->cfg.msi_cost_ns);
	hwt__st_add(&dev->st.msi_writes, 1);
	if (len == 8 && !((uintptr_t)p & 7)) {
		/* Hi16xx: MSIDATA plus 32 zero bits in one store. */
		atomic_store_explicit((_Atomic uint64_t *)p, htole64(msidata),
				      memory_order_release); /* R_MSI: pairs with A_MSI */
	} else {
		if (len == 8) /* unaligned quirk target: high word first */
			atomic_store_explicit((_Atomic uint32_t *)p + 1, 0, memory_order_relaxed);
		atomic_store_explicit((_Atomic uint32_t *)p, htole32(msidata),
				      memory_order_release); /* R_MSI: pairs with A_MSI */
	}
}

#define SYNC_GET(dw, f) hwt_smmu_get(dw, HWT_SMMU_OP_CMD_SYNC, HWT_SMMU_F_##f)

/*
 * CMD_SYNC at cons: everything before it has executed.  Returns a CERROR
 * (CONS unchanged).
 *
 * With an MSI, CONS first reaches the sync (everything before it done),
 * then the MSI lands, and only then CONS passes the sync.  So whoever sees
 * CONS past the sync knows the MSI write is done: a waiter that gave up
 * (timeout, stop) and refreshed its shadow cons from CONS can never have
 * the slot reused under a late MSI write; and the MSI waiter, which counts
 * the sync's own slot as not yet free, never puts the shadow cons ahead of
 * CONS.  (CONS past the sync before the MSI with the waiter counting the
 * slot free would be the other consistent order; it loses the first
 * property.)
 */
static uint32_t cmd_sync(struct hwt_smmu_dev *dev, const uint64_t dw[2], uint32_t cons)
{
	uint32_t cs = (uint32_t)SYNC_GET(dw, CS);
	uint64_t msiaddr = SYNC_GET(dw, MSIADDR);
	uint32_t msidata = (uint32_t)SYNC_GET(dw, MSIDATA);
	unsigned len = dev->cfg.msi_64bit ? 8 : 4;
	bool msi = cs == HWT_SMMU_CS_IRQ && msiaddr && (dev->cfg.idr0 & HWT_SMMU_IDR0_MSI);
	void *p = NULL;

	/* Only bits of the sync's own fields may be set (decode tells why
	 * not); CS 3 is reserved. */
	if ((dw[0] & ~dev->sync_ok[0]) | (dw[1] & ~dev->sync_ok[1]) || cs == 3)
		return HWT_SMMU_CERROR_ILL;
	if (dev->atc_fail) {
		dev->atc_fail = false;
		return HWT_SMMU_CERROR_ATC_INV_SYNC;
	}
	if (cs == HWT_SMMU_CS_SEV && dev->cfg.sev_cost_ns)
		busy_ns(dev->cfg.sev_cost_ns);

	/* counted before R_CONS: a waiter that saw CONS sees the counts */
	hwt__st_add(&dev->st.cmds, 1);
	hwt__st_add(&dev->st.syncs, 1);
	if (msi) {
		p = msi_target(dev, msiaddr, len);
		if (p) {
			if (dev->published != cons)
				publish_cons(dev, cons, HWT_SMMU_CERROR_NONE); /* R_CONS */
			msi_write(dev, p, len, msidata);                       /* R_MSI */
		}
	}
	publish_cons(dev, cons_add(dev, cons, 1), HWT_SMMU_CERROR_NONE); /* R_CONS */

	if (msi) {
		if (!p)
			msi_abort(dev);
	} else if (cs == HWT_SMMU_CS_IRQ) {
		if (dev->cfg.sync_irq) {
			hwt__st_add(&dev->st.sync_irqs, 1);
			dev->cfg.sync_irq(dev->cfg.sync_irq_ctx);
		}
	} else if (cs == HWT_SMMU_CS_SEV && (dev->cfg.idr0 & HWT_SMMU_IDR0_SEV)) {
		sev(dev);
	}
	return HWT_SMMU_CERROR_NONE;
}

uint32_t hwt__dev_seg_max(const struct hwt_smmu_dev_config *cfg)
{
	uint32_t n = cfg->cmd_cost_ns ? COST_SLICE_NS / cfg->cmd_cost_ns : SEG_MAX;

	return n ? n : 1;
}

/*
 * Execute up to n contiguous entries from e, the first at cons, with the
 * per-command executors, publishing CONS after every cons_batch-th command
 * (*unpublished counts those since the last CONS store).  Stops before a
 * CMD_SYNC and at an error (*err, the failing entry not executed).
 * Returns the commands executed, all counted in the statistics.
 */
static unsigned exec_each(struct hwt_smmu_dev *dev, const uint64_t *e, unsigned n, uint32_t cons,
			  uint32_t *unpublished, uint32_t *err)
{
	const unsigned batch = dev->cfg.cons_batch; /* 0: never equal to unpub */
	unsigned i, counted = 0, unpub = *unpublished;

	for (i = 0; i < n; i++, e += 2) {
		uint64_t dw[2] = { le64toh(e[0]), le64toh(e[1]) };

		if (hwt_smmu_opcode(dw) == HWT_SMMU_OP_CMD_SYNC)
			break;
		*err = execute(dev, dw);
		if (*err)
			break;
		if (++unpub == batch) {
			hwt__st_add(&dev->st.cmds, i + 1 - counted); /* before R_CONS */
			counted = i + 1;
			publish_cons(dev, cons_add(dev, cons, i + 1), HWT_SMMU_CERROR_NONE);
			unpub = 0;
		}
	}
	if (i > counted)
		hwt__st_add(&dev->st.cmds, i - counted);
	*unpublished = unpub;
	return i;
}

/*
 * The same with handler_batch: one call for the entries before the first
 * CMD_SYNC among the n (in place), which end at the next cons_batch
 * publication.  ctl is the
 * request word read before this segment: an ATC timeout injected before it
 * hits an ATC_INV of this call (as execute() does per command).
 */
static unsigned exec_batch(struct hwt_smmu_dev *dev, const uint64_t *e, unsigned n, uint32_t cons,
			   uint32_t ctl, uint32_t *unpublished, uint32_t *err)
{
	const unsigned batch = dev->cfg.cons_batch;
	const uint64_t(*cmds)[2] = (const uint64_t(*)[2])e;
	unsigned m, done = 0;
	int r;

	for (m = 0; m < n; m++) {
		const uint64_t dw0[2] = { le64toh(e[2 * m]), 0 };

		if (hwt_smmu_opcode(dw0) == HWT_SMMU_OP_CMD_SYNC)
			break;
	}
	if (!m)
		return 0;
	if (dev->cfg.cmd_cost_ns)
		busy_ns(m * dev->cfg.cmd_cost_ns); /* m <= seg_max: at most max(cost, slice) */
	r = dev->cfg.handler_batch(dev->cfg.handler_ctx, cmds, m, &done);
	if (r == HWT_SMMU_CERROR_NONE) {
		done = m;
	} else {
		*err = r > HWT_SMMU_CERROR_NONE && r <= HWT_SMMU_CERROR_ATC_INV_SYNC
			       ? (uint32_t)r
			       : HWT_SMMU_CERROR_ILL;
		if (done >= m)
			done = m - 1;
	}
	if (__builtin_expect(ctl & HWT__CTL_INJ_ATC, 0)) {
		for (unsigned i = 0; i < done + (r != HWT_SMMU_CERROR_NONE); i++)
			if (atc_timeout_take(dev, cmds[i], &ctl))
				break;
	}
	if (done)
		hwt__st_add(&dev->st.cmds, done); /* before R_CONS */
	*unpublished += done;
	if (batch && *unpublished >= batch) {
		publish_cons(dev, cons_add(dev, cons, done), HWT_SMMU_CERROR_NONE); /* R_CONS */
		*unpublished = 0;
	}
	return done;
}

/*
 * Execute the run from dev->cons up to prod (WRP|IDX, as read by A_PROD),
 * or until asked to stop, pause or disable.  Leaves CONS published and
 * every executed command counted.
 */
static void consume(struct hwt_smmu_dev *dev, uint32_t prod)
{
	const unsigned shift = dev->shift, batch = dev->cfg.cons_batch;
	const uint32_t start = dev->cons, total = hwt__q_pos(shift, prod - start);
	const uint32_t entries = 1u << shift;
	uint32_t cons = start, unpublished = 0, pf = 0; /* pf: entries from start prefetched */

	while (cons != prod) {
		uint32_t c = ctl_load(dev), err = HWT_SMMU_CERROR_NONE;
		uint32_t left = hwt__q_pos(shift, prod - cons), at = hwt__q_pos(shift, cons - start);
		uint32_t n = entries - hwt__q_idx(shift, cons), pf_end;
		const uint64_t *e = dev->q + 2 * hwt__q_idx(shift, cons);
		unsigned k;

		if (c & (HWT__CTL_STOP | HWT__CTL_PAUSE) || cr0_changed(dev))
			break;
		if (__builtin_expect(c & HWT__CTL_INJ_ABT, 0)) {
			atomic_fetch_and_explicit(&dev->ctl, ~HWT__CTL_INJ_ABT, memory_order_relaxed);
			err = HWT_SMMU_CERROR_ABT;
			goto error;
		}
		/* the segment: up to the wrap and PROD; per command, seg_max
		 * entries; for handler_batch, up to the next cons_batch
		 * publication */
		if (n > left)
			n = left;
		if (!dev->cfg.handler_batch || dev->cfg.cmd_cost_ns)
			n = n < dev->seg_max ? n : dev->seg_max;
		if (dev->cfg.handler_batch) {
			if (batch && n > batch - unpublished)
				n = batch - unpublished;
		}
		/* The producer just wrote these entries: fetch their lines (4
		 * entries each) in parallel rather than one miss per line as we
		 * meet them (measured: +35% commands/s at batches of 8 and 32),
		 * up to hwt__dev_prefetch_end(), never past PROD. */
		pf_end = hwt__dev_prefetch_end(at, n, total);
		for (; pf < pf_end; pf += 4)
			__builtin_prefetch(dev->q + 2 * hwt__q_idx(shift, start + pf));
		/* executed commands are counted (once per segment or CONS store)
		 * before any R_CONS covering them */
		k = dev->cfg.handler_batch ? exec_batch(dev, e, n, cons, c, &unpublished, &err)
					   : exec_each(dev, e, n, cons, &unpublished, &err);
		cons = cons_add(dev, cons, k);
		if (err)
			goto error;
		if (k < n) { /* a CMD_SYNC at cons */
			uint64_t dw[2];

			e += 2 * k;
			dw[0] = le64toh(e[0]);
			dw[1] = le64toh(e[1]);
			err = cmd_sync(dev, dw, cons); /* R_CONS */
			if (err)
				goto error;
			cons = cons_add(dev, cons, 1);
			unpublished = 0;
		}
		continue;
error:
		unpublished = 0;
		raise_error(dev, cons, err); /* R_CONS */
		if (!wait_error_ack(dev))
			return; /* dev->cons is cons; the main loop resumes the wait */
		/* resume at CONS: the loop re-fetches the (maybe rewritten) entry */
	}
	if (unpublished)
		publish_cons(dev, cons, HWT_SMMU_CERROR_NONE); /* R_CONS: end of the run */
	dev->cons = cons;
}

void *hwt__dev_consumer(void *arg)
{
	struct hwt_smmu_dev *dev = arg;

	for (;;) {
		uint32_t c = ctl_load(dev), cr0, raw, prod;

		if (c & HWT__CTL_STOP)
			break;
		if (c & HWT__CTL_PAUSE) {
			if (!park(dev))
				break;
			continue;
		}
		cr0 = atomic_load_explicit(&dev->regs.cr0, memory_order_seq_cst); /* A_CR0 */
		if (cr0 != dev->cr0) {
			hwt__dev_cmdq_enable(dev, cr0); /* R_ACK */
			continue;
		}
		raw = atomic_load_explicit(&dev->regs.prod, memory_order_acquire); /* A_PROD */
		if (!dev->on) {
			doorbell_wait(dev, raw,
				      atomic_load_explicit(&dev->regs.gerrorn, memory_order_relaxed),
				      SLEEP_NS);
			continue;
		}
		if (dev->check_error) {
			dev->check_error = false;
			pending_error(dev);
			continue;
		}
		if (dev->err_pending) {
			wait_error_ack(dev);
			continue;
		}
		prod = hwt__q_pos(dev->shift, raw);
		if (prod == dev->cons) {
			doorbell_wait(dev, raw,
				      atomic_load_explicit(&dev->regs.gerrorn, memory_order_relaxed),
				      SLEEP_NS);
			continue;
		}
		if (hwt__q_full(dev->shift, prod, dev->cons))
			dev->full_seen = true;
		consume(dev, prod);
	}
	return NULL;
}
