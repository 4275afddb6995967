/* SPDX-License-Identifier: MIT */
/*
 * The lookup chain: where each CPU's verdicts come from, in this order
 *
 *   1. an override (the options', else the environment's): every CPU at
 *      once, and then neither file is read
 *   2. the system file (hwtune probe --system; system.c)
 *   3. the user cache (cache.c)
 *   4. a measurement (waves.c)
 *
 * lookup() walks it, top to bottom; the entry points say which steps they
 * take: hwt_misaligned_probe 1 (options only), 3, 4; hwt_misaligned_cpus
 * and _self all four; hwt_misaligned_speed 2-4, its override read once per
 * process.  Each CPU's result is written once, into its slot of the report.
 */
#include "misaligned/misaligned.h"

#include "arch/arch.h"
#include "common/time.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KNOWN_FLAGS                                                                        \
	(HWT_MISALIGNED_SERIAL | HWT_MISALIGNED_KERNEL_WINDOW | HWT_MISALIGNED_SMT_APART |  \
	 HWT_MISALIGNED_NO_CACHE | HWT_MISALIGNED_REFRESH | HWT_MISALIGNED_NO_VECTOR)
#define FORCED (HWT__MISALIGNED_FORCE_SIGBUS | HWT__MISALIGNED_FORCE_VECTOR_TRAP)

/* Steps an entry point takes besides the options' override, the user cache
 * and the measurement. */
#define LOOK_ENV 0x1u    /* HWTUNE_UNALIGNED_{SCALAR,VECTOR}_SPEED as overrides */
#define LOOK_SYSTEM 0x2u /* the system file */

/* hwt__misaligned_test_hook's bits: set before any probe starts. */
static unsigned test_force;

void hwt__misaligned_test_hook(unsigned force)
{
	test_force = force & FORCED;
}

const char *hwt__misaligned_sysfs(const struct hwt_misaligned_opts *opts, char *buf, size_t len)
{
	if (opts->sysfs_root)
		return opts->sysfs_root;
	if (!opts->root)
		return NULL;
	snprintf(buf, len, "%s/sys/devices/system/cpu", opts->root);
	return buf;
}

bool hwt__misaligned_measures_vector(const struct hwt_misaligned_opts *opts)
{
	return !opts->vector_override_speed && !(opts->flags & HWT_MISALIGNED_NO_VECTOR);
}

/* One walk of the chain: the options it runs under and what is left. */
struct walk {
	struct hwt_misaligned_opts opts; /* the caller's, overrides and test hook applied */
	bool *todo;                      /* per slot of the report: still to find */
	unsigned ntodo;
	bool cache_on;                   /* the user cache is read and written */
	struct hwt__cache_key key;       /* ... under this key, */
	char path[4200];                 /* ... in this file, */
	struct hwt_misaligned_cpu *old;  /* ... which held these entries */
	unsigned nold;
};

static bool override_ok(enum hwt_misaligned_speed s)
{
	return s == HWT_MISALIGNED_UNKNOWN ||
	       (s >= HWT_MISALIGNED_SLOW && s <= HWT_MISALIGNED_UNSUPPORTED);
}

static bool overridden(const struct hwt_misaligned_opts *o)
{
	return o->override_speed || o->vector_override_speed;
}

/* The options of this walk: the caller's (NULL: defaults), checked, with
 * the environment's overrides (LOOK_ENV) and the test hook's bits. */
static int options(const struct hwt_misaligned_opts *given, unsigned look,
		   struct hwt_misaligned_opts *opts)
{
	int s;

	*opts = given ? *given : (struct hwt_misaligned_opts){ 0 };
	if (look & LOOK_ENV) {
		if (!opts->override_speed) {
			s = hwt_misaligned_env_override(NULL);
			if (s < 0)
				return s;
			opts->override_speed = s;
		}
		if (!opts->vector_override_speed) {
			s = hwt_misaligned_env_vector_override(NULL);
			if (s < 0)
				return s;
			opts->vector_override_speed = s;
		}
	}
	if ((opts->flags & ~KNOWN_FLAGS) || opts->budget_us > HWT_MISALIGNED_MAX_BUDGET_US ||
	    !override_ok(opts->override_speed) || !override_ok(opts->vector_override_speed))
		return -EINVAL;
	opts->flags |= test_force;
	return 0;
}

/* As the kernel's unaligned_vector_speed=: every unit set so without
 * probing, except a unit the architecture cannot have (AVX2, AVX-512 off
 * x86). */
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

/* Step 1: a slot per CPU of set, the overrides written into each; what is
 * not overridden is still to find. */
static int start(const struct hwt_cpus *set, struct walk *w, struct hwt_misaligned_report *out)
{
	const struct hwt_misaligned_opts *o = &w->opts;
	bool scalar = !o->override_speed, vector = hwt__misaligned_measures_vector(o);

	out->serial = o->flags & HWT_MISALIGNED_SERIAL;
	out->smt_apart = o->flags & HWT_MISALIGNED_SMT_APART;
	out->kernel_window = o->flags & HWT_MISALIGNED_KERNEL_WINDOW;
	out->budget_us = out->kernel_window ? 2 * HWT_MISALIGNED_KERNEL_WINDOW_NS / 1000
			 : o->budget_us	    ? o->budget_us
					    : HWT_MISALIGNED_DEFAULT_BUDGET_US;
	out->cpu = calloc(set->n, sizeof(*out->cpu));
	w->todo = malloc(set->n * sizeof(*w->todo));
	if (!out->cpu || !w->todo)
		return -ENOMEM;
	out->n = set->n;
	for (unsigned i = 0; i < set->n; i++) {
		struct hwt_misaligned_cpu *s = &out->cpu[i];

		s->cpu = set->cpu[i];
		s->align_faults = -1;
		s->hwprobe = -ENOSYS;
		s->vector.hwprobe = -ENOSYS;
		s->avx2.hwprobe = -ENOSYS;
		s->avx512.hwprobe = -ENOSYS;
		w->todo[i] = scalar || vector;
		if (o->override_speed) {
			s->speed = o->override_speed;
			s->source = HWT_MISALIGNED_FROM_OVERRIDE;
		}
		if (o->vector_override_speed) {
			set_vector_override(&s->vector, HWT__VEC_MAIN, o->vector_override_speed);
			set_vector_override(&s->avx2, HWT__VEC_WIDE, o->vector_override_speed);
			set_vector_override(&s->avx512, HWT__VEC_WIDE512, o->vector_override_speed);
			s->vector_source = HWT_MISALIGNED_FROM_OVERRIDE;
		} else if (!vector) {
			s->vector.notes = s->avx2.notes = s->avx512.notes = HWT_MISALIGNED_NOTE_SKIPPED;
		}
	}
	w->ntodo = scalar || vector ? set->n : 0;
	if (o->override_speed)
		out->source = HWT_MISALIGNED_FROM_OVERRIDE;
	/* Any override, or a partial probe, reads neither file: both hold
	 * whole measurements (scalar and vector results). */
	out->cache_off = overridden(o) || !vector;
	return 0;
}

static void found(struct walk *w, struct hwt_misaligned_report *out, unsigned i,
		  const struct hwt_misaligned_cpu *e)
{
	out->cpu[i] = *e;
	w->todo[i] = false;
	w->ntodo--;
}

/* Step 2: the system file's entries for the CPUs still to find. */
static int from_system(struct walk *w, struct hwt_misaligned_report *out)
{
	const struct hwt_misaligned_opts *o = &w->opts;
	struct hwt_misaligned_report sys = { 0 };

	out->system_status = hwt_misaligned_system_read(o->runtime_dir, o->root, &sys);
	if (out->system_status == -ENOMEM)
		return -ENOMEM;
	/* the slots and the file's entries are both ascending (the writer's
	 * order; an entry out of order is only missed, and then probed) */
	for (unsigned i = 0, k = 0; i < out->n; i++) {
		while (k < sys.n && sys.cpu[k].cpu < out->cpu[i].cpu)
			k++;
		if (k < sys.n && sys.cpu[k].cpu == out->cpu[i].cpu && w->todo[i])
			found(w, out, i, &sys.cpu[k]);
	}
	hwt_misaligned_report_free(&sys);
	if (!w->ntodo) {
		/* Every CPU from the file: no probe ran, and the budget is
		 * the one a probe would have used, as a cached report says. */
		out->source = HWT_MISALIGNED_FROM_SYSTEM;
		out->serial = out->smt_apart = out->kernel_window = false;
		out->budget_us = o->budget_us ? o->budget_us : HWT_MISALIGNED_DEFAULT_BUDGET_US;
		out->cache_off = true;
	}
	return 0;
}

/* Step 3: the user cache's entries for the CPUs still to find.  Loaded
 * even to refresh: other CPUs' entries are kept when it is rewritten. */
static int from_cache(struct walk *w, struct hwt_misaligned_report *out)
{
	const struct hwt_misaligned_opts *o = &w->opts;
	int r;

	w->cache_on = !(o->flags & (HWT_MISALIGNED_NO_CACHE | FORCED));
	if (w->cache_on) {
		/* off for a reason (no boot id, no usable cache folder): say it */
		r = hwt__cache_key_current(&w->key);
		if (!r)
			r = hwt__cache_path(o->cache_dir, w->path, sizeof(w->path));
		if (r)
			out->cache_status = r, w->cache_on = false;
	}
	out->cache_off = !w->cache_on;
	if (!w->cache_on)
		return 0;
	r = hwt__cache_load(w->path, &w->key, &w->old, &w->nold);
	if (r == -ENOMEM)
		return r;
	out->cache_status = r == -ENOENT ? 0 : r;
	if (r || (o->flags & HWT_MISALIGNED_REFRESH))
		return 0;
	for (unsigned k = 0; k < w->nold; k++) {
		struct hwt_misaligned_cpu *s = hwt__misaligned_slot(out, w->old[k].cpu);

		if (s && w->todo[s - out->cpu])
			found(w, out, (unsigned)(s - out->cpu), &w->old[k]);
	}
	return 0;
}

/* After step 4: the cache keeps its entries for CPUs it did not answer
 * here and takes this walk's known results (not the system file's, not an
 * override's).  Best effort: a cache is optional. */
static void to_cache(struct walk *w, const struct hwt_misaligned_report *r)
{
	struct hwt_misaligned_cpu *all = malloc((r->n + w->nold) * sizeof(*all));
	unsigned n = 0;

	if (!all)
		return;
	for (unsigned k = 0; k < w->nold; k++) {
		const struct hwt_misaligned_cpu *s = hwt__misaligned_slot(r, w->old[k].cpu);

		if (!s || s->source == HWT_MISALIGNED_FROM_SYSTEM)
			all[n++] = w->old[k];
	}
	for (unsigned i = 0; i < r->n; i++)
		if (r->cpu[i].status == 0 && r->cpu[i].source != HWT_MISALIGNED_FROM_OVERRIDE &&
		    r->cpu[i].source != HWT_MISALIGNED_FROM_SYSTEM)
			all[n++] = r->cpu[i];
	hwt__cache_store(w->path, &w->key, all, n);
	free(all);
}

/* The chain, for each CPU of set (NULL: the calling thread's allowed CPUs). */
static int lookup(const struct hwt_cpus *set, const struct hwt_misaligned_opts *given,
		  unsigned look, struct hwt_misaligned_report *out)
{
	struct hwt_cpus own = HWT_CPUS_INIT;
	struct walk w = { .todo = NULL };
	bool measured = false;
	int r;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	r = options(given, look, &w.opts);
	if (!r && !set) {
		r = hwt_cpu_allowed(&own);
		set = &own;
	}
	if (!r && (set->n == 0 || set->n > INT_MAX / 2))
		r = -EINVAL;
	if (r)
		goto out;

	r = start(set, &w, out);                                       /* 1. override */
	if (!r && w.ntodo && (look & LOOK_SYSTEM) && !overridden(&w.opts) &&
	    !(w.opts.flags & (HWT_MISALIGNED_NO_CACHE | HWT_MISALIGNED_REFRESH |
			      HWT_MISALIGNED_NO_VECTOR | FORCED)))
		r = from_system(&w, out);                              /* 2. system file */
	if (!r && w.ntodo && !out->cache_off)
		r = from_cache(&w, out);                               /* 3. user cache */
	if (!r && w.ntodo) {
		r = hwt__misaligned_measure_set(out, w.todo, &w.opts); /* 4. measure */
		measured = !r;
	}
	if (r)
		goto out;

	if (!w.opts.override_speed && out->source != HWT_MISALIGNED_FROM_SYSTEM)
		out->source = measured ? HWT_MISALIGNED_MEASURED : HWT_MISALIGNED_FROM_CACHE;
	if (w.cache_on && (measured || out->cache_status))
		to_cache(&w, out);
	hwt__misaligned_summarize(out);
out:
	free(w.old);
	free(w.todo);
	hwt_cpus_free(&own);
	if (r)
		hwt_misaligned_report_free(out);
	return r;
}

HWT_API int hwt_misaligned_probe(const struct hwt_cpus *set, const struct hwt_misaligned_opts *opts,
				 struct hwt_misaligned_report *out)
{
	uint64_t t0 = hwt__now_ns();
	int r = lookup(set, opts, 0, out);

	if (!r)
		out->wall_ns = hwt__now_ns() - t0;
	return r;
}

HWT_API int hwt_misaligned_cpus(const struct hwt_cpus *set, const struct hwt_misaligned_opts *opts,
				struct hwt_misaligned_report *out)
{
	struct hwt_cpus allowed = HWT_CPUS_INIT;
	uint64_t t0 = hwt__now_ns();
	int r = 0;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (set) {
		/* only CPUs this thread may run on: the others cannot be probed */
		r = set->n && set->cpu ? hwt_cpu_allowed(&allowed) : -EINVAL;
		for (unsigned i = 0; i < set->n && !r; i++)
			if (!hwt_cpus_has(&allowed, set->cpu[i]))
				r = -EINVAL;
		hwt_cpus_free(&allowed);
	}
	if (!r)
		r = lookup(set, opts, LOOK_ENV | LOOK_SYSTEM, out);
	if (!r)
		out->wall_ns = hwt__now_ns() - t0;
	return r;
}

HWT_API int hwt_misaligned_self(const struct hwt_misaligned_opts *opts,
				struct hwt_misaligned_report *out)
{
	return hwt_misaligned_cpus(NULL, opts, out);
}

HWT_API void hwt_misaligned_report_free(struct hwt_misaligned_report *r)
{
	if (!r)
		return;
	free(r->cpu);
	r->cpu = NULL;
	r->n = 0;
}

/* Each CPU's verdict for the process: 0 not yet known, else speed + 1;
 * NOT_PROBED for a CPU that could not be probed (left out of the rule). */
#define NOT_PROBED 0xffu
static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char memo[HWT_CPU_ID_MAX + 1]; /* under memo_lock */
static bool env_read;                          /* under memo_lock */
static int env_speed;                          /* under memo_lock */

HWT_API int hwt_misaligned_speed(void)
{
	struct hwt_cpus set = HWT_CPUS_INIT, missing = HWT_CPUS_INIT;
	struct hwt_misaligned_report rep;
	int r, answer = -1;

	r = hwt_cpu_allowed(&set);
	if (r)
		return r;
	pthread_mutex_lock(&memo_lock);
	if (!env_read) {
		env_speed = hwt_misaligned_env_override(NULL); /* a speed, 0, or -EINVAL */
		env_read = true;
	}
	if (env_speed) {
		r = env_speed;
		goto out;
	}
	for (unsigned i = 0; i < set.n && !r; i++)
		if (!memo[set.cpu[i]])
			r = hwt_cpus_add(&missing, set.cpu[i]);
	if (!r && missing.n) {
		r = lookup(&missing, NULL, LOOK_SYSTEM, &rep);
		for (unsigned i = 0; !r && i < rep.n; i++)
			memo[rep.cpu[i].cpu] = rep.cpu[i].status ? NOT_PROBED
								 : (unsigned char)(rep.cpu[i].speed + 1);
		if (!r)
			hwt_misaligned_report_free(&rep);
	}
	if (r)
		goto out;
	/* hwprobe's set rule over the CPUs that were probed */
	for (unsigned i = 0; i < set.n; i++) {
		unsigned m = memo[set.cpu[i]];

		if (m == NOT_PROBED)
			continue;
		if (answer < 0)
			answer = (int)m - 1;
		else if (answer != (int)m - 1)
			answer = HWT_MISALIGNED_UNKNOWN;
	}
	r = answer < 0 ? HWT_MISALIGNED_UNKNOWN : answer;
out:
	pthread_mutex_unlock(&memo_lock);
	hwt_cpus_free(&set);
	hwt_cpus_free(&missing);
	return r;
}
