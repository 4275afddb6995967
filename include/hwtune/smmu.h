/* SPDX-License-Identifier: MIT */
/*
 * SMMUv3 commands: opcodes, fields, encode and decode, and the register
 * constants shared by the queue (driver side) and the software SMMU.
 *
 * A command is 16 bytes: two little-endian 64-bit dwords, dw[0] and dw[1].
 * Every field of every opcode comes from one table, HWT_SMMU_CMD_FIELDS:
 * F(opcode, field, dword, hi, lo).  Fields marked in HWT_SMMU_INPLACE_FIELDS
 * are addresses kept in place: their value is the byte address whose bits
 * [hi:lo] are stored in bits [hi:lo] of the dword (the low bits must be 0).
 * Every other field value is stored shifted down (value << lo).
 */
#ifndef HWTUNE_SMMU_H
#define HWTUNE_SMMU_H

#include <stdint.h>

#include "hwtune/api.h"

HWT_BEGIN_DECLS

/* X(name, opcode) */
#define HWT_SMMU_OPCODES(X)            \
	X(PREFETCH_CONFIG, 0x01)       \
	X(PREFETCH_ADDR, 0x02)         \
	X(CFGI_STE, 0x03)              \
	X(CFGI_ALL, 0x04)              \
	X(CFGI_CD, 0x05)               \
	X(CFGI_CD_ALL, 0x06)           \
	X(TLBI_NH_ALL, 0x10)           \
	X(TLBI_NH_ASID, 0x11)          \
	X(TLBI_NH_VA, 0x12)            \
	X(TLBI_NH_VAA, 0x13)           \
	X(TLBI_EL2_ALL, 0x20)          \
	X(TLBI_EL2_ASID, 0x21)         \
	X(TLBI_EL2_VA, 0x22)           \
	X(TLBI_S12_VMALL, 0x28)        \
	X(TLBI_S2_IPA, 0x2a)           \
	X(TLBI_NSNH_ALL, 0x30)         \
	X(ATC_INV, 0x40)               \
	X(PRI_RESP, 0x41)              \
	X(RESUME, 0x44)                \
	X(STALL_TERM, 0x45)            \
	X(CMD_SYNC, 0x46)

/* CFGI_STE_RANGE shares CFGI_ALL's opcode (CFGI_ALL is RANGE = 31). */
#define HWT_SMMU_OP_CFGI_STE_RANGE HWT_SMMU_OP_CFGI_ALL

/* Every field name used by any opcode. */
#define HWT_SMMU_FIELD_NAMES(X)                                                        \
	X(SSV) X(SSID) X(SID) X(LEAF) X(RANGE) X(VMID) X(ASID) X(NUM) X(SCALE) X(TTL)  \
	X(TG) X(ADDR) X(SIZE) X(GLOBAL) X(GRPID) X(RESP) X(STAG) X(CS) X(MSH)          \
	X(MSIATTR) X(MSIDATA) X(MSIADDR)

#define HWT_SMMU_INPLACE_FIELDS(X) X(ADDR) X(MSIADDR)

/* F(opcode, field, dword, hi, lo) */
#define HWT_SMMU_CMD_FIELDS(F)                          \
	F(PREFETCH_CONFIG, SSV, 0, 11, 11)              \
	F(PREFETCH_CONFIG, SSID, 0, 31, 12)             \
	F(PREFETCH_CONFIG, SID, 0, 63, 32)              \
	F(PREFETCH_ADDR, SSV, 0, 11, 11)                \
	F(PREFETCH_ADDR, SSID, 0, 31, 12)               \
	F(PREFETCH_ADDR, SID, 0, 63, 32)                \
	F(PREFETCH_ADDR, SIZE, 1, 4, 0)                 \
	F(PREFETCH_ADDR, ADDR, 1, 63, 12)               \
	F(CFGI_STE, SID, 0, 63, 32)                     \
	F(CFGI_STE, LEAF, 1, 0, 0)                      \
	F(CFGI_ALL, SID, 0, 63, 32)                     \
	F(CFGI_ALL, RANGE, 1, 4, 0)                     \
	F(CFGI_CD, SSID, 0, 31, 12)                     \
	F(CFGI_CD, SID, 0, 63, 32)                      \
	F(CFGI_CD, LEAF, 1, 0, 0)                       \
	F(CFGI_CD_ALL, SID, 0, 63, 32)                  \
	F(TLBI_NH_ALL, VMID, 0, 47, 32)                 \
	F(TLBI_NH_ASID, VMID, 0, 47, 32)                \
	F(TLBI_NH_ASID, ASID, 0, 63, 48)                \
	F(TLBI_NH_VA, NUM, 0, 16, 12)                   \
	F(TLBI_NH_VA, SCALE, 0, 24, 20)                 \
	F(TLBI_NH_VA, VMID, 0, 47, 32)                  \
	F(TLBI_NH_VA, ASID, 0, 63, 48)                  \
	F(TLBI_NH_VA, LEAF, 1, 0, 0)                    \
	F(TLBI_NH_VA, TTL, 1, 9, 8)                     \
	F(TLBI_NH_VA, TG, 1, 11, 10)                    \
	F(TLBI_NH_VA, ADDR, 1, 63, 12)                  \
	F(TLBI_NH_VAA, NUM, 0, 16, 12)                  \
	F(TLBI_NH_VAA, SCALE, 0, 24, 20)                \
	F(TLBI_NH_VAA, VMID, 0, 47, 32)                 \
	F(TLBI_NH_VAA, LEAF, 1, 0, 0)                   \
	F(TLBI_NH_VAA, TTL, 1, 9, 8)                    \
	F(TLBI_NH_VAA, TG, 1, 11, 10)                   \
	F(TLBI_NH_VAA, ADDR, 1, 63, 12)                 \
	F(TLBI_EL2_ASID, ASID, 0, 63, 48)               \
	F(TLBI_EL2_VA, NUM, 0, 16, 12)                  \
	F(TLBI_EL2_VA, SCALE, 0, 24, 20)                \
	F(TLBI_EL2_VA, ASID, 0, 63, 48)                 \
	F(TLBI_EL2_VA, LEAF, 1, 0, 0)                   \
	F(TLBI_EL2_VA, TTL, 1, 9, 8)                    \
	F(TLBI_EL2_VA, TG, 1, 11, 10)                   \
	F(TLBI_EL2_VA, ADDR, 1, 63, 12)                 \
	F(TLBI_S12_VMALL, VMID, 0, 47, 32)              \
	F(TLBI_S2_IPA, NUM, 0, 16, 12)                  \
	F(TLBI_S2_IPA, SCALE, 0, 24, 20)                \
	F(TLBI_S2_IPA, VMID, 0, 47, 32)                 \
	F(TLBI_S2_IPA, LEAF, 1, 0, 0)                   \
	F(TLBI_S2_IPA, TTL, 1, 9, 8)                    \
	F(TLBI_S2_IPA, TG, 1, 11, 10)                   \
	F(TLBI_S2_IPA, ADDR, 1, 51, 12)                 \
	F(ATC_INV, GLOBAL, 0, 9, 9)                     \
	F(ATC_INV, SSV, 0, 11, 11)                      \
	F(ATC_INV, SSID, 0, 31, 12)                     \
	F(ATC_INV, SID, 0, 63, 32)                      \
	F(ATC_INV, SIZE, 1, 5, 0)                       \
	F(ATC_INV, ADDR, 1, 63, 12)                     \
	F(PRI_RESP, SSV, 0, 11, 11)                     \
	F(PRI_RESP, SSID, 0, 31, 12)                    \
	F(PRI_RESP, SID, 0, 63, 32)                     \
	F(PRI_RESP, GRPID, 1, 8, 0)                     \
	F(PRI_RESP, RESP, 1, 13, 12)                    \
	F(RESUME, RESP, 0, 13, 12)                      \
	F(RESUME, SID, 0, 63, 32)                       \
	F(RESUME, STAG, 1, 15, 0)                       \
	F(STALL_TERM, SID, 0, 63, 32)                   \
	F(CMD_SYNC, CS, 0, 13, 12)                      \
	F(CMD_SYNC, MSH, 0, 23, 22)                     \
	F(CMD_SYNC, MSIATTR, 0, 27, 24)                 \
	F(CMD_SYNC, MSIDATA, 0, 63, 32)                 \
	F(CMD_SYNC, MSIADDR, 1, 51, 2)

enum hwt_smmu_op {
#define HWT__OP(name, code) HWT_SMMU_OP_##name = code,
	HWT_SMMU_OPCODES(HWT__OP)
#undef HWT__OP
};

enum hwt_smmu_field {
#define HWT__FIELD(name) HWT_SMMU_F_##name,
	HWT_SMMU_FIELD_NAMES(HWT__FIELD)
#undef HWT__FIELD
	HWT_SMMU_F_COUNT
};

/* CMD_SYNC.CS, PRI_RESP.RESP, RESUME.RESP and CERROR values */
enum { HWT_SMMU_CS_NONE = 0, HWT_SMMU_CS_IRQ = 1, HWT_SMMU_CS_SEV = 2 };
enum { HWT_SMMU_PRI_DENY = 0, HWT_SMMU_PRI_FAIL = 1, HWT_SMMU_PRI_SUCC = 2 };
enum { HWT_SMMU_RESUME_TERM = 0, HWT_SMMU_RESUME_RETRY = 1, HWT_SMMU_RESUME_ABORT = 2 };
enum {
	HWT_SMMU_CERROR_NONE = 0,
	HWT_SMMU_CERROR_ILL = 1,
	HWT_SMMU_CERROR_ABT = 2,
	HWT_SMMU_CERROR_ATC_INV_SYNC = 3,
};
#define HWT_SMMU_SYNC_MSH_IS 3u     /* Inner Shareable */
#define HWT_SMMU_SYNC_MSIATTR_WB 0xfu /* Outer/Inner write-back */

/*
 * A command as opcode plus field values.  has is a bitmask of (1 << field)
 * for the fields that are set; encode rejects fields the opcode does not
 * have.  decode fills every field of the opcode (has says which).
 */
struct hwt_smmu_cmd {
	uint8_t op;
	uint32_t has;
	uint64_t f[HWT_SMMU_F_COUNT];
};

/* Set a field and mark it present. */
static inline void hwt_smmu_cmd_set(struct hwt_smmu_cmd *c, enum hwt_smmu_field f, uint64_t v)
{
	c->f[f] = v;
	c->has |= 1u << f;
}

/*
 * Encode into dw[2] (host order; the queue stores them little-endian).
 * -ENOENT unknown opcode; -EINVAL a field the opcode lacks or a value out of
 * range (too wide, in-place address with low bits set, RESP 3).
 */
HWT_API int hwt_smmu_encode(const struct hwt_smmu_cmd *c, uint64_t dw[2]);
/* Decode dw[2].  -ENOENT unknown opcode; -EINVAL reserved bits set or a
 * field holds an architecturally invalid value. */
HWT_API int hwt_smmu_decode(const uint64_t dw[2], struct hwt_smmu_cmd *c);
/* "CMD_SYNC", NULL for an unknown opcode. */
HWT_API const char *hwt_smmu_op_name(unsigned op);
/* Opcode by name (case-insensitive), -ENOENT if none. */
HWT_API int hwt_smmu_op_by_name(const char *name);
/* "MSIADDR" */
HWT_API const char *hwt_smmu_field_name(enum hwt_smmu_field f);
/* Does opcode op have field f?  Bit position in *dword, *hi, *lo if so. */
HWT_API int hwt_smmu_field_layout(unsigned op, enum hwt_smmu_field f, unsigned *dword,
				  unsigned *hi, unsigned *lo);

/*
 * Notes on the functions above.
 * - Byte order: dw[] is host order.  Queue memory holds little-endian
 *   dwords: store htole64(dw[i]), load le64toh(slot[i]).
 * - decode writes c->op (also on error, but not for a NULL argument),
 *   c->has (0 on error) and f[] of the opcode's own fields; the other f[]
 *   entries are left as they were.
 *   Reserved bits are every bit outside [7:0] and the opcode's fields (so
 *   SSec, dw0 bit 10, is rejected: the device reports CERROR_ILL for it).
 * - encode writes dw[] only on success; fields the opcode has but c->has
 *   lacks encode as 0.
 * - field_layout returns 1 (has it, outputs set; any may be NULL), 0 (not
 *   a field of op), -ENOENT (unknown op), -EINVAL (f out of range).
 */

/*
 * Header-only fast paths: no checks, and when op and f are constants the
 * compiler folds the table lookup away (at -O1 and above).  Use them where
 * a command is built or read per operation; use encode/decode elsewhere.
 */
static inline unsigned hwt__smmu_dw(unsigned op, unsigned f)
{
#define HWT__SEL(o, fl, d, h, l) (op == HWT_SMMU_OP_##o && f == HWT_SMMU_F_##fl) ? (d) :
	return HWT_SMMU_CMD_FIELDS(HWT__SEL) 0;
#undef HWT__SEL
}

static inline uint64_t hwt__smmu_mask(unsigned op, unsigned f)
{
#define HWT__SEL(o, fl, d, h, l) \
	(op == HWT_SMMU_OP_##o && f == HWT_SMMU_F_##fl) ? (~0ull >> (63 - (h))) & (~0ull << (l)) :
	return HWT_SMMU_CMD_FIELDS(HWT__SEL) 0;
#undef HWT__SEL
}

/* How far a value is shifted into place: lo, 0 for an in-place address. */
static inline unsigned hwt__smmu_shift(unsigned op, unsigned f)
{
#define HWT__INPL(x) f == HWT_SMMU_F_##x ||
#define HWT__SEL(o, fl, d, h, l) (op == HWT_SMMU_OP_##o && f == HWT_SMMU_F_##fl) ? (l) :
	return (HWT_SMMU_INPLACE_FIELDS(HWT__INPL) 0) ? 0 : HWT_SMMU_CMD_FIELDS(HWT__SEL) 0;
#undef HWT__SEL
#undef HWT__INPL
}

/* The opcode of a command: dw0 bits [7:0]. */
static inline unsigned hwt_smmu_opcode(const uint64_t dw[2])
{
	return (unsigned)(dw[0] & 0xff);
}

/* Field f of opcode op from host-order dwords. */
static inline uint64_t hwt_smmu_get(const uint64_t dw[2], unsigned op, enum hwt_smmu_field f)
{
	return (dw[hwt__smmu_dw(op, f)] & hwt__smmu_mask(op, f)) >> hwt__smmu_shift(op, f);
}

/* OR value v of field f into dw[] (v must fit; excess bits are dropped). */
static inline void hwt_smmu_put(uint64_t dw[2], unsigned op, enum hwt_smmu_field f, uint64_t v)
{
	dw[hwt__smmu_dw(op, f)] |= (v << hwt__smmu_shift(op, f)) & hwt__smmu_mask(op, f);
}

/*
 * CMD_SYNC as the kernel builds it: CS (HWT_SMMU_CS_*), MSH Inner
 * Shareable, MSIATTR write-back, MSIDATA 0, MSIADDR = msiaddr (bits
 * [51:2]; 0 when not polling an MSI).
 */
static inline void hwt_smmu_sync_build(uint64_t dw[2], unsigned cs, uint64_t msiaddr)
{
	dw[0] = HWT_SMMU_OP_CMD_SYNC;
	dw[1] = 0;
	hwt_smmu_put(dw, HWT_SMMU_OP_CMD_SYNC, HWT_SMMU_F_CS, cs);
	hwt_smmu_put(dw, HWT_SMMU_OP_CMD_SYNC, HWT_SMMU_F_MSH, HWT_SMMU_SYNC_MSH_IS);
	hwt_smmu_put(dw, HWT_SMMU_OP_CMD_SYNC, HWT_SMMU_F_MSIATTR, HWT_SMMU_SYNC_MSIATTR_WB);
	hwt_smmu_put(dw, HWT_SMMU_OP_CMD_SYNC, HWT_SMMU_F_MSIADDR, msiaddr);
}

/* ---- Range helpers (notes §1.11) ---------------------------------------- */

/*
 * ATC_INV covering [addr, addr + size): the smallest naturally aligned span
 * of 4 KiB pages that holds it, as ADDR (aligned down) and SIZE (log2 of
 * the span in pages).  size 0, or a span of 2^52 pages (the whole 64-bit
 * space, e.g. addr 0 or 1 with size UINT64_MAX): the whole ATC (SIZE 52,
 * ADDR 0).  Sets ADDR and SIZE in c; c->op is the caller's.  0, or -EINVAL:
 * c NULL, or the span runs past the top (addr + size > 2^64), and then c is
 * set to the whole ATC all the same.
 *
 * The rule for both range helpers (this and hwt_smmu_tlbi_range_init): a
 * helper never covers less than asked, and a span that wraps past 2^64 is
 * an error (-EINVAL), neither clamped nor silently widened.  Clamping it at
 * the top would drop the pages after the wrap (an invalidation smaller than
 * asked: stale translations stay).  Widening it to everything silently is
 * possible here (the whole ATC) but not for a TLBI by address, which has no
 * "everything" form, and it would hide the caller's error: no address lies
 * past the top, so such a size is an underflowed length or a wrong end,
 * best reported.  A span that ends exactly at the top (addr + size == 2^64)
 * is fine.
 */
HWT_API int hwt_smmu_atc_inv_range(struct hwt_smmu_cmd *c, uint64_t addr, uint64_t size);
/* The same without the error (its older form, kept for the ABI): a span
 * past the top gets the whole ATC, never less; NULL c does nothing.  New
 * code should call hwt_smmu_atc_inv_range and check. */
HWT_API void hwt_smmu_atc_inv_span(struct hwt_smmu_cmd *c, uint64_t addr, uint64_t size);

/*
 * TLBI by address over [iova, iova + size), one command per call of _next.
 * tg_log2: translation granule (12, 14, 16); granule_log2: size of the leaf
 * entries being invalidated (a page or a block of that table: tg_log2 +
 * k * (tg_log2 - 3), k = 0..2); leaf: last level only; range: the SMMU has
 * range invalidation (IDR3.RIL), so each command covers (NUM + 1) << SCALE
 * pages and carries TG and (if leaf) TTL; otherwise one command per entry.
 */
struct hwt_smmu_tlbi_range {
	uint64_t iova, end, pages, step;
	uint8_t tg, ttl, leaf, range, done;
};
/* 0, or -EINVAL (granules, alignment to the page, size 0, or a span past
 * the top: iova + size > 2^64, the rule above). */
HWT_API int hwt_smmu_tlbi_range_init(struct hwt_smmu_tlbi_range *r, uint64_t iova,
				     uint64_t size, unsigned tg_log2, unsigned granule_log2,
				     int leaf, int range);
/* Set ADDR, LEAF, NUM, SCALE, TG, TTL of c for the next command; 1 if one
 * was produced, 0 when the range is covered.  c->op (TLBI_NH_VA, _NH_VAA,
 * _EL2_VA or _S2_IPA) and the ASID/VMID fields are the caller's. */
HWT_API int hwt_smmu_tlbi_range_next(struct hwt_smmu_tlbi_range *r, struct hwt_smmu_cmd *c);

/* ---- Registers (offsets and bits as in the SMMUv3 architecture) ---------- */
#define HWT_SMMU_IDR0_COHACC (1u << 4)
#define HWT_SMMU_IDR0_MSI (1u << 13)
#define HWT_SMMU_IDR0_SEV (1u << 14)
#define HWT_SMMU_IDR1_CMDQS_SHIFT 21
#define HWT_SMMU_IDR1_CMDQS_MASK 0x1fu
#define HWT_SMMU_CR0_CMDQEN (1u << 3)
#define HWT_SMMU_CONS_ERR_SHIFT 24
#define HWT_SMMU_CONS_ERR_MASK 0x7fu
#define HWT_SMMU_GERROR_CMDQ_ERR (1u << 0)
#define HWT_SMMU_GERROR_MSI_CMDQ_ABT (1u << 4)
#define HWT_SMMU_CMDQ_OVF (1u << 31)

HWT_END_DECLS

#endif
