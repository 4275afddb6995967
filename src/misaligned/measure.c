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
 * 3. Each vector unit (arch.h): present?  (the HWCAP answer, else one
 *    instruction under the signal guard: SIGILL = absent = UNSUPPORTED).
 *    Then step 2 with the vector loops on the same buffer, all under the
 *    guard: a signal at a misaligned vector access is UNSUPPORTED.
 * 4. Split penalties: word loads and stores at an aligned address, across
 *    a line and across a page, min of interleaved samples, as ratios.
 */
#include "misaligned/misaligned.h"

#include "arch/arch.h"
#include "arch/hwprobe.h"
#include "common/time.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

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

struct probe_mem;
static unsigned pick_reps(copy_fn words, struct probe_mem *m);

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

/* hwt__misaligned_test_unknown's count: measurements still to spoil. */
static _Atomic unsigned test_unknown;

void hwt__misaligned_test_unknown(unsigned n)
{
	atomic_store_explicit(&test_unknown, n, memory_order_relaxed); /* orders nothing */
}

/* One spoilt measurement taken from the count, or false. */
static bool test_unknown_take(void)
{
	unsigned n = atomic_load_explicit(&test_unknown, memory_order_relaxed);

	while (n && !atomic_compare_exchange_weak_explicit(&test_unknown, &n, n - 1,
							   memory_order_relaxed, memory_order_relaxed))
		;
	return n != 0;
}

/* Each loop alone must reproduce the source (guards against a loop that
 * silently skips its stores). */
static bool copies_copy(copy_fn wf, copy_fn bf, unsigned char *dst, const unsigned char *src)
{
	copy_fn fns[] = { wf, bf };

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

/* Counter against CLOCK_MONOTONIC over one phase of the probe. */
struct clockcal {
	uint64_t c0, n0;
};

static void cal_begin(struct clockcal *k)
{
	k->n0 = hwt__now_ns();
	k->c0 = hwt__counter();
}

static double cal_end(const struct clockcal *k)
{
	uint64_t c1 = hwt__counter(), n1 = hwt__now_ns(), hz = hwt__counter_hz();

	if (hz)
		return 1e9 / (double)hz;
	if (c1 > k->c0 && n1 > k->n0)
		return (double)(n1 - k->n0) / (double)(c1 - k->c0);
	return 0;
}

/* What the probe of one pair of copy loops (scalar or vector) gave. */
struct pair_result {
	uint64_t word_ticks, byte_ticks; /* minima per sample */
	uint64_t word_ns, byte_ns, word_median_ns, byte_median_ns;
	unsigned samples, reps;
	bool budget_hit, copy_ok;
};

/* The per-CPU memory, allocated and first touched by the pinned thread. */
struct probe_mem {
	unsigned char *buf, *dst, *src; /* HWT_MISALIGNED_BUFFER_SIZE, kernel offsets */
	unsigned char *split;           /* two pages */
	size_t page;
	uint32_t *kept;                 /* 2 x KEEP_SAMPLES */
	uint64_t step;                  /* counter step, 0 unknown yet */
};

/* Time words against bytes as the kernel does (see the top of the file). */
static void time_pair(copy_fn wf, copy_fn bf, struct probe_mem *m, bool kernel_window,
		      uint64_t deadline, struct pair_result *pr)
{
	struct loop w = { .fn = wf, .kept = m->kept }, b = { .fn = bf, .kept = m->kept + KEEP_SAMPLES };
	struct clockcal cal;
	double ns_per_tick;
	unsigned reps = 1;
	bool budget_hit = false;

	hwt__mintrack_init(&w.min);
	hwt__mintrack_init(&b.min);
	cal_begin(&cal);
	if (kernel_window) {
		run_window(&w, m->dst, m->src);
		run_window(&b, m->dst, m->src);
	} else {
		w.fn(m->dst, m->src, HWT_MISALIGNED_COPY_SIZE); /* warm-up */
		b.fn(m->dst, m->src, HWT_MISALIGNED_COPY_SIZE);
		reps = pick_reps(wf, m);
		run_adaptive(&w, &b, m->dst, m->src, reps, deadline, &budget_hit);
	}
	ns_per_tick = cal_end(&cal);

	pr->word_ticks = w.min.min;
	pr->byte_ticks = b.min.min;
	pr->copy_ok = copies_copy(wf, bf, m->dst, m->src);
	pr->reps = reps;
	pr->samples = w.min.n < b.min.n ? w.min.n : b.min.n;
	pr->word_ns = ticks_to_ns(w.min.min, reps, ns_per_tick);
	pr->byte_ns = ticks_to_ns(b.min.min, reps, ns_per_tick);
	pr->word_median_ns = ticks_to_ns(hwt__median_u32(w.kept, w.nkept), reps, ns_per_tick);
	pr->byte_median_ns = ticks_to_ns(hwt__median_u32(b.kept, b.nkept), reps, ns_per_tick);
	pr->budget_hit = budget_hit;
}

static void measure_timing(const struct hwt__measure_cfg *cfg, struct probe_mem *m,
			   struct hwt_misaligned_cpu *out, struct hwt__probe_obs *obs,
			   uint64_t start_ns, struct pair_result *keep)
{
	struct pair_result pr;

	time_pair(hwt__copy_words_unaligned, hwt__copy_bytes_unaligned, m, cfg->kernel_window,
		  start_ns + cfg->budget_ns, &pr);
	*keep = pr;
	obs->word_ticks = pr.word_ticks;
	obs->byte_ticks = pr.byte_ticks;
	obs->copy_ok = pr.copy_ok && !test_unknown_take();
	out->reps = pr.reps;
	out->samples = pr.samples;
	out->word_ns = pr.word_ns;
	out->byte_ns = pr.byte_ns;
	out->word_median_ns = pr.word_median_ns;
	out->byte_median_ns = pr.byte_median_ns;
	if (pr.budget_hit)
		out->notes |= HWT_MISALIGNED_NOTE_BUDGET;
}

/* Copies per sample so that a word sample spans COARSE_STEPS counter steps. */
static unsigned pick_reps(copy_fn words, struct probe_mem *m)
{
	unsigned reps = 1;

	if (!m->step)
		return 1; /* a dead counter: the zero minimum reports it */
	while (reps < MAX_REPS && time_copies(words, m->dst, m->src, reps) < COARSE_STEPS * m->step)
		reps *= 2;
	return reps;
}

/* --- 3. vector units ------------------------------------------------------ */

struct vec_job {
	struct hwt__vec_loops loops;
	struct probe_mem *m;
	bool kernel_window;
	uint64_t deadline;
	const struct pair_result *bytes; /* the scalar pair, when its byte loop is ours */
	struct pair_result pr;
};

/* Only the word loop, its byte side taken from the scalar pair (x86, whose
 * vector byte copy is the scalar one): a byte sample costs ten word samples,
 * and the same loop on the same buffer needs no second minimum. */
static void time_words(struct vec_job *j)
{
	struct probe_mem *m = j->m;
	struct loop w = { .fn = j->loops.words, .kept = m->kept };
	const struct pair_result *sb = j->bytes;
	struct clockcal cal;
	double ns_per_tick;
	unsigned reps, n = 0;

	hwt__mintrack_init(&w.min);
	cal_begin(&cal);
	w.fn(m->dst, m->src, HWT_MISALIGNED_COPY_SIZE); /* warm-up */
	reps = pick_reps(w.fn, m);
	for (;;) {
		sample(&w, m->dst, m->src, reps);
		n++;
		if (hwt__mintrack_stable(&w.min, &w.min))
			break;
		if (((n & 3) == 0 && hwt__now_ns() >= j->deadline) || n >= MAX_SAMPLES) {
			j->pr.budget_hit = true;
			break;
		}
	}
	ns_per_tick = cal_end(&cal);
	/* The two minima per copy, on a common scale: word * scalar reps
	 * against byte * these reps. */
	j->pr.word_ticks = w.min.min * sb->reps;
	j->pr.byte_ticks = sb->byte_ticks * reps;
	j->pr.copy_ok = copies_copy(j->loops.words, j->loops.bytes, m->dst, m->src);
	j->pr.reps = reps;
	j->pr.samples = w.min.n;
	j->pr.word_ns = ticks_to_ns(w.min.min, reps, ns_per_tick);
	j->pr.byte_ns = sb->byte_ns;
}

static void vec_touch(void *arg)
{
	((struct vec_job *)arg)->loops.touch();
}

static void vec_time(void *arg)
{
	struct vec_job *j = arg;

	if (j->bytes && !j->kernel_window && j->loops.bytes == hwt__copy_bytes_unaligned)
		time_words(j);
	else
		time_pair(j->loops.words, j->loops.bytes, j->m, j->kernel_window, j->deadline,
			  &j->pr);
}

/* One vector unit: present?  Then the timing, all of it under the signal
 * guard: a trap at any misaligned vector access makes it UNSUPPORTED. */
static void measure_vector(unsigned kind, const struct hwt__measure_cfg *cfg, struct probe_mem *m,
			   uint64_t deadline, const struct pair_result *scalar,
			   struct hwt_misaligned_vector *v)
{
	struct hwt__probe_obs obs = { 0, 0, 0, 0, false };
	struct vec_job j = { .m = m, .kernel_window = cfg->kernel_window, .deadline = deadline,
			     .bytes = scalar };
	struct hwt__verdict vd;
	int present = hwt__vec_get(kind, &j.loops), sig = 0;

	v->unit = j.loops.name;
	if (present == -ENOSYS) {
		v->speed = HWT_MISALIGNED_UNKNOWN;
		v->notes |= HWT_MISALIGNED_NOTE_NO_LOOP;
		return;
	}
	if (present < 0 && j.loops.touch) {
		if (hwt__guarded_call(vec_touch, &j, 0, &sig)) {
			v->notes |= HWT_MISALIGNED_NOTE_CHECK_FAILED;
			return; /* UNKNOWN: no guard, so no way to ask */
		}
		present = sig ? 0 : 1;
	}
	if (present <= 0) { /* -ENODEV: the architecture has no such unit */
		v->speed = HWT_MISALIGNED_UNSUPPORTED;
		v->notes |= HWT_MISALIGNED_NOTE_NO_UNIT;
		v->unit = NULL; /* none timed */
		return;
	}
	if (hwt__guarded_call(vec_time, &j, cfg->force_vector_trap ? SIGBUS : 0, &sig)) {
		v->notes |= HWT_MISALIGNED_NOTE_CHECK_FAILED;
		return;
	}
	obs.fault_signal = sig;
	if (!sig) {
		obs.word_ticks = j.pr.word_ticks;
		obs.byte_ticks = j.pr.byte_ticks;
		obs.copy_ok = j.pr.copy_ok;
		v->word_ns = j.pr.word_ns;
		v->byte_ns = j.pr.byte_ns;
		v->samples = j.pr.samples;
		if (j.pr.budget_hit)
			v->notes |= HWT_MISALIGNED_NOTE_BUDGET;
	}
	v->fault_signal = sig;
	hwt__vector_classify(&obs, &vd);
	v->speed = vd.speed;
	v->ratio_x100 = vd.ratio_x100;
	v->notes |= vd.notes;
}

/* --- 4. split penalties --------------------------------------------------- */

#define SPLIT_ACCESSES 64u /* per call of a split loop */
#define SPLIT_ROUNDS 8u    /* samples per kind, interleaved */
enum { SP_ALIGNED, SP_LINE, SP_PAGE, SP_NADDR };

struct split_job {
	struct probe_mem *m;
	struct hwt_misaligned_split *out;
	uint64_t deadline;
	size_t line;
};

static uint64_t time_split(bool store, unsigned char *p, unsigned reps)
{
	uint64_t t0 = hwt__counter();

	for (unsigned i = 0; i < reps; i++) {
		if (store)
			hwt__split_stores(p, SPLIT_ACCESSES);
		else
			hwt__split_loads(p, SPLIT_ACCESSES);
	}
	return hwt__counter() - t0;
}

static uint64_t min3_split(bool store, unsigned char *p, unsigned reps)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 3; i++) {
		uint64_t t = time_split(store, p, reps);

		if (t < best)
			best = t;
	}
	return best;
}

static unsigned ratio_x100(uint64_t t, unsigned rt, uint64_t base, unsigned rb)
{
	/* per-access times t / rt against base / rb */
	double r = base ? (double)t * rb * 100.0 / ((double)base * rt) + 0.5 : 0;

	return r > UINT32_MAX ? UINT32_MAX : (unsigned)r;
}

static void split_time(void *arg)
{
	struct split_job *j = arg;
	struct probe_mem *m = j->m;
	struct hwt_misaligned_split *s = j->out;
	size_t line = j->line;
	unsigned char *addr[SP_NADDR];
	uint64_t min[2][SP_NADDR];
	unsigned reps[2][SP_NADDR];
	struct clockcal cal;
	double ns_per_tick;

	if (2 * line >= m->page)
		line = 64;
	/* aligned: a word inside one line; line: 4 bytes in each of two lines
	 * of one page; page: 4 bytes in each of two pages */
	addr[SP_ALIGNED] = m->split + line;
	addr[SP_LINE] = m->split + 2 * line - 4;
	addr[SP_PAGE] = m->split + m->page - 4;
	s->line_bytes = (unsigned)line;
	s->page_bytes = (unsigned)m->page;
	cal_begin(&cal);
	/* Each kind its own repeat count, so that every sample spans
	 * COARSE_STEPS counter steps however slow that access is. */
	for (int st = 0; st < 2; st++) {
		for (int a = 0; a < SP_NADDR; a++) {
			unsigned r = 1;

			time_split(st, addr[a], 1); /* warm-up: lines and TLB */
			/* the fastest of three tries: one slow try (an interrupt,
			 * an emulator translating the loop) must not pick a
			 * count whose later samples read 0 ticks */
			while (r < MAX_REPS && min3_split(st, addr[a], r) < COARSE_STEPS * m->step)
				r *= 2;
			reps[st][a] = r;
			min[st][a] = UINT64_MAX;
		}
	}
	/* Interleaved rounds: a disturbance hits every kind alike. */
	for (unsigned k = 0; k < SPLIT_ROUNDS; k++) {
		for (int st = 0; st < 2; st++) {
			for (int a = 0; a < SP_NADDR; a++) {
				uint64_t t = time_split(st, addr[a], reps[st][a]);

				if (t < min[st][a])
					min[st][a] = t;
			}
		}
		if (k >= 2 && hwt__now_ns() >= j->deadline)
			break;
	}
	ns_per_tick = cal_end(&cal);
	s->line_load = ratio_x100(min[0][SP_LINE], reps[0][SP_LINE], min[0][SP_ALIGNED],
				  reps[0][SP_ALIGNED]);
	s->page_load = ratio_x100(min[0][SP_PAGE], reps[0][SP_PAGE], min[0][SP_ALIGNED],
				  reps[0][SP_ALIGNED]);
	s->line_store = ratio_x100(min[1][SP_LINE], reps[1][SP_LINE], min[1][SP_ALIGNED],
				   reps[1][SP_ALIGNED]);
	s->page_store = ratio_x100(min[1][SP_PAGE], reps[1][SP_PAGE], min[1][SP_ALIGNED],
				   reps[1][SP_ALIGNED]);
	s->aligned_load_ps = (uint64_t)((double)min[0][SP_ALIGNED] * ns_per_tick * 1000.0 /
					 ((double)reps[0][SP_ALIGNED] * SPLIT_ACCESSES) + 0.5);
	s->aligned_store_ps = (uint64_t)((double)min[1][SP_ALIGNED] * ns_per_tick * 1000.0 /
					  ((double)reps[1][SP_ALIGNED] * SPLIT_ACCESSES) + 0.5);
}

static void measure_split(struct probe_mem *m, uint64_t deadline, unsigned line,
			  struct hwt_misaligned_split *s)
{
	struct split_job j = { m, s, deadline, line >= 16 && line <= 512 && !(line & (line - 1))
						       ? line : 64 };
	int sig = 0;

	/* Guarded too: a page-crossing access may fault where a line-crossing
	 * one did not.  A fault leaves the ratios 0 (not measured). */
	if (hwt__guarded_call(split_time, &j, 0, &sig) || sig)
		*s = (struct hwt_misaligned_split){ 0 };
}

/* --- the per-CPU memory --------------------------------------------------- */

static void mem_free(struct probe_mem *m)
{
	free(m->kept);
	if (m->buf && m->buf != MAP_FAILED)
		munmap(m->buf, HWT_MISALIGNED_BUFFER_SIZE);
	if (m->split && m->split != MAP_FAILED)
		munmap(m->split, 2 * m->page);
}

/* Own pages, touched first by this pinned thread: local memory, no lines
 * shared with another CPU's probe.  DONTFORK: a fork by the host program
 * must not make them copy-on-write mid-timing. */
static int mem_alloc(struct probe_mem *m, bool split)
{
	long pg = sysconf(_SC_PAGESIZE);

	memset(m, 0, sizeof(*m));
	m->page = pg > 0 ? (size_t)pg : 4096;
	m->buf = mmap(NULL, HWT_MISALIGNED_BUFFER_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (split)
		m->split = mmap(NULL, 2 * m->page, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	m->kept = malloc(2 * KEEP_SAMPLES * sizeof(uint32_t));
	if (m->buf == MAP_FAILED || m->split == MAP_FAILED || !m->kept) {
		mem_free(m);
		memset(m, 0, sizeof(*m));
		return -ENOMEM;
	}
	madvise(m->buf, HWT_MISALIGNED_BUFFER_SIZE, MADV_DONTFORK);
	for (unsigned i = 0; i < HWT_MISALIGNED_BUFFER_SIZE; i++)
		m->buf[i] = (unsigned char)(i * 7 + 3);
	if (m->split) {
		madvise(m->split, 2 * m->page, MADV_DONTFORK);
		memset(m->split, 0x5a, 2 * m->page);
	}
	m->dst = m->buf + DST_OFFSET;
	m->src = m->buf + SRC_OFFSET;
	m->step = counter_step();
	return 0;
}

/* A scalar pair whose byte minimum can stand in for a vector probe's. */
static bool pr_usable(const struct pair_result *pr)
{
	return pr->copy_ok && pr->byte_ticks && pr->byte_ticks != UINT64_MAX && pr->reps;
}

/* An iteration of 16 accesses slower than this is trapping somewhere. */
#define TRAP_SUSPECT_NS 2000u

void hwt__misaligned_measure(int cpu, const struct hwt__measure_cfg *cfg,
			     struct hwt_misaligned_cpu *out)
{
	struct hwt__probe_obs obs = { 0, 0, 0, -1, false };
	struct hwt__fault_result fr = { 0, -1, 0 };
	struct hwt__verdict v;
	struct probe_mem m;
	struct pair_result scalar_pr;
	bool scalar_ok = false;
	uint64_t start = hwt__now_ns(), t;
	long csw = involuntary_switches();
	bool counted = false;
	int r = 0;

	if (cfg->vector)
		out->vector.hwprobe = hwt__hwprobe_vector(cpu);
	if (mem_alloc(&m, cfg->vector)) { /* nothing can be measured */
		out->status = -ENOMEM;
		out->speed = HWT_MISALIGNED_UNKNOWN;
		out->probe_ns = hwt__now_ns() - start;
		return;
	}
	if (cfg->scalar) {
		out->hwprobe = hwt__hwprobe_scalar(cpu);
		/* Does it fault?  Count kernel traps only if it looks trapped:
		 * the counter is costly to open (see fault.c). */
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
			measure_timing(cfg, &m, out, &obs, start, &scalar_pr);
			scalar_ok = pr_usable(&scalar_pr);
			/* Not faster than bytes: kernel emulation or slow
			 * hardware?  Only the fault count tells. */
			if (!r && !counted && !hwt__obs_fast(&obs)) {
				t = hwt__now_ns();
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
	}
	if (cfg->vector) {
		/* The scalar part had its budget; each vector unit gets a
		 * quarter of it (a unit the CPU lacks returns at once), the
		 * splits a sixteenth. */
		uint64_t slice = cfg->budget_ns / 4;

		t = hwt__now_ns();
		measure_vector(HWT__VEC_MAIN, cfg, &m, t + slice, scalar_ok ? &scalar_pr : NULL,
			       &out->vector);
		measure_vector(HWT__VEC_WIDE, cfg, &m, hwt__now_ns() + slice,
			       scalar_ok ? &scalar_pr : NULL, &out->avx2);
		measure_vector(HWT__VEC_WIDE512, cfg, &m, hwt__now_ns() + slice,
			       scalar_ok ? &scalar_pr : NULL, &out->avx512);
		out->vector_ns = hwt__now_ns() - t;
		t = hwt__now_ns();
		/* A faulting or kernel-emulated word access: no split timing. */
		if (!obs.fault_signal && obs.align_faults <= 0)
			measure_split(&m, t + cfg->budget_ns / 16, cfg->line_bytes, &out->split);
		out->split_ns = hwt__now_ns() - t;
	}
	mem_free(&m);
	if (sched_getcpu() != cpu)
		out->notes |= HWT_MISALIGNED_NOTE_MIGRATED;
	out->preempted = involuntary_switches() - csw;
	out->probe_ns = hwt__now_ns() - start;
}
