/* SPDX-License-Identifier: MIT */
/* aarch64: cntvct_el0 / cntfrq_el0, yield, and a real WFE wait. */
#ifndef HWT_ARCH_H
#error "include arch/arch.h, not this file"
#endif
#define HWT_ARCH_NAME "aarch64"
#define HWT_WORD_BYTES 8u

#define HWT_ARCH_HAS_COUNTER 1
static inline uint64_t hwt__counter(void)
{
	uint64_t v;

	__asm__ __volatile__("dsb sy\n\tisb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(v) : : "memory");
	return v;
}

static inline uint64_t hwt__counter_hz(void)
{
	uint64_t v;

	__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(v));
	return v;
}

#define HWT_ARCH_HAS_RELAX 1
static inline void hwt__cpu_relax(void)
{
	__asm__ __volatile__("yield" ::: "memory");
}

#define HWT_ARCH_HAS_WAIT 1
/*
 * sevl + wfe consumes the local event so the next wfe really waits; ldaxr
 * arms the exclusive monitor on p, so any store to p's granule (the writer's
 * release) clears it and generates the event that ends the wfe.  Linux's
 * timer event stream (100 us) bounds the sleep even if no one writes.
 */
static inline uint32_t hwt__wait_change32(const _Atomic uint32_t *p, uint32_t old)
{
	uint32_t v;

	__asm__ __volatile__("sevl\n\t"
			     "wfe\n\t"
			     "ldaxr %w0, [%1]\n\t"
			     "cmp %w0, %w2\n\t"
			     "b.ne 1f\n\t"
			     "wfe\n\t"
			     "ldar %w0, [%1]\n"
			     "1:"
			     : "=&r"(v)
			     : "r"(p), "r"(old)
			     : "memory", "cc");
	return v;
}
