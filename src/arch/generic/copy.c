/* SPDX-License-Identifier: MIT */
/*
 * Plain-C copy loops, used only when no assembly exists for the target (or
 * NO_ASM=1).  The compiler chooses the access widths here, so a verdict made
 * with these loops is only as good as the code it generated: the assembly
 * versions in src/arch/<arch>/copy.S are the reference.
 */
#include "arch/arch.h"

#include <string.h>

void hwt__copy_words_unaligned(void *dst, const void *src, size_t len)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	unsigned long w[8];

	for (len &= ~(sizeof(w) - 1); len; len -= sizeof(w), d += sizeof(w), s += sizeof(w)) {
		for (int i = 0; i < 8; i++)
			memcpy(&w[i], s + i * sizeof(long), sizeof(long));
		for (int i = 0; i < 8; i++)
			memcpy(d + i * sizeof(long), &w[i], sizeof(long));
	}
}

void hwt__copy_bytes_unaligned(void *dst, const void *src, size_t len)
{
	volatile unsigned char *d = dst;
	const volatile unsigned char *s = src;

	for (len &= ~(size_t)7; len; len -= 8, d += 8, s += 8) {
		unsigned char b0 = s[0], b1 = s[1], b2 = s[2], b3 = s[3];
		unsigned char b4 = s[4], b5 = s[5], b6 = s[6], b7 = s[7];

		d[0] = b0, d[1] = b1, d[2] = b2, d[3] = b3;
		d[4] = b4, d[5] = b5, d[6] = b6, d[7] = b7;
	}
}
