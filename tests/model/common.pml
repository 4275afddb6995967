/* SPDX-License-Identifier: MIT */
/*
 * What the two SPIN models share (tests/model/README.md): cmdq.pml (the
 * shared multi-producer ring) and percpu.pml (per-CPU queues with rseq
 * insertion) both #include this file; run.sh copies it beside them.
 */

#ifndef LIVE
#define LIVE 0
#endif
/*
 * A spin loop of the code.  Safety runs (LIVE=0) block on its condition;
 * liveness runs (LIVE=1, pan -DNP -l -f) spin, so that a wait nobody ends
 * is a non-progress cycle.  WAIT_DO(c, body) does body in the same atomic
 * step as the read that saw c (a completion check that asserts on what it
 * read).
 */
#if LIVE
#define WAIT(c) do :: (c) -> break :: else -> skip od; skip /* a break may not land on a d_step */
#define WAIT_DO(c, body) do :: atomic { (c) -> body }; break :: !(c) -> skip od; skip
#else
#define WAIT(c) (c)
#define WAIT_DO(c, body) atomic { (c) -> body }
#endif

/* Slot word0: 0 = zeroed (by an MSI into the slot, or never written); else
 * an entry: producer * 64 + issync * 32 + seq (seq = 1.. per producer). */
#define ENC(p, issync, s) ((p) * 64 + (issync) * 32 + (s))
#define E_PROD(v) ((v) / 64)
#define E_SYNC(v) (((v) / 32) % 2)
#define E_SEQ(v) ((v) % 32)
