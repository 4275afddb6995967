/* SPDX-License-Identifier: MIT */
/* Monotonic nanoseconds. */
#ifndef HWT_COMMON_TIME_H
#define HWT_COMMON_TIME_H

#include <stdint.h>
#include <time.h>

static inline uint64_t hwt__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* now + ns, saturating: a deadline never wraps into the past; a timeout
 * that would overflow (UINT64_MAX, say) gives UINT64_MAX, never reached. */
static inline uint64_t hwt__deadline_after(uint64_t now, uint64_t ns)
{
	return ns > UINT64_MAX - now ? UINT64_MAX : now + ns;
}

static inline void hwt__sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	nanosleep(&ts, NULL);
}

#endif
