/* SPDX-License-Identifier: MIT */
/*
 * The architecture interfaces this build has no use of: each answers
 * -ENOSYS.  Built for every architecture; each part only where the real
 * one is not built (src/arch/riscv64/riscv_hwprobe.c,
 * src/arch/x86_64/cputype.c).
 */
#include "arch/cputype.h"
#include "arch/hwprobe.h"

#include <errno.h>

#if !defined(__riscv) || defined(HWT_ARCH_GENERIC)
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

#if !defined(__x86_64__) || defined(HWT_ARCH_GENERIC)
int hwt__x86_core_type(void)
{
	return -ENOSYS;
}

int hwt__x86_hypervisor_sig(char sig[12])
{
	(void)sig;
	return -ENOSYS;
}
#endif
