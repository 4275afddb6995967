/* SPDX-License-Identifier: MIT */
/*
 * riscv_hwprobe (syscall 258 on riscv only; glibc < 2.40 has no wrapper).
 * Misaligned keys are "value-like": a multi-CPU mask answers UNKNOWN as
 * soon as two CPUs differ, so ask with one CPU at a time.
 */
#include "arch/hwprobe.h"

#include <errno.h>
#include <stdbool.h>
#include <sched.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_riscv_hwprobe
#define __NR_riscv_hwprobe 258
#endif

#define KEY_CPUPERF_0 5               /* deprecated, same values in bits 2:0 */
#define KEY_MISALIGNED_SCALAR_PERF 9
#define KEY_MISALIGNED_VECTOR_PERF 10

struct hwprobe_pair {
	int64_t key;
	uint64_t value;
};

/* cpu -1: no mask, which the kernel reads as all online CPUs. */
static int query(int64_t key, int cpu, uint64_t *value)
{
	struct hwprobe_pair p = { key, 0 };
	size_t size = cpu < 0 ? 0 : CPU_ALLOC_SIZE(cpu + 1);
	cpu_set_t *set = cpu < 0 ? NULL : CPU_ALLOC(cpu + 1);
	long r;

	if (cpu >= 0 && !set)
		return -ENOMEM;
	if (set) {
		CPU_ZERO_S(size, set);
		CPU_SET_S(cpu, size, set);
	}
	r = syscall(__NR_riscv_hwprobe, &p, 1, size, set, 0);
	if (set)
		CPU_FREE(set);
	if (r < 0)
		return -errno;
	if (p.key < 0)
		return -EOPNOTSUPP; /* kernel predates the key */
	*value = p.value;
	return 0;
}

/* The speed 0..4 a misaligned key answers for one CPU, or a negative
 * errno; with cpuperf, a kernel without the key is asked the deprecated
 * CPUPERF_0 (the same values in bits 2:0). */
static int speed(int cpu, int64_t key, bool cpuperf)
{
	uint64_t v;
	int r;

	if (cpu < 0)
		return -EINVAL;
	r = query(key, cpu, &v);
	if (r == -EOPNOTSUPP && cpuperf) {
		r = query(KEY_CPUPERF_0, cpu, &v);
		v &= 7;
	}
	if (r)
		return r;
	return v <= 4 ? (int)v : -ERANGE;
}

int hwt__hwprobe_scalar(int cpu)
{
	return speed(cpu, KEY_MISALIGNED_SCALAR_PERF, true);
}

int hwt__hwprobe_vector(int cpu)
{
	return speed(cpu, KEY_MISALIGNED_VECTOR_PERF, false);
}

int hwt__hwprobe_key(int cpu, int64_t key, uint64_t *value)
{
	if (cpu < -1 || key < 0 || !value)
		return -EINVAL;
	return query(key, cpu, value);
}
