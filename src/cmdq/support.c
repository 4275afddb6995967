/* SPDX-License-Identifier: MIT */
/*
 * The driver side's leaf (impl.h): the queue's log, the backoff of waits on
 * other producers, and whether the device can do MSI polling.  Calls no
 * other file of src/cmdq.
 */
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>

#include "arch/arch.h"
#include "cmdq/impl.h"
#include "common/time.h"

/* A hook gets every message; stderr gets them rate-limited (ratelimit.h). */
static void print_suppressed(uint64_t missed)
{
	if (missed)
		fprintf(stderr, "hwtune: cmdq: %llu messages suppressed\n", (unsigned long long)missed);
}

void hwt__cmdq_log(struct hwt_cmdq *sq, const char *fmt, ...)
{
	struct hwt_cmdq *q = sq->top; /* the object: its hook, its rate limit */
	uint64_t missed;
	char msg[256];
	int len = 0;
	va_list ap;
	int cancel;
	bool ok;

	if (q->nq > 1) /* which queue */
		len = snprintf(msg, sizeof(msg), "queue %u: ", sq->qi);
	va_start(ap, fmt);
	vsnprintf(msg + len, sizeof(msg) - (size_t)len, fmt, ap);
	va_end(ap);
	if (q->log) {
		q->log(q->log_ctx, msg);
		return;
	}
	/* fprintf is a cancellation point: a thread cancelled in it (stderr a
	 * full pipe, say) would leave log_lock held and every later line of
	 * this queue blocked.  No cancellation while the lock is held. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	pthread_mutex_lock(&q->log_lock);
	ok = hwt__ratelimit_allow(&q->log_rl, hwt__now_ns(), &missed);
	print_suppressed(missed);
	if (ok)
		fprintf(stderr, "hwtune: cmdq: %s\n", msg);
	pthread_mutex_unlock(&q->log_lock);
	pthread_setcancelstate(cancel, NULL);
}

void hwt__cmdq_log_flush(struct hwt_cmdq *q)
{
	print_suppressed(hwt__ratelimit_flush(&q->log_rl));
}

void hwt__backoff_wait(struct hwt__backoff *b)
{
	if (b->n < 64)
		hwt__cpu_relax();
	else if (b->n < 128)
		sched_yield();
	else
		hwt__sleep_ns(b->n < 256 ? 2000 : 50000);
	b->n++;
}

bool hwt__cmdq_msi_capable(const struct hwt_cmdq *q)
{
	uint32_t idr0 = hwt__reg_idr0(q->regs);

	return (idr0 & HWT_SMMU_IDR0_MSI) && (idr0 & HWT_SMMU_IDR0_COHACC);
}

const char *hwt__cmdq_not_running(const struct hwt_cmdq *q)
{
	return hwt__reg_q_en_acted(q->regs, q->qi) ? "device stopped or destroyed"
					   : "device not started (it never acted on the queue's enable)";
}
