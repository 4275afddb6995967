/* SPDX-License-Identifier: MIT */
/*
 * The software SMMU, driven directly through its register file by a minimal
 * in-test producer (tests/harness/tq.h, no src/cmdq): configuration and
 * lifecycle, DMA regions, in-order execution, CONS and its wrap bit, CONS
 * batching (once per run by default; statistics that match CONS), the
 * prefetch window, the command handler, a pinned consumer, pause/stop,
 * bounded doorbell sleeps, the auto idle spin and the configured extra
 * costs.  CMD_SYNC signalling,
 * command errors and the cache models have their own files
 * (device_sync.c, device_errors.c, device_cache.c); producers racing the
 * device are in stress/device.c.
 */
#include "harness/harness.h"
#include "harness/cmds.h"
#include "harness/tq.h"

#include "common/time.h"
#include "device/impl.h" /* white box: the consumer's prefetch window */

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- configuration and lifecycle ----------------------------------------- */

TEST(config_default_and_validation)
{
	struct hwt_smmu_dev_config cfg, bad, got;
	struct hwt_smmu_dev *dev;

	hwt_smmu_dev_config_default(&cfg);
	ASSERT_EQ(cfg.idr0, HWT_SMMU_IDR0_MSI | HWT_SMMU_IDR0_SEV | HWT_SMMU_IDR0_COHACC);
	ASSERT_EQ(cfg.cmdqs, 8);
	ASSERT_EQ(cfg.cpu, -1);
	ASSERT_EQ(cfg.cons_batch, 0); /* once per run */
	ASSERT_EQ(cfg.spin_ns, 0);    /* auto */
	ASSERT_TRUE(cfg.handler == NULL && cfg.handler_batch == NULL);

	ASSERT_EQ(hwt_smmu_dev_create(&dev, NULL), -EINVAL);
	bad = cfg, bad.idr0 |= 1u << 0;
	ASSERT_EQ(hwt_smmu_dev_create(&dev, &bad), -EINVAL);
	bad = cfg, bad.cmdqs = 0;
	ASSERT_EQ(hwt_smmu_dev_create(&dev, &bad), -EINVAL);
	bad = cfg, bad.cmdqs = 20;
	ASSERT_EQ(hwt_smmu_dev_create(&dev, &bad), -EINVAL);
	bad = cfg, bad.cpu = -2;
	ASSERT_EQ(hwt_smmu_dev_create(&dev, &bad), -EINVAL);
	bad = cfg, bad.cons_batch = HWT_SMMU_DEV_CONS_BATCH_MAX + 1;
	ASSERT_EQ(hwt_smmu_dev_create(&dev, &bad), -EINVAL);
	bad = cfg, bad.handler = rec_handler, bad.handler_batch = rec_batch_handler;
	ASSERT_EQ(hwt_smmu_dev_create(&dev, &bad), -EINVAL); /* one executor, not two */
	bad = cfg, bad.spin_ns = HWT_SMMU_DEV_NS_MAX + 1;
	ASSERT_EQ(hwt_smmu_dev_create(&dev, &bad), -EINVAL);
	bad = cfg, bad.msi_cost_ns = HWT_SMMU_DEV_NS_MAX + 1;
	ASSERT_EQ(hwt_smmu_dev_create(&dev, &bad), -EINVAL);

	cfg.cmdqs = 10;
	cfg.msi_cost_ns = 7;
	ASSERT_OK(hwt_smmu_dev_create(&dev, &cfg));
	hwt_smmu_dev_get_config(dev, &got);
	ASSERT_EQ(got.msi_cost_ns, 7);
	ASSERT_EQ(hwt__reg_idr0(hwt__bus_regs(dev)), cfg.idr0);
	ASSERT_EQ(hwt__reg_idr1(hwt__bus_regs(dev)) >> HWT_SMMU_IDR1_CMDQS_SHIFT &
			  HWT_SMMU_IDR1_CMDQS_MASK,
		  10);
	ASSERT_EQ(hwt__reg_cmdq_enabled(hwt__bus_regs(dev)), 0);
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
	r = hwt__bus_regs(dev);
	hwt__reg_write_cr0(r, HWT_SMMU_CR0_CMDQEN); /* start enables the queue */
	ASSERT_EQ(hwt_smmu_dev_start(dev), -EINVAL); /* unset */
	ASSERT_OK(hwt__bus_dma_map(dev, mem, len, &iova));
	ASSERT_EQ(iova & 4095, 0);
	ASSERT_LT(iova, 1ull << 52);
	hwt__reg_reset_queue(r, iova | 7); /* > CMDQS */
	ASSERT_EQ(hwt_smmu_dev_start(dev), -EINVAL);
	hwt__reg_reset_queue(r, (iova + 32) | 6); /* misaligned */
	ASSERT_EQ(hwt_smmu_dev_start(dev), -EINVAL);
	hwt__reg_reset_queue(r, (iova + 8192) | 4); /* outside */
	ASSERT_EQ(hwt_smmu_dev_start(dev), -EINVAL);
	hwt__reg_reset_queue(r, (iova + 7936) | 4); /* tail */
	ASSERT_EQ(hwt_smmu_dev_start(dev), -EINVAL);
	hwt__reg_reset_queue(r, (1ull << 63) | iova | 6); /* RES0 */
	ASSERT_EQ(hwt_smmu_dev_start(dev), -EINVAL);
	hwt__reg_reset_queue(r, HWT__CMDQ_BASE_RA | iova | 6);
	ASSERT_OK(hwt_smmu_dev_start(dev));
	ASSERT_EQ(hwt_smmu_dev_start(dev), -EBUSY);
	ASSERT_EQ(hwt__bus_dma_unmap(dev, iova), -EBUSY);
	ASSERT_OK(hwt_smmu_dev_stop(dev));
	ASSERT_OK(hwt__bus_dma_unmap(dev, iova));
	ASSERT_EQ(hwt__bus_dma_unmap(dev, iova), -ENOENT);
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
	ASSERT_EQ(hwt__bus_dma_map(dev, buf + 2, 64, &iova), -EINVAL);
	ASSERT_EQ(hwt__bus_dma_map(dev, buf, 0, &iova), -EINVAL);
	ASSERT_EQ(hwt__bus_dma_map(dev, NULL, 64, &iova), -EINVAL);
	ASSERT_OK(hwt__bus_dma_map(dev, buf, 1 << 16, &iova));
	ASSERT_EQ(iova & 0xffff, 0); /* natural alignment kept */
	ASSERT_LT(iova, 1ull << 52);
	ASSERT_TRUE(hwt__bus_dma_va(dev, iova, 1 << 16) == buf);
	ASSERT_TRUE(hwt__bus_dma_va(dev, iova + 100, 4) == buf + 100);
	ASSERT_TRUE(hwt__bus_dma_va(dev, iova + (1 << 16) - 4, 8) == NULL);
	ASSERT_TRUE(hwt__bus_dma_va(dev, iova - 4, 4) == NULL);
	ASSERT_TRUE(hwt__bus_dma_va(dev, 0, 4) == NULL);
	ASSERT_OK(hwt__bus_dma_map(dev, buf + 4, 16, &iova2));
	ASSERT_NE(iova2, iova + 4); /* another region, another IOVA range */
	ASSERT_EQ(iova2 & 0xffff, 4);
	ASSERT_TRUE(hwt__bus_dma_va(dev, iova2, 16) == buf + 4);
	for (int i = 2; i < HWT__BUS_REGIONS; i++)
		ASSERT_OK(hwt__bus_dma_map(dev, buf, 64, &iova2));
	ASSERT_EQ(hwt__bus_dma_map(dev, buf, 64, &iova2), -ENOSPC);
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

		while (((t.prod - tq_cons(&t)) & tq_ptr_mask(&t)) >= 8u)
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
	/* The SEV follows R_CONS: park the device (pause waits for it) so
	 * that whatever it signals for this update has been signalled. */
	ASSERT_OK(hwt_smmu_dev_pause(t.dev));
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
	ASSERT_OK(hwt_smmu_dev_pause(t.dev)); /* as above: no SEV can still come */
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
		/* CONS seen while executing the command at pos (batch 0: it
		 * moves only at the sync and at the end of the run) */
		if (pos < sync_at)
			want = batch ? pos / batch * batch : 0;
		else
			want = sync_at + 1 + (batch ? (pos - sync_at - 1) / batch * batch : 0);
		ASSERT_EQ(rec->cons_seen[k], want);
		k++;
	}
	tq_free(&t);
	free(rec);
}

TEST(cons_batch_0_once_per_run)
{
	check_cons_batch(0);
}

TEST(cons_batch_1)
{
	check_cons_batch(1);
}

TEST(cons_batch_4)
{
	check_cons_batch(4);
}

/* CONS stores for a burst of n commands without a sync, seen at one PROD
 * read: one with cons_batch 0, one per command with 1, ceil(n / 3) with 3;
 * the same with either handler. */
static uint64_t cons_updates_for_burst(unsigned batch, bool batch_handler, unsigned n)
{
	struct hwt_smmu_dev_config cfg;
	struct hwt_smmu_dev_stats s0, s1;
	struct rec *rec = rec_new();
	struct tq t;
	uint64_t dw[2];

	hwt_smmu_dev_config_default(&cfg);
	cfg.cons_batch = batch;
	if (batch_handler)
		cfg.handler_batch = rec_batch_handler;
	else
		cfg.handler = rec_handler;
	cfg.handler_ctx = rec;
	tq_start(&t, &cfg, 6);
	for (unsigned i = 0; i < n; i++) {
		tst_cmd_seq(dw, i);
		tq_put(&t, dw);
	}
	hwt_smmu_dev_get_stats(t.dev, &s0);
	tq_publish_one_run(&t);
	ASSERT_TRUE(tq_wait_cons(&t, n));
	hwt_smmu_dev_get_stats(t.dev, &s1);
	ASSERT_EQ(s1.cmds - s0.cmds, n);
	ASSERT_EQ(rec_count(rec), n);
	tq_free(&t);
	free(rec);
	return s1.cons_updates - s0.cons_updates;
}

TEST(cons_published_once_per_run_by_default)
{
	for (int b = 0; b < 2; b++) {
		ASSERT_EQ(cons_updates_for_burst(0, b, 40), 1);
		ASSERT_EQ(cons_updates_for_burst(1, b, 40), 40);
		ASSERT_EQ(cons_updates_for_burst(3, b, 40), 14);
	}
}

/*
 * Whoever saw CONS past a command sees it counted, though the consumer
 * counts a run's commands at once: (a) a sync waiter that sees CONS reach
 * its CMD_SYNC (while the MSI is still 100 ms away) sees every command
 * before it counted; (b) at the end of a run whose CONS store is followed
 * by a 100 ms SEV (full -> not full), the count is complete at the store.
 */
TEST(stats_count_what_cons_shows)
{
	enum { N = 7 };
	struct hwt_smmu_dev_config cfg;
	struct hwt_smmu_dev_stats st;
	struct tq t;
	uint64_t dw[2];
	uint32_t p;

	hwt_smmu_dev_config_default(&cfg);
	cfg.msi_cost_ns = 100000000;
	tq_start(&t, &cfg, 4);
	for (unsigned i = 0; i < N; i++) {
		tst_cmd_seq(dw, i);
		tq_put(&t, dw);
	}
	tst_cmd_sync(dw, HWT_SMMU_CS_IRQ, t.iova + 16u * tq_idx(&t, t.prod), 0);
	p = tq_put(&t, dw);
	tq_publish(&t);
	ASSERT_TRUE(tq_wait_cons(&t, p)); /* A_CONS: up to the sync, MSI pending */
	hwt_smmu_dev_get_stats(t.dev, &st);
	ASSERT_GE(st.cmds, N);
	ASSERT_EQ(st.msi_writes, 0);
	ASSERT_TRUE(tq_wait_cons(&t, t.prod));
	hwt_smmu_dev_get_stats(t.dev, &st);
	ASSERT_EQ(st.cmds, N + 1);
	ASSERT_EQ(st.syncs, 1);
	ASSERT_EQ(st.msi_writes, 1);
	tq_free(&t);

	hwt_smmu_dev_config_default(&cfg);
	cfg.sev_cost_ns = 100000000;
	tq_start(&t, &cfg, 3);
	for (unsigned i = 0; i < 8; i++) { /* full */
		tst_cmd_seq(dw, i);
		tq_put(&t, dw);
	}
	tq_publish_one_run(&t);
	ASSERT_TRUE(tq_wait_cons(&t, t.prod));
	hwt_smmu_dev_get_stats(t.dev, &st);
	ASSERT_EQ(st.cmds, 8);
	ASSERT_EQ(st.cons_updates, 1); /* counted before the store too */
	tq_free(&t);
}

/*
 * The prefetch window stops at PROD: slots beyond it are the producer's.
 * A prefetch changes nothing a test can see, so this checks the window's
 * end the consumer computes (hwt__dev_prefetch_end, white box) for the
 * segments of each burst, and that poisoned slots beyond PROD never reach
 * the handler.
 */
static void check_prefetch_window(uint32_t total)
{
	for (uint32_t at = 0; at < total; at += 32) {
		uint32_t n = total - at < 32 ? total - at : 32;
		uint32_t end = hwt__dev_prefetch_end(at, n, total);

		ASSERT_LE(end, total);  /* never past PROD */
		ASSERT_GE(end, at + n); /* the segment itself */
		ASSERT_TRUE(end == total || end >= at + n + HWT__PREFETCH_AHEAD); /* and ahead */
	}
}

TEST(prefetch_stops_at_prod)
{
	struct hwt_smmu_dev_config cfg;
	struct rec *rec = rec_new();
	struct tq t;
	uint64_t dw[2], poison[2] = { 0xdeadbeef00000001ull, 0x0badc0de0badc0deull };
	const unsigned bursts[] = { 10, 1, 37, 200, 3 };
	uint32_t from = 0;

	hwt_smmu_dev_config_default(&cfg);
	cfg.handler = rec_handler;
	cfg.handler_ctx = rec;
	cfg.cmdqs = 9;
	tq_start(&t, &cfg, 9); /* 512 entries: room for the window of 128 */
	for (uint32_t i = 0; i < 512; i++)
		tq_write_at(&t, i, poison);
	for (unsigned b = 0; b < sizeof(bursts) / sizeof(bursts[0]); b++) {
		for (unsigned i = 0; i < bursts[b]; i++) {
			tst_cmd_seq(dw, i);
			tq_put(&t, dw);
		}
		tq_publish_one_run(&t);
		ASSERT_TRUE(tq_wait_cons(&t, t.prod));
		check_prefetch_window(bursts[b]);
		for (unsigned i = 0; i < bursts[b]; i++)
			tq_write_at(&t, from + i, poison); /* consumed: poison again */
		from = t.prod;
	}
	for (unsigned i = 0; i < rec_count(rec); i++)
		ASSERT_NE(rec->dw0[i], poison[0]);
	tq_free(&t);
	free(rec);
}

TEST(handler_sees_every_command_but_sync)
{
	struct hwt_smmu_dev_stats st;
	struct rec *rec = rec_new();
	struct tq t;
	uint64_t dw[2];
	unsigned n = 0;

	tq_start_recording(&t, rec, 4);
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

/* The cpu rule (hwt_smmu_dev_create(3)): -1 or 0..CPU_SETSIZE - 1 at
 * create, else -EINVAL; a CPU the thread cannot run on (here one past the
 * possible CPUs) fails at start, with the error of pinning the thread. */
TEST(cpu_out_of_range_is_einval)
{
	struct hwt_smmu_dev_config cfg;
	struct hwt_smmu_dev *dev;
	long conf = sysconf(_SC_NPROCESSORS_CONF);

	hwt_smmu_dev_config_default(&cfg);
	cfg.cpu = CPU_SETSIZE;
	ASSERT_EQ(hwt_smmu_dev_create(&dev, &cfg), -EINVAL);
	cfg.cpu = INT_MAX;
	ASSERT_EQ(hwt_smmu_dev_create(&dev, &cfg), -EINVAL);
	ASSERT_GT(conf, 0);
	if (conf >= CPU_SETSIZE)
		SKIP("%ld CPUs: no impossible CPU below CPU_SETSIZE to pin to", conf);
	cfg.cpu = (int)conf;
	ASSERT_OK(hwt_smmu_dev_create(&dev, &cfg));
	ASSERT_EQ(hwt_smmu_dev_start(dev), -EINVAL);
	ASSERT_FALSE(hwt__reg_cmdq_enabled(hwt__bus_regs(dev)));
	hwt_smmu_dev_destroy(dev);
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
		uint32_t before = tq_cons(&t);

		ASSERT_OK(hwt_smmu_dev_pause(t.dev));
		for (int i = 0; i < 4; i++) {
			tst_cmd_seq(dw, (uint32_t)i);
			tq_put(&t, dw);
		}
		tq_publish(&t);
		tq_sleep_ms(30);
		ASSERT_EQ(tq_cons(&t), before); /* nothing consumed */
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
	tq_sleep_ms(20);
	ASSERT_NE(tq_cons(&t), t.prod);
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
	ASSERT_EQ(hwt__reg_cmdq_enabled(t.r), 0);
	ASSERT_NE(atomic_load_explicit(&t.r->evt, memory_order_seq_cst), e0);
	ASSERT_OK(hwt_smmu_dev_stop(t.dev)); /* idempotent */
	/* stopped: nothing consumed */
	tst_cmd_seq(dw, 2);
	tq_put(&t, dw);
	tq_publish(&t);
	tq_sleep_ms(20);
	ASSERT_NE(tq_cons(&t), t.prod);
	/* restart continues at CONS */
	ASSERT_OK(hwt_smmu_dev_start(t.dev));
	ASSERT_EQ(hwt__reg_cmdq_enabled(t.r), 1);
	ASSERT_TRUE(tq_wait_cons(&t, t.prod));
	tq_free(&t);
}

/* Idle long enough to sleep, then PROD moves without the doorbell wake: the
 * bounded sleep must still notice it. */
static uint64_t dev_sleeps(const struct tq *t)
{
	struct hwt_smmu_dev_stats st;

	hwt_smmu_dev_get_stats(t->dev, &st);
	return st.sleeps;
}

TEST(bounded_sleep_notices_prod)
{
	struct hwt_smmu_dev_config cfg;
	struct tq t;
	uint64_t dw[2];

	hwt_smmu_dev_config_default(&cfg);
	cfg.spin_ns = 1000;
	tq_start(&t, &cfg, 4);
	TQ_WAIT_UNTIL(dev_sleeps(&t) > 0);
	tq_sleep_ms(50); /* idle */
	tst_cmd_seq(dw, 1);
	tq_put(&t, dw);
	atomic_store_explicit(&t.r->prod, t.prod, memory_order_seq_cst); /* no futex wake */
	ASSERT_TRUE(tq_wait_cons(&t, t.prod));
	/* and with the doorbell */
	tq_sleep_ms(50);
	tst_cmd_seq(dw, 2);
	tq_put(&t, dw);
	tq_drain(&t);
	tq_free(&t);
}

/*
 * spin_ns 0 (the default) is auto: at least HWT_SMMU_DEV_SPIN_NS_AUTO and
 * at least one futex wake-up as measured at the first such create in the
 * process (within its budget: the bound below only catches a measurement
 * that does not end, it is no speed).  An explicit spin_ns is kept.
 */
TEST(auto_spin_covers_a_futex_wake)
{
	struct hwt_smmu_dev_config cfg;
	struct hwt_smmu_dev_stats st;
	struct hwt_smmu_dev *dev;
	uint64_t t0, ns;

	hwt_smmu_dev_config_default(&cfg);
	t0 = hwt__now_ns();
	ASSERT_OK(hwt_smmu_dev_create(&dev, &cfg)); /* the first in this process */
	ns = hwt__now_ns() - t0;
	hwt_smmu_dev_get_stats(dev, &st);
	TLOG("futex wake-up %u ns (0: not measured), spin %u ns, first create %.2f ms", st.wake_ns,
	     st.spin_ns, ns / 1e6);
	ASSERT_LT(ns, (uint64_t)(1e9 * hwt_test_scale()));
	ASSERT_LE(st.wake_ns, 1000000);
	ASSERT_EQ(st.spin_ns, st.wake_ns > HWT_SMMU_DEV_SPIN_NS_AUTO ? st.wake_ns
								   : HWT_SMMU_DEV_SPIN_NS_AUTO);
	hwt_smmu_dev_get_config(dev, &cfg);
	ASSERT_EQ(cfg.spin_ns, 0); /* the configuration as given */
	hwt_smmu_dev_destroy(dev);

	cfg.spin_ns = 1000;
	ASSERT_OK(hwt_smmu_dev_create(&dev, &cfg));
	hwt_smmu_dev_get_stats(dev, &st);
	ASSERT_EQ(st.spin_ns, 1000);
	ASSERT_EQ(st.wake_ns, 0);
	hwt_smmu_dev_destroy(dev);
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
		tst_cmd_sync(dw, HWT_SMMU_CS_IRQ, t.iova + 16u * tq_idx(&t, t.prod), 0);
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
