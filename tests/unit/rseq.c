/* SPDX-License-Identifier: MIT */
/*
 * The rseq insertion's contract (src/arch/rseq.h), single-threaded, pinned:
 * room, the two runs at the wrap, -EAGAIN with CONS re-read once (ERR
 * masked), -ERANGE, -EINVAL, the CMD_SYNC's MSIADDR, the two steps (sprod
 * then PROD) and hwt__rseq_publish.  The restart storm against a consumer
 * thread is tests/stress/rseq.c.  Without rseq (GLIBC_TUNABLES=
 * glibc.pthread.rseq=0, qemu-user, riscv64, the generic build) every test
 * skips with hwt__rseq_unavailable()'s text.
 */
#include "arch/rseq.h"
#include "bus/queue.h"
#include "harness/harness.h"
#include "harness/rseqrig.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Pins the calling thread to the CPU it runs on; returns that CPU. */
static unsigned pin_here(void)
{
	int c = sched_getcpu();

	ASSERT_TRUE(c >= 0);
	ASSERT_EQ(hwt_test_pin(pthread_self(), c), 0);
	return (unsigned)c;
}

/* The calling thread's rseq_cs (glibc's area, at __rseq_offset from the
 * thread pointer). */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
static uint64_t rseq_cs_now(void)
{
	const char *area = (const char *)__builtin_thread_pointer() + __rseq_offset;

	return __atomic_load_n((const uint64_t *)(area + HWT__RSEQ_CS), __ATOMIC_RELAXED);
}

TEST(rseq_contract)
{
	static struct rig r;
	unsigned here, cpu = ~0u;
	uint32_t prod = ~0u;
	uint64_t ents[2 * 9];
	struct hwt__rseq_ring *g;
	struct queue *q;

	rseqrig_skip_without_rseq();
	rseqrig_init(&r, 3); /* 8 entries */
	here = pin_here();
	g = &r.rings[here];
	q = &r.q[here];
	for (unsigned j = 0; j < 18; j++)
		ents[j] = 0x1000 + j;

	ASSERT_EQ(hwt__rseq_insert(r.rings, r.nrings, ents, 0, &cpu, &prod), -EINVAL);
	ASSERT_EQ(cpu, here);
	ASSERT_EQ(hwt__rseq_insert(r.rings, r.nrings, ents, 9, &cpu, &prod), -EINVAL);
	ASSERT_EQ(hwt__rseq_insert(r.rings, here, ents, 1, &cpu, &prod), -ERANGE);
	ASSERT_EQ(cpu, here);
	ASSERT_EQ(prod, ~0u);

	ASSERT_EQ(hwt__rseq_insert(r.rings, r.nrings, ents, 6, &cpu, &prod), 0);
	ASSERT_EQ(rseq_cs_now(), 0); /* cleared on the way out (rseq.h: dlclose) */
	ASSERT_EQ(cpu, here);
	ASSERT_EQ(prod, 6);
	ASSERT_EQ(g->sprod, 6);
	ASSERT_EQ(atomic_load_explicit(&q->prod, memory_order_relaxed), 6); /* published */
	ASSERT_EQ(memcmp(g->slots, ents, 6 * 16), 0);
	/* 2 free: 3 do not fit, CONS unchanged, ccons refreshed to it */
	prod = 77;
	ASSERT_EQ(hwt__rseq_insert(r.rings, r.nrings, ents, 3, &cpu, &prod), -EAGAIN);
	ASSERT_EQ(rseq_cs_now(), 0);
	ASSERT_EQ(prod, 77);
	ASSERT_EQ(atomic_load_explicit(&q->prod, memory_order_relaxed), 6);
	/* the device consumed 5, with ERR bits set in CONS: masked off */
	atomic_store_explicit(&q->cons, 5u | 0x7fu << 24, memory_order_relaxed);
	ASSERT_EQ(hwt__rseq_insert(r.rings, r.nrings, ents + 2, 7, &cpu, &prod), 0);
	ASSERT_EQ(g->ccons, 5);
	ASSERT_EQ(prod, 13); /* WRP set, IDX 5 */
	/* two runs: slots 6,7 then 0..4 */
	ASSERT_EQ(memcmp(g->slots + 12, ents + 2, 2 * 16), 0);
	ASSERT_EQ(memcmp(g->slots, ents + 6, 5 * 16), 0);
	/* full now: 8 in use */
	ASSERT_EQ(hwt__rseq_insert(r.rings, r.nrings, ents, 1, &cpu, &prod), -EAGAIN);
	atomic_store_explicit(&q->cons, 13u, memory_order_relaxed);
	ASSERT_EQ(hwt__rseq_insert(r.rings, r.nrings, ents, 8, &cpu, &prod), 0);
	ASSERT_EQ(prod, 5); /* wrapped twice: WRP clear again */
	ASSERT_EQ(memcmp(g->slots + 10, ents, 3 * 16), 0);
	ASSERT_EQ(memcmp(g->slots, ents + 6, 5 * 16), 0);
	for (unsigned i = 0; i < r.nrings; i++)
		if (i != here)
			ASSERT_EQ(atomic_load_explicit(&r.q[i].prod, memory_order_relaxed) | r.rings[i].sprod, 0);

	/* HWT__RSEQ_K_SYNC_MSI: the last entry's dw1 = its slot's IOVA, the
	 * others untouched; in one run (slots 5, 6) and at the wrap (slots 7,
	 * 0, 1: the last in the second run). */
	atomic_store_explicit(&q->cons, 5u, memory_order_relaxed);
	ASSERT_EQ(hwt__rseq_insert(r.rings, r.nrings, ents, 2 | HWT__RSEQ_K_SYNC_MSI, &cpu, &prod), 0);
	ASSERT_EQ(prod, 7);
	ASSERT_EQ(g->slots[10], ents[0]);
	ASSERT_EQ(g->slots[11], ents[1]);
	ASSERT_EQ(g->slots[12], ents[2]);
	ASSERT_EQ(g->slots[13], RING_IOVA(here) + 6 * 16);
	ASSERT_EQ(ents[3], 0x1003); /* the caller's copy untouched */
	atomic_store_explicit(&q->cons, 7u, memory_order_relaxed);
	ASSERT_EQ(hwt__rseq_insert(r.rings, r.nrings, ents, 3 | HWT__RSEQ_K_SYNC_MSI, &cpu, &prod), 0);
	ASSERT_EQ(prod, 10); /* WRP set, IDX 2 */
	ASSERT_EQ(g->slots[14], ents[0]);
	ASSERT_EQ(g->slots[15], ents[1]);
	ASSERT_EQ(g->slots[0], ents[2]);
	ASSERT_EQ(g->slots[1], ents[3]);
	ASSERT_EQ(g->slots[2], ents[4]);
	ASSERT_EQ(g->slots[3], RING_IOVA(here) + 1 * 16);
	/* k is checked without the flags */
	ASSERT_EQ(hwt__rseq_insert(r.rings, r.nrings, ents, HWT__RSEQ_K_SYNC_MSI, &cpu, &prod), -EINVAL);
	ASSERT_EQ(hwt__rseq_insert(r.rings, r.nrings, ents, 9 | HWT__RSEQ_K_SYNC_MSI, &cpu, &prod), -EINVAL);
	ASSERT_EQ(hwt__rseq_insert(r.rings, r.nrings, ents, HWT__RSEQ_K_NO_PUBLISH, &cpu, &prod), -EINVAL);
	/* k is 32 bits: the high half of its register is the caller's (AAPCS64
	 * leaves it undefined) and must not read as a flag.  Called through
	 * a type with a 64-bit k to put bits there (the ABI's view of the
	 * call; a compiler passing a truncated uint64_t does the same). */
	typedef int (*insert_k64)(struct hwt__rseq_ring *, unsigned, const void *, uint64_t,
				  unsigned *, uint32_t *);
	insert_k64 k64 = (insert_k64)(void (*)(void))hwt__rseq_insert;

	atomic_store_explicit(&q->cons, 10u, memory_order_relaxed);
	ASSERT_EQ(k64(r.rings, r.nrings, ents, 7ull << 32 | 2, &cpu, &prod), 0);
	ASSERT_EQ(prod, 12);
	ASSERT_EQ(atomic_load_explicit(&q->prod, memory_order_relaxed), 12);
	ASSERT_EQ(memcmp(g->slots + 4, ents, 2 * 16), 0); /* dw1 of the last as written */
	ASSERT_EQ(rseq_cs_now(), 0);

	/* HWT__RSEQ_K_NO_PUBLISH: step 1 only; sprod moves, PROD does not
	 * until a publish on this CPU, which publishes everything inserted. */
	ASSERT_EQ(hwt__rseq_insert(r.rings, r.nrings, ents, 1 | HWT__RSEQ_K_NO_PUBLISH, &cpu, &prod),
		  HWT__RSEQ_MOVED);
	ASSERT_EQ(rseq_cs_now(), 0);
	ASSERT_EQ(cpu, here);
	ASSERT_EQ(prod, 13);
	ASSERT_EQ(g->sprod, 13);
	ASSERT_EQ(atomic_load_explicit(&q->prod, memory_order_relaxed), 12);
	ASSERT_EQ(memcmp(g->slots + 8, ents, 16), 0);
	ASSERT_EQ(hwt__rseq_insert(r.rings, r.nrings, ents + 2, 2 | HWT__RSEQ_K_NO_PUBLISH, &cpu, &prod),
		  HWT__RSEQ_MOVED);
	ASSERT_EQ(prod, 15);
	ASSERT_EQ(atomic_load_explicit(&q->prod, memory_order_relaxed), 12);
	/* no room counts what sprod holds, published or not: 5 in use */
	ASSERT_EQ(hwt__rseq_insert(r.rings, r.nrings, ents, 4, &cpu, &prod), -EAGAIN);
	ASSERT_EQ(hwt__rseq_publish(r.rings, here, here), -ERANGE);
	ASSERT_EQ(hwt__rseq_publish(r.rings, r.nrings, here), 0);
	ASSERT_EQ(rseq_cs_now(), 0);
	ASSERT_EQ(atomic_load_explicit(&q->prod, memory_order_relaxed), 15);
	ASSERT_EQ(hwt__rseq_publish(r.rings, r.nrings, here), 0); /* again: the same PROD */
	ASSERT_EQ(atomic_load_explicit(&q->prod, memory_order_relaxed), 15);
	/* a plain insert publishes entries inserted before it as well */
	ASSERT_EQ(hwt__rseq_insert(r.rings, r.nrings, ents, 1 | HWT__RSEQ_K_NO_PUBLISH, &cpu, &prod),
		  HWT__RSEQ_MOVED);
	ASSERT_EQ(hwt__rseq_insert(r.rings, r.nrings, ents, 1, &cpu, &prod), 0);
	ASSERT_EQ(prod, 1); /* WRP clear, IDX 1 */
	ASSERT_EQ(atomic_load_explicit(&q->prod, memory_order_relaxed), 1);
	rseqrig_free(&r);
	/* another CPU's ring: not published from here, nothing stored */
	if (r.nrings > 1) {
		ASSERT_TRUE(rseqrig_publish_elsewhere_refused(hwt__rseq_publish));
		ASSERT_EQ(rseq_cs_now(), 0);
	}
}

/* Single-thread cost, k = 1 and 32, against memcpy and a release store of
 * PROD (logged with -v; no speed is asserted). */
TEST(rseq_timing)
{
	static struct rig r;
	unsigned here, cpu;
	uint32_t prod;
	static uint64_t ents[2 * 32];
	const unsigned iters = 200000;
	struct queue *q;

	rseqrig_skip_without_rseq();
	rseqrig_init(&r, 10);
	here = pin_here();
	q = &r.q[here];
	for (uint32_t k = 1; k <= 32; k += 31) {
		double best_rseq = 1e9, best_copy = 1e9;

		for (int round = 0; round < 5; round++) {
			uint64_t t0 = rseqrig_now_ns(), t1, t2;
			uint32_t p = 0;

			for (unsigned i = 0; i < iters; i++) {
				int rc = hwt__rseq_insert(r.rings, r.nrings, ents, k, &cpu, &prod);

				if (rc == -EAGAIN) {
					atomic_store_explicit(&q->cons, atomic_load_explicit(&q->prod,
						memory_order_relaxed), memory_order_release);
					continue;
				}
				ASSERT_EQ(rc, 0);
			}
			t1 = rseqrig_now_ns();
			for (unsigned i = 0; i < iters; i++) {
				uint32_t idx = hwt__q_idx(r.shift, p);

				if (idx + k > (1u << r.shift))
					idx = 0, p = 0;
				memcpy(r.rings[here].slots + 2 * idx, ents, k * 16);
				p = hwt__q_inc(r.shift, p, k);
				atomic_store_explicit(&q->prod, p, memory_order_release);
			}
			t2 = rseqrig_now_ns();
			if ((double)(t1 - t0) / iters < best_rseq)
				best_rseq = (double)(t1 - t0) / iters;
			if ((double)(t2 - t1) / iters < best_copy)
				best_copy = (double)(t2 - t1) / iters;
			/* the copy loop moved PROD: start the ring again */
			atomic_store_explicit(&q->prod, 0, memory_order_relaxed);
			atomic_store_explicit(&q->cons, 0, memory_order_relaxed);
			r.rings[here].ccons = 0, r.rings[here].sprod = 0;
		}
		TLOG("k=%u: hwt__rseq_insert %.1f ns/call, memcpy + release store %.1f ns/call "
		     "(best of 5 x %u)", k, best_rseq, best_copy, iters);
	}
	rseqrig_free(&r);
}
