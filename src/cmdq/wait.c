/* SPDX-License-Identifier: MIT */
/*
 * A call's waits on the device (impl.h, struct hwt__devwait): one deadline
 * for all the waits of one call, each wait spinning, then yielding, then
 * sleeping (on the SEV event word when the device signals events for it,
 * else a growing nanosleep); and the words of a failed wait's log line.
 * Used by the shared path (cmdq.c) and the rseq path (percpu.c); calls
 * support.c only.  Also the shared path's CMD_SYNC polls (CONS or MSI).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>

#include "arch/arch.h"
#include "cmdq/impl.h"
#include "common/time.h"

#define SPIN_ONLY_NS HWT__CMDQ_SPIN_ONLY_NS /* device waits: pure spinning before yielding */
#define YIELD_NS 200000   /* device waits: yielding before sleeping, */
#define YIELDS_MIN 256    /* and at least this many yields */

void hwt__devwait_next(struct hwt__devwait *w, unsigned every, bool (*waiting)(void *arg), void *arg)
{
	w->start = 0;
	w->sleep_ns = 0;
	w->polls = 0;
	w->yields = 0;
	w->every = every;
	w->waiting = waiting;
	w->arg = arg;
}

const char *hwt__cmdq_verdict(const struct hwt_cmdq *q, int err, char buf[HWT__VERDICT_LEN])
{
	if (err != -ENODEV)
		return "timeout";
	snprintf(buf, HWT__VERDICT_LEN, "aborted, %s", hwt__cmdq_not_running(q));
	return buf;
}

int hwt__devwait_check(struct hwt__devwait *w, uint64_t *now)
{
	struct hwt_cmdq *q = w->q;

	*now = hwt__now_ns();
	if (!w->deadline)
		w->deadline = hwt__deadline_after(*now, q->timeout_ns);
	if (!w->start)
		w->start = *now;
	if (*now >= w->deadline)
		return -ETIMEDOUT;
	if (!hwt__reg_q_enabled(q->regs, q->qi))
		return -ENODEV;
	return 0;
}

int hwt__devwait_step(struct hwt__devwait *w, bool use_events)
{
	struct hwt_cmdq *q = w->q;
	uint64_t now, elapsed;
	int err;

	if (++w->polls & w->every) {
		hwt__cpu_relax();
		return 0;
	}
	err = hwt__devwait_check(w, &now);
	if (err)
		return err;
	elapsed = now - w->start;
	if (elapsed < SPIN_ONLY_NS) {
		hwt__cpu_relax();
		return 0;
	}
	/* Past a short spin, yield: the device thread may share our CPU and
	 * then only runs when we let it.  Keep yielding (for a time, and for a
	 * number of turns: other producers may share our CPU) before a sleep:
	 * a sleep costs the timer slack (~50 us) where nothing wakes us (MSI
	 * writes, a draining queue), and with events the device pays a wake-up
	 * per sleeper at every SEV, which slows it, which makes more sleepers;
	 * and a registered waiter asleep past its completion holds up every
	 * producer short of space. */
	if (elapsed < q->spin_ns + YIELD_NS || w->yields < YIELDS_MIN) {
		w->yields++;
		sched_yield();
		return 0;
	}
	if (use_events) {
		uint64_t left = w->deadline - now;

		hwt__reg_q_wait_event(q->regs, q->qi, left < 1000000 ? left : 1000000, w->waiting,
				      w->arg);
		return 0;
	}
	w->sleep_ns = !w->sleep_ns ? 2000 : w->sleep_ns < 256000 ? 2 * w->sleep_ns : w->sleep_ns;
	hwt__sleep_ns(w->sleep_ns);
	return 0;
}

/* --- the shared path's CMD_SYNC waits (cmdq.c) ---------------------------- */

struct sync_wait {
	struct hwt_cmdq *q;
	uint32_t prod;
};

static bool sync_waiting(void *arg)
{
	struct sync_wait *sw = arg;

	return !hwt__q_consumed(sw->q->shift, hwt__cmdq_read_cons(sw->q), sw->prod); /* A_CONS */
}

/* CONS polling: wait until the device's CONS has passed the sync. */
int hwt__cmdq_poll_consumed(struct hwt_cmdq *q, struct hwt__devwait *w, uint32_t sync_prod,
			    uint32_t *cons)
{
	struct sync_wait sw = { q, sync_prod };
	int err;

	/* w->arg = &sw dies with this frame: this is the call's last wait
	 * (cmdq.c's wait_for_sync leaves and returns), nothing reads it after. */
	/* hwt__wait_change32 already spins: read the clock on every step */
	hwt__devwait_next(w, 0, sync_waiting, &sw);

	for (;;) {
		uint32_t raw = hwt__reg_q_read_cons(q->regs, q->qi); /* A_CONS: pairs with R_CONS */

		*cons = hwt__q_pos(q->shift, raw);
		if (hwt__q_consumed(q->shift, *cons, sync_prod))
			return 0;
		/* WFE-like: returns early when CONS changes (aarch64: an event;
		 * elsewhere a short spin); a change needs no deadline check. */
		if (hwt__reg_q_wait_cons_change(q->regs, q->qi, raw) != raw)
			continue;
		err = hwt__devwait_step(w, q->sev);
		if (err)
			return err;
	}
}

/* MSI polling: wait until the device's MSI write zeroes the sync's slot. */
int hwt__cmdq_poll_msi(struct hwt_cmdq *q, struct hwt__devwait *w, uint32_t sync_prod, uint32_t *cons)
{
	_Atomic uint32_t *word = (_Atomic uint32_t *)(q->mem + 2 * hwt__q_idx(q->shift, sync_prod));
	int err;

	hwt__devwait_next(w, 63, NULL, NULL);
	/* A_MSI: pairs with the device's R_MSI; the device published CONS up
	 * to the sync before writing, so everything before it has executed. */
	while (atomic_load_explicit(word, memory_order_acquire) != 0) {
		err = hwt__devwait_step(w, false);
		if (err)
			return err;
	}
	/* CONS passes the sync only after the MSI write: counting the sync's
	 * own slot as not yet consumed keeps the shadow cons at or behind the
	 * device's CONS, which is what makes a late MSI write harmless to a
	 * waiter that gave up (see cmd_sync() in the device). */
	*cons = sync_prod;
	return 0;
}
