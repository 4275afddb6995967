/* SPDX-License-Identifier: MIT */
/*
 * The heavy side of an asymmetric Dekker handshake: membarrier(2)
 * PRIVATE_EXPEDITED makes every running thread of the process execute a full
 * memory barrier, so the light side (a store, a compiler barrier, a load)
 * needs no fence of its own.  Where the kernel lacks it, both sides use
 * seq_cst instead (the caller decides once per object, see bus/regs.h).
 */
#ifndef HWT_COMMON_MEMBARRIER_H
#define HWT_COMMON_MEMBARRIER_H

#include <linux/membarrier.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Register the process once; true if expedited membarriers work. */
bool hwt__membarrier_init(void);

/* A full barrier on every running thread of the process (threads not
 * running passed one when they were switched out), and on the caller (the
 * kernel puts one on each side of the call; the signal fences keep the
 * compiler from moving accesses across it).  False if the call failed: then
 * no barrier was made (ENOMEM, or a seccomp filter installed since). */
static inline bool hwt__membarrier(void)
{
	long r;

	atomic_signal_fence(memory_order_seq_cst);
	r = syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	atomic_signal_fence(memory_order_seq_cst);
	return r == 0;
}

/*
 * The store of a symmetric Dekker handshake (a seq_cst store that a later
 * seq_cst load of another word must not pass), made as an exchange.  C11
 * and ARMv8 order such a store (stlr) before the load (ldar) as they are,
 * but QEMU's TCG on x86_64 hosts does not: there stlr is a fence and then
 * a plain host store, which the next load may pass, while a store-exclusive
 * or swp is a locked host instruction, which drains the store buffer.  A
 * store-buffering litmus test built for aarch64 saw both loads return the
 * old value in 3,738 of 2,000,000 rounds under qemu-aarch64 7.2 with
 * seq_cst stores, and in none with exchanges; with one side an exchange and
 * the other a store, still in some: both halves of a pair must be an
 * exchange or another RMW.  On x86_64 this is the xchg that a seq_cst
 * store compiles to anyway.
 */
static inline void hwt__dekker_store(_Atomic uint32_t *p, uint32_t v)
{
	(void)atomic_exchange_explicit(p, v, memory_order_seq_cst);
}

#endif
