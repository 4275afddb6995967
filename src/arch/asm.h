/* SPDX-License-Identifier: MIT */
/*
 * For the library's assembly (src/arch/<arch>/rseq.S, copy.S): HWT_ASM_ENTRY, the landing
 * pad each global function starts with (endbr64 on x86_64, bti c on
 * aarch64: a no-op on CPUs without CET IBT or BTI), and the GNU property note
 * that says the object has them.  The linker ANDs these notes over all the
 * objects of libhwtune.so (or a program): one object without the note turns
 * IBT/SHSTK (x86_64) or BTI (aarch64) off for the whole library, however the
 * C objects were built (-fcf-protection, -mbranch-protection=standard).  The
 * note is emitted whatever the flags: with C objects built without those
 * features the result has no note anyway.
 *
 * x86_64: IBT and SHSTK (calls and returns pair up; the rseq abort handler is
 * reached by the kernel setting the instruction pointer, not by an indirect
 * branch).  aarch64: BTI and PAC (the functions are leaves that never save
 * x30).
 */
#ifndef HWT_ARCH_ASM_H
#define HWT_ARCH_ASM_H
#ifdef __ASSEMBLER__

#if defined(__x86_64__)
#define HWT_ASM_ENTRY endbr64
#define HWT__ASM_PROP_TYPE 0xc0000002 /* GNU_PROPERTY_X86_FEATURE_1_AND */
#define HWT__ASM_PROP_BITS 3          /* IBT | SHSTK */
#elif defined(__aarch64__)
#define HWT_ASM_ENTRY bti c
#define HWT__ASM_PROP_TYPE 0xc0000000 /* GNU_PROPERTY_AARCH64_FEATURE_1_AND */
#define HWT__ASM_PROP_BITS 3          /* BTI | PAC */
#else
#define HWT_ASM_ENTRY
#endif

#ifdef HWT__ASM_PROP_TYPE
	.pushsection .note.gnu.property, "a"
	.p2align 3
	.long	4			/* name size */
	.long	16			/* descriptor size */
	.long	5			/* NT_GNU_PROPERTY_TYPE_0 */
	.asciz	"GNU"
	.long	HWT__ASM_PROP_TYPE
	.long	4			/* data size */
	.long	HWT__ASM_PROP_BITS
	.p2align 3
	.popsection
#endif

#endif
#endif
