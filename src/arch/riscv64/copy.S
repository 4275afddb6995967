/* SPDX-License-Identifier: MIT */
/*
 * The probe's copy loops.  a0 = dst, a1 = src, a2 = len.
 * Words: 8 ld, then 8 sd, 64 bytes per iteration.
 * Bytes: 8 lb, then 8 sb.
 */
	.text
	.option	norvc	/* 4-byte encodings only: tests decode them */
	.globl	hwt__copy_words_unaligned
	.hidden	hwt__copy_words_unaligned
	.type	hwt__copy_words_unaligned, @function
hwt__copy_words_unaligned:
	andi	a2, a2, -64
	beqz	a2, 2f
1:	ld	t0, 0(a1)
	ld	t1, 8(a1)
	ld	t2, 16(a1)
	ld	t3, 24(a1)
	ld	t4, 32(a1)
	ld	t5, 40(a1)
	ld	t6, 48(a1)
	ld	a3, 56(a1)
	sd	t0, 0(a0)
	sd	t1, 8(a0)
	sd	t2, 16(a0)
	sd	t3, 24(a0)
	sd	t4, 32(a0)
	sd	t5, 40(a0)
	sd	t6, 48(a0)
	sd	a3, 56(a0)
	addi	a1, a1, 64
	addi	a0, a0, 64
	addi	a2, a2, -64
	bnez	a2, 1b
2:	ret
	.size	hwt__copy_words_unaligned, .-hwt__copy_words_unaligned

	.globl	hwt__copy_bytes_unaligned
	.hidden	hwt__copy_bytes_unaligned
	.type	hwt__copy_bytes_unaligned, @function
hwt__copy_bytes_unaligned:
	andi	a2, a2, -8
	beqz	a2, 2f
1:	lb	t0, 0(a1)
	lb	t1, 1(a1)
	lb	t2, 2(a1)
	lb	t3, 3(a1)
	lb	t4, 4(a1)
	lb	t5, 5(a1)
	lb	t6, 6(a1)
	lb	a3, 7(a1)
	sb	t0, 0(a0)
	sb	t1, 1(a0)
	sb	t2, 2(a0)
	sb	t3, 3(a0)
	sb	t4, 4(a0)
	sb	t5, 5(a0)
	sb	t6, 6(a0)
	sb	a3, 7(a0)
	addi	a1, a1, 8
	addi	a0, a0, 8
	addi	a2, a2, -8
	bnez	a2, 1b
2:	ret
	.size	hwt__copy_bytes_unaligned, .-hwt__copy_bytes_unaligned

	.section .note.GNU-stack,"",@progbits
