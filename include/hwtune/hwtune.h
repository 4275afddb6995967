/* SPDX-License-Identifier: MIT */
/*
 * libhwtune: an SMMUv3-style command queue with CMD_SYNC completion and a
 * per-CPU misaligned-access speed probe, in user space.
 *
 * Conventions: public names are hwt_<subsystem>_*, macros HWT_*; functions
 * return 0 (or a count) on success and a negative errno on failure; nothing
 * sets errno for the caller.
 *
 * NULL pointers: one rule for every exported function of these headers.  A
 * pointer argument that is NULL where the function needs an object makes
 *   - a function returning int (0, a count or a negative errno) return
 *     -EINVAL, having changed nothing;
 *   - a void function do nothing (destroying, freeing or filling NULL is a
 *     no-op, as free(NULL) is);
 *   - a bool function return false, hwt_smmu_dev_cache_count() 0, and a
 *     function returning a pointer NULL.
 * Arguments documented as optional ("NULL: ...", "if non-NULL") may be NULL,
 * and so may an array whose count is 0 (it is not read).  The exceptions
 * are the static inline fast paths of <hwtune/smmu.h> (hwt_smmu_cmd_set,
 * hwt_smmu_opcode, hwt_smmu_get, hwt_smmu_put, hwt_smmu_sync_build), which
 * check nothing.  Any other invalid pointer (freed, too short, another
 * library's object) is undefined behaviour, as everywhere in C.
 */
#ifndef HWTUNE_H
#define HWTUNE_H

#include "hwtune/api.h"

#define HWT_VERSION_MAJOR 0
#define HWT_VERSION_MINOR 2
#define HWT_VERSION_PATCH 0

HWT_BEGIN_DECLS

/* The library's version, "MAJOR.MINOR.PATCH" (may differ from the header's). */
HWT_API const char *hwt_version(void);

HWT_END_DECLS

#include "hwtune/cpu.h"
#include "hwtune/smmu.h"
#include "hwtune/device.h"
#include "hwtune/cmdq.h"
#include "hwtune/misaligned.h"

#endif
