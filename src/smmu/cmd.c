/* SPDX-License-Identifier: MIT */
/*
 * SMMUv3 command codec.  Every layout below is generated at compile time
 * from HWT_SMMU_CMD_FIELDS; nothing is built at run time.
 *
 * - op_slot[byte]: opcode byte -> dense index + 1 (0: unknown).
 * - lay[index][field]: where a field lives (dword, mask, shift), one
 *   designated initializer per table row.
 * - op_own0/op_own1/op_has(op): per opcode, the bits it owns in each dword
 *   (opcode byte + fields) and its field set: ORs over the rows of that
 *   opcode, written as switches whose cases bind the opcode as a
 *   block-scope constant (hwt__k) that the rows compare against.  The
 *   results are constants; gcc emits lookup tables, clang a jump table.
 *
 * Decode: one byte lookup, two mask tests, one step per field of the
 * opcode.  The codec works on host-order dwords; queue memory is
 * little-endian (callers convert with htole64/le64toh).
 */
#include <hwtune/smmu.h>

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#define GENMASK64(hi, lo) ((~0ull >> (63 - (hi))) & (~0ull << (lo)))

_Static_assert(HWT_SMMU_F_COUNT <= 32, "struct hwt_smmu_cmd.has is 32 bits");

/* Dense opcode index. */
enum {
#define HWT__IDX(name, code) hwt__idx_##name,
	HWT_SMMU_OPCODES(HWT__IDX)
#undef HWT__IDX
	HWT__NOPS
};

/* Field sets as bitmasks over enum hwt_smmu_field. */
#define HWT__FBIT(f) | (1u << HWT_SMMU_F_##f)
#define HWT__INPLACE (0u HWT_SMMU_INPLACE_FIELDS(HWT__FBIT))
/* Fields whose all-ones value is architecturally invalid (RESP 3, CS 3). */
#define HWT__ONES_BAD (0u HWT__FBIT(RESP) HWT__FBIT(CS))
#define HWT__IN(set, f) (((set) >> HWT_SMMU_F_##f) & 1u)

struct field_layout {
	uint64_t mask;   /* bits [hi:lo] in the dword; 0: not a field of this op */
	uint8_t dw;      /* 0 or 1 */
	uint8_t shift;   /* lo, or 0 for an in-place address */
	uint8_t hi, lo;
	uint8_t ones_bad; /* the all-ones value is invalid */
};

static const struct field_layout lay[HWT__NOPS][HWT_SMMU_F_COUNT] = {
#define HWT__LAY(o, f, d, h, l)                                                          \
	[hwt__idx_##o][HWT_SMMU_F_##f] = {                                               \
		.mask = GENMASK64(h, l), .dw = (d), .hi = (h), .lo = (l),                \
		.shift = HWT__IN(HWT__INPLACE, f) ? 0 : (l),                             \
		.ones_bad = HWT__IN(HWT__ONES_BAD, f),                                   \
	},
	HWT_SMMU_CMD_FIELDS(HWT__LAY)
#undef HWT__LAY
};

/* Opcode byte -> dense index + 1 (0: unknown). */
static const uint8_t op_slot[256] = {
#define HWT__SLOT(nm, code) [code] = hwt__idx_##nm + 1,
	HWT_SMMU_OPCODES(HWT__SLOT)
#undef HWT__SLOT
};

/*
 * Per opcode: the bits it owns in each dword (opcode byte + fields; every
 * other bit is reserved) and its field set.  Each case binds the opcode as
 * the block-scope constant hwt__k so that the table rows (HWT__EXPR) can
 * select themselves.
 */
#define HWT__ROW_OWN(o, d, h, l, dw) | ((int)hwt__idx_##o == (int)hwt__k && (d) == (dw) ? GENMASK64(h, l) : 0)
#define HWT__OWN0(o, f, d, h, l) HWT__ROW_OWN(o, d, h, l, 0)
#define HWT__OWN1(o, f, d, h, l) HWT__ROW_OWN(o, d, h, l, 1)
#define HWT__HAS(o, f, d, h, l) | ((int)hwt__idx_##o == (int)hwt__k ? 1u << HWT_SMMU_F_##f : 0u)
#define HWT__CASE(nm, code)                                                              \
	case code: {                                                                     \
		enum { hwt__k = hwt__idx_##nm };                                         \
		return HWT__EXPR;                                                        \
	}

/* dw0 bits of a known opcode; 0 for an unknown one (the opcode byte is never 0). */
static inline uint64_t op_own0(unsigned op)
{
#define HWT__EXPR (0xffull HWT_SMMU_CMD_FIELDS(HWT__OWN0))
	switch (op) {
		HWT_SMMU_OPCODES(HWT__CASE)
	default:
		return 0;
	}
#undef HWT__EXPR
}

static inline uint64_t op_own1(unsigned op)
{
#define HWT__EXPR (0ull HWT_SMMU_CMD_FIELDS(HWT__OWN1))
	switch (op) {
		HWT_SMMU_OPCODES(HWT__CASE)
	default:
		return 0;
	}
#undef HWT__EXPR
}

static inline uint32_t op_has(unsigned op)
{
#define HWT__EXPR (0u HWT_SMMU_CMD_FIELDS(HWT__HAS))
	switch (op) {
		HWT_SMMU_OPCODES(HWT__CASE)
	default:
		return 0;
	}
#undef HWT__EXPR
}

int hwt_smmu_encode(const struct hwt_smmu_cmd *c, uint64_t dw[2])
{
	unsigned slot;
	uint64_t w[2];

	if (!c || !dw)
		return -EINVAL;
	slot = op_slot[c->op];
	w[0] = c->op;
	w[1] = 0;

	if (!slot)
		return -ENOENT;
	if (c->has & ~op_has(c->op))
		return -EINVAL;
	for (uint32_t m = c->has; m; m &= m - 1) {
		unsigned f = (unsigned)__builtin_ctz(m);
		const struct field_layout *l = &lay[slot - 1][f];
		uint64_t v = c->f[f], x = v << l->shift;

		if (x >> l->shift != v || (x & ~l->mask) || (l->ones_bad && x == l->mask))
			return -EINVAL;
		w[l->dw] |= x;
	}
	dw[0] = w[0];
	dw[1] = w[1];
	return 0;
}

int hwt_smmu_decode(const uint64_t dw[2], struct hwt_smmu_cmd *c)
{
	uint64_t d0, d1;
	unsigned op, slot;
	uint32_t has;

	if (!dw || !c)
		return -EINVAL;
	d0 = dw[0];
	d1 = dw[1];
	op = (unsigned)(d0 & 0xff);
	slot = op_slot[op];

	c->op = (uint8_t)op;
	c->has = 0;
	if (!slot)
		return -ENOENT;
	if ((d0 & ~op_own0(op)) | (d1 & ~op_own1(op)))
		return -EINVAL;
	has = op_has(op);
	for (uint32_t m = has; m; m &= m - 1) {
		unsigned f = (unsigned)__builtin_ctz(m);
		const struct field_layout *l = &lay[slot - 1][f];
		uint64_t x = (l->dw ? d1 : d0) & l->mask;

		if (l->ones_bad && x == l->mask)
			return -EINVAL;
		c->f[f] = x >> l->shift;
	}
	c->has = has;
	return 0;
}

static const char *const op_names[HWT__NOPS] = {
#define HWT__NAME(nm, code) [hwt__idx_##nm] = #nm,
	HWT_SMMU_OPCODES(HWT__NAME)
#undef HWT__NAME
};

const char *hwt_smmu_op_name(unsigned op)
{
	return op < 256 && op_slot[op] ? op_names[op_slot[op] - 1] : NULL;
}

static const struct {
	const char *name;
	uint8_t op;
} op_aliases[] = {
	{ "CFGI_STE_RANGE", HWT_SMMU_OP_CFGI_STE_RANGE },
};

int hwt_smmu_op_by_name(const char *name)
{
	if (!name)
		return -EINVAL;
	for (unsigned op = 0; op < 256; op++) {
		const char *n = hwt_smmu_op_name(op);

		if (n && !strcasecmp(name, n))
			return (int)op;
	}
	for (size_t i = 0; i < sizeof(op_aliases) / sizeof(op_aliases[0]); i++)
		if (!strcasecmp(name, op_aliases[i].name))
			return op_aliases[i].op;
	return -ENOENT;
}

static const char *const field_names[HWT_SMMU_F_COUNT] = {
#define HWT__FNAME(f) [HWT_SMMU_F_##f] = #f,
	HWT_SMMU_FIELD_NAMES(HWT__FNAME)
#undef HWT__FNAME
};

const char *hwt_smmu_field_name(enum hwt_smmu_field f)
{
	return (unsigned)f < HWT_SMMU_F_COUNT ? field_names[f] : NULL;
}

int hwt_smmu_field_layout(unsigned op, enum hwt_smmu_field f, unsigned *dword, unsigned *hi,
			  unsigned *lo)
{
	const struct field_layout *l;

	if (op >= 256 || !op_slot[op])
		return -ENOENT;
	if ((unsigned)f >= HWT_SMMU_F_COUNT)
		return -EINVAL;
	l = &lay[op_slot[op] - 1][f];
	if (!l->mask)
		return 0;
	if (dword)
		*dword = l->dw;
	if (hi)
		*hi = l->hi;
	if (lo)
		*lo = l->lo;
	return 1;
}
