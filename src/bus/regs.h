/* SPDX-License-Identifier: MIT */
/*
 * The SMMU's register file: with queue memory and the DMA map, the only
 * state the driver side (src/cmdq) and the device (src/device) share.  The
 * driver reaches it only through the hwt__reg_* functions below, the way a
 * CPU reaches an SMMU through MMIO, and each one states its ordering; the
 * device, which implements the registers, reads and writes the fields.
 *
 * Queue enable is a handshake, as CR0/CR0ACK are on an SMMUv3: the driver
 * writes CMDQ_BASE, PROD and CONS while CR0.CMDQEN is 0, then sets
 * CR0.CMDQEN (R_CR0); the device acts on it when it runs (at start, or in
 * its loop, paused or not) and reports it in CR0ACK (R_ACK), which echoes
 * the CR0 value it acted on.  Once a driver has cleared CR0.CMDQEN, seen
 * CR0ACK equal to that write (or the device not live, with CR0ACK.CMDQEN
 * 0), and then unmapped the queue (hwt__bus_dma_unmap refuses under the
 * device's lock while CR0ACK.CMDQEN is set: a start racing the disable holds
 * that lock until its own acknowledgement is visible), the device no longer
 * reads queue memory nor calls the GERROR line.  A stopped device has
 * CR0ACK 0, so CR0ACK also answers "is anybody consuming?", and a count the
 * driver waits for never matches a stale acknowledgement (the count wraps
 * at 16 bits).  Apart from CR0ACK the device keeps, across a stop, the last
 * CR0 value it acted on (CR0_SEEN, no SMMUv3 register), so that a driver
 * can tell a device that stopped from one that never acted on its enable
 * (hwt__reg_cr0_acted).  An
 * enable the device refuses (CMDQ_BASE describes no queue) makes
 * hwt_smmu_dev_start fail with -EINVAL, or, on a running device, is
 * acknowledged with CMDQEN 0 (same write count) and never consumed.
 *
 * Doorbell and events.  A device thread that finds no work spins briefly and
 * then sleeps in futex_wait on the doorbell counter DB; a CONS-polling waiter
 * spins briefly and then sleeps on the event word EVT, which the device bumps
 * when it signals SEV.  Each sleep is a Dekker handshake:
 *
 *   driver, after a register write    device, going to sleep
 *   R_PROD/R_GERRN/R_CR0 the store    S1 store dev_sleeping = 1, then SB
 *   DB2 load dev_sleeping             S2 load DB
 *   DB3 if set: DB++, futex_wake(DB)  S3 load PROD, GERRORN, CR0
 *                                     S4 futex_wait(DB, S2's value)
 *
 * Either DB2 sees S1 (the writer bumps DB and wakes) or S3 sees the store
 * (the device does not sleep); a bump after S2 makes S4 return at once.
 * The hot store (PROD) must not pay a locked instruction, so where the
 * kernel has membarrier(2) the doorbell is asymmetric (regs->asym, fixed
 * when the device is created): R_PROD is a release store followed by a
 * compiler barrier and a plain load at DB2, and the sleeper pays instead:
 * SB is a membarrier, which puts a full barrier into every running thread
 * (and a thread that is not running passed one when it was switched out),
 * so a writer's store is either visible to S3 or its DB2 runs after SB and
 * sees S1.  Without membarrier every step is seq_cst and SB is nothing:
 * then the single total order of seq_cst operations decides.  The rare
 * writes (GERRORN, CR0, stop/pause) stay seq_cst either way; S1 and S3 are
 * seq_cst for them.  Each seq_cst store of these handshakes (S1, the
 * symmetric R_PROD, R_GERRN, R_QGERRN, R_CR0, R_QEN, V1, and the device's
 * live = 1 against R_CR0) is an exchange, hwt__dekker_store(), and the
 * other half of each pair is one too or an RMW: the same xchg on x86_64,
 * and ordered before the next load where an emulator does not order stlr
 * before ldar (QEMU's TCG on x86_64 hosts, common/membarrier.h).  Should
 * a membarrier fail later (ENOMEM, a seccomp filter installed after
 * start), the sleeper sleeps 100 us at most.
 * riscv64 kernels before 6.9 lacked the barrier at switch_mm that covers a
 * thread not running: a wake-up can then come late by one sleep, never be
 * lost for longer.  (On riscv64 gcc emits the release store as a fence and
 * an amoswap: the gain there is the fences only.)
 *
 * The SEV (EVT) stays symmetric, seq_cst: every CONS waiter that goes back
 * to sleep would pay a membarrier, and SEV wakes all of them.  Waiting on a counter
 * that every writer bumps, not on PROD, is what keeps a GERRORN or CR0 write
 * from being lost between S3 and S4.  Stop and pause requests are seq_cst
 * RMWs of the device's ctl word followed by the same DB2/DB3 (S3 reads ctl).
 * EVT uses the same pattern with evt_sleepers (W1/W2 against V1/V2 below).
 */
#ifndef HWT_BUS_REGS_H
#define HWT_BUS_REGS_H

#include <hwtune/smmu.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"
#include "common/cacheline.h"
#include "common/futex.h"
#include "common/membarrier.h"

/* IDR1.CMDQS, log2 of the largest command queue, is at most 19 (SMMUv3). */
#define HWT__CMDQS_ARCH_MAX 19u

/* CMDQ_BASE fields (ADDR [51:5], LOG2SIZE [4:0], RA [62]). */
#define HWT__CMDQ_BASE_ADDR_MASK 0x000fffffffffffe0ull
#define HWT__CMDQ_BASE_LOG2SIZE_MASK 0x1full
#define HWT__CMDQ_BASE_RA (1ull << 62)

/*
 * Several command queues (ECMDQ-like).  The device has NUMQ queues
 * (hwt__reg_nqueues(), from IDR6.NUMQ); queue 0 is the queue above (CR0/
 * CR0ACK, CMDQ_BASE, PROD, CONS, GERROR/GERRORN, unchanged), and queue i >= 1
 * has a block of its own, struct hwt__smmu_qregs:
 *
 *   Q_BASE_i      IOVA | LOG2SIZE, as CMDQ_BASE         driver, while disabled
 *   Q_PROD_i      WRP | IDX only (no other bit)         driver (own line)
 *   Q_CONS_i      WRP | IDX, ERR [30:24], OVF [31]      device (own line)
 *   Q_EN_i        CMDQEN (bit 3) + write count [31:16]  driver: the CR0 of queue i
 *   Q_ENACK_i     Q_EN as acted on, 0 stopped           device: its CR0ACK
 *   Q_EN_SEEN_i   the last Q_EN acted on, kept on stop  device: its CR0_SEEN
 *   Q_GERROR_i    CMDQ_ERR, MSI_CMDQ_ABT (toggles)      device: its GERROR
 *   Q_GERRORN_i   acknowledgement toggles               driver: its GERRORN
 *
 * Each pair has today's shape and ordering: Q_EN/Q_ENACK the CR0/CR0ACK
 * handshake (R_QEN/A_QEN, R_QACK/A_QACK), Q_GERROR/Q_GERRORN the error
 * toggles (R_QGERR/A_QGERR, R_QGERRN/A_QGERRN), Q_PROD/Q_CONS R_PROD/A_PROD
 * and R_CONS/A_CONS.  A command error stops only its own queue: CONS.ERR of
 * that queue, its GERROR toggled and the GERROR line called; the queue
 * re-fetches at CONS once its GERRORN acknowledges.  The other queues run
 * on.  A CMD_SYNC orders the commands of its own queue only: there is no
 * order between queues.  The hwt__reg_q_*(r, i, ..) accessors below take
 * any i < NUMQ and reach queue 0's registers for i = 0, so a driver can
 * treat all queues alike.  One doorbell (DB, dev_sleeping) and one SEV (EVT)
 * serve all queues; the device's S3 reads Q_EN of every queue and Q_PROD and
 * Q_GERRORN of every enabled one (queues.c).  A stopped device has every
 * Q_ENACK 0, as CR0ACK, and keeps Q_EN_SEEN, as CR0_SEEN.
 *
 * Q_PROD on its own line: a producer's commit is a single plain store of
 * WRP | IDX to it (the rseq path), so no enable or acknowledge bit may share
 * the word, and the device's writes (CONS) never bounce it.
 */
#define HWT__NUMQ_MAX 256u
#define HWT__IDR6_NUMQ_MASK 0x1ffu /* IDR6 [8:0]: the number of queues (no SMMUv3 field) */
#define HWT__Q_EN HWT_SMMU_CR0_CMDQEN

struct hwt__smmu_qregs {
	/* Written by the driver's producers, read by the device. */
	alignas(HWT__CACHELINE) _Atomic uint32_t prod;    /* Q_PROD: WRP | IDX only */
	/* Written by the device, read by the driver. */
	alignas(HWT__CACHELINE) _Atomic uint32_t cons;    /* Q_CONS, ERR in [30:24] */
	_Atomic uint32_t enack;                           /* Q_ENACK: 0 stopped */
	_Atomic uint32_t en_seen;                         /* Q_EN_SEEN: kept across stops */
	_Atomic uint32_t gerror;                          /* Q_GERROR */
	/* Written by the driver rarely, read by the device once per segment. */
	alignas(HWT__CACHELINE) _Atomic uint64_t base;    /* Q_BASE: IOVA | LOG2SIZE */
	_Atomic uint32_t en;                              /* Q_EN */
	_Atomic uint32_t gerrorn;                         /* Q_GERRORN */
};

_Static_assert(offsetof(struct hwt__smmu_qregs, cons) - offsetof(struct hwt__smmu_qregs, prod) >=
		       HWT__CACHELINE &&
	       offsetof(struct hwt__smmu_qregs, base) - offsetof(struct hwt__smmu_qregs, cons) >=
		       HWT__CACHELINE,
	       "Q_PROD, Q_CONS and the rare registers each on a line of their own");

struct hwt__smmu_regs {
	/* Read-only after the device is created. */
	uint32_t idr0;
	uint32_t idr1;
	uint32_t idr6; /* NUMQ [8:0]: command queues, 1..HWT__NUMQ_MAX (see below) */
	bool asym; /* the handshakes' heavy side is a membarrier (see above) */
	/* Blocks of queues 1..NUMQ-1 at q[1..]; q[0] is unused (queue 0 is the
	 * fields below).  Allocated with the device, never moved. */
	struct hwt__smmu_qregs *q;

	/* Written by the driver, read by the device. */
	alignas(HWT__CACHELINE) _Atomic uint32_t prod;   /* CMDQ_PROD */
	_Atomic uint32_t gerrorn;                        /* GERRORN: error acknowledge */
	/* Written by the driver rarely: the device reads cr0 per command from
	 * a line that producers do not bounce. */
	alignas(HWT__CACHELINE) _Atomic uint32_t cr0;    /* CR0: CMDQEN, write count [31:16] */
	_Atomic uint64_t cmdq_base;                      /* CMDQ_BASE: IOVA | LOG2SIZE */

	/* Written by the device, read by the driver. */
	alignas(HWT__CACHELINE) _Atomic uint32_t cons;   /* CMDQ_CONS, ERR in [30:24] */
	_Atomic uint32_t gerror;                         /* GERROR: toggled on error */
	_Atomic uint32_t cr0ack;                         /* CR0ACK: CR0 as acted on; 0 stopped */
	_Atomic uint32_t cr0_seen; /* the last CR0 acted on, kept across stops */
	_Atomic uint32_t live;     /* 1 while the consumer thread runs (no SMMUv3
				    * register: a software device can be off) */

	/* SEV: event counter, bumped by the device; waiters sleep on it. */
	alignas(HWT__CACHELINE) _Atomic uint32_t evt;
	_Atomic uint32_t evt_sleepers;

	/* Doorbell: the device sleeps on db while dev_sleeping is set. */
	alignas(HWT__CACHELINE) _Atomic uint32_t dev_sleeping;
	_Atomic uint32_t db;
};

_Static_assert(offsetof(struct hwt__smmu_regs, cons) - offsetof(struct hwt__smmu_regs, prod) >=
		       HWT__CACHELINE,
	       "PROD (driver-written) and CONS (device-written) share a line");

/* DB3: wake the device sleeping on DB. */
static inline void hwt__reg_wake(struct hwt__smmu_regs *r)
{
	atomic_fetch_add_explicit(&r->db, 1, memory_order_seq_cst);                  /* DB3 */
	hwt__futex_wake(&r->db, 1);
}

/* DB2 and DB3: after a seq_cst register store, wake a sleeping device. */
static inline void hwt__reg_ring(struct hwt__smmu_regs *r)
{
	if (atomic_load_explicit(&r->dev_sleeping, memory_order_seq_cst))            /* DB2 */
		hwt__reg_wake(r);
}

/* SB: the device's barrier between S1 and the loads that follow it; a
 * membarrier on the asymmetric doorbell.  Returns the longest the sleep that
 * follows may last: a failed membarrier leaves the wake-up unordered. */
static inline uint64_t hwt__reg_sleeper_barrier(const struct hwt__smmu_regs *r,
						uint64_t max_sleep_ns)
{
	if (r->asym && !hwt__membarrier())
		return max_sleep_ns < 100000 ? max_sleep_ns : 100000;
	return max_sleep_ns;
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
 * Publish PROD.  R_PROD (a release; seq_cst on the symmetric doorbell): the
 * device's acquire load of PROD (A_PROD) that reads this value sees every
 * command written before it.  DB2 then decides whether the device needs a
 * wake-up.
 */
static inline void hwt__reg_write_prod(struct hwt__smmu_regs *r, uint32_t prod)
{
	if (__builtin_expect(r->asym, 1)) {
		atomic_store_explicit(&r->prod, prod, memory_order_release);      /* R_PROD */
		atomic_signal_fence(memory_order_seq_cst); /* the sleeper's SB orders it */
		if (atomic_load_explicit(&r->dev_sleeping, memory_order_relaxed)) /* DB2 */
			hwt__reg_wake(r);
		return;
	}
	hwt__dekker_store(&r->prod, prod);                                         /* R_PROD */
	hwt__reg_ring(r);
}

/* PROD as last written; the driver's own value, so relaxed. */
static inline uint32_t hwt__reg_read_prod(const struct hwt__smmu_regs *r)
{
	return atomic_load_explicit(&r->prod, memory_order_relaxed);
}

/*
 * Read CONS.  A_CONS: acquire, pairs with the device's release store of CONS
 * (R_CONS): when CONS has passed a command, that command's effects are
 * visible to the reader.
 */
static inline uint32_t hwt__reg_read_cons(const struct hwt__smmu_regs *r)
{
	return atomic_load_explicit(&r->cons, memory_order_acquire);              /* A_CONS */
}

/* WFE-like: CONS once it differs from old, or after one bounded wait (an
 * event on aarch64, a short spin elsewhere).  The load is A_CONS. */
static inline uint32_t hwt__reg_wait_cons_change(const struct hwt__smmu_regs *r, uint32_t old)
{
	return hwt__wait_change32(&r->cons, old);                                 /* A_CONS */
}

/* A_GERR: acquire, pairs with the device's R_GERR: CONS.ERR, set before
 * GERROR was toggled, is visible. */
static inline uint32_t hwt__reg_read_gerror(const struct hwt__smmu_regs *r)
{
	return atomic_load_explicit(&r->gerror, memory_order_acquire);            /* A_GERR */
}

/* GERRORN as last written; the driver's own value, so relaxed. */
static inline uint32_t hwt__reg_read_gerrorn(const struct hwt__smmu_regs *r)
{
	return atomic_load_explicit(&r->gerrorn, memory_order_relaxed);
}

/* Acknowledge errors; the device resumes at CONS.  R_GERRN (seq_cst, so also
 * a release): pairs with the device's A_GERRN, so an entry rewritten before
 * the acknowledgement is visible when the device re-fetches it. */
static inline void hwt__reg_write_gerrorn(struct hwt__smmu_regs *r, uint32_t v)
{
	hwt__dekker_store(&r->gerrorn, v);                                        /* R_GERRN */
	hwt__reg_ring(r);
}

/*
 * Reset the queue registers to an empty queue at base (IOVA | LOG2SIZE), as
 * a driver does before enabling the queue.  Only while CR0.CMDQEN and
 * CR0ACK.CMDQEN are 0: relaxed, published by the following R_CR0.
 */
static inline void hwt__reg_reset_queue(struct hwt__smmu_regs *r, uint64_t base)
{
	atomic_store_explicit(&r->prod, 0, memory_order_relaxed);
	atomic_store_explicit(&r->cons, 0, memory_order_relaxed);
	atomic_store_explicit(&r->cmdq_base, base, memory_order_relaxed);
}

/*
 * Request CR0 = v (HWT_SMMU_CR0_*) and return the value written: v plus a
 * write count in bits [31:16] (RES0 on an SMMUv3), never 0, so that it never
 * matches the CR0ACK of a stopped device (0).  A load then a store: one
 * writer only (the attached driver).  The count makes every write a change
 * the device acts on, and CR0ACK echoes it: CR0ACK == the value written
 * means done; the same count with CMDQEN clear means the enable was
 * refused.  R_CR0 (seq_cst, so also a release): pairs with the device's
 * A_CR0, which then sees CMDQ_BASE, PROD and CONS as written before.
 */
#define HWT__CR0_SEQ_SHIFT 16
static inline uint32_t hwt__reg_write_cr0(struct hwt__smmu_regs *r, uint32_t v)
{
	uint32_t seq = (atomic_load_explicit(&r->cr0, memory_order_relaxed) >> HWT__CR0_SEQ_SHIFT) + 1;

	seq &= (1u << (32 - HWT__CR0_SEQ_SHIFT)) - 1;
	seq += !seq;
	v = seq << HWT__CR0_SEQ_SHIFT | (v & ((1u << HWT__CR0_SEQ_SHIFT) - 1));
	hwt__dekker_store(&r->cr0, v);                                            /* R_CR0 */
	hwt__reg_ring(r);
	return v;
}

/* CR0ACK.  A_ACK: seq_cst, pairs with the device's R_ACK (seq_cst, so that
 * a disable racing a start is ordered against it, see hwt_smmu_dev_start):
 * after reading CMDQEN 0 the device's last accesses to queue memory
 * happened before (and after a stop, the final CONS is visible); after
 * reading CMDQEN 1 the device has read CMDQ_BASE, PROD and CONS. */
static inline uint32_t hwt__reg_read_cr0ack(const struct hwt__smmu_regs *r)
{
	return atomic_load_explicit(&r->cr0ack, memory_order_seq_cst);           /* A_ACK */
}

/* Does the device run, so that a CR0 write will be acknowledged?  seq_cst:
 * a driver's R_CR0 then this load, against the device's store of live = 1
 * then its A_CR0 at start: either the device sees the new CR0 or the driver
 * sees it live (and waits for CR0ACK). */
static inline bool hwt__reg_device_live(const struct hwt__smmu_regs *r)
{
	return atomic_load_explicit(&r->live, memory_order_seq_cst);
}

/* Is the queue being consumed?  Waiters check it on their slow path. */
static inline bool hwt__reg_cmdq_enabled(const struct hwt__smmu_regs *r)
{
	return hwt__reg_read_cr0ack(r) & HWT_SMMU_CR0_CMDQEN;
}

/* Has the device acted on the driver's last CR0 write (CR0_SEEN carries its
 * count), whether it still runs or stopped since?  Not if it never started
 * after that write.  It chooses the words of a log line and orders nothing:
 * relaxed (cr0 is the driver's own write).  After 65535 writes the device
 * never acted on, a stale count can match: the line then says "stopped". */
static inline bool hwt__reg_cr0_acted(const struct hwt__smmu_regs *r)
{
	uint32_t cr0 = atomic_load_explicit(&r->cr0, memory_order_relaxed);
	uint32_t seen = atomic_load_explicit(&r->cr0_seen, memory_order_relaxed);

	return (seen ^ cr0) >> HWT__CR0_SEQ_SHIFT == 0;
}

/*
 * Sleep until the device signals SEV, at most timeout_ns.  The caller has
 * checked its condition and found it false; it re-checks after this returns.
 *   W1 evt_sleepers++ (seq_cst)      V1 evt++          (seq_cst, device)
 *   W2 load evt (seq_cst), then      V2 load sleepers  (seq_cst, device)
 *      the caller's condition
 * `still_waiting` re-reads the condition after W1 (its loads are A_CONS,
 * and seq_cst W1/W2 keep them after W1) so a signal between the caller's
 * check and W1 is not lost.  A stop stores CR0ACK = 0 (seq_cst) before its
 * SEV, so checking CR0ACK here after W2 means a stop is never slept through.
 */
static inline int hwt__reg_wait_event(struct hwt__smmu_regs *r, uint64_t timeout_ns,
				      bool (*still_waiting)(void *), void *arg)
{
	uint32_t e;
	int ret = 0;

	atomic_fetch_add_explicit(&r->evt_sleepers, 1, memory_order_seq_cst);    /* W1 */
	e = atomic_load_explicit(&r->evt, memory_order_seq_cst);                 /* W2 */
	if (hwt__reg_cmdq_enabled(r) && still_waiting(arg))
		ret = hwt__futex_wait(&r->evt, e, timeout_ns);
	atomic_fetch_sub_explicit(&r->evt_sleepers, 1, memory_order_relaxed);
	return ret == -ETIMEDOUT ? ret : 0;
}

/* --- driver side: queue i of NUMQ (i = 0 is the queue above) ------------ */

/* NUMQ: how many queues the device has, 1..HWT__NUMQ_MAX. */
static inline unsigned hwt__reg_nqueues(const struct hwt__smmu_regs *r)
{
	return r->idr6 & HWT__IDR6_NUMQ_MASK;
}

/* The PROD word of queue i, for a producer that commits with one store of
 * its own (the rseq path: a plain store on x86_64, stlr on aarch64, is
 * R_PROD), then calls hwt__reg_q_doorbell().  Holds WRP | IDX only. */
static inline _Atomic uint32_t *hwt__reg_q_prod(struct hwt__smmu_regs *r, unsigned i)
{
	return i ? &r->q[i].prod : &r->prod;
}

/* The CONS word of queue i (device-written; read it with A_CONS). */
static inline _Atomic uint32_t *hwt__reg_q_cons(struct hwt__smmu_regs *r, unsigned i)
{
	return i ? &r->q[i].cons : &r->cons;
}

/* DB2 after an R_PROD made by the caller (hwt__reg_q_prod): on the
 * asymmetric doorbell a compiler barrier and a relaxed load (the sleeper's
 * SB orders them, see above); else DB2 reads dev_sleeping with a seq_cst
 * RMW that adds nothing.  The caller's R_PROD is a release store (the rseq
 * commit: a plain mov on x86_64, stlr on aarch64), and x86_64 lets a later
 * plain load pass it in the store buffer: DB2 could miss S1 while S3
 * misses the PROD (stress_doorbell_rseq).  The RMW is a locked instruction
 * on x86_64, which drains the store buffer first, and an acquire-release
 * RMW on aarch64, whose load an earlier stlr precedes (under QEMU's TCG,
 * which does not order them, its store-exclusive is a locked cmpxchg that
 * fails if dev_sleeping changed since the load: the same outcome).  (Not a seq_cst
 * fence: TSan builds refuse atomic_thread_fence.)  A producer preempted
 * before this only delays the wake-up: the device's S3 reads every enabled
 * queue's PROD. */
static inline void hwt__reg_q_doorbell(struct hwt__smmu_regs *r)
{
	if (__builtin_expect(r->asym, 1)) {
		atomic_signal_fence(memory_order_seq_cst); /* the sleeper's SB orders it */
		if (atomic_load_explicit(&r->dev_sleeping, memory_order_relaxed)) /* DB2 */
			hwt__reg_wake(r);
		return;
	}
	if (atomic_fetch_or_explicit(&r->dev_sleeping, 0, memory_order_seq_cst))  /* DB2 */
		hwt__reg_wake(r);
}

/* Publish PROD of queue i: R_PROD (release; seq_cst on the symmetric
 * doorbell), pairs with the device's A_PROD of that queue; then DB2. */
static inline void hwt__reg_q_write_prod(struct hwt__smmu_regs *r, unsigned i, uint32_t prod)
{
	/* Two constant orders, not one chosen at run time: a variable order
	 * compiles as seq_cst, an xchg (a locked instruction) on x86_64. */
	if (__builtin_expect(r->asym, 1)) {
		atomic_store_explicit(hwt__reg_q_prod(r, i), prod, memory_order_release); /* R_PROD */
		hwt__reg_q_doorbell(r);
		return;
	}
	/* A seq_cst exchange needs no fence before DB2. */
	hwt__dekker_store(hwt__reg_q_prod(r, i), prod);                                  /* R_PROD */
	hwt__reg_ring(r);                                                                 /* DB2 */
}

/* PROD of queue i as last written; the driver's own value, so relaxed. */
static inline uint32_t hwt__reg_q_read_prod(struct hwt__smmu_regs *r, unsigned i)
{
	return atomic_load_explicit(hwt__reg_q_prod(r, i), memory_order_relaxed);
}

/* CONS of queue i.  A_CONS: acquire, pairs with the device's R_CONS of that
 * queue: the commands CONS has passed have taken effect. */
static inline uint32_t hwt__reg_q_read_cons(struct hwt__smmu_regs *r, unsigned i)
{
	return atomic_load_explicit(hwt__reg_q_cons(r, i), memory_order_acquire);    /* A_CONS */
}

/* WFE-like wait for CONS of queue i to differ from old (bounded); A_CONS. */
static inline uint32_t hwt__reg_q_wait_cons_change(struct hwt__smmu_regs *r, unsigned i,
						   uint32_t old)
{
	return hwt__wait_change32(hwt__reg_q_cons(r, i), old);                    /* A_CONS */
}

/* GERROR of queue i (GERROR itself for queue 0).  A_QGERR: acquire, pairs
 * with the device's R_QGERR (R_GERR for queue 0): that queue's CONS.ERR,
 * set before the toggle, is visible. */
static inline uint32_t hwt__reg_q_read_gerror(struct hwt__smmu_regs *r, unsigned i)
{
	return atomic_load_explicit(i ? &r->q[i].gerror : &r->gerror,
				    memory_order_acquire);                        /* A_QGERR */
}

/* GERRORN of queue i as last written; the driver's own value, so relaxed. */
static inline uint32_t hwt__reg_q_read_gerrorn(struct hwt__smmu_regs *r, unsigned i)
{
	return atomic_load_explicit(i ? &r->q[i].gerrorn : &r->gerrorn, memory_order_relaxed);
}

/* Acknowledge queue i's errors (toggle to match its GERROR); the queue
 * resumes at its CONS.  R_QGERRN (an exchange, so also a release): pairs with
 * the device's A_QGERRN, so an entry rewritten before it is re-fetched as
 * rewritten; seq_cst for the doorbell (S3 reads Q_GERRORN).  Then DB2. */
static inline void hwt__reg_q_write_gerrorn(struct hwt__smmu_regs *r, unsigned i, uint32_t v)
{
	hwt__dekker_store(i ? &r->q[i].gerrorn : &r->gerrorn, v);                /* R_QGERRN */
	hwt__reg_ring(r);
}

/* Reset queue i to an empty queue at base (IOVA | LOG2SIZE), while its
 * enable and acknowledgement are both 0: relaxed, published by R_QEN. */
static inline void hwt__reg_q_reset(struct hwt__smmu_regs *r, unsigned i, uint64_t base)
{
	if (!i) {
		hwt__reg_reset_queue(r, base);
		return;
	}
	atomic_store_explicit(&r->q[i].prod, 0, memory_order_relaxed);
	atomic_store_explicit(&r->q[i].cons, 0, memory_order_relaxed);
	atomic_store_explicit(&r->q[i].base, base, memory_order_relaxed);
}

/*
 * Enable (HWT__Q_EN) or disable (0) queue i; returns the value written, to
 * compare with hwt__reg_q_read_enack().  For queue 0 this is
 * hwt__reg_write_cr0(r, v).  For i >= 1 the word has CR0's shape: v plus a
 * write count in [31:16], never 0; one writer (the driver that owns the
 * queue).  R_QEN (seq_cst, so also a release): pairs with the device's
 * A_QEN, which then sees Q_BASE, Q_PROD and Q_CONS as written before.
 */
static inline uint32_t hwt__reg_q_write_en(struct hwt__smmu_regs *r, unsigned i, uint32_t v)
{
	uint32_t seq;

	if (!i)
		return hwt__reg_write_cr0(r, v);
	seq = (atomic_load_explicit(&r->q[i].en, memory_order_relaxed) >> HWT__CR0_SEQ_SHIFT) + 1;
	seq &= (1u << (32 - HWT__CR0_SEQ_SHIFT)) - 1;
	seq += !seq;
	v = seq << HWT__CR0_SEQ_SHIFT | (v & HWT__Q_EN);
	hwt__dekker_store(&r->q[i].en, v);                                         /* R_QEN */
	hwt__reg_ring(r);
	return v;
}

/* The enable acknowledgement of queue i (CR0ACK for queue 0).  A_QACK:
 * seq_cst, pairs with the device's R_QACK: after CMDQEN 0 the device no
 * longer touches that queue's memory; after CMDQEN 1 it has read Q_BASE,
 * Q_PROD and Q_CONS. */
static inline uint32_t hwt__reg_q_read_enack(struct hwt__smmu_regs *r, unsigned i)
{
	if (!i)
		return hwt__reg_read_cr0ack(r);
	return atomic_load_explicit(&r->q[i].enack, memory_order_seq_cst);       /* A_QACK */
}

/* Is queue i being consumed? */
static inline bool hwt__reg_q_enabled(struct hwt__smmu_regs *r, unsigned i)
{
	return hwt__reg_q_read_enack(r, i) & HWT__Q_EN;
}

/* Has the device acted on the last write of queue i's enable (see
 * hwt__reg_cr0_acted)? */
static inline bool hwt__reg_q_en_acted(struct hwt__smmu_regs *r, unsigned i)
{
	if (!i)
		return hwt__reg_cr0_acted(r);
	/* Log words only: relaxed, as hwt__reg_cr0_acted. */
	return ((atomic_load_explicit(&r->q[i].en_seen, memory_order_relaxed) ^
		 atomic_load_explicit(&r->q[i].en, memory_order_relaxed)) >>
		HWT__CR0_SEQ_SHIFT) == 0;
}

/* hwt__reg_wait_event() for a waiter on queue i: the same W1/W2 against
 * V1/V2; a stop stores every Q_ENACK 0 (seq_cst) before its SEV. */
static inline int hwt__reg_q_wait_event(struct hwt__smmu_regs *r, unsigned i, uint64_t timeout_ns,
					bool (*still_waiting)(void *), void *arg)
{
	uint32_t e;
	int ret = 0;

	atomic_fetch_add_explicit(&r->evt_sleepers, 1, memory_order_seq_cst);    /* W1 */
	e = atomic_load_explicit(&r->evt, memory_order_seq_cst);                 /* W2 */
	if (hwt__reg_q_enabled(r, i) && still_waiting(arg))
		ret = hwt__futex_wait(&r->evt, e, timeout_ns);
	atomic_fetch_sub_explicit(&r->evt_sleepers, 1, memory_order_relaxed);
	return ret == -ETIMEDOUT ? ret : 0;
}

/* --- device side ------------------------------------------------------- */

/* SEV: V1 then V2, see hwt__reg_wait_event().  Only the device writes EVT
 * (its consumer, or stop after joining it), so V1 is a load and then an
 * exchange rather than an increment (an exchange for the Dekker pair with
 * W1, common/membarrier.h). */
static inline void hwt__reg_sev(struct hwt__smmu_regs *r)
{
	uint32_t e = atomic_load_explicit(&r->evt, memory_order_relaxed) + 1;

	hwt__dekker_store(&r->evt, e);                                             /* V1 */
	if (atomic_load_explicit(&r->evt_sleepers, memory_order_seq_cst))        /* V2 */
		hwt__futex_wake(&r->evt, INT32_MAX);
}

#endif
