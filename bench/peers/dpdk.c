/* SPDX-License-Identifier: MIT */
/*
 * DPDK rte_ring, 16-byte elements in the ring, one consumer, initialised on
 * our own memory (no EAL), in two producer modes:
 *
 *   rte_ring      the classic multi-producer ring: a CAS on the head, then
 *                 each producer waits for the producers before it to move
 *                 the tail (a preempted one stalls those after it).
 *   rte_ring_rts  relaxed tail sync (RING_F_MP_RTS_ENQ), DPDK's mode for
 *                 overcommitted threads: head and tail are (position,
 *                 count) pairs moved by 64-bit CASes, and only the last
 *                 producer in flight moves the tail, so nobody waits for a
 *                 preempted one to publish.  Two CASes per enqueue.
 *                 The head-tail distance limit keeps DPDK's default
 *                 (capacity / 8).
 *
 * Both dequeue with the single-consumer call: the consumer side is the
 * same, only the producers' protocol differs (DPDK keeps the two sides'
 * sync types apart, and the RTS tail's position sits where the classic
 * tail is for the SC dequeue to read).
 */
#include "peers.h"

#include <errno.h>
#include <stdlib.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

static int d_init(void **out, unsigned log2, unsigned flags)
{
	unsigned count = 1u << log2;
	ssize_t sz = rte_ring_get_memsize_elem(sizeof(struct hwt_cmdq_cmd), count);
	struct rte_ring *r;
	int err;

	if (sz < 0)
		return (int)sz;
	r = aligned_alloc(RTE_CACHE_LINE_SIZE * 2, ((size_t)sz + 255) & ~(size_t)255);
	if (!r)
		return -ENOMEM;
	err = rte_ring_init(r, "bench_cmdq", count, flags);
	if (err) {
		free(r);
		return err;
	}
	*out = r;
	return 0;
}

static int d_create(void **out, unsigned log2)
{
	return d_init(out, log2, RING_F_SC_DEQ);
}

static void d_destroy(void *q)
{
	free(q);
}

static unsigned d_enqueue(void *q, const struct hwt_cmdq_cmd *e, unsigned n)
{
	return rte_ring_mp_enqueue_burst_elem(q, e, sizeof(*e), n, NULL);
}

static unsigned d_dequeue(void *q, struct hwt_cmdq_cmd *e, unsigned max)
{
	return rte_ring_sc_dequeue_burst_elem(q, e, sizeof(*e), max, NULL);
}

static const struct bench_ring_ops dpdk_ring = {
	.name = "rte_ring",
	.detail = "rte_ring_init(count 2^N, RING_F_SC_DEQ) on aligned_alloc memory, no EAL "
		  "(capacity 2^N - 1); rte_ring_mp_enqueue_burst_elem / "
		  "rte_ring_sc_dequeue_burst_elem, 16-byte elements stored in the ring",
	.create = d_create,
	.destroy = d_destroy,
	.enqueue = d_enqueue,
	.dequeue = d_dequeue,
	.blocks = false,
};

const struct bench_queue_ops bench_dpdk_ops = BENCH_RING_QUEUE(&dpdk_ring);

#ifdef HAVE_DPDK_RTS
static int d_rts_create(void **out, unsigned log2)
{
	return d_init(out, log2, RING_F_MP_RTS_ENQ | RING_F_SC_DEQ);
}

static unsigned d_rts_enqueue(void *q, const struct hwt_cmdq_cmd *e, unsigned n)
{
	return rte_ring_mp_rts_enqueue_burst_elem(q, e, sizeof(*e), n, NULL);
}

static const struct bench_ring_ops dpdk_rts_ring = {
	.name = "rte_ring_rts",
	.detail = "rte_ring_init(count 2^N, RING_F_MP_RTS_ENQ | RING_F_SC_DEQ) on aligned_alloc "
		  "memory, no EAL (capacity 2^N - 1, head-tail distance limit DPDK's default, "
		  "capacity / 8); rte_ring_mp_rts_enqueue_burst_elem (relaxed tail sync: two "
		  "64-bit CASes, no wait for other producers' tails) / "
		  "rte_ring_sc_dequeue_burst_elem, 16-byte elements stored in the ring",
	.create = d_rts_create,
	.destroy = d_destroy,
	.enqueue = d_rts_enqueue,
	.dequeue = d_dequeue,
	.blocks = false,
};

const struct bench_queue_ops bench_dpdk_rts_ops = BENCH_RING_QUEUE(&dpdk_rts_ring);
#endif
