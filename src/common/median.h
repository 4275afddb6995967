/* SPDX-License-Identifier: MIT */
/*
 * void hwt__sort_u64(uint64_t *v, size_t n)
 *     Sort v[0..n) ascending, in place.
 * uint64_t hwt__median_u64(uint64_t *v, size_t n)
 *     Sort v[0..n) and return v[n / 2]; n > 0.
 */
#ifndef HWT_COMMON_MEDIAN_H
#define HWT_COMMON_MEDIAN_H

#include <stddef.h>
#include <stdint.h>

void hwt__sort_u64(uint64_t *v, size_t n);
uint64_t hwt__median_u64(uint64_t *v, size_t n);

#endif
