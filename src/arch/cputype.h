/* SPDX-License-Identifier: MIT */
/*
 * The hybrid core type of the CPU the calling thread runs on.
 *
 *   int hwt__x86_core_type(void)
 *       x86_64: CPUID leaf 0x1A EAX[31:24] (0x20 atom, 0x40 core) when
 *       CPUID.7.0:EDX[15] says the part is hybrid; 0 when it is not;
 *       -ENOSYS on other architectures and in the generic build.
 *
 *   int hwt__x86_hypervisor_sig(char sig[12])
 *       x86_64: the hypervisor's vendor signature, CPUID leaf 0x40000000
 *       EBX, ECX, EDX (12 bytes, not NUL-terminated), when CPUID.1:ECX[31]
 *       says a hypervisor runs (the leaf is meaningless otherwise): 0;
 *       -ENODEV when none runs; -ENOSYS elsewhere and in the generic build.
 */
#ifndef HWT_ARCH_CPUTYPE_H
#define HWT_ARCH_CPUTYPE_H

#include <stddef.h>

int hwt__x86_core_type(void);
int hwt__x86_hypervisor_sig(char sig[12]);

/* Pure, every architecture (src/cpu/hypervisor.c): the hypervisor's name
 * for a 12-byte signature into buf: 0; -ENOENT a blank signature; -ERANGE
 * buf too small.  An unknown signature is named by itself. */
int hwt__hypervisor_name(const char sig[12], char *buf, size_t len);

#endif
