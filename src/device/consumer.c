/* SPDX-License-Identifier: MIT */
/*
 * The software SMMU's command execution: one queue's turn (queues.c runs
 * the turns of every enabled queue); the mirror of src/cmdq/cmdq.c.
 *
 * Ordering contract (labels name the partner on the driver's side of the
 * register file, bus/regs.h and src/cmdq/; each queue has its own CONS):
 *
 *   R_CONS   release store of the queue's CONS; pairs with A_CONS: the
 *            commands behind CONS executed, their effects (cache model
 *            updates, handler side effects) are visible, the statistics
 *            count them (relaxed stores made before), and we will never
 *            read their slots again (nor may handler_batch, which saw them
 *            in place).
 *   R_MSI    release store of the CMD_SYNC MSI; pairs with A_MSI (the MSI
 *            waiter's load of its word, in any DMA-mapped region).  Made
 *            after R_CONS up to the sync and before R_CONS past it (see
 *            cmd_sync()).
 *   A_PROD, A_QEN, R_QACK, R_QGERR, A_QGERRN, S1..S4: queues.c, enable.c.
 *
 * Steps of a turn (hwt__dev_consume):
 *   1. The run from CONS to the PROD read (A_PROD, queues.c), in segments:
 *      contiguous entries (never across the wrap nor past PROD), at most
 *      seg_max of them (hwt__dev_seg_max) for the per-command executors,
 *      and, while other queues are enabled, no further than the turn's
 *      burst.  Before each segment: requests (stop, pause, injected abort;
 *      one relaxed load of ctl, a line written only by those requests) and
 *      the queue's Q_EN (a relaxed load of a line the driver writes only to
 *      enable or disable, or acknowledge), and the prefetch window moved
 *      along, never past PROD.  Then fetch the little-endian dwords and
 *      execute: per command (handler or the built-in executor) or one
 *      handler_batch call for the commands before the next CMD_SYNC.
 *   2. Publish CONS (R_CONS) at the end of the turn, at each CMD_SYNC, on
 *      an error, when a request or Q_EN interrupts the run, and every
 *      cons_batch commands if that is not 0.  A segment's commands are
 *      added to the statistics once, after it and so before any R_CONS
 *      covering them: whoever saw CONS past a command (A_CONS) sees it
 *      counted.
 *   3. CMD_SYNC: R_CONS up to the sync, its signal (MSI write R_MSI), R_CONS
 *      past the sync; or the wired-IRQ callback or SEV after R_CONS.  It
 *      orders the earlier commands of its own queue only.
 *   4. Error: the turn ends at the failing entry; hwt__dev_raise_error()
 *      (queues.c) sets CONS.ERR and GERROR of this queue and the queue
 *      waits for its GERRORN while the others run on.
 *
 * The hot path takes no lock and makes no system call: counters are plain
 * load + store by the consumer only, once per segment or CONS store, the
 * cache models' lock is taken only for invalidations when the models hold
 * entries.
 */
#include "device/impl.h"
#include "arch/arch.h"
#include "common/time.h"

#include <endian.h>

#define SEG_MAX 32u           /* per-command executors: entries per check */
#define COST_SLICE_NS 100000u /* with cmd_cost_ns: cost spent per check at most */

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
static inline uint32_t cons_add(const struct hwt__devq *q, uint32_t p, uint32_t k)
{
	return hwt__q_inc(q->shift, p, k);
}

/* Did the driver write q's Q_EN (CR0) since we last acted on it?  A plain
 * look, from the hot loop; A_QEN follows in the main loop (queues.c). */
static inline bool en_changed(const struct hwt__devq *q)
{
	return atomic_load_explicit(q->r_en, memory_order_relaxed) != q->en;
}

/* Did another queue's Q_EN change (relaxed look, as en_changed)? */
static bool other_en_changed(const struct hwt_smmu_dev *dev, const struct hwt__devq *q)
{
	for (unsigned i = 0; i < dev->nq; i++)
		if (i != q->idx && en_changed(&dev->qs[i]))
			return true;
	return false;
}

/* ---- CONS ------------------------------------------------------------ */

static void not_full_sev(struct hwt_smmu_dev *dev, struct hwt__devq *q)
{
	q->full_seen = false;
	if ((dev->cfg.idr0 & HWT_SMMU_IDR0_SEV) && !dev->cfg.no_sev_on_not_full) {
		if (dev->cfg.sev_cost_ns)
			busy_ns(dev->cfg.sev_cost_ns);
		hwt__dev_sev(dev);
	}
}

/*
 * Publish CONS (R_CONS).  err is CONS.ERR.  If the queue was full at the
 * last PROD read, this update makes it not full: SEV (unless the MMU-600
 * erratum mode).  "Full" is judged at the PROD read (A_PROD), not at this
 * store: a queue that fills between the two gets no SEV for this update;
 * its waiters' sleeps are bounded, so that costs latency, never progress.
 */
static inline void publish_cons(struct hwt_smmu_dev *dev, struct hwt__devq *q, uint32_t cons,
				uint32_t err)
{
	/* counted before R_CONS: a reader that saw this CONS sees the count */
	hwt__st_add(&dev->st.cons_updates, 1);
	atomic_store_explicit(q->r_cons, q->cons_ovf | err << HWT_SMMU_CONS_ERR_SHIFT | cons,
			      memory_order_release); /* R_CONS: pairs with A_CONS (bus/regs.h) */
	q->published = cons;
	if (__builtin_expect(q->full_seen, 0))
		not_full_sev(dev, q);
}

void hwt__dev_publish_cons(struct hwt_smmu_dev *dev, struct hwt__devq *q, uint32_t cons,
			   uint32_t err)
{
	publish_cons(dev, q, cons, err); /* R_CONS */
}

/* ---- execution ---------------------------------------------------------- */

/*
 * An injected ATC_INV timeout (hwt_smmu_dev_inject) hits the first ATC_INV
 * executed after it: if dw is one and the request is in ctl (NULL: load it
 * now), take the request and fail the next CMD_SYNC.  True if it hit dw.
 */
static bool atc_timeout_take(struct hwt_smmu_dev *dev, struct hwt__devq *q, const uint64_t dw[2],
			     const uint32_t *ctl)
{
	if (hwt_smmu_opcode(dw) != HWT_SMMU_OP_ATC_INV ||
	    !((ctl ? *ctl : ctl_load(dev)) & HWT__CTL_INJ_ATC))
		return false;
	atomic_fetch_and_explicit(&dev->ctl, ~HWT__CTL_INJ_ATC, memory_order_relaxed);
	q->atc_fail = true;
	return true;
}

/* Execute one command other than CMD_SYNC.  Returns a CERROR. */
static uint32_t execute(struct hwt_smmu_dev *dev, struct hwt__devq *q, const uint64_t dw[2])
{
	struct hwt_smmu_cmd cmd;
	int r;

	if (dev->cfg.cmd_cost_ns)
		busy_ns(dev->cfg.cmd_cost_ns);
	atc_timeout_take(dev, q, dw, NULL);
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
/* Any len bytes inside one DMA-mapped region will do (the sync's own slot,
 * another slot, a word of the driver's elsewhere): MSIADDR is a multiple
 * of 4 (bits [51:2]) and every region starts 4-byte aligned. */
static void *msi_target(struct hwt_smmu_dev *dev, const struct hwt__devq *q, uint64_t msiaddr,
			unsigned len)
{
	if (msiaddr - q->q_iova < q->q_bytes && q->q_bytes - (msiaddr - q->q_iova) >= len)
		return (char *)q->q + (msiaddr - q->q_iova);
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
static uint32_t cmd_sync(struct hwt_smmu_dev *dev, struct hwt__devq *q, const uint64_t dw[2],
			 uint32_t cons)
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
	if (q->atc_fail) {
		q->atc_fail = false;
		return HWT_SMMU_CERROR_ATC_INV_SYNC;
	}
	if (cs == HWT_SMMU_CS_SEV && dev->cfg.sev_cost_ns)
		busy_ns(dev->cfg.sev_cost_ns);

	/* counted before R_CONS: a waiter that saw CONS sees the counts */
	hwt__st_add(&dev->st.cmds, 1);
	hwt__st_add(&dev->st.syncs, 1);
	if (msi) {
		p = msi_target(dev, q, msiaddr, len);
		if (p) {
			if (q->published != cons)
				publish_cons(dev, q, cons, HWT_SMMU_CERROR_NONE); /* R_CONS */
			msi_write(dev, p, len, msidata);                       /* R_MSI */
		}
	}
	publish_cons(dev, q, cons_add(q, cons, 1), HWT_SMMU_CERROR_NONE); /* R_CONS */

	if (msi) {
		if (!p)
			hwt__dev_msi_abort(dev, q);
	} else if (cs == HWT_SMMU_CS_IRQ) {
		if (dev->cfg.sync_irq) {
			hwt__st_add(&dev->st.sync_irqs, 1);
			dev->cfg.sync_irq(dev->cfg.sync_irq_ctx);
		}
	} else if (cs == HWT_SMMU_CS_SEV && (dev->cfg.idr0 & HWT_SMMU_IDR0_SEV)) {
		hwt__dev_sev(dev);
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
static unsigned exec_each(struct hwt_smmu_dev *dev, struct hwt__devq *q, const uint64_t *e,
			  unsigned n, uint32_t cons, uint32_t *unpublished, uint32_t *err)
{
	const unsigned batch = dev->cfg.cons_batch; /* 0: never equal to unpub */
	unsigned i, counted = 0, unpub = *unpublished;

	for (i = 0; i < n; i++, e += 2) {
		uint64_t dw[2] = { le64toh(e[0]), le64toh(e[1]) };

		if (hwt_smmu_opcode(dw) == HWT_SMMU_OP_CMD_SYNC)
			break;
		*err = execute(dev, q, dw);
		if (*err)
			break;
		if (++unpub == batch) {
			hwt__st_add(&dev->st.cmds, i + 1 - counted); /* before R_CONS */
			counted = i + 1;
			publish_cons(dev, q, cons_add(q, cons, i + 1), HWT_SMMU_CERROR_NONE);
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
static unsigned exec_batch(struct hwt_smmu_dev *dev, struct hwt__devq *q, const uint64_t *e,
			   unsigned n, uint32_t cons, uint32_t ctl, uint32_t *unpublished, uint32_t *err)
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
			if (atc_timeout_take(dev, q, cmds[i], &ctl))
				break;
	}
	if (done)
		hwt__st_add(&dev->st.cmds, done); /* before R_CONS */
	*unpublished += done;
	if (batch && *unpublished >= batch) {
		publish_cons(dev, q, cons_add(q, cons, done), HWT_SMMU_CERROR_NONE); /* R_CONS */
		*unpublished = 0;
	}
	return done;
}

/*
 * q's turn: execute its run from q->cons up to prod (WRP|IDX, as read by
 * A_PROD), until asked to stop or pause, q's Q_EN changes, an error, or,
 * while other queues are on, dev->burst entries (a lone queue checks the
 * other queues' Q_EN at that point and runs on if none changed).  Leaves
 * CONS published and every executed command counted.
 */
void hwt__dev_consume(struct hwt_smmu_dev *dev, struct hwt__devq *q, uint32_t prod)
{
	const unsigned shift = q->shift, batch = dev->cfg.cons_batch;
	const uint32_t start = q->cons, total = hwt__q_pos(shift, prod - start);
	const uint32_t entries = 1u << shift;
	uint32_t cons = start, unpublished = 0, pf = 0; /* pf: entries from start prefetched */
	uint32_t turn = 0;                             /* entries of this burst */

	while (cons != prod) {
		uint32_t c = ctl_load(dev), err = HWT_SMMU_CERROR_NONE;
		uint32_t left = hwt__q_pos(shift, prod - cons), at = hwt__q_pos(shift, cons - start);
		uint32_t n = entries - hwt__q_idx(shift, cons), pf_end;
		const uint64_t *e = q->q + 2 * hwt__q_idx(shift, cons);
		bool shared = dev->non > 1;
		unsigned k;

		if (c & (HWT__CTL_STOP | HWT__CTL_PAUSE) || en_changed(q))
			break;
		if (turn >= dev->burst) {
			if (shared || other_en_changed(dev, q))
				break; /* the next queue's turn, or an enable to act on */
			turn = 0;
		}
		if (__builtin_expect(c & HWT__CTL_INJ_ABT, 0)) {
			atomic_fetch_and_explicit(&dev->ctl, ~HWT__CTL_INJ_ABT, memory_order_relaxed);
			err = HWT_SMMU_CERROR_ABT;
			goto error;
		}
		/* the segment: up to the wrap and PROD; per command, seg_max
		 * entries; for handler_batch, up to the next cons_batch
		 * publication; shared, up to the end of the turn */
		if (n > left)
			n = left;
		if (!dev->cfg.handler_batch || dev->cfg.cmd_cost_ns)
			n = n < dev->seg_max ? n : dev->seg_max;
		if (dev->cfg.handler_batch) {
			if (batch && n > batch - unpublished)
				n = batch - unpublished;
		}
		if (shared && n > dev->burst - turn)
			n = dev->burst - turn;
		/* The producer just wrote these entries: fetch their lines (4
		 * entries each) in parallel rather than one miss per line as we
		 * meet them (measured: +35% commands/s at batches of 8 and 32),
		 * up to hwt__dev_prefetch_end(), never past PROD. */
		pf_end = hwt__dev_prefetch_end(at, n, total);
		for (; pf < pf_end; pf += 4)
			__builtin_prefetch(q->q + 2 * hwt__q_idx(shift, start + pf));
		/* executed commands are counted (once per segment or CONS store)
		 * before any R_CONS covering them */
		k = dev->cfg.handler_batch ? exec_batch(dev, q, e, n, cons, c, &unpublished, &err)
					   : exec_each(dev, q, e, n, cons, &unpublished, &err);
		cons = cons_add(q, cons, k);
		turn += k;
		if (err)
			goto error;
		if (k < n) { /* a CMD_SYNC at cons */
			uint64_t dw[2];

			e += 2 * k;
			dw[0] = le64toh(e[0]);
			dw[1] = le64toh(e[1]);
			err = cmd_sync(dev, q, dw, cons); /* R_CONS */
			if (err)
				goto error;
			cons = cons_add(q, cons, 1);
			turn++;
			unpublished = 0;
		}
		continue;
error:
		/* q stops here until its GERRORN acknowledges (queues.c); the
		 * other queues run on */
		hwt__dev_raise_error(dev, q, cons, err); /* R_CONS, R_QGERR */
		return;
	}
	if (unpublished)
		publish_cons(dev, q, cons, HWT_SMMU_CERROR_NONE); /* R_CONS: end of the run */
	q->cons = cons;
}
