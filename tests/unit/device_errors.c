/* SPDX-License-Identifier: MIT */
/*
 * The software SMMU's command errors, through the minimal producer of
 * tests/harness/tq.h: CONS.ERR and GERROR, no progress before the
 * acknowledgement, ILL (opcode, SSec, reserved bits, handler), fetch abort
 * retried, ATC invalidation timeout on the next sync, acknowledgement from
 * the GERROR interrupt, stop while in error.
 */
#include "harness/harness.h"
#include "harness/cmds.h"
#include "harness/tq.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

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
	tq_set_gerror_irq(&t, gerr_irq, &gc);
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
	ASSERT_EQ(tq_cons(&t), bad_at);
	/* GERROR follows CONS.ERR, then the interrupt */
	TQ_WAIT_UNTIL(atomic_load_explicit(&gc.n, memory_order_acquire));
	ASSERT_EQ((hwt__reg_read_gerror(t.r) ^ g0) & HWT_SMMU_GERROR_CMDQ_ERR,
		  HWT_SMMU_GERROR_CMDQ_ERR);
	tq_sleep_ms(50);
	ASSERT_EQ(atomic_load_explicit(&gc.n, memory_order_relaxed), 1);
	ASSERT_EQ(tq_cons(&t), bad_at); /* no progress before the ack */
	ASSERT_EQ(tq_cons_err(&t), code);
	/* a PROD write does not restart it either */
	tq_publish(&t);
	tq_sleep_ms(10);
	ASSERT_EQ(tq_cons(&t), bad_at);
	if (rewrite) {
		tst_cmd_sync(dw, HWT_SMMU_CS_NONE, 0, 0); /* what the driver's skip does */
		tq_write_at(&t, bad_at, dw);
	}
	tq_ack_errors(&t);
	ASSERT_TRUE(tq_wait_cons(&t, t.prod));
	ASSERT_EQ(tq_cons_err(&t), 0);
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
	struct rec *rec = rec_new();
	struct tq t;
	uint64_t dw[2];

	tq_start_recording(&t, rec, 4);
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
	ASSERT_EQ(tq_cons(&t), 1);
	tq_sleep_ms(20);
	ASSERT_EQ(rec_count(rec), 1);
	tq_ack_errors(&t); /* no rewrite: the same entry is fetched again */
	ASSERT_TRUE(tq_wait_cons(&t, 5));
	ASSERT_EQ(rec_count(rec), 5);
	for (uint32_t i = 0; i < 5; i++)
		ASSERT_EQ(rec->dw0[i] >> 32, i); /* each exactly once, in order */
	tq_free(&t);
	free(rec);
}

/* A pause while an error waits for GERRORN must not end the error: after
 * resume the device still waits for the acknowledgement (it does not clear
 * CONS.ERR and run on by itself). */
TEST(pause_in_error_keeps_waiting_for_the_acknowledgement)
{
	struct rec *rec = rec_new();
	struct tq t;
	uint64_t dw[2];

	tq_start_recording(&t, rec, 4);
	ASSERT_OK(hwt_smmu_dev_inject(t.dev, HWT_SMMU_FAULT_ABT));
	tst_cmd_seq(dw, 0);
	tq_put(&t, dw);
	tq_publish(&t);
	ASSERT_EQ(tq_wait_err(&t), HWT_SMMU_CERROR_ABT);
	ASSERT_OK(hwt_smmu_dev_pause(t.dev));
	ASSERT_OK(hwt_smmu_dev_resume(t.dev));
	tq_sleep_ms(20);
	ASSERT_EQ(tq_cons_err(&t), HWT_SMMU_CERROR_ABT); /* still in error */
	ASSERT_EQ(rec_count(rec), 0);
	tq_ack_errors(&t);
	ASSERT_TRUE(tq_wait_cons(&t, 1));
	ASSERT_EQ(rec_count(rec), 1);
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
	ASSERT_EQ(tq_cons(&t), sync_at); /* the commands before it executed */
	tq_ack_errors(&t); /* retry the sync: succeeds now */
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
	tq_ack_errors(a->t);
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
	tq_set_gerror_irq(&t, inline_ack_irq, &a);
	for (int lap = 0; lap < 5; lap++) {
		tst_cmd_seq(dw, 1);
		tq_put(&t, dw);
		tq_put(&t, bad);
		tst_cmd_seq(dw, 2);
		tq_put(&t, dw);
		tq_drain(&t);
	}
	ASSERT_EQ(atomic_load_explicit(&a.calls, memory_order_relaxed), 5);
	tq_set_gerror_irq(&t, NULL, NULL);
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
	tq_sleep_ms(20);
	ASSERT_EQ(tq_cons(&t), 0);
	ASSERT_EQ(tq_cons_err(&t), HWT_SMMU_CERROR_ILL);
	tst_cmd_sync(dw, HWT_SMMU_CS_NONE, 0, 0);
	tq_write_at(&t, 0, dw);
	tq_ack_errors(&t);
	ASSERT_TRUE(tq_wait_cons(&t, t.prod));
	tq_free(&t);
}
