/* SPDX-License-Identifier: MIT */
/*
 * The public calls that insert commands: hwt_cmdq_issue and its short
 * forms, and the batch.  Each checks its arguments, lets auto mode measure
 * on first use (calib.c), then inserts (cmdq.c).
 */
#include <errno.h>
#include <stdatomic.h>

#include "cmdq/impl.h"

/* hwt_cmdq_issue, also saying whether the commands went into the queue. */
static int issue(struct hwt_cmdq *q, const struct hwt_cmdq_cmd *cmds, unsigned n, bool sync,
		 bool *inserted)
{
	uint64_t deadline = 0; /* set by a first-use measurement, else at the first wait */
	uint32_t calib;

	if (!q || (n && !cmds) || n > (1u << q->shift) - sync) /* n + sync could wrap */
		return -EINVAL;
	if (n + sync == 0)
		return 0;
	if (q->nq > 1) /* several queues (no auto mode): queues.c */
		return hwt__cmdq_mq_issue(q, cmds, n, sync, inserted);
	/* A_CALIB: pairs with R_CALIB. */
	calib = atomic_load_explicit(&q->calib, memory_order_acquire);
	if (calib != CALIB_NONE && calib != CALIB_DONE) { /* PENDING or RUNNING, any generation */
		int err = hwt__cmdq_calibrate_first_use(q, &deadline);

		if (err)
			return err; /* nothing inserted; a later use measures */
	}
	return hwt__cmdq_insert(q, cmds, n, sync, inserted, deadline, NULL);
}

int hwt_cmdq_issue(struct hwt_cmdq *q, const struct hwt_cmdq_cmd *cmds, unsigned n, bool sync)
{
	return issue(q, cmds, n, sync, NULL);
}

int hwt_cmdq_issue_cmd(struct hwt_cmdq *q, const struct hwt_cmdq_cmd *cmd)
{
	return hwt_cmdq_issue(q, cmd, 1, false);
}

int hwt_cmdq_issue_cmd_sync(struct hwt_cmdq *q, const struct hwt_cmdq_cmd *cmd)
{
	return hwt_cmdq_issue(q, cmd, 1, true);
}

int hwt_cmdq_sync(struct hwt_cmdq *q)
{
	if (q && q->nq > 1) /* every queue this thread used: queues.c */
		return hwt__cmdq_mq_sync(q);
	return hwt_cmdq_issue(q, NULL, 0, true);
}

void hwt_cmdq_batch_init(struct hwt_cmdq_batch *b, struct hwt_cmdq *q)
{
	if (!b)
		return;
	b->q = q;
	b->num = 0;
}

/*
 * A failed flush or submit leaves in the batch exactly the commands that
 * were not inserted (cmdq.h): all of them if it failed before reserving,
 * none if they went into the queue and only the CMD_SYNC failed.
 */
int hwt_cmdq_batch_add(struct hwt_cmdq_batch *b, const struct hwt_cmdq_cmd *cmd)
{
	bool quirk, inserted = false;
	int err;

	if (!b || !b->q || !cmd || b->num > HWT_CMDQ_BATCH_ENTRIES)
		return -EINVAL;
	quirk = b->q->force_sync_at_63 && b->num == HWT_CMDQ_BATCH_ENTRIES - 1;

	/* Full: flush without a sync (with one at 63 under the MMU-700
	 * erratum). */
	if (quirk || b->num == HWT_CMDQ_BATCH_ENTRIES) {
		err = issue(b->q, b->cmds, b->num, quirk, &inserted);
		if (!err || inserted)
			b->num = 0;
		if (err)
			return err; /* cmd not added */
	}
	b->cmds[b->num++] = *cmd;
	return 0;
}

int hwt_cmdq_batch_submit(struct hwt_cmdq_batch *b)
{
	bool inserted = false;
	int err;

	if (!b || !b->q || b->num > HWT_CMDQ_BATCH_ENTRIES)
		return -EINVAL;
	err = issue(b->q, b->cmds, b->num, true, &inserted);
	if (!err || inserted)
		b->num = 0;
	return err;
}

