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

#endif
