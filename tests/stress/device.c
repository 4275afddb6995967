/* SPDX-License-Identifier: MIT */
/*
 * The software SMMU under concurrency (minimal producer of
 * tests/harness/tq.h, no src/cmdq): test threads use the cache API while
 * the device executes invalidations, and several producers sharing the
 * queue through a lock get each command executed exactly once, in order
 * (per-command handler and handler_batch, CONS per run or every 3).
 */
#include "harness/harness.h"
#include "harness/cmds.h"
#include "harness/tq.h"

#include "common/time.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

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
		tst_cmd_tlbi_nh_va(dw, 4, 1, e.addr);
		tq_put(&t, dw);
		tst_cmd_cfgi_ste(dw, 1000 + (i & 7));
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
			if (((m->t->prod - tq_cons(m->t)) & tq_ptr_mask(m->t)) < (1u << m->t->n))
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

static void producers_exactly_once(bool batch_handler, unsigned cons_batch)
{
	struct hwt_smmu_dev_config cfg;
	struct rec *rec = rec_new();
	struct mp m = { 0 };
	pthread_t th[4];
	unsigned seen[4] = { 0 };
	struct tq t;

	hwt_smmu_dev_config_default(&cfg);
	if (batch_handler)
		cfg.handler_batch = rec_batch_handler;
	else
		cfg.handler = rec_handler;
	cfg.handler_ctx = rec;
	cfg.cons_batch = cons_batch;
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

TEST_TIMEOUT(producers_exactly_once_in_order, 60)
{
	producers_exactly_once(false, 3);
	producers_exactly_once(false, 0); /* CONS once per run */
}

/* The same through handler_batch: runs cut at the wrap and at PROD while
 * producers keep publishing. */
TEST_TIMEOUT(producers_exactly_once_in_order_batch_handler, 60)
{
	producers_exactly_once(true, 0);
	producers_exactly_once(true, 3);
}
