/* SPDX-License-Identifier: MIT */
/* bench_probe: 1..N CPUs, parallel against serial, and the 64-CPU model. */
#include "probe.h"

#include "prog/cli.h"

#include <stdlib.h>

void scaling(const struct hwt_cpus *all, unsigned runs, unsigned kruns,
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
		bench_say("\rbench_probe: %s %u/%u CPUs   ", "scaling", k, all->n);
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
						  .par_wall = series_p50(&par.wall),
						  .ser_wall = series_p50(&ser.wall),
						  .per_cpu = series_p50(&ser.per_cpu),
						  .kpar_wall = series_p50(&kpar.wall),
						  .kser_wall = series_p50(&kser.wall),
						  .kper_cpu = series_p50(&kser.per_cpu) };
		phase_free(&par), phase_free(&ser), phase_free(&kpar), phase_free(&kser);
		hwt_cpus_free(&set);
	}
}

/* Model (printed in the JSON): serial = 64 x per-CPU time; parallel =
 * waves x per-CPU time + the start/join overhead measured here (parallel
 * wall at N CPUs - per-CPU time), waves = ceil(64 / CPUs probing at once):
 * 1 given 64 CPUs.  The overhead grows with the thread count on a real
 * 64-CPU machine: the parallel figure is a lower bound. */
void extrapolate(struct json *j, const char *name, uint64_t per_cpu, uint64_t par_wall)
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
