/* SPDX-License-Identifier: MIT */
/* Sorting, nearest-rank percentiles and medians of samples of any count. */
#ifndef HWT_PROG_STATS_H
#define HWT_PROG_STATS_H

#include <stddef.h>
#include <stdint.h>

void stat_sort_u32(uint32_t *v, size_t n);
void stat_sort_u64(uint64_t *v, size_t n);
void stat_sort_dbl(double *v, size_t n);

/* Index of the nearest-rank pm-per-mille percentile (0..1000) of n sorted
 * values: ceil(n * pm / 1000) - 1, at least 0.  n must be > 0. */
static inline size_t stat_rank(size_t n, unsigned pm)
{
	size_t r = (n * pm + 999) / 1000;

	return r ? r - 1 : 0;
}

/* Median of v[0..n), v untouched: the middle value, or the mean of the two
 * middle values for even n; 0 for n = 0, NAN if out of memory. */
double stat_median(const double *v, size_t n);

/* Nearest-rank summary of n sorted samples (all 0 for n = 0). */
struct stat_summary {
	uint64_t n, min, p50, p90, p99, p999, max;
};
void stat_summary_u32(const uint32_t *sorted, size_t n, struct stat_summary *s);
void stat_summary_u64(const uint64_t *sorted, size_t n, struct stat_summary *s);

#endif
