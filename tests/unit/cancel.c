/* SPDX-License-Identifier: MIT */
/*
 * A thread cancelled (pthread_cancel) inside a call that holds a lock
 * across a cancellation point leaves that lock free for the others: the
 * queue's default log, which writes to stderr under the queue's log lock
 * (stderr is a pipe filled up first, so the thread is stuck in that write
 * when it is cancelled; the next thread's log line must get through), and
 * hwt_smmu_dev_stop(), which joins the consumer thread under the device's
 * lock.  (tests/unit/cmdq_mq_waits.c has a thread cancelled in its MSI
 * wait.)
 */
#include "harness/harness.h"
#include "harness/rig.h"
#include "harness/tq.h"
#include "harness/cmds.h"

#include <hwtune/smmu_model.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "cmdq/impl.h"
#include "common/time.h"

struct syncer {
	struct hwt_cmdq *q;
	_Atomic int done;
	int err;
};

static void *sync_once(void *arg)
{
	struct syncer *s = arg;

	s->err = hwt_cmdq_sync(s->q); /* the device is paused: a timeout, logged */
	atomic_store_explicit(&s->done, 1, memory_order_relaxed); /* err: read after the join */
	return NULL;
}

/* Read what the pipe holds (non-blocking); bytes read. */
static size_t drain(int fd)
{
	char buf[4096];
	size_t n = 0;
	ssize_t r;

	while ((r = read(fd, buf, sizeof(buf))) > 0)
		n += (size_t)r;
	return n;
}

/* Bounded: until *done, draining fd (if >= 0) meanwhile; *done.  Relaxed:
 * the caller joins the thread before it reads what the thread wrote. */
static bool wait_draining(_Atomic int *done, int fd, double secs)
{
	uint64_t end = hwt__now_ns() + (uint64_t)(secs * 1e9 * hwt_test_scale());

	while (!atomic_load_explicit(done, memory_order_relaxed) && hwt__now_ns() < end) {
		if (fd >= 0)
			drain(fd);
		hwt__sleep_ns(1000000);
	}
	return atomic_load_explicit(done, memory_order_relaxed);
}

TEST_TIMEOUT(a_thread_cancelled_in_the_log_write_leaves_the_log_usable, 60)
{
	struct syncer a = { 0 }, b = { 0 };
	struct rig r;
	pthread_t ta, tb;
	int p[2], saved;
	char fill[4096] = { 0 };
	void *ret;

	rig_up(&r, ALL_FEATURES, false, 8, 20000000); /* 20 ms */
	r.q->log = NULL; /* the default: stderr, under the log lock */
	ASSERT_OK(hwt_smmu_dev_pause(r.dev));
	ASSERT_OK(pipe(p));
	fcntl(p[1], F_SETPIPE_SZ, 4096); /* the smallest: quicker to fill */
	ASSERT_OK(fcntl(p[0], F_SETFL, O_NONBLOCK));
	ASSERT_OK(fcntl(p[1], F_SETFL, O_NONBLOCK));
	while (write(p[1], fill, sizeof(fill)) > 0)
		;
	ASSERT_OK(fcntl(p[1], F_SETFL, 0)); /* full, and blocking: the log's write waits */
	saved = dup(2);
	ASSERT_TRUE(saved >= 0);
	ASSERT_TRUE(dup2(p[1], 2) == 2);

	a.q = b.q = r.q;
	ASSERT_OK(pthread_create(&ta, NULL, sync_once, &a));
	hwt__sleep_ns((uint64_t)(300e6 * hwt_test_scale())); /* past its 20 ms: stuck in the write */
	ASSERT_FALSE(atomic_load_explicit(&a.done, memory_order_relaxed));
	ASSERT_OK(pthread_cancel(ta));
	/* Room again: a write the cancellation left pending may finish. */
	drain(p[0]);
	ASSERT_OK(pthread_join(ta, &ret));
	TLOG("first thread: %s", ret == PTHREAD_CANCELED ? "cancelled" : "returned");

	ASSERT_OK(pthread_create(&tb, NULL, sync_once, &b));
	if (!wait_draining(&b.done, p[0], 10)) {
		dup2(saved, 2);
		ASSERT_TRUE(!"the second thread's sync returned (its log line got through)");
	}
	ASSERT_OK(pthread_join(tb, NULL));
	ASSERT_TRUE(dup2(saved, 2) == 2);
	close(saved);
	close(p[0]);
	close(p[1]);
	ASSERT_EQ(b.err, -ETIMEDOUT);
	ASSERT_OK(hwt_smmu_dev_resume(r.dev));
	rig_down(&r);
}

struct stopper {
	struct hwt_smmu_dev *dev;
	_Atomic int done;
	int err;
};

static void *stop_once(void *arg)
{
	struct stopper *s = arg;

	s->err = hwt_smmu_dev_stop(s->dev);
	atomic_store_explicit(&s->done, 1, memory_order_relaxed); /* err: read after the join */
	return NULL;
}

TEST_TIMEOUT(a_thread_cancelled_in_stop_leaves_the_device_usable, 60)
{
	struct hwt_smmu_dev_config cfg;
	struct stopper a = { 0 }, b = { 0 };
	pthread_t ta, tb;
	uint64_t dw[2];
	struct tq t;
	void *ret;

	hwt_smmu_dev_config_default(&cfg);
	cfg.cmd_cost_ns = 1000000000; /* one command keeps the consumer 1 s */
	tq_start(&t, &cfg, 4);
	tst_cmd_seq(dw, 1);
	tq_put(&t, dw);
	tq_publish(&t);
	hwt__sleep_ns(50000000); /* the consumer is in it */
	a.dev = b.dev = t.dev;
	ASSERT_OK(pthread_create(&ta, NULL, stop_once, &a));
	hwt__sleep_ns(100000000); /* a is joining the consumer */
	ASSERT_OK(pthread_cancel(ta));
	ASSERT_OK(pthread_join(ta, &ret));
	TLOG("first thread: %s", ret == PTHREAD_CANCELED ? "cancelled" : "returned");
	ASSERT_OK(pthread_create(&tb, NULL, stop_once, &b));
	if (!wait_draining(&b.done, -1, 10))
		ASSERT_TRUE(!"a second stop returned");
	ASSERT_OK(pthread_join(tb, NULL));
	ASSERT_OK(b.err);
	ASSERT_EQ(hwt__reg_cmdq_enabled(t.r), 0);
	tq_free(&t);
}
