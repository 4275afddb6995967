/* SPDX-License-Identifier: MIT */
/*
 * The driver side's setup: options, create and destroy (attach to the
 * device, map queue memory, enable the queue through CR0.CMDQEN, and undo
 * it), the GERROR handler, and the mode report.  The protocol is in cmdq.c.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdq/impl.h"
#include "common/time.h"

static const char *const cerror_names[] = {
	[HWT_SMMU_CERROR_NONE] = "No error",
	[HWT_SMMU_CERROR_ILL] = "Illegal command",
	[HWT_SMMU_CERROR_ABT] = "Abort on command fetch",
	[HWT_SMMU_CERROR_ATC_INV_SYNC] = "ATC invalidate timeout",
};

/*
 * Runs on the device's thread, like an interrupt handler on another CPU.
 * It touches only the slot at CONS (still owned by the device, so no
 * producer writes it) and the registers, never the producers' state.
 */
static void gerror_irq(void *ctx)
{
	struct hwt_cmdq *q = ctx;
	uint32_t gerror = hwt__reg_read_gerror(q->regs); /* A_GERR */
	uint32_t gerrorn = hwt__reg_read_gerrorn(q->regs);
	uint32_t cons, err, idx;
	uint64_t *slot, dw[2];

	if ((gerror ^ gerrorn) & HWT_SMMU_GERROR_MSI_CMDQ_ABT)
		hwt__cmdq_log(q, "CMDQ MSI write aborted");
	if (!((gerror ^ gerrorn) & HWT_SMMU_GERROR_CMDQ_ERR)) {
		hwt__reg_write_gerrorn(q->regs, gerror);
		return;
	}
	cons = hwt__reg_read_cons(q->regs); /* A_CONS */
	err = cons >> HWT_SMMU_CONS_ERR_SHIFT & HWT_SMMU_CONS_ERR_MASK;
	idx = hwt__q_idx(q->shift, cons);
	slot = q->mem + 2 * idx;
	hwt__cmdq_log(q, "CMDQ error (cons 0x%08x): %s", cons,
		 err < sizeof(cerror_names) / sizeof(cerror_names[0]) ? cerror_names[err]
								      : "Unknown error");
	switch (err) {
	case HWT_SMMU_CERROR_ABT:
		hwt__cmdq_log(q, "retrying command fetch");
		break;
	case HWT_SMMU_CERROR_NONE:
	case HWT_SMMU_CERROR_ATC_INV_SYNC:
		break; /* the device re-executes the CMD_SYNC at CONS */
	default:
		hwt__cmdq_log(q, "skipping command in error state: 0x%016llx 0x%016llx",
			 (unsigned long long)le64toh(slot[0]), (unsigned long long)le64toh(slot[1]));
		/* A plain CMD_SYNC without MSI: nobody waits on it. */
		hwt_smmu_sync_build(dw, HWT_SMMU_CS_SEV, 0);
		slot[0] = htole64(dw[0]);
		slot[1] = htole64(dw[1]);
		break;
	}
	/* R_GERRN (in hwt__reg_write_gerrorn): the rewritten slot is visible
	 * to the device when it sees the acknowledgement. */
	hwt__reg_write_gerrorn(q->regs, gerror);
}

void hwt_cmdq_get_info(struct hwt_cmdq *q, struct hwt_cmdq_info *info)
{
	if (!q || !info)
		return;
	pthread_mutex_lock(&q->info_lock);
	*info = q->info;
	pthread_mutex_unlock(&q->info_lock);
}

void hwt_cmdq_options_default(struct hwt_cmdq_options *o)
{
	if (!o)
		return;
	memset(o, 0, sizeof(*o));
	o->timeout_ns = 1000000000ull;
	o->spin_ns = 10000;
}

int hwt_cmdq_env_disable_msipolling(bool *value, const char **bad)
{
	const char *env = getenv("HWTUNE_DISABLE_MSIPOLLING");

	if (!value)
		return -EINVAL;
	if (!env)
		return 0;
	if (!strcmp(env, "0") || !strcmp(env, "1")) {
		*value = env[0] == '1';
		return 1;
	}
	if (bad)
		*bad = env;
	return -EINVAL;
}

/*
 * Set CR0 to cr0 and wait, until deadline, for the device to acknowledge
 * this very write (CR0ACK echoes its count): A_ACK pairs with the device's
 * R_ACK.  A device that does not run acknowledges an enable when it
 * starts, and has nothing to acknowledge for a disable (its CR0ACK is 0,
 * count included, so an old count never reads as our write's).  -EINVAL:
 * the device refused the enable (CMDQ_BASE describes no queue it can read).
 */
static int write_cr0(struct hwt_cmdq *q, uint32_t cr0, uint64_t deadline)
{
	struct hwt__backoff b = { 0 };
	uint32_t v = hwt__reg_write_cr0(q->regs, cr0), ack; /* R_CR0 */

	while ((ack = hwt__reg_read_cr0ack(q->regs)) != v) { /* A_ACK */
		if (ack >> HWT__CR0_SEQ_SHIFT == v >> HWT__CR0_SEQ_SHIFT)
			return -EINVAL; /* our write, answered with CMDQEN clear */
		if (!hwt__reg_device_live(q->regs) && !(ack & HWT_SMMU_CR0_CMDQEN))
			return 0;
		if (hwt__now_ns() > deadline)
			return -ETIMEDOUT;
		hwt__backoff_wait(&b);
	}
	return 0;
}

/*
 * Disable the queue and give its memory back: after CR0.CMDQEN = 0 is
 * acknowledged, unmapping the queue (which the device refuses, under its
 * lock, while CR0ACK.CMDQEN is set) is what proves that no start racing us
 * re-enabled it.  One deadline, timeout_ns, for both.  -ETIMEDOUT: the
 * device still holds the queue.
 */
static int disable_and_unmap(struct hwt_cmdq *q)
{
	struct hwt__backoff b = { 0 };
	uint64_t deadline = hwt__deadline_after(hwt__now_ns(), q->timeout_ns);
	int err = write_cr0(q, 0, deadline);

	while (!err && (err = hwt__bus_dma_unmap(q->dev, q->iova)) == -EBUSY) {
		if (hwt__now_ns() > deadline)
			return -ETIMEDOUT;
		err = 0;
		hwt__backoff_wait(&b);
	}
	return err == -ETIMEDOUT ? err : 0;
}

static void set_reason(struct hwt_cmdq *q, const struct hwt_cmdq_options *opts)
{
	const char *r;

	if (!hwt__cmdq_msi_capable(q))
		r = hwt__reg_idr0(q->regs) & HWT_SMMU_IDR0_MSI ? "CONS polling: the device lacks COHACC"
								: "CONS polling: the device lacks MSI";
	else if (opts->disable_msipolling)
		r = "CONS polling: disable_msipolling is set";
	else if (opts->auto_poll)
		r = "auto: not measured yet (measured on first use)";
	else
		r = "MSI polling: the device has MSI and COHACC";
	snprintf(q->info.reason, sizeof(q->info.reason), "%s", r);
}

static void free_queue(struct hwt_cmdq *q)
{
	hwt__cmdq_log_flush(q); /* the queue has no other user now */
	pthread_mutex_destroy(&q->log_lock);
	pthread_mutex_destroy(&q->info_lock);
	free(q->mem);
	free(q->valid);
	free(q);
}

int hwt_cmdq_create(struct hwt_cmdq **out, struct hwt_smmu_dev *dev,
		    const struct hwt_cmdq_options *opts)
{
	struct hwt_cmdq_options def;
	struct hwt_cmdq *q;
	unsigned cmdqs, shift;
	size_t bytes;
	int err;

	if (!out || !dev)
		return -EINVAL;
	if (!opts) {
		hwt_cmdq_options_default(&def);
		opts = &def;
	}
	if (!opts->timeout_ns)
		return -EINVAL; /* "don't wait" or "wait forever"?  Neither is offered */
	if (opts->queues > 1)
		return -EINVAL; /* several queues: not yet */
	q = hwt__zalloc_lines(sizeof(*q));
	if (!q)
		return -ENOMEM;
	pthread_mutex_init(&q->info_lock, NULL);
	pthread_mutex_init(&q->log_lock, NULL);
	hwt__ratelimit_init(&q->log_rl, HWT__RATELIMIT_BURST, HWT__RATELIMIT_INTERVAL_NS);
	q->dev = dev;
	q->regs = hwt__bus_regs(dev);
	cmdqs = hwt__reg_idr1(q->regs) >> HWT_SMMU_IDR1_CMDQS_SHIFT & HWT_SMMU_IDR1_CMDQS_MASK;
	shift = opts->entries_log2 ? opts->entries_log2 : cmdqs;
	/* Refuse n <= 6: a full batch plus its CMD_SYNC must fit, and the
	 * valid map is made of whole 64-bit words. */
	if (shift < HWT_CMDQ_MIN_SHIFT || shift > cmdqs || shift > HWT__CMDQS_ARCH_MAX) {
		free_queue(q);
		return -EINVAL;
	}
	q->shift = shift;
	/* Naturally aligned to its size, as CMDQ_BASE requires; at least a
	 * page (aligned_alloc wants the size to be a multiple). */
	bytes = (size_t)16 << shift;
	q->mem = aligned_alloc(bytes < 4096 ? 4096 : bytes, bytes < 4096 ? 4096 : bytes);
	q->valid = calloc(((size_t)1 << shift) / 64, sizeof(*q->valid));
	if (!q->mem || !q->valid) {
		free_queue(q);
		return -ENOMEM;
	}
	memset(q->mem, 0, bytes);
	q->timeout_ns = opts->timeout_ns;
	q->spin_ns = opts->spin_ns;
	q->force_sync_at_63 = opts->force_sync_at_63;
	q->log = opts->log;
	q->log_ctx = opts->log_ctx;
	q->sev = hwt__reg_idr0(q->regs) & HWT_SMMU_IDR0_SEV;
	/* The kernel's rule for ARM_SMMU_OPT_MSIPOLL. */
	q->msipoll = hwt__cmdq_msi_capable(q) && !opts->disable_msipolling;
	q->info.entries = 1u << shift;
	q->info.msipolling = q->msipoll;
	q->info.queues = 1;
	snprintf(q->info.insert_path, sizeof(q->info.insert_path), "shared");
	snprintf(q->info.insert_path_reason, sizeof(q->info.insert_path_reason), "one queue");
	set_reason(q, opts);
	atomic_init(&q->calib, opts->auto_poll && q->msipoll ? CALIB_PENDING : CALIB_NONE);
	atomic_init(&q->calib_err, 0);

	err = hwt__bus_attach(dev, q, gerror_irq, q);
	if (err) {
		free_queue(q);
		return err;
	}
	err = hwt__bus_dma_map(dev, q->mem, bytes, &q->iova);
	if (err)
		goto detach;
	/* A new queue starts empty at 0, as after the kernel's device reset
	 * (PROD and CONS may be written while the queue is disabled), at
	 * CMDQ_BASE = DMA address | LOG2SIZE; then the enable handshake. */
	hwt__reg_reset_queue(q->regs, q->iova | shift);
	err = write_cr0(q, HWT_SMMU_CR0_CMDQEN, hwt__deadline_after(hwt__now_ns(), q->timeout_ns));
	if (err) {
		hwt__cmdq_log(q, "CMDQ enable not acknowledged");
		if (disable_and_unmap(q)) {
			hwt__cmdq_log(q, "CMDQ disable not acknowledged: leaking the queue "
					 "(the device stays attached to it)");
			return err; /* the device may still read the queue: keep it */
		}
		goto detach;
	}
	*out = q;
	return 0;
detach:
	hwt__bus_detach(dev, q);
	free_queue(q);
	return err;
}

void hwt_cmdq_destroy(struct hwt_cmdq *q)
{
	if (!q)
		return;
	/* The device must not read queue memory we free, nor call our GERROR
	 * handler after it: disable the queue and wait for the device to say
	 * so.  A device that never acknowledges (a command handler that
	 * blocks) keeps our memory, rather than reading it after free. */
	if (disable_and_unmap(q)) {
		hwt__cmdq_log(q, "CMDQ disable not acknowledged: leaking the queue "
				 "(the device stays attached to it)");
		return;
	}
	if (hwt__bus_detach(q->dev, q)) {
		hwt__cmdq_log(q, "CMDQ re-enabled while being destroyed: leaking the queue");
		return;
	}
	free_queue(q);
}
