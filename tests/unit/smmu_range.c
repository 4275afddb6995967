/* SPDX-License-Identifier: MIT */
/* SMMUv3 range helpers: the ATC_INV span and TLBI-by-range commands. */
#include "harness/harness.h"
#include "harness/cmds.h"

#include <hwtune/smmu.h>

#include <errno.h>
#include <string.h>

static void atc(uint64_t addr, uint64_t size, uint64_t want_addr, uint64_t want_size)
{
	struct hwt_smmu_cmd c;
	uint64_t dw[2];

	tst_cmd_init(&c, HWT_SMMU_OP_ATC_INV);
	ASSERT_OK(hwt_smmu_atc_inv_range(&c, addr, size));
	ASSERT_EQ_U64(c.f[HWT_SMMU_F_ADDR], want_addr);
	ASSERT_EQ_U64(c.f[HWT_SMMU_F_SIZE], want_size);
	ASSERT_OK(hwt_smmu_encode(&c, dw));
	tst_cmd_init(&c, HWT_SMMU_OP_ATC_INV); /* the unchecked form: the same */
	hwt_smmu_atc_inv_span(&c, addr, size);
	ASSERT_EQ_U64(c.f[HWT_SMMU_F_ADDR], want_addr);
	ASSERT_EQ_U64(c.f[HWT_SMMU_F_SIZE], want_size);
}

/* A span past the top of the address space: refused, and c (which held
 * a small span) covers the whole ATC all the same; the unchecked form
 * gives the whole ATC. */
static void atc_wraps(uint64_t addr, uint64_t size)
{
	struct hwt_smmu_cmd c;
	uint64_t dw[2];

	for (int checked = 0; checked < 2; checked++) {
		tst_cmd_init(&c, HWT_SMMU_OP_ATC_INV);
		hwt_smmu_cmd_set(&c, HWT_SMMU_F_ADDR, 0x7000);
		hwt_smmu_cmd_set(&c, HWT_SMMU_F_SIZE, 0);
		if (checked)
			ASSERT_EQ(hwt_smmu_atc_inv_range(&c, addr, size), -EINVAL);
		else
			hwt_smmu_atc_inv_span(&c, addr, size);
		ASSERT_EQ_U64(c.f[HWT_SMMU_F_ADDR], 0);
		ASSERT_EQ_U64(c.f[HWT_SMMU_F_SIZE], 52);
		ASSERT_OK(hwt_smmu_encode(&c, dw));
	}
}

TEST(atc_inv_span)
{
	uint64_t s = 12345;

	atc(0x1000, 0x1000, 0x1000, 0);
	atc(0x5000, 1, 0x5000, 0);
	atc(0x1000, 0x2000, 0, 2);  /* pages 1..2 -> span of 4 from 0 */
	atc(0x1fff, 2, 0, 2);       /* pages 1 and 2 */
	atc(0x8000, 0x8000, 0x8000, 3);
	atc(0xdead000, 0, 0, 52);   /* size 0: everything */
	atc(0, ~0ull, 0, 52);
	for (int n = 0; n < 20000; n++) {
		uint64_t addr = tst_rand(&s) >> (tst_rand(&s) % 64);
		uint64_t size = (tst_rand(&s) >> (tst_rand(&s) % 64)) + 1;
		uint64_t last = addr + size - 1;
		struct hwt_smmu_cmd c;
		uint64_t a, lg;

		if (last < addr) {
			atc_wraps(addr, size);
			continue;
		}
		tst_cmd_init(&c, HWT_SMMU_OP_ATC_INV);
		ASSERT_OK(hwt_smmu_atc_inv_range(&c, addr, size));
		a = c.f[HWT_SMMU_F_ADDR];
		lg = c.f[HWT_SMMU_F_SIZE];
		if (lg == 52) {
			ASSERT_EQ_U64(a, 0);
			ASSERT_GE(64 - __builtin_clzll((addr >> 12) ^ (last >> 12)), 52);
			continue;
		}
		/* aligned, covers, and half of it would not */
		ASSERT_EQ_U64(a & ((1ull << (lg + 12)) - 1), 0);
		ASSERT_TRUE(a <= addr && last - a < (1ull << (lg + 12)));
		if (lg > 0)
			ASSERT_NE((addr >> (lg - 1 + 12)), (last >> (lg - 1 + 12)));
	}
}

/* The edges of the address space: never less than asked (smmu.h's rule). */
TEST(atc_inv_span_edges)
{
	const uint64_t top = 0xfffffffffffff000ull, half = 1ull << 63;

	/* the last page, and spans that end exactly at the top */
	atc(top, 0x1000, top, 0);
	atc(~0ull, 1, top, 0);
	atc(top - 0x1000, 0x2000, top - 0x1000, 1);
	atc(half, half, half, 51);
	atc(1, ~0ull, 0, 52);
	/* spans that wrap past 2^64: refused, not clamped to the top page */
	atc_wraps(top, 0x2000);
	atc_wraps(~0ull, ~0ull);
	atc_wraps(~0ull, 2);
	atc_wraps(2, ~0ull);
	atc_wraps(half, half + 1);
	atc_wraps(0x2000, 0ull - 0x1000);
	/* exactly 2^52 pages (the whole space) and just under: the whole ATC,
	 * no smaller aligned span holds them; 2^51 aligned pages: SIZE 51 */
	atc(0, ~0ull, 0, 52);
	atc(0, 0ull - 0x1000, 0, 52);
	atc(0x1000, 0ull - 0x1000, 0, 52);
	atc(0, half, 0, 51);
	atc(half - 0x1000, 0x2000, 0, 52); /* two pages across the middle */
	/* size 0 stays "everything", whatever addr */
	atc(top, 0, 0, 52);
	atc(~0ull, 0, 0, 52);
}

/* Walk a range TLBI; return the number of commands, check contiguity. */
static unsigned tlbi_walk(uint64_t iova, uint64_t size, unsigned tg, unsigned gran, int leaf,
			  int range, uint64_t *covered)
{
	struct hwt_smmu_tlbi_range r;
	struct hwt_smmu_cmd c;
	uint64_t next = iova, dw[2];
	unsigned n = 0;

	ASSERT_EQ(hwt_smmu_tlbi_range_init(&r, iova, size, tg, gran, leaf, range), 0);
	tst_cmd_init(&c, HWT_SMMU_OP_TLBI_NH_VA);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_ASID, 7);
	while (hwt_smmu_tlbi_range_next(&r, &c) == 1) {
		uint64_t span;

		ASSERT_LT(n, 100000);
		ASSERT_OK(hwt_smmu_encode(&c, dw));
		ASSERT_EQ_U64(c.f[HWT_SMMU_F_ADDR], next);
		ASSERT_EQ(c.f[HWT_SMMU_F_LEAF], !!leaf);
		if (range) {
			ASSERT_EQ(c.f[HWT_SMMU_F_TG], (tg - 10) / 2);
			span = (c.f[HWT_SMMU_F_NUM] + 1) << (c.f[HWT_SMMU_F_SCALE] + tg);
		} else {
			ASSERT_EQ(c.f[HWT_SMMU_F_TG], 0);
			ASSERT_EQ(c.f[HWT_SMMU_F_TTL], 0);
			span = 1ull << gran;
		}
		next += span;
		n++;
	}
	ASSERT_EQ(hwt_smmu_tlbi_range_next(&r, &c), 0);
	*covered = next - iova;
	return n;
}

TEST(tlbi_range)
{
	struct hwt_smmu_tlbi_range r;
	struct hwt_smmu_cmd c;
	uint64_t cov, s = 777;

	ASSERT_EQ(hwt_smmu_tlbi_range_init(&r, 0, 0x1000, 13, 13, 1, 1), -EINVAL);
	ASSERT_EQ(hwt_smmu_tlbi_range_init(&r, 0, 0x1000, 12, 11, 1, 1), -EINVAL);
	ASSERT_EQ(hwt_smmu_tlbi_range_init(&r, 0, 0x1000, 12, 13, 1, 1), -EINVAL);
	ASSERT_EQ(hwt_smmu_tlbi_range_init(&r, 0, 0x1000, 12, 39, 1, 1), -EINVAL);
	ASSERT_EQ(hwt_smmu_tlbi_range_init(&r, 0x800, 0x1000, 12, 12, 1, 1), -EINVAL);
	ASSERT_EQ(hwt_smmu_tlbi_range_init(&r, 0, 0, 12, 12, 1, 1), -EINVAL);
	ASSERT_EQ(hwt_smmu_tlbi_range_init(&r, 0xfffffffffffff000ull, 0x2000, 12, 12, 1, 1),
		  -EINVAL);

	/* one command per page without range invalidation */
	ASSERT_EQ(tlbi_walk(0x10000, 0x3000, 12, 12, 1, 0, &cov), 3);
	ASSERT_EQ_U64(cov, 0x3000);
	/* 33 pages: 1 page (NUM 0 SCALE 0), then 32 (NUM 0 SCALE 5) */
	ASSERT_OK(hwt_smmu_tlbi_range_init(&r, 0x100000, 33 << 12, 12, 12, 1, 1));
	tst_cmd_init(&c, HWT_SMMU_OP_TLBI_NH_VA);
	ASSERT_EQ(hwt_smmu_tlbi_range_next(&r, &c), 1);
	ASSERT_EQ(c.f[HWT_SMMU_F_NUM], 0);
	ASSERT_EQ(c.f[HWT_SMMU_F_SCALE], 0);
	ASSERT_EQ(c.f[HWT_SMMU_F_TG], 1);
	ASSERT_EQ(c.f[HWT_SMMU_F_TTL], 3);
	ASSERT_EQ_U64(c.f[HWT_SMMU_F_ADDR], 0x100000);
	ASSERT_EQ(hwt_smmu_tlbi_range_next(&r, &c), 1);
	ASSERT_EQ(c.f[HWT_SMMU_F_NUM], 0);
	ASSERT_EQ(c.f[HWT_SMMU_F_SCALE], 5);
	ASSERT_EQ_U64(c.f[HWT_SMMU_F_ADDR], 0x101000);
	ASSERT_EQ(hwt_smmu_tlbi_range_next(&r, &c), 0);
	/* TTL from the leaf size: 4K page 3, 2M block 2, 1G block 1; 64K granule 3 */
	ASSERT_OK(hwt_smmu_tlbi_range_init(&r, 0, 1 << 21, 12, 21, 1, 1));
	ASSERT_EQ(r.ttl, 2);
	ASSERT_OK(hwt_smmu_tlbi_range_init(&r, 0, 1 << 30, 12, 30, 1, 1));
	ASSERT_EQ(r.ttl, 1);
	ASSERT_OK(hwt_smmu_tlbi_range_init(&r, 0, 1 << 16, 16, 16, 1, 1));
	ASSERT_EQ(r.ttl, 3);
	/* a non-leaf single page is widened to two (NUM 0 SCALE 0 is avoided) */
	ASSERT_EQ(tlbi_walk(0x4000, 0x1000, 12, 12, 0, 1, &cov), 1);
	ASSERT_EQ_U64(cov, 0x2000);
	/* the top of the address space does not wrap into a loop */
	ASSERT_EQ(tlbi_walk(0xffffffffffffe000ull, 0x2000, 12, 12, 1, 1, &cov), 1);
	ASSERT_EQ(tlbi_walk(0xffffffffffffe000ull, 0x2000, 12, 12, 1, 0, &cov), 2);

	/* the edges, the rule of smmu.h as for ATC_INV: the last page; a span
	 * that wraps past 2^64 is refused; 2^52 - 1 pages ending at the top
	 * (2^52 does not fit in size) are covered whole */
	ASSERT_EQ(tlbi_walk(0xfffffffffffff000ull, 0x1000, 12, 12, 1, 1, &cov), 1);
	ASSERT_EQ_U64(cov, 0x1000);
	ASSERT_EQ(tlbi_walk(0xfffffffffffff000ull, 0x1000, 12, 12, 1, 0, &cov), 1);
	ASSERT_EQ(hwt_smmu_tlbi_range_init(&r, 0xffffffffffff0000ull, 0x20000, 16, 16, 1, 1),
		  -EINVAL);
	ASSERT_EQ(hwt_smmu_tlbi_range_init(&r, 0x2000, 0ull - 0x1000, 12, 12, 1, 1), -EINVAL);
	ASSERT_EQ(tlbi_walk(0x1000, 0ull - 0x1000, 12, 12, 1, 1, &cov), 65543);
	ASSERT_EQ_U64(cov, 0ull - 0x1000);

	/* 2^40 pages: SCALE tops out at 31, 32 units of 2^31 pages each */
	ASSERT_EQ(tlbi_walk(0, 1ull << 52, 12, 12, 1, 1, &cov), 16);
	ASSERT_EQ_U64(cov, 1ull << 52);
	ASSERT_EQ(tlbi_walk(0, (1ull << 52) + (3 << 12), 12, 12, 1, 1, &cov), 17);
	ASSERT_EQ_U64(cov, (1ull << 52) + (3 << 12));

	for (int n = 0; n < 3000; n++) {
		static const unsigned tgs[] = { 12, 14, 16 };
		unsigned tg = tgs[tst_rand(&s) % 3];
		uint64_t pages = (tst_rand(&s) >> (tst_rand(&s) % 64 | 20)) + 1;
		uint64_t iova = (tst_rand(&s) >> 20) << tg;
		int leaf = (int)(tst_rand(&s) & 1);
		unsigned k = tlbi_walk(iova, pages << tg, tg, tg, leaf, 1, &cov);

		ASSERT_LE(k, 64 + (pages >> 36)); /* <= one per set bit, or 2^36 pages each */
		if (leaf || (pages & 31) != 1)
			ASSERT_EQ_U64(cov, pages << tg);
		else
			ASSERT_EQ_U64(cov, (pages + 1) << tg);
	}
}
