/* SPDX-License-Identifier: MIT */
/* riscv64: rdtime (rdcycle traps from user mode on real kernels), Zihintpause. */
#ifndef HWT_ARCH_H
#error "include arch/arch.h, not this file"
#endif
#define HWT_ARCH_NAME "riscv64"
#define HWT_WORD_BYTES 8u

#define HWT_ARCH_HAS_COUNTER 1
static inline uint64_t hwt__counter(void)
{
	uint64_t v;

	__asm__ __volatile__("fence rw, rw\n\trdtime %0\n\tfence rw, rw" : "=r"(v) : : "memory");
	return v;
}

static inline uint64_t hwt__counter_hz(void)
{
	return 0; /* timebase-frequency lives in the device tree: calibrate */
}

#define HWT_ARCH_HAS_RELAX 1
static inline void hwt__cpu_relax(void)
{
	/* pause (Zihintpause) = fence w,0: a plain fence on older cores. */
	__asm__ __volatile__(".4byte 0x0100000f" ::: "memory");
}
