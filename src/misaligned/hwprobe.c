/* SPDX-License-Identifier: MIT */
/* The kernel's own answer (riscv_hwprobe), for programs that show it. */
#include <hwtune/misaligned.h>

#include "arch/hwprobe.h"

#include <errno.h>

HWT_API int hwt_misaligned_hwprobe(int cpu, int key, uint64_t *value)
{
	if (cpu < -1 || key < 0 || !value)
		return -EINVAL;
	return hwt__hwprobe_key(cpu, key, value);
}
