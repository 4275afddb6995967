/* SPDX-License-Identifier: MIT */
/* Concurrency Kit ck_ring, MPSC, 16-byte elements stored in the ring
 * (CK_RING_PROTOTYPE), one element per call. */
#include "peers.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include <ck_ring.h>

CK_RING_PROTOTYPE(bench, hwt_cmdq_cmd)

struct ckq {
	struct ck_ring ring; /* padded to cache lines by ck */
	struct hwt_cmdq_cmd *buf;
};

static int c_create(void **out, unsigned log2)
{
	struct ckq *q = aligned_alloc(128, (sizeof(*q) + 127) & ~(size_t)127);

	if (!q)
		return -ENOMEM;
	q->buf = aligned_alloc(128, sizeof(*q->buf) << log2);
	if (!q->buf) {
		free(q);
		return -ENOMEM;
	}
	ck_ring_init(&q->ring, 1u << log2);
	*out = q;
	return 0;
}

static void c_destroy(void *p)
{
	struct ckq *q = p;

	free(q->buf);
	free(q);
}

static unsigned c_enqueue(void *p, const struct hwt_cmdq_cmd *e, unsigned n)
{
	struct ckq *q = p;
	unsigned i;

	/* ck copies from the entry; its prototype just lacks const */
	for (i = 0; i < n; i++)
		if (!ck_ring_enqueue_mpsc_bench(&q->ring, q->buf,
						(struct hwt_cmdq_cmd *)(uintptr_t)&e[i]))
			break;
	return i;
}

static unsigned c_dequeue(void *p, struct hwt_cmdq_cmd *e, unsigned max)
{
	struct ckq *q = p;
	unsigned i;

	for (i = 0; i < max; i++)
		if (!ck_ring_dequeue_mpsc_bench(&q->ring, q->buf, &e[i]))
			break;
	return i;
}

static const struct bench_ring_ops ck_ring = {
	.name = "ck_ring",
	.detail = "ck_ring_init(2^N) (capacity 2^N - 1); ck_ring_enqueue_mpsc / "
		  "ck_ring_dequeue_mpsc of CK_RING_PROTOTYPE(struct hwt_cmdq_cmd): 16-byte "
		  "elements stored in the ring, one per call (ck has no burst call)",
	.create = c_create,
	.destroy = c_destroy,
	.enqueue = c_enqueue,
	.dequeue = c_dequeue,
	.blocks = false,
};

const struct bench_queue_ops bench_ck_ops = BENCH_RING_QUEUE(&ck_ring);
