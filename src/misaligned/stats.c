/* SPDX-License-Identifier: MIT */
/* Sample statistics for the probe: running minimum, stability, median. */
#include "misaligned/misaligned.h"

#include <stdlib.h>

void hwt__mintrack_init(struct hwt__mintrack *t)
{
	*t = (struct hwt__mintrack){ UINT64_MAX, 0, 0 };
}

bool hwt__mintrack_add(struct hwt__mintrack *t, uint64_t v)
{
	bool better = t->n == 0 || v < t->min - (t->min >> HWT__MIN_IMPROVE_SHIFT);

	t->n++;
	if (v < t->min)
		t->min = v;
	t->since = better ? 0 : t->since + 1;
	return better;
}

bool hwt__mintrack_stable(const struct hwt__mintrack *a, const struct hwt__mintrack *b)
{
	return a->n >= HWT__STABLE_MIN_SAMPLES && b->n >= HWT__STABLE_MIN_SAMPLES &&
	       a->since >= HWT__STABLE_RUN && b->since >= HWT__STABLE_RUN;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

uint32_t hwt__median_u32(uint32_t *v, size_t n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u32);
	return v[(n - 1) / 2];
}
