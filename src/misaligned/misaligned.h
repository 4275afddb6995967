/* SPDX-License-Identifier: MIT */
/*
 * Internals of the misaligned-access probe.
 *
 *   classify.c  verdicts, names, overrides, the set rule (pure)
 *   stats.c     running minimum with a stability test, medians (pure)
 *   fault.c     one CPU: does a misaligned access trap or fault (pinned thread)
 *   measure.c   one CPU: fault check, then the timing loops (pinned thread)
 *   cache.c     per-CPU results on disk, keyed to this boot and machine
 *   system.c    the system-wide result file
 *   lookup.c    the lookup chain (override, system file, user cache, measure)
 *               and the entry points that walk it
 *   waves.c     the chain's last step: measure a set, wave by wave, pinned
 *   groups.c    groups of alike CPUs, which CPUs have a verdict
 */
#ifndef HWT_MISALIGNED_INTERNAL_H
#define HWT_MISALIGNED_INTERNAL_H

#include "hwtune/hwtune.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Test seam, not public: the fault check raises SIGBUS instead of touching
 * memory, so the UNSUPPORTED path runs on any machine; implies NO_CACHE and
 * no system file.  Only hwt__misaligned_test_hook sets it: a caller's
 * hwt_misaligned_opts.flags with it is refused (-EINVAL), as any unknown bit. */
#define HWT__MISALIGNED_FORCE_SIGBUS 0x100u
/* Test seam, not public: every vector unit's probe takes a SIGBUS at its
 * first access (the "vector access traps" path: UNSUPPORTED); the same. */
#define HWT__MISALIGNED_FORCE_VECTOR_TRAP 0x200u

/* --- lookup.c ------------------------------------------------------------- */

/* Test hook, not exported from the shared library (the static one has it):
 * add force (HWT__MISALIGNED_FORCE_* bits; 0 clears) to the flags of every
 * probe of the process.  Call it before any probe starts (not thread-safe);
 * tests/harness/probe_hook.c calls it for the CLI tests' tool. */
void hwt__misaligned_test_hook(unsigned force);
/* The one root of opts as a CPU folder: sysfs_root (the old name, kept as an
 * alias) if set, else <root>/sys/devices/system/cpu in buf, else NULL (the
 * real one). */
const char *hwt__misaligned_sysfs(const struct hwt_misaligned_opts *opts, char *buf, size_t len);
/* opts measures the vector units and the split penalties: no vector
 * override, not HWT_MISALIGNED_NO_VECTOR. */
bool hwt__misaligned_measures_vector(const struct hwt_misaligned_opts *opts);

/* --- waves.c -------------------------------------------------------------- */

/* The slot of cpu in r (ascending CPUs), NULL if none. */
struct hwt_misaligned_cpu *hwt__misaligned_slot(const struct hwt_misaligned_report *r, int cpu);
/* Measure each CPU i of r with todo[i], in r->cpu[i], under opts (flags,
 * overrides, root) and r's budget, window, serial and smt_apart; count the
 * waves in r->waves.  A CPU that cannot be pinned gets status < 0.  0 or a
 * negative errno (-ENOMEM, or the fault guard's). */
int hwt__misaligned_measure_set(struct hwt_misaligned_report *r, const bool *todo,
				const struct hwt_misaligned_opts *opts);

/* --- classify.c ---------------------------------------------------------- */

/* What one CPU's probe saw; ticks are minimum per-sample counts (any unit,
 * the same for both loops). */
struct hwt__probe_obs {
	uint64_t word_ticks;
	uint64_t byte_ticks;
	int fault_signal;     /* signal raised by a misaligned access, else 0 */
	int64_t align_faults; /* kernel alignment faults counted; -1 unknown */
	bool copy_ok;         /* both loops produced the source bytes */
};

/* The timing says FAST: both loops copied and words beat bytes. */
static inline bool hwt__obs_fast(const struct hwt__probe_obs *o)
{
	return o->copy_ok && o->word_ticks && o->word_ticks < o->byte_ticks;
}

struct hwt__verdict {
	int speed;
	unsigned ratio_x100;
	unsigned notes;
};

/* Below this ratio (x100) a slow word copy is likely trapped and emulated
 * by firmware: emulated cores measure 0.003-0.02, real hardware >= ~0.5. */
#define HWT__FIRMWARE_RATIO_X100 10u
/* A ratio within [90, 110] is a near tie: reported, the verdict stands. */
#define HWT__MARGINAL_LO_X100 90u
#define HWT__MARGINAL_HI_X100 110u

void hwt__misaligned_classify(const struct hwt__probe_obs *obs, struct hwt__verdict *v);
/* r's four summaries from its CPUs (the set rule of each). */
void hwt__misaligned_summarize(struct hwt_misaligned_report *r);
/* The vector rule: a signal gives UNSUPPORTED, else as the scalar one
 * (align_faults is ignored: no kernel emulates vector accesses, so there is
 * no EMULATED and no FIRMWARE or NO_PERF note). */
void hwt__vector_classify(const struct hwt__probe_obs *obs, struct hwt__verdict *v);

/* --- stats.c -------------------------------------------------------------- */

/* A running minimum that knows how long it has stood still. */
struct hwt__mintrack {
	uint64_t min;
	unsigned n;     /* samples seen */
	unsigned since; /* samples since the last significant improvement */
};

/* A new minimum counts as an improvement only if it beats the old one by
 * more than 1/64 (1.6%): smaller gains are noise at sample granularity. */
#define HWT__MIN_IMPROVE_SHIFT 6
/* Early stop: each loop has >= this many samples ... */
#define HWT__STABLE_MIN_SAMPLES 16u
/* ... and neither minimum improved in this many. */
#define HWT__STABLE_RUN 24u

void hwt__mintrack_init(struct hwt__mintrack *t);
/* Returns true if v was a significant improvement. */
bool hwt__mintrack_add(struct hwt__mintrack *t, uint64_t v);
bool hwt__mintrack_stable(const struct hwt__mintrack *a, const struct hwt__mintrack *b);
/* Median of v[0..n) (sorts v); 0 if n == 0.  Even n: the lower middle. */
uint32_t hwt__median_u32(uint32_t *v, size_t n);

/* --- fault.c -------------------------------------------------------------- */

/* Install (counted) the process-wide SIGBUS/SIGSEGV/SIGILL handlers that
 * let hwt__fault_check survive a fault; leave restores the previous ones. */
int hwt__fault_guard_enter(void);
void hwt__fault_guard_leave(void);
struct hwt__fault_result {
	int sig;         /* signal the access raised, 0 none */
	int64_t faults;  /* kernel alignment faults counted; -1 not counted */
	uint64_t iter_ns; /* one warm iteration (16 accesses): >> 1 us means traps */
};
/* Run misaligned word-loop iterations in the calling thread under the
 * guard, counting kernel alignment faults if count_faults.  -EAGAIN outside
 * a guard. */
int hwt__fault_check(bool force_sigbus, bool count_faults, struct hwt__fault_result *res);
/* Call fn(arg) in the calling thread under the guard (raising force_sig
 * first if non-zero): *sig is 0 if fn returned, else the guarded signal that
 * cut it short.  fn must not hold locks or own memory when it may fault.
 * -EAGAIN outside a guard. */
int hwt__guarded_call(void (*fn)(void *), void *arg, int force_sig, int *sig);

/* --- measure.c ------------------------------------------------------------ */

struct hwt__measure_cfg {
	uint64_t budget_ns;
	bool kernel_window;
	bool force_sigbus;
	bool scalar;            /* measure the scalar speed (false: it is overridden) */
	bool vector;            /* measure the vector units and the split penalties */
	bool force_vector_trap;
	unsigned line_bytes;    /* cache line for the split probe (sysconf is slow
				   in a guest: ~40 us, so asked once per call) */
};

/* Probe the CPU the calling thread is pinned to; fills everything in out
 * except cpu, source and wave (and, when cfg->scalar is false, the scalar
 * speed; when cfg->vector is false, the vector results). */
void hwt__misaligned_measure(int cpu, const struct hwt__measure_cfg *cfg,
			     struct hwt_misaligned_cpu *out);

/* Test seam, not exported from the shared library: the next n scalar
 * measurements of the process (any thread) come out UNKNOWN, as a copy
 * that did not copy would; 0 clears. */
void hwt__misaligned_test_unknown(unsigned n);

/* --- cache.c -------------------------------------------------------------- */

struct hwt__cache_key {
	char boot_id[64];
	char kernel[128];
	char model[24]; /* hash of the CPU identification lines and the arch */
	char version[32];
};

int hwt__cache_key_current(struct hwt__cache_key *k);
/* The cache file for dir (NULL: XDG default, created as needed). */
int hwt__cache_path(const char *dir, char *buf, size_t len);
/*
 * Load the entries of path if it is intact and matches k.  *out is malloc'd
 * (free it), entries have source FROM_CACHE.  -ENOENT no file, -EBADMSG
 * corrupt, -ESTALE written for another boot/kernel/CPU/version.
 */
int hwt__cache_load(const char *path, const struct hwt__cache_key *k,
		    struct hwt_misaligned_cpu **out, unsigned *n);
/* Replace path atomically with these entries (UNKNOWN ones are skipped). */
int hwt__cache_store(const char *path, const struct hwt__cache_key *k,
		     const struct hwt_misaligned_cpu *e, unsigned n);
/* The two halves, without files: the text hwt__cache_store writes (*text
 * malloc'd, NUL-terminated, *len bytes; -ENOMEM), and what hwt__cache_load
 * makes of a file's len bytes (text[len] must be NUL): 0 with *out and *n
 * set, or an error with *out NULL and *n 0. */
/* The cache and system files: at most this big, hashed with FNV-1a 64. */
#define HWT__MISALIGNED_MAX_FILE (1u << 20)
#define HWT__FNV_INIT 0xcbf29ce484222325ull
static inline uint64_t hwt__fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 0x100000001b3ull;
	return h;
}

/* Whether the cache and system files keep this entry: a known scalar verdict
 * and vector results that are known (or can never be: no loop). */
bool hwt__cache_keeps(const struct hwt_misaligned_cpu *c);
int hwt__cache_format(const struct hwt__cache_key *k, const struct hwt_misaligned_cpu *e,
		      unsigned n, char **text, size_t *len);
int hwt__cache_parse(const char *text, size_t len, const struct hwt__cache_key *k,
		     struct hwt_misaligned_cpu **out, unsigned *n);

/* --- system.c ------------------------------------------------------------- */

/* The system file's key: boot id (<root>/proc/sys/kernel/random/boot_id),
 * kernel release (<root>/proc/sys/kernel/osrelease, else uname), a hash of
 * the distinct identities of the online CPUs, the library version. */
int hwt__system_key(const char *root, struct hwt__cache_key *k);
/* <dir>/misaligned-<arch>.result; dir NULL: $HWTUNE_RUNTIME_DIR (absolute,
 * else -EINVAL) or the default.  create: make dir (0755) if missing. */
int hwt__system_path(const char *dir, bool create, char *buf, size_t len);
/* Mode 0644, temporary file + fsync + rename + fsync of the folder. */
int hwt__system_store(const char *path, const struct hwt__cache_key *k,
		      const struct hwt_misaligned_cpu *e, unsigned n);
/* Trusted only if neither the file nor its folder is a symlink (-ELOOP), a
 * regular file (-ENXIO), owned by owner (-EPERM), not group/world writable
 * (-EACCES), readable (-EIO), intact (-EBADMSG) and of key k (-ESTALE).
 * Entries have source FROM_SYSTEM. */
int hwt__system_load(const char *path, const struct hwt__cache_key *k, uid_t owner,
		     struct hwt_misaligned_cpu **out, unsigned *n);

#endif
