/* SPDX-License-Identifier: MIT */
/*
 * The device's half of the queue-enable handshake (bus/regs.h), the same
 * for every queue: act on a Q_EN (CR0 for queue 0) the consumer (queues.c)
 * or hwt_smmu_dev_start (device.c) read with A_QEN (A_CR0), set up the
 * consumer's view of the queue from Q_BASE and Q_CONS, and acknowledge in
 * Q_ENACK (CR0ACK).
 *
 *   R_QACK   store of Q_ENACK (R_ACK, of CR0ACK, for queue 0; seq_cst);
 *            pairs with A_QACK (A_ACK; seq_cst), the driver's load (see
 *            consumer.c and hwt_smmu_dev_start()).
 */
#include "device/impl.h"

#include <errno.h>

/* Read Q_BASE and Q_CONS; -EINVAL for a base that describes no queue. */
static int queue_setup(struct hwt_smmu_dev *dev, struct hwt__devq *q)
{
	/* Relaxed: A_QEN (or, at start, the driver's R_QEN before the call)
	 * orders these after the driver's writes. */
	uint64_t base = atomic_load_explicit(q->r_base, memory_order_relaxed);
	unsigned log2size = (unsigned)(base & HWT__CMDQ_BASE_LOG2SIZE_MASK);
	uint64_t addr = base & HWT__CMDQ_BASE_ADDR_MASK, bytes = 16ull << log2size;
	uint32_t cons;
	void *m;

	if (!base || !addr ||
	    (base & ~(HWT__CMDQ_BASE_ADDR_MASK | HWT__CMDQ_BASE_LOG2SIZE_MASK | HWT__CMDQ_BASE_RA)) ||
	    log2size > dev->cfg.cmdqs || (addr & ((bytes < 32 ? 32 : bytes) - 1)) ||
	    !(m = hwt__dev_translate(dev, addr, bytes)))
		return -EINVAL;
	q->q = m;
	q->q_iova = addr;
	q->q_bytes = bytes;
	q->shift = log2size;
	q->full_seen = false;
	q->atc_fail = false;
	cons = atomic_load_explicit(q->r_cons, memory_order_relaxed);
	q->cons_ovf = cons & HWT_SMMU_CMDQ_OVF;
	q->cons = hwt__q_pos(log2size, cons);
	q->published = q->cons;
	return 0;
}

int hwt__dev_q_enable(struct hwt_smmu_dev *dev, struct hwt__devq *q, uint32_t en)
{
	bool was_on = q->on;
	int err = 0;

	q->en = en;
	q->on = false;
	q->err_pending = false; /* a pending error stays in GERROR */
	if (en & HWT__Q_EN) {
		err = queue_setup(dev, q);
		q->on = !err;
	}
	q->check_error = q->on;
	dev->non += (unsigned)q->on - (unsigned)was_on;
	/* For hwt__reg_q_en_acted's log words only: relaxed. */
	atomic_store_explicit(q->r_en_seen, en, memory_order_relaxed);
	atomic_store_explicit(q->r_enack, (en & ~HWT__Q_EN) | (q->on ? HWT__Q_EN : 0),
			      memory_order_seq_cst); /* R_QACK (R_ACK): pairs with A_QACK (A_ACK) */
	return err;
}

int hwt__dev_cmdq_enable(struct hwt_smmu_dev *dev, uint32_t cr0)
{
	return hwt__dev_q_enable(dev, &dev->qs[0], cr0);
}
