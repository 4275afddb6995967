/* SPDX-License-Identifier: MIT */
/*
 * Queue pointers and their arithmetic (pure functions, unit-tested), the
 * same for the driver (src/cmdq) and the device (src/device).
 *
 * A pointer is [31: OVF/OWNED] ... [n: WRP] [n-1..0: IDX] for a queue of 2^n
 * entries.  The wrap bit tells a full queue (same IDX, different WRP) from an
 * empty one (same IDX, same WRP).  Bit 31 of the software producer pointer
 * is the OWNED flag; it is never written to the device.
 */
#ifndef HWT_BUS_QUEUE_H
#define HWT_BUS_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#define HWT__Q_OWNED (1u << 31)

static inline uint32_t hwt__q_idx(unsigned n, uint32_t p)
{
	return p & ((1u << n) - 1);
}

static inline uint32_t hwt__q_wrp(unsigned n, uint32_t p)
{
	return p & (1u << n);
}

/* WRP|IDX: the part of a pointer that moves. */
static inline uint32_t hwt__q_pos(unsigned n, uint32_t p)
{
	return p & ((2u << n) - 1);
}

/* p + k, wrapping WRP|IDX, keeping the bits above (OVF/OWNED) untouched. */
static inline uint32_t hwt__q_inc(unsigned n, uint32_t p, uint32_t k)
{
	return (p & ~((2u << n) - 1)) | hwt__q_pos(n, p + k);
}

static inline uint32_t hwt__q_space(unsigned n, uint32_t prod, uint32_t cons)
{
	if (hwt__q_wrp(n, prod) == hwt__q_wrp(n, cons))
		return (1u << n) - (hwt__q_idx(n, prod) - hwt__q_idx(n, cons));
	return hwt__q_idx(n, cons) - hwt__q_idx(n, prod);
}

static inline bool hwt__q_has_space(unsigned n, uint32_t prod, uint32_t cons, uint32_t k)
{
	return hwt__q_space(n, prod, cons) >= k;
}

static inline bool hwt__q_full(unsigned n, uint32_t prod, uint32_t cons)
{
	return hwt__q_idx(n, prod) == hwt__q_idx(n, cons) &&
	       hwt__q_wrp(n, prod) != hwt__q_wrp(n, cons);
}

/*
 * Has the consumer moved past the entry at prod?  Sound only while cons
 * cannot be more than one lap away from prod, which the waiter count in the
 * shadow word guarantees for CMD_SYNC waiters (src/cmdq/cmdq.c).
 */
static inline bool hwt__q_consumed(unsigned n, uint32_t cons, uint32_t prod)
{
	if (hwt__q_wrp(n, cons) == hwt__q_wrp(n, prod))
		return hwt__q_idx(n, cons) > hwt__q_idx(n, prod);
	return hwt__q_idx(n, cons) <= hwt__q_idx(n, prod);
}

#endif
