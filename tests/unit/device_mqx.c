/* SPDX-License-Identifier: MIT */
/*
 * The software SMMU with several command queues, driven through the
 * register file alone (bus/regs.h hwt__reg_q_*): the enable handshake of
 * each queue, per-queue order and exactly-once execution under concurrent
 * producers, a CMD_SYNC per queue with its MSI in a word of another DMA
 * region, an error that stops its own queue only, fairness under an
 * endless stream on another queue, a doorbell for a sleeping device on any
 * queue, stop and start with several queues enabled, and the DMA map and
 * detach refusing while any queue is enabled.  The device is created with
 * NUMQ = 4 (hwt__dev_create_nq) whatever the CPU count.
 */
#include "harness/harness.h"
#include "harness/cmds.h"
#include "harness/tq.h"

#include "bus/regs.h"
#include "common/time.h"
#include "device/impl.h"

#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define NQ 4u
#define LOG2 4u /* 16 entries per queue */
#define PER_Q 20000u

struct mq {
	struct hwt_smmu_dev *dev;
	struct hwt__smmu_regs *r;
	uint64_t *mem[NQ];
	uint64_t iova[NQ];
	uint32_t prod[NQ];
	uint32_t en[NQ]; /* the last Q_EN written */
	unsigned lg[NQ]; /* log2 entries: LOG2 unless a test sets it before mq_up's enable */
};

/* A handler that counts per queue: SID = queue << 24 | sequence number. */
struct qrec {
	_Atomic uint32_t next[NQ]; /* the sequence number expected next */
	_Atomic uint32_t bad;      /* out of order or duplicated */
	_Atomic uint32_t fail_sid; /* a command with this SID fails (0: none) */
	_Atomic uint32_t irqs;     /* GERROR line calls */
};

static int qrec_handler(void *ctx, const uint64_t dw[2])
{
	struct qrec *rc = ctx;
	uint32_t sid = (uint32_t)(dw[0] >> 32), q = sid >> 24, seq = sid & 0xffffff;

	if (hwt_smmu_opcode(dw) != HWT_SMMU_OP_PREFETCH_CONFIG || q >= NQ)
		return HWT_SMMU_CERROR_NONE;
	if (sid && sid == atomic_load_explicit(&rc->fail_sid, memory_order_relaxed))
		return HWT_SMMU_CERROR_ILL;
	/* only the consumer writes next[]: load + store */
	if (atomic_load_explicit(&rc->next[q], memory_order_relaxed) != seq)
		atomic_fetch_add_explicit(&rc->bad, 1, memory_order_relaxed);
	atomic_store_explicit(&rc->next[q], seq + 1, memory_order_release);
	return HWT_SMMU_CERROR_NONE;
}

static void qrec_irq(void *ctx)
{
	struct qrec *rc = ctx;

	atomic_fetch_add_explicit(&rc->irqs, 1, memory_order_relaxed);
}

static void cmd_qseq(uint64_t dw[2], unsigned q, uint32_t seq)
{
	tst_cmd_seq(dw, q << 24 | seq);
}

/* The WRP | IDX mask of queue i, and its entries. */
static uint32_t mask(const struct mq *m, unsigned i)
{
	return (2u << m->lg[i]) - 1;
}

static uint32_t qsize(const struct mq *m, unsigned i)
{
	return 1u << m->lg[i];
}

static uint32_t qcons(struct mq *m, unsigned i)
{
	return hwt__reg_q_read_cons(m->r, i) & mask(m, i);
}

static uint32_t qcons_err(struct mq *m, unsigned i)
{
	return hwt__reg_q_read_cons(m->r, i) >> HWT_SMMU_CONS_ERR_SHIFT & HWT_SMMU_CONS_ERR_MASK;
}

/* Write Q_EN of queue i and wait (bounded) for its acknowledgement. */
static uint32_t q_en(struct mq *m, unsigned i, bool on)
{
	uint32_t v = hwt__reg_q_write_en(m->r, i, on ? HWT__Q_EN : 0);

	m->en[i] = v;
	TQ_WAIT_UNTIL(hwt__reg_q_read_enack(m->r, i) >> 16 == v >> 16);
	return hwt__reg_q_read_enack(m->r, i);
}

static void q_reset(struct mq *m, unsigned i)
{
	m->prod[i] = 0;
	hwt__reg_q_reset(m->r, i, m->iova[i] | m->lg[i]);
}

/* NUMQ = NQ, every queue mapped (256 entries' worth) and reset with lg0
 * entries (log2) for queue 0, LOG2 for the others; queues [0, enable)
 * enabled. */
static void mq_up_lg(struct mq *m, struct hwt_smmu_dev_config *cfg, unsigned enable, bool start,
		     unsigned lg0)
{
	size_t bytes = 4096;

	memset(m, 0, sizeof(*m));
	for (unsigned i = 0; i < NQ; i++)
		m->lg[i] = i ? LOG2 : lg0;
	ASSERT_OK(hwt__dev_create_nq(&m->dev, cfg, NQ));
	m->r = hwt__bus_regs(m->dev);
	ASSERT_EQ(hwt__reg_nqueues(m->r), NQ);
	ASSERT_OK(hwt__bus_attach(m->dev, m, NULL, NULL));
	for (unsigned i = 0; i < NQ; i++) {
		m->mem[i] = aligned_alloc(4096, 4096);
		ASSERT_TRUE(m->mem[i]);
		memset(m->mem[i], 0, 4096);
		ASSERT_OK(hwt__bus_dma_map(m->dev, m->mem[i], bytes, &m->iova[i]));
		q_reset(m, i);
	}
	if (start)
		ASSERT_OK(hwt_smmu_dev_start(m->dev));
	for (unsigned i = 0; i < enable; i++)
		ASSERT_EQ(q_en(m, i, true) & HWT__Q_EN, HWT__Q_EN);
}

static void mq_up(struct mq *m, struct hwt_smmu_dev_config *cfg, unsigned enable, bool start)
{
	mq_up_lg(m, cfg, enable, start, LOG2);
}

static void mq_down(struct mq *m)
{
	ASSERT_OK(hwt_smmu_dev_stop(m->dev));
	ASSERT_OK(hwt__bus_detach(m->dev, m));
	hwt_smmu_dev_destroy(m->dev);
	for (unsigned i = 0; i < NQ; i++)
		free(m->mem[i]);
}

static uint32_t q_put(struct mq *m, unsigned i, const uint64_t dw[2])
{
	uint32_t p = m->prod[i];

	m->mem[i][2 * (p & (qsize(m, i) - 1))] = htole64(dw[0]);
	m->mem[i][2 * (p & (qsize(m, i) - 1)) + 1] = htole64(dw[1]);
	m->prod[i] = (p + 1) & mask(m, i);
	return p;
}

static void q_publish(struct mq *m, unsigned i)
{
	hwt__reg_q_write_prod(m->r, i, m->prod[i]); /* R_PROD */
}

static bool q_wait_cons(struct mq *m, unsigned i, uint32_t want)
{
	uint64_t deadline = tq_deadline();

	while (qcons(m, i) != want || qcons_err(m, i)) {
		if (hwt__now_ns() > deadline)
			return false;
		sched_yield();
	}
	return true;
}

static void default_cfg(struct hwt_smmu_dev_config *cfg, struct qrec *rc)
{
	hwt_smmu_dev_config_default(cfg);
	cfg->handler = qrec_handler;
	cfg->handler_ctx = rc;
}

/* ---- the enable handshake --------------------------------------------------- */

TEST(mq_enable_disable_refuse_per_queue)
{
	struct hwt_smmu_dev_config cfg;
	struct qrec *rc = calloc(1, sizeof(*rc));
	struct mq m;
	uint32_t v, a;

	default_cfg(&cfg, rc);
	mq_up(&m, &cfg, 0, true);
	for (unsigned i = 0; i < NQ; i++)
		ASSERT_EQ(hwt__reg_q_read_enack(m.r, i), 0);
	for (unsigned i = 1; i < NQ; i++) {
		v = hwt__reg_q_write_en(m.r, i, HWT__Q_EN);
		ASSERT_NE(v, 0);
		TQ_WAIT_UNTIL(hwt__reg_q_read_enack(m.r, i) == v);
		ASSERT_TRUE(hwt__reg_q_enabled(m.r, i));
		ASSERT_TRUE(hwt__reg_q_en_acted(m.r, i));
		for (unsigned j = 0; j < NQ; j++) /* only queue i's block moved */
			ASSERT_EQ(hwt__reg_q_enabled(m.r, j), j >= 1 && j <= i);
	}
	/* disable queue 2: acknowledged with its count, EN 0; others stay on */
	a = q_en(&m, 2, false);
	ASSERT_EQ(a, m.en[2]);
	ASSERT_FALSE(a & HWT__Q_EN);
	ASSERT_TRUE(hwt__reg_q_enabled(m.r, 1) && hwt__reg_q_enabled(m.r, 3));
	/* refused: a base outside every DMA region; same count, EN clear */
	hwt__reg_q_reset(m.r, 2, 0x000f000000000000ull | LOG2);
	v = hwt__reg_q_write_en(m.r, 2, HWT__Q_EN);
	TQ_WAIT_UNTIL(hwt__reg_q_read_enack(m.r, 2) >> 16 == v >> 16);
	ASSERT_EQ(hwt__reg_q_read_enack(m.r, 2), v & ~HWT__Q_EN);
	ASSERT_TRUE(hwt__reg_q_en_acted(m.r, 2));
	/* a good base again */
	q_reset(&m, 2);
	ASSERT_EQ(q_en(&m, 2, true) & HWT__Q_EN, HWT__Q_EN);
	/* the unmap of an enabled queue's memory is refused, of a disabled
	 * one's allowed (and the slot then mapped again) */
	ASSERT_EQ(hwt__bus_dma_unmap(m.dev, m.iova[3]), -EBUSY);
	ASSERT_EQ(q_en(&m, 3, false) & HWT__Q_EN, 0);
	ASSERT_OK(hwt__bus_dma_unmap(m.dev, m.iova[3]));
	ASSERT_OK(hwt__bus_dma_map(m.dev, m.mem[3], 4096, &m.iova[3]));
	/* detach is refused while queue 1 is on, even with queue 0 off */
	ASSERT_EQ(hwt__reg_q_enabled(m.r, 0), 0);
	ASSERT_EQ(hwt__bus_detach(m.dev, &m), -EBUSY);
	mq_down(&m);
	free(rc);
}

/* A stop stores every Q_ENACK 0, keeps Q_EN_SEEN; a start acts on every
 * Q_EN again and the queues resume where they were. */
TEST(mq_stop_start_with_queues_enabled)
{
	struct hwt_smmu_dev_config cfg;
	struct qrec *rc = calloc(1, sizeof(*rc));
	uint64_t dw[2];
	struct mq m;

	default_cfg(&cfg, rc);
	mq_up(&m, &cfg, NQ, true);
	for (unsigned i = 0; i < NQ; i++) {
		cmd_qseq(dw, i, 0);
		q_put(&m, i, dw);
		q_publish(&m, i);
		ASSERT_TRUE(q_wait_cons(&m, i, 1));
	}
	ASSERT_OK(hwt_smmu_dev_stop(m.dev));
	for (unsigned i = 0; i < NQ; i++) {
		ASSERT_EQ(hwt__reg_q_read_enack(m.r, i), 0);
		ASSERT_TRUE(hwt__reg_q_en_acted(m.r, i)); /* stopped, not "never acted" */
		cmd_qseq(dw, i, 1);
		q_put(&m, i, dw);
		q_publish(&m, i); /* published while stopped */
	}
	tq_sleep_ms(20);
	for (unsigned i = 0; i < NQ; i++)
		ASSERT_EQ(qcons(&m, i), 1); /* nothing consumed */
	/* a stale count never matches: a disable of queue 3 written while
	 * stopped is acted on at start */
	m.en[3] = hwt__reg_q_write_en(m.r, 3, 0);
	ASSERT_OK(hwt_smmu_dev_start(m.dev));
	for (unsigned i = 0; i < 3; i++) {
		ASSERT_EQ(hwt__reg_q_read_enack(m.r, i), m.en[i]); /* acked at start */
		ASSERT_TRUE(q_wait_cons(&m, i, 2));
	}
	ASSERT_EQ(hwt__reg_q_read_enack(m.r, 3), m.en[3]);
	ASSERT_FALSE(hwt__reg_q_enabled(m.r, 3));
	ASSERT_EQ(qcons(&m, 3), 1);
	/* The handler's words: relaxed, after A_CONS of each queue's last command. */
	ASSERT_EQ(atomic_load_explicit(&rc->next[3], memory_order_relaxed), 1);
	ASSERT_EQ(atomic_load_explicit(&rc->bad, memory_order_relaxed), 0);
	mq_down(&m);
	free(rc);
}

/* ---- order and exactly once ---------------------------------------------- */

struct producer {
	struct mq *m;
	unsigned q;
	uint32_t n;
	bool use_doorbell; /* commit with a store of our own + hwt__reg_q_doorbell */
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	struct mq *m = p->m;
	uint64_t dw[2];

	for (uint32_t s = 0; s < p->n;) {
		uint32_t c = qcons(m, p->q), room = qsize(m, p->q) - ((m->prod[p->q] - c) & mask(m, p->q));
		uint64_t deadline;

		if (!room) {
			deadline = tq_deadline();
			while (qcons(m, p->q) == c) {
				if (hwt__now_ns() > deadline)
					return (void *)1;
				sched_yield();
			}
			continue;
		}
		for (; room && s < p->n; room--, s++) {
			cmd_qseq(dw, p->q, s);
			q_put(m, p->q, dw);
		}
		if (p->use_doorbell) {
			atomic_store_explicit(hwt__reg_q_prod(m->r, p->q), m->prod[p->q],
					      memory_order_release); /* R_PROD */
			hwt__reg_q_doorbell(m->r);
		} else {
			q_publish(m, p->q);
		}
	}
	return q_wait_cons(m, p->q, m->prod[p->q]) ? NULL : (void *)1;
}

static void order_exactly_once(bool batch_cons, bool doorbell)
{
	struct hwt_smmu_dev_config cfg;
	struct qrec *rc = calloc(1, sizeof(*rc));
	struct producer p[NQ];
	pthread_t th[NQ];
	struct mq m;

	default_cfg(&cfg, rc);
	cfg.cons_batch = batch_cons ? 3 : 0;
	cfg.spin_ns = 1000; /* sleep often: the doorbell of every queue matters */
	mq_up(&m, &cfg, NQ, true);
	for (unsigned i = 0; i < NQ; i++) {
		p[i] = (struct producer){ .m = &m, .q = i, .n = PER_Q, .use_doorbell = doorbell };
		ASSERT_OK(pthread_create(&th[i], NULL, produce, &p[i]));
	}
	for (unsigned i = 0; i < NQ; i++) {
		void *ret;

		pthread_join(th[i], &ret);
		ASSERT_TRUE(ret == NULL);
	}
	for (unsigned i = 0; i < NQ; i++)
		ASSERT_EQ(atomic_load_explicit(&rc->next[i], memory_order_acquire), PER_Q);
	ASSERT_EQ(atomic_load_explicit(&rc->bad, memory_order_relaxed), 0); /* after those */
	mq_down(&m);
	free(rc);
}

TEST_TIMEOUT(mq_order_exactly_once_per_queue, 60)
{
	order_exactly_once(false, false);
	order_exactly_once(true, true);
}

/* ---- CMD_SYNC and MSI ----------------------------------------------------- */

/* A sync on queue 2 with its MSI in a word of a region of its own: CONS
 * reaches the sync, then the MSI lands, then CONS passes it; the commands
 * before it (on queue 2) have run. */
TEST(mq_sync_msi_to_word_of_other_region)
{
	struct hwt_smmu_dev_config cfg;
	struct qrec *rc = calloc(1, sizeof(*rc));
	uint32_t *words = aligned_alloc(4096, 4096);
	_Atomic uint32_t *w;
	uint64_t dw[2], wiova;
	struct mq m;
	uint32_t p;

	default_cfg(&cfg, rc);
	cfg.msi_cost_ns = 200000000; /* 200 ms before each MSI write */
	mq_up(&m, &cfg, NQ, true);
	memset(words, 0xff, 4096);
	ASSERT_OK(hwt__bus_dma_map(m.dev, words, 4096, &wiova));
	w = (_Atomic uint32_t *)&words[37]; /* any word: 148 bytes in, not 8-aligned */
	for (uint32_t s = 0; s < 5; s++) {
		cmd_qseq(dw, 2, s);
		q_put(&m, 2, dw);
	}
	tst_cmd_sync(dw, HWT_SMMU_CS_IRQ, wiova + 37 * 4, 0xabcd1234);
	p = q_put(&m, 2, dw);
	q_publish(&m, 2);
	ASSERT_TRUE(q_wait_cons(&m, 2, p)); /* at the sync before the MSI */
	ASSERT_EQ(atomic_load_explicit(&rc->next[2], memory_order_acquire), 5);
	ASSERT_EQ(atomic_load_explicit(w, memory_order_acquire), 0xffffffffu);
	ASSERT_TRUE(q_wait_cons(&m, 2, p + 1));
	ASSERT_EQ(le32toh(atomic_load_explicit(w, memory_order_relaxed)), 0xabcd1234u);
	ASSERT_EQ(words[36], 0xffffffffu); /* the neighbours untouched */
	ASSERT_EQ(words[38], 0xffffffffu);
	/* queue 1's sync to the last word of the region; queue 0 runs on */
	tst_cmd_sync(dw, HWT_SMMU_CS_IRQ, wiova + 4096 - 4, 7);
	q_put(&m, 1, dw);
	q_publish(&m, 1);
	cmd_qseq(dw, 0, 0);
	q_put(&m, 0, dw);
	q_publish(&m, 0);
	ASSERT_TRUE(q_wait_cons(&m, 1, 1));
	ASSERT_EQ(le32toh(words[1023]), 7u);
	ASSERT_TRUE(q_wait_cons(&m, 0, 1));
	/* the word's region unmapped: MSI abort on that queue's Q_GERROR only */
	ASSERT_OK(hwt__bus_dma_unmap(m.dev, wiova));
	tst_cmd_sync(dw, HWT_SMMU_CS_IRQ, wiova + 8, 1);
	q_put(&m, 3, dw);
	q_publish(&m, 3);
	ASSERT_TRUE(q_wait_cons(&m, 3, 1));
	TQ_WAIT_UNTIL(hwt__reg_q_read_gerror(m.r, 3) & HWT_SMMU_GERROR_MSI_CMDQ_ABT);
	for (unsigned i = 0; i < 3; i++)
		ASSERT_EQ(hwt__reg_q_read_gerror(m.r, i), 0);
	mq_down(&m);
	free(words);
	free(rc);
}

/* ---- errors ------------------------------------------------------------- */

TEST(mq_error_stops_its_queue_only)
{
	struct hwt_smmu_dev_config cfg;
	struct qrec *rc = calloc(1, sizeof(*rc));
	uint64_t dw[2];
	uint32_t g, p;
	struct mq m;

	default_cfg(&cfg, rc);
	mq_up(&m, &cfg, 3, true);
	ASSERT_OK(hwt__bus_set_gerror_irq(m.dev, &m, qrec_irq, rc));
	/* Queue 1's third command fails.  fail_sid: relaxed, each store followed
	 * by the R_PROD or R_QGERRN (release) that makes the device look at it. */
	atomic_store_explicit(&rc->fail_sid, 1u << 24 | 2, memory_order_relaxed);
	for (uint32_t s = 0; s < 5; s++) {
		cmd_qseq(dw, 1, s);
		q_put(&m, 1, dw);
	}
	q_publish(&m, 1);
	TQ_WAIT_UNTIL(qcons_err(&m, 1) == HWT_SMMU_CERROR_ILL);
	ASSERT_EQ(qcons(&m, 1), 2);
	TQ_WAIT_UNTIL((hwt__reg_q_read_gerror(m.r, 1) ^ hwt__reg_q_read_gerrorn(m.r, 1)) &
		      HWT_SMMU_GERROR_CMDQ_ERR);
	/* irqs: relaxed, as qrec_irq counts (nothing read through it) */
	TQ_WAIT_UNTIL(atomic_load_explicit(&rc->irqs, memory_order_relaxed) >= 1);
	ASSERT_EQ(hwt__reg_q_read_gerror(m.r, 0), 0); /* GERROR of queue 0 unchanged */
	ASSERT_EQ(hwt__reg_q_read_gerror(m.r, 2), 0);
	/* queues 0 and 2 keep completing, many laps */
	for (uint32_t s = 0; s < 200; s++) {
		for (unsigned i = 0; i < 3; i += 2) {
			cmd_qseq(dw, i, s);
			q_put(&m, i, dw);
			q_publish(&m, i);
			ASSERT_TRUE(q_wait_cons(&m, i, m.prod[i]));
		}
	}
	ASSERT_EQ(qcons(&m, 1), 2); /* still stopped */
	ASSERT_EQ(qcons_err(&m, 1), HWT_SMMU_CERROR_ILL);
	/* acknowledge (the handler now accepts it): queue 1 resumes at CONS */
	atomic_store_explicit(&rc->fail_sid, 0, memory_order_relaxed);
	g = hwt__reg_q_read_gerror(m.r, 1);
	hwt__reg_q_write_gerrorn(m.r, 1, g);
	ASSERT_TRUE(q_wait_cons(&m, 1, 5));
	ASSERT_EQ(atomic_load_explicit(&rc->next[1], memory_order_acquire), 5);
	/* a second error, left unacknowledged over a disable: the next enable
	 * raises it again and the queue stays stopped until the ack */
	atomic_store_explicit(&rc->fail_sid, 1u << 24 | 5, memory_order_relaxed);
	cmd_qseq(dw, 1, 5);
	p = q_put(&m, 1, dw);
	q_publish(&m, 1);
	TQ_WAIT_UNTIL(qcons_err(&m, 1) == HWT_SMMU_CERROR_ILL);
	ASSERT_EQ(qcons(&m, 1), p);
	/* the line is called after CONS.ERR and the toggle: wait for this
	 * error's call before counting the re-raise's */
	TQ_WAIT_UNTIL(atomic_load_explicit(&rc->irqs, memory_order_relaxed) >= 2);
	g = atomic_load_explicit(&rc->irqs, memory_order_relaxed);
	ASSERT_EQ(q_en(&m, 1, false) & HWT__Q_EN, 0);
	ASSERT_EQ(q_en(&m, 1, true) & HWT__Q_EN, HWT__Q_EN); /* CONS, PROD kept */
	TQ_WAIT_UNTIL(atomic_load_explicit(&rc->irqs, memory_order_relaxed) > g);
	tq_sleep_ms(10);
	ASSERT_EQ(qcons(&m, 1), p);
	atomic_store_explicit(&rc->fail_sid, 0, memory_order_relaxed);
	hwt__reg_q_write_gerrorn(m.r, 1, hwt__reg_q_read_gerror(m.r, 1));
	ASSERT_TRUE(q_wait_cons(&m, 1, p + 1));
	ASSERT_EQ(atomic_load_explicit(&rc->bad, memory_order_relaxed), 0); /* after A_CONS */
	mq_down(&m);
	free(rc);
}

/* ---- fairness ---------------------------------------------------------- */

struct flood {
	struct mq *m;
	_Atomic uint32_t stop;
	_Atomic uint64_t published;
};

/* An endless stream on queue 0: keep it as full as it goes. */
static void *flood_q0(void *arg)
{
	struct flood *f = arg;
	struct mq *m = f->m;
	uint32_t seq = 0;
	uint64_t dw[2];

	while (!atomic_load_explicit(&f->stop, memory_order_relaxed)) {
		uint32_t c = qcons(m, 0), room = qsize(m, 0) - ((m->prod[0] - c) & mask(m, 0));

		if (!room) {
			sched_yield(); /* 2 CPUs: let the device run */
			continue;
		}
		for (; room; room--) {
			cmd_qseq(dw, 0, seq++);
			q_put(m, 0, dw);
		}
		q_publish(m, 0);
		atomic_store_explicit(&f->published, seq, memory_order_relaxed);
	}
	return NULL;
}

TEST_TIMEOUT(mq_fair_sync_under_endless_stream, 30)
{
	struct hwt_smmu_dev_config cfg;
	struct qrec *rc = calloc(1, sizeof(*rc));
	uint64_t dw[2], worst = 0, t0, tl;
	struct flood f = { 0 };
	uint32_t n0;
	pthread_t th;
	struct mq m;

	default_cfg(&cfg, rc);
	/* a slow device (20 us a command) publishing CONS per command: the
	 * flood keeps queue 0 non-empty whenever the device looks, so only
	 * the turns let queue 1 in */
	cfg.cmd_cost_ns = 20000;
	cfg.cons_batch = 1; /* CONS per command: the flood refills at once */
	mq_up_lg(&m, &cfg, 2, true, 8); /* queue 0: 256 entries, 5 ms of work */
	f.m = &m;
	ASSERT_OK(pthread_create(&th, NULL, flood_q0, &f));
	TQ_WAIT_UNTIL(atomic_load_explicit(&rc->next[0], memory_order_acquire) > 10);
	n0 = atomic_load_explicit(&rc->next[0], memory_order_acquire);
	tl = hwt__now_ns();
	for (uint32_t s = 0; s < 30; s++) {
		uint64_t dl, lat;
		uint32_t p;

		tq_sleep_ms(1); /* the flood runs on */
		cmd_qseq(dw, 1, s);
		q_put(&m, 1, dw);
		tst_cmd_sync(dw, HWT_SMMU_CS_SEV, 0, 0);
		p = q_put(&m, 1, dw);
		t0 = hwt__now_ns();
		q_publish(&m, 1);
		dl = t0 + (uint64_t)(2e9 * hwt_test_scale()); /* generous: not a speed */
		while (qcons(&m, 1) != ((p + 1) & mask(&m, 1))) {
			if (hwt__now_ns() > dl)
				break;
			sched_yield();
		}
		lat = hwt__now_ns() - t0;
		worst = lat > worst ? lat : worst;
		ASSERT_EQ(qcons(&m, 1), (p + 1) & mask(&m, 1)); /* queue 1 not starved */
	}
	tl = hwt__now_ns() - tl;
	n0 = atomic_load_explicit(&rc->next[0], memory_order_acquire) - n0;
	/* a busy device still acts on the enable of a queue it does not serve */
	ASSERT_EQ(q_en(&m, 3, true) & HWT__Q_EN, HWT__Q_EN);
	ASSERT_EQ(q_en(&m, 3, false) & HWT__Q_EN, 0);
	atomic_store_explicit(&f.stop, 1, memory_order_relaxed); /* as flood_q0 loads it */
	pthread_join(th, NULL);
	TLOG("queue 1: 30 syncs under a queue 0 flood in %.1f ms, worst %.1f us; queue 0 "
	     "served %u meanwhile (%u in all)", (double)tl / 1e6, (double)worst / 1e3, n0,
	     atomic_load_explicit(&rc->next[0], memory_order_relaxed));
	ASSERT_TRUE(q_wait_cons(&m, 0, m.prod[0])); /* queue 0 drains too */
	ASSERT_GT(n0, 0); /* and it was served meanwhile */
	ASSERT_EQ(atomic_load_explicit(&rc->bad, memory_order_relaxed), 0); /* after A_CONS */
	mq_down(&m);
	free(rc);
}

/* A device asleep on the doorbell wakes for a PROD of queue 3 alone, and
 * for a Q_EN and a Q_GERRORN of any queue (S3 reads every queue). */
TEST(mq_sleeping_device_wakes_for_any_queue)
{
	struct hwt_smmu_dev_config cfg;
	struct hwt_smmu_dev_stats st;
	struct qrec *rc = calloc(1, sizeof(*rc));
	uint64_t dw[2], s0, worst = 0, sum = 0;
	struct mq m;

	default_cfg(&cfg, rc);
	cfg.spin_ns = 1000;
	mq_up(&m, &cfg, 1, true);
	for (unsigned i = 1; i < NQ; i++) {
		hwt_smmu_dev_get_stats(m.dev, &st);
		s0 = st.sleeps;
		TQ_WAIT_UNTIL((hwt_smmu_dev_get_stats(m.dev, &st), st.sleeps > s0 + 1));
		ASSERT_EQ(q_en(&m, i, true) & HWT__Q_EN, HWT__Q_EN);
	}
	for (unsigned i = NQ - 1; i > 0; i--) {
		for (int rep = 0; rep < 20; rep++) {
			uint64_t t0, lat;

			hwt_smmu_dev_get_stats(m.dev, &st);
			s0 = st.sleeps;
			TQ_WAIT_UNTIL((hwt_smmu_dev_get_stats(m.dev, &st), st.sleeps > s0));
			cmd_qseq(dw, i, (uint32_t)rep);
			q_put(&m, i, dw);
			t0 = hwt__now_ns();
			q_publish(&m, i);
			ASSERT_TRUE(q_wait_cons(&m, i, m.prod[i]));
			lat = hwt__now_ns() - t0;
			worst = lat > worst ? lat : worst;
			sum += lat;
		}
	}
	/* A lost doorbell costs one bounded sleep (5 ms), never progress: a
	 * diagnostic, not an assertion (no speed is asserted). */
	TLOG("wake-up of a sleeping device for queues 1..3: mean %.1f us, worst %.1f us",
	     (double)sum / 60e3, (double)worst / 1e3);
	ASSERT_EQ(atomic_load_explicit(&rc->bad, memory_order_relaxed), 0); /* after A_CONS */
	mq_down(&m);
	free(rc);
}

/* A device spinning idle (spin_ns 1 s) sees a PROD of any queue without
 * going to sleep first: its idle look covers every enabled queue, not only
 * queue 0.  (A device that missed it would spin the whole second, then
 * sleep: the sleep counter tells, with a margin of a second.) */
TEST_TIMEOUT(mq_spinning_device_sees_every_queue, 30)
{
	struct hwt_smmu_dev_config cfg;
	struct hwt_smmu_dev_stats st;
	struct qrec *rc = calloc(1, sizeof(*rc));
	uint64_t dw[2], s0;
	struct mq m;

	default_cfg(&cfg, rc);
	cfg.spin_ns = 1000000000u;
	mq_up(&m, &cfg, NQ, true);
	cmd_qseq(dw, 0, 0);
	q_put(&m, 0, dw);
	q_publish(&m, 0);
	ASSERT_TRUE(q_wait_cons(&m, 0, 1));
	for (unsigned rep = 0; rep < 3; rep++) {
		for (unsigned i = 1; i < NQ; i++) {
			hwt_smmu_dev_get_stats(m.dev, &st);
			s0 = st.sleeps;
			cmd_qseq(dw, i, rep);
			q_put(&m, i, dw);
			q_publish(&m, i);
			ASSERT_TRUE(q_wait_cons(&m, i, m.prod[i]));
			hwt_smmu_dev_get_stats(m.dev, &st);
			ASSERT_EQ(st.sleeps, s0);
		}
	}
	ASSERT_EQ(atomic_load_explicit(&rc->bad, memory_order_relaxed), 0); /* after A_CONS */
	mq_down(&m);
	free(rc);
}
