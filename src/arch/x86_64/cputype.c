/* SPDX-License-Identifier: MIT */
/* CPUID's hybrid core type and hypervisor signature (arch/cputype.h);
 * elsewhere arch/enosys.c. */
#include "arch/cputype.h"

#include <cpuid.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

int hwt__x86_core_type(void)
{
	unsigned a, b, c, d;

	if (__get_cpuid_max(0, NULL) < 0x1a)
		return 0;
	__cpuid_count(7, 0, a, b, c, d);
	if (!(d & (1u << 15))) /* not a hybrid part */
		return 0;
	__cpuid_count(0x1a, 0, a, b, c, d);
	return (int)(a >> 24);
}

int hwt__x86_hypervisor_sig(char sig[12])
{
	unsigned a, b, c, d;

	__cpuid(1, a, b, c, d);
	if (!(c & (1u << 31)))
		return -ENODEV;
	__cpuid(0x40000000, a, b, c, d);
	memcpy(sig, &b, 4);
	memcpy(sig + 4, &c, 4);
	memcpy(sig + 8, &d, 4);
	return 0;
}
