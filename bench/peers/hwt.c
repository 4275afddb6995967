/* SPDX-License-Identifier: MIT */
/*
 * hwt_cmdq as a bench queue: the software SMMU is the consumer (its
 * dc.handler is called per command), started and stopped with each
 * segment like the rings' consumer threads.  A put is one
 * hwt_cmdq_issue(cmds, n, await); awaited, it ends with a CMD_SYNC.
 * Variants when awaited: 0 MSI polling, 1 CONS polling.
 *
 * bench_hwt_percpu_ops, where the library has per-CPU queues
 * (HWT_CMDQ_QUEUES_PER_CPU): the same with one command queue per CPU
 * (hwt_cmdq_percpu; awaited, MSI polling: hwt_cmdq_percpu_sync_msi).  Its
 * description carries the insert path the queue reports (rseq or shared,
 * and why), read again after the run.  Its drain (flow) cannot be a
 * CMD_SYNC from the main thread: a sync covers only what its own thread
 * queued, on the queues that thread used, and the producers have exited.
 * It waits instead until the device's statistics count every command the
 * producers put, as the rings' drains wait for their consumer.
 */
#include "peers.h"

#include "prog/queue.h"
#include "prog/sys.h"

#include <errno.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hq {
	struct hwt_smmu_dev *dev;
	struct hwt_cmdq *q;
	bool await, percpu;
	uint64_t timeout_ns;
	unsigned nprod;
	struct hwt_smmu_dev_stats st0;
	struct {
		alignas(128) uint64_t n; /* commands put by a producer: its own */
		uint64_t puts, retries0, retries; /* its hwt_cmdq_thread_cas_retries() */
	} issued[BENCH_MAX_PROD];
};

#ifdef HWT_CMDQ_QUEUES_PER_CPU
/* The info's insert path and reason as words, whether the header carries
 * them as text (an array or a pointer) or as a code. */
static const char *h_text(const char *s)
{
	return s ? s : "";
}

static const char *h_code(long v)
{
	static _Thread_local char buf[24];

	snprintf(buf, sizeof(buf), "path %ld", v);
	return buf;
}

#define H_WORDS(x) _Generic((x), char *: h_text, const char *: h_text, default: h_code)(x)

static void h_describe(void *p, struct bench_queue_desc *d)
{
	struct hq *h = p;
	struct hwt_cmdq_info info;

	hwt_cmdq_get_info(h->q, &info);
	snprintf(d->insert_path, sizeof(d->insert_path), "%s", H_WORDS(info.insert_path));
	snprintf(d->insert_path_reason, sizeof(d->insert_path_reason), "%s",
		 H_WORDS(info.insert_path_reason));
}
#endif

static int h_create(const struct bench_queue_ops *self, const struct bench_queue_cfg *cfg,
		    void **out, struct bench_queue_desc *d)
{
	bool cons = cfg->await && cfg->variant == 1;
	bool percpu = self != &bench_hwt_ops;
	struct util_queue_cfg c = {
		.log2 = cfg->log2,
		.cpu = cfg->cons_cpu,
		.cons_batch = cfg->cons_batch,
		.cons_poll = cons,
		.timeout_ns = cfg->timeout_ns,
		.handler = cfg->handler,
		.start = false,
	};
	struct hq *h = aligned_alloc(128, (sizeof(*h) + 127) & ~(size_t)127);
	char every[48] = "once per run of commands", queues[64] = "";
	int err;

	if (cfg->cons_batch)
		snprintf(every, sizeof(every), "every %u command(s)", cfg->cons_batch);
	snprintf(d->name, sizeof(d->name), "%s%s", percpu ? "hwt_cmdq_percpu" : "hwt_cmdq",
		 !cfg->await ? "" : cons ? "_sync_cons" : "_sync_msi");
	if (!h)
		return -ENOMEM;
	memset(h, 0, sizeof(*h));
	h->await = cfg->await;
	h->percpu = percpu;
	h->timeout_ns = cfg->timeout_ns;
#ifdef HWT_CMDQ_QUEUES_PER_CPU
	if (percpu)
		c.queues = HWT_CMDQ_QUEUES_PER_CPU;
#endif
	err = util_queue_create(&c, &h->dev, &h->q);
	if (err) {
		free(h);
		return err;
	}
#ifdef HWT_CMDQ_QUEUES_PER_CPU
	if (percpu) {
		struct hwt_cmdq_info info;

		hwt_cmdq_get_info(h->q, &info);
		snprintf(queues, sizeof(queues), "; options.queues = HWT_CMDQ_QUEUES_PER_CPU (%u queues)",
			 (unsigned)info.queues);
		h_describe(h, d);
	}
#endif
	if (cfg->await)
		snprintf(d->what, sizeof(d->what),
			 "hwt_cmdq_issue(cmds, B, true) per burst: B commands + CMD_SYNC, "
			 "completion awaited by %s; no-op dc.handler, CONS published %s; "
			 "device started and stopped with each segment%s",
			 cons ? "CONS polling (disable_msipolling)" : "MSI polling", every, queues);
	else
		snprintf(d->what, sizeof(d->what),
			 "hwt_cmdq_issue(cmds, B, false) per burst; software SMMU consumer with a "
			 "no-op dc.handler, CONS published %s; completion not awaited; %s "
			 "drains the segment (timed); device started and stopped with each "
			 "segment%s", every,
			 percpu ? "a wait until the device's stats count every command put"
				: "one CMD_SYNC (MSI polling)",
			 queues);
	*out = h;
	return 0;
}

static void h_destroy(void *p)
{
	struct hq *h = p;

	util_queue_destroy(h->dev, h->q);
	free(h);
}

static int h_begin(void *p, unsigned nprod, _Atomic int *abort)
{
	struct hq *h = p;

	(void)abort; /* every wait of the queue ends by its own timeout */
	h->nprod = nprod;
	for (unsigned i = 0; i < BENCH_MAX_PROD; i++)
		h->issued[i].n = h->issued[i].puts = 0;
	hwt_smmu_dev_get_stats(h->dev, &h->st0);
	return hwt_smmu_dev_start(h->dev);
}

static int h_put(void *p, unsigned id, const struct hwt_cmdq_cmd *e, unsigned n)
{
	struct hq *h = p;
	int err;

	if (!h->issued[id].puts++) /* a segment's threads are its own */
		h->issued[id].retries0 = hwt_cmdq_thread_cas_retries();
	err = hwt_cmdq_issue(h->q, e, n, h->await);
	h->issued[id].retries = hwt_cmdq_thread_cas_retries();
	if (!err)
		h->issued[id].n += n;
	return err;
}

static double h_cas_retries(void *p)
{
	struct hq *h = p;
	uint64_t puts = 0, retries = 0;

	for (unsigned i = 0; i < h->nprod; i++) {
		puts += h->issued[i].puts;
		retries += h->issued[i].retries - h->issued[i].retries0;
	}
	return puts ? (double)retries / (double)puts : 0;
}

/* Commands the device executed since the segment began (CMD_SYNCs apart). */
static uint64_t h_executed(const struct hq *h)
{
	struct hwt_smmu_dev_stats st;

	hwt_smmu_dev_get_stats(h->dev, &st);
	return st.cmds - h->st0.cmds - (st.syncs - h->st0.syncs);
}

static int h_drain(void *p)
{
	struct hq *h = p;
	struct util_wait w = UTIL_WAIT(UTIL_SPIN_NS, h->timeout_ns);
	uint64_t issued = 0;

	if (h->await)
		return 0;
	if (!h->percpu)
		return hwt_cmdq_sync(h->q);
	/* the producers' counts: read after A_ready or after joining them
	 * (the bench orders them) */
	for (unsigned i = 0; i < h->nprod; i++)
		issued += h->issued[i].n;
	while (h_executed(h) < issued)
		if (!util_wait_more(&w))
			return -ETIMEDOUT;
	return 0;
}

static int h_end(void *p)
{
	struct hq *h = p;
	uint64_t issued = 0;

	hwt_smmu_dev_stop(h->dev);
	/* the producers were joined before: their counts are final */
	for (unsigned i = 0; i < h->nprod; i++)
		issued += h->issued[i].n;
	/* the device executed another count */
	return h_executed(h) != issued ? -EPROTO : 0;
}

const struct bench_queue_ops bench_hwt_ops = {
	.subject = true,
	.variants = { 1, 2 },
	.create = h_create,
	.destroy = h_destroy,
	.begin = h_begin,
	.put = h_put,
	.drain = h_drain,
	.end = h_end,
	.cas_retries = h_cas_retries,
};

#ifdef HWT_CMDQ_QUEUES_PER_CPU
/* One queue per CPU; awaited with MSI polling only. */
const struct bench_queue_ops bench_hwt_percpu_ops = {
	.subject = true,
	.variants = { 1, 1 },
	.create = h_create,
	.destroy = h_destroy,
	.begin = h_begin,
	.put = h_put,
	.drain = h_drain,
	.end = h_end,
	.cas_retries = h_cas_retries,
	.describe = h_describe,
};
#endif
