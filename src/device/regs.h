/* SPDX-License-Identifier: MIT */
/*
 * The software SMMU's register file: the only state the driver side
 * (src/cmdq) and the device (src/device) share besides queue memory and the
 * DMA region.  Accesses go through the functions below, the way a CPU reaches
 * an SMMU through MMIO, and each one documents its ordering.
 *
 * Doorbell and events.  A device thread that finds no work spins briefly and
 * then sleeps in futex_wait on the doorbell counter DB; a CONS-polling waiter
 * spins briefly and then sleeps on the event word EVT, which the device bumps
 * when it signals SEV.  Each sleep is a Dekker handshake made of seq_cst
 * operations only:
 *
 *   writer (PROD, GERRORN, stop)      device (going to sleep)
 *   D1 store the register (seq_cst)   S1 store dev_sleeping=1   (seq_cst)
 *   D2 load dev_sleeping  (seq_cst)   S1b load DB               (seq_cst)
 *   D3 if set: DB++, futex_wake(DB)   S2 load the registers     (seq_cst)
 *                                     S3 futex_wait(DB, S1b's value)
 *
 * In the single total order of seq_cst operations either D2 sees S1 (the
 * writer bumps DB and wakes) or S2 sees D1 (the device does not sleep); a
 * bump after S1b makes S3 return at once.  Waiting on a counter that every
 * writer bumps, not on PROD, is what keeps a GERRORN write or a stop from
 * being lost between S2 and S3.
 * EVT uses the same pattern with evt_sleepers (W1/W2 against V1/V2 below).
 */
#ifndef HWT_DEVICE_REGS_H
#define HWT_DEVICE_REGS_H

#include <hwtune/smmu.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/futex.h"

#define HWT__CACHELINE 64

struct hwt__smmu_regs {
	/* Read-only after the device is created. */
	uint32_t idr0;
	uint32_t idr1;

	/* Written by the driver, read by the device. */
	alignas(HWT__CACHELINE) _Atomic uint32_t prod;   /* CMDQ_PROD */
	_Atomic uint32_t gerrorn;                        /* GERRORN: error acknowledge */
	_Atomic uint64_t cmdq_base;                      /* CMDQ_BASE: IOVA | LOG2SIZE */

	/* Written by the device, read by the driver. */
	alignas(HWT__CACHELINE) _Atomic uint32_t cons;   /* CMDQ_CONS, ERR in [30:24] */
	_Atomic uint32_t gerror;                         /* GERROR: toggled on error */
	_Atomic uint32_t enabled;  /* 1 while the consumer runs (CR0ACK.CMDQEN-like);
				    * cleared on stop, followed by an SEV */

	/* SEV: event counter, bumped by the device; waiters sleep on it. */
	alignas(HWT__CACHELINE) _Atomic uint32_t evt;
	_Atomic uint32_t evt_sleepers;

	/* Doorbell: the device sleeps on db while dev_sleeping is set. */
	alignas(HWT__CACHELINE) _Atomic uint32_t dev_sleeping;
	_Atomic uint32_t db;
};

/* D2 and D3: after a register write (D1), wake a sleeping device. */
static inline void hwt__reg_ring(struct hwt__smmu_regs *r)
{
	if (atomic_load_explicit(&r->dev_sleeping, memory_order_seq_cst)) {          /* D2 */
		atomic_fetch_add_explicit(&r->db, 1, memory_order_seq_cst);          /* D3 */
		hwt__futex_wake(&r->db, 1);
	}
}

/* --- driver side ------------------------------------------------------- */

static inline uint32_t hwt__reg_idr0(const struct hwt__smmu_regs *r)
{
	return r->idr0;
}

static inline uint32_t hwt__reg_idr1(const struct hwt__smmu_regs *r)
{
	return r->idr1;
}

/*
 * Publish PROD.  D1 (seq_cst, so also a release): the device's acquire load
 * of PROD (A_PROD in the device) that reads this value sees every command
 * written before it.  D2 then decides whether the device needs a wake-up.
 */
static inline void hwt__reg_write_prod(struct hwt__smmu_regs *r, uint32_t prod)
{
	atomic_store_explicit(&r->prod, prod, memory_order_seq_cst);              /* D1 */
	hwt__reg_ring(r);
}

/*
 * Read CONS.  Acquire, pairs with the device's release store of CONS
 * (R_CONS): when CONS has passed a command, that command's effects are
 * visible to the reader.
 */
static inline uint32_t hwt__reg_read_cons(const struct hwt__smmu_regs *r)
{
	return atomic_load_explicit(&r->cons, memory_order_acquire);
}

static inline uint32_t hwt__reg_read_gerror(const struct hwt__smmu_regs *r)
{
	return atomic_load_explicit(&r->gerror, memory_order_acquire);
}

/* Is the device consuming?  Waiters check it on their slow path. */
static inline int hwt__reg_enabled(const struct hwt__smmu_regs *r)
{
	return atomic_load_explicit(&r->enabled, memory_order_acquire);
}

/* Acknowledge errors; the device resumes at CONS.  Release: pairs with the
 * device's acquire load of GERRORN, so a rewritten queue entry is visible. */
static inline void hwt__reg_write_gerrorn(struct hwt__smmu_regs *r, uint32_t v)
{
	atomic_store_explicit(&r->gerrorn, v, memory_order_seq_cst);             /* D1 */
	hwt__reg_ring(r);
}

/*
 * Sleep until the device signals SEV, at most timeout_ns.  The caller has
 * checked its condition and found it false; it re-checks after this returns.
 *   W1 evt_sleepers++ (seq_cst)      V1 evt++          (seq_cst, device)
 *   W2 load evt, then the caller's   V2 load sleepers  (seq_cst, device)
 *      condition (seq_cst) below
 * `still_waiting` re-reads the condition after W1 (seq_cst) so a signal
 * between the caller's check and W1 is not lost.
 */
static inline int hwt__reg_wait_event(struct hwt__smmu_regs *r, uint64_t timeout_ns,
				      bool (*still_waiting)(void *), void *arg)
{
	uint32_t e;
	int ret = 0;

	atomic_fetch_add_explicit(&r->evt_sleepers, 1, memory_order_seq_cst);    /* W1 */
	e = atomic_load_explicit(&r->evt, memory_order_seq_cst);                 /* W2 */
	if (still_waiting(arg))
		ret = hwt__futex_wait(&r->evt, e, timeout_ns);
	atomic_fetch_sub_explicit(&r->evt_sleepers, 1, memory_order_relaxed);
	return ret == -ETIMEDOUT ? ret : 0;
}

/* --- device side ------------------------------------------------------- */

/* SEV: V1 then V2, see hwt__reg_wait_event(). */
static inline void hwt__reg_sev(struct hwt__smmu_regs *r)
{
	atomic_fetch_add_explicit(&r->evt, 1, memory_order_seq_cst);              /* V1 */
	if (atomic_load_explicit(&r->evt_sleepers, memory_order_seq_cst))        /* V2 */
		hwt__futex_wake(&r->evt, INT32_MAX);
}

#endif
