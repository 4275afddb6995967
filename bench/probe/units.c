/* SPDX-License-Identifier: MIT */
/* bench_probe: the vector units and split penalties over the default-budget runs. */
#include "probe.h"

#include "prog/stats.h"

#include <stdlib.h>

static const char *const unit_key[2] = { "vector", "avx2" };

const struct hwt_misaligned_vector *unit_of(const struct hwt_misaligned_cpu *c, unsigned u)
{
	return u ? &c->avx2 : &c->vector;
}

static const char *const split_key[4] = { "line_load", "line_store", "page_load", "page_store" };

static unsigned split_of(const struct hwt_misaligned_split *s, unsigned f)
{
	return f == 0 ? s->line_load : f == 1 ? s->line_store : f == 2 ? s->page_load : s->page_store;
}

void units_add(struct units *us, const struct hwt_misaligned_report *r, const bool same[2],
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
				series_add(&us->ratio[u], unit_of(c, u)->ratio_x100);
		for (unsigned f = 0; f < 4; f++)
			if (split_of(&c->split, f))
				series_add(&us->split[f], split_of(&c->split, f));
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
void print_vector_obj(struct json *j, struct units *us, struct series *vec_ns,
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
	series_print(j, "per_cpu_vector_ns", vec_ns);
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
void print_split_obj(struct json *j, struct units *us, struct series *split_ns,
		     const struct hwt_misaligned_report *last)
{
	json_nl(j, "  ");
	json_key(j, "split");
	json_obj(j);
	json_key(j, "runs"), json_u64(j, us->runs);
	series_print(j, "per_cpu_split_ns", split_ns);
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

void units_free(struct units *us)
{
	for (unsigned u = 0; u < 2; u++)
		free(us->ratio[u].v);
	for (unsigned f = 0; f < 4; f++)
		free(us->split[f].v);
}
