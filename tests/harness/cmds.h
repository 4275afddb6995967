/* SPDX-License-Identifier: MIT */
/*
 * Command builders for tests: each encodes through the public codec
 * (hwt_smmu_encode) and fails the calling test if the codec refuses.
 *
 *   tst_cmd_sync(dw, HWT_SMMU_CS_SEV, 0, 0);
 *   TST_ENC(dw, TLBI_NH_VA, TST_FV(VMID, 1), TST_FV(ASID, 2), TST_FV(ADDR, va));
 */
#ifndef HWT_TEST_CMDS_H
#define HWT_TEST_CMDS_H

#include <hwtune/smmu.h>

#include <stdint.h>
#include <string.h>

/* An empty command of opcode op (no field set). */
static inline void tst_cmd_init(struct hwt_smmu_cmd *c, unsigned op)
{
	memset(c, 0, sizeof(*c));
	c->op = (uint8_t)op;
}

/* xorshift64: deterministic pseudo-random values from the seed at *s. */
static inline uint64_t tst_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A field and its value: TST_FV(SID, 7). */
struct tst_fv {
	enum hwt_smmu_field f;
	uint64_t v;
};
#define TST_FV(f, v) { HWT_SMMU_F_##f, (v) }

/* Opcode op with the n fields fv[] set (n may be 0). */
void tst_cmd_encode(uint64_t dw[2], unsigned op, const struct tst_fv *fv, unsigned n);
/* TST_ENC(dw, OPNAME, TST_FV(FIELD, value), ...): one field or more. */
#define TST_ENC(dw, op, ...)                                                   \
	do {                                                                   \
		const struct tst_fv tst_fvs[] = { __VA_ARGS__ };               \
		tst_cmd_encode(dw, HWT_SMMU_OP_##op, tst_fvs,                  \
			       sizeof(tst_fvs) / sizeof(tst_fvs[0]));          \
	} while (0)

/* CMD_SYNC: CS (HWT_SMMU_CS_*), MSH Inner Shareable, MSIATTR write-back. */
void tst_cmd_sync(uint64_t dw[2], unsigned cs, uint64_t msiaddr, uint32_t msidata);
/* PREFETCH_CONFIG with SID = seq: a harmless command that carries a number
 * (in dw0 bits [63:32]). */
void tst_cmd_seq(uint64_t dw[2], uint32_t seq);
void tst_cmd_cfgi_ste(uint64_t dw[2], uint32_t sid);
void tst_cmd_tlbi_nh_va(uint64_t dw[2], uint16_t vmid, uint16_t asid, uint64_t va);

#endif
