/* SPDX-License-Identifier: MIT */
/*
 * The last step of the lookup chain: measure the CPUs still to find, all at
 * once (or one after another, or SMT siblings in separate waves), each on a
 * thread pinned to it.  Neither a file nor the environment is read here.
 * Each probing thread writes only its own result slot; the results are read
 * after hwt_cpu_on_each() has joined the threads.
 */
#include "misaligned/misaligned.h"

#include "arch/arch.h"
#include "common/time.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ctx {
	struct hwt_misaligned_report *rep;
	struct hwt__measure_cfg cfg;
};

struct hwt_misaligned_cpu *hwt__misaligned_slot(const struct hwt_misaligned_report *r, int cpu)
{
	unsigned lo = 0, hi = r->n;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (r->cpu[mid].cpu == cpu)
			return &r->cpu[mid];
		if (r->cpu[mid].cpu < cpu)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void probe_one(int cpu, void *arg)
{
	struct ctx *c = arg;
	struct hwt_misaligned_cpu *s = hwt__misaligned_slot(c->rep, cpu);

	if (s)
		hwt__misaligned_measure(cpu, &c->cfg, s);
}

/* Wave of each CPU still to probe: its rank among its SMT siblings that are
 * also to be probed, so no two siblings share a wave. */
static void assign_waves(struct hwt_misaligned_report *r, const bool *todo, const char *root,
			 unsigned *nwaves)
{
	struct hwt_cpus sib = HWT_CPUS_INIT;

	*nwaves = 0;
	for (unsigned i = 0; i < r->n; i++) {
		unsigned rank = 0;

		if (!todo[i])
			continue;
		if (hwt_cpu_smt_siblings(root, r->cpu[i].cpu, &sib) == 0) {
			for (unsigned j = 0; j < sib.n && sib.cpu[j] < r->cpu[i].cpu; j++) {
				struct hwt_misaligned_cpu *s = hwt__misaligned_slot(r, sib.cpu[j]);

				rank += s && todo[s - r->cpu];
			}
		}
		r->cpu[i].wave = rank;
		if (rank + 1 > *nwaves)
			*nwaves = rank + 1;
	}
	hwt_cpus_free(&sib);
}

static int run_waves(struct hwt_misaligned_report *r, const bool *todo, unsigned nwaves,
		     struct ctx *c)
{
	enum hwt_cpu_run_mode mode = r->serial ? HWT_CPU_RUN_SERIAL : HWT_CPU_RUN_PARALLEL;
	int *status = malloc(r->n * sizeof(*status));
	struct hwt_cpus set = HWT_CPUS_INIT;
	int ret = 0;

	if (!status)
		return -ENOMEM;
	for (unsigned w = 0; w < nwaves && !ret; w++) {
		int n;

		set.n = 0;
		for (unsigned i = 0; i < r->n && !ret; i++)
			if (todo[i] && r->cpu[i].wave == w)
				ret = hwt_cpus_add(&set, r->cpu[i].cpu);
		if (ret || !set.n)
			break;
		n = hwt_cpu_on_each(&set, mode, probe_one, c, status);
		for (unsigned k = 0; k < set.n; k++) {
			struct hwt_misaligned_cpu *s = hwt__misaligned_slot(r, set.cpu[k]);
			int st = n < 0 ? n : status[k];

			if (st && s->status == 0) {
				s->status = st;
				s->speed = HWT_MISALIGNED_UNKNOWN;
			}
		}
		r->waves++;
	}
	hwt_cpus_free(&set);
	free(status);
	return ret;
}

int hwt__misaligned_measure_set(struct hwt_misaligned_report *r, const bool *todo,
				const struct hwt_misaligned_opts *opts)
{
	char sysfs[4200];
	unsigned nwaves = 1;
	struct ctx c;
	int ret;

	c.rep = r;
	c.cfg.budget_ns = (uint64_t)r->budget_us * 1000;
	c.cfg.kernel_window = r->kernel_window;
	c.cfg.force_sigbus = opts->flags & HWT__MISALIGNED_FORCE_SIGBUS;
	c.cfg.scalar = !opts->override_speed;
	c.cfg.vector = hwt__misaligned_measures_vector(opts);
	c.cfg.force_vector_trap = opts->flags & HWT__MISALIGNED_FORCE_VECTOR_TRAP;
	c.cfg.line_bytes = 0;
	if (c.cfg.vector) {
		long l = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);

		c.cfg.line_bytes = l > 0 && l <= 4096 ? (unsigned)l : 64;
	}
	if (r->smt_apart)
		assign_waves(r, todo, hwt__misaligned_sysfs(opts, sysfs, sizeof(sysfs)), &nwaves);
	ret = hwt__fault_guard_enter();
	if (ret)
		return ret;
	ret = run_waves(r, todo, nwaves, &c);
	hwt__fault_guard_leave();
	return ret;
}
