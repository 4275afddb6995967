/* SPDX-License-Identifier: MIT */
/*
 * Several command queues (options.queues): the options refused, the info,
 * producers pinned to CPUs (exactly once, order per queue), hwt_cmdq_sync
 * after a migration (it must cover the queue the thread left), an error
 * that stops its own queue only, the per-thread records (back to the pool
 * at thread exit, a thread outliving its object), and on the rseq path the
 * CMD_SYNC's MSI into its own slot: a late MSI after a wait that gave up,
 * and a waiter lapped while it waits.  Each test runs on whichever
 * path this process gets (rseq natively; GLIBC_TUNABLES=glibc.pthread.rseq=0
 * gives the shared path) and checks info.insert_path against it.
 */
#include "harness/harness.h"
#include "harness/mqrig.h"

#include <hwtune/smmu_model.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arch/rseq.h"
#include "cmdq/impl.h"
#include "common/time.h"
#include "device/impl.h"

/* The path an object of `queues` queues (== possible CPUs) gets here. */
static const char *expected_path(void)
{
	return hwt__rseq_unavailable() ? "shared" : "rseq";
}

static struct hwt_smmu_dev *dev_nq(unsigned numq)
{
	struct hwt_smmu_dev_config dc;
	struct hwt_smmu_dev *dev;

	hwt_smmu_dev_config_default(&dc);
	ASSERT_OK(hwt__dev_create_nq(&dev, &dc, numq));
	return dev;
}

TEST(create_refuses_bad_queue_options)
{
	struct hwt_smmu_dev *dev = dev_nq(2);
	struct hwt_cmdq_options o;
	struct hwt_cmdq_info info;
	struct hwt_cmdq *q;

	hwt_cmdq_options_default(&o);
	o.queues = 3; /* more than NUMQ */
	ASSERT_EQ(hwt_cmdq_create(&q, dev, &o), -EINVAL);
	o.queues = 2;
	o.auto_poll = true; /* measures one queue */
	ASSERT_EQ(hwt_cmdq_create(&q, dev, &o), -EINVAL);
	o.queues = HWT_CMDQ_QUEUES_PER_CPU;
	ASSERT_EQ(hwt_cmdq_create(&q, dev, &o), mqrig_ncpus() > 1 ? -EINVAL : 0);
	if (mqrig_ncpus() == 1)
		hwt_cmdq_destroy(q);
	o.auto_poll = false;
	o.queues = 2;
	ASSERT_OK(hwt_cmdq_create(&q, dev, &o));
	ASSERT_EQ(hwt_cmdq_calibrate(q), -EINVAL); /* one queue's measurement */
	hwt_cmdq_get_info(q, &info);
	ASSERT_EQ(info.queues, 2);
	hwt_cmdq_destroy(q);
	o.queues = 1;
	o.auto_poll = true; /* one queue: as before */
	ASSERT_OK(hwt_cmdq_create(&q, dev, &o));
	hwt_cmdq_destroy(q);
	hwt_smmu_dev_destroy(dev);
}

TEST(info_says_queues_and_insert_path)
{
	unsigned n = mqrig_ncpus();
	struct hwt_smmu_dev *dev = dev_nq(n + 1 < HWT__NUMQ_MAX ? n + 1 : HWT__NUMQ_MAX);
	struct hwt_cmdq_options o;
	struct hwt_cmdq_info info;
	struct hwt_cmdq *q;
	char want[64];

	hwt_cmdq_options_default(&o);
	ASSERT_OK(hwt_cmdq_create(&q, dev, &o)); /* queues 0: one queue */
	hwt_cmdq_get_info(q, &info);
	ASSERT_EQ(info.queues, 1);
	ASSERT_STR_EQ(info.insert_path, "shared");
	ASSERT_STR_EQ(info.insert_path_reason, "one queue");
	hwt_cmdq_destroy(q);

	o.queues = HWT_CMDQ_QUEUES_PER_CPU; /* one per possible CPU */
	ASSERT_OK(hwt_cmdq_create(&q, dev, &o));
	hwt_cmdq_get_info(q, &info);
	TLOG("per CPU: %u queues, %s: %s", info.queues, info.insert_path, info.insert_path_reason);
	ASSERT_EQ(info.queues, n);
	if (n > 1) {
		ASSERT_STR_EQ(info.insert_path, expected_path());
		if (hwt__rseq_unavailable())
			ASSERT_STR_EQ(info.insert_path_reason, hwt__rseq_unavailable());
	}
	hwt_cmdq_destroy(q);

	if (n + 1 <= HWT__NUMQ_MAX) { /* more queues than CPUs: shared */
		o.queues = n + 1;
		ASSERT_OK(hwt_cmdq_create(&q, dev, &o));
		hwt_cmdq_get_info(q, &info);
		TLOG("%u: %s: %s", info.queues, info.insert_path, info.insert_path_reason);
		ASSERT_EQ(info.queues, n + 1);
		ASSERT_STR_EQ(info.insert_path, "shared");
		snprintf(want, sizeof(want), "%u queues for %u possible CPUs", n + 1, n);
		ASSERT_TRUE(strstr(info.insert_path_reason, want));
		hwt_cmdq_destroy(q);
	}
	hwt_smmu_dev_destroy(dev);

	/* A device of one queue: per CPU takes it, and says why. */
	if (n > 1) {
		dev = dev_nq(1);
		o.queues = HWT_CMDQ_QUEUES_PER_CPU;
		ASSERT_OK(hwt_cmdq_create(&q, dev, &o));
		hwt_cmdq_get_info(q, &info);
		TLOG("%u: %s: %s", info.queues, info.insert_path, info.insert_path_reason);
		ASSERT_EQ(info.queues, 1);
		ASSERT_STR_EQ(info.insert_path, "shared");
		ASSERT_TRUE(strstr(info.insert_path_reason, "the device has no more"));
		hwt_cmdq_destroy(q);
		hwt_smmu_dev_destroy(dev);
	}
	/* A device with fewer queues than CPUs: per CPU takes what it has. */
	if (n > 2) {
		dev = dev_nq(2);
		o.queues = HWT_CMDQ_QUEUES_PER_CPU;
		ASSERT_OK(hwt_cmdq_create(&q, dev, &o));
		hwt_cmdq_get_info(q, &info);
		TLOG("%u: %s: %s", info.queues, info.insert_path, info.insert_path_reason);
		ASSERT_EQ(info.queues, 2);
		ASSERT_STR_EQ(info.insert_path, "shared");
		ASSERT_TRUE(strstr(info.insert_path_reason, "the device has no more"));
		hwt_cmdq_destroy(q);
		hwt_smmu_dev_destroy(dev);
	}
}

/* --- producers pinned to CPUs ------------------------------------------------ */

struct prod {
	struct mqrig *r;
	unsigned id, cpu, calls;
	int err;
	char why[160];
};

static void *pinned(void *arg)
{
	struct prod *p = arg;
	struct hwt_cmdq_cmd cmds[8];
	uint64_t seq = 0;

	if (!mqrig_pin(p->cpu)) {
		snprintf(p->why, sizeof(p->why), "cannot pin to CPU %u", p->cpu);
		p->err = -EPERM;
		return NULL;
	}
	for (unsigned i = 0; i < p->calls && !p->err; i++) {
		unsigned n = 1 + i % 6;
		bool sync = i % 3 == 2;

		mqrig_cmds(p->r, p->id, seq, cmds, n);
		p->err = hwt_cmdq_issue(p->r->q, cmds, n, sync);
		seq += n;
		/* Its CMD_SYNC: everything of this call has executed. */
		if (!p->err && sync && !mqrig_done(p->r, p->id, seq - 1))
			snprintf(p->why, sizeof(p->why), "sync returned before seq %llu",
				 (unsigned long long)(seq - 1));
	}
	if (!p->err)
		p->err = hwt_cmdq_sync(p->r->q);
	if (!p->err && atomic_load_explicit(&p->r->executed[p->id], memory_order_relaxed) != seq)
		snprintf(p->why, sizeof(p->why), "hwt_cmdq_sync returned with %llu of %llu executed",
			 (unsigned long long)atomic_load_explicit(&p->r->executed[p->id],
								  memory_order_relaxed),
			 (unsigned long long)seq);
	return NULL;
}

static void run_pinned(unsigned numq, unsigned queues, bool disable_msi)
{
	struct mqrig_opt opt = { .numq = numq, .queues = queues, .disable_msi = disable_msi };
	struct mqrig *r = malloc(sizeof(*r));
	struct prod p[4];
	pthread_t t[4];
	struct hwt_cmdq_info info;

	ASSERT_TRUE(r);
	mqrig_up(r, &opt);
	hwt_cmdq_get_info(r->q, &info);
	TLOG("numq %u, queues %u%s: %u queues, %s (%s)", numq, queues, disable_msi ? ", CONS" : "",
	     info.queues, info.insert_path, info.insert_path_reason);
	for (unsigned i = 0; i < 4; i++) {
		p[i] = (struct prod){ .r = r, .id = i, .cpu = i % mqrig_ncpus(), .calls = 3000 };
		ASSERT_OK(pthread_create(&t[i], NULL, pinned, &p[i]));
	}
	for (unsigned i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	for (unsigned i = 0; i < 4; i++) {
		if (p[i].why[0])
			TLOG("producer %u: %s", i, p[i].why);
		ASSERT_OK(p[i].err);
		ASSERT_FALSE(p[i].why[0]);
	}
	/* relaxed: the producers' last syncs (A_MSI / A_CONS) order the counts */
	for (unsigned i = 0; i < r->nq && i < MQRIG_MAXQ; i++)
		TLOG("queue %u: %llu commands", i,
		     (unsigned long long)atomic_load_explicit(&r->per_queue[i],
							      memory_order_relaxed));
	if (mqrig_violation(r))
		TLOG("%s", mqrig_violation(r));
	ASSERT_FALSE(mqrig_violation(r));
	mqrig_down(r);
	free(r);
}

TEST_TIMEOUT(pinned_producers_exactly_once_in_order_per_cpu_queues, 60)
{
	run_pinned(mqrig_ncpus(), HWT_CMDQ_QUEUES_PER_CPU, false);
	run_pinned(mqrig_ncpus(), HWT_CMDQ_QUEUES_PER_CPU, true);
}

TEST_TIMEOUT(pinned_producers_exactly_once_in_order_2_and_3_queues, 60)
{
	run_pinned(4, 2, false);
	run_pinned(4, 3, false);
	run_pinned(4, 3, true);
}

/* --- a sync after a migration ---------------------------------------------- */

static void migration(bool disable_msi)
{
	struct mqrig_opt opt = { .numq = 2, .queues = 2, .disable_msi = disable_msi,
				 .timeout_ns = 200000000 };
	struct mqrig *r = malloc(sizeof(*r));
	struct hwt_cmdq_cmd gate;
	struct hwt_cmdq_info info;
	int err;

	ASSERT_TRUE(r);
	mqrig_up(r, &opt);
	hwt_cmdq_get_info(r->q, &info);
	TLOG("%s path%s", info.insert_path, disable_msi ? ", CONS polling" : "");
	/* release: pairs with the acquire load of r->gate in exec_one() (mqrig.c) */
	atomic_store_explicit(&r->gate, 1, memory_order_release);
	mqrig_gate_cmd(&gate);
	ASSERT_TRUE(mqrig_pin(0));
	ASSERT_OK(hwt_cmdq_issue(r->q, &gate, 1, false)); /* queue 0, held */
	ASSERT_TRUE(mqrig_pin(1));
	/* Queue 1's own CMD_SYNC completes; the command on queue 0 has not
	 * executed, so the sync must not return 0. */
	ASSERT_EQ(hwt_cmdq_sync(r->q), -ETIMEDOUT);
	/* It did reach the device.  Relaxed: the timed-out wait's A_CONS read a
	 * CONS the device published after the try; passed is 0 as the gate
	 * was closed before the issue's R_PROD. */
	ASSERT_TRUE(atomic_load_explicit(&r->gate_tries, memory_order_relaxed) > 0);
	ASSERT_EQ(atomic_load_explicit(&r->gate_passed, memory_order_relaxed), 0);
	atomic_store_explicit(&r->gate, 0, memory_order_release); /* release: as the close above */
	/* Still on CPU 1: queue 0 stayed in the record.  A loaded machine may
	 * take longer than one timeout to run it: a few tries. */
	for (unsigned i = 0; i < 10 && (err = hwt_cmdq_sync(r->q)) == -ETIMEDOUT; i++)
		TLOG("sync after the gate opened: try %u timed out", i);
	if (err)
		TLOG("%s", r->log.text);
	ASSERT_OK(err);
	/* relaxed: A_MSI / A_CONS of the sync order the executor's count */
	ASSERT_EQ(atomic_load_explicit(&r->gate_passed, memory_order_relaxed), 1);
	ASSERT_OK(hwt_cmdq_sync(r->q)); /* nothing left */
	mqrig_down(r);
	free(r);
}

TEST(sync_after_migration_covers_the_queue_left_msi)
{
	mqrig_need_cpus(2);
	migration(false);
}

TEST(sync_after_migration_covers_the_queue_left_cons)
{
	mqrig_need_cpus(2);
	migration(true);
}

/* An error (here a fetch abort that repeats) holds up its own queue only. */
TEST(error_on_one_queue_leaves_the_others_running)
{
	struct mqrig_opt opt = { .numq = 2, .queues = 2, .timeout_ns = 2000000000 };
	struct mqrig *r = malloc(sizeof(*r));
	struct hwt_cmdq_cmd gate, c;

	mqrig_need_cpus(2);
	ASSERT_TRUE(r);
	mqrig_up(r, &opt);
	/* release: pairs with the acquire load of r->gate in exec_one() (mqrig.c) */
	atomic_store_explicit(&r->gate, 1, memory_order_release);
	mqrig_gate_cmd(&gate);
	ASSERT_TRUE(mqrig_pin(0));
	ASSERT_OK(hwt_cmdq_issue(r->q, &gate, 1, false));
	ASSERT_TRUE(mqrig_pin(1));
	for (unsigned i = 0; i < 100; i++) {
		mqrig_cmds(r, 0, i, &c, 1);
		ASSERT_OK(hwt_cmdq_issue(r->q, &c, 1, true)); /* queue 1 runs on */
		ASSERT_TRUE(mqrig_done(r, 0, i));
	}
	ASSERT_EQ(atomic_load_explicit(&r->gate_passed, memory_order_relaxed), 0);
	ASSERT_TRUE(logged(&r->log, "queue 0: CMDQ error"));
	ASSERT_FALSE(logged(&r->log, "queue 1: CMDQ error"));
	atomic_store_explicit(&r->gate, 0, memory_order_release); /* release: as the close above */
	ASSERT_OK(hwt_cmdq_sync(r->q));
	/* relaxed: A_MSI / A_CONS of the sync order the executor's count */
	ASSERT_EQ(atomic_load_explicit(&r->gate_passed, memory_order_relaxed), 1);
	ASSERT_FALSE(mqrig_violation(r));
	mqrig_down(r);
	free(r);
}

/* --- per-thread records ------------------------------------------------------ */

static void *one_issue(void *arg)
{
	struct mqrig *r = arg;
	struct hwt_cmdq_cmd c;
	static _Atomic uint64_t seq;

	/* relaxed: a number of its own is all it takes */
	mqrig_cmds(r, 1, atomic_fetch_add_explicit(&seq, 1, memory_order_relaxed), &c, 1);
	return (void *)(intptr_t)hwt_cmdq_issue(r->q, &c, 1, false); /* exits owing a sync */
}

static unsigned pool_len(struct hwt_cmdq *q)
{
	unsigned n = 0;

	hwt__cmdq_glock();
	for (struct hwt__cmdq_rec *r = q->mq->pool; r; r = r->pnext)
		n++;
	hwt__cmdq_gunlock();
	return n;
}

TEST(records_go_back_to_the_pool_at_thread_exit)
{
	struct mqrig_opt opt = { .numq = 2, .queues = 2 };
	struct mqrig *r = malloc(sizeof(*r));
	void *ret;

	ASSERT_TRUE(r);
	mqrig_up(r, &opt);
	for (unsigned i = 0; i < 50; i++) {
		pthread_t t;

		ASSERT_OK(pthread_create(&t, NULL, one_issue, r));
		pthread_join(t, &ret);
		ASSERT_OK((int)(intptr_t)ret);
		ASSERT_EQ(pool_len(r->q), 1); /* one record, reused by each thread */
	}
	ASSERT_OK(hwt_cmdq_sync(r->q));
	/* relaxed: A_MSI / A_CONS of the sync order the executor's count */
	ASSERT_EQ(atomic_load_explicit(&r->executed[1], memory_order_relaxed), 50);
	mqrig_down(r);
	free(r);
}

struct holder {
	struct mqrig *r;
	pthread_barrier_t b;
	int err;
};

static void *hold(void *arg)
{
	struct holder *h = arg;
	struct hwt_cmdq_cmd c;

	mqrig_cmds(h->r, 2, 0, &c, 1);
	h->err = hwt_cmdq_issue(h->r->q, &c, 1, true);
	pthread_barrier_wait(&h->b); /* issued */
	pthread_barrier_wait(&h->b); /* the object is gone: exit with its record */
	return NULL;
}

/* A thread that outlives the object frees its record at exit; a new
 * object at the same address gets a record of its own. */
TEST(a_thread_outliving_its_object)
{
	struct mqrig_opt opt = { .numq = 2, .queues = 2 };
	struct mqrig *r = malloc(sizeof(*r));
	struct holder h = { .r = r };
	struct hwt_cmdq_cmd c;
	pthread_t t;

	ASSERT_TRUE(r);
	mqrig_up(r, &opt);
	pthread_barrier_init(&h.b, NULL, 2);
	ASSERT_OK(pthread_create(&t, NULL, hold, &h));
	pthread_barrier_wait(&h.b);
	ASSERT_OK(h.err);
	mqrig_cmds(r, 3, 0, &c, 1);
	ASSERT_OK(hwt_cmdq_issue(r->q, &c, 1, false)); /* this thread has one too */
	mqrig_down(r);
	pthread_barrier_wait(&h.b);
	pthread_join(t, NULL);
	mqrig_up(r, &opt); /* a new object; this thread's old record is dropped */
	mqrig_cmds(r, 3, 0, &c, 1);
	ASSERT_OK(hwt_cmdq_issue(r->q, &c, 1, true));
	ASSERT_EQ(hwt__cmdq_rec(r->q)->nused, 0);
	mqrig_down(r);
	pthread_barrier_destroy(&h.b);
	free(r);
}

TEST(the_record_follows_issue_and_sync)
{
	struct mqrig_opt opt = { .numq = 2, .queues = 2 };
	struct mqrig *r = malloc(sizeof(*r));
	struct hwt__cmdq_rec *rec;
	struct hwt_cmdq_cmd c;

	mqrig_need_cpus(2);
	ASSERT_TRUE(r);
	mqrig_up(r, &opt);
	ASSERT_OK(hwt_cmdq_sync(r->q)); /* an empty record: a CMD_SYNC on this CPU's queue */
	rec = hwt__cmdq_rec(r->q);
	ASSERT_EQ(rec->nused, 0);
	ASSERT_TRUE(mqrig_pin(0));
	mqrig_cmds(r, 0, 0, &c, 1);
	ASSERT_OK(hwt_cmdq_issue(r->q, &c, 1, false));
	ASSERT_EQ(rec->nused, 1);
	ASSERT_TRUE(rec->used[0] & 1);
	ASSERT_TRUE(mqrig_pin(1));
	mqrig_cmds(r, 0, 1, &c, 1);
	ASSERT_OK(hwt_cmdq_issue(r->q, &c, 1, false));
	ASSERT_EQ(rec->nused, 2);
	mqrig_cmds(r, 0, 2, &c, 1);
	ASSERT_OK(hwt_cmdq_issue(r->q, &c, 1, true)); /* covers queue 1 only */
	ASSERT_EQ(rec->nused, 1);
	ASSERT_TRUE(rec->used[0] & 1);
	ASSERT_OK(hwt_cmdq_sync(r->q));
	ASSERT_EQ(rec->nused, 0);
	/* relaxed: A_MSI / A_CONS of the sync order the executor's count */
	ASSERT_EQ(atomic_load_explicit(&r->executed[0], memory_order_relaxed), 3);
	mqrig_down(r);
	free(r);
}

/* --- rseq path, MSI polling: the CMD_SYNC's own slot ------------------------ */

#define MQ_SHIFT 8 /* mqrig's default queue size */

/* The two dwords of queue qi's slot at position pos (device-written:
 * acquire, as the waiter's A_MSI). */
static uint64_t slot_dw(struct mqrig *r, unsigned qi, uint32_t pos, unsigned dw)
{
	const uint64_t *m = (const uint64_t *)r->qmem[qi] + 2 * hwt__q_idx(MQ_SHIFT, pos);

	return __atomic_load_n(&m[dw], __ATOMIC_ACQUIRE);
}

/* A wait that gives up leaves its CMD_SYNC in its slot, MSIADDR = that
 * slot's IOVA (stored by the section): the late MSI lands there, and the
 * next sync on the queue completes as usual. */
TEST(rseq_a_late_msi_lands_in_the_abandoned_slot)
{
	struct mqrig_opt opt = { .per_cpu = true, .timeout_ns = 100000000 };
	struct mqrig *r = malloc(sizeof(*r));
	uint32_t pos;

	mqrig_up_rseq(r, &opt);
	ASSERT_OK(hwt_cmdq_sync(r->q));
	pos = hwt__reg_q_read_prod(r->q->regs, 0); /* where the next CMD_SYNC goes */
	ASSERT_OK(hwt_smmu_dev_pause(r->dev));
	ASSERT_EQ(hwt_cmdq_sync(r->q), -ETIMEDOUT);
	ASSERT_TRUE(logged(&r->log, "CMD_SYNC timeout"));
	ASSERT_EQ(hwt__reg_q_read_prod(r->q->regs, 0), hwt__q_inc(MQ_SHIFT, pos, 1));
	ASSERT_EQ(slot_dw(r, 0, pos, 0) & 0xff, HWT_SMMU_OP_CMD_SYNC);
	ASSERT_EQ(slot_dw(r, 0, pos, 1), r->q->sub[0]->iova + 16 * hwt__q_idx(MQ_SHIFT, pos));
	ASSERT_OK(hwt_smmu_dev_resume(r->dev));
	ASSERT_OK(hwt_cmdq_sync(r->q)); /* after the abandoned one, same queue */
	ASSERT_EQ(slot_dw(r, 0, pos, 0), 0); /* the late MSI: MSIDATA 0 over the opcode */
	mqrig_down(r);
	free(r);
}

/* The lapped waiter: a thread is held (a signal handler that waits) after
 * its commit, while its CMD_SYNC is not done (device paused); then the
 * device runs and another producer of the same CPU laps the queue twice,
 * so that the waiter's slot holds a plain command when it looks again.
 * It must return 0, and only with its commands executed. */
static _Atomic int held; /* 1: in the handler, 2: let go */

static void on_hold(int sig)
{
	(void)sig;
	atomic_store_explicit(&held, 1, memory_order_release);
	/* bounded: 5 s */
	for (unsigned i = 0; i < 50000 && atomic_load_explicit(&held, memory_order_acquire) == 1; i++)
		nanosleep(&(struct timespec){ .tv_nsec = 100000 }, NULL);
}

struct lapped {
	struct mqrig *r;
	int err;
	bool done;
	_Atomic bool returned;
};

static void *lapped_waiter(void *arg)
{
	struct lapped *w = arg;
	struct hwt_cmdq_cmd c[2];

	if (!mqrig_pin(0)) {
		w->err = -EPERM;
		return NULL;
	}
	mqrig_cmds(w->r, 0, 0, c, 2);
	w->err = hwt_cmdq_issue(w->r->q, c, 2, true);
	w->done = mqrig_done(w->r, 0, 0) && mqrig_done(w->r, 0, 1);
	atomic_store_explicit(&w->returned, true, memory_order_release);
	return NULL;
}

/* Bounded: until queue 0's PROD is p (5 s). */
static bool prod_reaches(struct mqrig *r, uint32_t p)
{
	for (unsigned i = 0; i < 50000; i++) {
		if (hwt__reg_q_read_prod(r->q->regs, 0) == p)
			return true;
		nanosleep(&(struct timespec){ .tv_nsec = 100000 }, NULL);
	}
	return false;
}

TEST_TIMEOUT(rseq_a_waiter_lapped_in_its_wait_returns_after_its_sync, 60)
{
	struct mqrig_opt opt = { .per_cpu = true, .timeout_ns = 5000000000ull };
	struct mqrig *r = malloc(sizeof(*r));
	struct sigaction sa = { .sa_handler = on_hold }, old;
	struct lapped w = { 0 };
	struct hwt_cmdq_cmd c;
	uint32_t p0, spos;
	uint64_t mine, seq = 0, n = 2 * (1u << MQ_SHIFT) + 10;
	pthread_t t;

	mqrig_up_rseq(r, &opt);
	sigemptyset(&sa.sa_mask);
	ASSERT_OK(sigaction(SIGUSR2, &sa, &old));
	atomic_store_explicit(&held, 0, memory_order_relaxed); /* pthread_create publishes it */
	w.r = r;
	p0 = hwt__reg_q_read_prod(r->q->regs, 0);
	spos = hwt__q_inc(MQ_SHIFT, p0, 2); /* the waiter's CMD_SYNC */
	ASSERT_OK(hwt_smmu_dev_pause(r->dev));
	ASSERT_OK(pthread_create(&t, NULL, lapped_waiter, &w));
	ASSERT_TRUE(prod_reaches(r, hwt__q_inc(MQ_SHIFT, p0, 3))); /* it committed */
	mine = slot_dw(r, 0, spos, 0);
	ASSERT_EQ(mine & 0xff, HWT_SMMU_OP_CMD_SYNC);
	ASSERT_OK(pthread_kill(t, SIGUSR2));
	/* held: acquire, pairs with the release store in on_hold(); returned:
	 * relaxed, loaded again with acquire below */
	for (unsigned i = 0;
	     i < 50000 && atomic_load_explicit(&held, memory_order_acquire) != 1 &&
	     !atomic_load_explicit(&w.returned, memory_order_relaxed);
	     i++)
		nanosleep(&(struct timespec){ .tv_nsec = 100000 }, NULL);
	if (atomic_load_explicit(&w.returned, memory_order_acquire)) {
		pthread_join(t, NULL);
		TLOG("the waiter returned %d with the device paused, its commands %s", w.err,
		     w.done ? "executed" : "not executed");
		ASSERT_TRUE(w.err || w.done); /* never 0 before its sync */
		ASSERT_TRUE(false);           /* and it cannot have completed */
	}
	ASSERT_EQ(atomic_load_explicit(&held, memory_order_relaxed), 1); /* the loop's acquire */
	ASSERT_FALSE(mqrig_done(r, 0, 0));
	ASSERT_OK(hwt_smmu_dev_resume(r->dev));
	/* Producer 1, same CPU, same queue: single commands, two laps and a
	 * bit (the waiter's slot is reused twice, last by a plain command),
	 * then a CMD_SYNC that lands in another slot. */
	for (; seq < n; seq++) {
		mqrig_cmds(r, 1, seq, &c, 1);
		ASSERT_OK(hwt_cmdq_issue(r->q, &c, 1, false));
	}
	ASSERT_OK(hwt_cmdq_sync(r->q));
	/* relaxed: A_MSI / A_CONS of the sync order the executor's count */
	ASSERT_EQ(atomic_load_explicit(&r->executed[1], memory_order_relaxed), n);
	TLOG("the waiter's slot: 0x%016llx, its CMD_SYNC was 0x%016llx",
	     (unsigned long long)slot_dw(r, 0, spos, 0), (unsigned long long)mine);
	/* reused: a command, neither its sync nor an MSI */
	ASSERT_EQ(slot_dw(r, 0, spos, 0) & 0xff, MQRIG_OP);
	/* still held through it all (only on_hold() stores 1) */
	ASSERT_EQ(atomic_load_explicit(&held, memory_order_relaxed), 1);
	atomic_store_explicit(&held, 2, memory_order_release);
	pthread_join(t, NULL);
	ASSERT_OK(sigaction(SIGUSR2, &old, NULL));
	if (w.err)
		TLOG("log: %s", r->log.text);
	ASSERT_OK(w.err);
	ASSERT_TRUE(w.done);
	ASSERT_FALSE(mqrig_violation(r));
	mqrig_down(r);
	free(r);
}

/* Occurrences of s in the log (log_hook). */
static unsigned log_count(struct logbuf *l, const char *s)
{
	unsigned n = 0;

	pthread_mutex_lock(&l->lock);
	for (const char *p = l->text; (p = strstr(p, s)); p += strlen(s))
		n++;
	pthread_mutex_unlock(&l->lock);
	return n;
}

/* A sync whose own queue times out waits on that queue once, within the
 * call's one deadline: the failed queue stays owed to the next sync, it is
 * not waited on a second time as "another queue used" (both paths). */
TEST(a_failed_sync_waits_on_its_queue_once)
{
	struct mqrig_opt opt = { .per_cpu = true, .timeout_ns = 150000000 };
	struct mqrig *r = malloc(sizeof(*r));
	struct hwt_cmdq_info info;
	uint64_t t0, took;

	mqrig_need_cpus(2);
	ASSERT_TRUE(r);
	mqrig_up(r, &opt);
	hwt_cmdq_get_info(r->q, &info);
	ASSERT_STR_EQ(info.insert_path, expected_path());
	ASSERT_TRUE(mqrig_pin(1));
	ASSERT_OK(hwt_cmdq_sync(r->q));
	ASSERT_OK(hwt_smmu_dev_pause(r->dev));
	t0 = hwt__now_ns();
	ASSERT_EQ(hwt_cmdq_sync(r->q), -ETIMEDOUT);
	took = hwt__now_ns() - t0;
	TLOG("%s path: the sync gave up after %llu ms; log: %s", info.insert_path,
	     (unsigned long long)(took / 1000000), r->log.text);
	ASSERT_EQ(log_count(&r->log, "timeout"), 1);
	ASSERT_TRUE(took < 2 * opt.timeout_ns); /* one deadline (2x: a second wait) */
	ASSERT_OK(hwt_smmu_dev_resume(r->dev));
	ASSERT_OK(hwt_cmdq_sync(r->q)); /* what was owed, confirmed */
	ASSERT_EQ(hwt__cmdq_rec(r->q)->nused, 0);
	mqrig_down(r);
	free(r);
}
