/* SPDX-License-Identifier: MIT */
/*
 * The probe's copy loops.  rdi = dst, rsi = src, rdx = len.
 * Words: 8 movq loads, then 8 movq stores, 64 bytes per iteration.
 * Bytes: 8 movzbl loads, then 8 movb stores, 8 bytes per iteration.
 */
	.text
	.globl	hwt__copy_words_unaligned
	.hidden	hwt__copy_words_unaligned
	.type	hwt__copy_words_unaligned, @function
hwt__copy_words_unaligned:
	push	%rbx
	push	%r12
	and	$-64, %rdx
	jz	2f
1:	movq	0(%rsi), %rax
	movq	8(%rsi), %rbx
	movq	16(%rsi), %rcx
	movq	24(%rsi), %r8
	movq	32(%rsi), %r9
	movq	40(%rsi), %r10
	movq	48(%rsi), %r11
	movq	56(%rsi), %r12
	movq	%rax, 0(%rdi)
	movq	%rbx, 8(%rdi)
	movq	%rcx, 16(%rdi)
	movq	%r8, 24(%rdi)
	movq	%r9, 32(%rdi)
	movq	%r10, 40(%rdi)
	movq	%r11, 48(%rdi)
	movq	%r12, 56(%rdi)
	add	$64, %rsi
	add	$64, %rdi
	sub	$64, %rdx
	jnz	1b
2:	pop	%r12
	pop	%rbx
	ret
	.size	hwt__copy_words_unaligned, .-hwt__copy_words_unaligned

	.globl	hwt__copy_bytes_unaligned
	.hidden	hwt__copy_bytes_unaligned
	.type	hwt__copy_bytes_unaligned, @function
hwt__copy_bytes_unaligned:
	push	%rbx
	push	%r12
	and	$-8, %rdx
	jz	2f
1:	movzbl	0(%rsi), %eax
	movzbl	1(%rsi), %ebx
	movzbl	2(%rsi), %ecx
	movzbl	3(%rsi), %r8d
	movzbl	4(%rsi), %r9d
	movzbl	5(%rsi), %r10d
	movzbl	6(%rsi), %r11d
	movzbl	7(%rsi), %r12d
	movb	%al, 0(%rdi)
	movb	%bl, 1(%rdi)
	movb	%cl, 2(%rdi)
	movb	%r8b, 3(%rdi)
	movb	%r9b, 4(%rdi)
	movb	%r10b, 5(%rdi)
	movb	%r11b, 6(%rdi)
	movb	%r12b, 7(%rdi)
	add	$8, %rsi
	add	$8, %rdi
	sub	$8, %rdx
	jnz	1b
2:	pop	%r12
	pop	%rbx
	ret
	.size	hwt__copy_bytes_unaligned, .-hwt__copy_bytes_unaligned

	.section .note.GNU-stack,"",@progbits
