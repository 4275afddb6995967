/* SPDX-License-Identifier: MIT */
/*
 * Several command queues under a restart storm (docs/percpu-queues.md,
 * sections 2-4): unpinned producers on one queue object while a helper
 * thread moves them between CPUs (sched_setaffinity on their thread ids)
 * and another sends them SIGUSR1 without pause.  On the rseq path every
 * move and every signal inside a section restarts it; on the shared path
 * they preempt producers anywhere in the multi-producer protocol.
 *
 * Checked: exactly once and order per queue (the recording executor,
 * harness/mqrig.h); after hwt_cmdq_issue(.., sync) == 0 the call's last
 * command has executed; after hwt_cmdq_sync() == 0 every command the
 * producer issued has (whatever queues it went to); every call returns 0
 * (1-5 s deadlines: no timeout under the storm); at the end every command
 * executed.  Storm runs also hold queues up now and then: producer 0 puts
 * a gate command (mqrig.h: it fails with CERROR_ABT, so its queue stops,
 * while the gate is closed) before some of its calls, a gatekeeper closes
 * the gate for 200 us at a time, and producers move themselves to another
 * CPU between an issue without sync and hwt_cmdq_sync, so that a sync
 * that forgets a queue left behind returns while commands wait there.
 *
 * Configs: one queue per CPU with MSI and with CONS polling (rseq where
 * registered: run again under GLIBC_TUNABLES=glibc.pthread.rseq=0 for the
 * shared path), the same with every rseq insertion published as after a
 * move (the thread pins itself to the CPU it inserted on, then gets its
 * mask back), and 3 queues on a device of 4 (shared path, queue 2 never
 * chosen on 2 CPUs).  HWT_STRESS_MS sets each run's time (default 400).
 *
 * On broken code: built with -DHWT_CMDQ_BROKEN_SYNC_ONE_QUEUE (a sync that
 * covers the current queue only) the sync check fails; with the rseq
 * section's broken commit (PROD stored before the entries, rseq.S's
 * HWT_RSEQ_BROKEN_COMMIT) the executor sees duplicates or foreign entries.
 */
#include "harness/harness.h"
#include "harness/mqrig.h"

#include <hwtune/hwtune.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cmdq/impl.h"
#include "common/time.h"

#define NPROD 8
#define MAXN 16 /* commands per call, at most */

struct storm {
	struct mqrig r;
	uint64_t end_ns;
	unsigned min_calls;
	_Atomic unsigned running;          /* producers still running */
	_Atomic pid_t tid[NPROD];
	_Atomic uint64_t signals, moves, calls, syncs;
	struct tst_why bad;                /* sync semantics broken */
	bool gated;                        /* gate commands and a gatekeeper */
	unsigned ncpu;
};

struct producer {
	struct storm *s;
	unsigned id;
	int err;
	const char *what; /* the call that failed */
	uint64_t issued;
};

static uint64_t stress_ms(void)
{
	const char *e = getenv("HWT_STRESS_MS");

	return e && *e ? strtoull(e, NULL, 10) : 400;
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void *produce(void *arg)
{
	struct producer *pr = arg;
	struct storm *s = pr->s;
	struct mqrig *r = &s->r;
	struct hwt_cmdq_cmd cmds[MAXN + 1];
	uint64_t x = 0x9e3779b97f4a7c15ull * (pr->id + 1), seq = 0;
	unsigned calls = 0;

	atomic_store_explicit(&s->tid[pr->id], (pid_t)syscall(SYS_gettid), memory_order_release);
	while (!pr->err && seq + MAXN < r->cap &&
	       (hwt__now_ns() < s->end_ns || calls < s->min_calls)) {
		uint64_t v = rnd(&x);
		unsigned n = (unsigned)(v % (MAXN + 1));
		bool sync = v >> 8 & 1;

		calls++;
		if (s->gated && (v >> 24 & 15) == 0) {
			/* Move ourselves, then sync: the queue left behind
			 * may be held up at a gate. */
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET((unsigned)(sched_getcpu() + 1) % s->ncpu, &set);
			sched_setaffinity(0, sizeof(set), &set);
			v &= ~(7ull << 16);
		}
		if ((v >> 16 & 7) == 0) { /* hwt_cmdq_sync: every queue we used */
			uint64_t done;

			pr->err = hwt_cmdq_sync(r->q);
			pr->what = "hwt_cmdq_sync";
			atomic_fetch_add_explicit(&s->syncs, 1, memory_order_relaxed);
			/* A_MSI / A_CONS of the sync order the executor's count. */
			done = atomic_load_explicit(&r->executed[pr->id], memory_order_relaxed);
			if (!pr->err && done != seq)
				tst_note(&s->bad, "producer %u: hwt_cmdq_sync returned 0 with %llu of %llu "
					 "commands executed", pr->id, (unsigned long long)done,
					 (unsigned long long)seq);
			continue;
		}
		if (!n && !sync)
			continue;
		if (s->gated && pr->id == 0 && !sync && (v >> 28 & 3) == 0) {
			mqrig_gate_cmd(&cmds[0]); /* holds up the rest while closed */
			mqrig_cmds(r, pr->id, seq, cmds + 1, n);
			pr->err = hwt_cmdq_issue(r->q, cmds, n + 1, false);
		} else {
			mqrig_cmds(r, pr->id, seq, cmds, n);
			pr->err = hwt_cmdq_issue(r->q, cmds, n, sync);
		}
		pr->what = "hwt_cmdq_issue";
		seq += n;
		atomic_fetch_add_explicit(&s->calls, 1, memory_order_relaxed);
		if (!pr->err && sync && n && !mqrig_done(r, pr->id, seq - 1))
			tst_note(&s->bad, "producer %u: issue(sync) returned 0 before its command %llu "
				 "executed", pr->id, (unsigned long long)(seq - 1));
	}
	if (!pr->err) {
		uint64_t done;

		pr->err = hwt_cmdq_sync(r->q);
		pr->what = "the last hwt_cmdq_sync";
		done = atomic_load_explicit(&r->executed[pr->id], memory_order_relaxed);
		if (!pr->err && done != seq)
			tst_note(&s->bad, "producer %u: the last hwt_cmdq_sync returned 0 with %llu of %llu "
				 "executed", pr->id, (unsigned long long)done,
				 (unsigned long long)seq);
	}
	pr->issued = seq;
	atomic_fetch_sub_explicit(&s->running, 1, memory_order_release);
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
}

/* Signals at the producers (through their thread ids: a producer that has
 * exited is skipped, its id 0). */
static void *signaller(void *arg)
{
	struct storm *s = arg;
	pid_t pid = getpid();

	for (unsigned i = 0; atomic_load_explicit(&s->running, memory_order_acquire) > 0; i++) {
		pid_t t = atomic_load_explicit(&s->tid[i % NPROD], memory_order_acquire);

		if (t > 0 && syscall(SYS_tgkill, pid, t, SIGUSR1) == 0)
			atomic_fetch_add_explicit(&s->signals, 1, memory_order_relaxed);
		if (i % 64 == 63)
			sched_yield(); /* 2 CPUs: let the producers run */
	}
	return NULL;
}

/* Moves: each producer in turn to one CPU, the next CPU each time, now and
 * then to all of them. */
static void *mover(void *arg)
{
	struct storm *s = arg;
	cpu_set_t all;
	unsigned ncpu;

	ASSERT_OK(sched_getaffinity(0, sizeof(all), &all));
	ncpu = (unsigned)CPU_COUNT(&all);
	for (unsigned i = 0; atomic_load_explicit(&s->running, memory_order_acquire) > 0; i++) {
		pid_t t = atomic_load_explicit(&s->tid[i % NPROD], memory_order_acquire);
		cpu_set_t set;
		unsigned want = (i / NPROD + i) % ncpu, c = 0;

		CPU_ZERO(&set);
		for (unsigned k = 0; k < CPU_SETSIZE; k++)
			if (CPU_ISSET(k, &all) && c++ == want)
				CPU_SET(k, &set);
		if (t > 0 && sched_setaffinity(t, sizeof(set), i % 16 == 15 ? &all : &set) == 0)
			atomic_fetch_add_explicit(&s->moves, 1, memory_order_relaxed);
		nanosleep(&(struct timespec){ .tv_nsec = 20000 }, NULL);
	}
	return NULL;
}

/* Closes the gate for 200 us, opens it for 300 us, until the producers are
 * done; leaves it open. */
static void *gatekeeper(void *arg)
{
	struct storm *s = arg;

	while (atomic_load_explicit(&s->running, memory_order_acquire) > 0) {
		/* release: pairs with the acquire load of r->gate in exec_one() (mqrig.c) */
		atomic_store_explicit(&s->r.gate, 1, memory_order_release);
		nanosleep(&(struct timespec){ .tv_nsec = 200000 }, NULL);
		atomic_store_explicit(&s->r.gate, 0, memory_order_release);
		nanosleep(&(struct timespec){ .tv_nsec = 300000 }, NULL);
	}
	return NULL;
}

static void storm_run(unsigned numq, unsigned queues, bool disable_msi, bool storm, bool moved)
{
	struct mqrig_opt opt = { .numq = numq, .queues = queues, .disable_msi = disable_msi,
				 .timeout_ns = 5000000000ull, .cap = 1ull << 21 };
	struct storm *s = calloc(1, sizeof(*s));
	struct producer pr[NPROD];
	pthread_t t[NPROD], sig_th, mov_th, gate_th;
	struct hwt_smmu_dev_stats st;
	struct hwt_cmdq_info info;
	uint64_t total = 0, per_q[MQRIG_MAXQ];
	unsigned passed, tries;
	const char *v;
	char qs[128] = "";
	size_t len = 0;

	ASSERT_TRUE(s);
	tst_why_init(&s->bad);
	mqrig_up(&s->r, &opt);
	hwt_cmdq_get_info(s->r.q, &info);
	if (moved) /* every insertion publishes as after a move */
		mqrig_moved(&s->r, ~0u);
	s->gated = storm;
	s->ncpu = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	s->min_calls = 200;
	s->end_ns = hwt__now_ns() + stress_ms() * 1000000ull;
	atomic_store_explicit(&s->running, NPROD, memory_order_relaxed);
	if (storm) {
		struct sigaction sa = { .sa_handler = on_usr1 }; /* no SA_RESTART: EINTR everywhere */

		sigemptyset(&sa.sa_mask);
		ASSERT_OK(sigaction(SIGUSR1, &sa, NULL));
	}
	for (unsigned i = 0; i < NPROD; i++) {
		pr[i] = (struct producer){ .s = s, .id = i };
		ASSERT_EQ(pthread_create(&t[i], NULL, produce, &pr[i]), 0);
	}
	if (storm) {
		ASSERT_EQ(pthread_create(&sig_th, NULL, signaller, s), 0);
		ASSERT_EQ(pthread_create(&mov_th, NULL, mover, s), 0);
		ASSERT_EQ(pthread_create(&gate_th, NULL, gatekeeper, s), 0);
	}
	for (unsigned i = 0; i < NPROD; i++)
		pthread_join(t[i], NULL);
	if (storm) {
		pthread_join(sig_th, NULL);
		pthread_join(mov_th, NULL);
		pthread_join(gate_th, NULL);
	}
	if (moved && !strcmp(info.insert_path, "rseq")) {
		uint64_t pins = atomic_load_explicit(&s->r.q->mq->pins, memory_order_relaxed);

		TLOG("%llu publishes pinned to the CPU of their insertion", (unsigned long long)pins);
		ASSERT_GT(pins, 0);
	}
	hwt_smmu_dev_get_stats(s->r.dev, &st);
	for (unsigned i = 0; i < s->r.nq && i < MQRIG_MAXQ; i++) {
		per_q[i] = atomic_load_explicit(&s->r.per_queue[i], memory_order_relaxed);
		len += (size_t)snprintf(qs + len, sizeof(qs) - len, "%s%llu", i ? "/" : "",
					(unsigned long long)per_q[i]);
	}
	/* Relaxed, as the counters above: every thread that counts is joined,
	 * the executor's gate counts ordered by producer 0's last sync. */
	passed = atomic_load_explicit(&s->r.gate_passed, memory_order_relaxed);
	tries = atomic_load_explicit(&s->r.gate_tries, memory_order_relaxed);
	TLOG("%u queues of %u, %s path, %s%s%s: %llu calls, %llu hwt_cmdq_sync, %llu signals, %llu moves, "
	     "%u gates (%u refusals); commands per queue %s", info.queues, numq, info.insert_path,
	     disable_msi ? "CONS" : "MSI", storm ? ", storm" : "", moved ? ", moved" : "",
	     (unsigned long long)atomic_load_explicit(&s->calls, memory_order_relaxed),
	     (unsigned long long)atomic_load_explicit(&s->syncs, memory_order_relaxed),
	     (unsigned long long)atomic_load_explicit(&s->signals, memory_order_relaxed),
	     (unsigned long long)atomic_load_explicit(&s->moves, memory_order_relaxed), passed,
	     tries - passed, qs);
	/* What the executor saw first (a duplicate explains a timeout). */
	v = mqrig_violation(&s->r);
	if (v)
		hwt_test_fail(__FILE__, __LINE__, "%s path: executor: %s", info.insert_path, v);
	if (tst_why_first(&s->bad))
		hwt_test_fail(__FILE__, __LINE__, "%s path: %u sync violations, first: %s",
			      info.insert_path, tst_why_count(&s->bad), tst_why_first(&s->bad));
	for (unsigned i = 0; i < NPROD; i++) {
		uint64_t done = atomic_load_explicit(&s->r.executed[i], memory_order_relaxed);

		if (pr[i].err)
			hwt_test_fail(__FILE__, __LINE__, "%s path: producer %u: %s: %s", info.insert_path, i,
				      pr[i].what, strerror(-pr[i].err));
		if (done != pr[i].issued)
			hwt_test_fail(__FILE__, __LINE__, "%s path: producer %u: %llu commands executed "
				      "of %llu issued", info.insert_path, i, (unsigned long long)done,
				      (unsigned long long)pr[i].issued);
		total += pr[i].issued;
	}
	ASSERT_EQ(st.cmds - st.syncs, total + passed);
	ASSERT_EQ(st.errors, tries - passed); /* the gate's refusals only */
	mqrig_down(&s->r);
	free(s);
}

static unsigned cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	return n > 0 ? (unsigned)n : 1;
}

TEST_TIMEOUT(storm_per_cpu_msi, 120)
{
	storm_run(cpus(), HWT_CMDQ_QUEUES_PER_CPU, false, false, false);
	storm_run(cpus(), HWT_CMDQ_QUEUES_PER_CPU, false, true, false);
}

TEST_TIMEOUT(storm_per_cpu_cons, 120)
{
	storm_run(cpus(), HWT_CMDQ_QUEUES_PER_CPU, true, false, false);
	storm_run(cpus(), HWT_CMDQ_QUEUES_PER_CPU, true, true, false);
}

/* The rseq path's second step taken as after a move on every insertion
 * (mqrig_moved): the thread pins itself to the CPU it inserted on
 * to publish there (percpu.c publish_on), with its mask restored after,
 * while the storm moves it. */
TEST_TIMEOUT(storm_per_cpu_moved, 120)
{
	storm_run(cpus(), HWT_CMDQ_QUEUES_PER_CPU, false, true, true);
	storm_run(cpus(), HWT_CMDQ_QUEUES_PER_CPU, true, true, true);
}

TEST_TIMEOUT(storm_three_queues_shared, 120)
{
	storm_run(4, 3, false, true, false);
	storm_run(4, 3, true, true, false);
}
