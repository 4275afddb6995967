/* SPDX-License-Identifier: MIT */
/*
 * A queue on a started software SMMU, for the driver-side tests
 * (tests/unit/cmdq*.c), with a log hook that keeps every message.
 *
 *   rig_up(r, idr0, disable_msi, shift, timeout_ns)   device (IDR0 idr0, at
 *       least 2^8 entries) and a queue of 2^shift entries, started
 *   rig_down(r)                                       stop, destroy both
 *   log_hook(ctx, msg)    a struct logbuf *ctx keeps msg (hwt_cmdq_options.log)
 *   logged(l, s)          did any message contain s?
 */
#ifndef HWT_TEST_RIG_H
#define HWT_TEST_RIG_H

#include <hwtune/hwtune.h>

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct logbuf {
	pthread_mutex_t lock;
	char text[8192];
	size_t len;
};

void log_hook(void *ctx, const char *msg);
bool logged(struct logbuf *l, const char *s);

struct rig {
	struct hwt_smmu_dev *dev;
	struct hwt_cmdq *q;
	struct logbuf log;
};

void rig_up(struct rig *r, uint32_t idr0, bool disable_msi, unsigned shift, uint64_t timeout_ns);
void rig_down(struct rig *r);

#define ALL_FEATURES (HWT_SMMU_IDR0_MSI | HWT_SMMU_IDR0_SEV | HWT_SMMU_IDR0_COHACC)

#endif
