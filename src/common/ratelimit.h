/* SPDX-License-Identifier: MIT */
/*
 * A rate limit for log lines, as the kernel's printk_ratelimit(): at most
 * `burst` lines per `interval_ns`; the first line allowed in a later
 * interval is preceded by the count of those suppressed before it.  Pure:
 * the caller passes the time and serialises the calls (a lock), so tests
 * drive it with made-up times.
 */
#ifndef HWT_COMMON_RATELIMIT_H
#define HWT_COMMON_RATELIMIT_H

#include <stdbool.h>
#include <stdint.h>

/* The kernel's DEFAULT_RATELIMIT_BURST and DEFAULT_RATELIMIT_INTERVAL. */
#define HWT__RATELIMIT_BURST 10u
#define HWT__RATELIMIT_INTERVAL_NS 5000000000ull

struct hwt__ratelimit {
	uint64_t interval_ns;
	unsigned burst;
	bool started;
	uint64_t begin;    /* start of the current interval */
	unsigned printed;  /* lines allowed in it */
	uint64_t missed;   /* lines suppressed and not reported yet */
};

static inline void hwt__ratelimit_init(struct hwt__ratelimit *rl, unsigned burst,
				       uint64_t interval_ns)
{
	*rl = (struct hwt__ratelimit){ .interval_ns = interval_ns, .burst = burst };
}

/*
 * May a line be written at `now`?  *report receives how many lines were
 * suppressed since the last report, to be said first (0: nothing to say);
 * it is non-zero only when this line is allowed.
 */
static inline bool hwt__ratelimit_allow(struct hwt__ratelimit *rl, uint64_t now, uint64_t *report)
{
	*report = 0;
	if (!rl->started || now - rl->begin >= rl->interval_ns) {
		rl->started = true;
		rl->begin = now;
		rl->printed = 0;
	}
	if (rl->printed >= rl->burst) {
		rl->missed++;
		return false;
	}
	rl->printed++;
	*report = rl->missed;
	rl->missed = 0;
	return true;
}

/* The count still unreported (for a last line when the user goes away). */
static inline uint64_t hwt__ratelimit_flush(struct hwt__ratelimit *rl)
{
	uint64_t n = rl->missed;

	rl->missed = 0;
	return n;
}

#endif
