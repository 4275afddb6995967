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
 *     and split results.
 *
 * Never run by make check.  Uses only the public API; the cache is off.
 *
 *   bench_probe [--runs N] [--serial-runs N] [--kernel-runs N] [--budget-ms N]
 */
#include <hwtune/hwtune.h>

#include "util/cli.h"
#include "util/json.h"
#include "util/stats.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void run(unsigned flags, unsigned budget_us, struct phase *ph,
		struct hwt_misaligned_report *keep)
{
	struct hwt_misaligned_opts o = { .flags = flags | HWT_MISALIGNED_NO_CACHE,
					 .budget_us = budget_us };
	struct hwt_misaligned_report r;
	int e = hwt_misaligned_probe(NULL, &o, &r);

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
	struct json j;

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
		else {
			fprintf(stderr, "usage: bench_probe [--runs N] [--serial-runs N] "
					"[--kernel-runs N] [--budget-ms N]\n");
			return strcmp(argv[i], "--help") ? 2 : 0;
		}
#undef OPT
	}
	if (runs == 0)
		runs = 1;

	/* Default budget: the stability runs double as the parallel timings;
	 * serial runs are interleaved with the first of them. */
	for (unsigned i = 0; i < runs; i++) {
		struct hwt_misaligned_report r;
		bool same = true, vsame = true;

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
		}
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
	json_close(&j);
	json_close(&j);
	json_end(&j);
	free(first_speed);
	free(first_vspeed);
	hwt_misaligned_report_free(&last);
	free(par.vector.v), free(par.split.v), free(ser.vector.v), free(ser.split.v);
	free(kpar.vector.v), free(kpar.split.v), free(kser.vector.v), free(kser.split.v);
	free(par.wall.v), free(par.per_cpu.v), free(par.samples.v);
	free(ser.wall.v), free(ser.per_cpu.v), free(ser.samples.v);
	free(kpar.wall.v), free(kpar.per_cpu.v), free(kpar.samples.v);
	free(kser.wall.v), free(kser.per_cpu.v), free(kser.samples.v);
	return 0;
}
