/* SPDX-License-Identifier: MIT */
/*
 * The software SMMU's DMA regions: the memory a driver registered for the
 * device (smmu/bus.h).  An IOVA is (slot + 1) << 36 | the low 30 bits of
 * the virtual address.  A_MAP / R_MAP: the consumer's translation sees a
 * region's fields once it sees the region live.
 */
#include "device/impl.h"

#include <errno.h>

#define REGION_SHIFT 36
#define REGION_KEEP ((1ull << 30) - 1)

int hwt__bus_dma_map(struct hwt_smmu_dev *dev, void *va, size_t len, uint64_t *iova)
{
	struct hwt__region *r;
	unsigned slot;
	int ret = 0;

	if (!va || !iova || ((uintptr_t)va & 3) || !len || len > HWT__BUS_REGION_MAX)
		return -EINVAL;
	pthread_mutex_lock(&dev->lock);
	/* While a queue is enabled the consumer may translate a stale IOVA at
	 * any time, so an unmapped slot is reused only while none is (queues
	 * map their memory before enabling: create/destroy cycles never run
	 * out of slots). */
	slot = dev->nregions;
	if (!hwt__reg_cmdq_enabled(&dev->regs))
		for (unsigned i = 0; i < dev->nregions && slot == dev->nregions; i++)
			if (!atomic_load_explicit(&dev->regions[i].live, memory_order_relaxed))
				slot = i;
	if (slot >= HWT__BUS_REGIONS) {
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

/* A slot is reused only while no queue is enabled, so a concurrent map
 * never changes the fields of a slot the consumer reads. */
void *hwt__dev_translate(struct hwt_smmu_dev *dev, uint64_t iova, uint64_t len)
{
	uint64_t slot = (iova >> REGION_SHIFT) - 1;
	struct hwt__region *r;

	if (slot >= HWT__BUS_REGIONS)
		return NULL;
	r = &dev->regions[slot];
	if (!atomic_load_explicit(&r->live, memory_order_acquire)) /* A_MAP: pairs with R_MAP */
		return NULL;
	if (iova < r->iova || len > r->len || iova - r->iova > r->len - len)
		return NULL;
	return r->va + (iova - r->iova);
}

void *hwt__bus_dma_va(struct hwt_smmu_dev *dev, uint64_t iova, size_t len)
{
	return hwt__dev_translate(dev, iova, len);
}

int hwt__bus_dma_unmap(struct hwt_smmu_dev *dev, uint64_t iova)
{
	uint64_t slot = (iova >> REGION_SHIFT) - 1;
	int ret = 0;

	pthread_mutex_lock(&dev->lock);
	if (!hwt__dev_translate(dev, iova, 1)) {
		ret = -ENOENT;
	} else if (hwt__reg_cmdq_enabled(&dev->regs) &&
		   (((atomic_load_explicit(&dev->regs.cmdq_base, memory_order_relaxed) &
		      HWT__CMDQ_BASE_ADDR_MASK) >> REGION_SHIFT) - 1) == slot) {
		/* CMDQ_BASE changes only while the queue is disabled */
		ret = -EBUSY;
	} else {
		/* Release: pairs with nothing in particular; a racing translation
		 * either sees the region or not, as with a real unmap. */
		atomic_store_explicit(&dev->regions[slot].live, 0, memory_order_release);
	}
	pthread_mutex_unlock(&dev->lock);
	return ret;
}
