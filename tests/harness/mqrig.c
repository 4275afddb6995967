/* SPDX-License-Identifier: MIT */
/* Several command queues on a recording software SMMU (mqrig.h). */
#include "harness/mqrig.h"
#include "harness/harness.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmdq/impl.h"
#include "device/impl.h"

static unsigned queue_of(struct mqrig *r, const void *p)
{
	for (unsigned i = 0; i < r->nq && i < MQRIG_MAXQ; i++)
		if ((const char *)p >= r->qmem[i] && (const char *)p < r->qmem[i] + r->qbytes)
			return i;
	return MQRIG_MAXQ;
}

static int exec_one(struct mqrig *r, const uint64_t dw[2], unsigned qi)
{
	unsigned op = dw[0] & 0xff, p = (unsigned)(dw[1] >> MQRIG_SEQ_BITS);
	uint64_t seq = dw[1] & ((1ull << MQRIG_SEQ_BITS) - 1), bit, old;

	if (op == MQRIG_GATE) {
		atomic_fetch_add_explicit(&r->gate_tries, 1, memory_order_relaxed);
		if (atomic_load_explicit(&r->gate, memory_order_acquire))
			return HWT_SMMU_CERROR_ABT;
		atomic_fetch_add_explicit(&r->gate_passed, 1, memory_order_relaxed);
		return HWT_SMMU_CERROR_NONE;
	}
	if (op != MQRIG_OP || p >= MQRIG_MAXP || seq >= r->cap || !r->seen[p]) {
		tst_note(&r->why, "foreign command 0x%016llx 0x%016llx", (unsigned long long)dw[0],
			  (unsigned long long)dw[1]);
		return HWT_SMMU_CERROR_NONE;
	}
	bit = 1ull << (seq % 64);
	old = atomic_load_explicit(&r->seen[p][seq / 64], memory_order_relaxed);
	if (old & bit)
		tst_note(&r->why, "producer %u: seq %llu executed twice", p, (unsigned long long)seq);
	atomic_store_explicit(&r->seen[p][seq / 64], old | bit, memory_order_relaxed);
	if (qi < MQRIG_MAXQ) {
		if (seq < r->next[p][qi])
			tst_note(&r->why, "producer %u: seq %llu on queue %u after seq %llu", p,
				  (unsigned long long)seq, qi, (unsigned long long)r->next[p][qi] - 1);
		r->next[p][qi] = seq + 1;
		atomic_fetch_add_explicit(&r->per_queue[qi], 1, memory_order_relaxed);
	} else {
		tst_note(&r->why, "producer %u: seq %llu not from queue memory", p, (unsigned long long)seq);
	}
	atomic_store_explicit(&r->executed[p],
			      atomic_load_explicit(&r->executed[p], memory_order_relaxed) + 1,
			      memory_order_relaxed);
	return HWT_SMMU_CERROR_NONE;
}

static int exec_batch(void *ctx, const uint64_t (*cmds)[2], unsigned n, unsigned *done)
{
	struct mqrig *r = ctx;
	unsigned qi = queue_of(r, cmds);

	for (unsigned i = 0; i < n; i++) {
		int e = exec_one(r, cmds[i], qi);

		if (e) {
			*done = i;
			return e;
		}
	}
	return HWT_SMMU_CERROR_NONE;
}

void mqrig_up(struct mqrig *r, const struct mqrig_opt *opt)
{
	struct hwt_smmu_dev_config dc;
	struct hwt_cmdq_options o;
	unsigned shift = opt->shift ? opt->shift : 8;

	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->log.lock, NULL);
	tst_why_init(&r->why);
	r->cap = opt->cap ? opt->cap : 1u << 16;
	for (unsigned p = 0; p < MQRIG_MAXP; p++) {
		r->seen[p] = calloc((r->cap + 63) / 64, sizeof(*r->seen[p]));
		ASSERT_TRUE(r->seen[p]);
	}
	hwt_smmu_dev_config_default(&dc);
	dc.idr0 = opt->idr0 ? opt->idr0 : ALL_FEATURES;
	dc.cmdqs = shift > 8 ? shift : 8;
	dc.handler_batch = exec_batch;
	dc.handler_ctx = r;
	ASSERT_OK(hwt__dev_create_nq(&r->dev, &dc, opt->per_cpu ? HWT__NUMQ_MAX : opt->numq));
	hwt_cmdq_options_default(&o);
	o.entries_log2 = shift;
	o.disable_msipolling = opt->disable_msi;
	o.timeout_ns = opt->timeout_ns ? opt->timeout_ns : 1000000000ull;
	o.queues = opt->per_cpu ? HWT_CMDQ_QUEUES_PER_CPU : opt->queues;
	o.log = log_hook;
	o.log_ctx = &r->log;
	ASSERT_OK(hwt_cmdq_create(&r->q, r->dev, &o));
	r->nq = r->q->nq;
	r->qbytes = (size_t)16 << shift;
	for (unsigned i = 0; i < r->nq && i < MQRIG_MAXQ; i++)
		r->qmem[i] = (const char *)(r->nq > 1 ? r->q->sub[i]->mem : r->q->mem);
	if (!opt->no_start)
		ASSERT_OK(hwt_smmu_dev_start(r->dev));
}

void mqrig_down(struct mqrig *r)
{
	hwt_smmu_dev_stop(r->dev);
	hwt_cmdq_destroy(r->q);
	hwt_smmu_dev_destroy(r->dev);
	for (unsigned p = 0; p < MQRIG_MAXP; p++)
		free(r->seen[p]);
}

void mqrig_cmds(struct mqrig *r, unsigned p, uint64_t seq, struct hwt_cmdq_cmd *cmds, unsigned n)
{
	(void)r;
	for (unsigned i = 0; i < n; i++) {
		cmds[i].dw[0] = MQRIG_OP;
		cmds[i].dw[1] = (uint64_t)p << MQRIG_SEQ_BITS | (seq + i);
	}
}

void mqrig_gate_cmd(struct hwt_cmdq_cmd *c)
{
	c->dw[0] = MQRIG_GATE;
	c->dw[1] = 0;
}

bool mqrig_done(struct mqrig *r, unsigned p, uint64_t seq)
{
	return atomic_load_explicit(&r->seen[p][seq / 64], memory_order_relaxed) & 1ull << (seq % 64);
}

const char *mqrig_violation(struct mqrig *r)
{
	return tst_why_first(&r->why);
}

unsigned mqrig_ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	return n > 0 ? (unsigned)n : 1;
}

bool mqrig_pin(unsigned cpu)
{
	return hwt_test_pin(pthread_self(), (int)cpu) == 0 && sched_getcpu() == (int)cpu;
}

static _Atomic unsigned moved_left;
static _Atomic bool pin_refused; /* relaxed: a switch the test thread sets and reads */
static _Thread_local bool lib_pinned; /* the library's pin since this thread's last publish */

static int moved_insert(struct hwt__rseq_ring *rings, unsigned n, const void *ents, uint32_t k,
			unsigned *cpu, uint32_t *prod)
{
	unsigned v = atomic_load_explicit(&moved_left, memory_order_relaxed);

	/* relaxed: a count of test calls, ordered by nothing else */
	while (v && v != ~0u &&
	       !atomic_compare_exchange_weak_explicit(&moved_left, &v, v - 1, memory_order_relaxed,
						      memory_order_relaxed))
		;
	return hwt__rseq_insert(rings, n, ents, k | (v ? HWT__RSEQ_K_NO_PUBLISH : 0), cpu, prod);
}

/* As from another CPU until the library has pinned the thread (to that CPU:
 * the real publish says MOVED otherwise). */
static int offcpu_publish(struct hwt__rseq_ring *rings, unsigned n, unsigned cpu)
{
	if (!lib_pinned)
		return HWT__RSEQ_MOVED;
	lib_pinned = false;
	return hwt__rseq_publish(rings, n, cpu);
}

static int maybe_pin(unsigned cpu)
{
	int err;

	if (atomic_load_explicit(&pin_refused, memory_order_relaxed))
		return EINVAL;
	err = hwt_test_pin(pthread_self(), (int)cpu);
	if (!err)
		lib_pinned = true;
	return err;
}

void mqrig_moved(struct mqrig *r, unsigned n)
{
	atomic_store_explicit(&moved_left, n, memory_order_relaxed);
	hwt__cmdq_rseq_steps(r->q, moved_insert, offcpu_publish, maybe_pin);
}

void mqrig_nopin(bool on)
{
	atomic_store_explicit(&pin_refused, on, memory_order_relaxed);
}

void mqrig_need_cpus(unsigned n)
{
	if (mqrig_ncpus() < n || !mqrig_pin(n - 1) || !mqrig_pin(0))
		SKIP("needs %u CPUs this process may run on", n);
}

void mqrig_up_rseq(struct mqrig *r, const struct mqrig_opt *opt)
{
	struct hwt_cmdq_info info;

	mqrig_need_cpus(2);
	ASSERT_TRUE(r);
	mqrig_up(r, opt);
	hwt_cmdq_get_info(r->q, &info);
	if (strcmp(info.insert_path, "rseq")) {
		char why[sizeof(info.insert_path) + sizeof(info.insert_path_reason) + 16];

		snprintf(why, sizeof(why), "%s path here (%s)", info.insert_path,
			 info.insert_path_reason);
		mqrig_down(r);
		free(r);
		SKIP("%s", why);
	}
}
