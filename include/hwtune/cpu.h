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
#include <stdint.h>

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

/*
 * What kind of core a CPU is, from files under root (NULL: the real /sys
 * and /proc; tests pass a fake tree holding sys/... and proc/...):
 *   arm64  <root>/sys/devices/system/cpu/cpuN/regs/identification/midr_el1
 *          (hex), else the "CPU implementer/variant/part/revision" lines of
 *          <root>/proc/cpuinfo;
 *   riscv  the mvendorid/marchid/mimpid lines of /proc/cpuinfo's
 *          "processor : N" block;
 *   x86    the hybrid core type: N in <root>/sys/devices/cpu_core/cpus
 *          ("core") or <root>/sys/devices/cpu_atom/cpus ("atom"), else,
 *          with the real root only and for a thread pinned to N alone,
 *          CPUID leaf 0x1A; plus vendor_id, cpu family and model.
 * The model name (x86 "model name", riscv "uarch" or "model name") is kept
 * when present.
 */
enum hwt_cpu_kind {
	HWT_CPU_KIND_UNKNOWN = 0, /* nothing found: core is "unknown" */
	HWT_CPU_KIND_ARM = 1,
	HWT_CPU_KIND_RISCV = 2,
	HWT_CPU_KIND_X86 = 3,
};

/* hwt_cpu_ident.x86_type: CPUID.1A EAX[31:24] values; 0 not hybrid/unknown. */
#define HWT_CPU_X86_ATOM 0x20u
#define HWT_CPU_X86_CORE 0x40u

struct hwt_cpu_ident {
	int cpu;
	enum hwt_cpu_kind kind;
	uint32_t midr;       /* arm: implementer [31:24], variant [23:20], part [15:4],
			        revision [3:0] */
	uint64_t mvendorid;  /* riscv */
	uint64_t marchid;
	uint64_t mimpid;
	unsigned x86_type;   /* HWT_CPU_X86_ATOM, HWT_CPU_X86_CORE or 0 */
	unsigned x86_family; /* x86: cpuinfo's "cpu family" and "model" */
	unsigned x86_model;
	char vendor[16];     /* x86 vendor_id, else "" */
	char model[64];      /* model name if the system gives one, else "" */
	/* Printable: "arm 0x41 part 0xd05 r2p0", "riscv mvendorid 0x710 marchid
	 * 0x8000000058000001 mimpid 0x0", "x86 core", "x86 atom", "x86", or
	 * "unknown"; followed by " (<model>)" when a model name is known. */
	char core[160];
};

/* Identity of cpu (0, or -EINVAL for a bad cpu, -ENOMEM).  Missing or
 * unreadable files are not an error: they give kind UNKNOWN, core "unknown". */
HWT_API int hwt_cpu_identity(const char *root, int cpu, struct hwt_cpu_ident *out);
/* The same for each CPU of set into out[set->n], reading /proc/cpuinfo once. */
HWT_API int hwt_cpu_identities(const char *root, const struct hwt_cpus *set,
			       struct hwt_cpu_ident *out);
/* Same kind of core: every field but cpu (and the derived core string). */
HWT_API bool hwt_cpu_ident_equal(const struct hwt_cpu_ident *a, const struct hwt_cpu_ident *b);

/*
 * The name of the hypervisor this system runs under, from its CPUID vendor
 * signature (x86_64: leaf 0x40000000), into buf (len bytes, NUL-terminated):
 * "KVM", "Microsoft Hyper-V", "VMware", "Xen", "QEMU TCG", "Parallels",
 * "ACRN", "bhyve", "VirtualBox"..., else "unknown (CPUID signature \"...\")".
 * 0; -ENODEV no hypervisor (CPUID.1:ECX[31] clear); -ENOENT a blank
 * signature; -ENOSYS off x86_64 (use /sys/hypervisor or the DMI vendor
 * there); -ERANGE buf too small; -EINVAL buf NULL or len 0.  buf is "" on
 * error.
 */
HWT_API int hwt_cpu_hypervisor(char *buf, size_t len);

HWT_END_DECLS

#endif
