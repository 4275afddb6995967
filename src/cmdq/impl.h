/* SPDX-License-Identifier: MIT */
/*
 * Inside the driver side: the queue object, shared by the files of
 * src/cmdq.  Each file calls only files below it (no loop):
 *
 *   issue.c    hwt_cmdq_issue, the batch      -> queues.c, calib.c, cmdq.c
 *   queues.c   several queues: the queue of a call, the per-thread record,
 *              hwt_cmdq_sync across queues   -> percpu.c, cmdq.c, support.c
 *   calib.c    auto mode (measure, choose)    -> cmdq.c, support.c
 *   setup.c    create/destroy, options, the GERROR handler, info
 *                                             -> queues.c, percpu.c, support.c
 *   percpu.c   the rseq path: insertion (arch/rseq.h), MSI waits on the
 *              CMD_SYNC's own slot, CONS waits with the idle rule
 *                                             -> wait.c, support.c
 *   cmdq.c     the shared path: the lock-free insertion, space waits, leaving
 *                                             -> wait.c, support.c
 *   wait.c     a call's waits on the device (deadline, spin, yield, sleep),
 *              the shared path's CMD_SYNC polls
 *                                             -> support.c
 *   support.c  log, backoff, MSI capability   (calls none)
 *
 * Several queues (options.queues > 1): the object is queue 0, a struct
 * hwt_cmdq like the others, and holds the configuration, the log, the info
 * and `mq` (queues.c); queue i is sub[i] (sub[0] is the object), with its
 * own memory, DMA mapping, registers (hwt__reg_q_*(regs, qi)) and shadow
 * state, and `top` back to the object.  One path for all of them, decided
 * at create (mq->rseq).
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

#include "arch/rseq.h"
#include "bus/bus.h"
#include "bus/queue.h"
#include "bus/regs.h"
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
	_Atomic uint64_t space_handons; /* hand-ons (cmdq.c hand_on), relaxed: a statistic */
	/* Space waits that found room only after a sleep of theirs ended by its
	 * 10 ms bound (a wake that missed them), relaxed: a statistic */
	_Atomic uint64_t space_late;

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

	/* Several queues (read-only after create).  A single queue: top is
	 * the object itself, qi 0, nq 1, sub and mq NULL. */
	struct hwt_cmdq *top;     /* the object: log, info, configuration */
	unsigned qi;              /* this queue's index: its registers */
	bool mapped;              /* mem is DMA-mapped at iova */
	unsigned nq;              /* the object's queue count */
	struct hwt_cmdq **sub;    /* the object's queues, sub[0] = the object */
	struct hwt__cmdq_mq *mq;  /* the object's per-thread records, rseq rings */
};

/* q's CONS (WRP | IDX, ERR dropped).  A_CONS: pairs with the device's
 * R_CONS of that value. */
static inline uint32_t hwt__cmdq_read_cons(const struct hwt_cmdq *q)
{
	return hwt__q_pos(q->shift, hwt__reg_q_read_cons(q->regs, q->qi));
}

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

/* --- several queues (queues.c, percpu.c) ------------------------------------ */

struct hwt__cmdq_anchor;
/* Pins the calling thread to CPU cpu alone: 0 or an errno value. */
typedef int hwt__cmdq_pin_fn(unsigned cpu);

/* The rseq path's choice of copy for calls that may store non-temporally
 * (percpu.c, nt_pick): a trial of 4 blocks of HWT__NT_BLOCK such calls in
 * every HWT__NT_PERIOD.  The state: those calls counted, the choice, the
 * start and size of the last trial call, and trial times (two half blocks
 * of each copy): ns per 16 entries from a call's start to the next one's,
 * [0] cached copies, [1] non-temporal ones. */
#define HWT__NT_PERIOD 2048u
#define HWT__NT_BLOCK 16u
#define HWT__NT_TRIAL (4 * HWT__NT_BLOCK)
struct hwt__cmdq_ntpick {
	uint32_t calls;
	bool nt;
	uint32_t k;
	uint64_t t;
	uint64_t ns[2][HWT__NT_BLOCK];
};

/*
 * A thread's record for one object (docs/percpu-queues.md, section 2):
 * for each queue it used since its last sync, the PROD value its last
 * insertion there stored (bit i of used, prod[i]).  Thread-local while a
 * thread holds it (plain accesses, no atomics); the object's pool keeps it
 * between threads (queues.c).  Bounded by NUMQ (at most 256 queues: 1 KiB
 * and 32 bytes), so no overflow case.
 */
struct hwt__cmdq_rec {
	struct hwt__cmdq_rec *tnext;      /* the thread's records (queues.c) */
	struct hwt__cmdq_rec *pnext;      /* the object's pool (queues.c) */
	struct hwt__cmdq_anchor *anchor;  /* the object it belongs to */
	unsigned nused;                   /* set bits in used */
	uint64_t used[HWT__NUMQ_MAX / 64];
	/* The rseq path: queue i holds entries of this thread below prod[i]
	 * that no publish is known to have covered (the thread moved and
	 * could not publish from CPU i in time, percpu.c): a sync publishes
	 * them before it waits there. */
	uint64_t unpub[HWT__NUMQ_MAX / 64];
	struct hwt__cmdq_ntpick nt;       /* the rseq path's copy (percpu.c) */
	uint32_t prod[];                  /* nq */
};

struct hwt__cmdq_mq {
	bool rseq;                        /* the rseq path (else the shared one) */
	struct hwt__rseq_ring *rings;     /* nq, the rseq path's view of the queues */
	struct hwt__cmdq_anchor *anchor;  /* records find the object through it */
	struct hwt__cmdq_rec *pool;       /* records of exited threads (hwt__cmdq_glock) */
	/* The rseq path's two steps and the pin of a moved thread's publish
	 * (percpu.c): hwt__rseq_insert, hwt__rseq_publish and a pin with
	 * pthread_setaffinity_np, or a test's (hwt__cmdq_rseq_steps). */
	hwt__rseq_insert_fn *insert;
	hwt__rseq_publish_fn *publish;
	hwt__cmdq_pin_fn *pin;
	_Atomic uint64_t pins;            /* publishes pinned to another CPU (a statistic) */
};

/* The record says: queue i holds this thread's entries up to e (set), or
 * none it still owes a sync for (clear).  Thread-local, plain accesses. */
static inline void hwt__cmdq_rec_set(struct hwt__cmdq_rec *r, unsigned i, uint32_t e)
{
	uint64_t bit = 1ull << (i % 64);

	if (!(r->used[i / 64] & bit)) {
		r->used[i / 64] |= bit;
		r->nused++;
	}
	r->prod[i] = e;
}

static inline void hwt__cmdq_rec_clear(struct hwt__cmdq_rec *r, unsigned i)
{
	uint64_t bit = 1ull << (i % 64);

	if (r->used[i / 64] & bit) {
		r->used[i / 64] &= ~bit;
		r->nused--;
	}
}

/* queues.c.  The calling thread's record for q (nq > 1), created on first
 * use; NULL: -ENOMEM. */
struct hwt__cmdq_rec *hwt__cmdq_rec(struct hwt_cmdq *q);
/* The queue a call on this CPU uses: cpu % nq (cpu from rseq or sched_getcpu). */
unsigned hwt__cmdq_pick(const struct hwt_cmdq *q);
/* Create and destroy the records' side of an object (setup.c). */
int hwt__cmdq_mq_init(struct hwt_cmdq *q);
void hwt__cmdq_mq_fini(struct hwt_cmdq *q);
/* Issue on an object of several queues (issue.c): as hwt__cmdq_insert. */
int hwt__cmdq_mq_issue(struct hwt_cmdq *q, const struct hwt_cmdq_cmd *cmds, uint32_t n, bool sync,
		       bool *inserted);
/* hwt_cmdq_sync on an object of several queues. */
int hwt__cmdq_mq_sync(struct hwt_cmdq *q);
/* The lock of the records' cold paths (thread exit, destroy). */
void hwt__cmdq_glock(void);
void hwt__cmdq_gunlock(void);

/* percpu.c.  Insert on the queue of this CPU through hwt__rseq_insert,
 * record it in rec, and with sync wait for the CMD_SYNC (an MSI into its
 * own slot, or CONS).  *qi: the queue committed to; *inserted as for
 * hwt__cmdq_insert.  deadline: as for hwt__cmdq_insert (0: at the first wait). */
int hwt__cmdq_rseq_issue(struct hwt_cmdq *q, struct hwt__cmdq_rec *rec,
			 const struct hwt_cmdq_cmd *cmds, uint32_t n, bool sync, bool *inserted,
			 uint64_t *deadline, unsigned *qi);
/* Wait until queue qi's CONS has reached e (wrap compare and the idle rule,
 * docs section 3), after publishing the thread's entries there if the
 * record says they may not be (rec->unpub).  *deadline: the call's, 0 until
 * its first wait. */
int hwt__cmdq_wait_reached(struct hwt_cmdq *q, struct hwt__cmdq_rec *rec, unsigned qi, uint32_t e,
			   uint64_t *deadline);
/* q's rseq path takes these steps and pin (NULL: the library's own, set at
 * create); set before any other thread uses q.  Tests make with them a
 * thread that moved between the steps, or one that may not run on a CPU. */
void hwt__cmdq_rseq_steps(struct hwt_cmdq *q, hwt__rseq_insert_fn *insert,
			 hwt__rseq_publish_fn *publish, hwt__cmdq_pin_fn *pin);
/* The rings of the rseq path (setup.c); fini after the queues are
 * disabled (the rings point into the queues' memory). */
int hwt__cmdq_rseq_init(struct hwt_cmdq *q);
void hwt__cmdq_rseq_fini(struct hwt_cmdq *q);

/* --- a call's waits on the device (wait.c) ------------------------------- */

/*
 * The waits of one call on the device (for space, then for its CMD_SYNC):
 * one deadline for them all, taken at the call's first slow step (so the
 * fast path reads no clock), so that a call gives up timeout_ns after it
 * first waited however its waits add up.  Each wait spins for spin_ns from
 * its own first slow step, then sleeps: on the SEV event word when the
 * device signals events for this wait, else with a growing nanosleep.
 * `waiting` re-checks the condition for the event sleep (see
 * hwt__reg_wait_event); what arg points to must live while a step with
 * events may run: a wait whose condition dies before the call's next wait
 * clears them (refresh_shadow), the next wait sets its own
 * (hwt__devwait_next).  q: the queue waited on (its enable says -ENODEV).
 */
struct hwt__devwait {
	struct hwt_cmdq *q;
	uint64_t deadline;     /* the call's; 0 until its first slow step */
	uint64_t start;        /* this wait's first slow step; 0 until then */
	uint64_t sleep_ns;
	unsigned polls, every; /* read the clock every `every + 1` polls */
	unsigned yields;
	bool (*waiting)(void *arg);
	void *arg;
};
#define HWT__CMDQ_SPIN_ONLY_NS 2000 /* device waits: pure spinning before yielding */
/* The call's next wait: its own spin and sleep phases, the call's deadline. */
void hwt__devwait_next(struct hwt__devwait *w, unsigned every, bool (*waiting)(void *arg),
		       void *arg);
/* The clock read of a wait's slow step: sets the call's deadline and this
 * wait's start at the first one.  0 with *now, or -ETIMEDOUT past the
 * deadline, or -ENODEV when the device no longer consumes the queue. */
int hwt__devwait_check(struct hwt__devwait *w, uint64_t *now);
/* Returns 0 to poll again, -ETIMEDOUT or -ENODEV to give up. */
int hwt__devwait_step(struct hwt__devwait *w, bool use_events);
/* A failed wait's log word: "timeout", or after -ENODEV "aborted, " and
 * why the queue is off (support.c), in buf. */
#define HWT__VERDICT_LEN 96
const char *hwt__cmdq_verdict(const struct hwt_cmdq *q, int err, char buf[HWT__VERDICT_LEN]);
/* The shared path's CMD_SYNC waits (wait.c, for cmdq.c): until the device's CONS passed
 * sync_prod, or its MSI write zeroed the sync's slot; *cons: the value the
 * waiter leaves with (A_CONS / A_MSI).  0, or the wait's error. */
int hwt__cmdq_poll_consumed(struct hwt_cmdq *q, struct hwt__devwait *w, uint32_t sync_prod,
			    uint32_t *cons);
int hwt__cmdq_poll_msi(struct hwt_cmdq *q, struct hwt__devwait *w, uint32_t sync_prod, uint32_t *cons);

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
 * first wait on the device.  *end (if non-NULL): the PROD value after the
 * call's entries, for the per-thread record (queues.c). */
int hwt__cmdq_insert(struct hwt_cmdq *q, const struct hwt_cmdq_cmd *cmds, uint32_t n, bool sync,
		     bool *inserted, uint64_t deadline, uint32_t *end);
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
