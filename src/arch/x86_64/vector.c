/* SPDX-License-Identifier: MIT */
/*
 * x86_64 vector units for the misaligned probe.  SSE2 is part of the
 * x86_64 baseline.  AVX2 needs three answers: the CPU has it (cpuid leaf 7,
 * subleaf 0, EBX bit 5), the CPU has XSAVE enabled by the OS (leaf 1 ECX
 * bit 27, OSXSAVE), and the OS saves SSE and YMM state on a context switch
 * (XCR0 bits 1 and 2, read with xgetbv).
 */
#include "arch/arch.h"

#include <cpuid.h>
#include <errno.h>
#include <stdatomic.h>

void hwt__copy_sse2_words_unaligned(void *dst, const void *src, size_t len);
void hwt__copy_avx2_words_unaligned(void *dst, const void *src, size_t len);
void hwt__touch_avx2(void);

static uint64_t xcr0(void)
{
	uint32_t lo, hi;

	/* xgetbv with ecx = 0; spelled as bytes so no -mxsave is needed */
	__asm__ __volatile__(".byte 0x0f, 0x01, 0xd0" : "=a"(lo), "=d"(hi) : "c"(0));
	return (uint64_t)hi << 32 | lo;
}

static bool have_avx2(void)
{
	unsigned a, b, c, d;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27)))
		return false; /* no OSXSAVE: xgetbv itself would fault */
	if (!(c & (1u << 28)))
		return false; /* no AVX (a VM may mask it and leave the AVX2 bit) */
	if ((xcr0() & 6) != 6)
		return false; /* the OS does not save XMM and YMM state */
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return false;
	return (b & (1u << 5)) != 0;
}

/* cpuid exits to the hypervisor in a guest (~17 us measured here, the
 * first time): asked once per process.  XCR0 is per process and hybrid x86
 * parts keep one instruction set on all cores.  0 not asked yet, 1 no, 2
 * yes; racing first callers compute the same answer, so relaxed order is
 * enough: the value is the only data. */
static _Atomic int avx2_state;

static bool avx2_cached(void)
{
	int st = atomic_load_explicit(&avx2_state, memory_order_relaxed);

	if (!st) {
		st = have_avx2() ? 2 : 1;
		atomic_store_explicit(&avx2_state, st, memory_order_relaxed);
	}
	return st == 2;
}

int hwt__vec_get(unsigned kind, struct hwt__vec_loops *out)
{
	switch (kind) {
	case HWT__VEC_MAIN:
		*out = (struct hwt__vec_loops){ "sse2", hwt__copy_sse2_words_unaligned,
						hwt__copy_bytes_unaligned, NULL };
		return 1;
	case HWT__VEC_WIDE:
		*out = (struct hwt__vec_loops){ "avx2", hwt__copy_avx2_words_unaligned,
						hwt__copy_bytes_unaligned, hwt__touch_avx2 };
		return avx2_cached() ? 1 : 0;
	default:
		return -EINVAL;
	}
}
