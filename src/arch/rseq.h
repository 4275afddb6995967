/* SPDX-License-Identifier: MIT */
/*
 * The per-CPU queue insertion as a restartable sequence (rseq): no locked
 * instruction, no fence (docs/percpu-queues.md, sections 2 and 5).
 *
 *   struct hwt__rseq_ring       one per queue, i.e. per possible CPU (64 bytes):
 *     prod    the queue's PROD word (WRP|IDX only), the commit target: a plain
 *             store (x86_64) or stlr (aarch64); only sections on this ring's CPU
 *             write it, so nothing else may (one path per queue object)
 *     cons    the queue's CONS word (device-written; ERR in bits 30:24, masked
 *             off): a plain load (x86_64) or ldar (aarch64)
 *     slots   2^shift entries of 16 bytes
 *     shift   log2 entries, 1..19
 *     ccons   cached CONS (WRP|IDX), read and written only inside sections on
 *             this ring's CPU; the owner sets it to CONS at setup
 *     iova    the device's address of slots (the MSI target of a CMD_SYNC
 *             that aims at its own slot, HWT__RSEQ_K_SYNC_MSI)
 *
 *   const char *hwt__rseq_unavailable(void)
 *             NULL when hwt__rseq_insert() can be used in this process, else why
 *             not: "rseq not registered (__rseq_size 0)", "glibc without
 *             __rseq_size (older than 2.35, or not glibc)", "no rseq assembly for
 *             this architecture", ...  The same answer for every thread (glibc
 *             registers all threads or none).
 *
 *   int hwt__rseq_insert(rings, nrings, ents, k, &cpu, &prod)
 *             copies k entries (16 bytes each, at ents) into rings[cpu], where cpu
 *             is the CPU the thread runs on, and commits PROD with one store, the
 *             section's last instruction.  Preemption, migration or a signal
 *             before the commit restarts it from the CPU read (maybe on another
 *             ring).  k | HWT__RSEQ_K_SYNC_MSI: the last entry is a CMD_SYNC
 *             whose MSI goes to its own slot, known only inside the section:
 *             after the copy and before the commit, the section stores that
 *             slot's IOVA (iova + 16 * idx) into the entry's second dword,
 *             which the caller built with MSIADDR 0 (a CMD_SYNC's dw1 holds
 *             MSIADDR[51:2] and nothing else); a restart stores it again for
 *             the slot it then fills.  Returns
 *               0        *cpu = the ring used, *prod = the PROD value stored
 *               -EAGAIN  *cpu: rings[*cpu] has no room for k, after re-reading
 *                        CONS once; the caller waits outside and calls again
 *                        (maybe on another CPU then)
 *               -ERANGE  *cpu >= nrings (*cpu is set)
 *               -EINVAL  k (without the flag) == 0 or > 2^shift of the ring tried
 *                        (*cpu is set)
 *               -ENOSYS  rseq not usable (hwt__rseq_unavailable() says why);
 *                        also the stub of an architecture without assembly
 *             *prod is written only on 0.  The function takes no lock, makes no
 *             system call, and has no locked instruction and no fence.  It
 *             leaves the thread's rseq_cs 0 on every return (one plain store):
 *             a descriptor address left there would outlive a dlclose() that
 *             unmaps the library, and at the thread's next preemption,
 *             migration or signal the kernel, failing to read the descriptor,
 *             would kill the process with SIGSEGV (kernel/rseq.c, the error
 *             path of rseq_handle_notify_resume).
 *
 * Memory order (labels as in src/bus/regs.h): R_PROD, the commit, pairs with
 * the device's A_PROD (its acquire load of PROD before it reads the entries);
 * A_CONS, the load of CONS when ccons shows no room, pairs with the device's
 * R_CONS (its release store of CONS after it has read the slots), so that the
 * section never overwrites a slot the device still reads.  x86_64 stores and
 * loads are release and acquire already (TSO); aarch64 uses stlr and ldar.
 *
 * The assembly is src/arch/x86_64/rseq.S and src/arch/aarch64/rseq.S; both
 * include this header for the offsets below (checked against the C layout at
 * the end).  src/arch/rseq.c detects rseq and holds the stub.
 */
#ifndef HWT_ARCH_RSEQ_H
#define HWT_ARCH_RSEQ_H

/* struct hwt__rseq_ring, as the assembly sees it. */
#define HWT__RSEQ_RING_PROD 0
#define HWT__RSEQ_RING_CONS 8
#define HWT__RSEQ_RING_SLOTS 16
#define HWT__RSEQ_RING_SHIFT 24
#define HWT__RSEQ_RING_CCONS 28
#define HWT__RSEQ_RING_IOVA 32
#define HWT__RSEQ_RING_LOG2 6 /* sizeof: 64 */

/* k's flag: the last entry is a CMD_SYNC whose MSIADDR is its own slot
 * (bit 31: k itself is at most 2^19).  The assembly tests bit
 * HWT__RSEQ_K_SYNC_MSI_BIT. */
#define HWT__RSEQ_K_SYNC_MSI_BIT 31
#define HWT__RSEQ_K_SYNC_MSI 0x80000000

/* The kernel's struct rseq (linux/rseq.h), at __rseq_offset from the thread
 * pointer: cpu_id (u32) and rseq_cs (u64, the descriptor's address). */
#define HWT__RSEQ_CPU_ID 4
#define HWT__RSEQ_CS 8
#define HWT__RSEQ_MIN_SIZE 16 /* the area must reach the end of rseq_cs */

/* The signature glibc registers (RSEQ_SIG in <bits/rseq.h>); the 4 bytes
 * before an abort handler must hold it. */
#if defined(__x86_64__)
#define HWT__RSEQ_SIG 0x53053053
#elif defined(__aarch64__)
#define HWT__RSEQ_SIG 0xd428bc00 /* brk #0x45e0, little-endian */
#endif

/* Error numbers, for the assembly (checked against <errno.h> below). */
#define HWT__RSEQ_EAGAIN 11
#define HWT__RSEQ_EINVAL 22
#define HWT__RSEQ_ERANGE 34
#define HWT__RSEQ_ENOSYS 38

#ifndef __ASSEMBLER__
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

struct hwt__rseq_ring {
	uint32_t *prod;
	const uint32_t *cons;
	uint64_t *slots;
	uint32_t shift;
	uint32_t ccons;
	uint64_t iova;
} __attribute__((aligned(64)));

const char *hwt__rseq_unavailable(void);
/* What the command queue uses: hwt__rseq_unavailable(), or why the queue
 * holds the rseq path back on this architecture (rseq.c). */
const char *hwt__rseq_queue_unavailable(void);
int hwt__rseq_insert(struct hwt__rseq_ring *rings, unsigned nrings, const void *ents, uint32_t k,
		     unsigned *cpu_out, uint32_t *prod_out);

_Static_assert(offsetof(struct hwt__rseq_ring, prod) == HWT__RSEQ_RING_PROD, "asm offset");
_Static_assert(offsetof(struct hwt__rseq_ring, cons) == HWT__RSEQ_RING_CONS, "asm offset");
_Static_assert(offsetof(struct hwt__rseq_ring, slots) == HWT__RSEQ_RING_SLOTS, "asm offset");
_Static_assert(offsetof(struct hwt__rseq_ring, shift) == HWT__RSEQ_RING_SHIFT, "asm offset");
_Static_assert(offsetof(struct hwt__rseq_ring, ccons) == HWT__RSEQ_RING_CCONS, "asm offset");
_Static_assert(offsetof(struct hwt__rseq_ring, iova) == HWT__RSEQ_RING_IOVA, "asm offset");
_Static_assert(HWT__RSEQ_K_SYNC_MSI == 1u << HWT__RSEQ_K_SYNC_MSI_BIT, "asm flag");
_Static_assert(sizeof(struct hwt__rseq_ring) == 1u << HWT__RSEQ_RING_LOG2, "asm ring size");
_Static_assert(EAGAIN == HWT__RSEQ_EAGAIN && EINVAL == HWT__RSEQ_EINVAL &&
		       ERANGE == HWT__RSEQ_ERANGE && ENOSYS == HWT__RSEQ_ENOSYS,
	       "asm errno values");
#endif

#endif
