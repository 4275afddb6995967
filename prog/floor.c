/* SPDX-License-Identifier: MIT */
#include "prog/floor.h"

#include "prog/stats.h"
#include "prog/sys.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define STOP 0x80000000u /* in ping: the last round trip of a segment */

void floor_init(struct floor_pp *pp, uint64_t spin_ns, uint64_t timeout_ns)
{
	atomic_store_explicit(&pp->ping, 0, memory_order_relaxed);
	atomic_store_explicit(&pp->pong, 0, memory_order_relaxed);
	atomic_store_explicit(&pp->abort, 0, memory_order_relaxed);
	pp->seq = 0;
	pp->spin_ns = spin_ns;
	pp->timeout_ns = timeout_ns;
}

static bool aborted(struct floor_pp *pp)
{
	return atomic_load_explicit(&pp->abort, memory_order_relaxed);
}

static int give_up(struct floor_pp *pp)
{
	if (aborted(pp))
		return -ECANCELED;
	atomic_store_explicit(&pp->abort, 1, memory_order_relaxed);
	return -ETIMEDOUT;
}

int floor_echo(struct floor_pp *pp)
{
	/* relaxed: our own last store, or floor_init()'s (ordered before
	 * this thread started) */
	uint32_t last = atomic_load_explicit(&pp->pong, memory_order_relaxed);

	for (;;) {
		struct util_wait w = UTIL_WAIT(pp->spin_ns, pp->timeout_ns);
		uint32_t v;

		/* acquire: pairs with the release store of ping in trip();
		 * only the value matters, nothing else is published */
		while ((v = atomic_load_explicit(&pp->ping, memory_order_acquire)) == last)
			if (aborted(pp) || !util_wait_more(&w))
				return give_up(pp);
		/* release: pairs with the acquire load of pong in trip() */
		atomic_store_explicit(&pp->pong, v, memory_order_release);
		last = v;
		if (v & STOP)
			return 0;
	}
}

static int trip(struct floor_pp *pp, uint32_t v)
{
	struct util_wait w = UTIL_WAIT(pp->spin_ns, pp->timeout_ns);

	/* release: pairs with the acquire load of ping in floor_echo() */
	atomic_store_explicit(&pp->ping, v, memory_order_release);
	/* acquire: pairs with the release store of pong in floor_echo() */
	while (atomic_load_explicit(&pp->pong, memory_order_acquire) != v)
		if (aborted(pp) || !util_wait_more(&w))
			return give_up(pp);
	return 0;
}

int floor_trip(struct floor_pp *pp)
{
	pp->seq = (pp->seq + 1) & ~STOP;
	return trip(pp, pp->seq);
}

int floor_stop(struct floor_pp *pp)
{
	pp->seq = (pp->seq + 1) & ~STOP;
	return trip(pp, pp->seq | STOP);
}

static void *echo_main(void *arg)
{
	floor_echo(arg);
	return NULL;
}

double floor_measure(int echo_cpu, unsigned chunks, unsigned iters, uint64_t spin_ns,
		     uint64_t timeout_ns)
{
	struct floor_pp *pp = aligned_alloc(128, sizeof(*pp));
	double *mean = calloc(chunks ? chunks : 1, sizeof(*mean));
	double r = 0;
	pthread_t th;
	int err = pp && mean ? 0 : -ENOMEM;

	if (!err) {
		floor_init(pp, spin_ns, timeout_ns);
		err = util_thread_start(&th, echo_cpu, echo_main, pp);
	}
	if (!err) {
		for (unsigned c = 0; c < chunks && !err; c++) {
			uint64_t t0 = util_now_ns();

			for (unsigned k = 0; k < iters && !err; k++)
				err = floor_trip(pp);
			mean[c] = (double)(util_now_ns() - t0) / (iters ? iters : 1);
		}
		if (!err)
			err = floor_stop(pp);
		pthread_join(th, NULL);
		if (!err)
			r = stat_median(mean, chunks);
	}
	free(mean);
	free(pp);
	return r;
}
