/* SPDX-License-Identifier: MIT */
#include "prog/queue.h"

#include <errno.h>
#include <stddef.h>

int util_queue_create(const struct util_queue_cfg *c, struct hwt_smmu_dev **dev,
		      struct hwt_cmdq **q)
{
	struct hwt_smmu_dev_config dc;
	struct hwt_cmdq_options qo;
	struct hwt_cmdq_info info;
	int err;

	*dev = NULL;
	*q = NULL;
#ifndef HWT_CMDQ_QUEUES_PER_CPU
	if (c->queues > 1)
		return -EOPNOTSUPP;
#endif
	hwt_smmu_dev_config_default(&dc);
	dc.idr0 = HWT_SMMU_IDR0_MSI | HWT_SMMU_IDR0_SEV | HWT_SMMU_IDR0_COHACC;
	if (c->log2 > dc.cmdqs)
		dc.cmdqs = c->log2;
	dc.cpu = c->cpu;
	if (c->cons_batch)
		dc.cons_batch = c->cons_batch;
	dc.msi_cost_ns = c->msi_cost_ns;
	dc.sev_cost_ns = c->sev_cost_ns;
	dc.cmd_cost_ns = c->cmd_cost_ns;
	if (c->handler)
		dc.handler = c->handler;
	err = hwt_smmu_dev_create(dev, &dc);
	if (err)
		return err;
	/* -EINVAL for a bad HWTUNE_DISABLE_MSIPOLLING: overridden below */
	hwt_cmdq_options_default(&qo);
	qo.entries_log2 = c->log2;
	qo.disable_msipolling = c->cons_poll;
	qo.auto_poll = c->auto_poll;
	qo.timeout_ns = c->timeout_ns;
#ifdef HWT_CMDQ_QUEUES_PER_CPU
	if (c->queues)
		qo.queues = c->queues;
#endif
	err = hwt_cmdq_create(q, *dev, &qo);
	if (!err && c->start)
		err = hwt_smmu_dev_start(*dev);
	if (!err && !c->auto_poll) {
		hwt_cmdq_get_info(*q, &info);
		if (info.msipolling == c->cons_poll)
			err = -EINVAL;
	}
	if (err) {
		util_queue_destroy(*dev, *q);
		*dev = NULL;
		*q = NULL;
	}
	return err;
}

void util_queue_destroy(struct hwt_smmu_dev *dev, struct hwt_cmdq *q)
{
	if (dev)
		hwt_smmu_dev_stop(dev);
	hwt_cmdq_destroy(q);
	hwt_smmu_dev_destroy(dev);
}

int util_noop_handler(void *ctx, const uint64_t dw[2])
{
	(void)ctx, (void)dw;
	return HWT_SMMU_CERROR_NONE;
}
