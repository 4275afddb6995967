/* SPDX-License-Identifier: MIT */
/*
 * A software SMMUv3: the device side of the command queue.
 *
 * The device owns a register file (IDR0/IDR1, CR0/CR0ACK, CMDQ_BASE, PROD,
 * CONS, GERROR/GERRORN) and a consumer thread.  A driver (hwt_cmdq_create)
 * attaches to it, maps its queue memory, programs CMDQ_BASE and enables the
 * queue through CR0.CMDQEN; then it publishes PROD.  The consumer fetches the
 * 16-byte little-endian entries, executes them in order against models of
 * the SMMU's caches, advances CONS once a command's effects are visible, and
 * completes CMD_SYNC by an MSI write, an SEV or a "wired interrupt" callback.
 * src/smmu/bus.h is all that a driver uses of a device.
 *
 * Lifecycle:  config_default -> (edit) -> create -> start -> stop -> destroy;
 * a queue may be created and destroyed on it before start or while it runs
 * (one queue at a time).  Test and observer functions (pause, fault
 * injection, the cache models) are in <hwtune/smmu_model.h>.
 * Every function returns 0 or a negative errno unless stated otherwise.
 */
#ifndef HWTUNE_DEVICE_H
#define HWTUNE_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

#include "hwtune/smmu.h"

#include "hwtune/api.h"

HWT_BEGIN_DECLS

struct hwt_smmu_dev;

/* Limits checked by hwt_smmu_dev_create(). */
#define HWT_SMMU_DEV_CMDQS_MIN 1u       /* log2 entries */
#define HWT_SMMU_DEV_CMDQS_MAX 19u      /* the architecture's limit */
#define HWT_SMMU_DEV_CONS_BATCH_MAX 65536u
#define HWT_SMMU_DEV_NS_MAX 1000000000u /* spin_ns and every *_cost_ns */

struct hwt_smmu_dev_config {
	/* Features advertised in IDR0: any of HWT_SMMU_IDR0_MSI, _SEV, _COHACC.
	 * Without MSI a CS=IRQ CMD_SYNC raises sync_irq instead of writing to
	 * MSIADDR; without SEV the device sends no SEV except the one on stop. */
	uint32_t idr0;
	/* IDR1.CMDQS: log2 of the largest queue CMDQ_BASE may describe. */
	unsigned cmdqs;
	/* Pin the consumer thread to this CPU; -1 leaves it unpinned. */
	int cpu;
	/* Publish CONS every cons_batch commands (1 = after each command); CONS
	 * is always published at a CMD_SYNC, on an error and when the queue
	 * runs empty. */
	unsigned cons_batch;
	/* How long an idle consumer spins on PROD before it sleeps (bounded
	 * futex sleeps, so it never needs a free core). */
	unsigned spin_ns;
	/* Hi16xx quirk: the CMD_SYNC MSI is a 64-bit store of zero. */
	bool msi_64bit;
	/* MMU-600 erratum 1076982: no SEV on the queue-full -> not-full edge. */
	bool no_sev_on_not_full;
	/* Extra busy-waited costs, 0 = off.  msi: between the CONS update of a
	 * CS=IRQ CMD_SYNC and its MSI write.  sev: before a CS=SEV CMD_SYNC
	 * completes (its CONS update and SEV), and before any other SEV.  cmd:
	 * per executed command other than CMD_SYNC. */
	unsigned msi_cost_ns, sev_cost_ns, cmd_cost_ns;
	/* Executes every command except CMD_SYNC instead of the built-in SMMU
	 * executor (dw in host order).  Opcode 0x46 stays a CMD_SYNC, decoded
	 * and checked by the device; every other encoding is the handler's.  Returns HWT_SMMU_CERROR_NONE, or a
	 * CERROR that stops the queue (anything else counts as ILL).  Runs on
	 * the consumer thread. */
	int (*handler)(void *ctx, const uint64_t dw[2]);
	void *handler_ctx;
	/* CMD_SYNC with CS=IRQ and MSIADDR 0 (or no IDR0.MSI): the wired
	 * interrupt, called on the consumer thread after CONS passed the sync. */
	void (*sync_irq)(void *ctx);
	void *sync_irq_ctx;
};

/* MSI|SEV|COHACC, cmdqs 8, cpu -1, cons_batch 1, spin_ns 20000, no quirks,
 * no costs, built-in executor. */
HWT_API void hwt_smmu_dev_config_default(struct hwt_smmu_dev_config *cfg);

/* -EINVAL for a bad config (unknown IDR0 bits, cmdqs/cons_batch/spin/cost
 * out of range, cpu < -1), -ENOMEM. */
HWT_API int hwt_smmu_dev_create(struct hwt_smmu_dev **out, const struct hwt_smmu_dev_config *cfg);
/* The configuration the device runs with. */
HWT_API void hwt_smmu_dev_get_config(const struct hwt_smmu_dev *dev,
				     struct hwt_smmu_dev_config *cfg);

/*
 * Start the consumer thread.  If the driver has set CR0.CMDQEN, the queue is
 * enabled first, from CMDQ_BASE and CONS as the driver left them (CONS keeps
 * its value across stop/start): -EINVAL if CMDQ_BASE is unset, LOG2SIZE >
 * CMDQS, the base is not aligned to the queue size (at least 32 bytes) or
 * the queue is not inside one DMA region.  -EBUSY if already running;
 * -errno from thread creation (e.g. an unusable cpu).  A GERROR.CMDQ_ERR
 * still unacknowledged keeps the queue stopped.
 */
HWT_API int hwt_smmu_dev_start(struct hwt_smmu_dev *dev);
/* The consumer exits; then CR0ACK.CMDQEN = 0 and an SEV, so waiters notice
 * (-ENODEV).  Idempotent.  start may be called again afterwards. */
HWT_API int hwt_smmu_dev_stop(struct hwt_smmu_dev *dev);
/* stop, then free.  NULL is ignored. */
HWT_API void hwt_smmu_dev_destroy(struct hwt_smmu_dev *dev);

/* ---- Statistics --------------------------------------------------------- */
struct hwt_smmu_dev_stats {
	uint64_t cmds;         /* commands executed, CMD_SYNC included */
	uint64_t syncs;        /* CMD_SYNCs completed */
	uint64_t msi_writes;   /* CMD_SYNC MSI writes */
	uint64_t sync_irqs;    /* CMD_SYNC wired interrupts (sync_irq) */
	uint64_t sevs;         /* SEVs sent (sync, full -> not full, stop) */
	uint64_t errors;       /* CONS.ERR raised, and CMD_SYNC MSIs to unmapped addresses
				* (GERROR bit 4, MSI_CMDQ_ABT_ERR) */
	uint64_t sleeps;       /* doorbell futex sleeps of the consumer */
	uint64_t cons_updates; /* CONS stores */
	uint64_t invalidated;  /* cache-model entries invalidated */
	/* the configured extra costs, so callers can print them */
	unsigned msi_cost_ns, sev_cost_ns, cmd_cost_ns;
};
/* A snapshot; each counter is read atomically, the set is not. */
HWT_API void hwt_smmu_dev_get_stats(const struct hwt_smmu_dev *dev, struct hwt_smmu_dev_stats *st);

HWT_END_DECLS

#endif
