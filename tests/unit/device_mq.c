/* SPDX-License-Identifier: MIT */
/*
 * The software SMMU's several command queues (ECMDQ-like), driven through
 * the bus registers as a driver would (hwt__reg_q_*): the per-queue enable
 * handshake, commands of queues 0..3 executed in order per queue and
 * exactly once, CMD_SYNC per queue with its MSI in a word of another DMA
 * region, an error that stops its own queue only, fair service (a sync on
 * one queue while another streams), stop and start with several queues.
 */
#include "harness/harness.h"
#include "harness/cmds.h"
#include "harness/tq.h"

#include "common/time.h"
#include "device/impl.h"

#include <endian.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define NQ 4
#define QSEQ(q, k) ((uint32_t)(q) << 24 | (k)) /* a sequence number of queue q */
#define OP_BAD 0x7f                            /* an opcode the handler refuses */
#define LOG_N 4096                             /* commands whose queue is logged */

struct mq {
	struct hwt_smmu_dev *dev;
	struct hwt__smmu_regs *r;
	uint64_t *mem[NQ];
	uint64_t iova[NQ];
	unsigned n[NQ];    /* log2 entries */
	uint32_t prod[NQ]; /* WRP | IDX */
	/* written by the handler (the consumer thread), read after A_CONS */
	_Atomic uint32_t next[NQ]; /* next sequence number expected per queue */
	_Atomic uint32_t bad;      /* commands out of order or repeated */
	_Atomic uint32_t gerr_irqs;
	/* the queue of each command executed, in order (the first LOG_N) */
	uint8_t log[LOG_N];
	_Atomic uint32_t nlog;
};

/* Records the commands of tst_cmd_seq(QSEQ(q, k)): per queue, k must be
 * the next one.  OP_BAD fails with ILL. */
static int mq_handler(void *ctx, const uint64_t dw[2])
{
	struct mq *m = ctx;
	uint32_t seq = (uint32_t)(dw[0] >> 32), q = seq >> 24, k = seq & 0xffffff, nl;

	if ((dw[0] & 0xff) == OP_BAD)
		return HWT_SMMU_CERROR_ILL;
	if (q >= NQ)
		return HWT_SMMU_CERROR_ILL;
	if (atomic_load_explicit(&m->next[q], memory_order_relaxed) != k)
		atomic_fetch_add_explicit(&m->bad, 1, memory_order_relaxed);
	/* relaxed: only this thread writes nlog and log; a reader reads them
	 * after A_CONS of a CONS past this command (mq_drain) */
	nl = atomic_load_explicit(&m->nlog, memory_order_relaxed);
	if (nl < LOG_N) {
		m->log[nl] = (uint8_t)q;
		atomic_store_explicit(&m->nlog, nl + 1, memory_order_relaxed);
	}
	atomic_store_explicit(&m->next[q], k + 1, memory_order_release);
	return HWT_SMMU_CERROR_NONE;
}

static void mq_gerr_irq(void *ctx)
{
	atomic_fetch_add_explicit(&((struct mq *)ctx)->gerr_irqs, 1, memory_order_relaxed);
}

static uint32_t mq_mask(const struct mq *m, unsigned i)
{
	return (2u << m->n[i]) - 1;
}

/* Map queue i's memory (2^n entries) and reset its registers to it. */
static void mq_queue(struct mq *m, unsigned i, unsigned n)
{
	size_t bytes = (size_t)16 << n, al = bytes < 4096 ? 4096 : bytes;

	m->n[i] = n;
	m->prod[i] = 0;
	m->mem[i] = aligned_alloc(al, al);
	ASSERT_TRUE(m->mem[i]);
	memset(m->mem[i], 0, bytes);
	ASSERT_OK(hwt__bus_dma_map(m->dev, m->mem[i], bytes, &m->iova[i]));
	hwt__reg_q_reset(m->r, i, m->iova[i] | n);
}

/* A device of NQ queues with cfg (its handler: mq_handler); queues 0..nq-1
 * of 2^n entries mapped and reset, not enabled, the device not started. */
static void mq_setup(struct mq *m, struct hwt_smmu_dev_config *cfg, unsigned nq, unsigned n)
{
	memset(m, 0, sizeof(*m));
	cfg->handler = mq_handler;
	cfg->handler_ctx = m;
	ASSERT_OK(hwt__dev_create_nq(&m->dev, cfg, NQ));
	m->r = hwt__bus_regs(m->dev);
	ASSERT_EQ(hwt__reg_nqueues(m->r), NQ);
	ASSERT_OK(hwt__bus_attach(m->dev, m, mq_gerr_irq, m));
	for (unsigned i = 0; i < nq; i++)
		mq_queue(m, i, n);
}

/* Write Q_EN of queue i and wait (bounded) for its acknowledgement. */
static uint32_t mq_en(struct mq *m, unsigned i, uint32_t en)
{
	uint32_t v = hwt__reg_q_write_en(m->r, i, en);

	TQ_WAIT_UNTIL(hwt__reg_q_read_enack(m->r, i) == v);
	return v;
}

static void mq_start(struct mq *m, struct hwt_smmu_dev_config *cfg, unsigned nq, unsigned n)
{
	mq_setup(m, cfg, nq, n);
	ASSERT_OK(hwt_smmu_dev_start(m->dev));
	for (unsigned i = 0; i < nq; i++) {
		mq_en(m, i, HWT__Q_EN);
		ASSERT_TRUE(hwt__reg_q_enabled(m->r, i));
	}
}

static void mq_free(struct mq *m)
{
	ASSERT_OK(hwt_smmu_dev_stop(m->dev));
	ASSERT_OK(hwt__bus_detach(m->dev, m));
	hwt_smmu_dev_destroy(m->dev);
	for (unsigned i = 0; i < NQ; i++)
		free(m->mem[i]);
}

static uint32_t mq_cons(struct mq *m, unsigned i)
{
	return hwt__reg_q_read_cons(m->r, i) & mq_mask(m, i); /* A_CONS */
}

static uint32_t mq_cons_err(struct mq *m, unsigned i)
{
	return hwt__reg_q_read_cons(m->r, i) >> HWT_SMMU_CONS_ERR_SHIFT & HWT_SMMU_CONS_ERR_MASK;
}

static void mq_write_at(struct mq *m, unsigned i, uint32_t p, const uint64_t dw[2])
{
	uint64_t *e = m->mem[i] + 2 * (p & ((1u << m->n[i]) - 1));

	e[0] = htole64(dw[0]);
	e[1] = htole64(dw[1]);
}

/* Write at PROD of queue i (not published); the entry's position. */
static uint32_t mq_put(struct mq *m, unsigned i, const uint64_t dw[2])
{
	uint32_t p = m->prod[i];

	mq_write_at(m, i, p, dw);
	m->prod[i] = (p + 1) & mq_mask(m, i);
	return p;
}

static void mq_publish(struct mq *m, unsigned i)
{
	hwt__reg_q_write_prod(m->r, i, m->prod[i]); /* R_PROD */
}

/* Entries free in queue i (as the driver counts: CONS read with A_CONS). */
static uint32_t mq_space(struct mq *m, unsigned i)
{
	uint32_t used = (m->prod[i] - mq_cons(m, i)) & mq_mask(m, i);

	return (1u << m->n[i]) - used;
}

static void mq_drain(struct mq *m, unsigned i)
{
	mq_publish(m, i);
	TQ_WAIT_UNTIL(mq_cons(m, i) == m->prod[i] && !mq_cons_err(m, i));
}

/* ---- enable ------------------------------------------------------------- */

/* Queue i >= 1 has queue 0's handshake: the write count echoed, refused
 * with EN 0 and the same count, Q_EN_SEEN kept across a stop, every
 * Q_ENACK 0 while stopped, Q_EN acted on at start. */
TEST(mq_enable_handshake_per_queue)
{
	struct hwt_smmu_dev_config cfg;
	struct mq m;
	uint32_t v, v2;

	hwt_smmu_dev_config_default(&cfg);
	mq_setup(&m, &cfg, 3, 3);
	/* written while stopped: not acknowledged, acted on at start */
	v = hwt__reg_q_write_en(m.r, 2, HWT__Q_EN);
	ASSERT_EQ(hwt__reg_q_read_enack(m.r, 2), 0);
	ASSERT_FALSE(hwt__reg_q_en_acted(m.r, 2));
	ASSERT_OK(hwt_smmu_dev_start(m.dev));
	ASSERT_EQ(hwt__reg_q_read_enack(m.r, 2), v);
	ASSERT_TRUE(hwt__reg_q_en_acted(m.r, 2));
	for (unsigned i = 0; i < 3; i++) {
		v = mq_en(&m, i, HWT__Q_EN);
		ASSERT_TRUE(v & HWT__Q_EN);
		ASSERT_TRUE(hwt__reg_q_enabled(m.r, i));
		ASSERT_TRUE(hwt__reg_q_en_acted(m.r, i));
	}
	ASSERT_FALSE(hwt__reg_q_enabled(m.r, 3));
	/* disable and enable again: each write count echoed */
	v = mq_en(&m, 1, 0);
	ASSERT_EQ(v & HWT__Q_EN, 0);
	ASSERT_FALSE(hwt__reg_q_enabled(m.r, 1));
	ASSERT_TRUE(hwt__reg_q_enabled(m.r, 0));
	ASSERT_TRUE(hwt__reg_q_enabled(m.r, 2));
	v2 = mq_en(&m, 1, HWT__Q_EN);
	ASSERT_NE(v2, v);
	/* a base that describes no queue: refused, EN 0 with the same count */
	hwt__reg_q_reset(m.r, 3, 0);
	v = hwt__reg_q_write_en(m.r, 3, HWT__Q_EN);
	TQ_WAIT_UNTIL((hwt__reg_q_read_enack(m.r, 3) ^ v) >> HWT__CR0_SEQ_SHIFT == 0);
	ASSERT_EQ(hwt__reg_q_read_enack(m.r, 3), v & ~HWT__Q_EN);
	/* stop: every Q_ENACK 0, Q_EN_SEEN kept */
	ASSERT_OK(hwt_smmu_dev_stop(m.dev));
	for (unsigned i = 0; i < NQ; i++) {
		ASSERT_EQ(hwt__reg_q_read_enack(m.r, i), 0);
		ASSERT_TRUE(hwt__reg_q_en_acted(m.r, i));
	}
	/* unmapping a queue while stopped is allowed; detach needs every
	 * queue off, so disable them on the running device first */
	ASSERT_OK(hwt_smmu_dev_start(m.dev));
	ASSERT_EQ(hwt__reg_q_read_enack(m.r, 1), v2);
	ASSERT_EQ(hwt__bus_dma_unmap(m.dev, m.iova[1]), -EBUSY);
	ASSERT_EQ(hwt__bus_detach(m.dev, &m), -EBUSY);
	for (unsigned i = 0; i < 3; i++)
		mq_en(&m, i, 0);
	ASSERT_OK(hwt__bus_dma_unmap(m.dev, m.iova[1]));
	mq_free(&m);
}

/* ---- order -------------------------------------------------------------- */

#define ORDER_CMDS 3000u

struct producer {
	struct mq *m;
	unsigned q;
	uint32_t cmds;
};

/* Put cmds commands on queue q, publishing in small batches; waits for
 * space (bounded, yielding). */
static void *produce(void *arg)
{
	struct producer *p = arg;
	uint64_t dw[2];

	for (uint32_t k = 0; k < p->cmds;) {
		uint64_t dl = tq_deadline();
		uint32_t n;

		while ((n = mq_space(p->m, p->q)) == 0)
			tq_wait_step(dl, "space", __FILE__, __LINE__);
		n = n < 5 ? n : 5;
		for (; n && k < p->cmds; n--, k++) {
			tst_cmd_seq(dw, QSEQ(p->q, k));
			mq_put(p->m, p->q, dw);
		}
		mq_publish(p->m, p->q);
		if (k % 64 == 0)
			sched_yield();
	}
	return NULL;
}

/* Queues 0..3 fed by one thread each: per queue every command runs once,
 * in order. */
TEST_TIMEOUT(mq_commands_in_order_per_queue_exactly_once, 60)
{
	struct hwt_smmu_dev_config cfg;
	struct producer p[NQ];
	pthread_t th[NQ];
	struct mq m;

	hwt_smmu_dev_config_default(&cfg);
	mq_start(&m, &cfg, NQ, 4);
	for (unsigned i = 0; i < NQ; i++) {
		p[i] = (struct producer){ &m, i, ORDER_CMDS };
		ASSERT_EQ(pthread_create(&th[i], NULL, produce, &p[i]), 0);
	}
	for (unsigned i = 0; i < NQ; i++)
		pthread_join(th[i], NULL);
	for (unsigned i = 0; i < NQ; i++) {
		mq_drain(&m, i);
		ASSERT_EQ(atomic_load_explicit(&m.next[i], memory_order_acquire), ORDER_CMDS);
	}
	ASSERT_EQ(atomic_load_explicit(&m.bad, memory_order_relaxed), 0);
	mq_free(&m);
}

/* ---- CMD_SYNC ------------------------------------------------------------ */

/* A sync per queue with its MSI in a word of a region mapped apart from
 * the queues (as per-thread words are): the word is written after every
 * earlier command of its queue ran, CONS stops at the sync until it is. */
TEST_TIMEOUT(mq_sync_msi_to_a_separate_region_per_queue, 30)
{
	struct hwt_smmu_dev_config cfg;
	_Atomic uint32_t *words = aligned_alloc(64, 256);
	uint64_t words_iova, dw[2];
	uint32_t at[NQ];
	struct mq m;

	ASSERT_TRUE(words);
	hwt_smmu_dev_config_default(&cfg);
	cfg.msi_cost_ns = 100000000; /* 100 ms before each MSI write */
	mq_start(&m, &cfg, NQ, 4);
	for (unsigned i = 0; i < 64; i++)
		atomic_init(&words[i], 0);
	ASSERT_OK(hwt__bus_dma_map(m.dev, (void *)words, 256, &words_iova));
	for (unsigned i = 0; i < NQ; i++) {
		for (uint32_t k = 0; k < 5; k++) {
			tst_cmd_seq(dw, QSEQ(i, k));
			mq_put(&m, i, dw);
		}
		/* one word per queue, 16 words apart, the last one of the region
		 * for queue 3 */
		tst_cmd_sync(dw, HWT_SMMU_CS_IRQ, words_iova + 4 * (i == 3 ? 63 : 16 * i), 100 + i);
		at[i] = mq_put(&m, i, dw);
		tst_cmd_seq(dw, QSEQ(i, 5));
		mq_put(&m, i, dw);
	}
	for (unsigned i = 0; i < NQ; i++)
		mq_publish(&m, i);
	for (unsigned i = 0; i < NQ; i++) {
		_Atomic uint32_t *w = &words[i == 3 ? 63 : 16 * i];

		/* CONS reaches the sync (its earlier commands done) before the
		 * MSI, and passes it only after */
		TQ_WAIT_UNTIL(atomic_load_explicit(w, memory_order_acquire) == 100 + i || /* A_MSI */
			      mq_cons(&m, i) == at[i]);
		TQ_WAIT_UNTIL(atomic_load_explicit(w, memory_order_acquire) == 100 + i);
		ASSERT_GE(atomic_load_explicit(&m.next[i], memory_order_relaxed), 5);
		TQ_WAIT_UNTIL(mq_cons(&m, i) == m.prod[i]);
		ASSERT_EQ(atomic_load_explicit(&m.next[i], memory_order_acquire), 6);
	}
	/* no write outside the four words */
	for (unsigned i = 0; i < 64; i++)
		if (i != 0 && i != 16 && i != 32 && i != 63)
			ASSERT_EQ(atomic_load_explicit(&words[i], memory_order_relaxed), 0);
	/* the MSI on queue 1 waits: CONS sits at the sync meanwhile */
	tst_cmd_sync(dw, HWT_SMMU_CS_IRQ, words_iova + 4 * 16, 7);
	at[1] = mq_put(&m, 1, dw);
	mq_publish(&m, 1);
	TQ_WAIT_UNTIL(mq_cons(&m, 1) == at[1] ||
		      atomic_load_explicit(&words[16], memory_order_acquire) == 7);
	TQ_WAIT_UNTIL(mq_cons(&m, 1) == m.prod[1]);
	ASSERT_EQ(atomic_load_explicit(&words[16], memory_order_relaxed), 7); /* after A_CONS */
	ASSERT_EQ(atomic_load_explicit(&m.bad, memory_order_relaxed), 0);
	mq_free(&m);
	free((void *)words);
}

/* ---- errors ------------------------------------------------------------- */

/* An error on queue 1 stops queue 1 only: its CONS.ERR and Q_GERROR, the
 * GERROR line once; queues 0 and 2 keep completing; GERRORN of queue 1
 * (after the entry is rewritten) resumes it. */
TEST_TIMEOUT(mq_error_stops_only_its_queue, 30)
{
	struct hwt_smmu_dev_config cfg;
	uint64_t dw[2], bad[2] = { OP_BAD, 0 };
	uint32_t bad_at, g, g0;
	struct mq m;

	hwt_smmu_dev_config_default(&cfg);
	mq_start(&m, &cfg, 3, 4);
	g0 = hwt__reg_q_read_gerror(m.r, 0);
	tst_cmd_seq(dw, QSEQ(1, 0));
	mq_put(&m, 1, dw);
	bad_at = mq_put(&m, 1, bad);
	tst_cmd_seq(dw, QSEQ(1, 1));
	mq_put(&m, 1, dw);
	tst_cmd_sync(dw, HWT_SMMU_CS_NONE, 0, 0);
	mq_put(&m, 1, dw);
	mq_publish(&m, 1);
	TQ_WAIT_UNTIL(mq_cons_err(&m, 1) == HWT_SMMU_CERROR_ILL);
	ASSERT_EQ(mq_cons(&m, 1), bad_at);
	TQ_WAIT_UNTIL((hwt__reg_q_read_gerror(m.r, 1) ^ hwt__reg_q_read_gerrorn(m.r, 1)) &
		      HWT_SMMU_GERROR_CMDQ_ERR);
	TQ_WAIT_UNTIL(atomic_load_explicit(&m.gerr_irqs, memory_order_relaxed) == 1);
	/* queues 0 and 2 run on, several rounds, while queue 1 waits */
	for (uint32_t k = 0; k < 40; k++) {
		for (unsigned i = 0; i < 3; i += 2) {
			tst_cmd_seq(dw, QSEQ(i, k));
			mq_put(&m, i, dw);
			if (k % 5 == 4)
				mq_drain(&m, i);
		}
	}
	ASSERT_EQ(atomic_load_explicit(&m.next[0], memory_order_relaxed), 40);
	ASSERT_EQ(atomic_load_explicit(&m.next[2], memory_order_relaxed), 40);
	ASSERT_EQ(mq_cons(&m, 1), bad_at);
	ASSERT_EQ(mq_cons_err(&m, 1), HWT_SMMU_CERROR_ILL);
	ASSERT_EQ(mq_cons_err(&m, 0), 0);
	ASSERT_EQ(hwt__reg_q_read_gerror(m.r, 0), g0); /* queue 0's GERROR untouched */
	ASSERT_EQ(hwt__reg_q_read_gerror(m.r, 2), 0);
	ASSERT_EQ(atomic_load_explicit(&m.next[1], memory_order_relaxed), 1);
	ASSERT_EQ(atomic_load_explicit(&m.gerr_irqs, memory_order_relaxed), 1);
	/* rewrite the entry, acknowledge: queue 1 resumes at it */
	tst_cmd_sync(dw, HWT_SMMU_CS_NONE, 0, 0);
	mq_write_at(&m, 1, bad_at, dw);
	g = hwt__reg_q_read_gerror(m.r, 1);
	hwt__reg_q_write_gerrorn(m.r, 1, g);
	mq_drain(&m, 1);
	ASSERT_EQ(atomic_load_explicit(&m.next[1], memory_order_acquire), 2);
	ASSERT_EQ(mq_cons_err(&m, 1), 0);
	/* and an error on queue 0 leaves queue 2 running */
	mq_put(&m, 0, bad);
	mq_publish(&m, 0);
	TQ_WAIT_UNTIL(mq_cons_err(&m, 0) == HWT_SMMU_CERROR_ILL);
	/* GERROR toggles after CONS.ERR is published (R_CONS, then R_QGERR) */
	TQ_WAIT_UNTIL(hwt__reg_q_read_gerror(m.r, 0) != g0);
	tst_cmd_seq(dw, QSEQ(2, 40));
	mq_put(&m, 2, dw);
	mq_drain(&m, 2);
	ASSERT_EQ(hwt__reg_q_read_gerror(m.r, 1), g); /* no second toggle on queue 1 */
	ASSERT_EQ(atomic_load_explicit(&m.bad, memory_order_relaxed), 0);
	mq_free(&m);
}

/* ---- fairness ------------------------------------------------------------ */

struct stream {
	struct mq *m;
	_Atomic int stop;
	uint32_t k;
};

/* Keep queue 0 full (bounded: until told to stop). */
static void *stream_q0(void *arg)
{
	struct stream *s = arg;
	uint64_t dw[2];

	while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		uint32_t n = mq_space(s->m, 0);

		if (!n) {
			tq_sleep_ms(1);
			continue;
		}
		while (n--) {
			tst_cmd_seq(dw, QSEQ(0, s->k));
			s->k++;
			mq_put(s->m, 0, dw);
		}
		mq_publish(s->m, 0);
	}
	return NULL;
}

/*
 * An endless stream on queue 0 (a full queue of 2^14 commands at 200 us
 * each: 3.3 s per run of it) while a CMD_SYNC on queue 1 completes within a
 * generous bound: 2 s (never a speed; the latency is printed).  A device
 * that ran each queue to its PROD would keep the sync waiting for a run.
 */
TEST_TIMEOUT(mq_sync_completes_while_another_queue_streams, 60)
{
	struct hwt_smmu_dev_config cfg;
	struct stream s;
	pthread_t th;
	uint64_t dw[2], worst = 0;
	struct mq m;

	hwt_smmu_dev_config_default(&cfg);
	cfg.cmdqs = 14;
	cfg.cmd_cost_ns = 200000;
	mq_setup(&m, &cfg, 1, 14);
	mq_queue(&m, 1, 3);
	ASSERT_OK(hwt_smmu_dev_start(m.dev));
	mq_en(&m, 0, HWT__Q_EN);
	mq_en(&m, 1, HWT__Q_EN);
	s = (struct stream){ .m = &m };
	ASSERT_EQ(pthread_create(&th, NULL, stream_q0, &s), 0);
	TQ_WAIT_UNTIL(atomic_load_explicit(&m.next[0], memory_order_relaxed) > 100);
	for (int round = 0; round < 5; round++) {
		uint64_t t0, lat;

		tst_cmd_sync(dw, HWT_SMMU_CS_NONE, 0, 0);
		mq_put(&m, 1, dw);
		t0 = hwt__now_ns();
		mq_publish(&m, 1);
		while (mq_cons(&m, 1) != m.prod[1]) {
			if (hwt__now_ns() - t0 > 2000000000ull * hwt_test_scale())
				break;
			sched_yield();
		}
		lat = hwt__now_ns() - t0;
		worst = lat > worst ? lat : worst;
		hwt_test_log("sync on queue 1 while queue 0 streams: %.3f ms (queue 0 at %u)",
			     lat / 1e6, atomic_load_explicit(&m.next[0], memory_order_relaxed));
		ASSERT_EQ(mq_cons(&m, 1), m.prod[1]);
	}
	hwt_test_log("worst: %.3f ms", worst / 1e6);
	atomic_store_explicit(&s.stop, 1, memory_order_relaxed);
	pthread_join(th, NULL);
	ASSERT_OK(hwt_smmu_dev_stop(m.dev)); /* no need to drain the 3.3 s */
	ASSERT_EQ(atomic_load_explicit(&m.bad, memory_order_relaxed), 0);
	mq_free(&m);
}

/* ---- stop and start ------------------------------------------------------- */

/* Stop with four queues enabled and work published meanwhile: nothing runs
 * while stopped, every queue resumes at start where it was. */
TEST_TIMEOUT(mq_stop_start_with_several_queues, 30)
{
	struct hwt_smmu_dev_config cfg;
	uint32_t en[NQ];
	uint64_t dw[2];
	struct mq m;

	hwt_smmu_dev_config_default(&cfg);
	mq_start(&m, &cfg, NQ, 3);
	for (unsigned i = 0; i < NQ; i++) {
		en[i] = hwt__reg_q_read_enack(m.r, i);
		for (uint32_t k = 0; k < 3; k++) {
			tst_cmd_seq(dw, QSEQ(i, k));
			mq_put(&m, i, dw);
		}
		mq_drain(&m, i);
	}
	for (int cycle = 0; cycle < 3; cycle++) {
		ASSERT_OK(hwt_smmu_dev_stop(m.dev));
		for (unsigned i = 0; i < NQ; i++) {
			ASSERT_EQ(hwt__reg_q_read_enack(m.r, i), 0);
			ASSERT_TRUE(hwt__reg_q_en_acted(m.r, i));
			for (uint32_t k = 0; k < 4; k++) {
				tst_cmd_seq(dw, QSEQ(i, 3 + 4 * (uint32_t)cycle + k));
				mq_put(&m, i, dw);
			}
			mq_publish(&m, i);
		}
		tq_sleep_ms(20);
		for (unsigned i = 0; i < NQ; i++)
			ASSERT_EQ(atomic_load_explicit(&m.next[i], memory_order_relaxed),
				  3 + 4 * (uint32_t)cycle);
		ASSERT_OK(hwt_smmu_dev_start(m.dev));
		for (unsigned i = 0; i < NQ; i++) {
			ASSERT_EQ(hwt__reg_q_read_enack(m.r, i), en[i]);
			TQ_WAIT_UNTIL(mq_cons(&m, i) == m.prod[i]);
			ASSERT_EQ(atomic_load_explicit(&m.next[i], memory_order_acquire),
				  7 + 4 * (uint32_t)cycle);
		}
	}
	ASSERT_EQ(atomic_load_explicit(&m.bad, memory_order_relaxed), 0);
	mq_free(&m);
}

/*
 * Rounds keep one order: three queues, each with several turns of work at
 * once (published while the device is paused, the third queue enabled
 * then too); while all three have work, every three turns in a row are of
 * three different queues, and a turn is at most the burst.  A round that
 * started after the last round's first queue (the former rule) runs 0 1 2,
 * 1 2 0, 2 0 1: queue 1 twice while queue 0 waits; a just-enabled queue
 * whose look for a pending error spent its turn (the former serve()) ran
 * 0 1 -, 0 1 2.
 */
TEST(mq_rounds_keep_one_order)
{
	struct hwt_smmu_dev_config cfg;
	uint32_t burst, per, runs[64], rq[64], nr = 0, left[3];
	uint64_t dw[2];
	struct mq m;

	hwt_smmu_dev_config_default(&cfg);
	cfg.cmdqs = 12;
	mq_start(&m, &cfg, 2, 12);
	mq_queue(&m, 2, 12);
	burst = m.dev->burst;
	per = 3 * burst + burst / 2; /* 3.5 turns each */
	ASSERT_TRUE(3 * per <= LOG_N);
	ASSERT_OK(hwt_smmu_dev_pause(m.dev));
	mq_en(&m, 2, HWT__Q_EN); /* acted on in park() */
	for (unsigned q = 0; q < 3; q++) {
		for (uint32_t k = 0; k < per; k++) {
			tst_cmd_seq(dw, QSEQ(q, k));
			mq_put(&m, q, dw);
		}
		mq_publish(&m, q);
	}
	ASSERT_OK(hwt_smmu_dev_resume(m.dev));
	for (unsigned q = 0; q < 3; q++)
		mq_drain(&m, q);
	ASSERT_EQ(atomic_load_explicit(&m.bad, memory_order_relaxed), 0);
	/* relaxed: mq_drain's A_CONS ordered the handler's writes before us */
	ASSERT_EQ(atomic_load_explicit(&m.nlog, memory_order_relaxed), 3 * per);
	/* the turns: runs of one queue */
	for (uint32_t i = 0; i < 3 * per; i++) {
		if (!nr || rq[nr - 1] != m.log[i]) {
			ASSERT_TRUE(nr < 64);
			rq[nr] = m.log[i];
			runs[nr++] = 0;
		}
		runs[nr - 1]++;
	}
	left[0] = left[1] = left[2] = per;
	for (uint32_t t = 0; t < nr && left[0] && left[1] && left[2]; t++) {
		hwt_test_log("turn %u: queue %u, %u commands", t, rq[t], runs[t]);
		ASSERT_TRUE(runs[t] <= burst);
		if (t >= 2)
			ASSERT_TRUE(rq[t] != rq[t - 1] && rq[t] != rq[t - 2] && rq[t - 1] != rq[t - 2]);
		left[rq[t]] -= runs[t];
	}
	mq_free(&m);
}
