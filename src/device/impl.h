/* SPDX-License-Identifier: MIT */
/*
 * Inside the software SMMU: the device object, shared by device.c
 * (lifecycle, configuration), queues.c (the consumer loop over the NUMQ
 * queues), consumer.c (one queue's turn), enable.c (the enable handshake),
 * model.c (the cache models) and the device's end of the bus
 * (src/bus/bus.c: attachment; src/bus/dma.c: the DMA map).  Nothing else
 * includes this but white-box tests of the device (tests/unit/device*.c);
 * drivers see bus/bus.h.
 */
#ifndef HWT_DEVICE_IMPL_H
#define HWT_DEVICE_IMPL_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "hwtune/device.h"
#include "hwtune/smmu_model.h"
#include "bus/bus.h"
#include "bus/dma.h"
#include "bus/queue.h"

/* ---- cache models (model.c) --------------------------------------------- */
#define HWT__CFG_ENTRIES 256
#define HWT__TLB_ENTRIES 512
#define HWT__ATC_ENTRIES 128

struct hwt__cfg_ent {
	bool valid;
	uint8_t kind; /* enum hwt_smmu_cfg_kind */
	uint32_t sid, ssid;
};

struct hwt__tlb_ent {
	bool valid;
	bool global;
	uint8_t kind; /* enum hwt_smmu_tlb_kind */
	uint8_t size_log2;
	uint16_t vmid, asid;
	uint64_t addr;
};

struct hwt__atc_ent {
	bool valid;
	uint8_t size_log2;
	uint32_t sid, ssid; /* ssid HWT_SMMU_ATC_NO_SSID: a translation without PASID */
	uint64_t addr;
};

struct hwt__model {
	pthread_mutex_t lock; /* guards the tables and count */
	/* Valid entries in all tables.  Written under lock; the consumer reads
	 * it relaxed to skip the lock when the models are empty (an insert that
	 * must be seen by a command happens before the PROD write publishing
	 * that command, so A_PROD orders it). */
	_Atomic uint32_t count;
	struct hwt__cfg_ent cfg[HWT__CFG_ENTRIES];
	struct hwt__tlb_ent tlb[HWT__TLB_ENTRIES];
	struct hwt__atc_ent atc[HWT__ATC_ENTRIES];
};

int hwt__model_init(struct hwt__model *c);
void hwt__model_destroy(struct hwt__model *c);
/* Apply one decoded invalidation command; returns the entries dropped.
 * Other opcodes drop nothing. */
unsigned hwt__model_exec(struct hwt__model *c, const struct hwt_smmu_cmd *cmd);

/* ---- the device ------------------------------------------------------------ */

/* ctl bits: requests from other threads to the consumer. */
#define HWT__CTL_STOP 1u
#define HWT__CTL_PAUSE 2u
#define HWT__CTL_INJ_ABT 4u
#define HWT__CTL_INJ_ATC 8u

/* Counters: written only by the consumer thread (load + store, no locked
 * RMW), read by anyone with relaxed loads.  The consumer adds the
 * commands of a segment (consumer.c) at once, before any CONS store that
 * covers them. */
struct hwt__dev_stats {
	_Atomic uint64_t cmds, syncs, msi_writes, sync_irqs, sevs, errors, sleeps, cons_updates,
		invalidated;
};

/* Add to a counter of the consumer's (or of a caller that joined it). */
static inline void hwt__st_add(_Atomic uint64_t *c, uint64_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

/*
 * The consumer's view of one command queue (queue i of NUMQ; queues.c).
 * The r_* pointers name that queue's registers: the register file's own
 * words for queue 0 (CR0, CR0ACK, CMDQ_BASE, ...), regs.q[i] for i >= 1.
 * They are set at create; the rest is consumer-private, set by
 * hwt__dev_q_enable() at start (before the thread runs) or on the consumer.
 */
struct hwt__devq {
	_Atomic uint32_t *r_prod, *r_cons, *r_en, *r_enack, *r_en_seen, *r_gerror, *r_gerrorn;
	_Atomic uint64_t *r_base;
	const uint64_t *q; /* queue memory, 2 dwords per entry */
	uint64_t q_iova, q_bytes;
	unsigned shift;       /* LOG2SIZE: pointers are those of bus/queue.h */
	unsigned idx;         /* i */
	uint32_t cons;        /* WRP | IDX of the next command */
	uint32_t published;   /* WRP | IDX last stored to CONS */
	uint32_t cons_ovf;    /* CONS bit 31, kept as found */
	uint32_t en;          /* the Q_EN (CR0) value last acted on (A_QEN) */
	uint32_t seen_prod;   /* Q_PROD at the last look (doorbell sleep) */
	uint32_t seen_gerrorn; /* Q_GERRORN at the last look */
	bool on;              /* enabled (Q_ENACK.EN) */
	bool check_error;     /* just enabled: a GERROR left unacknowledged? */
	bool err_pending;     /* CONS.ERR raised, GERRORN not yet seen */
	bool full_seen;       /* the queue was full at the last PROD read */
	bool atc_fail;        /* an injected ATC_INV timeout awaits its CMD_SYNC */
};

struct hwt_smmu_dev {
	struct hwt__smmu_regs regs;
	struct hwt_smmu_dev_config cfg;

	/* Consumer-private state (see struct hwt__devq). */
	alignas(HWT__CACHELINE) struct hwt__devq *qs; /* NUMQ of them; qs[0] is queue 0 */
	unsigned nq;          /* NUMQ */
	unsigned non;         /* queues enabled (on) */
	unsigned rr;          /* the queue the next round starts with */
	uint32_t seg_max;     /* entries per check of ctl and Q_EN (consumer.c) */
	uint32_t burst;       /* entries per queue per turn while several are on */
	uint64_t sync_ok[2];  /* bits a CMD_SYNC may have set (dw0, dw1) */
	/* Set at create, read-only after. */
	uint32_t spin_ns;     /* idle spin before a doorbell sleep (cfg.spin_ns resolved) */
	uint32_t wake_ns;     /* the futex wake-up measured for auto spin_ns, else 0 */

	/* Requests to the consumer (futex word for the paused consumer). */
	alignas(HWT__CACHELINE) _Atomic uint32_t ctl;
	_Atomic uint32_t parked; /* 1 while the consumer sits in park() */
	_Atomic(void (*)(void *)) gerror_fn;
	_Atomic(void *) gerror_ctx;

	alignas(HWT__CACHELINE) struct hwt__dev_stats st;

	alignas(HWT__CACHELINE) pthread_mutex_t lock; /* lifecycle, attach, map */
	bool running;
	pthread_t thread;
	const void *owner; /* the attached queue (hwt__bus_attach) */
	bool destroyed;    /* destroyed while owned: the owner's detach frees it */
	unsigned nregions;
	struct hwt__region regions[HWT__BUS_REGIONS];

	struct hwt__model model;
};

_Static_assert(offsetof(struct hwt_smmu_dev, ctl) - offsetof(struct hwt_smmu_dev, qs) >=
		       HWT__CACHELINE,
	       "consumer-private state shares a line with the requests other threads write");

/* Free the device object (device.c): by destroy, or by the detach of the
 * queue that still owned it (bus.c). */
void hwt__dev_free(struct hwt_smmu_dev *dev);

/* Create with NUMQ = nq (1..HWT__NUMQ_MAX) queues; hwt_smmu_dev_create()
 * offers one per possible CPU.  For white-box tests. */
int hwt__dev_create_nq(struct hwt_smmu_dev **out, const struct hwt_smmu_dev_config *cfg, unsigned nq);

/* Is any queue enabled (Q_ENACK.EN, A_QACK)?  Does an enabled queue's
 * memory start in the DMA slot of iova (Q_BASE changes only while that
 * queue is disabled)?  Under the device lock (bus.c, dma.c). */
static inline bool hwt__dev_any_queue_on(struct hwt_smmu_dev *dev)
{
	for (unsigned i = 0; i < hwt__reg_nqueues(&dev->regs); i++)
		if (hwt__reg_q_enabled(&dev->regs, i))
			return true;
	return false;
}

/* The consumer thread (queues.c). */
void *hwt__dev_consumer(void *dev);
/*
 * The end of the consumer's prefetch window for a segment [at, at + n) of a
 * run of total entries (offsets from the run's start): HWT__PREFETCH_AHEAD
 * entries past the segment, but never past the run's end, PROD: a slot
 * beyond it is one a producer is about to write.
 */
#define HWT__PREFETCH_AHEAD 128u
static inline uint32_t hwt__dev_prefetch_end(uint32_t at, uint32_t n, uint32_t total)
{
	return at + n + HWT__PREFETCH_AHEAD < total ? at + n + HWT__PREFETCH_AHEAD : total;
}

/* Entries per check of ctl and Q_EN for a config (consumer.c). */
uint32_t hwt__dev_seg_max(const struct hwt_smmu_dev_config *cfg);
/*
 * Act on Q_EN of queue i (CR0 for queue 0) as read by A_QEN (A_CR0):
 * enable reads Q_BASE and Q_CONS and sets up the consumer's view of the
 * queue; both store Q_ENACK (R_QACK; CR0ACK, R_ACK, for queue 0).  -EINVAL
 * (acknowledged with EN 0, same write count) if Q_BASE is unset, LOG2SIZE
 * > CMDQS, the base is not aligned to the queue size (at least 32 bytes) or
 * the queue is not inside one DMA region.  On the consumer thread, or with
 * the lock held while no consumer runs.
 */
int hwt__dev_q_enable(struct hwt_smmu_dev *dev, struct hwt__devq *q, uint32_t en);
/* Queue 0's: hwt__dev_q_enable(dev, &dev->qs[0], cr0). */
int hwt__dev_cmdq_enable(struct hwt_smmu_dev *dev, uint32_t cr0);

/* ---- shared by consumer.c (execution) and queues.c (the queue set) ---- */

/* Publish CONS of q (R_CONS); err is CONS.ERR (consumer.c). */
void hwt__dev_publish_cons(struct hwt_smmu_dev *dev, struct hwt__devq *q, uint32_t cons,
			   uint32_t err);
/* Execute q's run from q->cons up to prod (WRP|IDX, as read by A_PROD): a
 * turn of at most dev->burst entries while other queues are on; stops early
 * for a request, a change of q's Q_EN, or an error (raised, q->err_pending).
 * Leaves CONS published (consumer.c). */
void hwt__dev_consume(struct hwt_smmu_dev *dev, struct hwt__devq *q, uint32_t prod);
/* Command error at cons of q: CONS.ERR, GERROR toggled, the line (queues.c). */
void hwt__dev_raise_error(struct hwt_smmu_dev *dev, struct hwt__devq *q, uint32_t cons,
			  uint32_t code);
/* GERROR.MSI_CMDQ_ABT_ERR of q (queues.c). */
void hwt__dev_msi_abort(struct hwt_smmu_dev *dev, struct hwt__devq *q);
/* SEV, counted (queues.c). */
void hwt__dev_sev(struct hwt_smmu_dev *dev);

#endif
