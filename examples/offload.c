/* SPDX-License-Identifier: MIT */
/*
 * offload: worker threads hand work items to one device thread through the
 * lock-free command queue, and use CMD_SYNC as a fence.
 *
 * The software SMMU normally executes SMMU commands against its cache
 * models; here a handler of our own executes them instead, so each 16-byte
 * command is simply "work item i of worker w".  A worker queues all of its
 * items without waiting, then issues one CMD_SYNC: when that returns 0,
 * every command the worker queued before it has been executed.  Each
 * worker then checks that each of its items ran exactly once.
 *
 *   cc offload.c $(pkg-config --cflags --libs hwtune) -o offload && ./offload
 */
#include <hwtune/hwtune.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define WORKERS 4
#define ITEMS 2000 /* per worker */
#define CHUNK 32   /* commands per hwt_cmdq_issue() call, well below the queue size */
#define OP_WORK 0x80 /* our opcode: any encoding but CMD_SYNC's (0x46) is the handler's */

/* How often the handler ran each item.  Only the device thread writes it;
 * a worker reads its own row after its CMD_SYNC returned, and the queue
 * orders the handler's writes before that return. */
static unsigned done[WORKERS][ITEMS];

/* Runs on the device's consumer thread, once per command, in queue order. */
static int run_item(void *ctx, const uint64_t dw[2])
{
	unsigned w = (unsigned)(dw[0] >> 8) & 0xff, item = (unsigned)dw[1];

	(void)ctx;
	if ((dw[0] & 0xff) != OP_WORK || w >= WORKERS || item >= ITEMS)
		return HWT_SMMU_CERROR_ILL; /* not ours: the queue stops with an error */
	done[w][item]++;
	return HWT_SMMU_CERROR_NONE;
}

struct worker {
	struct hwt_cmdq *q;
	unsigned id;
	int err;      /* 0 or the first -errno */
	unsigned bad; /* items not executed exactly once */
};

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	struct hwt_cmdq_cmd cmds[CHUNK];

	/* 1. Queue every item, CHUNK at a time, without waiting (sync false). */
	for (unsigned i = 0; i < ITEMS && !wk->err; i += CHUNK) {
		unsigned n = ITEMS - i < CHUNK ? ITEMS - i : CHUNK;

		for (unsigned k = 0; k < n; k++) {
			cmds[k].dw[0] = OP_WORK | (uint64_t)wk->id << 8;
			cmds[k].dw[1] = i + k;
		}
		wk->err = hwt_cmdq_issue(wk->q, cmds, n, false);
	}
	/* 2. The fence: one CMD_SYNC covers everything this thread queued. */
	if (!wk->err)
		wk->err = hwt_cmdq_sync(wk->q);
	/* 3. Exactly once, for each of our items. */
	for (unsigned i = 0; i < ITEMS && !wk->err; i++)
		wk->bad += done[wk->id][i] != 1;
	return NULL;
}

int main(void)
{
	struct hwt_smmu_dev_config dc;
	struct hwt_smmu_dev *dev;
	struct hwt_cmdq *q;
	struct worker wk[WORKERS];
	pthread_t tid[WORKERS];
	unsigned started = 0;
	int err, failed = 0;

	/* The device: default features (MSI, SEV, COHACC), our handler. */
	hwt_smmu_dev_config_default(&dc);
	dc.handler = run_item;
	err = hwt_smmu_dev_create(&dev, &dc);
	if (err) {
		fprintf(stderr, "offload: hwt_smmu_dev_create: %s\n", strerror(-err));
		return 1;
	}
	/* The queue (default options: MSI polling, 1 s timeout), then start. */
	err = hwt_cmdq_create(&q, dev, NULL);
	if (!err)
		err = hwt_smmu_dev_start(dev);
	if (err) {
		fprintf(stderr, "offload: setting up the queue: %s\n", strerror(-err));
		hwt_cmdq_destroy(q); /* NULL-safe */
		hwt_smmu_dev_destroy(dev);
		return 1;
	}

	for (unsigned w = 0; w < WORKERS; w++) {
		wk[w] = (struct worker){ .q = q, .id = w };
		if (pthread_create(&tid[w], NULL, worker_main, &wk[w]) != 0)
			break;
		started++;
	}
	for (unsigned w = 0; w < started; w++) {
		pthread_join(tid[w], NULL);
		if (wk[w].err || wk[w].bad) {
			fprintf(stderr, "offload: worker %u: %s, %u items not run exactly once\n", w,
				wk[w].err ? strerror(-wk[w].err) : "ok", wk[w].bad);
			failed = 1;
		}
	}
	if (started < WORKERS) {
		fprintf(stderr, "offload: could only start %u threads\n", started);
		failed = 1;
	}

	hwt_cmdq_destroy(q); /* queue first, then device */
	hwt_smmu_dev_destroy(dev);
	if (!failed)
		printf("%u workers x %u items: each executed exactly once before its CMD_SYNC returned\n",
		       WORKERS, ITEMS);
	return failed;
}
