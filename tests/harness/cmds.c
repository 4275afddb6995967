/* SPDX-License-Identifier: MIT */
/* Command builders shared by the tests (see cmds.h). */
#include "cmds.h"

#include "harness.h"

void tst_cmd_encode(uint64_t dw[2], unsigned op, const struct tst_fv *fv, unsigned n)
{
	struct hwt_smmu_cmd c;

	memset(&c, 0, sizeof(c));
	c.op = (uint8_t)op;
	for (unsigned i = 0; i < n; i++)
		hwt_smmu_cmd_set(&c, fv[i].f, fv[i].v);
	ASSERT_OK(hwt_smmu_encode(&c, dw));
}

void tst_cmd_sync(uint64_t dw[2], unsigned cs, uint64_t msiaddr, uint32_t msidata)
{
	TST_ENC(dw, CMD_SYNC, TST_FV(CS, cs), TST_FV(MSH, HWT_SMMU_SYNC_MSH_IS),
		TST_FV(MSIATTR, HWT_SMMU_SYNC_MSIATTR_WB), TST_FV(MSIADDR, msiaddr),
		TST_FV(MSIDATA, msidata));
}

void tst_cmd_seq(uint64_t dw[2], uint32_t seq)
{
	TST_ENC(dw, PREFETCH_CONFIG, TST_FV(SID, seq));
}

void tst_cmd_cfgi_ste(uint64_t dw[2], uint32_t sid)
{
	TST_ENC(dw, CFGI_STE, TST_FV(SID, sid));
}

void tst_cmd_tlbi_nh_va(uint64_t dw[2], uint16_t vmid, uint16_t asid, uint64_t va)
{
	TST_ENC(dw, TLBI_NH_VA, TST_FV(VMID, vmid), TST_FV(ASID, asid), TST_FV(ADDR, va));
}
