/* SPDX-License-Identifier: MIT */
/* The command queue's auto mode (measure on first use, failed and retried
 * measurements, explicit calibration) and its log (rate limit).  The rest
 * of the driver side: cmdq.c. */
#include "harness/harness.h"
#include "harness/cmds.h"
#include "harness/rig.h"

#include <hwtune/hwtune.h>
#include <hwtune/smmu_model.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/ratelimit.h"
#include "common/time.h"

/* ---- auto mode ---------------------------------------------------------------------- */

/* The queue's info after its first successful use: both modes measured. */
static void measured(struct hwt_cmdq *q, struct hwt_cmdq_info *info)
{
	hwt_cmdq_get_info(q, info);
	TLOG("%s", info->reason);
	ASSERT_TRUE(info->measured);
	ASSERT_GT(info->msi_ns, 0);
	ASSERT_GT(info->sev_ns, 0);
}

/* A measured queue keeps working (100 syncs); then the device stops. */
static void syncs_then_stop(struct hwt_smmu_dev *dev, struct hwt_cmdq *q)
{
	for (int i = 0; i < 100; i++)
		ASSERT_OK(hwt_cmdq_sync(q));
	hwt_smmu_dev_stop(dev);
}

TEST_TIMEOUT(auto_mode_measures_on_first_use, 60)
{
	struct hwt_smmu_dev_config dc;
	struct hwt_cmdq_options o;
	struct hwt_cmdq_info info;
	struct hwt_smmu_dev *dev;
	struct hwt_cmdq *q;

	hwt_smmu_dev_config_default(&dc);
	ASSERT_OK(hwt_smmu_dev_create(&dev, &dc));
	hwt_cmdq_options_default(&o);
	o.auto_poll = true;
	ASSERT_OK(hwt_cmdq_create(&q, dev, &o));
	ASSERT_OK(hwt_smmu_dev_start(dev));
	hwt_cmdq_get_info(q, &info);
	ASSERT_FALSE(info.measured);
	ASSERT_OK(hwt_cmdq_sync(q));
	measured(q, &info);
	ASSERT_EQ(info.msipolling, info.msi_ns <= info.sev_ns);
	ASSERT_TRUE(strstr(info.reason, "auto:") != NULL);
	syncs_then_stop(dev, q);
	hwt_cmdq_destroy(q);
	hwt_smmu_dev_destroy(dev);
}

static void auto_rig(struct hwt_smmu_dev **dev, struct hwt_cmdq **q, struct logbuf *log,
		     uint64_t timeout_ns)
{
	struct hwt_smmu_dev_config dc;
	struct hwt_cmdq_options o;

	hwt_smmu_dev_config_default(&dc);
	ASSERT_OK(hwt_smmu_dev_create(dev, &dc));
	hwt_cmdq_options_default(&o);
	o.auto_poll = true;
	o.timeout_ns = timeout_ns;
	o.log = log_hook;
	o.log_ctx = log;
	ASSERT_OK(hwt_cmdq_create(q, *dev, &o));
}

/*
 * auto_poll: first uses that cannot measure (device not started, then
 * paused) fail and leave the queue unmeasured; a later use, once the
 * device runs, measures.
 */
TEST_TIMEOUT(auto_mode_measures_after_a_failed_first_use, 60)
{
	struct logbuf log = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct hwt_cmdq_info info;
	struct hwt_smmu_dev *dev;
	struct hwt_cmdq *q;

	/* scaled: the measurement must fit in it (a TCG guest needs longer) */
	auto_rig(&dev, &q, &log, (uint64_t)(1e9 * hwt_test_scale()));
	ASSERT_EQ(hwt_cmdq_sync(q), -ENODEV); /* not started */
	hwt_cmdq_get_info(q, &info);
	ASSERT_FALSE(info.measured);
	ASSERT_OK(hwt_smmu_dev_start(dev));
	ASSERT_OK(hwt_smmu_dev_pause(dev));
	ASSERT_EQ(hwt_cmdq_sync(q), -ETIMEDOUT);
	hwt_cmdq_get_info(q, &info);
	TLOG("after the failed first uses: %s", info.reason);
	ASSERT_FALSE(info.measured);
	ASSERT_TRUE(logged(&log, "auto polling: measurement failed"));
	ASSERT_OK(hwt_smmu_dev_resume(dev));
	ASSERT_OK(hwt_cmdq_sync(q));
	measured(q, &info);
	ASSERT_TRUE(strstr(info.reason, "not measured") == NULL);
	syncs_then_stop(dev, q);
	hwt_cmdq_destroy(q);
	hwt_smmu_dev_destroy(dev);
}

struct retrier {
	struct logbuf log;
	struct hwt_smmu_dev *dev;
	struct hwt_cmdq *q;
	pthread_t t;
	_Atomic bool stop;
	_Atomic unsigned tries; /* read while the retrier runs (relaxed: a count) */
};

static void *retry_syncs(void *arg)
{
	struct retrier *r = arg;

	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		hwt_cmdq_sync(r->q); /* each one a failing measurement */
		atomic_fetch_add_explicit(&r->tries, 1, memory_order_relaxed);
	}
	return NULL;
}

/* An auto queue (timeout 100 ms) on a paused device, a thread retrying
 * first uses on it, each a failing measurement, 30 ms into it. */
static void start_retrier(struct retrier *r)
{
	pthread_mutex_init(&r->log.lock, NULL);
	auto_rig(&r->dev, &r->q, &r->log, 100000000);
	ASSERT_OK(hwt_smmu_dev_start(r->dev));
	ASSERT_OK(hwt_smmu_dev_pause(r->dev));
	ASSERT_EQ(pthread_create(&r->t, NULL, retry_syncs, r), 0);
	hwt__sleep_ns(30000000);
}

/* Stop the retrier, resume: the queue works (and measures when asked). */
static void end_retrier(struct retrier *r, bool calibrate)
{
	atomic_store_explicit(&r->stop, true, memory_order_relaxed);
	pthread_join(r->t, NULL);
	ASSERT_OK(hwt_smmu_dev_resume(r->dev));
	if (calibrate)
		ASSERT_OK(hwt_cmdq_calibrate(r->q));
	ASSERT_OK(hwt_cmdq_sync(r->q));
	hwt_smmu_dev_stop(r->dev);
	hwt_cmdq_destroy(r->q);
	hwt_smmu_dev_destroy(r->dev);
}

/*
 * A thread that waits for another's auto_poll measurement waits for that
 * attempt only: with the device paused and a thread retrying at once, the
 * state goes RUNNING -> PENDING -> RUNNING within nanoseconds, and a waiter
 * that waited for "not RUNNING" could wait through attempt after attempt.
 */
TEST_TIMEOUT(auto_mode_waiter_waits_for_one_attempt, 60)
{
	static struct retrier r;
	uint64_t t0, took;

	start_retrier(&r);
	t0 = hwt__now_ns();
	ASSERT_EQ(hwt_cmdq_sync(r.q), -ETIMEDOUT);
	took = hwt__now_ns() - t0;
	TLOG("the waiter returned after %llu ms; the retrier made %u attempts",
	     (unsigned long long)(took / 1000000),
	     atomic_load_explicit(&r.tries, memory_order_relaxed));
	/* one attempt (100 ms) to wait for, then at most its own */
	ASSERT_TRUE(took < 1000000000ull);
	end_retrier(&r, false);
}

/* An explicit hwt_cmdq_calibrate() while a first use measures: -EBUSY, not
 * a second measurement beside it. */
TEST_TIMEOUT(explicit_calibrate_during_a_first_use_is_busy, 60)
{
	static struct retrier r;
	int err;

	start_retrier(&r);
	/* Between two of the retrier's attempts our call may claim the word
	 * itself and fail (-ETIMEDOUT, legal): try again, a bounded number. */
	for (int i = 0; i < 20 && (err = hwt_cmdq_calibrate(r.q)) == -ETIMEDOUT; i++)
		;
	ASSERT_EQ(err, -EBUSY);
	end_retrier(&r, true);
}

/* A call whose first-use measurement failed returns that error and inserts
 * nothing (here a CFGI_STE without a sync, which would otherwise queue). */
TEST_TIMEOUT(auto_mode_failed_measurement_inserts_nothing, 60)
{
	struct logbuf log = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct hwt_smmu_dev *dev;
	struct hwt_cmdq_cmd c;
	struct hwt_cmdq *q;

	auto_rig(&dev, &q, &log, 1000000000);
	ASSERT_OK(hwt_smmu_dev_cfg_insert(dev, HWT_SMMU_CFG_STE, 7, 0));
	tst_cmd_cfgi_ste(c.dw, 7);
	ASSERT_OK(hwt_smmu_dev_start(dev));
	ASSERT_OK(hwt_smmu_dev_pause(dev));
	ASSERT_EQ(hwt_cmdq_issue_cmd(q, &c), -ETIMEDOUT);
	ASSERT_OK(hwt_smmu_dev_resume(dev));
	ASSERT_OK(hwt_cmdq_sync(q)); /* measures, then syncs */
	ASSERT_TRUE(hwt_smmu_dev_cfg_lookup(dev, HWT_SMMU_CFG_STE, 7, 0));
	ASSERT_OK(hwt_cmdq_issue_cmd_sync(q, &c));
	ASSERT_FALSE(hwt_smmu_dev_cfg_lookup(dev, HWT_SMMU_CFG_STE, 7, 0));
	hwt_smmu_dev_stop(dev);
	hwt_cmdq_destroy(q);
	hwt_smmu_dev_destroy(dev);
}

/*
 * A first-use measurement gets the call's timeout, like any wait: on a
 * device whose every CMD_SYNC costs 1 ms, its 9 x 2 x 201 syncs would take
 * 3.6 s (and every caller waiting for it with them); not one round fits
 * in 200 ms, so the configured mode is kept, said so, and never retried.
 */
TEST_TIMEOUT(auto_mode_measurement_keeps_to_the_timeout, 60)
{
	struct hwt_smmu_dev_config dc;
	struct hwt_cmdq_options o;
	struct hwt_cmdq_info info;
	struct hwt_smmu_dev *dev;
	struct hwt_cmdq *q;
	uint64_t t0, took;

	hwt_smmu_dev_config_default(&dc);
	dc.msi_cost_ns = dc.sev_cost_ns = 1000000;
	ASSERT_OK(hwt_smmu_dev_create(&dev, &dc));
	hwt_cmdq_options_default(&o);
	o.auto_poll = true;
	o.timeout_ns = 200000000;
	ASSERT_OK(hwt_cmdq_create(&q, dev, &o));
	ASSERT_OK(hwt_smmu_dev_start(dev));
	t0 = hwt__now_ns();
	ASSERT_OK(hwt_cmdq_sync(q));
	took = hwt__now_ns() - t0;
	hwt_cmdq_get_info(q, &info);
	TLOG("first use took %llu ms: %s", (unsigned long long)(took / 1000000), info.reason);
	ASSERT_TRUE(took < 1000000000ull);
	ASSERT_FALSE(info.measured);
	ASSERT_TRUE(strstr(info.reason, "not measured") != NULL);
	t0 = hwt__now_ns();
	ASSERT_OK(hwt_cmdq_sync(q)); /* not measured again */
	ASSERT_TRUE(hwt__now_ns() - t0 < 100000000ull);
	/* An explicit calibration that runs out of time is no failure either:
	 * its rounds stop early enough for the sync in flight to finish
	 * before the deadline. */
	ASSERT_OK(hwt_cmdq_calibrate(q));
	hwt_cmdq_get_info(q, &info);
	ASSERT_FALSE(info.measured);
	hwt_smmu_dev_stop(dev);
	hwt_cmdq_destroy(q);
	hwt_smmu_dev_destroy(dev);
}

/* Pause the device at a given time (a thread of its own). */
struct pauser {
	struct hwt_smmu_dev *dev;
	uint64_t at; /* hwt__now_ns() */
	int err;
};

static void *pause_at(void *arg)
{
	struct pauser *p = arg;
	uint64_t now = hwt__now_ns();

	if (p->at > now)
		hwt__sleep_ns(p->at - now);
	p->err = hwt_smmu_dev_pause(p->dev);
	return NULL;
}

/* Resume the device at a given time (a thread of its own). */
static void *resume_at(void *arg)
{
	struct pauser *p = arg;
	uint64_t now = hwt__now_ns();

	if (p->at > now)
		hwt__sleep_ns(p->at - now);
	p->err = hwt_smmu_dev_resume(p->dev);
	return NULL;
}

/*
 * An explicit calibration after a measurement, that finishes no round (the
 * device paused until past half the timeout, the rounds' end, and resumed
 * before the deadline: no error), leaves the earlier measurement as it was:
 * figures, mode and reason, not measured = true with figures of 0.
 */
TEST_TIMEOUT(a_calibration_without_a_round_keeps_the_earlier_measurement, 30)
{
	struct hwt_smmu_dev_config dc;
	struct hwt_cmdq_options o;
	struct hwt_cmdq_info before, after;
	struct pauser p = { 0 };
	struct hwt_cmdq *q;
	pthread_t t;
	int err;

	hwt_smmu_dev_config_default(&dc);
	ASSERT_OK(hwt_smmu_dev_create(&p.dev, &dc));
	hwt_cmdq_options_default(&o);
	o.auto_poll = true;
	o.timeout_ns = 1000000000;
	ASSERT_OK(hwt_cmdq_create(&q, p.dev, &o));
	ASSERT_OK(hwt_smmu_dev_start(p.dev));
	ASSERT_OK(hwt_cmdq_sync(q)); /* the first use measures */
	hwt_cmdq_get_info(q, &before);
	TLOG("first use: %s", before.reason);
	if (!before.measured)
		SKIP("the first use measured no round on this box: %s", before.reason);
	ASSERT_GT(before.msi_ns, 0);
	ASSERT_OK(hwt_smmu_dev_pause(p.dev));
	p.at = hwt__now_ns() + o.timeout_ns / 100 * 65; /* after the rounds' end, at 50% */
	ASSERT_EQ(pthread_create(&t, NULL, resume_at, &p), 0);
	err = hwt_cmdq_calibrate(q);
	pthread_join(t, NULL);
	ASSERT_OK(p.err);
	hwt_cmdq_get_info(q, &after);
	TLOG("calibrate: %d, %s", err, after.reason);
	ASSERT_TRUE(err == 0 || err == -ETIMEDOUT); /* -ETIMEDOUT: resumed late, a loaded box */
	ASSERT_TRUE(after.measured);
	ASSERT_EQ_U64(after.msi_ns, before.msi_ns);
	ASSERT_EQ_U64(after.sev_ns, before.sev_ns);
	ASSERT_EQ(after.msipolling, before.msipolling);
	ASSERT_STR_EQ(after.reason, before.reason);
	ASSERT_OK(hwt_cmdq_sync(q));
	hwt_smmu_dev_stop(p.dev);
	hwt_cmdq_destroy(q);
	hwt_smmu_dev_destroy(p.dev);
}

/*
 * The first use's measurement and the call's own commands share the call's
 * one deadline: a device paused at any point of the call makes it return
 * by timeout_ns, not timeout_ns after the sync that met the pause began.
 * Each sync costs 200 us, so the measurement (9 x 2 x 201 syncs, 720 ms)
 * would outlast the 500 ms timeout: the pauses up to 45% meet it.  The
 * call's own 100 commands cost 2 ms each, 200 ms after the measurement's
 * 250 ms: the later pauses meet the call's own CMD_SYNC wait, which must
 * keep the deadline the measurement started.  The bound, 1.2 x timeout,
 * leaves 100 ms for the wake-up on a loaded box; a wait given a deadline
 * of its own returns at 1.3 x or later.
 */
TEST_TIMEOUT(auto_mode_measurement_shares_the_call_deadline, 60)
{
	static const unsigned pct[] = { 10, 30, 45, 62, 80, 95 };
	const uint64_t timeout = 500000000;

	for (unsigned i = 0; i < sizeof(pct) / sizeof(pct[0]); i++) {
		struct hwt_smmu_dev_config dc;
		struct hwt_cmdq_options o;
		struct hwt_cmdq_info info;
		struct pauser p = { 0 };
		uint64_t t0, took;
		struct hwt_cmdq_cmd c[100];
		struct logbuf log = { .lock = PTHREAD_MUTEX_INITIALIZER };
		struct hwt_cmdq *q;
		pthread_t t;
		int err;

		for (unsigned k = 0; k < 100; k++)
			TST_ENC(c[k].dw, TLBI_NSNH_ALL);
		hwt_smmu_dev_config_default(&dc);
		dc.msi_cost_ns = dc.sev_cost_ns = 200000;
		dc.cmd_cost_ns = 2000000;
		ASSERT_OK(hwt_smmu_dev_create(&p.dev, &dc));
		hwt_cmdq_options_default(&o);
		o.auto_poll = true;
		o.timeout_ns = timeout;
		o.log = log_hook;
		o.log_ctx = &log;
		ASSERT_OK(hwt_cmdq_create(&q, p.dev, &o));
		ASSERT_OK(hwt_smmu_dev_start(p.dev));
		t0 = hwt__now_ns();
		p.at = t0 + timeout / 100 * pct[i];
		ASSERT_EQ(pthread_create(&t, NULL, pause_at, &p), 0);
		err = hwt_cmdq_issue(q, c, 100, true);
		took = hwt__now_ns() - t0;
		pthread_join(t, NULL);
		ASSERT_OK(p.err);
		hwt_cmdq_get_info(q, &info);
		TLOG("paused at %u%% of the timeout: %s after %llu ms (%s)", pct[i],
		     err ? "-ETIMEDOUT" : "0", (unsigned long long)(took / 1000000), info.reason);
		ASSERT_TRUE(err == 0 || err == -ETIMEDOUT);
		ASSERT_LE(took, timeout / 10 * 12);
		ASSERT_OK(hwt_smmu_dev_resume(p.dev));
		ASSERT_OK(hwt_cmdq_sync(q));
		hwt_smmu_dev_stop(p.dev);
		hwt_cmdq_destroy(q);
		hwt_smmu_dev_destroy(p.dev);
	}
}

/*
 * The documented order is queue first, then device; the other order must
 * not touch freed memory (ASan saw a heap use-after-free in
 * hwt_cmdq_destroy): the device stops at once, the queue's calls fail with
 * -ENODEV, and the device's memory goes when the queue does.
 */
/* Count the lines of a file that contain s. */
static unsigned lines_with(FILE *f, const char *s)
{
	char line[512];
	unsigned n = 0;

	rewind(f);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, s) != NULL;
	return n;
}

/*
 * The default log (no hook: stderr) is rate-limited as the kernel's
 * printk_ratelimit: 50 failed syncs in a row write at most the burst, and
 * destroying the queue reports how many lines were suppressed.
 */
TEST(default_log_is_rate_limited)
{
	struct hwt_smmu_dev_config dc;
	struct hwt_cmdq_options o;
	struct hwt_smmu_dev *dev;
	struct hwt_cmdq *q;
	FILE *f = tmpfile();
	int saved = dup(2);
	unsigned timeouts, suppressed;

	ASSERT_TRUE(f && saved >= 0);
	hwt_smmu_dev_config_default(&dc);
	ASSERT_OK(hwt_smmu_dev_create(&dev, &dc));
	hwt_cmdq_options_default(&o);
	o.timeout_ns = 1000000; /* 1 ms */
	ASSERT_OK(hwt_cmdq_create(&q, dev, &o));
	ASSERT_OK(hwt_smmu_dev_start(dev));
	ASSERT_OK(hwt_smmu_dev_pause(dev));
	fflush(stderr);
	ASSERT_TRUE(dup2(fileno(f), 2) == 2);
	for (int i = 0; i < 50; i++)
		ASSERT_EQ(hwt_cmdq_sync(q), -ETIMEDOUT);
	ASSERT_OK(hwt_smmu_dev_resume(dev));
	ASSERT_OK(hwt_smmu_dev_stop(dev));
	hwt_cmdq_destroy(q);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	timeouts = lines_with(f, "CMD_SYNC timeout");
	suppressed = lines_with(f, "suppressed");
	TLOG("%u timeout lines, %u 'suppressed' lines for 50 failed syncs", timeouts, suppressed);
	ASSERT_GT(timeouts, 0);
	ASSERT_LE(timeouts, 10);
	ASSERT_EQ(suppressed, 1);
	fclose(f);
	hwt_smmu_dev_destroy(dev);
}

/* The rate limit itself, with made-up times: a burst of 3 per 100 ns, the
 * suppressed count said before the next line allowed, and flushed at the
 * end. */
TEST(ratelimit_allows_a_burst_per_interval)
{
	struct hwt__ratelimit rl;
	uint64_t missed;

	hwt__ratelimit_init(&rl, 3, 100);
	for (uint64_t t = 1000; t < 1003; t++) {
		ASSERT_TRUE(hwt__ratelimit_allow(&rl, t, &missed));
		ASSERT_EQ(missed, 0);
	}
	for (uint64_t t = 1003; t < 1010; t++) {
		ASSERT_FALSE(hwt__ratelimit_allow(&rl, t, &missed));
		ASSERT_EQ(missed, 0);
	}
	ASSERT_FALSE(hwt__ratelimit_allow(&rl, 1099, &missed)); /* same interval */
	ASSERT_TRUE(hwt__ratelimit_allow(&rl, 1100, &missed));  /* next one */
	ASSERT_EQ(missed, 8);
	ASSERT_TRUE(hwt__ratelimit_allow(&rl, 1101, &missed));
	ASSERT_EQ(missed, 0);
	ASSERT_TRUE(hwt__ratelimit_allow(&rl, 1102, &missed));
	ASSERT_FALSE(hwt__ratelimit_allow(&rl, 1103, &missed));
	ASSERT_EQ(hwt__ratelimit_flush(&rl), 1);
	ASSERT_EQ(hwt__ratelimit_flush(&rl), 0);
	ASSERT_TRUE(hwt__ratelimit_allow(&rl, 5000, &missed)); /* long after */
	ASSERT_EQ(missed, 0);
}
