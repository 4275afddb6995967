/* SPDX-License-Identifier: MIT */
/*
 * bench_probe's parts (bench/bench_probe.c is the program: options, the
 * default-budget runs, the JSON): series and runs (run.c), scaling over
 * 1..N CPUs (scaling.c), stability per budget (stability.c), the vector
 * units and split penalties (units.c).
 */
#ifndef HWT_BENCH_PROBE_H
#define HWT_BENCH_PROBE_H

#include <hwtune/hwtune.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prog/json.h"

/* --- series and runs (run.c) */

/* A growing series of values (exits on no memory). */
struct series {
	uint64_t *v;
	size_t n, cap;
};
void series_add(struct series *s, uint64_t x);
/* The median (sorts s); 0 when empty. */
uint64_t series_p50(struct series *s);
/* "name": {"n", "min", "p50", "p90", "p99", "max"} (nearest rank; sorts s). */
void series_print(struct json *j, const char *name, struct series *s);
/* "name": {"unit", "speed", "ratio", "word_ns", "byte_ns"} of one vector unit. */
void vector_print(struct json *j, const char *name, const struct hwt_misaligned_vector *v);

/* What one kind of run collects: wall time, per-CPU time, samples, the
 * vector probe's and the split penalties' time. */
struct phase {
	struct series wall, per_cpu, samples, vector, split;
};
/* One probe (cache off) of set (NULL: every allowed CPU) into ph; keep
 * (when not NULL) receives the report, else it is freed.  Exits on error. */
void run_on(const struct hwt_cpus *set, unsigned flags, unsigned budget_us,
	    struct phase *ph, struct hwt_misaligned_report *keep);
void run_all(unsigned flags, unsigned budget_us, struct phase *ph,
	     struct hwt_misaligned_report *keep);
void phase_free(struct phase *ph);

/* Progress lines on stderr, when it is a terminal (bench_progress). */
extern bool bench_progress;
void bench_say(const char *fmt, const char *what, unsigned a, unsigned b);

/* --- scaling: 1..N CPUs, parallel vs serial (scaling.c) */

struct scale_point {
	unsigned cpus;
	uint64_t par_wall, ser_wall, per_cpu, kpar_wall, kser_wall, kper_cpu;
};
/* pt[k - 1]: the first k CPUs of all, for k = 1..all->n. */
void scaling(const struct hwt_cpus *all, unsigned runs, unsigned kruns, struct scale_point *pt);
/* "name": the 64-CPU model from a per-CPU time and a parallel wall time. */
void extrapolate(struct json *j, const char *name, uint64_t per_cpu, uint64_t par_wall);

/* --- stability per budget, idle and busy (stability.c) */

#define MAX_BUDGETS 8

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
void stab_add(struct stab *st, struct hwt_misaligned_report *r);
/* runs runs of each of the nb budgets, interleaved, into st[0..nb); with
 * busy_cpu >= 0 a thread spins on that CPU meanwhile. */
void stability(struct stab *st, const unsigned *budgets, unsigned nb, unsigned runs, int busy_cpu);
void print_stab(struct json *j, const char *load, struct stab *st, unsigned nb);
/* --budgets-us LIST into out[MAX_BUDGETS]: their count (exits on bad usage). */
unsigned parse_budgets(const char *v, unsigned *out);

/* --- vector units and split penalties (units.c) */

struct units {
	unsigned runs, same[2];
	unsigned summary_count[2][HWT_MISALIGNED_UNSUPPORTED + 1];
	int first_summary[2];
	struct series ratio[2];    /* ratio_x100 of every measured CPU of every run */
	struct series split[4];    /* line_load, line_store, page_load, page_store */
};
/* Unit u of CPU c: 0 "vector", 1 "avx2". */
const struct hwt_misaligned_vector *unit_of(const struct hwt_misaligned_cpu *c, unsigned u);
void units_add(struct units *us, const struct hwt_misaligned_report *r, const bool same[2],
	       bool same_n);
void print_vector_obj(struct json *j, struct units *us, struct series *vec_ns,
		      const struct hwt_misaligned_report *last, unsigned budget_us);
void print_split_obj(struct json *j, struct units *us, struct series *split_ns,
		     const struct hwt_misaligned_report *last);
void units_free(struct units *us);

#endif
