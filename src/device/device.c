/* SPDX-License-Identifier: MIT */
/*
 * The software SMMU: registers, DMA regions and the command-queue consumer.
 *
 * Ordering contract of the consumer (labels name the partner on the other
 * side of the register file; see device/regs.h and src/cmdq/cmdq.c):
 *
 *   A_PROD   acquire load of PROD; pairs with D1 (the driver's seq_cst PROD
 *            store): every entry before PROD is written when we read it.
 *   R_CONS   release store of CONS; pairs with A_CONS (the driver's CONS
 *            read): the commands behind CONS executed, their effects (cache
 *            model updates, handler side effects) are visible, and we will
 *            never read their slots again.
 *   R_MSI    release store of the CMD_SYNC MSI; pairs with A_MSI (the MSI
 *            waiter's load of its slot word).  Made after R_CONS of the same
 *            sync: CONS first, then the MSI (see DESIGN.md, model checking).
 *   R_GERR   release store of GERROR (after CONS.ERR); pairs with A_GERR
 *            (the driver's GERROR read in its error handler).
 *   A_GERRN  acquire load of GERRORN; pairs with the driver's seq_cst store
 *            in hwt__reg_write_gerrorn(): an entry the driver rewrote before
 *            acknowledging is visible when we re-fetch it.
 *   A_MAP / R_MAP  DMA region published by dma_map, used by translation.
 *   S1/S2/S3 the doorbell sleep (regs.h); V1/V2 the SEV (hwt__reg_sev).
 *
 * Steps of the consumer loop:
 *   1. A_PROD.  Nothing new: spin spin_ns, then sleep (bounded) and re-check.
 *   2. For each entry from CONS to PROD: check requests (stop, pause,
 *      injected abort), fetch the two little-endian dwords, execute.
 *   3. Publish CONS (R_CONS) every cons_batch commands, at each CMD_SYNC, on
 *      an error and when the entries seen at step 1 are done.
 *   4. CMD_SYNC: R_CONS past the sync, then its signal (MSI write R_MSI,
 *      wired-IRQ callback or SEV).
 *   5. Error: CONS.ERR (R_CONS), GERROR toggled (R_GERR), GERROR interrupt,
 *      then wait for GERRORN (A_GERRN), clear CONS.ERR and re-fetch at CONS.
 *
 * The hot path takes no lock and makes no system call: counters are plain
 * load + store by the consumer only, the cache models' lock is taken only
 * for invalidations when the models hold entries.
 */
#include "device/impl.h"
#include "arch/arch.h"
#include "common/futex.h"
#include "common/time.h"

#include <endian.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define PREFETCH_AHEAD 128u  /* entries fetched ahead of the one executing */
#define SLEEP_NS 5000000u     /* every doorbell sleep is at most this */
#define ERR_SLEEP_NS 1000000u /* sleeps while waiting for GERRORN */
#define PAUSE_WAIT_NS 1000000000ull
#define YIELD_AFTER_NS 2000u  /* idle spinning longer than this also yields */
#define REGION_SHIFT 36        /* IOVA = (slot + 1) << 36 | low 30 bits of VA */
#define REGION_KEEP ((1ull << 30) - 1)

/* ---- small helpers ------------------------------------------------------ */

/* Consumer-only counter: plain read-modify-write, no lock prefix. */
static inline void st_add(_Atomic uint64_t *c, uint64_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

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

/* ---- configuration ------------------------------------------------------ */

void hwt_smmu_dev_config_default(struct hwt_smmu_dev_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->idr0 = HWT_SMMU_IDR0_MSI | HWT_SMMU_IDR0_SEV | HWT_SMMU_IDR0_COHACC;
	cfg->cmdqs = 8;
	cfg->cpu = -1;
	cfg->cons_batch = 1;
	cfg->spin_ns = 20000;
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
	if (c->cons_batch < 1 || c->cons_batch > HWT_SMMU_DEV_CONS_BATCH_MAX)
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

int hwt_smmu_dev_create(struct hwt_smmu_dev **out, const struct hwt_smmu_dev_config *cfg)
{
	struct hwt_smmu_dev *dev;
	size_t sz = (sizeof(*dev) + HWT__CACHELINE - 1) / HWT__CACHELINE * HWT__CACHELINE;
	int err;

	if (!out || !cfg)
		return -EINVAL;
	err = config_check(cfg);
	if (err)
		return err;
	dev = aligned_alloc(HWT__CACHELINE, sz);
	if (!dev)
		return -ENOMEM;
	memset(dev, 0, sz);
	dev->cfg = *cfg;
	dev->regs.idr0 = cfg->idr0;
	dev->regs.idr1 = (cfg->cmdqs & HWT_SMMU_IDR1_CMDQS_MASK) << HWT_SMMU_IDR1_CMDQS_SHIFT;
	sync_mask(dev->sync_ok);
	err = -pthread_mutex_init(&dev->lock, NULL);
	if (err) {
		free(dev);
		return err;
	}
	err = hwt__cache_init(&dev->cache);
	if (err) {
		pthread_mutex_destroy(&dev->lock);
		free(dev);
		return err;
	}
	*out = dev;
	return 0;
}

void hwt_smmu_dev_get_config(const struct hwt_smmu_dev *dev, struct hwt_smmu_dev_config *cfg)
{
	*cfg = dev->cfg;
}

struct hwt__smmu_regs *hwt__smmu_dev_regs(struct hwt_smmu_dev *dev)
{
	return &dev->regs;
}

void hwt__smmu_dev_set_gerror_irq(struct hwt_smmu_dev *dev, void (*fn)(void *ctx), void *ctx)
{
	/* ctx first, then fn with release; the consumer loads fn with acquire
	 * (A_IRQ pairs with this R_IRQ) and then ctx. */
	atomic_store_explicit(&dev->gerror_ctx, ctx, memory_order_relaxed);
	atomic_store_explicit(&dev->gerror_fn, fn, memory_order_release); /* R_IRQ */
}

/* ---- DMA regions -------------------------------------------------------- */

int hwt__smmu_dev_dma_map(struct hwt_smmu_dev *dev, void *va, size_t len, uint64_t *iova)
{
	struct hwt__region *r;
	unsigned slot;
	int ret = 0;

	if (!va || !iova || ((uintptr_t)va & 3) || !len || len > HWT__SMMU_DEV_REGION_MAX)
		return -EINVAL;
	pthread_mutex_lock(&dev->lock);
	/* While the consumer runs it may translate a stale IOVA at any time, so
	 * an unmapped slot is reused only while the device is stopped (queues
	 * are attached then: create/destroy cycles never run out of slots). */
	slot = dev->nregions;
	for (unsigned i = 0; !dev->running && i < dev->nregions && slot == dev->nregions; i++)
		if (!atomic_load_explicit(&dev->regions[i].live, memory_order_relaxed))
			slot = i;
	if (slot >= HWT__SMMU_DEV_REGIONS) {
		ret = -ENOSPC;
		goto out;
	}
	r = &dev->regions[slot];
	r->iova = (uint64_t)(slot + 1) << REGION_SHIFT | ((uintptr_t)va & REGION_KEEP);
	r->len = len;
	r->va = va;
	atomic_store_explicit(&r->live, 1, memory_order_release); /* R_MAP: pairs with A_MAP */
	if (slot == dev->nregions)
		dev->nregions++;
	*iova = r->iova;
out:
	pthread_mutex_unlock(&dev->lock);
	return ret;
}

/* Any thread.  A slot is reused only while the consumer is stopped, so a
 * concurrent map never changes the fields of a slot the consumer reads. */
static void *translate(struct hwt_smmu_dev *dev, uint64_t iova, uint64_t len)
{
	uint64_t slot = (iova >> REGION_SHIFT) - 1;
	struct hwt__region *r;

	if (slot >= HWT__SMMU_DEV_REGIONS)
		return NULL;
	r = &dev->regions[slot];
	if (!atomic_load_explicit(&r->live, memory_order_acquire)) /* A_MAP: pairs with R_MAP */
		return NULL;
	if (iova < r->iova || len > r->len || iova - r->iova > r->len - len)
		return NULL;
	return r->va + (iova - r->iova);
}

void *hwt__smmu_dev_dma_va(struct hwt_smmu_dev *dev, uint64_t iova, size_t len)
{
	return translate(dev, iova, len);
}

int hwt__smmu_dev_dma_unmap(struct hwt_smmu_dev *dev, uint64_t iova)
{
	uint64_t slot = (iova >> REGION_SHIFT) - 1;
	int ret = 0;

	pthread_mutex_lock(&dev->lock);
	if (!translate(dev, iova, 1)) {
		ret = -ENOENT;
	} else if (dev->running && ((dev->q_iova >> REGION_SHIFT) - 1) == slot) {
		ret = -EBUSY;
	} else {
		/* Release: pairs with nothing in particular; a racing translation
		 * either sees the region or not, as with a real unmap. */
		atomic_store_explicit(&dev->regions[slot].live, 0, memory_order_release);
	}
	pthread_mutex_unlock(&dev->lock);
	return ret;
}

/* ---- signals ------------------------------------------------------------ */

static void sev(struct hwt_smmu_dev *dev)
{
	/* Counted before the signal: whoever sees the signal sees the count. */
	st_add(&dev->st.sevs, 1);
	hwt__reg_sev(&dev->regs); /* V1, V2 */
}

static void raise_gerror_irq(struct hwt_smmu_dev *dev)
{
	void (*fn)(void *) = atomic_load_explicit(&dev->gerror_fn, memory_order_acquire); /* A_IRQ */

	if (fn)
		fn(atomic_load_explicit(&dev->gerror_ctx, memory_order_relaxed));
}

/*
 * Publish CONS (R_CONS).  err is CONS.ERR.  If the queue was full at the
 * last PROD read, this update makes it not full: SEV (unless the MMU-600
 * erratum mode).  "Full" is judged at the PROD read (A_PROD), not at this
 * store: a queue that fills between the two gets no SEV for this update;
 * its waiters' sleeps are bounded, so that costs latency, never progress.
 */
static void publish_cons(struct hwt_smmu_dev *dev, uint32_t cons, uint32_t err)
{
	atomic_store_explicit(&dev->regs.cons,
			      dev->cons_ovf | err << HWT_SMMU_CONS_ERR_SHIFT | cons,
			      memory_order_release); /* R_CONS: pairs with A_CONS in read_cons(),
						      * poll_until_consumed(), gerror_irq() (cmdq.c) */
	dev->published = cons;
	st_add(&dev->st.cons_updates, 1);
	if (dev->full_seen) {
		dev->full_seen = false;
		if ((dev->cfg.idr0 & HWT_SMMU_IDR0_SEV) && !dev->cfg.no_sev_on_not_full) {
			if (dev->cfg.sev_cost_ns)
				busy_ns(dev->cfg.sev_cost_ns);
			sev(dev);
		}
	}
}

static inline uint32_t cons_inc(const struct hwt_smmu_dev *dev, uint32_t cons)
{
	return (cons + 1) & dev->ptr_mask;
}

/* ---- pause / stop as seen by the consumer ------------------------------ */

/*
 * Sit still while PAUSE is set.  parked = 1 tells hwt_smmu_dev_pause() that
 * no command is in flight; seq_cst on both sides of the ctl/parked pair.
 * Returns false if asked to stop.
 */
static bool park(struct hwt_smmu_dev *dev)
{
	for (;;) {
		uint32_t c;

		atomic_store_explicit(&dev->parked, 1, memory_order_seq_cst);
		c = atomic_load_explicit(&dev->ctl, memory_order_seq_cst);
		if (c & HWT__CTL_STOP)
			return false;
		if (!(c & HWT__CTL_PAUSE)) {
			atomic_store_explicit(&dev->parked, 0, memory_order_seq_cst);
			return true;
		}
		hwt__futex_wait(&dev->ctl, c, SLEEP_NS);
	}
}

/* ---- doorbell ------------------------------------------------------------ */

/*
 * Nothing to do at PROD == seen: spin spin_ns (yielding the CPU now and then
 * once idle for YIELD_AFTER_NS, so producers sharing this CPU are not held
 * back for the whole budget), then sleep once (S1/S2/S3, at most max_sleep).
 * Also returns when GERRORN differs from gerrorn or stop/pause is requested.
 * The caller re-checks everything after this returns.
 */
static void doorbell_wait(struct hwt_smmu_dev *dev, uint32_t seen, uint32_t gerrorn,
			  uint64_t max_sleep)
{
	uint64_t start = 0;
	uint32_t db;

	for (unsigned i = 1;; i++) {
		if (atomic_load_explicit(&dev->regs.prod, memory_order_relaxed) != seen ||
		    atomic_load_explicit(&dev->regs.gerrorn, memory_order_relaxed) != gerrorn ||
		    (ctl_load(dev) & (HWT__CTL_STOP | HWT__CTL_PAUSE)))
			return;
		if (!(i & 63)) {
			uint64_t now = hwt__now_ns();

			if (!start)
				start = now;
			else if (now - start >= dev->cfg.spin_ns)
				break;
			else if (now - start >= YIELD_AFTER_NS)
				sched_yield(); /* a producer on this CPU may run */
		}
		hwt__cpu_relax();
	}
	atomic_store_explicit(&dev->regs.dev_sleeping, 1, memory_order_seq_cst);           /* S1 */
	db = atomic_load_explicit(&dev->regs.db, memory_order_seq_cst);                    /* S1b */
	if (atomic_load_explicit(&dev->regs.prod, memory_order_seq_cst) == seen &&         /* S2 */
	    atomic_load_explicit(&dev->regs.gerrorn, memory_order_seq_cst) == gerrorn &&
	    !(atomic_load_explicit(&dev->ctl, memory_order_seq_cst) &
	      (HWT__CTL_STOP | HWT__CTL_PAUSE))) {
		st_add(&dev->st.sleeps, 1);
		hwt__futex_wait(&dev->regs.db, db, max_sleep);                             /* S3 */
	}
	atomic_store_explicit(&dev->regs.dev_sleeping, 0, memory_order_relaxed);
}

/* ---- errors ------------------------------------------------------------- */

/*
 * Command error at cons: CONS.ERR, GERROR.CMDQ_ERR toggled, interrupt, then
 * wait for the acknowledgement and clear CONS.ERR.  Returns false if asked to
 * stop meanwhile (CONS.ERR and GERROR stay as they are).
 */
static bool cmdq_error(struct hwt_smmu_dev *dev, uint32_t cons, uint32_t code)
{
	uint32_t g = atomic_load_explicit(&dev->regs.gerror, memory_order_relaxed);

	st_add(&dev->st.errors, 1);
	publish_cons(dev, cons, code);                                       /* R_CONS */
	if (!((g ^ atomic_load_explicit(&dev->regs.gerrorn, memory_order_relaxed)) &
	      HWT_SMMU_GERROR_CMDQ_ERR))
		/* R_GERR: pairs with A_GERR (hwt__reg_read_gerror() in the
		 * driver's gerror_irq()): CONS.ERR is visible with GERROR. */
		atomic_store_explicit(&dev->regs.gerror, g ^ HWT_SMMU_GERROR_CMDQ_ERR,
				      memory_order_release);
	raise_gerror_irq(dev);

	for (;;) {
		uint32_t n = atomic_load_explicit(&dev->regs.gerrorn, memory_order_acquire); /* A_GERRN */
		uint32_t c;

		g = atomic_load_explicit(&dev->regs.gerror, memory_order_relaxed);
		if (!((g ^ n) & HWT_SMMU_GERROR_CMDQ_ERR))
			break;
		c = ctl_load(dev);
		if (c & HWT__CTL_STOP)
			return false;
		if ((c & HWT__CTL_PAUSE) && !park(dev))
			return false;
		doorbell_wait(dev, atomic_load_explicit(&dev->regs.prod, memory_order_relaxed), n,
			      ERR_SLEEP_NS);
	}
	publish_cons(dev, cons, HWT_SMMU_CERROR_NONE); /* R_CONS: ERR cleared */
	return true;
}

/* GERROR.MSI_CMDQ_ABT_ERR: the sync completed but its MSI had no target. */
static void msi_abort(struct hwt_smmu_dev *dev)
{
	uint32_t g = atomic_load_explicit(&dev->regs.gerror, memory_order_relaxed);

	st_add(&dev->st.errors, 1);
	if (!((g ^ atomic_load_explicit(&dev->regs.gerrorn, memory_order_relaxed)) &
	      HWT_SMMU_GERROR_MSI_CMDQ_ABT))
		atomic_store_explicit(&dev->regs.gerror, g ^ HWT_SMMU_GERROR_MSI_CMDQ_ABT,
				      memory_order_release); /* R_GERR */
	raise_gerror_irq(dev);
}

/* ---- execution ---------------------------------------------------------- */

/* Execute one command other than CMD_SYNC.  Returns a CERROR. */
static uint32_t execute(struct hwt_smmu_dev *dev, const uint64_t dw[2])
{
	struct hwt_smmu_cmd cmd;
	int r;

	if (dev->cfg.cmd_cost_ns)
		busy_ns(dev->cfg.cmd_cost_ns);
	if ((dw[0] & 0xff) == HWT_SMMU_OP_ATC_INV && (ctl_load(dev) & HWT__CTL_INJ_ATC)) {
		atomic_fetch_and_explicit(&dev->ctl, ~HWT__CTL_INJ_ATC, memory_order_relaxed);
		dev->atc_fail = true;
	}
	if (dev->cfg.handler) {
		r = dev->cfg.handler(dev->cfg.handler_ctx, dw);
		return r >= HWT_SMMU_CERROR_NONE && r <= HWT_SMMU_CERROR_ATC_INV_SYNC
			       ? (uint32_t)r
			       : HWT_SMMU_CERROR_ILL;
	}
	/* SSec (bit 10): no secure side here. */
	if ((dw[0] & (1u << 10)) || hwt_smmu_decode(dw, &cmd) < 0)
		return HWT_SMMU_CERROR_ILL;
	/* Relaxed: an insert that this command must see happened before the
	 * PROD write that published it (A_PROD). */
	if (atomic_load_explicit(&dev->cache.count, memory_order_relaxed))
		st_add(&dev->st.invalidated, hwt__cache_exec(&dev->cache, &cmd));
	return HWT_SMMU_CERROR_NONE;
}

/* The MSI target of a CMD_SYNC, or NULL (unmapped: an MSI abort). */
static void *msi_target(struct hwt_smmu_dev *dev, uint64_t msiaddr, unsigned len)
{
	if (msiaddr - dev->q_iova < dev->q_bytes && dev->q_bytes - (msiaddr - dev->q_iova) >= len)
		return (char *)dev->q + (msiaddr - dev->q_iova);
	return translate(dev, msiaddr, len);
}

static void msi_write(struct hwt_smmu_dev *dev, void *p, unsigned len, uint32_t msidata)
{
	if (dev->cfg.msi_cost_ns)
		busy_ns(dev->cfg.msi_cost_ns);
	st_add(&dev->st.msi_writes, 1);
	if (len == 8 && !((uintptr_t)p & 7)) {
		/* Hi16xx: MSIDATA plus 32 zero bits in one store. */
		atomic_store_explicit((_Atomic uint64_t *)p, htole64(msidata),
				      memory_order_release); /* R_MSI: pairs with A_MSI
							      * in poll_until_msi() */
	} else {
		if (len == 8) /* unaligned quirk target: high word first */
			atomic_store_explicit((_Atomic uint32_t *)p + 1, 0, memory_order_relaxed);
		atomic_store_explicit((_Atomic uint32_t *)p, htole32(msidata),
				      memory_order_release); /* R_MSI: pairs with A_MSI
							      * in poll_until_msi() */
	}
}

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
	uint32_t cs = (uint32_t)(dw[0] >> 12) & 3;
	uint64_t msiaddr = dw[1] & 0x000ffffffffffffcull;
	uint32_t msidata = (uint32_t)(dw[0] >> 32);
	unsigned len = dev->cfg.msi_64bit ? 8 : 4;
	void *p = NULL;

	if (((dw[0] & ~dev->sync_ok[0]) | (dw[1] & ~dev->sync_ok[1])) || cs == 3) {
		struct hwt_smmu_cmd cmd;

		if (hwt_smmu_decode(dw, &cmd) < 0 || (dw[0] & (1u << 10)) || cs == 3)
			return HWT_SMMU_CERROR_ILL;
	}
	if (dev->atc_fail) {
		dev->atc_fail = false;
		return HWT_SMMU_CERROR_ATC_INV_SYNC;
	}
	if (cs == HWT_SMMU_CS_SEV && dev->cfg.sev_cost_ns)
		busy_ns(dev->cfg.sev_cost_ns);

	/* counted before R_CONS: a waiter that saw CONS sees the counts */
	st_add(&dev->st.cmds, 1);
	st_add(&dev->st.syncs, 1);
	if (cs == HWT_SMMU_CS_IRQ && msiaddr && (dev->cfg.idr0 & HWT_SMMU_IDR0_MSI)) {
		p = msi_target(dev, msiaddr, len);
		if (p) {
			if (dev->published != cons)
				publish_cons(dev, cons, HWT_SMMU_CERROR_NONE); /* R_CONS */
			msi_write(dev, p, len, msidata);                       /* R_MSI */
		}
	}
	publish_cons(dev, cons_inc(dev, cons), HWT_SMMU_CERROR_NONE); /* R_CONS */

	if (cs == HWT_SMMU_CS_IRQ) {
		if (msiaddr && (dev->cfg.idr0 & HWT_SMMU_IDR0_MSI)) {
			if (!p)
				msi_abort(dev);
		} else if (dev->cfg.sync_irq) {
			st_add(&dev->st.sync_irqs, 1);
			dev->cfg.sync_irq(dev->cfg.sync_irq_ctx);
		}
	} else if (cs == HWT_SMMU_CS_SEV && (dev->cfg.idr0 & HWT_SMMU_IDR0_SEV)) {
		sev(dev);
	}
	return HWT_SMMU_CERROR_NONE;
}

/*
 * Execute from dev->cons up to prod (WRP|IDX).  Returns false if asked to
 * stop.  Leaves CONS published.
 */
static bool consume(struct hwt_smmu_dev *dev, uint32_t prod)
{
	uint32_t cons = dev->cons, unpublished = 0, ahead = (prod - dev->cons) & dev->ptr_mask;
	const unsigned batch = dev->cfg.cons_batch;
	bool ok = true;

	/* The producer just wrote these entries: fetch their lines (4 entries
	 * each) in parallel rather than one miss per line as the loop meets
	 * them (measured: +35% commands/s at batches of 8 and 32); a window of
	 * PREFETCH_AHEAD entries, moved along as we go. */
	for (uint32_t i = 0; i < ahead && i < PREFETCH_AHEAD; i += 4)
		__builtin_prefetch(dev->q + 2 * ((cons + i) & dev->idx_mask));
	while (cons != prod) {
		const uint64_t *e;
		uint64_t dw[2];
		uint32_t err;
		uint32_t c = ctl_load(dev);

		if (c & (HWT__CTL_STOP | HWT__CTL_PAUSE | HWT__CTL_INJ_ABT)) {
			if (c & (HWT__CTL_STOP | HWT__CTL_PAUSE))
				break;
			atomic_fetch_and_explicit(&dev->ctl, ~HWT__CTL_INJ_ABT,
						  memory_order_relaxed);
			err = HWT_SMMU_CERROR_ABT;
			goto error;
		}
		e = dev->q + 2 * (cons & dev->idx_mask);
		if (!(cons & 3) && dev->idx_mask >= PREFETCH_AHEAD)
			__builtin_prefetch(dev->q + 2 * ((cons + PREFETCH_AHEAD) & dev->idx_mask));
		dw[0] = le64toh(e[0]);
		dw[1] = le64toh(e[1]);
		if ((dw[0] & 0xff) == HWT_SMMU_OP_CMD_SYNC) {
			err = cmd_sync(dev, dw, cons);
			if (err)
				goto error;
			cons = cons_inc(dev, cons);
			unpublished = 0;
			continue;
		}
		err = execute(dev, dw);
		if (err)
			goto error;
		cons = cons_inc(dev, cons);
		st_add(&dev->st.cmds, 1);
		if (++unpublished >= batch) {
			publish_cons(dev, cons, HWT_SMMU_CERROR_NONE); /* R_CONS */
			unpublished = 0;
		}
		continue;
error:
		ok = cmdq_error(dev, cons, err);
		unpublished = 0;
		if (!ok)
			break;
		/* resume at CONS: the loop re-fetches the (maybe rewritten) entry */
	}
	if (unpublished)
		publish_cons(dev, cons, HWT_SMMU_CERROR_NONE); /* R_CONS: queue ran empty */
	dev->cons = cons;
	return ok;
}

static void *consumer(void *arg)
{
	struct hwt_smmu_dev *dev = arg;
	uint32_t g = atomic_load_explicit(&dev->regs.gerror, memory_order_relaxed);
	uint32_t n = atomic_load_explicit(&dev->regs.gerrorn, memory_order_acquire); /* A_GERRN */

	/* An error left unacknowledged before a stop keeps the queue stopped. */
	if (((g ^ n) & HWT_SMMU_GERROR_CMDQ_ERR) &&
	    !cmdq_error(dev, dev->cons,
			atomic_load_explicit(&dev->regs.cons, memory_order_relaxed) >>
				HWT_SMMU_CONS_ERR_SHIFT & HWT_SMMU_CONS_ERR_MASK))
		return NULL;
	for (;;) {
		uint32_t c = ctl_load(dev), raw, prod;

		if (c & HWT__CTL_STOP)
			break;
		if (c & HWT__CTL_PAUSE) {
			if (!park(dev))
				break;
			continue;
		}
		/* A_PROD: pairs with D1 in hwt__reg_write_prod() */
		raw = atomic_load_explicit(&dev->regs.prod, memory_order_acquire);
		prod = raw & dev->ptr_mask;
		if (prod == dev->cons) {
			doorbell_wait(dev, raw,
				      atomic_load_explicit(&dev->regs.gerrorn, memory_order_relaxed),
				      SLEEP_NS);
			continue;
		}
		if ((prod ^ dev->cons) == dev->wrap_bit)
			dev->full_seen = true;
		if (!consume(dev, prod))
			break;
	}
	return NULL;
}

/* ---- lifecycle ---------------------------------------------------------- */

int hwt_smmu_dev_start(struct hwt_smmu_dev *dev)
{
	uint64_t base, addr, bytes;
	unsigned log2size;
	pthread_attr_t attr;
	uint32_t cons;
	void *q;
	int err = 0;

	pthread_mutex_lock(&dev->lock);
	if (dev->running) {
		err = -EBUSY;
		goto out;
	}
	/* Acquire: the driver wrote CMDQ_BASE (release) before calling start. */
	base = atomic_load_explicit(&dev->regs.cmdq_base, memory_order_acquire);
	log2size = (unsigned)(base & HWT__CMDQ_BASE_LOG2SIZE_MASK);
	addr = base & HWT__CMDQ_BASE_ADDR_MASK;
	bytes = 16ull << log2size;
	if (!base || !addr ||
	    (base & ~(HWT__CMDQ_BASE_ADDR_MASK | HWT__CMDQ_BASE_LOG2SIZE_MASK | HWT__CMDQ_BASE_RA)) ||
	    log2size > dev->cfg.cmdqs || (addr & ((bytes < 32 ? 32 : bytes) - 1)) ||
	    !(q = translate(dev, addr, bytes))) {
		err = -EINVAL;
		goto out;
	}
	dev->q = q;
	dev->q_iova = addr;
	dev->q_bytes = bytes;
	dev->idx_mask = (1u << log2size) - 1;
	dev->wrap_bit = 1u << log2size;
	dev->ptr_mask = (2u << log2size) - 1;
	dev->full_seen = false;
	dev->atc_fail = false;
	cons = atomic_load_explicit(&dev->regs.cons, memory_order_relaxed);
	dev->cons_ovf = cons & HWT_SMMU_CMDQ_OVF;
	dev->cons = cons & dev->ptr_mask;
	dev->published = dev->cons;
	atomic_fetch_and_explicit(&dev->ctl, ~HWT__CTL_STOP, memory_order_seq_cst);

	err = -pthread_attr_init(&attr);
	if (err)
		goto out;
	if (dev->cfg.cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET((unsigned)dev->cfg.cpu, &set);
		err = -pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	/* Release: waiters that see enabled see a configured device. */
	atomic_store_explicit(&dev->regs.enabled, 1, memory_order_release);
	if (!err)
		err = -pthread_create(&dev->thread, &attr, consumer, dev);
	pthread_attr_destroy(&attr);
	if (err)
		atomic_store_explicit(&dev->regs.enabled, 0, memory_order_release);
	else
		dev->running = true;
out:
	pthread_mutex_unlock(&dev->lock);
	return err;
}

/* Wake the consumer wherever it sleeps (doorbell or park). */
static void kick(struct hwt_smmu_dev *dev)
{
	hwt__reg_ring(&dev->regs); /* D2/D3 after the caller's seq_cst ctl store (D1) */
	hwt__futex_wake(&dev->ctl, 1);
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
	pthread_mutex_lock(&dev->lock);
	if (dev->running) {
		atomic_fetch_or_explicit(&dev->ctl, HWT__CTL_STOP, memory_order_seq_cst);
		kick(dev);
		pthread_join(dev->thread, NULL);
		dev->running = false;
		atomic_store_explicit(&dev->parked, 0, memory_order_seq_cst);
		/* Release: a waiter that sees enabled == 0 sees the final CONS. */
		atomic_store_explicit(&dev->regs.enabled, 0, memory_order_release);
		sev(dev); /* joined: the consumer's counters are ours now */
	}
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

void hwt_smmu_dev_destroy(struct hwt_smmu_dev *dev)
{
	if (!dev)
		return;
	hwt_smmu_dev_stop(dev);
	hwt__cache_destroy(&dev->cache);
	pthread_mutex_destroy(&dev->lock);
	free(dev);
}

int hwt_smmu_dev_inject(struct hwt_smmu_dev *dev, enum hwt_smmu_fault fault)
{
	uint32_t bit;

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
	/* seq_cst: a command published (D1) after this returns sees it. */
	atomic_fetch_or_explicit(&dev->ctl, bit, memory_order_seq_cst);
	return 0;
}

void hwt_smmu_dev_get_stats(const struct hwt_smmu_dev *dev, struct hwt_smmu_dev_stats *st)
{
	const struct hwt__dev_stats *s = &dev->st;

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
}
