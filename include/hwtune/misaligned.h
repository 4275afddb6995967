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
 * or, for some CPUs, in the lookup order (override, system file, user cache,
 * probe): hwt_misaligned_cpus(); for the calling thread's CPUs, remembered
 * and thread-safe: hwt_misaligned_speed().
 */
#ifndef HWTUNE_MISALIGNED_H
#define HWTUNE_MISALIGNED_H

#include <stdbool.h>
#include <stdint.h>

#include "hwtune/cpu.h"

#include "hwtune/api.h"

HWT_BEGIN_DECLS

/* Values of riscv_hwprobe's MISALIGNED_SCALAR_PERF key (9).  The vector
 * results use the same values as MISALIGNED_VECTOR_PERF (10): UNKNOWN,
 * SLOW, FAST or UNSUPPORTED, never EMULATED (no kernel emulates vector
 * accesses). */
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
	HWT_MISALIGNED_FROM_SYSTEM = 3, /* the system-wide result file (hwtune probe --system) */
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
					      sample, no early stop (kernel-compatible);
					      each vector unit the same */
#define HWT_MISALIGNED_SMT_APART 0x04u     /* SMT siblings in separate waves */
#define HWT_MISALIGNED_NO_CACHE 0x08u      /* neither read nor write the cache */
#define HWT_MISALIGNED_REFRESH 0x10u       /* measure even if cached; update the cache */
#define HWT_MISALIGNED_NO_VECTOR 0x20u     /* neither vector nor split measurements: the
					      scalar probe alone (vector results UNKNOWN) */

/* A zeroed struct (or NULL) means: parallel, default budget, cache on. */
struct hwt_misaligned_opts {
	unsigned flags;
	unsigned budget_us;     /* per CPU; 0 = HWT_MISALIGNED_DEFAULT_BUDGET_US */
	enum hwt_misaligned_speed override_speed; /* SLOW, FAST or UNSUPPORTED: no probing;
						   * UNKNOWN (0) = none */
	const char *cache_dir;  /* NULL: $XDG_CACHE_HOME/hwtune, else ~/.cache/hwtune */
	const char *sysfs_root; /* deprecated alias, kept for one release: the CPU folder
				 * (SMT siblings, online CPUs) instead of
				 * <root>/sys/devices/system/cpu; NULL: from root */
	enum hwt_misaligned_speed vector_override_speed; /* SLOW, FAST or UNSUPPORTED:
						   * every vector result of every CPU
						   * set so, no vector probing (the
						   * kernel's unaligned_vector_speed=);
						   * UNKNOWN (0) = none */
	/* The one root: prefix of /sys and /proc for everything the probe reads
	 * there (CPU identities, online CPUs, SMT siblings, the boot id); NULL:
	 * the real ones. */
	const char *root;
	const char *runtime_dir; /* NULL: $HWTUNE_RUNTIME_DIR, else HWT_MISALIGNED_RUNTIME_DIR */
};

/*
 * The notes of hwt_misaligned_cpu.notes and hwt_misaligned_vector.notes,
 * one list: X(NAME, bit, key, text) for each, where HWT_MISALIGNED_NOTE_<NAME>
 * is the bit, key the note's name in `hwtune probe --json` ("notes" arrays)
 * and text its sentence in the text output.  The scalar probe's notes come
 * first; a vector unit's notes are COARSE, MARGINAL, BUDGET, BAD_COPY and
 * the last three.  Expand it with your own X, e.g. a name table:
 *
 *   #define NOTE_NAME(name, bit, key, text) { bit, key },
 *   static const struct { unsigned bit; const char *key; } names[] = {
 *           HWT_MISALIGNED_NOTES(NOTE_NAME)
 *   };
 */
#define HWT_MISALIGNED_NOTES(X)                                                                      \
	/* ratio < 0.10, no kernel fault: probably firmware-emulated (reported SLOW) */              \
	X(FIRMWARE, 0x01u, "probably-firmware-emulated",                                             \
	  "probably firmware-emulated: the word copy is over 10x slower than bytes and the "         \
	  "kernel saw no alignment fault")                                                           \
	/* a minimum of 0 ticks: counter too coarse */                                               \
	X(COARSE, 0x02u, "coarse-counter",                                                           \
	  "counter lacks granularity needed to measure unaligned access speed")                      \
	X(MARGINAL, 0x04u, "marginal", "ratio within 0.90..1.10: a near tie")                        \
	/* perf events unavailable: EMULATED not detectable */                                       \
	X(NO_PERF, 0x08u, "perf-unavailable",                                                        \
	  "perf events unavailable: kernel emulation (emulated) cannot be detected")                 \
	/* the thread left its CPU during the probe */                                               \
	X(MIGRATED, 0x10u, "migrated", "the probe thread left its CPU")                              \
	/* stopped by the budget, not by a stable minimum */                                         \
	X(BUDGET, 0x20u, "budget-exhausted", "stopped by the time budget before the minima were stable") \
	/* a copy loop did not copy: verdict UNKNOWN */                                              \
	X(BAD_COPY, 0x40u, "bad-copy", "a copy loop did not copy: verdict unknown")                  \
	/* the fault check could not run (no signal guard) */                                        \
	X(CHECK_FAILED, 0x80u, "fault-check-failed",                                                 \
	  "the fault check could not run (its signal guard was not installed)")                      \
	/* vector only: no vector loop in this build (generic C layer, NO_ASM=1): UNKNOWN */         \
	X(NO_LOOP, 0x100u, "no-loop", "no vector loop in this build")                                \
	/* vector only: the CPU (or the OS) has no such vector unit: UNSUPPORTED, as hwprobe says */ \
	X(NO_UNIT, 0x200u, "no-unit", "no such vector unit")                                         \
	/* vector only: not measured: the scalar access faults or traps, or HWT_MISALIGNED_NO_VECTOR */ \
	X(SKIPPED, 0x400u, "skipped", "not measured")

#define HWT_MISALIGNED_NOTE_ENUM_(name, bit, key, text) HWT_MISALIGNED_NOTE_##name = bit,
enum hwt_misaligned_note { HWT_MISALIGNED_NOTES(HWT_MISALIGNED_NOTE_ENUM_) };
#undef HWT_MISALIGNED_NOTE_ENUM_

/*
 * The vector probe of one CPU and one vector unit: the scalar probe's copy
 * (same buffer, offsets and size) with the widest vector elements against
 * the same copy with byte elements, classified the same way (word < byte:
 * FAST).  Units: "sse2" (movdqu, 16 B), "avx2" (vmovdqu, 32 B) and "avx512"
 * (vmovdqu64, 64 B) on x86_64, whose byte side is the scalar byte copy (x86 has no byte-element vector
 * access); "neon" on aarch64 (ld1/st1 of 8 .2d elements against 8 .8b
 * elements); "rvv" on riscv64 (vle64/vse64 against vle8/vse8, vl = 8).
 */
struct hwt_misaligned_vector {
	enum hwt_misaligned_speed speed; /* UNKNOWN, SLOW, FAST or UNSUPPORTED */
	unsigned ratio_x100; /* byte_ns * 100 / word_ns (ticks, as the scalar one); 0 unmeasured */
	uint64_t word_ns;    /* fastest wide-element copy of HWT_MISALIGNED_COPY_SIZE bytes */
	uint64_t byte_ns;    /* fastest byte-element copy of the same bytes */
	unsigned samples;    /* word/byte sample pairs */
	int fault_signal;    /* SIGBUS/SIGSEGV/SIGILL a misaligned vector access raised
				(speed UNSUPPORTED), else 0 */
	int hwprobe;         /* riscv_hwprobe MISALIGNED_VECTOR_PERF for this CPU (main unit
				only), or a negative errno (-ENOSYS: not riscv or no call) */
	unsigned notes;      /* HWT_MISALIGNED_NOTE_* */
	const char *unit;    /* static name ("sse2", "avx2", "avx512", "neon", "rvv"); NULL: none
				in this build or architecture */
};

/*
 * Split penalties of one CPU: the time of a word load (store) that crosses
 * a cache line, and one that crosses a page, each as a ratio x100 to the
 * same access at an aligned address (100: no penalty, 250: 2.5 times the
 * aligned access).  Measured with 8-byte words at offsets line - 4 and
 * page - 4, the line size from sysconf(_SC_LEVEL1_DCACHE_LINESIZE) or 64.
 * Filled (> 0) on x86_64, aarch64 and riscv64 whenever the scalar access
 * neither faults nor traps; 0 means not measured.
 */
struct hwt_misaligned_split {
	unsigned line_load, line_store;  /* ratio x100 to the aligned access */
	unsigned page_load, page_store;
	uint64_t aligned_load_ps, aligned_store_ps; /* one aligned access, picoseconds */
	unsigned line_bytes, page_bytes; /* the sizes used */
};

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
	/* The vector units and split penalties (probe_ns includes their time): */
	struct hwt_misaligned_vector vector; /* the architecture's vector unit */
	struct hwt_misaligned_vector avx2;   /* x86_64 AVX2 (vector is SSE2); elsewhere
						UNSUPPORTED with NOTE_NO_UNIT, unit NULL */
	enum hwt_misaligned_source vector_source; /* MEASURED, FROM_OVERRIDE, FROM_CACHE */
	uint64_t vector_ns;  /* time spent on the vector units (of probe_ns) */
	struct hwt_misaligned_split split;
	uint64_t split_ns;   /* time spent on the split penalties (of probe_ns) */
	/* last, so that the members above keep their offsets: */
	struct hwt_misaligned_vector avx512; /* x86_64 AVX-512 (F, BW, VL); elsewhere
						UNSUPPORTED with NOTE_NO_UNIT, unit NULL */
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
			     * itself: -EACCES, -ELOOP a symlink (the file, or the
			     * hwtune cache folder: never followed), -EISDIR...) or,
			     * with cache_off, why there is no cache folder */
	bool cache_off;     /* the cache was neither read nor written (NO_CACHE, an
			     * override, or no cache folder) */
	enum hwt_misaligned_speed vector_summary; /* the set rule over cpu[].vector.speed */
	enum hwt_misaligned_speed avx2_summary;   /* the set rule over cpu[].avx2.speed */
	int system_status;  /* hwt_misaligned_cpus, _self: 0 the system file was used or
			     * not asked for, else why it was ignored (-ENOENT none, ...) */
	enum hwt_misaligned_speed avx512_summary; /* the set rule over cpu[].avx512.speed */
};

/*
 * Probe each CPU of set (NULL: the calling thread's allowed CPUs) and fill
 * out (release with hwt_misaligned_report_free): opts' overrides, else the
 * user cache, else a measurement; neither the environment nor the system
 * file is read.  A CPU that cannot be pinned is kept with status < 0 and
 * speed UNKNOWN, and left out of the summary.  Returns 0 or a negative errno
 * (-EINVAL bad options or empty set).
 */
HWT_API int hwt_misaligned_probe(const struct hwt_cpus *set, const struct hwt_misaligned_opts *opts,
				 struct hwt_misaligned_report *out);
HWT_API void hwt_misaligned_report_free(struct hwt_misaligned_report *r);

/* hwprobe's set rule over CPUs with status 0: all equal gives that value,
 * any difference (or none) gives UNKNOWN.  -EINVAL: cpu NULL with n > 0. */
HWT_API int hwt_misaligned_summary(const struct hwt_misaligned_cpu *cpu, unsigned n);

/* The same rule over cpu[i].vector.speed (wide false) or cpu[i].avx2.speed
 * (wide true). */
HWT_API int hwt_misaligned_vector_summary(const struct hwt_misaligned_cpu *cpu, unsigned n,
					  bool wide);

/* The vector units of struct hwt_misaligned_cpu by number. */
enum hwt_misaligned_unit {
	HWT_MISALIGNED_UNIT_VECTOR = 0, /* .vector: the architecture's vector unit */
	HWT_MISALIGNED_UNIT_AVX2 = 1,   /* .avx2 */
	HWT_MISALIGNED_UNIT_AVX512 = 2, /* .avx512 */
	HWT_MISALIGNED_UNITS = 3
};

/* Unit number unit of c; NULL if c is NULL or unit >= HWT_MISALIGNED_UNITS. */
HWT_API const struct hwt_misaligned_vector *hwt_misaligned_cpu_unit(const struct hwt_misaligned_cpu *c,
								    unsigned unit);
/* The set rule over cpu[i]'s unit number unit; -EINVAL: cpu NULL with n > 0,
 * or unit >= HWT_MISALIGNED_UNITS. */
HWT_API int hwt_misaligned_unit_summary(const struct hwt_misaligned_cpu *cpu, unsigned n,
					unsigned unit);

/* "unknown", "emulated", "slow", "fast", "unsupported"; NULL if out of range. */
HWT_API const char *hwt_misaligned_speed_name(enum hwt_misaligned_speed speed);
/* The kernel's unaligned_scalar_speed= words: "slow", "fast", "unsupported"
 * give 2, 3, 4; anything else -EINVAL. */
HWT_API int hwt_misaligned_parse_speed(const char *word);
/* HWTUNE_UNALIGNED_SCALAR_SPEED: 0 if unset, the speed if valid, -EINVAL
 * otherwise, the empty string included as for HWTUNE_DISABLE_MSIPOLLING
 * (then *bad, if non-NULL, points at the bad word). */
HWT_API int hwt_misaligned_env_override(const char **bad);
/* The same for HWTUNE_UNALIGNED_VECTOR_SPEED (the kernel's
 * unaligned_vector_speed=; same words), for opts.vector_override_speed. */
HWT_API int hwt_misaligned_env_vector_override(const char **bad);

/* --- groups of alike CPUs --------------------------------------------------- */

/* CPUs that share a core identity (hwt_cpu_ident_equal) and the verdicts. */
struct hwt_misaligned_group {
	struct hwt_cpus cpus;              /* ascending; hwt_cpus_format gives "0-3" */
	struct hwt_cpu_ident ident;        /* of the first CPU; ident.core is printable */
	enum hwt_misaligned_speed speed;   /* scalar verdict of every CPU of the group */
	enum hwt_misaligned_speed vector_speed; /* cpu[].vector.speed of every CPU */
	unsigned ratio_min_x100;           /* over the group's CPUs with a ratio; 0 if none */
	unsigned ratio_max_x100;
};

/* Group the CPUs of r (identities read under root, NULL: real) into *out
 * (*n groups, ordered by first CPU; free with hwt_misaligned_groups_free).
 * A CPU that was not probed (status < 0) groups with speed UNKNOWN. */
HWT_API int hwt_misaligned_groups(const struct hwt_misaligned_report *r, const char *root,
				  struct hwt_misaligned_group **out, unsigned *n);
HWT_API void hwt_misaligned_groups_free(struct hwt_misaligned_group *g, unsigned n);

/* "Which CPUs?": the CPUs of r whose verdict of kind is s (a CPU not probed
 * counts as UNKNOWN), into out.  Returns their number or a negative errno
 * (-EINVAL: bad kind or speed).  VECTOR is cpu[].vector.speed (the
 * architecture's vector unit: SSE2, NEON or RVV). */
enum hwt_misaligned_kind {
	HWT_MISALIGNED_SCALAR = 0,
	HWT_MISALIGNED_VECTOR = 1,
};
HWT_API int hwt_misaligned_cpus_with(const struct hwt_misaligned_report *r, int kind,
				     enum hwt_misaligned_speed s, struct hwt_cpus *out);

/* --- one result for the whole system ------------------------------------------ */

#define HWT_MISALIGNED_RUNTIME_DIR "/run/hwtune"

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
 * Write r's known verdicts as the system's result:
 * <dir>/misaligned-<arch>.result (dir NULL: $HWTUNE_RUNTIME_DIR if set,
 * which must be absolute (relative: -EINVAL), else
 * HWT_MISALIGNED_RUNTIME_DIR; created 0755 if missing), mode 0644,
 * atomically (a temporary file in dir, fsync, rename, fsync of dir), keyed
 * by boot id, kernel release, the CPU identities and the library version.
 * Every process trusts it, so it must cover the system: -EINVAL for a
 * report that lacks an online CPU, or has one with status < 0 or that the
 * file does not keep (the file keeps a known scalar verdict with known
 * vector results), for an override's report, scalar or vector (not a
 * measurement), or one with no CPU the file keeps: a good file is never
 * replaced by an empty or partial one.
 */
HWT_API int hwt_misaligned_system_write(const char *dir, const struct hwt_misaligned_report *r);
/*
 * Read the system's result into out (source FROM_SYSTEM, ascending CPUs).
 * Anything not trusted is ignored with a reason, one errno each: -ENOENT
 * no file; -ELOOP a symlink (the file, or its folder: never followed);
 * -ENXIO not a regular file; -EPERM not owned by root; -EACCES writable by
 * its group or others; -EIO unreadable (open(2) refused it); -EBADMSG
 * corrupt; -ESTALE another boot, kernel, CPU identity or library version.
 * root as in hwt_misaligned_opts (NULL: real).
 */
HWT_API int hwt_misaligned_system_read(const char *dir, const char *root,
				       struct hwt_misaligned_report *out);
/*
 * What `hwtune probe --system` does: probe every online CPU, whatever the
 * calling thread's affinity (from a thread of its own that widens its mask
 * to the online CPUs, as sched_setaffinity(2) allows within the cpuset; the
 * caller's mask is left as it is), fresh (neither the user cache nor the
 * system file is read), then write the system file.  opts as for
 * hwt_misaligned_probe (an override, scalar or vector, or
 * HWT_MISALIGNED_NO_VECTOR is -EINVAL: not a whole measurement;
 * runtime_dir, root and sysfs_root are honoured).  -EPERM when an online
 * CPU cannot be run on (outside the cpuset, or it could not be pinned):
 * nothing is written, and out lists every online CPU, those not reached
 * with status < 0.  A CPU whose verdict the file would not keep (unknown:
 * a measurement preempted or starved until its budget ran out) is measured
 * again, up to HWT_MISALIGNED_SYSTEM_TRIES probes in all; one still
 * unknown gives -EAGAIN, nothing written, and out as for -EPERM with those
 * CPUs at status -EAGAIN.  out also gets the report when only the write failed:
 * then the write's error is returned and out must still be freed; on other
 * errors out is empty.
 */
#define HWT_MISALIGNED_SYSTEM_TRIES 3
HWT_API int hwt_misaligned_system_probe(const struct hwt_misaligned_opts *opts,
					struct hwt_misaligned_report *out);

/*
 * The report for exactly the CPUs of set (NULL: the calling thread's allowed
 * CPUs), each found in the lookup order: an override (opts, else
 * HWTUNE_UNALIGNED_SCALAR_SPEED and HWTUNE_UNALIGNED_VECTOR_SPEED; either one
 * means every CPU so, the rest probed, no file read), else per CPU the
 * system file, then the user cache, then a probe (opts as for
 * hwt_misaligned_probe; NULL: defaults).  The calling thread's affinity is
 * left as it is.  source is FROM_SYSTEM when every CPU came from the system
 * file; cache_status tells why the user cache was ignored, system_status
 * why the system file was.  Returns 0 or a negative errno: -EINVAL bad
 * options, a bad override in the environment, an empty set, or a CPU of set
 * the calling thread may not run on (sched_getaffinity).
 */
HWT_API int hwt_misaligned_cpus(const struct hwt_cpus *set, const struct hwt_misaligned_opts *opts,
				struct hwt_misaligned_report *out);

/* hwt_misaligned_cpus(NULL, opts, out): the calling thread's allowed CPUs. */
HWT_API int hwt_misaligned_self(const struct hwt_misaligned_opts *opts,
				struct hwt_misaligned_report *out);

/*
 * hwprobe's set rule over the calling thread's allowed CPUs, at each call:
 * a thread confined to some CPUs gets the answer for those CPUs only.  Each
 * CPU's verdict is found once per process (system file, user cache, probe,
 * as hwt_misaligned_self) and remembered; HWTUNE_UNALIGNED_SCALAR_SPEED is
 * read once.  Thread-safe.  Returns a speed (0..4) or a negative errno.
 */
HWT_API int hwt_misaligned_speed(void);

HWT_END_DECLS

#endif
