/* SPDX-License-Identifier: MIT */
/* No riscv_hwprobe here: src/arch/riscv64/hwprobe.c has the real one. */
#if !defined(__riscv) || defined(HWT_ARCH_GENERIC)
#include "arch/hwprobe.h"

#include <errno.h>

int hwt__hwprobe_scalar(int cpu)
{
	(void)cpu;
	return -ENOSYS;
}

int hwt__hwprobe_vector(int cpu)
{
	(void)cpu;
	return -ENOSYS;
}

int hwt__hwprobe_key(int cpu, int64_t key, uint64_t *value)
{
	(void)cpu, (void)key, (void)value;
	return -ENOSYS;
}
#endif
