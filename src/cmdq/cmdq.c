/* SPDX-License-Identifier: MIT */
/*
 * Lock-free multi-producer insertion into an SMMUv3 command queue, and
 * CMD_SYNC completion by MSI polling or CONS polling.
 *
 * Shared state (all producers):
 *   llq        shadow {prod (bits 31:0), cons (bits 63:32)} in one 64-bit
 *              atomic; prod is the allocation pointer (bit 31 = OWNED),
 *              cons a possibly stale copy of the device's CONS used only
 *              for space accounting.  Space is reserved by compare-and-swap.
 *   valid      one bit per entry; a producer flips the bits of its entries
 *              once they are written.  The polarity flips each lap (valid =
 *              1 on even laps, 0 on odd laps), so the map is never cleared.
 *   owner_prod end of the range the previous owner published to the device.
 *   lock       shared/exclusive counter: CMD_SYNC waiters hold it shared;
 *              only an exclusive holder, or the last waiter leaving,
 *              refreshes llq.cons from the device.
 *
 * Memory-order labels (acquire A_x pairs with release R_x):
 *   R_VALID/A_VALID  entry writes -> owner's poll of the valid map
 *   R_OWNER/A_OWNER  previous owner done (PROD written) -> next owner
 *   R_LLQ/A_LLQ      shadow cons refresh -> allocators reusing those slots
 *   R_XUNLOCK/A_SLOCK, R_SUNLOCK/A_XLOCK and A_LAST   the counter lock
 *   D1 (regs.h)/A_PROD (device)  PROD publication -> device reads entries
 *   R_CONS (device)/A_CONS        device executed -> CONS waiter
 *   R_MSI (device)/A_MSI          device executed -> MSI waiter
 *   R_CALIB/A_CALIB               auto-mode measurement done -> issuers
 */
#include <hwtune/cmdq.h>
#include <hwtune/device.h>
#include <hwtune/smmu.h>

#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "cmdq/queue.h"
#include "common/time.h"
#include "device/device.h"
#include "device/regs.h"

#define CACHELINE 64
#define BITS_PER_WORD 64
#define SPIN_ONLY_NS 2000 /* device waits: pure spinning before yielding */
#define YIELD_NS 200000   /* device waits without events: yielding before sleeping */

enum { CALIB_NONE, CALIB_PENDING, CALIB_RUNNING, CALIB_DONE };

struct hwt_cmdq {
	/* Written by every producer: one line each. */
	alignas(CACHELINE) _Atomic uint64_t llq;
	alignas(CACHELINE) _Atomic uint32_t owner_prod;
	alignas(CACHELINE) _Atomic int32_t lock;
	alignas(CACHELINE) _Atomic uint32_t calib; /* CALIB_* */

	/* Read-only after create (msipoll also changes in hwt_cmdq_calibrate,
	 * which has the queue to itself). */
	alignas(CACHELINE) unsigned shift;
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
};

static uint32_t llq_prod(uint64_t v)
{
	return (uint32_t)v;
}

static uint32_t llq_cons(uint64_t v)
{
	return (uint32_t)(v >> 32);
}

static uint64_t llq_make(uint32_t prod, uint32_t cons)
{
	return (uint64_t)cons << 32 | prod;
}

static void cmdq_log(struct hwt_cmdq *q, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void cmdq_log(struct hwt_cmdq *q, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (q->log)
		q->log(q->log_ctx, msg);
	else
		fprintf(stderr, "hwtune: cmdq: %s\n", msg);
}

/* Device CONS without the ERR field. */
static uint32_t read_cons(const struct hwt_cmdq *q)
{
	return hwt__q_pos(q->shift, hwt__reg_read_cons(q->regs)); /* A_CONS */
}

/* --- waiting ------------------------------------------------------------ */

/*
 * A wait on other producers of this process (owner hand-over, valid bits,
 * shared lock): they are live threads that finish in bounded time once they
 * run, so there is no deadline, but after a short spin the waiter yields
 * and then sleeps, so a descheduled producer on a 2-core box gets the CPU.
 */
struct backoff {
	unsigned n;
};

static void backoff_wait(struct backoff *b)
{
	if (b->n < 64)
		hwt__cpu_relax();
	else if (b->n < 128)
		sched_yield();
	else
		hwt__sleep_ns(b->n < 256 ? 2000 : 50000);
	b->n++;
}

/*
 * A wait on the device: bounded by a deadline (taken at the first slow
 * step, so the fast path reads no clock).  Spins for spin_ns, then sleeps:
 * on the SEV event word when the device signals events for this wait, else
 * with a growing nanosleep.  `waiting` re-checks the condition for the
 * event sleep (see hwt__reg_wait_event).
 */
struct devwait {
	struct hwt_cmdq *q;
	uint64_t start, deadline; /* 0 until the first slow step */
	uint64_t sleep_ns;
	unsigned polls, every;    /* read the clock every `every + 1` polls */
	bool (*waiting)(void *arg);
	void *arg;
};

/* Returns 0 to poll again, -ETIMEDOUT or -ENODEV to give up. */
static int devwait_step(struct devwait *w, bool use_events)
{
	struct hwt_cmdq *q = w->q;
	uint64_t now, elapsed;

	if (++w->polls & w->every) {
		hwt__cpu_relax();
		return 0;
	}
	now = hwt__now_ns();
	if (!w->deadline) {
		w->start = now;
		w->deadline = now + q->timeout_ns;
	}
	if (now >= w->deadline)
		return -ETIMEDOUT;
	if (!hwt__reg_enabled(q->regs))
		return -ENODEV;
	elapsed = now - w->start;
	if (elapsed < SPIN_ONLY_NS) {
		hwt__cpu_relax();
		return 0;
	}
	/* Past a short spin, yield: the device thread may share our CPU and
	 * then only runs when we let it. */
	if (elapsed < q->spin_ns) {
		sched_yield();
		return 0;
	}
	if (use_events) {
		uint64_t left = w->deadline - now;

		hwt__reg_wait_event(q->regs, left < 1000000 ? left : 1000000, w->waiting, w->arg);
		return 0;
	}
	/* Nothing will wake us (MSI writes and a draining queue send no
	 * event): keep yielding a while, since a sleep costs the timer slack
	 * (~50 us), then sleep with a growing period. */
	if (elapsed < q->spin_ns + YIELD_NS) {
		sched_yield();
		return 0;
	}
	w->sleep_ns = !w->sleep_ns ? 2000 : w->sleep_ns < 256000 ? 2 * w->sleep_ns : w->sleep_ns;
	hwt__sleep_ns(w->sleep_ns);
	return 0;
}

/* --- the shared/exclusive counter lock ------------------------------------ */

static void shared_lock(struct hwt_cmdq *q)
{
	struct backoff b = { 0 };

	/* A_SLOCK: pairs with R_XUNLOCK, the shadow cons an exclusive holder
	 * refreshed is visible once we hold the lock. */
	if (atomic_fetch_add_explicit(&q->lock, 1, memory_order_acquire) >= 0)
		return;
	/* An exclusive holder is in; its unlock clears only the sign bit, so
	 * our increment survives and we hold the lock once the value is > 0. */
	while (atomic_load_explicit(&q->lock, memory_order_acquire) <= 0) /* A_SLOCK */
		backoff_wait(&b);
}

static void shared_unlock(struct hwt_cmdq *q)
{
	/* R_SUNLOCK: pairs with A_XLOCK and A_LAST. */
	atomic_fetch_sub_explicit(&q->lock, 1, memory_order_release);
}

/*
 * Fails when we look like the last holder (racy by design: a false "last"
 * only costs one extra refresh of the shadow cons).  A_LAST: acquire, pairs
 * with the other waiters' R_SUNLOCK, so their reads of their own sync slots
 * happen before our refresh lets allocators rewrite those slots.
 */
static bool shared_tryunlock(struct hwt_cmdq *q)
{
	if (atomic_load_explicit(&q->lock, memory_order_acquire) == 1) /* A_LAST */
		return false;
	shared_unlock(q);
	return true;
}

static bool exclusive_trylock(struct hwt_cmdq *q)
{
	int32_t free = 0;

	/* A_XLOCK: pairs with R_SUNLOCK. */
	return atomic_compare_exchange_strong_explicit(&q->lock, &free, INT32_MIN,
						       memory_order_acquire, memory_order_relaxed);
}

static void exclusive_unlock(struct hwt_cmdq *q)
{
	/* R_XUNLOCK: pairs with A_SLOCK.  Clear only the sign bit: shared
	 * lockers that arrived meanwhile keep their increments (the 2025
	 * fairness fix; resetting to 0 let exclusive lockers starve them). */
	atomic_fetch_and_explicit(&q->lock, INT32_MAX, memory_order_release);
}

/*
 * Store a new shadow cons.  Only one thread at a time does this: the
 * exclusive holder, or the last CMD_SYNC waiter (holding the lock shared,
 * so no exclusive holder exists and no other waiter is "last").  Allocators
 * rewrite the cons half unchanged or fail their CAS, so adding the
 * difference replaces exactly the cons half.
 */
static void llq_set_cons(struct hwt_cmdq *q, uint32_t cons)
{
	uint64_t old = atomic_load_explicit(&q->llq, memory_order_relaxed);
	uint64_t delta = (uint64_t)(uint32_t)(cons - llq_cons(old)) << 32;

	/* R_LLQ: pairs with A_LLQ; the device finished reading the slots we
	 * free before any allocator reuses them. */
	atomic_fetch_add_explicit(&q->llq, delta, memory_order_release);
}

/* --- insertion ----------------------------------------------------------- */

struct space_wait {
	struct hwt_cmdq *q;
	uint32_t k;
};

/* Still no room for k entries, judging by the device's own CONS? */
static bool space_waiting(void *arg)
{
	struct space_wait *sw = arg;
	uint64_t v = atomic_load_explicit(&sw->q->llq, memory_order_acquire); /* A_LLQ */

	return !hwt__q_has_space(sw->q->shift, llq_prod(v), read_cons(sw->q), sw->k);
}

/*
 * Wait until k entries are free.  Every try first refreshes the shadow
 * cons under the exclusive lock if the device moved and the lock is free:
 * two sync waiters can both skip the "last one out" refresh (and we skip
 * it on purpose while space is plentiful), so a waiter that only watched
 * the shadow could wait forever.  One deadline for the whole insertion.
 */
static int wait_for_space(struct hwt_cmdq *q, struct devwait *w, uint32_t k, uint64_t *llq)
{
	struct space_wait sw = { q, k };
	int err;

	w->waiting = space_waiting;
	w->arg = &sw;
	for (;;) {
		uint32_t hwcons = read_cons(q); /* A_CONS */

		/* Refresh only when the device moved (a failed attempt still
		 * costs every allocator's CAS a retry), and from a CONS read
		 * under the lock: an older value could move the shadow back
		 * past a refresh made meanwhile, a lap or more. */
		if (hwcons != llq_cons(*llq) && exclusive_trylock(q)) {
			llq_set_cons(q, read_cons(q)); /* A_CONS, then R_LLQ */
			exclusive_unlock(q);
		}
		*llq = atomic_load_explicit(&q->llq, memory_order_acquire); /* A_LLQ */
		if (hwt__q_has_space(q->shift, llq_prod(*llq), llq_cons(*llq), k))
			return 0;
		/* The device signals only the full -> not-full edge of what it
		 * was given: sleep on events while PROD shows a full queue, else
		 * back off (more space needs no edge). */
		err = devwait_step(w, q->sev && hwt__q_full(q->shift,
							    atomic_load_explicit(&q->regs->prod,
										 memory_order_relaxed),
							    hwcons));
		if (err) {
			cmdq_log(q, "CMDQ timeout: no space for %u entries [prod 0x%08x, cons 0x%08x]",
				 k, llq_prod(*llq), read_cons(q));
			return err;
		}
	}
}

/* Copy n commands into the slots from prod on, little-endian. */
static void write_entries(struct hwt_cmdq *q, uint32_t prod, const uint64_t (*cmds)[2], uint32_t n)
{
	uint32_t size = 1u << q->shift;

	while (n) {
		uint32_t idx = hwt__q_idx(q->shift, prod);
		uint32_t run = size - idx < n ? size - idx : n; /* contiguous up to the end */
		uint64_t *slot = q->mem + 2 * idx;

		for (uint32_t i = 0; i < run; i++) {
			slot[2 * i] = htole64(cmds[i][0]);
			slot[2 * i + 1] = htole64(cmds[i][1]);
		}
		cmds += run;
		n -= run;
		prod = hwt__q_inc(q->shift, prod, run);
	}
}

static void build_sync(struct hwt_cmdq *q, uint32_t prod, uint64_t dw[2])
{
	/* MSI polling: the device writes MSIDATA (0) over this sync's own slot. */
	if (q->msipoll)
		hwt_smmu_sync_build(dw, HWT_SMMU_CS_IRQ, q->iova + 16ull * hwt__q_idx(q->shift, prod));
	else
		hwt_smmu_sync_build(dw, HWT_SMMU_CS_SEV, 0);
}

/*
 * The valid-map run starting at p: the entries from p to the end of its
 * 64-bit word, at most `left`.  Runs never cross a lap (laps start at
 * index 0, a word boundary), so one polarity holds for the whole run.
 */
static uint32_t valid_run(struct hwt_cmdq *q, uint32_t p, uint32_t left, _Atomic uint64_t **word,
			  uint64_t *mask)
{
	uint32_t idx = hwt__q_idx(q->shift, p), bit = idx % BITS_PER_WORD;
	uint32_t cnt = BITS_PER_WORD - bit < left ? BITS_PER_WORD - bit : left;

	*word = &q->valid[idx / BITS_PER_WORD];
	*mask = (cnt == BITS_PER_WORD ? ~0ull : (1ull << cnt) - 1) << bit;
	return cnt;
}

static void set_valid(struct hwt_cmdq *q, uint32_t sprod, uint32_t eprod)
{
	uint32_t left = hwt__q_pos(q->shift, eprod - sprod), cnt;
	_Atomic uint64_t *word;
	uint64_t mask;

	for (uint32_t p = sprod; left; left -= cnt, p = hwt__q_inc(q->shift, p, cnt)) {
		cnt = valid_run(q, p, left, &word, &mask);
		atomic_fetch_xor_explicit(word, mask, memory_order_release); /* R_VALID */
	}
}

/* Owner: wait until every entry in [sprod, eprod) is marked valid. */
static void poll_valid(struct hwt_cmdq *q, uint32_t sprod, uint32_t eprod)
{
	uint32_t left = hwt__q_pos(q->shift, eprod - sprod), cnt;
	_Atomic uint64_t *word;
	uint64_t mask;

	for (uint32_t p = sprod; left; left -= cnt, p = hwt__q_inc(q->shift, p, cnt)) {
		struct backoff b = { 0 };
		uint64_t want;

		cnt = valid_run(q, p, left, &word, &mask);
		want = hwt__q_wrp(q->shift, p) ? 0 : mask; /* 1 on even laps, 0 on odd */
		/* A_VALID: pairs with R_VALID, the entries are written. */
		while ((atomic_load_explicit(word, memory_order_acquire) & mask) != want)
			backoff_wait(&b);
	}
}

/* --- CMD_SYNC completion --------------------------------------------------- */

struct sync_wait {
	struct hwt_cmdq *q;
	uint32_t prod;
};

static bool sync_waiting(void *arg)
{
	struct sync_wait *sw = arg;

	return !hwt__q_consumed(sw->q->shift, read_cons(sw->q), sw->prod);
}

/* CONS polling: wait until the device's CONS has passed the sync. */
static int poll_until_consumed(struct hwt_cmdq *q, uint32_t sync_prod, uint32_t *cons)
{
	struct sync_wait sw = { q, sync_prod };
	/* hwt__wait_change32 already spins: read the clock on every step */
	struct devwait w = { .q = q, .every = 0, .waiting = sync_waiting, .arg = &sw };
	int err;

	for (;;) {
		uint32_t raw = hwt__reg_read_cons(q->regs); /* A_CONS: pairs with R_CONS */

		*cons = hwt__q_pos(q->shift, raw);
		if (hwt__q_consumed(q->shift, *cons, sync_prod))
			return 0;
		/* WFE-like: returns early when CONS changes (aarch64: an event;
		 * elsewhere a short spin); a change needs no deadline check. */
		if (hwt__wait_change32(&q->regs->cons, raw) != raw)
			continue;
		err = devwait_step(&w, q->sev);
		if (err)
			return err;
	}
}

/* MSI polling: wait until the device's MSI write zeroes the sync's slot. */
static int poll_until_msi(struct hwt_cmdq *q, uint32_t sync_prod, uint32_t *cons)
{
	_Atomic uint32_t *word = (_Atomic uint32_t *)(q->mem + 2 * hwt__q_idx(q->shift, sync_prod));
	struct devwait w = { .q = q, .every = 63 };
	int err;

	/* A_MSI: pairs with the device's R_MSI; the device published CONS up
	 * to the sync before writing, so everything before it has executed. */
	while (atomic_load_explicit(word, memory_order_acquire) != 0) {
		err = devwait_step(&w, false);
		if (err)
			return err;
	}
	/* CONS passes the sync only after the MSI write: counting the sync's
	 * own slot as not yet consumed keeps the shadow cons at or behind the
	 * device's CONS, which is what makes a late MSI write harmless to a
	 * waiter that gave up (see cmd_sync() in the device). */
	*cons = sync_prod;
	return 0;
}

static int wait_for_sync(struct hwt_cmdq *q, uint32_t sync_prod)
{
	uint32_t cons = 0;
	int err = q->msipoll ? poll_until_msi(q, sync_prod, &cons)
			     : poll_until_consumed(q, sync_prod, &cons);

	if (err) {
		cmdq_log(q, "CMD_SYNC %s at 0x%08x [hwprod 0x%08x, hwcons 0x%08x]",
			 err == -ENODEV ? "aborted, device stopped," : "timeout", sync_prod,
			 atomic_load_explicit(&q->regs->prod, memory_order_relaxed),
			 hwt__reg_read_cons(q->regs));
		cons = read_cons(q); /* never beyond what the device consumed */
	}
	/*
	 * The last waiter out refreshes the shadow cons; while any waiter holds
	 * the lock, nobody else may, so no waiter's slot can be lapped twice.
	 * Unlike the kernel, only when less than half the queue looks free:
	 * the refresh is a locked read-modify-write on the hottest line, and
	 * skipping it is safe because a producer short of space refreshes
	 * under the exclusive lock itself (wait_for_space()).
	 */
	if (!shared_tryunlock(q)) {
		uint64_t v = atomic_load_explicit(&q->llq, memory_order_relaxed);

		if (hwt__q_space(q->shift, llq_prod(v), llq_cons(v)) < 1u << (q->shift - 1) &&
		    cons != llq_cons(v))
			llq_set_cons(q, cons); /* R_LLQ */
		shared_unlock(q);
	}
	return err;
}

/*
 * Insert n commands and, if sync, a CMD_SYNC, then wait for it.
 *
 * Ordering contract:
 * - Everything the caller wrote before this call (tables the commands
 *   refer to) is visible to the device before it reads the commands: the
 *   entries are published by release operations only (R_VALID, D1).
 * - When a CMD_SYNC completes, every command before it in the queue has
 *   executed and its effects are visible to the caller (A_CONS / A_MSI).
 * - One call's commands are contiguous in the queue; calls are totally
 *   ordered by their reservation.
 */
static int do_issue(struct hwt_cmdq *q, const uint64_t (*cmds)[2], uint32_t n, bool sync)
{
	const unsigned shift = q->shift;
	struct devwait w = { .q = q, .every = 0 };
	uint64_t old, head;
	uint32_t prod, sprod, eprod, k = n + sync;
	bool owner;
	int err;

	/* 1. Reserve k entries: CAS the shadow {prod, cons}.  Setting OWNED
	 *    makes the first reserver after the flag was cleared the owner;
	 *    later reservers gather behind it. */
	old = atomic_load_explicit(&q->llq, memory_order_relaxed); /* the CAS acquires */
	for (;;) {
		if (!hwt__q_has_space(shift, llq_prod(old), llq_cons(old), k)) {
			err = wait_for_space(q, &w, k, &old);
			if (err)
				return err;
		}
		head = llq_make(hwt__q_inc(shift, llq_prod(old), k) | HWT__Q_OWNED, llq_cons(old));
		/* A_LLQ: the slots we take were freed by R_LLQ (nothing pairs
		 * with a release here: the entries are published by R_VALID). */
		if (atomic_compare_exchange_weak_explicit(&q->llq, &old, head, memory_order_acquire,
							  memory_order_relaxed))
			break;
	}
	owner = !(llq_prod(old) & HWT__Q_OWNED);
	sprod = llq_prod(old) & ~HWT__Q_OWNED;
	eprod = llq_prod(head) & ~HWT__Q_OWNED;

	/* 2. Write the commands, then the CMD_SYNC; a sync waiter takes the
	 *    lock shared before its sync can be seen, so nobody refreshes the
	 *    shadow cons past its slot while it waits. */
	write_entries(q, sprod, cmds, n);
	if (sync) {
		uint64_t dw[2];

		prod = hwt__q_inc(shift, sprod, n);
		build_sync(q, prod, dw);
		write_entries(q, prod, (const uint64_t (*)[2])dw, 1);
		shared_lock(q);
	}

	/* 3. Mark our entries valid (R_VALID). */
	set_valid(q, sprod, eprod);

	/* 4. The owner publishes everything gathered so far. */
	if (owner) {
		struct backoff b = { 0 };

		/* a. Wait for the previous owner to finish (A_OWNER pairs with
		 *    R_OWNER): PROD must never move backwards. */
		while (atomic_load_explicit(&q->owner_prod, memory_order_acquire) != sprod)
			backoff_wait(&b);

		/* b. Stop gathering: clear OWNED; the prod we get back is the end
		 *    of every reservation made behind us.  Relaxed: the entries'
		 *    visibility comes from the valid map (c), not from this. */
		prod = llq_prod(atomic_fetch_and_explicit(&q->llq, ~(uint64_t)HWT__Q_OWNED,
							  memory_order_relaxed));
		prod &= ~HWT__Q_OWNED;

		/* c. Wait until the gathered entries are written (A_VALID). */
		poll_valid(q, sprod, prod);

		/* d. Publish to the device (D1, with the doorbell). */
		hwt__reg_write_prod(q->regs, prod);

		/* e. Hand over to the next owner only now (R_OWNER: pairs with
		 *    A_OWNER). */
		atomic_store_explicit(&q->owner_prod, prod, memory_order_release);
	}

	/* 5. Wait for our CMD_SYNC. */
	if (sync)
		return wait_for_sync(q, hwt__q_inc(shift, sprod, n));
	return 0;
}

/* --- errors: the GERROR interrupt ----------------------------------------- */

static const char *const cerror_names[] = {
	[HWT_SMMU_CERROR_NONE] = "No error",
	[HWT_SMMU_CERROR_ILL] = "Illegal command",
	[HWT_SMMU_CERROR_ABT] = "Abort on command fetch",
	[HWT_SMMU_CERROR_ATC_INV_SYNC] = "ATC invalidate timeout",
};

/*
 * Runs on the device's thread, like an interrupt handler on another CPU.
 * It touches only the slot at CONS (still owned by the device, so no
 * producer writes it) and the registers, never the producers' state.
 */
static void gerror_irq(void *ctx)
{
	struct hwt_cmdq *q = ctx;
	uint32_t gerror = hwt__reg_read_gerror(q->regs);
	uint32_t gerrorn = atomic_load_explicit(&q->regs->gerrorn, memory_order_relaxed);
	uint32_t cons, err, idx;
	uint64_t *slot, dw[2];

	if ((gerror ^ gerrorn) & HWT_SMMU_GERROR_MSI_CMDQ_ABT)
		cmdq_log(q, "CMDQ MSI write aborted");
	if (!((gerror ^ gerrorn) & HWT_SMMU_GERROR_CMDQ_ERR)) {
		hwt__reg_write_gerrorn(q->regs, gerror);
		return;
	}
	cons = hwt__reg_read_cons(q->regs); /* A_CONS */
	err = cons >> HWT_SMMU_CONS_ERR_SHIFT & HWT_SMMU_CONS_ERR_MASK;
	idx = hwt__q_idx(q->shift, cons);
	slot = q->mem + 2 * idx;
	cmdq_log(q, "CMDQ error (cons 0x%08x): %s", cons,
		 err < sizeof(cerror_names) / sizeof(cerror_names[0]) ? cerror_names[err]
								      : "Unknown error");
	switch (err) {
	case HWT_SMMU_CERROR_ABT:
		cmdq_log(q, "retrying command fetch");
		break;
	case HWT_SMMU_CERROR_NONE:
	case HWT_SMMU_CERROR_ATC_INV_SYNC:
		break; /* the device re-executes the CMD_SYNC at CONS */
	default:
		cmdq_log(q, "skipping command in error state: 0x%016llx 0x%016llx",
			 (unsigned long long)le64toh(slot[0]), (unsigned long long)le64toh(slot[1]));
		/* A plain CMD_SYNC without MSI: nobody waits on it. */
		hwt_smmu_sync_build(dw, HWT_SMMU_CS_SEV, 0);
		slot[0] = htole64(dw[0]);
		slot[1] = htole64(dw[1]);
		break;
	}
	/* Release (in hwt__reg_write_gerrorn): the rewritten slot is visible
	 * to the device when it sees the acknowledgement. */
	hwt__reg_write_gerrorn(q->regs, gerror);
}

/* --- auto mode: measure both completion modes ------------------------------ */

#define CALIB_ROUNDS 9
#define CALIB_SYNCS 200

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Mean ns per empty-queue sync, median over rounds; modes interleaved so
 * that machine noise and frequency changes hit both alike. */
static int measure_modes(struct hwt_cmdq *q, uint64_t *msi_ns, uint64_t *sev_ns)
{
	uint64_t t[2][CALIB_ROUNDS];
	bool saved = q->msipoll;
	int err = 0;

	for (int r = 0; r < CALIB_ROUNDS && !err; r++) {
		for (int m = 0; m < 2 && !err; m++) {
			uint64_t t0;

			q->msipoll = m == 0;
			err = do_issue(q, NULL, 0, true); /* warm the path */
			t0 = hwt__now_ns();
			for (int i = 0; i < CALIB_SYNCS && !err; i++)
				err = do_issue(q, NULL, 0, true);
			t[m][r] = (hwt__now_ns() - t0) / CALIB_SYNCS;
		}
	}
	q->msipoll = saved;
	if (err)
		return err;
	qsort(t[0], CALIB_ROUNDS, sizeof(uint64_t), cmp_u64);
	qsort(t[1], CALIB_ROUNDS, sizeof(uint64_t), cmp_u64);
	*msi_ns = t[0][CALIB_ROUNDS / 2];
	*sev_ns = t[1][CALIB_ROUNDS / 2];
	return 0;
}

static bool msi_capable(const struct hwt_cmdq *q)
{
	uint32_t idr0 = hwt__reg_idr0(q->regs);

	return (idr0 & HWT_SMMU_IDR0_MSI) && (idr0 & HWT_SMMU_IDR0_COHACC);
}

int hwt_cmdq_calibrate(struct hwt_cmdq *q)
{
	uint64_t msi, sev;
	int err;

	if (!msi_capable(q))
		return -EOPNOTSUPP;
	err = measure_modes(q, &msi, &sev);
	if (err)
		return err;
	pthread_mutex_lock(&q->info_lock);
	q->info.msi_ns = msi;
	q->info.sev_ns = sev;
	if (atomic_load_explicit(&q->calib, memory_order_relaxed) == CALIB_NONE) {
		pthread_mutex_unlock(&q->info_lock);
		return 0; /* measured for the report; the configured mode stays */
	}
	q->msipoll = msi <= sev;
	q->info.msipolling = q->msipoll;
	q->info.measured = true;
	snprintf(q->info.reason, sizeof(q->info.reason),
		 "auto: empty-queue CMD_SYNC %llu ns with MSI polling, %llu ns with CONS polling "
		 "(median of %d rounds of %d): %s",
		 (unsigned long long)msi, (unsigned long long)sev, CALIB_ROUNDS, CALIB_SYNCS,
		 q->msipoll ? "MSI polling" : "CONS polling (disable_msipolling)");
	pthread_mutex_unlock(&q->info_lock);
	/* R_CALIB: pairs with A_CALIB, issuers see the chosen mode. */
	atomic_store_explicit(&q->calib, CALIB_DONE, memory_order_release);
	return 0;
}

/* First use with auto_poll: one thread measures, the others wait. */
static int calibrate_first_use(struct hwt_cmdq *q)
{
	uint32_t st = CALIB_PENDING;
	struct backoff b = { 0 };

	if (atomic_compare_exchange_strong_explicit(&q->calib, &st, CALIB_RUNNING,
						    memory_order_acquire, memory_order_acquire)) {
		int err = hwt_cmdq_calibrate(q);

		if (err) {
			cmdq_log(q, "auto polling: measurement failed (%s), keeping %s polling",
				 strerror(-err), q->msipoll ? "MSI" : "CONS");
			atomic_store_explicit(&q->calib, CALIB_DONE, memory_order_release); /* R_CALIB */
		}
		return 0;
	}
	while (atomic_load_explicit(&q->calib, memory_order_acquire) != CALIB_DONE) /* A_CALIB */
		backoff_wait(&b);
	return 0;
}

/* --- public API ------------------------------------------------------------ */

int hwt_cmdq_issue(struct hwt_cmdq *q, const uint64_t (*cmds)[2], unsigned n, bool sync)
{
	uint32_t calib;

	if (!q || (n && !cmds) || n + sync > (1u << q->shift))
		return -EINVAL;
	if (n + sync == 0)
		return 0;
	/* A_CALIB: pairs with R_CALIB. */
	calib = atomic_load_explicit(&q->calib, memory_order_acquire);
	if (calib == CALIB_PENDING || calib == CALIB_RUNNING)
		calibrate_first_use(q);
	return do_issue(q, cmds, n, sync);
}

int hwt_cmdq_issue_cmd(struct hwt_cmdq *q, const uint64_t cmd[2])
{
	return hwt_cmdq_issue(q, (const uint64_t (*)[2])cmd, 1, false);
}

int hwt_cmdq_issue_cmd_sync(struct hwt_cmdq *q, const uint64_t cmd[2])
{
	return hwt_cmdq_issue(q, (const uint64_t (*)[2])cmd, 1, true);
}

int hwt_cmdq_sync(struct hwt_cmdq *q)
{
	return hwt_cmdq_issue(q, NULL, 0, true);
}

void hwt_cmdq_batch_init(struct hwt_cmdq_batch *b, struct hwt_cmdq *q)
{
	b->q = q;
	b->num = 0;
}

int hwt_cmdq_batch_add(struct hwt_cmdq_batch *b, const uint64_t cmd[2])
{
	bool quirk = b->q->force_sync_at_63 && b->num == HWT_CMDQ_BATCH_ENTRIES - 1;
	int err = 0;

	/* Full: flush without a sync (with one at 63 under the MMU-700
	 * erratum).  On error the flushed commands are lost: reported here. */
	if (quirk || b->num == HWT_CMDQ_BATCH_ENTRIES) {
		err = hwt_cmdq_issue(b->q, (const uint64_t (*)[2])b->cmds, b->num, quirk);
		b->num = 0;
	}
	b->cmds[b->num][0] = cmd[0];
	b->cmds[b->num][1] = cmd[1];
	b->num++;
	return err;
}

int hwt_cmdq_batch_submit(struct hwt_cmdq_batch *b)
{
	int err = hwt_cmdq_issue(b->q, (const uint64_t (*)[2])b->cmds, b->num, true);

	b->num = 0;
	return err;
}

void hwt_cmdq_info(struct hwt_cmdq *q, struct hwt_cmdq_info *info)
{
	pthread_mutex_lock(&q->info_lock);
	*info = q->info;
	pthread_mutex_unlock(&q->info_lock);
}

int hwt_cmdq_options_default(struct hwt_cmdq_options *o)
{
	const char *env = getenv("HWTUNE_DISABLE_MSIPOLLING");

	memset(o, 0, sizeof(*o));
	o->timeout_ns = 1000000000ull;
	o->spin_ns = 10000;
	if (!env || !strcmp(env, "0") || !*env)
		return 0;
	if (!strcmp(env, "1")) {
		o->disable_msipolling = true;
		return 0;
	}
	return -EINVAL;
}

int hwt_cmdq_create(struct hwt_cmdq **out, struct hwt_smmu_dev *dev,
		    const struct hwt_cmdq_options *opts)
{
	struct hwt_cmdq_options def;
	struct hwt_cmdq *q;
	unsigned cmdqs, shift;
	size_t bytes;
	int err;

	if (!out || !dev)
		return -EINVAL;
	if (!opts) {
		hwt_cmdq_options_default(&def);
		opts = &def;
	}
	q = aligned_alloc(CACHELINE, (sizeof(*q) + CACHELINE - 1) & ~(size_t)(CACHELINE - 1));
	if (!q)
		return -ENOMEM;
	memset(q, 0, sizeof(*q));
	pthread_mutex_init(&q->info_lock, NULL);
	q->dev = dev;
	q->regs = hwt__smmu_dev_regs(dev);
	if (hwt__reg_enabled(q->regs)) {
		free(q);
		return -EBUSY; /* a queue is attached while the device is stopped */
	}
	cmdqs = hwt__reg_idr1(q->regs) >> HWT_SMMU_IDR1_CMDQS_SHIFT & HWT_SMMU_IDR1_CMDQS_MASK;
	shift = opts->entries_log2 ? opts->entries_log2 : cmdqs;
	/* Refuse n <= 6: a full batch plus its CMD_SYNC must fit, and the
	 * valid map is made of whole 64-bit words. */
	if (shift < HWT_CMDQ_MIN_SHIFT || shift > cmdqs || shift > 24) {
		free(q);
		return -EINVAL;
	}
	q->shift = shift;
	/* Naturally aligned to its size, as CMDQ_BASE requires; at least a
	 * page (aligned_alloc wants the size to be a multiple). */
	bytes = (size_t)16 << shift;
	q->mem = aligned_alloc(bytes < 4096 ? 4096 : bytes, bytes < 4096 ? 4096 : bytes);
	q->valid = calloc(((size_t)1 << shift) / BITS_PER_WORD, sizeof(*q->valid));
	if (!q->mem || !q->valid) {
		err = -ENOMEM;
		goto fail;
	}
	memset(q->mem, 0, bytes);
	err = hwt__smmu_dev_dma_map(dev, q->mem, bytes, &q->iova);
	if (err)
		goto fail;
	q->timeout_ns = opts->timeout_ns ? opts->timeout_ns : 1000000000ull;
	q->spin_ns = opts->spin_ns;
	q->force_sync_at_63 = opts->force_sync_at_63;
	q->log = opts->log;
	q->log_ctx = opts->log_ctx;
	q->sev = hwt__reg_idr0(q->regs) & HWT_SMMU_IDR0_SEV;
	/* The kernel's rule for ARM_SMMU_OPT_MSIPOLL. */
	q->msipoll = msi_capable(q) && !opts->disable_msipolling;
	q->info.entries = 1u << shift;
	q->info.msipolling = q->msipoll;
	if (!msi_capable(q))
		snprintf(q->info.reason, sizeof(q->info.reason),
			 "CONS polling: the device lacks %s", hwt__reg_idr0(q->regs) & HWT_SMMU_IDR0_MSI
								     ? "COHACC" : "MSI");
	else if (opts->disable_msipolling)
		snprintf(q->info.reason, sizeof(q->info.reason),
			 "CONS polling: disable_msipolling is set");
	else if (opts->auto_poll)
		snprintf(q->info.reason, sizeof(q->info.reason),
			 "auto: not measured yet (measured on first use)");
	else
		snprintf(q->info.reason, sizeof(q->info.reason),
			 "MSI polling: the device has MSI and COHACC");
	atomic_init(&q->calib, opts->auto_poll && q->msipoll ? CALIB_PENDING : CALIB_NONE);
	hwt__smmu_dev_set_gerror_irq(dev, gerror_irq, q);
	/* A new queue starts empty at 0, as after the kernel's device reset
	 * (PROD and CONS may be written while the queue is disabled); then
	 * CMDQ_BASE: DMA address and LOG2SIZE.  The device reads all three at
	 * start (acquire on CMDQ_BASE pairs with this release). */
	atomic_store_explicit(&q->regs->prod, 0, memory_order_relaxed);
	atomic_store_explicit(&q->regs->cons, 0, memory_order_relaxed);
	atomic_store_explicit(&q->regs->cmdq_base, q->iova | shift, memory_order_release);
	*out = q;
	return 0;
fail:
	free(q->mem);
	free(q->valid);
	free(q);
	return err;
}

void hwt_cmdq_destroy(struct hwt_cmdq *q)
{
	if (!q)
		return;
	/* The device must not read queue memory we free, nor call our
	 * GERROR handler after it: stop it first if the caller did not. */
	if (hwt__reg_enabled(q->regs))
		hwt_smmu_dev_stop(q->dev);
	hwt__smmu_dev_set_gerror_irq(q->dev, NULL, NULL);
	hwt__smmu_dev_dma_unmap(q->dev, q->iova);
	pthread_mutex_destroy(&q->info_lock);
	free(q->mem);
	free(q->valid);
	free(q);
}
