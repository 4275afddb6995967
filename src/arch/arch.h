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
 *   HWT_ARCH_NAME, HWT_WORD_BYTES
 *
 * Each src/arch/<arch>/arch_impl.h defines what it overrides and sets the
 * matching HWT_ARCH_HAS_* macro; src/arch/generic/arch_impl.h fills the rest.
 * Build with NO_ASM=1 to force the generic layer (sanitizers, analyzers).
 */
#ifndef HWT_ARCH_H
#define HWT_ARCH_H

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

#endif
