/* SPDX-License-Identifier: MIT */
/*
 * The probe's copy loops.  rdi = dst, rsi = src, rdx = len.
 * Words: 8 movq loads, then 8 movq stores, 64 bytes per iteration.
 * Bytes: 8 movzbl loads, then 8 movb stores, 8 bytes per iteration.
 */
#include "arch/asm.h"

	.text
	.globl	hwt__copy_words_unaligned
	.hidden	hwt__copy_words_unaligned
	.type	hwt__copy_words_unaligned, @function
hwt__copy_words_unaligned:
	HWT_ASM_ENTRY
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
	HWT_ASM_ENTRY
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

/*
 * Vector copy loops (64 bytes per iteration, unaligned forms).
 * SSE2: 4 movdqu loads into xmm0-3, then 4 movdqu stores.
 * AVX2: 2 vmovdqu loads into ymm0-1, then 2 vmovdqu stores; vzeroupper on
 * the way out so later SSE code pays no transition penalty.  The caller
 * checks that the OS saves YMM state before calling it.
 * AVX-512: 1 vmovdqu64 load into zmm0, then 1 vmovdqu64 store; vzeroupper
 * likewise; the caller checks that the OS saves the ZMM and opmask state.
 * x86 has no byte-element vector load: the byte side of the vector probe
 * is hwt__copy_bytes_unaligned.
 */
	.globl	hwt__copy_sse2_words_unaligned
	.hidden	hwt__copy_sse2_words_unaligned
	.type	hwt__copy_sse2_words_unaligned, @function
hwt__copy_sse2_words_unaligned:
	HWT_ASM_ENTRY
	and	$-64, %rdx
	jz	2f
1:	movdqu	0(%rsi), %xmm0
	movdqu	16(%rsi), %xmm1
	movdqu	32(%rsi), %xmm2
	movdqu	48(%rsi), %xmm3
	movdqu	%xmm0, 0(%rdi)
	movdqu	%xmm1, 16(%rdi)
	movdqu	%xmm2, 32(%rdi)
	movdqu	%xmm3, 48(%rdi)
	add	$64, %rsi
	add	$64, %rdi
	sub	$64, %rdx
	jnz	1b
2:	ret
	.size	hwt__copy_sse2_words_unaligned, .-hwt__copy_sse2_words_unaligned

/* A VEX or EVEX copy: the function name, then a macro of the loop's loads
 * and stores of 64 bytes (rsi to rdi); vzeroupper on the way out. */
	.macro	vex_copy name, body
	.globl	\name
	.hidden	\name
	.type	\name, @function
\name:
	HWT_ASM_ENTRY
	and	$-64, %rdx
	jz	2f
1:	\body
	add	$64, %rsi
	add	$64, %rdi
	sub	$64, %rdx
	jnz	1b
	vzeroupper
2:	ret
	.size	\name, .-\name
	.endm

	.macro	avx2_words
	vmovdqu	0(%rsi), %ymm0
	vmovdqu	32(%rsi), %ymm1
	vmovdqu	%ymm0, 0(%rdi)
	vmovdqu	%ymm1, 32(%rdi)
	.endm
	vex_copy hwt__copy_avx2_words_unaligned, avx2_words

/* Executes one AVX2 instruction (the SIGILL probe; unused when cpuid and
 * xgetbv already answered). */
	.globl	hwt__touch_avx2
	.hidden	hwt__touch_avx2
	.type	hwt__touch_avx2, @function
hwt__touch_avx2:
	HWT_ASM_ENTRY
	vpxor	%ymm0, %ymm0, %ymm0
	vzeroupper
	ret
	.size	hwt__touch_avx2, .-hwt__touch_avx2

	.macro	avx512_words
	vmovdqu64	0(%rsi), %zmm0
	vmovdqu64	%zmm0, 0(%rdi)
	.endm
	vex_copy hwt__copy_avx512_words_unaligned, avx512_words

/* Executes one AVX-512 instruction (the SIGILL probe, as hwt__touch_avx2). */
	.globl	hwt__touch_avx512
	.hidden	hwt__touch_avx512
	.type	hwt__touch_avx512, @function
hwt__touch_avx512:
	HWT_ASM_ENTRY
	vpxord	%zmm0, %zmm0, %zmm0
	vzeroupper
	ret
	.size	hwt__touch_avx512, .-hwt__touch_avx512

/*
 * Split-penalty loops: n (truncated to 8) word accesses, all at address p,
 * 8 per iteration.  rdi = p, rsi = n.  The loads are independent (each
 * overwrites rax), so the loop runs at the access's throughput.
 */
	.globl	hwt__split_loads
	.hidden	hwt__split_loads
	.type	hwt__split_loads, @function
hwt__split_loads:
	HWT_ASM_ENTRY
	and	$-8, %rsi
	jz	2f
1:	movq	(%rdi), %rax
	movq	(%rdi), %rax
	movq	(%rdi), %rax
	movq	(%rdi), %rax
	movq	(%rdi), %rax
	movq	(%rdi), %rax
	movq	(%rdi), %rax
	movq	(%rdi), %rax
	sub	$8, %rsi
	jnz	1b
2:	ret
	.size	hwt__split_loads, .-hwt__split_loads

/* Stores write back the word that is there, so the buffer keeps its bytes. */
	.globl	hwt__split_stores
	.hidden	hwt__split_stores
	.type	hwt__split_stores, @function
hwt__split_stores:
	HWT_ASM_ENTRY
	and	$-8, %rsi
	jz	2f
	movq	(%rdi), %rax
1:	movq	%rax, (%rdi)
	movq	%rax, (%rdi)
	movq	%rax, (%rdi)
	movq	%rax, (%rdi)
	movq	%rax, (%rdi)
	movq	%rax, (%rdi)
	movq	%rax, (%rdi)
	movq	%rax, (%rdi)
	sub	$8, %rsi
	jnz	1b
2:	ret
	.size	hwt__split_stores, .-hwt__split_stores

	.section .note.GNU-stack,"",@progbits
