/* SPDX-License-Identifier: MIT */
/*
 * A minimal producer for the software SMMU, driven directly through its
 * register file (no src/cmdq), and a recording command handler: what the
 * device tests (unit/device*.c, stress/device.c) drive the device with.
 *
 *   struct tq t;
 *   tq_start(&t, &cfg, 4);              16 entries, device running
 *   tst_cmd_seq(dw, 1); tq_put(&t, dw); write at PROD (not yet published)
 *   tq_drain(&t);                       publish, wait for CONS == PROD
 *   tq_free(&t);
 *
 * Every wait is bounded (5 s x HWT_TEST_TIMEOUT_SCALE) and yields.
 */
#ifndef HWT_TEST_TQ_H
#define HWT_TEST_TQ_H

#include "bus/bus.h"
#include "hwtune/device.h"
#include "hwtune/smmu_model.h"

#include <stdbool.h>
#include <stdint.h>

struct tq {
	struct hwt_smmu_dev *dev;
	struct hwt__smmu_regs *r;
	uint64_t *mem; /* 2 dwords per entry, little-endian */
	uint64_t iova;
	unsigned n;    /* log2 entries */
	uint32_t prod; /* WRP | IDX */
};

/* The WRP|IDX mask, and the index of position p. */
uint32_t tq_ptr_mask(const struct tq *t);
uint32_t tq_idx(const struct tq *t, uint32_t p);
/* Create the device, map 2^n entries and set CMDQ_BASE; tq_start also starts it. */
void tq_setup(struct tq *t, const struct hwt_smmu_dev_config *cfg, unsigned n);
/* Connect the GERROR line to fn(ctx) (NULL: disconnect). */
void tq_set_gerror_irq(struct tq *t, void (*fn)(void *ctx), void *ctx);
void tq_start(struct tq *t, const struct hwt_smmu_dev_config *cfg, unsigned n);
/* tq_start with the default configuration and rec_handler recording into rec. */
struct rec;
void tq_start_recording(struct tq *t, struct rec *rec, unsigned n);
void tq_free(struct tq *t);
/* Write the entry at position p; tq_put writes at PROD, advances it
 * (unpublished) and returns the entry's position. */
void tq_write_at(struct tq *t, uint32_t p, const uint64_t dw[2]);
uint32_t tq_put(struct tq *t, const uint64_t dw[2]);
void tq_publish(struct tq *t); /* PROD register = t->prod */
/* Publish with the device paused, then resume: one PROD read sees all. */
void tq_publish_one_run(struct tq *t);
/* CONS (WRP|IDX) and CONS.ERR as the device published them. */
uint32_t tq_cons(const struct tq *t);
uint32_t tq_cons_err(const struct tq *t);
/* Wait until CONS == want without ERR; false on timeout. */
bool tq_wait_cons(struct tq *t, uint32_t want);
/* Publish and wait until CONS == PROD (the test fails otherwise). */
void tq_drain(struct tq *t);
/* Wait until CONS.ERR is set and return it; 0 on timeout. */
uint32_t tq_wait_err(struct tq *t);
/* Acknowledge like a driver: GERRORN = what GERROR reports (waits for
 * GERROR.CMDQ_ERR to toggle, which follows CONS.ERR). */
void tq_ack_errors(struct tq *t);

/* A deadline 5 s x HWT_TEST_TIMEOUT_SCALE from now; past it, fail the test
 * naming what was awaited, else yield the CPU. */
uint64_t tq_deadline(void);
void tq_wait_step(uint64_t deadline, const char *what, const char *file, int line);
/* Wait (bounded, yielding) until cond holds. */
#define TQ_WAIT_UNTIL(cond)                                                    \
	do {                                                                   \
		uint64_t tq_dl = tq_deadline();                                \
		while (!(cond))                                                \
			tq_wait_step(tq_dl, #cond, __FILE__, __LINE__);        \
	} while (0)
void tq_sleep_ms(unsigned ms);

/* A handler that records what it executes (up to REC_MAX commands). */
#define REC_MAX 4096
#define REC_CALLS_MAX 1024
struct rec {
	struct tq *t; /* if set, CONS is recorded too */
	_Atomic unsigned n;
	uint64_t dw0[REC_MAX], dw1[REC_MAX];
	uint32_t cons_seen[REC_MAX]; /* CONS register when the command ran */
	int cpu[REC_MAX];
	/* rec_batch_handler: the calls (size, index in dw0[] of the first
	 * command); a command whose opcode byte is fail_op (0: none) fails
	 * with fail_code, the commands before it in its call executed */
	_Atomic unsigned calls;
	unsigned call_n[REC_CALLS_MAX], call_first[REC_CALLS_MAX];
	unsigned fail_op;
	int fail_code;
};
int rec_handler(void *ctx, const uint64_t dw[2]); /* ctx: struct rec */
/* The same as a handler_batch (ctx: struct rec). */
int rec_batch_handler(void *ctx, const uint64_t (*cmds)[2], unsigned n, unsigned *done);
unsigned rec_count(struct rec *r);                 /* commands executed (acquire) */
unsigned rec_calls(struct rec *r);                 /* rec_batch_handler calls (acquire) */
struct rec *rec_new(void);                         /* zeroed; free() it */

#endif
