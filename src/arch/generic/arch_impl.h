/* SPDX-License-Identifier: MIT */
/* Generic fallbacks for whatever the architecture header did not define. */
#ifndef HWT_ARCH_H
#error "include arch/arch.h, not this file"
#endif
#ifndef HWT_ARCH_GENERIC_IMPL_H
#define HWT_ARCH_GENERIC_IMPL_H

#include <stdatomic.h>
#include <time.h>

#ifndef HWT_ARCH_NAME
#define HWT_ARCH_NAME "generic"
#endif
#ifndef HWT_WORD_BYTES
#define HWT_WORD_BYTES ((unsigned)sizeof(long))
#endif

#ifndef HWT_ARCH_HAS_COUNTER
/* Nanoseconds from CLOCK_MONOTONIC_RAW; the fences keep the timed work inside. */
static inline uint64_t hwt__counter(void)
{
	struct timespec ts;

	atomic_thread_fence(memory_order_seq_cst);
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	atomic_thread_fence(memory_order_seq_cst);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t hwt__counter_hz(void)
{
	return 1000000000u;
}
#endif

#ifndef HWT_ARCH_HAS_RELAX
static inline void hwt__cpu_relax(void)
{
	atomic_signal_fence(memory_order_seq_cst);
}
#endif

#ifndef HWT_ARCH_HAS_WAIT
/* No wait-for-event instruction: a short relax spin, then report. */
static inline uint32_t hwt__wait_change32(const _Atomic uint32_t *p, uint32_t old)
{
	uint32_t v;

	for (int i = 0; i < 64; i++) {
		v = atomic_load_explicit(p, memory_order_acquire);
		if (v != old)
			return v;
		hwt__cpu_relax();
	}
	return atomic_load_explicit(p, memory_order_acquire);
}
#endif

#endif
