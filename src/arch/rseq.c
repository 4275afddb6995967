/* SPDX-License-Identifier: MIT */
/*
 * Whether the rseq insertion (src/arch/rseq.h) can run in this process, and
 * its stub where there is no assembly for it.
 */
#include "arch/rseq.h"

#include <errno.h>
#include <stddef.h>

#if (defined(__x86_64__) || defined(__aarch64__)) && !defined(HWT_ARCH_GENERIC)
#define HWT_RSEQ_ASM 1
#else
#define HWT_RSEQ_ASM 0
#endif

#if defined(__has_include)
#if __has_include(<linux/rseq.h>)
#include <linux/rseq.h>
_Static_assert(offsetof(struct rseq, cpu_id) == HWT__RSEQ_CPU_ID, "struct rseq layout");
_Static_assert(offsetof(struct rseq, rseq_cs) == HWT__RSEQ_CS, "struct rseq layout");
_Static_assert(offsetof(struct rseq_cs, start_ip) == 8 && offsetof(struct rseq_cs, abort_ip) == 24,
	       "struct rseq_cs layout");
#endif
#if __has_include(<sys/rseq.h>) && HWT_RSEQ_ASM
/* The assembly's signature is glibc's, which glibc registered. */
#include <sys/rseq.h>
_Static_assert(RSEQ_SIG == HWT__RSEQ_SIG, "RSEQ_SIG");
#endif
#endif

#if HWT_RSEQ_ASM
/*
 * glibc >= 2.35 exports these (<sys/rseq.h>); weak, so that an older glibc
 * (or another libc) still links and runs the shared path.  The assembly
 * reads them the same way, and returns -ENOSYS on the same conditions.
 */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));

const char *hwt__rseq_unavailable(void)
{
	if (&__rseq_size == NULL || &__rseq_offset == NULL)
		return "glibc without __rseq_size (older than 2.35, or not glibc)";
	if (__rseq_size == 0)
		return "rseq not registered (__rseq_size 0: GLIBC_TUNABLES=glibc.pthread.rseq=0, "
		       "an emulator, seccomp or a kernel before 4.18)";
	if (__rseq_size < HWT__RSEQ_MIN_SIZE)
		return "rseq area too small (__rseq_size below 16)";
	return NULL;
}
#else
const char *hwt__rseq_unavailable(void)
{
#if defined(HWT_ARCH_GENERIC)
	return "no rseq assembly in this build (the generic arch layer)";
#else
	return "no rseq assembly for this architecture";
#endif
}

int hwt__rseq_insert(struct hwt__rseq_ring *rings, unsigned nrings, const void *ents, uint32_t k,
		     unsigned *cpu_out, uint32_t *prod_out)
{
	(void)rings, (void)nrings, (void)ents, (void)k, (void)cpu_out, (void)prod_out;
	return -ENOSYS;
}

int hwt__rseq_publish(struct hwt__rseq_ring *rings, unsigned nrings, unsigned cpu)
{
	(void)rings, (void)nrings, (void)cpu;
	return -ENOSYS;
}
#endif
