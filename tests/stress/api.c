/* SPDX-License-Identifier: MIT */
/*
 * Randomized stress through the public headers only: random producer counts
 * (1-16 on however many CPUs), queue sizes, completion modes (MSI, CONS,
 * auto), calls of 0-200 commands with or without a CMD_SYNC, sync-only
 * calls and the batch API, random yields and sleeps, device pause/resume
 * and injected faults.  Every run prints its seed (HWT_STRESS_SEED=...
 * replays it); HWT_STRESS_MS sets the time per scenario and
 * HWT_STRESS_SCENARIOS their number (make soak).
 *
 * The second scenario of every four, and one in three of the others (not
 * with auto), run on several command queues
 * (.queues = HWT_CMDQ_QUEUES_PER_CPU: the rseq path where glibc registered
 * rseq, else the shared path on each queue; the log says which), with
 * producers that move between CPUs now and then (sched_setaffinity), so
 * that a producer's commands land on several queues between its syncs.
 *
 * Invariants: every command executes at most once and, per producer, in
 * order (the handler checks rising sequence numbers; on several queues,
 * which keep no order between them, it checks each number once); a
 * successful CMD_SYNC means everything its producer issued before it
 * executed (on several queues: every number up to it is marked done); every
 * command of a call that succeeded executes (checked at the end); no call
 * outlives its deadline by more than half; a paused device makes syncs fail
 * within the deadline + 50% and the queue works correctly afterwards.
 */
#include "harness/harness.h"

#include <hwtune/hwtune.h>
#include <hwtune/smmu_model.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXP 16
#define MAXN 200
#define SEQ_BITS 40
#define MAXSEQ (1u << 22) /* per producer and scenario; a scenario stops here */
#define OP 0x01           /* executed by our handler */
#define ATC_OP 0x40       /* ATC_INV: arms the injected ATC timeout */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	nanosleep(&ts, NULL);
}

/* xorshift64*: one generator per thread, seeded from the scenario's. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

static unsigned below(uint64_t *s, unsigned n)
{
	return (unsigned)(rnd(s) % n);
}

struct scen {
	struct hwt_smmu_dev *dev;
	struct hwt_cmdq *q;
	unsigned nprod, entries;
	bool multi; /* several queues: no order between them */
	uint64_t timeout_ns, end_ns;
	_Atomic bool stop;
	/* handler side: written by the device thread only */
	uint64_t next[MAXP];        /* lowest sequence number not yet seen */
	_Atomic uint64_t last[MAXP]; /* last executed + 1 (read after a sync) */
	_Atomic uint8_t *done[MAXP]; /* executed bitmap, MAXSEQ bits */
	_Atomic unsigned violations;
	char why[200];
	/* totals */
	_Atomic uint64_t calls, syncs, failed, cmds;
};

static void violation(struct scen *s, const char *fmt, unsigned p, uint64_t a, uint64_t b)
{
	if (atomic_fetch_add_explicit(&s->violations, 1, memory_order_relaxed) == 0)
		snprintf(s->why, sizeof(s->why), fmt, p, (unsigned long long)a,
			 (unsigned long long)b);
}

static int handler(void *ctx, const uint64_t dw[2])
{
	struct scen *s = ctx;
	unsigned p = (unsigned)(dw[1] >> SEQ_BITS);
	uint64_t seq = dw[1] & ((1ull << SEQ_BITS) - 1);

	if (p >= s->nprod || seq >= MAXSEQ) {
		violation(s, "foreign command: producer %u seq %llu (%llu)", p, seq, 0);
		return HWT_SMMU_CERROR_NONE;
	}
	/* Gaps are allowed (a call that failed may not have queued its
	 * commands); going back is a duplicate or a reordering.  Relaxed: a
	 * producer reads the bitmap after its CMD_SYNC completed. */
	if (atomic_fetch_or_explicit(&s->done[p][seq / 8], (uint8_t)(1u << (seq % 8)),
				     memory_order_relaxed) >> (seq % 8) & 1)
		violation(s, "producer %u: seq %llu executed twice (%llu)", p, seq, 0);
	else if (!s->multi && seq < s->next[p])
		violation(s, "producer %u: seq %llu executed after %llu", p, seq, s->next[p] - 1);
	if (seq >= s->next[p])
		s->next[p] = seq + 1;
	/* relaxed: a producer reads it after its CMD_SYNC completed, which
	 * orders it (the sync's A_MSI/A_CONS) */
	atomic_store_explicit(&s->last[p], seq + 1, memory_order_relaxed);
	return HWT_SMMU_CERROR_NONE;
}

struct prod {
	struct scen *s;
	unsigned id;
	uint64_t rng, seq;
	uint8_t *sure; /* bitmap: seq issued by a call that succeeded */
	uint64_t sure_top; /* seq after the last call that succeeded */
	uint64_t checked;  /* several queues: sure seqs below it were seen done */
	int fatal;     /* an error other than a timeout */
	struct hwt_cmdq_batch b;
	struct hwt_cmdq_cmd c[MAXN];
};

static void mark(struct prod *pr, uint64_t from, uint64_t to)
{
	for (uint64_t i = from; i < to; i++)
		pr->sure[i / 8] |= (uint8_t)(1u << (i % 8));
}

static void make_cmd(struct prod *pr, struct hwt_cmdq_cmd *c)
{
	c->dw[0] = below(&pr->rng, 16) ? OP : ATC_OP;
	c->dw[1] = (uint64_t)pr->id << SEQ_BITS | pr->seq++;
}

static bool seen_done(struct scen *s, unsigned p, uint64_t i)
{
	return atomic_load_explicit(&s->done[p][i / 8], memory_order_relaxed) >> (i % 8) & 1;
}

/* One call's result: 0 or -ETIMEDOUT (device paused too long) are fine. */
static void account(struct prod *pr, int err, uint64_t t0, uint64_t from, bool sync,
		    const char *kind)
{
	struct scen *s = pr->s;
	uint64_t took = now_ns() - t0;

	atomic_fetch_add_explicit(&s->calls, 1, memory_order_relaxed);
	/* the watchdog: generous, since 16 producers share 2 CPUs (the paused
	 * device phase checks the deadline itself, +50%) */
	if (took > 2 * s->timeout_ns + 1000000000u)
		violation(s, "producer %u: a call took %llu ns (timeout %llu)", pr->id, took,
			  s->timeout_ns);
	if (err) {
		atomic_fetch_add_explicit(&s->failed, 1, memory_order_relaxed);
		if (err != -ETIMEDOUT && !pr->fatal)
			pr->fatal = err;
		return;
	}
	mark(pr, from, pr->seq);
	if (pr->seq != from) /* not a sync-only call: those after failed calls would
			      * count the failed calls' never-queued commands */
		pr->sure_top = pr->seq;
	atomic_fetch_add_explicit(&s->cmds, pr->seq - from, memory_order_relaxed);
	if (sync) {
		uint64_t last = atomic_load_explicit(&s->last[pr->id], memory_order_relaxed);

		atomic_fetch_add_explicit(&s->syncs, 1, memory_order_relaxed);
		/* everything this producer queued so far executed (in order, so
		 * the last number says it; commands of calls that failed may
		 * never have been queued, those of calls that succeeded were).
		 * On several queues a sync-only call covers every queue (every
		 * sure number is marked done), an issue its own queue (its own
		 * commands are), a batch's flushes any queue (not checked). */
		if (s->multi && !strcmp(kind, "sync")) {
			for (; pr->checked < pr->sure_top; pr->checked++)
				if ((pr->sure[pr->checked / 8] >> (pr->checked % 8) & 1) &&
				    !seen_done(s, pr->id, pr->checked))
					break;
			last = pr->checked;
		} else if (s->multi) {
			for (last = from; last < pr->seq && seen_done(s, pr->id, last); last++)
				;
			if (strcmp(kind, "batch") && last < pr->seq)
				violation(s, "producer %u: its call's CMD_SYNC returned at %llu of %llu",
					  pr->id, last, pr->seq);
			last = pr->sure_top; /* the rest is a sync's to check */
		}
		if (pr->sure_top && last < pr->sure_top) {
			char fmt[96];

			snprintf(fmt, sizeof(fmt), "producer %%u: CMD_SYNC (%s, from %llu) returned at "
				 "%%llu of %%llu", kind, (unsigned long long)from);
			violation(s, fmt, pr->id, last, pr->sure_top);
		}
	}
}

/* The CPUs the test may use (the main thread's affinity at the start). */
static cpu_set_t allowed;

/* Several queues: onto a random allowed CPU (the next call's queue). */
static void move(uint64_t *rng)
{
	unsigned k = below(rng, (unsigned)CPU_COUNT(&allowed));
	cpu_set_t one;

	CPU_ZERO(&one);
	for (unsigned c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &allowed) && !k--) {
			CPU_SET(c, &one);
			break;
		}
	/* a failed move leaves the producer where it was: fewer migrations */
	(void)sched_setaffinity(0, sizeof(one), &one);
}

static void *produce(void *arg)
{
	struct prod *pr = arg;
	struct scen *s = pr->s;
	unsigned maxn = s->entries - 1 < MAXN ? s->entries - 1 : MAXN;

	hwt_cmdq_batch_init(&pr->b, s->q);
	while (!pr->fatal && !atomic_load_explicit(&s->stop, memory_order_relaxed) &&
	       now_ns() < s->end_ns && pr->seq + 2 * MAXN < MAXSEQ) {
		unsigned what = below(&pr->rng, 10), n = below(&pr->rng, maxn + 1);
		uint64_t from = pr->seq, t0 = now_ns();
		bool sync = below(&pr->rng, 2);
		int err = 0;

		if (what == 0) { /* a sync-only call */
			err = hwt_cmdq_sync(s->q);
			account(pr, err, t0, from, true, "sync");
		} else if (what == 1) { /* the batch API: up to 2 flushes, then submit */
			n = below(&pr->rng, 3 * HWT_CMDQ_BATCH_ENTRIES);
			for (unsigned i = 0; i < n && !err; i++) {
				make_cmd(pr, &pr->c[0]);
				err = hwt_cmdq_batch_add(&pr->b, &pr->c[0]);
			}
			if (!err)
				err = hwt_cmdq_batch_submit(&pr->b);
			/* what a failed flush left queued is not ours to count:
			 * only a fully successful batch counts as sure */
			if (err)
				hwt_cmdq_batch_init(&pr->b, s->q);
			account(pr, err, t0, from, !err, "batch");
		} else {
			for (unsigned i = 0; i < n; i++)
				make_cmd(pr, &pr->c[i]);
			if (sync && n == maxn)
				n--; /* n + sync must fit the queue */
			pr->seq = from + n;
			err = hwt_cmdq_issue(s->q, pr->c, n, sync);
			account(pr, err, t0, from, sync, "issue");
		}
		switch (below(&pr->rng, 16)) {
		case 0: sched_yield(); break;
		case 1: sleep_ns(below(&pr->rng, 50000)); break;
		case 2: if (s->multi) move(&pr->rng); break;
		default: break;
		}
	}
	return NULL;
}

/* Pause/resume and faults, while the producers run. */
static void *disturb(void *arg)
{
	struct scen *s = arg;
	uint64_t rng = (uint64_t)(uintptr_t)s ^ now_ns();

	while (!atomic_load_explicit(&s->stop, memory_order_relaxed) && now_ns() < s->end_ns) {
		switch (below(&rng, 4)) {
		case 0:
			if (hwt_smmu_dev_pause(s->dev) == 0) {
				sleep_ns(below(&rng, 20000000));
				hwt_smmu_dev_resume(s->dev);
			}
			break;
		case 1:
			hwt_smmu_dev_inject(s->dev, HWT_SMMU_FAULT_ABT);
			break;
		case 2:
			hwt_smmu_dev_inject(s->dev, HWT_SMMU_FAULT_ATC_TIMEOUT);
			break;
		default:
			break;
		}
		sleep_ns(below(&rng, 5000000));
	}
	return NULL;
}

static void quiet(void *ctx, const char *msg)
{
	(void)ctx;
	(void)msg; /* timeouts and injected errors are expected here */
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *e = getenv(name);

	return e && *e ? strtoull(e, NULL, 0) : dflt;
}

static uint64_t total_calls, total_failed, total_cmds, total_syncs;

static uint64_t seed0(void)
{
	static uint64_t seed;
	const char *e = getenv("HWT_STRESS_SEED");

	if (!seed)
		seed = e && *e ? strtoull(e, NULL, 0) : now_ns() | 1;
	return seed;
}

/*
 * One scenario from the generator: a device and a queue of random size and
 * mode, nprod producers for `ms`, then a pause longer than the timeout (a
 * sync must fail in time), resume, a final sync from every producer, and
 * the end-of-run checks.
 */
static void scenario(uint64_t *g, unsigned idx)
{
	static struct prod pr[MAXP];
	struct hwt_smmu_dev_config dc;
	struct hwt_cmdq_options o;
	struct hwt_cmdq_info info;
	pthread_t t[MAXP], dt;
	struct scen *s = calloc(1, sizeof(*s));
	unsigned shift = 7 + below(g, 4), mode = below(g, 3);
	uint64_t t0;
	int err;

	ASSERT_TRUE(s != NULL);
	s->nprod = 1 + below(g, MAXP);
	s->timeout_ns = 150000000u + below(g, 100) * 1000000u;
	hwt_smmu_dev_config_default(&dc);
	dc.cmdqs = shift;
	dc.handler = handler;
	dc.handler_ctx = s;
	dc.cons_batch = below(g, 3) ? 0 : 1 + below(g, 64);
	ASSERT_OK(hwt_smmu_dev_create(&s->dev, &dc));
	hwt_cmdq_options_default(&o);
	o.entries_log2 = shift;
	/* several queues: not with auto (-EINVAL); the second scenario of
	 * every four, and one in three of the others */
	s->multi = idx % 4 == 1 || (mode != 2 && !below(g, 3));
	if (s->multi && mode == 2)
		mode = below(g, 2);
	o.disable_msipolling = mode == 1;
	o.auto_poll = mode == 2;
	o.queues = s->multi ? HWT_CMDQ_QUEUES_PER_CPU : 0;
	o.timeout_ns = s->timeout_ns;
	o.log = quiet;
	ASSERT_OK(hwt_cmdq_create(&s->q, s->dev, &o));
	s->entries = 1u << shift;
	/* before the device thread starts: on the rseq path nothing TSan sees
	 * (the commit is assembly) orders these stores before the handler */
	for (unsigned p = 0; p < s->nprod; p++) {
		s->done[p] = calloc(MAXSEQ / 8, sizeof(*s->done[p]));
		ASSERT_TRUE(s->done[p] != NULL);
	}
	ASSERT_OK(hwt_smmu_dev_start(s->dev));
	hwt_cmdq_get_info(s->q, &info);
	TLOG("scenario %u: %u producers, %u entries, %s, cons_batch %u, timeout %llu ms, "
	     "%u queue(s), insert path %s", idx, s->nprod, s->entries,
	     mode == 2 ? "auto" : mode == 1 ? "CONS polling" : "MSI polling", dc.cons_batch,
	     (unsigned long long)(s->timeout_ns / 1000000u), info.queues, info.insert_path);

	s->end_ns = now_ns() + env_u64("HWT_STRESS_MS", 400) * 1000000u;
	for (unsigned p = 0; p < s->nprod; p++) {
		memset(&pr[p], 0, sizeof(pr[p]));
		pr[p].s = s;
		pr[p].id = p;
		pr[p].rng = rnd(g) | 1;
		pr[p].sure = calloc(MAXSEQ / 8, 1);
		ASSERT_TRUE(pr[p].sure != NULL);
		ASSERT_EQ(pthread_create(&t[p], NULL, produce, &pr[p]), 0);
	}
	ASSERT_EQ(pthread_create(&dt, NULL, disturb, s), 0);
	for (unsigned p = 0; p < s->nprod; p++)
		pthread_join(t[p], NULL);
	atomic_store_explicit(&s->stop, true, memory_order_relaxed);
	pthread_join(dt, NULL);

	/* A device paused past the deadline: a sync fails within it + 50%. */
	ASSERT_OK(hwt_smmu_dev_pause(s->dev));
	t0 = now_ns();
	err = hwt_cmdq_sync(s->q);
	ASSERT_EQ(err, -ETIMEDOUT);
	if (now_ns() - t0 > s->timeout_ns + s->timeout_ns / 2)
		hwt_test_fail(__FILE__, __LINE__, "a sync on a paused device took %llu ms (timeout %llu)",
			      (unsigned long long)((now_ns() - t0) / 1000000u),
			      (unsigned long long)(s->timeout_ns / 1000000u));
	ASSERT_OK(hwt_smmu_dev_resume(s->dev));
	/* Several queues: a sync covers the calling thread's queues only, and
	 * the producers have gone; a sync on every CPU's queue drains them. */
	if (s->multi) {
		for (unsigned c = 0; c < CPU_SETSIZE; c++) {
			cpu_set_t one;

			if (!CPU_ISSET(c, &allowed))
				continue;
			CPU_ZERO(&one);
			CPU_SET(c, &one);
			ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
			ASSERT_OK(hwt_cmdq_sync(s->q));
		}
		ASSERT_EQ(sched_setaffinity(0, sizeof(allowed), &allowed), 0);
	}

	/* ... and afterwards the queue works: every producer's last sync. */
	for (unsigned p = 0; p < s->nprod; p++) {
		uint64_t from = pr[p].seq;

		t0 = now_ns();
		make_cmd(&pr[p], &pr[p].c[0]);
		account(&pr[p], hwt_cmdq_issue(s->q, pr[p].c, 1, true), t0, from, true, "last");
		ASSERT_OK(pr[p].fatal);
	}
	ASSERT_OK(hwt_cmdq_sync(s->q)); /* an ATC fault armed last fires here */
	hwt_smmu_dev_stop(s->dev);

	if (atomic_load_explicit(&s->violations, memory_order_relaxed))
		hwt_test_fail(__FILE__, __LINE__, "seed 0x%llx scenario %u: %u violations, first: %s",
			      (unsigned long long)seed0(), idx,
			      atomic_load_explicit(&s->violations, memory_order_relaxed), s->why);
	/* every command of a call that succeeded executed */
	for (unsigned p = 0; p < s->nprod; p++)
		for (uint64_t i = 0; i < pr[p].seq; i++)
			if ((pr[p].sure[i / 8] >> (i % 8) & 1) && !seen_done(s, p, i))
				hwt_test_fail(__FILE__, __LINE__,
					      "seed 0x%llx scenario %u: producer %u seq %llu lost",
					      (unsigned long long)seed0(), idx, p,
					      (unsigned long long)i);
	TLOG("  %llu calls (%llu failed, all timeouts), %llu commands, %llu syncs",
	     (unsigned long long)s->calls, (unsigned long long)s->failed,
	     (unsigned long long)s->cmds, (unsigned long long)s->syncs);
	total_calls += s->calls;
	total_failed += s->failed;
	total_cmds += s->cmds;
	total_syncs += s->syncs;
	hwt_cmdq_destroy(s->q);
	hwt_smmu_dev_destroy(s->dev);
	for (unsigned p = 0; p < s->nprod; p++) {
		free(pr[p].sure);
		free((void *)s->done[p]);
	}
	free(s);
}

TEST_TIMEOUT(stress_api_random, 300)
{
	uint64_t g = seed0();
	unsigned n = (unsigned)env_u64("HWT_STRESS_SCENARIOS", 4);

	ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);

	TLOG("seed 0x%llx (HWT_STRESS_SEED=0x%llx replays it)", (unsigned long long)g,
	     (unsigned long long)g);
	for (unsigned i = 0; i < n; i++)
		scenario(&g, i);
	TLOG("%u scenarios: %llu calls (%llu timed out), %llu commands, %llu syncs, 0 violations",
	     n, (unsigned long long)total_calls, (unsigned long long)total_failed,
	     (unsigned long long)total_cmds, (unsigned long long)total_syncs);
}
