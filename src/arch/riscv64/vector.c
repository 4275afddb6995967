/* SPDX-License-Identifier: MIT */
/*
 * riscv64 vector unit for the misaligned probe: RVV.  AT_HWCAP has one bit
 * per single-letter extension (bit 'V' - 'A'), but some kernels and
 * emulators (qemu-user 7.2 with -cpu rv64,v=true) run V code without
 * setting it: an unset bit is "ask the hardware" (execute vsetvli under a
 * signal guard), not "absent".
 */
#include "arch/arch.h"

#include <errno.h>
#include <sys/auxv.h>

#define HWCAP_V_BIT (1ul << ('V' - 'A'))

void hwt__copy_rvv_words_unaligned(void *dst, const void *src, size_t len);
void hwt__copy_rvv_bytes_unaligned(void *dst, const void *src, size_t len);
void hwt__touch_rvv(void);

int hwt__vec_get(unsigned kind, struct hwt__vec_loops *out)
{
	if (kind == HWT__VEC_WIDE || kind == HWT__VEC_WIDE512)
		return -ENODEV;
	if (kind != HWT__VEC_MAIN)
		return -EINVAL;
	*out = (struct hwt__vec_loops){ "rvv", hwt__copy_rvv_words_unaligned,
					hwt__copy_rvv_bytes_unaligned, hwt__touch_rvv };
	return (getauxval(AT_HWCAP) & HWCAP_V_BIT) ? 1 : -1;
}
