/* SPDX-License-Identifier: MIT */
/*
 * The hybrid core type of the CPU the calling thread runs on.
 *
 *   int hwt__x86_core_type(void)
 *       x86_64: CPUID leaf 0x1A EAX[31:24] (0x20 atom, 0x40 core) when
 *       CPUID.7.0:EDX[15] says the part is hybrid; 0 when it is not;
 *       -ENOSYS on other architectures and in the generic build.
 */
#ifndef HWT_ARCH_CPUTYPE_H
#define HWT_ARCH_CPUTYPE_H

int hwt__x86_core_type(void);

#endif
