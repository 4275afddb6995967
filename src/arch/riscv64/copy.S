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

/*
 * RVV copy loops, as the kernel's vector probe shapes them: the same
 * element count per access (vl = 8), the widest elements against bytes.
 * Words: e64, LMUL 4 (8 elements fit from VLEN 128 up, which V requires),
 * one vle64/vse64 of 64 bytes per iteration.  Bytes: e8, one vle8/vse8 of
 * 8 bytes per iteration.  Assembled for V whatever -march says; called
 * only once the unit is known to be there.
 */
	.option	push
	.option	arch, +v
	.globl	hwt__copy_rvv_words_unaligned
	.hidden	hwt__copy_rvv_words_unaligned
	.type	hwt__copy_rvv_words_unaligned, @function
hwt__copy_rvv_words_unaligned:
	andi	a2, a2, -64
	beqz	a2, 2f
	vsetivli	zero, 8, e64, m4, ta, ma
1:	vle64.v	v0, (a1)
	vse64.v	v0, (a0)
	addi	a1, a1, 64
	addi	a0, a0, 64
	addi	a2, a2, -64
	bnez	a2, 1b
2:	ret
	.size	hwt__copy_rvv_words_unaligned, .-hwt__copy_rvv_words_unaligned

	.globl	hwt__copy_rvv_bytes_unaligned
	.hidden	hwt__copy_rvv_bytes_unaligned
	.type	hwt__copy_rvv_bytes_unaligned, @function
hwt__copy_rvv_bytes_unaligned:
	andi	a2, a2, -8
	beqz	a2, 2f
	vsetivli	zero, 8, e8, m1, ta, ma
1:	vle8.v	v0, (a1)
	vse8.v	v0, (a0)
	addi	a1, a1, 8
	addi	a0, a0, 8
	addi	a2, a2, -8
	bnez	a2, 1b
2:	ret
	.size	hwt__copy_rvv_bytes_unaligned, .-hwt__copy_rvv_bytes_unaligned

/* One vector instruction: SIGILL where V is absent or not enabled. */
	.globl	hwt__touch_rvv
	.hidden	hwt__touch_rvv
	.type	hwt__touch_rvv, @function
hwt__touch_rvv:
	/* The copy loops need e64, LMUL 4, vl 8 (VLEN >= 128).  An embedded
	 * subset (Zve32x: no e64, vill set and vl 0; Zve64x with VLEN 64: vl 4)
	 * gets an illegal instruction here, so it counts as no unit, not as a
	 * misaligned-access fault or a short copy. */
	vsetivli t0, 8, e64, m4, ta, ma
	li	t1, 8
	beq	t0, t1, 1f
	unimp
1:	ret
	.size	hwt__touch_rvv, .-hwt__touch_rvv
	.option	pop

/*
 * Split-penalty loops: n (truncated to 8) word accesses at a0, 8 per
 * iteration; a1 = n.  Stores write back the word found there.
 */
	.globl	hwt__split_loads
	.hidden	hwt__split_loads
	.type	hwt__split_loads, @function
hwt__split_loads:
	andi	a1, a1, -8
	beqz	a1, 2f
1:	ld	t0, 0(a0)
	ld	t0, 0(a0)
	ld	t0, 0(a0)
	ld	t0, 0(a0)
	ld	t0, 0(a0)
	ld	t0, 0(a0)
	ld	t0, 0(a0)
	ld	t0, 0(a0)
	addi	a1, a1, -8
	bnez	a1, 1b
2:	ret
	.size	hwt__split_loads, .-hwt__split_loads

	.globl	hwt__split_stores
	.hidden	hwt__split_stores
	.type	hwt__split_stores, @function
hwt__split_stores:
	andi	a1, a1, -8
	beqz	a1, 2f
	ld	t0, 0(a0)
1:	sd	t0, 0(a0)
	sd	t0, 0(a0)
	sd	t0, 0(a0)
	sd	t0, 0(a0)
	sd	t0, 0(a0)
	sd	t0, 0(a0)
	sd	t0, 0(a0)
	sd	t0, 0(a0)
	addi	a1, a1, -8
	bnez	a1, 1b
2:	ret
	.size	hwt__split_stores, .-hwt__split_stores

	.section .note.GNU-stack,"",@progbits
