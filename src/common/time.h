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

static inline void hwt__sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	nanosleep(&ts, NULL);
}

#endif
