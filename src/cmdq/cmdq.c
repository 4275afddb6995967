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
 *   R_PROD (smmu/regs.h)/A_PROD (device)  PROD publication -> device
 *                                 reads entries
 *   R_CONS (device)/A_CONS        device executed -> CONS waiter
 *   R_MSI (device)/A_MSI          device executed -> MSI waiter
 *   R_CALIB/A_CALIB (calib.c)     auto-mode measurement done -> issuers
 *
 * Setup, options and the GERROR handler are in setup.c, auto mode in
 * calib.c; the device is reached through smmu/bus.h only.
 */
#include <endian.h>
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>

#include "arch/arch.h"
#include "cmdq/impl.h"
#include "common/time.h"

#define BITS_PER_WORD 64
#define SPIN_ONLY_NS 2000 /* device waits: pure spinning before yielding */
#define YIELD_NS 200000   /* device waits without events: yielding before sleeping */

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

/* Device CONS without the ERR field. */
static uint32_t read_cons(const struct hwt_cmdq *q)
{
	return hwt__q_pos(q->shift, hwt__reg_read_cons(q->regs)); /* A_CONS */
}

/* --- waiting ------------------------------------------------------------ */

void hwt__backoff_wait(struct hwt__backoff *b)
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
	if (!hwt__reg_cmdq_enabled(q->regs))
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
	struct hwt__backoff b = { 0 };

	/* A_SLOCK: pairs with R_XUNLOCK, the shadow cons an exclusive holder
	 * refreshed is visible once we hold the lock. */
	if (atomic_fetch_add_explicit(&q->lock, 1, memory_order_acquire) >= 0)
		return;
	/* An exclusive holder is in; its unlock clears only the sign bit, so
	 * our increment survives and we hold the lock once the value is > 0. */
	while (atomic_load_explicit(&q->lock, memory_order_acquire) <= 0) /* A_SLOCK */
		hwt__backoff_wait(&b);
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
		err = devwait_step(w, q->sev && hwt__q_full(q->shift, hwt__reg_read_prod(q->regs),
							    hwcons));
		if (err) {
			hwt__cmdq_log(q, "CMDQ timeout: no space for %u entries [prod 0x%08x, cons 0x%08x]",
				 k, llq_prod(*llq), read_cons(q));
			return err;
		}
	}
}

/* Copy n commands into the slots from prod on, little-endian. */
static void write_entries(struct hwt_cmdq *q, uint32_t prod, const struct hwt_cmdq_cmd *cmds,
			  uint32_t n)
{
	uint32_t size = 1u << q->shift;

	while (n) {
		uint32_t idx = hwt__q_idx(q->shift, prod);
		uint32_t run = size - idx < n ? size - idx : n; /* contiguous up to the end */
		uint64_t *slot = q->mem + 2 * idx;

		for (uint32_t i = 0; i < run; i++) {
			slot[2 * i] = htole64(cmds[i].dw[0]);
			slot[2 * i + 1] = htole64(cmds[i].dw[1]);
		}
		cmds += run;
		n -= run;
		prod = hwt__q_inc(q->shift, prod, run);
	}
}

static void build_sync(struct hwt_cmdq *q, uint32_t prod, struct hwt_cmdq_cmd *c)
{
	/* MSI polling: the device writes MSIDATA (0) over this sync's own slot. */
	if (q->msipoll)
		hwt_smmu_sync_build(c->dw, HWT_SMMU_CS_IRQ,
				    q->iova + 16ull * hwt__q_idx(q->shift, prod));
	else
		hwt_smmu_sync_build(c->dw, HWT_SMMU_CS_SEV, 0);
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
		struct hwt__backoff b = { 0 };
		uint64_t want;

		cnt = valid_run(q, p, left, &word, &mask);
		want = hwt__q_wrp(q->shift, p) ? 0 : mask; /* 1 on even laps, 0 on odd */
		/* A_VALID: pairs with R_VALID, the entries are written. */
		while ((atomic_load_explicit(word, memory_order_acquire) & mask) != want)
			hwt__backoff_wait(&b);
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
		if (hwt__reg_wait_cons_change(q->regs, raw) != raw)
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
		hwt__cmdq_log(q, "CMD_SYNC %s at 0x%08x [hwprod 0x%08x, hwcons 0x%08x]",
			 err == -ENODEV ? "aborted, device stopped," : "timeout", sync_prod,
			 hwt__reg_read_prod(q->regs), hwt__reg_read_cons(q->regs));
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
 *   entries are published by release operations only (R_VALID, R_PROD).
 * - When a CMD_SYNC completes, every command before it in the queue has
 *   executed and its effects are visible to the caller (A_CONS / A_MSI).
 * - One call's commands are contiguous in the queue; calls are totally
 *   ordered by their reservation.
 */
int hwt__cmdq_insert(struct hwt_cmdq *q, const struct hwt_cmdq_cmd *cmds, uint32_t n, bool sync)
{
	const unsigned shift = q->shift;
	struct devwait w = { .q = q, .every = 63 }; /* the space wait: a clock read per 64 polls */
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
		struct hwt_cmdq_cmd s;

		prod = hwt__q_inc(shift, sprod, n);
		build_sync(q, prod, &s);
		write_entries(q, prod, &s, 1);
		shared_lock(q);
	}

	/* 3. Mark our entries valid (R_VALID). */
	set_valid(q, sprod, eprod);

	/* 4. The owner publishes everything gathered so far. */
	if (owner) {
		struct hwt__backoff b = { 0 };

		/* a. Wait for the previous owner to finish (A_OWNER pairs with
		 *    R_OWNER): PROD must never move backwards. */
		while (atomic_load_explicit(&q->owner_prod, memory_order_acquire) != sprod)
			hwt__backoff_wait(&b);

		/* b. Stop gathering: clear OWNED; the prod we get back is the end
		 *    of every reservation made behind us.  Relaxed: the entries'
		 *    visibility comes from the valid map (c), not from this. */
		prod = llq_prod(atomic_fetch_and_explicit(&q->llq, ~(uint64_t)HWT__Q_OWNED,
							  memory_order_relaxed));
		prod &= ~HWT__Q_OWNED;

		/* c. Wait until the gathered entries are written (A_VALID). */
		poll_valid(q, sprod, prod);

		/* d. Publish to the device (R_PROD, with the doorbell). */
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

/* --- public API ------------------------------------------------------------ */

int hwt_cmdq_issue(struct hwt_cmdq *q, const struct hwt_cmdq_cmd *cmds, unsigned n, bool sync)
{
	uint32_t calib;

	if (!q || (n && !cmds) || n + sync > (1u << q->shift))
		return -EINVAL;
	if (n + sync == 0)
		return 0;
	/* A_CALIB: pairs with R_CALIB. */
	calib = atomic_load_explicit(&q->calib, memory_order_acquire);
	if (calib == CALIB_PENDING || calib == CALIB_RUNNING)
		hwt__cmdq_calibrate_first_use(q);
	return hwt__cmdq_insert(q, cmds, n, sync);
}

int hwt_cmdq_issue_cmd(struct hwt_cmdq *q, const struct hwt_cmdq_cmd *cmd)
{
	return hwt_cmdq_issue(q, cmd, 1, false);
}

int hwt_cmdq_issue_cmd_sync(struct hwt_cmdq *q, const struct hwt_cmdq_cmd *cmd)
{
	return hwt_cmdq_issue(q, cmd, 1, true);
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

int hwt_cmdq_batch_add(struct hwt_cmdq_batch *b, const struct hwt_cmdq_cmd *cmd)
{
	bool quirk = b->q->force_sync_at_63 && b->num == HWT_CMDQ_BATCH_ENTRIES - 1;
	int err = 0;

	/* Full: flush without a sync (with one at 63 under the MMU-700
	 * erratum).  On error the flushed commands are lost: reported here. */
	if (quirk || b->num == HWT_CMDQ_BATCH_ENTRIES) {
		err = hwt_cmdq_issue(b->q, b->cmds, b->num, quirk);
		b->num = 0;
	}
	b->cmds[b->num++] = *cmd;
	return err;
}

int hwt_cmdq_batch_submit(struct hwt_cmdq_batch *b)
{
	int err = hwt_cmdq_issue(b->q, b->cmds, b->num, true);

	b->num = 0;
	return err;
}

