/* SPDX-License-Identifier: MIT */
/* CPUID's hybrid core type (arch/cputype.h); elsewhere arch/enosys.c. */
#include "arch/cputype.h"

#include <cpuid.h>
#include <stddef.h>

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
