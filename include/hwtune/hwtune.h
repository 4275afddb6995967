/* SPDX-License-Identifier: MIT */
/*
 * libhwtune: an SMMUv3-style command queue with CMD_SYNC completion and a
 * per-CPU misaligned-access speed probe, in user space.
 *
 * Conventions: public names are hwt_<subsystem>_*, macros HWT_*; functions
 * return 0 (or a count) on success and a negative errno on failure; nothing
 * sets errno for the caller.
 */
#ifndef HWTUNE_H
#define HWTUNE_H

#include "hwtune/api.h"

#define HWT_VERSION_MAJOR 0
#define HWT_VERSION_MINOR 1
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
