/* SPDX-License-Identifier: MIT */
/*
 * The software SMMU seen from a test or an observer, not from a driver:
 * pausing the consumer, injecting faults, and inspecting the models of the
 * SMMU's caches.  Production code does not need any of this; tests use it
 * to check that "CMD_SYNC completed" implies "every earlier invalidation
 * took effect", and that errors are recovered.  Not included by
 * <hwtune/hwtune.h>.
 */
#ifndef HWTUNE_SMMU_MODEL_H
#define HWTUNE_SMMU_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "hwtune/api.h"
#include "hwtune/device.h"

HWT_BEGIN_DECLS

/* ---- Pause / resume ------------------------------------------------------ */
/*
 * Pause: once this returns the device consumes nothing until resume (waiters
 * time out).  Works before start too.  -ETIMEDOUT if the consumer did not
 * acknowledge within 1 s (a command handler that blocks).
 */
HWT_API int hwt_smmu_dev_pause(struct hwt_smmu_dev *dev);
HWT_API int hwt_smmu_dev_resume(struct hwt_smmu_dev *dev);

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

/* ---- Cache models (test API) ----------------------------------------------
 * The built-in executor invalidates these when it executes CFGI_*, TLBI_* and
 * ATC_INV (see src/device/model.c for the matching rules).  Every function is
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
