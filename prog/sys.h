/* SPDX-License-Identifier: MIT */
/*
 * Time, bounded waits, pinned threads and the choice of CPUs, as the
 * measuring programs (hwtune cmdq, bench/) use them.
 *
 * Why prog/ and not src/common/: this is program code built on the public
 * API only (never part of libhwtune, which has its own src/common/);
 * hwtune (tools/) and the benches (bench/) link it alike, and neither
 * owns it.
 */
#ifndef HWT_PROG_SYS_H
#define HWT_PROG_SYS_H

#include <hwtune/cpu.h>

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* How long a bounded wait spins before it starts yielding its CPU. */
/* What the programs keep hot shared fields apart by: two 64-byte lines, so
 * that the adjacent-line prefetcher does not couple them either. */
#define UTIL_LINE 128

#define UTIL_SPIN_NS 20000u

static inline uint64_t util_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * A bounded wait: call util_wait_more() each time the awaited condition is
 * still false.  It spins with the CPU's relax hint, reads the clock every
 * 128 calls, calls sched_yield() on those reads once spin_ns have passed
 * since the first one (the partner may need our CPU), and returns false
 * once timeout_ns have passed.
 */
struct util_wait {
	unsigned n;
	uint64_t t0, spin_ns, timeout_ns;
};
#define UTIL_WAIT(spin_ns, timeout_ns) ((struct util_wait){ 0, 0, (spin_ns), (timeout_ns) })
/* Inline: called out of line, the wait loops of the floor measured ~40%
 * slower round trips here. */
static inline bool util_wait_more(struct util_wait *w)
{
	uint64_t t;

	hwt_cpu_relax();
	if (++w->n % 128)
		return true;
	t = util_now_ns();
	if (!w->t0)
		w->t0 = t;
	else if (t - w->t0 > w->timeout_ns)
		return false;
	else if (t - w->t0 > w->spin_ns)
		sched_yield();
	return true;
}
/* The spin budget for a wait on a partner thread: 0 when both share a CPU. */
static inline uint64_t util_spin_ns(int cpu, int partner_cpu)
{
	return cpu == partner_cpu ? 0 : UTIL_SPIN_NS;
}

/* Start fn(arg) in a thread pinned to cpu: 0 or -errno. */
int util_thread_start(pthread_t *th, int cpu, void *(*fn)(void *), void *arg);
/* Pin the calling thread to cpu: 0 or -errno. */
int util_pin_self(int cpu);

/*
 * The CPUs of a measurement: one device (consumer) CPU and nprod producer
 * CPUs.  Device: want_dev, or the last allowed CPU.  Producer 0: want_prod0,
 * or like the others; producer i: the allowed CPUs other than the device's
 * in turn (i modulo their count), or the device's own when it is the only
 * one.  want_* < 0 means "choose".  0; -EINVAL with *bad set when a
 * wanted CPU is not allowed; another -errno (*bad = UTIL_CPU_OK) when the
 * allowed CPUs cannot be read.
 */
enum { UTIL_CPU_OK, UTIL_CPU_BAD_DEV, UTIL_CPU_BAD_PROD0 };
int util_cpu_pick(int want_dev, int want_prod0, unsigned nprod, int *dev, int *prod, int *bad);

#endif
