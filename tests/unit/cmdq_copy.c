/* SPDX-License-Identifier: MIT */
/*
 * The rseq path's copy of large calls nobody waits on (src/cmdq/percpu.c,
 * nt_pick): every 2048 such calls of a thread, a trial of 64 alternates the
 * cached and the non-temporal copy in blocks of 16, and the faster one
 * takes the calls up to the next trial.  Here the insertion step spins
 * before the section for one copy, which makes the other the faster, and
 * notes each call's flag; the rig's executor checks exactly once.
 */
#include "harness/harness.h"
#include "harness/mqrig.h"

#include <stdlib.h>
#include <string.h>

#include "arch/rseq.h"
#include "cmdq/impl.h"
#include "common/time.h"

#define K HWT__RSEQ_NT_MIN
#define CALLS 2200   /* two trials: calls 0-63 and 2048-2111 */
#define SLOW_NS 20000

static _Thread_local unsigned cur;           /* the test's call number */
static _Thread_local signed char flag_of[CALLS]; /* -1 no insertion seen; else NT or not */
static _Thread_local bool slow_nt;           /* the copy the step slows */

static int timed_insert(struct hwt__rseq_ring *rings, unsigned n, const void *ents, uint32_t k,
			unsigned *cpu, uint32_t *prod)
{
	bool nt = k & HWT__RSEQ_K_NT;

	/* a retry after -EAGAIN has the call's flag again */
	flag_of[cur] = nt;
	if (nt == slow_nt) {
		uint64_t end = hwt__now_ns() + SLOW_NS;

		while (hwt__now_ns() < end)
			;
	}
	return hwt__rseq_insert(rings, n, ents, k, cpu, prod);
}

/* r up per CPU on the rseq path with the timed step, the caller on CPU 0;
 * skipped elsewhere. */
static struct mqrig *copy_rig_up(void)
{
	struct mqrig_opt opt = { .per_cpu = true, .cap = (uint64_t)CALLS * K + 1024 };
	struct mqrig *r = malloc(sizeof(*r));

	mqrig_need_cpus(2);
	ASSERT_TRUE(r);
	mqrig_up(r, &opt);
	if (!r->q->mq->rseq) {
		mqrig_down(r);
		free(r);
		SKIP("the per-CPU object is on the shared path here");
	}
	ASSERT_TRUE(mqrig_pin(0));
	hwt__cmdq_rseq_steps(r->q, timed_insert, NULL, NULL);
	memset(flag_of, -1, sizeof(flag_of));
	return r;
}

static void issue(struct mqrig *r, unsigned call, uint64_t *seq, unsigned n, bool sync)
{
	struct hwt_cmdq_cmd c[K + 1];

	cur = call;
	mqrig_cmds(r, 0, *seq, c, n);
	ASSERT_OK(hwt_cmdq_issue(r->q, c, n, sync));
	*seq += n;
}

static void copy_rig_down(struct mqrig *r)
{
	ASSERT_FALSE(mqrig_violation(r));
	mqrig_down(r);
	free(r);
}

/* Calls [from, to) took the non-temporal copy (nt) or the cached one. */
static void flags_are(unsigned from, unsigned to, bool nt)
{
	for (unsigned i = from; i < to; i++)
		if (flag_of[i] != nt)
			hwt_test_fail(__FILE__, __LINE__, "call %u: %s, expected the %s copy", i,
				      flag_of[i] < 0 ? "no insertion" : flag_of[i] ? "non-temporal" : "cached",
				      nt ? "non-temporal" : "cached");
}

TEST_TIMEOUT(large_calls_take_the_faster_copy, 60)
{
	struct mqrig *r = copy_rig_up();
	uint64_t seq = 0;

	if (!HWT__RSEQ_HAVE_NT) {
		for (unsigned i = 0; i < 2 * 64; i++)
			issue(r, i, &seq, K, false);
		flags_are(0, 2 * 64, false);
		copy_rig_down(r);
		SKIP("no non-temporal copy on this architecture: every call was cached");
	}
	/* The first trial with the non-temporal copy slowed: cached after it. */
	slow_nt = true;
	for (unsigned i = 0; i < 1024; i++)
		issue(r, i, &seq, K, false);
	for (unsigned b = 0; b < 4; b++)
		flags_are(16 * b, 16 * b + 16, b & 1);
	flags_are(64, 1024, false);
	/* The cached copy slowed from here: the next trial turns to the other. */
	slow_nt = false;
	for (unsigned i = 1024; i < CALLS; i++)
		issue(r, i, &seq, K, false);
	flags_are(1024, 2048, false);
	for (unsigned b = 0; b < 4; b++)
		flags_are(2048 + 16 * b, 2048 + 16 * b + 16, b & 1);
	flags_are(2112, CALLS, true);
	ASSERT_OK(hwt_cmdq_sync(r->q));
	ASSERT_EQ_U64(atomic_load_explicit(&r->executed[0], memory_order_relaxed), seq);
	copy_rig_down(r);
}

/* Smaller calls and calls that end in a CMD_SYNC are cached and never
 * counted: the trial's first call is still a cached one after them. */
TEST(small_and_synced_calls_stay_cached)
{
	struct mqrig *r = copy_rig_up();
	uint64_t seq = 0;

	slow_nt = false;
	issue(r, 0, &seq, K - 1, false);
	issue(r, 1, &seq, K, true);
	issue(r, 2, &seq, 1, false);
	flags_are(0, 3, false);
	for (unsigned i = 3; i < 3 + 17; i++)
		issue(r, i, &seq, K, false);
	flags_are(3, 3 + 16, false);
	flags_are(3 + 16, 3 + 17, HWT__RSEQ_HAVE_NT);
	copy_rig_down(r);
}
