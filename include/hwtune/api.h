/* SPDX-License-Identifier: MIT */
/* What every public header needs: the export marker and C++ linkage.  The
 * conventions every exported function follows (return values, NULL
 * pointers) are stated once, in <hwtune/hwtune.h>. */
#ifndef HWTUNE_API_H
#define HWTUNE_API_H

/* Exported from libhwtune.so; everything else is hidden. */
#define HWT_API __attribute__((visibility("default")))

#ifdef __cplusplus
#define HWT_BEGIN_DECLS extern "C" {
#define HWT_END_DECLS }
#else
#define HWT_BEGIN_DECLS
#define HWT_END_DECLS
#endif

#endif
