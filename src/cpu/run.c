/* SPDX-License-Identifier: MIT */
/*
 * Run a function on each CPU of a set, in threads pinned to those CPUs.
 *
 * Parallel: every thread pins itself and reports to the caller; only then
 * is the number of pinned threads known, so the caller sizes the barrier
 * with it and lets them go.  A thread that could not pin never enters the
 * barrier, so it cannot hold the others back.  All waits sleep (mutex,
 * condvar, barrier): nothing spins, which matters with fewer cores than
 * threads.
 */
#include "hwtune/cpu.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

struct run {
	hwt_cpu_run_fn fn;
	void *arg;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned reported; /* threads that finished pinning (either way) */
	unsigned pinned;   /* of those, the ones that will run fn */
	bool go;           /* all reported; 'start' is ready if use_barrier */
	bool use_barrier;
	pthread_barrier_t start;
};

struct worker {
	struct run *run;
	int cpu;
	int status;   /* written by the worker, read by the caller after join */
	bool started; /* caller only */
	pthread_t tid;
};

/* Pin the calling thread to cpu alone and check where it now runs. */
static int pin_self(int cpu)
{
	cpu_set_t *mask = CPU_ALLOC(cpu + 1);
	size_t size = CPU_ALLOC_SIZE(cpu + 1);
	int r;

	if (!mask)
		return -ENOMEM;
	CPU_ZERO_S(size, mask);
	CPU_SET_S(cpu, size, mask);
	r = -pthread_setaffinity_np(pthread_self(), size, mask);
	CPU_FREE(mask);
	if (r)
		return r;
	/* The kernel moves a thread off a CPU it may no longer use before
	 * sched_setaffinity returns; retry briefly in case an emulator lags. */
	for (int tries = 0; tries < 8; tries++) {
		int now = sched_getcpu();

		if (now == cpu)
			return 0;
		if (now < 0)
			return -errno;
		sched_yield();
	}
	return -EIO;
}

static void *parallel_worker(void *p)
{
	struct worker *w = p;
	struct run *run = w->run;
	int r = pin_self(w->cpu);
	bool sync;

	pthread_mutex_lock(&run->lock);
	run->reported++;
	run->pinned += r == 0;
	pthread_cond_broadcast(&run->cond);
	while (r == 0 && !run->go)
		pthread_cond_wait(&run->cond, &run->lock);
	sync = run->use_barrier;
	pthread_mutex_unlock(&run->lock);
	w->status = r;
	if (r)
		return NULL;
	/* The condvar wakes threads one by one; the barrier lines them up on
	 * their CPUs so fn starts everywhere at once. */
	if (sync)
		pthread_barrier_wait(&run->start);
	run->fn(w->cpu, run->arg);
	return NULL;
}

static int run_parallel(struct worker *w, unsigned n, struct run *run)
{
	unsigned started = 0;
	int ran = 0;

	for (unsigned i = 0; i < n; i++) {
		int r;

		if (w[i].status)
			continue; /* refused up front */
		r = pthread_create(&w[i].tid, NULL, parallel_worker, &w[i]);
		if (r) {
			w[i].status = -r;
			continue;
		}
		w[i].started = true;
		started++;
	}

	pthread_mutex_lock(&run->lock);
	while (run->reported < started)
		pthread_cond_wait(&run->cond, &run->lock);
	/* Without a barrier (init failed) pinned threads still run, just not
	 * lined up: better than not at all. */
	run->use_barrier = run->pinned > 0 &&
			   pthread_barrier_init(&run->start, NULL, run->pinned) == 0;
	run->go = true;
	pthread_cond_broadcast(&run->cond);
	pthread_mutex_unlock(&run->lock);

	for (unsigned i = 0; i < n; i++)
		if (w[i].started)
			pthread_join(w[i].tid, NULL);
	if (run->use_barrier)
		pthread_barrier_destroy(&run->start);
	for (unsigned i = 0; i < n; i++)
		ran += w[i].status == 0;
	return ran;
}

struct serial {
	struct worker *w;
	unsigned n;
	int ran;
};

/* One helper thread visits the CPUs in turn, so the caller's own affinity is
 * never touched. */
static void *serial_worker(void *p)
{
	struct serial *s = p;

	for (unsigned i = 0; i < s->n; i++) {
		struct worker *w = &s->w[i];

		if (w->status)
			continue;
		w->status = pin_self(w->cpu);
		if (w->status)
			continue;
		w->run->fn(w->cpu, w->run->arg);
		s->ran++;
	}
	return NULL;
}

HWT_API int hwt_cpu_on_each(const struct hwt_cpus *set, enum hwt_cpu_run_mode mode, hwt_cpu_run_fn fn,
			    void *arg, int *status)
{
	struct hwt_cpus allowed = HWT_CPUS_INIT;
	struct run run = { .fn = fn, .arg = arg };
	struct worker *w;
	int r;

	if (!set || !fn || (set->n && !set->cpu) ||
	    (mode != HWT_CPU_RUN_PARALLEL && mode != HWT_CPU_RUN_SERIAL))
		return -EINVAL;
	if (set->n == 0)
		return 0;
	/* Only CPUs the caller may use: a cpuset or taskset restriction is the
	 * user's choice, even where the thread could still pin outside it. */
	r = hwt_cpu_allowed(&allowed);
	if (r)
		return r;
	w = calloc(set->n, sizeof(*w));
	if (!w) {
		hwt_cpus_free(&allowed);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < set->n; i++) {
		w[i].run = &run;
		w[i].cpu = set->cpu[i];
		if (!hwt_cpus_has(&allowed, w[i].cpu))
			w[i].status = -EINVAL;
	}
	hwt_cpus_free(&allowed);

	if (mode == HWT_CPU_RUN_SERIAL) {
		struct serial s = { w, set->n, 0 };
		pthread_t tid;

		r = -pthread_create(&tid, NULL, serial_worker, &s);
		if (r == 0) {
			pthread_join(tid, NULL);
			r = s.ran;
		}
	} else {
		r = pthread_mutex_init(&run.lock, NULL);
		if (r == 0) {
			r = pthread_cond_init(&run.cond, NULL);
			if (r == 0) {
				r = run_parallel(w, set->n, &run);
				pthread_cond_destroy(&run.cond);
			} else {
				r = -r;
			}
			pthread_mutex_destroy(&run.lock);
		} else {
			r = -r;
		}
	}
	if (status && r >= 0)
		for (unsigned i = 0; i < set->n; i++)
			status[i] = w[i].status;
	free(w);
	return r;
}
