/* SPDX-License-Identifier: MIT */
/*
 * Plain-C copy loops, used only when no assembly exists for the target (or
 * NO_ASM=1).  The compiler chooses the access widths here, so a verdict made
 * with these loops is only as good as the code it generated: the assembly
 * versions in src/arch/<arch>/copy.S are the reference.
 */
#include "arch/arch.h"

#include <errno.h>
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

/* No vector loops in plain C: the compiler would pick the instructions. */
int hwt__vec_get(unsigned kind, struct hwt__vec_loops *out)
{
	(void)kind;
	*out = (struct hwt__vec_loops){ NULL, NULL, NULL, NULL };
	return -ENOSYS;
}

/* Split loops in C: memcpy of a word through a volatile pointer is one
 * access where the target allows misaligned words (x86_64, aarch64), byte
 * accesses elsewhere; as with the copy loops, the assembly is the reference. */
void hwt__split_loads(const void *p, size_t n)
{
	unsigned long w;

	for (n &= ~(size_t)7; n; n--) {
		memcpy(&w, p, sizeof(w));
		__asm__ __volatile__("" : : "r"(w) : "memory");
	}
}

void hwt__split_stores(void *p, size_t n)
{
	unsigned long w;

	memcpy(&w, p, sizeof(w));
	for (n &= ~(size_t)7; n; n--) {
		__asm__ __volatile__("" : "+r"(w) : : "memory");
		memcpy(p, &w, sizeof(w));
	}
}
