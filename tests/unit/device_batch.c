/* SPDX-License-Identifier: MIT */
/*
 * The software SMMU's batch handler (cfg.handler_batch), through the
 * minimal producer of tests/harness/tq.h: runs end at a CMD_SYNC, at the
 * wrap, at PROD and at the cons_batch publication; the commands arrive in
 * host order; an error mid-run stops CONS at the exact entry and a retry
 * after GERRORN resumes there; injected faults and the per-command cost
 * still apply, and a costly run is still paused promptly.
 */
#include "harness/harness.h"
#include "harness/cmds.h"
#include "harness/tq.h"

#include "common/time.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

static struct rec *batch_rig(struct tq *t, struct hwt_smmu_dev_config *cfg, unsigned n)
{
	struct rec *rec = rec_new();

	cfg->handler_batch = rec_batch_handler;
	cfg->handler_ctx = rec;
	rec->t = t;
	tq_start(t, cfg, n);
	return rec;
}

/* Put seq numbers from..from+n-1; returns the position after them. */
static uint32_t put_seqs(struct tq *t, uint32_t from, unsigned n)
{
	uint64_t dw[2];

	for (unsigned i = 0; i < n; i++) {
		tst_cmd_seq(dw, from + i);
		tq_put(t, dw);
	}
	return t->prod;
}

/* Call c of rec has n commands, the first of them seq number first. */
static void check_call(struct rec *rec, unsigned c, unsigned n, uint32_t first)
{
	ASSERT_GT(rec_calls(rec), c);
	ASSERT_EQ(rec->call_n[c], n);
	ASSERT_EQ(rec->dw0[rec->call_first[c]] >> 32, first);
}

TEST(batch_runs_end_at_sync_wrap_and_prod)
{
	struct hwt_smmu_dev_config cfg;
	struct hwt_smmu_dev_stats st;
	struct tq t;
	struct rec *rec;
	uint64_t dw[2];

	hwt_smmu_dev_config_default(&cfg);
	rec = batch_rig(&t, &cfg, 4); /* 16 entries */
	put_seqs(&t, 0, 10);
	tq_drain(&t); /* CONS at 10 */
	check_call(rec, 0, 10, 0);

	/* one PROD read: 3 commands, a sync, 5 commands across the wrap */
	put_seqs(&t, 100, 3);
	tst_cmd_sync(dw, HWT_SMMU_CS_NONE, 0, 0);
	tq_put(&t, dw);
	put_seqs(&t, 103, 5);
	tq_publish_one_run(&t);
	ASSERT_TRUE(tq_wait_cons(&t, t.prod));
	ASSERT_EQ(rec_calls(rec), 4);
	check_call(rec, 1, 3, 100); /* up to the sync */
	check_call(rec, 2, 2, 103); /* up to the wrap (entries 14, 15) */
	check_call(rec, 3, 3, 105); /* entries 0..2 of the next lap, up to PROD */
	/* CONS moved at the sync and at the end of the run only */
	ASSERT_EQ(rec->cons_seen[rec->call_first[1]], 10);
	ASSERT_EQ(rec->cons_seen[rec->call_first[2]], 14);
	ASSERT_EQ(rec->cons_seen[rec->call_first[3]], 14);

	/* every other encoding is the handler's, dwords in host order */
	for (uint64_t i = 0; i < 6; i++) {
		dw[0] = 0x0123456700000000ull | i << 8 | 0x7f;
		dw[1] = 0x89abcdef01234567ull ^ i;
		tq_put(&t, dw);
	}
	tq_publish_one_run(&t);
	ASSERT_TRUE(tq_wait_cons(&t, t.prod));
	ASSERT_EQ(rec_calls(rec), 5);
	ASSERT_EQ(rec->call_n[4], 6);
	for (uint64_t i = 0; i < 6; i++) {
		ASSERT_EQ_U64(rec->dw0[rec->call_first[4] + i], 0x0123456700000000ull | i << 8 | 0x7f);
		ASSERT_EQ_U64(rec->dw1[rec->call_first[4] + i], 0x89abcdef01234567ull ^ i);
	}
	hwt_smmu_dev_get_stats(t.dev, &st);
	ASSERT_EQ(st.cmds, 10 + 9 + 6);
	ASSERT_EQ(st.syncs, 1);
	tq_free(&t);
	free(rec);
}

/* n commands in one run through rec_batch_handler, cons_batch as given. */
static struct rec *one_run(struct tq *t, unsigned cons_batch, unsigned n)
{
	struct hwt_smmu_dev_config cfg;
	struct rec *rec;

	hwt_smmu_dev_config_default(&cfg);
	cfg.cons_batch = cons_batch;
	rec = batch_rig(t, &cfg, 7);
	put_seqs(t, 0, n);
	tq_publish_one_run(t);
	ASSERT_TRUE(tq_wait_cons(t, n));
	return rec;
}

/* A long run is one call (no per-command cut), and with cons_batch N the
 * calls end at each CONS publication. */
TEST(batch_runs_and_cons_batch)
{
	struct tq t;
	struct rec *rec = one_run(&t, 0, 100);

	ASSERT_EQ(rec_calls(rec), 1);
	check_call(rec, 0, 100, 0);
	tq_free(&t);
	free(rec);

	rec = one_run(&t, 4, 10);
	ASSERT_EQ(rec_calls(rec), 3);
	check_call(rec, 0, 4, 0);
	check_call(rec, 1, 4, 4);
	check_call(rec, 2, 2, 8);
	for (unsigned i = 0; i < 10; i++)
		ASSERT_EQ(rec->cons_seen[i], i / 4 * 4);
	tq_free(&t);
	free(rec);
}

/*
 * The fourth command of a run of six fails: CONS stops at it with
 * CONS.ERR, the three before it executed (and counted), nothing moves until
 * GERRORN; then the rewritten entry and the rest run, each exactly once.
 */
static void check_batch_error(int code, uint32_t want_err)
{
	struct hwt_smmu_dev_config cfg;
	struct hwt_smmu_dev_stats st;
	struct tq t;
	struct rec *rec;
	uint64_t dw[2];
	uint32_t start, bad_at;

	hwt_smmu_dev_config_default(&cfg);
	rec = batch_rig(&t, &cfg, 3); /* 8 entries */
	rec->fail_op = 0x55;
	rec->fail_code = code;
	start = put_seqs(&t, 0, 6);
	tq_drain(&t); /* the error sits past the wrap */
	put_seqs(&t, 0, 3);
	dw[0] = 3ull << 32 | 0x55;
	dw[1] = 0;
	bad_at = tq_put(&t, dw);
	put_seqs(&t, 4, 2);
	tq_publish_one_run(&t);
	ASSERT_EQ(tq_wait_err(&t), want_err);
	ASSERT_EQ(tq_cons(&t), bad_at);
	ASSERT_EQ(bad_at, (start + 3) & tq_ptr_mask(&t));
	hwt_smmu_dev_get_stats(t.dev, &st);
	ASSERT_EQ(st.cmds, 6 + 3);
	ASSERT_EQ(st.errors, 1);
	tq_sleep_ms(20);
	ASSERT_EQ(tq_cons(&t), bad_at); /* no progress before the ack */
	ASSERT_EQ(rec_count(rec), 6 + 3);
	tst_cmd_seq(dw, 3); /* the driver fixes the entry and acknowledges */
	tq_write_at(&t, bad_at, dw);
	tq_ack_errors(&t);
	ASSERT_TRUE(tq_wait_cons(&t, t.prod));
	ASSERT_EQ(tq_cons_err(&t), 0);
	ASSERT_EQ(rec_count(rec), 6 + 6);
	for (unsigned i = 0; i < 6; i++)
		ASSERT_EQ(rec->dw0[6 + i] >> 32, i); /* each once, in order */
	check_call(rec, 3, 3, 3); /* calls: 6; 2 to the wrap; 4 failing at its 2nd; the retry */
	hwt_smmu_dev_get_stats(t.dev, &st);
	ASSERT_EQ(st.cmds, 12);
	tq_free(&t);
	free(rec);
}

TEST(batch_error_stops_at_the_exact_entry)
{
	check_batch_error(HWT_SMMU_CERROR_ILL, HWT_SMMU_CERROR_ILL);
	check_batch_error(HWT_SMMU_CERROR_ABT, HWT_SMMU_CERROR_ABT);
	check_batch_error(-5, HWT_SMMU_CERROR_ILL); /* not a CERROR: ILL */
}

/* A handler reporting more done than it was given: the error is at the
 * run's last command. */
static int overdone(void *ctx, const uint64_t (*cmds)[2], unsigned n, unsigned *done)
{
	(void)ctx, (void)cmds;
	*done = n + 5;
	return HWT_SMMU_CERROR_ILL;
}

TEST(batch_error_done_out_of_range)
{
	struct hwt_smmu_dev_config cfg;
	struct tq t;

	hwt_smmu_dev_config_default(&cfg);
	cfg.handler_batch = overdone;
	tq_start(&t, &cfg, 4);
	put_seqs(&t, 0, 5);
	tq_publish_one_run(&t);
	ASSERT_EQ(tq_wait_err(&t), HWT_SMMU_CERROR_ILL);
	ASSERT_EQ(tq_cons(&t), 4);
	tq_free(&t);
}

TEST(batch_injected_faults)
{
	struct hwt_smmu_dev_config cfg;
	struct hwt_smmu_dev_stats st;
	struct tq t;
	struct rec *rec;
	uint64_t dw[2];
	uint32_t sync_at;

	hwt_smmu_dev_config_default(&cfg);
	rec = batch_rig(&t, &cfg, 4);
	/* ABT at the next fetch: the first entry of the run, no call */
	ASSERT_OK(hwt_smmu_dev_inject(t.dev, HWT_SMMU_FAULT_ABT));
	put_seqs(&t, 0, 4);
	tq_publish(&t);
	ASSERT_EQ(tq_wait_err(&t), HWT_SMMU_CERROR_ABT);
	ASSERT_EQ(tq_cons(&t), 0);
	tq_sleep_ms(20);
	ASSERT_EQ(rec_calls(rec), 0);
	tq_ack_errors(&t); /* the same entries fetched again */
	ASSERT_TRUE(tq_wait_cons(&t, 4));
	ASSERT_EQ(rec_count(rec), 4);
	for (unsigned i = 0; i < 4; i++)
		ASSERT_EQ(rec->dw0[i] >> 32, i);

	/* ATC timeout: the CMD_SYNC after the ATC_INV of a run fails */
	ASSERT_OK(hwt_smmu_dev_inject(t.dev, HWT_SMMU_FAULT_ATC_TIMEOUT));
	put_seqs(&t, 10, 1);
	TST_ENC(dw, ATC_INV, TST_FV(SID, 3), TST_FV(SIZE, 52));
	tq_put(&t, dw);
	put_seqs(&t, 11, 1);
	tst_cmd_sync(dw, HWT_SMMU_CS_SEV, 0, 0);
	sync_at = tq_put(&t, dw);
	tq_publish(&t);
	ASSERT_EQ(tq_wait_err(&t), HWT_SMMU_CERROR_ATC_INV_SYNC);
	ASSERT_EQ(tq_cons(&t), sync_at); /* the run before it executed */
	ASSERT_EQ(rec_count(rec), 4 + 3);
	tq_ack_errors(&t); /* the sync again: succeeds now */
	ASSERT_TRUE(tq_wait_cons(&t, t.prod));
	hwt_smmu_dev_get_stats(t.dev, &st);
	ASSERT_EQ(st.errors, 2);
	ASSERT_EQ(st.syncs, 1);
	ASSERT_EQ(st.cmds, 4 + 3 + 1);
	tq_free(&t);
	free(rec);
}

/*
 * cmd_cost_ns applies per command with a batch handler too (K commands
 * take at least K x the cost: a lower bound, never a speed), and calls are
 * cut so that a pause is acted on between two commands of a long costly
 * run (300 x 2 ms would otherwise be one call of 600 ms).
 */
TEST(batch_cost_and_prompt_pause)
{
	enum { K = 20, LONG = 300 };
	const unsigned cost = 2000000;
	struct hwt_smmu_dev_config cfg;
	struct hwt_smmu_dev_stats st;
	struct tq t;
	struct rec *rec;
	uint64_t t0, ns;

	hwt_smmu_dev_config_default(&cfg);
	cfg.cmd_cost_ns = cost;
	cfg.cmdqs = 9;
	rec = batch_rig(&t, &cfg, 9); /* 512 entries */
	put_seqs(&t, 0, K);
	t0 = hwt__now_ns();
	tq_drain(&t);
	ns = hwt__now_ns() - t0;
	TLOG("%u commands: %.2f ms (at least %.2f)", K, ns / 1e6, K * cost / 1e6);
	ASSERT_GE(ns, (uint64_t)K * cost);

	put_seqs(&t, K, LONG);
	tq_publish(&t);
	do {
		tq_sleep_ms(1);
		hwt_smmu_dev_get_stats(t.dev, &st);
	} while (st.cmds == K);
	ASSERT_OK(hwt_smmu_dev_pause(t.dev));
	hwt_smmu_dev_get_stats(t.dev, &st);
	TLOG("paused after %llu of %u costly commands", (unsigned long long)(st.cmds - K), LONG);
	ASSERT_LT(st.cmds, K + LONG);
	ASSERT_EQ(rec_count(rec), st.cmds);
	for (unsigned c = 0; c < rec_calls(rec) && c < REC_CALLS_MAX; c++)
		ASSERT_EQ(rec->call_n[c], 1); /* 100 us / 2 ms: one command a call */
	tq_free(&t);
	free(rec);
}
