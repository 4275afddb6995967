/* SPDX-License-Identifier: MIT */
/*
 * One CPU's probe, run by a thread already pinned to that CPU.
 *
 * 1. Fault check (fault.c): one iteration of the word loop on misaligned
 *    addresses under a signal guard, with a perf counter of kernel alignment
 *    faults around it.  A signal -> UNSUPPORTED, a counted fault -> EMULATED;
 *    either way no timing.
 * 2. Timing as the kernel does it: a private 16 KiB buffer first touched
 *    here, dst at offset 1, src 8 KiB + 2 further, 8064 bytes, one warm-up,
 *    minimum per loop.  Default: word and byte samples alternate until both
 *    minima stop improving or the budget runs out.  Kernel window: 8 ms of
 *    words, then 8 ms of bytes.
 */
#include "misaligned/misaligned.h"

#include "arch/arch.h"
#include "arch/hwprobe.h"
#include "common/time.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#define DST_OFFSET 1u
#define SRC_OFFSET (DST_OFFSET + HWT_MISALIGNED_BUFFER_SIZE / 2 + 2u)

/* A sample must span this many counter steps; else repeat the copy inside it. */
#define COARSE_STEPS 32u
#define MAX_REPS 4096u
#define MIN_PAIRS 2u           /* even when the budget is gone */
#define MAX_SAMPLES (1u << 22) /* per loop: bounds a stuck clock */
#define KEEP_SAMPLES 4096u     /* per loop, for the median */

typedef void (*copy_fn)(void *, const void *, size_t);

/* --- 2. timing ------------------------------------------------------------ */

struct loop {
	copy_fn fn;
	struct hwt__mintrack min;
	uint32_t *kept;
	unsigned nkept;
};

static uint64_t time_copies(copy_fn fn, unsigned char *dst, const unsigned char *src, unsigned reps)
{
	uint64_t t0 = hwt__counter();

	for (unsigned i = 0; i < reps; i++)
		fn(dst, src, HWT_MISALIGNED_COPY_SIZE);
	return hwt__counter() - t0;
}

static void sample(struct loop *l, unsigned char *dst, const unsigned char *src, unsigned reps)
{
	uint64_t t = time_copies(l->fn, dst, src, reps);

	hwt__mintrack_add(&l->min, t);
	if (l->nkept < KEEP_SAMPLES)
		l->kept[l->nkept++] = t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

/* Smallest nonzero difference between two counter reads (0: it never moved). */
static uint64_t counter_step(void)
{
	uint64_t best = 0;

	for (int k = 0; k < 8; k++) {
		uint64_t a = hwt__counter(), b = a;

		for (int i = 0; i < 100000 && b == a; i++)
			b = hwt__counter();
		if (b > a && (!best || b - a < best))
			best = b - a;
	}
	return best;
}

/* Copies per sample so that a word sample spans COARSE_STEPS counter steps. */
static unsigned pick_reps(unsigned char *dst, const unsigned char *src)
{
	uint64_t step = counter_step();
	unsigned reps = 1;

	if (!step)
		return 1; /* a dead counter: the zero minimum reports it */
	while (reps < MAX_REPS &&
	       time_copies(hwt__copy_words_unaligned, dst, src, reps) < COARSE_STEPS * step)
		reps *= 2;
	return reps;
}

static void run_adaptive(struct loop *w, struct loop *b, unsigned char *dst,
			 const unsigned char *src, unsigned reps, uint64_t deadline, bool *budget_hit)
{
	unsigned pairs = 0;

	/* Alternate so that a frequency or contention change hits both loops. */
	for (;;) {
		sample(w, dst, src, reps);
		sample(b, dst, src, reps);
		pairs++;
		if (pairs < MIN_PAIRS)
			continue;
		if (hwt__mintrack_stable(&w->min, &b->min))
			break;
		/* the clock every 4 pairs: a pair is microseconds, the budget a millisecond */
		if (((pairs & 3) == 0 && hwt__now_ns() >= deadline) || pairs >= MAX_SAMPLES) {
			*budget_hit = true;
			break;
		}
	}
}

static void run_window(struct loop *l, unsigned char *dst, const unsigned char *src)
{
	uint64_t end = hwt__now_ns() + HWT_MISALIGNED_KERNEL_WINDOW_NS;

	l->fn(dst, src, HWT_MISALIGNED_COPY_SIZE); /* warm-up */
	do
		sample(l, dst, src, 1);
	while (hwt__now_ns() < end && l->min.n < MAX_SAMPLES);
}

/* Each loop alone must reproduce the source (guards against a loop that
 * silently skips its stores). */
static bool copies_copy(unsigned char *dst, const unsigned char *src)
{
	copy_fn fns[] = { hwt__copy_words_unaligned, hwt__copy_bytes_unaligned };

	for (unsigned i = 0; i < 2; i++) {
		memset(dst, 0, HWT_MISALIGNED_COPY_SIZE);
		fns[i](dst, src, HWT_MISALIGNED_COPY_SIZE);
		if (memcmp(dst, src, HWT_MISALIGNED_COPY_SIZE))
			return false;
	}
	return true;
}

static uint64_t ticks_to_ns(uint64_t ticks, unsigned reps, double ns_per_tick)
{
	return (uint64_t)((double)ticks * ns_per_tick / reps + 0.5);
}

static long involuntary_switches(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? 0 : ru.ru_nivcsw;
}

static void measure_timing(const struct hwt__measure_cfg *cfg, struct hwt_misaligned_cpu *out,
			   struct hwt__probe_obs *obs, uint64_t start_ns)
{
	struct loop w = { .fn = hwt__copy_words_unaligned }, b = { .fn = hwt__copy_bytes_unaligned };
	unsigned char *buf, *dst, *src;
	uint64_t c0, c1, n0, n1, hz;
	bool budget_hit = false;
	double ns_per_tick = 0;
	unsigned reps = 1;

	/* Own pages, touched first by this pinned thread: local memory, no
	 * lines shared with another CPU's probe.  DONTFORK: a fork by the host
	 * program must not make them copy-on-write mid-timing. */
	buf = mmap(NULL, HWT_MISALIGNED_BUFFER_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	w.kept = malloc(2 * KEEP_SAMPLES * sizeof(uint32_t));
	if (buf == MAP_FAILED || !w.kept) {
		out->status = -ENOMEM;
		goto out;
	}
	b.kept = w.kept + KEEP_SAMPLES;
	madvise(buf, HWT_MISALIGNED_BUFFER_SIZE, MADV_DONTFORK);
	for (unsigned i = 0; i < HWT_MISALIGNED_BUFFER_SIZE; i++)
		buf[i] = (unsigned char)(i * 7 + 3);
	dst = buf + DST_OFFSET;
	src = buf + SRC_OFFSET;
	hwt__mintrack_init(&w.min);
	hwt__mintrack_init(&b.min);

	n0 = hwt__now_ns();
	c0 = hwt__counter();
	if (cfg->kernel_window) {
		run_window(&w, dst, src);
		run_window(&b, dst, src);
	} else {
		w.fn(dst, src, HWT_MISALIGNED_COPY_SIZE); /* warm-up */
		b.fn(dst, src, HWT_MISALIGNED_COPY_SIZE);
		reps = pick_reps(dst, src);
		run_adaptive(&w, &b, dst, src, reps, start_ns + cfg->budget_ns, &budget_hit);
	}
	c1 = hwt__counter();
	n1 = hwt__now_ns();

	/* Calibrate the counter against CLOCK_MONOTONIC over this very probe. */
	hz = hwt__counter_hz();
	if (hz)
		ns_per_tick = 1e9 / (double)hz;
	else if (c1 > c0 && n1 > n0)
		ns_per_tick = (double)(n1 - n0) / (double)(c1 - c0);

	obs->word_ticks = w.min.min;
	obs->byte_ticks = b.min.min;
	obs->copy_ok = copies_copy(dst, src);
	out->reps = reps;
	out->samples = w.min.n < b.min.n ? w.min.n : b.min.n;
	out->word_ns = ticks_to_ns(w.min.min, reps, ns_per_tick);
	out->byte_ns = ticks_to_ns(b.min.min, reps, ns_per_tick);
	out->word_median_ns = ticks_to_ns(hwt__median_u32(w.kept, w.nkept), reps, ns_per_tick);
	out->byte_median_ns = ticks_to_ns(hwt__median_u32(b.kept, b.nkept), reps, ns_per_tick);
	if (budget_hit)
		out->notes |= HWT_MISALIGNED_NOTE_BUDGET;
out:
	free(w.kept);
	if (buf != MAP_FAILED)
		munmap(buf, HWT_MISALIGNED_BUFFER_SIZE);
}

/* An iteration of 16 accesses slower than this is trapping somewhere. */
#define TRAP_SUSPECT_NS 2000u

void hwt__misaligned_measure(int cpu, const struct hwt__measure_cfg *cfg,
			     struct hwt_misaligned_cpu *out)
{
	struct hwt__probe_obs obs = { 0, 0, 0, -1, false };
	struct hwt__fault_result fr;
	struct hwt__verdict v;
	uint64_t start = hwt__now_ns();
	long csw = involuntary_switches();
	bool counted = false;
	int r;

	out->hwprobe = hwt__hwprobe_scalar(cpu);
	/* Does it fault?  Count kernel traps only if it looks trapped: the
	 * counter is costly to open (see fault.c). */
	r = hwt__fault_check(cfg->force_sigbus, false, &fr);
	if (!r && !fr.sig && fr.iter_ns > TRAP_SUSPECT_NS) {
		r = hwt__fault_check(false, true, &fr);
		counted = true;
	}
	out->check_ns = hwt__now_ns() - start;
	if (r)
		out->notes |= HWT_MISALIGNED_NOTE_CHECK_FAILED; /* time it anyway */
	obs.fault_signal = fr.sig;
	obs.align_faults = fr.faults;
	if (!obs.fault_signal && obs.align_faults <= 0) {
		measure_timing(cfg, out, &obs, start);
		if (out->status) { /* no buffer: nothing was measured */
			out->speed = HWT_MISALIGNED_UNKNOWN;
			out->probe_ns = hwt__now_ns() - start;
			return;
		}
		/* Not faster than bytes: kernel emulation or slow hardware?
		 * Only the fault count tells. */
		if (!r && !counted && !hwt__obs_fast(&obs)) {
			uint64_t t = hwt__now_ns();

			if (hwt__fault_check(false, true, &fr) == 0)
				obs.align_faults = fr.faults;
			out->check_ns += hwt__now_ns() - t;
		}
	}
	out->fault_signal = obs.fault_signal;
	out->align_faults = obs.align_faults;

	hwt__misaligned_classify(&obs, &v);
	out->speed = v.speed;
	out->ratio_x100 = v.ratio_x100;
	out->notes |= v.notes;
	if (r) /* no perf verdict either way: the check itself did not run */
		out->notes &= ~HWT_MISALIGNED_NOTE_NO_PERF;
	if (sched_getcpu() != cpu)
		out->notes |= HWT_MISALIGNED_NOTE_MIGRATED;
	out->preempted = involuntary_switches() - csw;
	out->probe_ns = hwt__now_ns() - start;
}
