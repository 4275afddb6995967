/* SPDX-License-Identifier: MIT */
/*
 * Auto mode: measure empty-queue CMD_SYNC with MSI polling and with CONS
 * polling on the queue itself, and keep the faster.  Runs on first use (one
 * issuer measures, the others wait) or when hwt_cmdq_calibrate() is called.
 * A first use whose measurement fails (the device paused or stopped) puts
 * the state back to CALIB_PENDING: that call and those that waited for it
 * return the error, and the next use measures again.
 *
 * The calib word: the state in bits 1:0 (impl.h) and, above, the generation
 * of the attempt, raised by each failure, so that a waiter waits for its
 * attempt only.  NONE and DONE are exact values (generation 0).  An explicit
 * hwt_cmdq_calibrate() claims the word as a first use does (-EBUSY while an
 * attempt runs).
 *
 * R_CALIB/A_CALIB: the mode (q->msipoll: chosen, or restored after a failed
 * measurement) and calib_err are published by the release store of
 * CALIB_DONE or of the next generation's CALIB_PENDING; issuers load calib
 * with acquire before they insert, and the CAS that starts an attempt
 * acquires too.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmdq/impl.h"
#include "common/median.h"
#include "common/time.h"

#define CALIB_ROUNDS 9
#define CALIB_SYNCS 200

/* A measurement's time: every sync keeps to `deadline`, the deadline of
 * the call that measures (timeout_ns from its start), and rounds stop at
 * `stop`, half of that.  The other half is the margin of the sync in flight
 * at `stop` (were the two equal, that sync would meet the deadline and fail
 * a measurement that merely ran out of time) and, on a first use, the time
 * of the call's own commands under the same deadline. */
struct budget {
	uint64_t deadline, stop, span_ns;
};

static struct budget budget_from_now(const struct hwt_cmdq *q)
{
	uint64_t now = hwt__now_ns();
	struct budget b = { hwt__deadline_after(now, q->timeout_ns),
			    hwt__deadline_after(now, q->timeout_ns / 2), q->timeout_ns / 2 };

	return b;
}

/*
 * Mean ns per empty-queue sync, median over rounds; modes interleaved so
 * that machine noise and frequency changes hit both alike.  Every sync
 * keeps to b.deadline: a device that stops answering makes the measurement
 * fail by the call's deadline, not timeout_ns after the sync that met it
 * began.  The rounds finished by b.stop count, and if not even one
 * finished, *rounds is 0 and nothing was measured.
 */
static int measure_modes(struct hwt_cmdq *q, struct budget b, uint64_t *msi_ns, uint64_t *sev_ns,
			 unsigned *rounds)
{
	uint64_t t[2][CALIB_ROUNDS];
	bool saved = q->msipoll, late = false;
	unsigned r;
	int err = 0;

	for (r = 0; r < CALIB_ROUNDS && !err && !late; r++) {
		for (int m = 0; m < 2 && !err && !late; m++) {
			uint64_t t0, t1 = 0;

			q->msipoll = m == 0;
			/* warm the path */
			err = hwt__cmdq_insert(q, NULL, 0, true, NULL, b.deadline, NULL);
			t0 = hwt__now_ns();
			for (int i = 0; i < CALIB_SYNCS && !err && !late; i++) {
				err = hwt__cmdq_insert(q, NULL, 0, true, NULL, b.deadline, NULL);
				late = (t1 = hwt__now_ns()) > b.stop;
			}
			t[m][r] = (t1 - t0) / CALIB_SYNCS;
		}
	}
	q->msipoll = saved;
	if (err)
		return err;
	*rounds = late ? r - 1 : r; /* the round cut short does not count */
	if (!*rounds)
		return 0;
	*msi_ns = hwt__median_u64(t[0], *rounds);
	*sev_ns = hwt__median_u64(t[1], *rounds);
	return 0;
}

/* Measure both modes; with auto_poll, keep the faster.  The caller owns
 * the measurement (calib RUNNING, or a queue without auto mode). */
static int measure_and_choose(struct hwt_cmdq *q, bool choose, struct budget b)
{
	uint64_t msi = 0, sev = 0;
	unsigned rounds = 0;
	int err = measure_modes(q, b, &msi, &sev, &rounds);

	if (err)
		return err;
	pthread_mutex_lock(&q->info_lock);
	if (rounds) {
		q->info.msi_ns = msi;
		q->info.sev_ns = sev;
	}
	if (choose && !rounds && q->info.measured) {
		/* an earlier measurement stands, figures and reason */
	} else if (choose && !rounds) {
		/* Too slow to measure here and now: keep the configured mode,
		 * for good (retrying would slow every later call the same way). */
		snprintf(q->info.reason, sizeof(q->info.reason),
			 "auto: not measured (not one round of %d syncs per mode within %llu ms, "
			 "timeout %llu ms): %s polling kept", CALIB_SYNCS,
			 (unsigned long long)(b.span_ns / 1000000u),
			 (unsigned long long)(q->timeout_ns / 1000000u), q->msipoll ? "MSI" : "CONS");
	} else if (choose) {
		q->msipoll = msi <= sev;
		q->info.msipolling = q->msipoll;
		q->info.measured = true;
		snprintf(q->info.reason, sizeof(q->info.reason),
			 "auto: empty-queue CMD_SYNC %llu ns with MSI polling, %llu ns with CONS "
			 "polling (median of %u round%s of %d): %s",
			 (unsigned long long)msi, (unsigned long long)sev, rounds,
			 rounds == 1 ? "" : "s", CALIB_SYNCS,
			 q->msipoll ? "MSI polling" : "CONS polling (disable_msipolling)");
	}
	pthread_mutex_unlock(&q->info_lock);
	return 0;
}

/* A failed attempt of generation gen: record it, then PENDING of the next
 * generation (R_CALIB: pairs with A_CALIB; calib_err is published by it,
 * and the waiters of this attempt see the word change). */
static void attempt_failed(struct hwt_cmdq *q, uint32_t gen, int err)
{
	bool msi = q->msipoll; /* read while we own it; the log comes after */

	pthread_mutex_lock(&q->info_lock);
	snprintf(q->info.reason, sizeof(q->info.reason),
		 "auto: not measured yet (the last try failed: %s; the next use measures)",
		 strerror(-err));
	pthread_mutex_unlock(&q->info_lock);
	atomic_store_explicit(&q->calib_err, err, memory_order_relaxed);
	atomic_store_explicit(&q->calib, (gen + CALIB_GEN_ONE) | CALIB_PENDING,
			      memory_order_release); /* R_CALIB */
	hwt__cmdq_log(q, "auto polling: measurement failed (%s): %s polling until a later use "
		      "measures", strerror(-err), msi ? "MSI" : "CONS");
}

/* We claimed the word (it was st, now RUNNING): measure, then DONE, or on
 * failure DONE again if an earlier choice stands (measure_modes restored
 * it), else the next generation's PENDING. */
static int run_attempt(struct hwt_cmdq *q, uint32_t st, struct budget b)
{
	int err = measure_and_choose(q, true, b);

	if (!err || st == CALIB_DONE)
		atomic_store_explicit(&q->calib, CALIB_DONE, memory_order_release); /* R_CALIB */
	else
		attempt_failed(q, st & ~CALIB_STATE, err);
	return err;
}

int hwt_cmdq_calibrate(struct hwt_cmdq *q)
{
	uint32_t st;

	/* Several queues: a measurement would time queue 0 alone, and on the
	 * rseq path its shared-path syncs would mix the paths (cmdq.h). */
	if (!q || q->nq > 1)
		return -EINVAL;
	if (!hwt__cmdq_msi_capable(q))
		return -EOPNOTSUPP;
	/* A_CALIB: pairs with R_CALIB. */
	st = atomic_load_explicit(&q->calib, memory_order_acquire);
	if (st == CALIB_NONE)
		/* for the report; the mode stays */
		return measure_and_choose(q, false, budget_from_now(q));
	/* Claim the measurement, as a first use does: an issuer's first use
	 * must not measure (or choose) beside us. */
	do
		if ((st & CALIB_STATE) == CALIB_RUNNING)
			return -EBUSY;
	while (!atomic_compare_exchange_weak_explicit(&q->calib, &st,
						      (st & ~CALIB_STATE) | CALIB_RUNNING,
						      memory_order_acquire, /* A_CALIB */
						      memory_order_acquire));
	return run_attempt(q, st, budget_from_now(q));
}

int hwt__cmdq_calibrate_first_use(struct hwt_cmdq *q, uint64_t *deadline)
{
	/* A_CALIB: pairs with R_CALIB (DONE, or a failed attempt's PENDING). */
	uint32_t st = atomic_load_explicit(&q->calib, memory_order_acquire), seen;
	struct hwt__backoff b = { 0 };

	for (;;) {
		if (st == CALIB_DONE || st == CALIB_NONE)
			return 0;
		if ((st & CALIB_STATE) == CALIB_RUNNING)
			break;
		/* PENDING: measure ourselves.  A_CALIB (the CAS): a failed
		 * attempt's R_CALIB, its restored q->msipoll. */
		if (atomic_compare_exchange_weak_explicit(&q->calib, &st,
							  (st & ~CALIB_STATE) | CALIB_RUNNING,
							  memory_order_acquire, memory_order_acquire)) {
			/* the call's deadline starts with its measurement */
			struct budget bud = budget_from_now(q);

			*deadline = bud.deadline;
			return run_attempt(q, st, bud);
		}
	}
	/*
	 * Another issuer measures: wait for this attempt (the word, generation
	 * included) to end, a live thread whose every wait on the device is
	 * bounded.  Waiting for "not RUNNING" instead could wait forever: a
	 * retrying thread turns PENDING back into RUNNING at once (ABA).
	 * RUNNING of generation 0 seen after a change can only be an explicit
	 * hwt_cmdq_calibrate() that started from DONE (generations only grow),
	 * which ends in DONE: wait for it too.  Any other change but DONE
	 * means our attempt failed: its error was published with that change
	 * (or, if a new attempt started since, with the release sequence its
	 * CAS continues).
	 */
	do {
		seen = st;
		/* A_CALIB: pairs with R_CALIB */
		while ((st = atomic_load_explicit(&q->calib, memory_order_acquire)) == seen)
			hwt__backoff_wait(&b);
	} while (st == CALIB_RUNNING);
	return st == CALIB_DONE ? 0 : atomic_load_explicit(&q->calib_err, memory_order_relaxed);
}
