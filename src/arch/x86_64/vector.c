/* SPDX-License-Identifier: MIT */
/*
 * x86_64 vector units for the misaligned probe.  SSE2 is part of the
 * x86_64 baseline.  AVX2 and AVX-512 each need three answers: the CPU has
 * the unit (cpuid leaf 7, subleaf 0, EBX: bit 5 AVX2; bits 16, 30 and 31
 * AVX512F, AVX512BW and AVX512VL), the CPU has XSAVE enabled by the OS
 * (leaf 1 ECX bit 27, OSXSAVE), and the OS saves the unit's registers on a
 * context switch (XCR0, read with xgetbv: bits 1 and 2 SSE and YMM state;
 * for AVX-512 also 5, 6 and 7, opmask, ZMM_Hi256 and Hi16_ZMM).  A VM may
 * pass the cpuid bits through and leave the state off: XCR0 decides.
 */
#include "arch/arch.h"

#include <cpuid.h>
#include <errno.h>
#include <stdatomic.h>

void hwt__copy_sse2_words_unaligned(void *dst, const void *src, size_t len);
void hwt__copy_avx2_words_unaligned(void *dst, const void *src, size_t len);
void hwt__copy_avx512_words_unaligned(void *dst, const void *src, size_t len);
void hwt__touch_avx2(void);
void hwt__touch_avx512(void);

#define LEAF1_OSXSAVE (1u << 27)
#define LEAF1_AVX (1u << 28)
#define LEAF7_AVX2 (1u << 5)
#define LEAF7_AVX512 ((1u << 16) | (1u << 30) | (1u << 31)) /* F, BW, VL */
#define XCR0_AVX 0x06u    /* SSE, YMM */
#define XCR0_AVX512 0xe6u /* SSE, YMM, opmask, ZMM_Hi256, Hi16_ZMM */

static uint64_t xcr0(void)
{
	uint32_t lo, hi;

	/* xgetbv with ecx = 0; spelled as bytes so no -mxsave is needed */
	__asm__ __volatile__(".byte 0x0f, 0x01, 0xd0" : "=a"(lo), "=d"(hi) : "c"(0));
	return (uint64_t)hi << 32 | lo;
}

bool hwt__x86_vec_enabled(unsigned kind, uint32_t leaf1_ecx, uint32_t leaf7_ebx, uint64_t xcr0)
{
	uint32_t cpu;
	uint64_t state;

	switch (kind) {
	case HWT__VEC_MAIN:
		return true; /* SSE2: baseline */
	case HWT__VEC_WIDE:
		cpu = LEAF7_AVX2, state = XCR0_AVX;
		break;
	case HWT__VEC_WIDE512:
		cpu = LEAF7_AVX512, state = XCR0_AVX512;
		break;
	default:
		return false;
	}
	if (!(leaf1_ecx & LEAF1_OSXSAVE))
		return false; /* no OSXSAVE: XCR0 cannot be read, nothing is saved */
	if (!(leaf1_ecx & LEAF1_AVX))
		return false; /* no AVX (a VM may mask it and leave the leaf 7 bits) */
	return (xcr0 & state) == state && (leaf7_ebx & cpu) == cpu;
}

static bool have_unit(unsigned kind)
{
	unsigned a, b, c, d, ecx1, ebx7 = 0;
	uint64_t x = 0;

	if (!__get_cpuid(1, &a, &b, &ecx1, &d))
		return false;
	if (ecx1 & LEAF1_OSXSAVE)
		x = xcr0();
	if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) /* 0: no leaf 7 */
		ebx7 = b;
	return hwt__x86_vec_enabled(kind, ecx1, ebx7, x);
}

/* cpuid exits to the hypervisor in a guest (~17 us measured here, the
 * first time): asked once per process and unit.  XCR0 is per process and
 * hybrid x86 parts keep one instruction set on all cores.  0 not asked yet,
 * 1 no, 2 yes; racing first callers compute the same answer, so relaxed
 * order is enough: the value is the only data. */
static _Atomic int unit_state[HWT__VEC_KINDS];

static bool unit_cached(unsigned kind)
{
	int st = atomic_load_explicit(&unit_state[kind], memory_order_relaxed);

	if (!st) {
		st = have_unit(kind) ? 2 : 1;
		atomic_store_explicit(&unit_state[kind], st, memory_order_relaxed);
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
		return unit_cached(kind) ? 1 : 0;
	case HWT__VEC_WIDE512:
		*out = (struct hwt__vec_loops){ "avx512", hwt__copy_avx512_words_unaligned,
						hwt__copy_bytes_unaligned, hwt__touch_avx512 };
		return unit_cached(kind) ? 1 : 0;
	default:
		return -EINVAL;
	}
}
