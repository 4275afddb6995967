/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the SMMUv3 command codec (src/smmu/cmd.c).
 *
 * The codec's answers are checked against a model built only from what the
 * public header says about each opcode (hwt_smmu_op_name,
 * hwt_smmu_field_layout, HWT_SMMU_INPLACE_FIELDS): which bits an opcode
 * owns, how each field is stored, and that CS and RESP 3 are invalid.
 *
 * Input: two little-endian dwords (16 bytes), then an optional command to
 * encode (see encode_case).
 *  1. decode of any 16 bytes never crashes and agrees with the model: an
 *     unknown opcode is -ENOENT; a set bit outside the opcode byte and the
 *     opcode's fields (a reserved bit), or CS/RESP 3, is -EINVAL; anything
 *     else decodes with every field's bits.  An accepted command encodes
 *     back to the same 16 bytes, so no reserved bit was accepted.  decode
 *     leaves other opcodes' f[] entries alone and clears has on error.
 *  2. encode of any command: refused exactly when the model finds a reason
 *     (unknown opcode, a field the opcode lacks, a value too wide, an
 *     in-place address with low bits set, CS/RESP 3), dw untouched then;
 *     otherwise it decodes back to the same opcode and values (the fields
 *     not given as 0).
 */
#include "fuzz/fuzz.h"

#include <hwtune/smmu.h>

#include <errno.h>
#include <stdbool.h>
#include <string.h>

struct model_field {
	bool has;
	unsigned dw, hi, lo;
	uint64_t mask;   /* bits [hi:lo] of dword dw */
	bool inplace;    /* value is the address itself, not shifted down */
	bool ones_bad;   /* the all-ones value is invalid */
};

static struct {
	bool known[256];
	uint32_t fields[256]; /* bitmask over enum hwt_smmu_field */
	uint64_t own[256][2]; /* opcode byte + fields */
	struct model_field f[256][HWT_SMMU_F_COUNT];
	unsigned ops[256], nops; /* the known opcodes */
} m;

static void model_init(void)
{
	static bool done;
	const uint32_t inplace = 0
#define FUZZ_INPL(x) | (1u << HWT_SMMU_F_##x)
		HWT_SMMU_INPLACE_FIELDS(FUZZ_INPL)
#undef FUZZ_INPL
		;

	if (done)
		return;
	done = true;
	for (unsigned op = 0; op < 256; op++) {
		m.known[op] = hwt_smmu_op_name(op) != NULL;
		if (!m.known[op])
			continue;
		m.ops[m.nops++] = op;
		m.own[op][0] = 0xff;
		for (unsigned f = 0; f < HWT_SMMU_F_COUNT; f++) {
			struct model_field *mf = &m.f[op][f];
			int r = hwt_smmu_field_layout(op, (enum hwt_smmu_field)f, &mf->dw, &mf->hi,
						      &mf->lo);

			FUZZ_ASSERT(r == 0 || r == 1, "field_layout(%u, %u) = %d", op, f, r);
			if (r != 1)
				continue;
			FUZZ_ASSERT(mf->dw < 2 && mf->lo <= mf->hi && mf->hi < 64, "layout %u/%u", op, f);
			FUZZ_ASSERT(!(mf->dw == 0 && mf->lo < 8), "field %u of op %u overlaps the opcode", f, op);
			mf->has = true;
			mf->mask = (~0ull >> (63 - mf->hi)) & (~0ull << mf->lo);
			FUZZ_ASSERT(!(m.own[op][mf->dw] & mf->mask), "fields of op %u overlap", op);
			m.own[op][mf->dw] |= mf->mask;
			mf->inplace = inplace >> f & 1;
			mf->ones_bad = f == HWT_SMMU_F_CS || f == HWT_SMMU_F_RESP;
			m.fields[op] |= 1u << f;
		}
	}
}

/* Field value as the model stores it, from host-order dwords. */
static uint64_t model_get(const struct model_field *mf, const uint64_t dw[2])
{
	uint64_t x = dw[mf->dw] & mf->mask;

	return mf->inplace ? x : x >> mf->lo;
}

static bool model_value_ok(const struct model_field *mf, uint64_t v)
{
	unsigned width = mf->hi - mf->lo + 1;
	uint64_t wmax = width == 64 ? ~0ull : (1ull << width) - 1;

	if (mf->inplace)
		return !(v & ~mf->mask) && !(mf->ones_bad && v == mf->mask);
	return v <= wmax && !(mf->ones_bad && v == wmax);
}

#define SENTINEL 0x5a5a5a5a5a5a5a5aull

static void decode_case(const uint64_t dw[2])
{
	struct hwt_smmu_cmd c;
	unsigned op = dw[0] & 0xff;
	int want, r;

	memset(&c, 0, sizeof(c));
	for (unsigned f = 0; f < HWT_SMMU_F_COUNT; f++)
		c.f[f] = SENTINEL;
	c.has = 0xffffffffu;
	r = hwt_smmu_decode(dw, &c);

	if (!m.known[op]) {
		want = -ENOENT;
	} else if ((dw[0] & ~m.own[op][0]) || (dw[1] & ~m.own[op][1])) {
		want = -EINVAL; /* a reserved bit */
	} else {
		want = 0;
		for (unsigned f = 0; f < HWT_SMMU_F_COUNT; f++)
			if (m.f[op][f].has && !model_value_ok(&m.f[op][f], model_get(&m.f[op][f], dw)))
				want = -EINVAL;
	}
	FUZZ_ASSERT(r == want, "decode(0x%016llx, 0x%016llx) = %d, the model says %d",
		    (unsigned long long)dw[0], (unsigned long long)dw[1], r, want);
	FUZZ_ASSERT(c.op == op, "decode wrote op 0x%x for 0x%x", c.op, op);
	if (r) {
		FUZZ_ASSERT(c.has == 0, "has 0x%x after error %d", c.has, r);
	} else {
		uint64_t back[2] = { SENTINEL, SENTINEL };

		FUZZ_ASSERT(c.has == m.fields[op], "has 0x%x, op's fields 0x%x", c.has,
			    m.fields[op]);
		for (unsigned f = 0; f < HWT_SMMU_F_COUNT; f++) {
			if (m.f[op][f].has)
				FUZZ_ASSERT(c.f[f] == model_get(&m.f[op][f], dw),
					    "field %s = 0x%llx", hwt_smmu_field_name(f),
					    (unsigned long long)c.f[f]);
		}
		r = hwt_smmu_encode(&c, back);
		FUZZ_ASSERT(r == 0 && back[0] == dw[0] && back[1] == dw[1],
			    "re-encode of an accepted command: %d, 0x%016llx 0x%016llx", r,
			    (unsigned long long)back[0], (unsigned long long)back[1]);
	}
	for (unsigned f = 0; f < HWT_SMMU_F_COUNT; f++)
		if (!m.known[op] || !m.f[op][f].has)
			FUZZ_ASSERT(c.f[f] == SENTINEL, "decode wrote field %u of another opcode", f);
}

/*
 * The command: 1 byte opcode choice (< 0xe0: a known opcode, else the raw
 * next byte), 4 bytes has (masked to the opcode's fields unless its top
 * bit is set), then per field present 1 flag byte and 8 value bytes (flag
 * bit 0: fitted to the field, so most values are valid).
 */
static void encode_case(struct fuzz_in *in)
{
	struct hwt_smmu_cmd c;
	uint64_t dw[2] = { SENTINEL, SENTINEL };
	unsigned sel = (unsigned)fuzz_take(in, 1), op;
	uint32_t has;
	int want = 0, r;

	memset(&c, 0, sizeof(c));
	op = sel < 0xe0 ? m.ops[sel % m.nops] : (unsigned)fuzz_take(in, 1);
	has = (uint32_t)fuzz_take(in, 4);
	if (!(has >> 31))
		has &= m.fields[op];
	c.op = (uint8_t)op;
	c.has = has;
	for (uint32_t b = has; b; b &= b - 1) {
		unsigned f = (unsigned)__builtin_ctz(b);
		unsigned flag = (unsigned)fuzz_take(in, 1);
		uint64_t v = fuzz_take(in, 8);

		if (f >= HWT_SMMU_F_COUNT)
			continue;
		if ((flag & 1) && m.known[op] && m.f[op][f].has) {
			const struct model_field *mf = &m.f[op][f];

			v = mf->inplace ? v & mf->mask : v & (mf->mask >> mf->lo);
		}
		c.f[f] = v;
	}

	if (!m.known[op]) {
		want = -ENOENT;
	} else if (has & ~m.fields[op]) {
		want = -EINVAL;
	} else {
		for (uint32_t b = has; b; b &= b - 1) {
			unsigned f = (unsigned)__builtin_ctz(b);

			if (!model_value_ok(&m.f[op][f], c.f[f]))
				want = -EINVAL;
		}
	}
	r = hwt_smmu_encode(&c, dw);
	FUZZ_ASSERT(r == want, "encode(op 0x%x, has 0x%x) = %d, the model says %d", op, has, r,
		    want);
	if (r) {
		FUZZ_ASSERT(dw[0] == SENTINEL && dw[1] == SENTINEL, "encode wrote dw on error %d", r);
		return;
	}
	{
		struct hwt_smmu_cmd d;

		memset(&d, 0, sizeof(d));
		r = hwt_smmu_decode(dw, &d);
		FUZZ_ASSERT(r == 0, "decode of an encoded command (op 0x%x): %d", op, r);
		FUZZ_ASSERT(d.op == op && d.has == m.fields[op], "op 0x%x has 0x%x", d.op, d.has);
		for (unsigned f = 0; f < HWT_SMMU_F_COUNT; f++) {
			if (!m.f[op][f].has)
				continue;
			FUZZ_ASSERT(d.f[f] == (has >> f & 1 ? c.f[f] : 0),
				    "%s: encoded 0x%llx, decoded 0x%llx", hwt_smmu_field_name(f),
				    (unsigned long long)(has >> f & 1 ? c.f[f] : 0),
				    (unsigned long long)d.f[f]);
		}
	}
	decode_case(dw);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	uint64_t dw[2];

	model_init();
	dw[0] = fuzz_take(&in, 8);
	dw[1] = fuzz_take(&in, 8);
	decode_case(dw);
	if (in.n)
		encode_case(&in);
	return 0;
}
