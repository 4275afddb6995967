/* SPDX-License-Identifier: MIT */
/*
 * The software SMMU, driven directly through its register file by a minimal
 * in-test producer (no src/cmdq): in-order execution, CONS and its wrap bit,
 * CONS batching, CMD_SYNC signalling (MSI, 64-bit quirk, SEV, wired IRQ),
 * command errors and their acknowledgement, fault injection, the cache
 * models, pause/stop and bounded doorbell sleeps.
 */
#include "harness/harness.h"
#include "harness/cmds.h"

#include "common/time.h"
#include "device/device.h"
#include "hwtune/device.h"

#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- a minimal producer ------------------------------------------------- */

struct tq {
	struct hwt_smmu_dev *dev;
	struct hwt__smmu_regs *r;
	uint64_t *mem; /* 2 dwords per entry, little-endian */
	uint64_t iova;
	unsigned n;    /* log2 entries */
	uint32_t prod; /* WRP | IDX */
};

static uint32_t ptr_mask(const struct tq *t)
{
	return (2u << t->n) - 1;
}

static uint32_t idx(const struct tq *t, uint32_t p)
{
	return p & ((1u << t->n) - 1);
}

static void tq_setup(struct tq *t, const struct hwt_smmu_dev_config *cfg, unsigned n)
{
	size_t bytes = (size_t)16 << n;

	memset(t, 0, sizeof(*t));
	t->n = n;
	ASSERT_OK(hwt_smmu_dev_create(&t->dev, cfg));
	t->r = hwt__smmu_dev_regs(t->dev);
	t->mem = aligned_alloc(bytes < 4096 ? 4096 : bytes, bytes < 4096 ? 4096 : bytes);
	ASSERT_TRUE(t->mem);
	memset(t->mem, 0, bytes);
	ASSERT_OK(hwt__smmu_dev_dma_map(t->dev, t->mem, bytes, &t->iova));
	atomic_store_explicit(&t->r->cmdq_base, t->iova | n, memory_order_release);
}

static void tq_start(struct tq *t, const struct hwt_smmu_dev_config *cfg, unsigned n)
{
	tq_setup(t, cfg, n);
	ASSERT_OK(hwt_smmu_dev_start(t->dev));
	ASSERT_EQ(hwt__reg_enabled(t->r), 1);
}

static void tq_free(struct tq *t)
{
	hwt_smmu_dev_destroy(t->dev);
	free(t->mem);
}

static void tq_write_at(struct tq *t, uint32_t p, const uint64_t dw[2])
{
	t->mem[2 * idx(t, p)] = htole64(dw[0]);
	t->mem[2 * idx(t, p) + 1] = htole64(dw[1]);
}

/* Write one entry at PROD (not yet published); returns its position. */
static uint32_t tq_put(struct tq *t, const uint64_t dw[2])
{
	uint32_t p = t->prod;

	tq_write_at(t, p, dw);
	t->prod = (t->prod + 1) & ptr_mask(t);
	return p;
}

static void tq_publish(struct tq *t)
{
	hwt__reg_write_prod(t->r, t->prod); /* D1 */
}

static uint32_t cons_ptr(const struct tq *t)
{
	return hwt__reg_read_cons(t->r) & ptr_mask(t);
}

static uint32_t cons_err(const struct tq *t)
{
	return hwt__reg_read_cons(t->r) >> HWT_SMMU_CONS_ERR_SHIFT & HWT_SMMU_CONS_ERR_MASK;
}

/* Wait (bounded) until CONS == want, without ERR.  false on timeout. */
static bool tq_wait_cons(struct tq *t, uint32_t want)
{
	uint64_t deadline = hwt__now_ns() + (uint64_t)(5e9 * hwt_test_scale());

	while (cons_ptr(t) != want || cons_err(t)) {
		if (hwt__now_ns() > deadline)
			return false;
		sched_yield();
	}
	return true;
}

static void tq_drain(struct tq *t)
{
	tq_publish(t);
	ASSERT_TRUE(tq_wait_cons(t, t->prod));
}

/* Wait (bounded) until CONS.ERR is set; returns it. */
static uint32_t tq_wait_err(struct tq *t)
{
	uint64_t deadline = hwt__now_ns() + (uint64_t)(5e9 * hwt_test_scale());

	while (!cons_err(t)) {
		if (hwt__now_ns() > deadline)
			return 0;
		sched_yield();
	}
	return cons_err(t);
}

/* Acknowledge like a driver: what GERROR reports as active.  GERROR toggles
 * just after CONS.ERR is set, so wait for it (bounded). */
static void ack_errors(struct tq *t)
{
	uint64_t deadline = hwt__now_ns() + (uint64_t)(5e9 * hwt_test_scale());
	uint32_t g;

	while (!(((g = hwt__reg_read_gerror(t->r)) ^
		  atomic_load_explicit(&t->r->gerrorn, memory_order_relaxed)) &
		 HWT_SMMU_GERROR_CMDQ_ERR))
		ASSERT_LT(hwt__now_ns(), deadline);
	hwt__reg_write_gerrorn(t->r, g);
}

static void sleep_ms(unsigned ms)
{
	hwt__sleep_ns((uint64_t)ms * 1000000u);
}

/* ---- a recording handler --------------------------------------------------- */

#define REC_MAX 4096

struct rec {
	struct tq *t;
	_Atomic unsigned n;
	uint64_t dw0[REC_MAX];
	uint32_t cons_seen[REC_MAX]; /* CONS register when the command ran */
	int cpu[REC_MAX];
	int ret; /* what to return */
};

static int rec_handler(void *ctx, const uint64_t dw[2])
{
	struct rec *r = ctx;
	unsigned i = atomic_load_explicit(&r->n, memory_order_relaxed);

	if (i < REC_MAX) {
		r->dw0[i] = dw[0];
		r->cons_seen[i] = r->t ? cons_ptr(r->t) : 0;
		r->cpu[i] = sched_getcpu();
	}
	atomic_store_explicit(&r->n, i + 1, memory_order_release);
	return r->ret;
}

static unsigned rec_count(struct rec *r)
{
	return atomic_load_explicit(&r->n, memory_order_acquire);
}

static struct rec *rec_new(void)
{
	struct rec *r = calloc(1, sizeof(*r));

	ASSERT_TRUE(r);
	return r;
}

/* ---- configuration and lifecycle ----------------------------------------- */

TEST(config_default_and_validation)
{
	struct hwt_smmu_dev_config cfg, bad, got;
	struct hwt_smmu_dev *dev;

	hwt_smmu_dev_config_default(&cfg);
	ASSERT_EQ(cfg.idr0, HWT_SMMU_IDR0_MSI | HWT_SMMU_IDR0_SEV | HWT_SMMU_IDR0_COHACC);
	ASSERT_EQ(cfg.cmdqs, 8);
	ASSERT_EQ(cfg.cpu, -1);
	ASSERT_EQ(cfg.cons_batch, 1);
	ASSERT_GT(cfg.spin_ns, 0);

	ASSERT_EQ(hwt_smmu_dev_create(&dev, NULL), -EINVAL);
	bad = cfg, bad.idr0 |= 1u << 0;
	ASSERT_EQ(hwt_smmu_dev_create(&dev, &bad), -EINVAL);
	bad = cfg, bad.cmdqs = 0;
	ASSERT_EQ(hwt_smmu_dev_create(&dev, &bad), -EINVAL);
	bad = cfg, bad.cmdqs = 20;
	ASSERT_EQ(hwt_smmu_dev_create(&dev, &bad), -EINVAL);
	bad = cfg, bad.cpu = -2;
	ASSERT_EQ(hwt_smmu_dev_create(&dev, &bad), -EINVAL);
	bad = cfg, bad.cons_batch = 0;
	ASSERT_EQ(hwt_smmu_dev_create(&dev, &bad), -EINVAL);
	bad = cfg, bad.spin_ns = HWT_SMMU_DEV_NS_MAX + 1;
	ASSERT_EQ(hwt_smmu_dev_create(&dev, &bad), -EINVAL);
	bad = cfg, bad.msi_cost_ns = HWT_SMMU_DEV_NS_MAX + 1;
	ASSERT_EQ(hwt_smmu_dev_create(&dev, &bad), -EINVAL);

	cfg.cmdqs = 10;
	cfg.msi_cost_ns = 7;
	ASSERT_OK(hwt_smmu_dev_create(&dev, &cfg));
	hwt_smmu_dev_get_config(dev, &got);
	ASSERT_EQ(got.msi_cost_ns, 7);
	ASSERT_EQ(hwt__reg_idr0(hwt__smmu_dev_regs(dev)), cfg.idr0);
	ASSERT_EQ(hwt__reg_idr1(hwt__smmu_dev_regs(dev)) >> HWT_SMMU_IDR1_CMDQS_SHIFT &
			  HWT_SMMU_IDR1_CMDQS_MASK,
		  10);
	ASSERT_EQ(hwt__reg_enabled(hwt__smmu_dev_regs(dev)), 0);
	hwt_smmu_dev_destroy(dev);
	hwt_smmu_dev_destroy(NULL);
}

TEST(start_checks_cmdq_base)
{
	struct hwt_smmu_dev_config cfg;
	struct hwt_smmu_dev *dev;
	struct hwt__smmu_regs *r;
	uint64_t *mem = aligned_alloc(4096, 4096 * 2), iova;
	const size_t len = 4096 * 2 - 64;

	hwt_smmu_dev_config_default(&cfg);
	cfg.cmdqs = 6;
	ASSERT_OK(hwt_smmu_dev_create(&dev, &cfg));
	r = hwt__smmu_dev_regs(dev);
	ASSERT_EQ(hwt_smmu_dev_start(dev), -EINVAL); /* unset */
	ASSERT_OK(hwt__smmu_dev_dma_map(dev, mem, len, &iova));
	ASSERT_EQ(iova & 4095, 0);
	ASSERT_LT(iova, 1ull << 52);
	atomic_store_explicit(&r->cmdq_base, iova | 7, memory_order_release); /* > CMDQS */
	ASSERT_EQ(hwt_smmu_dev_start(dev), -EINVAL);
	atomic_store_explicit(&r->cmdq_base, (iova + 32) | 6, memory_order_release); /* misaligned */
	ASSERT_EQ(hwt_smmu_dev_start(dev), -EINVAL);
	atomic_store_explicit(&r->cmdq_base, (iova + 8192) | 4, memory_order_release); /* outside */
	ASSERT_EQ(hwt_smmu_dev_start(dev), -EINVAL);
	atomic_store_explicit(&r->cmdq_base, (iova + 7936) | 4, memory_order_release); /* tail */
	ASSERT_EQ(hwt_smmu_dev_start(dev), -EINVAL);
	atomic_store_explicit(&r->cmdq_base, (1ull << 63) | iova | 6, memory_order_release); /* RES0 */
	ASSERT_EQ(hwt_smmu_dev_start(dev), -EINVAL);
	atomic_store_explicit(&r->cmdq_base, HWT__CMDQ_BASE_RA | iova | 6, memory_order_release);
	ASSERT_OK(hwt_smmu_dev_start(dev));
	ASSERT_EQ(hwt_smmu_dev_start(dev), -EBUSY);
	ASSERT_EQ(hwt__smmu_dev_dma_unmap(dev, iova), -EBUSY);
	ASSERT_OK(hwt_smmu_dev_stop(dev));
	ASSERT_OK(hwt__smmu_dev_dma_unmap(dev, iova));
	ASSERT_EQ(hwt__smmu_dev_dma_unmap(dev, iova), -ENOENT);
	ASSERT_EQ(hwt_smmu_dev_start(dev), -EINVAL); /* unmapped now */
	hwt_smmu_dev_destroy(dev);
	free(mem);
}

TEST(dma_regions)
{
	struct hwt_smmu_dev_config cfg;
	struct hwt_smmu_dev *dev;
	char *buf = aligned_alloc(1 << 16, 1 << 16);
	uint64_t iova, iova2;

	hwt_smmu_dev_config_default(&cfg);
	ASSERT_OK(hwt_smmu_dev_create(&dev, &cfg));
	ASSERT_EQ(hwt__smmu_dev_dma_map(dev, buf + 2, 64, &iova), -EINVAL);
	ASSERT_EQ(hwt__smmu_dev_dma_map(dev, buf, 0, &iova), -EINVAL);
	ASSERT_EQ(hwt__smmu_dev_dma_map(dev, NULL, 64, &iova), -EINVAL);
	ASSERT_OK(hwt__smmu_dev_dma_map(dev, buf, 1 << 16, &iova));
	ASSERT_EQ(iova & 0xffff, 0); /* natural alignment kept */
	ASSERT_LT(iova, 1ull << 52);
	ASSERT_TRUE(hwt__smmu_dev_dma_va(dev, iova, 1 << 16) == buf);
	ASSERT_TRUE(hwt__smmu_dev_dma_va(dev, iova + 100, 4) == buf + 100);
	ASSERT_TRUE(hwt__smmu_dev_dma_va(dev, iova + (1 << 16) - 4, 8) == NULL);
	ASSERT_TRUE(hwt__smmu_dev_dma_va(dev, iova - 4, 4) == NULL);
	ASSERT_TRUE(hwt__smmu_dev_dma_va(dev, 0, 4) == NULL);
	ASSERT_OK(hwt__smmu_dev_dma_map(dev, buf + 4, 16, &iova2));
	ASSERT_NE(iova2, iova + 4); /* another region, another IOVA range */
	ASSERT_EQ(iova2 & 0xffff, 4);
	ASSERT_TRUE(hwt__smmu_dev_dma_va(dev, iova2, 16) == buf + 4);
	for (int i = 2; i < HWT__SMMU_DEV_REGIONS; i++)
		ASSERT_OK(hwt__smmu_dev_dma_map(dev, buf, 64, &iova2));
	ASSERT_EQ(hwt__smmu_dev_dma_map(dev, buf, 64, &iova2), -ENOSPC);
	hwt_smmu_dev_destroy(dev);
	free(buf);
}

/* ---- execution order, CONS, wrap ------------------------------------------ */

TEST(in_order_with_wrap_over_laps)
{
	struct hwt_smmu_dev_config cfg;
	struct rec *rec = rec_new();
	struct tq t;
	uint32_t seq = 0;
	unsigned chunks[] = { 1, 3, 8, 5, 7, 2, 8, 8, 6, 1, 4, 8, 3 };

	hwt_smmu_dev_config_default(&cfg);
	cfg.handler = rec_handler;
	cfg.handler_ctx = rec;
	tq_start(&t, &cfg, 3); /* 8 entries */
	for (unsigned c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
		uint64_t dw[2];

		for (unsigned i = 0; i < chunks[c]; i++) {
			tst_cmd_seq(dw, seq++);
			tq_put(&t, dw);
		}
		tq_drain(&t); /* CONS == PROD, wrap bit included */
		ASSERT_EQ(hwt__reg_read_cons(t.r), t.prod);
	}
	ASSERT_GT(seq, 8 * 6); /* several laps */
	ASSERT_EQ(rec_count(rec), seq);
	for (uint32_t i = 0; i < seq; i++)
		ASSERT_EQ(rec->dw0[i] >> 32, i);
	/* streaming: publish each entry alone while the device runs */
	for (unsigned i = 0; i < 40; i++) {
		uint64_t dw[2];

		while (((t.prod - cons_ptr(&t)) & ptr_mask(&t)) >= 8u)
			sched_yield();
		tst_cmd_seq(dw, seq++);
		tq_put(&t, dw);
		tq_publish(&t);
	}
	ASSERT_TRUE(tq_wait_cons(&t, t.prod));
	for (uint32_t i = 0; i < seq; i++)
		ASSERT_EQ(rec->dw0[i] >> 32, i);
	tq_free(&t);
	free(rec);
}

TEST(full_queue_in_one_publish)
{
	struct hwt_smmu_dev_config cfg;
	struct hwt_smmu_dev_stats st;
	struct tq t;
	uint32_t evt;
	uint64_t dw[2];

	hwt_smmu_dev_config_default(&cfg);
	tq_start(&t, &cfg, 3);
	ASSERT_OK(hwt_smmu_dev_pause(t.dev));
	for (int i = 0; i < 8; i++) {
		tst_cmd_seq(dw, (uint32_t)i);
		tq_put(&t, dw);
	}
	ASSERT_EQ(t.prod, 8); /* full: same index, other wrap */
	tq_publish(&t);
	evt = atomic_load_explicit(&t.r->evt, memory_order_seq_cst);
	ASSERT_OK(hwt_smmu_dev_resume(t.dev));
	ASSERT_TRUE(tq_wait_cons(&t, 8));
	/* full -> not full: an SEV */
	ASSERT_NE(atomic_load_explicit(&t.r->evt, memory_order_seq_cst), evt);
	hwt_smmu_dev_get_stats(t.dev, &st);
	ASSERT_GE(st.sevs, 1);
	ASSERT_EQ(st.cmds, 8);
	tq_free(&t);

	/* MMU-600 erratum mode: no SEV on that edge */
	cfg.no_sev_on_not_full = true;
	tq_start(&t, &cfg, 3);
	ASSERT_OK(hwt_smmu_dev_pause(t.dev));
	for (int i = 0; i < 8; i++) {
		tst_cmd_seq(dw, (uint32_t)i);
		tq_put(&t, dw);
	}
	tq_publish(&t);
	evt = atomic_load_explicit(&t.r->evt, memory_order_seq_cst);
	ASSERT_OK(hwt_smmu_dev_resume(t.dev));
	ASSERT_TRUE(tq_wait_cons(&t, 8));
	ASSERT_EQ(atomic_load_explicit(&t.r->evt, memory_order_seq_cst), evt);
	hwt_smmu_dev_get_stats(t.dev, &st);
	ASSERT_EQ(st.sevs, 0);
	tq_free(&t);
}

TEST(cons_overflow_bit_untouched)
{
	struct hwt_smmu_dev_config cfg;
	struct tq t;
	uint64_t dw[2];

	hwt_smmu_dev_config_default(&cfg);
	tq_setup(&t, &cfg, 4);
	atomic_store_explicit(&t.r->cons, HWT_SMMU_CMDQ_OVF, memory_order_relaxed);
	ASSERT_OK(hwt_smmu_dev_start(t.dev));
	for (int i = 0; i < 20; i++) {
		tst_cmd_seq(dw, (uint32_t)i);
		tq_put(&t, dw);
		if (i % 7 == 6)
			tq_drain(&t);
	}
	tq_drain(&t);
	ASSERT_EQ(hwt__reg_read_cons(t.r), HWT_SMMU_CMDQ_OVF | t.prod);
	tq_free(&t);
}

/* CONS moves every cons_batch commands, at a CMD_SYNC and at the end. */
static void check_cons_batch(unsigned batch)
{
	struct hwt_smmu_dev_config cfg;
	struct rec *rec = rec_new();
	struct tq t;
	uint64_t dw[2];
	const unsigned sync_at = 6, total = 13;

	hwt_smmu_dev_config_default(&cfg);
	cfg.cons_batch = batch;
	cfg.handler = rec_handler;
	cfg.handler_ctx = rec;
	rec->t = &t;
	tq_start(&t, &cfg, 5);
	ASSERT_OK(hwt_smmu_dev_pause(t.dev)); /* so one PROD read sees everything */
	for (unsigned i = 0; i < total; i++) {
		if (i == sync_at)
			tst_cmd_sync(dw, HWT_SMMU_CS_NONE, 0, 0);
		else
			tst_cmd_seq(dw, i);
		tq_put(&t, dw);
	}
	tq_publish(&t);
	ASSERT_OK(hwt_smmu_dev_resume(t.dev));
	ASSERT_TRUE(tq_wait_cons(&t, total));
	ASSERT_EQ(rec_count(rec), total - 1);
	for (unsigned k = 0, pos = 0; pos < total; pos++) {
		uint32_t want;

		if (pos == sync_at)
			continue;
		/* CONS seen while executing the command at pos */
		if (pos < sync_at)
			want = pos / batch * batch;
		else
			want = sync_at + 1 + (pos - sync_at - 1) / batch * batch;
		ASSERT_EQ(rec->cons_seen[k], want);
		k++;
	}
	tq_free(&t);
	free(rec);
}

TEST(cons_batch_1)
{
	check_cons_batch(1);
}

TEST(cons_batch_4)
{
	check_cons_batch(4);
}

/* ---- CMD_SYNC ------------------------------------------------------------ */

/* The MSI lands on the sync's own slot while CONS is at the sync, and CONS
 * passes the sync only after it (so CONS past the sync means "MSI done"). */
TEST(sync_msi_writes_own_slot_before_cons_passes)
{
	struct hwt_smmu_dev_config cfg;
	struct hwt_smmu_dev_stats st;
	struct tq t;
	uint64_t dw[2];
	uint32_t p;
	_Atomic uint32_t *word;

	hwt_smmu_dev_config_default(&cfg);
	cfg.msi_cost_ns = 300000000; /* 300 ms before the MSI write */
	tq_start(&t, &cfg, 4);
	for (int i = 0; i < 3; i++) {
		tst_cmd_seq(dw, (uint32_t)i);
		tq_put(&t, dw);
	}
	tst_cmd_sync(dw, HWT_SMMU_CS_IRQ, t.iova + 16u * idx(&t, t.prod), 0);
	p = tq_put(&t, dw);
	word = (_Atomic uint32_t *)&t.mem[2 * idx(&t, p)];
	ASSERT_NE(atomic_load_explicit(word, memory_order_acquire), 0);
	tq_publish(&t);
	/* everything before the sync is consumed and published first */
	ASSERT_TRUE(tq_wait_cons(&t, p));
	ASSERT_EQ(atomic_load_explicit(word, memory_order_acquire), HWT_SMMU_OP_CMD_SYNC | 1u << 12 |
									    HWT_SMMU_SYNC_MSH_IS << 22 |
									    HWT_SMMU_SYNC_MSIATTR_WB << 24);
	ASSERT_TRUE(tq_wait_cons(&t, p + 1));
	/* CONS passed the sync: the MSI write is already visible (A_CONS) */
	ASSERT_EQ(atomic_load_explicit(word, memory_order_relaxed), 0);
	ASSERT_EQ(le64toh(t.mem[2 * idx(&t, p) + 1]), dw[1]); /* dword1 untouched */
	hwt_smmu_dev_get_stats(t.dev, &st);
	ASSERT_EQ(st.syncs, 1);
	ASSERT_EQ(st.msi_writes, 1);
	ASSERT_EQ(st.cmds, 4);
	ASSERT_EQ(st.msi_cost_ns, 300000000);
	tq_free(&t);
}

static void msi_to_buffer(bool quirk, uint32_t data, uint64_t *out)
{
	struct hwt_smmu_dev_config cfg;
	struct tq t;
	uint64_t *buf = aligned_alloc(64, 64), iova, dw[2];

	hwt_smmu_dev_config_default(&cfg);
	cfg.msi_64bit = quirk;
	tq_start(&t, &cfg, 4);
	memset(buf, 0xff, 64);
	ASSERT_OK(hwt__smmu_dev_dma_map(t.dev, buf, 64, &iova));
	tst_cmd_sync(dw, HWT_SMMU_CS_IRQ, iova + 8, data);
	tq_put(&t, dw);
	tq_drain(&t);
	/* the MSI follows CONS: wait for it */
	{
		uint64_t deadline = hwt__now_ns() + (uint64_t)(5e9 * hwt_test_scale());

		while (atomic_load_explicit((_Atomic uint32_t *)&buf[1], memory_order_acquire) ==
		       0xffffffffu)
			ASSERT_LT(hwt__now_ns(), deadline);
	}
	hwt_smmu_dev_stop(t.dev);
	memcpy(out, buf, 24);
	tq_free(&t);
	free(buf);
}

TEST(sync_msi_data_and_64bit_quirk)
{
	uint64_t b[3];

	msi_to_buffer(false, 0x12345678, b);
	ASSERT_EQ_U64(b[0], ~0ull);
	ASSERT_EQ_U64(le64toh(b[1]), 0xffffffff12345678ull); /* 32-bit store only */
	ASSERT_EQ_U64(b[2], ~0ull);
	msi_to_buffer(true, 0, b);
	ASSERT_EQ_U64(b[0], ~0ull);
	ASSERT_EQ_U64(b[1], 0); /* Hi16xx: the whole dword */
	ASSERT_EQ_U64(b[2], ~0ull);
}

TEST(sync_msi_64bit_zeroes_whole_dword0)
{
	struct hwt_smmu_dev_config cfg;
	struct tq t;
	uint64_t dw[2];
	uint32_t p;

	hwt_smmu_dev_config_default(&cfg);
	cfg.msi_64bit = true;
	tq_start(&t, &cfg, 4);
	tst_cmd_sync(dw, HWT_SMMU_CS_IRQ, t.iova + 16u * idx(&t, t.prod), 0);
	dw[0] |= 0; /* MSIDATA 0 as the kernel builds it */
	p = tq_put(&t, dw);
	tq_drain(&t);
	{
		uint64_t deadline = hwt__now_ns() + (uint64_t)(5e9 * hwt_test_scale());

		while (atomic_load_explicit((_Atomic uint64_t *)&t.mem[2 * idx(&t, p)],
					    memory_order_acquire) != 0)
			ASSERT_LT(hwt__now_ns(), deadline);
	}
	ASSERT_EQ_U64(le64toh(t.mem[2 * idx(&t, p) + 1]), dw[1]);
	tq_free(&t);
}

TEST(sync_msi_unmapped_target_raises_gerror)
{
	struct hwt_smmu_dev_config cfg;
	struct hwt_smmu_dev_stats st;
	struct tq t;
	uint64_t dw[2];

	hwt_smmu_dev_config_default(&cfg);
	tq_start(&t, &cfg, 4);
	tst_cmd_sync(dw, HWT_SMMU_CS_IRQ, 0x000f000000000000ull, 0);
	tq_put(&t, dw);
	tq_drain(&t); /* the sync still completes */
	{
		uint64_t deadline = hwt__now_ns() + (uint64_t)(5e9 * hwt_test_scale());

		while (!(hwt__reg_read_gerror(t.r) & HWT_SMMU_GERROR_MSI_CMDQ_ABT))
			ASSERT_LT(hwt__now_ns(), deadline);
	}
	ASSERT_EQ(hwt__reg_read_gerror(t.r) & HWT_SMMU_GERROR_MSI_CMDQ_ABT, HWT_SMMU_GERROR_MSI_CMDQ_ABT);
	ASSERT_EQ(hwt__reg_read_gerror(t.r) & HWT_SMMU_GERROR_CMDQ_ERR, 0);
	hwt_smmu_dev_get_stats(t.dev, &st);
	ASSERT_EQ(st.msi_writes, 0);
	tq_free(&t);
}

TEST(sync_sev_bumps_event)
{
	struct hwt_smmu_dev_config cfg;
	struct hwt_smmu_dev_stats st;
	struct tq t;
	uint64_t dw[2];
	uint32_t e0;

	hwt_smmu_dev_config_default(&cfg);
	tq_start(&t, &cfg, 4);
	e0 = atomic_load_explicit(&t.r->evt, memory_order_seq_cst);
	tst_cmd_sync(dw, HWT_SMMU_CS_SEV, 0, 0);
	tq_put(&t, dw);
	tq_drain(&t);
	{
		uint64_t deadline = hwt__now_ns() + (uint64_t)(5e9 * hwt_test_scale());

		while (atomic_load_explicit(&t.r->evt, memory_order_seq_cst) == e0)
			ASSERT_LT(hwt__now_ns(), deadline);
	}
	hwt_smmu_dev_get_stats(t.dev, &st);
	ASSERT_EQ(st.sevs, 1);
	ASSERT_EQ(st.syncs, 1);
	tq_free(&t);

	/* no IDR0.SEV: no event */
	cfg.idr0 = HWT_SMMU_IDR0_MSI | HWT_SMMU_IDR0_COHACC;
	tq_start(&t, &cfg, 4);
	e0 = atomic_load_explicit(&t.r->evt, memory_order_seq_cst);
	tq_put(&t, dw);
	tst_cmd_sync(dw, HWT_SMMU_CS_NONE, 0, 0);
	tq_put(&t, dw);
	tq_drain(&t);
	ASSERT_EQ(atomic_load_explicit(&t.r->evt, memory_order_seq_cst), e0);
	hwt_smmu_dev_get_stats(t.dev, &st);
	ASSERT_EQ(st.syncs, 2);
	ASSERT_EQ(st.sevs, 0);
	tq_free(&t);
}

/* A CONS waiter sleeping on the event word is woken by CS=SEV. */
struct sev_waiter {
	struct tq *t;
	uint32_t target;
	_Atomic int done;
};

static bool sev_still_waiting(void *arg)
{
	struct sev_waiter *w = arg;

	return cons_ptr(w->t) != w->target;
}

static void *sev_waiter_fn(void *arg)
{
	struct sev_waiter *w = arg;
	uint64_t deadline = hwt__now_ns() + (uint64_t)(5e9 * hwt_test_scale());

	while (sev_still_waiting(w) && hwt__now_ns() < deadline)
		hwt__reg_wait_event(w->t->r, 1000000000u, sev_still_waiting, w);
	atomic_store_explicit(&w->done, sev_still_waiting(w) ? -1 : 1, memory_order_release);
	return NULL;
}

TEST(sync_sev_wakes_event_sleeper)
{
	struct hwt_smmu_dev_config cfg;
	struct sev_waiter w = { 0 };
	pthread_t th;
	struct tq t;
	uint64_t dw[2];

	hwt_smmu_dev_config_default(&cfg);
	tq_start(&t, &cfg, 4);
	tst_cmd_sync(dw, HWT_SMMU_CS_SEV, 0, 0);
	tq_put(&t, dw);
	w.t = &t;
	w.target = t.prod;
	ASSERT_EQ(pthread_create(&th, NULL, sev_waiter_fn, &w), 0);
	sleep_ms(20); /* let it sleep */
	tq_publish(&t);
	pthread_join(th, NULL);
	ASSERT_EQ(atomic_load_explicit(&w.done, memory_order_acquire), 1);
	tq_free(&t);
}

static void count_irq(void *ctx)
{
	atomic_fetch_add_explicit((_Atomic unsigned *)ctx, 1, memory_order_release);
}

/* Signals follow CONS: wait (bounded) for *p to reach want. */
static void wait_u32(_Atomic unsigned *p, unsigned want)
{
	uint64_t deadline = hwt__now_ns() + (uint64_t)(5e9 * hwt_test_scale());

	while (atomic_load_explicit(p, memory_order_acquire) < want)
		ASSERT_LT(hwt__now_ns(), deadline);
}

TEST(sync_irq_callback)
{
	struct hwt_smmu_dev_config cfg;
	struct hwt_smmu_dev_stats st;
	_Atomic unsigned irqs = 0;
	struct tq t;
	uint64_t *buf = aligned_alloc(64, 64), iova, dw[2];

	hwt_smmu_dev_config_default(&cfg);
	cfg.sync_irq = count_irq;
	cfg.sync_irq_ctx = (void *)&irqs;
	tq_start(&t, &cfg, 4);
	tst_cmd_sync(dw, HWT_SMMU_CS_IRQ, 0, 0);
	tq_put(&t, dw);
	tq_drain(&t);
	wait_u32(&irqs, 1);
	hwt_smmu_dev_get_stats(t.dev, &st);
	ASSERT_EQ(st.sync_irqs, 1);
	ASSERT_EQ(st.msi_writes, 0);
	tq_free(&t);

	/* without IDR0.MSI, MSIADDR is ignored and the wired IRQ fires */
	cfg.idr0 = HWT_SMMU_IDR0_SEV;
	tq_start(&t, &cfg, 4);
	memset(buf, 0xff, 64);
	ASSERT_OK(hwt__smmu_dev_dma_map(t.dev, buf, 64, &iova));
	tst_cmd_sync(dw, HWT_SMMU_CS_IRQ, iova, 0);
	tq_put(&t, dw);
	tq_drain(&t);
	wait_u32(&irqs, 2);
	ASSERT_EQ_U64(buf[0], ~0ull);
	tq_free(&t);
	free(buf);
}

TEST(handler_sees_every_command_but_sync)
{
	struct hwt_smmu_dev_config cfg;
	struct hwt_smmu_dev_stats st;
	struct rec *rec = rec_new();
	struct tq t;
	uint64_t dw[2];
	unsigned n = 0;

	hwt_smmu_dev_config_default(&cfg);
	cfg.handler = rec_handler;
	cfg.handler_ctx = rec;
	tq_start(&t, &cfg, 4);
	for (int round = 0; round < 10; round++) {
		for (int i = 0; i < 5; i++) {
			/* any dwords at all: the handler owns the format */
			dw[0] = (uint64_t)n << 32 | 0x7f;
			dw[1] = ~(uint64_t)n;
			tq_put(&t, dw);
			n++;
		}
		tst_cmd_sync(dw, round & 1 ? HWT_SMMU_CS_SEV : HWT_SMMU_CS_NONE, 0, 0);
		tq_put(&t, dw);
		tq_drain(&t);
	}
	ASSERT_EQ(rec_count(rec), n);
	for (unsigned i = 0; i < n; i++)
		ASSERT_EQ_U64(rec->dw0[i], (uint64_t)i << 32 | 0x7f);
	hwt_smmu_dev_get_stats(t.dev, &st);
	ASSERT_EQ(st.cmds, n + 10);
	ASSERT_EQ(st.syncs, 10);
	tq_free(&t);
	free(rec);
}

TEST(pinned_consumer)
{
	struct hwt_smmu_dev_config cfg;
	struct rec *rec = rec_new();
	struct tq t;
	uint64_t dw[2];
	cpu_set_t set;
	int cpu = -1;

	ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	for (int i = CPU_SETSIZE - 1; i >= 0; i--)
		if (CPU_ISSET(i, &set))
			cpu = i;
	ASSERT_GE(cpu, 0);
	hwt_smmu_dev_config_default(&cfg);
	cfg.cpu = cpu;
	cfg.handler = rec_handler;
	cfg.handler_ctx = rec;
	tq_start(&t, &cfg, 4);
	tst_cmd_seq(dw, 1);
	tq_put(&t, dw);
	tq_drain(&t);
	ASSERT_EQ(rec_count(rec), 1);
	if (rec->cpu[0] >= 0) /* sched_getcpu may be unavailable under emulation */
		ASSERT_EQ(rec->cpu[0], cpu);
	tq_free(&t);
	free(rec);
}

/* ---- errors ------------------------------------------------------------- */

struct gerr_count {
	_Atomic unsigned n;
};

static void gerr_irq(void *ctx)
{
	atomic_fetch_add_explicit(&((struct gerr_count *)ctx)->n, 1, memory_order_release);
}

/*
 * Commands [seq 0, bad, seq 2, sync]: CONS stops at bad with ERR = code,
 * GERROR toggles, nothing moves until GERRORN; rewrite (or not) and ack.
 */
static void check_error(const uint64_t bad[2], uint32_t code, bool rewrite,
			int (*handler)(void *, const uint64_t *), struct rec *rec)
{
	struct hwt_smmu_dev_config cfg;
	struct hwt_smmu_dev_stats st;
	struct gerr_count gc = { 0 };
	struct tq t;
	uint64_t dw[2];
	uint32_t bad_at, g0;

	hwt_smmu_dev_config_default(&cfg);
	cfg.handler = handler;
	cfg.handler_ctx = rec;
	tq_start(&t, &cfg, 3);
	hwt__smmu_dev_set_gerror_irq(t.dev, gerr_irq, &gc);
	/* go round the ring once first so the error sits past a wrap */
	for (int i = 0; i < 6; i++) {
		tst_cmd_seq(dw, 100);
		tq_put(&t, dw);
	}
	tq_drain(&t);
	g0 = hwt__reg_read_gerror(t.r);
	tst_cmd_seq(dw, 0);
	tq_put(&t, dw);
	bad_at = tq_put(&t, bad);
	tst_cmd_seq(dw, 2);
	tq_put(&t, dw);
	tst_cmd_sync(dw, HWT_SMMU_CS_NONE, 0, 0);
	tq_put(&t, dw);
	tq_publish(&t);
	ASSERT_EQ(tq_wait_err(&t), code);
	ASSERT_EQ(cons_ptr(&t), bad_at);
	/* GERROR follows CONS.ERR, then the interrupt */
	{
		uint64_t deadline = hwt__now_ns() + (uint64_t)(5e9 * hwt_test_scale());

		while (!atomic_load_explicit(&gc.n, memory_order_acquire))
			ASSERT_LT(hwt__now_ns(), deadline);
	}
	ASSERT_EQ((hwt__reg_read_gerror(t.r) ^ g0) & HWT_SMMU_GERROR_CMDQ_ERR,
		  HWT_SMMU_GERROR_CMDQ_ERR);
	sleep_ms(50);
	ASSERT_EQ(atomic_load_explicit(&gc.n, memory_order_relaxed), 1);
	ASSERT_EQ(cons_ptr(&t), bad_at); /* no progress before the ack */
	ASSERT_EQ(cons_err(&t), code);
	/* a PROD write does not restart it either */
	tq_publish(&t);
	sleep_ms(10);
	ASSERT_EQ(cons_ptr(&t), bad_at);
	if (rewrite) {
		tst_cmd_sync(dw, HWT_SMMU_CS_NONE, 0, 0); /* what the driver's skip does */
		tq_write_at(&t, bad_at, dw);
	}
	ack_errors(&t);
	ASSERT_TRUE(tq_wait_cons(&t, t.prod));
	ASSERT_EQ(cons_err(&t), 0);
	hwt_smmu_dev_get_stats(t.dev, &st);
	ASSERT_EQ(st.errors, 1);
	tq_free(&t);
}

TEST(error_ill_unknown_opcode)
{
	uint64_t bad[2] = { 0x7f, 0 };

	check_error(bad, HWT_SMMU_CERROR_ILL, true, NULL, NULL);
}

TEST(error_ill_ssec)
{
	uint64_t bad[2];

	tst_cmd_seq(bad, 1);
	bad[0] |= 1u << 10;
	check_error(bad, HWT_SMMU_CERROR_ILL, true, NULL, NULL);
}

TEST(error_ill_reserved_bits_and_bad_sync)
{
	uint64_t bad[2];

	tst_cmd_seq(bad, 1);
	bad[1] = 1; /* PREFETCH_CONFIG has nothing in dword1 */
	check_error(bad, HWT_SMMU_CERROR_ILL, true, NULL, NULL);
	tst_cmd_sync(bad, HWT_SMMU_CS_NONE, 0, 0);
	bad[0] |= 3u << 12; /* CS = 3 */
	check_error(bad, HWT_SMMU_CERROR_ILL, true, NULL, NULL);
	tst_cmd_sync(bad, HWT_SMMU_CS_NONE, 0, 0);
	bad[1] |= 1ull << 60; /* above MSIADDR */
	check_error(bad, HWT_SMMU_CERROR_ILL, true, NULL, NULL);
}

static int ill_on_bad(void *ctx, const uint64_t dw[2])
{
	(void)ctx;
	return (dw[0] & 0xff) == 0x55 ? HWT_SMMU_CERROR_ILL : (dw[0] & 0xff) == 0x56 ? -5 : 0;
}

TEST(error_ill_from_handler)
{
	uint64_t bad[2] = { 0x55, 0 };

	check_error(bad, HWT_SMMU_CERROR_ILL, true, ill_on_bad, NULL);
	bad[0] = 0x56; /* anything but a CERROR counts as ILL */
	check_error(bad, HWT_SMMU_CERROR_ILL, true, ill_on_bad, NULL);
}

TEST(error_abt_retries_fetch)
{
	struct hwt_smmu_dev_config cfg;
	struct rec *rec = rec_new();
	struct tq t;
	uint64_t dw[2];

	hwt_smmu_dev_config_default(&cfg);
	cfg.handler = rec_handler;
	cfg.handler_ctx = rec;
	tq_start(&t, &cfg, 4);
	tst_cmd_seq(dw, 0);
	tq_put(&t, dw);
	tq_drain(&t);
	ASSERT_OK(hwt_smmu_dev_inject(t.dev, HWT_SMMU_FAULT_ABT));
	ASSERT_EQ(hwt_smmu_dev_inject(t.dev, (enum hwt_smmu_fault)99), -EINVAL);
	for (uint32_t i = 1; i < 5; i++) {
		tst_cmd_seq(dw, i);
		tq_put(&t, dw);
	}
	tq_publish(&t);
	ASSERT_EQ(tq_wait_err(&t), HWT_SMMU_CERROR_ABT);
	ASSERT_EQ(cons_ptr(&t), 1);
	sleep_ms(20);
	ASSERT_EQ(rec_count(rec), 1);
	ack_errors(&t); /* no rewrite: the same entry is fetched again */
	ASSERT_TRUE(tq_wait_cons(&t, 5));
	ASSERT_EQ(rec_count(rec), 5);
	for (uint32_t i = 0; i < 5; i++)
		ASSERT_EQ(rec->dw0[i] >> 32, i); /* each exactly once, in order */
	tq_free(&t);
	free(rec);
}

TEST(error_atc_timeout_on_next_sync)
{
	struct hwt_smmu_dev_config cfg;
	struct hwt_smmu_dev_stats st;
	struct tq t;
	uint64_t dw[2];
	uint32_t sync_at;

	hwt_smmu_dev_config_default(&cfg);
	tq_start(&t, &cfg, 4);
	ASSERT_OK(hwt_smmu_dev_inject(t.dev, HWT_SMMU_FAULT_ATC_TIMEOUT));
	/* a sync before any ATC_INV is not affected */
	tst_cmd_sync(dw, HWT_SMMU_CS_NONE, 0, 0);
	tq_put(&t, dw);
	tq_drain(&t);
	TST_ENC(dw, ATC_INV, TST_FV(SID, 3), TST_FV(SIZE, 52));
	tq_put(&t, dw);
	tst_cmd_seq(dw, 9);
	tq_put(&t, dw);
	tst_cmd_sync(dw, HWT_SMMU_CS_SEV, 0, 0);
	sync_at = tq_put(&t, dw);
	tq_publish(&t);
	ASSERT_EQ(tq_wait_err(&t), HWT_SMMU_CERROR_ATC_INV_SYNC);
	ASSERT_EQ(cons_ptr(&t), sync_at); /* the commands before it executed */
	ack_errors(&t);                   /* retry the sync: succeeds now */
	ASSERT_TRUE(tq_wait_cons(&t, t.prod));
	hwt_smmu_dev_get_stats(t.dev, &st);
	ASSERT_EQ(st.errors, 1);
	ASSERT_EQ(st.syncs, 2);
	tq_free(&t);
}

/* The driver acknowledges from the GERROR interrupt itself, on the consumer
 * thread, after replacing the bad entry: the consumer must resume. */
struct inline_ack {
	struct tq *t;
	_Atomic unsigned calls;
};

static void inline_ack_irq(void *ctx)
{
	struct inline_ack *a = ctx;
	uint32_t cons = hwt__reg_read_cons(a->t->r);
	uint64_t dw[2];

	atomic_fetch_add_explicit(&a->calls, 1, memory_order_relaxed);
	if ((cons >> HWT_SMMU_CONS_ERR_SHIFT & HWT_SMMU_CONS_ERR_MASK) == HWT_SMMU_CERROR_ILL) {
		tst_cmd_sync(dw, HWT_SMMU_CS_NONE, 0, 0);
		tq_write_at(a->t, cons, dw);
	}
	ack_errors(a->t);
}

TEST(error_ack_from_gerror_irq)
{
	struct hwt_smmu_dev_config cfg;
	struct inline_ack a = { 0 };
	struct tq t;
	uint64_t dw[2], bad[2] = { 0x7e, 0 };

	hwt_smmu_dev_config_default(&cfg);
	tq_start(&t, &cfg, 3);
	a.t = &t;
	hwt__smmu_dev_set_gerror_irq(t.dev, inline_ack_irq, &a);
	for (int lap = 0; lap < 5; lap++) {
		tst_cmd_seq(dw, 1);
		tq_put(&t, dw);
		tq_put(&t, bad);
		tst_cmd_seq(dw, 2);
		tq_put(&t, dw);
		tq_drain(&t);
	}
	ASSERT_EQ(atomic_load_explicit(&a.calls, memory_order_relaxed), 5);
	hwt__smmu_dev_set_gerror_irq(t.dev, NULL, NULL);
	tq_free(&t);
}

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
	TST_ENC(dw, TLBI_NH_VA, TST_FV(VMID, 1), TST_FV(ASID, 2), TST_FV(ADDR, 0x10000), TST_FV(TG, 1), TST_FV(NUM, 3),
	    TST_FV(SCALE, 0), TST_FV(TTL, 3), TST_FV(LEAF, 1));
	inval_case(&t, "NH_VA range 4", dw, BIT(T_NH_V1A2_PAGE) | BIT(T_NH_V1_GLOBAL));
	/* NUM 4 -> 5 pages: reaches 0x14000 */
	TST_ENC(dw, TLBI_NH_VA, TST_FV(VMID, 1), TST_FV(ASID, 2), TST_FV(ADDR, 0x10000), TST_FV(TG, 1), TST_FV(NUM, 4));
	inval_case(&t, "NH_VA range 5", dw,
		   BIT(T_NH_V1A2_PAGE) | BIT(T_NH_V1A2_PAGE2) | BIT(T_NH_V1_GLOBAL));
	/* range with SCALE: (0+1) << 5 = 32 pages of 64K from 0x200000 = 0x200000..0x3fffff */
	TST_ENC(dw, TLBI_NH_VA, TST_FV(VMID, 1), TST_FV(ASID, 2), TST_FV(ADDR, 0x200000), TST_FV(TG, 3), TST_FV(NUM, 0),
	    TST_FV(SCALE, 5));
	inval_case(&t, "NH_VA range scale", dw, BIT(T_NH_V1A2_BLOCK));
	TST_ENC(dw, TLBI_NH_VA, TST_FV(VMID, 1), TST_FV(ASID, 2), TST_FV(ADDR, 0x200000), TST_FV(TG, 2), TST_FV(NUM, 0),
	    TST_FV(SCALE, 8)); /* 256 x 16K = 4M: 0x200000..0x5fffff */
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
	TST_ENC(dw, TLBI_S2_IPA, TST_FV(VMID, 1), TST_FV(ADDR, 0x10000), TST_FV(TG, 1), TST_FV(NUM, 31), TST_FV(SCALE, 20));
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
	TST_ENC(dw, ATC_INV, TST_FV(SID, 7), TST_FV(SSV, 1), TST_FV(SSID, 1), TST_FV(ADDR, 0x10000), TST_FV(SIZE, 0));
	inval_case(&t, "ATC_INV page", dw, BIT(T_ATC_7_S1));
	/* SIZE 4: 16 pages, aligned down: 0x13000 -> 0x10000..0x1ffff */
	TST_ENC(dw, ATC_INV, TST_FV(SID, 7), TST_FV(ADDR, 0x13000), TST_FV(SIZE, 4));
	inval_case(&t, "ATC_INV span", dw, BIT(T_ATC_7_NOPASID) | BIT(T_ATC_7_S1));
	TST_ENC(dw, ATC_INV, TST_FV(SID, 7), TST_FV(ADDR, 0x20000), TST_FV(SIZE, 4));
	inval_case(&t, "ATC_INV miss", dw, 0);
	tq_free(&t);
}

/* ---- pause, stop, doorbell ------------------------------------------------ */

TEST(pause_and_resume)
{
	struct hwt_smmu_dev_config cfg;
	struct tq t;
	uint64_t dw[2];

	hwt_smmu_dev_config_default(&cfg);
	tq_start(&t, &cfg, 4);
	for (int round = 0; round < 3; round++) {
		uint32_t before = cons_ptr(&t);

		ASSERT_OK(hwt_smmu_dev_pause(t.dev));
		for (int i = 0; i < 4; i++) {
			tst_cmd_seq(dw, (uint32_t)i);
			tq_put(&t, dw);
		}
		tq_publish(&t);
		sleep_ms(30);
		ASSERT_EQ(cons_ptr(&t), before); /* nothing consumed */
		ASSERT_OK(hwt_smmu_dev_resume(t.dev));
		ASSERT_TRUE(tq_wait_cons(&t, t.prod));
	}
	/* pause before start: the device starts paused */
	ASSERT_OK(hwt_smmu_dev_stop(t.dev));
	ASSERT_OK(hwt_smmu_dev_pause(t.dev));
	ASSERT_OK(hwt_smmu_dev_start(t.dev));
	tst_cmd_seq(dw, 1);
	tq_put(&t, dw);
	tq_publish(&t);
	sleep_ms(20);
	ASSERT_NE(cons_ptr(&t), t.prod);
	ASSERT_OK(hwt_smmu_dev_resume(t.dev));
	ASSERT_TRUE(tq_wait_cons(&t, t.prod));
	tq_free(&t);
}

TEST(stop_clears_enabled_and_sends_sev)
{
	struct hwt_smmu_dev_config cfg;
	struct tq t;
	uint64_t dw[2];
	uint32_t e0;

	hwt_smmu_dev_config_default(&cfg);
	cfg.idr0 = HWT_SMMU_IDR0_MSI; /* even without IDR0.SEV */
	tq_start(&t, &cfg, 4);
	tst_cmd_seq(dw, 1);
	tq_put(&t, dw);
	tq_drain(&t);
	e0 = atomic_load_explicit(&t.r->evt, memory_order_seq_cst);
	ASSERT_OK(hwt_smmu_dev_stop(t.dev));
	ASSERT_EQ(hwt__reg_enabled(t.r), 0);
	ASSERT_NE(atomic_load_explicit(&t.r->evt, memory_order_seq_cst), e0);
	ASSERT_OK(hwt_smmu_dev_stop(t.dev)); /* idempotent */
	/* stopped: nothing consumed */
	tst_cmd_seq(dw, 2);
	tq_put(&t, dw);
	tq_publish(&t);
	sleep_ms(20);
	ASSERT_NE(cons_ptr(&t), t.prod);
	/* restart continues at CONS */
	ASSERT_OK(hwt_smmu_dev_start(t.dev));
	ASSERT_EQ(hwt__reg_enabled(t.r), 1);
	ASSERT_TRUE(tq_wait_cons(&t, t.prod));
	tq_free(&t);
}

TEST(stop_while_in_error_keeps_error)
{
	struct hwt_smmu_dev_config cfg;
	struct tq t;
	uint64_t dw[2], bad[2] = { 0x7f, 0 };

	hwt_smmu_dev_config_default(&cfg);
	tq_start(&t, &cfg, 4);
	tq_put(&t, bad);
	tst_cmd_seq(dw, 1);
	tq_put(&t, dw);
	tq_publish(&t);
	ASSERT_EQ(tq_wait_err(&t), HWT_SMMU_CERROR_ILL);
	ASSERT_OK(hwt_smmu_dev_stop(t.dev));
	ASSERT_OK(hwt_smmu_dev_start(t.dev)); /* still unacknowledged: stays stopped */
	sleep_ms(20);
	ASSERT_EQ(cons_ptr(&t), 0);
	ASSERT_EQ(cons_err(&t), HWT_SMMU_CERROR_ILL);
	tst_cmd_sync(dw, HWT_SMMU_CS_NONE, 0, 0);
	tq_write_at(&t, 0, dw);
	ack_errors(&t);
	ASSERT_TRUE(tq_wait_cons(&t, t.prod));
	tq_free(&t);
}

/* Idle long enough to sleep, then PROD moves without the doorbell wake: the
 * bounded sleep must still notice it. */
TEST(bounded_sleep_notices_prod)
{
	struct hwt_smmu_dev_config cfg;
	struct hwt_smmu_dev_stats st;
	struct tq t;
	uint64_t dw[2];

	hwt_smmu_dev_config_default(&cfg);
	cfg.spin_ns = 1000;
	tq_start(&t, &cfg, 4);
	{
		uint64_t deadline = hwt__now_ns() + (uint64_t)(5e9 * hwt_test_scale());

		do {
			ASSERT_LT(hwt__now_ns(), deadline);
			sleep_ms(10);
			hwt_smmu_dev_get_stats(t.dev, &st);
		} while (!st.sleeps);
	}
	sleep_ms(50); /* idle */
	tst_cmd_seq(dw, 1);
	tq_put(&t, dw);
	atomic_store_explicit(&t.r->prod, t.prod, memory_order_seq_cst); /* no futex wake */
	ASSERT_TRUE(tq_wait_cons(&t, t.prod));
	/* and with the doorbell */
	sleep_ms(50);
	tst_cmd_seq(dw, 2);
	tq_put(&t, dw);
	tq_drain(&t);
	tq_free(&t);
}

/* Publish and wait for CONS == PROD; returns the ns it took. */
static uint64_t timed_drain(struct tq *t)
{
	uint64_t t0 = hwt__now_ns();

	tq_drain(t);
	return hwt__now_ns() - t0;
}

/*
 * Each configured cost is spent where it belongs and reported.  The device
 * busy-waits each cost and cannot start before PROD moves, so K commands
 * take at least K x the cost from the PROD write to CONS: a lower bound
 * (never an upper one: that would be a speed).
 */
TEST(extra_costs_are_reported)
{
	enum { K = 20 };
	const unsigned cmd_ns = 500000, sev_ns = 1000000, msi_ns = 1500000;
	struct hwt_smmu_dev_config cfg;
	struct hwt_smmu_dev_stats st;
	struct tq t;
	uint64_t dw[2], ns;

	hwt_smmu_dev_config_default(&cfg);
	cfg.cmd_cost_ns = cmd_ns;
	cfg.sev_cost_ns = sev_ns;
	cfg.msi_cost_ns = msi_ns;
	tq_start(&t, &cfg, 6); /* 64 entries: K never fill it (no SEV on not-full) */

	for (unsigned i = 0; i < K; i++) {
		tst_cmd_seq(dw, i);
		tq_put(&t, dw);
	}
	ns = timed_drain(&t);
	TLOG("%u commands: %.2f ms (at least %.2f)", K, ns / 1e6, K * cmd_ns / 1e6);
	ASSERT_GE(ns, (uint64_t)K * cmd_ns);

	for (unsigned i = 0; i < K; i++) {
		tst_cmd_sync(dw, HWT_SMMU_CS_SEV, 0, 0);
		tq_put(&t, dw);
	}
	ns = timed_drain(&t);
	TLOG("%u SEV syncs: %.2f ms (at least %.2f)", K, ns / 1e6, K * sev_ns / 1e6);
	ASSERT_GE(ns, (uint64_t)K * sev_ns);

	for (unsigned i = 0; i < K; i++) {
		tst_cmd_sync(dw, HWT_SMMU_CS_IRQ, t.iova + 16u * idx(&t, t.prod), 0);
		tq_put(&t, dw);
	}
	ns = timed_drain(&t);
	TLOG("%u MSI syncs: %.2f ms (at least %.2f)", K, ns / 1e6, K * msi_ns / 1e6);
	ASSERT_GE(ns, (uint64_t)K * msi_ns);

	hwt_smmu_dev_get_stats(t.dev, &st);
	ASSERT_EQ(st.cmds, 3 * K);
	ASSERT_EQ(st.syncs, 2 * K);
	ASSERT_EQ(st.sevs, K);
	ASSERT_EQ(st.msi_writes, K);
	ASSERT_EQ(st.cmd_cost_ns, cmd_ns);
	ASSERT_EQ(st.sev_cost_ns, sev_ns);
	ASSERT_EQ(st.msi_cost_ns, msi_ns);
	tq_free(&t);
}

/* ---- concurrency: test threads use the cache API while the device runs ---- */

struct churn {
	struct hwt_smmu_dev *dev;
	_Atomic int stop;
	unsigned hits;
};

static void *churn_fn(void *arg)
{
	struct churn *c = arg;

	for (unsigned i = 0; !atomic_load_explicit(&c->stop, memory_order_relaxed); i++) {
		struct hwt_smmu_tlb_entry e = { .kind = HWT_SMMU_TLB_NH, .vmid = 9,
						.asid = (uint16_t)(i & 3),
						.addr = (uint64_t)(i & 15) << 12, .size_log2 = 12 };

		hwt_smmu_dev_tlb_insert(c->dev, &e);
		c->hits += hwt_smmu_dev_tlb_lookup(c->dev, HWT_SMMU_TLB_NH, 9, 3, 0x5000);
		hwt_smmu_dev_cfg_insert(c->dev, HWT_SMMU_CFG_CD, i & 15, i & 3);
		if (!(i & 15)) /* leave the lock to the consumer now and then */
			hwt__sleep_ns(20000);
	}
	return NULL;
}

TEST_TIMEOUT(invalidation_visible_after_sync_under_churn, 60)
{
	struct hwt_smmu_dev_config cfg;
	struct churn c = { 0 };
	pthread_t th;
	struct tq t;
	uint64_t dw[2];

	hwt_smmu_dev_config_default(&cfg);
	tq_start(&t, &cfg, 6);
	c.dev = t.dev;
	ASSERT_EQ(pthread_create(&th, NULL, churn_fn, &c), 0);
	for (unsigned i = 0; i < 200; i++) {
		struct hwt_smmu_tlb_entry e = { .kind = HWT_SMMU_TLB_NH, .vmid = 4, .asid = 1,
						.addr = (uint64_t)(i & 31) << 12, .size_log2 = 12 };

		ASSERT_OK(hwt_smmu_dev_tlb_insert(t.dev, &e));
		ASSERT_OK(hwt_smmu_dev_cfg_insert(t.dev, HWT_SMMU_CFG_STE, 1000 + (i & 7), 0));
		TST_ENC(dw, TLBI_NH_VA, TST_FV(VMID, 4), TST_FV(ASID, 1), TST_FV(ADDR, e.addr));
		tq_put(&t, dw);
		TST_ENC(dw, CFGI_STE, TST_FV(SID, 1000 + (i & 7)));
		tq_put(&t, dw);
		tst_cmd_sync(dw, i & 1 ? HWT_SMMU_CS_SEV : HWT_SMMU_CS_NONE, 0, 0);
		tq_put(&t, dw);
		tq_drain(&t);
		ASSERT_FALSE(hwt_smmu_dev_tlb_lookup(t.dev, HWT_SMMU_TLB_NH, 4, 1, e.addr));
		ASSERT_FALSE(hwt_smmu_dev_cfg_lookup(t.dev, HWT_SMMU_CFG_STE, 1000 + (i & 7), 0));
	}
	atomic_store_explicit(&c.stop, 1, memory_order_relaxed);
	pthread_join(th, NULL);
	tq_free(&t);
}

/* Several producers share the queue through a lock (no cmdq here): the device
 * must execute each command exactly once, in queue order. */
struct mp {
	struct tq *t;
	pthread_mutex_t lock;
	unsigned id;
	_Atomic unsigned next_id;
	unsigned per;
};

static void *mp_fn(void *arg)
{
	struct mp *m = arg;
	unsigned id = atomic_fetch_add_explicit(&m->next_id, 1, memory_order_relaxed);

	for (unsigned s = 0; s < m->per; s++) {
		uint64_t dw[2];

		for (;;) {
			pthread_mutex_lock(&m->lock);
			if (((m->t->prod - cons_ptr(m->t)) & ptr_mask(m->t)) < (1u << m->t->n))
				break;
			pthread_mutex_unlock(&m->lock);
			sched_yield();
		}
		dw[0] = (uint64_t)(id << 24 | s) << 32 | 0x7f;
		dw[1] = 0;
		tq_put(m->t, dw);
		tq_publish(m->t);
		pthread_mutex_unlock(&m->lock);
	}
	return NULL;
}

TEST_TIMEOUT(producers_exactly_once_in_order, 60)
{
	struct hwt_smmu_dev_config cfg;
	struct rec *rec = rec_new();
	struct mp m = { 0 };
	pthread_t th[4];
	unsigned seen[4] = { 0 };
	struct tq t;

	hwt_smmu_dev_config_default(&cfg);
	cfg.handler = rec_handler;
	cfg.handler_ctx = rec;
	cfg.cons_batch = 3;
	tq_start(&t, &cfg, 3);
	m.t = &t;
	m.per = 800;
	pthread_mutex_init(&m.lock, NULL);
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(pthread_create(&th[i], NULL, mp_fn, &m), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	ASSERT_TRUE(tq_wait_cons(&t, t.prod));
	ASSERT_EQ(rec_count(rec), 4 * m.per);
	for (unsigned i = 0; i < 4 * m.per; i++) {
		unsigned v = (unsigned)(rec->dw0[i] >> 32), id = v >> 24, s = v & 0xffffff;

		ASSERT_LT(id, 4);
		ASSERT_EQ(s, seen[id]); /* per producer: in order, none lost or repeated */
		seen[id]++;
	}
	pthread_mutex_destroy(&m.lock);
	tq_free(&t);
	free(rec);
}
