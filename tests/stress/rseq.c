/* SPDX-License-Identifier: MIT */
/*
 * The rseq insertion (src/arch/rseq.h) against a consumer thread that plays
 * the device: it acquire-loads each ring's PROD, checks and poisons the
 * entries, and release-stores CONS.  Every entry carries (producer, seq) and
 * its complement, so the consumer sees a lost, doubled, reordered, torn or
 * unwritten entry.  About half the calls pass HWT__RSEQ_K_SYNC_MSI: their
 * last entry is a "CMD_SYNC" (its own magic) built with dw1 0, and the
 * consumer checks that the section stored the IOVA of the slot it sits in
 * there (the ring's fake iova + 16 * idx), also after a restart moved the
 * call to another slot or ring.
 *
 * The storm restarts the sections on purpose, aimed at the producers while
 * they run: each producer has its own timer (timer_create, SIGEV_THREAD_ID,
 * CLOCK_MONOTONIC, HWT_RSEQ_TIMER_US, default 50) that sends it SIGUSR1, and
 * every second signal's handler moves the producer to the next online CPU
 * (sched_setaffinity on itself: the thread leaves its CPU at the instruction
 * the signal found it at); a mover thread moves producers as well, there are
 * three producers per online CPU (preemption), and the ring (1024 entries) is
 * big enough that producers spend their time in sections rather than waiting
 * for room.
 *
 * The two steps: a call the section reports "moved" (HWT__RSEQ_MOVED: in,
 * not published; every eighth call asks for it with HWT__RSEQ_K_NO_PUBLISH,
 * besides the real moves) is published by its producer with
 * hwt__rseq_publish() from the CPU it inserted on, pinning itself there.
 *
 * The Makefile links test builds of the assembly besides the library's (weak
 * here, absent where there is no assembly): hwt__rseq_insert_test counts its
 * restarts exactly (and those after its MSIADDR store), and five mutants the
 * storm must catch (one positive control each): hwt__rseq_insert_broken
 * commits sprod before the entries, _broken_post ends the section before the
 * commit, _broken_nocpu does not check the CPU inside the section,
 * _broken_msiaddr does not store the MSIADDR, _broken_pubout publishes
 * outside a section (PROD moves back).
 * HWT_RSEQ_TEST_BROKEN=commit|post|nocpu|msiaddr|pubout
 * (1: commit) runs that mutant where the correct build runs (to see the tests
 * fail); HWT_STRESS_MS sets the time of each storm (default 400);
 * HWT_RSEQ_ROUNDS=N makes each positive control run N rounds whatever it
 * sees (to measure how often a round catches its mutant).  A violation is
 * logged with the ring's state, the slot's previous entry, the slot read again
 * a little later, and the producers' logged insertions that touched it.
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
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_THREAD__)
#define HWT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HWT_TSAN 1
#endif
#endif
#ifndef HWT_TSAN
#define HWT_TSAN 0
#endif

typedef int insert_fn(struct hwt__rseq_ring *, unsigned, const void *, uint32_t, unsigned *, uint32_t *);
typedef int publish_fn(struct hwt__rseq_ring *, unsigned, unsigned);
/* The names of src/arch/rseq_builds.h. */
#define BUILD_SYMS(sfx, ab)                                                    \
	extern insert_fn hwt__rseq_insert##sfx __attribute__((weak));          \
	extern publish_fn hwt__rseq_publish##sfx __attribute__((weak));        \
	extern uint64_t hwt__rseq_##ab##_aborts __attribute__((weak));
BUILD_SYMS(_test, test)
BUILD_SYMS(_broken, broken)
BUILD_SYMS(_broken_post, broken_post)
BUILD_SYMS(_broken_nocpu, broken_nocpu)
BUILD_SYMS(_broken_msiaddr, broken_msiaddr)
BUILD_SYMS(_broken_pubout, broken_pubout)
extern uint64_t hwt__rseq_test_msi_aborts __attribute__((weak));

/* A build of the assembly: its functions and its restart counter. */
struct build {
	const char *name;
	insert_fn *fn;
	publish_fn *publish;
	uint64_t *aborts;
};

#define BUILD(name, sfx, ab) \
	((struct build){ name, hwt__rseq_insert##sfx, hwt__rseq_publish##sfx, &hwt__rseq_##ab##_aborts })

static struct build test_build(const char *name)
{
	if (!strcmp(name, "commit"))
		return BUILD(name, _broken, broken);
	if (!strcmp(name, "post"))
		return BUILD(name, _broken_post, broken_post);
	if (!strcmp(name, "nocpu"))
		return BUILD(name, _broken_nocpu, broken_nocpu);
	if (!strcmp(name, "msiaddr"))
		return BUILD(name, _broken_msiaddr, broken_msiaddr);
	if (!strcmp(name, "pubout"))
		return BUILD(name, _broken_pubout, broken_pubout);
	return BUILD("test", _test, test);
}

/* The mutant HWT_RSEQ_TEST_BROKEN names, or NULL. */
static const char *want_broken(void)
{
	const char *e = getenv("HWT_RSEQ_TEST_BROKEN");
	if (!e || !*e || !strcmp(e, "0"))
		return NULL;
	return !strcmp(e, "1") ? "commit" : e;
}

#define MAX_PRODUCERS 16
#define MAX_CPUS 64
#define MAGIC 0x5eed000000000000ull
#define MAGIC_SYNC 0x5eec000000000000ull /* the last entry of a call with HWT__RSEQ_K_SYNC_MSI */
#define MAGIC_MASK 0xffff000000000000ull
/* Ring i's fake IOVA (the section only adds 16 * idx to it). */
#define RING_IOVA(i) (0xfeed00000000ull + ((uint64_t)(i) << 24))
#define LOG_N 2048 /* insertions each producer remembers */

struct queue {
	_Alignas(64) _Atomic uint32_t prod;
	_Alignas(64) _Atomic uint32_t cons;
	uint32_t next_cons; /* consumer only */
};

/* One insertion, as its producer saw it. */
struct ins {
	uint64_t t_ns, seq;
	uint32_t prod, k;
	uint16_t cpu, cpu_after;
	bool sync;
};

/* The first violation, with what the consumer knew then. */
struct viol {
	unsigned ring;
	uint32_t pos, prod, cons, ccons;
	uint64_t w0, w1, prev0, prev1, late0, late1, t_ns;
};

struct rig {
	unsigned nrings, shift;
	struct hwt__rseq_ring *rings;
	struct queue *q;
	uint64_t *slots, *shadow; /* shadow: the last entry consumed from each slot */
	insert_fn *insert;
	publish_fn *publish;
	unsigned nprod;
	uint64_t per_prod; /* entries each producer inserts */
	unsigned kmax;
	bool pin;          /* producer i starts on online CPU i % n */
	_Atomic bool prod_done, stop;
	_Atomic unsigned running;
	pthread_t prod_th[MAX_PRODUCERS];
	/* consumer's results (read after join) */
	uint8_t *seen[MAX_PRODUCERS];             /* one bit per seq: exactly once */
	uint64_t next_seq[MAX_PRODUCERS][MAX_CPUS]; /* per ring: order */
	uint64_t consumed, violations, empty_polls;
	char first[200];
	struct viol v;
	/* producers' results */
	struct ins *log[MAX_PRODUCERS];
	_Atomic uint64_t inserted[MAX_PRODUCERS], eagain, ring_used[MAX_CPUS], syncs, moved;
	_Atomic int error;
	_Atomic uint64_t moves;
};

/* The storm's signal handler's state (one storm at a time). */
static struct {
	int cpus[MAX_CPUS];
	unsigned ncpus, hop_every;
	_Atomic uint64_t signals, hops, hop_errors;
} sg;
static _Thread_local unsigned tl_signals;

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *e = getenv(name);
	return e && *e ? strtoull(e, NULL, 10) : dflt;
}

static uint64_t stress_ms(void)
{
	return env_u64("HWT_STRESS_MS", 400);
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

/* The CPUs this process may run on (the storm moves threads among them). */
static void online_cpus(void)
{
	cpu_set_t set;
	ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	sg.ncpus = 0;
	for (int c = 0; c < CPU_SETSIZE && sg.ncpus < MAX_CPUS; c++)
		if (CPU_ISSET(c, &set))
			sg.cpus[sg.ncpus++] = c;
	ASSERT_GT(sg.ncpus, 0);
}

/* Pins thread th (0: the caller) to CPU c; returns 0 or an errno value. */
static int pin_to(pthread_t th, bool self, int c)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(c, &set);
	if (self)
		return sched_setaffinity(0, sizeof(set), &set) ? errno : 0;
	return pthread_setaffinity_np(th, sizeof(set), &set);
}

static void rig_init(struct rig *r, unsigned shift)
{
	memset(r, 0, sizeof(*r));
	online_cpus();
	r->nrings = (unsigned)sysconf(_SC_NPROCESSORS_CONF); /* the possible CPUs, as the queue */
	ASSERT_TRUE(r->nrings > 0 && r->nrings <= MAX_CPUS);
	for (unsigned i = 0; i < sg.ncpus; i++)
		ASSERT_TRUE((unsigned)sg.cpus[i] < r->nrings);
	r->shift = shift;
	r->rings = aligned_alloc(64, r->nrings * sizeof(*r->rings));
	r->q = aligned_alloc(64, r->nrings * sizeof(*r->q));
	r->slots = calloc((size_t)r->nrings << shift, 16);
	r->shadow = calloc((size_t)r->nrings << shift, 16);
	ASSERT_TRUE(r->rings && r->q && r->slots && r->shadow);
	memset(r->rings, 0, r->nrings * sizeof(*r->rings));
	memset(r->q, 0, r->nrings * sizeof(*r->q));
	for (unsigned i = 0; i < r->nrings; i++) {
		r->rings[i].prod = (uint32_t *)&r->q[i].prod;
		r->rings[i].cons = (const uint32_t *)&r->q[i].cons;
		r->rings[i].slots = r->slots + ((size_t)i << shift) * 2;
		r->rings[i].shift = shift;
		r->rings[i].ccons = 0;
		r->rings[i].iova = RING_IOVA(i);
	}
}

static void rig_free(struct rig *r)
{
	free(r->rings);
	free(r->q);
	free(r->slots);
	free(r->shadow);
}

static void violation(struct rig *r, const char *fmt, unsigned a, unsigned long long b, unsigned long long c)
{
	if (!r->violations++)
		snprintf(r->first, sizeof(r->first), fmt, a, b, c);
}

/* The first violation's state: the ring, the slot before and a little after. */
static void record(struct rig *r, unsigned i, uint32_t pos, uint32_t prod, const uint64_t *e, uint64_t w0,
		   uint64_t w1)
{
	if (r->violations != 1)
		return;
	struct viol *v = &r->v;
	const uint64_t *sh = r->shadow + 2 * (((size_t)i << r->shift) + hwt__q_idx(r->shift, pos));
	*v = (struct viol){ .ring = i, .pos = pos, .prod = prod, .w0 = w0, .w1 = w1, .prev0 = sh[0],
			    .prev1 = sh[1], .t_ns = now_ns() };
	v->cons = atomic_load_explicit(&r->q[i].cons, memory_order_relaxed);
	v->ccons = __atomic_load_n(&r->rings[i].ccons, __ATOMIC_RELAXED);
	nanosleep(&(struct timespec){ .tv_nsec = 200000 }, NULL); /* a writer in flight finishes */
	v->late0 = __atomic_load_n(&e[0], __ATOMIC_RELAXED);
	v->late1 = __atomic_load_n(&e[1], __ATOMIC_RELAXED);
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
				size_t slot = ((size_t)i << r->shift) + hwt__q_idx(r->shift, c);
				uint64_t *e = r->slots + 2 * slot;
				uint64_t w0 = e[0], w1 = e[1];
				unsigned p = (unsigned)((w0 >> 40) & 0xff);
				uint64_t seq = w0 & 0xffffffffffull, before = r->violations;
				uint64_t msiaddr = RING_IOVA(i) + 16ull * hwt__q_idx(r->shift, c);
				bool sync = (w0 & MAGIC_MASK) == MAGIC_SYNC;
				if (sync && w1 != msiaddr)
					violation(r, "ring %u: a sync entry's MSIADDR %016llx, "
						  "its slot's IOVA %016llx", i, (unsigned long long)w1,
						  (unsigned long long)msiaddr);
				else if ((!sync && (w1 != ~w0 || (w0 & MAGIC_MASK) != MAGIC)) ||
					 p >= r->nprod)
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
				if (r->violations != before)
					record(r, i, c, prod, e, w0, w1);
				if (p < r->nprod && seq < r->per_prod) {
					r->seen[p][seq / 8] |= (uint8_t)(1u << seq % 8);
					if (seq >= r->next_seq[p][i])
						r->next_seq[p][i] = seq + 1;
				}
				r->shadow[2 * slot] = w0, r->shadow[2 * slot + 1] = w1;
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
	bool timer; /* the storm's: SIGUSR1 to this thread every HWT_RSEQ_TIMER_US */
};

/* The producer's own timer: SIGUSR1 to this thread, periodically. */
static int arm_timer(timer_t *t, unsigned id)
{
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGUSR1;
	sev._sigev_un._tid = gettid(); /* sigev_notify_thread_id: glibc 2.37 */
	if (timer_create(CLOCK_MONOTONIC, &sev, t))
		return -errno;
	long us = (long)env_u64("HWT_RSEQ_TIMER_US", 50);
	struct itimerspec its = { .it_interval = { .tv_nsec = us * 1000 },
				  .it_value = { .tv_nsec = us * 1000 + (long)id * 7000 } };
	if (timer_settime(*t, 0, &its, NULL)) {
		int e = -errno;
		timer_delete(*t);
		return e;
	}
	return 0;
}

static void *producer(void *arg)
{
	struct producer *pa = arg;
	struct rig *r = pa->r;
	uint64_t ents[2 * 64];
	uint64_t seq = 0, n_ins = 0;
	unsigned x = pa->id * 2654435761u + 1;
	timer_t timer;
	int rc = 0;
	if (r->pin && (rc = pin_to(0, true, sg.cpus[pa->id % sg.ncpus])) != 0)
		rc = -rc;
	if (!rc && pa->timer)
		rc = arm_timer(&timer, pa->id);
	if (rc) {
		atomic_store_explicit(&r->error, rc, memory_order_relaxed);
		goto out;
	}
	while (seq < r->per_prod && !atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		x = x * 1103515245u + 12345u;
		uint32_t k = 1 + (x >> 16) % r->kmax;
		bool sync = (x >> 9) & 1; /* the last entry a CMD_SYNC with its MSI to its own slot */
		bool nopub = ((x >> 5) & 7) == 0; /* as if it moved before its publish */
		if (k > r->per_prod - seq)
			k = (uint32_t)(r->per_prod - seq);
		for (uint32_t j = 0; j < k; j++) {
			ents[2 * j] = MAGIC | (uint64_t)pa->id << 40 | (seq + j);
			ents[2 * j + 1] = ~ents[2 * j];
		}
		if (sync) { /* built with MSIADDR 0: the section stores it */
			ents[2 * (k - 1)] = MAGIC_SYNC | (ents[2 * (k - 1)] & ~MAGIC_MASK);
			ents[2 * (k - 1) + 1] = 0;
		}
		unsigned cpu, n = 0;
		uint32_t prod, kf = k | (sync ? HWT__RSEQ_K_SYNC_MSI : 0) | (nopub ? HWT__RSEQ_K_NO_PUBLISH : 0);
		while ((rc = r->insert(r->rings, r->nrings, ents, kf, &cpu, &prod)) == -EAGAIN) {
			atomic_fetch_add_explicit(&r->eagain, 1, memory_order_relaxed);
			if (atomic_load_explicit(&r->stop, memory_order_relaxed))
				break;
			/* a producer of this CPU may be between its two steps */
			r->publish(r->rings, r->nrings, cpu);
			backoff(&n);
		}
		if (rc == -EAGAIN)
			break;
		if (rc == HWT__RSEQ_MOVED) { /* in, not published: from that CPU only */
			atomic_fetch_add_explicit(&r->moved, 1, memory_order_relaxed);
			while ((rc = r->publish(r->rings, r->nrings, cpu)) == HWT__RSEQ_MOVED)
				if ((rc = pin_to(0, true, (int)cpu)) != 0) {
					rc = -rc;
					break;
				}
		}
		if (rc != 0) {
			atomic_store_explicit(&r->error, rc, memory_order_relaxed);
			break;
		}
		r->log[pa->id][n_ins++ % LOG_N] = (struct ins){ .t_ns = now_ns(), .seq = seq,
								.prod = prod, .k = k,
								.cpu = (uint16_t)cpu,
								.cpu_after = (uint16_t)sched_getcpu(),
								.sync = sync };
		atomic_fetch_add_explicit(&r->syncs, sync, memory_order_relaxed);
		if (cpu < MAX_CPUS)
			atomic_fetch_add_explicit(&r->ring_used[cpu], 1, memory_order_relaxed);
		seq += k;
	}
	if (pa->timer)
		timer_delete(timer); /* no signal to this thread after it */
out:
	atomic_store_explicit(&r->inserted[pa->id], seq, memory_order_relaxed);
	atomic_fetch_sub_explicit(&r->running, 1, memory_order_release);
	return NULL;
}

/* Every hop_every-th signal moves the producer it interrupted to the next
 * online CPU, from the instruction it interrupted (async-signal-safe: a
 * system call and lock-free atomics). */
static void on_usr1(int sig)
{
	(void)sig;
	int e = errno;
	atomic_fetch_add_explicit(&sg.signals, 1, memory_order_relaxed);
	if (sg.hop_every && ++tl_signals % sg.hop_every == 0) {
		int here = sched_getcpu();
		unsigned i = 0;
		while (i < sg.ncpus && sg.cpus[i] != here)
			i++;
		if (pin_to(0, true, sg.cpus[(i + 1) % sg.ncpus]) == 0)
			atomic_fetch_add_explicit(&sg.hops, 1, memory_order_relaxed);
		else
			atomic_fetch_add_explicit(&sg.hop_errors, 1, memory_order_relaxed);
	}
	errno = e;
}

/* Moves the producers between CPUs from outside, now and then. */
static void *mover(void *arg)
{
	struct rig *r = arg;
	unsigned i = 0;
	while (atomic_load_explicit(&r->running, memory_order_acquire) > 0) {
		int rc = pin_to(r->prod_th[i % r->nprod], false, sg.cpus[(i / r->nprod + i) % sg.ncpus]);
		/* ESRCH: that producer has ended (its thread is not joined yet) */
		if (rc && rc != ESRCH)
			atomic_store_explicit(&r->error, -rc, memory_order_relaxed);
		atomic_fetch_add_explicit(&r->moves, !rc, memory_order_relaxed);
		i++;
		nanosleep(&(struct timespec){ .tv_nsec = 200000 }, NULL);
	}
	return NULL;
}

/* After a violation: the first one's record, and the logged insertions of
 * the entry found in the slot and of the slot's position on its ring. */
static void report_violation(struct rig *r)
{
	const struct viol *v = &r->v;
	uint32_t span = 2u << r->shift; /* WRP|IDX values */
	TLOG("first violation: ring %u pos %u (slot %u): PROD %u, CONS %u, ccons %u; "
	     "read %016llx %016llx, 200 us later %016llx %016llx; previous entry %016llx %016llx",
	     v->ring, v->pos, hwt__q_idx(r->shift, v->pos), v->prod, v->cons, v->ccons,
	     (unsigned long long)v->w0, (unsigned long long)v->w1, (unsigned long long)v->late0,
	     (unsigned long long)v->late1, (unsigned long long)v->prev0, (unsigned long long)v->prev1);
	uint64_t cand[3] = { v->w0, ~v->w1, v->late0 };
	for (unsigned c = 0; c < 3; c++) {
		uint64_t m = cand[c] & MAGIC_MASK;
		if ((m != MAGIC && m != MAGIC_SYNC) || ((cand[c] >> 40) & 0xff) >= r->nprod)
			continue;
		unsigned p = (unsigned)((cand[c] >> 40) & 0xff);
		uint64_t seq = cand[c] & 0xffffffffffull;
		for (unsigned j = 0; j < LOG_N; j++) {
			const struct ins *s = &r->log[p][j];
			if (s->k && seq >= s->seq && seq < s->seq + s->k)
				TLOG("  entry p%u seq %llu: inserted on ring %u, PROD %u after (k %u), "
				     "CPU %u after, %lld us before the violation", p, (unsigned long long)seq,
				     s->cpu, s->prod, s->k, s->cpu_after,
				     ((long long)v->t_ns - (long long)s->t_ns) / 1000);
		}
	}
	unsigned shown = 0;
	for (unsigned p = 0; p < r->nprod && shown < 12; p++)
		for (unsigned j = 0; j < LOG_N && shown < 12; j++) {
			const struct ins *s = &r->log[p][j];
			if (!s->k || s->cpu != v->ring || (v->pos - (s->prod - s->k)) % span >= s->k)
				continue;
			long long ago = ((long long)v->t_ns - (long long)s->t_ns) / 1000;
			if (ago < -1000 || ago > 100000)
				continue;
			TLOG("  ring %u pos %u covered by p%u seq %llu..%llu, PROD %u after, CPU %u after, "
			     "%lld us before",
			     v->ring, v->pos, p, (unsigned long long)s->seq,
			     (unsigned long long)(s->seq + s->k - 1), s->prod, s->cpu_after, ago);
			shown++;
		}
}

/*
 * Runs nprod producers and the consumer (and the storm) until every producer
 * inserted per_prod entries or the deadline passes; returns the consumer's
 * violation count, after checking that nothing is missing.
 */
static uint64_t run(struct rig *r, bool storm, uint64_t ms, bool allow_violations)
{
	pthread_t cons, mov_th;
	struct producer pa[MAX_PRODUCERS];
	ASSERT_TRUE(r->nprod <= MAX_PRODUCERS);
	for (unsigned i = 0; i < r->nprod; i++) {
		ASSERT_TRUE((r->seen[i] = calloc(r->per_prod / 8 + 1, 1)) != NULL);
		ASSERT_TRUE((r->log[i] = calloc(LOG_N, sizeof(struct ins))) != NULL);
	}
	atomic_store_explicit(&r->running, r->nprod, memory_order_relaxed);
	atomic_store(&sg.signals, 0), atomic_store(&sg.hops, 0), atomic_store(&sg.hop_errors, 0);
	sg.hop_every = storm ? (unsigned)env_u64("HWT_RSEQ_HOP_EVERY", 2) : 0;
	if (storm) {
		struct sigaction sa = { .sa_handler = on_usr1 };
		sigemptyset(&sa.sa_mask);
		ASSERT_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	}
	ASSERT_EQ(pthread_create(&cons, NULL, consumer, r), 0);
	for (unsigned i = 0; i < r->nprod; i++) {
		pa[i] = (struct producer){ r, i, storm };
		ASSERT_EQ(pthread_create(&r->prod_th[i], NULL, producer, &pa[i]), 0);
	}
	if (storm)
		ASSERT_EQ(pthread_create(&mov_th, NULL, mover, r), 0);
	uint64_t end = now_ns() + ms * 1000000u;
	unsigned n = 0;
	while (atomic_load_explicit(&r->running, memory_order_acquire) > 0) {
		if (now_ns() > end)
			atomic_store_explicit(&r->stop, true, memory_order_relaxed);
		n = 300; /* sleep at once: this thread only watches the clock */
		backoff(&n);
	}
	/* The mover first: it may still be pinning a producer that has ended,
	 * which is fine (ESRCH) until that producer is joined; after the join
	 * its pthread_t names freed memory (ASan: a SEGV in
	 * pthread_setaffinity_np, once in a CI run). */
	if (storm)
		pthread_join(mov_th, NULL);
	for (unsigned i = 0; i < r->nprod; i++)
		pthread_join(r->prod_th[i], NULL);
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
	}
	unsigned used = 0;
	for (unsigned i = 0; i < r->nrings && i < MAX_CPUS; i++)
		used += atomic_load(&r->ring_used[i]) > 0;
	TLOG("%s: %u producers, %llu entries inserted (%llu calls ending in a sync), %llu consumed, "
	     "%llu missing, %llu EAGAIN, %llu published after a move, "
	     "rings used %u of %u, %llu signals, %llu hops (%llu failed), %llu moves, %llu violations%s%s",
	     storm ? "storm" : "plain", r->nprod, (unsigned long long)total,
	     (unsigned long long)atomic_load(&r->syncs), (unsigned long long)r->consumed,
	     (unsigned long long)missing,
	     (unsigned long long)atomic_load(&r->eagain), (unsigned long long)atomic_load(&r->moved),
	     used, r->nrings,
	     (unsigned long long)atomic_load(&sg.signals), (unsigned long long)atomic_load(&sg.hops),
	     (unsigned long long)atomic_load(&sg.hop_errors), (unsigned long long)atomic_load(&r->moves),
	     (unsigned long long)r->violations, r->violations ? ": first: " : "", r->first);
	if (r->violations && !allow_violations)
		report_violation(r);
	for (unsigned i = 0; i < r->nprod; i++) {
		free(r->seen[i]), free(r->log[i]);
		r->seen[i] = NULL, r->log[i] = NULL;
	}
	if (!allow_violations) {
		if (r->violations)
			hwt_test_fail(__FILE__, __LINE__, "%llu violations, first: %s",
				      (unsigned long long)r->violations, r->first);
		ASSERT_EQ(missing, 0);
		ASSERT_EQ(r->consumed, total);
		ASSERT_GT(total, 0);
	}
	if (!r->violations && (missing || r->consumed != total))
		snprintf(r->first, sizeof(r->first), "%llu entries missing, %llu consumed of %llu inserted",
			 (unsigned long long)missing, (unsigned long long)r->consumed,
			 (unsigned long long)total);
	r->violations += missing + (r->consumed != total);
	return r->violations;
}

/* The library's functions, or the mutant HWT_RSEQ_TEST_BROKEN names. */
static struct build shipped(void)
{
	const char *b = want_broken();
	if (b && test_build(b).fn)
		return test_build(b);
	return (struct build){ "library", hwt__rseq_insert, hwt__rseq_publish, NULL };
}

/* Several producers per CPU, pinned, a small ring (wraps and fills). */
TEST_TIMEOUT(rseq_consumer_exactly_once, 60)
{
	skip_without_rseq();
	static struct rig r;
	rig_init(&r, 4);
	r.insert = shipped().fn;
	r.publish = shipped().publish;
	r.nprod = 2 * sg.ncpus > MAX_PRODUCERS ? MAX_PRODUCERS : 2 * sg.ncpus;
	r.per_prod = 200000;
	r.kmax = 5;
	r.pin = true;
	run(&r, false, 20000 * (uint64_t)hwt_test_scale(), false);
	/* Finished (0.15 s alone on 2 CPUs), or cut by the deadline after at
	 * least an eighth of it: with other processes' busy threads on every
	 * CPU each sched_yield of the rig's backoff may give a whole time
	 * slice away, and 4 of 150 runs beside two busy loops were cut after
	 * 305,102 to 473,624 of 800,000 entries (every one checked). */
	if (atomic_load_explicit(&r.stop, memory_order_relaxed)) { /* after the joins */
		TLOG("cut by the deadline after %llu of %llu entries", (unsigned long long)r.consumed,
		     (unsigned long long)r.nprod * r.per_prod);
		ASSERT_TRUE(r.consumed >= (uint64_t)r.nprod * r.per_prod / 8);
	}
	rig_free(&r);
}

/* One storm round with build b: three producers per online CPU, a ring of
 * 1024, up to 32 entries per call (HWT_RSEQ_NPROD and HWT_RSEQ_SHIFT change
 * the first two, for a hunt).  Returns its violations; *restarts gets
 * the restarts counted. */
static uint64_t storm_round(struct rig *r, struct build b, bool allow_violations, uint64_t *restarts)
{
	online_cpus();
	uint64_t shift = env_u64("HWT_RSEQ_SHIFT", 10), nprod = env_u64("HWT_RSEQ_NPROD", 3 * sg.ncpus);
	ASSERT_TRUE(shift >= 5 && shift <= 16);
	rig_init(r, (unsigned)shift);
	r->insert = b.fn;
	r->publish = b.publish;
	uint64_t before = __atomic_load_n(b.aborts, __ATOMIC_RELAXED);
	r->nprod = nprod > MAX_PRODUCERS ? MAX_PRODUCERS : nprod ? (unsigned)nprod : 1;
	r->per_prod = 1u << 26; /* or until the deadline */
	r->kmax = 32;
	uint64_t v = run(r, true, stress_ms(), allow_violations);
	*restarts = __atomic_load_n(b.aborts, __ATOMIC_RELAXED) - before;
	TLOG("%s build: %llu restarts (%llu per 1000 signals)", b.name, (unsigned long long)*restarts,
	     (unsigned long long)(*restarts * 1000 / (atomic_load(&sg.signals) + 1)));
	rig_free(r);
	return v;
}

/* Restarts on purpose: signals and migrations while producers insert.  A
 * storm that restarted no section proves nothing: rounds follow until one
 * has (within 20 s, scaled: under TCG on a loaded host a round of 5 s saw no
 * restart 7 times in 78), and until one restarted a section after its
 * MSIADDR store (a window of three instructions before the commit), which
 * the consumer then saw stored again for the slot the call finally took.
 * Only required natively with unscaled time limits: TSan takes a signal at
 * its own safe points, outside the assembly, and TCG (the VM stage, scaled)
 * only at the start of a translation block, which that window is not; the
 * count is logged everywhere. */
TEST_TIMEOUT(rseq_restart_storm, 60)
{
	skip_without_rseq();
	if (!hwt__rseq_insert_test)
		SKIP("this build has no test build of the assembly");
	static struct rig r;
	uint64_t restarts = 0, rounds = 0, re, moves = 0, hops = 0, msi0, msi = 0;
	uint64_t end = now_ns() + 20000000000ull * (uint64_t)hwt_test_scale();
	const char *b = want_broken();
	bool want_msi = !b && !HWT_TSAN && hwt_test_scale() <= 1.0;
	do {
		msi0 = __atomic_load_n(&hwt__rseq_test_msi_aborts, __ATOMIC_RELAXED);
		storm_round(&r, test_build(b ? b : "test"), false, &re);
		if (!b)
			msi += __atomic_load_n(&hwt__rseq_test_msi_aborts, __ATOMIC_RELAXED) - msi0;
		restarts += re, rounds++;
		moves += atomic_load(&r.moves), hops += atomic_load(&sg.hops);
	} while ((!restarts || (want_msi && !msi)) && now_ns() < end);
	TLOG("%llu restarts in %llu rounds, %llu of them after the MSIADDR store",
	     (unsigned long long)restarts, (unsigned long long)rounds, (unsigned long long)msi);
	ASSERT_GT(restarts, 0);
	if (want_msi)
		ASSERT_GT(msi, 0);
	ASSERT_GT(moves, 0);
	ASSERT_GT(hops, 0);
}

/* A positive control: the mutant must be caught within 20 s (scaled), or in
 * HWT_RSEQ_ROUNDS rounds, all of them run, when that is set. */
static void catch_mutant(const char *name)
{
	skip_without_rseq();
#if HWT_TSAN
	if (strcmp(name, "commit") && strcmp(name, "msiaddr"))
		SKIP("under TSan a signal's handler runs at TSan's next safe point, not at the "
		     "instruction the signal interrupted: the storm's moves cannot hit the window "
		     "this mutant opens");
#endif
	struct build b = test_build(name);
	if (!b.fn)
		SKIP("this build has no test build of the assembly");
	uint64_t rounds = env_u64("HWT_RSEQ_ROUNDS", 0), caught = 0, round = 0, first = 0, restarts = 0;
	uint64_t end = now_ns() + 20000000000ull * (uint64_t)hwt_test_scale();
	while (rounds ? round < rounds : !caught && now_ns() < end) {
		static struct rig r;
		uint64_t re, v = storm_round(&r, b, true, &re);
		restarts += re;
		round++;
		if (v && !caught++)
			first = round;
		if (v)
			TLOG("round %llu: %llu violations, first: %s", (unsigned long long)round,
			     (unsigned long long)v, r.first);
	}
	TLOG("mutant %s caught in %llu of %llu rounds (first in round %llu), %llu restarts in all", name,
	     (unsigned long long)caught, (unsigned long long)round, (unsigned long long)first,
	     (unsigned long long)restarts);
	ASSERT_GT(caught, 0);
}

/* PROD committed before the entries. */
TEST_TIMEOUT(rseq_storm_catches_broken_commit, 60)
{
	catch_mutant("commit");
}

/* The commit left out of the section (post_commit_offset one instruction
 * short). */
TEST_TIMEOUT(rseq_storm_catches_broken_post, 60)
{
	catch_mutant("post");
}

/* No check of the CPU inside the section. */
TEST_TIMEOUT(rseq_storm_catches_broken_nocpu, 60)
{
	catch_mutant("nocpu");
}

/* No MSIADDR stored for a call that ends in a CMD_SYNC. */
TEST_TIMEOUT(rseq_storm_catches_broken_msiaddr, 60)
{
	catch_mutant("msiaddr");
}

/* The publish outside a section: a stale PROD stored after a newer one. */
TEST_TIMEOUT(rseq_storm_catches_broken_pubout, 60)
{
	catch_mutant("pubout");
}
