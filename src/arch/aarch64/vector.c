/* SPDX-License-Identifier: MIT */
/*
 * aarch64 vector unit for the misaligned probe: Advanced SIMD, which the
 * Linux AArch64 ABI practically always has (AT_HWCAP bit 1, ASIMD).  No
 * second, wider unit is timed (SVE's vector length varies per part).
 */
#include "arch/arch.h"

#include <errno.h>
#include <sys/auxv.h>

#define HWCAP_ASIMD_BIT (1ul << 1)

void hwt__copy_neon_words_unaligned(void *dst, const void *src, size_t len);
void hwt__copy_neon_bytes_unaligned(void *dst, const void *src, size_t len);

int hwt__vec_get(unsigned kind, struct hwt__vec_loops *out)
{
	if (kind == HWT__VEC_WIDE || kind == HWT__VEC_WIDE512)
		return -ENODEV;
	if (kind != HWT__VEC_MAIN)
		return -EINVAL;
	*out = (struct hwt__vec_loops){ "neon", hwt__copy_neon_words_unaligned,
					hwt__copy_neon_bytes_unaligned, NULL };
	return (getauxval(AT_HWCAP) & HWCAP_ASIMD_BIT) ? 1 : 0;
}
