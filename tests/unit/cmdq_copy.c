/* SPDX-License-Identifier: MIT */
/*
 * The rseq path's copy of large calls nobody waits on (src/cmdq/percpu.c,
 * nt_pick): every 2048 such calls of a thread, a trial of 64 alternates the
 * cached and the non-temporal copy in blocks of 16, and the faster one
 * takes the calls up to the next trial.  Here the insertion step spins
 * before the section for one copy, which makes the other the faster, and
 * notes each call's flag; the rig's executor checks exactly once.  The
 * queue holds a whole trial (2^13 entries) and a sync precedes each trial,
 * so no timed call waits for room: the device's pace (slow under TSan)
 * does not blur the spin.
 */
#include "harness/harness.h"
#include "harness/mqrig.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "arch/rseq.h"
#include "cmdq/impl.h"
#include "common/time.h"

#define K HWT__RSEQ_NT_MIN
#define PERIOD HWT__NT_PERIOD
#define BLOCK HWT__NT_BLOCK
#define TRIAL HWT__NT_TRIAL
#define CALLS (2 * PERIOD + TRIAL + 16)
#define SLOW_NS 20000

enum slow { SLOW_NONE, SLOW_CACHED, SLOW_NT };

/* Per thread: the test's call number, each call's copy (-1: no insertion
 * seen), the copy the step slows. */
static _Thread_local unsigned cur;
static _Thread_local signed char flag_of[CALLS];
static _Thread_local enum slow slow;

static int timed_insert(struct hwt__rseq_ring *rings, unsigned n, const void *ents, uint32_t k,
			unsigned *cpu, uint32_t *prod)
{
	bool nt = k & HWT__RSEQ_K_NT;

	/* a retry after -EAGAIN has the call's flag again; a sync's
	 * insertion is no call of the test's */
	if (cur < CALLS)
		flag_of[cur] = nt;
	if (slow == (nt ? SLOW_NT : SLOW_CACHED)) {
		uint64_t end = hwt__now_ns() + SLOW_NS;

		while (hwt__now_ns() < end)
			;
	}
	return hwt__rseq_insert(rings, n, ents, k, cpu, prod);
}

/* A rig per CPU on the rseq path with the timed step, the caller on CPU
 * 0; skipped elsewhere. */
static struct mqrig *copy_rig_up(void)
{
	struct mqrig_opt opt = { .per_cpu = true, .shift = 13, .cap = (uint64_t)CALLS * K + 1024 };
	struct mqrig *r = malloc(sizeof(*r));

	mqrig_up_rseq(r, &opt);
	hwt__cmdq_rseq_steps(r->q, timed_insert, NULL, NULL);
	return r;
}

static void copy_rig_down(struct mqrig *r)
{
	ASSERT_FALSE(mqrig_violation(r));
	mqrig_down(r);
	free(r);
}

/* Producer 0's sequence numbers, shared by the test's threads one after
 * the other (each joined before the next starts). */
static uint64_t seq;

static void issue(struct mqrig *r, unsigned call, unsigned n, bool sync)
{
	struct hwt_cmdq_cmd c[2 * K];

	cur = call;
	mqrig_cmds(r, 0, seq, c, n);
	ASSERT_OK(hwt_cmdq_issue(r->q, c, n, sync));
	seq += n;
}

/* A sync, its insertion noted as no call of the test's. */
static void sync_here(struct mqrig *r)
{
	cur = CALLS;
	ASSERT_OK(hwt_cmdq_sync(r->q));
}

/* Calls [from, to) of K commands, each trial after a sync. */
static void calls(struct mqrig *r, unsigned from, unsigned to)
{
	for (unsigned i = from; i < to; i++) {
		if (i % PERIOD == 0)
			sync_here(r);
		issue(r, i, K, false);
	}
}

static const char *copy_name(int flag)
{
	return flag < 0 ? "no insertion" : flag ? "the non-temporal copy" : "the cached copy";
}

/* Calls [from, to) took the non-temporal copy (nt) or the cached one. */
static void flags_are(unsigned from, unsigned to, bool nt)
{
	for (unsigned i = from; i < to; i++)
		if (flag_of[i] != nt)
			hwt_test_fail(__FILE__, __LINE__, "call %u: %s, expected %s", i,
				      copy_name(flag_of[i]), copy_name(nt));
}

/* The trial starting at call t alternated the copies, cached first. */
static void trial_at(unsigned t)
{
	for (unsigned b = 0; b < 4; b++)
		flags_are(t + BLOCK * b, t + BLOCK * b + BLOCK, b & 1);
}

TEST_TIMEOUT(large_calls_take_the_faster_copy, 60)
{
	struct mqrig *r;

	if (!HWT__RSEQ_HAVE_NT)
		SKIP("no non-temporal copy on this architecture (small_and_synced_calls_stay_cached "
		     "checks that no call takes it)");
	r = copy_rig_up();
	memset(flag_of, -1, sizeof(flag_of));
	/* First trial, the non-temporal copy slowed: cached after it. */
	slow = SLOW_NT;
	calls(r, 0, PERIOD / 2);
	trial_at(0);
	flags_are(TRIAL, PERIOD / 2, false);
	/* The cached copy slowed: the next trial turns to the other. */
	slow = SLOW_CACHED;
	calls(r, PERIOD / 2, PERIOD + TRIAL + 16);
	flags_are(PERIOD / 2, PERIOD, false);
	trial_at(PERIOD);
	flags_are(PERIOD + TRIAL, PERIOD + TRIAL + 16, true);
	/* The non-temporal copy slowed again: back to cached. */
	slow = SLOW_NT;
	calls(r, PERIOD + TRIAL + 16, CALLS);
	flags_are(PERIOD + TRIAL + 16, 2 * PERIOD, true);
	trial_at(2 * PERIOD);
	flags_are(2 * PERIOD + TRIAL, CALLS, false);
	sync_here(r);
	ASSERT_EQ_U64(atomic_load_explicit(&r->executed[0], memory_order_relaxed), seq);
	copy_rig_down(r);
}

/* Smaller calls and calls that end in a CMD_SYNC (one section, or the
 * split one of more than a batch) are cached and not counted: the trial's
 * first call after them is still a cached one. */
TEST(small_and_synced_calls_stay_cached)
{
	struct mqrig *r = copy_rig_up();

	memset(flag_of, -1, sizeof(flag_of));
	slow = SLOW_NONE;
	issue(r, 0, K - 1, false);
	issue(r, 1, K, true);
	issue(r, 2, 2 * K, true); /* split: its commands, then the CMD_SYNC */
	issue(r, 3, 1, false);
	flags_are(0, 4, false);
	for (unsigned i = 4; i < 4 + BLOCK + 1; i++)
		issue(r, i, K, false);
	flags_are(4, 4 + BLOCK, false);
	flags_are(4 + BLOCK, 4 + BLOCK + 1, HWT__RSEQ_HAVE_NT);
	sync_here(r);
	ASSERT_EQ_U64(atomic_load_explicit(&r->executed[0], memory_order_relaxed), seq);
	copy_rig_down(r);
}

/* --- a record taken over by another thread --------------------------------- */

struct run {
	struct mqrig *r;
	enum slow slow;
	unsigned n;
	signed char flags[TRIAL + 16];
};

static void *run_calls(void *arg)
{
	struct run *a = arg;

	memset(flag_of, -1, sizeof(flag_of));
	slow = a->slow;
	if (mqrig_pin(0)) {
		calls(a->r, 0, a->n);
		sync_here(a->r); /* what this thread queued */
	}
	memcpy(a->flags, flag_of, sizeof(a->flags));
	return NULL;
}

/* A thread that exits leaves its record in the object's pool; the next
 * thread takes it over with a trial of its own from its first call, not
 * the first thread's choice nor the rest of its count. */
TEST_TIMEOUT(a_record_taken_over_starts_a_trial, 30)
{
	struct mqrig *r;
	struct run a = { NULL, SLOW_CACHED, TRIAL + 16, { 0 } }, b = { NULL, SLOW_NONE, TRIAL, { 0 } };
	pthread_t th;

	if (!HWT__RSEQ_HAVE_NT)
		SKIP("no non-temporal copy on this architecture");
	a.r = b.r = r = copy_rig_up();
	ASSERT_EQ(pthread_create(&th, NULL, run_calls, &a), 0);
	ASSERT_EQ(pthread_join(th, NULL), 0);
	for (unsigned i = TRIAL; i < TRIAL + 16; i++)
		ASSERT_EQ(a.flags[i], 1); /* it chose the non-temporal copy */
	ASSERT_EQ(pthread_create(&th, NULL, run_calls, &b), 0);
	ASSERT_EQ(pthread_join(th, NULL), 0);
	for (unsigned i = 0; i < TRIAL; i++)
		ASSERT_EQ(b.flags[i], (i / BLOCK) & 1);
	ASSERT_EQ_U64(atomic_load_explicit(&r->executed[0], memory_order_relaxed), seq);
	copy_rig_down(r);
}
