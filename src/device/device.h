/* SPDX-License-Identifier: MIT */
/*
 * The software SMMU's interface to the driver side (src/cmdq) and to tests:
 * the register file and the DMA regions.  Nothing here exposes device state;
 * the driver reaches the device only through these and the register
 * accessors of device/regs.h.
 *
 * DMA regions.  The driver registers the memory the device may access (its
 * queue memory, MSI targets) with hwt__smmu_dev_dma_map() and gets an IOVA:
 * CMDQ_BASE and CMD_SYNC.MSIADDR hold IOVAs, never user pointers (MSIADDR
 * only has bits [51:2]).  An IOVA keeps the low 30 bits of the virtual
 * address, so a region keeps its natural alignment (up to 1 GiB) in IOVA
 * space; IOVAs are below 2^52.  Regions are not reused after unmap.
 */
#ifndef HWT_DEVICE_DEVICE_H
#define HWT_DEVICE_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "hwtune/device.h"
#include "device/regs.h"

#define HWT__SMMU_DEV_REGIONS 16          /* maps per device, over its lifetime */
#define HWT__SMMU_DEV_REGION_MAX (1ull << 35) /* bytes per region */

/* CMDQ_BASE fields (ADDR [51:5], LOG2SIZE [4:0], RA [62]). */
#define HWT__CMDQ_BASE_ADDR_MASK 0x000fffffffffffe0ull
#define HWT__CMDQ_BASE_LOG2SIZE_MASK 0x1full
#define HWT__CMDQ_BASE_RA (1ull << 62)
/* GERROR.MSI_CMDQ_ABT_ERR: a CMD_SYNC MSI write to an unmapped MSIADDR. */

/* The register file shared with the driver (lives as long as dev). */
struct hwt__smmu_regs *hwt__smmu_dev_regs(struct hwt_smmu_dev *dev);

/*
 * Register [va, va + len) for device access; *iova receives the IOVA of va.
 * va must be 4-byte aligned, 0 < len <= HWT__SMMU_DEV_REGION_MAX.  May be
 * called while the device runs.  -EINVAL, -ENOSPC (table used up).
 */
int hwt__smmu_dev_dma_map(struct hwt_smmu_dev *dev, void *va, size_t len, uint64_t *iova);
/* Remove the region containing iova.  -ENOENT none, -EBUSY it holds the
 * running queue. */
int hwt__smmu_dev_dma_unmap(struct hwt_smmu_dev *dev, uint64_t iova);
/* The address of [iova, iova + len) if one region holds it all, else NULL. */
void *hwt__smmu_dev_dma_va(struct hwt_smmu_dev *dev, uint64_t iova, size_t len);

/*
 * The GERROR interrupt line: fn(ctx) is called on the consumer thread after
 * it raised a global error (for CMDQ_ERR: CONS.ERR set, then GERROR toggled,
 * then this call).  A driver that notices CONS.ERR by polling must wait for
 * GERROR ^ GERRORN to show the error before acknowledging it.  The
 * handler may acknowledge from there (hwt__reg_write_gerrorn).  NULL
 * disconnects.  Safe to call while the device runs.
 */
void hwt__smmu_dev_set_gerror_irq(struct hwt_smmu_dev *dev, void (*fn)(void *ctx), void *ctx);

#endif
