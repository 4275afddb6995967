/* SPDX-License-Identifier: MIT */
/*
 * The architecture layer: the only place with per-architecture code.
 *
 *   uint64_t hwt__counter(void)       a constant-rate tick counter, ordered
 *                                     against surrounding memory accesses:
 *                                     rdtsc (x86_64), cntvct_el0 (aarch64),
 *                                     rdtime (riscv64, never rdcycle: it traps
 *                                     on real kernels), clock_gettime (generic)
 *   uint64_t hwt__counter_hz(void)    its frequency if the hardware says so,
 *                                     else 0 (callers calibrate against
 *                                     CLOCK_MONOTONIC)
 *   void hwt__cpu_relax(void)         spin-loop hint: pause / yield / Zihintpause
 *   uint32_t hwt__wait_change32(p, old)
 *                                     a WFE-like wait: returns the value at p
 *                                     once it differs from old, or after one
 *                                     bounded wait (event, timer event stream or
 *                                     a short spin), whichever comes first; the
 *                                     load is an acquire.  Callers loop.
 *   hwt__copy_words_unaligned(dst, src, len)
 *   hwt__copy_bytes_unaligned(dst, src, len)
 *                                     the probe's two copy loops, in assembly:
 *                                     8 word loads then 8 word stores per
 *                                     iteration (len truncated to 8 words), and
 *                                     8 byte loads then 8 byte stores (len
 *                                     truncated to 8)
 *   int hwt__vec_get(kind, &loops)    the vector probe's loops for a vector unit
 *                                     (see below): 1 the unit is there, 0 it is
 *                                     not, -1 only running loops.touch under a
 *                                     signal guard can tell (SIGILL: absent),
 *                                     -ENODEV the architecture has no such unit,
 *                                     -ENOSYS this build has no vector loops
 *   hwt__split_loads(p, n), hwt__split_stores(p, n)
 *                                     n word loads (stores) all at address p,
 *                                     8 per iteration, n truncated to 8; the
 *                                     stores write back the word found at p
 *   HWT_ARCH_NAME, HWT_WORD_BYTES
 *
 * Each src/arch/<arch>/arch_impl.h defines what it overrides and sets the
 * matching HWT_ARCH_HAS_* macro; src/arch/generic/arch_impl.h fills the rest.
 * Build with NO_ASM=1 to force the generic layer (sanitizers, analyzers).
 */
#ifndef HWT_ARCH_H
#define HWT_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(HWT_ARCH_GENERIC)
/* forced or unknown architecture: generic only */
#elif defined(__x86_64__)
#include "arch/x86_64/arch_impl.h"
#elif defined(__aarch64__)
#include "arch/aarch64/arch_impl.h"
#elif defined(__riscv) && __riscv_xlen == 64
#include "arch/riscv64/arch_impl.h"
#else
#define HWT_ARCH_GENERIC 1
#endif

#include "arch/generic/arch_impl.h"

void hwt__copy_words_unaligned(void *dst, const void *src, size_t len);
void hwt__copy_bytes_unaligned(void *dst, const void *src, size_t len);

/*
 * Vector units.  HWT__VEC_MAIN: the architecture's vector unit (x86_64
 * SSE2, aarch64 Advanced SIMD, riscv64 RVV); HWT__VEC_WIDE and
 * HWT__VEC_WIDE512: wider ones reported apart (x86_64 AVX2 and AVX-512 only;
 * the numbers are the public HWT_MISALIGNED_UNIT_*).  words copies 64 bytes per iteration
 * with the widest elements, bytes the same data with byte elements (x86 has
 * no byte-element vector access: there it is hwt__copy_bytes_unaligned);
 * both truncate len like the scalar loops (words to 64, bytes to 8).
 */
enum { HWT__VEC_MAIN = 0, HWT__VEC_WIDE = 1, HWT__VEC_WIDE512 = 2, HWT__VEC_KINDS = 3 };

struct hwt__vec_loops {
	const char *name; /* "sse2", "avx2", "avx512", "neon", "rvv" */
	void (*words)(void *dst, const void *src, size_t len);
	void (*bytes)(void *dst, const void *src, size_t len);
	void (*touch)(void); /* one instruction of the unit; NULL if never needed */
};

int hwt__vec_get(unsigned kind, struct hwt__vec_loops *out);

void hwt__split_loads(const void *p, size_t n);
void hwt__split_stores(void *p, size_t n);

#endif
