/* SPDX-License-Identifier: MIT */
/*
 * liburcu's wfcqueue (urcu/wfcqueue.h): a wait-free concurrent queue of
 * intrusive nodes, many enqueuers, here one dequeuer (the "__" dequeue,
 * whose mutual exclusion the caller provides: ring.c's single consumer).
 *
 * The queue is unbounded and holds nodes, not elements, so each producer
 * owns a pool of 2^N nodes used in turn: a node is reused only after the
 * consumer has copied its element out and cleared its busy flag.  A full
 * pool is the "ring full" of the other peers.  Linked against
 * liburcu-common (the out-of-line wfcqueue functions; no _LGPL_SOURCE).
 */
#include "peers.h"

#include <errno.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/wfcqueue.h>

struct unode {
	struct cds_wfcq_node link;
	struct hwt_cmdq_cmd e;
	/* 1 from the producer's fill until the consumer copied e out */
	_Atomic int busy;
};

struct upool {
	alignas(128) uint64_t next; /* the producer's own: its next node */
	struct unode *node;         /* 2^log2 nodes */
};

struct uq {
	alignas(128) struct __cds_wfcq_head head; /* the consumer's end */
	alignas(128) struct cds_wfcq_tail tail;   /* the producers' end */
	alignas(128) unsigned mask;
	struct unode *nodes;
	struct upool pool[BENCH_MAX_PROD];
};

static int u_create(void **out, unsigned log2)
{
	struct uq *q = aligned_alloc(128, (sizeof(*q) + 127) & ~(size_t)127);
	size_t per = (size_t)1 << log2;

	if (!q)
		return -ENOMEM;
	memset(q, 0, sizeof(*q));
	q->nodes = aligned_alloc(128, ((sizeof(*q->nodes) * per * BENCH_MAX_PROD) + 127) &
					      ~(size_t)127);
	if (!q->nodes) {
		free(q);
		return -ENOMEM;
	}
	q->mask = (unsigned)per - 1;
	for (size_t i = 0; i < per * BENCH_MAX_PROD; i++) {
		cds_wfcq_node_init(&q->nodes[i].link);
		/* relaxed: published by the thread creation that follows */
		atomic_store_explicit(&q->nodes[i].busy, 0, memory_order_relaxed);
	}
	for (unsigned p = 0; p < BENCH_MAX_PROD; p++)
		q->pool[p].node = q->nodes + per * p;
	__cds_wfcq_init(&q->head, &q->tail);
	*out = q;
	return 0;
}

static void u_destroy(void *p)
{
	struct uq *q = p;

	free(q->nodes);
	free(q);
}

static unsigned u_enqueue_id(void *p, unsigned id, const struct hwt_cmdq_cmd *e, unsigned n)
{
	struct uq *q = p;
	struct upool *pl = &q->pool[id];
	unsigned i;

	for (i = 0; i < n; i++) {
		struct unode *u = &pl->node[pl->next & q->mask];

		/* acquire: pairs with the release store of busy in
		 * u_dequeue(): the consumer's read of e is done */
		if (atomic_load_explicit(&u->busy, memory_order_acquire))
			break;
		atomic_store_explicit(&u->busy, 1, memory_order_relaxed);
		u->e = e[i];
		cds_wfcq_node_init(&u->link);
		/* cds_wfcq_enqueue orders the node's contents before its
		 * publication (a full barrier in liburcu) */
		cds_wfcq_enqueue(&q->head, &q->tail, &u->link);
		pl->next++;
	}
	return i;
}

static unsigned u_enqueue(void *p, const struct hwt_cmdq_cmd *e, unsigned n)
{
	return u_enqueue_id(p, 0, e, n); /* not used: ring.c calls enqueue_id */
}

static unsigned u_dequeue(void *p, struct hwt_cmdq_cmd *e, unsigned max)
{
	struct uq *q = p;
	unsigned i;

	for (i = 0; i < max; i++) {
		struct cds_wfcq_node *l = __cds_wfcq_dequeue_nonblocking(&q->head, &q->tail);
		struct unode *u;

		if (!l || l == CDS_WFCQ_WOULDBLOCK) /* empty, or an enqueue half done */
			break;
		u = (struct unode *)(void *)((char *)l - offsetof(struct unode, link));
		e[i] = u->e;
		/* release: pairs with the acquire load of busy in u_enqueue_id() */
		atomic_store_explicit(&u->busy, 0, memory_order_release);
	}
	return i;
}

static const struct bench_ring_ops urcu_wfcq = {
	.name = "urcu_wfcq",
	.detail = "liburcu wfcqueue: cds_wfcq_enqueue (wait-free, any producer) / "
		  "__cds_wfcq_dequeue_nonblocking (the one consumer); intrusive nodes "
		  "holding a 16-byte element, each producer a pool of 2^N nodes reused "
		  "once consumed (the queue itself is unbounded); one node per call",
	.create = u_create,
	.destroy = u_destroy,
	.enqueue = u_enqueue,
	.enqueue_id = u_enqueue_id,
	.dequeue = u_dequeue,
	.blocks = false,
};

const struct bench_queue_ops bench_urcu_ops = BENCH_RING_QUEUE(&urcu_wfcq);
