/* SPDX-License-Identifier: MIT */
/*
 * The driver side of an SMMUv3 command queue: many producer threads insert
 * 16-byte commands without a lock (the Linux arm-smmu-v3 algorithm) and wait
 * for CMD_SYNC completion by MSI polling or by CONS polling.
 *
 *   struct hwt_smmu_dev *dev;  struct hwt_cmdq *q;
 *   hwt_smmu_dev_create(&dev, &dcfg);
 *   hwt_cmdq_create(&q, dev, &opts);     maps queue memory, writes CMDQ_BASE
 *   hwt_smmu_dev_start(dev);
 *   hwt_cmdq_issue(q, cmds, n, true);    any number of threads
 *   hwt_cmdq_destroy(q); hwt_smmu_dev_destroy(dev);   queue first, then device
 *
 * A queue is attached to one device (a second create on it gets -EBUSY
 * until the first queue is destroyed) and may be created before the device
 * starts or while it runs: the queue is enabled through the device's
 * CR0.CMDQEN register and disabled the same way by hwt_cmdq_destroy.
 *
 * Synchronization: every hwt_cmdq_issue*() and batch call may run
 * concurrently with any other on the same queue.  create/destroy and
 * hwt_cmdq_calibrate() need the queue to themselves.  A batch belongs to
 * one thread.  Not async-signal-safe: a signal handler that issues on a
 * queue whose issue it interrupted may wait forever for itself (the kernel
 * disables interrupts there).
 *
 * Completion mode.  As in the kernel, MSI polling is used iff the device
 * advertises MSI and COHACC and disable_msipolling is off; otherwise the
 * waiter polls CONS, sleeping until the device's SEV.  With auto_poll the
 * queue measures both on first use and keeps the faster (only when MSI is
 * possible at all); other threads' first calls wait for that measurement.
 * A first use that cannot measure (the device paused, stopped or not yet
 * started) returns the measurement's error (-ETIMEDOUT, -ENODEV) and
 * inserts nothing, as do the calls that waited for it; the queue stays
 * unmeasured (hwt_cmdq_info says so) and the next use measures again.  The
 * measurement is a wait on the device of the call that runs it: it starts
 * the call's one deadline, which its syncs and then the call's own commands
 * share, so the call returns within timeout_ns whatever the device does.
 * It measures for at most half of timeout_ns (the rest is the call's, and
 * the margin of the sync in flight; hwt_cmdq_calibrate() keeps to the same
 * rule): the rounds done by then count, and if not one finished, the
 * configured mode stays for good (the info's reason says so).  The mode is
 * fixed per queue once measured: mixing MSI and CONS waiters on one queue
 * is unsafe.
 */
#ifndef HWTUNE_CMDQ_H
#define HWTUNE_CMDQ_H

#include <stdbool.h>
#include <stdint.h>

#include "hwtune/api.h"

HWT_BEGIN_DECLS

struct hwt_cmdq;
struct hwt_smmu_dev;

#define HWT_CMDQ_BATCH_ENTRIES 64
#define HWT_CMDQ_MIN_SHIFT 7 /* a queue must hold more than one batch + a sync */

struct hwt_cmdq_options {
	unsigned entries_log2;   /* 0: the device's IDR1.CMDQS; else 7..CMDQS */
	bool disable_msipolling; /* as arm_smmu_v3.disable_msipolling=1 */
	bool auto_poll;          /* measure MSI vs CONS polling on first use */
	bool force_sync_at_63;   /* MMU-700 erratum 2812531: batches sync at 63 */
	/* How long one call may wait on the device, all its waits together
	 * (default 1 s).  0 is refused (-EINVAL at create).  A value whose
	 * deadline would overflow, UINT64_MAX say, means no deadline. */
	uint64_t timeout_ns;
	uint64_t spin_ns;        /* a device wait's spin, then 200 us of yields, then sleeps (default 10 us) */
	/* Log hook ("CMD_SYNC timeout at ...", "CMDQ error ..."): gets every
	 * message.  NULL: stderr, rate-limited as the kernel's printk_ratelimit,
	 * at most 10 lines per 5 s per queue, then "N messages suppressed"
	 * before the next line allowed (and when the queue is destroyed). */
	void (*log)(void *ctx, const char *msg);
	void *log_ctx;
	/* Command queues (ECMDQ-like): 0 or 1, one queue (today's); N, queue
	 * cpu % N takes a call made on CPU cpu; HWT_CMDQ_QUEUES_PER_CPU, one
	 * per possible CPU (as many as the device has, if fewer).  More than
	 * the device has (IDR6): -EINVAL at create.  With several queues a
	 * CMD_SYNC orders its own queue only and there is no order between
	 * queues (hwt_cmdq_issue, hwt_cmdq_sync say what each covers);
	 * auto_poll is refused (-EINVAL: it measures one queue), and so is
	 * hwt_cmdq_calibrate.  One insert path for all queues, fixed at
	 * create (info.insert_path): "rseq" with one queue per possible CPU
	 * and rseq registered (x86_64, aarch64): a restartable sequence on
	 * the CPU's queue, no locked instruction, a CMD_SYNC completed by an MSI
	 * into its own slot, as on the shared path; else "shared", the
	 * multi-producer protocol on each queue. */
	unsigned queues;
};
#define HWT_CMDQ_QUEUES_PER_CPU 0xffffffffu

/* Defaults: the device's queue size, MSI polling where possible, 1 s
 * timeout, 10 us spin.  Reads no environment (see below). */
HWT_API void hwt_cmdq_options_default(struct hwt_cmdq_options *opts);

/*
 * HWTUNE_DISABLE_MSIPOLLING, as arm_smmu_v3.disable_msipolling=: 0 if unset;
 * 1 if "1" or "0" (then *value is the setting); -EINVAL for any other value,
 * the empty string included (then *bad, if non-NULL, points at the bad
 * word), as the kernel refuses "disable_msipolling=".  Callers apply it to
 * disable_msipolling unless the user said otherwise.
 */
HWT_API int hwt_cmdq_env_disable_msipolling(bool *value, const char **bad);

/*
 * Create a queue on dev: attaches to it, allocates and maps queue memory,
 * resets PROD and CONS to 0, writes CMDQ_BASE and sets CR0.CMDQEN (waiting
 * for CR0ACK if the device runs).  -EINVAL bad options (queue size out of
 * range, timeout_ns 0), -EBUSY the device has a queue, -ENOMEM, -ENOSPC no DMA window
 * left, -ETIMEDOUT a running device did not acknowledge the enable.
 * hwt_cmdq_destroy() clears CR0.CMDQEN and waits (at most timeout_ns) for the
 * device to acknowledge before it frees queue memory; a device that never
 * does keeps the memory (leaked, and the device stays attached), logged.
 */
HWT_API int hwt_cmdq_create(struct hwt_cmdq **out, struct hwt_smmu_dev *dev,
			    const struct hwt_cmdq_options *opts);
HWT_API void hwt_cmdq_destroy(struct hwt_cmdq *q);

/* One command as the queue carries it: two dwords in host order.  Build
 * .dw with hwt_smmu_encode(), hwt_smmu_put() or hwt_smmu_sync_build(). */
struct hwt_cmdq_cmd {
	uint64_t dw[2];
};

/*
 * Insert n commands, followed by a CMD_SYNC if sync, and wait for that
 * sync.  n + sync must be at most the queue size.
 * 0 on success (with sync: every command issued before it by this thread
 * on the same queue has been executed; with several queues that is the
 * queue this call inserted into, and hwt_cmdq_sync() covers them all),
 * -EINVAL, -ETIMEDOUT (queue full or sync not complete within timeout_ns),
 * -ENODEV (the device stopped), and with several queues -ENOMEM (no
 * per-thread record), and on the rseq path
 * -ERANGE: the thread ran on a CPU numbered at or past the possible CPUs
 * counted at create, which has no queue (the kernel gives no such number;
 * nothing went in there, but the commands of a call of more than 64 with a
 * sync, inserted first, may have).  timeout_ns bounds the
 * whole call: its waits on the device (for space, then for its CMD_SYNC)
 * share one deadline, timeout_ns after the first of them began.  Waits on
 * other threads of this process (a queue owner handing over, another
 * thread's auto_poll measurement) are not counted: those finish once they
 * run, each of their own waits on the device bounded.
 */
HWT_API int hwt_cmdq_issue(struct hwt_cmdq *q, const struct hwt_cmdq_cmd *cmds, unsigned n,
			   bool sync);
HWT_API int hwt_cmdq_issue_cmd(struct hwt_cmdq *q, const struct hwt_cmdq_cmd *cmd);
HWT_API int hwt_cmdq_issue_cmd_sync(struct hwt_cmdq *q, const struct hwt_cmdq_cmd *cmd);
/* A CMD_SYNC alone: 0 once everything this thread queued has executed, on
 * every queue it used since its last successful sync, wherever the thread
 * has run meanwhile (a migration between issue and sync does not matter).
 * With several queues: a CMD_SYNC on this CPU's queue even when the thread
 * owes nothing, then each other queue it used (a CMD_SYNC there on the
 * shared path; on the rseq path a wait until that queue's CONS passed the
 * thread's entries); a queue not confirmed (-ETIMEDOUT, -ENODEV) stays
 * owed to the next sync.  -ENOMEM: no per-thread record could be made;
 * -ERANGE (rseq path): as for hwt_cmdq_issue, nothing inserted. */
HWT_API int hwt_cmdq_sync(struct hwt_cmdq *q);

/*
 * Up to 64 commands gathered by one thread: add flushes the batch without a
 * sync when it is full (with one at 63 under force_sync_at_63), then adds
 * cmd; submit issues what the batch holds with a CMD_SYNC.  Errors are
 * those of hwt_cmdq_issue().
 *
 * What a failed add or submit leaves behind: add has not added cmd, and in
 * both b->cmds[0 .. b->num) are exactly the commands not inserted into the
 * queue.
 * - The flush (or submit) inserted nothing (no space in time, the device
 *   stopped): the batch is as it was.
 * - Its commands went into the queue and only its CMD_SYNC did not
 *   complete (submit, or a flush under force_sync_at_63): they may still
 *   execute, so the batch no longer holds them (b->num is 0).
 * Calling add again with the same cmd, or submit, thus retries only what
 * was not inserted; hwt_cmdq_batch_init() drops it.
 */
struct hwt_cmdq_batch {
	struct hwt_cmdq *q;
	unsigned num;
	struct hwt_cmdq_cmd cmds[HWT_CMDQ_BATCH_ENTRIES];
};
/* q NULL leaves the batch bound to no queue: add and submit return -EINVAL
 * (as they do for a b->num beyond HWT_CMDQ_BATCH_ENTRIES). */
HWT_API void hwt_cmdq_batch_init(struct hwt_cmdq_batch *b, struct hwt_cmdq *q);
HWT_API int hwt_cmdq_batch_add(struct hwt_cmdq_batch *b, const struct hwt_cmdq_cmd *cmd);
HWT_API int hwt_cmdq_batch_submit(struct hwt_cmdq_batch *b);

struct hwt_cmdq_info {
	unsigned entries;   /* queue size */
	bool msipolling;    /* the mode in use */
	bool measured;      /* chosen by auto_poll measurement */
	uint64_t msi_ns;    /* measured median empty-queue sync, 0 if not measured */
	uint64_t sev_ns;
	char reason[160];   /* why this mode, in words */
	unsigned queues;    /* command queues in use */
	char insert_path[8];            /* "rseq" (per-CPU, no locked instruction) or "shared" */
	char insert_path_reason[160];   /* why that path, in words */
};
HWT_API void hwt_cmdq_get_info(struct hwt_cmdq *q, struct hwt_cmdq_info *info);

/*
 * With auto_poll: measure both modes now and keep the faster (the device
 * must be running and no other thread may issue meanwhile: its calls would
 * be timed too).  Otherwise the first issue does it.  -EBUSY if a first
 * use is measuring right now; on another failure an earlier choice stands.
 * Also usable without auto_poll to measure for the report (the mode stays;
 * there too no other thread may issue meanwhile): 0 or -errno.
 */
HWT_API int hwt_cmdq_calibrate(struct hwt_cmdq *q); /* several queues: -EINVAL */

/*
 * How many times the calling thread's reservation compare-and-swap failed
 * and was retried (another producer reserved first, or, on LL/SC machines,
 * a spurious failure), on any queue, since the thread started.  Counted
 * only on the retry path: a measure of contention that costs nothing when
 * there is none.
 */
HWT_API uint64_t hwt_cmdq_thread_cas_retries(void);

HWT_END_DECLS

#endif
