/* SPDX-License-Identifier: MIT */
/* The rig of the rseq restart storm: tests/harness/rseqrig.h. */
#include "harness/rseqrig.h"

#include "bus/queue.h"
#include "harness/harness.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct build rseqrig_build(const char *name)
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
	if (!strcmp(name, "ntfence"))
		return BUILD(name, _broken_ntfence, broken_ntfence);
	if (!strcmp(name, "pubcpu"))
		return BUILD(name, _broken_pubcpu, broken_pubcpu);
	return BUILD("test", _test, test);
}

/* The mutant HWT_RSEQ_TEST_BROKEN names, or NULL. */
const char *rseqrig_want_broken(void)
{
	const char *e = getenv("HWT_RSEQ_TEST_BROKEN");
	if (!e || !*e || !strcmp(e, "0"))
		return NULL;
	return !strcmp(e, "1") ? "commit" : e;
}

struct rseqrig_sg rseqrig_sg;
static _Thread_local unsigned tl_signals;

uint64_t rseqrig_now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

uint64_t rseqrig_env_u64(const char *name, uint64_t dflt)
{
	const char *e = getenv(name);
	return e && *e ? strtoull(e, NULL, 10) : dflt;
}

uint64_t rseqrig_stress_ms(void)
{
	return rseqrig_env_u64("HWT_STRESS_MS", 400);
}

/* A bounded wait step (2 CPUs): 64 spins, then yields, then sleeps. */
static void backoff(unsigned *n)
{
	hwt_test_backoff(n, 64, 192);
}

void rseqrig_skip_without_rseq(void)
{
	const char *why = hwt__rseq_unavailable();
	if (why)
		SKIP("rseq path unavailable: %s", why);
}

/* The CPUs this process may run on (the storm moves threads among them). */
void rseqrig_online_cpus(void)
{
	cpu_set_t set;
	ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	rseqrig_sg.ncpus = 0;
	for (int c = 0; c < CPU_SETSIZE && rseqrig_sg.ncpus < MAX_CPUS; c++)
		if (CPU_ISSET(c, &set))
			rseqrig_sg.cpus[rseqrig_sg.ncpus++] = c;
	ASSERT_GT(rseqrig_sg.ncpus, 0);
}

bool rseqrig_publish_elsewhere_refused(hwt__rseq_publish_fn *publish)
{
	static struct rig r;
	int c = sched_getcpu(), rc;
	uint32_t prod;
	rseqrig_init(&r, 3);
	if (r.nrings < 2) {
		rseqrig_free(&r);
		SKIP("one possible CPU: no other CPU's ring");
	}
	ASSERT_TRUE(c >= 0 && hwt_test_pin(pthread_self(), c) == 0);
	unsigned other = ((unsigned)c + 1) % r.nrings;
	r.rings[other].sprod = 3; /* inserted there, not published */
	rc = publish(r.rings, r.nrings, other);
	prod = atomic_load_explicit(&r.q[other].prod, memory_order_relaxed);
	TLOG("publish of CPU %u's ring from CPU %d: %d, its PROD %u", other, c, rc, prod);
	rseqrig_free(&r);
	return rc == HWT__RSEQ_MOVED && prod == 0;
}

void rseqrig_init(struct rig *r, unsigned shift)
{
	memset(r, 0, sizeof(*r));
	rseqrig_online_cpus();
	r->nrings = (unsigned)sysconf(_SC_NPROCESSORS_CONF); /* the possible CPUs, as the queue */
	ASSERT_TRUE(r->nrings > 0);
	if (r->nrings > MAX_CPUS) /* the queue takes the shared path there */
		SKIP("%u possible CPUs: more than the %u rings of a device", r->nrings, MAX_CPUS);
	for (unsigned i = 0; i < rseqrig_sg.ncpus; i++)
		ASSERT_TRUE((unsigned)rseqrig_sg.cpus[i] < r->nrings);
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

void rseqrig_free(struct rig *r)
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
			    .prev1 = sh[1], .t_ns = rseqrig_now_ns() };
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
	long us = (long)rseqrig_env_u64("HWT_RSEQ_TIMER_US", 50);
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
	uint64_t ents[2 * RSEQRIG_KMAX];
	uint64_t seq = 0, n_ins = 0;
	unsigned x = pa->id * 2654435761u + 1;
	timer_t timer;
	int rc = 0;
	if (r->pin && (rc = hwt_test_pin(pthread_self(), rseqrig_sg.cpus[pa->id % rseqrig_sg.ncpus])) != 0)
		rc = -rc;
	if (!rc && pa->timer)
		rc = arm_timer(&timer, pa->id);
	if (rc) {
		atomic_store_explicit(&r->error, rc, memory_order_relaxed);
		goto out;
	}
	while (seq < r->per_prod && !atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		x = x * 1103515245u + 12345u;
		uint32_t k = r->kbig && ((x >> 12) & 7) == 0 ? r->kbig + (x >> 16) % 33 : 1 + (x >> 16) % r->kmax;
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
		uint32_t prod, kf = k | (sync ? HWT__RSEQ_K_SYNC_MSI : 0) | (nopub ? HWT__RSEQ_K_NO_PUBLISH : 0) |
				       (k >= HWT__RSEQ_NT_MIN ? HWT__RSEQ_K_NT : 0);
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
			unsigned tries = 0;

			atomic_fetch_add_explicit(&r->moved, 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&r->moved_real, !nopub, memory_order_relaxed);
			/* bounded by the run's deadline (stop), then about 40 ms of
			 * sleeps: entries left unpublished fail the run */
			while ((rc = r->publish(r->rings, r->nrings, cpu)) == HWT__RSEQ_MOVED) {
				if ((rc = hwt_test_pin(pthread_self(), (int)cpu)) != 0) {
					rc = -rc;
					break;
				}
				if (atomic_load_explicit(&r->stop, memory_order_relaxed) && tries > 1000) {
					rc = -ETIMEDOUT;
					break;
				}
				backoff(&tries);
			}
		}
		if (rc != 0) {
			atomic_store_explicit(&r->error, rc, memory_order_relaxed);
			break;
		}
		r->log[pa->id][n_ins++ % LOG_N] = (struct ins){ .t_ns = rseqrig_now_ns(), .seq = seq,
								.prod = prod, .k = k,
								.cpu = (uint16_t)cpu,
								.cpu_after = (uint16_t)sched_getcpu(),
								.sync = sync };
		atomic_fetch_add_explicit(&r->syncs, sync, memory_order_relaxed);
		atomic_fetch_add_explicit(&r->nt, k >= HWT__RSEQ_NT_MIN, memory_order_relaxed);
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
	atomic_fetch_add_explicit(&rseqrig_sg.signals, 1, memory_order_relaxed);
	if (rseqrig_sg.hop_every && ++tl_signals % rseqrig_sg.hop_every == 0) {
		int here = sched_getcpu();
		unsigned i = 0;
		while (i < rseqrig_sg.ncpus && rseqrig_sg.cpus[i] != here)
			i++;
		if (hwt_test_pin(pthread_self(), rseqrig_sg.cpus[(i + 1) % rseqrig_sg.ncpus]) == 0)
			atomic_fetch_add_explicit(&rseqrig_sg.hops, 1, memory_order_relaxed);
		else
			atomic_fetch_add_explicit(&rseqrig_sg.hop_errors, 1, memory_order_relaxed);
	}
	errno = e;
}

/* Moves the producers between CPUs from outside, now and then. */
static void *mover(void *arg)
{
	struct rig *r = arg;
	unsigned i = 0;
	while (atomic_load_explicit(&r->running, memory_order_acquire) > 0) {
		int rc = hwt_test_pin(r->prod_th[i % r->nprod], rseqrig_sg.cpus[(i / r->nprod + i) % rseqrig_sg.ncpus]);
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
uint64_t rseqrig_run(struct rig *r, bool storm, uint64_t ms, bool allow_violations)
{
	pthread_t cons, mov_th;
	struct producer pa[MAX_PRODUCERS];
	ASSERT_TRUE(r->nprod <= MAX_PRODUCERS && r->kmax >= 1 && r->kmax <= RSEQRIG_KMAX &&
		    (!r->kbig || (r->kbig + 32 <= RSEQRIG_KMAX && r->kbig + 32 <= 1u << r->shift)));
	for (unsigned i = 0; i < r->nprod; i++) {
		ASSERT_TRUE((r->seen[i] = calloc(r->per_prod / 8 + 1, 1)) != NULL);
		ASSERT_TRUE((r->log[i] = calloc(LOG_N, sizeof(struct ins))) != NULL);
	}
	atomic_store_explicit(&r->running, r->nprod, memory_order_relaxed);
	atomic_store_explicit(&rseqrig_sg.signals, 0, memory_order_relaxed); /* no storm runs now */
	atomic_store_explicit(&rseqrig_sg.hops, 0, memory_order_relaxed);
	atomic_store_explicit(&rseqrig_sg.hop_errors, 0, memory_order_relaxed);
	rseqrig_sg.hop_every = storm ? (unsigned)rseqrig_env_u64("HWT_RSEQ_HOP_EVERY", 2) : 0;
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
	uint64_t end = rseqrig_now_ns() + ms * 1000000u;
	unsigned n = 0;
	while (atomic_load_explicit(&r->running, memory_order_acquire) > 0) {
		if (rseqrig_now_ns() > end)
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
	ASSERT_EQ(atomic_load_explicit(&r->error, memory_order_relaxed), 0);
	/* exactly once: every seq a producer inserted was seen (twice is a
	 * violation above), and nothing else was consumed */
	uint64_t total = 0, missing = 0;
	for (unsigned i = 0; i < r->nprod; i++) {
		uint64_t ins = atomic_load_explicit(&r->inserted[i], memory_order_relaxed);
		total += ins;
		for (uint64_t j = 0; j < ins; j++)
			missing += !(r->seen[i][j / 8] & 1u << j % 8);
	}
	unsigned used = 0;
	for (unsigned i = 0; i < r->nrings && i < MAX_CPUS; i++)
		used += atomic_load_explicit(&r->ring_used[i], memory_order_relaxed) > 0;
	TLOG("%s: %u producers, %llu entries inserted (%llu calls ending in a sync, %llu non-temporal), "
	     "%llu consumed, "
	     "%llu missing, %llu EAGAIN, %llu published after a move (%llu not asked for), "
	     "rings used %u of %u, %llu signals, %llu hops (%llu failed), %llu moves, %llu violations%s%s",
	     storm ? "storm" : "plain", r->nprod, (unsigned long long)total,
	     rseqrig_stat(&r->syncs), rseqrig_stat(&r->nt), (unsigned long long)r->consumed,
	     (unsigned long long)missing,
	     rseqrig_stat(&r->eagain), rseqrig_stat(&r->moved), rseqrig_stat(&r->moved_real),
	     used, r->nrings,
	     rseqrig_stat(&rseqrig_sg.signals), rseqrig_stat(&rseqrig_sg.hops),
	     rseqrig_stat(&rseqrig_sg.hop_errors), rseqrig_stat(&r->moves),
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
