/* SPDX-License-Identifier: MIT */
/*
 * A software SMMUv3: the device side of the command queue.
 *
 * The device owns a register file (IDR0/IDR1, CMDQ_BASE, PROD, CONS,
 * GERROR/GERRORN) and a consumer thread.  The driver side writes commands
 * into queue memory it registered as a DMA region, programs CMDQ_BASE and
 * publishes PROD; the consumer fetches the 16-byte little-endian entries,
 * executes them in order against models of the SMMU's caches, advances CONS
 * once a command's effects are visible, and completes CMD_SYNC by an MSI
 * write, an SEV or a "wired interrupt" callback.  See src/device/device.h for
 * the register and DMA interface the driver side uses.
 *
 * Lifecycle:  config_default -> (edit) -> create -> [driver maps queue memory,
 * writes CMDQ_BASE] -> start -> ... pause/resume ... -> stop -> destroy.
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
 * Start consuming: reads CMDQ_BASE (written by the driver beforehand).
 * -EINVAL if CMDQ_BASE is unset, LOG2SIZE > CMDQS, the base is not aligned
 * to the queue size (at least 32 bytes) or the queue is not inside one DMA
 * region; -EBUSY if already running; -errno from thread creation (e.g. an
 * unusable cpu).  CONS keeps its value from before (0 after create); a
 * GERROR.CMDQ_ERR still unacknowledged keeps the queue stopped.  Sets
 * enabled = 1 before the consumer runs.
 */
HWT_API int hwt_smmu_dev_start(struct hwt_smmu_dev *dev);
/*
 * Pause: once this returns the device consumes nothing until resume (waiters
 * time out).  Works before start too.  -ETIMEDOUT if the consumer did not
 * acknowledge within 1 s (a command handler that blocks).
 */
HWT_API int hwt_smmu_dev_pause(struct hwt_smmu_dev *dev);
HWT_API int hwt_smmu_dev_resume(struct hwt_smmu_dev *dev);
/* The consumer exits; then enabled = 0 (release) and an SEV so sleepers
 * notice.  Idempotent.  start may be called again afterwards. */
HWT_API int hwt_smmu_dev_stop(struct hwt_smmu_dev *dev);
/* stop, then free.  NULL is ignored. */
HWT_API void hwt_smmu_dev_destroy(struct hwt_smmu_dev *dev);

/* ---- Fault injection -------------------------------------------------- */
enum hwt_smmu_fault {
	/* The next command fetch aborts once (CONS.ERR = ABT); the retry after
	 * the GERRORN acknowledgement fetches normally. */
	HWT_SMMU_FAULT_ABT,
	/* The next ATC_INV "times out": the first CMD_SYNC after it reports
	 * ATC_INV_SYNC once; re-executing that sync succeeds. */
	HWT_SMMU_FAULT_ATC_TIMEOUT,
};
/* Arm one fault (arming it again before it fires is a no-op).  -EINVAL for
 * an unknown fault. */
HWT_API int hwt_smmu_dev_inject(struct hwt_smmu_dev *dev, enum hwt_smmu_fault fault);

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

/* ---- Cache models (test API) ----------------------------------------------
 * The built-in executor invalidates these when it executes CFGI_*, TLBI_* and
 * ATC_INV (see src/device/cache.c for the matching rules).  Every function is
 * safe against the consumer thread; a lookup made after a CMD_SYNC completed
 * sees every invalidation issued before it.  Inserting an existing key is a
 * no-op; -ENOSPC when the model is full.
 */
enum hwt_smmu_cfg_kind { HWT_SMMU_CFG_STE, HWT_SMMU_CFG_CD };
/* An STE (by sid; ssid ignored) or a CD (by sid and ssid < 2^20). */
HWT_API int hwt_smmu_dev_cfg_insert(struct hwt_smmu_dev *dev, enum hwt_smmu_cfg_kind kind,
				    uint32_t sid, uint32_t ssid);
HWT_API bool hwt_smmu_dev_cfg_lookup(struct hwt_smmu_dev *dev, enum hwt_smmu_cfg_kind kind,
				     uint32_t sid, uint32_t ssid);

enum hwt_smmu_tlb_kind {
	HWT_SMMU_TLB_NH,  /* non-hyp stage 1 (+2): tagged VMID, ASID (or global) */
	HWT_SMMU_TLB_EL2, /* EL2 stage 1: tagged ASID (or global), no VMID */
	HWT_SMMU_TLB_S2,  /* stage 2 only: tagged VMID, addr is an IPA */
};
struct hwt_smmu_tlb_entry {
	enum hwt_smmu_tlb_kind kind;
	uint16_t vmid;      /* NH, S2 */
	uint16_t asid;      /* NH, EL2; ignored when global */
	bool global;        /* nG = 0: matches every ASID (NH, EL2) */
	uint64_t addr;      /* VA or IPA, aligned to 1 << size_log2 */
	unsigned size_log2; /* 12..48: a page of the granule (12, 14, 16) or a block */
};
/* -EINVAL for a bad kind, size or unaligned addr. */
HWT_API int hwt_smmu_dev_tlb_insert(struct hwt_smmu_dev *dev, const struct hwt_smmu_tlb_entry *e);
/* Does an entry of this kind translate addr for (vmid, asid)?  A global
 * entry matches any asid; vmid is ignored for EL2, asid for S2. */
HWT_API bool hwt_smmu_dev_tlb_lookup(struct hwt_smmu_dev *dev, enum hwt_smmu_tlb_kind kind,
				     uint16_t vmid, uint16_t asid, uint64_t addr);
/* Is exactly this entry (same tags, address and size) cached? */
HWT_API bool hwt_smmu_dev_tlb_contains(struct hwt_smmu_dev *dev,
				       const struct hwt_smmu_tlb_entry *e);

#define HWT_SMMU_ATC_NO_SSID UINT32_MAX
/* An ATS translation of the endpoint sid, for ssid (or HWT_SMMU_ATC_NO_SSID),
 * 1 << size_log2 bytes (12..63) at addr (aligned). */
HWT_API int hwt_smmu_dev_atc_insert(struct hwt_smmu_dev *dev, uint32_t sid, uint32_t ssid,
				    uint64_t addr, unsigned size_log2);
HWT_API bool hwt_smmu_dev_atc_lookup(struct hwt_smmu_dev *dev, uint32_t sid, uint32_t ssid,
				     uint64_t addr);

/* Number of valid entries in all models together. */
HWT_API unsigned hwt_smmu_dev_cache_count(struct hwt_smmu_dev *dev);
/* Empty every model. */
HWT_API void hwt_smmu_dev_cache_clear(struct hwt_smmu_dev *dev);

HWT_END_DECLS

#endif
