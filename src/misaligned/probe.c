/* SPDX-License-Identifier: MIT */
/*
 * The probe of a CPU set: override, cache, then every remaining CPU at once
 * (or one after another, or SMT siblings in separate waves), then the cache
 * again.  Each probing thread writes only its own result slot; the results
 * are read after hwt_cpu_on_each() has joined the threads.
 */
#include "misaligned/misaligned.h"

#include "arch/arch.h"
#include "common/time.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KNOWN_FLAGS                                                                        \
	(HWT_MISALIGNED_SERIAL | HWT_MISALIGNED_KERNEL_WINDOW | HWT_MISALIGNED_SMT_APART |  \
	 HWT_MISALIGNED_NO_CACHE | HWT_MISALIGNED_REFRESH | HWT_MISALIGNED_NO_VECTOR |     \
	 HWT__MISALIGNED_FORCE_SIGBUS | HWT__MISALIGNED_FORCE_VECTOR_TRAP)

struct ctx {
	struct hwt_misaligned_report *rep;
	struct hwt__measure_cfg cfg;
};

static struct hwt_misaligned_cpu *slot(struct hwt_misaligned_report *r, int cpu)
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
	struct hwt_misaligned_cpu *s = slot(c->rep, cpu);

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
				struct hwt_misaligned_cpu *s = slot(r, sib.cpu[j]);

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
			struct hwt_misaligned_cpu *s = slot(r, set.cpu[k]);
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

static void fill_from_cache(struct hwt_misaligned_report *r, const struct hwt_misaligned_cpu *e,
			    unsigned n, bool *todo)
{
	for (unsigned i = 0; i < n; i++) {
		struct hwt_misaligned_cpu *s = slot(r, e[i].cpu);

		if (s) {
			*s = e[i];
			todo[s - r->cpu] = false;
		}
	}
}

static bool override_ok(enum hwt_misaligned_speed s)
{
	return s == HWT_MISALIGNED_UNKNOWN ||
	       (s >= HWT_MISALIGNED_SLOW && s <= HWT_MISALIGNED_UNSUPPORTED);
}

/* As the kernel's unaligned_vector_speed=: every unit set so without
 * probing, except a unit the architecture cannot have (AVX2 off x86). */
static void set_vector_override(struct hwt_misaligned_vector *v, unsigned kind,
				enum hwt_misaligned_speed speed)
{
	struct hwt__vec_loops l = { NULL, NULL, NULL, NULL };
	int r = hwt__vec_get(kind, &l);

	v->unit = l.name;
	if (r == -ENODEV) {
		v->speed = HWT_MISALIGNED_UNSUPPORTED;
		v->notes = HWT_MISALIGNED_NOTE_NO_UNIT;
		v->unit = NULL;
		return;
	}
	v->speed = speed;
}

/* Old entries for CPUs outside this set, plus this set's known results. */
static void update_cache(struct hwt_misaligned_report *r, const char *path,
			 const struct hwt__cache_key *key, const struct hwt_misaligned_cpu *old,
			 unsigned nold)
{
	struct hwt_misaligned_cpu *all = malloc((r->n + nold) * sizeof(*all));
	unsigned n = 0;

	if (!all)
		return;
	for (unsigned i = 0; i < nold; i++)
		if (!slot(r, old[i].cpu))
			all[n++] = old[i];
	for (unsigned j = 0; j < r->n; j++)
		if (r->cpu[j].status == 0 && r->cpu[j].source != HWT_MISALIGNED_FROM_OVERRIDE)
			all[n++] = r->cpu[j];
	hwt__cache_store(path, key, all, n); /* best effort: a cache is optional */
	free(all);
}

HWT_API int hwt_misaligned_probe(const struct hwt_cpus *set, const struct hwt_misaligned_opts *opts,
				 struct hwt_misaligned_report *out)
{
	static const struct hwt_misaligned_opts defaults;
	uint64_t t0 = hwt__now_ns();
	struct hwt_cpus own = HWT_CPUS_INIT;
	struct hwt_misaligned_cpu *cached = NULL;
	struct hwt__cache_key key;
	char path[4200];
	unsigned ncached = 0, nwaves = 1, ntodo = 0;
	bool cache_on, measured = false, *todo = NULL;
	const char *seam = getenv("HWTUNE_TEST_FORCE_SIGBUS");
	const char *vseam = getenv("HWTUNE_TEST_FORCE_VECTOR_TRAP");
	bool need_scalar, need_vector;
	unsigned flags;
	struct ctx c;
	int ret;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!opts)
		opts = &defaults;
	flags = opts->flags | (seam && *seam && strcmp(seam, "0") ? HWT__MISALIGNED_FORCE_SIGBUS : 0) |
		(vseam && *vseam && strcmp(vseam, "0") ? HWT__MISALIGNED_FORCE_VECTOR_TRAP : 0);
	if ((opts->flags & ~KNOWN_FLAGS) || opts->budget_us > HWT_MISALIGNED_MAX_BUDGET_US ||
	    !override_ok(opts->override_speed) || !override_ok(opts->vector_override_speed))
		return -EINVAL;
	need_scalar = !opts->override_speed;
	need_vector = !opts->vector_override_speed && !(flags & HWT_MISALIGNED_NO_VECTOR);
	if (!set) {
		ret = hwt_cpu_allowed(&own);
		if (ret)
			return ret;
		set = &own;
	}
	if (set->n == 0 || set->n > INT_MAX / 2) {
		ret = -EINVAL;
		goto fail;
	}

	out->serial = opts->flags & HWT_MISALIGNED_SERIAL;
	out->smt_apart = opts->flags & HWT_MISALIGNED_SMT_APART;
	out->kernel_window = opts->flags & HWT_MISALIGNED_KERNEL_WINDOW;
	out->budget_us = out->kernel_window ? 2 * HWT_MISALIGNED_KERNEL_WINDOW_NS / 1000
			 : opts->budget_us  ? opts->budget_us
					    : HWT_MISALIGNED_DEFAULT_BUDGET_US;
	out->cpu = calloc(set->n, sizeof(*out->cpu));
	todo = malloc(set->n * sizeof(*todo));
	if (!out->cpu || !todo) {
		ret = -ENOMEM;
		goto fail;
	}
	out->n = set->n;
	for (unsigned i = 0; i < set->n; i++) {
		struct hwt_misaligned_cpu *s = &out->cpu[i];

		s->cpu = set->cpu[i];
		s->align_faults = -1;
		s->hwprobe = -ENOSYS;
		s->vector.hwprobe = -ENOSYS;
		s->avx2.hwprobe = -ENOSYS;
		todo[i] = need_scalar || need_vector;
		if (opts->override_speed) {
			s->speed = opts->override_speed;
			s->source = HWT_MISALIGNED_FROM_OVERRIDE;
		}
		if (opts->vector_override_speed) {
			set_vector_override(&s->vector, HWT__VEC_MAIN, opts->vector_override_speed);
			set_vector_override(&s->avx2, HWT__VEC_WIDE, opts->vector_override_speed);
			s->vector_source = HWT_MISALIGNED_FROM_OVERRIDE;
		} else if (!need_vector) {
			s->vector.notes = s->avx2.notes = HWT_MISALIGNED_NOTE_SKIPPED;
		}
	}
	if (opts->override_speed)
		out->source = HWT_MISALIGNED_FROM_OVERRIDE;
	/* Any override, or a partial probe, neither reads nor writes the
	 * cache: its entries always hold measured scalar and vector results. */
	if (opts->override_speed || !need_vector) {
		out->cache_off = true;
		if (!need_scalar && !need_vector)
			goto done;
		cache_on = false;
		goto probe;
	}

	cache_on = !(flags & (HWT_MISALIGNED_NO_CACHE | HWT__MISALIGNED_FORCE_SIGBUS |
			      HWT__MISALIGNED_FORCE_VECTOR_TRAP));
	if (cache_on) {
		/* off for a reason (no boot id, no usable cache folder): say it */
		ret = hwt__cache_key_current(&key);
		if (!ret)
			ret = hwt__cache_path(opts->cache_dir, path, sizeof(path));
		if (ret)
			out->cache_status = ret, cache_on = false;
	}
	out->cache_off = !cache_on;
	if (cache_on) {
		/* Loaded even to refresh: other CPUs' entries are kept on rewrite. */
		ret = hwt__cache_load(path, &key, &cached, &ncached);
		if (ret == -ENOMEM)
			goto fail;
		out->cache_status = ret == -ENOENT ? 0 : ret;
		if (!ret && !(opts->flags & HWT_MISALIGNED_REFRESH))
			fill_from_cache(out, cached, ncached, todo);
	}

probe:
	for (unsigned i = 0; i < set->n; i++)
		ntodo += todo[i];
	if (ntodo) {
		c.rep = out;
		c.cfg.budget_ns = (uint64_t)out->budget_us * 1000;
		c.cfg.kernel_window = out->kernel_window;
		c.cfg.force_sigbus = flags & HWT__MISALIGNED_FORCE_SIGBUS;
		c.cfg.scalar = need_scalar;
		c.cfg.vector = need_vector;
		c.cfg.force_vector_trap = flags & HWT__MISALIGNED_FORCE_VECTOR_TRAP;
		c.cfg.line_bytes = 0;
		if (need_vector) {
			long l = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);

			c.cfg.line_bytes = l > 0 && l <= 4096 ? (unsigned)l : 64;
		}
		if (out->smt_apart)
			assign_waves(out, todo, opts->sysfs_root, &nwaves);
		ret = hwt__fault_guard_enter();
		if (ret)
			goto fail;
		ret = run_waves(out, todo, nwaves, &c);
		hwt__fault_guard_leave();
		if (ret)
			goto fail;
		measured = true;
	}
	if (!opts->override_speed)
		out->source = measured ? HWT_MISALIGNED_MEASURED : HWT_MISALIGNED_FROM_CACHE;
	if (cache_on && (measured || out->cache_status))
		update_cache(out, path, &key, cached, ncached);
done:
	out->summary = hwt_misaligned_summary(out->cpu, out->n);
	out->vector_summary = hwt_misaligned_vector_summary(out->cpu, out->n, false);
	out->avx2_summary = hwt_misaligned_vector_summary(out->cpu, out->n, true);
	free(cached);
	free(todo);
	hwt_cpus_free(&own);
	out->wall_ns = hwt__now_ns() - t0;
	return 0;
fail:
	free(cached);
	free(todo);
	hwt_cpus_free(&own);
	hwt_misaligned_report_free(out);
	return ret;
}

HWT_API void hwt_misaligned_report_free(struct hwt_misaligned_report *r)
{
	if (!r)
		return;
	free(r->cpu);
	r->cpu = NULL;
	r->n = 0;
}
