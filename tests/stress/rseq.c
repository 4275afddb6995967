/* SPDX-License-Identifier: MIT */
/*
 * The rseq insertion (src/arch/rseq.h) against a consumer thread that plays
 * the device: it acquire-loads each ring's PROD, checks and poisons the
 * entries, and release-stores CONS.  Every entry carries (producer, seq) and
 * its complement, so the consumer sees a lost, doubled, reordered, torn or
 * unwritten entry.  The storm tests restart the sections on purpose: a
 * thread sends SIGUSR1 to the producers (empty handler), another moves them
 * between CPUs with sched_setaffinity.
 *
 * The Makefile links two test builds of the assembly besides the library's
 * (weak here, absent where there is no assembly): hwt__rseq_insert_test
 * counts its restarts, hwt__rseq_insert_broken commits PROD before it writes
 * the entries; the storm must catch the latter.  HWT_RSEQ_TEST_BROKEN=1 runs
 * the broken build where the correct one runs (to see the storm test fail).
 * HWT_STRESS_MS sets the time of each storm (default 400).
 *
 * Without rseq (GLIBC_TUNABLES=glibc.pthread.rseq=0, qemu-user, riscv64, the
 * generic build) every test skips with hwt__rseq_unavailable()'s text.
 *
 * TSan sees neither the assembly's stores nor its loads: under TSan it checks
 * only this file's own threads and counters, while the consumer's checks of
 * the entries (plain reads of what the assembly wrote) work as without it.
 */
#include "arch/rseq.h"
#include "bus/queue.h"
#include "harness/harness.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

typedef int insert_fn(struct hwt__rseq_ring *, unsigned, const void *, uint32_t, unsigned *, uint32_t *);
extern insert_fn hwt__rseq_insert_test __attribute__((weak));
extern insert_fn hwt__rseq_insert_broken __attribute__((weak));
extern uint64_t hwt__rseq_test_aborts __attribute__((weak));
extern uint64_t hwt__rseq_broken_aborts __attribute__((weak));

#define MAX_PRODUCERS 16
#define MAGIC 0x5eed000000000000ull

struct queue {
	_Alignas(64) _Atomic uint32_t prod;
	_Alignas(64) _Atomic uint32_t cons;
	uint32_t next_cons; /* consumer only */
};

struct rig {
	unsigned nrings, shift;
	struct hwt__rseq_ring *rings;
	struct queue *q;
	uint64_t *slots;
	insert_fn *insert;
	unsigned nprod;
	uint64_t per_prod; /* entries each producer inserts */
	unsigned kmax;
	bool pin;          /* producer i starts on CPU i % online */
	_Atomic bool prod_done, stop;
	_Atomic unsigned running;
	pthread_t prod_th[MAX_PRODUCERS];
	/* consumer's results (read after join) */
	uint8_t *seen[MAX_PRODUCERS];             /* one bit per seq: exactly once */
	uint64_t next_seq[MAX_PRODUCERS][64];     /* per ring: order */
	uint64_t consumed, violations, empty_polls;
	char first[200];
	/* producers' results */
	_Atomic uint64_t inserted[MAX_PRODUCERS], eagain, ring_used[64];
	_Atomic int error;
	_Atomic uint64_t signals, moves;
};

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t stress_ms(void)
{
	const char *e = getenv("HWT_STRESS_MS");
	return e && *e ? strtoull(e, NULL, 10) : 400;
}

/* A bounded wait step: spin a little, then yield, then sleep (2 CPUs). */
static void backoff(unsigned *n)
{
	if (++*n < 64)
		return;
	if (*n < 256) {
		sched_yield();
		return;
	}
	nanosleep(&(struct timespec){ .tv_nsec = 50000 }, NULL);
}

static void skip_without_rseq(void)
{
	const char *why = hwt__rseq_unavailable();
	if (why)
		SKIP("rseq path unavailable: %s", why);
}

static void rig_init(struct rig *r, unsigned shift)
{
	r->nrings = (unsigned)get_nprocs_conf();
	ASSERT_TRUE(r->nrings > 0 && r->nrings <= 64);
	r->shift = shift;
	r->rings = aligned_alloc(64, r->nrings * sizeof(*r->rings));
	r->q = aligned_alloc(64, r->nrings * sizeof(*r->q));
	r->slots = calloc((size_t)r->nrings << shift, 16);
	ASSERT_TRUE(r->rings && r->q && r->slots);
	memset(r->rings, 0, r->nrings * sizeof(*r->rings));
	memset(r->q, 0, r->nrings * sizeof(*r->q));
	for (unsigned i = 0; i < r->nrings; i++) {
		r->rings[i].prod = (uint32_t *)&r->q[i].prod;
		r->rings[i].cons = (const uint32_t *)&r->q[i].cons;
		r->rings[i].slots = r->slots + ((size_t)i << shift) * 2;
		r->rings[i].shift = shift;
		r->rings[i].ccons = 0;
	}
}

static void rig_free(struct rig *r)
{
	free(r->rings);
	free(r->q);
	free(r->slots);
}

static void violation(struct rig *r, const char *fmt, unsigned a, unsigned long long b, unsigned long long c)
{
	if (!r->violations++)
		snprintf(r->first, sizeof(r->first), fmt, a, b, c);
}

/* The device: drains every ring in turn until the producers are done (all
 * joined) and every ring is empty. */
static void *consumer(void *arg)
{
	struct rig *r = arg;
	unsigned idle = 0;
	for (;;) {
		bool any = false;
		bool done = atomic_load_explicit(&r->prod_done, memory_order_acquire); /* A_DONE: R_DONE */
		for (unsigned i = 0; i < r->nrings; i++) {
			struct queue *q = &r->q[i];
			/* A_PROD: pairs with R_PROD, the section's commit. */
			uint32_t prod = atomic_load_explicit(&q->prod, memory_order_acquire);
			uint32_t c = q->next_cons;
			if (c == prod)
				continue;
			any = true;
			while (c != prod) {
				uint64_t *e = r->rings[i].slots + 2 * hwt__q_idx(r->shift, c);
				uint64_t w0 = e[0], w1 = e[1];
				unsigned p = (unsigned)((w0 >> 40) & 0xff);
				uint64_t seq = w0 & 0xffffffffffull;
				if (w1 != ~w0 || (w0 & 0xffff000000000000ull) != MAGIC || p >= r->nprod)
					violation(r, "ring %u: unwritten or torn entry %016llx %016llx", i,
						  (unsigned long long)w0, (unsigned long long)w1);
				else if (seq >= r->per_prod)
					violation(r, "producer %u: seq %llu beyond %llu", p, (unsigned long long)seq,
						  (unsigned long long)r->per_prod);
				else if (r->seen[p][seq / 8] & 1u << seq % 8)
					violation(r, "producer %u: seq %llu twice (ring %llu)", p,
						  (unsigned long long)seq, (unsigned long long)i);
				else if (seq < r->next_seq[p][i])
					violation(r, "producer %u: seq %llu after %llu on its ring", p,
						  (unsigned long long)seq, r->next_seq[p][i] - 1);
				if (p < r->nprod && seq < r->per_prod) {
					r->seen[p][seq / 8] |= (uint8_t)(1u << seq % 8);
					if (seq >= r->next_seq[p][i])
						r->next_seq[p][i] = seq + 1;
				}
				e[0] = 0, e[1] = 0; /* poison: an entry not written again is seen */
				r->consumed++;
				c = hwt__q_inc(r->shift, c, 1);
			}
			q->next_cons = c;
			/* R_CONS: pairs with A_CONS, the section's load of CONS. */
			atomic_store_explicit(&q->cons, c, memory_order_release);
		}
		if (any) {
			idle = 0;
			continue;
		}
		if (done) /* all committed before it, and every ring seen empty since */
			break;
		r->empty_polls++;
		backoff(&idle);
	}
	return NULL;
}

struct producer {
	struct rig *r;
	unsigned id;
};

static void *producer(void *arg)
{
	struct producer *pa = arg;
	struct rig *r = pa->r;
	uint64_t ents[2 * 64];
	uint64_t seq = 0;
	unsigned x = pa->id * 2654435761u + 1;
	if (r->pin) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(pa->id % (unsigned)get_nprocs(), &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	while (seq < r->per_prod && !atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		x = x * 1103515245u + 12345u;
		uint32_t k = 1 + (x >> 16) % r->kmax;
		if (k > r->per_prod - seq)
			k = (uint32_t)(r->per_prod - seq);
		for (uint32_t j = 0; j < k; j++) {
			ents[2 * j] = MAGIC | (uint64_t)pa->id << 40 | (seq + j);
			ents[2 * j + 1] = ~ents[2 * j];
		}
		unsigned cpu, n = 0;
		uint32_t prod;
		int rc;
		while ((rc = r->insert(r->rings, r->nrings, ents, k, &cpu, &prod)) == -EAGAIN) {
			atomic_fetch_add_explicit(&r->eagain, 1, memory_order_relaxed);
			if (atomic_load_explicit(&r->stop, memory_order_relaxed))
				break;
			backoff(&n);
		}
		if (rc == -EAGAIN)
			break;
		if (rc != 0) {
			atomic_store_explicit(&r->error, rc, memory_order_relaxed);
			break;
		}
		if (cpu < 64)
			atomic_fetch_add_explicit(&r->ring_used[cpu], 1, memory_order_relaxed);
		seq += k;
	}
	atomic_store_explicit(&r->inserted[pa->id], seq, memory_order_relaxed);
	atomic_fetch_sub_explicit(&r->running, 1, memory_order_release);
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
}

/* Storm helpers: signals at the producers, and their moves between CPUs. */
static void *signaller(void *arg)
{
	struct rig *r = arg;
	unsigned i = 0;
	while (atomic_load_explicit(&r->running, memory_order_acquire) > 0) {
		pthread_kill(r->prod_th[i++ % r->nprod], SIGUSR1);
		atomic_fetch_add_explicit(&r->signals, 1, memory_order_relaxed);
		if (i % 64 == 0)
			sched_yield();
	}
	return NULL;
}

static void *mover(void *arg)
{
	struct rig *r = arg;
	unsigned online = (unsigned)get_nprocs(), i = 0;
	while (atomic_load_explicit(&r->running, memory_order_acquire) > 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET((i / r->nprod + i) % online, &set);
		pthread_setaffinity_np(r->prod_th[i % r->nprod], sizeof(set), &set);
		atomic_fetch_add_explicit(&r->moves, 1, memory_order_relaxed);
		i++;
		nanosleep(&(struct timespec){ .tv_nsec = 20000 }, NULL);
	}
	return NULL;
}

/*
 * Runs nprod producers and the consumer (and the storm threads) until every
 * producer inserted per_prod entries or the deadline passes; returns the
 * consumer's violation count, after checking that nothing is missing.
 */
static uint64_t run(struct rig *r, bool storm, uint64_t ms, bool allow_violations)
{
	pthread_t cons, sig_th, mov_th;
	struct producer pa[MAX_PRODUCERS];
	ASSERT_TRUE(r->nprod <= MAX_PRODUCERS);
	for (unsigned i = 0; i < r->nprod; i++)
		ASSERT_TRUE((r->seen[i] = calloc(r->per_prod / 8 + 1, 1)) != NULL);
	atomic_store_explicit(&r->running, r->nprod, memory_order_relaxed);
	if (storm) {
		struct sigaction sa = { .sa_handler = on_usr1 };
		sigemptyset(&sa.sa_mask);
		ASSERT_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	}
	ASSERT_EQ(pthread_create(&cons, NULL, consumer, r), 0);
	for (unsigned i = 0; i < r->nprod; i++) {
		pa[i] = (struct producer){ r, i };
		ASSERT_EQ(pthread_create(&r->prod_th[i], NULL, producer, &pa[i]), 0);
	}
	if (storm) {
		ASSERT_EQ(pthread_create(&sig_th, NULL, signaller, r), 0);
		ASSERT_EQ(pthread_create(&mov_th, NULL, mover, r), 0);
	}
	uint64_t end = now_ns() + ms * 1000000u;
	unsigned n = 0;
	while (atomic_load_explicit(&r->running, memory_order_acquire) > 0) {
		if (now_ns() > end)
			atomic_store_explicit(&r->stop, true, memory_order_relaxed);
		n = 300; /* sleep at once: this thread only watches the clock */
		backoff(&n);
	}
	for (unsigned i = 0; i < r->nprod; i++)
		pthread_join(r->prod_th[i], NULL);
	if (storm) {
		pthread_join(sig_th, NULL);
		pthread_join(mov_th, NULL);
	}
	/* R_DONE: every commit happened before this (the joins). */
	atomic_store_explicit(&r->prod_done, true, memory_order_release);
	pthread_join(cons, NULL);
	ASSERT_EQ(atomic_load(&r->error), 0);
	/* exactly once: every seq a producer inserted was seen (twice is a
	 * violation above), and nothing else was consumed */
	uint64_t total = 0, missing = 0;
	for (unsigned i = 0; i < r->nprod; i++) {
		uint64_t ins = atomic_load(&r->inserted[i]);
		total += ins;
		for (uint64_t j = 0; j < ins; j++)
			missing += !(r->seen[i][j / 8] & 1u << j % 8);
		free(r->seen[i]);
		r->seen[i] = NULL;
	}
	unsigned used = 0;
	for (unsigned i = 0; i < r->nrings && i < 64; i++)
		used += atomic_load(&r->ring_used[i]) > 0;
	TLOG("%s: %u producers, %llu entries inserted, %llu consumed, %llu missing, %llu EAGAIN, "
	     "rings used %u, %llu signals, %llu moves, %llu violations%s%s",
	     storm ? "storm" : "plain", r->nprod, (unsigned long long)total,
	     (unsigned long long)r->consumed, (unsigned long long)missing,
	     (unsigned long long)atomic_load(&r->eagain), used,
	     (unsigned long long)atomic_load(&r->signals), (unsigned long long)atomic_load(&r->moves),
	     (unsigned long long)r->violations, r->violations ? ": first: " : "", r->first);
	if (!allow_violations) {
		if (r->violations)
			hwt_test_fail(__FILE__, __LINE__, "%llu violations, first: %s",
				      (unsigned long long)r->violations, r->first);
		ASSERT_EQ(missing, 0);
		ASSERT_EQ(r->consumed, total);
		ASSERT_GT(total, 0);
	}
	r->violations += missing + (r->consumed != total);
	return r->violations;
}

static bool want_broken(void)
{
	const char *e = getenv("HWT_RSEQ_TEST_BROKEN");
	return e && *e == '1';
}

/* The library's function, or the broken build when asked to show a failure. */
static insert_fn *shipped(void)
{
	return want_broken() && hwt__rseq_insert_broken ? hwt__rseq_insert_broken : hwt__rseq_insert;
}

/* Several producers per CPU, pinned, a small ring (wraps and fills). */
TEST_TIMEOUT(rseq_consumer_exactly_once, 60)
{
	skip_without_rseq();
	static struct rig r;
	rig_init(&r, 4);
	r.insert = shipped();
	r.nprod = 2 * (unsigned)get_nprocs() > MAX_PRODUCERS ? MAX_PRODUCERS : 2 * (unsigned)get_nprocs();
	r.per_prod = 200000;
	r.kmax = 5;
	r.pin = true;
	run(&r, false, 20000 * (uint64_t)hwt_test_scale(), false);
	ASSERT_FALSE(atomic_load(&r.stop)); /* finished, not cut */
	rig_free(&r);
}

/* Restarts on purpose: signals and migrations while producers insert. */
TEST_TIMEOUT(rseq_restart_storm, 60)
{
	skip_without_rseq();
	if (!hwt__rseq_insert_test)
		SKIP("this build has no test build of the assembly");
	static struct rig r;
	rig_init(&r, 5);
	r.insert = want_broken() ? hwt__rseq_insert_broken : hwt__rseq_insert_test;
	uint64_t *aborts = want_broken() ? &hwt__rseq_broken_aborts : &hwt__rseq_test_aborts;
	uint64_t before = __atomic_load_n(aborts, __ATOMIC_RELAXED);
	r.nprod = 4;
	r.per_prod = 1u << 24; /* or until the deadline */
	r.kmax = 32;
	run(&r, true, stress_ms(), false);
	uint64_t restarts = __atomic_load_n(aborts, __ATOMIC_RELAXED) - before;
	TLOG("restarts: %llu (a lower bound)", (unsigned long long)restarts);
	ASSERT_GT(restarts, 0);
	ASSERT_GT(atomic_load(&r.moves), 0);
	rig_free(&r);
}

/* The storm's positive control: the broken build (PROD committed before the
 * entries) must be caught within the time. */
TEST_TIMEOUT(rseq_storm_catches_broken_commit, 60)
{
	skip_without_rseq();
	if (!hwt__rseq_insert_broken)
		SKIP("this build has no test build of the assembly");
	uint64_t seen = 0, rounds = 0;
	uint64_t end = now_ns() + 20000000000ull * (uint64_t)hwt_test_scale();
	while (!seen && now_ns() < end) {
		static struct rig r;
		memset(&r, 0, sizeof(r));
		rig_init(&r, 5);
		r.insert = hwt__rseq_insert_broken;
		r.nprod = 4;
		r.per_prod = 1u << 24;
		r.kmax = 32;
		seen = run(&r, true, stress_ms(), true);
		rounds++;
		rig_free(&r);
	}
	TLOG("broken commit caught: %llu violations in round %llu", (unsigned long long)seen,
	     (unsigned long long)rounds);
	ASSERT_GT(seen, 0);
}

/* Pins the calling thread to the CPU it runs on; returns that CPU. */
static unsigned pin_here(void)
{
	int c = sched_getcpu();
	ASSERT_TRUE(c >= 0);
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(c, &set);
	ASSERT_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
	return (unsigned)c;
}

/* The contract, single-threaded: room, the two runs at the wrap, -EAGAIN
 * with CONS re-read once (ERR masked), -ERANGE, -EINVAL. */
TEST(rseq_contract)
{
	skip_without_rseq();
	static struct rig r;
	rig_init(&r, 3); /* 8 entries */
	unsigned here = pin_here(), cpu = ~0u;
	uint32_t prod = ~0u;
	uint64_t ents[2 * 9];
	for (unsigned j = 0; j < 18; j++)
		ents[j] = 0x1000 + j;
	struct hwt__rseq_ring *g = &r.rings[here];
	struct queue *q = &r.q[here];

	ASSERT_EQ(hwt__rseq_insert(r.rings, r.nrings, ents, 0, &cpu, &prod), -EINVAL);
	ASSERT_EQ(cpu, here);
	ASSERT_EQ(hwt__rseq_insert(r.rings, r.nrings, ents, 9, &cpu, &prod), -EINVAL);
	ASSERT_EQ(hwt__rseq_insert(r.rings, here, ents, 1, &cpu, &prod), -ERANGE);
	ASSERT_EQ(cpu, here);
	ASSERT_EQ(prod, ~0u);

	ASSERT_EQ(hwt__rseq_insert(r.rings, r.nrings, ents, 6, &cpu, &prod), 0);
	ASSERT_EQ(cpu, here);
	ASSERT_EQ(prod, 6);
	ASSERT_EQ(atomic_load(&q->prod), 6);
	ASSERT_EQ(memcmp(g->slots, ents, 6 * 16), 0);
	/* 2 free: 3 do not fit, CONS unchanged, ccons refreshed to it */
	prod = 77;
	ASSERT_EQ(hwt__rseq_insert(r.rings, r.nrings, ents, 3, &cpu, &prod), -EAGAIN);
	ASSERT_EQ(prod, 77);
	ASSERT_EQ(atomic_load(&q->prod), 6);
	/* the device consumed 5, with ERR bits set in CONS: masked off */
	atomic_store(&q->cons, 5u | 0x7fu << 24);
	ASSERT_EQ(hwt__rseq_insert(r.rings, r.nrings, ents + 2, 7, &cpu, &prod), 0);
	ASSERT_EQ(g->ccons, 5);
	ASSERT_EQ(prod, 13); /* WRP set, IDX 5 */
	/* two runs: slots 6,7 then 0..4 */
	ASSERT_EQ(memcmp(g->slots + 12, ents + 2, 2 * 16), 0);
	ASSERT_EQ(memcmp(g->slots, ents + 6, 5 * 16), 0);
	/* full now: 8 in use */
	ASSERT_EQ(hwt__rseq_insert(r.rings, r.nrings, ents, 1, &cpu, &prod), -EAGAIN);
	atomic_store(&q->cons, 13u);
	ASSERT_EQ(hwt__rseq_insert(r.rings, r.nrings, ents, 8, &cpu, &prod), 0);
	ASSERT_EQ(prod, 5); /* wrapped twice: WRP clear again */
	ASSERT_EQ(memcmp(g->slots + 10, ents, 3 * 16), 0);
	ASSERT_EQ(memcmp(g->slots, ents + 6, 5 * 16), 0);
	for (unsigned i = 0; i < r.nrings; i++)
		if (i != here)
			ASSERT_EQ(atomic_load(&r.q[i].prod), 0);
	rig_free(&r);
}

/* Single-thread cost, k = 1 and 32, against memcpy and a release store of
 * PROD (logged with -v; no speed is asserted). */
TEST(rseq_timing)
{
	skip_without_rseq();
	static struct rig r;
	rig_init(&r, 10);
	unsigned here = pin_here(), cpu;
	uint32_t prod;
	static uint64_t ents[2 * 32];
	struct queue *q = &r.q[here];
	const unsigned iters = 200000;
	for (uint32_t k = 1; k <= 32; k += 31) {
		double best_rseq = 1e9, best_copy = 1e9;
		for (int round = 0; round < 5; round++) {
			uint64_t t0 = now_ns();
			for (unsigned i = 0; i < iters; i++) {
				int rc = hwt__rseq_insert(r.rings, r.nrings, ents, k, &cpu, &prod);
				if (rc == -EAGAIN) {
					atomic_store_explicit(&q->cons, atomic_load_explicit(&q->prod,
						memory_order_relaxed), memory_order_release);
					continue;
				}
				ASSERT_EQ(rc, 0);
			}
			uint64_t t1 = now_ns();
			uint32_t p = 0;
			for (unsigned i = 0; i < iters; i++) {
				uint32_t idx = hwt__q_idx(r.shift, p);
				if (idx + k > (1u << r.shift))
					idx = 0, p = 0;
				memcpy(r.rings[here].slots + 2 * idx, ents, k * 16);
				p = hwt__q_inc(r.shift, p, k);
				atomic_store_explicit(&q->prod, p, memory_order_release);
			}
			uint64_t t2 = now_ns();
			if ((double)(t1 - t0) / iters < best_rseq)
				best_rseq = (double)(t1 - t0) / iters;
			if ((double)(t2 - t1) / iters < best_copy)
				best_copy = (double)(t2 - t1) / iters;
			/* the copy loop moved PROD: start the ring again */
			atomic_store(&q->prod, 0), atomic_store(&q->cons, 0), r.rings[here].ccons = 0;
		}
		TLOG("k=%u: hwt__rseq_insert %.1f ns/call, memcpy + release store %.1f ns/call "
		     "(best of 5 x %u)", k, best_rseq, best_copy, iters);
	}
	rig_free(&r);
}
