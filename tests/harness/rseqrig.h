/* SPDX-License-Identifier: MIT */
/*
 * The rig of the rseq restart storm (tests/stress/rseq.c, which says what
 * it checks): rings over fake registers, a consumer thread that plays the
 * device and checks every entry, producers that insert through a build of
 * the assembly, the storm's signals and moves, and the builds themselves
 * (the library's, the test build, the mutants: src/arch/rseq_builds.h).
 */
#ifndef HWT_TEST_RSEQRIG_H
#define HWT_TEST_RSEQRIG_H

#include "arch/rseq.h"
#include "bus/regs.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#if defined(__SANITIZE_THREAD__)
#define HWT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HWT_TSAN 1
#endif
#endif
#ifndef HWT_TSAN
#define HWT_TSAN 0
#endif

/* The names of src/arch/rseq_builds.h. */
#define BUILD_SYMS(sfx, ab)                                                       \
	extern hwt__rseq_insert_fn hwt__rseq_insert##sfx __attribute__((weak));   \
	extern hwt__rseq_publish_fn hwt__rseq_publish##sfx __attribute__((weak)); \
	extern uint64_t hwt__rseq_##ab##_aborts __attribute__((weak));
BUILD_SYMS(_test, test)
BUILD_SYMS(_broken, broken)
BUILD_SYMS(_broken_post, broken_post)
BUILD_SYMS(_broken_nocpu, broken_nocpu)
BUILD_SYMS(_broken_msiaddr, broken_msiaddr)
BUILD_SYMS(_broken_pubout, broken_pubout)
BUILD_SYMS(_broken_ntfence, broken_ntfence)
BUILD_SYMS(_broken_pubcpu, broken_pubcpu)
extern uint64_t hwt__rseq_test_msi_aborts __attribute__((weak));
extern uint64_t hwt__rseq_test_pub_aborts __attribute__((weak));

/* A build of the assembly: its functions and its restart counter. */
struct build {
	const char *name;
	hwt__rseq_insert_fn *fn;
	hwt__rseq_publish_fn *publish;
	uint64_t *aborts;
};

#define BUILD(name, sfx, ab) \
	((struct build){ name, hwt__rseq_insert##sfx, hwt__rseq_publish##sfx, &hwt__rseq_##ab##_aborts })

#define MAX_PRODUCERS 16
#define RSEQRIG_KMAX 128 /* entries per call at most (kmax) */
#define MAX_CPUS HWT__NUMQ_MAX /* rings: one per possible CPU, as the queue's */
#define MAGIC 0x5eed000000000000ull
#define MAGIC_SYNC 0x5eec000000000000ull /* the last entry of a call with HWT__RSEQ_K_SYNC_MSI */
#define MAGIC_MASK 0xffff000000000000ull
/* Ring i's fake IOVA (the section only adds 16 * idx to it). */
#define RING_IOVA(i) (0xfeed00000000ull + ((uint64_t)(i) << 24))
#define LOG_N 2048 /* insertions each producer remembers */

struct queue {
	_Alignas(64) _Atomic uint32_t prod;
	_Alignas(64) _Atomic uint32_t cons;
	uint32_t next_cons; /* consumer only */
};

/* One insertion, as its producer saw it. */
struct ins {
	uint64_t t_ns, seq;
	uint32_t prod, k;
	uint16_t cpu, cpu_after;
	bool sync;
};

/* The first violation, with what the consumer knew then. */
struct viol {
	unsigned ring;
	uint32_t pos, prod, cons, ccons;
	uint64_t w0, w1, prev0, prev1, late0, late1, t_ns;
};

struct rig {
	unsigned nrings, shift;
	struct hwt__rseq_ring *rings;
	struct queue *q;
	uint64_t *slots, *shadow; /* shadow: the last entry consumed from each slot */
	hwt__rseq_insert_fn *insert;
	hwt__rseq_publish_fn *publish;
	unsigned nprod;
	uint64_t per_prod; /* entries each producer inserts */
	unsigned kmax; /* at most RSEQRIG_KMAX */
	unsigned kbig; /* not 0: an eighth of the calls kbig..kbig + 32 entries */
	bool pin;          /* producer i starts on online CPU i % n */
	_Atomic bool prod_done, stop;
	_Atomic unsigned running;
	pthread_t prod_th[MAX_PRODUCERS];
	/* consumer's results (read after join) */
	uint8_t *seen[MAX_PRODUCERS];             /* one bit per seq: exactly once */
	uint64_t next_seq[MAX_PRODUCERS][MAX_CPUS]; /* per ring: order */
	uint64_t consumed, violations, empty_polls;
	char first[200];
	struct viol v;
	/* producers' results */
	struct ins *log[MAX_PRODUCERS];
	_Atomic uint64_t inserted[MAX_PRODUCERS], eagain, ring_used[MAX_CPUS], syncs, moved;
	_Atomic uint64_t nt; /* calls inserted with HWT__RSEQ_K_NT */
	_Atomic uint64_t moved_real; /* of moved: not asked for (HWT__RSEQ_K_NO_PUBLISH) */
	_Atomic int error;
	_Atomic uint64_t moves;
};

/* The storm's signal handler's state (one storm at a time). */
struct rseqrig_sg {
	int cpus[MAX_CPUS];
	unsigned ncpus, hop_every;
	_Atomic uint64_t signals, hops, hop_errors;
};
extern struct rseqrig_sg rseqrig_sg;

/* A counter, read as a statistic (after the joins, or a log line). */
static inline unsigned long long rseqrig_stat(_Atomic uint64_t *a)
{
	return atomic_load_explicit(a, memory_order_relaxed);
}

/* The build a name gives ("commit", "post", "nocpu", "msiaddr", "pubout", "ntfence", "pubcpu";
 * anything else: the test build); its fn is NULL where the arch has no
 * assembly. */
struct build rseqrig_build(const char *name);
/* The contract's "another CPU's ring": pinned to the CPU it runs on, a
 * publish of the next CPU's ring (holding unpublished entries) returns
 * HWT__RSEQ_MOVED and stores nothing.  Skips with one possible CPU. */
bool rseqrig_publish_elsewhere_refused(hwt__rseq_publish_fn *publish);
/* The mutant HWT_RSEQ_TEST_BROKEN names, or NULL. */
const char *rseqrig_want_broken(void);
uint64_t rseqrig_now_ns(void);
uint64_t rseqrig_env_u64(const char *name, uint64_t dflt);
/* HWT_STRESS_MS, default 400. */
uint64_t rseqrig_stress_ms(void);
/* Skips the test when the rseq path cannot run here (and says why). */
void rseqrig_skip_without_rseq(void);
/* rseqrig_sg.cpus: the CPUs this process may run on. */
void rseqrig_online_cpus(void);
/* A rig of one ring of 2^shift entries per possible CPU. */
void rseqrig_init(struct rig *r, unsigned shift);
void rseqrig_free(struct rig *r);
/* Producers (with a storm: signals, hops, moves) and the consumer until the
 * producers inserted per_prod entries or ms passed; returns the consumer's
 * violations, after checking that nothing is missing (a failure unless
 * allow_violations). */
uint64_t rseqrig_run(struct rig *r, bool storm, uint64_t ms, bool allow_violations);

#endif
