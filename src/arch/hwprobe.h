/* SPDX-License-Identifier: MIT */
/*
 * The kernel's own misaligned-speed answer, where one exists.
 *
 *   int hwt__hwprobe_scalar(int cpu)
 *       riscv_hwprobe(MISALIGNED_SCALAR_PERF) for a one-CPU mask: a speed
 *       0..4, or a negative errno.  -ENOSYS on other architectures (there
 *       the syscall number means something else) and on kernels or
 *       emulators without the call.
 *   int hwt__hwprobe_vector(int cpu)
 *       the same for MISALIGNED_VECTOR_PERF (key 10): 0, 2, 3 or 4;
 *       -EOPNOTSUPP where the kernel predates the key.
 *
 *   int hwt__hwprobe_key(int cpu, int64_t key, uint64_t *value)
 *       riscv_hwprobe(key) for one CPU, or for all online CPUs when cpu is
 *       -1: 0 with *value set; -EOPNOTSUPP when the kernel does not know the
 *       key; -ENOSYS where the call does not exist.
 */
#ifndef HWT_ARCH_HWPROBE_H
#define HWT_ARCH_HWPROBE_H

#include <stdint.h>

int hwt__hwprobe_scalar(int cpu);
int hwt__hwprobe_vector(int cpu);
int hwt__hwprobe_key(int cpu, int64_t key, uint64_t *value);

#endif
