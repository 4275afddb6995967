/* SPDX-License-Identifier: MIT */
/*
 * The software SMMU's cache models: a configuration cache (STEs by StreamID,
 * CDs by StreamID + SubstreamID), an IOTLB tagged like the architecture's
 * (VMID, ASID or global, address, size; non-hyp, EL2 and stage-2 entries)
 * and an endpoint ATC.  They hold no translations, only tags: they exist so
 * tests can see that a completed CMD_SYNC implies every earlier invalidation
 * took effect.
 *
 * Matching rules (what each command drops):
 *   CFGI_STE        the STE of SID and every CD of SID
 *   CFGI_ALL        STEs and CDs of 2^(RANGE+1) SIDs around SID (RANGE 31: all)
 *   CFGI_CD         the CD (SID, SSID);  CFGI_CD_ALL  every CD of SID
 *   TLBI_NH_ALL     NH entries of VMID;  TLBI_NH_ASID  NH, VMID, ASID, not global
 *   TLBI_NH_VA      NH, VMID, ASID or global, overlapping the address range
 *   TLBI_NH_VAA     NH, VMID, any ASID, overlapping
 *   TLBI_EL2_ALL    EL2 entries;  TLBI_EL2_ASID  EL2, ASID, not global
 *   TLBI_EL2_VA     EL2, ASID or global, overlapping
 *   TLBI_S12_VMALL  NH and S2 entries of VMID
 *   TLBI_S2_IPA     S2 entries of VMID overlapping the IPA range
 *   TLBI_NSNH_ALL   every NH and S2 entry
 *   ATC_INV         ATC entries of SID (of SSID if SSV, else any) overlapping
 *                   the 2^SIZE-page span that contains ADDR (SIZE >= 52: all)
 * The address range of a TLBI *_VA / S2_IPA is the page holding ADDR when
 * TG = 0, else (NUM + 1) << SCALE pages of the TG granule (4K, 16K, 64K)
 * from ADDR.  LEAF and TTL are hints about page-table levels: the model has
 * no walk cache, so they change nothing.
 */
#include "device/impl.h"

#include <errno.h>
#include <string.h>

int hwt__model_init(struct hwt__model *c)
{
	memset(c, 0, sizeof(*c));
	return -pthread_mutex_init(&c->lock, NULL);
}

void hwt__model_destroy(struct hwt__model *c)
{
	pthread_mutex_destroy(&c->lock);
}

static void count_add(struct hwt__model *c, int d)
{
	uint32_t n = atomic_load_explicit(&c->count, memory_order_relaxed);

	atomic_store_explicit(&c->count, n + (uint32_t)d, memory_order_relaxed);
}

/* [lo, hi) with hi = 0 meaning "to the top of the address space". */
struct range {
	uint64_t lo, hi;
};

static bool overlaps(uint64_t addr, unsigned size_log2, struct range r)
{
	uint64_t end = size_log2 >= 64 ? 0 : addr + (1ull << size_log2); /* 0: wraps to top */

	if (r.hi && addr >= r.hi)
		return false;
	return end == 0 || end > r.lo;
}

/* The address range of a TLBI by address (see the header comment). */
static struct range tlbi_range(const struct hwt_smmu_cmd *cmd)
{
	uint64_t addr = cmd->f[HWT_SMMU_F_ADDR];
	uint64_t tg = cmd->f[HWT_SMMU_F_TG];
	struct range r = { addr, addr + 1 };

	if (tg) {
		unsigned shift = 10 + 2 * (unsigned)tg; /* 1: 4K, 2: 16K, 3: 64K */
		uint64_t pages = (cmd->f[HWT_SMMU_F_NUM] + 1) << cmd->f[HWT_SMMU_F_SCALE];
		uint64_t bytes = pages << shift; /* at most 32 << 31 << 16 = 2^52 */

		r.hi = addr + bytes < addr ? 0 : addr + bytes;
	}
	return r;
}

static struct range atc_range(const struct hwt_smmu_cmd *cmd)
{
	uint64_t size = cmd->f[HWT_SMMU_F_SIZE];
	struct range r = { 0, 0 };

	if (size < 52) {
		uint64_t span = 4096ull << size;

		r.lo = cmd->f[HWT_SMMU_F_ADDR] & ~(span - 1);
		r.hi = r.lo + span;
	}
	return r;
}

enum tlb_match {
	M_VMID = 1,   /* entry.vmid == VMID */
	M_ASID = 2,   /* entry.asid == ASID, global entries excluded */
	M_ASID_G = 4, /* entry.asid == ASID or entry global */
	M_RANGE = 8,  /* overlaps the address range */
};

static unsigned tlb_drop(struct hwt__model *c, unsigned kinds, unsigned match,
			 const struct hwt_smmu_cmd *cmd)
{
	struct range r = { 0, 0 };
	uint16_t vmid = (uint16_t)cmd->f[HWT_SMMU_F_VMID];
	uint16_t asid = (uint16_t)cmd->f[HWT_SMMU_F_ASID];
	unsigned n = 0;

	if (match & M_RANGE)
		r = tlbi_range(cmd);
	for (unsigned i = 0; i < HWT__TLB_ENTRIES; i++) {
		struct hwt__tlb_ent *e = &c->tlb[i];

		if (!e->valid || !(kinds & (1u << e->kind)))
			continue;
		if ((match & M_VMID) && e->vmid != vmid)
			continue;
		if ((match & M_ASID) && (e->global || e->asid != asid))
			continue;
		if ((match & M_ASID_G) && !e->global && e->asid != asid)
			continue;
		if ((match & M_RANGE) && !overlaps(e->addr, e->size_log2, r))
			continue;
		e->valid = false;
		n++;
	}
	return n;
}

/* STEs (if ste) and CDs of SIDs in [lo, lo + span); span 0 = every SID.
 * ssid_only >= 0: only the CD with that SSID. */
static unsigned cfg_drop(struct hwt__model *c, bool ste, uint32_t lo, uint64_t span,
			 int64_t ssid_only)
{
	unsigned n = 0;

	for (unsigned i = 0; i < HWT__CFG_ENTRIES; i++) {
		struct hwt__cfg_ent *e = &c->cfg[i];

		if (!e->valid || (span && (e->sid < lo || e->sid - lo >= span)))
			continue;
		if (e->kind == HWT_SMMU_CFG_STE ? !ste
						: (ssid_only >= 0 && e->ssid != (uint64_t)ssid_only))
			continue;
		e->valid = false;
		n++;
	}
	return n;
}

static unsigned atc_drop(struct hwt__model *c, const struct hwt_smmu_cmd *cmd)
{
	struct range r = atc_range(cmd);
	uint32_t sid = (uint32_t)cmd->f[HWT_SMMU_F_SID];
	bool ssv = cmd->f[HWT_SMMU_F_SSV] != 0;
	uint32_t ssid = (uint32_t)cmd->f[HWT_SMMU_F_SSID];
	unsigned n = 0;

	for (unsigned i = 0; i < HWT__ATC_ENTRIES; i++) {
		struct hwt__atc_ent *e = &c->atc[i];

		if (!e->valid || e->sid != sid || (ssv && e->ssid != ssid))
			continue;
		if (!overlaps(e->addr, e->size_log2, r))
			continue;
		e->valid = false;
		n++;
	}
	return n;
}

#define K_NH (1u << HWT_SMMU_TLB_NH)
#define K_EL2 (1u << HWT_SMMU_TLB_EL2)
#define K_S2 (1u << HWT_SMMU_TLB_S2)

static unsigned exec_locked(struct hwt__model *c, const struct hwt_smmu_cmd *cmd)
{
	uint32_t sid = (uint32_t)cmd->f[HWT_SMMU_F_SID];

	switch (cmd->op) {
	case HWT_SMMU_OP_CFGI_STE:
		return cfg_drop(c, true, sid, 1, -1);
	case HWT_SMMU_OP_CFGI_ALL: {
		unsigned bits = (unsigned)cmd->f[HWT_SMMU_F_RANGE] + 1;
		uint64_t span = bits >= 32 ? 0 : 1ull << bits;

		return cfg_drop(c, true, span ? sid & ~(uint32_t)(span - 1) : 0, span, -1);
	}
	case HWT_SMMU_OP_CFGI_CD:
		return cfg_drop(c, false, sid, 1, (int64_t)cmd->f[HWT_SMMU_F_SSID]);
	case HWT_SMMU_OP_CFGI_CD_ALL:
		return cfg_drop(c, false, sid, 1, -1);
	case HWT_SMMU_OP_TLBI_NH_ALL:
		return tlb_drop(c, K_NH, M_VMID, cmd);
	case HWT_SMMU_OP_TLBI_NH_ASID:
		return tlb_drop(c, K_NH, M_VMID | M_ASID, cmd);
	case HWT_SMMU_OP_TLBI_NH_VA:
		return tlb_drop(c, K_NH, M_VMID | M_ASID_G | M_RANGE, cmd);
	case HWT_SMMU_OP_TLBI_NH_VAA:
		return tlb_drop(c, K_NH, M_VMID | M_RANGE, cmd);
	case HWT_SMMU_OP_TLBI_EL2_ALL:
		return tlb_drop(c, K_EL2, 0, cmd);
	case HWT_SMMU_OP_TLBI_EL2_ASID:
		return tlb_drop(c, K_EL2, M_ASID, cmd);
	case HWT_SMMU_OP_TLBI_EL2_VA:
		return tlb_drop(c, K_EL2, M_ASID_G | M_RANGE, cmd);
	case HWT_SMMU_OP_TLBI_S12_VMALL:
		return tlb_drop(c, K_NH | K_S2, M_VMID, cmd);
	case HWT_SMMU_OP_TLBI_S2_IPA:
		return tlb_drop(c, K_S2, M_VMID | M_RANGE, cmd);
	case HWT_SMMU_OP_TLBI_NSNH_ALL:
		return tlb_drop(c, K_NH | K_S2, 0, cmd);
	case HWT_SMMU_OP_ATC_INV:
		return atc_drop(c, cmd);
	default:
		return 0;
	}
}

unsigned hwt__model_exec(struct hwt__model *c, const struct hwt_smmu_cmd *cmd)
{
	unsigned n;

	pthread_mutex_lock(&c->lock);
	n = exec_locked(c, cmd);
	count_add(c, -(int)n);
	pthread_mutex_unlock(&c->lock);
	return n;
}

/* ---- test API ---------------------------------------------------------- */

int hwt_smmu_dev_cfg_insert(struct hwt_smmu_dev *dev, enum hwt_smmu_cfg_kind kind, uint32_t sid,
			    uint32_t ssid)
{
	struct hwt__model *c = dev ? &dev->model : NULL;
	struct hwt__cfg_ent *slot = NULL;
	int ret = 0;

	if (!c)
		return -EINVAL;
	if (kind != HWT_SMMU_CFG_STE && kind != HWT_SMMU_CFG_CD)
		return -EINVAL;
	if (kind == HWT_SMMU_CFG_STE)
		ssid = 0;
	else if (ssid >= 1u << 20)
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	for (unsigned i = 0; i < HWT__CFG_ENTRIES; i++) {
		struct hwt__cfg_ent *e = &c->cfg[i];

		if (e->valid && e->kind == kind && e->sid == sid && e->ssid == ssid)
			goto out;
		if (!e->valid && !slot)
			slot = e;
	}
	if (!slot) {
		ret = -ENOSPC;
		goto out;
	}
	*slot = (struct hwt__cfg_ent){ .valid = true, .kind = (uint8_t)kind, .sid = sid, .ssid = ssid };
	count_add(c, 1);
out:
	pthread_mutex_unlock(&c->lock);
	return ret;
}

bool hwt_smmu_dev_cfg_lookup(struct hwt_smmu_dev *dev, enum hwt_smmu_cfg_kind kind, uint32_t sid,
			     uint32_t ssid)
{
	struct hwt__model *c = dev ? &dev->model : NULL;
	bool hit = false;

	if (!c)
		return false;
	if (kind == HWT_SMMU_CFG_STE)
		ssid = 0;
	pthread_mutex_lock(&c->lock);
	for (unsigned i = 0; i < HWT__CFG_ENTRIES && !hit; i++) {
		const struct hwt__cfg_ent *e = &c->cfg[i];

		hit = e->valid && e->kind == (uint8_t)kind && e->sid == sid && e->ssid == ssid;
	}
	pthread_mutex_unlock(&c->lock);
	return hit;
}

/* The stored form of an entry: tags that do not apply are zero. */
static int tlb_key(const struct hwt_smmu_tlb_entry *in, struct hwt__tlb_ent *out)
{
	if (!in || (unsigned)in->kind > HWT_SMMU_TLB_S2 || in->size_log2 < 12 || in->size_log2 > 48 ||
	    (in->addr & ((1ull << in->size_log2) - 1)))
		return -EINVAL;
	*out = (struct hwt__tlb_ent){
		.valid = true,
		.global = in->kind != HWT_SMMU_TLB_S2 && in->global,
		.kind = (uint8_t)in->kind,
		.size_log2 = (uint8_t)in->size_log2,
		.vmid = in->kind == HWT_SMMU_TLB_EL2 ? 0 : in->vmid,
		.asid = in->kind == HWT_SMMU_TLB_S2 || in->global ? 0 : in->asid,
		.addr = in->addr,
	};
	return 0;
}

static bool tlb_same(const struct hwt__tlb_ent *a, const struct hwt__tlb_ent *b)
{
	return a->valid && b->valid && a->kind == b->kind && a->global == b->global &&
	       a->vmid == b->vmid && a->asid == b->asid && a->addr == b->addr &&
	       a->size_log2 == b->size_log2;
}

int hwt_smmu_dev_tlb_insert(struct hwt_smmu_dev *dev, const struct hwt_smmu_tlb_entry *in)
{
	struct hwt__model *c = dev ? &dev->model : NULL;
	struct hwt__tlb_ent e, *slot = NULL;
	int ret = tlb_key(in, &e);

	if (!c)
		return -EINVAL;
	if (ret)
		return ret;
	pthread_mutex_lock(&c->lock);
	for (unsigned i = 0; i < HWT__TLB_ENTRIES; i++) {
		struct hwt__tlb_ent *t = &c->tlb[i];

		if (tlb_same(t, &e))
			goto out;
		if (!t->valid && !slot)
			slot = t;
	}
	if (!slot) {
		ret = -ENOSPC;
		goto out;
	}
	*slot = e;
	count_add(c, 1);
out:
	pthread_mutex_unlock(&c->lock);
	return ret;
}

bool hwt_smmu_dev_tlb_lookup(struct hwt_smmu_dev *dev, enum hwt_smmu_tlb_kind kind, uint16_t vmid,
			     uint16_t asid, uint64_t addr)
{
	struct hwt__model *c = dev ? &dev->model : NULL;
	struct range r = { addr, addr + 1 };
	bool hit = false;

	if (!c)
		return false;
	pthread_mutex_lock(&c->lock);
	for (unsigned i = 0; i < HWT__TLB_ENTRIES && !hit; i++) {
		const struct hwt__tlb_ent *e = &c->tlb[i];

		if (!e->valid || e->kind != (uint8_t)kind)
			continue;
		if (kind != HWT_SMMU_TLB_EL2 && e->vmid != vmid)
			continue;
		if (kind != HWT_SMMU_TLB_S2 && !e->global && e->asid != asid)
			continue;
		hit = overlaps(e->addr, e->size_log2, r);
	}
	pthread_mutex_unlock(&c->lock);
	return hit;
}

bool hwt_smmu_dev_tlb_contains(struct hwt_smmu_dev *dev, const struct hwt_smmu_tlb_entry *in)
{
	struct hwt__model *c = dev ? &dev->model : NULL;
	struct hwt__tlb_ent e;
	bool hit = false;

	if (!c)
		return false;
	if (tlb_key(in, &e))
		return false;
	pthread_mutex_lock(&c->lock);
	for (unsigned i = 0; i < HWT__TLB_ENTRIES && !hit; i++)
		hit = tlb_same(&c->tlb[i], &e);
	pthread_mutex_unlock(&c->lock);
	return hit;
}

int hwt_smmu_dev_atc_insert(struct hwt_smmu_dev *dev, uint32_t sid, uint32_t ssid, uint64_t addr,
			    unsigned size_log2)
{
	struct hwt__model *c = dev ? &dev->model : NULL;
	struct hwt__atc_ent *slot = NULL;
	int ret = 0;

	if (!c)
		return -EINVAL;
	if (size_log2 < 12 || size_log2 > 63 || (addr & ((1ull << size_log2) - 1)) ||
	    (ssid != HWT_SMMU_ATC_NO_SSID && ssid >= 1u << 20))
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	for (unsigned i = 0; i < HWT__ATC_ENTRIES; i++) {
		struct hwt__atc_ent *e = &c->atc[i];

		if (e->valid && e->sid == sid && e->ssid == ssid && e->addr == addr &&
		    e->size_log2 == size_log2)
			goto out;
		if (!e->valid && !slot)
			slot = e;
	}
	if (!slot) {
		ret = -ENOSPC;
		goto out;
	}
	*slot = (struct hwt__atc_ent){ .valid = true, .size_log2 = (uint8_t)size_log2, .sid = sid,
				       .ssid = ssid, .addr = addr };
	count_add(c, 1);
out:
	pthread_mutex_unlock(&c->lock);
	return ret;
}

bool hwt_smmu_dev_atc_lookup(struct hwt_smmu_dev *dev, uint32_t sid, uint32_t ssid, uint64_t addr)
{
	struct hwt__model *c = dev ? &dev->model : NULL;
	struct range r = { addr, addr + 1 };
	bool hit = false;

	if (!c)
		return false;
	pthread_mutex_lock(&c->lock);
	for (unsigned i = 0; i < HWT__ATC_ENTRIES && !hit; i++) {
		const struct hwt__atc_ent *e = &c->atc[i];

		hit = e->valid && e->sid == sid && e->ssid == ssid &&
		      overlaps(e->addr, e->size_log2, r);
	}
	pthread_mutex_unlock(&c->lock);
	return hit;
}

unsigned hwt_smmu_dev_cache_count(struct hwt_smmu_dev *dev)
{
	unsigned n;

	if (!dev)
		return 0;
	pthread_mutex_lock(&dev->model.lock);
	n = atomic_load_explicit(&dev->model.count, memory_order_relaxed);
	pthread_mutex_unlock(&dev->model.lock);
	return n;
}

void hwt_smmu_dev_cache_clear(struct hwt_smmu_dev *dev)
{
	struct hwt__model *c = dev ? &dev->model : NULL;

	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	memset(c->cfg, 0, sizeof(c->cfg));
	memset(c->tlb, 0, sizeof(c->tlb));
	memset(c->atc, 0, sizeof(c->atc));
	atomic_store_explicit(&c->count, 0, memory_order_relaxed);
	pthread_mutex_unlock(&c->lock);
}
