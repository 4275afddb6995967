/* SPDX-License-Identifier: MIT */
/*
 * CPU sets, topology from sysfs, and running a function on each CPU.
 *
 * A struct hwt_cpus is a sorted set of CPU numbers without duplicates.
 * Initialise it with HWT_CPUS_INIT (or zero it) and release it with
 * hwt_cpus_free().  Functions that fill one replace its contents.
 * sysfs_root NULL means "/sys/devices/system/cpu"; tests pass a fake tree.
 */
#ifndef HWTUNE_CPU_H
#define HWTUNE_CPU_H

#include <stdbool.h>
#include <stddef.h>

#include "hwtune/api.h"

HWT_BEGIN_DECLS

struct hwt_cpus {
	unsigned n;   /* number of CPUs in the set */
	unsigned cap; /* allocated slots in cpu[] */
	int *cpu;     /* ascending CPU numbers */
};
#define HWT_CPUS_INIT { 0, 0, NULL }
/* Largest CPU number a set accepts (8x the biggest NR_CPUS Linux allows);
 * bounds the memory a list such as "0-99999999" could otherwise ask for. */
#define HWT_CPU_ID_MAX 65535

HWT_API void hwt_cpus_free(struct hwt_cpus *set);
/* Add one CPU (no-op if present).  -EINVAL for cpu < 0, -ENOMEM. */
HWT_API int hwt_cpus_add(struct hwt_cpus *set, int cpu);
HWT_API bool hwt_cpus_has(const struct hwt_cpus *set, int cpu);
/* Parse the kernel's list syntax ("0-3,8,10-14:2" as in cpulist_parse).
 * -EINVAL for anything else (empty string, junk, reversed range). */
HWT_API int hwt_cpus_parse(const char *list, struct hwt_cpus *out);
/* The same, and on failure why[len] (if len > 0) says why in a few words
 * naming the bad part ("range 1-0 is reversed", "CPU 100000 is above the
 * limit 65535"); on success why is "". */
HWT_API int hwt_cpus_parse_why(const char *list, struct hwt_cpus *out, char *why, size_t len);
/* Format as the kernel's list syntax; returns the length that the whole
 * string needs (like snprintf), or a negative errno. */
HWT_API int hwt_cpus_format(const struct hwt_cpus *set, char *buf, size_t len);

/* The calling thread's allowed CPUs (sched_getaffinity, any CPU count). */
HWT_API int hwt_cpu_allowed(struct hwt_cpus *out);
/* Online CPUs (<root>/online). */
HWT_API int hwt_cpu_online(const char *sysfs_root, struct hwt_cpus *out);
/* cpu's SMT siblings including itself (<root>/cpuN/topology/thread_siblings_list,
 * or core_cpus_list); a CPU with no topology directory is its own only sibling. */
HWT_API int hwt_cpu_smt_siblings(const char *sysfs_root, int cpu, struct hwt_cpus *out);

/* The CPU's spin-loop hint (pause / yield / Zihintpause), for callers'
 * own bounded spins. */
HWT_API void hwt_cpu_relax(void);

enum hwt_cpu_run_mode {
	HWT_CPU_RUN_PARALLEL, /* one pinned thread per CPU, released together */
	HWT_CPU_RUN_SERIAL,   /* one CPU after another */
};

typedef void (*hwt_cpu_run_fn)(int cpu, void *arg);

/*
 * Run fn(cpu, arg) on each CPU of set, in a thread pinned to that CPU
 * (confirmed with sched_getcpu() before fn runs).  status[i] (if non-NULL,
 * set->n entries) receives 0 when fn ran on set->cpu[i], or a negative errno
 * when that CPU could not be used (offline, outside the cpuset: -EINVAL;
 * thread creation: -EAGAIN).  Returns the number of CPUs fn ran on, or a
 * negative errno if nothing could be attempted.
 */
HWT_API int hwt_cpu_on_each(const struct hwt_cpus *set, enum hwt_cpu_run_mode mode, hwt_cpu_run_fn fn,
			    void *arg, int *status);

HWT_END_DECLS

#endif
