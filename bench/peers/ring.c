/* SPDX-License-Identifier: MIT */
/*
 * A ring with plain enqueue/dequeue calls as a bench queue: per segment a
 * consumer thread pinned to the consumer CPU dequeues up to
 * BENCH_CONS_BURST per call, calls the handler per element, checks each
 * producer's sequence numbers and publishes the last one it saw (release).
 * An awaited put waits until its last element has been published; a drain
 * waits until every producer's last element has.
 */
#include "peers.h"

#include "prog/sys.h"

#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rq {
	const struct bench_ring_ops *ops;
	void *ring;
	bool await;
	int cons_cpu;
	uint64_t timeout_ns;
	int (*handler)(void *ctx, const uint64_t dw[2]);
	unsigned nprod;
	_Atomic int *abort;
	pthread_t cons;
	alignas(UTIL_LINE) _Atomic int stop; /* the consumer stops once it finds the ring empty */
	_Atomic int bad;               /* the consumer saw a sequence gap */
	struct {
		alignas(UTIL_LINE) _Atomic uint64_t v; /* the consumer's last seq of a producer */
	} done[BENCH_MAX_PROD];
	struct {
		alignas(UTIL_LINE) uint64_t v; /* the producer's last seq put: its own */
	} sent[BENCH_MAX_PROD];
};

static bool aborted(struct rq *q)
{
	return atomic_load_explicit(q->abort, memory_order_relaxed);
}

static void *consumer(void *arg)
{
	struct rq *q = arg;
	struct hwt_cmdq_cmd buf[BENCH_CONS_BURST];
	uint64_t last[BENCH_MAX_PROD] = { 0 };
	/* an idle wait, ended by stop (always set by bench_ring_end) */
	struct util_wait w = UTIL_WAIT(UTIL_SPIN_NS, UINT64_MAX);

	for (;;) {
		unsigned n = q->ops->dequeue(q->ring, buf, BENCH_CONS_BURST), seen = 0;

		if (!n) {
			/* acquire: pairs with the release store of stop in
			 * bench_ring_end(), which comes after the drain:
			 * nothing is left behind */
			if (atomic_load_explicit(&q->stop, memory_order_acquire) || aborted(q))
				break;
			if (!q->ops->blocks)
				util_wait_more(&w);
			continue;
		}
		w = UTIL_WAIT(UTIL_SPIN_NS, UINT64_MAX);
		for (unsigned i = 0; i < n; i++) {
			unsigned id = bench_elem_id(&buf[i]) & (BENCH_MAX_PROD - 1);
			uint64_t seq = bench_elem_seq(&buf[i]);

			q->handler(NULL, buf[i].dw);
			if (seq != last[id] + 1) { /* lost, doubled or reordered */
				atomic_store_explicit(&q->bad, 1, memory_order_relaxed);
				atomic_store_explicit(q->abort, 1, memory_order_relaxed);
			}
			last[id] = seq;
			seen |= 1u << id;
		}
		/* release: pairs with the acquire loads of done in
		 * bench_ring_put() and bench_ring_drain() */
		for (unsigned id = 0; seen; id++, seen >>= 1)
			if (seen & 1)
				atomic_store_explicit(&q->done[id].v, last[id], memory_order_release);
	}
	return NULL;
}

/* Until the consumer has published producer id's seq: 0 or -errno. */
static int wait_done(struct rq *q, unsigned id, uint64_t seq)
{
	struct util_wait w = UTIL_WAIT(UTIL_SPIN_NS, q->timeout_ns);

	/* acquire: pairs with the consumer's release store of done */
	while (atomic_load_explicit(&q->done[id].v, memory_order_acquire) < seq)
		if (aborted(q))
			return -ECANCELED;
		else if (!util_wait_more(&w))
			return -ETIMEDOUT;
	return 0;
}

int bench_ring_put(void *p, unsigned id, const struct hwt_cmdq_cmd *e, unsigned n)
{
	struct rq *q = p;
	struct util_wait w = UTIL_WAIT(UTIL_SPIN_NS, q->timeout_ns);
	unsigned k = 0, waits = 0;

	while (k < n) {
		unsigned got = q->ops->enqueue_id ? q->ops->enqueue_id(q->ring, id, e + k, n - k)
						  : q->ops->enqueue(q->ring, e + k, n - k);

		k += got;
		if (k < n && !got &&
		    (q->ops->blocks ? ++waits > q->timeout_ns / 1000000 /* 1 ms waits */
				    : !util_wait_more(&w)))
			return -ETIMEDOUT;
		if (aborted(q))
			return -ECANCELED;
	}
	q->sent[id].v = bench_elem_seq(&e[n - 1]);
	return q->await ? wait_done(q, id, q->sent[id].v) : 0;
}

int bench_ring_drain(void *p)
{
	struct rq *q = p;
	int err = 0;

	/* sent[] is read after the producers' puts: the bench orders them
	 * (its ready counter, or joining the producers) */
	for (unsigned i = 0; i < q->nprod && !err; i++)
		err = wait_done(q, i, q->sent[i].v);
	return err;
}

int bench_ring_begin(void *p, unsigned nprod, _Atomic int *abort)
{
	struct rq *q = p;

	q->nprod = nprod;
	q->abort = abort;
	/* the consumer starts after these stores (pthread_create orders them) */
	atomic_store_explicit(&q->stop, 0, memory_order_relaxed);
	atomic_store_explicit(&q->bad, 0, memory_order_relaxed);
	for (unsigned i = 0; i < BENCH_MAX_PROD; i++) {
		atomic_store_explicit(&q->done[i].v, 0, memory_order_relaxed);
		q->sent[i].v = 0;
	}
	return util_thread_start(&q->cons, q->cons_cpu, consumer, q);
}

int bench_ring_end(void *p)
{
	struct rq *q = p;

	/* release: pairs with the consumer's acquire load of stop */
	atomic_store_explicit(&q->stop, 1, memory_order_release);
	pthread_join(q->cons, NULL);
	return atomic_load_explicit(&q->bad, memory_order_relaxed) ? -EPROTO : 0;
}

int bench_ring_create(const struct bench_queue_ops *self, const struct bench_queue_cfg *cfg,
		      void **out, struct bench_queue_desc *d)
{
	const struct bench_ring_ops *ops = self->impl;
	struct rq *q = aligned_alloc(128, (sizeof(*q) + 127) & ~(size_t)127);
	int err;

	snprintf(d->name, sizeof(d->name), "%s%s", ops->name, cfg->await ? "_await" : "");
	snprintf(d->what, sizeof(d->what),
		 "%s; consumer thread: dequeue up to %u, no-op handler per element, "
		 "publishes each producer's last seq (release)%s",
		 ops->detail, BENCH_CONS_BURST,
		 cfg->await ? "; producer waits for its burst's last seq after each burst"
			    : "; completion not awaited, drain timed");
	if (!q)
		return -ENOMEM;
	memset(q, 0, sizeof(*q));
	q->ops = ops;
	q->await = cfg->await;
	q->cons_cpu = cfg->cons_cpu;
	q->timeout_ns = cfg->timeout_ns;
	q->handler = cfg->handler;
	err = ops->create(&q->ring, cfg->log2);
	if (err) {
		free(q);
		return err;
	}
	*out = q;
	return 0;
}

void bench_ring_destroy(void *p)
{
	struct rq *q = p;

	q->ops->destroy(q->ring);
	free(q);
}
