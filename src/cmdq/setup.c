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
#include <unistd.h>

#include "arch/rseq.h"
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
 * It touches only the slot at CONS of the queue in error (still owned by
 * the device, so no producer writes it) and the registers, never the
 * producers' state.
 */
static void queue_error(struct hwt_cmdq *q, uint32_t gerror, uint32_t gerrorn)
{
	uint32_t cons, err, idx;
	uint64_t *slot, dw[2];

	if ((gerror ^ gerrorn) & HWT_SMMU_GERROR_MSI_CMDQ_ABT)
		hwt__cmdq_log(q, "CMDQ MSI write aborted");
	if (!((gerror ^ gerrorn) & HWT_SMMU_GERROR_CMDQ_ERR)) {
		hwt__reg_q_write_gerrorn(q->regs, q->qi, gerror);
		return;
	}
	cons = hwt__reg_q_read_cons(q->regs, q->qi); /* A_CONS */
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
		/* A plain CMD_SYNC without MSI.  If the failed entry was an
		 * rseq waiter's CMD_SYNC, that waiter sees its slot change
		 * and returns once CONS passes it (percpu.c, wait_slot). */
		hwt_smmu_sync_build(dw, HWT_SMMU_CS_SEV, 0);
		slot[0] = htole64(dw[0]);
		slot[1] = htole64(dw[1]);
		break;
	}
	/* R_QGERRN (R_GERRN for queue 0, in hwt__reg_q_write_gerrorn): the
	 * rewritten slot is visible to the device when it sees the
	 * acknowledgement. */
	hwt__reg_q_write_gerrorn(q->regs, q->qi, gerror);
}

/* The one GERROR line: find the queues whose GERROR differs from their
 * GERRORN (A_QGERR, pairs with the device's R_QGERR / R_GERR) and handle
 * each of them alone; the other queues run on. */
static void gerror_irq(void *ctx)
{
	struct hwt_cmdq *q = ctx;

	for (unsigned i = 0; i < q->nq; i++) {
		struct hwt_cmdq *sq = q->nq > 1 ? q->sub[i] : q;
		uint32_t gerror = hwt__reg_q_read_gerror(q->regs, i); /* A_QGERR */
		uint32_t gerrorn = hwt__reg_q_read_gerrorn(q->regs, i);

		if (gerror != gerrorn || (i == 0 && q->nq == 1))
			queue_error(sq, gerror, gerrorn);
	}
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
 * Set queue i's enable (CR0 for queue 0) to v and wait, until deadline, for
 * the device to acknowledge this very write (the acknowledgement echoes its
 * count): A_QACK (A_ACK) pairs with the device's R_QACK (R_ACK).  A device
 * that does not run acknowledges an enable when it starts, and has nothing
 * to acknowledge for a disable (its acknowledgement is 0, count included,
 * so an old count never reads as our write's).  -EINVAL: the device
 * refused the enable (the queue's BASE describes no queue it can read).
 */
static int write_en(struct hwt_cmdq *q, unsigned i, uint32_t v, uint64_t deadline)
{
	struct hwt__backoff b = { 0 };
	uint32_t w = hwt__reg_q_write_en(q->regs, i, v), ack; /* R_QEN (R_CR0) */

	while ((ack = hwt__reg_q_read_enack(q->regs, i)) != w) { /* A_QACK (A_ACK) */
		if (ack >> HWT__CR0_SEQ_SHIFT == w >> HWT__CR0_SEQ_SHIFT)
			return -EINVAL; /* our write, answered with the enable clear */
		if (!hwt__reg_device_live(q->regs) && !(ack & HWT__Q_EN))
			return 0;
		if (hwt__now_ns() > deadline)
			return -ETIMEDOUT;
		hwt__backoff_wait(&b);
	}
	return 0;
}

/*
 * Disable the queues and give their memory back: after every disable is
 * acknowledged, unmapping the queues (which the device refuses, under its
 * lock, while queue 0 is acknowledged enabled) is what proves that no
 * start racing us re-enabled it.  One deadline, timeout_ns, for all.
 * Nonzero: the device may still hold a queue (-ETIMEDOUT; -EINVAL, a
 * disable answered with the enable set, which no device here does);
 * nothing is unmapped or freed then, and q->mapped stays true.  Only after
 * the unmap the rseq path's rings (percpu.c), which point into the queues.
 */
static int disable_and_unmap(struct hwt_cmdq *q, unsigned enabled)
{
	struct hwt__backoff b = { 0 };
	uint64_t deadline = hwt__deadline_after(hwt__now_ns(), q->timeout_ns);
	int err = 0;

	/* The other queues first, queue 0 (whose enable the unmap checks) last. */
	for (unsigned i = enabled; i-- > 0 && !err;)
		err = write_en(q, i, 0, deadline);
	if (err)
		return err;
	while (q->mapped && (err = hwt__bus_dma_unmap(q->dev, q->iova)) == -EBUSY) {
		if (hwt__now_ns() > deadline)
			return -ETIMEDOUT;
		hwt__backoff_wait(&b);
	}
	/* 0, or -ENOENT: no region holds the queues (any more): unmapped. */
	q->mapped = false;
	if (q->mq)
		hwt__cmdq_rseq_fini(q);
	return 0;
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
	if (q->mq)
		hwt__cmdq_mq_fini(q);
	for (unsigned i = 1; q->sub && i < q->nq; i++) {
		if (q->sub[i])
			free(q->sub[i]->valid);
		free(q->sub[i]);
	}
	free(q->sub);
	pthread_mutex_destroy(&q->log_lock);
	pthread_mutex_destroy(&q->info_lock);
	free(q->mem); /* every queue's entries */
	free(q->valid);
	free(q);
}

/* The highest possible CPU number + 1 (/sys/devices/system/cpu/possible,
 * e.g. "0-63"; else sysconf(_SC_NPROCESSORS_CONF)): every CPU number a
 * thread can run on is below it. */
static unsigned possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	unsigned a, b, max = 0;
	long n;

	if (f) {
		int c;

		while (fscanf(f, "%u", &a) == 1) {
			b = a;
			c = fgetc(f);
			if (c == '-' && fscanf(f, "%u", &b) == 1)
				c = fgetc(f);
			max = b + 1 > max ? b + 1 : max;
			if (c != ',')
				break;
		}
		fclose(f);
		if (max)
			return max;
	}
	n = sysconf(_SC_NPROCESSORS_CONF);
	return n > 0 ? (unsigned)n : 1;
}

/* How many queues: 1, the N asked for, or one per possible CPU (at most
 * NUMQ).  -EINVAL: more than the device has, or auto_poll with several. */
static int queue_count(const struct hwt_cmdq_options *opts, unsigned numq, unsigned *ncpu)
{
	unsigned n = opts->queues;

	*ncpu = possible_cpus();
	if (n == HWT_CMDQ_QUEUES_PER_CPU)
		n = *ncpu < numq ? *ncpu : numq;
	else if (n > numq)
		return -EINVAL;
	if (n > 1 && opts->auto_poll)
		return -EINVAL; /* it measures one queue */
	return n ? (int)n : 1;
}

/* The queues 1..nq-1 of the object q: the configuration copied, the
 * entries in the object's memory after queue 0's. */
static int make_queues(struct hwt_cmdq *q, size_t bytes)
{
	q->sub = calloc(q->nq, sizeof(*q->sub));
	if (!q->sub)
		return -ENOMEM;
	q->sub[0] = q;
	for (unsigned i = 1; i < q->nq; i++) {
		struct hwt_cmdq *sq = hwt__zalloc_lines(sizeof(*sq));

		if (!sq)
			return -ENOMEM;
		q->sub[i] = sq;
		sq->valid = calloc(((size_t)1 << q->shift) / 64, sizeof(*sq->valid));
		if (!sq->valid)
			return -ENOMEM;
		sq->mem = (uint64_t *)((char *)q->mem + i * bytes);
		sq->shift = q->shift;
		sq->msipoll = q->msipoll;
		sq->sev = q->sev;
		sq->force_sync_at_63 = q->force_sync_at_63;
		sq->regs = q->regs;
		sq->dev = q->dev;
		sq->timeout_ns = q->timeout_ns;
		sq->spin_ns = q->spin_ns;
		sq->top = q;
		sq->qi = i;
		atomic_init(&sq->calib, CALIB_NONE);
	}
	return hwt__cmdq_mq_init(q);
}

/* The insert path of several queues, and why (info). */
static void choose_path(struct hwt_cmdq *q, unsigned ncpu, unsigned numq)
{
	const char *why = hwt__rseq_unavailable();
	char *r = q->info.insert_path_reason;
	size_t len = sizeof(q->info.insert_path_reason);

	q->mq->rseq = false;
	if (q->nq < ncpu)
		snprintf(r, len, "%u queues for %u possible CPUs%s: queues shared by CPUs", q->nq, ncpu,
			 numq < ncpu ? " (the device has no more)" : "");
	else if (q->nq > ncpu)
		snprintf(r, len, "%u queues for %u possible CPUs: queue i > %u never chosen, shared "
			 "path", q->nq, ncpu, ncpu - 1);
	else if (why)
		snprintf(r, len, "%s", why);
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	else
		snprintf(r, len, "big-endian: the rseq section copies entries as they are");
#else
	else {
		q->mq->rseq = true;
		snprintf(r, len, "one queue per possible CPU (%u), rseq registered", q->nq);
	}
#endif
	snprintf(q->info.insert_path, sizeof(q->info.insert_path), "%s", q->mq->rseq ? "rseq" : "shared");
}

int hwt_cmdq_create(struct hwt_cmdq **out, struct hwt_smmu_dev *dev,
		    const struct hwt_cmdq_options *opts)
{
	struct hwt_cmdq_options def;
	struct hwt_cmdq *q;
	unsigned cmdqs, shift, ncpu, numq, enabled = 0;
	uint64_t deadline;
	size_t bytes, all;
	int err, nq;

	if (!out || !dev)
		return -EINVAL;
	if (!opts) {
		hwt_cmdq_options_default(&def);
		opts = &def;
	}
	if (!opts->timeout_ns)
		return -EINVAL; /* "don't wait" or "wait forever"?  Neither is offered */
	numq = hwt__reg_nqueues(hwt__bus_regs(dev));
	nq = queue_count(opts, numq ? numq : 1, &ncpu);
	if (nq < 0)
		return nq;
	q = hwt__zalloc_lines(sizeof(*q));
	if (!q)
		return -ENOMEM;
	pthread_mutex_init(&q->info_lock, NULL);
	pthread_mutex_init(&q->log_lock, NULL);
	hwt__ratelimit_init(&q->log_rl, HWT__RATELIMIT_BURST, HWT__RATELIMIT_INTERVAL_NS);
	q->dev = dev;
	q->regs = hwt__bus_regs(dev);
	q->top = q;
	q->nq = (unsigned)nq;
	cmdqs = hwt__reg_idr1(q->regs) >> HWT_SMMU_IDR1_CMDQS_SHIFT & HWT_SMMU_IDR1_CMDQS_MASK;
	shift = opts->entries_log2 ? opts->entries_log2 : cmdqs;
	/* Refuse n <= 6: a full batch plus its CMD_SYNC must fit, and the
	 * valid map is made of whole 64-bit words. */
	if (shift < HWT_CMDQ_MIN_SHIFT || shift > cmdqs || shift > HWT__CMDQS_ARCH_MAX) {
		free_queue(q);
		return -EINVAL;
	}
	q->shift = shift;
	/* Each queue naturally aligned to its size, as CMDQ_BASE requires; at
	 * least a page (aligned_alloc wants the size to be a multiple).  The
	 * queues share one allocation and one DMA mapping (a device has 16). */
	bytes = (size_t)16 << shift;
	bytes = bytes < 4096 ? 4096 : bytes;
	all = bytes * q->nq;
	q->mem = aligned_alloc(bytes, all);
	q->valid = calloc(((size_t)1 << shift) / 64, sizeof(*q->valid));
	if (!q->mem || !q->valid) {
		free_queue(q);
		return -ENOMEM;
	}
	memset(q->mem, 0, all);
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
	q->info.queues = q->nq;
	snprintf(q->info.insert_path, sizeof(q->info.insert_path), "shared");
	snprintf(q->info.insert_path_reason, sizeof(q->info.insert_path_reason), "one queue%s",
		 opts->queues == HWT_CMDQ_QUEUES_PER_CPU && ncpu > 1
			 ? " (per CPU asked: the device has no more)" : "");
	set_reason(q, opts);
	atomic_init(&q->calib, opts->auto_poll && q->msipoll ? CALIB_PENDING : CALIB_NONE);
	atomic_init(&q->calib_err, 0);
	if (q->nq > 1) {
		err = make_queues(q, bytes);
		if (err) {
			free_queue(q);
			return err;
		}
		choose_path(q, ncpu, numq);
	}

	err = hwt__bus_attach(dev, q, gerror_irq, q);
	if (err) {
		free_queue(q);
		return err;
	}
	err = hwt__bus_dma_map(dev, q->mem, all, &q->iova);
	if (err)
		goto detach;
	q->mapped = true;
	for (unsigned i = 1; i < q->nq; i++)
		q->sub[i]->iova = q->iova + i * bytes;
	if (q->mq && q->mq->rseq) {
		err = hwt__cmdq_rseq_init(q);
		if (err)
			goto unmap;
	}
	/* A new queue starts empty at 0, as after the kernel's device reset
	 * (PROD and CONS may be written while the queue is disabled), at
	 * BASE = DMA address | LOG2SIZE; then the enable handshake, one
	 * deadline for all queues. */
	deadline = hwt__deadline_after(hwt__now_ns(), q->timeout_ns);
	for (; enabled < q->nq; enabled++) {
		hwt__reg_q_reset(q->regs, enabled, (q->iova + enabled * bytes) | shift);
		err = write_en(q, enabled, HWT__Q_EN, deadline);
		if (err) {
			hwt__cmdq_log(q, "CMDQ enable not acknowledged%s",
				      q->nq > 1 ? " (several queues: does the device serve them?)" : "");
			enabled++; /* disable this one too */
			goto unmap;
		}
	}
	*out = q;
	return 0;
unmap:
	if (disable_and_unmap(q, enabled)) {
		hwt__cmdq_log(q, "CMDQ disable not acknowledged: leaking the queue "
				 "(the device stays attached to it)");
		return err; /* the device may still read the queue: keep it */
	}
detach:
	hwt__bus_detach(dev, q);
	free_queue(q);
	return err;
}

void hwt_cmdq_destroy(struct hwt_cmdq *q)
{
	if (!q)
		return;
	/* The device must not read queue memory we free, nor write an MSI
	 * into it, nor call our GERROR handler after it: disable the queues and
	 * wait for the device to say so.  A device that never acknowledges (a
	 * command handler that blocks) keeps our memory, rather than reading
	 * it after free. */
	if (disable_and_unmap(q, q->nq)) {
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
