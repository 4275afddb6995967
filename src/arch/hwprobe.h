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
 */
#ifndef HWT_ARCH_HWPROBE_H
#define HWT_ARCH_HWPROBE_H

int hwt__hwprobe_scalar(int cpu);
int hwt__hwprobe_vector(int cpu);

#endif
