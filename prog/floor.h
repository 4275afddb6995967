/* SPDX-License-Identifier: MIT */
/*
 * The floor: a two-line ping-pong between a producer thread and an echo
 * thread on another CPU (the device's), the physical limit of an
 * empty-queue CMD_SYNC.  The producer writes a number into ping, the echo
 * copies it into pong; one round trip is one line each way.
 *
 *   echo thread:      floor_echo(pp)          until the producer's floor_stop
 *   producer thread:  floor_trip(pp) ...      then floor_stop(pp)
 *
 * A pp serves any number of such segments, one at a time.  Every wait is
 * bounded (struct util_wait: spin, then yield, timeout_ns).
 */
#ifndef HWT_PROG_FLOOR_H
#define HWT_PROG_FLOOR_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>

#include "prog/sys.h"

/* Four lines: ping, pong, one both sides only read while all is well, and
 * the producer's own.  Writing anything else into the first three on each
 * trip costs extra line transfers (a slower floor). */
struct floor_pp {
	alignas(UTIL_LINE) _Atomic uint32_t ping; /* written by the producer */
	alignas(UTIL_LINE) _Atomic uint32_t pong; /* written by the echo */
	alignas(UTIL_LINE) _Atomic int abort;     /* written only when a side gives up */
	uint64_t spin_ns, timeout_ns;
	alignas(UTIL_LINE) uint32_t seq;          /* producer-private */
};

/* Reset pp (no thread may be using it). */
void floor_init(struct floor_pp *pp, uint64_t spin_ns, uint64_t timeout_ns);
/* Echo until the producer stops: 0; -ETIMEDOUT no ping within timeout_ns;
 * -ECANCELED the producer gave up. */
int floor_echo(struct floor_pp *pp);
/* Producer: one round trip: 0; -ETIMEDOUT no pong within timeout_ns;
 * -ECANCELED the echo gave up.  On error the other side is told to stop. */
int floor_trip(struct floor_pp *pp);
/* Producer: the last round trip of a segment; the echo returns 0. */
int floor_stop(struct floor_pp *pp);

/*
 * One measurement from the calling thread to a new echo thread on
 * echo_cpu: chunks of iters round trips, each chunk timed as a whole.
 * The median of the chunk means, ns; 0 on failure.
 */
double floor_measure(int echo_cpu, unsigned chunks, unsigned iters, uint64_t spin_ns,
		     uint64_t timeout_ns);

#endif
