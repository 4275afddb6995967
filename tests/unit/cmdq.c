/* SPDX-License-Identifier: MIT */
/* The command queue's driver side against the software SMMU: index
 * arithmetic, issue and sync in both modes, batches, invalidation
 * visibility, timeouts, device stop, command errors, the public API's
 * limits.  Auto mode and the log: cmdq_auto.c. */
#include "harness/harness.h"
#include "harness/cmds.h"
#include "harness/rig.h"

#include <hwtune/hwtune.h>
#include <hwtune/smmu_model.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bus/queue.h"
#include "common/ratelimit.h"
#include "common/time.h"

/* ---- pointer arithmetic -------------------------------------------------- */

TEST(queue_pointer_arithmetic_at_wrap)
{
	const unsigned n = 7; /* 128 entries */
	uint32_t wrap = 1u << n;

	ASSERT_EQ(hwt__q_inc(n, 127, 1), wrap | 0);          /* idx wraps, WRP flips */
	ASSERT_EQ(hwt__q_inc(n, wrap | 127, 1), 0);          /* and flips back */
	ASSERT_EQ(hwt__q_inc(n, HWT__Q_OWNED | 126, 3), HWT__Q_OWNED | wrap | 1); /* OWNED kept */
	ASSERT_EQ(hwt__q_inc(n, 5, 128), wrap | 5);          /* a whole lap */
	ASSERT_TRUE(hwt__q_full(n, wrap | 5, 5));
	ASSERT_FALSE(hwt__q_full(n, 5, 5));
	ASSERT_EQ(hwt__q_space(n, 5, 5), 128);
	ASSERT_EQ(hwt__q_space(n, wrap | 5, 5), 0);
	ASSERT_EQ(hwt__q_space(n, wrap | 2, 120), 118);      /* prod lapped to idx 2 */
	ASSERT_EQ(hwt__q_space(n, 127, 0), 1);
	ASSERT_TRUE(hwt__q_has_space(n, wrap | 2, 120, 118));
	ASSERT_FALSE(hwt__q_has_space(n, wrap | 2, 120, 119));
	/* consumed: cons past prod in the same lap, or not yet reached it
	 * again in the next */
	ASSERT_FALSE(hwt__q_consumed(n, 10, 10));
	ASSERT_TRUE(hwt__q_consumed(n, 11, 10));
	ASSERT_TRUE(hwt__q_consumed(n, wrap | 0, 127));
	ASSERT_TRUE(hwt__q_consumed(n, wrap | 10, 10));
	ASSERT_FALSE(hwt__q_consumed(n, wrap | 11, 10));
	ASSERT_FALSE(hwt__q_consumed(n, 127, wrap | 0));
}


/* ---- creation ----------------------------------------------------------------- */

/*
 * Sizes: a 64-entry queue is refused (a batch of 64 plus its CMD_SYNC must
 * fit), as is one beyond IDR1.CMDQS.  On the device's 256 entries, real
 * commands: n + sync > 256 is refused before anything is written (nothing
 * executes), exactly 256 is accepted.  A short deadline so that a queue
 * that accepted 257 would fail on its timeout, not hang.
 */
TEST(create_refuses_bad_sizes)
{
	static struct hwt_cmdq_cmd cmds[257];
	struct hwt_smmu_dev_config dc;
	struct hwt_smmu_dev_stats st;
	struct hwt_smmu_dev *dev;
	struct hwt_cmdq_options o;
	struct hwt_cmdq_info info;
	struct hwt_cmdq *q;

	hwt_smmu_dev_config_default(&dc);
	dc.cmdqs = 8;
	ASSERT_OK(hwt_smmu_dev_create(&dev, &dc));
	hwt_cmdq_options_default(&o);
	o.timeout_ns = 200000000;
	o.entries_log2 = 6; /* 64 entries: one batch + a sync would not fit */
	ASSERT_EQ(hwt_cmdq_create(&q, dev, &o), -EINVAL);
	o.entries_log2 = 9; /* beyond IDR1.CMDQS */
	ASSERT_EQ(hwt_cmdq_create(&q, dev, &o), -EINVAL);
	o.entries_log2 = 0; /* the device's CMDQS */
	ASSERT_OK(hwt_cmdq_create(&q, dev, &o));
	hwt_cmdq_get_info(q, &info);
	ASSERT_EQ(info.entries, 256);
	ASSERT_OK(hwt_smmu_dev_start(dev));
	for (unsigned i = 0; i < 257; i++)
		tst_cmd_cfgi_ste(cmds[i].dw, i);
	ASSERT_EQ(hwt_cmdq_issue(q, NULL, 1, false), -EINVAL);
	ASSERT_EQ(hwt_cmdq_issue(q, cmds, 256, true), -EINVAL);
	ASSERT_EQ(hwt_cmdq_issue(q, cmds, 257, false), -EINVAL);
	ASSERT_EQ(hwt_cmdq_issue(q, cmds, UINT_MAX, true), -EINVAL); /* n + 1 wraps to 0 */
	ASSERT_EQ(hwt_cmdq_issue(q, cmds, 0, false), 0);
	hwt_smmu_dev_get_stats(dev, &st);
	ASSERT_EQ(st.cmds, 0); /* refused calls wrote nothing */
	/* the largest that fits: a whole queue in one call */
	ASSERT_OK(hwt_cmdq_issue(q, cmds, 256, false));
	ASSERT_OK(hwt_cmdq_issue(q, cmds, 255, true));
	hwt_smmu_dev_get_stats(dev, &st);
	ASSERT_EQ(st.cmds, 256 + 255 + 1);
	ASSERT_EQ(st.errors, 0);
	hwt_smmu_dev_stop(dev);
	hwt_cmdq_destroy(q);
	hwt_smmu_dev_destroy(dev);
}

TEST(msipolling_follows_the_kernel_rule)
{
	static const struct {
		uint32_t idr0;
		bool disable, msi;
	} cases[] = {
		{ ALL_FEATURES, false, true },
		{ ALL_FEATURES, true, false },
		{ HWT_SMMU_IDR0_MSI | HWT_SMMU_IDR0_SEV, false, false },    /* no COHACC */
		{ HWT_SMMU_IDR0_COHACC | HWT_SMMU_IDR0_SEV, false, false }, /* no MSI */
		{ HWT_SMMU_IDR0_MSI | HWT_SMMU_IDR0_COHACC, false, true },  /* no SEV */
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hwt_cmdq_info info;
		struct rig r;

		rig_up(&r, cases[i].idr0, cases[i].disable, 8, 1000000000);
		hwt_cmdq_get_info(r.q, &info);
		ASSERT_EQ(info.msipolling, cases[i].msi);
		ASSERT_TRUE(info.reason[0]);
		ASSERT_OK(hwt_cmdq_sync(r.q));
		rig_down(&r);
	}
}

TEST(environment_disables_msipolling)
{
	struct hwt_cmdq_options o;
	const char *bad = NULL;
	bool v = false;

	setenv("HWTUNE_DISABLE_MSIPOLLING", "1", 1);
	hwt_cmdq_options_default(&o);
	ASSERT_FALSE(o.disable_msipolling); /* the defaults read no environment */
	ASSERT_EQ(hwt_cmdq_env_disable_msipolling(&v, &bad), 1);
	ASSERT_TRUE(v);
	setenv("HWTUNE_DISABLE_MSIPOLLING", "0", 1);
	ASSERT_EQ(hwt_cmdq_env_disable_msipolling(&v, &bad), 1);
	ASSERT_FALSE(v);
	/* set but empty is not 0 or 1 (as arm_smmu_v3.disable_msipolling=) */
	setenv("HWTUNE_DISABLE_MSIPOLLING", "", 1);
	ASSERT_EQ(hwt_cmdq_env_disable_msipolling(&v, &bad), -EINVAL);
	ASSERT_STR_EQ(bad, "");
	bad = NULL;
	setenv("HWTUNE_DISABLE_MSIPOLLING", "yes", 1);
	ASSERT_EQ(hwt_cmdq_env_disable_msipolling(&v, &bad), -EINVAL);
	ASSERT_STR_EQ(bad, "yes");
	unsetenv("HWTUNE_DISABLE_MSIPOLLING");
	ASSERT_EQ(hwt_cmdq_env_disable_msipolling(&v, NULL), 0);
}

/* ---- issue and sync --------------------------------------------------------------- */

static void issue_and_sync(uint32_t idr0, bool disable_msi)
{
	struct hwt_smmu_dev_stats st;
	struct hwt_cmdq_cmd c;
	struct rig r;

	rig_up(&r, idr0, disable_msi, 7, 1000000000);
	/* 1000 syncs alone, 1000 commands with and without syncs: many laps
	 * of a 128-entry queue */
	for (int i = 0; i < 1000; i++)
		ASSERT_OK(hwt_cmdq_sync(r.q));
	for (int i = 0; i < 1000; i++) {
		tst_cmd_cfgi_ste(c.dw, (uint32_t)i);
		ASSERT_OK(i % 3 ? hwt_cmdq_issue_cmd(r.q, &c) : hwt_cmdq_issue_cmd_sync(r.q, &c));
	}
	ASSERT_OK(hwt_cmdq_sync(r.q));
	hwt_smmu_dev_get_stats(r.dev, &st);
	ASSERT_EQ(st.cmds, 1000 + 1000 + 334 + 1);
	ASSERT_EQ(st.syncs, 1000 + 334 + 1);
	ASSERT_EQ(st.errors, 0);
	if (!disable_msi && (idr0 & HWT_SMMU_IDR0_MSI))
		ASSERT_EQ(st.msi_writes, st.syncs);
	else
		ASSERT_EQ(st.msi_writes, 0);
	rig_down(&r);
}

TEST(issue_and_sync_msi)
{
	issue_and_sync(ALL_FEATURES, false);
}

TEST(issue_and_sync_cons_polling)
{
	issue_and_sync(ALL_FEATURES, true);
}

TEST(issue_and_sync_cons_polling_without_sev)
{
	issue_and_sync(HWT_SMMU_IDR0_MSI | HWT_SMMU_IDR0_COHACC, true);
}

TEST(batch_flushes_at_64_and_syncs_on_submit)
{
	struct hwt_smmu_dev_stats st;
	struct hwt_cmdq_batch b;
	struct hwt_cmdq_cmd c;
	struct rig r;

	rig_up(&r, ALL_FEATURES, false, 8, 1000000000);
	hwt_cmdq_batch_init(&b, r.q);
	for (uint32_t i = 0; i < 130; i++) {
		tst_cmd_cfgi_ste(c.dw, i);
		ASSERT_OK(hwt_cmdq_batch_add(&b, &c));
	}
	ASSERT_EQ(b.num, 2); /* flushed twice without a sync */
	ASSERT_OK(hwt_cmdq_batch_submit(&b));
	hwt_smmu_dev_get_stats(r.dev, &st);
	ASSERT_EQ(st.cmds, 131);
	ASSERT_EQ(st.syncs, 1);
	rig_down(&r);
}

/* CMD_SYNC completed => every earlier invalidation took effect. */
static void invalidation_visible(bool disable_msi)
{
	struct rig r;
	struct hwt_cmdq_cmd c;

	rig_up(&r, ALL_FEATURES, disable_msi, 7, 1000000000);
	for (uint32_t i = 0; i < 300; i++) {
		struct hwt_smmu_tlb_entry e = { .kind = HWT_SMMU_TLB_NH, .vmid = 3,
						.asid = (uint16_t)(i % 7), .addr = 0x10000ull * i,
						.size_log2 = 12 };

		ASSERT_OK(hwt_smmu_dev_tlb_insert(r.dev, &e));
		ASSERT_OK(hwt_smmu_dev_cfg_insert(r.dev, HWT_SMMU_CFG_STE, i, 0));
		ASSERT_TRUE(hwt_smmu_dev_tlb_lookup(r.dev, HWT_SMMU_TLB_NH, 3, e.asid, e.addr));
		tst_cmd_tlbi_nh_va(c.dw, 3, e.asid, e.addr);
		ASSERT_OK(hwt_cmdq_issue_cmd(r.q, &c));
		tst_cmd_cfgi_ste(c.dw, i);
		ASSERT_OK(hwt_cmdq_issue_cmd_sync(r.q, &c));
		ASSERT_FALSE(hwt_smmu_dev_tlb_lookup(r.dev, HWT_SMMU_TLB_NH, 3, e.asid, e.addr));
		ASSERT_FALSE(hwt_smmu_dev_cfg_lookup(r.dev, HWT_SMMU_CFG_STE, i, 0));
	}
	rig_down(&r);
}

TEST(invalidation_visible_after_sync_msi)
{
	invalidation_visible(false);
}

TEST(invalidation_visible_after_sync_cons)
{
	invalidation_visible(true);
}

/* ---- timeouts and a stopped device ---------------------------------------------- */

static double ms_since(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1e3 + (b.tv_nsec - a->tv_nsec) / 1e6;
}

/* Resume a paused device: the queue drains and works again, over laps. */
static void resume_and_sync(struct rig *r)
{
	ASSERT_OK(hwt_smmu_dev_resume(r->dev));
	for (int i = 0; i < 300; i++)
		ASSERT_OK(hwt_cmdq_sync(r->q));
}

static void times_out(bool disable_msi)
{
	const uint64_t timeout = 200000000; /* 200 ms */
	struct timespec a;
	double ms;
	struct rig r;

	rig_up(&r, ALL_FEATURES, disable_msi, 7, timeout);
	ASSERT_OK(hwt_cmdq_sync(r.q));
	ASSERT_OK(hwt_smmu_dev_pause(r.dev));
	clock_gettime(CLOCK_MONOTONIC, &a);
	ASSERT_EQ(hwt_cmdq_sync(r.q), -ETIMEDOUT);
	ms = ms_since(&a);
	TLOG("timed out after %.1f ms (deadline 200 ms)", ms);
	ASSERT_TRUE(ms >= 200.0);
	ASSERT_TRUE(ms <= 220.0 * hwt_test_scale());
	ASSERT_TRUE(logged(&r.log, "CMD_SYNC timeout at 0x"));
	resume_and_sync(&r);
	rig_down(&r);
}

TEST(sync_times_out_when_device_paused_msi)
{
	times_out(false);
}

TEST(sync_times_out_when_device_paused_cons)
{
	times_out(true);
}

TEST(full_queue_times_out_when_device_paused)
{
	struct hwt_cmdq_cmd cmds[100];
	struct rig r;

	rig_up(&r, ALL_FEATURES, false, 7, 100000000);
	for (int i = 0; i < 100; i++)
		tst_cmd_cfgi_ste(cmds[i].dw, (uint32_t)i);
	ASSERT_OK(hwt_smmu_dev_pause(r.dev));
	ASSERT_OK(hwt_cmdq_issue(r.q, cmds, 100, false));
	ASSERT_EQ(hwt_cmdq_issue(r.q, cmds, 100, false), -ETIMEDOUT);
	ASSERT_TRUE(logged(&r.log, "CMDQ timeout"));
	ASSERT_OK(hwt_smmu_dev_resume(r.dev));
	ASSERT_OK(hwt_cmdq_issue(r.q, cmds, 100, true));
	rig_down(&r);
}

struct waiter {
	struct hwt_cmdq *q;
	int result;
};

static void *sync_forever(void *arg)
{
	struct waiter *w = arg;
	int err;

	while ((err = hwt_cmdq_sync(w->q)) == 0)
		;
	w->result = err;
	return NULL;
}

static void stop_wakes_waiters(bool disable_msi)
{
	struct waiter w[4];
	pthread_t t[4];
	struct rig r;

	/* deadline 30 s: the waiters must return because of the stop */
	rig_up(&r, ALL_FEATURES, disable_msi, 7, 30000000000ull);
	for (int i = 0; i < 4; i++) {
		w[i] = (struct waiter){ r.q, 0 };
		ASSERT_EQ(pthread_create(&t[i], NULL, sync_forever, &w[i]), 0);
	}
	hwt__sleep_ns(50000000);
	ASSERT_OK(hwt_smmu_dev_pause(r.dev)); /* waiters are now stuck in a wait */
	hwt__sleep_ns(20000000);
	ASSERT_OK(hwt_smmu_dev_stop(r.dev));
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		ASSERT_EQ(w[i].result, -ENODEV);
	}
	hwt_cmdq_destroy(r.q);
	hwt_smmu_dev_destroy(r.dev);
}

TEST(device_stop_wakes_waiters_msi)
{
	stop_wakes_waiters(false);
}

TEST(device_stop_wakes_waiters_cons)
{
	stop_wakes_waiters(true);
}

/* ---- command errors ---------------------------------------------------------------- */

static void command_errors(bool disable_msi)
{
	struct hwt_smmu_dev_stats st;
	struct hwt_cmdq_cmd c, bad = { { 0x7f, 0 } }; /* no such opcode */
	struct rig r;

	rig_up(&r, ALL_FEATURES, disable_msi, 7, 1000000000);

	/* ILL: the bad command is replaced by a CMD_SYNC, the rest executes */
	ASSERT_OK(hwt_smmu_dev_cfg_insert(r.dev, HWT_SMMU_CFG_STE, 5, 0));
	ASSERT_OK(hwt_cmdq_issue_cmd(r.q, &bad));
	tst_cmd_cfgi_ste(c.dw, 5);
	ASSERT_OK(hwt_cmdq_issue_cmd_sync(r.q, &c));
	ASSERT_FALSE(hwt_smmu_dev_cfg_lookup(r.dev, HWT_SMMU_CFG_STE, 5, 0));
	ASSERT_TRUE(logged(&r.log, "Illegal command"));
	ASSERT_TRUE(logged(&r.log, "skipping command in error state: 0x000000000000007f"));

	/* ABT: the fetch is retried */
	ASSERT_OK(hwt_smmu_dev_cfg_insert(r.dev, HWT_SMMU_CFG_STE, 6, 0));
	ASSERT_OK(hwt_smmu_dev_inject(r.dev, HWT_SMMU_FAULT_ABT));
	tst_cmd_cfgi_ste(c.dw, 6);
	ASSERT_OK(hwt_cmdq_issue_cmd_sync(r.q, &c));
	ASSERT_FALSE(hwt_smmu_dev_cfg_lookup(r.dev, HWT_SMMU_CFG_STE, 6, 0));
	ASSERT_TRUE(logged(&r.log, "Abort on command fetch"));
	ASSERT_TRUE(logged(&r.log, "retrying command fetch"));

	/* ATC_INV_SYNC: the sync is re-executed */
	ASSERT_OK(hwt_smmu_dev_atc_insert(r.dev, 9, HWT_SMMU_ATC_NO_SSID, 0x4000, 12));
	ASSERT_OK(hwt_smmu_dev_inject(r.dev, HWT_SMMU_FAULT_ATC_TIMEOUT));
	TST_ENC(c.dw, ATC_INV, TST_FV(SID, 9), TST_FV(SIZE, 52)); /* the whole ATC of SID 9 */
	ASSERT_OK(hwt_cmdq_issue_cmd_sync(r.q, &c));
	ASSERT_FALSE(hwt_smmu_dev_atc_lookup(r.dev, 9, HWT_SMMU_ATC_NO_SSID, 0x4000));
	ASSERT_TRUE(logged(&r.log, "ATC invalidate timeout"));

	hwt_smmu_dev_get_stats(r.dev, &st);
	ASSERT_EQ(st.errors, 3);
	for (int i = 0; i < 200; i++) /* still healthy, over laps */
		ASSERT_OK(hwt_cmdq_sync(r.q));
	rig_down(&r);
}

TEST(command_errors_msi)
{
	command_errors(false);
}

TEST(command_errors_cons)
{
	command_errors(true);
}

/* ---- the MSI slot, queues on one device, CAS retries --------------------------- */

static int slow_handler(void *ctx, const uint64_t dw[2])
{
	(void)ctx, (void)dw;
	hwt__sleep_ns(100000); /* at least 100 us a command */
	return HWT_SMMU_CERROR_NONE;
}

/*
 * A sync that timed out while the device was slow to write its MSI: the
 * late MSI must not land on a reused slot and complete a later sync early.
 */
TEST_TIMEOUT(late_msi_after_timeout_cannot_complete_a_later_sync, 30)
{
	struct hwt_smmu_dev_config dc;
	struct hwt_cmdq_options o;
	static struct hwt_cmdq_cmd cmds[127];
	struct hwt_smmu_dev *dev;
	struct logbuf log = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct hwt_cmdq *q;

	hwt_smmu_dev_config_default(&dc);
	dc.cmdqs = 7;
	dc.msi_cost_ns = 200000000; /* the MSI write comes 200 ms late */
	dc.handler = slow_handler;
	ASSERT_OK(hwt_smmu_dev_create(&dev, &dc));
	hwt_cmdq_options_default(&o);
	o.entries_log2 = 7;
	o.timeout_ns = 150000000;
	o.log = log_hook;
	o.log_ctx = &log;
	ASSERT_OK(hwt_cmdq_create(&q, dev, &o));
	ASSERT_OK(hwt_smmu_dev_start(dev));
	ASSERT_EQ(hwt_cmdq_sync(q), -ETIMEDOUT);
	ASSERT_TRUE(logged(&log, "CMD_SYNC timeout"));
	/* 127 commands + a sync: the sync lands in the abandoned sync's slot */
	for (int i = 0; i < 127; i++)
		cmds[i].dw[0] = 0x01 | (uint64_t)i << 32;
	/* Its own MSI comes 200 ms after the device reaches it (itself after
	 * 127 x 100 us), past its 150 ms deadline: it can only time out.
	 * Success would mean the first sync's late MSI completed it. */
	ASSERT_EQ(hwt_cmdq_issue(q, cmds, 127, true), -ETIMEDOUT);
	hwt_smmu_dev_stop(dev);
	hwt_cmdq_destroy(q);
	hwt_smmu_dev_destroy(dev);
}

/* A new queue on a device that already ran starts clean. */
TEST(second_queue_on_a_used_device)
{
	struct hwt_smmu_dev_stats st;
	struct rig r;

	rig_up(&r, ALL_FEATURES, false, 7, 1000000000);
	for (int i = 0; i < 5; i++)
		ASSERT_OK(hwt_cmdq_sync(r.q));
	ASSERT_EQ(hwt_cmdq_create(&(struct hwt_cmdq *){ NULL }, r.dev, NULL), -EBUSY);
	ASSERT_OK(hwt_smmu_dev_stop(r.dev));
	hwt_cmdq_destroy(r.q);
	ASSERT_OK(hwt_cmdq_create(&r.q, r.dev, NULL));
	ASSERT_OK(hwt_smmu_dev_start(r.dev));
	for (int i = 0; i < 300; i++)
		ASSERT_OK(hwt_cmdq_sync(r.q));
	hwt_smmu_dev_get_stats(r.dev, &st);
	ASSERT_EQ(st.errors, 0);
	ASSERT_FALSE(logged(&r.log, "error"));
	rig_down(&r);
}

/* destroy disables the queue (CR0.CMDQEN) and leaves the device running:
 * the next queue is enabled on the running device. */
TEST(destroy_on_a_running_device_disables_the_queue)
{
	struct hwt_smmu_dev_stats st;
	struct rig r;

	rig_up(&r, ALL_FEATURES, false, 7, 1000000000);
	ASSERT_OK(hwt_cmdq_sync(r.q));
	hwt_cmdq_destroy(r.q);
	r.q = NULL;
	ASSERT_EQ(hwt_smmu_dev_start(r.dev), -EBUSY); /* still running */
	ASSERT_OK(hwt_cmdq_create(&r.q, r.dev, NULL));
	ASSERT_OK(hwt_cmdq_sync(r.q));
	hwt_smmu_dev_get_stats(r.dev, &st);
	ASSERT_EQ(st.syncs, 2);
	rig_down(&r);
}

/* Queues come and go on one device without using up its DMA window. */
TEST(many_queues_on_one_device)
{
	struct hwt_smmu_dev_config dc;
	struct hwt_smmu_dev *dev;
	struct hwt_cmdq *q;

	hwt_smmu_dev_config_default(&dc);
	ASSERT_OK(hwt_smmu_dev_create(&dev, &dc));
	for (int i = 0; i < 40; i++) {
		ASSERT_OK(hwt_cmdq_create(&q, dev, NULL));
		ASSERT_OK(hwt_smmu_dev_start(dev));
		ASSERT_OK(hwt_cmdq_sync(q));
		ASSERT_OK(hwt_smmu_dev_stop(dev));
		hwt_cmdq_destroy(q);
	}
	hwt_smmu_dev_destroy(dev);
}

struct retry_run {
	struct hwt_cmdq *q;
	uint64_t retries;
	int err;
};

static void *issue_many(void *arg)
{
	struct retry_run *r = arg;
	struct hwt_cmdq_cmd c;
	uint64_t before = hwt_cmdq_thread_cas_retries();

	tst_cmd_cfgi_ste(c.dw, 1);
	for (int i = 0; i < 20000 && !r->err; i++)
		r->err = hwt_cmdq_issue(r->q, &c, 1, i % 64 == 63);
	if (!r->err)
		r->err = hwt_cmdq_sync(r->q);
	r->retries = hwt_cmdq_thread_cas_retries() - before;
	return NULL;
}

/*
 * hwt_cmdq_thread_cas_retries counts this thread's failed reservation CASes
 * only.  A producer alone never fails one on x86_64 (lock cmpxchg fails
 * only when the word changed, and nobody else writes it); on LL/SC
 * machines a weak CAS may fail spuriously, so there it is only bounded.
 * Two producers at once: logged, since contention depends on scheduling.
 */
TEST(cas_retries_count_this_threads_failed_reservations)
{
	struct retry_run a = { 0 }, b = { 0 };
	struct hwt_smmu_dev_config dc;
	struct hwt_smmu_dev *dev;
	pthread_t t;

	hwt_smmu_dev_config_default(&dc);
	ASSERT_OK(hwt_smmu_dev_create(&dev, &dc));
	ASSERT_OK(hwt_cmdq_create(&a.q, dev, NULL));
	ASSERT_OK(hwt_smmu_dev_start(dev));
	b.q = a.q;
	issue_many(&a);
	ASSERT_OK(a.err);
#if defined(__x86_64__)
	ASSERT_EQ(a.retries, 0);
#else
	ASSERT_TRUE(a.retries <= 20000);
#endif
	ASSERT_EQ(pthread_create(&t, NULL, issue_many, &b), 0);
	issue_many(&a);
	pthread_join(t, NULL);
	ASSERT_OK(a.err);
	ASSERT_OK(b.err);
	TLOG("two producers, 20000 calls each: %llu and %llu CAS retries",
	     (unsigned long long)a.retries, (unsigned long long)b.retries);
	ASSERT_OK(hwt_smmu_dev_stop(dev));
	hwt_cmdq_destroy(a.q);
	hwt_smmu_dev_destroy(dev);
}

/* ---- the public API's limits: timeouts, deadlines, batches ------------------------- */

/* One hwt_cmdq_sync on another thread; done says it returned. */
struct async_sync {
	struct hwt_cmdq *q;
	_Atomic int done;
	int result;
};

static void *sync_once(void *arg)
{
	struct async_sync *a = arg;

	a->result = hwt_cmdq_sync(a->q);
	atomic_store_explicit(&a->done, 1, memory_order_release); /* joined before result is read */
	return NULL;
}

/* timeout_ns 0 is refused: it would read as "do not wait" or as "wait
 * forever", and meant neither (it was taken as 1 s). */
TEST(timeout_zero_is_refused)
{
	struct hwt_smmu_dev_config dc;
	struct hwt_smmu_dev *dev;
	struct hwt_cmdq_options o;
	struct hwt_cmdq *q = NULL;

	hwt_smmu_dev_config_default(&dc);
	ASSERT_OK(hwt_smmu_dev_create(&dev, &dc));
	hwt_cmdq_options_default(&o);
	o.timeout_ns = 0;
	ASSERT_EQ(hwt_cmdq_create(&q, dev, &o), -EINVAL);
	ASSERT_TRUE(q == NULL);
	o.timeout_ns = 1;
	ASSERT_OK(hwt_cmdq_create(&q, dev, &o));
	hwt_cmdq_destroy(q);
	hwt_smmu_dev_destroy(dev);
}

/* UINT64_MAX and values near it saturate (no deadline) instead of wrapping
 * to a deadline in the past. */
TEST_TIMEOUT(huge_timeouts_saturate, 30)
{
	static const uint64_t huge[] = { UINT64_MAX, UINT64_MAX - 1, UINT64_MAX / 2 + 1 };
	struct hwt_smmu_dev_config dc;
	struct hwt_smmu_dev *dev;
	struct hwt_cmdq_options o;
	struct hwt_cmdq *q;

	hwt_smmu_dev_config_default(&dc);
	dc.handler = slow_handler; /* every sync below waits past its spin */
	ASSERT_OK(hwt_smmu_dev_create(&dev, &dc));
	hwt_cmdq_options_default(&o);
	for (unsigned k = 0; k < sizeof(huge) / sizeof(huge[0]); k++) {
		struct async_sync w = { 0 };
		struct hwt_cmdq_cmd c;
		pthread_t t;

		o.timeout_ns = huge[k];
		ASSERT_OK(hwt_cmdq_create(&q, dev, &o));
		ASSERT_OK(hwt_smmu_dev_start(dev));
		/* a running device: each of these waits milliseconds */
		tst_cmd_cfgi_ste(c.dw, 1);
		for (int i = 0; i < 5; i++)
			ASSERT_OK(hwt_cmdq_issue_cmd_sync(q, &c));
		/* a paused device: the sync is still waiting 100 ms later, and
		 * completes once the device resumes */
		ASSERT_OK(hwt_smmu_dev_pause(dev));
		w.q = q;
		ASSERT_EQ(pthread_create(&t, NULL, sync_once, &w), 0);
		hwt__sleep_ns(100000000);
		ASSERT_EQ(atomic_load_explicit(&w.done, memory_order_relaxed), 0);
		ASSERT_OK(hwt_smmu_dev_resume(dev));
		pthread_join(t, NULL);
		ASSERT_EQ(w.result, 0);
		ASSERT_OK(hwt_smmu_dev_stop(dev));
		hwt_cmdq_destroy(q);
	}
	hwt_smmu_dev_destroy(dev);
}

/*
 * One deadline per call.  The device consumed 100 commands and was paused;
 * a CMD_SYNC waiter W keeps the shadow cons frozen at 0, so a call of 100
 * commands + a sync waits for space until W times out and leaves (installing
 * CONS 100), then inserts and waits for its own sync.  Both waits count
 * against the one timeout_ns: the call returns -ETIMEDOUT within about 1x
 * (bound 1.5x), not after the space wait plus a whole second timeout.
 */
static void one_deadline_per_call(bool disable_msi)
{
	const uint64_t timeout = 200000000; /* 200 ms */
	static struct hwt_cmdq_cmd cmds[100];
	struct async_sync w = { 0 };
	struct timespec a;
	pthread_t t;
	double ms;
	struct rig r;

	rig_up(&r, ALL_FEATURES, disable_msi, 7, timeout);
	for (int i = 0; i < 100; i++)
		tst_cmd_cfgi_ste(cmds[i].dw, (uint32_t)i);
	ASSERT_OK(hwt_cmdq_issue(r.q, cmds, 100, false));
	/* wait (bounded) until the device has executed them: CONS = 100 */
	for (int i = 0; i < 5000; i++) {
		struct hwt_smmu_dev_stats st;

		hwt_smmu_dev_get_stats(r.dev, &st);
		if (st.cmds == 100)
			break;
		hwt__sleep_ns(1000000);
	}
	ASSERT_OK(hwt_smmu_dev_pause(r.dev));
	w.q = r.q;
	ASSERT_EQ(pthread_create(&t, NULL, sync_once, &w), 0);
	hwt__sleep_ns(20000000); /* W is registered and waiting */
	clock_gettime(CLOCK_MONOTONIC, &a);
	ASSERT_EQ(hwt_cmdq_issue(r.q, cmds, 100, true), -ETIMEDOUT);
	ms = ms_since(&a);
	pthread_join(t, NULL);
	TLOG("space wait + sync wait returned after %.1f ms (timeout 200 ms)", ms);
	ASSERT_EQ(w.result, -ETIMEDOUT);
	ASSERT_TRUE(ms >= 200.0);
	ASSERT_TRUE(ms <= 300.0 * hwt_test_scale());
	resume_and_sync(&r);
	rig_down(&r);
}

TEST(one_deadline_per_call_msi)
{
	one_deadline_per_call(false);
}

TEST(one_deadline_per_call_cons)
{
	one_deadline_per_call(true);
}

/*
 * What a failed flush leaves behind.  The device is paused with 100 of its
 * 128 entries taken: the flush of a full batch (64) cannot get space and
 * inserts nothing, so add returns -ETIMEDOUT, keeps the 64 and does not add
 * the new command; after a resume the same add succeeds and every command
 * executes exactly once.  submit keeps its commands the same way.
 */
TEST(batch_failed_flush_keeps_the_batch)
{
	static struct hwt_cmdq_cmd fill[100];
	struct hwt_smmu_dev_stats st;
	struct hwt_cmdq_batch b;
	struct hwt_cmdq_cmd c;
	uint64_t last[2];
	struct rig r;

	rig_up(&r, ALL_FEATURES, false, 7, 50000000);
	for (int i = 0; i < 100; i++)
		tst_cmd_cfgi_ste(fill[i].dw, (uint32_t)i);
	ASSERT_OK(hwt_smmu_dev_pause(r.dev));
	ASSERT_OK(hwt_cmdq_issue(r.q, fill, 100, false));
	hwt_cmdq_batch_init(&b, r.q);
	for (uint32_t i = 0; i < 64; i++) {
		tst_cmd_cfgi_ste(c.dw, 1000 + i);
		ASSERT_OK(hwt_cmdq_batch_add(&b, &c));
	}
	tst_cmd_cfgi_ste(c.dw, 2000);
	ASSERT_EQ(hwt_cmdq_batch_add(&b, &c), -ETIMEDOUT);
	ASSERT_EQ(b.num, 64); /* nothing inserted: all kept, c not added */
	tst_cmd_cfgi_ste(last, 1063);
	ASSERT_EQ_U64(b.cmds[63].dw[0], last[0]);
	ASSERT_OK(hwt_smmu_dev_resume(r.dev));
	ASSERT_OK(hwt_cmdq_batch_add(&b, &c));
	ASSERT_EQ(b.num, 1);
	/* submit: 100 more fill the queue again; the submit's space wait fails */
	ASSERT_OK(hwt_cmdq_sync(r.q));
	ASSERT_OK(hwt_smmu_dev_pause(r.dev));
	ASSERT_OK(hwt_cmdq_issue(r.q, fill, 100, false));
	for (uint32_t i = 0; i < 40; i++) {
		tst_cmd_cfgi_ste(c.dw, 3000 + i);
		ASSERT_OK(hwt_cmdq_batch_add(&b, &c));
	}
	ASSERT_EQ(hwt_cmdq_batch_submit(&b), -ETIMEDOUT);
	ASSERT_EQ(b.num, 41);
	ASSERT_OK(hwt_smmu_dev_resume(r.dev));
	ASSERT_OK(hwt_cmdq_batch_submit(&b));
	ASSERT_EQ(b.num, 0);
	hwt_smmu_dev_get_stats(r.dev, &st);
	/* 100 + 64 + a sync + 100 + 41 (command 2000 and 40) + the submit's sync */
	ASSERT_EQ(st.cmds, 100 + 64 + 1 + 100 + 41 + 1);
	rig_down(&r);
}

/*
 * With the MMU-700 quirk a flush at 63 carries a CMD_SYNC: when only the
 * sync fails, the 63 commands are in the queue (they execute once the
 * device resumes), so the batch drops them (b->num 0) and, as for any
 * failed add, does not add the new command.
 */
TEST(batch_failed_quirk_sync_empties_the_batch)
{
	struct hwt_smmu_dev_config dc;
	struct hwt_smmu_dev_stats st;
	struct hwt_cmdq_options o;
	struct hwt_smmu_dev *dev;
	struct hwt_cmdq_batch b;
	struct hwt_cmdq_cmd c;
	struct logbuf log = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct hwt_cmdq *q;

	hwt_smmu_dev_config_default(&dc);
	ASSERT_OK(hwt_smmu_dev_create(&dev, &dc));
	hwt_cmdq_options_default(&o);
	o.entries_log2 = 7;
	o.force_sync_at_63 = true;
	o.timeout_ns = 50000000;
	o.log = log_hook;
	o.log_ctx = &log;
	ASSERT_OK(hwt_cmdq_create(&q, dev, &o));
	ASSERT_OK(hwt_smmu_dev_start(dev));
	ASSERT_OK(hwt_smmu_dev_pause(dev));
	hwt_cmdq_batch_init(&b, q);
	for (uint32_t i = 0; i < 63; i++) {
		tst_cmd_cfgi_ste(c.dw, i);
		ASSERT_OK(hwt_cmdq_batch_add(&b, &c));
	}
	tst_cmd_cfgi_ste(c.dw, 63);
	ASSERT_EQ(hwt_cmdq_batch_add(&b, &c), -ETIMEDOUT);
	ASSERT_EQ(b.num, 0); /* inserted (sync not complete): not kept */
	ASSERT_OK(hwt_smmu_dev_resume(dev));
	ASSERT_OK(hwt_cmdq_batch_add(&b, &c));
	ASSERT_OK(hwt_cmdq_batch_submit(&b));
	hwt_smmu_dev_get_stats(dev, &st);
	ASSERT_EQ(st.cmds, 63 + 1 + 1 + 1); /* each command once, two syncs */
	hwt_smmu_dev_stop(dev);
	hwt_cmdq_destroy(q);
	hwt_smmu_dev_destroy(dev);
}

TEST(device_destroyed_before_its_queue)
{
	struct hwt_cmdq_cmd c;
	struct rig r;

	rig_up(&r, ALL_FEATURES, false, 7, 100000000);
	ASSERT_OK(hwt_cmdq_sync(r.q));
	hwt_smmu_dev_destroy(r.dev);
	ASSERT_EQ(hwt_cmdq_sync(r.q), -ENODEV);
	tst_cmd_cfgi_ste(c.dw, 1);
	ASSERT_EQ(hwt_cmdq_issue_cmd_sync(r.q, &c), -ENODEV);
	hwt_cmdq_destroy(r.q);
}


struct space_waiter {
	struct hwt_cmdq *q;
	struct hwt_cmdq_cmd cmds[78];
	int result;
};

static void *issue_78(void *arg)
{
	struct space_waiter *w = arg;

	w->result = hwt_cmdq_issue(w->q, w->cmds, 78, false);
	return NULL;
}

/* A device destroyed under a call waiting for space: -ENODEV, and the log
 * says why (not "timeout": the 30 s deadline is far away). */
TEST(device_destroyed_during_a_full_queue_wait_is_logged_as_such)
{
	static struct space_waiter w;
	struct hwt_cmdq_cmd cmds[100];
	pthread_t t;
	struct rig r;

	rig_up(&r, ALL_FEATURES, false, 7, 30000000000ull);
	for (int i = 0; i < 100; i++)
		tst_cmd_cfgi_ste(cmds[i].dw, (uint32_t)i);
	for (int i = 0; i < 78; i++)
		tst_cmd_cfgi_ste(w.cmds[i].dw, (uint32_t)i);
	w.q = r.q;
	ASSERT_OK(hwt_smmu_dev_pause(r.dev));
	ASSERT_OK(hwt_cmdq_issue(r.q, cmds, 100, false)); /* 100 of 128: no room for 78 */
	ASSERT_EQ(pthread_create(&t, NULL, issue_78, &w), 0);
	hwt__sleep_ns(50000000);
	hwt_smmu_dev_destroy(r.dev);
	pthread_join(t, NULL);
	ASSERT_EQ(w.result, -ENODEV);
	TLOG("%s", r.log.text);
	ASSERT_TRUE(logged(&r.log, "device stopped or destroyed: no space for 78 entries"));
	ASSERT_FALSE(logged(&r.log, "timeout"));
	hwt_cmdq_destroy(r.q);
}

/* -ENODEV from a device that never started says "not started"; once it
 * ran and stopped, "stopped". */
TEST(sync_on_a_device_never_started_is_logged_as_such)
{
	struct logbuf log = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct hwt_smmu_dev_config dc;
	struct hwt_cmdq_options o;
	struct hwt_smmu_dev *dev;
	struct hwt_cmdq *q;

	hwt_smmu_dev_config_default(&dc);
	ASSERT_OK(hwt_smmu_dev_create(&dev, &dc));
	hwt_cmdq_options_default(&o);
	o.log = log_hook;
	o.log_ctx = &log;
	ASSERT_OK(hwt_cmdq_create(&q, dev, &o));
	ASSERT_EQ(hwt_cmdq_sync(q), -ENODEV);
	TLOG("%s", log.text);
	ASSERT_TRUE(logged(&log, "CMD_SYNC aborted, device not started (it never acted on the "
				 "queue's enable) at 0x0"));
	ASSERT_FALSE(logged(&log, "stopped"));
	ASSERT_OK(hwt_smmu_dev_start(dev));
	ASSERT_OK(hwt_cmdq_sync(q));
	ASSERT_OK(hwt_smmu_dev_stop(dev));
	ASSERT_EQ(hwt_cmdq_sync(q), -ENODEV);
	ASSERT_TRUE(logged(&log, "CMD_SYNC aborted, device stopped or destroyed at 0x"));
	hwt_cmdq_destroy(q);
	hwt_smmu_dev_destroy(dev);
}
