/* SPDX-License-Identifier: MIT */
/*
 * The bus between a driver (src/cmdq) and the software SMMU (src/device):
 * all that a driver may use of a device.  Besides these functions the two
 * sides share only queue memory, the register file (regs.h) and the queue
 * pointers' arithmetic (queue.h); the driver never calls the device's
 * lifecycle (start, stop) nor sees its state.
 *
 * src/bus/ is owned by neither side: both include its headers, and the
 * device's end of these calls (bus.c, dma.c) works on the device object.
 *
 * Attachment.  One queue at a time drives a device: hwt__bus_attach()
 * records the owner and connects its GERROR line; a second attach gets
 * -EBUSY until the owner detaches.  Detach by anyone else is refused, so a
 * stale owner can never disconnect the live queue's error handler.
 *
 * DMA.  The driver registers the memory the device may access (its queue
 * memory, MSI targets) and gets an IOVA: CMDQ_BASE and CMD_SYNC.MSIADDR hold
 * IOVAs, never user pointers (MSIADDR only has bits [51:2]).  An IOVA keeps
 * the low 30 bits of the virtual address, so a region keeps its natural
 * alignment (up to 1 GiB) in IOVA space; IOVAs are below 2^52.
 */
#ifndef HWT_BUS_H
#define HWT_BUS_H

#include <stddef.h>
#include <stdint.h>

#include "bus/regs.h"

struct hwt_smmu_dev;

#define HWT__BUS_REGIONS 16              /* DMA maps per device */
#define HWT__BUS_REGION_MAX (1ull << 35) /* bytes per region */

/* The register file (lives as long as the device). */
struct hwt__smmu_regs *hwt__bus_regs(struct hwt_smmu_dev *dev);

/*
 * Attach owner (non-NULL) to the device and connect the GERROR line: irq(ctx)
 * is called on the consumer thread after it raised a global error (for
 * CMDQ_ERR: CONS.ERR set, then GERROR toggled, then this call), while the
 * queue is enabled.  irq may acknowledge from there (hwt__reg_write_gerrorn).
 * A driver that notices CONS.ERR by polling must wait for GERROR ^ GERRORN to
 * show the error before acknowledging it, and must look at GERROR ^ GERRORN
 * when it enables its queue: an error a previous queue left unacknowledged
 * is raised again then, with CONS.ERR as the driver reset it (NONE).
 * -EINVAL, -EBUSY (attached).
 */
int hwt__bus_attach(struct hwt_smmu_dev *dev, const void *owner, void (*irq)(void *ctx),
		    void *ctx);
/* The owner reconnects its GERROR line (NULL: none), at any time; the
 * consumer calls the old or the new one.  -EPERM if not the owner. */
int hwt__bus_set_gerror_irq(struct hwt_smmu_dev *dev, const void *owner, void (*irq)(void *ctx),
			    void *ctx);
/* Disconnect the GERROR line and detach.  -EPERM if owner is not the one
 * attached, -EBUSY while any queue is enabled (CR0ACK, a Q_ENACK).  If the
 * device was destroyed while attached (hwt_smmu_dev_destroy), a successful
 * detach frees it: the owner must not touch it afterwards. */
int hwt__bus_detach(struct hwt_smmu_dev *dev, const void *owner);

/*
 * Register [va, va + len) for device access; *iova receives the IOVA of va.
 * va must be 4-byte aligned, 0 < len <= HWT__BUS_REGION_MAX.  May be called
 * while the device runs.  An unmapped slot is reused only while no queue is
 * enabled (the consumer may still complete an MSI it translated earlier).
 * -EINVAL, -ENOSPC (every slot in use).
 */
int hwt__bus_dma_map(struct hwt_smmu_dev *dev, void *va, size_t len, uint64_t *iova);
/* Remove the region containing iova.  -ENOENT none, -EBUSY it holds an
 * enabled queue, any of NUMQ (checked under the device's lock: a driver disabling its
 * queue unmaps it to be sure no racing start re-enabled it).  Memory the
 * device may still write (an MSI target) can be freed only after a later
 * CMD_SYNC completed or the queue was disabled, as with a real SMMU. */
int hwt__bus_dma_unmap(struct hwt_smmu_dev *dev, uint64_t iova);
/* The address of [iova, iova + len) if one region holds it all, else NULL. */
void *hwt__bus_dma_va(struct hwt_smmu_dev *dev, uint64_t iova, size_t len);

#endif
