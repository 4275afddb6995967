/* SPDX-License-Identifier: MIT */
/* futex(2) wrappers (Linux, every architecture). */
#ifndef HWT_COMMON_FUTEX_H
#define HWT_COMMON_FUTEX_H

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Sleep while *p == val, at most timeout_ns (0 = no limit).  0 or -errno
 * (-EAGAIN value changed, -ETIMEDOUT, -EINTR); callers re-check and loop. */
static inline int hwt__futex_wait(_Atomic uint32_t *p, uint32_t val, uint64_t timeout_ns)
{
	struct timespec ts = { (time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u) };

	if (syscall(SYS_futex, (uint32_t *)p, FUTEX_WAIT_PRIVATE, val, timeout_ns ? &ts : NULL, NULL,
		    0) == 0)
		return 0;
	return -errno;
}

/* Wake at most n sleepers; returns how many were woken (0 on error). */
static inline int hwt__futex_wake(_Atomic uint32_t *p, int n)
{
	long r = syscall(SYS_futex, (uint32_t *)p, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);

	return r > 0 ? (int)r : 0;
}

#endif
