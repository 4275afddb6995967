/* SPDX-License-Identifier: MIT */
/*
 * Lock-free multi-producer insertion into an SMMUv3 command queue, and
 * CMD_SYNC completion by MSI polling or CONS polling.
 *
 * Shared state (all producers):
 *   llq        shadow {prod (bits 31:0), cons (51:32), waiters (63:52)} in
 *              one 64-bit atomic; prod is the allocation pointer (bit 31 =
 *              OWNED), cons a possibly stale copy of the device's CONS used
 *              only for space accounting, waiters the number of CMD_SYNC
 *              waiters (and space refreshers, while they refresh).
 *              Space is reserved by compare-and-swap, which also
 *              registers the caller's CMD_SYNC (if any) as a waiter.
 *   valid      one bit per entry; a producer flips the bits of its entries
 *              once they are written.  The polarity flips each lap (valid =
 *              1 on even laps, 0 on odd laps), so the map is never cleared.
 *   owner_prod end of the range the previous owner published to the device.
 *   space_evt  where space waiters sleep while the shadow cons is frozen:
 *              a generation count and the smallest k of a sleeper of this
 *              generation, 0 for none (the Z/L handshake below).
 *
 * The shadow cons moves only when the last CMD_SYNC waiter leaves, in the
 * CAS that unregisters it; a producer short of space, finding no waiter,
 * refreshes it the same way (registers, reads CONS, leaves).  While anyone
 * is registered, cons stays at the value c0 it had at their registration,
 * so every reservation keeps prod within a lap of c0, and CONS lies in
 * [c0, prod].  So no waiter's slot is rewritten while it waits, CONS stays
 * within a lap of every waiter's slot, and the value a leaver installs (read
 * while registered) lies in [c0, CONS]: never a CONS from laps ago (the
 * kernel's shared lock, folded into the word every reservation updates
 * anyway).
 *
 * Memory-order labels (acquire A_x pairs with release R_x):
 *   R_VALID/A_VALID  entry writes -> owner's poll of the valid map
 *   R_OWNER/A_OWNER  previous owner done (PROD written) -> next owner
 *   R_LLQ/A_LLQ      a leaver (waiter or refresher) -> allocators reusing
 *                    the slots it freed, and -> registrants (reservation
 *                    or refresh CAS), whose later CONS reads are then not
 *                    older than the value that set cons (every write of
 *                    llq is an RMW, so an A_LLQ synchronises with every
 *                    earlier R_LLQ in the chain)
 *   R_PROD (bus/regs.h)/A_PROD (device)  PROD publication -> device
 *                                 reads entries
 *   R_CONS (device)/A_CONS        device executed -> CONS waiter, and
 *                                 -> space refresher (then R_LLQ)
 *   R_MSI (device)/A_MSI          device executed -> MSI waiter
 *   R_CALIB (calib.c)/A_CALIB (issue.c)  auto-mode measurement done (or
 *                                 failed, the mode restored) -> issuers
 *   Z1..Z3 / L1..L3               a space sleeper against the last leaver
 *                                 (seq_cst Dekker pair, see "Space
 *                                 waits"); H1, H2 the hand-on's
 *                                 generation end, against Z1 and L1
 *
 * This is the protocol of one queue: with several (options.queues > 1)
 * each queue q->qi of the object runs it on its own registers
 * (hwt__reg_q_*(regs, qi)) on the shared path; queues.c picks the queue.
 * The public issue calls are in issue.c, setup, options and the GERROR
 * handler in setup.c, auto mode in calib.c, a call's device waits (and the
 * CMD_SYNC polls) in wait.c, the log and the backoff in support.c (the
 * files' order: impl.h); the device is reached through src/bus only.
 */
#include <endian.h>
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

#include "arch/arch.h"
#include "cmdq/impl.h"
#include "common/time.h"

#define BITS_PER_WORD 64

/* The shadow word: pointers of queues up to 2^19 entries need 20 bits. */
#define LLQ_PTR_BITS 20
#define LLQ_WAITERS_SHIFT (32 + LLQ_PTR_BITS)
#define LLQ_ONE_WAITER (1ull << LLQ_WAITERS_SHIFT)
#define LLQ_WAITERS_MAX ((1u << (32 - LLQ_PTR_BITS)) - 1)
_Static_assert(HWT__CMDQS_ARCH_MAX + 1 <= LLQ_PTR_BITS, "WRP|IDX fits the shadow cons");

static uint32_t llq_prod(uint64_t v)
{
	return (uint32_t)v;
}

static uint32_t llq_cons(uint64_t v)
{
	return (uint32_t)(v >> 32) & ((1u << LLQ_PTR_BITS) - 1);
}

static uint32_t llq_waiters(uint64_t v)
{
	return (uint32_t)(v >> LLQ_WAITERS_SHIFT);
}

static uint64_t llq_make(uint32_t prod, uint32_t cons, uint32_t waiters)
{
	return (uint64_t)waiters << LLQ_WAITERS_SHIFT | (uint64_t)cons << 32 | prod;
}

/* --- the shadow cons: leaving, refreshing, waiting for it ------------------ */

/*
 * Space waits.  While anybody is registered (a CMD_SYNC waiter, or a
 * refresher) the shadow cons is frozen: only the last one out moves it.
 * Polling for that (spin, yield, short sleeps) takes the CPU from the
 * registered producers it waits for: oversubscribed producers convoyed for
 * milliseconds, 64 on one CPU for seconds.  So such a waiter sleeps on
 * space_evt until the last leaver wakes one sleeper, and a woken waiter
 * that finds space (or gives up) wakes the next (the baton).  While nobody
 * is registered, one waiter registers as the refresher and watches the
 * device for the others (refresh_shadow), who sleep.
 *
 * space_evt: bits 11:0 (KMIN) the smallest k of a sleeper of this
 * generation, capped at 4095 (0: nobody may sleep on it), bits 31:12 the
 * generation.  A waiter that cannot fit, but sees that a sleeper of a
 * smaller k would, ends the generation and wakes all its sleepers (the
 * hand-on, hand_on()): else a wake that went to a big sleeper left the small
 * one asleep until a later leave (device progress) or its 10 ms bound.
 * Each waiter hands on at most once per shadow cons it sees, so the
 * wake-alls end; every sleeper of the old generation returns and re-reads
 * llq (a big one sleeps again on the new generation, without a hand-on for
 * that cons), whatever the kernel's order of wakes (FIFO within a priority,
 * real-time first) and wherever a sleeper is between its Z1 and its Z3: the
 * generation's end fails its futex_wait (H1 below).  A wake-one chain
 * missed one still between its Z2 and its Z3 that queued behind waiters
 * that had already handed on (four sleepers: space.pml's "wake-one
 * hand-on").  With all k equal nobody hands on (no system calls beyond the
 * baton's).  tests/model/space.pml checks the handshake, the baton and the
 * hand-on.
 *
 * The handshake (seq_cst, a Dekker pair; no fence in the leaver):
 *
 *   space sleeper (space_sleep)            last leaver (leave), or the baton
 *   Z1 e = space_evt, KMIN lowered to k    L1 the leave CAS of llq (seq_cst)
 *      (a CAS, seq_cst)                    L2 w = load space_evt (seq_cst)
 *   Z2 read llq by an RMW that adds 0      L3 if w has KMIN: wake one; if
 *      (seq_cst): somebody registered,        none slept, CAS w to the next
 *      and no space?                          generation, KMIN 0 (seq_cst),
 *   Z3 futex_wait(space_evt, e, bounded)      then wake all (see below)
 *
 * In the total order S of seq_cst operations either Z1 precedes L2: the
 * leaver sees KMIN (or a later generation: whoever ended e's woke its
 * sleepers) and wakes one sleeper of e, or finds none asleep and ends the
 * generation, so that Z3 returns at once, and wakes all who slept on e
 * between its wake and its CAS.  A sleeper of e left asleep is woken by the
 * baton of the one woken, or by a later last leave: KMIN stays set until
 * a wake finds nobody asleep.  Or L2 precedes Z1: then L1 precedes Z2 in
 * S, so in llq's modification order too (both are seq_cst writes), and Z2,
 * an RMW, reads L1's value or a later one: it sees nobody registered and
 * does not sleep, or a later registration, whose last leave is then the
 * wake-up.  So no wake-up is lost; Z3 is still bounded (SPACE_SLEEP_NS, the
 * call's deadline) for -ENODEV and the deadline.
 *
 * The hand-on (a waiter that read llq v, room for a smaller KMIN):
 *   H1 CAS space_evt to the next generation, KMIN 0, while KMIN is set
 *      (seq_cst)
 *   H2 futex_wake(space_evt, all)
 * A sleeper whose Z1 precedes H1 in space_evt's modification order (both
 * RMWs) slept on an ended generation: its Z3 returns at once, or H2 wakes
 * it.  One whose Z1 follows H1 is on the new generation: v's cons was
 * installed by a leave (L1, seq_cst) that precedes our read of v (Z2, an
 * RMW, or the acquire load of wait_for_space, which synchronises with L1),
 * so L1 precedes H1 in S; H1 precedes that Z1 (both seq_cst RMWs of one
 * object), and Z1 its Z2: Z2 reads L1's cons or a later llq, sees the room
 * (or those who took it, who pass the baton), and does not sleep for it.
 * A hand-on that finds KMIN 0 (relaxed, without a CAS) ends nothing and
 * looks again: a sleeper X with KMIN set whose Z2 preceded L1 in llq's
 * order is seen anyway, since every later write of llq is an RMW, so our
 * read of v is in X's Z2's release sequence, X's Z1 happens before our
 * load and coherence shows us its KMIN; an X whose Z2 follows L1 sees the
 * room.  The cost of a wake-all: every big sleeper of the generation
 * re-runs Z1 and Z2 (an RMW on llq, the reservation's line) before it
 * sleeps again; with mixed call sizes that is faster on an idle machine
 * than a chain of wake-ones, slower with the CPUs busy (a review's scratch
 * run, 64 threads of random sizes 1..100: 0.47 s against 0.67 s idle,
 * 3.1-3.6 s against 2.2-2.5 s with one core busy).
 *
 * Why Z2 is an RMW, and why every write of space_evt is seq_cst: llq is
 * also written by acquire CASes (the reservation, the refresher's
 * registration) and a relaxed fetch_and (OWNED).  A seq_cst load may read
 * a non-seq_cst write that does not happen before the last seq_cst one
 * (C11 7.17.3p6), one older than L1 in llq's order: the argument would
 * need those RMWs seq_cst, the fast path's cost on aarch64 (casal for
 * casa).  A seq_cst fence before a plain Z2 would do too, but TSan builds
 * refuse atomic_thread_fence.  The RMW costs the sleeper, on its way to a
 * system call anyway, one locked instruction and the llq line; it leaves
 * the value as it was, so no reservation CAS fails for it, and it keeps
 * llq's release sequences (every write of llq stays an RMW).  Likewise L2
 * may read only seq_cst writes of space_evt, so the generation's end is a
 * seq_cst CAS, not a relaxed one (a cold path).  A leaver makes system calls only
 * while KMIN is set, not on every call while a woken sleeper waits for the
 * CPU.  On x86 L1 is the lock cmpxchg a release CAS is anyway, L2 a plain
 * load; aarch64: casal, ldar.
 */
#define SPACE_SLEEP_NS 10000000 /* Z3 at most: a check of the deadline and the device */
#define SPACE_KMIN 0xfffu       /* space_evt: smallest k asleep on this generation, 0: none */
#define SPACE_GEN_ONE 0x1000u   /* space_evt: one generation (20 bits: an ABA of the
				 * futex value within one Z1..Z3 needs 2^20 generation
				 * ends, and costs at most the 10 ms bound) */

/* k as KMIN holds it: capped (a cap only makes a hand-on less likely). */
static uint32_t space_k(uint32_t k)
{
	return k < SPACE_KMIN ? k : SPACE_KMIN;
}

/* L2, L3: after the last leave (L1), or as the baton: wake a space sleeper. */
static void wake_space_sleeper(struct hwt_cmdq *q)
{
	uint32_t w = atomic_load_explicit(&q->space_evt, memory_order_seq_cst);      /* L2 */

	if (!(w & SPACE_KMIN) || hwt__futex_wake(&q->space_evt, 1))                 /* L3 */
		return;
	/* Nobody asleep: end the generation.  seq_cst: an L2 may read only
	 * seq_cst writes (see above).  A failed CAS: another waker ended it
	 * and wakes its sleepers, or a sleeper lowered KMIN (it sleeps on
	 * the new value, whose last leave or baton wakes it). */
	if (atomic_compare_exchange_strong_explicit(&q->space_evt, &w,                   /* L3 */
						    (w & ~SPACE_KMIN) + SPACE_GEN_ONE,
						    memory_order_seq_cst, memory_order_relaxed))
		hwt__futex_wake(&q->space_evt, INT32_MAX);
}

/*
 * The hand-on: we cannot fit k in the shadow v, but a sleeper of KMIN < k
 * (e: our Z1's value, or a seq_cst read after v) would: end the generation
 * and wake all its sleepers (H1, H2 above), once per shadow cons we saw
 * (*seen).  Every one of them re-reads llq: the small one fits, the big
 * ones sleep again on the new generation (their next hand-on needs another
 * cons).  A stale KMIN (that sleeper left, or timed out) costs one
 * generation end per waiter that cannot fit and shadow cons it sees (mixed
 * call sizes only; equal ones never hand on).  tests/model/space.pml checks
 * these interleavings.
 */
static bool hand_on(struct hwt_cmdq *q, uint32_t e, uint64_t v, uint32_t k, uint32_t *seen)
{
	uint32_t kmin = e & SPACE_KMIN, w;

#ifdef HWT_CMDQ_BROKEN_NO_HANDON
	return false; /* tests: show unit_cmdq_space failing without the hand-on */
#endif
	if (!kmin || kmin >= space_k(k) || llq_cons(v) == *seen ||
	    !hwt__q_has_space(q->shift, llq_prod(v), llq_cons(v), kmin))
		return false;
	*seen = llq_cons(v);
	atomic_fetch_add_explicit(&q->space_handons, 1, memory_order_relaxed); /* a statistic */
#ifdef HWT_CMDQ_BROKEN_HANDON_ONE
	wake_space_sleeper(q); /* tests: the wake-one hand-on (show unit_cmdq_space failing) */
	return false;
#endif
	/* Relaxed: KMIN 0 seen here needs no CAS (the H1 paragraph above). */
	w = atomic_load_explicit(&q->space_evt, memory_order_relaxed);
	do
		if (!(w & SPACE_KMIN))
			return true; /* nobody may sleep on this generation: ended already */
	while (!atomic_compare_exchange_weak_explicit(&q->space_evt, &w, (w & ~SPACE_KMIN) + SPACE_GEN_ONE,
						      memory_order_seq_cst, memory_order_relaxed)); /* H1 */
	hwt__futex_wake(&q->space_evt, INT32_MAX);                                          /* H2 */
	return true;
}

/*
 * Unregister a CMD_SYNC waiter (or a space refresher).  The last one out
 * also sets the shadow cons to what it saw (its own slot with MSI polling,
 * else the device's CONS, read while registered), in the same CAS: while
 * it was registered nobody moved the shadow, so that value is at or ahead
 * of it, at or behind CONS, and within a lap of prod.  R_LLQ: pairs with the
 * allocators' A_LLQ; our reads of our slot happen before its reuse.  The
 * CAS is also L1 (seq_cst): the last one out then wakes the space sleepers.
 */
static void leave(struct hwt_cmdq *q, uint32_t cons)
{
	uint64_t v = atomic_load_explicit(&q->llq, memory_order_relaxed), n;

	do
		n = llq_waiters(v) > 1 ? v - LLQ_ONE_WAITER : llq_make(llq_prod(v), cons, 0);
	while (!atomic_compare_exchange_weak_explicit(&q->llq, &v, n, memory_order_seq_cst, /* R_LLQ, L1 */
						      memory_order_relaxed));
	if (!llq_waiters(n))
		wake_space_sleeper(q);
}

struct cons_wait {
	struct hwt_cmdq *q;
	uint32_t cons;
};

/* The refresher's condition: the device's CONS still where the shadow is? */
static bool cons_unmoved(void *arg)
{
	struct cons_wait *cw = arg;

	return hwt__cmdq_read_cons(cw->q) == cw->cons; /* A_CONS */
}

/*
 * Nobody is registered and there is no room for k: refresh the shadow cons
 * as a CMD_SYNC waiter would.  Register (A_LLQ: the CONS reads below are
 * not behind the value the shadow was set from), wait until the device's
 * CONS differs from the shadow's (one poller; the other space waiters
 * sleep), leave with it (A_CONS, then R_LLQ, L1).  Registered, we freeze
 * the shadow cons, so prod stays within a lap of it and of what we read.
 * One CAS installing a CONS read before registering would not do: llq can
 * show the same value two laps later (ABA) and take a CONS from two laps
 * ago (model (q)).  0 when the shadow may have changed, else the error.
 */
static int refresh_shadow(struct hwt_cmdq *q, struct hwt__devwait *w, uint64_t v)
{
	struct cons_wait cw = { q, llq_cons(v) };
	int err = 0;

	if (!atomic_compare_exchange_strong_explicit(&q->llq, &v, v + LLQ_ONE_WAITER,
						    memory_order_acquire, memory_order_relaxed))
		return 0;
	w->waiting = cons_unmoved;
	w->arg = &cw;
	for (;;) {
		uint32_t hwcons = hwt__cmdq_read_cons(q); /* A_CONS */

		if (hwcons != cw.cons)
			break;
		/* The device signals only the full -> not-full edge of what it
		 * was given: sleep on events while PROD shows a full queue,
		 * else back off (more space needs no edge). */
		err = hwt__devwait_step(w, q->sev && hwt__q_full(q->shift,
								  hwt__reg_q_read_prod(q->regs, q->qi),
								  hwcons));
		if (err)
			break;
	}
	/* cw dies with this frame: no later wait of the call may find it
	 * (the call's next event wait sets its own, hwt__devwait_next). */
	w->waiting = NULL;
	w->arg = NULL;
	leave(q, hwt__cmdq_read_cons(q)); /* A_CONS, then R_LLQ, L1 */
	return err;
}

/*
 * Somebody is registered and there is no room for k: only the last leave
 * moves the shadow cons.  Spin a little (it may be about to leave on
 * another CPU), then sleep until it does (Z1..Z3 above), unless a smaller
 * sleeper fits: then end the generation (*seen: hand_on) and look again.
 * 0 to look again, or the wait's error.
 */
static int space_sleep(struct hwt_cmdq *q, struct hwt__devwait *w, uint32_t k, uint32_t *seen,
		       bool *bounded)
{
	uint64_t now, left, v;
	uint32_t e, n;
	int err;

	if (++w->polls & w->every) {
		hwt__cpu_relax();
		return 0;
	}
	err = hwt__devwait_check(w, &now);
	if (err || now - w->start < HWT__CMDQ_SPIN_ONLY_NS) {
		hwt__cpu_relax();
		return err;
	}
	left = w->deadline - now;
	e = atomic_load_explicit(&q->space_evt, memory_order_relaxed); /* the CAS decides */
	do
		n = (e & SPACE_KMIN) && (e & SPACE_KMIN) <= space_k(k) ? e : (e & ~SPACE_KMIN) | space_k(k);
	while (!atomic_compare_exchange_weak_explicit(&q->space_evt, &e, n, memory_order_seq_cst, /* Z1 */
						      memory_order_relaxed));
	v = atomic_fetch_or_explicit(&q->llq, 0, memory_order_seq_cst);                 /* Z2 */
	if (llq_waiters(v) && !hwt__q_has_space(q->shift, llq_prod(v), llq_cons(v), k)) {
		/* after a hand-on n is an ended generation: look again */
		if (!hand_on(q, n, v, k, seen))
			*bounded = hwt__futex_wait(&q->space_evt, n,                    /* Z3 */
						   left < SPACE_SLEEP_NS ? left : SPACE_SLEEP_NS) ==
				   -ETIMEDOUT;
	}
	return 0;
}

/* The log line of a failed space wait: what the call waited for. */
static void log_no_space(struct hwt_cmdq *q, int err, uint32_t k, uint64_t v)
{
	uint32_t hwcons = hwt__cmdq_read_cons(q), prod = llq_prod(v) & ~HWT__Q_OWNED, n = llq_waiters(v);
	char buf[HWT__VERDICT_LEN];

	hwt__cmdq_log(q, "CMDQ %s: no space for %u entries: %s [prod 0x%08x, shadow cons 0x%08x, %u "
		      "waiter%s; device PROD 0x%08x, CONS 0x%08x]", hwt__cmdq_verdict(q, err, buf), k,
		      n && hwt__q_has_space(q->shift, prod, hwcons, k)
			      ? "the device made room, the registered CMD_SYNC waiters did not leave"
			      : "the device did not consume them",
		      prod, llq_cons(v), n, n == 1 ? "" : "s", hwt__reg_q_read_prod(q->regs, q->qi),
		      hwcons);
}

/*
 * Wait until k entries are free; *llq receives the shadow that has them.
 * w is the call's: one deadline for the whole insertion (every space wait
 * of its reservation loop, then its CMD_SYNC wait).
 */
static int wait_for_space(struct hwt_cmdq *q, struct hwt__devwait *w, uint32_t k, uint64_t *llq)
{
	uint32_t seen = UINT32_MAX; /* no shadow cons handed on yet (hand_on) */
	bool bounded = false;       /* our last Z3 ended by its bound */

	for (;;) {
		uint64_t v = atomic_load_explicit(&q->llq, memory_order_acquire); /* A_LLQ */
		int err;

		if (hwt__q_has_space(q->shift, llq_prod(v), llq_cons(v), k)) {
			*llq = v;
			if (bounded) /* a statistic (unit_cmdq_space) */
				atomic_fetch_add_explicit(&q->space_late, 1, memory_order_relaxed);
			wake_space_sleeper(q); /* the baton */
			return 0;
		}
		if (llq_waiters(v)) {
			err = space_sleep(q, w, k, &seen, &bounded);
		} else {
			/* Before we watch the device: a smaller sleeper may fit
			 * now (v acquired, then this read: hand_on). */
			hand_on(q, atomic_load_explicit(&q->space_evt, memory_order_seq_cst) /* L2: Z1 */,
				v, k, &seen);
			bounded = false; /* what we find now, we found by watching */
			err = refresh_shadow(q, w, v);
		}
		if (err) {
			wake_space_sleeper(q); /* the baton */
			log_no_space(q, err, k, v);
			return err;
		}
	}
}

/* --- insertion ----------------------------------------------------------- */

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

/* --- CMD_SYNC completion (the polls: wait.c) ------------------------------ */

/* w: the call's waits, whose deadline a space wait may already have set. */
static int wait_for_sync(struct hwt_cmdq *q, struct hwt__devwait *w, uint32_t sync_prod)
{
	uint32_t cons = 0;
	int err = q->msipoll ? hwt__cmdq_poll_msi(q, w, sync_prod, &cons)
			     : hwt__cmdq_poll_consumed(q, w, sync_prod, &cons);

	if (err) {
		char buf[HWT__VERDICT_LEN];

		hwt__cmdq_log(q, "CMD_SYNC %s at 0x%08x [hwprod 0x%08x, hwcons 0x%08x]",
			      hwt__cmdq_verdict(q, err, buf), sync_prod,
			      hwt__reg_q_read_prod(q->regs, q->qi), hwt__reg_q_read_cons(q->regs, q->qi));
		cons = hwt__cmdq_read_cons(q); /* never beyond what the device consumed */
	}
	leave(q, cons);
	return err;
}

/* Initial-exec: one thread-pointer-relative add on the retry path, no
 * __tls_get_addr call, also in the shared library. */
static _Thread_local uint64_t cas_retries __attribute__((tls_model("initial-exec")));

uint64_t hwt_cmdq_thread_cas_retries(void)
{
	return cas_retries;
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
int hwt__cmdq_insert(struct hwt_cmdq *q, const struct hwt_cmdq_cmd *cmds, uint32_t n, bool sync,
		     bool *inserted, uint64_t deadline, uint32_t *end)
{
	const unsigned shift = q->shift;
	/* The call's waits: first for space, a clock read per 64 polls; the
	 * deadline the caller's, or (0) set at the first slow step. */
	struct hwt__devwait w = { .q = q, .deadline = deadline, .every = 63 };
	struct hwt__backoff full = { 0 };
	uint64_t old, head;
	uint32_t prod, sprod, eprod, k = n + sync;
	bool owner, gather;
	int err;

	/* 1. Reserve k entries and, with a CMD_SYNC, register as a waiter: one
	 *    CAS of the shadow.  The first reserver that finds OWNED clear is
	 *    the owner.  It sets OWNED, so that later reservers gather behind
	 *    it, only while an earlier range is still unpublished (prod !=
	 *    owner_prod): a producer alone publishes its own range and needs
	 *    no RMW to stop gathering. */
	old = atomic_load_explicit(&q->llq, memory_order_relaxed); /* the CAS acquires */
	for (;;) {
		uint32_t p;

		if (!hwt__q_has_space(shift, llq_prod(old), llq_cons(old), k)) {
			err = wait_for_space(q, &w, k, &old);
			if (err)
				return err;
		}
		if (sync && llq_waiters(old) == LLQ_WAITERS_MAX) {
			hwt__backoff_wait(&full); /* 4095 threads waiting: wait for one */
			old = atomic_load_explicit(&q->llq, memory_order_relaxed);
			continue;
		}
		p = llq_prod(old);
		/* Relaxed: a stale owner_prod only makes us gather needlessly;
		 * equal to p, it says every range before p was published. */
		gather = (p & HWT__Q_OWNED) ||
			 p != atomic_load_explicit(&q->owner_prod, memory_order_relaxed);
		head = llq_make(hwt__q_inc(shift, p, k) | (gather ? HWT__Q_OWNED : 0), llq_cons(old),
				llq_waiters(old) + sync);
		/* A_LLQ: the slots we take were freed by R_LLQ (nothing pairs
		 * with a release here: the entries are published by R_VALID). */
		if (atomic_compare_exchange_weak_explicit(&q->llq, &old, head, memory_order_acquire,
							  memory_order_relaxed))
			break;
		cas_retries++;
	}
	if (inserted)
		*inserted = true; /* from here on the commands will reach the device */
	owner = !(llq_prod(old) & HWT__Q_OWNED);
	sprod = llq_prod(old) & ~HWT__Q_OWNED;
	eprod = llq_prod(head) & ~HWT__Q_OWNED;
	if (end)
		*end = eprod; /* the caller's per-thread record (queues.c) */

	/* 2. Write the commands, then the CMD_SYNC (already registered: nobody
	 *    moves the shadow cons past its slot while it waits). */
	write_entries(q, sprod, cmds, n);
	if (sync) {
		struct hwt_cmdq_cmd s;

		prod = hwt__q_inc(shift, sprod, n);
		build_sync(q, prod, &s);
		write_entries(q, prod, &s, 1);
	}

	/* 3. Mark our entries valid (R_VALID): every lap flips each slot's bit
	 *    once, so even an owner alone flips its own. */
	set_valid(q, sprod, eprod);

	/* 4. The owner publishes its range and everything gathered behind it. */
	if (owner) {
		struct hwt__backoff b = { 0 };

		/* a. Wait for the previous owner to finish (A_OWNER pairs with
		 *    R_OWNER): PROD must never move backwards. */
		while (atomic_load_explicit(&q->owner_prod, memory_order_acquire) != sprod)
			hwt__backoff_wait(&b);

		prod = eprod;
		if (gather) {
			/* b. Stop gathering: clear OWNED; the prod we get back is
			 *    the end of every reservation made behind us.
			 *    Relaxed: the entries' visibility comes from the valid
			 *    map (c), not from this. */
			prod = llq_prod(atomic_fetch_and_explicit(&q->llq, ~(uint64_t)HWT__Q_OWNED,
								  memory_order_relaxed));
			prod &= ~HWT__Q_OWNED;

			/* c. Wait until the gathered entries are written (A_VALID);
			 *    without gatherers the range is ours, written above. */
			poll_valid(q, sprod, prod);
		}

		/* d. Publish to the device (R_PROD, with the doorbell). */
		hwt__reg_q_write_prod(q->regs, q->qi, prod);

		/* e. Hand over to the next owner only now (R_OWNER: pairs with
		 *    A_OWNER). */
		atomic_store_explicit(&q->owner_prod, prod, memory_order_release);
	}

	/* 5. Wait for our CMD_SYNC, by the deadline of the whole call. */
	if (sync)
		return wait_for_sync(q, &w, hwt__q_inc(shift, sprod, n));
	return 0;
}
