/* SPDX-License-Identifier: MIT */
/*
 * Inside the driver side: the queue object, shared by the files of
 * src/cmdq.  Each file calls only files below it (no loop):
 *
 *   issue.c    hwt_cmdq_issue, the batch      -> calib.c, cmdq.c
 *   calib.c    auto mode (measure, choose)    -> cmdq.c, support.c
 *   setup.c    create/destroy, options, the GERROR handler, info
 *                                             -> support.c
 *   cmdq.c     the lock-free insertion and CMD_SYNC waits -> support.c
 *   support.c  log, backoff, MSI capability   (calls none)
 *
 * The device is reached only through src/bus (bus.h, regs.h, queue.h).
 */
#ifndef HWT_CMDQ_IMPL_H
#define HWT_CMDQ_IMPL_H

#include <hwtune/cmdq.h>

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "bus/bus.h"
#include "bus/queue.h"
#include "common/cacheline.h"
#include "common/ratelimit.h"

/* auto_poll (calib.c): NONE (no auto mode) or PENDING -> RUNNING (one issuer
 * measures) -> DONE, or back to PENDING of the next generation when the
 * measurement failed; an explicit hwt_cmdq_calibrate also goes DONE ->
 * RUNNING -> DONE. */
enum { CALIB_NONE, CALIB_PENDING, CALIB_RUNNING, CALIB_DONE };
#define CALIB_STATE 3u   /* the state's bits; above them the attempt's generation */
#define CALIB_GEN_ONE 4u

struct hwt_cmdq {
	/* Written by every producer: one line each (calib is read by every
	 * issue, written by each measurement attempt). */
	alignas(HWT__CACHELINE) _Atomic uint64_t llq;
	alignas(HWT__CACHELINE) _Atomic uint32_t owner_prod;
	alignas(HWT__CACHELINE) _Atomic uint32_t calib; /* CALIB_* */
	_Atomic int calib_err; /* the last failed measurement's error (relaxed: R_CALIB) */

	/* Space waiters sleep on it until the shadow cons moves (cmdq.c: Z/L):
	 * written by a sleeper and by a last leaver that finds one, read by
	 * every last leaver. */
	alignas(HWT__CACHELINE) _Atomic uint32_t space_evt;

	/* Read-only after create, but msipoll: written by the measurement
	 * while it owns calib (RUNNING) and published by R_CALIB, or by an
	 * explicit hwt_cmdq_calibrate, which has the queue to itself. */
	alignas(HWT__CACHELINE) unsigned shift;
	bool msipoll;
	bool sev;          /* IDR0.SEV: CONS waiters may sleep until an SEV */
	bool force_sync_at_63;
	uint64_t *mem;     /* 2^shift entries of two little-endian dwords */
	_Atomic uint64_t *valid;
	uint64_t iova;     /* DMA address of mem */
	struct hwt__smmu_regs *regs;
	struct hwt_smmu_dev *dev;
	uint64_t timeout_ns;
	uint64_t spin_ns;
	void (*log)(void *ctx, const char *msg);
	void *log_ctx;
	pthread_mutex_t info_lock; /* info: read by anyone, rewritten by calibration */
	struct hwt_cmdq_info info;
	pthread_mutex_t log_lock;  /* log_rl: producers and the device's GERROR handler log */
	struct hwt__ratelimit log_rl; /* the default log's (stderr, no hook) */
};

_Static_assert(sizeof(struct hwt_cmdq_cmd) == 16, "a command is one 16-byte queue entry");
_Static_assert(offsetof(struct hwt_cmdq, owner_prod) - offsetof(struct hwt_cmdq, llq) >=
			       HWT__CACHELINE &&
		       offsetof(struct hwt_cmdq, calib) - offsetof(struct hwt_cmdq, owner_prod) >=
			       HWT__CACHELINE &&
		       offsetof(struct hwt_cmdq, space_evt) - offsetof(struct hwt_cmdq, calib) >=
			       HWT__CACHELINE &&
		       offsetof(struct hwt_cmdq, shift) - offsetof(struct hwt_cmdq, space_evt) >=
			       HWT__CACHELINE,
	       "each of the producers' hot words has a line of its own");

/* support.c: a message to the log hook, or rate-limited to stderr. */
void hwt__cmdq_log(struct hwt_cmdq *q, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Why the queue is not enabled, for a log line after -ENODEV: "device not
 * started" (the device never acted on this queue's enable) or "device
 * stopped or destroyed" (it did, and let go since). */
const char *hwt__cmdq_not_running(const struct hwt_cmdq *q);
/* The count of messages the rate limit suppressed, if any, to stderr (at destroy). */
void hwt__cmdq_log_flush(struct hwt_cmdq *q);

/*
 * A wait on other producers of this process (owner hand-over, valid bits,
 * 4095 registered waiters, calibration): they are live threads that finish
 * in bounded time once they run, so there is no deadline, but after a short
 * spin the waiter yields and then sleeps, so a descheduled producer on a
 * 2-core box gets the CPU (support.c).
 */
struct hwt__backoff {
	unsigned n;
};
void hwt__backoff_wait(struct hwt__backoff *b);

/* The insertion itself (cmdq.c), without argument checks or calibration.
 * *inserted (if non-NULL) is set once the entries are reserved: an error
 * after that (the CMD_SYNC wait) leaves the commands in the queue, an error
 * before it (the space wait) inserted nothing.  deadline: the public call's
 * (hwt__now_ns() clock), when an earlier step of the call (the first-use
 * measurement) already started it, or 0: timeout_ns from this insertion's
 * first wait on the device. */
int hwt__cmdq_insert(struct hwt_cmdq *q, const struct hwt_cmdq_cmd *cmds, uint32_t n, bool sync,
		     bool *inserted, uint64_t deadline);
/* Auto mode's first use (calib.c): one thread measures, the others wait.
 * 0, or the error of the measurement this call ran or waited for (then the
 * queue stays unmeasured and a later use tries again).  *deadline: if this
 * call measured, the call's deadline, which the measurement started and
 * the call's own insertion keeps; else left 0 (waiting for another thread
 * is not a wait on the device). */
int hwt__cmdq_calibrate_first_use(struct hwt_cmdq *q, uint64_t *deadline);
/* MSI polling is possible at all: IDR0.MSI and IDR0.COHACC (support.c). */
bool hwt__cmdq_msi_capable(const struct hwt_cmdq *q);

#endif
