/* SPDX-License-Identifier: MIT */
/*
 * One segment of bench_cmdq: the consumer started (ops->begin), nprod
 * producer threads started and pinned, a warm-up, a drain, a timed run of
 * --segment-ms, a drain, the consumer stopped (ops->end checks that nothing
 * was lost, doubled or reordered).  Elements/s = elements issued in the
 * timed run / (go .. drained).  Every wait is bounded (spin, then
 * sched_yield; --timeout-ms).
 */
#include "bench/cmdq/bench.h"

#include "prog/sys.h"

#include <errno.h>
#include <time.h>

static bool failed(struct seg *s)
{
	return atomic_load_explicit(&s->failed, memory_order_relaxed);
}

static void fail(struct seg *s)
{
	atomic_store_explicit(&s->failed, 1, memory_order_relaxed);
}

static int put_burst(struct prod *p)
{
	struct seg *s = p->s;
	unsigned b = s->burst, id = p->id;
	uint64_t seq = p->seq;

	for (unsigned i = 0; i < b; i++)
		bench_elem_set(&p->e[i], id, ++seq);
	p->seq = seq;
	return s->im->ops->put(s->im->q, id, p->e, b);
}

static void *producer(void *arg)
{
	struct prod *p = arg;
	struct seg *s = p->s;
	struct util_wait w = UTIL_WAIT(s->spin_ns, s->timeout_ns);
	uint64_t n = 0;

	for (unsigned i = 0; i < s->warm && !p->err; i++)
		p->err = put_burst(p);
	/* R_ready: release, pairs with A_ready (the main thread's acquire load
	 * of ready in bench_segment(), which then drains: it reads what the
	 * puts recorded) */
	atomic_fetch_add_explicit(&s->ready, 1, memory_order_release);
	if (p->err) {
		fail(s);
		return NULL;
	}
	/* A_go: acquire, pairs with R_go (the main thread's release store) */
	while (!atomic_load_explicit(&s->go, memory_order_acquire))
		if (failed(s) || !util_wait_more(&w)) {
			p->err = failed(s) ? -ECANCELED : -ETIMEDOUT;
			fail(s);
			return NULL;
		}
	while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		p->err = put_burst(p);
		if (p->err) {
			fail(s);
			break;
		}
		n++;
	}
	p->timed = n;
	return NULL;
}

unsigned bench_prod_cpus(const struct bench *bn, unsigned nprod)
{
	unsigned n = 0;

	for (unsigned i = 0; i < nprod; i++) {
		unsigned k = 0;

		while (k < i && bn->prod_cpu[k] != bn->prod_cpu[i])
			k++;
		n += k == i;
	}
	return n;
}

int bench_segment(struct bench *bn, struct impl *im, unsigned nprod, unsigned b, double *rate,
		  double *retry)
{
	const struct bench_queue_ops *ops = im->ops;
	struct seg *s = bn->s;
	struct util_wait w = UTIL_WAIT(bn->spin_ns, (uint64_t)bn->o.timeout_ms * 1000000u);
	uint64_t t0, t1, total = 0;
	struct timespec d = { (time_t)(bn->o.segment_ms / 1000),
			      (long)(bn->o.segment_ms % 1000) * 1000000 };
	unsigned started = 0;
	int err, end_err;

	s->im = im;
	s->burst = b;
	s->nprod = nprod;
	/* WARM_ELEMS in all, shared among the producers: the main thread's
	 * wait for the warm-up is bounded by one timeout, and 16 producers of
	 * 2048 awaited elements each on one CPU took longer than 5 s */
	s->warm = (WARM_ELEMS + b * s->nprod - 1) / (b * s->nprod);
	s->timeout_ns = (uint64_t)bn->o.timeout_ms * 1000000u;
	s->spin_ns = bn->spin_ns;
	/* threads start after these stores (pthread_create orders them) */
	atomic_store_explicit(&s->go, 0, memory_order_relaxed);
	atomic_store_explicit(&s->stop, 0, memory_order_relaxed);
	atomic_store_explicit(&s->failed, 0, memory_order_relaxed);
	atomic_store_explicit(&s->ready, 0, memory_order_relaxed);
	err = ops->begin(im->q, s->nprod, &s->failed);
	if (err)
		return err;
	for (unsigned i = 0; i < s->nprod; i++) {
		struct prod *p = &s->p[i];

		p->s = s;
		p->id = i;
		p->cpu = bn->prod_cpu[i];
		p->seq = p->timed = 0;
		p->err = 0;
		err = util_thread_start(&p->th, p->cpu, producer, p);
		if (err) {
			fail(s);
			break;
		}
		started++;
	}
	/* A_ready: acquire, pairs with R_ready (each producer's increment) */
	while (!err && atomic_load_explicit(&s->ready, memory_order_acquire) < s->nprod)
		if (failed(s) || !util_wait_more(&w))
			err = -ETIMEDOUT;
	if (!err && !failed(s))
		err = ops->drain(im->q); /* the warm-up */
	t0 = util_now_ns();
	if (err)
		fail(s);
	else /* R_go: release, pairs with A_go (the producers' acquire load) */
		atomic_store_explicit(&s->go, 1, memory_order_release);
	if (!err)
		nanosleep(&d, NULL);
	atomic_store_explicit(&s->stop, 1, memory_order_relaxed);
	for (unsigned i = 0; i < started; i++) {
		pthread_join(s->p[i].th, NULL);
		if (!err && s->p[i].err)
			err = s->p[i].err;
		total += s->p[i].timed * b;
	}
	if (!err)
		err = ops->drain(im->q);
	t1 = util_now_ns();
	if (err)
		fail(s);
	end_err = ops->end(im->q);
	*retry = ops->cas_retries ? ops->cas_retries(im->q) : 0;
	if (!err)
		err = end_err;
	*rate = err ? 0 : (double)total * 1e9 / (double)(t1 - t0);
	return err;
}
