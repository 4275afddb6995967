/* SPDX-License-Identifier: MIT */
/* The cache-line size that hot fields are kept apart by, and allocation of
 * objects made of such lines. */
#ifndef HWT_COMMON_CACHELINE_H
#define HWT_COMMON_CACHELINE_H

#include <stdlib.h>
#include <string.h>

/* 64 bytes: the coherence granule of the x86_64, Arm Neoverse/Cortex and
 * RISC-V cores we run on (a 128-byte part only shares a line more often). */
#define HWT__CACHELINE 64

/* Zeroed memory for an object of `size` bytes, aligned to a line and
 * rounded up to whole lines; NULL if out of memory.  Release with free(). */
static inline void *hwt__zalloc_lines(size_t size)
{
	size_t sz = (size + HWT__CACHELINE - 1) & ~(size_t)(HWT__CACHELINE - 1);
	void *p = aligned_alloc(HWT__CACHELINE, sz);

	if (p)
		memset(p, 0, sz);
	return p;
}

#endif
