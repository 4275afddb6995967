/* SPDX-License-Identifier: MIT */
/*
 * hwt__rseq_insert() and hwt__rseq_publish() for aarch64 (the contract:
 * src/arch/rseq.h; the design: docs/percpu-queues.md, sections 2 and 8).
 * HWT_RSEQ_TEST and the mutants HWT_RSEQ_BROKEN_COMMIT, _POST, _NOCPU,
 * _MSIADDR, _PUBOUT, _NTFENCE (the test build here: no non-temporal copy)
 * and _PUBCPU make the test builds, as in src/arch/x86_64/rseq.S
 * (bit 33 of x3 marks the MSIADDR store there, for hwt__rseq_test_msi_aborts).
 */
#include "arch/asm.h"
#include "arch/rseq.h"
#include "arch/rseq_builds.h"

/*
 * x0 = rings, w1 = nrings, x2 = ents, w3 = k, x4 = cpu_out, x5 = prod_out.
 * Kept across the section and its restarts (the abort handler finds the
 * registers as the interrupted code left them): x0-x5 (w3 = k without the
 * flags, bit 32 of x3 = HWT__RSEQ_K_SYNC_MSI, bit 34 =
 * HWT__RSEQ_K_NO_PUBLISH, x3's high half cleared at entry, HWT__RSEQ_K_NT
 * ignored (the copy is stp here); x3 is read only
 * as w3 besides),
 * x10 = the rseq area, x17 = &.Lcs.  Set before the section for the ring of
 * the CPU read: w6 = cpu, x7 = ring, x8 = &sprod, x11 = &CONS, x12 = slots,
 * w14 = 2^shift, w15 = WRP|IDX mask.  In the section: w16 = sprod, w13 = cons,
 * then w15 = the sprod to commit, x6 = iova - slots; the copy reuses x7, x9,
 * x11-x14, x16 (a restart sets them again).  No callee-saved register is
 * touched.
 */
	/* x10 = the thread's struct rseq, or to \nosys (x9 scratch). */
	.macro	rseq_area nosys
	adrp	x9, :got:__rseq_size			/* weak: 0 without glibc >= 2.35 */
	ldr	x9, [x9, :got_lo12:__rseq_size]
	cbz	x9, \nosys
	ldr	w9, [x9]
	cmp	w9, #HWT__RSEQ_MIN_SIZE			/* 0: not registered */
	b.lo	\nosys
	adrp	x10, :got:__rseq_offset
	ldr	x10, [x10, :got_lo12:__rseq_offset]
	cbz	x10, \nosys
	ldr	x10, [x10]
	mrs	x9, tpidr_el0
	add	x10, x10, x9
	.endm

	.text
	.globl	FN
	.hidden	FN
	.type	FN, %function
	.p2align 4
FN:
	.cfi_startproc
	HWT_ASM_ENTRY				/* landing pad: arch/asm.h */
	rseq_area .Lnosys
	adrp	x17, .Lcs
	add	x17, x17, :lo12:.Lcs
	mov	w9, w3					/* the flags */
	and	w3, w3, #0x1fffffff			/* k; and x3's high half, the
						 * caller's garbage (AAPCS64), cleared */
	tbz	w9, #HWT__RSEQ_K_SYNC_MSI_BIT, 1f
	orr	x3, x3, #0x100000000			/* the flag, in bit 32 of x3 */
1:	tbz	w9, #HWT__RSEQ_K_NO_PUBLISH_BIT, 1f
	orr	x3, x3, #0x400000000			/* the flag, in bit 34 of x3 */
1:	cbz	w3, .Leinval_cpu

	/* The CPU, read outside the section and checked again inside it.  A
	 * restart comes back here. */
.Lretry:
	ldr	w6, [x10, #HWT__RSEQ_CPU_ID]
	str	w6, [x4]
	cmp	w6, w1
	b.hs	.Lerange
	add	x7, x0, x6, lsl #HWT__RSEQ_RING_LOG2
	add	x8, x7, #HWT__RSEQ_RING_SPROD
	ldr	x11, [x7, #HWT__RSEQ_RING_CONS]
	ldr	x12, [x7, #HWT__RSEQ_RING_SLOTS]
	ldr	w13, [x7, #HWT__RSEQ_RING_SHIFT]
	mov	w14, #1
	lsl	w14, w14, w13				/* 2^shift */
	lsl	w15, w14, #1
	sub	w15, w15, #1				/* WRP|IDX */
	cmp	w3, w14
	b.hi	.Leinval

	/* Step 1, the insertion: [.Lstart, .Lpost), one store of sprod as its
	 * last instruction.  It never loads PROD, which the device polls (a
	 * load would miss).  Open it: rseq_cs = &.Lcs. */
.Lstart:
	str	x17, [x10, #HWT__RSEQ_CS]
#ifndef HWT_RSEQ_BROKEN_NOCPU
	ldr	w9, [x10, #HWT__RSEQ_CPU_ID]		/* migrated since the read? */
	cmp	w9, w6
	b.ne	.Labort
#endif
	ldr	w16, [x8]				/* sprod: only this CPU's sections */
	ldr	w13, [x7, #HWT__RSEQ_RING_CCONS]
	sub	w9, w16, w13
	and	w9, w9, w15				/* entries in use */
	add	w9, w9, w3
	cmp	w9, w14
	b.ls	.Lroom
	/* A_CONS: pairs with the device's R_CONS (its release store of CONS
	 * once it has read the slots). */
	ldar	w13, [x11]
	and	w13, w13, w15				/* drop ERR (bits 30:24) */
	str	w13, [x7, #HWT__RSEQ_RING_CCONS]	/* valid whatever follows */
	sub	w9, w16, w13
	and	w9, w9, w15
	add	w9, w9, w3
	cmp	w9, w14
	b.hi	.Lfull					/* leaves the section */
.Lroom:
	add	w13, w16, w3
	and	w15, w13, w15				/* prod + k, WRP|IDX */
	ldr	x6, [x7, #HWT__RSEQ_RING_IOVA]
	sub	x6, x6, x12				/* a slot's IOVA - its address */
#ifdef HWT_RSEQ_BROKEN_COMMIT
	str	w15, [x8]				/* BROKEN: commit first */
#endif
	/* The first run: min(k, 2^shift - idx) entries from slot idx. */
	sub	w9, w14, #1
	and	w9, w9, w16				/* idx */
	sub	w13, w14, w9
	cmp	w13, w3
	csel	w13, w13, w3, lo			/* run 1 */
	add	x11, x12, x9, lsl #4			/* dst (&CONS no longer needed) */
	mov	x9, x2					/* src */
	sub	w16, w3, w13				/* run 2 */
1:	ldp	x7, x14, [x9], #16
	stp	x7, x14, [x11], #16
	subs	w13, w13, #1
	b.ne	1b
	/* The second run, from slot 0, if the first reached the end. */
	cbz	w16, 3f
2:	ldp	x7, x14, [x9], #16
	stp	x7, x14, [x12], #16
	subs	w16, w16, #1
	b.ne	2b
	mov	x11, x12
	/* x11: just past the last entry, in either run. */
3:	tbz	x3, #32, 4f
#ifndef HWT_RSEQ_BROKEN_MSIADDR
	/* HWT__RSEQ_K_SYNC_MSI: the last entry is a CMD_SYNC whose MSI goes to
	 * its own slot; its dw1 (MSIADDR[51:2], built 0) = that slot's IOVA.
	 * Before the commit (the publish's stlr orders it), so a restart
	 * stores it again for its new slot. */
	add	x9, x6, x11
	sub	x9, x9, #16
	str	x9, [x11, #-8]
#ifdef MSI_ABORTS
	orr	x3, x3, #0x200000000			/* test builds: stored (for .Labort) */
#endif
#endif
4:
#ifndef HWT_RSEQ_BROKEN_COMMIT
	/* The commit: sprod, a line no other CPU touches (a plain store: the
	 * publish's stlr, on this CPU, orders the entries before PROD). */
.Lcommit:
	str	w15, [x8]
#endif
.Lpost:
	/* Out of step 1: the entries are in; step 2 publishes them from this
	 * CPU (at .Lpublish, with x10, w6 = the CPU, x7 = the ring, x8 = &PROD). */
	ldr	w6, [x4]				/* the CPU, before *prod_out */
	str	w15, [x5]
	tbnz	x3, #34, .Lnopub
	add	x7, x0, x6, lsl #HWT__RSEQ_RING_LOG2
	ldr	x8, [x7, #HWT__RSEQ_RING_PROD]
	b	.Lpublish
.Lnopub:
	mov	w0, #HWT__RSEQ_MOVED
	b	.Lout
.Lfull:
	mov	w0, #-HWT__RSEQ_EAGAIN
	b	.Lout
.Lerange:
	mov	w0, #-HWT__RSEQ_ERANGE
	b	.Lout
.Leinval_cpu:
	ldr	w6, [x10, #HWT__RSEQ_CPU_ID]
	str	w6, [x4]
.Leinval:
	mov	w0, #-HWT__RSEQ_EINVAL
.Lout:
	/* Every way out once x10 is set: clear rseq_cs (a plain store), as in
	 * src/arch/x86_64/rseq.S: a descriptor left unmapped by a dlclose()
	 * would get the process a SIGSEGV at the kernel's next look. */
	str	xzr, [x10, #HWT__RSEQ_CS]
	ret
.Lnosys:
	mov	w0, #-HWT__RSEQ_ENOSYS
	ret

	/* The signature: a brk, so that nothing can run into it. */
	.inst	HWT__RSEQ_SIG
	/* abort_ip: the kernel has cleared rseq_cs; nothing to undo (entries
	 * past sprod are not committed, ccons holds a CONS value read). */
.Labort:
#ifdef ABORTS
	/* test builds only: an exact count (ldxr/stxr, as ARMv8.0 has no LSE);
	 * x9, x13 and w16 are set again before their next use */
	.macro	count_abort counter
	adrp	x9, \counter
	add	x9, x9, :lo12:\counter
4:	ldxr	x13, [x9]
	add	x13, x13, #1
	stxr	w16, x13, [x9]
	cbnz	w16, 4b
	.endm
	count_abort ABORTS
#endif
#ifdef MSI_ABORTS
	tbz	x3, #33, .Lretry			/* after the MSIADDR store? */
	and	x3, x3, #~0x200000000
	count_abort MSI_ABORTS
#endif
	b	.Lretry
	.cfi_endproc
	.size	FN, .-FN

/*
 * hwt__rseq_publish: x0 = rings, w1 = nrings, w2 = cpu.  Step 2 of
 * hwt__rseq_insert too, which branches to .Lpublish with x10 = the rseq
 * area, w6 = the CPU, x7 = the ring, x8 = &PROD (kept across the section
 * and its restarts).
 */
	.globl	PUB
	.hidden	PUB
	.type	PUB, %function
	.p2align 4
PUB:
	.cfi_startproc
	HWT_ASM_ENTRY
	rseq_area .Lpnosys
	cmp	w2, w1
	b.hs	.Lperange
	mov	w6, w2
	add	x7, x0, x6, lsl #HWT__RSEQ_RING_LOG2
	ldr	x8, [x7, #HWT__RSEQ_RING_PROD]
.Lpublish:
	adrp	x17, .Lcs2
	add	x17, x17, :lo12:.Lcs2
	/* Step 2, the publish: [.Lstart2, .Lpost2), one store of PROD as its
	 * last instruction; only on the ring's CPU, whose sections alone move
	 * sprod: the value read is the latest, and nothing can move it on
	 * before the store without restarting this. */
.Lstart2:
#ifndef HWT_RSEQ_BROKEN_PUBOUT
	str	x17, [x10, #HWT__RSEQ_CS]
#endif
#ifndef HWT_RSEQ_BROKEN_PUBCPU
	ldr	w9, [x10, #HWT__RSEQ_CPU_ID]		/* on the ring's CPU? */
	cmp	w9, w6
	b.ne	.Lmoved
#endif
	ldr	w16, [x7, #HWT__RSEQ_RING_SPROD]
#ifdef HWT_RSEQ_BROKEN_PUBOUT
	mov	w9, #32					/* BROKEN: and a stall (the window) */
1:	yield
	subs	w9, w9, #1
	b.ne	1b
#endif
	/* R_PROD, the commit: pairs with the device's A_PROD (its acquire load
	 * of PROD before it reads the slots). */
.Lcommit2:
	stlr	w16, [x8]
.Lpost2:
	mov	w0, #0
.Lpout:
	str	xzr, [x10, #HWT__RSEQ_CS]		/* as at .Lout */
	ret
.Lmoved:
	mov	w0, #HWT__RSEQ_MOVED
	b	.Lpout
.Lperange:
	mov	w0, #-HWT__RSEQ_ERANGE
	ret
.Lpnosys:
	mov	w0, #-HWT__RSEQ_ENOSYS
	ret

	.inst	HWT__RSEQ_SIG
	/* abort_ip: start step 2 again; on another CPU it stores nothing. */
.Labort2:
#ifdef ABORTS
	count_abort ABORTS
#endif
#ifdef PUB_ABORTS
	count_abort PUB_ABORTS
#endif
	b	.Lpublish
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
	.type	ABORTS, %object
ABORTS:
	.quad	0
	.size	ABORTS, 8
#endif
#ifdef MSI_ABORTS
	.globl	MSI_ABORTS
	.hidden	MSI_ABORTS
	.type	MSI_ABORTS, %object
MSI_ABORTS:
	.quad	0
	.size	MSI_ABORTS, 8
#endif
#ifdef PUB_ABORTS
	.globl	PUB_ABORTS
	.hidden	PUB_ABORTS
	.type	PUB_ABORTS, %object
PUB_ABORTS:
	.quad	0
	.size	PUB_ABORTS, 8
#endif

	.weak	__rseq_offset
	.weak	__rseq_size
	.section .note.GNU-stack,"",%progbits
