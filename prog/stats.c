/* SPDX-License-Identifier: MIT */
#include "prog/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CMP(name, type)                                               \
	static int name(const void *a, const void *b)                 \
	{                                                             \
		type x = *(const type *)a, y = *(const type *)b;      \
		return (x > y) - (x < y);                             \
	}
CMP(cmp_u32, uint32_t)
CMP(cmp_u64, uint64_t)
CMP(cmp_dbl, double)
#undef CMP

void stat_sort_u32(uint32_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u32);
}

void stat_sort_u64(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
}

void stat_sort_dbl(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_dbl);
}

double stat_median(const double *v, size_t n)
{
	double *t, r;

	if (!n)
		return 0;
	t = malloc(n * sizeof(*t));
	if (!t)
		return NAN;
	memcpy(t, v, n * sizeof(*t));
	stat_sort_dbl(t, n);
	r = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
	free(t);
	return r;
}

#define SUMMARY(v, n, s)                              \
	do {                                          \
		memset(s, 0, sizeof(*s));             \
		if (!n)                               \
			break;                        \
		s->n = n;                             \
		s->min = v[0];                        \
		s->p50 = v[stat_rank(n, 500)];        \
		s->p90 = v[stat_rank(n, 900)];        \
		s->p99 = v[stat_rank(n, 990)];        \
		s->p999 = v[stat_rank(n, 999)];       \
		s->max = v[n - 1];                    \
	} while (0)

void stat_summary_u32(const uint32_t *sorted, size_t n, struct stat_summary *s)
{
	SUMMARY(sorted, n, s);
}

void stat_summary_u64(const uint64_t *sorted, size_t n, struct stat_summary *s)
{
	SUMMARY(sorted, n, s);
}
