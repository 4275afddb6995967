/* SPDX-License-Identifier: MIT */
/*
 * The software SMMU's cache models: the direct API, and every invalidation
 * command (CFGI, TLBI NH/EL2/S2/NSNH, ATC_INV) dropping exactly the entries
 * it covers once its CMD_SYNC completed.
 */
#include "harness/harness.h"
#include "harness/cmds.h"
#include "harness/tq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- cache models ----------------------------------------------------------- */

TEST(cache_model_api)
{
	struct hwt_smmu_dev_config cfg;
	struct hwt_smmu_dev *dev;
	struct hwt_smmu_tlb_entry e = { .kind = HWT_SMMU_TLB_NH, .vmid = 1, .asid = 2,
					.addr = 0x200000, .size_log2 = 21 };

	hwt_smmu_dev_config_default(&cfg);
	ASSERT_OK(hwt_smmu_dev_create(&dev, &cfg));
	ASSERT_OK(hwt_smmu_dev_tlb_insert(dev, &e));
	ASSERT_OK(hwt_smmu_dev_tlb_insert(dev, &e)); /* same key: no-op */
	ASSERT_EQ(hwt_smmu_dev_cache_count(dev), 1);
	ASSERT_TRUE(hwt_smmu_dev_tlb_lookup(dev, HWT_SMMU_TLB_NH, 1, 2, 0x3fffff));
	ASSERT_FALSE(hwt_smmu_dev_tlb_lookup(dev, HWT_SMMU_TLB_NH, 1, 2, 0x400000));
	ASSERT_FALSE(hwt_smmu_dev_tlb_lookup(dev, HWT_SMMU_TLB_NH, 1, 3, 0x200000));
	ASSERT_FALSE(hwt_smmu_dev_tlb_lookup(dev, HWT_SMMU_TLB_NH, 2, 2, 0x200000));
	ASSERT_FALSE(hwt_smmu_dev_tlb_lookup(dev, HWT_SMMU_TLB_EL2, 1, 2, 0x200000));
	e.addr = 0x201000;
	ASSERT_EQ(hwt_smmu_dev_tlb_insert(dev, &e), -EINVAL); /* unaligned */
	e.size_log2 = 11;
	ASSERT_EQ(hwt_smmu_dev_tlb_insert(dev, &e), -EINVAL);
	e = (struct hwt_smmu_tlb_entry){ .kind = HWT_SMMU_TLB_EL2, .asid = 5, .global = true,
					 .addr = 0x1000, .size_log2 = 12 };
	ASSERT_OK(hwt_smmu_dev_tlb_insert(dev, &e));
	ASSERT_TRUE(hwt_smmu_dev_tlb_lookup(dev, HWT_SMMU_TLB_EL2, 9, 77, 0x1fff)); /* global */
	ASSERT_OK(hwt_smmu_dev_cfg_insert(dev, HWT_SMMU_CFG_STE, 7, 0));
	ASSERT_OK(hwt_smmu_dev_cfg_insert(dev, HWT_SMMU_CFG_CD, 7, 3));
	ASSERT_EQ(hwt_smmu_dev_cfg_insert(dev, HWT_SMMU_CFG_CD, 7, 1u << 20), -EINVAL);
	ASSERT_TRUE(hwt_smmu_dev_cfg_lookup(dev, HWT_SMMU_CFG_STE, 7, 99));
	ASSERT_TRUE(hwt_smmu_dev_cfg_lookup(dev, HWT_SMMU_CFG_CD, 7, 3));
	ASSERT_FALSE(hwt_smmu_dev_cfg_lookup(dev, HWT_SMMU_CFG_CD, 7, 4));
	ASSERT_OK(hwt_smmu_dev_atc_insert(dev, 7, HWT_SMMU_ATC_NO_SSID, 0x10000, 16));
	ASSERT_TRUE(hwt_smmu_dev_atc_lookup(dev, 7, HWT_SMMU_ATC_NO_SSID, 0x1ffff));
	ASSERT_FALSE(hwt_smmu_dev_atc_lookup(dev, 7, 0, 0x1ffff));
	ASSERT_EQ(hwt_smmu_dev_cache_count(dev), 5);
	ASSERT_TRUE(hwt_smmu_dev_tlb_contains(dev, &e));
	e.asid = 6; /* global entries ignore asid */
	ASSERT_TRUE(hwt_smmu_dev_tlb_contains(dev, &e));
	e.global = false;
	ASSERT_FALSE(hwt_smmu_dev_tlb_contains(dev, &e));
	for (unsigned i = 0; i < 600; i++) {
		struct hwt_smmu_tlb_entry f = { .kind = HWT_SMMU_TLB_S2, .vmid = 1,
						.addr = (uint64_t)i << 12, .size_log2 = 12 };
		int r = hwt_smmu_dev_tlb_insert(dev, &f);

		/* 512 entries, 2 taken */
		ASSERT_EQ(r, i < 510 ? 0 : -ENOSPC);
	}
	hwt_smmu_dev_cache_clear(dev);
	ASSERT_EQ(hwt_smmu_dev_cache_count(dev), 0);
	hwt_smmu_dev_destroy(dev);
}

/* The entries every invalidation case starts from. */
enum {
	T_NH_V1A2_PAGE,   /* NH vmid 1 asid 2, 4K page at 0x10000 */
	T_NH_V1A2_PAGE2,  /* NH vmid 1 asid 2, 4K page at 0x14000 */
	T_NH_V1A3_PAGE,   /* NH vmid 1 asid 3, 0x10000 */
	T_NH_V1_GLOBAL,   /* NH vmid 1 global, 0x10000 */
	T_NH_V2A2_PAGE,   /* NH vmid 2 asid 2, 0x10000 */
	T_NH_V1A2_BLOCK,  /* NH vmid 1 asid 2, 2M block at 0x200000 */
	T_NH_V1A2_64K,    /* NH vmid 1 asid 2, 64K page at 0x400000 */
	T_EL2_A2,         /* EL2 asid 2, 0x10000 */
	T_EL2_A3,         /* EL2 asid 3, 0x10000 */
	T_EL2_GLOBAL,     /* EL2 global, 0x20000 */
	T_S2_V1,          /* S2 vmid 1, IPA 0x10000 */
	T_S2_V1_HI,       /* S2 vmid 1, IPA 0x80000000 */
	T_S2_V2,          /* S2 vmid 2, IPA 0x10000 */
	T_STE_7,          /* STE sid 7 */
	T_STE_8,          /* STE sid 8 */
	T_STE_300,        /* STE sid 300 */
	T_CD_7_1,         /* CD sid 7 ssid 1 */
	T_CD_7_2,         /* CD sid 7 ssid 2 */
	T_CD_8_1,         /* CD sid 8 ssid 1 */
	T_ATC_7_NOPASID,  /* ATC sid 7, no PASID, 0x10000 */
	T_ATC_7_S1,       /* ATC sid 7 ssid 1, 0x10000 */
	T_ATC_7_S1_FAR,   /* ATC sid 7 ssid 1, 0x100000000 */
	T_ATC_8_S1,       /* ATC sid 8 ssid 1, 0x10000 */
	T_COUNT
};

static const struct hwt_smmu_tlb_entry tlb_init[] = {
	[T_NH_V1A2_PAGE] = { HWT_SMMU_TLB_NH, 1, 2, false, 0x10000, 12 },
	[T_NH_V1A2_PAGE2] = { HWT_SMMU_TLB_NH, 1, 2, false, 0x14000, 12 },
	[T_NH_V1A3_PAGE] = { HWT_SMMU_TLB_NH, 1, 3, false, 0x10000, 12 },
	[T_NH_V1_GLOBAL] = { HWT_SMMU_TLB_NH, 1, 0, true, 0x10000, 12 },
	[T_NH_V2A2_PAGE] = { HWT_SMMU_TLB_NH, 2, 2, false, 0x10000, 12 },
	[T_NH_V1A2_BLOCK] = { HWT_SMMU_TLB_NH, 1, 2, false, 0x200000, 21 },
	[T_NH_V1A2_64K] = { HWT_SMMU_TLB_NH, 1, 2, false, 0x400000, 16 },
	[T_EL2_A2] = { HWT_SMMU_TLB_EL2, 0, 2, false, 0x10000, 12 },
	[T_EL2_A3] = { HWT_SMMU_TLB_EL2, 0, 3, false, 0x10000, 12 },
	[T_EL2_GLOBAL] = { HWT_SMMU_TLB_EL2, 0, 0, true, 0x20000, 12 },
	[T_S2_V1] = { HWT_SMMU_TLB_S2, 1, 0, false, 0x10000, 12 },
	[T_S2_V1_HI] = { HWT_SMMU_TLB_S2, 1, 0, false, 0x80000000, 12 },
	[T_S2_V2] = { HWT_SMMU_TLB_S2, 2, 0, false, 0x10000, 12 },
};

static void cache_fill(struct hwt_smmu_dev *dev)
{
	hwt_smmu_dev_cache_clear(dev);
	for (int i = 0; i <= T_S2_V2; i++)
		ASSERT_OK(hwt_smmu_dev_tlb_insert(dev, &tlb_init[i]));
	ASSERT_OK(hwt_smmu_dev_cfg_insert(dev, HWT_SMMU_CFG_STE, 7, 0));
	ASSERT_OK(hwt_smmu_dev_cfg_insert(dev, HWT_SMMU_CFG_STE, 8, 0));
	ASSERT_OK(hwt_smmu_dev_cfg_insert(dev, HWT_SMMU_CFG_STE, 300, 0));
	ASSERT_OK(hwt_smmu_dev_cfg_insert(dev, HWT_SMMU_CFG_CD, 7, 1));
	ASSERT_OK(hwt_smmu_dev_cfg_insert(dev, HWT_SMMU_CFG_CD, 7, 2));
	ASSERT_OK(hwt_smmu_dev_cfg_insert(dev, HWT_SMMU_CFG_CD, 8, 1));
	ASSERT_OK(hwt_smmu_dev_atc_insert(dev, 7, HWT_SMMU_ATC_NO_SSID, 0x10000, 12));
	ASSERT_OK(hwt_smmu_dev_atc_insert(dev, 7, 1, 0x10000, 12));
	ASSERT_OK(hwt_smmu_dev_atc_insert(dev, 7, 1, 0x100000000ull, 12));
	ASSERT_OK(hwt_smmu_dev_atc_insert(dev, 8, 1, 0x10000, 12));
	ASSERT_EQ(hwt_smmu_dev_cache_count(dev), T_COUNT);
}

static bool present(struct hwt_smmu_dev *dev, int i)
{
	if (i <= T_S2_V2) {
		const struct hwt_smmu_tlb_entry *e = &tlb_init[i];

		return hwt_smmu_dev_tlb_contains(dev, e);
	}
	switch (i) {
	case T_STE_7:
		return hwt_smmu_dev_cfg_lookup(dev, HWT_SMMU_CFG_STE, 7, 0);
	case T_STE_8:
		return hwt_smmu_dev_cfg_lookup(dev, HWT_SMMU_CFG_STE, 8, 0);
	case T_STE_300:
		return hwt_smmu_dev_cfg_lookup(dev, HWT_SMMU_CFG_STE, 300, 0);
	case T_CD_7_1:
		return hwt_smmu_dev_cfg_lookup(dev, HWT_SMMU_CFG_CD, 7, 1);
	case T_CD_7_2:
		return hwt_smmu_dev_cfg_lookup(dev, HWT_SMMU_CFG_CD, 7, 2);
	case T_CD_8_1:
		return hwt_smmu_dev_cfg_lookup(dev, HWT_SMMU_CFG_CD, 8, 1);
	case T_ATC_7_NOPASID:
		return hwt_smmu_dev_atc_lookup(dev, 7, HWT_SMMU_ATC_NO_SSID, 0x10000);
	case T_ATC_7_S1:
		return hwt_smmu_dev_atc_lookup(dev, 7, 1, 0x10000);
	case T_ATC_7_S1_FAR:
		return hwt_smmu_dev_atc_lookup(dev, 7, 1, 0x100000000ull);
	case T_ATC_8_S1:
		return hwt_smmu_dev_atc_lookup(dev, 8, 1, 0x10000);
	}
	return false;
}

#define BIT(x) (1ull << (x))

/* Issue dw + CMD_SYNC, then check exactly the entries in gone were dropped. */
static void inval_case(struct tq *t, const char *what, const uint64_t dw[2], uint64_t gone)
{
	uint64_t sync[2];

	cache_fill(t->dev);
	tq_put(t, dw);
	tst_cmd_sync(sync, HWT_SMMU_CS_SEV, 0, 0);
	tq_put(t, sync);
	tq_drain(t); /* the sync completed: every invalidation before it is done */
	for (int i = 0; i < T_COUNT; i++) {
		bool want = !(gone & BIT(i));

		if (present(t->dev, i) != want)
			hwt_test_fail(__FILE__, __LINE__, "%s: entry %d %s", what, i,
				      want ? "dropped" : "kept");
	}
	ASSERT_EQ(hwt_smmu_dev_cache_count(t->dev), T_COUNT - __builtin_popcountll(gone));
}

TEST(invalidate_cfgi)
{
	struct hwt_smmu_dev_config cfg;
	struct tq t;
	uint64_t dw[2];

	hwt_smmu_dev_config_default(&cfg);
	tq_start(&t, &cfg, 4);
	TST_ENC(dw, CFGI_STE, TST_FV(SID, 7), TST_FV(LEAF, 1));
	inval_case(&t, "CFGI_STE", dw, BIT(T_STE_7) | BIT(T_CD_7_1) | BIT(T_CD_7_2));
	TST_ENC(dw, CFGI_CD, TST_FV(SID, 7), TST_FV(SSID, 2), TST_FV(LEAF, 1));
	inval_case(&t, "CFGI_CD", dw, BIT(T_CD_7_2));
	TST_ENC(dw, CFGI_CD_ALL, TST_FV(SID, 7));
	inval_case(&t, "CFGI_CD_ALL", dw, BIT(T_CD_7_1) | BIT(T_CD_7_2));
	TST_ENC(dw, CFGI_ALL, TST_FV(RANGE, 31));
	inval_case(&t, "CFGI_ALL", dw,
		   BIT(T_STE_7) | BIT(T_STE_8) | BIT(T_STE_300) | BIT(T_CD_7_1) | BIT(T_CD_7_2) |
			   BIT(T_CD_8_1));
	/* STE_RANGE: 2^(3+1) = 16 SIDs around 9: 0..15 */
	TST_ENC(dw, CFGI_ALL, TST_FV(SID, 9), TST_FV(RANGE, 3));
	inval_case(&t, "CFGI_STE_RANGE 16", dw,
		   BIT(T_STE_7) | BIT(T_STE_8) | BIT(T_CD_7_1) | BIT(T_CD_7_2) | BIT(T_CD_8_1));
	/* RANGE 0: SIDs 8..9 */
	TST_ENC(dw, CFGI_ALL, TST_FV(SID, 9), TST_FV(RANGE, 0));
	inval_case(&t, "CFGI_STE_RANGE 2", dw, BIT(T_STE_8) | BIT(T_CD_8_1));
	TST_ENC(dw, PREFETCH_CONFIG, TST_FV(SID, 7));
	inval_case(&t, "PREFETCH_CONFIG", dw, 0);
	tq_free(&t);
}

TEST(invalidate_tlbi_nh)
{
	struct hwt_smmu_dev_config cfg;
	struct tq t;
	uint64_t dw[2];

	hwt_smmu_dev_config_default(&cfg);
	tq_start(&t, &cfg, 4);
	TST_ENC(dw, TLBI_NH_ALL, TST_FV(VMID, 1));
	inval_case(&t, "NH_ALL", dw,
		   BIT(T_NH_V1A2_PAGE) | BIT(T_NH_V1A2_PAGE2) | BIT(T_NH_V1A3_PAGE) |
			   BIT(T_NH_V1_GLOBAL) | BIT(T_NH_V1A2_BLOCK) | BIT(T_NH_V1A2_64K));
	TST_ENC(dw, TLBI_NH_ASID, TST_FV(VMID, 1), TST_FV(ASID, 2));
	inval_case(&t, "NH_ASID", dw,
		   BIT(T_NH_V1A2_PAGE) | BIT(T_NH_V1A2_PAGE2) | BIT(T_NH_V1A2_BLOCK) |
			   BIT(T_NH_V1A2_64K));
	/* TG = 0: only the entry covering VA (and the global one there) */
	TST_ENC(dw, TLBI_NH_VA, TST_FV(VMID, 1), TST_FV(ASID, 2), TST_FV(ADDR, 0x10000), TST_FV(LEAF, 1));
	inval_case(&t, "NH_VA", dw, BIT(T_NH_V1A2_PAGE) | BIT(T_NH_V1_GLOBAL));
	/* a VA inside the 2M block */
	TST_ENC(dw, TLBI_NH_VA, TST_FV(VMID, 1), TST_FV(ASID, 2), TST_FV(ADDR, 0x3ff000));
	inval_case(&t, "NH_VA block", dw, BIT(T_NH_V1A2_BLOCK));
	/* range: TG 4K, NUM 3, SCALE 0 -> 4 pages 0x10000..0x13fff: not 0x14000 */
	TST_ENC(dw, TLBI_NH_VA, TST_FV(VMID, 1), TST_FV(ASID, 2), TST_FV(ADDR, 0x10000), TST_FV(TG, 1),
		TST_FV(NUM, 3), TST_FV(SCALE, 0), TST_FV(TTL, 3), TST_FV(LEAF, 1));
	inval_case(&t, "NH_VA range 4", dw, BIT(T_NH_V1A2_PAGE) | BIT(T_NH_V1_GLOBAL));
	/* NUM 4 -> 5 pages: reaches 0x14000 */
	TST_ENC(dw, TLBI_NH_VA, TST_FV(VMID, 1), TST_FV(ASID, 2), TST_FV(ADDR, 0x10000), TST_FV(TG, 1),
		TST_FV(NUM, 4));
	inval_case(&t, "NH_VA range 5", dw,
		   BIT(T_NH_V1A2_PAGE) | BIT(T_NH_V1A2_PAGE2) | BIT(T_NH_V1_GLOBAL));
	/* range with SCALE: (0+1) << 5 = 32 pages of 64K from 0x200000 = 0x200000..0x3fffff */
	TST_ENC(dw, TLBI_NH_VA, TST_FV(VMID, 1), TST_FV(ASID, 2), TST_FV(ADDR, 0x200000), TST_FV(TG, 3),
		TST_FV(NUM, 0), TST_FV(SCALE, 5));
	inval_case(&t, "NH_VA range scale", dw, BIT(T_NH_V1A2_BLOCK));
	/* 256 x 16K = 4M: 0x200000..0x5fffff */
	TST_ENC(dw, TLBI_NH_VA, TST_FV(VMID, 1), TST_FV(ASID, 2), TST_FV(ADDR, 0x200000), TST_FV(TG, 2),
		TST_FV(NUM, 0), TST_FV(SCALE, 8));
	inval_case(&t, "NH_VA range 16K", dw, BIT(T_NH_V1A2_BLOCK) | BIT(T_NH_V1A2_64K));
	/* VAA: any ASID of VMID 1 at 0x10000 */
	TST_ENC(dw, TLBI_NH_VAA, TST_FV(VMID, 1), TST_FV(ADDR, 0x10000));
	inval_case(&t, "NH_VAA", dw,
		   BIT(T_NH_V1A2_PAGE) | BIT(T_NH_V1A3_PAGE) | BIT(T_NH_V1_GLOBAL));
	tq_free(&t);
}

TEST(invalidate_tlbi_el2_s2_nsnh)
{
	struct hwt_smmu_dev_config cfg;
	struct tq t;
	uint64_t dw[2];
	const uint64_t all_nh = BIT(T_NH_V1A2_PAGE) | BIT(T_NH_V1A2_PAGE2) | BIT(T_NH_V1A3_PAGE) |
				BIT(T_NH_V1_GLOBAL) | BIT(T_NH_V2A2_PAGE) | BIT(T_NH_V1A2_BLOCK) |
				BIT(T_NH_V1A2_64K);

	hwt_smmu_dev_config_default(&cfg);
	tq_start(&t, &cfg, 4);
	tst_cmd_encode(dw, HWT_SMMU_OP_TLBI_EL2_ALL, NULL, 0);
	inval_case(&t, "EL2_ALL", dw, BIT(T_EL2_A2) | BIT(T_EL2_A3) | BIT(T_EL2_GLOBAL));
	TST_ENC(dw, TLBI_EL2_ASID, TST_FV(ASID, 2));
	inval_case(&t, "EL2_ASID", dw, BIT(T_EL2_A2));
	TST_ENC(dw, TLBI_EL2_VA, TST_FV(ASID, 3), TST_FV(ADDR, 0x10000));
	inval_case(&t, "EL2_VA", dw, BIT(T_EL2_A3));
	TST_ENC(dw, TLBI_EL2_VA, TST_FV(ASID, 3), TST_FV(ADDR, 0x10000), TST_FV(TG, 1), TST_FV(NUM, 31));
	inval_case(&t, "EL2_VA range", dw, BIT(T_EL2_A3) | BIT(T_EL2_GLOBAL));
	TST_ENC(dw, TLBI_S12_VMALL, TST_FV(VMID, 1));
	inval_case(&t, "S12_VMALL", dw,
		   (all_nh & ~BIT(T_NH_V2A2_PAGE)) | BIT(T_S2_V1) | BIT(T_S2_V1_HI));
	TST_ENC(dw, TLBI_S2_IPA, TST_FV(VMID, 1), TST_FV(ADDR, 0x10000));
	inval_case(&t, "S2_IPA", dw, BIT(T_S2_V1));
	TST_ENC(dw, TLBI_S2_IPA, TST_FV(VMID, 1), TST_FV(ADDR, 0x10000), TST_FV(TG, 1), TST_FV(NUM, 31),
		TST_FV(SCALE, 20));
	inval_case(&t, "S2_IPA range", dw, BIT(T_S2_V1) | BIT(T_S2_V1_HI));
	tst_cmd_encode(dw, HWT_SMMU_OP_TLBI_NSNH_ALL, NULL, 0);
	inval_case(&t, "NSNH_ALL", dw, all_nh | BIT(T_S2_V1) | BIT(T_S2_V1_HI) | BIT(T_S2_V2));
	tq_free(&t);
}

TEST(invalidate_atc)
{
	struct hwt_smmu_dev_config cfg;
	struct tq t;
	uint64_t dw[2];

	hwt_smmu_dev_config_default(&cfg);
	tq_start(&t, &cfg, 4);
	TST_ENC(dw, ATC_INV, TST_FV(SID, 7), TST_FV(SIZE, 52));
	inval_case(&t, "ATC_INV all", dw,
		   BIT(T_ATC_7_NOPASID) | BIT(T_ATC_7_S1) | BIT(T_ATC_7_S1_FAR));
	TST_ENC(dw, ATC_INV, TST_FV(SID, 7), TST_FV(SSV, 1), TST_FV(SSID, 1), TST_FV(SIZE, 52));
	inval_case(&t, "ATC_INV ssid all", dw, BIT(T_ATC_7_S1) | BIT(T_ATC_7_S1_FAR));
	/* one page at 0x10000 */
	TST_ENC(dw, ATC_INV, TST_FV(SID, 7), TST_FV(SSV, 1), TST_FV(SSID, 1), TST_FV(ADDR, 0x10000),
		TST_FV(SIZE, 0));
	inval_case(&t, "ATC_INV page", dw, BIT(T_ATC_7_S1));
	/* SIZE 4: 16 pages, aligned down: 0x13000 -> 0x10000..0x1ffff */
	TST_ENC(dw, ATC_INV, TST_FV(SID, 7), TST_FV(ADDR, 0x13000), TST_FV(SIZE, 4));
	inval_case(&t, "ATC_INV span", dw, BIT(T_ATC_7_NOPASID) | BIT(T_ATC_7_S1));
	TST_ENC(dw, ATC_INV, TST_FV(SID, 7), TST_FV(ADDR, 0x20000), TST_FV(SIZE, 4));
	inval_case(&t, "ATC_INV miss", dw, 0);
	tq_free(&t);
}
