/* SPDX-License-Identifier: MIT */
/* x86_64: rdtsc, pause.  No MONITORX/UMWAIT: trapped or SIGILL in KVM guests. */
#ifndef HWT_ARCH_H
#error "include arch/arch.h, not this file"
#endif
#define HWT_ARCH_NAME "x86_64"
#define HWT_WORD_BYTES 8u

#define HWT_ARCH_HAS_COUNTER 1
/* lfence before and after: earlier loads finish first, later work waits. */
static inline uint64_t hwt__counter(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
	return (uint64_t)hi << 32 | lo;
}

static inline uint64_t hwt__counter_hz(void)
{
	return 0; /* TSC rate is not architecturally visible: calibrate */
}

#define HWT_ARCH_HAS_RELAX 1
static inline void hwt__cpu_relax(void)
{
	__asm__ __volatile__("pause" ::: "memory");
}

/* The verdict on vector unit kind (HWT__VEC_*) from the raw answers: cpuid
 * leaf 1 ECX, leaf 7 subleaf 0 EBX, and XCR0 (0 when leaf 1 has no OSXSAVE:
 * xgetbv would fault).  Pure, so that tests can feed it any machine. */
bool hwt__x86_vec_enabled(unsigned kind, uint32_t leaf1_ecx, uint32_t leaf7_ebx, uint64_t xcr0);
