/* SPDX-License-Identifier: MIT */
/*
 * The waits of an object of several queues (tests/unit/cmdq_mq.c has the
 * rest): on the rseq path a producer waiting for space follows a migration
 * to its new CPU's queue.
 */
#include "harness/harness.h"
#include "harness/mqrig.h"

#include <hwtune/smmu_model.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/arch.h"
#include "arch/rseq.h"
#include "cmdq/impl.h"
#include "common/time.h"

static unsigned ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	return n > 0 ? (unsigned)n : 1;
}

/* Pin the calling thread to cpu; false if it cannot run there. */
static bool pin(unsigned cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	if (sched_setaffinity(0, sizeof(s), &s))
		return false;
	return sched_getcpu() == (int)cpu;
}

static void need_cpus(unsigned n)
{
	if (ncpus() < n || !pin(n - 1) || !pin(0))
		SKIP("needs %u CPUs this process may run on", n);
}

static void need_rseq(void)
{
	if (hwt__rseq_queue_unavailable())
		SKIP("shared path here: %s", hwt__rseq_queue_unavailable());
}

/* Bounded: sleep until *flag is set or secs (scaled) pass; the flag's value. */
static bool wait_flag(_Atomic int *flag, double secs)
{
	uint64_t end = hwt__now_ns() + (uint64_t)(secs * hwt_test_scale() * 1e9);

	while (!atomic_load_explicit(flag, memory_order_acquire) && hwt__now_ns() < end)
		hwt__sleep_ns(1000000);
	return atomic_load_explicit(flag, memory_order_acquire);
}

/* --- rseq path: a space wait after a migration -------------------------------- */

struct waiter {
	struct mqrig *r;
	_Atomic int started, done;
	int err, cpu_after;
	_Atomic uint32_t *word; /* the MSI word of the sync and its MSIDATA */
	uint32_t seq;
};

/* On CPU 0, one command with a CMD_SYNC: queue 0 is full and held. */
static void *issue_on_cpu0(void *arg)
{
	struct waiter *w = arg;
	struct hwt_cmdq_cmd c;

	w->err = -EPERM;
	if (pin(0)) {
		mqrig_cmds(w->r, 1, 0, &c, 1);
		atomic_store_explicit(&w->started, 1, memory_order_release);
		w->err = hwt_cmdq_issue(w->r->q, &c, 1, true);
		w->cpu_after = sched_getcpu();
	}
	atomic_store_explicit(&w->done, 1, memory_order_release);
	return NULL;
}

/* A producer waiting for space on its CPU's queue, then moved to another
 * CPU, inserts on the new CPU's queue (which has room) within its deadline,
 * rather than waiting on the queue it left until the deadline. */
TEST_TIMEOUT(rseq_space_wait_follows_a_migration, 30)
{
	struct mqrig_opt opt = { .numq = 2, .queues = 2, .timeout_ns = 3000000000ull };
	struct mqrig *r = malloc(sizeof(*r));
	struct waiter w = { .r = r };
	struct hwt_cmdq_cmd gate, c[51];
	cpu_set_t one;
	pthread_t t;

	need_cpus(2);
	need_rseq();
	ASSERT_TRUE(r);
	mqrig_up(r, &opt);
	atomic_store(&r->gate, 1);
	mqrig_gate_cmd(&gate);
	ASSERT_TRUE(pin(0));
	ASSERT_OK(hwt_cmdq_issue(r->q, &gate, 1, false)); /* queue 0, held */
	for (unsigned i = 0; i < 5; i++) { /* 255 more: queue 0 (256) is full */
		mqrig_cmds(r, 0, 51 * i, c, 51);
		ASSERT_OK(hwt_cmdq_issue(r->q, c, 51, false));
	}
	ASSERT_TRUE(pin(1));
	w.r = r;
	ASSERT_OK(pthread_create(&t, NULL, issue_on_cpu0, &w));
	ASSERT_TRUE(wait_flag(&w.started, 5));
	ASSERT_FALSE(wait_flag(&w.done, 0.2)); /* waiting for space on queue 0 */
	CPU_ZERO(&one);
	CPU_SET(1, &one);
	ASSERT_OK(pthread_setaffinity_np(t, sizeof(one), &one));
	ASSERT_TRUE(wait_flag(&w.done, 20));
	pthread_join(t, NULL);
	TLOG("after the move: %d on CPU %d", w.err, w.cpu_after);
	ASSERT_OK(w.err); /* inserted on queue 1 and synced there */
	ASSERT_EQ(w.cpu_after, 1);
	ASSERT_TRUE(mqrig_done(r, 1, 0));
	ASSERT_EQ(atomic_load(&r->gate_passed), 0); /* queue 0 still held */
	atomic_store(&r->gate, 0);
	ASSERT_OK(hwt_cmdq_sync(r->q));
	ASSERT_EQ(atomic_load(&r->executed[0]), 255);
	ASSERT_FALSE(mqrig_violation(r));
	mqrig_down(r);
	free(r);
}
