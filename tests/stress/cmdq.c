/* SPDX-License-Identifier: MIT */
/*
 * Command-queue stress: T producers (1, 2, 4, 8 on a 2-core box) x batch
 * sizes x both completion modes x small queues (128 and 256 entries, so
 * wrap and full happen constantly), and 64 producers sharing one CPU with
 * the device (oversubscribed: a producer preempted anywhere).  Every command carries (producer,
 * sequence); the device's handler checks exactly-once delivery and
 * per-producer order, and every returned CMD_SYNC checks that all of its
 * producer's earlier commands were executed.  The one-CPU runs and the
 * faults again with one queue per CPU (HWT_CMDQ_QUEUES_PER_CPU): on one CPU
 * every call goes to that CPU's queue, so the same checks hold, on the rseq
 * path (where registered: a preempted producer restarts its section) or the
 * shared one (tests/run.sh reruns this program with rseq off).
 */
#include "harness/harness.h"
#include "harness/cmds.h"
#include "harness/why.h"

#include <hwtune/hwtune.h>
#include <hwtune/smmu_model.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/time.h"

#define MAXP 64
#define STRESS_OP 0x01 /* any opcode but CMD_SYNC: our handler executes it */
#define SEQ_BITS 48

struct run {
	struct hwt_cmdq *q;
	struct hwt_smmu_dev *dev;
	unsigned batch;
	bool use_batch_api;
	unsigned min_iter; /* calls per producer at least, whatever the time */
	uint64_t end_ns;
	/* Written by the device thread only; read by producers after a sync
	 * (relaxed: the sync's completion acquire orders the read). */
	_Atomic uint64_t executed[MAXP];
	_Atomic uint64_t issued[MAXP];
	struct tst_why why; /* violations */
};

static int handler(void *ctx, const uint64_t dw[2])
{
	struct run *r = ctx;
	unsigned p = (unsigned)(dw[1] >> SEQ_BITS);
	uint64_t seq = dw[1] & ((1ull << SEQ_BITS) - 1), next;

	if ((dw[0] & 0xff) != STRESS_OP || p >= MAXP) {
		tst_note(&r->why, "foreign command 0x%016llx 0x%016llx", (unsigned long long)dw[0],
			  (unsigned long long)dw[1]);
		return HWT_SMMU_CERROR_NONE;
	}
	next = atomic_load_explicit(&r->executed[p], memory_order_relaxed);
	if (seq != next)
		tst_note(&r->why, "producer %u: executed seq %llu, expected %llu (%s)", p,
			  (unsigned long long)seq, (unsigned long long)next,
			  seq < next ? "duplicate" : "lost or reordered");
	atomic_store_explicit(&r->executed[p], seq + 1, memory_order_relaxed);
	return HWT_SMMU_CERROR_NONE;
}

struct producer {
	struct run *r;
	unsigned id;
	int err;
};

static void check_synced(struct run *r, unsigned p, uint64_t seq)
{
	uint64_t done = atomic_load_explicit(&r->executed[p], memory_order_relaxed);

	if (done != seq)
		tst_note(&r->why, "producer %u: CMD_SYNC returned with %llu of %llu commands executed", p,
			  (unsigned long long)done, (unsigned long long)seq);
}

static void *produce(void *arg)
{
	struct producer *pr = arg;
	struct run *r = pr->r;
	struct hwt_cmdq_cmd *cmds = calloc(r->batch ? r->batch : 1, sizeof(*cmds));
	struct hwt_cmdq_batch *b = malloc(sizeof(*b));
	uint64_t seq = 0;
	unsigned iter = 0;

	hwt_cmdq_batch_init(b, r->q);
	while (!pr->err && (hwt__now_ns() < r->end_ns || iter < r->min_iter)) {
		bool sync = r->batch == 0 || iter % 3 == 2;

		iter++;

		for (unsigned i = 0; i < r->batch; i++) {
			cmds[i].dw[0] = STRESS_OP;
			cmds[i].dw[1] = (uint64_t)pr->id << SEQ_BITS | (seq + i);
		}
		if (r->use_batch_api) {
			for (unsigned i = 0; i < r->batch && !pr->err; i++)
				pr->err = hwt_cmdq_batch_add(b, &cmds[i]);
			if (!pr->err && sync)
				pr->err = hwt_cmdq_batch_submit(b);
		} else {
			pr->err = hwt_cmdq_issue(r->q, cmds, r->batch, sync);
		}
		seq += r->batch;
		if (!pr->err && sync)
			check_synced(r, pr->id, seq);
	}
	if (!pr->err)
		pr->err = r->use_batch_api ? hwt_cmdq_batch_submit(b) : hwt_cmdq_sync(r->q);
	if (!pr->err)
		check_synced(r, pr->id, seq);
	atomic_store_explicit(&r->issued[pr->id], seq, memory_order_relaxed);
	free(cmds);
	free(b);
	return NULL;
}

/* One run: threads producers for ms (and min_iter calls each at least);
 * every wait of every call gives up after timeout_ns (-ETIMEDOUT fails). */
static void stress_run(unsigned threads, unsigned batch, bool batch_api, unsigned shift,
		       bool disable_msi, unsigned ms, unsigned min_iter, uint64_t timeout_ns,
		       unsigned queues)
{
	struct hwt_smmu_dev_config dc;
	struct hwt_smmu_dev_stats st;
	struct producer pr[MAXP];
	struct hwt_cmdq_options o;
	struct hwt_cmdq_info info;
	pthread_t t[MAXP];
	struct run *r = calloc(1, sizeof(*r));
	uint64_t total = 0;
	char path[32];

	tst_why_init(&r->why);
	r->batch = batch;
	r->use_batch_api = batch_api;
	r->min_iter = min_iter;
	hwt_smmu_dev_config_default(&dc);
	dc.cmdqs = shift;
	dc.handler = handler;
	dc.handler_ctx = r;
	ASSERT_OK(hwt_smmu_dev_create(&r->dev, &dc));
	hwt_cmdq_options_default(&o);
	o.entries_log2 = shift;
	o.disable_msipolling = disable_msi;
	o.timeout_ns = timeout_ns;
	o.queues = queues;
	ASSERT_OK(hwt_cmdq_create(&r->q, r->dev, &o));
	ASSERT_OK(hwt_smmu_dev_start(r->dev));
	hwt_cmdq_get_info(r->q, &info);
	path[0] = 0;
	if (info.queues > 1)
		snprintf(path, sizeof(path), " %u queues, %s", info.queues, info.insert_path);
	r->end_ns = hwt__now_ns() + ms * 1000000ull;
	for (unsigned i = 0; i < threads; i++) {
		pr[i] = (struct producer){ r, i, 0 };
		ASSERT_EQ(pthread_create(&t[i], NULL, produce, &pr[i]), 0);
	}
	for (unsigned i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	hwt_smmu_dev_get_stats(r->dev, &st);
	hwt_smmu_dev_stop(r->dev);
	for (unsigned i = 0; i < threads; i++) {
		uint64_t issued = atomic_load_explicit(&r->issued[i], memory_order_relaxed);

		if (pr[i].err)
			hwt_test_fail(__FILE__, __LINE__, "T=%u B=%u%s n=%u %s%s: producer %u: %s",
				      threads, batch, batch_api ? " (batch API)" : "", shift,
				      disable_msi ? "cons" : "msi", path, i, strerror(-pr[i].err));
		ASSERT_EQ(atomic_load_explicit(&r->executed[i], memory_order_relaxed), issued);
		total += issued;
	}
	if (tst_why_first(&r->why))
		hwt_test_fail(__FILE__, __LINE__, "T=%u B=%u n=%u %s%s: %u violations, first: %s",
			      threads, batch, shift, disable_msi ? "cons" : "msi", path,
			      tst_why_count(&r->why), tst_why_first(&r->why));
	ASSERT_EQ(st.cmds - st.syncs, total);
	ASSERT_EQ(st.errors, 0);
	TLOG("T=%u B=%2u%s n=%u %-4s%s: %llu commands, %llu syncs", threads, batch,
	     batch_api ? " api" : "    ", shift, disable_msi ? "cons" : "msi", path,
	     (unsigned long long)total, (unsigned long long)st.syncs);
	hwt_cmdq_destroy(r->q);
	hwt_smmu_dev_destroy(r->dev);
	free(r);
}

static void stress_one(unsigned threads, unsigned batch, bool batch_api, unsigned shift,
		       bool disable_msi, unsigned ms, unsigned queues)
{
	/* generous: 8 producers + device on 2 cores, TSAN, qemu */
	stress_run(threads, batch, batch_api, shift, disable_msi, ms, 300, 20000000000ull, queues);
}

static void stress_matrix(unsigned threads, bool disable_msi)
{
	static const struct {
		unsigned batch;
		bool api;
	} b[] = { { 0, false }, { 1, false }, { 7, false }, { 64, false }, { 100, true } };

	for (unsigned shift = 7; shift <= 8; shift++)
		for (unsigned i = 0; i < sizeof(b) / sizeof(b[0]); i++)
			stress_one(threads, b[i].batch, b[i].api, shift, disable_msi, 100, 1);
}

#define STRESS(name, threads, cons)              \
	TEST_TIMEOUT(name, 120)                  \
	{                                        \
		stress_matrix(threads, cons);    \
	}

/* Everything on one CPU: no wait may need a free core to make progress. */
static void one_cpu(void)
{
	cpu_set_t set;
	int first = -1;

	ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
		if (CPU_ISSET(c, &set))
			first = c;
	CPU_ZERO(&set);
	CPU_SET(first, &set);
	ASSERT_EQ(sched_setaffinity(0, sizeof(set), &set), 0); /* threads inherit it */
}

static void eight_on_one_cpu(bool disable_msi, unsigned queues)
{
	one_cpu();
	stress_one(8, 7, false, 7, disable_msi, 100, queues);
	stress_one(8, 64, false, 7, disable_msi, 100, queues);
}

TEST_TIMEOUT(stress_8p_one_cpu_msi, 120)
{
	eight_on_one_cpu(false, 1);
}

TEST_TIMEOUT(stress_8p_one_cpu_cons, 120)
{
	eight_on_one_cpu(true, 1);
}

/* One queue per CPU, all calls on one: 50 ms each of MSI and CONS. */
TEST_TIMEOUT(stress_8p_one_cpu_per_cpu_queues, 120)
{
	one_cpu();
	stress_one(8, 7, false, 7, false, 50, HWT_CMDQ_QUEUES_PER_CPU);
	stress_one(8, 64, false, 7, true, 50, HWT_CMDQ_QUEUES_PER_CPU);
}

/*
 * 64 producers and the device on one CPU: a producer is preempted while it
 * owns the queue, holds the shadow cons (a registered CMD_SYNC waiter) or
 * waits for space, and 63 others want the CPU.  Every wait must still end:
 * each call's waits have 2 s (scaled), far beyond what a fair share of the
 * CPU needs (a call is a few microseconds of work).  batch 100 with a
 * CMD_SYNC on 256 entries: two calls fill the queue, so nearly every call
 * waits for space; batch 0: the CMD_SYNC waiters themselves.
 */
static void oversubscribed(bool disable_msi, unsigned queues)
{
	uint64_t timeout_ns = (uint64_t)(2e9 * hwt_test_scale());

	one_cpu();
	stress_run(64, 100, false, 8, disable_msi, 100, 20, timeout_ns, queues);
	stress_run(64, 7, false, 7, disable_msi, 100, 20, timeout_ns, queues);
	stress_run(64, 0, false, 7, disable_msi, 100, 20, timeout_ns, queues);
}

TEST_TIMEOUT(stress_64p_one_cpu_msi, 120)
{
	oversubscribed(false, 1);
}

TEST_TIMEOUT(stress_64p_one_cpu_cons, 120)
{
	oversubscribed(true, 1);
}

/* The rseq path's restarts (or the shared path's preemptions) with 63
 * other producers on the CPU, and its waits for space. */
TEST_TIMEOUT(stress_64p_one_cpu_per_cpu_queues_msi, 120)
{
	oversubscribed(false, HWT_CMDQ_QUEUES_PER_CPU);
}

TEST_TIMEOUT(stress_64p_one_cpu_per_cpu_queues_cons, 120)
{
	oversubscribed(true, HWT_CMDQ_QUEUES_PER_CPU);
}

STRESS(stress_1p_msi, 1, false)
STRESS(stress_1p_cons, 1, true)
STRESS(stress_2p_msi, 2, false)
STRESS(stress_2p_cons, 2, true)
STRESS(stress_4p_msi, 4, false)
STRESS(stress_4p_cons, 4, true)
STRESS(stress_8p_msi, 8, false)
STRESS(stress_8p_cons, 8, true)

/* ---- invalidation visibility under contention ------------------------------------- */

struct inval {
	struct hwt_cmdq *q;
	struct hwt_smmu_dev *dev;
	uint16_t asid;
	int err;
	unsigned stale;
};

static void *invalidate(void *arg)
{
	struct inval *v = arg;

	for (uint64_t i = 0; i < 300 && !v->err; i++) {
		struct hwt_smmu_tlb_entry e = { .kind = HWT_SMMU_TLB_NH, .vmid = 1, .asid = v->asid,
						.addr = i << 12, .size_log2 = 12 };
		struct hwt_cmdq_cmd c;

		tst_cmd_tlbi_nh_va(c.dw, 1, v->asid, e.addr);
		v->err = hwt_smmu_dev_tlb_insert(v->dev, &e);
		if (!v->err)
			v->err = hwt_cmdq_issue_cmd_sync(v->q, &c);
		if (!v->err && hwt_smmu_dev_tlb_lookup(v->dev, HWT_SMMU_TLB_NH, 1, v->asid, e.addr))
			v->stale++;
	}
	return NULL;
}

static void invalidation_under_contention(bool disable_msi)
{
	struct hwt_smmu_dev_config dc;
	struct hwt_cmdq_options o;
	struct hwt_smmu_dev *dev;
	struct hwt_cmdq *q;
	struct inval v[4];
	pthread_t t[4];

	hwt_smmu_dev_config_default(&dc);
	dc.cmdqs = 7;
	ASSERT_OK(hwt_smmu_dev_create(&dev, &dc));
	hwt_cmdq_options_default(&o);
	o.disable_msipolling = disable_msi;
	o.timeout_ns = 20000000000ull;
	ASSERT_OK(hwt_cmdq_create(&q, dev, &o));
	ASSERT_OK(hwt_smmu_dev_start(dev));
	for (int i = 0; i < 4; i++) {
		v[i] = (struct inval){ q, dev, (uint16_t)(i + 1), 0, 0 };
		ASSERT_EQ(pthread_create(&t[i], NULL, invalidate, &v[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		ASSERT_OK(v[i].err);
		ASSERT_EQ(v[i].stale, 0);
	}
	hwt_smmu_dev_stop(dev);
	hwt_cmdq_destroy(q);
	hwt_smmu_dev_destroy(dev);
}

TEST_TIMEOUT(stress_invalidation_visible_msi, 120)
{
	invalidation_under_contention(false);
}

TEST_TIMEOUT(stress_invalidation_visible_cons, 120)
{
	invalidation_under_contention(true);
}

/* ---- faults injected mid-stream ------------------------------------------------------ */

#define POISON_OP 0x7f /* no such opcode: our handler reports it illegal */
#define ATC_OP 0x40    /* ATC_INV's opcode: arms the injected ATC timeout */

struct faults {
	struct run r;
	_Atomic unsigned poisons_issued, poisons_seen, ill_logs, abt_logs, atc_logs;
	_Atomic bool stop;
};

static int fault_handler(void *ctx, const uint64_t dw[2])
{
	struct faults *f = ctx;

	if ((dw[0] & 0xff) == POISON_OP) {
		atomic_fetch_add_explicit(&f->poisons_seen, 1, memory_order_relaxed);
		return HWT_SMMU_CERROR_ILL;
	}
	return handler(&f->r, (const uint64_t[2]){ STRESS_OP, dw[1] });
}

static void fault_log(void *ctx, const char *msg)
{
	struct faults *f = ctx;

	if (strstr(msg, "Illegal command"))
		atomic_fetch_add_explicit(&f->ill_logs, 1, memory_order_relaxed);
	else if (strstr(msg, "Abort on command fetch"))
		atomic_fetch_add_explicit(&f->abt_logs, 1, memory_order_relaxed);
	else if (strstr(msg, "ATC invalidate timeout"))
		atomic_fetch_add_explicit(&f->atc_logs, 1, memory_order_relaxed);
}

static void *fault_produce(void *arg)
{
	struct producer *pr = arg;
	struct faults *f = (struct faults *)pr->r;
	struct hwt_cmdq_cmd cmds[8];
	uint64_t seq = 0;

	/* at least 400 rounds, and on until both injected faults were seen */
	for (unsigned iter = 0; !pr->err && (iter < 400 || ((!f->abt_logs || !f->atc_logs) &&
							     iter < 1000000));
	     iter++) {
		bool sync = iter % 3 == 2;
		unsigned n = 0;

		for (unsigned i = 0; i < 7; i++, n++) {
			if ((iter * 7 + i) % 50 == 17) { /* a poisoned command, no sequence */
				cmds[n].dw[0] = POISON_OP;
				cmds[n].dw[1] = 0;
				atomic_fetch_add_explicit(&f->poisons_issued, 1, memory_order_relaxed);
				continue;
			}
			cmds[n].dw[0] = i == 3 ? ATC_OP : STRESS_OP;
			cmds[n].dw[1] = (uint64_t)pr->id << SEQ_BITS | seq++;
		}
		pr->err = hwt_cmdq_issue(f->r.q, cmds, n, sync);
		if (!pr->err && sync)
			check_synced(&f->r, pr->id, seq);
	}
	if (!pr->err)
		pr->err = hwt_cmdq_sync(f->r.q);
	if (!pr->err)
		check_synced(&f->r, pr->id, seq);
	atomic_store_explicit(&f->r.issued[pr->id], seq, memory_order_relaxed);
	return NULL;
}

static void *inject_faults(void *arg)
{
	struct faults *f = arg;

	while (!atomic_load_explicit(&f->stop, memory_order_relaxed)) {
		hwt_smmu_dev_inject(f->r.dev, HWT_SMMU_FAULT_ABT);
		hwt_smmu_dev_inject(f->r.dev, HWT_SMMU_FAULT_ATC_TIMEOUT);
		hwt__sleep_ns(300000);
	}
	return NULL;
}

static void faults_midstream(bool disable_msi)
{
	struct hwt_smmu_dev_config dc;
	struct hwt_smmu_dev_stats st;
	struct hwt_cmdq_options o;
	struct producer pr[4];
	pthread_t t[4], inj;
	struct faults *f = calloc(1, sizeof(*f));

	tst_why_init(&f->r.why);
	hwt_smmu_dev_config_default(&dc);
	dc.cmdqs = 7;
	dc.handler = fault_handler;
	dc.handler_ctx = f;
	ASSERT_OK(hwt_smmu_dev_create(&f->r.dev, &dc));
	hwt_cmdq_options_default(&o);
	o.disable_msipolling = disable_msi;
	o.timeout_ns = 20000000000ull;
	o.log = fault_log;
	o.log_ctx = f;
	ASSERT_OK(hwt_cmdq_create(&f->r.q, f->r.dev, &o));
	ASSERT_OK(hwt_smmu_dev_start(f->r.dev));
	ASSERT_EQ(pthread_create(&inj, NULL, inject_faults, f), 0);
	for (unsigned i = 0; i < 4; i++) {
		pr[i] = (struct producer){ &f->r, i, 0 };
		ASSERT_EQ(pthread_create(&t[i], NULL, fault_produce, &pr[i]), 0);
	}
	for (unsigned i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	atomic_store_explicit(&f->stop, true, memory_order_relaxed);
	pthread_join(inj, NULL);
	ASSERT_OK(hwt_cmdq_sync(f->r.q)); /* an ATC fault armed last fires here */
	hwt_smmu_dev_get_stats(f->r.dev, &st);
	hwt_smmu_dev_stop(f->r.dev);
	for (unsigned i = 0; i < 4; i++) {
		ASSERT_OK(pr[i].err);
		/* no command lost, none twice, in order (checked by the handler) */
		ASSERT_EQ(atomic_load_explicit(&f->r.executed[i], memory_order_relaxed),
			  atomic_load_explicit(&f->r.issued[i], memory_order_relaxed));
	}
	if (tst_why_first(&f->r.why))
		hwt_test_fail(__FILE__, __LINE__, "%s", tst_why_first(&f->r.why));
	/* every bad command was seen once and reported once */
	ASSERT_EQ(f->poisons_seen, f->poisons_issued);
	ASSERT_EQ(f->ill_logs, f->poisons_issued);
	ASSERT_EQ(st.errors, f->ill_logs + f->abt_logs + f->atc_logs);
	TLOG("%s: %u illegal, %u fetch aborts, %u ATC timeouts, %llu commands",
	     disable_msi ? "cons" : "msi", f->ill_logs, f->abt_logs, f->atc_logs,
	     (unsigned long long)st.cmds);
	ASSERT_GT(f->abt_logs, 0);
	ASSERT_GT(f->atc_logs, 0);
	hwt_cmdq_destroy(f->r.q);
	hwt_smmu_dev_destroy(f->r.dev);
	free(f);
}

TEST_TIMEOUT(stress_faults_midstream_msi, 120)
{
	faults_midstream(false);
}

TEST_TIMEOUT(stress_faults_midstream_cons, 120)
{
	faults_midstream(true);
}
