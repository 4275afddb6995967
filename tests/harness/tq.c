/* SPDX-License-Identifier: MIT */
/* The device tests' minimal producer and recording handler (see tq.h). */
#include "tq.h"

#include "harness.h"

#include "common/time.h"

#include <endian.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

uint32_t tq_ptr_mask(const struct tq *t)
{
	return (2u << t->n) - 1;
}

uint32_t tq_idx(const struct tq *t, uint32_t p)
{
	return p & ((1u << t->n) - 1);
}

void tq_setup(struct tq *t, const struct hwt_smmu_dev_config *cfg, unsigned n)
{
	size_t bytes = (size_t)16 << n;

	memset(t, 0, sizeof(*t));
	t->n = n;
	ASSERT_OK(hwt_smmu_dev_create(&t->dev, cfg));
	t->r = hwt__bus_regs(t->dev);
	t->mem = aligned_alloc(bytes < 4096 ? 4096 : bytes, bytes < 4096 ? 4096 : bytes);
	ASSERT_TRUE(t->mem);
	memset(t->mem, 0, bytes);
	ASSERT_OK(hwt__bus_dma_map(t->dev, t->mem, bytes, &t->iova));
	ASSERT_OK(hwt__bus_attach(t->dev, t, NULL, NULL));
	hwt__reg_reset_queue(t->r, t->iova | n);
	hwt__reg_write_cr0(t->r, HWT_SMMU_CR0_CMDQEN); /* acknowledged at start */
}

void tq_set_gerror_irq(struct tq *t, void (*fn)(void *ctx), void *ctx)
{
	ASSERT_OK(hwt__bus_set_gerror_irq(t->dev, t, fn, ctx));
}

void tq_start(struct tq *t, const struct hwt_smmu_dev_config *cfg, unsigned n)
{
	tq_setup(t, cfg, n);
	ASSERT_OK(hwt_smmu_dev_start(t->dev));
	ASSERT_EQ(hwt__reg_cmdq_enabled(t->r), 1);
}

void tq_start_recording(struct tq *t, struct rec *rec, unsigned n)
{
	struct hwt_smmu_dev_config cfg;

	hwt_smmu_dev_config_default(&cfg);
	cfg.handler = rec_handler;
	cfg.handler_ctx = rec;
	tq_start(t, &cfg, n);
}

void tq_free(struct tq *t)
{
	/* detach first, as a queue does (a device destroyed while attached
	 * waits for its owner's detach to be freed) */
	ASSERT_OK(hwt_smmu_dev_stop(t->dev));
	hwt__bus_detach(t->dev, t);
	hwt_smmu_dev_destroy(t->dev);
	free(t->mem);
}

void tq_write_at(struct tq *t, uint32_t p, const uint64_t dw[2])
{
	t->mem[2 * tq_idx(t, p)] = htole64(dw[0]);
	t->mem[2 * tq_idx(t, p) + 1] = htole64(dw[1]);
}

uint32_t tq_put(struct tq *t, const uint64_t dw[2])
{
	uint32_t p = t->prod;

	tq_write_at(t, p, dw);
	t->prod = (t->prod + 1) & tq_ptr_mask(t);
	return p;
}

void tq_publish(struct tq *t)
{
	hwt__reg_write_prod(t->r, t->prod); /* R_PROD */
}

void tq_publish_one_run(struct tq *t)
{
	ASSERT_OK(hwt_smmu_dev_pause(t->dev));
	tq_publish(t);
	ASSERT_OK(hwt_smmu_dev_resume(t->dev));
}

uint32_t tq_cons(const struct tq *t)
{
	return hwt__reg_read_cons(t->r) & tq_ptr_mask(t);
}

uint32_t tq_cons_err(const struct tq *t)
{
	return hwt__reg_read_cons(t->r) >> HWT_SMMU_CONS_ERR_SHIFT & HWT_SMMU_CONS_ERR_MASK;
}

uint64_t tq_deadline(void)
{
	return hwt__now_ns() + (uint64_t)(5e9 * hwt_test_scale());
}

void tq_wait_step(uint64_t deadline, const char *what, const char *file, int line)
{
	if (hwt__now_ns() > deadline)
		hwt_test_fail(file, line, "timed out waiting for %s", what);
	sched_yield();
}

bool tq_wait_cons(struct tq *t, uint32_t want)
{
	uint64_t deadline = tq_deadline();

	while (tq_cons(t) != want || tq_cons_err(t)) {
		if (hwt__now_ns() > deadline)
			return false;
		sched_yield();
	}
	return true;
}

void tq_drain(struct tq *t)
{
	tq_publish(t);
	ASSERT_TRUE(tq_wait_cons(t, t->prod));
}

uint32_t tq_wait_err(struct tq *t)
{
	uint64_t deadline = tq_deadline();

	while (!tq_cons_err(t)) {
		if (hwt__now_ns() > deadline)
			return 0;
		sched_yield();
	}
	return tq_cons_err(t);
}

void tq_ack_errors(struct tq *t)
{
	uint32_t g;

	TQ_WAIT_UNTIL(((g = hwt__reg_read_gerror(t->r)) ^
		       atomic_load_explicit(&t->r->gerrorn, memory_order_relaxed)) &
		      HWT_SMMU_GERROR_CMDQ_ERR);
	hwt__reg_write_gerrorn(t->r, g);
}

void tq_sleep_ms(unsigned ms)
{
	hwt__sleep_ns((uint64_t)ms * 1000000u);
}

int rec_handler(void *ctx, const uint64_t dw[2])
{
	struct rec *r = ctx;
	unsigned i = atomic_load_explicit(&r->n, memory_order_relaxed);

	if (i < REC_MAX) {
		r->dw0[i] = dw[0];
		r->dw1[i] = dw[1];
		r->cons_seen[i] = r->t ? tq_cons(r->t) : 0;
		r->cpu[i] = sched_getcpu();
	}
	atomic_store_explicit(&r->n, i + 1, memory_order_release);
	return HWT_SMMU_CERROR_NONE;
}

int rec_batch_handler(void *ctx, const uint64_t (*cmds)[2], unsigned n, unsigned *done)
{
	struct rec *r = ctx;
	unsigned c = atomic_load_explicit(&r->calls, memory_order_relaxed);

	if (c < REC_CALLS_MAX) {
		r->call_n[c] = n;
		r->call_first[c] = atomic_load_explicit(&r->n, memory_order_relaxed);
	}
	atomic_store_explicit(&r->calls, c + 1, memory_order_release);
	for (unsigned i = 0; i < n; i++) {
		if (r->fail_op && (cmds[i][0] & 0xff) == r->fail_op) {
			*done = i;
			return r->fail_code;
		}
		rec_handler(r, cmds[i]);
	}
	return HWT_SMMU_CERROR_NONE;
}

unsigned rec_count(struct rec *r)
{
	return atomic_load_explicit(&r->n, memory_order_acquire);
}

unsigned rec_calls(struct rec *r)
{
	return atomic_load_explicit(&r->calls, memory_order_acquire);
}

struct rec *rec_new(void)
{
	struct rec *r = calloc(1, sizeof(*r));

	ASSERT_TRUE(r);
	return r;
}
