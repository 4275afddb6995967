/* SPDX-License-Identifier: MIT */
/*
 * Auto mode: measure empty-queue CMD_SYNC with MSI polling and with CONS
 * polling on the queue itself, and keep the faster.  Runs on first use (one
 * issuer measures, the others wait) or when hwt_cmdq_calibrate() is called.
 * A first use whose measurement fails (the device paused or stopped) puts
 * the state back to CALIB_PENDING: that call and those that waited for it
 * return the error, and the next use measures again.
 *
 * R_CALIB/A_CALIB: the mode (q->msipoll: chosen, or restored after a failed
 * measurement) and calib_err are published by the release store of
 * CALIB_DONE or CALIB_PENDING; issuers load calib with acquire before they
 * insert, and the CAS that starts a new attempt acquires too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdq/impl.h"
#include "common/time.h"

#define CALIB_ROUNDS 9
#define CALIB_SYNCS 200

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Mean ns per empty-queue sync, median over rounds; modes interleaved so
 * that machine noise and frequency changes hit both alike. */
static int measure_modes(struct hwt_cmdq *q, uint64_t *msi_ns, uint64_t *sev_ns)
{
	uint64_t t[2][CALIB_ROUNDS];
	bool saved = q->msipoll;
	int err = 0;

	for (int r = 0; r < CALIB_ROUNDS && !err; r++) {
		for (int m = 0; m < 2 && !err; m++) {
			uint64_t t0;

			q->msipoll = m == 0;
			err = hwt__cmdq_insert(q, NULL, 0, true, NULL); /* warm the path */
			t0 = hwt__now_ns();
			for (int i = 0; i < CALIB_SYNCS && !err; i++)
				err = hwt__cmdq_insert(q, NULL, 0, true, NULL);
			t[m][r] = (hwt__now_ns() - t0) / CALIB_SYNCS;
		}
	}
	q->msipoll = saved;
	if (err)
		return err;
	qsort(t[0], CALIB_ROUNDS, sizeof(uint64_t), cmp_u64);
	qsort(t[1], CALIB_ROUNDS, sizeof(uint64_t), cmp_u64);
	*msi_ns = t[0][CALIB_ROUNDS / 2];
	*sev_ns = t[1][CALIB_ROUNDS / 2];
	return 0;
}

bool hwt__cmdq_msi_capable(const struct hwt_cmdq *q)
{
	uint32_t idr0 = hwt__reg_idr0(q->regs);

	return (idr0 & HWT_SMMU_IDR0_MSI) && (idr0 & HWT_SMMU_IDR0_COHACC);
}

int hwt_cmdq_calibrate(struct hwt_cmdq *q)
{
	uint64_t msi, sev;
	int err;

	if (!q)
		return -EINVAL;
	if (!hwt__cmdq_msi_capable(q))
		return -EOPNOTSUPP;
	err = measure_modes(q, &msi, &sev);
	if (err)
		return err;
	pthread_mutex_lock(&q->info_lock);
	q->info.msi_ns = msi;
	q->info.sev_ns = sev;
	if (atomic_load_explicit(&q->calib, memory_order_relaxed) == CALIB_NONE) {
		pthread_mutex_unlock(&q->info_lock);
		return 0; /* measured for the report; the configured mode stays */
	}
	q->msipoll = msi <= sev;
	q->info.msipolling = q->msipoll;
	q->info.measured = true;
	snprintf(q->info.reason, sizeof(q->info.reason),
		 "auto: empty-queue CMD_SYNC %llu ns with MSI polling, %llu ns with CONS polling "
		 "(median of %d rounds of %d): %s",
		 (unsigned long long)msi, (unsigned long long)sev, CALIB_ROUNDS, CALIB_SYNCS,
		 q->msipoll ? "MSI polling" : "CONS polling (disable_msipolling)");
	pthread_mutex_unlock(&q->info_lock);
	/* R_CALIB: pairs with A_CALIB, issuers see the chosen mode. */
	atomic_store_explicit(&q->calib, CALIB_DONE, memory_order_release);
	return 0;
}

int hwt__cmdq_calibrate_first_use(struct hwt_cmdq *q)
{
	uint32_t st = CALIB_PENDING;
	struct hwt__backoff b = { 0 };

	/* A_CALIB: a failed attempt's R_CALIB (its restored q->msipoll). */
	if (atomic_compare_exchange_strong_explicit(&q->calib, &st, CALIB_RUNNING,
						    memory_order_acquire, memory_order_acquire)) {
		int err = hwt_cmdq_calibrate(q); /* on success: CALIB_DONE (R_CALIB) */

		if (err) {
			hwt__cmdq_log(q, "auto polling: measurement failed (%s): %s polling until a "
					 "later use measures", strerror(-err), q->msipoll ? "MSI" : "CONS");
			pthread_mutex_lock(&q->info_lock);
			snprintf(q->info.reason, sizeof(q->info.reason),
				 "auto: not measured yet (the last try failed: %s; the next use "
				 "measures)", strerror(-err));
			pthread_mutex_unlock(&q->info_lock);
			atomic_store_explicit(&q->calib_err, err, memory_order_relaxed);
			/* R_CALIB: pairs with A_CALIB; the next use measures again. */
			atomic_store_explicit(&q->calib, CALIB_PENDING, memory_order_release);
		}
		return err;
	}
	/* Another issuer measures (RUNNING) or has (DONE): wait for it, a live
	 * thread whose every wait on the device is bounded. */
	while ((st = atomic_load_explicit(&q->calib, memory_order_acquire)) == CALIB_RUNNING) /* A_CALIB */
		hwt__backoff_wait(&b);
	if (st == CALIB_DONE)
		return 0;
	/* PENDING again: the measurement we waited for failed. */
	return atomic_load_explicit(&q->calib_err, memory_order_relaxed);
}

