/* SPDX-License-Identifier: MIT */
/* Address-range helpers for ATC_INV and range TLBI (notes §1.11). */
#include <hwtune/smmu.h>

#include <errno.h>
#include <stdbool.h>

#define ATC_GRAIN 12
#define ATC_SIZE_ALL 52
#define TLBI_NUM_MAX 31u /* NUM is 5 bits: NUM + 1 units */
#define TLBI_SCALE_MAX 31u

int hwt_smmu_atc_inv_range(struct hwt_smmu_cmd *c, uint64_t addr, uint64_t size)
{
	uint64_t last = addr + size - 1, first_pg = addr >> ATC_GRAIN, diff;
	bool wraps = size != 0 && last < addr;
	unsigned log2 = 0;

	if (!c)
		return -EINVAL;
	diff = first_pg ^ (last >> ATC_GRAIN);
	if (diff)
		log2 = 64u - (unsigned)__builtin_clzll(diff);
	if (size == 0 || wraps || log2 >= ATC_SIZE_ALL) {
		/* past the top: refused as by tlbi_range_init, but c still
		 * covers everything (all that atc_inv_span can do) */
		hwt_smmu_cmd_set(c, HWT_SMMU_F_ADDR, 0);
		hwt_smmu_cmd_set(c, HWT_SMMU_F_SIZE, ATC_SIZE_ALL);
		return wraps ? -EINVAL : 0;
	}
	hwt_smmu_cmd_set(c, HWT_SMMU_F_ADDR, (first_pg & ~((1ull << log2) - 1)) << ATC_GRAIN);
	hwt_smmu_cmd_set(c, HWT_SMMU_F_SIZE, log2);
	return 0;
}

void hwt_smmu_atc_inv_span(struct hwt_smmu_cmd *c, uint64_t addr, uint64_t size)
{
	(void)hwt_smmu_atc_inv_range(c, addr, size); /* the error leaves the whole ATC */
}

int hwt_smmu_tlbi_range_init(struct hwt_smmu_tlbi_range *r, uint64_t iova, uint64_t size,
			     unsigned tg_log2, unsigned granule_log2, int leaf, int range)
{
	unsigned levels;

	if (!r)
		return -EINVAL;
	if (tg_log2 != 12 && tg_log2 != 14 && tg_log2 != 16)
		return -EINVAL;
	if (granule_log2 < tg_log2 || (granule_log2 - tg_log2) % (tg_log2 - 3))
		return -EINVAL;
	levels = (granule_log2 - 3) / (tg_log2 - 3); /* 1: page, 2, 3: blocks */
	if (levels > 3 || size == 0 || iova + size - 1 < iova ||
	    ((iova | size) & ((1ull << tg_log2) - 1)))
		return -EINVAL;
	r->iova = iova;
	r->end = iova + size - 1; /* inclusive: iova + size may wrap to 0 */
	r->tg = (uint8_t)tg_log2;
	r->leaf = !!leaf;
	r->done = 0;
	r->range = !!range;
	r->ttl = (uint8_t)(leaf ? 4 - levels : 0);
	r->step = 1ull << granule_log2;
	r->pages = size >> tg_log2;
	/* NUM = 0, SCALE = 0 would be a one-page non-leaf range: cover one more. */
	if (range && !leaf && (r->pages & TLBI_NUM_MAX) == 1)
		r->pages++;
	return 0;
}

int hwt_smmu_tlbi_range_next(struct hwt_smmu_tlbi_range *r, struct hwt_smmu_cmd *c)
{
	uint64_t span;

	if (!r || !c)
		return -EINVAL;
	if (r->done)
		return 0;
	hwt_smmu_cmd_set(c, HWT_SMMU_F_ADDR, r->iova);
	hwt_smmu_cmd_set(c, HWT_SMMU_F_LEAF, r->leaf);
	if (r->range) {
		unsigned scale = (unsigned)__builtin_ctzll(r->pages);
		uint64_t num;

		if (scale > TLBI_SCALE_MAX) {
			/* SCALE is 5 bits: take the largest units, up to 32 */
			scale = TLBI_SCALE_MAX;
			num = r->pages >> scale;
			if (num > TLBI_NUM_MAX + 1)
				num = TLBI_NUM_MAX + 1;
		} else {
			num = (r->pages >> scale) & TLBI_NUM_MAX;
		}
		hwt_smmu_cmd_set(c, HWT_SMMU_F_NUM, num - 1);
		hwt_smmu_cmd_set(c, HWT_SMMU_F_SCALE, scale);
		hwt_smmu_cmd_set(c, HWT_SMMU_F_TG, (r->tg - 10u) / 2);
		hwt_smmu_cmd_set(c, HWT_SMMU_F_TTL, r->ttl);
		r->pages -= num << scale;
		span = num << (scale + r->tg);
	} else {
		hwt_smmu_cmd_set(c, HWT_SMMU_F_NUM, 0);
		hwt_smmu_cmd_set(c, HWT_SMMU_F_SCALE, 0);
		hwt_smmu_cmd_set(c, HWT_SMMU_F_TG, 0);
		hwt_smmu_cmd_set(c, HWT_SMMU_F_TTL, 0);
		span = r->step;
	}
	/* the command that reaches the end is the last (iova may wrap to 0) */
	r->done = span > r->end - r->iova || (r->range && r->pages == 0);
	r->iova += span;
	return 1;
}
