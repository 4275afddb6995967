/* SPDX-License-Identifier: MIT */
/*
 * The DMA map: the memory a driver registered for the device (bus.h), kept
 * in the device object's slots (dma.h) under the device's lock.  An IOVA
 * is (slot + 1) << 36 | the low 30 bits of the virtual address.
 *
 * Writers (map, unmap) hold the device lock; translation takes no lock and
 * may run on any thread, so each slot is a sequence lock: the writer makes
 * seq odd (W_SEQ, then a release fence), stores the fields, and makes seq
 * even again (R_MAP); a reader loads seq (A_MAP), the fields, an acquire
 * fence (F_MAP), and seq again: a translation made while a slot changes
 * sees the change in seq and fails, as a real translation would fault.
 */
#include "bus/dma.h"
#include "device/impl.h"

#include <errno.h>

#define REGION_SHIFT 36
#define REGION_KEEP ((1ull << 30) - 1)

/* Rewrite slot r: live, and if live its fields. */
static void region_write(struct hwt__region *r, bool live, uint64_t iova, uint64_t len, char *va)
{
	uint32_t seq = atomic_load_explicit(&r->seq, memory_order_relaxed);

	atomic_store_explicit(&r->seq, seq + 1, memory_order_relaxed);           /* W_SEQ */
	atomic_thread_fence(memory_order_release); /* W_SEQ before the fields */
	atomic_store_explicit(&r->live, live, memory_order_relaxed);
	if (live) {
		atomic_store_explicit(&r->iova, iova, memory_order_relaxed);
		atomic_store_explicit(&r->len, len, memory_order_relaxed);
		atomic_store_explicit(&r->va, va, memory_order_relaxed);
	}
	atomic_store_explicit(&r->seq, seq + 2, memory_order_release);           /* R_MAP */
}

int hwt__bus_dma_map(struct hwt_smmu_dev *dev, void *va, size_t len, uint64_t *iova)
{
	unsigned slot;
	int ret = 0;

	if (!va || !iova || ((uintptr_t)va & 3) || !len || len > HWT__BUS_REGION_MAX)
		return -EINVAL;
	pthread_mutex_lock(&dev->lock);
	/* While a queue is enabled the consumer may still use a stale IOVA
	 * (an MSI it translated earlier), so an unmapped slot is reused only
	 * while no queue is (queues map their memory before enabling: create and
	 * destroy cycles never run out of slots). */
	slot = dev->nregions;
	if (!hwt__dev_any_queue_on(dev))
		for (unsigned i = 0; i < dev->nregions && slot == dev->nregions; i++)
			if (!atomic_load_explicit(&dev->regions[i].live, memory_order_relaxed))
				slot = i;
	if (slot >= HWT__BUS_REGIONS) {
		ret = -ENOSPC;
		goto out;
	}
	*iova = (uint64_t)(slot + 1) << REGION_SHIFT | ((uintptr_t)va & REGION_KEEP);
	region_write(&dev->regions[slot], true, *iova, len, va);
	if (slot == dev->nregions)
		dev->nregions++;
out:
	pthread_mutex_unlock(&dev->lock);
	return ret;
}

void *hwt__dev_translate(struct hwt_smmu_dev *dev, uint64_t iova, uint64_t len)
{
	uint64_t slot = (iova >> REGION_SHIFT) - 1, base, size;
	struct hwt__region *r;
	uint32_t seq;
	char *va;

	if (slot >= HWT__BUS_REGIONS)
		return NULL;
	r = &dev->regions[slot];
	seq = atomic_load_explicit(&r->seq, memory_order_acquire);               /* A_MAP */
	if ((seq & 1) || !atomic_load_explicit(&r->live, memory_order_relaxed))
		return NULL;
	base = atomic_load_explicit(&r->iova, memory_order_relaxed);
	size = atomic_load_explicit(&r->len, memory_order_relaxed);
	va = atomic_load_explicit(&r->va, memory_order_relaxed);
	atomic_thread_fence(memory_order_acquire);                                /* F_MAP */
	if (atomic_load_explicit(&r->seq, memory_order_relaxed) != seq)
		return NULL;
	if (iova < base || len > size || iova - base > size - len)
		return NULL;
	return va + (iova - base);
}

void *hwt__bus_dma_va(struct hwt_smmu_dev *dev, uint64_t iova, size_t len)
{
	return hwt__dev_translate(dev, iova, len);
}

/* Does slot hold the memory of an enabled queue (any of NUMQ)?  A_QACK per
 * queue; Q_BASE (CMDQ_BASE) changes only while its queue is disabled. */
static bool holds_enabled_queue(struct hwt_smmu_dev *dev, uint64_t slot)
{
	for (unsigned i = 0; i < hwt__reg_nqueues(&dev->regs); i++) {
		const _Atomic uint64_t *base = i ? &dev->regs.q[i].base : &dev->regs.cmdq_base;

		if (hwt__reg_q_enabled(&dev->regs, i) &&                           /* A_QACK */
		    (((atomic_load_explicit(base, memory_order_relaxed) & HWT__CMDQ_BASE_ADDR_MASK) >>
		      REGION_SHIFT) - 1) == slot)
			return true;
	}
	return false;
}

int hwt__bus_dma_unmap(struct hwt_smmu_dev *dev, uint64_t iova)
{
	uint64_t slot = (iova >> REGION_SHIFT) - 1;
	int ret = 0;

	pthread_mutex_lock(&dev->lock);
	if (!hwt__dev_translate(dev, iova, 1)) {
		ret = -ENOENT;
	} else if (holds_enabled_queue(dev, slot)) {
		ret = -EBUSY;
	} else {
		/* A translation racing this sees the region or fails.  As with
		 * a real SMMU, memory the device may still write (an MSI target)
		 * is free only after a later CMD_SYNC or the queue's disable. */
		region_write(&dev->regions[slot], false, 0, 0, NULL);
	}
	pthread_mutex_unlock(&dev->lock);
	return ret;
}
