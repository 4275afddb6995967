/* SPDX-License-Identifier: MIT */
/*
 * The device's half of the queue-enable handshake (bus/regs.h): act on a
 * CR0 the consumer (consumer.c) or hwt_smmu_dev_start (device.c) read with
 * A_CR0, set up the consumer's view of the queue from CMDQ_BASE and CONS,
 * and acknowledge in CR0ACK.
 *
 *   R_ACK    store of CR0ACK (seq_cst); pairs with A_ACK (seq_cst), the
 *            driver's load (see consumer.c).
 */
#include "device/impl.h"

#include <errno.h>

/* Read CMDQ_BASE and CONS; -EINVAL for a base that describes no queue. */
static int queue_setup(struct hwt_smmu_dev *dev)
{
	/* Relaxed: A_CR0 (or, at start, the driver's R_CR0 before the call)
	 * orders these after the driver's writes. */
	uint64_t base = atomic_load_explicit(&dev->regs.cmdq_base, memory_order_relaxed);
	unsigned log2size = (unsigned)(base & HWT__CMDQ_BASE_LOG2SIZE_MASK);
	uint64_t addr = base & HWT__CMDQ_BASE_ADDR_MASK, bytes = 16ull << log2size;
	uint32_t cons;
	void *q;

	if (!base || !addr ||
	    (base & ~(HWT__CMDQ_BASE_ADDR_MASK | HWT__CMDQ_BASE_LOG2SIZE_MASK | HWT__CMDQ_BASE_RA)) ||
	    log2size > dev->cfg.cmdqs || (addr & ((bytes < 32 ? 32 : bytes) - 1)) ||
	    !(q = hwt__dev_translate(dev, addr, bytes)))
		return -EINVAL;
	dev->q = q;
	dev->q_iova = addr;
	dev->q_bytes = bytes;
	dev->shift = log2size;
	dev->full_seen = false;
	dev->atc_fail = false;
	cons = atomic_load_explicit(&dev->regs.cons, memory_order_relaxed);
	dev->cons_ovf = cons & HWT_SMMU_CMDQ_OVF;
	dev->cons = hwt__q_pos(log2size, cons);
	dev->published = dev->cons;
	return 0;
}

int hwt__dev_cmdq_enable(struct hwt_smmu_dev *dev, uint32_t cr0)
{
	int err = 0;

	dev->cr0 = cr0;
	dev->on = false;
	dev->err_pending = false; /* a pending error stays in GERROR */
	if (cr0 & HWT_SMMU_CR0_CMDQEN) {
		err = queue_setup(dev);
		dev->on = !err;
	}
	dev->check_error = dev->on;
	/* For hwt__reg_cr0_acted's log words only: relaxed. */
	atomic_store_explicit(&dev->regs.cr0_seen, cr0, memory_order_relaxed);
	atomic_store_explicit(&dev->regs.cr0ack,
			      (cr0 & ~HWT_SMMU_CR0_CMDQEN) | (dev->on ? HWT_SMMU_CR0_CMDQEN : 0),
			      memory_order_seq_cst); /* R_ACK */
	return err;
}

