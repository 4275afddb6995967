/* SPDX-License-Identifier: MIT */
/* DPDK rte_ring, 16-byte elements in the ring, MP enqueue / SC dequeue,
 * initialised on our own memory (no EAL). */
#include "peers.h"

#include <errno.h>
#include <stdlib.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

static int d_create(void **out, unsigned log2)
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
	err = rte_ring_init(r, "bench_cmdq", count, RING_F_SC_DEQ);
	if (err) {
		free(r);
		return err;
	}
	*out = r;
	return 0;
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
