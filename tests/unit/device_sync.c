/* SPDX-License-Identifier: MIT */
/*
 * The software SMMU's CMD_SYNC signalling, through the minimal producer of
 * tests/harness/tq.h: the MSI on the sync's own slot before CONS passes it,
 * MSIDATA and the 64-bit quirk, an unmapped MSI target, SEV and a sleeper
 * it wakes, the wired IRQ.
 */
#include "harness/harness.h"
#include "harness/cmds.h"
#include "harness/tq.h"

#include "common/time.h"

#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

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
	tst_cmd_sync(dw, HWT_SMMU_CS_IRQ, t.iova + 16u * tq_idx(&t, t.prod), 0);
	p = tq_put(&t, dw);
	word = (_Atomic uint32_t *)&t.mem[2 * tq_idx(&t, p)];
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
	ASSERT_EQ(le64toh(t.mem[2 * tq_idx(&t, p) + 1]), dw[1]); /* dword1 untouched */
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
	ASSERT_OK(hwt__bus_dma_map(t.dev, buf, 64, &iova));
	tst_cmd_sync(dw, HWT_SMMU_CS_IRQ, iova + 8, data);
	tq_put(&t, dw);
	tq_drain(&t);
	/* the MSI follows CONS: wait for it */
	TQ_WAIT_UNTIL(atomic_load_explicit((_Atomic uint32_t *)&buf[1], memory_order_acquire) !=
		      0xffffffffu);
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
	tst_cmd_sync(dw, HWT_SMMU_CS_IRQ, t.iova + 16u * tq_idx(&t, t.prod), 0);
	dw[0] |= 0; /* MSIDATA 0 as the kernel builds it */
	p = tq_put(&t, dw);
	tq_drain(&t);
	TQ_WAIT_UNTIL(atomic_load_explicit((_Atomic uint64_t *)&t.mem[2 * tq_idx(&t, p)],
					   memory_order_acquire) == 0);
	ASSERT_EQ_U64(le64toh(t.mem[2 * tq_idx(&t, p) + 1]), dw[1]);
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
	TQ_WAIT_UNTIL(hwt__reg_read_gerror(t.r) & HWT_SMMU_GERROR_MSI_CMDQ_ABT);
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
	TQ_WAIT_UNTIL(atomic_load_explicit(&t.r->evt, memory_order_seq_cst) != e0);
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
	ASSERT_OK(hwt_smmu_dev_pause(t.dev)); /* a SEV follows R_CONS: let it come */
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

	return tq_cons(w->t) != w->target;
}

static void *sev_waiter_fn(void *arg)
{
	struct sev_waiter *w = arg;
	uint64_t deadline = tq_deadline();

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
	tq_sleep_ms(20); /* let it sleep */
	tq_publish(&t);
	pthread_join(th, NULL);
	ASSERT_EQ(atomic_load_explicit(&w.done, memory_order_acquire), 1);
	tq_free(&t);
}

static void count_irq(void *ctx)
{
	atomic_fetch_add_explicit((_Atomic unsigned *)ctx, 1, memory_order_release);
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
	TQ_WAIT_UNTIL(atomic_load_explicit(&irqs, memory_order_acquire) >= 1); /* follows CONS */
	hwt_smmu_dev_get_stats(t.dev, &st);
	ASSERT_EQ(st.sync_irqs, 1);
	ASSERT_EQ(st.msi_writes, 0);
	tq_free(&t);

	/* without IDR0.MSI, MSIADDR is ignored and the wired IRQ fires */
	cfg.idr0 = HWT_SMMU_IDR0_SEV;
	tq_start(&t, &cfg, 4);
	memset(buf, 0xff, 64);
	ASSERT_OK(hwt__bus_dma_map(t.dev, buf, 64, &iova));
	tst_cmd_sync(dw, HWT_SMMU_CS_IRQ, iova, 0);
	tq_put(&t, dw);
	tq_drain(&t);
	TQ_WAIT_UNTIL(atomic_load_explicit(&irqs, memory_order_acquire) >= 2);
	ASSERT_EQ_U64(buf[0], ~0ull);
	tq_free(&t);
	free(buf);
}
