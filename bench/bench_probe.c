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
 * This file is the program (options, the default-budget runs, the JSON);
 * its parts are in bench/probe/ (probe.h).
 *
 *   bench_probe [--runs N] [--serial-runs N] [--kernel-runs N] [--budget-ms N]
 *               [--budget-us N] [--scale-runs N] [--scale-kernel-runs N]
 *               [--stab-runs N] [--budgets-us LIST] [--no-busy]
 */
#include <hwtune/hwtune.h>

#include "probe/probe.h"
#include "prog/cli.h"
#include "prog/json.h"
#include "prog/stats.h"
#include "prog/sys.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	bench_progress = isatty(STDERR_FILENO);

	/* Default budget: the stability runs double as the parallel timings;
	 * serial runs are interleaved with the first of them. */
	for (unsigned i = 0; i < runs; i++) {
		struct hwt_misaligned_report r;
		bool same = true, vsame = true, usame[2] = { true, true };

		run_all(0, budget_us, &par, &r);
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
			run_all(HWT_MISALIGNED_SERIAL, budget_us, &ser, NULL);
	}
	for (unsigned i = 0; i < kernel_runs; i++) {
		run_all(HWT_MISALIGNED_KERNEL_WINDOW, 0, &kpar, NULL);
		run_all(HWT_MISALIGNED_KERNEL_WINDOW | HWT_MISALIGNED_SERIAL, 0, &kser, NULL);
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
	if (bench_progress)
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
	series_print(&j, "per_cpu_probe_ns", &par.per_cpu);
	series_print(&j, "per_cpu_samples", &par.samples);
	series_print(&j, "per_cpu_vector_ns", &par.vector);
	series_print(&j, "per_cpu_split_ns", &par.split);
	series_print(&j, "parallel_wall_ns", &par.wall);
	series_print(&j, "serial_wall_ns", &ser.wall);
	series_print(&j, "serial_per_cpu_probe_ns", &ser.per_cpu);
	json_close(&j);
	json_nl(&j, "  ");
	json_key(&j, "kernel_window");
	json_obj(&j);
	series_print(&j, "per_cpu_probe_ns", &kpar.per_cpu);
	series_print(&j, "parallel_wall_ns", &kpar.wall);
	series_print(&j, "serial_wall_ns", &kser.wall);
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
		vector_print(&j, "vector", &c->vector);
		vector_print(&j, "avx2", &c->avx2);
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

