/* SPDX-License-Identifier: MIT */
/* Baseline: a ring under one mutex, condvars for empty and full. */
#include "peers.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WAIT_NS 1000000 /* one bounded condvar wait */

struct mring {
	pthread_mutex_t mu;
	pthread_cond_t not_empty, not_full;
	unsigned head, tail, mask; /* free-running; head: consumer */
	unsigned wait_empty, wait_full;
	struct hwt_cmdq_cmd *slot;
};

static void deadline(struct timespec *ts)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_nsec += WAIT_NS;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

static int m_create(void **out, unsigned log2)
{
	struct mring *r = calloc(1, sizeof(*r));
	pthread_condattr_t ca;

	if (!r)
		return -ENOMEM;
	r->slot = calloc((size_t)1 << log2, sizeof(*r->slot));
	if (!r->slot) {
		free(r);
		return -ENOMEM;
	}
	r->mask = (1u << log2) - 1;
	pthread_mutex_init(&r->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->not_empty, &ca);
	pthread_cond_init(&r->not_full, &ca);
	pthread_condattr_destroy(&ca);
	*out = r;
	return 0;
}

static void m_destroy(void *q)
{
	struct mring *r = q;

	pthread_cond_destroy(&r->not_empty);
	pthread_cond_destroy(&r->not_full);
	pthread_mutex_destroy(&r->mu);
	free(r->slot);
	free(r);
}

static unsigned m_enqueue(void *q, const struct hwt_cmdq_cmd *e, unsigned n)
{
	struct mring *r = q;
	unsigned k, i;

	pthread_mutex_lock(&r->mu);
	if (r->tail - r->head > r->mask) {
		struct timespec ts;

		deadline(&ts);
		r->wait_full++;
		while (r->tail - r->head > r->mask &&
		       pthread_cond_timedwait(&r->not_full, &r->mu, &ts) != ETIMEDOUT)
			;
		r->wait_full--;
	}
	k = r->mask + 1 - (r->tail - r->head);
	if (k > n)
		k = n;
	for (i = 0; i < k; i++)
		r->slot[(r->tail + i) & r->mask] = e[i];
	r->tail += k;
	if (k && r->wait_empty)
		pthread_cond_signal(&r->not_empty);
	pthread_mutex_unlock(&r->mu);
	return k;
}

static unsigned m_dequeue(void *q, struct hwt_cmdq_cmd *e, unsigned max)
{
	struct mring *r = q;
	unsigned k, i;

	pthread_mutex_lock(&r->mu);
	if (r->tail == r->head) {
		struct timespec ts;

		deadline(&ts);
		r->wait_empty++;
		while (r->tail == r->head &&
		       pthread_cond_timedwait(&r->not_empty, &r->mu, &ts) != ETIMEDOUT)
			;
		r->wait_empty--;
	}
	k = r->tail - r->head;
	if (k > max)
		k = max;
	for (i = 0; i < k; i++)
		e[i] = r->slot[(r->head + i) & r->mask];
	r->head += k;
	if (k && r->wait_full)
		pthread_cond_broadcast(&r->not_full);
	pthread_mutex_unlock(&r->mu);
	return k;
}

static const struct bench_ring_ops mutex_ring = {
	.name = "mutex_ring",
	.detail = "pthread mutex + 2 condvars around a ring of 16-byte slots (capacity 2^N); "
		  "enqueue copies what fits, dequeue up to the consumer burst; "
		  "waits are 1 ms timed condvar waits",
	.create = m_create,
	.destroy = m_destroy,
	.enqueue = m_enqueue,
	.dequeue = m_dequeue,
	.blocks = true,
};

const struct bench_queue_ops bench_mutex_ops = BENCH_RING_QUEUE(&mutex_ring);
