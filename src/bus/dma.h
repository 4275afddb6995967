/* SPDX-License-Identifier: MIT */
/*
 * The DMA map's slots (dma.c), as the device object holds them
 * (struct hwt_smmu_dev.regions, HWT__BUS_REGIONS of them), and the
 * translation the consumer uses for queue memory and MSI targets.
 */
#ifndef HWT_BUS_DMA_H
#define HWT_BUS_DMA_H

#include <stdatomic.h>
#include <stdint.h>

struct hwt_smmu_dev;

/* A slot, rewritten under the device lock while others may translate
 * through it: a sequence lock (seq odd while the fields change). */
struct hwt__region {
	_Atomic uint32_t seq;
	_Atomic uint32_t live;
	_Atomic uint64_t iova;
	_Atomic uint64_t len;
	_Atomic(char *) va;
};

/* The address of [iova, iova + len) if one live region holds it, else NULL.
 * Any thread. */
void *hwt__dev_translate(struct hwt_smmu_dev *dev, uint64_t iova, uint64_t len);

#endif
