/* SPDX-License-Identifier: MIT */
/*
 * hwt__rseq_insert() and hwt__rseq_publish() for x86_64 (the contract:
 * src/arch/rseq.h; the design: docs/percpu-queues.md, sections 2 and 8).
 *
 * Test builds only (the Makefile's rules for tests/stress/rseq.c): with
 * HWT_RSEQ_TEST the function is hwt__rseq_insert_test and its abort handler
 * counts restarts in hwt__rseq_test_aborts (a locked increment: exact), and
 * in hwt__rseq_test_msi_aborts those that came after the section stored a
 * CMD_SYNC's MSIADDR (bit 33 of r15 marks the store).  Mutants, each with
 * its own names (the insertion's, and hwt__rseq_publish_<the same suffix>)
 * and counter, which the storm must catch:
 * HWT_RSEQ_BROKEN_COMMIT (hwt__rseq_insert_broken) commits sprod before it
 * writes the entries, so that a restart after the commit leaves slots below
 * sprod unwritten, which the next publish gives the device; HWT_RSEQ_BROKEN_POST
 * (hwt__rseq_insert_broken_post) ends the section before the commit
 * (post_commit_offset one instruction short), so that a thread stopped at the
 * commit stores a stale sprod; HWT_RSEQ_BROKEN_NOCPU
 * (hwt__rseq_insert_broken_nocpu) does not check the CPU again inside the
 * section, so that a thread moved between the CPU read and the section's
 * start fills another CPU's ring; HWT_RSEQ_BROKEN_MSIADDR
 * (hwt__rseq_insert_broken_msiaddr) does not store a CMD_SYNC's MSIADDR
 * (HWT__RSEQ_K_SYNC_MSI), so that the device sees MSIADDR 0 and writes no
 * MSI into the slot; HWT_RSEQ_BROKEN_PUBOUT (hwt__rseq_insert_broken_pubout)
 * publishes outside any section (the model's z4), so that a thread stopped
 * between its load of sprod and its store of PROD stores a stale PROD
 * after another thread of that CPU published more: PROD moves back (32
 * pause instructions between the two, the model's stall, widen the window
 * for the storm's signals to hit); HWT_RSEQ_BROKEN_NTFENCE
 * (hwt__rseq_insert_broken_ntfence) leaves out the sfence after a
 * non-temporal copy; HWT_RSEQ_BROKEN_PUBCPU (hwt__rseq_publish_broken_pubcpu)
 * publishes without checking the CPU (the model's z2: a store of PROD from
 * another CPU), which the contract's check catches.  The library is built
 * with none of them.
 */
#include "arch/asm.h"
#include "arch/rseq.h"

#include "arch/rseq_builds.h"

/*
 * rdi = rings, esi = nrings, rdx = ents, ecx = k, r8 = cpu_out, r9 = prod_out.
 * Kept across the section and its restarts (the abort handler finds the
 * registers as the interrupted code left them, so the section writes none of
 * these): rdi, esi, rdx, r8, r9, r10 = __rseq_offset, r15d = k (without the
 * flags), bit 32 of r15 = HWT__RSEQ_K_SYNC_MSI, bit 34 =
 * HWT__RSEQ_K_NO_PUBLISH, bit 35 = HWT__RSEQ_K_NT (r15 is read only as
 * r15d, or in 32-bit results).
 * Set before the section for the ring of the CPU read: r11 = ring,
 * r12 = &PROD, ebx = 2^shift, ebp = WRP|IDX mask.  In the section:
 * r13d = sprod, r14d = cons (then the end of a copy run), rax/rcx/xmm0.
 */
	/* rax = &__rseq_offset, or to \nosys. */
	.macro	rseq_offset nosys
	mov	__rseq_size@GOTPCREL(%rip), %rax	/* weak: 0 without glibc >= 2.35 */
	test	%rax, %rax
	jz	\nosys
	cmpl	$HWT__RSEQ_MIN_SIZE, (%rax)		/* 0: not registered */
	jb	\nosys
	mov	__rseq_offset@GOTPCREL(%rip), %rax
	test	%rax, %rax
	jz	\nosys
	.endm

	.macro	pop_saved
	pop	%r15
	.cfi_adjust_cfa_offset -8
	.cfi_restore %r15
	pop	%r14
	.cfi_adjust_cfa_offset -8
	.cfi_restore %r14
	pop	%r13
	.cfi_adjust_cfa_offset -8
	.cfi_restore %r13
	pop	%r12
	.cfi_adjust_cfa_offset -8
	.cfi_restore %r12
	pop	%rbp
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbp
	pop	%rbx
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbx
	.endm

	/* Entries from rax to rcx, stored with \st, until rax reaches r14. */
	.macro	copy_loop st
.Lcopy\@:
	movdqu	(%rax), %xmm0
	\st	%xmm0, (%rcx)
	add	$16, %rax
	add	$16, %rcx
	cmp	%r14, %rax
	jne	.Lcopy\@
	.endm

	/* The copy: the first run from slot idx (rcx, up to the source's r14),
	 * then the second from slot 0 if the first reached the ring's end;
	 * stores with \st.  rcx ends just past the last entry. */
	.macro	copy_runs st
	copy_loop \st
	mov	%r15d, %r14d
	shl	$4, %r14
	add	%rdx, %r14
	cmp	%r14, %rax
	je	.Lruns\@
	mov	HWT__RSEQ_RING_SLOTS(%r11), %rcx
	copy_loop \st
.Lruns\@:
	.endm

	.macro	count_abort counter
	lock incq \counter(%rip)			/* test builds only */
	.endm

	.text
	.globl	FN
	.hidden	FN
	.type	FN, @function
	.p2align 4
FN:
	.cfi_startproc
	HWT_ASM_ENTRY				/* landing pad: arch/asm.h */
	rseq_offset .Lnosys
	jmp	.Lhave
.Lnosys:
	mov	$-HWT__RSEQ_ENOSYS, %eax
	ret
.Lhave:
	push	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbx, 0
	push	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	push	%r12
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %r12, 0
	push	%r13
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %r13, 0
	push	%r14
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %r14, 0
	push	%r15
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %r15, 0
	mov	(%rax), %r10			/* the area is at %fs:(%r10) */
	mov	%ecx, %r15d
	and	$~(HWT__RSEQ_K_SYNC_MSI | HWT__RSEQ_K_NO_PUBLISH | HWT__RSEQ_K_NT), %r15d	/* k */
	bt	$HWT__RSEQ_K_SYNC_MSI_BIT, %ecx
	jnc	1f
	bts	$32, %r15				/* the flag, in bit 32 of r15 */
1:	bt	$HWT__RSEQ_K_NO_PUBLISH_BIT, %ecx
	jnc	1f
	bts	$34, %r15				/* the flag, in bit 34 of r15 */
1:	bt	$HWT__RSEQ_K_NT_BIT, %ecx
	jnc	1f
	bts	$35, %r15				/* the flag, in bit 35 of r15 */
1:	test	%r15d, %r15d
	jz	.Leinval_cpu

	/* The CPU, read outside the section and checked again inside it (the
	 * kernel writes cpu_id before this thread returns to user space on a
	 * new CPU).  A restart comes back here. */
.Lretry:
	movl	%fs:HWT__RSEQ_CPU_ID(%r10), %eax
	movl	%eax, (%r8)
	cmp	%esi, %eax
	jae	.Lerange
	mov	%eax, %r11d
	shl	$HWT__RSEQ_RING_LOG2, %r11
	add	%rdi, %r11
	mov	HWT__RSEQ_RING_PROD(%r11), %r12
	movl	HWT__RSEQ_RING_SHIFT(%r11), %ecx
	mov	$1, %ebx
	shl	%cl, %ebx				/* 2^shift */
	lea	-1(%rbx,%rbx), %ebp			/* WRP|IDX */
	cmp	%ebx, %r15d
	ja	.Leinval
	lea	.Lcs(%rip), %rcx

	/* Step 1, the insertion: [.Lstart, .Lpost), one store of sprod as
	 * its last instruction.  It never loads PROD, which the device polls
	 * (a load would miss).  Open it: rseq_cs = &.Lcs. */
.Lstart:
	mov	%rcx, %fs:HWT__RSEQ_CS(%r10)
#ifndef HWT_RSEQ_BROKEN_NOCPU
	cmpl	%eax, %fs:HWT__RSEQ_CPU_ID(%r10)	/* migrated since the read? */
	jne	.Labort
#endif
	movl	HWT__RSEQ_RING_SPROD(%r11), %r13d	/* sprod: only this CPU's sections */
	movl	HWT__RSEQ_RING_CCONS(%r11), %r14d
	mov	%r13d, %ecx
	sub	%r14d, %ecx
	and	%ebp, %ecx				/* entries in use */
	add	%r15d, %ecx
	cmp	%ebx, %ecx
	jbe	.Lroom
	/* A_CONS: pairs with the device's R_CONS (its release store of CONS
	 * once it has read the slots); a plain load is an acquire on x86. */
	mov	HWT__RSEQ_RING_CONS(%r11), %rcx
	movl	(%rcx), %r14d
	and	%ebp, %r14d				/* drop ERR (bits 30:24) */
	movl	%r14d, HWT__RSEQ_RING_CCONS(%r11)	/* valid whatever follows */
	mov	%r13d, %ecx
	sub	%r14d, %ecx
	and	%ebp, %ecx
	add	%r15d, %ecx
	cmp	%ebx, %ecx
	ja	.Lfull					/* leaves the section */
.Lroom:
#ifdef HWT_RSEQ_BROKEN_COMMIT
	lea	(%r13,%r15), %ecx
	and	%ebp, %ecx
	mov	%ecx, HWT__RSEQ_RING_SPROD(%r11)	/* BROKEN: commit first */
#endif
	/* The first run: min(k, 2^shift - idx) entries from slot idx. */
	lea	-1(%rbx), %ecx
	and	%r13d, %ecx				/* idx */
	mov	%ebx, %r14d
	sub	%ecx, %r14d
	cmp	%r15d, %r14d
	cmova	%r15d, %r14d
	shl	$4, %rcx
	add	HWT__RSEQ_RING_SLOTS(%r11), %rcx
	mov	%rdx, %rax
	shl	$4, %r14
	add	%rax, %r14
	/* HWT__RSEQ_K_NT: the entries stored non-temporally (arch/rseq.h says
	 * why), then fenced before the commit: an sfence, not a locked
	 * instruction. */
	bt	$35, %r15
	jc	.Lnt
	copy_runs movdqu
	jmp	3f
.Lnt:
	copy_runs movntdq
#ifndef HWT_RSEQ_BROKEN_NTFENCE
	/* Orders the movntdq stores (weakly ordered) before every later store
	 * of this CPU: the MSIADDR over the last one, sprod, PROD (R_PROD:
	 * A_PROD's reader must find the entries). */
	sfence
#endif
	/* rcx: just past the last entry, in either run. */
3:	bt	$32, %r15
	jnc	4f
#ifndef HWT_RSEQ_BROKEN_MSIADDR
	/* HWT__RSEQ_K_SYNC_MSI: the last entry is a CMD_SYNC whose MSI goes to
	 * its own slot; its dw1 (MSIADDR[51:2], built 0) = that slot's IOVA.
	 * Before the commit, so a restart stores it again for its new slot. */
	mov	HWT__RSEQ_RING_IOVA(%r11), %rax
	sub	HWT__RSEQ_RING_SLOTS(%r11), %rax
	lea	-16(%rax,%rcx), %rax			/* iova + (the slot - slots) */
	mov	%rax, -8(%rcx)
#ifdef MSI_ABORTS
	bts	$33, %r15				/* test builds: stored (for .Labort) */
#endif
#endif
4:	lea	(%r13,%r15), %eax
	and	%ebp, %eax
#ifndef HWT_RSEQ_BROKEN_COMMIT
	/* The commit: sprod, a line no other CPU touches. */
.Lcommit:
	mov	%eax, HWT__RSEQ_RING_SPROD(%r11)
#endif
.Lpost:
	/* Out of step 1: the entries are in; step 2 publishes them from this
	 * CPU (at .Lpublish, with r10, r11, rsi = &PROD, edx = the CPU). */
	movl	(%r8), %edx				/* the CPU, before *prod_out */
	movl	%eax, (%r9)
	bt	$34, %r15
	jc	.Lnopub
	mov	%r12, %rsi
	.cfi_remember_state
	pop_saved
	jmp	.Lpublish
	.cfi_restore_state
.Lnopub:
	mov	$HWT__RSEQ_MOVED, %eax
	jmp	.Lout
.Lfull:
	mov	$-HWT__RSEQ_EAGAIN, %eax
	jmp	.Lout
.Lerange:
	mov	$-HWT__RSEQ_ERANGE, %eax
	jmp	.Lout
.Leinval_cpu:
	movl	%fs:HWT__RSEQ_CPU_ID(%r10), %eax
	movl	%eax, (%r8)
.Leinval:
	mov	$-HWT__RSEQ_EINVAL, %eax
.Lout:
	/* Every way out after .Lhave: clear rseq_cs (a plain store).  Left
	 * pointing at .Lcs it would be harmless while this code stays mapped
	 * (the kernel acts only while the instruction pointer is in the
	 * section, and clears a stale rseq_cs at its next look), but after a
	 * dlclose() that unmaps the library the kernel's next look (preemption,
	 * migration or a signal) fails to read the descriptor and kills the
	 * process with SIGSEGV. */
	movq	$0, %fs:HWT__RSEQ_CS(%r10)
	.cfi_remember_state
	pop_saved
	ret
	.cfi_restore_state

	/* The signature, as the operand of a ud1 (as glibc and librseq write
	 * it: disassemblers decode it, and nothing falls into it). */
	.byte	0x0f, 0xb9, 0x3d
	.long	HWT__RSEQ_SIG
	/* abort_ip: the kernel has cleared rseq_cs; nothing to undo (entries
	 * past sprod are not committed, ccons holds a CONS value read). */
.Labort:
#ifdef ABORTS
	count_abort ABORTS
#endif
#ifdef MSI_ABORTS
	btr	$33, %r15				/* after the MSIADDR store? */
	jnc	.Lretry
	count_abort MSI_ABORTS
#endif
	jmp	.Lretry
	.cfi_endproc
	.size	FN, .-FN

/*
 * hwt__rseq_publish: rdi = rings, esi = nrings, edx = cpu.  Step 2 of
 * hwt__rseq_insert too, which jumps to .Lpublish with r10 = __rseq_offset,
 * r11 = the ring, rsi = &PROD, edx = the CPU (kept across the section and
 * its restarts), its callee-saved registers restored.
 */
	.globl	PUB
	.hidden	PUB
	.type	PUB, @function
	.p2align 4
PUB:
	.cfi_startproc
	HWT_ASM_ENTRY
	rseq_offset .Lpnosys
	cmp	%esi, %edx
	jae	.Lperange
	mov	(%rax), %r10
	mov	%edx, %r11d
	shl	$HWT__RSEQ_RING_LOG2, %r11
	add	%rdi, %r11
	mov	HWT__RSEQ_RING_PROD(%r11), %rsi
.Lpublish:
	lea	.Lcs2(%rip), %rcx
	/* Step 2, the publish: [.Lstart2, .Lpost2), one store of PROD as its
	 * last instruction; only on the ring's CPU, whose sections alone move
	 * sprod: the value read is the latest, and nothing can move it on
	 * before the store without restarting this. */
.Lstart2:
#ifndef HWT_RSEQ_BROKEN_PUBOUT
	mov	%rcx, %fs:HWT__RSEQ_CS(%r10)
#endif
#ifndef HWT_RSEQ_BROKEN_PUBCPU
	cmpl	%edx, %fs:HWT__RSEQ_CPU_ID(%r10)	/* on the ring's CPU? */
	jne	.Lmoved
#endif
	movl	HWT__RSEQ_RING_SPROD(%r11), %eax
#ifdef HWT_RSEQ_BROKEN_PUBOUT
	mov	$32, %ecx				/* BROKEN: and a stall (the window) */
1:	pause
	dec	%ecx
	jnz	1b
#endif
	/* R_PROD, the commit: pairs with the device's A_PROD (its acquire load
	 * of PROD before it reads the slots); a plain store is a release on x86. */
.Lcommit2:
	mov	%eax, (%rsi)
.Lpost2:
	xor	%eax, %eax
.Lpout:
	movq	$0, %fs:HWT__RSEQ_CS(%r10)		/* as at .Lout */
	ret
.Lmoved:
	mov	$HWT__RSEQ_MOVED, %eax
	jmp	.Lpout
.Lperange:
	mov	$-HWT__RSEQ_ERANGE, %eax
	ret
.Lpnosys:
	mov	$-HWT__RSEQ_ENOSYS, %eax
	ret

	.byte	0x0f, 0xb9, 0x3d
	.long	HWT__RSEQ_SIG
	/* abort_ip: start step 2 again; on another CPU it stores nothing. */
.Labort2:
#ifdef ABORTS
	count_abort ABORTS
#endif
#ifdef PUB_ABORTS
	count_abort PUB_ABORTS
#endif
	jmp	.Lpublish
	.cfi_endproc
	.size	PUB, .-PUB

	/* The descriptor (struct rseq_cs): 32-byte aligned; .data.rel.ro, as its
	 * addresses need relocating in a shared library, read-only after that. */
	.section .data.rel.ro,"aw"
	.balign	32
.Lcs:
#ifdef HWT_RSEQ_BROKEN_POST
	HWT__RSEQ_CS_DESC(.Lstart, .Lcommit, .Labort)	/* BROKEN: the commit left out */
#else
	HWT__RSEQ_CS_DESC(.Lstart, .Lpost, .Labort)
#endif
	.balign	32
.Lcs2:
	HWT__RSEQ_CS_DESC(.Lstart2, .Lpost2, .Labort2)

#ifdef ABORTS
	.bss
	.balign	64
	.globl	ABORTS
	.hidden	ABORTS
	.type	ABORTS, @object
ABORTS:
	.quad	0
	.size	ABORTS, 8
#endif
#ifdef MSI_ABORTS
	.globl	MSI_ABORTS
	.hidden	MSI_ABORTS
	.type	MSI_ABORTS, @object
MSI_ABORTS:
	.quad	0
	.size	MSI_ABORTS, 8
#endif
#ifdef PUB_ABORTS
	.globl	PUB_ABORTS
	.hidden	PUB_ABORTS
	.type	PUB_ABORTS, @object
PUB_ABORTS:
	.quad	0
	.size	PUB_ABORTS, 8
#endif

	.weak	__rseq_offset
	.weak	__rseq_size
	.section .note.GNU-stack,"",@progbits
