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
 * src/bus/bus.h is all that a driver uses of a device.
 *
 * Lifecycle:  config_default -> (edit) -> create -> start -> stop -> destroy;
 * a queue may be created and destroyed on it before start or while it runs
 * (one queue at a time), and is destroyed before the device (see
 * hwt_smmu_dev_destroy for the other order).  Test and observer functions (pause, fault
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
	/* Pin the consumer thread to this CPU (0..CPU_SETSIZE - 1, else create
	 * fails; one the thread cannot run on fails start); -1: unpinned. */
	int cpu;
	/* When CONS is published.  0 (the default): once per run, a run being
	 * the commands found between CONS and PROD at one read of PROD.  N > 0:
	 * also after every N commands (1 = after each command).  In every mode
	 * CONS is also published at each CMD_SYNC (up to it before its MSI,
	 * then past it), on an error (CONS.ERR at the failing entry), and
	 * before the device pauses, stops or acts on CR0.  Statistics count a
	 * command before the CONS store that covers it.  A producer waiting
	 * for space waits for the end of a run with 0: set N for slow
	 * commands. */
	unsigned cons_batch;
	/* How long an idle consumer spins on PROD before it sleeps (bounded
	 * futex sleeps, so it never needs a free core).  0 (the default) is
	 * auto: HWT_SMMU_DEV_SPIN_NS_AUTO or one futex wake-up on this machine
	 * if that is longer (measured once per process, at the first create
	 * that asks for auto: a helper thread and at most 1.5 ms of futex
	 * round trips; a busy machine may leave it unmeasured, and the next
	 * two such creates try again; see hwt_smmu_dev_stats.wake_ns).  Any
	 * other value is used as given. */
	unsigned spin_ns;
	/* Hi16xx quirk: the CMD_SYNC MSI is a 64-bit store of zero. */
	bool msi_64bit;
	/* MMU-600 erratum 1076982: no SEV on the queue-full -> not-full edge. */
	bool no_sev_on_not_full;
	/* Extra busy-waited costs, 0 = off.  msi: between the CONS update of a
	 * CS=IRQ CMD_SYNC and its MSI write.  sev: before a CS=SEV CMD_SYNC
	 * completes (its CONS update and SEV), and before any other SEV.  cmd:
	 * per executed command other than CMD_SYNC (with handler_batch, n x
	 * cmd_cost_ns before a call of n commands; calls are then cut to at
	 * most max(1, 100 us / cmd_cost_ns) commands so that stop, pause and
	 * a disable are still acted on promptly). */
	unsigned msi_cost_ns, sev_cost_ns, cmd_cost_ns;
	/* Executes every command except CMD_SYNC instead of the built-in SMMU
	 * executor (dw in host order).  Opcode 0x46 stays a CMD_SYNC, decoded
	 * and checked by the device; every other encoding is the handler's.
	 * Returns HWT_SMMU_CERROR_NONE, or a CERROR that stops the queue
	 * (anything else counts as ILL).  Runs on the consumer thread. */
	int (*handler)(void *ctx, const uint64_t dw[2]);
	/*
	 * Or (not both): executes a run of n >= 1 consecutive commands, none a
	 * CMD_SYNC, in queue order: cmds[i][0] and cmds[i][1] are the dwords
	 * of the i-th, in host order.  A run ends before a CMD_SYNC, at the
	 * end of the queue memory (the wrap), at the PROD the device read,
	 * and after the cons_batch-th command since CONS was last published;
	 * stop, pause, a CR0 write and injected faults are acted on between
	 * two calls.  On little-endian hosts cmds points into the queue
	 * memory itself: read-only, and valid only during the call (the
	 * slots are reused once CONS passes them); never keep the pointer.
	 * Returns HWT_SMMU_CERROR_NONE when all n executed, or the CERROR of
	 * the first failing command (anything else counts as ILL) with *done
	 * = how many executed before it (values >= n count as n - 1): CONS
	 * stops at that command with CONS.ERR, and after GERRORN the device
	 * fetches it again.  Runs on the consumer thread; handler_ctx is ctx.
	 */
	int (*handler_batch)(void *ctx, const uint64_t (*cmds)[2], unsigned n, unsigned *done);
	void *handler_ctx;
	/* CMD_SYNC with CS=IRQ and MSIADDR 0 (or no IDR0.MSI): the wired
	 * interrupt, called on the consumer thread after CONS passed the sync. */
	void (*sync_irq)(void *ctx);
	void *sync_irq_ctx;
};

/* The spin of spin_ns = 0 (auto) when a futex wake-up costs less. */
#define HWT_SMMU_DEV_SPIN_NS_AUTO 20000u

/* MSI|SEV|COHACC, cmdqs 8, cpu -1, cons_batch 0 (once per run), spin_ns 0
 * (auto), no quirks, no costs, built-in executor. */
HWT_API void hwt_smmu_dev_config_default(struct hwt_smmu_dev_config *cfg);

/* -EINVAL for a bad config (unknown IDR0 bits, cmdqs/cons_batch/spin/cost
 * out of range, cpu < -1 or >= CPU_SETSIZE, both handler and handler_batch),
 * -ENOMEM. */
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
/*
 * stop, then free.  Destroy the device's queue first (hwt_cmdq_destroy).
 * If a queue is still attached the device stops at once (the queue's calls
 * that wait on the device fail with -ENODEV; one without a CMD_SYNC that
 * finds space still returns 0, its commands never consumed) and its memory
 * is freed when that queue is destroyed; if that destroy leaks the queue
 * (a device that never acknowledged the disable), the device is leaked with
 * it.  A hwt_cmdq_create on this device must have returned before this call
 * starts.  The device itself must not be used after this call either way.
 */
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
	unsigned spin_ns; /* the idle spin in use (spin_ns 0 resolved) */
	unsigned wake_ns; /* the futex wake-up measured for auto spin_ns (0: not measured) */
};
/* A snapshot; each counter is read atomically, the set is not. */
HWT_API void hwt_smmu_dev_get_stats(const struct hwt_smmu_dev *dev, struct hwt_smmu_dev_stats *st);

HWT_END_DECLS

#endif
