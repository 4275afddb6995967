/* SPDX-License-Identifier: MIT */
/*
 * The per-CPU queue insertion as a restartable sequence (rseq): no locked
 * instruction (docs/percpu-queues.md, sections 2 and 5).
 *
 *   struct hwt__rseq_ring       one per queue, i.e. per possible CPU (64 bytes):
 *     prod    the queue's PROD word (WRP|IDX only), the device's: only the
 *             publish section stores it (a plain store on x86_64, stlr on
 *             aarch64), and never loads it: the device polls PROD while idle,
 *             so a load would miss (it takes the line back)
 *     cons    the queue's CONS word (device-written; ERR in bits 30:24, masked
 *             off): a plain load (x86_64) or ldar (aarch64)
 *     slots   2^shift entries of 16 bytes
 *     shift   log2 entries, 1..19
 *     ccons   cached CONS (WRP|IDX), read and written only inside sections on
 *             this ring's CPU; the owner sets it to CONS at setup
 *     iova    the device's address of slots (the MSI target of a CMD_SYNC
 *             that aims at its own slot, HWT__RSEQ_K_SYNC_MSI)
 *     sprod   the private producer word (WRP|IDX): the end of what sections
 *             on this ring's CPU have written, published or not; written
 *             only inside sections on that CPU (the space wait reads it), so
 *             its line stays
 *             there; the owner sets it to PROD at setup.  PROD <= sprod, and
 *             every entry below sprod is written.
 *
 *   const char *hwt__rseq_unavailable(void)
 *             NULL when hwt__rseq_insert() can be used in this process, else why
 *             not: "rseq not registered (__rseq_size 0)", "glibc without
 *             __rseq_size (older than 2.35, or not glibc)", "no rseq assembly for
 *             this architecture", ...  The same answer for every thread (glibc
 *             registers all threads or none).
 *
 *   int hwt__rseq_insert(rings, nrings, ents, k, &cpu, &prod)
 *             two restartable sequences (docs/percpu-queues.md, section 8;
 *             the model's SPROD=2, tests/model/percpu.md):
 *             1. the insertion: copies k entries (16 bytes each, at ents) into
 *                rings[cpu], where cpu is the CPU the thread runs on, and
 *                commits sprod with one store, its last instruction.
 *                Preemption, migration or a signal before the commit
 *                restarts it from the CPU read (maybe on another ring).
 *             2. the publish: if the thread still runs on that CPU, reads
 *                sprod and commits PROD = sprod with one store, its last
 *                instruction; an abort restarts step 2 only.  Publishing
 *                the latest sprod, never the call's own end, keeps PROD
 *                from moving back: another thread of this CPU may have
 *                inserted (and published) behind this call in between.
 *             k | HWT__RSEQ_K_SYNC_MSI: the last entry is a CMD_SYNC
 *             whose MSI goes to its own slot, known only inside the section:
 *             after the copy and before the commit, the section stores that
 *             slot's IOVA (iova + 16 * idx) into the entry's second dword,
 *             which the caller built with MSIADDR 0 (a CMD_SYNC's dw1 holds
 *             MSIADDR[51:2] and nothing else); a restart stores it again for
 *             the slot it then fills.  k | HWT__RSEQ_K_NT: the copy's
 *             stores non-temporal (x86_64; see the flag).
 *             k | HWT__RSEQ_K_NO_PUBLISH: step 1 only, as if the thread
 *             had moved (tests make the moved case with it).  Returns
 *               0        *cpu = the ring used, *prod = the call's end (the
 *                        sprod value step 1 stored); PROD is at or past it
 *               HWT__RSEQ_MOVED (positive)  inserted as for 0, not published:
 *                        the thread no longer runs on *cpu (or NO_PUBLISH);
 *                        the caller must get PROD past its end with
 *                        hwt__rseq_publish(rings, nrings, *cpu) run on CPU
 *                        *cpu (pinned there), else the device never sees
 *                        the entries unless another call on that CPU
 *                        publishes them
 *               -EAGAIN  *cpu: rings[*cpu] has no room for k, after re-reading
 *                        CONS once; the caller waits outside and calls again
 *                        (maybe on another CPU then)
 *               -ERANGE  *cpu >= nrings (*cpu is set)
 *               -EINVAL  k (without the flags) == 0 or > 2^shift of the ring
 *                        tried (*cpu is set)
 *               -ENOSYS  rseq not usable (hwt__rseq_unavailable() says why);
 *                        also the stub of an architecture without assembly
 *             *prod is written only on 0 and HWT__RSEQ_MOVED.  The function
 *             takes no lock, makes no system call, and has no locked
 *             instruction; its one fence is x86_64's sfence after a
 *             non-temporal copy (HWT__RSEQ_K_NT).  It leaves the thread's
 *             rseq_cs 0 on every return (one plain store): a descriptor address left there
 *             would outlive a dlclose() that unmaps the library, and at the
 *             thread's next preemption, migration or signal the kernel,
 *             failing to read the descriptor, would kill the process with
 *             SIGSEGV (kernel/rseq.c, the error path of
 *             rseq_handle_notify_resume).
 *
 *   int hwt__rseq_publish(rings, nrings, cpu)
 *             step 2 alone, for rings[cpu]: 0 once PROD = sprod was stored
 *             on CPU cpu; HWT__RSEQ_MOVED if the thread does not run on CPU
 *             cpu (nothing stored: a store from another CPU could move PROD
 *             back, the model's z1 and z2); -ERANGE, -ENOSYS as above.
 *
 * Memory order (labels as in src/bus/regs.h): R_PROD, the publish's commit,
 * pairs with the device's A_PROD (its acquire load of PROD before it reads the entries);
 * A_CONS, the load of CONS when ccons shows no room, pairs with the device's
 * R_CONS (its release store of CONS after it has read the slots), so that the
 * section never overwrites a slot the device still reads.  x86_64 stores and
 * loads are release and acquire already (TSO); aarch64 uses stlr and ldar.
 * sprod needs no order of its own: it is read and written on one CPU only,
 * and the entries a publish covers were written on that CPU before it (by
 * this thread, or by one switched out of it: a context switch orders them),
 * so the publish's release store orders them for the device.  On x86_64
 * HWT__RSEQ_K_NT stores them with movntdq, which TSO does not order: an
 * sfence follows the copy, before the MSIADDR store and the commit (a
 * context switch, an interrupt, drains the write-combining buffers of a
 * section that a restart cut short).
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
#define HWT__RSEQ_RING_SPROD 40
#define HWT__RSEQ_RING_LOG2 6 /* sizeof: 64 */

/* k's flag: the last entry is a CMD_SYNC whose MSIADDR is its own slot
 * (bit 31: k itself is at most 2^19).  The assembly tests bit
 * HWT__RSEQ_K_SYNC_MSI_BIT. */
#define HWT__RSEQ_K_SYNC_MSI_BIT 31
#define HWT__RSEQ_K_SYNC_MSI 0x80000000
/* k's flag: step 1 only (returns HWT__RSEQ_MOVED). */
#define HWT__RSEQ_K_NO_PUBLISH_BIT 30
#define HWT__RSEQ_K_NO_PUBLISH 0x40000000

/* k's flag: store the entries non-temporally (x86_64: movntdq, then an
 * sfence before the commit; aarch64 ignores it: HWT__RSEQ_HAVE_NT 0).  A
 * normal store to a line the device has read must first take the line back
 * from the device's cache (one round trip per 4 entries); non-temporal
 * stores take no line, and the device reads them from memory.  Which costs
 * less depends on where the two threads run (bench_cmdq, flow at 64
 * entries, one 2-CPU EPYC guest: +23% with a ~300 ns round trip between
 * its CPUs, -50% with a ~100 ns one; at 32 entries no gain, at 8 a 40% loss;
 * a CMD_SYNC awaited after 64 entries lost 16%: docs/benchmarks-hand.md).
 * So the library times both for calls of HWT__RSEQ_NT_MIN entries or more
 * that nobody waits on (no CMD_SYNC) and keeps the faster (src/cmdq/percpu.c). */
#define HWT__RSEQ_K_NT_BIT 29
#define HWT__RSEQ_K_NT 0x20000000
#define HWT__RSEQ_NT_MIN 64
#ifdef __x86_64__
#define HWT__RSEQ_HAVE_NT 1
#else
#define HWT__RSEQ_HAVE_NT 0
#endif

/* Returned when the entries are in but not published (not an errno). */
#define HWT__RSEQ_MOVED 1

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

#ifdef __ASSEMBLER__
/* A struct rseq_cs (32-byte aligned by the caller): version 0, flags 0
 * (restart on preemption, migration and signals), the section [start,
 * end), its abort handler. */
#define HWT__RSEQ_CS_DESC(start, end, abort) \
	.long 0; .long 0; .quad start; .quad end - start; .quad abort
#else
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
	uint32_t sprod;
} __attribute__((aligned(64)));

const char *hwt__rseq_unavailable(void);
typedef int hwt__rseq_insert_fn(struct hwt__rseq_ring *rings, unsigned nrings, const void *ents,
				uint32_t k, unsigned *cpu_out, uint32_t *prod_out);
typedef int hwt__rseq_publish_fn(struct hwt__rseq_ring *rings, unsigned nrings, unsigned cpu);
hwt__rseq_insert_fn hwt__rseq_insert;
hwt__rseq_publish_fn hwt__rseq_publish;

_Static_assert(offsetof(struct hwt__rseq_ring, prod) == HWT__RSEQ_RING_PROD, "asm offset");
_Static_assert(offsetof(struct hwt__rseq_ring, cons) == HWT__RSEQ_RING_CONS, "asm offset");
_Static_assert(offsetof(struct hwt__rseq_ring, slots) == HWT__RSEQ_RING_SLOTS, "asm offset");
_Static_assert(offsetof(struct hwt__rseq_ring, shift) == HWT__RSEQ_RING_SHIFT, "asm offset");
_Static_assert(offsetof(struct hwt__rseq_ring, ccons) == HWT__RSEQ_RING_CCONS, "asm offset");
_Static_assert(offsetof(struct hwt__rseq_ring, iova) == HWT__RSEQ_RING_IOVA, "asm offset");
_Static_assert(offsetof(struct hwt__rseq_ring, sprod) == HWT__RSEQ_RING_SPROD, "asm offset");
_Static_assert(HWT__RSEQ_K_SYNC_MSI == 1u << HWT__RSEQ_K_SYNC_MSI_BIT, "asm flag");
_Static_assert(HWT__RSEQ_K_NT == 1u << HWT__RSEQ_K_NT_BIT, "asm flag");
_Static_assert(HWT__RSEQ_K_NO_PUBLISH == 1u << HWT__RSEQ_K_NO_PUBLISH_BIT, "asm flag");
_Static_assert(sizeof(struct hwt__rseq_ring) == 1u << HWT__RSEQ_RING_LOG2, "asm ring size");
_Static_assert(EAGAIN == HWT__RSEQ_EAGAIN && EINVAL == HWT__RSEQ_EINVAL &&
		       ERANGE == HWT__RSEQ_ERANGE && ENOSYS == HWT__RSEQ_ENOSYS,
	       "asm errno values");
#endif

#endif
