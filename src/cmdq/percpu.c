/* SPDX-License-Identifier: MIT */
/*
 * The rseq path (docs/percpu-queues.md, sections 2, 3 and 8): where every
 * queue belongs to one CPU (queues == possible CPUs <= NUMQ) and rseq is
 * registered, a call inserts on the queue of the CPU it runs on with
 * hwt__rseq_insert() (src/arch/rseq.h: a restartable sequence whose last
 * instruction stores the CPU's private sprod, then one that publishes
 * sprod to PROD; no locked instruction; a call of HWT__RSEQ_NT_MIN commands
 * or more that nobody waits on may store them non-temporally, HWT__RSEQ_K_NT,
 * with x86_64's one fence: nt_pick), rings the doorbell, and
 * notes its end in the thread's record (queues.c): plain thread-local
 * stores.  A thread that moved between the two steps publishes from the
 * old CPU, pinned there for it (publish_on).
 *
 * Completion.  MSI polling (docs section 3): the CMD_SYNC's MSI goes to
 * its own slot, MSIDATA 0, as the kernel's.  The slot is known only inside
 * the section, so the call builds the CMD_SYNC with MSIADDR 0 and passes
 * HWT__RSEQ_K_SYNC_MSI: the section stores the slot's IOVA into its dw1
 * before the commit.  The waiter waits until the slot's dw0 no longer holds
 * the dw0 it wrote.  Writers that can change it: the device's MSI (4
 * bytes of MSIDATA over the opcode word: dw0 becomes 0), a producer of
 * this CPU reusing the slot, which it may only once CONS passed the
 * CMD_SYNC, which the device does after the MSI, and the GERROR handler
 * rewriting a CMD_SYNC that failed (CERROR_ILL) as one without MSI
 * (setup.c): then the commands before it have run, and CONS passes it
 * once the device re-executes it.  A change means completion, however
 * many laps the waiter slept through, once reached() agrees.  A
 * wait that gives up leaves a CMD_SYNC whose MSI may land later: in its own
 * slot, which nobody reuses before CONS passes it, so nothing needs
 * retiring.  CONS polling: wait until CONS reaches the end e of the call's
 * entries, with the wrap-bit compare and the idle rule
 * (hwt__cmdq_wait_reached).
 *
 * Memory-order labels (acquire A_x pairs with release R_x):
 *   R_PROD (the publish's commit, arch/rseq.S) / A_PROD (device)
 *   R_CONS (device) / A_CONS      CONS read in the section, in the space
 *                                 wait and in wait_reached
 *   R_MSI (device) / A_MSI        the device's MSI write of MSIDATA over the
 *                                 CMD_SYNC's dw0 -> the waiter's load of that
 *                                 dw0: every command before it has executed
 *   R_CONS (device) / A_SCONS     a change of that dw0 other than the MSI's
 *                                 is a producer reusing the slot: no
 *                                 synchronizes-with the device (it is the
 *                                 section's plain store), so the waiter
 *                                 takes its happens-before from an acquire
 *                                 load of CONS that has passed the CMD_SYNC
 *                                 (wait_slot)
 *   R_PROD / A_XPROD              reached()'s load of a queue's PROD,
 *                                 before its CONS load (the idle rule needs
 *                                 CONS read after that PROD)
 *   DB2 (bus/regs.h)              the doorbell after the commit: a compiler
 *                                 barrier and a plain load (asymmetric)
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "arch/rseq.h"
#include "cmdq/impl.h"
#include "common/median.h"
#include "common/time.h"

#define STACK_ENTS (HWT_CMDQ_BATCH_ENTRIES + 1) /* a batch and its CMD_SYNC */
_Static_assert(!(HWT__NT_PERIOD & (HWT__NT_PERIOD - 1)) && HWT__NT_TRIAL < HWT__NT_PERIOD,
	       "calls % HWT__NT_PERIOD runs on across the wrap of calls");

int hwt__cmdq_rseq_init(struct hwt_cmdq *q)
{
	struct hwt__rseq_ring *r = aligned_alloc(64, q->nq * sizeof(*r));

	if (!r)
		return -ENOMEM;
	memset(r, 0, q->nq * sizeof(*r));
	for (unsigned i = 0; i < q->nq; i++) {
		/* The assembly's plain view of the registers (x86_64: plain
		 * accesses are release/acquire; aarch64: stlr/ldar). */
		r[i].prod = (uint32_t *)hwt__reg_q_prod(q->regs, i);
		r[i].cons = (const uint32_t *)hwt__reg_q_cons(q->regs, i);
		r[i].slots = q->sub[i]->mem;
		r[i].shift = q->shift;
		r[i].ccons = 0; /* CONS after the reset */
		r[i].iova = q->sub[i]->iova; /* a CMD_SYNC's own slot: its MSI target */
		r[i].sprod = 0; /* PROD after the reset */
	}
	q->mq->rings = r;
	hwt__cmdq_rseq_steps(q, NULL, NULL, NULL);
	return 0;
}

/* After the device acknowledged every queue's disable (the rings point
 * into the queues' memory). */
void hwt__cmdq_rseq_fini(struct hwt_cmdq *q)
{
	free(q->mq->rings);
	q->mq->rings = NULL;
}

/* --- publishing (docs section 8) ------------------------------------------- */

static bool rec_unpub(const struct hwt__cmdq_rec *rec, unsigned i)
{
	return rec->unpub[i / 64] >> (i % 64) & 1;
}

static void rec_set_unpub(struct hwt__cmdq_rec *rec, unsigned i, bool on)
{
	uint64_t bit = 1ull << (i % 64);

	rec->unpub[i / 64] = on ? rec->unpub[i / 64] | bit : rec->unpub[i / 64] & ~bit;
}

/* Queue qi's PROD is at or past e.  Never wrongly yes while e is
 * unpublished: e was inserted with e - CONS <= 2^shift and PROD >= CONS,
 * so PROD lies within 2^shift below e, where the wrap compare says "not
 * yet".  It may say no long after e was published (PROD half a lap on):
 * then the caller publishes again, which stores nothing wrong. */
static bool published(const struct hwt_cmdq *q, unsigned qi, uint32_t e)
{
	const struct hwt_cmdq *sq = q->sub[qi];
	uint32_t size = 1u << sq->shift;
	/* relaxed: it only decides whether to publish; the waits after it
	 * take their own acquire loads */
	uint32_t x = atomic_load_explicit(hwt__reg_q_prod(sq->regs, qi), memory_order_relaxed);

	return ((x - e) & (2 * size - 1)) < size;
}

/* Pins the calling thread to CPU cpu alone: 0 or an errno value. */
static int pin_cpu(unsigned cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one); /* cpu < nq <= NUMQ < CPU_SETSIZE */
	return pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
}

/*
 * The thread inserted up to e on queue qi and did not publish (it moved
 * off CPU qi between the two steps, or a test said so): publish from CPU
 * qi, as only there is the publish safe (a store of PROD from another CPU
 * could move PROD back: the model's z1 and z2).  The thread pins itself to
 * CPU qi (again after each wait step: something may move it away), tries
 * the publish at once, and gets its mask back.  Also done when another
 * producer of CPU qi has published past e.  A CPU the thread may not run
 * on (offline, outside its cpuset) leaves the entries to that CPU's next
 * call, until the deadline: -ETIMEDOUT, the entries unpublished.  A mask
 * the program changes from another thread meanwhile is overwritten by the
 * one saved here.
 */
static int publish_on(struct hwt_cmdq *q, unsigned qi, uint32_t e, uint64_t *deadline)
{
	struct hwt_cmdq *sq = q->sub[qi];
	struct hwt__devwait w = { .q = sq, .deadline = *deadline };
	cpu_set_t old;
	bool saved = false, pinned = false;
	int err = 0, pin = -1, why = 0, r; /* pin: -1 to try (again), 0 done, else errno */

	hwt__devwait_next(&w, 0, NULL, NULL);
	while ((r = q->mq->publish(q->mq->rings, q->nq, qi)) == HWT__RSEQ_MOVED &&
	       !published(q, qi, e)) {
		if (pin < 0) {
			pin = saved ? 0 : pthread_getaffinity_np(pthread_self(), sizeof(old), &old);
			saved = !pin;
			if (saved)
				pin = q->mq->pin(qi);
			if (!pin) {
				pinned = true;
				atomic_fetch_add_explicit(&q->mq->pins, 1, memory_order_relaxed);
				continue; /* publish at once, before the deadline's check */
			}
			why = pin;
		}
		err = hwt__devwait_step(&w, false);
		if (err)
			break;
		pin = -1;
	}
	if (pinned && (pin = pthread_setaffinity_np(pthread_self(), sizeof(old), &old)) != 0)
		hwt__cmdq_log(sq, "CMDQ: the thread's CPU mask, set to CPU %u for a publish there, could "
			      "not be restored (errno %d): it stays on CPU %u", qi, pin, qi);
	*deadline = w.deadline;
	if (r < 0) /* -ENOSYS, -ERANGE: ruled out at create */
		return r;
	if (err) {
		char buf[HWT__VERDICT_LEN];

		hwt__cmdq_log(sq, "CMDQ %s: commands inserted on CPU %u's queue up to 0x%08x, not "
			      "published: this thread moved off that CPU%s [PROD 0x%08x]",
			      hwt__cmdq_verdict(sq, err, buf), qi, e,
			      why == EINVAL ? " and may not run there (offline, or not in its allowed CPUs)"
			      : why ? " and could not pin itself there" : "",
			      hwt__reg_q_read_prod(sq->regs, qi));
	}
	return err;
}

/* publish_on() if need, then the record's unpub bit for qi says whether
 * queue qi still holds entries of this thread unpublished (a publish covers
 * all before it), and a publish rings the doorbell: DB2 after the publish's
 * commit (R_PROD), no locked instruction (a fence on the symmetric doorbell
 * only, bus/regs.h). */
static int publish_noted(struct hwt_cmdq *q, struct hwt__cmdq_rec *rec, unsigned qi, uint32_t e,
			 bool need, uint64_t *deadline)
{
	int err = need ? publish_on(q, qi, e, deadline) : 0;

	rec_set_unpub(rec, qi, err != 0);
	if (!err)
		hwt__reg_q_doorbell(q->regs);
	return err;
}

/* --- waits ------------------------------------------------------------------ */

struct reach {
	struct hwt_cmdq *sq;
	uint32_t e;
};

/* docs section 3: CONS has reached e (the wrap-bit compare), or CONS equals
 * a PROD value read before it (the idle rule).  Positions are WRP | IDX.
 * The compare first, on CONS alone: PROD is a line the device polls, so
 * its load misses nearly always (docs/benchmarks-hand.md: the per-CPU empty
 * CMD_SYNC with CONS polling).  Never the idle rule against a PROD loaded
 * after that CONS: PROD may have gone a lap past it since (the SPIN
 * model's BROKEN_EARLY_IDLE). */
static bool reached(const struct reach *r)
{
	struct hwt_cmdq *sq = r->sq;
	uint32_t size = 1u << sq->shift, mask = 2 * size - 1;
	/* A_CONS (A_SCONS when wait_slot asks): pairs with the device's
	 * R_CONS of this value; so does the second CONS load below. */
	uint32_t c = hwt__reg_q_read_cons(sq->regs, sq->qi) & mask, x;

	if (((c - r->e) & mask) < size)
		return true;
	/* A_XPROD: pairs with the commit (R_PROD) that stored x; acquire keeps
	 * the CONS load below after this load. */
	x = atomic_load_explicit(hwt__reg_q_prod(sq->regs, sq->qi), memory_order_acquire);
	c = hwt__reg_q_read_cons(sq->regs, sq->qi) & mask;
	return ((c - r->e) & mask) < size || c == (x & mask);
}

static bool not_reached(void *arg)
{
	return !reached(arg);
}

int hwt__cmdq_wait_reached(struct hwt_cmdq *q, struct hwt__cmdq_rec *rec, unsigned qi, uint32_t e,
			   uint64_t *deadline)
{
	struct reach r = { q->sub[qi], e };
	struct hwt__devwait w = { .q = r.sq };
	int err = 0;

	/* The idle rule holds only once e is published (the model's z3). */
	if (rec_unpub(rec, qi) && (err = publish_noted(q, rec, qi, e, true, deadline)) != 0)
		return err;
	w.deadline = *deadline;
	hwt__devwait_next(&w, 0, not_reached, &r);
	while (!reached(&r)) {
		uint32_t raw = hwt__reg_q_read_cons(r.sq->regs, qi); /* A_CONS */
		uint64_t now;

		/* WFE-like: returns early when CONS changes; PROD moving is
		 * seen at the next check (the idle rule).  CONS moved: look
		 * again at once, but within the deadline (a lapped waiter's
		 * compare can say "not yet" while CONS moves on every poll). */
		if (hwt__reg_q_wait_cons_change(r.sq->regs, qi, raw) != raw)
			err = reached(&r) ? 0 : hwt__devwait_check(&w, &now);
		else
			err = hwt__devwait_step(&w, r.sq->sev);
		if (err) {
			char buf[HWT__VERDICT_LEN];

			hwt__cmdq_log(r.sq, "CMD_SYNC %s waiting for CONS to reach 0x%08x [PROD 0x%08x, "
				      "CONS 0x%08x]", hwt__cmdq_verdict(r.sq, err, buf), e,
				      hwt__reg_q_read_prod(r.sq->regs, qi),
				      hwt__reg_q_read_cons(r.sq->regs, qi));
			break;
		}
	}
	*deadline = w.deadline;
	return err;
}

struct space {
	struct hwt_cmdq *sq;
	_Atomic uint32_t *sprod;
	uint32_t prod, sp, cons, k;
};

/* The CPU's sprod, read outside a section (relaxed: the section rereads it;
 * written by the sections of this CPU only, as plain stores). */
static uint32_t read_sprod(const struct space *s)
{
	return atomic_load_explicit(s->sprod, memory_order_relaxed);
}

/* Still no room for k by sprod, neither PROD, sprod nor CONS moved, and the
 * thread still runs on the queue's CPU?  (sched_getcpu: rseq's cpu_id, no
 * system call; -1, which rseq never gives, counts as no move.) */
static bool no_space(void *arg)
{
	struct space *s = arg;
	struct hwt_cmdq *sq = s->sq;
	uint32_t p = hwt__reg_q_read_prod(sq->regs, sq->qi), sp = read_sprod(s);
	uint32_t c = hwt__cmdq_read_cons(sq); /* A_CONS */
	int cpu = sched_getcpu();

	return p == s->prod && sp == s->sp && c == s->cons &&
	       !hwt__q_has_space(sq->shift, sp, c, s->k) && (cpu < 0 || (unsigned)cpu == sq->qi);
}

/*
 * -EAGAIN from the section: queue qi has no room for k.  Wait, outside any
 * section, until its CONS, its PROD or its sprod changes (docs section 2:
 * CONS alone can come back to the same value laps later while the others
 * refill), or the thread runs on another CPU (a migration: that CPU's
 * queue may have room), then the caller tries again, on the CPU it runs on
 * then.  Each time round reads the clock first, so a call that finds no
 * room again and again (PROD, CONS or the CPU changing between its polls)
 * still gives up at the call's deadline.
 */
static int wait_space(struct hwt_cmdq *q, unsigned qi, uint32_t k, uint64_t *deadline)
{
	struct hwt_cmdq *sq = q->sub[qi];
	struct space s = { sq, (_Atomic uint32_t *)&q->mq->rings[qi].sprod, 0, 0, 0, k };
	struct hwt__devwait w = { .q = sq, .deadline = *deadline };
	uint64_t now;
	int err;

	s.prod = hwt__reg_q_read_prod(sq->regs, qi);
	s.sp = read_sprod(&s);
	s.cons = hwt__cmdq_read_cons(sq); /* A_CONS */
	hwt__devwait_next(&w, 63, no_space, &s);
	err = hwt__devwait_check(&w, &now);
	while (!err && no_space(&s)) {
		/* The device signals the full -> not-full edge of PROD's queue;
		 * full by sprod alone (a producer between its two steps) gets
		 * no event. */
		err = hwt__devwait_step(&w, sq->sev && hwt__q_full(sq->shift, s.prod, s.cons));
	}
	if (err) {
		char buf[HWT__VERDICT_LEN];

		hwt__cmdq_log(sq, "CMDQ %s: no space for %u entries [PROD 0x%08x, inserted to 0x%08x, "
			      "CONS 0x%08x]", hwt__cmdq_verdict(sq, err, buf), k, s.prod, s.sp, s.cons);
	}
	*deadline = w.deadline;
	return err;
}

/* What the MSI leaves in a CMD_SYNC's dw0: MSIDATA (0) over its low word,
 * whose high word (MSIDATA's field) is 0 too; a device writing 8 bytes
 * (msi_64bit) leaves the same. */
#define MSI_DONE 0ull

/*
 * MSI polling: wait until the slot of the CMD_SYNC that ends at e (its
 * position is e - 1) no longer holds mine, the dw0 this call wrote there
 * (docs section 3).  Two ways out with 0:
 *   - the slot holds MSI_DONE.  A_MSI: pairs with the device's R_MSI (its
 *     release store of MSIDATA, after every command before the CMD_SYNC
 *     executed).  A producer reusing the slot could store MSI_DONE only as
 *     an entry of opcode 0, which no SMMU command has (the built-in
 *     executor fails it, CERROR_ILL); taken for the MSI it would still be
 *     ordered on the hardware (its store follows its A_CONS of a CONS past
 *     the sync: TSO on x86_64, the ldar's order on aarch64), not in C11.
 *   - the slot holds anything else but mine: a producer reused it, so CONS
 *     had passed the CMD_SYNC when that producer read it.  Its store is the
 *     section's plain store, no release the waiter could pair with, so the
 *     waiter does not return on it alone: it also needs reached() (A_SCONS:
 *     its acquire load of CONS pairs with the device's R_CONS of a CONS past
 *     e - 1, published after the CMD_SYNC completed).  CONS has passed the
 *     sync, so the wrap-bit compare or the idle rule says so at once, or
 *     once CONS comes back into the compare's half-lap (busy queue).
 * A slot showing mine after a reuse by an identical CMD_SYNC (every rseq
 * CMD_SYNC with MSI has the same dw0) only delays the waiter: that sync's
 * MSI changes it too, and the slow steps check reached() as well.
 */
static int wait_slot(struct hwt_cmdq *q, unsigned qi, uint32_t e, uint64_t mine, uint64_t *deadline)
{
	struct hwt_cmdq *sq = q->sub[qi];
	/* The rseq path runs on little-endian hosts only: dw0 as the device
	 * sees it is the host's uint64_t.  The device's R_MSI is a 4-byte
	 * store into its low half: a mixed-size pair, which C11 leaves
	 * undefined and both x86_64 and aarch64 order (single-copy atomic
	 * aligned accesses; TSan sees no race). */
	_Atomic uint64_t *dw0 = (_Atomic uint64_t *)(sq->mem + 2 * hwt__q_idx(sq->shift, e - 1));
	struct reach r = { sq, e };
	struct hwt__devwait w = { .q = sq, .deadline = *deadline };
	int err = 0;

	hwt__devwait_next(&w, 63, NULL, NULL);
	for (;;) {
		uint64_t v = atomic_load_explicit(dw0, memory_order_acquire); /* A_MSI */

		if (v == MSI_DONE)
			break;
		/* A_SCONS (in reached): a change that is not the MSI; and
		 * every 64th poll past the first clock read, also without one
		 * (a reuse by an identical CMD_SYNC). */
		if ((v != mine || (w.start && !(w.polls & 63))) && reached(&r))
			break;
		err = hwt__devwait_step(&w, false);
		if (err)
			break;
	}
	*deadline = w.deadline; /* the call's, for its next wait (the split path) */
	if (!err)
		return 0;
	{
		char buf[HWT__VERDICT_LEN];

		hwt__cmdq_log(sq, "CMD_SYNC %s at 0x%08x (its slot's dw0 0x%016llx, written 0x%016llx) "
			      "[PROD 0x%08x, CONS 0x%08x]", hwt__cmdq_verdict(sq, err, buf), e,
			      (unsigned long long)atomic_load_explicit(dw0, memory_order_relaxed),
			      (unsigned long long)mine, hwt__reg_q_read_prod(sq->regs, qi),
			      hwt__reg_q_read_cons(sq->regs, qi));
	}
	/* A late MSI lands in the CMD_SYNC's own slot, which no producer
	 * reuses before CONS passes it (after that MSI): nothing to retire. */
	return err;
}

/* --- the copy of large calls -------------------------------------------------- */

/*
 * Calls of HWT__RSEQ_NT_MIN commands or more that nobody waits on: cached or
 * non-temporal copy (HWT__RSEQ_K_NT)?  It depends on where the producer and
 * the device run: one guest measured both a 1.2x gain and a 2x loss, an hour
 * apart (arch/rseq.h).  So each thread times its own such calls, per queue
 * object (rec->nt, plain: thread-local, reset when a thread takes a record
 * over).  The first HWT__NT_TRIAL of every HWT__NT_PERIOD take the copies in
 * blocks of HWT__NT_BLOCK (cached, non-temporal, cached, non-temporal), and
 * each call in the second half of a block (the first half lets the previous
 * block's lines settle) is timed from its start to the next such call's
 * start: a cached copy's cost is partly paid after the call returns (its
 * stores wait in the store buffer for their lines), and where the device is
 * the slower side a call waits for room at the device's pace, which the copy
 * changes too (it reads a non-temporal copy from memory).  Each trial decides
 * afresh for the calls up to the next one: the non-temporal copy only if the
 * lower quartile of its times per entry is at least 1/16 below the cached
 * copy's (the quartile, not the median: a sleep in a room wait or a
 * preemption only ever adds time, and may hit a whole block).  A tie, or
 * calls far apart whose gaps drown the difference, go to the cached copy,
 * which the device reads from a cache.
 */
static inline bool nt_block_nt(uint32_t c)
{
	return (c / HWT__NT_BLOCK) & 1;
}

/* Trial call c's place among its copy's times (the second half of its
 * block: the copy's two blocks give HWT__NT_BLOCK times). */
static inline unsigned nt_slot(uint32_t c)
{
	return c / (2 * HWT__NT_BLOCK) * (HWT__NT_BLOCK / 2) + c % (HWT__NT_BLOCK / 2);
}

static uint32_t nt_pick(struct hwt__cmdq_ntpick *p, uint32_t k)
{
	uint32_t c = p->calls++ % HWT__NT_PERIOD, b = c - 1;
	uint64_t now, q[2];

	if (c > HWT__NT_TRIAL)
		return p->nt ? HWT__RSEQ_K_NT : 0;
	now = hwt__now_ns();
	if (c && b % HWT__NT_BLOCK >= HWT__NT_BLOCK / 2) /* the time of trial call b */
		p->ns[nt_block_nt(b)][nt_slot(b)] = (now - p->t) * 16 / p->k;
	p->t = now;
	p->k = k;
	if (c < HWT__NT_TRIAL)
		return nt_block_nt(c) ? HWT__RSEQ_K_NT : 0;
	for (unsigned m = 0; m < 2; m++) { /* each trial writes them all */
		hwt__sort_u64(p->ns[m], HWT__NT_BLOCK);
		q[m] = p->ns[m][HWT__NT_BLOCK / 4]; /* the lower quartile */
	}
	p->nt = q[1] * 16 < q[0] * 15;
	return p->nt ? HWT__RSEQ_K_NT : 0;
}

/* --- insertion --------------------------------------------------------------- */

void hwt__cmdq_rseq_steps(struct hwt_cmdq *q, hwt__rseq_insert_fn *insert,
			 hwt__rseq_publish_fn *publish, hwt__cmdq_pin_fn *pin)
{
	q->mq->insert = insert ? insert : hwt__rseq_insert;
	q->mq->publish = publish ? publish : hwt__rseq_publish;
	q->mq->pin = pin ? pin : pin_cpu;
}

/* k entries at ents on this CPU's queue; waits for room outside the
 * sections.  flag: 0, HWT__RSEQ_K_SYNC_MSI or HWT__RSEQ_K_NT (arch/rseq.h).
 * *qi, *prod: the queue and the call's end.  0: in and published;
 * HWT__RSEQ_MOVED: in, not published (settle() publishes); negative:
 * nothing went in. */
static int insert(struct hwt_cmdq *q, const void *ents, uint32_t k, uint32_t flag,
		  uint64_t *deadline, unsigned *qi, uint32_t *prod)
{
	for (;;) {
		int err = q->mq->insert(q->mq->rings, q->nq, ents, k | flag, qi, prod);

		/* -ERANGE: a CPU number at or past the possible CPUs'
		 * highest, which the kernel never gives; -EINVAL, -ENOSYS:
		 * ruled out at create and by the caller. */
		if (err != -EAGAIN)
			return err;
		/* Another producer of this CPU may have inserted and not yet
		 * published (preempted between its two steps): publish for it,
		 * so that the device can make the room we wait for. */
		if (q->mq->publish(q->mq->rings, q->nq, *qi) == 0)
			hwt__reg_q_doorbell(q->regs);
		err = wait_space(q, *qi, k, deadline);
		if (err)
			return err;
	}
}

/* insert() put the call's entries into queue qi up to e (in: its 0 or
 * HWT__RSEQ_MOVED): publish them from CPU qi if the section could not, note
 * them in the record (with rec->unpub if that failed), and ring the
 * doorbell. */
static int settle(struct hwt_cmdq *q, struct hwt__cmdq_rec *rec, int in, unsigned qi, uint32_t e,
		  uint64_t *deadline)
{
	/* The record: plain stores, thread-local (no atomic, no lock). */
	hwt__cmdq_rec_set(rec, qi, e);
	return publish_noted(q, rec, qi, e, in != 0, deadline);
}

int hwt__cmdq_rseq_issue(struct hwt_cmdq *q, struct hwt__cmdq_rec *rec,
			 const struct hwt_cmdq_cmd *cmds, uint32_t n, bool sync, bool *inserted,
			 uint64_t *deadline, unsigned *qi)
{
	struct hwt_cmdq_cmd buf[STACK_ENTS];
	const struct hwt_cmdq_cmd *ents = cmds;
	uint32_t k = n, prod, first_prod = 0, flag = 0;
	uint64_t mine = 0;
	unsigned first = 0;
	bool split = sync && n >= STACK_ENTS;
	int err;

	if (split) {
		/* A long call: its commands in one section, then the CMD_SYNC
		 * in another (maybe on another queue: then the wait below
		 * covers the first queue too). */
		err = insert(q, cmds, n, 0, deadline, &first, &first_prod);
		if (err < 0)
			return err;
		if (inserted)
			*inserted = true;
		err = settle(q, rec, err, first, first_prod, deadline);
		if (err)
			return err;
		ents = buf;
		k = 0;
	} else if (sync) {
		if (n) /* cmds is NULL for hwt_cmdq_sync */
			memcpy(buf, cmds, n * sizeof(*buf)); /* host order is little-endian here */
		ents = buf;
	}
	if (sync) {
		/* Built once, before the section: a restart inserts the same
		 * call.  With MSI polling MSIADDR is 0 here and MSIDATA 0: the
		 * section stores the slot's IOVA into dw1 (the flag). */
		struct hwt_cmdq_cmd *s = &buf[k];

		if (q->msipoll) {
			hwt_smmu_sync_build(s->dw, HWT_SMMU_CS_IRQ, 0);
			mine = s->dw[0];
			flag = HWT__RSEQ_K_SYNC_MSI;
		} else {
			hwt_smmu_sync_build(s->dw, HWT_SMMU_CS_SEV, 0);
		}
		k++;
	} else if (HWT__RSEQ_HAVE_NT && k >= HWT__RSEQ_NT_MIN) {
		flag = nt_pick(&rec->nt, k); /* nobody waits on these */
	}
	err = insert(q, ents, k, flag, deadline, qi, &prod);
	if (err < 0) /* nothing of this section went in */
		return err;
	if (inserted)
		*inserted = true;
	err = settle(q, rec, err, *qi, prod, deadline);
	if (err || !sync)
		return err;
	err = q->msipoll ? wait_slot(q, *qi, prod, mine, deadline)
			 : hwt__cmdq_wait_reached(q, rec, *qi, prod, deadline);
	if (err)
		return err;
	/* Our CMD_SYNC on *qi covers all we inserted there. */
	hwt__cmdq_rec_clear(rec, *qi);
	if (split && first != *qi) {
		err = hwt__cmdq_wait_reached(q, rec, first, first_prod, deadline);
		if (!err)
			hwt__cmdq_rec_clear(rec, first);
	}
	return err;
}
