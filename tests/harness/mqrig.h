/* SPDX-License-Identifier: MIT */
/*
 * A queue object of several command queues on a software SMMU of NUMQ
 * queues, whose executor records every command (tests/unit/cmdq_mq.c,
 * tests/stress/cmdq_mq.c).
 *
 *   mqrig_up(r, &opt)   device (hwt__dev_create_nq: opt.numq queues, IDR0
 *                       opt.idr0), queue object (opt.queues, ...), started
 *   mqrig_down(r)       stop, destroy both
 *   mqrig_cmds(r, p, seq, cmds, n)   n commands of producer p, seq.. seq+n-1
 *
 * The executor (handler_batch: on little-endian hosts its commands point
 * into queue memory, so it knows each command's queue) checks, per
 * producer: exactly once (a bitmap of sequence numbers) and order per
 * queue (each queue's sequence numbers of one producer increase).  A
 * MQRIG_GATE command fails with CERROR_ABT (the queue stops until the
 * driver acknowledges, then re-fetches it) while r->gate is closed: it
 * holds up its own queue only.
 */
#ifndef HWT_TEST_MQRIG_H
#define HWT_TEST_MQRIG_H

#include <hwtune/hwtune.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "harness/rig.h"
#include "harness/why.h"

#define MQRIG_MAXP 64
#define MQRIG_MAXQ 256          /* queues whose order the executor checks: NUMQ's most */
#define MQRIG_OP 0x01           /* a command of (producer, seq) */
#define MQRIG_GATE 0x02         /* held (CERROR_ABT) while the gate is closed */
#define MQRIG_SEQ_BITS 40

struct mqrig_opt {
	unsigned numq;          /* the device's queues */
	unsigned queues;        /* options.queues */
	uint32_t idr0;          /* 0: MSI | SEV | COHACC */
	bool disable_msi;
	unsigned shift;         /* 0: 2^8 entries */
	uint64_t timeout_ns;    /* 0: 1 s */
	uint64_t cap;           /* sequence numbers per producer (0: 1 << 16) */
	bool no_start;          /* leave the device stopped */
	bool per_cpu;           /* numq and queues ignored: one queue per possible CPU
				 * (HWT_CMDQ_QUEUES_PER_CPU) on a device of NUMQ's most */
};

struct mqrig {
	struct hwt_smmu_dev *dev;
	struct hwt_cmdq *q;
	struct logbuf log;
	uint64_t cap;
	unsigned nq;                       /* the object's queues */
	const char *qmem[MQRIG_MAXQ];      /* each queue's memory (impl.h) */
	size_t qbytes;
	/* Written by the executor (the consumer thread), read by producers
	 * after a CMD_SYNC (whose completion acquire orders them) or at the
	 * end. */
	_Atomic uint64_t *seen[MQRIG_MAXP];  /* bitmaps, cap bits */
	_Atomic uint64_t executed[MQRIG_MAXP];
	uint64_t next[MQRIG_MAXP][MQRIG_MAXQ]; /* executor only */
	_Atomic uint64_t per_queue[MQRIG_MAXQ];
	struct tst_why why;                /* the executor's violations */
	_Atomic int gate;                  /* 1: MQRIG_GATE fails (ABT) */
	_Atomic unsigned gate_tries, gate_passed;
};

void mqrig_up(struct mqrig *r, const struct mqrig_opt *opt);
void mqrig_down(struct mqrig *r);
void mqrig_cmds(struct mqrig *r, unsigned p, uint64_t seq, struct hwt_cmdq_cmd *cmds, unsigned n);
void mqrig_gate_cmd(struct hwt_cmdq_cmd *c);
/* Has producer p's command seq executed? */
bool mqrig_done(struct mqrig *r, unsigned p, uint64_t seq);
/* The first violation, or NULL. */
const char *mqrig_violation(struct mqrig *r);

/* CPUs configured; pin the calling thread to cpu (false if it cannot run
 * there); skip the test unless CPUs 0 and n - 1 can be had. */
unsigned mqrig_ncpus(void);
bool mqrig_pin(unsigned cpu);
void mqrig_need_cpus(unsigned n);
/* mqrig_up(r, opt) for a test of the rseq path: skipped unless 2 CPUs can
 * be had and the object took that path (then r, malloc'd by the caller,
 * is freed); else up, the caller pinned to CPU 0 (by mqrig_need_cpus). */
void mqrig_up_rseq(struct mqrig *r, const struct mqrig_opt *opt);
/* The rseq path of r's queue as for a thread that moves between its two
 * steps (hwt__cmdq_rseq_steps): the next n insertion attempts (an -EAGAIN
 * counts) are left unpublished (HWT__RSEQ_K_NO_PUBLISH; ~0u: all), and
 * from then on a publish made from C fails as from another CPU
 * (HWT__RSEQ_MOVED) until the library has pinned the thread, once per pin:
 * so the publish of insert()'s wait for room never runs (the tests without
 * mqrig_moved cover it).  Call before other threads use the queue. */
void mqrig_moved(struct mqrig *r, unsigned n);
/* While on (after mqrig_moved, which installs the pin), the library's pin
 * fails as for a CPU the thread may not run on (EINVAL). */
void mqrig_nopin(bool on);

#endif
