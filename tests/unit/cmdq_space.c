/* SPDX-License-Identifier: MIT */
/*
 * The space sleepers of the shared path (src/cmdq/cmdq.c, "Space waits"):
 * a woken sleeper that cannot fit hands the wake on to a smaller one that
 * would, by ending the generation and waking every sleeper
 * (tests/model/space.pml checks the protocol; this drives the code).
 */
#include "harness/harness.h"
#include "harness/cmds.h"
#include "harness/rig.h"
#include <hwtune/hwtune.h>
#include <hwtune/smmu_model.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <stdatomic.h>
#include "cmdq/impl.h"
#include "common/time.h"

struct call {
	struct hwt_cmdq *q;
	struct hwt_cmdq_cmd *cmds;
	uint32_t n;
	bool sync;
	int result;
};

static void *run_call(void *arg)
{
	struct call *c = arg;

	c->result = c->n ? hwt_cmdq_issue(c->q, c->cmds, c->n, c->sync) : hwt_cmdq_sync(c->q);
	return NULL;
}

static void wait_executed(struct hwt_smmu_dev *dev, uint64_t n)
{
	for (int i = 0; i < 5000; i++) { /* bounded: 5 s */
		struct hwt_smmu_dev_stats st;

		hwt_smmu_dev_get_stats(dev, &st);
		if (st.cmds >= n)
			return;
		hwt__sleep_ns(1000000);
	}
	ASSERT_TRUE(!"the device executed the commands");
}

/* A queue of 2^7 with timeout_ns timeout: 50 commands executed, the device
 * paused, 50 more in (prod 100, shadow cons 0: 27 free); cmds[100] filled. */
static void paused_at_100(struct rig *r, bool disable_msi, uint64_t timeout_ns,
			  struct hwt_cmdq_cmd *cmds)
{
	rig_up(r, ALL_FEATURES, disable_msi, 7, timeout_ns);
	for (int i = 0; i < 100; i++)
		tst_cmd_cfgi_ste(cmds[i].dw, (uint32_t)i);
	ASSERT_OK(hwt_cmdq_issue(r->q, cmds, 50, false));
	wait_executed(r->dev, 50);
	ASSERT_OK(hwt_smmu_dev_pause(r->dev));
	ASSERT_OK(hwt_cmdq_issue(r->q, cmds, 50, false));
}

/* cmdq.c's layouts: llq's waiter count, space_evt's KMIN field. */
#define LLQ_WAITERS (0xfffull << 52)
#define SPACE_KMIN 0xfffu

/* Bounded (5 s): until somebody is registered in llq, or (kmin) until a
 * space sleeper of k <= kmin announced itself in space_evt. */
static void wait_for(struct hwt_cmdq *q, uint32_t kmin)
{
	for (int i = 0; i < 50000; i++) {
		uint32_t e = atomic_load_explicit(&q->space_evt, memory_order_relaxed) & SPACE_KMIN;
		uint64_t v = atomic_load_explicit(&q->llq, memory_order_relaxed);

		if (kmin ? e && e <= kmin : !!(v & LLQ_WAITERS))
			return;
		hwt__sleep_ns(100000);
	}
	ASSERT_TRUE(!"W registered, B announced");
}

/*
 * One round, a queue of 128.  The device executes 50 commands and pauses;
 * 50 more are queued (the shadow cons still 0).  W's CMD_SYNC (slot 100)
 * registers and freezes the shadow: 27 free.  B (100 commands) and S (30)
 * sleep.  W times out and leaves with CONS 50: 77 free, room for S, not B.
 * Whichever the wake reaches first, B cannot fit and sees S's smaller k in
 * space_evt: B hands the wake on (S asleep: S runs now, not after its 10 ms
 * bound or device progress that B, now the refresher, would wait for), or
 * S went first and B's hand-on finds S's stale k (one futex_wake).  So
 * every round counts a hand-on; without them (HWT_CMDQ_BROKEN_NO_HANDON)
 * none.  S's call must succeed while the device is still paused.
 * Returns the round's hand-ons.
 */
static uint64_t handon_round(bool disable_msi)
{
	static struct hwt_cmdq_cmd cmds[100];
	struct call w = { 0 }, b = { 0 }, s = { 0 };
	pthread_t tw, tb, ts;
	uint64_t h0, h;
	struct rig r;

	/* 300 ms: W's timeout, and the pauses below, times the harness's scale:
	 * under an emulator S must still be asleep when W gives up */
	const uint64_t scale = (uint64_t)hwt_test_scale();

	paused_at_100(&r, disable_msi, 300000000 * scale, cmds);
	w = (struct call){ .q = r.q };
	b = (struct call){ .q = r.q, .cmds = cmds, .n = 100 };
	s = (struct call){ .q = r.q, .cmds = cmds, .n = 30 };
	h0 = atomic_load_explicit(&r.q->space_handons, memory_order_relaxed);
	ASSERT_EQ(pthread_create(&tw, NULL, run_call, &w), 0);
	/* W registered (27 free), then 150 ms: B's and S's deadlines come
	 * that much after W's, which ends the wait (the hand-on chain then
	 * has 150 ms, even on a loaded machine) */
	wait_for(r.q, 0);
	hwt__sleep_ns(150000000 * scale);
	ASSERT_EQ(pthread_create(&tb, NULL, run_call, &b), 0);
	wait_for(r.q, SPACE_KMIN); /* B's Z1 */
	hwt__sleep_ns(5000000 * scale); /* B asleep */
	ASSERT_EQ(pthread_create(&ts, NULL, run_call, &s), 0);
	pthread_join(ts, NULL); /* after W's timeout: bounded by S's own */
	ASSERT_EQ(s.result, 0);
	h = atomic_load_explicit(&r.q->space_handons, memory_order_relaxed) - h0;
	ASSERT_OK(hwt_smmu_dev_resume(r.dev));
	pthread_join(tb, NULL);
	pthread_join(tw, NULL);
	ASSERT_EQ(w.result, -ETIMEDOUT);
	/* B's deadline is 150 ms after W's: it may pass before the resume */
	ASSERT_TRUE(b.result == 0 || b.result == -ETIMEDOUT);
	ASSERT_OK(hwt_cmdq_sync(r.q));
	TLOG("%s: %llu hand-on%s, B %d", disable_msi ? "CONS" : "MSI", (unsigned long long)h,
	     h == 1 ? "" : "s", b.result);
	rig_down(&r);
	return h;
}

/* Rounds until one counts a hand-on, at most 12: a round counts none only
 * if the last leave found neither asleep (both between two 10 ms sleeps, a
 * window of microseconds natively; under qemu-user for riscv64 about half
 * the CONS rounds count none, and 3 in a row once failed a CI run).
 * Without the hand-on every round counts none. */
static void woken_big_sleeper_hands_on(bool disable_msi)
{
	uint64_t h = 0;

	for (int i = 0; i < 12 && !h; i++)
		h += handon_round(disable_msi);
	ASSERT_GE(h, 1);
}

TEST_TIMEOUT(woken_big_sleeper_hands_on_to_a_smaller_one_msi, 20)
{
	woken_big_sleeper_hands_on(false);
}

TEST_TIMEOUT(woken_big_sleeper_hands_on_to_a_smaller_one_cons, 20)
{
	woken_big_sleeper_hands_on(true);
}

/*
 * A wake-one hand-on missed a small sleeper queued behind big ones that had
 * already handed on (space.pml's "wake-one hand-on"); the kernel wakes
 * real-time sleepers first, so three real-time big sleepers make that the
 * common case, not a race.  The round of handon_round, with B1..B3 (100
 * commands each, SCHED_FIFO) and S (30): W leaves with room for S only; the
 * wake goes to a B, which hands on and becomes the refresher (the device is
 * paused).  With the wake-one hand-on the next B woke the third and went
 * back to sleep ahead of S, the third's hand-on woke it again, and S slept
 * until its 10 ms bound: q->space_late counted it.  Ending the generation
 * wakes S with the rest.  Returns S's late fits (0 or 1), or -1 without
 * the permission for SCHED_FIFO.
 */
static int rt_round(bool disable_msi)
{
	static struct hwt_cmdq_cmd cmds[100];
	struct call w = { 0 }, b[3] = { { 0 } }, s = { 0 };
	struct sched_param sp = { .sched_priority = 1 };
	pthread_t tw, tb[3], ts;
	pthread_attr_t rt;
	uint64_t l0, late;
	struct rig r;
	int err = 0;

	const uint64_t scale = (uint64_t)hwt_test_scale();

	ASSERT_EQ(pthread_attr_init(&rt), 0);
	ASSERT_EQ(pthread_attr_setinheritsched(&rt, PTHREAD_EXPLICIT_SCHED), 0);
	ASSERT_EQ(pthread_attr_setschedpolicy(&rt, SCHED_FIFO), 0);
	ASSERT_EQ(pthread_attr_setschedparam(&rt, &sp), 0);
	paused_at_100(&r, disable_msi, 300000000 * scale, cmds);
	w = (struct call){ .q = r.q };
	s = (struct call){ .q = r.q, .cmds = cmds, .n = 30 };
	ASSERT_EQ(pthread_create(&tw, NULL, run_call, &w), 0);
	wait_for(r.q, 0);
	hwt__sleep_ns(150000000 * scale); /* as in handon_round */
	for (int i = 0; i < 3 && !err; i++) {
		b[i] = (struct call){ .q = r.q, .cmds = cmds, .n = 100 };
		err = pthread_create(&tb[i], &rt, run_call, &b[i]);
		if (err) {
			ASSERT_EQ(err, EPERM);
			while (i--)
				pthread_join(tb[i], NULL); /* W's timeout ends theirs */
		}
	}
	pthread_attr_destroy(&rt);
	if (err) {
		pthread_join(tw, NULL);
		ASSERT_OK(hwt_smmu_dev_resume(r.dev));
		rig_down(&r);
		return -1;
	}
	wait_for(r.q, SPACE_KMIN); /* a B's Z1 */
	hwt__sleep_ns(5000000 * scale); /* the Bs asleep */
	l0 = atomic_load_explicit(&r.q->space_late, memory_order_relaxed);
	/* S sleeps until W's timeout (not waited for: a loaded machine may
	 * bring W's timeout first, then S fits at once, late 0) */
	ASSERT_EQ(pthread_create(&ts, NULL, run_call, &s), 0);
	pthread_join(ts, NULL); /* after W's timeout: bounded by S's own */
	ASSERT_EQ(s.result, 0);
	/* nobody else fits before the resume: the Bs need the device */
	late = atomic_load_explicit(&r.q->space_late, memory_order_relaxed) - l0;
	ASSERT_OK(hwt_smmu_dev_resume(r.dev));
	for (int i = 0; i < 3; i++) {
		pthread_join(tb[i], NULL);
		ASSERT_TRUE(b[i].result == 0 || b[i].result == -ETIMEDOUT);
	}
	pthread_join(tw, NULL);
	ASSERT_EQ(w.result, -ETIMEDOUT);
	ASSERT_OK(hwt_cmdq_sync(r.q));
	TLOG("%s: S %s", disable_msi ? "CONS" : "MSI", late ? "woken by its bound" : "woken");
	rig_down(&r);
	return (int)late;
}

/* Four rounds: S may meet its own bound by chance (the wake-all within
 * microseconds of it) once; the wake-one hand-on missed it in most. */
static void small_sleeper_behind_realtime_ones(bool disable_msi)
{
	int late = 0;

	/* S's 10 ms sleep bound is the library's, not scaled: where timeouts
	 * are (an emulator), a wake chain can take about as long. */
	if (hwt_test_scale() > 3)
		SKIP("timeouts scaled by %g (an emulator): the 10 ms bound is too close", hwt_test_scale());
	for (int i = 0; i < 4; i++) {
		int l = rt_round(disable_msi);

		if (l < 0)
			SKIP("SCHED_FIFO not permitted: %s", strerror(EPERM));
		late += l;
	}
	ASSERT_LE(late, 1);
}

TEST_TIMEOUT(small_sleeper_behind_realtime_big_ones_is_woken_msi, 30)
{
	small_sleeper_behind_realtime_ones(false);
}

TEST_TIMEOUT(small_sleeper_behind_realtime_big_ones_is_woken_cons, 30)
{
	small_sleeper_behind_realtime_ones(true);
}
