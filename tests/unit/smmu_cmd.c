/* SPDX-License-Identifier: MIT */
/* SMMUv3 command codec: every opcode, every field, every reserved bit. */
#include "harness/harness.h"
#include "harness/cmds.h"

#include <hwtune/smmu.h>

#include <endian.h>
#include <errno.h>
#include <string.h>

#define MASK64(hi, lo) ((~0ull >> (63 - (hi))) & (~0ull << (lo)))

/* The table again, as data the tests walk independently of the codec. */
static const struct row {
	unsigned op, f, dw, hi, lo;
} rows[] = {
#define ROW(o, fl, d, h, l) { HWT_SMMU_OP_##o, HWT_SMMU_F_##fl, d, h, l },
	HWT_SMMU_CMD_FIELDS(ROW)
#undef ROW
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

static const struct {
	const char *name;
	unsigned op;
} ops[] = {
#define OP(nm, code) { #nm, code },
	HWT_SMMU_OPCODES(OP)
#undef OP
};
#define NOPS (sizeof(ops) / sizeof(ops[0]))

static const char *const fnames[] = {
#define FN(f) #f,
	HWT_SMMU_FIELD_NAMES(FN)
#undef FN
};

static int is_inplace(unsigned f)
{
#define IP(x) if (f == HWT_SMMU_F_##x) return 1;
	HWT_SMMU_INPLACE_FIELDS(IP)
#undef IP
	return 0;
}

static int known_op(unsigned op)
{
	for (size_t i = 0; i < NOPS; i++)
		if (ops[i].op == op)
			return 1;
	return 0;
}

/* Bits of dword d that opcode op owns (opcode byte + fields). */
static uint64_t own(unsigned op, unsigned d)
{
	uint64_t m = d == 0 ? 0xff : 0;

	for (size_t i = 0; i < NROWS; i++)
		if (rows[i].op == op && rows[i].dw == d)
			m |= MASK64(rows[i].hi, rows[i].lo);
	return m;
}

static uint32_t has_of(unsigned op)
{
	uint32_t h = 0;

	for (size_t i = 0; i < NROWS; i++)
		if (rows[i].op == op)
			h |= 1u << rows[i].f;
	return h;
}

/* Largest valid value of a row's field. */
static uint64_t max_of(const struct row *r)
{
	uint64_t m = MASK64(r->hi, r->lo);

	if (is_inplace(r->f))
		return m;
	m >>= r->lo;
	if (r->f == HWT_SMMU_F_RESP || r->f == HWT_SMMU_F_CS)
		m -= 1; /* 3 is invalid */
	return m;
}

static uint64_t stored(const struct row *r, uint64_t v)
{
	return is_inplace(r->f) ? v : v << r->lo;
}

static void expect_encode(const struct hwt_smmu_cmd *c, uint64_t dw0, uint64_t dw1)
{
	uint64_t dw[2] = { ~0ull, ~0ull };
	struct hwt_smmu_cmd d;

	ASSERT_EQ(hwt_smmu_encode(c, dw), 0);
	ASSERT_EQ_U64(dw[0], dw0);
	ASSERT_EQ_U64(dw[1], dw1);
	ASSERT_EQ(hwt_smmu_decode(dw, &d), 0);
	ASSERT_EQ(d.op, c->op);
	ASSERT_EQ(d.has, has_of(c->op));
	for (unsigned f = 0; f < HWT_SMMU_F_COUNT; f++)
		if (c->has & (1u << f))
			ASSERT_EQ_U64(d.f[f], c->f[f]);
		else if (d.has & (1u << f))
			ASSERT_EQ_U64(d.f[f], 0);
}

TEST(table_is_consistent)
{
	ASSERT_EQ(sizeof(fnames) / sizeof(fnames[0]), HWT_SMMU_F_COUNT);
	for (size_t i = 0; i < NROWS; i++) {
		const struct row *r = &rows[i];
		unsigned dw = 9, hi = 99, lo = 99;

		ASSERT_TRUE(known_op(r->op));
		ASSERT_LE(r->lo, r->hi);
		ASSERT_LT(r->hi, 64);
		ASSERT_LT(r->dw, 2);
		ASSERT_EQ(hwt_smmu_field_layout(r->op, (enum hwt_smmu_field)r->f, &dw, &hi, &lo), 1);
		ASSERT_EQ(dw, r->dw);
		ASSERT_EQ(hi, r->hi);
		ASSERT_EQ(lo, r->lo);
		/* no overlap with the opcode byte or another field of the same opcode */
		if (r->dw == 0)
			ASSERT_EQ_U64(MASK64(r->hi, r->lo) & 0xff, 0);
		for (size_t j = 0; j < i; j++)
			if (rows[j].op == r->op) {
				ASSERT_NE(rows[j].f, r->f);
				if (rows[j].dw == r->dw)
					ASSERT_EQ_U64(MASK64(rows[j].hi, rows[j].lo) &
							      MASK64(r->hi, r->lo),
						      0);
			}
	}
	/* field_layout says "no" for every pair not in the table */
	for (size_t i = 0; i < NOPS; i++)
		for (unsigned f = 0; f < HWT_SMMU_F_COUNT; f++)
			ASSERT_EQ(hwt_smmu_field_layout(ops[i].op, (enum hwt_smmu_field)f, NULL, NULL,
							NULL),
				  !!(has_of(ops[i].op) & (1u << f)));
	ASSERT_EQ(hwt_smmu_field_layout(HWT_SMMU_OP_CMD_SYNC, HWT_SMMU_F_COUNT, NULL, NULL, NULL),
		  -EINVAL);
	ASSERT_EQ(hwt_smmu_field_layout(0, HWT_SMMU_F_SID, NULL, NULL, NULL), -ENOENT);
	ASSERT_EQ(hwt_smmu_field_layout(0x146, HWT_SMMU_F_CS, NULL, NULL, NULL), -ENOENT);
}

TEST(every_field_at_its_limits)
{
	for (size_t i = 0; i < NROWS; i++) {
		const struct row *r = &rows[i];
		uint64_t max = max_of(r), dw[2];
		struct hwt_smmu_cmd c;
		uint64_t vals[] = { 0, max, is_inplace(r->f) ? 1ull << r->lo : 1, max & (max << 1) };

		for (size_t k = 0; k < sizeof(vals) / sizeof(vals[0]); k++) {
			uint64_t e[2] = { r->op, 0 };

			e[r->dw] |= stored(r, vals[k]);
			tst_cmd_init(&c, r->op);
			hwt_smmu_cmd_set(&c, (enum hwt_smmu_field)r->f, vals[k]);
			expect_encode(&c, e[0], e[1]);
		}
		/* one past the top: a bit above hi */
		tst_cmd_init(&c, r->op);
		if (is_inplace(r->f)) {
			if (r->hi < 63) {
				hwt_smmu_cmd_set(&c, (enum hwt_smmu_field)r->f, 1ull << (r->hi + 1));
				ASSERT_EQ(hwt_smmu_encode(&c, dw), -EINVAL);
			}
			/* every bit below lo */
			for (unsigned b = 0; b < r->lo; b++) {
				hwt_smmu_cmd_set(&c, (enum hwt_smmu_field)r->f, max | (1ull << b));
				ASSERT_EQ(hwt_smmu_encode(&c, dw), -EINVAL);
			}
		} else {
			uint64_t width_max = MASK64(r->hi, r->lo) >> r->lo;

			hwt_smmu_cmd_set(&c, (enum hwt_smmu_field)r->f, width_max + 1);
			ASSERT_EQ(hwt_smmu_encode(&c, dw), -EINVAL);
			hwt_smmu_cmd_set(&c, (enum hwt_smmu_field)r->f, ~0ull);
			ASSERT_EQ(hwt_smmu_encode(&c, dw), -EINVAL);
			hwt_smmu_cmd_set(&c, (enum hwt_smmu_field)r->f, 1ull << 63);
			ASSERT_EQ(hwt_smmu_encode(&c, dw), -EINVAL);
		}
	}
}

TEST(every_opcode_all_fields_max_and_zero)
{
	for (size_t i = 0; i < NOPS; i++) {
		struct hwt_smmu_cmd c;
		uint64_t e[2] = { ops[i].op, 0 };

		tst_cmd_init(&c, ops[i].op);
		expect_encode(&c, ops[i].op, 0); /* no fields set: all zero */
		for (size_t k = 0; k < NROWS; k++)
			if (rows[k].op == ops[i].op) {
				hwt_smmu_cmd_set(&c, (enum hwt_smmu_field)rows[k].f, max_of(&rows[k]));
				e[rows[k].dw] |= stored(&rows[k], max_of(&rows[k]));
			}
		expect_encode(&c, e[0], e[1]);
		/* all fields at max leave only reserved bits clear */
		if (ops[i].op != HWT_SMMU_OP_CMD_SYNC && ops[i].op != HWT_SMMU_OP_PRI_RESP &&
		    ops[i].op != HWT_SMMU_OP_RESUME) {
			ASSERT_EQ_U64(e[0], (own(ops[i].op, 0) & ~0xffull) | ops[i].op);
			ASSERT_EQ_U64(e[1], own(ops[i].op, 1));
		}
	}
}

TEST(random_round_trips)
{
	uint64_t s = 0x9e3779b97f4a7c15ull;

	for (int n = 0; n < 20000; n++) {
		unsigned op = ops[tst_rand(&s) % NOPS].op;
		struct hwt_smmu_cmd c;
		uint64_t e[2] = { op, 0 };

		tst_cmd_init(&c, op);
		for (size_t k = 0; k < NROWS; k++) {
			const struct row *r = &rows[k];
			uint64_t v;

			if (r->op != op || (tst_rand(&s) & 3) == 0)
				continue;
			v = tst_rand(&s) & MASK64(r->hi, r->lo);
			if (!is_inplace(r->f))
				v >>= r->lo;
			if (v > max_of(r))
				v = max_of(r);
			hwt_smmu_cmd_set(&c, (enum hwt_smmu_field)r->f, v);
			e[r->dw] |= stored(r, v);
		}
		expect_encode(&c, e[0], e[1]);
	}
}

TEST(reserved_bits_rejected_for_every_opcode)
{
	for (size_t i = 0; i < NOPS; i++) {
		unsigned op = ops[i].op;
		struct hwt_smmu_cmd c;

		for (unsigned d = 0; d < 2; d++)
			for (unsigned b = d == 0 ? 8 : 0; b < 64; b++) {
				uint64_t dw[2] = { op, 0 };
				int owned = !!(own(op, d) & (1ull << b));

				dw[d] |= 1ull << b;
				ASSERT_EQ(hwt_smmu_decode(dw, &c), owned ? 0 : -EINVAL);
				ASSERT_EQ(c.op, op);
				if (!owned)
					ASSERT_EQ(c.has, 0);
				/* also on top of a fully populated command */
				dw[0] = (own(op, 0) & ~0xffull) | op;
				dw[1] = own(op, 1);
				if (op == HWT_SMMU_OP_CMD_SYNC)
					dw[0] &= ~(1ull << 13); /* CS 3 -> 1 */
				if (op == HWT_SMMU_OP_PRI_RESP)
					dw[1] &= ~(1ull << 13);
				if (op == HWT_SMMU_OP_RESUME)
					dw[0] &= ~(1ull << 13);
				ASSERT_EQ(hwt_smmu_decode(dw, &c), 0);
				if (owned)
					continue;
				dw[d] |= 1ull << b;
				ASSERT_EQ(hwt_smmu_decode(dw, &c), -EINVAL);
			}
	}
}

TEST(ssec_bit_10_is_reserved)
{
	for (size_t i = 0; i < NOPS; i++) {
		uint64_t dw[2] = { ops[i].op | 1ull << 10, 0 };
		struct hwt_smmu_cmd c;

		ASSERT_EQ(hwt_smmu_decode(dw, &c), -EINVAL);
	}
}

TEST(unknown_opcodes)
{
	unsigned known = 0;

	for (unsigned op = 0; op < 256; op++) {
		uint64_t dw[2] = { op, 0 }, junk[2] = { op | 0xabcd000000001200ull, ~0ull };
		struct hwt_smmu_cmd c;

		if (known_op(op)) {
			known++;
			ASSERT_STR_EQ(hwt_smmu_op_name(op), ops[known - 1].name);
			continue;
		}
		ASSERT_EQ(hwt_smmu_decode(dw, &c), -ENOENT);
		ASSERT_EQ(c.op, op);
		ASSERT_EQ(c.has, 0);
		ASSERT_EQ(hwt_smmu_decode(junk, &c), -ENOENT);
		tst_cmd_init(&c, op);
		ASSERT_EQ(hwt_smmu_encode(&c, dw), -ENOENT);
		ASSERT_TRUE(hwt_smmu_op_name(op) == NULL);
		ASSERT_EQ(hwt_smmu_field_layout(op, HWT_SMMU_F_SID, NULL, NULL, NULL), -ENOENT);
	}
	ASSERT_EQ(known, NOPS);
	ASSERT_TRUE(hwt_smmu_op_name(256 + HWT_SMMU_OP_CMD_SYNC) == NULL);
	ASSERT_TRUE(hwt_smmu_op_name(~0u) == NULL);
}

TEST(encode_rejects_fields_the_opcode_lacks)
{
	for (size_t i = 0; i < NOPS; i++)
		for (unsigned f = 0; f < 32; f++) {
			struct hwt_smmu_cmd c;
			uint64_t dw[2] = { 1, 2 };

			if (has_of(ops[i].op) & (1u << f))
				continue;
			tst_cmd_init(&c, ops[i].op);
			c.has = 1u << f; /* value 0: still not a field of this opcode */
			ASSERT_EQ(hwt_smmu_encode(&c, dw), -EINVAL);
			ASSERT_EQ_U64(dw[0], 1); /* untouched on error */
			ASSERT_EQ_U64(dw[1], 2);
		}
}

TEST(invalid_values)
{
	static const struct {
		unsigned op, f;
		unsigned dw;
	} bad[] = {
		{ HWT_SMMU_OP_PRI_RESP, HWT_SMMU_F_RESP, 1 },
		{ HWT_SMMU_OP_RESUME, HWT_SMMU_F_RESP, 0 },
		{ HWT_SMMU_OP_CMD_SYNC, HWT_SMMU_F_CS, 0 },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct hwt_smmu_cmd c;
		uint64_t dw[2] = { bad[i].op, 0 };

		tst_cmd_init(&c, bad[i].op);
		hwt_smmu_cmd_set(&c, (enum hwt_smmu_field)bad[i].f, 3);
		ASSERT_EQ(hwt_smmu_encode(&c, dw), -EINVAL);
		for (uint64_t v = 0; v < 3; v++) {
			hwt_smmu_cmd_set(&c, (enum hwt_smmu_field)bad[i].f, v);
			ASSERT_EQ(hwt_smmu_encode(&c, dw), 0);
			ASSERT_EQ(hwt_smmu_decode(dw, &c), 0);
			ASSERT_EQ_U64(c.f[bad[i].f], v);
		}
		dw[0] = bad[i].op;
		dw[1] = 0;
		dw[bad[i].dw] |= 3ull << 12;
		ASSERT_EQ(hwt_smmu_decode(dw, &c), -EINVAL);
	}
}

TEST(names_both_ways)
{
	char lower[32];

	for (size_t i = 0; i < NOPS; i++) {
		size_t n = strlen(ops[i].name);

		ASSERT_STR_EQ(hwt_smmu_op_name(ops[i].op), ops[i].name);
		ASSERT_EQ(hwt_smmu_op_by_name(ops[i].name), ops[i].op);
		ASSERT_LT(n, sizeof(lower));
		for (size_t k = 0; k <= n; k++)
			lower[k] = (char)(ops[i].name[k] |
					  (ops[i].name[k] >= 'A' && ops[i].name[k] <= 'Z' ? 0x20 : 0));
		ASSERT_EQ(hwt_smmu_op_by_name(lower), ops[i].op);
	}
	ASSERT_EQ(hwt_smmu_op_by_name("Cmd_Sync"), HWT_SMMU_OP_CMD_SYNC);
	ASSERT_EQ(hwt_smmu_op_by_name("CFGI_STE_RANGE"), HWT_SMMU_OP_CFGI_ALL);
	ASSERT_EQ(hwt_smmu_op_by_name("CMD_SYNCX"), -ENOENT);
	ASSERT_EQ(hwt_smmu_op_by_name("CMD_SYN"), -ENOENT);
	ASSERT_EQ(hwt_smmu_op_by_name(""), -ENOENT);
	ASSERT_EQ(hwt_smmu_op_by_name(NULL), -EINVAL); /* the NULL rule (hwtune.h) */
	for (unsigned f = 0; f < HWT_SMMU_F_COUNT; f++)
		ASSERT_STR_EQ(hwt_smmu_field_name((enum hwt_smmu_field)f), fnames[f]);
	ASSERT_STR_EQ(hwt_smmu_field_name(HWT_SMMU_F_MSIADDR), "MSIADDR");
	ASSERT_TRUE(hwt_smmu_field_name(HWT_SMMU_F_COUNT) == NULL);
	ASSERT_TRUE(hwt_smmu_field_name((enum hwt_smmu_field)-1) == NULL);
}

/* Vectors computed by hand from the bit table (notes §1.11). */
TEST(known_vectors)
{
	struct hwt_smmu_cmd c;

	/* CMD_SYNC CS=SEV MSH=IS MSIATTR=WB: 0x46 | 2<<12 | 3<<22 | 0xf<<24 */
	tst_cmd_init(&c, HWT_SMMU_OP_CMD_SYNC);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_CS, HWT_SMMU_CS_SEV);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_MSH, HWT_SMMU_SYNC_MSH_IS);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_MSIATTR, HWT_SMMU_SYNC_MSIATTR_WB);
	expect_encode(&c, 0x000000000fc02046ull, 0);

	/* CFGI_STE SID=0x12345678 LEAF=1 */
	tst_cmd_init(&c, HWT_SMMU_OP_CFGI_STE);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_SID, 0x12345678);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_LEAF, 1);
	expect_encode(&c, 0x1234567800000003ull, 1);

	/* CFGI_ALL as the kernel issues it: RANGE 31 */
	tst_cmd_init(&c, HWT_SMMU_OP_CFGI_ALL);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_RANGE, 31);
	expect_encode(&c, 0x04, 0x1f);

	/* TLBI_NH_VA VMID=1 ASID=0xabcd NUM=3 SCALE=5 LEAF=1 TTL=3 TG=1 */
	tst_cmd_init(&c, HWT_SMMU_OP_TLBI_NH_VA);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_VMID, 1);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_ASID, 0xabcd);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_NUM, 3);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_SCALE, 5);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_LEAF, 1);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_TTL, 3);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_TG, 1);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_ADDR, 0xffff800012345000ull);
	expect_encode(&c, 0xabcd000100503012ull, 0xffff800012345701ull);

	/* TLBI_S2_IPA: IPA bits [51:12] only */
	tst_cmd_init(&c, HWT_SMMU_OP_TLBI_S2_IPA);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_VMID, 0xffff);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_ADDR, 0x000ffffffffff000ull);
	expect_encode(&c, 0x0000ffff0000002aull, 0x000ffffffffff000ull);

	/* ATC_INV GLOBAL SSV SSID=0xfffff SID=7, whole ATC (SIZE 52) */
	tst_cmd_init(&c, HWT_SMMU_OP_ATC_INV);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_GLOBAL, 1);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_SSV, 1);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_SSID, 0xfffff);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_SID, 7);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_SIZE, 52);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_ADDR, 0);
	expect_encode(&c, 0x00000007fffffa40ull, 0x34);

	/* PRI_RESP SID=5 GRPID=0x1ff RESP=SUCC */
	tst_cmd_init(&c, HWT_SMMU_OP_PRI_RESP);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_SID, 5);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_GRPID, 0x1ff);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_RESP, HWT_SMMU_PRI_SUCC);
	expect_encode(&c, 0x0000000500000041ull, 0x21ff);

	/* RESUME RESP=RETRY SID=9 STAG=0xffff */
	tst_cmd_init(&c, HWT_SMMU_OP_RESUME);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_RESP, HWT_SMMU_RESUME_RETRY);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_SID, 9);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_STAG, 0xffff);
	expect_encode(&c, 0x0000000900001044ull, 0xffff);

	/* TLBI_NSNH_ALL has no fields at all */
	tst_cmd_init(&c, HWT_SMMU_OP_TLBI_NSNH_ALL);
	expect_encode(&c, 0x30, 0);
}

/* CMD_SYNC as the kernel builds it for MSI polling: CS=IRQ, MSH=IS,
 * MSIATTR=WB, MSIADDR = the sync's own slot, MSIDATA 0. */
TEST(kernel_msi_sync_decodes)
{
	const uint64_t base = 0x7f12345000ull; /* a DMA offset, 16-byte slots */

	for (unsigned idx = 0; idx < 1024; idx += 37) {
		uint64_t msiaddr = base + idx * 16ull, dw[2];
		struct hwt_smmu_cmd c;

		tst_cmd_init(&c, HWT_SMMU_OP_CMD_SYNC);
		hwt_smmu_cmd_set(&c, HWT_SMMU_F_CS, HWT_SMMU_CS_IRQ);
		hwt_smmu_cmd_set(&c, HWT_SMMU_F_MSH, HWT_SMMU_SYNC_MSH_IS);
		hwt_smmu_cmd_set(&c, HWT_SMMU_F_MSIATTR, HWT_SMMU_SYNC_MSIATTR_WB);
		hwt_smmu_cmd_set(&c, HWT_SMMU_F_MSIADDR, msiaddr);
		expect_encode(&c, 0x000000000fc01046ull, msiaddr);
		ASSERT_OK(hwt_smmu_encode(&c, dw));
		ASSERT_EQ(hwt_smmu_decode(dw, &c), 0);
		ASSERT_EQ(c.f[HWT_SMMU_F_CS], HWT_SMMU_CS_IRQ);
		ASSERT_EQ(c.f[HWT_SMMU_F_MSH], 3);
		ASSERT_EQ(c.f[HWT_SMMU_F_MSIATTR], 0xf);
		ASSERT_EQ(c.f[HWT_SMMU_F_MSIDATA], 0);
		ASSERT_EQ_U64(c.f[HWT_SMMU_F_MSIADDR], msiaddr);
	}
	/* top of the MSIADDR range; bit 52 and bits [1:0] are not addressable */
	{
		struct hwt_smmu_cmd c;
		uint64_t dw[2];

		tst_cmd_init(&c, HWT_SMMU_OP_CMD_SYNC);
		hwt_smmu_cmd_set(&c, HWT_SMMU_F_MSIADDR, 0x000ffffffffffffcull);
		expect_encode(&c, 0x46, 0x000ffffffffffffcull);
		hwt_smmu_cmd_set(&c, HWT_SMMU_F_MSIADDR, 0x0010000000000000ull);
		ASSERT_EQ(hwt_smmu_encode(&c, dw), -EINVAL);
		hwt_smmu_cmd_set(&c, HWT_SMMU_F_MSIADDR, 0x1002);
		ASSERT_EQ(hwt_smmu_encode(&c, dw), -EINVAL);
	}
}

/* Queue memory is little-endian; the codec works on host-order dwords. */
TEST(queue_memory_is_little_endian)
{
	unsigned char slot[16];
	uint64_t le[2], dw[2];
	struct hwt_smmu_cmd c;

	tst_cmd_init(&c, HWT_SMMU_OP_CFGI_CD);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_SID, 0x01020304);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_SSID, 0xabcde);
	hwt_smmu_cmd_set(&c, HWT_SMMU_F_LEAF, 1);
	ASSERT_OK(hwt_smmu_encode(&c, dw));
	le[0] = htole64(dw[0]);
	le[1] = htole64(dw[1]);
	memcpy(slot, le, sizeof(slot));
	ASSERT_EQ(slot[0], HWT_SMMU_OP_CFGI_CD); /* opcode is the first byte */
	ASSERT_EQ(slot[4], 0x04);
	ASSERT_EQ(slot[7], 0x01);
	ASSERT_EQ(slot[8], 0x01); /* LEAF */
	memcpy(le, slot, sizeof(le));
	dw[0] = le64toh(le[0]);
	dw[1] = le64toh(le[1]);
	ASSERT_EQ(hwt_smmu_decode(dw, &c), 0);
	ASSERT_EQ_U64(c.f[HWT_SMMU_F_SSID], 0xabcde);
	/* the MSI write of 32-bit 0 over a completed sync leaves opcode 0 */
	memset(slot, 0, 4);
	memcpy(le, slot, sizeof(le));
	dw[0] = le64toh(le[0]);
	dw[1] = le64toh(le[1]);
	ASSERT_EQ(hwt_smmu_decode(dw, &c), -ENOENT);
}

/* Header fast paths agree with the codec for every field. */
TEST(fast_get_put_match_codec)
{
	for (size_t i = 0; i < NROWS; i++) {
		const struct row *r = &rows[i];
		uint64_t vals[] = { 0, max_of(r), max_of(r) & (max_of(r) << 1) };

		for (size_t k = 0; k < sizeof(vals) / sizeof(vals[0]); k++) {
			struct hwt_smmu_cmd c;
			uint64_t a[2], b[2] = { r->op, 0 };

			tst_cmd_init(&c, r->op);
			hwt_smmu_cmd_set(&c, (enum hwt_smmu_field)r->f, vals[k]);
			ASSERT_OK(hwt_smmu_encode(&c, a));
			hwt_smmu_put(b, r->op, (enum hwt_smmu_field)r->f, vals[k]);
			ASSERT_EQ_U64(b[0], a[0]);
			ASSERT_EQ_U64(b[1], a[1]);
			ASSERT_EQ_U64(hwt_smmu_get(a, r->op, (enum hwt_smmu_field)r->f), vals[k]);
		}
	}
}

TEST(fast_sync_build)
{
	uint64_t dw[2];
	struct hwt_smmu_cmd c;

	hwt_smmu_sync_build(dw, HWT_SMMU_CS_SEV, 0);
	ASSERT_EQ_U64(dw[0], 0x000000000fc02046ull);
	ASSERT_EQ_U64(dw[1], 0);
	hwt_smmu_sync_build(dw, HWT_SMMU_CS_IRQ, 0x7f12345670ull);
	ASSERT_EQ_U64(dw[0], 0x000000000fc01046ull);
	ASSERT_EQ_U64(dw[1], 0x7f12345670ull);
	ASSERT_EQ(hwt_smmu_decode(dw, &c), 0);
	ASSERT_EQ_U64(c.f[HWT_SMMU_F_MSIADDR], 0x7f12345670ull);
	ASSERT_EQ_U64(hwt_smmu_get(dw, HWT_SMMU_OP_CMD_SYNC, HWT_SMMU_F_CS), HWT_SMMU_CS_IRQ);
	hwt_smmu_sync_build(dw, HWT_SMMU_CS_NONE, 0);
	ASSERT_EQ_U64(dw[0], 0x000000000fc00046ull);
}
