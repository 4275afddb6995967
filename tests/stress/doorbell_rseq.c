/* SPDX-License-Identifier: MIT */
/*
 * The doorbell after the rseq commit (src/cmdq/percpu.c: hwt__rseq_insert,
 * then hwt__reg_q_doorbell) on the symmetric doorbell (regs->asym false: a
 * kernel or a seccomp filter without membarrier), as a store-buffering
 * litmus test against the device's going-to-sleep steps (bus/regs.h):
 *
 *   producer (CPU 0)                       device (CPU 1)
 *   R_PROD  the section's commit (a plain  S1 dev_sleeping = 1 (an exchange)
 *           store on x86_64, stlr aarch64) S3 load PROD (seq_cst)
 *   DB2     load dev_sleeping; if set,     (S4 would sleep if S3 saw the old
 *           DB3: db++                          PROD)
 *
 * A lost wake-up is the outcome "DB2 saw 0 and S3 saw the old PROD": the
 * device would sleep (up to its max sleep) with a command published.  The
 * symmetric doorbell promises it never happens (SB is nothing there, the
 * single total order of seq_cst operations decides), which needs the
 * producer's store and load ordered: x86_64 may satisfy the load from
 * before its plain store drains from the store buffer.
 *
 * Each round the two threads meet at a spinning barrier and then run their
 * two steps after a varying delay, for HWT_STRESS_MS (default 400) ms or
 * 2^20 rounds.  Needs rseq and 2 CPUs; the waits yield after a short spin.
 */
#include "arch/rseq.h"
#include "bus/regs.h"
#include "common/time.h"
#include "harness/harness.h"
#include "harness/mqrig.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <time.h>

#define SHIFT 7
#define ROUNDS (1u << 20)

struct lit {
	struct hwt__smmu_regs *r;
	struct hwt__rseq_ring *rings;
	unsigned nrings;
	uint64_t *slots;
	_Alignas(64) _Atomic unsigned arrive;  /* the barrier: 2 per round */
	_Alignas(64) _Atomic unsigned pdone;   /* the producer's finished round */
	_Alignas(64) _Atomic int stop;
	uint64_t deadline_ns;
	/* results (read after join) */
	uint64_t rounds, lost, both_seen, dev_first;
	int perr;
};

/* A wait step: long spins (the litmus threads meet while both run), then
 * yields, then sleeps. */
static void backoff(unsigned *n)
{
	hwt_test_backoff(n, 2048, 2048);
}

/* Both threads arrive; each leaves once the other has (false: stop). */
static bool meet(struct lit *l, unsigned round)
{
	unsigned n = 0;

	atomic_fetch_add_explicit(&l->arrive, 1, memory_order_acq_rel);
	while (atomic_load_explicit(&l->arrive, memory_order_acquire) < 2 * round) {
		if (atomic_load_explicit(&l->stop, memory_order_relaxed))
			return false;
		backoff(&n);
	}
	return true;
}

static void delay(unsigned n)
{
	for (volatile unsigned i = 0; i < n; i++)
		;
}

static void *producer(void *arg)
{
	struct lit *l = arg;
	uint64_t c[2] = { 1, 2 }; /* one 16-byte entry */

	if (!mqrig_pin(0)) {
		l->perr = -EPERM;
		/* relaxed, as every stop: its readers only leave; perr is read after the join */
		atomic_store_explicit(&l->stop, 1, memory_order_relaxed);
		return NULL;
	}
	for (unsigned round = 1; meet(l, round); round++) {
		unsigned cpu;
		uint32_t prod;
		int err;

		delay(round / 256 % 8); /* with the device's, a grid of offsets */
		err = hwt__rseq_insert(l->rings, l->nrings, c, 1, &cpu, &prod); /* R_PROD */
		if (!err)
			hwt__reg_q_doorbell(l->r);                                /* DB2, DB3 */
		if (err) {
			l->perr = err;
			atomic_store_explicit(&l->stop, 1, memory_order_relaxed);
		}
		atomic_store_explicit(&l->pdone, round, memory_order_release);
	}
	return NULL;
}

static void device(struct lit *l)
{
	struct hwt__smmu_regs *r = l->r;

	for (unsigned round = 1; round <= ROUNDS; round++) {
		uint32_t p0 = atomic_load_explicit(&r->prod, memory_order_relaxed);
		uint32_t db0 = atomic_load_explicit(&r->db, memory_order_relaxed);
		uint32_t p;
		unsigned n = 0;

		atomic_store_explicit(&r->dev_sleeping, 0, memory_order_relaxed);
		if (round > 1 && hwt__now_ns() > l->deadline_ns)
			break;
		if (!meet(l, round))
			break;
		delay(round % 256);
		hwt__dekker_store(&r->dev_sleeping, 1);                              /* S1 */
		p = atomic_load_explicit(&r->prod, memory_order_seq_cst);          /* S3 */
		while (atomic_load_explicit(&l->pdone, memory_order_acquire) != round) {
			if (atomic_load_explicit(&l->stop, memory_order_relaxed))
				return;
			backoff(&n);
		}
		l->rounds++;
		if (p == p0 && atomic_load_explicit(&r->db, memory_order_relaxed) == db0)
			l->lost++;
		else if (p != p0 && atomic_load_explicit(&r->db, memory_order_relaxed) != db0)
			l->both_seen++;
		else if (p == p0)
			l->dev_first++;
		/* The device consumed everything: the ring has room again. */
		atomic_store_explicit(&r->cons, atomic_load_explicit(&r->prod, memory_order_relaxed),
				      memory_order_release);
	}
}

TEST_TIMEOUT(rseq_commit_then_symmetric_doorbell_loses_no_wakeup, 60)
{
	const char *why = hwt__rseq_unavailable();
	const char *e = getenv("HWT_STRESS_MS");
	struct lit *l = aligned_alloc(64, sizeof(*l));
	pthread_t t;

	if (why)
		SKIP("rseq unavailable: %s", why);
	if (get_nprocs() < 2 || !mqrig_pin(1))
		SKIP("needs CPUs 0 and 1");
	ASSERT_TRUE(l);
	memset(l, 0, sizeof(*l));
	l->r = aligned_alloc(64, sizeof(*l->r));
	l->nrings = (unsigned)get_nprocs_conf();
	l->rings = aligned_alloc(64, l->nrings * sizeof(*l->rings));
	l->slots = calloc((size_t)1 << SHIFT, 16);
	ASSERT_TRUE(l->r && l->rings && l->slots);
	memset(l->r, 0, sizeof(*l->r));
	l->r->asym = false; /* the symmetric doorbell: no membarrier */
	/* Every ring is the one queue: only the producer thread inserts. */
	memset(l->rings, 0, l->nrings * sizeof(*l->rings));
	for (unsigned i = 0; i < l->nrings; i++) {
		l->rings[i].prod = (uint32_t *)&l->r->prod;
		l->rings[i].cons = (const uint32_t *)&l->r->cons;
		l->rings[i].slots = l->slots;
		l->rings[i].shift = SHIFT;
	}
	l->deadline_ns = hwt__now_ns() + (e && *e ? strtoull(e, NULL, 10) : 400) * 1000000ull;
	ASSERT_OK(pthread_create(&t, NULL, producer, l));
	device(l);
	atomic_store_explicit(&l->stop, 1, memory_order_relaxed);
	pthread_join(t, NULL);
	TLOG("%llu rounds: %llu lost wake-ups, %llu with both sides seeing the other, %llu device "
	     "first", (unsigned long long)l->rounds, (unsigned long long)l->lost,
	     (unsigned long long)l->both_seen, (unsigned long long)l->dev_first);
	ASSERT_OK(l->perr);
	ASSERT_EQ_U64(l->lost, 0);
	free(l->slots);
	free(l->rings);
	free(l->r);
	free(l);
}
