/* SPDX-License-Identifier: MIT */
/*
 * The queues bench_cmdq compares, hwt_cmdq among them, behind one ops
 * struct.  A queue carries 16-byte commands from producer threads to one
 * consumer on its own CPU, which calls a handler per command.
 *
 *   create ... { begin, the producers put, drain, end } per segment ... destroy
 *
 * hwt.c is hwt_cmdq (the software SMMU is the consumer).  ring.c turns a
 * ring with plain enqueue/dequeue calls (struct bench_ring_ops: dpdk.c,
 * rte_ring and rte_ring_rts; ck.c, urcu.c, mutex.c) into a queue: a consumer thread per segment that checks
 * every producer's sequence numbers and publishes the last one seen.  Each
 * peer file is compiled only when its library is found (detect.sh) and
 * uses only that library's public API.
 */
#ifndef BENCH_PEERS_H
#define BENCH_PEERS_H

#include <hwtune/cmdq.h>
#include <hwtune/smmu.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BENCH_MAX_PROD 16 /* a power of two */
#define BENCH_CONS_BURST 32 /* ring consumers dequeue up to this per call */

/* Elements are 16-byte commands, as hwt_cmdq carries them (struct hwt_cmdq_cmd). */
/* Element seq (from 1) of producer id: TLBI_NH_VA, VMID = id, ADDR = page seq. */
static inline void bench_elem_set(struct hwt_cmdq_cmd *e, unsigned id, uint64_t seq)
{
	e->dw[0] = HWT_SMMU_OP_TLBI_NH_VA;
	e->dw[1] = 0;
	hwt_smmu_put(e->dw, HWT_SMMU_OP_TLBI_NH_VA, HWT_SMMU_F_VMID, id);
	hwt_smmu_put(e->dw, HWT_SMMU_OP_TLBI_NH_VA, HWT_SMMU_F_ADDR, seq << 12);
}

static inline unsigned bench_elem_id(const struct hwt_cmdq_cmd *e)
{
	return (unsigned)hwt_smmu_get(e->dw, HWT_SMMU_OP_TLBI_NH_VA, HWT_SMMU_F_VMID);
}

static inline uint64_t bench_elem_seq(const struct hwt_cmdq_cmd *e)
{
	return hwt_smmu_get(e->dw, HWT_SMMU_OP_TLBI_NH_VA, HWT_SMMU_F_ADDR) >> 12;
}

struct bench_queue_cfg {
	unsigned log2;         /* 2^log2 slots */
	int cons_cpu;          /* the consumer's CPU */
	unsigned cons_batch;   /* hwt: the device publishes CONS every N commands */
	uint64_t timeout_ns;   /* bound of every wait */
	bool await;            /* each put returns once its elements were consumed */
	unsigned variant;      /* 0 .. ops->variants[await] - 1 */
	int (*handler)(void *ctx, const uint64_t dw[2]); /* called per element */
};

struct bench_queue_desc {
	char name[32];   /* "rte_ring_await" */
	char what[512];  /* the calls used, how elements travel */
	/* hwt_cmdq: which insertion the queue runs ("rseq", "shared") and why,
	 * from its hwt_cmdq_info; empty for the others */
	char insert_path[24];
	char insert_path_reason[160];
};

struct bench_queue_ops {
	const void *impl;     /* the peer's own (ring.c: its struct bench_ring_ops) */
	bool subject;         /* the queue under test: ratios are subject / peer */
	unsigned variants[2]; /* configurations [await] (hwt awaited: MSI, CONS polling) */
	int (*create)(const struct bench_queue_ops *self, const struct bench_queue_cfg *cfg,
		      void **q, struct bench_queue_desc *desc);
	void (*destroy)(void *q);
	/* A segment of nprod (<= BENCH_MAX_PROD) producers begins: start the
	 * consumer.  abort: set by anyone who gives up; waits end on it. */
	int (*begin)(void *q, unsigned nprod, _Atomic int *abort);
	/* Producer id puts e[0..n) (n <= half the slots): 0 or -errno. */
	int (*put)(void *q, unsigned id, const struct hwt_cmdq_cmd *e, unsigned n);
	/* Every element put so far has been consumed: 0 or -errno.  Called by
	 * the main thread while no producer puts. */
	int (*drain)(void *q);
	/* The segment ends (after the producers and a drain): stop the
	 * consumer; -EPROTO if an element was lost, doubled or reordered. */
	int (*end)(void *q);
	/* Optional (NULL: not reported): the segment's failed reservation
	 * CASes per put, all producers, warm-up included. */
	double (*cas_retries)(void *q);
	/* Optional: refresh desc after the measurements (what the queue ran). */
	void (*describe)(void *q, struct bench_queue_desc *desc);
};

extern const struct bench_queue_ops bench_hwt_ops;
#ifdef HWT_CMDQ_QUEUES_PER_CPU
extern const struct bench_queue_ops bench_hwt_percpu_ops;
#endif
extern const struct bench_queue_ops bench_mutex_ops;
#ifdef HAVE_DPDK
extern const struct bench_queue_ops bench_dpdk_ops;
#endif
#ifdef HAVE_DPDK_RTS
extern const struct bench_queue_ops bench_dpdk_rts_ops;
#endif
#ifdef HAVE_CK
extern const struct bench_queue_ops bench_ck_ops;
#endif
#ifdef HAVE_URCU
extern const struct bench_queue_ops bench_urcu_ops;
#endif

/* --- rings (ring.c) ------------------------------------------------------- */

struct bench_ring_ops {
	const char *name;   /* "rte_ring" */
	const char *detail; /* the calls used and how elements are stored */
	/* A ring of 2^log2 slots of 16-byte elements: 0 or -errno. */
	int (*create)(void **r, unsigned log2);
	void (*destroy)(void *r);
	/* Up to n elements (any producer thread); returns how many went in. */
	unsigned (*enqueue)(void *r, const struct hwt_cmdq_cmd *e, unsigned n);
	/* Optional, used instead of enqueue when set: the same from producer
	 * id (< BENCH_MAX_PROD), for queues that keep per-producer memory. */
	unsigned (*enqueue_id)(void *r, unsigned id, const struct hwt_cmdq_cmd *e, unsigned n);
	/* Up to max elements (the one consumer thread); returns how many. */
	unsigned (*dequeue)(void *r, struct hwt_cmdq_cmd *e, unsigned max);
	/* enqueue/dequeue wait themselves (bounded, ~1 ms) when full/empty. */
	bool blocks;
};

int bench_ring_create(const struct bench_queue_ops *self, const struct bench_queue_cfg *cfg,
		      void **q, struct bench_queue_desc *desc);
void bench_ring_destroy(void *q);
int bench_ring_begin(void *q, unsigned nprod, _Atomic int *abort);
int bench_ring_put(void *q, unsigned id, const struct hwt_cmdq_cmd *e, unsigned n);
int bench_ring_drain(void *q);
int bench_ring_end(void *q);

/* The queue ops of a ring. */
#define BENCH_RING_QUEUE(ring)                                                 \
	{                                                                      \
		.impl = (ring), .subject = false, .variants = { 1, 1 },        \
		.create = bench_ring_create, .destroy = bench_ring_destroy,    \
		.begin = bench_ring_begin, .put = bench_ring_put,              \
		.drain = bench_ring_drain, .end = bench_ring_end,              \
	}

#endif
