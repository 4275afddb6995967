/* SPDX-License-Identifier: MIT */
/*
 * Misaligned-access speed probe: per CPU, time a copy made of misaligned
 * word accesses against the same copy made byte by byte (the Linux RISC-V
 * boot probe's method), and classify each CPU with riscv_hwprobe's values.
 * All CPUs of a set are probed at once unless asked otherwise.
 *
 *   struct hwt_misaligned_report r;
 *   if (hwt_misaligned_probe(NULL, NULL, &r) == 0) {
 *           ... r.summary, r.cpu[i].speed ...
 *           hwt_misaligned_report_free(&r);
 *   }
 *
 * or, once per process, cached and thread-safe:  hwt_misaligned_speed().
 */
#ifndef HWTUNE_MISALIGNED_H
#define HWTUNE_MISALIGNED_H

#include <stdbool.h>
#include <stdint.h>

#include "hwtune/cpu.h"

#include "hwtune/api.h"

HWT_BEGIN_DECLS

/* Values of riscv_hwprobe's MISALIGNED_SCALAR_PERF key (9). */
enum hwt_misaligned_speed {
	HWT_MISALIGNED_UNKNOWN = 0,
	HWT_MISALIGNED_EMULATED = 1,    /* the kernel traps and emulates each access */
	HWT_MISALIGNED_SLOW = 2,        /* word copy not faster than byte copy */
	HWT_MISALIGNED_FAST = 3,        /* word copy faster than byte copy */
	HWT_MISALIGNED_UNSUPPORTED = 4, /* a misaligned access raises a signal */
};

enum hwt_misaligned_source {
	HWT_MISALIGNED_MEASURED = 0,
	HWT_MISALIGNED_FROM_OVERRIDE = 1,
	HWT_MISALIGNED_FROM_CACHE = 2,
};

/* The kernel probe's defaults and the default budget of this one. */
#define HWT_MISALIGNED_BUFFER_SIZE 0x4000u                           /* per CPU */
#define HWT_MISALIGNED_COPY_SIZE (HWT_MISALIGNED_BUFFER_SIZE / 2 - 0x80) /* 8064 */
#define HWT_MISALIGNED_KERNEL_WINDOW_NS 8000000u /* per loop: 2 x 8 ms */
#define HWT_MISALIGNED_DEFAULT_BUDGET_US 1000u   /* per CPU, both loops */
#define HWT_MISALIGNED_MAX_BUDGET_US 60000000u

/* hwt_misaligned_opts.flags */
#define HWT_MISALIGNED_SERIAL 0x01u        /* one CPU after another */
#define HWT_MISALIGNED_KERNEL_WINDOW 0x02u /* words 8 ms then bytes 8 ms, one copy per
					      sample, no early stop (kernel-compatible) */
#define HWT_MISALIGNED_SMT_APART 0x04u     /* SMT siblings in separate waves */
#define HWT_MISALIGNED_NO_CACHE 0x08u      /* neither read nor write the cache */
#define HWT_MISALIGNED_REFRESH 0x10u       /* measure even if cached; update the cache */

/* A zeroed struct (or NULL) means: parallel, default budget, cache on. */
struct hwt_misaligned_opts {
	unsigned flags;
	unsigned budget_us;     /* per CPU; 0 = HWT_MISALIGNED_DEFAULT_BUDGET_US */
	enum hwt_misaligned_speed override_speed; /* SLOW, FAST or UNSUPPORTED: no probing;
						   * UNKNOWN (0) = none */
	const char *cache_dir;  /* NULL: $XDG_CACHE_HOME/hwtune, else ~/.cache/hwtune */
	const char *sysfs_root; /* NULL: /sys/devices/system/cpu (SMT siblings) */
};

/* hwt_misaligned_cpu.notes */
#define HWT_MISALIGNED_NOTE_FIRMWARE 0x01u  /* ratio < 0.10, no kernel fault: probably
					       firmware-emulated (reported SLOW) */
#define HWT_MISALIGNED_NOTE_COARSE 0x02u    /* a minimum of 0 ticks: counter too coarse */
#define HWT_MISALIGNED_NOTE_MARGINAL 0x04u  /* ratio within 0.90..1.10: a near tie */
#define HWT_MISALIGNED_NOTE_NO_PERF 0x08u   /* perf events unavailable: EMULATED not detectable */
#define HWT_MISALIGNED_NOTE_MIGRATED 0x10u  /* the thread left its CPU during the probe */
#define HWT_MISALIGNED_NOTE_BUDGET 0x20u    /* stopped by the budget, not by a stable minimum */
#define HWT_MISALIGNED_NOTE_BAD_COPY 0x40u  /* a copy loop did not copy: verdict UNKNOWN */
#define HWT_MISALIGNED_NOTE_CHECK_FAILED 0x80u /* fault check could not run (no signal guard) */

struct hwt_misaligned_cpu {
	int cpu;
	enum hwt_misaligned_speed speed;
	enum hwt_misaligned_source source;
	int status;          /* 0, or a negative errno: the CPU could not be probed */
	unsigned ratio_x100; /* byte time * 100 / word time, as the kernel prints it */
	uint64_t word_ns;    /* fastest word copy of HWT_MISALIGNED_COPY_SIZE bytes */
	uint64_t byte_ns;    /* fastest byte copy */
	uint64_t word_median_ns, byte_median_ns;
	uint64_t probe_ns;   /* time spent on this CPU (fault check + measurement) */
	uint64_t check_ns;   /* of which the fault check */
	unsigned samples;    /* word/byte sample pairs */
	unsigned reps;       /* copies per sample (> 1 when the counter is coarse) */
	unsigned wave;       /* round this CPU was probed in (0; 1.. for SMT siblings apart) */
	int fault_signal;    /* signal a misaligned access raised, else 0 */
	int64_t align_faults; /* kernel alignment faults during one access; -1 unknown */
	int hwprobe;         /* riscv_hwprobe's answer for this CPU, or a negative errno
				(-ENOSYS: not riscv, or kernel/emulator without it) */
	long preempted;      /* involuntary context switches during the probe */
	unsigned notes;      /* HWT_MISALIGNED_NOTE_* */
};

struct hwt_misaligned_report {
	unsigned n;
	struct hwt_misaligned_cpu *cpu; /* ascending CPU numbers */
	enum hwt_misaligned_speed summary;  /* hwprobe's rule over the CPUs probed: all
					     * equal, else UNKNOWN */
	enum hwt_misaligned_source source;  /* OVERRIDE; CACHE if every CPU came from it;
					     * else MEASURED */
	bool serial;
	bool smt_apart;
	bool kernel_window;
	unsigned waves;     /* hwt_cpu_on_each rounds run */
	unsigned budget_us; /* per CPU, as used */
	uint64_t wall_ns;   /* whole call, cache and thread start-up included */
	int cache_status;   /* 0 read fine or not used, else why the cache was ignored
			     * (-EBADMSG corrupt, -ESTALE foreign, or the error as
			     * itself: -EACCES, -ELOOP a symlink, -EISDIR...) or,
			     * with cache_off, why there is no cache folder */
	bool cache_off;     /* the cache was neither read nor written (NO_CACHE, an
			     * override, or no cache folder) */
};

/*
 * Probe each CPU of set (NULL: the calling thread's allowed CPUs) and fill
 * out (release with hwt_misaligned_report_free).  A CPU that cannot be
 * pinned is kept with status < 0 and speed UNKNOWN, and left out of the
 * summary.  Returns 0 or a negative errno (-EINVAL bad options or empty set).
 */
HWT_API int hwt_misaligned_probe(const struct hwt_cpus *set, const struct hwt_misaligned_opts *opts,
				 struct hwt_misaligned_report *out);
HWT_API void hwt_misaligned_report_free(struct hwt_misaligned_report *r);

/* hwprobe's set rule over CPUs with status 0: all equal gives that value,
 * any difference (or none) gives UNKNOWN.  -EINVAL: cpu NULL with n > 0. */
HWT_API int hwt_misaligned_summary(const struct hwt_misaligned_cpu *cpu, unsigned n);

/* "unknown", "emulated", "slow", "fast", "unsupported"; NULL if out of range. */
HWT_API const char *hwt_misaligned_speed_name(enum hwt_misaligned_speed speed);
/* The kernel's unaligned_scalar_speed= words: "slow", "fast", "unsupported"
 * give 2, 3, 4; anything else -EINVAL. */
HWT_API int hwt_misaligned_parse_speed(const char *word);
/* HWTUNE_UNALIGNED_SCALAR_SPEED: 0 if unset, the speed if valid, -EINVAL
 * otherwise, the empty string included as for HWTUNE_DISABLE_MSIPOLLING
 * (then *bad, if non-NULL, points at the bad word). */
HWT_API int hwt_misaligned_env_override(const char **bad);

/* riscv_hwprobe keys of the kernel's own misaligned-speed answers. */
#define HWT_HWPROBE_MISALIGNED_SCALAR_PERF 9
#define HWT_HWPROBE_MISALIGNED_VECTOR_PERF 10

/*
 * The kernel's riscv_hwprobe answer for key on one CPU (cpu >= 0) or on all
 * online CPUs (cpu -1: for the misaligned keys the kernel then answers
 * UNKNOWN unless every CPU agrees).  0 with *value set; -ENOSYS where the
 * call does not exist (other architectures, old kernels, qemu-user);
 * -EOPNOTSUPP when the kernel does not know the key; -EINVAL bad arguments.
 */
HWT_API int hwt_misaligned_hwprobe(int cpu, int key, uint64_t *value);

/*
 * The summary for the process's allowed CPUs, computed once per process
 * (thread-safe) with the environment override and the on-disk cache.
 * Returns a speed (0..4) or a negative errno.
 */
HWT_API int hwt_misaligned_speed(void);

HWT_END_DECLS

#endif
