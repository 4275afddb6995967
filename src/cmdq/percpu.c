/* SPDX-License-Identifier: MIT */
/*
 * The rseq path (docs/percpu-queues.md, sections 2 and 3): where every
 * queue belongs to one CPU (queues == possible CPUs <= NUMQ) and rseq is
 * registered, a call inserts on the queue of the CPU it runs on with
 * hwt__rseq_insert() (src/arch/rseq.h: a restartable sequence whose last
 * instruction is the one store of PROD; no locked instruction, no fence),
 * rings the doorbell, and notes the PROD value in the thread's record
 * (queues.c): plain thread-local stores.
 *
 * Completion.  MSI polling: the CMD_SYNC's MSIADDR is the thread's own
 * 4-byte word (a 64-byte line of its own, in a DMA-mapped chunk of the
 * object), MSIDATA the thread's ++sync_seq; the waiter loads the word with
 * acquire until it equals sync_seq.  Nobody else's CMD_SYNC writes that
 * word, so a waiter may sleep through any number of laps of its queue.  A
 * wait that gives up leaves a CMD_SYNC that may still write the word (a
 * late MSI, which could overwrite a later completion): the word is retired
 * (never handed out again; freed at destroy after the device acknowledged
 * the disable) and the thread takes a fresh one.  CONS polling: wait until
 * CONS reaches the end e of the call's entries, with the wrap-bit compare
 * and the idle rule (hwt__cmdq_wait_reached).
 *
 * MSI words come from chunks mapped on demand, each twice the size of the
 * last (the first 64 words): a pool never runs out before the device's DMA
 * window does (-ENOSPC, from hwt__bus_dma_map).  A thread's word goes back
 * to the object's pool with its record when the thread exits, unless a
 * CMD_SYNC may still write it (the thread was cancelled in its wait): then
 * it is retired (queues.c, release).
 *
 * Memory-order labels (acquire A_x pairs with release R_x):
 *   R_PROD (the section's commit, arch/rseq.S) / A_PROD (device)
 *   R_CONS (device) / A_CONS      CONS read in the section, in the space
 *                                 wait and in wait_reached
 *   R_MSI (device) / A_MSI        the device's MSI write of MSIDATA into the
 *                                 thread's word -> the waiter's load: every
 *                                 command before the CMD_SYNC has executed
 *   R_PROD / A_XPROD              wait_reached's load of another CPU's PROD,
 *                                 before its CONS load (the idle rule needs
 *                                 CONS read after that PROD)
 *   DB2 (bus/regs.h)              the doorbell after the commit: a compiler
 *                                 barrier and a plain load (asymmetric)
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "arch/rseq.h"
#include "cmdq/impl.h"
#include "common/time.h"

#define WORD_LINE 64          /* one MSI word per cache line */
#define CHUNK_WORDS_FIRST 64  /* then doubling */
#define STACK_ENTS (HWT_CMDQ_BATCH_ENTRIES + 1) /* a batch and its CMD_SYNC */

struct hwt__cmdq_wchunk {
	struct hwt__cmdq_wchunk *next;
	void *va;
	uint64_t iova;
	unsigned words;
};

/* --- MSI words ------------------------------------------------------------ */

/* Under glock: a fresh word for rec (its old one, if any, is retired: it
 * stays in its chunk, never handed out again). */
int hwt__cmdq_word_take(struct hwt_cmdq *q, struct hwt__cmdq_rec *rec)
{
	struct hwt__cmdq_mq *mq = q->mq;
	struct hwt__cmdq_wchunk *c = mq->chunks;
	unsigned off;

	rec->word = NULL;
	if (!c || mq->chunk_used == c->words) {
		unsigned words = c ? 2 * c->words : CHUNK_WORDS_FIRST;
		int err;

		c = calloc(1, sizeof(*c));
		if (!c)
			return -ENOMEM;
		c->words = words;
		c->va = aligned_alloc(4096, (size_t)words * WORD_LINE);
		if (!c->va) {
			free(c);
			return -ENOMEM;
		}
		memset(c->va, 0, (size_t)words * WORD_LINE);
		err = hwt__bus_dma_map(q->dev, c->va, (size_t)words * WORD_LINE, &c->iova);
		if (err) {
			free(c->va);
			free(c);
			return err;
		}
		c->next = mq->chunks;
		mq->chunks = c;
		mq->chunk_used = 0;
	}
	off = mq->chunk_used++ * WORD_LINE;
	rec->word = (_Atomic uint32_t *)((char *)c->va + off);
	rec->word_iova = c->iova + off;
	rec->sync_seq = 0; /* the word is 0: the first CMD_SYNC writes 1 */
	return 0;
}

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
	}
	q->mq->rings = r;
	return 0;
}

/* After the device acknowledged every queue's disable: no MSI is in flight. */
void hwt__cmdq_rseq_fini(struct hwt_cmdq *q)
{
	struct hwt__cmdq_mq *mq = q->mq;

	hwt__cmdq_glock();
	for (struct hwt__cmdq_wchunk *c = mq->chunks, *next; c; c = next) {
		next = c->next;
		/* Not the queue: never refused.  Records still held point at
		 * the word; they never use it again (the object is gone). */
		hwt__bus_dma_unmap(q->dev, c->iova);
		free(c->va);
		free(c);
	}
	mq->chunks = NULL;
	hwt__cmdq_gunlock();
	free(mq->rings);
	mq->rings = NULL;
}

/* --- waits ------------------------------------------------------------------ */

struct reach {
	struct hwt_cmdq *sq;
	uint32_t e;
};

/* docs section 3: CONS has reached e (the wrap-bit compare), or CONS equals
 * a PROD value read before it (the idle rule).  Positions are WRP | IDX. */
static bool reached(const struct reach *r)
{
	struct hwt_cmdq *sq = r->sq;
	uint32_t size = 1u << sq->shift, mask = 2 * size - 1;
	/* A_XPROD: pairs with the commit (R_PROD) that stored x; acquire keeps
	 * the CONS load below after this load. */
	uint32_t x = atomic_load_explicit(hwt__reg_q_prod(sq->regs, sq->qi), memory_order_acquire);
	uint32_t c = hwt__reg_q_read_cons(sq->regs, sq->qi) & mask; /* A_CONS */

	return ((c - r->e) & mask) < size || c == (x & mask);
}

static bool not_reached(void *arg)
{
	return !reached(arg);
}

int hwt__cmdq_wait_reached(struct hwt_cmdq *q, unsigned qi, uint32_t e, uint64_t *deadline)
{
	struct reach r = { q->sub[qi], e };
	struct hwt__devwait w = { .q = r.sq, .deadline = *deadline };
	int err = 0;

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
	uint32_t prod, cons, k;
};

/* Still no room for k, neither PROD nor CONS moved, and the thread still
 * runs on the queue's CPU?  (sched_getcpu: rseq's cpu_id, no system call;
 * -1, which rseq never gives, counts as no move.) */
static bool no_space(void *arg)
{
	struct space *s = arg;
	struct hwt_cmdq *sq = s->sq;
	uint32_t p = hwt__reg_q_read_prod(sq->regs, sq->qi);
	uint32_t c = hwt__q_pos(sq->shift, hwt__reg_q_read_cons(sq->regs, sq->qi)); /* A_CONS */
	int cpu = sched_getcpu();

	return p == s->prod && c == s->cons && !hwt__q_has_space(sq->shift, p, c, s->k) &&
	       (cpu < 0 || (unsigned)cpu == sq->qi);
}

/*
 * -EAGAIN from the section: queue qi has no room for k.  Wait, outside any
 * section, until its CONS or its PROD changes (docs section 2: CONS alone
 * can come back to the same value laps later while the others refill), or
 * the thread runs on another CPU (a migration: that CPU's queue may have
 * room), then the caller tries again, on the CPU it runs on then.  Each
 * time round reads the clock first, so a call that finds no room again and
 * again (PROD, CONS or the CPU changing between its polls) still gives up
 * at the call's deadline.
 */
static int wait_space(struct hwt_cmdq *q, unsigned qi, uint32_t k, uint64_t *deadline)
{
	struct hwt_cmdq *sq = q->sub[qi];
	struct space s = { sq, 0, 0, k };
	struct hwt__devwait w = { .q = sq, .deadline = *deadline };
	uint64_t now;
	int err;

	s.prod = hwt__reg_q_read_prod(sq->regs, qi);
	s.cons = hwt__q_pos(sq->shift, hwt__reg_q_read_cons(sq->regs, qi)); /* A_CONS */
	hwt__devwait_next(&w, 63, no_space, &s);
	err = hwt__devwait_check(&w, &now);
	while (!err && no_space(&s)) {
		/* The device signals the full -> not-full edge: sleep on events
		 * while the queue is full, else back off. */
		err = hwt__devwait_step(&w, sq->sev && hwt__q_full(sq->shift, s.prod, s.cons));
	}
	if (err) {
		char buf[HWT__VERDICT_LEN];

		hwt__cmdq_log(sq, "CMDQ %s: no space for %u entries [PROD 0x%08x, CONS 0x%08x]",
			      hwt__cmdq_verdict(sq, err, buf), k, s.prod, s.cons);
	}
	*deadline = w.deadline;
	return err;
}

/* MSI polling: wait until the device wrote seq into the thread's word. */
static int wait_msi(struct hwt_cmdq *q, struct hwt__cmdq_rec *rec, unsigned qi, uint32_t seq,
		    uint32_t e, uint64_t *deadline)
{
	struct hwt_cmdq *sq = q->sub[qi];
	struct hwt__devwait w = { .q = sq, .deadline = *deadline };
	int err = 0;

	hwt__devwait_next(&w, 63, NULL, NULL);
	/* A_MSI: pairs with the device's R_MSI, written after everything
	 * before the CMD_SYNC in queue qi executed.  The word is 4 bytes,
	 * little-endian as the device writes it (the rseq path runs on
	 * little-endian hosts only). */
	while (atomic_load_explicit(rec->word, memory_order_acquire) != seq) {
		err = hwt__devwait_step(&w, false);
		if (err)
			break;
	}
	*deadline = w.deadline;
	if (!err)
		return 0;
	{
		char buf[HWT__VERDICT_LEN];

		hwt__cmdq_log(sq, "CMD_SYNC %s at 0x%08x (MSI word 0x%08x, want 0x%08x) [PROD 0x%08x, "
			      "CONS 0x%08x]", hwt__cmdq_verdict(sq, err, buf), e,
			      atomic_load_explicit(rec->word, memory_order_relaxed), seq,
			      hwt__reg_q_read_prod(sq->regs, qi), hwt__reg_q_read_cons(sq->regs, qi));
	}
	/* A late MSI may still land in this word: retire it (docs section 3). */
	hwt__cmdq_glock();
	hwt__cmdq_word_take(q, rec); /* on failure rec->word is NULL: taken again next time */
	hwt__cmdq_gunlock();
	return err;
}

/* --- insertion --------------------------------------------------------------- */

/* One section: k entries at ents on this CPU's queue; waits for room
 * outside the section.  *qi, *prod: the queue and the PROD value stored. */
static int insert(struct hwt_cmdq *q, const void *ents, uint32_t k, uint64_t *deadline,
		  unsigned *qi, uint32_t *prod)
{
	for (;;) {
		int err = hwt__rseq_insert(q->mq->rings, q->nq, ents, k, qi, prod);

		if (!err) {
			/* DB2 after our commit (R_PROD): no locked instruction (a fence
			 * on the symmetric doorbell only, bus/regs.h). */
			hwt__reg_q_doorbell(q->regs);
			return 0;
		}
		/* -ERANGE: a CPU number at or past the possible CPUs'
		 * highest, which the kernel never gives; -EINVAL, -ENOSYS:
		 * ruled out at create and by the caller. */
		if (err != -EAGAIN)
			return err;
		err = wait_space(q, *qi, k, deadline);
		if (err)
			return err;
	}
}

int hwt__cmdq_rseq_issue(struct hwt_cmdq *q, struct hwt__cmdq_rec *rec,
			 const struct hwt_cmdq_cmd *cmds, uint32_t n, bool sync, bool *inserted,
			 uint64_t *deadline, unsigned *qi)
{
	struct hwt_cmdq_cmd buf[STACK_ENTS];
	const struct hwt_cmdq_cmd *ents = cmds;
	uint32_t k = n, prod, first_prod = 0, seq = 0;
	unsigned first = 0;
	bool split = sync && n >= STACK_ENTS;
	int err;

	if (sync && q->msipoll && !rec->word) {
		/* The last wait gave up and no fresh word could be had then. */
		hwt__cmdq_glock();
		err = hwt__cmdq_word_take(q, rec);
		hwt__cmdq_gunlock();
		if (err)
			return err;
	}
	if (split) {
		/* A long call: its commands in one section, then the CMD_SYNC
		 * in another (maybe on another queue: then the wait below
		 * covers the first queue too). */
		err = insert(q, cmds, n, deadline, &first, &first_prod);
		if (err)
			return err;
		if (inserted)
			*inserted = true;
		hwt__cmdq_rec_set(rec, first, first_prod);
		ents = buf;
		k = 0;
	} else if (sync) {
		if (n) /* cmds is NULL for hwt_cmdq_sync */
			memcpy(buf, cmds, n * sizeof(*buf)); /* host order is little-endian here */
		ents = buf;
	}
	if (sync) {
		/* Built once, before the section: a restart inserts the same
		 * call, with the same MSIDATA. */
		struct hwt_cmdq_cmd *s = &buf[k];

		if (q->msipoll) {
			seq = rec->sync_seq + 1;
			hwt_smmu_sync_build(s->dw, HWT_SMMU_CS_IRQ, rec->word_iova);
			hwt_smmu_put(s->dw, HWT_SMMU_OP_CMD_SYNC, HWT_SMMU_F_MSIDATA, seq);
			rec->sync_seq = seq;
		} else {
			hwt_smmu_sync_build(s->dw, HWT_SMMU_CS_SEV, 0);
		}
		k++;
	}
	err = insert(q, ents, k, deadline, qi, &prod);
	if (err) /* nothing of this section went in */
		return err;
	if (inserted)
		*inserted = true;
	/* The record: plain stores, thread-local (no atomic, no lock). */
	hwt__cmdq_rec_set(rec, *qi, prod);
	if (!sync)
		return 0;
	err = q->msipoll ? wait_msi(q, rec, *qi, seq, prod, deadline)
			 : hwt__cmdq_wait_reached(q, *qi, prod, deadline);
	if (err)
		return err;
	/* Our CMD_SYNC on *qi covers all we inserted there. */
	hwt__cmdq_rec_clear(rec, *qi);
	if (split && first != *qi) {
		err = hwt__cmdq_wait_reached(q, first, first_prod, deadline);
		if (!err)
			hwt__cmdq_rec_clear(rec, first);
	}
	return err;
}
