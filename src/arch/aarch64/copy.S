/* SPDX-License-Identifier: MIT */
/*
 * The probe's copy loops.  x0 = dst, x1 = src, x2 = len.
 * Words: 8 ldr x, then 8 str x, 64 bytes per iteration (no ldp/stp, so each
 * access is one 8-byte word as in the kernel's routine).
 * Bytes: 8 ldrb, then 8 strb.
 */
#include "arch/asm.h"

	.text
	.globl	hwt__copy_words_unaligned
	.hidden	hwt__copy_words_unaligned
	.type	hwt__copy_words_unaligned, %function
hwt__copy_words_unaligned:
	HWT_ASM_ENTRY
	and	x2, x2, #~63
	cbz	x2, 2f
1:	ldr	x3, [x1, #0]
	ldr	x4, [x1, #8]
	ldr	x5, [x1, #16]
	ldr	x6, [x1, #24]
	ldr	x7, [x1, #32]
	ldr	x8, [x1, #40]
	ldr	x9, [x1, #48]
	ldr	x10, [x1, #56]
	str	x3, [x0, #0]
	str	x4, [x0, #8]
	str	x5, [x0, #16]
	str	x6, [x0, #24]
	str	x7, [x0, #32]
	str	x8, [x0, #40]
	str	x9, [x0, #48]
	str	x10, [x0, #56]
	add	x1, x1, #64
	add	x0, x0, #64
	subs	x2, x2, #64
	b.ne	1b
2:	ret
	.size	hwt__copy_words_unaligned, .-hwt__copy_words_unaligned

	.globl	hwt__copy_bytes_unaligned
	.hidden	hwt__copy_bytes_unaligned
	.type	hwt__copy_bytes_unaligned, %function
hwt__copy_bytes_unaligned:
	HWT_ASM_ENTRY
	and	x2, x2, #~7
	cbz	x2, 2f
1:	ldrb	w3, [x1, #0]
	ldrb	w4, [x1, #1]
	ldrb	w5, [x1, #2]
	ldrb	w6, [x1, #3]
	ldrb	w7, [x1, #4]
	ldrb	w8, [x1, #5]
	ldrb	w9, [x1, #6]
	ldrb	w10, [x1, #7]
	strb	w3, [x0, #0]
	strb	w4, [x0, #1]
	strb	w5, [x0, #2]
	strb	w6, [x0, #3]
	strb	w7, [x0, #4]
	strb	w8, [x0, #5]
	strb	w9, [x0, #6]
	strb	w10, [x0, #7]
	add	x1, x1, #8
	add	x0, x0, #8
	subs	x2, x2, #8
	b.ne	1b
2:	ret
	.size	hwt__copy_bytes_unaligned, .-hwt__copy_bytes_unaligned

/*
 * Advanced SIMD copy loops.  Both move 8 elements per access, as the
 * kernel's RVV loops do (vl = 8): words are 8 doublewords (one ld1/st1 of
 * four .2d registers, 64 bytes), bytes are 8 bytes (one ld1/st1 of a .8b
 * register).  The same element count makes the byte copy take 8 times the
 * accesses, as the scalar byte copy does.  (.2d against .16b, both 16-byte
 * accesses, would time only the element size, which normal memory ignores:
 * a ratio near 1 and a coin-flip verdict.)  x0 = dst, x1 = src, x2 = len.
 */
	.globl	hwt__copy_neon_words_unaligned
	.hidden	hwt__copy_neon_words_unaligned
	.type	hwt__copy_neon_words_unaligned, %function
hwt__copy_neon_words_unaligned:
	HWT_ASM_ENTRY
	and	x2, x2, #~63
	cbz	x2, 2f
1:	ld1	{v0.2d, v1.2d, v2.2d, v3.2d}, [x1], #64
	st1	{v0.2d, v1.2d, v2.2d, v3.2d}, [x0], #64
	subs	x2, x2, #64
	b.ne	1b
2:	ret
	.size	hwt__copy_neon_words_unaligned, .-hwt__copy_neon_words_unaligned

	.globl	hwt__copy_neon_bytes_unaligned
	.hidden	hwt__copy_neon_bytes_unaligned
	.type	hwt__copy_neon_bytes_unaligned, %function
hwt__copy_neon_bytes_unaligned:
	HWT_ASM_ENTRY
	and	x2, x2, #~7
	cbz	x2, 2f
1:	ld1	{v0.8b}, [x1], #8
	st1	{v0.8b}, [x0], #8
	subs	x2, x2, #8
	b.ne	1b
2:	ret
	.size	hwt__copy_neon_bytes_unaligned, .-hwt__copy_neon_bytes_unaligned

/*
 * Split-penalty loops: n (truncated to 8) word accesses at x0, 8 per
 * iteration; x1 = n.  Stores write back the word found there.
 */
	.globl	hwt__split_loads
	.hidden	hwt__split_loads
	.type	hwt__split_loads, %function
hwt__split_loads:
	HWT_ASM_ENTRY
	and	x1, x1, #~7
	cbz	x1, 2f
1:	ldr	x2, [x0]
	ldr	x2, [x0]
	ldr	x2, [x0]
	ldr	x2, [x0]
	ldr	x2, [x0]
	ldr	x2, [x0]
	ldr	x2, [x0]
	ldr	x2, [x0]
	subs	x1, x1, #8
	b.ne	1b
2:	ret
	.size	hwt__split_loads, .-hwt__split_loads

	.globl	hwt__split_stores
	.hidden	hwt__split_stores
	.type	hwt__split_stores, %function
hwt__split_stores:
	HWT_ASM_ENTRY
	and	x1, x1, #~7
	cbz	x1, 2f
	ldr	x2, [x0]
1:	str	x2, [x0]
	str	x2, [x0]
	str	x2, [x0]
	str	x2, [x0]
	str	x2, [x0]
	str	x2, [x0]
	str	x2, [x0]
	str	x2, [x0]
	subs	x1, x1, #8
	b.ne	1b
2:	ret
	.size	hwt__split_stores, .-hwt__split_stores

	.section .note.GNU-stack,"",%progbits
