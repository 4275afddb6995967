/* SPDX-License-Identifier: MIT */
/*
 * The misaligned-access probe's cost and stability on this machine, as JSON:
 *
 *   - per-CPU probe time at the default budget and with the kernel's
 *     2 x 8 ms window;
 *   - wall time of a whole probe, parallel against serial, interleaved
 *     (P S P S ...) so both see the same machine state;
 *   - verdict stability: how many of N consecutive default-budget runs give
 *     the same per-CPU verdicts and the same summary, scalar and vector
 *     (every vector unit: "vector" and, on x86_64, "avx2");
 *   - the vector probe's and the split penalties' share of the per-CPU time
 *     (per_cpu_probe_ns includes both), and the last run's per-CPU vector
 *     and split results;
 *   - scaling: for the first 1..N allowed CPUs, parallel and serial wall
 *     time and per-CPU time, at the default budget and the kernel window,
 *     extrapolated to 64 CPUs (model in "extrapolation_64");
 *   - stability per budget (--budgets-us, default 100,200,500,1000,16000 us,
 *     the runs of all budgets interleaved), idle and with a spinning thread
 *     on the last allowed CPU ("busy"), scalar and vector verdicts;
 *   - "vector": per unit, the verdict and ratio per CPU (last run), the
 *     verdict stability over the default-budget runs and the time per CPU;
 *     "split": per CPU, the line/page load/store penalties (last run), their
 *     spread over the runs and the time per CPU.
 *
 * Never run by make check.  Uses only the public API; the cache is off.
 *
 *   bench_probe [--runs N] [--serial-runs N] [--kernel-runs N] [--budget-ms N]
 *               [--budget-us N] [--scale-runs N] [--scale-kernel-runs N]
 *               [--stab-runs N] [--budgets-us LIST] [--no-busy]
 */
#include <hwtune/hwtune.h>

#include "prog/cli.h"
#include "prog/json.h"
#include "prog/stats.h"

#include "prog/sys.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct series {
	uint64_t *v;
	size_t n, cap;
};

static void add(struct series *s, uint64_t x)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		uint64_t *nv = realloc(s->v, cap * sizeof(*nv));

		if (!nv) {
			cli_error("out of memory");
			exit(1);
		}
		s->v = nv;
		s->cap = cap;
	}
	s->v[s->n++] = x;
}

/* "name": {"n", "min", "p50", "p90", "p99", "max"} (nearest rank; sorts s). */
static void print_series(struct json *j, const char *name, struct series *s)
{
	struct stat_summary m;

	stat_sort_u64(s->v, s->n);
	stat_summary_u64(s->v, s->n, &m);
	json_nl(j, "    ");
	json_key(j, name);
	json_obj(j);
	json_key(j, "n"), json_u64(j, m.n);
	json_key(j, "min"), json_u64(j, m.min);
	json_key(j, "p50"), json_u64(j, m.p50);
	json_key(j, "p90"), json_u64(j, m.p90);
	json_key(j, "p99"), json_u64(j, m.p99);
	json_key(j, "max"), json_u64(j, m.max);
	json_close(j);
}

static void print_vector(struct json *j, const char *name, const struct hwt_misaligned_vector *v)
{
	json_key(j, name);
	json_obj(j);
	json_key(j, "unit");
	if (v->unit)
		json_str(j, v->unit);
	else
		json_str(j, "none");
	json_key(j, "speed"), json_str(j, hwt_misaligned_speed_name(v->speed));
	json_key(j, "ratio"), json_fixed(j, v->ratio_x100 / 100.0, 2);
	json_key(j, "word_ns"), json_u64(j, v->word_ns);
	json_key(j, "byte_ns"), json_u64(j, v->byte_ns);
	json_close(j);
}

struct phase {
	struct series wall, per_cpu, samples, vector, split;
};

static void run_on(const struct hwt_cpus *set, unsigned flags, unsigned budget_us,
		   struct phase *ph, struct hwt_misaligned_report *keep)
{
	struct hwt_misaligned_opts o = { .flags = flags | HWT_MISALIGNED_NO_CACHE,
					 .budget_us = budget_us };
	struct hwt_misaligned_report r;
	int e = hwt_misaligned_probe(set, &o, &r);

	if (e) {
		cli_error("probe: %s", strerror(-e));
		exit(1);
	}
	add(&ph->wall, r.wall_ns);
	for (unsigned i = 0; i < r.n; i++) {
		if (r.cpu[i].status)
			continue;
		add(&ph->per_cpu, r.cpu[i].probe_ns);
		add(&ph->samples, r.cpu[i].samples);
		add(&ph->vector, r.cpu[i].vector_ns);
		add(&ph->split, r.cpu[i].split_ns);
	}
	if (keep)
		*keep = r;
	else
		hwt_misaligned_report_free(&r);
}

static void run(unsigned flags, unsigned budget_us, struct phase *ph,
		struct hwt_misaligned_report *keep)
{
	run_on(NULL, flags, budget_us, ph, keep);
}

static uint64_t p50(struct series *s)
{
	if (!s->n)
		return 0;
	stat_sort_u64(s->v, s->n);
	return s->v[(s->n - 1) / 2];
}

static void phase_free(struct phase *ph)
{
	free(ph->wall.v), free(ph->per_cpu.v), free(ph->samples.v);
	free(ph->vector.v), free(ph->split.v);
	*ph = (struct phase){ 0 };
}

static bool progress;

static void say(const char *fmt, const char *what, unsigned a, unsigned b)
{
	if (progress)
		fprintf(stderr, fmt, what, a, b);
}

/* --- scaling: 1..N CPUs, parallel vs serial ------------------------------ */

struct scale_point {
	unsigned cpus;
	uint64_t par_wall, ser_wall, per_cpu, kpar_wall, kser_wall, kper_cpu;
};

static void scaling(const struct hwt_cpus *all, unsigned runs, unsigned kruns,
		    struct scale_point *pt)
{
	for (unsigned k = 1; k <= all->n; k++) {
		struct hwt_cpus set = HWT_CPUS_INIT;
		struct phase par = { 0 }, ser = { 0 }, kpar = { 0 }, kser = { 0 };

		for (unsigned i = 0; i < k; i++)
			if (hwt_cpus_add(&set, all->cpu[i])) {
				cli_error("out of memory");
				exit(1);
			}
		say("\rbench_probe: %s %u/%u CPUs   ", "scaling", k, all->n);
		for (unsigned i = 0; i < runs; i++) { /* P S P S ... */
			run_on(&set, 0, 0, &par, NULL);
			run_on(&set, HWT_MISALIGNED_SERIAL, 0, &ser, NULL);
		}
		for (unsigned i = 0; i < kruns; i++) {
			run_on(&set, HWT_MISALIGNED_KERNEL_WINDOW, 0, &kpar, NULL);
			run_on(&set, HWT_MISALIGNED_KERNEL_WINDOW | HWT_MISALIGNED_SERIAL, 0, &kser,
			       NULL);
		}
		pt[k - 1] = (struct scale_point){ .cpus = k,
						  .par_wall = p50(&par.wall),
						  .ser_wall = p50(&ser.wall),
						  .per_cpu = p50(&ser.per_cpu),
						  .kpar_wall = p50(&kpar.wall),
						  .kser_wall = p50(&kser.wall),
						  .kper_cpu = p50(&kser.per_cpu) };
		phase_free(&par), phase_free(&ser), phase_free(&kpar), phase_free(&kser);
		hwt_cpus_free(&set);
	}
}

/* Model (printed in the JSON): serial = 64 x per-CPU time; parallel =
 * waves x per-CPU time + the start/join overhead measured here (parallel
 * wall at N CPUs - per-CPU time), waves = ceil(64 / CPUs probing at once):
 * 1 given 64 CPUs.  The overhead grows with the thread count on a real
 * 64-CPU machine: the parallel figure is a lower bound. */
static void extrapolate(struct json *j, const char *name, uint64_t per_cpu, uint64_t par_wall)
{
	uint64_t over = par_wall > per_cpu ? par_wall - per_cpu : 0;

	json_nl(j, "    ");
	json_key(j, name);
	json_obj(j);
	json_key(j, "per_cpu_ns"), json_u64(j, per_cpu);
	json_key(j, "overhead_ns"), json_u64(j, over);
	json_key(j, "serial_64_ns"), json_u64(j, 64 * per_cpu);
	json_key(j, "parallel_64_ns"), json_u64(j, per_cpu + over);
	json_close(j);
}

/* --- stability per budget, idle and busy --------------------------------- */

#define MAX_BUDGETS 8

struct spinner {
	_Atomic int stop;
	uint64_t limit_ns; /* bound: the spinner stops by itself after this */
};

static void *spin_main(void *arg)
{
	struct spinner *sp = arg;
	uint64_t t0 = util_now_ns();
	unsigned n = 0;

	/* relaxed: a stop flag, nothing else is published */
	while (!atomic_load_explicit(&sp->stop, memory_order_relaxed))
		if (!(++n % 4096) && util_now_ns() - t0 > sp->limit_ns)
			break;
		else
			hwt_cpu_relax();
	return NULL;
}

/* Verdicts of one run against the budget's first run: scalar per CPU and
 * summary; vector (both units: "vector" and "avx2") per CPU and summaries;
 * "all": scalar and vector per-CPU verdicts both identical. */
struct stab {
	unsigned budget_us, runs, same_cpus, same_summary, migrated_runs;
	unsigned same_vcpus, same_vsummary, same_all;
	unsigned summary_count[HWT_MISALIGNED_UNSUPPORTED + 1];
	unsigned vsummary_count[HWT_MISALIGNED_UNSUPPORTED + 1];
	enum hwt_misaligned_speed first[64], first_v[64][2];
	int first_summary, first_vsummary, first_asummary;
	unsigned first_n;
	struct series ratio, wall;
};

static void stab_add(struct stab *st, struct hwt_misaligned_report *r)
{
	bool same, vsame, migrated = false;

	if (!st->runs) {
		st->first_summary = r->summary;
		st->first_vsummary = r->vector_summary;
		st->first_asummary = r->avx2_summary;
		st->first_n = r->n;
		for (unsigned k = 0; k < r->n && k < 64; k++) {
			st->first[k] = r->cpu[k].speed;
			st->first_v[k][0] = r->cpu[k].vector.speed;
			st->first_v[k][1] = r->cpu[k].avx2.speed;
		}
	}
	same = vsame = r->n == st->first_n;
	for (unsigned k = 0; k < r->n && k < 64; k++) {
		same &= r->cpu[k].speed == st->first[k];
		vsame &= r->cpu[k].vector.speed == st->first_v[k][0] &&
			 r->cpu[k].avx2.speed == st->first_v[k][1];
		migrated |= (r->cpu[k].notes & HWT_MISALIGNED_NOTE_MIGRATED) != 0 ||
			    r->cpu[k].preempted > 0;
		if (!r->cpu[k].status)
			add(&st->ratio, r->cpu[k].ratio_x100);
	}
	st->runs++;
	st->same_cpus += same;
	st->same_summary += (int)r->summary == st->first_summary;
	st->same_vcpus += vsame;
	st->same_vsummary += (int)r->vector_summary == st->first_vsummary &&
			     (int)r->avx2_summary == st->first_asummary;
	st->same_all += same && vsame;
	st->vsummary_count[r->vector_summary]++;
	st->migrated_runs += migrated;
	st->summary_count[r->summary]++;
	add(&st->wall, r->wall_ns);
}

static void stability(struct stab *st, const unsigned *budgets, unsigned nb, unsigned runs,
		      int busy_cpu)
{
	struct spinner sp = { .limit_ns = 600ull * 1000000000u };
	pthread_t th;

	if (busy_cpu >= 0) {
		atomic_store_explicit(&sp.stop, 0, memory_order_relaxed);
		if (util_thread_start(&th, busy_cpu, spin_main, &sp)) {
			cli_error("cannot start the spinning thread on CPU %d", busy_cpu);
			exit(1);
		}
	}
	for (unsigned b = 0; b < nb; b++)
		st[b] = (struct stab){ .budget_us = budgets[b] };
	for (unsigned i = 0; i < runs; i++) {
		say("\rbench_probe: stability %s %u/%u   ", busy_cpu >= 0 ? "busy" : "idle", i + 1,
		    runs);
		for (unsigned b = 0; b < nb; b++) { /* budgets interleaved */
			struct hwt_misaligned_report r;
			struct phase ph = { 0 };

			run_on(NULL, 0, budgets[b], &ph, &r);
			phase_free(&ph);
			stab_add(&st[b], &r);
			hwt_misaligned_report_free(&r);
		}
	}
	if (busy_cpu >= 0) {
		atomic_store_explicit(&sp.stop, 1, memory_order_relaxed);
		pthread_join(th, NULL);
	}
}

static void print_stab(struct json *j, const char *load, struct stab *st, unsigned nb)
{
	for (unsigned b = 0; b < nb; b++) {
		struct stat_summary m;

		stat_sort_u64(st[b].ratio.v, st[b].ratio.n);
		stat_summary_u64(st[b].ratio.v, st[b].ratio.n, &m);
		json_nl(j, "    ");
		json_obj(j);
		json_key(j, "load"), json_str(j, load);
		json_key(j, "budget_us"), json_u64(j, st[b].budget_us);
		json_key(j, "runs"), json_u64(j, st[b].runs);
		json_key(j, "same_cpu_verdicts"), json_u64(j, st[b].same_cpus);
		json_key(j, "same_summary"), json_u64(j, st[b].same_summary);
		json_key(j, "first_summary"),
			json_str(j, hwt_misaligned_speed_name(st[b].first_summary));
		json_key(j, "preempted_runs"), json_u64(j, st[b].migrated_runs);
		json_key(j, "ratio_x100_min"), json_u64(j, m.min);
		json_key(j, "ratio_x100_p50"), json_u64(j, m.p50);
		json_key(j, "ratio_x100_max"), json_u64(j, m.max);
		json_key(j, "wall_ns_p50"), json_u64(j, p50(&st[b].wall));
		json_key(j, "summaries");
		json_obj(j);
		for (int k = 0; k <= HWT_MISALIGNED_UNSUPPORTED; k++)
			if (st[b].summary_count[k])
				json_key(j, hwt_misaligned_speed_name(k)),
					json_u64(j, st[b].summary_count[k]);
		json_close(j);
		json_key(j, "same_vector_verdicts"), json_u64(j, st[b].same_vcpus);
		json_key(j, "same_vector_summary"), json_u64(j, st[b].same_vsummary);
		json_key(j, "same_all_verdicts"), json_u64(j, st[b].same_all);
		json_key(j, "first_vector_summary"),
			json_str(j, hwt_misaligned_speed_name(st[b].first_vsummary));
		json_key(j, "first_avx2_summary"),
			json_str(j, hwt_misaligned_speed_name(st[b].first_asummary));
		json_key(j, "vector_summaries");
		json_obj(j);
		for (int k = 0; k <= HWT_MISALIGNED_UNSUPPORTED; k++)
			if (st[b].vsummary_count[k])
				json_key(j, hwt_misaligned_speed_name(k)),
					json_u64(j, st[b].vsummary_count[k]);
		json_close(j);
		json_close(j);
		free(st[b].ratio.v), free(st[b].wall.v);
	}
}

static unsigned parse_budgets(const char *v, unsigned *out)
{
	unsigned n = 0;
	const char *p = v;

	while (*p) {
		char *end;
		unsigned long x = strtoul(p, &end, 10);

		if (end == p || (*end && *end != ',') || x < 1 || x > 60000000 ||
		    n == MAX_BUDGETS) {
			cli_error("--budgets-us: invalid value '%s' (expected up to %d budgets in "
				  "us, 1..60000000, comma-separated)", v, MAX_BUDGETS);
			exit(CLI_EXIT_USAGE);
		}
		out[n++] = (unsigned)x;
		p = *end ? end + 1 : end;
	}
	if (!n) {
		cli_error("--budgets-us: invalid value '%s' (empty)", v);
		exit(CLI_EXIT_USAGE);
	}
	return n;
}

/* --- vector units and split penalties over the default-budget runs ------- */

static const char *const unit_key[2] = { "vector", "avx2" };

static const struct hwt_misaligned_vector *unit_of(const struct hwt_misaligned_cpu *c, unsigned u)
{
	return u ? &c->avx2 : &c->vector;
}

struct units {
	unsigned runs, same[2];
	unsigned summary_count[2][HWT_MISALIGNED_UNSUPPORTED + 1];
	int first_summary[2];
	struct series ratio[2];    /* ratio_x100 of every measured CPU of every run */
	struct series split[4];    /* line_load, line_store, page_load, page_store */
};

static const char *const split_key[4] = { "line_load", "line_store", "page_load", "page_store" };

static unsigned split_of(const struct hwt_misaligned_split *s, unsigned f)
{
	return f == 0 ? s->line_load : f == 1 ? s->line_store : f == 2 ? s->page_load : s->page_store;
}

static void units_add(struct units *us, const struct hwt_misaligned_report *r, const bool same[2],
		      bool same_n)
{
	int sum[2] = { r->vector_summary, r->avx2_summary };

	for (unsigned u = 0; u < 2; u++) {
		if (!us->runs)
			us->first_summary[u] = sum[u];
		us->same[u] += same[u] && same_n;
		us->summary_count[u][sum[u]]++;
	}
	us->runs++;
	for (unsigned k = 0; k < r->n; k++) {
		const struct hwt_misaligned_cpu *c = &r->cpu[k];

		if (c->status)
			continue;
		for (unsigned u = 0; u < 2; u++)
			if (unit_of(c, u)->ratio_x100)
				add(&us->ratio[u], unit_of(c, u)->ratio_x100);
		for (unsigned f = 0; f < 4; f++)
			if (split_of(&c->split, f))
				add(&us->split[f], split_of(&c->split, f));
	}
}

/* "name": {"n", "min", "p50", "max"} of a ratio x100 series, as ratios;
 * {"n": 0} when nothing was measured. */
static void print_ratio_spread(struct json *j, const char *name, struct series *s)
{
	struct stat_summary m;

	json_key(j, name);
	json_obj(j);
	json_key(j, "n"), json_u64(j, s->n);
	if (s->n) {
		stat_sort_u64(s->v, s->n);
		stat_summary_u64(s->v, s->n, &m);
		json_key(j, "min"), json_fixed(j, m.min / 100.0, 2);
		json_key(j, "p50"), json_fixed(j, m.p50 / 100.0, 2);
		json_key(j, "max"), json_fixed(j, m.max / 100.0, 2);
	}
	json_close(j);
}

/*
 * "vector": {"runs", "budget_us", per_cpu_vector_ns (of per_cpu_probe_ns),
 *   "units": [one line per unit: "unit" (vector|avx2), "name" (sse2, avx2,
 *   neon, rvv or none), stability over the default-budget runs (runs whose
 *   per-CPU verdicts of this unit all equal the first run's), the summaries,
 *   the ratio spread over all runs and CPUs], "cpus": [one line per CPU and
 *   unit, the last run's verdict, ratio and copy times]}.  avx2 is listed
 *   only when the build has the unit (x86_64).
 */
static void print_vector_obj(struct json *j, struct units *us, struct series *vec_ns,
			     const struct hwt_misaligned_report *last, unsigned budget_us)
{
	bool has[2] = { true, false };

	for (unsigned k = 0; k < last->n; k++)
		has[1] |= last->cpu[k].avx2.unit != NULL;
	json_nl(j, "  ");
	json_key(j, "vector");
	json_obj(j);
	json_key(j, "runs"), json_u64(j, us->runs);
	json_key(j, "budget_us"), json_u64(j, budget_us);
	print_series(j, "per_cpu_vector_ns", vec_ns);
	json_nl(j, "    ");
	json_key(j, "units");
	json_arr(j);
	for (unsigned u = 0; u < 2; u++) {
		const char *name = NULL;

		if (!has[u])
			continue;
		for (unsigned k = 0; k < last->n && !name; k++)
			name = unit_of(&last->cpu[k], u)->unit;
		json_nl(j, "      ");
		json_obj(j);
		json_key(j, "unit"), json_str(j, unit_key[u]);
		json_key(j, "name"), json_str(j, name ? name : "none");
		json_key(j, "runs"), json_u64(j, us->runs);
		json_key(j, "same_cpu_verdicts"), json_u64(j, us->same[u]);
		json_key(j, "first_summary"),
			json_str(j, hwt_misaligned_speed_name(us->first_summary[u]));
		json_key(j, "summaries");
		json_obj(j);
		for (int k = 0; k <= HWT_MISALIGNED_UNSUPPORTED; k++)
			if (us->summary_count[u][k])
				json_key(j, hwt_misaligned_speed_name(k)),
					json_u64(j, us->summary_count[u][k]);
		json_close(j);
		print_ratio_spread(j, "ratio", &us->ratio[u]);
		json_close(j);
	}
	json_close(j);
	json_nl(j, "    ");
	json_key(j, "cpus");
	json_arr(j);
	for (unsigned k = 0; k < last->n; k++)
		for (unsigned u = 0; u < 2; u++) {
			const struct hwt_misaligned_vector *v = unit_of(&last->cpu[k], u);

			if (!has[u])
				continue;
			json_nl(j, "      ");
			json_obj(j);
			json_key(j, "vector_cpu"), json_int(j, last->cpu[k].cpu);
			json_key(j, "unit"), json_str(j, unit_key[u]);
			json_key(j, "name"), json_str(j, v->unit ? v->unit : "none");
			json_key(j, "status"), json_int(j, last->cpu[k].status);
			json_key(j, "speed"), json_str(j, hwt_misaligned_speed_name(v->speed));
			json_key(j, "ratio"), json_fixed(j, v->ratio_x100 / 100.0, 2);
			json_key(j, "word_ns"), json_u64(j, v->word_ns);
			json_key(j, "byte_ns"), json_u64(j, v->byte_ns);
			json_key(j, "fault_signal"), json_int(j, v->fault_signal);
			json_close(j);
		}
	json_close(j);
	json_close(j);
}

/*
 * "split": {"runs", per_cpu_split_ns (of per_cpu_probe_ns), the spread of
 *   each penalty over all runs and CPUs, "cpus": [one line per CPU, the last
 *   run's scalar verdict and ratio, and its split ratios to the aligned
 *   access (1.00: no penalty; 0: not measured)]}.
 */
static void print_split_obj(struct json *j, struct units *us, struct series *split_ns,
			    const struct hwt_misaligned_report *last)
{
	json_nl(j, "  ");
	json_key(j, "split");
	json_obj(j);
	json_key(j, "runs"), json_u64(j, us->runs);
	print_series(j, "per_cpu_split_ns", split_ns);
	json_nl(j, "    ");
	json_key(j, "spread");
	json_obj(j);
	for (unsigned f = 0; f < 4; f++)
		print_ratio_spread(j, split_key[f], &us->split[f]);
	json_close(j);
	json_nl(j, "    ");
	json_key(j, "cpus");
	json_arr(j);
	for (unsigned k = 0; k < last->n; k++) {
		const struct hwt_misaligned_cpu *c = &last->cpu[k];

		json_nl(j, "      ");
		json_obj(j);
		json_key(j, "split_cpu"), json_int(j, c->cpu);
		json_key(j, "status"), json_int(j, c->status);
		json_key(j, "scalar_speed"), json_str(j, hwt_misaligned_speed_name(c->speed));
		json_key(j, "scalar_ratio"), json_fixed(j, c->ratio_x100 / 100.0, 2);
		for (unsigned f = 0; f < 4; f++)
			json_key(j, split_key[f]), json_fixed(j, split_of(&c->split, f) / 100.0, 2);
		json_key(j, "aligned_load_ps"), json_u64(j, c->split.aligned_load_ps);
		json_key(j, "aligned_store_ps"), json_u64(j, c->split.aligned_store_ps);
		json_key(j, "line_bytes"), json_u64(j, c->split.line_bytes);
		json_key(j, "page_bytes"), json_u64(j, c->split.page_bytes);
		json_close(j);
	}
	json_close(j);
	json_close(j);
}

static void units_free(struct units *us)
{
	for (unsigned u = 0; u < 2; u++)
		free(us->ratio[u].v);
	for (unsigned f = 0; f < 4; f++)
		free(us->split[f].v);
}

int main(int argc, char **argv)
{
	unsigned runs = 100, serial_runs = 20, kernel_runs = 5, budget_us = 0;
	struct phase par = { 0 }, ser = { 0 }, kpar = { 0 }, kser = { 0 };
	unsigned summary_count[HWT_MISALIGNED_UNSUPPORTED + 1] = { 0 };
	enum hwt_misaligned_speed *first_speed = NULL, first_summary = HWT_MISALIGNED_UNKNOWN;
	unsigned same_cpus = 0, same_summary = 0, ncpus = 0;
	unsigned same_vcpus = 0, same_vsummary = 0;
	unsigned vsummary_count[HWT_MISALIGNED_UNSUPPORTED + 1] = { 0 };
	enum hwt_misaligned_speed *first_vspeed = NULL, first_vsummary = HWT_MISALIGNED_UNKNOWN;
	enum hwt_misaligned_speed first_asummary = HWT_MISALIGNED_UNKNOWN;
	struct hwt_misaligned_report last = { 0 };
	struct units units = { 0 };
	unsigned scale_runs = 10, scale_kruns = 3, stab_runs = 100, nb = 5;
	unsigned budgets[MAX_BUDGETS] = { 100, 200, 500, 1000, 16000 };
	bool busy = true;
	struct json j;
	uint64_t t_start = util_now_ns();

	cli_prog = "bench_probe";
	for (int i = 1; i < argc; i++) {
		const char *n, *v;

#define OPT(name) (v = cli_opt(argc, argv, &i, n = (name)))
		if (OPT("--runs"))
			runs = cli_arg_u(n, v, 0, 100000);
		else if (OPT("--serial-runs"))
			serial_runs = cli_arg_u(n, v, 0, 100000);
		else if (OPT("--kernel-runs"))
			kernel_runs = cli_arg_u(n, v, 0, 10000);
		else if (OPT("--budget-ms"))
			budget_us = cli_arg_u(n, v, 0, 60000) * 1000;
		else if (OPT("--budget-us"))
			budget_us = cli_arg_u(n, v, 0, 60000000);
		else if (OPT("--scale-runs"))
			scale_runs = cli_arg_u(n, v, 1, 100000);
		else if (OPT("--scale-kernel-runs"))
			scale_kruns = cli_arg_u(n, v, 0, 10000);
		else if (OPT("--stab-runs"))
			stab_runs = cli_arg_u(n, v, 0, 100000);
		else if (OPT("--budgets-us"))
			nb = parse_budgets(v, budgets);
		else if (!strcmp(argv[i], "--no-busy"))
			busy = false;
		else {
			fprintf(stderr, "usage: bench_probe [--runs N] [--serial-runs N] "
					"[--kernel-runs N] [--budget-ms N] [--budget-us N]\n"
					"                   [--scale-runs N] [--scale-kernel-runs N] "
					"[--stab-runs N] [--budgets-us LIST] [--no-busy]\n");
			return strcmp(argv[i], "--help") ? 2 : 0;
		}
#undef OPT
	}
	if (runs == 0)
		runs = 1;
	progress = isatty(STDERR_FILENO);

	/* Default budget: the stability runs double as the parallel timings;
	 * serial runs are interleaved with the first of them. */
	for (unsigned i = 0; i < runs; i++) {
		struct hwt_misaligned_report r;
		bool same = true, vsame = true, usame[2] = { true, true };

		run(0, budget_us, &par, &r);
		if (!first_speed) {
			ncpus = r.n;
			first_speed = calloc(r.n ? r.n : 1, sizeof(*first_speed));
			first_vspeed = calloc(r.n ? 2 * r.n : 1, sizeof(*first_vspeed));
			if (!first_speed || !first_vspeed)
				return 1;
			for (unsigned k = 0; k < r.n; k++) {
				first_speed[k] = r.cpu[k].speed;
				first_vspeed[2 * k] = r.cpu[k].vector.speed;
				first_vspeed[2 * k + 1] = r.cpu[k].avx2.speed;
			}
			first_summary = r.summary;
			first_vsummary = r.vector_summary;
			first_asummary = r.avx2_summary;
		}
		for (unsigned k = 0; k < r.n && k < ncpus; k++) {
			same &= r.cpu[k].speed == first_speed[k];
			vsame &= r.cpu[k].vector.speed == first_vspeed[2 * k] &&
				 r.cpu[k].avx2.speed == first_vspeed[2 * k + 1];
			for (unsigned u = 0; u < 2; u++)
				usame[u] &= unit_of(&r.cpu[k], u)->speed == first_vspeed[2 * k + u];
		}
		units_add(&units, &r, usame, r.n == ncpus);
		same_cpus += same && r.n == ncpus;
		same_summary += r.summary == first_summary;
		summary_count[r.summary]++;
		same_vcpus += vsame && r.n == ncpus;
		same_vsummary += r.vector_summary == first_vsummary && r.avx2_summary == first_asummary;
		vsummary_count[r.vector_summary]++;
		if (i + 1 == runs) {
			hwt_misaligned_report_free(&last);
			last = r;
		} else {
			hwt_misaligned_report_free(&r);
		}
		if (i < serial_runs)
			run(HWT_MISALIGNED_SERIAL, budget_us, &ser, NULL);
	}
	for (unsigned i = 0; i < kernel_runs; i++) {
		run(HWT_MISALIGNED_KERNEL_WINDOW, 0, &kpar, NULL);
		run(HWT_MISALIGNED_KERNEL_WINDOW | HWT_MISALIGNED_SERIAL, 0, &kser, NULL);
	}

	struct hwt_cpus all = HWT_CPUS_INIT;
	struct scale_point *pt;
	struct stab st_idle[MAX_BUDGETS], st_busy[MAX_BUDGETS];
	int e = hwt_cpu_allowed(&all);

	if (e || !all.n) {
		cli_error("allowed CPUs: %s", strerror(e ? -e : EINVAL));
		return 1;
	}
	pt = calloc(all.n, sizeof(*pt));
	if (!pt)
		return 1;
	scaling(&all, scale_runs, scale_kruns, pt);
	stability(st_idle, budgets, nb, stab_runs, -1);
	if (busy)
		stability(st_busy, budgets, nb, stab_runs, all.cpu[all.n - 1]);
	if (progress)
		fprintf(stderr, "\n");

	json_begin(&j, stdout);
	json_obj(&j);
	json_key(&j, "bench_probe");
	json_obj(&j);
	json_key(&j, "version"), json_str(&j, hwt_version());
	json_key(&j, "cpus"), json_u64(&j, ncpus);
	json_key(&j, "budget_us"), json_u64(&j, budget_us ? budget_us : HWT_MISALIGNED_DEFAULT_BUDGET_US);
	json_nl(&j, "  ");
	json_key(&j, "default_budget");
	json_obj(&j);
	print_series(&j, "per_cpu_probe_ns", &par.per_cpu);
	print_series(&j, "per_cpu_samples", &par.samples);
	print_series(&j, "per_cpu_vector_ns", &par.vector);
	print_series(&j, "per_cpu_split_ns", &par.split);
	print_series(&j, "parallel_wall_ns", &par.wall);
	print_series(&j, "serial_wall_ns", &ser.wall);
	print_series(&j, "serial_per_cpu_probe_ns", &ser.per_cpu);
	json_close(&j);
	json_nl(&j, "  ");
	json_key(&j, "kernel_window");
	json_obj(&j);
	print_series(&j, "per_cpu_probe_ns", &kpar.per_cpu);
	print_series(&j, "parallel_wall_ns", &kpar.wall);
	print_series(&j, "serial_wall_ns", &kser.wall);
	json_close(&j);
	json_nl(&j, "  ");
	json_key(&j, "stability");
	json_obj(&j);
	json_key(&j, "runs"), json_u64(&j, runs);
	json_key(&j, "same_cpu_verdicts"), json_u64(&j, same_cpus);
	json_key(&j, "same_summary"), json_u64(&j, same_summary);
	json_key(&j, "first_summary"), json_str(&j, hwt_misaligned_speed_name(first_summary));
	json_key(&j, "summaries");
	json_obj(&j);
	for (int k = 0; k <= HWT_MISALIGNED_UNSUPPORTED; k++)
		if (summary_count[k])
			json_key(&j, hwt_misaligned_speed_name(k)), json_u64(&j, summary_count[k]);
	json_close(&j);
	json_key(&j, "same_vector_verdicts"), json_u64(&j, same_vcpus);
	json_key(&j, "same_vector_summary"), json_u64(&j, same_vsummary);
	json_key(&j, "first_vector_summary"), json_str(&j, hwt_misaligned_speed_name(first_vsummary));
	json_key(&j, "first_avx2_summary"), json_str(&j, hwt_misaligned_speed_name(first_asummary));
	json_key(&j, "vector_summaries");
	json_obj(&j);
	for (int k = 0; k <= HWT_MISALIGNED_UNSUPPORTED; k++)
		if (vsummary_count[k])
			json_key(&j, hwt_misaligned_speed_name(k)), json_u64(&j, vsummary_count[k]);
	json_close(&j);
	json_close(&j);
	/* the last default-budget run, per CPU */
	json_nl(&j, "  ");
	json_key(&j, "last_run");
	json_arr(&j);
	for (unsigned k = 0; k < last.n; k++) {
		const struct hwt_misaligned_cpu *c = &last.cpu[k];

		json_nl(&j, "    ");
		json_obj(&j);
		json_key(&j, "cpu"), json_int(&j, c->cpu);
		json_key(&j, "speed"), json_str(&j, hwt_misaligned_speed_name(c->speed));
		json_key(&j, "ratio"), json_fixed(&j, c->ratio_x100 / 100.0, 2);
		json_key(&j, "probe_ns"), json_u64(&j, c->probe_ns);
		print_vector(&j, "vector", &c->vector);
		print_vector(&j, "avx2", &c->avx2);
		json_key(&j, "split");
		json_obj(&j);
		json_key(&j, "line_load"), json_fixed(&j, c->split.line_load / 100.0, 2);
		json_key(&j, "line_store"), json_fixed(&j, c->split.line_store / 100.0, 2);
		json_key(&j, "page_load"), json_fixed(&j, c->split.page_load / 100.0, 2);
		json_key(&j, "page_store"), json_fixed(&j, c->split.page_store / 100.0, 2);
		json_key(&j, "aligned_load_ps"), json_u64(&j, c->split.aligned_load_ps);
		json_key(&j, "aligned_store_ps"), json_u64(&j, c->split.aligned_store_ps);
		json_close(&j);
		json_close(&j);
	}
	json_close(&j);

	const struct scale_point *lastpt = &pt[all.n - 1];

	json_nl(&j, "  ");
	json_key(&j, "scaling");
	json_arr(&j);
	for (unsigned k = 0; k < all.n; k++) {
		json_nl(&j, "    ");
		json_obj(&j);
		json_key(&j, "cpus"), json_u64(&j, pt[k].cpus);
		json_key(&j, "parallel_wall_ns_p50"), json_u64(&j, pt[k].par_wall);
		json_key(&j, "serial_wall_ns_p50"), json_u64(&j, pt[k].ser_wall);
		json_key(&j, "per_cpu_probe_ns_p50"), json_u64(&j, pt[k].per_cpu);
		json_key(&j, "kernel_parallel_wall_ns_p50"), json_u64(&j, pt[k].kpar_wall);
		json_key(&j, "kernel_serial_wall_ns_p50"), json_u64(&j, pt[k].kser_wall);
		json_key(&j, "kernel_per_cpu_probe_ns_p50"), json_u64(&j, pt[k].kper_cpu);
		json_close(&j);
	}
	json_close(&j);
	json_nl(&j, "  ");
	json_key(&j, "extrapolation_64");
	json_obj(&j);
	json_key(&j, "model"),
		json_str(&j, "serial = 64 x per-CPU time (the serial runs' per-CPU median at N "
			     "CPUs); parallel = waves x per-CPU time + overhead, waves = 1 given 64 "
			     "CPUs (one thread per CPU, no SMT apart), overhead = parallel wall - "
			     "per-CPU time measured at N CPUs (thread start, pin, join; grows with "
			     "the thread count: a lower bound)");
	json_key(&j, "measured_cpus"), json_u64(&j, all.n);
	extrapolate(&j, "default_budget", lastpt->per_cpu, lastpt->par_wall);
	extrapolate(&j, "kernel_window", lastpt->kper_cpu, lastpt->kpar_wall);
	json_nl(&j, "    ");
	json_key(&j, "published");
	json_obj(&j);
	json_key(&j, "kernel_serial_64_ns"), json_u64(&j, 3800000000u);
	json_key(&j, "kernel_serial_source"),
		json_str(&j, "2023: ~0.06 s per CPU, ~3.8 s on 64 CPUs (SG2042), serial probe "
			     "(commit message of the parallel-probe patch)");
	json_key(&j, "kernel_parallel_source"),
		json_str(&j, "v6.7 (55e0bf49a0d0): all CPUs at once, ~one CPU's window; QEMU 64 "
			     "CPUs SMP bring-up 7.08 s serial probe, 4.87 s with the parallel fix; "
			     "newest kernels: 2 x 8 ms per CPU, all in parallel");
	json_close(&j);
	json_close(&j);
	json_nl(&j, "  ");
	json_key(&j, "budget_stability");
	json_arr(&j);
	print_stab(&j, "idle", st_idle, nb);
	if (busy)
		print_stab(&j, "busy", st_busy, nb);
	json_close(&j);
	json_nl(&j, "  ");
	json_key(&j, "busy_cpu"), json_int(&j, busy ? all.cpu[all.n - 1] : -1);
	print_vector_obj(&j, &units, &par.vector, &last,
			 budget_us ? budget_us : HWT_MISALIGNED_DEFAULT_BUDGET_US);
	print_split_obj(&j, &units, &par.split, &last);
	json_key(&j, "wall_s"), json_fixed(&j, (double)(util_now_ns() - t_start) / 1e9, 2);
	json_close(&j);
	json_close(&j);
	json_end(&j);
	free(pt);
	hwt_cpus_free(&all);
	free(first_speed);
	free(first_vspeed);
	hwt_misaligned_report_free(&last);
	units_free(&units);
	free(par.vector.v), free(par.split.v), free(ser.vector.v), free(ser.split.v);
	free(kpar.vector.v), free(kpar.split.v), free(kser.vector.v), free(kser.split.v);
	free(par.wall.v), free(par.per_cpu.v), free(par.samples.v);
	free(ser.wall.v), free(ser.per_cpu.v), free(ser.samples.v);
	free(kpar.wall.v), free(kpar.per_cpu.v), free(kpar.samples.v);
	free(kser.wall.v), free(kser.per_cpu.v), free(kser.samples.v);
	return 0;
}
