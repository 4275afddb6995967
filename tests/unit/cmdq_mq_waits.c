/* SPDX-License-Identifier: MIT */
/*
 * The waits of an object of several queues (tests/unit/cmdq_mq.c has the
 * rest): a CONS wait meets its deadline while CONS moves on every poll; on
 * the rseq path a producer waiting for space follows a migration to its new
 * CPU's queue; a thread cancelled in its MSI wait leaves the queue usable
 * (its late MSI lands in its own slot); and a destroy whose disable the
 * device refuses keeps the queues mapped.
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
#include "device/impl.h"

/* Bounded: sleep until *flag is set or secs (scaled) pass; the flag's value. */
static bool wait_flag(_Atomic int *flag, double secs)
{
	uint64_t end = hwt__now_ns() + (uint64_t)(secs * hwt_test_scale() * 1e9);

	while (!atomic_load_explicit(flag, memory_order_acquire) && hwt__now_ns() < end)
		hwt__sleep_ns(1000000);
	return atomic_load_explicit(flag, memory_order_acquire);
}

/* --- a CONS wait while CONS keeps moving ------------------------------------- */

#define MOVERS_MAX 7

struct movers {
	struct hwt__smmu_regs *regs;
	unsigned qi;
	uint64_t end;         /* the movers' own limit */
	_Atomic int stop;     /* the waiter is done */
	_Atomic unsigned running;
	_Atomic int expired;  /* a mover stopped at the limit */
	_Atomic uint64_t moves;
};

struct mover {
	struct movers *all;
	unsigned cpu, first;
};

/* With the device paused: queue qi's CONS round 44..299 as fast as it goes,
 * until stopped or the limit.  It changes under every poll of a waiter for
 * 300, and never reaches 300 (the wrap compare on a queue of 256: the 256
 * positions below it are "not yet") nor the queue's PROD (0).  One mover
 * per CPU but the waiter's: while one is interrupted the others move. */
static void *move_cons(void *arg)
{
	struct mover *m = arg;
	struct movers *a = m->all;
	_Atomic uint32_t *cons = hwt__reg_q_cons(a->regs, a->qi);
	uint64_t n = 0;

	if (!mqrig_pin(m->cpu))
		return NULL;
	atomic_fetch_add_explicit(&a->running, 1, memory_order_release);
	for (uint32_t v = m->first; !atomic_load_explicit(&a->stop, memory_order_relaxed);
	     v = v == 299 ? 44 : v + 1) {
		/* Stands in for the device's R_CONS (A_CONS in the wait). */
		atomic_store_explicit(cons, v, memory_order_release);
		if (!(++n & 0xffff) && hwt__now_ns() > a->end) {
			atomic_store_explicit(&a->expired, 1, memory_order_relaxed);
			break;
		}
	}
	atomic_fetch_add_explicit(&a->moves, n, memory_order_relaxed);
	return NULL;
}

/* wait_reached must meet its deadline even while CONS moves on every poll
 * (a lapped waiter's wrap compare can say "not yet" on a busy queue).  With
 * two CPUs the one mover's interrupts let a wait that checks its deadline
 * only when CONS stands still reach it anyway; with more, the movers cover
 * for one another and such a wait runs until they stop. */
TEST_TIMEOUT(cons_wait_meets_its_deadline_while_cons_moves, 30)
{
	struct mqrig_opt opt = { .numq = 2, .queues = 2, .disable_msi = true, .timeout_ns = 100000000 };
	struct mqrig *r = malloc(sizeof(*r));
	struct movers a = { .qi = 1 };
	struct mover m[MOVERS_MAX];
	pthread_t t[MOVERS_MAX];
	unsigned n = mqrig_ncpus() - 1 < MOVERS_MAX ? mqrig_ncpus() - 1 : MOVERS_MAX;
	uint64_t deadline = 0, t0, took, end;
	int err, expired;

	mqrig_need_cpus(2);
	ASSERT_TRUE(r);
	mqrig_up(r, &opt);
	ASSERT_OK(hwt_smmu_dev_pause(r->dev));
	a.regs = r->q->regs;
	a.end = hwt__now_ns() + (uint64_t)(5e9 * hwt_test_scale());
	ASSERT_TRUE(mqrig_pin(0));
	for (unsigned i = 0; i < n; i++) {
		m[i] = (struct mover){ .all = &a, .cpu = 1 + i, .first = 44 + 37 * i % 256 };
		ASSERT_OK(pthread_create(&t[i], NULL, move_cons, &m[i]));
	}
	end = hwt__now_ns() + (uint64_t)(5e9 * hwt_test_scale());
	while (atomic_load_explicit(&a.running, memory_order_acquire) < n && hwt__now_ns() < end)
		hwt__sleep_ns(1000000);
	ASSERT_EQ(atomic_load_explicit(&a.running, memory_order_relaxed), n); /* loop's acquire */
	t0 = hwt__now_ns();
	err = hwt__cmdq_wait_reached(r->q, hwt__cmdq_rec(r->q), 1, 300, &deadline);
	took = hwt__now_ns() - t0;
	atomic_store_explicit(&a.stop, 1, memory_order_relaxed);
	for (unsigned i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	expired = atomic_load_explicit(&a.expired, memory_order_relaxed); /* after the joins */
	TLOG("the wait returned %d after %llu ms; %u movers moved CONS %llu times%s", err,
	     (unsigned long long)(took / 1000000), n,
	     (unsigned long long)atomic_load_explicit(&a.moves, memory_order_relaxed),
	     expired ? ", until their own limit" : "");
	ASSERT_EQ(err, -ETIMEDOUT);
	ASSERT_FALSE(expired); /* it gave up while CONS still moved */
	ASSERT_TRUE(logged(&r->log, "CMD_SYNC timeout waiting for CONS"));
	/* As the device left it; relaxed: the movers are joined and the device
	 * paused, the resume publishes it. */
	atomic_store_explicit(hwt__reg_q_cons(r->q->regs, 1), 0, memory_order_relaxed);
	ASSERT_OK(hwt_smmu_dev_resume(r->dev));
	ASSERT_OK(hwt_cmdq_sync(r->q));
	mqrig_down(r);
	free(r);
}

/* --- rseq path: a space wait after a migration -------------------------------- */

struct waiter {
	struct mqrig *r;
	_Atomic int started, done;
	int err, cpu_after;
};

/* On CPU 0, one command with a CMD_SYNC: queue 0 is full and held. */
static void *issue_on_cpu0(void *arg)
{
	struct waiter *w = arg;
	struct hwt_cmdq_cmd c;

	w->err = -EPERM;
	if (mqrig_pin(0)) {
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
	struct mqrig_opt opt = { .per_cpu = true, .timeout_ns = 3000000000ull };
	struct mqrig *r = malloc(sizeof(*r));
	struct waiter w = { .r = r };
	struct hwt_cmdq_cmd gate, c[51];
	pthread_t t;

	mqrig_up_rseq(r, &opt);
	/* release: pairs with the acquire load of r->gate in exec_one() (mqrig.c) */
	atomic_store_explicit(&r->gate, 1, memory_order_release);
	mqrig_gate_cmd(&gate);
	ASSERT_OK(hwt_cmdq_issue(r->q, &gate, 1, false)); /* queue 0, held (we are on CPU 0) */
	for (unsigned i = 0; i < 5; i++) { /* 255 more: queue 0 (256) is full */
		mqrig_cmds(r, 0, 51 * i, c, 51);
		ASSERT_OK(hwt_cmdq_issue(r->q, c, 51, false));
	}
	ASSERT_TRUE(mqrig_pin(1));
	w.r = r;
	ASSERT_OK(pthread_create(&t, NULL, issue_on_cpu0, &w));
	ASSERT_TRUE(wait_flag(&w.started, 5));
	ASSERT_FALSE(wait_flag(&w.done, 0.2)); /* waiting for space on queue 0 */
	ASSERT_OK(hwt_test_pin(t, 1));
	ASSERT_TRUE(wait_flag(&w.done, 20));
	pthread_join(t, NULL);
	TLOG("after the move: %d on CPU %d", w.err, w.cpu_after);
	ASSERT_OK(w.err); /* inserted on queue 1 and synced there */
	ASSERT_EQ(w.cpu_after, 1);
	ASSERT_TRUE(mqrig_done(r, 1, 0));
	/* queue 0 still held (relaxed: the gate was closed before its R_PROD) */
	ASSERT_EQ(atomic_load_explicit(&r->gate_passed, memory_order_relaxed), 0);
	atomic_store_explicit(&r->gate, 0, memory_order_release); /* release: as the close above */
	ASSERT_OK(hwt_cmdq_sync(r->q));
	/* relaxed: A_MSI / A_CONS of the sync order the executor's count */
	ASSERT_EQ(atomic_load_explicit(&r->executed[0], memory_order_relaxed), 255);
	ASSERT_FALSE(mqrig_violation(r));
	mqrig_down(r);
	free(r);
}

/* --- rseq path: a publish from the CPU of the insertion ---------------------- */

/* The calling thread's mask is {a, b} (b may equal a). */
static bool mask_is(unsigned a, unsigned b)
{
	cpu_set_t set;

	if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set))
		return false;
	return CPU_ISSET(a, &set) && CPU_ISSET(b, &set) && (unsigned)CPU_COUNT(&set) == 1 + (a != b);
}

static void set_mask(unsigned a, unsigned b)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(a, &set);
	CPU_SET(b, &set);
	ASSERT_OK(pthread_setaffinity_np(pthread_self(), sizeof(set), &set));
}

/* An insertion whose publish must come from another CPU (a test's "moved",
 * whose publish starts as off that CPU) pins the thread there, publishes,
 * and gives the thread its mask back. */
TEST_TIMEOUT(rseq_moved_publish_pins_and_restores_the_mask, 30)
{
	struct mqrig_opt opt = { .per_cpu = true };
	struct mqrig *r = malloc(sizeof(*r));
	struct hwt_cmdq_cmd c[3];

	mqrig_up_rseq(r, &opt);
	set_mask(0, 1);
	mqrig_cmds(r, 0, 0, c, 3);
	mqrig_moved(r, 2);
	ASSERT_OK(hwt_cmdq_issue(r->q, c, 2, false));
	ASSERT_OK(hwt_cmdq_issue(r->q, c + 2, 1, true));
	ASSERT_EQ(atomic_load_explicit(&r->q->mq->pins, memory_order_relaxed), 2);
	ASSERT_TRUE(mask_is(0, 1));
	ASSERT_OK(hwt_cmdq_sync(r->q));
	ASSERT_EQ(atomic_load_explicit(&r->executed[0], memory_order_relaxed), 3);
	ASSERT_FALSE(mqrig_violation(r));
	mqrig_down(r);
	free(r);
}

/* A thread that may not run on the CPU of its insertion (the pin fails, as
 * for a CPU taken offline): the call returns -ETIMEDOUT with its command
 * unpublished, and the thread's next hwt_cmdq_sync, from another CPU,
 * publishes it from that CPU before it waits there (the idle rule alone
 * would say "done": the queue is idle with the command unpublished). */
TEST_TIMEOUT(rseq_unpublished_call_is_published_by_the_next_sync, 30)
{
	struct mqrig_opt opt = { .per_cpu = true, .timeout_ns = 50000000 };
	struct mqrig *r = malloc(sizeof(*r));
	struct hwt_cmdq_cmd c;

	mqrig_up_rseq(r, &opt);
	mqrig_cmds(r, 0, 0, &c, 1);
	mqrig_moved(r, 1);
	mqrig_nopin(true);
	ASSERT_EQ(hwt_cmdq_issue(r->q, &c, 1, false), -ETIMEDOUT);
	ASSERT_TRUE(logged(&r->log, "not published: this thread moved off that CPU and may not run there"));
	hwt__sleep_ns(20000000);
	ASSERT_EQ(atomic_load_explicit(&r->executed[0], memory_order_relaxed), 0);
	mqrig_nopin(false);
	ASSERT_TRUE(mqrig_pin(1));
	ASSERT_OK(hwt_cmdq_sync(r->q));
	ASSERT_EQ(atomic_load_explicit(&r->executed[0], memory_order_relaxed), 1);
	ASSERT_EQ(atomic_load_explicit(&r->q->mq->pins, memory_order_relaxed), 1);
	ASSERT_TRUE(mask_is(1, 1));
	ASSERT_FALSE(mqrig_violation(r));
	mqrig_down(r);
	free(r);
}

/* --- rseq path, MSI polling: a thread cancelled in its wait ------------------- */

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(TST_ASAN)
#define TST_ASAN 1
#endif
#ifdef TST_ASAN
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
#endif

/* The cancellation's unwind skips the epilogues that unpoison the stack
 * frames it drops: ASan then reports the thread's own exit (sigaltstack
 * in AsanThread::Destroy writing into a dropped frame; google/sanitizers
 * issue 1399).  Unpoison the thread's stack below this handler's frame
 * (its own redzones too: they are dropped with it). */
static void unwound(void *unused)
{
	(void)unused;
#ifdef TST_ASAN
	pthread_attr_t a;
	void *lo;
	size_t size;
	char *here = __builtin_frame_address(0);

	if (pthread_getattr_np(pthread_self(), &a))
		return;
	if (!pthread_attr_getstack(&a, &lo, &size) && here > (char *)lo)
		__asan_unpoison_memory_region(lo, (size_t)(here - (char *)lo));
	pthread_attr_destroy(&a);
#endif
}

/* A sync on CPU 0 with the device paused: it waits until cancelled. */
static void *sync_until_cancelled(void *arg)
{
	struct waiter *w = arg;

	w->err = -EPERM;
	pthread_cleanup_push(unwound, NULL);
	if (mqrig_pin(0)) {
		atomic_store_explicit(&w->started, 1, memory_order_release);
		w->err = hwt_cmdq_sync(w->r->q);
	}
	pthread_cleanup_pop(0);
	atomic_store_explicit(&w->done, 1, memory_order_release);
	return NULL;
}

static void *sync_on_cpu0(void *arg)
{
	struct waiter *w = arg;

	w->err = mqrig_pin(0) ? hwt_cmdq_sync(w->r->q) : -EPERM;
	return NULL;
}

/* A thread cancelled in its MSI wait leaves its CMD_SYNC behind: once the
 * device runs again that sync's MSI lands in its own slot (dw0 becomes 0),
 * and the next thread's sync on the same queue completes. */
TEST_TIMEOUT(rseq_cancelled_msi_wait_leaves_the_queue_usable, 30)
{
	struct mqrig_opt opt = { .per_cpu = true, .timeout_ns = 20000000000ull };
	struct mqrig *r = malloc(sizeof(*r));
	struct waiter w = { .r = r }, w2 = { .r = r };
	_Atomic uint64_t *dw0;
	uint64_t end;
	uint32_t prod;
	pthread_t t;
	void *ret;

	mqrig_up_rseq(r, &opt);
	if (!r->q->msipoll)
		SKIP("CONS polling here");
	ASSERT_TRUE(mqrig_pin(1));
	ASSERT_OK(hwt_smmu_dev_pause(r->dev));
	ASSERT_OK(pthread_create(&t, NULL, sync_until_cancelled, &w));
	ASSERT_TRUE(wait_flag(&w.started, 5));
	/* Past its spin and yields it sleeps: a cancellation point. */
	ASSERT_FALSE(wait_flag(&w.done, 0.2));
	ASSERT_OK(pthread_cancel(t));
	ASSERT_OK(pthread_join(t, &ret));
	ASSERT_TRUE(ret == PTHREAD_CANCELED);
	/* Its CMD_SYNC is the last entry of queue 0. */
	prod = hwt__reg_q_read_prod(r->q->regs, 0);
	dw0 = (_Atomic uint64_t *)(r->q->sub[0]->mem + 2 * hwt__q_idx(r->q->shift, prod - 1));
	/* relaxed: its writer is joined, the device paused */
	ASSERT_NE(atomic_load_explicit(dw0, memory_order_relaxed), 0);
	ASSERT_OK(hwt_smmu_dev_resume(r->dev));
	end = hwt__now_ns() + (uint64_t)(10e9 * hwt_test_scale());
	while (atomic_load_explicit(dw0, memory_order_acquire) && hwt__now_ns() < end)
		hwt__sleep_ns(1000000);
	/* the late MSI, in its own slot (relaxed: the loop's acquire) */
	ASSERT_EQ(atomic_load_explicit(dw0, memory_order_relaxed), 0);
	ASSERT_OK(pthread_create(&t, NULL, sync_on_cpu0, &w2));
	ASSERT_OK(pthread_join(t, NULL));
	ASSERT_OK(w2.err);
	mqrig_down(r);
	free(r);
}

/* --- a destroy whose disable is refused -------------------------------------- */

/* A device that answers the disable of queue 1 with the enable still set
 * (none here does: set by hand on a device that never started) may still
 * read the queues (and write an MSI into a slot): destroy keeps them mapped,
 * q->mapped included, so that a later destroy, once the device let go,
 * unmaps and frees it all. */
TEST(a_refused_disable_keeps_the_queues_mapped)
{
	struct hwt_smmu_dev_config dc;
	struct hwt_smmu_dev *dev;
	struct hwt_cmdq_options o;
	struct hwt_cmdq *q;
	struct hwt__smmu_regs *regs;
	struct logbuf log = { .lock = PTHREAD_MUTEX_INITIALIZER };
	uint64_t iova;
	uint32_t seq;

	hwt_smmu_dev_config_default(&dc);
	ASSERT_OK(hwt__dev_create_nq(&dev, &dc, 2));
	hwt_cmdq_options_default(&o);
	o.queues = 2;
	o.log = log_hook;
	o.log_ctx = &log;
	ASSERT_OK(hwt_cmdq_create(&q, dev, &o)); /* enabled at the device's start */
	iova = q->iova;
	regs = q->regs;
	/* Queue 1's next enable write carries count seq: answer it enabled.
	 * Relaxed: with the device never started this thread alone touches
	 * the registers. */
	seq = (atomic_load_explicit(&regs->q[1].en, memory_order_relaxed) >>
	       HWT__CR0_SEQ_SHIFT) + 1;
	atomic_store_explicit(&regs->q[1].enack, seq << HWT__CR0_SEQ_SHIFT | HWT__Q_EN,
			      memory_order_relaxed);
	hwt_cmdq_destroy(q); /* kept */
	TLOG("%s path; log: %s", q->mq->rseq ? "rseq" : "shared", log.text);
	ASSERT_TRUE(logged(&log, "leaking the queue"));
	ASSERT_TRUE(q->mapped);
	ASSERT_TRUE(hwt__dev_translate(dev, iova, 16));
	/* The device lets go (a stopped device acknowledges nothing). */
	atomic_store_explicit(&regs->q[1].enack, 0, memory_order_relaxed);
	hwt_cmdq_destroy(q);
	ASSERT_FALSE(hwt__dev_translate(dev, iova, 16));
	hwt_smmu_dev_destroy(dev);
}
